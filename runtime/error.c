/* error.c: the runtime's errors: each thread's last message (blk_last_error),
 * set or cleared by every blk_* call, and what a failed driver call means
 * to a caller of blk.h. */
#include "runtime.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>

static _Thread_local StrBuf last_error;

/* The message's memory is freed when its thread ends: a key whose value is
 * the thread's buffer. */
static pthread_once_t error_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t error_key;
static bool error_key_ok;

static void make_error_key(void) { error_key_ok = pthread_key_create(&error_key, free) == 0; }

blk_status rt_fail(blk_status status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *old = last_error.data;
	last_error.len = 0;
	if (last_error.data)
		last_error.data[0] = '\0';
	sb_vprintf(&last_error, fmt, ap);
	va_end(ap);
	if (last_error.data != old) {
		pthread_once(&error_key_once, make_error_key);
		if (error_key_ok)
			pthread_setspecific(error_key, last_error.data);
	}
	return status;
}

blk_status rt_ok(void)
{
	last_error.len = 0;
	if (last_error.data)
		last_error.data[0] = '\0';
	return BLK_SUCCESS;
}

const char *blk_last_error(void)
{
	return last_error.data && !last_error.failed ? last_error.data : "";
}

/* Reports a failed driver call made for `fn`. */
blk_status cuda_fail(blk_context *ctx, CUresult r, const char *fn, const char *call)
{
	char msg[512];
	cuda_describe(ctx ? ctx->cu : NULL, r, call, msg, sizeof msg);
	if (cuda_error_is_sticky(r))
		return rt_fail(cuda_blk_status(r),
		               "%s: %s; a kernel faulted and the GPU context is unusable from here on "
		               "(BLK_DEBUG=1 synchronizes after each launch and names the kernel)", fn, msg);
	return rt_fail(cuda_blk_status(r), "%s: %s", fn, msg);
}

/* What a failed driver call means to a caller of blk.h (runtime.h says which). */
blk_status cuda_blk_status(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS:
		return BLK_SUCCESS;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return BLK_ERROR_OUT_OF_MEMORY;
	case CUDA_ERROR_NOT_INITIALIZED:
	case CUDA_ERROR_DEINITIALIZED:
	case 34:  /* STUB_LIBRARY */
	case 36:  /* CALL_REQUIRES_NEWER_DRIVER */
	case 46:  /* DEVICE_UNAVAILABLE */
	case CUDA_ERROR_NO_DEVICE:
	case CUDA_ERROR_INVALID_DEVICE:
	case 102: /* DEVICE_NOT_LICENSED */
	case 216: /* CONTEXT_ALREADY_IN_USE */
	case 221: /* JIT_COMPILER_NOT_FOUND */
	case 222: /* UNSUPPORTED_PTX_VERSION: the driver is older than the PTX */
	case 223: /* JIT_COMPILATION_DISABLED */
	case 802: /* SYSTEM_NOT_READY */
	case 803: /* SYSTEM_DRIVER_MISMATCH */
	case 804: /* COMPAT_NOT_SUPPORTED_ON_DEVICE */
		return BLK_ERROR_NO_DEVICE;
	default:
		return BLK_ERROR_LAUNCH;
	}
}
