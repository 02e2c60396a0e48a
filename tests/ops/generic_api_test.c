/* Kernels generic over their element type (T: const type), bound at each
 * launch through blk_const.type, for every element type: T in parameter
 * types (x: *T, s: T), zeros and full of T, .to(T), a T-typed let; and the
 * row softmax of docs/language.md for f16, bf16 and f32. Each is checked
 * against C on random inputs, masked edges included. */
#include "ops.h"

enum { N = 1000 };

/* out = x * s + full(1) + zeros, all in T; a reduction of the block too. */
static void elementwise_case(dt t)
{
	arr x = arr_new(t, N), want = arr_new(t, N);
	fill_random(x, dt_float(t) ? 8 : 0);
	int64_t si = dt_unsigned(t) ? 3 : -3;
	double sf = 0.75;
	val s = {.i = dt_float(t) ? 0 : wrap_int(t, (uint64_t)si), .f = dt_float(t) ? sf : 0};
	val one = cast_ref((val){.i = 1}, DT_I32, t);
	for (int64_t i = 0; i < N; i++) {
		val p = binop_ref("*", t, get_v(x, i), s);
		set_v(want, i, binop_ref("+", t, p, one));
		/* f32 and f64: the product and the sum are one fma (contraction,
		 * on by default, docs/language.md) */
		if (t == DT_F32)
			set_f(want, i, fmaf((float)get_f(x, i), (float)sf, 1.0f));
		else if (t == DT_F64)
			set_f(want, i, fma(get_f(x, i), sf, 1.0));
	}
	const char *src = "kernel k(x: *T, out: *T, s: T, n: i32, T: const type, BLOCK: const i32 = 256)\n"
	                  "        grid(cdiv(n, BLOCK)) {\n"
	                  "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	                  "    let m = offs < n;\n"
	                  "    let v: T = load(x + offs, mask = m, other = zeros((BLOCK,), T)) * s;\n"
	                  "    store(out + offs, (v + full((BLOCK,), 1, T)).to(T), mask = m);\n"
	                  "}\n";
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, N);
	blk_arg sa = dt_float(t) ? F(sf) : I(dt_float(t) ? 0 : s.i);
	blk_const T = {.name = "T", .type = dts[t].name};
	bool ok = run_kernel(src, "k", ARGS(P(dx), P(dout), sa, I(N)), &T, 1, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, N), want, &x, 1);
	result(ok, "T = %s: load, * s: T, + full(1, T), zeros(T) as other", dts[t].name);
}

/* The generic softmax, T = f16, bf16, f32, against a double reference of
 * the inputs as rounded to T; rows shorter than BLOCK (masked lanes). */
static void softmax_case(dt t)
{
	enum { ROWS = 37, COLS = 300 };
	arr x = arr_new(t, ROWS * COLS);
	fill_random(x, 6);
	double *want = host_alloc(sizeof(double) * ROWS * COLS);
	for (int r = 0; r < ROWS; r++) {
		double m = -INFINITY, s = 0;
		for (int c = 0; c < COLS; c++)
			m = fmax(m, get_f(x, r * COLS + c));
		for (int c = 0; c < COLS; c++)
			s += want[r * COLS + c] = exp(get_f(x, r * COLS + c) - m);
		for (int c = 0; c < COLS; c++)
			want[r * COLS + c] /= s;
	}
	const char *src = "kernel softmax(x: *T, out: *T, n_cols: i32, T: const type, BLOCK: const i32 = 512) grid(37) {\n"
	                  "    let row = program_id(0);\n"
	                  "    let cols = arange(0, BLOCK);\n"
	                  "    let mask = cols < n_cols;\n"
	                  "    let v = load(x + row * n_cols + cols, mask = mask, other = -inf(T)).to(f32);\n"
	                  "    let e = exp(v - max(v, axis = 0));\n"
	                  "    store(out + row * n_cols + cols, (e / sum(e, axis = 0)).to(T), mask = mask);\n"
	                  "}\n";
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, ROWS * COLS);
	blk_const T = {.name = "T", .type = dts[t].name};
	bool ok = run_kernel(src, "softmax", ARGS(P(dx), P(dout), I(COLS)), &T, 1, GRID(0)) == BLK_SUCCESS;
	/* f32's own error, then one rounding to T (half an ulp of T, relative) */
	double rtol = 1e-5, atol = 0;
	if (ok)
		ok = check_close(dev_read(dout, t, ROWS * COLS), want, &x, 1, atol, rtol, t == DT_F32 ? 2 : 0.5);
	result(ok, "generic softmax, T = %s, %d rows of %d (BLOCK 512, masked)", dts[t].name, ROWS, COLS);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	for (int t = DT_I8; t < DT_E4M3; t++)
		elementwise_case((dt)t);
	softmax_case(DT_F16);
	softmax_case(DT_BF16);
	softmax_case(DT_F32);
	return ops_finish();
}
