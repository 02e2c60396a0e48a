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

/* blkc tune --devices: every config timed at once across the GPUs
 * (blk_time_configs), then reported as the runs one by one are. */
static int time_on_devices(const ToolOptions *o, blk_kernel *k, const blk_arg *args, int n_args,
                           const blk_launch_options *lo, TuneRun *tr)
{
	blk_launch_options *cf = calloc((size_t)(tr->n ? tr->n : 1), sizeof *cf);
	double *ms = calloc((size_t)(tr->n ? tr->n : 1), sizeof *ms);
	enum { NOTE = sizeof tr->cfg[0].note };
	char *notes = calloc((size_t)(tr->n ? tr->n : 1), NOTE);
	if (!cf || !ms || !notes) {
		fprintf(stderr, "%s: error: out of memory\n", tool_name);
		free(cf), free(ms), free(notes);
		return 1;
	}
	for (int i = 0; i < tr->n; i++) {
		cf[i] = *lo;
		cf[i].consts = tr->cfg[i].n ? tr->cfg[i].c : NULL;
		cf[i].n_consts = tr->cfg[i].n;
	}
	fprintf(stderr, "%d configs on %d GPUs ...\n", tr->n, o->n_devices);
	int status = 0;
	if (blk_time_configs(k, args, n_args, cf, tr->n, o->reps, o->devices, o->n_devices, ms, notes, NOTE) !=
	    BLK_SUCCESS) {
		print_lib_error(NULL);
		status = 1;
	}
	for (int i = 0; status == 0 && i < tr->n; i++) {
		TuneConfig *c = &tr->cfg[i];
		char label[1024];
		config_label(c, label, sizeof label, " ");
		c->ms = ms[i];
		snprintf(c->note, sizeof c->note, "%s", notes + (size_t)i * NOTE);
		if (c->ms >= 0) {
			fprintf(stderr, "[%d/%d] %s ... %.4f ms (GPU %d)\n", i + 1, tr->n, label, c->ms,
			        o->devices[i % o->n_devices]);
			if (tr->best < 0 || c->ms < tr->cfg[tr->best].ms)
				tr->best = i;
		} else {
			fprintf(stderr, "[%d/%d] %s ... failed: %s\n", i + 1, tr->n, label, c->note);
		}
	}
	free(cf);
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
