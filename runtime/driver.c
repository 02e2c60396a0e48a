/* driver.c: the CUDA driver layer (driver.h). libcuda.so.1 is opened with
 * dlopen at first use and its functions looked up by their exact names, so
 * libblk builds, and runs on the interpreter, where there is no driver; the
 * driver's errors become messages that name the call and the error. It
 * knows nothing of the runtime: driver.h and libc only. */
#include "driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------ */

/* The codes of cuda.h (CUDA 13) with a description of each, for messages
 * where the driver cannot name a code itself (it is not loaded, or too old
 * to know it). */
#define CUDA_ERRORS(E) \
	E(0, CUDA_SUCCESS, "no error") \
	E(1, CUDA_ERROR_INVALID_VALUE, "invalid argument") \
	E(2, CUDA_ERROR_OUT_OF_MEMORY, "out of memory") \
	E(3, CUDA_ERROR_NOT_INITIALIZED, "initialization error") \
	E(4, CUDA_ERROR_DEINITIALIZED, "driver shutting down") \
	E(5, CUDA_ERROR_PROFILER_DISABLED, "profiler disabled while using external profiling tool") \
	E(6, CUDA_ERROR_PROFILER_NOT_INITIALIZED, "profiler not initialized") \
	E(7, CUDA_ERROR_PROFILER_ALREADY_STARTED, "profiler already started") \
	E(8, CUDA_ERROR_PROFILER_ALREADY_STOPPED, "profiler already stopped") \
	E(34, CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library") \
	E(36, CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "the call requires a newer CUDA driver") \
	E(46, CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) is/are busy or unavailable") \
	E(100, CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected") \
	E(101, CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal") \
	E(102, CUDA_ERROR_DEVICE_NOT_LICENSED, "device doesn't have valid Grid license") \
	E(200, CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid") \
	E(201, CUDA_ERROR_INVALID_CONTEXT, "invalid device context") \
	E(202, CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current") \
	E(205, CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed") \
	E(206, CUDA_ERROR_UNMAP_FAILED, "unmapping of buffer object failed") \
	E(207, CUDA_ERROR_ARRAY_IS_MAPPED, "array is mapped") \
	E(208, CUDA_ERROR_ALREADY_MAPPED, "resource already mapped") \
	E(209, CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device") \
	E(210, CUDA_ERROR_ALREADY_ACQUIRED, "resource already acquired") \
	E(211, CUDA_ERROR_NOT_MAPPED, "resource not mapped") \
	E(212, CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "resource not mapped as array") \
	E(213, CUDA_ERROR_NOT_MAPPED_AS_POINTER, "resource not mapped as pointer") \
	E(214, CUDA_ERROR_ECC_UNCORRECTABLE, "uncorrectable ECC error encountered") \
	E(215, CUDA_ERROR_UNSUPPORTED_LIMIT, "limit is not supported on this architecture") \
	E(216, CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "exclusive-thread device already in use by a different thread") \
	E(217, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access is not supported between these two devices") \
	E(218, CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed") \
	E(219, CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "invalid OpenGL or DirectX context") \
	E(220, CUDA_ERROR_NVLINK_UNCORRECTABLE, "uncorrectable NVLink error detected during the execution") \
	E(221, CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler library not found") \
	E(222, CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported toolchain") \
	E(223, CUDA_ERROR_JIT_COMPILATION_DISABLED, "PTX JIT compilation was disabled") \
	E(224, CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "the provided execution affinity is not supported") \
	E(225, CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "the provided PTX contains unsupported call to cudaDeviceSynchronize") \
	E(226, CUDA_ERROR_CONTAINED, "an exception occurred on the device, contained") \
	E(300, CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid") \
	E(301, CUDA_ERROR_FILE_NOT_FOUND, "file not found") \
	E(302, CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found") \
	E(303, CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialization failed") \
	E(304, CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS") \
	E(400, CUDA_ERROR_INVALID_HANDLE, "invalid resource handle") \
	E(401, CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state") \
	E(402, CUDA_ERROR_LOSSY_QUERY, "attempted introspection would be semantically lossy") \
	E(500, CUDA_ERROR_NOT_FOUND, "named symbol not found") \
	E(600, CUDA_ERROR_NOT_READY, "device not ready") \
	E(700, CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered") \
	E(701, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch") \
	E(702, CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated") \
	E(703, CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, "launch uses incompatible texturing mode") \
	E(704, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled") \
	E(705, CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled") \
	E(708, CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "cannot set while device is active in this process") \
	E(709, CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed") \
	E(710, CUDA_ERROR_ASSERT, "device-side assert triggered") \
	E(711, CUDA_ERROR_TOO_MANY_PEERS, "peer mapping resources exhausted") \
	E(712, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped") \
	E(713, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region") \
	E(714, CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error") \
	E(715, CUDA_ERROR_ILLEGAL_INSTRUCTION, "an illegal instruction was encountered") \
	E(716, CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address") \
	E(717, CUDA_ERROR_INVALID_ADDRESS_SPACE, "operation not supported on global/shared address space") \
	E(718, CUDA_ERROR_INVALID_PC, "invalid program counter") \
	E(719, CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure") \
	E(720, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch") \
	E(721, CUDA_ERROR_TENSOR_MEMORY_LEAK, "tensor memory not completely freed") \
	E(800, CUDA_ERROR_NOT_PERMITTED, "operation not permitted") \
	E(801, CUDA_ERROR_NOT_SUPPORTED, "operation not supported") \
	E(802, CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized") \
	E(803, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has unsupported display driver / cuda driver combination") \
	E(804, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "forward compatibility was attempted on non supported HW") \
	E(805, CUDA_ERROR_MPS_CONNECTION_FAILED, "MPS client failed to connect to the MPS control daemon or the MPS server") \
	E(806, CUDA_ERROR_MPS_RPC_FAILURE, "the remote procedural call between the MPS server and the MPS client failed") \
	E(807, CUDA_ERROR_MPS_SERVER_NOT_READY, "MPS server is not ready to accept new MPS client requests") \
	E(808, CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "the hardware resources required to create MPS client have been exhausted") \
	E(809, CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "the hardware resources required to support device connections have been exhausted") \
	E(810, CUDA_ERROR_MPS_CLIENT_TERMINATED, "the MPS client has been terminated by the server") \
	E(811, CUDA_ERROR_CDP_NOT_SUPPORTED, "module is using CUDA Dynamic Parallelism, but the current configuration does not support it") \
	E(812, CUDA_ERROR_CDP_VERSION_MISMATCH, "CUDA Dynamic Parallelism is not supported with the version of the module") \
	E(900, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing") \
	E(901, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture") \
	E(902, CUDA_ERROR_STREAM_CAPTURE_MERGE, "operation would result in a merge of separate capture sequences") \
	E(903, CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture was not ended in the same stream as it began") \
	E(904, CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work") \
	E(905, CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "dependency created on uncaptured work in another stream") \
	E(906, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "operation would make the legacy stream depend on a capturing blocking stream") \
	E(907, CUDA_ERROR_CAPTURED_EVENT, "operation not permitted on an event last recorded in a capturing stream") \
	E(908, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "attempt to terminate a thread-local capture sequence from another thread") \
	E(909, CUDA_ERROR_TIMEOUT, "wait operation timed out") \
	E(910, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update") \
	E(911, CUDA_ERROR_EXTERNAL_DEVICE, "an async error has occurred in an external entity outside of CUDA") \
	E(912, CUDA_ERROR_INVALID_CLUSTER_SIZE, "a kernel launch error has occurred due to cluster misconfiguration") \
	E(913, CUDA_ERROR_FUNCTION_NOT_LOADED, "the function handle is not loaded") \
	E(914, CUDA_ERROR_INVALID_RESOURCE_TYPE, "one or more resources passed in are not valid resource types for the operation") \
	E(915, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "one or more resources are insufficient or non-applicable for the operation") \
	E(916, CUDA_ERROR_KEY_ROTATION, "an error happened during the key rotation sequence") \
	E(917, CUDA_ERROR_STREAM_DETACHED, "the stream is detached") \
	E(999, CUDA_ERROR_UNKNOWN, "unknown error")

typedef struct CudaErrorInfo {
	int code;
	const char *name, *text;
} CudaErrorInfo;

static const CudaErrorInfo cuda_errors[] = {
#define CUDA_ERROR_ROW(code, name, text) {code, #name, text},
	CUDA_ERRORS(CUDA_ERROR_ROW)
#undef CUDA_ERROR_ROW
};

static const CudaErrorInfo *error_info(CUresult r)
{
	/* sorted by code: a binary search */
	size_t lo = 0, hi = sizeof cuda_errors / sizeof cuda_errors[0];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cuda_errors[mid].code == r)
			return &cuda_errors[mid];
		if (cuda_errors[mid].code < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *cuda_error_name(CUresult r)
{
	const CudaErrorInfo *e = error_info(r);
	return e ? e->name : NULL;
}

const char *cuda_error_string(CUresult r)
{
	const CudaErrorInfo *e = error_info(r);
	return e ? e->text : NULL;
}

char *cuda_describe(const CudaDriver *drv, CUresult r, const char *call, char *buf, size_t size)
{
	const char *name = NULL, *text = NULL;
	if (drv && drv->cuGetErrorName && drv->cuGetErrorName(r, &name) != CUDA_SUCCESS)
		name = NULL;
	if (drv && drv->cuGetErrorString && drv->cuGetErrorString(r, &text) != CUDA_SUCCESS)
		text = NULL;
	if (!name)
		name = cuda_error_name(r);
	if (!text)
		text = cuda_error_string(r);
	if (name && text)
		snprintf(buf, size, "%s failed: %s (%s)", call, name, text);
	else if (name)
		snprintf(buf, size, "%s failed: %s", call, name);
	else
		snprintf(buf, size, "%s failed: CUDA error %d", call, (int)r);
	return buf;
}

bool cuda_error_is_sticky(CUresult r)
{
	switch (r) {
	case 214: /* ECC_UNCORRECTABLE */
	case 220: /* NVLINK_UNCORRECTABLE */
	case 700: /* ILLEGAL_ADDRESS */
	case 702: /* LAUNCH_TIMEOUT */
	case 709: /* CONTEXT_IS_DESTROYED */
	case 710: /* ASSERT */
	case 714: /* HARDWARE_STACK_ERROR */
	case 715: /* ILLEGAL_INSTRUCTION */
	case 716: /* MISALIGNED_ADDRESS */
	case 717: /* INVALID_ADDRESS_SPACE */
	case 718: /* INVALID_PC */
	case 719: /* LAUNCH_FAILED */
	case 721: /* TENSOR_MEMORY_LEAK */
		return true;
	default:
		return false;
	}
}

/* ---- loading ------------------------------------------------------------------- */

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static CudaDriver driver;
static const CudaDriver *driver_ok;
static char driver_why[1024];

static void load_driver(void)
{
	const char *env = getenv("BLK_CUDA_DRIVER");
	const char *path = env && env[0] ? env : "libcuda.so.1";
	static char path_copy[512];
	snprintf(path_copy, sizeof path_copy, "%s", path);
	driver.path = path_copy;
	dlerror();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *err = dlerror();
		if (!err)
			err = "cannot be opened";
		/* dlerror() usually starts with the path already */
		if (strncmp(err, path, strlen(path)) == 0)
			snprintf(driver_why, sizeof driver_why, "no CUDA driver found (%s)", err);
		else
			snprintf(driver_why, sizeof driver_why, "no CUDA driver found (%s: %s)", path, err);
		return;
	}
	driver.handle = h;
#define CUDA_LOOKUP(field, symbol, ret, params) \
	{ \
		void *sym = dlsym(h, symbol); \
		if (!sym) { \
			snprintf(driver_why, sizeof driver_why, \
			         "the CUDA driver %s has no function %s (a driver older than CUDA 11?)", path_copy, symbol); \
			memset(&driver, 0, sizeof driver); \
			dlclose(h); \
			return; \
		} \
		memcpy(&driver.field, &sym, sizeof sym); \
	}
	CUDA_DRIVER_FUNCTIONS(CUDA_LOOKUP)
#undef CUDA_LOOKUP
	void *tmap = dlsym(h, "cuTensorMapEncodeTiled"); /* optional: TMA only */
	memcpy(&driver.cuTensorMapEncodeTiled, &tmap, sizeof tmap);
	CUresult r = driver.cuInit(0);
	if (r != CUDA_SUCCESS) {
		/* the handle stays open: its error names are still of use */
		cuda_describe(&driver, r, "cuInit", driver_why, sizeof driver_why);
		return;
	}
	driver_ok = &driver;
}

const CudaDriver *cuda_driver(const char **why)
{
	pthread_once(&driver_once, load_driver);
	if (why)
		*why = driver_ok ? "" : driver_why;
	return driver_ok;
}
