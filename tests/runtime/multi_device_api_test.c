/* Several GPUs through blk.h, against the stand-in driver (fake_cuda.c)
 * with two devices: a context per device, memory, modules and launches on
 * each without touching the other's (the stand-in fails and counts any
 * call that reaches another device's memory, module or event), the
 * caller's current CUDA context left as it was, a variant compiled once
 * (disk cache) and loaded into each device, threads launching on both at
 * once, blk_context_create_current on device 1; and sweeps split across
 * the two (blk_autotune_devices, blk_time_configs): every config's time
 * the same as on one device, the arguments untouched, the choice
 * remembered; other models, unknown and repeated devices refused. */
#include "blk.h"
#include "fake_cuda.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FakeCuda fc;
static int (*drv_retain)(void **ctx, int dev);
static int (*drv_release)(int dev);
static int (*drv_set_current)(void *ctx);
static int (*drv_get_current)(void **ctx);

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static int has(const char *s) { return strstr(blk_last_error(), s) != NULL; }

static long get(const char *key, int dev) { return fc.get(key, dev); }

static const char *source =
	"@autotune(key = [n], configs = [{BLOCK = 128, num_warps = 4}, {BLOCK = 1024, num_warps = 4},\n"
	"                                {BLOCK = 512, num_warps = 8}, {BLOCK = 256, num_warps = 2},\n"
	"                                {BLOCK = 64, num_warps = 1}])\n"
	"kernel add1(x: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, load(x + offs, mask = offs < n) + 1.0, mask = offs < n);\n"
	"}\n"
	"kernel scale(x: *f32, y: *f32, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(y + offs, load(x + offs, mask = offs < n) * 2.0, mask = offs < n);\n"
	"}\n";

static blk_kernel *kernel(blk_module *m, const char *name)
{
	blk_kernel *k = NULL;
	blk_kernel_get(m, name, &k);
	return k;
}

typedef struct Worker {
	blk_kernel *k;
	blk_arg args[3];
	int launches, errors;
} Worker;

static void *worker(void *p)
{
	Worker *w = p;
	for (int i = 0; i < w->launches; i++)
		w->errors += blk_launch(w->k, w->args, 3, NULL) != BLK_SUCCESS;
	return NULL;
}

enum { N = 3000 };

/* Contexts, memory, modules and launches on two devices. */
static void test_contexts(void)
{
	blk_context *c0 = NULL, *c1 = NULL, *bad = NULL;
	expect(blk_context_create(BLK_BACKEND_GPU, 2, &bad) == BLK_ERROR_NO_DEVICE &&
	           has("blk_context_create: no CUDA device 2 (there are 2: 0 to 1)") && !bad,
	       "device 2 of 2: BLK_ERROR_NO_DEVICE naming the index and the count");
	expect(blk_context_create(BLK_BACKEND_GPU, -1, &bad) == BLK_ERROR_NO_DEVICE && has("no CUDA device -1"),
	       "device -1 is refused too");
	expect(blk_context_create(BLK_BACKEND_GPU, 0, &c0) == BLK_SUCCESS &&
	           blk_context_create(BLK_BACKEND_GPU, 1, &c1) == BLK_SUCCESS,
	       "a GPU context on device 0 and one on device 1");
	expect(get("primary_refs", 0) == 1 && get("primary_refs", 1) == 1, "each retains its own device's primary context");
	void *cur = (void *)1;
	drv_get_current(&cur);
	expect(cur == NULL, "creating them leaves no CUDA context current on this thread");

	float host[N], back[N];
	for (int i = 0; i < N; i++)
		host[i] = (float)i * 0.5f;
	blk_devptr x0 = 0, y0 = 0, x1 = 0, y1 = 0;
	expect(blk_malloc(c0, sizeof host, &x0) == BLK_SUCCESS && blk_malloc(c0, sizeof host, &y0) == BLK_SUCCESS &&
	           blk_malloc(c1, sizeof host, &x1) == BLK_SUCCESS && blk_malloc(c1, sizeof host, &y1) == BLK_SUCCESS &&
	           get("allocs_live", 0) == 2 && get("allocs_live", 1) == 2,
	       "blk_malloc on each: two allocations on each device");
	expect(blk_copy_to_device(c1, x1, host, sizeof host) == BLK_SUCCESS &&
	           blk_copy_from_device(c1, back, x1, sizeof back) == BLK_SUCCESS && memcmp(back, host, sizeof host) == 0,
	       "copies to and from device 1's memory");
	expect(blk_copy_to_device(c0, x1, host, sizeof host) == BLK_ERROR_INVALID_ARGUMENT && has("is not inside memory"),
	       "device 1's memory through device 0's context is refused before the driver sees it");

	/* one source on both devices: compiled once (the disk cache), loaded into each */
	blk_module *m0 = NULL, *m1 = NULL;
	expect(blk_module_load_source(c0, "multi.tile", source, strlen(source), NULL, &m0) == BLK_SUCCESS &&
	           blk_module_load_source(c1, "multi.tile", source, strlen(source), NULL, &m1) == BLK_SUCCESS,
	       "the module loaded on each context");
	blk_arg a0[3] = {blk_arg_ptr(x0), blk_arg_ptr(y0), blk_arg_int(N)};
	blk_arg a1[3] = {blk_arg_ptr(x1), blk_arg_ptr(y1), blk_arg_int(N)};
	int jits = fc.jits();
	long l0 = get("launches", 0), l1 = get("launches", 1), v = get("violations", 0);
	expect(blk_launch(kernel(m1, "scale"), a1, 3, NULL) == BLK_SUCCESS && get("launches", 1) == l1 + 1 &&
	           get("launches", 0) == l0 && get("module_loads", 1) == 1 && get("module_loads", 0) == 0,
	       "a launch on device 1: its module loaded and launched there, nothing on device 0");
	expect(blk_launch(kernel(m0, "scale"), a0, 3, NULL) == BLK_SUCCESS && get("launches", 0) == l0 + 1 &&
	           get("module_loads", 0) == 1 && get("modules_live", 0) == 1 && get("modules_live", 1) == 1,
	       "the same kernel on device 0: loaded into device 0's context too");
	blk_compile_info i0, i1;
	expect(blk_kernel_compile(kernel(m1, "scale"), a1, 3, NULL, &i1) == BLK_SUCCESS && !i1.from_disk_cache &&
	           blk_kernel_compile(kernel(m0, "scale"), a0, 3, NULL, &i0) == BLK_SUCCESS && i0.from_disk_cache &&
	           fc.jits() == jits + 2,
	       "compiled once for both devices (the second's PTX from the disk cache), loaded by the JIT on each");
	drv_get_current(&cur);
	expect(cur == NULL && get("violations", 0) == v, "no call reached the other device; nothing left current");

	/* the caller's current context is put back */
	void *own0 = NULL;
	drv_retain(&own0, 0);
	drv_set_current(own0);
	expect(blk_launch(kernel(m1, "scale"), a1, 3, NULL) == BLK_SUCCESS &&
	           blk_copy_from_device(c1, back, y1, sizeof back) == BLK_SUCCESS && blk_synchronize(c1) == BLK_SUCCESS,
	       "with device 0's context current, a launch, a copy and a sync on device 1");
	drv_get_current(&cur);
	expect(cur == own0 && get("violations", 0) == v, "... leave device 0's context current, as the caller had it");

	/* blk_context_create_current on device 1 */
	void *own1 = NULL;
	drv_retain(&own1, 1);
	drv_set_current(own1);
	blk_context *b = NULL;
	blk_devptr bx;
	long a1_before = get("allocs_live", 1);
	expect(blk_context_create_current(&b) == BLK_SUCCESS && blk_malloc(b, 256, &bx) == BLK_SUCCESS &&
	           get("allocs_live", 1) == a1_before + 1,
	       "blk_context_create_current with device 1's context current: its memory is device 1's");
	blk_context_destroy(b);
	drv_set_current(NULL);
	drv_release(0);
	drv_release(1);

	/* a pointer of device 0 in a launch on device 1: the stand-in refuses it */
	blk_arg mixed[3] = {blk_arg_ptr(x0), blk_arg_ptr(y1), blk_arg_int(N)};
	expect(blk_launch(kernel(m1, "scale"), mixed, 3, NULL) == BLK_ERROR_LAUNCH && has("cuLaunchKernel failed") &&
	           get("violations", 0) == v + 1,
	       "(the stand-in catches a launch on device 1 with device 0's memory)");
	v = get("violations", 0);

	/* threads on both devices at once */
	enum { EACH = 200 };
	Worker w[4];
	pthread_t t[4];
	l0 = get("launches", 0);
	l1 = get("launches", 1);
	for (int i = 0; i < 4; i++) {
		w[i] = (Worker){kernel(i % 2 ? m1 : m0, "scale"), {{0}}, EACH, 0};
		memcpy(w[i].args, i % 2 ? a1 : a0, sizeof a0);
		pthread_create(&t[i], NULL, worker, &w[i]);
	}
	int errors = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		errors += w[i].errors;
	}
	expect(errors == 0 && get("launches", 0) == l0 + 2 * EACH && get("launches", 1) == l1 + 2 * EACH &&
	           get("violations", 0) == v,
	       "4 threads launching on devices 0 and 1 at once: each launch on its own device");

	blk_module_destroy(m1);
	expect(get("modules_live", 1) == 0 && get("modules_live", 0) == 1, "destroying device 1's module unloads it there only");
	blk_context_destroy(c1);
	expect(get("allocs_live", 1) == 0 && get("primary_refs", 1) == 0 && get("allocs_live", 0) == 2 &&
	           get("primary_refs", 0) == 1, "destroying device 1's context frees its memory alone");
	blk_module_destroy(m0);
	blk_context_destroy(c0);
	expect(fc.primary_refs() == 0 && fc.allocs_live() == 0 && fc.modules_live() == 0 && get("violations", 0) == v,
	       "all given back");
}

/* Sweeps split across the two devices. */
static void test_sweeps(void)
{
	blk_context *c0 = NULL;
	blk_module *m = NULL;
	blk_context_create(BLK_BACKEND_GPU, 0, &c0);
	expect(blk_module_load_source(c0, "multi.tile", source, strlen(source), NULL, &m) == BLK_SUCCESS, "sweeps: a module on device 0");
	blk_kernel *add1 = kernel(m, "add1");
	float host[N], back[N];
	for (int i = 0; i < N; i++)
		host[i] = (float)(i % 97);
	blk_devptr x;
	blk_malloc(c0, sizeof host, &x);
	blk_copy_to_device(c0, x, host, sizeof host);
	blk_arg args[2] = {blk_arg_ptr(x + 16), blk_arg_int(N - 4)}; /* into the allocation, not at its start */
	fc.set("scribble", 1); /* each launch overwrites what its pointers point into */

	/* the reference: blk_autotune on device 0 alone */
	blk_tune_result one, two;
	expect(blk_autotune(add1, args, 2, NULL, &one) == BLK_SUCCESS && one.n_configs == 5 && one.best >= 0,
	       "blk_autotune on device 0 alone: 5 configs");
	long l0 = get("launches", 0), l1 = get("launches", 1), v = get("violations", 0);
	int devs[2] = {0, 1};
	blk_status st = blk_autotune_devices(add1, args, 2, NULL, devs, 2, &two);
	expect(st == BLK_SUCCESS && two.n_configs == 5, "blk_autotune_devices over devices 0 and 1");
	int same = 1;
	for (int c = 0; c < 5; c++)
		same &= two.ms[c] > 0 && two.ms[c] == one.ms[c] && two.note[c][0] == '\0';
	char what[256];
	snprintf(what, sizeof what, "every config's time merged, each as on one device (%.4f %.4f %.4f %.4f %.4f ms)",
	         two.ms[0], two.ms[1], two.ms[2], two.ms[3], two.ms[4]);
	expect(same && two.best == one.best, what);
	/* configs 0, 2, 4 on device 0, 1 and 3 on device 1, the same launches each */
	long d0 = get("launches", 0) - l0, d1 = get("launches", 1) - l1;
	snprintf(what, sizeof what, "the configs split: %ld launches on device 0, %ld on device 1 (3 configs and 2)", d0, d1);
	expect(d0 > 0 && d1 > 0 && d0 * 2 == d1 * 3, what);
	expect(get("violations", 0) == v, "no call of either thread reached the other device");
	blk_copy_from_device(c0, back, x, sizeof back);
	expect(memcmp(back, host, sizeof host) == 0, "the arguments untouched (each device ran on its own copy)");
	expect(get("allocs_live", 1) == 0 && get("primary_refs", 1) == 0 && get("modules_live", 1) == 0,
	       "device 1's context, copies and modules given back after the sweep");
	l0 = get("launches", 0);
	fc.set("scribble", 0);
	expect(blk_launch(add1, args, 2, NULL) == BLK_SUCCESS && get("launches", 0) == l0 + 1,
	       "the choice remembered: the next launch is not tuned");
	unsigned block[5] = {128, 1024, 512, 256, 64};
	expect(fake_last(&fc).grid[0] == (unsigned)((N - 4 + block[two.best] - 1) / block[two.best]),
	       "... and runs the fastest config");

	/* blk_time_configs: any configs, across devices */
	blk_const b[3] = {{.name = "BLOCK", .i = 64}, {.name = "BLOCK", .i = 256}, {.name = "BLOCK", .i = 512}};
	blk_launch_options cf[3] = {{.consts = &b[0], .n_consts = 1},
	                            {.consts = &b[1], .n_consts = 1, .num_warps = 2},
	                            {.consts = &b[2], .n_consts = 1, .num_warps = 64}};
	double ms[3], ref[3];
	char notes[3][160];
	for (int c = 0; c < 3; c++)
		blk_time_launch(add1, args, 2, &cf[c], 5, &ref[c]);
	l1 = get("launches", 1);
	expect(blk_time_configs(add1, args, 2, cf, 3, 5, devs, 2, ms, notes[0], sizeof notes[0]) == BLK_SUCCESS &&
	           ms[0] == ref[0] && ms[1] == ref[1] && get("launches", 1) > l1,
	       "blk_time_configs over devices 0 and 1: the times of blk_time_launch on one device");
	expect(ms[2] < 0 && strstr(notes[2], "device 0: ") && strstr(notes[2], "num_warps is a power of two in 1..32, found 64"),
	       "a config that cannot run (num_warps 64) noted, with the device it failed on");
	double ms0[3];
	expect(blk_time_configs(add1, args, 2, cf, 2, 5, NULL, 0, ms0, NULL, 0) == BLK_SUCCESS && ms0[0] == ref[0] &&
	           ms0[1] == ref[1], "blk_time_configs without devices: the kernel's own context");

	/* refusals */
	long allocs0 = get("allocs_live", 0); /* x and the L2 flush buffer of timing */
	int bad_devs[2] = {0, 7};
	expect(blk_autotune_devices(add1, args, 2, NULL, bad_devs, 2, &two) == BLK_ERROR_NO_DEVICE &&
	           has("blk_autotune_devices: devices[1]: blk_context_create: no CUDA device 7 (there are 2: 0 to 1)"),
	       "a device that does not exist: named, with the device count");
	int twice[2] = {1, 1};
	expect(blk_autotune_devices(add1, args, 2, NULL, twice, 2, &two) == BLK_ERROR_INVALID_ARGUMENT &&
	           has("device 1 is listed twice"), "a device listed twice is refused");
	fc.set("other_model", 1);
	expect(blk_autotune_devices(add1, args, 2, NULL, devs, 2, &two) == BLK_ERROR_INVALID_ARGUMENT &&
	           has("device 1 is a Fake GPU B (compute capability 9.0) and device 0, the kernel's, a Fake GPU (9.0): "
	               "a sweep is split across GPUs of one model only"),
	       "devices of two models are refused, both named");
	expect(blk_time_configs(add1, args, 2, cf, 3, 5, devs, 2, ms, NULL, 0) == BLK_ERROR_INVALID_ARGUMENT &&
	           has("Fake GPU B"), "... by blk_time_configs too");
	fc.set("other_model", 0);
	snprintf(what, sizeof what, "refused sweeps hold nothing (primary contexts retained: %ld on device 0, %ld on 1; "
	         "%ld allocations on device 1)", get("primary_refs", 0), get("primary_refs", 1), get("allocs_live", 1));
	expect(get("primary_refs", 1) == 0 && get("primary_refs", 0) == 1 && get("allocs_live", 0) == allocs0 &&
	           get("allocs_live", 1) == 0, what);

	blk_context *ic = NULL;
	blk_module *im = NULL;
	blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ic);
	blk_module_load_source(ic, "multi.tile", source, strlen(source), NULL, &im);
	expect(blk_autotune_devices(kernel(im, "add1"), args, 2, NULL, devs, 2, &two) != BLK_SUCCESS &&
	           has("devices name GPUs; kernel 'add1' is on the interpreter"), "devices for an interpreter kernel are refused");
	blk_module_destroy(im);
	blk_context_destroy(ic);

	blk_module_destroy(m);
	blk_context_destroy(c0);
	expect(fc.primary_refs() == 0 && fc.allocs_live() == 0 && fc.modules_live() == 0 && get("violations", 0) == v,
	       "sweeps: all given back, no call reached the wrong device");
}

int main(void)
{
	char self[4096], path[4200], tmpdir[512];
	if (!fake_cuda_open(&fc, self, sizeof self, path, sizeof path))
		return 1;
	if (!fc.get) {
		printf("FAIL the stand-in has no fake_cuda_get\n0 passed, 1 failed\n");
		return 1;
	}
	*(void **)&drv_retain = dlsym(fc.handle, "cuDevicePrimaryCtxRetain");
	*(void **)&drv_release = dlsym(fc.handle, "cuDevicePrimaryCtxRelease_v2");
	*(void **)&drv_set_current = dlsym(fc.handle, "cuCtxSetCurrent");
	*(void **)&drv_get_current = dlsym(fc.handle, "cuCtxGetCurrent");
	snprintf(tmpdir, sizeof tmpdir, "%s/blk-multi.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL cannot make a temporary folder\n0 passed, 1 failed\n");
		return 1;
	}
	setenv("BLK_CACHE_DIR", tmpdir, 1);
	test_contexts();
	test_sweeps();
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("     (could not remove %s)\n", tmpdir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
