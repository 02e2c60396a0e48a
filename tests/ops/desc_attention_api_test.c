/* tests/ops: bench/kernels/attention_desc.tile (attention forward through
 * tensor descriptors: on an H100 with BLK_TMA=1 its key and value tiles,
 * the key transposed for the scores, come by TMA and the output goes out by
 * a TMA store) against softmax attention in double on random f16 inputs:
 * head dims 32, 64 and 128, causal and not, sequences that fill the query
 * blocks and one that does not (its last block stored by plain masked
 * stores), block sizes 64 and 128 by 32 and 64. Tolerance: 2e-3 on the
 * output (f16 outputs of values of magnitude about 1) and on lse. */
#include "ops.h"

static char *read_source(const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	char *text = malloc(1 << 16);
	size_t n = text ? fread(text, 1, (1 << 16) - 1, fp) : 0;
	fclose(fp);
	if (text)
		text[n] = '\0';
	return text;
}

static void attention_case(const char *src, int ZH, int N, int D, int bm, int bn, bool causal, int warps)
{
	int64_t rows = (int64_t)ZH * N;
	arr q = arr_new(DT_F16, rows * D), k = arr_new(DT_F16, rows * D), v = arr_new(DT_F16, rows * D);
	fill_random(q, 1);
	fill_random(k, 1);
	fill_random(v, 1);
	double scale = 1.0 / sqrt((double)D);
	double *want = calloc((size_t)rows * D, sizeof(double)), *tol = calloc((size_t)rows * D, sizeof(double));
	double *want_lse = calloc((size_t)rows, sizeof(double)), *tol_lse = calloc((size_t)rows, sizeof(double));
	double *s = calloc((size_t)N, sizeof(double));
	for (int h = 0; h < ZH; h++)
		for (int i = 0; i < N; i++) {
			int64_t r = (int64_t)h * N + i;
			double mx = -INFINITY, l = 0;
			int last = causal ? i : N - 1;
			for (int j = 0; j <= last; j++) {
				double dotp = 0;
				for (int d = 0; d < D; d++)
					dotp += get_f(q, r * D + d) * get_f(k, ((int64_t)h * N + j) * D + d);
				s[j] = dotp * scale;
				mx = s[j] > mx ? s[j] : mx;
			}
			for (int j = 0; j <= last; j++)
				l += exp(s[j] - mx);
			for (int d = 0; d < D; d++) {
				double o = 0;
				for (int j = 0; j <= last; j++)
					o += exp(s[j] - mx) / l * get_f(v, ((int64_t)h * N + j) * D + d);
				want[r * D + d] = o;
				tol[r * D + d] = 2e-3;
			}
			want_lse[r] = mx + log(l);
			tol_lse[r] = 2e-3;
		}
	blk_devptr dq = dev_from(q), dk = dev_from(k), dv = dev_from(v);
	blk_devptr dout = dev_zeros(DT_F16, rows * D), dlse = dev_zeros(DT_F32, rows);
	blk_const consts[5] = {CI("HEAD_DIM", D), CI("BLOCK_M", bm), CI("BLOCK_N", bn), CI("CAUSAL", causal),
	                       CI("num_warps", warps)};
	bool ok = run_kernel(src, "attention_desc",
	                     ARGS(P(dq), P(dk), P(dv), P(dout), P(dlse), I(ZH), I(N), I((int)rows), F(scale)), consts, 5,
	                     GRID(0, 0, 0)) == BLK_SUCCESS;
	if (ok)
		ok = check_close_each(dev_read(dout, DT_F16, rows * D), want, tol);
	if (ok)
		ok = check_close_each(dev_read(dlse, DT_F32, rows), want_lse, tol_lse);
	free(want);
	free(tol);
	free(want_lse);
	free(tol_lse);
	free(s);
	result(ok, "attention_desc %d heads x %d x d%d, blocks %d x %d, %d warps%s", ZH, N, D, bm, bn, warps,
	       causal ? ", causal" : "");
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	char *src = read_source("bench/kernels/attention_desc.tile");
	result(src != NULL, "bench/kernels/attention_desc.tile read (run from the repository's root)");
	if (!src)
		return ops_finish();
	/* (ZH, N, D, BLOCK_M, BLOCK_N, causal, warps) */
	static const int cases[][7] = {
		{2, 128, 64, 64, 32, 0, 4},  {2, 128, 64, 64, 32, 1, 4},  {1, 256, 128, 128, 64, 0, 8},
		{1, 256, 128, 128, 64, 1, 8}, {3, 96, 32, 64, 32, 0, 4},  {3, 96, 32, 64, 32, 1, 4},
		{1, 192, 64, 128, 64, 1, 4},
	};
	for (int i = 0; i < COUNT(cases); i++)
		attention_case(src, cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], cases[i][5],
		               cases[i][6]);
	free(src);
	return ops_finish();
}
