/* gather.c: gather and the special registers, as in lower/gather.c. */
#include "interp/interp_int.h"

#include <time.h>

/* gather: r[i] = x[i with i[axis] = idx[i]]; an index outside the axis is
 * an error (undefined on the GPU). */
bool interp_gather(Worker *w, const Op *op)
{
	Type xt = op->operands[0]->type, rt = op->results[0]->type;
	int axis = (int)op->attr[0];
	int64_t n = type_numel(rt), xst[BLK_MAX_RANK], rst[BLK_MAX_RANK];
	strides_of(xt, xst);
	strides_of(rt, rst);
	const Elem *x = slot(w, op->operands[0])->p, *idx = slot(w, op->operands[1])->p;
	Elem *r = interp_def(w, op->results[0], n);
	if (!r)
		return false;
	for (int64_t i = 0; i < n; i++) {
		int64_t k = idx[i].i, src = 0, rem = i;
		if (k < 0 || k >= xt.shape[axis])
			return interp_fail(w, op, i, rt, "index out of range",
			                   "index %lld is outside [0, %d) along axis %d of the block indexed", (long long)k,
			                   xt.shape[axis], axis);
		for (int d = 0; d < rt.rank; d++) {
			int64_t c = rem / rst[d];
			rem -= c * rst[d];
			src += (d == axis ? k : c) * xst[d];
		}
		r[i] = x[src];
	}
	return true;
}

/* globaltimer (the host's clock, in nanoseconds) and smid (0: one multiprocessor). */
bool interp_sreg(Worker *w, const Op *op)
{
	Elem *r = interp_def(w, op->results[0], 1);
	if (!r)
		return false;
	if (op->attr[0] == SREG_GLOBALTIMER) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		r[0].u = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	} else {
		r[0].i = 0; /* smid: one multiprocessor */
	}
	return true;
}
