/* builder.c: the helpers every op's lowering builds with: LLVM types of IR
 * types, where a thread's elements lie (layouts, indices), intrinsics and
 * special registers, `if` blocks and counted loops. */
#include "lower/lower_int.h"

#include <stdlib.h>
#include <string.h>

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

/* ---- intrinsics, special registers, if blocks --------------------------------------- */

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

/* ---- counted loops -------------------------------------------------------------------- */

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
