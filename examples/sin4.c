/* sin4.c: runs examples/sin4.tile (out = sin(sin(sin(sin(x))))), four
 * functions fused into one pass over memory.
 *
 *   build/examples/sin4 [path/to/sin4.tile]
 *
 * The reference applies sin four times in double. sin never amplifies an
 * error (|sin'| <= 1), so the result is off by the sum of the four sins'
 * errors. How large those are depends on the device: the interpreter's sin
 * is within an ulp, the GPU's is a fast approximation (PTX sin.approx.f32,
 * about 1e-6 absolute). The check is therefore absolute: 1e-5. */
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
	/* Errors measured against max(|want|, 1): absolute, as |want| < 1. */
	compare c = compare_start("out", 1e-5);
	compare_floats(&c, out, want, N, 1.0);

	char title[128];
	snprintf(title, sizeof title, "sin4 %d f32 (%s)", N, backend_name(ctx));
	int status = compare_report(title, &c, 1);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(x), free(out), free(want);
	return status;
}
