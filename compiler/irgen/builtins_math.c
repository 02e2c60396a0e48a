/* irgen/builtins_math.c: the element-wise builtins: math functions, abs,
 * minimum/maximum/clamp, fma, umulhi, where, conversions (.to, bitcast), inf,
 * and Philox random numbers (rand, randn, randint). */
#include "irgen/irgen_int.h"

#include <math.h>

Sym ig_bi_inf(Gen *g, Args *a, int which)
{
	(void)which;
	Type t;
	if (!ig_arg_type(g, a, 0, &t))
		return VOID;
	if (!scalar_is_float((ScalarKind)t.scalar) || t.ptr || t.scalar == SK_F8E4M3) {
		error(g, a->at[0], "inf needs a float type with an infinity, found %s", tstr(g, t));
		return VOID;
	}
	return ig_const_float((ScalarKind)t.scalar, INFINITY, false);
}

Sym ig_bi_where(Gen *g, Args *a, int which)
{
	(void)which;
	Sym c = ig_truth(g, a->v[0], a->at[0]), x = a->v[1], y = a->v[2];
	if (c.kind == S_VOID || !is_valueish(x) || !is_valueish(y)) {
		if (c.kind != S_VOID)
			error(g, a->call, "where needs values, found %s and %s", ig_sym_desc(g, x), ig_sym_desc(g, y));
		return VOID;
	}
	bool ptrs = x.type.ptr || y.type.ptr;
	ScalarKind k = (ScalarKind)x.type.scalar;
	if (ptrs) {
		if (x.type.ptr != y.type.ptr || x.type.scalar != y.type.scalar) {
			error(g, a->call, "where: %s and %s differ", ig_sym_desc(g, x), ig_sym_desc(g, y));
			return VOID;
		}
	} else {
		const char *why;
		if (!promote_arith((ScalarKind)x.type.scalar, x.kind == S_CONST, (ScalarKind)y.type.scalar,
		                   y.kind == S_CONST, false, &k, &why)) {
			error(g, a->call, "where: %s", why);
			return VOID;
		}
	}
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!ig_common_shape(g, x.type, y.type, &rank, shape, a->call, "the operands of where"))
		return VOID;
	Type xy = type_block(x.type, rank, shape);
	if (!ig_common_shape(g, xy, c.type, &rank, shape, a->call, "the condition and the operands of where"))
		return VOID;
	if (c.kind == S_CONST && x.kind == S_CONST && y.kind == S_CONST && !ptrs) {
		Sym r = c.i ? x : y;
		return r.weak ? r : (scalar_is_float(k) ? ig_const_float(k, ig_const_in_kind(r, k), false)
		                                        : ig_const_int(k, ig_int_value(r), false));
	}
	Value *vx = ig_broadcast_to(g, ptrs ? ig_materialize(g, x, a->at[1]) : ig_to_elem(g, x, k, a->at[1]), rank, shape, a->at[1]);
	Value *vy = ig_broadcast_to(g, ptrs ? ig_materialize(g, y, a->at[2]) : ig_to_elem(g, y, k, a->at[2]), rank, shape, a->at[2]);
	Value *vc = ig_broadcast_to(g, ig_materialize(g, c, a->at[0]), rank, shape, a->at[0]);
	if (!vx || !vy || !vc)
		return VOID;
	return ig_value_sym(ig_emit(g, OP_SELECT, a->call, vx->type, vc, vx, vy));
}

/* A float operand for math: weak int constants become floats; other
 * integers are an error. */
bool ig_float_operand(Gen *g, Args *a, int i, Sym *out)
{
	Sym x = a->v[i];
	if (!is_valueish(x) || x.type.ptr) {
		error(g, a->at[i], "'%s' needs a float operand, found %s", a->fname, ig_sym_desc(g, x));
		return false;
	}
	if (scalar_is_float((ScalarKind)x.type.scalar)) {
		*out = x;
		return true;
	}
	if (x.kind == S_CONST) {
		*out = ig_weak_float(ig_const_as_double(x));
		return true;
	}
	error(g, a->at[i], "'%s' needs a float operand, found %s; convert with .to(f32)", a->fname, ig_sym_desc(g, x));
	return false;
}

static double math_eval(MathFn fn, double x)
{
	switch (fn) {
	case MATH_EXP: return exp(x);
	case MATH_EXP2: return exp2(x);
	case MATH_LOG: return log(x);
	case MATH_LOG2: return log2(x);
	case MATH_SQRT:
	case MATH_SQRT_RN: return sqrt(x);
	case MATH_RSQRT: return 1 / sqrt(x);
	case MATH_SIN: return sin(x);
	case MATH_COS: return cos(x);
	case MATH_TANH: return tanh(x);
	case MATH_ERF: return erf(x);
	case MATH_FLOOR: return floor(x);
	case MATH_CEIL: return ceil(x);
	case MATH_TRUNC: return trunc(x);
	case MATH_RINT: return rint(x);
	case MATH_ROUND: return round(x);
	default: return NAN;
	}
}

static Sym math1(Gen *g, MathFn fn, Sym x, Span at)
{
	if (x.kind == S_CONST)
		return x.weak ? ig_weak_float(math_eval(fn, x.f)) : ig_const_float((ScalarKind)x.type.scalar, math_eval(fn, x.f), false);
	Value *v = ig_emit(g, OP_MATH, at, x.type, x.v, NULL, NULL);
	if (v)
		v->def->attr[0] = fn;
	return ig_value_sym(v);
}

Sym ig_bi_math(Gen *g, Args *a, int fn)
{
	Sym x;
	if (!ig_float_operand(g, a, 0, &x))
		return VOID;
	return math1(g, (MathFn)fn, x, a->call);
}

static Sym convert(Gen *g, Sym x, Type t, bool bitcast, Span at);

/* 1 / (1 + exp(-x)) in x's type; f16, bf16 and fp8 compute in f32 and round
 * once, like the other math functions (in their own type the steps would
 * round three times, and '/' would make the result f32). */
Sym ig_bi_sigmoid(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x;
	if (!ig_float_operand(g, a, 0, &x))
		return VOID;
	ScalarKind k = (ScalarKind)x.type.scalar;
	bool narrow = !x.weak && k != SK_F32 && k != SK_F64;
	if (narrow)
		x = convert(g, x, type_scalar(SK_F32), false, a->call);
	Sym e = math1(g, MATH_EXP, ig_gen_unary(g, T_MINUS, x, a->call), a->call);
	Sym r = ig_gen_binary(g, T_SLASH, ig_weak_float(1.0), ig_gen_binary(g, T_PLUS, ig_weak_float(1.0), e, a->call), a->call);
	return narrow ? convert(g, r, type_scalar(k), false, a->call) : r;
}

Sym ig_bi_abs(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x = a->v[0];
	if (!is_valueish(x) || x.type.ptr) {
		error(g, a->at[0], "abs needs a number, found %s", ig_sym_desc(g, x));
		return VOID;
	}
	if (x.kind == S_CONST) {
		if (scalar_is_float((ScalarKind)x.type.scalar))
			return x.weak ? ig_weak_float(fabs(x.f)) : ig_const_float((ScalarKind)x.type.scalar, fabs(x.f), false);
		__int128 v = ig_int_value(x);
		return x.weak ? weak_int(v < 0 ? -v : v) : ig_const_int((ScalarKind)x.type.scalar, v < 0 ? -v : v, false);
	}
	if (scalar_is_unsigned((ScalarKind)x.type.scalar) || x.type.scalar == SK_I1)
		return x;
	return ig_value_sym(ig_emit(g, OP_ABS, a->call, x.type, x.v, NULL, NULL));
}

/* Element-wise op over n operands promoted together (maximum, fma, umulhi). */
static Sym elementwise(Gen *g, Args *a, int n, OpCode code, bool floats_only, bool ints_only)
{
	ScalarKind k = SK_I1;
	bool any_runtime = false, first = true, k_lit = true;
	for (int i = 0; i < n; i++) {
		Sym x = a->v[i];
		if (!is_valueish(x) || x.type.ptr) {
			error(g, a->at[i], "'%s' needs numbers, found %s", a->fname, ig_sym_desc(g, x));
			return VOID;
		}
		any_runtime |= x.kind == S_VALUE;
		if (first) {
			k = (ScalarKind)x.type.scalar;
			k_lit = x.kind == S_CONST;
			first = false;
			continue;
		}
		const char *why;
		if (!promote_arith(k, k_lit, (ScalarKind)x.type.scalar, x.kind == S_CONST, false, &k, &why)) {
			error(g, a->call, "'%s': %s", a->fname, why);
			return VOID;
		}
		k_lit = k_lit && x.kind == S_CONST;
	}
	if ((floats_only && !scalar_is_float(k)) || (ints_only && !scalar_is_int(k))) {
		error(g, a->call, "'%s' needs %s operands, found %s", a->fname, floats_only ? "float" : "integer",
		      scalar_name(k));
		return VOID;
	}
	int rank = 0;
	int32_t shape[BLK_MAX_RANK] = {0};
	Type acc = type_scalar(k);
	for (int i = 0; i < n; i++) {
		if (!ig_common_shape(g, acc, a->v[i].type, &rank, shape, a->call, "the operands"))
			return VOID;
		acc = type_block(acc, rank, shape);
	}
	if (!any_runtime && (code == OP_MAX || code == OP_MIN)) {
		if (scalar_is_float(k)) {
			double x = k_lit ? ig_const_as_double(a->v[0]) : ig_const_in_kind(a->v[0], k);
			double y = k_lit ? ig_const_as_double(a->v[1]) : ig_const_in_kind(a->v[1], k);
			double v = code == OP_MAX ? fmax(x, y) : fmin(x, y);
			return k_lit ? ig_weak_float(v) : ig_const_float(k, v, false);
		}
		/* integers compare exactly (as doubles, 2^60 and 2^60 + 1 would tie),
		 * converted to k as at run time */
		__int128 x = ig_int_value(a->v[0]), y = ig_int_value(a->v[1]);
		if (!k_lit) {
			x = ig_int_value(ig_const_int(k, x, false));
			y = ig_int_value(ig_const_int(k, y, false));
		}
		Sym r = (code == OP_MAX ? x >= y : x <= y) ? a->v[0] : a->v[1];
		return k_lit ? r : ig_const_int(k, ig_int_value(r), false);
	}
	Value *ops[3];
	for (int i = 0; i < n; i++)
		if (!(ops[i] = ig_broadcast_to(g, ig_to_elem(g, a->v[i], k, a->at[i]), rank, shape, a->at[i])))
			return VOID;
	Op *op = ig_emit_op(g, code, a->call, ops, n, &ops[0]->type, 1);
	return op ? ig_value_sym(op->results[0]) : VOID;
}

Sym ig_bi_minmax(Gen *g, Args *a, int code)
{
	bool nan;
	if (!ig_arg_bool(g, a, 2, false, &nan))
		return VOID;
	Sym r = elementwise(g, a, 2, (OpCode)code, false, false);
	if (r.kind == S_VALUE && r.v->def && r.v->def->code == (OpCode)code)
		r.v->def->attr[0] = nan;
	return r;
}

/* div_rn(a, b): a / b rounded to nearest even on every backend (an OP_DIV
 * with attr[0] 1); the operands promote as for maximum, so f16 and bf16
 * keep their type (the GPU divides in f32 and rounds once). */
Sym ig_bi_div_rn(Gen *g, Args *a, int which)
{
	(void)which;
	Sym r = elementwise(g, a, 2, OP_DIV, true, false);
	if (r.kind == S_VALUE && r.v->def && r.v->def->code == OP_DIV)
		r.v->def->attr[0] = 1;
	return r;
}

Sym ig_bi_clamp(Gen *g, Args *a, int which)
{
	(void)which;
	Args lo = *a;
	lo.fname = "clamp";
	lo.v[2] = (Sym){.kind = S_CONST, .type = type_scalar(SK_I1)}; /* propagate_nan = false */
	lo.given[2] = false;
	Sym r = ig_bi_minmax(g, &lo, OP_MAX);
	if (r.kind == S_VOID)
		return VOID;
	Args hi = lo;
	hi.v[0] = r;
	hi.v[1] = a->v[2];
	hi.at[1] = a->at[2];
	return ig_bi_minmax(g, &hi, OP_MIN);
}

Sym ig_bi_fma(Gen *g, Args *a, int which)
{
	(void)which;
	return elementwise(g, a, 3, OP_FMA, true, false);
}

Sym ig_bi_umulhi(Gen *g, Args *a, int which)
{
	(void)which;
	return elementwise(g, a, 2, OP_UMULHI, false, true);
}

/* Conversions with pointers: a pointer to another pointer type (the same
 * address, read as the new pointee); a pointer to an integer (its address,
 * through i64, wrapping to a narrower type); an integer to a pointer (sign-
 * or zero-extended to 64 bits). The interpreter checks each access by its
 * address, so a converted pointer is checked against the buffer it reaches. */
static Sym convert_pointer(Gen *g, Sym x, Type t, Span at)
{
	ScalarKind to = (ScalarKind)t.scalar, from = (ScalarKind)x.type.scalar;
	if (t.ptr && x.type.ptr) {
		Value *v = ig_materialize(g, x, at);
		return v ? ig_value_sym(ig_emit(g, OP_BITCAST, at, type_block(t, v->type.rank, v->type.shape), v, NULL, NULL))
		         : VOID;
	}
	if (x.type.ptr && scalar_is_int(to) && to != SK_I1) {
		Value *v = ig_materialize(g, x, at);
		Value *a = v ? ig_emit(g, OP_PTR_TO_INT, at, type_block(type_scalar(SK_I64), v->type.rank, v->type.shape), v,
		                       NULL, NULL)
		             : NULL;
		return a ? ig_value_sym(ig_cast_value(g, a, to, at)) : VOID;
	}
	if (t.ptr && scalar_is_int(from) && from != SK_I1) {
		Value *v = x.kind == S_CONST ? ig_emit_const(g, ig_const_int(SK_I64, ig_int_value(x), false), type_scalar(SK_I64), at)
		                             : ig_cast_value(g, x.v, SK_I64, at);
		return v ? ig_value_sym(ig_emit(g, OP_INT_TO_PTR, at, type_block(t, v->type.rank, v->type.shape), v, NULL, NULL))
		         : VOID;
	}
	error(g, at, "cannot convert %s to %s: a pointer converts to another pointer type or to an integer type, and an "
	             "integer to a pointer", ig_sym_desc(g, x), tstr(g, t));
	return VOID;
}

static Sym convert(Gen *g, Sym x, Type t, bool bitcast, Span at)
{
	if (x.kind == S_VOID)
		return VOID;
	if (!is_valueish(x)) {
		error(g, at, "cannot convert %s", ig_sym_desc(g, x));
		return VOID;
	}
	ScalarKind to = (ScalarKind)t.scalar, from = (ScalarKind)x.type.scalar;
	if (t.rank) {
		error(g, at, "convert to an element type, not %s", tstr(g, t));
		return VOID;
	}
	if (bitcast) {
		int wf = x.type.ptr ? 64 : scalar_bits(from), wt = t.ptr ? 64 : scalar_bits(to);
		if (wf != wt) {
			error(g, at, "bitcast needs types of one width: %s is %d bits, %s is %d", ig_sym_desc(g, x), wf,
			      tstr(g, t), wt);
			return VOID;
		}
		Value *v = ig_materialize(g, x, at);
		return v ? ig_value_sym(ig_emit(g, OP_BITCAST, at, type_block(t, v->type.rank, v->type.shape), v, NULL, NULL)) : VOID;
	}
	if (t.ptr || x.type.ptr)
		return convert_pointer(g, x, t, at);
	if (x.kind == S_CONST) {
		if (scalar_is_float(to))
			return ig_const_float(to, ig_const_in_kind(x, to), false);
		if (to == SK_I1)
			return ig_const_int(SK_I1, is_const_true(x), false);
		if (scalar_is_float(from)) {
			/* (NaN fails both comparisons; the range test keeps the cast to __int128 defined) */
			if (!(x.f > -0x1p127 && x.f < 0x1p127) || !ig_fits(to, (__int128)x.f)) {
				error(g, at, "%g does not fit in %s", x.f, scalar_name(to));
				return VOID;
			}
			return ig_const_int(to, (__int128)x.f, false);
		}
		return ig_const_int(to, ig_int_value(x), false);
	}
	if (to == SK_I1 && from != SK_I1)
		return ig_gen_binary(g, T_NE, x, weak_int(0), at);
	return ig_value_sym(ig_cast_value(g, x.v, to, at));
}

Sym ig_bi_to(Gen *g, Args *a, int which)
{
	Type t;
	bool bc = which;
	if (!ig_arg_type(g, a, 1, &t) || (!which && !ig_arg_bool(g, a, 2, false, &bc)))
		return VOID;
	return convert(g, a->v[0], t, bc, a->call);
}

/* ---- random numbers: Philox 4x32 ------------------------------------------ */

/* u32 random bits to a uniform f32 in [0, 1). */
static Sym uniform_f32(Gen *g, Value *bits, Span at)
{
	Type ti = bits->type;
	ti.scalar = SK_I32;
	Sym x = ig_value_sym(ig_emit(g, OP_BITCAST, at, ti, bits, NULL, NULL));
	Sym neg = ig_gen_binary(g, T_LT, x, weak_int(0), at);
	Sym flipped = ig_gen_binary(g, T_MINUS, ig_gen_unary(g, T_MINUS, x, at), weak_int(1), at);
	if (neg.kind == S_VOID || flipped.kind == S_VOID)
		return VOID;
	Value *sel = ig_emit(g, OP_SELECT, at, ti, neg.v, flipped.v, x.v);
	if (!sel)
		return VOID;
	Sym f = ig_value_sym(ig_cast_value(g, sel, SK_F32, at));
	return ig_gen_binary(g, T_STAR, f, ig_weak_float(4.6566127342e-10), at);
}

Sym ig_bi_rand(Gen *g, Args *a, int kind)
{
	int64_t rounds = 10;
	if (a->given[2] && !ig_arg_int(g, a, 2, &rounds))
		return VOID;
	if (rounds < 1 || rounds > 64) {
		error(g, a->at[2], "n_rounds must be between 1 and 64");
		return VOID;
	}
	Sym seed = a->v[0], offs = a->v[1];
	if (!is_valueish(seed) || seed.type.rank || seed.type.ptr || !scalar_is_int((ScalarKind)seed.type.scalar)) {
		error(g, a->at[0], "the seed must be an integer scalar, found %s", ig_sym_desc(g, seed));
		return VOID;
	}
	if (!is_valueish(offs) || offs.type.ptr || !scalar_is_int((ScalarKind)offs.type.scalar)) {
		error(g, a->at[1], "the offsets must be integers, found %s", ig_sym_desc(g, offs));
		return VOID;
	}
	Value *s = ig_to_elem(g, seed.kind == S_CONST ? ig_const_int(SK_U64, ig_int_value(seed), false) : seed, SK_U64, a->at[0]);
	Value *o = offs.kind == S_CONST ? ig_emit_const(g, offs, type_scalar(SK_U32), a->at[1])
	                                : ig_cast_value(g, offs.v, SK_U32, a->at[1]);
	if (!s || !o)
		return VOID;
	Type rt[4] = {o->type, o->type, o->type, o->type};
	Value *ops[2] = {s, o};
	Op *op = ig_emit_op(g, OP_PHILOX, a->call, ops, 2, rt, 4);
	if (!op)
		return VOID;
	op->attr[0] = rounds;
	switch (kind) {
	case RAND_INT:
		return ig_value_sym(op->results[0]);
	case RAND_INT4X: {
		Sym out = {.kind = S_TUPLE, .n = 4};
		out.items = arena_alloc(g->arena, 4 * sizeof *out.items);
		if (!out.items)
			return VOID;
		for (int i = 0; i < 4; i++)
			out.items[i] = ig_value_sym(op->results[i]);
		return out;
	}
	case RAND_UNIFORM:
		return uniform_f32(g, op->results[0], a->call);
	default: {
		Sym u1 = uniform_f32(g, op->results[0], a->call), u2 = uniform_f32(g, op->results[1], a->call);
		Args mx = {.fname = "maximum", .call = a->call, .n = 3};
		mx.v[0] = u1;
		mx.v[1] = ig_weak_float(1.0e-7);
		mx.at[0] = mx.at[1] = a->call;
		u1 = elementwise(g, &mx, 2, OP_MAX, true, false);
		Sym th = ig_gen_binary(g, T_STAR, ig_weak_float(6.283185307179586), u2, a->call);
		Sym r = math1(g, MATH_SQRT, ig_gen_binary(g, T_STAR, ig_weak_float(-2.0), math1(g, MATH_LOG, u1, a->call), a->call),
		              a->call);
		return ig_gen_binary(g, T_STAR, r, math1(g, MATH_COS, th, a->call), a->call);
	}
	}
}
