/* interp/sort.c: sort and topk, the reference semantics (as in lower/sort.c).
 *
 * Order (docs/language.md, "Sorting"): integers by value; floats by value
 * with -0.0 below +0.0 and every NaN above +inf, the NaNs equal to each
 * other. Both sorts are stable: elements of equal keys keep the order of
 * their positions along the axis, ascending or descending alike. topk
 * takes the k largest in descending order, the smaller position first
 * among equals. Each line is sorted by a merge sort of positions. */
#include "interp/interp_int.h"

#include <math.h>
#include <stdlib.h>

/* -1, 0 or 1 as a is below, equal to or above b in the order above. */
static int key_cmp(Elem a, Elem b, Type t)
{
	if (type_is_float(t)) {
		bool na = isnan(a.f), nb = isnan(b.f);
		if (na || nb)
			return na - nb;
		if (a.f != b.f)
			return a.f < b.f ? -1 : 1;
		bool sa = signbit(a.f) != 0, sb = signbit(b.f) != 0; /* zeros: -0.0 first */
		return sa == sb ? 0 : sa ? -1 : 1;
	}
	if (scalar_is_signed((ScalarKind)t.scalar))
		return a.i < b.i ? -1 : a.i > b.i;
	return a.u < b.u ? -1 : a.u > b.u;
}

/* Whether position p goes before position q of line `keys` (p < q). */
static bool goes_before(const Elem *keys, int64_t p, int64_t q, Type t, bool descending)
{
	int c = key_cmp(keys[p], keys[q], t);
	if (descending)
		c = -c;
	return c < 0 || (c == 0 && p < q);
}

/* Sorts the positions pos[0..n) of keys, stably; tmp holds n. */
static void merge_sort(int64_t *pos, int64_t *tmp, int64_t n, const Elem *keys, Type t, bool descending)
{
	for (int64_t w = 1; w < n; w *= 2) {
		for (int64_t lo = 0; lo < n; lo += 2 * w) {
			int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int64_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = goes_before(keys, pos[j], pos[i], t, descending) ? pos[j++] : pos[i++];
			while (i < mid)
				tmp[k++] = pos[i++];
			while (j < hi)
				tmp[k++] = pos[j++];
		}
		memcpy(pos, tmp, (size_t)n * sizeof *pos);
	}
}

/* sort (1 or 2 results) and topk (values and positions). */
bool interp_sort(Worker *w, const Op *op)
{
	Type t = op->operands[0]->type;
	int axis = (int)op->attr[0];
	bool topk = op->code == OP_TOPK, descending = topk || op->attr[1];
	int64_t outer = 1, inner = 1, len = t.shape[axis];
	for (int d = 0; d < axis; d++)
		outer *= t.shape[d];
	for (int d = axis + 1; d < t.rank; d++)
		inner *= t.shape[d];
	int64_t keep = topk ? op->attr[1] : len;
	const Elem *x = slot(w, op->operands[0])->p;
	Elem *vals = interp_def(w, op->results[0], outer * keep * inner);
	Elem *idx = op->n_results > 1 ? interp_def(w, op->results[1], outer * keep * inner) : NULL;
	if (!vals || (op->n_results > 1 && !idx))
		return false;
	Mark mk = interp_mark(w);
	Elem *line = interp_scratch(w, len);
	int64_t *pos = malloc((size_t)(2 * len) * sizeof *pos);
	if (!line || !pos) {
		free(pos);
		interp_release(w, mk);
		return interp_fail(w, op, -1, (Type){0}, "out of memory", NULL);
	}
	for (int64_t o = 0; o < outer; o++)
		for (int64_t in = 0; in < inner; in++) {
			for (int64_t j = 0; j < len; j++) {
				line[j] = x[(o * len + j) * inner + in];
				pos[j] = j;
			}
			merge_sort(pos, pos + len, len, line, t, descending);
			for (int64_t j = 0; j < keep; j++) {
				int64_t at = (o * keep + j) * inner + in;
				vals[at] = line[pos[j]];
				if (idx)
					idx[at].i = pos[j];
			}
		}
	free(pos);
	interp_release(w, mk);
	return true;
}
