/* bench_interp: the interpreter's speed on one core (and on several
 * threads), for docs/performance.md. Not a test: tests/interp/bench.sh
 * builds and runs it on demand.
 *
 *   vector add   out = x + y over 16M f32, BLOCK 1024 (16384 programs)
 *   softmax      1024 x 1024 f32, a row a program: max, sub, exp, sum, div
 *   matmul       256 x 256 x 256, f16 inputs, f32 accumulation, 64 x 64 tiles
 *
 * Usage: bench_interp [threads] (default 1). Prints one line per kernel. */
#include "kernels.h"

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
	build_vadd(&b, BLOCK);
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
	build_softmax(&b, C);
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
	build_matmul(&b, M, N, K, BM, BN, BK, SK_F16, SK_F32);
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
