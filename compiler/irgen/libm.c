/* libm.c: the math functions that expand into IR ops (language.md, "Math
 * functions in IR"): tanh below f64, pow (and **), tan, the inverse and
 * hyperbolic functions, log1p, expm1, log10, exp10, cbrt, hypot, erfc,
 * erfinv, lgamma, tgamma, the Bessel functions i0 i1 j0 j1 y0 y1, and the
 * exact ones (copysign, ldexp, frexp, nextafter, remainder, fmod, the
 * predicates).
 *
 * Each is a fixed sequence of ops that both backends compute to the bit
 * (libm_ops.c), so the interpreter and the GPU agree exactly; tanh's one
 * ex2.approx is the exception its table row states. Polynomials are Taylor
 * (or asymptotic) series after an argument reduction, summed by fmas from
 * the highest term (or a Chebyshev interpolant: tanh, atan2; minimax fits:
 * pow of f32).
 * f16 and bf16 compute in f32 and round once; pow_precise, cbrt, hypot,
 * erfc, erfinv, lgamma, tgamma and the Bessel functions of f32 compute in
 * f64, still exact ops; their f64 forms are in libm_f64.c.
 * Arguments that are all literals fold with the host's libm. */
#include "irgen/libm_int.h"

#include <math.h>

static const double LN2_HI32 = 6.93145751953125e-01, LN2_LO32 = 1.42860682030941723212e-06;
static const double LN2_HI64 = 6.93147180369123816490e-01, LN2_LO64 = 1.90821492927058770002e-10;

static bool dbl(const Lm *m) { return m->k == SK_F64; }

/* 1/n! for n = 1.. (e^r - 1 = r (c[0] + r c[1] + ...)) */
static int exp_terms(const Lm *m, double *c)
{
	int n = dbl(m) ? 14 : 8;
	double f = 1;
	for (int i = 0; i < n; i++) {
		f *= i + 1;
		c[i] = 1 / f;
	}
	return n;
}

/* e^(hi + lo) 2^adj and e^(hi + lo) - 1 (em1, when not NULL, valid where
 * adj is 0): n = rint(hi / ln 2), r = hi - n ln 2 in two fmas, a Taylor
 * series, then 2^n in two factors so that a subnormal result rounds once. */
Value *lm_exp_core(Lm *m, Value *hi, Value *lo, int adj, Value **em1)
{
	bool d = dbl(m);
	/* past top the result overflows (2^n p overflows on its own before),
	 * below bottom it is 0 */
	double top = d ? 712 : 91, bottom = d ? -746 : -104;
	Value *xc = lm_max(m, lm_min(m, hi, lm_k(m, top + 2)), lm_k(m, bottom - 2));
	Value *n = lm_math(m, MATH_RINT, lm_mul(m, xc, lm_k(m, 1.44269504088896338700)));
	Value *nn = lm_neg(m, n);
	Value *r = lm_fma(m, nn, lm_k(m, d ? LN2_HI64 : LN2_HI32), xc);
	r = lm_fma(m, nn, lm_k(m, d ? LN2_LO64 : LN2_LO32), r);
	if (lo)
		r = lm_add(m, r, lo);
	double c[16];
	int nt = exp_terms(m, c);
	Value *e1 = lm_mul(m, r, lm_poly(m, r, c, nt)); /* e^r - 1 */
	Value *p = lm_add(m, e1, lm_k(m, 1));
	Value *ni = lm_iadd(m, lm_to_int(m, n), lm_ki(m, adj));
	Value *n1 = lm_shr(m, ni, 1), *n2 = lm_isub(m, ni, n1);
	Value *v = lm_mul(m, lm_mul(m, p, lm_pow2i(m, n1)), lm_pow2i(m, n2));
	if (em1) {
		/* 2^n (1 + e1) - 1 = 2^n e1 + (2^n - 1), exact 2^n - 1 for small n */
		int lim = d ? 52 : 23;
		Value *s = lm_pow2i(m, lm_max(m, lm_min(m, lm_to_int(m, n), lm_ki(m, lim)), lm_ki(m, -lim)));
		Value *small = lm_and(m, lm_cmp(m, CMP_LE, n, lm_k(m, lim)), lm_cmp(m, CMP_GE, n, lm_k(m, -lim)));
		*em1 = lm_sel(m, small, lm_fma(m, s, e1, lm_sub(m, s, lm_k(m, 1))), lm_sub(m, v, lm_k(m, 1)));
		*em1 = lm_sel(m, lm_cmp(m, CMP_GT, hi, lm_k(m, top)), lm_k(m, INFINITY), *em1);
		*em1 = lm_sel(m, lm_cmp(m, CMP_LT, hi, lm_k(m, bottom)), lm_k(m, -1), *em1);
		*em1 = lm_sel(m, lm_isnan(m, hi), hi, *em1);
	}
	v = lm_sel(m, lm_cmp(m, CMP_GT, hi, lm_k(m, top)), lm_k(m, INFINITY), v);
	v = lm_sel(m, lm_cmp(m, CMP_LT, hi, lm_k(m, bottom)), lm_k(m, 0), v);
	return lm_sel(m, lm_isnan(m, hi), hi, v);
}

/* log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]: with s = f / (2 + f),
 * log(1 + f) = 2 atanh(s) = f - s (f - R), R = 2 s^2 / 3 + 2 s^4 / 5 + ...;
 * the rounding of s only touches the small term s (f - R). */
static Value *log1p_reduced(Lm *m, Value *f)
{
	double c[14];
	int n = dbl(m) ? 13 : 6;
	for (int i = 0; i < n; i++)
		c[i] = 2.0 / (2 * i + 3);
	Value *s = lm_div(m, f, lm_add(m, f, lm_k(m, 2)));
	Value *z = lm_mul(m, s, s);
	Value *rr = lm_mul(m, z, lm_poly(m, z, c, n));
	return lm_fma(m, lm_neg(m, s), lm_sub(m, f, rr), f);
}

/* x = 2^ef mant with mant in [sqrt(1/2), sqrt(2)), for x > 0 (subnormals
 * first scaled up) */
static Value *log_reduce(Lm *m, Value *x, Value **ef)
{
	bool d = dbl(m);
	Value *tiny = lm_cmp(m, CMP_LT, x, lm_k(m, d ? 0x1p-1022 : 0x1p-126));
	Value *xs = lm_sel(m, tiny, lm_mul(m, x, lm_k(m, d ? 0x1p54 : 0x1p25)), x);
	Value *bits = lm_bits(m, xs);
	Value *e = lm_isub(m, lm_shr(m, bits, m->mbits), lm_ki(m, m->bias));
	int64_t mask = lm_low_bits(m->mbits);
	Value *mant = lm_float(m, lm_or(m, lm_and(m, bits, lm_ki(m, mask)), lm_ki(m, (int64_t)m->bias << m->mbits)));
	Value *big = lm_cmp(m, CMP_GT, mant, lm_k(m, 1.41421356237309504880));
	mant = lm_sel(m, big, lm_mul(m, mant, lm_k(m, 0.5)), mant);
	*ef = lm_add(m, lm_from_int(m, e), lm_sel(m, big, lm_k(m, 1), lm_k(m, 0)));
	*ef = lm_sub(m, *ef, lm_sel(m, tiny, lm_k(m, d ? 54 : 25), lm_k(m, 0)));
	return mant;
}

/* log's special values: log(0) = -inf, log(negative) = NaN, log(inf) = inf, NaN */
static Value *log_special(Lm *m, Value *x, Value *v)
{
	v = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), lm_k(m, -INFINITY), v);
	v = lm_sel(m, lm_cmp(m, CMP_LT, x, lm_k(m, 0)), lm_k(m, NAN), v);
	v = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, INFINITY)), x, v);
	return lm_sel(m, lm_isnan(m, x), x, v);
}

/* natural log of x: x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)];
 * log = e ln2_hi + (e ln2_lo + log(1 + f)), e ln2_hi exact. With corr, adds
 * corr / x first (log1p's rounding correction). */
Value *lm_log_core(Lm *m, Value *x, Value *corr)
{
	bool d = dbl(m);
	Value *ef;
	Value *mant = log_reduce(m, x, &ef);
	Value *lp = log1p_reduced(m, lm_sub(m, mant, lm_k(m, 1)));
	if (corr)
		lp = lm_add(m, lp, lm_div(m, corr, x));
	Value *v = lm_fma(m, ef, lm_k(m, d ? LN2_HI64 : LN2_HI32), lm_fma(m, ef, lm_k(m, d ? LN2_LO64 : LN2_LO32), lp));
	return log_special(m, x, v);
}

/* log of an f64 x > 0 as hi + *lo, to about 2^-65 relative (pow's): as
 * lm_log_core, with s = f / (2 + f) carried in two parts (2 + f and the
 * quotient's remainder by fmas) and the sum with e ln 2 by two-sum */
Value *lm_log_dd(Lm *m, Value *x, Value **lo)
{
	Value *ef;
	Value *f = lm_sub(m, log_reduce(m, x, &ef), lm_k(m, 1));
	Value *u = lm_add(m, f, lm_k(m, 2));
	Value *ulo = lm_add(m, lm_sub(m, lm_k(m, 2), u), f); /* exact: |2| > |f| */
	Value *s = lm_div(m, f, u);
	Value *rem = lm_fma(m, lm_neg(m, s), ulo, lm_fma(m, lm_neg(m, s), u, f));
	Value *slo = lm_div(m, rem, u);
	/* 2 atanh(s) = 2s + (2/3) s^3 + 2 s^5 (1/5 + s^2/7 + ...): the s^3 term
	 * in two parts too, with slo's share 2 s^2 slo */
	double c[13];
	for (int i = 0; i < 13; i++)
		c[i] = 1.0 / (2 * i + 5);
	double c1h = 2.0 / 3, c1l = (double)(2.0L / 3 - (long double)c1h);
	Value *s2 = lm_add(m, s, s), *z = lm_mul(m, s, s), *zlo = lm_fma(m, s, s, lm_neg(m, z));
	Value *c3 = lm_mul(m, z, s);
	Value *c3lo = lm_fma(m, lm_mul(m, z, lm_k(m, 3)), slo, lm_fma(m, zlo, s, lm_fma(m, z, s, lm_neg(m, c3))));
	Value *t1 = lm_mul(m, c3, lm_k(m, c1h));
	Value *t1lo = lm_fma(m, c3, lm_k(m, c1l), lm_fma(m, c3lo, lm_k(m, c1h), lm_fma(m, c3, lm_k(m, c1h), lm_neg(m, t1))));
	Value *rest = lm_mul(m, lm_mul(m, lm_add(m, c3, c3), z), lm_poly(m, z, c, 13));
	Value *q = lm_add(m, s2, t1);
	Value *qerr = lm_sub(m, t1, lm_sub(m, q, s2)); /* exact: |2s| > |t1| */
	Value *l = lm_add(m, lm_add(m, lm_add(m, slo, slo), qerr), lm_add(m, t1lo, rest));
	s2 = q;
	Value *a = lm_mul(m, ef, lm_k(m, LN2_HI64)); /* exact */
	Value *sum = lm_add(m, a, s2);
	Value *bb = lm_sub(m, sum, a);
	Value *err = lm_add(m, lm_sub(m, a, lm_sub(m, sum, bb)), lm_sub(m, s2, bb));
	Value *low = lm_add(m, err, lm_fma(m, ef, lm_k(m, LN2_LO64), l));
	Value *hi = lm_add(m, sum, low);
	*lo = lm_sub(m, low, lm_sub(m, hi, sum));
	return log_special(m, x, hi);
}

/* ---- the functions: x is a block of m->k ---------------------------------- */

static Value *f_exp_m1(Lm *m, Value *x)
{
	Value *em1 = NULL;
	lm_exp_core(m, x, NULL, 0, &em1);
	return lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), x, em1); /* keeps -0 */
}

/* log1p: u = 1 + x rounded, x - (u - 1) its rounding error, added as
 * (x - (u - 1)) / u to log(u) */
static Value *f_log1p(Lm *m, Value *x)
{
	Value *u = lm_add(m, x, lm_k(m, 1));
	Value *corr = lm_sub(m, x, lm_sub(m, u, lm_k(m, 1)));
	Value *v = lm_log_core(m, u, corr);
	v = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, INFINITY)), x, v);
	return lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), x, v);
}

static Value *f_log10(Lm *m, Value *x)
{
	/* log(x) / ln 10 as log * c_hi + log * c_lo */
	double c = 0.43429448190325182765, hi = dbl(m) ? c : (double)(float)c, lo = c - hi;
	Value *l = lm_log_core(m, x, NULL);
	Value *v = lm_fma(m, l, lm_k(m, hi), lm_mul(m, l, lm_k(m, lo)));
	return lm_sel(m, lm_cmp(m, CMP_LT, lm_abs(m, l), lm_k(m, INFINITY)), v, l);
}

/* 10^x = e^(x ln 10), x ln 10 split into a rounded product and its error */
static Value *f_exp10(Lm *m, Value *x)
{
	double c = 2.30258509299404568402, hi = dbl(m) ? c : (double)(float)c, lo = dbl(m) ? -2.1707562233822494e-16 : c - hi;
	Value *p = lm_mul(m, x, lm_k(m, hi));
	Value *err = lm_fma(m, x, lm_k(m, lo), lm_fma(m, x, lm_k(m, hi), lm_neg(m, p)));
	return lm_exp_core(m, p, lm_sel(m, lm_cmp(m, CMP_LT, lm_abs(m, x), lm_k(m, INFINITY)), err, lm_k(m, 0)), 0, NULL);
}

/* sinh: a Taylor series below |x| = 1; above, h - 1/(4h) with h = e^|x| / 2 */
static Value *f_sinh(Lm *m, Value *x)
{
	double c[12];
	int n = dbl(m) ? 11 : 7;
	double f = 1;
	for (int i = 0; i < n; i++) {
		c[i] = 1 / f; /* 1/(2i+1)! */
		f *= (2 * i + 2) * (2 * i + 3);
	}
	Value *a = lm_abs(m, x);
	Value *x2 = lm_mul(m, x, x);
	Value *small = lm_fma(m, lm_mul(m, x, x2), lm_poly(m, x2, c + 1, n - 1), x);
	Value *h = lm_exp_core(m, a, NULL, -1, NULL);
	Value *big = lm_copysign(m, lm_sub(m, h, lm_div(m, lm_k(m, 0.25), h)), x);
	return lm_sel(m, lm_cmp(m, CMP_LT, a, lm_k(m, 1)), small, big);
}

static Value *f_cosh(Lm *m, Value *x)
{
	Value *h = lm_exp_core(m, lm_abs(m, x), NULL, -1, NULL);
	return lm_add(m, h, lm_div(m, lm_k(m, 0.25), h));
}

/* 1 / d for f32 d in [1, 2^126], without a division: a first guess from
 * the bits (within 5.1%), then three Newton steps r += r (1 - d r) by fmas
 * (within 2^-24 relative). Every op an f32 op: both backends compute the same
 * bits; no branch, where div.rn.f32 has a slow path. */
static Value *recip_f32(Lm *m, Value *d)
{
	Value *r = lm_float(m, lm_isub(m, lm_ki(m, 0x7ef311c3), lm_bits(m, d)));
	for (int i = 0; i < 3; i++)
		r = lm_fma(m, r, lm_fma(m, lm_neg(m, d), r, lm_k(m, 1)), r);
	return r;
}

/* tanh below f64: below |x| = 0.55, x + x^3 P(x^2), P Chebyshev's
 * interpolant of degree 4 of (tanh(x) / x - 1) / x^2 on [0, 0.3025] (within
 * 1.4e-8 relative, evaluated in f32); above it 1 - 2 / (e + 1), e =
 * 2^(2 |x| log2 e) by the GPU's ex2.approx (exp2), |x| taken at most 9.5
 * (tanh rounds to 1 from 9.011), 1 / (e + 1) by recip_f32 */
static Value *f_tanh(Lm *m, Value *x)
{
	static const double P[] = {-0.3333333134651184, 0.13333113491535187, -0.053909413516521454,
	                           0.02130929008126259, -0.0066100419498980045};
	Value *a = lm_abs(m, x);
	Value *x2 = lm_mul(m, x, x);
	Value *small = lm_fma(m, lm_mul(m, x, x2), lm_poly(m, x2, P, 5), x);
	Value *e = lm_math(m, MATH_EXP2, lm_mul(m, lm_min(m, a, lm_k(m, 9.5)), lm_k(m, 2.88539008177792681472)));
	Value *big = lm_fma(m, recip_f32(m, lm_add(m, e, lm_k(m, 1))), lm_k(m, -2), lm_k(m, 1));
	/* NaN fails the comparison and takes the polynomial, which keeps it */
	Value *v = lm_sel(m, lm_cmp(m, CMP_GE, a, lm_k(m, 0.55)), lm_copysign(m, big, x), small);
	return lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), x, v); /* keeps -0 */
}

/* tan: x = k pi/2 + r by three fmas (as sin and cos), sin r and cos r by
 * Taylor series, then s / c or -c / s by k's parity */
static Value *f_tan(Lm *m, Value *x)
{
	bool d = dbl(m);
	Value *kq = lm_math(m, MATH_RINT, lm_mul(m, x, lm_k(m, 0.63661977236758134308)));
	Value *nk = lm_neg(m, kq);
	Value *r = lm_fma(m, nk, lm_k(m, d ? 1.57079632673412561417e+00 : 1.5707855225e+00), x);
	r = lm_fma(m, nk, lm_k(m, d ? 6.07710050630396597660e-11 : 1.0804273188e-05), r);
	r = lm_fma(m, nk, lm_k(m, d ? 2.02226624879595063154e-21 : 6.0770943833e-11), r);
	int n = d ? 11 : 7;
	double sc[12], cc[12], f = 1;
	for (int i = 0; i < n; i++) {
		sc[i] = (i % 2 ? -1 : 1) / f;
		f *= (2 * i + 2) * (2 * i + 3);
	}
	f = 1;
	for (int i = 0; i < n; i++) {
		cc[i] = (i % 2 ? -1 : 1) / f;
		f *= (2 * i + 1) * (2 * i + 2);
	}
	Value *r2 = lm_mul(m, r, r);
	Value *s = lm_fma(m, lm_mul(m, r, r2), lm_poly(m, r2, sc + 1, n - 1), r);
	Value *c = lm_poly(m, r2, cc, n);
	Value *half = lm_mul(m, kq, lm_k(m, 0.5));
	Value *odd = lm_cmp(m, CMP_NE, lm_math(m, MATH_TRUNC, half), half);
	Value *v = lm_sel(m, odd, lm_neg(m, lm_div(m, c, s)), lm_div(m, s, c));
	return lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), x, v); /* keeps -0 */
}

/* atan of t >= 0 (or NaN): 1/t above 1, then (u - 1)/(u + 1) and pi/4 above
 * tan(pi/8), then the Taylor series on |w| <= tan(pi/8) */
static Value *atan_pos(Lm *m, Value *t)
{
	bool d = dbl(m);
	Value *inv = lm_cmp(m, CMP_GT, t, lm_k(m, 1));
	Value *u = lm_sel(m, inv, lm_div(m, lm_k(m, 1), t), t);
	Value *mid = lm_cmp(m, CMP_GT, u, lm_k(m, 0.41421356237309504880));
	Value *w = lm_sel(m, mid, lm_div(m, lm_sub(m, u, lm_k(m, 1)), lm_add(m, u, lm_k(m, 1))), u);
	double c[24];
	int n = d ? 23 : 10;
	for (int i = 0; i < n; i++)
		c[i] = (i % 2 ? 1.0 : -1.0) / (2 * i + 3); /* -1/3, 1/5, ... */
	Value *z = lm_mul(m, w, w);
	Value *aw = lm_fma(m, lm_mul(m, w, z), lm_poly(m, z, c, n), w);
	double q_hi = 7.85398163397448278999e-01, q_lo = 3.06161699786838301793e-17;
	if (!d) {
		q_hi = (double)(float)q_hi;
		q_lo = 7.85398163397448309616e-01 - q_hi;
	}
	Value *a = lm_sel(m, mid, lm_add(m, lm_k(m, q_hi), lm_add(m, aw, lm_k(m, q_lo))), aw);
	/* pi/2 - a as (2 q_hi - a) + 2 q_lo */
	return lm_sel(m, inv, lm_add(m, lm_sub(m, lm_k(m, 2 * q_hi), a), lm_k(m, 2 * q_lo)), a);
}

/* the angle of (x, y) for x, y >= 0, in [0, pi/2]: atan of the smaller over
 * the larger */
static Value *angle_pos(Lm *m, Value *y, Value *x)
{
	Value *ygt = lm_cmp(m, CMP_GT, y, x);
	Value *mx = lm_sel(m, ygt, y, x), *mn = lm_sel(m, ygt, x, y);
	Value *t = lm_div(m, mn, mx);
	t = lm_sel(m, lm_cmp(m, CMP_EQ, mx, lm_k(m, 0)), lm_k(m, 0), t);
	t = lm_sel(m, lm_cmp(m, CMP_EQ, mn, lm_k(m, INFINITY)), lm_k(m, 1), t);
	Value *a = atan_pos(m, t);
	bool d = dbl(m);
	double h_hi = 1.57079632679489655800e+00, h_lo = 6.12323399573676603587e-17;
	if (!d) {
		h_hi = (double)(float)h_hi;
		h_lo = 1.57079632679489661923 - h_hi;
	}
	return lm_sel(m, ygt, lm_add(m, lm_sub(m, lm_k(m, h_hi), a), lm_k(m, h_lo)), a);
}

/* angle_pos for f32 with one division: t = min / max correctly rounded,
 * then atan t on [0, 1] as t + t^3 P(t^2), P Chebyshev's interpolant of
 * degree 8 in t^2 (within 4.2e-8 relative, evaluated in f32), without the
 * reductions of atan_pos (each another division) */
static Value *angle_pos_f32(Lm *m, Value *y, Value *x)
{
	static const double P[] = {-0.3333333134651184,   0.19999739527702332, -0.1427856832742691,
	                           0.11033764481544495,   -0.08656880259513855, 0.0625016912817955,
	                           -0.035871539264917374, 0.01350777130573988,  -0.0023869972210377455};
	Value *ygt = lm_cmp(m, CMP_GT, y, x);
	Value *mx = lm_sel(m, ygt, y, x), *mn = lm_sel(m, ygt, x, y);
	Value *t = lm_div(m, mn, mx);
	t = lm_sel(m, lm_cmp(m, CMP_EQ, mx, lm_k(m, 0)), lm_k(m, 0), t);
	t = lm_sel(m, lm_cmp(m, CMP_EQ, mn, lm_k(m, INFINITY)), lm_k(m, 1), t);
	Value *z = lm_mul(m, t, t);
	Value *a = lm_fma(m, lm_mul(m, t, z), lm_poly(m, z, P, 9), t);
	double h_hi = (double)(float)1.57079632679489661923, h_lo = 1.57079632679489661923 - h_hi;
	return lm_sel(m, ygt, lm_add(m, lm_sub(m, lm_k(m, h_hi), a), lm_k(m, h_lo)), a);
}

static Value *pi_minus(Lm *m, Value *a)
{
	double p_hi = 3.14159265358979311600e+00, p_lo = 1.22464679914735317720e-16;
	if (!dbl(m)) {
		p_hi = (double)(float)p_hi;
		p_lo = 3.14159265358979323846 - p_hi;
	}
	return lm_add(m, lm_sub(m, lm_k(m, p_hi), a), lm_k(m, p_lo));
}

static Value *f_atan(Lm *m, Value *x) { return lm_copysign(m, atan_pos(m, lm_abs(m, x)), x); }

static Value *f_atan2(Lm *m, Value *y, Value *x)
{
	Value *a = (dbl(m) ? angle_pos : angle_pos_f32)(m, lm_abs(m, y), lm_abs(m, x));
	a = lm_sel(m, lm_signbit(m, x), pi_minus(m, a), a);
	Value *v = lm_copysign(m, a, y);
	return lm_sel(m, lm_or(m, lm_isnan(m, x), lm_isnan(m, y)), lm_add(m, x, y), v);
}

/* sqrt(1 - x^2) rounded once before the root (an fma) */
static Value *cosine_side(Lm *m, Value *a) { return lm_math(m, MATH_SQRT_RN, lm_fma(m, lm_neg(m, a), a, lm_k(m, 1))); }

static Value *f_asin(Lm *m, Value *x)
{
	Value *a = lm_abs(m, x);
	Value *v = lm_copysign(m, angle_pos(m, a, cosine_side(m, a)), x);
	return lm_sel(m, lm_cmp(m, CMP_LE, a, lm_k(m, 1)), v, lm_k(m, NAN));
}

static Value *f_acos(Lm *m, Value *x)
{
	Value *a = lm_abs(m, x);
	Value *v = angle_pos(m, cosine_side(m, a), a);
	v = lm_sel(m, lm_cmp(m, CMP_LT, x, lm_k(m, 0)), pi_minus(m, v), v);
	return lm_sel(m, lm_cmp(m, CMP_LE, a, lm_k(m, 1)), v, lm_k(m, NAN));
}

/* asinh: log1p(a + a^2 / (1 + sqrt(1 + a^2))), log(a) + ln 2 for large a */
static Value *f_asinh(Lm *m, Value *x)
{
	Value *a = lm_abs(m, x);
	Value *a2 = lm_mul(m, a, a);
	Value *q = lm_div(m, a2, lm_add(m, lm_k(m, 1), lm_math(m, MATH_SQRT_RN, lm_add(m, lm_k(m, 1), a2))));
	Value *mid = f_log1p(m, lm_add(m, a, q));
	Value *big = lm_add(m, lm_log_core(m, a, NULL), lm_k(m, 0.69314718055994530942));
	Value *v = lm_sel(m, lm_cmp(m, CMP_GT, a, lm_k(m, dbl(m) ? 0x1p28 : 0x1p13)), big, mid);
	return lm_copysign(m, v, x);
}

static Value *f_acosh(Lm *m, Value *x)
{
	Value *t = lm_sub(m, x, lm_k(m, 1));
	Value *near1 = f_log1p(m, lm_add(m, t, lm_math(m, MATH_SQRT_RN, lm_fma(m, t, t, lm_add(m, t, t)))));
	Value *mid = lm_log_core(m, lm_add(m, x, lm_math(m, MATH_SQRT_RN, lm_fma(m, x, x, lm_k(m, -1)))), NULL);
	Value *big = lm_add(m, lm_log_core(m, x, NULL), lm_k(m, 0.69314718055994530942));
	Value *v = lm_sel(m, lm_cmp(m, CMP_GT, x, lm_k(m, dbl(m) ? 0x1p28 : 0x1p13)), big, mid);
	v = lm_sel(m, lm_cmp(m, CMP_LT, x, lm_k(m, 2)), near1, v);
	return lm_sel(m, lm_cmp(m, CMP_LT, x, lm_k(m, 1)), lm_k(m, NAN), v);
}

static Value *f_atanh(Lm *m, Value *x)
{
	Value *a = lm_abs(m, x);
	Value *v = lm_mul(m, f_log1p(m, lm_div(m, lm_add(m, a, a), lm_sub(m, lm_k(m, 1), a))), lm_k(m, 0.5));
	v = lm_sel(m, lm_cmp(m, CMP_GT, a, lm_k(m, 1)), lm_k(m, NAN), v);
	return lm_copysign(m, v, x);
}

/* log x of an f32 x > 0 as hi + *lo, to about 2^-33 relative, every op an
 * f32 op: x = 2^e m with m in [sqrt(1/2), sqrt(2)) by the bits (the exponent
 * of x / sqrt(1/2), m's bits from x's less e's; subnormals scaled by 2^25
 * first), f = m - 1 (exact), s = f / (2 + f) as s + slo without a division:
 * 1 / (2 + f) from a quadratic in f (within 2^-9.5) and one Newton step
 * (2^-19, enough: slo's own error is that squared), s = f r, slo = (f - s (2
 * + f)) r by an fma. Then log m = 2 atanh(s) = 2s + (2/3) s^3 + ...: q = 2s
 * + c s^3 (c = 2/3 in f32) rounded once by an fma, its rounding error by a
 * second fma (2s - q is exact), s^3 with its error (fmas), and the rest,
 * s^3 ((2/3 - c) + s^2 R(s^2)) with R a fit within 2^-21, the low parts and
 * slo's share (2 + 2 s^2) slo in one sum; e ln 2 added by a fast two-sum
 * (|e ln 2| > |log m| unless e = 0), its error and the low parts in *lo
 * (not renormalized: |lo| may pass half an ulp of hi). +-0, +inf and NaN
 * give hi -inf, +inf, NaN. */
static Value *log_f32_dd(Lm *m, Value *x, Value **lo)
{
	Value *tiny = lm_cmp(m, CMP_LT, x, lm_k(m, 0x1p-126));
	Value *bits = lm_bits(m, lm_sel(m, tiny, lm_mul(m, x, lm_k(m, 0x1p25)), x));
	Value *ei = lm_shr(m, lm_isub(m, bits, lm_ki(m, 0x3f3504f3)), 23); /* arithmetic */
	Value *f = lm_sub(m, lm_float(m, lm_isub(m, bits, lm_shl(m, ei, 23))), lm_k(m, 1));
	Value *ef = lm_from_int(m, lm_isub(m, ei, lm_sel(m, tiny, lm_ki(m, 25), lm_ki(m, 0))));
	/* 1 / (2 + f): a relative minimax quartic on [sqrt(1/2) - 1, sqrt(2) - 1] (within 2^-16.6) */
	static const double RC[] = {0.4999963343143463, -0.24995312094688416, 0.1253425031900406,
	                            -0.0643395259976387, 0.02793360874056816};
	Value *r = lm_poly(m, f, RC, 5);
	Value *s = lm_mul(m, f, r), *s2 = lm_add(m, s, s);
	/* f - s (2 + f) = (f - 2s) - s f, f - 2s exact (2s / f = 2 / (2 + f) in [0.8, 1.2]) */
	Value *slo = lm_mul(m, lm_fma(m, lm_neg(m, s), f, lm_sub(m, f, s2)), r);
	Value *z = lm_mul(m, s, s), *zlo = lm_fma(m, s, s, lm_neg(m, z));
	Value *c3 = lm_mul(m, z, s);
	Value *c3lo = lm_fma(m, zlo, s, lm_fma(m, z, s, lm_neg(m, c3)));
	double c1h = (float)(2.0 / 3), c1l = (double)(2.0L / 3 - (long double)c1h);
	Value *q = lm_fma(m, c3, lm_k(m, c1h), s2);
	Value *qerr = lm_fma(m, c3, lm_k(m, c1h), lm_sub(m, s2, q)); /* s2 - q exact: q / s2 near 1 */
	/* (2 atanh(s) - 2s - (2/3) s^3) / s^5 = 2/5 + 2 z/7 + ...: a minimax quadratic on [0, 0.0295] */
	const double RR[] = {c1l, 0.4000001549720764, 0.28562167286872864, 0.23050783574581146};
	Value *rest = lm_mul(m, c3, lm_poly(m, z, RR, 4));
	Value *l = lm_fma(m, slo, lm_fma(m, z, lm_fma(m, z, lm_k(m, 2), lm_k(m, 2)), lm_k(m, 2)), lm_fma(m, c3lo, lm_k(m, c1h), lm_add(m, qerr, rest)));
	/* e ln2_hi is exact (15 bits times at most 8): hi = e ln2_hi + q and hi -
	 * e ln2_hi (exact, as in a two-sum) each by one fma */
	Value *hi = lm_fma(m, ef, lm_k(m, LN2_HI32), q);
	Value *d = lm_fma(m, ef, lm_k(m, -LN2_HI32), hi);
	/* left as it is, not renormalized: pow takes y hi and y lo apart */
	*lo = lm_add(m, lm_sub(m, q, d), lm_fma(m, ef, lm_k(m, LN2_LO32), l));
	hi = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), lm_k(m, -INFINITY), hi);
	hi = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, INFINITY)), x, hi);
	return lm_sel(m, lm_isnan(m, x), x, hi);
}

/* e^(t + tlo) for pow of f32, every op an f32 op: n = rint(t / ln 2) by
 * adding 1.5 2^23 in an fma (n's integer from the sum's bits), r = t - n
 * ln 2 (two fmas) + tlo, e^r = 1 + r P(r) with P a minimax fit, then 2^n in
 * two factors: n1 = rint(t / (2 ln 2)) by a second such fma, 2^n1 added to
 * e^r's exponent bits (a normal result) and a product by 2^(n - n1), so
 * that a subnormal result rounds once. t is clamped to [-106, 93] first, so
 * that past them the result overflows or rounds to 0 by itself, and tlo
 * (NaN where t is infinite, else within 2^-16) to [-1, 1]. Where t is NaN
 * the result is of no use (f_pow replaces it). */
static Value *exp_f32_dd(Lm *m, Value *t, Value *tlo)
{
	Value *tc = lm_max(m, lm_min(m, t, lm_k(m, 93)), lm_k(m, -106));
	tlo = lm_max(m, lm_min(m, tlo, lm_k(m, 1)), lm_k(m, -1)); /* NaN gives 1 */
	Value *big = lm_fma(m, tc, lm_k(m, 1.44269504088896338700), lm_k(m, 0x1.8p23));
	Value *n = lm_sub(m, big, lm_k(m, 0x1.8p23));
	/* n1 = rint(t / (2 ln 2)) the same way, n - n1 from the two sums' bits */
	Value *bigh = lm_fma(m, tc, lm_k(m, 0.72134752044448169350), lm_k(m, 0x1.8p23));
	Value *r = lm_fma(m, lm_neg(m, n), lm_k(m, LN2_HI32), tc);
	r = lm_add(m, lm_fma(m, lm_neg(m, n), lm_k(m, LN2_LO32), r), tlo);
	/* (e^r - 1) / r on |r| <= ln 2 / 2 + 2^-10: relative minimax */
	static const double P[] = {1.0, 0.4999999403953552, 0.16666428744792938, 0.04166801646351814,
	                           0.008374382741749287, 0.0013843378983438015};
	Value *p = lm_fma(m, r, lm_poly(m, r, P, 6), lm_k(m, 1));
	/* bigh's bits shifted by 23 are n1's (1.5 2^23's own shift out) */
	Value *v = lm_float(m, lm_iadd(m, lm_bits(m, p), lm_shl(m, lm_bits(m, bigh), 23)));
	return lm_mul(m, v, lm_pow2i(m, lm_isub(m, lm_bits(m, big), lm_bits(m, bigh))));
}

/* C's special cases of pow on r = |x|^y: the sign of an odd integer power
 * of a negative x, NaN for a negative x and a non-integer y, 1 for y = 0,
 * x = 1 and x = -1 with y infinite */
static Value *pow_sign_nan(Lm *m, Value *x, Value *y, Value *r)
{
	Value *half = lm_mul(m, y, lm_k(m, 0.5));
	Value *is_int = lm_cmp(m, CMP_EQ, lm_math(m, MATH_TRUNC, y), y);
	Value *odd = lm_and(m, is_int, lm_cmp(m, CMP_NE, lm_math(m, MATH_TRUNC, half), half));
	r = lm_sel(m, lm_and(m, lm_signbit(m, x), odd), lm_neg(m, r), r);
	/* x finite and negative as x < 0 and x >= -max: two float compares (x > -inf
	 * becomes a costlier class test of the bits); an infinite y counts as an
	 * integer (trunc(y) == y) */
	Value *neg_finite = lm_and(m, lm_cmp(m, CMP_LT, x, lm_k(m, 0)), lm_cmp(m, CMP_GE, x, lm_k(m, dbl(m) ? -0x1.fffffffffffffp1023 : -0x1.fffffep127)));
	return lm_sel(m, lm_and(m, neg_finite, lm_not(m, is_int)), lm_k(m, NAN), r);
}

static Value *pow_special(Lm *m, Value *x, Value *y, Value *r)
{
	r = pow_sign_nan(m, x, y, r);
	Value *yinf = lm_cmp(m, CMP_EQ, lm_abs(m, y), lm_k(m, INFINITY));
	Value *one = lm_or(m, lm_cmp(m, CMP_EQ, y, lm_k(m, 0)), lm_cmp(m, CMP_EQ, x, lm_k(m, 1)));
	one = lm_or(m, one, lm_and(m, yinf, lm_cmp(m, CMP_EQ, x, lm_k(m, -1))));
	return lm_sel(m, one, lm_k(m, 1), r);
}

/* |x|^y = e^(y log|x|): f64 with log|x| and the product in two parts; f32 the
 * same in f32 (log_f32_dd), every op an f32 op; then C's special cases */
static Value *f_pow(Lm *m, Value *x, Value *y)
{
	Value *llo;
	Value *l = dbl(m) ? lm_log_dd(m, lm_abs(m, x), &llo) : log_f32_dd(m, lm_abs(m, x), &llo);
	Value *t = lm_mul(m, y, l);
	Value *tlo = lm_fma(m, y, llo, lm_fma(m, y, l, lm_neg(m, t)));
	if (dbl(m)) {
		tlo = lm_sel(m, lm_cmp(m, CMP_LT, lm_abs(m, t), lm_k(m, INFINITY)), tlo, lm_k(m, 0));
		return pow_special(m, x, y, lm_exp_core(m, t, tlo, 0, NULL));
	}
	/* f32: |x| = 1 with a finite y gives t = 0 and exactly 1, as y = 0 with
	 * a finite nonzero x; t is NaN just where C's 1 is still wanted (y = 0
	 * with x 0, infinite or NaN; |x| = 1 with y infinite or NaN: x = -1
	 * with y NaN then gets its NaN from the non-integer y), or where x or y
	 * is NaN: so one test of t's NaN picks 1 or t */
	Value *one = lm_or(m, lm_cmp(m, CMP_EQ, y, lm_k(m, 0)), lm_cmp(m, CMP_EQ, lm_abs(m, x), lm_k(m, 1)));
	Value *v = lm_sel(m, lm_isnan(m, t), lm_sel(m, one, lm_k(m, 1), t), exp_f32_dd(m, t, tlo));
	return pow_sign_nan(m, x, y, v);
}

/* pow_precise of f32: e^(y log|x|) in f64 (log and exp as lm_log_core and
 * lm_exp_core there), rounded once to f32; f64 as pow */
static Value *f_pow_precise(Lm *m, Value *x, Value *y)
{
	if (dbl(m))
		return f_pow(m, x, y);
	Lm w = lm_ctx(m->g, m->at, SK_F64, m->t);
	Value *xd = lm_convert(&w, lm_abs(m, x), SK_F64), *yd = lm_convert(&w, y, SK_F64);
	Value *t = lm_mul(&w, yd, lm_log_core(&w, xd, NULL));
	Value *r = lm_convert(&w, lm_exp_core(&w, t, NULL, 0, NULL), m->k);
	if (!w.ok)
		m->ok = false;
	return pow_special(m, x, y, r);
}

/* cbrt for f32 in f64: a first guess from the bits (the exponent divided by
 * 3), then Newton steps y = (2 y + a / y^2) / 3 */
static Value *f_cbrt(Lm *m, Value *x)
{
	Lm w = lm_ctx(m->g, m->at, SK_F64, m->t);
	Value *a = lm_convert(&w, lm_abs(m, x), SK_F64);
	Value *g = lm_idiv(&w, lm_bits(&w, a), 3);
	Value *y = lm_float(&w, lm_iadd(&w, g, lm_ki(&w, (int64_t)682 << 52)));
	for (int i = 0; i < 5; i++)
		y = lm_fma(&w, y, lm_k(&w, 2.0 / 3), lm_mul(&w, lm_div(&w, a, lm_mul(&w, y, y)), lm_k(&w, 1.0 / 3)));
	Value *r = lm_convert(&w, y, m->k);
	if (!w.ok)
		m->ok = false;
	Value *keep = lm_or(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), lm_cmp(m, CMP_EQ, lm_abs(m, x), lm_k(m, INFINITY)));
	keep = lm_or(m, keep, lm_isnan(m, x));
	return lm_sel(m, keep, x, lm_copysign(m, r, x));
}

/* erfc for f32 in f64, at a = |x|: below 2, 1 - erf(a) with erf(a) =
 * 2/sqrt(pi) a e^(-a^2) sum_n (2a^2)^n / (1 3 5 ... (2n+1)) (all terms
 * positive) to n = 27; from 2, e^(-a^2) / (sqrt(pi) t), t the continued
 * fraction a + (1/2)/(a + (2/2)/(a + (3/2)/(a + ...))) to 28 levels as the
 * ratio of its convergents' recurrences (positive terms, one division).
 * Both within about 1e-12 relative in f64; erfc(-a) = 2 - erfc(a). */
static Value *erfc_pos(Lm *w, Value *a, Value **erf_near)
{
	Value *a2 = lm_mul(w, a, a);
	Value *e = lm_exp_core(w, lm_neg(w, a2), NULL, 0, NULL);
	double c[28];
	c[0] = 1;
	for (int i = 1; i < 28; i++)
		c[i] = c[i - 1] / (2 * i + 1);
	Value *sum = lm_poly(w, lm_add(w, a2, a2), c, 28);
	*erf_near = lm_mul(w, lm_mul(w, lm_mul(w, a, e), lm_k(w, 1.12837916709551257390)), sum);
	Value *near = lm_sub(w, lm_k(w, 1), *erf_near);
	Value *p1 = lm_k(w, 1), *p0 = a, *q1 = lm_k(w, 0), *q0 = lm_k(w, 1);
	for (int k = 1; k <= 28; k++) {
		Value *p = lm_fma(w, a, p0, lm_mul(w, lm_k(w, k / 2.0), p1));
		Value *q = lm_fma(w, a, q0, lm_mul(w, lm_k(w, k / 2.0), q1));
		p1 = p0, p0 = p, q1 = q0, q0 = q;
	}
	Value *far = lm_div(w, lm_mul(w, e, q0), lm_mul(w, p0, lm_k(w, 1.77245385090551602730)));
	Value *r = lm_sel(w, lm_cmp(w, CMP_LT, a, lm_k(w, 2)), near, far);
	return lm_sel(w, lm_cmp(w, CMP_GT, a, lm_k(w, 27)), lm_k(w, 0), r); /* and infinite a */
}

static Value *f_erfc(Lm *m, Value *x)
{
	Lm w = lm_ctx(m->g, m->at, SK_F64, m->t);
	Value *erf_near;
	Value *r = erfc_pos(&w, lm_convert(&w, lm_abs(m, x), SK_F64), &erf_near);
	Value *neg = lm_convert(&w, lm_sub(&w, lm_k(&w, 2), r), m->k);
	Value *pos = lm_convert(&w, r, m->k);
	if (!w.ok)
		m->ok = false;
	Value *v = lm_sel(m, lm_cmp(m, CMP_LT, x, lm_k(m, 0)), neg, pos);
	return lm_sel(m, lm_isnan(m, x), x, v);
}

/* erfinv for f32 in f64, at a = |y|: Winitzki's closed form (within a few
 * 1e-3) then Newton steps on erf(x) = a below a = 1/2 and on erfc(x) = 1 - a
 * above (1 - a exact; each difference keeps its relative precision),
 * x += (erfc(x) - (1 - a)) sqrt(pi)/2 e^(x^2) */
static Value *f_erfinv(Lm *m, Value *y)
{
	Lm w = lm_ctx(m->g, m->at, SK_F64, m->t);
	Value *a = lm_convert(&w, lm_abs(m, y), SK_F64);
	Value *l = lm_log_core(&w, lm_fma(&w, lm_neg(&w, a), a, lm_k(&w, 1)), NULL); /* log(1 - a^2), exact argument */
	Value *b = lm_fma(&w, l, lm_k(&w, 0.5), lm_k(&w, 2 / (3.14159265358979323846 * 0.147)));
	Value *x = lm_math(&w, MATH_SQRT_RN, lm_sub(&w, lm_math(&w, MATH_SQRT_RN, lm_fma(&w, b, b, lm_mul(&w, l, lm_k(&w, -1 / 0.147)))), b));
	Value *low = lm_cmp(&w, CMP_LT, a, lm_k(&w, 0.5));
	Value *om = lm_sub(&w, lm_k(&w, 1), a);
	for (int i = 0; i < 3; i++) {
		Value *erf_near;
		Value *c = erfc_pos(&w, x, &erf_near);
		Value *d = lm_sel(&w, low, lm_sub(&w, a, erf_near), lm_sub(&w, c, om));
		Value *g = lm_exp_core(&w, lm_mul(&w, x, x), NULL, 0, NULL);
		x = lm_fma(&w, lm_mul(&w, d, lm_k(&w, 0.88622692545275801365)), g, x);
	}
	Value *r = lm_convert(&w, x, m->k);
	if (!w.ok)
		m->ok = false;
	Value *ay = lm_abs(m, y);
	r = lm_sel(m, lm_cmp(m, CMP_EQ, ay, lm_k(m, 1)), lm_k(m, INFINITY), r);
	r = lm_sel(m, lm_cmp(m, CMP_GT, ay, lm_k(m, 1)), lm_k(m, NAN), r);
	r = lm_sel(m, lm_cmp(m, CMP_EQ, y, lm_k(m, 0)), lm_k(m, 0), r);
	r = lm_copysign(m, r, y);
	return lm_sel(m, lm_isnan(m, y), y, r);
}

/* log Gamma(z) for z > 0 (f64): Stirling's series at z + 8 (or z from 8 on),
 * less log(z (z + 1) ... (z + 7)) */
static Value *lgamma_pos(Lm *w, Value *z)
{
	Value *shift = lm_cmp(w, CMP_LT, z, lm_k(w, 8));
	Value *p = z;
	for (int i = 1; i < 8; i++)
		p = lm_mul(w, p, lm_add(w, z, lm_k(w, i)));
	Value *zz = lm_sel(w, shift, lm_add(w, z, lm_k(w, 8)), z);
	/* B_2k / (2k (2k - 1) zz^(2k - 1)), k = 1..7 */
	static const double st[] = {1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188, -691.0 / 360360, 1.0 / 156};
	Value *iz = lm_div(w, lm_k(w, 1), zz);
	Value *corr = lm_mul(w, iz, lm_poly(w, lm_mul(w, iz, iz), st, 7));
	Value *lz = lm_log_core(w, zz, NULL);
	Value *v = lm_fma(w, lm_sub(w, zz, lm_k(w, 0.5)), lz, lm_sub(w, lm_k(w, 0.91893853320467274178), zz));
	v = lm_add(w, v, corr);
	return lm_sel(w, shift, lm_sub(w, v, lm_log_core(w, p, NULL)), v);
}

/* lgamma for f32 in f64: lgamma_pos above 0; below, the reflection
 * log(pi / |sin(pi x)|) - lgamma(1 - x), sin(pi r) for r = x - rint(x) by
 * its Taylor series */
static Value *lgamma_f64(Lm *w, Value *xd)
{
	Value *pos = lgamma_pos(w, lm_max(w, xd, lm_k(w, 0x1p-200)));
	Value *r = lm_sub(w, xd, lm_math(w, MATH_RINT, xd)); /* exact */
	Value *pr = lm_mul(w, r, lm_k(w, 3.14159265358979323846));
	double c[13], f = 1;
	for (int i = 0; i < 13; i++) {
		c[i] = (i % 2 ? -1 : 1) / f;
		f *= (2 * i + 2) * (2 * i + 3);
	}
	Value *sn = lm_abs(w, lm_mul(w, pr, lm_poly(w, lm_mul(w, pr, pr), c, 13)));
	Value *refl = lm_sub(w, lm_log_core(w, lm_div(w, lm_k(w, 3.14159265358979323846), sn), NULL),
	                     lgamma_pos(w, lm_sub(w, lm_k(w, 1), lm_min(w, xd, lm_k(w, 0)))));
	return lm_sel(w, lm_cmp(w, CMP_GT, xd, lm_k(w, 0)), pos, refl);
}

static Value *f_lgamma(Lm *m, Value *x)
{
	Lm w = lm_ctx(m->g, m->at, SK_F64, m->t);
	Value *v = lgamma_f64(&w, lm_convert(&w, x, SK_F64));
	Value *res = lm_convert(&w, v, m->k);
	if (!w.ok)
		m->ok = false;
	/* poles: 0 and the negative integers; +-inf give +inf */
	Value *pole = lm_and(m, lm_cmp(m, CMP_LE, x, lm_k(m, 0)), lm_cmp(m, CMP_EQ, lm_math(m, MATH_TRUNC, x), x));
	pole = lm_or(m, pole, lm_cmp(m, CMP_EQ, lm_abs(m, x), lm_k(m, INFINITY)));
	res = lm_sel(m, pole, lm_k(m, INFINITY), res);
	res = lm_sel(m, lm_or(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 1)), lm_cmp(m, CMP_EQ, x, lm_k(m, 2))), lm_k(m, 0), res);
	return lm_sel(m, lm_isnan(m, x), x, res);
}

/* tgamma for f32 in f64: e^lgamma(x) with Gamma's sign, negative between
 * an odd negative integer and the next even one ((-1, 0), (-3, -2), ...);
 * +-inf at +-0, NaN at the negative integers and -inf */
static Value *f_tgamma(Lm *m, Value *x)
{
	Lm w = lm_ctx(m->g, m->at, SK_F64, m->t);
	Value *xd = lm_convert(&w, x, SK_F64);
	Value *lg = lgamma_f64(&w, xd);
	Value *e = lm_exp_core(&w, lg, NULL, 0, NULL);
	Value *fl = lm_math(&w, MATH_FLOOR, xd);
	Value *half = lm_mul(&w, fl, lm_k(&w, 0.5));
	Value *neg = lm_and(&w, lm_cmp(&w, CMP_LT, xd, lm_k(&w, 0)), lm_cmp(&w, CMP_NE, lm_math(&w, MATH_FLOOR, half), half));
	Value *res = lm_convert(&w, lm_sel(&w, neg, lm_neg(&w, e), e), m->k);
	if (!w.ok)
		m->ok = false;
	Value *negint = lm_and(m, lm_cmp(m, CMP_LT, x, lm_k(m, 0)), lm_cmp(m, CMP_EQ, lm_math(m, MATH_TRUNC, x), x));
	res = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, INFINITY)), x, res);
	res = lm_sel(m, negint, lm_k(m, NAN), res); /* -inf too */
	res = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), lm_copysign(m, lm_k(m, INFINITY), x), res);
	return lm_sel(m, lm_isnan(m, x), x, res);
}

/* I_nu(x), nu = 0 or 1, for f32 in f64 at a = |x|: below 20 the series
 * (a/2)^nu sum (a^2/4)^k / (k! (k + nu)!) to k = 35 (positive terms); from 20
 * e^a / sqrt(2 pi a) sum_k (-1)^k c_k(nu) / a^k, c_k(nu) = prod_{j <= k}
 * (4 nu^2 - (2j - 1)^2) / (k! 8^k), to k = 11 (both about 1e-12 relative) */
static Value *bessel_i(Lm *m, Value *x, int nu)
{
	Lm w = lm_ctx(m->g, m->at, SK_F64, m->t);
	Value *a = lm_convert(&w, lm_abs(m, x), SK_F64);
	double c[36], f = 1;
	for (int k = 0; k < 36; k++) {
		c[k] = 1 / (f * (nu ? f * (k + 1) : f)); /* 1 / (k! (k + nu)!) */
		f *= k + 1;
	}
	Value *ser = lm_poly(&w, lm_mul(&w, lm_mul(&w, a, a), lm_k(&w, 0.25)), c, 36);
	if (nu)
		ser = lm_mul(&w, ser, lm_mul(&w, a, lm_k(&w, 0.5)));
	double d[12], t = 1;
	for (int k = 0; k < 12; k++) {
		d[k] = k % 2 ? -t : t;
		t *= (4.0 * nu * nu - (2 * k + 1) * (2 * k + 1)) / ((k + 1) * 8.0);
	}
	Value *sum = lm_poly(&w, lm_div(&w, lm_k(&w, 1), a), d, 12);
	/* e^a / sqrt(2 pi a) as (e^(a/2) / sqrt(2 pi a)) e^(a/2): no overflow before the end */
	Value *h = lm_exp_core(&w, lm_mul(&w, a, lm_k(&w, 0.5)), NULL, 0, NULL);
	Value *big = lm_mul(&w, lm_mul(&w, lm_div(&w, h, lm_math(&w, MATH_SQRT_RN, lm_mul(&w, a, lm_k(&w, 6.28318530717958647693)))), sum), h);
	Value *r = lm_sel(&w, lm_cmp(&w, CMP_LT, a, lm_k(&w, 20)), ser, big);
	Value *res = lm_convert(&w, r, m->k);
	if (!w.ok)
		m->ok = false;
	if (nu)
		res = lm_copysign(m, res, x);
	res = lm_sel(m, lm_cmp(m, CMP_EQ, lm_abs(m, x), lm_k(m, INFINITY)), nu ? x : lm_k(m, INFINITY), res);
	return lm_sel(m, lm_isnan(m, x), x, res);
}

static Value *f_i0(Lm *m, Value *x) { return bessel_i(m, x, 0); }
static Value *f_i1(Lm *m, Value *x) { return bessel_i(m, x, 1); }

/* J_nu and Y_nu (nu = 0, 1) for f32 in f64 at a = |x| > 0. Below 12 the
 * series in u = -a^2/4: J0 = sum u^k / k!^2, J1 = (a/2) sum u^k / (k! (k+1)!),
 * Y0 = (2/pi) ((log(a/2) + gamma) J0 - sum H_k u^k / k!^2),
 * Y1 = (2/pi) (log(a/2) J1 - 1/a) - (a/(2 pi)) sum (H_k + H_(k+1) - 2 gamma)
 * u^k / (k! (k+1)!), H_k the harmonic numbers, to k = 39. From 12 Hankel's
 * expansion sqrt(2/(pi a)) (P cos c - Q sin c) (J) and (P sin c + Q cos c)
 * (Y), c = a - (2 nu + 1) pi/4, with the sine and cosine of a from a
 * reduction by pi/2 in three fmas (as tan) and Taylor series. */
static Value *bessel_jy(Lm *w, Value *a, int nu, bool y)
{
	enum { K = 40 };
	double cj[K], cy[K], f = 1, h = 0;
	const double euler = 0.57721566490153286061;
	for (int k = 0; k < K; k++) {
		double fk1 = f * (k + 1); /* (k+1)! */
		double hk1 = h + 1.0 / (k + 1);
		cj[k] = 1 / (f * (nu ? fk1 : f));
		cy[k] = nu ? (h + hk1 - 2 * euler) / (f * fk1) : h / (f * f);
		f = fk1;
		h = hk1;
	}
	Value *u = lm_mul(w, lm_mul(w, a, a), lm_k(w, -0.25));
	Value *j = lm_poly(w, u, cj, K);
	if (nu)
		j = lm_mul(w, j, lm_mul(w, a, lm_k(w, 0.5)));
	Value *small = j;
	if (y) {
		const double two_pi = 0.63661977236758134308; /* 2/pi */
		Value *lg = lm_log_core(w, lm_mul(w, a, lm_k(w, 0.5)), NULL);
		Value *sy = lm_poly(w, u, cy, K);
		if (nu)
			small = lm_sub(w, lm_mul(w, lm_k(w, two_pi), lm_sub(w, lm_mul(w, lg, j), lm_div(w, lm_k(w, 1), a))),
			               lm_mul(w, lm_mul(w, a, lm_k(w, 0.5 / 3.14159265358979323846)), sy));
		else
			small = lm_mul(w, lm_k(w, two_pi), lm_sub(w, lm_mul(w, lm_add(w, lg, lm_k(w, euler)), j), sy));
	}
	/* Hankel: a_k = prod_{j <= k} (4 nu^2 - (2j - 1)^2) / (k! 8^k); P takes the
	 * even k with signs +, -, ..., Q the odd ones */
	double p[10], q[10], t = 1;
	for (int k = 0; k < 20; k++) {
		double sgn = (k / 2) % 2 ? -1 : 1;
		if (k % 2)
			q[k / 2] = sgn * t;
		else
			p[k / 2] = sgn * t;
		t *= (4.0 * nu * nu - (2 * k + 1) * (2 * k + 1)) / ((k + 1) * 8.0);
	}
	Value *ia = lm_div(w, lm_k(w, 1), a), *ia2 = lm_mul(w, ia, ia);
	Value *P = lm_poly(w, ia2, p, 10), *Q = lm_mul(w, ia, lm_poly(w, ia2, q, 10));
	/* sin a and cos a */
	Value *kq = lm_math(w, MATH_RINT, lm_mul(w, a, lm_k(w, 0.63661977236758134308)));
	Value *nk = lm_neg(w, kq);
	Value *r = lm_fma(w, nk, lm_k(w, 1.57079632673412561417e+00), a);
	r = lm_fma(w, nk, lm_k(w, 6.07710050630396597660e-11), r);
	r = lm_fma(w, nk, lm_k(w, 2.02226624879595063154e-21), r);
	double sc[12], cc[12], g = 1;
	for (int i = 0; i < 12; i++) {
		sc[i] = (i % 2 ? -1 : 1) / g;
		g *= (2 * i + 2) * (2 * i + 3);
	}
	g = 1;
	for (int i = 0; i < 12; i++) {
		cc[i] = (i % 2 ? -1 : 1) / g;
		g *= (2 * i + 1) * (2 * i + 2);
	}
	Value *r2 = lm_mul(w, r, r);
	Value *S = lm_mul(w, r, lm_poly(w, r2, sc, 12)), *C = lm_poly(w, r2, cc, 12);
	Value *q4 = lm_sub(w, kq, lm_mul(w, lm_math(w, MATH_FLOOR, lm_mul(w, kq, lm_k(w, 0.25))), lm_k(w, 4)));
	Value *q1 = lm_cmp(w, CMP_EQ, q4, lm_k(w, 1)), *q2 = lm_cmp(w, CMP_EQ, q4, lm_k(w, 2)), *q3 = lm_cmp(w, CMP_EQ, q4, lm_k(w, 3));
	Value *sa = lm_sel(w, q1, C, lm_sel(w, q2, lm_neg(w, S), lm_sel(w, q3, lm_neg(w, C), S)));
	Value *ca = lm_sel(w, q1, lm_neg(w, S), lm_sel(w, q2, lm_neg(w, C), lm_sel(w, q3, S, C)));
	/* c = a - pi/4 - nu pi/2 */
	const double rs2 = 0.70710678118654752440;
	Value *cc4 = lm_mul(w, lm_add(w, ca, sa), lm_k(w, rs2)), *sc4 = lm_mul(w, lm_sub(w, sa, ca), lm_k(w, rs2));
	Value *cosc = nu ? sc4 : cc4, *sinc = nu ? lm_neg(w, cc4) : sc4;
	Value *amp = lm_math(w, MATH_SQRT_RN, lm_div(w, lm_k(w, 0.63661977236758134308), a));
	Value *big = y ? lm_mul(w, amp, lm_fma(w, P, sinc, lm_mul(w, Q, cosc)))
	               : lm_mul(w, amp, lm_fma(w, P, cosc, lm_neg(w, lm_mul(w, Q, sinc))));
	return lm_sel(w, lm_cmp(w, CMP_LT, a, lm_k(w, 12)), small, big);
}

Value *lm_bessel_jy_special(Lm *m, Value *x, Value *res, int nu, bool y)
{
	Value *inf = lm_cmp(m, CMP_EQ, lm_abs(m, x), lm_k(m, INFINITY));
	if (y) { /* Y: -inf at 0, NaN below, 0 at +inf */
		res = lm_sel(m, inf, lm_k(m, 0), res);
		res = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), lm_k(m, -INFINITY), res);
		res = lm_sel(m, lm_cmp(m, CMP_LT, x, lm_k(m, 0)), lm_k(m, NAN), res);
	} else {
		if (nu) /* odd */
			res = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), x, lm_copysign(m, res, lm_mul(m, x, res)));
		res = lm_sel(m, inf, nu ? lm_copysign(m, lm_k(m, 0), x) : lm_k(m, 0), res);
	}
	return lm_sel(m, lm_isnan(m, x), x, res);
}

static Value *bessel_jy_fn(Lm *m, Value *x, int nu, bool y)
{
	Lm w = lm_ctx(m->g, m->at, SK_F64, m->t);
	Value *a = lm_convert(&w, lm_abs(m, x), SK_F64);
	Value *res = lm_convert(&w, bessel_jy(&w, a, nu, y), m->k);
	if (!w.ok)
		m->ok = false;
	return lm_bessel_jy_special(m, x, res, nu, y);
}

static Value *f_j0(Lm *m, Value *x) { return bessel_jy_fn(m, x, 0, false); }
static Value *f_j1(Lm *m, Value *x) { return bessel_jy_fn(m, x, 1, false); }
static Value *f_y0(Lm *m, Value *x) { return bessel_jy_fn(m, x, 0, true); }
static Value *f_y1(Lm *m, Value *x) { return bessel_jy_fn(m, x, 1, true); }

/* cbrt of f64: subnormals scaled by 2^54 (the root by 2^18), the guess from
 * the bits, Newton steps, then one last step y + (a / y^2 - y) / 3 whose
 * correction is small enough to round well */
static Value *f_cbrt64(Lm *m, Value *x)
{
	Value *a = lm_abs(m, x);
	Value *tiny = lm_cmp(m, CMP_LT, a, lm_k(m, 0x1p-1022));
	Value *as = lm_sel(m, tiny, lm_mul(m, a, lm_k(m, 0x1p54)), a);
	Value *y = lm_float(m, lm_iadd(m, lm_idiv(m, lm_bits(m, as), 3), lm_ki(m, (int64_t)682 << 52)));
	for (int i = 0; i < 5; i++)
		y = lm_fma(m, y, lm_k(m, 2.0 / 3), lm_mul(m, lm_div(m, as, lm_mul(m, y, y)), lm_k(m, 1.0 / 3)));
	/* the residual a - y^3 exactly enough: y^2 as hi + lo by an fma */
	Value *y2 = lm_mul(m, y, y), *y2lo = lm_fma(m, y, y, lm_neg(m, y2));
	Value *res = lm_fma(m, lm_neg(m, y2lo), y, lm_fma(m, lm_neg(m, y2), y, as));
	y = lm_fma(m, lm_div(m, res, lm_mul(m, y2, lm_k(m, 3))), lm_k(m, 1), y);
	y = lm_sel(m, tiny, lm_mul(m, y, lm_k(m, 0x1p-18)), y);
	Value *keep = lm_or(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), lm_cmp(m, CMP_EQ, a, lm_k(m, INFINITY)));
	keep = lm_or(m, keep, lm_isnan(m, x));
	return lm_sel(m, keep, x, lm_copysign(m, y, x));
}

/* hypot for f32 in f64: the squares and their sum are exact there */
static Value *f_hypot(Lm *m, Value *x, Value *y)
{
	Lm w = lm_ctx(m->g, m->at, SK_F64, m->t);
	Value *xd = lm_convert(&w, x, SK_F64), *yd = lm_convert(&w, y, SK_F64);
	Value *r = lm_convert(&w, lm_math(&w, MATH_SQRT_RN, lm_fma(&w, xd, xd, lm_mul(&w, yd, yd))), m->k);
	if (!w.ok)
		m->ok = false;
	Value *inf = lm_or(m, lm_cmp(m, CMP_EQ, lm_abs(m, x), lm_k(m, INFINITY)),
	                   lm_cmp(m, CMP_EQ, lm_abs(m, y), lm_k(m, INFINITY)));
	return lm_sel(m, inf, lm_k(m, INFINITY), r);
}

/* hypot of f64: the larger times sqrt(1 + (smaller/larger)^2) */
static Value *f_hypot64(Lm *m, Value *x, Value *y)
{
	Value *ax = lm_abs(m, x), *ay = lm_abs(m, y);
	Value *gt = lm_cmp(m, CMP_GT, ay, ax);
	Value *mx = lm_sel(m, gt, ay, ax), *mn = lm_sel(m, gt, ax, ay);
	Value *q = lm_div(m, mn, mx);
	Value *r = lm_mul(m, mx, lm_math(m, MATH_SQRT_RN, lm_fma(m, q, q, lm_k(m, 1))));
	r = lm_sel(m, lm_cmp(m, CMP_EQ, mx, lm_k(m, 0)), lm_k(m, 0), r);
	r = lm_sel(m, lm_or(m, lm_isnan(m, x), lm_isnan(m, y)), lm_add(m, x, y), r);
	Value *inf = lm_or(m, lm_cmp(m, CMP_EQ, ax, lm_k(m, INFINITY)), lm_cmp(m, CMP_EQ, ay, lm_k(m, INFINITY)));
	return lm_sel(m, inf, lm_k(m, INFINITY), r);
}

/* x 2^n exactly (one rounding where the result is subnormal): x's
 * exponent E = e + n is rebuilt from x's significand in [1, 2) times 2^E in
 * two factors, the second 2^-64 below the normal range */
static Value *f_ldexp(Lm *m, Value *x, Value *n)
{
	bool d = dbl(m);
	int emin = 1 - m->bias, emax = m->bias;
	Value *tiny = lm_cmp(m, CMP_LT, lm_abs(m, x), lm_k(m, d ? 0x1p-1022 : 0x1p-126));
	Value *xs = lm_sel(m, tiny, lm_mul(m, x, lm_k(m, d ? 0x1p54 : 0x1p25)), x);
	Value *bits = lm_bits(m, xs);
	int64_t mask = lm_low_bits(m->mbits), sgn = lm_bit(scalar_bits(m->k) - 1);
	Value *e = lm_isub(m, lm_and(m, lm_shr(m, bits, m->mbits), lm_ki(m, 2 * m->bias + 1)), lm_ki(m, m->bias));
	e = lm_isub(m, e, lm_sel(m, tiny, lm_ki(m, d ? 54 : 25), lm_ki(m, 0)));
	Value *sig = lm_float(m, lm_or(m, lm_and(m, bits, lm_ki(m, mask | sgn)), lm_ki(m, (int64_t)m->bias << m->mbits)));
	int lim = 3 * m->bias;
	Value *nc = lm_max(m, lm_min(m, n, lm_ki(m, lim)), lm_ki(m, -lim));
	Value *E = lm_iadd(m, e, nc);
	Value *low = lm_cmp(m, CMP_LT, E, lm_ki(m, emin));
	Value *p1 = lm_sel(m, low, lm_max(m, lm_iadd(m, E, lm_ki(m, 64)), lm_ki(m, emin)), lm_min(m, E, lm_ki(m, emax)));
	Value *p2 = lm_sel(m, low, lm_ki(m, -64), lm_min(m, lm_isub(m, E, p1), lm_ki(m, emax)));
	Value *v = lm_mul(m, lm_mul(m, sig, lm_pow2i(m, p1)), lm_pow2i(m, p2));
	Value *keep = lm_or(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), lm_cmp(m, CMP_EQ, lm_abs(m, x), lm_k(m, INFINITY)));
	return lm_sel(m, lm_or(m, keep, lm_isnan(m, x)), x, v);
}

/* IEEE remainder from the exact fmod: r = |x| mod 2|y|, brought into
 * [0, |y|) with the quotient's parity, then to the nearest multiple */
static Value *f_remainder(Lm *m, Value *x, Value *y)
{
	Value *ax = lm_abs(m, x), *ay = lm_abs(m, y);
	Value *r = lm_rem(m, ax, lm_add(m, ay, ay));
	Value *odd = lm_cmp(m, CMP_GE, r, ay);
	r = lm_sel(m, odd, lm_sub(m, r, ay), r);
	Value *r2 = lm_add(m, r, r);
	Value *up = lm_or(m, lm_cmp(m, CMP_GT, r2, ay), lm_and(m, lm_cmp(m, CMP_EQ, r2, ay), odd));
	r = lm_sel(m, up, lm_sub(m, r, ay), r);
	Value *v = lm_float(m, lm_and(m, lm_bits(m, r), lm_ki(m, lm_low_bits(scalar_bits(m->k) - 1))));
	v = lm_sel(m, lm_cmp(m, CMP_LT, r, lm_k(m, 0)), lm_neg(m, v), v);
	v = lm_sel(m, lm_signbit(m, x), lm_neg(m, v), v);
	v = lm_sel(m, lm_cmp(m, CMP_EQ, ay, lm_k(m, INFINITY)), x, v);
	Value *bad = lm_or(m, lm_or(m, lm_isnan(m, x), lm_isnan(m, y)),
	                   lm_or(m, lm_cmp(m, CMP_EQ, ay, lm_k(m, 0)), lm_cmp(m, CMP_EQ, ax, lm_k(m, INFINITY))));
	return lm_sel(m, bad, lm_k(m, NAN), v);
}

/* the next value after x toward y, by the bits of x's own type */
static Value *f_nextafter(Lm *m, Value *x, Value *y)
{
	Value *ix = lm_bits(m, x);
	Value *away = lm_cmp(m, CMP_EQ, lm_cmp(m, CMP_LT, x, y), lm_cmp(m, CMP_GT, x, lm_k(m, 0)));
	Value *v = lm_float(m, lm_sel(m, away, lm_iadd(m, ix, lm_ki(m, 1)), lm_isub(m, ix, lm_ki(m, 1))));
	Value *tiny = lm_copysign(m, lm_float(m, lm_ki(m, 1)), lm_sub(m, y, x));
	v = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), tiny, v);
	v = lm_sel(m, lm_cmp(m, CMP_EQ, x, y), y, v);
	return lm_sel(m, lm_or(m, lm_isnan(m, x), lm_isnan(m, y)), lm_add(m, x, y), v);
}

static Value *f_copysign(Lm *m, Value *x, Value *y) { return lm_copysign(m, x, y); }

/* ---- the builtins ------------------------------------------------------------ */

typedef Value *(*Fn1)(Lm *, Value *);
typedef Value *(*Fn2)(Lm *, Value *, Value *);

static double fold_tanh(double x) { return tanh(x); }
static double fold_exp10(double x) { return pow(10, x); }

/* the modified Bessel functions of a literal, by their series in long double */
static double fold_i(double x, int nu)
{
	if (isinf(x))
		return nu ? x : INFINITY;
	long double y = (long double)x * x / 4, term = nu ? (long double)x / 2 : 1, s = 0;
	for (int k = 0; k < 400 && term != 0; k++) {
		s += term;
		term *= y / ((k + 1) * (long double)(k + 1 + nu));
	}
	return (double)s;
}
static double fold_i0(double x) { return fold_i(x, 0); }
static double fold_i1(double x) { return fold_i(x, 1); }

/* erfinv of a literal: bisection on erf (the host has no erfinv) */
static double erfinv_fold(double y)
{
	if (!(fabs(y) <= 1))
		return NAN;
	if (fabs(y) == 1)
		return copysign(INFINITY, y);
	double lo = -6, hi = 6;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (erf(mid) < y)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static const struct {
	const char *name;
	Fn1 f32, f64; /* f64 NULL: tanh, whose f64 is the MATH_TANH op */
	double (*fold)(double);
} UNARY[] = {
	[LIBM_TANH] = {"tanh", f_tanh, NULL, fold_tanh},
	[LIBM_SINH] = {"sinh", f_sinh, f_sinh, sinh},
	[LIBM_COSH] = {"cosh", f_cosh, f_cosh, cosh},
	[LIBM_TAN] = {"tan", f_tan, f_tan, tan},
	[LIBM_ATAN] = {"atan", f_atan, f_atan, atan},
	[LIBM_ASIN] = {"asin", f_asin, f_asin, asin},
	[LIBM_ACOS] = {"acos", f_acos, f_acos, acos},
	[LIBM_ASINH] = {"asinh", f_asinh, f_asinh, asinh},
	[LIBM_ACOSH] = {"acosh", f_acosh, f_acosh, acosh},
	[LIBM_ATANH] = {"atanh", f_atanh, f_atanh, atanh},
	[LIBM_LOG1P] = {"log1p", f_log1p, f_log1p, log1p},
	[LIBM_EXPM1] = {"expm1", f_exp_m1, f_exp_m1, expm1},
	[LIBM_LOG10] = {"log10", f_log10, f_log10, log10},
	[LIBM_EXP10] = {"exp10", f_exp10, f_exp10, fold_exp10},
	[LIBM_CBRT] = {"cbrt", f_cbrt, f_cbrt64, cbrt},
	[LIBM_ERFC] = {"erfc", f_erfc, lm_erfc64, erfc},
	[LIBM_ERFINV] = {"erfinv", f_erfinv, lm_erfinv64, erfinv_fold},
	[LIBM_LGAMMA] = {"lgamma", f_lgamma, lm_lgamma64, lgamma},
	[LIBM_TGAMMA] = {"tgamma", f_tgamma, lm_tgamma64, tgamma},
	[LIBM_I0] = {"i0", f_i0, lm_i0_64, fold_i0},
	[LIBM_I1] = {"i1", f_i1, lm_i1_64, fold_i1},
	[LIBM_J0] = {"j0", f_j0, lm_j0_64, j0},
	[LIBM_J1] = {"j1", f_j1, lm_j1_64, j1},
	[LIBM_Y0] = {"y0", f_y0, lm_y0_64, y0},
	[LIBM_Y1] = {"y1", f_y1, lm_y1_64, y1},
};

static double fold_pow(double x, double y) { return pow(x, y); }

static const struct {
	Fn2 f32, f64; /* every one has an f64 form */
	bool native; /* computes in f16 and bf16 too (exact bit operations) */
	double (*fold)(double, double);
} BINARY[] = {
	[LIBM_POW] = {f_pow, f_pow, false, fold_pow},
	[LIBM_POW_PRECISE] = {f_pow_precise, f_pow_precise, false, fold_pow},
	[LIBM_ATAN2] = {f_atan2, f_atan2, false, atan2},
	[LIBM_HYPOT] = {f_hypot, f_hypot64, false, hypot},
	[LIBM_REMAINDER] = {f_remainder, f_remainder, false, remainder},
	[LIBM_COPYSIGN] = {f_copysign, f_copysign, true, copysign},
	[LIBM_NEXTAFTER] = {f_nextafter, f_nextafter, true, nextafter},
};


/* the kind a function computes in for operands of kind k */
static ScalarKind work_kind(ScalarKind k, bool native)
{
	if (k == SK_F64 || k == SK_F32)
		return k;
	return native && (k == SK_F16 || k == SK_BF16) ? k : SK_F32;
}

static Sym finish(Gen *g, Lm *m, Value *r, ScalarKind k, Span at)
{
	if (!m->ok || !r)
		return VOID;
	return ig_value_sym(r->type.scalar == k ? r : ig_cast_value(g, r, k, at));
}

Sym ig_bi_libm1(Gen *g, Args *a, int which)
{
	Sym x;
	if (!ig_float_operand(g, a, 0, &x))
		return VOID;
	if (x.kind == S_CONST && x.weak)
		return ig_weak_float(UNARY[which].fold(x.f));
	ScalarKind k = (ScalarKind)x.type.scalar;
	if (k == SK_F64 && !UNARY[which].f64) { /* tanh: f64 keeps its own series */
		Value *v = ig_emit(g, OP_MATH, a->call, x.type, ig_materialize(g, x, a->at[0]), NULL, NULL);
		if (v)
			v->def->attr[0] = MATH_TANH;
		return ig_value_sym(v);
	}
	ScalarKind w = work_kind(k, false);
	Value *v = ig_materialize(g, x, a->at[0]);
	if (!v)
		return VOID;
	v = ig_cast_value(g, v, w, a->at[0]);
	Lm m = lm_ctx(g, a->call, w, v->type);
	Value *r = (w == SK_F64 ? UNARY[which].f64 : UNARY[which].f32)(&m, v);
	return finish(g, &m, r, k, a->call);
}

/* the two float operands of a binary function, promoted and broadcast */
static bool two_floats(Gen *g, Args *a, Value **x, Value **y, ScalarKind *k)
{
	Sym s[2];
	if (!ig_float_operand(g, a, 0, &s[0]) || !ig_float_operand(g, a, 1, &s[1]))
		return false;
	const char *why;
	if (!promote_arith((ScalarKind)s[0].type.scalar, s[0].kind == S_CONST && s[0].weak, (ScalarKind)s[1].type.scalar,
	                   s[1].kind == S_CONST && s[1].weak, false, k, &why)) {
		error(g, a->call, "'%s': %s", a->fname, why);
		return false;
	}
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!ig_common_shape(g, s[0].type, s[1].type, &rank, shape, a->call, "the operands"))
		return false;
	*x = ig_broadcast_to(g, ig_to_elem(g, s[0], *k, a->at[0]), rank, shape, a->at[0]);
	*y = ig_broadcast_to(g, ig_to_elem(g, s[1], *k, a->at[1]), rank, shape, a->at[1]);
	return *x && *y;
}

Sym ig_bi_libm2(Gen *g, Args *a, int which)
{
	Sym s0 = a->v[0], s1 = a->v[1];
	if (s0.kind == S_CONST && s0.weak && s1.kind == S_CONST && s1.weak) { /* literals (integers too) */
		if (!ig_float_operand(g, a, 0, &s0) || !ig_float_operand(g, a, 1, &s1))
			return VOID;
		return ig_weak_float(BINARY[which].fold(s0.f, s1.f));
	}
	Value *x, *y;
	ScalarKind k;
	if (!two_floats(g, a, &x, &y, &k))
		return VOID;
	if (BINARY[which].native && !scalar_is_float(k)) /* unreachable: float_arg */
		return VOID;
	if (BINARY[which].native && (k == SK_F8E4M3 || k == SK_F8E5M2)) {
		error(g, a->call, "'%s' of an 8-bit float is not available", a->fname);
		return VOID;
	}
	ScalarKind w = work_kind(k, BINARY[which].native);
	x = ig_cast_value(g, x, w, a->at[0]);
	y = ig_cast_value(g, y, w, a->at[1]);
	Lm m = lm_ctx(g, a->call, w, x->type);
	Value *r = (w == SK_F64 ? BINARY[which].f64 : BINARY[which].f32)(&m, x, y);
	return finish(g, &m, r, k, a->call);
}

/* isnan, isinf, isfinite, signbit: i1 blocks, from the value in its own type */
Sym ig_bi_fpclass(Gen *g, Args *a, int which)
{
	Sym x;
	if (!ig_float_operand(g, a, 0, &x))
		return VOID;
	ScalarKind k = (ScalarKind)x.type.scalar;
	if (x.kind == S_CONST && x.weak) {
		double v = x.f;
		bool r = which == FPC_NAN ? isnan(v) : which == FPC_INF ? isinf(v) : which == FPC_FINITE ? isfinite(v) : signbit(v) != 0;
		return ig_const_int(SK_I1, r, false);
	}
	Value *v = ig_materialize(g, x, a->at[0]);
	if (!v)
		return VOID;
	if (k == SK_F8E4M3 || k == SK_F8E5M2) /* exact in f32 */
		v = ig_cast_value(g, v, k = SK_F32, a->at[0]);
	Lm m = lm_ctx(g, a->call, k, v->type);
	Value *r;
	switch (which) {
	case FPC_NAN: r = lm_isnan(&m, v); break;
	case FPC_INF: r = lm_cmp(&m, CMP_EQ, lm_abs(&m, v), lm_k(&m, INFINITY)); break;
	case FPC_FINITE: r = lm_cmp(&m, CMP_LT, lm_abs(&m, v), lm_k(&m, INFINITY)); break;
	default: r = lm_signbit(&m, v); break;
	}
	return m.ok ? ig_value_sym(r) : VOID;
}

/* ldexp(x, n): x 2^n with n an integer (a scalar or a block) */
Sym ig_bi_ldexp(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x, n = a->v[1];
	if (!ig_float_operand(g, a, 0, &x))
		return VOID;
	if (!is_valueish(n) || n.type.ptr || !scalar_is_int((ScalarKind)n.type.scalar) || n.type.scalar == SK_I1) {
		error(g, a->at[1], "ldexp: the exponent must be an integer, found %s", ig_sym_desc(g, n));
		return VOID;
	}
	if (x.kind == S_CONST && x.weak && n.kind == S_CONST)
		return ig_weak_float(ldexp(x.f, (int)fmax(-100000, fmin(100000, (double)ig_int_value(n)))));
	ScalarKind k = (ScalarKind)x.type.scalar, w = work_kind(k, false);
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!ig_common_shape(g, x.type, n.type, &rank, shape, a->call, "the operands"))
		return VOID;
	Value *xv = ig_broadcast_to(g, ig_cast_value(g, ig_materialize(g, x, a->at[0]), w, a->at[0]), rank, shape, a->at[0]);
	Lm m = lm_ctx(g, a->call, w, xv ? xv->type : x.type);
	ScalarKind ik = (ScalarKind)m.ti.scalar;
	Value *nv = n.kind == S_CONST ? ig_emit_const(g, ig_const_int(ik, ig_int_value(n) > 100000 ? 100000 :
	                                                                 ig_int_value(n) < -100000 ? -100000 : ig_int_value(n), false),
	                                              type_scalar(ik), a->at[1])
	                              : ig_cast_value(g, n.v, ik, a->at[1]);
	nv = ig_broadcast_to(g, nv, rank, shape, a->at[1]);
	if (!xv || !nv)
		return VOID;
	return finish(g, &m, f_ldexp(&m, xv, nv), k, a->call);
}

/* frexp(x): (m, e) with x = m 2^e, |m| in [0.5, 1) (m = x, e = 0 for zeros,
 * infinities and NaN); e is i32 */
Sym ig_bi_frexp(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x;
	if (!ig_float_operand(g, a, 0, &x))
		return VOID;
	ScalarKind k = (ScalarKind)x.type.scalar, w = work_kind(k, false);
	Value *v = ig_materialize(g, x, a->at[0]);
	if (!v)
		return VOID;
	v = ig_cast_value(g, v, w, a->at[0]);
	Lm m = lm_ctx(g, a->call, w, v->type);
	bool d = dbl(&m);
	Value *tiny = lm_cmp(&m, CMP_LT, lm_abs(&m, v), lm_k(&m, d ? 0x1p-1022 : 0x1p-126));
	Value *xs = lm_sel(&m, tiny, lm_mul(&m, v, lm_k(&m, d ? 0x1p54 : 0x1p25)), v);
	Value *bits = lm_bits(&m, xs);
	int64_t keep = lm_low_bits(m.mbits) | lm_bit(scalar_bits(w) - 1);
	Value *e = lm_isub(&m, lm_and(&m, lm_shr(&m, bits, m.mbits), lm_ki(&m, 2 * m.bias + 1)), lm_ki(&m, m.bias - 1));
	e = lm_isub(&m, e, lm_sel(&m, tiny, lm_ki(&m, d ? 54 : 25), lm_ki(&m, 0)));
	Value *mant = lm_float(&m, lm_or(&m, lm_and(&m, bits, lm_ki(&m, keep)), lm_ki(&m, (int64_t)(m.bias - 1) << m.mbits)));
	Value *special = lm_or(&m, lm_cmp(&m, CMP_EQ, v, lm_k(&m, 0)), lm_not(&m, lm_cmp(&m, CMP_LT, lm_abs(&m, v), lm_k(&m, INFINITY))));
	mant = lm_sel(&m, special, v, mant);
	e = lm_sel(&m, special, lm_ki(&m, 0), e);
	if (!m.ok)
		return VOID;
	Sym out = {.kind = S_TUPLE, .n = 2};
	out.items = arena_alloc(g->arena, 2 * sizeof *out.items);
	if (!out.items)
		return VOID;
	out.items[0] = ig_value_sym(mant->type.scalar == k ? mant : ig_cast_value(g, mant, k, a->call));
	out.items[1] = ig_value_sym(ig_cast_value(g, e, SK_I32, a->call));
	return out;
}

/* fmod(x, y): the float '%' (exact on both backends) */
Sym ig_bi_fmod(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x, y;
	if (!ig_float_operand(g, a, 0, &x) || !ig_float_operand(g, a, 1, &y))
		return VOID;
	Sym r = ig_gen_binary(g, T_PERCENT, x, y, a->call);
	/* '%' of f16 or bf16 computes in f32: round back once, to the operands' kind */
	ScalarKind k;
	const char *why;
	if (r.kind != S_VALUE || !promote_arith((ScalarKind)x.type.scalar, x.kind == S_CONST && x.weak,
	                                        (ScalarKind)y.type.scalar, y.kind == S_CONST && y.weak, false, &k, &why) ||
	    r.type.scalar == k)
		return r;
	return ig_value_sym(ig_cast_value(g, r.v, k, a->call));
}

Sym ig_gen_pow(Gen *g, Node *n)
{
	Sym b = ig_gen_expr(g, n->b), x = ig_gen_expr(g, n->a);
	if (x.kind == S_VOID || b.kind == S_VOID)
		return VOID;
	bool ints = x.kind == S_CONST && b.kind == S_CONST && x.weak && b.weak &&
	            !scalar_is_float((ScalarKind)x.type.scalar) && !scalar_is_float((ScalarKind)b.type.scalar);
	if (ints && ig_int_value(b) >= 0) { /* Python's int ** int */
		__int128 base = ig_int_value(x), e = ig_int_value(b), r = 1;
		if (base >= -1 && base <= 1) /* 0, 1 and -1: no loop */
			return weak_int(base == 1 || e == 0 ? 1 : base == 0 ? 0 : e % 2 ? -1 : 1);
		for (; e > 0; e--) {
			r *= base;
			if (r > INT64_MAX || r < INT64_MIN) {
				error(g, n->span, "%lld ** %lld does not fit in 64 bits", (long long)ig_int_value(x),
				      (long long)ig_int_value(b));
				return VOID;
			}
		}
		return weak_int(r);
	}
	Args a = {.call = n->span, .fname = "**", .n = 2};
	a.v[0] = x, a.v[1] = b;
	a.given[0] = a.given[1] = true;
	a.at[0] = n->a->span, a.at[1] = n->b->span;
	return ig_bi_libm2(g, &a, LIBM_POW);
}
