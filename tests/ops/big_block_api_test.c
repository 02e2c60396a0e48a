/* tests/ops: blocks past the registers of a thread (issue 32, item 2), as
 * programs write them, against C references: a program the interpreter runs
 * must run on the GPU too, where such a block lives in local memory (ptxas
 * spills it) and the compile says so in a warning naming the block.
 *   - one program transposing a 512 x 512 f32 tile on 4 warps (2,048
 *     registers a thread: its conversion's 1 MiB goes through shared memory
 *     in parts) and a 256 x 512 f64 one (2,048 too);
 *   - a one-hot count: 1024 values compared with 128 bins, an i32
 *     [1024, 128] block summed over the values;
 *   - a broadcast product f32 [128, 32, 32] summed over its middle axis
 *     (small integers: every sum exact, in any order);
 *   - rows sorted by a bitonic network written with reshape, permute,
 *     split and join, as Triton's standard library writes it, on 16 x 256
 *     and 8 x 512 i32 tiles.
 * On the GPU, the transposes' warning is checked in blk_context_warnings. */
#include "ops.h"

static bool gpu(void) { return blk_context_backend(ops_ctx) == BLK_BACKEND_GPU; }

/* The context's warnings name the kernel's block as kept in local memory
 * (the GPU only: the interpreter has no registers). */
static bool warned(const char *block)
{
	if (!gpu())
		return true;
	const char *w = blk_context_warnings(ops_ctx);
	char needle[160];
	snprintf(needle, sizeof needle, "this block (%s", block);
	const char *at = w ? strstr(w, needle) : NULL;
	if (!at || !strstr(at, "lives in local memory")) {
		why("no warning about %s in the context's warnings:\n%s\n", block, w ? w : "(none)");
		return false;
	}
	return true;
}

static const char *TRANSPOSE_SRC =
	"kernel k(x: *$T, y: *$T) {\n"
	"    let r = arange(0, $M);\n"
	"    let c = arange(0, $N);\n"
	"    let tile = load(x + r[:, None] * $N + c[None, :]);\n"
	"    store(y + c[:, None] * $M + r[None, :], trans(tile));\n"
	"}\n";

static void transpose_case(dt t, int M, int N)
{
	arr x = arr_new(t, (int64_t)M * N), want = arr_new(t, (int64_t)M * N);
	fill_random(x, 1000);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++)
			set_v(want, (int64_t)j * M + i, get_v(x, (int64_t)i * N + j));
	const char *src = render(TRANSPOSE_SRC, "T", dts[t].name, "M", num(M), "N", num(N), NULL);
	blk_devptr dx = dev_from(x), dy = dev_zeros(t, want.n);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dy)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	ok = ok && check_exact(dev_read(dy, t, want.n), want, &x, 1);
	char block[64];
	snprintf(block, sizeof block, "%s[%d, %d]", dts[t].name, M, N);
	ok = ok && warned(block);
	result(ok, "one program transposing a %s %d x %d tile (%lld registers a thread on 4 warps)", dts[t].name, M, N,
	       (long long)M * N * dts[t].bytes / 4 / 128);
}

static const char *ONEHOT_SRC =
	"kernel k(x: *i32, out: *i32) {\n"
	"    let v = load(x + arange(0, 1024));\n"
	"    let bins = arange(0, 128);\n"
	"    let hit = v[:, None] == bins[None, :];\n"
	"    store(out + bins, sum(where(hit, 1, 0), 0));\n"
	"}\n";

static void onehot_case(void)
{
	arr x = arr_new(DT_I32, 1024), want = arr_new(DT_I32, 128);
	for (int i = 0; i < 1024; i++)
		set_i(x, i, rng_range(-8, 135)); /* some outside the bins */
	for (int i = 0; i < 1024; i++) {
		int64_t v = get_i(x, i);
		if (v >= 0 && v < 128)
			set_i(want, v, get_i(want, v) + 1);
	}
	blk_devptr dx = dev_from(x), dy = dev_zeros(DT_I32, 128);
	bool ok = run_kernel(ONEHOT_SRC, NULL, ARGS(P(dx), P(dy)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	ok = ok && check_exact(dev_read(dy, DT_I32, 128), want, &x, 1);
	result(ok, "one-hot count of 1024 values into 128 bins (an i32[1024, 128] block)");
}

static const char *BPROD_SRC =
	"kernel k(a: *f32, b: *f32, c: *f32) {\n"
	"    let i = arange(0, 128);\n"
	"    let j = arange(0, 32);\n"
	"    let x = load(a + i[:, None] * 32 + j[None, :]);\n"
	"    let y = load(b + j[:, None] * 32 + j[None, :]);\n"
	"    let p = x[:, :, None] * y[None, :, :];\n"
	"    store(c + i[:, None] * 32 + j[None, :], sum(p, 1));\n"
	"}\n";

static void bprod_case(void)
{
	arr a = arr_new(DT_F32, 128 * 32), b = arr_new(DT_F32, 32 * 32), want = arr_new(DT_F32, 128 * 32);
	for (int i = 0; i < 128 * 32; i++)
		set_f(a, i, (double)rng_range(-9, 9));
	for (int i = 0; i < 32 * 32; i++)
		set_f(b, i, (double)rng_range(-9, 9));
	for (int i = 0; i < 128; i++)
		for (int k = 0; k < 32; k++) {
			double s = 0;
			for (int j = 0; j < 32; j++)
				s += get_f(a, i * 32 + j) * get_f(b, j * 32 + k);
			set_f(want, i * 32 + k, s);
		}
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_zeros(DT_F32, 128 * 32);
	bool ok = run_kernel(BPROD_SRC, NULL, ARGS(P(da), P(db), P(dc)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	arr ins[2] = {a, b};
	ok = ok && check_exact(dev_read(dc, DT_F32, 128 * 32), want, ins, 2);
	result(ok, "broadcast product f32[128, 32, 32] summed over axis 1 (small integers: exact)");
}

/* A bitonic sort of each row of an R x C tile, ascending, by compare and
 * swap steps on pairs S apart: the tile reshaped to (R, C / 2S, 2, S), the
 * pair axis moved last, split, min and max joined back. */
static const char *BITONIC_SRC =
	"fn cswap(x, s: const i32, up) {\n"
	"    let y = permute(reshape(x, ($R, $C / (2 * s), 2, s)), (0, 1, 3, 2));\n"
	"    let u = permute(reshape(up, ($R, $C / (2 * s), 2, s)), (0, 1, 3, 2));\n"
	"    let (a, b) = split(y);\n"
	"    let (ua, ub) = split(u);\n"
	"    let lo = minimum(a, b);\n"
	"    let hi = maximum(a, b);\n"
	"    let z = join(where(ua, lo, hi), where(ua, hi, lo));\n"
	"    return reshape(permute(z, (0, 1, 3, 2)), ($R, $C));\n"
	"}\n"
	"kernel k(x: *i32, y: *i32) {\n"
	"    let r = arange(0, $R);\n"
	"    let c = arange(0, $C);\n"
	"    var v = load(x + r[:, None] * $C + c[None, :]);\n"
	"    for k in static_range(1, $LOG + 1) {\n"
	"        let size = 1 << k;\n"
	"        let up = broadcast_to((((c / size) % 2) == 0)[None, :], ($R, $C));\n"
	"        for j in static_range(0, k) {\n"
	"            v = cswap(v, size >> (j + 1), up);\n"
	"        }\n"
	"    }\n"
	"    store(y + r[:, None] * $C + c[None, :], v);\n"
	"}\n";

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

static void bitonic_case(int R, int C)
{
	int log = 0;
	while ((1 << log) < C)
		log++;
	int64_t n = (int64_t)R * C;
	arr x = arr_new(DT_I32, n), want = arr_new(DT_I32, n);
	fill_random(x, 1000);
	memcpy(want.p, x.p, (size_t)n * 4);
	for (int i = 0; i < R; i++)
		qsort((int32_t *)want.p + (int64_t)i * C, (size_t)C, 4, cmp_i32);
	const char *src = render(BITONIC_SRC, "R", num(R), "C", num(C), "LOG", num(log), NULL);
	blk_devptr dx = dev_from(x), dy = dev_zeros(DT_I32, n);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dy)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	ok = ok && check_exact(dev_read(dy, DT_I32, n), want, &x, 1);
	result(ok, "bitonic sort of the rows of an i32 %d x %d tile by reshape, permute, split and join", R, C);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	transpose_case(DT_F32, 512, 512);
	transpose_case(DT_F64, 256, 512);
	onehot_case();
	bprod_case();
	bitonic_case(16, 256);
	bitonic_case(8, 512);
	return ops_finish();
}
