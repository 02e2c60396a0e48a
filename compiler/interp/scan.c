/* scan.c: inclusive scans along an axis, as in lower/scan.c. */
#include "interp/interp_int.h"

#include <stdlib.h>

/* Inclusive, in order along the axis (from its end with attr[1]): step s
 * combines the running value (first operand) with element s, over all rows
 * at once. */
bool interp_scan(Worker *w, const Op *op)
{
	int n = op->n_operands;
	if (n > MAX_COMBINE)
		return interp_fail(w, op, -1, (Type){0}, "scan of too many blocks", "%d (at most %d)", n, MAX_COMBINE);
	Type t = op->operands[0]->type;
	int64_t outer, len, inner;
	interp_split_axis(t, (int)op->attr[0], &outer, &len, &inner);
	bool rev = op->attr[1] != 0;
	int64_t L = outer * inner;
	Mark mk = interp_mark(w);
	Elem *in[2 * MAX_COMBINE], *y[MAX_COMBINE], *x[MAX_COMBINE], *out[MAX_COMBINE];
	bool ok = true;
	for (int j = 0; ok && j < n; j++) {
		in[j] = interp_scratch(w, L);
		in[n + j] = interp_scratch(w, L);
		y[j] = interp_scratch(w, L);
		x[j] = slot(w, op->operands[j])->p;
		ok = in[j] && in[n + j] && y[j];
	}
	/* the operands are read to the end: results go to scratch, then out */
	for (int j = 0; ok && j < n; j++)
		ok = (out[j] = interp_scratch(w, outer * len * inner)) != NULL;
	for (int64_t s = 0; ok && s < len; s++) {
		int64_t e = rev ? len - 1 - s : s;
		for (int j = 0; j < n; j++)
			for (int64_t o = 0; o < outer; o++)
				memcpy((s ? in[n + j] : in[j]) + o * inner, x[j] + (o * len + e) * inner, (size_t)inner * sizeof(Elem));
		if (s) {
			ok = interp_combine(w, op, in, y, L);
			for (int j = 0; ok && j < n; j++)
				memcpy(in[j], y[j], (size_t)L * sizeof(Elem));
		}
		for (int j = 0; ok && j < n; j++)
			for (int64_t o = 0; o < outer; o++)
				memcpy(out[j] + (o * len + e) * inner, in[j] + o * inner, (size_t)inner * sizeof(Elem));
	}
	for (int j = 0; ok && j < n; j++) {
		Elem *d = interp_def(w, op->results[j], outer * len * inner);
		ok = d != NULL;
		if (ok)
			memcpy(d, out[j], (size_t)(outer * len * inner) * sizeof *d);
	}
	interp_release(w, mk);
	return ok;
}
