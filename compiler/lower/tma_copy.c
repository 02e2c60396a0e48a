/* tma_copy.c: a loop's dot tiles copied with TMA (sm_90a): the tensor maps as
 * kernel parameters, and the copies, mbarriers and waits of the tiles that
 * async_copy.c would otherwise copy with cp.async.
 *
 * The runtime passes tensor map i (f->tmaps[i], gpu/tma_plan.c) after the
 * kernel's own parameters, by value in the parameter space (.param .align
 * 64 .b8 [128]), which the copy reads through its generic address
 * (grid_constant, so no local copy is made).
 *
 * A tile a loop carries through its n_stages buffers gets one mbarrier a
 * buffer (8 bytes after the buffers), initialized before the loop with an
 * arrival count of 1. Filling buffer b: thread 0 arrives on barrier b,
 * expecting the tile's bytes, and issues one cp.async.bulk.tensor a
 * wgmma atom (box rows x row_bytes, swizzled as wgmma reads it), which
 * completes those bytes on the barrier. Each fill of buffer b completes one
 * phase of barrier b, so the parity a wait needs is the number of fills of
 * b before this one, mod 2: every thread keeps those bits (one a buffer, in
 * an i32 that mem2reg keeps in a register; control flow is uniform) and
 * the tile's value is its buffer number with that parity in bit 16. The
 * conversion that reads the tile waits for the parity (every thread), then
 * the barrier that also guards the buffers' reuse (async_copy.c). At the loop's
 * exit thread 0 waits for the fills no iteration read (the tiles ahead),
 * so no copy is in flight when the buffers' bytes are used again, and
 * invalidates the barriers.
 *
 * Warp specialization (warp_spec.c) splits the fills from the waits: the
 * producer warpgroup fills, the consumers wait and give the buffers back.
 * Each buffer then has a second mbarrier, "empty", on which each consumer
 * warpgroup arrives once it has read the buffer; the producer waits for
 * the empty phase of the fill before (parity of this fill xor 1: a fresh
 * barrier passes that wait at once) before it fills the buffer again. Both
 * sides keep their own fill parities; the consumers also count the fills
 * and the iterations of the loop's present run. A dot gives back what its
 * wgmma wait completed (lw_tma_ws_release): the previous iteration's
 * buffer when its own products stay in flight (after the first
 * iteration), else its own. Fills of a run go round the buffers from 0, so
 * fill j is in buffer j mod n_stages. At the loop's exit the consumers
 * wait for the fills nobody read and give back what is left. The buffers
 * and barriers are the kernel's (lw_tma_ws_init): the producer may start
 * the loop's next run while the consumers finish this one. */
#include "lower/lower_int.h"

#include <string.h>

enum { STAGE_PARITY_SHIFT = 16 };

static bool has_tma_store(const Region *r)
{
	for (const Op *op = r->first; op; op = op->next) {
		if ((op->code == OP_STORE && (op->attr[0] & MEMF_TMA)) || (op->code == OP_ATOMIC_RMW && (op->attr[3] & MEMF_TMA)))
			return true;
		for (int i = 0; i < op->n_regions; i++)
			if (has_tma_store(&op->regions[i]))
				return true;
	}
	return false;
}

void lw_tma_params(Lower *L, int first_param)
{
	const IrFunc *f = L->f;
	if (!f->n_tmaps)
		return;
	L->tma_stores = has_tma_store(&f->body);
	unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
	unsigned align = LLVMGetEnumAttributeKindForName("align", 5);
	LLVMMetadataRef idx[TMA_MAX_MAPS];
	for (int i = 0; i < f->n_tmaps; i++) {
		unsigned at = (unsigned)(first_param + i) + 1; /* attribute index: parameters from 1 */
		LLVMAddAttributeAtIndex(L->fn, at, LLVMCreateTypeAttribute(L->c, byval, LLVMArrayType2(L->i8, 128)));
		LLVMAddAttributeAtIndex(L->fn, at, LLVMCreateEnumAttribute(L->c, align, 64));
		L->tmap[i] = LLVMGetParam(L->fn, (unsigned)(first_param + i));
		idx[i] = LLVMValueAsMetadata(ci32(L, first_param + i + 1));
	}
	/* read in place: the copies take the parameter's address */
	LLVMValueRef md[3] = {L->fn, LLVMMDStringInContext(L->c, "grid_constant", 13),
	                      LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, idx, (size_t)f->n_tmaps))};
	LLVMAddNamedMetadataOperand(L->m, "nvvm.annotations", LLVMMDNodeInContext(L->c, md, 3));
}

/* Whether loop tile a (its loads and conversion known) can come by TMA:
 * every load of it reads through one map, into a wgmma scratch in that
 * map's layout (the copy's swizzle): the tile's rows of atoms along its
 * last dimension, which is the scratch's contiguous one (wgmma_fast 1), or,
 * where the tile is transposed on the way (attention's K^T), the
 * transposed tile's first (wgmma_fast 0: K-major, the same bytes). */
bool lw_tma_tile(Lower *L, AsyncTile *a)
{
	const Op *lds[3] = {a->first, a->ahead, a->first2};
	int map = -1;
	for (int i = 0; i < 3; i++) {
		if (!lds[i])
			continue;
		if (!(lds[i]->attr[0] & MEMF_TMA) || (map >= 0 && lds[i]->attr[4] != map))
			return false;
		map = (int)lds[i]->attr[4];
	}
	if (map < 0 || map >= L->f->n_tmaps)
		return false;
	const TmaMap *m = &L->f->tmaps[map];
	const Encoding *s = a->convert->scratch;
	Type t = a->arg->type;
	if (!s->wgmma || s->wgmma_fast != (a->trans ? 0 : 1) || s->wgmma != m->row_bytes || t.rank != 2 ||
	    (a->trans && (a->trans->attr[0] != 1 || a->trans->attr[1] != 0)) || t.shape[0] != m->box[0] ||
	    t.shape[1] % m->box[1] || type_bytes(type_elem(t)) * m->box[1] != m->row_bytes)
		return false;
	a->tma = map + 1;
	return true;
}

/* The shared address of barrier `buf` (an i32) of tile a. */
static LLVMValueRef bar_addr(Lower *L, const AsyncTile *a, LLVMValueRef buf)
{
	return lw_smem_addr32(L, a->bars, LLVMBuildMul(L->b, buf, ci32(L, 8), ""));
}

/* The same, of the barrier that says buffer `buf` is empty (warp
 * specialization), after the n_stages full ones. */
static LLVMValueRef empty_addr(Lower *L, const AsyncTile *a, LLVMValueRef buf)
{
	return lw_smem_addr32(L, a->bars + 8 * a->n_stages, LLVMBuildMul(L->b, buf, ci32(L, 8), ""));
}

/* The thread that issues: thread 0, or the producer (one thread). */
static LLVMValueRef is_thread0(Lower *L)
{
	if (L->ws == WS_PRODUCER)
		return LLVMConstInt(L->i1, 1, 0);
	return LLVMBuildICmp(L->b, LLVMIntEQ, L->tid, ci32(L, 0), "");
}

/* A consumer warpgroup's first thread (it gives buffers back for its group). */
static LLVMValueRef is_group_leader(Lower *L)
{
	return LLVMBuildICmp(L->b, LLVMIntEQ, LLVMBuildAnd(L->b, L->tid, ci32(L, 127), ""), ci32(L, 0), "");
}

static void wait_parity(Lower *L, LLVMValueRef bar, LLVMValueRef parity);

/* Before the loop, where its first tile is copied: the buffers and their
 * barriers (pinned), each barrier set up for one arrival, the fill parities
 * cleared. Every thread fences its earlier writes of these bytes from the
 * copies (another proxy) before the barrier that shows the set-up to all. */
void lw_tma_init(Lower *L, AsyncTile *a)
{
	if (L->ws) { /* set up for the whole kernel (lw_tma_ws_init): a new run of the loop */
		LLVMBuildStore(L->b, ci32(L, 0), a->count);
		LLVMBuildStore(L->b, ci32(L, 0), a->reads);
		return;
	}
	a->offset = lw_smem_pin_stages(L, a->n_stages * a->bytes + 8 * a->n_stages, 1024);
	a->bars = a->offset + a->n_stages * a->bytes;
	if (!a->fills) {
		LLVMBuilderRef pro = L->pro;
		a->fills = LLVMBuildAlloca(pro, L->i32, "tma.fills");
	}
	LLVMBuildStore(L->b, ci32(L, 0), a->fills);
	LLVMBasicBlockRef done = lw_begin_if(L, is_thread0(L), "tma.init");
	LLVMTypeRef ty[2] = {L->i32, L->i32};
	for (int s = 0; s < a->n_stages; s++) {
		LLVMValueRef args[2] = {bar_addr(L, a, ci32(L, s)), ci32(L, 1)};
		lw_async_asm(L, "mbarrier.init.shared.b64 [$0], $1;", args, ty, 2, "r,r");
	}
	lw_async_asm(L, "fence.mbarrier_init.release.cluster;", NULL, NULL, 0, "");
	lw_end_if(L, done);
	lw_async_asm(L, "fence.proxy.async.shared::cta;", NULL, NULL, 0, "");
	lw_smem_barrier(L);
}

void lw_tma_ws_init(Lower *L)
{
	for (int i = 0; i < L->n_async; i++) {
		AsyncTile *a = &L->async[i];
		a->offset = lw_smem_pin_aligned(L, a->n_stages * a->bytes + 16 * a->n_stages, 1024);
		a->bars = a->offset + a->n_stages * a->bytes;
		a->fills = LLVMBuildAlloca(L->pro, L->i32, "tma.fills");
		a->count = LLVMBuildAlloca(L->pro, L->i32, "tma.count");
		a->reads = LLVMBuildAlloca(L->pro, L->i32, "tma.reads");
		LLVMBuildStore(L->b, ci32(L, 0), a->fills);
	}
	LLVMBasicBlockRef done = lw_begin_if(L, is_thread0(L), "tma.init");
	LLVMTypeRef ty[2] = {L->i32, L->i32};
	for (int i = 0; i < L->n_async; i++) {
		const AsyncTile *a = &L->async[i];
		for (int s = 0; s < a->n_stages; s++) {
			LLVMValueRef full[2] = {bar_addr(L, a, ci32(L, s)), ci32(L, 1)};
			LLVMValueRef empty[2] = {empty_addr(L, a, ci32(L, s)), ci32(L, L->T / 128)};
			lw_async_asm(L, "mbarrier.init.shared.b64 [$0], $1;", full, ty, 2, "r,r");
			lw_async_asm(L, "mbarrier.init.shared.b64 [$0], $1;", empty, ty, 2, "r,r");
		}
	}
	lw_async_asm(L, "fence.mbarrier_init.release.cluster;", NULL, NULL, 0, "");
	lw_end_if(L, done);
	lw_async_asm(L, "fence.proxy.async.shared::cta;", NULL, NULL, 0, "");
}

/* An i64 offset as a copy's 32-bit coordinate, clamped: a box that starts
 * past 2^31 is outside every tensor the map can describe either way. */
static LLVMValueRef coord(Lower *L, LLVMValueRef v)
{
	LLVMTypeRef t = LLVMTypeOf(v);
	if (t == L->i32)
		return v;
	if (LLVMGetIntTypeWidth(t) < 32)
		return LLVMBuildSExt(L->b, v, L->i32, "");
	LLVMValueRef hi = LLVMConstInt(t, INT32_MAX, 1), lo = LLVMConstInt(t, (unsigned long long)(long long)INT32_MIN, 1);
	v = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntSGT, v, hi, ""), hi, v, "");
	v = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntSLT, v, lo, ""), lo, v, "");
	return LLVMBuildTrunc(L->b, v, L->i32, "");
}

/* Thread 0 copies the box at (row, col) into buffer buf of tile a; the
 * producer's first thread, once the consumers gave the buffer back from
 * the fill before (`parity`: this fill's). */
static void issue(Lower *L, const AsyncTile *a, LLVMValueRef buf, LLVMValueRef row, LLVMValueRef col,
                  LLVMValueRef parity)
{
	const TmaMap *m = &L->f->tmaps[a->tma - 1];
	Type t = a->arg->type;
	int eb = type_bytes(type_elem(t)), atoms = t.shape[1] / m->box[1];
	int atom_bytes = m->box[0] * m->row_bytes;
	LLVMValueRef map = LLVMBuildPtrToInt(L->b, L->tmap[a->tma - 1], L->i64, "");
	LLVMValueRef base = LLVMBuildMul(L->b, buf, ci32(L, a->bytes), "");
	LLVMBasicBlockRef done = lw_begin_if(L, is_thread0(L), "tma.fill");
	if (L->ws == WS_PRODUCER)
		wait_parity(L, empty_addr(L, a, buf), LLVMBuildXor(L->b, parity, ci32(L, 1), ""));
	LLVMValueRef bar = bar_addr(L, a, buf);
	LLVMValueRef ex[2] = {bar, ci32(L, numel(t) * eb)};
	LLVMTypeRef ext[2] = {L->i32, L->i32};
	lw_async_asm(L, "mbarrier.arrive.expect_tx.shared.b64 _, [$0], $1;", ex, ext, 2, "r,r");
	for (int k = 0; k < atoms; k++) {
		LLVMValueRef dst = lw_smem_addr32(L, a->offset + k * atom_bytes, base);
		LLVMValueRef x = k ? LLVMBuildAdd(L->b, col, ci32(L, k * m->box[1]), "") : col;
		LLVMValueRef args[5] = {dst, map, x, row, bar};
		LLVMTypeRef tys[5] = {L->i32, L->i64, L->i32, L->i32, L->i32};
		lw_async_asm(L,
		             "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		             " [$0], [$1, {$2, $3}], [$4];",
		             args, tys, 5, "r,l,r,r,r");
	}
	lw_end_if(L, done);
}

/* Fills buffer `buf` (an i32) of tile a with load ld's box: its value, the
 * buffer with the parity of this fill. A tile ahead (in the loop's body)
 * is copied after the barrier of the body's first conversion (lw_tma_flush):
 * the buffer it overwrites was last read by the dot two iterations back,
 * which every warpgroup has waited for before that barrier (not before
 * the one of the iteration before). */
LLVMValueRef lw_tma_fill(Lower *L, AsyncTile *a, const Op *ld, LLVMValueRef buf)
{
	LLVMValueRef bit = LLVMBuildShl(L->b, ci32(L, 1), buf, "");
	LLVMValueRef fills = LLVMBuildLoad2(L->b, L->i32, a->fills, "");
	LLVMValueRef parity = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, fills, buf, ""), ci32(L, 1), "");
	LLVMBuildStore(L->b, LLVMBuildXor(L->b, fills, bit, ""), a->fills);
	if (L->ws == WS_CONSUMER) { /* the producer fills it: counted only */
		LLVMValueRef n = LLVMBuildLoad2(L->b, L->i32, a->count, "");
		LLVMBuildStore(L->b, LLVMBuildAdd(L->b, n, ci32(L, 1), ""), a->count);
		return LLVMBuildOr(L->b, buf, LLVMBuildShl(L->b, parity, ci32(L, STAGE_PARITY_SHIFT), ""), "");
	}
	LLVMValueRef row = coord(L, el(L, ld->operands[3], 0)), col = coord(L, el(L, ld->operands[4], 0));
	if (L->ws == WS_PRODUCER || ld != a->ahead)
		issue(L, a, buf, row, col, parity);
	else if (L->n_tma_pending < (int)(sizeof L->tma_pending / sizeof L->tma_pending[0]))
		L->tma_pending[L->n_tma_pending++] = (TmaFill){(int)(a - L->async), buf, row, col}; /* (L->async may move) */
	else
		lw_fail(L, ld->loc, "internal error: %s", "more TMA copies waiting for a barrier than the lowering keeps");
	L->async_synced = false; /* a conversion of a tile of this loop waits again */
	return LLVMBuildOr(L->b, buf, LLVMBuildShl(L->b, parity, ci32(L, STAGE_PARITY_SHIFT), ""), "");
}

void lw_tma_flush(Lower *L, const Op *loop)
{
	int kept = 0;
	for (int i = 0; i < L->n_tma_pending && !L->failed; i++) {
		TmaFill f = L->tma_pending[i];
		if (L->async[f.tile].loop == loop)
			issue(L, &L->async[f.tile], f.buf, f.row, f.col, NULL);
		else
			L->tma_pending[kept++] = f; /* an enclosing loop's: after its own barrier */
	}
	L->n_tma_pending = kept;
}

LLVMValueRef lw_tma_buffer(Lower *L, LLVMValueRef stage)
{
	return LLVMBuildAnd(L->b, stage, ci32(L, (1 << STAGE_PARITY_SHIFT) - 1), "");
}

/* Until the fill that made `stage` (buffer and parity) is complete. A wait
 * of more than 10 s (a fill takes microseconds) can only be a fault of the
 * code: it traps, so that the launch fails (CUDA_ERROR_LAUNCH_FAILED) rather
 * than hang the GPU. One asm statement (its labels made unique by LLVM's
 * ${:uid}): the spin adds no block around the wgmma results in flight.
 * The clock is read only once a first try finds the phase incomplete. */
static void wait_parity(Lower *L, LLVMValueRef bar, LLVMValueRef parity)
{
	const char *text = "{\n"
	                   ".reg .pred p;\n"
	                   ".reg .u64 t0, t1;\n"
	                   "mbarrier.try_wait.parity.shared.b64 p, [$0], $1;\n"
	                   "@p bra tma_ready_${:uid};\n"
	                   "mov.u64 t0, %globaltimer;\n"
	                   "tma_wait_${:uid}:\n"
	                   "mbarrier.try_wait.parity.shared.b64 p, [$0], $1;\n"
	                   "@p bra tma_ready_${:uid};\n"
	                   "mov.u64 t1, %globaltimer;\n"
	                   "sub.u64 t1, t1, t0;\n"
	                   "setp.gt.u64 p, t1, 10000000000;\n"
	                   "@p trap;\n"
	                   "bra tma_wait_${:uid};\n"
	                   "tma_ready_${:uid}:\n"
	                   "}";
	LLVMValueRef args[2] = {bar, parity};
	LLVMTypeRef ty[2] = {L->i32, L->i32};
	lw_async_asm(L, text, args, ty, 2, "r,r");
}

static void wait_stage(Lower *L, const AsyncTile *a, LLVMValueRef stage)
{
	wait_parity(L, bar_addr(L, a, lw_tma_buffer(L, stage)), LLVMBuildLShr(L->b, stage, ci32(L, STAGE_PARITY_SHIFT), ""));
}

/* Every thread: the fills the tiles of loop `loop` are in now are complete. */
void lw_tma_wait(Lower *L, const Op *loop)
{
	for (int i = 0; i < L->n_async && !L->failed; i++) {
		AsyncTile *a = &L->async[i];
		if (a->loop != loop || !a->tma)
			continue;
		wait_stage(L, a, a->stage);
		if (L->ws == WS_CONSUMER) /* an iteration that reads a fill */
			LLVMBuildStore(L->b, LLVMBuildAdd(L->b, LLVMBuildLoad2(L->b, L->i32, a->reads, ""), ci32(L, 1), ""),
			               a->reads);
	}
}

static void give_back(Lower *L, const AsyncTile *a, LLVMValueRef buf)
{
	LLVMValueRef bar = empty_addr(L, a, buf);
	LLVMTypeRef ty = L->i32;
	lw_async_asm(L, "mbarrier.arrive.shared.b64 _, [$0];", &bar, &ty, 1, "r");
}

void lw_tma_ws_release(Lower *L, const Op *op, bool in_flight)
{
	for (int i = 0; i < 2 && !L->failed; i++) {
		const LazyFrags *z = L->lazy[op->operands[i]->id];
		AsyncTile *a = z && z->stages && z->convert ? lw_async_of(L, NULL, z->convert->operands[0]) : NULL;
		if (!a || !a->tma)
			continue;
		a->given_back = in_flight ? WS_PREVIOUS : WS_OWN;
		LLVMValueRef buf = lw_tma_buffer(L, a->stage), cond = is_group_leader(L);
		if (in_flight) { /* the previous fill of the run: the buffer before, round */
			buf = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, buf, ci32(L, 0), ""), ci32(L, a->n_stages - 1),
			                      LLVMBuildSub(L->b, buf, ci32(L, 1), ""), "");
			LLVMValueRef reads = LLVMBuildLoad2(L->b, L->i32, a->reads, "");
			cond = LLVMBuildAnd(L->b, cond, LLVMBuildICmp(L->b, LLVMIntSGE, reads, ci32(L, 2), ""), "");
		}
		LLVMBasicBlockRef done = lw_begin_if(L, cond, "tma.give");
		give_back(L, a, buf);
		lw_end_if(L, done);
	}
}

/* Warp specialization's consumers after the loop (each group's products
 * complete): each group gives back the fills of the run its dots did not,
 * from the last read one (or the first unread) to the last, each once its
 * copy is complete (the newest fill of a buffer has the parity of its next
 * one xor 1). At most n_stages fills: each in a buffer of its own. */
static void ws_drain(Lower *L, AsyncTile *a)
{
	if (!a->given_back) {
		lw_fail(L, a->loop->loc, "internal error: %s", "a warp-specialized TMA tile that no wgmma dot read");
		return;
	}
	LLVMBasicBlockRef done = lw_begin_if(L, is_group_leader(L), "tma.giveall");
	LLVMValueRef n = LLVMBuildLoad2(L->b, L->i32, a->count, "");
	LLVMValueRef reads = LLVMBuildLoad2(L->b, L->i32, a->reads, "");
	LLVMValueRef fills = LLVMBuildLoad2(L->b, L->i32, a->fills, "");
	LLVMValueRef lo = reads;
	if (a->given_back == WS_PREVIOUS) { /* the last read one is still held */
		LLVMValueRef m = LLVMBuildSub(L->b, reads, ci32(L, 1), "");
		lo = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntSGT, m, ci32(L, 0), ""), m, ci32(L, 0), "");
	}
	for (int k = 0; k < a->n_stages && !L->failed; k++) {
		LLVMValueRef j = LLVMBuildAdd(L->b, lo, ci32(L, k), "");
		LLVMBasicBlockRef held = lw_begin_if(L, LLVMBuildICmp(L->b, LLVMIntSLT, j, n, ""), "tma.held");
		LLVMValueRef buf = LLVMBuildURem(L->b, j, ci32(L, a->n_stages), "");
		LLVMValueRef parity = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, fills, buf, ""), ci32(L, 1), "");
		wait_parity(L, bar_addr(L, a, buf), LLVMBuildXor(L->b, parity, ci32(L, 1), ""));
		give_back(L, a, buf);
		lw_end_if(L, held);
	}
	lw_end_if(L, done);
}

/* After loop op: thread 0 waits for the fills no iteration read (the
 * values its results have for each TMA tile), then invalidates the
 * barriers; the caller's barrier follows. */
void lw_tma_drain(Lower *L, const Op *op)
{
	const Region *body = &op->regions[0];
	for (int i = 0; i < L->n_async && !L->failed; i++) {
		AsyncTile *a = &L->async[i];
		if (a->loop != op || !a->tma || a->offset < 0)
			continue;
		if (L->ws) {
			ws_drain(L, a);
			continue;
		}
		LLVMBasicBlockRef done = lw_begin_if(L, is_thread0(L), "tma.drain");
		for (int j = 0; j < op->n_results; j++) {
			const Value *arg = body->args[1 + j];
			if (arg == a->arg || (a->arg2 && arg == a->arg2))
				wait_stage(L, a, el(L, op->results[j], 0));
		}
		LLVMTypeRef ty = L->i32;
		for (int s = 0; s < a->n_stages; s++) {
			LLVMValueRef bar = bar_addr(L, a, ci32(L, s));
			lw_async_asm(L, "mbarrier.inval.shared.b64 [$0];", &bar, &ty, 1, "r");
		}
		lw_end_if(L, done);
	}
}

/* ---- stores ----
 *
 * A desc_store planned a map (gpu/tma_plan.c) keeps its value in the
 * encoding it has (the layouts pass converts nothing for it): every
 * thread writes its elements into a scratch in the map's layout (wgmma's
 * K-major operand layout, which is the copy's swizzle), fences them from
 * the copy engine's proxy, and after a barrier thread 0 copies the box out
 * (one cp.async.bulk.tensor a row of atoms) and waits until the engine has
 * read the scratch; a barrier later the scratch is free. The engine writes
 * only the elements inside the tensor's bounds, as desc_store does. The
 * writes themselves complete on their own: the next TMA store waits for
 * them first (stores stay in program order), and debug_barrier() waits for
 * them (lw_tma_store_fence) so that accesses after it see them.
 * Warp-specialized consumers keep the loops' buffers for the whole
 * kernel, so a box of more than two atoms goes out an atom at a time
 * through two scratches of one atom each: the threads write atom k while
 * the engine reads atom k - 1, and thread 0 waits until it has (before
 * the barrier after which atom k is copied and atom k + 1 written into
 * the scratch of k - 1): one barrier an atom.
 *
 * A desc_atomic planned a map (an atomic_rmw marked MEMF_TMA) goes the
 * same way, the copy a reduction into memory (cp.reduce.async.bulk.tensor
 * with its op; the element type is the map's): the engine combines each
 * element inside the bounds, atomically, as the relaxed atomics it
 * replaces do. Its result (the old values) is never read: undefined. */

void lw_tma_store_fence(Lower *L)
{
	if (!L->f->n_tmaps)
		return;
	if (L->tma_stores) { /* the copies' writes complete */
		LLVMBasicBlockRef done = lw_begin_if(L, is_thread0(L), "tma.stored");
		lw_async_asm(L, "cp.async.bulk.wait_group 0;", NULL, NULL, 0, "");
		lw_end_if(L, done);
	}
	/* every thread's global writes ordered with the copies after the
	 * barrier (TMA loads), and the copies' with every thread's accesses */
	lw_async_asm(L, "fence.proxy.async.global;", NULL, NULL, 0, "");
}

/* Before plain stores of what a TMA store would write: the copies of
 * earlier TMA stores written first (as their elements would have been, by
 * the threads that now store them again). */
static void plain_after_copies(Lower *L)
{
	LLVMBasicBlockRef done = lw_begin_if(L, is_thread0(L), "tma.before");
	lw_async_asm(L, "cp.async.bulk.wait_group 0;", NULL, NULL, 0, "");
	lw_async_asm(L, "fence.proxy.async.global;", NULL, NULL, 0, "");
	lw_end_if(L, done);
	lw_smem_barrier(L);
}

static void tma_store_box(Lower *L, const Op *op);

bool lw_tma_store(Lower *L, const Op *op)
{
	const Value *v = op->operands[1];
	if (val(L, v)->n == 1 && ept(L, v) > 1) { /* a uniform value: the plain store takes it in any encoding */
		plain_after_copies(L);
		return false;
	}
	/* A box starting above or left of the tensor goes by the plain store
	 * or atomics (a runtime branch, uniform): on the H200 such copies (an
	 * f16 store at column -16, an f16 reduction at (-5, -9)) stopped the
	 * kernel with an illegal instruction. Boxes past the bottom or right
	 * edge go by the engine, which leaves out what is outside. */
	LLVMValueRef row = coord(L, el(L, op->operands[3], 0)), col = coord(L, el(L, op->operands[4], 0));
	LLVMValueRef in = LLVMBuildAnd(L->b, LLVMBuildICmp(L->b, LLVMIntSGE, row, ci32(L, 0), ""),
	                               LLVMBuildICmp(L->b, LLVMIntSGE, col, ci32(L, 0), ""), "");
	int dirty = L->smem_dirty;
	bool unsynced = L->smem_unsynced;
	LLVMBasicBlockRef plain = lw_begin_if(L, LLVMBuildNot(L->b, in, ""), "tma.plain");
	plain_after_copies(L);
	if (op->code == OP_ATOMIC_RMW)
		lower_atomic(L, op);
	else
		lower_load_store(L, op);
	lw_end_if(L, plain);
	/* the TMA branch starts from the state before the plain one; both end
	 * behind a barrier after their last shared-memory access */
	L->smem_dirty = dirty;
	L->smem_unsynced = unsynced;
	LLVMBasicBlockRef box = lw_begin_if(L, in, "tma.box");
	tma_store_box(L, op);
	lw_end_if(L, box);
	return true;
}

static void tma_store_box(Lower *L, const Op *op)
{
	const Value *v = op->operands[1];
	bool reduce = op->code == OP_ATOMIC_RMW;
	const TmaMap *m = &L->f->tmaps[op->attr[4]];
	Type t = v->type;
	int eb = type_bytes(type_elem(t)), bytes = numel(t) * eb;
	Encoding s;
	if (!wgmma_operand_layout(&s, lw_lin_of(L, v), t, 0, 256) || s.wgmma != m->row_bytes || t.shape[0] != m->box[0] ||
	    t.shape[1] % m->box[1]) {
		lw_fail(L, op->loc, "internal error: a TMA store whose value does not fit its map%s", "");
		return;
	}
	int atoms = t.shape[1] / m->box[1], atom_bytes = m->box[0] * m->row_bytes;
	/* warp-specialized, the loops' buffers stay: the box goes out an atom
	 * at a time through two scratches of an atom each */
	bool by_atoms = L->ws == WS_CONSUMER && atoms > 2 && lw_scratch_parts(L, v, &s, atom_bytes / eb);
	int base = L->smem_base;
	if (L->smem_dirty < 0 || L->smem_dirty > L->smem_base)
		lw_smem_barrier(L);
	int at = lw_smem_pin_aligned(L, by_atoms ? 2 * atom_bytes : bytes, 1024);
	LLVMValueRef row = coord(L, el(L, op->operands[3], 0)), col = coord(L, el(L, op->operands[4], 0));
	LLVMValueRef map = LLVMBuildPtrToInt(L->b, L->tmap[op->attr[4]], L->i64, "");
	for (int k = 0, rounds = by_atoms ? atoms : 1; k < rounds && !L->failed; k++) {
		int from = at + (by_atoms ? k % 2 * atom_bytes : 0);
		if (by_atoms)
			lw_scratch_store_part(L, v, &s, from - k * atom_bytes, s.vec, atom_bytes / eb, k);
		else
			lw_scratch_store(L, v, &s, at, s.vec);
		lw_async_asm(L, "fence.proxy.async.shared::cta;", NULL, NULL, 0, "");
		if (k) { /* the copy of atom k - 1 has read its scratch, which atom k + 1 takes after the barrier */
			LLVMBasicBlockRef read = lw_begin_if(L, is_thread0(L), "tma.read");
			lw_async_asm(L, "cp.async.bulk.wait_group.read 0;", NULL, NULL, 0, "");
			lw_end_if(L, read);
		}
		lw_smem_barrier(L);
		LLVMBasicBlockRef done = lw_begin_if(L, is_thread0(L), "tma.store");
		/* in program order with earlier TMA stores (copies of different
		 * groups are not ordered with each other): theirs written first */
		if (!k)
			lw_async_asm(L, "cp.async.bulk.wait_group 0;", NULL, NULL, 0, "");
		int first = by_atoms ? k : 0, end = by_atoms ? k + 1 : atoms; /* this round's atoms, from `from` on */
		for (int j = first; j < end; j++) {
			LLVMValueRef x = j ? LLVMBuildAdd(L->b, col, ci32(L, j * m->box[1]), "") : col;
			LLVMValueRef src = lw_smem_addr32(L, from + (j - first) * atom_bytes, NULL);
			LLVMValueRef args[4] = {map, x, row, src};
			LLVMTypeRef tys[4] = {L->i64, L->i32, L->i32, L->i32};
			char text[128];
			static const char *const red[] = {"add", "max", "min", "and", "or", "xor"};
			if (reduce)
				snprintf(text, sizeof text,
				         "cp.reduce.async.bulk.tensor.2d.global.shared::cta.%s.tile.bulk_group [$0, {$1, $2}], [$3];",
				         red[op->attr[0]]);
			lw_async_asm(L,
			             reduce ? text : "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [$0, {$1, $2}], [$3];",
			             args, tys, 4, "l,r,r,r");
		}
		lw_async_asm(L, "cp.async.bulk.commit_group;", NULL, NULL, 0, "");
		lw_end_if(L, done);
	}
	LLVMBasicBlockRef done = lw_begin_if(L, is_thread0(L), "tma.read");
	lw_async_asm(L, "cp.async.bulk.wait_group.read 0;", NULL, NULL, 0, "");
	lw_end_if(L, done);
	lw_smem_barrier(L); /* the scratch read: free for what comes next */
	L->smem_base = base;
	if (reduce) { /* the old values nobody reads */
		const Value *res = op->results[0];
		Tile t = lw_tile_new(L, ept(L, res));
		for (int k = 0; k < t.n; k++)
			t.e[k] = LLVMGetUndef(lw_elem_type(L, type_elem(res->type)));
		L->vals[res->id] = t;
	}
}
