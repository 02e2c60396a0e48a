/* tests/ops: constant folding against the same operations at run time, as
 * .tile kernels through blk.h. Each case computes `A OP B` (or A.to(T))
 * where A and B are const parameters, which the compiler folds, and the
 * same with the values loaded from memory, which it cannot; both must equal
 * the reference of ops.h (integers wrap, / and % truncate, floats round
 * once to their type, conversions as cast_ref). Values at the edges of each
 * type and exact rounding ties are picked on purpose. */
#include "ops.h"

static const dt ARITH[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32,
                           DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};

enum { NV = 12 };

/* Operand pairs for type t: edges and random values. */
static void pick(dt t, const char *op, val *a, val *b)
{
	if (dt_float(t)) {
		double sp[] = {1.5, -0.0, 65504.0, 3.0e38, 1e-7, 0.1, 2049.0, -7.25};
		a->f = round_to(t, rng_u64() & 1 ? sp[rng_range(0, COUNT(sp) - 1)] : rng_uniform(-100, 100));
		b->f = round_to(t, rng_u64() & 1 ? sp[rng_range(0, COUNT(sp) - 1)] : rng_uniform(-100, 100));
		if (isinf(a->f))
			a->f = 2;
		if (isinf(b->f))
			b->f = 3;
		if (!strcmp(op, "%") && b->f == 0)
			b->f = 1;
		return;
	}
	int bits = dts[t].bits;
	int64_t mn = dt_signed(t) ? (bits == 64 ? INT64_MIN : -(int64_t)(1ull << (bits - 1))) : 0;
	int64_t mx = dt_signed(t) ? (bits == 64 ? INT64_MAX : (int64_t)(1ull << (bits - 1)) - 1)
	                          : (bits == 64 ? -1 : (int64_t)((1ull << bits) - 1));
	int64_t sp[] = {mn, mx, -1, 1, 2, mn + 1, 3, -7};
	a->i = wrap_int(t, rng_u64() & 1 ? (uint64_t)sp[rng_range(0, 7)] : rng_u64());
	b->i = wrap_int(t, rng_u64() & 1 ? (uint64_t)sp[rng_range(0, 7)] : rng_u64());
	if (t == DT_U64) { /* blk_const.i is an int64_t: u64 constants below 2^63 here (see u64_const_case) */
		a->i &= INT64_MAX;
		b->i &= INT64_MAX;
	}
	if (!strcmp(op, "<<") || !strcmp(op, ">>"))
		b->i = rng_range(0, bits - 1);
	if ((!strcmp(op, "/") || !strcmp(op, "%")) && b->i == 0)
		b->i = 3;
}

static blk_const const_of(const char *name, dt t, val v)
{
	blk_const c = {.name = name};
	if (dt_float(t)) {
		c.is_float = 1;
		c.f = v.f;
	} else {
		c.i = v.i;
	}
	return c;
}

/* NV pairs: out[2k] folded, out[2k + 1] from memory. */
static const char *BIN_SRC = "kernel k(xa: *$T, xb: *$T, out: *$R, K: const i32, A: const $T, B: const $T) {\n"
                             "    let f: $R = A $OP B;\n"
                             "    let r: $R = load(xa + K) $OP load(xb + K);\n"
                             "    store(out + 2 * K, f);\n"
                             "    store(out + 2 * K + 1, r);\n"
                             "}\n";

static void fold_binop_case(const char *op, dt t)
{
	bool cmp = strchr("=!<>", op[0]) && strcmp(op, "<<") && strcmp(op, ">>");
	dt tr = cmp ? DT_I1 : ((t == DT_F16 || t == DT_BF16) && (op[0] == '/' || op[0] == '%')) ? DT_F32 : t;
	dt tc = cmp ? t : tr;
	arr xa = arr_new(t, NV), xb = arr_new(t, NV), want = arr_new(tr, 2 * NV);
	val av[NV], bv[NV];
	for (int k = 0; k < NV; k++) {
		pick(t, op, &av[k], &bv[k]);
		set_v(xa, k, av[k]);
		set_v(xb, k, bv[k]);
		val r = binop_ref(op, tc, cast_ref(av[k], t, tc), cast_ref(bv[k], t, tc));
		set_v(want, 2 * k, r);
		set_v(want, 2 * k + 1, r);
	}
	blk_devptr da = dev_from(xa), db = dev_from(xb), dout = dev_zeros(tr, 2 * NV);
	const char *src = render(BIN_SRC, "T", dts[t].name, "R", dts[tr].name, "OP", op, NULL);
	bool ok = true;
	for (int k = 0; ok && k < NV; k++) {
		blk_const c[3] = {CI("K", k), const_of("A", t, av[k]), const_of("B", t, bv[k])};
		ok = run_kernel(src, NULL, ARGS(P(da), P(db), P(dout)), c, 3, GRID(1, 1, 1)) == BLK_SUCCESS;
	}
	if (ok) {
		arr got = dev_read(dout, tr, 2 * NV);
		int bad = 0;
		for (int i = 0; i < 2 * NV; i++) {
			bool same = same_elem(got, i, want, i);
			/* f32 '/': folded exactly; a GPU's division may be 2 ulp off */
			if (!same && tr == DT_F32 && op[0] == '/' && (i & 1))
				same = fabs(get_f(got, i) - get_f(want, i)) <= 2 * ulp_of(DT_F32, get_f(want, i));
			if (!same && bad++ < 6)
				why("%s: %s %s %s = %s, want %s\n", i & 1 ? "run time" : "folded", show(xa, i / 2), op, show(xb, i / 2),
				    show(got, i), show(want, i));
		}
		ok = bad == 0;
	}
	result(ok, "folded and run-time %s %s %s (%d pairs)", dts[t].name, op, dts[t].name, NV);
}

/* Conversions of constants: A.to(U) folded, and at run time. */
static const char *CAST_SRC = "kernel k(xa: *$T, out: *$U, K: const i32, A: const $T) {\n"
                              "    store(out + 2 * K, A.to($U));\n"
                              "    store(out + 2 * K + 1, load(xa + K).to($U));\n"
                              "}\n";

static void fold_cast_case(dt t, dt u, const uint64_t *ints, const double *floats, int nv)
{
	arr xa = arr_new(t, nv), want = arr_new(u, 2 * nv);
	val av[16];
	for (int k = 0; k < nv; k++) {
		val v = {0, 0};
		if (dt_float(t))
			v.f = round_to(t, floats[k]);
		else
			v.i = wrap_int(t, ints[k]);
		av[k] = v;
		set_v(xa, k, v);
		set_v(want, 2 * k, cast_ref(v, t, u));
		set_v(want, 2 * k + 1, cast_ref(v, t, u));
	}
	blk_devptr da = dev_from(xa), dout = dev_zeros(u, 2 * nv);
	const char *src = render(CAST_SRC, "T", dts[t].name, "U", dts[u].name, NULL);
	bool ok = true;
	for (int k = 0; ok && k < nv; k++) {
		blk_const c[2] = {CI("K", k), const_of("A", t, av[k])};
		ok = run_kernel(src, NULL, ARGS(P(da), P(dout)), c, 2, GRID(1, 1, 1)) == BLK_SUCCESS;
	}
	if (ok) {
		arr got = dev_read(dout, u, 2 * nv);
		int bad = 0;
		for (int i = 0; i < 2 * nv; i++)
			if (!same_elem(got, i, want, i) && bad++ < 6)
				why("%s: %s.to(%s) = %s, want %s\n", i & 1 ? "run time" : "folded", show(xa, i / 2), dts[u].name,
				    show(got, i), show(want, i));
		ok = bad == 0;
	}
	result(ok, "folded and run-time %s.to(%s), %d values at rounding edges", dts[t].name, dts[u].name, nv);
}

/* Mixed constants: an integer const parameter with a float one computes in
 * the float type, the integer converted first (2051 is 2052 in f16). */
static const char *MIXED_SRC = "kernel k(xa: *$A, xb: *$B, out: *$R, A: const $A, B: const $B) {\n"
                               "    let f: $R = A $OP B;\n"
                               "    let r: $R = load(xa) $OP load(xb);\n"
                               "    store(out, f);\n"
                               "    store(out + 1, r);\n"
                               "}\n";

static void mixed_case(dt ta, double va, dt tb, double vb, const char *op, dt tr, dt tc)
{
	arr xa = arr_new(ta, 1), xb = arr_new(tb, 1), want = arr_new(tr, 2);
	val a = {(int64_t)va, round_to(dt_float(ta) ? ta : DT_F64, va)}, b = {(int64_t)vb, round_to(dt_float(tb) ? tb : DT_F64, vb)};
	set_v(xa, 0, a);
	set_v(xb, 0, b);
	val r = binop_ref(op, tc, cast_ref(a, ta, tc), cast_ref(b, tb, tc));
	set_v(want, 0, r);
	set_v(want, 1, r);
	blk_devptr da = dev_from(xa), db = dev_from(xb), dout = dev_zeros(tr, 2);
	blk_const c[2] = {const_of("A", ta, a), const_of("B", tb, b)};
	bool ok = run_kernel(render(MIXED_SRC, "A", dts[ta].name, "B", dts[tb].name, "R", dts[tr].name, "OP", op, NULL), NULL,
	                     ARGS(P(da), P(db), P(dout)), c, 2, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, tr, 2);
		for (int i = 0; i < 2; i++)
			if (!same_elem(got, i, want, i)) {
				why("%s: %s %s %s = %s, want %s\n", i ? "run time" : "folded", show(xa, 0), op, show(xb, 0), show(got, i),
				    show(want, i));
				ok = false;
			}
	}
	result(ok, "folded and run-time %s %s %s -> %s (%s %s %s)", dts[ta].name, op, dts[tb].name, dts[tr].name,
	       show(xa, 0), op, show(xb, 0));
}

/* A u64 const parameter of 2^63 or more: blk_const.i is an int64_t, so the
 * value comes as its two's complement bits. */
static const char *U64_SRC = "kernel k(out: *u64, A: const u64) {\n"
                             "    store(out, A);\n"
                             "    store(out + 1, A >> 60);\n"
                             "}\n";

static void u64_const_case(void)
{
	uint64_t v = 0xF000000000000001ull;
	arr want = arr_new(DT_U64, 2);
	set_bits(want, 0, v);
	set_bits(want, 1, v >> 60);
	blk_devptr dout = dev_zeros(DT_U64, 2);
	blk_const c = CI("A", (int64_t)v);
	bool ok = run_kernel(U64_SRC, NULL, ARGS(P(dout)), &c, 1, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_U64, 2), want, NULL, 0);
	result(ok, "a u64 const parameter of 0xF000000000000001 through blk_const (its bits in .i)");
}

/* Literals: written in the source, converted to the other operand's type. */
static const char *LIT_SRC = "kernel k(out: *$T) {\n"
                             "    let v: $T = $EXPR;\n"
                             "    store(out, v);\n"
                             "}\n";

static void literal_case(dt t, const char *expr, double want_f, int64_t want_i)
{
	arr want = arr_new(t, 1);
	val v = {want_i, round_to(t == DT_F64 || dt_int(t) ? DT_F64 : t, want_f)};
	set_v(want, 0, v);
	blk_devptr dout = dev_zeros(t, 1);
	bool ok = run_kernel(render(LIT_SRC, "T", dts[t].name, "EXPR", expr, NULL), NULL, ARGS(P(dout)), NO_CONSTS,
	                     GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, 1), want, NULL, 0);
	result(ok, "literal %s: %s", dts[t].name, expr);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	const char *ops[] = {"+", "-", "*", "/", "%", "<", "=="};
	for (int o = 0; o < COUNT(ops); o++)
		for (int t = 0; t < COUNT(ARITH); t++)
			fold_binop_case(ops[o], ARITH[t]);
	const char *bits[] = {"&", "|", "^", "<<", ">>"};
	const dt ints[] = {DT_I8, DT_I32, DT_I64, DT_U16, DT_U64};
	for (int o = 0; o < COUNT(bits); o++)
		for (int t = 0; t < COUNT(ints); t++)
			fold_binop_case(bits[o], ints[t]);

	/* integers to floats: exact ties of the destination and one past them
	 * (a 64-bit integer rounded to double first would round twice) */
	const uint64_t big[] = {(1ull << 62) + (1ull << 38) + 1, (1ull << 62) + (1ull << 38), (1ull << 53) + 1,
	                        (1ull << 24) + 1,                (1ull << 24) + 3,            0xFFFFFFFFFFFFFFFFull,
	                        (1ull << 63) + (1ull << 39) + 1, 2049,                        4097,
	                        (1ull << 40) + (1ull << 32) + 1};
	fold_cast_case(DT_I64, DT_F32, big, NULL, COUNT(big));
	fold_cast_case(DT_U64, DT_F32, big, NULL, COUNT(big));
	fold_cast_case(DT_I64, DT_BF16, big, NULL, COUNT(big));
	fold_cast_case(DT_U64, DT_F16, big, NULL, COUNT(big));
	fold_cast_case(DT_I32, DT_F16, big, NULL, COUNT(big));
	fold_cast_case(DT_U64, DT_F64, big, NULL, COUNT(big));
	fold_cast_case(DT_I64, DT_E4M3, big, NULL, COUNT(big));
	/* floats to narrower floats and to integers */
	const double fl[] = {1.0 + 0x1p-11, 1.0 + 0x1p-11 + 0x1p-30, 65520.0, 65519.0, -2.5,  3.99,
	                     -3.99,         1.00390625,             300.7,   1e-8,    448.0, 465.0};
	fold_cast_case(DT_F64, DT_F16, NULL, fl, COUNT(fl));
	fold_cast_case(DT_F64, DT_BF16, NULL, fl, COUNT(fl));
	fold_cast_case(DT_F32, DT_F16, NULL, fl, COUNT(fl));
	fold_cast_case(DT_F64, DT_E4M3, NULL, fl, COUNT(fl));
	fold_cast_case(DT_F64, DT_E5M2, NULL, fl, COUNT(fl));
	/* in range only: out of range is undefined, and a compile error when folded */
	const double to_int[] = {-2.5, 3.99, -3.99, 1.00390625, 127.9, -128.9, -0.9};
	const double to_uint[] = {255.9, 3.99, -0.9, 1.00390625, 0.5};
	fold_cast_case(DT_F64, DT_I8, NULL, to_int, COUNT(to_int));
	fold_cast_case(DT_F32, DT_U8, NULL, to_uint, COUNT(to_uint));
	fold_cast_case(DT_F16, DT_I16, NULL, to_int, COUNT(to_int));
	const uint64_t wrap[] = {300, 0xFFFFFFFF80000000ull, 65535, 0x1234567890ull};
	fold_cast_case(DT_I64, DT_I8, wrap, NULL, COUNT(wrap));
	fold_cast_case(DT_U64, DT_I16, wrap, NULL, COUNT(wrap));
	fold_cast_case(DT_I32, DT_U8, wrap, NULL, COUNT(wrap));
	fold_cast_case(DT_I64, DT_I1, wrap, NULL, COUNT(wrap));

	mixed_case(DT_I32, 2051, DT_F16, 3.0, "*", DT_F16, DT_F16);
	mixed_case(DT_I64, (double)((1ll << 40) + 1), DT_F32, 0.0, "+", DT_F32, DT_F32);
	mixed_case(DT_U16, 65535, DT_BF16, 1.0, "-", DT_BF16, DT_BF16);
	mixed_case(DT_I32, 16777217, DT_F32, 16777216.0, "==", DT_I1, DT_F32);
	mixed_case(DT_I8, -100, DT_I32, 1000, "+", DT_I32, DT_I32);
	u64_const_case();

	/* literals of many digits round once, straight to the type */
	literal_case(DT_F16, "1.00048828125000001", 1.00048828125000001, 0);
	literal_case(DT_F32, "16777217.0", 16777217.0, 0);
	literal_case(DT_F64, "0.1 + 0.2", 0.1 + 0.2, 0);
	literal_case(DT_F32, "0.1 + 0.2", 0.1 + 0.2, 0);
	literal_case(DT_BF16, "1.0078125 + 0.00390625", 1.01171875, 0);
	literal_case(DT_I64, "0x7FFF_FFFF_FFFF_FFFF", 0, INT64_MAX);
	literal_case(DT_I32, "-7 / 2", 0, -3);
	literal_case(DT_I32, "-7 % 2", 0, -1);
	literal_case(DT_I8, "100 + 27", 0, 127);
	literal_case(DT_F32, "1e38 * 10.0", INFINITY, 0);
	return ops_finish();
}
