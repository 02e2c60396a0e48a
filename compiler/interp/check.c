/* check.c: what the interpreter relies on, checked once before a run. */
#include "interp/interp_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- checking the IR ---------------------------------------------------------
 *
 * What the interpreter relies on, checked once before running: every operand
 * defined before its use, operand and result counts, and shapes (so that no
 * loop reads past a buffer). A violation is a bug of the compiler, reported
 * as "malformed IR". */

typedef struct Check {
	const IrFunc *f;
	Diag *diag;
	bool *defined; /* by value id */
	bool ok;
} Check;

static bool bad(Check *c, const Op *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool bad(Check *c, const Op *op, const char *fmt, ...)
{
	StrBuf sb = {0};
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	diag_error(c->diag, op->loc, "malformed IR in kernel '%s': '%s' %s", c->f->name, op_name(op->code),
	           sb.data ? sb.data : "");
	sb_free(&sb);
	c->ok = false;
	return false;
}

static bool same_elem(Type a, Type b) { return a.scalar == b.scalar && a.ptr == b.ptr; }
static bool is_int_t(Type t) { return !t.ptr && scalar_is_int((ScalarKind)t.scalar); }
static bool is_i1(Type t) { return !t.ptr && t.scalar == SK_I1; }

/* Operand i has n elements (or one, repeated). */
static bool fits(const Op *op, int i, int64_t n)
{
	int64_t m = type_numel(op->operands[i]->type);
	return m == n || m == 1;
}

static bool valid_type(Type t)
{
	if (t.scalar >= SK_COUNT || t.rank > BLK_MAX_RANK || t.ptr > BLK_MAX_PTR_DEPTH)
		return false;
	int64_t n = 1;
	for (int d = 0; d < t.rank; d++) {
		if (t.shape[d] < 1 || t.shape[d] > BLK_MAX_NUMEL)
			return false;
		n *= t.shape[d];
		if (n > BLK_MAX_NUMEL)
			return false;
	}
	return true;
}

static bool check_region(Check *c, const Region *r, const Op *owner);

/* The terminator that ends r, if it is of that kind with n operands. */
static const Op *ends_with(const Region *r, OpCode code, int n)
{
	const Op *t = r->last;
	return t && t->code == code && (n < 0 || t->n_operands == n) ? t : NULL;
}

/* vals[i] have the types of tv[i] (elements and count). */
static bool match_types(Value *const *vals, Value *const *tv, int n)
{
	for (int i = 0; i < n; i++)
		if (!same_elem(vals[i]->type, tv[i]->type) || type_numel(vals[i]->type) != type_numel(tv[i]->type))
			return false;
	return true;
}

/* Element-wise ops: operand counts, element counts and types. */
static bool check_elementwise(Check *c, const Op *op)
{
	int no = op->n_operands, nr = op->n_results;
	Type r0 = nr ? op->results[0]->type : (Type){0}, o0 = no ? op->operands[0]->type : (Type){0};
	int64_t n = type_numel(r0);
	int want_ops;
	switch (op->code) {
	case OP_NEG: case OP_NOT: case OP_ABS: case OP_MATH: case OP_CAST: case OP_BITCAST:
	case OP_PTR_TO_INT: case OP_INT_TO_PTR:
		want_ops = 1;
		break;
	case OP_SELECT: case OP_FMA:
		want_ops = 3;
		break;
	default:
		want_ops = 2;
	}
	if (no != want_ops || nr != 1)
		return bad(c, op, "takes %d operands and gives 1 result", want_ops);
	for (int i = 0; i < no; i++)
		if (!fits(op, i, n))
			return bad(c, op, "operand %d has %lld elements, the result %lld", i,
			           (long long)type_numel(op->operands[i]->type), (long long)n);
	Type o1 = no > 1 ? op->operands[1]->type : o0;
	switch (op->code) {
	case OP_ADDPTR:
		if (!r0.ptr || !same_elem(o0, r0) || !is_int_t(o1))
			return bad(c, op, "takes a pointer and an integer offset");
		break;
	case OP_CMP:
		if (!is_i1(r0) || !same_elem(o0, o1) || op->attr[0] < CMP_EQ || op->attr[0] > CMP_GE)
			return bad(c, op, "compares two operands of one type into i1");
		break;
	case OP_SELECT:
		if (!is_i1(o0) || !same_elem(o1, r0) || !same_elem(op->operands[2]->type, r0))
			return bad(c, op, "takes an i1 condition and two values of the result's type");
		break;
	case OP_CAST:
		if ((o0.ptr != 0) != (r0.ptr != 0) && !(o0.ptr && r0.ptr))
			return bad(c, op, "converts elements (pointers: use ptr_to_int, int_to_ptr)");
		break;
	case OP_BITCAST:
		if (elem_bytes(o0) != elem_bytes(r0) || (o0.ptr != 0) != (r0.ptr != 0) ||
		    (!o0.ptr && scalar_bits((ScalarKind)o0.scalar) != scalar_bits((ScalarKind)r0.scalar)))
			return bad(c, op, "needs types of the same width");
		break;
	case OP_PTR_TO_INT:
		if (!o0.ptr || !is_int_t(r0))
			return bad(c, op, "turns a pointer into an integer");
		break;
	case OP_INT_TO_PTR:
		if (!is_int_t(o0) || !r0.ptr)
			return bad(c, op, "turns an integer into a pointer");
		break;
	case OP_MATH:
		if (!is_float_t(r0) || !same_elem(o0, r0) || op->attr[0] < 0 || op->attr[0] >= MATH_COUNT)
			return bad(c, op, "applies a known function to floats");
		break;
	case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR: case OP_NOT: case OP_UMULHI:
		for (int i = 0; i < no; i++)
			if (!is_int_t(op->operands[i]->type) || !same_elem(op->operands[i]->type, r0))
				return bad(c, op, "takes integers of the result's type");
		break;
	default: /* add sub mul div rem min max neg abs fma */
		if (r0.ptr)
			return bad(c, op, "does not take pointers");
		if (op->code == OP_DIV && (op->attr[0] < 0 || op->attr[0] > 1 || (op->attr[0] && !is_float_t(r0))))
			return bad(c, op, "rounds to nearest (rn) only floats");
		for (int i = 0; i < no; i++)
			if (!same_elem(op->operands[i]->type, r0))
				return bad(c, op, "takes operands of the result's type");
	}
	return true;
}

/* sort, topk (values and positions) and histogram (counts); true for other ops. */
static bool check_sorting(Check *c, const Op *op)
{
	if (op->code != OP_SORT && op->code != OP_TOPK && op->code != OP_HISTOGRAM)
		return true;
	int no = op->n_operands, nr = op->n_results;
	Type r0 = nr ? op->results[0]->type : (Type){0}, o0 = no ? op->operands[0]->type : (Type){0};
	int64_t n = type_numel(r0);
	if (op->code != OP_HISTOGRAM) {
		int64_t axis = op->attr[0], k = op->code == OP_TOPK ? op->attr[1] : 0;
		if (no != 1 || nr < 1 || nr > 2 || (op->code == OP_TOPK && nr != 2) || o0.rank == 0 || o0.ptr || axis < 0 ||
		    axis >= o0.rank || !same_elem(o0, r0))
			return bad(c, op, "takes a block and gives its values [and their positions] along a valid axis");
		if (op->code == OP_TOPK && (k < 1 || k > o0.shape[axis]))
			return bad(c, op, "takes k from 1 to the axis' length");
		int64_t want = op->code == OP_TOPK ? type_numel(o0) / o0.shape[axis] * k : type_numel(o0);
		for (int i = 0; i < nr; i++)
			if (type_numel(op->results[i]->type) != want || (i && !is_int_t(op->results[i]->type)))
				return bad(c, op, "gives results of the wrong size or type");
		return true;
	}
	if (no < 1 || no > 2 || nr != 1 || o0.rank == 0 || !is_int_t(o0) || o0.ptr || !is_int_t(r0) || op->attr[0] < 1 ||
	    n != op->attr[0] || (no == 2 && type_numel(op->operands[1]->type) != type_numel(o0)))
		return bad(c, op, "takes an integer block [and a mask of its size] and gives num_bins counts");
	return true;
}

/* The op code, regions, operands defined before their use, and types. */
static bool check_values(Check *c, const Op *op)
{
	int no = op->n_operands, nr = op->n_results;
	if (op->code >= OP_COUNT)
		return bad(c, op, "has an unknown op code");
	if (op->n_regions != op_regions(op->code) || (op->n_regions && !op->regions))
		return bad(c, op, "has %d regions", op->n_regions);
	for (int i = 0; i < no; i++)
		if (!op->operands[i] || op->operands[i]->id < 0 || op->operands[i]->id >= c->f->n_values ||
		    !c->defined[op->operands[i]->id])
			return bad(c, op, "uses operand %d before it is defined (or from outside its scope)", i);
	for (int i = 0; i < no; i++)
		if (!valid_type(op->operands[i]->type))
			return bad(c, op, "has an operand of an invalid type");
	for (int i = 0; i < nr; i++)
		if (!op->results[i] || op->results[i]->id < 0 || op->results[i]->id >= c->f->n_values ||
		    !valid_type(op->results[i]->type))
			return bad(c, op, "has a bad result %d", i);
	return true;
}

/* gather, sreg, inline_asm (which the interpreter refuses). */
static bool check_new_op(Check *c, const Op *op)
{
	int no = op->n_operands, nr = op->n_results;
	Type o0 = no ? op->operands[0]->type : (Type){0}, r0 = nr ? op->results[0]->type : (Type){0};
	switch (op->code) {
	case OP_GATHER: {
		Type it = no > 1 ? op->operands[1]->type : (Type){0};
		if (no != 2 || nr != 1 || o0.rank < 1 || it.rank != o0.rank || !is_int_t(it) || !same_elem(o0, r0) ||
		    type_numel(it) != type_numel(r0) || op->attr[0] < 0 || op->attr[0] >= o0.rank)
			return bad(c, op, "takes a block and integer indices of its rank, gives the indices' shape");
		for (int d = 0; d < o0.rank; d++)
			if ((d != op->attr[0] && it.shape[d] != o0.shape[d]) || it.shape[d] != r0.shape[d])
				return bad(c, op, "needs indices of the block's shape but along its axis");
		return true;
	}
	case OP_INLINE_ASM:
		diag_error(c->diag, op->loc,
		           "inline_asm cannot run on the interpreter (it does not read PTX); run this kernel on the GPU, "
		           "or write the operation with builtins");
		c->ok = false;
		return false;
	default:
		if (no || nr != 1 || r0.rank || !is_int_t(r0))
			return bad(c, op, "gives an integer scalar");
		return true;
	}
}

static bool check_op(Check *c, const Op *op)
{
	int no = op->n_operands, nr = op->n_results;
	Type r0 = nr ? op->results[0]->type : (Type){0}, o0 = no ? op->operands[0]->type : (Type){0};
	int64_t n = type_numel(r0);
	if (!check_values(c, op))
		return false;
	if (op_flags(op->code) & OPF_ELEMWISE)
		return check_elementwise(c, op);
	if (op->code == OP_GATHER || op->code == OP_SREG || op->code == OP_INLINE_ASM)
		return check_new_op(c, op);

	int want_ops = -1, want_res = -1;

	switch (op->code) {
	case OP_CONST:
		want_ops = 0, want_res = 1;
		break;
	case OP_ARANGE:
		if (no || nr != 1 || r0.rank != 1 || !is_int_t(r0) || op->attr[1] - op->attr[0] != r0.shape[0])
			return bad(c, op, "gives an i32[end - start] block");
		break;
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS:
		if (no || nr != 1 || r0.rank || !is_int_t(r0) || op->attr[0] < 0 || op->attr[0] > 2)
			return bad(c, op, "gives an integer scalar for axis 0, 1 or 2");
		break;
	case OP_SPLAT:
		if (no != 1 || nr != 1 || type_numel(o0) != 1 || !same_elem(o0, r0))
			return bad(c, op, "repeats one element of the result's type");
		break;
	case OP_BROADCAST:
		if (no != 1 || nr != 1 || o0.rank != r0.rank || !same_elem(o0, r0))
			return bad(c, op, "keeps the rank and element type");
		for (int d = 0; d < r0.rank; d++)
			if (o0.shape[d] != r0.shape[d] && o0.shape[d] != 1)
				return bad(c, op, "stretches only dimensions of size 1");
		break;
	case OP_EXPAND_DIMS:
	case OP_RESHAPE:
	case OP_HINT:
	case OP_CONVERT_LAYOUT:
		if (no != 1 || nr != 1 || type_numel(o0) != n || !same_elem(o0, r0))
			return bad(c, op, "keeps the elements");
		break;
	case OP_TRANS: {
		bool seen[BLK_MAX_RANK] = {0};
		if (no != 1 || nr != 1 || o0.rank != r0.rank || !same_elem(o0, r0))
			return bad(c, op, "keeps the rank and element type");
		for (int d = 0; d < r0.rank; d++) {
			int64_t s = op->attr[d];
			if (s < 0 || s >= r0.rank || seen[s] || o0.shape[s] != r0.shape[d])
				return bad(c, op, "needs a permutation of the operand's dimensions");
			seen[s] = true;
		}
		break;
	}
	case OP_CAT:
		if (no != 2 || nr != 1 || !type_eq(o0, op->operands[1]->type) || o0.rank < 1 || r0.rank != o0.rank ||
		    !same_elem(o0, r0) || r0.shape[0] != 2 * o0.shape[0])
			return bad(c, op, "joins two blocks of one type along dimension 0");
		break;
	case OP_JOIN:
		if (no != 2 || nr != 1 || !type_eq(o0, op->operands[1]->type) || r0.rank != o0.rank + 1 ||
		    r0.shape[r0.rank - 1] != 2 || type_numel(r0) != 2 * type_numel(o0) || !same_elem(o0, r0))
			return bad(c, op, "stacks two blocks of one type along a new last dimension");
		break;
	case OP_SPLIT:
		if (no != 1 || nr != 2 || o0.rank < 1 || o0.shape[o0.rank - 1] != 2 || !same_elem(o0, r0) ||
		    !type_eq(r0, op->results[1]->type) || 2 * n != type_numel(o0))
			return bad(c, op, "halves a block whose last dimension is 2");
		break;
	case OP_LOAD: {
		int k = 1 + !!(op->attr[0] & MEMF_MASK) + !!(op->attr[0] & MEMF_OTHER);
		/* a TMA load's offsets after them (the GPU's business) */
		int extra = op->attr[0] & MEMF_TMA ? o0.rank : 0;
		if (no != k + extra || nr != 1 || !o0.ptr || !same_elem(type_pointee(o0), r0) || type_numel(o0) != n)
			return bad(c, op, "takes a pointer, then a mask and other as its flags say");
		if ((op->attr[0] & MEMF_MASK) && (!is_i1(op->operands[1]->type) || !fits(op, 1, n)))
			return bad(c, op, "needs an i1 mask of the pointer's shape");
		if ((op->attr[0] & MEMF_OTHER) && (!same_elem(op->operands[k - 1]->type, r0) || !fits(op, k - 1, n)))
			return bad(c, op, "needs 'other' of the loaded type");
		break;
	}
	case OP_STORE: {
		int k = 2 + !!(op->attr[0] & MEMF_MASK);
		int64_t np = type_numel(o0);
		if (no != k + (op->attr[0] & MEMF_TMA ? o0.rank : 0) || nr || !o0.ptr || !same_elem(type_pointee(o0), op->operands[1]->type) || !fits(op, 1, np))
			return bad(c, op, "takes a pointer, a value of the pointee type, and a mask as its flags say");
		if (k == 3 && (!is_i1(op->operands[2]->type) || !fits(op, 2, np)))
			return bad(c, op, "needs an i1 mask of the pointer's shape");
		break;
	}
	case OP_ATOMIC_RMW: {
		int k = 2 + !!(op->attr[3] & MEMF_MASK);
		Type vt = type_pointee(o0);
		if (no != k || nr != 1 || !o0.ptr || !same_elem(vt, r0) || type_numel(o0) != n || !fits(op, 1, n) ||
		    !same_elem(op->operands[1]->type, vt) || (k == 3 && (!is_i1(op->operands[2]->type) || !fits(op, 2, n))))
			return bad(c, op, "takes a pointer, a value and a mask as its flags say; gives the old values");
		if (op->attr[0] < ATOM_ADD || op->attr[0] > ATOM_XCHG ||
		    (op->attr[0] >= ATOM_AND && op->attr[0] <= ATOM_XOR && !is_int_t(vt)) ||
		    (op->attr[0] != ATOM_XCHG && vt.ptr) || elem_bytes(vt) > 8)
			return bad(c, op, "has an operation its type does not allow");
		break;
	}
	case OP_DESC_LOAD:
	case OP_DESC_STORE: {
		bool store = op->code == OP_DESC_STORE;
		Type bt = store ? (no ? op->operands[no - 1]->type : (Type){0}) : r0;
		int r = bt.rank;
		if (r < 1 || no != 1 + 3 * r + store || nr != !store || !o0.ptr || o0.rank ||
		    !same_elem(type_pointee(o0), bt))
			return bad(c, op, "takes a base pointer, a shape, strides and offsets of the block's rank%s",
			           store ? ", and a value of the pointee type" : "");
		for (int i = 1; i <= 3 * r; i++)
			if (!type_eq(op->operands[i]->type, op->operands[1]->type) || !is_int_t(op->operands[i]->type) ||
			    op->operands[i]->type.rank)
				return bad(c, op, "needs integer scalars of one type for the shape, strides and offsets");
		break;
	}
	case OP_ATOMIC_CAS:
		if (no != 3 || nr != 1 || !o0.ptr || !same_elem(type_pointee(o0), r0) || type_numel(o0) != n ||
		    !same_elem(op->operands[1]->type, r0) || !same_elem(op->operands[2]->type, r0) || !fits(op, 1, n) ||
		    !fits(op, 2, n))
			return bad(c, op, "takes a pointer, the expected and the new values");
		break;
	case OP_REDUCE:
	case OP_SCAN: {
		const Region *rg = op->regions;
		int64_t axis = op->attr[0];
		if (no < 1 || nr != no || rg->n_args != 2 * no || axis < 0 || axis >= o0.rank)
			return bad(c, op, "takes n blocks, gives n results, has a region of 2n arguments and a valid axis");
		for (int i = 0; i < no; i++) {
			Type t = op->operands[i]->type, rt = op->results[i]->type;
			if (t.rank != o0.rank || memcmp(t.shape, o0.shape, sizeof t.shape) != 0)
				return bad(c, op, "needs operands of one shape");
			if (!same_elem(rt, t) || !same_elem(rg->args[i]->type, t) || !same_elem(rg->args[no + i]->type, t) ||
			    rg->args[i]->type.rank || rg->args[no + i]->type.rank)
				return bad(c, op, "needs scalar region arguments and results of its operands' element types");
			if (op->code == OP_SCAN ? !type_eq(rt, t) : type_numel(rt) * t.shape[axis] != type_numel(t))
				return bad(c, op, "has results of the wrong shape");
		}
		const Op *y = ends_with(rg, OP_YIELD, no);
		if (!y)
			return bad(c, op, "needs a region ending with a yield of %d values", no);
		break;
	}
	case OP_DOT: {
		Type b = no > 1 ? op->operands[1]->type : (Type){0}, acc = no > 2 ? op->operands[2]->type : (Type){0};
		if (no != 3 || nr != 1 || o0.rank != 2 || b.rank != 2 || acc.rank != 2 || !type_eq(acc, r0) ||
		    o0.shape[1] != b.shape[0] || o0.shape[0] != acc.shape[0] || b.shape[1] != acc.shape[1] || o0.ptr ||
		    b.ptr || r0.ptr)
			return bad(c, op, "takes a[M, K], b[K, N] and acc[M, N] and gives acc's type");
		break;
	}
	case OP_PHILOX:
		if (no != 2 || nr != 4 || type_numel(o0) != 1 || !is_int_t(o0) || !is_int_t(op->operands[1]->type) ||
		    type_numel(op->operands[1]->type) != n)
			return bad(c, op, "takes an integer seed and a block of counters, gives four blocks");
		for (int i = 0; i < 4; i++)
			if (!is_int_t(op->results[i]->type) || type_numel(op->results[i]->type) != n)
				return bad(c, op, "gives four integer blocks of the counters' shape");
		break;
	case OP_PRINT:
		want_res = 0;
		break;
	case OP_BARRIER:
		want_ops = 0, want_res = 0;
		break;
	case OP_ASSERT:
		if (no != 1 || nr || !is_i1(o0))
			return bad(c, op, "takes one i1 condition");
		break;
	case OP_FOR: {
		const Region *rg = op->regions;
		int nv = no - 3;
		if (no < 3 || nr != nv || rg->n_args != nv + 1)
			return bad(c, op, "takes lower bound, upper bound, step and initial values; its region an iv and the values");
		for (int i = 0; i < 3; i++)
			if (!is_int_t(op->operands[i]->type) || op->operands[i]->type.rank ||
			    !same_elem(op->operands[i]->type, o0) || !same_elem(rg->args[0]->type, o0) || rg->args[0]->type.rank)
				return bad(c, op, "needs integer scalar bounds and step of the iv's type");
		if (!match_types(op->operands + 3, rg->args + 1, nv) || !match_types(op->results, rg->args + 1, nv))
			return bad(c, op, "needs initial values, region arguments and results of the same types");
		const Op *y = ends_with(rg, OP_YIELD, nv);
		if (!y && !ends_with(rg, OP_RETURN, -1))
			return bad(c, op, "needs a region ending with a yield of %d values", nv);
		break;
	}
	case OP_IF:
		if (no != 1 || !is_i1(o0) || o0.rank)
			return bad(c, op, "takes a scalar i1 condition");
		for (int i = 0; i < 2; i++) {
			if (op->regions[i].n_args)
				return bad(c, op, "has regions without arguments");
			if (nr && !ends_with(&op->regions[i], OP_YIELD, nr) && !ends_with(&op->regions[i], OP_RETURN, -1))
				return bad(c, op, "needs both regions to end with a yield of %d values", nr);
		}
		break;
	case OP_WHILE: {
		const Region *b = &op->regions[0], *a = &op->regions[1];
		if (b->n_args != no || a->n_args != nr || !match_types(op->operands, b->args, no))
			return bad(c, op, "needs region 0 to take its initial values and region 1 its results");
		const Op *cd = ends_with(b, OP_CONDITION, nr + 1);
		if (!cd && !ends_with(b, OP_RETURN, -1))
			return bad(c, op, "needs region 0 to end with a condition forwarding %d values", nr);
		if (cd && !match_types(cd->operands + 1, a->args, nr))
			return bad(c, op, "forwards values of other types than region 1 takes");
		if (!match_types(op->results, a->args, nr))
			return bad(c, op, "has results of other types than region 1 takes");
		break;
	}
	case OP_YIELD:
	case OP_CONDITION:
	case OP_RETURN:
		if (op->next)
			return bad(c, op, "must end its region");
		if (op->code == OP_CONDITION && (no < 1 || !is_i1(o0) || o0.rank))
			return bad(c, op, "takes a scalar i1 condition first");
		if (op->code == OP_YIELD) { /* the values the parent expects */
			const Op *p = op->parent ? op->parent->parent : NULL;
			Value *const *want = NULL;
			int nw = -1;
			if (p && p->code == OP_FOR)
				want = p->regions[0].args + 1, nw = p->regions[0].n_args - 1;
			else if (p && p->code == OP_WHILE)
				want = p->operands, nw = p->n_operands;
			else if (p && p->code == OP_IF)
				want = p->results, nw = p->n_results;
			else if (p && (p->code == OP_REDUCE || p->code == OP_SCAN))
				want = p->regions[0].args, nw = p->n_operands;
			if (nw >= 0 && (no != nw || !match_types(op->operands, want, nw)))
				return bad(c, op, "gives values other than its parent '%s' takes", op_name(p->code));
		}
		break;
	default:
		break;
	}
	if ((want_ops >= 0 && no != want_ops) || (want_res >= 0 && nr != want_res))
		return bad(c, op, "has %d operands and %d results", no, nr);
	return true;
}

static bool check_region(Check *c, const Region *r, const Op *owner)
{
	(void)owner;
	for (int i = 0; i < r->n_args; i++) {
		Value *a = r->args[i];
		if (!a || a->id < 0 || a->id >= c->f->n_values || !valid_type(a->type) || c->defined[a->id])
			return c->ok = false, diag_error(c->diag, owner ? owner->loc : c->f->loc,
			                                  "malformed IR in kernel '%s': a bad region argument", c->f->name),
			       false;
		c->defined[a->id] = true;
	}
	for (const Op *op = r->first; op; op = op->next) {
		if (!check_op(c, op) || !check_sorting(c, op))
			return false;
		for (int i = 0; i < op->n_regions; i++)
			if (!check_region(c, &op->regions[i], op))
				return false;
		for (int i = 0; i < op->n_results; i++) {
			if (c->defined[op->results[i]->id])
				return bad(c, op, "defines a value twice");
			c->defined[op->results[i]->id] = true;
		}
	}
	/* leaving the region: its values go out of scope */
	for (int i = 0; i < r->n_args; i++)
		c->defined[r->args[i]->id] = false;
	for (const Op *op = r->first; op; op = op->next)
		for (int i = 0; i < op->n_results; i++)
			c->defined[op->results[i]->id] = false;
	return true;
}

bool interp_check(const IrFunc *f, Diag *diag)
{
	Check c = {.f = f, .diag = diag, .ok = true};
	c.defined = calloc((size_t)f->n_values + 1, sizeof *c.defined);
	if (!c.defined) {
		diag_plain(diag, DIAG_ERROR, "out of memory");
		return false;
	}
	/* parameters are the body's arguments (or values of their own) */
	for (int i = 0; i < f->n_params && c.ok; i++) {
		Value *v = f->params[i].value;
		if (!v)
			continue;
		if (v->id < 0 || v->id >= f->n_values || v->type.rank || !valid_type(v->type)) {
			diag_error(diag, f->loc, "malformed IR in kernel '%s': parameter '%s' is not a scalar value", f->name,
			           f->params[i].name ? f->params[i].name : "?");
			c.ok = false;
		} else if (v->owner != &f->body) {
			c.defined[v->id] = true;
		}
	}
	if (c.ok)
		check_region(&c, &f->body, NULL);
	free(c.defined);
	return c.ok;
}
