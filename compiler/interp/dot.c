/* dot.c: dot, a[M, K] times b[K, N] plus acc, at the precision asked
 * (tf32 and tf32x3 as the tensor cores read f32), as lower/dot*.c lower it. */
#include "interp/interp_int.h"

#include <math.h>
#include <stdlib.h>

/* x as tf32: its low 13 fraction bits cleared (truncation toward zero, 10
 * fraction bits kept), which is what the tensor cores read of an f32 in
 * shared memory; an infinity stays one, and so does a NaN with a payload
 * bit above the 13 (one whose payload lies only in them reads as an
 * infinity of its sign). */
static float tf32_trunc(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	u &= 0xffffe000u;
	memcpy(&x, &u, 4);
	return x;
}

/* An f32 dot with input_precision tf32 or tf32x3, as tensor cores compute
 * it: tf32 truncates both inputs to tf32 (their product is exact in f32)
 * and adds the products in k order in f32; tf32x3 splits each input into
 * big = tf32(x) and small = tf32(x - big) (x - big is exact) and adds,
 * for each k in turn, a_small b_big, a_big b_small and a_big b_big (small
 * x small left out).
 * A, B, C: the inputs and the accumulator in f32 (A and B are truncated in
 * place); the results go to r, rounded to `out`. */
static bool dot_tf32(Worker *w, const Op *op, float *A, float *B, float *C, int64_t M, int64_t N, int64_t K,
                     DotPrecision prec, Elem *r, ScalarKind out, Mark mk)
{
	float *As = NULL, *Bs = NULL;
	if (prec == DOT_TF32X3) {
		As = (float *)interp_scratch(w, (M * K + 1) / 2);
		Bs = (float *)interp_scratch(w, (K * N + 1) / 2);
		if (!As || !Bs)
			return false;
	}
	for (int64_t i = 0; i < M * K; i++) {
		float big = tf32_trunc(A[i]);
		if (As)
			As[i] = tf32_trunc(A[i] - big);
		A[i] = big;
	}
	for (int64_t i = 0; i < K * N; i++) {
		float big = tf32_trunc(B[i]);
		if (Bs)
			Bs[i] = tf32_trunc(B[i] - big);
		B[i] = big;
	}
	for (int64_t i = 0; i < M; i++) {
		float *crow = C + i * N;
		for (int64_t kk = 0; kk < K; kk++) {
			float av = A[i * K + kk];
			const float *brow = B + kk * N;
			if (As) {
				float as = As[i * K + kk];
				const float *bsrow = Bs + kk * N;
				for (int64_t j = 0; j < N; j++) {
					float c = crow[j] + as * brow[j];
					c += av * bsrow[j];
					crow[j] = c + av * brow[j];
				}
			} else {
				for (int64_t j = 0; j < N; j++)
					crow[j] += av * brow[j];
			}
		}
	}
	for (int64_t i = 0; i < M * N; i++)
		r[i].f = out == SK_F32 ? C[i] : fp_round(out, C[i]);
	Elem *d = interp_def(w, op->results[0], M * N);
	if (d)
		memcpy(d, r, (size_t)(M * N) * sizeof *d);
	interp_release(w, mk);
	return d != NULL;
}

bool interp_dot(Worker *w, const Op *op)
{
	Type at = op->operands[0]->type, bt = op->operands[1]->type, rt = op->results[0]->type;
	int64_t M = at.shape[0], K = at.shape[1], N = bt.shape[1];
	const Elem *a = slot(w, op->operands[0])->p, *b = slot(w, op->operands[1])->p;
	const Slot *acc = slot(w, op->operands[2]);
	ScalarKind ka = (ScalarKind)at.scalar, kb = (ScalarKind)bt.scalar, kc = (ScalarKind)rt.scalar;
	Mark mk = interp_mark(w);
	Elem *r = interp_scratch(w, M * N); /* acc may be this op's own result buffer */
	if (!r)
		return false;
	copy_elems(r, acc, M * N);
	bool fa = scalar_is_float(ka), fb = scalar_is_float(kb);
	/* a float accumulator narrower than f32 sums in f32 and rounds once at
	 * the end (irgen casts such an acc to f32 around the dot already) */
	bool narrow = kc == SK_F16 || kc == SK_BF16 || kc == SK_F8E4M3 || kc == SK_F8E5M2;
	if ((kc == SK_F32 || narrow) && fa && fb && ka != SK_F64 && kb != SK_F64) {
		/* f32 accumulation in k order; products of f16 and fp8 are exact in
		 * f32, those of bf16 and f32 are fused (fmaf: exact, then one rounding) */
		float *A = (float *)interp_scratch(w, (M * K + 1) / 2), *B = (float *)interp_scratch(w, (K * N + 1) / 2),
		      *C = (float *)interp_scratch(w, (M * N + 1) / 2);
		if (!A || !B || !C)
			return false;
		for (int64_t i = 0; i < M * K; i++)
			A[i] = (float)a[i].f;
		for (int64_t i = 0; i < K * N; i++)
			B[i] = (float)b[i].f;
		for (int64_t i = 0; i < M * N; i++)
			C[i] = (float)r[i].f;
		bool exact = ka != SK_BF16 && ka != SK_F32 && kb != SK_BF16 && kb != SK_F32;
		DotPrecision prec = ka == SK_F32 && kb == SK_F32 ? (DotPrecision)op->attr[0] : DOT_IEEE;
		if (prec != DOT_IEEE)
			return dot_tf32(w, op, A, B, C, M, N, K, prec, r, narrow ? kc : SK_F32, mk);
		for (int64_t i = 0; i < M; i++) {
			float *crow = C + i * N;
			for (int64_t kk = 0; kk < K; kk++) {
				float av = A[i * K + kk];
				const float *brow = B + kk * N;
				if (exact)
					for (int64_t j = 0; j < N; j++)
						crow[j] += av * brow[j];
				else
					for (int64_t j = 0; j < N; j++)
						crow[j] = fmaf(av, brow[j], crow[j]);
			}
		}
		for (int64_t i = 0; i < M * N; i++)
			r[i].f = narrow ? fp_round(kc, C[i]) : C[i];
	} else if (!fa && !fb && scalar_is_int(kc)) {
		/* integers wrap: summing in 64 bits and wrapping once is the same */
		for (int64_t i = 0; i < M; i++)
			for (int64_t kk = 0; kk < K; kk++) {
				uint64_t av = a[i * K + kk].u;
				for (int64_t j = 0; j < N; j++)
					r[i * N + j].u += av * b[kk * N + j].u;
			}
		for (int64_t i = 0; i < M * N; i++)
			r[i].i = canon_int(kc, r[i].u);
	} else {
		/* any other mix: in double, rounded to acc's kind (f32 for a
		 * narrow one, rounded once at the end) after each step */
		ScalarKind step = narrow ? SK_F32 : kc;
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				double s = r[i * N + j].f;
				for (int64_t kk = 0; kk < K; kk++) {
					double x = fa ? a[i * K + kk].f : (double)a[i * K + kk].i;
					double y = fb ? b[kk * N + j].f : (double)b[kk * N + j].i;
					/* float factors up to f32 into another kind: fp_fma rounds once */
					bool once = fa && fb && ka != SK_F64 && kb != SK_F64 && step != SK_F32 && step != SK_F64;
					s = once ? fp_fma(step, x, y, s) : fp_round(step, fma(x, y, s));
				}
				r[i * N + j].f = narrow ? fp_round(kc, s) : s;
			}
	}
	Elem *d = interp_def(w, op->results[0], M * N);
	if (d)
		memcpy(d, r, (size_t)(M * N) * sizeof *d);
	interp_release(w, mk);
	return d != NULL;
}
