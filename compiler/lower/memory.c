/* memory.c: memory: the shared-memory scratch (pinned and transient uses,
 * barriers, element stores and loads), cp.async copies of the dot tiles loops
 * carry, global loads and stores in inline PTX, and atomics. */
#include "lower/lower_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- shared memory ------------------------------------------------------------------ */

/* bar.sync 0 for the whole program; with warp specialization the
 * consumers' barrier 1 counts them alone (the producer never waits on it). */
static void barrier(Lower *L)
{
	if (L->ws == WS_CONSUMER) {
		LLVMValueRef args[2] = {ci32(L, 1), ci32(L, L->T)};
		lw_call_intrinsic(L, "llvm.nvvm.barrier.sync.cnt", NULL, 0, args, 2);
		return;
	}
	lw_call_intrinsic(L, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
}

/* Shared memory: scratches that must outlive their op (an mma operand
 * read by its dot, a loop's cp.async stages) are pinned at the bottom,
 * below smem_base (lw_smem_pin); every other use is transient and lies above
 * it (lw_smem_take). */
static void need_smem(Lower *L, int bytes)
{
	if (L->smem_base + bytes > L->smem_bytes)
		L->smem_bytes = L->smem_base + bytes;
}

/* Element idx of type t from byte byte_offset of shared memory. */
LLVMValueRef lw_smem_abs(Lower *L, LLVMTypeRef t, int byte_offset, LLVMValueRef idx)
{
	LLVMValueRef base = L->smem;
	if (byte_offset) {
		LLVMValueRef off = ci32(L, byte_offset);
		base = LLVMBuildGEP2(L->b, L->i8, base, &off, 1, "");
	}
	return LLVMBuildGEP2(L->b, t, base, &idx, 1, "");
}

/* Warp-specialized, the base is computed once, in the entry block, by an
 * asm statement that LLVM cannot see through: as a constant, the address
 * is made again in every block that uses it (ptxas reads the CTA's id in
 * the cluster for each), which cost the producer's loop a third of its
 * instructions. Elsewhere the constant stays: a register live through the
 * whole kernel made attention (d64, 4 warps) spill. */
LLVMValueRef lw_smem_addr32(Lower *L, int byte_offset, LLVMValueRef dyn)
{
	if (!L->ws) {
		LLVMValueRef p = lw_smem_abs(L, L->i8, byte_offset, ci32(L, 0));
		LLVMValueRef a = LLVMBuildTrunc(L->b, LLVMBuildPtrToInt(L->b, p, L->i64, ""), L->i32, "");
		return dyn ? LLVMBuildAdd(L->b, a, dyn, "") : a;
	}
	if (!L->smem32) {
		LLVMValueRef p = LLVMBuildPtrToInt(L->pro, L->smem, L->i64, "");
		LLVMTypeRef ft = LLVMFunctionType(L->i32, &L->i64, 1, 0);
		static const char text[] = "cvt.u32.u64 $0, $1;", cons[] = "=r,l";
		LLVMValueRef fn = LLVMGetInlineAsm(ft, text, sizeof text - 1, cons, sizeof cons - 1, 0, 0,
		                                   LLVMInlineAsmDialectATT, 0);
		L->smem32 = LLVMBuildCall2(L->pro, ft, fn, &p, 1, "smem32");
	}
	LLVMValueRef a = byte_offset ? LLVMBuildAdd(L->b, L->smem32, ci32(L, byte_offset), "") : L->smem32;
	return dyn ? LLVMBuildAdd(L->b, a, dyn, "") : a;
}

/* The same, byte_offset from the transient uses' base. */
LLVMValueRef lw_smem_at(Lower *L, LLVMTypeRef t, int byte_offset, LLVMValueRef idx)
{
	return lw_smem_abs(L, t, byte_offset + L->smem_base, idx);
}

/* Pins bytes below the transient uses (until smem_base is lowered again);
 * returns where they start. */
int lw_smem_pin(Lower *L, int bytes)
{
	int at = L->smem_base;
	L->smem_base += bytes;
	need_smem(L, 0);
	return at;
}

int lw_smem_pin_aligned(Lower *L, int bytes, int align)
{
	L->smem_base = (L->smem_base + align - 1) & ~(align - 1);
	L->wgmma_used = true;
	return lw_smem_pin(L, (bytes + align - 1) & ~(align - 1));
}

void lw_smem_barrier(Lower *L)
{
	barrier(L);
	L->smem_dirty = 0;
	L->smem_unsynced = false;
}

/* Transient shared memory: each use (write, barrier, read) takes the next
 * bytes after what may have been touched since the last barrier, so that
 * it needs no barrier of its own before it writes; when those bytes would
 * grow the kernel's shared memory past what it already uses (or 4 KB), or
 * what came before is not known (the start of a loop's body, after an if),
 * it starts again at the bottom behind a barrier. Returns the offset from
 * smem_base (what lw_smem_at takes). */
int lw_smem_take(Lower *L, int bytes)
{
	bytes = (bytes + 15) & ~15;
	int base = L->smem_base;
	int room = L->smem_bytes > base + 4096 ? L->smem_bytes : base + 4096;
	int start = L->smem_dirty < 0 ? -1 : L->smem_dirty > base ? L->smem_dirty : base;
	if (start < 0 || start + bytes > room) {
		lw_smem_barrier(L);
		start = base;
	}
	L->smem_dirty = start + bytes;
	need_smem(L, start - base + bytes);
	return start - base;
}

/* The barrier between a use's writes and its reads (of bytes at off). */
void lw_smem_sync(Lower *L, int off, int bytes)
{
	lw_smem_barrier(L);
	L->smem_dirty = L->smem_base + off + ((bytes + 15) & ~15);
}

/* Where what came before is not known (region boundaries). */
void lw_smem_unknown(Lower *L)
{
	if (L->smem_unsynced)
		lw_smem_barrier(L);
	L->smem_dirty = -1;
}

LLVMValueRef lw_to_mem(Lower *L, Type t, LLVMValueRef v)
{
	return !t.ptr && t.scalar == SK_I1 ? LLVMBuildZExt(L->b, v, L->i8, "") : v;
}

LLVMValueRef lw_from_mem(Lower *L, Type t, LLVMValueRef v)
{
	return !t.ptr && t.scalar == SK_I1 ? LLVMBuildTrunc(L->b, v, L->i1, "") : v;
}

/* *p = v where pred holds, as one predicated st.shared: no branch, so the
 * kernel stays in fewer basic blocks, each of which costs the code
 * generator a DAG of its own. */
void lw_smem_store_if(Lower *L, LLVMValueRef pred, LLVMValueRef p, LLVMValueRef v)
{
	if (LLVMIsAConstantInt(pred) && LLVMConstIntGetZExtValue(pred)) {
		LLVMBuildStore(L->b, v, p);
		return;
	}
	LLVMTypeRef t = LLVMTypeOf(v);
	LLVMTypeKind k = LLVMGetTypeKind(t);
	int bits = k == LLVMIntegerTypeKind ? (int)LLVMGetIntTypeWidth(t) : k == LLVMDoubleTypeKind ? 64
	         : k == LLVMFloatTypeKind ? 32 : k == LLVMPointerTypeKind ? 64 : 16;
	LLVMValueRef w = k == LLVMIntegerTypeKind ? v
	               : k == LLVMPointerTypeKind ? LLVMBuildPtrToInt(L->b, v, L->i64, "") /* a pointer tile */
	                                          : LLVMBuildBitCast(L->b, v, LLVMIntTypeInContext(L->c, (unsigned)bits), "");
	if (bits < 16) /* bytes travel in 16-bit registers */
		w = LLVMBuildZExt(L->b, w, L->i16, "");
	char text[64], cons[16];
	snprintf(text, sizeof text, "@$0 st.shared.b%d [$1], $2;", bits);
	snprintf(cons, sizeof cons, "b,l,%s", bits == 64 ? "l" : bits == 32 ? "r" : "h");
	LLVMTypeRef args_t[3] = {L->i1, LLVMTypeOf(p), LLVMTypeOf(w)};
	LLVMValueRef args[3] = {pred, p, w};
	LLVMTypeRef ft = LLVMFunctionType(L->vd, args_t, 3, 0);
	LLVMValueRef a = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	LLVMBuildCall2(L->b, ft, a, args, 3, "");
}

/* Writes this thread's elements of x (tile v) to shared memory at
 * byte_offset (taken with lw_smem_take), by linear index; replicas write once. */
void lw_smem_store_block(Lower *L, const Value *x, const Tile *v, int byte_offset)
{
	Type t = x->type;
	const Lin *l = lw_lin_of(L, x);
	LLVMTypeRef mt = lw_mem_type(L, t);
	LLVMValueRef own = owner_of(L, l);
	/* a uniform tile (a splat) holds one element for all the block's */
	for (int k = 0, n = 1 << l->n_reg; k < n; k++)
		lw_smem_store_if(L, own, lw_smem_at(L, mt, byte_offset, lw_index_of(L, l, k)), lw_to_mem(L, t, v->n == 1 ? v->e[0] : v->e[k]));
}

LLVMValueRef lw_smem_load(Lower *L, Type t, int byte_offset, LLVMValueRef idx)
{
	LLVMTypeRef mt = lw_mem_type(L, t);
	return lw_from_mem(L, t, LLVMBuildLoad2(L->b, mt, lw_smem_at(L, mt, byte_offset, idx), ""));
}

/* ---- dot tiles through shared memory with cp.async ---------------------------
 *
 * pipeline-dots leaves a loop that carries a dot's tile: loaded before the
 * loop for the first iteration, loaded at the top of the body for the next,
 * converted to its dot operand. Such a tile goes to shared memory with
 * cp.async instead of through registers: two stage buffers (the convert's
 * swizzled scratch, twice; three for a wgmma operand when num_stages >= 3,
 * so that a dot may stay in flight), the loads become 16-byte asynchronous
 * copies into the buffer the next iteration reads (zero-filled where
 * masked), the loop carries the buffer's number, and the conversion waits
 * for the copies of its own iteration (cp.async.wait_group 1: the next ones
 * stay in flight under this iteration's mma) and reads with ldmatrix (or
 * its dot reads the buffer with wgmma). A transpose between the tile and
 * its conversion (attention's K^T) is taken: the copies land transposed. */

static int access_width(Lower *L, const Value *ptr, const Value *mask);

static bool zero_const(const Value *v)
{
	return v->def && v->def->code == OP_CONST && v->def->ival == 0 && v->def->fval == 0.0;
}

/* A load a cp.async can do: 16 bytes a copy from aligned, contiguous
 * pointers held once, zero where masked off. */
static int async_width(Lower *L, const Op *ld, const Encoding *s)
{
	const Value *ptr = ld->operands[0];
	int flags = (int)ld->attr[0];
	if (ld->attr[3] || !ptr->type.rank || (flags & MEMF_OTHER && !zero_const(ld->operands[2])))
		return 0;
	Type et = type_pointee(type_elem(ptr->type));
	int eb = type_bytes(et);
	const Lin *l = lw_lin_of(L, ptr);
	if (lw_repl_mask(l) & (unsigned)(L->T - 1))
		return 0;
	int w = access_width(L, ptr, flags & MEMF_MASK ? ld->operands[1] : NULL);
	if (w * eb != 16 || s->vec < w)
		return 0;
	return w;
}

/* Finds the tiles loops in r carry that way (before r is lowered: the first
 * loads come before their loop). */
void lw_async_prescan(Lower *L, const Region *r)
{
	for (const Op *op = r->first; op; op = op->next) {
		if (op->code != OP_FOR || (L->f->sm && L->f->sm < 80))
			continue; /* cp.async is sm_80's */
		bool seen = false; /* (warp specialization scans every loop first) */
		for (int i = 0; i < L->n_async && !seen; i++)
			seen = L->async[i].loop == op;
		if (seen)
			continue;
		const Region *body = &op->regions[0];
		for (int j = 0; j < op->n_results; j++) {
			const Value *arg = body->args[1 + j], *init = op->operands[3 + j], *y = body->last->operands[j];
			/* two ahead (pipeline-dots on sm_90a): the tile's next value is
			 * the next iteration's tile, carried, whose own is the load */
			const Value *arg2 = NULL, *init2 = NULL;
			for (int j2 = 0; j2 < op->n_results && y->owner == body && !y->def; j2++)
				if (body->args[1 + j2] == y && y->uses == 1) {
					arg2 = y;
					init2 = op->operands[3 + j2];
					y = body->last->operands[j2];
				}
			if (arg2 && (!init2->def || init2->def->code != OP_LOAD || init2->def->parent != r || init2->uses != 1))
				continue;
			if (!init->def || init->def->code != OP_LOAD || init->def->parent != r || init->uses != 1 ||
			    !y->def || y->def->code != OP_LOAD || y->def->parent != body || y->uses != 1 || arg->uses != 1 ||
			    op->results[j]->uses)
				continue;
			const Op *conv = NULL, *trans = NULL;
			for (const Op *o = body->first; o && !conv; o = o->next)
				if (o->n_operands == 1 && o->operands[0] == arg)
					conv = o;
			if (conv && conv->code == OP_TRANS && conv->results[0]->uses == 1) { /* its copies land transposed */
				trans = conv;
				conv = NULL;
				for (const Op *o = trans->next; o && !conv; o = o->next)
					if (o->n_operands == 1 && o->operands[0] == trans->results[0])
						conv = o;
				if (conv && !(conv->scratch && conv->scratch->wgmma))
					conv = NULL;
			}
			/* (a K-major B scratch is filled by stores: no example has
			 * reached it straight from a loop's load yet) */
			if (!conv || conv->code != OP_CONVERT_LAYOUT || !conv->scratch ||
			    !(conv->scratch->ldmatrix || conv->scratch->wgmma) || conv->scratch->ldmatrix == 3 ||
			    !lw_only_for_dot(conv))
				continue;
			int align = conv->scratch->wgmma ? 1024 : 128;
			int bytes = ((int)type_numel(arg->type) * type_bytes(type_elem(arg->type)) + align - 1) & ~(align - 1);
			/* a buffer for each tile in flight, and one more for a wgmma
			 * that may still read the one before */
			int stages = (arg2 ? 3 : 2) + (conv->scratch->wgmma && L->f->num_stages >= 3);
			AsyncTile at = {.loop = op, .arg = arg, .first = init->def, .ahead = y->def, .arg2 = arg2,
			                .first2 = arg2 ? init2->def : NULL, .convert = conv, .trans = trans, .bytes = bytes,
			                .offset = -1, .n_stages = stages};
			if (!lw_tma_tile(L, &at)) { /* else cp.async, 16 bytes a copy */
				int w = async_width(L, init->def, conv->scratch);
				if (!w || async_width(L, y->def, conv->scratch) != w ||
				    (arg2 && async_width(L, init2->def, conv->scratch) != w))
					continue;
				at.vec = w;
			}
			AsyncTile *n = realloc(L->async, (size_t)(L->n_async + 1) * sizeof *n);
			if (!n) {
				L->failed = true;
				return;
			}
			L->async = n;
			L->async[L->n_async++] = at;
		}
	}
}

AsyncTile *lw_async_of(Lower *L, const Op *ld, const Value *arg)
{
	for (int i = 0; i < L->n_async; i++)
		if ((ld && (L->async[i].first == ld || L->async[i].ahead == ld || (L->async[i].first2 && L->async[i].first2 == ld))) ||
		    (arg && (L->async[i].arg == arg || (L->async[i].arg2 && L->async[i].arg2 == arg) ||
		             (L->async[i].trans && L->async[i].trans->results[0] == arg))))
			return &L->async[i];
	return NULL;
}

void lw_async_asm(Lower *L, const char *text, LLVMValueRef *args, LLVMTypeRef *types, int n, const char *cons)
{
	LLVMTypeRef ft = LLVMFunctionType(L->vd, types, (unsigned)n, 0);
	LLVMValueRef fn = LLVMGetInlineAsm(ft, (char *)text, strlen(text), (char *)cons, strlen(cons), 1, 0,
	                                   LLVMInlineAsmDialectATT, 0);
	LLVMBuildCall2(L->b, ft, fn, args, (unsigned)n, "");
}

/* The copies of load ld into stage buffer `stage` (an i32), uncommitted. */
static void async_copy(Lower *L, AsyncTile *a, const Op *ld, LLVMValueRef stage)
{
	const Value *ptr = ld->operands[0];
	const Value *mask = ld->attr[0] & MEMF_MASK ? ld->operands[1] : NULL;
	const Encoding *s = a->convert->scratch;
	const Lin *li = lw_lin_of(L, ptr);
	Lin moved;
	if (a->trans) { /* the load's index bits where the transposed tile has them */
		int perm[LIN_MAX_BITS];
		for (int o = 0; o < LIN_MAX_BITS; o++)
			perm[o] = -1;
		int bits = log2i(numel(a->trans->results[0]->type));
		for (int o = 0; o < bits; o++) {
			int m;
			if (shape_bit_map(a->trans, o, &m) && m >= 0)
				perm[m] = o;
		}
		moved = *li;
		for (int i = 0; i < li->n_reg; i++)
			moved.reg[i] = (int8_t)perm[li->reg[i]];
		for (int i = 0; i < 5 + li->n_warp; i++) {
			int8_t *b = i < 5 ? &moved.lane[i] : &moved.warp[i - 5];
			if (*b >= 0)
				*b = (int8_t)perm[*b];
		}
		li = &moved;
	}
	int eb = type_bytes(type_pointee(type_elem(ptr->type)));
	/* the buffers lie below the transient uses: written only here and read
	 * by ldmatrix, so a barrier first only where bytes were touched since */
	if (L->smem_dirty < 0 || L->smem_dirty > a->offset)
		lw_smem_barrier(L);
	LLVMValueRef tsw = lw_swizzle_value(L, s, lw_thread_part(L, li));
	LLVMValueRef base = LLVMBuildAdd(L->b, ci32(L, a->offset), LLVMBuildMul(L->b, stage, ci32(L, a->bytes), ""), "");
	const char *text = "cp.async.cg.shared.global [$0], [$1], 16, $2;";
	LLVMTypeRef types[3] = {L->i64, L->gptr, L->i32};
	for (int k = 0, n = ept(L, ptr); k < n && !L->failed; k += a->vec) {
		LLVMValueRef el_idx = lw_scratch_addr(L, s, li, tsw, k);
		LLVMValueRef byte = LLVMBuildAdd(L->b, base, LLVMBuildMul(L->b, el_idx, ci32(L, eb), ""), "");
		LLVMValueRef dst = LLVMBuildGEP2(L->b, L->i8, L->smem, &byte, 1, "");
		LLVMValueRef args[3] = {LLVMBuildPtrToInt(L->b, dst, L->i64, ""), el(L, ptr, k),
		                        mask ? LLVMBuildSelect(L->b, el(L, mask, k), ci32(L, 16), ci32(L, 0), "") : ci32(L, 16)};
		lw_async_asm(L, text, args, types, 3, "l,l,r");
	}
	L->async_pending = true;
}

void lw_async_commit(Lower *L)
{
	if (L->async_pending) {
		lw_async_asm(L, "cp.async.commit_group;", NULL, NULL, 0, "");
		L->async_synced = false;
	}
	L->async_pending = false;
}

/* A first or ahead load of a carried tile: the copies, and the buffer's
 * number as its value. */
static void lower_async_load(Lower *L, const Op *op, AsyncTile *a)
{
	Tile t = lw_tile_new(L, 1);
	if (L->failed)
		return;
	LLVMValueRef stage;
	if (op == a->first && a->tma) {
		lw_tma_init(L, a); /* the buffers and their barriers, kept until after the loop */
		stage = ci32(L, 0);
	} else if (op == a->first) {
		/* the buffers, kept until after the loop */
		a->offset = a->convert->scratch->wgmma ? lw_smem_pin_aligned(L, a->n_stages * a->bytes, 1024)
		                                       : lw_smem_pin(L, a->n_stages * a->bytes);
		stage = ci32(L, 0);
	} else if (op == a->first2) {
		stage = ci32(L, 1);
	} else {
		LLVMValueRef last = a->arg2 ? a->stage2 : a->stage; /* the newest tile's buffer */
		if (a->tma)
			last = lw_tma_buffer(L, last);
		LLVMValueRef next = LLVMBuildAdd(L->b, last, ci32(L, 1), ""); /* the next buffer, round */
		stage = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, next, ci32(L, a->n_stages), ""), ci32(L, 0), next, "");
	}
	if (op == a->first2 && a->offset < 0) {
		lw_fail(L, op->loc, "internal error: a tile two iterations ahead loaded before the first%s", "");
		return;
	}
	if (a->tma) {
		stage = lw_tma_fill(L, a, op, stage);
	} else {
		async_copy(L, a, op, stage);
		if (op != a->ahead) /* before the loop: a group each, so that a wait can leave the later ones in flight */
			lw_async_commit(L);
	}
	t.e[0] = stage;
	L->vals[op->results[0]->id] = t;
}

/* ---- global memory ----------------------------------------------------------------- */

/* How many consecutive registers one access can take: the map must hold
 * them at consecutive positions of one dimension, and the pointers must be
 * contiguous and aligned along it (at most 16 bytes, a mask that does not
 * change across them). */
/* The run of registers that hold consecutive elements along one dimension
 * of ptr's block (from register 0): its dimension (*dim, -1 if none) and
 * length (a power of two). */
static int reg_run(Lower *L, const Value *ptr, int *dim)
{
	Type t = ptr->type;
	const Lin *l = lw_lin_of(L, ptr);
	*dim = -1;
	if (!t.rank || l->n_reg == 0)
		return 1;
	for (int i = 0; i < t.rank; i++)
		if (t.shape[i] > 1 && l->reg[0] == lin_bit(t, i, 0))
			*dim = i;
	if (*dim < 0)
		return 1;
	int run = 0;
	while (run < l->n_reg && (1 << run) < t.shape[*dim] && l->reg[run] == lin_bit(t, *dim, run))
		run++;
	return 1 << run;
}

/* How many consecutive registers one access can take: the map must hold
 * them at consecutive positions of one dimension, and the pointers must be
 * contiguous and aligned along it (at most 16 bytes, a mask that does not
 * change across them). */
static int access_width(Lower *L, const Value *ptr, const Value *mask)
{
	int d, run = reg_run(L, ptr, &d);
	if (d < 0)
		return 1;
	int w = axis_access_width(L->ax, ptr, mask, d);
	return w < run ? w : run;
}

/* How many consecutive registers load one address under one mask bit (a
 * scale per group of weights): those after the first reuse its value. */
static int same_address_run(Lower *L, const Value *ptr, const Value *mask)
{
	int d, run = reg_run(L, ptr, &d);
	if (d < 0)
		return 1;
	int64_t c = L->ax[ptr->id].constancy[d];
	if (mask && L->ax[mask->id].constancy[d] < c)
		c = L->ax[mask->id].constancy[d];
	while (run > c)
		run /= 2;
	return run;
}

/* The inline PTX register letter and bits for one word of an access. */
static const char *reg_of(int bytes) { return bytes == 8 ? "l" : bytes == 4 ? "r" : "h"; }

/* w elements of type et packed into `words` integers of word_bytes each. */
static void pack(Lower *L, LLVMValueRef *elems, int w, LLVMTypeRef et, int eb, LLVMValueRef *words, int word_bytes)
{
	LLVMTypeRef wt = LLVMIntTypeInContext(L->c, (unsigned)word_bytes * 8);
	if (eb == word_bytes) {
		for (int i = 0; i < w; i++) {
			LLVMValueRef x = elems[i];
			if (LLVMGetTypeKind(et) == LLVMPointerTypeKind)
				x = LLVMBuildPtrToInt(L->b, x, wt, "");
			else if (et != wt)
				x = LLVMBuildBitCast(L->b, x, wt, "");
			words[i] = x;
		}
		return;
	}
	/* several narrow elements to a word */
	LLVMTypeRef vt = LLVMVectorType(et, (unsigned)w);
	LLVMValueRef v = LLVMGetUndef(vt);
	for (int i = 0; i < w; i++)
		v = LLVMBuildInsertElement(L->b, v, elems[i], ci32(L, i), "");
	int n = w * eb / word_bytes;
	LLVMValueRef wv = LLVMBuildBitCast(L->b, v, LLVMVectorType(wt, (unsigned)n), "");
	for (int i = 0; i < n; i++)
		words[i] = LLVMBuildExtractElement(L->b, wv, ci32(L, i), "");
}

static void unpack(Lower *L, LLVMValueRef *words, int word_bytes, LLVMTypeRef et, int eb, int w, LLVMValueRef *elems)
{
	LLVMTypeRef wt = LLVMIntTypeInContext(L->c, (unsigned)word_bytes * 8);
	if (eb == word_bytes) {
		for (int i = 0; i < w; i++) {
			LLVMValueRef x = words[i];
			if (LLVMGetTypeKind(et) == LLVMPointerTypeKind)
				x = LLVMBuildIntToPtr(L->b, x, et, "");
			else if (et != wt)
				x = LLVMBuildBitCast(L->b, x, et, "");
			elems[i] = x;
		}
		return;
	}
	int n = w * eb / word_bytes;
	LLVMValueRef wv = LLVMGetUndef(LLVMVectorType(wt, (unsigned)n));
	for (int i = 0; i < n; i++)
		wv = LLVMBuildInsertElement(L->b, wv, words[i], ci32(L, i), "");
	LLVMValueRef v = LLVMBuildBitCast(L->b, wv, LLVMVectorType(et, (unsigned)w), "");
	for (int i = 0; i < w; i++)
		elems[i] = LLVMBuildExtractElement(L->b, v, ci32(L, i), "");
}

static const char *cache_suffix(int64_t c)
{
	static const char *const s[] = {"", ".ca", ".cg", ".cs", ".cv", ".wb", ".wt"};
	return c >= 0 && c < 7 ? s[c] : "";
}

/* PTX takes an L1 eviction priority only where the access may use L1:
 * with the default cache operator or .ca. */
static const char *evict_suffix(int64_t e, int64_t cache)
{
	if (cache != CACHE_DEFAULT && cache != CACHE_CA)
		return "";
	return e == EVICT_FIRST ? ".L1::evict_first" : e == EVICT_LAST ? ".L1::evict_last" : "";
}

/* One (possibly masked, vector) global load or store in inline PTX. */
static void access_asm(Lower *L, bool store, LLVMValueRef ptr, LLVMValueRef pred, LLVMValueRef *words, int n_words,
                       int word_bytes, LLVMValueRef *others, const Op *op, LLVMValueRef *out)
{
	char text[512], cons[256];
	const char *r = reg_of(word_bytes);
	int bits = word_bytes * 8;
	int reg_bits = bits < 16 ? 16 : bits; /* bytes travel in 16-bit registers */
	char vec[16] = "";
	if (n_words > 1)
		snprintf(vec, sizeof vec, ".v%d", n_words);
	int pos = 0, cpos = 0;
	LLVMValueRef args[16];
	LLVMTypeRef arg_types[16];
	int na = 0;
	LLVMTypeRef wt = LLVMIntTypeInContext(L->c, (unsigned)reg_bits);
	if (reg_bits != bits && words)
		for (int i = 0; i < n_words; i++)
			words[i] = LLVMBuildZExt(L->b, words[i], wt, "");
	if (reg_bits != bits && others)
		for (int i = 0; i < n_words; i++)
			others[i] = LLVMBuildZExt(L->b, others[i], wt, "");
	if (store) {
		pos += snprintf(text + pos, sizeof text - (size_t)pos, "%sst.global%s%s%s.b%d [$0], {", pred ? "@$1 " : "",
		                cache_suffix(op->attr[1]), evict_suffix(op->attr[2], op->attr[1]), vec, bits);
		cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, "l%s", pred ? ",b" : "");
		args[na] = ptr, arg_types[na++] = L->gptr;
		if (pred)
			args[na] = pred, arg_types[na++] = L->i1;
		for (int i = 0; i < n_words; i++) {
			pos += snprintf(text + pos, sizeof text - (size_t)pos, "%s$%d", i ? ", " : "", na);
			cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",%s", r);
			args[na] = words[i], arg_types[na++] = wt;
		}
		snprintf(text + pos, sizeof text - (size_t)pos, "};");
		LLVMTypeRef ft = LLVMFunctionType(L->vd, arg_types, (unsigned)na, 0);
		LLVMValueRef a = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
		LLVMBuildCall2(L->b, ft, a, args, (unsigned)na, "");
		return;
	}
	/* load: outputs $0..$n-1 start as `other`, then the predicated load */
	for (int i = 0; i < n_words; i++)
		cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, "%s=&%s", i ? "," : "", r);
	int p_idx = n_words, pred_idx = n_words + 1, other_idx = n_words + (pred ? 2 : 1);
	cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",l");
	args[na] = ptr, arg_types[na++] = L->gptr;
	if (pred) {
		cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",b");
		args[na] = pred, arg_types[na++] = L->i1;
	}
	if (others)
		for (int i = 0; i < n_words; i++) {
			pos += snprintf(text + pos, sizeof text - (size_t)pos, "mov.b%d $%d, $%d; ", reg_bits, i, other_idx + i);
			cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",%s", r);
			args[na] = others[i], arg_types[na++] = wt;
		}
	if (pred)
		pos += snprintf(text + pos, sizeof text - (size_t)pos, "@$%d ", pred_idx);
	pos += snprintf(text + pos, sizeof text - (size_t)pos, "ld.global%s%s%s.b%d {", cache_suffix(op->attr[1]),
	                evict_suffix(op->attr[2], op->attr[1]), vec, bits);
	for (int i = 0; i < n_words; i++)
		pos += snprintf(text + pos, sizeof text - (size_t)pos, "%s$%d", i ? ", " : "", i);
	snprintf(text + pos, sizeof text - (size_t)pos, "}, [$%d];", p_idx);
	LLVMTypeRef rt;
	LLVMTypeRef fields[4];
	for (int i = 0; i < n_words; i++)
		fields[i] = wt;
	rt = n_words == 1 ? wt : LLVMStructTypeInContext(L->c, fields, (unsigned)n_words, 0);
	LLVMTypeRef ft = LLVMFunctionType(rt, arg_types, (unsigned)na, 0);
	LLVMValueRef a = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	LLVMValueRef res = LLVMBuildCall2(L->b, ft, a, args, (unsigned)na, "");
	for (int i = 0; i < n_words; i++) {
		out[i] = n_words == 1 ? res : LLVMBuildExtractValue(L->b, res, (unsigned)i, "");
		if (reg_bits != bits)
			out[i] = LLVMBuildTrunc(L->b, out[i], LLVMIntTypeInContext(L->c, (unsigned)bits), "");
	}
}

void lower_load_store(Lower *L, const Op *op)
{
	AsyncTile *at = op->code == OP_LOAD ? lw_async_of(L, op, NULL) : NULL;
	if (at) {
		lower_async_load(L, op, at);
		return;
	}
	bool store = op->code == OP_STORE;
	const Value *ptr = op->operands[0];
	int flags = (int)op->attr[0];
	const Value *mask = NULL, *other = NULL;
	if (store && op->n_operands > 2)
		mask = op->operands[2];
	if (!store && (flags & MEMF_MASK))
		mask = op->operands[1];
	if (!store && (flags & MEMF_OTHER))
		other = op->operands[2];
	Type et = type_pointee(type_elem(ptr->type));
	int eb = type_bytes(et);
	LLVMTypeRef let = lw_elem_type(L, et), mt = lw_mem_type(L, et);
	int n = ept(L, ptr);
	int w = access_width(L, ptr, mask);
	int total = w * eb;
	int word_bytes = total >= 4 ? (total >= 8 && eb == 8 ? 8 : 4) : total;
	int n_words = total / word_bytes;
	Tile res = store ? (Tile){0} : lw_tile_new(L, n);
	bool replicated = ptr->type.rank && (lw_repl_mask(lw_lin_of(L, ptr)) & (unsigned)(L->T - 1));
	int same = !store && w == 1 && !op->attr[3] ? same_address_run(L, ptr, mask) : 1;
	for (int k = 0; k < n && !L->failed; k += w) {
		if (k % same) {
			res.e[k] = res.e[k - k % same];
			continue;
		}
		LLVMValueRef pred = mask ? el(L, mask, k) : NULL;
		if (store && replicated) { /* one owner stores each element */
			LLVMValueRef own = owner_of(L, lw_lin_of(L, ptr));
			pred = pred ? LLVMBuildAnd(L->b, pred, own, "") : own;
		}
		LLVMValueRef elems[16], words[16], others[16];
		if (store) {
			for (int i = 0; i < w; i++)
				elems[i] = lw_to_mem(L, et, el(L, op->operands[1], k + i));
			pack(L, elems, w, mt, eb, words, word_bytes);
			access_asm(L, true, el(L, ptr, k), pred, words, n_words, word_bytes, NULL, op, NULL);
			continue;
		}
		bool has_other = other != NULL;
		if (has_other) {
			for (int i = 0; i < w; i++)
				elems[i] = lw_to_mem(L, et, el(L, other, k + i));
			pack(L, elems, w, mt, eb, others, word_bytes);
		} else if (pred) {
			for (int i = 0; i < n_words; i++)
				others[i] = LLVMConstInt(LLVMIntTypeInContext(L->c, (unsigned)word_bytes * 8), 0, 0);
			has_other = true;
		}
		access_asm(L, false, el(L, ptr, k), pred, NULL, n_words, word_bytes, has_other ? others : NULL, op, words);
		unpack(L, words, word_bytes, mt, eb, w, elems);
		for (int i = 0; i < w; i++)
			res.e[k + i] = lw_from_mem(L, et, elems[i]);
		(void)let;
	}
	if (!store)
		L->vals[op->results[0]->id] = res;
}

/* ---- atomics ------------------------------------------------------------------------
 *
 * LLVM's NVPTX back end drops an atomic's ordering and scope (it prints a
 * relaxed atom.global), so atomics are PTX of their own, sm_70's ordered
 * forms: atom.<sem>.<scope>.global.<op>.<type>, with sem and scope as the
 * program gave them. The few kinds with no such instruction (8- and 16-bit
 * read-modify-write, float min and max, bf16 add below sm_90) keep LLVM's
 * atomic (a relaxed atom or a loop of cas) between fence.acq_rel fences of
 * the scope: one before where sem releases, one after where it acquires. */

static const char *sem_ptx(int64_t s)
{
	return s == SEM_RELAXED ? ".relaxed" : s == SEM_ACQUIRE ? ".acquire" : s == SEM_RELEASE ? ".release" : ".acq_rel";
}

static const char *scope_ptx(int64_t s) { return s == SCOPE_CTA ? ".cta" : s == SCOPE_SYS ? ".sys" : ".gpu"; }

static void atomic_fence(Lower *L, int64_t scope)
{
	char text[64];
	snprintf(text, sizeof text, "fence.acq_rel%s;", scope_ptx(scope));
	LLVMTypeRef ft = LLVMFunctionType(LLVMVoidTypeInContext(L->c), NULL, 0, 0);
	LLVMValueRef a = LLVMGetInlineAsm(ft, text, strlen(text), "~{memory}", 9, 1, 0, LLVMInlineAsmDialectATT, 0);
	LLVMBuildCall2(L->b, ft, a, NULL, 0, "");
}

/* The PTX "op.type" of atomic op on et with an ordered form, or NULL. */
static const char *atomic_form(const Lower *L, const Op *op, Type et, char *buf, size_t n)
{
	int bits = type_bytes(et) * 8;
	bool f = is_float(et);
	if (op->code == OP_ATOMIC_CAS) {
		snprintf(buf, n, "cas.b%d", bits);
		return bits >= 16 ? buf : NULL;
	}
	static const char *const names[] = {"add", "max", "min", "and", "or", "xor", "exch"};
	int64_t a = op->attr[0];
	if (a < 0 || a > ATOM_XCHG)
		return NULL;
	if (f && a == ATOM_ADD && bits == 16) {
		bool bf = et.scalar == SK_BF16;
		if (bf && L->f->sm < 90)
			return NULL;
		snprintf(buf, n, "add.noftz.%s", bf ? "bf16" : "f16");
		return buf;
	}
	if (bits < 32)
		return NULL;
	if (f && a == ATOM_ADD)
		snprintf(buf, n, "add.f%d", bits);
	else if (f && a != ATOM_XCHG)
		return NULL; /* float min, max */
	else if (a == ATOM_MAX || a == ATOM_MIN)
		snprintf(buf, n, "%s.%c%d", names[a], is_signed(et) ? 's' : 'u', bits);
	else if (a == ATOM_ADD)
		snprintf(buf, n, "add.u%d", bits);
	else
		snprintf(buf, n, "%s.b%d", names[a], bits);
	return buf;
}

/* atom.<sem>.<scope>.global.<form> on ptr with operands b (and c for cas). */
static LLVMValueRef atomic_asm(Lower *L, const Op *op, Type et, const char *form, LLVMValueRef ptr, LLVMValueRef b,
                               LLVMValueRef c)
{
	int bits = type_bytes(et) * 8;
	bool f = is_float(et) && bits >= 32 && strncmp(form, "add", 3) == 0; /* f32, f64 add in float registers */
	LLVMTypeRef vt = f ? lw_elem_type(L, et) : LLVMIntTypeInContext(L->c, (unsigned)bits);
	const char *r = f ? (bits == 64 ? "d" : "f") : bits == 64 ? "l" : bits == 16 ? "h" : "r";
	LLVMValueRef args[3] = {ptr, LLVMBuildBitCast(L->b, b, vt, ""), c ? LLVMBuildBitCast(L->b, c, vt, "") : NULL};
	LLVMTypeRef types[3] = {L->gptr, vt, vt};
	char text[128], cons[64];
	snprintf(text, sizeof text, "atom%s%s.global.%s $0, [$1], $2%s;", sem_ptx(op->attr[1]), scope_ptx(op->attr[2]), form,
	         c ? ", $3" : "");
	snprintf(cons, sizeof cons, "=%s,l,%s%s%s,~{memory}", r, r, c ? "," : "", c ? r : "");
	LLVMTypeRef ft = LLVMFunctionType(vt, types, c ? 3 : 2, 0);
	LLVMValueRef a = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	LLVMValueRef old = LLVMBuildCall2(L->b, ft, a, args, c ? 3 : 2, "");
	return LLVMBuildBitCast(L->b, old, lw_elem_type(L, et), "");
}

void lower_atomic(Lower *L, const Op *op)
{
	const Value *ptr = op->operands[0];
	Type et = type_pointee(type_elem(ptr->type));
	int n = ept(L, ptr);
	bool cas = op->code == OP_ATOMIC_CAS;
	const Value *mask = !cas && (op->attr[3] & MEMF_MASK) ? op->operands[2] : NULL;
	Tile res = lw_tile_new(L, n);
	static const LLVMAtomicRMWBinOp int_ops[] = {LLVMAtomicRMWBinOpAdd, LLVMAtomicRMWBinOpMax, LLVMAtomicRMWBinOpMin,
	                                             LLVMAtomicRMWBinOpAnd, LLVMAtomicRMWBinOpOr, LLVMAtomicRMWBinOpXor,
	                                             LLVMAtomicRMWBinOpXchg};
	LLVMAtomicOrdering ord = op->attr[1] == SEM_RELAXED ? LLVMAtomicOrderingMonotonic
	                         : op->attr[1] == SEM_ACQUIRE ? LLVMAtomicOrderingAcquire
	                         : op->attr[1] == SEM_RELEASE ? LLVMAtomicOrderingRelease
	                                                      : LLVMAtomicOrderingAcquireRelease;
	bool replicated = ptr->type.rank && (lw_repl_mask(lw_lin_of(L, ptr)) & (unsigned)(L->T - 1));
	for (int k = 0; k < n && !L->failed; k++) {
		LLVMValueRef pred = mask ? el(L, mask, k) : NULL;
		if (replicated || !ptr->type.rank) { /* each element once: its owner (thread 0 for a scalar) */
			LLVMValueRef own = owner_of(L, lw_lin_of(L, ptr));
			pred = pred ? LLVMBuildAnd(L->b, pred, own, "") : own;
		}
		LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b), doit = NULL, done = NULL;
		if (pred) {
			doit = LLVMAppendBasicBlockInContext(L->c, L->fn, "atom");
			done = LLVMAppendBasicBlockInContext(L->c, L->fn, "atom.done");
			LLVMBuildCondBr(L->b, pred, doit, done);
			LLVMPositionBuilderAtEnd(L->b, doit);
		}
		LLVMValueRef r;
		char buf[32];
		const char *form = atomic_form(L, op, et, buf, sizeof buf);
		bool rel = op->attr[1] == SEM_RELEASE || op->attr[1] == SEM_ACQ_REL;
		bool acq = op->attr[1] == SEM_ACQUIRE || op->attr[1] == SEM_ACQ_REL;
		if (form) {
			r = atomic_asm(L, op, et, form, el(L, ptr, k), el(L, op->operands[1], k),
			               cas ? el(L, op->operands[2], k) : NULL);
		} else if (cas) {
			if (rel)
				atomic_fence(L, op->attr[2]);
			r = LLVMBuildAtomicCmpXchg(L->b, el(L, ptr, k), el(L, op->operands[1], k), el(L, op->operands[2], k), ord,
			                           LLVMAtomicOrderingMonotonic, 0);
			r = LLVMBuildExtractValue(L->b, r, 0, "");
			if (acq)
				atomic_fence(L, op->attr[2]);
		} else {
			if (rel)
				atomic_fence(L, op->attr[2]);
			LLVMAtomicRMWBinOp bop = int_ops[op->attr[0]];
			if (is_float(et))
				bop = op->attr[0] == ATOM_ADD ? LLVMAtomicRMWBinOpFAdd : op->attr[0] == ATOM_MAX ? LLVMAtomicRMWBinOpFMax
				    : op->attr[0] == ATOM_MIN ? LLVMAtomicRMWBinOpFMin : LLVMAtomicRMWBinOpXchg;
			else if (!is_signed(et) && (op->attr[0] == ATOM_MAX || op->attr[0] == ATOM_MIN))
				bop = op->attr[0] == ATOM_MAX ? LLVMAtomicRMWBinOpUMax : LLVMAtomicRMWBinOpUMin;
			r = LLVMBuildAtomicRMW(L->b, bop, el(L, ptr, k), el(L, op->operands[1], k), ord, 0);
			if (acq)
				atomic_fence(L, op->attr[2]);
		}
		if (pred) {
			LLVMBuildBr(L->b, done);
			LLVMPositionBuilderAtEnd(L->b, done);
			LLVMValueRef phi = LLVMBuildPhi(L->b, LLVMTypeOf(r), "");
			LLVMValueRef und = LLVMGetUndef(LLVMTypeOf(r));
			LLVMAddIncoming(phi, &r, &doit, 1);
			LLVMAddIncoming(phi, &und, &pre, 1);
			r = phi;
		}
		res.e[k] = r;
	}
	if (!ptr->type.rank || replicated) {
		/* only owners hold the old values: share them through shared memory */
		Type rt = op->results[0]->type;
		if (!rt.rank) {
			int off = lw_smem_take(L, 8);
			LLVMBasicBlockRef done = lw_begin_if(L, lw_tid_bits_zero(L, ~0u), "t0");
			LLVMBuildStore(L->b, lw_to_mem(L, rt, res.e[0]), lw_smem_at(L, lw_mem_type(L, rt), off, ci32(L, 0)));
			lw_end_if(L, done);
			lw_smem_sync(L, off, 8);
			res.e[0] = lw_smem_load(L, rt, off, ci32(L, 0));
		} else {
			int bytes = numel(rt) * type_bytes(rt);
			int off = lw_smem_take(L, bytes);
			lw_smem_store_block(L, op->results[0], &res, off);
			lw_smem_sync(L, off, bytes);
			for (int k = 0; k < n; k++)
				res.e[k] = lw_smem_load(L, rt, off, lw_index_of(L, lw_lin_of(L, op->results[0]), k));
		}
	}
	L->vals[op->results[0]->id] = res;
}
