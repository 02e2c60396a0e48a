/* tune.c: blkc tune's configurations: a kernel's @autotune configs, or those
 * --config and --sweep give, each a set of const values. */
#include "blkc.h"

#include <stdlib.h>
#include <string.h>

void tune_usage(FILE *f)
{
	fputs("usage: blkc tune [options] FILE [NAME=SPEC ...]\n"
	      "\n"
	      "Times a kernel in each of several configurations (const values, num_warps,\n"
	      "num_stages) as blkc bench does, shows progress on standard error, writes the\n"
	      "table to standard output and marks the fastest. The configurations are the\n"
	      "kernel's @autotune configs, or those the command line gives:\n"
	      "      --config=NAME=V[,NAME=V...]\n"
	      "                           one configuration (repeatable)\n"
	      "      --sweep=NAME=V1[,V2...]\n"
	      "                           each value of NAME; several --sweep give every\n"
	      "                           combination, and with --config each config is\n"
	      "                           combined with each\n"
	      "A name a configuration leaves out takes the -D value, else the kernel's first\n"
	      "@autotune config, else its default. The arguments and the options of blkc run\n"
	      "(blkc run --help) apply, and:\n"
	      "      --reps=N             timed launches of each config (default 100)\n"
	      "      --bytes=N            bytes one launch moves, for GB/s (default: the sum of\n"
	      "                           its buffers' sizes); suffixes k, M, G (powers of 1000)\n"
	      "      --format=FMT         table (default), csv or json\n"
	      "      --svg=FILE           also draw the times as a bar chart (SVG)\n"
	      "      --devices=N,M,...    split the configurations across these GPUs (of one\n"
	      "                           model), timed at once, a thread each; the arguments\n"
	      "                           are made on the first and copied to each\n"
	      "      --no-prune           time every configuration: on a GPU, those that cannot\n"
	      "                           fit the device are otherwise not timed, nor (of the\n"
	      "                           @autotune configs) those of fewer programs than half\n"
	      "                           the SMs while another config fills them all; each\n"
	      "                           is listed with the reason\n"
	      "Exits 0 when at least one configuration ran.\n",
	      f);
}

void free_config(TuneConfig *c)
{
	for (int i = 0; i < c->n; i++)
		free((char *)c->c[i].name);
	c->n = 0;
}

/* Sets NAME to a value in c (replacing one of that name). */
static bool config_set(TuneConfig *c, const ConstBinding *b)
{
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->c[i].name, b->name) == 0) {
			c->c[i] = (blk_const){c->c[i].name, b->is_float, b->i, b->f, b->type};
			return true;
		}
	if (c->n == TUNE_MAX_CONSTS)
		return false;
	char *name = strdup(b->name);
	if (!name)
		return false;
	c->c[c->n++] = (blk_const){name, b->is_float, b->i, b->f, b->type};
	return true;
}

static bool config_copy(TuneConfig *dst, const TuneConfig *src)
{
	*dst = (TuneConfig){.ms = -1};
	for (int i = 0; i < src->n; i++) {
		ConstBinding b = {src->c[i].name, src->c[i].is_float != 0, src->c[i].i, src->c[i].f, src->c[i].type};
		if (!config_set(dst, &b))
			return false;
	}
	return true;
}

/* "BLOCK=1024,num_warps=4" */
static bool parse_config(const char *spec, TuneConfig *out)
{
	*out = (TuneConfig){.ms = -1};
	char *copy = strdup(spec), *save = NULL;
	bool ok = copy != NULL && spec[0];
	for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && ok; tok = strtok_r(NULL, ",", &save)) {
		ConstBinding b;
		ok = parse_define(tok, &b);
		if (ok) {
			ok = config_set(out, &b);
			free((char *)b.name);
		}
	}
	free(copy);
	if (!ok)
		free_config(out);
	return ok;
}

/* "BLOCK=256,512,1024": the values of one --sweep. */
static int parse_sweep(const char *spec, ConstBinding **out)
{
	const char *eq = strchr(spec, '=');
	*out = NULL;
	if (!eq || !is_identifier(spec, (size_t)(eq - spec)) || !eq[1])
		return -1;
	int n = 1;
	for (const char *p = eq + 1; *p; p++)
		n += *p == ',';
	ConstBinding *v = calloc((size_t)n, sizeof *v);
	char *copy = strdup(eq + 1), *save = NULL;
	int got = 0;
	bool ok = v && copy;
	for (char *tok = ok ? strtok_r(copy, ",", &save) : NULL; tok && ok; tok = strtok_r(NULL, ",", &save)) {
		char buf[512];
		snprintf(buf, sizeof buf, "%.*s=%s", (int)(eq - spec), spec, tok);
		ok = parse_define(buf, &v[got]);
		got += ok;
	}
	free(copy);
	if (!ok || got == 0) {
		for (int i = 0; v && i < got; i++)
			free((char *)v[i].name);
		free(v);
		return -1;
	}
	*out = v;
	return got;
}

void config_label(const TuneConfig *c, char *buf, size_t size, const char *sep)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < c->n && n + 1 < size; i++) {
		int w = c->c[i].type       ? snprintf(buf + n, size - n, "%s%s=%s", i ? sep : "", c->c[i].name, c->c[i].type)
		        : c->c[i].is_float ? snprintf(buf + n, size - n, "%s%s=%g", i ? sep : "", c->c[i].name, c->c[i].f)
		                           : snprintf(buf + n, size - n, "%s%s=%lld", i ? sep : "", c->c[i].name,
		                                    (long long)c->c[i].i);
		n += w > 0 ? (size_t)w : 0;
	}
	if (n >= size)
		buf[size - 1] = '\0';
	if (!c->n)
		snprintf(buf, size, "(defaults)");
}

const blk_const *config_get(const TuneConfig *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->c[i].name, name) == 0)
			return &c->c[i];
	return NULL;
}

/* The kernel's name and @autotune configs, read with the front end. */
bool kernel_autotune(const char *path, const Source *src, const char *kernel, const char **inc, int n_inc, char **name,
                     TuneConfig **cfg, int *n_cfg)
{
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	char stdlib_buf[4200];
	ModuleSet set = {.arena = &arena, .diag = &diag, .include_dirs = inc, .n_include_dirs = n_inc,
	                 .stdlib_dir = find_stdlib(stdlib_buf, sizeof stdlib_buf)};
	Module *m = src ? module_load_source(&set, src) : module_load_file(&set, path);
	Node *k = m && !diag.errors ? irgen_find_kernel(m, kernel, &diag) : NULL;
	AutotuneSpec at;
	bool ok = k && irgen_autotune(m, k, &at, &diag, &arena);
	*cfg = NULL;
	*n_cfg = 0;
	*name = k ? strdup(k->name) : NULL;
	if (ok && at.n_configs) {
		*cfg = calloc((size_t)at.n_configs, sizeof **cfg);
		ok = *cfg != NULL;
		for (int i = 0; ok && i < at.n_configs; i++) {
			(*cfg)[i].ms = -1;
			for (int j = 0; ok && j < at.config_len[i]; j++)
				ok = config_set(&(*cfg)[i], &at.configs[i][j]);
			*n_cfg = i + 1;
		}
	}
	if (!ok && diag.out.len)
		fwrite(diag.out.data, 1, diag.out.len, stderr);
	diag_free(&diag);
	arena_free(&arena);
	return ok && *name;
}

/* The configurations blkc bench and tune time, into tr->cfg and tr->names:
 * bench's launch as given; tune's --config or else (without --sweep) the
 * kernel's @autotune configs at, each combined with every combination of
 * the --sweep values. Returns -1, or the exit status after reporting an
 * error. */
int tune_configs(const ToolOptions *o, TuneRun *tr, TuneConfig *at, int n_at)
{
	TuneConfig *base = NULL, empty = {.ms = -1};
	int n_base = 0, status = 1;
	ConstBinding *sweep_vals[64] = {0};
	int sweep_n[64] = {0};
	if (o->tool == TOOL_BENCH) {
		base = &empty;
		n_base = 1;
	} else if (o->n_config_args) {
		base = calloc((size_t)o->n_config_args, sizeof *base);
		for (int i = 0; base && i < o->n_config_args; i++, n_base++)
			if (!parse_config(o->config_args[i], &base[i])) {
				bad_usage("--config expects NAME=VALUE[,NAME=VALUE...] with numbers or true/false, got '%s'",
				          o->config_args[i]);
				status = 2;
				goto out;
			}
		if (!base)
			goto oom;
	} else if (o->n_sweeps) {
		base = &empty;
		n_base = 1;
	} else {
		base = at;
		n_base = n_at;
		if (!n_at) {
			fprintf(stderr, "%s: error: kernel '%s' has no @autotune configs: give --config or --sweep\n", tool_name,
			        tr->kernel);
			goto out;
		}
	}
	if (o->n_sweeps > 64) {
		bad_usage("%s", "at most 64 --sweep options");
		status = 2;
		goto out;
	}
	long long total = n_base;
	for (int s = 0; s < o->n_sweeps; s++) {
		sweep_n[s] = parse_sweep(o->sweep_args[s], &sweep_vals[s]);
		if (sweep_n[s] < 0) {
			bad_usage("--sweep expects NAME=V1[,V2...] with numbers or true/false, got '%s'", o->sweep_args[s]);
			status = 2;
			goto out;
		}
		total *= sweep_n[s];
		if (total > TUNE_MAX_CONFIGS) {
			fprintf(stderr, "%s: error: more than %d configurations\n", tool_name, TUNE_MAX_CONFIGS);
			goto out;
		}
	}
	tr->cfg = calloc((size_t)total, sizeof *tr->cfg);
	tr->names = calloc((size_t)total * TUNE_MAX_CONSTS, sizeof *tr->names);
	if (!tr->cfg || !tr->names)
		goto oom;
	for (long long idx = 0; idx < total; idx++) {
		long long rest = idx, stride = total / n_base;
		TuneConfig *c = &tr->cfg[idx];
		tr->n = (int)idx + 1;
		if (!config_copy(c, &base[rest / stride]))
			goto oom;
		rest %= stride;
		for (int s = 0; s < o->n_sweeps; s++) {
			stride /= sweep_n[s];
			if (!config_set(c, &sweep_vals[s][rest / stride])) {
				fprintf(stderr, "%s: error: more than %d values in a configuration\n", tool_name, TUNE_MAX_CONSTS);
				goto out;
			}
			rest %= stride;
		}
		for (int j = 0; j < c->n; j++) {
			bool seen = false;
			for (int q = 0; q < tr->n_names && !seen; q++)
				seen = strcmp(tr->names[q], c->c[j].name) == 0;
			if (!seen && tr->n_names < TUNE_MAX_CONSTS)
				tr->names[tr->n_names++] = c->c[j].name;
		}
	}
	status = -1;
	goto out;
oom:
	fprintf(stderr, "%s: error: out of memory\n", tool_name);
out:
	if (base && base != &empty && base != at) {
		for (int i = 0; i < n_base; i++)
			free_config(&base[i]);
		free(base);
	}
	for (int s = 0; s < o->n_sweeps && s < 64; s++) {
		for (int v = 0; v < sweep_n[s]; v++)
			free((char *)sweep_vals[s][v].name);
		free(sweep_vals[s]);
	}
	return status;
}
