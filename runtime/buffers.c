/* buffers.c: memory on a context (blk_malloc, blk_free: device memory on a
 * GPU, aligned host memory on the interpreter), the record of each
 * context's buffers, and copies to and from them. */
#include "runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Records a buffer of ctx. */
static bool add_buffer(blk_context *ctx, void *p, size_t bytes)
{
	pthread_mutex_lock(&ctx->lock);
	if (ctx->n_bufs == ctx->cap_bufs) {
		int cap = ctx->cap_bufs ? ctx->cap_bufs * 2 : 16;
		InterpBuffer *b = realloc(ctx->bufs, (size_t)cap * sizeof *b);
		if (!b) {
			pthread_mutex_unlock(&ctx->lock);
			return false;
		}
		ctx->bufs = b;
		ctx->cap_bufs = cap;
	}
	ctx->bufs[ctx->n_bufs++] = (InterpBuffer){.data = p, .bytes = bytes};
	pthread_mutex_unlock(&ctx->lock);
	return true;
}

blk_status blk_malloc(blk_context *ctx, size_t bytes, blk_devptr *out)
{
	if (!ctx || !out)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_malloc: %s is NULL", ctx ? "out" : "ctx");
	blk_status hs = rt_handle_check(ctx, H_CONTEXT, "blk_malloc");
	if (hs != BLK_SUCCESS)
		return hs;
	if (bytes == 0 || bytes > ((size_t)1 << 40))
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_malloc: cannot allocate %zu bytes", bytes);
	if (ctx->backend == BLK_BACKEND_GPU) {
		GpuScope scope;
		blk_status st = rt_gpu_push(ctx, "blk_malloc", &scope);
		if (st != BLK_SUCCESS)
			return st;
		CUdeviceptr p = 0;
		CUresult r = ctx->cu->cuMemAlloc(&p, bytes);
		if (r != CUDA_SUCCESS) {
			char msg[512];
			cuda_describe(ctx->cu, r, "cuMemAlloc_v2", msg, sizeof msg);
			st = rt_fail(cuda_blk_status(r), "blk_malloc: %s (%zu bytes)", msg, bytes);
		} else if ((r = ctx->cu->cuMemsetD8(p, 0, bytes)) != CUDA_SUCCESS) {
			/* zero-filled: ordered before later work on the default stream and
			 * on blocking streams (a copy, a launch) */
			ctx->cu->cuMemFree(p);
			st = cuda_fail(ctx, r, "blk_malloc", "cuMemsetD8_v2");
		} else if (!add_buffer(ctx, (void *)(uintptr_t)p, bytes)) {
			ctx->cu->cuMemFree(p);
			st = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc: out of memory");
		}
		rt_gpu_pop(&scope);
		if (st != BLK_SUCCESS)
			return st;
		*out = (blk_devptr)p;
		return rt_ok();
	}
	/* 256-byte alignment, as cuMemAlloc gives, so that alignment-dependent
	 * code behaves the same on both backends. */
	void *p = aligned_alloc(256, (bytes + 255) & ~(size_t)255);
	if (!p)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc: out of memory (%zu bytes)", bytes);
	memset(p, 0, bytes);
	if (!add_buffer(ctx, p, bytes)) {
		free(p);
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc: out of memory");
	}
	*out = (blk_devptr)(uintptr_t)p;
	return rt_ok();
}

/* The buffer holding [p, p + bytes), or -1. Caller holds the lock. */
int rt_find_buffer(blk_context *ctx, blk_devptr p, size_t bytes)
{
	for (int i = 0; i < ctx->n_bufs; i++) {
		uintptr_t lo = (uintptr_t)ctx->bufs[i].data;
		if (p >= lo && p - lo <= ctx->bufs[i].bytes && bytes <= ctx->bufs[i].bytes - (p - lo))
			return i;
	}
	return -1;
}

blk_status blk_free(blk_context *ctx, blk_devptr ptr)
{
	if (!ctx)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_free: ctx is NULL");
	blk_status hs = rt_handle_check(ctx, H_CONTEXT, "blk_free");
	if (hs != BLK_SUCCESS)
		return hs;
	if (!ptr)
		return rt_ok();
	pthread_mutex_lock(&ctx->lock);
	for (int i = 0; i < ctx->n_bufs; i++)
		if ((uintptr_t)ctx->bufs[i].data == ptr) {
			ctx->bufs[i] = ctx->bufs[--ctx->n_bufs];
			pthread_mutex_unlock(&ctx->lock);
			if (ctx->backend == BLK_BACKEND_GPU) {
				GpuScope scope;
				blk_status st = rt_gpu_push(ctx, "blk_free", &scope);
				if (st != BLK_SUCCESS)
					return st;
				CUresult r = ctx->cu->cuMemFree((CUdeviceptr)ptr);
				rt_gpu_pop(&scope);
				if (r != CUDA_SUCCESS)
					return cuda_fail(ctx, r, "blk_free", "cuMemFree_v2");
			} else {
				free((void *)(uintptr_t)ptr);
			}
			return rt_ok();
		}
	pthread_mutex_unlock(&ctx->lock);
	return rt_fail(BLK_ERROR_NOT_FOUND, "blk_free: 0x%llx is not memory from blk_malloc", (unsigned long long)ptr);
}

static blk_status copy(blk_context *ctx, void *host, blk_devptr dev, size_t bytes, bool to_device)
{
	const char *fn = to_device ? "blk_copy_to_device" : "blk_copy_from_device";
	if (!ctx || (!host && bytes))
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, ctx ? "the host pointer" : "ctx");
	blk_status hs = rt_handle_check(ctx, H_CONTEXT, fn);
	if (hs != BLK_SUCCESS)
		return hs;
	pthread_mutex_lock(&ctx->lock);
	int b = rt_find_buffer(ctx, dev, bytes);
	pthread_mutex_unlock(&ctx->lock);
	if (b < 0)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: [0x%llx, +%zu bytes) is not inside memory from blk_malloc", fn,
		               (unsigned long long)dev, bytes);
	if (!bytes)
		return rt_ok();
	if (ctx->backend == BLK_BACKEND_GPU) {
		/* synchronous; ordered after earlier work on the default stream */
		GpuScope scope;
		blk_status st = rt_gpu_push(ctx, fn, &scope);
		if (st != BLK_SUCCESS)
			return st;
		CUresult r = to_device ? ctx->cu->cuMemcpyHtoD((CUdeviceptr)dev, host, bytes)
		                       : ctx->cu->cuMemcpyDtoH(host, (CUdeviceptr)dev, bytes);
		rt_gpu_pop(&scope);
		if (r != CUDA_SUCCESS)
			return cuda_fail(ctx, r, fn, to_device ? "cuMemcpyHtoD_v2" : "cuMemcpyDtoH_v2");
		return rt_ok();
	}
	/* memmove: on the interpreter the host range may be (part of) the
	 * buffer itself, and may overlap it */
	if (to_device)
		memmove((void *)(uintptr_t)dev, host, bytes);
	else
		memmove(host, (const void *)(uintptr_t)dev, bytes);
	return rt_ok();
}

blk_status blk_copy_to_device(blk_context *ctx, blk_devptr dst, const void *src, size_t bytes)
{
	return copy(ctx, (void *)src, dst, bytes, true);
}

blk_status blk_copy_from_device(blk_context *ctx, void *dst, blk_devptr src, size_t bytes)
{
	return copy(ctx, dst, src, bytes, false);
}
