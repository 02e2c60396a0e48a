/* pipeline.c: software pipelining of loops that load, through registers.
 *
 * In a `for` whose body writes no memory, a load at the top of the body is
 * moved one iteration ahead: the loop carries the loaded block, the body
 * loads the next iteration's block (its pointers, mask and `other` computed
 * again from the values the body yields and from iv + step) just before it
 * yields, and a copy of the load for the first iteration goes before the
 * loop. So the memory latency of iteration i + 1 runs under the work of
 * iteration i (a matmul's tensor-core steps). A load ahead of the last
 * iteration, or of a loop that runs no iteration, is masked off entirely:
 * it touches no memory. The pass keeps the program's meaning (the
 * interpreter runs its output); it applies where num_stages >= 2 and the
 * step is a positive constant, to loads whose pointers, mask and other come
 * from pure ops.
 *
 * As `pipeline` it is not in the GPU pipeline: measured on the H100 it made
 * matmul 5% slower, layernorm 21% and the W4A16 GEMV 37% (a block the loop
 * carries keeps one layout across the loop boundary, which cost W4A16
 * conversions through shared memory, and the prefetched blocks take
 * registers). `pipeline-dots`, in the GPU pipeline, takes only the tiles of
 * a dot, issues the next ones before the dot (not after it, where nothing
 * is left to hide their latency behind) and leaves tiles whose registers
 * would spill: matmul configs 8 to 13% faster. Copies straight into shared
 * memory (cp.async) would take no registers: the way on. */
#include "gpu/gpu.h"

#include <stdlib.h>
#include <string.h>

/* The axis facts of the values a function had when analyzed (info NULL:
 * none); values made since (ids n and up) have none. */
typedef struct Axes {
	const AxisInfo *info;
	int n;
} Axes;

typedef struct Clone {
	IrFunc *f;
	const Region *body;
	Value *iv;          /* what the induction variable stands for */
	Value **carried;    /* what each loop-carried argument stands for */
	Op *at;             /* clones go before it */
	Value **from, **to; /* memo */
	int n, cap;
	bool failed;
} Clone;

/* Whether a loop's body writes memory, or prints or asserts (a load moved
 * ahead of those could show a fault before them). */
static bool has_effects(const Region *r)
{
	for (const Op *op = r->first; op; op = op->next) {
		if (ir_writes_memory(op) || op->code == OP_PRINT || op->code == OP_ASSERT)
			return true;
		for (int i = 0; i < op->n_regions; i++)
			if (has_effects(&op->regions[i]))
				return true;
	}
	return false;
}

/* Whether v can be computed again from the loop's arguments: pure ops of
 * the body without regions, back to values from outside the loop. */
static bool recomputable(const Region *body, const Value *v, int depth)
{
	if (depth > 64)
		return false;
	if (v->owner == body)
		return true; /* iv or a carried argument */
	const Op *d = v->def;
	if (!d || d->parent != body)
		return true; /* from outside the loop */
	if (!(op_flags(d->code) & OPF_PURE) || d->n_regions || d->n_results != 1 || d->code == OP_DOT ||
	    d->code == OP_PHILOX)
		return false;
	for (int i = 0; i < d->n_operands; i++)
		if (!recomputable(body, d->operands[i], depth + 1))
			return false;
	return true;
}

static Value *clone_value(Clone *c, Value *v)
{
	if (v->owner == c->body) {
		Value *x = v->index == 0 ? c->iv : c->carried[v->index - 1];
		if (!x)
			c->failed = true; /* a carried value that cannot be had there */
		return x ? x : v;
	}
	Op *d = v->def;
	if (!d || d->parent != c->body)
		return v;
	for (int i = 0; i < c->n; i++)
		if (c->from[i] == v)
			return c->to[i];
	Value *ops[8];
	if (d->n_operands > 8) {
		c->failed = true;
		return v;
	}
	for (int i = 0; i < d->n_operands; i++)
		ops[i] = clone_value(c, d->operands[i]);
	Op *n = ir_clone_before(c->f, d, c->at, ops);
	if (!n) {
		c->failed = true;
		return v;
	}
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 32;
		Value **a = realloc(c->from, (size_t)cap * sizeof *a), **b = a ? realloc(c->to, (size_t)cap * sizeof *b) : NULL;
		if (a)
			c->from = a;
		if (!a || !b) {
			c->failed = true;
			return n->results[0];
		}
		c->to = b;
		c->cap = cap;
	}
	c->from[c->n] = v;
	c->to[c->n++] = n->results[0];
	return n->results[0];
}

static Value *scalar_op(IrFunc *f, Op *at, OpCode code, Value *a, Value *b, Type t, int64_t attr0)
{
	Value *ops[2] = {a, b};
	Op *o = ir_insert_before(f, at, code, ops, b ? 2 : 1, &t, 1);
	if (!o)
		return NULL;
	o->attr[0] = attr0;
	return o->results[0];
}

/* The load `ld` of the body, for the iteration whose iv and carried values
 * are given, placed before `at` and masked off unless `live` (an i1). */
static Value *load_for(IrFunc *f, const Region *body, const Op *ld, Value *iv, Value **carried, Op *at, Value *live,
                       bool *failed)
{
	Clone c = {.f = f, .body = body, .iv = iv, .carried = carried, .at = at};
	int flags = (int)ld->attr[0];
	Value *ptr = clone_value(&c, ld->operands[0]);
	Value *mask = flags & MEMF_MASK ? clone_value(&c, ld->operands[1]) : NULL;
	Value *other = flags & MEMF_OTHER ? clone_value(&c, ld->operands[2]) : NULL;
	Value *ops[3 + BLK_MAX_RANK];
	int n_tma = flags & MEMF_TMA ? ld->n_operands - 3 : 0; /* a TMA load's offsets, for that iteration */
	for (int i = 0; i < n_tma; i++)
		ops[3 + i] = clone_value(&c, ld->operands[3 + i]);
	free(c.from);
	free(c.to);
	Type bt = ptr->type;
	bt.ptr = 0;
	bt.scalar = SK_I1;
	Value *live_b = live;
	if (bt.rank) {
		Op *s = ir_insert_before(f, at, OP_SPLAT, &live, 1, &bt, 1);
		live_b = s ? s->results[0] : NULL;
	}
	if (c.failed || !live_b) {
		*failed = true;
		return NULL;
	}
	mask = mask ? scalar_op(f, at, OP_AND, mask, live_b, bt, 0) : live_b;
	ops[0] = ptr;
	ops[1] = mask;
	ops[2] = other;
	Type rt = ld->results[0]->type;
	Op *n = ir_insert_before(f, at, OP_LOAD, ops, other ? 3 + n_tma : 2, &rt, 1);
	if (!mask || !n) {
		*failed = true;
		return NULL;
	}
	memcpy(n->attr, ld->attr, sizeof n->attr);
	n->attr[0] = MEMF_MASK | (other ? MEMF_OTHER : 0) | (flags & MEMF_TMA);
	n->loc = ld->loc;
	return n->results[0];
}

/* Moves one load of loop `op` an iteration ahead; returns the new loop, or
 * NULL when it did not (or failed: *failed). */
static Op *pipeline_one(IrFunc *f, Op *op, Op *ld, bool early, bool *failed)
{
	Region *body = &op->regions[0];
	int nc = op->n_results;
	Value *lb = op->operands[0], *ub = op->operands[1], *step = op->operands[2];
	Type it = lb->type;
	int pred = CMP_LT; /* cmp takes its signedness from the operands' type */
	/* iteration 0, before the loop: live when lb < ub */
	Value **init = malloc((size_t)(nc ? nc : 1) * sizeof *init);
	Value **next = malloc((size_t)(nc ? nc : 1) * sizeof *next);
	if (!init || !next) {
		free(init);
		free(next);
		*failed = true;
		return NULL;
	}
	for (int i = 0; i < nc; i++)
		init[i] = op->operands[3 + i];
	Op *yield = body->last;
	/* where the next iteration's load goes: before the yield, or (early) at
	 * the top of the body, its yielded values computed there again */
	Op *at = early ? body->first : yield;
	Clone here = {.f = f, .body = body, .iv = body->args[0], .carried = body->args + 1, .at = at};
	for (int i = 0; i < nc; i++)
		next[i] = !early ? yield->operands[i]
		          : recomputable(body, yield->operands[i], 0) ? clone_value(&here, yield->operands[i]) : NULL;
	free(here.from);
	free(here.to);
	Type bt = type_scalar(SK_I1);
	Value *live0 = scalar_op(f, op, OP_CMP, lb, ub, bt, pred);
	Value *first = live0 ? load_for(f, body, ld, lb, init, op, live0, failed) : NULL;
	/* iteration i + 1: live when iv + step < ub */
	Value *iv1 = here.failed ? NULL : scalar_op(f, at, OP_ADD, body->args[0], step, it, 0);
	Value *live1 = iv1 ? scalar_op(f, at, OP_CMP, iv1, ub, bt, pred) : NULL;
	Value *ahead = live1 ? load_for(f, body, ld, iv1, next, at, live1, failed) : NULL;
	free(init);
	free(next);
	if (!first || !ahead) {
		*failed = true;
		return NULL;
	}
	/* the loop again, carrying the loaded block */
	Value **ops = malloc((size_t)(op->n_operands + 1) * sizeof *ops);
	Type *rts = malloc((size_t)(nc + 1) * sizeof *rts);
	Value **ys = malloc((size_t)(nc + 1) * sizeof *ys);
	if (!ops || !rts || !ys) {
		free(ops);
		free(rts);
		free(ys);
		*failed = true;
		return NULL;
	}
	memcpy(ops, op->operands, (size_t)op->n_operands * sizeof *ops);
	ops[op->n_operands] = first;
	for (int i = 0; i < nc; i++)
		rts[i] = op->results[i]->type;
	rts[nc] = first->type;
	Op *n = ir_insert_before(f, op, OP_FOR, ops, op->n_operands + 1, rts, nc + 1);
	free(ops);
	free(rts);
	if (!n) {
		free(ys);
		*failed = true;
		return NULL;
	}
	n->loc = op->loc;
	memcpy(n->attr, op->attr, sizeof n->attr);
	ir_move_region(&n->regions[0], body);
	Region *nb = &n->regions[0];
	Value *arg = ir_region_arg(f, nb, first->type);
	Op *oy = nb->last;
	for (int i = 0; i < nc; i++)
		ys[i] = oy->operands[i];
	ys[nc] = ahead;
	Op *ny = ir_insert_before(f, oy, OP_YIELD, ys, nc + 1, NULL, 0);
	free(ys);
	if (!arg || !ny) {
		*failed = true;
		return NULL;
	}
	ir_remove(oy);
	for (int i = 0; i < nc; i++)
		ir_replace_uses(f, op->results[i], n->results[i]);
	ir_replace_uses(f, ld->results[0], arg);
	ir_remove(ld);
	ir_remove(op);
	return n;
}

/* Whether load ld's block goes only into dots of the body (a matmul's
 * tiles: those the GPU back end wants early). */
/* Whether the GPU back end will copy load ld with cp.async: 16 bytes a
 * thread along its most contiguous dimension (then the tile takes no
 * registers while in flight); or with TMA (a tensor map's tile, whatever
 * its mask: the copy takes the bounds from the map). */
static bool async_copyable(const Axes *ax, const Op *ld)
{
	if (ld->attr[0] & MEMF_TMA)
		return true;
	const Value *p = ld->operands[0];
	const Value *mask = ld->attr[0] & MEMF_MASK ? ld->operands[1] : NULL;
	/* a value made after the analysis (a pipelined loop's prologue load,
	 * its pointers recomputed) has no facts: not copied asynchronously */
	if (!ax->info || p->id >= ax->n || (mask && mask->id >= ax->n) || !p->type.rank)
		return false;
	int best = 0;
	for (int d = 1; d < p->type.rank; d++)
		if (ax->info[p->id].contig[d] > ax->info[p->id].contig[best])
			best = d;
	int eb = scalar_bits((ScalarKind)p->type.scalar) / 8;
	return axis_access_width(ax->info, p, mask, best) * eb == 16;
}

static bool feeds_dot(const IrFunc *f, const Axes *ax, const Region *body, const Op *ld)
{
	bool in_shared = async_copyable(ax, ld);
	const Value *v = ld->results[0];
	int seen = 0;
	for (const Op *o = body->first; o; o = o->next)
		for (int i = 0; i < o->n_operands; i++)
			if (o->operands[i] == v) {
				/* a transpose on the way (attention's K^T, the weight
				 * gradient's x^T) costs nothing where the tile goes
				 * through shared memory: the copies land transposed (the
				 * GPU back end: for wgmma; for mma.sync, a 16-bit A,
				 * read with ldmatrix.trans) */
				if (o->code == OP_TRANS && in_shared && v->uses == 1 && o->results[0]->uses == 1) {
					const Value *t = o->results[0];
					const Op *d = o->next;
					while (d && !(d->code == OP_DOT && (d->operands[0] == t || d->operands[1] == t)))
						d = d->next;
					if (!d || d->operands[2] == t)
						return false;
					if (!f->sm_a && !(d->operands[0] == t && scalar_bits((ScalarKind)t->type.scalar) == 16))
						return false;
					seen++;
					continue;
				}
				if (o->code != OP_DOT || i > 1)
					return false;
				/* room for prefetched tiles held in registers (where the back
				 * end cannot copy them to shared memory with cp.async): with an
				 * accumulator of 128 registers a thread or more they spill
				 * (128 x 256 tiles on 8 warps measured 10% slower), so then the
				 * load stays where it is */
				Type a = o->operands[0]->type, b = o->operands[1]->type, c = o->results[0]->type;
				int64_t threads = 32 * (int64_t)f->num_warps;
				int64_t acc = type_numel(c) * (scalar_bits((ScalarKind)c.scalar) / 8) / 4 / threads;
				int64_t tiles = (type_numel(a) + type_numel(b)) * (scalar_bits((ScalarKind)a.scalar) / 8) / 4 / threads;
				if (!in_shared && acc + 2 * tiles > 160)
					return false;
				seen++;
			}
	return seen == v->uses;
}

/* Whether load ld (feeding a dot of the body) goes two iterations ahead:
 * on sm_90a with num_stages >= 4, where the GPU back end copies it with
 * cp.async into stage buffers (no registers held) for a wgmma dot (f16,
 * bf16, fp8, i8 or f32 as tf32 inputs, a 64-row block for each warpgroup): the copies
 * of two iterations stay in flight. (With num_stages 3 it measured slower
 * on the H100: matmul f16 4096^3 at 128 x 256 x 64, 650 TFLOP/s against
 * 714 one ahead, attention the same; the autotuner chooses by num_stages.) */
static bool two_ahead(const IrFunc *f, const Axes *ax, const Region *body, const Op *ld)
{
	if (f->sm != 90 || !f->sm_a || f->num_stages < 4 || f->num_warps % 4 || !async_copyable(ax, ld))
		return false;
	const Value *v = ld->results[0];
	for (const Op *o = body->first; o; o = o->next) {
		if (o->code != OP_DOT)
			continue;
		int which = -1;
		for (int i = 0; i < 2; i++)
			if (o->operands[i] == v || (o->operands[i]->def && o->operands[i]->def->code == OP_TRANS &&
			                            o->operands[i]->def->operands[0] == v))
				which = i;
		if (which < 0)
			continue;
		Type a = o->operands[0]->type, c = o->results[0]->type;
		int ks = a.scalar == SK_F16 || a.scalar == SK_BF16 ? 2 : a.scalar == SK_I8 || a.scalar == SK_F8E4M3 ||
		                                                                   a.scalar == SK_F8E5M2 ? 1 : 0;
		if (a.scalar == SK_F32 && o->attr[0] == DOT_TF32)
			ks = 4; /* tf32 wgmma */
		return ks && !c.ptr && c.shape[0] >= 16 * f->num_warps;
	}
	return false;
}

/* The dot operand slot that use i of op makes of v (through a transpose
 * of its own), or NULL where it is something else. */
static Op *dot_use(const Op *o, int i)
{
	if (o->code == OP_DOT)
		return i < 2 ? (Op *)o : NULL;
	if (o->code != OP_TRANS || o->results[0]->uses != 1)
		return NULL;
	for (const Op *d = o->next; d; d = d->next)
		for (int j = 0; j < d->n_operands; j++)
			if (d->operands[j] == o->results[0])
				return d->code == OP_DOT && j < 2 ? (Op *)d : NULL;
	return NULL;
}

/* A tile of the body that several dots read (attention backward's K: S =
 * Q K^T and dQ += dS K; Q and dO in dK and dV) is loaded once for each, so
 * that each load can go through shared memory by cp.async on its own (a
 * stage buffer per use; the copies are from L2): one load with several
 * uses would stay a plain ld.global in the loop. Returns false out of
 * memory. */
static bool split_dot_loads(IrFunc *f, const Axes *ax, Region *body)
{
	for (Op *ld = body->first; ld; ld = ld->next) {
		if (ld->code != OP_LOAD)
			continue;
		Value *v = ld->results[0];
		if (ld->attr[3] || !v->type.rank || v->uses < 2 || v->uses > 4 || !async_copyable(ax, ld))
			continue;
		Op *users[4];
		int slot[4], n = 0;
		bool ok = true;
		for (Op *o = ld->next; o && ok; o = o->next)
			for (int i = 0; i < o->n_operands && ok; i++)
				if (o->operands[i] == v) {
					ok = n < 4 && dot_use(o, i);
					if (ok)
						users[n] = o, slot[n++] = i;
				}
		if (!ok || n != v->uses)
			continue;
		for (int k = 1; k < n; k++) {
			Op *c = ir_clone_before(f, ld, ld, ld->operands);
			if (!c)
				return false;
			users[k]->operands[slot[k]] = c->results[0];
			c->results[0]->uses++;
			v->uses--;
		}
	}
	return true;
}

static bool pipeline_region(IrFunc *f, Region *r, bool dots_only, const Axes *ax, Diag *diag)
{
	for (Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_regions; i++)
			if (!pipeline_region(f, &op->regions[i], dots_only, ax, diag))
				return false;
		if (op->code != OP_FOR || has_effects(&op->regions[0]))
			continue;
		const Op *sd = op->operands[2]->def;
		if (!sd || sd->code != OP_CONST || sd->ival <= 0 || op->operands[0]->type.ptr)
			continue;
		if (dots_only && f->sm_a && !split_dot_loads(f, ax, &op->regions[0])) {
			diag_plain(diag, DIAG_ERROR, "out of memory pipelining '%s'", f->name);
			return false;
		}
		/* each load at the top of the body whose inputs can be recomputed
		 * (found first: the loads the pass adds are not taken again) */
		enum { MAX_LOADS = 16 };
		Op *loads[MAX_LOADS];
		int nl = 0;
		for (Op *ld = op->regions[0].first; ld && nl < MAX_LOADS; ld = ld->next) {
			bool ok = ld->code == OP_LOAD && !ld->attr[3] && ld->results[0]->type.rank;
			for (int i = 0; ok && i < ld->n_operands; i++)
				ok = recomputable(&op->regions[0], ld->operands[i], 0);
			if (ok && (!dots_only || feeds_dot(f, ax, &op->regions[0], ld)))
				loads[nl++] = ld;
		}
		for (int i = 0; i < nl; i++) {
			bool failed = false;
			bool two = dots_only && two_ahead(f, ax, &op->regions[0], loads[i]);
			Op *n = pipeline_one(f, op, loads[i], dots_only, &failed);
			if (n && two) {
				/* the next iteration's load, moved ahead once more: the
				 * loop carries both tiles, the body loads i + 2 */
				const Value *y = n->regions[0].last->operands[n->n_results - 1];
				Op *n2 = y->def && y->def->code == OP_LOAD ? pipeline_one(f, n, (Op *)y->def, true, &failed) : NULL;
				if (n2)
					n = n2;
			}
			if (failed) {
				diag_plain(diag, DIAG_ERROR, "out of memory pipelining '%s'", f->name);
				return false;
			}
			if (n)
				op = n;
		}
	}
	return true;
}

bool ir_pipeline(IrFunc *f, Diag *diag)
{
	if (f->gpu || f->num_stages < 2)
		return true;
	Axes none = {0};
	return pipeline_region(f, &f->body, false, &none, diag);
}

bool ir_pipeline_dots(IrFunc *f, Diag *diag)
{
	if (f->gpu || f->num_stages < 2)
		return true;
	/* NULL (out of memory): registers only */
	Axes ax = {.info = axis_analyze(f), .n = f->n_values};
	bool ok = pipeline_region(f, &f->body, true, &ax, diag);
	free((AxisInfo *)ax.info);
	return ok;
}
