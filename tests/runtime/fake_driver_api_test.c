/* libblk's GPU backend through blk.h, against the stand-in driver
 * (fake_cuda.c, built beside this program as fake/libcuda.so.1): contexts,
 * memory, compiling and linking variants, the launch's grid, block, shared
 * memory and the bytes of each argument, errors by name, faults, BLK_DEBUG,
 * teardown, launches from several threads. Kernels are compiled to PTX for
 * real; the fake driver records launches instead of running them. */
#include "blk.h"
#include "fake_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static FakeCuda fc;

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static int has(const char *s) { return strstr(blk_last_error(), s) != NULL; }

/* The recorded bytes of parameter i equal the low `size` bytes of v. */
static int param_is(const FakeLaunch *l, int i, int size, uint64_t v)
{
	if (i >= l->n_params || l->sizes[i] != size)
		return 0;
	for (int b = 0; b < size; b++)
		if (l->bytes[i][b] != (unsigned char)(v >> (8 * b)))
			return 0;
	return 1;
}

static const char *source =
	"kernel vector_add(x: *f32, y: *f32, out: *f32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let mask = offs < n;\n"
	"    store(out + offs, load(x + offs, mask = mask) + load(y + offs, mask = mask), mask = mask);\n"
	"}\n"
	"kernel scalars(out: *i64, a: i8, b: i16, c: u32, d: i64, e: f32, f: f64, g: f16, h: bf16, flag: i1, u: u8) {\n"
	"    store(out, d + a.to(i64) + b.to(i64) + c.to(i64) + e.to(i64) + f.to(i64) + g.to(i64) + h.to(i64)\n"
	"               + flag.to(i64) + u.to(i64));\n"
	"}\n"
	"kernel row_sum(x: *f32, out: *f32, N: const i32 = 1024) grid(1) {\n"
	"    store(out, sum(load(x + arange(0, N)), axis = 0));\n"
	"}\n"
	"kernel big(x: *f32, out: *f32) grid(1) {\n"
	"    let r = arange(0, 128);\n"
	"    let t = cumsum(load(x + r[:, None] * 128 + r[None, :]), axis = 1);\n"
	"    store(out + r[:, None] * 128 + r[None, :], trans(t));\n"
	"}\n";

static blk_kernel *kernel(blk_module *m, const char *name)
{
	blk_kernel *k = NULL;
	blk_kernel_get(m, name, &k);
	return k;
}

/* cuInit failing is seen once per process: in a child. */
static void init_failure_child(const char *path)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		void *h = dlopen(path, RTLD_NOW);
		void (*set)(const char *, long) = h ? (void (*)(const char *, long))dlsym(h, "fake_cuda_set") : NULL;
		if (!set)
			_exit(3);
		set("init_error", 100);
		blk_context *ctx = NULL;
		int bad = 0;
		if (blk_context_create(BLK_BACKEND_GPU, 0, &ctx) != BLK_ERROR_NO_DEVICE ||
		    !strstr(blk_last_error(),
		            "blk_context_create: cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)")) {
			fprintf(stderr, "     child: %s\n", blk_last_error());
			bad |= 1;
		}
		if (blk_context_create(BLK_BACKEND_AUTO, 0, &ctx) != BLK_SUCCESS ||
		    blk_context_backend(ctx) != BLK_BACKEND_INTERPRETER)
			bad |= 2;
		_exit(bad);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 99;
	expect(code == 0 || code == 2, "cuInit failing: a GPU context is BLK_ERROR_NO_DEVICE with \"cuInit failed: "
	                               "CUDA_ERROR_NO_DEVICE (...)\"");
	expect(code == 0 || code == 1, "cuInit failing: AUTO gives the interpreter");
}

typedef struct Worker {
	blk_kernel *k;
	blk_arg *args;
	int launches, errors;
} Worker;

static void *worker(void *p)
{
	Worker *w = p;
	for (int i = 0; i < w->launches; i++)
		w->errors += blk_launch(w->k, w->args, 4, NULL) != BLK_SUCCESS;
	return NULL;
}

int main(void)
{
	char self[4096], path[4200];
	if (!fake_cuda_open(&fc, self, sizeof self, path, sizeof path))
		return 1;
	setenv("BLK_CACHE", "0", 1); /* every variant compiled and linked here (cache_api_test tests the cache) */

	init_failure_child(path);

	/* ---- contexts */
	blk_context *ctx = NULL, *actx = NULL;
	fc.set("devices", 0);
	expect(blk_context_create(BLK_BACKEND_GPU, 0, &ctx) == BLK_ERROR_NO_DEVICE && has("the CUDA driver sees no device"),
	       "a driver with no device: BLK_ERROR_NO_DEVICE");
	expect(blk_context_create(BLK_BACKEND_AUTO, 0, &actx) == BLK_SUCCESS &&
	           blk_context_backend(actx) == BLK_BACKEND_INTERPRETER, "... and AUTO gives the interpreter");
	blk_context_destroy(actx);
	fc.set("devices", 1);
	expect(blk_context_create(BLK_BACKEND_GPU, 3, &ctx) == BLK_ERROR_NO_DEVICE && has("no CUDA device 3 (there is one: 0)"),
	       "a device that does not exist is named");
	fc.set("cc_major", 6);
	fc.set("cc_minor", 1);
	expect(blk_context_create(BLK_BACKEND_GPU, 0, &ctx) == BLK_ERROR_NO_DEVICE &&
	           has("CUDA device 0 (Fake GPU) has compute capability 6.1; blk needs 7.0 or newer"),
	       "a device older than sm_70 is refused with its name and compute capability");
	expect(blk_context_create(BLK_BACKEND_AUTO, 0, &actx) == BLK_SUCCESS &&
	           blk_context_backend(actx) == BLK_BACKEND_INTERPRETER, "... and AUTO gives the interpreter");
	blk_context_destroy(actx);
	expect(fc.primary_refs() == 0, "refused devices hold no primary context");
	fc.set("cc_major", 9);
	fc.set("cc_minor", 0);
	fc.fail("cuDevicePrimaryCtxRetain", 2, 1, NULL);
	expect(blk_context_create(BLK_BACKEND_GPU, 0, &ctx) == BLK_ERROR_OUT_OF_MEMORY &&
	           has("cuDevicePrimaryCtxRetain failed: CUDA_ERROR_OUT_OF_MEMORY"), "a failed retain is reported by name");

	ctx = NULL;
	expect(blk_context_create(BLK_BACKEND_GPU, 0, &ctx) == BLK_SUCCESS && blk_context_backend(ctx) == BLK_BACKEND_GPU,
	       "a GPU context on the stand-in driver");
	expect(fc.primary_refs() == 1, "it retains the primary context");
	expect(blk_context_create(BLK_BACKEND_AUTO, 0, &actx) == BLK_SUCCESS && blk_context_backend(actx) == BLK_BACKEND_GPU,
	       "AUTO prefers the GPU");
	blk_context_destroy(actx);
	expect(fc.primary_refs() == 1, "destroying a context releases its primary context");
	expect(strcmp(blk_context_printed(ctx), "") == 0, "blk_context_printed is empty on a GPU");

	/* ---- memory */
	enum { N = 1000 };
	float x[N], y[N], out[N];
	for (int i = 0; i < N; i++)
		x[i] = (float)i, y[i] = 0.5f * (float)i, out[i] = -1.0f;
	blk_devptr dx = 0, dy = 0, dout = 0;
	expect(blk_malloc(ctx, sizeof x, &dx) == BLK_SUCCESS && blk_malloc(ctx, sizeof y, &dy) == BLK_SUCCESS &&
	           blk_malloc(ctx, sizeof out, &dout) == BLK_SUCCESS && fc.allocs_live() == 3, "blk_malloc: cuMemAlloc_v2");
	blk_copy_from_device(ctx, out, dout, sizeof out);
	int nonzero = 0;
	for (int i = 0; i < N; i++)
		nonzero += out[i] != 0.0f;
	expect(nonzero == 0, "memory from blk_malloc is zero-filled (the stand-in's is not)");
	float back[N];
	expect(blk_copy_to_device(ctx, dx, x, sizeof x) == BLK_SUCCESS && blk_copy_to_device(ctx, dy, y, sizeof y) == BLK_SUCCESS &&
	           blk_copy_from_device(ctx, back, dx, sizeof back) == BLK_SUCCESS && memcmp(back, x, sizeof x) == 0,
	       "copies to and from the device");
	expect(blk_copy_to_device(ctx, dx + 4, x, sizeof x) == BLK_ERROR_INVALID_ARGUMENT && has("is not inside memory"),
	       "a copy past the end of a buffer is refused before the driver sees it");
	blk_devptr big;
	fc.fail("cuMemAlloc_v2", 2, 1, NULL);
	expect(blk_malloc(ctx, 4096, &big) == BLK_ERROR_OUT_OF_MEMORY &&
	           has("blk_malloc: cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory) (4096 bytes)"),
	       "out of device memory: BLK_ERROR_OUT_OF_MEMORY, the call and the error named");
	fc.set("names_off", 1);
	fc.fail("cuMemAlloc_v2", 2, 1, NULL);
	expect(blk_malloc(ctx, 4096, &big) == BLK_ERROR_OUT_OF_MEMORY &&
	           has("cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"),
	       "... named from libblk's table when the driver cannot name it");
	fc.set("names_off", 0);
	fc.fail("cuMemsetD8_v2", 1, 1, NULL);
	expect(blk_malloc(ctx, 4096, &big) == BLK_ERROR_LAUNCH && has("cuMemsetD8_v2 failed: CUDA_ERROR_INVALID_VALUE") &&
	           fc.allocs_live() == 3, "a failed zero fill frees what it allocated");
	expect(blk_malloc(ctx, 256, &big) == BLK_SUCCESS && blk_free(ctx, big) == BLK_SUCCESS && fc.allocs_live() == 3,
	       "blk_free: cuMemFree_v2");
	expect(blk_free(ctx, big) == BLK_ERROR_NOT_FOUND, "a second free is refused");

	/* ---- launches */
	blk_module *m = NULL;
	expect(blk_module_load_source(ctx, "fake.tile", source, strlen(source), NULL, &m) == BLK_SUCCESS, "module");
	blk_kernel *va = kernel(m, "vector_add");
	blk_arg args[4] = {blk_arg_ptr(dx), blk_arg_ptr(dy), blk_arg_ptr(dout), blk_arg_int(N)};
	int before = fc.launches();
	blk_status st = blk_launch(va, args, 4, NULL);
	FakeLaunch l = fake_last(&fc);
	expect(st == BLK_SUCCESS && fc.launches() == before + 1 && strcmp(l.name, "vector_add") == 0,
	       "vector_add compiles, loads and launches");
	expect(l.grid[0] == 8 && l.grid[1] == 1 && l.grid[2] == 1, "grid (cdiv(1000, 128), 1, 1) from the grid clause");
	expect(l.block[0] == 128 && l.block[1] == 1 && l.block[2] == 1, "block 32 * num_warps (4) threads along x");
	expect(l.stream == NULL, "the default stream");
	expect(l.n_params == 4 && param_is(&l, 0, 8, dx) && param_is(&l, 1, 8, dy) && param_is(&l, 2, 8, dout) &&
	           param_is(&l, 3, 4, N), "arguments: three 8-byte pointers and a 4-byte i32, in order");
	expect(fc.modules_live() == 1, "one module loaded");
	expect(blk_launch(va, args, 4, NULL) == BLK_SUCCESS && fc.launches() == before + 2 && fc.modules_live() == 1,
	       "a second launch reuses the loaded variant");
	args[3] = blk_arg_int(1900);
	expect(blk_launch(va, args, 4, NULL) == BLK_SUCCESS && fake_last(&fc).grid[0] == 15 && fc.modules_live() == 1,
	       "a new n: the grid clause is evaluated again (15)");
	l = fake_last(&fc);
	expect(param_is(&l, 3, 4, 1900), "... and n is 1900");
	args[3] = blk_arg_int(2048);
	expect(blk_launch(va, args, 4, NULL) == BLK_SUCCESS && fake_last(&fc).grid[0] == 16 && fc.modules_live() == 2,
	       "n = 2048, a multiple of 16: a variant specialized for it");
	expect(blk_launch(va, args, 4, NULL) == BLK_SUCCESS && fc.modules_live() == 2, "... used again");
	args[3] = blk_arg_int(N);
	expect(blk_launch(va, args, 4, NULL) == BLK_SUCCESS && fake_last(&fc).grid[0] == 8 && fc.modules_live() == 2,
	       "back to 1000: 8 again, the first variant");
	blk_arg odd[4] = {blk_arg_ptr(dx + 4), blk_arg_ptr(dy), blk_arg_ptr(dout), blk_arg_int(N - 1)};
	st = blk_launch(va, odd, 4, NULL);
	l = fake_last(&fc);
	expect(st == BLK_SUCCESS && fc.modules_live() == 3 && param_is(&l, 0, 8, dx + 4),
	       "a pointer that is not 16-byte aligned: another variant");
	blk_launch_options og = {.grid = {3, 2, 0}};
	expect(blk_launch(va, args, 4, &og) == BLK_SUCCESS && fake_last(&fc).grid[0] == 3 && fake_last(&fc).grid[1] == 2 &&
	           fake_last(&fc).grid[2] == 1, "an explicit grid (3, 2, 0 -> 1)");
	before = fc.launches();
	args[3] = blk_arg_int(0);
	expect(blk_launch(va, args, 4, NULL) == BLK_SUCCESS && fc.launches() == before,
	       "a grid of 0 programs launches nothing");
	args[3] = blk_arg_int(N);
	blk_const b64 = {.name = "BLOCK", .i = 64};
	blk_launch_options o64 = {.consts = &b64, .n_consts = 1};
	int mods = fc.modules_live();
	expect(blk_launch(va, args, 4, &o64) == BLK_SUCCESS && fake_last(&fc).grid[0] == 16 && fc.modules_live() == mods + 1,
	       "BLOCK = 64: another variant, its own module, grid 16");
	expect(blk_launch(va, args, 4, NULL) == BLK_SUCCESS && fake_last(&fc).grid[0] == 8 && fc.modules_live() == mods + 1,
	       "the first variant again");
	expect(blk_launch(va, args, 4, &o64) == BLK_SUCCESS && fake_last(&fc).grid[0] == 16 && fc.modules_live() == mods + 1,
	       "and the BLOCK = 64 one, still loaded");
	blk_launch_options w8 = {.num_warps = 8};
	expect(blk_launch(va, args, 4, &w8) == BLK_SUCCESS && fake_last(&fc).block[0] == 256, "num_warps 8: 256 threads");
	blk_launch_options w64 = {.num_warps = 64};
	expect(blk_launch(va, args, 4, &w64) == BLK_ERROR_SOURCE &&
	           has("the option num_warps is a power of two in 1..32, found 64"),
	       "num_warps 64 (2048 threads) is refused, naming the range");
	blk_launch_options wneg = {.num_warps = -4}, sneg = {.num_stages = -1};
	blk_const huge = {.name = "num_warps", .i = 1 << 30};
	blk_launch_options whuge = {.consts = &huge, .n_consts = 1};
	expect(blk_launch(va, args, 4, &wneg) == BLK_ERROR_SOURCE && has("num_warps is a power of two in 1..32, found -4") &&
	           blk_launch(va, args, 4, &sneg) == BLK_ERROR_SOURCE && has("num_stages is an integer in 1..64, found -1") &&
	           blk_launch(va, args, 4, &whuge) == BLK_ERROR_SOURCE && has("found 1073741824"),
	       "a negative num_warps or num_stages, a const num_warps of 2^30: refused, not the default");
	blk_launch_options tneg = {.threads = -2};
	expect(blk_launch(va, args, 4, &tneg) == BLK_ERROR_INVALID_ARGUMENT && has("opt->threads is -2"),
	       "a negative count of threads is refused");
	blk_const twice[2] = {{.name = "BLOCK", .i = 64}, {.name = "BLOCK", .i = 128}};
	blk_launch_options otwice = {.consts = twice, .n_consts = 2};
	expect(blk_launch(va, args, 4, &otwice) == BLK_ERROR_SOURCE && has("const 'BLOCK' given twice"),
	       "a const given twice is refused (not the first one silently)");
	blk_launch_options ostream = {.stream = (void *)0x5150};
	expect(blk_launch(va, args, 4, &ostream) == BLK_SUCCESS && fake_last(&fc).stream == (void *)0x5150, "the launch's stream");
	blk_launch_options wide = {.grid = {1, 70000, 1}};
	before = fc.launches();
	expect(blk_launch(va, args, 4, &wide) == BLK_ERROR_INVALID_ARGUMENT &&
	           has("the grid (1, 70000, 1) of 'vector_add' is larger than the device allows (2147483647, 65535, 65535)") &&
	           fc.launches() == before, "a grid past the device's limits is refused");

	/* every scalar type in its PTX size and encoding */
	blk_devptr dl;
	blk_malloc(ctx, 8, &dl);
	blk_arg sargs[11] = {blk_arg_ptr(dl),      blk_arg_int(-3),    blk_arg_int(-300),    blk_arg_int(4000000000LL),
	                     blk_arg_int(-5),      blk_arg_float(0.25), blk_arg_float(-1.5), blk_arg_float(1.5),
	                     blk_arg_float(-2.0), blk_arg_int(1),     blk_arg_int(200)};
	st = blk_launch(kernel(m, "scalars"), sargs, 11, &(blk_launch_options){.grid = {1, 1, 1}});
	l = fake_last(&fc);
	expect(st == BLK_SUCCESS && l.n_params == 11, "a kernel with a parameter of each scalar type");
	char what[256];
	snprintf(what, sizeof what, "PTX parameter sizes %d %d %d %d %d %d %d %d %d %d %d", l.sizes[0], l.sizes[1],
	         l.sizes[2], l.sizes[3], l.sizes[4], l.sizes[5], l.sizes[6], l.sizes[7], l.sizes[8], l.sizes[9],
	         l.sizes[10]);
	expect(l.sizes[0] == 8 && l.sizes[4] == 8 && l.sizes[5] == 4 && l.sizes[6] == 8 && l.sizes[7] == 2 &&
	           l.sizes[8] == 2, what);
	expect(param_is(&l, 1, l.sizes[1], (uint64_t)(int64_t)-3), "i8 -3, sign-extended to its PTX size");
	expect(param_is(&l, 2, l.sizes[2], (uint64_t)(int64_t)-300), "i16 -300");
	expect(param_is(&l, 3, 4, 4000000000u), "u32 4000000000");
	expect(param_is(&l, 4, 8, (uint64_t)(int64_t)-5), "i64 -5");
	expect(param_is(&l, 5, 4, 0x3E800000u), "f32 0.25");
	expect(param_is(&l, 6, 8, 0xBFF8000000000000ull), "f64 -1.5");
	expect(param_is(&l, 7, 2, 0x3E00u), "f16 1.5 (its 16 bits)");
	expect(param_is(&l, 8, 2, 0xC000u), "bf16 -2.0 (its 16 bits)");
	expect(param_is(&l, 9, l.sizes[9], 1), "i1 true");
	expect(param_is(&l, 10, l.sizes[10], 200), "u8 200");

	/* shared memory */
	blk_devptr dbig, dbig2;
	blk_malloc(ctx, 128 * 128 * 4, &dbig);
	blk_malloc(ctx, 128 * 128 * 4, &dbig2);
	blk_arg rargs[2] = {blk_arg_ptr(dbig), blk_arg_ptr(dbig2)};
	st = blk_launch(kernel(m, "row_sum"), rargs, 2, NULL);
	l = fake_last(&fc);
	snprintf(what, sizeof what, "a reduction across warps launches with its shared memory (%u bytes)", l.smem);
	expect(st == BLK_SUCCESS && strcmp(l.name, "row_sum") == 0 && l.smem > 0 && l.smem <= 48 * 1024 &&
	           l.max_dynamic_smem == 0, what);
	blk_launch_options rw8 = {.num_warps = 8};
	expect(blk_launch(kernel(m, "row_sum"), rargs, 2, &rw8) == BLK_SUCCESS && fake_last(&fc).block[0] == 256 &&
	           blk_launch(kernel(m, "row_sum"), rargs, 2, NULL) == BLK_SUCCESS && fake_last(&fc).block[0] == 128 &&
	           blk_launch(kernel(m, "row_sum"), rargs, 2, &rw8) == BLK_SUCCESS && fake_last(&fc).block[0] == 256,
	       "num_warps 8, then the default (4), then 8: each gets its own variant");
	st = blk_launch(kernel(m, "big"), rargs, 2, NULL);
	l = fake_last(&fc);
	unsigned big_smem = l.smem;
	snprintf(what, sizeof what,
	         "a transpose of a 128 x 128 f32 cumsum needs %u bytes: over 48 KiB, set as the function's maximum",
	         l.smem);
	expect(st == BLK_SUCCESS && strcmp(l.name, "big") == 0 && l.smem > 48 * 1024 && l.max_dynamic_smem == (int)l.smem,
	       what);
	fc.set("smem_optin", 40000);
	blk_context *small = NULL;
	blk_module *ms = NULL;
	blk_context_create(BLK_BACKEND_GPU, 0, &small);
	blk_module_load_source(small, "fake.tile", source, strlen(source), NULL, &ms);
	fc.set("smem_optin", 232448);
	blk_devptr s1, s2;
	blk_malloc(small, 128 * 128 * 4, &s1);
	blk_malloc(small, 128 * 128 * 4, &s2);
	blk_arg sm_args[2] = {blk_arg_ptr(s1), blk_arg_ptr(s2)};
	snprintf(what, sizeof what, "kernel 'big' needs %u bytes of shared memory; the device allows 40000", big_smem);
	expect(blk_launch(kernel(ms, "big"), sm_args, 2, NULL) == BLK_ERROR_LAUNCH && has(what),
	       "more shared memory than the device allows is refused, with both numbers");

	/* register spills: the JIT's verbose log read, a warning kept, nothing printed */
	expect(strcmp(blk_context_warnings(ctx), "") == 0, "no warnings before a kernel spills");
	fc.set("spill_bytes", 2048);
	blk_launch_options rw2 = {.num_warps = 2};
	blk_compile_info ci;
	st = blk_kernel_compile(kernel(m, "row_sum"), rargs, 2, &rw2, &ci);
	fc.set("spill_bytes", 0);
	const char *spill_text = "warning: kernel 'row_sum' spills registers for sm_90a: 2048 bytes of spill stores and "
	                         "2048 bytes of spill loads a thread; a smaller block or more warps (num_warps) keeps its "
	                         "values in registers\n";
	expect(st == BLK_SUCCESS && ci.spill_bytes == 2048 && ci.warnings && strcmp(ci.warnings, spill_text) == 0,
	       "a variant that spills: blk_compile_info says the bytes and the warning");
	expect(st == BLK_SUCCESS && ci.registers == FAKE_CUDA_REGS,
	       "blk_compile_info.registers is the loaded function's (cuFuncGetAttribute NUM_REGS)");
	expect(strcmp(blk_context_warnings(ctx), spill_text) == 0 && strcmp(blk_context_warnings(ctx), "") == 0,
	       "blk_context_warnings gives it once, then \"\"");
	blk_launch_options rw1 = {.num_warps = 1};
	expect(blk_kernel_compile(kernel(m, "row_sum"), rargs, 2, &rw1, &ci) == BLK_SUCCESS && ci.spill_bytes == 0 &&
	           ci.warnings && strcmp(ci.warnings, "") == 0 && strcmp(blk_context_warnings(ctx), "") == 0,
	       "a variant that does not spill: no warning");

	/* a block past a thread's registers: compiled (ptxas spills it), and the
	 * compiler's warning naming the block comes with the variant and the
	 * context's warnings, before the JIT's */
	const char *big_src = "kernel tbig(x: *f32, y: *f32) {\n"
	                      "    let r = arange(0, 256);\n"
	                      "    store(y + r[:, None] * 256 + r[None, :], trans(load(x + r[:, None] * 256 + r[None, :])));\n"
	                      "}\n";
	blk_module *mbig = NULL;
	blk_launch_options w1 = {.num_warps = 1};
	st = blk_module_load_source(ctx, "big.tile", big_src, strlen(big_src), NULL, &mbig);
	if (st == BLK_SUCCESS)
		st = blk_kernel_compile(kernel(mbig, "tbig"), rargs, 2, &w1, &ci);
	const char *big_text = "big.tile:3:52: warning: kernel 'tbig': this block (f32[256, 256], from load) needs 2048 "
	                       "registers a thread on 1 warp (65536 elements over 32 threads); a thread has 255: it lives "
	                       "in local memory (about 8 KiB a thread, 256 KiB a program, spilled by ptxas)";
	expect(st == BLK_SUCCESS && ci.warnings && strncmp(ci.warnings, big_text, strlen(big_text)) == 0 &&
	           strncmp(blk_context_warnings(ctx), big_text, strlen(big_text)) == 0,
	       "a block past the registers: compiled, with the compiler's warning naming the block and its cost");
	if (ci.warnings && strncmp(ci.warnings, big_text, strlen(big_text)))
		printf("     warnings: %s\n", ci.warnings);
	blk_module_destroy(mbig);

	/* JIT and launch errors */
	blk_const b32 = {.name = "BLOCK", .i = 32};
	blk_launch_options o32 = {.consts = &b32, .n_consts = 1};
	fc.fail("cuModuleLoadDataEx", 218, 1, "ptxas application ptx input, line 12; error   : Unknown symbol 'x'\n");
	st = blk_launch(va, args, 4, &o32);
	expect(st == BLK_ERROR_LAUNCH &&
	           has("blk_launch: kernel 'vector_add' for sm_90a: cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX "
	               "(a PTX JIT compilation failed)\nptxas application ptx input, line 12; error   : Unknown symbol 'x'"),
	       "a JIT error names the kernel, the target, the call, the error and gives the driver's log");
	expect(blk_launch(va, args, 4, &o32) == BLK_SUCCESS && fake_last(&fc).grid[0] == 32, "the next launch compiles it again");
	fc.fail("cuLaunchKernel", 701, 1, NULL);
	expect(blk_launch(va, args, 4, NULL) == BLK_ERROR_LAUNCH &&
	           has("blk_launch: kernel 'vector_add': cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES "
	               "(too many resources requested for launch)"), "a failed cuLaunchKernel names the kernel and the error");
	expect(blk_launch(va, args, 4, NULL) == BLK_SUCCESS, "and the next launch works");

	/* faults */
	fc.fail("kernel", 700, 1, NULL);
	expect(blk_launch(va, args, 4, NULL) == BLK_SUCCESS, "a kernel that faults: the launch itself succeeds (asynchronous)");
	expect(blk_copy_from_device(ctx, out, dout, sizeof out) == BLK_ERROR_LAUNCH &&
	           has("blk_copy_from_device: cuMemcpyDtoH_v2 failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
	               "access was encountered); a kernel faulted") && has("BLK_DEBUG=1"),
	       "the next copy reports the fault, that the context is lost, and BLK_DEBUG");
	fc.set("sticky", 0);
	setenv("BLK_DEBUG", "1", 1);
	blk_context *dctx = NULL;
	blk_module *dm = NULL;
	blk_context_create(BLK_BACKEND_GPU, 0, &dctx);
	unsetenv("BLK_DEBUG");
	blk_module_load_source(dctx, "fake.tile", source, strlen(source), NULL, &dm);
	blk_devptr d1, d2, d3;
	blk_malloc(dctx, sizeof x, &d1);
	blk_malloc(dctx, sizeof x, &d2);
	blk_malloc(dctx, sizeof x, &d3);
	blk_arg dargs[4] = {blk_arg_ptr(d1), blk_arg_ptr(d2), blk_arg_ptr(d3), blk_arg_int(N)};
	fc.fail("kernel", 710, 1, NULL);
	expect(blk_launch(kernel(dm, "vector_add"), dargs, 4, NULL) == BLK_ERROR_LAUNCH &&
	           has("blk_launch: kernel 'vector_add' failed (grid 8, 1, 1): cuStreamSynchronize failed: "
	               "CUDA_ERROR_ASSERT (device-side assert triggered)"),
	       "BLK_DEBUG=1: the launch synchronizes and names the kernel that faulted");
	fc.set("sticky", 0);

	/* several threads, one kernel */
	enum { THREADS = 4, EACH = 250 };
	pthread_t t[THREADS];
	Worker w[THREADS];
	before = fc.launches();
	for (int i = 0; i < THREADS; i++) {
		w[i] = (Worker){va, args, EACH, 0};
		pthread_create(&t[i], NULL, worker, &w[i]);
	}
	int errors = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		errors += w[i].errors;
	}
	expect(errors == 0 && fc.launches() == before + THREADS * EACH,
	       "4 threads x 250 launches of one kernel (each thread makes the context current)");

	/* teardown */
	blk_module_destroy(ms);
	blk_context_destroy(small);
	blk_module_destroy(dm);
	blk_context_destroy(dctx);
	blk_module_destroy(m);
	expect(fc.modules_live() == 0, "destroying the modules unloads every variant");
	blk_module *orphan = NULL;
	blk_module_load_source(ctx, "fake.tile", source, strlen(source), NULL, &orphan);
	args[3] = blk_arg_int(N);
	blk_launch(kernel(orphan, "vector_add"), args, 4, NULL);
	expect(fc.modules_live() == 1, "a module on a context");
	blk_context_destroy(ctx);
	expect(fc.modules_live() == 0 && fc.allocs_live() == 0 && fc.primary_refs() == 0,
	       "destroying its context first unloads it, frees the memory, releases the primary context");
	expect(blk_launch(kernel(orphan, "vector_add"), args, 4, NULL) == BLK_ERROR_INVALID_ARGUMENT &&
	           has("the context of kernel 'vector_add' was destroyed"), "launching from it then is an error, not a crash");
	blk_module_destroy(orphan);

	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
