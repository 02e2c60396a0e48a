/* sum_many.c: runs examples/sum_many.tile, which sums 37 separately
 * allocated f32 tensors in one launch.
 *
 *   build/examples/sum_many [path/to/sum_many.tile]
 *
 * The kernel takes `ptrs: **f32`, an array of pointers in device memory.
 * A blk_devptr is the address a kernel sees, so the host builds that array
 * from the blk_devptr values of the tensors and copies it over like any
 * other data (8 bytes an entry). */
#include "common.h"

enum { T = 37, MAX_SIZE = 5000 };

int main(int argc, char **argv)
{
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	/* Sizes from 1 to 5000: the first tensor has one element, the last
	 * 5000, the others anything in between; never a multiple of BLOCK
	 * (1024) but by chance. */
	int64_t sizes[T];
	float *data[T];
	blk_devptr tensors[T]; /* each tensor's own allocation */
	rng r = {8};
	for (int t = 0; t < T; t++) {
		sizes[t] = t == 0 ? 1 : t == T - 1 ? MAX_SIZE : rng_int(&r, 1, MAX_SIZE);
		data[t] = xmalloc(sizes[t] * sizeof(float));
		for (int64_t i = 0; i < sizes[t]; i++)
			data[t][i] = rng_uniform(&r, -1, 1);
		CHECK(blk_malloc(ctx, sizes[t] * sizeof(float), &tensors[t]));
		CHECK(blk_copy_to_device(ctx, tensors[t], data[t], sizes[t] * sizeof(float)));
	}

	/* The pointer array and the size array, in device memory. */
	blk_devptr dptrs, dsizes, dout;
	CHECK(blk_malloc(ctx, sizeof tensors, &dptrs));
	CHECK(blk_malloc(ctx, sizeof sizes, &dsizes));
	CHECK(blk_malloc(ctx, T * sizeof(float), &dout));
	CHECK(blk_copy_to_device(ctx, dptrs, tensors, sizeof tensors));
	CHECK(blk_copy_to_device(ctx, dsizes, sizes, sizeof sizes));

	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "sum_many.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "sum_many", &kernel));

	/* sum_many(ptrs, sizes, out, n_tensors); grid(n_tensors). */
	blk_arg args[] = {blk_arg_ptr(dptrs), blk_arg_ptr(dsizes), blk_arg_ptr(dout), blk_arg_int(T)};
	CHECK(blk_launch(kernel, args, 4, NULL));
	float out[T];
	CHECK(blk_copy_from_device(ctx, out, dout, sizeof out));

	/* A float sum of n terms errs by at most about n * 2^-24 * sum |x_i|;
	 * the kernel adds in 1024 lanes and then across them, so its error is
	 * far smaller: 1e-5 measured against sum |x_i| (positive and negative
	 * terms cancel, so the sum itself can be near 0). */
	compare c = compare_start("out", 1e-5);
	for (int t = 0; t < T; t++) {
		double s = 0, s_abs = 0;
		for (int64_t i = 0; i < sizes[t]; i++) {
			s += data[t][i];
			s_abs += fabs(data[t][i]);
		}
		compare_one(&c, t, out[t], s, s_abs);
	}

	char title[128];
	snprintf(title, sizeof title, "sum_many %d tensors of 1..%d f32 (%s)", T, MAX_SIZE, backend_name(ctx));
	int status = compare_report(title, &c, 1);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	for (int t = 0; t < T; t++)
		free(data[t]);
	return status;
}
