/* relu.c: runs examples/relu.tile (out = max(x, 0)) in place.
 *
 *   build/examples/relu [path/to/relu.tile]
 *
 * The kernel allows out to be x itself; here it is, so one buffer is read
 * and overwritten. The result must be exact. */
#include "common.h"

int main(int argc, char **argv)
{
	enum { N = 100003 }; /* not a multiple of BLOCK (1024): the mask matters */

	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	float *x = xmalloc(N * sizeof(float)), *out = xmalloc(N * sizeof(float));
	rng r = {2};
	for (int i = 0; i < N; i++)
		x[i] = rng_uniform(&r, -1, 1);
	blk_devptr dx;
	CHECK(blk_malloc(ctx, N * sizeof(float), &dx));
	CHECK(blk_copy_to_device(ctx, dx, x, N * sizeof(float)));

	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "relu.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "relu", &kernel));

	/* relu(x, out, n): the same pointer twice, for an in-place update. */
	blk_arg args[] = {blk_arg_ptr(dx), blk_arg_ptr(dx), blk_arg_int(N)};
	CHECK(blk_launch(kernel, args, 3, NULL));
	CHECK(blk_copy_from_device(ctx, out, dx, N * sizeof(float)));

	/* max(x, 0) involves no rounding: tolerance 0. */
	double *want = xmalloc(N * sizeof(double));
	for (int i = 0; i < N; i++)
		want[i] = x[i] > 0 ? x[i] : 0.0;
	compare c = compare_start("out", 0);
	compare_floats(&c, out, want, N, 1e-30);

	char title[128];
	snprintf(title, sizeof title, "relu %d f32 in place (%s)", N, backend_name(ctx));
	int status = compare_report(title, &c, 1);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(x), free(out), free(want);
	return status;
}
