/* blkc: the command-line compiler. */
#include "blk.h"
#include "compiler.h"
#include "lang.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#ifndef BLK_VERSION
#define BLK_VERSION "0.1.0"
#endif

typedef enum Emit { EMIT_CHECK, EMIT_TOKENS, EMIT_AST, EMIT_IR, EMIT_LLVM, EMIT_PTX, EMIT_CUBIN, EMIT_C } Emit;

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
	const char *arch;       /* --arch */
	const char *assume;     /* --assume=NAME:DIV,... */
	bool time;              /* --time: each phase's time on stderr */
	const char *ptxas;      /* --emit=cubin and c: the ptxas found, or NULL */
} Options;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

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
	      "                                 $CUDA_HOME/bin or /usr/local/cuda/bin); needs -o FILE\n"
	      "                         c       C for ahead-of-time use: -o NAME writes NAME.c and NAME.h,\n"
	      "                                 a typed launch function for each kernel and @autotune\n"
	      "                                 config, the cubin (where ptxas is) and PTX embedded;\n"
	      "                                 they need libcuda.so.1 at run time, not libblk\n"
	      "      --arch=SM        GPU target: sm_80, sm_86, sm_89, sm_90 (default), sm_90a\n"
	      "      --assume=NAME:N[,NAME:N...]\n"
	      "                       specialize: argument NAME is a multiple of N (a pointer:\n"
	      "                       aligned to N bytes), as the JIT does for 16\n"
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
	      "      --time           print the time of each compilation phase on stderr\n"
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

/* --assume=x:16,n:16 sets what specialization would promise. */
static bool apply_assumptions(IrFunc *f, const char *spec, Diag *diag)
{
	const char *p = spec;
	while (*p) {
		const char *colon = strchr(p, ':');
		const char *comma = strchr(p, ',');
		if (!comma)
			comma = p + strlen(p);
		char *end;
		long long div = colon && colon < comma ? strtoll(colon + 1, &end, 10) : 0;
		if (!colon || colon > comma || div <= 0 || (div & (div - 1)) || end != comma) {
			diag_plain(diag, DIAG_ERROR, "--assume expects NAME:N with N a power of two, got '%.*s'", (int)(comma - p), p);
			return false;
		}
		bool found = false;
		for (int i = 0; i < f->n_params; i++)
			if (f->params[i].value && strlen(f->params[i].name) == (size_t)(colon - p) &&
			    strncmp(f->params[i].name, p, (size_t)(colon - p)) == 0) {
				f->params[i].divisibility = div;
				found = true;
			}
		if (!found) {
			diag_plain(diag, DIAG_ERROR, "--assume: kernel '%s' has no runtime parameter '%.*s'", f->name,
			           (int)(colon - p), p);
			return false;
		}
		p = *comma ? comma + 1 : comma;
	}
	return true;
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
		if (opt->assume && !apply_assumptions(f, opt->assume, diag))
			return false;
		const char *pipeline = opt->passes && strcmp(opt->passes, "none") == 0 ? "" : opt->passes;
		ok = ir_run_passes(f, pipeline, opt->dump_after, text, diag);
		if (ok && opt->emit == EMIT_IR) {
			IrPrintOpts po = {.show_locations = opt->locations};
			ir_print_opts(f, text, &po);
		} else if (ok && (opt->emit == EMIT_LLVM || opt->emit == EMIT_PTX)) {
			char *code = NULL;
			size_t len = 0;
			int shared = 0;
			ok = blk_gpu_emit(f, opt->arch, opt->emit == EMIT_LLVM, &code, &len, &shared, diag);
			if (ok)
				sb_putn(text, code, len);
			free(code);
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
		/* -D applies to the kernels that have the parameter; one that no
		 * kernel of the file has is most likely a typo */
		for (int d = 0; m && d < opt->n_defines; d++) {
			const char *dn = opt->defines[d].name;
			bool used = strcmp(dn, "num_warps") == 0 || strcmp(dn, "num_stages") == 0;
			for (int i = 0; i < m->file->list.len && !used; i++) {
				Node *k = m->file->list.items[i];
				for (int j = 0; k->kind == N_KERNEL && j < k->list.len && !used; j++) {
					Node *p = k->list.items[j];
					used = strcmp(p->name, dn) == 0 && p->a && p->a->kind == N_TYPE_CONST;
				}
			}
			if (!used)
				diag_plain(&diag, DIAG_ERROR, "-D %s: no kernel of '%s' has a const parameter '%s'", dn, path, dn);
		}
		if (m && diag.errors == 0) {
			if (opt->emit >= EMIT_IR || opt->kernel) {
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

/* ---- blkc run ---------------------------------------------------------------------- */

static void run_usage(FILE *f)
{
	fputs("usage: blkc run [options] FILE [NAME=SPEC ...]\n"
	      "\n"
	      "Runs a kernel on the interpreter (or, where libblk has one, a GPU: BLK_BACKEND=gpu).\n"
	      "Each runtime parameter NAME of the kernel gets a SPEC:\n"
	      "  pointer   COUNT[:INIT]   a new buffer of COUNT elements of the pointee type;\n"
	      "                           INIT: zeros (default), ones, arange, random (uniform in\n"
	      "                           [-1, 1)), randn, fill=VALUE, file=PATH (raw elements)\n"
	      "  scalar    VALUE          an integer or float\n"
	      "\n"
	      "options:\n"
	      "  -k, --kernel=NAME        the kernel (default: the only one)\n"
	      "  -D, --define=NAME=VALUE  a const parameter's value\n"
	      "  -I, --include=DIR        import search path\n"
	      "      --grid=X[,Y[,Z]]     the grid (default: the kernel's grid clause)\n"
	      "      --threads=N          interpreter threads (default 1)\n"
	      "      --seed=S             seed of random fills (default 1)\n"
	      "      --print=NAME[:N]     print buffer NAME after the run (its first N elements)\n"
	      "      --checksum           print the sum and a hash of every buffer after the run\n"
	      "      --save=NAME:PATH     write buffer NAME's raw elements to PATH\n"
	      "      --compare=NAME:PATH[:TOL]\n"
	      "                           compare buffer NAME with PATH's raw elements; floats\n"
	      "                           within TOL relative (default 1e-6); exit 1 if they differ\n",
	      f);
}

typedef struct RunBuffer {
	const char *name;
	ScalarKind kind;  /* of an element (pointers: u64) */
	int64_t count;
	size_t bytes;
	void *host;
	blk_devptr dev;
} RunBuffer;

static uint64_t rng_state;

static double next_uniform(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng_state >> 11) * 0x1p-53 * 2.0 - 1.0;
}

static double next_normal(void)
{
	double u1 = (next_uniform() + 1.0) / 2.0, u2 = (next_uniform() + 1.0) / 2.0;
	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int elem_size(ScalarKind k) { return scalar_bits(k) < 8 ? 1 : scalar_bits(k) / 8; }

static void put_elem(void *base, int64_t i, ScalarKind k, double v)
{
	unsigned char *p = (unsigned char *)base + i * elem_size(k);
	uint64_t bits;
	if (scalar_is_float(k))
		bits = fp_encode(k, v);
	else if (k == SK_I1)
		bits = v != 0;
	else
		bits = (uint64_t)(int64_t)v;
	memcpy(p, &bits, (size_t)elem_size(k)); /* little-endian: the low bytes */
}

static double get_elem(const void *base, int64_t i, ScalarKind k)
{
	uint64_t bits = 0;
	memcpy(&bits, (const unsigned char *)base + i * elem_size(k), (size_t)elem_size(k));
	if (scalar_is_float(k))
		return fp_decode(k, bits);
	if (scalar_is_signed(k) && k != SK_I1) {
		int w = scalar_bits(k);
		if (w < 64 && (bits >> (w - 1)) & 1)
			bits |= ~((UINT64_C(1) << w) - 1);
		return (double)(int64_t)bits;
	}
	return (double)bits;
}

static bool read_raw(const char *path, void *dst, size_t bytes)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "blkc run: error: cannot open '%s': %s\n", path, strerror(errno));
		return false;
	}
	size_t got = fread(dst, 1, bytes, f);
	int extra = fgetc(f);
	fclose(f);
	if (got != bytes || extra != EOF) {
		fprintf(stderr, "blkc run: error: '%s' holds %s bytes than the %zu the buffer needs\n", path,
		        got != bytes ? "fewer" : "more", bytes);
		return false;
	}
	return true;
}

/* Makes the host side of a buffer from "COUNT[:INIT]". */
static bool make_buffer(RunBuffer *b, const char *spec)
{
	char *end;
	errno = 0;
	long long count = strtoll(spec, &end, 0);
	if (errno || count <= 0 || count > (1LL << 34) || (*end && *end != ':')) {
		fprintf(stderr, "blkc run: error: '%s=%s': a buffer is COUNT[:INIT] with COUNT > 0\n", b->name, spec);
		return false;
	}
	b->count = count;
	b->bytes = (size_t)count * (size_t)elem_size(b->kind);
	b->host = calloc(1, b->bytes);
	if (!b->host) {
		fprintf(stderr, "blkc run: error: out of memory for '%s'\n", b->name);
		return false;
	}
	const char *init = *end ? end + 1 : "zeros";
	if (strncmp(init, "file=", 5) == 0)
		return read_raw(init + 5, b->host, b->bytes);
	double fill = 0;
	bool is_fill = strncmp(init, "fill=", 5) == 0;
	if (is_fill) {
		fill = strtod(init + 5, &end);
		if (*end || end == init + 5) {
			fprintf(stderr, "blkc run: error: '%s': fill= needs a number\n", b->name);
			return false;
		}
	} else if (strcmp(init, "zeros") && strcmp(init, "ones") && strcmp(init, "arange") && strcmp(init, "random") &&
	           strcmp(init, "randn")) {
		fprintf(stderr, "blkc run: error: '%s': unknown INIT '%s' (zeros, ones, arange, random, randn, fill=V, "
		                "file=PATH)\n", b->name, init);
		return false;
	}
	bool is_int = !scalar_is_float(b->kind);
	for (int64_t i = 0; i < count; i++) {
		double v = is_fill ? fill : strcmp(init, "ones") == 0 ? 1 : strcmp(init, "arange") == 0 ? (double)i
		         : strcmp(init, "random") == 0 ? (is_int ? floor((next_uniform() + 1) * 64) : next_uniform())
		         : strcmp(init, "randn") == 0 ? next_normal() : 0;
		put_elem(b->host, i, b->kind, v);
	}
	return true;
}

static RunBuffer *find_run_buffer(RunBuffer *bufs, int n, const char *name, size_t len)
{
	for (int i = 0; i < n; i++)
		if (strlen(bufs[i].name) == len && strncmp(bufs[i].name, name, len) == 0)
			return &bufs[i];
	fprintf(stderr, "blkc run: error: no buffer named '%.*s'\n", (int)len, name);
	return NULL;
}

static int run_main(int argc, char **argv)
{
	enum { R_GRID = 256, R_THREADS, R_SEED, R_PRINT, R_CHECKSUM, R_SAVE, R_COMPARE };
	static const struct option longopts[] = {
		{"kernel", required_argument, NULL, 'k'},   {"define", required_argument, NULL, 'D'},
		{"include", required_argument, NULL, 'I'},  {"grid", required_argument, NULL, R_GRID},
		{"threads", required_argument, NULL, R_THREADS}, {"seed", required_argument, NULL, R_SEED},
		{"print", required_argument, NULL, R_PRINT}, {"checksum", no_argument, NULL, R_CHECKSUM},
		{"save", required_argument, NULL, R_SAVE},  {"compare", required_argument, NULL, R_COMPARE},
		{"help", no_argument, NULL, 'h'},           {0, 0, 0, 0},
	};
	const char *kernel = NULL;
	blk_const *defines = calloc((size_t)argc, sizeof *defines);
	const char **includes = calloc((size_t)argc, sizeof *includes);
	const char **prints = calloc((size_t)argc, sizeof *prints), **saves = calloc((size_t)argc, sizeof *saves);
	const char **compares = calloc((size_t)argc, sizeof *compares);
	RunBuffer *bufs = calloc((size_t)argc, sizeof *bufs);
	blk_arg *args = NULL;
	int n_def = 0, n_inc = 0, n_print = 0, n_save = 0, n_cmp = 0, n_bufs = 0, status = 2, threads = 0;
	unsigned grid[3] = {0, 0, 0};
	bool checksum = false;
	blk_context *ctx = NULL;
	blk_module *mod = NULL;
	rng_state = 1;
	if (!defines || !includes || !prints || !saves || !compares || !bufs) {
		fputs("blkc run: error: out of memory\n", stderr);
		goto out;
	}
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":k:D:I:h", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'k': kernel = optarg; break;
		case 'I': includes[n_inc++] = optarg; break;
		case 'D': {
			ConstBinding cb;
			if (!parse_define(optarg, &cb)) {
				bad_usage("-D expects NAME=VALUE with a number or true/false, got '%s'", optarg);
				goto out;
			}
			defines[n_def++] = (blk_const){cb.name, cb.is_float, cb.i, cb.f};
			break;
		}
		case R_GRID: {
			int n = sscanf(optarg, "%u,%u,%u", &grid[0], &grid[1], &grid[2]);
			if (n < 1 || !grid[0]) {
				bad_usage("--grid expects X[,Y[,Z]], got '%s'", optarg);
				goto out;
			}
			for (int i = n; i < 3; i++)
				grid[i] = 1;
			break;
		}
		case R_THREADS:
			threads = (int)strtol(optarg, &end, 10);
			if (*end || threads < 1 || threads > 1024) {
				bad_usage("--threads expects a count from 1 to 1024, got '%s'", optarg);
				goto out;
			}
			break;
		case R_SEED: rng_state = strtoull(optarg, NULL, 0); break;
		case R_PRINT: prints[n_print++] = optarg; break;
		case R_CHECKSUM: checksum = true; break;
		case R_SAVE: saves[n_save++] = optarg; break;
		case R_COMPARE: compares[n_cmp++] = optarg; break;
		case 'h': run_usage(stdout); status = 0; goto out;
		case ':': bad_usage("option '%s' needs an argument", argv[optind - 1]); goto out;
		default: bad_usage("unknown option '%s'", argv[optind - 1]); goto out;
		}
	}
	if (optind >= argc) {
		bad_usage("%s", "blkc run needs a .tile file");
		goto out;
	}
	const char *path = argv[optind++];
	status = 1;
	if (blk_context_create(BLK_BACKEND_AUTO, 0, &ctx) != BLK_SUCCESS) {
		fprintf(stderr, "blkc run: error: %s\n", blk_last_error());
		goto out;
	}
	blk_module_options mo = {.include_dirs = includes, .n_include_dirs = n_inc, .defines = defines, .n_defines = n_def};
	blk_kernel *k;
	if (blk_module_load_file(ctx, path, &mo, &mod) != BLK_SUCCESS || blk_kernel_get(mod, kernel, &k) != BLK_SUCCESS) {
		fputs(blk_last_error(), stderr);
		fputc('\n', stderr);
		goto out;
	}
	int np = blk_kernel_num_params(k);
	args = calloc((size_t)(np ? np : 1), sizeof *args);
	if (!args)
		goto out;
	int n_args = 0;
	for (int i = 0; i < np; i++) {
		blk_param_info p;
		blk_kernel_param(k, i, &p);
		if (p.is_const)
			continue;
		const char *spec = NULL;
		size_t len = strlen(p.name);
		for (int a = optind; a < argc; a++)
			if (strncmp(argv[a], p.name, len) == 0 && argv[a][len] == '=')
				spec = argv[a] + len + 1;
		if (!spec) {
			fprintf(stderr, "blkc run: error: give the argument '%s' (%s) as %s=%s\n", p.name, p.type, p.name,
			        p.kind == BLK_PARAM_POINTER ? "COUNT[:INIT]" : "VALUE");
			goto out;
		}
		if (p.kind != BLK_PARAM_POINTER) {
			char *end;
			if (p.kind == BLK_PARAM_INT) {
				errno = 0;
				long long v = strtoll(spec, &end, 0);
				if (*end || errno) {
					fprintf(stderr, "blkc run: error: '%s' (%s) needs an integer, got '%s'\n", p.name, p.type, spec);
					goto out;
				}
				args[n_args++] = blk_arg_int(v);
			} else {
				double v = strtod(spec, &end);
				if (*end) {
					fprintf(stderr, "blkc run: error: '%s' (%s) needs a number, got '%s'\n", p.name, p.type, spec);
					goto out;
				}
				args[n_args++] = blk_arg_float(v);
			}
			continue;
		}
		if (strncmp(p.type, "**", 2) == 0) {
			fprintf(stderr, "blkc run: error: '%s' is %s: pointers to pointers can only be given through the C API\n",
			        p.name, p.type);
			goto out;
		}
		RunBuffer *b = &bufs[n_bufs++];
		b->name = p.name;
		if (!scalar_from_name(p.type + 1, &b->kind) || !make_buffer(b, spec))
			goto out;
		if (blk_malloc(ctx, b->bytes, &b->dev) != BLK_SUCCESS ||
		    blk_copy_to_device(ctx, b->dev, b->host, b->bytes) != BLK_SUCCESS) {
			fprintf(stderr, "blkc run: error: %s\n", blk_last_error());
			goto out;
		}
		args[n_args++] = blk_arg_ptr(b->dev);
	}
	for (int a = optind; a < argc; a++) {
		const char *eq = strchr(argv[a], '=');
		bool known = false;
		for (int i = 0; i < np && eq && !known; i++) {
			blk_param_info p;
			blk_kernel_param(k, i, &p);
			known = !p.is_const && strlen(p.name) == (size_t)(eq - argv[a]) && strncmp(p.name, argv[a], (size_t)(eq - argv[a])) == 0;
		}
		if (!known) {
			fprintf(stderr, "blkc run: error: '%s' names no runtime parameter of the kernel\n", argv[a]);
			goto out;
		}
	}
	blk_launch_options lo = {.grid = {grid[0], grid[1], grid[2]}, .threads = threads};
	blk_status st = blk_launch(k, args, n_args, &lo);
	fputs(blk_context_printed(ctx), stdout);
	if (st != BLK_SUCCESS) {
		fputs(blk_last_error(), stderr);
		goto out;
	}
	for (int i = 0; i < n_bufs; i++)
		blk_copy_from_device(ctx, bufs[i].host, bufs[i].dev, bufs[i].bytes);
	status = 0;
	for (int i = 0; i < n_print; i++) {
		const char *colon = strchr(prints[i], ':');
		RunBuffer *b = find_run_buffer(bufs, n_bufs, prints[i], colon ? (size_t)(colon - prints[i]) : strlen(prints[i]));
		if (!b) {
			status = 1;
			continue;
		}
		int64_t n = colon ? strtoll(colon + 1, NULL, 10) : b->count;
		if (n <= 0 || n > b->count)
			n = b->count;
		printf("%s:", b->name);
		for (int64_t j = 0; j < n; j++)
			printf(" %.9g", get_elem(b->host, j, b->kind));
		putchar('\n');
	}
	if (checksum)
		for (int i = 0; i < n_bufs; i++) {
			double sum = 0;
			uint64_t h = 14695981039346656037ull; /* FNV-1a of the bytes */
			for (int64_t j = 0; j < bufs[i].count; j++)
				sum += get_elem(bufs[i].host, j, bufs[i].kind);
			for (size_t j = 0; j < bufs[i].bytes; j++)
				h = (h ^ ((unsigned char *)bufs[i].host)[j]) * 1099511628211ull;
			printf("%s: sum %.9g hash %016llx\n", bufs[i].name, sum, (unsigned long long)h);
		}
	for (int i = 0; i < n_save; i++) {
		const char *colon = strchr(saves[i], ':');
		RunBuffer *b = colon ? find_run_buffer(bufs, n_bufs, saves[i], (size_t)(colon - saves[i])) : NULL;
		FILE *f = b ? fopen(colon + 1, "wb") : NULL;
		if (!f || fwrite(b->host, 1, b->bytes, f) != b->bytes || fclose(f) != 0) {
			fprintf(stderr, "blkc run: error: cannot save '%s'\n", saves[i]);
			status = 1;
		}
	}
	for (int i = 0; i < n_cmp; i++) {
		char *spec = strdup(compares[i]);
		char *p1 = spec ? strchr(spec, ':') : NULL;
		char *p2 = p1 ? strchr(p1 + 1, ':') : NULL;
		if (p2)
			*p2 = '\0';
		double tol = p2 ? strtod(p2 + 1, NULL) : 1e-6;
		RunBuffer *b = p1 ? find_run_buffer(bufs, n_bufs, spec, (size_t)(p1 - spec)) : NULL;
		void *ref = b ? malloc(b->bytes) : NULL;
		if (!ref || !read_raw(p1 + 1, ref, b->bytes)) {
			fprintf(stderr, "blkc run: error: cannot compare '%s'\n", compares[i]);
			status = 1;
		} else {
			int64_t bad = 0, first = -1;
			for (int64_t j = 0; j < b->count; j++) {
				double x = get_elem(b->host, j, b->kind), y = get_elem(ref, j, b->kind);
				bool same = scalar_is_float(b->kind) ? (isnan(x) && isnan(y)) || fabs(x - y) <= tol * fabs(y) || x == y
				                                     : x == y;
				if (!same && bad++ == 0)
					first = j;
			}
			if (bad) {
				printf("%s: %lld of %lld elements differ from %s; first at %lld: %.9g, expected %.9g\n", b->name,
				       (long long)bad, (long long)b->count, p1 + 1, (long long)first, get_elem(b->host, first, b->kind),
				       get_elem(ref, first, b->kind));
				status = 1;
			} else {
				printf("%s: matches %s (%lld elements)\n", b->name, p1 + 1, (long long)b->count);
			}
		}
		free(ref);
		free(spec);
	}
out:
	for (int i = 0; i < n_bufs; i++)
		free(bufs[i].host);
	for (int i = 0; i < n_def; i++)
		free((char *)defines[i].name);
	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(args);
	free(bufs);
	free(defines);
	free(includes);
	free(prints);
	free(saves);
	free(compares);
	return status;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "run") == 0)
		return run_main(argc - 1, argv + 1);

	enum { OPT_EMIT = 256, OPT_COLOR, OPT_MAX_ERRORS, OPT_PASSES, OPT_DUMP_AFTER, OPT_LOCATIONS, OPT_ARCH, OPT_ASSUME };
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
		{"arch", required_argument, NULL, OPT_ARCH},
		{"assume", required_argument, NULL, OPT_ASSUME},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0, 0, 0, 0},
	};
	Options opt = {.emit = EMIT_CHECK, .color = -1, .max_errors = DIAG_MAX_ERRORS_DEFAULT, .arch = "sm_90"};
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
			else if (strcmp(optarg, "llvm") == 0)
				opt.emit = EMIT_LLVM;
			else if (strcmp(optarg, "ptx") == 0)
				opt.emit = EMIT_PTX;
			else
				status = bad_usage("unknown --emit kind '%s' (expected check, tokens, ast, ir, llvm or ptx)", optarg);
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
		case OPT_ARCH:
			opt.arch = optarg;
			break;
		case OPT_ASSUME:
			opt.assume = optarg;
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
