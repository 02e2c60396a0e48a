/* tests/ops: dot, as .tile kernels through blk.h: f16, bf16, f32 (ieee,
 * tf32, tf32x3), f8e4m3, f8e5m2 (f32 results) and i8 (i32 results), with
 * and without an accumulator, out_dtype, shapes from 16 to 64 in every
 * dimension, a K loop (a matmul tile), a transposed operand.
 *
 * The reference sums the exact products in long double. Tolerances, per
 * element, with S = sum_k |a_ik b_kj| (+ |acc|):
 *   - f32 accumulation of f16, bf16, fp8 and ieee f32 inputs: K 2^-24 S (the
 *     products are exact or fused; only the K additions round, in any
 *     order, as tensor cores add them);
 *   - tf32 and tf32x3: 2^-9 S on top (each input truncated to tf32's 10
 *     fraction bits, within 2^-10 relative below it: a product within
 *     2^-9);
 *   - an f16 or bf16 accumulator (acc or out_dtype): the products are summed
 *     in f32 from acc's value and the result rounds once to acc's type:
 *     K 2^-24 S plus half an ulp of the type (an ulp in dot_case). On
 *     inputs whose sums are exact in f32 (narrow_case, exact), the result
 *     must be the exact sum rounded once, bit for bit;
 *   - fp8 inputs: 2^-12 S more (tensor cores keep about 14 bits of the sum);
 *   - i8 -> i32: exact.
 * tf32_case pins what tf32 and tf32x3 compute (the inputs truncated as the
 * tensor cores read them) with K 2^-23 S, and checks that the case can
 * tell the truncated products from the unrounded ones and from inputs
 * rounded to nearest instead. */
#include "ops.h"

/* fp8 products are exact, but Hopper's fp8 tensor cores keep about 14 bits
 * of the sum: 2^-12 S more for fp8 inputs (on the GPU) */
#define FP8_SUM 0x1p-12

static const char *DOT_SRC =
	"kernel k(a: *$T, b: *$T, c: *$C, out: *$R) {\n"
	"    let am = arange(0, $M)[:, None] * $K + arange(0, $K)[None, :];\n"
	"    let bm = arange(0, $K)[:, None] * $N + arange(0, $N)[None, :];\n"
	"    let cm = arange(0, $M)[:, None] * $N + arange(0, $N)[None, :];\n"
	"    let x = load(a + am);\n"
	"    let y = load(b + bm);\n"
	"    let r: $R = $DOT;\n"
	"    store(out + cm, r);\n"
	"}\n";

typedef enum { PREC_DEFAULT, PREC_IEEE, PREC_TF32, PREC_TF32X3 } prec;

static void dot_case(dt t, int M, int N, int K, bool with_acc, prec p, dt out_dtype)
{
	bool is_int = t == DT_I8;
	dt acc_t = out_dtype != DT_COUNT ? out_dtype : is_int ? DT_I32 : DT_F32;
	arr a = arr_new(t, M * K), b = arr_new(t, K * N), c = arr_new(acc_t, M * N);
	double range = t == DT_E4M3 ? 4 : t == DT_E5M2 ? 8 : 1;
	fill_random(a, range);
	fill_random(b, range);
	if (is_int) { /* i8 over its whole range */
		fill_random(a, 0);
		fill_random(b, 0);
	}
	if (with_acc)
		fill_random(c, is_int ? 0 : 4);
	if (with_acc && is_int) /* keep the sum inside i32: it may wrap, but exactly */
		for (int i = 0; i < M * N; i++)
			set_i(c, i, get_i(c, i) >> 4);
	arr want = arr_new(acc_t, M * N);
	double *wantf = calloc((size_t)(M * N), sizeof(double)), *tol = calloc((size_t)(M * N), sizeof(double));
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			if (is_int) {
				uint64_t s = with_acc ? (uint64_t)get_i(c, i * N + j) : 0;
				for (int k = 0; k < K; k++)
					s += (uint64_t)(get_i(a, i * K + k) * get_i(b, k * N + j));
				set_i(want, i * N + j, wrap_int(DT_I32, s));
				continue;
			}
			long double s = with_acc ? get_f(c, i * N + j) : 0, S = fabsl(s);
			for (int k = 0; k < K; k++) {
				long double pr = (long double)get_f(a, i * K + k) * get_f(b, k * N + j);
				s += pr;
				S += fabsl(pr);
			}
			wantf[i * N + j] = (double)s;
			double rel = K * 0x1p-24;
			if (p == PREC_TF32 || p == PREC_TF32X3 || (p == PREC_DEFAULT && t == DT_F32))
				rel += 0x1p-9;
			if (t == DT_E4M3 || t == DT_E5M2)
				rel += FP8_SUM;
			tol[i * N + j] = rel * (double)S + ulp_of(acc_t, (double)s);
		}
	const char *prec_text = p == PREC_IEEE ? ", input_precision = \"ieee\"" : p == PREC_TF32 ? ", input_precision = \"tf32\""
	                        : p == PREC_TF32X3 ? ", input_precision = \"tf32x3\"" : "";
	char dot[160], od[40] = "";
	if (out_dtype != DT_COUNT && !with_acc)
		snprintf(od, sizeof od, ", out_dtype = %s", dts[out_dtype].name);
	snprintf(dot, sizeof dot, "dot(x, y%s%s%s)", with_acc ? ", load(c + cm)" : "", prec_text, od);
	char ms[8], ns[8], ks[8];
	snprintf(ms, sizeof ms, "%d", M);
	snprintf(ns, sizeof ns, "%d", N);
	snprintf(ks, sizeof ks, "%d", K);
	const char *src = render(DOT_SRC, "T", dts[t].name, "C", dts[acc_t].name, "R", dts[acc_t].name, "M", ms, "N", ns, "K",
	                         ks, "DOT", dot, NULL);
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_from(c), dout = dev_zeros(acc_t, M * N);
	bool ok = run_kernel(src, NULL, ARGS(P(da), P(db), P(dc), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, acc_t, M * N);
		ok = is_int ? check_exact(got, want, NULL, 0) : check_close_each(got, wantf, tol);
	}
	free(wantf);
	free(tol);
	result(ok, "%s %s (%d x %d) @ (%d x %d)%s -> %s", dot, dts[t].name, M, K, K, N, with_acc ? " + acc" : "",
	       dts[acc_t].name);
}

/* A matmul tile: the K loop accumulates dot(a_k, b_k, acc); b is read
 * transposed from a (N, K) matrix when trans_b. */
static const char *LOOP_SRC =
	"kernel k(a: *$T, b: *$T, out: *$R, K: i32, BM: const i32 = 32, BN: const i32 = 32, BK: const i32 = 32) {\n"
	"    var acc = zeros((BM, BN), $R);\n"
	"    for k0 in range(0, K, BK) {\n"
	"        let ks = k0 + arange(0, BK);\n"
	"        let x = load(a + arange(0, BM)[:, None] * K + ks[None, :]);\n"
	"        let y = $LOADB;\n"
	"        acc = dot(x, y, acc$PREC);\n"
	"    }\n"
	"    store(out + arange(0, BM)[:, None] * BN + arange(0, BN)[None, :], acc);\n"
	"}\n";

static void loop_case(dt t, int K, bool trans_b)
{
	enum { BM = 32, BN = 32 };
	bool is_int = t == DT_I8;
	dt rt = is_int ? DT_I32 : DT_F32;
	arr a = arr_new(t, BM * K), b = arr_new(t, K * BN), want = arr_new(rt, BM * BN);
	fill_random(a, is_int ? 0 : 1);
	fill_random(b, is_int ? 0 : 1);
	double *wantf = calloc(BM * BN, sizeof(double)), *tol = calloc(BM * BN, sizeof(double));
	for (int i = 0; i < BM; i++)
		for (int j = 0; j < BN; j++) {
			long double s = 0, S = 0;
			uint64_t si = 0;
			for (int k = 0; k < K; k++) {
				/* b is (K, BN), or (BN, K) read transposed */
				int bi = trans_b ? j * K + k : k * BN + j;
				if (is_int)
					si += (uint64_t)(get_i(a, i * K + k) * get_i(b, bi));
				long double pr = (long double)get_f(a, i * K + k) * get_f(b, bi);
				s += pr;
				S += fabsl(pr);
			}
			if (is_int)
				set_i(want, i * BN + j, wrap_int(DT_I32, si));
			wantf[i * BN + j] = (double)s;
			tol[i * BN + j] = (K * 0x1p-24 + (t == DT_E4M3 || t == DT_E5M2 ? FP8_SUM : 0)) * (double)S +
			                  ulp_of(DT_F32, (double)s);
		}
	const char *loadb = trans_b ? "trans(load(b + arange(0, BN)[:, None] * K + ks[None, :]))"
	                            : "load(b + ks[:, None] * BN + arange(0, BN)[None, :])";
	const char *src = render(LOOP_SRC, "T", dts[t].name, "R", dts[rt].name, "LOADB", loadb, "PREC",
	                         t == DT_F32 ? ", input_precision = \"ieee\"" : "", NULL);
	blk_devptr da = dev_from(a), db = dev_from(b), dout = dev_zeros(rt, BM * BN);
	bool ok = run_kernel(src, NULL, ARGS(P(da), P(db), P(dout), I(K)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, rt, BM * BN);
		ok = is_int ? check_exact(got, want, NULL, 0) : check_close_each(got, wantf, tol);
	}
	free(wantf);
	free(tol);
	result(ok, "matmul tile (32 x %d) @ (%d x 32)%s, K loop of dot(x, y, acc) %s", K, K, trans_b ? " (b transposed)" : "",
	       dts[t].name);
}

/* dot with an f16 or bf16 accumulator: acc + sum of the products in f32,
 * rounded once to acc's type. exact: the inputs are multiples of 1/8 of at
 * most 2 in magnitude and acc's of at most 32, so every partial sum (a
 * multiple of 2^-6 below 2^10) is exact in f32, in any order: the result
 * must be the exact sum rounded once. Else random inputs in [-1, 1], within
 * half an ulp of acc's type plus K 2^-24 S. Rounding to f16 after each
 * product (an f16 FMA chain) is off by several ulps. */
static void narrow_case(dt t, dt acc_t, int M, int N, int K, bool with_acc, bool exact)
{
	arr a = arr_new(t, M * K), b = arr_new(t, K * N), c = arr_new(acc_t, M * N), want = arr_new(acc_t, M * N);
	for (int i = 0; i < M * K; i++)
		set_f(a, i, exact ? (double)rng_range(-16, 16) / 8 : rng_uniform(-1, 1));
	for (int i = 0; i < K * N; i++)
		set_f(b, i, exact ? (double)rng_range(-16, 16) / 8 : rng_uniform(-1, 1));
	for (int i = 0; i < M * N; i++)
		set_f(c, i, !with_acc ? 0 : exact ? (double)rng_range(-255, 255) / 8 : rng_uniform(-4, 4));
	double *wantf = calloc((size_t)(M * N), sizeof(double)), *tol = calloc((size_t)(M * N), sizeof(double));
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			long double s = get_f(c, i * N + j), S = fabsl(s);
			for (int k = 0; k < K; k++) {
				long double pr = (long double)get_f(a, i * K + k) * get_f(b, k * N + j);
				s += pr;
				S += fabsl(pr);
			}
			set_f(want, i * N + j, (double)s);
			wantf[i * N + j] = (double)s;
			tol[i * N + j] = K * 0x1p-24 * (double)S + 0.5 * ulp_of(acc_t, (double)s);
		}
	char dot[96], ms[8], ns[8], ks[8];
	if (with_acc)
		snprintf(dot, sizeof dot, "dot(x, y, load(c + cm))");
	else
		snprintf(dot, sizeof dot, "dot(x, y, out_dtype = %s)", dts[acc_t].name);
	snprintf(ms, sizeof ms, "%d", M);
	snprintf(ns, sizeof ns, "%d", N);
	snprintf(ks, sizeof ks, "%d", K);
	const char *src = render(DOT_SRC, "T", dts[t].name, "C", dts[acc_t].name, "R", dts[acc_t].name, "M", ms, "N", ns,
	                         "K", ks, "DOT", dot, NULL);
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_from(c), dout = dev_zeros(acc_t, M * N);
	bool ok = run_kernel(src, NULL, ARGS(P(da), P(db), P(dc), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, acc_t, M * N);
		ok = exact ? check_exact(got, want, NULL, 0) : check_close_each(got, wantf, tol);
	}
	free(wantf);
	free(tol);
	result(ok, "%s %s (%d x %d) @ (%d x %d) -> %s, summed in f32 and rounded once%s", dot, dts[t].name, M, K, K, N,
	       dts[acc_t].name, exact ? " (exact inputs)" : "");
}

/* x as tf32 in double arithmetic: the spacing of x's binade (never below
 * that of tf32's subnormals, 2^-136) times the count of spacings in |x|,
 * truncated (near: rounded to nearest, ties away from zero, as
 * cvt.rna.tf32.f32 would). */
static double tf32_of(double x, bool near)
{
	if (x == 0 || !isfinite(x))
		return x;
	int e;
	frexp(fabs(x), &e); /* |x| in [2^(e-1), 2^e) */
	double step = ldexp(1.0, (e - 1 - 10) < -136 ? -136 : e - 1 - 10);
	double q = floor(fabs(x) / step + (near ? 0.5 : 0.0));
	return copysign(q * step, x);
}

/* sum_k of the products a_ik b_kj as input_precision p computes them, in
 * long double (exact: each product is), from acc0; *S += their magnitudes
 * where S is given. */
static long double tf32_sum(arr a, arr b, int N, int K, int i, int j, prec p, bool near, long double acc0,
                            long double *S)
{
	long double s = acc0;
	for (int k = 0; k < K; k++) {
		double x = get_f(a, i * K + k), y = get_f(b, k * N + j);
		double xb = tf32_of(x, near), yb = tf32_of(y, near);
		long double pr = (long double)xb * yb;
		if (p == PREC_TF32X3)
			pr += (long double)tf32_of(x - xb, near) * yb + (long double)xb * tf32_of(y - yb, near);
		else if (p == PREC_IEEE)
			pr = (long double)x * y;
		s += pr;
		if (S)
			*S += fabsl(pr);
	}
	return s;
}

/* An f32 dot with input_precision tf32 (the default) or tf32x3 against a
 * reference that truncates the inputs as the tensor cores read them: tf32
 * multiplies tf32(a) tf32(b); tf32x3 sums a_small b_big + a_big b_small +
 * a_big b_big (big = tf32(x), small = tf32(x - big)). The products are
 * exact, so only the K additions in f32 differ (K 2^-23 S, an ulp an
 * addition). Inputs with all 23 fraction bits: the same check must fail
 * somewhere against the unrounded products (for tf32x3, against tf32's)
 * and, for tf32, against inputs rounded to nearest instead of truncated,
 * so that the case sees which rounding is done (tf32x3's two roundings
 * differ by less than its tolerance). */
static void tf32_case(int M, int N, int K, bool with_acc, prec p)
{
	arr a = arr_new(DT_F32, M * K), b = arr_new(DT_F32, K * N), c = arr_new(DT_F32, M * N);
	fill_random(a, 2);
	fill_random(b, 2);
	if (with_acc)
		fill_random(c, 4);
	prec q = p == PREC_TF32X3 ? PREC_TF32X3 : PREC_TF32;
	double *want = calloc((size_t)(M * N), sizeof(double)), *other = calloc((size_t)(M * N), sizeof(double)),
	       *near = calloc((size_t)(M * N), sizeof(double)), *tol = calloc((size_t)(M * N), sizeof(double));
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			long double c0 = with_acc ? get_f(c, i * N + j) : 0, S = fabsl(c0);
			long double s = tf32_sum(a, b, N, K, i, j, q, false, c0, &S);
			want[i * N + j] = (double)s;
			other[i * N + j] = (double)tf32_sum(a, b, N, K, i, j, q == PREC_TF32X3 ? PREC_TF32 : PREC_IEEE, false, c0,
			                                    NULL);
			near[i * N + j] = (double)tf32_sum(a, b, N, K, i, j, q, true, c0, NULL);
			tol[i * N + j] = K * 0x1p-23 * (double)S + ulp_of(DT_F32, (double)s);
		}
	char dot[128], ms[8], ns[8], ks[8];
	snprintf(dot, sizeof dot, "dot(x, y%s%s)", with_acc ? ", load(c + cm)" : "",
	         p == PREC_TF32X3 ? ", input_precision = \"tf32x3\"" : p == PREC_TF32 ? ", input_precision = \"tf32\"" : "");
	snprintf(ms, sizeof ms, "%d", M);
	snprintf(ns, sizeof ns, "%d", N);
	snprintf(ks, sizeof ks, "%d", K);
	const char *src = render(DOT_SRC, "T", "f32", "C", "f32", "R", "f32", "M", ms, "N", ns, "K", ks, "DOT", dot, NULL);
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_from(c), dout = dev_zeros(DT_F32, M * N);
	bool ok = run_kernel(src, NULL, ARGS(P(da), P(db), P(dc), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	int sees = 0, sees_near = 0;
	for (int i = 0; i < M * N; i++) {
		sees += fabs(other[i] - want[i]) > tol[i];
		sees_near += fabs(near[i] - want[i]) > tol[i];
	}
	if (ok) {
		arr got = dev_read(dout, DT_F32, M * N);
		ok = check_close_each(got, want, tol);
	}
	if (ok && (!sees || (q == PREC_TF32 && !sees_near))) {
		why("the reference %s passes as well: the case cannot see the truncation",
		    !sees ? "without it" : "rounded to nearest");
		ok = false;
	}
	free(want);
	free(other);
	free(near);
	free(tol);
	result(ok, "%s f32 (%d x %d) @ (%d x %d)%s, inputs truncated as tensor cores read them (%d of %d elements off "
	       "without, %d rounded to nearest)", dot, M, K, K, N, with_acc ? " + acc" : "", sees, M * N, sees_near);
}

/* fp8 of two kinds (e4m3 times e5m2, or the other way round): exact
 * products summed in f32 (K 2^-24 S), into f32 or rounded once to f16. */
static void fp8_mixed_case(dt ta, dt tb, int M, int N, int K, dt out)
{
	arr a = arr_new(ta, M * K), b = arr_new(tb, K * N);
	fill_random(a, 4);
	fill_random(b, 8);
	double *want = calloc((size_t)(M * N), sizeof(double)), *tol = calloc((size_t)(M * N), sizeof(double));
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			long double s = 0, S = 0;
			for (int k = 0; k < K; k++) {
				long double pr = (long double)get_f(a, i * K + k) * get_f(b, k * N + j);
				s += pr;
				S += fabsl(pr);
			}
			want[i * N + j] = (double)s;
			tol[i * N + j] = (K * 0x1p-24 + FP8_SUM) * (double)S + (out == DT_F32 ? 0 : 0.5 * ulp_of(out, (double)s));
		}
	static const char *src_t =
		"kernel k(a: *$A, b: *$B, out: *$R) {\n"
		"    let x = load(a + arange(0, $M)[:, None] * $K + arange(0, $K)[None, :]);\n"
		"    let y = load(b + arange(0, $K)[:, None] * $N + arange(0, $N)[None, :]);\n"
		"    store(out + arange(0, $M)[:, None] * $N + arange(0, $N)[None, :], dot(x, y$OD));\n"
		"}\n";
	char ms[8], ns[8], ks[8];
	snprintf(ms, sizeof ms, "%d", M);
	snprintf(ns, sizeof ns, "%d", N);
	snprintf(ks, sizeof ks, "%d", K);
	const char *src = render(src_t, "A", dts[ta].name, "B", dts[tb].name, "R", dts[out].name, "M", ms, "N", ns, "K", ks,
	                         "OD", out == DT_F32 ? "" : ", out_dtype = f16", NULL);
	blk_devptr da = dev_from(a), db = dev_from(b), dout = dev_zeros(out, M * N);
	bool ok = run_kernel(src, NULL, ARGS(P(da), P(db), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, out, M * N);
		ok = check_close_each(got, want, tol);
	}
	free(want);
	free(tol);
	result(ok, "dot %s (%d x %d) @ %s (%d x %d) -> %s", dts[ta].name, M, K, dts[tb].name, K, N, dts[out].name);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	const int shapes[][3] = {{16, 16, 16}, {32, 16, 64}, {64, 32, 16}, {16, 64, 32}, {64, 64, 64}};
	const dt types[] = {DT_F16, DT_BF16, DT_F32, DT_I8};
	for (int t = 0; t < COUNT(types); t++)
		for (int s = 0; s < COUNT(shapes); s++)
			for (int acc = 0; acc < 2; acc++)
				dot_case(types[t], shapes[s][0], shapes[s][1], shapes[s][2], acc,
				         types[t] == DT_F32 ? PREC_IEEE : PREC_DEFAULT, DT_COUNT);
	dot_case(DT_F32, 32, 32, 32, false, PREC_DEFAULT, DT_COUNT);
	dot_case(DT_F32, 32, 32, 32, true, PREC_TF32, DT_COUNT);
	dot_case(DT_F32, 16, 32, 64, false, PREC_TF32X3, DT_COUNT);
	dot_case(DT_E4M3, 32, 32, 32, false, PREC_DEFAULT, DT_COUNT);
	dot_case(DT_E5M2, 16, 32, 64, true, PREC_DEFAULT, DT_COUNT);
	dot_case(DT_F16, 32, 32, 32, false, PREC_DEFAULT, DT_F16);
	dot_case(DT_F16, 16, 16, 64, true, PREC_DEFAULT, DT_F16);
	for (int exact = 0; exact < 2; exact++)
		for (int acc = 0; acc < 2; acc++) {
			narrow_case(DT_F16, DT_F16, 64, 64, 64, acc, exact);
			narrow_case(DT_BF16, DT_BF16, 64, 64, 64, acc, exact);
			narrow_case(DT_F16, DT_F16, 16, 32, 128, acc, exact);
		}
	/* f32 truncated to tf32 as the tensor cores read it */
	tf32_case(32, 32, 32, false, PREC_DEFAULT);
	tf32_case(16, 64, 64, true, PREC_TF32);
	tf32_case(64, 16, 16, false, PREC_TF32);
	tf32_case(32, 32, 64, true, PREC_TF32X3);
	tf32_case(16, 16, 16, false, PREC_TF32X3);
	/* tiles with a 64-row block for a warpgroup: wgmma on sm_90a, where the
	 * tensor cores truncate what they read (tf32x3: the small parts too) */
	tf32_case(64, 64, 32, true, PREC_TF32);
	tf32_case(128, 64, 32, false, PREC_DEFAULT);
	tf32_case(64, 64, 32, false, PREC_TF32X3);
	/* fp8 of both kinds, and i8, over the shapes mma.sync m16n8k32 tiles
	 * (K 32 and more) and those it does not (K 16) */
	fp8_mixed_case(DT_E4M3, DT_E5M2, 32, 32, 64, DT_F32);
	fp8_mixed_case(DT_E5M2, DT_E4M3, 16, 64, 32, DT_F32);
	fp8_mixed_case(DT_E4M3, DT_E5M2, 64, 16, 16, DT_F16);
	dot_case(DT_E4M3, 64, 64, 128, true, PREC_DEFAULT, DT_COUNT);
	dot_case(DT_E5M2, 16, 16, 16, false, PREC_DEFAULT, DT_COUNT);
	dot_case(DT_E4M3, 32, 16, 32, false, PREC_DEFAULT, DT_F16);
	dot_case(DT_I8, 16, 16, 128, true, PREC_DEFAULT, DT_COUNT);
	loop_case(DT_F16, 128, false);
	loop_case(DT_BF16, 96, false);
	loop_case(DT_F32, 64, false);
	loop_case(DT_I8, 128, false);
	loop_case(DT_E4M3, 96, false);
	loop_case(DT_I8, 64, true);
	loop_case(DT_F16, 64, true);
	return ops_finish();
}
