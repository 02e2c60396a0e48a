/* attention.c: runs attention_fwd of stdlib/nn/attention.tile (the kernels
 * of blk.nn.attention), the forward pass of scaled dot-product attention
 * (flash attention: S is never stored), with and without the causal mask.
 *
 *   build/examples/attention [path/to/attention.tile]
 *
 * Every tensor is addressed through four strides, so layouts need not
 * match: here q and o are (Z, H, N_CTX, HEAD_DIM), and k and v are
 * (Z, N_CTX, H, HEAD_DIM), the layout a fused QKV projection leaves. */
#include "common.h"

enum { Z = 1, H = 2, N_CTX = 200, D = 64 }; /* 200: a multiple of neither BLOCK_M (128) nor BLOCK_N (64) */

/* Element (z, h, i, d) of each layout. */
static size_t at_zhnd(int z, int h, int i, int d) { return (((size_t)z * H + h) * N_CTX + i) * D + d; }
static size_t at_znhd(int z, int h, int i, int d) { return (((size_t)z * N_CTX + i) * H + h) * D + d; }

/* The reference, in double: S = scale q k^T, masked, softmaxed, times v. */
static void reference(const float *q, const float *k, const float *v, double scale, int causal, double *o,
                      double *lse)
{
	static double s[N_CTX];
	for (int z = 0; z < Z; z++)
		for (int h = 0; h < H; h++)
			for (int i = 0; i < N_CTX; i++) {
				int keys = causal ? i + 1 : N_CTX; /* causal: only keys j <= i */
				double m = -INFINITY, l = 0;
				for (int j = 0; j < keys; j++) {
					double dotp = 0;
					for (int d = 0; d < D; d++)
						dotp += (double)q[at_zhnd(z, h, i, d)] * k[at_znhd(z, h, j, d)];
					s[j] = scale * dotp;
					m = fmax(m, s[j]);
				}
				for (int j = 0; j < keys; j++)
					l += s[j] = exp(s[j] - m);
				for (int d = 0; d < D; d++) {
					double acc = 0;
					for (int j = 0; j < keys; j++)
						acc += s[j] * v[at_znhd(z, h, j, d)];
					o[at_zhnd(z, h, i, d)] = acc / l;
				}
				lse[((size_t)z * H + h) * N_CTX + i] = m + log(l);
			}
}

int main(int argc, char **argv)
{
	const size_t n = (size_t)Z * H * N_CTX * D, n_lse = (size_t)Z * H * N_CTX;
	const double scale = 1 / sqrt(D);

	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	f16 *q = xmalloc(n * sizeof(f16)), *k = xmalloc(n * sizeof(f16)), *v = xmalloc(n * sizeof(f16));
	f16 *o = xmalloc(n * sizeof(f16));
	float *qf = xmalloc(n * sizeof(float)), *kf = xmalloc(n * sizeof(float)), *vf = xmalloc(n * sizeof(float));
	float *lse = xmalloc(n_lse * sizeof(float));
	rng r = {7};
	rng_fill_f16(&r, q, qf, n, -2, 2); /* scores with a spread of about +-1.3 */
	rng_fill_f16(&r, k, kf, n, -2, 2);
	rng_fill_f16(&r, v, vf, n, -1, 1);

	blk_devptr dq, dk, dv, dout, dlse;
	CHECK(blk_malloc(ctx, n * sizeof(f16), &dq));
	CHECK(blk_malloc(ctx, n * sizeof(f16), &dk));
	CHECK(blk_malloc(ctx, n * sizeof(f16), &dv));
	CHECK(blk_malloc(ctx, n * sizeof(f16), &dout));
	CHECK(blk_malloc(ctx, n_lse * sizeof(float), &dlse));
	CHECK(blk_copy_to_device(ctx, dq, q, n * sizeof(f16)));
	CHECK(blk_copy_to_device(ctx, dk, k, n * sizeof(f16)));
	CHECK(blk_copy_to_device(ctx, dv, v, n * sizeof(f16)));

	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "../stdlib/nn/attention.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "attention_fwd", &kernel));

	/* Strides in elements, (z, h, position, d) for each tensor. */
	const int zhnd[4] = {H * N_CTX * D, N_CTX * D, D, 1};
	const int znhd[4] = {N_CTX * H * D, D, H * D, 1};
	blk_arg args[26] = {blk_arg_ptr(dq), blk_arg_ptr(dk), blk_arg_ptr(dv), blk_arg_ptr(dout), blk_arg_ptr(dlse)};
	for (int i = 0; i < 4; i++) {
		args[5 + i] = blk_arg_int(zhnd[i]);  /* q */
		args[9 + i] = blk_arg_int(znhd[i]);  /* k */
		args[13 + i] = blk_arg_int(znhd[i]); /* v */
		args[17 + i] = blk_arg_int(zhnd[i]); /* o */
	}
	args[21] = blk_arg_int(Z);
	args[22] = blk_arg_int(H);
	args[23] = blk_arg_int(N_CTX);
	args[24] = blk_arg_float(scale);

	double *want_o = xmalloc(n * sizeof(double)), *want_lse = xmalloc(n_lse * sizeof(double));
	compare cmp[4];
	for (int causal = 0; causal <= 1; causal++) {
		/* HEAD_DIM, BLOCK_M and BLOCK_N keep their defaults (64, 128, 64);
		 * CAUSAL is an i1 const: a separate compiled variant for each value. */
		blk_const c = {.name = "CAUSAL", .i = causal};
		blk_launch_options opt = {.consts = &c, .n_consts = 1};
		CHECK(blk_launch(kernel, args, 25, &opt));
		CHECK(blk_copy_from_device(ctx, o, dout, n * sizeof(f16)));
		CHECK(blk_copy_from_device(ctx, lse, dlse, n_lse * sizeof(float)));

		reference(qf, kf, vf, scale, causal, want_o, want_lse);
		/* o: the probabilities go through f16 before the product with v
		 * (2^-11 relative each) and o is rounded to f16: about 1e-3 of v's
		 * scale (1) in the worst case. lse is f32: 1e-5. */
		cmp[2 * causal] = compare_start(causal ? "o (causal)" : "o", 2e-3);
		cmp[2 * causal + 1] = compare_start(causal ? "lse (causal)" : "lse", 1e-5);
		compare_f16s(&cmp[2 * causal], o, want_o, (long)n, 1.0);
		compare_floats(&cmp[2 * causal + 1], lse, want_lse, (long)n_lse, 1.0);
	}

	char title[128];
	snprintf(title, sizeof title, "attention Z=%d H=%d N_CTX=%d HEAD_DIM=%d f16, causal and not (%s)", Z, H, N_CTX,
	         D, backend_name(ctx));
	int status = compare_report(title, cmp, 4);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(q), free(k), free(v), free(o), free(qf), free(kf), free(vf), free(lse), free(want_o), free(want_lse);
	return status;
}
