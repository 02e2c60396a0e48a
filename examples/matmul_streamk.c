/* matmul_streamk.c: runs examples/matmul_streamk.tile, C = A @ B by a
 * persistent grid whose programs take equal ranges of (tile, K step)
 * iterations: pieces of tiles added into C with atomics (matmul_streamk),
 * or summed in a fixed order by the last program of each tile to arrive
 * (matmul_streamk_fixup).
 *
 *   build/examples/matmul_streamk [path/to/matmul_streamk.tile]
 *
 * Shapes that are multiples of no tile (150x130x70), K much longer than M
 * and N (37x45x300), 1x1x1, and K shorter than a K step (64x48x5); inputs
 * f16, bf16 and f32; six launches: the tuned configuration on the kernel's
 * own grid (num_sms(): 4 programs on the interpreter), 32x32x16 tiles on
 * grids of 3, 7 and 64 programs, which cut the tiles at other places (64 is
 * more programs than some shapes have iterations: some take none) and leave
 * 0 to 21 of the 25 tiles to the data-parallel loop, and 128x256x64 tiles
 * on 2 and 3 programs with the GPU's options: by TMA, then warp-specialized
 * too (the interpreter ignores them). Rows of A, B and C are padded to a
 * multiple of 8 elements; C's padding must keep what it was filled with.
 *
 * The fixup kernel stores C as f32 (f32 inputs) or bf16 (f16 and bf16
 * inputs), into a C filled with NaN (an element left unwritten shows), and
 * runs twice: the same bits both times. Checked against a reference in
 * double from the same inputs (f32 inputs as tf32), each element's error
 * measured against sum_k |a b|. */
#include "common.h"

typedef struct shape {
	int m, n, k;
} shape;

static const shape shapes[] = {{150, 130, 70}, {37, 45, 300}, {1, 1, 1}, {64, 48, 5}};
/* The fixup kernel's workspace: 2 tiles of up to 128 x 256 for each of up
 * to 160 programs (num_sms() on the GPUs of today, and the 64 of a launch
 * here); its counters: one per tile, for tiles of 32 x 32 or more. */
enum { N_SHAPES = sizeof shapes / sizeof shapes[0], N_LAUNCHES = 6, WS_ELEMS = 160 * 2 * 128 * 256, MAX_TILES = 5 * 5 };

static int pad8(int x)
{
	return (x + 7) / 8 * 8;
}

/* The kernels, and the fixup kernel's workspace and counters. */
typedef struct kernels {
	blk_kernel *atomic, *fixup;
	blk_devptr ws, counters;
} kernels;

/* Compares C (M rows of ldc elements of type `out`) with the reference; the
 * padding past N must still hold what it was filled with (0, or NaN). */
static void check_c(compare *c, shape s, dtype out, const void *got, int ldc, const double *want,
                    const double *scale)
{
	for (int m = 0; m < s.m; m++)
		for (int n = 0; n < ldc; n++) {
			size_t i_c = (size_t)m * ldc + n, i_w = (size_t)m * s.n + n;
			float v = dtype_get(out, got, i_c);
			if (n < s.n)
				compare_one(c, (long)i_c, v, want[i_w], scale[i_w]);
			else
				compare_one(c, (long)i_c, v == 0 || isnan(v) ? 0 : 1, 0, 1);
		}
}

/* Runs shape s with inputs of type t in every launch setting, with both
 * kernels; adds to the comparisons. */
static void run_shape(blk_context *ctx, const kernels *ks, shape s, dtype t, rng *r, compare *c_atomic,
                      compare *c_fixup, compare *c_bits)
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
		CHECK(blk_launch(ks->atomic, args, 9, &opts[i]));
		CHECK(blk_copy_from_device(ctx, got, dc, c_elems * sizeof(float)));
		check_c(c_atomic, s, DT_F32, got, ldc, want, scale);
	}
	/* the fixup kernel, C of type `out` filled with NaN, twice: the same bits */
	dtype out = t == DT_F32 ? DT_F32 : DT_BF16;
	blk_const with_to[16];
	size_t c_bytes = c_elems * dtype_size(out);
	void *runs[2] = {xmalloc(c_bytes), xmalloc(c_bytes)};
	/* fixup(a, b, c, ws, counters, M, N, K, stride_am, stride_bk, stride_cm, ws_elems) */
	blk_arg f_args[] = {blk_arg_ptr(da),  blk_arg_ptr(db),  blk_arg_ptr(dc),   blk_arg_ptr(ks->ws),
	                    blk_arg_ptr(ks->counters), blk_arg_int(s.m), blk_arg_int(s.n), blk_arg_int(s.k),
	                    blk_arg_int(lda), blk_arg_int(ldb), blk_arg_int(ldc),  blk_arg_int(WS_ELEMS)};
	for (int i = 0; i < N_LAUNCHES; i++) {
		blk_launch_options o = opts[i];
		memcpy(with_to, o.consts, (size_t)o.n_consts * sizeof *with_to);
		with_to[o.n_consts] = (blk_const){.name = "TO", .type = dtype_name(out)};
		o.consts = with_to, o.n_consts++;
		for (int run = 0; run < 2; run++) {
			fill_device(ctx, dc, 0xFF, c_bytes);
			CHECK(blk_launch(ks->fixup, f_args, 12, &o));
			CHECK(blk_copy_from_device(ctx, runs[run], dc, c_bytes));
			check_c(c_fixup, s, out, runs[run], ldc, want, scale);
		}
		char what[128];
		snprintf(what, sizeof what, "fixup %dx%dx%d %s, launch %d, two runs", s.m, s.n, s.k, dtype_name(t), i);
		compare_bits(c_bits, what, runs[0], runs[1], c_bytes);
	}
	free(runs[0]), free(runs[1]);
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
	kernels ks;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "matmul_streamk.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "matmul_streamk", &ks.atomic));
	CHECK(blk_kernel_get(mod, "matmul_streamk_fixup", &ks.fixup));
	CHECK(blk_malloc(ctx, (size_t)WS_ELEMS * sizeof(float), &ks.ws));
	CHECK(blk_malloc(ctx, MAX_TILES * sizeof(int32_t), &ks.counters));
	fill_device(ctx, ks.counters, 0, MAX_TILES * sizeof(int32_t));

	/* The f32 sum of up to 300 products, a few 2^-24 of sum |a b| each;
	 * the fixup kernel's bf16 C, half an ulp more (2^-8 relative). */
	compare cs[5] = {compare_start("atomic, f16 inputs", 3e-5), compare_start("atomic, bf16 inputs", 3e-5),
	                 compare_start("atomic, f32 inputs", 3e-5), compare_start("fixup", 3e-5 + 0x1p-8),
	                 compare_start("fixup, same bits", 0)};
	rng r = {29};
	for (int si = 0; si < N_SHAPES; si++)
		for (int t = DT_F16; t <= DT_F32; t++)
			run_shape(ctx, &ks, shapes[si], (dtype)t, &r, &cs[t], &cs[3], &cs[4]);

	char title[160];
	snprintf(title, sizeof title, "matmul_streamk %d shapes x f16, bf16, f32, 6 launches on 2 to 64 programs (%s)", N_SHAPES,
	         backend_name(ctx));
	int status = compare_report(title, cs, 5);
	CHECK(blk_free(ctx, ks.ws));
	CHECK(blk_free(ctx, ks.counters));
	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	return status;
}
