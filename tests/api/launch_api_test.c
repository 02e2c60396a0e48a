/* Launching kernels through blk.h on the interpreter backend: memory,
 * arguments, their checks, const variants, grid clauses, errors. */
#include "blk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static const char *vector_add =
	"kernel vector_add(x: *f32, y: *f32, out: *f32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let mask = offs < n;\n"
	"    store(out + offs, load(x + offs, mask = mask) + load(y + offs, mask = mask), mask = mask);\n"
	"}\n"
	"kernel oob(x: *f32, n: i32) {\n"
	"    store(x + arange(0, 16), 1.0);\n"
	"}\n";

static unsigned seed = 12345;
static float frand(void)
{
	seed = seed * 1103515245u + 12345u;
	return (float)((seed >> 8) & 0xFFFF) / 65536.0f * 4.0f - 2.0f;
}

int main(void)
{
	blk_context *ctx;
	expect(blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ctx) == BLK_SUCCESS, "interpreter context");
	expect(blk_context_backend(ctx) == BLK_BACKEND_INTERPRETER, "backend is the interpreter");
	blk_context *gpu = NULL;
	blk_status gs = blk_context_create(BLK_BACKEND_GPU, 0, &gpu);
	/* a GPU context exists where there is a GPU; elsewhere the error says why */
	expect((gs == BLK_ERROR_NO_DEVICE && gpu == NULL && strstr(blk_last_error(), "CUDA") != NULL) ||
	           (gs == BLK_SUCCESS && gpu != NULL),
	       "a GPU context, or BLK_ERROR_NO_DEVICE naming CUDA");
	blk_context_destroy(gpu);

	blk_module *m;
	expect(blk_module_load_source(ctx, "va.tile", vector_add, strlen(vector_add), NULL, &m) == BLK_SUCCESS,
	       "module from source");
	blk_kernel *k, *bad;
	expect(blk_kernel_get(m, NULL, &k) == BLK_ERROR_INVALID_ARGUMENT, "two kernels: a name is needed");
	expect(blk_kernel_get(m, "vector_add", &k) == BLK_SUCCESS, "kernel by name");
	expect(blk_kernel_get(m, "nope", &bad) == BLK_ERROR_NOT_FOUND, "unknown kernel is NOT_FOUND");
	expect(blk_kernel_num_params(k) == 5, "five parameters");
	blk_param_info pi;
	expect(blk_kernel_param(k, 4, &pi) == BLK_SUCCESS && pi.is_const && strcmp(pi.type, "const i32") == 0 &&
	           strcmp(pi.name, "BLOCK") == 0, "parameter info of a const parameter");
	expect(blk_kernel_param(k, 0, &pi) == BLK_SUCCESS && pi.kind == BLK_PARAM_POINTER && pi.elem_bytes == 4,
	       "parameter info of a pointer");

	enum { N = 1000 };
	float x[N], y[N], out[N];
	for (int i = 0; i < N; i++) {
		x[i] = frand();
		y[i] = frand();
	}
	blk_devptr dx = 0, dy = 0, dout = 0;
	expect(blk_malloc(ctx, sizeof x, &dx) == BLK_SUCCESS && blk_malloc(ctx, sizeof y, &dy) == BLK_SUCCESS &&
	           blk_malloc(ctx, sizeof out, &dout) == BLK_SUCCESS, "blk_malloc");
	blk_copy_to_device(ctx, dx, x, sizeof x);
	blk_copy_to_device(ctx, dy, y, sizeof y);
	blk_arg args[4] = {blk_arg_ptr(dx), blk_arg_ptr(dy), blk_arg_ptr(dout), blk_arg_int(N)};
	expect(blk_launch(k, args, 4, NULL) == BLK_SUCCESS, "launch with the grid clause");
	blk_copy_from_device(ctx, out, dout, sizeof out);
	int wrong = 0;
	for (int i = 0; i < N; i++)
		wrong += out[i] != x[i] + y[i];
	expect(wrong == 0, "vector_add matches x + y (1000 elements, BLOCK 128, masked tail)");

	blk_const block64 = {.name = "BLOCK", .i = 64};
	blk_launch_options o64 = {.consts = &block64, .n_consts = 1};
	memset(out, 0, sizeof out);
	blk_copy_to_device(ctx, dout, out, sizeof out);
	expect(blk_launch(k, args, 4, &o64) == BLK_SUCCESS, "launch with BLOCK = 64");
	blk_copy_from_device(ctx, out, dout, sizeof out);
	wrong = 0;
	for (int i = 0; i < N; i++)
		wrong += out[i] != x[i] + y[i];
	expect(wrong == 0, "the BLOCK = 64 variant is right too");

	blk_launch_options small = {.grid = {2, 1, 1}};
	memset(out, 0, sizeof out);
	blk_copy_to_device(ctx, dout, out, sizeof out);
	expect(blk_launch(k, args, 4, &small) == BLK_SUCCESS, "launch with an explicit grid of 2");
	blk_copy_from_device(ctx, out, dout, sizeof out);
	expect(out[255] == x[255] + y[255] && out[256] == 0.0f, "an explicit grid runs only those programs");

	expect(blk_launch(k, args, 3, NULL) == BLK_ERROR_INVALID_ARGUMENT &&
	           strstr(blk_last_error(), "takes 4 arguments") != NULL, "wrong argument count is named");
	blk_arg swapped[4] = {blk_arg_ptr(dx), blk_arg_ptr(dy), blk_arg_int(7), blk_arg_int(N)};
	expect(blk_launch(k, swapped, 4, NULL) == BLK_ERROR_INVALID_ARGUMENT &&
	           strstr(blk_last_error(), "argument 3 ('out: *f32')") != NULL, "wrong argument kind is named");
	blk_arg null_arg[4] = {blk_arg_ptr(0), blk_arg_ptr(dy), blk_arg_ptr(dout), blk_arg_int(N)};
	expect(blk_launch(k, null_arg, 4, NULL) == BLK_ERROR_INVALID_ARGUMENT &&
	           strstr(blk_last_error(), "null pointer") != NULL, "a null pointer is refused");
	blk_arg big[4] = {blk_arg_ptr(dx), blk_arg_ptr(dy), blk_arg_ptr(dout), blk_arg_int(1LL << 40)};
	expect(blk_launch(k, big, 4, NULL) == BLK_ERROR_INVALID_ARGUMENT && strstr(blk_last_error(), "out of range"),
	       "an i32 argument out of range is refused");
	blk_const bad_block = {.name = "BLOCK", .i = 100};
	blk_launch_options ob = {.consts = &bad_block, .n_consts = 1};
	expect(blk_launch(k, args, 4, &ob) == BLK_ERROR_SOURCE && strstr(blk_last_error(), "power of two"),
	       "a const value that does not compile is a source error");

	blk_kernel *ko;
	blk_kernel_get(m, "oob", &ko);
	blk_devptr small_buf;
	blk_malloc(ctx, 8 * sizeof(float), &small_buf);
	blk_arg oargs[2] = {blk_arg_ptr(small_buf), blk_arg_int(8)};
	expect(blk_launch(ko, oargs, 2, NULL) == BLK_ERROR_INVALID_ARGUMENT && strstr(blk_last_error(), "no grid(...)"),
	       "no grid clause and no grid given is refused");
	blk_launch_options one = {.grid = {1, 1, 1}};
	blk_status os = blk_launch(ko, oargs, 2, &one);
	expect(os == BLK_ERROR_LAUNCH, "an out-of-bounds store fails the launch");
	expect(strstr(blk_last_error(), "va.tile:7:5") != NULL, "the report names the .tile line and column");

	expect(blk_free(ctx, dx) == BLK_SUCCESS && blk_free(ctx, dx) == BLK_ERROR_NOT_FOUND, "free, then double free");
	blk_module_destroy(m);

	blk_module *broken;
	const char *src = "kernel k(x: *f32) { let a = ; }";
	expect(blk_module_load_source(ctx, "broken.tile", src, strlen(src), NULL, &broken) == BLK_ERROR_SOURCE &&
	           strstr(blk_last_error(), "broken.tile:1:29: error: expected expression"),
	       "a source error is reported with its place");
	blk_context_destroy(ctx);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
