/* warp_spec.c: warp specialization (the option warp_specialize, sm_90a).
 *
 * A kernel whose loops copy their dot tiles with TMA runs one warpgroup
 * more than num_warps: the producer. It only issues the copies; the
 * num_warps warps of the kernel (the consumers) only wait for them and
 * compute. The producer gives its registers back (setmaxnreg.dec to 40),
 * the consumers take them (setmaxnreg.inc), so that their accumulators
 * have room; the consumers' barriers count them alone (bar.sync 1, T), and
 * their loop has no barrier for the buffers' reuse: each group gives a
 * buffer back on its empty mbarrier (tma_copy.c says how).
 *
 * One thread of the producer warpgroup runs the same program with only
 * what its copies need (the others leave once the registers are given
 * back): the loops around them (their bounds, and the scalars they carry
 * that the copies' coordinates come from) and the scalar ops those are
 * made of.
 * Where any of that is a block, or an op with an effect, or control flow
 * other than a `for`, or the kernel returns early, nothing is split and
 * the kernel compiles as without the option.
 *
 * The buffers of a tile are num_stages, up to 32 (the program itself
 * carries at most two tiles ahead, which takes four): the producer fills
 * each as soon as the consumers give it back, so it runs up to
 * num_stages - 2 K steps ahead of the dots.
 *
 * Example: in examples/matmul_persistent.tile the producer walks the same
 * tiles (program_id, num_programs, tile_coords' integer ops) and K steps,
 * copying the A and B boxes; the consumers run the dots and the stores. */
#include "lower/lower_int.h"

#include <stdio.h>
#include <stdlib.h>

#include <llvm-c/DebugInfo.h>

enum { PRODUCER_REGS = 40, MAX_RING = 32 };

static bool need(Lower *L, const Value *v, int depth);

/* The loop runs in the producer: its bounds and step are needed. */
static bool need_loop(Lower *L, const Op *loop, int depth)
{
	if (!loop || loop->code != OP_FOR)
		return false;
	for (int i = 0; i < 3; i++)
		if (!need(L, loop->operands[i], depth + 1))
			return false;
	return true;
}

/* Marks scalar v, and what it is computed from, as the producer's; false
 * where that takes a block, an op with an effect or a region other than a
 * for loop. */
static bool need(Lower *L, const Value *v, int depth)
{
	if (depth > 256 || v->type.rank)
		return false;
	if (L->ws_need[v->id])
		return true;
	L->ws_need[v->id] = true;
	if (!v->def) {
		const Op *loop = v->owner ? v->owner->parent : NULL;
		if (!loop && v->owner == &L->f->body)
			return true; /* a kernel parameter */
		if (!need_loop(L, loop, depth))
			return false;
		if (v->index == 0)
			return true; /* the induction variable */
		int j = v->index - 1;
		return need(L, loop->operands[3 + j], depth + 1) && need(L, loop->regions[0].last->operands[j], depth + 1);
	}
	const Op *d = v->def;
	if (d->code == OP_FOR)
		return need_loop(L, d, depth) && need(L, d->regions[0].args[1 + v->index], depth + 1);
	if (d->n_regions || !(op_flags(d->code) & OPF_PURE) || d->code == OP_PHILOX)
		return false;
	for (int i = 0; i < d->n_results; i++)
		if (d->results[i]->type.rank)
			return false;
	for (int i = 0; i < d->n_operands; i++)
		if (!need(L, d->operands[i], depth + 1))
			return false;
	return true;
}

static void prescan_all(Lower *L, const Region *r)
{
	lw_async_prescan(L, r);
	for (const Op *op = r->first; op && !L->failed; op = op->next)
		for (int i = 0; i < op->n_regions; i++)
			prescan_all(L, &op->regions[i]);
}

/* A return before the body's last op (consumers leaving early would never
 * give their buffers back). */
static bool returns_early(const Region *r, bool top)
{
	for (const Op *op = r->first; op; op = op->next) {
		if (op->code == OP_RETURN && !(top && !op->next))
			return true;
		for (int i = 0; i < op->n_regions; i++)
			if (returns_early(&op->regions[i], false))
				return true;
	}
	return false;
}

/* The tile op loads by TMA, or NULL. */
static AsyncTile *tma_load(Lower *L, const Op *op)
{
	AsyncTile *a = op->code == OP_LOAD ? lw_async_of(L, op, NULL) : NULL;
	return a && a->tma ? a : NULL;
}

/* Whether op is or holds a copy the producer issues. */
static bool holds_copy(Lower *L, const Op *op)
{
	if (tma_load(L, op))
		return true;
	for (int i = 0; i < op->n_regions; i++)
		for (const Op *o = op->regions[i].first; o; o = o->next)
			if (holds_copy(L, o))
				return true;
	return false;
}

bool lw_ws_plan(Lower *L)
{
	const IrFunc *f = L->f;
	if (!f->warp_specialize || !f->sm_a || f->sm < 90 || !f->n_tmaps || f->num_warps % 4 || f->num_warps > 8 ||
	    returns_early(&f->body, true))
		return false;
	prescan_all(L, &f->body);
	if (L->failed || !L->n_async)
		return false;
	L->ws_need = calloc((size_t)(f->n_values ? f->n_values : 1), sizeof *L->ws_need);
	if (!L->ws_need) {
		L->failed = true;
		return false;
	}
	for (int i = 0; i < L->n_async; i++) {
		const AsyncTile *a = &L->async[i];
		if (!a->tma)
			return false; /* (cp.async tiles stay with the plain pipeline) */
		const Op *lds[3] = {a->first, a->ahead, a->first2};
		for (int k = 0; k < 3; k++) {
			if (!lds[k])
				continue;
			if (!need(L, lds[k]->operands[3], 0) || !need(L, lds[k]->operands[4], 0))
				return false;
			for (const Region *r = lds[k]->parent; r != &f->body; r = r->parent->parent)
				if (!need_loop(L, r->parent, 0))
					return false;
		}
	}
	/* the program carries at most two tiles ahead, but the producer runs
	 * as far ahead as there are buffers: num_stages of them, at most 32
	 * (a tile keeps its buffers' fill parities in the bits of an i32) */
	int ring = f->num_stages < MAX_RING ? f->num_stages : MAX_RING;
	for (int i = 0; i < L->n_async; i++)
		if (L->async[i].n_stages < ring)
			L->async[i].n_stages = ring;
	return true;
}

static void producer_region(Lower *L, const Region *r);

/* A loop of the producer: its induction variable, the tiles' buffers and
 * the scalars it carries that the copies need. */
static void producer_for(Lower *L, const Op *op)
{
	const Region *body = &op->regions[0];
	int nc = op->n_results;
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b);
	LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->c, L->fn, "ws.for");
	LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(L->c, L->fn, "ws.body");
	LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(L->c, L->fn, "ws.end");
	LLVMBuildBr(L->b, head);
	LLVMPositionBuilderAtEnd(L->b, head);
	LLVMValueRef phis[1 + 64] = {0};
	if (nc > 64) {
		lw_fail(L, op->loc, "%s", "a loop carrying more than 64 values");
		return;
	}
	for (int j = 0; j <= nc && !L->failed; j++) {
		const Value *arg = body->args[j];
		AsyncTile *at = j ? lw_async_of(L, NULL, arg) : NULL;
		if (j && !at && !L->ws_need[arg->id])
			continue;
		LLVMValueRef in = el(L, op->operands[j ? 3 + j - 1 : 0], 0);
		phis[j] = LLVMBuildPhi(L->b, at ? L->i32 : lw_elem_type(L, arg->type), "");
		LLVMAddIncoming(phis[j], &in, &pre, 1);
		Tile t = lw_tile_new(L, 1);
		if (L->failed)
			return;
		t.e[0] = phis[j];
		L->vals[arg->id] = t;
		if (at)
			*(arg == at->arg2 ? &at->stage2 : &at->stage) = phis[j];
	}
	LLVMBuildCondBr(L->b, lw_loop_cond(L, op, phis[0]), bb, exit);
	LLVMPositionBuilderAtEnd(L->b, bb);
	producer_region(L, body);
	if (L->failed)
		return;
	const Op *y = body->last;
	LLVMValueRef next[1 + 64];
	next[0] = LLVMBuildAdd(L->b, phis[0], el(L, op->operands[2], 0), "");
	for (int j = 1; j <= nc; j++)
		next[j] = phis[j] ? el(L, y->operands[j - 1], 0) : NULL;
	LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
	for (int j = 0; j <= nc; j++)
		if (phis[j])
			LLVMAddIncoming(phis[j], &next[j], &end, 1);
	LLVMBuildBr(L->b, head);
	LLVMPositionBuilderAtEnd(L->b, exit);
	for (int j = 1; j <= nc; j++)
		if (phis[j])
			L->vals[op->results[j - 1]->id] = *val(L, body->args[j]);
}

/* The producer's part of region r: the copies, the loops that hold them
 * and the scalars they need; everything else is the consumers'. */
static void producer_region(Lower *L, const Region *r)
{
	for (const Op *op = r->first; op && !L->failed; op = op->next) {
		if (L->scope && op->loc.line)
			LLVMSetCurrentDebugLocation2(L->b, LLVMDIBuilderCreateDebugLocation(L->c, op->loc.line, op->loc.col,
			                                                                    L->scope, NULL));
		AsyncTile *tile = tma_load(L, op);
		if (op->code == OP_FOR) {
			if (holds_copy(L, op))
				producer_for(L, op);
		} else if (tile) {
			lw_lower_async_load(L, op, tile);
		} else if (op->code == OP_RETURN) {
			LLVMBuildRetVoid(L->b);
		} else if (op->n_results && !op->n_regions && L->ws_need[op->results[0]->id]) {
			lw_lower_op(L, op);
		}
	}
}

/* Registers a consumer thread may take: what the producer gave back, as
 * setmaxnreg counts them (multiples of 8, at most 240). */
static int consumer_regs(const Lower *L)
{
	int regs = (65536 - PRODUCER_REGS * 128) / L->T / 8 * 8;
	return regs > 240 ? 240 : regs;
}

int lw_ws_launch_regs(const Lower *L)
{
	int fit = 65536 / (L->T + 128) / 8 * 8, take = consumer_regs(L);
	return fit < take ? fit : take;
}

void lw_ws_begin(Lower *L)
{
	lw_tma_ws_init(L);
	lw_smem_barrier(L); /* every thread's: the set-up seen by both sides */
	LLVMBasicBlockRef prod = LLVMAppendBasicBlockInContext(L->c, L->fn, "ws.producer");
	LLVMBasicBlockRef cons = LLVMAppendBasicBlockInContext(L->c, L->fn, "ws.consumers");
	LLVMBuildCondBr(L->b, LLVMBuildICmp(L->b, LLVMIntUGE, L->tid, ci32(L, L->T), ""), prod, cons);
	char text[64];
	LLVMPositionBuilderAtEnd(L->b, prod);
	snprintf(text, sizeof text, "setmaxnreg.dec.sync.aligned.u32 %d;", PRODUCER_REGS);
	lw_async_asm(L, text, NULL, NULL, 0, "");
	/* one thread issues: the warpgroup's others leave, so that its loop
	 * runs without a branch around each copy (and a reconvergence after) */
	LLVMBasicBlockRef issuer = LLVMAppendBasicBlockInContext(L->c, L->fn, "ws.issuer");
	LLVMBasicBlockRef idle = LLVMAppendBasicBlockInContext(L->c, L->fn, "ws.idle");
	LLVMBuildCondBr(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, L->tid, ci32(L, L->T), ""), issuer, idle);
	LLVMPositionBuilderAtEnd(L->b, idle);
	LLVMBuildRetVoid(L->b);
	LLVMPositionBuilderAtEnd(L->b, issuer);
	L->ws = WS_PRODUCER;
	producer_region(L, &L->f->body);
	if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->b)))
		LLVMBuildRetVoid(L->b);
	LLVMPositionBuilderAtEnd(L->b, cons);
	snprintf(text, sizeof text, "setmaxnreg.inc.sync.aligned.u32 %d;", consumer_regs(L));
	lw_async_asm(L, text, NULL, NULL, 0, "");
	L->ws = WS_CONSUMER;
	lw_smem_unknown(L);
}
