/* tool.c: the command line blkc run, bench and tune share: their options,
 * loading the kernel and making its arguments, then running or timing it. */
#include "blkc.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *tool_name = "blkc run"; /* in messages */

/* The options of blkc run, bench or tune into *o: -1 to go on (optind is
 * the .tile file), else the exit status (0 after --help, 2 after a usage
 * error, reported). */
static int parse_tool_options(ToolOptions *o, int argc, char **argv)
{
	enum { R_GRID = 256, R_THREADS, R_SEED, R_PRINT, R_CHECKSUM, R_SAVE, R_COMPARE, R_REPS, R_BYTES, R_FORMAT,
	       R_CONFIG, R_SWEEP, R_SVG, R_DEVICES, R_NO_PRUNE };
	static const struct option longopts[] = {
		{"kernel", required_argument, NULL, 'k'},   {"define", required_argument, NULL, 'D'},
		{"include", required_argument, NULL, 'I'},  {"grid", required_argument, NULL, R_GRID},
		{"threads", required_argument, NULL, R_THREADS}, {"seed", required_argument, NULL, R_SEED},
		{"print", required_argument, NULL, R_PRINT}, {"checksum", no_argument, NULL, R_CHECKSUM},
		{"save", required_argument, NULL, R_SAVE},  {"compare", required_argument, NULL, R_COMPARE},
		{"reps", required_argument, NULL, R_REPS},  {"bytes", required_argument, NULL, R_BYTES},
		{"format", required_argument, NULL, R_FORMAT}, {"config", required_argument, NULL, R_CONFIG},
		{"sweep", required_argument, NULL, R_SWEEP}, {"svg", required_argument, NULL, R_SVG},
		{"devices", required_argument, NULL, R_DEVICES}, {"no-prune", no_argument, NULL, R_NO_PRUNE},
		{"help", no_argument, NULL, 'h'},           {0, 0, 0, 0},
	};
	const char *tool_only = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":k:D:I:h", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'k': o->kernel = optarg; break;
		case 'I': o->includes[o->n_inc++] = optarg; break;
		case 'D': {
			ConstBinding cb;
			if (!parse_define(optarg, &cb)) {
				bad_usage("-D expects NAME=VALUE with a number, true/false or a type, got '%s'", optarg);
				return 2;
			}
			o->defines[o->n_def++] = (blk_const){cb.name, cb.is_float, cb.i, cb.f, cb.type};
			break;
		}
		case R_GRID: {
			int n = sscanf(optarg, "%u,%u,%u", &o->grid[0], &o->grid[1], &o->grid[2]);
			if (n < 1 || !o->grid[0]) {
				bad_usage("--grid expects X[,Y[,Z]], got '%s'", optarg);
				return 2;
			}
			for (int i = n; i < 3; i++)
				o->grid[i] = 1;
			break;
		}
		case R_THREADS:
			o->threads = (int)strtol(optarg, &end, 10);
			if (*end || o->threads < 1 || o->threads > 1024) {
				bad_usage("--threads expects a count from 1 to 1024, got '%s'", optarg);
				return 2;
			}
			break;
		case R_SEED: rng_state = strtoull(optarg, NULL, 0); break;
		case R_PRINT: o->prints[o->n_print++] = optarg; break;
		case R_CHECKSUM: o->checksum = true; break;
		case R_SAVE: o->saves[o->n_save++] = optarg; break;
		case R_COMPARE: o->compares[o->n_cmp++] = optarg; break;
		case R_REPS:
			errno = 0;
			o->reps = (int)strtol(optarg, &end, 10);
			if (errno || *end || o->reps < 1 || o->reps > 100000) {
				bad_usage("--reps expects a count from 1 to 100000, got '%s'", optarg);
				return 2;
			}
			break;
		case R_BYTES:
			o->bytes = strtod(optarg, &end);
			o->bytes *= *end == 'k' ? 1e3 : *end == 'M' ? 1e6 : *end == 'G' ? 1e9 : *end == 'T' ? 1e12 : 1;
			if (end == optarg || (*end && end[1]) || (*end && !strchr("kMGT", *end)) || !(o->bytes >= 0) ||
			    isinf(o->bytes)) {
				bad_usage("--bytes expects a number of bytes (suffixes k, M, G, T), got '%s'", optarg);
				return 2;
			}
			break;
		case R_FORMAT:
			if (strcmp(optarg, "table") == 0)
				o->format = FORMAT_TABLE;
			else if (strcmp(optarg, "csv") == 0)
				o->format = FORMAT_CSV;
			else if (strcmp(optarg, "json") == 0)
				o->format = FORMAT_JSON;
			else {
				bad_usage("--format expects table, csv or json, got '%s'", optarg);
				return 2;
			}
			break;
		case R_CONFIG: o->config_args[o->n_config_args++] = optarg; break;
		case R_SWEEP: o->sweep_args[o->n_sweeps++] = optarg; break;
		case R_SVG: o->svg = optarg; break;
		case R_NO_PRUNE: o->no_prune = true; break;
		case R_DEVICES: {
			const char *p = optarg;
			o->n_devices = 0;
			for (;;) {
				errno = 0;
				long d = strtol(p, &end, 10);
				if (end == p || errno || d < 0 || d > 1023 || (*end && *end != ',') || o->n_devices == 64) {
					bad_usage("--devices expects GPU numbers such as 0,1 (at most 64), got '%s'", optarg);
					return 2;
				}
				o->devices[o->n_devices++] = (int)d;
				if (!*end)
					break;
				p = end + 1;
			}
			break;
		}
		case 'h':
			(o->tool == TOOL_RUN ? run_usage : o->tool == TOOL_BENCH ? bench_usage : tune_usage)(stdout);
			return 0;
		case ':': bad_usage("option '%s' needs an argument", argv[optind - 1]); return 2;
		default: return unknown_option(argc, argv, longopts);
		}
	}
	/* options of another command */
	const char *for_tools = NULL;
	if (o->tool != TOOL_RUN && (o->n_print || o->checksum || o->n_save || o->n_cmp)) {
		tool_only = o->n_print ? "--print" : o->checksum ? "--checksum" : o->n_save ? "--save" : "--compare";
		for_tools = "blkc run";
	} else if (o->tool == TOOL_RUN && (o->reps != 100 || o->bytes >= 0 || o->format != FORMAT_TABLE)) {
		tool_only = o->reps != 100 ? "--reps" : o->bytes >= 0 ? "--bytes" : "--format";
		for_tools = "blkc bench and blkc tune";
	} else if (o->tool != TOOL_TUNE && (o->n_config_args || o->n_sweeps || o->svg || o->n_devices || o->no_prune)) {
		tool_only = o->n_config_args ? "--config"
		            : o->n_sweeps    ? "--sweep"
		            : o->svg         ? "--svg"
		            : o->n_devices   ? "--devices"
		                             : "--no-prune";
		for_tools = "blkc tune";
	}
	if (tool_only) {
		fprintf(stderr, "%s: error: %s is an option of %s\nTry '%s --help' for more information.\n", tool_name,
		        tool_only, for_tools, tool_name);
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "blkc: error: %s needs a .tile file\nTry '%s --help' for more information.\n", tool_name,
		        tool_name);
		return 2;
	}
	return -1;
}

/* The program from standard input into *src (reported when it cannot be
 * read). */
static bool read_stdin(Source *src, Arena *arena)
{
	Diag diag;
	diag_init(&diag);
	bool ok = source_read_file(src, "-", arena, &diag);
	if (!ok)
		fwrite(diag.out.data, 1, diag.out.len, stderr);
	diag_free(&diag);
	return ok;
}

/* --save=NAME:PATH and --svg=FILE onto the program or a file it imports:
 * refused before anything runs (exit status 2), else -1. The files are
 * those the front end loads for it (errors there are libblk's to report). */
static int refuse_outputs(const ToolOptions *o, const char *path, Arena *arena)
{
	if (!o->n_save && !o->svg)
		return -1;
	Diag diag;
	diag_init(&diag);
	char stdlib_buf[4200];
	ModuleSet set = {.arena = arena, .diag = &diag, .include_dirs = o->includes, .n_include_dirs = o->n_inc,
	                 .stdlib_dir = find_stdlib(stdlib_buf, sizeof stdlib_buf)};
	if (o->source)
		module_load_source(&set, o->source);
	else
		module_load_file(&set, path);
	diag_free(&diag);
	bool clash = o->svg && output_is_source(tool_name, "--svg", o->svg, path, &set.modules);
	for (int i = 0; i < o->n_save && !clash; i++) {
		const char *colon = strchr(o->saves[i], ':');
		clash = colon && output_is_source(tool_name, "--save", colon + 1, path, &set.modules);
	}
	return clash ? 2 : -1;
}

const char *lib_message(const char *e)
{
	/* "blk_launch: error: what" -> "what": blkc's words, not the C function's */
	size_t n = 0;
	if (strncmp(e, "blk_", 4) == 0) {
		n = 4;
		while ((e[n] >= 'a' && e[n] <= 'z') || e[n] == '_')
			n++;
		if (strncmp(e + n, ": ", 2) != 0)
			return e;
		n += 2;
		if (strncmp(e + n, "error: ", 7) == 0)
			n += 7;
	}
	return e + n;
}

void print_lib_error(const char *context)
{
	const char *e = blk_last_error(), *m = lib_message(e);
	if (m == e && !context && strstr(e, ": error: ")) /* compiler diagnostics: as they are */
		fputs(e, stderr);
	else
		fprintf(stderr, "%s: error: %s%s%s", tool_name, context ? context : "", context ? ": " : "", m);
	if (!*e || e[strlen(e) - 1] != '\n')
		fputc('\n', stderr);
}

/* The defaults of the kernel's type parameters (T: const type = f32) that no
 * -D binds, added to o->defines: the tool makes every buffer itself, so no
 * argument can decide T. Errors in the file are left to libblk to report.
 * False only when out of memory. */
static bool default_type_params(ToolOptions *o, const char *path, Arena *arena)
{
	Diag diag;
	diag_init(&diag);
	char stdlib_buf[4200];
	ModuleSet set = {.arena = arena, .diag = &diag, .include_dirs = o->includes, .n_include_dirs = o->n_inc,
	                 .stdlib_dir = find_stdlib(stdlib_buf, sizeof stdlib_buf)};
	Module *m = o->source ? module_load_source(&set, o->source) : module_load_file(&set, path);
	Node *k = m && !diag.errors ? irgen_find_kernel(m, o->kernel, &diag) : NULL;
	diag_free(&diag);
	bool ok = true;
	for (int i = 0; k && ok && i < k->list.len; i++) {
		Node *p = k->list.items[i];
		if (!irgen_is_type_param(p) || !p->b || p->b->kind != N_IDENT)
			continue;
		bool bound = false;
		for (int d = 0; d < o->n_def && !bound; d++)
			bound = strcmp(o->defines[d].name, p->name) == 0;
		ScalarKind sk;
		if (bound || !scalar_from_name(p->b->name, &sk))
			continue;
		blk_const *more = realloc(o->defines, (size_t)(o->n_def + 1) * sizeof *more);
		char *name = strdup(p->name);
		if (more)
			o->defines = more;
		if (!more || !name) {
			free(name);
			ok = false;
			break;
		}
		o->defines[o->n_def++] = (blk_const){.name = name, .type = scalar_name(sk)};
	}
	return ok;
}

/* blkc run, bench and tune: their options, the kernel loaded through libblk,
 * its arguments made, then run once or timed. Returns the exit status. */
int tool_main(Tool tool, int argc, char **argv)
{
	static const char *const tool_names[] = {"blkc run", "blkc bench", "blkc tune"};
	tool_name = tool_names[tool];
	ToolOptions o = {.tool = tool, .reps = 100, .bytes = -1, .format = FORMAT_TABLE};
	o.config_args = calloc((size_t)argc, sizeof *o.config_args);
	o.sweep_args = calloc((size_t)argc, sizeof *o.sweep_args);
	TuneRun tr = {.best = -1};
	char *kernel_name = NULL;
	o.defines = calloc((size_t)argc, sizeof *o.defines);
	o.includes = calloc((size_t)argc, sizeof *o.includes);
	o.prints = calloc((size_t)argc, sizeof *o.prints), o.saves = calloc((size_t)argc, sizeof *o.saves);
	o.compares = calloc((size_t)argc, sizeof *o.compares);
	RunBuffer *bufs = calloc((size_t)argc, sizeof *bufs);
	blk_arg *args = NULL;
	int n_args = 0, n_bufs = 0, status = 2;
	blk_context *ctx = NULL;
	blk_module *mod = NULL;
	Arena arena = {0}; /* the program read from standard input, the files of refuse_outputs */
	rng_state = 1;
	if (!o.defines || !o.includes || !o.prints || !o.saves || !o.compares || !bufs || !o.config_args || !o.sweep_args) {
		fprintf(stderr, "%s: error: out of memory\n", tool_name);
		goto out;
	}
	status = parse_tool_options(&o, argc, argv);
	if (status >= 0)
		goto out;
	const char *path = argv[optind++];
	/* "-": the program from standard input, read once (libblk and the
	 * @autotune configs take it as text) */
	Source src;
	if (strcmp(path, "-") == 0) {
		status = read_stdin(&src, &arena) ? -1 : 1;
		if (status >= 0)
			goto out;
		o.source = &src;
	}
	status = refuse_outputs(&o, path, &arena);
	if (status >= 0)
		goto out;
	status = 1;
	if (!default_type_params(&o, path, &arena)) {
		fprintf(stderr, "%s: error: out of memory\n", tool_name);
		goto out;
	}
	/* --devices: the kernel and its arguments on the first GPU listed */
	if (blk_context_create(o.n_devices ? BLK_BACKEND_GPU : BLK_BACKEND_AUTO, o.n_devices ? o.devices[0] : 0, &ctx) !=
	    BLK_SUCCESS) {
		print_lib_error(NULL);
		goto out;
	}
	blk_module_options mo = {.include_dirs = o.includes, .n_include_dirs = o.n_inc, .defines = o.defines,
	                         .n_defines = o.n_def};
	blk_kernel *k;
	blk_status st = o.source ? blk_module_load_source(ctx, "<stdin>", o.source->text, o.source->len, &mo, &mod)
	                         : blk_module_load_file(ctx, path, &mo, &mod);
	if (st != BLK_SUCCESS) {
		print_lib_error(NULL);
		goto out;
	}
	if (blk_kernel_get(mod, o.kernel, &k) != BLK_SUCCESS) {
		/* name the option that chooses */
		fprintf(stderr, "%s: error: %s%s\n", tool_name, lib_message(blk_last_error()), o.kernel ? "" : " with -k NAME");
		goto out;
	}
	int arg_status = make_args(ctx, k, argc, argv, optind, &args, &n_args, bufs, &n_bufs);
	if (arg_status) {
		status = arg_status;
		goto out;
	}
	blk_launch_options lo = {.grid = {o.grid[0], o.grid[1], o.grid[2]}, .threads = o.threads};
	if (tool != TOOL_RUN)
		status = tool_time(&o, ctx, k, args, n_args, &lo, &tr, path, bufs, n_bufs, &kernel_name);
	else
		status = run_kernel(&o, ctx, k, args, n_args, &lo, bufs, n_bufs);
	fputs(blk_context_warnings(ctx), stderr); /* register spills of the variants compiled */
out:
	arena_free(&arena);
	for (int i = 0; i < n_bufs; i++)
		free(bufs[i].host);
	for (int i = 0; i < o.n_def; i++)
		free((char *)o.defines[i].name);
	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(args);
	free(bufs);
	free(o.defines);
	free(o.includes);
	free(o.prints);
	free(o.saves);
	free(o.compares);
	free(o.config_args);
	free(o.sweep_args);
	for (int i = 0; i < tr.n; i++)
		free_config(&tr.cfg[i]);
	free(tr.cfg);
	free(tr.names);
	free(kernel_name);
	return status;
}
