/* timing.c: the clock, medians, and launches timed (blk_time_launch): with
 * CUDA events, the L2 cache flushed before each run, on the GPU; by the
 * wall clock on the interpreter. */
#include "runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

double rt_monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double rt_median_of(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The buffer timed runs write to flush the L2 cache: twice its size, made
 * at the first use; none (0 bytes) when the size is unknown or it cannot
 * be had. */
static void flush_buffer(blk_context *ctx, CUdeviceptr *p, size_t *bytes)
{
	pthread_mutex_lock(&ctx->flush_lock);
	if (!ctx->flush_buf && ctx->l2_bytes > 0) {
		size_t want = 2 * (size_t)ctx->l2_bytes;
		if (ctx->cu->cuMemAlloc(&ctx->flush_buf, want) == CUDA_SUCCESS)
			ctx->flush_bytes = want;
		else
			ctx->flush_buf = 0;
	}
	*p = ctx->flush_buf;
	*bytes = ctx->flush_buf ? ctx->flush_bytes : 0;
	pthread_mutex_unlock(&ctx->flush_lock);
}

/* Times v on the GPU: `warmups` launches, then `reps` launches each
 * between two events on the launch's stream, the L2 cache flushed before
 * each; the median in milliseconds. */
blk_status rt_time_gpu(blk_context *ctx, Variant *v, const blk_arg *args, int n_args, const unsigned grid[3],
                    const blk_launch_options *opt, int warmups, int reps, double *median)
{
	const CudaDriver *cu = ctx->cu;
	const char *fn = "blk_time_launch";
	CUstream stream = opt ? (CUstream)opt->stream : NULL;
	blk_status st = BLK_SUCCESS;
	for (int i = 0; i < warmups && st == BLK_SUCCESS; i++)
		st = rt_gpu_launch(ctx, v, args, n_args, grid, opt);
	if (st != BLK_SUCCESS)
		return st;
	CUdeviceptr flush;
	size_t flush_bytes;
	flush_buffer(ctx, &flush, &flush_bytes);
	CUevent *ev = calloc((size_t)reps * 2, sizeof *ev);
	double *ms = malloc((size_t)reps * sizeof *ms);
	if (!ev || !ms) {
		free(ev);
		free(ms);
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
	}
	CUresult r = CUDA_SUCCESS;
	const char *call = "cuEventCreate";
	int made = 0;
	while (made < 2 * reps && (r = cu->cuEventCreate(&ev[made], CU_EVENT_DEFAULT)) == CUDA_SUCCESS)
		made++;
	for (int i = 0; r == CUDA_SUCCESS && st == BLK_SUCCESS && i < reps; i++) {
		call = "cuMemsetD8Async";
		if (flush_bytes && (r = cu->cuMemsetD8Async(flush, (unsigned char)i, flush_bytes, stream)) != CUDA_SUCCESS)
			break;
		call = "cuEventRecord";
		if ((r = cu->cuEventRecord(ev[2 * i], stream)) != CUDA_SUCCESS)
			break;
		if ((st = rt_gpu_launch(ctx, v, args, n_args, grid, opt)) != BLK_SUCCESS)
			break;
		r = cu->cuEventRecord(ev[2 * i + 1], stream);
	}
	if (r == CUDA_SUCCESS && st == BLK_SUCCESS) {
		call = "cuEventSynchronize";
		r = cu->cuEventSynchronize(ev[2 * reps - 1]);
	}
	for (int i = 0; r == CUDA_SUCCESS && st == BLK_SUCCESS && i < reps; i++) {
		float t = 0;
		call = "cuEventElapsedTime";
		r = cu->cuEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]);
		ms[i] = t;
	}
	for (int i = 0; i < made; i++)
		cu->cuEventDestroy(ev[i]);
	if (st == BLK_SUCCESS && r != CUDA_SUCCESS)
		st = cuda_fail(ctx, r, fn, call);
	if (st == BLK_SUCCESS)
		*median = rt_median_of(ms, reps);
	free(ev);
	free(ms);
	return st;
}

/* Times v on the interpreter: one launch, then `reps` by the wall clock. */
static blk_status time_interp(blk_context *ctx, blk_kernel *k, Variant *v, const blk_arg *args, int n_args,
                              const unsigned grid[3], const blk_launch_options *opt, int reps, double *median)
{
	double *ms = malloc((size_t)reps * sizeof *ms);
	if (!ms)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_time_launch: out of memory");
	blk_status st = rt_interp_launch(ctx, k, v, args, n_args, grid, opt);
	for (int i = 0; i < reps && st == BLK_SUCCESS; i++) {
		double t0 = rt_monotonic_ms();
		st = rt_interp_launch(ctx, k, v, args, n_args, grid, opt);
		ms[i] = rt_monotonic_ms() - t0;
	}
	if (st == BLK_SUCCESS)
		*median = rt_median_of(ms, reps);
	free(ms);
	return st;
}

blk_status blk_time_launch(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt, int reps,
                           double *median_ms)
{
	if (!k || !median_ms)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_time_launch: %s is NULL", k ? "median_ms" : "kernel");
	blk_status hs = rt_handle_check(k, H_KERNEL, "blk_time_launch");
	if (hs != BLK_SUCCESS)
		return hs;
	if (reps < 1 || reps > 100000)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_time_launch: reps is %d (1 to 100000)", reps);
	*median_ms = 0;
	unsigned grid[3];
	Variant *v;
	blk_context *ctx;
	GpuScope scope;
	blk_status st = rt_gpu_push(rt_kernel_context(k), "blk_time_launch", &scope);
	if (st == BLK_SUCCESS)
		st = rt_prepare_launch(k, args, n_args, opt, "blk_time_launch", &ctx, &v, grid);
	if (st == BLK_SUCCESS && ctx->backend == BLK_BACKEND_GPU)
		st = rt_time_gpu(ctx, v, args, n_args, grid, opt, 3, reps, median_ms);
	else if (st == BLK_SUCCESS)
		st = time_interp(ctx, k, v, args, n_args, grid, opt, reps, median_ms);
	rt_gpu_pop(&scope);
	return st == BLK_SUCCESS ? rt_ok() : st;
}
