/* tests/ops: the operators of language.md on every element type they take,
 * as .tile kernels through blk.h, against references in C (ops.h):
 *   + - * / %       i8..i64 u8..u64 f16 bf16 f32 f64 (+ - * also fp8)
 *   & | ^ << >>     every integer type (& | ^ also i1 masks)
 *   == != < <= > >= every numeric type, giving i1
 *   unary - ~ !
 *   type promotion of mixed operands and literals (language.md "Type
 *   promotion"), checked by a typed `let` (a wrong result type does not
 *   compile) and by value.
 * Tolerances: exact, except f32 '/' (and the f32 '/' of f16 and bf16), 2 ulp:
 * a GPU's div.full.f32 is within 2 ulp. fmod ('%' of floats) is exact in
 * IEEE; it gets 2 ulp of |x| so that a GPU computing x - trunc(x / y) * y with
 * an fma passes while the quotient stays small (|x / y| < 256 here). */
#include "ops.h"

enum { N = 1000 };

static const dt ARITH_TYPES[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32,
                                 DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};
static const dt INT_TYPES[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32, DT_U64};
static const char *BINOP_SRC =
	"kernel k(x: *$A, y: *$B, out: *$R, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let a = load(x + offs, mask = m, other = $ONEA);\n"
	"    let b = load(y + offs, mask = m, other = $ONEB);\n"
	"    let r: $R = $EXPR;\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static const char *one_of(dt t) { return t == DT_I1 ? "true" : "1"; }

/* Special values first, then random ones. */
static void fill_operand(arr a, const char *op, bool divisor)
{
	bool fdiv = dt_float(a.t) && !strcmp(op, "%");
	if (fdiv) /* fmod: finite values, divisors away from 0: |x / y| < 256 */
		for (int64_t i = 0; i < a.n; i++) {
			double v = divisor ? rng_uniform(0.5, 100) : rng_uniform(0, 100);
			set_f(a, i, rng_u64() & 1 ? -v : v);
		}
	else if (dt_float(a.t))
		fill_random(a, a.t == DT_E4M3 ? 400 : a.t == DT_E5M2 ? 50000 : 100);
	else if (!strcmp(op, "<<") || !strcmp(op, ">>"))
		for (int64_t i = 0; i < a.n; i++)
			set_i(a, i, divisor ? rng_range(0, dts[a.t].bits - 1) : (int64_t)rng_u64());
	else
		fill_random(a, 0);
	if (fdiv)
		return;
	if (dt_float(a.t)) {
		/* every pairing of these with the other operand's specials */
		double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5};
		int ns = COUNT(sp);
		for (int i = 0; i < ns * ns && i < a.n; i++)
			set_f(a, i, sp[divisor ? i % ns : i / ns]);
		/* near the top of the range: overflow to inf (or saturation) */
		set_f(a, 70, dt_max(a.t));
		set_f(a, 71, dt_max(a.t));
		set_f(a, 72, -dt_max(a.t));
	} else if (strcmp(op, "<<") && strcmp(op, ">>")) {
		int b = dts[a.t].bits;
		int64_t mn = dt_signed(a.t) ? (b == 64 ? INT64_MIN : -(int64_t)(1ull << (b - 1))) : 0;
		int64_t mx = dt_signed(a.t) ? (b == 64 ? INT64_MAX : (int64_t)(1ull << (b - 1)) - 1)
		                            : (b == 64 ? -1 : (int64_t)((1ull << b) - 1));
		int64_t sp[] = {mn, mx, -1, 0, 1, 2, mn + 1, 7};
		int ns = COUNT(sp);
		for (int i = 0; i < ns * ns && i < a.n; i++)
			set_i(a, i, sp[divisor ? i % ns : i / ns]);
	}
	if (divisor && dt_int(a.t) && (!strcmp(op, "/") || !strcmp(op, "%")))
		for (int64_t i = 0; i < a.n; i++)
			while (get_i(a, i) == 0)
				set_bits(a, i, rng_u64() >> (rng_u64() % 64));
}

/* One binary case: x (type ta) OP y (type tb) computing in tr; the kernel
 * computes EXPR (default "a OP b"); store type tr. */
static void binop_case(const char *op, dt ta, dt tb, dt tr, const char *expr, const char *label)
{
	arr x = arr_new(ta, N), y = arr_new(tb, N), want = arr_new(tr, N);
	fill_operand(x, op, false);
	fill_operand(y, op, true);
	char ex[64];
	snprintf(ex, sizeof ex, "a %s b", op);
	const char *src = render(BINOP_SRC, "A", dts[ta].name, "B", dts[tb].name, "R", dts[tr].name, "EXPR",
	                         expr ? expr : ex, "ONEA", one_of(ta), "ONEB", one_of(tb), NULL);
	blk_devptr dx = dev_from(x), dy = dev_from(y), dout = dev_zeros(tr, N);
	bool ok = run_kernel(src, "k", ARGS(P(dx), P(dy), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	dt tc = tr; /* the type the operation computes in */
	bool is_cmp = strchr("=!<>", op[0]) && strcmp(op, "<<") && strcmp(op, ">>");
	if (is_cmp) {
		/* promoted like arithmetic */
		tc = ta;
		if (ta != tb)
			tc = tb; /* only same-type comparisons here */
	}
	double *wantf = calloc(N, sizeof(double));
	for (int64_t i = 0; i < N; i++) {
		val a = cast_ref(get_v(x, i), ta, tc), b = cast_ref(get_v(y, i), tb, tc);
		val r = binop_ref(op, tc, a, b);
		set_v(want, i, r);
		wantf[i] = dt_float(tr) ? r.f : 0;
	}
	if (ok) {
		arr got = dev_read(dout, tr, N);
		arr ins[2] = {x, y};
		bool f32div = tr == DT_F32 && !strcmp(op, "/");
		if (f32div)
			ok = check_close(got, wantf, ins, 2, 0, 0, 2);
		else if (dt_float(tr) && !strcmp(op, "%")) {
			/* 2 ulp of |x| (see the top of the file) */
			int bad = 0;
			for (int64_t i = 0; i < N; i++) {
				double g = get_f(got, i), t = 2 * ulp_of(tr, get_f(x, i));
				if (!(fabs(g - wantf[i]) <= t) && bad++ < 5)
					why("[%lld] got %s, want %.17g for %s %% %s\n", (long long)i, show(got, i), wantf[i], show(x, i),
					    show(y, i));
			}
			ok = bad == 0;
		} else
			ok = check_exact(got, want, ins, 2);
	}
	free(wantf);
	if (label)
		result(ok, "%s", label);
	else
		result(ok, "%s %s %s -> %s", dts[ta].name, op, dts[tb].name, dts[tr].name);
}

/* Division and remainder of f16/bf16 compute in f32 (language.md). */
static dt arith_result(const char *op, dt t)
{
	if ((t == DT_F16 || t == DT_BF16) && (!strcmp(op, "/") || !strcmp(op, "%")))
		return DT_F32;
	return t;
}

static const char *UNARY_SRC =
	"kernel k(x: *$T, out: *$T, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let a = load(x + offs, mask = m);\n"
	"    let r: $T = $OPa;\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static void unary_case(const char *op, dt t)
{
	arr x = arr_new(t, N), want = arr_new(t, N);
	fill_operand(x, "+", false);
	for (int64_t i = 0; i < N; i++) {
		val a = get_v(x, i), r = {0, 0};
		if (op[0] == '-' && dt_float(t))
			r.f = -a.f;
		else if (op[0] == '-')
			r.i = wrap_int(t, 0 - (uint64_t)a.i);
		else if (op[0] == '~')
			r.i = wrap_int(t, ~(uint64_t)a.i);
		else
			r.i = !a.i;
		set_v(want, i, r);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(UNARY_SRC, "T", dts[t].name, "OP", op, NULL), "k", ARGS(P(dx), P(dout), I(N)),
	                     NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, N), want, &x, 1);
	result(ok, "unary %s%s", op, dts[t].name);
}

/* An operand block with a literal: EXPR uses `a` (type ta); the result has type tr. */
static const char *LIT_SRC =
	"kernel k(x: *$A, out: *$R, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let a = load(x + offs, mask = m);\n"
	"    let r: $R = $EXPR;\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

/* a OP literal, where the literal (value lit, of literal type tl: i32 or f32
 * on its own) takes the type given by the promotion rules, tc; result tr. */
static void literal_case(dt ta, const char *op, const char *lit_text, double lit, dt tl, dt tc, dt tr)
{
	arr x = arr_new(ta, N), want = arr_new(tr, N);
	if (dt_float(ta))
		fill_random(x, 100);
	else
		fill_random(x, 0);
	val lv = {0, 0};
	if (dt_float(tl))
		lv.f = lit;
	else
		lv.i = lit >= 0x1p63 ? (int64_t)(uint64_t)lit : (int64_t)lit; /* u64 literals past 2^63 */
	for (int64_t i = 0; i < N; i++) {
		val a = cast_ref(get_v(x, i), ta, tc), b = cast_ref(lv, tl, tc);
		val r = binop_ref(op, tc, a, b);
		set_v(want, i, tr == DT_I1 ? r : cast_ref(r, tc, tr)); /* comparisons give i1 in .i */
	}
	char expr[64];
	snprintf(expr, sizeof expr, "a %s %s", op, lit_text);
	blk_devptr dx = dev_from(x), dout = dev_zeros(tr, N);
	bool ok = run_kernel(render(LIT_SRC, "A", dts[ta].name, "R", dts[tr].name, "EXPR", expr, NULL), "k",
	                     ARGS(P(dx), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, tr, N), want, &x, 1);
	result(ok, "promotion: %s block %s %s -> %s", dts[ta].name, op, lit_text, dts[tr].name);
}

/* A block with a runtime scalar parameter (s: T), broadcast. */
static const char *SCALAR_SRC =
	"kernel k(x: *$T, s: $T, out: *$T, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let r: $T = s $OP load(x + offs, mask = m);\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static void scalar_case(dt t, const char *op)
{
	arr x = arr_new(t, N), want = arr_new(t, N), sv = arr_new(t, 1);
	fill_random(x, 100);
	fill_random(sv, 100);
	if (dt_int(t)) /* a scalar argument is range checked for narrow types: keep it in range */
		set_i(sv, 0, rng_range(dt_unsigned(t) ? 0 : -100, 100));
	val s = get_v(sv, 0);
	for (int64_t i = 0; i < N; i++)
		set_v(want, i, binop_ref(op, t, s, get_v(x, i)));
	blk_arg sa = dt_float(t) ? F(s.f) : I(s.i);
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(SCALAR_SRC, "T", dts[t].name, "OP", op, NULL), "k", ARGS(P(dx), sa, P(dout), I(N)),
	                     NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, N), want, &x, 1);
	result(ok, "scalar parameter %s %s block", dts[t].name, op);
}

/* A block with a runtime scalar of another type: promoted as two blocks
 * (a runtime scalar is no literal). */
static const char *MIXED_SCALAR_SRC =
	"kernel k(x: *$T, s: $S, out: *$R, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let r: $R = load(x + offs, mask = m) $OP s;\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static void mixed_scalar_case(dt t, dt st, const char *op, dt tr, double sv)
{
	arr x = arr_new(t, N), want = arr_new(tr, N);
	fill_random(x, 100);
	val s = {(int64_t)sv, dt_float(st) ? round_to(st, sv) : sv}; /* the parameter holds sv in its type */
	for (int64_t i = 0; i < N; i++)
		set_v(want, i, binop_ref(op, tr, cast_ref(get_v(x, i), t, tr), cast_ref(s, st, tr)));
	blk_devptr dx = dev_from(x), dout = dev_zeros(tr, N);
	bool ok = run_kernel(render(MIXED_SCALAR_SRC, "T", dts[t].name, "S", dts[st].name, "R", dts[tr].name, "OP", op, NULL),
	                     "k", ARGS(P(dx), dt_float(st) ? F(sv) : I((int64_t)sv), P(dout), I(N)), NO_CONSTS,
	                     GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, tr, N), want, &x, 1);
	result(ok, "promotion: %s block %s %s scalar parameter -> %s", dts[t].name, op, dts[st].name, dts[tr].name);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);

	/* + - * / % on every arithmetic type */
	const char *arith[] = {"+", "-", "*", "/", "%"};
	for (int o = 0; o < COUNT(arith); o++)
		for (int t = 0; t < COUNT(ARITH_TYPES); t++)
			binop_case(arith[o], ARITH_TYPES[t], ARITH_TYPES[t], arith_result(arith[o], ARITH_TYPES[t]), NULL, NULL);
	/* the 8-bit floats keep their kind (saturating) */
	for (int o = 0; o < 3; o++) {
		binop_case(arith[o], DT_E4M3, DT_E4M3, DT_E4M3, NULL, NULL);
		binop_case(arith[o], DT_E5M2, DT_E5M2, DT_E5M2, NULL, NULL);
	}

	/* bitwise and shifts */
	const char *bits[] = {"&", "|", "^", "<<", ">>"};
	for (int o = 0; o < COUNT(bits); o++)
		for (int t = 0; t < COUNT(INT_TYPES); t++)
			binop_case(bits[o], INT_TYPES[t], INT_TYPES[t], INT_TYPES[t], NULL, NULL);
	for (int o = 0; o < 3; o++)
		binop_case(bits[o], DT_I1, DT_I1, DT_I1, NULL, NULL);

	/* comparisons: i1 results, stored as i1 (one byte each) */
	const char *cmps[] = {"==", "!=", "<", "<=", ">", ">="};
	for (int o = 0; o < COUNT(cmps); o++) {
		for (int t = 0; t < COUNT(ARITH_TYPES); t++)
			binop_case(cmps[o], ARITH_TYPES[t], ARITH_TYPES[t], DT_I1, NULL, NULL);
		binop_case(cmps[o], DT_E4M3, DT_E4M3, DT_I1, NULL, NULL);
		binop_case(cmps[o], DT_E5M2, DT_E5M2, DT_I1, NULL, NULL);
	}
	binop_case("==", DT_I1, DT_I1, DT_I1, NULL, NULL);
	binop_case("!=", DT_I1, DT_I1, DT_I1, NULL, NULL);

	/* unary */
	const dt neg_types[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_F16, DT_BF16, DT_F32, DT_F64};
	for (int t = 0; t < COUNT(neg_types); t++)
		unary_case("-", neg_types[t]);
	for (int t = 0; t < COUNT(INT_TYPES); t++)
		unary_case("~", INT_TYPES[t]);
	unary_case("!", DT_I1);

	/* mixed types: the result type per language.md, checked by `let r: R` */
	struct {
		dt a, b, r, tc; /* operands, result, and the type the op computes in */
		const char *op;
	} mixed[] = {
		{DT_I32, DT_F16, DT_F16, DT_F16, "+"},     {DT_I64, DT_F16, DT_F16, DT_F16, "*"},
		{DT_U8, DT_BF16, DT_BF16, DT_BF16, "+"},   {DT_F16, DT_BF16, DT_F32, DT_F32, "+"},
		{DT_BF16, DT_F16, DT_F32, DT_F32, "*"},    {DT_F16, DT_F32, DT_F32, DT_F32, "-"},
		{DT_BF16, DT_F32, DT_F32, DT_F32, "+"},    {DT_F32, DT_F64, DT_F64, DT_F64, "*"},
		{DT_F16, DT_F64, DT_F64, DT_F64, "+"},     {DT_I8, DT_I16, DT_I16, DT_I16, "+"},
		{DT_I16, DT_I64, DT_I64, DT_I64, "*"},     {DT_U8, DT_U32, DT_U32, DT_U32, "+"},
		{DT_U8, DT_I8, DT_U8, DT_U8, "+"},         {DT_U8, DT_I16, DT_I16, DT_I16, "-"},
		{DT_U32, DT_I64, DT_I64, DT_I64, "*"},     {DT_U64, DT_I32, DT_U64, DT_U64, "+"},
		{DT_I32, DT_U32, DT_U32, DT_U32, "*"},     {DT_I1, DT_I8, DT_I8, DT_I8, "+"},
		{DT_I1, DT_U16, DT_U16, DT_U16, "*"},      {DT_E4M3, DT_E5M2, DT_F16, DT_F16, "+"},
		{DT_E4M3, DT_F32, DT_F32, DT_F32, "*"},    {DT_I16, DT_E5M2, DT_E5M2, DT_E5M2, "+"},
		{DT_F16, DT_F16, DT_F32, DT_F32, "/"},     {DT_F16, DT_BF16, DT_F32, DT_F32, "/"},
		{DT_I32, DT_F32, DT_F32, DT_F32, "/"},     {DT_I8, DT_I32, DT_I32, DT_I32, "/"},
		{DT_U16, DT_U64, DT_U64, DT_U64, "%"},     {DT_I32, DT_F16, DT_F32, DT_F32, "/"},
		{DT_BF16, DT_BF16, DT_F32, DT_F32, "%"},   {DT_I16, DT_I32, DT_I1, DT_I32, "<"},
		{DT_U32, DT_I64, DT_I1, DT_I64, ">="},     {DT_I32, DT_U32, DT_I1, DT_U32, "<"},
		{DT_F16, DT_I32, DT_I1, DT_F16, "=="},     {DT_BF16, DT_F16, DT_I1, DT_F32, "<"},
	};
	for (int i = 0; i < COUNT(mixed); i++) {
		dt a = mixed[i].a, b = mixed[i].b, r = mixed[i].r, tc = mixed[i].tc;
		const char *op = mixed[i].op;
		arr x = arr_new(a, N), y = arr_new(b, N), want = arr_new(r, N);
		/* values every operand type can hold well: small integers, or floats in [-100, 100] */
		for (int64_t k = 0; k < N; k++) {
			double xv = dt_float(a) ? rng_uniform(-100, 100) : (double)rng_range(dt_unsigned(a) ? 0 : -100, a == DT_I1 ? 1 : 100);
			double yv = dt_float(b) ? rng_uniform(-100, 100) : (double)rng_range(dt_unsigned(b) ? 1 : -100, b == DT_I1 ? 1 : 100);
			if (yv == 0 && dt_int(b))
				yv = 3;
			set_f(x, k, xv);
			set_f(y, k, yv);
		}
		/* wide operands use their whole range where the op wraps */
		if (dt_int(a) && dt_int(b) && strcmp(op, "/") && strcmp(op, "%") && a != DT_I1 && b != DT_I1) {
			fill_random(x, 0);
			fill_random(y, 0);
		}
		double *wf = calloc(N, sizeof(double));
		for (int64_t k = 0; k < N; k++) {
			val va = cast_ref(get_v(x, k), a, tc), vb = cast_ref(get_v(y, k), b, tc);
			val rv = binop_ref(op, tc, va, vb);
			set_v(want, k, rv);
			wf[k] = rv.f;
		}
		char expr[32];
		snprintf(expr, sizeof expr, "a %s b", op);
		const char *src = render(BINOP_SRC, "A", dts[a].name, "B", dts[b].name, "R", dts[r].name, "EXPR", expr,
		                         "ONEA", one_of(a), "ONEB", one_of(b), NULL);
		blk_devptr dx = dev_from(x), dy = dev_from(y), dout = dev_zeros(r, N);
		bool ok = run_kernel(src, "k", ARGS(P(dx), P(dy), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
		if (ok) {
			arr got = dev_read(dout, r, N), ins[2] = {x, y};
			ok = r == DT_F32 && !strcmp(op, "/") ? check_close(got, wf, ins, 2, 0, 0, 2) : check_exact(got, want, ins, 2);
		}
		free(wf);
		result(ok, "promotion: %s %s %s -> %s", dts[a].name, op, dts[b].name, dts[r].name);
	}

	/* literals keep the block's type when their kind is at or below it */
	literal_case(DT_F16, "*", "2.0", 2.0, DT_F32, DT_F16, DT_F16);
	literal_case(DT_BF16, "+", "0.5", 0.5, DT_F32, DT_BF16, DT_BF16);
	literal_case(DT_F16, "+", "3", 3, DT_I32, DT_F16, DT_F16);
	literal_case(DT_I8, "+", "1", 1, DT_I32, DT_I8, DT_I8);
	literal_case(DT_I16, "*", "300", 300, DT_I32, DT_I16, DT_I16);
	literal_case(DT_I64, "-", "5", 5, DT_I32, DT_I64, DT_I64);
	/* an integer literal takes an unsigned block's type too, as in Triton
	 * (it must fit: tests/lang/err_sema_literal_unsigned_range) */
	literal_case(DT_U8, "&", "0xF", 15, DT_I32, DT_U8, DT_U8);
	literal_case(DT_U16, "+", "1", 1, DT_I32, DT_U16, DT_U16);
	{
		static const char *const uops[] = {"+", "-", "*", "/", "%", "&", "|", "^", ">>", "<<", "<", ">="};
		const dt uts[] = {DT_U8, DT_U16, DT_U32, DT_U64};
		for (int t = 0; t < 4; t++)
			for (int o = 0; o < (int)(sizeof uops / sizeof *uops); o++) {
				bool cmp = uops[o][0] == '<' && uops[o][1] != '<';
				cmp |= uops[o][0] == '>' && uops[o][1] != '>';
				bool shift = !cmp && (uops[o][0] == '<' || uops[o][0] == '>');
				dt r = cmp ? DT_I1 : uts[t];
				literal_case(uts[t], uops[o], shift ? "3" : "5", shift ? 3 : 5, DT_I32, uts[t], r);
				if (!shift) /* the largest literal of the type: 255, 65535, u32's and u64's (literals of those types) */
					literal_case(uts[t], uops[o], t == 0 ? "255" : t == 1 ? "65535" : t == 2 ? "4294967295" : "0xFFFFFFFFFFFFF000",
					             t == 0 ? 255 : t == 1 ? 65535 : t == 2 ? 4294967295.0 : 0x1p64 - 4096,
					             t == 2 ? DT_U32 : t == 3 ? DT_U64 : DT_I32, uts[t], r);
			}
	}
	literal_case(DT_I32, "*", "0.5", 0.5, DT_F32, DT_F32, DT_F32);
	literal_case(DT_F16, "/", "2.0", 2.0, DT_F32, DT_F32, DT_F32);
	literal_case(DT_BF16, "/", "4.0", 4.0, DT_F32, DT_F32, DT_F32);
	literal_case(DT_F32, "*", "2", 2, DT_I32, DT_F32, DT_F32);
	literal_case(DT_F64, "+", "0.1", 0.1, DT_F64, DT_F64, DT_F64);
	literal_case(DT_I8, "<", "3", 3, DT_I32, DT_I8, DT_I1);
	literal_case(DT_F16, ">=", "0.5", 0.5, DT_F32, DT_F16, DT_I1);

	/* a runtime scalar broadcast against a block */
	scalar_case(DT_F32, "*");
	scalar_case(DT_F64, "-");
	scalar_case(DT_I32, "+");
	scalar_case(DT_I64, "*");
	scalar_case(DT_I16, "-");
	scalar_case(DT_U8, "+");
	scalar_case(DT_F16, "+");
	mixed_scalar_case(DT_F16, DT_F32, "*", DT_F32, 0.3);
	mixed_scalar_case(DT_BF16, DT_F64, "+", DT_F64, 1e-3);
	mixed_scalar_case(DT_I8, DT_I32, "+", DT_I32, 1000);
	mixed_scalar_case(DT_U16, DT_U64, "*", DT_U64, 123456789);
	mixed_scalar_case(DT_I32, DT_F16, "-", DT_F16, 0.5);
	mixed_scalar_case(DT_U8, DT_I16, "*", DT_I16, -3);
	return ops_finish();
}
