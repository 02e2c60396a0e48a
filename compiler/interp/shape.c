/* shape.c: the ops that make or rearrange blocks without computing:
 * constants, arange, splat, broadcast, reshape, expand_dims, trans, cat,
 * join, split and hint (whose promises it checks), as in lower/shape.c. */
#include "interp/interp_int.h"

#include <stdlib.h>

/* dst, a row-major block of the given shape, from src read with a stride per
 * dimension (0 repeats, a permutation transposes). */
static void gather_strided(Elem *dst, const Elem *src, int rank, const int32_t *shape, const int64_t *st)
{
	if (rank == 0) {
		dst[0] = src[0];
		return;
	}
	int64_t idx[BLK_MAX_RANK] = {0}, off = 0, inner = shape[rank - 1], s = st[rank - 1], outer = 1;
	for (int d = 0; d < rank - 1; d++)
		outer *= shape[d];
	for (int64_t o = 0; o < outer; o++) {
		const Elem *p = src + off;
		if (s == 1)
			memcpy(dst, p, (size_t)inner * sizeof *dst);
		else
			for (int64_t j = 0; j < inner; j++)
				dst[j] = p[j * s];
		dst += inner;
		for (int d = rank - 2; d >= 0; d--) {
			off += st[d];
			if (++idx[d] < shape[d])
				break;
			off -= st[d] * shape[d];
			idx[d] = 0;
		}
	}
}

/* Checks multiple_of (attr[0]) and max_contiguous (attr[1]) on x. */
static bool check_hint(Worker *w, const Op *op, const Slot *x)
{
	Type t = op->operands[0]->type;
	int64_t div = op->attr[0], con = op->attr[1], n = x->n;
	int64_t row = t.rank ? t.shape[t.rank - 1] : 1;
	uint64_t step = t.ptr ? (uint64_t)type_bytes(type_pointee(t)) : 1; /* pointers: bytes */
	for (int64_t i = 0; i < n; i++) {
		int64_t j = i % row;
		bool run_start = j == 0 || x->p[i].u != x->p[i - 1].u + step;
		if (div > 0 && run_start) {
			bool ok = t.ptr ? x->p[i].u % (uint64_t)div == 0 : x->p[i].i % div == 0;
			if (!ok)
				return interp_fail(w, op, i, t, "wrong hint",
				                   "multiple_of(%lld) promised, but %s%lld starts a run of consecutive values",
				                   (long long)div, t.ptr ? "address " : "", (long long)x->p[i].i);
		}
		if (con > 1 && j % con != 0 && x->p[i].u != x->p[i - 1].u + step)
			return interp_fail(w, op, i, t, "wrong hint",
			                   "max_contiguous(%lld) promised, but %lld does not follow %lld", (long long)con,
			                   (long long)x->p[i].i, (long long)x->p[i - 1].i);
	}
	return true;
}

bool interp_shape(Worker *w, const Op *op)
{
	Type rt = op->n_results ? op->results[0]->type : (Type){0};
	int64_t n = type_numel(rt);
	ScalarKind k = (ScalarKind)rt.scalar;
	switch (op->code) {
	case OP_CONST: {
		Elem e;
		if (rt.ptr)
			e.u = (uint64_t)op->ival;
		else if (scalar_is_float(k))
			e.f = fp_round(k, op->fval);
		else
			e.i = canon_int(k, (uint64_t)op->ival);
		Elem *r = interp_def(w, op->results[0], 1); /* uniform: one element for the block */
		if (!r)
			return false;
		r[0] = e;
		return true;
	}
	case OP_ARANGE: {
		Elem *r = interp_def(w, op->results[0], n);
		if (!r)
			return false;
		int sh = 64 - scalar_bits(k);
		for (int64_t i = 0; i < n; i++) /* i32 by the table; any int kind wraps alike */
			r[i].i = (int64_t)((uint64_t)(op->attr[0] + i) << sh) >> sh;
		return true;
	}
	case OP_SPLAT: { /* uniform: the scalar's element stands for the block */
		Slot *s = slot(w, op->operands[0]), *d = slot(w, op->results[0]);
		d->p = s->p;
		d->n = 1;
		return true;
	}
	case OP_HINT:
		if (w->run->ub_checks &&
		    (!interp_full(w, op->operands[0]) || !check_hint(w, op, slot(w, op->operands[0]))))
			return false;
		/* fall through */
	case OP_EXPAND_DIMS:
	case OP_CONVERT_LAYOUT:
	case OP_RESHAPE: { /* the same elements in the same order: share them */
		Slot *s = slot(w, op->operands[0]), *d = slot(w, op->results[0]);
		d->p = s->p;
		d->n = s->n;
		return true;
	}
	case OP_BROADCAST:
	case OP_TRANS: {
		Type t = op->operands[0]->type;
		Slot *os = slot(w, op->operands[0]);
		if (op->code == OP_BROADCAST && os->n == 1) { /* uniform stays uniform */
			Slot *d = slot(w, op->results[0]);
			d->p = os->p;
			d->n = 1;
			return true;
		}
		if (!interp_full(w, op->operands[0]))
			return false;
		int64_t ost[BLK_MAX_RANK], st[BLK_MAX_RANK];
		strides_of(t, ost);
		for (int d = 0; d < rt.rank; d++)
			st[d] = op->code == OP_TRANS ? ost[op->attr[d]] : t.shape[d] == 1 ? 0 : ost[d];
		const Elem *src = slot(w, op->operands[0])->p;
		Elem *r = interp_def(w, op->results[0], n);
		if (!r)
			return false;
		gather_strided(r, src, rt.rank, rt.shape, st);
		return true;
	}
	case OP_CAT: {
		const Slot *a = slot(w, op->operands[0]), *b = slot(w, op->operands[1]);
		Elem *r = interp_def(w, op->results[0], n);
		if (!r)
			return false;
		memcpy(r, a->p, (size_t)a->n * sizeof *r);
		memcpy(r + a->n, b->p, (size_t)b->n * sizeof *r);
		return true;
	}
	case OP_JOIN: {
		const Elem *a = slot(w, op->operands[0])->p, *b = slot(w, op->operands[1])->p;
		Elem *r = interp_def(w, op->results[0], n);
		if (!r)
			return false;
		for (int64_t i = 0; i < n / 2; i++) {
			r[2 * i] = a[i];
			r[2 * i + 1] = b[i];
		}
		return true;
	}
	case OP_SPLIT: {
		const Elem *x = slot(w, op->operands[0])->p;
		Elem *a = interp_def(w, op->results[0], n), *b = a ? interp_def(w, op->results[1], n) : NULL;
		if (!b)
			return false;
		for (int64_t i = 0; i < n; i++) {
			a[i] = x[2 * i];
			b[i] = x[2 * i + 1];
		}
		return true;
	}
	case OP_GATHER:
		return interp_gather(w, op);
	default:
		return interp_fail(w, op, -1, rt, "internal error", "the interpreter has no '%s'", op_name(op->code));
	}
}
