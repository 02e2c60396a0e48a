/* dot_mma.c: dot with mma.sync over operands in dot_operand encodings of
 * an mma accumulator, read from registers or with ldmatrix (convert.c):
 * m16n8k16 for f16 and bf16, m16n8k8 for f32 truncated to tf32 (tf32x3: three
 * products of the split), m16n8k32 for i8 (into i32) and fp8 (sm_89). */
#include "lower/lower_int.h"

#include <string.h>

/* The 32-bit register of a pair of 16-bit elements: the word they were
 * taken from when they are its halves in order (an ldmatrix result), else
 * the pair packed. */
static LLVMValueRef pair_word(Lower *L, LLVMValueRef lo, LLVMValueRef hi, LLVMTypeRef pair)
{
	if (LLVMIsAExtractElementInst(lo) && LLVMIsAExtractElementInst(hi) &&
	    LLVMGetOperand(lo, 0) == LLVMGetOperand(hi, 0) && LLVMIsAConstantInt(LLVMGetOperand(lo, 1)) &&
	    LLVMIsAConstantInt(LLVMGetOperand(hi, 1)) && LLVMConstIntGetZExtValue(LLVMGetOperand(lo, 1)) == 0 &&
	    LLVMConstIntGetZExtValue(LLVMGetOperand(hi, 1)) == 1) {
		LLVMValueRef v = LLVMGetOperand(lo, 0);
		if (LLVMIsABitCastInst(v) && LLVMTypeOf(LLVMGetOperand(v, 0)) == L->i32)
			return LLVMGetOperand(v, 0);
	}
	LLVMValueRef v = LLVMGetUndef(pair);
	v = LLVMBuildInsertElement(L->b, v, lo, ci32(L, 0), "");
	v = LLVMBuildInsertElement(L->b, v, hi, ci32(L, 1), "");
	return LLVMBuildBitCast(L->b, v, L->i32, "");
}

/* The 32-bit register of four 8-bit elements, the first in the low byte:
 * the word they were taken from when they are its bytes in order (a load
 * of 4 bytes), else the bytes packed. */
static LLVMValueRef quad_word(Lower *L, LLVMValueRef *e)
{
	LLVMValueRef src = NULL;
	for (int i = 0; i < 4; i++) {
		LLVMValueRef x = e[i];
		if (!LLVMIsAExtractElementInst(x) || !LLVMIsAConstantInt(LLVMGetOperand(x, 1)) ||
		    LLVMConstIntGetZExtValue(LLVMGetOperand(x, 1)) != (unsigned long long)i ||
		    (src && LLVMGetOperand(x, 0) != src)) {
			src = NULL;
			break;
		}
		src = LLVMGetOperand(x, 0);
	}
	if (src && LLVMGetTypeKind(LLVMTypeOf(src)) == LLVMVectorTypeKind && LLVMGetVectorSize(LLVMTypeOf(src)) == 4)
		return LLVMBuildBitCast(L->b, src, L->i32, "");
	LLVMValueRef v = LLVMGetUndef(LLVMVectorType(L->i8, 4));
	for (int i = 0; i < 4; i++)
		v = LLVMBuildInsertElement(L->b, v, e[i], ci32(L, i), "");
	return LLVMBuildBitCast(L->b, v, L->i32, "");
}

/* x truncated to tf32 (its low 13 fraction bits cleared, as wgmma reads
 * an f32 in shared memory and the interpreter computes), the b32 register
 * mma.sync .tf32 reads. */
static LLVMValueRef tf32_word(Lower *L, LLVMValueRef x)
{
	return LLVMBuildAnd(L->b, LLVMBuildBitCast(L->b, x, L->i32, ""), ci32(L, (int32_t)0xffffe000u), "");
}

static const char *mma_type_name(ScalarKind k)
{
	switch (k) {
	case SK_F16: return "f16";
	case SK_BF16: return "bf16";
	case SK_F32: return "tf32";
	case SK_I8: return "s8";
	case SK_F8E4M3: return "e4m3";
	default: return "e5m2";
	}
}

/* The words mma.sync reads of one operand, per word of its fragment map:
 * each word once (a K step's words feed every tile of the other operand);
 * tf32x3 keeps the small parts in small[]. */
typedef struct MmaWords {
	LLVMValueRef *big, *small;
} MmaWords;

static LLVMValueRef mma_word(Lower *L, const Value *v, int kw, int r0, DotPrecision prec, MmaWords *w, bool small)
{
	int i = r0 / kw;
	if (w->big[i])
		return small ? w->small[i] : w->big[i];
	if (kw == 2) {
		LLVMTypeRef pair = LLVMVectorType(lw_elem_type(L, type_elem(v->type)), 2);
		w->big[i] = pair_word(L, lw_frag(L, v, r0), lw_frag(L, v, r0 + 1), pair);
	} else if (kw == 4) {
		LLVMValueRef e[4];
		for (int j = 0; j < 4; j++)
			e[j] = lw_frag(L, v, r0 + j);
		w->big[i] = quad_word(L, e);
	} else {
		LLVMValueRef x = lw_frag(L, v, r0);
		w->big[i] = tf32_word(L, x);
		if (prec == DOT_TF32X3) {
			LLVMValueRef big = LLVMBuildBitCast(L->b, w->big[i], L->f32, "");
			w->small[i] = tf32_word(L, LLVMBuildFSub(L->b, x, big, ""));
		}
	}
	return small ? w->small[i] : w->big[i];
}

/* mma.sync over operands in dot_operand encodings of the result's mma
 * encoding (encoding.c has the fragment maps): each accumulator register
 * whose column bit 0 and row bit 3 are clear starts one 16 x 8 tile (its
 * four registers c0..c3 are that register, one column on, eight rows on),
 * walked over K in steps of 8 kw (kw elements of an operand a 32-bit
 * register: 1 tf32, 2 f16 and bf16, 4 i8 and fp8). A block of fewer than
 * 16 rows or 8 columns is padded: the instruction's rows and columns past
 * it are lanes that hold replicas (computed alike, from the same inputs),
 * or fragment registers the maps do not have (A's rows 8-15 where M <= 8,
 * C's column 1 where N = 1, rows 8-15 where M <= 8), which take zeros and
 * whose results are dropped. The padding touches no real element. */
void lower_dot_mma(Lower *L, const Op *op)
{
	const Value *a = op->operands[0], *b = op->operands[1], *y = op->results[0];
	const Lin *la = lw_lin_of(L, a), *lb = lw_lin_of(L, b), *lc = lw_lin_of(L, y);
	Type at = a->type, ct = y->type;
	ScalarKind ka = (ScalarKind)at.scalar, kb = (ScalarKind)b->type.scalar;
	int K = at.shape[1];
	int kw = ka == SK_F32 ? 1 : ka == SK_F16 || ka == SK_BF16 ? 2 : 4, ks = 8 * kw;
	bool integer = ka == SK_I8;
	DotPrecision prec = ka == SK_F32 ? (DotPrecision)op->attr[0] : DOT_IEEE;
	int n_c = 1 << lc->n_reg;
	Tile t = lw_tile_new(L, n_c);
	MmaWords wa, wb;
	int na = (1 << la->n_reg) / kw + 1, nbw = (1 << lb->n_reg) / kw + 1;
	wa.big = arena_alloc(&L->arena, 2 * (size_t)na * sizeof(LLVMValueRef));
	wb.big = arena_alloc(&L->arena, 2 * (size_t)nbw * sizeof(LLVMValueRef));
	if (L->failed || !wa.big || !wb.big) {
		L->failed = true;
		return;
	}
	memset(wa.big, 0, 2 * (size_t)na * sizeof(LLVMValueRef));
	memset(wb.big, 0, 2 * (size_t)nbw * sizeof(LLVMValueRef));
	wa.small = wa.big + na;
	wb.small = wb.big + nbw;
	for (int k = 0; k < n_c; k++)
		t.e[k] = el(L, op->operands[2], k);
	char text[256];
	const char *acc = integer ? "s32" : "f32";
	snprintf(text, sizeof text,
	         "mma.sync.aligned.m16n8k%d.row.col.%s.%s.%s.%s {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, "
	         "{$10, $11, $12, $13};",
	         ks, acc, mma_type_name(ka), mma_type_name(kb), acc);
	const char *cons = integer ? "=r,=r,=r,=r,r,r,r,r,r,r,r,r,r,r" : "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f";
	LLVMTypeRef ct_l = integer ? L->i32 : L->f32;
	LLVMTypeRef args_t[14], fields[4] = {ct_l, ct_l, ct_l, ct_l};
	for (int i = 0; i < 6; i++)
		args_t[i] = L->i32;
	for (int i = 6; i < 10; i++)
		args_t[i] = ct_l;
	LLVMTypeRef rt = LLVMStructTypeInContext(L->c, fields, 4, 0);
	LLVMTypeRef ft = LLVMFunctionType(rt, args_t, 10, 0);
	LLVMValueRef mma = LLVMGetInlineAsm(ft, text, strlen(text), (char *)cons, strlen(cons), 0, 0,
	                                    LLVMInlineAsmDialectATT, 0);
	LLVMValueRef zero_w = ci32(L, 0), zero_c = integer ? zero_w : LLVMConstReal(L->f32, 0.0);
	/* tf32x3: a_small b_big, a_big b_small, then a_big b_big, each an mma */
	int parts = prec == DOT_TF32X3 ? 3 : 1;
	/* K steps outside: one step of the operands is live at a time */
	for (int kk = 0; kk < K / ks && !L->failed; kk++)
		for (int g = 0; g < n_c && !L->failed; g++) {
			int creg[4], areg[4], breg[2];
			if (!mma_frag_regs(lc, la, lb, ct, K, kw, g, kk, creg, areg, breg))
				continue;
			for (int p = 0; p < parts && !L->failed; p++) {
				LLVMValueRef args[10];
				for (int i = 0; i < 6; i++) {
					bool is_a = i < 4, small = parts == 3 && (is_a ? p == 0 : p == 1);
					int r0 = is_a ? areg[i] : breg[i - 4];
					args[i] = r0 < 0 ? zero_w : mma_word(L, is_a ? a : b, kw, r0, prec, is_a ? &wa : &wb, small);
				}
				for (int i = 0; i < 4; i++)
					args[6 + i] = creg[i] >= 0 ? t.e[creg[i]] : zero_c;
				LLVMValueRef r = LLVMBuildCall2(L->b, ft, mma, args, 10, "");
				for (int i = 0; i < 4; i++)
					if (creg[i] >= 0)
						t.e[creg[i]] = LLVMBuildExtractValue(L->b, r, (unsigned)i, "");
			}
		}
	/* the operands' pinned scratches are free again */
	for (int i = 0; i < 2; i++) {
		LazyFrags *z = L->lazy[op->operands[i]->id];
		if (z && z->owned)
			lw_smem_release(L, z->offset);
		L->lazy[op->operands[i]->id] = NULL;
	}
	L->vals[y->id] = t;
}
