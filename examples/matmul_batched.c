/* matmul_batched.c: runs examples/matmul_batched.tile, BATCH products of
 * one shape, through rank-3 tensor descriptors (matmul_batched) and
 * through 2-D descriptors on each batch's matrices (matmul_batched_2d).
 *
 *   build/examples/matmul_batched [path/to/matmul_batched.tile]
 *
 * 3 products each of shapes that are multiples of no tile (150x130x70), K
 * much longer than M and N (37x45x300), 1x1x1, and K shorter than a K step
 * (64x48x5); rows padded to a multiple of 8 elements and a gap of 24
 * elements between the batch's matrices; inputs and outputs f16 -> f16,
 * bf16 -> bf16, f32 -> f32 and bf16 -> f32; the tuned configuration and
 * 32x32x16 tiles. C is filled with NaN first: every element must be
 * written, and the padding and the gaps must not be. Checked against a
 * reference in double (f32 inputs as tf32), each element's error measured
 * against sum_k |a b|. */
#include "common.h"

typedef struct shape {
	int m, n, k;
} shape;

static const shape shapes[] = {{150, 130, 70}, {37, 45, 300}, {1, 1, 1}, {64, 48, 5}};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0], BATCH = 3, GAP = 24 };

static int pad8(int x)
{
	return (x + 7) / 8 * 8;
}

/* Runs both kernels on shape s with inputs t and outputs out; adds to c. */
static void run_shape(blk_context *ctx, blk_kernel *const ks[2], shape s, dtype t, dtype out, rng *r, compare *c)
{
	int lda = pad8(s.k), ldb = pad8(s.n), ldc = pad8(s.n);
	long saz = (long)s.m * lda + GAP, sbz = (long)s.k * ldb + GAP, scz = (long)s.m * ldc + GAP;
	size_t a_elems = BATCH * (size_t)saz, b_elems = BATCH * (size_t)sbz, c_elems = BATCH * (size_t)scz;
	void *a = rng_buffer(r, t, a_elems, -1, 1), *b = rng_buffer(r, t, b_elems, -1, 1);
	size_t mn = (size_t)s.m * s.n;
	double *want = xmalloc(BATCH * mn * sizeof(double)), *scale = xmalloc(BATCH * mn * sizeof(double));
	for (int z = 0; z < BATCH; z++)
		gemm_reference(t, (const char *)a + z * saz * dtype_size(t), lda, 1,
		               (const char *)b + z * sbz * dtype_size(t), ldb, 1, s.m, s.n, s.k, want + z * mn,
		               scale + z * mn);
	blk_devptr da, db, dc;
	CHECK(blk_malloc(ctx, a_elems * dtype_size(t), &da));
	CHECK(blk_malloc(ctx, b_elems * dtype_size(t), &db));
	CHECK(blk_malloc(ctx, c_elems * dtype_size(out), &dc));
	CHECK(blk_copy_to_device(ctx, da, a, a_elems * dtype_size(t)));
	CHECK(blk_copy_to_device(ctx, db, b, b_elems * dtype_size(t)));

	blk_const consts[] = {{.name = "T", .type = dtype_name(t)}, {.name = "TO", .type = dtype_name(out)},
	                      {.name = "BLOCK_M", .i = 32},         {.name = "BLOCK_N", .i = 32},
	                      {.name = "BLOCK_K", .i = 16},         {.name = "GROUP_M", .i = 2},
	                      {.name = "num_warps", .i = 4}};
	blk_launch_options opts[2] = {{.consts = consts, .n_consts = 2}, {.consts = consts, .n_consts = 7}};
	/* (a, b, c, BATCH, M, N, K, stride_az, stride_am, stride_bz, stride_bk, stride_cz, stride_cm) */
	blk_arg args[] = {blk_arg_ptr(da),  blk_arg_ptr(db),   blk_arg_ptr(dc),  blk_arg_int(BATCH), blk_arg_int(s.m),
	                  blk_arg_int(s.n), blk_arg_int(s.k),  blk_arg_int(saz), blk_arg_int(lda),   blk_arg_int(sbz),
	                  blk_arg_int(ldb), blk_arg_int(scz),  blk_arg_int(ldc)};
	void *got = xmalloc(c_elems * dtype_size(out));
	for (int ki = 0; ki < 2; ki++)
		for (int i = 0; i < 2; i++) {
			fill_device(ctx, dc, 0xFF, c_elems * dtype_size(out));
			CHECK(blk_launch(ks[ki], args, 13, &opts[i]));
			CHECK(blk_copy_from_device(ctx, got, dc, c_elems * dtype_size(out)));
			for (size_t e = 0; e < c_elems; e++) {
				long z = (long)e / scz, m = (long)e % scz / ldc, n = (long)e % scz % ldc;
				float v = dtype_get(out, got, e);
				if (m < s.m && n < s.n)
					compare_one(c, (long)e, v, want[z * mn + m * s.n + n], scale[z * mn + m * s.n + n]);
				else /* padding or gap: still NaN */
					compare_one(c, (long)e, isnan(v) ? 0 : 1, 0, 1);
			}
		}
	CHECK(blk_free(ctx, da));
	CHECK(blk_free(ctx, db));
	CHECK(blk_free(ctx, dc));
	free(a), free(b), free(want), free(scale), free(got);
}

int main(int argc, char **argv)
{
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));
	blk_module *mod;
	blk_kernel *ks[2];
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "matmul_batched.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "matmul_batched", &ks[0]));
	CHECK(blk_kernel_get(mod, "matmul_batched_2d", &ks[1]));

	/* The f32 sum (a few 2^-24 of sum |a b| for 300 products) and half an
	 * ulp of the output type: 2^-11 relative for f16, 2^-8 for bf16. */
	const dtype pairs[4][2] = {{DT_F16, DT_F16}, {DT_BF16, DT_BF16}, {DT_F32, DT_F32}, {DT_BF16, DT_F32}};
	compare cs[4] = {compare_start("f16 -> f16", 3e-5 + 0x1p-11), compare_start("bf16 -> bf16", 3e-5 + 0x1p-8),
	                 compare_start("f32 -> f32", 3e-5), compare_start("bf16 -> f32", 3e-5)};
	rng r = {31};
	for (int si = 0; si < N_SHAPES; si++)
		for (int i = 0; i < 4; i++)
			run_shape(ctx, ks, shapes[si], pairs[i][0], pairs[i][1], &r, &cs[i]);

	char title[160];
	snprintf(title, sizeof title, "matmul_batched %d x %d shapes x 4 type pairs, 3-D and 2-D descriptors (%s)", BATCH,
	         N_SHAPES, backend_name(ctx));
	int status = compare_report(title, cs, 4);
	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	return status;
}
