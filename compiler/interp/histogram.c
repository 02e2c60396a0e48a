/* histogram.c: histogram, as in lower/histogram.c. */
#include "interp/interp_int.h"

#include <stdlib.h>

/* histogram: counts of the values in [0, bins) where the mask holds. */
bool interp_histogram(Worker *w, const Op *op)
{
	Type t = op->operands[0]->type;
	int64_t n = type_numel(t), bins = op->attr[0];
	const Elem *x = slot(w, op->operands[0])->p;
	const Elem *m = op->n_operands > 1 ? slot(w, op->operands[1])->p : NULL;
	Elem *r = interp_def(w, op->results[0], bins);
	if (!r)
		return false;
	for (int64_t b = 0; b < bins; b++)
		r[b].i = 0;
	bool sgn = scalar_is_signed((ScalarKind)t.scalar);
	for (int64_t i = 0; i < n; i++) {
		if (m && !m[i].u)
			continue;
		if (sgn ? x[i].i >= 0 && x[i].i < bins : x[i].u < (uint64_t)bins)
			r[sgn ? x[i].i : (int64_t)x[i].u].i++;
	}
	return true;
}
