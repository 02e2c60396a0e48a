/* w4a16_gemv.c: runs examples/w4a16_gemv.tile, y = W x with W stored as
 * 4-bit integers plus one f16 scale per GROUP weights, x and y in f16.
 *
 *   build/examples/w4a16_gemv [path/to/w4a16_gemv.tile]
 *
 * The host side of weight-only quantization: packing. Each weight is a
 * 4-bit code q in 0..15 standing for (q - 8) * scale; two codes share a
 * byte, the even k in the low nibble, the odd k in the high one. */
#include "common.h"

#include <string.h>

enum { N = 200, K = 512, GROUP = 128 }; /* N: not a multiple of BLOCK_N (32) */

/* Row n of the codes, K values in 0..15, into K / 2 bytes. */
static void pack_int4(const uint8_t *codes, uint8_t *bytes)
{
	for (int j = 0; j < K / 2; j++)
		bytes[j] = (uint8_t)(codes[2 * j] | codes[2 * j + 1] << 4);
}

int main(int argc, char **argv)
{
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	static uint8_t codes[N][K], w[N][K / 2];
	static f16 scales[N][K / GROUP];
	static float scalef[N][K / GROUP], xf[K];
	f16 x[K], y[N];
	rng r = {9};
	for (int n = 0; n < N; n++) {
		for (int k = 0; k < K; k++)
			codes[n][k] = (uint8_t)rng_int(&r, 0, 15);
		pack_int4(codes[n], w[n]);
		rng_fill_f16(&r, scales[n], scalef[n], K / GROUP, 0.005f, 0.02f);
	}
	rng_fill_f16(&r, x, xf, K, -1, 1);

	blk_devptr dw, ds, dx, dy;
	CHECK(blk_malloc(ctx, sizeof w, &dw));
	CHECK(blk_malloc(ctx, sizeof scales, &ds));
	CHECK(blk_malloc(ctx, sizeof x, &dx));
	CHECK(blk_malloc(ctx, sizeof y, &dy));
	CHECK(blk_copy_to_device(ctx, dw, w, sizeof w));
	CHECK(blk_copy_to_device(ctx, ds, scales, sizeof scales));
	CHECK(blk_copy_to_device(ctx, dx, x, sizeof x));

	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "w4a16_gemv.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "w4a16_gemv", &kernel));

	/* w4a16_gemv(w, scales, x, y, N, K, stride_wn, stride_sn); GROUP,
	 * BLOCK_N and BLOCK_K keep their defaults (128, 32, 128). The row
	 * strides are in elements: bytes for w, f16 values for scales. */
	blk_arg args[] = {blk_arg_ptr(dw), blk_arg_ptr(ds), blk_arg_ptr(dx),     blk_arg_ptr(dy),
	                  blk_arg_int(N),  blk_arg_int(K),  blk_arg_int(K / 2), blk_arg_int(K / GROUP)};
	CHECK(blk_launch(kernel, args, 8, NULL));
	CHECK(blk_copy_from_device(ctx, y, dy, sizeof y));

	/* Reference from the unpacked codes, in double. The kernel adds in f32
	 * and rounds y to f16 (2^-11 relative): tolerance 1e-3, measured
	 * against max(|y|, 0.01) (typical |y| is about 0.6). */
	double want[N];
	for (int n = 0; n < N; n++) {
		double s = 0;
		for (int k = 0; k < K; k++)
			s += (codes[n][k] - 8) * (double)scalef[n][k / GROUP] * xf[k];
		want[n] = s;
	}
	compare c = compare_start("y", 1e-3);
	compare_f16s(&c, y, want, N, 0.01);

	char title[128];
	snprintf(title, sizeof title, "w4a16_gemv N=%d K=%d group %d (%s)", N, K, GROUP, backend_name(ctx));
	int status = compare_report(title, &c, 1);

	/* Steps wider than a scale group (BLOCK_K = 512 spans four groups):
	 * each weight takes its own group's scale. */
	blk_const wide[] = {{.name = "BLOCK_K", .i = 512}, {.name = "BLOCK_N", .i = 8}};
	blk_launch_options opt = {.consts = wide, .n_consts = 2};
	memset(y, 0, sizeof y); /* so that a row the second launch misses shows */
	CHECK(blk_copy_to_device(ctx, dy, y, sizeof y));
	CHECK(blk_launch(kernel, args, 8, &opt));
	CHECK(blk_copy_from_device(ctx, y, dy, sizeof y));
	compare cw = compare_start("y", 1e-3);
	compare_f16s(&cw, y, want, N, 0.01);
	snprintf(title, sizeof title, "w4a16_gemv N=%d K=%d group %d, steps of 512 (%s)", N, K, GROUP, backend_name(ctx));
	status |= compare_report(title, &cw, 1);

	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	return status;
}
