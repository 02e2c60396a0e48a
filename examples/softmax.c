/* softmax.c: runs examples/softmax.tile, a row-wise softmax, one program
 * per row.
 *
 *   build/examples/softmax [path/to/softmax.tile]
 *
 * The input rows are padded (a stride of 800 elements for 781 columns), as
 * when x is a slice of a wider matrix; the output is packed. Row strides
 * are ordinary kernel arguments. */
#include "common.h"

int main(int argc, char **argv)
{
	/* 781 columns: under the kernel's BLOCK (1024), so 243 lanes of each
	 * row are masked off and must not touch the padding. */
	enum { ROWS = 333, COLS = 781, X_STRIDE = 800, OUT_STRIDE = COLS };

	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	/* The padding holds huge values: if the kernel read them they would
	 * show in the result. */
	size_t x_elems = (size_t)ROWS * X_STRIDE, out_elems = (size_t)ROWS * OUT_STRIDE;
	float *x = xmalloc(x_elems * sizeof(float)), *out = xmalloc(out_elems * sizeof(float));
	rng r = {4};
	for (int i = 0; i < ROWS; i++)
		for (int j = 0; j < X_STRIDE; j++)
			x[(size_t)i * X_STRIDE + j] = j < COLS ? rng_uniform(&r, -8, 8) : 1e30f;
	blk_devptr dx, dout;
	CHECK(blk_malloc(ctx, x_elems * sizeof(float), &dx));
	CHECK(blk_malloc(ctx, out_elems * sizeof(float), &dout));
	CHECK(blk_copy_to_device(ctx, dx, x, x_elems * sizeof(float)));

	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "softmax.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "softmax", &kernel));

	/* softmax(x, out, x_row_stride, out_row_stride, n_rows, n_cols); the grid
	 * clause grid(n_rows) gives one program per row. */
	blk_arg args[] = {blk_arg_ptr(dx),          blk_arg_ptr(dout),  blk_arg_int(X_STRIDE),
	                  blk_arg_int(OUT_STRIDE), blk_arg_int(ROWS), blk_arg_int(COLS)};
	CHECK(blk_launch(kernel, args, 6, NULL));
	CHECK(blk_copy_from_device(ctx, out, dout, out_elems * sizeof(float)));

	/* Reference in double, the same formula. Every output is positive and
	 * the float kernel rounds exp, the sum and the division: a few ulps of
	 * relative error, well under 1e-5. */
	double *want = xmalloc(out_elems * sizeof(double));
	for (int i = 0; i < ROWS; i++) {
		const float *row = x + (size_t)i * X_STRIDE;
		double *w = want + (size_t)i * OUT_STRIDE, m = -INFINITY, s = 0;
		for (int j = 0; j < COLS; j++)
			m = fmax(m, row[j]);
		for (int j = 0; j < COLS; j++)
			s += w[j] = exp(row[j] - m);
		for (int j = 0; j < COLS; j++)
			w[j] /= s;
	}
	compare c = compare_start("out", 1e-5);
	compare_floats(&c, out, want, (long)out_elems, 1e-30);

	char title[128];
	snprintf(title, sizeof title, "softmax %dx%d f32 (%s)", ROWS, COLS, backend_name(ctx));
	int status = compare_report(title, &c, 1);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(x), free(out), free(want);
	return status;
}
