/* convert.c: convert_layout: registers renamed, or through a swizzled
 * shared-memory scratch, read back with plain loads or ldmatrix (mma operands,
 * read as their dot needs them). */
#include "lower/lower_int.h"

#include <string.h>

/* The scratch address (in elements) of linear index bits c: the swizzle
 * XORs address bits in for each index bit set. */
static unsigned swizzle_const(const Encoding *s, unsigned c)
{
	unsigned a = c;
	for (int j = 0; s && j < s->n_index_bits; j++)
		if (c >> j & 1)
			a ^= s->swizzle[j];
	return a;
}

LLVMValueRef lw_swizzle_value(Lower *L, const Encoding *s, LLVMValueRef idx)
{
	/* each set bit j flips swizzle[j]; bits that flip the one bit d below
	 * them go together, idx ^ ((idx >> d) & mask), as the usual swizzles
	 * (row bits onto 16-byte column bits) all do */
	LLVMValueRef a = idx;
	unsigned done = 0;
	for (int j = 0; s && j < s->n_index_bits; j++) {
		uint32_t m = s->swizzle[j];
		if (!m || done >> j & 1)
			continue;
		int p = (m & (m - 1)) ? -1 : log2i((int)m);
		if (p >= 0 && p < j) {
			int d = j - p;
			unsigned from = 0;
			for (int i = j; i < s->n_index_bits; i++)
				if (!(done >> i & 1) && i >= d && s->swizzle[i] == 1u << (i - d))
					from |= 1u << i;
			done |= from;
			LLVMValueRef f = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, idx, ci32(L, d), ""), ci32(L, (long long)(from >> d)), "");
			a = LLVMBuildXor(L->b, a, f, "");
			continue;
		}
		LLVMValueRef bit = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, idx, ci32(L, j), ""), ci32(L, 1), "");
		a = LLVMBuildXor(L->b, a, LLVMBuildMul(L->b, bit, ci32(L, (long long)m), ""), "");
	}
	return a;
}

/* The address bits that thread-id bits [lo, hi) of map l (0-4 lanes, 5 up
 * warps) can set once swizzled (the swizzle is linear over xor: the union
 * of their images). */
static unsigned lin_image(const Encoding *s, const Lin *l, int lo, int hi)
{
	unsigned img = 0;
	for (int i = lo; i < hi; i++) {
		int to = i < 5 ? l->lane[i] : l->warp[i - 5];
		if (to >= 0)
			img |= swizzle_const(s, 1u << to);
	}
	return img;
}

/* ... of its whole thread part. */
static unsigned lin_thread_bits(const Encoding *s, const Lin *l)
{
	return lin_image(s, l, 0, 5 + l->n_warp);
}

/* tsw ^ c for a thread part tsw that sets only bits tbits: c's other bits
 * are added instead (the same value, no carry), so that a register's
 * address is one of a few xors plus a constant that folds into the
 * access's offset. As xors alone, each register had an address of its own
 * that LLVM hoists out of the loops around: a persistent matmul's
 * epilogue kept 64 of them live through its K loop and spilled. */
static LLVMValueRef xor_split(Lower *L, LLVMValueRef tsw, unsigned tbits, unsigned c)
{
	unsigned x = c & tbits, add = c & ~tbits;
	LLVMValueRef v = x ? LLVMBuildXor(L->b, tsw, ci32(L, x), "") : tsw;
	if (!add)
		return v;
	LLVMValueRef r = LLVMBuildAdd(L->b, v, ci32(L, add), "");
	LLVMSetNUW(r, 1);
	LLVMSetNSW(r, 1);
	return r;
}

/* v through an asm copy that LLVM cannot move: the thread part of a
 * scratch's addresses, taken where the accesses are, so that their few
 * xors and constant offsets are made there (and folded into the accesses)
 * rather than hoisted out of the loops around as a register for each. */
static LLVMValueRef opaque_i32(Lower *L, LLVMValueRef v)
{
	LLVMTypeRef ft = LLVMFunctionType(L->i32, &L->i32, 1, 0);
	static const char text[] = "mov.b32 $0, $1;", cons[] = "=r,r";
	LLVMValueRef fn = LLVMGetInlineAsm(ft, (char *)text, strlen(text), (char *)cons, strlen(cons), 1, 0,
	                                   LLVMInlineAsmDialectATT, 0);
	return LLVMBuildCall2(L->b, ft, fn, &v, 1, "");
}

/* Scratch addresses of register k of map l: the register part swizzled at
 * compile time, the thread part (tsw) once per op. */
LLVMValueRef lw_scratch_addr(Lower *L, const Encoding *s, const Lin *l, LLVMValueRef tsw, int k)
{
	unsigned c = swizzle_const(s, (unsigned)lw_reg_const(l, k));
	return c ? xor_split(L, tsw, lin_thread_bits(s, l), c) : tsw;
}

/* Reads an mma operand from the scratch with ldmatrix: each instruction
 * moves four matrices of 8 rows of 16 bytes, lane 8i + r giving the
 * address of row r of matrix i, and leaves in each lane the 32-bit word of
 * each matrix that the fragment maps of encoding.c put there (word lane % 4
 * of row lane / 4: k_width elements). A (idx 0), rows of 16 bytes of k
 * (8 f16, 4 f32, 16 i8): matrices (m 0-7, k lo), (m 8-15, k lo), (m 0-7,
 * k hi), (m 8-15, k hi) of one 16-row tile = its registers a0, a1, a2, a3;
 * of 16-bit elements stored M-major (a transposed load), the same matrices
 * from rows of 8 m of one k, transposed on the way.
 * B (idx 1) of 16-bit elements, transposed on the way (rows of 8 n): (k
 * 0-7), (k 8-15) of one 16 x 8 tile = b0, b1; K-major (rows of 16 bytes of
 * k of one n, any element size): (k lo), (k hi); and the same of the
 * thread's next tile along N when it has one. A dot reads each group when
 * it first needs it (lw_frag()), so that only one K step of its operands
 * is live in registers at a time. */
static LazyFrags *ldmatrix_setup(Lower *L, const Op *op, const Lin *lo, Tile *t, int offset)
{
	const Value *y = op->results[0];
	const Encoding *s = op->scratch;
	Type ty = y->type;
	/* 3: B stored K-major, read as it lies; 4: A stored M-major, read transposed */
	bool b_op = s->ldmatrix == 2 || s->ldmatrix == 3, trans = s->ldmatrix == 2 || s->ldmatrix == 4;
	bool low_rows = (b_op && !trans) || s->ldmatrix == 4; /* a row's index bits are the lowest */
	LazyFrags *z = arena_alloc(&L->arena, sizeof *z);
	bool *loaded = arena_alloc(&L->arena, (size_t)(1 << lo->n_reg) * sizeof *loaded);
	if (!z || !loaded) {
		L->failed = true;
		return NULL;
	}
	memset(loaded, 0, (size_t)(1 << lo->n_reg) * sizeof *loaded);
	int eb = type_bytes(type_elem(ty)), kw = 4 / eb, rb = log2i(16 / eb); /* rb: index bits of a 16-byte row */
	*z = (LazyFrags){.convert = op, .lo = lo, .t = t, .loaded = loaded, .offset = offset, .owned = true,
	                 .pair_bit = -1, .group = b_op ? 2 * kw : 4 * kw, .kw = kw, .b_op = b_op};
	int row_bit = lin_bit(ty, 0, 0); /* bit 0 of dimension 0: m for A, k for B */
	/* what i0 (lane bit 3) picks: A's rows 8-15, B's second 16 bytes of k */
	int i0_bit = b_op && !trans ? row_bit + rb : row_bit + 3;
	/* the thread's warp part (lanes choose rows below, not the fragment map) */
	Lin warps = *lo;
	for (int i = 0; i < 5; i++)
		warps.lane[i] = -1;
	LLVMValueRef wpart = lw_thread_part(L, &warps);
	LLVMValueRef lane = LLVMBuildAnd(L->b, L->tid, ci32(L, 31), "");
	LLVMValueRef r = LLVMBuildAnd(L->b, lane, ci32(L, 7), "");
	LLVMValueRef i0 = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, lane, ci32(L, 3), ""), ci32(L, 1), "");
	LLVMValueRef i1 = LLVMBuildLShr(L->b, lane, ci32(L, 4), "");
	/* B: the register bit of the thread's next tile along N, if any */
	for (int i = 0; b_op && i < lo->n_reg && z->pair_bit < 0; i++)
		if (lo->reg[i] < row_bit && lo->reg[i] >= 3)
			z->pair_bit = i;
	/* lane r of matrix i0 + 2 i1 gives row r: along dimension 0 (A's m,
	 * B's k), or for B K-major along n (dimension 1, bit 0 of the index),
	 * the row's 8 elements along k; i0 picks the k (B) or m (A) half */
	LLVMValueRef lane_idx = LLVMBuildOr(L->b, LLVMBuildShl(L->b, r, ci32(L, low_rows ? 0 : row_bit), ""),
	                                    LLVMBuildShl(L->b, i0, ci32(L, i0_bit), ""), "");
	if (!b_op)
		lane_idx = LLVMBuildOr(L->b, lane_idx, LLVMBuildShl(L->b, i1, ci32(L, rb), ""), "");
	else if (z->pair_bit >= 0)
		lane_idx = LLVMBuildOr(L->b, lane_idx, LLVMBuildShl(L->b, i1, ci32(L, lo->reg[z->pair_bit]), ""), "");
	z->base_thread = LLVMBuildOr(L->b, wpart, lane_idx, "");
	/* the index bits base_thread may set: the rows (along n for B K-major),
	 * the half picked by i0, the next tile or k half picked by i1, the warp */
	z->thread_bits = (low_rows ? 7u : 7u << row_bit) | 1u << i0_bit |
	                 (!b_op ? 1u << rb : z->pair_bit >= 0 ? 1u << lo->reg[z->pair_bit] : 0u);
	for (int i = 0; i < lo->n_warp; i++)
		if (lo->warp[i] >= 0)
			z->thread_bits |= 1u << lo->warp[i];
	z->base_sw = lw_swizzle_value(L, s, z->base_thread);
	int x4 = !b_op || z->pair_bit >= 0;
	char text[128];
	snprintf(text, sizeof text, "ldmatrix.sync.aligned.m8n8.%s%s.shared.b16 %s, [$%d];", x4 ? "x4" : "x2",
	         trans ? ".trans" : "", x4 ? "{$0, $1, $2, $3}" : "{$0, $1}", x4 ? 4 : 2);
	const char *cons = x4 ? "=r,=r,=r,=r,l" : "=r,=r,l";
	LLVMTypeRef fields[4] = {L->i32, L->i32, L->i32, L->i32};
	LLVMTypeRef rt = LLVMStructTypeInContext(L->c, fields, x4 ? 4 : 2, 0);
	z->ft = LLVMFunctionType(rt, &L->i64, 1, 0);
	/* volatile: it reads shared memory, so it must stay between the barrier and the next store */
	z->fn = LLVMGetInlineAsm(z->ft, text, strlen(text), (char *)cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	return z;
}

/* The registers of l that make vectors of vec consecutive scratch
 * addresses: pos[i], the register bit whose index bit lands on address bit
 * i (register bit i where it does; else any: a thread holding a 2-D block
 * of a transposed tile gathers its vector from registers apart). false:
 * there are none. */
static bool vector_regs(const Encoding *s, const Lin *l, int vec, int *pos)
{
	for (int i = 0; (1 << i) < vec; i++) {
		pos[i] = -1;
		for (int j = 0; j < l->n_reg && pos[i] < 0; j++) {
			int r = (i + j) % l->n_reg;
			if (l->reg[r] >= 0 && swizzle_const(s, 1u << l->reg[r]) == 1u << i)
				pos[i] = r;
		}
		if (pos[i] < 0)
			return false;
	}
	return true;
}

/* Register k's element e of its vector (pos from vector_regs). */
static int vector_elem(const int *pos, int k, int e)
{
	for (int b = 0; e >> b; b++)
		if (e >> b & 1)
			k |= 1 << pos[b];
	return k;
}

bool lw_scratch_parts(Lower *L, const Value *x, const Encoding *s, int part_elems)
{
	const Lin *li = lw_lin_of(L, x);
	for (int i = 0; i < 5 + li->n_warp; i++) {
		int to = i < 5 ? li->lane[i] : li->warp[i - 5];
		if (to >= 0 && swizzle_const(s, 1u << to) >= (unsigned)part_elems)
			return false;
	}
	return true;
}

void lw_scratch_store(Lower *L, const Value *x, const Encoding *s, int at, int vec)
{
	lw_scratch_store_part(L, x, s, at, vec, 0, 0);
}

/* Stores x into its scratch, vec elements a store where its registers
 * allow (the caller checked; else those in its first registers); with
 * part_elems, only the registers in part `part`. */
void lw_scratch_store_part(Lower *L, const Value *x, const Encoding *s, int at, int vec, int part_elems, int part)
{
	const Lin *li = lw_lin_of(L, x);
	Tile *in = val(L, x);
	Type et = type_elem(x->type);
	LLVMTypeRef mt = lw_mem_type(L, et);
	int eb = type_bytes(et);
	LLVMBasicBlockRef owned = lw_begin_if(L, owner_of(L, li), "own");
	LLVMTypeRef vt = LLVMVectorType(mt, (unsigned)vec);
	LLVMValueRef tsw = opaque_i32(L, lw_swizzle_value(L, s, lw_thread_part(L, li)));
	int pos[8], vmask = 0;
	if (!vector_regs(s, li, vec, pos))
		for (int i = 0; (1 << i) < vec; i++)
			pos[i] = i;
	for (int i = 0; (1 << i) < vec; i++)
		vmask |= 1 << pos[i];
	for (int k = 0, n_in = 1 << li->n_reg; k < n_in; k++) {
		if (k & vmask)
			continue;
		if (part_elems && swizzle_const(s, (unsigned)lw_reg_const(li, k)) / (unsigned)part_elems != (unsigned)part)
			continue;
		LLVMValueRef p = lw_smem_abs(L, mt, at, lw_scratch_addr(L, s, li, tsw, k));
		LLVMValueRef st;
		if (vec == 1) {
			st = LLVMBuildStore(L->b, lw_to_mem(L, et, in->e[k]), p);
		} else {
			LLVMValueRef v = LLVMGetUndef(vt);
			for (int i = 0; i < vec; i++)
				v = LLVMBuildInsertElement(L->b, v, lw_to_mem(L, et, in->e[vector_elem(pos, k, i)]), ci32(L, i),
				                           "");
			st = LLVMBuildStore(L->b, v, p);
		}
		LLVMSetAlignment(st, (unsigned)(vec * eb));
	}
	lw_end_if(L, owned);
}

/* ---- conversions a part at a time --------------------------------------------------
 * A conversion whose scratch would pass what shared memory holds (a block
 * past the registers, in local memory: docs/compiler.md) goes through a
 * smaller scratch in parts. The part bits are address bits outside the
 * vectors and the swizzle that are a thread bit on one side at most: where
 * a register bit, each register lies in one part, known at compile time;
 * where a thread bit, the threads whose bit differs sit the part out (a
 * warp bit first, a lane bit last: lanes that sit out cost the others
 * throughput). A part's elements go to their addresses with the part bits
 * taken out (compact()), the same on both sides, so its scratch is the
 * whole one's size over the parts. */
enum { CONVERT_WHOLE_MAX = 128 << 10, CONVERT_PART_MAX = 64 << 10 };

/* Address bits reached by the lane bits (lanes) or warp bits of v. */
static unsigned thread_image(Lower *L, const Value *v, const Encoding *s, bool lanes)
{
	const Lin *l = lw_lin_of(L, v);
	return lanes ? lin_image(s, l, 0, 5) : lin_image(s, l, 5, 5 + l->n_warp);
}

/* The part bits for converting x (stored vec at a time) to y (loaded
 * load_vec at a time), or 0 to convert it whole. */
static unsigned part_bits(Lower *L, const Value *x, const Value *y, const Encoding *s, int vec, int load_vec)
{
	int eb = type_bytes(type_elem(x->type));
	long bytes = (long)numel(x->type) * eb;
	if (!s || bytes <= CONVERT_WHOLE_MAX || numel(x->type) > (1L << 30))
		return 0;
	unsigned lx = thread_image(L, x, s, true), wx = thread_image(L, x, s, false);
	unsigned ly = thread_image(L, y, s, true), wy = thread_image(L, y, s, false);
	unsigned out = ((lx | wx) & (ly | wy)); /* a thread bit on both sides */
	for (int j = 0; j < s->n_index_bits; j++)
		if (s->swizzle[j]) /* bits a swizzle moves stay out */
			out |= 1u << j | s->swizzle[j];
	unsigned lowest = (unsigned)(vec > load_vec ? vec : load_vec), mask = 0;
	unsigned prefer[3] = {~(lx | wx | ly | wy), wx | wy, lx | ly}; /* registers, warps, lanes */
	for (int pass = 0; pass < 3; pass++)
		for (int b = 30; b >= 0 && bytes > CONVERT_PART_MAX; b--)
			if ((1L << b) < numel(x->type) && (1u << b) >= lowest && !(out >> b & 1) && prefer[pass] >> b & 1 &&
			    !(mask >> b & 1))
				mask |= 1u << b, bytes /= 2;
	return bytes > CONVERT_PART_MAX ? 0 : mask;
}

/* a without the bits of mask (none of them set in a, for a value) */
static unsigned compact(unsigned a, unsigned mask)
{
	for (int b = 31; b >= 0; b--)
		if (mask >> b & 1)
			a = (a & ((1u << b) - 1)) | ((a >> 1) & ~((1u << b) - 1));
	return a;
}

static LLVMValueRef compact_value(Lower *L, LLVMValueRef a, unsigned mask)
{
	for (int b = 31; b >= 0; b--)
		if (mask >> b & 1) {
			LLVMValueRef lo = LLVMBuildAnd(L->b, a, ci32(L, (long long)((1u << b) - 1)), "");
			LLVMValueRef hi = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, a, ci32(L, 1), ""),
			                               ci32(L, (long long)~((1u << b) - 1)), "");
			a = LLVMBuildOr(L->b, lo, hi, "");
		}
	return a;
}

/* Stores (store) or loads the registers of v in part `part` (the part bits
 * `mask` of their addresses; mask 0: all of them), vec elements an access
 * where its registers allow. */
static void part_io(Lower *L, const Value *v, const Encoding *s, int at, int vec, unsigned mask, unsigned part,
                    bool store, Tile *t)
{
	const Lin *l = lw_lin_of(L, v);
	Type et = type_elem(v->type);
	LLVMTypeRef mt = lw_mem_type(L, et), vt = LLVMVectorType(mt, (unsigned)vec);
	int eb = type_bytes(et), pos[8], vmask = 0;
	if (!vector_regs(s, l, vec, pos))
		vec = 1, vt = LLVMVectorType(mt, 1);
	for (int i = 0; (1 << i) < vec; i++)
		vmask |= 1 << pos[i];
	/* part bits that are thread bits here: the threads outside the part wait */
	unsigned tmask = mask & (thread_image(L, v, s, true) | thread_image(L, v, s, false)), rmask = mask & ~tmask;
	LLVMValueRef raw = lw_swizzle_value(L, s, lw_thread_part(L, l)), tsw = opaque_i32(L, compact_value(L, raw, mask));
	unsigned tbits = compact(lin_thread_bits(s, l), mask);
	LLVMValueRef in = store ? owner_of(L, l) : NULL;
	if (tmask) {
		LLVMValueRef here = LLVMBuildICmp(L->b, LLVMIntEQ, LLVMBuildAnd(L->b, raw, ci32(L, (long long)tmask), ""),
		                                  ci32(L, (long long)(part & tmask)), "");
		in = in ? LLVMBuildAnd(L->b, in, here, "") : here;
	}
	LLVMBasicBlockRef owned = in ? lw_begin_if(L, in, "part") : NULL;
	for (int k = 0, n = 1 << l->n_reg; k < n; k++) {
		unsigned c = swizzle_const(s, (unsigned)lw_reg_const(l, k));
		if (k & vmask || (c & rmask) != (part & rmask))
			continue;
		unsigned cc = compact(c, mask);
		LLVMValueRef p = lw_smem_abs(L, mt, at, cc ? xor_split(L, tsw, tbits, cc) : tsw);
		if (store) {
			LLVMValueRef x = lw_to_mem(L, et, t->e[k]);
			if (vec > 1) {
				x = LLVMGetUndef(vt);
				for (int i = 0; i < vec; i++)
					x = LLVMBuildInsertElement(L->b, x, lw_to_mem(L, et, t->e[vector_elem(pos, k, i)]), ci32(L, i),
					                           "");
			}
			LLVMSetAlignment(LLVMBuildStore(L->b, x, p), (unsigned)(vec * eb));
		} else if (vec == 1) {
			t->e[k] = lw_from_mem(L, et, LLVMBuildLoad2(L->b, mt, p, ""));
		} else {
			LLVMValueRef ld = LLVMBuildLoad2(L->b, vt, p, "");
			LLVMSetAlignment(ld, (unsigned)(vec * eb));
			for (int i = 0; i < vec; i++)
				t->e[vector_elem(pos, k, i)] =
					lw_from_mem(L, et, LLVMBuildExtractElement(L->b, ld, ci32(L, i), ""));
		}
	}
	if (owned)
		lw_end_if(L, owned);
}

static void convert_by_parts(Lower *L, const Value *x, const Value *y, const Encoding *s, int vec, int load_vec,
                             unsigned mask, Tile *t)
{
	int eb = type_bytes(type_elem(x->type)), bits = __builtin_popcount(mask);
	int bytes = (int)(numel(x->type) * eb >> bits);
	for (unsigned p = 0; p < 1u << bits && !L->failed; p++) {
		unsigned part = 0; /* the p-th combination of the mask's bits */
		for (int b = 0, i = 0; b < 32; b++)
			if (mask >> b & 1)
				part |= (p >> i++ & 1) << b;
		int at = L->smem_base + lw_smem_take(L, bytes);
		part_io(L, x, s, at, vec, mask, part, true, val(L, x));
		lw_smem_sync(L, at - L->smem_base, bytes);
		part_io(L, y, s, at, load_vec, mask, part, false, t);
	}
	L->vals[y->id] = *t;
}

/* An operand wgmma reads from its scratch: nothing is loaded into
 * registers, the dot takes the scratch's address. */
static LazyFrags *wgmma_setup(Lower *L, const Op *op, Tile *t, int offset)
{
	LazyFrags *z = arena_alloc(&L->arena, sizeof *z);
	if (!z) {
		L->failed = true;
		return NULL;
	}
	*z = (LazyFrags){.convert = op, .t = t, .offset = offset, .owned = true, .wgmma = true, .pair_bit = -1};
	return z;
}

/* Register k of a lazily read operand, loading its group first if needed. */
LLVMValueRef lw_frag(Lower *L, const Value *v, int k)
{
	LazyFrags *z = L->lazy ? L->lazy[v->id] : NULL;
	if (!z)
		return el(L, v, k);
	if (z->loaded[k])
		return z->t->e[k];
	const Lin *lo = z->lo;
	bool b_op = z->b_op;
	int g = k & ~(z->group - 1), kw = z->kw, eb = 4 / kw;
	if (z->pair_bit >= 0)
		g &= ~(1 << z->pair_bit);
	if (L->smem_unsynced)
		lw_smem_barrier(L); /* the operands' stores are done */
	int end = z->offset + (int)type_numel(v->type) * eb;
	if (L->smem_dirty >= 0 && L->smem_dirty < end)
		L->smem_dirty = end;
	int c = lw_reg_const(lo, g);
	LLVMValueRef sw;
	if (!((unsigned)c & z->thread_bits)) { /* the swizzle is linear: the register part's at compile time */
		unsigned cs = swizzle_const(z->convert->scratch, (unsigned)c);
		sw = cs ? LLVMBuildXor(L->b, z->base_sw, ci32(L, cs), "") : z->base_sw;
	} else {
		LLVMValueRef idx = c ? LLVMBuildOr(L->b, z->base_thread, ci32(L, c), "") : z->base_thread;
		sw = lw_swizzle_value(L, z->convert->scratch, idx);
	}
	if (z->dyn) /* the stage buffer, in elements */
		sw = LLVMBuildAdd(L->b, sw, LLVMBuildLShr(L->b, z->dyn, ci32(L, log2i(eb)), ""), "");
	LLVMValueRef addr = lw_smem_abs(L, eb == 1 ? L->i8 : eb == 2 ? L->i16 : L->i32, z->offset, sw);
	LLVMValueRef a = LLVMBuildPtrToInt(L->b, addr, L->i64, "");
	LLVMValueRef res = LLVMBuildCall2(L->b, z->ft, z->fn, &a, 1, "");
	int x4 = !b_op || z->pair_bit >= 0;
	LLVMTypeRef et = lw_elem_type(L, type_elem(v->type));
	LLVMTypeRef word_t = kw == 1 ? et : LLVMVectorType(et, (unsigned)kw);
	for (int m = 0; m < (x4 ? 4 : 2); m++) {
		LLVMValueRef w = LLVMBuildBitCast(L->b, LLVMBuildExtractValue(L->b, res, (unsigned)m, ""), word_t, "");
		/* matrix m's word: kw registers */
		int r = b_op ? g + kw * (m & 1) + (m >> 1) * (1 << (z->pair_bit < 0 ? 0 : z->pair_bit)) : g + kw * m;
		for (int h = 0; h < kw; h++) {
			z->t->e[r + h] = kw == 1 ? w : LLVMBuildExtractElement(L->b, w, ci32(L, h), "");
			z->loaded[r + h] = true;
		}
	}
	return z->t->e[k];
}

/* Whether y's only use is a dot that comes after op in the same region. */
bool lw_only_for_dot(const Op *op)
{
	const Value *y = op->results[0];
	if (y->uses != 1)
		return false;
	for (const Op *o = op->next; o; o = o->next)
		for (int i = 0; i < o->n_operands; i++)
			if (o->operands[i] == y)
				return o->code == OP_DOT && i < 2;
	return false;
}

void lower_convert(Lower *L, const Op *op, AsyncTile *as)
{
	const Value *x = op->operands[0], *y = op->results[0];
	const Lin *li = lw_lin_of(L, x), *lo = lw_lin_of(L, y);
	Tile *in = val(L, x);
	int n_out = 1 << lo->n_reg;
	Tile t = lw_tile_new(L, n_out);
	if (L->failed)
		return;
	if (as) {
		lw_async_wait(L, as, op->scratch->wgmma); /* then its dot reads with ldmatrix (or wgmma) */
		Tile *kept = arena_alloc(&L->arena, sizeof *kept);
		if (!kept) {
			L->failed = true;
			return;
		}
		*kept = t;
		LazyFrags *z = op->scratch->wgmma ? wgmma_setup(L, op, kept, as->offset) : ldmatrix_setup(L, op, lo, kept, as->offset);
		if (!z)
			return;
		z->owned = false;
		z->dyn = LLVMBuildMul(L->b, as->tma ? lw_tma_buffer(L, as->stage) : as->stage, ci32(L, as->bytes), "");
		z->stages = as->n_stages;
		L->lazy[y->id] = z;
		L->vals[y->id] = t;
		return;
	}
	if (in->n == 1 && (1 << li->n_reg) > 1) {
		t.e[0] = in->e[0];
		t.n = 1;
		L->vals[y->id] = t;
		return;
	}
	bool same = memcmp(li->lane, lo->lane, 5) == 0 && li->n_warp == lo->n_warp &&
	            memcmp(li->warp, lo->warp, (size_t)li->n_warp) == 0;
	if (same && !(op->scratch && op->scratch->wgmma)) {
		for (int k = 0; k < n_out; k++)
			t.e[k] = in->n == 1 ? in->e[0] : in->e[lw_reg_index(li, lw_reg_const(lo, k))];
		L->vals[y->id] = t;
		return;
	}
	const Encoding *s = op->scratch;
	int eb = type_bytes(type_elem(x->type));
	int vec = s ? s->vec : 1, load_vec = s ? s->load_vec : 1;
	/* a vector store needs registers whose index bits land on the low
	 * address bits (the scratch's map keeps the vector's bits out of every
	 * other bit's image) */
	int pos[8];
	if (!vector_regs(s, li, vec, pos))
		vec = 1;
	/* an operand read by its dot later is pinned below the transient uses;
	 * it needs a barrier first only where something touched its bytes since
	 * the last one, and one after (before the dot reads) shared with the
	 * other operand's */
	bool lazy = s && (s->ldmatrix || s->wgmma) && L->lazy && lw_only_for_dot(op);
	/* a wgmma operand from outside the dot's loop (hoisted there, as
	 * attention's Q) stays in its scratch for good: its registers would be
	 * live through the loop (ptxas has been seen to hand an A operand's
	 * registers to another wgmma's A when the loop branches). An A not
	 * K-major there is wgmma's for 16-bit types only. */
	bool kept_b = s && s->wgmma && !lazy &&
	              (y->enc->op_idx == 1 || s->wgmma_fast == 1 || type_bytes(type_elem(x->type)) == 2);
	lazy = lazy || kept_b;
	int bytes = numel(x->type) * eb, at; /* where the scratch starts, from byte 0 */
	unsigned parts;
	if (lazy) {
		if (L->smem_dirty < 0 || L->smem_dirty > L->smem_base)
			lw_smem_barrier(L);
		at = s->wgmma ? lw_smem_pin_aligned(L, bytes, 1024) : lw_smem_pin(L, (bytes + 127) & ~127);
	} else if (!(s && s->ldmatrix) && (parts = part_bits(L, x, y, s, vec, load_vec)) != 0) {
		convert_by_parts(L, x, y, s, vec, load_vec, parts, &t);
		return;
	} else {
		at = L->smem_base + lw_smem_take(L, bytes);
	}
	lw_scratch_store(L, x, s, at, vec);
	if (lazy) { /* kept until the dot has read it */
		if (L->smem_dirty < at + bytes)
			L->smem_dirty = at + bytes;
		L->smem_unsynced = true;
		Tile *kept = arena_alloc(&L->arena, sizeof *kept);
		if (!kept) {
			L->failed = true;
			return;
		}
		*kept = t;
		L->lazy[y->id] = s->wgmma ? wgmma_setup(L, op, kept, at) : ldmatrix_setup(L, op, lo, kept, at);
		if (kept_b && L->lazy[y->id]) {
			L->lazy[y->id]->owned = false, L->lazy[y->id]->kept = true;
			lw_smem_keep(L, at);
		}
		L->vals[y->id] = t;
		return;
	}
	lw_smem_sync(L, at - L->smem_base, bytes);
	if (s && s->ldmatrix) { /* read all of it now */
		LazyFrags *z = ldmatrix_setup(L, op, lo, &t, at);
		L->lazy[y->id] = z;
		for (int k = 0; k < n_out && !L->failed; k++)
			t.e[k] = lw_frag(L, y, k);
		L->lazy[y->id] = NULL;
		L->vals[y->id] = t;
		return;
	}
	part_io(L, y, s, at, load_vec, 0, 0, false, &t); /* all of it: no part bits */
	L->vals[y->id] = t;
}
