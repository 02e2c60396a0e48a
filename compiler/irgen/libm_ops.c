/* libm_ops.c: the IR helpers the math library of libm.c is written with.
 *
 * Every helper appends one op to the kernel, on a block of the context's
 * shape. The library uses only ops whose result both backends define to the
 * bit (add, mul, fma, div_rn, sqrt_rn, compares, selects, bit operations,
 * floor/rint/trunc), so the interpreter and the GPU agree exactly, except
 * where a function calls exp2a (the GPU's ex2.approx, language.md's table). */
#include "irgen/libm_int.h"

static Value *emit(Lm *m, OpCode code, Type t, Value *a, Value *b, Value *c)
{
	if (!m->ok || !a || (b == NULL && code != OP_NEG && code != OP_ABS && code != OP_MATH && code != OP_NOT &&
	                     code != OP_CAST && code != OP_BITCAST)) {
		m->ok = false;
		return NULL;
	}
	Value *v = ig_emit(m->g, code, m->at, t, a, b, c);
	if (!v)
		m->ok = false;
	return v;
}

Lm lm_ctx(Gen *g, Span at, ScalarKind k, Type shape)
{
	Lm m = {.g = g, .at = at, .k = k, .ok = true};
	m.t = type_block(type_scalar(k), shape.rank, shape.shape);
	int bits = scalar_bits(k);
	m.ti = type_block(type_scalar(bits == 64 ? SK_I64 : bits == 32 ? SK_I32 : SK_I16), shape.rank, shape.shape);
	m.tb = type_block(type_scalar(SK_I1), shape.rank, shape.shape);
	m.mbits = k == SK_F64 ? 52 : k == SK_F32 ? 23 : k == SK_F16 ? 10 : 7;
	m.bias = k == SK_F64 ? 1023 : k == SK_F16 ? 15 : 127;
	return m;
}

Value *lm_k(Lm *m, double v)
{
	if (!m->ok)
		return NULL;
	Value *r = ig_emit_const(m->g, ig_const_float(m->k, v, false), m->t, m->at);
	if (!r)
		m->ok = false;
	return r;
}

Value *lm_ki(Lm *m, int64_t v)
{
	if (!m->ok)
		return NULL;
	Value *r = ig_emit_const(m->g, ig_const_int((ScalarKind)m->ti.scalar, v, false), m->ti, m->at);
	if (!r)
		m->ok = false;
	return r;
}

Value *lm_add(Lm *m, Value *a, Value *b) { return emit(m, OP_ADD, m->t, a, b, NULL); }
Value *lm_sub(Lm *m, Value *a, Value *b) { return emit(m, OP_SUB, m->t, a, b, NULL); }
Value *lm_mul(Lm *m, Value *a, Value *b) { return emit(m, OP_MUL, m->t, a, b, NULL); }
Value *lm_neg(Lm *m, Value *a) { return emit(m, OP_NEG, m->t, a, NULL, NULL); }
Value *lm_abs(Lm *m, Value *a) { return emit(m, OP_ABS, m->t, a, NULL, NULL); }

Value *lm_fma(Lm *m, Value *a, Value *b, Value *c)
{
	if (!c) {
		m->ok = false;
		return NULL;
	}
	return emit(m, OP_FMA, m->t, a, b, c);
}

/* a / b correctly rounded on both backends (div_rn) */
Value *lm_div(Lm *m, Value *a, Value *b)
{
	Value *v = emit(m, OP_DIV, m->t, a, b, NULL);
	if (v)
		v->def->attr[0] = 1;
	return v;
}

Value *lm_math(Lm *m, MathFn fn, Value *a)
{
	Value *v = emit(m, OP_MATH, m->t, a, NULL, NULL);
	if (v)
		v->def->attr[0] = fn;
	return v;
}

Value *lm_cmp(Lm *m, CmpPred p, Value *a, Value *b)
{
	Value *v = emit(m, OP_CMP, m->tb, a, b, NULL);
	if (v)
		v->def->attr[0] = p;
	return v;
}

Value *lm_sel(Lm *m, Value *c, Value *a, Value *b)
{
	if (!b) {
		m->ok = false;
		return NULL;
	}
	return emit(m, OP_SELECT, a ? a->type : m->t, c, a, b);
}

Value *lm_and(Lm *m, Value *a, Value *b) { return emit(m, OP_AND, a ? a->type : m->t, a, b, NULL); }
Value *lm_or(Lm *m, Value *a, Value *b) { return emit(m, OP_OR, a ? a->type : m->t, a, b, NULL); }
Value *lm_not(Lm *m, Value *a) { return emit(m, OP_NOT, a ? a->type : m->tb, a, NULL, NULL); }
Value *lm_iadd(Lm *m, Value *a, Value *b) { return emit(m, OP_ADD, m->ti, a, b, NULL); }
Value *lm_isub(Lm *m, Value *a, Value *b) { return emit(m, OP_SUB, m->ti, a, b, NULL); }
Value *lm_shl(Lm *m, Value *a, int n) { return emit(m, OP_SHL, m->ti, a, lm_ki(m, n), NULL); }
Value *lm_shr(Lm *m, Value *a, int n) { return emit(m, OP_SHR, m->ti, a, lm_ki(m, n), NULL); }
Value *lm_bits(Lm *m, Value *a) { return emit(m, OP_BITCAST, m->ti, a, NULL, NULL); }
Value *lm_float(Lm *m, Value *i) { return emit(m, OP_BITCAST, m->t, i, NULL, NULL); }

Value *lm_to_int(Lm *m, Value *a) { return emit(m, OP_CAST, m->ti, a, NULL, NULL); }

/* the largest / smallest of two floats that are not NaN */
Value *lm_max(Lm *m, Value *a, Value *b) { return lm_sel(m, lm_cmp(m, CMP_GT, a, b), a, b); }
Value *lm_min(Lm *m, Value *a, Value *b) { return lm_sel(m, lm_cmp(m, CMP_LT, a, b), a, b); }

Value *lm_isnan(Lm *m, Value *a) { return lm_cmp(m, CMP_NE, a, a); }

/* |mag| with the sign of sgn, by the bits */
Value *lm_copysign(Lm *m, Value *mag, Value *sgn)
{
	int bits = scalar_bits(m->k);
	Value *s = lm_and(m, lm_bits(m, sgn), lm_ki(m, ~lm_low_bits(bits - 1)));
	Value *a = lm_and(m, lm_bits(m, mag), lm_ki(m, lm_low_bits(bits - 1)));
	return lm_float(m, lm_or(m, a, s));
}

Value *lm_signbit(Lm *m, Value *a) { return lm_cmp(m, CMP_LT, lm_bits(m, a), lm_ki(m, 0)); }

/* c[0] + x (c[1] + x (c[2] + ...)), by fmas in this order */
Value *lm_poly(Lm *m, Value *x, const double *c, int n)
{
	Value *acc = lm_k(m, c[n - 1]);
	for (int i = n - 2; i >= 0; i--)
		acc = lm_fma(m, acc, x, lm_k(m, c[i]));
	return acc;
}

/* 2^n for an integer block n (the context's int type) within the exponent
 * range of normal numbers, by its bits */
Value *lm_pow2i(Lm *m, Value *n) { return lm_float(m, lm_shl(m, lm_iadd(m, n, lm_ki(m, m->bias)), m->mbits)); }

/* x converted to another float kind (rounded once) */
Value *lm_convert(Lm *m, Value *x, ScalarKind k) { return x && m->ok ? ig_cast_value(m->g, x, k, m->at) : NULL; }

Value *lm_from_int(Lm *m, Value *i) { return emit(m, OP_CAST, m->t, i, NULL, NULL); }

/* a / n for a positive integer constant n (integers) */
Value *lm_idiv(Lm *m, Value *a, int64_t n) { return emit(m, OP_DIV, m->ti, a, lm_ki(m, n), NULL); }

/* fmod(a, b), exact on both backends */
Value *lm_rem(Lm *m, Value *a, Value *b) { return emit(m, OP_REM, m->t, a, b, NULL); }
