/* dot_mma.c: dot with mma.sync m16n8k16: f16 and bf16 operands in
 * dot_operand encodings of an mma accumulator, read from registers or with
 * ldmatrix (convert.c). */
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

/* mma.sync m16n8k16 over operands in dot_operand encodings of the result's
 * mma encoding (layout.c has the fragment maps): each group of four
 * accumulator registers is one 16 x 8 tile, walked over K in steps of 16. */
void lower_dot_mma(Lower *L, const Op *op)
{
	const Value *a = op->operands[0], *b = op->operands[1], *y = op->results[0];
	const Lin *la = lw_lin_of(L, a), *lb = lw_lin_of(L, b), *lc = lw_lin_of(L, y);
	Type at = a->type, ct = y->type;
	int K = at.shape[1], N = ct.shape[1], kb = log2i(K), nb = log2i(N);
	bool bf = at.scalar == SK_BF16;
	int n_c = 1 << lc->n_reg;
	Tile t = lw_tile_new(L, n_c);
	if (L->failed)
		return;
	for (int k = 0; k < n_c; k++)
		t.e[k] = el(L, op->operands[2], k);
	char text[256];
	snprintf(text, sizeof text,
	         "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, "
	         "{$10, $11, $12, $13};",
	         bf ? "bf16" : "f16", bf ? "bf16" : "f16");
	const char *cons = "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f";
	LLVMTypeRef args_t[14], fields[4] = {L->f32, L->f32, L->f32, L->f32};
	for (int i = 0; i < 6; i++)
		args_t[i] = L->i32;
	for (int i = 6; i < 10; i++)
		args_t[i] = L->f32;
	LLVMTypeRef rt = LLVMStructTypeInContext(L->c, fields, 4, 0);
	LLVMTypeRef ft = LLVMFunctionType(rt, args_t, 10, 0);
	LLVMValueRef mma = LLVMGetInlineAsm(ft, text, strlen(text), (char *)cons, strlen(cons), 0, 0,
	                                    LLVMInlineAsmDialectATT, 0);
	LLVMTypeRef pair = LLVMVectorType(bf ? L->bf16 : L->f16, 2);
	/* K steps outside: one step of the operands is live at a time */
	for (int kk = 0; kk < K / 16 && !L->failed; kk++)
		for (int g = 0; g < n_c / 4 && !L->failed; g++) {
			int cc = lw_reg_const(lc, 4 * g);
			int row_c = cc >> nb, col_c = cc & (N - 1);
			int ka = lw_reg_index(la, (row_c << kb) | (kk * 16));
			int kbb = lw_reg_index(lb, ((kk * 16) << nb) | col_c);
			LLVMValueRef args[10];
			for (int i = 0; i < 6; i++) {
				const Value *src = i < 4 ? a : b;
				int r0 = i < 4 ? ka + 2 * i : kbb + 2 * (i - 4);
				args[i] = pair_word(L, lw_frag(L, src, r0), lw_frag(L, src, r0 + 1), pair);
			}
			for (int i = 0; i < 4; i++)
				args[6 + i] = t.e[4 * g + i];
			LLVMValueRef r = LLVMBuildCall2(L->b, ft, mma, args, 10, "");
			for (int i = 0; i < 4; i++)
				t.e[4 * g + i] = LLVMBuildExtractValue(L->b, r, (unsigned)i, "");
		}
	/* the operands' pinned scratches are free again */
	for (int i = 0; i < 2; i++) {
		LazyFrags *z = L->lazy[op->operands[i]->id];
		if (z && z->owned && z->offset < L->smem_base)
			L->smem_base = z->offset;
		L->lazy[op->operands[i]->id] = NULL;
	}
	L->vals[y->id] = t;
}
