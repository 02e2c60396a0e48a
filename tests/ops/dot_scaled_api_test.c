/* tests/ops: dot_scaled, the product of two blocks in microscaling formats
 * (docs/language.md): e2m1 values two a byte (the first in the low four
 * bits), packed along K or (k_pack false) along M or N; e4m3 and e5m2 as
 * bytes or as f8 blocks; bf16 and fp16; e8m0 scales (2^(s - 127), one for 32
 * elements along K: lhs (M, K/32), rhs (N, K/32)), or none. A kernel over a
 * grid of tiles with a K loop, masked edges, an accumulator and out_dtype.
 *
 * The reference decodes every element in double (an e2m1 nibble s e e m is
 * (-1)^s (1 + m/2) 2^(e-1), or m/2 where e = 0), multiplies by its scale
 * and sums the exact products in long double. The decoded, scaled values
 * are bf16 values, so the products are exact: the tolerance is the f32
 * sums', K 2^-24 S (S = sum |a b|) and an ulp. A scale of 255 is NaN. */
#include "ops.h"

/* $A and $B: the element types of lhs and rhs as stored; $AK, $BK: their
 * extents along K (half of K where packed along it); $AM, $BN: along M and
 * N (half where packed along those) */
static const char *SRC =
	"kernel k(a: *$A, sa: *u8, b: *$B, sb: *u8, c: *$R, M: i32, N: i32, K: i32,\n"
	"         BM: const i32, BN: const i32, BK: const i32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    let rm = program_id(0) * BM + arange(0, BM);\n"
	"    let rn = program_id(1) * BN + arange(0, BN);\n"
	"    let am = program_id(0) * ($AMB) + arange(0, $AMB);\n"
	"    let bn = program_id(1) * ($BNB) + arange(0, $BNB);\n"
	"    let ka = arange(0, $AKB);\n"
	"    let kb = arange(0, $BKB);\n"
	"    let g = arange(0, BK / 32);\n"
	"    var acc = zeros((BM, BN), f32);\n"
	"    for k in range(0, K, BK) {\n"
	"        let x = load(a + am[:, None] * ($AK) + (k / ($AKD) + ka)[None, :], mask = am[:, None] < $AM, other = 0);\n"
	"        let y = load(b + (k / ($BKD) + kb)[:, None] * ($BNS) + bn[None, :], mask = bn[None, :] < $BNS, other = 0);\n"
	"        let xs = load(sa + rm[:, None] * (K / 32) + (k / 32 + g)[None, :], mask = rm[:, None] < M, other = 127);\n"
	"        let ys = load(sb + rn[:, None] * (K / 32) + (k / 32 + g)[None, :], mask = rn[:, None] < N, other = 127);\n"
	"        acc = dot_scaled(x, $XS, \"$FA\", y, $YS, \"$FB\", acc$KPACK);\n"
	"    }\n"
	"    store(c + rm[:, None] * N + rn[None, :], acc$CAST, mask = (rm[:, None] < M) & (rn[None, :] < N));\n"
	"}\n";

enum { E2M1, E4M3, E5M2, BF16, FP16 };
static const char *const FMT[] = {"e2m1", "e4m3", "e5m2", "bf16", "fp16"};

static double e2m1_value(unsigned n)
{
	static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
	return n & 8 ? -mag[n & 7] : mag[n & 7];
}

/* One operand: its stored bytes (dev), and every decoded value by (row, k)
 * of the logical (R x K) matrix, R = M for lhs and N for rhs, K along K. */
typedef struct Operand {
	arr store;
	double *val; /* R x K, row-major by (r, k) */
} Operand;

/* lhs is stored (M, K) [k_pack: (M, K/2) packed along K; else (M/2, K)
 * packed along M]; rhs (K, N) [(K/2, N) along K; else (K, N/2)]. */
static Operand make_operand(int fmt, bool is_rhs, bool k_pack, bool f8_type, int R, int K)
{
	Operand o = {0};
	o.val = calloc((size_t)R * K, sizeof(double));
	if (fmt == E2M1) {
		unsigned char *nib = malloc((size_t)R * K);
		for (int i = 0; i < R * K; i++)
			nib[i] = (unsigned char)rng_range(0, 15);
		for (int r = 0; r < R; r++)
			for (int k = 0; k < K; k++)
				o.val[(size_t)r * K + k] = e2m1_value(nib[(size_t)r * K + k]);
		/* stored rows and columns: along which axis pairs are packed */
		bool along_k = k_pack;
		int rows = is_rhs ? K : R, cols = is_rhs ? R : K; /* the logical stored matrix */
		bool pack_rows = is_rhs ? along_k : !along_k;    /* pairs down the rows, else along them */
		int sr = pack_rows ? rows / 2 : rows, sc = pack_rows ? cols : cols / 2;
		o.store = arr_new(DT_U8, (int64_t)sr * sc);
		for (int i = 0; i < sr; i++)
			for (int j = 0; j < sc; j++) {
				unsigned v[2];
				for (int h = 0; h < 2; h++) {
					int ri = pack_rows ? 2 * i + h : i, cj = pack_rows ? j : 2 * j + h;
					int r = is_rhs ? cj : ri, k = is_rhs ? ri : cj;
					v[h] = nib[(size_t)r * K + k];
				}
				set_i(o.store, (int64_t)i * sc + j, (int64_t)(v[0] | v[1] << 4));
			}
		free(nib);
		return o;
	}
	dt t = fmt == E4M3 ? DT_E4M3 : fmt == E5M2 ? DT_E5M2 : fmt == BF16 ? DT_BF16 : DT_F16;
	arr vals = arr_new(t, (int64_t)R * K);
	fill_random(vals, fmt == E4M3 ? 8 : fmt == E5M2 ? 16 : 2);
	int rows = is_rhs ? K : R, cols = is_rhs ? R : K;
	o.store = arr_new(f8_type || fmt >= BF16 ? t : DT_U8, (int64_t)rows * cols);
	for (int r = 0; r < R; r++)
		for (int k = 0; k < K; k++) {
			double v = get_f(vals, (int64_t)r * K + k);
			o.val[(size_t)r * K + k] = v;
			int64_t at = is_rhs ? (int64_t)k * cols + r : (int64_t)r * cols + k;
			if (o.store.t == DT_U8)
				set_i(o.store, at, (int64_t)get_u(vals, (int64_t)r * K + k) & 255);
			else
				set_f(o.store, at, v);
		}
	return o;
}

static void scaled_case(int fa, int fb, bool scales, bool nan_scale, bool ka, bool kb, bool f8_type, bool out16,
                        int M, int N, int K, int bm, int bn, int bk, int warps)
{
	Operand A = make_operand(fa, false, ka, f8_type, M, K), B = make_operand(fb, true, kb, f8_type, N, K);
	arr sa = arr_new(DT_U8, (int64_t)M * (K / 32)), sb = arr_new(DT_U8, (int64_t)N * (K / 32));
	for (int64_t i = 0; i < sa.n; i++)
		set_i(sa, i, scales ? rng_range(118, 136) : 127);
	for (int64_t i = 0; i < sb.n; i++)
		set_i(sb, i, scales ? rng_range(118, 136) : 127);
	if (nan_scale)
		set_i(sa, 0, 255); /* row 0's first group: NaN all along row 0 */
	dt rt = out16 ? DT_BF16 : DT_F32;
	double *want = calloc((size_t)M * N, sizeof(double)), *tol = calloc((size_t)M * N, sizeof(double));
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			long double s = 0, S = 0;
			for (int k = 0; k < K; k++) {
				double xa = ldexp(A.val[(size_t)i * K + k], (int)get_i(sa, (int64_t)i * (K / 32) + k / 32) - 127);
				double xb = ldexp(B.val[(size_t)j * K + k], (int)get_i(sb, (int64_t)j * (K / 32) + k / 32) - 127);
				s += (long double)xa * xb;
				S += fabsl((long double)xa * xb);
			}
			size_t o = (size_t)i * N + j;
			want[o] = nan_scale && i == 0 ? NAN : (double)s;
			tol[o] = K * 0x1p-24 * (double)S + ulp_of(DT_F32, want[o]) + (out16 ? ulp_of(DT_BF16, want[o]) : 0);
		}
	/* the stored extents: packed along K halves K, along M or N halves those */
	bool a_half_k = fa == E2M1 && ka, a_half_m = fa == E2M1 && !ka;
	bool b_half_k = fb == E2M1 && kb, b_half_n = fb == E2M1 && !kb;
	char amb[32], bnb[32], akb[32], bkb[32], ak[32], am[32], bns[32];
	snprintf(amb, sizeof amb, "%s", a_half_m ? "BM / 2" : "BM");
	snprintf(bnb, sizeof bnb, "%s", b_half_n ? "BN / 2" : "BN");
	snprintf(akb, sizeof akb, "%s", a_half_k ? "BK / 2" : "BK");
	snprintf(bkb, sizeof bkb, "%s", b_half_k ? "BK / 2" : "BK");
	snprintf(ak, sizeof ak, "%s", a_half_k ? "K / 2" : "K");
	snprintf(am, sizeof am, "%s", a_half_m ? "M / 2" : "M");
	snprintf(bns, sizeof bns, "%s", b_half_n ? "N / 2" : "N");
	char kpack[64] = "";
	if (!ka || !kb)
		snprintf(kpack, sizeof kpack, ", lhs_k_pack = %s, rhs_k_pack = %s", ka ? "true" : "false", kb ? "true" : "false");
	const char *src = render(SRC, "A", dts[A.store.t].name, "B", dts[B.store.t].name, "R", dts[rt].name, "AMB", amb,
	                         "BNB", bnb, "AKB", akb, "BKB", bkb, "AKD", a_half_k ? "2" : "1", "BKD", b_half_k ? "2" : "1",
	                         "AK", ak, "AM", am, "BNS", bns, "XS", scales || nan_scale ? "xs" : "None",
	                         "YS", scales ? "ys" : "None", "FA", FMT[fa], "FB", FMT[fb], "KPACK", kpack,
	                         "CAST", out16 ? ".to(bf16)" : "", NULL);
	blk_devptr da = dev_from(A.store), db = dev_from(B.store), dsa = dev_from(sa), dsb = dev_from(sb);
	blk_devptr dc = dev_zeros(rt, (int64_t)M * N);
	bool ok = run_kernel(src, NULL, ARGS(P(da), P(dsa), P(db), P(dsb), P(dc), I(M), I(N), I(K)),
	                     CONSTS(CI("BM", bm), CI("BN", bn), CI("BK", bk), CI("num_warps", warps)),
	                     GRID(0, 0, 0)) == BLK_SUCCESS;
	if (ok)
		ok = check_close_each(dev_read(dc, rt, (int64_t)M * N), want, tol);
	free(want);
	free(tol);
	free(A.val);
	free(B.val);
	result(ok, "dot_scaled %s%s x %s%s%s%s%s %d x %d x %d, tiles %d x %d x %d, %d warps%s", FMT[fa],
	       fa == E2M1 && !ka ? " (packed along M)" : "", FMT[fb], fb == E2M1 && !kb ? " (packed along N)" : "",
	       scales ? ", scaled" : ", no scales", nan_scale ? ", a NaN scale" : "", f8_type ? ", f8 blocks" : "", M, N, K,
	       bm, bn, bk, warps, out16 ? ", bf16 out" : "");
}

static const char *BAD_SRC =
	"kernel k(a: *$A, b: *u8, s: *u8, c: *f32) grid(1) {\n"
	"    let r = arange(0, 16);\n"
	"    let x = load(a + r[:, None] * 32 + arange(0, 32)[None, :]);\n"
	"    let y = load(b + arange(0, 64)[:, None] * 16 + r[None, :]);\n"
	"    let sc = load(s + r[:, None] * 4 + arange(0, 4)[None, :]);\n"
	"    store(c + r[:, None] * 16 + r[None, :], dot_scaled(x, sc, \"$F\", y, None, \"e4m3\"));\n"
	"}\n";

/* wrong uses are compile errors that say what is wrong */
static void bad_case(const char *a_type, const char *fmt, const char *words)
{
	blk_devptr d = dev_zeros(DT_U8, 8192);
	blk_status st = run_kernel(render(BAD_SRC, "A", a_type, "F", fmt, NULL), NULL, ARGS(P(d), P(d), P(d), P(d)),
	                           NO_CONSTS, GRID(0));
	bool ok = st == BLK_ERROR_SOURCE && strstr(ops_err, words) != NULL;
	if (!ok)
		why("status %d, message: %s\n", (int)st, ops_err);
	result(ok, "dot_scaled(%s in \"%s\") is refused: %s", a_type, fmt, words);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	/* formats against each other, scaled, one tile config */
	static const int pairs[][2] = {{E2M1, E2M1}, {E2M1, E4M3}, {E4M3, E2M1}, {E4M3, E5M2}, {E5M2, E5M2},
	                               {BF16, E2M1}, {E4M3, BF16}, {BF16, BF16}};
	for (size_t p = 0; p < COUNT(pairs); p++)
		scaled_case(pairs[p][0], pairs[p][1], true, false, true, true, false, false, 70, 50, 128, 32, 32, 64, 4);
	scaled_case(FP16, FP16, false, false, true, true, false, false, 40, 48, 64, 32, 16, 32, 4);
	scaled_case(E4M3, E4M3, false, false, true, true, false, false, 33, 17, 64, 16, 16, 32, 4);
	scaled_case(E4M3, E5M2, true, false, true, true, true, false, 64, 64, 64, 64, 64, 32, 4); /* f8 blocks */
	/* e2m1 packed along M and along N */
	scaled_case(E2M1, E2M1, true, false, false, true, false, false, 64, 32, 64, 32, 32, 32, 4);
	scaled_case(E2M1, E2M1, true, false, true, false, false, false, 32, 64, 64, 32, 32, 32, 4);
	/* bigger tiles, more warps, a bf16 result; a NaN scale */
	scaled_case(E2M1, E4M3, true, false, true, true, false, true, 130, 140, 256, 64, 128, 128, 8);
	scaled_case(E4M3, E2M1, true, true, true, true, false, false, 32, 32, 64, 32, 32, 64, 4);
	bad_case("f16", "e4m3", "must be u8, i8 or f8e4m3");
	bad_case("u8", "e3m2", "unknown value \"e3m2\"");
	bad_case("u8", "e2m1", "the scales of a (16, 64) operand");
	return ops_finish();
}
