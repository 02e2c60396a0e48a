/* tests/ops: where, broadcasting, and the shape builtins, as .tile kernels
 * through blk.h: where (every type, literals, promotion), x[:, None] op
 * y[None, :], reshape, trans and permute, cat, join, split, expand_dims,
 * broadcast_to, full, zeros, zeros_like. All exact: these move values. */
#include "ops.h"

static const dt NUMS[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32,
                          DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};

/* Runs src (kernel k(x: *A, y: *B, out: *R) on one program) on x and y and
 * compares out with want. */
static void run_case(const char *src, arr x, arr y, arr want, const char *name)
{
	blk_devptr dx = dev_from(x), dy = dev_from(y), dout = dev_zeros(want.t, want.n);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dy), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, want.t, want.n), want, NULL, 0);
	result(ok, "%s", name);
}

static arr random_arr(dt t, int n)
{
	arr a = arr_new(t, n);
	fill_random(a, 1000);
	return a;
}

/* ---- where ----------------------------------------------------------------------- */

static const char *WHERE_SRC = "kernel k(x: *$T, y: *$U, out: *$R, c: *i1) {\n"
                               "    let i = arange(0, 256);\n"
                               "    let r: $R = where(load(c + i), $A, $B);\n"
                               "    store(out + i, r);\n"
                               "}\n";

static void where_case(dt t, dt u, dt r, const char *a_expr, const char *b_expr, val b_lit, const char *name)
{
	arr x = random_arr(t, 256), y = random_arr(u, 256), c = arr_new(DT_I1, 256), want = arr_new(r, 256);
	for (int i = 0; i < 256; i++)
		set_i(c, i, (int64_t)(rng_u64() & 1));
	if (dt_float(t)) {
		set_f(x, 0, NAN);
		set_f(x, 1, -0.0);
	}
	for (int i = 0; i < 256; i++) {
		val b = strcmp(b_expr, "load(y + i)") ? b_lit : cast_ref(get_v(y, i), u, r);
		set_v(want, i, get_i(c, i) ? cast_ref(get_v(x, i), t, r) : b);
	}
	blk_devptr dx = dev_from(x), dy = dev_from(y), dc = dev_from(c), dout = dev_zeros(r, 256);
	const char *src = render(WHERE_SRC, "T", dts[t].name, "U", dts[u].name, "R", dts[r].name, "A", a_expr, "B", b_expr,
	                         NULL);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dy), P(dout), P(dc)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	arr ins[3] = {c, x, y};
	if (ok)
		ok = check_exact(dev_read(dout, r, 256), want, ins, 3);
	result(ok, "%s", name);
}

/* ---- broadcasting ---------------------------------------------------------------------- */

static const char *OUTER_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T) {\n"
	"    let a = load(x + arange(0, 16));\n"
	"    let b = load(y + arange(0, 32));\n"
	"    let r: $T = a[:, None] $OP b[None, :];\n"
	"    store(out + arange(0, 16)[:, None] * 32 + arange(0, 32)[None, :], r);\n"
	"}\n";

static void outer_case(dt t, const char *op)
{
	arr x = random_arr(t, 16), y = random_arr(t, 32), want = arr_new(t, 512);
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 32; j++)
			set_v(want, i * 32 + j, binop_ref(op, t, get_v(x, i), get_v(y, j)));
	char name[64];
	snprintf(name, sizeof name, "x[:, None] %s y[None, :] %s (16, 32)", op, dts[t].name);
	run_case(render(OUTER_SRC, "T", dts[t].name, "OP", op, NULL), x, y, want, name);
}

/* A (16, 1) block with a (32,) block: missing leading axes count as 1. */
static const char *OUTER2_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T) {\n"
	"    let a = expand_dims(load(x + arange(0, 16)), 1);\n"
	"    let b = load(y + arange(0, 32));\n"
	"    let r = a - b;\n"
	"    static_assert(r.shape[0] == 16 && r.shape[1] == 32, \"(16, 32)\");\n"
	"    store(out + arange(0, 16)[:, None] * 32 + arange(0, 32)[None, :], r);\n"
	"}\n";

static void outer2_case(dt t)
{
	arr x = random_arr(t, 16), y = random_arr(t, 32), want = arr_new(t, 512);
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 32; j++)
			set_v(want, i * 32 + j, binop_ref("-", t, get_v(x, i), get_v(y, j)));
	char name[64];
	snprintf(name, sizeof name, "(16, 1) - (32,) broadcast %s", dts[t].name);
	run_case(render(OUTER2_SRC, "T", dts[t].name, NULL), x, y, want, name);
}

/* ---- reshape, trans, permute --------------------------------------------------------- */

static const char *RESHAPE_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T) {\n"
	"    let v = load(x + arange(0, 64));\n"
	"    let a = reshape(v, $SHAPE);\n"
	"    let b = a + zeros($SHAPE, $T);\n" /* an op on the new shape */
	"    store(out + arange(0, 64), reshape(b, (64,)));\n"
	"    store(out + 64 + $OFFS, b);\n"
	"}\n";

static void reshape_case(dt t, int shape_kind)
{
	arr x = random_arr(t, 64), y = arr_new(t, 1), want = arr_new(t, 128);
	for (int i = 0; i < 64; i++) {
		set_v(want, i, get_v(x, i));
		set_v(want, 64 + i, get_v(x, i)); /* row-major both ways */
	}
	const char *shape = shape_kind == 0 ? "(8, 8)" : shape_kind == 1 ? "(4, 16)" : "(2, 4, 8)";
	const char *offs = shape_kind == 0   ? "arange(0, 8)[:, None] * 8 + arange(0, 8)[None, :]"
	                   : shape_kind == 1 ? "arange(0, 4)[:, None] * 16 + arange(0, 16)[None, :]"
	                                     : "arange(0, 2)[:, None, None] * 32 + arange(0, 4)[None, :, None] * 8 + "
	                                       "arange(0, 8)[None, None, :]";
	char name[64];
	snprintf(name, sizeof name, "reshape (64,) -> %s %s", shape, dts[t].name);
	run_case(render(RESHAPE_SRC, "T", dts[t].name, "SHAPE", shape, "OFFS", offs, NULL), x, y, want, name);
}

static const char *TRANS_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T) {\n"
	"    let v = load(x + arange(0, 16)[:, None] * 32 + arange(0, 32)[None, :]);\n"
	"    let t = $TRANS;\n"
	"    store(out + arange(0, 32)[:, None] * 16 + arange(0, 16)[None, :], t);\n"
	"}\n";

static void trans_case(dt t, const char *form)
{
	arr x = random_arr(t, 512), y = arr_new(t, 1), want = arr_new(t, 512);
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 32; j++)
			set_v(want, j * 16 + i, get_v(x, i * 32 + j));
	char name[80];
	snprintf(name, sizeof name, "%s (16, 32) %s", form, dts[t].name);
	run_case(render(TRANS_SRC, "T", dts[t].name, "TRANS", form, NULL), x, y, want, name);
}

static const char *PERMUTE_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T) {\n"
	"    let v = load(x + arange(0, 2)[:, None, None] * 32 + arange(0, 4)[None, :, None] * 8 +\n"
	"                 arange(0, 8)[None, None, :]);\n"
	"    let t = $FN(v, ($P0, $P1, $P2));\n"
	"    store(out + arange(0, $D0)[:, None, None] * ($D1 * $D2) + arange(0, $D1)[None, :, None] * $D2 +\n"
	"          arange(0, $D2)[None, None, :], t);\n"
	"}\n";

static void permute_case(dt t, const char *fn, int p0, int p1, int p2)
{
	int dims[3] = {2, 4, 8}, perm[3] = {p0, p1, p2};
	int od[3] = {dims[p0], dims[p1], dims[p2]};
	arr x = random_arr(t, 64), y = arr_new(t, 1), want = arr_new(t, 64);
	for (int a = 0; a < od[0]; a++)
		for (int b = 0; b < od[1]; b++)
			for (int c = 0; c < od[2]; c++) {
				int in[3];
				in[perm[0]] = a;
				in[perm[1]] = b;
				in[perm[2]] = c;
				set_v(want, (a * od[1] + b) * od[2] + c, get_v(x, (in[0] * 4 + in[1]) * 8 + in[2]));
			}
	char s[6][8];
	snprintf(s[0], 8, "%d", p0);
	snprintf(s[1], 8, "%d", p1);
	snprintf(s[2], 8, "%d", p2);
	snprintf(s[3], 8, "%d", od[0]);
	snprintf(s[4], 8, "%d", od[1]);
	snprintf(s[5], 8, "%d", od[2]);
	char name[80];
	snprintf(name, sizeof name, "%s (2, 4, 8) by (%d, %d, %d) %s", fn, p0, p1, p2, dts[t].name);
	run_case(render(PERMUTE_SRC, "T", dts[t].name, "FN", fn, "P0", s[0], "P1", s[1], "P2", s[2], "D0", s[3], "D1", s[4],
	                "D2", s[5], NULL),
	         x, y, want, name);
}

/* ---- cat, join, split ------------------------------------------------------------------ */

static const char *CAT2_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T) {\n"
	"    let offs = arange(0, 8)[:, None] * 16 + arange(0, 16)[None, :];\n"
	"    let c = cat(load(x + offs), load(y + offs), axis = $AXIS);\n"
	"    store(out + arange(0, $R)[:, None] * $C + arange(0, $C)[None, :], c);\n"
	"}\n";

static void cat2_case(dt t, int axis)
{
	arr x = random_arr(t, 128), y = random_arr(t, 128), want = arr_new(t, 256);
	int R = axis ? 8 : 16, C = axis ? 32 : 16;
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++) {
			int sr = axis ? r : r % 8, sc = axis ? c % 16 : c;
			bool second = axis ? c >= 16 : r >= 8;
			set_v(want, r * C + c, get_v(second ? y : x, sr * 16 + sc));
		}
	char ax[4], rs[8], cs[8], name[64];
	snprintf(ax, sizeof ax, "%d", axis);
	snprintf(rs, sizeof rs, "%d", R);
	snprintf(cs, sizeof cs, "%d", C);
	snprintf(name, sizeof name, "cat (8, 16) axis %d %s", axis, dts[t].name);
	run_case(render(CAT2_SRC, "T", dts[t].name, "AXIS", ax, "R", rs, "C", cs, NULL), x, y, want, name);
}

static const char *CAT1_SRC = "kernel k(x: *$T, y: *$T, out: *$T) {\n"
                              "    let c = cat(load(x + arange(0, 64)), load(y + arange(0, 64)));\n"
                              "    store(out + arange(0, 128), c);\n"
                              "}\n";

static void cat1_case(dt t)
{
	arr x = random_arr(t, 64), y = random_arr(t, 64), want = arr_new(t, 128);
	for (int i = 0; i < 128; i++)
		set_v(want, i, get_v(i < 64 ? x : y, i % 64));
	char name[64];
	snprintf(name, sizeof name, "cat (64,) %s", dts[t].name);
	run_case(render(CAT1_SRC, "T", dts[t].name, NULL), x, y, want, name);
}

/* join stacks along a new last axis; split takes it apart again. */
static const char *JOIN_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T) {\n"
	"    let a = load(x + arange(0, 64));\n"
	"    let b = load(y + arange(0, 64));\n"
	"    let j = join(a, b);\n"
	"    static_assert(j.shape[1] == 2, \"a last axis of 2\");\n"
	"    store(out + arange(0, 64)[:, None] * 2 + arange(0, 2)[None, :], j);\n"
	"    let (lo, hi) = split(join(b, a));\n"
	"    store(out + 128 + arange(0, 64), lo);\n"
	"    store(out + 192 + arange(0, 64), hi);\n"
	"}\n";

static void join_case(dt t)
{
	arr x = random_arr(t, 64), y = random_arr(t, 64), want = arr_new(t, 256);
	for (int i = 0; i < 64; i++) {
		set_v(want, 2 * i, get_v(x, i));
		set_v(want, 2 * i + 1, get_v(y, i));
		set_v(want, 128 + i, get_v(y, i));
		set_v(want, 192 + i, get_v(x, i));
	}
	char name[64];
	snprintf(name, sizeof name, "join and split (64,) %s", dts[t].name);
	run_case(render(JOIN_SRC, "T", dts[t].name, NULL), x, y, want, name);
}

/* split of an interleaved pair read from memory as (32, 2) */
static const char *SPLIT2_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T) {\n"
	"    let v = load(x + arange(0, 4)[:, None, None] * 16 + arange(0, 8)[None, :, None] * 2 +\n"
	"                 arange(0, 2)[None, None, :]);\n"
	"    let a, b = split(v);\n"
	"    store(out + arange(0, 4)[:, None] * 8 + arange(0, 8)[None, :], a - b);\n"
	"}\n";

static void split2_case(dt t)
{
	arr x = random_arr(t, 64), y = arr_new(t, 1), want = arr_new(t, 32);
	for (int i = 0; i < 32; i++)
		set_v(want, i, binop_ref("-", t, get_v(x, 2 * i), get_v(x, 2 * i + 1)));
	char name[64];
	snprintf(name, sizeof name, "split (4, 8, 2) %s", dts[t].name);
	run_case(render(SPLIT2_SRC, "T", dts[t].name, NULL), x, y, want, name);
}

/* ---- expand_dims, broadcast_to, full, zeros -------------------------------------------- */

static const char *EXPAND_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T) {\n"
	"    let v = load(x + arange(0, 16));\n"
	"    let e = expand_dims(v, $AXIS);\n"
	"    static_assert(e.shape[$CHECK] == 1, \"the new axis has size 1\");\n"
	"    let b = broadcast_to(e, $SHAPE);\n"
	"    store(out + $OFFS, b);\n"
	"}\n";

static void expand_case(dt t, int axis)
{
	arr x = random_arr(t, 16), y = arr_new(t, 1), want = arr_new(t, 128);
	/* axis 0: (1, 16) -> (8, 16); axis 1 or -1: (16, 1) -> (16, 8) */
	for (int i = 0; i < 128; i++)
		set_v(want, i, get_v(x, axis == 0 ? i % 16 : i / 8));
	char ax[4], name[64];
	snprintf(ax, sizeof ax, "%d", axis);
	snprintf(name, sizeof name, "expand_dims axis %d, broadcast_to %s", axis, dts[t].name);
	run_case(render(EXPAND_SRC, "T", dts[t].name, "AXIS", ax, "CHECK", axis == 0 ? "0" : "1", "SHAPE",
	                axis == 0 ? "(8, 16)" : "(16, 8)", "OFFS",
	                axis == 0 ? "arange(0, 8)[:, None] * 16 + arange(0, 16)[None, :]"
	                          : "arange(0, 16)[:, None] * 8 + arange(0, 8)[None, :]",
	                NULL),
	         x, y, want, name);
}

static const char *FULL_SRC = "kernel k(x: *$T, y: *$T, out: *$T, s: $T) {\n"
                              "    let a = full((16, 4), $V, $T);\n"
                              "    let z = zeros((64,), $T);\n"
                              "    let zl = zeros_like(load(x + arange(0, 32)));\n"
                              "    let b = broadcast_to(s, (32,));\n"
                              "    store(out + arange(0, 16)[:, None] * 4 + arange(0, 4)[None, :], a);\n"
                              "    store(out + 64 + arange(0, 64), z + 1);\n"
                              "    store(out + 128 + arange(0, 32), zl);\n"
                              "    store(out + 160 + arange(0, 32), b);\n"
                              "}\n";

static void full_case(dt t)
{
	arr x = random_arr(t, 32), y = arr_new(t, 1), want = arr_new(t, 192);
	const char *vtext = dt_float(t) ? "2.5" : "7";
	val v = {7, 2.5}, one = {1, 1.0}, zero = {0, 0.0}, s = {0, 0};
	if (dt_float(t))
		s.f = round_to(t, rng_uniform(-100, 100));
	else
		s.i = rng_range(0, 100);
	for (int i = 0; i < 192; i++)
		set_v(want, i, i < 64 ? v : i < 128 ? one : i < 160 ? zero : s);
	blk_devptr dx = dev_from(x), dy = dev_from(y), dout = dev_zeros(t, 192);
	bool ok = run_kernel(render(FULL_SRC, "T", dts[t].name, "V", vtext, NULL), NULL,
	                     ARGS(P(dx), P(dy), P(dout), dt_float(t) ? F(s.f) : I(s.i)), NO_CONSTS,
	                     GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, 192), want, NULL, 0);
	result(ok, "full, zeros, zeros_like, broadcast_to of a scalar %s", dts[t].name);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	val none = {0, 0};
	for (int t = 0; t < COUNT(NUMS); t++) {
		char name[64];
		snprintf(name, sizeof name, "where %s", dts[NUMS[t]].name);
		where_case(NUMS[t], NUMS[t], NUMS[t], "load(x + i)", "load(y + i)", none, name);
	}
	where_case(DT_I1, DT_I1, DT_I1, "load(x + i)", "load(y + i)", none, "where i1");
	where_case(DT_I32, DT_F16, DT_F16, "load(x + i)", "load(y + i)", none, "where i32, f16 -> f16");
	where_case(DT_I8, DT_I64, DT_I64, "load(x + i)", "load(y + i)", none, "where i8, i64 -> i64");
	where_case(DT_F16, DT_F32, DT_F32, "load(x + i)", "load(y + i)", none, "where f16, f32 -> f32");
	where_case(DT_F16, DT_F16, DT_F16, "load(x + i)", "0.0", none, "where f16, literal 0.0 -> f16");
	val m1 = {-1, 0};
	where_case(DT_I16, DT_I16, DT_I16, "load(x + i)", "-1", m1, "where i16, literal -1 -> i16");
	val big = {0, 1e30};
	where_case(DT_F64, DT_F64, DT_F64, "load(x + i)", "1e30", big, "where f64, literal 1e30 -> f64");

	const dt outer_types[] = {DT_F32, DT_I32, DT_F16, DT_U8, DT_I64, DT_BF16};
	for (int t = 0; t < COUNT(outer_types); t++) {
		outer_case(outer_types[t], "+");
		outer_case(outer_types[t], "*");
		outer2_case(outer_types[t]);
	}
	const dt shape_types[] = {DT_I8, DT_F16, DT_BF16, DT_F32, DT_F64, DT_U64};
	for (int t = 0; t < COUNT(shape_types); t++) {
		dt ty = shape_types[t];
		for (int k = 0; k < 3; k++)
			reshape_case(ty, k);
		trans_case(ty, "trans(v)");
		trans_case(ty, "trans(v, (1, 0))");
		cat2_case(ty, 0);
		cat2_case(ty, 1);
		cat1_case(ty);
		join_case(ty);
		split2_case(ty);
		expand_case(ty, 0);
		expand_case(ty, 1);
		expand_case(ty, -1);
		full_case(ty);
	}
	trans_case(DT_I1, "trans(v)");
	int perms[][3] = {{0, 2, 1}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}};
	for (int p = 0; p < 4; p++) {
		permute_case(DT_F32, "trans", perms[p][0], perms[p][1], perms[p][2]);
		permute_case(DT_I16, "permute", perms[p][0], perms[p][1], perms[p][2]);
	}
	return ops_finish();
}
