/* context.c: contexts on the two backends: a CUDA device opened (its
 * primary context) or the current context borrowed, its properties, the
 * printed output, synchronizing, destroying; blk_version. */
#include "runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const char *blk_version(void)
{
#ifdef BLK_VERSION
	return BLK_VERSION;
#else
	return "0.1.0";
#endif
}

const char *blk_option(int i, int *lo, int *hi, int *pow2)
{
	if (i < 0 || i >= OPTION_COUNT)
		return NULL;
	if (lo)
		*lo = option_table[i].lo;
	if (hi)
		*hi = option_table[i].hi;
	if (pow2)
		*pow2 = option_table[i].kind == OPTION_POW2;
	return option_table[i].name;
}

/* Makes ctx's CUDA context current on this thread (a check when it is). */
blk_status rt_gpu_enter(blk_context *ctx, const char *fn)
{
	CUcontext cur = NULL;
	if (ctx->cu->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx->cuctx)
		return BLK_SUCCESS;
	CUresult r = ctx->cu->cuCtxSetCurrent(ctx->cuctx);
	return r == CUDA_SUCCESS ? BLK_SUCCESS : cuda_fail(ctx, r, fn, "cuCtxSetCurrent");
}

blk_status rt_gpu_push(blk_context *ctx, const char *fn, GpuScope *s)
{
	*s = (GpuScope){0};
	if (!ctx || ctx->backend != BLK_BACKEND_GPU)
		return BLK_SUCCESS;
	CUcontext cur = NULL;
	CUresult r = ctx->cu->cuCtxGetCurrent(&cur);
	if (r != CUDA_SUCCESS)
		return cuda_fail(ctx, r, fn, "cuCtxGetCurrent");
	if (cur == ctx->cuctx)
		return BLK_SUCCESS;
	if ((r = ctx->cu->cuCtxSetCurrent(ctx->cuctx)) != CUDA_SUCCESS)
		return cuda_fail(ctx, r, fn, "cuCtxSetCurrent");
	*s = (GpuScope){ctx->cu, cur, true};
	return BLK_SUCCESS;
}

void rt_gpu_pop(GpuScope *s)
{
	if (s->swapped)
		s->cu->cuCtxSetCurrent(s->prev);
	s->swapped = false;
}

blk_context *rt_kernel_context(blk_kernel *k)
{
	pthread_mutex_lock(&k->m->lock);
	blk_context *ctx = k->m->ctx;
	pthread_mutex_unlock(&k->m->lock);
	return ctx;
}

static blk_status gpu_describe(blk_context *ctx, const char *fn);

/* Opens device `device` for ctx: the driver, the device's properties, its
 * primary context (retained, not made current: each call makes it current
 * for its own time, rt_gpu_push). On failure nothing is left held. */
static blk_status gpu_open(blk_context *ctx, int device)
{
	const char *fn = "blk_context_create";
	const char *why;
	const CudaDriver *cu = cuda_driver(&why);
	if (!cu)
		return rt_fail(BLK_ERROR_NO_DEVICE, "%s: %s", fn, why);
	ctx->cu = cu;
	int count = 0;
	CUresult r = cu->cuDeviceGetCount(&count);
	if (r != CUDA_SUCCESS)
		return cuda_fail(ctx, r, fn, "cuDeviceGetCount");
	if (count == 0)
		return rt_fail(BLK_ERROR_NO_DEVICE, "%s: the CUDA driver sees no device", fn);
	if (device < 0 || device >= count) {
		if (count == 1)
			return rt_fail(BLK_ERROR_NO_DEVICE, "%s: no CUDA device %d (there is one: 0)", fn, device);
		return rt_fail(BLK_ERROR_NO_DEVICE, "%s: no CUDA device %d (there are %d: 0 to %d)", fn, device, count,
		               count - 1);
	}
	ctx->device = device;
	if ((r = cu->cuDeviceGet(&ctx->dev, device)) != CUDA_SUCCESS)
		return cuda_fail(ctx, r, fn, "cuDeviceGet");
	blk_status st = gpu_describe(ctx, fn);
	if (st != BLK_SUCCESS)
		return st;
	if ((r = cu->cuDevicePrimaryCtxRetain(&ctx->cuctx, ctx->dev)) != CUDA_SUCCESS)
		return cuda_fail(ctx, r, fn, "cuDevicePrimaryCtxRetain");
	ctx->retained_primary = true;
	return BLK_SUCCESS;
}

/* Reads the properties of ctx->dev into ctx (ctx->device is its ordinal). */
static blk_status gpu_describe(blk_context *ctx, const char *fn)
{
	const CudaDriver *cu = ctx->cu;
	int device = ctx->device;
	CUresult r;
	if ((r = cu->cuDeviceGetName(ctx->device_name, (int)sizeof ctx->device_name, ctx->dev)) != CUDA_SUCCESS)
		return cuda_fail(ctx, r, fn, "cuDeviceGetName");
	ctx->device_name[sizeof ctx->device_name - 1] = '\0';
	struct {
		int attr;
		int *out;
	} attrs[] = {
		{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &ctx->cc_major},
		{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &ctx->cc_minor},
		{CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &ctx->sm_count},
		{CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &ctx->smem_optin},
		{CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &ctx->max_threads},
		{CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, (int *)&ctx->max_grid[0]},
		{CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, (int *)&ctx->max_grid[1]},
		{CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, (int *)&ctx->max_grid[2]},
	};
	for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
		if ((r = cu->cuDeviceGetAttribute(attrs[i].out, attrs[i].attr, ctx->dev)) != CUDA_SUCCESS)
			return cuda_fail(ctx, r, fn, "cuDeviceGetAttribute");
	if (!cuda_arch_for(ctx->cc_major, ctx->cc_minor, ctx->arch, sizeof ctx->arch))
		return rt_fail(BLK_ERROR_NO_DEVICE,
		               "%s: CUDA device %d (%s) has compute capability %d.%d; blk needs 7.0 or newer", fn, device,
		               ctx->device_name, ctx->cc_major, ctx->cc_minor);
	/* for timing and the cache's key only: an old driver without them is no error */
	if (cu->cuDeviceGetAttribute(&ctx->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, ctx->dev) != CUDA_SUCCESS ||
	    ctx->l2_bytes < 0)
		ctx->l2_bytes = 0;
	if (cu->cuDriverGetVersion(&ctx->driver_version) != CUDA_SUCCESS)
		ctx->driver_version = 0;
	const char *dbg = getenv("BLK_DEBUG");
	ctx->debug = dbg && dbg[0] && strcmp(dbg, "0") != 0;
	/* TMA copies of tensor-descriptor tiles, where the device and driver can */
	ctx->tma_ok = cu->cuTensorMapEncodeTiled && strcmp(ctx->arch, "sm_90a") == 0;
	return BLK_SUCCESS;
}

/* The options' defaults: the table's, or the integer in an option's
 * environment variable (BLK_TMA=1: TMA copies unless a launch's tma says
 * 0; opt-in until measured faster). TMA and warp specialization need a
 * device that can. */
static void option_defaults(blk_context *ctx)
{
	for (int i = 0; i < OPTION_COUNT; i++) {
		const char *env = option_table[i].env ? getenv(option_table[i].env) : NULL;
		char *end = NULL;
		long v = env && *env ? strtol(env, &end, 10) : 0;
		bool set = env && *env && !*end && v >= option_table[i].lo && v <= option_table[i].hi;
		ctx->option_defaults[i] = set ? (int)v : option_table[i].dflt;
	}
	if (!ctx->tma_ok)
		ctx->option_defaults[OPTION_tma] = ctx->option_defaults[OPTION_warp_specialize] = 0;
}

blk_status blk_context_create(blk_backend backend, int device, blk_context **out)
{
	if (!out)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_context_create: out is NULL");
	*out = NULL;
	bool automatic = false; /* AUTO without BLK_BACKEND: the GPU if one can be used */
	if (backend == BLK_BACKEND_AUTO) {
		const char *env = getenv("BLK_BACKEND");
		if (env && strcmp(env, "gpu") == 0)
			backend = BLK_BACKEND_GPU;
		else if (env && (strcmp(env, "interpreter") == 0 || strcmp(env, "interp") == 0))
			backend = BLK_BACKEND_INTERPRETER;
		else if (env && env[0])
			return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "BLK_BACKEND='%s': expected gpu or interpreter", env);
		else {
			backend = BLK_BACKEND_GPU;
			automatic = true;
		}
	}
	if (backend != BLK_BACKEND_INTERPRETER && backend != BLK_BACKEND_GPU)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_context_create: unknown backend %d", (int)backend);
	blk_context *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_context_create: out of memory");
	ctx->backend = backend;
	ctx->device = device;
	if (backend == BLK_BACKEND_GPU) {
		blk_status st = gpu_open(ctx, device);
		if (st != BLK_SUCCESS && !automatic) {
			free(ctx);
			return st;
		}
		if (st != BLK_SUCCESS) {
			/* AUTO: no usable GPU, the interpreter then, silently */
			memset(ctx, 0, sizeof *ctx);
			ctx->backend = BLK_BACKEND_INTERPRETER;
			ctx->device = device;
		}
	}
	option_defaults(ctx);
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->flush_lock, NULL);
	rt_handle_add(ctx, H_CONTEXT);
	*out = ctx;
	return rt_ok();
}

blk_status blk_context_create_current(blk_context **out)
{
	const char *fn = "blk_context_create_current";
	if (!out)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: out is NULL", fn);
	*out = NULL;
	const char *why;
	const CudaDriver *cu = cuda_driver(&why);
	if (!cu)
		return rt_fail(BLK_ERROR_NO_DEVICE, "%s: %s", fn, why);
	CUcontext cur = NULL;
	CUresult r = cu->cuCtxGetCurrent(&cur);
	if (r != CUDA_SUCCESS)
		return cuda_fail(NULL, r, fn, "cuCtxGetCurrent");
	if (!cur)
		return rt_fail(BLK_ERROR_NO_DEVICE, "%s: no CUDA context is current on this thread", fn);
	blk_context *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
	ctx->backend = BLK_BACKEND_GPU;
	ctx->cu = cu;
	ctx->cuctx = cur; /* borrowed: neither retained nor destroyed here */
	blk_status st = BLK_SUCCESS;
	if ((r = cu->cuCtxGetDevice(&ctx->dev)) != CUDA_SUCCESS)
		st = cuda_fail(ctx, r, fn, "cuCtxGetDevice");
	if (st == BLK_SUCCESS) {
		ctx->device = (int)ctx->dev; /* a CUdevice is its ordinal */
		st = gpu_describe(ctx, fn);
	}
	if (st != BLK_SUCCESS) {
		free(ctx);
		return st;
	}
	option_defaults(ctx);
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->flush_lock, NULL);
	rt_handle_add(ctx, H_CONTEXT);
	*out = ctx;
	return rt_ok();
}

void blk_context_destroy(blk_context *ctx)
{
	if (!ctx || rt_handle_check(ctx, H_CONTEXT, "blk_context_destroy") != BLK_SUCCESS)
		return;
	/* modules that outlive their context lose their GPU code and fail to
	 * launch rather than crash */
	GpuScope scope;
	bool current = rt_gpu_push(ctx, "blk_context_destroy", &scope) == BLK_SUCCESS;
	rt_orphan_modules(ctx);
	if (ctx->backend == BLK_BACKEND_GPU && current) {
		for (int i = 0; i < ctx->n_bufs; i++)
			ctx->cu->cuMemFree((CUdeviceptr)(uintptr_t)ctx->bufs[i].data);
		if (ctx->flush_buf)
			ctx->cu->cuMemFree(ctx->flush_buf);
	} else if (ctx->backend == BLK_BACKEND_INTERPRETER) {
		for (int i = 0; i < ctx->n_bufs; i++)
			free(ctx->bufs[i].data);
	}
	rt_gpu_pop(&scope);
	if (ctx->retained_primary)
		ctx->cu->cuDevicePrimaryCtxRelease(ctx->dev);
	free(ctx->bufs);
	sb_free(&ctx->printed);
	sb_free(&ctx->printed_out);
	sb_free(&ctx->warnings);
	sb_free(&ctx->warnings_out);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->flush_lock);
	if (!rt_handle_dead(ctx)) /* BLK_DEBUG=1 keeps its bytes: no new context gets its address */
		free(ctx);
}

blk_backend blk_context_backend(const blk_context *ctx)
{
	if (!ctx || rt_handle_check(ctx, H_CONTEXT, "blk_context_backend") != BLK_SUCCESS)
		return BLK_BACKEND_AUTO;
	return ctx->backend;
}

/* What `in` collected since the last call, handed out through `out` (kept
 * until the next call); in starts again empty. */
static const char *take_text(blk_context *ctx, StrBuf *in, StrBuf *out)
{
	pthread_mutex_lock(&ctx->lock);
	StrBuf t = *out;
	*out = *in;
	*in = t;
	in->len = 0;
	if (in->data)
		in->data[0] = '\0';
	pthread_mutex_unlock(&ctx->lock);
	return out->data && !out->failed ? out->data : "";
}

const char *blk_context_printed(blk_context *ctx)
{
	if (!ctx || rt_handle_check(ctx, H_CONTEXT, "blk_context_printed") != BLK_SUCCESS)
		return "";
	return take_text(ctx, &ctx->printed, &ctx->printed_out);
}

const char *blk_context_warnings(blk_context *ctx)
{
	if (!ctx || rt_handle_check(ctx, H_CONTEXT, "blk_context_warnings") != BLK_SUCCESS)
		return "";
	return take_text(ctx, &ctx->warnings, &ctx->warnings_out);
}

void rt_cache_warning(blk_context *ctx)
{
	char why[2048];
	if (!cache_take_refusal(why, sizeof why) || !ctx)
		return;
	uint64_t h = 14695981039346656037ull; /* FNV-1a */
	for (const char *p = why; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	pthread_mutex_lock(&ctx->lock);
	if (h != ctx->cache_warned) {
		ctx->cache_warned = h;
		sb_printf(&ctx->warnings, "warning: %s\n", why);
	}
	pthread_mutex_unlock(&ctx->lock);
}

blk_status blk_synchronize(blk_context *ctx)
{
	if (!ctx)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_synchronize: ctx is NULL");
	blk_status hs = rt_handle_check(ctx, H_CONTEXT, "blk_synchronize");
	if (hs != BLK_SUCCESS)
		return hs;
	if (ctx->backend != BLK_BACKEND_GPU)
		return rt_ok();
	GpuScope scope;
	blk_status st = rt_gpu_push(ctx, "blk_synchronize", &scope);
	if (st != BLK_SUCCESS)
		return st;
	CUresult r = ctx->cu->cuCtxSynchronize();
	rt_gpu_pop(&scope);
	if (r != CUDA_SUCCESS)
		return cuda_fail(ctx, r, "blk_synchronize", "cuCtxSynchronize");
	return rt_ok();
}
