/* blkc: the command-line compiler. */
#include "compiler.h"
#include "lang.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BLK_VERSION
#define BLK_VERSION "0.1.0"
#endif

typedef enum Emit { EMIT_CHECK, EMIT_TOKENS, EMIT_AST, EMIT_IR } Emit;

typedef struct Options {
	Emit emit;
	const char *output;
	int color; /* -1 auto, 0 never, 1 always */
	int max_errors;
	const char **include_dirs;
	int n_include_dirs;
	ConstBinding *defines;
	int n_defines;
	const char *kernel;     /* --kernel */
	const char *passes;     /* --passes; NULL: the default pipeline, "none": no pass */
	const char *dump_after; /* --dump-after */
	const char *stdlib_dir;
	bool locations;         /* --locations: loc(LINE:COL) in printed IR */
} Options;

static void usage(FILE *f)
{
	fprintf(f, "usage: blkc [options] FILE...\n"
	      "\n"
	      "Compiles blk kernels (.tile files). FILE '-' reads standard input.\n"
	      "\n"
	      "options:\n"
	      "  --emit=KIND          what to produce:\n"
	      "                         check   check every kernel and report problems (default)\n"
	      "                         tokens  the token stream, one token a line\n"
	      "                         ast     the syntax tree, one node a line\n"
	      "                         ir      the tile IR of a kernel after the passes\n"
	      "  -o, --output=FILE    write the output to FILE instead of standard output\n"
	      "  -I, --include=DIR    add DIR to the import search path\n"
	      "  -D, --define=NAME=VALUE\n"
	      "                       bind the const kernel parameter NAME to VALUE\n"
	      "  -k, --kernel=NAME    the kernel to compile (default: the only one)\n"
	      "      --passes=LIST    passes to run, comma-separated (default: %s;\n"
	      "                       'none' runs none)\n"
	      "      --dump-after=PASS\n"
	      "                       print the IR after PASS (or after 'all' passes)\n"
	      "      --locations      show the source line:col of each IR op\n"
	      "      --color=WHEN     colour diagnostics: auto (default), always, never;\n"
	      "                       NO_COLOR in the environment means never\n"
	      "      --max-errors=N   stop after N errors (default 20, 0: no limit)\n"
	      "  -h, --help           show this help and exit\n"
	      "  -V, --version        show the version and exit\n"
	      "\n"
	      "Without --emit, blkc checks every kernel of the file, once for each\n"
	      "@autotune config, and reports what is wrong.\n",
	      IR_DEFAULT_PIPELINE);
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "blkc: error: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'blkc --help' for more information.\n");
	return 2;
}

static bool is_identifier(const char *s, size_t n)
{
	if (n == 0 || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/* The const values for one compilation: an autotune config (if any) with
 * the -D bindings over it. */
static int const_values(const Options *opt, const AutotuneSpec *at, int config, ConstBinding *out)
{
	int n = 0;
	if (at->n_configs)
		for (int i = 0; i < at->config_len[config]; i++) {
			bool overridden = false;
			for (int j = 0; j < opt->n_defines && !overridden; j++)
				overridden = strcmp(opt->defines[j].name, at->configs[config][i].name) == 0;
			if (!overridden)
				out[n++] = at->configs[config][i];
		}
	for (int j = 0; j < opt->n_defines; j++)
		out[n++] = opt->defines[j];
	return n;
}

/* Generates, verifies and optimizes one kernel for each of its configs
 * (only the first when printing). Returns false on an error. */
static bool compile_kernel(const Options *opt, Module *m, Node *k, Diag *diag, Arena *arena, StrBuf *text)
{
	AutotuneSpec at;
	if (!irgen_autotune(m, k, &at, diag, arena))
		return false;
	int configs = at.n_configs && opt->emit == EMIT_CHECK ? at.n_configs : 1;
	bool ok = true;
	for (int c = 0; c < configs && ok; c++) {
		int cap = opt->n_defines + (at.n_configs ? at.config_len[c] : 0);
		ConstBinding *consts = arena_alloc(arena, (size_t)(cap ? cap : 1) * sizeof *consts);
		if (!consts)
			return false;
		IrgenOptions io = {.consts = consts, .n_consts = const_values(opt, &at, c, consts)};
		IrFunc *f = irgen_kernel(m, k, &io, diag, arena);
		if (!f) {
			if (at.n_configs > 1)
				diag_note(diag, k->span, "while compiling '%s' with autotune config %d", k->name, c + 1);
			return false;
		}
		const char *pipeline = opt->passes && strcmp(opt->passes, "none") == 0 ? "" : opt->passes;
		ok = ir_run_passes(f, pipeline, opt->dump_after, text, diag);
		if (ok && opt->emit == EMIT_IR) {
			IrPrintOpts po = {.show_locations = opt->locations};
			ir_print_opts(f, text, &po);
		}
	}
	return ok;
}

/* Compiles one file; returns 0, or 1 when it had errors. */
static int compile_file(const Options *opt, const char *path, FILE *out)
{
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	diag.max_errors = opt->max_errors;
	diag.color = opt->color;

	StrBuf text = {0};
	int rc = 0;
	if (opt->emit == EMIT_TOKENS || opt->emit == EMIT_AST) {
		Source src;
		if (!source_read_file(&src, path, &arena, &diag)) {
			rc = 1;
		} else if (opt->emit == EMIT_TOKENS) {
			lexer_dump(&src, &diag, &arena, &text);
		} else {
			Node *file = parse_source(&src, &diag, &arena);
			if (file && diag.errors == 0)
				ast_dump(file, &text);
		}
	} else {
		ModuleSet set = {.arena = &arena, .diag = &diag, .include_dirs = opt->include_dirs,
		                 .n_include_dirs = opt->n_include_dirs, .stdlib_dir = opt->stdlib_dir};
		Module *m = module_load_file(&set, path);
		if (m && diag.errors == 0) {
			if (opt->emit == EMIT_IR || opt->kernel) {
				Node *k = irgen_find_kernel(m, opt->kernel, &diag);
				if (k)
					compile_kernel(opt, m, k, &diag, &arena, &text);
			} else {
				for (int i = 0; i < m->file->list.len && !diag.stopped; i++) {
					Node *k = m->file->list.items[i];
					if (k->kind == N_KERNEL)
						compile_kernel(opt, m, k, &diag, &arena, &text);
				}
			}
		}
	}
	if (text.failed || diag.out.failed) {
		fprintf(stderr, "blkc: error: out of memory compiling '%s'\n", path);
		rc = 1;
	}
	if (text.len && diag.errors == 0)
		fwrite(text.data, 1, text.len, out);
	sb_free(&text);
	if (diag.errors)
		rc = 1;
	if (diag.out.len) {
		fwrite(diag.out.data, 1, diag.out.len, stderr);
		if (diag.errors && !diag.stopped)
			fprintf(stderr, "%d error%s generated.\n", diag.errors, diag.errors == 1 ? "" : "s");
	}
	diag_free(&diag);
	arena_free(&arena);
	return rc;
}

/* The standard library: $BLK_STDLIB, else beside the program as installed
 * (PREFIX/bin/blkc, PREFIX/share/blk/stdlib) or as built (build/blkc,
 * stdlib/). */
static const char *find_stdlib(char *buf, size_t size)
{
	const char *env = getenv("BLK_STDLIB");
	if (env && env[0])
		return env;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	static const char *const rel[] = {"../share/blk/stdlib", "../stdlib", "../../stdlib"};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		snprintf(buf, size, "%s/%s", exe, rel[i]);
		if (access(buf, R_OK) == 0)
			return buf;
	}
	return NULL;
}

/* VALUE of -D: an integer (decimal, 0x hex), a float, or true/false. */
static bool parse_define(const char *arg, ConstBinding *out)
{
	const char *eq = strchr(arg, '=');
	if (!eq || !is_identifier(arg, (size_t)(eq - arg)) || !eq[1])
		return false;
	const char *v = eq + 1;
	char *end;
	*out = (ConstBinding){.name = strndup(arg, (size_t)(eq - arg))};
	if (!out->name)
		return false;
	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
		out->i = v[0] == 't';
		return true;
	}
	errno = 0;
	long long i = strtoll(v, &end, 0);
	if (!*end && !errno) {
		out->i = i;
		return true;
	}
	errno = 0;
	double f = strtod(v, &end);
	if (!*end && !errno) {
		out->is_float = true;
		out->f = f;
		return true;
	}
	free((char *)out->name);
	out->name = NULL;
	return false;
}

int main(int argc, char **argv)
{
	enum { OPT_EMIT = 256, OPT_COLOR, OPT_MAX_ERRORS, OPT_PASSES, OPT_DUMP_AFTER, OPT_LOCATIONS };
	static const struct option longopts[] = {
		{"emit", required_argument, NULL, OPT_EMIT},
		{"output", required_argument, NULL, 'o'},
		{"include", required_argument, NULL, 'I'},
		{"define", required_argument, NULL, 'D'},
		{"color", required_argument, NULL, OPT_COLOR},
		{"max-errors", required_argument, NULL, OPT_MAX_ERRORS},
		{"kernel", required_argument, NULL, 'k'},
		{"passes", required_argument, NULL, OPT_PASSES},
		{"dump-after", required_argument, NULL, OPT_DUMP_AFTER},
		{"locations", no_argument, NULL, OPT_LOCATIONS},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0, 0, 0, 0},
	};
	Options opt = {.emit = EMIT_CHECK, .color = -1, .max_errors = DIAG_MAX_ERRORS_DEFAULT};
	opt.include_dirs = calloc((size_t)argc, sizeof *opt.include_dirs);
	opt.defines = calloc((size_t)argc, sizeof *opt.defines);
	if (!opt.include_dirs || !opt.defines) {
		fputs("blkc: error: out of memory\n", stderr);
		return 2;
	}
	int c, status = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:I:D:k:hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_EMIT:
			if (strcmp(optarg, "check") == 0)
				opt.emit = EMIT_CHECK;
			else if (strcmp(optarg, "tokens") == 0)
				opt.emit = EMIT_TOKENS;
			else if (strcmp(optarg, "ast") == 0)
				opt.emit = EMIT_AST;
			else if (strcmp(optarg, "ir") == 0)
				opt.emit = EMIT_IR;
			else
				status = bad_usage("unknown --emit kind '%s' (expected check, tokens, ast or ir)", optarg);
			break;
		case 'o':
			opt.output = optarg;
			break;
		case 'I':
			opt.include_dirs[opt.n_include_dirs++] = optarg;
			break;
		case 'D':
			if (parse_define(optarg, &opt.defines[opt.n_defines]))
				opt.n_defines++;
			else
				status = bad_usage("-D expects NAME=VALUE with a number or true/false, got '%s'", optarg);
			break;
		case 'k':
			opt.kernel = optarg;
			break;
		case OPT_PASSES:
			opt.passes = optarg;
			break;
		case OPT_DUMP_AFTER:
			opt.dump_after = optarg;
			break;
		case OPT_LOCATIONS:
			opt.locations = true;
			break;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") == 0)
				opt.color = -1;
			else if (strcmp(optarg, "always") == 0)
				opt.color = 1;
			else if (strcmp(optarg, "never") == 0)
				opt.color = 0;
			else
				status = bad_usage("--color expects auto, always or never, got '%s'", optarg);
			break;
		case OPT_MAX_ERRORS: {
			char *end;
			errno = 0;
			long n = strtol(optarg, &end, 10);
			if (errno || *end || n < 0 || n > 1000000)
				status = bad_usage("--max-errors expects a count, got '%s'", optarg);
			else
				opt.max_errors = (int)n;
			break;
		}
		case 'h':
			usage(stdout);
			goto out;
		case 'V':
			printf("blkc %s\n", strncmp(blk_compiler_version(), "blk ", 4) == 0 ? blk_compiler_version() + 4 : blk_compiler_version());
			goto out;
		case ':':
			status = bad_usage("option '%s' needs an argument", argv[optind - 1]);
			break;
		default:
			status = bad_usage("unknown option '%s'", argv[optind - 1]);
			break;
		}
		if (status)
			goto out;
	}
	if (optind >= argc) {
		status = bad_usage("%s", "no input files");
		goto out;
	}
	if (opt.color < 0) {
		const char *no_color = getenv("NO_COLOR");
		opt.color = isatty(STDERR_FILENO) && !(no_color && no_color[0]);
	} else if (opt.color == 1) {
		const char *no_color = getenv("NO_COLOR");
		if (no_color && no_color[0])
			opt.color = 0;
	}

	char stdlib_buf[4200];
	opt.stdlib_dir = find_stdlib(stdlib_buf, sizeof stdlib_buf);

	FILE *out = stdout;
	if (opt.output && strcmp(opt.output, "-") != 0) {
		out = fopen(opt.output, "wb");
		if (!out) {
			fprintf(stderr, "blkc: error: cannot open '%s' for writing: %s\n", opt.output, strerror(errno));
			status = 1;
			goto out;
		}
	}
	for (int i = optind; i < argc; i++)
		if (compile_file(&opt, argv[i], out))
			status = 1;
	if (out != stdout && fclose(out) != 0) {
		fprintf(stderr, "blkc: error: cannot write '%s': %s\n", opt.output, strerror(errno));
		status = 1;
	}
	if (out == stdout && fflush(stdout) != 0) {
		fprintf(stderr, "blkc: error: cannot write standard output: %s\n", strerror(errno));
		status = 1;
	}
out:
	for (int i = 0; i < opt.n_defines; i++)
		free((char *)opt.defines[i].name);
	free(opt.defines);
	free(opt.include_dirs);
	return status;
}
