/* Pruning @autotune configs before they are timed (runtime/prune.c),
 * through blk.h against the stand-in driver (fake/libcuda.so.1: 132 SMs,
 * 227 KiB of shared memory a program unless "smem_optin" says otherwise,
 * "block_limit" the threads a program's registers leave room for; a
 * launch moves its clock by programs x threads / 10^4 ms):
 *
 *  - the idle rule: a config of fewer programs than half the SMs is not
 *    timed when another runs at least one on every SM; not when none
 *    does; the boundary at exactly half;
 *  - the fit rule: too much shared memory, too many threads for the
 *    register file: pruned, and a clear error when every config is;
 *  - a lone config is never pruned (its launch says why it cannot run);
 *  - when every kept config fails, the idle ones are timed after all;
 *  - blk_prune_configs on any launches, blk_autotune_devices, the
 *    interpreter (nothing pruned). */
#include "blk.h"
#include "fake_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FakeCuda fc;
static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static const char *source =
	"@autotune(key = [n], configs = [{BLOCK = 128, num_warps = 4}, {BLOCK = 1024, num_warps = 4},\n"
	"                                {BLOCK = 512, num_warps = 8}])\n"
	"kernel add1(x: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, load(x + offs, mask = offs < n) + 1.0, mask = offs < n);\n"
	"}\n"
	"kernel plain(x: *f32, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, 2.0, mask = offs < n);\n"
	"}\n"
	"@autotune(key = [n], configs = [{B = 128}, {B = 64}])\n"
	"kernel tr(x: *f32, out: *f32, n: i32, B: const i32) grid(cdiv(n, B)) {\n"
	"    let r = arange(0, B);\n"
	"    let t = cumsum(load(x + r[:, None] * B + r[None, :]), axis = 1);\n"
	"    store(out + r[:, None] * B + r[None, :], trans(t));\n"
	"}\n"
	"@autotune(key = [n], configs = [{BLOCK = 512}])\n"
	"kernel one(x: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, 1.0, mask = offs < n);\n"
	"}\n"
	"@autotune(key = [n], configs = [{BLOCK = 128}, {BLOCK = 4096}])\n"
	"kernel wide(x: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, 1.0, mask = offs < n);\n"
	"}\n";

static blk_kernel *kernel(blk_module *m, const char *name)
{
	blk_kernel *k = NULL;
	blk_kernel_get(m, name, &k);
	return k;
}

static blk_module *load(blk_context *ctx)
{
	blk_module *m = NULL;
	blk_module_load_source(ctx, "prune.tile", source, strlen(source), NULL, &m);
	return m;
}

static int has(const char *s) { return strstr(blk_last_error(), s) != NULL; }

/* The idle rule through blk_autotune and a launch. */
static void test_idle(blk_context *ctx, blk_devptr x)
{
	char what[512];
	blk_module *m = load(ctx);
	blk_kernel *add1 = kernel(m, "add1");
	blk_tune_result r;

	/* n = 2^16: 512, 64 and 128 programs; 64 < 132 / 2 while 512 >= 132 */
	blk_arg a16[2] = {blk_arg_ptr(x), blk_arg_int(1 << 16)};
	int before = fc.launches();
	blk_status st = blk_autotune(add1, a16, 2, NULL, &r);
	snprintf(what, sizeof what, "idle: BLOCK 1024 (64 programs on 132 SMs) pruned, not launched (\"%s\", %d launches)",
	         r.note[1], fc.launches() - before);
	expect(st == BLK_SUCCESS && r.ms[1] == BLK_TUNE_PRUNED && fc.launches() == before + 26 &&
	           strcmp(r.note[1], "pruned: 64 programs on 132 SMs; BLOCK=128 gives 512") == 0, what);
	expect(r.ms[0] > 0 && r.ms[2] > 0 && !r.note[0][0] && !r.note[2][0] && r.best == 2,
	       "... the others timed (BLOCK 512's 128 programs, under the SMs but not under half, kept), the fastest best");

	/* n = 2^14: 128, 16 and 32 programs: no config fills the 132 SMs, none pruned */
	blk_arg a14[2] = {blk_arg_ptr(x), blk_arg_int(1 << 14)};
	before = fc.launches();
	st = blk_autotune(add1, a14, 2, NULL, &r);
	expect(st == BLK_SUCCESS && fc.launches() == before + 39 && r.ms[0] > 0 && r.ms[1] > 0 && r.ms[2] > 0 &&
	           !r.note[1][0], "idle: no config has a program for every SM (128 at most): all three timed");

	/* the boundary: 66 programs (half of 132) kept, 65 pruned */
	blk_arg a66[2] = {blk_arg_ptr(x), blk_arg_int(66 * 1024)};
	blk_arg a65[2] = {blk_arg_ptr(x), blk_arg_int(65 * 1024)};
	before = fc.launches();
	st = blk_autotune(add1, a66, 2, NULL, &r);
	expect(st == BLK_SUCCESS && fc.launches() == before + 39 && r.ms[1] > 0,
	       "idle: 66 programs on 132 SMs (exactly half) are kept");
	before = fc.launches();
	st = blk_autotune(add1, a65, 2, NULL, &r);
	expect(st == BLK_SUCCESS && fc.launches() == before + 26 && r.ms[1] == BLK_TUNE_PRUNED &&
	           strcmp(r.note[1], "pruned: 65 programs on 132 SMs; BLOCK=128 gives 520") == 0,
	       "idle: 65 are pruned");

	/* a launch of a new key value prunes the same way, then runs the best kept */
	blk_arg a15[2] = {blk_arg_ptr(x), blk_arg_int(1 << 15)};
	before = fc.launches();
	expect(blk_launch(add1, a15, 2, NULL) == BLK_SUCCESS && fc.launches() == before + 14 &&
	           fake_last(&fc).grid[0] == 256 && fake_last(&fc).block[0] == 128,
	       "idle: a launch (n = 2^15) times BLOCK 128 alone (256 programs; 32 and 64 pruned), then runs it");

	/* a lone config is never pruned: one's 2 programs run */
	blk_arg small[2] = {blk_arg_ptr(x), blk_arg_int(1000)};
	st = blk_autotune(kernel(m, "one"), small, 2, NULL, &r);
	expect(st == BLK_SUCCESS && r.n_configs == 1 && r.best == 0 && r.ms[0] > 0 && !r.note[0][0],
	       "a kernel of one config (2 programs on 132 SMs): timed, not pruned");
	st = blk_autotune(kernel(m, "plain"), small, 2, NULL, &r);
	expect(st == BLK_SUCCESS && r.n_configs == 1 && r.ms[0] > 0, "a kernel without configs (4 programs): timed");

	/* every kept config fails: the idle ones are timed after all */
	blk_kernel *wide = kernel(m, "wide");
	before = fc.launches();
	fc.fail("cuLaunchKernel", 701, 1, NULL);
	st = blk_autotune(wide, a16, 2, NULL, &r);
	snprintf(what, sizeof what, "idle: when the config that fills the SMs fails (\"%.50s\"), the pruned one is timed "
	         "after all (%.4f ms)", r.note[0], r.ms[1]);
	expect(st == BLK_SUCCESS && r.best == 1 && r.ms[1] > 0 && r.ms[0] < 0 && strstr(r.note[0], "OUT_OF_RESOURCES") &&
	           !r.note[1][0] && fc.launches() == before + 13, what);
	blk_module_destroy(m);
}

/* The fit rule: shared memory and the register file. */
static void test_fit(void)
{
	char what[512];
	blk_tune_result r;

	/* registers: the driver says 128 threads fit (block_limit) when the kernels are loaded */
	fc.set("block_limit", 128);
	blk_context *ctx = NULL;
	blk_context_create(BLK_BACKEND_GPU, 0, &ctx);
	blk_devptr y;
	blk_malloc(ctx, 4 << 20, &y);
	blk_arg by[2] = {blk_arg_ptr(y), blk_arg_int(1 << 20)};
	blk_module *m = load(ctx);
	int before = fc.launches();
	blk_status st = blk_autotune(kernel(m, "add1"), by, 2, NULL, &r);
	snprintf(what, sizeof what, "fit: 256 threads of 42 registers where 128 fit: pruned, not launched (\"%s\")",
	         r.note[2]);
	expect(st == BLK_SUCCESS && r.best == 1 && r.ms[2] == BLK_TUNE_PRUNED && fc.launches() == before + 26 &&
	           strcmp(r.note[2], "pruned: 42 registers x 256 threads > the register file (128 threads fit)") == 0,
	       what);
	blk_module_destroy(m);
	fc.set("block_limit", 64);
	m = load(ctx);
	before = fc.launches();
	st = blk_autotune(kernel(m, "add1"), by, 2, NULL, &r);
	expect(st == BLK_ERROR_LAUNCH && fc.launches() == before &&
	           has("no config of kernel 'add1' fits the device (Fake GPU): all 3 pruned; config 0: 42 registers x 128 "
	               "threads > the register file (64 threads fit)"),
	       "fit: no config fits: BLK_ERROR_LAUNCH naming the device and why, nothing launched");
	expect(blk_launch(kernel(m, "add1"), by, 2, NULL) == BLK_ERROR_LAUNCH && has("fits the device"),
	       "... a launch that tunes says the same");
	st = blk_autotune(kernel(m, "one"), by, 2, NULL, &r);
	expect(st == BLK_ERROR_LAUNCH && has("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") && !has("pruned"),
	       "fit: a lone config that does not fit is not pruned: its launch fails with the driver's error");
	blk_module_destroy(m);
	blk_context_destroy(ctx);
	fc.set("block_limit", 0);

	/* shared memory: 64 KiB (B = 128) and 16 KiB (B = 64) against 12000 bytes */
	fc.set("smem_optin", 12000);
	blk_context_create(BLK_BACKEND_GPU, 0, &ctx);
	fc.set("smem_optin", 232448);
	m = load(ctx);
	blk_devptr s1, s2;
	blk_malloc(ctx, 128 * 128 * 4, &s1);
	blk_malloc(ctx, 128 * 128 * 4, &s2);
	blk_arg sargs[3] = {blk_arg_ptr(s1), blk_arg_ptr(s2), blk_arg_int(128)};
	before = fc.launches();
	st = blk_autotune(kernel(m, "tr"), sargs, 3, NULL, &r);
	expect(st == BLK_ERROR_LAUNCH && fc.launches() == before &&
	           has("no config of kernel 'tr' fits the device (Fake GPU): all 2 pruned; config 0: 64 KiB shared memory "
	               "> 11.7 KiB"),
	       "fit: shared memory over the limit in every config: the error says how much");
	expect(r.ms[0] == BLK_TUNE_PRUNED && r.ms[1] == BLK_TUNE_PRUNED && r.best == -1 &&
	           strcmp(r.note[1], "pruned: 16 KiB shared memory > 11.7 KiB") == 0,
	       "... each config noted");
	blk_module_destroy(m);
	blk_context_destroy(ctx);
}

/* blk_prune_configs on a sweep's launches. */
static void test_prune_configs(blk_context *ctx, blk_devptr x)
{
	blk_module *m = load(ctx);
	blk_kernel *plain = kernel(m, "plain");
	blk_const b[3] = {{.name = "BLOCK", .i = 128}, {.name = "BLOCK", .i = 1024}, {.name = "BLOCK", .i = 512}};
	blk_launch_options o[3] = {{.consts = &b[0], .n_consts = 1},
	                           {.consts = &b[1], .n_consts = 1},
	                           {.consts = &b[2], .n_consts = 1, .num_warps = 8}};
	blk_arg a16[2] = {blk_arg_ptr(x), blk_arg_int(1 << 16)};
	int pruned[3] = {9, 9, 9};
	char notes[3][96];
	int before = fc.launches();
	blk_status st = blk_prune_configs(plain, a16, 2, o, 3, BLK_PRUNE_FIT | BLK_PRUNE_IDLE, pruned, notes[0], 96);
	expect(st == BLK_SUCCESS && pruned[0] == 0 && pruned[1] == BLK_PRUNE_IDLE && pruned[2] == 0 &&
	           strcmp(notes[1], "pruned: 64 programs on 132 SMs; BLOCK=128 gives 512") == 0 && !notes[0][0] &&
	           !notes[2][0] && fc.launches() == before,
	       "blk_prune_configs: BLOCK=1024 of a sweep pruned for idleness, nothing launched");
	st = blk_prune_configs(plain, a16, 2, o, 3, BLK_PRUNE_FIT, pruned, NULL, 0);
	expect(st == BLK_SUCCESS && !pruned[0] && !pruned[1] && !pruned[2], "... with the fit rule alone: none");
	st = blk_prune_configs(plain, a16, 2, &o[1], 1, BLK_PRUNE_FIT | BLK_PRUNE_IDLE, pruned, notes[0], 96);
	expect(st == BLK_SUCCESS && !pruned[0] && !notes[0][0], "... a lone config: not pruned");
	/* add1 given num_warps alone: its launch would tune over BLOCK first, so it is not judged */
	blk_launch_options w[2] = {{.num_warps = 4}, {.num_warps = 8}};
	before = fc.launches();
	st = blk_prune_configs(kernel(m, "add1"), a16, 2, w, 2, BLK_PRUNE_FIT | BLK_PRUNE_IDLE, pruned, notes[0], 96);
	expect(st == BLK_SUCCESS && !pruned[0] && !pruned[1] && fc.launches() == before,
	       "... configs that leave an @autotune const open: kept, and not tuned here");
	expect(blk_prune_configs(plain, a16, 2, o, 3, 4, pruned, NULL, 0) == BLK_ERROR_INVALID_ARGUMENT && has("rules is 4"),
	       "... unknown rules refused");
	expect(blk_prune_configs(plain, a16, 2, o, 3, BLK_PRUNE_FIT, NULL, NULL, 0) == BLK_ERROR_INVALID_ARGUMENT &&
	           blk_prune_configs(NULL, a16, 2, o, 3, BLK_PRUNE_FIT, pruned, NULL, 0) == BLK_ERROR_INVALID_ARGUMENT &&
	           blk_prune_configs(plain, a16, 1, o, 3, BLK_PRUNE_FIT, pruned, NULL, 0) == BLK_ERROR_INVALID_ARGUMENT,
	       "... NULL pruned, NULL kernel, wrong arguments refused");

	/* across devices: pruned on the kernel's own, the rest split */
	blk_tune_result r;
	int devs[2] = {0, 1};
	st = blk_autotune_devices(kernel(m, "add1"), a16, 2, NULL, devs, 2, &r);
	expect(st == BLK_SUCCESS && r.ms[1] == BLK_TUNE_PRUNED && r.ms[0] > 0 && r.ms[2] > 0 && r.best == 2 &&
	           strcmp(r.note[1], "pruned: 64 programs on 132 SMs; BLOCK=128 gives 512") == 0,
	       "blk_autotune_devices: pruned as blk_autotune does, the others timed across two GPUs");
	blk_module_destroy(m);
}

static void test_interpreter(void)
{
	blk_context *ctx = NULL;
	blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ctx);
	blk_module *m = load(ctx);
	blk_devptr x;
	blk_malloc(ctx, 4 << 16, &x);
	blk_arg a16[2] = {blk_arg_ptr(x), blk_arg_int(1 << 16)};
	blk_const b[2] = {{.name = "BLOCK", .i = 2}, {.name = "BLOCK", .i = 1024}};
	blk_launch_options o[2] = {{.consts = &b[0], .n_consts = 1}, {.consts = &b[1], .n_consts = 1}};
	int pruned[2] = {9, 9};
	expect(blk_prune_configs(kernel(m, "plain"), a16, 2, o, 2, BLK_PRUNE_FIT | BLK_PRUNE_IDLE, pruned, NULL, 0) ==
	               BLK_SUCCESS && !pruned[0] && !pruned[1],
	       "interpreter: blk_prune_configs prunes nothing");
	blk_tune_result r;
	expect(blk_autotune(kernel(m, "add1"), a16, 2, NULL, &r) == BLK_SUCCESS && r.best == 0 && r.ms[1] != BLK_TUNE_PRUNED,
	       "interpreter: blk_autotune prunes nothing");
	blk_module_destroy(m);
	blk_context_destroy(ctx);
}

int main(void)
{
	char self[4096], path[4200];
	if (!fake_cuda_open(&fc, self, sizeof self, path, sizeof path))
		return 1;
	setenv("BLK_CACHE", "0", 1);
	blk_context *ctx = NULL;
	blk_devptr x = 0;
	expect(blk_context_create(BLK_BACKEND_GPU, 0, &ctx) == BLK_SUCCESS && blk_malloc(ctx, 4 << 20, &x) == BLK_SUCCESS,
	       "a GPU context on the stand-in (132 SMs)");
	test_idle(ctx, x);
	test_fit();
	test_prune_configs(ctx, x);
	blk_context_destroy(ctx);
	test_interpreter();
	expect(fc.primary_refs() == 0 && fc.allocs_live() == 0 && fc.modules_live() == 0, "all given back");
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
