/* math.c: math the GPU has no instruction for, written in LLVM IR.
 *
 * f32 sin and cos reduce by pi/2 in three parts with FMAs (Cody and Waite)
 * and evaluate Taylor polynomials on [-pi/4, pi/4]: a few ulp for |x| up to
 * about 1e5. f32 tanh uses an odd polynomial near 0 and (e - 1) / (e + 1)
 * elsewhere. f64 exp, exp2, log, log2, sin, cos and tanh reduce their
 * argument exactly and sum long Taylor series: within 2 ulp. fp8 values
 * travel as their bits and convert to and from f32 by integer arithmetic,
 * rounding to nearest even and saturating as cvt.rn.satfinite does. */
#include "lower/lower_int.h"

#include <math.h>
#include <string.h>

#include <llvm-c/Core.h>

typedef struct M {
	LLVMBuilderRef b;
	LLVMModuleRef m;
	LLVMTypeRef t; /* f32 or f64 */
	LLVMTypeRef i32, i64, f32, f64;
} M;

static M math_ctx(LLVMBuilderRef b, LLVMModuleRef m, LLVMTypeRef t)
{
	LLVMContextRef c = LLVMGetModuleContext(m);
	return (M){b, m, t, LLVMInt32TypeInContext(c), LLVMInt64TypeInContext(c), LLVMFloatTypeInContext(c),
	           LLVMDoubleTypeInContext(c)};
}

static LLVMValueRef k(M *m, double v) { return LLVMConstReal(m->t, v); }

static LLVMValueRef intrinsic(M *m, const char *name, LLVMValueRef *args, int n)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMTypeRef over = LLVMTypeOf(args[0]);
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(m->m, id, &over, 1);
	return LLVMBuildCall2(m->b, LLVMIntrinsicGetType(LLVMGetModuleContext(m->m), id, &over, 1), fn, args, (unsigned)n, "");
}

static LLVMValueRef fma3(M *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
	LLVMValueRef args[3] = {a, b, c};
	return intrinsic(m, "llvm.fma", args, 3);
}

static LLVMValueRef fabs1(M *m, LLVMValueRef x) { return intrinsic(m, "llvm.fabs", &x, 1); }
static LLVMValueRef rint1(M *m, LLVMValueRef x) { return intrinsic(m, "llvm.rint", &x, 1); }

static LLVMValueRef copysign2(M *m, LLVMValueRef mag, LLVMValueRef sgn)
{
	LLVMValueRef args[2] = {mag, sgn};
	return intrinsic(m, "llvm.copysign", args, 2);
}

static LLVMValueRef add(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(m->b, a, b, ""); }
static LLVMValueRef sub(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(m->b, a, b, ""); }
static LLVMValueRef mul(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(m->b, a, b, ""); }
static LLVMValueRef fdiv_(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFDiv(m->b, a, b, ""); }

static LLVMValueRef fcmp(M *m, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b)
{
	return LLVMBuildFCmp(m->b, p, a, b, "");
}

static LLVMValueRef sel(M *m, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildSelect(m->b, c, a, b, ""); }

/* c[0] + x (c[1] + x (c[2] + ...)) */
static LLVMValueRef horner(M *m, LLVMValueRef x, const double *c, int n)
{
	LLVMValueRef acc = k(m, c[n - 1]);
	for (int i = n - 2; i >= 0; i--)
		acc = fma3(m, acc, x, k(m, c[i]));
	return acc;
}

/* Taylor coefficients of sin(r)/r and cos(r) in r^2. */
static void trig_coeffs(double *s, double *c, int n)
{
	double f = 1;
	for (int i = 0; i < n; i++) {
		s[i] = (i % 2 ? -1 : 1) / f;            /* 1/(2i+1)! */
		f *= (2 * i + 2) * (2 * i + 3);
	}
	f = 1;
	for (int i = 0; i < n; i++) {
		c[i] = (i % 2 ? -1 : 1) / f;            /* 1/(2i)! */
		f *= (2 * i + 1) * (2 * i + 2);
	}
}

/* sin or cos of x (f32 or f64, by m->t). */
static LLVMValueRef sin_cos(M *m, LLVMValueRef x, bool want_cos)
{
	bool dbl = m->t == m->f64;
	LLVMValueRef kq = rint1(m, mul(m, x, k(m, 0.63661977236758134308)));
	LLVMValueRef r;
	if (dbl) { /* pi/2 = p1 + p2 + p3 (fdlibm's pio2_1, pio2_2, pio2_2t) */
		r = fma3(m, LLVMBuildFNeg(m->b, kq, ""), k(m, 1.57079632673412561417e+00), x);
		r = fma3(m, LLVMBuildFNeg(m->b, kq, ""), k(m, 6.07710050630396597660e-11), r);
		r = fma3(m, LLVMBuildFNeg(m->b, kq, ""), k(m, 2.02226624879595063154e-21), r);
	} else {
		r = fma3(m, LLVMBuildFNeg(m->b, kq, ""), k(m, 1.5707855225e+00), x);
		r = fma3(m, LLVMBuildFNeg(m->b, kq, ""), k(m, 1.0804273188e-05), r);
		r = fma3(m, LLVMBuildFNeg(m->b, kq, ""), k(m, 6.0770943833e-11), r);
	}
	int n = dbl ? 10 : 6;
	double sc[10], cc[10];
	trig_coeffs(sc, cc, n);
	LLVMValueRef r2 = mul(m, r, r);
	LLVMValueRef s = mul(m, r, horner(m, r2, sc, n));
	LLVMValueRef c = horner(m, r2, cc, n);
	/* the quadrant: sin = s, c, -s, -c; cos = c, -s, -c, s */
	LLVMValueRef q = LLVMBuildFPToSI(m->b, kq, m->i64, "");
	if (want_cos)
		q = LLVMBuildAdd(m->b, q, LLVMConstInt(m->i64, 1, 0), "");
	q = LLVMBuildAnd(m->b, q, LLVMConstInt(m->i64, 3, 0), "");
	LLVMValueRef odd = LLVMBuildTrunc(m->b, q, LLVMInt1TypeInContext(LLVMGetModuleContext(m->m)), "");
	LLVMValueRef neg = LLVMBuildICmp(m->b, LLVMIntUGE, q, LLVMConstInt(m->i64, 2, 0), "");
	LLVMValueRef v = sel(m, odd, c, s);
	v = sel(m, neg, LLVMBuildFNeg(m->b, v, ""), v);
	/* infinities and NaN give NaN; the reduction would not */
	return sel(m, fcmp(m, LLVMRealOLT, fabs1(m, x), k(m, INFINITY)), v, k(m, NAN));
}

/* 2^n for an integral double n in [-1022, 1023], by its bits. */
static LLVMValueRef pow2i(M *m, LLVMValueRef n)
{
	LLVMValueRef e = LLVMBuildAdd(m->b, LLVMBuildFPToSI(m->b, n, m->i64, ""), LLVMConstInt(m->i64, 1023, 0), "");
	return LLVMBuildBitCast(m->b, LLVMBuildShl(m->b, e, LLVMConstInt(m->i64, 52, 0), ""), m->f64, "");
}

/* e^r - 1 and e^r for |r| <= ln2/2 + a little, by Taylor series. */
static LLVMValueRef exp_poly(M *m, LLVMValueRef r, bool minus_one)
{
	double c[16];
	double f = 1;
	for (int i = 0; i < 16; i++) {
		f *= i + 1;
		c[i] = 1 / f; /* 1/(i+1)! */
	}
	LLVMValueRef em1 = mul(m, r, horner(m, r, c, 16)); /* r + r^2/2! + ... */
	return minus_one ? em1 : add(m, em1, k(m, 1.0));
}

/* e^x (base2 false, f64) or 2^x (base2 true). */
static LLVMValueRef exp_f64(M *m, LLVMValueRef x, bool base2)
{
	LLVMValueRef n, r;
	if (base2) {
		n = rint1(m, x);
		LLVMValueRef f = sub(m, x, n); /* exact */
		r = fma3(m, f, k(m, 6.93147180369123816490e-01), mul(m, f, k(m, 1.90821492927058770002e-10)));
	} else {
		n = rint1(m, mul(m, x, k(m, 1.44269504088896338700)));
		r = fma3(m, LLVMBuildFNeg(m->b, n, ""), k(m, 6.93147180369123816490e-01), x);
		r = fma3(m, LLVMBuildFNeg(m->b, n, ""), k(m, 1.90821492927058770002e-10), r);
	}
	/* clamp n so that its two halves scale within range; beyond, the
	 * result over- or underflows on its own */
	LLVMValueRef nc = LLVMBuildSelect(m->b, fcmp(m, LLVMRealOGT, n, k(m, 2100)), k(m, 2100),
	                                  LLVMBuildSelect(m->b, fcmp(m, LLVMRealOLT, n, k(m, -2100)), k(m, -2100), n, ""), "");
	LLVMValueRef n1 = rint1(m, mul(m, nc, k(m, 0.5)));
	n1 = LLVMBuildSelect(m->b, fcmp(m, LLVMRealOGT, n1, k(m, 1023)), k(m, 1023), n1, "");
	n1 = LLVMBuildSelect(m->b, fcmp(m, LLVMRealOLT, n1, k(m, -1022)), k(m, -1022), n1, "");
	LLVMValueRef n2 = sub(m, nc, n1);
	n2 = LLVMBuildSelect(m->b, fcmp(m, LLVMRealOGT, n2, k(m, 1023)), k(m, 1023), n2, "");
	n2 = LLVMBuildSelect(m->b, fcmp(m, LLVMRealOLT, n2, k(m, -1022)), k(m, -1022), n2, "");
	LLVMValueRef p = exp_poly(m, r, false);
	LLVMValueRef v = mul(m, mul(m, p, pow2i(m, n1)), pow2i(m, n2));
	/* NaN stays NaN; +-inf give inf and 0 */
	v = sel(m, fcmp(m, LLVMRealUNO, x, x), x, v);
	v = sel(m, fcmp(m, LLVMRealOEQ, x, k(m, INFINITY)), x, v);
	return sel(m, fcmp(m, LLVMRealOEQ, x, k(m, -INFINITY)), k(m, 0), v);
}

/* natural log of x (f64). */
static LLVMValueRef log_f64(M *m, LLVMValueRef x)
{
	/* subnormals first become normal */
	LLVMValueRef tiny = fcmp(m, LLVMRealOLT, x, k(m, 0x1p-1022));
	LLVMValueRef xs = sel(m, tiny, mul(m, x, k(m, 0x1p54)), x);
	LLVMValueRef bits = LLVMBuildBitCast(m->b, xs, m->i64, "");
	LLVMValueRef e = LLVMBuildSub(m->b, LLVMBuildLShr(m->b, bits, LLVMConstInt(m->i64, 52, 0), ""),
	                              LLVMConstInt(m->i64, 1023, 0), "");
	LLVMValueRef mb = LLVMBuildOr(m->b, LLVMBuildAnd(m->b, bits, LLVMConstInt(m->i64, 0xFFFFFFFFFFFFFull, 0), ""),
	                              LLVMConstInt(m->i64, 0x3FF0000000000000ull, 0), "");
	LLVMValueRef mant = LLVMBuildBitCast(m->b, mb, m->f64, ""); /* [1, 2) */
	LLVMValueRef big = fcmp(m, LLVMRealOGT, mant, k(m, 1.41421356237309504880));
	mant = sel(m, big, mul(m, mant, k(m, 0.5)), mant);
	LLVMValueRef ef = LLVMBuildSIToFP(m->b, e, m->f64, "");
	ef = add(m, ef, sel(m, big, k(m, 1), k(m, 0)));
	ef = sub(m, ef, sel(m, tiny, k(m, 54), k(m, 0)));
	/* log(mant) = 2 atanh(s), s = (mant - 1) / (mant + 1), |s| <= 0.1716 */
	LLVMValueRef s = fdiv_(m, sub(m, mant, k(m, 1)), add(m, mant, k(m, 1)));
	LLVMValueRef s2 = mul(m, s, s);
	double c[12];
	for (int i = 0; i < 12; i++)
		c[i] = 2.0 / (2 * i + 1);
	LLVMValueRef lm = mul(m, s, horner(m, s2, c, 12));
	LLVMValueRef v = fma3(m, ef, k(m, 6.93147180369123816490e-01), fma3(m, ef, k(m, 1.90821492927058770002e-10), lm));
	/* special values: log(0) = -inf, log(negative) = NaN, log(inf) = inf, NaN */
	v = sel(m, fcmp(m, LLVMRealOEQ, x, k(m, 0)), k(m, -INFINITY), v);
	v = sel(m, fcmp(m, LLVMRealOLT, x, k(m, 0)), k(m, NAN), v);
	v = sel(m, fcmp(m, LLVMRealOEQ, x, k(m, INFINITY)), x, v);
	return sel(m, fcmp(m, LLVMRealUNO, x, x), x, v);
}

/* tanh of x, f32 or f64: (e^2|x| - 1) / (e^2|x| + 1), with e^y - 1 from its
 * series for small y, where subtracting 1 would lose the digits. */
static LLVMValueRef tanh_any(M *m, LLVMValueRef x)
{
	M d = math_ctx(m->b, m->m, m->f64);
	LLVMValueRef xd = m->t == m->f64 ? x : LLVMBuildFPExt(m->b, x, m->f64, "");
	LLVMValueRef a = fabs1(&d, xd);
	LLVMValueRef y = mul(&d, a, k(&d, 2));
	LLVMValueRef small = fcmp(&d, LLVMRealOLT, a, k(&d, 0.25));
	LLVMValueRef em1 = sel(&d, small, exp_poly(&d, y, true), sub(&d, exp_f64(&d, y, false), k(&d, 1)));
	LLVMValueRef t = fdiv_(&d, em1, add(&d, em1, k(&d, 2)));
	t = sel(&d, fcmp(&d, LLVMRealOGT, a, k(&d, 20)), k(&d, 1), t);
	t = copysign2(&d, t, xd);
	t = sel(&d, fcmp(&d, LLVMRealUNO, xd, xd), xd, t);
	return m->t == m->f64 ? t : LLVMBuildFPTrunc(m->b, t, m->t, "");
}

/* erf of an f64, as a function of the module: 2/sqrt(pi) x e^(-x^2) times
 * the series sum_n (2x^2)^n / (1 3 5 ... (2n+1)), whose terms are all
 * positive (no cancellation at any x); past |x| = 6 erf is +-1 in f64. */
static LLVMValueRef erf_fn(LLVMModuleRef mod)
{
	LLVMContextRef c = LLVMGetModuleContext(mod);
	LLVMValueRef fn = LLVMGetNamedFunction(mod, "blk.erf.f64");
	if (fn)
		return fn;
	LLVMTypeRef f64 = LLVMDoubleTypeInContext(c);
	fn = LLVMAddFunction(mod, "blk.erf.f64", LLVMFunctionType(f64, &f64, 1, 0));
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
	M m = math_ctx(b, mod, f64);
	LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c, fn, "entry");
	LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c, fn, "series");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c, fn, "done");
	LLVMPositionBuilderAtEnd(b, entry);
	LLVMValueRef x = LLVMGetParam(fn, 0);
	LLVMValueRef ax = fabs1(&m, x);
	LLVMValueRef a = LLVMBuildSelect(b, fcmp(&m, LLVMRealOGT, ax, k(&m, 6)), k(&m, 6), ax, "");
	LLVMValueRef z = mul(&m, mul(&m, a, a), k(&m, 2));
	LLVMBuildBr(b, head);
	LLVMPositionBuilderAtEnd(b, head);
	LLVMValueRef n = LLVMBuildPhi(b, f64, "n"), term = LLVMBuildPhi(b, f64, "t"), sum = LLVMBuildPhi(b, f64, "s");
	LLVMValueRef zero = k(&m, 0), one = k(&m, 1);
	LLVMAddIncoming(n, &zero, &entry, 1);
	LLVMAddIncoming(term, &one, &entry, 1);
	LLVMAddIncoming(sum, &zero, &entry, 1);
	LLVMValueRef s2 = add(&m, sum, term);
	LLVMValueRef n2 = add(&m, n, one);
	LLVMValueRef t2 = fdiv_(&m, mul(&m, term, z), add(&m, mul(&m, n2, k(&m, 2)), one)); /* z / (2n + 3) */
	/* stop when the terms no longer change the sum (they shrink past n ~ z) */
	LLVMValueRef more = LLVMBuildAnd(b, fcmp(&m, LLVMRealOGT, t2, mul(&m, s2, k(&m, 0x1p-60))),
	                                 fcmp(&m, LLVMRealOLT, n2, k(&m, 400)), "");
	LLVMBasicBlockRef cur = LLVMGetInsertBlock(b);
	LLVMAddIncoming(n, &n2, &cur, 1);
	LLVMAddIncoming(term, &t2, &cur, 1);
	LLVMAddIncoming(sum, &s2, &cur, 1);
	LLVMBuildCondBr(b, more, head, done);
	LLVMPositionBuilderAtEnd(b, done);
	LLVMValueRef e = exp_f64(&m, LLVMBuildFNeg(b, mul(&m, a, a), ""), false);
	LLVMValueRef r = mul(&m, mul(&m, mul(&m, k(&m, 1.12837916709551257390), a), e), s2);
	r = sel(&m, fcmp(&m, LLVMRealOGE, ax, k(&m, 6)), k(&m, 1), r);
	r = sel(&m, fcmp(&m, LLVMRealOGT, r, k(&m, 1)), k(&m, 1), r);
	r = copysign2(&m, r, x);
	r = sel(&m, fcmp(&m, LLVMRealUNO, x, x), x, r);
	LLVMBuildRet(b, r);
	LLVMDisposeBuilder(b);
	return fn;
}

LLVMValueRef gpu_math(LLVMBuilderRef b, LLVMModuleRef mod, MathFn fn, LLVMValueRef x)
{
	M m = math_ctx(b, mod, LLVMTypeOf(x));
	bool dbl = m.t == m.f64;
	switch (fn) {
	case MATH_SIN: return sin_cos(&m, x, false);
	case MATH_COS: return sin_cos(&m, x, true);
	case MATH_TANH: return tanh_any(&m, x);
	case MATH_EXP: return dbl ? exp_f64(&m, x, false) : NULL;
	case MATH_EXP2: return dbl ? exp_f64(&m, x, true) : NULL;
	case MATH_LOG: return dbl ? log_f64(&m, x) : NULL;
	case MATH_LOG2: return dbl ? mul(&m, log_f64(&m, x), k(&m, 1.44269504088896338700)) : NULL;
	case MATH_ERF:
		if (!dbl)
			return NULL;
		return LLVMBuildCall2(b, LLVMFunctionType(m.f64, &m.f64, 1, 0), erf_fn(mod), &x, 1, "");
	default: return NULL;
	}
}

/* ---- fp8 ---------------------------------------------------------------- */

/* The f32 value of fp8 bits (i8): exact. e5m2 is the top byte of an f16;
 * e4m3 (fn) decodes by hand: bias 7, no infinities, S.1111.111 is NaN. */
LLVMValueRef gpu_fp8_to_f32(LLVMBuilderRef b, LLVMModuleRef mod, ScalarKind kind, LLVMValueRef bits)
{
	M m = math_ctx(b, mod, LLVMFloatTypeInContext(LLVMGetModuleContext(mod)));
	LLVMContextRef c = LLVMGetModuleContext(mod);
	LLVMTypeRef i16 = LLVMInt16TypeInContext(c);
	if (kind == SK_F8E5M2) {
		LLVMValueRef h = LLVMBuildShl(b, LLVMBuildZExt(b, bits, i16, ""), LLVMConstInt(i16, 8, 0), "");
		return LLVMBuildFPExt(b, LLVMBuildBitCast(b, h, LLVMHalfTypeInContext(c), ""), m.f32, "");
	}
	LLVMValueRef u = LLVMBuildZExt(b, bits, m.i32, "");
	LLVMValueRef e = LLVMBuildAnd(b, LLVMBuildLShr(b, u, LLVMConstInt(m.i32, 3, 0), ""), LLVMConstInt(m.i32, 15, 0), "");
	LLVMValueRef man = LLVMBuildAnd(b, u, LLVMConstInt(m.i32, 7, 0), "");
	LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildLShr(b, u, LLVMConstInt(m.i32, 7, 0), ""), LLVMConstInt(m.i32, 31, 0), "");
	/* normal: exponent e - 7 + 127, mantissa man << 20 */
	LLVMValueRef nb = LLVMBuildOr(b, LLVMBuildShl(b, LLVMBuildAdd(b, e, LLVMConstInt(m.i32, 120, 0), ""),
	                                              LLVMConstInt(m.i32, 23, 0), ""),
	                              LLVMBuildShl(b, man, LLVMConstInt(m.i32, 20, 0), ""), "");
	LLVMValueRef normal = LLVMBuildBitCast(b, nb, m.f32, "");
	LLVMValueRef sub_v = mul(&m, LLVMBuildUIToFP(b, man, m.f32, ""), k(&m, 0x1p-9));
	LLVMValueRef is_sub = LLVMBuildICmp(b, LLVMIntEQ, e, LLVMConstInt(m.i32, 0, 0), "");
	LLVMValueRef mag = sel(&m, is_sub, sub_v, normal);
	LLVMValueRef v = LLVMBuildBitCast(b, LLVMBuildOr(b, LLVMBuildBitCast(b, mag, m.i32, ""), sign, ""), m.f32, "");
	LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, u, LLVMConstInt(m.i32, 0x7F, 0), ""),
	                                 LLVMConstInt(m.i32, 0x7F, 0), "");
	return sel(&m, nan, k(&m, NAN), v);
}

/* f32 to fp8 bits, rounding to nearest even; finite overflow and infinities
 * saturate to the largest finite value, NaN stays NaN. */
LLVMValueRef gpu_f32_to_fp8(LLVMBuilderRef b, LLVMModuleRef mod, ScalarKind kind, LLVMValueRef x)
{
	M m = math_ctx(b, mod, LLVMFloatTypeInContext(LLVMGetModuleContext(mod)));
	LLVMTypeRef i8 = LLVMInt8TypeInContext(LLVMGetModuleContext(mod));
	bool e4 = kind == SK_F8E4M3;
	int mbits = e4 ? 3 : 2, bias = e4 ? 7 : 15, emin = 1 - bias;
	unsigned max_bits = e4 ? 0x7E : 0x7B, nan_bits = e4 ? 0x7F : 0x7E;
	LLVMValueRef a = fabs1(&m, x);
	LLVMValueRef bits = LLVMBuildBitCast(b, a, m.i32, "");
	/* normal in the target: round the f32 bits to mbits of mantissa, rebias */
	int shift = 23 - mbits;
	LLVMValueRef lsb = LLVMBuildAnd(b, LLVMBuildLShr(b, bits, LLVMConstInt(m.i32, (unsigned)shift, 0), ""),
	                                LLVMConstInt(m.i32, 1, 0), "");
	LLVMValueRef rounded = LLVMBuildAdd(b, LLVMBuildAdd(b, bits, LLVMConstInt(m.i32, (1u << (shift - 1)) - 1, 0), ""), lsb, "");
	LLVMValueRef normal = LLVMBuildSub(b, LLVMBuildLShr(b, rounded, LLVMConstInt(m.i32, (unsigned)shift, 0), ""),
	                                   LLVMConstInt(m.i32, (unsigned)((127 - bias) << mbits), 0), "");
	/* subnormal in the target: round a * 2^(mbits - emin) to an integer */
	LLVMValueRef q = rint1(&m, mul(&m, a, k(&m, ldexp(1.0, mbits - emin))));
	LLVMValueRef subn = LLVMBuildFPToUI(b, q, m.i32, "");
	LLVMValueRef is_sub = fcmp(&m, LLVMRealOLT, a, k(&m, ldexp(1.0, emin)));
	LLVMValueRef v = LLVMBuildSelect(b, is_sub, subn, normal, "");
	/* saturate (also infinities), keep NaN */
	LLVMValueRef over = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntUGT, v, LLVMConstInt(m.i32, max_bits, 0), ""),
	                                fcmp(&m, LLVMRealOEQ, a, k(&m, INFINITY)), "");
	v = LLVMBuildSelect(b, over, LLVMConstInt(m.i32, max_bits, 0), v, "");
	v = LLVMBuildSelect(b, fcmp(&m, LLVMRealUNO, x, x), LLVMConstInt(m.i32, nan_bits, 0), v, "");
	LLVMValueRef sign = LLVMBuildAnd(b, LLVMBuildLShr(b, LLVMBuildBitCast(b, x, m.i32, ""), LLVMConstInt(m.i32, 24, 0), ""),
	                                 LLVMConstInt(m.i32, 0x80, 0), "");
	return LLVMBuildTrunc(b, LLVMBuildOr(b, v, sign, ""), i8, "");
}

/* ---- fmod ------------------------------------------------------------------ */

/* The biased exponent of f64 a >= 0 (not infinite): its field, or for a
 * subnormal what the field would be were it normalized (0 and below). */
static LLVMValueRef fmod_exponent(M *m, LLVMValueRef a)
{
	LLVMValueRef bits = LLVMBuildBitCast(m->b, a, m->i64, "");
	LLVMValueRef e = LLVMBuildLShr(m->b, bits, LLVMConstInt(m->i64, 52, 0), "");
	LLVMValueRef args[2] = {bits, LLVMConstInt(LLVMInt1TypeInContext(LLVMGetModuleContext(m->m)), 0, 0)};
	LLVMValueRef sub = LLVMBuildSub(m->b, LLVMConstInt(m->i64, 12, 0), intrinsic(m, "llvm.ctlz", args, 2), "");
	return LLVMBuildSelect(m->b, LLVMBuildICmp(m->b, LLVMIntEQ, e, LLVMConstInt(m->i64, 0, 0), ""), sub, e, "");
}

/* Exact fmod, as a function of the module made on first use: subtracts
 * from |x| the largest |y| * 2^k not above it until |x| < |y|; each
 * subtraction is exact. f32 works in f64, where its subnormals are normal. */
static LLVMValueRef fmod_fn(LLVMModuleRef mod, LLVMTypeRef t)
{
	LLVMContextRef c = LLVMGetModuleContext(mod);
	bool f32 = t == LLVMFloatTypeInContext(c);
	const char *name = f32 ? "blk.fmod.f32" : "blk.fmod.f64";
	LLVMValueRef fn = LLVMGetNamedFunction(mod, name);
	if (fn)
		return fn;
	LLVMTypeRef params[2] = {t, t};
	fn = LLVMAddFunction(mod, name, LLVMFunctionType(t, params, 2, 0));
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
	M m = math_ctx(b, mod, LLVMDoubleTypeInContext(c));
	LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c, fn, "entry");
	LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c, fn, "loop");
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c, fn, "step");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c, fn, "done");
	LLVMPositionBuilderAtEnd(b, entry);
	LLVMValueRef x = LLVMGetParam(fn, 0), y = LLVMGetParam(fn, 1);
	LLVMValueRef xd = f32 ? LLVMBuildFPExt(b, x, m.f64, "") : x, yd = f32 ? LLVMBuildFPExt(b, y, m.f64, "") : y;
	LLVMValueRef ax = fabs1(&m, xd), ay = fabs1(&m, yd);
	LLVMBuildBr(b, head);
	LLVMPositionBuilderAtEnd(b, head);
	LLVMValueRef cur = LLVMBuildPhi(b, m.f64, "r");
	LLVMAddIncoming(cur, &ax, &entry, 1);
	/* finite |x| >= |y| > 0 keeps going */
	LLVMValueRef go = LLVMBuildAnd(b, fcmp(&m, LLVMRealOGE, cur, ay),
	                               LLVMBuildAnd(b, fcmp(&m, LLVMRealOGT, ay, k(&m, 0)),
	                                            fcmp(&m, LLVMRealOLT, cur, k(&m, INFINITY)), ""), "");
	LLVMBuildCondBr(b, go, body, done);
	LLVMPositionBuilderAtEnd(b, body);
	/* the exponents' difference, from the bits; a subnormal's from its
	 * leading one (with the field's 0 every step would take off as little
	 * as 2^-52 of the rest: 2^52 steps for a divisor of 2^-1074) */
	LLVMValueRef d = LLVMBuildSub(b, fmod_exponent(&m, cur), fmod_exponent(&m, ay), "");
	d = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, d, LLVMConstInt(m.i64, 0, 0), ""), LLVMConstInt(m.i64, 0, 0), d, "");
	/* |y| 2^d in three factors, each within the exponent range (d < 2100) */
	LLVMValueRef s = ay;
	for (int i = 0; i < 3; i++) {
		LLVMValueRef di = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, d, LLVMConstInt(m.i64, 1000, 0), ""),
		                                  LLVMConstInt(m.i64, 1000, 0), d, "");
		d = LLVMBuildSub(b, d, di, "");
		s = mul(&m, s, LLVMBuildBitCast(b, LLVMBuildShl(b, LLVMBuildAdd(b, di, LLVMConstInt(m.i64, 1023, 0), ""),
		                                                  LLVMConstInt(m.i64, 52, 0), ""), m.f64, ""));
	}
	s = sel(&m, fcmp(&m, LLVMRealOGT, s, cur), mul(&m, s, k(&m, 0.5)), s);
	s = sel(&m, fcmp(&m, LLVMRealOLT, s, ay), ay, s);
	LLVMValueRef next = sub(&m, cur, s);
	LLVMAddIncoming(cur, &next, &body, 1);
	LLVMBuildBr(b, head);
	LLVMPositionBuilderAtEnd(b, done);
	LLVMValueRef r = copysign2(&m, cur, xd);
	/* NaN when x is infinite or NaN, y is 0 or NaN; x when y is infinite */
	LLVMValueRef bad = LLVMBuildOr(b, LLVMBuildOr(b, fcmp(&m, LLVMRealUNO, xd, yd), fcmp(&m, LLVMRealOEQ, ay, k(&m, 0)), ""),
	                               fcmp(&m, LLVMRealOEQ, ax, k(&m, INFINITY)), "");
	r = sel(&m, bad, k(&m, NAN), r);
	r = sel(&m, LLVMBuildAnd(b, fcmp(&m, LLVMRealOEQ, ay, k(&m, INFINITY)), fcmp(&m, LLVMRealOLT, ax, k(&m, INFINITY)), ""),
	        xd, r);
	LLVMBuildRet(b, f32 ? LLVMBuildFPTrunc(b, r, t, "") : r);
	LLVMDisposeBuilder(b);
	return fn;
}

LLVMValueRef gpu_fmod(LLVMModuleRef mod, LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y)
{
	LLVMContextRef c = LLVMGetModuleContext(mod);
	LLVMTypeRef t = LLVMTypeOf(x), f32 = LLVMFloatTypeInContext(c), f64 = LLVMDoubleTypeInContext(c);
	bool narrow = t != f32 && t != f64; /* f16, bf16: exact in f32 */
	if (narrow) {
		x = LLVMBuildFPExt(b, x, f32, "");
		y = LLVMBuildFPExt(b, y, f32, "");
	}
	LLVMTypeRef ft = LLVMTypeOf(x);
	LLVMValueRef fn = fmod_fn(mod, ft);
	LLVMTypeRef params[2] = {ft, ft};
	LLVMValueRef args[2] = {x, y};
	LLVMValueRef r = LLVMBuildCall2(b, LLVMFunctionType(ft, params, 2, 0), fn, args, 2, "");
	return narrow ? LLVMBuildFPTrunc(b, r, t, "") : r;
}
