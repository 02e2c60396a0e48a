/* lower/sort.c: sort and topk as bitonic networks over the bits of the
 * sorted axis.
 *
 * Each element becomes one unsigned word whose order is the order to sort
 * by: the key mapped to an unsigned integer of its width (the sign bit of
 * signed ints flipped; floats by their bits, negative ones inverted,
 * positive ones with the sign bit set, every NaN first made the positive
 * NaN of all ones, which maps above +inf), inverted for a descending sort,
 * then the element's position along the axis below it where positions are
 * read (a sort's or topk's second result). Words are distinct then, so the
 * network's result is the stable order; values alone need no position,
 * since equal words give equal values. Words are 32, 64 or 128 bits wide.
 *
 * A compare-exchange of axis bit j pairs the elements whose positions
 * differ in bit j; the one whose bit j equals the network's direction bit
 * keeps the smaller word. Where bit j lies in the thread: between two of
 * its registers; across lanes, by a butterfly shuffle; across warps,
 * through shared memory (each thread's words at k * T + tid, read back at
 * the partner's thread). The layouts pass gives a sort's operand the axis
 * in registers first (up to 32 elements), then lanes, then warps, and the
 * result the same layout: the sort is in place.
 *
 * topk(k = 2^q): chunks of k along axis bits 0..q-1 are sorted, in
 * opposite directions across the first bit above them to go; then each
 * upper bit in turn (registers first, then lanes, then warps) is dropped by
 * keeping the smaller word of each pair (the k smallest of an ascending
 * and a descending run: a bitonic run), which a merge of q stages sorts
 * again, opposite across the next bit to go. The words are those of a
 * descending sort, so the k smallest are the k largest keys, earlier
 * positions first among equals. The k words of each line reach the
 * results' layout through shared memory. */
#include "lower/lower_int.h"

#include <string.h>

enum { LOC_REG, LOC_LANE, LOC_WARP };

typedef struct Net {
	Lower *L;
	Type t;                /* the operand */
	int n;                 /* log2 of the axis' length */
	int ab[32];            /* linear-index bit of each axis bit */
	LLVMTypeRef wt;        /* the word type */
	int wbits;
	LLVMValueRef *w;       /* this thread's words */
	int n_reg;             /* registers: 1 << n_reg */
	int8_t reg[LIN_MAX_BITS], lane[5], warp[LIN_MAX_WARP_BITS];
	int n_warp;
} Net;

/* Where axis bit a lies: *pos is the register, lane or warp bit. */
static int locate(const Net *N, int a, int *pos)
{
	int b = N->ab[a];
	for (int i = 0; i < N->n_reg; i++)
		if (N->reg[i] == b)
			return *pos = i, LOC_REG;
	for (int i = 0; i < 5; i++)
		if (N->lane[i] == b)
			return *pos = i, LOC_LANE;
	for (int i = 0; i < N->n_warp; i++)
		if (N->warp[i] == b)
			return *pos = i, LOC_WARP;
	return *pos = -1, -1;
}

static LLVMValueRef tid_bit(Lower *L, int bit)
{
	LLVMValueRef v = LLVMBuildLShr(L->b, L->tid, ci32(L, bit), "");
	return LLVMBuildTrunc(L->b, v, L->i1, "");
}

/* Bit a of the position of register k's element (i1); a < 0: 0. */
static LLVMValueRef axis_bit(Net *N, int a, int k)
{
	Lower *L = N->L;
	int pos, loc = a < 0 ? -1 : locate(N, a, &pos);
	if (loc == LOC_REG)
		return LLVMConstInt(L->i1, (unsigned)(k >> pos & 1), 0);
	if (loc == LOC_LANE)
		return tid_bit(L, pos);
	if (loc == LOC_WARP)
		return tid_bit(L, 5 + pos);
	return LLVMConstInt(L->i1, 0, 0);
}

static LLVMValueRef umin(Lower *L, LLVMValueRef a, LLVMValueRef b)
{
	return LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntULT, a, b, ""), a, b, "");
}

static LLVMValueRef umax(Lower *L, LLVMValueRef a, LLVMValueRef b)
{
	return LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntULT, a, b, ""), b, a, "");
}

/* The word of the thread whose lane differs in the bits of mask. */
static LLVMValueRef shfl_word(Net *N, LLVMValueRef v, int mask)
{
	Lower *L = N->L;
	LLVMValueRef r = NULL;
	for (int p = 0; p < N->wbits / 32; p++) {
		LLVMValueRef piece = p ? LLVMBuildLShr(L->b, v, LLVMConstInt(N->wt, (unsigned)(32 * p), 0), "") : v;
		piece = N->wbits > 32 ? LLVMBuildTrunc(L->b, piece, L->i32, "") : piece;
		LLVMValueRef a[4] = {LLVMConstInt(L->i32, 0xFFFFFFFFu, 0), piece, ci32(L, mask), ci32(L, 31)};
		LLVMValueRef s = lw_call_intrinsic(L, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, a, 4);
		if (N->wbits > 32)
			s = LLVMBuildZExt(L->b, s, N->wt, "");
		if (p)
			s = LLVMBuildShl(L->b, s, LLVMConstInt(N->wt, (unsigned)(32 * p), 0), "");
		r = r ? LLVMBuildOr(L->b, r, s, "") : s;
	}
	return r;
}

/* The partners' words across warp bit wb, through shared memory. */
static void exchange_warps(Net *N, int wb, LLVMValueRef *out)
{
	Lower *L = N->L;
	int nr = 1 << N->n_reg, bytes = nr * L->T * N->wbits / 8;
	int off = lw_smem_take(L, bytes);
	LLVMValueRef other = LLVMBuildXor(L->b, L->tid, ci32(L, 32 << wb), "");
	for (int k = 0; k < nr; k++) {
		LLVMValueRef at = LLVMBuildAdd(L->b, ci32(L, k * L->T), L->tid, "");
		LLVMBuildStore(L->b, N->w[k], lw_smem_at(L, N->wt, off, at));
	}
	lw_smem_sync(L, off, bytes);
	for (int k = 0; k < nr; k++) {
		LLVMValueRef at = LLVMBuildAdd(L->b, ci32(L, k * L->T), other, "");
		out[k] = LLVMBuildLoad2(L->b, N->wt, lw_smem_at(L, N->wt, off, at), "");
	}
}

/* The partners' words across lane or warp bit pos (loc). */
static bool partners(Net *N, int loc, int pos, LLVMValueRef *out)
{
	int nr = 1 << N->n_reg;
	if (loc == LOC_WARP) {
		exchange_warps(N, pos, out);
		return true;
	}
	for (int k = 0; k < nr; k++)
		out[k] = shfl_word(N, N->w[k], 1 << pos);
	return true;
}

/* Compare-exchange along axis bit j; direction bit d (< 0: ascending). */
static void cmp_exchange(Net *N, int j, int d)
{
	Lower *L = N->L;
	int pos, loc = locate(N, j, &pos), nr = 1 << N->n_reg;
	if (loc == LOC_REG) {
		for (int k = 0; k < nr; k++) {
			if (k >> pos & 1)
				continue;
			int k2 = k | 1 << pos;
			LLVMValueRef lo = umin(L, N->w[k], N->w[k2]), hi = umax(L, N->w[k], N->w[k2]);
			LLVMValueRef down = axis_bit(N, d, k); /* 1: this pair descends */
			N->w[k] = LLVMBuildSelect(L->b, down, hi, lo, "");
			N->w[k2] = LLVMBuildSelect(L->b, down, lo, hi, "");
		}
		return;
	}
	LLVMValueRef *o = arena_alloc(&L->arena, (size_t)nr * sizeof *o);
	if (!o || loc < 0) {
		L->failed = true;
		return;
	}
	partners(N, loc, pos, o);
	LLVMValueRef upper = tid_bit(L, loc == LOC_LANE ? pos : 5 + pos);
	for (int k = 0; k < nr; k++) {
		/* the smaller word where bit j equals the direction bit */
		LLVMValueRef keep_min = LLVMBuildICmp(L->b, LLVMIntEQ, upper, axis_bit(N, d, k), "");
		N->w[k] = LLVMBuildSelect(L->b, keep_min, umin(L, N->w[k], o[k]), umax(L, N->w[k], o[k]), "");
	}
}

/* Keeps the smaller word of each pair across axis bit j, which then lies
 * nowhere (registers) or is replicated (lanes, warps). */
static void drop_bit(Net *N, int j)
{
	Lower *L = N->L;
	int pos, loc = locate(N, j, &pos), nr = 1 << N->n_reg;
	if (loc == LOC_REG) {
		for (int k = 0, m = 0; k < nr; k++)
			if (!(k >> pos & 1))
				N->w[m++] = umin(L, N->w[k], N->w[k | 1 << pos]);
		memmove(N->reg + pos, N->reg + pos + 1, (size_t)(N->n_reg - pos - 1));
		N->n_reg--;
		return;
	}
	LLVMValueRef *o = arena_alloc(&L->arena, (size_t)nr * sizeof *o);
	if (!o || loc < 0) {
		L->failed = true;
		return;
	}
	partners(N, loc, pos, o);
	for (int k = 0; k < nr; k++)
		N->w[k] = umin(L, N->w[k], o[k]);
	if (loc == LOC_LANE)
		N->lane[pos] = -1;
	else
		N->warp[pos] = -1;
}

/* ---- words ------------------------------------------------------------------------ */

static LLVMTypeRef int_type(Lower *L, int bits) { return LLVMIntTypeInContext(L->c, (unsigned)bits); }

/* The key of x (element type t) as an unsigned integer of its width. */
static LLVMValueRef key_of(Lower *L, Type t, LLVMValueRef x)
{
	int kb = scalar_bits((ScalarKind)t.scalar);
	LLVMTypeRef it = int_type(L, kb);
	LLVMValueRef sign = LLVMConstInt(it, 1ull << (kb - 1), 0);
	if (scalar_is_unsigned((ScalarKind)t.scalar))
		return x;
	if (!type_is_float(t))
		return LLVMBuildXor(L->b, x, sign, "");
	LLVMValueRef bits = LLVMBuildBitCast(L->b, x, it, "");
	LLVMValueRef nan = LLVMBuildFCmp(L->b, LLVMRealUNO, x, x, "");
	bits = LLVMBuildSelect(L->b, nan, LLVMConstInt(it, (1ull << (kb - 1)) - 1, 0), bits, "");
	LLVMValueRef neg = LLVMBuildICmp(L->b, LLVMIntSLT, bits, LLVMConstInt(it, 0, 0), "");
	return LLVMBuildSelect(L->b, neg, LLVMBuildNot(L->b, bits, ""), LLVMBuildOr(L->b, bits, sign, ""), "");
}

/* The element of type t whose key is k. */
static LLVMValueRef value_of(Lower *L, Type t, LLVMValueRef k)
{
	int kb = scalar_bits((ScalarKind)t.scalar);
	LLVMTypeRef it = int_type(L, kb);
	LLVMValueRef sign = LLVMConstInt(it, 1ull << (kb - 1), 0);
	if (scalar_is_unsigned((ScalarKind)t.scalar))
		return k;
	if (!type_is_float(t))
		return LLVMBuildXor(L->b, k, sign, "");
	LLVMValueRef was_pos = LLVMBuildICmp(L->b, LLVMIntSLT, k, LLVMConstInt(it, 0, 0), "");
	LLVMValueRef bits = LLVMBuildSelect(L->b, was_pos, LLVMBuildXor(L->b, k, sign, ""), LLVMBuildNot(L->b, k, ""), "");
	return LLVMBuildBitCast(L->b, bits, lw_elem_type(L, t), "");
}

typedef struct WordFmt {
	int kb, sb;   /* key bits, position bits */
	bool desc;
} WordFmt;

static LLVMValueRef make_word(Net *N, const WordFmt *F, LLVMValueRef x, LLVMValueRef pos)
{
	Lower *L = N->L;
	LLVMValueRef k = key_of(L, type_elem(N->t), x);
	if (F->desc)
		k = LLVMBuildNot(L->b, k, "");
	LLVMValueRef w = F->kb < N->wbits ? LLVMBuildZExt(L->b, k, N->wt, "") : k;
	if (!F->sb)
		return w;
	w = LLVMBuildShl(L->b, w, LLVMConstInt(N->wt, (unsigned)F->sb, 0), "");
	return LLVMBuildOr(L->b, w, LLVMBuildZExt(L->b, pos, N->wt, ""), "");
}

static void split_word(Net *N, const WordFmt *F, LLVMValueRef w, LLVMValueRef *val, LLVMValueRef *pos)
{
	Lower *L = N->L;
	if (pos && !F->sb) { /* not read */
		*pos = ci32(L, 0);
	} else if (pos) {
		LLVMValueRef p = LLVMBuildAnd(L->b, w, LLVMConstInt(N->wt, (1ull << F->sb) - 1, 0), "");
		*pos = N->wbits > 32 ? LLVMBuildTrunc(L->b, p, L->i32, "") : p;
	}
	LLVMValueRef k = F->sb ? LLVMBuildLShr(L->b, w, LLVMConstInt(N->wt, (unsigned)F->sb, 0), "") : w;
	if (F->kb < N->wbits)
		k = LLVMBuildTrunc(L->b, k, int_type(L, F->kb), "");
	if (F->desc)
		k = LLVMBuildNot(L->b, k, "");
	*val = value_of(L, type_elem(N->t), k);
}

/* ---- the ops ---------------------------------------------------------------------- */

/* Sets up the network on op's operand: its words, made from its registers. */
static bool net_init(Lower *L, const Op *op, Net *N, WordFmt *F)
{
	const Value *x = op->operands[0];
	const Lin *li = lw_lin_of(L, x);
	int axis = (int)op->attr[0];
	memset(N, 0, sizeof *N);
	N->L = L;
	N->t = x->type;
	N->n = log2i(x->type.shape[axis]);
	for (int a = 0; a < N->n; a++)
		N->ab[a] = lin_bit(x->type, axis, a);
	N->n_reg = li->n_reg;
	memcpy(N->reg, li->reg, sizeof N->reg);
	memcpy(N->lane, li->lane, sizeof N->lane);
	memcpy(N->warp, li->warp, sizeof N->warp);
	N->n_warp = li->n_warp;
	/* positions only where they are read: equal words then mean equal values */
	bool want_pos = op->n_results > 1 && op->results[1]->uses > 0;
	F->kb = scalar_bits((ScalarKind)x->type.scalar);
	F->sb = want_pos ? (N->n ? N->n : 1) : 0;
	F->desc = op->code == OP_TOPK || op->attr[1];
	N->wbits = F->kb + F->sb <= 32 ? 32 : F->kb + F->sb <= 64 ? 64 : 128;
	N->wt = int_type(L, N->wbits);
	int nr = 1 << N->n_reg;
	N->w = arena_alloc(&L->arena, (size_t)nr * sizeof *N->w);
	if (!N->w) {
		L->failed = true;
		return false;
	}
	int lo = lin_bit(x->type, axis, 0);
	for (int k = 0; k < nr; k++) {
		LLVMValueRef pos = NULL;
		if (F->sb) {
			LLVMValueRef idx = lw_index_of(L, li, k);
			pos = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, idx, ci32(L, lo), ""), ci32(L, (1 << N->n) - 1), "");
		}
		N->w[k] = make_word(N, F, el(L, x, k), pos);
	}
	return !L->failed;
}

/* Whether map l puts each element where its word is. */
static bool lays_out_words(const Net *N, const Lin *l)
{
	return l->n_reg == N->n_reg && !memcmp(l->reg, N->reg, (size_t)N->n_reg) && !memcmp(l->lane, N->lane, 5) &&
	       l->n_warp == N->n_warp && !memcmp(l->warp, N->warp, (size_t)N->n_warp);
}

/* The results from the words left: in place where the results lie as the
 * words do, else through shared memory by the results' linear index. */
static void net_results(Lower *L, const Op *op, Net *N, const WordFmt *F)
{
	const Value *r0 = op->results[0];
	Type rt = r0->type;
	int axis = (int)op->attr[0], nr = 1 << N->n_reg;
	bool in_place = true;
	for (int i = 0; i < op->n_results; i++)
		in_place = in_place && lays_out_words(N, lw_lin_of(L, op->results[i]));
	Tile outs[2];
	for (int i = 0; i < op->n_results; i++)
		outs[i] = lw_tile_new(L, 1 << lw_lin_of(L, op->results[i])->n_reg);
	if (L->failed)
		return;
	if (in_place) {
		for (int k = 0; k < nr; k++)
			split_word(N, F, N->w[k], &outs[0].e[k], op->n_results > 1 ? &outs[1].e[k] : NULL);
	} else {
		/* the operand's linear index of each word, then the result's: the
		 * axis keeps its low bits (topk: the chunk's) */
		int lb = lin_bit(N->t, axis, 0), kq = log2i(rt.shape[axis]);
		int bytes = numel(rt) * N->wbits / 8;
		int off = lw_smem_take(L, bytes);
		LLVMValueRef tpart = ci32(L, 0);
		for (int i = 0; i < 5 + N->n_warp; i++) {
			int b = i < 5 ? N->lane[i] : N->warp[i - 5];
			if (b >= 0)
				tpart = LLVMBuildOr(L->b, tpart, LLVMBuildShl(L->b, LLVMBuildZExt(L->b, tid_bit(L, i), L->i32, ""),
				                                              ci32(L, b), ""), "");
		}
		for (int k = 0; k < nr; k++) {
			int c = 0;
			for (int i = 0; i < N->n_reg; i++)
				if (k >> i & 1)
					c |= 1 << N->reg[i];
			LLVMValueRef oi = LLVMBuildOr(L->b, tpart, ci32(L, c), "");
			LLVMValueRef low = LLVMBuildAnd(L->b, oi, ci32(L, (1 << (lb + kq)) - 1), "");
			LLVMValueRef high = LLVMBuildShl(L->b, LLVMBuildLShr(L->b, oi, ci32(L, lb + N->n), ""), ci32(L, lb + kq), "");
			LLVMValueRef ri = LLVMBuildOr(L->b, low, high, "");
			LLVMBuildStore(L->b, N->w[k], lw_smem_at(L, N->wt, off, ri));
		}
		lw_smem_sync(L, off, bytes);
		for (int i = 0; i < op->n_results; i++) {
			const Lin *l = lw_lin_of(L, op->results[i]);
			for (int k = 0; k < outs[i].n; k++) {
				LLVMValueRef w = LLVMBuildLoad2(L->b, N->wt, lw_smem_at(L, N->wt, off, lw_index_of(L, l, k)), "");
				LLVMValueRef v, p;
				split_word(N, F, w, &v, i ? &p : NULL);
				outs[i].e[k] = i ? p : v;
			}
		}
	}
	for (int i = 0; i < op->n_results; i++)
		L->vals[op->results[i]->id] = outs[i];
}

void lower_sort(Lower *L, const Op *op)
{
	Net N;
	WordFmt F;
	if (!net_init(L, op, &N, &F))
		return;
	int n = N.n;
	if (op->code == OP_SORT) {
		for (int kb = 1; kb <= n; kb++)
			for (int j = kb - 1; j >= 0; j--)
				cmp_exchange(&N, j, kb < n ? kb : -1);
		net_results(L, op, &N, &F);
		return;
	}
	/* topk: the upper bits, in the order they are dropped */
	int q = log2i((int)op->attr[1]), up[32], m = 0;
	for (int where = LOC_REG; where <= LOC_WARP; where++)
		for (int a = q; a < n; a++) {
			int pos;
			if (locate(&N, a, &pos) == where)
				up[m++] = a;
		}
	for (int kb = 1; kb <= q; kb++)
		for (int j = kb - 1; j >= 0; j--)
			cmp_exchange(&N, j, kb < q ? kb : m ? up[0] : -1);
	for (int i = 0; i < m && !L->failed; i++) {
		drop_bit(&N, up[i]);
		for (int j = q - 1; j >= 0; j--)
			cmp_exchange(&N, j, i + 1 < m ? up[i + 1] : -1);
	}
	net_results(L, op, &N, &F);
}
