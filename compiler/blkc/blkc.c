/* blkc: the command-line compiler. */
#include "blk.h"
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "lower/lower.h"
#include "lang.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <spawn.h>
#include <stddef.h>
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
	int time_runs;          /* --time=N: compile each file N times, print medians */
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
	      "                                 $CUDA_HOME/bin or /usr/local/cuda/bin), written to -o FILE\n"
	      "                         c       C for ahead-of-time use: -o NAME writes NAME.c and NAME.h,\n"
	      "                                 a typed launch function for each kernel and @autotune\n"
	      "                                 config, the cubin (where ptxas is) and PTX embedded;\n"
	      "                                 they need libcuda.so.1 at run time, not libblk\n"
	      "      --arch=SM        GPU target: sm_80, sm_86, sm_89, sm_90 (default), sm_90a\n"
	      "      --assume=NAME:N[,NAME=1...]\n"
	      "                       specialize: argument NAME is a multiple of N (a pointer:\n"
	      "                       aligned to N bytes), or NAME=1 equals 1, as the JIT does\n"
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
	      "      --time[=N]       print the time of each compilation phase on stderr; with N,\n"
      "                       compile each file N times in this process and print the\n"
      "                       median of each phase (later runs skip LLVM's one-time setup;\n"
      "                       standard input is compiled once)\n"
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
		const char *comma = strchr(p, ',');
		if (!comma)
			comma = p + strlen(p);
		const char *colon = memchr(p, ':', (size_t)(comma - p)), *eq = memchr(p, '=', (size_t)(comma - p));
		const char *sep = colon ? colon : eq;
		char *end = NULL;
		long long n = sep ? strtoll(sep + 1, &end, 10) : 0;
		bool ok = sep && end == comma && (colon ? n > 0 && !(n & (n - 1)) : n == 1);
		if (!ok) {
			diag_plain(diag, DIAG_ERROR,
			           "--assume expects NAME:N (a multiple of N, a power of two) or NAME=1, got '%.*s'",
			           (int)(comma - p), p);
			return false;
		}
		bool found = false;
		for (int i = 0; i < f->n_params; i++) {
			IrParam *prm = &f->params[i];
			if (!prm->value || strlen(prm->name) != (size_t)(sep - p) || strncmp(prm->name, p, (size_t)(sep - p)) != 0)
				continue;
			found = true;
			if (colon)
				prm->divisibility = n;
			else if (!ir_param_is_one(f, prm)) /* equal to 1, as the JIT specializes */
				return false;
		}
		if (!found) {
			diag_plain(diag, DIAG_ERROR, "--assume: kernel '%s' has no runtime parameter '%.*s'", f->name,
			           (int)(sep - p), p);
			return false;
		}
		p = *comma ? comma + 1 : comma;
	}
	return true;
}

/* ---- compiling: phases, ptxas, ahead-of-time C ---------------------------------------- */

/* Milliseconds spent in each phase of one blkc invocation on a file. */
typedef struct PhaseTimes {
	double parse, irgen, passes, llvm, ptx, cubin;
	int variants;
} PhaseTimes;

/* One kernel variant (a kernel at one set of const values) for --emit=c. */
typedef struct AotVariant {
	const char *kernel;
	int config;              /* index of the @autotune config, -1 without one */
	ConstBinding *consts;
	int n_consts;
	IrFunc *f;
	char *ptx;
	size_t ptx_len;
	unsigned char *cubin;    /* NULL without ptxas */
	size_t cubin_len;
	int shared;
	const char *grid;        /* the grid clause as written, or NULL */
	int grid_len;
	char prefix[512];        /* C names: PREFIX_launch, ... */
} AotVariant;

typedef struct Compile {
	const Options *opt;
	Diag *diag;
	Arena *arena;
	StrBuf *text;
	PhaseTimes t;
	AotVariant *vars;
	int n_vars, cap_vars;
} Compile;

/* ptxas: on PATH, else in $CUDA_HOME/bin, else (CUDA_HOME unset) in
 * /usr/local/cuda/bin. */
static const char *find_ptxas(char *buf, size_t size)
{
	const char *path = getenv("PATH");
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		snprintf(buf, size, "%.*s/ptxas", (int)(n ? n : 1), n ? path : ".");
		struct stat st;
		if (access(buf, X_OK) == 0 && stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return buf;
		path = colon ? colon + 1 : NULL;
	}
	const char *home = getenv("CUDA_HOME");
	snprintf(buf, size, "%s/bin/ptxas", home && home[0] ? home : "/usr/local/cuda");
	return access(buf, X_OK) == 0 ? buf : NULL;
}

static bool write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/* The whole file, malloc'd, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *more = realloc(buf, cap * 2 + 1);
			if (!more) {
				free(buf);
				buf = NULL;
			}
			buf = more;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

/* Assembles PTX into a cubin with `ptxas -arch=ARCH`, in a temporary
 * folder. On failure reports ptxas's messages to diag. */
static bool run_ptxas(const char *ptxas, const char *arch, const char *kernel, const char *ptx, size_t len,
                      unsigned char **cubin, size_t *cubin_len, Diag *diag)
{
	*cubin = NULL;
	*cubin_len = 0;
	const char *tmp = getenv("TMPDIR");
	char dir[4096], in[4200], out[4200], log[4200], archarg[64];
	snprintf(dir, sizeof dir, "%s/blkc-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		diag_plain(diag, DIAG_ERROR, "cannot make a temporary folder for ptxas in '%s': %s",
		           tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
		return false;
	}
	snprintf(in, sizeof in, "%s/%s.ptx", dir, "kernel");
	snprintf(out, sizeof out, "%s/%s.cubin", dir, "kernel");
	snprintf(log, sizeof log, "%s/ptxas.log", dir);
	snprintf(archarg, sizeof archarg, "-arch=%s", arch);
	bool ok = false;
	if (!write_file(in, ptx, len)) {
		diag_plain(diag, DIAG_ERROR, "cannot write '%s': %s", in, strerror(errno));
	} else {
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		char *argv[] = {"ptxas", archarg, "-o", out, in, NULL};
		pid_t pid;
		int rc = posix_spawn(&pid, ptxas, &fa, NULL, argv, environ), status = 0;
		posix_spawn_file_actions_destroy(&fa);
		if (rc != 0) {
			diag_plain(diag, DIAG_ERROR, "cannot run '%s': %s", ptxas, strerror(rc));
		} else if (waitpid(pid, &status, 0) < 0) {
			diag_plain(diag, DIAG_ERROR, "waiting for '%s': %s", ptxas, strerror(errno));
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			size_t n = 0;
			char *msg = slurp(log, &n);
			while (msg && n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
				msg[--n] = '\0';
			diag_plain(diag, DIAG_ERROR, "%s %s failed on kernel '%s' (%s %d)%s%s", ptxas, archarg, kernel,
			           WIFEXITED(status) ? "exit status" : "signal",
			           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), msg && n ? ":\n" : "",
			           msg && n ? msg : "");
			free(msg);
		} else {
			*cubin = (unsigned char *)slurp(out, cubin_len);
			ok = *cubin != NULL;
			if (!ok)
				diag_plain(diag, DIAG_ERROR, "cannot read what ptxas wrote ('%s')", out);
		}
	}
	unlink(in);
	unlink(out);
	unlink(log);
	rmdir(dir);
	return ok;
}

/* ---- --emit=c: the C source and header ---- */

static void c_ident(char *dst, size_t size, const char *src)
{
	size_t n = 0;
	if (!(src[0] == '_' || (src[0] >= 'a' && src[0] <= 'z') || (src[0] >= 'A' && src[0] <= 'Z')) && n + 1 < size)
		dst[n++] = '_';
	for (const char *p = src; *p && n + 1 < size; p++)
		dst[n++] = (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
		               ? *p : '_';
	dst[n] = '\0';
}

/* A parameter's name in C: the kernel's, with '_' added where it would be
 * a C keyword or one of the launch function's own parameters. */
static void c_param_name(char *dst, size_t size, const char *name)
{
	static const char *const taken[] = {
		"stream", "gx", "gy", "gz", "auto", "break", "case", "char", "const", "continue", "default", "do", "double",
		"else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
		"return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
		"volatile", "while", "bool", "true", "false", "asm", "typeof", "alignas", "alignof", "nullptr",
		"static_assert", "thread_local", "constexpr", "class", "new", "delete", "this", "template", "namespace",
		"operator", "private", "protected", "public", "virtual", "friend", "try", "catch", "throw", "using",
		"explicit", "mutable", "typename", "export", "and", "or", "not", "xor", "bitand", "bitor", "compl",
	};
	bool clash = strncmp(name, "blk_", 4) == 0;
	for (size_t i = 0; i < sizeof taken / sizeof taken[0] && !clash; i++)
		clash = strcmp(name, taken[i]) == 0;
	snprintf(dst, size, "%s%s", name, clash ? "_" : "");
}

/* The C type of a runtime parameter, and the type the kernel receives it
 * as when that is wider (integers under 32 bits and fp8 travel as 32 bits). */
static const char *c_param_type(Type t, const char **wide)
{
	*wide = NULL;
	if (t.ptr)
		return "CUdeviceptr";
	switch ((ScalarKind)t.scalar) {
	case SK_I1: *wide = "uint32_t"; return "bool";
	case SK_I8: *wide = "int32_t"; return "int8_t";
	case SK_I16: *wide = "int32_t"; return "int16_t";
	case SK_I32: return "int32_t";
	case SK_I64: return "int64_t";
	case SK_U8: *wide = "uint32_t"; return "uint8_t";
	case SK_U16: *wide = "uint32_t"; return "uint16_t";
	case SK_U32: return "uint32_t";
	case SK_U64: return "uint64_t";
	case SK_F8E4M3: case SK_F8E5M2: *wide = "uint32_t"; return "uint8_t";
	case SK_F16: case SK_BF16: return "uint16_t";
	case SK_F32: return "float";
	case SK_F64: return "double";
	default: return "uint64_t";
	}
}

/* s as a C string literal's contents. */
static void c_escape(StrBuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			sb_printf(b, "\\%c", c);
		else if (c == '\n')
			sb_puts(b, "\\n");
		else if (c < 32 || c >= 127)
			sb_printf(b, "\\%03o", c);
		else if (c == '?' && i + 1 < n && s[i + 1] == '?')
			sb_puts(b, "?\\"); /* no trigraphs */
		else
			sb_putn(b, (const char *)&c, 1);
	}
}

/* Text for a C comment: no comment end inside, one line. */
static void c_comment_text(StrBuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '*' && i + 1 < n && s[i + 1] == '/')
			sb_puts(b, "* ");
		else if (s[i] == '\n' || s[i] == '\r' || s[i] == '\t')
			sb_puts(b, " ");
		else
			sb_putn(b, &s[i], 1);
	}
}

static void c_bytes(StrBuf *b, const char *name, const unsigned char *data, size_t n, bool nul)
{
	sb_printf(b, "static const unsigned char %s[%zu] = {", name, n + (nul ? 1 : 0));
	for (size_t i = 0; i < n + (nul ? 1 : 0); i++)
		sb_printf(b, "%s0x%02x,", i % 16 ? "" : "\n\t", i < n ? data[i] : 0);
	sb_puts(b, "\n};\n");
}

static void const_text(StrBuf *b, const ConstBinding *c)
{
	if (c->is_float)
		sb_printf(b, "%s = %.17g", c->name, c->f);
	else
		sb_printf(b, "%s = %lld", c->name, (long long)c->i);
}

/* The launch function's declaration of variant v (no ';'). */
static void c_launch_decl(StrBuf *b, const AotVariant *v)
{
	sb_printf(b, "blk_status %s_launch(CUstream stream, unsigned gx, unsigned gy, unsigned gz", v->prefix);
	for (int i = 0; i < v->f->n_params; i++) {
		const IrParam *p = &v->f->params[i];
		if (!p->value)
			continue;
		const char *wide;
		char name[256];
		c_param_name(name, sizeof name, p->name);
		sb_printf(b, ",\n        %s %s", c_param_type(p->type, &wide), name);
	}
	sb_puts(b, ")");
}

static const char aot_header_intro[] =
	" * Kernels compiled ahead of time: no blk library is needed to run them,\n"
	" * only the CUDA driver, libcuda.so.1, which the .c file opens with dlopen\n"
	" * (link with -ldl where glibc is older than 2.34). No CUDA header is needed\n"
	" * to build either.\n"
	" *\n"
	" * %s_load() loads every kernel into the CUDA context current on the calling\n"
	" * thread (with none current, device 0's primary context is made current):\n"
	" * the embedded cubin, else (another GPU, or no cubin) the embedded PTX, which\n"
	" * the driver compiles. A launch function loads them on first use; call\n"
	" * %s_load() first where several threads launch. %s_unload() unloads them.\n"
	" * Launch functions queue the kernel on `stream` (NULL: the default stream)\n"
	" * and return at once; gx, gy, gz are the programs along each grid axis (the\n"
	" * kernel's grid clause, computed by the caller). When a call fails,\n"
	" * %s_error() says why. */\n";

static bool write_aot(const Compile *cc, const char *src_path)
{
	const Options *opt = cc->opt;
	char base[4096], ident[256], guard[300];
	snprintf(base, sizeof base, "%s", opt->output);
	size_t bl = strlen(base);
	if (bl > 2 && (strcmp(base + bl - 2, ".c") == 0 || strcmp(base + bl - 2, ".h") == 0))
		base[bl - 2] = '\0';
	const char *slash = strrchr(base, '/');
	const char *leaf = slash ? slash + 1 : base;
	c_ident(ident, sizeof ident, leaf);
	size_t gl = 0;
	for (const char *p = ident; *p && gl + 3 < sizeof guard; p++)
		guard[gl++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
	memcpy(guard + gl, "_H", 3);

	/* names: NAME_launch for a single variant; NAME_N_launch for @autotune
	 * config N (from 0) of a single kernel; with several kernels
	 * NAME_KERNEL_launch, NAME_KERNEL_N_launch */
	AotVariant *vars = cc->vars;
	int n = cc->n_vars;
	bool one_kernel = true;
	for (int i = 1; i < n; i++)
		one_kernel = one_kernel && strcmp(vars[i].kernel, vars[0].kernel) == 0;
	for (int i = 0; i < n; i++) {
		int same_kernel = 0;
		for (int j = 0; j < n; j++)
			same_kernel += strcmp(vars[j].kernel, vars[i].kernel) == 0;
		char kid[200];
		c_ident(kid, sizeof kid, vars[i].kernel);
		if (n == 1)
			snprintf(vars[i].prefix, sizeof vars[i].prefix, "%s", ident);
		else if (one_kernel)
			snprintf(vars[i].prefix, sizeof vars[i].prefix, "%s_%d", ident, vars[i].config);
		else if (same_kernel == 1)
			snprintf(vars[i].prefix, sizeof vars[i].prefix, "%s_%s", ident, kid);
		else
			snprintf(vars[i].prefix, sizeof vars[i].prefix, "%s_%s_%d", ident, kid, vars[i].config);
	}

	StrBuf h = {0}, c = {0};
	const char *version = blk_compiler_version();
	/* ---- the header ---- */
	sb_printf(&h, "/* %s.h: generated by %s from %s for %s by\n *   blkc --emit=c", leaf, version, src_path,
	          opt->arch);
	sb_puts(&h, " -o ");
	c_comment_text(&h, opt->output, strlen(opt->output));
	sb_puts(&h, "\n * Do not edit; regenerate.\n *\n");
	sb_printf(&h, aot_header_intro, ident, ident, ident, ident);
	sb_printf(&h, "#ifndef %s\n#define %s\n\n#include <stdbool.h>\n#include <stdint.h>\n\n", guard, guard);
	sb_puts(&h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	sb_puts(&h, "/* The driver's types, as cuda.h declares them (skipped after cuda.h). */\n"
	            "#if !defined(CUDA_VERSION) && !defined(BLK_AOT_CUDA_TYPES)\n#define BLK_AOT_CUDA_TYPES\n"
	            "typedef unsigned long long CUdeviceptr;\ntypedef struct CUstream_st *CUstream;\n#endif\n\n");
	sb_puts(&h, "/* blk_status as blk.h has it (skipped after blk.h; include blk.h first\n"
	            " * where a file uses both). */\n"
	            "#if !defined(BLK_H) && !defined(BLK_AOT_STATUS)\n#define BLK_AOT_STATUS\n"
	            "typedef enum blk_status {\n\tBLK_SUCCESS = 0,\n\tBLK_ERROR_INVALID_ARGUMENT,\n\tBLK_ERROR_SOURCE,\n"
	            "\tBLK_ERROR_OUT_OF_MEMORY,\n\tBLK_ERROR_NOT_FOUND,\n\tBLK_ERROR_NO_DEVICE,\n\tBLK_ERROR_LAUNCH,\n"
	            "} blk_status;\n#endif\n\n");
	sb_printf(&h, "/* Loads every kernel (BLK_ERROR_NO_DEVICE: no driver or GPU; BLK_ERROR_LAUNCH:\n"
	              " * the driver refused both the cubin and the PTX). */\nblk_status %s_load(void);\n", ident);
	sb_printf(&h, "void %s_unload(void);\n", ident);
	sb_printf(&h, "/* Why the last failed call on this thread failed (\"\" if none). */\nconst char *%s_error(void);\n",
	          ident);
	sb_printf(&h, "/* How many kernels were loaded from PTX rather than the cubin. */\nint %s_loaded_from_ptx(void);\n",
	          ident);
	for (int i = 0; i < n; i++) {
		const AotVariant *v = &vars[i];
		sb_printf(&h, "\n/* %s", v->kernel);
		if (v->config >= 0)
			sb_printf(&h, ", @autotune config %d", v->config);
		for (int j = 0, shown = 0; j < v->f->n_params; j++) {
			const IrParam *p = &v->f->params[j];
			if (!p->is_const)
				continue;
			ConstBinding cb = {p->name, scalar_is_float((ScalarKind)p->type.scalar), p->const_ival, p->const_fval};
			sb_puts(&h, shown++ ? ", " : ": ");
			const_text(&h, &cb);
		}
		sb_printf(&h, "\n * %d threads a program (num_warps %d), %d bytes of dynamic shared memory", 32 * v->f->num_warps,
		          v->f->num_warps, v->shared);
		if (v->grid) {
			sb_puts(&h, "\n * The kernel's ");
			c_comment_text(&h, v->grid, (size_t)v->grid_len);
			sb_puts(&h, ": gx, gy, gz");
		}
		for (int j = 0; j < v->f->n_params; j++) {
			const IrParam *p = &v->f->params[j];
			if (!p->value)
				continue;
			StrBuf t = {0};
			type_print(p->type, &t);
			const char *wide;
			sb_printf(&h, "\n *   %s: %s as %s", p->name, t.data ? t.data : "?", c_param_type(p->type, &wide));
			if (!p->type.ptr && (p->type.scalar == SK_F16 || p->type.scalar == SK_BF16 ||
			                     p->type.scalar == SK_F8E4M3 || p->type.scalar == SK_F8E5M2))
				sb_puts(&h, " (its bits)");
			if (p->divisibility > 1)
				sb_printf(&h, ", a multiple of %lld%s (checked: BLK_ERROR_INVALID_ARGUMENT)",
				          (long long)p->divisibility, p->type.ptr ? " bytes" : "");
			if (p->equals_one)
				sb_puts(&h, ", equal to 1 (checked: BLK_ERROR_INVALID_ARGUMENT)");
			sb_free(&t);
		}
		sb_puts(&h, " */\n");
		c_launch_decl(&h, v);
		sb_puts(&h, ";\n");
		if (ir_assert_ops(v->f, NULL, 0) > 0)
			sb_printf(&h, "/* Waits for `stream`, then BLK_ERROR_LAUNCH if an assert of the kernel failed\n"
			              " * (the first failure, with its place, in %s_error()). */\n"
			              "blk_status %s_check(CUstream stream);\n", ident, v->prefix);
	}
	sb_printf(&h, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s */\n", guard);

	/* ---- the source ---- */
	sb_printf(&c, "/* %s.c: generated by %s from %s for %s; do not edit.\n", leaf, version, src_path, opt->arch);
	sb_puts(&c, " * The CUDA driver is opened with dlopen and its few functions looked up by\n"
	            " * name: this file builds without CUDA headers or libraries, and a program\n"
	            " * using it starts where there is no driver (%s_load says so). */\n");
	sb_printf(&c, "#include \"%s.h\"\n\n#include <dlfcn.h>\n#include <pthread.h>\n#include <stdarg.h>\n"
	              "#include <stdio.h>\n#include <string.h>\n\n", leaf);
	sb_puts(&c, "typedef int blk_CUresult;\ntypedef int blk_CUdevice;\ntypedef struct CUctx_st *blk_CUcontext;\n"
	            "typedef struct CUmod_st *blk_CUmodule;\ntypedef struct CUfunc_st *blk_CUfunction;\n\n");
	sb_puts(&c, "#define BLK_DRIVER(X) \\\n"
	            "\tX(cuInit, \"cuInit\", (unsigned)) \\\n"
	            "\tX(cuCtxGetCurrent, \"cuCtxGetCurrent\", (blk_CUcontext *)) \\\n"
	            "\tX(cuCtxSetCurrent, \"cuCtxSetCurrent\", (blk_CUcontext)) \\\n"
	            "\tX(cuDeviceGet, \"cuDeviceGet\", (blk_CUdevice *, int)) \\\n"
	            "\tX(cuDevicePrimaryCtxRetain, \"cuDevicePrimaryCtxRetain\", (blk_CUcontext *, blk_CUdevice)) \\\n"
	            "\tX(cuDevicePrimaryCtxRelease, \"cuDevicePrimaryCtxRelease_v2\", (blk_CUdevice)) \\\n"
	            "\tX(cuModuleLoadData, \"cuModuleLoadData\", (blk_CUmodule *, const void *)) \\\n"
	            "\tX(cuModuleLoadDataEx, \"cuModuleLoadDataEx\", (blk_CUmodule *, const void *, unsigned, int *, "
	            "void **)) \\\n"
	            "\tX(cuModuleGetFunction, \"cuModuleGetFunction\", (blk_CUfunction *, blk_CUmodule, const char *)) \\\n"
	            "\tX(cuModuleGetGlobal, \"cuModuleGetGlobal_v2\", (CUdeviceptr *, size_t *, blk_CUmodule, "
	            "const char *)) \\\n"
	            "\tX(cuModuleUnload, \"cuModuleUnload\", (blk_CUmodule)) \\\n"
	            "\tX(cuFuncSetAttribute, \"cuFuncSetAttribute\", (blk_CUfunction, int, int)) \\\n"
	            "\tX(cuLaunchKernel, \"cuLaunchKernel\", (blk_CUfunction, unsigned, unsigned, unsigned, unsigned, "
	            "unsigned, \\\n\t\tunsigned, unsigned, CUstream, void **, void **)) \\\n"
	            "\tX(cuStreamSynchronize, \"cuStreamSynchronize\", (CUstream)) \\\n"
	            "\tX(cuMemcpyDtoH, \"cuMemcpyDtoH_v2\", (void *, CUdeviceptr, size_t)) \\\n"
	            "\tX(cuMemcpyHtoD, \"cuMemcpyHtoD_v2\", (CUdeviceptr, const void *, size_t)) \\\n"
	            "\tX(cuGetErrorName, \"cuGetErrorName\", (blk_CUresult, const char **))\n\n");
	sb_puts(&c, "static struct {\n\tvoid *lib;\n#define BLK_FIELD(name, symbol, params) blk_CUresult(*name) params;\n"
	            "\tBLK_DRIVER(BLK_FIELD)\n#undef BLK_FIELD\n} blk_cu;\n\n");
	sb_puts(&c, "typedef struct blk_variant {\n\tconst char *kernel;\n\tconst unsigned char *cubin;\n"
	            "\tsize_t cubin_len;\n\tconst unsigned char *ptx;\n\tint shared_bytes;\n\tunsigned threads;\n"
	            "\tblk_CUmodule module;\n\tblk_CUfunction fn;\n\tCUdeviceptr assert_state;\n\tint from_ptx;\n"
	            "} blk_variant;\n\n");
	for (int i = 0; i < n; i++) {
		const AotVariant *v = &vars[i];
		char name[300];
		if (v->cubin) {
			snprintf(name, sizeof name, "blk_cubin_%d", i);
			c_bytes(&c, name, v->cubin, v->cubin_len, false);
		}
		snprintf(name, sizeof name, "blk_ptx_%d", i);
		c_bytes(&c, name, (const unsigned char *)v->ptx, v->ptx_len, true);
		sb_puts(&c, "\n");
	}
	sb_printf(&c, "static blk_variant blk_variants[%d] = {\n", n);
	for (int i = 0; i < n; i++) {
		const AotVariant *v = &vars[i];
		sb_puts(&c, "\t{\"");
		c_escape(&c, v->f->name, strlen(v->f->name));
		if (v->cubin)
			sb_printf(&c, "\", blk_cubin_%d, sizeof blk_cubin_%d", i, i);
		else
			sb_puts(&c, "\", NULL, 0");
		sb_printf(&c, ", blk_ptx_%d, %d, %d, NULL, NULL, 0, 0},\n", i, v->shared, 32 * v->f->num_warps);
	}
	sb_puts(&c, "};\n\n");
	sb_printf(&c,
	          "static pthread_mutex_t blk_lock = PTHREAD_MUTEX_INITIALIZER;\n"
	          "static int blk_loaded;           /* read without the lock through __atomic_load_n */\n"
	          "static blk_CUdevice blk_primary = -1; /* the device whose primary context we retained */\n"
	          "static blk_CUcontext blk_primary_ctx;\n"
	          "static _Thread_local char blk_message[2048];\n\n"
	          "const char *%s_error(void)\n{\n\treturn blk_message;\n}\n\n"
	          "static blk_status blk_fail(blk_status st, const char *fmt, ...)\n{\n\tva_list ap;\n"
	          "\tva_start(ap, fmt);\n\tvsnprintf(blk_message, sizeof blk_message, fmt, ap);\n\tva_end(ap);\n"
	          "\treturn st;\n}\n\n"
	          "static const char *blk_cu_name(blk_CUresult r)\n{\n\tconst char *name = NULL;\n"
	          "\tif (blk_cu.cuGetErrorName)\n\t\tblk_cu.cuGetErrorName(r, &name);\n\treturn name ? name : \"CUDA error\";\n}\n\n",
	          ident);
	sb_printf(&c,
	          "/* Opens libcuda.so.1 and finds its functions. Caller holds blk_lock. */\n"
	          "static blk_status blk_open_driver(void)\n{\n\tif (blk_cu.lib)\n\t\treturn BLK_SUCCESS;\n"
	          "\tvoid *lib = dlopen(\"libcuda.so.1\", RTLD_NOW | RTLD_LOCAL);\n\tif (!lib)\n"
	          "\t\treturn blk_fail(BLK_ERROR_NO_DEVICE, \"%s: no CUDA driver: %%s\", dlerror());\n"
	          "#define BLK_LOOKUP(name, symbol, params) \\\n"
	          "\t{ \\\n\t\tvoid *sym = dlsym(lib, symbol); \\\n\t\tif (!sym) { \\\n\t\t\tdlclose(lib); \\\n"
	          "\t\t\treturn blk_fail(BLK_ERROR_NO_DEVICE, \"%s: the CUDA driver has no %%s\", symbol); \\\n"
	          "\t\t} \\\n\t\tmemcpy(&blk_cu.name, &sym, sizeof sym); \\\n\t}\n"
	          "\tBLK_DRIVER(BLK_LOOKUP)\n#undef BLK_LOOKUP\n"
	          "\tblk_CUresult r = blk_cu.cuInit(0);\n\tif (r != 0) {\n"
	          "\t\tblk_status st = blk_fail(BLK_ERROR_NO_DEVICE, \"%s: cuInit: %%s (%%d)\", blk_cu_name(r), r);\n"
	          "\t\tdlclose(lib);\n\t\tmemset(&blk_cu, 0, sizeof blk_cu);\n\t\treturn st;\n\t}\n"
	          "\tblk_cu.lib = lib;\n\treturn BLK_SUCCESS;\n}\n\n",
	          ident, ident, ident);
	sb_printf(&c,
	          "/* One kernel: the cubin, else the PTX (JIT-compiled, with the driver's log). */\n"
	          "static blk_status blk_load_variant(blk_variant *v)\n{\n\tblk_CUresult r = -1, rc = 0;\n"
	          "\tif (v->cubin)\n\t\trc = r = blk_cu.cuModuleLoadData(&v->module, v->cubin);\n"
	          "\tv->from_ptx = r != 0;\n\tchar log[4096] = \"\";\n\tif (r != 0) {\n"
	          "\t\tint opts[] = {5 /* CU_JIT_ERROR_LOG_BUFFER */, 6 /* CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES */};\n"
	          "\t\tvoid *vals[] = {log, (void *)(size_t)sizeof log};\n"
	          "\t\tr = blk_cu.cuModuleLoadDataEx(&v->module, v->ptx, 2, opts, vals);\n\t}\n"
	          "\tif (r != 0) {\n\t\tlog[sizeof log - 1] = '\\0';\n"
	          "\t\treturn blk_fail(BLK_ERROR_LAUNCH, \"%s: kernel '%%s': %%s%%s%%s (%%d) loading its PTX%%s%%s\", v->kernel,\n"
	          "\t\t                v->cubin ? \"the cubin: \" : \"\", v->cubin ? blk_cu_name(rc) : \"\",\n"
	          "\t\t                v->cubin ? \", then \" : \"\", r, log[0] ? \":\\n\" : \"\", log);\n\t}\n"
	          "\tr = blk_cu.cuModuleGetFunction(&v->fn, v->module, v->kernel);\n"
	          "\tif (r == 0 && v->shared_bytes > 48 * 1024)\n"
	          "\t\tr = blk_cu.cuFuncSetAttribute(v->fn, 8 /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */,\n"
	          "\t\t                              v->shared_bytes);\n"
	          "\tif (r != 0) {\n\t\tblk_cu.cuModuleUnload(v->module);\n\t\tv->module = NULL;\n"
	          "\t\treturn blk_fail(BLK_ERROR_LAUNCH, \"%s: kernel '%%s': %%s (%%d)\", v->kernel, blk_cu_name(r), r);\n\t}\n"
	          "\tsize_t bytes;\n"
	          "\tif (blk_cu.cuModuleGetGlobal(&v->assert_state, &bytes, v->module, \"blk_assert_state\") != 0)\n"
	          "\t\tv->assert_state = 0;\n\treturn BLK_SUCCESS;\n}\n\n",
	          ident, ident);
	sb_printf(&c,
	          "static void blk_unload_locked(void)\n{\n"
	          "\tfor (size_t i = 0; i < sizeof blk_variants / sizeof blk_variants[0]; i++)\n"
	          "\t\tif (blk_variants[i].module) {\n\t\t\tblk_cu.cuModuleUnload(blk_variants[i].module);\n"
	          "\t\t\tblk_variants[i].module = NULL;\n\t\t\tblk_variants[i].fn = NULL;\n\t\t}\n"
	          "\tif (blk_primary >= 0) { /* no longer current once released */\n\t\tblk_CUcontext cur = NULL;\n"
	          "\t\tif (blk_cu.cuCtxGetCurrent(&cur) == 0 && cur == blk_primary_ctx)\n\t\t\tblk_cu.cuCtxSetCurrent(NULL);\n"
	          "\t\tblk_cu.cuDevicePrimaryCtxRelease(blk_primary);\n\t\tblk_primary = -1;\n\t\tblk_primary_ctx = NULL;\n\t}\n"
	          "\t__atomic_store_n(&blk_loaded, 0, __ATOMIC_RELEASE);\n}\n\n"
	          "blk_status %s_load(void)\n{\n\tpthread_mutex_lock(&blk_lock);\n\tblk_status st = BLK_SUCCESS;\n"
	          "\tif (!__atomic_load_n(&blk_loaded, __ATOMIC_ACQUIRE)) {\n\t\tst = blk_open_driver();\n"
	          "\t\tblk_CUcontext ctx = NULL;\n"
	          "\t\tif (st == BLK_SUCCESS && (blk_cu.cuCtxGetCurrent(&ctx) != 0 || !ctx)) {\n"
	          "\t\t\tblk_CUdevice dev;\n\t\t\tblk_CUresult r = blk_cu.cuDeviceGet(&dev, 0);\n"
	          "\t\t\tif (r == 0 && (r = blk_cu.cuDevicePrimaryCtxRetain(&ctx, dev)) == 0) {\n"
	          "\t\t\t\tblk_primary = dev;\n\t\t\t\tblk_primary_ctx = ctx;\n\t\t\t\tr = blk_cu.cuCtxSetCurrent(ctx);\n\t\t\t}\n"
	          "\t\t\tif (r != 0)\n\t\t\t\tst = blk_fail(BLK_ERROR_NO_DEVICE, \"%s: no CUDA context current and none "
	          "on device 0: %%s (%%d)\",\n\t\t\t\t              blk_cu_name(r), r);\n\t\t}\n"
	          "\t\tfor (size_t i = 0; st == BLK_SUCCESS && i < sizeof blk_variants / sizeof blk_variants[0]; i++)\n"
	          "\t\t\tst = blk_load_variant(&blk_variants[i]);\n"
	          "\t\tif (st == BLK_SUCCESS)\n\t\t\t__atomic_store_n(&blk_loaded, 1, __ATOMIC_RELEASE);\n"
	          "\t\telse if (blk_cu.lib)\n\t\t\tblk_unload_locked();\n\t}\n"
	          "\tpthread_mutex_unlock(&blk_lock);\n\tif (st == BLK_SUCCESS)\n\t\tblk_message[0] = '\\0';\n\treturn st;\n}\n\n"
	          "void %s_unload(void)\n{\n\tpthread_mutex_lock(&blk_lock);\n\tif (blk_cu.lib)\n\t\tblk_unload_locked();\n"
	          "\tpthread_mutex_unlock(&blk_lock);\n}\n\n"
	          "int %s_loaded_from_ptx(void)\n{\n\tint n = 0;\n\tpthread_mutex_lock(&blk_lock);\n"
	          "\tfor (size_t i = 0; i < sizeof blk_variants / sizeof blk_variants[0]; i++)\n"
	          "\t\tn += blk_variants[i].module && blk_variants[i].from_ptx;\n"
	          "\tpthread_mutex_unlock(&blk_lock);\n\treturn n;\n}\n\n"
	          "static blk_status blk_ready(void)\n{\n"
	          "\treturn __atomic_load_n(&blk_loaded, __ATOMIC_ACQUIRE) ? BLK_SUCCESS : %s_load();\n}\n\n"
	          "static blk_status blk_launch_variant(blk_variant *v, CUstream stream, unsigned gx, unsigned gy, "
	          "unsigned gz,\n                                     void **args)\n{\n"
	          "\tif (!gx || !gy || !gz)\n\t\treturn BLK_SUCCESS; /* no programs */\n"
	          "\tblk_CUresult r = blk_cu.cuLaunchKernel(v->fn, gx, gy, gz, v->threads, 1, 1, (unsigned)v->shared_bytes, "
	          "stream,\n\t                                        args, NULL);\n"
	          "\tif (r != 0)\n\t\treturn blk_fail(BLK_ERROR_LAUNCH, \"%s: kernel '%%s' (grid %%u, %%u, %%u): "
	          "cuLaunchKernel: %%s (%%d)\", v->kernel,\n\t\t                gx, gy, gz, blk_cu_name(r), r);\n"
	          "\treturn BLK_SUCCESS;\n}\n",
	          ident, ident, ident, ident, ident, ident);
	for (int i = 0; i < n; i++) {
		const AotVariant *v = &vars[i];
		sb_puts(&c, "\n");
		c_launch_decl(&c, v);
		sb_puts(&c, "\n{\n\tblk_status blk_st = blk_ready();\n\tif (blk_st != BLK_SUCCESS)\n\t\treturn blk_st;\n");
		int np = 0;
		StrBuf args = {0};
		for (int j = 0; j < v->f->n_params; j++) {
			const IrParam *p = &v->f->params[j];
			if (!p->value)
				continue;
			const char *wide;
			char name[256];
			c_param_name(name, sizeof name, p->name);
			c_param_type(p->type, &wide);
			if (p->divisibility > 1)
				sb_printf(&c, "\tif ((uint64_t)%s %% %lluu != 0)\n\t\treturn blk_fail(BLK_ERROR_INVALID_ARGUMENT, "
				              "\"%s_launch: %s must be a multiple of %lld%s (it was compiled so)\");\n",
				          name, (unsigned long long)p->divisibility, v->prefix, p->name, (long long)p->divisibility,
				          p->type.ptr ? " bytes" : "");
			if (p->equals_one)
				sb_printf(&c, "\tif (%s != 1)\n\t\treturn blk_fail(BLK_ERROR_INVALID_ARGUMENT, "
				              "\"%s_launch: %s must be 1 (it was compiled so)\");\n",
				          name, v->prefix, p->name);
			if (wide) {
				sb_printf(&c, "\t%s blk_a%d = (%s)%s;\n", wide, np, wide, name);
				sb_printf(&args, "%s&blk_a%d", np ? ", " : "", np);
			} else {
				sb_printf(&args, "%s&%s", np ? ", " : "", name);
			}
			np++;
		}
		if (np)
			sb_printf(&c, "\tvoid *blk_args[] = {%s};\n", args.data);
		sb_printf(&c, "\treturn blk_launch_variant(&blk_variants[%d], stream, gx, gy, gz, %s);\n}\n", i,
		          np ? "blk_args" : "NULL");
		sb_free(&args);
		const Op *asserts[256];
		int na = ir_assert_ops(v->f, asserts, 256);
		if (na <= 0)
			continue;
		sb_printf(&c, "\nstatic const struct { unsigned line, col; const char *file, *message; } blk_asserts_%d[] = {\n",
		          i);
		for (int a = 0; a < na && a < 256; a++) {
			const Op *op = asserts[a];
			const char *file = op->loc.src ? op->loc.src->name : "?";
			sb_printf(&c, "\t{%u, %u, \"", op->loc.line, op->loc.col);
			c_escape(&c, file, strlen(file));
			sb_puts(&c, "\", \"");
			c_escape(&c, op->str ? op->str : "", op->str ? strlen(op->str) : 0);
			sb_puts(&c, "\"},\n");
		}
		sb_puts(&c, "};\n\n");
		sb_printf(&c,
		          "blk_status %s_check(CUstream stream)\n{\n\tblk_status st = blk_ready();\n\tif (st != BLK_SUCCESS)\n"
		          "\t\treturn st;\n\tblk_variant *v = &blk_variants[%d];\n\tunsigned s[8] = {0};\n"
		          "\tblk_CUresult r = blk_cu.cuStreamSynchronize(stream);\n"
		          "\tif (r == 0 && v->assert_state)\n\t\tr = blk_cu.cuMemcpyDtoH(s, v->assert_state, sizeof s);\n"
		          "\tif (r != 0)\n\t\treturn blk_fail(BLK_ERROR_LAUNCH, \"%s_check: kernel '%%s': %%s (%%d)\", v->kernel, "
		          "blk_cu_name(r), r);\n"
		          "\tif (!s[0])\n\t\treturn BLK_SUCCESS;\n\tunsigned zero[8] = {0};\n"
		          "\tblk_cu.cuMemcpyHtoD(v->assert_state, zero, sizeof zero);\n"
		          "\tif (s[0] > sizeof blk_asserts_%d / sizeof blk_asserts_%d[0])\n"
		          "\t\treturn blk_fail(BLK_ERROR_LAUNCH, \"kernel '%%s': assert %%u failed in program (%%u, %%u, %%u)\", "
		          "v->kernel, s[0],\n\t\t                s[1], s[2], s[3]);\n"
		          "\treturn blk_fail(BLK_ERROR_LAUNCH, \"%%s:%%u:%%u: error: assertion failed: %%s (kernel '%%s', program "
		          "(%%u, %%u, %%u), element %%u)\",\n"
		          "\t                blk_asserts_%d[s[0] - 1].file, blk_asserts_%d[s[0] - 1].line, blk_asserts_%d[s[0] - 1].col,\n"
		          "\t                blk_asserts_%d[s[0] - 1].message, v->kernel, s[1], s[2], s[3], s[4]);\n}\n",
		          v->prefix, i, v->prefix, i, i, i, i, i, i);
	}

	bool ok = !h.failed && !c.failed;
	char path[4200];
	if (ok) {
		snprintf(path, sizeof path, "%s.h", base);
		ok = write_file(path, h.data, h.len);
	}
	if (ok) {
		snprintf(path, sizeof path, "%s.c", base);
		ok = write_file(path, c.data, c.len);
	}
	if (!ok)
		fprintf(stderr, "blkc: error: cannot write '%s': %s\n", path, h.failed || c.failed ? "out of memory" : strerror(errno));
	sb_free(&h);
	sb_free(&c);
	return ok;
}

/* Generates, verifies and optimizes one kernel for each of its configs
 * (only the first when printing; each for --emit=c). Returns false on an error. */
static bool compile_kernel(Compile *cc, Module *m, Node *k)
{
	const Options *opt = cc->opt;
	Diag *diag = cc->diag;
	Arena *arena = cc->arena;
	AutotuneSpec at;
	double t0 = now_ms();
	bool ok = irgen_autotune(m, k, &at, diag, arena);
	cc->t.irgen += now_ms() - t0;
	if (!ok)
		return false;
	int configs = at.n_configs && (opt->emit == EMIT_CHECK || opt->emit == EMIT_C) ? at.n_configs : 1;
	for (int c = 0; c < configs && ok; c++) {
		int cap = opt->n_defines + (at.n_configs ? at.config_len[c] : 0);
		ConstBinding *consts = arena_alloc(arena, (size_t)(cap ? cap : 1) * sizeof *consts);
		if (!consts)
			return false;
		IrgenOptions io = {.consts = consts, .n_consts = const_values(opt, &at, c, consts)};
		t0 = now_ms();
		IrFunc *f = irgen_kernel(m, k, &io, diag, arena);
		cc->t.irgen += now_ms() - t0;
		if (!f) {
			if (at.n_configs > 1)
				diag_note(diag, k->span, "while compiling '%s' with autotune config %d", k->name, c + 1);
			return false;
		}
		if (opt->assume && !apply_assumptions(f, opt->assume, diag))
			return false;
		const char *pipeline = opt->passes && strcmp(opt->passes, "none") == 0 ? "" : opt->passes;
		t0 = now_ms();
		ok = ir_run_passes(f, pipeline, opt->dump_after, cc->text, diag);
		cc->t.passes += now_ms() - t0;
		cc->t.variants++;
		if (ok && opt->emit == EMIT_IR) {
			IrPrintOpts po = {.show_locations = opt->locations};
			ir_print_opts(f, cc->text, &po);
		} else if (ok && opt->emit >= EMIT_LLVM) {
			char *code = NULL;
			size_t len = 0;
			int shared = 0;
			double ms_llvm = 0, ms_ptx = 0;
			ok = blk_gpu_emit_timed(f, opt->arch, opt->emit == EMIT_LLVM, &code, &len, &shared, &ms_llvm, &ms_ptx,
			                        diag);
			cc->t.llvm += ms_llvm;
			cc->t.ptx += ms_ptx;
			unsigned char *cubin = NULL;
			size_t cubin_len = 0;
			if (ok && (opt->emit == EMIT_CUBIN || (opt->emit == EMIT_C && opt->ptxas))) {
				t0 = now_ms();
				ok = run_ptxas(opt->ptxas, opt->arch, k->name, code, len, &cubin, &cubin_len, diag);
				cc->t.cubin += now_ms() - t0;
			}
			if (ok && opt->emit == EMIT_C) {
				if (cc->n_vars == cc->cap_vars) {
					int ncap = cc->cap_vars ? 2 * cc->cap_vars : 8;
					AotVariant *nv = realloc(cc->vars, (size_t)ncap * sizeof *nv);
					if (!nv) {
						free(code);
						free(cubin);
						return false;
					}
					cc->vars = nv;
					cc->cap_vars = ncap;
				}
				cc->vars[cc->n_vars++] = (AotVariant){
					.kernel = k->name, .config = at.n_configs ? c : -1, .consts = consts, .n_consts = io.n_consts,
					.f = f, .ptx = code, .ptx_len = len, .cubin = cubin, .cubin_len = cubin_len, .shared = shared,
					.grid = k->a ? k->a->span.src->text + k->a->span.begin : NULL,
					.grid_len = k->a ? (int)(k->a->span.end - k->a->span.begin) : 0,
				};
				continue;
			}
			if (ok)
				sb_putn(cc->text, opt->emit == EMIT_CUBIN ? (const char *)cubin : code,
				        opt->emit == EMIT_CUBIN ? cubin_len : len);
			free(code);
			free(cubin);
		}
	}
	return ok;
}

/* in_process: the time of all but ptxas (the median of its sums, for
 * several runs), or < 0 to add up the phases shown */
static void print_times(const Options *opt, const char *path, const PhaseTimes *t, double in_process, double wall,
                        int runs)
{
	fprintf(stderr, "blkc: time: %s, %d kernel variant%s%s%s", path, t->variants, t->variants == 1 ? "" : "s",
	        opt->emit >= EMIT_LLVM ? ", " : "", opt->emit >= EMIT_LLVM ? opt->arch : "");
	if (runs > 1)
		fprintf(stderr, ", medians of %d runs", runs);
	fputc('\n', stderr);
	struct { const char *name; double ms; bool shown; } rows[] = {
		{"parse+imports", t->parse, true},
		{"irgen", t->irgen, opt->emit >= EMIT_CHECK && opt->emit != EMIT_TOKENS && opt->emit != EMIT_AST},
		{"passes", t->passes, opt->emit != EMIT_TOKENS && opt->emit != EMIT_AST},
		{opt->emit == EMIT_LLVM ? "llvm lower" : "llvm lower+opt", t->llvm, opt->emit >= EMIT_LLVM},
		{"ptx emission", t->ptx, opt->emit >= EMIT_PTX},
		{"cubin (ptxas)", t->cubin, opt->emit == EMIT_CUBIN || (opt->emit == EMIT_C && opt->ptxas)},
	};
	double sum = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if (!rows[i].shown)
			continue;
		fprintf(stderr, "  %-16s %9.3f ms\n", rows[i].name, rows[i].ms);
		if (i < 5)
			sum += rows[i].ms;
	}
	if (in_process < 0)
		in_process = sum;
	fprintf(stderr, "  %-16s %9.3f ms\n", "in process", in_process);
	fprintf(stderr, "  %-16s %9.3f ms\n", "wall", wall);
}

/* Compiles one file; returns 0, or 1 when it had errors. With quiet, it
 * writes neither output nor diagnostics (a --time=N run before the last);
 * *times gets the phases' times and *wall the whole file's. */
static int compile_file(const Options *opt, const char *path, FILE *out, bool quiet, PhaseTimes *times,
                        double *wall)
{
	double start = now_ms();
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	diag.max_errors = opt->max_errors;
	diag.color = opt->color;

	StrBuf text = {0};
	Compile cc = {.opt = opt, .diag = &diag, .arena = &arena, .text = &text};
	int rc = 0;
	if (opt->emit == EMIT_TOKENS || opt->emit == EMIT_AST) {
		Source src;
		double t0 = now_ms();
		if (!source_read_file(&src, path, &arena, &diag)) {
			rc = 1;
		} else if (opt->emit == EMIT_TOKENS) {
			lexer_dump(&src, &diag, &arena, &text);
		} else {
			Node *file = parse_source(&src, &diag, &arena);
			if (file && diag.errors == 0)
				ast_dump(file, &text);
		}
		cc.t.parse = now_ms() - t0;
	} else {
		ModuleSet set = {.arena = &arena, .diag = &diag, .include_dirs = opt->include_dirs,
		                 .n_include_dirs = opt->n_include_dirs, .stdlib_dir = opt->stdlib_dir};
		double t0 = now_ms();
		Module *m = module_load_file(&set, path);
		cc.t.parse = now_ms() - t0;
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
			if ((opt->emit >= EMIT_IR && opt->emit != EMIT_C) || opt->kernel) {
				Node *k = irgen_find_kernel(m, opt->kernel, &diag);
				if (k)
					compile_kernel(&cc, m, k);
			} else {
				for (int i = 0; i < m->file->list.len && !diag.stopped; i++) {
					Node *k = m->file->list.items[i];
					if (k->kind == N_KERNEL)
						compile_kernel(&cc, m, k);
				}
			}
			if (opt->emit == EMIT_C && diag.errors == 0 && !cc.n_vars)
				diag_plain(&diag, DIAG_ERROR, "'%s' has no kernel to compile", path);
			if (opt->emit == EMIT_C && diag.errors == 0 && !text.failed && !diag.out.failed && !quiet &&
			    !write_aot(&cc, path))
				rc = 1;
		}
	}
	for (int i = 0; i < cc.n_vars; i++) {
		free(cc.vars[i].ptx);
		free(cc.vars[i].cubin);
	}
	free(cc.vars);
	if (text.failed || diag.out.failed) {
		fprintf(stderr, "blkc: error: out of memory compiling '%s'\n", path);
		rc = 1;
	}
	if (text.len && diag.errors == 0 && !quiet)
		fwrite(text.data, 1, text.len, out);
	sb_free(&text);
	if (diag.errors)
		rc = 1;
	if (diag.out.len && !quiet) {
		fwrite(diag.out.data, 1, diag.out.len, stderr);
		if (diag.errors && !diag.stopped)
			fprintf(stderr, "%d error%s generated.\n", diag.errors, diag.errors == 1 ? "" : "s");
	}
	*times = cc.t;
	*wall = now_ms() - start;
	diag_free(&diag);
	arena_free(&arena);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Compiles a file once, or with --time=N N times (quietly but for the
 * last), and prints its phase times: each phase's median over the runs. */
static int compile_file_timed(const Options *opt, const char *path, FILE *out)
{
	/* standard input can be read once: one run */
	int runs = opt->time && opt->time_runs > 1 && strcmp(path, "-") != 0 ? opt->time_runs : 1;
	PhaseTimes *t = calloc((size_t)runs, sizeof *t);
	double *wall = calloc((size_t)runs, sizeof *wall), *v = calloc((size_t)runs, sizeof *v);
	if (!t || !wall || !v) {
		free(t), free(wall), free(v);
		fprintf(stderr, "blkc: error: out of memory for %d timed runs\n", runs);
		return 1;
	}
	int rc = 0, done = 0;
	while (done < runs && !rc) {
		rc = compile_file(opt, path, out, done < runs - 1, &t[done], &wall[done]);
		done++;
	}
	if (rc && done < runs) /* a quiet run failed: show what went wrong */
		compile_file(opt, path, out, false, &t[0], &wall[0]);
	if (opt->time && !rc) {
		static const size_t phase[] = {offsetof(PhaseTimes, parse), offsetof(PhaseTimes, irgen),
		                               offsetof(PhaseTimes, passes), offsetof(PhaseTimes, llvm),
		                               offsetof(PhaseTimes, ptx), offsetof(PhaseTimes, cubin)};
		PhaseTimes med = t[0];
		for (size_t f = 0; f < sizeof phase / sizeof phase[0]; f++) {
			for (int r = 0; r < runs; r++)
				memcpy(&v[r], (const char *)&t[r] + phase[f], sizeof v[r]);
			double m = median_of(v, runs);
			memcpy((char *)&med + phase[f], &m, sizeof m);
		}
		for (int r = 0; r < runs; r++) /* in process: each run's phases but ptxas */
			v[r] = t[r].parse + t[r].irgen + t[r].passes + t[r].llvm + t[r].ptx;
		print_times(opt, path, &med, runs > 1 ? median_of(v, runs) : -1, median_of(wall, runs), runs);
	}
	free(t), free(wall), free(v);
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

/* ---- blkc run, bench and tune ------------------------------------------------------- */

typedef enum Tool { TOOL_RUN, TOOL_BENCH, TOOL_TUNE } Tool;
static const char *tool_name = "blkc run"; /* in messages */

static void bench_usage(FILE *f)
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

static void tune_usage(FILE *f)
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
	      "Exits 0 when at least one configuration ran.\n",
	      f);
}

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
	      "                           within TOL relative (default 1e-6); exit 1 if they differ\n"
	      "\n"
	      "blkc bench and blkc tune take the same arguments to time the kernel.\n",
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
		fprintf(stderr, "%s: error: cannot open '%s': %s\n", tool_name, path, strerror(errno));
		return false;
	}
	size_t got = fread(dst, 1, bytes, f);
	int extra = fgetc(f);
	fclose(f);
	if (got != bytes || extra != EOF) {
		fprintf(stderr, "%s: error: '%s' holds %s bytes than the %zu the buffer needs\n", tool_name, path,
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
		fprintf(stderr, "%s: error: '%s=%s': a buffer is COUNT[:INIT] with COUNT > 0\n", tool_name, b->name, spec);
		return false;
	}
	b->count = count;
	b->bytes = (size_t)count * (size_t)elem_size(b->kind);
	b->host = calloc(1, b->bytes);
	if (!b->host) {
		fprintf(stderr, "%s: error: out of memory for '%s'\n", tool_name, b->name);
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
			fprintf(stderr, "%s: error: '%s': fill= needs a number\n", tool_name, b->name);
			return false;
		}
	} else if (strcmp(init, "zeros") && strcmp(init, "ones") && strcmp(init, "arange") && strcmp(init, "random") &&
	           strcmp(init, "randn")) {
		fprintf(stderr, "%s: error: '%s': unknown INIT '%s' (zeros, ones, arange, random, randn, fill=V, "
		                "file=PATH)\n", tool_name, b->name, init);
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
	fprintf(stderr, "%s: error: no buffer named '%.*s'\n", tool_name, (int)len, name);
	return NULL;
}

/* ---- blkc bench and tune: configurations, tables, plots ---- */

enum { TUNE_MAX_CONSTS = 32, TUNE_MAX_CONFIGS = 4096 };

typedef struct TuneConfig {
	blk_const c[TUNE_MAX_CONSTS];
	int n;
	double ms;        /* negative: it could not run */
	char note[240];   /* why not */
} TuneConfig;

typedef struct TuneRun {
	const char *kernel;
	const char *backend;
	int reps;
	double bytes;     /* moved by one launch; 0: unknown */
	TuneConfig *cfg;
	int n;
	int best;         /* -1: none ran */
	const char **names; /* the const names of every config, in order of appearance */
	int n_names;
} TuneRun;

static void free_config(TuneConfig *c)
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
			c->c[i] = (blk_const){c->c[i].name, b->is_float, b->i, b->f};
			return true;
		}
	if (c->n == TUNE_MAX_CONSTS)
		return false;
	char *name = strdup(b->name);
	if (!name)
		return false;
	c->c[c->n++] = (blk_const){name, b->is_float, b->i, b->f};
	return true;
}

static bool config_copy(TuneConfig *dst, const TuneConfig *src)
{
	*dst = (TuneConfig){.ms = -1};
	for (int i = 0; i < src->n; i++) {
		ConstBinding b = {src->c[i].name, src->c[i].is_float != 0, src->c[i].i, src->c[i].f};
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

static void config_label(const TuneConfig *c, char *buf, size_t size, const char *sep)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < c->n && n + 1 < size; i++) {
		int w = c->c[i].is_float ? snprintf(buf + n, size - n, "%s%s=%g", i ? sep : "", c->c[i].name, c->c[i].f)
		                         : snprintf(buf + n, size - n, "%s%s=%lld", i ? sep : "", c->c[i].name,
		                                    (long long)c->c[i].i);
		n += w > 0 ? (size_t)w : 0;
	}
	if (n >= size)
		buf[size - 1] = '\0';
	if (!c->n)
		snprintf(buf, size, "(defaults)");
}

static const blk_const *config_get(const TuneConfig *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->c[i].name, name) == 0)
			return &c->c[i];
	return NULL;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 32)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_number(FILE *f, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(f, fmt, v);
	else
		fputs("null", f);
}

static double gbps(const TuneRun *r, double ms) { return r->bytes > 0 && ms > 0 ? r->bytes / (ms * 1e6) : -1; }

static void print_bytes(FILE *f, double bytes)
{
	if (bytes >= 1e9)
		fprintf(f, "%.2f GB", bytes / 1e9);
	else if (bytes >= 1e6)
		fprintf(f, "%.2f MB", bytes / 1e6);
	else if (bytes >= 1e3)
		fprintf(f, "%.2f kB", bytes / 1e3);
	else
		fprintf(f, "%.0f B", bytes);
}

typedef enum Format { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON } Format;

static void print_bench(FILE *f, const TuneRun *r, Format fmt)
{
	double ms = r->cfg[0].ms, g = gbps(r, ms);
	switch (fmt) {
	case FORMAT_TABLE:
		fprintf(f, "%s: %.4f ms (median of %d on %s)", r->kernel, ms, r->reps, r->backend);
		if (r->bytes > 0) {
			fputs(", ", f);
			print_bytes(f, r->bytes);
			fprintf(f, " moved: %.2f GB/s", g);
		}
		fputc('\n', f);
		break;
	case FORMAT_CSV:
		fprintf(f, "kernel,backend,reps,ms,bytes,gbps\n%s,%s,%d,%.6g,%.0f,", r->kernel, r->backend, r->reps, ms,
		        r->bytes);
		if (g >= 0)
			fprintf(f, "%.6g", g);
		fputc('\n', f);
		break;
	case FORMAT_JSON:
		fputs("{\"kernel\": ", f);
		json_string(f, r->kernel);
		fputs(", \"backend\": ", f);
		json_string(f, r->backend);
		fprintf(f, ", \"reps\": %d, \"ms\": ", r->reps);
		json_number(f, ms, "%.6g");
		fprintf(f, ", \"bytes\": %.0f, \"gbps\": ", r->bytes);
		if (g >= 0)
			json_number(f, g, "%.6g");
		else
			fputs("null", f);
		fputs("}\n", f);
		break;
	}
}

static void print_tune(FILE *f, const TuneRun *r, Format fmt)
{
	char label[1024];
	if (fmt == FORMAT_TABLE) {
		fprintf(f, "%s on %s: %d config%s, median of %d run%s each", r->kernel, r->backend, r->n, r->n == 1 ? "" : "s",
		        r->reps, r->reps == 1 ? "" : "s");
		if (r->bytes > 0) {
			fputs(", ", f);
			print_bytes(f, r->bytes);
			fputs(" moved", f);
		}
		fputc('\n', f);
		int w[TUNE_MAX_CONSTS];
		fprintf(f, "%4s", "#");
		for (int j = 0; j < r->n_names; j++) {
			w[j] = (int)strlen(r->names[j]) > 6 ? (int)strlen(r->names[j]) : 6;
			fprintf(f, "  %*s", w[j], r->names[j]);
		}
		fprintf(f, "  %12s", "ms");
		if (r->bytes > 0)
			fprintf(f, "  %10s", "GB/s");
		fputc('\n', f);
		for (int i = 0; i < r->n; i++) {
			const TuneConfig *c = &r->cfg[i];
			fprintf(f, "%4d", i + 1);
			for (int j = 0; j < r->n_names; j++) {
				const blk_const *v = config_get(c, r->names[j]);
				if (!v)
					fprintf(f, "  %*s", w[j], "-");
				else if (v->is_float)
					fprintf(f, "  %*g", w[j], v->f);
				else
					fprintf(f, "  %*lld", w[j], (long long)v->i);
			}
			if (c->ms >= 0)
				fprintf(f, "  %12.4f", c->ms);
			else
				fprintf(f, "  %12s", "-");
			if (r->bytes > 0) {
				if (c->ms > 0)
					fprintf(f, "  %10.2f", gbps(r, c->ms));
				else
					fprintf(f, "  %10s", "-");
			}
			if (i == r->best)
				fputs("  *", f);
			else if (c->ms < 0)
				fprintf(f, "  failed: %s", c->note);
			fputc('\n', f);
		}
		if (r->best >= 0) {
			config_label(&r->cfg[r->best], label, sizeof label, " ");
			fprintf(f, "* fastest: %s, %.4f ms\n", label, r->cfg[r->best].ms);
		} else {
			fputs("no config ran\n", f);
		}
	} else if (fmt == FORMAT_CSV) {
		fputs("config", f);
		for (int j = 0; j < r->n_names; j++)
			fprintf(f, ",%s", r->names[j]);
		fputs(",ms,gbps,best,error\n", f);
		for (int i = 0; i < r->n; i++) {
			const TuneConfig *c = &r->cfg[i];
			fprintf(f, "%d", i + 1);
			for (int j = 0; j < r->n_names; j++) {
				const blk_const *v = config_get(c, r->names[j]);
				if (!v)
					fputc(',', f);
				else if (v->is_float)
					fprintf(f, ",%.17g", v->f);
				else
					fprintf(f, ",%lld", (long long)v->i);
			}
			fputc(',', f);
			if (c->ms >= 0)
				fprintf(f, "%.6g", c->ms);
			fputc(',', f);
			if (c->ms > 0 && r->bytes > 0)
				fprintf(f, "%.6g", gbps(r, c->ms));
			fprintf(f, ",%d,", i == r->best);
			if (c->ms < 0) { /* a quoted field: quotes doubled */
				fputc('"', f);
				for (const char *p = c->note; *p; p++) {
					if (*p == '"')
						fputc('"', f);
					fputc(*p, f);
				}
				fputc('"', f);
			}
			fputc('\n', f);
		}
	} else {
		fputs("{\n  \"kernel\": ", f);
		json_string(f, r->kernel);
		fputs(",\n  \"backend\": ", f);
		json_string(f, r->backend);
		fprintf(f, ",\n  \"reps\": %d,\n  \"bytes\": %.0f,\n  \"best\": ", r->reps, r->bytes);
		if (r->best >= 0)
			fprintf(f, "%d", r->best);
		else
			fputs("null", f);
		fputs(",\n  \"configs\": [", f);
		for (int i = 0; i < r->n; i++) {
			const TuneConfig *c = &r->cfg[i];
			fprintf(f, "%s\n    {\"consts\": {", i ? "," : "");
			for (int j = 0; j < c->n; j++) {
				fputs(j ? ", " : "", f);
				json_string(f, c->c[j].name);
				fputs(": ", f);
				if (c->c[j].is_float)
					json_number(f, c->c[j].f, "%.17g");
				else
					fprintf(f, "%lld", (long long)c->c[j].i);
			}
			fputs("}, \"ms\": ", f);
			if (c->ms >= 0)
				json_number(f, c->ms, "%.6g");
			else
				fputs("null", f);
			fputs(", \"gbps\": ", f);
			if (c->ms > 0 && r->bytes > 0)
				json_number(f, gbps(r, c->ms), "%.6g");
			else
				fputs("null", f);
			fprintf(f, ", \"best\": %s", i == r->best ? "true" : "false");
			if (c->ms < 0) {
				fputs(", \"error\": ", f);
				json_string(f, c->note);
			}
			fputc('}', f);
		}
		fputs("\n  ]\n}\n", f);
	}
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 32 || *s == '\t')
				fputc(*s, f);
		}
}

/* A bar chart of the times: a bar a config, the fastest in another colour,
 * the failed ones marked; axes with ticks and titles. */
static bool write_svg(const char *path, const TuneRun *r)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	/* room for the x labels, slanted at 40 degrees, about 6 px a character */
	size_t longest = 0;
	for (int i = 0; i < r->n; i++) {
		char label[1024];
		config_label(&r->cfg[i], label, sizeof label, " ");
		if (strlen(label) > longest)
			longest = strlen(label);
	}
	double slant = 6.0 * (double)longest;
	double bw = r->n > 24 ? 24 : 56;
	double pw = bw * r->n > 360 ? bw * r->n : 360;
	bw = pw / (r->n ? r->n : 1);
	double left = 0.77 * slant - bw / 2 + 12, right = 24, top = 48, ph = 260, bottom = 0.64 * slant + 50;
	if (left < 78)
		left = 78;
	double width = left + pw + right, height = top + ph + bottom;
	double max = 0;
	for (int i = 0; i < r->n; i++)
		if (r->cfg[i].ms > max)
			max = r->cfg[i].ms;
	/* ticks at 1, 2 or 5 times a power of ten, about five of them */
	double step = 1;
	if (max > 0) {
		double raw = max / 5, mag = pow(10, floor(log10(raw))), frac = raw / mag;
		step = (frac <= 1 ? 1 : frac <= 2 ? 2 : frac <= 5 ? 5 : 10) * mag;
	}
	int ticks = max > 0 ? (int)ceil(max / step - 1e-9) : 1;
	if (ticks < 1)
		ticks = 1;
	double ymax = ticks * step;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	           "font-family=\"sans-serif\" font-size=\"11\">\n", width, height, width, height);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width, height);
	fprintf(f, "<text x=\"%.1f\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">blkc tune: ", width / 2);
	xml_text(f, r->kernel);
	fprintf(f, " on %s, median of %d run%s</text>\n", r->backend, r->reps, r->reps == 1 ? "" : "s");
	/* y axis: ticks, grid lines, title */
	for (int t = 0; t <= ticks; t++) {
		double y = top + ph - ph * t / ticks;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", left, y, left + pw, y);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", left - 6, y + 4, t * step);
	}
	fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\">median time (ms)</text>\n",
	        left - 58, top + ph / 2);
	/* bars */
	for (int i = 0; i < r->n; i++) {
		const TuneConfig *c = &r->cfg[i];
		double x = left + bw * i, cx = x + bw / 2;
		char label[1024];
		config_label(c, label, sizeof label, " ");
		if (c->ms >= 0) {
			double h = ymax > 0 ? ph * c->ms / ymax : 0;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>", x + bw * 0.15,
			        top + ph - h, bw * 0.7, h, i == r->best ? "#e07a1f" : "#4a78b5");
			xml_text(f, label);
			fprintf(f, ": %.4g ms</title></rect>\n", c->ms);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\">%.3g%s</text>\n", cx,
			        top + ph - h - 4, c->ms, i == r->best ? " *" : "");
		} else {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#c0392b\"><title>", cx, top + ph - 6);
			xml_text(f, c->note);
			fputs("</title>failed</text>\n", f);
		}
		fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-40)\" text-anchor=\"end\" font-size=\"10\">", cx + 3,
		        top + ph + 14);
		xml_text(f, label);
		fputs("</text>\n", f);
	}
	/* axes over the bars, x title, legend */
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top, left, top + ph);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top + ph, left + pw,
	        top + ph);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">configuration</text>\n", left + pw / 2, height - 12);
	fprintf(f, "<rect x=\"%.1f\" y=\"30\" width=\"10\" height=\"10\" fill=\"#e07a1f\"/>"
	           "<text x=\"%.1f\" y=\"39\">fastest</text>\n</svg>\n", left + pw - 60, left + pw - 46);
	return fclose(f) == 0;
}

/* The kernel's name and @autotune configs, read with the front end. */
static bool kernel_autotune(const char *path, const char *kernel, const char **inc, int n_inc, char **name,
                            TuneConfig **cfg, int *n_cfg)
{
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	char stdlib_buf[4200];
	ModuleSet set = {.arena = &arena, .diag = &diag, .include_dirs = inc, .n_include_dirs = n_inc,
	                 .stdlib_dir = find_stdlib(stdlib_buf, sizeof stdlib_buf)};
	Module *m = module_load_file(&set, path);
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

/* blkc bench and tune after the arguments are made: times each config
 * (bench: the launch as given) and prints the results. */
static int tool_time(Tool tool, blk_context *ctx, blk_kernel *k, const blk_arg *args, int n_args,
                     blk_launch_options *lo, TuneRun *tr, const char *path, const char *kernel, const char **inc,
                     int n_inc, const char **config_args, int n_config_args, const char **sweep_args, int n_sweeps,
                     int reps, double bytes, const RunBuffer *bufs, int n_bufs, Format format, const char *svg,
                     char **kernel_name)
{
	TuneConfig *at = NULL, *base = NULL, empty = {.ms = -1};
	int n_at = 0, n_base = 0, status = 1;
	ConstBinding *sweep_vals[64] = {0};
	int sweep_n[64] = {0};
	if (!kernel_autotune(path, kernel, inc, n_inc, kernel_name, &at, &n_at)) {
		fprintf(stderr, "%s: error: cannot read the @autotune configs of '%s'\n", tool_name, path);
		goto out;
	}
	tr->kernel = *kernel_name;
	tr->backend = blk_context_backend(ctx) == BLK_BACKEND_GPU ? "gpu" : "interpreter";
	tr->reps = reps;
	if (bytes < 0) {
		bytes = 0;
		for (int i = 0; i < n_bufs; i++)
			bytes += (double)bufs[i].bytes;
	}
	tr->bytes = bytes;

	/* the configurations */
	if (tool == TOOL_BENCH) {
		base = &empty;
		n_base = 1;
	} else if (n_config_args) {
		base = calloc((size_t)n_config_args, sizeof *base);
		for (int i = 0; base && i < n_config_args; i++, n_base++)
			if (!parse_config(config_args[i], &base[i])) {
				bad_usage("--config expects NAME=VALUE[,NAME=VALUE...] with numbers or true/false, got '%s'",
				          config_args[i]);
				status = 2;
				goto out;
			}
		if (!base)
			goto oom;
	} else if (n_sweeps) {
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
	if (n_sweeps > 64) {
		bad_usage("%s", "at most 64 --sweep options");
		status = 2;
		goto out;
	}
	long long total = n_base;
	for (int s = 0; s < n_sweeps; s++) {
		sweep_n[s] = parse_sweep(sweep_args[s], &sweep_vals[s]);
		if (sweep_n[s] < 0) {
			bad_usage("--sweep expects NAME=V1[,V2...] with numbers or true/false, got '%s'", sweep_args[s]);
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
		for (int s = 0; s < n_sweeps; s++) {
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

	/* the runs */
	bool show = tool == TOOL_TUNE;
	for (int i = 0; i < tr->n; i++) {
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
		blk_status st = blk_time_launch(k, args, n_args, lo, reps, &ms);
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
	if (tool == TOOL_BENCH) {
		if (tr->best < 0)
			goto out;
		print_bench(stdout, tr, format);
	} else {
		print_tune(stdout, tr, format);
		if (svg && !write_svg(svg, tr)) {
			fprintf(stderr, "%s: error: cannot write '%s': %s\n", tool_name, svg, strerror(errno));
			goto out;
		}
	}
	status = tr->best >= 0 ? 0 : 1;
	goto out;
oom:
	fprintf(stderr, "%s: error: out of memory\n", tool_name);
out:
	if (base && base != &empty && base != at) {
		for (int i = 0; i < n_base; i++)
			free_config(&base[i]);
		free(base);
	}
	for (int i = 0; i < n_at; i++)
		free_config(&at[i]);
	free(at);
	for (int s = 0; s < n_sweeps && s < 64; s++) {
		for (int v = 0; v < sweep_n[s]; v++)
			free((char *)sweep_vals[s][v].name);
		free(sweep_vals[s]);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "%s: error: cannot write standard output: %s\n", tool_name, strerror(errno));
		status = 1;
	}
	return status;
}

static int tool_main(Tool tool, int argc, char **argv)
{
	enum { R_GRID = 256, R_THREADS, R_SEED, R_PRINT, R_CHECKSUM, R_SAVE, R_COMPARE, R_REPS, R_BYTES, R_FORMAT,
	       R_CONFIG, R_SWEEP, R_SVG };
	static const struct option longopts[] = {
		{"kernel", required_argument, NULL, 'k'},   {"define", required_argument, NULL, 'D'},
		{"include", required_argument, NULL, 'I'},  {"grid", required_argument, NULL, R_GRID},
		{"threads", required_argument, NULL, R_THREADS}, {"seed", required_argument, NULL, R_SEED},
		{"print", required_argument, NULL, R_PRINT}, {"checksum", no_argument, NULL, R_CHECKSUM},
		{"save", required_argument, NULL, R_SAVE},  {"compare", required_argument, NULL, R_COMPARE},
		{"reps", required_argument, NULL, R_REPS},  {"bytes", required_argument, NULL, R_BYTES},
		{"format", required_argument, NULL, R_FORMAT}, {"config", required_argument, NULL, R_CONFIG},
		{"sweep", required_argument, NULL, R_SWEEP}, {"svg", required_argument, NULL, R_SVG},
		{"help", no_argument, NULL, 'h'},           {0, 0, 0, 0},
	};
	static const char *const tool_names[] = {"blkc run", "blkc bench", "blkc tune"};
	tool_name = tool_names[tool];
	int reps = 100, n_config_args = 0, n_sweeps = 0;
	double bytes = -1;
	Format format = FORMAT_TABLE;
	const char *svg = NULL, *tool_only = NULL;
	const char **config_args = calloc((size_t)argc, sizeof *config_args);
	const char **sweep_args = calloc((size_t)argc, sizeof *sweep_args);
	TuneRun tr = {.best = -1};
	char *kernel_name = NULL;
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
	if (!defines || !includes || !prints || !saves || !compares || !bufs || !config_args || !sweep_args) {
		fprintf(stderr, "%s: error: out of memory\n", tool_name);
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
		case R_REPS:
			errno = 0;
			reps = (int)strtol(optarg, &end, 10);
			if (errno || *end || reps < 1 || reps > 100000) {
				bad_usage("--reps expects a count from 1 to 100000, got '%s'", optarg);
				goto out;
			}
			break;
		case R_BYTES:
			bytes = strtod(optarg, &end);
			bytes *= *end == 'k' ? 1e3 : *end == 'M' ? 1e6 : *end == 'G' ? 1e9 : *end == 'T' ? 1e12 : 1;
			if (end == optarg || (*end && end[1]) || (*end && !strchr("kMGT", *end)) || !(bytes >= 0) ||
			    isinf(bytes)) {
				bad_usage("--bytes expects a number of bytes (suffixes k, M, G, T), got '%s'", optarg);
				goto out;
			}
			break;
		case R_FORMAT:
			if (strcmp(optarg, "table") == 0)
				format = FORMAT_TABLE;
			else if (strcmp(optarg, "csv") == 0)
				format = FORMAT_CSV;
			else if (strcmp(optarg, "json") == 0)
				format = FORMAT_JSON;
			else {
				bad_usage("--format expects table, csv or json, got '%s'", optarg);
				goto out;
			}
			break;
		case R_CONFIG: config_args[n_config_args++] = optarg; break;
		case R_SWEEP: sweep_args[n_sweeps++] = optarg; break;
		case R_SVG: svg = optarg; break;
		case 'h':
			(tool == TOOL_RUN ? run_usage : tool == TOOL_BENCH ? bench_usage : tune_usage)(stdout);
			status = 0;
			goto out;
		case ':': bad_usage("option '%s' needs an argument", argv[optind - 1]); goto out;
		default: bad_usage("unknown option '%s'", argv[optind - 1]); goto out;
		}
	}
	/* options of another command */
	const char *for_tools = NULL;
	if (tool != TOOL_RUN && (n_print || checksum || n_save || n_cmp)) {
		tool_only = n_print ? "--print" : checksum ? "--checksum" : n_save ? "--save" : "--compare";
		for_tools = "blkc run";
	} else if (tool == TOOL_RUN && (reps != 100 || bytes >= 0 || format != FORMAT_TABLE)) {
		tool_only = reps != 100 ? "--reps" : bytes >= 0 ? "--bytes" : "--format";
		for_tools = "blkc bench and blkc tune";
	} else if (tool != TOOL_TUNE && (n_config_args || n_sweeps || svg)) {
		tool_only = n_config_args ? "--config" : n_sweeps ? "--sweep" : "--svg";
		for_tools = "blkc tune";
	}
	if (tool_only) {
		fprintf(stderr, "%s: error: %s is an option of %s\nTry '%s --help' for more information.\n", tool_name,
		        tool_only, for_tools, tool_name);
		goto out;
	}
	if (optind >= argc) {
		fprintf(stderr, "blkc: error: %s needs a .tile file\nTry '%s --help' for more information.\n", tool_name,
		        tool_name);
		goto out;
	}
	const char *path = argv[optind++];
	status = 1;
	if (blk_context_create(BLK_BACKEND_AUTO, 0, &ctx) != BLK_SUCCESS) {
		fprintf(stderr, "%s: error: %s\n", tool_name, blk_last_error());
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
			fprintf(stderr, "%s: error: give the argument '%s' (%s) as %s=%s\n", tool_name, p.name, p.type, p.name,
			        p.kind == BLK_PARAM_POINTER ? "COUNT[:INIT]" : "VALUE");
			goto out;
		}
		if (p.kind != BLK_PARAM_POINTER) {
			char *end;
			if (p.kind == BLK_PARAM_INT) {
				errno = 0;
				long long v = strtoll(spec, &end, 0);
				if (*end || errno) {
					fprintf(stderr, "%s: error: '%s' (%s) needs an integer, got '%s'\n", tool_name, p.name, p.type, spec);
					goto out;
				}
				args[n_args++] = blk_arg_int(v);
			} else {
				double v = strtod(spec, &end);
				if (*end) {
					fprintf(stderr, "%s: error: '%s' (%s) needs a number, got '%s'\n", tool_name, p.name, p.type, spec);
					goto out;
				}
				args[n_args++] = blk_arg_float(v);
			}
			continue;
		}
		if (strncmp(p.type, "**", 2) == 0) {
			fprintf(stderr, "%s: error: '%s' is %s: pointers to pointers can only be given through the C API\n", tool_name,
			        p.name, p.type);
			goto out;
		}
		RunBuffer *b = &bufs[n_bufs++];
		b->name = p.name;
		if (!scalar_from_name(p.type + 1, &b->kind) || !make_buffer(b, spec))
			goto out;
		if (blk_malloc(ctx, b->bytes, &b->dev) != BLK_SUCCESS ||
		    blk_copy_to_device(ctx, b->dev, b->host, b->bytes) != BLK_SUCCESS) {
			fprintf(stderr, "%s: error: %s\n", tool_name, blk_last_error());
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
			fprintf(stderr, "%s: error: '%s' names no runtime parameter of the kernel\n", tool_name, argv[a]);
			goto out;
		}
	}
	blk_launch_options lo = {.grid = {grid[0], grid[1], grid[2]}, .threads = threads};
	if (tool != TOOL_RUN) {
		status = tool_time(tool, ctx, k, args, n_args, &lo, &tr, path, kernel, includes, n_inc, config_args,
		                   n_config_args, sweep_args, n_sweeps, reps, bytes, bufs, n_bufs, format, svg, &kernel_name);
		goto out;
	}
	blk_status st = blk_launch(k, args, n_args, &lo);
	fputs(blk_context_printed(ctx), stdout);
	if (st != BLK_SUCCESS) {
		const char *e = blk_last_error();
		fputs(e, stderr);
		if (!*e || e[strlen(e) - 1] != '\n')
			fputc('\n', stderr);
		goto out;
	}
	for (int i = 0; i < n_bufs; i++)
		if (blk_copy_from_device(ctx, bufs[i].host, bufs[i].dev, bufs[i].bytes) != BLK_SUCCESS) {
			/* a kernel that faulted shows here: its buffers were never written */
			const char *e = blk_last_error();
			fprintf(stderr, "blkc: error: reading back '%s': %s%s", bufs[i].name, e,
			        *e && e[strlen(e) - 1] == '\n' ? "" : "\n");
			goto out;
		}
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
			fprintf(stderr, "%s: error: cannot save '%s'\n", tool_name, saves[i]);
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
			fprintf(stderr, "%s: error: cannot compare '%s'\n", tool_name, compares[i]);
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
	free(config_args);
	free(sweep_args);
	for (int i = 0; i < tr.n; i++)
		free_config(&tr.cfg[i]);
	free(tr.cfg);
	free(tr.names);
	free(kernel_name);
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

	enum { OPT_EMIT = 256, OPT_COLOR, OPT_MAX_ERRORS, OPT_PASSES, OPT_DUMP_AFTER, OPT_LOCATIONS, OPT_ARCH, OPT_ASSUME,
	       OPT_TIME };
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
		{"time", optional_argument, NULL, OPT_TIME},
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
			else if (strcmp(optarg, "cubin") == 0)
				opt.emit = EMIT_CUBIN;
			else if (strcmp(optarg, "c") == 0)
				opt.emit = EMIT_C;
			else
				status = bad_usage("unknown --emit kind '%s' (expected check, tokens, ast, ir, llvm, ptx, cubin or c)",
				                   optarg);
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
		case OPT_TIME: {
			opt.time = true;
			opt.time_runs = 1;
			if (optarg) {
				char *end;
				errno = 0;
				long n = strtol(optarg, &end, 10);
				if (end == optarg || *end || errno || n < 1 || n > 10000) {
					status = bad_usage("--time=%s: expected a number of runs from 1 to 10000", optarg);
					break;
				}
				opt.time_runs = (int)n;
			}
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

	char stdlib_buf[4200];
	opt.stdlib_dir = find_stdlib(stdlib_buf, sizeof stdlib_buf);

	if (opt.emit == EMIT_C && (!opt.output || !opt.output[0] || strcmp(opt.output, "-") == 0)) {
		status = bad_usage("%s", "--emit=c writes NAME.c and NAME.h: give -o NAME");
		goto out;
	}
	if (opt.emit == EMIT_C && argc - optind != 1) {
		status = bad_usage("%s", "--emit=c takes one .tile file");
		goto out;
	}
	if (opt.emit == EMIT_CUBIN && (!opt.output || strcmp(opt.output, "-") == 0) && isatty(STDOUT_FILENO)) {
		status = bad_usage("%s", "--emit=cubin writes a binary: give -o FILE (or redirect standard output)");
		goto out;
	}
	char ptxas_buf[4200];
	if (opt.emit == EMIT_CUBIN || opt.emit == EMIT_C) {
		opt.ptxas = find_ptxas(ptxas_buf, sizeof ptxas_buf);
		const char *home = getenv("CUDA_HOME");
		if (!opt.ptxas && opt.emit == EMIT_CUBIN) {
			fprintf(stderr, "blkc: error: --emit=cubin needs ptxas, the CUDA toolkit's PTX assembler, and there is "
			                "none on PATH or in %s/bin\n(install the CUDA toolkit or set CUDA_HOME to it; "
			                "--emit=ptx needs no toolkit: the driver compiles PTX when it loads it)\n",
			        home && home[0] ? home : "/usr/local/cuda");
			status = 1;
			goto out;
		}
		if (!opt.ptxas)
			fprintf(stderr, "blkc: note: no ptxas on PATH or in %s/bin: the C embeds PTX only (the driver "
			                "compiles it when it loads it)\n", home && home[0] ? home : "/usr/local/cuda");
	}

	FILE *out = stdout;
	if (opt.output && strcmp(opt.output, "-") != 0 && opt.emit != EMIT_C) {
		out = fopen(opt.output, "wb");
		if (!out) {
			fprintf(stderr, "blkc: error: cannot open '%s' for writing: %s\n", opt.output, strerror(errno));
			status = 1;
			goto out;
		}
	}
	for (int i = optind; i < argc; i++)
		if (compile_file_timed(&opt, argv[i], out))
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
