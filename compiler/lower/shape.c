/* shape.c: the shape ops (reshape, expand_dims, broadcast, trans, cat, join,
 * split): registers renamed, or the operands through shared memory. */
#include "lower/lower_int.h"

/* Index maps of the shape ops: the input linear index of an output one. */
static LLVMValueRef source_index(Lower *L, const Op *op, LLVMValueRef oidx, int *which)
{
	Type in_t = op->operands[0]->type, out_t = op->results[0]->type;
	LLVMValueRef c[BLK_MAX_RANK], ic[BLK_MAX_RANK];
	for (int d = 0; d < out_t.rank; d++)
		c[d] = lw_coord(L, out_t, oidx, d);
	*which = 0;
	switch (op->code) {
	case OP_BROADCAST:
		for (int d = 0; d < in_t.rank; d++)
			ic[d] = in_t.shape[d] == 1 ? ci32(L, 0) : c[d];
		return lw_linearize(L, in_t, ic);
	case OP_TRANS:
		for (int d = 0; d < out_t.rank; d++)
			ic[op->attr[d]] = c[d];
		return lw_linearize(L, in_t, ic);
	case OP_CAT: {
		int axis = (int)op->attr[0], half = in_t.shape[axis];
		/* which input is a runtime choice: handled by the caller with a select */
		for (int d = 0; d < in_t.rank; d++)
			ic[d] = d == axis ? LLVMBuildAnd(L->b, c[d], ci32(L, half - 1), "") : c[d];
		*which = -1 - axis;
		return lw_linearize(L, in_t, ic);
	}
	case OP_JOIN:
		for (int d = 0; d < in_t.rank; d++)
			ic[d] = c[d];
		*which = -100; /* the last coordinate picks the input */
		return lw_linearize(L, in_t, ic);
	default:
		return oidx;
	}
}

/* Shape ops rename registers when the lanes and warps of result and
 * operand mean the same (what the layouts pass arranges); otherwise the
 * operands go through shared memory. */
void lower_shape(Lower *L, const Op *op)
{
	const Value *x = op->operands[0];
	const Lin *li = lw_lin_of(L, x);
	int nres = op->code == OP_SPLIT ? 2 : 1;
	Type in_t = x->type;
	bool staged = false;
	int first = 0, second = (numel(in_t) * type_bytes(in_t) + 7) & ~7;
	for (int r = 0; r < nres && !L->failed; r++) {
		const Value *y = op->results[r];
		const Lin *lo = lw_lin_of(L, y);
		int n_out = 1 << lo->n_reg;
		Tile t = lw_tile_new(L, n_out);
		if (L->failed)
			return;
		if (op->code != OP_SPLIT && op->n_operands == 1 && val(L, x)->n == 1) {
			t.e[0] = val(L, x)->e[0]; /* uniform stays uniform */
			t.n = 1;
			L->vals[y->id] = t;
			continue;
		}
		if (shape_in_registers(op, li, lo)) {
			for (int k = 0; k < n_out; k++) {
				int c = lw_reg_const(lo, k), in_c = op->code == OP_SPLIT ? r : 0, which = 0, m;
				for (int bit = 0; bit < 31; bit++)
					if (c >> bit & 1) {
						shape_bit_map(op, bit, &m);
						if (m >= 0)
							in_c |= 1 << m;
						else if (m == MAP_SEL)
							which = 1;
					}
				t.e[k] = el(L, op->operands[which], lw_reg_index(li, in_c));
			}
			L->vals[y->id] = t;
			continue;
		}
		if (!staged) {
			first = lw_smem_take(L, op->n_operands > 1 ? 2 * second : second);
			second += first;
			lw_smem_store_block(L, x, val(L, x), first);
			if (op->n_operands > 1)
				lw_smem_store_block(L, op->operands[1], val(L, op->operands[1]), second);
			lw_smem_sync(L, first, (op->n_operands > 1 ? 2 : 1) * (second - first));
			staged = true;
		}
		Type out_t = y->type;
		for (int k = 0; k < n_out && !L->failed; k++) {
			LLVMValueRef oidx = lw_index_of(L, lo, k);
			if (op->code == OP_SPLIT) {
				LLVMValueRef src = LLVMBuildOr(L->b, LLVMBuildShl(L->b, oidx, ci32(L, 1), ""), ci32(L, r), "");
				t.e[k] = lw_smem_load(L, in_t, first, src);
				continue;
			}
			int which;
			LLVMValueRef src = source_index(L, op, oidx, &which);
			if (which == 0) {
				t.e[k] = lw_smem_load(L, in_t, first, src);
				continue;
			}
			LLVMValueRef pick; /* i1: take the second input */
			if (which == -100) {
				pick = LLVMBuildICmp(L->b, LLVMIntNE, lw_coord(L, out_t, oidx, out_t.rank - 1), ci32(L, 0), "");
			} else {
				int axis = -1 - which;
				pick = LLVMBuildICmp(L->b, LLVMIntUGE, lw_coord(L, out_t, oidx, axis), ci32(L, in_t.shape[axis]), "");
			}
			LLVMValueRef a = lw_smem_load(L, in_t, first, src), b = lw_smem_load(L, in_t, second, src);
			t.e[k] = LLVMBuildSelect(L->b, pick, b, a, "");
		}
		L->vals[y->id] = t;
	}
}
