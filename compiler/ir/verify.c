/* verify.c: the invariants of tile IR (docs/ir.md, "Verifier").
 *
 * The checks follow the op table in ir/ir.h. A violation is the
 * compiler's own bug, so the first one is reported (later ones tend to be
 * its echoes) as
 *   internal error: IR invalid after PASS: WHAT at %N (op)
 * and the walk stops. Nothing here may crash on broken IR: every pointer is
 * checked before it is followed, and region nesting is bounded. */
#include "ir/ir.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { VERIFY_MAX_DEPTH = 1000 };

typedef struct Verifier {
	const IrFunc *f;
	Diag *diag;
	const char *pass;
	Value **defs; /* by id: the value defined with that id, once seen */
	bool *live;   /* by id: defined in a region that encloses the walk's place */
	int *uses;    /* by id: operand slots counted */
	int depth;
	bool failed;
} Verifier;

static void fail(Verifier *v, const Op *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(Verifier *v, const Op *op, const char *fmt, ...)
{
	if (v->failed)
		return;
	v->failed = true;
	StrBuf what = {0};
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&what, fmt, ap);
	va_end(ap);
	StrBuf where = {0};
	if (op && op->n_results > 0 && op->results && op->results[0])
		sb_printf(&where, " at %%%d (%s)", op->results[0]->id, op_name(op->code));
	else if (op)
		sb_printf(&where, " at (%s)", op_name(op->code));
	Span sp = op ? op->loc : v->f->loc;
	if (v->pass)
		diag_error(v->diag, sp, "internal error: IR invalid after %s: %s%s", v->pass,
		           what.data ? what.data : "", where.data ? where.data : "");
	else
		diag_error(v->diag, sp, "internal error: IR invalid: %s%s", what.data ? what.data : "",
		           where.data ? where.data : "");
	sb_free(&what);
	sb_free(&where);
}


static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* A well-formed type: a known element, bounded pointer depth and rank,
 * power-of-two dimensions, at most BLK_MAX_NUMEL elements. */
static bool check_type(Verifier *v, const Op *op, Type t, const char *what)
{
	if (t.scalar >= SK_COUNT) {
		fail(v, op, "%s has an unknown element type (%d)", what, t.scalar);
		return false;
	}
	if (t.ptr > BLK_MAX_PTR_DEPTH || t.rank > BLK_MAX_RANK) {
		fail(v, op, "%s has pointer depth %d and rank %d (limits %d, %d)", what, t.ptr, t.rank,
		     BLK_MAX_PTR_DEPTH, BLK_MAX_RANK);
		return false;
	}
	for (int i = 0; i < t.rank; i++)
		if (!is_pow2(t.shape[i])) {
			fail(v, op, "%s has type %s: dimension %d is not a power of two", what, type_cstr(t), i);
			return false;
		}
	int64_t n = type_numel(t); /* INT64_MAX where the count overflows */
	if (n > BLK_MAX_NUMEL) {
		fail(v, op, "%s has type %s: %" PRId64 " elements, more than %d", what, type_cstr(t), n,
		     BLK_MAX_NUMEL);
		return false;
	}
	return true;
}

/* ---- shapes and element kinds ------------------------------------------- */

static bool same_shape(Type a, Type b)
{
	if (a.rank != b.rank)
		return false;
	for (int i = 0; i < a.rank; i++)
		if (a.shape[i] != b.shape[i])
			return false;
	return true;
}

static Type with_elem(Type shape, ScalarKind k, int ptr)
{
	shape.scalar = (uint8_t)k;
	shape.ptr = (uint8_t)ptr;
	return shape;
}

static ScalarKind sk(Type t) { return (ScalarKind)t.scalar; }
static bool is_int(Type t) { return !t.ptr && scalar_is_int(sk(t)); }          /* i1 included */
static bool is_intn(Type t) { return !t.ptr && scalar_is_int(sk(t)) && sk(t) != SK_I1; }
static bool is_num(Type t) { return is_int(t) || type_is_float(t); }

/* ---- per-op checks ------------------------------------------------------- */

static bool counts(Verifier *v, const Op *op, int min_ops, int max_ops, int results)
{
	if (op->n_operands < min_ops || op->n_operands > max_ops) {
		if (min_ops == max_ops)
			fail(v, op, "expects %d operand%s, has %d", min_ops, min_ops == 1 ? "" : "s", op->n_operands);
		else
			fail(v, op, "expects %d to %d operands, has %d", min_ops, max_ops, op->n_operands);
		return false;
	}
	if (results >= 0 && op->n_results != results) {
		fail(v, op, "expects %d result%s, has %d", results, results == 1 ? "" : "s", op->n_results);
		return false;
	}
	return true;
}

#define OPT(i) (op->operands[i]->type)
#define RES(i) (op->results[i]->type)

static bool all_equal(Verifier *v, const Op *op, int from, int to)
{
	for (int i = from + 1; i < to; i++)
		if (!type_eq(OPT(from), OPT(i))) {
			fail(v, op, "operand types differ: %s and %s", type_cstr(OPT(from)), type_cstr(OPT(i)));
			return false;
		}
	return true;
}

static bool result_is(Verifier *v, const Op *op, int i, Type want)
{
	if (!type_eq(RES(i), want)) {
		fail(v, op, "result type is %s, expected %s", type_cstr(RES(i)), type_cstr(want));
		return false;
	}
	return true;
}

static bool attr_in(Verifier *v, const Op *op, int i, int64_t lo, int64_t hi, const char *what)
{
	if (op->attr[i] < lo || op->attr[i] > hi) {
		fail(v, op, "%s %" PRId64 " is out of range (%" PRId64 "..%" PRId64 ")", what, op->attr[i], lo, hi);
		return false;
	}
	return true;
}

/* An element-wise op: n operands of one type, one result of that type,
 * operands accepted by ok(). */
static void elementwise(Verifier *v, const Op *op, int n, bool (*ok)(Type), const char *kinds)
{
	if (!counts(v, op, n, n, 1) || !all_equal(v, op, 0, n))
		return;
	if (!ok(OPT(0))) {
		fail(v, op, "operand type %s is not %s", type_cstr(OPT(0)), kinds);
		return;
	}
	result_is(v, op, 0, OPT(0));
}

/* The float value `x` is one of type k's values (constants are stored
 * rounded to their type, so that printing and folding agree). */
static bool float_fits(ScalarKind k, double x)
{
	return isnan(x) || fp_round(k, x) == x;
}

static void check_const(Verifier *v, const Op *op)
{
	if (!counts(v, op, 0, 0, 1))
		return;
	Type t = RES(0);
	if (t.ptr) {
		fail(v, op, "constant of pointer type %s", type_cstr(t));
		return;
	}
	ScalarKind k = sk(t);
	if (scalar_is_int(k) && op->ival != ir_int_normalize(k, (uint64_t)op->ival))
		fail(v, op, "constant %" PRId64 " is not a value of %s", op->ival, scalar_name(k));
	else if (scalar_is_float(k) && !float_fits(k, op->fval))
		fail(v, op, "constant %.17g is not a value of %s", op->fval, scalar_name(k));
}

/* A TMA load's or store's map (attr[4]) and its offsets, operands first..
 * (one a dimension of the map). */
static bool tma_offsets(Verifier *v, const Op *op, int first)
{
	if (op->attr[4] < 0 || op->attr[4] >= v->f->n_tmaps) {
		fail(v, op, "TMA map %" PRId64 " is not one of the function's %d", op->attr[4], v->f->n_tmaps);
		return false;
	}
	int rank = v->f->tmaps[op->attr[4]].rank;
	if (op->n_operands != first + rank) {
		fail(v, op, "a TMA access through a map of rank %d takes %d operands", rank, first + rank);
		return false;
	}
	for (int i = first; i < op->n_operands; i++)
		if (OPT(i).rank || OPT(i).ptr || !scalar_is_int((ScalarKind)OPT(i).scalar)) {
			fail(v, op, "TMA offset %s is not an integer scalar", type_cstr(OPT(i)));
			return false;
		}
	return true;
}

static void check_load(Verifier *v, const Op *op)
{
	int64_t fl = op->attr[0];
	if (fl & ~(int64_t)(MEMF_MASK | MEMF_OTHER | MEMF_TMA)) {
		fail(v, op, "unknown operand flags %" PRId64, fl);
		return;
	}
	if ((fl & MEMF_OTHER) && !(fl & MEMF_MASK)) {
		fail(v, op, "other without mask");
		return;
	}
	bool tma = fl & MEMF_TMA;
	if (tma && fl != (MEMF_MASK | MEMF_OTHER | MEMF_TMA)) {
		fail(v, op, "a TMA load needs a mask and other%s", "");
		return;
	}
	int n = 1 + !!(fl & MEMF_MASK) + !!(fl & MEMF_OTHER);
	if (tma && !tma_offsets(v, op, n))
		return;
	if (!counts(v, op, n + (tma ? op->n_operands - n : 0), n + (tma ? op->n_operands - n : 0), 1))
		return;
	Type p = OPT(0);
	if (!p.ptr) {
		fail(v, op, "address has type %s, not a pointer", type_cstr(p));
		return;
	}
	if (!result_is(v, op, 0, type_pointee(p)))
		return;
	if ((fl & MEMF_MASK) && !type_eq(OPT(1), with_elem(p, SK_I1, 0))) {
		fail(v, op, "mask has type %s, expected %s", type_cstr(OPT(1)), type_cstr(with_elem(p, SK_I1, 0)));
		return;
	}
	if ((fl & MEMF_OTHER) && !type_eq(OPT(2), RES(0))) {
		fail(v, op, "other has type %s, expected %s", type_cstr(OPT(2)), type_cstr(RES(0)));
		return;
	}
	if (attr_in(v, op, 1, CACHE_DEFAULT, CACHE_WT, "cache modifier"))
		if (attr_in(v, op, 2, EVICT_NORMAL, EVICT_LAST, "eviction"))
			attr_in(v, op, 3, 0, 1, "volatile");
}

/* store and atomic_rmw: ptr, value [, mask] with flags in attr[flags_at]. */
static bool check_ptr_value_mask(Verifier *v, const Op *op, int flags_at, int results)
{
	int64_t fl = op->attr[flags_at];
	/* a TMA store or reduction: offsets after the mask */
	bool tma = (op->code == OP_STORE || op->code == OP_ATOMIC_RMW) && fl == (MEMF_MASK | MEMF_TMA);
	if (fl & ~(int64_t)MEMF_MASK && !tma) {
		fail(v, op, "unknown operand flags %" PRId64, fl);
		return false;
	}
	int n = 2 + !!(fl & MEMF_MASK);
	if (tma && !tma_offsets(v, op, n))
		return false;
	if (!counts(v, op, tma ? op->n_operands : n, tma ? op->n_operands : n, results))
		return false;
	Type p = OPT(0);
	if (!p.ptr) {
		fail(v, op, "address has type %s, not a pointer", type_cstr(p));
		return false;
	}
	if (!type_eq(OPT(1), type_pointee(p))) {
		fail(v, op, "value has type %s, expected %s", type_cstr(OPT(1)), type_cstr(type_pointee(p)));
		return false;
	}
	if ((fl & MEMF_MASK) && !type_eq(OPT(2), with_elem(p, SK_I1, 0))) {
		fail(v, op, "mask has type %s, expected %s", type_cstr(OPT(2)), type_cstr(with_elem(p, SK_I1, 0)));
		return false;
	}
	return true;
}

/* desc_load, desc_store, desc_atomic: base, shape[r], strides[r],
 * offsets[r] (one integer type, i32 or i64) [, value]; r is the rank of the
 * block. desc_gather and desc_scatter: rank 2, the first offset a block of
 * rows (the index type, one a row of the block), the second a scalar. */
static void check_desc(Verifier *v, const Op *op)
{
	bool store = op->code == OP_DESC_STORE || op->code == OP_DESC_ATOMIC || op->code == OP_DESC_SCATTER;
	bool rows = op->code == OP_DESC_GATHER || op->code == OP_DESC_SCATTER;
	if (op->n_operands < 1 || (store && op->n_operands < 2)) {
		fail(v, op, "expects a base pointer%s", store ? " and a value" : "");
		return;
	}
	Type blk = store ? OPT(op->n_operands - 1) : (op->n_results == 1 ? RES(0) : (Type){0});
	if (!store && op->n_results != 1) {
		fail(v, op, "expects 1 result, has %d", op->n_results);
		return;
	}
	if (store && op->n_results) {
		fail(v, op, "expects no result, has %d", op->n_results);
		return;
	}
	int r = blk.rank;
	if (r < 1 || (rows && r != 2)) {
		fail(v, op, "the block has type %s, not a block of rank %s", type_cstr(blk), rows ? "2" : "1 or more");
		return;
	}
	int n = 1 + 3 * r + store;
	if (!counts(v, op, n, n, store ? 0 : 1))
		return;
	Type base = OPT(0);
	if (!base.ptr || base.rank) {
		fail(v, op, "base has type %s, not a scalar pointer", type_cstr(base));
		return;
	}
	if (!type_eq(blk, with_elem(blk, sk(type_pointee(base)), type_pointee(base).ptr))) {
		fail(v, op, "%s has type %s, but the base points to %s", store ? "value" : "result", type_cstr(blk),
		     type_cstr(type_pointee(base)));
		return;
	}
	Type it = OPT(1);
	if (it.rank || (sk(it) != SK_I32 && sk(it) != SK_I64) || it.ptr) {
		fail(v, op, "shape has type %s, expected i32 or i64", type_cstr(it));
		return;
	}
	for (int i = 2; i <= 3 * r; i++) {
		Type want = rows && i == 1 + 2 * r ? type_block(it, 1, blk.shape) : it;
		if (!type_eq(OPT(i), want)) {
			fail(v, op, "%s %d has type %s, expected %s", i <= r ? "shape" : i <= 2 * r ? "stride" : "offset",
			     (i - 1) % r, type_cstr(OPT(i)), type_cstr(want));
			return;
		}
	}
	const Value *last = op->operands[2 * r];
	if (last->def && last->def->code == OP_CONST && last->def->ival != 1) {
		fail(v, op, "the last stride is %" PRId64 ", not 1", last->def->ival);
		return;
	}
	bool is_float = !blk.ptr && scalar_is_float(sk(blk));
	switch (op->code) {
	case OP_DESC_LOAD:
	case OP_DESC_GATHER:
		if (attr_in(v, op, 0, DESC_PAD_ZERO, DESC_PAD_NAN, "padding") && op->attr[0] == DESC_PAD_NAN && !is_float)
			fail(v, op, "NaN padding of %s elements", type_cstr(type_elem(blk)));
		break;
	case OP_DESC_ATOMIC:
		if (!attr_in(v, op, 0, ATOM_ADD, ATOM_XOR, "atomic op"))
			break;
		if (blk.ptr || sk(blk) == SK_I1 || (op->attr[0] >= ATOM_AND && !is_int(blk)))
			fail(v, op, "atomic %s does not apply to %s", atomic_op_name(op->attr[0]), type_cstr(type_elem(blk)));
		break;
	default:
		break;
	}
}

static bool is_desc_op(OpCode c)
{
	return c == OP_DESC_LOAD || c == OP_DESC_STORE || c == OP_DESC_ATOMIC || c == OP_DESC_GATHER ||
	       c == OP_DESC_SCATTER;
}

/* Region `r` of op has the given argument types. */
static bool region_args(Verifier *v, const Op *op, const Region *r, const char *which, const Type *want, int n)
{
	if (r->n_args != n) {
		fail(v, op, "%s region has %d argument%s, expected %d", which, r->n_args, r->n_args == 1 ? "" : "s", n);
		return false;
	}
	for (int i = 0; i < n; i++)
		if (!type_eq(r->args[i]->type, want[i])) {
			fail(v, op, "%s region argument %d (%%%d) has type %s, expected %s", which, i, r->args[i]->id,
			     type_cstr(r->args[i]->type), type_cstr(want[i]));
			return false;
		}
	return true;
}

/* The terminator of r (checked to exist by the region walk) passes values
 * of the given types, from operand `skip` on. */
static bool term_values(Verifier *v, const Op *op, const Region *r, const char *which, const Type *want, int n,
                        int skip)
{
	const Op *t = r->last;
	if (!t)
		return true; /* reported by the region walk */
	if (t->n_operands - skip != n) {
		fail(v, op, "%s region's %s passes %d value%s, expected %d", which, op_name(t->code), t->n_operands - skip,
		     t->n_operands - skip == 1 ? "" : "s", n);
		return false;
	}
	for (int i = 0; i < n; i++)
		if (t->operands[skip + i] && !type_eq(t->operands[skip + i]->type, want[i])) {
			fail(v, op, "%s region's %s value %d has type %s, expected %s", which, op_name(t->code), i,
			     type_cstr(t->operands[skip + i]->type), type_cstr(want[i]));
			return false;
		}
	return true;
}

static Type *types_of(Value *const *vs, int n, Type *buf)
{
	for (int i = 0; i < n; i++)
		buf[i] = vs[i]->type;
	return buf;
}

/* reduce and scan: n blocks; the region takes (a_1..a_n, b_1..b_n) scalars
 * of their element types and yields n of them. */
static void check_combine(Verifier *v, const Op *op, Type *buf)
{
	int n = op->n_operands;
	if (n < 1) {
		fail(v, op, "expects at least 1 operand, has 0");
		return;
	}
	if (op->n_results != n) {
		fail(v, op, "has %d results for %d operands", op->n_results, n);
		return;
	}
	Type t0 = OPT(0);
	if (t0.rank == 0) {
		fail(v, op, "operand has type %s, not a block", type_cstr(t0));
		return;
	}
	for (int i = 1; i < n; i++)
		if (!same_shape(OPT(i), t0)) {
			fail(v, op, "operand shapes differ: %s and %s", type_cstr(t0), type_cstr(OPT(i)));
			return;
		}
	if (!attr_in(v, op, 0, 0, t0.rank - 1, "axis"))
		return;
	int axis = (int)op->attr[0];
	for (int i = 0; i < n; i++) {
		Type want = OPT(i);
		if (op->code == OP_REDUCE) {
			int32_t shape[BLK_MAX_RANK];
			int r = 0;
			for (int d = 0; d < want.rank; d++)
				if (d != axis)
					shape[r++] = want.shape[d];
			want = type_block(want, r, shape);
		}
		if (!result_is(v, op, i, want))
			return;
	}
	if (op->code == OP_SCAN && !attr_in(v, op, 1, 0, 1, "reverse"))
		return;
	for (int i = 0; i < n; i++)
		buf[i] = buf[n + i] = type_elem(OPT(i));
	if (region_args(v, op, &op->regions[0], "combine", buf, 2 * n))
		term_values(v, op, &op->regions[0], "combine", buf, n, 0);
}

/* sort, topk, histogram: keys of the integer kinds (i1 apart) and of f16,
 * bf16, f32, f64; lengths powers of two (the block's). */
static bool sort_key(Type t) { return is_intn(t) || (type_is_float(t) && sk(t) != SK_F8E4M3 && sk(t) != SK_F8E5M2); }

static void check_sort(Verifier *v, const Op *op)
{
	bool topk = op->code == OP_TOPK;
	if (!counts(v, op, 1, 1, -1))
		return;
	Type x = OPT(0);
	if (x.rank == 0 || !sort_key(x)) {
		fail(v, op, "operand %s is not a block of integers or of f16, bf16, f32, f64", type_cstr(x));
		return;
	}
	if (op->n_results != (topk ? 2 : op->n_results == 2 ? 2 : 1)) {
		fail(v, op, "expects %s results, has %d", topk ? "2" : "1 or 2", op->n_results);
		return;
	}
	if (!attr_in(v, op, 0, 0, x.rank - 1, "axis"))
		return;
	int axis = (int)op->attr[0];
	Type want = x;
	if (topk) {
		if (!is_pow2(op->attr[1]) || op->attr[1] > x.shape[axis]) {
			fail(v, op, "k %" PRId64 " is not a power of two up to the axis' length %d", op->attr[1], x.shape[axis]);
			return;
		}
		want.shape[axis] = (int32_t)op->attr[1];
	} else if (!attr_in(v, op, 1, 0, 1, "descending")) {
		return;
	}
	if (result_is(v, op, 0, want) && op->n_results == 2)
		result_is(v, op, 1, with_elem(want, SK_I32, 0));
}

static void check_histogram(Verifier *v, const Op *op)
{
	if (!counts(v, op, 1, 2, 1))
		return;
	Type x = OPT(0);
	if (x.rank == 0 || !is_intn(x)) {
		fail(v, op, "operand %s is not a block of integers", type_cstr(x));
		return;
	}
	if (op->n_operands == 2 && !type_eq(OPT(1), with_elem(x, SK_I1, 0))) {
		fail(v, op, "mask %s is not an i1 block of the operand's shape", type_cstr(OPT(1)));
		return;
	}
	if (!is_pow2(op->attr[0]) || op->attr[0] > BLK_MAX_NUMEL) {
		fail(v, op, "num_bins %" PRId64 " is not a power of two up to %d", op->attr[0], BLK_MAX_NUMEL);
		return;
	}
	int32_t bins = (int32_t)op->attr[0];
	result_is(v, op, 0, type_block(type_scalar(SK_I32), 1, &bins));
}

static void check_dot(Verifier *v, const Op *op)
{
	if (!counts(v, op, 3, 3, 1))
		return;
	Type a = OPT(0), b = OPT(1), c = OPT(2);
	if (a.rank < 2 || a.rank > 3 || b.rank != a.rank || c.rank != a.rank) {
		fail(v, op, "operands %s, %s, %s are not matrices of one rank", type_cstr(a), type_cstr(b), type_cstr(c));
		return;
	}
	int r = a.rank;
	/* a[.., M, K] b[.., K, N] acc[.., M, N]; a leading batch dim must agree */
	if (a.shape[r - 1] != b.shape[r - 2] || c.shape[r - 2] != a.shape[r - 2] || c.shape[r - 1] != b.shape[r - 1] ||
	    (r == 3 && (a.shape[0] != b.shape[0] || a.shape[0] != c.shape[0]))) {
		fail(v, op, "shapes do not multiply: %s times %s plus %s", type_cstr(a), type_cstr(b), type_cstr(c));
		return;
	}
	bool fp8_pair = (sk(a) == SK_F8E4M3 || sk(a) == SK_F8E5M2) && (sk(b) == SK_F8E4M3 || sk(b) == SK_F8E5M2);
	if (!is_num(a) || (sk(a) != sk(b) && !fp8_pair)) {
		fail(v, op, "input types %s and %s differ (other than two fp8 kinds) or are not numbers", type_cstr(a), type_cstr(b));
		return;
	}
	if (is_int(a) ? !is_intn(c) : !type_is_float(c)) {
		fail(v, op, "accumulator type %s does not suit inputs %s", type_cstr(c), type_cstr(a));
		return;
	}
	if (result_is(v, op, 0, c))
		attr_in(v, op, 0, DOT_TF32, DOT_IEEE, "precision");
}

/* Constants, program ids and the shape ops. */
static void check_shape_op(Verifier *v, const Op *op)
{
	switch (op->code) {
	case OP_CONST:
		check_const(v, op);
		break;
	case OP_ARANGE:
		if (!counts(v, op, 0, 0, 1))
			break;
		if (op->attr[0] < INT32_MIN || op->attr[1] > INT32_MAX || op->attr[1] <= op->attr[0] ||
		    !is_pow2(op->attr[1] - op->attr[0])) {
			fail(v, op, "range %" PRId64 "..%" PRId64 " is not a power-of-two length of i32", op->attr[0],
			     op->attr[1]);
			break;
		}
		result_is(v, op, 0, type_block(type_scalar(SK_I32), 1, (int32_t[]){(int32_t)(op->attr[1] - op->attr[0])}));
		break;
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS:
		if (counts(v, op, 0, 0, 1) && attr_in(v, op, 0, 0, 2, "axis"))
			result_is(v, op, 0, type_scalar(SK_I32));
		break;
	case OP_SPLAT:
		if (!counts(v, op, 1, 1, 1))
			break;
		if (OPT(0).rank != 0 || RES(0).rank == 0)
			fail(v, op, "splats %s to %s: not a scalar to a block", type_cstr(OPT(0)), type_cstr(RES(0)));
		else
			result_is(v, op, 0, type_block(OPT(0), RES(0).rank, RES(0).shape));
		break;
	case OP_BROADCAST: {
		if (!counts(v, op, 1, 1, 1))
			break;
		Type a = OPT(0), r = RES(0);
		bool ok = a.rank > 0 && a.rank == r.rank && type_eq(type_elem(a), type_elem(r));
		for (int i = 0; ok && i < a.rank; i++)
			ok = a.shape[i] == r.shape[i] || a.shape[i] == 1;
		if (!ok)
			fail(v, op, "cannot broadcast %s to %s", type_cstr(a), type_cstr(r));
		break;
	}
	case OP_EXPAND_DIMS: {
		if (!counts(v, op, 1, 1, 1))
			break;
		Type a = OPT(0);
		if (a.rank >= BLK_MAX_RANK) {
			fail(v, op, "operand %s has the largest rank already", type_cstr(a));
			break;
		}
		if (!attr_in(v, op, 0, 0, a.rank, "axis"))
			break;
		int32_t shape[BLK_MAX_RANK];
		for (int i = 0, j = 0; i <= a.rank; i++)
			shape[i] = i == op->attr[0] ? 1 : a.shape[j++];
		result_is(v, op, 0, type_block(a, a.rank + 1, shape));
		break;
	}
	case OP_RESHAPE:
		if (!counts(v, op, 1, 1, 1))
			break;
		if (!type_eq(type_elem(OPT(0)), type_elem(RES(0))) || type_numel(OPT(0)) != type_numel(RES(0)))
			fail(v, op, "cannot reshape %s to %s", type_cstr(OPT(0)), type_cstr(RES(0)));
		break;
	case OP_TRANS: {
		if (!counts(v, op, 1, 1, 1))
			break;
		Type a = OPT(0);
		int32_t shape[BLK_MAX_RANK];
		unsigned seen = 0;
		for (int i = 0; i < a.rank; i++) {
			if (!attr_in(v, op, i, 0, a.rank - 1, "permutation entry"))
				return;
			if (seen & (1u << op->attr[i])) {
				fail(v, op, "permutation repeats %" PRId64, op->attr[i]);
				return;
			}
			seen |= 1u << op->attr[i];
			shape[i] = a.shape[op->attr[i]];
		}
		result_is(v, op, 0, type_block(a, a.rank, shape));
		break;
	}
	case OP_CAT: {
		if (!counts(v, op, 2, 2, 1))
			break;
		Type a = OPT(0), b = OPT(1);
		bool ok = a.rank > 0 && a.rank == b.rank && type_eq(type_elem(a), type_elem(b));
		for (int i = 1; ok && i < a.rank; i++)
			ok = a.shape[i] == b.shape[i];
		if (!ok) {
			fail(v, op, "cannot concatenate %s and %s", type_cstr(a), type_cstr(b));
			break;
		}
		a.shape[0] += b.shape[0];
		result_is(v, op, 0, a);
		break;
	}
	case OP_JOIN: {
		if (!counts(v, op, 2, 2, 1) || !all_equal(v, op, 0, 2))
			break;
		Type a = OPT(0);
		if (a.rank >= BLK_MAX_RANK) {
			fail(v, op, "operand %s has the largest rank already", type_cstr(a));
			break;
		}
		a.shape[a.rank++] = 2;
		result_is(v, op, 0, a);
		break;
	}
	case OP_SPLIT: {
		if (!counts(v, op, 1, 1, 2))
			break;
		Type a = OPT(0);
		if (a.rank == 0 || a.shape[a.rank - 1] != 2) {
			fail(v, op, "operand %s does not end in a dimension of 2", type_cstr(a));
			break;
		}
		a.shape[--a.rank] = 0;
		if (result_is(v, op, 0, a))
			result_is(v, op, 1, a);
		break;
	}
	case OP_GATHER: {
		if (!counts(v, op, 2, 2, 1))
			break;
		Type x = OPT(0), idx = OPT(1);
		bool ok = x.rank > 0 && idx.rank == x.rank && !idx.ptr && sk(idx) == SK_I32 && op->attr[0] >= 0 &&
		          op->attr[0] < x.rank;
		for (int d = 0; ok && d < x.rank; d++)
			ok = d == op->attr[0] || x.shape[d] == idx.shape[d];
		if (!ok) {
			fail(v, op, "cannot gather %s at %s along axis %" PRId64, type_cstr(x), type_cstr(idx), op->attr[0]);
			break;
		}
		result_is(v, op, 0, type_block(type_elem(x), idx.rank, idx.shape));
		break;
	}
	default:
		break;
	}
}

/* Element-wise ops, pointer arithmetic, compares, selects and casts. */
static void check_elementwise_op(Verifier *v, const Op *op)
{
	switch (op->code) {
	case OP_ADD:
	case OP_SUB:
	case OP_MUL:
	case OP_DIV:
	case OP_REM:
	case OP_MIN:
	case OP_MAX:
		elementwise(v, op, 2, is_num, "an integer or a float");
		if ((op->code == OP_MIN || op->code == OP_MAX) && !v->failed)
			attr_in(v, op, 0, 0, 1, "propagate_nan");
		if (op->code == OP_DIV && !v->failed && attr_in(v, op, 0, 0, 1, "rn") && op->attr[0] && !type_is_float(OPT(0)))
			fail(v, op, "rn divides floats, not %s", type_cstr(OPT(0)));
		break;
	case OP_AND:
	case OP_OR:
	case OP_XOR:
		elementwise(v, op, 2, is_int, "an integer or i1");
		break;
	case OP_SHL:
	case OP_SHR:
	case OP_UMULHI:
		elementwise(v, op, 2, is_intn, "an integer");
		break;
	case OP_NEG:
	case OP_ABS:
		elementwise(v, op, 1, is_num, "an integer or a float");
		break;
	case OP_NOT:
		elementwise(v, op, 1, is_int, "an integer or i1");
		break;
	case OP_FMA:
		elementwise(v, op, 3, is_num, "an integer or a float");
		break;
	case OP_MATH:
		elementwise(v, op, 1, type_is_float, "a float");
		if (!v->failed)
			attr_in(v, op, 0, 0, MATH_COUNT - 1, "math function");
		break;
	case OP_ADDPTR:
		if (!counts(v, op, 2, 2, 1))
			break;
		if (!OPT(0).ptr || !is_intn(OPT(1)) || !same_shape(OPT(0), OPT(1)))
			fail(v, op, "operands %s and %s are not a pointer and an integer of its shape", type_cstr(OPT(0)),
			     type_cstr(OPT(1)));
		else
			result_is(v, op, 0, OPT(0));
		break;
	case OP_CMP:
		if (!counts(v, op, 2, 2, 1) || !all_equal(v, op, 0, 2) || !attr_in(v, op, 0, CMP_EQ, CMP_GE, "predicate"))
			break;
		if (OPT(0).ptr && op->attr[0] != CMP_EQ && op->attr[0] != CMP_NE)
			fail(v, op, "pointers compare only with eq and ne");
		else
			result_is(v, op, 0, with_elem(OPT(0), SK_I1, 0));
		break;
	case OP_SELECT:
		if (!counts(v, op, 3, 3, 1) || !all_equal(v, op, 1, 3))
			break;
		if (!type_eq(OPT(0), with_elem(OPT(1), SK_I1, 0)))
			fail(v, op, "condition has type %s, expected %s", type_cstr(OPT(0)), type_cstr(with_elem(OPT(1), SK_I1, 0)));
		else
			result_is(v, op, 0, OPT(1));
		break;
	case OP_CAST:
		if (!counts(v, op, 1, 1, 1))
			break;
		if (!is_num(OPT(0)) || !is_num(RES(0)) || !same_shape(OPT(0), RES(0)))
			fail(v, op, "cannot cast %s to %s", type_cstr(OPT(0)), type_cstr(RES(0)));
		break;
	case OP_BITCAST: {
		if (!counts(v, op, 1, 1, 1))
			break;
		Type a = OPT(0), r = RES(0);
		int wa = a.ptr ? 64 : scalar_bits(sk(a)), wr = r.ptr ? 64 : scalar_bits(sk(r));
		if (wa != wr || !same_shape(a, r))
			fail(v, op, "cannot bitcast %s to %s", type_cstr(a), type_cstr(r));
		break;
	}
	default:
		break;
	}
}

static void check_op(Verifier *v, const Op *op)
{
	Type buf[2 * 64];
	switch (op->code) {
	case OP_CONST:
	case OP_ARANGE:
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS:
	case OP_SPLAT:
	case OP_BROADCAST:
	case OP_EXPAND_DIMS:
	case OP_RESHAPE:
	case OP_TRANS:
	case OP_CAT:
	case OP_JOIN:
	case OP_SPLIT:
	case OP_GATHER:
		check_shape_op(v, op);
		break;
	case OP_ADD:
	case OP_SUB:
	case OP_MUL:
	case OP_DIV:
	case OP_REM:
	case OP_MIN:
	case OP_MAX:
	case OP_AND:
	case OP_OR:
	case OP_XOR:
	case OP_SHL:
	case OP_SHR:
	case OP_UMULHI:
	case OP_NEG:
	case OP_ABS:
	case OP_NOT:
	case OP_FMA:
	case OP_MATH:
	case OP_ADDPTR:
	case OP_CMP:
	case OP_SELECT:
	case OP_CAST:
	case OP_BITCAST:
		check_elementwise_op(v, op);
		break;
	case OP_PTR_TO_INT:
		if (!counts(v, op, 1, 1, 1))
			break;
		if (!OPT(0).ptr)
			fail(v, op, "operand has type %s, not a pointer", type_cstr(OPT(0)));
		else
			result_is(v, op, 0, with_elem(OPT(0), SK_I64, 0));
		break;
	case OP_INT_TO_PTR:
		if (!counts(v, op, 1, 1, 1))
			break;
		if (!type_eq(OPT(0), with_elem(RES(0), SK_I64, 0)) || !RES(0).ptr)
			fail(v, op, "cannot make %s from %s", type_cstr(RES(0)), type_cstr(OPT(0)));
		break;
	case OP_CONVERT_LAYOUT:
		if (counts(v, op, 1, 1, 1))
			result_is(v, op, 0, OPT(0));
		break;
	case OP_HINT:
		if (!counts(v, op, 1, 1, 1) || !result_is(v, op, 0, OPT(0)))
			break;
		if (op->attr[0] < 0 || op->attr[1] < 0)
			fail(v, op, "negative hint");
		break;
	case OP_LOAD:
		check_load(v, op);
		break;
	case OP_STORE:
		if (check_ptr_value_mask(v, op, 0, 0) && attr_in(v, op, 1, CACHE_DEFAULT, CACHE_WT, "cache modifier"))
			attr_in(v, op, 2, EVICT_NORMAL, EVICT_LAST, "eviction");
		break;
	case OP_ATOMIC_RMW:
		if (!check_ptr_value_mask(v, op, 3, 1) || !result_is(v, op, 0, OPT(1)))
			break;
		if (!attr_in(v, op, 0, ATOM_ADD, ATOM_XCHG, "atomic op"))
			break;
		/* and, or, xor change bits of integers; a pointer is only exchanged */
		if ((op->attr[0] >= ATOM_AND && op->attr[0] <= ATOM_XOR && !is_int(OPT(1))) ||
		    (op->attr[0] != ATOM_XCHG && OPT(1).ptr)) {
			fail(v, op, "atomic %s does not apply to %s", atomic_op_name(op->attr[0]), type_cstr(OPT(1)));
			break;
		}
		if (attr_in(v, op, 1, SEM_ACQ_REL, SEM_RELAXED, "sem"))
			attr_in(v, op, 2, SCOPE_GPU, SCOPE_SYS, "scope");
		break;
	case OP_ATOMIC_CAS:
		if (!counts(v, op, 3, 3, 1))
			break;
		if (!OPT(0).ptr || !type_eq(OPT(1), type_pointee(OPT(0))) || !type_eq(OPT(2), OPT(1))) {
			fail(v, op, "operands %s, %s, %s are not a pointer and two values of its pointee", type_cstr(OPT(0)),
			     type_cstr(OPT(1)), type_cstr(OPT(2)));
			break;
		}
		if (result_is(v, op, 0, OPT(1)) && attr_in(v, op, 1, SEM_ACQ_REL, SEM_RELAXED, "sem"))
			attr_in(v, op, 2, SCOPE_GPU, SCOPE_SYS, "scope");
		break;
	case OP_REDUCE:
	case OP_SCAN:
		if (op->n_operands > 64) {
			fail(v, op, "has %d operands, more than 64", op->n_operands);
			break;
		}
		check_combine(v, op, buf);
		break;
	case OP_DOT:
		check_dot(v, op);
		break;
	case OP_SORT:
	case OP_TOPK:
		check_sort(v, op);
		break;
	case OP_HISTOGRAM:
		check_histogram(v, op);
		break;
	case OP_PHILOX: {
		if (!counts(v, op, 2, 2, 4))
			break;
		Type c = OPT(1);
		if (!type_eq(OPT(0), type_scalar(SK_U64)) || !type_eq(type_elem(c), type_scalar(SK_U32))) {
			fail(v, op, "operands %s and %s are not a u64 seed and u32 counters", type_cstr(OPT(0)), type_cstr(c));
			break;
		}
		for (int i = 0; i < 4; i++)
			if (!result_is(v, op, i, c))
				return;
		if (op->attr[0] < 1)
			fail(v, op, "philox needs at least one round, has %" PRId64, op->attr[0]);
		break;
	}
	case OP_PRINT:
		if (counts(v, op, 0, INT32_MAX, 0))
			attr_in(v, op, 0, 0, 1, "hex");
		break;
	case OP_BARRIER:
		counts(v, op, 0, 0, 0);
		break;
	case OP_SREG:
		if (counts(v, op, 0, 0, 1) && attr_in(v, op, 0, SREG_GLOBALTIMER, SREG_SMID, "register"))
			result_is(v, op, 0, type_scalar(op->attr[0] == SREG_GLOBALTIMER ? SK_U64 : SK_I32));
		break;
	case OP_INLINE_ASM:
		if (!counts(v, op, 0, 64, -1) || !op->str || !op->str2 || op->n_results < 1) {
			if (!v->failed)
				fail(v, op, "needs its text, its constraints and at least one result");
			break;
		}
		for (int i = 1; i < op->n_results; i++)
			if (!same_shape(RES(0), RES(i)))
				fail(v, op, "results %s and %s differ in shape", type_cstr(RES(0)), type_cstr(RES(i)));
		for (int i = 0; i < op->n_operands; i++)
			if (!same_shape(RES(0), OPT(i)))
				fail(v, op, "operand %s is not of the results' shape %s", type_cstr(OPT(i)), type_cstr(RES(0)));
		if (op->attr[1] < 1 || op->attr[1] > 16 || (op->attr[1] & (op->attr[1] - 1)))
			fail(v, op, "pack %" PRId64 " is not 1, 2, 4, 8 or 16", op->attr[1]);
		break;
	case OP_ASSERT:
		if (counts(v, op, 1, 1, 0) && (OPT(0).ptr || sk(OPT(0)) != SK_I1))
			fail(v, op, "condition has type %s, not i1", type_cstr(OPT(0)));
		break;
	case OP_FOR: {
		if (!counts(v, op, 3, INT32_MAX, -1))
			break;
		Type iv = OPT(0);
		if (!is_intn(iv) || iv.rank != 0 || !type_eq(OPT(1), iv) || !type_eq(OPT(2), iv)) {
			fail(v, op, "bounds %s, %s, %s are not integer scalars of one type", type_cstr(OPT(0)), type_cstr(OPT(1)),
			     type_cstr(OPT(2)));
			break;
		}
		int n = op->n_operands - 3;
		if (op->n_results != n) {
			fail(v, op, "has %d results for %d loop-carried values", op->n_results, n);
			break;
		}
		for (int i = 0; i < n; i++)
			if (!result_is(v, op, i, OPT(3 + i)))
				return;
		Type *t = malloc((size_t)(n + 1) * sizeof *t);
		if (!t) {
			fail(v, op, "out of memory");
			break;
		}
		t[0] = iv;
		for (int i = 0; i < n; i++)
			t[1 + i] = OPT(3 + i);
		if (region_args(v, op, &op->regions[0], "body", t, n + 1))
			term_values(v, op, &op->regions[0], "body", t + 1, n, 0);
		free(t);
		break;
	}
	case OP_IF: {
		if (!counts(v, op, 1, 1, -1))
			break;
		if (!type_eq(OPT(0), type_scalar(SK_I1))) {
			fail(v, op, "condition has type %s, not i1", type_cstr(OPT(0)));
			break;
		}
		Type *t = malloc((size_t)(op->n_results + 1) * sizeof *t);
		if (!t) {
			fail(v, op, "out of memory");
			break;
		}
		types_of(op->results, op->n_results, t);
		if (region_args(v, op, &op->regions[0], "then", t, 0) && region_args(v, op, &op->regions[1], "else", t, 0) &&
		    term_values(v, op, &op->regions[0], "then", t, op->n_results, 0))
			term_values(v, op, &op->regions[1], "else", t, op->n_results, 0);
		free(t);
		break;
	}
	case OP_WHILE: {
		/* before: (inits) -> condition(c, forwarded); after: (forwarded) ->
		 * yield(inits); the results are the forwarded values */
		int n = op->n_operands;
		Type *t = malloc((size_t)(n + op->n_results + 1) * sizeof *t);
		if (!t) {
			fail(v, op, "out of memory");
			break;
		}
		types_of(op->operands, n, t);
		Type *fw = types_of(op->results, op->n_results, t + n);
		const Op *c = op->regions[0].last;
		if (region_args(v, op, &op->regions[0], "before", t, n) &&
		    term_values(v, op, &op->regions[0], "before", fw, op->n_results, 1) &&
		    (!c || !c->n_operands || !c->operands[0] || type_eq(c->operands[0]->type, type_scalar(SK_I1)) ||
		     (fail(v, op, "condition has type %s, not i1", type_cstr(c->operands[0]->type)), false)) &&
		    region_args(v, op, &op->regions[1], "after", fw, op->n_results))
			term_values(v, op, &op->regions[1], "after", t, n, 0);
		free(t);
		break;
	}
	case OP_YIELD:
		counts(v, op, 0, INT32_MAX, 0);
		break;
	case OP_CONDITION:
		counts(v, op, 1, INT32_MAX, 0);
		break;
	case OP_RETURN:
		counts(v, op, 0, 0, 0);
		break;
	default:
		if (is_desc_op(op->code))
			check_desc(v, op);
		else
			fail(v, op, "unknown op code %d", (int)op->code);
		break;
	}
}

/* ---- the walk ------------------------------------------------------------ */

static bool define(Verifier *v, const Op *op, Value *val, const char *what)
{
	if (!val) {
		fail(v, op, "%s is NULL", what);
		return false;
	}
	if (val->id < 0 || val->id >= v->f->n_values) {
		fail(v, op, "%s has id %d, outside 0..%d", what, val->id, v->f->n_values - 1);
		return false;
	}
	if (v->defs[val->id]) {
		fail(v, op, "%s %%%d is defined twice", what, val->id);
		return false;
	}
	v->defs[val->id] = val;
	v->live[val->id] = true;
	return check_type(v, op, val->type, what);
}

static bool use(Verifier *v, const Op *op, int i)
{
	Value *val = op->operands[i];
	if (!val) {
		fail(v, op, "operand %d is NULL", i);
		return false;
	}
	if (val->id < 0 || val->id >= v->f->n_values || v->defs[val->id] != val) {
		fail(v, op, "operand %d (%%%d) is not defined before its use", i, val->id);
		return false;
	}
	if (!v->live[val->id]) {
		fail(v, op, "operand %d (%%%d) is defined in a region that does not enclose its use", i, val->id);
		return false;
	}
	v->uses[val->id]++;
	return true;
}

/* Which terminator ends a region of `parent` (NULL: the kernel body). */
static OpCode terminator_for(const Op *parent, int region)
{
	if (!parent)
		return OP_RETURN;
	if (parent->code == OP_WHILE && region == 0)
		return OP_CONDITION;
	return OP_YIELD;
}

static void walk_region(Verifier *v, const Region *r, const Op *parent, int index);

/* GPU IR: its invariants are gpu/'s (gpu/invariants.c, through the hooks
 * of ir.h); tile IR has no convert_layout. */
static void check_encodings(Verifier *v, const Op *op)
{
	if (!v->f->gpu) {
		if (op->code == OP_CONVERT_LAYOUT)
			fail(v, op, "convert_layout outside GPU IR");
		return;
	}
	const IrGpuHooks *h = ir_gpu_hooks();
	if (!h) {
		fail(v, op, "GPU IR, but gpu/ has installed no checks of it (gpu_install_ir_hooks)");
		return;
	}
	StrBuf why = {0};
	if (!h->check_op(v->f, op, &why))
		fail(v, op, "%s", why.data ? why.data : "a GPU IR invariant does not hold");
	sb_free(&why);
}

static void walk_op(Verifier *v, const Region *r, const Op *op)
{
	if (op->code >= OP_COUNT) {
		fail(v, op, "unknown op code %d", (int)op->code);
		return;
	}
	if (op->parent != r) {
		fail(v, op, "op's parent link does not name its region");
		return;
	}
	if (op->n_operands < 0 || (op->n_operands && !op->operands) || op->n_results < 0 ||
	    (op->n_results && !op->results)) {
		fail(v, op, "operand or result list is missing");
		return;
	}
	if (op->n_regions != op_regions(op->code) || (op->n_regions && !op->regions)) {
		fail(v, op, "has %d regions, expected %d", op->n_regions, op_regions(op->code));
		return;
	}
	for (int i = 0; i < op->n_operands; i++)
		if (!use(v, op, i))
			return;
	for (int i = 0; i < op->n_results; i++) {
		Value *res = op->results[i];
		if (res && (res->def != op || res->index != i)) {
			fail(v, op, "result %d (%%%d) does not link back to its op", i, res->id);
			return;
		}
	}
	/* Types are checked before regions: the region checks rely on them. */
	for (int i = 0; i < op->n_results; i++)
		if (!op->results[i]) {
			fail(v, op, "result %d is NULL", i);
			return;
		}
	for (int i = 0; i < op->n_regions; i++)
		if (op->regions[i].parent != op) {
			fail(v, op, "region %d does not link back to its op", i);
			return;
		}
	for (int i = 0; i < op->n_regions && !v->failed; i++)
		walk_region(v, &op->regions[i], op, i);
	if (v->failed)
		return;
	/* Results come into scope after the op (and are checked then: an op
	 * cannot use its own results, even inside its regions). */
	for (int i = 0; i < op->n_results; i++)
		if (!define(v, op, op->results[i], "result"))
			return;
	check_op(v, op);
	if (!v->failed)
		check_encodings(v, op);
}

static void walk_region(Verifier *v, const Region *r, const Op *parent, int index)
{
	if (++v->depth > VERIFY_MAX_DEPTH) {
		fail(v, parent, "regions nested more than %d deep", VERIFY_MAX_DEPTH);
		return;
	}
	if (r->n_args < 0 || (r->n_args && !r->args)) {
		fail(v, parent, "region argument list is missing");
		return;
	}
	for (int i = 0; i < r->n_args; i++) {
		Value *a = r->args[i];
		if (a && (a->owner != r || a->index != i || a->def)) {
			fail(v, parent, "region argument %d (%%%d) does not link back to its region", i, a->id);
			return;
		}
		if (!define(v, parent, a, "region argument"))
			return;
	}
	OpCode want = terminator_for(parent, index);
	const Op *prev = NULL;
	for (const Op *op = r->first; op; prev = op, op = op->next) {
		if (op->prev != prev) {
			fail(v, op, "op list links are inconsistent");
			return;
		}
		if (op->code < OP_COUNT && (op_flags(op->code) & OPF_TERM) && op->next) {
			fail(v, op, "terminator %s is not at the end of its region", op_name(op->code));
			return;
		}
		walk_op(v, r, op);
		if (v->failed)
			return;
	}
	if (r->last != prev) {
		fail(v, prev ? prev : parent, "region's last op link is inconsistent");
		return;
	}
	if (!prev || prev->code != want) {
		const char *in = parent ? op_name(parent->code) : "kernel";
		if (prev)
			fail(v, prev, "%s region %d ends with %s, expected %s", in, index, op_name(prev->code), op_name(want));
		else
			fail(v, parent, "%s region %d is empty, expected it to end with %s", in, index, op_name(want));
		return;
	}
	/* Leave the region: its values go out of scope. */
	for (int i = 0; i < r->n_args; i++)
		v->live[r->args[i]->id] = false;
	for (const Op *op = r->first; op; op = op->next)
		for (int i = 0; i < op->n_results; i++)
			v->live[op->results[i]->id] = false;
	v->depth--;
}

/* Every non-const parameter is the body's argument of the same position. */
static void check_params(Verifier *v)
{
	const IrFunc *f = v->f;
	if (f->n_params < 0 || (f->n_params && !f->params)) {
		fail(v, NULL, "parameter list is missing");
		return;
	}
	int k = 0;
	for (int i = 0; i < f->n_params; i++) {
		const IrParam *p = &f->params[i];
		if (!p->value)
			continue;
		if (k >= f->body.n_args || !f->body.args || f->body.args[k] != p->value) {
			fail(v, NULL, "parameter %d (%s) is not the kernel body's argument %d", i, p->name ? p->name : "?", k);
			return;
		}
		k++;
	}
	if (k != f->body.n_args && f->n_params > 0)
		fail(v, NULL, "the kernel body has %d arguments for %d parameters", f->body.n_args, k);
}

bool ir_verify(const IrFunc *f, Diag *diag, const char *after_pass)
{
	Verifier v = {.f = f, .diag = diag, .pass = after_pass};
	if (f->n_values < 0) {
		fail(&v, NULL, "value count %d is negative", f->n_values);
		return false;
	}
	size_t n = (size_t)f->n_values + 1;
	v.defs = calloc(n, sizeof *v.defs);
	v.live = calloc(n, sizeof *v.live);
	v.uses = calloc(n, sizeof *v.uses);
	if (!v.defs || !v.live || !v.uses) {
		fail(&v, NULL, "out of memory (%d values)", f->n_values);
	} else {
		check_params(&v);
		if (!v.failed && f->body.parent)
			fail(&v, NULL, "the kernel body has a parent op");
		if (!v.failed)
			walk_region(&v, &f->body, NULL, 0);
		/* Use counts: what each value says against the operand slots seen. */
		for (int i = 0; i < f->n_values && !v.failed; i++) {
			Value *val = v.defs[i];
			if (val && val->uses != v.uses[i])
				fail(&v, val->def, "%%%d counts %d use%s, has %d", i, val->uses, val->uses == 1 ? "" : "s", v.uses[i]);
		}
	}
	free(v.defs);
	free(v.live);
	free(v.uses);
	return !v.failed;
}
