/* Blocks that are one value repeated (full, splat, broadcast of a scalar):
 * the GPU back end holds such a block as one element for all, so every
 * reduction, scan and shape change of one must still count and place each
 * element. Interpreter and GPU must agree with the closed form. */
#include "ops.h"

static void check_f32(const char *what, blk_devptr out, int n, const float *want)
{
	float got[1024];
	blk_copy_from_device(ops_ctx, got, out, (size_t)n * sizeof(float));
	bool ok = true;
	for (int i = 0; i < n && ok; i++)
		if (got[i] != want[i]) {
			why("[%d] got %.9g, want %.9g\n", i, got[i], want[i]);
			ok = false;
		}
	result(ok, "%s", what);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	static const int sizes[] = {16, 128, 1024, 4096};
	for (int s = 0; s < 4; s++) {
		int n = sizes[s];
		blk_devptr out = dev_zeros(DT_F32, 1024);
		/* sum, max and min of a constant block of n elements */
		const char *src = "kernel k(out: *f32, N: const i32) {\n"
		                  "    let v = full((N,), 1.5, f32);\n"
		                  "    store(out, sum(v, axis = 0));\n"
		                  "    store(out + 1, max(v + 1.0, axis = 0));\n"
		                  "    store(out + 2, sum(full((N / 4, 4), 2.0, f32)));\n"
		                  "}\n";
		run_kernel(src, NULL, ARGS(P(out)), CONSTS(CI("N", n)), (grid3){1, 1, 1});
		float want[3] = {1.5f * (float)n, 2.5f, 2.0f * (float)n};
		char what[96];
		snprintf(what, sizeof what, "sum, max and 2-D sum of constant blocks of %d", n);
		check_f32(what, out, 3, want);
	}
	/* row sums of a constant 2-D block (the lane-group path) */
	{
		blk_devptr out = dev_zeros(DT_F32, 1024);
		const char *src = "kernel k(out: *f32) {\n"
		                  "    let r = sum(full((64, 128), 0.5, f32), axis = 1);\n"
		                  "    store(out + arange(0, 64), r);\n"
		                  "}\n";
		run_kernel(src, NULL, ARGS(P(out)), NO_CONSTS, (grid3){1, 1, 1});
		float want[64];
		for (int i = 0; i < 64; i++)
			want[i] = 64.0f;
		check_f32("row sums of a constant 64 x 128 block", out, 64, want);
	}
	/* a scan and shape changes of constant blocks */
	{
		blk_devptr out = dev_zeros(DT_F32, 1024);
		const char *src = "kernel k(out: *f32) {\n"
		                  "    let c = cumsum(full((256,), 1.0, f32), axis = 0);\n"
		                  "    store(out + arange(0, 256), c);\n"
		                  "    let t = trans(full((16, 32), 3.0, f32));\n"
		                  "    let o = arange(0, 32)[:, None] * 16 + arange(0, 16)[None, :];\n"
		                  "    store(out + 256 + o, t);\n"
		                  "    let j = reshape(join(full((64,), 1.0, f32), full((64,), 2.0, f32)), (128,));\n"
		                  "    store(out + 768 + arange(0, 128), j);\n"
		                  "}\n";
		run_kernel(src, NULL, ARGS(P(out)), NO_CONSTS, (grid3){1, 1, 1});
		float want[896];
		for (int i = 0; i < 256; i++)
			want[i] = (float)(i + 1);
		for (int i = 0; i < 512; i++)
			want[256 + i] = 3.0f;
		for (int i = 0; i < 128; i++)
			want[768 + i] = i % 2 ? 2.0f : 1.0f;
		check_f32("cumsum, trans and join of constant blocks", out, 896, want);
	}
	return ops_finish();
}
