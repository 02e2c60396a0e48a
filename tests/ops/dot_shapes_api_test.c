/* tests/ops: dot of the shapes issue 15 added: M and N of 1, 2, 4 and 8 (K
 * of 16 and more), and batched products (B, M, K) x (B, K, N) + acc
 * (B, M, N), for f16, bf16, f32 (ieee, tf32), fp8 and i8 inputs. The
 * operands are loaded with their K edge masked (the elements past k_valid
 * read as 0), as a kernel pads a short K.
 *
 * The reference sums the exact products in long double; the tolerance per
 * element is dot_api_test.c's: K 2^-24 S for f32 sums (S = sum |a b| +
 * |acc|), 2^-9 S more for tf32 inputs, 2^-12 S more for fp8 (tensor
 * cores' reduced sums), plus an ulp of the result type; i8 is exact. */
#include "ops.h"


static const char *SRC =
	"kernel k(a: *$T, b: *$T, c: *$C, out: *$C, kv: i32) {\n"
	"    let bi = arange(0, $B)[:, None, None];\n"
	"    let am = arange(0, $M)[None, :, None];\n"
	"    let ak = arange(0, $K)[None, None, :];\n"
	"    let x = load(a + bi * ($M * $K) + am * $K + ak, mask = ak < kv, other = 0);\n"
	"    let bk = arange(0, $K)[None, :, None];\n"
	"    let bn = arange(0, $N)[None, None, :];\n"
	"    let y = load(b + bi * ($K * $N) + bk * $N + bn, mask = bk < kv, other = 0);\n"
	"    let cm = bi * ($M * $N) + arange(0, $M)[None, :, None] * $N + bn;\n"
	"    let r = $DOT;\n"
	"    store(out + cm, r);\n"
	"}\n";

/* B == 0: a plain 2-D dot (the batch axis indexed away with [0]). */
static void case_(dt t, int B, int M, int N, int K, bool with_acc, const char *prec)
{
	bool is_int = t == DT_I8;
	dt acc_t = is_int ? DT_I32 : DT_F32;
	int nb = B ? B : 1, kv = (int)rng_range(K / 2, K);
	arr a = arr_new(t, nb * M * K), b = arr_new(t, nb * K * N), c = arr_new(acc_t, nb * M * N);
	double range = t == DT_E4M3 ? 4 : t == DT_E5M2 ? 8 : 1;
	fill_random(a, is_int ? 0 : range);
	fill_random(b, is_int ? 0 : range);
	fill_random(c, is_int ? 0 : 4);
	if (is_int)
		for (int i = 0; i < nb * M * N; i++)
			set_i(c, i, get_i(c, i) >> 4);
	arr want = arr_new(acc_t, nb * M * N);
	double *wantf = calloc((size_t)(nb * M * N), sizeof(double)), *tol = calloc((size_t)(nb * M * N), sizeof(double));
	for (int q = 0; q < nb; q++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				int o = (q * M + i) * N + j;
				if (is_int) {
					uint64_t s = with_acc ? (uint64_t)get_i(c, o) : 0;
					for (int k = 0; k < kv; k++)
						s += (uint64_t)(get_i(a, (q * M + i) * K + k) * get_i(b, (q * K + k) * N + j));
					set_i(want, o, wrap_int(DT_I32, s));
					continue;
				}
				long double s = with_acc ? get_f(c, o) : 0, S = fabsl(s);
				for (int k = 0; k < kv; k++) {
					long double p = (long double)get_f(a, (q * M + i) * K + k) * get_f(b, (q * K + k) * N + j);
					s += p;
					S += fabsl(p);
				}
				wantf[o] = (double)s;
				double rel = K * 0x1p-24 + (t == DT_F32 && strcmp(prec, "ieee") ? 0x1p-9 : 0) +
				             (t == DT_E4M3 || t == DT_E5M2 ? 0x1p-12 : 0);
				tol[o] = rel * (double)S + ulp_of(acc_t, (double)s);
			}
	char dot[200];
	const char *xs = B ? "x" : "x[0]", *ys = B ? "y" : "y[0]";
	char acc[64] = "", pr[48] = "";
	if (with_acc)
		snprintf(acc, sizeof acc, ", load(c + cm)%s", B ? "" : "[0]");
	if (t == DT_F32)
		snprintf(pr, sizeof pr, ", input_precision = \"%s\"", prec);
	snprintf(dot, sizeof dot, "dot(%s, %s%s%s)%s", xs, ys, acc, pr, B ? "" : "[None, :, :]");
	const char *src = render(SRC, "T", dts[t].name, "C", dts[acc_t].name, "B", num(nb), "M", num(M), "N", num(N), "K",
	                         num(K), "DOT", dot, NULL);
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_from(c), dout = dev_zeros(acc_t, nb * M * N);
	bool ok = run_kernel(src, NULL, ARGS(P(da), P(db), P(dc), P(dout), I(kv)), NO_CONSTS, GRID(1, 1, 1)) ==
	          BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, acc_t, nb * M * N);
		ok = is_int ? check_exact(got, want, NULL, 0) : check_close_each(got, wantf, tol);
	}
	free(wantf);
	free(tol);
	if (B)
		result(ok, "dot (%d, %d, %d) @ (%d, %d, %d)%s %s%s%s (k < %d)", B, M, K, B, K, N, with_acc ? " + acc" : "",
		       dts[t].name, t == DT_F32 ? " " : "", t == DT_F32 ? prec : "", kv);
	else
		result(ok, "dot (%d, %d) @ (%d, %d)%s %s%s%s (k < %d)", M, K, K, N, with_acc ? " + acc" : "", dts[t].name,
		       t == DT_F32 ? " " : "", t == DT_F32 ? prec : "", kv);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	const dt types[] = {DT_F16, DT_BF16, DT_F32, DT_I8, DT_E4M3, DT_E5M2};
	const int small[] = {1, 2, 4, 8, 16};
	for (int t = 0; t < COUNT(types); t++) {
		const char *prec = t % 2 ? "tf32" : "ieee";
		for (int m = 0; m < COUNT(small); m++)
			for (int n = 0; n < COUNT(small); n++) {
				if (small[m] == 16 && small[n] == 16)
					continue; /* dot_api_test's */
				case_(types[t], 0, small[m], small[n], (m + n) % 2 ? 32 : 16, (m + n) % 3 == 0, prec);
			}
		case_(types[t], 2, 16, 16, 16, true, prec);
		case_(types[t], 4, 8, 16, 32, false, prec);
		case_(types[t], 2, 32, 8, 16, true, "tf32");
		case_(types[t], 8, 1, 2, 16, true, "ieee");
	}
	return ops_finish();
}
