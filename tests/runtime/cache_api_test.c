/* The disk cache of compiled GPU variants through blk.h, against the
 * stand-in driver (fake/libcuda.so.1, whose JIT keeps the PTX it is given
 * as the module): a miss (PTX made, loaded by the JIT) then a hit (the
 * entry's PTX loaded by the JIT, none made) in the same process and in
 * another one; what
 * changes the key (a byte of the source or of an import, the module's
 * name, a const value, num_warps, the specialization, the device, the
 * driver) and what does not (an unrelated environment variable); damaged
 * entries (cut, a flipped byte, garbage, whole but of format 2, whole but
 * PTX the driver refuses) compiled again and rewritten; BLK_ALWAYS_COMPILE, BLK_CACHE=0, a folder
 * that cannot be made; 8 processes filling one folder at once leave only
 * whole entries. Entries are checked here against the format as
 * runtime/cache.c writes it (entry_format.h).
 *
 * The program runs itself again (argv[1] "child") for the other processes. */
#include "blk.h"
#include "fake_cuda.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "entry_format.h"

static int passed, failed;
static FakeCuda fc;
static char self[4096], tmpdir[512];

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static const char *source =
	"import \"helper.tile\";\n"
	"kernel vector_add(x: *f32, y: *f32, out: *f32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let mask = offs < n;\n"
	"    store(out + offs, load(x + offs, mask = mask) + twice(load(y + offs, mask = mask)), mask = mask);\n"
	"}\n"
	"kernel row_sum(x: *f32, out: *f32, N: const i32 = 1024) grid(1) {\n"
	"    store(out, sum(load(x + arange(0, N)), axis = 0));\n"
	"}\n"
	"kernel scale(x: *f32, a: f32, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, a * load(x + offs, mask = offs < n), mask = offs < n);\n"
	"}\n";

static char include_dir[600];

typedef struct Compiled {
	blk_status st;
	int from_disk, shared_bytes, num_warps;
	int made_ptx, jits; /* the compiler made PTX (ms_ptx > 0); the stand-in's JIT compiled PTX meanwhile */
	long jit_len;       /* the length of the PTX the JIT compiled last (up to its NUL) */
	double ms_parse, ms_irgen, ms_passes, ms_llvm, ms_ptx, ms_cubin;
	char ptx_head[256];
	size_t ptx_len;
} Compiled;

/* Loads the module (name, text) afresh on ctx and compiles `kernel` with
 * these consts and options: what blk_compile_info said, and the stand-in's
 * JIT compiles meanwhile. */
static Compiled compile(blk_context *ctx, const char *name, const char *text, const char *kernel, const char *cname,
                        long cval, int warps)
{
	Compiled c = {0};
	const char *dirs[1] = {include_dir};
	blk_module_options mo = {.include_dirs = dirs, .n_include_dirs = 1};
	blk_module *m = NULL;
	blk_kernel *k = NULL;
	int jits = fc.jits();
	c.st = blk_module_load_source(ctx, name, text, strlen(text), &mo, &m);
	if (c.st == BLK_SUCCESS)
		c.st = blk_kernel_get(m, kernel, &k);
	if (c.st == BLK_SUCCESS) {
		blk_const cst = {.name = cname, .i = cval};
		blk_launch_options o = {.consts = &cst, .n_consts = cname ? 1 : 0, .num_warps = warps};
		blk_compile_info info;
		c.st = blk_kernel_compile(k, NULL, 0, &o, &info);
		if (c.st == BLK_SUCCESS) {
			c.from_disk = info.from_disk_cache;
			c.shared_bytes = info.shared_bytes;
			c.num_warps = info.num_warps;
			c.ms_parse = info.ms_parse;
			c.ms_irgen = info.ms_irgen;
			c.ms_passes = info.ms_passes;
			c.ms_llvm = info.ms_llvm;
			c.ms_ptx = info.ms_ptx;
			c.made_ptx = info.ms_ptx > 0;
			c.ms_cubin = info.ms_cubin;
			c.ptx_len = info.ptx_len;
			snprintf(c.ptx_head, sizeof c.ptx_head, "%s", info.ptx ? info.ptx : "");
		}
	}
	blk_module_destroy(m);
	c.jits = fc.jits() - jits;
	c.jit_len = fc.get("last_ptx_len", 0);
	return c;
}

static int list_entries(const char *dir, char names[][64], int max);

/* A miss: PTX made, the driver's JIT loading it once. A hit: the entry's
 * PTX, none made, the JIT loading it once (every load goes through it).
 * Either way the JIT reads the whole PTX (NUL-terminated, no NUL before). */
static int missed(Compiled c)
{
	return c.st == BLK_SUCCESS && !c.from_disk && c.made_ptx && c.jits == 1 && c.jit_len == (long)c.ptx_len;
}
static int hit(Compiled c)
{
	return c.st == BLK_SUCCESS && c.from_disk && !c.made_ptx && c.jits == 1 && c.jit_len == (long)c.ptx_len;
}

/* A kernel generic over T (a const type parameter), compiled for `type`
 * in a fresh module: its own variant and entry per type. */
static const char *generic_source =
	"kernel copy(x: *T, out: *T, n: i32, T: const type, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(out + offs, load(x + offs, mask = offs < n) * 2, mask = offs < n);\n"
	"}\n";

static Compiled compile_type(blk_context *ctx, const char *type)
{
	Compiled c = {0};
	blk_module *m = NULL;
	blk_kernel *k = NULL;
	int jits = fc.jits();
	c.st = blk_module_load_source(ctx, "generic.tile", generic_source, strlen(generic_source), NULL, &m);
	if (c.st == BLK_SUCCESS)
		c.st = blk_kernel_get(m, "copy", &k);
	if (c.st == BLK_SUCCESS) {
		blk_const t = {.name = "T", .type = type};
		blk_launch_options o = {.consts = &t, .n_consts = 1};
		blk_compile_info info;
		c.st = blk_kernel_compile(k, NULL, 0, &o, &info);
		if (c.st == BLK_SUCCESS) {
			c.from_disk = info.from_disk_cache;
			c.made_ptx = info.ms_ptx > 0;
			c.ptx_len = info.ptx_len;
			/* the first global load's line: its width tells the type */
			const char *ld = info.ptx ? strstr(info.ptx, "ld.global") : NULL;
			const char *eol = ld ? strchr(ld, '\n') : NULL;
			snprintf(c.ptx_head, sizeof c.ptx_head, "%.*s", ld ? (int)(eol ? eol - ld : 60) : 0, ld ? ld : "");
		}
	}
	blk_module_destroy(m);
	c.jits = fc.jits() - jits;
	c.jit_len = fc.get("last_ptx_len", 0);
	return c;
}

/* Const type parameters through the API: each type its own variant and
 * cache entry, found again by type; the parameters as blk_param_info says. */
static void test_const_types(blk_context *ctx, const char *dir)
{
	static const char *const types[3] = {"f16", "bf16", "f32"};
	static const char *const widths[3] = {"b16", "b16", "b32"};
	char names[64][64];
	int before = list_entries(dir, names, 64);
	for (int i = 0; i < 3; i++) {
		Compiled c = compile_type(ctx, types[i]);
		char what[400];
		snprintf(what, sizeof what, "T = %s: a miss, compiled, loads .%s (%s)", types[i], widths[i], c.ptx_head);
		expect(missed(c) && strstr(c.ptx_head, widths[i]), what);
	}
	expect(list_entries(dir, names, 64) == before + 3, "three types: three cache entries");
	for (int i = 0; i < 3; i++) {
		Compiled c = compile_type(ctx, types[i]);
		char what[200];
		snprintf(what, sizeof what, "T = %s again, in a new module: a hit of its own entry", types[i]);
		expect(hit(c) && strstr(c.ptx_head, widths[i]), what);
	}
	/* in one module: a variant per type, each launched again without compiling */
	blk_module *m = NULL;
	blk_kernel *k = NULL;
	blk_module_load_source(ctx, "generic.tile", generic_source, strlen(generic_source), NULL, &m);
	blk_kernel_get(m, "copy", &k);
	blk_devptr x, out;
	blk_malloc(ctx, 4096, &x);
	blk_malloc(ctx, 4096, &out);
	blk_arg args[3] = {blk_arg_ptr(x), blk_arg_ptr(out), blk_arg_int(512)};
	int jits = fc.jits();
	bool ok = true;
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 3; i++) {
			blk_const t = {.name = "T", .type = types[i]};
			blk_launch_options o = {.consts = &t, .n_consts = 1};
			ok &= blk_launch(k, args, 3, &o) == BLK_SUCCESS;
		}
	expect(ok && fc.jits() == jits + 3, "one module, T = f16, bf16, f32 twice each: three variants compiled and "
	                                    "loaded, the second round none");
	blk_const num = {.name = "T", .i = 16};
	blk_launch_options o = {.consts = &num, .n_consts = 1};
	expect(blk_launch(k, args, 3, &o) == BLK_ERROR_SOURCE && strstr(blk_last_error(), "'T' is a type") &&
	           strstr(blk_last_error(), "generic.tile:1:"),
	       "a number for T: BLK_ERROR_SOURCE naming the parameter and its place");
	blk_param_info px, pt;
	expect(blk_kernel_param(k, 0, &px) == BLK_SUCCESS && strcmp(px.type, "*T") == 0 && px.kind == BLK_PARAM_POINTER &&
	           px.elem_bytes == 0 && blk_kernel_param(k, 3, &pt) == BLK_SUCCESS && strcmp(pt.type, "const type") == 0 &&
	           pt.is_const,
	       "blk_param_info: x reads \"*T\" (a pointer, its element size per launch), T \"const type\"");
	blk_free(ctx, x);
	blk_free(ctx, out);
	blk_module_destroy(m);
	blk_const f16 = {.name = "T", .type = "f16"};
	blk_module_options mo = {.defines = &f16, .n_defines = 1};
	blk_module_load_source(ctx, "generic.tile", generic_source, strlen(generic_source), &mo, &m);
	blk_kernel_get(m, "copy", &k);
	expect(blk_kernel_param(k, 0, &px) == BLK_SUCCESS && strcmp(px.type, "*f16") == 0 && px.elem_bytes == 2,
	       "with T = f16 among the module's defines, x reads \"*f16\" of 2-byte elements");
	blk_module_destroy(m);
}

/* The standard set the children compile: three kernels, two variants each. */
static int compile_set(blk_context *ctx, int want_hits)
{
	static const struct {
		const char *kernel, *cname;
		long cval;
	} set[] = {{"vector_add", NULL, 0}, {"vector_add", "BLOCK", 64}, {"row_sum", NULL, 0},
	           {"row_sum", "N", 512}, {"scale", NULL, 0}, {"scale", "BLOCK", 1024}};
	int bad = 0;
	for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
		Compiled c = compile(ctx, "cache.tile", source, set[i].kernel, set[i].cname, set[i].cval, 0);
		if (c.st != BLK_SUCCESS || (want_hits && !hit(c))) {
			fprintf(stderr, "     child: %s %s=%ld: status %d, from disk %d, PTX made %d, JIT %d: %s\n", set[i].kernel,
			        set[i].cname ? set[i].cname : "-", set[i].cval, (int)c.st, c.from_disk, c.made_ptx, c.jits,
			        blk_last_error());
			bad = 1;
		}
	}
	return bad;
}

/* ---- entries, checked as runtime/cache.c writes them ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *d = malloc((size_t)n + 1);
	*len = fread(d, 1, (size_t)n, f);
	fclose(f);
	return d;
}

static void spit(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

/* NULL when DIR/NAME is a whole entry of the key its name says. */
static const char *check_entry(const char *dir, const char *name)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	size_t len = 0;
	char *d = slurp(path, &len);
	const char *why = NULL;
	EntryHead h;
	char hex[33];
	if (!d)
		return "cannot be read";
	if (len < sizeof h) {
		why = "short";
	} else {
		memcpy(&h, d, sizeof h);
		for (int i = 0; i < 16; i++)
			snprintf(hex + 2 * i, 3, "%02x", h.key[i]);
		size_t at = entry_ptx_at(&h);
		if (memcmp(h.magic, "BLKVARNT", 8) != 0)
			why = "magic";
		else if (h.version != ENTRY_FORMAT)
			why = "version";
		else if (at > len || len - at != h.ptx_len)
			why = "length";
		else if (entry_checksum_of(d, len) != h.checksum)
			why = "checksum";
		else if (strncmp(name, hex, 32) != 0 || strcmp(name + 32, ".variant") != 0)
			why = "name";
		else if (!h.ptx_len || memchr(d + at, '\0', h.ptx_len) || !memmem(d + at, h.ptx_len, ".version", 8))
			why = "not PTX";
		else if (h.threads < 32 || h.threads > 1024 || h.n_params < 1)
			why = "not the kernel's threads and parameters";
	}
	free(d);
	return why;
}

/* Counts the entries (*.variant) and temporary files of dir; *bad gets the
 * number of entries that do not check. */
static int scan(const char *dir, int *temps, int *bad)
{
	int n = 0;
	*temps = *bad = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.') {
			*temps += strncmp(e->d_name, ".tmp", 4) == 0;
			continue;
		}
		size_t l = strlen(e->d_name);
		if (l > 8 && strcmp(e->d_name + l - 8, ".variant") == 0) {
			n++;
			const char *why = check_entry(dir, e->d_name);
			if (why) {
				printf("     %s: %s\n", e->d_name, why);
				(*bad)++;
			}
		}
	}
	closedir(d);
	return n;
}

/* The name of the one entry in dir not in `before` (a list of names). */
static int newest_entry(const char *dir, char names[][64], int n_before, char *out)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	int found = 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= 64)
			continue;
		int seen = 0;
		for (int i = 0; i < n_before && !seen; i++)
			seen = strcmp(names[i], e->d_name) == 0;
		if (!seen) {
			memcpy(out, e->d_name, strlen(e->d_name) + 1); /* shorter than 64: checked above */
			found++;
		}
	}
	closedir(d);
	return found;
}

static int list_entries(const char *dir, char names[][64], int max)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < max)
		if (e->d_name[0] != '.' && strlen(e->d_name) < 64)
			memcpy(names[n++], e->d_name, strlen(e->d_name) + 1);
	closedir(d);
	return n;
}

/* ---- other processes ---- */

/* Runs this program as "child MODE DIR"; returns its exit status. With
 * gate >= 0 the child first waits until it can read a byte from gate. */
static pid_t spawn(const char *mode, const char *dir, int gate)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char g[16];
		snprintf(g, sizeof g, "%d", gate);
		execl(self, self, "child", mode, dir, g, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int child(const char *mode, const char *dir, int gate)
{
	setenv("BLK_CACHE_DIR", dir, 1);
	if (gate >= 0) {
		char c;
		if (read(gate, &c, 1) != 1)
			return 3;
	}
	blk_context *ctx = NULL;
	if (blk_context_create(BLK_BACKEND_GPU, 0, &ctx) != BLK_SUCCESS) {
		fprintf(stderr, "     child: %s\n", blk_last_error());
		return 2;
	}
	int bad = compile_set(ctx, strcmp(mode, "hit") == 0);
	blk_context_destroy(ctx);
	return bad;
}

int main(int argc, char **argv)
{
	char path[4200];
	if (!fake_cuda_open(&fc, self, sizeof self, path, sizeof path))
		return 1;
	if (argc == 5 && strcmp(argv[1], "child") == 0) {
		/* the import is beside the cache folders */
		snprintf(include_dir, sizeof include_dir, "%s", argv[3]);
		char *slash = strrchr(include_dir, '/');
		if (slash)
			snprintf(slash, sizeof include_dir - (size_t)(slash - include_dir), "/include");
		return child(argv[2], argv[3], atoi(argv[4]));
	}

	snprintf(tmpdir, sizeof tmpdir, "%s/blk-cache-api.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL cannot make a temporary folder\n0 passed, 1 failed\n");
		return 1;
	}
	/* the import every compilation reads, and the cache folders beside it */
	snprintf(include_dir, sizeof include_dir, "%s/include", tmpdir);
	mkdir(include_dir, 0777);
	char helper[700];
	snprintf(helper, sizeof helper, "%s/helper.tile", include_dir);
	const char *helper_text = "fn twice(x) { return x + x; }\n";
	spit(helper, helper_text, strlen(helper_text));
	char dir[600];
	snprintf(dir, sizeof dir, "%s/c1", tmpdir);
	setenv("BLK_CACHE_DIR", dir, 1);

	blk_context *ctx = NULL;
	if (blk_context_create(BLK_BACKEND_GPU, 0, &ctx) != BLK_SUCCESS) {
		printf("FAIL a GPU context on the stand-in: %s\n0 passed, 1 failed\n", blk_last_error());
		return 1;
	}
	int temps, bad;

	/* ---- a miss, then hits */
	Compiled c1 = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(missed(c1), "first compilation: a miss, compiled, its PTX loaded by the driver's JIT");
	char what[300];
	snprintf(what, sizeof what, "... its phases: parse %.3f, irgen %.3f, passes %.3f, LLVM %.3f, PTX %.3f, cubin %.3f ms",
	         c1.ms_parse, c1.ms_irgen, c1.ms_passes, c1.ms_llvm, c1.ms_ptx, c1.ms_cubin);
	expect(c1.ms_parse > 0 && c1.ms_irgen > 0 && c1.ms_passes > 0 && c1.ms_llvm > 0 && c1.ms_ptx > 0 && c1.ms_cubin > 0,
	       what);
	expect(strstr(c1.ptx_head, ".version") != NULL && c1.ptx_len > 100 && c1.num_warps == 4, "... its PTX, num_warps 4");
	char names[64][64];
	int n_names = 0;
	char first[64] = "";
	expect(scan(dir, &temps, &bad) == 1 && bad == 0 && temps == 0 && newest_entry(dir, names, 0, first) == 1,
	       "one whole entry in $BLK_CACHE_DIR, no temporary file");
	Compiled c2 = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(hit(c2), "the same kernel in a new module: a hit, the entry's PTX loaded by the JIT, none made");
	expect(c2.ms_llvm == 0 && c2.ms_ptx == 0 && c2.ms_irgen > 0 && c2.ptx_len == c1.ptx_len &&
	           strcmp(c2.ptx_head, c1.ptx_head) == 0 && c2.shared_bytes == c1.shared_bytes,
	       "... no LLVM or PTX time; the same PTX and shared memory come back with it");

	char type_dir[620]; /* a folder of its own: the counts below stay those of vector_add */
	snprintf(type_dir, sizeof type_dir, "%s/types", tmpdir);
	setenv("BLK_CACHE_DIR", type_dir, 1);
	test_const_types(ctx, type_dir);
	setenv("BLK_CACHE_DIR", dir, 1);

	/* a launch of the variant loaded from the cache */
	blk_module *m = NULL;
	blk_kernel *k = NULL;
	const char *dirs[1] = {include_dir};
	blk_module_options mo = {.include_dirs = dirs, .n_include_dirs = 1};
	blk_module_load_source(ctx, "cache.tile", source, strlen(source), &mo, &m);
	blk_kernel_get(m, "vector_add", &k);
	blk_devptr x, y, out;
	blk_malloc(ctx, 4096, &x);
	blk_malloc(ctx, 4096, &y);
	blk_malloc(ctx, 4096, &out);
	blk_arg args[4] = {blk_arg_ptr(x), blk_arg_ptr(y), blk_arg_ptr(out), blk_arg_int(1000)};
	int jits = fc.jits();
	blk_compile_info info;
	expect(blk_kernel_compile(k, args, 4, NULL, &info) == BLK_SUCCESS && !info.from_disk_cache && info.ms_ptx > 0 &&
	           fc.jits() == jits + 1,
	       "with arguments (aligned pointers): another specialization, a miss");
	expect(blk_launch(k, args, 4, NULL) == BLK_SUCCESS && fc.jits() == jits + 1,
	       "... launched without compiling or loading again");
	blk_module_destroy(m);
	blk_module_load_source(ctx, "cache.tile", source, strlen(source), &mo, &m);
	blk_kernel_get(m, "vector_add", &k);
	expect(blk_launch(k, args, 4, NULL) == BLK_SUCCESS && fc.jits() == jits + 2,
	       "a new module launches it from the disk cache (its PTX loaded by the JIT)");
	expect(blk_kernel_compile(k, args, 4, NULL, &info) == BLK_SUCCESS && info.from_disk_cache &&
	           info.ms_irgen == 0 && info.ms_cubin == 0, "... blk_kernel_compile then says: from the disk cache, nothing done now");
	blk_module_destroy(m);

	/* ---- another process */
	pid_t pid = spawn("compile", dir, -1);
	expect(wait_status(pid) == 0, "a second process compiles the set of 6 variants (3 of them misses)");
	n_names = list_entries(dir, names, 64);
	pid = spawn("hit", dir, -1);
	expect(wait_status(pid) == 0, "a third process finds all 6 in the cache: no PTX made");

	/* ---- what changes the key */
	struct {
		const char *what;
		const char *name, *text, *kernel, *cname;
		long cval;
		int warps, miss;
	} cases[] = {
		{"a space at the end of the source", "cache.tile", NULL, "vector_add", NULL, 0, 0, 1},
		{"the module's name", "other.tile", source, "vector_add", NULL, 0, 0, 1},
		{"BLOCK = 32", "cache.tile", source, "vector_add", "BLOCK", 32, 0, 1},
		{"num_warps = 8", "cache.tile", source, "vector_add", NULL, 0, 8, 1},
	};
	char spaced[4096];
	snprintf(spaced, sizeof spaced, "%s ", source);
	cases[0].text = spaced;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		Compiled c = compile(ctx, cases[i].name, cases[i].text, cases[i].kernel, cases[i].cname, cases[i].cval,
		                     cases[i].warps);
		snprintf(what, sizeof what, "key: %s: a miss", cases[i].what);
		expect(missed(c), what);
		c = compile(ctx, cases[i].name, cases[i].text, cases[i].kernel, cases[i].cname, cases[i].cval, cases[i].warps);
		snprintf(what, sizeof what, "key: %s: then a hit", cases[i].what);
		expect(hit(c), what);
	}
	setenv("BLK_SOMETHING_ELSE", "1", 1);
	setenv("CUDA_VISIBLE_DEVICES", "0", 1);
	Compiled c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(hit(c), "key: unrelated environment variables: a hit");
	unsetenv("BLK_SOMETHING_ELSE");
	unsetenv("CUDA_VISIBLE_DEVICES");
	spit(helper, "fn twice(x) { return x + x; }\n\n", strlen(helper_text) + 1);
	c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(missed(c), "key: a byte more in the imported file: a miss");
	spit(helper, helper_text, strlen(helper_text));
	c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(hit(c), "key: the import as it was: a hit again");
	c = compile(ctx, "cache.tile", source, "row_sum", NULL, 0, 0);
	expect(c.st == BLK_SUCCESS && c.from_disk, "key: another kernel of the module (compiled by the other process): a hit");
	blk_context *other = NULL;
	fc.set("cc_major", 8);
	blk_context_create(BLK_BACKEND_GPU, 0, &other);
	fc.set("cc_major", 9);
	c = compile(other, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(missed(c) && strstr(c.ptx_head, "sm_80"),
	       "key: a device of compute capability 8.0 (sm_80): a miss");
	blk_context_destroy(other);
	fc.set("driver_version", 12080);
	blk_context_create(BLK_BACKEND_GPU, 0, &other);
	fc.set("driver_version", 13000);
	c = compile(other, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(missed(c), "key: another driver version: a miss");
	blk_context_destroy(other);

	/* ---- damaged entries */
	char entry[1200];
	snprintf(entry, sizeof entry, "%s/%s", dir, first);
	size_t len = 0;
	char *good = slurp(entry, &len);
	expect(good && check_entry(dir, first) == NULL, "the first entry is whole");
	EntryHead gh = {0};
	if (good)
		memcpy(&gh, good, sizeof gh);
	struct {
		const char *what;
		size_t cut;
		long flip;
	} damage[] = {
		{"cut to half", 0, -1},
		{"cut to the header", sizeof(EntryHead), -1},
		{"a flipped byte in the PTX", 1, (long)entry_ptx_at(&gh) + 20},
		{"a flipped byte in the header's PTX length", 1, (long)offsetof(EntryHead, ptx_len) + 1},
		{"garbage", 2, -1},
	};
	damage[0].cut = len / 2;
	for (size_t i = 0; good && i < sizeof damage / sizeof damage[0]; i++) {
		char *bad_data = malloc(len);
		memcpy(bad_data, good, len);
		size_t l = damage[i].cut > 2 ? damage[i].cut : len;
		if (damage[i].flip >= 0)
			bad_data[damage[i].flip] ^= 0x10;
		if (damage[i].cut == 2)
			memset(bad_data, 'z', len);
		spit(entry, bad_data, l);
		free(bad_data);
		c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
		snprintf(what, sizeof what, "damage: %s: compiled again", damage[i].what);
		expect(missed(c), what);
		snprintf(what, sizeof what, "damage: %s: the entry is rewritten whole, and hits", damage[i].what);
		c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
		expect(check_entry(dir, first) == NULL && hit(c), what);
	}
	/* whole entries (the checksum right) that cannot be used: PTX the
	 * driver refuses (".version" spelled otherwise), and format 2 (a link's
	 * cubin, relocatable code: slower) */
	const char *ver = good ? memmem(good, len, ".version", 8) : NULL;
	size_t flen = 0;
	char *forged = ver ? entry_forge(good, len, (size_t)(ver - good) - entry_ptx_at(&gh), 8, ".vorsion", &flen) : NULL;
	if (forged) {
		spit(entry, forged, flen);
		long refused = fc.get("refused", 0);
		expect(check_entry(dir, first) != NULL && strcmp(check_entry(dir, first), "not PTX") == 0,
		       "a whole entry whose PTX the driver refuses (CUDA_ERROR_INVALID_PTX)");
		c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
		expect(c.st == BLK_SUCCESS && !c.from_disk && c.made_ptx && c.jits == 1 && fc.get("refused", 0) == refused + 1 &&
		           check_entry(dir, first) == NULL,
		       "... is given to the JIT, refused, compiled again (no error) and rewritten");
		memcpy(forged, good, len);
		EntryHead old = gh;
		old.version = 2;
		memcpy(forged, &old, sizeof old);
		spit(entry, forged, len);
		expect(check_entry(dir, first) != NULL && strcmp(check_entry(dir, first), "version") == 0,
		       "a whole entry of format 2 under the key");
		c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
		expect(missed(c) && check_entry(dir, first) == NULL, "... is compiled again and rewritten");
	} else {
		expect(0, "an entry whose PTX the driver refuses: made");
	}
	free(forged);
	free(good);
	/* an entry replaced by a FIFO: damaged, not waited on (alarm: a hang
	 * kills the test, which then prints no counts) */
	unlink(entry);
	expect(mkfifo(entry, 0600) == 0, "an entry replaced by a FIFO");
	alarm(20);
	c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(missed(c) && check_entry(dir, first) == NULL,
	       "... is compiled again, not waited on, and rewritten as a whole entry");
	alarm(0);

	/* ---- BLK_ALWAYS_COMPILE, BLK_CACHE=0, no usable folder */
	unlink(entry);
	setenv("BLK_ALWAYS_COMPILE", "1", 1);
	c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(missed(c) && check_entry(dir, first) == NULL,
	       "BLK_ALWAYS_COMPILE=1: compiled, and the entry written");
	c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(missed(c), "BLK_ALWAYS_COMPILE=1: compiled again though it is there");
	unsetenv("BLK_ALWAYS_COMPILE");
	c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(hit(c), "without it: a hit");

	char dir2[600];
	snprintf(dir2, sizeof dir2, "%s/c2", tmpdir);
	setenv("BLK_CACHE_DIR", dir2, 1);
	setenv("BLK_CACHE", "0", 1);
	c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	Compiled c_again = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	struct stat st;
	expect(missed(c) && missed(c_again) && stat(dir2, &st) != 0,
	       "BLK_CACHE=0: compiled each time, nothing written (not even the folder)");
	unsetenv("BLK_CACHE");
	char file[700], under[800];
	snprintf(file, sizeof file, "%s/a-file", tmpdir);
	spit(file, "x", 1);
	snprintf(under, sizeof under, "%s/cache", file);
	setenv("BLK_CACHE_DIR", under, 1);
	c = compile(ctx, "cache.tile", source, "vector_add", NULL, 0, 0);
	expect(missed(c), "a cache folder that cannot be made: compiled, no error");
	blk_module_load_source(ctx, "cache.tile", source, strlen(source), &mo, &m);
	blk_kernel_get(m, "vector_add", &k);
	expect(blk_launch(k, args, 4, NULL) == BLK_SUCCESS, "... and launched");
	blk_module_destroy(m);

	/* ---- 8 processes at once */
	char dir3[600];
	snprintf(dir3, sizeof dir3, "%s/c3", tmpdir);
	int gate[2];
	pid_t kids[8];
	if (pipe(gate) != 0)
		gate[0] = gate[1] = -1;
	for (int i = 0; i < 8; i++)
		kids[i] = spawn("compile", dir3, gate[0]);
	char go[8] = {0};
	if (write(gate[1], go, 8) != 8)
		printf("     (the gate did not open)\n");
	int all_ok = 1;
	for (int i = 0; i < 8; i++)
		all_ok &= wait_status(kids[i]) == 0;
	close(gate[0]);
	close(gate[1]);
	expect(all_ok, "8 processes compile the same 6 variants at once into an empty folder");
	int entries = scan(dir3, &temps, &bad);
	snprintf(what, sizeof what, "... leaving 6 whole entries (%d, %d damaged) and no temporary file (%d)", entries, bad,
	         temps);
	expect(entries == 6 && bad == 0 && temps == 0, what);
	pid = spawn("hit", dir3, -1);
	expect(wait_status(pid) == 0, "... which another process then finds, all 6");

	blk_context_destroy(ctx);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("     (could not remove %s)\n", tmpdir);
	(void)n_names;
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
