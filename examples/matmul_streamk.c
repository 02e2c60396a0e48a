/* matmul_streamk.c: runs examples/matmul_streamk.tile, C = A @ B by a
 * persistent grid whose programs take equal ranges of (tile, K step)
 * iterations, pieces of tiles added into C with atomics.
 *
 *   build/examples/matmul_streamk [path/to/matmul_streamk.tile]
 *
 * Shapes that are multiples of no tile (150x130x70), K much longer than M
 * and N (37x45x300), 1x1x1, and K shorter than a K step (64x48x5); inputs
 * f16, bf16 and f32; the tuned configuration on the kernel's own grid
 * (num_sms(): 4 programs on the interpreter), and 32x32x16 tiles on grids
 * of 3, 7 and 64 programs, which cut the tiles at other places (64 is more
 * programs than some shapes have iterations: some take none), and
 * 128x256x64 tiles on 2 and 3 programs with the GPU's options: by TMA, then
 * warp-specialized too (the interpreter ignores them). Rows of A, B
 * and C are padded to a multiple of 8 elements; C's padding must stay 0.
 *
 * Checked against a reference in double from the same inputs (f32 inputs
 * as tf32), each element's error measured against sum_k |a b|. */
#include "common.h"

typedef struct shape {
	int m, n, k;
} shape;

static const shape shapes[] = {{150, 130, 70}, {37, 45, 300}, {1, 1, 1}, {64, 48, 5}};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0], N_LAUNCHES = 6 };

static int pad8(int x)
{
	return (x + 7) / 8 * 8;
}

/* Runs shape s with inputs of type t in every launch setting; adds to c. */
static void run_shape(blk_context *ctx, blk_kernel *kernel, shape s, dtype t, rng *r, compare *c)
{
	int lda = pad8(s.k), ldb = pad8(s.n), ldc = pad8(s.n);
	size_t a_elems = (size_t)s.m * lda, b_elems = (size_t)s.k * ldb, c_elems = (size_t)s.m * ldc;
	void *a = rng_buffer(r, t, a_elems, -1, 1), *b = rng_buffer(r, t, b_elems, -1, 1);
	double *want = xmalloc((size_t)s.m * s.n * sizeof(double)), *scale = xmalloc((size_t)s.m * s.n * sizeof(double));
	gemm_reference(t, a, lda, 1, b, ldb, 1, s.m, s.n, s.k, want, scale);
	blk_devptr da, db, dc;
	CHECK(blk_malloc(ctx, a_elems * dtype_size(t), &da));
	CHECK(blk_malloc(ctx, b_elems * dtype_size(t), &db));
	CHECK(blk_malloc(ctx, c_elems * sizeof(float), &dc));
	CHECK(blk_copy_to_device(ctx, da, a, a_elems * dtype_size(t)));
	CHECK(blk_copy_to_device(ctx, db, b, b_elems * dtype_size(t)));

	blk_const consts[] = {{.name = "T", .type = dtype_name(t)}, {.name = "BLOCK_M", .i = 32},
	                      {.name = "BLOCK_N", .i = 32},         {.name = "BLOCK_K", .i = 16},
	                      {.name = "GROUP_M", .i = 2},          {.name = "num_warps", .i = 4}};
	/* the large tiles of the GPU's configs, by TMA (on an H100 or H200) and
	 * warp-specialized */
	blk_const big[] = {{.name = "T", .type = dtype_name(t)}, {.name = "BLOCK_M", .i = 128},
	                   {.name = "BLOCK_N", .i = 256},        {.name = "BLOCK_K", .i = 64},
	                   {.name = "GROUP_M", .i = 8},          {.name = "num_warps", .i = 8},
	                   {.name = "num_stages", .i = 5},       {.name = "tma", .i = 1},
	                   {.name = "warp_specialize", .i = 1}};
	blk_launch_options opts[N_LAUNCHES] = {
		{.consts = consts, .n_consts = 1},
		{.consts = consts, .n_consts = 6, .grid = {3, 1, 1}},
		{.consts = consts, .n_consts = 6, .grid = {7, 1, 1}},
		{.consts = consts, .n_consts = 6, .grid = {64, 1, 1}},
		{.consts = big, .n_consts = 8, .grid = {2, 1, 1}},
		{.consts = big, .n_consts = 9, .grid = {3, 1, 1}},
	};
	/* matmul_streamk(a, b, c, M, N, K, stride_am, stride_bk, stride_cm) */
	blk_arg args[] = {blk_arg_ptr(da), blk_arg_ptr(db), blk_arg_ptr(dc),  blk_arg_int(s.m), blk_arg_int(s.n),
	                  blk_arg_int(s.k), blk_arg_int(lda), blk_arg_int(ldb), blk_arg_int(ldc)};
	float *got = xmalloc(c_elems * sizeof(float));
	for (int i = 0; i < N_LAUNCHES; i++) {
		fill_device(ctx, dc, 0, c_elems * sizeof(float));
		CHECK(blk_launch(kernel, args, 9, &opts[i]));
		CHECK(blk_copy_from_device(ctx, got, dc, c_elems * sizeof(float)));
		for (int m = 0; m < s.m; m++)
			for (int n = 0; n < ldc; n++) {
				size_t i_c = (size_t)m * ldc + n, i_w = (size_t)m * s.n + n;
				if (n < s.n)
					compare_one(c, (long)i_c, got[i_c], want[i_w], scale[i_w]);
				else /* padding: never written */
					compare_one(c, (long)i_c, got[i_c], 0, 1);
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
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "matmul_streamk.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "matmul_streamk", &kernel));

	/* The f32 sum of up to 300 products, a few 2^-24 of sum |a b| each. */
	compare cs[3] = {compare_start("c (f16 inputs)", 3e-5), compare_start("c (bf16 inputs)", 3e-5),
	                 compare_start("c (f32 inputs)", 3e-5)};
	rng r = {29};
	for (int si = 0; si < N_SHAPES; si++)
		for (int t = DT_F16; t <= DT_F32; t++)
			run_shape(ctx, kernel, shapes[si], (dtype)t, &r, &cs[t]);

	char title[160];
	snprintf(title, sizeof title, "matmul_streamk %d shapes x f16, bf16, f32, 6 launches on 2 to 64 programs (%s)", N_SHAPES,
	         backend_name(ctx));
	int status = compare_report(title, cs, 3);
	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	return status;
}
