/* tests/ops: the element-wise builtins of language.md on every type they
 * take: exp exp2 log log2 sqrt rsqrt sin cos tanh erf floor ceil sigmoid
 * (f16 bf16 f32 f64), abs (integers and floats), fma, maximum and minimum
 * (with NaN, propagate_nan), clamp, umulhi.
 *
 * References: the transcendental functions in long double (expl, logl, ...),
 * rounded to the type; fma by rounding to odd in double and then once to the
 * type (correct for f16, bf16 and f32, whose precision plus two bits fits in
 * a double); f64 fma by the host's fma.
 *
 * Tolerances (error = |got - want|, ulp of the type at want):
 *   - exact: sqrt, floor, ceil, abs, fma, maximum, minimum, clamp, umulhi
 *     (IEEE operations that PTX has correctly rounded: sqrt.rn, fma.rn, ...).
 *   - f16 and bf16 (computed in f32 and rounded, language.md): 1 ulp of the
 *     type, for the f32 result may sit on the other side of a rounding tie.
 *   - f32: exp, exp2: 1e-6 relative (ex2.approx is within 2 ulp, and
 *     x * log2(e) rounded to f32 adds |x| 2^-24 ln 2 relative: ~6 ulp at
 *     |x| = 10); log, log2: 2e-7 absolute + 1e-6 relative (lg2.approx is
 *     within 2^-22.6 absolute); rsqrt: 5e-7 relative (rsqrt.approx:
 *     2^-22.9); sin, cos: 1e-6 absolute + 1e-6 relative on [-10, 10]
 *     (libdevice-quality; sin.approx is 2^-20.9 absolute on [-pi, pi] only);
 *     tanh, erf: 1e-6 absolute + 1e-6 relative (libdevice tanhf and erff
 *     are within 2 ulp; note: PTX tanh.approx, 2^-11 relative, would fail:
 *     too coarse for f32); sigmoid: 2e-6 relative (an exp and a division).
 *   - f64: 1e-15 absolute + 1e-14 relative (libdevice's f64 functions are
 *     within 2 ulp); rsqrt f64 2 ulp.
 * Special values (0, -0, +-inf, NaN) come first in every input and must
 * match exactly where the result is an infinity or NaN. */
#include "ops.h"

#include <fenv.h>

enum { N = 1000 };
static const dt FLOATS[] = {DT_F16, DT_BF16, DT_F32, DT_F64};
static const dt NUMS[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32,
                          DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};

typedef struct mathfn {
	const char *name;
	long double (*f)(long double);
	double lo, hi;  /* input range */
	bool log_range; /* log-uniform in [lo, hi] instead */
	bool exact;
	double atol32, rtol32;
} mathfn;

static long double rsqrt_ld(long double x) { return 1.0L / sqrtl(x); }
static long double sigmoid_ld(long double x) { return 1.0L / (1.0L + expl(-x)); }

static const mathfn FNS[] = {
	{"exp", expl, -10, 10, false, false, 0, 1e-6},
	{"exp2", exp2l, -14, 14, false, false, 0, 1e-6},
	{"log", logl, 0x1p-12, 0x1p12, true, false, 2e-7, 1e-6},
	{"log2", log2l, 0x1p-12, 0x1p12, true, false, 2e-7, 1e-6},
	{"sqrt", sqrtl, 0x1p-12, 0x1p12, true, true, 0, 0},
	{"rsqrt", rsqrt_ld, 0x1p-12, 0x1p12, true, false, 0, 5e-7},
	{"sin", sinl, -10, 10, false, false, 1e-6, 1e-6},
	{"cos", cosl, -10, 10, false, false, 1e-6, 1e-6},
	{"tanh", tanhl, -5, 5, false, false, 1e-6, 1e-6},
	{"erf", erfl, -4, 4, false, false, 1e-6, 1e-6},
	{"floor", floorl, -1000, 1000, false, true, 0, 0},
	{"ceil", ceill, -1000, 1000, false, true, 0, 0},
	{"sigmoid", sigmoid_ld, -10, 10, false, false, 0, 2e-6},
};

static const char *UNARY_SRC =
	"kernel k(x: *$T, out: *$T, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let r$LET = $FN(load(x + offs, mask = m));\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static void math_case(const mathfn *fn, dt t)
{
	arr x = arr_new(t, N);
	double *want = calloc(N, sizeof(double));
	double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, -2.5, 2.5};
	for (int64_t i = 0; i < N; i++) {
		double v;
		if (i < COUNT(sp))
			v = sp[i];
		else if (fn->log_range)
			v = exp2(rng_uniform(log2(fn->lo), log2(fn->hi)));
		else
			v = rng_uniform(fn->lo, fn->hi);
		set_f(x, i, v);
	}
	for (int64_t i = 0; i < N; i++)
		want[i] = round_to(t, (double)fn->f((long double)get_f(x, i)));
	if (t == DT_F64 && !strcmp(fn->name, "sqrt")) /* long double would round twice */
		for (int64_t i = 0; i < N; i++)
			want[i] = sqrt(get_f(x, i));
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, N);
	/* the result has the operand's type (a typed let checks it) */
	char rt[16];
	snprintf(rt, sizeof rt, ": %s", dts[t].name);
	bool ok = run_kernel(render(UNARY_SRC, "T", dts[t].name, "LET", rt, "FN", fn->name, NULL), "k",
	                     ARGS(P(dx), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, t, N);
		if (fn->exact) {
			arr w = arr_new(t, N);
			for (int64_t i = 0; i < N; i++)
				set_f(w, i, want[i]);
			ok = check_exact(got, w, &x, 1);
		} else if (t == DT_F16 || t == DT_BF16 || t == DT_E4M3 || t == DT_E5M2) {
			ok = check_close(got, want, &x, 1, 0, 0, 1);
		} else if (t == DT_F32) {
			ok = check_close(got, want, &x, 1, fn->atol32, fn->rtol32, 0);
		} else {
			bool rs = !strcmp(fn->name, "rsqrt");
			ok = check_close(got, want, &x, 1, rs ? 0 : 1e-15, rs ? 0 : 1e-14, rs ? 2 : 0);
		}
	}
	free(want);
	result(ok, "%s %s", fn->name, dts[t].name);
}

/* exp and exp2 into the subnormal range: below f64 a result under 2^-126
 * (f32's smallest normal) is +0 on both backends (the GPU's ex2.approx.ftz;
 * language.md), the others as in math_case. Inputs within 1e-3 of the
 * threshold's exponent are moved off it: an approximation may land on
 * either side there. f64 keeps its subnormals. */
static void underflow_case(bool base2, dt t)
{
	arr x = arr_new(t, N);
	double *want = calloc(N, sizeof(double));
	double scale = base2 ? 1.0 : 1.4426950408889634; /* the exponent of 2 is x * scale */
	for (int64_t i = 0; i < N; i++) {
		double e = rng_uniform(-152, -110);
		if (t != DT_F64 && fabs(e + 126) < 1e-3)
			e -= 2e-3;
		set_f(x, i, e / scale);
	}
	for (int64_t i = 0; i < N; i++) {
		long double r = base2 ? exp2l((long double)get_f(x, i)) : expl((long double)get_f(x, i));
		want[i] = t != DT_F64 && r < 0x1p-126L ? 0.0 : round_to(t, (double)r);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(UNARY_SRC, "T", dts[t].name, "LET", "", "FN", base2 ? "exp2" : "exp", NULL), "k",
	                     ARGS(P(dx), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, t, N);
		if (t == DT_F64)
			ok = check_close(got, want, &x, 1, 0, 1e-14, 0);
		else if (t == DT_F32) /* exp: x * log2(e) rounded in f32 at |x| ~ 100: ~6e-6 relative */
			ok = check_close(got, want, &x, 1, 0, base2 ? 1e-6 : 1e-5, 0);
		else
			ok = check_close(got, want, &x, 1, 0, 0, 1);
	}
	free(want);
	result(ok, "%s %s into the subnormal range: %s", base2 ? "exp2" : "exp", dts[t].name,
	       t == DT_F64 ? "kept" : "flushed to +0 under 2^-126");
}

/* abs on integers (the most negative value wraps to itself) and floats. */
static void abs_case(dt t)
{
	arr x = arr_new(t, N), want = arr_new(t, N);
	fill_random(x, 1000);
	if (dt_float(t)) {
		double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN};
		for (int i = 0; i < COUNT(sp); i++)
			set_f(x, i, sp[i]);
	} else {
		set_i(x, 0, wrap_int(t, 1ull << (dts[t].bits - 1))); /* the most negative */
		set_i(x, 1, -1);
		set_i(x, 2, 0);
	}
	for (int64_t i = 0; i < N; i++) {
		val v = get_v(x, i);
		if (dt_float(t))
			v.f = fabs(v.f);
		else if (dt_signed(t) && v.i < 0)
			v.i = wrap_int(t, 0 - (uint64_t)v.i);
		set_v(want, i, v);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, N);
	char rt[16];
	snprintf(rt, sizeof rt, ": %s", dts[t].name);
	bool ok = run_kernel(render(UNARY_SRC, "T", dts[t].name, "LET", rt, "FN", "abs", NULL), "k",
	                     ARGS(P(dx), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, N), want, &x, 1);
	result(ok, "abs %s", dts[t].name);
}

/* a * b + c rounded once to t. */
static double fma_ref(dt t, double a, double b, double c)
{
	if (t == DT_F64)
		return fma(a, b, c);
	/* round to odd in double: toward zero, then set the last bit if inexact */
	volatile double va = a, vb = b, vc = c;
	fesetround(FE_TOWARDZERO);
	feclearexcept(FE_INEXACT);
	volatile double s = fma(va, vb, vc);
	int inexact = fetestexcept(FE_INEXACT);
	fesetround(FE_TONEAREST);
	double r = s;
	if (inexact && isfinite(r)) {
		uint64_t bits;
		memcpy(&bits, &r, 8);
		bits |= 1;
		memcpy(&r, &bits, 8);
	}
	if (isinf(a * b) || isinf(c) || isnan(a) || isnan(b) || isnan(c))
		r = a * b + c; /* special values: as IEEE says */
	else if (isinf(s) || fabs(s) == 0x1.fffffffffffffp1023)
		r = fma(a, b, c);
	return round_to(t, r);
}

static const char *FMA_SRC =
	"kernel k(x: *$T, y: *$T, z: *$T, out: *$T, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let r: $T = fma(load(x + offs, mask = m), load(y + offs, mask = m), load(z + offs, mask = m));\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static void fma_case(dt t)
{
	arr x = arr_new(t, N), y = arr_new(t, N), z = arr_new(t, N), want = arr_new(t, N);
	for (int64_t i = 0; i < N; i++) {
		/* products that nearly cancel c, so that the single rounding matters */
		double a = rng_uniform(-8, 8), b = rng_uniform(-8, 8);
		set_f(x, i, a);
		set_f(y, i, b);
		double p = get_f(x, i) * get_f(y, i);
		set_f(z, i, i % 3 == 0 ? rng_uniform(-64, 64) : -p * (1 + ldexp(rng_uniform(-1, 1), -(int)rng_range(4, 20))));
	}
	double sp[][3] = {{INFINITY, 0, 1}, {INFINITY, 1, -INFINITY}, {NAN, 1, 1}, {1, 1, NAN}, {-0.0, 1, 0.0}, {0.0, -1, -0.0}};
	for (int i = 0; i < COUNT(sp); i++) {
		set_f(x, i, sp[i][0]);
		set_f(y, i, sp[i][1]);
		set_f(z, i, sp[i][2]);
	}
	for (int64_t i = 0; i < N; i++)
		set_f(want, i, fma_ref(t, get_f(x, i), get_f(y, i), get_f(z, i)));
	blk_devptr dx = dev_from(x), dy = dev_from(y), dz = dev_from(z), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(FMA_SRC, "T", dts[t].name, NULL), "k", ARGS(P(dx), P(dy), P(dz), P(dout), I(N)),
	                     NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	arr ins[3] = {x, y, z};
	if (ok)
		ok = check_exact(dev_read(dout, t, N), want, ins, 3);
	result(ok, "fma %s", dts[t].name);
}

static const char *BIN_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let a = load(x + offs, mask = m);\n"
	"    let b = load(y + offs, mask = m);\n"
	"    let r: $T = $EXPR;\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static void fill_minmax(arr a, bool second)
{
	fill_random(a, 1000);
	if (dt_float(a.t)) {
		double sp[] = {NAN, 1.0, -0.0, 0.0, INFINITY, -INFINITY};
		for (int i = 0; i < 36; i++)
			set_f(a, i, sp[second ? i % 6 : i / 6]);
	} else {
		for (int i = 40; i < 60; i++) /* equal values */
			set_i(a, i, 7);
	}
}

static val max_ref(dt t, val a, val b, bool is_max, bool prop)
{
	if (dt_float(t)) {
		if (isnan(a.f) || isnan(b.f)) {
			if (prop)
				return isnan(a.f) ? a : b;
			return isnan(a.f) ? b : a;
		}
		return (is_max ? a.f >= b.f : a.f <= b.f) ? a : b;
	}
	bool lt = dt_signed(t) ? a.i < b.i : (uint64_t)a.i < (uint64_t)b.i;
	return is_max ? (lt ? b : a) : (lt ? a : b);
}

static void minmax_case(dt t, bool is_max, bool prop)
{
	arr x = arr_new(t, N), y = arr_new(t, N), want = arr_new(t, N);
	fill_minmax(x, false);
	fill_minmax(y, true);
	for (int64_t i = 0; i < N; i++)
		set_v(want, i, max_ref(t, get_v(x, i), get_v(y, i), is_max, prop));
	char expr[80];
	snprintf(expr, sizeof expr, "%s(a, b%s)", is_max ? "maximum" : "minimum", prop ? ", propagate_nan = true" : "");
	blk_devptr dx = dev_from(x), dy = dev_from(y), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(BIN_SRC, "T", dts[t].name, "EXPR", expr, NULL), "k",
	                     ARGS(P(dx), P(dy), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	arr ins[2] = {x, y};
	if (ok)
		ok = check_value(dev_read(dout, t, N), want, ins, 2);
	result(ok, "%s %s", expr, dts[t].name);
}

static const char *CLAMP_SRC =
	"kernel k(x: *$T, lo: *$T, hi: *$T, out: *$T, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let r: $T = clamp(load(x + offs, mask = m), load(lo + offs, mask = m), load(hi + offs, mask = m));\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static void clamp_case(dt t)
{
	arr x = arr_new(t, N), lo = arr_new(t, N), hi = arr_new(t, N), want = arr_new(t, N);
	fill_random(x, 1000);
	fill_random(lo, 1000);
	fill_random(hi, 1000);
	for (int64_t i = 0; i < N; i++) { /* lo <= hi */
		val a = get_v(lo, i), b = get_v(hi, i);
		bool gt = dt_float(t) ? a.f > b.f : dt_signed(t) ? a.i > b.i : (uint64_t)a.i > (uint64_t)b.i;
		if (gt) {
			set_v(lo, i, b);
			set_v(hi, i, a);
		}
	}
	if (dt_float(t)) /* NaN: maximum(NaN, lo) is lo, then minimum(lo, hi) is lo */
		set_f(x, 0, NAN);
	for (int64_t i = 0; i < N; i++)
		set_v(want, i, max_ref(t, max_ref(t, get_v(x, i), get_v(lo, i), true, false), get_v(hi, i), false, false));
	blk_devptr dx = dev_from(x), dlo = dev_from(lo), dhi = dev_from(hi), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(CLAMP_SRC, "T", dts[t].name, NULL), "k", ARGS(P(dx), P(dlo), P(dhi), P(dout), I(N)),
	                     NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	arr ins[3] = {x, lo, hi};
	if (ok)
		ok = check_value(dev_read(dout, t, N), want, ins, 3);
	result(ok, "clamp %s", dts[t].name);
}

/* umulhi: the high half of the product of the operands' bits read as
 * unsigned (the name's "u", and Triton's umulhi; language.md says "the high
 * half of the full product" without a signedness). */
static void umulhi_case(dt t)
{
	arr x = arr_new(t, N), y = arr_new(t, N), want = arr_new(t, N);
	fill_random(x, 0);
	fill_random(y, 0);
	for (int64_t i = 0; i < N; i++) {
		uint64_t a = get_bits(x, i), b = get_bits(y, i), h;
		if (dts[t].bits == 64)
			h = (uint64_t)(((unsigned __int128)a * b) >> 64);
		else
			h = (a * b) >> 32;
		set_bits(want, i, h);
	}
	blk_devptr dx = dev_from(x), dy = dev_from(y), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(BIN_SRC, "T", dts[t].name, "EXPR", "umulhi(a, b)", NULL), "k",
	                     ARGS(P(dx), P(dy), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	arr ins[2] = {x, y};
	if (ok)
		ok = check_exact(dev_read(dout, t, N), want, ins, 2);
	result(ok, "umulhi %s", dts[t].name);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	for (int f = 0; f < COUNT(FNS); f++)
		for (int t = 0; t < COUNT(FLOATS); t++)
			math_case(&FNS[f], FLOATS[t]);
	/* the 8-bit floats compute in f32 and round (saturating) like f16 */
	for (int f = 0; f < COUNT(FNS); f++)
		if (!strcmp(FNS[f].name, "sqrt") || !strcmp(FNS[f].name, "exp") || !strcmp(FNS[f].name, "floor")) {
			math_case(&FNS[f], DT_E4M3);
			math_case(&FNS[f], DT_E5M2);
		}
	for (int t = 0; t < COUNT(FLOATS); t++) {
		underflow_case(true, FLOATS[t]);
		underflow_case(false, FLOATS[t]);
	}
	for (int t = 0; t < COUNT(NUMS); t++)
		abs_case(NUMS[t]);
	abs_case(DT_E4M3);
	abs_case(DT_E5M2);
	for (int t = 0; t < COUNT(FLOATS); t++)
		fma_case(FLOATS[t]);
	for (int t = 0; t < COUNT(NUMS); t++) {
		minmax_case(NUMS[t], true, false);
		minmax_case(NUMS[t], false, false);
	}
	for (int t = 0; t < COUNT(FLOATS); t++) {
		minmax_case(FLOATS[t], true, true);
		minmax_case(FLOATS[t], false, true);
	}
	for (int t = 0; t < COUNT(NUMS); t++)
		clamp_case(NUMS[t]);
	umulhi_case(DT_I32);
	umulhi_case(DT_U32);
	umulhi_case(DT_I64);
	umulhi_case(DT_U64);
	return ops_finish();
}
