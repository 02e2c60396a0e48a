/* matmul_grouped.c: runs examples/matmul_grouped.tile, 7 matrix products
 * of different shapes in one launch, as the experts of a mixture-of-experts
 * layer would be.
 *
 *   build/examples/matmul_grouped [path/to/matmul_grouped.tile]
 *
 * The groups: shapes that are multiples of no tile (150x130x70), an empty
 * group (M = 0: no tile), K much longer than M and N (37x45x300), 1x1x1, K
 * shorter than a K step (64x48x5), K = 0 (C all zeros), and 96x80x64; B
 * stored K x N in some groups, as its N x K transpose in the others; rows
 * padded to a multiple of 8 elements. Inputs and outputs f16 -> f16,
 * bf16 -> bf16, f32 -> f32 and bf16 -> f32; the tuned configuration on the
 * kernel's own grid (num_sms(): 4 programs on the interpreter), and 32x32x16
 * tiles on grids of 1, 5 and 64 programs.
 *
 * The kernel takes the matrices' addresses as arrays of pointers in device
 * memory (a blk_devptr is the address a kernel sees: the host copies the
 * values over), and the shapes and strides as i32 arrays. C is filled with
 * NaN before each launch: every element of each C must be written, and the
 * padding past each row must not be. Checked against a reference in double
 * (f32 inputs as tf32), each element's error measured against sum_k |a b|. */
#include "common.h"

enum { G = 7 };
static const int shapes[G][3] = {{150, 130, 70}, {0, 64, 32}, {37, 45, 300}, {1, 1, 1},
                                 {64, 48, 5},    {20, 33, 0}, {96, 80, 64}};

static int pad8(int x)
{
	return (x + 7) / 8 * 8;
}

/* One group on the host and the device. */
typedef struct group {
	int m, n, k, lda, ldc, b_trans, sbk, sbn;
	size_t a_elems, b_elems, c_elems;
	blk_devptr da, db, dc;
	double *want, *scale;
} group;

static blk_devptr device_alloc(blk_context *ctx, size_t bytes)
{
	blk_devptr p;
	CHECK(blk_malloc(ctx, bytes ? bytes : 16, &p));
	return p;
}

/* Runs the G groups with inputs t and outputs out; adds to c. */
static void run_types(blk_context *ctx, blk_kernel *kernel, dtype t, dtype out, rng *r, compare *c)
{
	group gs[G];
	int32_t shape_arr[G * 3], stride_arr[G * 4];
	blk_devptr a_ptrs[G], b_ptrs[G], c_ptrs[G];
	for (int g = 0; g < G; g++) {
		group *p = &gs[g];
		*p = (group){.m = shapes[g][0], .n = shapes[g][1], .k = shapes[g][2], .b_trans = g % 2};
		p->lda = pad8(p->k), p->ldc = pad8(p->n);
		/* B: K x N with rows of pad8(N), or N x K with rows of pad8(K) */
		p->sbk = p->b_trans ? 1 : pad8(p->n);
		p->sbn = p->b_trans ? pad8(p->k) : 1;
		p->a_elems = (size_t)p->m * p->lda;
		p->b_elems = p->b_trans ? (size_t)p->n * pad8(p->k) : (size_t)p->k * pad8(p->n);
		p->c_elems = (size_t)p->m * p->ldc;
		void *a = rng_buffer(r, t, p->a_elems, -1, 1), *b = rng_buffer(r, t, p->b_elems, -1, 1);
		p->want = xmalloc((size_t)p->m * p->n * sizeof(double) + 1);
		p->scale = xmalloc((size_t)p->m * p->n * sizeof(double) + 1);
		gemm_reference(t, a, p->lda, 1, b, p->sbk, p->sbn, p->m, p->n, p->k, p->want, p->scale);
		p->da = a_ptrs[g] = device_alloc(ctx, p->a_elems * dtype_size(t));
		p->db = b_ptrs[g] = device_alloc(ctx, p->b_elems * dtype_size(t));
		p->dc = c_ptrs[g] = device_alloc(ctx, p->c_elems * dtype_size(out));
		if (p->a_elems)
			CHECK(blk_copy_to_device(ctx, p->da, a, p->a_elems * dtype_size(t)));
		if (p->b_elems)
			CHECK(blk_copy_to_device(ctx, p->db, b, p->b_elems * dtype_size(t)));
		free(a), free(b);
		shape_arr[3 * g] = p->m, shape_arr[3 * g + 1] = p->n, shape_arr[3 * g + 2] = p->k;
		stride_arr[4 * g] = p->lda, stride_arr[4 * g + 1] = p->sbk, stride_arr[4 * g + 2] = p->sbn;
		stride_arr[4 * g + 3] = p->ldc;
	}
	blk_devptr da_ptrs = device_alloc(ctx, sizeof a_ptrs), db_ptrs = device_alloc(ctx, sizeof b_ptrs),
		   dc_ptrs = device_alloc(ctx, sizeof c_ptrs), dshapes = device_alloc(ctx, sizeof shape_arr),
		   dstrides = device_alloc(ctx, sizeof stride_arr);
	CHECK(blk_copy_to_device(ctx, da_ptrs, a_ptrs, sizeof a_ptrs));
	CHECK(blk_copy_to_device(ctx, db_ptrs, b_ptrs, sizeof b_ptrs));
	CHECK(blk_copy_to_device(ctx, dc_ptrs, c_ptrs, sizeof c_ptrs));
	CHECK(blk_copy_to_device(ctx, dshapes, shape_arr, sizeof shape_arr));
	CHECK(blk_copy_to_device(ctx, dstrides, stride_arr, sizeof stride_arr));

	blk_const consts[] = {{.name = "T", .type = dtype_name(t)}, {.name = "TO", .type = dtype_name(out)},
	                      {.name = "BLOCK_M", .i = 32},         {.name = "BLOCK_N", .i = 32},
	                      {.name = "BLOCK_K", .i = 16},         {.name = "GROUP_M", .i = 2},
	                      {.name = "num_warps", .i = 4}};
	blk_launch_options opts[4] = {
		{.consts = consts, .n_consts = 2},
		{.consts = consts, .n_consts = 7, .grid = {1, 1, 1}},
		{.consts = consts, .n_consts = 7, .grid = {5, 1, 1}},
		{.consts = consts, .n_consts = 7, .grid = {64, 1, 1}},
	};
	/* matmul_grouped(a_ptrs, b_ptrs, c_ptrs, shapes, strides, G) */
	blk_arg args[] = {blk_arg_ptr(da_ptrs), blk_arg_ptr(db_ptrs),  blk_arg_ptr(dc_ptrs),
	                  blk_arg_ptr(dshapes), blk_arg_ptr(dstrides), blk_arg_int(G)};
	for (int i = 0; i < 4; i++) {
		for (int g = 0; g < G; g++)
			if (gs[g].c_elems)
				fill_device(ctx, gs[g].dc, 0xFF, gs[g].c_elems * dtype_size(out));
		CHECK(blk_launch(kernel, args, 6, &opts[i]));
		for (int g = 0; g < G; g++) {
			group *p = &gs[g];
			void *got = xmalloc(p->c_elems * dtype_size(out) + 1);
			if (p->c_elems)
				CHECK(blk_copy_from_device(ctx, got, p->dc, p->c_elems * dtype_size(out)));
			for (int m = 0; m < p->m; m++)
				for (int n = 0; n < p->ldc; n++) {
					size_t ic = (size_t)m * p->ldc + n, iw = (size_t)m * p->n + n;
					float v = dtype_get(out, got, ic);
					if (n < p->n)
						compare_one(c, (long)ic, v, p->want[iw], p->scale[iw]);
					else /* padding: still the NaN it was filled with */
						compare_one(c, (long)ic, isnan(v) ? 0 : 1, 0, 1);
				}
			free(got);
		}
	}
	for (int g = 0; g < G; g++) {
		CHECK(blk_free(ctx, gs[g].da));
		CHECK(blk_free(ctx, gs[g].db));
		CHECK(blk_free(ctx, gs[g].dc));
		free(gs[g].want), free(gs[g].scale);
	}
	blk_devptr arrays[] = {da_ptrs, db_ptrs, dc_ptrs, dshapes, dstrides};
	for (int i = 0; i < 5; i++)
		CHECK(blk_free(ctx, arrays[i]));
}

int main(int argc, char **argv)
{
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));
	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "matmul_grouped.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "matmul_grouped", &kernel));

	/* The f32 sum (a few 2^-24 of sum |a b| for 300 products) and half an
	 * ulp of the output type: 2^-11 relative for f16, 2^-8 for bf16. */
	const dtype pairs[4][2] = {{DT_F16, DT_F16}, {DT_BF16, DT_BF16}, {DT_F32, DT_F32}, {DT_BF16, DT_F32}};
	compare cs[4] = {compare_start("f16 -> f16", 3e-5 + 0x1p-11), compare_start("bf16 -> bf16", 3e-5 + 0x1p-8),
	                 compare_start("f32 -> f32", 3e-5), compare_start("bf16 -> f32", 3e-5)};
	rng r = {30};
	for (int i = 0; i < 4; i++)
		run_types(ctx, kernel, pairs[i][0], pairs[i][1], &r, &cs[i]);

	char title[160];
	snprintf(title, sizeof title, "matmul_grouped %d groups (one empty, one K = 0) x 4 type pairs, grids of 1 to 64 (%s)",
	         G, backend_name(ctx));
	int status = compare_report(title, cs, 4);
	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	return status;
}
