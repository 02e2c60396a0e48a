/* tests/ops: matmuls whose K loop reads its tiles through tensor
 * descriptors (the loads sm_90a copies with TMA under BLK_TMA=1), plain,
 * persistent (a loop over tiles around the K loop, the grid a few
 * programs) and with a loop of 0 or 2 rounds inside the K loop's body
 * (the tiles ahead must still be copied once an iteration), f16, bf16, f32 (tf32), fp8 e4m3 and i8 inputs, over shapes that
 * are multiples of no tile (the descriptors' bounds read zeros past every
 * edge), K below the tile's K and K = 0, row strides longer than a row
 * (padded matrices) and of rows that are multiples of 16 or not (the JIT
 * specializes on both), 4 and 8 warps, 3, 4 and 6 stages. The reference sums
 * exact products in long double; the tolerance is as matmul_tiles_api_test's
 * (tf32: the inputs truncated as the tensor cores read them, then K 2^-24 S). */
#include "ops.h"

static const char *MM_SRC =
	"kernel mm(a: *$T, b: *$T, c: *$R, M: i32, N: i32, K: i32, sa: i32, sb: i32, sc: i32,\n"
	"          BM: const i32, BN: const i32, BK: const i32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    let ad = tensor_desc(a, (M, K), (sa, 1), (BM, BK));\n"
	"    let bd = tensor_desc(b, (K, N), (sb, 1), (BK, BN));\n"
	"    let cd = tensor_desc(c, (M, N), (sc, 1), (BM, BN));\n"
	"    let m0 = program_id(0) * BM;\n"
	"    let n0 = program_id(1) * BN;\n"
	"    var acc = zeros((BM, BN), $R);\n"
	"    for k in range(0, K, BK) {\n"
	"        acc = dot(ad.load((m0, k)), bd.load((k, n0)), acc);\n"
	"    }\n"
	"    cd.store((m0, n0), acc);\n"
	"}\n"
	/* a loop inside the K loop's body, before its dot (R rounds: 0 or 2) */
	"kernel nested(a: *$T, b: *$T, c: *$R, M: i32, N: i32, K: i32, sa: i32, sb: i32, sc: i32,\n"
	"              BM: const i32, BN: const i32, BK: const i32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    let ad = tensor_desc(a, (M, K), (sa, 1), (BM, BK));\n"
	"    let bd = tensor_desc(b, (K, N), (sb, 1), (BK, BN));\n"
	"    let cd = tensor_desc(c, (M, N), (sc, 1), (BM, BN));\n"
	"    let m0 = program_id(0) * BM;\n"
	"    let n0 = program_id(1) * BN;\n"
	"    let rounds = M % 3 == 0 ? 2 : 0;\n"
	"    var acc = zeros((BM, BN), $R);\n"
	"    var t = 0;\n"
	"    for k in range(0, K, BK) {\n"
	"        for j in range(0, rounds, 1) { t = t + 1; }\n"
	"        acc = dot(ad.load((m0, k)), bd.load((k, n0)), acc);\n"
	"    }\n"
	"    cd.store((m0, n0), t == 1000003 ? acc + acc : acc);\n"
	"}\n"
	"kernel persistent(a: *$T, b: *$T, c: *$R, M: i32, N: i32, K: i32, sa: i32, sb: i32, sc: i32,\n"
	"                  BM: const i32, BN: const i32, BK: const i32) grid(3) {\n"
	"    let ad = tensor_desc(a, (M, K), (sa, 1), (BM, BK));\n"
	"    let bd = tensor_desc(b, (K, N), (sb, 1), (BK, BN));\n"
	"    let cd = tensor_desc(c, (M, N), (sc, 1), (BM, BN));\n"
	"    let tn = cdiv(N, BN);\n"
	"    for t in range(program_id(0), cdiv(M, BM) * tn, num_programs(0)) {\n"
	"        var acc = zeros((BM, BN), $R);\n"
	"        for k in range(0, K, BK) {\n"
	"            acc = dot(ad.load(((t / tn) * BM, k)), bd.load((k, (t % tn) * BN)), acc);\n"
	"        }\n"
	"        cd.store(((t / tn) * BM, (t % tn) * BN), acc);\n"
	"    }\n"
	"}\n";

typedef struct tiles {
	int bm, bn, bk, warps, stages;
} tiles;

/* x as the tensor cores read an f32 for a tf32 dot: its low 13 fraction
 * bits cleared. */
static double tf32(double x)
{
	float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, 4);
	u &= 0xffffe000u;
	memcpy(&f, &u, 4);
	return f;
}

static void mm_case(const char *kernel, dt t, tiles g, int M, int N, int K, int pad)
{
	bool is_int = t == DT_I8;
	dt rt = is_int ? DT_I32 : DT_F32;
	int sa = K + pad, sb = N + pad, sc = N;
	arr a = arr_new(t, (int64_t)M * sa + 1), b = arr_new(t, (int64_t)(K ? K : 1) * sb + 1);
	fill_random(a, is_int ? 0 : t == DT_E4M3 ? 4 : 1);
	fill_random(b, is_int ? 0 : t == DT_E4M3 ? 4 : 1);
	double *want = calloc((size_t)M * N, sizeof(double)), *tol = calloc((size_t)M * N, sizeof(double));
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			long double s = 0, S = 0;
			for (int k = 0; k < K; k++) {
				double x = get_f(a, (int64_t)i * sa + k), y = get_f(b, (int64_t)k * sb + j);
				if (t == DT_F32)
					x = tf32(x), y = tf32(y);
				long double p = (long double)x * y;
				s += p;
				S += fabsl(p);
			}
			want[(size_t)i * N + j] = (double)s;
			tol[(size_t)i * N + j] = is_int ? 0 : (t == DT_E4M3 ? (K + 31) / 32 * 0x1p-10 : K * 0x1p-24) * (double)S + 1e-30;
		}
	const char *src = render(MM_SRC, "T", dts[t].name, "R", dts[rt].name, NULL);
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_zeros(rt, (int64_t)M * N);
	bool ok = run_kernel(src, kernel, ARGS(P(da), P(db), P(dc), I(M), I(N), I(K), I(sa), I(sb), I(sc)),
	                     CONSTS(CI("BM", g.bm), CI("BN", g.bn), CI("BK", g.bk), CI("num_warps", g.warps),
	                            CI("num_stages", g.stages)),
	                     GRID(0, 0, 0)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dc, rt, (int64_t)M * N);
		ok = check_close_each(got, want, tol);
	}
	free(want);
	free(tol);
	result(ok, "%s %s %d x %d x %d, rows padded by %d, tiles %d x %d x %d, %d warps, %d stages", kernel,
	       dts[t].name, M, N, K, pad, g.bm, g.bn, g.bk, g.warps, g.stages);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	const tiles configs[] = {{64, 64, 32, 4, 3}, {128, 128, 64, 8, 3}, {128, 64, 32, 4, 4}, {64, 128, 64, 4, 4},
	                         {128, 256, 64, 8, 3}, {128, 256, 64, 8, 4}, {128, 128, 64, 8, 6}};
	/* pads: 0 and 16 keep rows multiples of 16 elements where the sizes
	 * are (the JIT's TMA variant), 8 and 3 do not */
	const int shapes[][4] = {{256, 256, 128, 0}, {150, 130, 70, 16}, {64, 64, 8, 0}, {1, 1, 1, 3},
	                         {300, 20, 100, 8},  {128, 192, 0, 0},   {96, 80, 200, 16}};
	const dt types[] = {DT_F16, DT_BF16, DT_F32, DT_E4M3, DT_I8};
	for (int c = 0; c < COUNT(configs); c++)
		for (int s = 0; s < COUNT(shapes); s++) {
			/* 8-bit: a K step of 32 or more; f32: 32 at most (128-byte rows) */
			int t = (c + s) % 5;
			if (t == 2 && configs[c].bk > 32)
				t = 0;
			static const char *const kernels[] = {"mm", "persistent", "nested"};
			mm_case(kernels[(c + s) % 3], types[t], configs[c], shapes[s][0], shapes[s][1], shapes[s][2],
			        shapes[s][3]);
		}
	/* A whose rows are not 16-byte aligned goes to wgmma from registers:
	 * its next tile is loaded while the products of the last are in
	 * flight, over many K steps of the widest tile */
	const tiles wide = {128, 256, 64, 8, 3};
	mm_case("mm", DT_BF16, wide, 200, 300, 520, 3);
	mm_case("persistent", DT_F16, wide, 130, 270, 333, 5);
	return ops_finish();
}
