/* kernels_test: whole kernels on the interpreter, built by hand in tile IR as
 * the front end would build them from examples/: vector add, softmax (row
 * reductions), matmul (a for loop carrying a dot accumulator), a pointer
 * array (loads of pointers), an atomic histogram. Each against a reference
 * in C that does the same arithmetic in the same order, so the results must
 * match bit for bit; and each on 1 and 4 threads, which must agree.
 *
 * Prints "ok NAME" / "FAIL NAME: why" a case and last "N passed, N failed". */
#include "kernels.h"

static InterpOptions opts(int gx, int gy, int threads)
{
	return (InterpOptions){.grid = {gx, gy, 1}, .threads = threads};
}

static bool run_ok(const char *name, KB *b, const InterpArg *args, int n_args, const InterpBuffer *bufs, int n_bufs,
                   InterpOptions o)
{
	Diag d;
	diag_init(&d);
	bool ok = kb_run(b, args, n_args, bufs, n_bufs, &o, &d);
	if (!ok)
		result(false, name, "interp_run failed:\n%s", d.out.data ? d.out.data : "");
	diag_free(&d);
	return ok;
}

static void test_vadd(void)
{
	enum { N = 10000, BLOCK = 1024 };
	float *x = malloc(N * 4), *y = malloc(N * 4), *out = malloc(N * 4), *out4 = malloc(N * 4);
	for (int i = 0; i < N; i++) {
		x[i] = (float)(rnd() % 100000) / 7.0f;
		y[i] = (float)(rnd() % 100000) / 3.0f;
	}
	KB b;
	build_vadd(&b, BLOCK);
	for (int t = 1; t <= 4; t += 3) {
		float *o = t == 1 ? out : out4;
		memset(o, 0, N * 4);
		InterpBuffer bufs[] = {{"x", x, N * 4}, {"y", y, N * 4}, {"out", o, N * 4}};
		InterpArg args[] = {interp_ptr(x), interp_ptr(y), interp_ptr(o), interp_int(N)};
		char name[64];
		snprintf(name, sizeof name, "vector add, 10000 f32, %d thread%s", t, t > 1 ? "s" : "");
		if (!run_ok(name, &b, args, 4, bufs, 3, opts((N + BLOCK - 1) / BLOCK, 1, t)))
			continue;
		int bad = -1;
		for (int i = 0; i < N && bad < 0; i++)
			if (o[i] != x[i] + y[i])
				bad = i;
		result(bad < 0, name, "out[%d] = %g, want %g", bad, bad < 0 ? 0 : (double)o[bad],
		       bad < 0 ? 0 : (double)(x[bad] + y[bad]));
	}
	kb_free(&b);
	free(x), free(y), free(out), free(out4);
}

/* Row softmax of 64 x 256 f32: the reference does what the kernel does, in
 * f32: max, subtract, exp in double rounded to f32, the pairwise tree sum,
 * divide. Bit for bit, on 1 and 4 threads. */
static void test_softmax(void)
{
	enum { R = 64, C = 256 };
	static float x[R * C], out[R * C];
	for (int i = 0; i < R * C; i++)
		x[i] = (float)((double)(int)(rnd() % 4001 - 2000) / 97.0);
	KB b;
	build_softmax(&b, C);
	for (int t = 1; t <= 4; t += 3) {
		char name[64];
		snprintf(name, sizeof name, "softmax 64 x 256 f32, bit for bit, %d thread%s", t, t > 1 ? "s" : "");
		memset(out, 0, sizeof out);
		InterpBuffer bufs[] = {{"x", x, sizeof x}, {"out", out, sizeof out}};
		InterpArg args[] = {interp_ptr(x), interp_ptr(out)};
		if (!run_ok(name, &b, args, 2, bufs, 2, opts(R, 1, t)))
			continue;
		char why[160] = "";
		for (int r = 0; r < R && !*why; r++) {
			const float *v = x + r * C;
			float m = v[0], e[C], s[C];
			for (int c = 1; c < C; c++)
				m = v[c] > m ? v[c] : m;
			for (int c = 0; c < C; c++)
				s[c] = e[c] = (float)exp((double)(v[c] - m));
			for (int len = C; len > 1; len /= 2)
				for (int h = 0; h < len / 2; h++)
					s[h] = s[2 * h] + s[2 * h + 1];
			for (int c = 0; c < C && !*why; c++)
				if (out[r * C + c] != e[c] / s[0])
					snprintf(why, sizeof why, "[%d, %d] = %.9g, want %.9g", r, c, out[r * C + c], e[c] / s[0]);
		}
		result(!*why, name, "%s", why);
	}
	kb_free(&b);
}

/* matmul 128 x 64 x 96 in 32 x 32 x 32 tiles: f16 and bf16 into f32, i8
 * into i32; k in order across the loop's steps, so the reference is the
 * plain triple loop (fmaf: f16 products are exact in f32 anyway). */
static void test_matmul(void)
{
	enum { M = 128, N = 64, K = 96, BM = 32, BN = 32, BK = 32 };
	static const ScalarKind ins[] = {SK_F16, SK_BF16, SK_I8};
	for (int ki = 0; ki < 3; ki++) {
		ScalarKind in = ins[ki], acc = in == SK_I8 ? SK_I32 : SK_F32;
		int w = in == SK_I8 ? 1 : 2;
		static unsigned char A[M * K * 2], B[K * N * 2];
		static double av[M * K], bv[K * N];
		static uint32_t C1[M * N], C4[M * N];
		for (int i = 0; i < M * K + K * N; i++) {
			bool isa = i < M * K;
			int j = isa ? i : i - M * K;
			double v = in == SK_I8 ? (double)((int)(rnd() % 256) - 128)
			                       : fp_decode(in, fp_encode(in, (double)((int)(rnd() % 2001) - 1000) / 300.0));
			(isa ? av : bv)[j] = v;
			uint64_t bits = in == SK_I8 ? (uint64_t)(int64_t)v : fp_encode(in, v);
			memcpy((isa ? A : B) + j * w, &bits, (size_t)w);
		}
		KB b;
		build_matmul(&b, M, N, K, BM, BN, BK, in, acc);
		char name[80];
		snprintf(name, sizeof name, "matmul %dx%dx%d, %s -> %s, 1 and 4 threads alike", M, N, K, scalar_name(in),
		         scalar_name(acc));
		bool ok = true;
		for (int t = 1; t <= 4 && ok; t += 3) {
			uint32_t *C = t == 1 ? C1 : C4;
			InterpBuffer bufs[] = {{"a", A, (size_t)M * K * w}, {"b", B, (size_t)K * N * w}, {"c", C, sizeof C1}};
			InterpArg args[] = {interp_ptr(A), interp_ptr(B), interp_ptr(C)};
			ok = run_ok(name, &b, args, 3, bufs, 3, opts(M / BM, N / BN, t));
		}
		char why[160] = "";
		for (int i = 0; ok && i < M && !*why; i++)
			for (int j = 0; j < N && !*why; j++) {
				uint32_t want;
				if (acc == SK_I32) {
					uint32_t s = 0;
					for (int k = 0; k < K; k++)
						s += (uint32_t)((int32_t)av[i * K + k] * (int32_t)bv[k * N + j]);
					want = s;
				} else {
					float s = 0;
					for (int k = 0; k < K; k++)
						s = fmaf((float)av[i * K + k], (float)bv[k * N + j], s);
					memcpy(&want, &s, 4);
				}
				if (C1[i * N + j] != want || C4[i * N + j] != want)
					snprintf(why, sizeof why, "[%d, %d]: 0x%08x (4 threads 0x%08x), want 0x%08x", i, j, C1[i * N + j],
					         C4[i * N + j], want);
			}
		if (ok)
			result(!*why, name, "%s", why);
		kb_free(&b);
	}
}

/* A histogram: 64 programs of 256 values each atomically add 1 to bin
 * v % 32, and the sum of v to total (i64), on 4 threads. */
static void test_histogram(void)
{
	enum { P = 64, BLOCK = 256, BINS = 32 };
	KB b;
	kb_begin(&b, "histogram");
	Value *x = kb_param(&b, "x", tP(SK_I32, 1)), *bins = kb_param(&b, "bins", tP(SK_I32, 1)),
	      *total = kb_param(&b, "total", tP(SK_I64, 1));
	Type bi = tB(tS(SK_I32), BLOCK);
	Value *offs = kb_op(&b, OP_ADD, bi,
	                    kb_op(&b, OP_SPLAT, bi, kb_op(&b, OP_MUL, tS(SK_I32), kb_pid(&b, 0), kb_ci(&b, tS(SK_I32), BLOCK), NULL), NULL, NULL),
	                    kb_arange(&b, 0, BLOCK), NULL);
	Value *v = kb_load(&b, kb_ptrs(&b, x, offs), NULL, NULL);
	Value *bin = kb_op(&b, OP_REM, bi, v, kb_ci(&b, bi, BINS), NULL);
	Value *ops[2] = {kb_ptrs(&b, bins, bin), kb_ci(&b, bi, 1)};
	Op *a1 = kb_opv(&b, OP_ATOMIC_RMW, ops, 2, &bi, 1);
	a1->attr[0] = ATOM_ADD;
	Type bl = tB(tS(SK_I64), BLOCK);
	Value *ops2[2] = {kb_op(&b, OP_SPLAT, tB(tP(SK_I64, 1), BLOCK), total, NULL, NULL), kb_op(&b, OP_CAST, bl, v, NULL, NULL)};
	Op *a2 = kb_opv(&b, OP_ATOMIC_RMW, ops2, 2, &bl, 1);
	a2->attr[0] = ATOM_ADD;
	a2->attr[1] = SEM_RELAXED;
	kb_ret(&b);
	static int32_t xs[P * BLOCK], hist[BINS];
	int64_t tot = 0, want_tot = 0;
	int32_t want[BINS] = {0};
	for (int i = 0; i < P * BLOCK; i++) {
		xs[i] = (int32_t)(rnd() % 100000);
		want[xs[i] % BINS]++;
		want_tot += xs[i];
	}
	memset(hist, 0, sizeof hist);
	InterpBuffer bufs[] = {{"x", xs, sizeof xs}, {"bins", hist, sizeof hist}, {"total", &tot, sizeof tot}};
	InterpArg args[] = {interp_ptr(xs), interp_ptr(hist), interp_ptr(&tot)};
	const char *name = "histogram with atomic adds, 64 programs on 4 threads";
	if (run_ok(name, &b, args, 3, bufs, 3, opts(P, 1, 4)))
		result(memcmp(hist, want, sizeof want) == 0 && tot == want_tot, name, "counts or total differ (%lld, want %lld)",
		       (long long)tot, (long long)want_tot);
	kb_free(&b);
}

int main(void)
{
	ref_init();
	test_vadd();
	test_softmax();
	test_matmul();
	test_histogram();
	ref_free();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
