/* launch.c: the host cost of a launch from C, blk_launch against a raw
 * cuLaunchKernel of the same kernel.
 *
 *   build/bench/launch [--no-check] [DEVICE]   (make bench-bins builds it; bench.py runs it)
 *
 * For a kernel of 3 arguments and one of 20 (pointers, i32, i64 and f32
 * scalars), each one program of 128 threads on a few floats:
 *
 *   raw  the PTX that blk_kernel_compile gives for the very variant blk_launch
 *        runs, compiled and loaded by the driver's JIT with cuModuleLoadDataEx
 *        (as libblk does) and launched with cuLaunchKernel
 *        on the default stream, its arguments in an array built once;
 *   blk  blk_launch of the kernel (the cached path: compiled before, the
 *        blk_arg array and the options built once), on the default stream.
 *
 * Both are checked first (each writes the output, which is read back and
 * compared). Then, after 1000 warm-up launches each, 10,000 launches each,
 * every launch timed alone on the host (CLOCK_MONOTONIC around the call, the
 * clock's own cost subtracted), no synchronization between them: in 20
 * batches of 500, raw and blk taking turns batch by batch (which goes first
 * alternates), with a synchronization between batches, outside the timed
 * part, so that the GPU's launch queue never fills and the time is the host's
 * alone. The median of the 10,000 is the figure. Also 10,000 launches in a
 * row, one synchronization after: the host time over 10,000, and with the
 * synchronization (this one can be bound by the GPU's rate of running them).
 *
 * Output: readable lines, and for each kernel one line for bench.py:
 *   RESULT args=3 raw_us=... blk_us=... ratio=... raw_row_us=... blk_row_us=...
 *          raw_row_sync_us=... blk_row_sync_us=... timer_ns=... launches=10000
 * Without a usable GPU: one line "launch: no GPU: WHY" and exit status 0.
 * Exit status 1 when a launch fails or computes a wrong result. --no-check
 * leaves the results unread: for the stand-in driver of tests/runtime
 * (BLK_CUDA_DRIVER=build/tests/runtime/fake/libcuda.so.1), which runs no
 * kernel, so that the program's own paths can be tried without a GPU.
 *
 * The driver is reached through dlopen("libcuda.so.1") (or $BLK_CUDA_DRIVER,
 * as libblk does), so this program needs nothing of the CUDA toolkit. */
#include "blk.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;

enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };

static struct {
	CUresult (*Init)(unsigned);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*FuncSetAttribute)(CUfunction, int, int);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
	                         void **, void **);
} cu;

static const char source[] =
	"kernel args3(x: *f32, out: *f32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let mask = offs < n;\n"
	"    store(out + offs, load(x + offs, mask = mask) + 1.0, mask = mask);\n"
	"}\n"
	"\n"
	"kernel args20(p0: *f32, p1: *f32, p2: *f32, p3: *f32, p4: *f32, p5: *f32, p6: *f32, p7: *f32, out: *f32,\n"
	"              i0: i32, i1: i32, i2: i32, i3: i32, i4: i32, i5: i32, big: i64,\n"
	"              f0: f32, f1: f32, f2: f32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let mask = offs < n;\n"
	"    let v = load(p0 + offs, mask = mask) + load(p1 + offs, mask = mask) + load(p2 + offs, mask = mask)\n"
	"          + load(p3 + offs, mask = mask) + load(p4 + offs, mask = mask) + load(p5 + offs, mask = mask)\n"
	"          + load(p6 + offs, mask = mask) + load(p7 + offs, mask = mask);\n"
	"    let s = (i0 + i1 + i2 + i3 + i4 + i5).to(f32) + big.to(f32) + f0 * f1 + f2;\n"
	"    store(out + offs, v + s, mask = mask);\n"
	"}\n";

enum { N = 100, MAX_ARGS = 20, WARMUP = 1000, BATCH = 500, BATCHES = 20, LAUNCHES = BATCH * BATCHES };

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The cost of reading the clock twice in a row (subtracted from each launch's time). */
static double timer_ns(void)
{
	static double d[10001];
	for (int i = 0; i < 10001; i++) {
		double t0 = now_ns();
		d[i] = now_ns() - t0;
	}
	return median(d, 10001);
}

static int no_gpu(const char *why)
{
	printf("launch: no GPU: %s\n", why);
	return 0;
}

static void *sym(void *h, const char *name, int *missing)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "launch: the driver has no %s\n", name);
		(*missing)++;
	}
	return p;
}

static int load_driver(void)
{
	const char *path = getenv("BLK_CUDA_DRIVER");
	void *h = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW);
	if (!h)
		return -1;
	int missing = 0;
	cu.Init = (CUresult(*)(unsigned))sym(h, "cuInit", &missing);
	cu.DeviceGet = (CUresult(*)(CUdevice *, int))sym(h, "cuDeviceGet", &missing);
	cu.DeviceGetName = (CUresult(*)(char *, int, CUdevice))sym(h, "cuDeviceGetName", &missing);
	cu.PrimaryCtxRetain = (CUresult(*)(CUcontext *, CUdevice))sym(h, "cuDevicePrimaryCtxRetain", &missing);
	cu.CtxSetCurrent = (CUresult(*)(CUcontext))sym(h, "cuCtxSetCurrent", &missing);
	cu.CtxSynchronize = (CUresult(*)(void))sym(h, "cuCtxSynchronize", &missing);
	cu.ModuleLoadDataEx =
		(CUresult(*)(CUmodule *, const void *, unsigned, int *, void **))sym(h, "cuModuleLoadDataEx", &missing);
	cu.ModuleGetFunction = (CUresult(*)(CUfunction *, CUmodule, const char *))sym(h, "cuModuleGetFunction", &missing);
	cu.FuncSetAttribute = (CUresult(*)(CUfunction, int, int))sym(h, "cuFuncSetAttribute", &missing);
	cu.LaunchKernel = (CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                               void *, void **, void **))sym(h, "cuLaunchKernel", &missing);
	return missing ? -2 : 0;
}

/* One kernel's two launches: the blk arguments and the raw ones (each in
 * the size its PTX parameter has), the function, the output. */
typedef struct Case {
	const char *name, *what;
	int n_args;
	blk_kernel *k;
	blk_arg args[MAX_ARGS];
	union {
		uint64_t u64;
		int32_t i32;
		float f32;
	} raw[MAX_ARGS];
	void *raw_ptrs[MAX_ARGS];
	CUfunction fn;
	unsigned block, smem;
	blk_devptr out;
	float expect; /* every output element */
	blk_devptr bufs[MAX_ARGS];
	int n_bufs;
} Case;

static blk_launch_options opts = {.grid = {1, 1, 1}};
static int no_check;

static blk_devptr filled(blk_context *ctx, float value)
{
	float h[N];
	for (int i = 0; i < N; i++)
		h[i] = value;
	blk_devptr p = 0;
	if (blk_malloc(ctx, sizeof h, &p) != BLK_SUCCESS || blk_copy_to_device(ctx, p, h, sizeof h) != BLK_SUCCESS)
		return 0;
	return p;
}

static void add_ptr(Case *c, blk_devptr p)
{
	c->args[c->n_args] = blk_arg_ptr(p);
	c->raw[c->n_args].u64 = p;
	c->n_args++;
	c->bufs[c->n_bufs++] = p;
}

static void add_i32(Case *c, int32_t v)
{
	c->args[c->n_args] = blk_arg_int(v);
	c->raw[c->n_args].i32 = v;
	c->n_args++;
}

static void add_i64(Case *c, int64_t v)
{
	c->args[c->n_args] = blk_arg_int(v);
	c->raw[c->n_args].u64 = (uint64_t)v;
	c->n_args++;
}

static void add_f32(Case *c, float v)
{
	c->args[c->n_args] = blk_arg_float(v);
	c->raw[c->n_args].f32 = v;
	c->n_args++;
}

static int setup(blk_context *ctx, blk_module *m, Case *c, int twenty)
{
	memset(c->raw, 0, sizeof c->raw);
	c->n_args = c->n_bufs = 0;
	if (!twenty) {
		c->name = "args3";
		c->what = "2 pointers, 1 i32";
		add_ptr(c, filled(ctx, 2.5f));
		c->out = filled(ctx, 0.0f);
		add_ptr(c, c->out);
		add_i32(c, N);
		c->expect = 3.5f;
	} else {
		c->name = "args20";
		c->what = "9 pointers, 7 i32, 1 i64, 3 f32";
		for (int j = 0; j < 8; j++)
			add_ptr(c, filled(ctx, (float)(j + 1))); /* v = 36 */
		c->out = filled(ctx, 0.0f);
		add_ptr(c, c->out);
		for (int j = 0; j < 6; j++)
			add_i32(c, j + 1); /* 21 */
		add_i64(c, 1000);
		add_f32(c, 0.5f);
		add_f32(c, 4.0f);
		add_f32(c, 0.25f); /* s = 21 + 1000 + 2 + 0.25 */
		add_i32(c, N);
		c->expect = 36.0f + 1023.25f;
	}
	for (int i = 0; i < c->n_bufs; i++)
		if (!c->bufs[i]) {
			fprintf(stderr, "launch: blk_malloc: %s\n", blk_last_error());
			return -1;
		}
	for (int i = 0; i < c->n_args; i++)
		c->raw_ptrs[i] = &c->raw[i];
	if (blk_kernel_get(m, c->name, &c->k) != BLK_SUCCESS) {
		fprintf(stderr, "launch: blk_kernel_get(%s): %s\n", c->name, blk_last_error());
		return -1;
	}
	/* the variant blk_launch runs: its PTX, made a cubin as libblk makes it */
	blk_compile_info info;
	if (blk_kernel_compile(c->k, c->args, c->n_args, &opts, &info) != BLK_SUCCESS || !info.ptx) {
		fprintf(stderr, "launch: blk_kernel_compile(%s): %s\n", c->name, blk_last_error());
		return -1;
	}
	c->block = 32u * (unsigned)info.num_warps;
	c->smem = (unsigned)info.shared_bytes;
	CUmodule mod = NULL;
	const char *call = "cuModuleLoadDataEx";
	CUresult r = cu.ModuleLoadDataEx(&mod, info.ptx, 0, NULL, NULL);
	if (r == 0) {
		call = "cuModuleGetFunction";
		r = cu.ModuleGetFunction(&c->fn, mod, c->name);
	}
	if (r == 0 && c->smem > 48 * 1024) {
		call = "cuFuncSetAttribute";
		r = cu.FuncSetAttribute(c->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)c->smem);
	}
	if (r != 0) {
		fprintf(stderr, "launch: %s (raw %s): CUDA error %d\n", call, c->name, r);
		return -1;
	}
	return 0;
}

static CUresult raw_launch(Case *c)
{
	return cu.LaunchKernel(c->fn, 1, 1, 1, c->block, 1, 1, c->smem, NULL, c->raw_ptrs, NULL);
}

static int blk_go(Case *c)
{
	return blk_launch(c->k, c->args, c->n_args, &opts) != BLK_SUCCESS;
}

/* Zeroes the output, runs one launch of `raw` or blk, checks every element. */
static int check(blk_context *ctx, Case *c, int raw)
{
	float h[N];
	memset(h, 0, sizeof h);
	blk_copy_to_device(ctx, c->out, h, sizeof h);
	int bad = raw ? raw_launch(c) != 0 : blk_go(c);
	bad = bad || cu.CtxSynchronize() != 0 || blk_copy_from_device(ctx, h, c->out, sizeof h) != BLK_SUCCESS;
	int wrong = 0;
	for (int i = 0; i < N && !bad && !no_check; i++)
		wrong += h[i] != c->expect;
	if (bad || wrong)
		fprintf(stderr, "launch: %s (%s): %s (out[0] = %g, expected %g)%s%s\n", c->name, raw ? "cuLaunchKernel" : "blk_launch",
		        bad ? "the launch failed" : "a wrong result", (double)h[0], (double)c->expect, raw ? "" : ": ",
		        raw ? "" : blk_last_error());
	return bad || wrong;
}

static double t_raw[LAUNCHES], t_blk[LAUNCHES];

/* One batch of BATCH launches, each timed; returns the number that failed. */
static int batch(Case *c, int raw, double *t, double clock_cost)
{
	int errors = 0;
	for (int i = 0; i < BATCH; i++) {
		double t0 = now_ns();
		errors += raw ? raw_launch(c) != 0 : blk_go(c);
		t[i] = (now_ns() - t0 - clock_cost) * 1e-3;
	}
	return errors;
}

/* LAUNCHES in a row, one synchronization after: us a launch, host and with the synchronization. */
static int in_a_row(Case *c, int raw, double *host_us, double *sync_us)
{
	int errors = 0;
	double t0 = now_ns();
	for (int i = 0; i < LAUNCHES; i++)
		errors += raw ? raw_launch(c) != 0 : blk_go(c);
	double t1 = now_ns();
	errors += cu.CtxSynchronize() != 0;
	double t2 = now_ns();
	*host_us = (t1 - t0) * 1e-3 / LAUNCHES;
	*sync_us = (t2 - t0) * 1e-3 / LAUNCHES;
	return errors;
}

static int measure(blk_context *ctx, Case *c, double clock_cost)
{
	if (check(ctx, c, 1) || check(ctx, c, 0))
		return 1;
	int errors = 0;
	for (int i = 0; i < WARMUP; i++) {
		errors += raw_launch(c) != 0;
		errors += blk_go(c);
	}
	errors += cu.CtxSynchronize() != 0;
	for (int b = 0; b < BATCHES; b++) {
		for (int turn = 0; turn < 2; turn++) {
			int raw = (turn == 0) == (b % 2 == 0);
			errors += batch(c, raw, (raw ? t_raw : t_blk) + b * BATCH, clock_cost);
			errors += cu.CtxSynchronize() != 0;
		}
	}
	double raw_row, raw_row_sync, blk_row, blk_row_sync;
	errors += in_a_row(c, 1, &raw_row, &raw_row_sync);
	errors += in_a_row(c, 0, &blk_row, &blk_row_sync);
	if (errors) {
		fprintf(stderr, "launch: %s: %d launches failed: %s\n", c->name, errors, blk_last_error());
		return 1;
	}
	if (check(ctx, c, 1) || check(ctx, c, 0))
		return 1;
	double raw_us = median(t_raw, LAUNCHES), blk_us = median(t_blk, LAUNCHES);
	printf("launch: %d args (%s): cuLaunchKernel %.3f us, blk_launch %.3f us a launch, blk/raw %.3f "
	       "(median of %d, each timed, batches of %d)\n",
	       c->n_args, c->what, raw_us, blk_us, blk_us / raw_us, LAUNCHES, BATCH);
	printf("launch: %d args: %d in a row, then one sync: cuLaunchKernel %.3f us host (%.3f with the sync), "
	       "blk_launch %.3f us host (%.3f with the sync)\n",
	       c->n_args, LAUNCHES, raw_row, raw_row_sync, blk_row, blk_row_sync);
	printf("RESULT args=%d raw_us=%.4f blk_us=%.4f ratio=%.4f raw_row_us=%.4f blk_row_us=%.4f raw_row_sync_us=%.4f "
	       "blk_row_sync_us=%.4f timer_ns=%.1f launches=%d\n",
	       c->n_args, raw_us, blk_us, blk_us / raw_us, raw_row, blk_row, raw_row_sync, blk_row_sync, clock_cost,
	       LAUNCHES);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int device = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-check") == 0) {
			no_check = 1;
		} else if (argv[i][0] >= '0' && argv[i][0] <= '9') {
			device = atoi(argv[i]);
		} else {
			fprintf(stderr, "usage: %s [--no-check] [DEVICE]\n", argv[0]);
			return 2;
		}
	}
	blk_context *ctx = NULL;
	if (blk_context_create(BLK_BACKEND_GPU, device, &ctx) != BLK_SUCCESS)
		return no_gpu(blk_last_error());
	int d = load_driver();
	if (d == -1) {
		blk_context_destroy(ctx);
		return no_gpu("libblk has a GPU context but dlopen(\"libcuda.so.1\") failed here");
	}
	CUdevice dev = 0;
	CUcontext primary = NULL;
	/* blk's context is the device's primary context: make it current here too */
	if (d != 0 || cu.Init(0) != 0 || cu.DeviceGet(&dev, device) != 0 || cu.PrimaryCtxRetain(&primary, dev) != 0 ||
	    cu.CtxSetCurrent(primary) != 0) {
		fprintf(stderr, "launch: the driver's primary context of device %d cannot be made current\n", device);
		blk_context_destroy(ctx);
		return 1;
	}
	char name[256] = "?";
	cu.DeviceGetName(name, sizeof name, dev);
	printf("launch: %s, libblk %s\n", name, blk_version());
	blk_module *m = NULL;
	if (blk_module_load_source(ctx, "launch.tile", source, sizeof source - 1, NULL, &m) != BLK_SUCCESS) {
		fprintf(stderr, "launch: %s\n", blk_last_error());
		blk_context_destroy(ctx);
		return 1;
	}
	double clock_cost = timer_ns();
	printf("launch: reading the clock costs %.1f ns (subtracted)\n", clock_cost);
	int failed = 0;
	static Case cases[2];
	for (int i = 0; i < 2 && !failed; i++)
		failed = setup(ctx, m, &cases[i], i) || measure(ctx, &cases[i], clock_cost);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < cases[i].n_bufs; j++)
			blk_free(ctx, cases[i].bufs[j]);
	blk_module_destroy(m);
	blk_context_destroy(ctx);
	return failed;
}
