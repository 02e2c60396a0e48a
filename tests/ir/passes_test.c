/* canonicalize, cse, dce and the pass manager: before/after text, and
 * folded constants against values computed by hand at the overflow edges
 * of every integer type and the rounding edges of the float types. */
#include "irtest.h"

#include <math.h>

static Type f32, f16, f64, i32, i64, u32, i1, bf16;

/* Runs a pipeline; returns the printed IR, or the diagnostics on failure. */
static char *after(const char *pipeline)
{
	Diag d;
	diag_init(&d);
	d.max_errors = 0;
	char *s = pipeline_run_passes(F, pipeline, NULL, NULL, &d) ? print_fn(F)
	          : arena_strndup(&arena, d.out.data ? d.out.data : "", d.out.len);
	diag_free(&d);
	return s;
}

/* ---- folding, one op on constants --------------------------------------- */

typedef struct Folded {
	bool folded;
	int64_t i;
	double f;
} Folded;

/* k-typed p; store p, op(a, b[, c]); canonicalize; what reaches the store. */
static Folded fold(OpCode code, int64_t attr0, Type in, Type out, int n, const double *fa, const int64_t *ia)
{
	begin("fold");
	Value *p = param("p", P(out));
	Value *ops[3];
	for (int i = 0; i < n; i++)
		ops[i] = scalar_is_float((ScalarKind)in.scalar) ? cf(in, fa[i]) : ci(in, ia[i]);
	Op *op = emit(code, ops, n, &out, 1);
	op->attr[0] = attr0;
	store(p, op->results[0]);
	ret();
	Folded r = {0};
	Diag d;
	diag_init(&d);
	if (!ir_verify(F, &d, "test") || !ir_canonicalize(F, &d) || !ir_verify(F, &d, "canonicalize")) {
		printf("%s", d.out.data ? d.out.data : "");
		diag_free(&d);
		return r;
	}
	diag_free(&d);
	Value *v = F->body.last->prev->operands[1];
	if (v->def && v->def->code == OP_CONST)
		r = (Folded){true, v->def->ival, v->def->fval};
	return r;
}

#define NOFOLD INT64_MIN /* in an int row: must stay unfolded (and INT64_MIN as a value is written MIN64) */

typedef struct Kind {
	ScalarKind k;
	int w;
	int64_t min, max, half; /* half: 2^(w-1) as a value of k (the sign bit) */
} Kind;

static const Kind kinds[] = {
	{SK_I8, 8, -128, 127, -128},
	{SK_I16, 16, -32768, 32767, -32768},
	{SK_I32, 32, INT32_MIN, INT32_MAX, INT32_MIN},
	{SK_I64, 64, INT64_MIN, INT64_MAX, INT64_MIN},
	{SK_U8, 8, 0, 255, 128},
	{SK_U16, 16, 0, 65535, 32768},
	{SK_U32, 32, 0, 4294967295, 2147483648},
	{SK_U64, 64, 0, -1 /* all ones */, INT64_MIN /* bit 63 */},
};

static void int_row(const Kind *k, const char *what, OpCode code, int64_t attr0, int n, int64_t a, int64_t b, int64_t c,
                    bool expect_fold, int64_t want)
{
	Type t = T(k->k);
	Type out = code == OP_CMP ? i1 : t;
	Folded r = fold(code, attr0, t, out, n, NULL, (int64_t[]){a, b, c});
	char name[160];
	snprintf(name, sizeof name, "fold %s: %s", scalar_name(k->k), what);
	bool ok = expect_fold ? r.folded && r.i == want : !r.folded;
	if (!check(ok, name)) {
		if (r.folded)
			printf("  got %lld, want %s%lld\n", (long long)r.i, expect_fold ? "" : "no fold, not ", (long long)want);
		else
			printf("  not folded\n");
	}
}

#define FOLDS(what, code, n, a, b, want) int_row(k, what, code, 0, n, a, b, 0, true, want)
#define KEEPS(what, code, n, a, b) int_row(k, what, code, 0, n, a, b, 0, false, 0)

static void int_folding(void)
{
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
		const Kind *k = &kinds[i];
		bool sgn = scalar_is_signed(k->k);
		FOLDS("max + 1 wraps to min", OP_ADD, 2, k->max, 1, k->min);
		FOLDS("min - 1 wraps to max", OP_SUB, 2, k->min, 1, k->max);
		FOLDS("max * 2 wraps", OP_MUL, 2, k->max, 2, sgn ? -2 : k->max - 1);
		KEEPS("x / 0 is left for run time", OP_DIV, 2, 1, 0);
		KEEPS("x % 0 is left for run time", OP_REM, 2, 1, 0);
		KEEPS("shift by the width is left for run time", OP_SHL, 2, 1, k->w);
		FOLDS("1 << (w - 1) is the sign bit", OP_SHL, 2, 1, k->w - 1, k->half);
		FOLDS("~0", OP_NOT, 1, 0, 0, sgn ? -1 : k->max);
		FOLDS("umulhi(all ones, all ones)", OP_UMULHI, 2, sgn ? -1 : k->max, sgn ? -1 : k->max, sgn ? -2 : k->max - 1);
		FOLDS("x ^ max", OP_XOR, 2, -1 & k->max, k->max, 0);
		int_row(k, "fma(max, 2, 3) wraps to 1", OP_FMA, 0, 3, k->max, 2, 3, true, 1);
		if (sgn) {
			FOLDS("-7 / 2 truncates to -3", OP_DIV, 2, -7, 2, -3);
			FOLDS("-7 % 2 is -1 (sign of the dividend)", OP_REM, 2, -7, 2, -1);
			FOLDS("7 % -2 is 1", OP_REM, 2, 7, -2, 1);
			KEEPS("min / -1 is left for run time", OP_DIV, 2, k->min, -1);
			KEEPS("min % -1 is left for run time", OP_REM, 2, k->min, -1);
			FOLDS("min >> (w - 1) is -1 (arithmetic)", OP_SHR, 2, k->min, k->w - 1, -1);
			KEEPS("shift by -1 is left for run time", OP_SHR, 2, 1, -1);
			FOLDS("-min wraps to min", OP_NEG, 1, k->min, 0, k->min);
			FOLDS("abs(min) wraps to min", OP_ABS, 1, k->min, 0, k->min);
			FOLDS("abs(-5) is 5", OP_ABS, 1, -5, 0, 5);
			FOLDS("min(-1, 0) is -1 (signed)", OP_MIN, 2, -1, 0, -1);
			FOLDS("max(min, max)", OP_MAX, 2, k->min, k->max, k->max);
			int_row(k, "-1 < 0 (signed)", OP_CMP, CMP_LT, 2, -1, 0, 0, true, 1);
			int_row(k, "min >= max is false", OP_CMP, CMP_GE, 2, k->min, k->max, 0, true, 0);
		} else {
			FOLDS("7 / 2 is 3", OP_DIV, 2, 7, 2, 3);
			FOLDS("max / 2", OP_DIV, 2, k->max, 2, (int64_t)((uint64_t)k->half - 1));
			FOLDS("max % 10", OP_REM, 2, k->max, 10, (int64_t)((uint64_t)k->max % 10));
			FOLDS("max >> (w - 1) is 1 (logical)", OP_SHR, 2, k->max, k->w - 1, 1);
			FOLDS("-1 wraps to max", OP_NEG, 1, 1, 0, k->max);
			FOLDS("abs(max) is max", OP_ABS, 1, k->max, 0, k->max);
			FOLDS("min(max, 0) is 0 (unsigned)", OP_MIN, 2, k->max, 0, 0);
			int_row(k, "max < 0 is false (unsigned)", OP_CMP, CMP_LT, 2, k->max, 0, 0, true, 0);
			int_row(k, "max > 1 (unsigned)", OP_CMP, CMP_GT, 2, k->max, 1, 0, true, 1);
		}
	}
	/* i1 is unsigned, 0 and 1 (as in the interpreter) */
	const Kind b = {SK_I1, 1, 0, 1, 1}, *k = &b;
	FOLDS("true + true is false", OP_ADD, 2, 1, 1, 0);
	FOLDS("true xor true", OP_XOR, 2, 1, 1, 0);
	FOLDS("not true", OP_NOT, 1, 1, 0, 0);
	FOLDS("-true is true", OP_NEG, 1, 1, 0, 1);
	int_row(k, "true == true", OP_CMP, CMP_EQ, 2, 1, 1, 0, true, 1);
	int_row(k, "false < true", OP_CMP, CMP_LT, 2, 0, 1, 0, true, 1);
	FOLDS("max(false, true)", OP_MAX, 2, 0, 1, 1);
	FOLDS("true / true", OP_DIV, 2, 1, 1, 1);
	KEEPS("true / false is left for run time", OP_DIV, 2, 1, 0);
}

static void float_row(const char *what, OpCode code, int64_t attr0, Type t, int n, double a, double b, double c,
                      bool expect_fold, double want)
{
	Type out = code == OP_CMP ? i1 : t;
	Folded r = fold(code, attr0, t, out, n, (double[]){a, b, c}, NULL);
	char name[160];
	snprintf(name, sizeof name, "fold %s: %s", scalar_name((ScalarKind)t.scalar), what);
	double got = code == OP_CMP ? (double)r.i : r.f;
	bool same = isnan(want) ? isnan(got) : got == want && signbit(got) == signbit(want);
	bool ok = expect_fold ? r.folded && same : !r.folded;
	if (!check(ok, name))
		printf("  %s %a, want %a\n", r.folded ? "got" : "not folded,", got, want);
}

#define FF(what, code, t, n, a, b, want) float_row(what, code, 0, t, n, a, b, 0, true, want)

static void float_folding(void)
{
	FF("0.1 + 0.2 in f32", OP_ADD, f32, 2, (float)0.1, (float)0.2, 0x1.333334p-2);
	FF("0.1 + 0.2 in f64", OP_ADD, f64, 2, 0.1, 0.2, 0x1.3333333333334p-2);
	FF("1 + 2^-11 ties to even: 1", OP_ADD, f16, 2, 1, 0x1p-11, 1);
	FF("1 + 3 * 2^-11 ties to even: 1 + 2^-9", OP_ADD, f16, 2, 1, 0x3p-11, 1 + 0x1p-9);
	FF("65504 + 8 rounds back to 65504", OP_ADD, f16, 2, 65504, 8, 65504);
	FF("65504 + 16 overflows to inf", OP_ADD, f16, 2, 65504, 16, INFINITY);
	FF("1 / 3", OP_DIV, f16, 2, 1, 3, 0x1.554p-2);
	FF("1 + 2^-8 ties to even: 1", OP_ADD, bf16, 2, 1, 0x1p-8, 1);
	FF("1 + 3 * 2^-8 ties to even: 1 + 2^-6", OP_ADD, bf16, 2, 1, 0x3p-8, 1 + 0x1p-6);
	FF("1 / 0 is inf", OP_DIV, f32, 2, 1, 0, INFINITY);
	FF("0 / 0 is nan", OP_DIV, f32, 2, 0, 0, NAN);
	FF("5.5 % 2 is 1.5 (fmod)", OP_REM, f32, 2, 5.5, 2, 1.5);
	FF("-5.5 % 2 is -1.5", OP_REM, f64, 2, -5.5, 2, -1.5);
	float_row("fma(0.1, 10, -1) rounds once", OP_FMA, 0, f64, 3, 0.1, 10, -1, true, 0x1p-54);
	float_row("fma(1 + 2^-23, 1 - 2^-23, -1) rounds once", OP_FMA, 0, f32, 3, 1 + 0x1p-23, 1 - 0x1p-23, -1, true,
	          -0x1p-46);
	float_row("fma(1 + 2^-10, 1 + 2^-10, 2^-20) in double, then rounded", OP_FMA, 0, f16, 3, 1 + 0x1p-10, 1 + 0x1p-10,
	          0x1p-20, true, 1 + 0x1p-9);
	float_row("exp is left for run time", OP_MATH, MATH_EXP, f32, 1, 1, 0, 0, false, 0);
	float_row("sqrt(2)", OP_MATH, MATH_SQRT, f32, 1, 2, 0, 0, true, 0x1.6a09e6p0);
	float_row("sqrt_rn(2)", OP_MATH, MATH_SQRT_RN, f32, 1, 2, 0, 0, true, 0x1.6a09e6p0);
	float_row("sqrt_rn(-1) is nan", OP_MATH, MATH_SQRT_RN, f64, 1, -1, 0, 0, true, NAN);
	float_row("div rn: 1 / 3", OP_DIV, 1, f32, 2, 1, 3, 0, true, 0x1.555556p-2);
	float_row("div rn: 1 / 3 in bf16", OP_DIV, 1, bf16, 2, 1, 3, 0, true, 0x1.56p-2);
	float_row("sqrt(2)", OP_MATH, MATH_SQRT, f16, 1, 2, 0, 0, true, 0x1.6ap0);
	float_row("floor(-2.5)", OP_MATH, MATH_FLOOR, f32, 1, -2.5, 0, 0, true, -3);
	float_row("ceil(-2.5) is -2", OP_MATH, MATH_CEIL, f64, 1, -2.5, 0, 0, true, -2);
	FF("-(0.0) is -0.0", OP_NEG, f32, 1, 0, 0, -0.0);
	FF("abs(-inf)", OP_ABS, f32, 1, -INFINITY, 0, INFINITY);
	FF("max(nan, 1) returns the number", OP_MAX, f32, 2, NAN, 1, 1);
	float_row("max(nan, 1) with propagate_nan is nan", OP_MAX, 1, f32, 2, NAN, 1, 0, true, NAN);
	FF("min(0.0, -0.0) is -0.0", OP_MIN, f32, 2, 0, -0.0, -0.0);
	FF("max(-0.0, 0.0) is 0.0", OP_MAX, f32, 2, -0.0, 0, 0);
	FF("max(0.0, -0.0) is 0.0", OP_MAX, f64, 2, 0, -0.0, 0);
	FF("min(nan, nan)", OP_MIN, f32, 2, NAN, NAN, NAN);
	FF("min(-1, 2)", OP_MIN, f16, 2, -1, 2, -1);
	float_row("nan < 1 is false", OP_CMP, CMP_LT, f32, 2, NAN, 1, 0, true, 0);
	float_row("nan != nan is true", OP_CMP, CMP_NE, f32, 2, NAN, NAN, 0, true, 1);
	float_row("-0.0 == 0.0", OP_CMP, CMP_EQ, f64, 2, -0.0, 0, 0, true, 1);
}

/* cast of a constant from `in` to `out` */
static void cast_row(const char *what, Type in, Type out, double fa, int64_t ia, bool expect_fold, double fwant,
                     int64_t iwant)
{
	Folded r = fold(OP_CAST, 0, in, out, 1, &fa, &ia);
	char name[160];
	snprintf(name, sizeof name, "fold cast %s -> %s: %s", scalar_name((ScalarKind)in.scalar),
	         scalar_name((ScalarKind)out.scalar), what);
	bool fl = scalar_is_float((ScalarKind)out.scalar);
	bool same = fl ? (isnan(fwant) ? isnan(r.f) : r.f == fwant) : r.i == iwant;
	if (!check(expect_fold ? r.folded && same : !r.folded, name))
		printf("  %s %a / %lld\n", r.folded ? "got" : "not folded,", r.f, (long long)r.i);
}

static void cast_folding(void)
{
	cast_row("-2.7 truncates to -2", f32, i32, -2.7f, 0, true, 0, -2);
	cast_row("3e9 is out of range: left for run time", f32, i32, 3e9f, 0, false, 0, 0);
	cast_row("3e9", f32, u32, 3e9f, 0, true, 0, 3000000000);
	cast_row("-1 is out of range: left for run time", f32, u32, -1, 0, false, 0, 0);
	cast_row("nan: left for run time", f32, i32, NAN, 0, false, 0, 0);
	cast_row("0.5 is true", f32, i1, 0.5, 0, true, 0, 1);
	cast_row("300 wraps to 44", i32, T(SK_I8), 0, 300, true, 0, 44);
	cast_row("-1 becomes 65535", i32, T(SK_U16), 0, -1, true, 0, 65535);
	cast_row("-1 becomes all ones", T(SK_I8), T(SK_U64), 0, -1, true, 0, -1);
	cast_row("255 stays 255", T(SK_U8), i32, 0, 255, true, 0, 255);
	cast_row("5 is true", i32, i1, 0, 5, true, 0, 1);
	cast_row("true is 1", i1, i32, 0, 1, true, 0, 1);
	cast_row("true is 1.0", i1, f32, 0, 1, true, 1, 0);
	cast_row("65520 overflows to inf", f32, f16, 65520, 0, true, INFINITY, 0);
	cast_row("2049 ties to even: 2048", i32, f16, 0, 2049, true, 2048, 0);
	cast_row("2051 ties to even: 2052", i32, f16, 0, 2051, true, 2052, 0);
	cast_row("all ones is 2^64", T(SK_U64), f32, 0, -1, true, 0x1p64, 0);
	cast_row("2^53 + 1 ties to even: 2^53", i64, f64, 0, (INT64_C(1) << 53) + 1, true, 0x1p53, 0);
	cast_row("2^24 + 2^16 + 1 rounds once: 2^24 + 2^17", i32, bf16, 0, (1 << 24) + (1 << 16) + 1, true,
	         0x1p24 + 0x1p17, 0);
	cast_row("0.1 rounds to nearest", f64, f32, 0.1, 0, true, (float)0.1, 0);
	cast_row("1 + 2^-11 + 2^-40 rounds once (not through f32)", f64, f16, 1 + 0x1p-11 + 0x1p-40, 0, true,
	         1 + 0x1p-10, 0);
	cast_row("500 saturates to 448", f32, T(SK_F8E4M3), 500, 0, true, 448, 0);
	cast_row("nan stays nan", f32, f64, NAN, 0, true, NAN, 0);
}

/* ---- canonicalize: before and after ------------------------------------- */

static void identities(void)
{
	begin("ids");
	Value *p = param("p", P(i32)), *x = param("x", i32), *y = param("y", f32);
	Value *q = param("q", P(f32));
	Value *zero = ci(i32, 0), *one = ci(i32, 1);
	Value *a = op2(OP_ADD, zero, x, i32); /* 0 + x: the constant goes right, then x */
	Value *m = op2(OP_MUL, a, one, i32);  /* x * 1 */
	Value *z = op2(OP_MUL, m, zero, i32); /* x * 0 */
	Value *d = op2(OP_SUB, m, m, i32);    /* x - x */
	Value *e = op2(OP_XOR, x, x, i32);    /* x ^ x */
	store(p, op2(OP_ADD, op2(OP_ADD, z, d, i32), e, i32));
	Value *fz = cf(f32, 0);
	store(q, op2(OP_ADD, y, fz, f32)); /* y + 0.0 is not y (-0.0 + 0.0 is 0.0) */
	store(q, op2(OP_MUL, y, fz, f32)); /* y * 0.0 is not 0.0 (nan, -0.0) */
	store(q, op2(OP_MUL, y, cf(f32, 1), f32));
	ret();
	check_text(after("canonicalize"),
	           "kernel @ids(%0: *i32, %1: i32, %2: f32, %3: *f32) num_warps = 4, num_stages = 3 {\n"
	           "  %4 = const 0 : i32\n"
	           "  %5 = const 1 : i32\n"
	           "  %6 = const 0 : i32\n"
	           "  %7 = const 0 : i32\n"
	           "  %8 = const 0 : i32\n"
	           "  %9 = const 0 : i32\n"
	           "  %10 = const 0 : i32\n"
	           "  store %0, %10\n"
	           "  %11 = const 0.0 : f32\n"
	           "  %12 = add %2, %11 : f32\n"
	           "  store %3, %12\n"
	           "  %13 = mul %2, %11 : f32\n"
	           "  store %3, %13\n"
	           "  %14 = const 1.0 : f32\n"
	           "  store %3, %2\n"
	           "  return\n"
	           "}\n",
	           "canonicalize: 0 + x, x * 1, x * 0, x - x, x ^ x (ints); y + 0.0 and y * 0.0 stay, y * 1.0 goes");
	check_text(after("dce"),
	           "kernel @ids(%0: *i32, %1: i32, %2: f32, %3: *f32) num_warps = 4, num_stages = 3 {\n"
	           "  %4 = const 0 : i32\n"
	           "  store %0, %4\n"
	           "  %5 = const 0.0 : f32\n"
	           "  %6 = add %2, %5 : f32\n"
	           "  store %3, %6\n"
	           "  %7 = mul %2, %5 : f32\n"
	           "  store %3, %7\n"
	           "  store %3, %2\n"
	           "  return\n"
	           "}\n",
	           "dce: the constants left unused go");
}

static void select_neg_cast(void)
{
	begin("sel");
	Value *p = param("p", P(B1(i32, 4))), *x = param("x", B1(i32, 4)), *y = param("y", B1(i32, 4));
	Value *c = param("c", B1(i1, 4));
	store(p, op3(OP_SELECT, ci(B1(i1, 4), 1), x, y, B1(i32, 4)));
	store(p, op3(OP_SELECT, c, y, y, B1(i32, 4)));
	store(p, op1(OP_NEG, op1(OP_NEG, x, B1(i32, 4)), B1(i32, 4)));
	store(p, op1(OP_NOT, op1(OP_NOT, y, B1(i32, 4)), B1(i32, 4)));
	store(p, op1(OP_CAST, x, B1(i32, 4)));
	ret();
	check_text(after("canonicalize,dce"),
	           "kernel @sel(%0: *i32[4], %1: i32[4], %2: i32[4], %3: i1[4]) num_warps = 4, num_stages = 3 {\n"
	           "  store %0, %1\n"
	           "  store %0, %2\n"
	           "  store %0, %1\n"
	           "  store %0, %2\n"
	           "  store %0, %1\n"
	           "  return\n"
	           "}\n",
	           "canonicalize: select on a constant, select of equal sides, double negation, cast to its own type");
}

static void shapes(void)
{
	begin("shapes");
	Value *p = param("p", P(B2(f32, 4, 8))), *s = param("s", f32), *r = param("r", B1(f32, 8));
	Value *k = cf(f32, 2.5);
	store(p, op1(OP_SPLAT, k, B2(f32, 4, 8)));                                   /* splat of a constant */
	store(p, op1(OP_BROADCAST, op1(OP_SPLAT, s, B2(f32, 1, 8)), B2(f32, 4, 8))); /* broadcast of a splat */
	Value *row = opa(OP_EXPAND_DIMS, r, NULL, B2(f32, 1, 8), 0);
	store(p, op1(OP_BROADCAST, op1(OP_BROADCAST, row, B2(f32, 1, 8)), B2(f32, 4, 8))); /* same-type broadcast */
	store(p, op1(OP_RESHAPE, cf(B1(f32, 32), -1), B2(f32, 4, 8)));                     /* reshape of a constant */
	ret();
	check_text(after("canonicalize,dce"),
	           "kernel @shapes(%0: *f32[4, 8], %1: f32, %2: f32[8]) num_warps = 4, num_stages = 3 {\n"
	           "  %3 = const 2.5 : f32[4, 8]\n"
	           "  store %0, %3\n"
	           "  %4 = splat %1 : f32[4, 8]\n"
	           "  store %0, %4\n"
	           "  %5 = expand_dims %2 {axis = 0} : f32[1, 8]\n"
	           "  %6 = broadcast %5 : f32[4, 8]\n"
	           "  store %0, %6\n"
	           "  %7 = const -1.0 : f32[4, 8]\n"
	           "  store %0, %7\n"
	           "  return\n"
	           "}\n",
	           "canonicalize: splat of a constant, broadcast of a splat, no-op broadcast, reshape of a constant");
}

/* for (lb, ub, step) carrying one f32. */
static Op *loop(IrFunc *f, int64_t lb, int64_t ub, int64_t step, Type t, Value *init)
{
	(void)f;
	/* one statement each: the order of evaluation in an initializer is unspecified */
	Value *ops[4];
	ops[0] = ci(t, lb);
	ops[1] = ci(t, ub);
	ops[2] = ci(t, step);
	ops[3] = init;
	Op *l = emit(OP_FOR, ops, 4, &f32, 1);
	Region *outer = R;
	R = &l->regions[0];
	ir_region_arg(F, R, t);
	Value *acc = ir_region_arg(F, R, f32);
	Value *q = F->body.args[0];
	store(q, acc);
	yield((Value *[]){op2(OP_ADD, acc, acc, f32)}, 1);
	R = outer;
	return l;
}

static void loops(void)
{
	begin("loops");
	Value *q = param("q", P(f32)), *x = param("x", f32);
	store(q, loop(F, 8, 8, 1, i32, x)->results[0]);   /* lb == ub: zero trips */
	store(q, loop(F, 10, 0, 2, i32, x)->results[0]);  /* lb > ub */
	store(q, loop(F, 0, 1, 1, u32, x)->results[0]);   /* one trip: stays */
	store(q, loop(F, -1, 1, 1, i32, x)->results[0]);  /* signed bounds: two trips, stays */
	store(q, loop(F, 0, 4, -1, i32, x)->results[0]);  /* counting down from below: zero trips */
	store(q, loop(F, 0, 0, 0, i32, x)->results[0]);   /* step 0: a run-time error, stays */
	ret();
	check_text(after("canonicalize,cse,dce"),
	           "kernel @loops(%0: *f32, %1: f32) num_warps = 4, num_stages = 3 {\n"
	           "  %2 = const 1 : i32\n"
	           "  store %0, %1\n"
	           "  %3 = const 0 : i32\n"
	           "  store %0, %1\n"
	           "  %4 = const 0 : u32\n"
	           "  %5 = const 1 : u32\n"
	           "  %6 = for %4 to %5 step %5 iter(%1) : f32 {\n"
	           "  ^(%7: u32, %8: f32):\n"
	           "    store %0, %8\n"
	           "    %9 = add %8, %8 : f32\n"
	           "    yield %9\n"
	           "  }\n"
	           "  store %0, %6\n"
	           "  %10 = const -1 : i32\n"
	           "  %11 = for %10 to %2 step %2 iter(%1) : f32 {\n"
	           "  ^(%12: i32, %13: f32):\n"
	           "    store %0, %13\n"
	           "    %14 = add %13, %13 : f32\n"
	           "    yield %14\n"
	           "  }\n"
	           "  store %0, %11\n"
	           "  store %0, %1\n"
	           "  %15 = for %3 to %3 step %3 iter(%1) : f32 {\n"
	           "  ^(%16: i32, %17: f32):\n"
	           "    store %0, %17\n"
	           "    %18 = add %17, %17 : f32\n"
	           "    yield %18\n"
	           "  }\n"
	           "  store %0, %15\n"
	           "  return\n"
	           "}\n",
	           "canonicalize: for loops with zero trips (either direction) give their initial values; others stay");
}

static void if_const(void)
{
	begin("ifc");
	Value *q = param("q", P(f32)), *x = param("x", f32);
	Value *c = cmp(CMP_LT, ci(i32, 1), ci(i32, 2)); /* true once folded */
	Op *iff = emit(OP_IF, &c, 1, &f32, 1);
	Region *outer = R;
	R = &iff->regions[0];
	Value *t = op2(OP_MUL, x, x, f32);
	store(q, t);
	yield(&t, 1);
	R = &iff->regions[1];
	yield(&x, 1);
	R = outer;
	store(q, iff->results[0]);
	ret();
	check_text(after("canonicalize,dce"),
	           "kernel @ifc(%0: *f32, %1: f32) num_warps = 4, num_stages = 3 {\n"
	           "  %2 = mul %1, %1 : f32\n"
	           "  store %0, %2\n"
	           "  store %0, %2\n"
	           "  return\n"
	           "}\n",
	           "canonicalize: an if on a constant becomes its chosen branch");
}

/* Folding chains through blocks: a splatted constant offset folds into
 * arange arithmetic only as far as it is constant. */
static void chain(void)
{
	begin("chain");
	Value *p = param("p", P(B1(i32, 8)));
	Value *a = ci(i32, 6), *b = ci(i32, 7);
	Value *m = op2(OP_MUL, a, b, i32);                  /* 42 */
	Value *s = op1(OP_SPLAT, m, B1(i32, 8));            /* const 42 : i32[8] */
	Value *t = op2(OP_SUB, s, ci(B1(i32, 8), 2), B1(i32, 8)); /* 40 */
	Value *k = cmp(CMP_GT, t, ci(B1(i32, 8), 39));
	store(p, op3(OP_SELECT, k, t, s, B1(i32, 8)));
	ret();
	check_text(after(NULL),
	           "kernel @chain(%0: *i32[8]) num_warps = 4, num_stages = 3 {\n"
	           "  %1 = const 40 : i32[8]\n"
	           "  store %0, %1\n"
	           "  return\n"
	           "}\n",
	           "canonicalize: constants fold through splat, sub, cmp and select (default pipeline)");
}

/* ---- cse ------------------------------------------------------------------ */

static void cse(void)
{
	begin("cse");
	Value *p = param("p", P(i32)), *x = param("x", i32), *n = param("n", i32);
	Value *a = op2(OP_ADD, x, n, i32);
	Value *b = op2(OP_ADD, x, n, i32); /* same as a */
	Value *c = op2(OP_ADD, n, x, i32); /* other operand order: not the same op */
	Value *l1 = cmp(CMP_LT, x, n), *l2 = cmp(CMP_LE, x, n);
	Value *k1 = ci(i32, 3), *k2 = ci(i32, 3), *k3 = ci(i64, 3);
	store(p, op2(OP_MUL, a, b, i32));
	store(p, c);
	Value *c1 = op1(OP_CAST, l1, i32);
	Value *c2 = op1(OP_CAST, l2, i32);
	store(p, op2(OP_ADD, c1, c2, i32));
	store(p, op2(OP_ADD, k1, k2, i32));
	store(p, op1(OP_CAST, k3, i32));
	Value *ld1 = emit(OP_LOAD, &p, 1, &i32, 1)->results[0];
	Value *ld2 = emit(OP_LOAD, &p, 1, &i32, 1)->results[0]; /* loads are not pure */
	store(p, op2(OP_ADD, ld1, ld2, i32));
	ret();
	check_text(after("cse"),
	           "kernel @cse(%0: *i32, %1: i32, %2: i32) num_warps = 4, num_stages = 3 {\n"
	           "  %3 = add %1, %2 : i32\n"
	           "  %4 = add %2, %1 : i32\n"
	           "  %5 = cmp lt %1, %2 : i1\n"
	           "  %6 = cmp le %1, %2 : i1\n"
	           "  %7 = const 3 : i32\n"
	           "  %8 = const 3 : i64\n"
	           "  %9 = mul %3, %3 : i32\n"
	           "  store %0, %9\n"
	           "  store %0, %4\n"
	           "  %10 = cast %5 : i1 -> i32\n"
	           "  %11 = cast %6 : i1 -> i32\n"
	           "  %12 = add %10, %11 : i32\n"
	           "  store %0, %12\n"
	           "  %13 = add %7, %7 : i32\n"
	           "  store %0, %13\n"
	           "  %14 = cast %8 : i64 -> i32\n"
	           "  store %0, %14\n"
	           "  %15 = load %0 : i32\n"
	           "  %16 = load %0 : i32\n"
	           "  %17 = add %15, %16 : i32\n"
	           "  store %0, %17\n"
	           "  return\n"
	           "}\n",
	           "cse: equal pure ops merge; attributes, operand order and types tell ops apart; loads stay");
}

static void cse_float_consts(void)
{
	begin("cse_f");
	Value *q = param("q", P(f32));
	const double x[4] = {0, -0.0, NAN, NAN};
	Value *v[4];
	for (int i = 0; i < 4; i++)
		v[i] = cf(f32, x[i]);
	for (int i = 0; i < 4; i++)
		store(q, v[i]);
	ret();
	check_text(after("cse"),
	           "kernel @cse_f(%0: *f32) num_warps = 4, num_stages = 3 {\n"
	           "  %1 = const 0.0 : f32\n"
	           "  %2 = const -0.0 : f32\n"
	           "  %3 = const nan : f32\n"
	           "  store %0, %1\n"
	           "  store %0, %2\n"
	           "  store %0, %3\n"
	           "  store %0, %3\n"
	           "  return\n"
	           "}\n",
	           "cse: float constants compare by bits (-0.0 is not 0.0, nan is nan)");
}

static void cse_regions(void)
{
	begin("cse_r");
	Value *q = param("q", P(i32)), *x = param("x", i32), *n = param("n", i32);
	Value *outer_add = op2(OP_ADD, x, x, i32);
	Value *ops[4] = {ci(i32, 0), n, NULL, x};
	ops[2] = ci(i32, 1);
	Op *l = emit(OP_FOR, ops, 4, &i32, 1);
	Region *outer = R;
	R = &l->regions[0];
	ir_region_arg(F, R, i32);
	Value *acc = ir_region_arg(F, R, i32);
	Value *in1 = op2(OP_ADD, x, x, i32);     /* same as outer_add: replaced by it */
	Value *in2 = op2(OP_MUL, acc, acc, i32); /* only inside */
	store(q, in1);
	yield(&in2, 1);
	R = outer;
	Value *after_loop = op2(OP_MUL, l->results[0], l->results[0], i32);
	store(q, outer_add);
	store(q, after_loop);
	ret();
	check_text(after("cse"),
	           "kernel @cse_r(%0: *i32, %1: i32, %2: i32) num_warps = 4, num_stages = 3 {\n"
	           "  %3 = add %1, %1 : i32\n"
	           "  %4 = const 0 : i32\n"
	           "  %5 = const 1 : i32\n"
	           "  %6 = for %4 to %2 step %5 iter(%1) : i32 {\n"
	           "  ^(%7: i32, %8: i32):\n"
	           "    %9 = mul %8, %8 : i32\n"
	           "    store %0, %3\n"
	           "    yield %9\n"
	           "  }\n"
	           "  %10 = mul %6, %6 : i32\n"
	           "  store %0, %3\n"
	           "  store %0, %10\n"
	           "  return\n"
	           "}\n",
	           "cse: an op in a loop body is replaced by an equal op outside it");

	/* an op after a region is not replaced by its twin inside the region */
	begin("cse_s");
	q = param("q", P(i32));
	x = param("x", i32);
	Value *c = cmp(CMP_GT, x, ci(i32, 0));
	Op *iff = emit(OP_IF, &c, 1, NULL, 0);
	outer = R;
	R = &iff->regions[0];
	store(q, op2(OP_SUB, x, ci(i32, 1), i32));
	yield(NULL, 0);
	R = &iff->regions[1];
	yield(NULL, 0);
	R = outer;
	store(q, op2(OP_SUB, x, ci(i32, 1), i32));
	ret();
	check_text(after("cse"),
	           "kernel @cse_s(%0: *i32, %1: i32) num_warps = 4, num_stages = 3 {\n"
	           "  %2 = const 0 : i32\n"
	           "  %3 = cmp gt %1, %2 : i1\n"
	           "  if %3 {\n"
	           "    %4 = const 1 : i32\n"
	           "    %5 = sub %1, %4 : i32\n"
	           "    store %0, %5\n"
	           "    yield\n"
	           "  } else {\n"
	           "    yield\n"
	           "  }\n"
	           "  %6 = const 1 : i32\n"
	           "  %7 = sub %1, %6 : i32\n"
	           "  store %0, %7\n"
	           "  return\n"
	           "}\n",
	           "cse: an op inside a region does not replace one after it");
}

/* ---- dce ------------------------------------------------------------------ */

static void dce(void)
{
	begin("dce");
	Value *q = param("q", P(B1(f32, 8))), *x = param("x", B1(f32, 8));
	Value *a = op2(OP_ADD, x, x, B1(f32, 8));
	Value *b = op2(OP_MUL, a, a, B1(f32, 8)); /* a chain nothing uses */
	(void)b;
	emit(OP_LOAD, &q, 1, (Type[]){B1(f32, 8)}, 1); /* unused, but a load stays */
	Op *red = emit(OP_REDUCE, &x, 1, &f32, 1);    /* unused reduce goes, region and all */
	Region *outer = R;
	R = &red->regions[0];
	Value *r0 = ir_region_arg(F, R, f32), *r1 = ir_region_arg(F, R, f32);
	yield((Value *[]){op2(OP_ADD, r0, r1, f32)}, 1);
	R = outer;
	Value *ops[4] = {ci(i32, 0), NULL, NULL, x};
	ops[1] = ci(i32, 4);
	ops[2] = ci(i32, 1);
	Op *l = emit(OP_FOR, ops, 4, (Type[]){B1(f32, 8)}, 1); /* its result is unused: the loop stays */
	R = &l->regions[0];
	ir_region_arg(F, R, i32);
	Value *acc = ir_region_arg(F, R, B1(f32, 8));
	op1(OP_NEG, acc, B1(f32, 8)); /* dead inside the body */
	store(q, acc);
	yield(&acc, 1);
	R = outer;
	ret();
	check_text(after("dce"),
	           "kernel @dce(%0: *f32[8], %1: f32[8]) num_warps = 4, num_stages = 3 {\n"
	           "  %2 = load %0 : f32[8]\n"
	           "  %3 = const 0 : i32\n"
	           "  %4 = const 4 : i32\n"
	           "  %5 = const 1 : i32\n"
	           "  %6 = for %3 to %4 step %5 iter(%1) : f32[8] {\n"
	           "  ^(%7: i32, %8: f32[8]):\n"
	           "    store %0, %8\n"
	           "    yield %8\n"
	           "  }\n"
	           "  return\n"
	           "}\n",
	           "dce: unused pure chains, reduces and dead ops in loop bodies go; loads and loops stay");
}

/* ---- the pass manager ----------------------------------------------------- */

static void small(void)
{
	begin("small");
	Value *p = param("p", P(i32)), *x = param("x", i32);
	Value *a = op2(OP_ADD, x, ci(i32, 0), i32);
	Value *b = op2(OP_ADD, x, x, i32);
	Value *c = op2(OP_ADD, a, a, i32);
	store(p, op2(OP_MUL, b, c, i32));
	ret();
}

static char *run_dump(const char *pipeline, const char *dump_after, bool *ok)
{
	Diag d;
	diag_init(&d);
	StrBuf dump = {0};
	*ok = pipeline_run_passes(F, pipeline, dump_after, &dump, &d);
	StrBuf all = {0};
	sb_printf(&all, "%s%s", dump.data ? dump.data : "", d.out.data ? d.out.data : "");
	char *s = arena_strndup(&arena, all.data ? all.data : "", all.len);
	sb_free(&all);
	sb_free(&dump);
	diag_free(&d);
	return s;
}

static void manager(void)
{
	bool ok;
	small();
	check_text(run_dump("canonicalize , cse,dce", "cse", &ok),
	           "// IR after cse\n"
	           "kernel @small(%0: *i32, %1: i32) num_warps = 4, num_stages = 3 {\n"
	           "  %2 = const 0 : i32\n"
	           "  %3 = add %1, %1 : i32\n"
	           "  %4 = mul %3, %3 : i32\n"
	           "  store %0, %4\n"
	           "  return\n"
	           "}\n",
	           "passes: --dump-after=cse prints the IR after cse under a header");
	check(ok, "passes: the pipeline succeeds");

	small();
	char *all = run_dump(NULL, "all", &ok);
	check(ok && strstr(all, "// IR after canonicalize\n") && strstr(all, "// IR after cse\n") &&
	          strstr(all, "// IR after dce\n") && strstr(all, "// IR after canonicalize\n") < strstr(all, "// IR after cse\n"),
	      "passes: --dump-after=all dumps after every pass, in order");
	check_text(print_fn(F),
	           "kernel @small(%0: *i32, %1: i32) num_warps = 4, num_stages = 3 {\n"
	           "  %2 = add %1, %1 : i32\n"
	           "  %3 = mul %2, %2 : i32\n"
	           "  store %0, %3\n"
	           "  return\n"
	           "}\n",
	           "passes: the default pipeline is canonicalize,contract,cse,dce, values renumbered");

	small();
	check_text(run_dump("canonicalize,fold", NULL, &ok),
	           "error: unknown pass 'fold' (known passes: canonicalize, cse, dce, contract, expand-descriptors, pipeline, pipeline-dots, layouts, remove-conversions)\n",
	           "passes: an unknown pass is an error listing the known ones");
	check(!ok, "passes: an unknown pass fails the run");
	check_text(run_dump(NULL, "inline", &ok),
	           "error: unknown pass for --dump-after 'inline' (known passes: canonicalize, cse, dce, contract, expand-descriptors, pipeline, pipeline-dots, layouts, remove-conversions)\n",
	           "passes: an unknown --dump-after pass is an error");
	check_text(run_dump("canonicalize", "dce", &ok),
	           "error: --dump-after=dce: the pipeline does not run dce (it runs: canonicalize)\n",
	           "passes: --dump-after of a pass the pipeline does not run is an error");
	check_text(run_dump("", NULL, &ok), "", "passes: an empty pipeline runs nothing");
	check(ok, "passes: an empty pipeline succeeds");

	/* a broken input is caught before any pass runs */
	small();
	F->body.first->results[0]->type = i64;
	check_has(run_dump(NULL, NULL, &ok), "error: internal error: IR invalid: ", "passes: the input is verified first");
	check(!ok, "passes: an invalid input fails the run");

	const IrPassTable *pt = pipeline_pass_table();
	const IrPass *t = pt->passes;
	check(pt->n == 9 && pipeline_pass_find("cse") == &t[1] && pipeline_pass_find("contract") == &t[3] &&
	          pipeline_pass_find("layouts") == &t[7] &&
	          !pipeline_pass_find("nope") && t[0].summary,
	      "passes: the pass table and pipeline_pass_find");
}

/* 30000 replacements in one function: linear, not one walk of the
 * function per replacement (that took minutes at this size). */
static void long_chain(void)
{
	begin("long");
	Value *p = param("p", P(i32)), *x = param("x", i32);
	Value *zero = ci(i32, 0), *v = x, *w = x;
	for (int i = 0; i < 30000; i++) {
		v = op2(OP_ADD, v, zero, i32);
		w = op2(OP_MUL, w, x, i32);
	}
	Value *w2 = x;
	for (int i = 0; i < 30000; i++)
		w2 = op2(OP_MUL, w2, x, i32); /* the same chain again: cse merges it */
	store(p, v);
	store(p, op2(OP_SUB, w, w2, i32));
	ret();
	char *s = after("canonicalize,cse,canonicalize,dce");
	check_text(s, "kernel @long(%0: *i32, %1: i32) num_warps = 4, num_stages = 3 {\n"
	              "  store %0, %1\n"
	              "  %2 = const 0 : i32\n"
	              "  store %0, %2\n"
	              "  return\n"
	              "}\n",
	           "passes: 30000 identities fold and a 30000-op chain merges with its twin (linear time)");
}

int main(void)
{
	f32 = T(SK_F32), f16 = T(SK_F16), f64 = T(SK_F64), i32 = T(SK_I32), i64 = T(SK_I64), u32 = T(SK_U32),
	i1 = T(SK_I1), bf16 = T(SK_BF16);
	int_folding();
	float_folding();
	cast_folding();
	identities();
	select_neg_cast();
	shapes();
	loops();
	if_const();
	chain();
	cse();
	cse_float_consts();
	cse_regions();
	dce();
	manager();
	long_chain();
	return done();
}
