/* tests/ops: picking elements of blocks, on every element type: x[i] with a
 * constant or runtime i (a scalar from a 1-D block, a row or a column from
 * a 2-D one), constant slices x[a:b] and x[a:b:c] (negative steps too),
 * gather along either axis with indices of every integer type, flip, and
 * interleave. Inputs are loaded with their edges masked (the masked
 * elements read as 0); all exact: these move values. */
#include "ops.h"

static const dt ALL[] = {DT_I1,  DT_I8,  DT_I16, DT_I32, DT_I64,  DT_U8,   DT_U16,
                         DT_U32, DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64, DT_E4M3, DT_E5M2};

static arr random_arr(dt t, int n)
{
	arr a = arr_new(t, n);
	fill_random(a, 1000);
	return a;
}

/* x as the kernel sees it: elements at n and after masked to 0. */
static val masked(arr x, int i, int n)
{
	val z = {0, 0};
	return i < n ? get_v(x, i) : z;
}


/* ---- x[i] and slices ------------------------------------------------------------ */

static const char *INDEX_SRC =
	"kernel k(x: *$T, out: *$T, i: i32, n: i32) {\n"
	"    let offs = arange(0, 64);\n"
	"    let v = load(x + offs, mask = offs < n, other = 0);\n"
	"    let m = reshape(v, 8, 8);\n"
	"    store(out, v[i]);\n"
	"    store(out + 1, v[$C]);\n"
	"    store(out + 2, v[-$NEG]);\n"
	"    store(out + 3, m[i % 8, $R]);\n"
	"    store(out + 8 + arange(0, 8), m[i % 8]);\n"
	"    store(out + 16 + arange(0, 8), m[:, $R]);\n"
	"    store(out + 24 + arange(0, 16), v[$A:$A + 16]);\n"
	"    store(out + 40 + arange(0, 8), v[$S:$S + 8 * $ST:$ST]);\n"
	"    store(out + 48 + arange(0, 8), v[$B:$B - 8:-1]);\n"
	"    store(out + 56 + arange(0, 4)[:, None] * 2 + arange(0, 2)[None, :], m[$R2:$R2 + 4, 6:]);\n"
	"    store(out + 64 + arange(0, 64), v[::-1]);\n"
	"}\n";

static void index_case(dt t)
{
	arr x = random_arr(t, 64), want = arr_new(t, 128);
	int n = (int)rng_range(40, 64), i = (int)rng_range(0, 63), c = (int)rng_range(0, 63), neg = (int)rng_range(1, 64);
	int r = (int)rng_range(0, 7), a = (int)rng_range(0, 48), st = 1 << rng_range(1, 3), s = (int)rng_range(0, 64 - 7 * st - 1);
	int b = (int)rng_range(8, 63), r2 = (int)rng_range(0, 4);
	set_v(want, 0, masked(x, i, n));
	set_v(want, 1, masked(x, c, n));
	set_v(want, 2, masked(x, 64 - neg, n));
	set_v(want, 3, masked(x, (i % 8) * 8 + r, n));
	for (int j = 0; j < 8; j++) {
		set_v(want, 8 + j, masked(x, (i % 8) * 8 + j, n));
		set_v(want, 16 + j, masked(x, j * 8 + r, n));
		set_v(want, 40 + j, masked(x, s + j * st, n));
		set_v(want, 48 + j, masked(x, b - j, n));
	}
	for (int j = 0; j < 16; j++)
		set_v(want, 24 + j, masked(x, a + j, n));
	for (int p = 0; p < 4; p++)
		for (int q = 0; q < 2; q++)
			set_v(want, 56 + p * 2 + q, masked(x, (r2 + p) * 8 + 6 + q, n));
	for (int j = 0; j < 64; j++)
		set_v(want, 64 + j, masked(x, 63 - j, n));
	for (int j = 4; j < 8; j++) /* out[4..7] are not written */
		set_v(want, j, (val){0, 0});
	const char *src = render(INDEX_SRC, "T", dts[t].name, "C", num(c), "NEG", num(neg), "R", num(r), "A", num(a), "S",
	                         num(s), "ST", num(st), "B", num(b), "R2", num(r2), NULL);
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, 128);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dout), I(i), I(n)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, 128), want, &x, 1);
	result(ok, "x[i], x[c], x[-c], m[i, c], m[i], m[:, c], slices %s (i = %d, n = %d)", dts[t].name, i, n);
}

/* ---- gather ------------------------------------------------------------------------ */

static const char *GATHER_SRC =
	"kernel k(x: *$T, idx: *$I, out: *$T, n: i32) {\n"
	"    let r = arange(0, $XR)[:, None];\n"
	"    let c = arange(0, $XC)[None, :];\n"
	"    let v = load(x + r * $XC + c, mask = r * $XC + c < n, other = 0);\n"
	"    let i = load(idx + arange(0, $IR)[:, None] * $IC + arange(0, $IC)[None, :]);\n"
	"    let g = gather(v, i, $AXIS);\n"
	"    store(out + arange(0, $IR)[:, None] * $IC + arange(0, $IC)[None, :], g);\n"
	"}\n";

static void gather_case(dt t, dt it, int axis)
{
	int XR = 16, XC = 8, IR = 4, IC = 8; /* axis 0: (16, 8) at (4, 8) */
	if (axis == 1)
		XR = 8, XC = 16, IR = 8, IC = 32; /* axis 1: (8, 16) at (8, 32) */
	int len = axis == 0 ? XR : XC, n = (int)rng_range(XR * XC / 2, XR * XC);
	arr x = random_arr(t, XR * XC), idx = arr_new(it, IR * IC), want = arr_new(t, IR * IC);
	for (int p = 0; p < IR; p++)
		for (int q = 0; q < IC; q++) {
			int k = (int)rng_range(0, len - 1);
			set_i(idx, p * IC + q, k);
			int src = axis == 0 ? k * XC + q : p * XC + k;
			set_v(want, p * IC + q, masked(x, src, n));
		}
	const char *src = render(GATHER_SRC, "T", dts[t].name, "I", dts[it].name, "XR", num(XR), "XC", num(XC), "IR",
	                         num(IR), "IC", num(IC), "AXIS", num(axis), NULL);
	blk_devptr dx = dev_from(x), di = dev_from(idx), dout = dev_zeros(t, IR * IC);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(di), P(dout), I(n)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	arr ins[2] = {x, idx};
	if (ok)
		ok = check_exact(dev_read(dout, t, IR * IC), want, ins, 2);
	result(ok, "gather %s at %s indices, axis %d", dts[t].name, dts[it].name, axis);
}

/* ---- flip, interleave ------------------------------------------------------------- */

static const char *FLIP_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T, n: i32) {\n"
	"    let offs = arange(0, 8)[:, None] * 16 + arange(0, 16)[None, :];\n"
	"    let v = load(x + offs, mask = offs < n, other = 0);\n"
	"    let w = load(y + offs, mask = offs < n, other = 0);\n"
	"    store(out + offs, flip(v));\n"
	"    store(out + 128 + offs, flip(v, 0));\n"
	"    store(out + 256 + offs, v.flip(dim = -1));\n"
	"    store(out + 384 + arange(0, 8)[:, None] * 32 + arange(0, 32)[None, :], interleave(v, w));\n"
	"    store(out + 640 + arange(0, 32), interleave(v[1, 0:16], w[2]));\n"
	"}\n";

static void flip_case(dt t)
{
	arr x = random_arr(t, 128), y = random_arr(t, 128), want = arr_new(t, 672);
	int n = (int)rng_range(64, 128);
	for (int r = 0; r < 8; r++)
		for (int c = 0; c < 16; c++) {
			set_v(want, r * 16 + c, masked(x, r * 16 + 15 - c, n));
			set_v(want, 128 + r * 16 + c, masked(x, (7 - r) * 16 + c, n));
			set_v(want, 256 + r * 16 + c, masked(x, r * 16 + 15 - c, n));
			set_v(want, 384 + r * 32 + 2 * c, masked(x, r * 16 + c, n));
			set_v(want, 384 + r * 32 + 2 * c + 1, masked(y, r * 16 + c, n));
		}
	for (int c = 0; c < 16; c++) {
		set_v(want, 640 + 2 * c, masked(x, 16 + c, n));
		set_v(want, 640 + 2 * c + 1, masked(y, 32 + c, n));
	}
	blk_devptr dx = dev_from(x), dy = dev_from(y), dout = dev_zeros(t, 672);
	const char *src = render(FLIP_SRC, "T", dts[t].name, NULL);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dy), P(dout), I(n)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	arr ins[2] = {x, y};
	if (ok)
		ok = check_exact(dev_read(dout, t, 672), want, ins, 2);
	result(ok, "flip (8, 16) along 1, 0, -1; interleave %s (n = %d)", dts[t].name, n);
}

/* A runtime index outside the block: the interpreter reports it (the GPU
 * leaves it undefined, so this case runs on the interpreter only). */
static void out_of_range_case(void)
{
	if (blk_context_backend(ops_ctx) == BLK_BACKEND_GPU)
		return;
	const char *src = "kernel k(x: *f32, out: *f32, i: i32) {\n"
	                  "    let v = load(x + arange(0, 16));\n"
	                  "    store(out, v[i]);\n"
	                  "}\n";
	arr x = random_arr(DT_F32, 16);
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_F32, 1);
	int i = (int)rng_range(16, 1000);
	blk_status st = run_kernel(src, NULL, ARGS(P(dx), P(dout), I(i)), NO_CONSTS, GRID(1, 1, 1));
	bool ok = st != BLK_SUCCESS && strstr(ops_err, "index out of range") && strstr(ops_err, "outside [0, 16)");
	if (!ok)
		why("status %d, message: %s\n", (int)st, ops_err);
	ops_why_len = ok ? 0 : ops_why_len;
	result(ok, "v[%d] of a block of 16 is an error on the interpreter", i);
}

/* The variadic shape spellings beside the tuple forms. */
static const char *VARIADIC_SRC =
	"kernel k(x: *$T, out: *$T) {\n"
	"    let v = load(x + arange(0, 32));\n"
	"    let m = reshape(v, 4, 8);\n"
	"    store(out + arange(0, 8)[:, None] * 4 + arange(0, 4)[None, :], permute(m, 1, 0));\n"
	"    let b = broadcast_to(v[None, :], 4, 32) + zeros(4, 32, $T);\n"
	"    store(out + 32 + arange(0, 4)[:, None] * 32 + arange(0, 32)[None, :], b);\n"
	"    let z = zeros(2, 2, dtype = $T) + broadcast_to(m[1:3, 0:2], (2, 2));\n"
	"    store(out + 160 + arange(0, 2)[:, None] * 2 + arange(0, 2)[None, :], z);\n"
	"}\n";

static void variadic_case(dt t)
{
	arr x = random_arr(t, 32), want = arr_new(t, 164);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 4; j++)
			set_v(want, i * 4 + j, get_v(x, j * 8 + i));
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 32; j++)
			set_v(want, 32 + i * 32 + j, binop_ref("+", t, get_v(x, j), (val){0, 0}));
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			set_v(want, 160 + i * 2 + j, binop_ref("+", t, (val){0, 0}, get_v(x, (1 + i) * 8 + j)));
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, 164);
	bool ok = run_kernel(render(VARIADIC_SRC, "T", dts[t].name, NULL), NULL, ARGS(P(dx), P(dout)), NO_CONSTS,
	                     GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, 164), want, &x, 1);
	result(ok, "reshape(x, 4, 8), permute(m, 1, 0), broadcast_to(x, 4, 32), zeros(4, 32, T) %s", dts[t].name);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	for (int t = 0; t < COUNT(ALL); t++)
		index_case(ALL[t]);
	const dt idx_types[] = {DT_I32, DT_I64, DT_U8, DT_I16, DT_U32};
	for (int t = 0; t < COUNT(ALL); t++) {
		gather_case(ALL[t], idx_types[t % COUNT(idx_types)], 0);
		gather_case(ALL[t], idx_types[(t + 2) % COUNT(idx_types)], 1);
	}
	for (int t = 0; t < COUNT(ALL); t++)
		flip_case(ALL[t]);
	const dt var_types[] = {DT_I8, DT_U16, DT_I32, DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};
	for (int t = 0; t < COUNT(var_types); t++)
		variadic_case(var_types[t]);
	out_of_range_case();
	return ops_finish();
}
