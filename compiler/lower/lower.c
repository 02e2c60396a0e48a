/* lower.c: GPU IR to LLVM IR for NVPTX: the entry points, the lowering state
 * (types, where a thread's elements lie, intrinsics), control flow and the op
 * dispatch. lower_int.h says how the lowering goes and which file does what. */
#include "lower/lower_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/DebugInfo.h>

void lw_fail(Lower *L, Span at, const char *fmt, const char *what)
{
	if (!L->failed)
		diag_report(L->diag, DIAG_ERROR, at, fmt, what);
	L->failed = true;
}

/* ---- types and layout ----------------------------------------------------------- */

LLVMTypeRef lw_elem_type(Lower *L, Type t)
{
	if (t.ptr)
		return L->gptr;
	switch ((ScalarKind)t.scalar) {
	case SK_I1: return L->i1;
	case SK_I8: case SK_U8: case SK_F8E4M3: case SK_F8E5M2: return L->i8;
	case SK_I16: case SK_U16: return L->i16;
	case SK_I32: case SK_U32: return L->i32;
	case SK_I64: case SK_U64: return L->i64;
	case SK_F16: return L->f16;
	case SK_BF16: return L->bf16;
	case SK_F32: return L->f32;
	default: return L->f64;
	}
}

/* The type a value takes in shared memory (i1 as a byte). */
LLVMTypeRef lw_mem_type(Lower *L, Type t)
{
	return !t.ptr && t.scalar == SK_I1 ? L->i8 : lw_elem_type(L, t);
}

/* Coordinate d of linear index idx in shape t (powers of two). */
LLVMValueRef lw_coord(Lower *L, Type t, LLVMValueRef idx, int d)
{
	int shift = 0;
	for (int i = d + 1; i < t.rank; i++)
		shift += log2i(t.shape[i]);
	LLVMValueRef v = shift ? LLVMBuildLShr(L->b, idx, ci32(L, shift), "") : idx;
	return LLVMBuildAnd(L->b, v, ci32(L, t.shape[d] - 1), "");
}

/* Linear index of coordinates c in shape t. */
LLVMValueRef lw_linearize(Lower *L, Type t, LLVMValueRef *c)
{
	LLVMValueRef idx = ci32(L, 0);
	for (int d = 0; d < t.rank; d++) {
		idx = LLVMBuildShl(L->b, idx, ci32(L, log2i(t.shape[d])), "");
		idx = LLVMBuildOr(L->b, idx, c[d], "");
	}
	return idx;
}

Tile lw_tile_new(Lower *L, int n)
{
	Tile t = {.n = n};
	t.e = arena_alloc(&L->arena, (size_t)(n ? n : 1) * sizeof *t.e);
	if (!t.e)
		L->failed = true;
	return t;
}

/* ---- layouts ------------------------------------------------------------------- */

const Lin *lw_lin_of(Lower *L, const Value *v)
{
	if (!v->type.rank)
		return &L->scalar_lin;
	if (!L->lin_done[v->id]) {
		L->lin_done[v->id] = true;
		if (!v->enc || !enc_lin(v->enc, v->type, L->f->num_warps, &L->lins[v->id])) {
			lw_fail(L, v->def ? v->def->loc : L->f->loc, "internal error: %s without a layout on the GPU",
			     "a block");
			L->lins[v->id] = L->scalar_lin;
		}
	}
	return &L->lins[v->id];
}

/* The linear-index bits that register k sets. */
int lw_reg_const(const Lin *l, int k)
{
	int c = 0;
	for (int i = 0; i < l->n_reg; i++)
		if (k >> i & 1)
			c |= 1 << l->reg[i];
	return c;
}

/* The register that holds the element whose register bits are c. */
int lw_reg_index(const Lin *l, int c)
{
	int k = 0;
	for (int i = 0; i < l->n_reg; i++)
		if (c >> l->reg[i] & 1)
			k |= 1 << i;
	return k;
}

/* The bits of the thread id that do not change which element (replicas). */
unsigned lw_repl_mask(const Lin *l)
{
	unsigned m = 0;
	for (int i = 0; i < 5; i++)
		if (l->lane[i] < 0)
			m |= 1u << i;
	for (int i = 0; i < l->n_warp; i++)
		if (l->warp[i] < 0)
			m |= 1u << (5 + i);
	return m;
}

/* The linear-index bits this thread's lane and warp set (i32), computed
 * once per map in the entry block. */
LLVMValueRef lw_thread_part(Lower *L, const Lin *l)
{
	for (int i = 0; i < L->n_tparts; i++) {
		const Lin *o = &L->tparts[i].l;
		if (memcmp(o->lane, l->lane, 5) == 0 && o->n_warp == l->n_warp &&
		    memcmp(o->warp, l->warp, (size_t)l->n_warp) == 0)
			return L->tparts[i].v;
	}
	/* the thread-id bits that move by the same shift go together: one
	 * and, one shift (none for the identity map of a whole tid) */
	LLVMValueRef v = NULL;
	unsigned done = 0;
	for (int i = 0; i < 5 + l->n_warp; i++) {
		int to = i < 5 ? l->lane[i] : l->warp[i - 5];
		if (to < 0 || done >> i & 1)
			continue;
		unsigned m = 0;
		for (int j = i; j < 5 + l->n_warp; j++) {
			int tj = j < 5 ? l->lane[j] : l->warp[j - 5];
			if (tj >= 0 && tj - j == to - i)
				m |= 1u << j;
		}
		done |= m;
		LLVMValueRef part = m == (unsigned)(L->T - 1) ? L->tid : LLVMBuildAnd(L->pro, L->tid, ci32(L, m), "");
		part = to > i ? LLVMBuildShl(L->pro, part, ci32(L, to - i), "")
		     : to < i ? LLVMBuildLShr(L->pro, part, ci32(L, i - to), "") : part;
		v = v ? LLVMBuildOr(L->pro, v, part, "") : part;
	}
	if (!v)
		v = ci32(L, 0);
	if (L->n_tparts == L->cap_tparts) {
		int cap = L->cap_tparts ? 2 * L->cap_tparts : 16;
		struct ThreadPart *n = realloc(L->tparts, (size_t)cap * sizeof *n);
		if (!n) {
			L->failed = true;
			return v;
		}
		L->tparts = n;
		L->cap_tparts = cap;
	}
	L->tparts[L->n_tparts].l = *l;
	L->tparts[L->n_tparts++].v = v;
	return v;
}

/* The linear index (i32) of register k of this thread in map l. */
LLVMValueRef lw_index_of(Lower *L, const Lin *l, int k)
{
	int c = lw_reg_const(l, k);
	LLVMValueRef t = lw_thread_part(L, l);
	return c ? LLVMBuildOr(L->b, t, ci32(L, c), "") : t;
}

/* Whether the thread-id bits in m are all 0 here (i1; the constant true
 * when m is empty). */
LLVMValueRef lw_tid_bits_zero(Lower *L, unsigned m)
{
	m &= (unsigned)(L->T - 1);
	if (!m)
		return LLVMConstInt(L->i1, 1, 0);
	return LLVMBuildICmp(L->b, LLVMIntEQ, LLVMBuildAnd(L->b, L->tid, ci32(L, (long long)m), ""), ci32(L, 0), "");
}

/* ---- intrinsics and inline PTX ----------------------------------------------------- */

LLVMValueRef lw_call_intrinsic(Lower *L, const char *name, LLVMTypeRef *over, int n_over, LLVMValueRef *args,
                            int n_args)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(L->m, id, over, (size_t)n_over);
	LLVMTypeRef ft = LLVMIntrinsicGetType(L->c, id, over, (size_t)n_over);
	return LLVMBuildCall2(L->b, ft, fn, args, (unsigned)n_args, "");
}

LLVMValueRef lw_sreg(Lower *L, const char *name)
{
	return lw_call_intrinsic(L, name, NULL, 0, NULL, 0);
}

/* Branches to a new block when cond holds; returns the block to continue
 * in, for lw_end_if (NULL, and no branch, when cond is the constant true). */
LLVMBasicBlockRef lw_begin_if(Lower *L, LLVMValueRef cond, const char *name)
{
	if (LLVMIsAConstantInt(cond) && LLVMConstIntGetZExtValue(cond))
		return NULL;
	LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(L->c, L->fn, name);
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->c, L->fn, "endif");
	LLVMBuildCondBr(L->b, cond, then, done);
	LLVMPositionBuilderAtEnd(L->b, then);
	return done;
}

void lw_end_if(Lower *L, LLVMBasicBlockRef done)
{
	if (!done)
		return;
	LLVMBuildBr(L->b, done);
	LLVMPositionBuilderAtEnd(L->b, done);
}

/* ---- control flow ------------------------------------------------------------------ */

/* A loop "for (i = lo; i < hi; i++)" around body(); phis for n values. */
void lw_loop_begin(Lower *L, Loop *lp, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef *init, int n)
{
	lp->n = n;
	lp->pre = LLVMGetInsertBlock(L->b);
	lp->head = LLVMAppendBasicBlockInContext(L->c, L->fn, "loop");
	lp->body = LLVMAppendBasicBlockInContext(L->c, L->fn, "loop.body");
	lp->exit = LLVMAppendBasicBlockInContext(L->c, L->fn, "loop.exit");
	LLVMBuildBr(L->b, lp->head);
	LLVMPositionBuilderAtEnd(L->b, lp->head);
	lp->i = LLVMBuildPhi(L->b, L->i32, "i");
	LLVMAddIncoming(lp->i, &lo, &lp->pre, 1);
	for (int k = 0; k < n; k++) {
		lp->phis[k] = LLVMBuildPhi(L->b, LLVMTypeOf(init[k]), "");
		LLVMAddIncoming(lp->phis[k], &init[k], &lp->pre, 1);
	}
	LLVMBuildCondBr(L->b, LLVMBuildICmp(L->b, LLVMIntSLT, lp->i, hi, ""), lp->body, lp->exit);
	LLVMPositionBuilderAtEnd(L->b, lp->body);
}

void lw_loop_end(Lower *L, Loop *lp, LLVMValueRef *next)
{
	LLVMValueRef inc = LLVMBuildAdd(L->b, lp->i, ci32(L, 1), "");
	LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
	LLVMAddIncoming(lp->i, &inc, &end, 1);
	for (int k = 0; k < lp->n; k++)
		LLVMAddIncoming(lp->phis[k], &next[k], &end, 1);
	LLVMBuildBr(L->b, lp->head);
	LLVMPositionBuilderAtEnd(L->b, lp->exit);
}

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

static void lower_for(Lower *L, const Op *op)
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
		L->smem_base = lowest;
	}
}

static void lower_if(Lower *L, const Op *op)
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

static void lower_while(Lower *L, const Op *op)
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

/* ---- the op dispatch ------------------------------------------------------------------ */

void lw_lower_op(Lower *L, const Op *op)
{
	const Value *res = op->n_results ? op->results[0] : NULL;
	int n = res ? ept(L, res) : 1;
	int flags = op_flags(op->code);
	if (flags & OPF_ELEMWISE) {
		lower_elementwise(L, op, n);
		return;
	}
	switch (op->code) {
	case OP_CONST: {
		Tile t = lw_tile_new(L, 1);
		if (!L->failed)
			t.e[0] = lw_const_elem(L, op, type_elem(res->type));
		L->vals[res->id] = t;
		break;
	}
	case OP_ARANGE: {
		Tile t = lw_tile_new(L, n);
		for (int k = 0; k < n && !L->failed; k++)
			t.e[k] = op->attr[0] ? LLVMBuildAdd(L->b, lw_index_of(L, lw_lin_of(L, res), k), ci32(L, op->attr[0]), "")
			                     : lw_index_of(L, lw_lin_of(L, res), k);
		L->vals[res->id] = t;
		break;
	}
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS: {
		static const char *const ids[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
		                                   "llvm.nvvm.read.ptx.sreg.ctaid.z"};
		static const char *const ns[3] = {"llvm.nvvm.read.ptx.sreg.nctaid.x", "llvm.nvvm.read.ptx.sreg.nctaid.y",
		                                  "llvm.nvvm.read.ptx.sreg.nctaid.z"};
		Tile t = lw_tile_new(L, 1);
		if (!L->failed)
			t.e[0] = lw_sreg(L, (op->code == OP_PROGRAM_ID ? ids : ns)[op->attr[0]]);
		L->vals[res->id] = t;
		break;
	}
	case OP_SPLAT: /* uniform: one element stands for all */
	case OP_HINT:  /* the same elements in the same encoding */
		L->vals[res->id] = *val(L, op->operands[0]);
		break;
	case OP_RESHAPE:
	case OP_EXPAND_DIMS:
	case OP_BROADCAST:
	case OP_TRANS:
	case OP_CAT:
	case OP_JOIN:
	case OP_SPLIT:
		lower_shape(L, op);
		break;
	case OP_CONVERT_LAYOUT:
		lower_convert(L, op);
		break;
	case OP_GATHER:
		lower_gather(L, op);
		break;
	case OP_SREG:
		lower_sreg(L, op);
		break;
	case OP_INLINE_ASM:
		lower_inline_asm(L, op);
		break;
	case OP_LOAD:
	case OP_STORE:
		if (!(op->code == OP_STORE && (op->attr[0] & MEMF_TMA) && lw_tma_store(L, op)))
			lower_load_store(L, op);
		break;
	case OP_ATOMIC_RMW:
	case OP_ATOMIC_CAS:
		lower_atomic(L, op);
		break;
	case OP_REDUCE:
		lower_reduce(L, op);
		break;
	case OP_SCAN:
		lower_scan(L, op);
		break;
	case OP_DOT:
		lower_dot(L, op);
		break;
	case OP_PHILOX:
		lower_philox(L, op);
		break;
	case OP_SORT:
	case OP_TOPK:
		lower_sort(L, op);
		break;
	case OP_HISTOGRAM:
		lower_histogram(L, op);
		break;
	case OP_FOR:
	case OP_IF:
	case OP_WHILE:
		lw_smem_unknown(L); /* a barrier inside may come from either side */
		(op->code == OP_FOR ? lower_for : op->code == OP_IF ? lower_if : lower_while)(L, op);
		lw_smem_unknown(L);
		break;
	case OP_YIELD:
	case OP_CONDITION:
		break;
	case OP_RETURN:
		LLVMBuildRetVoid(L->b);
		break;
	case OP_PRINT:
		lower_print(L, op);
		break;
	case OP_ASSERT:
		lower_assert(L, op);
		break;
	case OP_BARRIER:
		lw_tma_store_fence(L);
		lw_smem_barrier(L);
		break;
	default:
		lw_fail(L, op->loc, "internal error: cannot lower '%s' to the GPU", op_name(op->code));
		break;
	}
}

void lower_region(Lower *L, const Region *r)
{
	lw_async_prescan(L, r);
	for (const Op *op = r->first; op && !L->failed; op = op->next) {
		if (L->scope && op->loc.line)
			LLVMSetCurrentDebugLocation2(L->b, LLVMDIBuilderCreateDebugLocation(L->c, op->loc.line, op->loc.col,
			                                                                    L->scope, NULL));
		lw_lower_op(L, op);
	}
}

/* Line tables, so that PTX carries .loc directives and profilers and
 * compute-sanitizer point at .tile lines. */
static LLVMDIBuilderRef debug_info(Lower *L)
{
	const IrFunc *f = L->f;
	if (!f->loc.src)
		return NULL;
	LLVMDIBuilderRef di = LLVMCreateDIBuilder(L->m);
	const char *path = f->loc.src->name;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dir = slash ? path : ".";
	size_t dir_len = slash ? (size_t)(slash - path) : 1;
	LLVMMetadataRef file = LLVMDIBuilderCreateFile(di, base, strlen(base), dir, dir_len);
	const char *producer = "blk";
	LLVMDIBuilderCreateCompileUnit(di, LLVMDWARFSourceLanguageC, file, producer, strlen(producer), 1, "", 0, 0, "", 0,
	                               (LLVMDWARFEmissionKind)3 /* DebugDirectivesOnly: .loc and .file, no DWARF sections (ptxas would treat those as a debug build) */, 0, 0, 0, "", 0, "", 0);
	LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(di, file, NULL, 0, LLVMDIFlagZero);
	L->scope = LLVMDIBuilderCreateFunction(di, file, f->name, strlen(f->name), f->name, strlen(f->name), file,
	                                       f->loc.line, ty, 0, 1, f->loc.line, LLVMDIFlagZero, 1);
	LLVMSetSubprogram(L->fn, L->scope);
	LLVMAddModuleFlag(L->m, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
	                  LLVMValueAsMetadata(LLVMConstInt(L->i32, LLVMDebugMetadataVersion(), 0)));
	LLVMAddModuleFlag(L->m, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
	                  LLVMValueAsMetadata(LLVMConstInt(L->i32, 2, 0)));
	return di;
}

/* ---- the kernel ----------------------------------------------------------------------------- */

/* How a runtime parameter is passed: pointers as global pointers, integers
 * narrower than 32 bits as 32-bit, f16 and bf16 as their 16 bits. */
static LLVMTypeRef param_type(Lower *L, Type t)
{
	if (t.ptr)
		return L->gptr;
	switch ((ScalarKind)t.scalar) {
	case SK_I64: case SK_U64: return L->i64;
	case SK_F16: case SK_BF16: return L->i16;
	case SK_F32: return L->f32;
	case SK_F64: return L->f64;
	default: return L->i32;
	}
}

static void add_annotation(Lower *L, const char *key, int value)
{
	LLVMValueRef md[3] = {L->fn, LLVMMDStringInContext(L->c, key, (unsigned)strlen(key)), ci32(L, value)};
	LLVMAddNamedMetadataOperand(L->m, "nvvm.annotations", LLVMMDNodeInContext(L->c, md, 3));
}

/* What a program of an sm_90 GPU may take of shared memory (opt-in). */
enum { SM90_SMEM_MAX = 227 * 1024 };

static bool lower_kernel(const IrFunc *f, LLVMContextRef ctx, LLVMModuleRef *out, int *shared_bytes, Diag *diag,
                         bool allow_ws, bool *split);

bool gpu_lower_llvm(const IrFunc *f, LLVMContextRef ctx, LLVMModuleRef *out, int *shared_bytes, Diag *diag)
{
	bool split = false;
	if (!lower_kernel(f, ctx, out, shared_bytes, diag, true, &split))
		return false;
	/* warp specialization keeps the loops' buffers for the whole kernel:
	 * where that outgrows the GPU's shared memory, the kernel is not split */
	if (split && *shared_bytes > SM90_SMEM_MAX) {
		LLVMDisposeModule(*out);
		return lower_kernel(f, ctx, out, shared_bytes, diag, false, &split);
	}
	return true;
}

static bool lower_kernel(const IrFunc *f, LLVMContextRef ctx, LLVMModuleRef *out, int *shared_bytes, Diag *diag,
                         bool allow_ws, bool *split)
{
	Lower L = {.f = f, .diag = diag, .c = ctx, .T = 32 * f->num_warps};
	L.m = LLVMModuleCreateWithNameInContext(f->name, ctx);
	L.b = LLVMCreateBuilderInContext(ctx);
	L.i1 = LLVMInt1TypeInContext(ctx);
	L.i8 = LLVMInt8TypeInContext(ctx);
	L.i16 = LLVMInt16TypeInContext(ctx);
	L.i32 = LLVMInt32TypeInContext(ctx);
	L.i64 = LLVMInt64TypeInContext(ctx);
	L.f16 = LLVMHalfTypeInContext(ctx);
	L.bf16 = LLVMBFloatTypeInContext(ctx);
	L.f32 = LLVMFloatTypeInContext(ctx);
	L.f64 = LLVMDoubleTypeInContext(ctx);
	L.gptr = LLVMPointerTypeInContext(ctx, 1);
	L.sptr = LLVMPointerTypeInContext(ctx, 3);
	L.vd = LLVMVoidTypeInContext(ctx);
	size_t nv = (size_t)(f->n_values ? f->n_values : 1);
	L.vals = calloc(nv, sizeof *L.vals);
	L.ax = axis_analyze(f);
	L.lins = calloc(nv, sizeof *L.lins);
	L.lin_done = calloc(nv, sizeof *L.lin_done);
	L.lazy = calloc(nv, sizeof *L.lazy);
	L.wg_inflight = calloc(nv, sizeof *L.wg_inflight);
	memset(&L.scalar_lin, -1, sizeof L.scalar_lin);
	L.scalar_lin.n_reg = 0;
	L.scalar_lin.n_lane = 5;
	L.scalar_lin.n_warp = log2i(f->num_warps);
	if (!f->gpu || !gpu_check_registers(f, diag)) { /* a block too large for registers: the error said so */
		if (!f->gpu)
			diag_plain(diag, DIAG_ERROR, "internal error: '%s' is not GPU IR (the layouts pass did not run)",
			           f->name);
		free(L.vals);
		free(L.ax);
		free(L.lins);
		free(L.lin_done);
		free(L.lazy);
		free(L.wg_inflight);
		LLVMDisposeBuilder(L.b);
		LLVMDisposeModule(L.m);
		return false;
	}
	LLVMTypeRef params[256];
	int np = 0;
	for (int i = 0; i < f->n_params; i++)
		if (f->params[i].value && np < 256)
			params[np++] = param_type(&L, f->params[i].type);
	int n_own = np;
	for (int i = 0; i < f->n_tmaps && np < 256; i++) /* the tensor maps, by value (tma_copy.c) */
		params[np++] = LLVMPointerTypeInContext(ctx, 0);
	bool ok = L.vals && L.ax && L.lins && L.lin_done && L.lazy && L.wg_inflight && np < 256;
	if (ok) {
		LLVMTypeRef ft = LLVMFunctionType(L.vd, params, (unsigned)np, 0);
		L.fn = LLVMAddFunction(L.m, f->name, ft);
		lw_tma_params(&L, n_own);
		bool ws = allow_ws && lw_ws_plan(&L); /* then a producer warpgroup runs beside the num_warps warps */
		*split = ws;
		add_annotation(&L, "kernel", 1);
		add_annotation(&L, "maxntidx", L.T + (ws ? 128 : 0));
		if (ws) /* at most what the consumers take later (setmaxnreg.inc must not lower it) */
			add_annotation(&L, "maxnreg", lw_ws_launch_regs(&L));
		LLVMValueRef smem = LLVMAddGlobalInAddressSpace(L.m, LLVMArrayType(L.i8, 0), "blk_smem", 3);
		LLVMSetLinkage(smem, LLVMExternalLinkage);
		LLVMSetAlignment(smem, 16);
		L.smem = smem;
		LLVMDIBuilderRef di = debug_info(&L);
		LLVMPositionBuilderAtEnd(L.b, LLVMAppendBasicBlockInContext(ctx, L.fn, "entry"));
		L.tid = lw_sreg(&L, "llvm.nvvm.read.ptx.sreg.tid.x");
		for (int i = 0, a = 0; i < f->n_params && !L.failed; i++) {
			const IrParam *p = &f->params[i];
			if (!p->value)
				continue;
			LLVMValueRef v = LLVMGetParam(L.fn, (unsigned)a++);
			Type t = p->type;
			if (!t.ptr && (t.scalar == SK_F16 || t.scalar == SK_BF16))
				v = LLVMBuildBitCast(L.b, v, lw_elem_type(&L, t), "");
			else if (!t.ptr && LLVMTypeOf(v) != lw_elem_type(&L, t))
				v = LLVMBuildTrunc(L.b, v, lw_elem_type(&L, t), "");
			Tile tl = lw_tile_new(&L, 1);
			if (L.failed)
				break;
			tl.e[0] = v;
			L.vals[p->value->id] = tl;
		}
		/* the entry block ends in a branch; index math shared by all ops
		 * goes before it (L.pro), the kernel's body after */
		LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(ctx, L.fn, "body");
		LLVMValueRef br = LLVMBuildBr(L.b, body);
		L.pro = LLVMCreateBuilderInContext(ctx);
		LLVMPositionBuilderBefore(L.pro, br);
		LLVMPositionBuilderAtEnd(L.b, body);
		if (ws)
			lw_ws_begin(&L);
		lower_region(&L, &f->body);
		ok = !L.failed;
		if (L.wgmma_used) /* the swizzled operands' pattern repeats every 1024 bytes from the window's start */
			LLVMSetAlignment(smem, 1024);
		if (di) {
			LLVMDIBuilderFinalize(di);
			LLVMDisposeDIBuilder(di);
		}
	} else {
		diag_plain(diag, DIAG_ERROR, "out of memory lowering '%s'", f->name);
	}
	arena_free(&L.arena);
	free(L.vals);
	free(L.ax);
	free(L.lins);
	free(L.lin_done);
	free(L.lazy);
	free(L.wg_inflight);
	free(L.async);
	free(L.tparts);
	free(L.ws_need);
	if (L.pro)
		LLVMDisposeBuilder(L.pro);
	LLVMDisposeBuilder(L.b);
	if (!ok) {
		LLVMDisposeModule(L.m);
		return false;
	}
	*out = L.m;
	*shared_bytes = L.smem_bytes;
	return true;
}
