/* async_copy.c: the dot tiles loops carry through shared memory, copied
 * with cp.async (or, tma_copy.c, with TMA): which tiles, their stage
 * buffers, the copies and their commit groups. */
#include "lower/lower_int.h"

#include <stdlib.h>
#include <string.h>

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
	int w = lw_access_width(L, ptr, flags & MEMF_MASK ? ld->operands[1] : NULL);
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
				if (conv && !(conv->scratch && (conv->scratch->wgmma || conv->scratch->ldmatrix == 4)))
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

/* Before a conversion reads tile a: this iteration's copies are done (the
 * next ones may fly on), and every thread's are visible; wgmma: the dot
 * reads the buffer through the async proxy. */
void lw_async_wait(Lower *L, const AsyncTile *a, bool wgmma)
{
	lw_async_commit(L);
	if (!L->async_synced) {
		bool cp = false; /* a tile of this loop copied with cp.async */
		for (int i = 0; i < L->n_async; i++)
			cp |= L->async[i].loop == a->loop && !L->async[i].tma;
		/* two ahead: this iteration's tiles were committed two groups back */
		if (cp)
			lw_async_asm(L, a->arg2 ? "cp.async.wait_group 2;" : "cp.async.wait_group 1;", NULL, NULL, 0, "");
		/* wgmma reads through the async proxy: what threads stored in
		 * shared memory (these copies, and operands kept there, as
		 * attention's Q) is fenced from it before the barrier */
		if (wgmma)
			lw_async_asm(L, "fence.proxy.async.shared::cta;", NULL, NULL, 0, "");
		lw_tma_wait(L, a->loop); /* the TMA tiles' barriers */
		/* (with TMA too: the buffer the next fill overwrites is read by no one past it;
		 * warp-specialized consumers give it back group by group instead) */
		if (L->ws != WS_CONSUMER || L->smem_unsynced)
			lw_smem_barrier(L);
		lw_tma_flush(L, a->loop);
		L->async_synced = true;
	}
}

/* A first or ahead load of a carried tile: the copies, and the buffer's
 * number as its value. */
void lw_lower_async_load(Lower *L, const Op *op, AsyncTile *a)
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
		a->offset = lw_smem_pin_stages(L, a->n_stages * a->bytes, a->convert->scratch->wgmma ? 1024 : 1);
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
