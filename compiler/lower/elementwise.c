/* elementwise.c: element-wise ops, register by register: arithmetic,
 * compares, math, casts, select, constants, and philox's random numbers. */
#include "lower/lower_int.h"

#include <string.h>

/* An f32 PTX approximation through its NVVM intrinsic ("ex2" is
 * llvm.nvvm.ex2.approx.f: ex2.approx.f32), cheaper for the code generator
 * than the same instruction as inline PTX, and free for LLVM to number and
 * hoist. */
static LLVMValueRef approx_f32(Lower *L, const char *fn, LLVMValueRef x)
{
	char name[64];
	snprintf(name, sizeof name, "llvm.nvvm.%s.approx.f", fn);
	return lw_call_intrinsic(L, name, NULL, 0, &x, 1);
}

/* ex2.approx.ftz.f32: a subnormal result flushed to +0. One MUFU.EX2,
 * where the form without ftz is wrapped by ptxas in a range check and two
 * scalings. exp and exp2 use it; the interpreter flushes the same. */
static LLVMValueRef ex2_ftz(Lower *L, LLVMValueRef x)
{
	return lw_call_intrinsic(L, "llvm.nvvm.ex2.approx.ftz.f", NULL, 0, &x, 1);
}

LLVMValueRef lw_const_elem(Lower *L, const Op *op, Type t)
{
	LLVMTypeRef lt = lw_elem_type(L, t);
	if (type_is_float(t)) {
		if (t.scalar == SK_F8E4M3 || t.scalar == SK_F8E5M2)
			return LLVMConstInt(L->i8, fp_encode((ScalarKind)t.scalar, op->fval), 0);
		return LLVMConstReal(lt, op->fval);
	}
	return LLVMConstInt(lt, (unsigned long long)op->ival, 0);
}

/* a / b rounded to nearest even, div_rn (an OP_DIV with attr[0] 1):
 * div.rn.f32 or div.rn.f64 through llvm.nvvm.div.rn.f / .d; f16 and bf16
 * divide in f32 and round once (24 >= 2 * 11 + 2 bits: no double-rounding
 * error). */
static LLVMValueRef div_rn(Lower *L, LLVMValueRef a, LLVMValueRef b)
{
	LLVMTypeRef ty = LLVMTypeOf(a);
	if (ty == L->f64) {
		LLVMValueRef args[2] = {a, b};
		return lw_call_intrinsic(L, "llvm.nvvm.div.rn.d", NULL, 0, args, 2);
	}
	bool narrow = ty != L->f32;
	LLVMValueRef args[2] = {narrow ? LLVMBuildFPExt(L->b, a, L->f32, "") : a,
	                        narrow ? LLVMBuildFPExt(L->b, b, L->f32, "") : b};
	LLVMValueRef r = lw_call_intrinsic(L, "llvm.nvvm.div.rn.f", NULL, 0, args, 2);
	return narrow ? LLVMBuildFPTrunc(L->b, r, ty, "") : r;
}

/* A float add, sub or mul, with no fast-math flags: NVPTX prints mul.rn and
 * add.rn, which ptxas leaves apart (the contract pass, ir/contract.c, has
 * already made the fmas the option fp_fusion asks for, the same ones the
 * interpreter computes). */
static LLVMValueRef fp_arith(Lower *L, OpCode code, LLVMValueRef a, LLVMValueRef b)
{
	return code == OP_ADD   ? LLVMBuildFAdd(L->b, a, b, "")
	       : code == OP_SUB ? LLVMBuildFSub(L->b, a, b, "")
	                        : LLVMBuildFMul(L->b, a, b, "");
}

static LLVMValueRef binary(Lower *L, OpCode code, Type t, LLVMValueRef a, LLVMValueRef b, int64_t attr0)
{
	bool f = type_is_float(t), s = is_signed(t);
	switch (code) {
	case OP_ADD: return f ? fp_arith(L, code, a, b) : LLVMBuildAdd(L->b, a, b, "");
	case OP_SUB: return f ? fp_arith(L, code, a, b) : LLVMBuildSub(L->b, a, b, "");
	case OP_MUL: return f ? fp_arith(L, code, a, b) : LLVMBuildMul(L->b, a, b, "");
	case OP_DIV:
		if (f && attr0)
			return div_rn(L, a, b);
		if (f && LLVMTypeOf(a) == L->f32) {
			/* as Triton's '/': div.full.f32, within 2 ulp over the whole range
			 * (div.rn.f32 is a dozen instructions and a branch) */
			LLVMTypeRef ps[2] = {L->f32, L->f32};
			LLVMTypeRef ft = LLVMFunctionType(L->f32, ps, 2, 0);
			const char *text = "div.full.f32 $0, $1, $2;";
			LLVMValueRef fn = LLVMGetInlineAsm(ft, (char *)text, strlen(text), "=f,f,f", 6, 0, 0,
			                                   LLVMInlineAsmDialectATT, 0);
			LLVMValueRef args[2] = {a, b};
			return LLVMBuildCall2(L->b, ft, fn, args, 2, "");
		}
		return f ? LLVMBuildFDiv(L->b, a, b, "") : s ? LLVMBuildSDiv(L->b, a, b, "") : LLVMBuildUDiv(L->b, a, b, "");
	case OP_REM:
		if (f) /* exact fmod: LLVM's frem becomes x - trunc(x/y)*y on NVPTX */
			return gpu_fmod(L->m, L->b, a, b);
		return s ? LLVMBuildSRem(L->b, a, b, "") : LLVMBuildURem(L->b, a, b, "");
	case OP_AND: return LLVMBuildAnd(L->b, a, b, "");
	case OP_OR: return LLVMBuildOr(L->b, a, b, "");
	case OP_XOR: return LLVMBuildXor(L->b, a, b, "");
	case OP_SHL: return LLVMBuildShl(L->b, a, b, "");
	case OP_SHR: return s ? LLVMBuildAShr(L->b, a, b, "") : LLVMBuildLShr(L->b, a, b, "");
	case OP_MIN:
	case OP_MAX: {
		if (f) {
			LLVMTypeRef ty = LLVMTypeOf(a);
			LLVMValueRef args[2] = {a, b};
			const char *name = code == OP_MIN ? (attr0 ? "llvm.minimum" : "llvm.minnum")
			                                  : (attr0 ? "llvm.maximum" : "llvm.maxnum");
			return lw_call_intrinsic(L, name, &ty, 1, args, 2);
		}
		LLVMIntPredicate p = code == OP_MIN ? (s ? LLVMIntSLT : LLVMIntULT) : (s ? LLVMIntSGT : LLVMIntUGT);
		return LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, p, a, b, ""), a, b, "");
	}
	default: return NULL;
	}
}

static LLVMValueRef compare(Lower *L, CmpPred p, Type t, LLVMValueRef a, LLVMValueRef b)
{
	if (type_is_float(t)) {
		static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
		return LLVMBuildFCmp(L->b, fp[p], a, b, "");
	}
	if (t.ptr) {
		a = LLVMBuildPtrToInt(L->b, a, L->i64, "");
		b = LLVMBuildPtrToInt(L->b, b, L->i64, "");
	}
	bool s = is_signed(t);
	static const LLVMIntPredicate sp[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
	static const LLVMIntPredicate up[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
	return LLVMBuildICmp(L->b, s ? sp[p] : up[p], a, b, "");
}

/* Float math in f32 (f16 and bf16 are widened and rounded back). */
static LLVMValueRef math(Lower *L, MathFn fn, Type t, LLVMValueRef x, Span at)
{
	if (t.scalar == SK_F64) {
		LLVMTypeRef ty = L->f64;
		switch (fn) {
		case MATH_SQRT: return lw_call_intrinsic(L, "llvm.sqrt", &ty, 1, &x, 1);
		case MATH_SQRT_RN: return lw_call_intrinsic(L, "llvm.nvvm.sqrt.rn.d", NULL, 0, &x, 1);
		case MATH_FLOOR: return lw_call_intrinsic(L, "llvm.floor", &ty, 1, &x, 1);
		case MATH_CEIL: return lw_call_intrinsic(L, "llvm.ceil", &ty, 1, &x, 1);
		case MATH_TRUNC: return lw_call_intrinsic(L, "llvm.trunc", &ty, 1, &x, 1);
		case MATH_RINT: return lw_call_intrinsic(L, "llvm.rint", &ty, 1, &x, 1);
		case MATH_ROUND: return lw_call_intrinsic(L, "llvm.round", &ty, 1, &x, 1);
		case MATH_RSQRT:
			return LLVMBuildFDiv(L->b, LLVMConstReal(ty, 1.0), lw_call_intrinsic(L, "llvm.sqrt", &ty, 1, &x, 1), "");
		default: {
			LLVMValueRef r = gpu_math(L->b, L->m, fn, x);
			if (r)
				return r;
			lw_fail(L, at, "%s of f64 is not supported on the GPU yet", math_fn_name(fn));
			return LLVMGetUndef(ty);
		}
		}
	}
	LLVMTypeRef ty = LLVMTypeOf(x);
	bool narrow = ty != L->f32;
	if (narrow)
		x = LLVMBuildFPExt(L->b, x, L->f32, "");
	LLVMValueRef r;
	LLVMTypeRef f32 = L->f32;
	switch (fn) {
	case MATH_EXP: r = ex2_ftz(L, LLVMBuildFMul(L->b, x, LLVMConstReal(f32, 1.4426950408889634), "")); break;
	case MATH_EXP2: r = ex2_ftz(L, x); break;
	case MATH_LOG: r = LLVMBuildFMul(L->b, approx_f32(L, "lg2", x), LLVMConstReal(f32, 0.6931471805599453), ""); break;
	case MATH_LOG2: r = approx_f32(L, "lg2", x); break;
	case MATH_SQRT: r = lw_call_intrinsic(L, "llvm.sqrt", &f32, 1, &x, 1); break; /* sqrt.rn.f32 */
	case MATH_SQRT_RN: r = lw_call_intrinsic(L, "llvm.nvvm.sqrt.rn.f", NULL, 0, &x, 1); break;
	case MATH_RSQRT: r = approx_f32(L, "rsqrt", x); break;
	case MATH_SIN:
	case MATH_COS:
	case MATH_TANH: r = gpu_math(L->b, L->m, fn, x); break; /* accurate: the .approx forms are 2^-11 to 2^-21 off */
	case MATH_FLOOR: r = lw_call_intrinsic(L, "llvm.floor", &f32, 1, &x, 1); break;
	case MATH_CEIL: r = lw_call_intrinsic(L, "llvm.ceil", &f32, 1, &x, 1); break;
	case MATH_TRUNC: r = lw_call_intrinsic(L, "llvm.trunc", &f32, 1, &x, 1); break; /* cvt.rzi: exact */
	case MATH_RINT: r = lw_call_intrinsic(L, "llvm.rint", &f32, 1, &x, 1); break;   /* cvt.rni: exact */
	case MATH_ROUND: r = lw_call_intrinsic(L, "llvm.round", &f32, 1, &x, 1); break; /* half away from 0: exact */
	case MATH_ERF: {
		/* erf(x) = sign(x) (1 - p(t) e^(-x^2)), t = 1 / (1 + 0.3275911 |x|): 1.5e-7 absolute */
		LLVMValueRef ax = lw_call_intrinsic(L, "llvm.fabs", &f32, 1, &x, 1);
		LLVMValueRef t = LLVMBuildFDiv(L->b, LLVMConstReal(f32, 1.0),
		                               LLVMBuildFAdd(L->b, LLVMConstReal(f32, 1.0),
		                                             LLVMBuildFMul(L->b, ax, LLVMConstReal(f32, 0.3275911), ""), ""), "");
		static const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
		LLVMValueRef p = LLVMConstReal(f32, a[0]);
		for (int i = 1; i < 5; i++)
			p = LLVMBuildFAdd(L->b, LLVMBuildFMul(L->b, p, t, ""), LLVMConstReal(f32, a[i]), "");
		p = LLVMBuildFMul(L->b, p, t, "");
		LLVMValueRef e = approx_f32(L, "ex2",
		                         LLVMBuildFMul(L->b, LLVMBuildFNeg(L->b, LLVMBuildFMul(L->b, ax, ax, ""), ""),
		                                       LLVMConstReal(f32, 1.4426950408889634), ""));
		LLVMValueRef y = LLVMBuildFSub(L->b, LLVMConstReal(f32, 1.0), LLVMBuildFMul(L->b, p, e, ""), "");
		LLVMValueRef args[2] = {y, x};
		r = lw_call_intrinsic(L, "llvm.copysign", &f32, 1, args, 2);
		/* below |x| = 0.5 that absolute error is a large relative one: the
		 * series 2/sqrt(pi) sum (-1)^k x^(2k+1) / (k! (2k+1)), to k = 6 */
		LLVMValueRef x2 = LLVMBuildFMul(L->b, x, x, "");
		static const double c[] = {1.0, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216, -1.0 / 1320, 1.0 / 9360};
		LLVMValueRef q = LLVMConstReal(f32, c[6]);
		for (int i = 5; i >= 0; i--)
			q = LLVMBuildFAdd(L->b, LLVMBuildFMul(L->b, q, x2, ""), LLVMConstReal(f32, c[i]), "");
		q = LLVMBuildFMul(L->b, LLVMBuildFMul(L->b, q, x, ""), LLVMConstReal(f32, 1.1283791670955126), "");
		LLVMValueRef small = LLVMBuildFCmp(L->b, LLVMRealOLT, ax, LLVMConstReal(f32, 0.5), "");
		r = LLVMBuildSelect(L->b, small, q, r, "");
		break;
	}
	default: r = x; break;
	}
	return narrow ? LLVMBuildFPTrunc(L->b, r, ty, "") : r;
}

/* f32 or f64 v to bf16. cvt.rn.bf16 turns every NaN into 0x7FFF; the
 * interpreter (compiler/ir/fpconv.c) and numpy keep the sign and the top 7
 * bits of the payload (0x40, the quiet bit, where those are zero), 0x7FC0 for
 * the usual NaN: so does this, by a select on NaN. */
static LLVMValueRef to_bf16(Lower *L, LLVMValueRef v)
{
	LLVMTypeRef vt = LLVMTypeOf(v);
	bool d = vt == L->f64;
	LLVMTypeRef it = d ? L->i64 : L->i32;
	LLVMValueRef bits = LLVMBuildBitCast(L->b, v, it, "");
	LLVMValueRef top = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, bits, LLVMConstInt(it, d ? 48 : 16, 0), ""), L->i16, "");
	LLVMValueRef m = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, bits, LLVMConstInt(it, d ? 45 : 16, 0), ""), L->i16, "");
	m = LLVMBuildAnd(L->b, m, LLVMConstInt(L->i16, 0x7F, 0), "");
	LLVMValueRef zero = LLVMBuildICmp(L->b, LLVMIntEQ, m, LLVMConstInt(L->i16, 0, 0), "");
	m = LLVMBuildSelect(L->b, zero, LLVMConstInt(L->i16, 0x40, 0), m, "");
	LLVMValueRef nan = LLVMBuildOr(L->b, LLVMBuildAnd(L->b, top, LLVMConstInt(L->i16, 0x8000, 0), ""),
	                               LLVMBuildOr(L->b, m, LLVMConstInt(L->i16, 0x7F80, 0), ""), "");
	LLVMValueRef isnan = LLVMBuildFCmp(L->b, LLVMRealUNO, v, v, "");
	LLVMValueRef r = LLVMBuildFPTrunc(L->b, v, L->bf16, "");
	return LLVMBuildSelect(L->b, isnan, LLVMBuildBitCast(L->b, nan, L->bf16, ""), r, "");
}

LLVMValueRef lw_cast(Lower *L, Type from, Type to, LLVMValueRef v, Span at)
{
	LLVMTypeRef lt = lw_elem_type(L, to);
	bool ff = type_is_float(from), ft = type_is_float(to);
	if (is_fp8(from) || is_fp8(to)) { /* through f32, which holds every fp8 value */
		Type f32 = type_scalar(SK_F32);
		if (is_fp8(from) && is_fp8(to) && from.scalar == to.scalar)
			return v;
		LLVMValueRef mid;
		if (is_fp8(from)) {
			mid = gpu_fp8_to_f32(L->b, L->m, (ScalarKind)from.scalar, v);
		} else if (from.scalar == SK_F64) {
			/* f64 to f32 rounding to odd (toward zero, then the last bit set
			 * when inexact), so that rounding again to fp8 rounds once */
			LLVMTypeRef ft = LLVMFunctionType(L->f32, &L->f64, 1, 0);
			LLVMValueRef rz = LLVMGetInlineAsm(ft, "cvt.rz.f32.f64 $0, $1;", 22, "=f,d", 4, 0, 0, LLVMInlineAsmDialectATT, 0);
			LLVMValueRef t = LLVMBuildCall2(L->b, ft, rz, &v, 1, "");
			LLVMValueRef inexact = LLVMBuildFCmp(L->b, LLVMRealONE, LLVMBuildFPExt(L->b, t, L->f64, ""), v, "");
			LLVMValueRef bits = LLVMBuildBitCast(L->b, t, L->i32, "");
			bits = LLVMBuildSelect(L->b, inexact, LLVMBuildOr(L->b, bits, ci32(L, 1), ""), bits, "");
			mid = LLVMBuildBitCast(L->b, bits, L->f32, "");
		} else {
			mid = lw_cast(L, from, f32, v, at);
		}
		return is_fp8(to) ? gpu_f32_to_fp8(L->b, L->m, (ScalarKind)to.scalar, mid) : lw_cast(L, f32, to, mid, at);
	}
	if (ff && ft) {
		int bf = scalar_bits((ScalarKind)from.scalar), bt = scalar_bits((ScalarKind)to.scalar);
		if (from.scalar == to.scalar)
			return v;
		if (from.scalar == SK_F16 && to.scalar == SK_BF16)
			return to_bf16(L, LLVMBuildFPExt(L->b, v, L->f32, ""));
		if (from.scalar == SK_BF16 && to.scalar == SK_F16)
			return LLVMBuildFPTrunc(L->b, LLVMBuildFPExt(L->b, v, L->f32, ""), lt, "");
		if (to.scalar == SK_BF16)
			return to_bf16(L, v);
		return bt > bf ? LLVMBuildFPExt(L->b, v, lt, "") : LLVMBuildFPTrunc(L->b, v, lt, "");
	}
	if (ff) {
		if (to.scalar == SK_I1)
			return LLVMBuildFCmp(L->b, LLVMRealUNE, v, LLVMConstReal(LLVMTypeOf(v), 0), "");
		/* saturating, NaN to 0, as the interpreter and cvt.rzi.sat do */
		LLVMTypeRef over[2] = {lt, LLVMTypeOf(v)};
		return lw_call_intrinsic(L, is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", over, 2, &v, 1);
	}
	if (ft)
		return is_signed(from) ? LLVMBuildSIToFP(L->b, v, lt, "") : LLVMBuildUIToFP(L->b, v, lt, "");
	if (to.scalar == SK_I1)
		return LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), "");
	int bf = scalar_bits((ScalarKind)from.scalar), bt = scalar_bits((ScalarKind)to.scalar);
	if (bt == bf)
		return v;
	if (bt < bf)
		return LLVMBuildTrunc(L->b, v, lt, "");
	return is_signed(from) ? LLVMBuildSExt(L->b, v, lt, "") : LLVMBuildZExt(L->b, v, lt, "");
}

/* One element of an element-wise op from its operands' elements (c is the
 * third operand's, for fma and select). */
static LLVMValueRef elementwise_value(Lower *L, const Op *op, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
	Type rt = op->results[0]->type;
	Type in_t = op->n_operands ? type_elem(op->operands[0]->type) : rt;
	/* fp8 computes in f32: exact for + - *, one more rounding that cannot
	 * matter for / (24 bits against 4) */
	bool fp8 = is_fp8(in_t) && op->code != OP_CAST && op->code != OP_BITCAST && op->code != OP_SELECT &&
	           op->code != OP_NEG && op->code != OP_ABS; /* those two are exact on the bits */
	Type fp8_t = in_t;
	if (fp8) {
		in_t = type_scalar(SK_F32);
		a = gpu_fp8_to_f32(L->b, L->m, (ScalarKind)fp8_t.scalar, a);
		if (b)
			b = gpu_fp8_to_f32(L->b, L->m, (ScalarKind)fp8_t.scalar, b);
	}
	LLVMValueRef r = NULL;
	switch (op->code) {
	case OP_CMP: r = compare(L, (CmpPred)op->attr[0], in_t, a, b); break;
	case OP_SELECT: r = LLVMBuildSelect(L->b, a, b, c, ""); break;
	case OP_NEG:
		r = is_fp8(in_t) ? LLVMBuildXor(L->b, a, LLVMConstInt(L->i8, 0x80, 0), "")
		    : type_is_float(in_t) ? LLVMBuildFNeg(L->b, a, "") : LLVMBuildNeg(L->b, a, "");
		break;
	case OP_NOT: r = LLVMBuildNot(L->b, a, ""); break;
	case OP_ABS:
		if (is_fp8(in_t)) {
			r = LLVMBuildAnd(L->b, a, LLVMConstInt(L->i8, 0x7F, 0), "");
		} else if (type_is_float(in_t)) {
			LLVMTypeRef ty = LLVMTypeOf(a);
			r = lw_call_intrinsic(L, "llvm.fabs", &ty, 1, &a, 1);
		} else if (type_bytes(in_t) < 4) {
			/* abs of i8 and i16 in i32, the low bits kept: abs(-32768) is
			 * -32768, as on the interpreter. abs.s16 was not: on the H200
			 * an i16 abs of -32768 widened by cvt.s64.s16 gave +32768
			 * (tests/diff --gpu, seed 1, case 56). An asm, so that LLVM
			 * does not fold the widening back into abs.s16. */
			LLVMTypeRef ty = LLVMTypeOf(a), fty = LLVMFunctionType(L->i32, &L->i32, 1, 0);
			static const char text[] = "abs.s32 $0, $1;", cons[] = "=r,r";
			LLVMValueRef fn = LLVMGetInlineAsm(fty, (char *)text, sizeof text - 1, (char *)cons, sizeof cons - 1, 0,
			                                   0, LLVMInlineAsmDialectATT, 0);
			LLVMValueRef wide = LLVMBuildSExt(L->b, a, L->i32, "");
			r = LLVMBuildTrunc(L->b, LLVMBuildCall2(L->b, fty, fn, &wide, 1, ""), ty, "");
		} else {
			LLVMTypeRef ty = LLVMTypeOf(a);
			LLVMValueRef args[2] = {a, LLVMConstInt(L->i1, 0, 0)};
			r = lw_call_intrinsic(L, "llvm.abs", &ty, 1, args, 2);
		}
		break;
	case OP_FMA: {
		LLVMTypeRef ty = LLVMTypeOf(a);
		if (fp8)
			c = gpu_fp8_to_f32(L->b, L->m, (ScalarKind)fp8_t.scalar, c);
		LLVMValueRef args[3] = {a, b, c};
		r = lw_call_intrinsic(L, "llvm.fma", &ty, 1, args, 3);
		break;
	}
	case OP_MATH: r = math(L, (MathFn)op->attr[0], in_t, a, op->loc); break;
	case OP_UMULHI: {
		LLVMTypeRef wide = in_t.scalar == SK_I64 || in_t.scalar == SK_U64 ? LLVMInt128TypeInContext(L->c) : L->i64;
		/* the high half of the unsigned product, whatever the signedness */
		LLVMValueRef x = LLVMBuildZExt(L->b, a, wide, "");
		LLVMValueRef y = LLVMBuildZExt(L->b, b, wide, "");
		unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(a));
		r = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, LLVMBuildMul(L->b, x, y, ""), LLVMConstInt(wide, bits, 0), ""),
		                   LLVMTypeOf(a), "");
		break;
	}
	case OP_ADDPTR: {
		LLVMTypeRef pt = lw_mem_type(L, type_pointee(type_elem(op->operands[0]->type)));
		r = LLVMBuildGEP2(L->b, pt, a, &b, 1, "");
		break;
	}
	case OP_CAST: r = lw_cast(L, in_t, type_elem(rt), a, op->loc); break;
	case OP_BITCAST: {
		LLVMTypeRef to = lw_elem_type(L, type_elem(rt));
		if (LLVMGetTypeKind(to) == LLVMPointerTypeKind || LLVMGetTypeKind(LLVMTypeOf(a)) == LLVMPointerTypeKind)
			r = LLVMGetTypeKind(to) == LLVMPointerTypeKind
			        ? (LLVMGetTypeKind(LLVMTypeOf(a)) == LLVMPointerTypeKind ? a : LLVMBuildIntToPtr(L->b, a, to, ""))
			        : LLVMBuildPtrToInt(L->b, a, to, "");
		else
			r = LLVMBuildBitCast(L->b, a, to, "");
		break;
	}
	case OP_PTR_TO_INT: r = LLVMBuildPtrToInt(L->b, a, lw_elem_type(L, type_elem(rt)), ""); break;
	case OP_INT_TO_PTR: r = LLVMBuildIntToPtr(L->b, a, L->gptr, ""); break;
	default: r = binary(L, op->code, in_t, a, b, op->attr[0]); break;
	}
	if (!r) {
		lw_fail(L, op->loc, "internal error: cannot lower '%s' to the GPU", op_name(op->code));
		return NULL;
	}
	if (fp8 && is_fp8(type_elem(rt)))
		r = gpu_f32_to_fp8(L->b, L->m, (ScalarKind)rt.scalar, r);
	return r;
}

/* f32 to f16 or bf16 two at a time, one cvt.rn.{f16,bf16}x2.f32 a pair
 * (sm_80). cvt.rn.bf16x2 makes every NaN 0x7FFF where blk keeps payloads
 * (to_bf16): the pairs run when no element is NaN, the one-at-a-time
 * conversion on a branch taken only when one is. */
static void cast_pairs(Lower *L, const Op *op, int n, Tile *t)
{
	bool bf = op->results[0]->type.scalar == SK_BF16;
	if (L->failed)
		return;
	LLVMValueRef anynan = LLVMConstInt(L->i1, 0, 0);
	for (int k = 0; bf && k < n; k += 2)
		anynan = LLVMBuildOr(L->b, anynan,
		                     LLVMBuildFCmp(L->b, LLVMRealUNO, el(L, op->operands[0], k), el(L, op->operands[0], k + 1), ""), "");
	LLVMBasicBlockRef fast = NULL, slow = NULL, join = NULL;
	if (bf) {
		fast = LLVMAppendBasicBlockInContext(L->c, L->fn, "cvt.pairs");
		slow = LLVMAppendBasicBlockInContext(L->c, L->fn, "cvt.nan");
		join = LLVMAppendBasicBlockInContext(L->c, L->fn, "cvt.done");
		LLVMBuildCondBr(L->b, anynan, slow, fast);
		LLVMPositionBuilderAtEnd(L->b, fast);
	}
	for (int k = 0; k < n; k += 2) {
		LLVMValueRef args[2] = {el(L, op->operands[0], k + 1), el(L, op->operands[0], k)}; /* high half first */
		LLVMValueRef v = lw_call_intrinsic(L, bf ? "llvm.nvvm.ff2bf16x2.rn" : "llvm.nvvm.ff2f16x2.rn", NULL, 0, args, 2);
		t->e[k] = LLVMBuildExtractElement(L->b, v, ci32(L, 0), "");
		t->e[k + 1] = LLVMBuildExtractElement(L->b, v, ci32(L, 1), "");
	}
	if (!bf)
		return;
	LLVMBuildBr(L->b, join);
	LLVMPositionBuilderAtEnd(L->b, slow);
	Tile one = lw_tile_new(L, n);
	for (int k = 0; k < n && !L->failed; k++)
		one.e[k] = to_bf16(L, el(L, op->operands[0], k));
	LLVMBuildBr(L->b, join);
	LLVMPositionBuilderAtEnd(L->b, join);
	for (int k = 0; k < n; k++) {
		LLVMValueRef phi = LLVMBuildPhi(L->b, L->bf16, "");
		LLVMValueRef in[2] = {t->e[k], one.e[k]};
		LLVMBasicBlockRef from[2] = {fast, slow};
		LLVMAddIncoming(phi, in, from, 2);
		t->e[k] = phi;
	}
}

void lower_elementwise(Lower *L, const Op *op, int n)
{
	const Value *res = op->results[0];
	Tile t = lw_tile_new(L, n);
	Type from = op->n_operands ? type_elem(op->operands[0]->type) : res->type;
	bool pairs = op->code == OP_CAST && n % 2 == 0 && val(L, op->operands[0])->n == n &&
	             !from.ptr && from.scalar == SK_F32 && !res->type.ptr &&
	             (res->type.scalar == SK_F16 || res->type.scalar == SK_BF16) && (!L->f->sm || L->f->sm >= 80);
	if (pairs)
		cast_pairs(L, op, n, &t);
	for (int k = 0; !pairs && k < n && !L->failed; k++) {
		LLVMValueRef a = op->n_operands > 0 ? el(L, op->operands[0], k) : NULL;
		LLVMValueRef b = op->n_operands > 1 ? el(L, op->operands[1], k) : NULL;
		LLVMValueRef c = op->n_operands > 2 ? el(L, op->operands[2], k) : NULL;
		t.e[k] = elementwise_value(L, op, a, b, c);
		if (!t.e[k])
			return;
	}
	L->vals[res->id] = t;
}

/* ---- philox ---------------------------------------------------------------------------- */

void lower_philox(Lower *L, const Op *op)
{
	int n = ept(L, op->results[0]);
	Tile out[4];
	for (int i = 0; i < 4; i++)
		out[i] = lw_tile_new(L, n);
	LLVMValueRef seed = el(L, op->operands[0], 0);
	LLVMValueRef k0 = LLVMBuildTrunc(L->b, seed, L->i32, "");
	LLVMValueRef k1 = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, seed, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
	for (int k = 0; k < n && !L->failed; k++) {
		LLVMValueRef c[4] = {el(L, op->operands[1], k), ci32(L, 0), ci32(L, 0), ci32(L, 0)};
		LLVMValueRef key0 = k0, key1 = k1;
		for (int r = 0; r < op->attr[0]; r++) {
			LLVMValueRef p0 = LLVMBuildMul(L->b, LLVMBuildZExt(L->b, c[0], L->i64, ""), LLVMConstInt(L->i64, 0xD2511F53u, 0), "");
			LLVMValueRef p1 = LLVMBuildMul(L->b, LLVMBuildZExt(L->b, c[2], L->i64, ""), LLVMConstInt(L->i64, 0xCD9E8D57u, 0), "");
			LLVMValueRef hi0 = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, p0, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
			LLVMValueRef lo0 = LLVMBuildTrunc(L->b, p0, L->i32, "");
			LLVMValueRef hi1 = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, p1, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
			LLVMValueRef lo1 = LLVMBuildTrunc(L->b, p1, L->i32, "");
			LLVMValueRef n0 = LLVMBuildXor(L->b, LLVMBuildXor(L->b, hi1, c[1], ""), key0, "");
			LLVMValueRef n2 = LLVMBuildXor(L->b, LLVMBuildXor(L->b, hi0, c[3], ""), key1, "");
			c[0] = n0;
			c[1] = lo1;
			c[2] = n2;
			c[3] = lo0;
			key0 = LLVMBuildAdd(L->b, key0, LLVMConstInt(L->i32, 0x9E3779B9u, 0), "");
			key1 = LLVMBuildAdd(L->b, key1, LLVMConstInt(L->i32, 0xBB67AE85u, 0), "");
		}
		for (int i = 0; i < 4; i++)
			out[i].e[k] = c[i];
	}
	for (int i = 0; i < 4; i++)
		L->vals[op->results[i]->id] = out[i];
}
