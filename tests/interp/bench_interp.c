/* bench_interp: the interpreter's speed on one core (and on several
 * threads), for docs/performance.md. Not a test: tests/interp/bench.sh
 * builds and runs it on demand.
 *
 *   vector add   out = x + y over 16M f32, BLOCK 1024 (16384 programs)
 *   softmax      1024 x 1024 f32, a row a program: max, sub, exp, sum, div
 *   matmul       256 x 256 x 256, f16 inputs, f32 accumulation, 64 x 64 tiles
 *
 * Usage: bench_interp [threads] (default 1). Prints one line per kernel. */
#include "kb.h"

#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double timed_run(KB *b, const InterpArg *args, int n_args, const InterpBuffer *bufs, int n_bufs, int gx,
                        int gy, int threads)
{
	InterpOptions o = {.grid = {gx, gy, 1}, .threads = threads};
	Diag d;
	diag_init(&d);
	double best = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		double t0 = now();
		if (!kb_run(b, args, n_args, bufs, n_bufs, &o, &d)) {
			fprintf(stderr, "%s", d.out.data ? d.out.data : "run failed\n");
			exit(1);
		}
		double t = now() - t0;
		best = t < best ? t : best;
	}
	diag_free(&d);
	return best;
}

static void bench_vadd(int threads)
{
	enum { N = 1 << 24, BLOCK = 1024 };
	KB b;
	kb_begin(&b, "vadd");
	Value *x = kb_param(&b, "x", tP(SK_F32, 1)), *y = kb_param(&b, "y", tP(SK_F32, 1)),
	      *out = kb_param(&b, "out", tP(SK_F32, 1)), *n = kb_param(&b, "n", tS(SK_I32));
	Type bi = tB(tS(SK_I32), BLOCK);
	Value *start = kb_op(&b, OP_MUL, tS(SK_I32), kb_pid(&b, 0), kb_ci(&b, tS(SK_I32), BLOCK), NULL);
	Value *offs = kb_op(&b, OP_ADD, bi, kb_op(&b, OP_SPLAT, bi, start, NULL, NULL), kb_arange(&b, 0, BLOCK), NULL);
	Value *mask = kb_op_a(&b, OP_CMP, tB(tS(SK_I1), BLOCK), CMP_LT, offs, kb_op(&b, OP_SPLAT, bi, n, NULL, NULL), NULL);
	Value *s = kb_op(&b, OP_ADD, tB(tS(SK_F32), BLOCK), kb_load(&b, kb_ptrs(&b, x, offs), mask, NULL),
	                 kb_load(&b, kb_ptrs(&b, y, offs), mask, NULL), NULL);
	kb_store(&b, kb_ptrs(&b, out, offs), s, mask);
	kb_ret(&b);
	float *xs = malloc((size_t)N * 4), *ys = malloc((size_t)N * 4), *os = calloc(N, 4);
	for (int i = 0; i < N; i++)
		xs[i] = (float)i, ys[i] = 0.5f * (float)i;
	InterpBuffer bufs[] = {{"x", xs, (size_t)N * 4}, {"y", ys, (size_t)N * 4}, {"out", os, (size_t)N * 4}};
	InterpArg args[] = {interp_ptr(xs), interp_ptr(ys), interp_ptr(os), interp_int(N)};
	double t = timed_run(&b, args, 4, bufs, 3, N / BLOCK, 1, threads);
	printf("vector add  16M f32, BLOCK 1024, %d thread%s: %.3f s, %.1f M elements/s\n", threads,
	       threads > 1 ? "s" : "", t, N / t / 1e6);
	kb_free(&b);
	free(xs), free(ys), free(os);
}

static void bench_softmax(int threads)
{
	enum { R = 1024, C = 1024 };
	KB b;
	kb_begin(&b, "softmax");
	Value *x = kb_param(&b, "x", tP(SK_F32, 1)), *out = kb_param(&b, "out", tP(SK_F32, 1));
	Type bi = tB(tS(SK_I32), C), bf = tB(tS(SK_F32), C);
	Value *row = kb_op(&b, OP_MUL, tS(SK_I32), kb_pid(&b, 0), kb_ci(&b, tS(SK_I32), C), NULL);
	Value *offs = kb_op(&b, OP_ADD, bi, kb_op(&b, OP_SPLAT, bi, row, NULL, NULL), kb_arange(&b, 0, C), NULL);
	Value *v = kb_load(&b, kb_ptrs(&b, x, offs), NULL, NULL);
	Op *mx = kb_combine_op(&b, OP_REDUCE, &v, 1, 0, false);
	Region *top = b.r;
	b.r = &mx->regions[0];
	Value *m2 = kb_op(&b, OP_MAX, tS(SK_F32), b.r->args[0], b.r->args[1], NULL);
	kb_yield(&b, &m2, 1);
	b.r = top;
	Value *e = kb_op_a(&b, OP_MATH, bf, MATH_EXP,
	                   kb_op(&b, OP_SUB, bf, v, kb_op(&b, OP_SPLAT, bf, mx->results[0], NULL, NULL), NULL), NULL, NULL);
	Op *sm = kb_combine_op(&b, OP_REDUCE, &e, 1, 0, false);
	b.r = &sm->regions[0];
	Value *s2 = kb_op(&b, OP_ADD, tS(SK_F32), b.r->args[0], b.r->args[1], NULL);
	kb_yield(&b, &s2, 1);
	b.r = top;
	Value *y = kb_op(&b, OP_DIV, bf, e, kb_op(&b, OP_SPLAT, bf, sm->results[0], NULL, NULL), NULL);
	kb_store(&b, kb_ptrs(&b, out, offs), y, NULL);
	kb_ret(&b);
	float *xs = malloc((size_t)R * C * 4), *os = calloc((size_t)R * C, 4);
	for (int i = 0; i < R * C; i++)
		xs[i] = (float)(rnd() % 1000) / 100.0f;
	InterpBuffer bufs[] = {{"x", xs, (size_t)R * C * 4}, {"out", os, (size_t)R * C * 4}};
	InterpArg args[] = {interp_ptr(xs), interp_ptr(os)};
	double t = timed_run(&b, args, 2, bufs, 2, R, 1, threads);
	printf("softmax     1024 x 1024 f32, %d thread%s: %.3f s, %.1f M elements/s\n", threads, threads > 1 ? "s" : "",
	       t, (double)R * C / t / 1e6);
	kb_free(&b);
	free(xs), free(os);
}

static void bench_matmul(int threads)
{
	enum { M = 256, N = 256, K = 256, BM = 64, BN = 64, BK = 64 };
	KB b;
	kb_begin(&b, "matmul");
	Value *a = kb_param(&b, "a", tP(SK_F16, 1)), *bb = kb_param(&b, "b", tP(SK_F16, 1)),
	      *c = kb_param(&b, "c", tP(SK_F32, 1));
	Type i32 = tS(SK_I32);
	Value *rm = kb_op(&b, OP_MUL, i32, kb_pid(&b, 0), kb_ci(&b, i32, BM), NULL);
	Value *rn = kb_op(&b, OP_MUL, i32, kb_pid(&b, 1), kb_ci(&b, i32, BN), NULL);
	/* rows[BM, 1] * K and cols[1, BN] */
	Value *am = kb_op(&b, OP_ADD, tB(i32, BM), kb_op(&b, OP_SPLAT, tB(i32, BM), rm, NULL, NULL), kb_arange(&b, 0, BM), NULL);
	Value *bn = kb_op(&b, OP_ADD, tB(i32, BN), kb_op(&b, OP_SPLAT, tB(i32, BN), rn, NULL, NULL), kb_arange(&b, 0, BN), NULL);
	Value *am2 = kb_op_a(&b, OP_EXPAND_DIMS, tB2(i32, BM, 1), 1, am, NULL, NULL);
	Value *bn2 = kb_op_a(&b, OP_EXPAND_DIMS, tB2(i32, 1, BN), 0, bn, NULL, NULL);
	Value *kk = kb_arange(&b, 0, BK);
	Value *ak = kb_op_a(&b, OP_EXPAND_DIMS, tB2(i32, 1, BK), 0, kk, NULL, NULL);
	Value *bk = kb_op_a(&b, OP_EXPAND_DIMS, tB2(i32, BK, 1), 1, kk, NULL, NULL);
	/* a offsets [BM, BK] = am2 * K + ak; b offsets [BK, BN] = bk * N + bn2 */
	Value *aoff = kb_op(&b, OP_ADD, tB2(i32, BM, BK),
	                    kb_op(&b, OP_BROADCAST, tB2(i32, BM, BK),
	                          kb_op(&b, OP_MUL, tB2(i32, BM, 1), am2, kb_op(&b, OP_SPLAT, tB2(i32, BM, 1), kb_ci(&b, i32, K), NULL, NULL), NULL),
	                          NULL, NULL),
	                    kb_op(&b, OP_BROADCAST, tB2(i32, BM, BK), ak, NULL, NULL), NULL);
	Value *boff = kb_op(&b, OP_ADD, tB2(i32, BK, BN),
	                    kb_op(&b, OP_BROADCAST, tB2(i32, BK, BN),
	                          kb_op(&b, OP_MUL, tB2(i32, BK, 1), bk, kb_op(&b, OP_SPLAT, tB2(i32, BK, 1), kb_ci(&b, i32, N), NULL, NULL), NULL),
	                          NULL, NULL),
	                    kb_op(&b, OP_BROADCAST, tB2(i32, BK, BN), bn2, NULL, NULL), NULL);
	Value *acc0 = kb_cf(&b, tB2(tS(SK_F32), BM, BN), 0.0);
	Value *fops[4] = {kb_ci(&b, i32, 0), kb_ci(&b, i32, K), kb_ci(&b, i32, BK), acc0};
	Type accT = tB2(tS(SK_F32), BM, BN);
	Op *loop = kb_opv(&b, OP_FOR, fops, 4, &accT, 1);
	Value *k = ir_region_arg(b.f, &loop->regions[0], i32), *acc = ir_region_arg(b.f, &loop->regions[0], accT);
	Region *top = b.r;
	b.r = &loop->regions[0];
	Value *ka = kb_op(&b, OP_SPLAT, tB2(i32, BM, BK), k, NULL, NULL);
	Value *kb2 = kb_op(&b, OP_MUL, tB2(i32, BK, BN), kb_op(&b, OP_SPLAT, tB2(i32, BK, BN), k, NULL, NULL),
	                   kb_op(&b, OP_SPLAT, tB2(i32, BK, BN), kb_ci(&b, i32, N), NULL, NULL), NULL);
	Value *ta = kb_load(&b, kb_ptrs(&b, a, kb_op(&b, OP_ADD, tB2(i32, BM, BK), aoff, ka, NULL)), NULL, NULL);
	Value *tb = kb_load(&b, kb_ptrs(&b, bb, kb_op(&b, OP_ADD, tB2(i32, BK, BN), boff, kb2, NULL)), NULL, NULL);
	Value *nacc = kb_op(&b, OP_DOT, accT, ta, tb, acc);
	kb_yield(&b, &nacc, 1);
	b.r = top;
	Value *coff = kb_op(&b, OP_ADD, tB2(i32, BM, BN),
	                    kb_op(&b, OP_BROADCAST, tB2(i32, BM, BN),
	                          kb_op(&b, OP_MUL, tB2(i32, BM, 1), am2, kb_op(&b, OP_SPLAT, tB2(i32, BM, 1), kb_ci(&b, i32, N), NULL, NULL), NULL),
	                          NULL, NULL),
	                    kb_op(&b, OP_BROADCAST, tB2(i32, BM, BN), bn2, NULL, NULL), NULL);
	kb_store(&b, kb_ptrs(&b, c, coff), loop->results[0], NULL);
	kb_ret(&b);
	uint16_t *as = malloc(M * K * 2), *bs = malloc(K * N * 2);
	float *cs = calloc(M * N, 4);
	for (int i = 0; i < M * K; i++)
		as[i] = (uint16_t)fp_encode(SK_F16, (double)(rnd() % 200) / 64.0 - 1.5);
	for (int i = 0; i < K * N; i++)
		bs[i] = (uint16_t)fp_encode(SK_F16, (double)(rnd() % 200) / 64.0 - 1.5);
	InterpBuffer bufs[] = {{"a", as, M * K * 2}, {"b", bs, K * N * 2}, {"c", cs, M * N * 4}};
	InterpArg args[] = {interp_ptr(as), interp_ptr(bs), interp_ptr(cs)};
	double t = timed_run(&b, args, 3, bufs, 3, M / BM, N / BN, threads);
	printf("matmul      256^3 f16 -> f32, 64x64x64 tiles, %d thread%s: %.3f s, %.2f GFLOP/s\n", threads,
	       threads > 1 ? "s" : "", t, 2.0 * M * N * K / t / 1e9);
	kb_free(&b);
	free(as), free(bs), free(cs);
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	bench_vadd(threads);
	bench_softmax(threads);
	bench_matmul(threads);
	return 0;
}
