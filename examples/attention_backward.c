/* attention_backward.c: runs the forward and the backward kernels of
 * stdlib/nn/attention.tile (those of blk.nn.attention), and checks O, lse, dQ, dK and
 * dV against a reference in double, and the gradients also against central
 * finite differences of the reference's forward, on a few shapes: causal and
 * not, grouped-query (GROUP query heads per key/value head), f16 and bf16,
 * sequence lengths that are no multiple of the blocks (1 included). Both
 * ways to get dQ run: the deterministic one twice (the two results must be
 * bit-identical), the atomic one once.
 *
 *   build/examples/attention_backward [path/to/attention.tile]
 *
 * The loss is L = sum(O * dO) for
 * a fixed random dO, so dL/dO = dO and (dQ, dK, dV) = dL/d(Q, K, V). */
#include "common.h"

typedef struct tcase {
	int Z, H, group, N, D, causal, bf16;
	int far; /* scores around -100 and below: exp(-lse) overflows f32, so a key past N_CTX must get P = 0 */
} tcase;

/* Small shapes, for the interpreter. Blocks: forward 32 x 16; dK/dV 16
 * query rows x 32 keys; dQ 32 query rows x 16 keys. */
static const tcase cases[] = {
    {1, 2, 1, 70, 64, 0, 0, 0}, /* 70: a multiple of no block */
    {1, 2, 1, 70, 64, 1, 1, 0},
    {2, 4, 2, 37, 32, 1, 0, 0}, /* grouped-query: 2 query heads per key/value head */
    {1, 4, 4, 50, 16, 0, 1, 0}, /* multi-query: one key/value head */
    {1, 2, 2, 1, 16, 1, 0, 0},  /* a single position */
    {1, 3, 1, 33, 32, 0, 0, 0},
    {2, 4, 2, 70, 64, 1, 1, 0}, /* grouped-query, causal, bf16, at HEAD_DIM 64 */
    {1, 2, 1, 20, 256, 1, 0, 0},
    {1, 2, 1, 37, 16, 0, 0, 1},
    {1, 4, 2, 45, 32, 0, 0, 1},
    {1, 2, 1, 40, 16, 1, 0, 1},
};
enum { FWD_M = 32, FWD_N = 16, KV_M = 16, KV_N = 32, Q_M = 32, Q_N = 16 };

/* ---- bf16 (f16 is common.h's; named apart from any bf16 helpers there) ---- */

static uint16_t bf16_round(float f) /* round to nearest even; no NaN here */
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	return (uint16_t)((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

static float bf16_value(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;
	memcpy(&f, &x, sizeof f);
	return f;
}

static float elem_to_float(uint16_t h, int bf16) { return bf16 ? bf16_value(h) : f16_to_float(h); }

/* n random values of the element type in [lo, hi); `as_float` gets them as the kernel sees them */
static void fill(rng *r, uint16_t *out, float *as_float, size_t n, float lo, float hi, int bf16)
{
	for (size_t i = 0; i < n; i++) {
		float f = rng_uniform(r, lo, hi);
		out[i] = bf16 ? bf16_round(f) : f16_from_float(f);
		as_float[i] = elem_to_float(out[i], bf16);
	}
}

/* ---- the reference ----------------------------------------------------------- */

typedef struct problem {
	tcase c;
	double scale;
	const float *q, *k, *v, *dout; /* q, dout: Z x H x N x D; k, v: Z x (H / group) x N x D */
} problem;

static size_t at_q(const tcase *c, int z, int h, int i) { return (((size_t)z * c->H + h) * c->N + i) * c->D; }
static size_t at_kv(const tcase *c, int z, int h, int i)
{
	return (((size_t)z * (c->H / c->group) + h / c->group) * c->N + i) * c->D;
}

/* P of one (z, h) (N x N, row i: the keys i sees) and its lse, in double */
static void probabilities(const problem *p, int z, int h, double *P, double *lse)
{
	const tcase *c = &p->c;
	for (int i = 0; i < c->N; i++) {
		int keys = c->causal ? i + 1 : c->N;
		double m = -INFINITY, l = 0;
		for (int j = 0; j < keys; j++) {
			double s = 0;
			for (int d = 0; d < c->D; d++)
				s += (double)p->q[at_q(c, z, h, i) + d] * p->k[at_kv(c, z, h, j) + d];
			P[(size_t)i * c->N + j] = p->scale * s;
			m = fmax(m, p->scale * s);
		}
		for (int j = 0; j < keys; j++)
			l += exp(P[(size_t)i * c->N + j] - m);
		for (int j = 0; j < c->N; j++)
			P[(size_t)i * c->N + j] = j < keys ? exp(P[(size_t)i * c->N + j] - m) / l : 0;
		if (lse)
			lse[((size_t)z * c->H + h) * c->N + i] = m + log(l);
	}
}

/* O = P V (and lse); with dq, dk, dv (zero-filled) also the gradients of sum(O * dout) */
static void reference(const problem *p, double *o, double *lse, double *dq, double *dk, double *dv)
{
	const tcase *c = &p->c;
	int N = c->N, D = c->D;
	double *P = xmalloc((size_t)N * N * sizeof(double)), *dS = xmalloc((size_t)N * N * sizeof(double));
	for (int z = 0; z < c->Z; z++)
		for (int h = 0; h < c->H; h++) {
			probabilities(p, z, h, P, lse);
			for (int i = 0; i < N; i++)
				for (int d = 0; d < D; d++) {
					double acc = 0;
					for (int j = 0; j < N; j++)
						acc += P[(size_t)i * N + j] * p->v[at_kv(c, z, h, j) + d];
					o[at_q(c, z, h, i) + d] = acc;
				}
			if (!dq)
				continue;
			/* dP = dO V^T; dS = P (dP - rowsum(P dP)) */
			for (int i = 0; i < N; i++) {
				double delta = 0;
				for (int j = 0; j < N; j++) {
					double dp = 0;
					for (int d = 0; d < D; d++)
						dp += (double)p->dout[at_q(c, z, h, i) + d] * p->v[at_kv(c, z, h, j) + d];
					dS[(size_t)i * N + j] = dp;
					delta += P[(size_t)i * N + j] * dp;
				}
				for (int j = 0; j < N; j++)
					dS[(size_t)i * N + j] = P[(size_t)i * N + j] * (dS[(size_t)i * N + j] - delta);
			}
			for (int i = 0; i < N; i++)
				for (int j = 0; j < N; j++)
					for (int d = 0; d < D; d++) {
						double ds = dS[(size_t)i * N + j];
						dq[at_q(c, z, h, i) + d] += p->scale * ds * p->k[at_kv(c, z, h, j) + d];
						dk[at_kv(c, z, h, j) + d] += p->scale * ds * p->q[at_q(c, z, h, i) + d];
						dv[at_kv(c, z, h, j) + d] += P[(size_t)i * N + j] * p->dout[at_q(c, z, h, i) + d];
					}
		}
	free(P), free(dS);
}

/* the loss sum(O * dout) of the reference forward, for finite differences */
static double loss(const problem *p, double *o_scratch)
{
	reference(p, o_scratch, NULL, NULL, NULL, NULL);
	double l = 0;
	size_t n = (size_t)p->c.Z * p->c.H * p->c.N * p->c.D;
	for (size_t i = 0; i < n; i++)
		l += o_scratch[i] * p->dout[i];
	return l;
}

/* ---- the kernels ------------------------------------------------------------- */

typedef struct kernels {
	blk_kernel *fwd, *pre, *dkdv, *dq, *dq_cast;
} kernels;

typedef struct buffers {
	blk_devptr q, k, v, o, lse, dout, delta, dq_acc, dq, dk, dv;
} buffers;

static void launch(blk_kernel *k, const blk_arg *args, int n, const tcase *c, int block_m, int block_n, int atomic)
{
	blk_const cs[] = {
	    {.name = "T", .type = c->bf16 ? "bf16" : "f16"},
	    {.name = "HEAD_DIM", .i = c->D},
	    {.name = "BLOCK_M", .i = block_m},
	    {.name = "CAUSAL", .i = c->causal},
	    {.name = "GROUP", .i = c->group},
	    {.name = "ATOMIC_DQ", .i = atomic},
	    {.name = "BLOCK_N", .i = block_n},
	};
	/* each kernel gets those of its parameters (a const it lacks is an error) */
	blk_const given[7];
	int nc = 0;
	for (int i = 0; i < blk_kernel_num_params(k); i++) {
		blk_param_info info;
		CHECK(blk_kernel_param(k, i, &info));
		for (int j = 0; j < 7; j++)
			if (!strcmp(info.name, cs[j].name))
				given[nc++] = cs[j];
	}
	blk_launch_options opt = {.consts = given, .n_consts = nc};
	CHECK(blk_launch(k, args, n, &opt));
}

static void forward(const kernels *ks, const buffers *b, const tcase *c, double scale)
{
	int N = c->N, D = c->D, Hkv = c->H / c->group;
	const int qs[4] = {c->H * N * D, N * D, D, 1}, kvs[4] = {Hkv * N * D, N * D, D, 1};
	blk_arg a[25] = {blk_arg_ptr(b->q), blk_arg_ptr(b->k), blk_arg_ptr(b->v), blk_arg_ptr(b->o), blk_arg_ptr(b->lse)};
	for (int i = 0; i < 4; i++) {
		a[5 + i] = blk_arg_int(qs[i]);
		a[9 + i] = blk_arg_int(kvs[i]);
		a[13 + i] = blk_arg_int(kvs[i]);
		a[17 + i] = blk_arg_int(qs[i]);
	}
	a[21] = blk_arg_int(c->Z), a[22] = blk_arg_int(c->H), a[23] = blk_arg_int(N), a[24] = blk_arg_float(scale);
	launch(ks->fwd, a, 25, c, FWD_M, FWD_N, 0);
}

/* dq, dk, dv from o, lse and dout; atomic: dQ by atomics into dq_acc */
static void backward(const kernels *ks, const buffers *b, const tcase *c, double scale, int atomic)
{
	blk_arg zhn[3] = {blk_arg_int(c->Z), blk_arg_int(c->H), blk_arg_int(c->N)};
	blk_arg pre[7] = {blk_arg_ptr(b->o), blk_arg_ptr(b->dout), blk_arg_ptr(b->delta), blk_arg_ptr(b->dq_acc),
	                  zhn[0], zhn[1], zhn[2]};
	launch(ks->pre, pre, 7, c, Q_M, 0, atomic);
	blk_arg kv[13] = {blk_arg_ptr(b->q),     blk_arg_ptr(b->k),  blk_arg_ptr(b->v),  blk_arg_ptr(b->dout),
	                  blk_arg_ptr(b->lse),   blk_arg_ptr(b->delta), blk_arg_ptr(b->dk), blk_arg_ptr(b->dv),
	                  blk_arg_ptr(b->dq_acc), zhn[0], zhn[1], zhn[2], blk_arg_float(scale)};
	launch(ks->dkdv, kv, 13, c, KV_M, KV_N, atomic);
	if (atomic) {
		blk_arg cast[5] = {blk_arg_ptr(b->dq_acc), blk_arg_ptr(b->dq), zhn[0], zhn[1], zhn[2]};
		launch(ks->dq_cast, cast, 5, c, Q_M, 0, 0);
	} else {
		blk_arg dq[11] = {blk_arg_ptr(b->q),   blk_arg_ptr(b->k),     blk_arg_ptr(b->v), blk_arg_ptr(b->dout),
		                  blk_arg_ptr(b->lse), blk_arg_ptr(b->delta), blk_arg_ptr(b->dq), zhn[0],
		                  zhn[1],              zhn[2],                blk_arg_float(scale)};
		launch(ks->dq, dq, 11, c, Q_M, Q_N, 0);
	}
}

/* ---- one case -------------------------------------------------------------------- */

static void compare_elems(compare *cmp, const uint16_t *got, const double *want, size_t n, int bf16, double floor)
{
	/* the data's scale: the largest reference value, at least floor */
	for (size_t i = 0; i < n; i++)
		floor = fmax(floor, fabs(want[i]));
	for (size_t i = 0; i < n; i++)
		compare_one(cmp, (long)i, elem_to_float(got[i], bf16), want[i], floor);
}

static int run_case(blk_context *ctx, const kernels *ks, const tcase *c, rng *r)
{
	const size_t nq = (size_t)c->Z * c->H * c->N * c->D, nkv = nq / c->group, nl = (size_t)c->Z * c->H * c->N;
	const double scale = 1 / sqrt(c->D);
	uint16_t *q = xmalloc(nq * 2), *k = xmalloc(nkv * 2), *v = xmalloc(nkv * 2), *dout = xmalloc(nq * 2);
	float *qf = xmalloc(nq * 4), *kf = xmalloc(nkv * 4), *vf = xmalloc(nkv * 4), *doutf = xmalloc(nq * 4);
	/* scores with a spread of about +-1.3; far: q in [5, 6), k in [-6, -5), scores near -5 sqrt(D) */
	fill(r, q, qf, nq, c->far ? 5 : -2, c->far ? 6 : 2, c->bf16);
	fill(r, k, kf, nkv, c->far ? -6 : -2, c->far ? -5 : 2, c->bf16);
	fill(r, v, vf, nkv, -1, 1, c->bf16);
	fill(r, dout, doutf, nq, -1, 1, c->bf16);

	buffers b;
	blk_devptr *bufs[] = {&b.q, &b.k, &b.v, &b.o, &b.lse, &b.dout, &b.delta, &b.dq_acc, &b.dq, &b.dk, &b.dv};
	size_t bytes[] = {nq * 2, nkv * 2, nkv * 2, nq * 2, nl * 4, nq * 2, nl * 4, nq * 4, nq * 2, nkv * 2, nkv * 2};
	for (int i = 0; i < 11; i++)
		CHECK(blk_malloc(ctx, bytes[i], bufs[i]));
	CHECK(blk_copy_to_device(ctx, b.q, q, nq * 2));
	CHECK(blk_copy_to_device(ctx, b.k, k, nkv * 2));
	CHECK(blk_copy_to_device(ctx, b.v, v, nkv * 2));
	CHECK(blk_copy_to_device(ctx, b.dout, dout, nq * 2));

	forward(ks, &b, c, scale);
	/* the deterministic backward twice, then the atomic one */
	uint16_t *got[3][3]; /* [run][dq, dk, dv] */
	uint16_t *zero = xmalloc(nq * 2);
	for (int run = 0; run < 3; run++) {
		CHECK(blk_copy_to_device(ctx, b.dq, zero, nq * 2)); /* no result left from the run before */
		CHECK(blk_copy_to_device(ctx, b.dk, zero, nkv * 2));
		CHECK(blk_copy_to_device(ctx, b.dv, zero, nkv * 2));
		backward(ks, &b, c, scale, run == 2);
		got[run][0] = xmalloc(nq * 2), got[run][1] = xmalloc(nkv * 2), got[run][2] = xmalloc(nkv * 2);
		CHECK(blk_copy_from_device(ctx, got[run][0], b.dq, nq * 2));
		CHECK(blk_copy_from_device(ctx, got[run][1], b.dk, nkv * 2));
		CHECK(blk_copy_from_device(ctx, got[run][2], b.dv, nkv * 2));
	}
	uint16_t *o = xmalloc(nq * 2);
	float *lse = xmalloc(nl * 4);
	CHECK(blk_copy_from_device(ctx, o, b.o, nq * 2));
	CHECK(blk_copy_from_device(ctx, lse, b.lse, nl * 4));

	problem p = {*c, scale, qf, kf, vf, doutf};
	double *want_o = xmalloc(nq * 8), *want_lse = xmalloc(nl * 8);
	double *want[3] = {xmalloc(nq * 8), xmalloc(nkv * 8), xmalloc(nkv * 8)};
	reference(&p, want_o, want_lse, want[0], want[1], want[2]);

	/* Tolerances, relative to each tensor's largest value: P and dS are
	 * rounded to the element type before their products, and the outputs
	 * once more (f16 2^-11, bf16 2^-8 relative each): a few roundings'
	 * worth, and dS's cancellation (dP - D) doubles it. Far from 0 (the
	 * far cases' K has entries near -5.5) dQ = scale dS K cancels too: a
	 * row of dS sums to 0, so dQ is dS times K less its mean, and dS's
	 * rounding meets |K| (5.5) where dQ sees its spread (0.3): 4 times more. */
	double tol = (c->bf16 ? 1.5e-2 : 4e-3) * (c->far ? 4 : 1);
	static const char *names[3] = {"dq", "dk", "dv"};
	compare cmp[11];
	int nc = 0;
	cmp[nc] = compare_start("o", tol);
	compare_elems(&cmp[nc++], o, want_o, nq, c->bf16, 0);
	cmp[nc] = compare_start("lse", 1e-5);
	compare_floats(&cmp[nc++], lse, want_lse, (long)nl, 1.0);
	size_t sizes[3] = {nq, nkv, nkv};
	/* dQ and dK are sums of dS = P (dP - D), whose terms cancel: with one
	 * key (N 1) they are 0 exactly and the GPU's roundings leave a few ulp
	 * (an f16 subnormal); each gradient is compared relative to its own
	 * scale, but at least a tenth of the largest gradient's (dV = P^T dO,
	 * which does not cancel) */
	double gmax = 0;
	for (int g = 0; g < 3; g++)
		for (size_t i = 0; i < sizes[g]; i++)
			gmax = fmax(gmax, fabs(want[g][i]));
	for (int g = 0; g < 3; g++) {
		cmp[nc] = compare_start(names[g], tol);
		compare_elems(&cmp[nc++], got[0][g], want[g], sizes[g], c->bf16, gmax / 10);
		cmp[nc] = compare_start(g == 0 ? "dq (atomic)" : g == 1 ? "dk (atomic)" : "dv (atomic)", tol);
		compare_elems(&cmp[nc++], got[2][g], want[g], sizes[g], c->bf16, gmax / 10);
	}

	/* the deterministic runs, bit for bit */
	cmp[nc] = compare_start("deterministic rerun", 0);
	for (int g = 0; g < 3; g++)
		compare_one(&cmp[nc], g, memcmp(got[0][g], got[1][g], sizes[g] * 2) != 0, 0, 1);
	nc++;

	/* central differences of the reference forward's loss, at 4 elements
	 * of each input: checks the reference's gradients (to 1e-6) and the
	 * kernels' (to the tolerance above, relative to the tensor's largest) */
	compare fd_ref = compare_start("finite differences vs reference", 1e-6);
	compare fd_blk = compare_start("finite differences vs kernels", tol);
	double *o_scratch = xmalloc(nq * 8);
	float *inputs[3] = {qf, kf, vf};
	for (int g = 0; g < 3; g++) {
		double floor = gmax / 10;
		for (size_t i = 0; i < sizes[g]; i++)
			floor = fmax(floor, fabs(want[g][i]));
		for (int t = 0; t < 4; t++) {
			size_t i = (size_t)rng_int(r, 0, (int64_t)sizes[g] - 1);
			float keep = inputs[g][i];
			const double h = 1.0 / 1024; /* x + h and x - h are exact in float */
			inputs[g][i] = (float)(keep + h);
			double up = loss(&p, o_scratch);
			inputs[g][i] = (float)(keep - h);
			double down = loss(&p, o_scratch);
			inputs[g][i] = keep;
			double fd = (up - down) / (2 * h);
			compare_one(&fd_ref, (long)i, want[g][i], fd, fmax(floor, 1e-3));
			compare_one(&fd_blk, (long)i, elem_to_float(got[0][g][i], c->bf16), fd, floor);
		}
	}
	cmp[nc++] = fd_ref;
	cmp[nc++] = fd_blk;

	char title[160];
	snprintf(title, sizeof title, "  Z=%d H=%d GROUP=%d N=%d HEAD_DIM=%d %s%s%s", c->Z, c->H, c->group, c->N, c->D,
	         c->bf16 ? "bf16" : "f16", c->causal ? " causal" : "", c->far ? ", scores near -100" : "");
	int status = compare_report(title, cmp, nc);

	for (int i = 0; i < 11; i++)
		CHECK(blk_free(ctx, *bufs[i]));
	for (int run = 0; run < 3; run++)
		for (int g = 0; g < 3; g++)
			free(got[run][g]);
	for (int g = 0; g < 3; g++)
		free(want[g]);
	free(q), free(k), free(v), free(dout), free(qf), free(kf), free(vf), free(doutf), free(zero), free(o), free(lse);
	free(want_o), free(want_lse), free(o_scratch);
	return status;
}

int main(int argc, char **argv)
{
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));

	blk_module *mod;
	kernels ks;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "../stdlib/nn/attention.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "attention_fwd", &ks.fwd));
	CHECK(blk_kernel_get(mod, "attention_bwd_preprocess", &ks.pre));
	CHECK(blk_kernel_get(mod, "attention_bwd_dkdv", &ks.dkdv));
	CHECK(blk_kernel_get(mod, "attention_bwd_dq", &ks.dq));
	CHECK(blk_kernel_get(mod, "attention_bwd_dq_cast", &ks.dq_cast));

	rng r = {29};
	int failed = 0, n = (int)(sizeof cases / sizeof cases[0]);
	for (int i = 0; i < n; i++)
		failed += run_case(ctx, &ks, &cases[i], &r);

	printf("attention backward, %d cases (%s): %s\n", n, backend_name(ctx), failed ? "FAIL" : "OK");
	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	return failed ? 1 : 0;
}
