/* tests/ops: the matmuls of tests/ops/kernels/matmul_layouts.tile over every
 * layout of the operands (NN, NT, TN, TT: A as M x K or as A^T, K x M; B as
 * K x N or as B^T, N x K), by pointer tiles with masks and by tensor
 * descriptors, for f16, bf16, f32 (tf32, dot's default), f8e4m3 and i8 (i32
 * accumulator) inputs; and the epilogues of a training step fused after
 * them: C += A @ B into an existing f32 or bf16 C, and alpha, bias,
 * relu / gelu, residual and the output's cast in one kernel.
 *
 * Each case (a kernel, its types, a tile config) runs over the shapes
 * below: M, N and K multiples of no tile with rows padded to 16 elements
 * (the JIT's aligned variant, TMA for the descriptors) and not padded, K
 * below BLOCK_K, 1 x 1 (K 40), and 256 x 256 x 256 (multiples
 * of every tile). The elements between a row's end and the next row are NaN
 * (i8: -128) in A and B, so that a read the masks (or a descriptor's bounds)
 * should have kept out spoils the result, and a sentinel in C, which must
 * be left as it is; the arrays end where their last row does, so that the
 * interpreter reports a read past them.
 *
 * References: the exact products (f32: both inputs truncated to tf32, as
 * the tensor cores read them) summed in long double. Tolerances per element,
 * S = sum |a b|: K 2^-24 S (the order of the f32 additions), fp8 2^-10 S a
 * K step of 32 (wgmma's fp8 accumulation, tests/ops/matmul_tiles_api_test.c),
 * i8 exact; the epilogues add the f32 roundings of each step, gelu's
 * slope (at most 1.13) and error (2^-19 relative), and an ulp of the output
 * type.
 *
 * fp8 runs in the layouts it is used in (NT: both operands K-major, and
 * TN). On the interpreter each case runs in one tile config (taken in
 * turn); on a GPU (BLK_BACKEND=gpu; tests/gpu/run.sh, part `layouts`, with
 * BLK_TMA=1: the descriptors' tiles by TMA) the layouts and the
 * accumulations run in every config, 128 x 256 x 64 with 8 warps and 3 and
 * 4 stages among them. BLK_LAYOUTS_SHARD=I/N runs the cases whose number is
 * I modulo N (so that N processes compile at once). */
#include "ops.h"

#define KFILE "tests/ops/kernels/matmul_layouts.tile"

static blk_module *mod;
static bool on_gpu;
static int shard_i, shard_n = 1, case_no;

/* ---- tile configs and shapes ------------------------------------------------- */

typedef struct tiles {
	int bm, bn, bk, warps, stages;
} tiles;

static const tiles configs[] = {
	{64, 64, 32, 4, 3}, {128, 128, 32, 4, 4}, {128, 256, 64, 8, 3}, {128, 256, 64, 8, 4},
	{32, 64, 32, 4, 3}, /* 32 rows on 4 warps: mma.sync on sm_90a too (A^T by ldmatrix.trans) */
};
enum { N_CONFIGS = sizeof configs / sizeof configs[0] };

typedef struct shape {
	int M, N, K;
	bool pad; /* rows padded to the next multiple of 16 elements past their end */
	const char *what;
} shape;

/* (the padded shapes share the JIT's specialization: row strides multiples
 * of 16, sizes not; so do the unpadded odd one, and the multiples: three
 * compilations of a kernel, not one a shape) */
static const shape shapes[] = {
	{150, 130, 70, true, "odd, rows padded"}, {97, 75, 45, false, "odd"},
	{50, 90, 20, true, "K < BLOCK_K"},      {1, 1, 40, true, "1 x 1"},
	{256, 256, 256, false, "multiples"},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

/* The row stride of a matrix with `cols` columns in shape s. */
static int ld_of(const shape *s, int cols) { return s->pad ? (cols + 16) / 16 * 16 : cols; }

/* ---- the logical problems: A (M x K), B (K x N) and the reference ----------------- */

typedef struct problem {
	bool made;
	double *a, *b;    /* the values, A row-major M x K, B row-major K x N */
	double *sum, *err; /* A @ B, and its tolerance, M x N */
} problem;

static const dt in_types[] = {DT_F16, DT_BF16, DT_F32, DT_E4M3, DT_I8};
enum { N_TYPES = sizeof in_types / sizeof in_types[0] };
static problem problems[N_TYPES][N_SHAPES];

static int type_index(dt t)
{
	for (int i = 0; i < N_TYPES; i++)
		if (in_types[i] == t)
			return i;
	return 0;
}

/* x as the tensor cores read an f32 for a tf32 dot: its low 13 fraction bits cleared. */
static double tf32(double x)
{
	float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, 4);
	u &= 0xffffe000u;
	memcpy(&f, &u, 4);
	return f;
}

/* A random value of t: floats uniform in [-1, 1] (f8e4m3 [-4, 4]) rounded to
 * t, i8 any. */
static double rand_of(dt t)
{
	if (t == DT_I8)
		return (double)(int8_t)rng_u32();
	return round_to(t, rng_uniform(-1, 1) * (t == DT_E4M3 ? 4 : 1));
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

static problem *get_problem(dt t, int si)
{
	problem *p = &problems[type_index(t)][si];
	if (p->made)
		return p;
	const shape *s = &shapes[si];
	int M = s->M, N = s->N, K = s->K;
	p->a = xcalloc((size_t)M * K, sizeof(double));
	p->b = xcalloc((size_t)K * N, sizeof(double));
	p->sum = xcalloc((size_t)M * N, sizeof(double));
	p->err = xcalloc((size_t)M * N, sizeof(double));
	for (int i = 0; i < M * K; i++)
		p->a[i] = rand_of(t);
	for (int i = 0; i < K * N; i++)
		p->b[i] = rand_of(t);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			long double sum = 0, S = 0;
			for (int k = 0; k < K; k++) {
				double x = p->a[(size_t)i * K + k], y = p->b[(size_t)k * N + j];
				if (t == DT_F32)
					x = tf32(x), y = tf32(y);
				long double prod = (long double)x * y;
				sum += prod;
				S += fabsl(prod);
			}
			p->sum[(size_t)i * N + j] = (double)sum;
			p->err[(size_t)i * N + j] = t == DT_I8     ? 0
			                            : t == DT_E4M3 ? (K + 31) / 32 * 0x1p-10 * (double)S
			                                           : K * 0x1p-24 * (double)S;
		}
	p->made = true;
	return p;
}

/* A device copy of the matrix v (rows x cols, row-major) as type t, stored
 * transposed (cols x rows) when trans, with row stride ld; the elements
 * past each row's end are NaN (i8: -128). *ld_out gets the stride. */
static blk_devptr put_matrix(const double *v, int rows, int cols, bool trans, dt t, const shape *s, int *ld_out)
{
	int r = trans ? cols : rows, c = trans ? rows : cols, ld = ld_of(s, c);
	arr m = arr_new(t, (int64_t)(r - 1) * ld + c);
	for (int64_t i = 0; i < m.n; i++)
		set_f(m, i, t == DT_I8 ? -128 : NAN);
	for (int i = 0; i < r; i++)
		for (int j = 0; j < c; j++)
			set_f(m, (int64_t)i * ld + j, trans ? v[(size_t)j * cols + i] : v[(size_t)i * cols + j]);
	*ld_out = ld;
	return dev_from(m);
}

/* An output matrix M x N of t, row stride ldc, filled with init[] (or 0) in
 * its rows and `sentinel` past their ends. */
static arr out_matrix(dt t, const shape *s, int ldc, const double *init, double sentinel)
{
	arr m = arr_new(t, (int64_t)(s->M - 1) * ldc + s->N);
	for (int64_t i = 0; i < m.n; i++) {
		int64_t row = i / ldc, col = i % ldc;
		set_f(m, i, col >= s->N ? sentinel : init ? init[row * s->N + col] : 0);
	}
	return m;
}

/* Elements of the case's outputs off (inside the rows), and written past
 * the rows' ends. */
static long n_off, n_past;

/* Compares the output got (row stride ldc) with want within tol, and the
 * padding with the sentinel exactly; notes up to 4 mismatches in the case's
 * details under `label`, and counts them. */
static bool compare(arr got, const shape *s, int ldc, const double *want, const double *tol, double sentinel,
                    const char *label)
{
	int bad = 0;
	for (int64_t i = 0; i < got.n; i++) {
		int row = (int)(i / ldc), col = (int)(i % ldc);
		double g = get_f(got, i), w = col >= s->N ? sentinel : want[(size_t)row * s->N + col];
		double e = col >= s->N ? 0 : tol[(size_t)row * s->N + col];
		if (fabs(g - w) <= e)
			continue;
		col >= s->N ? n_past++ : n_off++;
		if (bad++ < 4)
			why("%s: [%d, %d] got %.9g, want %.9g (tolerance %.3g)%s\n", label, row, col, g, w, e,
			    col >= s->N ? ", past the row's end" : "");
	}
	if (bad > 4)
		why("%s: ... %d elements off of %lld\n", label, bad, (long long)got.n);
	return bad == 0;
}

/* What a failed case got wrong, for its line (and the counts reset). */
static const char *summary(void)
{
	static char buf[128];
	buf[0] = '\0';
	if (n_off || n_past)
		snprintf(buf, sizeof buf, " (%ld elements off, %ld written past the rows' ends)", n_off, n_past);
	n_off = n_past = 0;
	return buf;
}

/* ---- launching ------------------------------------------------------------------ */

static bool launch(const char *kernel, const blk_arg *args, int n_args, const blk_const *types, int n_types,
                   tiles g, const char *label)
{
	blk_const cs[12];
	int n = 0;
	for (int i = 0; i < n_types; i++)
		cs[n++] = types[i];
	cs[n++] = CI("BM", g.bm);
	cs[n++] = CI("BN", g.bn);
	cs[n++] = CI("BK", g.bk);
	cs[n++] = CI("num_warps", g.warps);
	cs[n++] = CI("num_stages", g.stages);
	blk_kernel *k = NULL;
	blk_status st = blk_kernel_get(mod, kernel, &k);
	if (st == BLK_SUCCESS) {
		blk_launch_options o = {.consts = cs, .n_consts = n};
		st = blk_launch(k, args, n_args, &o);
	}
	if (st != BLK_SUCCESS)
		why("%s: status %d: %s\n", label, (int)st, blk_last_error());
	return st == BLK_SUCCESS;
}

static blk_const type_const(const char *name, dt t)
{
	blk_const c = {.name = name, .type = dts[t].name};
	return c;
}

/* Whether a case runs in config c: on a GPU every config, on the
 * interpreter the one whose turn it is (turn counts the cases). */
static int turn;
static bool in_turn(int c) { return on_gpu || c == turn % N_CONFIGS; }

/* Whether this process runs the next case (BLK_LAYOUTS_SHARD). */
static bool mine(void) { return case_no++ % shard_n == shard_i; }

/* The config g with BLOCK_K at most 32 for 4-byte inputs (128-byte rows:
 * a 128 x 256 x 64 f32 tile would not fit shared memory in 3 stages). */
static tiles fit(tiles g, dt t)
{
	if (dts[t].bytes == 4 && g.bk > 32)
		g.bk = 32;
	return g;
}

static char *shape_label(char *buf, size_t cap, const shape *s)
{
	snprintf(buf, cap, "%d x %d x %d (%s)", s->M, s->N, s->K, s->what);
	return buf;
}

/* ---- the layouts ------------------------------------------------------------------ */

/* kernel mm_XX or desc_XX: C = op(A) @ op(B), C of the accumulator's type. */
static void layout_case(const char *kernel, dt t, tiles g)
{
	bool ta = kernel[strlen(kernel) - 2] == 't', tb = kernel[strlen(kernel) - 1] == 't';
	dt rt = t == DT_I8 ? DT_I32 : DT_F32;
	bool ok = true;
	for (int si = 0; si < N_SHAPES; si++) {
		const shape *s = &shapes[si];
		problem *p = get_problem(t, si);
		char label[96];
		shape_label(label, sizeof label, s);
		int lda, ldb, ldc = ld_of(s, s->N);
		blk_devptr da = put_matrix(p->a, s->M, s->K, ta, t, s, &lda);
		blk_devptr db = put_matrix(p->b, s->K, s->N, tb, t, s, &ldb);
		arr c0 = out_matrix(rt, s, ldc, NULL, 777);
		blk_devptr dc = dev_from(c0);
		blk_const ty[2] = {type_const("T", t), type_const("R", rt)};
		if (!launch(kernel, ARGS(P(da), P(db), P(dc), I(s->M), I(s->N), I(s->K), I(lda), I(ldb), I(ldc)), ty, 2, g,
		            label)) {
			ok = false;
			continue;
		}
		ok &= compare(dev_read(dc, rt, c0.n), s, ldc, p->sum, p->err, 777, label);
	}
	result(ok, "%s %s, tiles %d x %d x %d, %d warps, %d stages: %d shapes%s", kernel, dts[t].name, g.bm, g.bn, g.bk,
	       g.warps, g.stages, N_SHAPES, summary());
}

/* ---- epilogues -------------------------------------------------------------------- */

/* kernel accum_XX: C += op(A) @ B, C of ot (f32 or bf16) holding random
 * values first. */
static void accum_case(const char *kernel, dt t, dt ot, tiles g)
{
	bool ta = strstr(kernel, "tn") != NULL;
	bool ok = true;
	for (int si = 0; si < N_SHAPES; si++) {
		const shape *s = &shapes[si];
		problem *p = get_problem(t, si);
		char label[96];
		shape_label(label, sizeof label, s);
		size_t mn = (size_t)s->M * s->N;
		double *c0 = xcalloc(mn, sizeof(double)), *want = xcalloc(mn, sizeof(double));
		double *tol = xcalloc(mn, sizeof(double));
		for (size_t i = 0; i < mn; i++) {
			c0[i] = round_to(ot, rng_uniform(-4, 4));
			want[i] = c0[i] + p->sum[i];
			/* the dot's error, the f32 addition, and the rounding to ot */
			tol[i] = p->err[i] + 0x1p-23 * (fabs(c0[i]) + fabs(p->sum[i])) + ulp_of(ot, want[i]);
		}
		int lda, ldb, ldc = ld_of(s, s->N);
		blk_devptr da = put_matrix(p->a, s->M, s->K, ta, t, s, &lda);
		blk_devptr db = put_matrix(p->b, s->K, s->N, false, t, s, &ldb);
		arr c = out_matrix(ot, s, ldc, c0, -3.5);
		blk_devptr dc = dev_from(c);
		blk_const ty[2] = {type_const("T", t), type_const("OT", ot)};
		if (launch(kernel, ARGS(P(da), P(db), P(dc), I(s->M), I(s->N), I(s->K), I(lda), I(ldb), I(ldc)), ty, 2, g,
		           label))
			ok &= compare(dev_read(dc, ot, c.n), s, ldc, want, tol, -3.5, label);
		else
			ok = false;
		free(c0);
		free(want);
		free(tol);
	}
	result(ok, "%s %s into %s (C += A @ B), tiles %d x %d x %d, %d warps, %d stages: %d shapes%s", kernel,
	       dts[t].name, dts[ot].name, g.bm, g.bn, g.bk, g.warps, g.stages, N_SHAPES, summary());
}

static double gelu_ref(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }

/* kernel fused_XX: out = (act(alpha (A @ B) + bias) + residual).to(O). */
static void fused_case(const char *kernel, dt t, dt o, int act, tiles g)
{
	bool ta = strstr(kernel, "tn") != NULL, tb = strstr(kernel, "nt") != NULL;
	dt rt = t == DT_I8 ? DT_I32 : DT_F32;
	/* i8 sums reach 2^21: scaled down to values near 1, as a dequantizing epilogue does */
	double alpha = t == DT_I8 ? 0x1p-12 : -1.5;
	bool ok = true;
	for (int si = 0; si < N_SHAPES; si++) {
		const shape *s = &shapes[si];
		problem *p = get_problem(t, si);
		char label[96];
		shape_label(label, sizeof label, s);
		size_t mn = (size_t)s->M * s->N;
		double *bias = xcalloc((size_t)s->N, sizeof(double)), *res = xcalloc(mn, sizeof(double));
		double *want = xcalloc(mn, sizeof(double)), *tol = xcalloc(mn, sizeof(double));
		for (int j = 0; j < s->N; j++)
			bias[j] = round_to(o, rng_uniform(-1, 1));
		for (size_t i = 0; i < mn; i++) {
			res[i] = round_to(o, rng_uniform(-2, 2));
			double ab = alpha * p->sum[i], y = ab + bias[i % s->N];
			double h = act == 1 ? (y > 0 ? y : 0) : act == 2 ? gelu_ref(y) : y;
			want[i] = h + res[i];
			double e = fabs(alpha) * p->err[i] + 0x1p-23 * (fabs(ab) + fabs(y));
			tol[i] = (act == 2 ? 1.13 : 1) * e + (act == 2 ? 0x1p-19 * fabs(h) : 0) +
			         0x1p-23 * (fabs(h) + fabs(want[i])) + ulp_of(o, want[i]);
		}
		int lda, ldb, ldo = ld_of(s, s->N);
		blk_devptr da = put_matrix(p->a, s->M, s->K, ta, t, s, &lda);
		blk_devptr db = put_matrix(p->b, s->K, s->N, tb, t, s, &ldb);
		arr ba = arr_new(o, s->N);
		for (int j = 0; j < s->N; j++)
			set_f(ba, j, bias[j]);
		arr ra = out_matrix(o, s, ldo, res, 0), out = out_matrix(o, s, ldo, NULL, 5.25);
		blk_devptr dbias = dev_from(ba), dres = dev_from(ra), dout = dev_from(out);
		blk_const ty[4] = {type_const("T", t), type_const("R", rt), type_const("O", o), CI("ACT", act)};
		if (launch(kernel,
		           ARGS(P(da), P(db), P(dbias), P(dres), P(dout), I(s->M), I(s->N), I(s->K), I(lda), I(ldb), I(ldo),
		                F(alpha)),
		           ty, 4, g, label))
			ok &= compare(dev_read(dout, o, out.n), s, ldo, want, tol, 5.25, label);
		else
			ok = false;
		free(bias);
		free(res);
		free(want);
		free(tol);
	}
	static const char *const acts[] = {"no activation", "relu", "gelu"};
	result(ok, "%s %s -> %s, alpha %g, bias, %s, residual, tiles %d x %d x %d, %d warps, %d stages: %d shapes%s",
	       kernel, dts[t].name, dts[o].name, alpha, acts[act], g.bm, g.bn, g.bk, g.warps, g.stages, N_SHAPES,
	       summary());
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	on_gpu = blk_context_backend(ops_ctx) == BLK_BACKEND_GPU;
	const char *shard = getenv("BLK_LAYOUTS_SHARD");
	if (shard && (sscanf(shard, "%d/%d", &shard_i, &shard_n) != 2 || shard_n < 1 || shard_i < 0 || shard_i >= shard_n)) {
		printf("FAIL BLK_LAYOUTS_SHARD=%s: want I/N, 0 <= I < N\n", shard);
		shard_i = 0, shard_n = 1;
		ops_failed++;
	}
	blk_status st = blk_module_load_file(ops_ctx, KFILE, NULL, &mod);
	if (st != BLK_SUCCESS) {
		why("%s\n", blk_last_error());
		result(false, KFILE " loads (run from the repository's root)");
		return ops_finish();
	}
	/* the layouts: every kernel and input type */
	static const char *const layouts[] = {"mm_nn", "mm_nt", "mm_tn", "mm_tt",
	                                      "desc_nn", "desc_nt", "desc_tn", "desc_tt"};
	for (int l = 0; l < COUNT(layouts); l++)
		for (int ti = 0; ti < N_TYPES; ti++, turn++) {
			const char *lay = layouts[l] + strlen(layouts[l]) - 2;
			if (in_types[ti] == DT_E4M3 && strcmp(lay, "nt") && strcmp(lay, "tn"))
				continue;
			for (int c = 0; c < N_CONFIGS; c++)
				if (in_turn(c) && mine())
					layout_case(layouts[l], in_types[ti], fit(configs[c], in_types[ti]));
		}
	/* C += A @ B: f32 C (f16 and bf16 inputs) and bf16 C (bf16 inputs) */
	static const char *const accums[] = {"accum_nn", "accum_tn", "accum_desc_nn", "accum_desc_tn"};
	for (int k = 0; k < COUNT(accums); k++)
		for (int o = 0; o < 2; o++, turn++)
			for (int c = 0; c < N_CONFIGS; c++)
				if (in_turn(c) && mine())
					accum_case(accums[k], o || (k & 1) ? DT_BF16 : DT_F16, o ? DT_BF16 : DT_F32, configs[c]);
	/* the fused epilogue: (input, output) types, an activation and a
	 * config each (in turn) */
	static const char *const fused[] = {"fused_nt", "fused_tn", "fused_desc_nt", "fused_desc_tn"};
	static const dt io[][2] = {{DT_BF16, DT_BF16}, {DT_F16, DT_F16}, {DT_F32, DT_F32}, {DT_I8, DT_F16}};
	for (int k = 0; k < COUNT(fused); k++)
		for (int i = 0; i < COUNT(io); i++, turn++)
			if (mine())
				fused_case(fused[k], io[i][0], io[i][1], (k + i) % 3, fit(configs[turn % N_CONFIGS], io[i][0]));
	blk_module_destroy(mod);
	for (int t = 0; t < N_TYPES; t++)
		for (int s = 0; s < N_SHAPES; s++) {
			free(problems[t][s].a);
			free(problems[t][s].b);
			free(problems[t][s].sum);
			free(problems[t][s].err);
		}
	return ops_finish();
}
