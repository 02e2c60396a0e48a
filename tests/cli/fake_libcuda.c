/* fake_libcuda.c: a small stand-in for libcuda.so.1, for testing the C that
 * `blkc --emit=c` writes where there is no GPU (tests/cli/run.sh builds it
 * as libcuda.so.1 and puts its folder on LD_LIBRARY_PATH).
 *
 * Memory is host memory. A cubin is accepted when it is an ELF file, unless
 * FAKE_CUDA_REJECT_CUBIN is set (then the caller must fall back to PTX);
 * PTX is accepted by cuModuleLoadDataEx when it has .version and .entry
 * (else an error log is written). A launch is checked and recorded with the
 * bytes of each parameter in the sizes the PTX declares (cubins: sizes
 * unknown, none recorded), not run. With FAKE_CUDA_ASSERT set, a launch of
 * a kernel with asserts records a failure of assert 1 in program (2, 0, 0),
 * element 5, as a failing assert would. fake_* functions let the test read
 * what happened. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

typedef struct Module {
	int cubin;          /* loaded from a cubin (else PTX) */
	char *image;
	size_t len;
	int live;
	uint32_t assert_state[8];
} Module;

typedef struct Func {
	Module *m;
	char name[128];
	int n_params;       /* -1: unknown (a cubin) */
	int sizes[64];
	int max_smem;
} Func;

static int initialized, ctx_current, primary_refs, modules_live, launches;
static struct {
	char name[128];
	unsigned grid[3], block[3], smem;
	int n_params, sizes[64];
	unsigned char bytes[64][8];
} last;

API CUresult cuInit(unsigned flags)
{
	initialized = flags == 0;
	return flags == 0 ? 0 : 1;
}

API CUresult cuGetErrorName(CUresult r, const char **name)
{
	static char buf[64];
	snprintf(buf, sizeof buf, "FAKE_CUDA_ERROR_%d", r);
	*name = buf;
	return 0;
}

API CUresult cuDeviceGet(int *dev, int ordinal)
{
	if (!initialized)
		return 3;
	if (ordinal != 0)
		return 101;
	*dev = 0;
	return 0;
}

API CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
	if (dev != 0)
		return 101;
	primary_refs++;
	*ctx = &primary_refs;
	return 0;
}

API CUresult cuDevicePrimaryCtxRelease_v2(int dev)
{
	if (dev != 0 || primary_refs == 0)
		return 101;
	primary_refs--;
	return 0;
}

API CUresult cuCtxGetCurrent(void **ctx)
{
	*ctx = ctx_current ? &primary_refs : NULL;
	return initialized ? 0 : 3;
}

API CUresult cuCtxSetCurrent(void *ctx)
{
	ctx_current = ctx != NULL;
	return 0;
}

#define NEED_CTX()                 \
	do {                           \
		if (!initialized)          \
			return 3;              \
		if (!ctx_current)          \
			return 201;            \
	} while (0)

static Module *new_module(const void *image, size_t len, int cubin)
{
	Module *m = calloc(1, sizeof *m);
	if (!m || !(m->image = malloc(len + 1))) {
		free(m);
		return NULL;
	}
	memcpy(m->image, image, len);
	m->image[len] = '\0';
	m->len = len;
	m->cubin = cubin;
	m->live = 1;
	modules_live++;
	return m;
}

API CUresult cuModuleLoadData(void **mod, const void *image)
{
	NEED_CTX();
	if (!image || memcmp(image, "\177ELF", 4) != 0 || getenv("FAKE_CUDA_REJECT_CUBIN"))
		return 209; /* CUDA_ERROR_NO_BINARY_FOR_GPU */
	/* the size of an ELF file: its section headers end it (e_shoff + e_shnum * e_shentsize) */
	const unsigned char *e = image;
	uint64_t shoff;
	uint16_t shentsize, shnum;
	memcpy(&shoff, e + 0x28, 8);
	memcpy(&shentsize, e + 0x3a, 2);
	memcpy(&shnum, e + 0x3c, 2);
	Module *m = new_module(image, (size_t)(shoff + (uint64_t)shentsize * shnum), 1);
	if (!m)
		return 2;
	*mod = m;
	return 0;
}

API CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *options, void **values)
{
	NEED_CTX();
	char *log = NULL;
	size_t log_size = 0;
	for (unsigned i = 0; i < n; i++) {
		if (options[i] == 5)
			log = values[i];
		else if (options[i] == 6)
			log_size = (size_t)(uintptr_t)values[i];
	}
	const char *text = image;
	if (!text || !strstr(text, ".version") || !strstr(text, ".entry")) {
		if (log && log_size)
			snprintf(log, log_size, "fake ptxas: this is not PTX");
		return 218; /* CUDA_ERROR_INVALID_PTX */
	}
	Module *m = new_module(text, strlen(text), 0);
	if (!m)
		return 2;
	*mod = m;
	return 0;
}

API CUresult cuModuleUnload(void *mod)
{
	Module *m = mod;
	if (!m || !m->live)
		return 400;
	m->live = 0;
	modules_live--;
	return 0;
}

static const char *find(const Module *m, const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i + n <= m->len; i++)
		if (memcmp(m->image + i, s, n) == 0)
			return m->image + i;
	return NULL;
}

static int type_size(const char *t)
{
	static const struct { const char *name; int size; } types[] = {
		{".u8", 1}, {".s8", 1}, {".b8", 1}, {".u16", 2}, {".s16", 2}, {".b16", 2}, {".f16", 2},
		{".u32", 4}, {".s32", 4}, {".b32", 4}, {".f32", 4}, {".u64", 8}, {".s64", 8}, {".b64", 8}, {".f64", 8},
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		size_t n = strlen(types[i].name);
		if (strncmp(t, types[i].name, n) == 0 && (t[n] == ' ' || t[n] == '\t'))
			return types[i].size;
	}
	return 0;
}

API CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	NEED_CTX();
	Module *m = mod;
	if (!m || !m->live)
		return 400;
	Func *f = calloc(1, sizeof *f);
	if (!f)
		return 2;
	f->m = m;
	snprintf(f->name, sizeof f->name, "%s", name);
	if (m->cubin) {
		f->n_params = -1;
		if (!find(m, name)) {
			free(f);
			return 500;
		}
	} else {
		char entry[160];
		snprintf(entry, sizeof entry, ".entry %s(", name);
		const char *p = find(m, entry), *end = p ? strchr(p, ')') : NULL;
		if (!p || !end) {
			free(f);
			return 500;
		}
		for (const char *s = p; (s = strstr(s, ".param ")) != NULL && s < end; s += 7)
			if (f->n_params < 64)
				f->sizes[f->n_params++] = type_size(s + 7);
	}
	*fn = f;
	return 0;
}

API CUresult cuModuleGetGlobal_v2(CUdeviceptr *ptr, size_t *bytes, void *mod, const char *name)
{
	NEED_CTX();
	Module *m = mod;
	if (!m || !m->live)
		return 400;
	if (strcmp(name, "blk_assert_state") != 0 || !find(m, name))
		return 500;
	*ptr = (CUdeviceptr)(uintptr_t)m->assert_state;
	if (bytes)
		*bytes = sizeof m->assert_state;
	return 0;
}

API CUresult cuFuncSetAttribute(void *fn, int attr, int value)
{
	NEED_CTX();
	Func *f = fn;
	if (!f || attr != 8 || value < 0 || value > 232448)
		return 1;
	f->max_smem = value;
	return 0;
}

API CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned smem, void *stream, void **params, void **extra)
{
	(void)stream;
	NEED_CTX();
	Func *f = fn;
	if (!f || !f->m->live)
		return 400;
	if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024 || extra ||
	    smem > (unsigned)(f->max_smem > 48 * 1024 ? f->max_smem : 48 * 1024) || (f->n_params > 0 && !params))
		return 1;
	memset(&last, 0, sizeof last);
	snprintf(last.name, sizeof last.name, "%s", f->name);
	last.grid[0] = gx, last.grid[1] = gy, last.grid[2] = gz;
	last.block[0] = bx, last.block[1] = by, last.block[2] = bz;
	last.smem = smem;
	last.n_params = f->n_params;
	for (int i = 0; i < f->n_params && i < 64; i++) {
		last.sizes[i] = f->sizes[i];
		if (f->sizes[i] > 0)
			memcpy(last.bytes[i], params[i], (size_t)f->sizes[i]);
	}
	if (getenv("FAKE_CUDA_ASSERT") && find(f->m, "blk_assert_state") && !f->m->assert_state[0]) {
		uint32_t fail[8] = {1, 2, 0, 0, 5, 0, 0, 0};
		memcpy(f->m->assert_state, fail, sizeof fail);
	}
	launches++;
	return 0;
}

API CUresult cuStreamSynchronize(void *stream)
{
	(void)stream;
	NEED_CTX();
	return 0;
}

API CUresult cuCtxSynchronize(void)
{
	NEED_CTX();
	return 0;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	NEED_CTX();
	void *q = calloc(1, bytes ? bytes : 1);
	if (!q)
		return 2;
	*p = (CUdeviceptr)(uintptr_t)q;
	return 0;
}

API CUresult cuMemFree_v2(CUdeviceptr p)
{
	NEED_CTX();
	free((void *)(uintptr_t)p);
	return 0;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	NEED_CTX();
	memcpy((void *)(uintptr_t)dst, src, n);
	return 0;
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	NEED_CTX();
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return 0;
}

/* ---- for the test ---- */

API int fake_launches(void) { return launches; }
API int fake_modules_live(void) { return modules_live; }
API int fake_primary_refs(void) { return primary_refs; }

/* The last launch: name, grid, block, shared bytes; parameter i's size
 * and bytes (sizes[i] 0: unknown). Returns its parameter count (-1: a cubin's). */
API int fake_last_launch(char name[128], unsigned grid[3], unsigned block[3], unsigned *smem, int sizes[64],
                         unsigned char bytes[64][8])
{
	memcpy(name, last.name, sizeof last.name);
	memcpy(grid, last.grid, sizeof last.grid);
	memcpy(block, last.block, sizeof last.block);
	*smem = last.smem;
	memcpy(sizes, last.sizes, sizeof last.sizes);
	memcpy(bytes, last.bytes, sizeof last.bytes);
	return last.n_params;
}
