/* layernorm_backward.c: runs examples/layernorm_backward.tile, the backward
 * pass of layer normalization over the rows of an f16 matrix: dx, and dw, db
 * by a two-stage reduction (per-program partial sums, then a second kernel).
 *
 *   build/examples/layernorm_backward [path/to/layernorm_backward.tile]
 *
 * The loss is L = sum_{r,c} wout[r, c] * y[r, c], y = layernorm(x; w, b), so
 * dy = wout. Two references, both in double from the same f16 inputs:
 *  - the analytic gradient (the formulas of the .tile file's header);
 *  - central finite differences of L, the forward computed in double
 *    (every element of dx, dw and db), which checks the formulas themselves.
 * The kernels are checked against both, and the analytic gradient against
 * the finite differences. Sizes: 77 rows of 300 in a block of 512 (the tail
 * masked), 8 programs (rows 8 apart, 9 or 10 each), partial rows summed 4 at
 * a time in column blocks of 128 (the last one masked). */
#include "common.h"

enum { ROWS = 77, COLS = 300, BLOCK = 512, NPROGS = 8, BLOCK_M = 4, BLOCK_N = 128 };
static const double eps = 1e-5;

/* The forward of one row in double: mean and 1/std of x (the statistics the
 * forward kernel saves), and sum_c wout[c] * y[c]. */
static double row_stats(const double *x, double *mu_out)
{
	double s = 0, sq = 0;
	for (int c = 0; c < COLS; c++)
		s += x[c];
	double mu = s / COLS;
	for (int c = 0; c < COLS; c++)
		sq += (x[c] - mu) * (x[c] - mu);
	*mu_out = mu;
	return 1 / sqrt(sq / COLS + eps);
}

static double row_loss(const double *x, const double *w, const double *b, const double *wout)
{
	double mu, rs = row_stats(x, &mu), loss = 0;
	for (int c = 0; c < COLS; c++)
		loss += wout[c] * ((x[c] - mu) * rs * w[c] + b[c]);
	return loss;
}

static double total_loss(const double *x, const double *w, const double *b, const double *wout)
{
	double loss = 0;
	for (int r = 0; r < ROWS; r++)
		loss += row_loss(x + (size_t)r * COLS, w, b, wout + (size_t)r * COLS);
	return loss;
}

/* dL/dv[i] by central differences, the step relative to v[i]'s size. */
static double central_diff(double *v, long i, double (*loss)(void *), void *env)
{
	double keep = v[i], h = 1e-5 * fmax(1.0, fabs(keep));
	v[i] = keep + h;
	double up = loss(env);
	v[i] = keep - h;
	double down = loss(env);
	v[i] = keep;
	return (up - down) / (2 * h);
}

typedef struct problem {
	double *x, *w, *b, *wout;
	int row; /* for row_env_loss: the row being perturbed */
} problem;

static double row_env_loss(void *p)
{
	problem *q = p;
	size_t off = (size_t)q->row * COLS;
	return row_loss(q->x + off, q->w, q->b, q->wout + off);
}

static double all_env_loss(void *p)
{
	problem *q = p;
	return total_loss(q->x, q->w, q->b, q->wout);
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

	/* Inputs, and their exact values as doubles for the references. Each
	 * row of x has its own offset, so the means are not near 0. */
	size_t n = (size_t)ROWS * COLS;
	f16 *x = xmalloc(n * sizeof(f16)), *dy = xmalloc(n * sizeof(f16)), *dx = xmalloc(n * sizeof(f16));
	f16 *w = xmalloc(COLS * sizeof(f16)), *b = xmalloc(COLS * sizeof(f16));
	f16 *dw = xmalloc(COLS * sizeof(f16)), *db = xmalloc(COLS * sizeof(f16));
	float *xf = xmalloc(n * sizeof(float)), *dyf = xmalloc(n * sizeof(float));
	float wf[COLS], bf[COLS], mean[ROWS], rstd[ROWS];
	rng r = {14};
	for (int i = 0; i < ROWS; i++) {
		float offset = rng_uniform(&r, -3, 3);
		rng_fill_f16(&r, x + (size_t)i * COLS, xf + (size_t)i * COLS, COLS, offset - 2, offset + 2);
	}
	rng_fill_f16(&r, dy, dyf, n, -1, 1);
	rng_fill_f16(&r, w, wf, COLS, 0.5f, 1.5f);
	rng_fill_f16(&r, b, bf, COLS, -0.5f, 0.5f);

	problem p = {xmalloc(n * sizeof(double)), xmalloc(COLS * sizeof(double)), xmalloc(COLS * sizeof(double)),
	             xmalloc(n * sizeof(double)), 0};
	for (size_t i = 0; i < n; i++)
		p.x[i] = xf[i], p.wout[i] = dyf[i];
	for (int c = 0; c < COLS; c++)
		p.w[c] = wf[c], p.b[c] = bf[c];

	/* The forward's saved statistics, as layernorm.tile stores them (f32). */
	double mu_d[ROWS], rs_d[ROWS];
	for (int i = 0; i < ROWS; i++) {
		rs_d[i] = row_stats(p.x + (size_t)i * COLS, &mu_d[i]);
		mean[i] = (float)mu_d[i];
		rstd[i] = (float)rs_d[i];
	}

	blk_devptr d_x, d_dy, d_dx, d_w, d_mean, d_rstd, d_pdw, d_pdb, d_dw, d_db;
	CHECK(blk_malloc(ctx, n * sizeof(f16), &d_x));
	CHECK(blk_malloc(ctx, n * sizeof(f16), &d_dy));
	CHECK(blk_malloc(ctx, n * sizeof(f16), &d_dx));
	CHECK(blk_malloc(ctx, COLS * sizeof(f16), &d_w));
	CHECK(blk_malloc(ctx, ROWS * sizeof(float), &d_mean));
	CHECK(blk_malloc(ctx, ROWS * sizeof(float), &d_rstd));
	CHECK(blk_malloc(ctx, (size_t)NPROGS * COLS * sizeof(float), &d_pdw));
	CHECK(blk_malloc(ctx, (size_t)NPROGS * COLS * sizeof(float), &d_pdb));
	CHECK(blk_malloc(ctx, COLS * sizeof(f16), &d_dw));
	CHECK(blk_malloc(ctx, COLS * sizeof(f16), &d_db));
	CHECK(blk_copy_to_device(ctx, d_x, x, n * sizeof(f16)));
	CHECK(blk_copy_to_device(ctx, d_dy, dy, n * sizeof(f16)));
	CHECK(blk_copy_to_device(ctx, d_w, w, COLS * sizeof(f16)));
	CHECK(blk_copy_to_device(ctx, d_mean, mean, sizeof mean));
	CHECK(blk_copy_to_device(ctx, d_rstd, rstd, sizeof rstd));

	blk_module *mod;
	blk_kernel *k_dx, *k_dwdb;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "layernorm_backward.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "layernorm_bwd_dx", &k_dx));
	CHECK(blk_kernel_get(mod, "layernorm_bwd_dwdb", &k_dwdb));

	/* Stage 1: dx, and each program's partial sums of dw and db. */
	blk_arg a1[] = {blk_arg_ptr(d_dy),   blk_arg_ptr(d_x),    blk_arg_ptr(d_w),   blk_arg_ptr(d_mean),
	                blk_arg_ptr(d_rstd), blk_arg_ptr(d_dx),   blk_arg_ptr(d_pdw), blk_arg_ptr(d_pdb),
	                blk_arg_int(COLS),   blk_arg_int(ROWS),   blk_arg_int(COLS),  blk_arg_int(NPROGS)};
	blk_const c1 = {.name = "BLOCK", .i = BLOCK};
	blk_launch_options o1 = {.consts = &c1, .n_consts = 1};
	CHECK(blk_launch(k_dx, a1, 12, &o1));
	/* Stage 2: the partial rows summed, in a fixed order: deterministic. */
	blk_arg a2[] = {blk_arg_ptr(d_pdw), blk_arg_ptr(d_pdb), blk_arg_ptr(d_dw), blk_arg_ptr(d_db),
	                blk_arg_int(NPROGS), blk_arg_int(COLS)};
	blk_const c2[] = {{.name = "BLOCK_M", .i = BLOCK_M}, {.name = "BLOCK_N", .i = BLOCK_N}};
	blk_launch_options o2 = {.consts = c2, .n_consts = 2};
	CHECK(blk_launch(k_dwdb, a2, 6, &o2));
	CHECK(blk_copy_from_device(ctx, dx, d_dx, n * sizeof(f16)));
	CHECK(blk_copy_from_device(ctx, dw, d_dw, COLS * sizeof(f16)));
	CHECK(blk_copy_from_device(ctx, db, d_db, COLS * sizeof(f16)));

	/* The analytic gradient, in double. */
	double *want_dx = xmalloc(n * sizeof(double)), want_dw[COLS] = {0}, want_db[COLS] = {0};
	for (int i = 0; i < ROWS; i++) {
		const double *xr = p.x + (size_t)i * COLS, *dyr = p.wout + (size_t)i * COLS;
		double s1 = 0, s2 = 0;
		for (int c = 0; c < COLS; c++) {
			double xhat = (xr[c] - mu_d[i]) * rs_d[i], g = p.w[c] * dyr[c];
			s1 += xhat * g;
			s2 += g;
			want_dw[c] += dyr[c] * xhat;
			want_db[c] += dyr[c];
		}
		for (int c = 0; c < COLS; c++) {
			double xhat = (xr[c] - mu_d[i]) * rs_d[i], g = p.w[c] * dyr[c];
			want_dx[(size_t)i * COLS + c] = rs_d[i] * (g - xhat * s1 / COLS - s2 / COLS);
		}
	}

	/* Finite differences of L: dx one row at a time (x[r, c] moves row r's
	 * loss only), dw and db through the whole loss. */
	double *fd_dx = xmalloc(n * sizeof(double)), fd_dw[COLS], fd_db[COLS];
	for (int i = 0; i < ROWS; i++) {
		p.row = i;
		for (int c = 0; c < COLS; c++)
			fd_dx[(size_t)i * COLS + c] = central_diff(p.x, (long)i * COLS + c, row_env_loss, &p);
	}
	for (int c = 0; c < COLS; c++) {
		fd_dw[c] = central_diff(p.w, c, all_env_loss, &p);
		fd_db[c] = central_diff(p.b, c, all_env_loss, &p);
	}

	/* Tolerances. The finite differences are within about 1e-8 of the
	 * derivative (step 1e-5 relative: truncation ~1e-10, rounding of the
	 * loss ~1e-9); the analytic gradient must match them to 1e-6. The
	 * kernels round dx, dw and db to f16 (2^-11 relative) after f32 sums:
	 * 2e-3. Errors are relative to max(|want|, the reference's RMS), so
	 * that elements near 0 after cancellation are measured against the
	 * gradient's scale. */
	double s_dx = rms(want_dx, (long)n), s_dw = rms(want_dw, COLS), s_db = rms(want_db, COLS);
	compare c[9] = {compare_start("analytic dx vs finite differences", 1e-6),
	                compare_start("analytic dw vs finite differences", 1e-6),
	                compare_start("analytic db vs finite differences", 1e-6),
	                compare_start("dx vs analytic", 2e-3),
	                compare_start("dw vs analytic", 2e-3),
	                compare_start("db vs analytic", 2e-3),
	                compare_start("dx vs finite differences", 2e-3),
	                compare_start("dw vs finite differences", 2e-3),
	                compare_start("db vs finite differences", 2e-3)};
	for (size_t i = 0; i < n; i++)
		compare_one(&c[0], (long)i, want_dx[i], fd_dx[i], s_dx);
	for (int j = 0; j < COLS; j++) {
		compare_one(&c[1], j, want_dw[j], fd_dw[j], s_dw);
		compare_one(&c[2], j, want_db[j], fd_db[j], s_db);
	}
	compare_f16s(&c[3], dx, want_dx, (long)n, s_dx);
	compare_f16s(&c[4], dw, want_dw, COLS, s_dw);
	compare_f16s(&c[5], db, want_db, COLS, s_db);
	compare_f16s(&c[6], dx, fd_dx, (long)n, s_dx);
	compare_f16s(&c[7], dw, fd_dw, COLS, s_dw);
	compare_f16s(&c[8], db, fd_db, COLS, s_db);

	char title[160];
	snprintf(title, sizeof title, "layernorm_backward %dx%d f16, %d programs + column sums (%s)", ROWS, COLS, NPROGS,
	         backend_name(ctx));
	int status = compare_report(title, c, 9);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(x), free(dy), free(dx), free(w), free(b), free(dw), free(db), free(xf), free(dyf);
	free(p.x), free(p.w), free(p.b), free(p.wout), free(want_dx), free(fd_dx);
	return status;
}
