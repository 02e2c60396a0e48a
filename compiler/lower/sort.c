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
 * results' layout through shared memory.
 *
 * A network too large to unroll (past SORT_UNROLL_MAX word operations a
 * thread: ptxas would take minutes) runs the same stages, in the same
 * order, as loops: the words in shared memory (word k of thread t at
 * k * T + t) where they fit in SORT_SMEM_BYTES, else in a local-memory
 * array of each thread; one loop over the words a stage (lanes by
 * shuffles; warps: in shared memory each pair done by one of its two
 * threads, from local memory through a shared buffer a part of the words
 * at a time), so the code grows with the number of stages, not with the
 * block. The results are those of the unrolled network, bit for bit. */
#include "lower/lower_int.h"

#include <llvm-c/DebugInfo.h> /* LLVMTemporaryMDNode: a loop's metadata names itself */
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
	bool looped;           /* the network as loops over its words in memory */
	LLVMValueRef buf;      /* looped: the words in local memory ([1 << n_reg] x wt), or NULL: */
	int soff, sbytes;      /* in shared memory, word k of each thread at k * T + tid */
	LLVMValueRef raw;      /* looped: the operand's elements in local memory, then the results' */
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

static void loop_cmp_exchange(Net *N, int j, int d);
static void loop_drop_bit(Net *N, int j);

/* Compare-exchange along axis bit j; direction bit d (< 0: ascending). */
static void cmp_exchange(Net *N, int j, int d)
{
	Lower *L = N->L;
	if (N->looped) {
		loop_cmp_exchange(N, j, d);
		return;
	}
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
	if (N->looped) {
		loop_drop_bit(N, j);
		return;
	}
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

/* ---- the network as loops ----------------------------------------------------------- */

/* lw_loop_end, its back edge marked llvm.loop.unroll.disable, which LLVM
 * keeps and the PTX printer passes on as .pragma "nounroll": ptxas unrolls
 * loops of a known trip count itself otherwise, and spends tens of seconds
 * on the unrolled network (a topk of 32768 f32 on 4 warps: 38 s, 0.3 s
 * with the pragma). */
static void loop_end(Lower *L, Loop *lp)
{
	LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
	lw_loop_end(L, lp, NULL);
	LLVMMetadataRef self = LLVMTemporaryMDNode(L->c, NULL, 0);
	LLVMMetadataRef off = LLVMMDStringInContext2(L->c, "llvm.loop.unroll.disable", 24);
	LLVMMetadataRef items[2] = {self, LLVMMDNodeInContext2(L->c, &off, 1)};
	LLVMMetadataRef loop = LLVMMDNodeInContext2(L->c, items, 2);
	LLVMMetadataReplaceAllUsesWith(self, loop);
	LLVMSetMetadata(LLVMGetBasicBlockTerminator(end), LLVMGetMDKindIDInContext(L->c, "llvm.loop", 9),
	                LLVMMetadataAsValue(L->c, loop));
}

/* Where word k (runtime register index) of thread t lies in the looped
 * network: local memory (t is this thread) or shared memory. */
static LLVMValueRef slot_of(Net *N, LLVMValueRef k, LLVMValueRef t)
{
	Lower *L = N->L;
	if (N->buf)
		return LLVMBuildGEP2(L->b, N->wt, N->buf, &k, 1, "");
	return lw_smem_at(L, N->wt, N->soff, LLVMBuildAdd(L->b, LLVMBuildMul(L->b, k, ci32(L, L->T), ""), t, ""));
}

static LLVMValueRef slot(Net *N, LLVMValueRef k) { return slot_of(N, k, N->L->tid); }

static LLVMValueRef load_at(Net *N, LLVMValueRef p)
{
	LLVMValueRef v = LLVMBuildLoad2(N->L->b, N->wt, p, "");
	LLVMSetAlignment(v, (unsigned)N->wbits / 8);
	return v;
}

static void store_at(Net *N, LLVMValueRef w, LLVMValueRef p)
{
	LLVMSetAlignment(LLVMBuildStore(N->L->b, w, p), (unsigned)N->wbits / 8);
}

static LLVMValueRef load_slot(Net *N, LLVMValueRef k) { return load_at(N, slot(N, k)); }

static void store_slot(Net *N, LLVMValueRef w, LLVMValueRef k) { store_at(N, w, slot(N, k)); }

/* The linear index of the element at runtime register index k of map l. */
static LLVMValueRef index_at(Lower *L, const Lin *l, LLVMValueRef k)
{
	LLVMValueRef v = lw_thread_part(L, l);
	for (int i = 0; i < l->n_reg; i++) {
		LLVMValueRef bit = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, k, ci32(L, i), ""), ci32(L, 1), "");
		v = LLVMBuildOr(L->b, v, LLVMBuildShl(L->b, bit, ci32(L, l->reg[i]), ""), "");
	}
	return v;
}

/* A local-memory array of n elements of type t, aligned to its elements. */
static LLVMValueRef local_array(Lower *L, LLVMTypeRef t, int n, int align, const char *name)
{
	LLVMValueRef a = LLVMBuildAlloca(L->pro, LLVMArrayType2(t, (uint64_t)n), name);
	LLVMSetAlignment(a, (unsigned)(align < 4 ? 4 : align));
	return a;
}

static LLVMValueRef at_local(Lower *L, LLVMTypeRef t, LLVMValueRef a, LLVMValueRef k)
{
	return LLVMBuildGEP2(L->b, t, a, &k, 1, "");
}

/* Bit a of the position of the element at runtime register index k. */
static LLVMValueRef axis_bit_at(Net *N, int a, LLVMValueRef k)
{
	Lower *L = N->L;
	int pos, loc = a < 0 ? -1 : locate(N, a, &pos);
	if (loc != LOC_REG)
		return axis_bit(N, a, 0);
	return LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, k, ci32(L, pos), ""), L->i1, "");
}

/* k with a 0 bit put in at bit pos (the pair's lower register). */
static LLVMValueRef spread_at(Lower *L, LLVMValueRef p, int pos)
{
	LLVMValueRef high = LLVMBuildShl(L->b, LLVMBuildLShr(L->b, p, ci32(L, pos), ""), ci32(L, pos + 1), "");
	return pos ? LLVMBuildOr(L->b, high, LLVMBuildAnd(L->b, p, ci32(L, (1 << pos) - 1), ""), "") : high;
}

/* A word against its partner's o: the smaller one kept (drop), or the
 * smaller where bit j's thread bit equals the direction bit d. */
static LLVMValueRef against(Net *N, int loc, int pos, int d, bool drop, LLVMValueRef k, LLVMValueRef w,
                            LLVMValueRef o)
{
	Lower *L = N->L;
	if (drop)
		return umin(L, w, o);
	LLVMValueRef upper = tid_bit(L, loc == LOC_LANE ? pos : 5 + pos);
	LLVMValueRef keep_min = LLVMBuildICmp(L->b, LLVMIntEQ, upper, axis_bit_at(N, d, k), "");
	return LLVMBuildSelect(L->b, keep_min, umin(L, w, o), umax(L, w, o), "");
}

/* Across warp bit pos with the words in shared memory: each pair of
 * words (this thread's and the partner's, at one register) is done by one
 * of the two threads, which writes both: register k = 2p + the thread's
 * bit pos (with one word a thread, the thread whose bit is 0); between two
 * barriers. */
static void smem_across_warps(Net *N, int pos, int d, bool drop)
{
	Lower *L = N->L;
	int nr = 1 << N->n_reg;
	LLVMValueRef upper = tid_bit(L, 5 + pos), other = LLVMBuildXor(L->b, L->tid, ci32(L, 32 << pos), "");
	lw_smem_barrier(L);
	LLVMBasicBlockRef done = NULL;
	Loop lp;
	LLVMValueRef k;
	if (nr > 1) {
		lw_loop_begin(L, &lp, ci32(L, 0), ci32(L, nr / 2), NULL, 0);
		k = LLVMBuildOr(L->b, LLVMBuildShl(L->b, lp.i, ci32(L, 1), ""), LLVMBuildZExt(L->b, upper, L->i32, ""), "");
	} else {
		done = lw_begin_if(L, LLVMBuildNot(L->b, upper, ""), "sort.pair");
		k = ci32(L, 0);
	}
	LLVMValueRef mine = slot(N, k), theirs = slot_of(N, k, other);
	LLVMValueRef w = load_at(N, mine), o = load_at(N, theirs);
	LLVMValueRef lo = umin(L, w, o), hi = umax(L, w, o);
	if (drop) {
		store_at(N, lo, mine);
		store_at(N, lo, theirs);
	} else {
		/* the partner's bit is the other one, its direction bit the same */
		LLVMValueRef keep_min = LLVMBuildICmp(L->b, LLVMIntEQ, upper, axis_bit_at(N, d, k), "");
		store_at(N, LLVMBuildSelect(L->b, keep_min, lo, hi, ""), mine);
		store_at(N, LLVMBuildSelect(L->b, keep_min, hi, lo, ""), theirs);
	}
	if (nr > 1)
		loop_end(L, &lp);
	else
		lw_end_if(L, done);
	lw_smem_barrier(L);
}

/* A compare-exchange (or drop) across a lane or warp bit, a loop over the
 * words: lanes by shuffles; warps with the words in shared memory there,
 * else through shared memory, chunk words of every thread at a time (at
 * i * T + tid), between two barriers. */
static void loop_across(Net *N, int loc, int pos, int d, bool drop)
{
	Lower *L = N->L;
	int nr = 1 << N->n_reg;
	Loop lp;
	if (loc == LOC_WARP && !N->buf) {
		smem_across_warps(N, pos, d, drop);
		return;
	}
	if (loc == LOC_LANE) {
		lw_loop_begin(L, &lp, ci32(L, 0), ci32(L, nr), NULL, 0);
		LLVMValueRef w = load_slot(N, lp.i);
		LLVMValueRef o = shfl_word(N, w, 1 << pos);
		store_slot(N, against(N, loc, pos, d, drop, lp.i, w, o), lp.i);
		loop_end(L, &lp);
		return;
	}
	int chunk = nr;
	while (chunk > 1 && chunk * L->T * (N->wbits / 8) > SORT_XCHG_BYTES)
		chunk /= 2;
	int bytes = chunk * L->T * N->wbits / 8;
	int off = lw_smem_take(L, bytes);
	LLVMValueRef other = LLVMBuildXor(L->b, L->tid, ci32(L, 32 << pos), "");
	Loop outer, in;
	lw_loop_begin(L, &outer, ci32(L, 0), ci32(L, nr / chunk), NULL, 0);
	LLVMValueRef first = LLVMBuildMul(L->b, outer.i, ci32(L, chunk), "");
	lw_loop_begin(L, &in, ci32(L, 0), ci32(L, chunk), NULL, 0);
	LLVMValueRef at = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, in.i, ci32(L, L->T), ""), L->tid, "");
	LLVMValueRef st = LLVMBuildStore(L->b, load_slot(N, LLVMBuildAdd(L->b, first, in.i, "")),
	                                 lw_smem_at(L, N->wt, off, at));
	LLVMSetAlignment(st, (unsigned)N->wbits / 8);
	loop_end(L, &in);
	lw_smem_barrier(L);
	lw_loop_begin(L, &in, ci32(L, 0), ci32(L, chunk), NULL, 0);
	LLVMValueRef k = LLVMBuildAdd(L->b, first, in.i, "");
	LLVMValueRef from = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, in.i, ci32(L, L->T), ""), other, "");
	LLVMValueRef o = LLVMBuildLoad2(L->b, N->wt, lw_smem_at(L, N->wt, off, from), "");
	LLVMSetAlignment(o, (unsigned)N->wbits / 8);
	store_slot(N, against(N, loc, pos, d, drop, k, load_slot(N, k), o), k);
	loop_end(L, &in);
	lw_smem_barrier(L); /* the next chunk's writes after every read */
	loop_end(L, &outer);
}

/* cmp_exchange on the words in local memory. */
static void loop_cmp_exchange(Net *N, int j, int d)
{
	Lower *L = N->L;
	int pos, loc = locate(N, j, &pos), nr = 1 << N->n_reg;
	if (loc < 0) {
		L->failed = true;
		return;
	}
	if (loc != LOC_REG) {
		loop_across(N, loc, pos, d, false);
		return;
	}
	Loop lp;
	lw_loop_begin(L, &lp, ci32(L, 0), ci32(L, nr / 2), NULL, 0);
	LLVMValueRef k = spread_at(L, lp.i, pos), k2 = LLVMBuildOr(L->b, k, ci32(L, 1 << pos), "");
	LLVMValueRef a = load_slot(N, k), b = load_slot(N, k2);
	LLVMValueRef lo = umin(L, a, b), hi = umax(L, a, b), down = axis_bit_at(N, d, k);
	store_slot(N, LLVMBuildSelect(L->b, down, hi, lo, ""), k);
	store_slot(N, LLVMBuildSelect(L->b, down, lo, hi, ""), k2);
	loop_end(L, &lp);
}

/* drop_bit on the words in local memory: a register bit packs the smaller
 * of each pair down to the pair's index (never past a word still unread). */
static void loop_drop_bit(Net *N, int j)
{
	Lower *L = N->L;
	int pos, loc = locate(N, j, &pos), nr = 1 << N->n_reg;
	if (loc < 0) {
		L->failed = true;
		return;
	}
	if (loc != LOC_REG) {
		loop_across(N, loc, pos, -1, true);
		if (loc == LOC_LANE)
			N->lane[pos] = -1;
		else
			N->warp[pos] = -1;
		return;
	}
	Loop lp;
	lw_loop_begin(L, &lp, ci32(L, 0), ci32(L, nr / 2), NULL, 0);
	LLVMValueRef k = spread_at(L, lp.i, pos), k2 = LLVMBuildOr(L->b, k, ci32(L, 1 << pos), "");
	store_slot(N, umin(L, load_slot(N, k), load_slot(N, k2)), lp.i);
	loop_end(L, &lp);
	memmove(N->reg + pos, N->reg + pos + 1, (size_t)(N->n_reg - pos - 1));
	N->n_reg--;
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

/* The looped network's words: the operand's elements to local memory as
 * they are (one store each), then a loop makes each one's word in place. */
static void init_looped(Net *N, const WordFmt *F, const Value *x, const Lin *li, int lo)
{
	Lower *L = N->L;
	int nr = 1 << N->n_reg, eb = scalar_bits((ScalarKind)x->type.scalar);
	LLVMTypeRef et = lw_elem_type(L, x->type);
	N->looped = true;
	N->sbytes = nr * L->T * (N->wbits / 8);
	if (N->sbytes <= SORT_SMEM_BYTES)
		N->soff = lw_smem_take(L, N->sbytes);
	else
		N->buf = local_array(L, N->wt, nr, N->wbits / 8, "sort.words");
	LLVMValueRef raw = N->raw = local_array(L, et, nr, eb / 8, "sort.in");
	for (int k = 0; k < nr; k++)
		LLVMBuildStore(L->b, el(L, x, k), at_local(L, et, raw, ci32(L, k)));
	Loop lp;
	lw_loop_begin(L, &lp, ci32(L, 0), ci32(L, nr), NULL, 0);
	LLVMValueRef pos = NULL;
	if (F->sb) {
		LLVMValueRef idx = index_at(L, li, lp.i);
		pos = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, idx, ci32(L, lo), ""), ci32(L, (1 << N->n) - 1), "");
	}
	LLVMValueRef v = LLVMBuildLoad2(L->b, et, at_local(L, et, raw, lp.i), "");
	store_slot(N, make_word(N, F, v, pos), lp.i);
	loop_end(L, &lp);
}

/* Sets up the network on op's operand: its words, made from its registers
 * (looped: in local memory). */
static bool net_init(Lower *L, const Op *op, Net *N, WordFmt *F, bool looped)
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
	if (looped) {
		init_looped(N, F, x, li, lo);
		return !L->failed;
	}
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

/* Word operations a thread of op's unrolled network would make (a stage
 * reads each of its words once); 0 where the operand has no layout. */
long gpu_sort_net_ops(const IrFunc *f, const Op *op)
{
	const Value *x = op->operands[0];
	Lin li;
	if (!x->enc || !enc_lin(x->enc, x->type, f->num_warps, &li))
		return 0;
	int axis = (int)op->attr[0], n = log2i(x->type.shape[axis]);
	long nr = 1L << li.n_reg;
	if (op->code == OP_SORT)
		return nr * n * (n + 1) / 2;
	/* topk: the chunks' sort, then each upper bit dropped (registers first,
	 * each halving the words) and a merge of q stages */
	int q = log2i((int)op->attr[1]), in_reg = 0;
	long ops = nr * q * (q + 1) / 2;
	for (int a = q; a < n; a++)
		for (int i = 0; i < li.n_reg; i++)
			in_reg += li.reg[i] == lin_bit(x->type, axis, a);
	for (int i = 0; i < n - q; i++) {
		ops += nr;
		nr >>= i < in_reg;
		ops += nr * q;
	}
	return ops;
}

/* Bytes of local memory a thread takes where op's network runs as loops
 * (its elements, its positions where read, its words unless they lie in
 * shared memory: then *smem is their bytes, else 0), else 0. */
long gpu_sort_loop_bytes(const IrFunc *f, const Op *op, long *smem)
{
	*smem = 0;
	if (gpu_sort_net_ops(f, op) <= SORT_UNROLL_MAX)
		return 0;
	const Value *x = op->operands[0];
	Lin li;
	enc_lin(x->enc, x->type, f->num_warps, &li);
	int axis = (int)op->attr[0], n = log2i(x->type.shape[axis]);
	bool want_pos = op->n_results > 1 && op->results[1]->uses > 0;
	int bits = scalar_bits((ScalarKind)x->type.scalar) + (want_pos ? (n ? n : 1) : 0);
	int eb = scalar_bits((ScalarKind)x->type.scalar) / 8, wb = bits <= 32 ? 4 : bits <= 64 ? 8 : 16;
	long nr = 1L << li.n_reg, words = nr * 32 * f->num_warps * wb;
	if (words <= SORT_SMEM_BYTES)
		*smem = words;
	return nr * ((*smem ? 0 : wb) + eb + (op->n_results > 1 ? 4 : 0));
}

/* Words in shared memory read since the last barrier: the next use of
 * shared memory lies above them or waits for a barrier. */
static void words_read(Lower *L, const Net *N)
{
	int end = L->smem_base + N->soff + ((N->sbytes + 15) & ~15);
	if (N->looped && !N->buf && L->smem_dirty >= 0 && L->smem_dirty < end)
		L->smem_dirty = end;
}

/* The results of the looped network: where they lie as the words do, a
 * loop splits each word into local memory, read back with one load an
 * element; else (topk: few words left) net_results on the words. */
static void loaded_results(Lower *L, const Op *op, Net *N, const WordFmt *F)
{
	int nr = 1 << N->n_reg;
	bool in_place = N->looped;
	for (int i = 0; i < op->n_results && in_place; i++)
		in_place = lays_out_words(N, lw_lin_of(L, op->results[i]));
	if (!in_place) {
		for (int k = 0; k < nr && N->looped && !L->failed; k++)
			N->w[k] = load_slot(N, ci32(L, k));
		words_read(L, N);
		net_results(L, op, N, F);
		return;
	}
	LLVMTypeRef et = lw_elem_type(L, N->t);
	bool two = op->n_results > 1;
	LLVMValueRef pos = two ? local_array(L, L->i32, nr, 4, "sort.pos") : NULL;
	Loop lp;
	lw_loop_begin(L, &lp, ci32(L, 0), ci32(L, nr), NULL, 0);
	LLVMValueRef v, p;
	split_word(N, F, load_slot(N, lp.i), &v, two ? &p : NULL);
	LLVMBuildStore(L->b, v, at_local(L, et, N->raw, lp.i));
	if (two)
		LLVMBuildStore(L->b, p, at_local(L, L->i32, pos, lp.i));
	loop_end(L, &lp);
	words_read(L, N);
	for (int i = 0; i < op->n_results; i++) {
		Tile out = lw_tile_new(L, nr);
		for (int k = 0; k < out.n && !L->failed; k++)
			out.e[k] = i ? LLVMBuildLoad2(L->b, L->i32, at_local(L, L->i32, pos, ci32(L, k)), "")
			             : LLVMBuildLoad2(L->b, et, at_local(L, et, N->raw, ci32(L, k)), "");
		L->vals[op->results[i]->id] = out;
	}
}

void lower_sort(Lower *L, const Op *op)
{
	Net N;
	WordFmt F;
	long smem;
	if (!net_init(L, op, &N, &F, gpu_sort_loop_bytes(L->f, op, &smem) > 0))
		return;
	int n = N.n;
	if (op->code == OP_SORT) {
		for (int kb = 1; kb <= n; kb++)
			for (int j = kb - 1; j >= 0; j--)
				cmp_exchange(&N, j, kb < n ? kb : -1);
		loaded_results(L, op, &N, &F);
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
	loaded_results(L, op, &N, &F);
}
