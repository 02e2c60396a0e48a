/* driver.h: the CUDA driver layer (driver.c): the driver's types and the
 * few functions libblk calls, declared here, so that no CUDA header is
 * needed to build; the driver itself is loaded with dlopen at first use.
 * It knows nothing of the runtime: libc only.
 *
 * Every function that takes a driver struct expects the one cuda_driver()
 * returned. Nothing here prints or exits. */
#ifndef BLK_DRIVER_H
#define BLK_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

/* ---- the driver's types (as cuda.h has them on 64-bit Linux) -------------- */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
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
enum {
	CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0, /* of the loaded function: its registers counted */
	CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
	CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/* CUjit_option */
enum {
	CU_JIT_INFO_LOG_BUFFER = 3,
	CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	CU_JIT_ERROR_LOG_BUFFER = 5,
	CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
	CU_JIT_LOG_VERBOSE = 12,
};

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
	X(cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult, \
	  (CUmodule *mod, const void *image, unsigned n_options, CUjit_option *options, void **values)) \
	X(cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction *fn, CUmodule mod, const char *name)) \
	X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule mod)) \
	X(cuModuleGetGlobal, "cuModuleGetGlobal_v2", CUresult, (CUdeviceptr *ptr, size_t *bytes, CUmodule mod, const char *name)) \
	X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction fn, int attrib, int value)) \
	X(cuFuncGetAttribute, "cuFuncGetAttribute", CUresult, (int *value, int attrib, CUfunction fn)) \
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

/* Tensor maps (CUtensorMapDataType and the other enums of
 * cuTensorMapEncodeTiled): 128 bytes, aligned to 64. */
enum {
	CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
	CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
	CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
	CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
	CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
	CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
	CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
	CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
	CU_TENSOR_MAP_SWIZZLE_32B = 1,
	CU_TENSOR_MAP_SWIZZLE_64B = 2,
	CU_TENSOR_MAP_SWIZZLE_128B = 3,
	CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
	CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
	CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1, /* NaN outside the tensor (float types only) */
};
typedef struct CUtensorMap {
	_Alignas(64) unsigned long long opaque[16];
} CUtensorMap;
typedef CUresult (*CuTensorMapEncodeTiled)(CUtensorMap *map, int data_type, unsigned rank, void *address,
                                           const unsigned long long *dims, const unsigned long long *strides,
                                           const unsigned *box, const unsigned *element_strides, int interleave,
                                           int swizzle, int l2_promotion, int oob_fill);

typedef struct CudaDriver {
#define CUDA_FIELD(field, symbol, ret, params) ret (*field) params;
	CUDA_DRIVER_FUNCTIONS(CUDA_FIELD)
#undef CUDA_FIELD
	/* "cuTensorMapEncodeTiled" (drivers of CUDA 12 on); NULL where missing */
	CuTensorMapEncodeTiled cuTensorMapEncodeTiled;
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

/* True when r leaves the context unusable (a kernel faulted): every later
 * call in the process fails with the same code. */
bool cuda_error_is_sticky(CUresult r);

#endif
