/* tma_plan.c: which tensor-descriptor loads and stores become TMA copies
 * (sm_90a), and the tensor maps the runtime makes for them.
 *
 * A desc_load inside a `for` whose block goes into a dot is a tile a K
 * loop streams into shared memory for wgmma. On sm_90a the copy engine can
 * move it (cp.async.bulk.tensor), one thread issuing the whole box, when
 * the runtime can describe the tensor to it: the base a pointer argument
 * aligned to 16 bytes, each size an argument or a constant, the row stride
 * an argument that is a multiple of 16 or a constant of a multiple of 16
 * bytes, the last stride 1, and a box the engine takes (rows up to 256,
 * rows of 32, 64 or 128 bytes, which is also how wgmma reads its operands
 * and so how the copy swizzles them). A desc_store whose descriptor fits
 * the same rules, anywhere, is copied out of shared memory by the engine
 * too (the value written there in that layout first), and so is a
 * desc_atomic the engine can reduce (cp.reduce.async.bulk.tensor: its
 * element type and op, tma_reduces). A load with NaN padding goes through
 * a map of its own that fills with NaN (nan_fill). The plan records one map per
 * distinct descriptor (f->tmaps); expand-descriptors marks such loads
 * MEMF_TMA with their offsets and map, and the lowering copies them with
 * TMA where the tile's scratch is in the map's layout (else cp.async, as
 * every other load). The runtime encodes each map at launch from the
 * arguments (cuTensorMapEncodeTiled) and passes it after the kernel's own
 * parameters; where the arguments do not fit a map (a size of 0, a
 * negative or unaligned stride) it launches a variant without TMA. */
#include "gpu/gpu.h"

#include <string.h>

/* The runtime argument that value v is (a parameter's value), or -1. */
static int arg_of(const IrFunc *f, const Value *v, int64_t *divisibility)
{
	for (int i = 0, a = 0; i < f->n_params; i++) {
		if (!f->params[i].value)
			continue;
		if (f->params[i].value == v) {
			*divisibility = f->params[i].divisibility;
			return a;
		}
		a++;
	}
	return -1;
}

static bool const_of(const Value *v, int64_t *out)
{
	if (!v->def || v->def->code != OP_CONST || v->type.rank)
		return false;
	*out = v->def->ival;
	return true;
}

/* A size: an integer argument, or a constant of at least 1 (dims up to 2^31
 * - 1: the copy's coordinates are 32-bit). */
static bool size_of(const IrFunc *f, const Value *v, TmaDim *d)
{
	int64_t div, c;
	d->arg = arg_of(f, v, &div);
	d->value = 0;
	if (d->arg >= 0)
		return true;
	if (!const_of(v, &c) || c < 1 || c > INT32_MAX)
		return false;
	d->value = c;
	return true;
}

/* The row stride: bytes a multiple of 16 (promised by the specialization
 * for an argument, checked for a constant). */
static bool stride_of(const IrFunc *f, const Value *v, int eb, TmaDim *d)
{
	int64_t div, c;
	d->arg = arg_of(f, v, &div);
	d->value = 0;
	if (d->arg >= 0)
		return div > 0 && div % 16 == 0;
	if (!const_of(v, &c) || c < 1 || c > ((int64_t)1 << 36) || (c * eb) % 16)
		return false;
	d->value = c;
	return true;
}

static bool tma_elem(Type t)
{
	if (t.ptr || t.scalar == SK_I1)
		return false;
	int eb = type_bytes(t);
	return eb == 1 || eb == 2 || eb == 4;
}

/* Whether the copy engine reduces elements of type t with atomic op aop
 * as desc_atomic does (cp.reduce.async.bulk.tensor takes the element type
 * from the map): add, min, max, and, or and xor on 32-bit integers. Float
 * adds go by per-element atomics: on the H200 an f16 add of a box partly
 * above and left of the tensor stopped the kernel with an illegal
 * instruction (session 15), and f32 and bf16 were not run after it; float
 * min and max would have to match maximum()'s NaN and signed-zero rules. */
static bool tma_reduces(Type t, int64_t aop)
{
	ScalarKind k = (ScalarKind)t.scalar;
	if (t.ptr)
		return false;
	return (k == SK_I32 || k == SK_U32) && aop >= ATOM_ADD && aop <= ATOM_XOR;
}

/* The map desc_load, desc_store or desc_atomic op would go through, if it
 * can be one. */
static bool candidate(const IrFunc *f, const Op *op, TmaMap *m)
{
	if (op->code != OP_DESC_LOAD && op->code != OP_DESC_STORE && op->code != OP_DESC_ATOMIC)
		return false;
	Type bt = op->code == OP_DESC_LOAD ? op->results[0]->type : op->operands[op->n_operands - 1]->type;
	int r = bt.rank;
	if (r != 2 || !tma_elem(type_elem(bt)))
		return false;
	if (op->code == OP_DESC_ATOMIC && !tma_reduces(type_elem(bt), op->attr[0]))
		return false;
	/* NaN fill takes a float type in the map (f8 goes as bytes) */
	bool nan = op->code == OP_DESC_LOAD && op->attr[0] == DESC_PAD_NAN;
	if (nan && bt.scalar != SK_F32 && bt.scalar != SK_F16 && bt.scalar != SK_BF16)
		return false;
	int eb = type_bytes(type_elem(bt));
	memset(m, 0, sizeof *m);
	m->nan_fill = nan;
	int64_t div, one;
	m->base_arg = arg_of(f, op->operands[0], &div);
	if (m->base_arg < 0 || div < 16 || div % 16)
		return false;
	m->elem = bt.scalar;
	m->rank = r;
	for (int d = 0; d < r; d++)
		if (!size_of(f, op->operands[1 + d], &m->dim[d]))
			return false;
	if (!const_of(op->operands[r + r], &one) || one != 1 || !stride_of(f, op->operands[1 + r], eb, &m->stride[0]))
		return false;
	m->stride[1] = (TmaDim){-1, 1};
	int row = bt.shape[1] * eb;
	m->row_bytes = row >= 128 ? 128 : row >= 64 ? 64 : row >= 32 ? 32 : 0;
	/* several atoms (rows longer than 128 bytes): each atom a whole number
	 * of the swizzle's 1024-byte periods (8 rows or more), else the copy's
	 * swizzle of a later atom takes its start's bits where wgmma's layout
	 * does not */
	if (!m->row_bytes || bt.shape[0] > 256 || (row > m->row_bytes && bt.shape[0] * m->row_bytes % 1024))
		return false;
	/* a constant or a scalar stored to the whole box stays a plain store */
	if (op->code != OP_DESC_LOAD) {
		const Op *d = op->operands[op->n_operands - 1]->def;
		if (d && (d->code == OP_CONST || d->code == OP_SPLAT))
			return false;
	}
	m->box[0] = bt.shape[0];
	m->box[1] = m->row_bytes / eb;
	return true;
}

static bool same_map(const TmaMap *a, const TmaMap *b)
{
	if (a->base_arg != b->base_arg || a->elem != b->elem || a->rank != b->rank || a->row_bytes != b->row_bytes ||
	    a->nan_fill != b->nan_fill)
		return false;
	for (int d = 0; d < a->rank; d++)
		if (a->dim[d].arg != b->dim[d].arg || a->dim[d].value != b->dim[d].value ||
		    a->stride[d].arg != b->stride[d].arg || a->stride[d].value != b->stride[d].value ||
		    a->box[d] != b->box[d])
			return false;
	return true;
}

/* Whether v is an operand A or B of a dot in r (or the regions in it),
 * itself or transposed (attention's K^T: its tile lands K-major). */
static bool feeds_dot(const Region *r, const Value *v)
{
	for (const Op *op = r->first; op; op = op->next) {
		if (op->code == OP_DOT && (op->operands[0] == v || op->operands[1] == v))
			return true;
		if (op->code == OP_TRANS && op->operands[0] == v && v->type.rank == 2 && feeds_dot(r, op->results[0]))
			return true;
		for (int i = 0; i < op->n_regions; i++)
			if (feeds_dot(&op->regions[i], v))
				return true;
	}
	return false;
}

static void plan_region(IrFunc *f, const Region *r, bool in_for)
{
	for (const Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_regions; i++)
			plan_region(f, &op->regions[i], op->code == OP_FOR);
		TmaMap m;
		if (!candidate(f, op, &m))
			continue;
		/* a load: a K loop's tile for a dot; a store or reduction: any box (from shared memory) */
		if (op->code == OP_DESC_LOAD && (!in_for || !feeds_dot(r, op->results[0])))
			continue;
		m.store = op->code != OP_DESC_LOAD;
		bool seen = false;
		for (int i = 0; i < f->n_tmaps && !seen; i++)
			if ((seen = same_map(&f->tmaps[i], &m)))
				f->tmaps[i].store |= m.store;
		if (!seen && f->n_tmaps < TMA_MAX_MAPS)
			f->tmaps[f->n_tmaps++] = m;
	}
}

void ir_tma_plan(IrFunc *f)
{
	if (f->tma_planned)
		return;
	f->tma_planned = true;
	f->n_tmaps = 0;
	if (f->tma && f->sm >= 90 && f->sm_a)
		plan_region(f, &f->body, false);
}

int ir_tma_map_of(const IrFunc *f, const Op *op)
{
	TmaMap m;
	if (!f->n_tmaps || !candidate(f, op, &m))
		return -1;
	for (int i = 0; i < f->n_tmaps; i++)
		if (same_map(&f->tmaps[i], &m))
			return i;
	return -1;
}
