/* control_flow.c: for, if and while: basic blocks with phis for the values
 * they carry (a loop with wgmma dots rotated), each region lowered through
 * lower_region. */
#include "lower/lower_int.h"

#include <llvm-c/DebugInfo.h> /* LLVMTemporaryMDNode: a loop's unroll metadata names itself */

/* Phis for the elements of a region's arguments, fed from `from` with init. */
static void make_phis(Lower *L, const Region *r, const Value *const *init, LLVMBasicBlockRef from, Tile *phis)
{
	for (int i = 0; i < r->n_args; i++) {
		const Value *a = r->args[i];
		AsyncTile *at = lw_async_of(L, NULL, a); /* a tile in shared memory: its buffer's number */
		int n = at ? 1 : ept(L, a);
		phis[i] = lw_tile_new(L, n);
		for (int k = 0; k < n && !L->failed; k++) {
			LLVMValueRef in = el(L, init[i], k);
			phis[i].e[k] = LLVMBuildPhi(L->b, at ? L->i32 : lw_elem_type(L, a->type), "");
			LLVMAddIncoming(phis[i].e[k], &in, &from, 1);
		}
		if (at && !L->failed)
			*(a == at->arg2 ? &at->stage2 : &at->stage) = phis[i].e[0];
		L->vals[a->id] = phis[i];
	}
}

static void add_incoming(Lower *L, Tile *phis, int n, const Value *const *vals, LLVMBasicBlockRef from)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < phis[i].n; k++) {
			LLVMValueRef v = el(L, vals[i], k);
			LLVMAddIncoming(phis[i].e[k], &v, &from, 1);
		}
}

/* Whether a loop condition holds for iv: iv < ub, or iv > ub for a
 * signed loop whose (run-time) step is negative. */
LLVMValueRef lw_loop_cond(Lower *L, const Op *op, LLVMValueRef iv)
{
	bool sgn = is_signed(op->regions[0].args[0]->type);
	LLVMValueRef ub = el(L, op->operands[1], 0), step = el(L, op->operands[2], 0);
	LLVMValueRef up = LLVMBuildICmp(L->b, sgn ? LLVMIntSLT : LLVMIntULT, iv, ub, "");
	if (!sgn)
		return up;
	LLVMValueRef down = LLVMBuildICmp(L->b, LLVMIntSGT, iv, ub, "");
	if (LLVMIsAConstantInt(step)) /* a constant step: nonzero, its sign known */
		return LLVMConstIntGetSExtValue(step) < 0 ? down : up;
	LLVMValueRef neg = LLVMBuildICmp(L->b, LLVMIntSLT, step, LLVMConstInt(LLVMTypeOf(step), 0, 0), "");
	return LLVMBuildSelect(L->b, neg, down, up, "");
}

static bool has_wgmma(const Region *r)
{
	for (const Op *o = r->first; o; o = o->next) {
		if (o->code == OP_DOT && o->results[0]->enc && o->results[0]->enc->kind == ENC_MMA &&
		    o->results[0]->enc->version == 3)
			return true;
		for (int i = 0; i < o->n_regions; i++)
			if (has_wgmma(&o->regions[i]))
				return true;
	}
	return false;
}

/* A loop: a header with the carried values' phis and the condition, the
 * body, a branch back. A loop with wgmma dots is built rotated instead (a
 * guard before it, the condition at the end of the body) so that the exit
 * the body takes is its own block: there the products still in flight are
 * waited for, their registers tied through the wait, on no path that
 * skips the loop (ptxas serializes wgmmas whose accumulators a path may
 * define or read between issue and wait). */
/* range(..., unroll = N): the loop's back edge carries llvm.loop metadata
 * (a distinct node naming itself, then llvm.loop.unroll.count N), which
 * LLVM's loop unroller follows (with a remainder loop for other counts). */
static void unroll_hint(Lower *L, const Op *op, LLVMValueRef br)
{
	if (op->attr[0] <= 1)
		return;
	LLVMMetadataRef self = LLVMTemporaryMDNode(L->c, NULL, 0);
	LLVMMetadataRef kv[2] = {LLVMMDStringInContext2(L->c, "llvm.loop.unroll.count", 22),
	                         LLVMValueAsMetadata(ci32(L, op->attr[0]))};
	LLVMMetadataRef items[2] = {self, LLVMMDNodeInContext2(L->c, kv, 2)};
	LLVMMetadataRef loop = LLVMMDNodeInContext2(L->c, items, 2);
	LLVMMetadataReplaceAllUsesWith(self, loop);
	LLVMSetMetadata(br, LLVMGetMDKindIDInContext(L->c, "llvm.loop", 9), LLVMMetadataAsValue(L->c, loop));
}

void lower_for(Lower *L, const Op *op)
{
	const Region *body = &op->regions[0];
	int nc = op->n_results;
	lw_async_commit(L); /* the first iteration's copies: a group of their own */
	bool rotated = has_wgmma(body);
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b);
	LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->c, L->fn, "for");
	LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(L->c, L->fn, "for.body");
	LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(L->c, L->fn, "for.end");
	LLVMBasicBlockRef skip = rotated ? LLVMAppendBasicBlockInContext(L->c, L->fn, "for.skip") : NULL;
	LLVMBasicBlockRef done = rotated ? LLVMAppendBasicBlockInContext(L->c, L->fn, "for.done") : NULL;
	const Value *init[1 + 64];
	if (nc > 64) {
		lw_fail(L, op->loc, "%s", "a loop carrying more than 64 values");
		return;
	}
	if (rotated)
		LLVMBuildCondBr(L->b, lw_loop_cond(L, op, el(L, op->operands[0], 0)), head, skip);
	else
		LLVMBuildBr(L->b, head);
	LLVMPositionBuilderAtEnd(L->b, head);
	init[0] = op->operands[0];
	for (int i = 0; i < nc; i++)
		init[1 + i] = op->operands[3 + i];
	Tile phis[1 + 64];
	make_phis(L, body, init, pre, phis);
	if (L->failed)
		return;
	LLVMValueRef iv = phis[0].e[0];
	if (rotated)
		LLVMBuildBr(L->b, bb);
	else
		LLVMBuildCondBr(L->b, lw_loop_cond(L, op, iv), bb, exit);
	LLVMPositionBuilderAtEnd(L->b, bb);
	lw_smem_unknown(L); /* after the previous iteration, or what came before the loop */
	L->async_synced = false; /* this iteration's tiles: not waited for yet */
	lower_region(L, body);
	lw_tma_flush(L, op); /* (a body whose conversions did not take them) */
	if (L->failed)
		return;
	const Op *y = terminator(body);
	LLVMValueRef next = LLVMBuildAdd(L->b, iv, el(L, op->operands[2], 0), "");
	LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
	LLVMAddIncoming(iv, &next, &end, 1);
	add_incoming(L, phis + 1, nc, (const Value *const *)y->operands, end);
	if (!rotated) {
		unroll_hint(L, op, LLVMBuildBr(L->b, head));
		LLVMPositionBuilderAtEnd(L->b, exit);
		for (int i = 0; i < nc; i++)
			L->vals[op->results[i]->id] = phis[1 + i];
	} else {
		unroll_hint(L, op, LLVMBuildCondBr(L->b, lw_loop_cond(L, op, next), head, done));
		LLVMPositionBuilderAtEnd(L->b, done);
		Tile last[64];
		for (int i = 0; i < nc && !L->failed; i++) {
			last[i] = *val(L, y->operands[i]);
			if (L->wg_inflight[y->operands[i]->id]) /* the last products are in before anything reads them */
				lw_wgmma_wait(L, &last[i]);
		}
		LLVMBuildBr(L->b, exit);
		LLVMPositionBuilderAtEnd(L->b, skip);
		LLVMBuildBr(L->b, exit);
		LLVMPositionBuilderAtEnd(L->b, exit);
		for (int i = 0; i < nc && !L->failed; i++) {
			Tile t = lw_tile_new(L, phis[1 + i].n);
			for (int k = 0; k < t.n && !L->failed; k++) {
				LLVMValueRef in[2] = {last[i].n == 1 ? last[i].e[0] : last[i].e[k], el(L, init[1 + i], k)};
				LLVMBasicBlockRef from[2] = {done, skip};
				t.e[k] = LLVMBuildPhi(L->b, LLVMTypeOf(phis[1 + i].e[k]), "");
				LLVMAddIncoming(t.e[k], in, from, 2);
			}
			L->vals[op->results[i]->id] = t;
		}
	}
	/* the loop's stage buffers: the last copies (masked off) done, then free */
	int lowest = -1;
	for (int i = 0; i < L->n_async; i++)
		if (L->async[i].loop == op && L->async[i].offset >= 0 && (lowest < 0 || L->async[i].offset < lowest))
			lowest = L->async[i].offset;
	if (lowest >= 0 && L->ws) {
		lw_tma_drain(L, op); /* the buffers stay: the producer may be filling them for the loop's next run */
	} else if (lowest >= 0) {
		lw_async_commit(L);
		lw_async_asm(L, "cp.async.wait_group 0;", NULL, NULL, 0, "");
		lw_tma_drain(L, op);
		lw_smem_barrier(L);
		lw_smem_release(L, lowest);
	}
}

void lower_if(Lower *L, const Op *op)
{
	LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(L->c, L->fn, "then");
	LLVMBasicBlockRef eb = LLVMAppendBasicBlockInContext(L->c, L->fn, "else");
	LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(L->c, L->fn, "endif");
	LLVMBuildCondBr(L->b, el(L, op->operands[0], 0), tb, eb);
	LLVMBasicBlockRef ends[2];
	const Op *ys[2];
	LLVMBasicBlockRef starts[2] = {tb, eb};
	for (int r = 0; r < 2; r++) {
		LLVMPositionBuilderAtEnd(L->b, starts[r]);
		lw_smem_unknown(L);
		lower_region(L, &op->regions[r]);
		if (L->failed)
			return;
		ys[r] = terminator(&op->regions[r]);
		ends[r] = LLVMGetInsertBlock(L->b);
		LLVMBuildBr(L->b, merge);
	}
	LLVMPositionBuilderAtEnd(L->b, merge);
	for (int i = 0; i < op->n_results; i++) {
		const Value *res = op->results[i];
		int n = ept(L, res);
		Tile t = lw_tile_new(L, n);
		for (int k = 0; k < n && !L->failed; k++) {
			t.e[k] = LLVMBuildPhi(L->b, lw_elem_type(L, res->type), "");
			LLVMValueRef in[2] = {el(L, ys[0]->operands[i], k), el(L, ys[1]->operands[i], k)};
			LLVMAddIncoming(t.e[k], in, ends, 2);
		}
		L->vals[res->id] = t;
	}
}

void lower_while(Lower *L, const Op *op)
{
	const Region *before = &op->regions[0], *after = &op->regions[1];
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b);
	LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->c, L->fn, "while");
	LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(L->c, L->fn, "while.body");
	LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(L->c, L->fn, "while.end");
	LLVMBuildBr(L->b, head);
	LLVMPositionBuilderAtEnd(L->b, head);
	int n = before->n_args;
	if (n > 64) {
		lw_fail(L, op->loc, "%s", "a loop carrying more than 64 values");
		return;
	}
	Tile phis[64];
	make_phis(L, before, (const Value *const *)op->operands, pre, phis);
	lw_smem_unknown(L);
	lower_region(L, before);
	if (L->failed)
		return;
	const Op *cond = terminator(before);
	LLVMBuildCondBr(L->b, el(L, cond->operands[0], 0), bb, exit);
	LLVMPositionBuilderAtEnd(L->b, bb);
	for (int i = 0; i < after->n_args; i++)
		L->vals[after->args[i]->id] = *val(L, cond->operands[1 + i]);
	lw_smem_unknown(L);
	lower_region(L, after);
	if (L->failed)
		return;
	const Op *y = terminator(after);
	LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
	add_incoming(L, phis, n, (const Value *const *)y->operands, end);
	LLVMBuildBr(L->b, head);
	LLVMPositionBuilderAtEnd(L->b, exit);
	for (int i = 0; i < op->n_results; i++)
		L->vals[op->results[i]->id] = *val(L, cond->operands[1 + i]);
}
