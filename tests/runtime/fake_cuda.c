/* fake_cuda.c: a stand-in for libcuda.so.1, for testing libblk's GPU
 * backend where there is no GPU (BLK_CUDA_DRIVER names the built library).
 *
 * Memory is host memory; a module is the PTX text cuModuleLoadDataEx took
 * (the real driver JIT-compiles it; this one only reads its kernels and
 * their parameters); a launch is
 * checked (current context, function, block, shared memory) and recorded,
 * with the bytes of each parameter in the sizes the PTX declares, but not
 * run. A test reaches the fake_cuda_* functions by dlopen of the same path
 * (the same handle as libblk's): it can make a function fail, read the
 * last launch, and count what is still held.
 *
 * Time: a clock that only launches move, by the threads they start
 * (programs x threads a program / 10^4 ms), so that events time launches
 * and larger blocks "win". With "scribble" set, a launch overwrites (0xEE)
 * the allocations its 8-byte parameters point into, as a kernel writing
 * its outputs would; with "block_limit" set, a launch of more threads a
 * program fails with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many
 * registers), and cuFuncGetAttribute says so; with "spill_bytes" set, a verbose JIT's info log says
 * that many bytes of spill stores and loads, as ptxas does. Modules, for
 * the disk cache's tests: fake_cuda_images_with(TEXT) counts those loaded
 * whose PTX holds TEXT (a mark a test put in an entry it forged).
 *
 * Devices: two by default ("devices", or $FAKE_CUDA_DEVICES read by cuInit),
 * all named "Fake GPU" unless "other_model" (or $FAKE_CUDA_OTHER_MODEL=1)
 * names device 1 "Fake GPU B". Each has its own primary context, clock,
 * allocations, modules and events. A call that reaches memory, a module,
 * a function or an event of a device other than the current context's
 * fails with CUDA_ERROR_INVALID_CONTEXT and is counted ("violations" of
 * fake_cuda_get), so that tests prove launches on one device never touch
 * another's. */
#include "fake_cuda.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
	OK = 0,
	INVALID_VALUE = 1,
	NOT_INITIALIZED = 3,
	INVALID_DEVICE = 101,
	INVALID_IMAGE = 200,
	INVALID_CONTEXT = 201,
	INVALID_HANDLE = 400,
	NOT_FOUND = 500,
};

/* ---- state and control ---------------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* initialized, primary_refs and sticky are read by every call without the
 * lock (NEED_INIT, NEED_CTX, the calls that return sticky), from any thread. */
static atomic_int initialized;
enum { MAX_DEVICES = 8 };
static struct {
	int devices, cc_major, cc_minor, smem_optin, init_error, names_off, l2_bytes, driver_version, scribble,
		block_limit, spill_bytes, other_model;
} cfg = {2, 9, 0, 232448, 0, 0, 1 << 20, 13000, 0, 0, 0, 0};

typedef struct Fail {
	char fn[64];
	int code;
	int count;     /* calls that fail; then the function works again */
	char log[512]; /* cuModuleLoadDataEx: the error log it writes */
} Fail;
static Fail fails[8];

static int ctx_objects[MAX_DEVICES]; /* device d's primary context is &ctx_objects[d] */
static atomic_int primary_refs[MAX_DEVICES];
static _Thread_local void *current;
static atomic_int sticky; /* a kernel "faulted": syncs and copies return this */
static atomic_int violations; /* calls that reached another device's memory, module or event */

/* The device of the current context, or -1. */
static int cur_dev(void)
{
	int *c = current;
	return c >= ctx_objects && c < ctx_objects + MAX_DEVICES ? (int)(c - ctx_objects) : -1;
}

/* A call that used something of device `dev` in another device's context. */
static int other_device(int dev)
{
	if (dev == cur_dev())
		return 0;
	violations++;
	return INVALID_CONTEXT;
}

typedef struct Alloc {
	unsigned char *p;
	size_t bytes;
	int dev;
	struct Alloc *next;
} Alloc;
static Alloc *allocs;

typedef struct Module {
	char *ptx;
	int loaded;
	int dev;
	struct Module *next;
} Module;
static Module *modules;
static int modules_live;

typedef struct Func {
	Module *mod;
	char name[128];
	int n_params;
	int sizes[64];
	int max_dynamic_smem;
	struct Func *next;
} Func;
static Func *funcs;

static FakeLaunch last_launch;
static int launches, dev_launches[MAX_DEVICES];
static int encodes; /* cuTensorMapEncodeTiled calls */
static int jits;     /* cuModuleLoadDataEx calls that compiled PTX into a module */
static int refused;  /* cuModuleLoadDataEx calls that refused their PTX (not counting failures asked for) */
static long last_ptx_len; /* the bytes before the NUL of the PTX it last compiled */
static int module_loads, dev_module_loads[MAX_DEVICES]; /* modules loaded */
static double clock_ms[MAX_DEVICES]; /* each device's, moved by its launches */

typedef struct Event {
	double t;
	int dev;
} Event;

API void fake_cuda_set(const char *key, long value)
{
	pthread_mutex_lock(&lock);
	if (!strcmp(key, "devices"))
		cfg.devices = (int)value;
	else if (!strcmp(key, "cc_major"))
		cfg.cc_major = (int)value;
	else if (!strcmp(key, "cc_minor"))
		cfg.cc_minor = (int)value;
	else if (!strcmp(key, "smem_optin"))
		cfg.smem_optin = (int)value;
	else if (!strcmp(key, "init_error"))
		cfg.init_error = (int)value;
	else if (!strcmp(key, "names_off"))
		cfg.names_off = (int)value;
	else if (!strcmp(key, "sticky"))
		sticky = (int)value;
	else if (!strcmp(key, "l2_bytes"))
		cfg.l2_bytes = (int)value;
	else if (!strcmp(key, "driver_version"))
		cfg.driver_version = (int)value;
	else if (!strcmp(key, "scribble"))
		cfg.scribble = (int)value;
	else if (!strcmp(key, "block_limit"))
		cfg.block_limit = (int)value;
	else if (!strcmp(key, "spill_bytes"))
		cfg.spill_bytes = (int)value;
	else if (!strcmp(key, "other_model"))
		cfg.other_model = (int)value;
	pthread_mutex_unlock(&lock);
}

/* The modules loaded (since the start) whose PTX holds text. */
API int fake_cuda_images_with(const char *text)
{
	int n = 0;
	pthread_mutex_lock(&lock);
	for (Module *m = modules; m; m = m->next)
		n += strstr(m->ptx, text) != NULL;
	pthread_mutex_unlock(&lock);
	return n;
}

/* The next `count` calls of fn return code ("kernel": the next launch
 * succeeds and later synchronizations return code, as a fault does). */
API void fake_cuda_fail(const char *fn, int code, int count, const char *log)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 8; i++)
		if (!fails[i].count) {
			snprintf(fails[i].fn, sizeof fails[i].fn, "%s", fn);
			fails[i].code = code;
			fails[i].count = count;
			snprintf(fails[i].log, sizeof fails[i].log, "%s", log ? log : "");
			break;
		}
	pthread_mutex_unlock(&lock);
}

API int fake_cuda_launches(void) { return launches; }
API int fake_cuda_jits(void) { return jits; }
API int fake_cuda_module_loads(void) { return module_loads; }
API void fake_cuda_last_launch(FakeLaunch *out) { *out = last_launch; }
API int fake_cuda_primary_refs(void)
{
	int n = 0;
	for (int d = 0; d < MAX_DEVICES; d++)
		n += primary_refs[d];
	return n;
}
API int fake_cuda_modules_live(void) { return modules_live; }

API int fake_cuda_allocs_live(void)
{
	int n = 0;
	pthread_mutex_lock(&lock);
	for (Alloc *a = allocs; a; a = a->next)
		n++;
	pthread_mutex_unlock(&lock);
	return n;
}

/* Per device dev: "launches", "module_loads", "modules_live", "allocs_live",
 * "primary_refs"; "violations" (dev ignored): calls that reached memory, a
 * module or an event of a device other than the current context's;
 * "encodes" (dev ignored): cuTensorMapEncodeTiled calls; "refused" (dev
 * ignored): PTX cuModuleLoadDataEx refused (no .version in it);
 * "last_ptx_len" (dev ignored): the length of the PTX it last compiled (up
 * to its NUL: what the driver reads). */
API long fake_cuda_get(const char *key, int dev)
{
	if (!strcmp(key, "violations"))
		return violations;
	if (!strcmp(key, "encodes") || !strcmp(key, "refused") || !strcmp(key, "last_ptx_len")) {
		pthread_mutex_lock(&lock);
		long n = !strcmp(key, "encodes") ? encodes : !strcmp(key, "refused") ? refused : last_ptx_len;
		pthread_mutex_unlock(&lock);
		return n;
	}
	if (dev < 0 || dev >= MAX_DEVICES)
		return -1;
	long n = 0;
	pthread_mutex_lock(&lock);
	if (!strcmp(key, "launches"))
		n = dev_launches[dev];
	else if (!strcmp(key, "module_loads"))
		n = dev_module_loads[dev];
	else if (!strcmp(key, "primary_refs"))
		n = primary_refs[dev];
	else if (!strcmp(key, "allocs_live"))
		for (Alloc *a = allocs; a; a = a->next)
			n += a->dev == dev;
	else if (!strcmp(key, "modules_live"))
		for (Module *m = modules; m; m = m->next)
			n += m->dev == dev && m->loaded;
	else
		n = -1;
	pthread_mutex_unlock(&lock);
	return n;
}

/* A configured failure of fn, if any (consumed). Caller holds the lock. */
static Fail *failing(const char *fn)
{
	for (int i = 0; i < 8; i++)
		if (fails[i].count && !strcmp(fails[i].fn, fn)) {
			fails[i].count--;
			return &fails[i];
		}
	return NULL;
}

#define CHECK_FAIL(name) \
	do { \
		pthread_mutex_lock(&lock); \
		Fail *f_ = failing(name); \
		int code_ = f_ ? f_->code : 0; \
		pthread_mutex_unlock(&lock); \
		if (code_) \
			return code_; \
	} while (0)

#define NEED_INIT() \
	do { \
		if (!initialized) \
			return NOT_INITIALIZED; \
	} while (0)

#define NEED_CTX() \
	do { \
		if (!initialized) \
			return NOT_INITIALIZED; \
		if (cur_dev() < 0 || !primary_refs[cur_dev()]) \
			return INVALID_CONTEXT; \
	} while (0)

/* ---- errors ---------------------------------------------------------------------- */

API CUresult cuGetErrorName(CUresult e, const char **s)
{
	static const struct {
		int code;
		const char *name;
	} names[] = {{0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
	             {100, "CUDA_ERROR_NO_DEVICE"}, {218, "CUDA_ERROR_INVALID_PTX"}, {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}};
	for (size_t i = 0; !cfg.names_off && i < sizeof names / sizeof names[0]; i++)
		if (names[i].code == e) {
			*s = names[i].name;
			return OK;
		}
	*s = NULL;
	return INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult e, const char **s)
{
	static const struct {
		int code;
		const char *text;
	} texts[] = {{0, "no error"}, {1, "invalid argument"}, {2, "out of memory"},
	             {100, "no CUDA-capable device is detected"}, {218, "a PTX JIT compilation failed"},
	             {700, "an illegal memory access was encountered"}};
	for (size_t i = 0; !cfg.names_off && i < sizeof texts / sizeof texts[0]; i++)
		if (texts[i].code == e) {
			*s = texts[i].text;
			return OK;
		}
	*s = NULL;
	return INVALID_VALUE;
}

/* ---- devices and contexts ------------------------------------------------------------ */

API CUresult cuInit(unsigned flags)
{
	if (flags)
		return INVALID_VALUE;
	if (cfg.init_error)
		return cfg.init_error;
	const char *env = getenv("FAKE_CUDA_DEVICES");
	pthread_mutex_lock(&lock);
	if (!initialized && env && *env)
		cfg.devices = atoi(env) < 0 ? 0 : atoi(env) > MAX_DEVICES ? MAX_DEVICES : atoi(env);
	env = getenv("FAKE_CUDA_OTHER_MODEL");
	if (!initialized && env && !strcmp(env, "1"))
		cfg.other_model = 1;
	pthread_mutex_unlock(&lock);
	initialized = 1;
	return OK;
}

API CUresult cuDeviceGetCount(int *n)
{
	NEED_INIT();
	*n = cfg.devices;
	return OK;
}

API CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	NEED_INIT();
	if (ordinal < 0 || ordinal >= cfg.devices)
		return INVALID_DEVICE;
	*d = ordinal;
	return OK;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	NEED_INIT();
	if (d < 0 || d >= cfg.devices || len <= 0)
		return d < 0 || d >= cfg.devices ? INVALID_DEVICE : INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", d == 1 && cfg.other_model ? "Fake GPU B" : "Fake GPU");
	return OK;
}

API CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
	NEED_INIT();
	if (d < 0 || d >= cfg.devices)
		return INVALID_DEVICE;
	switch (attr) {
	case 1: *v = 1024; break;
	case 5: *v = 2147483647; break;
	case 6: case 7: *v = 65535; break;
	case 16: *v = 132; break;
	case 75: *v = cfg.cc_major; break;
	case 76: *v = cfg.cc_minor; break;
	case 97: *v = cfg.smem_optin; break;
	case 38: *v = cfg.l2_bytes; break;
	default: return INVALID_VALUE;
	}
	return OK;
}

API CUresult cuDevicePrimaryCtxRetain(void **ctx, CUdevice d)
{
	NEED_INIT();
	CHECK_FAIL("cuDevicePrimaryCtxRetain");
	if (d < 0 || d >= cfg.devices)
		return INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	primary_refs[d]++;
	pthread_mutex_unlock(&lock);
	*ctx = &ctx_objects[d];
	return OK;
}

static CUresult primary_release(CUdevice d)
{
	NEED_INIT();
	if (d < 0 || d >= cfg.devices)
		return INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	int refs = primary_refs[d] ? --primary_refs[d] : -1;
	int total = 0;
	for (int i = 0; i < MAX_DEVICES; i++)
		total += primary_refs[i];
	pthread_mutex_unlock(&lock);
	if (refs < 0)
		return INVALID_CONTEXT;
	if (total == 0)
		sticky = 0; /* the context is destroyed with its last reference */
	return OK;
}

API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { return primary_release(d); }

API CUresult cuCtxSetCurrent(void *ctx)
{
	NEED_INIT();
	CHECK_FAIL("cuCtxSetCurrent");
	int *c = ctx;
	if (c && (c < ctx_objects || c >= ctx_objects + cfg.devices))
		return INVALID_CONTEXT;
	current = ctx;
	return OK;
}

API CUresult cuCtxGetCurrent(void **ctx)
{
	NEED_INIT();
	*ctx = current;
	return OK;
}

API CUresult cuCtxGetDevice(CUdevice *d)
{
	NEED_CTX();
	*d = cur_dev();
	return OK;
}

API CUresult cuDriverGetVersion(int *v)
{
	*v = cfg.driver_version;
	return OK;
}

API CUresult cuCtxSynchronize(void)
{
	NEED_CTX();
	CHECK_FAIL("cuCtxSynchronize");
	return sticky;
}

/* Not to be called: CUDA 13's cuCtxSynchronize_v2 takes a context. */
API CUresult cuCtxSynchronize_v2(void *ctx)
{
	(void)ctx;
	return 709;
}

API CUresult cuStreamSynchronize(void *stream)
{
	(void)stream;
	NEED_CTX();
	CHECK_FAIL("cuStreamSynchronize");
	return sticky;
}

/* ---- memory ------------------------------------------------------------------------------ */

/* The allocation holding [p, p + n), or NULL. Caller holds the lock. Two
 * allocations can touch (TSan's allocator packs them end to start): p is then
 * the end of one and the start of the other, and belongs to the other, as on
 * a real device (cuMemGetAddressRange). */
static Alloc *find(CUdeviceptr p, size_t n)
{
	Alloc *end = NULL; /* one whose end is p (n == 0) */
	for (Alloc *a = allocs; a; a = a->next) {
		uintptr_t lo = (uintptr_t)a->p;
		if (p >= lo && p - lo <= a->bytes && n <= a->bytes - (p - lo)) {
			if (p - lo < a->bytes)
				return a;
			end = a;
		}
	}
	return end;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	NEED_CTX();
	CHECK_FAIL("cuMemAlloc_v2");
	if (!bytes)
		return INVALID_VALUE;
	Alloc *a = malloc(sizeof *a);
	unsigned char *mem = aligned_alloc(256, (bytes + 255) & ~(size_t)255);
	if (!a || !mem) {
		free(a);
		free(mem);
		return 2;
	}
	memset(mem, 0xAB, bytes); /* not zero: blk_malloc must clear it */
	a->p = mem;
	a->bytes = bytes;
	a->dev = cur_dev();
	pthread_mutex_lock(&lock);
	a->next = allocs;
	allocs = a;
	pthread_mutex_unlock(&lock);
	*p = (CUdeviceptr)(uintptr_t)mem;
	return OK;
}

API CUresult cuMemFree_v2(CUdeviceptr p)
{
	NEED_CTX();
	pthread_mutex_lock(&lock);
	for (Alloc **a = &allocs; *a; a = &(*a)->next)
		if ((uintptr_t)(*a)->p == p) {
			if ((*a)->dev != cur_dev()) {
				pthread_mutex_unlock(&lock);
				return other_device((*a)->dev);
			}
			Alloc *dead = *a;
			*a = dead->next;
			pthread_mutex_unlock(&lock);
			free(dead->p);
			free(dead);
			return OK;
		}
	pthread_mutex_unlock(&lock);
	return INVALID_VALUE;
}

/* cuMemsetD8 and its asynchronous form (done at once), as `name`. */
static CUresult memset_d8(const char *name, CUdeviceptr p, unsigned char v, size_t n)
{
	NEED_CTX();
	CHECK_FAIL(name);
	pthread_mutex_lock(&lock); /* the device: one engine, its work under the lock */
	Alloc *a = find(p, n);
	int bad = a ? other_device(a->dev) : INVALID_VALUE;
	if (!bad)
		memset((void *)(uintptr_t)p, v, n);
	pthread_mutex_unlock(&lock);
	return bad;
}

API CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) { return memset_d8("cuMemsetD8_v2", p, v, n); }

API CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, void *stream)
{
	(void)stream;
	return memset_d8("cuMemsetD8Async", p, v, n);
}

API CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *bytes, CUdeviceptr p)
{
	NEED_CTX();
	CHECK_FAIL("cuMemGetAddressRange_v2");
	pthread_mutex_lock(&lock);
	Alloc *a = find(p, 0);
	int bad = a ? other_device(a->dev) : 0;
	pthread_mutex_unlock(&lock);
	if (bad)
		return bad;
	if (!a || p == (uintptr_t)a->p + a->bytes)
		return NOT_FOUND;
	*base = (CUdeviceptr)(uintptr_t)a->p;
	*bytes = a->bytes;
	return OK;
}

API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	NEED_CTX();
	CHECK_FAIL("cuMemcpyDtoD_v2");
	if (sticky)
		return sticky;
	pthread_mutex_lock(&lock);
	Alloc *a = find(dst, n), *b = find(src, n);
	int bad = !a || !b ? INVALID_VALUE : other_device(a->dev) ? INVALID_CONTEXT : other_device(b->dev);
	if (!bad)
		memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	pthread_mutex_unlock(&lock);
	return bad;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	NEED_CTX();
	CHECK_FAIL("cuMemcpyHtoD_v2");
	if (sticky)
		return sticky;
	pthread_mutex_lock(&lock);
	Alloc *a = find(dst, n);
	int bad = a ? other_device(a->dev) : INVALID_VALUE;
	if (!bad)
		memcpy((void *)(uintptr_t)dst, src, n);
	pthread_mutex_unlock(&lock);
	return bad;
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	NEED_CTX();
	CHECK_FAIL("cuMemcpyDtoH_v2");
	if (sticky)
		return sticky;
	pthread_mutex_lock(&lock);
	Alloc *a = find(src, n);
	int bad = a ? other_device(a->dev) : INVALID_VALUE;
	if (!bad)
		memcpy(dst, (const void *)(uintptr_t)src, n);
	pthread_mutex_unlock(&lock);
	return bad;
}

/* ---- the JIT and modules ---------------------------------------------------------------- */

/* PTX to a module, as the driver's JIT: options 3 and 4 (the info log and
 * its size), 5 and 6 (the error log and its size), 12 (verbose: ptxas's
 * lines about the kernel's resources in the info log); another option is
 * CUDA_ERROR_INVALID_VALUE. The image is PTX text read up to its NUL (the
 * call takes no size); without ".version" it is not PTX: refused with
 * CUDA_ERROR_INVALID_PTX and a line in the error log, as ptxas would. A
 * failure asked for (fake_cuda_fail) writes its log into the error log. */
API CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *options, void **values)
{
	NEED_CTX();
	char *info = NULL, *errlog = NULL;
	unsigned info_size = 0, errlog_size = 0;
	int verbose = 0;
	if (!mod || !image || (n && (!options || !values)))
		return INVALID_VALUE;
	for (unsigned i = 0; i < n; i++) {
		if (options[i] == 3)
			info = values[i];
		else if (options[i] == 4)
			info_size = (unsigned)(uintptr_t)values[i];
		else if (options[i] == 5)
			errlog = values[i];
		else if (options[i] == 6)
			errlog_size = (unsigned)(uintptr_t)values[i];
		else if (options[i] == 12)
			verbose = (int)(uintptr_t)values[i];
		else
			return INVALID_VALUE;
	}
	const char *ptx = image;
	pthread_mutex_lock(&lock);
	Fail *f = failing("cuModuleLoadDataEx");
	int code = f ? f->code : 0;
	if (f && errlog && errlog_size)
		snprintf(errlog, errlog_size, "%s", f->log);
	if (!code && !strstr(ptx, ".version")) {
		code = 218;
		refused++;
		if (errlog && errlog_size)
			snprintf(errlog, errlog_size, "ptxas application ptx input, line 1; fatal   : Parsing error: not PTX\n");
	}
	int spill = cfg.spill_bytes;
	pthread_mutex_unlock(&lock);
	if (code)
		return code;
	Module *m = calloc(1, sizeof *m);
	if (!m || !(m->ptx = strdup(ptx))) {
		free(m);
		return 2;
	}
	m->loaded = 1;
	m->dev = cur_dev();
	pthread_mutex_lock(&lock);
	m->next = modules;
	modules = m;
	modules_live++;
	module_loads++;
	dev_module_loads[m->dev]++;
	jits++;
	last_ptx_len = (long)strlen(m->ptx);
	pthread_mutex_unlock(&lock);
	/* verbose: ptxas's lines about the kernel's resources, as the real JIT writes them */
	if (verbose && info && info_size)
		snprintf(info, info_size,
		         "ptxas info    : 0 bytes gmem\nptxas info    : Function properties for kernel\n"
		         "    %d bytes stack frame, %d bytes spill stores, %d bytes spill loads\n"
		         "ptxas info    : Used %d registers, used 0 barriers, 368 bytes cmem[0]\n",
		         spill, spill, spill, spill ? 255 : 32);
	*mod = m;
	return OK;
}

API CUresult cuModuleUnload(void *mod)
{
	Module *m = mod;
	NEED_CTX();
	pthread_mutex_lock(&lock);
	if (m && m->loaded && other_device(m->dev)) {
		pthread_mutex_unlock(&lock);
		return INVALID_CONTEXT;
	}
	int was = m && m->loaded;
	if (was) {
		m->loaded = 0;
		modules_live--;
	}
	pthread_mutex_unlock(&lock);
	return was ? OK : INVALID_HANDLE;
}

/* No module of the stand-in has globals: kernels with asserts are not run here. */
API CUresult cuModuleGetGlobal_v2(unsigned long long *ptr, size_t *bytes, void *mod, const char *name)
{
	(void)mod;
	(void)name;
	NEED_CTX();
	*ptr = 0;
	*bytes = 0;
	return NOT_FOUND;
}

static int type_size(const char *t, size_t n)
{
	static const char *const one[] = {".u8", ".s8", ".b8", ".pred"};
	static const char *const two[] = {".u16", ".s16", ".b16", ".f16", ".bf16"};
	static const char *const four[] = {".u32", ".s32", ".b32", ".f32"};
	static const char *const eight[] = {".u64", ".s64", ".b64", ".f64"};
	for (int i = 0; i < 4; i++)
		if (strlen(one[i]) == n && !memcmp(one[i], t, n))
			return 1;
	for (int i = 0; i < 5; i++)
		if (strlen(two[i]) == n && !memcmp(two[i], t, n))
			return 2;
	for (int i = 0; i < 4; i++) {
		if (strlen(four[i]) == n && !memcmp(four[i], t, n))
			return 4;
		if (strlen(eight[i]) == n && !memcmp(eight[i], t, n))
			return 8;
	}
	return 0;
}

API CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	NEED_CTX();
	Module *m = mod;
	if (!m || !m->loaded)
		return INVALID_HANDLE;
	if (other_device(m->dev))
		return INVALID_CONTEXT;
	size_t nl = strlen(name);
	for (const char *p = m->ptx; (p = strstr(p, ".entry ")) != NULL; p++) {
		const char *q = p + 7;
		while (*q == ' ' || *q == '\t')
			q++;
		if (strncmp(q, name, nl) != 0 || (q[nl] != '(' && !isspace((unsigned char)q[nl])))
			continue;
		q = strchr(q, '(');
		const char *end = q ? strchr(q, ')') : NULL;
		if (!end)
			return INVALID_IMAGE;
		Func *f = calloc(1, sizeof *f);
		if (!f)
			return 2;
		f->mod = m;
		snprintf(f->name, sizeof f->name, "%s", name);
		/* each ".param" up to ')': its first type token */
		for (const char *s = q; (s = strstr(s, ".param")) != NULL && s < end; s += 6) {
			const char *t = s + 6;
			int size = 0;
			while (t < end && *t != ',' && !size) {
				while (t < end && isspace((unsigned char)*t))
					t++;
				const char *tok = t;
				while (t < end && !isspace((unsigned char)*t) && *t != ',')
					t++;
				size = type_size(tok, (size_t)(t - tok));
			}
			/* an array (a tensor map: .param .align 64 .b8 name[128]) */
			const char *stop = t;
			while (stop < end && *stop != ',')
				stop++;
			const char *br = memchr(t, '[', (size_t)(stop - t));
			if (size && br)
				size *= atoi(br + 1);
			if (f->n_params < 64)
				f->sizes[f->n_params] = size;
			f->n_params++;
		}
		pthread_mutex_lock(&lock);
		f->next = funcs;
		funcs = f;
		pthread_mutex_unlock(&lock);
		*fn = f;
		return OK;
	}
	return NOT_FOUND;
}

/* CU_FUNC_ATTRIBUTE_NUM_REGS (4): FAKE_CUDA_REGS a thread, as a compiled
 * kernel's count; CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (0): "block_limit"
 * when set (the threads its registers leave room for), else 1024; other
 * attributes are not modelled */
API CUresult cuFuncGetAttribute(int *value, int attr, void *fn)
{
	NEED_CTX();
	Func *f = fn;
	if (!f || !value || (attr != 4 && attr != 0))
		return INVALID_VALUE;
	if (other_device(f->mod->dev))
		return INVALID_CONTEXT;
	*value = attr == 4 ? FAKE_CUDA_REGS : cfg.block_limit ? cfg.block_limit : 1024;
	return OK;
}

API CUresult cuFuncSetAttribute(void *fn, int attr, int value)
{
	NEED_CTX();
	Func *f = fn;
	if (!f || attr != 8 || value < 0 || value > cfg.smem_optin)
		return INVALID_VALUE;
	if (other_device(f->mod->dev))
		return INVALID_CONTEXT;
	f->max_dynamic_smem = value;
	return OK;
}

/* cuTensorMapEncodeTiled: the checks the driver documents (a 64-byte
 * aligned map, rank 1 to 5, a 16-byte aligned address, sizes 1 to 2^32,
 * strides multiples of 16 under 2^40 and at least a row, boxes of 1 to 256
 * whose inner bytes are a multiple of 16 and within the swizzle's span,
 * element strides 1 to 8, NaN fill of float types only), then the
 * arguments written into the map (FakeTensorMap) for tests to read back
 * from a launch. "encodes" counts the calls. */
API CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr, const unsigned long long *dims,
                                    const unsigned long long *strides, const unsigned *box, const unsigned *estrides,
                                    int interleave, int swizzle, int l2, int oob)
{
	static const int bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
	pthread_mutex_lock(&lock);
	Fail *fl = failing("cuTensorMapEncodeTiled");
	int code = fl ? fl->code : 0;
	encodes++;
	pthread_mutex_unlock(&lock);
	if (code)
		return code;
	if (!map || (uintptr_t)map % 64 || rank < 1 || rank > FAKE_MAX_RANK || dtype < 0 || dtype > 12 ||
	    (uintptr_t)addr % 16 || interleave || swizzle < 0 || swizzle > 3 || l2 < 0 || l2 > 3 || oob < 0 || oob > 1)
		return INVALID_VALUE;
	/* NaN fill only of floating-point elements (FLOAT16, FLOAT32, FLOAT64, BFLOAT16, FLOAT32_FTZ, TFLOAT32...) */
	if (oob == 1 && dtype < 6)
		return INVALID_VALUE;
	int eb = bytes[dtype], span = swizzle ? 16 << swizzle : 0;
	for (unsigned i = 0; i < rank; i++) {
		if (!dims[i] || dims[i] > (1ull << 32) || !box[i] || box[i] > 256 || !estrides[i] || estrides[i] > 8)
			return INVALID_VALUE;
		if (i && (strides[i - 1] % 16 || strides[i - 1] >= (1ull << 40) ||
		          strides[i - 1] < (i == 1 ? dims[0] * (unsigned long long)eb : strides[i - 2])))
			return INVALID_VALUE;
	}
	if ((box[0] * eb) % 16 || (span && box[0] * (unsigned)eb > (unsigned)span))
		return INVALID_VALUE;
	FakeTensorMap m = {.magic = FAKE_TMAP_MAGIC, .dtype = dtype, .rank = (int)rank, .swizzle = swizzle, .oob_fill = oob,
	                   .address = (unsigned long long)(uintptr_t)addr};
	for (unsigned i = 0; i < rank; i++) {
		m.dims[i] = dims[i];
		m.box[i] = box[i];
		if (i)
			m.strides[i - 1] = strides[i - 1];
	}
	memcpy(map, &m, sizeof m);
	return OK;
}

API CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned smem, void *stream, void **params, void **extra)
{
	NEED_CTX();
	Func *f = fn;
	pthread_mutex_lock(&lock);
	Fail *fl = failing("kernel");
	int fault = fl ? fl->code : 0;
	fl = failing("cuLaunchKernel");
	int code = fl ? fl->code : 0;
	pthread_mutex_unlock(&lock);
	if (code)
		return code;
	if (sticky)
		return sticky;
	if (!f || !f->mod->loaded)
		return INVALID_HANDLE;
	if (other_device(f->mod->dev))
		return INVALID_CONTEXT;
	if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535 || bx * by * bz > 1024 || extra)
		return INVALID_VALUE;
	if (smem > (unsigned)(f->max_dynamic_smem > 48 * 1024 ? f->max_dynamic_smem : 48 * 1024))
		return INVALID_VALUE;
	if (cfg.block_limit && bx * by * bz > (unsigned)cfg.block_limit)
		return 701; /* LAUNCH_OUT_OF_RESOURCES */
	if (f->n_params && !params)
		return INVALID_VALUE;
	FakeLaunch l = {0};
	snprintf(l.name, sizeof l.name, "%s", f->name);
	l.grid[0] = gx, l.grid[1] = gy, l.grid[2] = gz;
	l.block[0] = bx, l.block[1] = by, l.block[2] = bz;
	l.smem = smem;
	l.stream = stream;
	l.n_params = f->n_params;
	l.max_dynamic_smem = f->max_dynamic_smem;
	for (int i = 0; i < f->n_params && i < 64; i++) {
		l.sizes[i] = f->sizes[i];
		if (f->sizes[i] > 0 && f->sizes[i] <= 8)
			memcpy(l.bytes[i], params[i], (size_t)f->sizes[i]);
		if (f->sizes[i] == FAKE_TMAP_BYTES && l.n_maps < FAKE_MAX_MAPS) /* a tensor map, by value */
			memcpy(&l.maps[l.n_maps++], params[i], sizeof(FakeTensorMap));
	}
	int dev = cur_dev();
	pthread_mutex_lock(&lock);
	/* a pointer into another device's memory: the kernel would fault */
	for (int i = 0; i < f->n_params && i < 64; i++) {
		CUdeviceptr p = 0;
		if (f->sizes[i] != 8)
			continue;
		memcpy(&p, params[i], 8);
		Alloc *a = find(p, 0);
		if (a && other_device(a->dev)) {
			pthread_mutex_unlock(&lock);
			return INVALID_CONTEXT;
		}
	}
	last_launch = l;
	launches++;
	dev_launches[dev]++;
	if (fault)
		sticky = fault;
	clock_ms[dev] += (double)gx * gy * gz * bx * by * bz / 1e4;
	if (cfg.scribble)
		for (int i = 0; i < f->n_params && i < 64; i++) {
			CUdeviceptr p = 0;
			if (f->sizes[i] != 8)
				continue;
			memcpy(&p, params[i], 8);
			Alloc *a = find(p, 0);
			if (a)
				memset(a->p, 0xEE, a->bytes);
		}
	pthread_mutex_unlock(&lock);
	return OK;
}

/* ---- events: the launches' clock ------------------------------------------------------------------- */

API CUresult cuEventCreate(void **ev, unsigned flags)
{
	NEED_CTX();
	(void)flags;
	Event *e = calloc(1, sizeof *e);
	if (!e)
		return 2;
	e->dev = cur_dev();
	*ev = e;
	return OK;
}

API CUresult cuEventRecord(void *ev, void *stream)
{
	(void)stream;
	NEED_CTX();
	Event *e = ev;
	if (!e)
		return INVALID_HANDLE;
	if (other_device(e->dev))
		return INVALID_CONTEXT;
	pthread_mutex_lock(&lock);
	e->t = clock_ms[e->dev];
	pthread_mutex_unlock(&lock);
	return OK;
}

API CUresult cuEventSynchronize(void *ev)
{
	NEED_CTX();
	if (ev && other_device(((Event *)ev)->dev))
		return INVALID_CONTEXT;
	return ev ? sticky : INVALID_HANDLE;
}

API CUresult cuEventElapsedTime(float *ms, void *a, void *b)
{
	NEED_CTX();
	const Event *ea = a, *eb = b;
	if (!a || !b)
		return INVALID_HANDLE;
	if (other_device(ea->dev) || other_device(eb->dev))
		return INVALID_CONTEXT;
	*ms = (float)(eb->t - ea->t);
	return OK;
}

API CUresult cuEventDestroy_v2(void *ev)
{
	free(ev);
	return OK;
}
