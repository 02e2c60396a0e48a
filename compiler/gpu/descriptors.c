/* descriptors.c: the expand-descriptors pass, first of the GPU pipeline.
 *
 * Each desc_load and desc_store of a tensor descriptor becomes the ops a
 * hand-written kernel would use: per dimension d of the block B,
 *
 *   idx_d  = o_d + arange(0, B_d)               (in the index type, i32 or i64)
 *   off_d  = idx_d * s_d                        (idx_d itself when s_d is the constant 1)
 *   in_d   = (idx_d >= 0) & (idx_d < shape_d)
 *
 * each expanded to rank r (size 1 but along d) and broadcast to B; the sum
 * of the off_d is added to the base, the and of the in_d is the mask, and
 * the load takes 0 where the mask is off (a masked store writes nothing
 * there). So the rest of the back end (axis analysis, coalescing, cp.async
 * pipelining, mma operands) sees an ordinary load or store: with the last
 * stride the constant 1 (a literal, a const, or an argument the JIT found
 * equal to 1) the last dimension's pointers are consecutive and its masks
 * constant over aligned runs, and the accesses are 16 bytes wide.
 *
 * The other desc ops the same way: desc_gather and desc_scatter take
 * idx_0 = their block of rows (no arange) and become a load and a store;
 * a load with NaN padding takes NaN where the mask is off; desc_atomic
 * becomes a masked relaxed atomic_rmw (gpu scope) whose result nobody uses.
 *
 * TMA: on sm_90a with f->tma, a desc op that tma_plan.c planned a tensor map
 * for becomes a load, store or atomic_rmw flagged MEMF_TMA that keeps its
 * offsets as operands (the copy's coordinates) beside the pointers and mask
 * every other reader uses; the lowering may copy its tile with
 * cp.async.bulk.tensor (cp.reduce.async.bulk.tensor for the atomic). */
#include "gpu/gpu.h"

#include <math.h>

typedef struct Expand {
	IrFunc *f;
	Op *at;     /* new ops go before it */
	bool failed;
} Expand;

static Value *emit(Expand *e, OpCode code, Type t, Value *a, Value *b)
{
	if (e->failed)
		return NULL;
	Value *ops[2] = {a, b};
	Op *op = ir_insert_before(e->f, e->at, code, ops, (a != NULL) + (b != NULL), &t, 1);
	if (!op) {
		e->failed = true;
		return NULL;
	}
	return op->results[0];
}

static Value *const_int(Expand *e, Type t, int64_t v)
{
	Value *c = emit(e, OP_CONST, t, NULL, NULL);
	if (c)
		c->def->ival = v;
	return c;
}

static bool is_one(const Value *v) { return v->def && v->def->code == OP_CONST && v->def->ival == 1; }

/* A 1-D block x of dimension d made rank r (size 1 elsewhere), then
 * broadcast to the full shape of `full`. */
static Value *spread(Expand *e, Value *x, int d, Type full)
{
	int r = full.rank;
	Type t = x->type;
	for (int k = 0; k < d; k++) { /* leading dimensions of size 1 */
		int32_t sh[BLK_MAX_RANK];
		sh[0] = 1;
		for (int i = 0; i < t.rank; i++)
			sh[i + 1] = t.shape[i];
		t = type_block(t, t.rank + 1, sh);
		if ((x = emit(e, OP_EXPAND_DIMS, t, x, NULL)))
			x->def->attr[0] = 0;
	}
	while (x && t.rank < r) { /* trailing ones */
		int32_t sh[BLK_MAX_RANK];
		for (int i = 0; i < t.rank; i++)
			sh[i] = t.shape[i];
		sh[t.rank] = 1;
		int axis = t.rank;
		t = type_block(t, t.rank + 1, sh);
		if ((x = emit(e, OP_EXPAND_DIMS, t, x, NULL)))
			x->def->attr[0] = axis;
	}
	if (x && r > 1)
		x = emit(e, OP_BROADCAST, type_block(t, r, full.shape), x, NULL);
	return x;
}

/* Pointers and mask of the box of op (a desc op; of a gather or scatter,
 * the rows its first offset gives). */
static bool box(Expand *e, const Op *op, Type bt, Value **ptrs, Value **mask)
{
	int r = bt.rank;
	Value *base = op->operands[0];
	Type it = op->operands[1]->type; /* the index type */
	Value *offs = NULL, *in = NULL;
	for (int d = 0; d < r && !e->failed; d++) {
		Value *shape = op->operands[1 + d], *stride = op->operands[1 + r + d], *o = op->operands[1 + 2 * r + d];
		int32_t n = bt.shape[d];
		Type ti = type_block(type_scalar(SK_I32), 1, &n), tv = type_block(it, 1, &n);
		Value *idx = o; /* the rows of a gather or scatter: given */
		if (d || (op->code != OP_DESC_GATHER && op->code != OP_DESC_SCATTER)) {
			Value *ar = emit(e, OP_ARANGE, ti, NULL, NULL);
			if (ar)
				ar->def->attr[0] = 0, ar->def->attr[1] = n;
			if (it.scalar != SK_I32)
				ar = emit(e, OP_CAST, tv, ar, NULL);
			idx = emit(e, OP_ADD, tv, emit(e, OP_SPLAT, tv, o, NULL), ar);
		}
		Value *off = is_one(stride) ? idx : emit(e, OP_MUL, tv, idx, emit(e, OP_SPLAT, tv, stride, NULL));
		Type tb = type_block(type_scalar(SK_I1), 1, &n);
		Value *ge = emit(e, OP_CMP, tb, idx, const_int(e, tv, 0));
		if (ge)
			ge->def->attr[0] = CMP_GE;
		Value *lt = emit(e, OP_CMP, tb, idx, emit(e, OP_SPLAT, tv, shape, NULL));
		if (lt)
			lt->def->attr[0] = CMP_LT;
		Value *ok = emit(e, OP_AND, tb, ge, lt);
		off = e->failed ? NULL : spread(e, off, d, bt);
		ok = e->failed ? NULL : spread(e, ok, d, bt);
		offs = offs ? emit(e, OP_ADD, type_block(it, r, bt.shape), offs, off) : off;
		in = in ? emit(e, OP_AND, type_block(type_scalar(SK_I1), r, bt.shape), in, ok) : ok;
	}
	Type pt = type_block(base->type, r, bt.shape);
	*ptrs = emit(e, OP_ADDPTR, pt, emit(e, OP_SPLAT, pt, base, NULL), offs);
	*mask = in;
	return !e->failed;
}

static bool expand_op(Expand *e, Op *op)
{
	bool store = op->code == OP_DESC_STORE || op->code == OP_DESC_SCATTER, atomic = op->code == OP_DESC_ATOMIC;
	Value *val = store || atomic ? op->operands[op->n_operands - 1] : NULL;
	Type bt = val ? val->type : op->results[0]->type;
	e->at = op;
	Value *ptrs, *mask;
	if (!box(e, op, bt, &ptrs, &mask))
		return false;
	Value *ops[3 + BLK_MAX_RANK] = {ptrs, val, mask};
	if (!val) { /* a load: 0 (or NaN) where the mask is off */
		Value *pad = emit(e, OP_CONST, bt, NULL, NULL);
		if (!pad)
			return false;
		if (scalar_is_float((ScalarKind)bt.scalar))
			pad->def->fval = op->attr[0] == DESC_PAD_NAN ? NAN : 0.0;
		ops[1] = mask;
		ops[2] = pad;
	}
	/* a TMA load, store or reduction keeps its offsets, for the copy's coordinates */
	int map = ir_tma_map_of(e->f, op), r = bt.rank;
	for (int d = 0; map >= 0 && d < r; d++)
		ops[3 + d] = op->operands[1 + 2 * r + d];
	OpCode code = atomic ? OP_ATOMIC_RMW : store ? OP_STORE : OP_LOAD;
	Op *n = ir_insert_before(e->f, op, code, ops, map >= 0 ? 3 + r : 3, &bt, !store);
	if (!n)
		return false;
	n->loc = op->loc;
	int flags = MEMF_MASK | (val ? 0 : MEMF_OTHER) | (map >= 0 ? MEMF_TMA : 0);
	if (map >= 0)
		n->attr[4] = map;
	if (atomic) { /* relaxed, as the copy engine's reduction */
		n->attr[0] = op->attr[0];
		n->attr[1] = SEM_RELAXED;
		n->attr[2] = SCOPE_GPU;
		n->attr[3] = flags;
	} else {
		n->attr[0] = flags;
	}
	if (!val)
		ir_replace_uses(e->f, op->results[0], n->results[0]);
	ir_remove(op);
	return true;
}

static bool expand_region(Expand *e, Region *r)
{
	for (Op *op = r->first, *next; op; op = next) {
		next = op->next;
		for (int i = 0; i < op->n_regions; i++)
			if (!expand_region(e, &op->regions[i]))
				return false;
		bool desc = op->code == OP_DESC_LOAD || op->code == OP_DESC_STORE || op->code == OP_DESC_ATOMIC ||
		            op->code == OP_DESC_GATHER || op->code == OP_DESC_SCATTER;
		if (desc && !expand_op(e, op))
			return false;
	}
	return true;
}

bool ir_expand_descriptors(IrFunc *f, Diag *diag)
{
	Expand e = {.f = f};
	ir_tma_plan(f);
	if (!expand_region(&e, &f->body)) {
		diag_plain(diag, DIAG_ERROR, "out of memory expanding the tensor descriptors of '%s'", f->name);
		return false;
	}
	return true;
}
