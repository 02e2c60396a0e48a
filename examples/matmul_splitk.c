/* matmul_splitk.c: runs examples/matmul_splitk.tile, C = A @ B with K cut
 * into SPLIT_K slices, in its three forms: atomic adds into an f32 C; a
 * workspace of partial tiles summed by a second kernel; the same workspace
 * summed by the last program of each tile to arrive.
 *
 *   build/examples/matmul_splitk [path/to/matmul_splitk.tile]
 *
 * Every form runs on shapes that are multiples of no tile (150x130x70), with
 * K much longer than M and N (37x45x300), a 1x1x1 product and K shorter than
 * one K step (64x48x5); for inputs T = f16, bf16 and f32; and in three
 * configurations: none given (@autotune chooses; the interpreter takes the
 * first), 32x32x16 tiles in 3 slices, and 16x32x16 tiles in 8 slices (more
 * slices than the 5 K steps of K = 70: three are empty). The workspace forms
 * store C as f32, bf16 or f16 (TO), one per configuration.
 *
 * Checked against a reference in double from the same inputs (f32 inputs
 * truncated to tf32, as dot reads them): the error of each element is
 * measured against sum_k |a b| (what rounding in the sum is proportional
 * to). The two deterministic forms must also give the same bits in two
 * runs, and, with the configuration given, the same bits as each other (the
 * same sum, in the same order). C is filled with NaN before each of their
 * launches, so an element left unwritten shows. */
#include "common.h"

typedef struct shape {
	int m, n, k;
} shape;

static const shape shapes[] = {{150, 130, 70}, {37, 45, 300}, {1, 1, 1}, {64, 48, 5}};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0], WS_SLICES = 8 };

static const dtype out_types[3] = {DT_F32, DT_BF16, DT_F16};

/* The kernels, and the buffers every problem shares. */
typedef struct kernels {
	blk_kernel *atomic, *partial, *reduce, *fused;
} kernels;

/* One problem: A (M x K) and B of type t on the device, B stored K x N
 * row-major or as its N x K transpose; the reference and its scale. */
typedef struct problem {
	shape s;
	dtype t;
	int b_trans;
	blk_devptr da, db, dc, dws, dnsplit, dcounters;
	double *want, *scale;
} problem;

static problem make_problem(blk_context *ctx, shape s, dtype t, int b_trans, rng *r)
{
	problem p = {.s = s, .t = t, .b_trans = b_trans};
	size_t mk = (size_t)s.m * s.k, kn = (size_t)s.k * s.n, mn = (size_t)s.m * s.n;
	void *a = rng_buffer(r, t, mk, -1, 1), *b = rng_buffer(r, t, kn, -1, 1);
	p.want = xmalloc(mn * sizeof(double));
	p.scale = xmalloc(mn * sizeof(double));
	/* B: K x N row-major, or stored as its N x K transpose */
	gemm_reference(t, a, s.k, 1, b, b_trans ? 1 : s.n, b_trans ? s.k : 1, s.m, s.n, s.k, p.want, p.scale);
	CHECK(blk_malloc(ctx, mk * dtype_size(t), &p.da));
	CHECK(blk_malloc(ctx, kn * dtype_size(t), &p.db));
	CHECK(blk_malloc(ctx, mn * sizeof(float), &p.dc));
	CHECK(blk_malloc(ctx, WS_SLICES * mn * sizeof(float), &p.dws));
	CHECK(blk_malloc(ctx, sizeof(int32_t), &p.dnsplit));
	/* one counter a tile, for the smallest tiles used (16 x 16 would do) */
	size_t n_counters = (size_t)((s.m + 15) / 16) * ((s.n + 15) / 16);
	CHECK(blk_malloc(ctx, n_counters * sizeof(int32_t), &p.dcounters));
	CHECK(blk_copy_to_device(ctx, p.da, a, mk * dtype_size(t)));
	CHECK(blk_copy_to_device(ctx, p.db, b, kn * dtype_size(t)));
	fill_device(ctx, p.dcounters, 0, n_counters * sizeof(int32_t));
	free(a), free(b);
	return p;
}

static void free_problem(blk_context *ctx, problem *p)
{
	blk_devptr ptrs[] = {p->da, p->db, p->dc, p->dws, p->dnsplit, p->dcounters};
	for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
		CHECK(blk_free(ctx, ptrs[i]));
	free(p->want), free(p->scale);
}

/* The tolerance of an element of C stored as `out`, relative to the scale:
 * the f32 sum of up to 300 products (a few 2^-24 each), and half an ulp of
 * the output type (2^-8 relative for bf16, 2^-11 for f16). */
static double tolerance(dtype out)
{
	return 3e-5 + (out == DT_BF16 ? 0x1p-8 : out == DT_F16 ? 0x1p-11 : 0);
}

/* Copies C (M x N of `out`) back and compares it; returns the bytes read
 * (the caller frees them). */
static void *check_c(blk_context *ctx, const problem *p, dtype out, compare *c)
{
	size_t mn = (size_t)p->s.m * p->s.n;
	void *got = xmalloc(mn * dtype_size(out));
	CHECK(blk_copy_from_device(ctx, got, p->dc, mn * dtype_size(out)));
	for (size_t i = 0; i < mn; i++)
		compare_one(c, (long)i, dtype_get(out, got, i), p->want[i], p->scale[i]);
	return got;
}

/* Runs the three forms on problem p with the launch's consts `cfg` (T and
 * TO are added here); adds to the comparisons. */
static void run_forms(blk_context *ctx, const kernels *ks, const problem *p, const blk_const *cfg, int n_cfg,
                      dtype out, compare *c_atomic, compare *c_det, compare *c_bits)
{
	const shape s = p->s;
	size_t mn = (size_t)s.m * s.n;
	blk_const consts[8];
	memcpy(consts, cfg, (size_t)n_cfg * sizeof *cfg);
	consts[n_cfg] = (blk_const){.name = "T", .type = dtype_name(p->t)};
	consts[n_cfg + 1] = (blk_const){.name = "TO", .type = dtype_name(out)};
	blk_launch_options with_t = {.consts = consts, .n_consts = n_cfg + 1};
	blk_launch_options with_to = {.consts = consts, .n_consts = n_cfg + 2};
	blk_launch_options reduce_to = {.consts = &consts[n_cfg + 1], .n_consts = 1};
	/* strides of B: K x N row-major, or its N x K transpose */
	int sbk = p->b_trans ? 1 : s.n, sbn = p->b_trans ? s.k : 1;

	/* atomic: C (f32) zeroed first */
	fill_device(ctx, p->dc, 0, mn * sizeof(float));
	blk_arg a_args[] = {blk_arg_ptr(p->da), blk_arg_ptr(p->db), blk_arg_ptr(p->dc), blk_arg_int(s.m),
	                    blk_arg_int(s.n),   blk_arg_int(s.k),   blk_arg_int(s.k),   blk_arg_int(1),
	                    blk_arg_int(sbk),   blk_arg_int(sbn),   blk_arg_int(s.n),   blk_arg_int(1)};
	CHECK(blk_launch(ks->atomic, a_args, 12, &with_t));
	free(check_c(ctx, p, DT_F32, c_atomic));

	/* workspace + reduce, twice */
	void *runs[4];
	for (int run = 0; run < 2; run++) {
		fill_device(ctx, p->dc, 0xFF, mn * dtype_size(out)); /* NaN */
		blk_arg p_args[] = {blk_arg_ptr(p->da), blk_arg_ptr(p->db), blk_arg_ptr(p->dws),
		                    blk_arg_ptr(p->dnsplit), blk_arg_int(s.m), blk_arg_int(s.n),
		                    blk_arg_int(s.k), blk_arg_int(s.k), blk_arg_int(1),
		                    blk_arg_int(sbk), blk_arg_int(sbn), blk_arg_int(WS_SLICES)};
		CHECK(blk_launch(ks->partial, p_args, 12, &with_t));
		blk_arg r_args[] = {blk_arg_ptr(p->dws), blk_arg_ptr(p->dnsplit), blk_arg_ptr(p->dc), blk_arg_int(s.m),
		                    blk_arg_int(s.n),    blk_arg_int(s.n),        blk_arg_int(1)};
		CHECK(blk_launch(ks->reduce, r_args, 7, &reduce_to));
		runs[run] = check_c(ctx, p, out, c_det);
	}
	/* fused, twice (the second finds the counters the first reset) */
	for (int run = 2; run < 4; run++) {
		fill_device(ctx, p->dc, 0xFF, mn * dtype_size(out));
		blk_arg f_args[] = {blk_arg_ptr(p->da), blk_arg_ptr(p->db), blk_arg_ptr(p->dc),
		                    blk_arg_ptr(p->dws), blk_arg_ptr(p->dcounters), blk_arg_int(s.m),
		                    blk_arg_int(s.n), blk_arg_int(s.k), blk_arg_int(s.k), blk_arg_int(1),
		                    blk_arg_int(sbk), blk_arg_int(sbn), blk_arg_int(s.n), blk_arg_int(1),
		                    blk_arg_int(WS_SLICES)};
		CHECK(blk_launch(ks->fused, f_args, 15, &with_to));
		runs[run] = check_c(ctx, p, out, c_det);
	}
	char what[160];
	size_t bytes = mn * dtype_size(out);
	snprintf(what, sizeof what, "%dx%dx%d %s -> %s, workspace, two runs", s.m, s.n, s.k, dtype_name(p->t),
	         dtype_name(out));
	compare_bits(c_bits, what, runs[0], runs[1], bytes);
	snprintf(what, sizeof what, "%dx%dx%d %s -> %s, fused, two runs", s.m, s.n, s.k, dtype_name(p->t),
	         dtype_name(out));
	compare_bits(c_bits, what, runs[2], runs[3], bytes);
	if (n_cfg > 0) { /* the same configuration: the same sum */
		snprintf(what, sizeof what, "%dx%dx%d %s -> %s, workspace against fused", s.m, s.n, s.k,
		         dtype_name(p->t), dtype_name(out));
		compare_bits(c_bits, what, runs[0], runs[2], bytes);
	}
	for (int i = 0; i < 4; i++)
		free(runs[i]);
}

int main(int argc, char **argv)
{
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));
	blk_module *mod;
	kernels ks;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "matmul_splitk.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "matmul_splitk_atomic", &ks.atomic));
	CHECK(blk_kernel_get(mod, "matmul_splitk_partial", &ks.partial));
	CHECK(blk_kernel_get(mod, "splitk_reduce", &ks.reduce));
	CHECK(blk_kernel_get(mod, "matmul_splitk_fused", &ks.fused));

	const blk_const cfg_3[] = {{.name = "BLOCK_M", .i = 32}, {.name = "BLOCK_N", .i = 32},
	                           {.name = "BLOCK_K", .i = 16}, {.name = "GROUP_M", .i = 2},
	                           {.name = "SPLIT_K", .i = 3},  {.name = "num_warps", .i = 4}};
	const blk_const cfg_8[] = {{.name = "BLOCK_M", .i = 16}, {.name = "BLOCK_N", .i = 32},
	                           {.name = "BLOCK_K", .i = 16}, {.name = "GROUP_M", .i = 1},
	                           {.name = "SPLIT_K", .i = 8},  {.name = "num_warps", .i = 2}};
	const blk_const *cfgs[3] = {NULL, cfg_3, cfg_8};
	const int n_cfgs[3] = {0, 6, 6};

	compare cs[5] = {compare_start("atomic (f32)", tolerance(DT_F32)),
	                 compare_start("deterministic, f32", tolerance(DT_F32)),
	                 compare_start("deterministic, bf16", tolerance(DT_BF16)),
	                 compare_start("deterministic, f16", tolerance(DT_F16)), compare_start("same bits", 0)};
	rng r = {28};
	for (int si = 0; si < N_SHAPES; si++)
		for (int t = DT_F16; t <= DT_F32; t++) {
			problem p = make_problem(ctx, shapes[si], (dtype)t, si % 2, &r);
			for (int ci = 0; ci < 3; ci++)
				run_forms(ctx, &ks, &p, cfgs[ci], n_cfgs[ci], out_types[ci], &cs[0], &cs[1 + ci], &cs[4]);
			free_problem(ctx, &p);
		}

	char title[160];
	snprintf(title, sizeof title, "matmul_splitk %d shapes x f16, bf16, f32, atomic and deterministic (%s)",
	         N_SHAPES, backend_name(ctx));
	int status = compare_report(title, cs, 5);
	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	return status;
}
