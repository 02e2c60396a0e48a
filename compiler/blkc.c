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

typedef enum Emit { EMIT_CHECK, EMIT_TOKENS, EMIT_AST } Emit;

typedef struct Define {
	const char *name, *value;
} Define;

typedef struct Options {
	Emit emit;
	const char *output;
	int color; /* -1 auto, 0 never, 1 always */
	int max_errors;
	const char **include_dirs;
	int n_include_dirs;
	Define *defines;
	int n_defines;
} Options;

static void usage(FILE *f)
{
	fputs("usage: blkc [options] FILE...\n"
	      "\n"
	      "Compiles blk kernels (.tile files). FILE '-' reads standard input.\n"
	      "\n"
	      "options:\n"
	      "  --emit=KIND          what to produce:\n"
	      "                         check   parse and report diagnostics only (default)\n"
	      "                         tokens  the token stream, one token a line\n"
	      "                         ast     the syntax tree, one node a line\n"
	      "  -o, --output=FILE    write the output to FILE instead of standard output\n"
	      "  -I, --include=DIR    add DIR to the import search path\n"
	      "  -D, --define=NAME=VALUE\n"
	      "                       bind the const kernel parameter NAME to VALUE\n"
	      "      --color=WHEN     colour diagnostics: auto (default), always, never;\n"
	      "                       NO_COLOR in the environment means never\n"
	      "      --max-errors=N   stop after N errors (default 20, 0: no limit)\n"
	      "  -h, --help           show this help and exit\n"
	      "  -V, --version        show the version and exit\n",
	      f);
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

/* Compiles one file; returns 0, or 1 when it had errors. */
static int compile_file(const Options *opt, const char *path, FILE *out)
{
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	diag.max_errors = opt->max_errors;
	diag.color = opt->color;

	Source src;
	int rc = 0;
	if (!source_read_file(&src, path, &arena, &diag)) {
		rc = 1;
		goto done;
	}
	StrBuf text = {0};
	if (opt->emit == EMIT_TOKENS) {
		lexer_dump(&src, &diag, &arena, &text);
	} else {
		Node *file = parse_source(&src, &diag, &arena);
		if (file && opt->emit == EMIT_AST && diag.errors == 0)
			ast_dump(file, &text);
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
done:
	if (diag.out.len) {
		fwrite(diag.out.data, 1, diag.out.len, stderr);
		if (diag.errors && !diag.stopped)
			fprintf(stderr, "%d error%s generated.\n", diag.errors, diag.errors == 1 ? "" : "s");
	}
	diag_free(&diag);
	arena_free(&arena);
	return rc;
}

int main(int argc, char **argv)
{
	enum { OPT_EMIT = 256, OPT_COLOR, OPT_MAX_ERRORS };
	static const struct option longopts[] = {
		{"emit", required_argument, NULL, OPT_EMIT},
		{"output", required_argument, NULL, 'o'},
		{"include", required_argument, NULL, 'I'},
		{"define", required_argument, NULL, 'D'},
		{"color", required_argument, NULL, OPT_COLOR},
		{"max-errors", required_argument, NULL, OPT_MAX_ERRORS},
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
	while ((c = getopt_long(argc, argv, ":o:I:D:hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_EMIT:
			if (strcmp(optarg, "check") == 0)
				opt.emit = EMIT_CHECK;
			else if (strcmp(optarg, "tokens") == 0)
				opt.emit = EMIT_TOKENS;
			else if (strcmp(optarg, "ast") == 0)
				opt.emit = EMIT_AST;
			else
				status = bad_usage("unknown --emit kind '%s' (expected check, tokens or ast)", optarg);
			break;
		case 'o':
			opt.output = optarg;
			break;
		case 'I':
			opt.include_dirs[opt.n_include_dirs++] = optarg;
			break;
		case 'D': {
			const char *eq = strchr(optarg, '=');
			if (!eq || !is_identifier(optarg, (size_t)(eq - optarg)) || !eq[1]) {
				status = bad_usage("-D expects NAME=VALUE, got '%s'", optarg);
				break;
			}
			opt.defines[opt.n_defines++] = (Define){strndup(optarg, (size_t)(eq - optarg)), eq + 1};
			break;
		}
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
