/* dot.c: dot: mma.sync where the layouts pass chose an mma encoding
 * (dot_mma.c), else FMAs from shared memory. */
#include "lower/lower_int.h"

/* x truncated to tf32: its low 13 fraction bits cleared, as the tensor
 * cores read an f32 (dot_mma.c does the same to mma.sync's words). */
static LLVMValueRef tf32_trunc(Lower *L, LLVMValueRef x)
{
	LLVMValueRef u = LLVMBuildBitCast(L->b, x, L->i32, "");
	return LLVMBuildBitCast(L->b, LLVMBuildAnd(L->b, u, ci32(L, (int32_t)0xffffe000u), ""), L->f32, "");
}

/* dot with FMAs from shared memory: each result element walks K. f32 inputs
 * follow input_precision as mma.sync does: tf32 truncates both to tf32 (their
 * product is exact in f32), tf32x3 sums a_small b_big, a_big b_small and
 * a_big b_big (big = tf32(x), small = tf32(x - big)), ieee is exact. */
static void lower_dot_fma(Lower *L, const Op *op)
{
	const Value *a = op->operands[0], *b = op->operands[1], *y = op->results[0];
	Type at = a->type, bt = b->type, ct = y->type;
	int K = at.shape[1];
	int a_bytes = (numel(at) * type_bytes(at) + 15) & ~15;
	int b_bytes = numel(bt) * type_bytes(bt);
	int base = lw_smem_take(L, a_bytes + b_bytes);
	lw_smem_store_block(L, a, val(L, a), base);
	lw_smem_store_block(L, b, val(L, b), base + a_bytes);
	lw_smem_sync(L, base, a_bytes + b_bytes);
	const Lin *lo = lw_lin_of(L, y);
	int count = 1 << lo->n_reg;
	Tile t = lw_tile_new(L, count);
	/* a float accumulator narrower than f32 sums in f32 and rounds once at
	 * the end (irgen casts such an acc to f32 around the dot already) */
	Type res_t = type_elem(ct), acc_t = res_t;
	if (res_t.scalar == SK_F16 || res_t.scalar == SK_BF16 || res_t.scalar == SK_F8E4M3 || res_t.scalar == SK_F8E5M2)
		acc_t = type_scalar(SK_F32);
	bool fl = type_is_float(acc_t);
	Type in_e = type_elem(at), in_b = type_elem(bt); /* mixed fp8: each side its own kind */
	DotPrecision prec = at.scalar == SK_F32 && bt.scalar == SK_F32 && acc_t.scalar == SK_F32 ? (DotPrecision)op->attr[0]
	                                                                                          : DOT_IEEE;
	for (int k = 0; k < count && !L->failed; k++) {
		LLVMValueRef oidx = lw_index_of(L, lo, k);
		LLVMValueRef i = lw_coord(L, ct, oidx, 0), j = lw_coord(L, ct, oidx, 1);
		LLVMValueRef acc = lw_cast(L, res_t, acc_t, el(L, op->operands[2], k), op->loc);
		Loop lp;
		lw_loop_begin(L, &lp, ci32(L, 0), ci32(L, K), &acc, 1);
		LLVMValueRef ai = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, i, ci32(L, K), ""), lp.i, "");
		LLVMValueRef bi = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, lp.i, ci32(L, bt.shape[1]), ""), j, "");
		LLVMValueRef xv = lw_cast(L, in_e, acc_t, lw_smem_load(L, in_e, base, ai), op->loc);
		LLVMValueRef yv = lw_cast(L, in_b, acc_t, lw_smem_load(L, in_b, base + a_bytes, bi), op->loc);
		LLVMValueRef next;
		if (fl) {
			LLVMTypeRef ty = LLVMTypeOf(xv);
			next = lp.phis[0];
			LLVMValueRef xs = NULL, ys = NULL;
			if (prec != DOT_IEEE) {
				LLVMValueRef xb = tf32_trunc(L, xv), yb = tf32_trunc(L, yv);
				if (prec == DOT_TF32X3) {
					xs = tf32_trunc(L, LLVMBuildFSub(L->b, xv, xb, ""));
					ys = tf32_trunc(L, LLVMBuildFSub(L->b, yv, yb, ""));
				}
				xv = xb, yv = yb;
			}
			LLVMValueRef terms[3][2] = {{xs, yv}, {xv, ys}, {xv, yv}};
			for (int p = 0; p < 3; p++) {
				if (!terms[p][0] || !terms[p][1])
					continue;
				LLVMValueRef args[3] = {terms[p][0], terms[p][1], next};
				next = lw_call_intrinsic(L, "llvm.fma", &ty, 1, args, 3);
			}
		} else {
			next = LLVMBuildAdd(L->b, lp.phis[0], LLVMBuildMul(L->b, xv, yv, ""), "");
		}
		lw_loop_end(L, &lp, &next);
		t.e[k] = lw_cast(L, acc_t, res_t, lp.phis[0], op->loc);
	}
	L->vals[y->id] = t;
}

void lower_dot(Lower *L, const Op *op)
{
	const Value *a = op->operands[0], *y = op->results[0];
	/* the layouts pass leaves the operands of an mma dot as its
	 * dot_operands (or in encodings with the same map) */
	if (a->enc && y->enc && y->enc->kind == ENC_MMA) {
		if (y->enc->version == 3)
			lower_dot_wgmma(L, op);
		else
			lower_dot_mma(L, op);
		return;
	}
	lower_dot_fma(L, op);
}
