/* The disk cache, timing and autotuning on a real GPU, through blk.h
 * (tests/runtime/cache_api_test and tune_api_test check the same against
 * the stand-in driver, where nothing runs). Where no GPU can be used it
 * prints "SKIP: no GPU (reason)" and "0 passed, 0 failed".
 *
 *  - a variant compiled (PTX, then the driver's JIT), then its PTX loaded
 *    from the disk cache in a new module and in another process, computes
 *    the same;
 *  - blk_compile_info's phases; blk_time_launch of vector add at a
 *    plausible bandwidth; blk_synchronize;
 *  - blk_autotune and a launch that tunes: every config timed, the
 *    arguments as they were, an in-place kernel applied once; a config
 *    over the device's shared memory skipped;
 *  - the launch overhead of a tuned kernel against cuLaunchKernel;
 *  - blk_context_create_current on the device's primary context, made
 *    current by the test (blk puts back what was current after each call).
 *
 * The cache folder is a new temporary one (BLK_CACHE_DIR); the program runs
 * itself again (argv[1] "child") for the other process. */
#include "blk.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static const char *source =
	"kernel vadd(x: *f32, y: *f32, out: *f32, n: i32, BLOCK: const i32 = 1024) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let mask = offs < n;\n"
	"    store(out + offs, load(x + offs, mask = mask) + load(y + offs, mask = mask), mask = mask);\n"
	"}\n"
	"@autotune(key = [n], configs = [{BLOCK = 128, num_warps = 4}, {BLOCK = 1024, num_warps = 4},\n"
	"                                {BLOCK = 4096, num_warps = 8}])\n"
	"kernel inc(x: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, load(x + offs, mask = offs < n) + 1.0, mask = offs < n);\n"
	"}\n"
	"@autotune(key = [n], configs = [{B = 256}, {B = 32}])\n"
	"kernel big(x: *f32, out: *f32, n: i32, B: const i32) grid(1) {\n"
	"    let r = arange(0, B);\n"
	"    let t = cumsum(load(x + r[:, None] * B + r[None, :]), axis = 1);\n"
	"    store(out + r[:, None] * B + r[None, :], trans(t));\n"
	"}\n";

static blk_kernel *kernel(blk_module *m, const char *name)
{
	blk_kernel *k = NULL;
	blk_kernel_get(m, name, &k);
	return k;
}

/* vadd on n elements from a new module: 0 when out == x + y, from the
 * disk cache if want_hit. */
static int vadd_check(blk_context *ctx, int n, int want_hit, blk_compile_info *info)
{
	blk_module *m = NULL;
	if (blk_module_load_source(ctx, "cache_gpu.tile", source, strlen(source), NULL, &m) != BLK_SUCCESS)
		return 1;
	float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
	for (int i = 0; i < n; i++)
		x[i] = (float)i, y[i] = 0.25f * (float)(i % 1000);
	blk_devptr dx, dy, dout;
	blk_malloc(ctx, (size_t)n * 4, &dx);
	blk_malloc(ctx, (size_t)n * 4, &dy);
	blk_malloc(ctx, (size_t)n * 4, &dout);
	blk_copy_to_device(ctx, dx, x, (size_t)n * 4);
	blk_copy_to_device(ctx, dy, y, (size_t)n * 4);
	blk_arg args[4] = {blk_arg_ptr(dx), blk_arg_ptr(dy), blk_arg_ptr(dout), blk_arg_int(n)};
	int bad = 0;
	if (blk_kernel_compile(kernel(m, "vadd"), args, 4, NULL, info) != BLK_SUCCESS ||
	    (want_hit >= 0 && info->from_disk_cache != want_hit))
		bad = 2;
	if (!bad && (blk_launch(kernel(m, "vadd"), args, 4, NULL) != BLK_SUCCESS ||
	             blk_copy_from_device(ctx, out, dout, (size_t)n * 4) != BLK_SUCCESS))
		bad = 3;
	for (int i = 0; !bad && i < n; i++)
		if (out[i] != x[i] + y[i])
			bad = 4;
	blk_free(ctx, dx);
	blk_free(ctx, dy);
	blk_free(ctx, dout);
	free(x);
	free(y);
	free(out);
	blk_module_destroy(m);
	return bad;
}

int main(int argc, char **argv)
{
	unsetenv("BLK_BACKEND");
	unsetenv("BLK_CACHE");
	unsetenv("BLK_ALWAYS_COMPILE");
	blk_context *ctx = NULL;
	if (blk_context_create(BLK_BACKEND_GPU, 0, &ctx) != BLK_SUCCESS) {
		printf("SKIP: no GPU (%s)\n0 passed, 0 failed\n", blk_last_error());
		return 0;
	}
	blk_compile_info info;
	if (argc == 3 && strcmp(argv[1], "child") == 0) {
		setenv("BLK_CACHE_DIR", argv[2], 1);
		int bad = vadd_check(ctx, 1 << 20, 1, &info);
		blk_context_destroy(ctx);
		return bad;
	}
	char tmpdir[512], self[4096], what[400];
	snprintf(tmpdir, sizeof tmpdir, "%s/blk-cache-gpu.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (!mkdtemp(tmpdir) || sl <= 0) {
		printf("FAIL a temporary folder, this program's path\n0 passed, 1 failed\n");
		return 1;
	}
	self[sl] = '\0';
	setenv("BLK_CACHE_DIR", tmpdir, 1);

	/* ---- the disk cache */
	int bad = vadd_check(ctx, 1 << 20, 0, &info);
	snprintf(what, sizeof what, "a miss: compiled, loaded by the driver's JIT, correct (parse %.2f, irgen %.2f, passes %.2f, "
	                            "LLVM %.2f, PTX %.2f, cubin %.2f ms)", info.ms_parse, info.ms_irgen, info.ms_passes,
	         info.ms_llvm, info.ms_ptx, info.ms_cubin);
	expect(bad == 0 && info.ms_llvm > 0 && info.ms_ptx > 0 && info.ms_cubin > 0 && info.ptx, what);
	bad = vadd_check(ctx, 1 << 20, 1, &info);
	snprintf(what, sizeof what, "a new module: the PTX from the disk cache, correct (irgen %.2f, passes %.2f, "
	                            "loading %.2f ms)", info.ms_irgen, info.ms_passes, info.ms_cubin);
	expect(bad == 0 && info.ms_llvm == 0 && info.ms_ptx == 0, what);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execl(self, self, "child", tmpdir, (char *)NULL);
		_exit(127);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	snprintf(what, sizeof what, "another process loads it from the disk cache and computes the same (status %d)",
	         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, what);

	/* ---- timing */
	blk_module *m = NULL;
	blk_module_load_source(ctx, "cache_gpu.tile", source, strlen(source), NULL, &m);
	enum { N = 1 << 24 };
	blk_devptr dx, dy, dout;
	blk_malloc(ctx, (size_t)N * 4, &dx);
	blk_malloc(ctx, (size_t)N * 4, &dy);
	blk_malloc(ctx, (size_t)N * 4, &dout);
	blk_arg vargs[4] = {blk_arg_ptr(dx), blk_arg_ptr(dy), blk_arg_ptr(dout), blk_arg_int(N)};
	double ms = 0;
	blk_status st = blk_time_launch(kernel(m, "vadd"), vargs, 4, NULL, 20, &ms);
	double gbs = 3.0 * 4 * N / (ms * 1e6);
	snprintf(what, sizeof what, "blk_time_launch: vector add of 2^24 floats in %.4f ms (%.0f GB/s)", ms, gbs);
	expect(st == BLK_SUCCESS && gbs > 100 && gbs < 10000, what);
	expect(blk_synchronize(ctx) == BLK_SUCCESS, "blk_synchronize");

	/* ---- autotuning */
	float *pattern = malloc((size_t)N * 4), *back = malloc((size_t)N * 4);
	for (int i = 0; i < N; i++)
		pattern[i] = (float)(i % 4096);
	blk_copy_to_device(ctx, dx, pattern, (size_t)N * 4);
	blk_kernel *inc = kernel(m, "inc");
	blk_arg iargs[2] = {blk_arg_ptr(dx), blk_arg_int(N)};
	blk_tune_result r;
	double t0 = now();
	st = blk_autotune(inc, iargs, 2, NULL, &r);
	double tune_s = now() - t0;
	snprintf(what, sizeof what, "blk_autotune of an in-place +1 on 2^24 floats in %.2f s: %.4f, %.4f, %.4f ms, best %d",
	         tune_s, r.ms[0], r.ms[1], r.ms[2], r.best);
	expect(st == BLK_SUCCESS && r.n_configs == 3 && r.best >= 0 && r.ms[0] > 0 && r.ms[1] > 0 && r.ms[2] > 0, what);
	blk_copy_from_device(ctx, back, dx, (size_t)N * 4);
	expect(memcmp(back, pattern, (size_t)N * 4) == 0, "... 39 runs of it, and x holds what it held before");
	blk_arg iargs2[2] = {blk_arg_ptr(dx), blk_arg_int(N / 4)};
	t0 = now();
	st = blk_launch(inc, iargs2, 2, NULL);
	blk_copy_from_device(ctx, back, dx, (size_t)N * 4);
	int wrong = 0;
	for (int i = 0; i < N; i++)
		wrong += back[i] != pattern[i] + (i < N / 4 ? 1.0f : 0.0f);
	snprintf(what, sizeof what, "a launch for a new key value (n = 2^22) tunes first (%.2f s), then adds 1 once (%d wrong)",
	         now() - t0, wrong);
	expect(st == BLK_SUCCESS && wrong == 0, what);

	blk_devptr bx, bout;
	blk_malloc(ctx, 256 * 256 * 4, &bx);
	blk_malloc(ctx, 256 * 256 * 4, &bout);
	blk_arg bargs[3] = {blk_arg_ptr(bx), blk_arg_ptr(bout), blk_arg_int(1)};
	st = blk_autotune(kernel(m, "big"), bargs, 3, NULL, &r);
	snprintf(what, sizeof what, "a config over the device's shared memory is skipped (\"%.80s\")", r.note[0]);
	expect(st == BLK_SUCCESS && r.best == 1 && r.ms[0] < 0 && strstr(r.note[0], "shared memory"), what);

	/* ---- launch overhead of the tuned kernel, as tests/gpu measures blk_launch */
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!cuda)
		cuda = dlopen(getenv("BLK_CUDA_DRIVER") ? getenv("BLK_CUDA_DRIVER") : "libcuda.so.1", RTLD_NOW);
	int (*ModuleLoadData)(void **, const void *) = cuda ? (int (*)(void **, const void *))dlsym(cuda, "cuModuleLoadData") : NULL;
	int (*ModuleGetFunction)(void **, void *, const char *) =
		cuda ? (int (*)(void **, void *, const char *))dlsym(cuda, "cuModuleGetFunction") : NULL;
	int (*LaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
	                    void **) = cuda ? (int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                                                unsigned, void *, void **, void **))dlsym(cuda, "cuLaunchKernel")
	                                    : NULL;
	int (*CtxSynchronize)(void) = cuda ? (int (*)(void))dlsym(cuda, "cuCtxSynchronize") : NULL;
	/* blk leaves no context current on this thread: the raw launches (and
	 * blk_context_create_current below) run on device 0's primary context,
	 * which blk's own context retains too */
	int (*PrimaryRetain)(void **, int) = cuda ? (int (*)(void **, int))dlsym(cuda, "cuDevicePrimaryCtxRetain") : NULL;
	int (*CtxSetCurrent)(void *) = cuda ? (int (*)(void *))dlsym(cuda, "cuCtxSetCurrent") : NULL;
	void *primary = NULL;
	if (PrimaryRetain && CtxSetCurrent && PrimaryRetain(&primary, 0) == 0)
		CtxSetCurrent(primary);
	static const char ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
	                          ".visible .entry noop(.param .u64 a, .param .u32 n)\n{\n\tret;\n}\n";
	void *mod = NULL, *fn = NULL;
	int ok_raw = ModuleLoadData && ModuleGetFunction && LaunchKernel && CtxSynchronize &&
	             ModuleLoadData(&mod, ptx) == 0 && ModuleGetFunction(&fn, mod, "noop") == 0;
	expect(ok_raw, "a raw kernel for comparison");
	if (ok_raw) {
		blk_arg small[2] = {blk_arg_ptr(dx), blk_arg_int(100)};
		unsigned long long raw_p = dx;
		int n32 = 100;
		void *raw_args[2] = {&raw_p, &n32};
		enum { BATCH = 500, BATCHES = 21 };
		double t_blk[BATCHES], t_raw[BATCHES];
		int errors = blk_launch(inc, small, 2, NULL) != BLK_SUCCESS; /* tunes n = 100 */
		for (int i = 0; i < 200; i++) {
			errors += blk_launch(inc, small, 2, NULL) != BLK_SUCCESS;
			errors += LaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, NULL, raw_args, NULL) != 0;
		}
		CtxSynchronize();
		for (int b = 0; b < BATCHES; b++) {
			t0 = now();
			for (int i = 0; i < BATCH; i++)
				errors += blk_launch(inc, small, 2, NULL) != BLK_SUCCESS;
			t_blk[b] = (now() - t0) / BATCH;
			CtxSynchronize();
			t0 = now();
			for (int i = 0; i < BATCH; i++)
				errors += LaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, NULL, raw_args, NULL) != 0;
			t_raw[b] = (now() - t0) / BATCH;
			CtxSynchronize();
		}
		qsort(t_blk, BATCHES, sizeof(double), cmp_double);
		qsort(t_raw, BATCHES, sizeof(double), cmp_double);
		double mb = t_blk[BATCHES / 2] * 1e6, mr = t_raw[BATCHES / 2] * 1e6;
		snprintf(what, sizeof what, "launch overhead of an @autotune kernel once tuned: blk_launch %.2f us, "
		                            "cuLaunchKernel %.2f us, ratio %.2f (target <= 1.25)", mb, mr, mb / mr);
		expect(errors == 0 && mb <= 1.25 * mr + 0.25, what);
	}

	/* ---- borrowing the current (primary) context */
	blk_context *b = NULL;
	expect(blk_context_create_current(&b) == BLK_SUCCESS && vadd_check(b, 4096, -1, &info) == 0,
	       "blk_context_create_current borrows the current context: a module and a launch on it");
	blk_context_destroy(b);
	expect(vadd_check(ctx, 4096, -1, &info) == 0, "... destroying it leaves the context blk made working");

	free(pattern);
	free(back);
	blk_module_destroy(m);
	blk_context_destroy(ctx);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("     (could not remove %s)\n", tmpdir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
