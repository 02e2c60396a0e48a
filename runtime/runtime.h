/* runtime.h: internal to runtime/ (blk.h is the public header). The CUDA
 * driver layer (driver.c): the driver's types and the few functions libblk
 * calls, declared here, so that no CUDA header is needed to build; the
 * driver itself is loaded with dlopen at first use.
 *
 * Every function that takes a driver struct expects the one cuda_driver()
 * returned. Nothing here prints or exits. */
#ifndef BLK_RUNTIME_H
#define BLK_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk.h"

/* ---- the driver's types (as cuda.h has them on 64-bit Linux) -------------- */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUlinkState_st *CUlinkState;
typedef int CUjit_option;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_DEINITIALIZED = 4,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_ASSERT = 710,
	CUDA_ERROR_LAUNCH_FAILED = 719,
	CUDA_ERROR_UNKNOWN = 999,
};

/* CUdevice_attribute */
enum {
	CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
	CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
	CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
	CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
	CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
	CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* CUfunction_attribute */
enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };

/* CUjit_option and CUjitInputType */
enum {
	CU_JIT_INFO_LOG_BUFFER = 3,
	CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	CU_JIT_ERROR_LOG_BUFFER = 5,
	CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
	CU_JIT_LOG_VERBOSE = 12,
};
enum { CU_JIT_INPUT_PTX = 1 };

enum { CU_EVENT_DEFAULT = 0 };

/* ---- the driver's functions ------------------------------------------------
 *
 * Each is looked up by its exact exported name, given beside it: where
 * cuda.h maps a name onto a versioned one (cuMemAlloc -> cuMemAlloc_v2) we
 * take that version, and nowhere else a _v2 (cuCtxSynchronize_v2 is another
 * function, taking a context). */
#define CUDA_DRIVER_FUNCTIONS(X) \
	X(cuInit, "cuInit", CUresult, (unsigned flags)) \
	X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice *dev, int ordinal)) \
	X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int *count)) \
	X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int *value, int attrib, CUdevice dev)) \
	X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char *name, int len, CUdevice dev)) \
	X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext *ctx, CUdevice dev)) \
	X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice dev)) \
	X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext ctx)) \
	X(cuCtxGetCurrent, "cuCtxGetCurrent", CUresult, (CUcontext *ctx)) \
	X(cuCtxSynchronize, "cuCtxSynchronize", CUresult, (void)) \
	X(cuCtxGetDevice, "cuCtxGetDevice", CUresult, (CUdevice *dev)) \
	X(cuDriverGetVersion, "cuDriverGetVersion", CUresult, (int *version)) \
	X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *ptr, size_t bytes)) \
	X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr ptr)) \
	X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr dst, const void *src, size_t bytes)) \
	X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void *dst, CUdeviceptr src, size_t bytes)) \
	X(cuMemcpyDtoD, "cuMemcpyDtoD_v2", CUresult, (CUdeviceptr dst, CUdeviceptr src, size_t bytes)) \
	X(cuMemsetD8, "cuMemsetD8_v2", CUresult, (CUdeviceptr dst, unsigned char value, size_t n)) \
	X(cuMemsetD8Async, "cuMemsetD8Async", CUresult, (CUdeviceptr dst, unsigned char value, size_t n, CUstream stream)) \
	X(cuMemGetAddressRange, "cuMemGetAddressRange_v2", CUresult, (CUdeviceptr *base, size_t *bytes, CUdeviceptr p)) \
	X(cuLinkCreate, "cuLinkCreate_v2", CUresult, \
	  (unsigned n_options, CUjit_option *options, void **values, CUlinkState *state)) \
	X(cuLinkAddData, "cuLinkAddData_v2", CUresult, \
	  (CUlinkState state, int type, void *data, size_t size, const char *name, unsigned n_options, \
	   CUjit_option *options, void **values)) \
	X(cuLinkComplete, "cuLinkComplete", CUresult, (CUlinkState state, void **cubin, size_t *size)) \
	X(cuLinkDestroy, "cuLinkDestroy", CUresult, (CUlinkState state)) \
	X(cuModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule *mod, const void *image)) \
	X(cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction *fn, CUmodule mod, const char *name)) \
	X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule mod)) \
	X(cuModuleGetGlobal, "cuModuleGetGlobal_v2", CUresult, (CUdeviceptr *ptr, size_t *bytes, CUmodule mod, const char *name)) \
	X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction fn, int attrib, int value)) \
	X(cuLaunchKernel, "cuLaunchKernel", CUresult, \
	  (CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
	   unsigned shared_bytes, CUstream stream, void **params, void **extra)) \
	X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream stream)) \
	X(cuEventCreate, "cuEventCreate", CUresult, (CUevent *ev, unsigned flags)) \
	X(cuEventRecord, "cuEventRecord", CUresult, (CUevent ev, CUstream stream)) \
	X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent ev)) \
	X(cuEventElapsedTime, "cuEventElapsedTime", CUresult, (float *ms, CUevent start, CUevent end)) \
	X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent ev)) \
	X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult err, const char **name)) \
	X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult err, const char **text))

typedef struct CudaDriver {
#define CUDA_FIELD(field, symbol, ret, params) ret (*field) params;
	CUDA_DRIVER_FUNCTIONS(CUDA_FIELD)
#undef CUDA_FIELD
	void *handle;     /* from dlopen */
	const char *path; /* what was opened: "libcuda.so.1" or $BLK_CUDA_DRIVER */
} CudaDriver;

/* The driver, loaded and initialized (cuInit) once per process: the
 * library named by $BLK_CUDA_DRIVER (read at the first call), else
 * "libcuda.so.1". NULL when it cannot be used; then *why (if why is not
 * NULL) is a static message, e.g. "no CUDA driver found (libcuda.so.1:
 * cannot open shared object file: No such file or directory)" or "cuInit
 * failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)". */
const CudaDriver *cuda_driver(const char **why);

/* ---- errors ---------------------------------------------------------------- */

/* "CUDA_ERROR_OUT_OF_MEMORY" and "out of memory" for the codes of cuda.h
 * (CUDA 13); NULL for a code not in the table. Need no driver. */
const char *cuda_error_name(CUresult r);
const char *cuda_error_string(CUresult r);

/* Writes "CALL failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" into buf:
 * the driver's own name and description when it knows the code (drv may be
 * NULL), else the table's, else "CUDA error 1234". Returns buf. */
char *cuda_describe(const CudaDriver *drv, CUresult r, const char *call, char *buf, size_t size);

/* What a failed driver call means to a caller of blk.h (a blk_status):
 * out of memory; no device (no driver, no GPU, the driver too old); a
 * kernel that failed while running (illegal address, assert, ... : the
 * context is unusable afterwards); else BLK_ERROR_LAUNCH as well. */
blk_status cuda_blk_status(CUresult r);

/* True when r leaves the context unusable (a kernel faulted): every later
 * call in the process fails with the same code. */
bool cuda_error_is_sticky(CUresult r);

/* ---- targets and kernels ------------------------------------------------------ */

/* The PTX target for a device of compute capability major.minor: the
 * newest target the PTX back end supports (llvm_ptx_isa_version) that is
 * not newer than the device, "sm_90" for 9.0, "sm_80" for 8.0, "sm_90"
 * for 10.0 (PTX is compiled by the driver for newer devices). False when
 * the device is older than every target (below sm_70). */
bool cuda_arch_for(int major, int minor, char *buf, size_t size);

/* The parameters of `.entry NAME(...)` in PTX text: for each, in order, its
 * size in bytes (.u64/.b64/.s64/.f64: 8; .u32/.b32/.s32/.f32: 4; 16-bit: 2;
 * 8-bit: 1; `.align A .b8 x[N]`: N). Returns the count (at most `max` sizes
 * are written), or -1 when there is no such entry or its list cannot be
 * read. */
int ptx_entry_params(const char *ptx, size_t len, const char *name, int *sizes, int max);

/* ---- the disk cache (cache.c) --------------------------------------------------
 *
 * Compiled GPU variants and autotuning choices, one file each in one folder:
 * $BLK_CACHE_DIR, else $XDG_CACHE_HOME/blk, else $HOME/.cache/blk (made when
 * missing). A file is named after its key, a 128-bit XXH3 hash in hex:
 * KEY.variant holds a header (magic, format version, key, lengths, shared
 * memory, XXH64 of the payload) and the payload (the cubin, then the PTX);
 * KEY.tune is four lines of text. Files are written to a temporary file in
 * the folder and renamed over the old one, so a reader sees a whole file or
 * none; a file that is short, damaged, of another format or another key is
 * refused (and rewritten by the caller). Nothing here reports errors: a
 * cache that cannot be used is a miss. */

enum { CACHE_FORMAT_VERSION = 1 };

typedef struct CacheKey {
	uint8_t b[16];
} CacheKey;

/* The environment's wish: BLK_CACHE=0 neither reads nor writes;
 * BLK_ALWAYS_COMPILE=1 (not 0) writes but never reads. Read at each call. */
typedef enum CacheMode { CACHE_OFF, CACHE_READ_WRITE, CACHE_WRITE_ONLY } CacheMode;
CacheMode cache_mode(void);

/* The cache folder (made with its parents when missing) into buf; false
 * when there is none (no variable says where, or it cannot be made). */
bool cache_dir(char *buf, size_t size);

/* A key, built field by field: each field is hashed with its length, so
 * that ("ab", "c") and ("a", "bc") differ. key_begin returns NULL when out
 * of memory; the other calls accept NULL (key_end then gives all zeros and
 * returns false). */
typedef struct KeyHasher KeyHasher;
KeyHasher *key_begin(const char *purpose);
void key_bytes(KeyHasher *h, const void *data, size_t len);
void key_str(KeyHasher *h, const char *s); /* NULL hashes as "" with a mark of its own */
void key_i64(KeyHasher *h, int64_t v);
bool key_end(KeyHasher *h, CacheKey *out);

/* "0123...ef": 32 hex digits and a NUL. */
void cache_key_hex(const CacheKey *key, char out[33]);

struct Source;
struct ConstBinding;
/* The sources' names and texts, in order; const values by name (their
 * order does not count). */
void key_sources(KeyHasher *h, const struct Source *const *sources, int n);
void key_consts(KeyHasher *h, const struct ConstBinding *consts, int n);

/* What a compiled variant's key is made of. */
typedef struct VariantKeyInput {
	const char *compiler_version;        /* blk_compiler_version() */
	const struct Source *const *sources; /* the module's and its imports', in the order loaded */
	int n_sources;
	const char *kernel;
	const struct ConstBinding *consts;   /* every const value it was compiled with, in any order */
	int n_consts;
	uint64_t spec;                       /* arguments specialized (multiples of 16; equal to 1) */
	const char *passes;                  /* BLK_PASSES, or NULL: the tile passes that ran */
	int num_warps, num_stages;
	const char *arch;                    /* the PTX target, "sm_90" */
	int cc_major, cc_minor;              /* the device's: the driver builds the cubin for it */
	int driver_version;                  /* cuDriverGetVersion: the driver that builds it */
} VariantKeyInput;
bool cache_variant_key(const VariantKeyInput *in, CacheKey *out);

/* An entry read back: data is the whole file (free with cache_entry_free);
 * the cubin starts 8-byte aligned; ptx is NUL-terminated. */
typedef struct CacheEntry {
	void *data;
	const void *cubin;
	size_t cubin_len;
	const char *ptx;
	size_t ptx_len;
	int shared_bytes;
} CacheEntry;

/* Reads DIR/KEY.variant: true when the file is whole and is the entry of
 * key. */
bool cache_read_variant(const char *dir, const CacheKey *key, CacheEntry *out);
void cache_entry_free(CacheEntry *e);
/* Writes DIR/KEY.variant (atomically); false when it could not. */
bool cache_write_variant(const char *dir, const CacheKey *key, const void *cubin, size_t cubin_len, const char *ptx,
                         size_t ptx_len, int shared_bytes);
/* Checks an entry file as cache_read_variant does: NULL when it is whole
 * (and of `key` when key is not NULL), else why not ("short", "bad magic",
 * "format version", "checksum", "key", "cannot be read"). For tests. */
const char *cache_check_variant_file(const char *path, const CacheKey *key);

/* Autotuning choices: DIR/KEY.tune holds the index of the best config and
 * its text ("BLOCK=1024 num_warps=4"). Reading gives both (config of at
 * most `size` bytes); the caller checks that the index and text still name
 * one of the kernel's configs. */
bool cache_read_tune(const char *dir, const CacheKey *key, int *index, char *config, size_t size);
bool cache_write_tune(const char *dir, const CacheKey *key, int index, const char *config);

/* The median of n values (sorts them). 0 for n == 0. */
double median_of(double *v, int n);

/* CLOCK_MONOTONIC in milliseconds. */
double monotonic_ms(void);

#endif
