/* gather.c: gather (x at indices along an axis, which x[i], slices, flip
 * and Triton's gather become), and the special registers (globaltimer,
 * smid). The whole of x goes to shared memory by linear index; each thread
 * then reads the elements of its own part of the result. */
#include "lower/lower_int.h"

#include <string.h>

void lower_gather(Lower *L, const Op *op)
{
	const Value *x = op->operands[0], *idx = op->operands[1], *y = op->results[0];
	Type xt = x->type, yt = y->type;
	int axis = (int)op->attr[0];
	const Lin *lo = lw_lin_of(L, y);
	int n = 1 << lo->n_reg;
	Tile t = lw_tile_new(L, n);
	if (L->failed)
		return;
	/* a uniform block (a splat: one element for more registers) gives its
	 * element at every index; one register a thread is not uniform */
	if (val(L, x)->n == 1 && ept(L, x) > 1) {
		t.e[0] = val(L, x)->e[0];
		t.n = 1;
		L->vals[y->id] = t;
		return;
	}
	int bytes = (numel(xt) * type_bytes(xt) + 7) & ~7;
	int at = lw_smem_take(L, bytes);
	lw_smem_store_block(L, x, val(L, x), at);
	lw_smem_sync(L, at, bytes);
	for (int k = 0; k < n && !L->failed; k++) {
		LLVMValueRef oidx = lw_index_of(L, lo, k), c[BLK_MAX_RANK];
		for (int d = 0; d < yt.rank; d++)
			c[d] = lw_coord(L, yt, oidx, d);
		/* an index outside the axis is undefined (docs/language.md); it is
		 * wrapped into the axis so that the read stays inside the scratch */
		c[axis] = LLVMBuildAnd(L->b, el(L, idx, k), ci32(L, xt.shape[axis] - 1), "");
		t.e[k] = lw_smem_load(L, xt, at, lw_linearize(L, xt, c));
	}
	L->vals[y->id] = t;
}

void lower_sreg(Lower *L, const Op *op)
{
	Tile t = lw_tile_new(L, 1);
	if (L->failed)
		return;
	if (op->attr[0] == SREG_GLOBALTIMER) {
		/* volatile: each read is a new time */
		LLVMTypeRef ft = LLVMFunctionType(L->i64, NULL, 0, 0);
		const char *text = "mov.u64 $0, %globaltimer;", *cons = "=l";
		LLVMValueRef fn = LLVMGetInlineAsm(ft, text, strlen(text), (char *)cons, strlen(cons), 1, 0,
		                                   LLVMInlineAsmDialectATT, 0);
		t.e[0] = LLVMBuildCall2(L->b, ft, fn, NULL, 0, "");
	} else {
		t.e[0] = lw_sreg(L, "llvm.nvvm.read.ptx.sreg.smid");
	}
	L->vals[op->results[0]->id] = t;
}
