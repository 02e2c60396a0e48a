/* sin4.c: runs examples/sin4.tile (out = sin(sin(sin(sin(x))))), four
 * functions fused into one pass over memory.
 *
 *   build/examples/sin4 [path/to/sin4.tile]
 *
 * The reference applies sin four times in double. Each float sin is
 * within an ulp or so, and sin never amplifies an error (|sin'| <= 1), so
 * the four errors add up to a few ulps: 1e-6 relative is plenty. */
#include "common.h"

int main(int argc, char **argv)
{
	enum { N = 100003 }; /* not a multiple of BLOCK (1024): the mask matters */

	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	float *x = xmalloc(N * sizeof(float)), *out = xmalloc(N * sizeof(float));
	rng r = {3};
	for (int i = 0; i < N; i++)
		x[i] = rng_uniform(&r, -10, 10);
	blk_devptr dx, dout;
	CHECK(blk_malloc(ctx, N * sizeof(float), &dx));
	CHECK(blk_malloc(ctx, N * sizeof(float), &dout));
	CHECK(blk_copy_to_device(ctx, dx, x, N * sizeof(float)));

	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "sin4.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "sin4", &kernel));

	blk_arg args[] = {blk_arg_ptr(dx), blk_arg_ptr(dout), blk_arg_int(N)};
	CHECK(blk_launch(kernel, args, 3, NULL));
	CHECK(blk_copy_from_device(ctx, out, dout, N * sizeof(float)));

	double *want = xmalloc(N * sizeof(double));
	for (int i = 0; i < N; i++)
		want[i] = sin(sin(sin(sin((double)x[i]))));
	/* Near a zero of sin the output is tiny and its relative error is not
	 * meaningful: errors there are measured against 1e-3. */
	compare c = compare_start("out", 1e-6);
	compare_floats(&c, out, want, N, 1e-3);

	char title[128];
	snprintf(title, sizeof title, "sin4 %d f32 (%s)", N, backend_name(ctx));
	int status = compare_report(title, &c, 1);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(x), free(out), free(want);
	return status;
}
