/* tests/ops: whole matmuls at the tile sizes tensor-core kernels use (64 to
 * 256 rows and columns, 4 and 8 warps: on sm_90a, wgmma with one or two
 * warpgroups along M or N and more than one instruction a warpgroup), f16,
 * bf16, fp8 (f32 results) and i8 (i32) inputs, B read as it lies (N
 * adjacent) or transposed (K adjacent), over shapes that are multiples of
 * no tile (every edge masked), K below the tile's K, and 1 x 1 x 1. The
 * reference sums exact products in long double; the tolerance is K 2^-24 S
 * (S = sum |a b|), 2^-10 S a K step of 32 for fp8 (wgmma adds each step
 * into the accumulator keeping about 13 bits), and nothing for i8. */
#include "ops.h"

static const char *MM_SRC =
	"kernel mm(a: *$T, b: *$T, c: *$R, M: i32, N: i32, K: i32, sbk: i32, sbn: i32,\n"
	"          BM: const i32, BN: const i32, BK: const i32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    let rm = program_id(0) * BM + arange(0, BM);\n"
	"    let rn = program_id(1) * BN + arange(0, BN);\n"
	"    let rk = arange(0, BK);\n"
	"    var pa = a + rm[:, None] * K + rk[None, :];\n"
	"    var pb = b + rk[:, None] * sbk + rn[None, :] * sbn;\n"
	"    var acc = zeros((BM, BN), $R);\n"
	"    for k in range(0, K, BK) {\n"
	"        let x = load(pa, mask = (rm[:, None] < M) & (rk[None, :] < K - k), other = 0.0);\n"
	"        let y = load(pb, mask = (rk[:, None] < K - k) & (rn[None, :] < N), other = 0.0);\n"
	"        acc = dot(x, y, acc);\n"
	"        pa += BK;\n"
	"        pb += BK * sbk;\n"
	"    }\n"
	"    store(c + rm[:, None] * N + rn[None, :], acc, mask = (rm[:, None] < M) & (rn[None, :] < N));\n"
	"}\n";

typedef struct tiles {
	int bm, bn, bk, warps, stages;
} tiles;

static void mm_case(dt t, tiles g, int M, int N, int K, bool trans_b)
{
	bool is_int = t == DT_I8;
	dt rt = is_int ? DT_I32 : DT_F32;
	arr a = arr_new(t, (int64_t)M * K), b = arr_new(t, (int64_t)K * N);
	fill_random(a, is_int ? 0 : t == DT_E4M3 ? 4 : 1);
	fill_random(b, is_int ? 0 : t == DT_E4M3 ? 4 : 1);
	/* b holds B (K x N) row-major, or B^T (N x K) row-major when trans_b */
	int sbk = trans_b ? 1 : N, sbn = trans_b ? K : 1;
	double *want = calloc((size_t)M * N, sizeof(double)), *tol = calloc((size_t)M * N, sizeof(double));
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			long double s = 0, S = 0;
			for (int k = 0; k < K; k++) {
				long double p = (long double)get_f(a, (int64_t)i * K + k) * get_f(b, (int64_t)k * sbk + (int64_t)j * sbn);
				s += p;
				S += fabsl(p);
			}
			want[(size_t)i * N + j] = (double)s;
			tol[(size_t)i * N + j] = is_int ? 0 : (t == DT_E4M3 ? (K + 31) / 32 * 0x1p-10 : K * 0x1p-24) * (double)S + 1e-30;
		}
	const char *src = render(MM_SRC, "T", dts[t].name, "R", dts[rt].name, NULL);
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_zeros(rt, (int64_t)M * N);
	bool ok = run_kernel(src, NULL,
	                     ARGS(P(da), P(db), P(dc), I(M), I(N), I(K), I(sbk), I(sbn)),
	                     CONSTS(CI("BM", g.bm), CI("BN", g.bn), CI("BK", g.bk), CI("num_warps", g.warps),
	                            CI("num_stages", g.stages)),
	                     GRID(0, 0, 0)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dc, rt, (int64_t)M * N);
		ok = check_close_each(got, want, tol);
	}
	free(want);
	free(tol);
	result(ok, "matmul %s %d x %d x %d%s, tiles %d x %d x %d, %d warps, %d stages", dts[t].name, M, N, K,
	       trans_b ? ", B transposed" : "", g.bm, g.bn, g.bk, g.warps, g.stages);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	/* (4 and 5 stages: on sm_90a the tiles come two iterations ahead) */
	const tiles configs[] = {{64, 64, 16, 4, 3},  {64, 64, 32, 4, 5},   {128, 64, 32, 4, 4},  {64, 128, 64, 4, 3},
	                         {128, 128, 64, 8, 3}, {128, 256, 64, 8, 3}, {64, 256, 32, 8, 4}, {256, 128, 32, 8, 3}};
	/* (the last: every size a multiple of 16, as the JIT specializes: the
	 * tiles then come by cp.async, two iterations ahead on sm_90a) */
	const int shapes[][3] = {{150, 130, 70}, {64, 64, 8}, {1, 1, 1}, {300, 20, 100}, {256, 192, 320}};
	const dt types[] = {DT_F16, DT_BF16, DT_E4M3, DT_I8};
	for (int c = 0; c < COUNT(configs); c++)
		for (int s = 0; s < COUNT(shapes); s++)
			for (int tb = 0; tb < 2; tb++) {
				/* 8-bit: the configs with a K step of 32 or more */
				int t = (c + s + tb) % 4;
				if (t >= 2 && configs[c].bk < 32)
					t -= 2;
				mm_case(types[t], configs[c], shapes[s][0], shapes[s][1], shapes[s][2], tb);
			}
	return ops_finish();
}
