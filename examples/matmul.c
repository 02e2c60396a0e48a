/* matmul.c: runs examples/matmul.tile, C = A @ B in f16 with an f32
 * accumulator, with two choices of its tile sizes.
 *
 *   build/examples/matmul [path/to/matmul.tile]
 *
 * matmul's tile sizes are const parameters with no defaults: an
 * @autotune(...) list of configurations names candidates. A launch that
 * does not set them tunes (on a GPU: every configuration is timed at the
 * first launch of each key value and the fastest kept; on the interpreter
 * the first one is taken); a launch can also set them itself through
 * blk_launch_options.consts (blkc's -D). Both are shown, and each must
 * match the reference.
 *
 * B is stored as an N x K matrix (as the weight of a linear layer usually
 * is) and read as its transpose through the strides: element (k, n) of B is
 * at b + k * 1 + n * K. */
#include "common.h"

enum { M = 150, N = 130, K = 70 }; /* multiples of no tile size: every edge is masked */

int main(int argc, char **argv)
{
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	/* A: M x K row-major; Bt: N x K row-major (B transposed); C: M x N. */
	f16 *a = xmalloc(M * K * sizeof(f16)), *bt = xmalloc(N * K * sizeof(f16)), *c = xmalloc(M * N * sizeof(f16));
	float *af = xmalloc(M * K * sizeof(float)), *btf = xmalloc(N * K * sizeof(float));
	rng r = {6};
	rng_fill_f16(&r, a, af, M * K, -1, 1);
	rng_fill_f16(&r, bt, btf, N * K, -1, 1);

	blk_devptr da, db, dc;
	CHECK(blk_malloc(ctx, M * K * sizeof(f16), &da));
	CHECK(blk_malloc(ctx, N * K * sizeof(f16), &db));
	CHECK(blk_malloc(ctx, M * N * sizeof(f16), &dc));
	CHECK(blk_copy_to_device(ctx, da, a, M * K * sizeof(f16)));
	CHECK(blk_copy_to_device(ctx, db, bt, N * K * sizeof(f16)));

	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "matmul.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "matmul", &kernel));

	/* The reference, in double from the same f16 values. */
	double *want = xmalloc(M * N * sizeof(double));
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += (double)af[m * K + k] * btf[n * K + k];
			want[m * N + n] = s;
		}

	/* matmul(a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
	 * stride_cm, stride_cn) */
	blk_arg args[] = {blk_arg_ptr(da), blk_arg_ptr(db), blk_arg_ptr(dc), blk_arg_int(M), blk_arg_int(N),
	                  blk_arg_int(K),  blk_arg_int(K),  blk_arg_int(1),  blk_arg_int(1), blk_arg_int(K),
	                  blk_arg_int(N),  blk_arg_int(1)};

	/* Launch 1: no consts, so the runtime picks an @autotune config.
	 * Launch 2: 64 x 64 x 32 tiles in groups of 2 tile rows: a 3 x 3 grid
	 * of tiles whose last group is one row high. */
	blk_const small[] = {{.name = "BLOCK_M", .i = 64},
	                     {.name = "BLOCK_N", .i = 64},
	                     {.name = "BLOCK_K", .i = 32},
	                     {.name = "GROUP_M", .i = 2}};
	blk_launch_options opts[2] = {[1] = {.consts = small, .n_consts = 4}}; /* opts[0]: all defaults */
	compare cmp[2] = {compare_start("c (tuned config)", 2e-3), compare_start("c (64x64x32, group 2)", 2e-3)};
	for (int i = 0; i < 2; i++) {
		memset(c, 0, M * N * sizeof(f16)); /* start from zeros each time */
		CHECK(blk_copy_to_device(ctx, dc, c, M * N * sizeof(f16)));
		CHECK(blk_launch(kernel, args, 12, &opts[i]));
		CHECK(blk_copy_from_device(ctx, c, dc, M * N * sizeof(f16)));
		/* Products of f16 values are exact in f32 and 70 of them add little
		 * error; rounding C to f16 dominates: half an ulp, 2^-11 relative
		 * (measured against max(|c|, 1), as sums cancel). */
		compare_f16s(&cmp[i], c, want, M * N, 1.0);
	}

	char title[128];
	snprintf(title, sizeof title, "matmul %dx%dx%d f16, 2 tilings (%s)", M, N, K, backend_name(ctx));
	int status = compare_report(title, cmp, 2);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(a), free(bt), free(c), free(af), free(btf), free(want);
	return status;
}
