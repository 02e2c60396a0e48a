/* layernorm.c: runs examples/layernorm.tile, layer normalization of an f16
 * matrix over its rows, with per-row mean and 1/std saved in f32.
 *
 *   build/examples/layernorm [path/to/layernorm.tile]
 *
 * f16 data is passed as raw 16-bit patterns: common.h converts floats to
 * f16 (round to nearest even) and back. The kernel's BLOCK is set at launch
 * time to 256 through blk_launch_options.consts, so each row takes four
 * chunks, the last one masked (1000 = 3 * 256 + 232). */
#include "common.h"

int main(int argc, char **argv)
{
	enum { ROWS = 129, COLS = 1000 };
	const double eps = 1e-5;

	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	/* Inputs: each row has its own offset, so the means are not near 0.
	 * xf, wf, bf hold the exact values of the f16 inputs, for the reference. */
	size_t n = (size_t)ROWS * COLS;
	f16 *x = xmalloc(n * sizeof(f16)), *y = xmalloc(n * sizeof(f16));
	f16 *w = xmalloc(COLS * sizeof(f16)), *b = xmalloc(COLS * sizeof(f16));
	float *xf = xmalloc(n * sizeof(float)), *wf = xmalloc(COLS * sizeof(float)), *bf = xmalloc(COLS * sizeof(float));
	float mean[ROWS], rstd[ROWS];
	rng r = {5};
	for (int i = 0; i < ROWS; i++) {
		float offset = rng_uniform(&r, -3, 3);
		rng_fill_f16(&r, x + (size_t)i * COLS, xf + (size_t)i * COLS, COLS, offset - 2, offset + 2);
	}
	rng_fill_f16(&r, w, wf, COLS, 0.5f, 1.5f);
	rng_fill_f16(&r, b, bf, COLS, -0.5f, 0.5f);

	blk_devptr dx, dy, dw, db, dmean, drstd;
	CHECK(blk_malloc(ctx, n * sizeof(f16), &dx));
	CHECK(blk_malloc(ctx, n * sizeof(f16), &dy));
	CHECK(blk_malloc(ctx, COLS * sizeof(f16), &dw));
	CHECK(blk_malloc(ctx, COLS * sizeof(f16), &db));
	CHECK(blk_malloc(ctx, ROWS * sizeof(float), &dmean));
	CHECK(blk_malloc(ctx, ROWS * sizeof(float), &drstd));
	CHECK(blk_copy_to_device(ctx, dx, x, n * sizeof(f16)));
	CHECK(blk_copy_to_device(ctx, dw, w, COLS * sizeof(f16)));
	CHECK(blk_copy_to_device(ctx, db, b, COLS * sizeof(f16)));

	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "layernorm.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "layernorm_fwd", &kernel));

	/* layernorm_fwd(x, y, w, b, mean, rstd, x_row_stride, y_row_stride,
	 * n_rows, n_cols, eps); BLOCK is a const, given by name. The first
	 * launch with a new const value compiles that variant of the kernel. */
	blk_arg args[] = {blk_arg_ptr(dx),      blk_arg_ptr(dy),      blk_arg_ptr(dw),     blk_arg_ptr(db),
	                  blk_arg_ptr(dmean),   blk_arg_ptr(drstd),   blk_arg_int(COLS),   blk_arg_int(COLS),
	                  blk_arg_int(ROWS),    blk_arg_int(COLS),    blk_arg_float(eps)};
	blk_const block = {.name = "BLOCK", .i = 256};
	blk_launch_options opt = {.consts = &block, .n_consts = 1};
	CHECK(blk_launch(kernel, args, 11, &opt));
	CHECK(blk_copy_from_device(ctx, y, dy, n * sizeof(f16)));
	CHECK(blk_copy_from_device(ctx, mean, dmean, sizeof mean));
	CHECK(blk_copy_from_device(ctx, rstd, drstd, sizeof rstd));

	/* Reference in double from the same f16 inputs. */
	double *want_y = xmalloc(n * sizeof(double)), want_mean[ROWS], want_rstd[ROWS];
	for (int i = 0; i < ROWS; i++) {
		const float *row = xf + (size_t)i * COLS;
		double s = 0, sq = 0;
		for (int j = 0; j < COLS; j++)
			s += row[j];
		double mu = s / COLS;
		for (int j = 0; j < COLS; j++)
			sq += (row[j] - mu) * (row[j] - mu);
		double rs = 1 / sqrt(sq / COLS + eps);
		want_mean[i] = mu;
		want_rstd[i] = rs;
		for (int j = 0; j < COLS; j++)
			want_y[(size_t)i * COLS + j] = (row[j] - mu) * rs * wf[j] + bf[j];
	}

	/* y is rounded to f16 (half an ulp: 2^-11 relative, 2^-12 absolute
	 * below 1), after f32 arithmetic that adds far less: tolerance 1e-3,
	 * relative to max(|y|, 1). mean and rstd are f32 sums of 1000 terms:
	 * 1e-5, the mean measured against the data's scale (1). */
	compare c[3] = {compare_start("y", 1e-3), compare_start("mean", 1e-5), compare_start("rstd", 1e-5)};
	compare_f16s(&c[0], y, want_y, (long)n, 1.0);
	compare_floats(&c[1], mean, want_mean, ROWS, 1.0);
	compare_floats(&c[2], rstd, want_rstd, ROWS, 1e-30);

	char title[128];
	snprintf(title, sizeof title, "layernorm %dx%d f16 (%s)", ROWS, COLS, backend_name(ctx));
	int status = compare_report(title, c, 3);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(x), free(y), free(w), free(b), free(xf), free(wf), free(bf), free(want_y);
	return status;
}
