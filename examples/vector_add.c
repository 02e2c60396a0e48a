/* vector_add.c: the smallest complete blk host program.
 *
 *   build/examples/vector_add [path/to/vector_add.tile]
 *
 * It runs examples/vector_add.tile (out = x + y) on whatever device the
 * context picks: a GPU when there is one, else the interpreter. The steps
 * are the same for every example: context, memory, module, kernel, launch,
 * copy back, check against a reference computed here in C. */
#include "common.h"

int main(int argc, char **argv)
{
	/* 100003 elements: not a multiple of the kernel's BLOCK (1024), so the
	 * last program's mask must stop it at the end of the vectors. */
	enum { N = 100003 };

	/* 1. A context: where kernels run and memory lives. */
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	/* 2. Inputs on the host, then in the context's memory. */
	float *x = xmalloc(N * sizeof(float)), *y = xmalloc(N * sizeof(float)), *out = xmalloc(N * sizeof(float));
	rng r = {1};
	for (int i = 0; i < N; i++) {
		x[i] = rng_uniform(&r, -1, 1);
		y[i] = rng_uniform(&r, -1, 1);
	}
	blk_devptr dx, dy, dout;
	CHECK(blk_malloc(ctx, N * sizeof(float), &dx));
	CHECK(blk_malloc(ctx, N * sizeof(float), &dy));
	CHECK(blk_malloc(ctx, N * sizeof(float), &dout));
	CHECK(blk_copy_to_device(ctx, dx, x, N * sizeof(float)));
	CHECK(blk_copy_to_device(ctx, dy, y, N * sizeof(float)));

	/* 3. The module (the .tile file, compiled on first launch) and its kernel. */
	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "vector_add.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "vector_add", &kernel));

	/* 4. Launch. Arguments are the kernel's runtime parameters in order
	 * (x, y, out, n); BLOCK is const and keeps its default. With no grid
	 * given, the kernel's grid(cdiv(n, BLOCK)) clause sets it. */
	blk_arg args[] = {blk_arg_ptr(dx), blk_arg_ptr(dy), blk_arg_ptr(dout), blk_arg_int(N)};
	CHECK(blk_launch(kernel, args, 4, NULL));

	/* 5. Results back, and the check. A float sum is one correctly rounded
	 * operation, so the error must be within half an ulp: 2^-24 relative. */
	CHECK(blk_copy_from_device(ctx, out, dout, N * sizeof(float)));
	double *want = xmalloc(N * sizeof(double));
	for (int i = 0; i < N; i++)
		want[i] = (double)x[i] + (double)y[i];
	compare c = compare_start("out", 0x1p-24);
	compare_floats(&c, out, want, N, 1e-30);

	char title[128];
	snprintf(title, sizeof title, "vector_add %d f32 (%s)", N, backend_name(ctx));
	int status = compare_report(title, &c, 1);

	blk_module_destroy(mod);
	blk_context_destroy(ctx); /* frees the context's memory too */
	free(x), free(y), free(out), free(want);
	return status;
}
