/* softmax_backward.c: runs examples/softmax_backward.tile, the backward of a
 * row-wise softmax, one program per row.
 *
 *   build/examples/softmax_backward [path/to/softmax_backward.tile]
 *
 * The loss is L = sum_{r,c} wout[r, c] * softmax(x[r, :])[c], so dy = wout,
 * and the kernel gets y = softmax(x) (computed in double, rounded to f32, as
 * the forward would store it). Two references in double:
 *  - the analytic gradient y * (dy - sum(dy * y));
 *  - central finite differences of L, the forward in double, for every
 *    element of x, which checks the formula itself.
 * The kernel is checked against both, and the analytic gradient against the
 * finite differences. The inputs are padded (a row stride of 320 for 300
 * columns) with huge values that would show if the kernel read them. */
#include "common.h"

enum { ROWS = 64, COLS = 300, IN_STRIDE = 320, OUT_STRIDE = COLS };

/* softmax of one row of doubles into y (may be NULL); returns sum wout * y. */
static double row_forward(const double *x, const double *wout, double *y)
{
	double m = -INFINITY, s = 0, e[COLS], loss = 0;
	for (int c = 0; c < COLS; c++)
		m = fmax(m, x[c]);
	for (int c = 0; c < COLS; c++)
		s += e[c] = exp(x[c] - m);
	for (int c = 0; c < COLS; c++) {
		if (y)
			y[c] = e[c] / s;
		loss += wout[c] * (e[c] / s);
	}
	return loss;
}

static double rms(const double *v, long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += v[i] * v[i];
	return sqrt(s / n);
}

int main(int argc, char **argv)
{
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	size_t in_elems = (size_t)ROWS * IN_STRIDE, n = (size_t)ROWS * COLS;
	float *y = xmalloc(in_elems * sizeof(float)), *dy = xmalloc(in_elems * sizeof(float));
	float *dx = xmalloc(n * sizeof(float));
	double *xd = xmalloc(n * sizeof(double)), *wout = xmalloc(n * sizeof(double)), *yd = xmalloc(n * sizeof(double));
	rng r = {15};
	for (size_t i = 0; i < n; i++) {
		xd[i] = rng_uniform(&r, -4, 4);
		wout[i] = rng_uniform(&r, -1, 1); /* exact in f32: the kernel's dy is wout */
	}
	for (int i = 0; i < ROWS; i++) {
		row_forward(xd + (size_t)i * COLS, wout + (size_t)i * COLS, yd + (size_t)i * COLS);
		for (int c = 0; c < IN_STRIDE; c++) {
			size_t at = (size_t)i * IN_STRIDE + c, k = (size_t)i * COLS + c;
			y[at] = c < COLS ? (float)yd[k] : 1e30f;
			dy[at] = c < COLS ? (float)wout[k] : 1e30f;
		}
	}

	blk_devptr d_y, d_dy, d_dx;
	CHECK(blk_malloc(ctx, in_elems * sizeof(float), &d_y));
	CHECK(blk_malloc(ctx, in_elems * sizeof(float), &d_dy));
	CHECK(blk_malloc(ctx, n * sizeof(float), &d_dx));
	CHECK(blk_copy_to_device(ctx, d_y, y, in_elems * sizeof(float)));
	CHECK(blk_copy_to_device(ctx, d_dy, dy, in_elems * sizeof(float)));

	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "softmax_backward.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "softmax_bwd", &kernel));

	/* softmax_bwd(y, dy, dx, in_row_stride, out_row_stride, n_rows, n_cols),
	 * BLOCK 512: 212 lanes of each row masked off. */
	blk_arg args[] = {blk_arg_ptr(d_y),         blk_arg_ptr(d_dy), blk_arg_ptr(d_dx),  blk_arg_int(IN_STRIDE),
	                  blk_arg_int(OUT_STRIDE), blk_arg_int(ROWS), blk_arg_int(COLS)};
	blk_const block = {.name = "BLOCK", .i = 512};
	blk_launch_options opt = {.consts = &block, .n_consts = 1};
	CHECK(blk_launch(kernel, args, 7, &opt));
	CHECK(blk_copy_from_device(ctx, dx, d_dx, n * sizeof(float)));

	/* The analytic gradient from the exact softmax, and finite differences
	 * of each row's loss (x[r, c] moves row r's loss only). */
	double *want = xmalloc(n * sizeof(double)), *fd = xmalloc(n * sizeof(double));
	for (int i = 0; i < ROWS; i++) {
		double *xr = xd + (size_t)i * COLS;
		const double *yr = yd + (size_t)i * COLS, *gr = wout + (size_t)i * COLS;
		double s = 0;
		for (int c = 0; c < COLS; c++)
			s += gr[c] * yr[c];
		for (int c = 0; c < COLS; c++) {
			want[(size_t)i * COLS + c] = yr[c] * (gr[c] - s);
			double keep = xr[c], h = 1e-5;
			xr[c] = keep + h;
			double up = row_forward(xr, gr, NULL);
			xr[c] = keep - h;
			double down = row_forward(xr, gr, NULL);
			xr[c] = keep;
			fd[(size_t)i * COLS + c] = (up - down) / (2 * h);
		}
	}

	/* Tolerances, relative to max(|want|, the gradient's RMS): the finite
	 * differences are within about 1e-9 of the derivative, so the analytic
	 * gradient must match them to 1e-6; the kernel works in f32 from y
	 * rounded to f32, and s - dy cancels: 1e-5. */
	double scale = rms(want, (long)n);
	compare c[3] = {compare_start("analytic dx vs finite differences", 1e-6), compare_start("dx vs analytic", 1e-5),
	                compare_start("dx vs finite differences", 1e-5)};
	for (size_t i = 0; i < n; i++)
		compare_one(&c[0], (long)i, want[i], fd[i], scale);
	compare_floats(&c[1], dx, want, (long)n, scale);
	compare_floats(&c[2], dx, fd, (long)n, scale);

	char title[128];
	snprintf(title, sizeof title, "softmax_backward %dx%d f32 (%s)", ROWS, COLS, backend_name(ctx));
	int status = compare_report(title, c, 3);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(y), free(dy), free(dx), free(xd), free(wout), free(yd), free(want), free(fd);
	return status;
}
