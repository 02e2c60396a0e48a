/* bench.c: blkc bench, and the timed launches of every configuration that
 * blkc tune shares with it. */
#include "blkc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void bench_usage(FILE *f)
{
	fputs("usage: blkc bench [options] FILE [NAME=SPEC ...]\n"
	      "\n"
	      "Times a kernel: a warm-up launch, then --reps timed ones (on a GPU with CUDA events\n"
	      "and the L2 cache flushed between them; on the interpreter the wall clock). Prints\n"
	      "the median and, from the bytes the kernel moves, GB/s. The arguments and the\n"
	      "options of blkc run (blkc run --help) apply, and:\n"
	      "      --reps=N             timed launches (default 100)\n"
	      "      --bytes=N            bytes one launch moves, for GB/s (default: the sum of\n"
	      "                           its buffers' sizes); suffixes k, M, G (powers of 1000)\n"
	      "      --format=FMT         table (default), csv or json\n",
	      f);
}

/* The configs of tr as launches (those not pruned): their indices in tr into
 * idx; the count. */
static int config_launches(const blk_launch_options *lo, const TuneRun *tr, blk_launch_options *cf, int *idx)
{
	int n = 0;
	for (int i = 0; i < tr->n; i++) {
		if (tr->cfg[i].pruned)
			continue;
		cf[n] = *lo;
		cf[n].consts = tr->cfg[i].n ? tr->cfg[i].c : NULL;
		cf[n].n_consts = tr->cfg[i].n;
		idx[n++] = i;
	}
	return n;
}

/* blkc tune: marks the configs autotuning would not time (blk_prune_configs):
 * on a GPU, those that cannot fit the device and, of the kernel's @autotune
 * configs, those that leave most SMs idle while another fills them; --config
 * and --sweep are the user's choice, pruned only when they cannot fit. */
static int prune_configs(const ToolOptions *o, blk_kernel *k, const blk_arg *args, int n_args,
                         const blk_launch_options *lo, TuneRun *tr)
{
	enum { NOTE = sizeof tr->cfg[0].note };
	size_t n = (size_t)(tr->n ? tr->n : 1);
	blk_launch_options *cf = calloc(n, sizeof *cf);
	int *idx = calloc(n, sizeof *idx), *pruned = calloc(n, sizeof *pruned);
	char *notes = calloc(n, NOTE);
	int status = 0;
	if (!cf || !idx || !pruned || !notes) {
		fprintf(stderr, "%s: error: out of memory\n", tool_name);
		status = 1;
	}
	int rules = BLK_PRUNE_FIT | (o->n_config_args || o->n_sweeps ? 0 : BLK_PRUNE_IDLE);
	int nc = status ? 0 : config_launches(lo, tr, cf, idx);
	if (!status && blk_prune_configs(k, args, n_args, cf, nc, rules, pruned, notes, NOTE) != BLK_SUCCESS) {
		print_lib_error(NULL);
		status = 1;
	}
	for (int j = 0; !status && j < nc; j++)
		if (pruned[j]) {
			TuneConfig *c = &tr->cfg[idx[j]];
			c->pruned = true;
			c->ms = -1;
			snprintf(c->note, sizeof c->note, "%s", notes + (size_t)j * NOTE);
		}
	free(cf), free(idx), free(pruned), free(notes);
	return status;
}

/* blkc tune --devices: every config not pruned timed at once across the
 * GPUs (blk_time_configs), then reported as the runs one by one are. */
static int time_on_devices(const ToolOptions *o, blk_kernel *k, const blk_arg *args, int n_args,
                           const blk_launch_options *lo, TuneRun *tr)
{
	size_t n = (size_t)(tr->n ? tr->n : 1);
	blk_launch_options *cf = calloc(n, sizeof *cf);
	int *idx = calloc(n, sizeof *idx);
	double *ms = calloc(n, sizeof *ms);
	enum { NOTE = sizeof tr->cfg[0].note };
	char *notes = calloc(n, NOTE);
	if (!cf || !idx || !ms || !notes) {
		fprintf(stderr, "%s: error: out of memory\n", tool_name);
		free(cf), free(idx), free(ms), free(notes);
		return 1;
	}
	int nc = config_launches(lo, tr, cf, idx);
	fprintf(stderr, "%d configs on %d GPUs ...\n", nc, o->n_devices);
	int status = 0;
	if (nc && blk_time_configs(k, args, n_args, cf, nc, o->reps, o->devices, o->n_devices, ms, notes, NOTE) !=
	              BLK_SUCCESS) {
		print_lib_error(NULL);
		status = 1;
	}
	for (int i = 0, j = 0; status == 0 && i < tr->n; i++) {
		TuneConfig *c = &tr->cfg[i];
		char label[1024];
		config_label(c, label, sizeof label, " ");
		if (c->pruned) {
			fprintf(stderr, "[%d/%d] %s ... %s\n", i + 1, tr->n, label, c->note);
			continue;
		}
		c->ms = ms[j];
		snprintf(c->note, sizeof c->note, "%s", notes + (size_t)j * NOTE);
		if (c->ms >= 0) {
			fprintf(stderr, "[%d/%d] %s ... %.4f ms (GPU %d)\n", i + 1, tr->n, label, c->ms,
			        o->devices[j % o->n_devices]);
			if (tr->best < 0 || c->ms < tr->cfg[tr->best].ms)
				tr->best = i;
		} else {
			fprintf(stderr, "[%d/%d] %s ... failed: %s\n", i + 1, tr->n, label, c->note);
		}
		j++;
	}
	free(cf);
	free(idx);
	free(ms);
	free(notes);
	return status;
}

/* blkc bench and tune after the arguments are made: times each config
 * (bench: the launch as given) and prints the results. */
int tool_time(const ToolOptions *o, blk_context *ctx, blk_kernel *k, const blk_arg *args, int n_args,
              blk_launch_options *lo, TuneRun *tr, const char *path, const RunBuffer *bufs, int n_bufs,
              char **kernel_name)
{
	TuneConfig *at = NULL;
	int n_at = 0, status = 1;
	if (!kernel_autotune(path, o->source, o->kernel, o->includes, o->n_inc, kernel_name, &at, &n_at)) {
		fprintf(stderr, "%s: error: cannot read the @autotune configs of '%s'\n", tool_name, path);
		goto out;
	}
	tr->kernel = *kernel_name;
	tr->backend = blk_context_backend(ctx) == BLK_BACKEND_GPU ? "gpu" : "interpreter";
	tr->reps = o->reps;
	double bytes = o->bytes;
	if (bytes < 0) {
		bytes = 0;
		for (int i = 0; i < n_bufs; i++)
			bytes += (double)bufs[i].bytes;
	}
	tr->bytes = bytes;
	status = tune_configs(o, tr, at, n_at);
	if (status >= 0)
		goto out;
	status = 1;

	/* the runs */
	bool show = o->tool == TOOL_TUNE;
	if (show && !o->no_prune && prune_configs(o, k, args, n_args, lo, tr) != 0)
		goto out;
	if (o->n_devices && time_on_devices(o, k, args, n_args, lo, tr) != 0)
		goto out;
	for (int i = 0; !o->n_devices && i < tr->n; i++) {
		TuneConfig *c = &tr->cfg[i];
		char label[1024];
		config_label(c, label, sizeof label, " ");
		if (show) {
			fprintf(stderr, "[%d/%d] %s ... ", i + 1, tr->n, label);
			fflush(stderr);
		}
		if (c->pruned) {
			fprintf(stderr, "%s\n", c->note);
			continue;
		}
		lo->consts = c->n ? c->c : NULL;
		lo->n_consts = c->n;
		double ms = -1;
		blk_status st = blk_time_launch(k, args, n_args, lo, o->reps, &ms);
		(void)blk_context_printed(ctx); /* what the kernel printed, once a run: dropped */
		if (st == BLK_SUCCESS) {
			c->ms = ms >= 0 ? ms : 0;
			if (show)
				fprintf(stderr, "%.4f ms\n", c->ms);
			if (tr->best < 0 || c->ms < tr->cfg[tr->best].ms)
				tr->best = i;
		} else {
			const char *e = blk_last_error();
			const char *nl = strchr(e, '\n');
			snprintf(c->note, sizeof c->note, "%.*s", nl ? (int)(nl - e) : (int)strlen(e), e);
			c->ms = -1;
			if (show)
				fprintf(stderr, "failed: %s\n", c->note);
			else
				fprintf(stderr, "%s: error: %s\n", tool_name, e);
		}
	}
	if (o->tool == TOOL_BENCH) {
		if (tr->best < 0)
			goto out;
		print_bench(stdout, tr, o->format);
	} else {
		print_tune(stdout, tr, o->format);
		if (o->svg && !write_svg(o->svg, tr)) {
			fprintf(stderr, "%s: error: cannot write '%s': %s\n", tool_name, o->svg, strerror(errno));
			goto out;
		}
	}
	status = tr->best >= 0 ? 0 : 1;
out:
	for (int i = 0; i < n_at; i++)
		free_config(&at[i]);
	free(at);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "%s: error: cannot write standard output: %s\n", tool_name, strerror(errno));
		status = 1;
	}
	return status;
}
