/* reduce.c: reductions, and the combine region run over many lanes at
 * once that scans share (as lower/reduce.c has the combine helpers). */
#include "interp/interp_int.h"

#include <stdlib.h>

/* Whether a combine region runs on many lanes at once: only element-wise ops
 * and constants (else it runs lane by lane). */
static bool lane_region(const Region *r)
{
	for (const Op *op = r->first; op; op = op->next)
		if (!(op_flags(op->code) & OPF_ELEMWISE) && op->code != OP_CONST && op->code != OP_YIELD)
			return false;
	return true;
}

/* Runs op's combine region over L lanes: its 2n arguments read in[0..2n),
 * its n results go to out[0..n). */
bool interp_combine(Worker *w, const Op *op, Elem *const *in, Elem *const *out, int64_t L)
{
	const Region *rg = &op->regions[0];
	int n = op->n_operands;
	if (lane_region(rg)) {
		for (int j = 0; j < 2 * n; j++) {
			Slot *s = slot(w, rg->args[j]);
			s->p = in[j];
			s->n = L;
		}
		const Op *y = interp_block(w, rg);
		if (!y)
			return false;
		for (int j = 0; j < n; j++)
			copy_elems(out[j], slot(w, y->operands[j]), L);
		return true;
	}
	for (int64_t l = 0; l < L; l++) {
		for (int j = 0; j < 2 * n; j++) {
			Slot *s = slot(w, rg->args[j]);
			s->p = in[j] + l;
			s->n = 1;
		}
		const Op *y = interp_block(w, rg);
		if (!y) {
			if (!w->failed)
				interp_fail(w, op, -1, (Type){0}, "a combine function returned from the kernel", NULL);
			return false;
		}
		for (int j = 0; j < n; j++)
			out[j][l] = slot(w, y->operands[j])->p[0];
	}
	return true;
}

/* Sizes around axis: outer (before), len (along), inner (after). */
void interp_split_axis(Type t, int axis, int64_t *outer, int64_t *len, int64_t *inner)
{
	*outer = *inner = 1;
	for (int d = 0; d < axis; d++)
		*outer *= t.shape[d];
	for (int d = axis + 1; d < t.rank; d++)
		*inner *= t.shape[d];
	*len = t.shape[axis];
}

/* A tree over the axis: each step combines neighbours (2h, 2h + 1) of every
 * row, all of them in one run of the region. The first operand of each call
 * holds the elements of lower index, so an index-aware combine (argmax's
 * "lowest index wins") and even a non-commutative one see them in order. */
bool interp_reduce(Worker *w, const Op *op)
{
	int n = op->n_operands;
	if (n > MAX_COMBINE)
		return interp_fail(w, op, -1, (Type){0}, "reduction of too many blocks", "%d (at most %d)", n, MAX_COMBINE);
	Type t = op->operands[0]->type;
	int64_t outer, len, inner;
	interp_split_axis(t, (int)op->attr[0], &outer, &len, &inner);
	Mark mk = interp_mark(w);
	Elem *cur[MAX_COMBINE], *lanes[2 * MAX_COMBINE], *y[MAX_COMBINE];
	for (int j = 0; j < n; j++)
		cur[j] = slot(w, op->operands[j])->p;
	bool ok = true;
	while (ok && len > 1) {
		int64_t half = len / 2, odd = len & 1, L = outer * half * inner;
		for (int j = 0; ok && j < n; j++) {
			lanes[j] = interp_scratch(w, L);
			lanes[n + j] = interp_scratch(w, L);
			y[j] = interp_scratch(w, outer * (half + odd) * inner);
			ok = lanes[j] && lanes[n + j] && y[j];
		}
		if (!ok)
			break;
		for (int j = 0; j < n; j++)
			for (int64_t o = 0; o < outer; o++)
				for (int64_t h = 0; h < half; h++) {
					const Elem *src = cur[j] + (o * len + 2 * h) * inner;
					memcpy(lanes[j] + (o * half + h) * inner, src, (size_t)inner * sizeof *src);
					memcpy(lanes[n + j] + (o * half + h) * inner, src + inner, (size_t)inner * sizeof *src);
				}
		ok = interp_combine(w, op, lanes, y, L);
		if (ok && odd) /* rows of half + 1: the last element of each row passes through */
			for (int j = 0; j < n; j++)
				for (int64_t o = outer - 1; o >= 0; o--) {
					memmove(y[j] + o * (half + 1) * inner, y[j] + o * half * inner, (size_t)(half * inner) * sizeof(Elem));
					memcpy(y[j] + (o * (half + 1) + half) * inner, cur[j] + (o * len + len - 1) * inner,
					       (size_t)inner * sizeof(Elem));
				}
		for (int j = 0; j < n; j++)
			cur[j] = y[j];
		len = half + odd;
	}
	for (int j = 0; ok && j < n; j++) {
		Elem *d = interp_def(w, op->results[j], outer * inner);
		ok = d != NULL;
		if (ok)
			memcpy(d, cur[j], (size_t)(outer * inner) * sizeof *d);
	}
	interp_release(w, mk);
	return ok;
}
