/* fake_cuda.h: what the runtime tests see of the stand-in driver
 * (fake_cuda.c, built beside them as fake/libcuda.so.1): the record of the
 * last launch, the controls they reach with dlsym, and the setup that
 * points libblk at it. */
#ifndef BLK_FAKE_CUDA_H
#define BLK_FAKE_CUDA_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The registers a thread cuFuncGetAttribute reports for every function. */
enum { FAKE_CUDA_REGS = 42 };

/* What the stand-in's cuTensorMapEncodeTiled writes into a map (128 bytes;
 * tests/python/fake_torch.py mirrors it with ctypes). */
enum { FAKE_TMAP_BYTES = 128, FAKE_MAX_MAPS = 8, FAKE_MAX_RANK = 5, FAKE_TMAP_MAGIC = 0x746d6170 };
typedef struct FakeTensorMap {
	int magic, dtype, rank, swizzle, oob_fill;
	unsigned long long address;
	unsigned long long dims[FAKE_MAX_RANK], strides[FAKE_MAX_RANK - 1];
	unsigned box[FAKE_MAX_RANK];
} FakeTensorMap;
_Static_assert(sizeof(FakeTensorMap) <= FAKE_TMAP_BYTES, "a fake tensor map fits in a real one");

typedef struct FakeLaunch {
	char name[128];
	unsigned grid[3], block[3];
	unsigned smem;
	void *stream;
	int n_params;
	int sizes[64];
	unsigned char bytes[64][8];
	int max_dynamic_smem; /* cuFuncSetAttribute's value for the function, 0 if not set */
	int n_maps;           /* the parameters of 128 bytes (tensor maps), in order */
	FakeTensorMap maps[FAKE_MAX_MAPS];
} FakeLaunch;

/* The stand-in's controls (fake_cuda.c says what each does). */
typedef struct FakeCuda {
	void *handle;
	void (*set)(const char *key, long value);
	void (*fail)(const char *fn, int code, int count, const char *log);
	int (*launches)(void);
	void (*last_launch)(FakeLaunch *out);
	int (*primary_refs)(void);
	int (*modules_live)(void);
	int (*allocs_live)(void);
	int (*jits)(void); /* PTX compiled into modules (cuModuleLoadDataEx) */
	long (*get)(const char *key, int dev); /* per-device counts, "violations" */
} FakeCuda;

/* Points libblk at the stand-in beside this program (BLK_CUDA_DRIVER),
 * clears the variables that change the runtime's choices (BLK_BACKEND,
 * BLK_DEBUG, BLK_CACHE, BLK_ALWAYS_COMPILE, BLK_TMA, and the stand-in's own
 * FAKE_CUDA_*) and loads the controls. Leaves
 * this program's path in self and the driver's in path. On failure prints
 * a FAIL line and the counts, and returns false. */
static inline bool fake_cuda_open(FakeCuda *fc, char *self, size_t self_size, char *path, size_t path_size)
{
	ssize_t n = readlink("/proc/self/exe", self, self_size - 1);
	if (n <= 0) {
		printf("FAIL cannot find this program\n0 passed, 1 failed\n");
		return false;
	}
	self[n] = '\0';
	snprintf(path, path_size, "%.*s/fake/libcuda.so.1", (int)(strrchr(self, '/') - self), self);
	setenv("BLK_CUDA_DRIVER", path, 1);
	unsetenv("BLK_BACKEND");
	unsetenv("BLK_DEBUG");
	unsetenv("BLK_CACHE");
	unsetenv("BLK_ALWAYS_COMPILE");
	unsetenv("BLK_TMA");
	unsetenv("FAKE_CUDA_DEVICES");
	unsetenv("FAKE_CUDA_OTHER_MODEL");
	fc->handle = dlopen(path, RTLD_NOW);
	if (!fc->handle) {
		printf("FAIL the stand-in driver %s: %s\n0 passed, 1 failed\n", path, dlerror());
		return false;
	}
	*(void **)&fc->set = dlsym(fc->handle, "fake_cuda_set");
	*(void **)&fc->fail = dlsym(fc->handle, "fake_cuda_fail");
	*(void **)&fc->launches = dlsym(fc->handle, "fake_cuda_launches");
	*(void **)&fc->last_launch = dlsym(fc->handle, "fake_cuda_last_launch");
	*(void **)&fc->primary_refs = dlsym(fc->handle, "fake_cuda_primary_refs");
	*(void **)&fc->modules_live = dlsym(fc->handle, "fake_cuda_modules_live");
	*(void **)&fc->allocs_live = dlsym(fc->handle, "fake_cuda_allocs_live");
	*(void **)&fc->jits = dlsym(fc->handle, "fake_cuda_jits");
	*(void **)&fc->get = dlsym(fc->handle, "fake_cuda_get");
	return true;
}

static inline FakeLaunch fake_last(const FakeCuda *fc)
{
	FakeLaunch l;
	fc->last_launch(&l);
	return l;
}

#endif
