/* builtins_scaled.c: dot_scaled, the product of two blocks in the
 * microscaling formats of 4- and 8-bit training and inference (OCP MX:
 * e2m1, e4m3 and e5m2 elements, one e8m0 scale for 32 of them along K).
 * Each operand is decoded to bf16 and multiplied by its scales, both
 * exactly (an e2m1 or fp8 value is a bf16 value, a scale a power of two),
 * and the two go to an ordinary dot: tensor cores on the GPU, the same
 * numbers on the interpreter. Hopper has no microscaled MMA, so this is
 * what its fastest path would do too (upcast in registers, then wgmma). */
#include "irgen/irgen_int.h"

enum { FMT_E2M1, FMT_E4M3, FMT_E5M2, FMT_BF16, FMT_FP16 };
static const char FORMATS[] = "e2m1|e4m3|e5m2|bf16|fp16";
static const char *const FORMAT_NAME[] = {"e2m1", "e4m3", "e5m2", "bf16", "fp16"};

/* Arguments as dot_scaled's table names them (builtins.c). */
enum { A_LHS, A_LHS_SCALE, A_LHS_FMT, A_RHS, A_RHS_SCALE, A_RHS_FMT, A_ACC, A_FAST, A_LHS_KPACK, A_RHS_KPACK, A_OUT };

static Value *bin(Gen *g, int tok, Value *x, Sym y, Span at)
{
	Sym r = ig_gen_binary(g, tok, ig_value_sym(x), y, at);
	return r.kind == S_VALUE ? r.v : NULL;
}

static Value *as_kind(Gen *g, Value *v, ScalarKind k, bool bitcast, Span at)
{
	if (!v)
		return NULL;
	if (!bitcast)
		return ig_cast_value(g, v, k, at);
	Type t = v->type;
	t.scalar = k;
	return ig_emit(g, OP_BITCAST, at, t, v, NULL, NULL);
}

static Value *reshaped(Gen *g, Value *v, int rank, const int32_t *shape, Span at)
{
	return v ? ig_emit(g, OP_RESHAPE, at, type_block(v->type, rank, shape), v, NULL, NULL) : NULL;
}

/* The bytes of a u8 or i8 block as i32 0..255. */
static Value *bytes_of(Gen *g, Value *v, Span at)
{
	return bin(g, T_AMP, as_kind(g, v, SK_I32, false, at), weak_int(255), at);
}

/* bf16 from 16 bits held in an i32 block. */
static Value *bf16_of_bits(Gen *g, Value *bits, Span at)
{
	return as_kind(g, as_kind(g, bits, SK_I16, false, at), SK_BF16, true, at);
}

/* e2m1 values packed two a byte (the first in the low bits) along `axis`
 * of the 2-D block v, unpacked to bf16 with that axis twice as long. An
 * e2m1 nibble is s e e m: e > 0 is (1 + m/2) 2^(e-1), e = 0 is m/2. */
static Value *unpack_e2m1(Gen *g, Value *v, int axis, Span at)
{
	Value *x = bytes_of(g, v, at);
	Value *lo = bin(g, T_AMP, x, weak_int(15), at), *hi = x ? bin(g, T_SHR, x, weak_int(4), at) : NULL;
	if (!lo || !hi)
		return NULL;
	int32_t R = v->type.shape[0], C = v->type.shape[1];
	int32_t pair[3] = {R, C, 2};
	Value *j = ig_emit(g, OP_JOIN, at, type_block(lo->type, 3, pair), lo, hi, NULL);
	if (j && axis == 0) { /* (R, C, 2) -> (R, 2, C): the pair runs down the rows */
		int32_t s[3] = {R, 2, C};
		j = ig_emit(g, OP_TRANS, at, type_block(j->type, 3, s), j, NULL, NULL);
		if (j)
			j->def->attr[0] = 0, j->def->attr[1] = 2, j->def->attr[2] = 1;
	}
	int32_t out[2] = {axis == 0 ? 2 * R : R, axis == 0 ? C : 2 * C};
	Value *n = reshaped(g, j, 2, out, at);
	Value *e = n ? bin(g, T_AMP, bin(g, T_SHR, n, weak_int(1), at), weak_int(3), at) : NULL;
	Value *m = n ? bin(g, T_AMP, n, weak_int(1), at) : NULL;
	Value *s = n ? bin(g, T_SHL, bin(g, T_SHR, n, weak_int(3), at), weak_int(15), at) : NULL;
	if (!e || !m || !s)
		return NULL;
	/* normal: exponent e - 1 + 127, the mantissa's top bit m; else 0.5 or 0 */
	Value *normal = bin(g, T_PIPE, bin(g, T_SHL, bin(g, T_PLUS, e, weak_int(126), at), weak_int(7), at),
	                    ig_value_sym(bin(g, T_SHL, m, weak_int(6), at)), at);
	Value *small = bin(g, T_STAR, m, weak_int(126 << 7), at);
	Value *is_normal = bin(g, T_GT, e, weak_int(0), at);
	if (!normal || !small || !is_normal)
		return NULL;
	Value *mag = ig_emit(g, OP_SELECT, at, normal->type, is_normal, normal, small);
	return mag ? bf16_of_bits(g, bin(g, T_PIPE, mag, ig_value_sym(s), at), at) : NULL;
}

/* One operand in bf16 (f16 where both are fp16 without scales). */
static Value *decode(Gen *g, Args *a, int i, int fmt, bool k_pack, bool is_rhs, ScalarKind compute)
{
	Value *v = ig_block_arg(g, a, i);
	if (!v)
		return NULL;
	ScalarKind k = (ScalarKind)v->type.scalar;
	if (v->type.rank != 2 || v->type.ptr) {
		error(g, a->at[i], "dot_scaled needs 2-D blocks, found %s", tstr(g, v->type));
		return NULL;
	}
	bool bytes = k == SK_U8 || k == SK_I8;
	switch (fmt) {
	case FMT_E2M1:
		if (!bytes)
			break;
		/* packed along K unless k_pack is false (then along M or N) */
		return unpack_e2m1(g, v, (is_rhs ? k_pack : !k_pack) ? 0 : 1, a->at[i]);
	case FMT_E4M3:
	case FMT_E5M2: {
		ScalarKind f8 = fmt == FMT_E4M3 ? SK_F8E4M3 : SK_F8E5M2;
		if (!bytes && k != f8)
			break;
		return as_kind(g, bytes ? as_kind(g, v, f8, true, a->at[i]) : v, compute, false, a->at[i]);
	}
	default:
		if (k != (fmt == FMT_BF16 ? SK_BF16 : SK_F16))
			break;
		return as_kind(g, v, compute, false, a->at[i]);
	}
	error(g, a->at[i], "a dot_scaled operand in format \"%s\" must be %s, found %s", FORMAT_NAME[fmt],
	      fmt == FMT_E2M1 ? "u8 or i8 (two values a byte)" : fmt == FMT_E4M3 ? "u8, i8 or f8e4m3"
	      : fmt == FMT_E5M2 ? "u8, i8 or f8e5m2" : fmt == FMT_BF16 ? "bf16" : "f16", tstr(g, v->type));
	return NULL;
}

/* v (M x K, or K x N for the rhs) times 2^(s - 127) of its e8m0 scales s
 * (M x K/32, or N x K/32), each for 32 consecutive elements along K; 255
 * is NaN. Exact in bf16 (0 is 2^-127, bf16's subnormal 0x0040). */
static Value *apply_scale(Gen *g, Args *a, int i, Value *v, bool is_rhs)
{
	if (!a->given[i] || a->v[i].kind == S_NONE)
		return v;
	Value *s = ig_block_arg(g, a, i);
	if (!s)
		return NULL;
	int32_t M = v->type.shape[is_rhs ? 1 : 0], K = v->type.shape[is_rhs ? 0 : 1];
	ScalarKind k = (ScalarKind)s->type.scalar;
	if (K % 32 || s->type.rank != 2 || s->type.shape[0] != M || s->type.shape[1] != K / 32 ||
	    (k != SK_U8 && k != SK_I8)) {
		error(g, a->at[i], "the scales of a (%d, %d) operand must be a u8 block of shape (%d, %d) (e8m0, one for 32 "
		      "elements along K = %d, a multiple of 32), found %s",
		      v->type.shape[0], v->type.shape[1], M, K / 32, K, tstr(g, s->type));
		return NULL;
	}
	Span at = a->at[i];
	Value *x = bytes_of(g, s, at);
	Value *nan = x ? bin(g, T_EQ, x, weak_int(255), at) : NULL, *tiny = x ? bin(g, T_EQ, x, weak_int(0), at) : NULL;
	Value *bits = x ? bin(g, T_SHL, x, weak_int(7), at) : NULL;
	Value *c_nan = x ? ig_emit_const(g, weak_int(0x7FC0), x->type, at) : NULL;
	Value *c_tiny = x ? ig_emit_const(g, weak_int(0x0040), x->type, at) : NULL;
	if (!nan || !tiny || !bits || !c_nan || !c_tiny)
		return NULL;
	bits = ig_emit(g, OP_SELECT, at, x->type, tiny, c_tiny, bits);
	bits = bits ? ig_emit(g, OP_SELECT, at, x->type, nan, c_nan, bits) : NULL;
	Value *sc = bits ? bf16_of_bits(g, bits, at) : NULL; /* (M, K/32) */
	if (!sc)
		return NULL;
	int32_t G = K / 32;
	int32_t s3[3], b3[3];
	if (is_rhs) { /* (N, K/32) -> (K/32, 1, N) -> (K/32, 32, N) -> (K, N) */
		int32_t st[2] = {G, M};
		sc = ig_emit(g, OP_TRANS, at, type_block(sc->type, 2, st), sc, NULL, NULL);
		if (sc)
			sc->def->attr[0] = 1, sc->def->attr[1] = 0;
		s3[0] = G, s3[1] = 1, s3[2] = M;
		b3[0] = G, b3[1] = 32, b3[2] = M;
	} else { /* (M, K/32) -> (M, K/32, 1) -> (M, K/32, 32) -> (M, K) */
		s3[0] = M, s3[1] = G, s3[2] = 1;
		b3[0] = M, b3[1] = G, b3[2] = 32;
	}
	sc = ig_broadcast_to(g, reshaped(g, sc, 3, s3, at), 3, b3, at);
	sc = reshaped(g, sc, 2, v->type.shape, at);
	if (sc && v->type.scalar != SK_BF16)
		sc = as_kind(g, sc, (ScalarKind)v->type.scalar, false, at);
	return sc ? bin(g, T_STAR, v, ig_value_sym(sc), at) : NULL;
}

/* dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc?,
 * fast_math?, lhs_k_pack?, rhs_k_pack?, out_dtype?) */
Sym ig_bi_dot_scaled(Gen *g, Args *a, int which)
{
	(void)which;
	int fa = ig_arg_choice(g, a, A_LHS_FMT, FORMATS, -1), fb = ig_arg_choice(g, a, A_RHS_FMT, FORMATS, -1);
	bool fast, ka, kb;
	if (fa < 0 || fb < 0 || !ig_arg_bool(g, a, A_FAST, false, &fast) || !ig_arg_bool(g, a, A_LHS_KPACK, true, &ka) ||
	    !ig_arg_bool(g, a, A_RHS_KPACK, true, &kb))
		return VOID;
	if ((!ka && fa != FMT_E2M1) || (!kb && fb != FMT_E2M1)) {
		error(g, a->call, "lhs_k_pack and rhs_k_pack only apply to the packed format \"e2m1\"");
		return VOID;
	}
	bool scaled = (a->given[A_LHS_SCALE] && a->v[A_LHS_SCALE].kind != S_NONE) ||
	              (a->given[A_RHS_SCALE] && a->v[A_RHS_SCALE].kind != S_NONE);
	ScalarKind compute = fa == FMT_FP16 && fb == FMT_FP16 && !scaled ? SK_F16 : SK_BF16;
	Value *x = decode(g, a, A_LHS, fa, ka, false, compute), *y = x ? decode(g, a, A_RHS, fb, kb, true, compute) : NULL;
	if (!x || !y)
		return VOID;
	if (x->type.shape[1] != y->type.shape[0]) {
		error(g, a->call, "dot_scaled: the operands decode to (%d, %d) and (%d, %d): K differs", x->type.shape[0],
		      x->type.shape[1], y->type.shape[0], y->type.shape[1]);
		return VOID;
	}
	if (!(x = apply_scale(g, a, A_LHS_SCALE, x, false)) || !(y = apply_scale(g, a, A_RHS_SCALE, y, true)))
		return VOID;
	Args d = {.call = a->call, .fname = "dot_scaled", .n = 5};
	d.v[0] = ig_value_sym(x), d.given[0] = true, d.at[0] = a->at[A_LHS];
	d.v[1] = ig_value_sym(y), d.given[1] = true, d.at[1] = a->at[A_RHS];
	d.v[2] = a->v[A_ACC], d.given[2] = a->given[A_ACC], d.at[2] = a->at[A_ACC];
	d.v[4] = a->v[A_OUT], d.given[4] = a->given[A_OUT], d.at[4] = a->at[A_OUT];
	d.at[3] = a->call;
	return ig_bi_dot(g, &d, 0);
}
