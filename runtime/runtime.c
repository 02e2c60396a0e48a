/* runtime.c: the public API of libblk (blk.h): errors, contexts, memory,
 * modules, kernels, variants and launches, on two backends.
 *
 * The interpreter runs kernels on the CPU with every access checked. The
 * GPU backend (driver.c loads the CUDA driver) compiles each variant to PTX
 * at its first launch (gpu_compile_ptx_timed), links it in process
 * (cuLink*) or takes the cubin from the disk cache (cache.c), keeps the
 * CUfunction with the variant, and launches with cuLaunchKernel,
 * asynchronously (BLK_DEBUG=1: synchronizing after each launch, to name
 * the kernel that faulted). Device printf goes to the process's stdout;
 * blk_context_printed gives "" there. Copies are synchronous and ordered
 * after earlier work on the default stream.
 *
 * Timing (blk_time_launch, autotuning) uses CUDA events on the launch's
 * stream with the L2 cache flushed between runs, or the wall clock on the
 * interpreter. An @autotune kernel whose launch leaves a config's const
 * open is tuned at the first launch for each value of its key (see
 * "autotuning" below). */
#include "blk.h"
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "lower/lower.h"
#include "runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------ */

static _Thread_local StrBuf last_error;

/* The message's memory is freed when its thread ends: a key whose value is
 * the thread's buffer. */
static pthread_once_t error_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t error_key;
static bool error_key_ok;

static void make_error_key(void) { error_key_ok = pthread_key_create(&error_key, free) == 0; }

static blk_status fail(blk_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static blk_status fail(blk_status status, const char *fmt, ...)
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

static blk_status ok(void)
{
	last_error.len = 0;
	if (last_error.data)
		last_error.data[0] = '\0';
	return BLK_SUCCESS;
}

const char *blk_version(void)
{
#ifdef BLK_VERSION
	return BLK_VERSION;
#else
	return "0.1.0";
#endif
}

const char *blk_last_error(void)
{
	return last_error.data && !last_error.failed ? last_error.data : "";
}

blk_status blk_check_source(const char *name, const char *text, size_t len)
{
	if (!name || (!text && len))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_check_source: %s is NULL", name ? "text" : "name");
	if (len > UINT32_MAX / 2)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_check_source: '%s' is too large (%zu bytes)", name, len);
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	Source src;
	source_from_string(&src, name, text ? text : "", len, &arena);
	blk_status status = BLK_SUCCESS;
	if (len && src.len != len) {
		status = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_check_source: out of memory reading '%s'", name);
	} else {
		parse_source(&src, &diag, &arena);
		if (diag.out.failed)
			status = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_check_source: out of memory checking '%s'", name);
		else if (diag.errors)
			status = fail(BLK_ERROR_SOURCE, "%s", diag.out.data ? diag.out.data : "");
	}
	if (status == BLK_SUCCESS)
		ok();
	diag_free(&diag);
	arena_free(&arena);
	return status;
}

/* The standard library: $BLK_STDLIB, else beside libblk as installed
 * (PREFIX/lib/libblk.so, PREFIX/share/blk/stdlib) or as built
 * (build/libblk.so, stdlib/). */
static pthread_once_t stdlib_once = PTHREAD_ONCE_INIT;
static char stdlib_path[4096];

static void find_stdlib(void)
{
	Dl_info info;
	if (!dladdr((void *)blk_version, &info) || !info.dli_fname)
		return;
	char dir[3500];
	snprintf(dir, sizeof dir, "%s", info.dli_fname);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	static const char *const rel[] = {"../share/blk/stdlib", "../stdlib", "../../stdlib"};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		snprintf(stdlib_path, sizeof stdlib_path, "%s/%s", dir, rel[i]);
		if (access(stdlib_path, R_OK) == 0)
			return;
	}
	stdlib_path[0] = '\0';
}

static const char *stdlib_dir(void)
{
	const char *env = getenv("BLK_STDLIB");
	if (env && env[0])
		return env;
	pthread_once(&stdlib_once, find_stdlib);
	return stdlib_path[0] ? stdlib_path : NULL;
}

/* ---- contexts and memory ----------------------------------------------------------- */

struct blk_context {
	blk_backend backend;
	int device;
	pthread_mutex_t lock;
	InterpBuffer *bufs; /* memory from blk_malloc (device addresses on a GPU); few */
	int n_bufs, cap_bufs;
	StrBuf printed;      /* print output collected by launches */
	StrBuf printed_out;  /* what blk_context_printed returned last */
	blk_module *modules; /* loaded on this context, linked through next_module */
	/* the GPU backend */
	const CudaDriver *cu;
	CUdevice dev;
	CUcontext cuctx;
	bool retained_primary; /* cuctx is the device's primary context, retained by us (released
	                          on destroy); false for a context borrowed from the caller */
	bool debug;            /* BLK_DEBUG=1: synchronize after each launch, name the kernel that failed */
	char arch[16];         /* "sm_90" */
	char device_name[128];
	int cc_major, cc_minor;
	int sm_count;
	int smem_optin;        /* shared memory a block may opt in to, bytes */
	int max_threads;
	unsigned max_grid[3];
	int l2_bytes;          /* the L2 cache's size (0: unknown) */
	int driver_version;    /* cuDriverGetVersion: 13000 for CUDA 13.0 */
	/* timing: a buffer of twice the L2 cache's size, written between timed
	 * runs to flush it; made at the first timing */
	pthread_mutex_t flush_lock;
	CUdeviceptr flush_buf;
	size_t flush_bytes;
};

/* Reports a failed driver call made for `fn`. */
static blk_status cuda_fail(blk_context *ctx, CUresult r, const char *fn, const char *call)
{
	char msg[512];
	cuda_describe(ctx ? ctx->cu : NULL, r, call, msg, sizeof msg);
	if (cuda_error_is_sticky(r))
		return fail(cuda_blk_status(r), "%s: %s; a kernel faulted and the GPU context is unusable from here on "
		                                "(BLK_DEBUG=1 synchronizes after each launch and names the kernel)", fn, msg);
	return fail(cuda_blk_status(r), "%s: %s", fn, msg);
}

/* Makes ctx's CUDA context current on this thread (a check when it is). */
static blk_status gpu_enter(blk_context *ctx, const char *fn)
{
	CUcontext cur = NULL;
	if (ctx->cu->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx->cuctx)
		return BLK_SUCCESS;
	CUresult r = ctx->cu->cuCtxSetCurrent(ctx->cuctx);
	return r == CUDA_SUCCESS ? BLK_SUCCESS : cuda_fail(ctx, r, fn, "cuCtxSetCurrent");
}

static blk_status gpu_describe(blk_context *ctx, const char *fn);

/* Opens device `device` for ctx: the driver, the device's properties, its
 * primary context (retained). On failure nothing is left held. */
static blk_status gpu_open(blk_context *ctx, int device)
{
	const char *fn = "blk_context_create";
	const char *why;
	const CudaDriver *cu = cuda_driver(&why);
	if (!cu)
		return fail(BLK_ERROR_NO_DEVICE, "%s: %s", fn, why);
	ctx->cu = cu;
	int count = 0;
	CUresult r = cu->cuDeviceGetCount(&count);
	if (r != CUDA_SUCCESS)
		return cuda_fail(ctx, r, fn, "cuDeviceGetCount");
	if (count == 0)
		return fail(BLK_ERROR_NO_DEVICE, "%s: the CUDA driver sees no device", fn);
	if (device < 0 || device >= count) {
		if (count == 1)
			return fail(BLK_ERROR_NO_DEVICE, "%s: no CUDA device %d (there is one: 0)", fn, device);
		return fail(BLK_ERROR_NO_DEVICE, "%s: no CUDA device %d (there are %d: 0 to %d)", fn, device, count, count - 1);
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
	if ((r = cu->cuCtxSetCurrent(ctx->cuctx)) != CUDA_SUCCESS) {
		st = cuda_fail(ctx, r, fn, "cuCtxSetCurrent");
		cu->cuDevicePrimaryCtxRelease(ctx->dev);
		ctx->retained_primary = false;
		ctx->cuctx = NULL;
		return st;
	}
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
		return fail(BLK_ERROR_NO_DEVICE, "%s: CUDA device %d (%s) has compute capability %d.%d; blk needs 7.0 or newer",
		            fn, device, ctx->device_name, ctx->cc_major, ctx->cc_minor);
	/* for timing and the cache's key only: an old driver without them is no error */
	if (cu->cuDeviceGetAttribute(&ctx->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, ctx->dev) != CUDA_SUCCESS ||
	    ctx->l2_bytes < 0)
		ctx->l2_bytes = 0;
	if (cu->cuDriverGetVersion(&ctx->driver_version) != CUDA_SUCCESS)
		ctx->driver_version = 0;
	const char *dbg = getenv("BLK_DEBUG");
	ctx->debug = dbg && dbg[0] && strcmp(dbg, "0") != 0;
	return BLK_SUCCESS;
}

blk_status blk_context_create(blk_backend backend, int device, blk_context **out)
{
	if (!out)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_context_create: out is NULL");
	*out = NULL;
	bool automatic = false; /* AUTO without BLK_BACKEND: the GPU if one can be used */
	if (backend == BLK_BACKEND_AUTO) {
		const char *env = getenv("BLK_BACKEND");
		if (env && strcmp(env, "gpu") == 0)
			backend = BLK_BACKEND_GPU;
		else if (env && (strcmp(env, "interpreter") == 0 || strcmp(env, "interp") == 0))
			backend = BLK_BACKEND_INTERPRETER;
		else if (env && env[0])
			return fail(BLK_ERROR_INVALID_ARGUMENT, "BLK_BACKEND='%s': expected gpu or interpreter", env);
		else {
			backend = BLK_BACKEND_GPU;
			automatic = true;
		}
	}
	if (backend != BLK_BACKEND_INTERPRETER && backend != BLK_BACKEND_GPU)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_context_create: unknown backend %d", (int)backend);
	blk_context *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_context_create: out of memory");
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
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->flush_lock, NULL);
	*out = ctx;
	return ok();
}

blk_status blk_context_create_current(blk_context **out)
{
	const char *fn = "blk_context_create_current";
	if (!out)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "%s: out is NULL", fn);
	*out = NULL;
	const char *why;
	const CudaDriver *cu = cuda_driver(&why);
	if (!cu)
		return fail(BLK_ERROR_NO_DEVICE, "%s: %s", fn, why);
	CUcontext cur = NULL;
	CUresult r = cu->cuCtxGetCurrent(&cur);
	if (r != CUDA_SUCCESS)
		return cuda_fail(NULL, r, fn, "cuCtxGetCurrent");
	if (!cur)
		return fail(BLK_ERROR_NO_DEVICE, "%s: no CUDA context is current on this thread", fn);
	blk_context *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
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
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->flush_lock, NULL);
	*out = ctx;
	return ok();
}

static void orphan_modules(blk_context *ctx);

void blk_context_destroy(blk_context *ctx)
{
	if (!ctx)
		return;
	/* modules that outlive their context lose their GPU code and fail to
	 * launch rather than crash */
	orphan_modules(ctx);
	if (ctx->backend == BLK_BACKEND_GPU && gpu_enter(ctx, "blk_context_destroy") == BLK_SUCCESS) {
		for (int i = 0; i < ctx->n_bufs; i++)
			ctx->cu->cuMemFree((CUdeviceptr)(uintptr_t)ctx->bufs[i].data);
		if (ctx->flush_buf)
			ctx->cu->cuMemFree(ctx->flush_buf);
	} else if (ctx->backend == BLK_BACKEND_INTERPRETER) {
		for (int i = 0; i < ctx->n_bufs; i++)
			free(ctx->bufs[i].data);
	}
	if (ctx->retained_primary)
		ctx->cu->cuDevicePrimaryCtxRelease(ctx->dev);
	free(ctx->bufs);
	sb_free(&ctx->printed);
	sb_free(&ctx->printed_out);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->flush_lock);
	free(ctx);
}

blk_backend blk_context_backend(const blk_context *ctx) { return ctx ? ctx->backend : BLK_BACKEND_AUTO; }

const char *blk_context_printed(blk_context *ctx)
{
	if (!ctx)
		return "";
	pthread_mutex_lock(&ctx->lock);
	StrBuf t = ctx->printed_out;
	ctx->printed_out = ctx->printed;
	ctx->printed = t;
	ctx->printed.len = 0;
	if (ctx->printed.data)
		ctx->printed.data[0] = '\0';
	pthread_mutex_unlock(&ctx->lock);
	return ctx->printed_out.data && !ctx->printed_out.failed ? ctx->printed_out.data : "";
}

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
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_malloc: %s is NULL", ctx ? "out" : "ctx");
	if (bytes == 0 || bytes > ((size_t)1 << 40))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_malloc: cannot allocate %zu bytes", bytes);
	if (ctx->backend == BLK_BACKEND_GPU) {
		blk_status st = gpu_enter(ctx, "blk_malloc");
		if (st != BLK_SUCCESS)
			return st;
		CUdeviceptr p = 0;
		CUresult r = ctx->cu->cuMemAlloc(&p, bytes);
		if (r != CUDA_SUCCESS) {
			char msg[512];
			cuda_describe(ctx->cu, r, "cuMemAlloc_v2", msg, sizeof msg);
			return fail(cuda_blk_status(r), "blk_malloc: %s (%zu bytes)", msg, bytes);
		}
		/* zero-filled: ordered before later work on the default stream and
		 * on blocking streams (a copy, a launch) */
		if ((r = ctx->cu->cuMemsetD8(p, 0, bytes)) != CUDA_SUCCESS) {
			ctx->cu->cuMemFree(p);
			return cuda_fail(ctx, r, "blk_malloc", "cuMemsetD8_v2");
		}
		if (!add_buffer(ctx, (void *)(uintptr_t)p, bytes)) {
			ctx->cu->cuMemFree(p);
			return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc: out of memory");
		}
		*out = (blk_devptr)p;
		return ok();
	}
	/* 256-byte alignment, as cuMemAlloc gives, so that alignment-dependent
	 * code behaves the same on both backends. */
	void *p = aligned_alloc(256, (bytes + 255) & ~(size_t)255);
	if (!p)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc: out of memory (%zu bytes)", bytes);
	memset(p, 0, bytes);
	if (!add_buffer(ctx, p, bytes)) {
		free(p);
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc: out of memory");
	}
	*out = (blk_devptr)(uintptr_t)p;
	return ok();
}

/* The buffer holding [p, p + bytes), or -1. Caller holds the lock. */
static int find_buffer(blk_context *ctx, blk_devptr p, size_t bytes)
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
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_free: ctx is NULL");
	if (!ptr)
		return ok();
	pthread_mutex_lock(&ctx->lock);
	for (int i = 0; i < ctx->n_bufs; i++)
		if ((uintptr_t)ctx->bufs[i].data == ptr) {
			ctx->bufs[i] = ctx->bufs[--ctx->n_bufs];
			pthread_mutex_unlock(&ctx->lock);
			if (ctx->backend == BLK_BACKEND_GPU) {
				blk_status st = gpu_enter(ctx, "blk_free");
				if (st != BLK_SUCCESS)
					return st;
				CUresult r = ctx->cu->cuMemFree((CUdeviceptr)ptr);
				if (r != CUDA_SUCCESS)
					return cuda_fail(ctx, r, "blk_free", "cuMemFree_v2");
			} else {
				free((void *)(uintptr_t)ptr);
			}
			return ok();
		}
	pthread_mutex_unlock(&ctx->lock);
	return fail(BLK_ERROR_NOT_FOUND, "blk_free: 0x%llx is not memory from blk_malloc", (unsigned long long)ptr);
}

static blk_status copy(blk_context *ctx, void *host, blk_devptr dev, size_t bytes, bool to_device)
{
	const char *fn = to_device ? "blk_copy_to_device" : "blk_copy_from_device";
	if (!ctx || (!host && bytes))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, ctx ? "the host pointer" : "ctx");
	pthread_mutex_lock(&ctx->lock);
	int b = find_buffer(ctx, dev, bytes);
	pthread_mutex_unlock(&ctx->lock);
	if (b < 0)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "%s: [0x%llx, +%zu bytes) is not inside memory from blk_malloc", fn,
		            (unsigned long long)dev, bytes);
	if (!bytes)
		return ok();
	if (ctx->backend == BLK_BACKEND_GPU) {
		/* synchronous; ordered after earlier work on the default stream */
		blk_status st = gpu_enter(ctx, fn);
		if (st != BLK_SUCCESS)
			return st;
		CUresult r = to_device ? ctx->cu->cuMemcpyHtoD((CUdeviceptr)dev, host, bytes)
		                       : ctx->cu->cuMemcpyDtoH(host, (CUdeviceptr)dev, bytes);
		if (r != CUDA_SUCCESS)
			return cuda_fail(ctx, r, fn, to_device ? "cuMemcpyHtoD_v2" : "cuMemcpyDtoH_v2");
		return ok();
	}
	if (to_device)
		memcpy((void *)(uintptr_t)dev, host, bytes);
	else
		memcpy(host, (const void *)(uintptr_t)dev, bytes);
	return ok();
}

blk_status blk_copy_to_device(blk_context *ctx, blk_devptr dst, const void *src, size_t bytes)
{
	return copy(ctx, (void *)src, dst, bytes, true);
}

blk_status blk_copy_from_device(blk_context *ctx, void *dst, blk_devptr src, size_t bytes)
{
	return copy(ctx, dst, src, bytes, false);
}

/* ---- modules and kernels ---------------------------------------------------------- */

/* How a runtime argument goes into a GPU launch. */
enum { PK_PTR, PK_INT, PK_FLOAT };

/* One compiled specialization of a kernel. Never moves once made. */
typedef struct Variant {
	ConstBinding *consts; /* what it was compiled with (launch consts, defines, config) */
	int n_consts;
	uint64_t spec;        /* GPU: runtime arguments known to be multiples of 16 (bit i: argument i) */
	IrFunc *f;
	/* the grid its clause gave for the scalar arguments of grid_args */
	blk_arg *grid_args;   /* NULL until the clause was evaluated */
	unsigned grid[3];
	/* GPU: loaded at its first launch */
	CUmodule cumod;
	CUfunction fn;
	int shared_bytes;     /* dynamic shared memory a program needs */
	unsigned block;       /* threads a program: 32 * num_warps */
	uint8_t *pkind;       /* per runtime argument: PK_* */
	uint8_t *pscalar;     /* per runtime argument: its ScalarKind */
	CUdeviceptr assert_state; /* GPU: the kernel's record of a failed assert, or 0 without asserts */
	const char *ptx;      /* GPU: its PTX (in the module's arena), for blk_kernel_compile */
	size_t ptx_len;
	/* how it was made: milliseconds of each phase (blk_compile_info) */
	double ms_irgen, ms_passes, ms_llvm, ms_ptx, ms_cubin;
	bool from_disk;       /* GPU: the cubin came from the disk cache */
} Variant;

/* The config an @autotune kernel runs for some values of its key (and a
 * specialization of its arguments). */
typedef struct Tuned {
	int64_t *key;         /* one value per key name (key_values) */
	uint64_t spec;
	int best;             /* index into the kernel's configs */
} Tuned;

struct blk_kernel {
	blk_module *m;
	Node *node;
	AutotuneSpec autotune;
	blk_param_info *params;
	uint8_t *param_sk;    /* ScalarKind of each parameter (of the pointee for a pointer) */
	int n_params;
	int n_args;           /* parameters that are not const: blk_launch's arguments */
	Variant **variants;
	int n_variants, cap_variants;
	/* @autotune: for each key name, the runtime argument that gives it, or
	 * -1 for a const parameter; the choices made so far */
	int *key_arg;
	Tuned *tuned;
	int n_tuned, cap_tuned;
	/* The last launch's request (its consts, num_warps, num_stages) and the
	 * variant it got: a launch asking the same skips the search. */
	struct {
		blk_const *consts; /* one malloc'd block with the names */
		size_t cap;        /* its bytes */
		int n_consts, num_warps, num_stages;
		uint64_t spec;
		Variant *v;
		bool tuned;        /* it chose among the configs for its key values: */
		int64_t *key;      /* these (n_key, allocated with the kernel) */
	} last;
};

struct blk_module {
	blk_context *ctx;     /* NULL once the context was destroyed */
	blk_module *next_module;
	Arena arena;
	ModuleSet set;
	Module *mod;
	ConstBinding *defines;
	int n_defines;
	blk_kernel *kernels;
	int n_kernels;
	double ms_parse;      /* loading: reading, parsing and checking the sources */
	pthread_mutex_t lock;
};

/* Unloads m's GPU code (its context current). Caller holds m->lock. */
static void gpu_unload_module(blk_module *m)
{
	for (int i = 0; m->kernels && i < m->n_kernels; i++)
		for (int j = 0; j < m->kernels[i].n_variants; j++) {
			Variant *v = m->kernels[i].variants[j];
			if (v->cumod)
				m->ctx->cu->cuModuleUnload(v->cumod);
			v->cumod = NULL;
			v->fn = NULL;
		}
}

static void orphan_modules(blk_context *ctx)
{
	bool current = ctx->backend == BLK_BACKEND_GPU && gpu_enter(ctx, "blk_context_destroy") == BLK_SUCCESS;
	pthread_mutex_lock(&ctx->lock);
	for (blk_module *m = ctx->modules; m; m = m->next_module) {
		pthread_mutex_lock(&m->lock);
		if (current)
			gpu_unload_module(m);
		m->ctx = NULL;
		pthread_mutex_unlock(&m->lock);
	}
	ctx->modules = NULL;
	pthread_mutex_unlock(&ctx->lock);
}

static int elem_bytes(Type t)
{
	Type e = type_pointee(type_elem(t));
	if (e.ptr)
		return 8;
	int bits = scalar_bits((ScalarKind)e.scalar);
	return bits < 8 ? 1 : bits / 8;
}

static bool describe_params(blk_module *m, blk_kernel *k, Diag *diag)
{
	Node *n = k->node;
	k->n_params = n->list.len;
	k->params = arena_alloc(&m->arena, (size_t)(k->n_params ? k->n_params : 1) * sizeof *k->params);
	k->param_sk = arena_alloc(&m->arena, (size_t)(k->n_params ? k->n_params : 1));
	if (!k->params || !k->param_sk)
		return false;
	for (int i = 0; i < k->n_params; i++) {
		Node *p = n->list.items[i];
		Node *t = p->a;
		bool is_const = t && t->kind == N_TYPE_CONST;
		Node *base = is_const ? t->a : t;
		int depth = 0;
		while (base && base->kind == N_TYPE_PTR) {
			base = base->a;
			depth++;
		}
		ScalarKind sk;
		if (!base || base->kind != N_TYPE_NAME || !scalar_from_name(base->name, &sk)) {
			diag_error(diag, p->span, "parameter '%s' has no valid type", p->name);
			return false;
		}
		Type ty = type_scalar(sk);
		ty.ptr = (uint8_t)depth;
		StrBuf sb = {0};
		if (is_const)
			sb_puts(&sb, "const ");
		type_print(ty, &sb);
		k->params[i] = (blk_param_info){
			.name = p->name,
			.type = sb.data ? arena_strndup(&m->arena, sb.data, sb.len) : "?",
			.kind = depth ? BLK_PARAM_POINTER : scalar_is_float(sk) ? BLK_PARAM_FLOAT : BLK_PARAM_INT,
			.is_const = is_const,
			.elem_bytes = depth ? elem_bytes(ty) : (scalar_bits(sk) < 8 ? 1 : scalar_bits(sk) / 8),
		};
		sb_free(&sb);
		k->param_sk[i] = (uint8_t)sk;
		k->n_args += !is_const;
	}
	return true;
}

/* Where each name of the kernel's autotune key comes from. */
static bool describe_key(blk_module *m, blk_kernel *k)
{
	int n = k->autotune.n_key;
	k->key_arg = arena_alloc(&m->arena, (size_t)(n ? n : 1) * sizeof *k->key_arg);
	k->last.key = arena_alloc(&m->arena, (size_t)(n ? n : 1) * sizeof *k->last.key);
	if (!k->key_arg || !k->last.key)
		return false;
	for (int i = 0; i < n; i++) {
		k->key_arg[i] = -1;
		for (int p = 0, a = 0; p < k->n_params; p++) {
			if (strcmp(k->params[p].name, k->autotune.key[i]) == 0) {
				if (!k->params[p].is_const)
					k->key_arg[i] = a;
				break;
			}
			a += !k->params[p].is_const;
		}
	}
	return true;
}

static blk_status load_module(blk_context *ctx, const Source *given, const char *path, const blk_module_options *opt,
                              blk_module **out)
{
	if (!ctx || !out)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load: %s is NULL", ctx ? "out" : "ctx");
	*out = NULL;
	double t0 = monotonic_ms();
	blk_module *m = calloc(1, sizeof *m);
	if (!m)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_module_load: out of memory");
	m->ctx = ctx;
	pthread_mutex_init(&m->lock, NULL);
	Diag diag;
	diag_init(&diag);
	m->set = (ModuleSet){.arena = &m->arena, .diag = &diag};
	m->set.stdlib_dir = stdlib_dir();
	if (opt) {
		m->set.include_dirs = opt->include_dirs;
		m->set.n_include_dirs = opt->n_include_dirs;
		m->defines = arena_alloc(&m->arena, (size_t)(opt->n_defines ? opt->n_defines : 1) * sizeof *m->defines);
		for (int i = 0; m->defines && i < opt->n_defines; i++)
			m->defines[i] = (ConstBinding){arena_strndup(&m->arena, opt->defines[i].name, strlen(opt->defines[i].name)),
			                               opt->defines[i].is_float != 0, opt->defines[i].i, opt->defines[i].f};
		m->n_defines = opt->n_defines;
	}
	if (given) {
		Source *src = arena_alloc(&m->arena, sizeof *src);
		if (src) {
			source_from_string(src, arena_strndup(&m->arena, given->name, strlen(given->name)), given->text, given->len,
			                   &m->arena);
			m->mod = module_load_source(&m->set, src);
		}
	} else {
		m->mod = module_load_file(&m->set, path);
	}
	blk_status status = BLK_SUCCESS;
	if (!m->mod || diag.errors) {
		status = fail(diag.errors ? BLK_ERROR_SOURCE : BLK_ERROR_NOT_FOUND, "%s",
		              diag.out.data ? diag.out.data : "cannot load the module");
	} else {
		for (int i = 0; i < m->mod->file->list.len; i++)
			m->n_kernels += ((Node *)m->mod->file->list.items[i])->kind == N_KERNEL;
		m->kernels = arena_alloc(&m->arena, (size_t)(m->n_kernels ? m->n_kernels : 1) * sizeof *m->kernels);
		int j = 0;
		for (int i = 0; m->kernels && i < m->mod->file->list.len; i++) {
			Node *n = m->mod->file->list.items[i];
			if (n->kind != N_KERNEL)
				continue;
			blk_kernel *k = &m->kernels[j++];
			k->m = m;
			k->node = n;
			if (!describe_params(m, k, &diag) || !irgen_autotune(m->mod, n, &k->autotune, &diag, &m->arena))
				break;
			if (!describe_key(m, k)) {
				m->kernels = NULL;
				break;
			}
		}
		if (diag.errors)
			status = fail(BLK_ERROR_SOURCE, "%s", diag.out.data ? diag.out.data : "");
		else if (!m->kernels)
			status = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_module_load: out of memory");
	}
	diag_free(&diag);
	m->set.diag = NULL;
	if (status != BLK_SUCCESS) {
		blk_module_destroy(m);
		return status;
	}
	m->ms_parse = monotonic_ms() - t0;
	pthread_mutex_lock(&ctx->lock);
	m->next_module = ctx->modules;
	ctx->modules = m;
	pthread_mutex_unlock(&ctx->lock);
	*out = m;
	return ok();
}

blk_status blk_module_load_file(blk_context *ctx, const char *path, const blk_module_options *opt, blk_module **out)
{
	if (!path)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load_file: path is NULL");
	if (out)
		*out = NULL;
	if (access(path, R_OK) != 0)
		return fail(BLK_ERROR_NOT_FOUND, "blk_module_load_file: cannot open '%s': %s", path, strerror(errno));
	return load_module(ctx, NULL, path, opt, out);
}

blk_status blk_module_load_source(blk_context *ctx, const char *name, const char *text, size_t len,
                                  const blk_module_options *opt, blk_module **out)
{
	if (!name || (!text && len))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load_source: %s is NULL", name ? "text" : "name");
	if (len > UINT32_MAX / 2)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load_source: '%s' is too large", name);
	Source src = {.name = name, .text = text ? text : "", .len = (uint32_t)len};
	return load_module(ctx, &src, NULL, opt, out);
}

void blk_module_destroy(blk_module *m)
{
	if (!m)
		return;
	blk_context *ctx = m->ctx;
	if (ctx) {
		pthread_mutex_lock(&ctx->lock);
		for (blk_module **p = &ctx->modules; *p; p = &(*p)->next_module)
			if (*p == m) {
				*p = m->next_module;
				break;
			}
		pthread_mutex_unlock(&ctx->lock);
		if (ctx->backend == BLK_BACKEND_GPU && gpu_enter(ctx, "blk_module_destroy") == BLK_SUCCESS)
			gpu_unload_module(m);
	}
	for (int i = 0; m->kernels && i < m->n_kernels; i++)
		free(m->kernels[i].last.consts);
	pthread_mutex_destroy(&m->lock);
	arena_free(&m->arena);
	free(m);
}

blk_status blk_kernel_get(blk_module *m, const char *name, blk_kernel **out)
{
	if (!m || !out)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_get: %s is NULL", m ? "out" : "the module");
	*out = NULL;
	for (int i = 0; i < m->n_kernels; i++)
		if (!name || strcmp(m->kernels[i].node->name, name) == 0) {
			if (!name && m->n_kernels > 1)
				return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_get: '%s' has %d kernels; name one",
				            m->mod->src->name, m->n_kernels);
			*out = &m->kernels[i];
			return ok();
		}
	return fail(BLK_ERROR_NOT_FOUND, "blk_kernel_get: '%s' has no kernel%s%s", m->mod->src->name, name ? " named " : "",
	            name ? name : "");
}

int blk_kernel_num_params(const blk_kernel *k) { return k ? k->n_params : 0; }

blk_status blk_kernel_param(const blk_kernel *k, int i, blk_param_info *out)
{
	if (!k || !out || i < 0 || i >= k->n_params)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_param: no parameter %d", i);
	*out = k->params[i];
	return ok();
}

/* ---- variants and launches --------------------------------------------------------
 *
 * The cached path of a launch (the same request and specialization as the
 * kernel's last launch, the grid clause given the same scalars as last
 * time, or an explicit grid) compiles nothing, allocates nothing for up to
 * 16 arguments, and compares no strings but the names of the launch's own
 * consts: argument checks, one uncontended lock, packing, cuLaunchKernel.
 * A request unlike the last searches the kernel's variants (string
 * compares of const names) but allocates only when the launch's consts
 * outgrow what the kernel remembered before. */

/* The const values of a launch: the launch's own, then the module's
 * defines, then (for names still missing) the kernel's autotune config
 * `cfg` (when it has configs); defaults in the source come last, in irgen. */
static int launch_consts(blk_kernel *k, const blk_launch_options *opt, int cfg, ConstBinding *out)
{
	int n = 0;
	for (int i = 0; opt && i < opt->n_consts; i++)
		out[n++] = (ConstBinding){opt->consts[i].name, opt->consts[i].is_float != 0, opt->consts[i].i,
		                          opt->consts[i].f};
	bool has = cfg >= 0 && cfg < k->autotune.n_configs;
	const ConstBinding *more[2] = {k->m->defines, has ? k->autotune.configs[cfg] : NULL};
	int counts[2] = {k->m->n_defines, has ? k->autotune.config_len[cfg] : 0};
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < counts[s]; i++) {
			bool seen = false;
			for (int j = 0; j < n && !seen; j++)
				seen = strcmp(out[j].name, more[s][i].name) == 0;
			if (!seen)
				out[n++] = more[s][i];
		}
	return n;
}

static bool same_consts(const Variant *v, const ConstBinding *c, int n)
{
	if (v->n_consts != n)
		return false;
	for (int i = 0; i < n; i++) {
		bool found = false;
		for (int j = 0; j < n && !found; j++)
			found = strcmp(v->consts[j].name, c[i].name) == 0 && v->consts[j].is_float == c[i].is_float &&
			        (c[i].is_float ? v->consts[j].f == c[i].f : v->consts[j].i == c[i].i);
		if (!found)
			return false;
	}
	return true;
}

/* num_warps or num_stages as irgen settles it: given (> 0), else a const
 * of that name, else the default. */
static int settled(const ConstBinding *c, int n, const char *name, int given, int dflt)
{
	if (given > 0)
		return given;
	for (int i = 0; i < n; i++)
		if (strcmp(c[i].name, name) == 0)
			return !c[i].is_float && c[i].i > 0 && c[i].i <= 64 ? (int)c[i].i : dflt;
	return dflt;
}

enum { SPEC_ARGS = 32 }; /* arguments specialized (arg_spec) */

/* Integer arguments known to equal 1 (bit i: runtime argument i) become
 * the constant 1 in the IR, so that the passes fold them (x * stride is x). */
static bool constant_ones(IrFunc *f, uint64_t ones)
{
	for (int i = 0, j = 0; i < f->n_params; i++) {
		IrParam *p = &f->params[i];
		if (!p->value)
			continue;
		if (j < SPEC_ARGS && (ones >> j & 1) && !ir_param_is_one(f, p))
			return false;
		j++;
	}
	return true;
}

/* The compiled variant for these consts, made on first use. Caller holds m->lock. */
static blk_status get_variant(blk_kernel *k, const ConstBinding *consts, int n, int num_warps, int num_stages,
                              uint64_t spec, Variant **out)
{
	blk_module *m = k->m;
	int warps = settled(consts, n, "num_warps", num_warps, 4), stages = settled(consts, n, "num_stages", num_stages, 3);
	for (int i = 0; i < k->n_variants; i++)
		if (k->variants[i]->spec == spec && same_consts(k->variants[i], consts, n) &&
		    k->variants[i]->f->num_warps == warps && k->variants[i]->f->num_stages == stages) {
			*out = k->variants[i];
			return BLK_SUCCESS;
		}
	if (k->n_variants == k->cap_variants) {
		int cap = k->cap_variants ? k->cap_variants * 2 : 4;
		Variant **v = arena_alloc(&m->arena, (size_t)cap * sizeof *v);
		if (!v)
			return fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory compiling '%s'", k->node->name);
		if (k->n_variants)
			memcpy(v, k->variants, (size_t)k->n_variants * sizeof *v);
		k->variants = v;
		k->cap_variants = cap;
	}
	Diag diag;
	diag_init(&diag);
	m->set.diag = &diag;
	ConstBinding *copy = arena_alloc(&m->arena, (size_t)(n ? n : 1) * sizeof *copy);
	for (int i = 0; copy && i < n; i++) {
		copy[i] = consts[i];
		copy[i].name = arena_strndup(&m->arena, consts[i].name, strlen(consts[i].name));
	}
	Variant *v = arena_alloc(&m->arena, sizeof *v);
	IrgenOptions io = {.consts = copy, .n_consts = n, .num_warps = num_warps, .num_stages = num_stages};
	double t0 = monotonic_ms();
	IrFunc *f = copy && v ? irgen_kernel(m->mod, k->node, &io, &diag, &m->arena) : NULL;
	if (f && spec >> SPEC_ARGS && !constant_ones(f, spec >> SPEC_ARGS))
		f = NULL;
	double t1 = monotonic_ms();
	/* BLK_PASSES replaces the tile passes (for tests of a pass on the
	 * interpreter: the examples' references hold whatever runs) */
	const char *passes = getenv("BLK_PASSES");
	if (f && !ir_run_passes(f, passes && *passes ? passes : NULL, NULL, NULL, &diag))
		f = NULL;
	double t2 = monotonic_ms();
	blk_status status = BLK_SUCCESS;
	if (!f) {
		status = fail(diag.errors ? BLK_ERROR_SOURCE : BLK_ERROR_OUT_OF_MEMORY, "%s",
		              diag.out.data ? diag.out.data : "out of memory");
	} else {
		/* what the arguments promise, for the GPU back end to use (16-byte accesses) */
		for (int i = 0, j = 0; i < f->n_params; i++)
			if (f->params[i].value) {
				if (j < SPEC_ARGS && (spec >> j & 1))
					f->params[i].divisibility = 16;
				j++;
			}
		*v = (Variant){.consts = copy, .n_consts = n, .spec = spec, .f = f, .ms_irgen = t1 - t0, .ms_passes = t2 - t1};
		k->variants[k->n_variants++] = v;
	}
	m->set.diag = NULL;
	diag_free(&diag);
	*out = f ? v : NULL;
	return status;
}

/* Does this launch ask what the kernel's last one asked? */
static bool same_request(const blk_kernel *k, const blk_launch_options *opt, uint64_t spec)
{
	int n = opt ? opt->n_consts : 0;
	if (!k->last.v || k->last.spec != spec || k->last.n_consts != n || k->last.num_warps != (opt ? opt->num_warps : 0) ||
	    k->last.num_stages != (opt ? opt->num_stages : 0))
		return false;
	for (int i = 0; i < n; i++) {
		const blk_const *a = &opt->consts[i], *b = &k->last.consts[i];
		if ((a->is_float != 0) != (b->is_float != 0) || (a->is_float ? a->f != b->f : a->i != b->i) ||
		    !a->name || strcmp(a->name, b->name) != 0)
			return false;
	}
	return true;
}

static void remember_request(blk_kernel *k, const blk_launch_options *opt, uint64_t spec, Variant *v)
{
	int n = opt ? opt->n_consts : 0;
	size_t bytes = (size_t)n * sizeof(blk_const);
	for (int i = 0; i < n; i++)
		bytes += strlen(opt->consts[i].name) + 1;
	k->last.v = NULL;
	if (bytes > k->last.cap || !k->last.consts) {
		free(k->last.consts);
		k->last.cap = bytes > 64 ? bytes : 64;
		if (!(k->last.consts = malloc(k->last.cap))) {
			k->last.cap = 0;
			return; /* no memory: the next launch searches */
		}
	}
	blk_const *c = k->last.consts;
	char *names = (char *)(c + n);
	for (int i = 0; i < n; i++) {
		c[i] = opt->consts[i];
		size_t len = strlen(opt->consts[i].name) + 1;
		memcpy(names, opt->consts[i].name, len);
		c[i].name = names;
		names += len;
	}
	k->last.n_consts = n;
	k->last.num_warps = opt ? opt->num_warps : 0;
	k->last.num_stages = opt ? opt->num_stages : 0;
	k->last.spec = spec;
	k->last.v = v;
}

/* The variant of config `cfg` (of an @autotune kernel; any index for one
 * without) for this launch's options. Caller holds m->lock. */
static blk_status config_variant(blk_kernel *k, const blk_launch_options *opt, int cfg, uint64_t spec, Variant **out)
{
	int cap = (opt ? opt->n_consts : 0) + k->m->n_defines +
	          (cfg >= 0 && cfg < k->autotune.n_configs ? k->autotune.config_len[cfg] : 0);
	ConstBinding buf[32];
	ConstBinding *consts = cap <= 32 ? buf : malloc((size_t)cap * sizeof *consts);
	if (!consts)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	int n = launch_consts(k, opt, cfg, consts);
	blk_status st = get_variant(k, consts, n, opt ? opt->num_warps : 0, opt ? opt->num_stages : 0, spec, out);
	if (consts != buf)
		free(consts);
	return st;
}

/* Does the launch give `name` (its consts, the module's defines; for
 * num_warps and num_stages, its options too)? */
static bool launch_gives(const blk_kernel *k, const blk_launch_options *opt, const char *name)
{
	if (opt && opt->num_warps > 0 && strcmp(name, "num_warps") == 0)
		return true;
	if (opt && opt->num_stages > 0 && strcmp(name, "num_stages") == 0)
		return true;
	for (int i = 0; opt && i < opt->n_consts; i++)
		if (opt->consts[i].name && strcmp(opt->consts[i].name, name) == 0)
			return true;
	for (int i = 0; i < k->m->n_defines; i++)
		if (strcmp(k->m->defines[i].name, name) == 0)
			return true;
	return false;
}

/* Does this launch leave the choice among the kernel's configs open? With
 * two configs or more: when the configs set const parameters, one of
 * those the launch does not give (a launch that gives them all runs as
 * given, num_warps and num_stages from the first config unless given);
 * when they set only num_warps or num_stages, one of those. */
static bool needs_tuning(const blk_kernel *k, const blk_launch_options *opt)
{
	if (k->autotune.n_configs < 2)
		return false;
	bool consts = false, open_const = false, open_option = false;
	for (int c = 0; c < k->autotune.n_configs; c++)
		for (int i = 0; i < k->autotune.config_len[c]; i++) {
			const char *name = k->autotune.configs[c][i].name;
			bool option = strcmp(name, "num_warps") == 0 || strcmp(name, "num_stages") == 0;
			bool given = launch_gives(k, opt, name);
			consts |= !option;
			open_const |= !option && !given;
			open_option |= option && !given;
		}
	return consts ? open_const : open_option;
}

/* The value of the kernel's key name i in this launch: an integer
 * argument's value, a float's bits, for a pointer whether it is 16-byte
 * aligned; a const parameter's value as the launch gives it (INT64_MIN
 * when it does not). */
static int64_t key_arg_value(const blk_arg *a)
{
	int64_t v;
	switch (a->kind) {
	case BLK_ARG_PTR:
		return (a->v.ptr & 15) == 0;
	case BLK_ARG_FLOAT:
		memcpy(&v, &a->v.f, sizeof v);
		return v;
	default:
		return a->v.i;
	}
}

static void key_values(const blk_kernel *k, const blk_arg *args, const blk_launch_options *opt, int64_t *out)
{
	for (int i = 0; i < k->autotune.n_key; i++) {
		if (k->key_arg[i] >= 0) {
			out[i] = key_arg_value(&args[k->key_arg[i]]);
			continue;
		}
		out[i] = INT64_MIN;
		const char *name = k->autotune.key[i];
		const blk_const *c = NULL;
		for (int j = 0; opt && j < opt->n_consts && !c; j++)
			if (opt->consts[j].name && strcmp(opt->consts[j].name, name) == 0)
				c = &opt->consts[j];
		if (c) {
			if (c->is_float)
				memcpy(&out[i], &c->f, sizeof out[i]);
			else
				out[i] = c->i;
			continue;
		}
		for (int j = 0; j < k->m->n_defines; j++)
			if (strcmp(k->m->defines[j].name, name) == 0) {
				if (k->m->defines[j].is_float)
					memcpy(&out[i], &k->m->defines[j].f, sizeof out[i]);
				else
					out[i] = k->m->defines[j].i;
				break;
			}
	}
}

/* Do the arguments give the key the values the last launch's did? (Its
 * const names were compared with the request.) */
static bool same_key(const blk_kernel *k, const blk_arg *args)
{
	for (int i = 0; i < k->autotune.n_key; i++)
		if (k->key_arg[i] >= 0 && key_arg_value(&args[k->key_arg[i]]) != k->last.key[i])
			return false;
	return true;
}

typedef enum FindMode {
	FIND_LAUNCH,  /* a launch: tune when the choice for the key is not known */
	FIND_COMPILE, /* compiling ahead: the known choice, else the first config */
} FindMode;

static blk_status choose_config(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                                uint64_t spec, const int64_t *key, FindMode mode, int *cfg, bool *known);

/* The variant this launch runs (for an @autotune kernel, tuning first when
 * needed). Caller holds m->lock. */
static blk_status find_variant(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                               uint64_t spec, FindMode mode, Variant **out)
{
	if (same_request(k, opt, spec) && (!k->last.tuned || (args && same_key(k, args)))) {
		*out = k->last.v;
		return BLK_SUCCESS;
	}
	bool tuned = needs_tuning(k, opt), known = true;
	int cfg = 0, n_key = k->autotune.n_key;
	int64_t kbuf[16];
	int64_t *key = n_key <= 16 ? kbuf : malloc((size_t)n_key * sizeof *key);
	if (!key)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	blk_status st = BLK_SUCCESS;
	if (tuned && !args) {
		known = false; /* compiling ahead without arguments: the first config */
	} else if (tuned) {
		key_values(k, args, opt, key);
		st = choose_config(k, args, n_args, opt, spec, key, mode, &cfg, &known);
	}
	if (st == BLK_SUCCESS)
		st = config_variant(k, opt, cfg, spec, out);
	if (st == BLK_SUCCESS && known) {
		remember_request(k, opt, spec, *out);
		k->last.tuned = tuned;
		if (tuned)
			memcpy(k->last.key, key, (size_t)n_key * sizeof *key);
	}
	if (key != kbuf)
		free(key);
	return st;
}

static blk_status check_args(blk_kernel *k, const blk_arg *args, int n_args)
{
	const char *kn = k->node->name;
	int want = k->n_args;
	if (n_args != want || (!args && n_args))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: kernel '%s' takes %d argument%s (its parameters that "
		                                        "are not const), given %d", kn, want, want == 1 ? "" : "s", n_args);
	for (int i = 0, a = 0; i < k->n_params; i++) {
		const blk_param_info *p = &k->params[i];
		if (p->is_const)
			continue;
		const blk_arg *arg = &args[a++];
		static const char *const kinds[] = {"a pointer", "an integer", "a float"};
		if (arg->kind > BLK_ARG_FLOAT)
			return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s') of '%s' has an unknown kind %d", a,
			            p->name, kn, (int)arg->kind);
		bool fits = (p->kind == BLK_PARAM_POINTER && arg->kind == BLK_ARG_PTR) ||
		            (p->kind == BLK_PARAM_INT && arg->kind == BLK_ARG_INT) ||
		            (p->kind == BLK_PARAM_FLOAT && (arg->kind == BLK_ARG_FLOAT || arg->kind == BLK_ARG_INT));
		if (!fits)
			return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s: %s') of '%s' must be %s, given %s", a,
			            p->name, p->type, kn, kinds[p->kind], kinds[arg->kind]);
		if (p->kind == BLK_PARAM_POINTER && arg->v.ptr == 0)
			return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s: %s') of '%s' is a null pointer", a,
			            p->name, p->type, kn);
		if (p->kind == BLK_PARAM_INT) {
			ScalarKind sk = (ScalarKind)k->param_sk[i];
			int bits = scalar_bits(sk);
			if (bits < 64) {
				bool ok_range = scalar_is_unsigned(sk) || sk == SK_I1
				                    ? arg->v.i >= 0 && arg->v.i < ((int64_t)1 << bits)
				                    : arg->v.i >= -((int64_t)1 << (bits - 1)) && arg->v.i < ((int64_t)1 << (bits - 1));
				if (!ok_range)
					return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s: %s') of '%s' is %lld, "
					                                        "out of range for %s", a, p->name, p->type, kn,
					            (long long)arg->v.i, p->type);
			}
		}
	}
	return BLK_SUCCESS;
}

/* Specialization, as Triton does it: which arguments are multiples of 16
 * (integers) or 16-byte aligned (pointers), bit i for argument i, and which
 * integers equal 1, bit 32 + i (a stride of 1 makes a block of pointers
 * contiguous); the first 32 arguments. Each pattern is a variant of its
 * own. GPU only: the interpreter gains nothing from it. */
static uint64_t arg_spec(const blk_kernel *k, const blk_arg *args)
{
	uint64_t spec = 0;
	for (int i = 0, a = 0; i < k->n_params && a < SPEC_ARGS; i++) {
		if (k->params[i].is_const)
			continue;
		const blk_arg *arg = &args[a];
		bool is_int = arg->kind == BLK_ARG_INT && k->params[i].kind == BLK_PARAM_INT;
		if ((arg->kind == BLK_ARG_PTR && k->params[i].kind == BLK_PARAM_POINTER && (arg->v.ptr & 15) == 0) ||
		    (is_int && (arg->v.i & 15) == 0))
			spec |= (uint64_t)1 << a;
		if (is_int && arg->v.i == 1)
			spec |= (uint64_t)1 << (SPEC_ARGS + a);
		a++;
	}
	return spec;
}

/* Do a and b give the kernel's scalar (not pointer) arguments the same values? */
static bool same_scalars(const blk_kernel *k, const blk_arg *a, const blk_arg *b)
{
	for (int i = 0, j = 0; i < k->n_params; i++) {
		if (k->params[i].is_const)
			continue;
		if (k->params[i].kind != BLK_PARAM_POINTER &&
		    (a[j].kind != b[j].kind || memcmp(&a[j].v, &b[j].v, sizeof a[j].v) != 0))
			return false;
		j++;
	}
	return true;
}

/* The launch's grid: given, or from the kernel's grid clause (evaluated
 * again only when its scalar arguments changed). Caller holds m->lock. */
static blk_status launch_grid(blk_kernel *k, Variant *v, const blk_arg *args, int n_args,
                              const blk_launch_options *opt, unsigned grid[3])
{
	if (opt && (opt->grid[0] || opt->grid[1] || opt->grid[2])) {
		for (int i = 0; i < 3; i++)
			grid[i] = opt->grid[i] ? opt->grid[i] : 1;
		return BLK_SUCCESS;
	}
	if (v->grid_args && same_scalars(k, v->grid_args, args)) {
		memcpy(grid, v->grid, sizeof v->grid);
		return BLK_SUCCESS;
	}
	blk_module *m = k->m;
	ConstBinding buf[16];
	ConstBinding *scalars = n_args <= 16 ? buf : malloc((size_t)n_args * sizeof *scalars);
	if (!scalars)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	int n_scalars = 0;
	for (int i = 0, a = 0; i < k->n_params; i++) {
		if (k->params[i].is_const)
			continue;
		const blk_arg *arg = &args[a++];
		if (k->params[i].kind == BLK_PARAM_POINTER)
			continue;
		bool is_float = k->params[i].kind == BLK_PARAM_FLOAT;
		double fv = arg->kind == BLK_ARG_FLOAT ? arg->v.f : (double)arg->v.i;
		scalars[n_scalars++] = (ConstBinding){k->params[i].name, is_float, arg->v.i, fv};
	}
	Diag diag;
	diag_init(&diag);
	int64_t g[3];
	Arena scratch = {0};
	blk_status st = BLK_SUCCESS;
	if (irgen_grid(m->mod, k->node, &(IrgenOptions){.consts = v->consts, .n_consts = v->n_consts}, scalars,
	               n_scalars, g, &diag, &scratch)) {
		if (g[0] < 0 || g[1] < 0 || g[2] < 0 || g[0] > UINT32_MAX || g[1] > UINT32_MAX || g[2] > UINT32_MAX) {
			st = fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: the grid clause of '%s' gives (%lld, %lld, %lld)",
			          k->node->name, (long long)g[0], (long long)g[1], (long long)g[2]);
		} else {
			for (int i = 0; i < 3; i++)
				grid[i] = (unsigned)g[i];
			if (!v->grid_args)
				v->grid_args = arena_alloc(&m->arena, (size_t)(n_args ? n_args : 1) * sizeof *args);
			if (v->grid_args) {
				memcpy(v->grid_args, args, (size_t)n_args * sizeof *args);
				memcpy(v->grid, grid, sizeof v->grid);
			}
		}
	} else {
		st = fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: %s", diag.out.data ? diag.out.data : "no grid");
	}
	arena_free(&scratch);
	diag_free(&diag);
	if (scalars != buf)
		free(scalars);
	return st;
}

/* ---- the GPU backend ---- */

/* The disk cache's key of v (runtime.h: what it is made of). */
static bool variant_key(blk_kernel *k, Variant *v, CacheKey *out)
{
	blk_module *m = k->m;
	blk_context *ctx = m->ctx;
	int n = m->set.modules.len;
	const Source *buf[16];
	const Source **srcs = n <= 16 ? buf : malloc((size_t)n * sizeof *srcs);
	if (!srcs)
		return false;
	for (int i = 0; i < n; i++)
		srcs[i] = ((Module *)m->set.modules.items[i])->src;
	VariantKeyInput in = {
		.compiler_version = blk_compiler_version(),
		.sources = srcs,
		.n_sources = n,
		.kernel = k->node->name,
		.consts = v->consts,
		.n_consts = v->n_consts,
		.spec = v->spec,
		.passes = getenv("BLK_PASSES"),
		.num_warps = v->f->num_warps,
		.num_stages = v->f->num_stages,
		.arch = ctx->arch,
		.cc_major = ctx->cc_major,
		.cc_minor = ctx->cc_minor,
		.driver_version = ctx->driver_version,
	};
	bool ok = cache_variant_key(&in, out);
	if (srcs != buf)
		free(srcs);
	return ok;
}

/* PTX to a loaded module, in process (cuLink*); the cubin goes into the
 * disk cache as DIR/KEY.variant when dir is not NULL. *ms gets the time of
 * linking and loading. */
static blk_status gpu_link(blk_context *ctx, const char *kn, const char *ptx, size_t len, int smem, const char *dir,
                           const CacheKey *key, CUmodule *out, double *ms)
{
	const CudaDriver *cu = ctx->cu;
	char info[4096] = "", errlog[16384] = "", msg[512];
	CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
	                       CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
	void *vals[] = {info, (void *)(uintptr_t)sizeof info, errlog, (void *)(uintptr_t)sizeof errlog,
	                (void *)(uintptr_t)(ctx->debug ? 1 : 0)};
	double t0 = monotonic_ms(), t_write = 0;
	CUlinkState ls = NULL;
	CUresult r = cu->cuLinkCreate(sizeof opts / sizeof opts[0], opts, vals, &ls);
	if (r != CUDA_SUCCESS)
		return fail(cuda_blk_status(r), "blk_launch: kernel '%s': %s", kn,
		            cuda_describe(cu, r, "cuLinkCreate_v2", msg, sizeof msg));
	const char *call = "cuLinkAddData_v2";
	r = cu->cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)ptx, len + 1, kn, 0, NULL, NULL);
	void *cubin = NULL;
	size_t cubin_size = 0;
	if (r == CUDA_SUCCESS) {
		call = "cuLinkComplete";
		r = cu->cuLinkComplete(ls, &cubin, &cubin_size);
	}
	if (r == CUDA_SUCCESS && dir) {
		/* a cache that cannot be written is no error: the next process compiles again */
		double tw = monotonic_ms();
		cache_write_variant(dir, key, cubin, cubin_size, ptx, len, smem);
		t_write = monotonic_ms() - tw;
	}
	if (r == CUDA_SUCCESS) {
		call = "cuModuleLoadData";
		r = cu->cuModuleLoadData(out, cubin);
	}
	blk_status st = BLK_SUCCESS;
	if (r != CUDA_SUCCESS) {
		errlog[sizeof errlog - 1] = '\0';
		size_t n = strlen(errlog);
		while (n && (errlog[n - 1] == '\n' || errlog[n - 1] == '\r'))
			errlog[--n] = '\0';
		st = fail(cuda_blk_status(r), "blk_launch: kernel '%s' for %s: %s%s%s", kn, ctx->arch,
		          cuda_describe(cu, r, call, msg, sizeof msg), n ? "\n" : "", errlog);
	}
	cu->cuLinkDestroy(ls);
	*ms = monotonic_ms() - t0 - t_write;
	return st;
}

/* Compiles and loads v for ctx's device: PTX, the parameters' layout,
 * shared memory, a CUfunction. The cubin comes from the disk cache when it
 * has it (BLK_CACHE, BLK_ALWAYS_COMPILE); else it is compiled and put
 * there. Caller holds m->lock. */
static blk_status gpu_load_variant(blk_kernel *k, Variant *v)
{
	blk_module *m = k->m;
	blk_context *ctx = m->ctx;
	IrFunc *f = v->f;
	const char *kn = f->name;
	blk_status st = gpu_enter(ctx, "blk_launch");
	if (st != BLK_SUCCESS)
		return st;
	int warps = f->num_warps;
	if (warps < 1 || 32 * (long)warps > ctx->max_threads)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: kernel '%s' with num_warps %d needs %ld threads a "
		                                        "program; the device allows %d", kn, warps, 32 * (long)warps,
		            ctx->max_threads);

	/* the disk cache */
	CacheMode mode = cache_mode();
	char dir[4096];
	CacheKey key;
	bool cached = mode != CACHE_OFF && cache_dir(dir, sizeof dir) && variant_key(k, v, &key);
	CacheEntry entry = {0};
	CUmodule mod = NULL;
	char *ptx = NULL;
	size_t len = 0;
	int smem = 0;
	v->from_disk = false;
	v->ms_llvm = v->ms_ptx = v->ms_cubin = 0;
	double t0 = monotonic_ms();
	if (cached && mode == CACHE_READ_WRITE && cache_read_variant(dir, &key, &entry)) {
		if (ctx->cu->cuModuleLoadData(&mod, entry.cubin) == CUDA_SUCCESS) {
			ptx = (char *)entry.ptx;
			len = entry.ptx_len;
			smem = entry.shared_bytes;
			v->from_disk = true;
			v->ms_cubin = monotonic_ms() - t0;
		} else {
			/* a cubin this driver refuses: compiled again, and the entry rewritten */
			mod = NULL;
			cache_entry_free(&entry);
		}
	}
	if (!mod) {
		Diag diag;
		diag_init(&diag);
		bool compiled = gpu_compile_ptx_timed(f, ctx->arch, &ptx, &len, &smem, &v->ms_llvm, &v->ms_ptx, &diag);
		if (!compiled || !ptx) {
			st = fail(diag.errors ? BLK_ERROR_SOURCE : BLK_ERROR_OUT_OF_MEMORY, "%s",
			          diag.out.data && diag.out.len ? diag.out.data : "blk_launch: the kernel could not be compiled");
			diag_free(&diag);
			free(ptx);
			return st;
		}
		diag_free(&diag);
	}
	if (smem < 0 || smem > ctx->smem_optin)
		st = fail(BLK_ERROR_LAUNCH, "blk_launch: kernel '%s' needs %d bytes of shared memory; the device allows %d", kn,
		          smem, ctx->smem_optin);

	/* The arguments' layout: what the IR says each is, in the sizes the PTX declares. */
	int n_rt = 0;
	for (int i = 0; i < f->n_params; i++)
		n_rt += f->params[i].value != NULL;
	int sbuf[32];
	int *sizes = n_rt < 32 ? sbuf : malloc((size_t)(n_rt + 1) * sizeof *sizes);
	if (!v->pkind)
		v->pkind = arena_alloc(&m->arena, (size_t)(n_rt ? n_rt : 1));
	if (!v->pscalar)
		v->pscalar = arena_alloc(&m->arena, (size_t)(n_rt ? n_rt : 1));
	int np = sizes ? ptx_entry_params(ptx, len, kn, sizes, n_rt + 1) : 0;
	if (st != BLK_SUCCESS)
		;
	else if (!sizes || !v->pkind || !v->pscalar)
		st = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	else if (n_rt != k->n_args)
		st = fail(BLK_ERROR_LAUNCH, "blk_launch: internal error: kernel '%s' has %d runtime parameters in its IR, "
		                            "%d in its source", kn, n_rt, k->n_args);
	else if (np < 0)
		st = fail(BLK_ERROR_LAUNCH, "blk_launch: internal error: the PTX of kernel '%s' has no readable .entry %s", kn,
		          kn);
	else if (np != n_rt)
		st = fail(BLK_ERROR_LAUNCH, "blk_launch: internal error: the PTX of kernel '%s' takes %d parameters; it has %d "
		                            "runtime parameters", kn, np, n_rt);
	for (int i = 0, j = 0; st == BLK_SUCCESS && i < f->n_params; i++) {
		const IrParam *p = &f->params[i];
		if (!p->value)
			continue;
		ScalarKind sk = (ScalarKind)p->type.scalar;
		int bits = p->type.ptr ? 64 : scalar_bits(sk), size = sizes[j];
		bool fits = (size == 1 || size == 2 || size == 4 || size == 8) && size * 8 >= bits &&
		            (p->type.ptr || !scalar_is_float(sk) || sk < SK_F32 || size * 8 == bits);
		if (!fits) {
			StrBuf t = {0};
			type_print(p->type, &t);
			st = fail(BLK_ERROR_LAUNCH, "blk_launch: internal error: parameter '%s: %s' of kernel '%s' takes %d bytes "
			                            "in its PTX", p->name, t.data ? t.data : "?", kn, size);
			sb_free(&t);
			break;
		}
		v->pkind[j] = p->type.ptr ? PK_PTR : scalar_is_float(sk) ? PK_FLOAT : PK_INT;
		v->pscalar[j] = (uint8_t)sk;
		j++;
	}
	if (sizes != sbuf)
		free(sizes);

	if (st == BLK_SUCCESS && !mod)
		st = gpu_link(ctx, kn, ptx, len, smem, cached ? dir : NULL, &key, &mod, &v->ms_cubin);
	if (st == BLK_SUCCESS) {
		/* kept for blk_kernel_compile */
		v->ptx = arena_strndup(&m->arena, ptx, len);
		v->ptx_len = v->ptx ? len : 0;
		if (!v->ptx)
			st = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	}
	if (v->from_disk)
		cache_entry_free(&entry);
	else
		free(ptx);
	if (st != BLK_SUCCESS) {
		if (mod)
			ctx->cu->cuModuleUnload(mod);
		return st;
	}
	char msg[512];
	CUfunction fn = NULL;
	CUresult r = ctx->cu->cuModuleGetFunction(&fn, mod, kn);
	if (r == CUDA_SUCCESS && smem > 48 * 1024) {
		r = ctx->cu->cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
		if (r != CUDA_SUCCESS)
			cuda_describe(ctx->cu, r, "cuFuncSetAttribute", msg, sizeof msg);
	} else if (r != CUDA_SUCCESS) {
		cuda_describe(ctx->cu, r, "cuModuleGetFunction", msg, sizeof msg);
	}
	if (r != CUDA_SUCCESS) {
		ctx->cu->cuModuleUnload(mod);
		return fail(cuda_blk_status(r), "blk_launch: kernel '%s': %s", kn, msg);
	}
	v->cumod = mod;
	v->fn = fn;
	v->assert_state = 0;
	if (ir_assert_ops(v->f, NULL, 0) > 0) {
		size_t bytes;
		if (ctx->cu->cuModuleGetGlobal(&v->assert_state, &bytes, mod, "blk_assert_state") != CUDA_SUCCESS)
			v->assert_state = 0;
	}
	v->shared_bytes = smem;
	v->block = 32u * (unsigned)warps;
	return BLK_SUCCESS;
}

/* A kernel with asserts records its first failure in blk_assert_state:
 * {assert number, program x, y, z, element}. Read after the launch (the
 * stream was synchronized), reported with the assert's place, then cleared. */
static blk_status check_asserts(blk_context *ctx, Variant *v)
{
	uint32_t st[8];
	char msg[512];
	CUresult r = ctx->cu->cuMemcpyDtoH(st, v->assert_state, sizeof st);
	if (r != CUDA_SUCCESS)
		return fail(cuda_blk_status(r), "blk_launch: reading the asserts of '%s': %s", v->f->name,
		            cuda_describe(ctx->cu, r, "cuMemcpyDtoH_v2", msg, sizeof msg));
	if (!st[0])
		return ok();
	const Op *asserts[256];
	int n = ir_assert_ops(v->f, asserts, 256);
	const Op *a = st[0] <= (uint32_t)n && st[0] <= 256 ? asserts[st[0] - 1] : NULL;
	uint32_t zero[8] = {0};
	ctx->cu->cuMemcpyHtoD(v->assert_state, zero, sizeof zero);
	if (!a)
		return fail(BLK_ERROR_LAUNCH, "blk_launch: kernel '%s': assert %u failed in program (%u, %u, %u)", v->f->name,
		            st[0], st[1], st[2], st[3]);
	return fail(BLK_ERROR_LAUNCH, "%s:%u:%u: error: assertion failed: %s (kernel '%s', program (%u, %u, %u), element %u)",
	            a->loc.src ? a->loc.src->name : "?", a->loc.line, a->loc.col, a->str ? a->str : "", v->f->name, st[1],
	            st[2], st[3], st[4]);
}

static blk_status gpu_launch(blk_context *ctx, Variant *v, const blk_arg *args, int n_args, const unsigned grid[3],
                             const blk_launch_options *opt)
{
	blk_status st = gpu_enter(ctx, "blk_launch");
	if (st != BLK_SUCCESS)
		return st;
	if (!grid[0] || !grid[1] || !grid[2])
		return ok(); /* no programs */
	if (grid[0] > ctx->max_grid[0] || grid[1] > ctx->max_grid[1] || grid[2] > ctx->max_grid[2])
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: the grid (%u, %u, %u) of '%s' is larger than the device "
		                                        "allows (%u, %u, %u)", grid[0], grid[1], grid[2], v->f->name,
		            ctx->max_grid[0], ctx->max_grid[1], ctx->max_grid[2]);
	/* Each argument in an 8-byte slot, its value in the low bytes (the
	 * driver reads as many as the parameter's size). */
	uint64_t slot_buf[64]; /* no allocation on the launch path up to 64 arguments */
	void *ptr_buf[64];
	uint64_t *slots = slot_buf;
	void **ptrs = ptr_buf;
	if (n_args > 64) {
		slots = malloc((size_t)n_args * sizeof *slots);
		ptrs = malloc((size_t)n_args * sizeof *ptrs);
		if (!slots || !ptrs) {
			free(slots);
			free(ptrs);
			return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
		}
	}
	for (int i = 0; i < n_args; i++) {
		const blk_arg *a = &args[i];
		uint64_t bits;
		if (v->pkind[i] == PK_FLOAT) {
			double d = a->kind == BLK_ARG_FLOAT ? a->v.f : (double)a->v.i;
			ScalarKind sk = (ScalarKind)v->pscalar[i];
			if (sk == SK_F32) {
				float x = (float)d;
				uint32_t u;
				memcpy(&u, &x, sizeof u);
				bits = u;
			} else if (sk == SK_F64) {
				memcpy(&bits, &d, sizeof bits);
			} else {
				bits = fp_encode(sk, d);
			}
		} else {
			bits = a->kind == BLK_ARG_PTR ? (uint64_t)a->v.ptr : (uint64_t)a->v.i;
		}
		slots[i] = bits;
		ptrs[i] = &slots[i];
	}
	CUstream stream = opt ? (CUstream)opt->stream : NULL;
	CUresult r = ctx->cu->cuLaunchKernel(v->fn, grid[0], grid[1], grid[2], v->block, 1, 1, (unsigned)v->shared_bytes,
	                                     stream, ptrs, NULL);
	if (slots != slot_buf) {
		free(slots);
		free(ptrs);
	}
	char msg[512];
	if (r != CUDA_SUCCESS)
		return fail(cuda_blk_status(r), "blk_launch: kernel '%s': %s", v->f->name,
		            cuda_describe(ctx->cu, r, "cuLaunchKernel", msg, sizeof msg));
	if ((ctx->debug || v->assert_state) && (r = ctx->cu->cuStreamSynchronize(stream)) != CUDA_SUCCESS)
		return fail(cuda_blk_status(r), "blk_launch: kernel '%s' failed (grid %u, %u, %u): %s", v->f->name, grid[0],
		            grid[1], grid[2], cuda_describe(ctx->cu, r, "cuStreamSynchronize", msg, sizeof msg));
	if (v->assert_state)
		return check_asserts(ctx, v);
	return ok();
}

/* ---- the interpreter backend ---- */

static blk_status interp_launch(blk_context *ctx, blk_kernel *k, Variant *v, const blk_arg *args, int n_args,
                                const unsigned grid[3], const blk_launch_options *opt)
{
	if (grid[0] > INT32_MAX || grid[1] > INT32_MAX || grid[2] > INT32_MAX)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: the grid (%u, %u, %u) of '%s' is too large", grid[0],
		            grid[1], grid[2], k->node->name);
	InterpArg *iargs = malloc((size_t)(n_args ? n_args : 1) * sizeof *iargs);
	if (!iargs)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	for (int i = 0, a = 0; i < k->n_params; i++) {
		if (k->params[i].is_const)
			continue;
		const blk_arg *arg = &args[a];
		double fv = arg->kind == BLK_ARG_FLOAT ? arg->v.f : (double)arg->v.i;
		iargs[a++] = k->params[i].kind == BLK_PARAM_FLOAT
		                 ? interp_float(fv)
		                 : (InterpArg){.i = arg->kind == BLK_ARG_PTR ? (int64_t)arg->v.ptr : arg->v.i};
	}
	pthread_mutex_lock(&ctx->lock);
	int nb = ctx->n_bufs;
	InterpBuffer *bufs = malloc((size_t)(nb ? nb : 1) * sizeof *bufs);
	if (bufs) {
		memcpy(bufs, ctx->bufs, (size_t)nb * sizeof *bufs);
		/* name each buffer after the first pointer argument into it */
		for (int i = 0, a = 0; i < k->n_params; i++) {
			if (k->params[i].is_const)
				continue;
			const blk_arg *arg = &args[a++];
			int b = arg->kind == BLK_ARG_PTR ? find_buffer(ctx, arg->v.ptr, 0) : -1;
			if (b >= 0 && !bufs[b].name)
				bufs[b].name = k->params[i].name;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	const char *env = getenv("BLK_INTERP_THREADS");
	int threads = opt && opt->threads ? opt->threads : env ? atoi(env) : 1;
	StrBuf printed = {0};
	InterpOptions io = {.grid = {(int)grid[0], (int)grid[1], (int)grid[2]}, .threads = threads, .print_out = &printed};
	Diag diag;
	diag_init(&diag);
	blk_status st = BLK_SUCCESS;
	if (!bufs)
		st = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	else if (!interp_run(v->f, iargs, n_args, bufs, nb, &io, &diag))
		st = fail(BLK_ERROR_LAUNCH, "%s", diag.out.data ? diag.out.data : "the kernel failed");
	diag_free(&diag);
	free(bufs);
	free(iargs);
	if (printed.len) {
		pthread_mutex_lock(&ctx->lock);
		sb_putn(&ctx->printed, printed.data, printed.len);
		pthread_mutex_unlock(&ctx->lock);
	}
	sb_free(&printed);
	return st == BLK_SUCCESS ? ok() : st;
}

/* Starts a launch: the variant (compiled and loaded) and the grid. */
static blk_status prepare_launch(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                                 blk_context **ctx_out, Variant **v_out, unsigned grid[3])
{
	blk_module *m = k->m;
	Variant *v = NULL;
	blk_status st = BLK_SUCCESS;
	pthread_mutex_lock(&m->lock);
	blk_context *ctx = m->ctx;
	if (!ctx)
		st = fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: the context of kernel '%s' was destroyed", k->node->name);
	if (st == BLK_SUCCESS)
		st = find_variant(k, args, n_args, opt, ctx->backend == BLK_BACKEND_GPU ? arg_spec(k, args) : 0, FIND_LAUNCH,
		                  &v);
	if (st == BLK_SUCCESS)
		st = launch_grid(k, v, args, n_args, opt, grid);
	if (st == BLK_SUCCESS && ctx->backend == BLK_BACKEND_GPU && !v->fn)
		st = gpu_load_variant(k, v);
	pthread_mutex_unlock(&m->lock);
	*ctx_out = ctx;
	*v_out = v;
	return st;
}

blk_status blk_launch(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt)
{
	if (!k)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: kernel is NULL");
	blk_status st = check_args(k, args, n_args);
	if (st != BLK_SUCCESS)
		return st;
	unsigned grid[3] = {1, 1, 1};
	Variant *v = NULL;
	blk_context *ctx = NULL;
	if ((st = prepare_launch(k, args, n_args, opt, &ctx, &v, grid)) != BLK_SUCCESS)
		return st;
	if (ctx->backend == BLK_BACKEND_GPU)
		return gpu_launch(ctx, v, args, n_args, grid, opt);
	return interp_launch(ctx, k, v, args, n_args, grid, opt);
}

/* ---- synchronizing, timing, compiling ahead ------------------------------------------ */

blk_status blk_synchronize(blk_context *ctx)
{
	if (!ctx)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_synchronize: ctx is NULL");
	if (ctx->backend != BLK_BACKEND_GPU)
		return ok();
	blk_status st = gpu_enter(ctx, "blk_synchronize");
	if (st != BLK_SUCCESS)
		return st;
	CUresult r = ctx->cu->cuCtxSynchronize();
	if (r != CUDA_SUCCESS)
		return cuda_fail(ctx, r, "blk_synchronize", "cuCtxSynchronize");
	return ok();
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
static blk_status time_gpu(blk_context *ctx, Variant *v, const blk_arg *args, int n_args, const unsigned grid[3],
                           const blk_launch_options *opt, int warmups, int reps, double *median)
{
	const CudaDriver *cu = ctx->cu;
	const char *fn = "blk_time_launch";
	CUstream stream = opt ? (CUstream)opt->stream : NULL;
	blk_status st = BLK_SUCCESS;
	for (int i = 0; i < warmups && st == BLK_SUCCESS; i++)
		st = gpu_launch(ctx, v, args, n_args, grid, opt);
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
		return fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
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
		if ((st = gpu_launch(ctx, v, args, n_args, grid, opt)) != BLK_SUCCESS)
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
		*median = median_of(ms, reps);
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
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_time_launch: out of memory");
	blk_status st = interp_launch(ctx, k, v, args, n_args, grid, opt);
	for (int i = 0; i < reps && st == BLK_SUCCESS; i++) {
		double t0 = monotonic_ms();
		st = interp_launch(ctx, k, v, args, n_args, grid, opt);
		ms[i] = monotonic_ms() - t0;
	}
	if (st == BLK_SUCCESS)
		*median = median_of(ms, reps);
	free(ms);
	return st;
}

blk_status blk_time_launch(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt, int reps,
                           double *median_ms)
{
	if (!k || !median_ms)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_time_launch: %s is NULL", k ? "median_ms" : "kernel");
	if (reps < 1 || reps > 100000)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_time_launch: reps is %d (1 to 100000)", reps);
	*median_ms = 0;
	blk_status st = check_args(k, args, n_args);
	if (st != BLK_SUCCESS)
		return st;
	unsigned grid[3] = {1, 1, 1};
	Variant *v = NULL;
	blk_context *ctx = NULL;
	if ((st = prepare_launch(k, args, n_args, opt, &ctx, &v, grid)) != BLK_SUCCESS)
		return st;
	if (ctx->backend == BLK_BACKEND_GPU)
		st = time_gpu(ctx, v, args, n_args, grid, opt, 3, reps, median_ms);
	else
		st = time_interp(ctx, k, v, args, n_args, grid, opt, reps, median_ms);
	return st == BLK_SUCCESS ? ok() : st;
}

blk_status blk_kernel_compile(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                              blk_compile_info *info)
{
	if (!k)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_compile: kernel is NULL");
	if (info)
		memset(info, 0, sizeof *info);
	blk_status st = BLK_SUCCESS;
	if (args || n_args) {
		if ((st = check_args(k, args, n_args)) != BLK_SUCCESS)
			return st;
	}
	blk_module *m = k->m;
	Variant *v = NULL;
	pthread_mutex_lock(&m->lock);
	blk_context *ctx = m->ctx;
	if (!ctx)
		st = fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_compile: the context of kernel '%s' was destroyed",
		          k->node->name);
	int before = k->n_variants;
	bool gpu = ctx && ctx->backend == BLK_BACKEND_GPU, loaded = false;
	if (st == BLK_SUCCESS)
		st = find_variant(k, args, n_args, opt, gpu && args ? arg_spec(k, args) : 0, FIND_COMPILE, &v);
	if (st == BLK_SUCCESS && gpu && !v->fn) {
		st = gpu_load_variant(k, v);
		loaded = true;
	}
	if (st == BLK_SUCCESS && info) {
		bool made = k->n_variants > before && k->variants[k->n_variants - 1] == v;
		info->ptx = gpu ? v->ptx : NULL;
		info->ptx_len = gpu ? v->ptx_len : 0;
		info->shared_bytes = gpu ? v->shared_bytes : 0;
		info->num_warps = v->f->num_warps;
		info->num_stages = v->f->num_stages;
		if (made) {
			info->ms_parse = m->ms_parse;
			info->ms_irgen = v->ms_irgen;
			info->ms_passes = v->ms_passes;
		}
		if (loaded) {
			info->ms_llvm = v->ms_llvm;
			info->ms_ptx = v->ms_ptx;
			info->ms_cubin = v->ms_cubin;
		}
		info->from_disk_cache = gpu && v->from_disk;
	}
	pthread_mutex_unlock(&m->lock);
	return st == BLK_SUCCESS ? ok() : st;
}

/* ---- autotuning ------------------------------------------------------------------------ *
 *
 * A launch of an @autotune kernel that leaves a config's name open
 * (needs_tuning) runs the config chosen for the values of the kernel's key:
 * remembered in memory (k->tuned), else in the disk cache (KEY.tune), else
 * chosen now by timing each config on the launch's own arguments. The
 * memory of every pointer argument is saved first and put back after each
 * config, so the launch itself runs on what it was given. On the
 * interpreter nothing is timed: the first config that compiles is taken. */

static Tuned *find_tuned(blk_kernel *k, const int64_t *key, uint64_t spec)
{
	size_t bytes = (size_t)k->autotune.n_key * sizeof *key;
	for (int i = 0; i < k->n_tuned; i++)
		if (k->tuned[i].spec == spec && memcmp(k->tuned[i].key, key, bytes) == 0)
			return &k->tuned[i];
	return NULL;
}

static void remember_tuned(blk_kernel *k, const int64_t *key, uint64_t spec, int best)
{
	Tuned *t = find_tuned(k, key, spec);
	if (!t) {
		if (k->n_tuned == k->cap_tuned) {
			int cap = k->cap_tuned ? 2 * k->cap_tuned : 8;
			Tuned *nt = arena_alloc(&k->m->arena, (size_t)cap * sizeof *nt);
			if (!nt)
				return; /* no memory: the next launch tunes again */
			if (k->n_tuned)
				memcpy(nt, k->tuned, (size_t)k->n_tuned * sizeof *nt);
			k->tuned = nt;
			k->cap_tuned = cap;
		}
		int64_t *copy = arena_alloc(&k->m->arena, (size_t)(k->autotune.n_key ? k->autotune.n_key : 1) * sizeof *copy);
		if (!copy)
			return;
		memcpy(copy, key, (size_t)k->autotune.n_key * sizeof *key);
		t = &k->tuned[k->n_tuned++];
		t->key = copy;
		t->spec = spec;
	}
	t->best = best;
	/* launches that remembered another choice look again */
	k->last.v = NULL;
}

/* "BLOCK=1024 num_warps=4": config c as text (the disk cache checks it). */
static void config_text(const blk_kernel *k, int c, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; c < k->autotune.n_configs && i < k->autotune.config_len[c] && n < size; i++) {
		const ConstBinding *b = &k->autotune.configs[c][i];
		int w = b->is_float ? snprintf(buf + n, size - n, "%s%s=%.17g", i ? " " : "", b->name, b->f)
		                    : snprintf(buf + n, size - n, "%s%s=%lld", i ? " " : "", b->name, (long long)b->i);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/* The disk cache's key of the choice for these key values: the sources,
 * the kernel, what the launch gives (defines, consts, num_warps,
 * num_stages), the key's values, the specialization, the device. */
static bool tune_key(blk_kernel *k, const blk_launch_options *opt, const int64_t *key, uint64_t spec, CacheKey *out)
{
	blk_module *m = k->m;
	int n = m->set.modules.len, nc = opt ? opt->n_consts : 0;
	const Source **srcs = malloc((size_t)(n ? n : 1) * sizeof *srcs);
	ConstBinding *given = malloc((size_t)(nc ? nc : 1) * sizeof *given);
	KeyHasher *h = srcs && given ? key_begin("blk autotune") : NULL;
	if (h) {
		for (int i = 0; i < n; i++)
			srcs[i] = ((Module *)m->set.modules.items[i])->src;
		for (int i = 0; i < nc; i++)
			given[i] = (ConstBinding){opt->consts[i].name ? opt->consts[i].name : "", opt->consts[i].is_float != 0,
			                          opt->consts[i].i, opt->consts[i].f};
		key_str(h, blk_compiler_version());
		key_sources(h, srcs, n);
		key_str(h, k->node->name);
		key_consts(h, m->defines, m->n_defines);
		key_consts(h, given, nc);
		key_i64(h, opt ? opt->num_warps : 0);
		key_i64(h, opt ? opt->num_stages : 0);
		key_bytes(h, key, (size_t)k->autotune.n_key * sizeof *key);
		key_i64(h, (int64_t)spec);
		key_str(h, m->ctx->device_name);
		key_str(h, m->ctx->arch);
	}
	free(srcs);
	free(given);
	return key_end(h, out);
}

/* The memory of a pointer argument, saved while configs are timed. */
typedef struct Saved {
	CUdeviceptr base, copy;
	size_t bytes;
} Saved;

static void free_saved(blk_context *ctx, Saved *s, int n)
{
	for (int i = 0; i < n; i++)
		ctx->cu->cuMemFree(s[i].copy);
	free(s);
}

/* Copies (on the device) the whole allocation holding each pointer
 * argument, each allocation once. */
static blk_status save_buffers(blk_context *ctx, const blk_kernel *k, const blk_arg *args, int n_args, Saved **out,
                               int *n_out)
{
	const CudaDriver *cu = ctx->cu;
	const char *fn = "blk_autotune";
	*out = NULL;
	*n_out = 0;
	CUresult r = cu->cuCtxSynchronize(); /* what the arguments hold is final */
	if (r != CUDA_SUCCESS)
		return cuda_fail(ctx, r, fn, "cuCtxSynchronize");
	Saved *s = calloc((size_t)(n_args ? n_args : 1), sizeof *s);
	if (!s)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
	int n = 0;
	blk_status st = BLK_SUCCESS;
	for (int a = 0; a < n_args && st == BLK_SUCCESS; a++) {
		if (args[a].kind != BLK_ARG_PTR)
			continue;
		CUdeviceptr base = 0;
		size_t bytes = 0;
		if ((r = cu->cuMemGetAddressRange(&base, &bytes, (CUdeviceptr)args[a].v.ptr)) != CUDA_SUCCESS) {
			char msg[512];
			st = fail(cuda_blk_status(r), "%s: argument %d of '%s' (0x%llx) is not device memory: %s", fn, a + 1,
			          k->node->name, (unsigned long long)args[a].v.ptr,
			          cuda_describe(cu, r, "cuMemGetAddressRange_v2", msg, sizeof msg));
			break;
		}
		bool seen = false;
		for (int j = 0; j < n && !seen; j++)
			seen = s[j].base == base;
		if (seen)
			continue;
		if ((r = cu->cuMemAlloc(&s[n].copy, bytes)) != CUDA_SUCCESS) {
			char msg[512];
			st = fail(cuda_blk_status(r), "%s: saving the %zu bytes argument %d of '%s' points into, to put them back "
			                              "after each config: %s (give the kernel's consts to launch without tuning)",
			          fn, bytes, a + 1, k->node->name, cuda_describe(cu, r, "cuMemAlloc_v2", msg, sizeof msg));
			break;
		}
		s[n].base = base;
		s[n].bytes = bytes;
		n++;
		if ((r = cu->cuMemcpyDtoD(s[n - 1].copy, base, bytes)) != CUDA_SUCCESS)
			st = cuda_fail(ctx, r, fn, "cuMemcpyDtoD_v2");
	}
	if (st != BLK_SUCCESS) {
		free_saved(ctx, s, n);
		return st;
	}
	*out = s;
	*n_out = n;
	return BLK_SUCCESS;
}

static blk_status restore_buffers(blk_context *ctx, const Saved *s, int n)
{
	const CudaDriver *cu = ctx->cu;
	CUresult r = cu->cuCtxSynchronize();
	for (int i = 0; i < n && r == CUDA_SUCCESS; i++)
		r = cu->cuMemcpyDtoD(s[i].base, s[i].copy, s[i].bytes);
	if (r == CUDA_SUCCESS)
		r = cu->cuCtxSynchronize(); /* before launches on streams that do not wait for the default one */
	return r == CUDA_SUCCESS ? BLK_SUCCESS : cuda_fail(ctx, r, "blk_autotune", "cuMemcpyDtoD_v2");
}

/* Why config c could not run, from the last error: one line, without
 * "blk_launch: ", cut to fit. */
static void note_failure(blk_tune_result *res, int c)
{
	if (!res || c >= 64)
		return;
	const char *e = blk_last_error();
	if (strncmp(e, "blk_launch: ", 12) == 0)
		e += 12;
	size_t size = sizeof res->note[c], n = 0;
	for (; e[n] && n + 1 < size; n++)
		res->note[c][n] = e[n] == '\n' ? ' ' : e[n];
	res->note[c][n] = '\0';
}

/* Runs every config of k on these arguments and sets *best to the fastest
 * (a kernel without configs: the one launch). Caller holds m->lock. */
static blk_status tune(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt, uint64_t spec,
                       blk_tune_result *res, int *best)
{
	blk_context *ctx = k->m->ctx;
	int nc = k->autotune.n_configs > 1 ? k->autotune.n_configs : 1;
	if (res) {
		memset(res, 0, sizeof *res);
		res->n_configs = nc;
		res->best = -1;
		for (int c = 0; c < 64; c++)
			res->ms[c] = -1;
	}
	*best = -1;
	blk_status st = BLK_SUCCESS, first_failure = BLK_SUCCESS;
	StrBuf first_msg = {0};
	double best_ms = 0;
	Saved *saved = NULL;
	int n_saved = 0;
	bool gpu = ctx->backend == BLK_BACKEND_GPU;
	if (gpu && (st = save_buffers(ctx, k, args, n_args, &saved, &n_saved)) != BLK_SUCCESS)
		return st;
	for (int c = 0; c < nc; c++) {
		Variant *v = NULL;
		unsigned grid[3] = {1, 1, 1};
		double ms = 0;
		bool ran = false;
		if (!gpu && *best >= 0) {
			if (res && c < 64)
				snprintf(res->note[c], sizeof res->note[c], "not timed on the interpreter");
			continue;
		}
		st = config_variant(k, opt, c, spec, &v);
		if (st == BLK_SUCCESS && gpu && !v->fn)
			st = gpu_load_variant(k, v);
		if (st == BLK_SUCCESS && gpu)
			st = launch_grid(k, v, args, n_args, opt, grid);
		if (st == BLK_SUCCESS && gpu) {
			ran = true;
			st = time_gpu(ctx, v, args, n_args, grid, opt, 3, 10, &ms);
		}
		if (st == BLK_SUCCESS) {
			if (res && c < 64)
				res->ms[c] = ms;
			if (*best < 0 || ms < best_ms) {
				*best = c;
				best_ms = ms;
			}
		} else {
			note_failure(res, c);
			if (first_failure == BLK_SUCCESS) {
				first_failure = st;
				sb_puts(&first_msg, blk_last_error());
			}
		}
		if (ran) {
			/* a fault leaves the context unusable: no config can run after it */
			CUresult r = ctx->cu->cuCtxSynchronize();
			blk_status rs = cuda_error_is_sticky(r) ? st : restore_buffers(ctx, saved, n_saved);
			if (rs != BLK_SUCCESS) {
				st = rs;
				*best = -1;
				break;
			}
		}
		st = BLK_SUCCESS;
	}
	if (gpu)
		free_saved(ctx, saved, n_saved);
	if (st == BLK_SUCCESS && *best < 0) {
		st = first_failure != BLK_SUCCESS ? first_failure : BLK_ERROR_LAUNCH;
		fail(st, "no config of kernel '%s' can run; the first: %s", k->node->name,
		     first_msg.data ? first_msg.data : "?");
	}
	sb_free(&first_msg);
	if (res)
		res->best = *best;
	return st;
}

/* The config for these key values: remembered, on disk, or (for a launch)
 * tuned now. *known is false when it is only a guess (compiling ahead
 * before any tuning: the first config). Caller holds m->lock. */
static blk_status choose_config(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                                uint64_t spec, const int64_t *key, FindMode mode, int *cfg, bool *known)
{
	*known = true;
	*cfg = 0;
	Tuned *t = find_tuned(k, key, spec);
	if (t) {
		*cfg = t->best;
		return BLK_SUCCESS;
	}
	bool gpu = k->m->ctx->backend == BLK_BACKEND_GPU;
	char dir[4096], text[512], stored[512];
	CacheKey ck;
	bool disk = gpu && cache_mode() != CACHE_OFF && cache_dir(dir, sizeof dir) && tune_key(k, opt, key, spec, &ck);
	int index;
	if (disk && cache_read_tune(dir, &ck, &index, stored, sizeof stored) && index < k->autotune.n_configs) {
		config_text(k, index, text, sizeof text);
		if (strcmp(text, stored) == 0) {
			remember_tuned(k, key, spec, index);
			*cfg = index;
			return BLK_SUCCESS;
		}
	}
	if (mode == FIND_COMPILE) {
		*known = false;
		return BLK_SUCCESS;
	}
	blk_status st = tune(k, args, n_args, opt, spec, NULL, cfg);
	if (st != BLK_SUCCESS)
		return st;
	remember_tuned(k, key, spec, *cfg);
	if (disk) {
		config_text(k, *cfg, text, sizeof text);
		cache_write_tune(dir, &ck, *cfg, text);
	}
	return BLK_SUCCESS;
}

blk_status blk_autotune(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                        blk_tune_result *result)
{
	if (!k)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_autotune: kernel is NULL");
	blk_status st = check_args(k, args, n_args);
	if (st != BLK_SUCCESS)
		return st;
	blk_module *m = k->m;
	pthread_mutex_lock(&m->lock);
	blk_context *ctx = m->ctx;
	if (!ctx)
		st = fail(BLK_ERROR_INVALID_ARGUMENT, "blk_autotune: the context of kernel '%s' was destroyed", k->node->name);
	int best = -1;
	uint64_t spec = ctx && ctx->backend == BLK_BACKEND_GPU ? arg_spec(k, args) : 0;
	if (st == BLK_SUCCESS)
		st = tune(k, args, n_args, opt, spec, result, &best);
	if (st == BLK_SUCCESS && k->autotune.n_configs > 1) {
		int n_key = k->autotune.n_key;
		int64_t kbuf[16];
		int64_t *key = n_key <= 16 ? kbuf : malloc((size_t)n_key * sizeof *key);
		if (key) {
			key_values(k, args, opt, key);
			remember_tuned(k, key, spec, best);
			char dir[4096], text[512];
			CacheKey ck;
			if (ctx->backend == BLK_BACKEND_GPU && cache_mode() != CACHE_OFF && cache_dir(dir, sizeof dir) &&
			    tune_key(k, opt, key, spec, &ck)) {
				config_text(k, best, text, sizeof text);
				cache_write_tune(dir, &ck, best, text);
			}
			if (key != kbuf)
				free(key);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return st == BLK_SUCCESS ? ok() : st;
}
