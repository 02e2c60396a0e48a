/* main.c: blkc's entry: the subcommands run, bench and tune, else the plain
 * compile's options, help and version, and the files it compiles. */
#include "blkc.h"
#include "lower/lower.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: blkc [options] FILE...\n"
	      "       blkc run [options] FILE [NAME=SPEC ...]    run a kernel (blkc run --help)\n"
	      "       blkc bench [options] FILE [NAME=SPEC ...]  time a kernel (blkc bench --help)\n"
	      "       blkc tune [options] FILE [NAME=SPEC ...]   time it in each config (blkc tune --help)\n"
	      "\n"
	      "Compiles blk kernels (.tile files). FILE '-' reads standard input.\n"
	      "\n"
	      "options:\n"
	      "  --emit=KIND          what to produce:\n"
	      "                         check   check every kernel and report problems (default)\n"
	      "                         tokens  the token stream, one token a line\n"
	      "                         ast     the syntax tree, one node a line\n"
	      "                         ir      the tile IR of a kernel after the passes\n"
	      "                         llvm    the LLVM IR the GPU back end makes of it\n"
	      "                         ptx     PTX assembly for --arch\n"
	      "                         cubin   a CUDA binary for --arch, through ptxas (on PATH, else\n"
	      "                                 $CUDA_HOME/bin or /usr/local/cuda/bin), written to -o FILE\n"
	      "                         c       C for ahead-of-time use: -o NAME writes NAME.c and NAME.h,\n"
	      "                                 a typed launch function for each kernel and @autotune\n"
	      "                                 config, the cubin (where ptxas is) and PTX embedded;\n"
	      "                                 they need libcuda.so.1 at run time, not libblk\n"
	      "      --arch=SM        GPU target: sm_80, sm_86, sm_89, sm_90 (default), sm_90a\n"
	      "      --assume=NAME:N[,NAME=1...]\n"
	      "                       specialize: argument NAME is a multiple of N (a pointer:\n"
	      "                       aligned to N bytes), or NAME=1 equals 1, as the JIT does\n"
	      "      --tma            on sm_90a, tensor-descriptor tiles that loops load for dots\n"
	      "                       are copied with TMA (as the JIT does under BLK_TMA=1);\n"
	      "                       -D tma=0 or 1, or an @autotune config's tma, overrides it\n"
	      "  -o, --output=FILE    write the output to FILE instead of standard output\n"
	      "  -I, --include=DIR    add DIR to the import search path\n"
	      "      --allow-any-import\n"
	      "                       let imports name absolute paths and files outside the\n"
	      "                       importing file's folder, the -I folders and the stdlib\n"
	      "  -D, --define=NAME=VALUE\n"
	      "                       bind the const kernel parameter NAME, or an option\n"
	      "                       (below), to VALUE\n"
	      "  -k, --kernel=NAME    the kernel to compile (default: the only one)\n"
	      "      --passes=LIST    passes to run, comma-separated (default: %s;\n"
	      "                       'none' runs none)\n"
	      "      --dump-after=PASS\n"
	      "                       print the IR after PASS (or after 'all' passes)\n"
	      "      --locations      show the source line:col of each IR op\n"
	      "      --color=WHEN     colour diagnostics: auto (default), always, never;\n"
	      "                       NO_COLOR in the environment means never\n"
	      "      --max-errors=N   stop after N errors (default 20, 0: no limit)\n"
	      "      --time[=N]       print the time of each compilation phase on stderr; with N,\n"
      "                       compile each file N times in this process and print the\n"
      "                       median of each phase (later runs skip LLVM's one-time setup;\n"
      "                       standard input is compiled once)\n"
	      "  -h, --help           show this help and exit\n"
	      "  -V, --version        show the version and exit\n"
	      "\n"
	      "Without --emit, blkc checks every kernel of the file, once for each\n"
	      "@autotune config, and reports what is wrong.\n"
	      "\n"
	      "options of a kernel, given by -D NAME=VALUE or in an @autotune config:\n",
	      IR_DEFAULT_PIPELINE);
	for (int i = 0; i < OPTION_COUNT; i++) {
		char range[64];
		fprintf(f, "  %-16s %s (default %d%s%s)\n", option_table[i].name, option_range(i, range, sizeof range),
		        option_table[i].dflt, option_table[i].env ? "; the JIT's: $" : "",
		        option_table[i].env ? option_table[i].env : "");
		fprintf(f, "  %-16s %s\n", "", option_table[i].help);
	}
}

/* The options of a plain compile into *opt: -1 to go on, else the exit
 * status (0 after --help or --version, 2 after a usage error). */
static int parse_options(Options *opt, int argc, char **argv)
{
	enum { OPT_EMIT = 256, OPT_COLOR, OPT_MAX_ERRORS, OPT_PASSES, OPT_DUMP_AFTER, OPT_LOCATIONS, OPT_ARCH, OPT_ASSUME,
	       OPT_TIME, OPT_TMA, OPT_ALLOW_ANY_IMPORT };
	static const struct option longopts[] = {
		{"emit", required_argument, NULL, OPT_EMIT},
		{"output", required_argument, NULL, 'o'},
		{"include", required_argument, NULL, 'I'},
		{"allow-any-import", no_argument, NULL, OPT_ALLOW_ANY_IMPORT},
		{"define", required_argument, NULL, 'D'},
		{"color", required_argument, NULL, OPT_COLOR},
		{"max-errors", required_argument, NULL, OPT_MAX_ERRORS},
		{"kernel", required_argument, NULL, 'k'},
		{"passes", required_argument, NULL, OPT_PASSES},
		{"dump-after", required_argument, NULL, OPT_DUMP_AFTER},
		{"locations", no_argument, NULL, OPT_LOCATIONS},
		{"arch", required_argument, NULL, OPT_ARCH},
		{"assume", required_argument, NULL, OPT_ASSUME},
		{"tma", no_argument, NULL, OPT_TMA},
		{"time", optional_argument, NULL, OPT_TIME},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0, 0, 0, 0},
	};
	int c, status = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:I:D:k:hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_EMIT:
			if (strcmp(optarg, "check") == 0)
				opt->emit = EMIT_CHECK;
			else if (strcmp(optarg, "tokens") == 0)
				opt->emit = EMIT_TOKENS;
			else if (strcmp(optarg, "ast") == 0)
				opt->emit = EMIT_AST;
			else if (strcmp(optarg, "ir") == 0)
				opt->emit = EMIT_IR;
			else if (strcmp(optarg, "llvm") == 0)
				opt->emit = EMIT_LLVM;
			else if (strcmp(optarg, "ptx") == 0)
				opt->emit = EMIT_PTX;
			else if (strcmp(optarg, "cubin") == 0)
				opt->emit = EMIT_CUBIN;
			else if (strcmp(optarg, "c") == 0)
				opt->emit = EMIT_C;
			else
				status = bad_usage("unknown --emit kind '%s' (expected check, tokens, ast, ir, llvm, ptx, cubin or c)",
				                   optarg);
			break;
		case 'o':
			opt->output = optarg;
			break;
		case 'I':
			opt->include_dirs[opt->n_include_dirs++] = optarg;
			break;
		case OPT_ALLOW_ANY_IMPORT:
			opt->allow_any_import = true;
			break;
		case 'D':
			if (parse_define(optarg, &opt->defines[opt->n_defines]))
				opt->n_defines++;
			else
				status = bad_usage("-D expects NAME=VALUE with a number, true/false or a type, got '%s'", optarg);
			break;
		case 'k':
			opt->kernel = optarg;
			break;
		case OPT_PASSES:
			opt->passes = optarg;
			break;
		case OPT_DUMP_AFTER:
			opt->dump_after = optarg;
			break;
		case OPT_LOCATIONS:
			opt->locations = true;
			break;
		case OPT_ARCH:
			opt->arch = optarg;
			break;
		case OPT_ASSUME:
			opt->assume = optarg;
			break;
		case OPT_TMA:
			opt->tma = true;
			break;
		case OPT_TIME: {
			opt->time = true;
			opt->time_runs = 1;
			if (optarg) {
				char *end;
				errno = 0;
				long n = strtol(optarg, &end, 10);
				if (end == optarg || *end || errno || n < 1 || n > 10000) {
					status = bad_usage("--time=%s: expected a number of runs from 1 to 10000", optarg);
					break;
				}
				opt->time_runs = (int)n;
			}
			break;
		}
		case OPT_COLOR:
			if (strcmp(optarg, "auto") == 0)
				opt->color = -1;
			else if (strcmp(optarg, "always") == 0)
				opt->color = 1;
			else if (strcmp(optarg, "never") == 0)
				opt->color = 0;
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
				opt->max_errors = (int)n;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("blkc %s\n", strncmp(blk_compiler_version(), "blk ", 4) == 0 ? blk_compiler_version() + 4 : blk_compiler_version());
			return 0;
		case ':':
			status = bad_usage("option '%s' needs an argument", argv[optind - 1]);
			break;
		default:
			status = unknown_option(argc, argv, longopts);
			break;
		}
		if (status)
			return status;
	}
	if (optind >= argc)
		return bad_usage("%s", "no input files");
	return -1;
}

/* What the options come to: the colour, the standard library (in
 * stdlib_buf), ptxas (in ptxas_buf), and whether -o suits --emit for
 * n_files files. -1 to go on, else the exit status. */
static int settle_options(Options *opt, int n_files, char *stdlib_buf, size_t stdlib_size, char *ptxas_buf,
                          size_t ptxas_size)
{
	if (opt->color < 0) {
		const char *no_color = getenv("NO_COLOR");
		opt->color = isatty(STDERR_FILENO) && !(no_color && no_color[0]);
	} else if (opt->color == 1) {
		const char *no_color = getenv("NO_COLOR");
		if (no_color && no_color[0])
			opt->color = 0;
	}

	opt->stdlib_dir = find_stdlib(stdlib_buf, stdlib_size);

	if (opt->emit == EMIT_C && (!opt->output || !opt->output[0] || strcmp(opt->output, "-") == 0))
		return bad_usage("%s", "--emit=c writes NAME.c and NAME.h: give -o NAME");
	if (opt->emit == EMIT_C && n_files != 1)
		return bad_usage("%s", "--emit=c takes one .tile file");
	bool tma_define = false;
	for (int i = 0; i < opt->n_defines; i++)
		tma_define |= strcmp(opt->defines[i].name, "tma") == 0 && opt->defines[i].i != 0;
	if (opt->emit == EMIT_C && (opt->tma || tma_define))
		return bad_usage("%s", "--tma (or -D tma=1) does not go with --emit=c: its launch functions pass no tensor maps");
	if (opt->emit == EMIT_CUBIN && (!opt->output || strcmp(opt->output, "-") == 0) && isatty(STDOUT_FILENO))
		return bad_usage("%s", "--emit=cubin writes a binary: give -o FILE (or redirect standard output)");
	if (opt->emit == EMIT_CUBIN || opt->emit == EMIT_C) {
		opt->ptxas = find_ptxas(ptxas_buf, ptxas_size);
		const char *home = getenv("CUDA_HOME");
		if (!opt->ptxas && opt->emit == EMIT_CUBIN) {
			fprintf(stderr, "blkc: error: --emit=cubin needs ptxas, the CUDA toolkit's PTX assembler, and there is "
			                "none on PATH or in %s/bin\n(install the CUDA toolkit or set CUDA_HOME to it; "
			                "--emit=ptx needs no toolkit: the driver compiles PTX when it loads it)\n",
			        home && home[0] ? home : "/usr/local/cuda");
			return 1;
		}
		if (!opt->ptxas)
			fprintf(stderr, "blkc: note: no ptxas on PATH or in %s/bin: the C embeds PTX only (the driver "
			                "compiles it when it loads it)\n", home && home[0] ? home : "/usr/local/cuda");
	}
	return -1;
}

/* Is an output the same file as an input? (Checked before anything is
 * opened for writing: `-o f.tile` must not destroy f.tile; the files an
 * input imports are checked as each is compiled, compile_file.) */
static bool output_is_input(const Options *opt, int argc, char **argv, int first)
{
	char outs[2][4200];
	int n = compile_outputs(opt, outs);
	for (int o = 0; o < n; o++)
		for (int i = first; i < argc; i++)
			if (output_is_source("blkc", "-o", outs[o], argv[i], NULL))
				return true;
	return false;
}

/* Compiles argv[first..argc) to -o FILE, else standard output; returns the
 * exit status. */
static int compile_files(const Options *opt, int argc, char **argv, int first)
{
	if (output_is_input(opt, argc, argv, first))
		return 2;
	int status = 0;
	FILE *out = stdout;
	char tmp[4200] = "";
	if (opt->output && strcmp(opt->output, "-") != 0 && opt->emit != EMIT_C) {
		out = open_output(opt->output, tmp, sizeof tmp);
		if (!out) {
			fprintf(stderr, "blkc: error: cannot open '%s' for writing: %s\n", opt->output, strerror(errno));
			return 1;
		}
	}
	for (int i = first; i < argc; i++) {
		int rc = compile_file_timed(opt, argv[i], out);
		if (rc > status)
			status = rc;
	}
	int werr = compile_write_errno();
	const char *name = out == stdout ? "standard output" : opt->output;
	bool closed = out == stdout ? !ferror(stdout) && fflush(stdout) == 0
	                            : close_output(out, opt->output, tmp, status == 0 && !werr);
	if (!closed || werr) {
		int err = werr ? werr : errno ? errno : EIO;
		fprintf(stderr, "blkc: error: cannot write %s%s%s: %s\n", out == stdout ? "" : "'", name,
		        out == stdout ? "" : "'", strerror(err));
		status = 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "run") == 0)
		return tool_main(TOOL_RUN, argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "bench") == 0)
		return tool_main(TOOL_BENCH, argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "tune") == 0)
		return tool_main(TOOL_TUNE, argc - 1, argv + 1);

	Options opt = {.emit = EMIT_CHECK, .color = -1, .max_errors = DIAG_MAX_ERRORS_DEFAULT, .arch = "sm_90"};
	opt.include_dirs = calloc((size_t)argc, sizeof *opt.include_dirs);
	opt.defines = calloc((size_t)argc, sizeof *opt.defines);
	if (!opt.include_dirs || !opt.defines) {
		fputs("blkc: error: out of memory\n", stderr);
		return 2;
	}
	char stdlib_buf[4200], ptxas_buf[4200];
	int status = parse_options(&opt, argc, argv);
	if (status < 0)
		status = settle_options(&opt, argc - optind, stdlib_buf, sizeof stdlib_buf, ptxas_buf, sizeof ptxas_buf);
	if (status < 0)
		status = compile_files(&opt, argc, argv, optind);
	for (int i = 0; i < opt.n_defines; i++)
		free((char *)opt.defines[i].name);
	free(opt.defines);
	free(opt.include_dirs);
	return status;
}
