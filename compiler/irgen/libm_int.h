/* libm_int.h: the IR helpers of irgen's math library (libm_ops.c), used by
 * libm.c. Each appends ops on blocks of one shape and float kind; a failure
 * (reported by ig_emit) clears ok and every later helper returns NULL. */
#ifndef BLK_IRGEN_LIBM_INT_H
#define BLK_IRGEN_LIBM_INT_H

#include "irgen/irgen_int.h"

typedef struct Lm {
	Gen *g;
	Span at;
	ScalarKind k;    /* the float kind computed in */
	Type t, ti, tb;  /* blocks of k, of the signed integer of k's width, of i1 */
	int mbits, bias; /* k's stored mantissa bits and exponent bias */
	bool ok;
} Lm;

/* The integer of bit b alone, and of bits 0..b-1 (b up to 63: in unsigned
 * arithmetic, so that bit 63, an f64's sign, is no signed overflow). */
static inline int64_t lm_bit(int b) { return (int64_t)((uint64_t)1 << b); }
static inline int64_t lm_low_bits(int b) { return (int64_t)(((uint64_t)1 << b) - 1); }

Lm lm_ctx(Gen *g, Span at, ScalarKind k, Type shape);
Value *lm_k(Lm *m, double v);
Value *lm_ki(Lm *m, int64_t v);
Value *lm_add(Lm *m, Value *a, Value *b);
Value *lm_sub(Lm *m, Value *a, Value *b);
Value *lm_mul(Lm *m, Value *a, Value *b);
Value *lm_neg(Lm *m, Value *a);
Value *lm_abs(Lm *m, Value *a);
Value *lm_fma(Lm *m, Value *a, Value *b, Value *c);
Value *lm_div(Lm *m, Value *a, Value *b);
Value *lm_math(Lm *m, MathFn fn, Value *a);
Value *lm_cmp(Lm *m, CmpPred p, Value *a, Value *b);
Value *lm_sel(Lm *m, Value *c, Value *a, Value *b);
Value *lm_and(Lm *m, Value *a, Value *b);
Value *lm_or(Lm *m, Value *a, Value *b);
Value *lm_not(Lm *m, Value *a);
Value *lm_iadd(Lm *m, Value *a, Value *b);
Value *lm_isub(Lm *m, Value *a, Value *b);
Value *lm_shl(Lm *m, Value *a, int n);
Value *lm_shr(Lm *m, Value *a, int n);
Value *lm_bits(Lm *m, Value *a);
Value *lm_float(Lm *m, Value *i);
Value *lm_to_int(Lm *m, Value *a);
Value *lm_from_int(Lm *m, Value *i);
Value *lm_rem(Lm *m, Value *a, Value *b);
Value *lm_idiv(Lm *m, Value *a, int64_t n);
Value *lm_max(Lm *m, Value *a, Value *b);
Value *lm_min(Lm *m, Value *a, Value *b);
Value *lm_isnan(Lm *m, Value *a);
Value *lm_copysign(Lm *m, Value *mag, Value *sgn);
Value *lm_signbit(Lm *m, Value *a);
Value *lm_poly(Lm *m, Value *x, const double *c, int n);
Value *lm_pow2i(Lm *m, Value *n);
Value *lm_convert(Lm *m, Value *x, ScalarKind k);

/* libm.c's cores, shared with the f64 forms of libm_f64.c: e^(hi + lo) 2^adj
 * (and e^hi - 1 in *em1 when not NULL), log x, and log x as hi + *lo (f64,
 * about 2^-65 relative) */
Value *lm_exp_core(Lm *m, Value *hi, Value *lo, int adj, Value **em1);
Value *lm_log_core(Lm *m, Value *x, Value *corr);
Value *lm_log_dd(Lm *m, Value *x, Value **lo);
/* J (y false) or Y of order nu at x from res, their value at |x| away from
 * the edges: +-0, +-inf, NaN and, for Y, x < 0 set as C's functions do */
Value *lm_bessel_jy_special(Lm *m, Value *x, Value *res, int nu, bool y);

/* the f64 forms of libm_f64.c */
Value *lm_erfc64(Lm *m, Value *x);
Value *lm_erfinv64(Lm *m, Value *x);
Value *lm_lgamma64(Lm *m, Value *x);
Value *lm_tgamma64(Lm *m, Value *x);
Value *lm_i0_64(Lm *m, Value *x);
Value *lm_i1_64(Lm *m, Value *x);
Value *lm_j0_64(Lm *m, Value *x);
Value *lm_j1_64(Lm *m, Value *x);
Value *lm_y0_64(Lm *m, Value *x);
Value *lm_y1_64(Lm *m, Value *x);

#endif
