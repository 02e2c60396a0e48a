/* irgen/sym.c: Syms described for messages, and compile-time constants:
 * integers wrapped to their type, the weak types of literals, floats rounded
 * once. */
#include "irgen/irgen_int.h"

#include <math.h>

/* ---- messages ----------------------------------------------------------- */

const char *ig_sym_desc(Gen *g, Sym s)
{
	switch (s.kind) {
	case S_VOID: return "nothing";
	case S_VALUE: return tstr(g, s.type);
	case S_CONST: return arena_printf(g->arena, "constant %s", tstr(g, s.type));
	case S_TUPLE: return arena_printf(g->arena, "a tuple of %d", s.n);
	case S_TYPE: return arena_printf(g->arena, "the type %s", tstr(g, s.type));
	case S_FN: return arena_printf(g->arena, "the function '%s'", s.fn->name);
	case S_MODULE: return "a module";
	case S_STRING: return "a string";
	case S_NONE: return "None";
	case S_DESC:
		return arena_printf(g->arena, "a tensor descriptor of %s blocks%s", tstr(g, s.type),
		                    s.i == DESC_PAD_NAN ? " (NaN padding)" : "");
	}
	return "?";
}

/* ---- constants -------------------------------------------------------- */

bool ig_fits(ScalarKind k, __int128 v)
{
	if (k == SK_I1)
		return v == 0 || v == 1;
	int bits = scalar_bits(k);
	if (scalar_is_unsigned(k))
		return v >= 0 && (bits == 64 || v < ((__int128)1 << bits));
	return v >= -((__int128)1 << (bits - 1)) && v < ((__int128)1 << (bits - 1));
}

/* v wrapped to k's width, canonical (sign- or zero-extended). */
int64_t ig_wrap(ScalarKind k, __int128 v)
{
	int bits = scalar_bits(k);
	uint64_t u = (uint64_t)v;
	if (bits < 64)
		u &= ((uint64_t)1 << bits) - 1;
	if (k == SK_I1)
		return (int64_t)(u & 1);
	if (scalar_is_signed(k) && bits < 64 && (u >> (bits - 1)) & 1)
		u |= ~(((uint64_t)1 << bits) - 1);
	return (int64_t)u;
}

/* The value of an integer constant as a mathematical integer. */
__int128 ig_int_value(Sym s)
{
	if (s.type.scalar == SK_U64)
		return (__int128)(uint64_t)s.i;
	return s.i;
}

Sym ig_const_int(ScalarKind k, __int128 v, bool weak)
{
	return (Sym){.kind = S_CONST, .type = type_scalar(k), .i = ig_wrap(k, v), .weak = weak};
}

/* The type of an integer literal: the first of i32, u32, i64, u64 it fits in. */
ScalarKind ig_literal_int_kind(__int128 v)
{
	if (ig_fits(SK_I32, v))
		return SK_I32;
	if (ig_fits(SK_U32, v))
		return SK_U32;
	if (ig_fits(SK_I64, v))
		return SK_I64;
	return SK_U64;
}

static double round_float(ScalarKind k, double x);

Sym ig_const_float(ScalarKind k, double x, bool weak)
{
	return (Sym){.kind = S_CONST, .type = type_scalar(k), .f = weak ? x : round_float(k, x), .weak = weak};
}

Sym ig_weak_float(double x)
{
	double a = fabs(x);
	bool f32 = a == 0 || isinf(x) || isnan(x) || (a >= 0x1p-126 && a <= 0x1.fffffep127);
	return ig_const_float(f32 ? SK_F32 : SK_F64, x, true);
}

double ig_const_as_double(Sym s)
{
	if (scalar_is_float((ScalarKind)s.type.scalar))
		return s.f;
	return (double)ig_int_value(s);
}

/* s's value in float kind k, rounded once: an integer straight from its
 * bits (through a double it would round twice: 2^62 + 2^38 + 1 to f32). */
double ig_const_in_kind(Sym s, ScalarKind k)
{
	if (scalar_is_float((ScalarKind)s.type.scalar))
		return fp_round(k, s.f);
	__int128 v = ig_int_value(s);
	return v < 0 ? fp_from_int(k, (int64_t)v, false) : fp_from_int(k, (int64_t)(uint64_t)v, true);
}

/* Rounds x to the nearest value of float type k (ties to even), with the
 * same conversions the interpreter uses. */
static double round_float(ScalarKind k, double x)
{
	return scalar_is_float(k) ? fp_round(k, x) : x;
}
