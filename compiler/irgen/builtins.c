/* irgen/builtins.c: the table of builtin functions, their arguments read as
 * constants, types, strings and blocks, and the builtins of no family:
 * program_id, cdiv, next_power_of_2, hints and assertions. */
#include "irgen/irgen_int.h"

#include <string.h>

/* ---- arguments ---------------------------------------------------------- */

/* Argument i as a compile-time integer. */
bool ig_arg_int(Gen *g, const Args *a, int i, int64_t *out)
{
	Sym s = a->v[i];
	if (s.kind != S_CONST || scalar_is_float((ScalarKind)s.type.scalar)) {
		error(g, a->at[i], "argument %d of '%s' must be a constant integer, found %s", i + 1, a->fname,
		      ig_sym_desc(g, s));
		return false;
	}
	*out = (int64_t)ig_int_value(s);
	return true;
}

bool ig_arg_bool(Gen *g, const Args *a, int i, bool dflt, bool *out)
{
	if (!a->given[i]) {
		*out = dflt;
		return true;
	}
	int64_t v;
	if (!ig_arg_int(g, a, i, &v))
		return false;
	*out = v != 0;
	return true;
}

bool ig_arg_type(Gen *g, const Args *a, int i, Type *out)
{
	if (a->v[i].kind != S_TYPE) {
		error(g, a->at[i], "argument %d of '%s' must be a type (such as f32), found %s", i + 1, a->fname,
		      ig_sym_desc(g, a->v[i]));
		return false;
	}
	*out = a->v[i].type;
	return true;
}

/* A string argument matched against choices "a|b|c": the index, or -1. */
int ig_arg_choice(Gen *g, const Args *a, int i, const char *choices, int dflt)
{
	if (!a->given[i])
		return dflt;
	Sym s = a->v[i];
	const char *listed = choices[0] == '|' ? choices + 1 : choices; /* the leading empty choice is the default */
	if (s.kind != S_STRING) {
		error(g, a->at[i], "argument %d of '%s' must be a string, one of \"%s\"", i + 1, a->fname, listed);
		return -1;
	}
	int idx = 0;
	for (const char *c = choices;; idx++) {
		const char *bar = strchr(c, '|');
		size_t len = bar ? (size_t)(bar - c) : strlen(c);
		if (len == s.len && strncmp(c, s.str, len) == 0)
			return idx;
		if (!bar)
			break;
		c = bar + 1;
	}
	error(g, a->at[i], "unknown value \"%.*s\" for argument %d of '%s' (expected one of \"%s\")", (int)s.len, s.str,
	      i + 1, a->fname, listed);
	return -1;
}

Value *ig_value_arg(Gen *g, Args *a, int i)
{
	if (a->v[i].kind == S_VALUE || a->v[i].kind == S_CONST)
		return ig_materialize(g, a->v[i], a->at[i]);
	error(g, a->at[i], "argument %d of '%s' must be a scalar or block, found %s", i + 1, a->fname,
	      ig_sym_desc(g, a->v[i]));
	return NULL;
}

Value *ig_block_arg(Gen *g, Args *a, int i)
{
	Sym x = a->v[i];
	if (x.kind != S_VALUE || x.type.rank == 0) {
		if (x.kind != S_VOID)
			error(g, a->at[i], "'%s' needs a block, found %s", a->fname, ig_sym_desc(g, x));
		return NULL;
	}
	return x.v;
}

bool ig_axis_arg(Gen *g, Args *a, int i, int rank, int *axis)
{
	int64_t v;
	if (!ig_arg_int(g, a, i, &v))
		return false;
	if (v < 0)
		v += rank;
	if (v < 0 || v >= rank) {
		error(g, a->at[i], "axis %lld is out of range for a block of rank %d", (long long)ig_int_value(a->v[i]), rank);
		return false;
	}
	*axis = (int)v;
	return true;
}

/* ---- builtins -------------------------------------------------------------- */

static Sym bi_program_id(Gen *g, Args *a, int which)
{
	int64_t axis;
	if (!ig_arg_int(g, a, 0, &axis))
		return VOID;
	if (axis < 0 || axis > 2) {
		error(g, a->at[0], "grid axis must be 0, 1 or 2, found %lld", (long long)axis);
		return VOID;
	}
	Value *v = ig_emit(g, which ? OP_NUM_PROGRAMS : OP_PROGRAM_ID, a->call, type_scalar(SK_I32), NULL, NULL, NULL);
	if (v)
		v->def->attr[0] = axis;
	return ig_value_sym(v);
}

static Sym bi_cdiv(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x = a->v[0], y = a->v[1];
	if (!is_valueish(x) || !is_valueish(y) || !scalar_is_int((ScalarKind)x.type.scalar) ||
	    !scalar_is_int((ScalarKind)y.type.scalar) || x.type.ptr || y.type.ptr) {
		error(g, a->call, "cdiv needs integer operands, found %s and %s", ig_sym_desc(g, x), ig_sym_desc(g, y));
		return VOID;
	}
	Sym s = ig_gen_binary(g, T_PLUS, x, y, a->call);
	s = ig_gen_binary(g, T_MINUS, s, weak_int(1), a->call);
	return ig_gen_binary(g, T_SLASH, s, y, a->call);
}

static Sym bi_next_power_of_2(Gen *g, Args *a, int which)
{
	(void)which;
	int64_t n;
	if (!ig_arg_int(g, a, 0, &n))
		return VOID;
	int64_t p = 1;
	while (p < n && p < ((int64_t)1 << 62))
		p <<= 1;
	return weak_int(p);
}

static Sym bi_range(Gen *g, Args *a, int which)
{
	(void)which;
	error(g, a->call, "'%s' can only be the iterable of a for loop", a->fname);
	return VOID;
}

static Sym bi_hint(Gen *g, Args *a, int slot)
{
	Sym x = a->v[0];
	int64_t n;
	if (!ig_arg_int(g, a, 1, &n))
		return VOID;
	if (n <= 0) {
		error(g, a->at[1], "'%s' needs a positive value", a->fname);
		return VOID;
	}
	if (x.kind == S_CONST)
		return x;
	if (x.kind != S_VALUE || (!scalar_is_int((ScalarKind)x.type.scalar) && !x.type.ptr)) {
		error(g, a->at[0], "'%s' applies to integers and pointers, found %s", a->fname, ig_sym_desc(g, x));
		return VOID;
	}
	Value *v = ig_emit(g, OP_HINT, a->call, x.type, x.v, NULL, NULL);
	if (v)
		v->def->attr[slot] = n;
	return ig_value_sym(v);
}

static Sym bi_static_assert(Gen *g, Args *a, int which)
{
	(void)which;
	Sym c = a->v[0];
	if (c.kind != S_CONST) {
		error(g, a->at[0], "static_assert needs a condition known at compile time, found %s", ig_sym_desc(g, c));
		return VOID;
	}
	if (a->given[1] && a->v[1].kind != S_STRING) {
		error(g, a->at[1], "the message of static_assert must be a string");
		return VOID;
	}
	if (!is_const_true(c)) {
		if (a->given[1])
			error(g, a->call, "static assertion failed: %.*s", (int)a->v[1].len, a->v[1].str);
		else
			error(g, a->call, "static assertion failed");
	}
	return (Sym){.kind = S_NONE};
}

static Sym bi_assert(Gen *g, Args *a, int which)
{
	(void)which;
	Sym c = ig_truth(g, a->v[0], a->at[0]);
	if (c.kind == S_VOID)
		return VOID;
	if (a->given[1] && a->v[1].kind != S_STRING) {
		error(g, a->at[1], "the message of assert must be a string");
		return VOID;
	}
	Value *v = ig_materialize(g, c, a->at[0]);
	Op *op = v ? ig_emit_op(g, OP_ASSERT, a->call, &v, 1, NULL, 0) : NULL;
	if (!op)
		return VOID;
	op->str = a->given[1] ? arena_strndup(g->arena, a->v[1].str, a->v[1].len) : "assertion failed";
	return (Sym){.kind = S_NONE};
}

static Sym bi_debug_barrier(Gen *g, Args *a, int which)
{
	(void)which;
	ig_emit_op(g, OP_BARRIER, a->call, NULL, 0, NULL, 0);
	return (Sym){.kind = S_NONE};
}

/* num_sms(): the launch's device's multiprocessor count, for the grid of a
 * persistent kernel; known only where the grid clause is evaluated. */
static Sym bi_num_sms(Gen *g, Args *a, int which)
{
	(void)which;
	if (!g->in_grid) {
		error(g, a->call, "num_sms() is known only in a grid clause (at launch); inside the kernel, "
		                  "num_programs(0) is the number of programs launched");
		return VOID;
	}
	if (g->num_sms <= 0) {
		error(g, a->call, "num_sms(): the device's number of multiprocessors is not known here");
		return VOID;
	}
	return ig_const_int(SK_I32, g->num_sms, false);
}

static const Builtin builtins[] = {
	{"program_id", "axis", bi_program_id, 0},
	{"debug_barrier", "", bi_debug_barrier, 0},
	{"num_programs", "axis", bi_program_id, 1},
	{"num_sms", "", bi_num_sms, 0},
	{"arange", "start end", ig_bi_arange, 0},
	{"full", "shape value dtype", ig_bi_full, 0},
	{"zeros", "shape d1? d2? d3? d4? d5? d6? d7? d8? dtype?", ig_bi_full, 1},
	{"zeros_like", "x", ig_bi_zeros_like, 0},
	{"inf", "dtype", ig_bi_inf, 0},
	{"cdiv", "a b", bi_cdiv, 0},
	{"next_power_of_2", "n", bi_next_power_of_2, 0},
	{"range", "a b? c?", bi_range, 0},
	{"static_range", "a b? c?", bi_range, 0},
	{"load", "ptr mask? other? cache? eviction? volatile?", ig_bi_load, 0},
	{"store", "ptr value mask? cache? eviction?", ig_bi_store, 0},
	{"tensor_desc", "base shape strides block_shape padding_option?", ig_bi_tensor_desc, 0},
	{"desc_load", "desc offsets", ig_bi_desc_load, 0},
	{"desc_store", "desc offsets value", ig_bi_desc_store, 0},
	{"desc_atomic_add", "desc offsets value", ig_bi_desc_atomic, ATOM_ADD},
	{"desc_atomic_max", "desc offsets value", ig_bi_desc_atomic, ATOM_MAX},
	{"desc_atomic_min", "desc offsets value", ig_bi_desc_atomic, ATOM_MIN},
	{"desc_atomic_and", "desc offsets value", ig_bi_desc_atomic, ATOM_AND},
	{"desc_atomic_or", "desc offsets value", ig_bi_desc_atomic, ATOM_OR},
	{"desc_atomic_xor", "desc offsets value", ig_bi_desc_atomic, ATOM_XOR},
	{"desc_gather", "desc x_offsets y_offset", ig_bi_desc_gather, 0},
	{"desc_scatter", "desc value x_offsets y_offset", ig_bi_desc_scatter, 0},
	{"atomic_add", "ptr val mask? sem? scope?", ig_bi_atomic, ATOM_ADD},
	{"atomic_max", "ptr val mask? sem? scope?", ig_bi_atomic, ATOM_MAX},
	{"atomic_min", "ptr val mask? sem? scope?", ig_bi_atomic, ATOM_MIN},
	{"atomic_and", "ptr val mask? sem? scope?", ig_bi_atomic, ATOM_AND},
	{"atomic_or", "ptr val mask? sem? scope?", ig_bi_atomic, ATOM_OR},
	{"atomic_xor", "ptr val mask? sem? scope?", ig_bi_atomic, ATOM_XOR},
	{"atomic_xchg", "ptr val mask? sem? scope?", ig_bi_atomic, ATOM_XCHG},
	{"atomic_cas", "ptr cmp val sem? scope?", ig_bi_atomic_cas, 0},
	{"where", "condition x y", ig_bi_where, 0},
	{"to", "x dtype bitcast?", ig_bi_to, 0},
	{"bitcast", "x dtype", ig_bi_to, 1},
	{"exp", "x", ig_bi_math, MATH_EXP},
	{"exp2", "x", ig_bi_math, MATH_EXP2},
	{"log", "x", ig_bi_math, MATH_LOG},
	{"log2", "x", ig_bi_math, MATH_LOG2},
	{"sqrt", "x", ig_bi_math, MATH_SQRT},
	{"sqrt_rn", "x", ig_bi_math, MATH_SQRT_RN},
	{"rsqrt", "x", ig_bi_math, MATH_RSQRT},
	{"sin", "x", ig_bi_math, MATH_SIN},
	{"cos", "x", ig_bi_math, MATH_COS},
	{"tanh", "x", ig_bi_libm1, LIBM_TANH},
	{"tanh_precise", "x", ig_bi_math, MATH_TANH},
	{"sinh", "x", ig_bi_libm1, LIBM_SINH},
	{"cosh", "x", ig_bi_libm1, LIBM_COSH},
	{"tan", "x", ig_bi_libm1, LIBM_TAN},
	{"atan", "x", ig_bi_libm1, LIBM_ATAN},
	{"asin", "x", ig_bi_libm1, LIBM_ASIN},
	{"acos", "x", ig_bi_libm1, LIBM_ACOS},
	{"asinh", "x", ig_bi_libm1, LIBM_ASINH},
	{"acosh", "x", ig_bi_libm1, LIBM_ACOSH},
	{"atanh", "x", ig_bi_libm1, LIBM_ATANH},
	{"log1p", "x", ig_bi_libm1, LIBM_LOG1P},
	{"expm1", "x", ig_bi_libm1, LIBM_EXPM1},
	{"log10", "x", ig_bi_libm1, LIBM_LOG10},
	{"exp10", "x", ig_bi_libm1, LIBM_EXP10},
	{"cbrt", "x", ig_bi_libm1, LIBM_CBRT},
	{"erfc", "x", ig_bi_libm1, LIBM_ERFC},
	{"erfinv", "x", ig_bi_libm1, LIBM_ERFINV},
	{"lgamma", "x", ig_bi_libm1, LIBM_LGAMMA},
	{"tgamma", "x", ig_bi_libm1, LIBM_TGAMMA},
	{"i0", "x", ig_bi_libm1, LIBM_I0},
	{"i1", "x", ig_bi_libm1, LIBM_I1},
	{"j0", "x", ig_bi_libm1, LIBM_J0},
	{"j1", "x", ig_bi_libm1, LIBM_J1},
	{"y0", "x", ig_bi_libm1, LIBM_Y0},
	{"y1", "x", ig_bi_libm1, LIBM_Y1},
	{"pow", "x y", ig_bi_libm2, LIBM_POW},
	{"pow_precise", "x y", ig_bi_libm2, LIBM_POW_PRECISE},
	{"atan2", "y x", ig_bi_libm2, LIBM_ATAN2},
	{"hypot", "x y", ig_bi_libm2, LIBM_HYPOT},
	{"remainder", "x y", ig_bi_libm2, LIBM_REMAINDER},
	{"copysign", "x y", ig_bi_libm2, LIBM_COPYSIGN},
	{"nextafter", "x y", ig_bi_libm2, LIBM_NEXTAFTER},
	{"fmod", "x y", ig_bi_fmod, 0},
	{"isnan", "x", ig_bi_fpclass, FPC_NAN},
	{"isinf", "x", ig_bi_fpclass, FPC_INF},
	{"isfinite", "x", ig_bi_fpclass, FPC_FINITE},
	{"signbit", "x", ig_bi_fpclass, FPC_SIGNBIT},
	{"ldexp", "x n", ig_bi_ldexp, 0},
	{"frexp", "x", ig_bi_frexp, 0},
	{"trunc", "x", ig_bi_math, MATH_TRUNC},
	{"rint", "x", ig_bi_math, MATH_RINT},
	{"round", "x", ig_bi_math, MATH_ROUND},
	{"erf", "x", ig_bi_math, MATH_ERF},
	{"floor", "x", ig_bi_math, MATH_FLOOR},
	{"ceil", "x", ig_bi_math, MATH_CEIL},
	{"sigmoid", "x", ig_bi_sigmoid, 0},
	{"abs", "x", ig_bi_abs, 0},
	{"fma", "a b c", ig_bi_fma, 0},
	{"div_rn", "a b", ig_bi_div_rn, 0},
	{"maximum", "a b propagate_nan?", ig_bi_minmax, OP_MAX},
	{"minimum", "a b propagate_nan?", ig_bi_minmax, OP_MIN},
	{"clamp", "x lo hi", ig_bi_clamp, 0},
	{"umulhi", "a b", ig_bi_umulhi, 0},
	{"sum", "x axis? keep_dims? dtype?", ig_bi_reduction, COMBINE_ADD},
	{"max", "x axis? keep_dims?", ig_bi_reduction, COMBINE_MAX},
	{"min", "x axis? keep_dims?", ig_bi_reduction, COMBINE_MIN},
	{"argmax", "x axis keep_dims?", ig_bi_reduction, COMBINE_ARGMAX},
	{"argmin", "x axis keep_dims?", ig_bi_reduction, COMBINE_ARGMIN},
	{"reduce", "x axis combine_fn keep_dims?", ig_bi_reduce, 0},
	{"cumsum", "x axis? reverse?", ig_bi_scan, COMBINE_ADD},
	{"cumprod", "x axis? reverse?", ig_bi_scan, COMBINE_MUL},
	{"associative_scan", "x axis combine_fn reverse?", ig_bi_scan, COMBINE_FN},
	{"dot", "a b acc? input_precision? out_dtype?", ig_bi_dot, 0},
	{"dot_scaled", "lhs lhs_scale lhs_format rhs rhs_scale rhs_format acc? fast_math? lhs_k_pack? rhs_k_pack? out_dtype?",
	 ig_bi_dot_scaled, 0},
	{"sort", "x axis? descending? return_indices?", ig_bi_sort, 0},
	{"argsort", "x axis? descending?", ig_bi_sort, 1},
	{"topk", "x k axis?", ig_bi_topk, 0},
	{"histogram", "x num_bins mask?", ig_bi_histogram, 0},
	{"reshape", "x shape d1? d2? d3? d4? d5? d6? d7? d8?", ig_bi_reshape, 0},
	{"view", "x shape d1? d2? d3? d4? d5? d6? d7? d8?", ig_bi_reshape, 0},
	{"flatten", "x", ig_bi_flatten, 0},
	{"trans", "x dims? d1? d2? d3? d4? d5? d6? d7? d8?", ig_bi_trans, 0},
	{"permute", "x dims d1? d2? d3? d4? d5? d6? d7? d8?", ig_bi_trans, 0},
	{"expand_dims", "x axis", ig_bi_expand_dims, 0},
	{"broadcast_to", "x shape d1? d2? d3? d4? d5? d6? d7? d8?", ig_bi_broadcast_to, 0},
	{"join", "a b", ig_bi_join_cat, 1},
	{"cat", "a b axis?", ig_bi_join_cat, 0},
	{"split", "x", ig_bi_split, 0},
	{"gather", "src index axis", ig_bi_gather, 0},
	{"flip", "x dim?", ig_bi_flip, 0},
	{"interleave", "a b", ig_bi_interleave, 0},
	{"globaltimer", "", ig_bi_sreg, SREG_GLOBALTIMER},
	{"smid", "", ig_bi_sreg, SREG_SMID},
	{"num_warps", "", ig_bi_num_warps, 0},
	{"inline_asm_elementwise", "asm constraints args dtype is_pure? pack?", ig_bi_inline_asm, 0},
	{"inline_asm", "asm constraints args dtype is_pure? pack?", ig_bi_inline_asm, 0},
	{"rand", "seed offsets n_rounds?", ig_bi_rand, RAND_UNIFORM},
	{"randn", "seed offsets n_rounds?", ig_bi_rand, RAND_NORMAL},
	{"randint", "seed offsets n_rounds?", ig_bi_rand, RAND_INT},
	{"randint4x", "seed offsets n_rounds?", ig_bi_rand, RAND_INT4X},
	{"multiple_of", "x value", bi_hint, 0},
	{"max_contiguous", "x value", bi_hint, 1},
	{"static_assert", "condition msg?", bi_static_assert, 0},
	{"assert", "condition msg?", bi_assert, 0},
};

const Builtin *ig_find_builtin(const char *name)
{
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
		if (strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

const char *ig_builtin_name(int i)
{
	return i >= 0 && (size_t)i < sizeof builtins / sizeof builtins[0] ? builtins[i].name : NULL;
}
