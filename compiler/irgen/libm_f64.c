/* libm_f64.c: the f64 forms of erfc, erfinv, lgamma, tgamma and the Bessel
 * functions i0 i1 j0 j1 y0 y1 (language.md, "Math functions in IR"), as
 * sequences of IR ops like the rest of libm.c (both backends compute them to
 * the bit).
 *
 * The f32 forms compute in f64 and round once; here f64 has no wider type, so
 * the sums that cancel are carried in two parts (double-double: a value
 * hi + lo, the rounding error of a sum by two-sum, of a product by an fma),
 * and the functions come from polynomials fitted on intervals (Chebyshev
 * interpolants in powers of x - center, libm_f64_coef.h, written by
 * tools/libm_f64_coef.py with mpmath), series where they converge fast, and
 * asymptotic expansions for large arguments. */
#include "irgen/libm_int.h"
#include "irgen/libm_f64_coef.h"

#include <math.h>

#define NFITS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* a + b = s + *e exactly */
static Value *two_sum(Lm *m, Value *a, Value *b, Value **e)
{
	Value *s = lm_add(m, a, b);
	Value *bb = lm_sub(m, s, a);
	*e = lm_add(m, lm_sub(m, a, lm_sub(m, s, bb)), lm_sub(m, b, bb));
	return s;
}

/* a + b = s + *e exactly, for |a| >= |b| (or a = 0) */
static Value *fast_two_sum(Lm *m, Value *a, Value *b, Value **e)
{
	Value *s = lm_add(m, a, b);
	*e = lm_sub(m, b, lm_sub(m, s, a));
	return s;
}

/* a b = p + *e exactly (but for underflow) */
static Value *two_prod(Lm *m, Value *a, Value *b, Value **e)
{
	Value *p = lm_mul(m, a, b);
	*e = lm_fma(m, a, b, lm_neg(m, p));
	return p;
}

/* c[0] + c[1] x + ... with x given as xh + xl: each Horner step takes the
 * low part in by a second fma, as if x were exact */
static Value *poly_dd(Lm *m, Value *xh, Value *xl, const double *c, int n)
{
	Value *acc = lm_k(m, c[n - 1]);
	for (int i = n - 2; i >= 0; i--)
		acc = lm_fma(m, acc, xh, lm_fma(m, acc, xl, lm_k(m, c[i])));
	return acc;
}

/* one fitted polynomial at x: c[0] + (c0lo + t (c[1] + t c[2] + ...)),
 * t = x - center (exact near the interval); with lo, as hi + *lo (the last
 * sum's rounding error) */
static Value *fit_eval_dd(Lm *m, Value *x, const LmFit *f, Value **lo)
{
	Value *t = lm_sub(m, x, lm_k(m, f->center));
	Value *acc = lm_poly(m, t, f->c + 1, f->n - 1);
	Value *tail = lm_fma(m, acc, t, lm_k(m, f->c0lo));
	if (!lo)
		return lm_add(m, lm_k(m, f->c[0]), tail);
	return two_sum(m, lm_k(m, f->c[0]), tail, lo);
}

static Value *fit_eval(Lm *m, Value *x, const LmFit *f) { return fit_eval_dd(m, x, f, NULL); }

/* the fit of the interval x falls in (the first below the first, the last
 * above the last), with lo as fit_eval_dd */
static Value *fits_eval_dd(Lm *m, Value *x, const LmFit *f, int n, Value **lo)
{
	Value *v = fit_eval_dd(m, x, &f[0], lo);
	for (int i = 1; i < n; i++) {
		Value *l, *w = fit_eval_dd(m, x, &f[i], lo ? &l : NULL);
		Value *in = lm_cmp(m, CMP_GE, x, lm_k(m, f[i].lo));
		v = lm_sel(m, in, w, v);
		if (lo)
			*lo = lm_sel(m, in, l, *lo);
	}
	return v;
}

static Value *fits_eval(Lm *m, Value *x, const LmFit *f, int n) { return fits_eval_dd(m, x, f, n, NULL); }

/* ---- erfc and erfinv ------------------------------------------------------- */

/* At a = |x|: below 1/2, erf(a) = a (2/sqrt(pi)) (1 - a^2/3 + a^4/10 - ...)
 * as *eh + *el (the leading product and 1 - erf in two parts), and erfc(a)
 * from it; from 1/2, erfc(a) = e^(-a^2) erfcx(a), erfcx by the fits below 8
 * and from 8 by its asymptotic series (1 / (a sqrt(pi))) sum_n (-1)^n
 * (2n - 1)!! / (2a^2)^n to n = 23, e^(-a^2) of a^2 in two parts. */
static Value *erfc_core(Lm *m, Value *a, Value **eh, Value **el)
{
	double c[16], f = 1;
	for (int n = 1; n <= 16; n++) { /* (2/sqrt(pi)) (-1)^n / (n! (2n + 1)) */
		f *= n;
		c[n - 1] = (n % 2 ? -1 : 1) * (LM_2_SQRTPI_HI / (f * (2 * n + 1)));
	}
	Value *a2l, *a2 = two_prod(m, a, a, &a2l);
	Value *tail = lm_mul(m, a, lm_fma(m, a2, lm_poly(m, a2, c, 16), lm_k(m, LM_2_SQRTPI_LO)));
	Value *pl, *ph = two_prod(m, a, lm_k(m, LM_2_SQRTPI_HI), &pl);
	*eh = ph;
	*el = lm_add(m, pl, tail);
	Value *e1, *s1 = fast_two_sum(m, lm_k(m, 1), lm_neg(m, ph), &e1);
	Value *near = lm_add(m, s1, lm_sub(m, e1, *el));

	double d[24], t = 1;
	for (int n = 0; n < 24; n++) { /* (-1)^n (2n - 1)!! / 2^n */
		d[n] = n % 2 ? -t : t;
		t *= (2 * n + 1) / 2.0;
	}
	Value *asym = lm_div(m, lm_mul(m, lm_poly(m, lm_div(m, lm_k(m, 1), a2), d, 24), lm_k(m, LM_1_SQRTPI_HI)), a);
	Value *fl, *fx = fits_eval_dd(m, a, ERFCX_FITS, NFITS(ERFCX_FITS), &fl);
	Value *past = lm_cmp(m, CMP_GE, a, lm_k(m, 8));
	fx = lm_sel(m, past, asym, fx);
	fl = lm_sel(m, past, lm_k(m, 0), fl);
	Value *e = lm_exp_core(m, lm_neg(m, a2), lm_neg(m, a2l), 0, NULL);
	Value *far = lm_fma(m, e, fx, lm_mul(m, e, fl));
	far = lm_sel(m, lm_cmp(m, CMP_GT, a, lm_k(m, 30)), lm_k(m, 0), far); /* and +inf */
	return lm_sel(m, lm_cmp(m, CMP_LT, a, lm_k(m, 0.5)), near, far);
}

Value *lm_erfc64(Lm *m, Value *x)
{
	Value *a = lm_abs(m, x), *eh, *el;
	Value *r = erfc_core(m, a, &eh, &el);
	/* erfc(-a) = 2 - erfc(a) = 1 + erf(a) below 1/2 */
	Value *e2, *s2 = fast_two_sum(m, lm_k(m, 1), eh, &e2);
	Value *neg = lm_sel(m, lm_cmp(m, CMP_LT, a, lm_k(m, 0.5)), lm_add(m, s2, lm_add(m, e2, el)), lm_sub(m, lm_k(m, 2), r));
	Value *v = lm_sel(m, lm_cmp(m, CMP_LT, x, lm_k(m, 0)), neg, r);
	return lm_sel(m, lm_isnan(m, x), x, v);
}

/* erfinv at a = |y|: Winitzki's closed form (within a few 1e-3, written
 * without its cancellation for small a), then three Halley steps on
 * f(x) = erf(x) - a, x -= u / (1 + x u), u = f / f' = f (sqrt(pi)/2) e^(x^2):
 * f from erf in two parts while x < 1/2, else as (1 - a) - erfc(x) (1 - a
 * exact there, as a >= erf(1/2)) */
Value *lm_erfinv64(Lm *m, Value *y)
{
	Value *a = lm_abs(m, y);
	Value *l = lm_log_core(m, lm_fma(m, lm_neg(m, a), a, lm_k(m, 1)), NULL); /* log(1 - a^2) */
	Value *b = lm_fma(m, l, lm_k(m, 0.5), lm_k(m, 2 / (3.14159265358979323846 * 0.147)));
	Value *q = lm_mul(m, l, lm_k(m, -1 / 0.147));
	/* sqrt(sqrt(b^2 + q) - b) = sqrt(q / (sqrt(b^2 + q) + b)) */
	Value *x = lm_math(m, MATH_SQRT_RN, lm_div(m, q, lm_add(m, lm_math(m, MATH_SQRT_RN, lm_fma(m, b, b, q)), b)));
	Value *om = lm_sub(m, lm_k(m, 1), a);
	for (int i = 0; i < 3; i++) {
		Value *eh, *el;
		Value *c = erfc_core(m, x, &eh, &el);
		Value *lowf = lm_add(m, lm_sub(m, eh, a), el);
		Value *f = lm_sel(m, lm_cmp(m, CMP_LT, x, lm_k(m, 0.5)), lowf, lm_sub(m, om, c));
		Value *x2l, *x2 = two_prod(m, x, x, &x2l);
		Value *g = lm_exp_core(m, x2, x2l, 0, NULL);
		Value *u = lm_mul(m, lm_mul(m, f, lm_k(m, LM_SQRTPI_2_HI)), g);
		x = lm_sub(m, x, lm_div(m, u, lm_fma(m, x, u, lm_k(m, 1))));
	}
	Value *ay = a;
	Value *r = lm_sel(m, lm_cmp(m, CMP_EQ, ay, lm_k(m, 1)), lm_k(m, INFINITY), x);
	r = lm_sel(m, lm_cmp(m, CMP_GT, ay, lm_k(m, 1)), lm_k(m, NAN), r);
	r = lm_sel(m, lm_cmp(m, CMP_EQ, y, lm_k(m, 0)), lm_k(m, 0), r);
	r = lm_copysign(m, r, y);
	return lm_sel(m, lm_isnan(m, y), y, r);
}

/* ---- lgamma and tgamma ----------------------------------------------------- */

/* Stirling's series for z >= 8, in two parts: log Gamma(z) = (z - 1/2)
 * log z - z + log(2 pi)/2 + sum_k B_2k / (2k (2k - 1) z^(2k - 1)), written
 * z (log z - 1) - (log z)/2 + ... with log z in two parts (lm_log_dd) and
 * the products and sums by two-prod and two-sum. *lz: log z's high part. */
static Value *stirling(Lm *m, Value *z, Value **lo, Value **lz)
{
	Value *ll, *lh = lm_log_dd(m, z, &ll);
	*lz = lh;
	Value *e0, *h = fast_two_sum(m, lh, lm_k(m, -1), &e0); /* |log z| > 1 */
	Value *l = lm_add(m, e0, ll);
	Value *pl, *ph = two_prod(m, z, h, &pl);
	pl = lm_fma(m, z, l, pl);
	Value *e1, *s1 = two_sum(m, ph, lm_mul(m, lh, lm_k(m, -0.5)), &e1);
	Value *e2, *s2 = two_sum(m, s1, lm_k(m, LM_LOG_2PI_2_HI), &e2);
	Value *iz = lm_div(m, lm_k(m, 1), z);
	Value *corr = lm_mul(m, iz, lm_poly(m, lm_mul(m, iz, iz), LM_STIRLING, 12));
	Value *low = lm_add(m, lm_add(m, pl, lm_add(m, e1, e2)), lm_fma(m, ll, lm_k(m, -0.5), lm_add(m, corr, lm_k(m, LM_LOG_2PI_2_LO))));
	Value *hi = lm_add(m, s2, low);
	*lo = lm_sub(m, low, lm_sub(m, hi, s2));
	/* z (log z - 1) overflows with the result */
	return lm_sel(m, lm_cmp(m, CMP_EQ, ph, lm_k(m, INFINITY)), ph, hi);
}

/* sin(pi r) for 0 <= r <= 1/2 as hi + *lo: up to 1/4 pi r in two parts
 * and Taylor to (pi r)^25; above, cos(pi w), w = 1/2 - r (exact), as
 * 1 - p^2/2 + p^4 (1/24 - p^2/720 + ...), p = pi w, p^2 in two parts (the
 * sine's correction term would be as large as a quarter of the result) */
static Value *sin_pi(Lm *m, Value *r, Value **lo)
{
	Value *hi_r = lm_cmp(m, CMP_GT, r, lm_k(m, 0.25));
	Value *w = lm_sel(m, hi_r, lm_sub(m, lm_k(m, 0.5), r), r);
	Value *pl, *ph = two_prod(m, w, lm_k(m, LM_PI_HI), &pl);
	pl = lm_fma(m, w, lm_k(m, LM_PI_LO), pl);
	double c[12], cc[12], f = 6, g = 24;
	for (int i = 0; i < 12; i++) { /* -1/3!, 1/5!, ...; 1/4!, -1/6!, ... */
		c[i] = (i % 2 ? 1 : -1) / f;
		cc[i] = (i % 2 ? -1 : 1) / g;
		f *= (2 * i + 4) * (2 * i + 5);
		g *= (2 * i + 5) * (2 * i + 6);
	}
	Value *zl, *z = two_prod(m, ph, ph, &zl);
	zl = lm_fma(m, lm_add(m, ph, ph), pl, zl);
	Value *tail = lm_fma(m, lm_mul(m, ph, z), lm_poly(m, z, c, 12), pl);
	Value *sl, *sh = fast_two_sum(m, ph, tail, &sl);
	Value *e, *h = fast_two_sum(m, lm_k(m, 1), lm_mul(m, z, lm_k(m, -0.5)), &e);
	Value *ctail = lm_fma(m, lm_mul(m, z, z), lm_poly(m, z, cc, 12), lm_fma(m, zl, lm_k(m, -0.5), e));
	Value *cl, *ch = fast_two_sum(m, h, ctail, &cl);
	*lo = lm_sel(m, hi_r, cl, sl);
	return lm_sel(m, hi_r, ch, sh);
}

/* log Gamma(z) for z >= 1/2: the fits of log Gamma(1 + t) / t and
 * log Gamma(2 + t) / t (t = z - 1, z - 2 exact) up to 2.5, so that the zeros
 * at 1 and 2 keep their relative precision; those of log Gamma to 8;
 * Stirling from 8 (*blo: its low part there, else 0) */
static Value *lgamma_pos(Lm *m, Value *z, Value **blo)
{
	Value *t1 = lm_sub(m, z, lm_k(m, 1)), *t2 = lm_sub(m, z, lm_k(m, 2));
	Value *v = lm_mul(m, t1, fit_eval(m, t1, &LGAMMA1_FITS[0]));
	v = lm_sel(m, lm_cmp(m, CMP_GE, z, lm_k(m, 1.5)), lm_mul(m, t2, fit_eval(m, t2, &LGAMMA2_FITS[0])), v);
	v = lm_sel(m, lm_or(m, lm_cmp(m, CMP_EQ, t1, lm_k(m, 0)), lm_cmp(m, CMP_EQ, t2, lm_k(m, 0))), lm_k(m, 0), v); /* +0, not t g = -0 */
	v = lm_sel(m, lm_cmp(m, CMP_GE, z, lm_k(m, 2.5)), fits_eval(m, z, LGAMMA_FITS, NFITS(LGAMMA_FITS)), v);
	Value *lz, *slo, *s = stirling(m, z, &slo, &lz);
	Value *big = lm_cmp(m, CMP_GE, z, lm_k(m, 8));
	*blo = lm_sel(m, big, slo, lm_k(m, 0));
	return lm_sel(m, big, s, v);
}

/* lgamma: below |x| = 1/2, x g1(x) - log|x| (g1 the fit of log Gamma(1 + t)
 * / t, at t = x exactly); from 1/2 lgamma_pos; at x <= -1/2 the reflection
 * log(pi / |x sin(pi x)|) - lgamma(-x), sin(pi x) = +-sin(pi r) for
 * r = x - rint(x) (exact), its logarithm in two parts */
Value *lm_lgamma64(Lm *m, Value *x)
{
	Value *a = lm_abs(m, x);
	Value *plo, *pos = lgamma_pos(m, lm_max(m, a, lm_k(m, 0.5)), &plo);
	Value *lxl, *lxh = lm_log_dd(m, a, &lxl);
	Value *small = lm_sub(m, lm_fma(m, x, fit_eval(m, x, &LGAMMA1_FITS[0]), lm_neg(m, lxl)), lxh);
	Value *r = lm_sub(m, x, lm_math(m, MATH_RINT, x));
	Value *sl, *sh = sin_pi(m, lm_abs(m, r), &sl);
	Value *dl, *dh = two_prod(m, a, sh, &dl);
	dl = lm_fma(m, a, sl, dl);
	Value *ldl, *ldh = lm_log_dd(m, dh, &ldl);
	/* log pi - log(dh + dl) - lgamma(a) */
	Value *e1, *s1 = two_sum(m, lm_k(m, LM_LOG_PI_HI), lm_neg(m, ldh), &e1);
	Value *e2, *s2 = two_sum(m, s1, lm_neg(m, pos), &e2);
	Value *low = lm_add(m, lm_add(m, e1, e2), lm_sub(m, lm_sub(m, lm_k(m, LM_LOG_PI_LO), ldl), lm_add(m, lm_div(m, dl, dh), plo)));
	Value *refl = lm_add(m, s2, low);
	Value *v = lm_sel(m, lm_cmp(m, CMP_LT, a, lm_k(m, 0.5)), small, lm_sel(m, lm_cmp(m, CMP_GT, x, lm_k(m, 0)), pos, refl));
	/* poles: 0 and the negative integers (every x <= -2^52); +-inf */
	Value *pole = lm_and(m, lm_cmp(m, CMP_LE, x, lm_k(m, 0)), lm_cmp(m, CMP_EQ, r, lm_k(m, 0)));
	pole = lm_or(m, pole, lm_cmp(m, CMP_EQ, a, lm_k(m, INFINITY)));
	v = lm_sel(m, pole, lm_k(m, INFINITY), v);
	return lm_sel(m, lm_isnan(m, x), x, v);
}

/* Gamma(x) for x > -8 (inv false), or 2^600 / Gamma(x) for x >= 8 (inv):
 * below 8, Gamma(x) = Gamma(x + 16) / (x (x + 1) ... (x + 15)) with x + 16
 * and the product in two parts (a negative x gets its sign from the
 * product); Stirling's exponent (lgamma's) in two parts, its low part
 * widened by (x + 16)'s rounding error times log(x + 16) (the derivative),
 * and e^ of it by lm_exp_core (a single rounding of the exponent's sum) */
static Value *gamma_fwd(Lm *m, Value *x, bool inv)
{
	if (inv) {
		Value *lo, *lz, *e = stirling(m, lm_min(m, x, lm_k(m, 400)), &lo, &lz);
		return lm_exp_core(m, lm_neg(m, e), lm_neg(m, lo), 600, NULL);
	}
	Value *shift = lm_cmp(m, CMP_LT, x, lm_k(m, 8));
	Value *zl, *zh = two_sum(m, x, lm_k(m, 16), &zl);
	Value *qh = x, *ql = lm_k(m, 0);
	for (int i = 1; i < 16; i++) {
		Value *sl, *sh = two_sum(m, x, lm_k(m, i), &sl);
		Value *pl, *ph = two_prod(m, qh, sh, &pl);
		ql = lm_add(m, pl, lm_fma(m, qh, sl, lm_mul(m, ql, sh)));
		qh = ph;
	}
	Value *z = lm_sel(m, shift, zh, lm_min(m, x, lm_k(m, 400)));
	Value *lo, *lz, *e = stirling(m, z, &lo, &lz);
	lo = lm_fma(m, lm_sel(m, shift, zl, lm_k(m, 0)), lz, lo);
	qh = lm_sel(m, shift, qh, lm_k(m, 1));
	ql = lm_sel(m, shift, ql, lm_k(m, 0));
	Value *g = lm_div(m, lm_exp_core(m, e, lo, 0, NULL), qh);
	return lm_sel(m, shift, lm_fma(m, lm_neg(m, g), lm_div(m, ql, qh), g), g); /* g may be inf */
}

/* tgamma: 1/x - gamma below |x| = 2^-28; gamma_fwd above -8; below, the
 * reflection Gamma(x) = -pi / (x sin(pi x) Gamma(-x)), scaled by 2^600
 * until the end so that a subnormal result rounds about once, its sign
 * negative between an odd negative integer and the next even one;
 * NaN at the negative integers and -inf, +-inf at +-0 */
Value *lm_tgamma64(Lm *m, Value *x)
{
	Value *a = lm_abs(m, x);
	Value *fwd = gamma_fwd(m, x, false); /* for x > -8 */
	Value *inv = gamma_fwd(m, lm_max(m, a, lm_k(m, 8)), true); /* 2^600 / Gamma(a) */
	Value *r = lm_sub(m, x, lm_math(m, MATH_RINT, x));
	Value *sl, *sh = sin_pi(m, lm_abs(m, r), &sl);
	Value *dl, *dh = two_prod(m, a, sh, &dl);
	dl = lm_fma(m, a, sl, dl);
	/* pi / (dh + dl) as q + ql, then one rounding of inv (q + ql) */
	Value *q = lm_div(m, lm_k(m, LM_PI_HI), dh);
	Value *rem = lm_fma(m, lm_neg(m, q), dh, lm_k(m, LM_PI_HI)); /* exact */
	Value *ql = lm_div(m, lm_fma(m, lm_neg(m, q), dl, lm_add(m, rem, lm_k(m, LM_PI_LO))), dh);
	Value *g = lm_fma(m, inv, q, lm_mul(m, inv, ql));
	g = lm_mul(m, g, lm_k(m, 0x1p-600));
	Value *fl = lm_math(m, MATH_FLOOR, x);
	Value *half = lm_mul(m, fl, lm_k(m, 0.5));
	Value *odd = lm_cmp(m, CMP_NE, lm_math(m, MATH_FLOOR, half), half);
	Value *refl = lm_sel(m, odd, lm_neg(m, g), g);
	Value *tiny = lm_sub(m, lm_div(m, lm_k(m, 1), x), lm_k(m, LM_EULER_HI));
	Value *v = lm_sel(m, lm_cmp(m, CMP_GT, x, lm_k(m, -8)), fwd, refl);
	v = lm_sel(m, lm_cmp(m, CMP_LT, a, lm_k(m, 0x1p-28)), tiny, v);
	Value *negint = lm_and(m, lm_cmp(m, CMP_LT, x, lm_k(m, 0)), lm_cmp(m, CMP_EQ, r, lm_k(m, 0)));
	v = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, INFINITY)), x, v);
	v = lm_sel(m, negint, lm_k(m, NAN), v); /* -inf too */
	v = lm_sel(m, lm_cmp(m, CMP_EQ, x, lm_k(m, 0)), lm_copysign(m, lm_k(m, INFINITY), x), v);
	return lm_sel(m, lm_isnan(m, x), x, v);
}

/* ---- the Bessel functions ---------------------------------------------------- */

/* a_k(nu) = prod_{j <= k} (4 nu^2 - (2j - 1)^2) / (k! 8^k), k = 0..n-1, with
 * signs s_k (the asymptotic expansions of I, J and Y) */
static void hankel_terms(int nu, double *c, int n)
{
	double t = 1;
	for (int k = 0; k < n; k++) {
		c[k] = t;
		t *= (4.0 * nu * nu - (2 * k + 1) * (2 * k + 1)) / ((k + 1) * 8.0);
	}
}

/* I_nu(x), nu = 0, 1, at a = |x|: below 3 the series (a/2)^nu sum u^k /
 * (k! (k + nu)!), u = a^2/4 in two parts (positive terms, to k = 19); to 21
 * e^a times the fits of e^-a I_nu(a); from
 * 21 e^(a - log(2 pi a)/2) sum_k (-1)^k a_k(nu) / a^k to k = 39, the exponent
 * in two parts (one rounding of e^, and no overflow before the result's) */
static Value *bessel_i64(Lm *m, Value *x, int nu)
{
	Value *a = lm_abs(m, x);
	double c[20];
	for (int k = 0; k < 20; k++) { /* 1 / (k! (k + nu)!), rounded once */
		long double f = 1;
		for (int j = 2; j <= k; j++)
			f *= j;
		c[k] = (double)(1 / (f * (nu ? f * (k + 1) : f)));
	}
	Value *ul, *uh = two_prod(m, a, a, &ul);
	uh = lm_mul(m, uh, lm_k(m, 0.25));
	ul = lm_mul(m, ul, lm_k(m, 0.25));
	Value *ser = poly_dd(m, uh, ul, c, 20);
	if (nu)
		ser = lm_mul(m, ser, lm_mul(m, a, lm_k(m, 0.5)));
	Value *mid = lm_mul(m, lm_exp_core(m, lm_min(m, a, lm_k(m, 21)), NULL, 0, NULL),
	                    nu ? fits_eval(m, a, IE1_FITS, NFITS(IE1_FITS)) : fits_eval(m, a, IE0_FITS, NFITS(IE0_FITS)));
	ser = lm_sel(m, lm_cmp(m, CMP_LT, a, lm_k(m, 3)), ser, mid);
	double d[40];
	hankel_terms(nu, d, 40);
	for (int k = 1; k < 40; k += 2)
		d[k] = -d[k];
	Value *ac = lm_min(m, a, lm_k(m, 1000));
	Value *sum = lm_poly(m, lm_div(m, lm_k(m, 1), ac), d, 40);
	Value *ll, *lh = lm_log_dd(m, ac, &ll);
	Value *e1, *s1 = two_sum(m, ac, lm_mul(m, lh, lm_k(m, -0.5)), &e1);
	Value *e2, *s2 = two_sum(m, s1, lm_k(m, -LM_LOG_2PI_2_HI), &e2);
	Value *lo = lm_add(m, lm_add(m, e1, e2), lm_fma(m, ll, lm_k(m, -0.5), lm_k(m, -LM_LOG_2PI_2_LO)));
	Value *big = lm_mul(m, lm_exp_core(m, s2, lo, 0, NULL), sum);
	Value *r = lm_sel(m, lm_cmp(m, CMP_LT, a, lm_k(m, 21)), ser, big);
	if (nu)
		r = lm_copysign(m, r, x);
	r = lm_sel(m, lm_cmp(m, CMP_EQ, a, lm_k(m, INFINITY)), nu ? x : lm_k(m, INFINITY), r);
	return lm_sel(m, lm_isnan(m, x), x, r);
}

Value *lm_i0_64(Lm *m, Value *x) { return bessel_i64(m, x, 0); }
Value *lm_i1_64(Lm *m, Value *x) { return bessel_i64(m, x, 1); }

/* J_nu, Y_nu below a = 2 by their series in u = -a^2/4 (u in two parts, to
 * k = 17; language.md's f32 row has the Y forms) */
static Value *jy_series(Lm *m, Value *a, int nu, bool y)
{
	enum { K = 18 };
	double cj[K], cy[K], f = 1, h = 0;
	for (int k = 0; k < K; k++) {
		double fk1 = f * (k + 1); /* (k+1)! */
		double hk1 = h + 1.0 / (k + 1);
		cj[k] = 1 / (f * (nu ? fk1 : f));
		cy[k] = nu ? (h + hk1 - 2 * LM_EULER_HI) / (f * fk1) : h / (f * f);
		f = fk1;
		h = hk1;
	}
	Value *ul, *uh = two_prod(m, a, a, &ul);
	uh = lm_mul(m, uh, lm_k(m, -0.25));
	ul = lm_mul(m, ul, lm_k(m, -0.25));
	Value *j = poly_dd(m, uh, ul, cj, K);
	if (nu)
		j = lm_mul(m, j, lm_mul(m, a, lm_k(m, 0.5)));
	if (!y)
		return j;
	/* log(a/2) = log a - log 2 (a/2 would underflow for the least subnormal) */
	Value *ll, *lg = lm_log_dd(m, a, &ll);
	Value *e0, *lg2 = two_sum(m, lg, lm_k(m, -LM_LN2_HI), &e0);
	ll = lm_add(m, lm_sub(m, ll, lm_k(m, LM_LN2_LO)), e0);
	lg = lg2;
	Value *sy = poly_dd(m, uh, ul, cy, K);
	if (nu) /* (2/pi) log(a/2) J1 - (2/pi) / a - (a / (2 pi)) sy */
		return lm_sub(m, lm_fma(m, lm_mul(m, lm_k(m, LM_2_PI_HI), lg), j, lm_neg(m, lm_div(m, lm_k(m, LM_2_PI_HI), a))),
		              lm_mul(m, lm_mul(m, a, lm_k(m, 0.5 / 3.14159265358979323846)), sy));
	/* (2/pi) ((log(a/2) + gamma) J0 - sy) */
	Value *el, *eh = two_sum(m, lg, lm_k(m, LM_EULER_HI), &el);
	el = lm_add(m, el, lm_add(m, ll, lm_k(m, LM_EULER_LO)));
	return lm_mul(m, lm_k(m, LM_2_PI_HI), lm_fma(m, eh, j, lm_fma(m, el, j, lm_neg(m, sy))));
}

/* sin a and cos a for a >= 0 up to about 1.6e9: a = k pi/2 + r (pi/2 in
 * three parts, the first two products exact), Taylor series of r */
static void sincos_big(Lm *m, Value *a, Value **sa, Value **ca)
{
	Value *kq = lm_math(m, MATH_RINT, lm_mul(m, a, lm_k(m, LM_2_PI_HI)));
	Value *nk = lm_neg(m, kq);
	Value *r = lm_fma(m, nk, lm_k(m, LM_PIO2_1), a);
	r = lm_fma(m, nk, lm_k(m, LM_PIO2_2), r);
	r = lm_fma(m, nk, lm_k(m, LM_PIO2_3), r);
	double sc[12], cc[12], g = 1;
	for (int i = 0; i < 12; i++) {
		sc[i] = (i % 2 ? -1 : 1) / g;
		g *= (2 * i + 2) * (2 * i + 3);
	}
	g = 2;
	for (int i = 0; i < 12; i++) { /* cos r = 1 + r^2 (-1/2 + r^2/24 - ...) */
		cc[i] = (i % 2 ? 1 : -1) / g;
		g *= (2 * i + 3) * (2 * i + 4);
	}
	Value *r2 = lm_mul(m, r, r);
	Value *S = lm_fma(m, lm_mul(m, r, r2), lm_poly(m, r2, sc + 1, 11), r);
	Value *C = lm_fma(m, r2, lm_poly(m, r2, cc, 12), lm_k(m, 1));
	Value *q4 = lm_sub(m, kq, lm_mul(m, lm_math(m, MATH_FLOOR, lm_mul(m, kq, lm_k(m, 0.25))), lm_k(m, 4)));
	Value *q1 = lm_cmp(m, CMP_EQ, q4, lm_k(m, 1)), *q2 = lm_cmp(m, CMP_EQ, q4, lm_k(m, 2)), *q3 = lm_cmp(m, CMP_EQ, q4, lm_k(m, 3));
	*sa = lm_sel(m, q1, C, lm_sel(m, q2, lm_neg(m, S), lm_sel(m, q3, lm_neg(m, C), S)));
	*ca = lm_sel(m, q1, lm_neg(m, S), lm_sel(m, q2, lm_neg(m, C), lm_sel(m, q3, S, C)));
}

/* J_nu and Y_nu at a = |x| > 0: the series below 2, the fits to 8; from 8
 * Hankel's form sqrt(2/(pi a)) (P cos c - Q sin c) (J), (P sin c + Q cos c)
 * (Y), c = a - (2 nu + 1) pi/4, with P and Q from their fits to 22 and
 * their asymptotic series (to the a^-38 and a^-39 terms) from 22 */
static Value *bessel_jy64(Lm *m, Value *a, int nu, bool y)
{
	static const LmFit *const FIT[2][2] = {{J0_FITS, Y0_FITS}, {J1_FITS, Y1_FITS}};
	static const LmFit *const PF[2] = {P0_FITS, P1_FITS}, *const QF[2] = {Q0_FITS, Q1_FITS};
	Value *small = jy_series(m, a, nu, y);
	Value *mid = fits_eval(m, a, FIT[nu][y], NFITS(J0_FITS));
	double h[40], p[20], q[20];
	hankel_terms(nu, h, 40);
	for (int k = 0; k < 40; k++) {
		double v = (k / 2) % 2 ? -h[k] : h[k];
		if (k % 2)
			q[k / 2] = v;
		else
			p[k / 2] = v;
	}
	Value *ac = lm_max(m, a, lm_k(m, 1));
	Value *ia = lm_div(m, lm_k(m, 1), ac), *ia2 = lm_mul(m, ia, ia);
	Value *far = lm_cmp(m, CMP_GE, a, lm_k(m, 22));
	Value *P = lm_sel(m, far, lm_poly(m, ia2, p, 20), fits_eval(m, a, PF[nu], NFITS(P0_FITS)));
	Value *Q = lm_sel(m, far, lm_mul(m, ia, lm_poly(m, ia2, q, 20)), fits_eval(m, a, QF[nu], NFITS(Q0_FITS)));
	Value *sa, *ca;
	sincos_big(m, a, &sa, &ca);
	/* cos(a - pi/4) = (cos a + sin a) / sqrt 2, sin(a - pi/4) = (sin a - cos a) / sqrt 2 */
	const double rs2 = 0.70710678118654752440;
	Value *cc4 = lm_mul(m, lm_add(m, ca, sa), lm_k(m, rs2)), *sc4 = lm_mul(m, lm_sub(m, sa, ca), lm_k(m, rs2));
	Value *cosc = nu ? sc4 : cc4, *sinc = nu ? lm_neg(m, cc4) : sc4;
	Value *amp = lm_math(m, MATH_SQRT_RN, lm_div(m, lm_k(m, LM_2_PI_HI), ac));
	Value *big = y ? lm_mul(m, amp, lm_fma(m, P, sinc, lm_mul(m, Q, cosc)))
	               : lm_mul(m, amp, lm_fma(m, P, cosc, lm_neg(m, lm_mul(m, Q, sinc))));
	Value *v = lm_sel(m, lm_cmp(m, CMP_LT, a, lm_k(m, 8)), mid, big);
	return lm_sel(m, lm_cmp(m, CMP_LT, a, lm_k(m, 2)), small, v);
}

static Value *bessel_jy64_fn(Lm *m, Value *x, int nu, bool y)
{
	return lm_bessel_jy_special(m, x, bessel_jy64(m, lm_abs(m, x), nu, y), nu, y);
}

Value *lm_j0_64(Lm *m, Value *x) { return bessel_jy64_fn(m, x, 0, false); }
Value *lm_j1_64(Lm *m, Value *x) { return bessel_jy64_fn(m, x, 1, false); }
Value *lm_y0_64(Lm *m, Value *x) { return bessel_jy64_fn(m, x, 0, true); }
Value *lm_y1_64(Lm *m, Value *x) { return bessel_jy64_fn(m, x, 1, true); }
