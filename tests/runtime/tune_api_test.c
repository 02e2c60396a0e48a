/* Timing, compiling ahead, autotuning and borrowing a CUDA context through
 * blk.h, against the stand-in driver (fake/libcuda.so.1): there a launch
 * moves a clock by the threads it starts (programs x threads / 10^4 ms), so
 * events time it and the config with the fewest threads in all wins; with
 * "scribble" each launch overwrites the memory its pointers point into.
 * Then the same calls on the interpreter.
 *
 *  - blk_time_launch: warm-up, the median of the runs, the L2 flush between
 *    them; blk_synchronize; blk_kernel_compile without launching;
 *  - blk_autotune: every config timed, the fastest kept (in memory, on disk,
 *    in another process), the arguments' memory as it was on return (the
 *    whole allocation a pointer points into); configs that cannot run
 *    (shared memory, too many registers, a source error) noted and skipped;
 *  - blk_launch of an @autotune kernel: tuned at the first launch for each
 *    key value, not when the launch gives the consts;
 *  - blk_context_create_current on a thread with a context and without.
 *
 * The program runs itself again (argv[1] "child") for another process. */
#include "blk.h"
#include "fake_cuda.h"

#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static FakeCuda fc;
static int (*drv_retain)(void **ctx, int dev);
static int (*drv_release)(int dev);
static int (*drv_set_current)(void *ctx);
static int (*drv_get_current)(void **ctx);

static int passed, failed;
static char self[4096], tmpdir[512];

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static int has(const char *s) { return strstr(blk_last_error(), s) != NULL; }

static const char *source =
	"@autotune(key = [n], configs = [{BLOCK = 128, num_warps = 4}, {BLOCK = 1024, num_warps = 4},\n"
	"                                {BLOCK = 512, num_warps = 8}])\n"
	"kernel add1(x: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, load(x + offs, mask = offs < n) + 1.0, mask = offs < n);\n"
	"}\n"
	"kernel plain(x: *f32, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, load(x + offs, mask = offs < n) * 2.0, mask = offs < n);\n"
	"}\n"
	"@autotune(key = [n], configs = [{B = 128}, {B = 32}])\n"
	"kernel tr(x: *f32, out: *f32, n: i32, B: const i32) grid(1) {\n"
	"    let r = arange(0, B);\n"
	"    let t = cumsum(load(x + r[:, None] * B + r[None, :]), axis = 1);\n"
	"    store(out + r[:, None] * B + r[None, :], trans(t));\n"
	"}\n"
	"@autotune(key = [n], configs = [{BLOCK = 100}, {BLOCK = 256}])\n"
	"kernel odd(x: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, 1.0, mask = offs < n);\n"
	"}\n"
	"@autotune(key = [n], configs = [{num_warps = 8}, {num_warps = 2}])\n"
	"kernel warps(x: *f32, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, 1.0, mask = offs < n);\n"
	"}\n"
	"@autotune(key = [n], configs = [{BLOCK = 512}])\n"
	"kernel one(x: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, 1.0, mask = offs < n);\n"
	"}\n";

static blk_kernel *kernel(blk_module *m, const char *name)
{
	blk_kernel *k = NULL;
	blk_kernel_get(m, name, &k);
	return k;
}

static int count_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name), s = strlen(suffix);
		n += l > s && strcmp(e->d_name + l - s, suffix) == 0;
	}
	closedir(d);
	return n;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-4 * fabs(b) + 1e-9; }

/* ---- another process: launches add1 for n = 2^20 - 64 and expects no tuning */
static int child(const char *dir)
{
	setenv("BLK_CACHE_DIR", dir, 1);
	blk_context *ctx = NULL;
	blk_module *m = NULL;
	blk_devptr x;
	if (blk_context_create(BLK_BACKEND_GPU, 0, &ctx) != BLK_SUCCESS ||
	    blk_module_load_source(ctx, "tune.tile", source, strlen(source), NULL, &m) != BLK_SUCCESS ||
	    blk_malloc(ctx, 4 << 20, &x) != BLK_SUCCESS)
		return 2;
	blk_arg args[2] = {blk_arg_ptr(x), blk_arg_int((1 << 20) - 64)};
	int before = fc.launches();
	if (blk_launch(kernel(m, "add1"), args, 2, NULL) != BLK_SUCCESS)
		return 3;
	FakeLaunch l = fake_last(&fc);
	if (fc.launches() != before + 1 || l.grid[0] != 1024 || l.block[0] != 128) {
		fprintf(stderr, "     child: %d launches, grid %u, block %u\n", fc.launches() - before, l.grid[0],
		        l.block[0]);
		return 1;
	}
	blk_module_destroy(m);
	blk_context_destroy(ctx);
	return 0;
}

typedef struct NoContext {
	blk_status st;
	char msg[512];
} NoContext;

static void *no_context_thread(void *p)
{
	NoContext *r = p;
	blk_context *c = NULL;
	r->st = blk_context_create_current(&c);
	snprintf(r->msg, sizeof r->msg, "%s", blk_last_error());
	if (c)
		blk_context_destroy(c);
	return NULL;
}

static void test_gpu(void)
{
	blk_context *ctx = NULL;
	blk_module *m = NULL;
	expect(blk_context_create(BLK_BACKEND_GPU, 0, &ctx) == BLK_SUCCESS &&
	           blk_module_load_source(ctx, "tune.tile", source, strlen(source), NULL, &m) == BLK_SUCCESS,
	       "a GPU context on the stand-in, a module");
	enum { N = 1 << 20 };
	blk_devptr x, big, out;
	blk_malloc(ctx, (size_t)N * 4, &x);
	blk_malloc(ctx, 128 * 128 * 4, &big);
	blk_malloc(ctx, 128 * 128 * 4, &out);
	char what[400];

	/* ---- blk_synchronize */
	expect(blk_synchronize(ctx) == BLK_SUCCESS, "blk_synchronize");
	fc.set("sticky", 700);
	expect(blk_synchronize(ctx) == BLK_ERROR_LAUNCH &&
	           has("blk_synchronize: cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS") && has("BLK_DEBUG=1"),
	       "blk_synchronize reports a fault: the call, the error, the lost context");
	fc.set("sticky", 0);
	expect(blk_synchronize(NULL) == BLK_ERROR_INVALID_ARGUMENT, "blk_synchronize(NULL) is refused");

	/* ---- blk_time_launch: vector of 1000, BLOCK 256: 4 programs of 128 threads = 0.0512 ms a run */
	blk_kernel *plain = kernel(m, "plain");
	blk_arg pargs[2] = {blk_arg_ptr(x), blk_arg_int(1000)};
	double ms = -1;
	int before = fc.launches();
	blk_status st = blk_time_launch(plain, pargs, 2, NULL, 7, &ms);
	snprintf(what, sizeof what, "blk_time_launch: the median of the runs (%.6f ms; 4 x 128 threads make 0.0512)", ms);
	expect(st == BLK_SUCCESS && near(ms, 0.0512), what);
	snprintf(what, sizeof what, "... 3 warm-up launches and 7 timed (%d)", fc.launches() - before);
	expect(fc.launches() == before + 10, what);
	fc.fail("cuMemsetD8Async", 1, 1, NULL);
	expect(blk_time_launch(plain, pargs, 2, NULL, 3, &ms) == BLK_ERROR_LAUNCH && has("cuMemsetD8Async failed"),
	       "... the L2 cache is flushed (cuMemsetD8Async) before each timed run");
	expect(blk_time_launch(plain, pargs, 2, NULL, 0, &ms) == BLK_ERROR_INVALID_ARGUMENT && has("reps is 0"),
	       "... reps 0 is refused");
	expect(blk_time_launch(plain, pargs, 1, NULL, 3, &ms) == BLK_ERROR_INVALID_ARGUMENT, "... wrong arguments are refused");
	blk_launch_options o_stream = {.stream = (void *)0x1234};
	expect(blk_time_launch(plain, pargs, 2, &o_stream, 2, &ms) == BLK_SUCCESS && fake_last(&fc).stream == (void *)0x1234,
	       "... on the launch's stream");

	/* ---- blk_kernel_compile */
	blk_compile_info info;
	before = fc.launches();
	blk_const b512 = {.name = "BLOCK", .i = 512};
	blk_launch_options o512 = {.consts = &b512, .n_consts = 1, .num_warps = 2};
	expect(blk_kernel_compile(plain, NULL, 0, &o512, &info) == BLK_SUCCESS && fc.launches() == before &&
	           info.ptx && strstr(info.ptx, ".entry plain") && info.num_warps == 2 && info.num_stages == 3 &&
	           info.ms_llvm > 0, "blk_kernel_compile: PTX, num_warps, num_stages, the phases; nothing launched");
	int mods = fc.modules_live();
	expect(blk_launch(plain, pargs, 2, &o512) == BLK_SUCCESS && fake_last(&fc).block[0] == 64 && fc.modules_live() == mods + 1,
	       "... a launch after it (another specialization: its own variant)");
	expect(blk_kernel_compile(plain, NULL, 0, &o512, &info) == BLK_SUCCESS && info.ms_parse == 0 && info.ms_llvm == 0 &&
	           info.ptx, "... once more: nothing done (all phases 0), the PTX still there");
	expect(blk_kernel_compile(kernel(m, "tr"), NULL, 0, NULL, &info) == BLK_SUCCESS && info.shared_bytes > 48 * 1024,
	       "... an @autotune kernel without arguments: its first config (B = 128: over 48 KiB of shared memory)");
	expect(blk_kernel_compile(plain, NULL, 3, NULL, &info) == BLK_ERROR_INVALID_ARGUMENT, "... wrong arguments are refused");

	/* ---- blk_autotune: add1 on 2^20 floats; its pointer 256 bytes into x */
	blk_kernel *add1 = kernel(m, "add1");
	float *pattern = malloc((size_t)N * 4), *back = malloc((size_t)N * 4);
	for (int i = 0; i < N; i++)
		pattern[i] = (float)i;
	blk_copy_to_device(ctx, x, pattern, (size_t)N * 4);
	fc.set("scribble", 1);
	blk_arg targs[2] = {blk_arg_ptr(x + 256), blk_arg_int(N - 64)};
	blk_tune_result r;
	before = fc.launches();
	st = blk_autotune(add1, targs, 2, NULL, &r);
	snprintf(what, sizeof what, "blk_autotune: 3 configs (%.4f, %.4f, %.4f ms), the fastest is BLOCK 1024 (%d)", r.ms[0],
	         r.ms[1], r.ms[2], r.best);
	expect(st == BLK_SUCCESS && r.n_configs == 3 && r.best == 1 && r.ms[1] < r.ms[2] && r.ms[2] < r.ms[0], what);
	expect(near(r.ms[0], 8192 * 128 / 1e4) && near(r.ms[1], 1024 * 128 / 1e4) && near(r.ms[2], 2048 * 256 / 1e4) &&
	           !r.note[0][0] && !r.note[1][0] && !r.note[2][0], "... each config's median time, no notes");
	snprintf(what, sizeof what, "... each config: 3 warm-up launches and 10 timed (%d)", fc.launches() - before);
	expect(fc.launches() == before + 39, what);
	blk_copy_from_device(ctx, back, x, (size_t)N * 4);
	expect(memcmp(back, pattern, (size_t)N * 4) == 0,
	       "... every launch overwrote x; its whole allocation holds what it held before");
	expect(count_files(tmpdir, ".tune") == 1, "... the choice is in the disk cache");
	before = fc.launches();
	expect(blk_launch(add1, targs, 2, NULL) == BLK_SUCCESS && fc.launches() == before + 1 && fake_last(&fc).grid[0] == 1024 &&
	           fake_last(&fc).block[0] == 128, "blk_launch then runs BLOCK 1024 (grid 1024) without timing");
	fc.set("scribble", 0);

	/* ---- tuning at the first launch of a key value */
	/* n = 2^16 on 132 SMs: BLOCK 1024 gives 64 programs, under half, while BLOCK 128 gives 512: pruned */
	blk_arg a16[2] = {blk_arg_ptr(x), blk_arg_int(1 << 16)};
	before = fc.launches();
	expect(blk_launch(add1, a16, 2, NULL) == BLK_SUCCESS && fc.launches() == before + 27 && fake_last(&fc).grid[0] == 128,
	       "blk_launch of a new key value (n = 2^16): BLOCK 1024 pruned (64 programs), the others timed first (26 "
	       "launches), then BLOCK 512 runs");
	before = fc.launches();
	expect(blk_launch(add1, a16, 2, NULL) == BLK_SUCCESS && fc.launches() == before + 1 && fake_last(&fc).grid[0] == 128,
	       "... the next launch with it: no timing");
	blk_arg a17[2] = {blk_arg_ptr(x), blk_arg_int((1 << 16) + 1)};
	before = fc.launches();
	expect(blk_launch(add1, a17, 2, NULL) == BLK_SUCCESS && fc.launches() == before + 27,
	       "... n = 2^16 + 1: another key value, tuned (65 programs of BLOCK 1024 pruned)");
	before = fc.launches();
	expect(blk_launch(add1, a16, 2, NULL) == BLK_SUCCESS && blk_launch(add1, a17, 2, NULL) == BLK_SUCCESS &&
	           blk_launch(add1, a16, 2, NULL) == BLK_SUCCESS && fc.launches() == before + 3,
	       "... alternating between the two: remembered, no timing");
	blk_arg a16u[2] = {blk_arg_ptr(x + 4), blk_arg_int(1 << 16)};
	before = fc.launches();
	expect(blk_launch(add1, a16u, 2, NULL) == BLK_SUCCESS && fc.launches() == before + 27,
	       "... n = 2^16 with x not 16-byte aligned: another specialization, tuned on its own");
	blk_const b128 = {.name = "BLOCK", .i = 128};
	blk_launch_options o128 = {.consts = &b128, .n_consts = 1};
	blk_arg a18[2] = {blk_arg_ptr(x), blk_arg_int(1 << 18)};
	before = fc.launches();
	expect(blk_launch(add1, a18, 2, &o128) == BLK_SUCCESS && fc.launches() == before + 1 && fake_last(&fc).grid[0] == 2048,
	       "a launch that gives BLOCK (and leaves num_warps to the default) is not tuned");
	blk_launch_options ow = {.num_warps = 8};
	before = fc.launches();
	expect(blk_launch(add1, a18, 2, &ow) == BLK_SUCCESS && fc.launches() == before + 40 && fake_last(&fc).block[0] == 256,
	       "a launch that gives num_warps only is tuned over BLOCK (num_warps 8 in every config)");
	before = fc.launches();
	expect(blk_launch(kernel(m, "one"), a18, 2, NULL) == BLK_SUCCESS && fc.launches() == before + 1 &&
	           fake_last(&fc).grid[0] == 512, "an @autotune kernel of one config: not tuned, that config");
	blk_kernel *warps = kernel(m, "warps");
	before = fc.launches();
	expect(blk_launch(warps, a18, 2, NULL) == BLK_SUCCESS && fc.launches() == before + 27 && fake_last(&fc).block[0] == 64,
	       "configs of num_warps only: tuned when the launch does not give it (2 warps win)");
	blk_const w8 = {.name = "num_warps", .i = 8};
	blk_launch_options ow8 = {.consts = &w8, .n_consts = 1};
	blk_launch_options ow4 = {.num_warps = 4};
	before = fc.launches();
	expect(blk_launch(warps, a18, 2, &ow8) == BLK_SUCCESS && fake_last(&fc).block[0] == 256 &&
	           blk_launch(warps, a18, 2, &ow4) == BLK_SUCCESS && fake_last(&fc).block[0] == 128 && fc.launches() == before + 2,
	       "... not when it gives num_warps, as a const or as an option");
	blk_compile_info ci;
	blk_arg a19[2] = {blk_arg_ptr(x), blk_arg_int(1 << 19)};
	before = fc.launches();
	expect(blk_kernel_compile(add1, a19, 2, NULL, &ci) == BLK_SUCCESS && fc.launches() == before,
	       "blk_kernel_compile for a key value not tuned yet: no tuning");

	/* ---- remembered on disk: a new module, another process */
	blk_module *m2 = NULL;
	blk_module_load_source(ctx, "tune.tile", source, strlen(source), NULL, &m2);
	before = fc.launches();
	expect(blk_launch(kernel(m2, "add1"), a16, 2, NULL) == BLK_SUCCESS && fc.launches() == before + 1 &&
	           fake_last(&fc).grid[0] == 128, "a new module: the choice for n = 2^16 comes from the disk cache, no timing");
	blk_module_destroy(m2);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execl(self, self, "child", tmpdir, (char *)NULL);
		_exit(127);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "another process: the choice blk_autotune made (n = 2^20 - 64) comes from the disk cache, no timing");
	char tune_dir2[600];
	snprintf(tune_dir2, sizeof tune_dir2, "%s/off", tmpdir);
	setenv("BLK_CACHE_DIR", tune_dir2, 1);
	setenv("BLK_CACHE", "0", 1);
	m2 = NULL;
	blk_module_load_source(ctx, "tune.tile", source, strlen(source), NULL, &m2);
	struct stat sst;
	expect(blk_launch(kernel(m2, "add1"), a16, 2, NULL) == BLK_SUCCESS && stat(tune_dir2, &sst) != 0,
	       "BLK_CACHE=0: tuning writes nothing");
	blk_module_destroy(m2);
	unsetenv("BLK_CACHE");
	setenv("BLK_CACHE_DIR", tmpdir, 1);

	/* ---- configs that cannot run */
	fc.set("block_limit", 128);
	st = blk_autotune(add1, targs, 2, NULL, &r);
	snprintf(what, sizeof what, "too many registers (256 threads refused): noted, skipped (\"%s\")", r.note[2]);
	expect(st == BLK_SUCCESS && r.best == 1 && r.ms[2] < 0 && strstr(r.note[2], "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") &&
	           strncmp(r.note[2], "blk_launch", 10) != 0, what);
	fc.set("block_limit", 64);
	st = blk_autotune(add1, targs, 2, NULL, &r);
	expect(st == BLK_ERROR_LAUNCH && has("no config of kernel 'add1' can run; the first: ") &&
	           has("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") && r.best == -1,
	       "no config can run: BLK_ERROR_LAUNCH, with why the first could not");
	fc.set("block_limit", 0);
	fc.set("smem_optin", 40000);
	blk_context *small = NULL;
	blk_module *msm = NULL;
	blk_context_create(BLK_BACKEND_GPU, 0, &small);
	fc.set("smem_optin", 232448);
	blk_module_load_source(small, "tune.tile", source, strlen(source), NULL, &msm);
	blk_devptr s1, s2;
	blk_malloc(small, 128 * 128 * 4, &s1);
	blk_malloc(small, 128 * 128 * 4, &s2);
	blk_arg sargs[3] = {blk_arg_ptr(s1), blk_arg_ptr(s2), blk_arg_int(5)};
	st = blk_autotune(kernel(msm, "tr"), sargs, 3, NULL, &r);
	snprintf(what, sizeof what, "more shared memory than the device allows: pruned, saying why (\"%s\")", r.note[0]);
	expect(st == BLK_SUCCESS && r.best == 1 && r.ms[0] == BLK_TUNE_PRUNED && r.ms[1] >= 0 &&
	           strcmp(r.note[0], "pruned: 64 KiB shared memory > 39.1 KiB") == 0, what);
	before = fc.launches();
	blk_arg sargs6[3] = {blk_arg_ptr(s1), blk_arg_ptr(s2), blk_arg_int(6)};
	expect(blk_launch(kernel(msm, "tr"), sargs6, 3, NULL) == BLK_SUCCESS && fc.launches() == before + 14,
	       "... and at a launch: tuned, B = 32 runs");
	blk_module_destroy(msm);
	blk_context_destroy(small);
	st = blk_autotune(kernel(m, "odd"), pargs, 2, NULL, &r);
	snprintf(what, sizeof what, "a config the source refuses (arange of 100): noted, skipped (\"%.60s\")", r.note[0]);
	expect(st == BLK_SUCCESS && r.best == 1 && r.ms[0] < 0 && r.note[0][0], what);
	st = blk_autotune(plain, pargs, 2, NULL, &r);
	expect(st == BLK_SUCCESS && r.n_configs == 1 && r.best == 0 && near(r.ms[0], 0.0512),
	       "blk_autotune of a kernel without @autotune: the one launch, timed");
	fc.fail("kernel", 700, 1, NULL);
	st = blk_autotune(add1, targs, 2, NULL, &r);
	expect(st == BLK_ERROR_LAUNCH && has("CUDA_ERROR_ILLEGAL_ADDRESS"), "a kernel that faults while tuned: an error, no crash");
	fc.set("sticky", 0);
	expect(blk_autotune(NULL, targs, 2, NULL, &r) == BLK_ERROR_INVALID_ARGUMENT &&
	           blk_autotune(add1, targs, 1, NULL, NULL) == BLK_ERROR_INVALID_ARGUMENT, "blk_autotune: bad arguments refused");

	/* ---- borrowing the current context */
	NoContext nc = {0};
	pthread_t t;
	pthread_create(&t, NULL, no_context_thread, &nc);
	pthread_join(t, NULL);
	expect(nc.st == BLK_ERROR_NO_DEVICE && strstr(nc.msg, "no CUDA context is current on this thread"),
	       "blk_context_create_current on a thread without a context: BLK_ERROR_NO_DEVICE");
	free(pattern);
	free(back);
	blk_module_destroy(m);
	blk_context_destroy(ctx);
	expect(fc.primary_refs() == 0 && fc.allocs_live() == 0 && fc.modules_live() == 0, "all given back");

	/* a program's own context: retained and made current by it */
	void *own = NULL;
	expect(drv_retain(&own, 0) == 0 && drv_set_current(own) == 0 && fc.primary_refs() == 1,
	       "the program makes a context of its own current (cuDevicePrimaryCtxRetain, cuCtxSetCurrent)");
	blk_context *b = NULL;
	expect(blk_context_create_current(&b) == BLK_SUCCESS && blk_context_backend(b) == BLK_BACKEND_GPU &&
	           fc.primary_refs() == 1, "blk_context_create_current borrows it: nothing retained");
	blk_devptr bx;
	blk_module *bm = NULL;
	blk_arg bargs[2];
	expect(blk_malloc(b, 4000, &bx) == BLK_SUCCESS && fc.allocs_live() == 1 &&
	           blk_module_load_source(b, "tune.tile", source, strlen(source), NULL, &bm) == BLK_SUCCESS,
	       "... memory and modules on it");
	bargs[0] = blk_arg_ptr(bx);
	bargs[1] = blk_arg_int(1000);
	expect(blk_launch(kernel(bm, "plain"), bargs, 2, NULL) == BLK_SUCCESS && strcmp(fake_last(&fc).name, "plain") == 0 &&
	           fc.modules_live() == 1, "... a launch on it");
	blk_module_destroy(bm);
	blk_context_destroy(b);
	void *cur = NULL;
	drv_get_current(&cur);
	expect(fc.primary_refs() == 1 && fc.allocs_live() == 0 && fc.modules_live() == 0 && cur == own,
	       "destroying it frees blk's memory and modules; the context stays, retained once, current");
	drv_release(0);
	drv_set_current(NULL);
	expect(blk_context_create_current(NULL) == BLK_ERROR_INVALID_ARGUMENT, "blk_context_create_current(NULL) is refused");
}

static void test_interpreter(void)
{
	blk_context *ctx = NULL;
	blk_module *m = NULL;
	expect(blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ctx) == BLK_SUCCESS &&
	           blk_module_load_source(ctx, "tune.tile", source, strlen(source), NULL, &m) == BLK_SUCCESS,
	       "interpreter: a context, the module");
	expect(blk_synchronize(ctx) == BLK_SUCCESS, "interpreter: blk_synchronize does nothing");
	enum { N = 3000 };
	float v[N], back[N];
	for (int i = 0; i < N; i++)
		v[i] = (float)i;
	blk_devptr x;
	blk_malloc(ctx, sizeof v, &x);
	blk_copy_to_device(ctx, x, v, sizeof v);
	blk_arg args[2] = {blk_arg_ptr(x), blk_arg_int(N)};
	blk_compile_info info;
	expect(blk_kernel_compile(kernel(m, "plain"), args, 2, NULL, &info) == BLK_SUCCESS && info.ptx == NULL &&
	           info.ms_irgen > 0 && info.ms_llvm == 0 && !info.from_disk_cache && info.num_warps == 4,
	       "interpreter: blk_kernel_compile (no PTX; irgen and passes timed)");
	double ms = 0;
	expect(blk_time_launch(kernel(m, "plain"), args, 2, NULL, 3, &ms) == BLK_SUCCESS && ms > 0,
	       "interpreter: blk_time_launch by the wall clock");
	blk_copy_from_device(ctx, back, x, sizeof back);
	expect(back[5] == 5.0f * 16 && back[N - 1] == (float)(N - 1) * 16, "... the warm-up and the 3 runs each doubled x");
	blk_copy_to_device(ctx, x, v, sizeof v);
	blk_tune_result r;
	expect(blk_autotune(kernel(m, "add1"), args, 2, NULL, &r) == BLK_SUCCESS && r.n_configs == 3 && r.best == 0 &&
	           r.ms[0] == 0 && strstr(r.note[1], "not timed") && strstr(r.note[2], "not timed"),
	       "interpreter: blk_autotune takes the first config, untimed");
	blk_copy_from_device(ctx, back, x, sizeof back);
	expect(memcmp(back, v, sizeof v) == 0, "... and runs nothing");
	expect(blk_launch(kernel(m, "add1"), args, 2, NULL) == BLK_SUCCESS, "interpreter: an @autotune launch");
	blk_copy_from_device(ctx, back, x, sizeof back);
	int wrong = 0;
	for (int i = 0; i < N; i++)
		wrong += back[i] != v[i] + 1.0f;
	expect(wrong == 0, "... computes x + 1 once");
	blk_arg a2[2] = {blk_arg_ptr(x), blk_arg_int(N - 1)};
	expect(blk_launch(kernel(m, "odd"), a2, 2, NULL) == BLK_SUCCESS,
	       "interpreter: the first config that compiles (odd: BLOCK 100 does not)");
	blk_module_destroy(m);
	blk_context_destroy(ctx);
}

int main(int argc, char **argv)
{
	char path[4200];
	if (!fake_cuda_open(&fc, self, sizeof self, path, sizeof path))
		return 1;
	void *h = fc.handle;
	*(void **)&drv_retain = dlsym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&drv_release = dlsym(h, "cuDevicePrimaryCtxRelease_v2");
	*(void **)&drv_set_current = dlsym(h, "cuCtxSetCurrent");
	*(void **)&drv_get_current = dlsym(h, "cuCtxGetCurrent");
	if (argc == 3 && strcmp(argv[1], "child") == 0)
		return child(argv[2]);

	snprintf(tmpdir, sizeof tmpdir, "%s/blk-tune-api.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL cannot make a temporary folder\n0 passed, 1 failed\n");
		return 1;
	}
	setenv("BLK_CACHE_DIR", tmpdir, 1);
	test_gpu();
	test_interpreter();
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("     (could not remove %s)\n", tmpdir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
