/* tests/ops: dots whose tiles are smaller than a tensor-core instruction
 * (M under 16, N under 8: on the GPU, mma.sync padded to 16 x 8), as a
 * kernel uses them: a grid of programs over an M x N result that is a
 * multiple of no tile, a runtime K loop whose last step is masked, every
 * edge masked on the loads (other = 0) and the store, 1 to 8 warps (more
 * warps than the tile has rows: replicas), f16, bf16, f32 (tf32, tf32x3,
 * ieee), i8 (into i32), fp8 e4m3, e5m2 and mixed; then a small dot chained
 * to another (the first's result, as f16, the second's A), an ieee f32
 * dot whose accumulator is a small f16 dot's result, and K steps of 1 to 8
 * (padded with zeros to 16).
 *
 * The reference sums the exact products in long double. Tolerance per
 * element, S = sum |a b| (+ |acc|): K 2^-24 S (the additions, in any order),
 * 2^-9 S more for tf32 (a product's bound: few terms do not average it out), 2^-12 S more a K step of 32 for fp8 (tensor cores
 * keep about 14 bits of the sum), an ulp of f32; i8 exact (dot_api_test.c
 * says why). */
#include "ops.h"

static const char *MM_SRC =
	"kernel mm(a: *$TA, b: *$TB, c: *$R, M: i32, N: i32, K: i32,\n"
	"          BM: const i32, BN: const i32, BK: const i32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    let rm = program_id(0) * BM + arange(0, BM);\n"
	"    let rn = program_id(1) * BN + arange(0, BN);\n"
	"    let rk = arange(0, BK);\n"
	"    var acc = zeros((BM, BN), $R);\n"
	"    for k in range(0, K, BK) {\n"
	"        let x = load(a + rm[:, None] * K + (k + rk)[None, :],\n"
	"                     mask = (rm[:, None] < M) & (rk[None, :] < K - k), other = 0);\n"
	"        let y = load(b + (k + rk)[:, None] * N + rn[None, :],\n"
	"                     mask = (rk[:, None] < K - k) & (rn[None, :] < N), other = 0);\n"
	"        acc = dot(x, y, acc$PREC);\n"
	"    }\n"
	"    store(c + rm[:, None] * N + rn[None, :], acc, mask = (rm[:, None] < M) & (rn[None, :] < N));\n"
	"}\n";

static double sum_tol(dt ta, const char *prec, int K, double S, double s)
{
	double rel = K * 0x1p-24;
	if (ta == DT_F32 && strcmp(prec, "ieee"))
		rel += 0x1p-9; /* each tf32 product within 2^-9 of the exact one (docs/language.md) */
	if (ta == DT_E4M3 || ta == DT_E5M2)
		rel += (K + 31) / 32 * 0x1p-12;
	return rel * S + ulp_of(DT_F32, s);
}

static void mm_case(dt ta, dt tb, const char *prec, int bm, int bn, int bk, int warps, int M, int N, int K)
{
	bool is_int = ta == DT_I8;
	dt rt = is_int ? DT_I32 : DT_F32;
	arr a = arr_new(ta, (int64_t)M * K), b = arr_new(tb, (int64_t)K * N);
	fill_random(a, is_int ? 0 : ta == DT_E4M3 ? 4 : ta == DT_E5M2 ? 8 : 1);
	fill_random(b, is_int ? 0 : tb == DT_E4M3 ? 4 : tb == DT_E5M2 ? 8 : 1);
	arr want = arr_new(rt, (int64_t)M * N);
	double *wantf = calloc((size_t)M * N, sizeof(double)), *tol = calloc((size_t)M * N, sizeof(double));
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			size_t o = (size_t)i * N + j;
			if (is_int) {
				uint64_t s = 0;
				for (int k = 0; k < K; k++)
					s += (uint64_t)(get_i(a, (int64_t)i * K + k) * get_i(b, (int64_t)k * N + j));
				set_i(want, (int64_t)o, wrap_int(DT_I32, s));
				continue;
			}
			long double s = 0, S = 0;
			for (int k = 0; k < K; k++) {
				long double p = (long double)get_f(a, (int64_t)i * K + k) * get_f(b, (int64_t)k * N + j);
				s += p;
				S += fabsl(p);
			}
			wantf[o] = (double)s;
			tol[o] = sum_tol(ta, prec, K, (double)S, (double)s);
		}
	char pr[64] = "";
	if (ta == DT_F32)
		snprintf(pr, sizeof pr, ", input_precision = \"%s\"", prec);
	const char *src = render(MM_SRC, "TA", dts[ta].name, "TB", dts[tb].name, "R", dts[rt].name, "PREC", pr, NULL);
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_zeros(rt, (int64_t)M * N);
	bool ok = run_kernel(src, NULL, ARGS(P(da), P(db), P(dc), I(M), I(N), I(K)),
	                     CONSTS(CI("BM", bm), CI("BN", bn), CI("BK", bk), CI("num_warps", warps)),
	                     GRID(0, 0, 0)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dc, rt, (int64_t)M * N);
		ok = is_int ? check_exact(got, want, NULL, 0) : check_close_each(got, wantf, tol);
	}
	free(wantf);
	free(tol);
	result(ok, "small dot %s x %s%s%s %d x %d x %d, tiles %d x %d x %d, %d warps", dts[ta].name, dts[tb].name,
	       ta == DT_F32 ? " " : "", ta == DT_F32 ? prec : "", M, N, K, bm, bn, bk, warps);
}

/* o = dot(dot(q, k).to(f16), v) over one program's BM rows: the first
 * dot's result is the second's A operand (on the GPU, from registers). */
static const char *CHAIN_SRC =
	"kernel ch(q: *f16, k: *f16, v: *f16, o: *f32, M: i32, BM: const i32) grid(cdiv(M, BM)) {\n"
	"    let rm = program_id(0) * BM + arange(0, BM);\n"
	"    let d = arange(0, 16);\n"
	"    let n = arange(0, 32);\n"
	"    let x = load(q + rm[:, None] * 16 + d[None, :], mask = rm[:, None] < M, other = 0);\n"
	"    let s = dot(x, load(k + d[:, None] * 32 + n[None, :]));\n"
	"    let p = s.to(f16);\n"
	"    let r = dot(p, load(v + n[:, None] * 16 + d[None, :]));\n"
	"    store(o + rm[:, None] * 16 + d[None, :], r, mask = rm[:, None] < M);\n"
	"}\n";

static void chain_case(int bm, int warps, int M)
{
	arr q = arr_new(DT_F16, (int64_t)M * 16), k = arr_new(DT_F16, 16 * 32), v = arr_new(DT_F16, 32 * 16);
	fill_random(q, 1);
	fill_random(k, 1);
	fill_random(v, 1);
	double *want = calloc((size_t)M * 16, sizeof(double)), *tol = calloc((size_t)M * 16, sizeof(double));
	for (int i = 0; i < M; i++) {
		double p[32], pa[32];
		for (int j = 0; j < 32; j++) {
			long double s = 0;
			for (int d = 0; d < 16; d++)
				s += (long double)get_f(q, i * 16 + d) * get_f(k, d * 32 + j);
			p[j] = (double)s;
			pa[j] = fabs(p[j]);
		}
		/* p rounds to f16 on the way (half an ulp, 2^-11 relative, from a
		 * first sum already within 16 2^-24 of its magnitudes) */
		for (int d = 0; d < 16; d++) {
			long double s = 0, S = 0;
			for (int j = 0; j < 32; j++) {
				s += (long double)p[j] * get_f(v, j * 16 + d);
				S += (long double)pa[j] * fabs(get_f(v, j * 16 + d));
			}
			want[i * 16 + d] = (double)s;
			tol[i * 16 + d] = 0x1p-10 * (double)S + 1e-6;
		}
	}
	blk_devptr dq = dev_from(q), dk = dev_from(k), dv = dev_from(v), dout = dev_zeros(DT_F32, (int64_t)M * 16);
	bool ok = run_kernel(CHAIN_SRC, NULL, ARGS(P(dq), P(dk), P(dv), P(dout), I(M)),
	                     CONSTS(CI("BM", bm), CI("num_warps", warps)), GRID(0, 0, 0)) == BLK_SUCCESS;
	if (ok)
		ok = check_close_each(dev_read(dout, DT_F32, (int64_t)M * 16), want, tol);
	free(want);
	free(tol);
	result(ok, "small chained dots: dot(dot(q, k).to(f16), v), %d rows, tiles of %d rows, %d warps", M, bm, warps);
}

/* r = dot(af, bf, dot(a, b), input_precision = "ieee"): FMAs whose
 * accumulator comes from a (small) f16 dot. */
static const char *ACC_SRC =
	"kernel ac(a: *f16, b: *f16, af: *f32, bf: *f32, out: *f32, M: i32) {\n"
	"    let rm = arange(0, $BM);\n"
	"    let rk = arange(0, 16);\n"
	"    let rn = arange(0, $BN);\n"
	"    let m = rm[:, None] < M;\n"
	"    let ia = rm[:, None] * 16 + rk[None, :];\n"
	"    let ib = rk[:, None] * $BN + rn[None, :];\n"
	"    let acc = dot(load(a + ia, mask = m, other = 0), load(b + ib));\n"
	"    let r = dot(load(af + ia, mask = m, other = 0), load(bf + ib), acc, input_precision = \"ieee\");\n"
	"    store(out + rm[:, None] * $BN + rn[None, :], r, mask = m);\n"
	"}\n";

static void acc_case(int bm, int bn, int M)
{
	arr a = arr_new(DT_F16, bm * 16), b = arr_new(DT_F16, 16 * bn), af = arr_new(DT_F32, bm * 16),
	    bf = arr_new(DT_F32, 16 * bn);
	fill_random(a, 1);
	fill_random(b, 1);
	fill_random(af, 1);
	fill_random(bf, 1);
	double *want = calloc((size_t)bm * bn, sizeof(double)), *tol = calloc((size_t)bm * bn, sizeof(double));
	for (int i = 0; i < M; i++)
		for (int j = 0; j < bn; j++) {
			long double s = 0, S = 0;
			for (int k = 0; k < 16; k++) {
				long double p = (long double)get_f(a, i * 16 + k) * get_f(b, k * bn + j);
				long double pf = (long double)get_f(af, i * 16 + k) * get_f(bf, k * bn + j);
				s += p + pf;
				S += fabsl(p) + fabsl(pf);
			}
			want[i * bn + j] = (double)s;
			tol[i * bn + j] = 32 * 0x1p-24 * (double)S + ulp_of(DT_F32, (double)s);
		}
	const char *src = render(ACC_SRC, "BM", num(bm), "BN", num(bn), NULL);
	blk_devptr da = dev_from(a), db = dev_from(b), daf = dev_from(af), dbf = dev_from(bf),
	           dout = dev_zeros(DT_F32, (int64_t)bm * bn);
	bool ok = run_kernel(src, NULL, ARGS(P(da), P(db), P(daf), P(dbf), P(dout), I(M)), NO_CONSTS, GRID(1, 1, 1)) ==
	          BLK_SUCCESS;
	if (ok) /* the first M rows */
		ok = check_close_each(dev_read(dout, DT_F32, (int64_t)M * bn), want, tol);
	free(want);
	free(tol);
	result(ok, "ieee f32 dot on a small f16 dot's result: %d (of %d) x %d x 16", M, bm, bn);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	/* (type of A, of B, precision): every kind of tensor-core dot */
	const struct {
		dt a, b;
		const char *prec;
	} kinds[] = {{DT_F16, DT_F16, ""},         {DT_BF16, DT_BF16, ""},     {DT_F32, DT_F32, "tf32"},
	             {DT_F32, DT_F32, "tf32x3"},   {DT_F32, DT_F32, "ieee"},   {DT_I8, DT_I8, ""},
	             {DT_E4M3, DT_E4M3, ""},       {DT_E5M2, DT_E5M2, ""},     {DT_E4M3, DT_E5M2, ""}};
	/* tiles (BM, BN), each with shapes that cut it at every edge */
	const int tiles[][2] = {{1, 64}, {2, 8}, {4, 4}, {8, 32}, {8, 1}, {16, 4}, {32, 2}, {1, 1}, {64, 4}};
	const int warps[] = {1, 4, 2, 8};
	int n = 0;
	for (int t = 0; t < COUNT(kinds); t++)
		for (int i = 0; i < COUNT(tiles); i++, n++) {
			bool eight = kinds[t].a == DT_I8 || kinds[t].a == DT_E4M3 || kinds[t].a == DT_E5M2;
			int bm = tiles[i][0], bn = tiles[i][1], bk = eight ? 32 : (n % 2 ? 16 : 32);
			int M = 3 * bm - (bm > 1 ? 1 : 0), N = 2 * bn + (bn > 1 ? bn / 2 + 1 : 0), K = 2 * bk + 5 + n % 7;
			mm_case(kinds[t].a, kinds[t].b, kinds[t].prec, bm, bn, bk, warps[n % COUNT(warps)], M, N, K);
		}
	/* K steps under 16 (1 to 8): the operands are padded with zeros to 16 */
	for (int t = 0; t < COUNT(kinds); t += 2)
		for (int bk = 1; bk <= 8; bk *= 2, n++)
			mm_case(kinds[t].a, kinds[t].b, kinds[t].prec, bk == 8 ? 64 : 16, 16, bk, warps[n % COUNT(warps)], 20,
			        18, 3 * bk + 1);
	const int chains[][3] = {{1, 1, 3}, {2, 4, 5}, {4, 1, 9}, {8, 4, 13}, {8, 8, 8}, {16, 4, 20}};
	for (int i = 0; i < COUNT(chains); i++)
		chain_case(chains[i][0], chains[i][1], chains[i][2]);
	acc_case(4, 8, 3);
	acc_case(16, 16, 11);
	acc_case(1, 2, 1);
	return ops_finish();
}
