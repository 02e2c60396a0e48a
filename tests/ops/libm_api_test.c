/* tests/ops: the math functions that expand into IR ops (compiler/irgen/
 * libm.c): tanh below f64, sinh cosh tan atan asin acos asinh acosh atanh
 * log1p expm1 log10 exp10 cbrt erfc erfinv lgamma tgamma i0 i1 j0 j1 y0 y1
 * pow pow_precise atan2 hypot, and the exact ones (trunc
 * round rint fmod remainder copysign nextafter ldexp frexp isnan isinf
 * isfinite signbit), on f16, bf16, f32 and f64 where language.md lists it.
 *
 * The reference is the host's long double libm at the input (and, for the
 * f64 forms of erfc ... y1, also an mpmath table, libm_f64_ref.h). The error of a
 * result is |got - ref| in ulp of the type at ref; each function's largest
 * error over random inputs, the edges (+-0, subnormals, +-inf, NaN, the
 * largest finite values) and the points where its branches switch must stay
 * within the bound of language.md's table (f16 and bf16: 1 ulp, the f32
 * result rounded once). Infinities and NaN must match exactly. Each case
 * prints the largest error it saw. The sequences use only ops that both
 * backends compute to the bit, so these bounds hold on the GPU too; tanh's
 * ex2.approx is the exception, whose 2 ulp the f32 bound adds. */
#include "ops.h"
#include "libm_f64_ref.h"

enum { N = 4000 };

/* each case runs with contraction on (the default) and off: the sequences'
 * own fmas are written out, the rest may contract, within the same bounds */
static int fusion = 1;
static blk_const fusion_const[1];
#define FUSION fusion_const, 1

typedef long double (*ld1)(long double);
typedef long double (*ld2)(long double, long double);

typedef struct fn1 {
	const char *name;
	ld1 f;
	double lo, hi;      /* random inputs: uniform in [lo, hi] */
	double maxabs;      /* inputs of larger magnitude are left out (0: none) */
	double b32, b64;    /* bounds in ulp (b64 < 0: no f64 form) */
	double edges[8];    /* branch switch points (0 ends) */
} fn1;

static long double exp10_ld(long double x) { return powl(10.0L, x); }

/* the modified Bessel functions I0, I1 by their series in long double
 * (positive terms) */
static long double bessel_i_ld(long double x, int nu)
{
	if (isnan(x))
		return x;
	if (isinf(x))
		return nu ? x : INFINITY;
	if (x == 0 && nu) /* odd: keeps -0 */
		return x;
	long double y = x * x / 4, term = nu ? x / 2 : 1, s = 0;
	for (int k = 0; k < 2000 && term != 0 && !isinf(s); k++) {
		s += term;
		term *= y / ((k + 1) * (long double)(k + 1 + nu));
	}
	return s;
}
static long double i0_ld(long double x) { return bessel_i_ld(x, 0); }
static long double i1_ld(long double x) { return bessel_i_ld(x, 1); }

/* erfinv by bisection in long double, on erfc above 1/2 (1 - y exact) */
static long double erfinv_ld(long double y)
{
	if (isnan(y) || fabsl(y) > 1)
		return NAN;
	if (fabsl(y) == 1)
		return copysignl(INFINITY, y);
	long double a = fabsl(y), lo = 0, hi = 10;
	if (a < 1e-3L) { /* z + z^3/3 + 7 z^5/30 + 127 z^7/630, z = sqrt(pi) y / 2: bisection's
	                  * absolute precision would not do for small y */
		long double z = 0.886226925452758013649083741671L * y, z2 = z * z;
		return z * (1 + z2 * (1.0L / 3 + z2 * (7.0L / 30 + z2 * (127.0L / 630))));
	}
	for (int i = 0; i < 200; i++) {
		long double mid = (lo + hi) / 2;
		bool below = a < 0.5L ? erfl(mid) < a : erfcl(mid) > 1 - a;
		if (below)
			lo = mid;
		else
			hi = mid;
	}
	return copysignl((lo + hi) / 2, y);
}

/* An absolute tolerance, subtracted from the error before it is taken in
 * ulp (language.md states these): J and Y oscillate, and near their zeros
 * the bound is absolute (f32: 1e-11; f64: 2^-52 times sqrt(2 / (pi |x|)),
 * their amplitude, at most 2^-52); the reflection lgamma(x) = log(pi / |x
 * sin(pi x)|) - lgamma(-x) of f64 at x <= -1/2 is a difference, and its zeros
 * (-2.457..., -2.747..., and one near each negative integer) take 2^-52
 * (1 + |lgamma(-x)|) absolute; tan in f32 near its poles, below */
static double atol_of(const char *name, dt t, double x)
{
	/* tan in f32: the reduction x - k pi/2 (three fmas) is off by about
	 * |x| 2^-56, which tan's derivative 1 + tan^2 x magnifies near a pole
	 * (x = 59745.238 gave 5.09 ulp, tan x = 119134) */
	if (t != DT_F64 && strcmp(name, "tan") == 0) {
		long double tx = tanl(x);
		return (double)((1 + tx * tx) * fabsl((long double)x) * 0x1p-54L);
	}
	if (t == DT_F64 && strcmp(name, "lgamma") == 0 && x <= -0.5 && isfinite(x))
		return ldexp(1 + fabsl(lgammal(-(long double)x)), -52);
	if (name[0] != 'j' && name[0] != 'y')
		return 0;
	if (t != DT_F64)
		return 1e-11;
	return ldexp(fmin(1, sqrt(2 / (3.14159265358979323846 * fabs(x)))), -52);
}

static const fn1 FNS[] = {
	{"tanh", tanhl, -10, 10, 0, 3, 3, {0.55, 9, 0.3, 44, 9.0109, 9.5}},
	{"sinh", sinhl, -90, 90, 0, 2, 2, {1, 89.4, 0.5, 710.4}},
	{"cosh", coshl, -90, 90, 0, 2, 2, {1, 89.4, 0.5, 710.4}},
	{"tan", tanl, -100, 100, 1e5, 4, 4, {0.785398, 1.570796, 3.14159, 1e4}},
	{"atan", atanl, -20, 20, 0, 3, 3, {0.41421356, 1, 2.4142135, 1e10}},
	{"asin", asinl, -1, 1, 0, 3, 3, {0.5, 0.70710678, 0.99999, 1}},
	{"acos", acosl, -1, 1, 0, 3, 3, {0.5, 0.70710678, 0.99999, 1}},
	{"asinh", asinhl, -100, 100, 0, 3, 3, {8192, 1e-5, 1, 3e8}},
	{"acosh", acoshl, 1, 100, 0, 3, 3, {1, 2, 8192, 1.0001}},
	{"atanh", atanhl, -1, 1, 0, 3, 3, {0.5, 1e-5, 0.99999, 1}},
	{"log1p", log1pl, -1, 10, 0, 2, 2, {-0.5, 1e-7, 0.41421356, 1e30}},
	{"expm1", expm1l, -20, 20, 0, 2, 3, {0.3466, 1e-7, 16.6, 88.7}},
	{"log10", log10l, 0, 1000, 0, 2, 2, {1, 10, 1e-40, 1e30}},
	{"exp10", exp10_ld, -40, 38, 0, 2, 2, {1, 38.5, -45, 0.01}},
	{"cbrt", cbrtl, -1000, 1000, 0, 1, 1, {1e-40, 8, 27, 1e30}},
	{"erfc", erfcl, -4, 10.5, 0, 1, 3, {2, 10.05, 27, 0.5}},
	{"erfinv", erfinv_ld, -1, 1, 0, 1, 3, {0.5, 0.99999994, 1e-30, 0.9}},
	{"lgamma", lgammal, 0, 40, 0, 2, 3, {1, 2, 8, 1e30}},
	{"lgamma", lgammal, -10, 0, 0, 2, 3, {-0.5, -2.4570247, -2.7476826, -1e-30}},
	{"tgamma", tgammal, -10, 36, 0, 2, 3, {1, 35.04, -0.5, 1e-30}},
	{"i0", i0_ld, -95, 95, 0, 1, 3, {20, 91.9, 1e-20, 0.5}},
	{"i1", i1_ld, -95, 95, 0, 1, 3, {20, 91.9, 1e-20, 0.5}},
	{"j0", j0l, -40, 40, 1e9, 1, 3, {12, 2.4048256, 5.5200781, 1e8}},
	{"j1", j1l, -40, 40, 1e9, 1, 3, {12, 3.8317060, 7.0155867, 1e8}},
	{"y0", y0l, 0, 40, 1e9, 1, 3, {12, 0.89357697, 3.9576784, 1e8}},
	{"y1", y1l, 0, 40, 1e9, 1, 3, {12, 2.1971413, 5.4296810, 1e8}},
};

/* every float type; the f64 form where the table has one */
static const dt FLOATS[] = {DT_F16, DT_BF16, DT_F32, DT_F64};

static const char *UNARY_SRC =
	"kernel k(x: *$T, out: *$T, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let r: $T = $FN(load(x + offs, mask = m));\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static const char *BIN_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let r: $T = $FN(load(x + offs, mask = m), load(y + offs, mask = m));\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

/* The special inputs of type t: zeros, infinities, NaN, the smallest
 * subnormal, the smallest normal, the largest finite value, with signs. */
static int specials(dt t, double *v)
{
	int ebits = t == DT_F64 ? 11 : fmt_of(t)->ebits;
	double min_normal = ldexp(1.0, 2 - (1 << (ebits - 1)));
	double tiny = ldexp(min_normal, -dt_mbits(t));
	double s[] = {0.0, INFINITY, NAN, tiny, min_normal, dt_max(t), 1.0, 0.5, 2.0};
	int n = 0;
	for (int i = 0; i < COUNT(s); i++) {
		v[n++] = s[i];
		v[n++] = -s[i];
	}
	return n;
}

/* Largest error in ulp of got against the reference at each input; -1
 * where a special value does not match (reported). */
static double max_ulp_abs(arr got, const long double *ref, const arr *ins, int n_ins, double bound, const double *atol);

static double max_ulp(arr got, const long double *ref, const arr *ins, int n_ins, double bound)
{
	return max_ulp_abs(got, ref, ins, n_ins, bound, NULL);
}

/* As max_ulp, less an absolute tolerance atol[i] first (atol NULL: none). */
static double max_ulp_abs(arr got, const long double *ref, const arr *ins, int n_ins, double bound, const double *atol)
{
	double worst = 0;
	int bad = 0;
	for (int64_t i = 0; i < got.n; i++) {
		double g = get_f(got, i), w = round_to(got.t, (double)ref[i]);
		double e;
		if (isnan(w) || isnan(g))
			e = isnan(w) && isnan(g) ? 0 : INFINITY;
		else if (isinf(w) || isinf(g))
			e = g == w ? 0 : INFINITY;
		else if (g == 0 && w == 0)
			e = signbit(g) == signbit(w) ? 0 : INFINITY;
		else
			e = (double)(fmaxl(fabsl((long double)g - ref[i]) - (atol ? atol[i] : 0), 0) / (long double)ulp_of(got.t, (double)ref[i]));
		if (e > worst)
			worst = e;
		if (e > bound && bad++ < 5) {
			why("[%lld] got %s, want %.17Lg (%.3g ulp)", (long long)i, show(got, i), ref[i], e);
			for (int j = 0; j < n_ins; j++)
				why("%s in%d = %s", j ? "," : "  for", j, show(ins[j], i));
			why("\n");
		}
	}
	return worst;
}

static double bound_for(dt t, double b32, double b64)
{
	return t == DT_F64 ? b64 : t == DT_F32 ? b32 : 1.0;
}

static void unary_case(const fn1 *fn, dt t)
{
	arr x = arr_new(t, N);
	long double *ref = calloc(N, sizeof *ref);
	double sp[32];
	int ns = specials(t, sp), i = 0;
	for (; i < ns; i++)
		set_f(x, i, sp[i]);
	for (int e = 0; e < 8 && fn->edges[e] != 0; e++) /* each switch point, a little either side, both signs */
		for (int s = -2; s <= 2; s++) {
			double v = fn->edges[e] * (1 + s * ldexp(1.0, -dt_mbits(t)));
			set_f(x, i++, v);
			set_f(x, i++, -v);
		}
	for (; i < N; i++)
		set_f(x, i, i % 4 == 0 ? ldexp(rng_uniform(-1, 1), (int)rng_range(-30, 30)) : rng_uniform(fn->lo, fn->hi));
	for (int64_t j = 0; j < N; j++)
		if (fn->maxabs > 0 && fabs(get_f(x, j)) > fn->maxabs)
			set_f(x, j, rng_uniform(-fn->maxabs, fn->maxabs));
	double *atol = calloc(N, sizeof *atol);
	for (int64_t j = 0; j < N; j++) {
		ref[j] = fn->f((long double)get_f(x, j));
		atol[j] = atol_of(fn->name, t, get_f(x, j));
	}
	double bound = bound_for(t, fn->b32, fn->b64);
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(UNARY_SRC, "T", dts[t].name, "FN", fn->name, NULL), "k", ARGS(P(dx), P(dout), I(N)),
	                     FUSION, GRID(0)) == BLK_SUCCESS;
	double worst = 0;
	if (ok) {
		worst = max_ulp_abs(dev_read(dout, t, N), ref, &x, 1, bound, atol);
		ok = worst <= bound;
	}
	free(ref);
	free(atol);
	result(ok, "%s %s%s: largest error %.3g ulp (bound %g)", fn->name, dts[t].name, fusion ? "" : " (fp_fusion 0)",
	       worst, bound);
}

/* The f64 form of a function at the inputs of its mpmath table
 * (libm_f64_ref.h), held to the same bound and absolute tolerance. */
static void table_case(const fn1 *fn)
{
	int k = 0;
	while (k < COUNT(REF_TABLES) && strcmp(REF_TABLES[k].name, fn->name) != 0)
		k++;
	if (k == COUNT(REF_TABLES))
		return;
	int n = REF_TABLES[k].n;
	const RefRow *rows = REF_TABLES[k].rows;
	arr x = arr_new(DT_F64, n);
	long double *ref = calloc(n, sizeof *ref);
	double *atol = calloc(n, sizeof *atol);
	for (int i = 0; i < n; i++) {
		set_f(x, i, rows[i].x);
		ref[i] = (long double)rows[i].hi + rows[i].lo;
		atol[i] = atol_of(fn->name, DT_F64, rows[i].x);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_F64, n);
	bool ok = run_kernel(render(UNARY_SRC, "T", "f64", "FN", fn->name, NULL), "k", ARGS(P(dx), P(dout), I(n)), FUSION,
	                     GRID(0)) == BLK_SUCCESS;
	double worst = 0;
	if (ok) {
		worst = max_ulp_abs(dev_read(dout, DT_F64, n), ref, &x, 1, fn->b64, atol);
		ok = worst <= fn->b64;
	}
	free(ref);
	free(atol);
	result(ok, "%s f64%s at the %d points of its mpmath table: largest error %.3g ulp (bound %g)", fn->name,
	       fusion ? "" : " (fp_fusion 0)", n, worst, fn->b64);
}

/* ---- binary functions ------------------------------------------------------ */

typedef struct fn2 {
	const char *name;
	ld2 f;
	double lo, hi;
	double b32, b64;
	bool positive_x; /* x in (0, hi] mostly (pow) */
} fn2;

static long double pow_ld(long double x, long double y) { return powl(x, y); }

static const fn2 FNS2[] = {
	{"pow", pow_ld, -4, 4, 2, 2, true},
	{"pow_precise", pow_ld, -4, 4, 1, 2, true},
	{"atan2", atan2l, -10, 10, 2, 3, false},
	{"hypot", hypotl, -1e3, 1e3, 1, 2, false},
	{"remainder", remainderl, -100, 100, 0, 0, false},
	{"fmod", fmodl, -100, 100, 0, 0, false},
	{"copysign", copysignl, -100, 100, 0, 0, false},
	{"nextafter", nextafterl, -100, 100, 0, 0, false},
};

/* nextafter's reference must step in the operands' own type */
static double nextafter_t(dt t, double x, double y)
{
	if (isnan(x) || isnan(y))
		return x + y;
	if (isinf(x) && x != y)
		return copysign(dt_max(t), x);
	if (x == y)
		return y;
	if (x == 0)
		return copysign(ulp_of(t, 0), y);
	double u = ulp_of(t, x);
	bool away = (x < y) == (x > 0);
	/* one step down from a power of two is half an ulp */
	if (!away) {
		int ex;
		double m = frexp(fabs(x), &ex);
		if (m == 0.5 && fabs(x) > ulp_of(t, 0) * ldexp(1.0, dt_mbits(t)))
			u /= 2;
	}
	double a = fabs(x) + (away ? u : -u);
	return copysign(a, x);
}

static void binary_case(const fn2 *fn, dt t)
{
	arr x = arr_new(t, N), y = arr_new(t, N);
	long double *ref = calloc(N, sizeof *ref);
	double sp[32];
	int ns = specials(t, sp), i = 0;
	for (int a = 0; a < ns; a++) /* every pair of specials */
		for (int b = 0; b < ns; b++, i++) {
			set_f(x, i, sp[a]);
			set_f(y, i, sp[b]);
		}
	for (; i < N; i++) {
		double a = rng_uniform(fn->lo, fn->hi), b = rng_uniform(fn->lo, fn->hi);
		if (i % 5 == 0)
			a = ldexp(rng_uniform(-1, 1), (int)rng_range(-20, 20));
		if (i % 7 == 0)
			b = ldexp(rng_uniform(-1, 1), (int)rng_range(-20, 20));
		if (fn->positive_x) {
			a = i % 3 ? fabs(a) : a;
			if (i % 11 == 0) /* negative bases with integer exponents */
				b = (double)rng_range(-9, 9);
			if (i % 13 == 0) /* large results */
				a = rng_uniform(0.1, 40), b = rng_uniform(-25, 25);
			if (i % 19 == 0) { /* |y log x| from 40 to 88, x across [sqrt(1/2), sqrt(2)] (log's reduced range) */
				a = rng_uniform(0.7, 1.42);
				b = rng_uniform(40, 88) / log(a == 1 ? 2 : a) * (i % 2 ? 1 : -1);
			}
		}
		if (i % 17 == 0) /* equal magnitudes: remainder ties, atan2 on the diagonal */
			b = i % 2 ? a : a / 2.5;
		set_f(x, i, a);
		set_f(y, i, b);
	}
	for (int64_t j = 0; j < N; j++)
		ref[j] = !strcmp(fn->name, "nextafter") ? nextafter_t(t, get_f(x, j), get_f(y, j))
		                                        : fn->f((long double)get_f(x, j), (long double)get_f(y, j));
	double bound = bound_for(t, fn->b32, fn->b64);
	if (fn->b32 == 0) /* exact in every type */
		bound = 0;
	blk_devptr dx = dev_from(x), dy = dev_from(y), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(BIN_SRC, "T", dts[t].name, "FN", fn->name, NULL), "k",
	                     ARGS(P(dx), P(dy), P(dout), I(N)), FUSION, GRID(0)) == BLK_SUCCESS;
	double worst = 0;
	arr ins[2] = {x, y};
	if (ok) {
		worst = max_ulp(dev_read(dout, t, N), ref, ins, 2, bound);
		ok = worst <= bound;
	}
	free(ref);
	result(ok, "%s %s%s: largest error %.3g ulp (bound %g)", fn->name, dts[t].name, fusion ? "" : " (fp_fusion 0)",
	       worst, bound);
}

/* ---- exact unary functions and predicates ---------------------------------- */

static long double round_ld(long double x) { return roundl(x); }

static void exact_case(const char *name, ld1 f, dt t)
{
	arr x = arr_new(t, N);
	long double *ref = calloc(N, sizeof *ref);
	double sp[32];
	int ns = specials(t, sp), i = 0;
	for (; i < ns; i++)
		set_f(x, i, sp[i]);
	for (; i < N; i++) /* halves and near-halves for the roundings */
		set_f(x, i, i % 3 ? rng_uniform(-100, 100) : (double)rng_range(-200, 200) / 2);
	for (int64_t j = 0; j < N; j++)
		ref[j] = f((long double)get_f(x, j));
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(UNARY_SRC, "T", dts[t].name, "FN", name, NULL), "k", ARGS(P(dx), P(dout), I(N)),
	                     NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = max_ulp(dev_read(dout, t, N), ref, &x, 1, 0) == 0;
	free(ref);
	result(ok, "%s %s: exact", name, dts[t].name);
}

static const char *PRED_SRC =
	"kernel k(x: *$T, out: *i32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let a = load(x + offs, mask = m);\n"
	"    let r = isnan(a).to(i32) + 2 * isinf(a).to(i32) + 4 * isfinite(a).to(i32) + 8 * signbit(a).to(i32);\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static void predicate_case(dt t)
{
	arr x = arr_new(t, N), want = arr_new(DT_I32, N);
	fill_random(x, 1000);
	double sp[32];
	int ns = specials(t, sp);
	for (int i = 0; i < ns; i++)
		set_f(x, i, sp[i]);
	for (int64_t i = 0; i < N; i++) {
		double v = get_f(x, i);
		set_i(want, i, isnan(v) + 2 * !!isinf(v) + 4 * !!isfinite(v) + 8 * !!signbit(v));
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_I32, N);
	bool ok = run_kernel(render(PRED_SRC, "T", dts[t].name, NULL), "k", ARGS(P(dx), P(dout), I(N)), NO_CONSTS,
	                     GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_I32, N), want, &x, 1);
	result(ok, "isnan isinf isfinite signbit %s", dts[t].name);
}

static const char *LDEXP_SRC =
	"kernel k(x: *$T, e: *i32, out: *$T, mo: *$T, eo: *i32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let a = load(x + offs, mask = m);\n"
	"    let r: $T = ldexp(a, load(e + offs, mask = m));\n"
	"    store(out + offs, r, mask = m);\n"
	"    let (fm, fe) = frexp(a);\n"
	"    store(mo + offs, fm, mask = m);\n"
	"    store(eo + offs, fe, mask = m);\n"
	"}\n";

/* ldexp against the host's, exact (a subnormal result rounds once), and
 * frexp: x = m 2^e with |m| in [0.5, 1) */
static void ldexp_case(dt t)
{
	arr x = arr_new(t, N), e = arr_new(DT_I32, N), want = arr_new(t, N), wm = arr_new(t, N), we = arr_new(DT_I32, N);
	double sp[32];
	int ns = specials(t, sp), i = 0;
	for (; i < ns; i++) {
		set_f(x, i, sp[i]);
		set_i(e, i, (int)rng_range(-5, 5));
	}
	int span = t == DT_F64 ? 2200 : t == DT_F16 ? 50 : 300;
	for (; i < N; i++) {
		set_f(x, i, i % 2 ? rng_uniform(-10, 10) : ldexp(rng_uniform(-1, 1), (int)rng_range(-span / 2, span / 2)));
		set_i(e, i, i % 50 == 0 ? (i % 100 ? 2147483647 : -2147483647) : (int)rng_range(-span, span));
	}
	for (int64_t j = 0; j < N; j++) {
		double v = get_f(x, j);
		int ex = 0;
		double m = frexp(v, &ex);
		set_f(want, j, round_to(t, ldexp(v, (int)get_i(e, j))));
		if (t != DT_F64) { /* one rounding from the exact value */
			long double exact = ldexpl((long double)v, (int)get_i(e, j));
			set_f(want, j, round_to(t, (double)exact == exact ? (double)exact : ldexp(v, (int)get_i(e, j))));
		}
		set_f(wm, j, isfinite(v) ? m : v);
		set_i(we, j, isfinite(v) ? ex : 0);
	}
	blk_devptr dx = dev_from(x), de = dev_from(e), dout = dev_zeros(t, N), dm = dev_zeros(t, N), dex = dev_zeros(DT_I32, N);
	bool ok = run_kernel(render(LDEXP_SRC, "T", dts[t].name, NULL), "k", ARGS(P(dx), P(de), P(dout), P(dm), P(dex), I(N)),
	                     NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	arr ins[2] = {x, e};
	if (ok)
		ok = check_exact(dev_read(dout, t, N), want, ins, 2) && check_exact(dev_read(dm, t, N), wm, &x, 1) &&
		     check_exact(dev_read(dex, DT_I32, N), we, &x, 1);
	result(ok, "ldexp frexp %s: exact", dts[t].name);
}

static const char *POW_OP_SRC =
	"kernel k(x: *f32, out: *f32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let a = load(x + offs, mask = m);\n"
	"    let r: f32 = -a**2 + 2**10 + 2 ** 3 ** 2 + a ** -1.5 + (-2) ** 3 + 2.0 ** -1 + (-1) ** 5;\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

/* the ** operator: pow, right-associative, binding tighter than a unary
 * minus on its left (-a**2 is -(a**2)); integer literals give an integer */
static void pow_operator_case(void)
{
	arr x = arr_new(DT_F32, 64), want = arr_new(DT_F32, 64);
	for (int i = 0; i < 64; i++) {
		set_f(x, i, (double)(i + 1) / 4);
		double a = get_f(x, i);
		float r = -(float)(a * a) + 1024.0f + 512.0f;
		r += (float)pow(a, -1.5);
		r += -8.0f + 0.5f - 1.0f;
		set_f(want, i, r);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_F32, 64);
	bool ok = run_kernel(POW_OP_SRC, "k", ARGS(P(dx), P(dout), I(64)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_F32, 64), want, &x, 1);
	result(ok, "the ** operator: -a**2 + 2**10 + 2 ** 3 ** 2 + a ** -1.5 + (-2) ** 3 + 2.0 ** -1 + (-1) ** 5");
}

/* BLK_LIBM_ONLY=NAME[:TYPE] runs the unary cases of that function (and
 * type) alone, with contraction on (a shortcut while working on one) */
static bool wanted(const char *name, dt t)
{
	const char *only = getenv("BLK_LIBM_ONLY");
	if (!only || !*only)
		return true;
	size_t n = strcspn(only, ":");
	if (strlen(name) != n || strncmp(name, only, n) != 0)
		return false;
	return only[n] != ':' || strcmp(only + n + 1, dts[t].name) == 0;
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	const char *only = getenv("BLK_LIBM_ONLY");
	if (only && *only) {
		fusion_const[0] = (blk_const){.name = "fp_fusion", .i = 1};
		for (int f = 0; f < COUNT(FNS); f++)
			for (int t = 0; t < COUNT(FLOATS); t++)
				if ((FLOATS[t] != DT_F64 || FNS[f].b64 >= 0) && wanted(FNS[f].name, FLOATS[t]))
					unary_case(&FNS[f], FLOATS[t]);
		for (int f = 0; f < COUNT(FNS); f++)
			if (FNS[f].b64 >= 0 && wanted(FNS[f].name, DT_F64) && (f == 0 || strcmp(FNS[f - 1].name, FNS[f].name) != 0))
				table_case(&FNS[f]);
		return ops_finish();
	}
	for (fusion = 1; fusion >= 0; fusion--) {
		fusion_const[0] = (blk_const){.name = "fp_fusion", .i = fusion};
		for (int f = 0; f < COUNT(FNS); f++)
			for (int t = 0; t < COUNT(FLOATS); t++)
				if ((FLOATS[t] != DT_F64 || FNS[f].b64 >= 0) && wanted(FNS[f].name, FLOATS[t]))
					unary_case(&FNS[f], FLOATS[t]);
		for (int f = 0; f < COUNT(FNS); f++) /* once a function (lgamma has two rows) */
			if (FNS[f].b64 >= 0 && (f == 0 || strcmp(FNS[f - 1].name, FNS[f].name) != 0))
				table_case(&FNS[f]);
		for (int f = 0; f < COUNT(FNS2); f++)
			for (int t = 0; t < COUNT(FLOATS); t++)
				if (FLOATS[t] != DT_F64 || FNS2[f].b64 >= 0)
					binary_case(&FNS2[f], FLOATS[t]);
	}
	for (int t = 0; t < COUNT(FLOATS); t++) {
		exact_case("trunc", truncl, FLOATS[t]);
		exact_case("round", round_ld, FLOATS[t]);
		exact_case("rint", rintl, FLOATS[t]);
		predicate_case(FLOATS[t]);
		ldexp_case(FLOATS[t]);
	}
	pow_operator_case();
	return ops_finish();
}
