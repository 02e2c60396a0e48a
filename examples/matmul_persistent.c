/* matmul_persistent.c: runs examples/matmul_persistent.tile, C = A @ B in
 * f16 with an f32 accumulator, by a persistent kernel (one program per
 * multiprocessor, each looping over tiles) that reads A and B and writes C
 * through tensor descriptors.
 *
 *   build/examples/matmul_persistent [path/to/matmul_persistent.tile]
 *
 * The grid comes from the kernel's clause, minimum(num_sms(), tiles): the
 * device's multiprocessor count on a GPU, 4 on the interpreter. Two
 * launches, as in matmul.c: an @autotune config, then 64 x 64 x 32 tiles in
 * groups of 2 tile rows (9 tiles: on the interpreter each of its 4 programs
 * takes 2 or 3). The sizes are multiples of no tile size: every edge of A,
 * B and C is cut by the descriptors' bounds. */
#include "common.h"

enum { M = 150, N = 130, K = 70 };

int main(int argc, char **argv)
{
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	/* A: M x K, B: K x N, C: M x N, all row-major. */
	f16 *a = xmalloc(M * K * sizeof(f16)), *b = xmalloc(K * N * sizeof(f16)), *c = xmalloc(M * N * sizeof(f16));
	float *af = xmalloc(M * K * sizeof(float)), *bf = xmalloc(K * N * sizeof(float));
	rng r = {11};
	rng_fill_f16(&r, a, af, M * K, -1, 1);
	rng_fill_f16(&r, b, bf, K * N, -1, 1);

	blk_devptr da, db, dc;
	CHECK(blk_malloc(ctx, M * K * sizeof(f16), &da));
	CHECK(blk_malloc(ctx, K * N * sizeof(f16), &db));
	CHECK(blk_malloc(ctx, M * N * sizeof(f16), &dc));
	CHECK(blk_copy_to_device(ctx, da, a, M * K * sizeof(f16)));
	CHECK(blk_copy_to_device(ctx, db, b, K * N * sizeof(f16)));

	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "matmul_persistent.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "matmul_persistent", &kernel));

	/* The reference, in double from the same f16 values. */
	double *want = xmalloc(M * N * sizeof(double));
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += (double)af[m * K + k] * bf[k * N + n];
			want[m * N + n] = s;
		}

	/* matmul_persistent(a, b, c, M, N, K, stride_am, stride_bk, stride_cm) */
	blk_arg args[] = {blk_arg_ptr(da), blk_arg_ptr(db), blk_arg_ptr(dc), blk_arg_int(M), blk_arg_int(N),
	                  blk_arg_int(K),  blk_arg_int(K),  blk_arg_int(N),  blk_arg_int(N)};
	blk_const small[] = {{.name = "BLOCK_M", .i = 64},
	                     {.name = "BLOCK_N", .i = 64},
	                     {.name = "BLOCK_K", .i = 32},
	                     {.name = "GROUP_M", .i = 2}};
	blk_launch_options opts[2] = {[1] = {.consts = small, .n_consts = 4}}; /* opts[0]: all defaults */
	compare cmp[2] = {compare_start("c (tuned config)", 2e-3), compare_start("c (64x64x32, group 2)", 2e-3)};
	for (int i = 0; i < 2; i++) {
		/* C starts as NaN: an element the kernel did not write shows */
		for (int j = 0; j < M * N; j++)
			c[j] = 0x7E00;
		CHECK(blk_copy_to_device(ctx, dc, c, M * N * sizeof(f16)));
		CHECK(blk_launch(kernel, args, 9, &opts[i]));
		CHECK(blk_copy_from_device(ctx, c, dc, M * N * sizeof(f16)));
		/* as matmul.c: rounding C to f16 dominates, 2^-11 relative to max(|c|, 1) */
		compare_f16s(&cmp[i], c, want, M * N, 1.0);
	}

	char title[128];
	snprintf(title, sizeof title, "persistent matmul %dx%dx%d f16, descriptors, 2 tilings (%s)", M, N, K,
	         backend_name(ctx));
	int status = compare_report(title, cmp, 2);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	free(a), free(b), free(c), free(af), free(bf), free(want);
	return status;
}
