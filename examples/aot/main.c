/* examples/aot/main.c: vector add through C that blkc wrote ahead of time.
 *
 *   blkc --emit=c -o build/aot/vadd examples/vector_add.tile
 *
 * wrote build/aot/vadd.c and vadd.h: the kernel as a cubin (and PTX) in byte
 * arrays, vadd_load(), and a typed vadd_launch(). This program uses them and
 * nothing of blk: no libblk, no blk.h, no CUDA headers. Device memory comes
 * from the CUDA driver, opened here with dlopen as the generated code does
 * (a program built on the CUDA runtime would use cudaMalloc and pass the
 * pointers as CUdeviceptr). examples/aot/Makefile builds it.
 *
 *   build/aot/vadd_demo [N]     (default N = 2^24 + 3: the last program is masked)
 *
 * Checks out = x + y exactly, times 100 launches, exits 0 when all is well. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "vadd.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The few driver functions this program calls itself. */
typedef int CUresult;
static struct {
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*free)(CUdeviceptr);
	CUresult (*to_device)(CUdeviceptr, const void *, size_t);
	CUresult (*to_host)(void *, CUdeviceptr, size_t);
	CUresult (*sync)(void);
} cu;

static int driver(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return 0;
	void *f[5] = {dlsym(lib, "cuMemAlloc_v2"), dlsym(lib, "cuMemFree_v2"), dlsym(lib, "cuMemcpyHtoD_v2"),
	              dlsym(lib, "cuMemcpyDtoH_v2"), dlsym(lib, "cuCtxSynchronize")};
	for (int i = 0; i < 5; i++)
		if (!f[i])
			return 0;
	memcpy(&cu.alloc, &f[0], sizeof f[0]);
	memcpy(&cu.free, &f[1], sizeof f[1]);
	memcpy(&cu.to_device, &f[2], sizeof f[2]);
	memcpy(&cu.to_host, &f[3], sizeof f[3]);
	memcpy(&cu.sync, &f[4], sizeof f[4]);
	return 1;
}

#define CU(call)                                                                    \
	do {                                                                            \
		CUresult r_ = (call);                                                       \
		if (r_ != 0) {                                                              \
			fprintf(stderr, "%s:%d: %s failed: CUDA error %d\n", __FILE__, __LINE__, #call, r_); \
			return 1;                                                               \
		}                                                                           \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : (1L << 24) + 3;
	if (n <= 0 || n > (1L << 30)) {
		fprintf(stderr, "usage: %s [N]   (0 < N <= 2^30)\n", argv[0]);
		return 2;
	}
	/* Loads the kernel; with no CUDA context current, device 0's primary
	 * context is made current, the one the allocations below use. */
	if (vadd_load() != BLK_SUCCESS) {
		fprintf(stderr, "vadd_load: %s\n", vadd_error());
		return 1;
	}
	printf("vector_add loaded from %s\n", vadd_loaded_from_ptx() ? "PTX (compiled by the driver)" : "the cubin");
	if (!driver()) {
		fprintf(stderr, "cannot find the CUDA driver's memory functions\n");
		return 1;
	}
	size_t bytes = (size_t)n * sizeof(float);
	float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
	if (!x || !y || !out)
		return 1;
	for (long i = 0; i < n; i++) {
		x[i] = (float)(i % 1000) * 0.25f;
		y[i] = (float)(i % 7) - 3.0f;
	}
	CUdeviceptr dx, dy, dout;
	CU(cu.alloc(&dx, bytes));
	CU(cu.alloc(&dy, bytes));
	CU(cu.alloc(&dout, bytes));
	CU(cu.to_device(dx, x, bytes));
	CU(cu.to_device(dy, y, bytes));

	/* The kernel's grid clause, grid(cdiv(n, BLOCK)), with BLOCK = 1024 as
	 * vadd.h says it was compiled. */
	unsigned programs = (unsigned)((n + 1023) / 1024);
	if (vadd_launch(NULL, programs, 1, 1, dx, dy, dout, (int32_t)n) != BLK_SUCCESS) {
		fprintf(stderr, "vadd_launch: %s\n", vadd_error());
		return 1;
	}
	CU(cu.sync());
	CU(cu.to_host(out, dout, bytes));
	long bad = 0;
	for (long i = 0; i < n; i++)
		if (out[i] != x[i] + y[i] && bad++ < 5)
			fprintf(stderr, "out[%ld] = %g, expected %g\n", i, out[i], x[i] + y[i]);
	printf("%ld elements: %s\n", n, bad ? "WRONG" : "out = x + y exactly");

	int reps = 100;
	double t0 = now_ms();
	for (int r = 0; r < reps; r++)
		if (vadd_launch(NULL, programs, 1, 1, dx, dy, dout, (int32_t)n) != BLK_SUCCESS) {
			fprintf(stderr, "vadd_launch: %s\n", vadd_error());
			return 1;
		}
	CU(cu.sync());
	double ms = (now_ms() - t0) / reps;
	printf("%.4f ms a launch (mean of %d back to back), %.1f GB/s\n", ms, reps, 3.0 * (double)bytes / (ms * 1e6));

	/* a grid of no programs is nothing to do, as with blk_launch */
	if (vadd_launch(NULL, 0, 1, 1, dx, dy, dout, 0) != BLK_SUCCESS)
		return 1;
	CU(cu.free(dx));
	CU(cu.free(dy));
	CU(cu.free(dout));
	vadd_unload();
	free(x);
	free(y);
	free(out);
	return bad != 0;
}
