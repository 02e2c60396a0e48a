/* canonicalize.c: constant folding and local simplification (docs/ir.md,
 * "canonicalize").
 *
 * Folding must give exactly what the interpreter computes at run time, so
 * it folds only where that result is pinned down: integers wrap at their
 * width, division truncates, and whatever the language leaves undefined or
 * to the target (division by zero, INT_MIN / -1, shifts by the width or
 * more, NaN or out-of-range float to integer, transcendental functions) is
 * left for run time. Floats compute in double and round once with the
 * interpreter's own conversions (fpconv.c), as the interpreter (interp/elementwise.c) does. */
#include "ir/ir.h"

#include <math.h>
#include <string.h>

/* x rounded to float kind k, as the interpreter rounds (fpconv.c: once,
 * from the double, to nearest even; fp8 saturates). */
static bool round_to(ScalarKind k, double x, double *out)
{
	*out = fp_round(k, x);
	return true;
}

/* ---- scalar folding ------------------------------------------------------ */

static bool is_const(const Value *v) { return v && v->def && v->def->code == OP_CONST; }
static int64_t ci(const Value *v) { return v->def->ival; }
static double cf(const Value *v) { return v->def->fval; }

static int64_t int_min(ScalarKind k) { return ir_int_normalize(k, UINT64_C(1) << (scalar_bits(k) - 1)); }

/* An integer op on normalized values of kind k. i1 is unsigned (0 and 1),
 * as in the interpreter. */
static bool fold_int(const Op *op, ScalarKind k, const int64_t *a, int64_t *out)
{
	int w = scalar_bits(k);
	bool sgn = scalar_is_signed(k) && k != SK_I1;
	uint64_t x = (uint64_t)a[0], y = (uint64_t)a[1];
	uint64_t r;
	switch (op->code) {
	case OP_ADD: r = x + y; break;
	case OP_SUB: r = x - y; break;
	case OP_MUL: r = x * y; break;
	case OP_DIV:
	case OP_REM:
		if (y == 0 || (sgn && a[0] == int_min(k) && a[1] == -1))
			return false;
		if (sgn)
			r = (uint64_t)(op->code == OP_DIV ? a[0] / a[1] : a[0] % a[1]);
		else
			r = op->code == OP_DIV ? x / y : x % y;
		break;
	case OP_AND: r = x & y; break;
	case OP_OR: r = x | y; break;
	case OP_XOR: r = x ^ y; break;
	case OP_SHL:
	case OP_SHR:
		if (a[1] < 0 || a[1] >= w)
			return false;
		if (op->code == OP_SHL)
			r = x << a[1];
		else
			r = sgn ? (uint64_t)(a[0] >> a[1]) : x >> a[1];
		break;
	case OP_MIN:
	case OP_MAX: {
		bool lt = sgn ? a[0] < a[1] : x < y;
		r = (op->code == OP_MIN) == lt ? x : y;
		break;
	}
	case OP_UMULHI: {
		uint64_t m = w == 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1;
		if (w == 64)
			r = (uint64_t)(((unsigned __int128)x * y) >> 64);
		else
			r = ((x & m) * (y & m)) >> w;
		break;
	}
	case OP_NEG: r = 0 - x; break;
	case OP_NOT: r = ~x; break;
	case OP_ABS: r = sgn && a[0] < 0 ? 0 - x : x; break;
	case OP_FMA: r = x * y + (uint64_t)a[2]; break;
	default:
		return false;
	}
	*out = ir_int_normalize(k, r);
	return true;
}

/* A float op on values of kind k: computed in double and rounded once to
 * k, which for + - * / and sqrt is the correctly rounded result of k (a
 * double has more than twice the precision of f32 and every narrower kind). */
static bool fold_float(const Op *op, ScalarKind k, const double *a, double *out)
{
	double r;
	switch (op->code) {
	case OP_ADD: r = a[0] + a[1]; break;
	case OP_SUB: r = a[0] - a[1]; break;
	case OP_MUL: r = a[0] * a[1]; break;
	case OP_DIV: r = a[0] / a[1]; break;
	case OP_REM: r = fmod(a[0], a[1]); break; /* exact */
	case OP_FMA:
		r = fp_fma(k, a[0], a[1], a[2]); /* one rounding, as the interpreter */
		break;
	default:
		goto common;
	}
	return round_to(k, r, out);
common:
	/* exact in every type: no rounding (fp8 included) */
	switch (op->code) {
	case OP_NEG: r = -a[0]; break;
	case OP_ABS: r = fabs(a[0]); break;
	case OP_MIN:
	case OP_MAX: {
		/* maximum/minimum: a NaN gives the other operand (or itself with
		 * propagate_nan); -0.0 is below +0.0 */
		double x = a[0], y = a[1];
		bool mx = op->code == OP_MAX;
		if (isnan(x) || isnan(y))
			r = op->attr[0] ? (isnan(x) ? x : y) : (isnan(x) ? y : x);
		else if (x == y)
			r = (signbit(x) != 0) == mx ? y : x;
		else
			r = mx == (x > y) ? x : y;
		break;
	}
	case OP_MATH:
		/* floor, ceil, trunc, rint, round and sqrt are exact or correctly rounded everywhere;
		 * the others differ between libm and the GPU's approximations */
		switch (op->attr[0]) {
		case MATH_FLOOR: r = floor(a[0]); break;
		case MATH_CEIL: r = ceil(a[0]); break;
		case MATH_TRUNC: r = trunc(a[0]); break;
		case MATH_RINT: r = rint(a[0]); break;
		case MATH_ROUND: r = round(a[0]); break;
		case MATH_SQRT:
		case MATH_SQRT_RN:
			return round_to(k, sqrt(a[0]), out);
		default:
			return false;
		}
		break;
	default:
		return false;
	}
	*out = r;
	return true;
}

static bool fold_cmp(int64_t pred, Type t, const Value *a, const Value *b, int64_t *out)
{
	ScalarKind k = (ScalarKind)t.scalar;
	bool r;
	if (t.ptr)
		return false;
	if (scalar_is_float(k)) {
		double x = cf(a), y = cf(b);
		switch (pred) {
		case CMP_EQ: r = x == y; break;
		case CMP_NE: r = x != y; break;
		case CMP_LT: r = x < y; break;
		case CMP_LE: r = x <= y; break;
		case CMP_GT: r = x > y; break;
		case CMP_GE: r = x >= y; break;
		default: return false;
		}
	} else {
		int64_t x = ci(a), y = ci(b);
		bool sgn = scalar_is_signed(k) && k != SK_I1; /* false < true */
		int c = sgn ? (x > y) - (x < y) : ((uint64_t)x > (uint64_t)y) - ((uint64_t)x < (uint64_t)y);
		switch (pred) {
		case CMP_EQ: r = c == 0; break;
		case CMP_NE: r = c != 0; break;
		case CMP_LT: r = c < 0; break;
		case CMP_LE: r = c <= 0; break;
		case CMP_GT: r = c > 0; break;
		case CMP_GE: r = c >= 0; break;
		default: return false;
		}
	}
	*out = r;
	return true;
}

/* cast of a constant of kind `from` to kind `to`. */
static bool fold_cast(ScalarKind from, ScalarKind to, const Value *a, int64_t *iout, double *fout)
{
	if (scalar_is_int(from) && scalar_is_int(to)) {
		/* i1 converts as 0 and 1; to i1 is != 0 */
		*iout = to == SK_I1 ? ci(a) != 0 : ir_int_normalize(to, (uint64_t)ci(a));
		return true;
	}
	if (scalar_is_int(from)) {
		*fout = fp_from_int(to, ci(a), scalar_is_unsigned(from));
		return true;
	}
	double x = cf(a);
	if (scalar_is_int(to)) {
		/* truncation toward zero, in range only; NaN is not folded */
		if (isnan(x))
			return false;
		if (to == SK_I1) {
			*iout = x != 0;
			return true;
		}
		double t = trunc(x);
		int w = scalar_bits(to);
		double lo = scalar_is_unsigned(to) ? 0 : -ldexp(1, w - 1);
		double hi = scalar_is_unsigned(to) ? ldexp(1, w) : ldexp(1, w - 1); /* exclusive */
		if (!(t >= lo && t < hi))
			return false;
		*iout = ir_int_normalize(to, scalar_is_unsigned(to) ? (uint64_t)t : (uint64_t)(int64_t)t);
		return true;
	}
	return round_to(to, x, fout);
}

/* ---- editing ------------------------------------------------------------- */

typedef struct Canon {
	IrFunc *f;
	Diag *diag;
	IrForward fwd; /* results replaced in this sweep */
	bool changed;
	bool oom;
} Canon;

/* A constant of type t (a block type splats) placed before op `at`. */
static Value *make_const(Canon *c, Op *at, Type t, int64_t ival, double fval)
{
	Op *k = ir_insert_before(c->f, at, OP_CONST, NULL, 0, &t, 1);
	if (!k) {
		c->oom = true;
		return NULL;
	}
	k->ival = ival;
	k->fval = fval;
	return k->results[0];
}

/* Records that `from` is now v: later uses are rewritten as the walk
 * reaches them. */
static bool forward(Canon *c, Value *from, Value *v)
{
	ir_forward_set(&c->fwd, from, v);
	c->oom |= c->fwd.oom;
	return !c->fwd.oom;
}

/* Replaces op's only result by v and removes op. */
static void replace(Canon *c, Op *op, Value *v)
{
	if (!v || !forward(c, op->results[0], v))
		return;
	ir_remove(op);
	c->changed = true;
}

static bool is_int_const(const Value *v, int64_t x) { return is_const(v) && !v->type.ptr && scalar_is_int((ScalarKind)v->type.scalar) && ci(v) == x; }

static bool is_float_const(const Value *v, double x, bool neg_zero)
{
	return is_const(v) && scalar_is_float((ScalarKind)v->type.scalar) && cf(v) == x &&
	       (x != 0 || (signbit(cf(v)) != 0) == neg_zero);
}

static bool is_commutative(OpCode code)
{
	return code == OP_ADD || code == OP_MUL || code == OP_AND || code == OP_OR || code == OP_XOR ||
	       code == OP_MIN || code == OP_MAX;
}

static void swap_operands(Op *op, int i, int j)
{
	Value *t = op->operands[i];
	op->operands[i] = op->operands[j];
	op->operands[j] = t;
}

/* Folds an element-wise op whose operands are all constants. */
static bool fold_elementwise(Canon *c, Op *op)
{
	for (int i = 0; i < op->n_operands; i++)
		if (!is_const(op->operands[i]))
			return false;
	Type rt = op->results[0]->type;
	ScalarKind k = (ScalarKind)rt.scalar;
	int64_t iv = 0;
	double fv = 0;
	switch (op->code) {
	case OP_SELECT:
		replace(c, op, op->operands[ci(op->operands[0]) ? 1 : 2]);
		return true;
	case OP_CMP:
		if (!fold_cmp(op->attr[0], op->operands[0]->type, op->operands[0], op->operands[1], &iv))
			return false;
		break;
	case OP_CAST:
		if (!fold_cast((ScalarKind)op->operands[0]->type.scalar, k, op->operands[0], &iv, &fv))
			return false;
		break;
	case OP_ADDPTR:
	case OP_BITCAST:
	case OP_PTR_TO_INT:
	case OP_INT_TO_PTR:
		return false;
	default:
		if (op->n_operands > 3 || rt.ptr)
			return false;
		if (scalar_is_int(k)) {
			int64_t a[3] = {0};
			for (int i = 0; i < op->n_operands; i++)
				a[i] = ci(op->operands[i]);
			if (!fold_int(op, k, a, &iv))
				return false;
		} else {
			double a[3] = {0};
			for (int i = 0; i < op->n_operands; i++)
				a[i] = cf(op->operands[i]);
			if (!fold_float(op, k, a, &fv))
				return false;
		}
		break;
	}
	replace(c, op, make_const(c, op, rt, iv, fv));
	return true;
}

/* x op identity, x op x, and friends: the op becomes one of its operands or a constant. */
static bool simplify_elementwise(Canon *c, Op *op)
{
	Value *a = op->n_operands > 0 ? op->operands[0] : NULL;
	Value *b = op->n_operands > 1 ? op->operands[1] : NULL;
	Type t = op->results[0]->type;
	ScalarKind k = (ScalarKind)t.scalar;
	bool ints = !t.ptr && scalar_is_int(k);
	bool floats = !t.ptr && scalar_is_float(k);
	int64_t ones = ints ? ir_int_normalize(k, ~UINT64_C(0)) : 0;

	/* constants to the right of commutative ops, so that cse sees one form */
	if (is_commutative(op->code) && is_const(a) && !is_const(b)) {
		swap_operands(op, 0, 1);
		c->changed = true;
		a = op->operands[0];
		b = op->operands[1];
	}
	switch (op->code) {
	case OP_ADD:
		if ((ints && is_int_const(b, 0)) || (floats && is_float_const(b, 0, true)))
			goto to_a;
		break;
	case OP_SUB:
		if ((ints && is_int_const(b, 0)) || (floats && is_float_const(b, 0, false)))
			goto to_a;
		if (ints && a == b)
			goto to_zero;
		break;
	case OP_MUL:
		if ((ints && is_int_const(b, 1) && k != SK_I1) || (floats && is_float_const(b, 1, false)))
			goto to_a;
		if (ints && is_int_const(b, 0))
			goto to_zero;
		break;
	case OP_DIV:
		if ((ints && is_int_const(b, 1) && k != SK_I1) || (floats && is_float_const(b, 1, false)))
			goto to_a;
		break;
	case OP_AND:
		if (is_int_const(b, ones) || a == b)
			goto to_a;
		if (is_int_const(b, 0))
			goto to_zero;
		break;
	case OP_OR:
		if (is_int_const(b, 0) || a == b)
			goto to_a;
		if (is_int_const(b, ones))
			goto to_b;
		break;
	case OP_XOR:
		if (is_int_const(b, 0))
			goto to_a;
		if (a == b)
			goto to_zero;
		break;
	case OP_SHL:
	case OP_SHR:
		if (is_int_const(b, 0))
			goto to_a;
		break;
	case OP_MIN:
	case OP_MAX:
		if (a == b)
			goto to_a;
		break;
	case OP_SELECT:
		if (op->operands[1] == op->operands[2]) {
			replace(c, op, op->operands[1]);
			return true;
		}
		if (is_const(a)) {
			replace(c, op, op->operands[ci(a) ? 1 : 2]);
			return true;
		}
		break;
	case OP_NEG:
	case OP_NOT:
		/* double negation */
		if (a->def && a->def->code == op->code) {
			replace(c, op, ir_forward_get(&c->fwd, a->def->operands[0]));
			return true;
		}
		break;
	case OP_CAST:
	case OP_BITCAST:
		if (type_eq(a->type, t))
			goto to_a;
		break;
	default:
		break;
	}
	return false;
to_a:
	replace(c, op, a);
	return true;
to_b:
	replace(c, op, b);
	return true;
to_zero:
	replace(c, op, make_const(c, op, t, 0, 0));
	return true;
}

/* splat, broadcast, reshape, expand_dims, trans: a constant stays a
 * constant, a splat stays a splat, and no change of type is no op. */
static bool simplify_shape(Canon *c, Op *op)
{
	Value *a = op->operands[0];
	Type t = op->results[0]->type;
	if (is_const(a)) {
		replace(c, op, make_const(c, op, t, a->def->ival, a->def->fval));
		return true;
	}
	if (op->code == OP_SPLAT)
		return false;
	if (type_eq(a->type, t)) {
		bool identity = true;
		for (int i = 0; op->code == OP_TRANS && i < t.rank; i++)
			identity = identity && op->attr[i] == i;
		if (identity) {
			replace(c, op, a);
			return true;
		}
	}
	if (a->def && a->def->code == OP_SPLAT) {
		Value *s = ir_forward_get(&c->fwd, a->def->operands[0]);
		Op *n = ir_insert_before(c->f, op, OP_SPLAT, &s, 1, &t, 1);
		if (!n) {
			c->oom = true;
			return false;
		}
		replace(c, op, n->results[0]);
		return true;
	}
	return false;
}

/* A for loop that runs zero times gives its initial values. It runs while
 * iv < ub for a positive step, while iv > ub for a negative one (signed
 * types); a step of 0 is a run-time error, left to run time. */
static bool fold_for(Canon *c, Op *op)
{
	Value *lb = op->operands[0], *ub = op->operands[1], *st = op->operands[2];
	if (!is_const(lb) || !is_const(ub) || !is_const(st) || ci(st) == 0)
		return false;
	bool empty;
	if (!scalar_is_signed((ScalarKind)lb->type.scalar))
		empty = (uint64_t)ci(lb) >= (uint64_t)ci(ub);
	else if (ci(st) > 0)
		empty = ci(lb) >= ci(ub);
	else
		empty = ci(lb) <= ci(ub);
	if (!empty)
		return false;
	for (int i = 0; i < op->n_results; i++)
		forward(c, op->results[i], op->operands[3 + i]);
	ir_remove(op);
	c->changed = true;
	return true;
}

/* An if on a constant: the chosen region's ops move before it, its
 * yielded values replace the results. */
static bool fold_if(Canon *c, Op *op)
{
	if (!is_const(op->operands[0]))
		return false;
	Region *r = &op->regions[ci(op->operands[0]) ? 0 : 1];
	Op *yield = r->last;
	while (r->first != yield) {
		Op *m = r->first;
		ir_unlink(m);
		ir_link_before(m, op);
	}
	for (int i = 0; i < op->n_results; i++)
		forward(c, op->results[i], yield->operands[i]);
	ir_remove(op);
	c->changed = true;
	return true;
}

static void canon_region(Canon *c, Region *r);

static void canon_op(Canon *c, Op *op)
{
	ir_forward_operands(&c->fwd, op);
	int fl = op_flags(op->code);
	if (fl & OPF_ELEMWISE) {
		if (!fold_elementwise(c, op))
			simplify_elementwise(c, op);
		return;
	}
	switch (op->code) {
	case OP_SPLAT:
	case OP_BROADCAST:
	case OP_RESHAPE:
	case OP_EXPAND_DIMS:
	case OP_TRANS:
		simplify_shape(c, op);
		return;
	case OP_FOR:
		if (fold_for(c, op))
			return;
		break;
	case OP_IF:
		if (fold_if(c, op))
			return;
		break;
	default:
		break;
	}
	for (int i = 0; i < op->n_regions; i++)
		canon_region(c, &op->regions[i]);
}

static void canon_region(Canon *c, Region *r)
{
	for (Op *op = r->first, *next; op && !c->oom; op = next) {
		next = op->next;
		canon_op(c, op);
	}
}

bool ir_canonicalize(IrFunc *f, Diag *diag)
{
	Canon c = {.f = f, .diag = diag};
	/* to a fixed point; each round only shrinks or settles the IR, the
	 * bound is a guard */
	for (int round = 0; round < 100; round++) {
		c.changed = false;
		canon_region(&c, &f->body);
		/* uses the walk did not reach (ops an if moved out of its branch) */
		ir_forward_region(&c.fwd, &f->body);
		ir_forward_clear(&c.fwd);
		if (c.oom || !c.changed)
			break;
	}
	ir_forward_free(&c.fwd);
	if (c.oom) {
		diag_plain(diag, DIAG_ERROR, "out of memory in canonicalize");
		return false;
	}
	return true;
}
