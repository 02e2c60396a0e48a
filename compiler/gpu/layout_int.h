/* gpu/layout_int.h: what the layouts pass (layouts.c) and remove-conversions
 * (remove_conversions.c) share: the pass state and the helpers both use.
 * Internal to gpu/. */
#ifndef BLK_GPU_LAYOUT_INT_H
#define BLK_GPU_LAYOUT_INT_H

#include "gpu/gpu.h"

typedef struct LP {
	IrFunc *f;
	AxisInfo *ax;
	const Encoding **enc; /* by value id; NULL: free */
	int n_enc;            /* values the table covers (ops inserted later carry their own) */
	int n_ax;             /* values ax covers */
	int T;
	int8_t *wide_dim, *wide_vec; /* by load result id: a transposed store's run (layouts.c) */
	bool oom;
} LP;

static inline bool is_block(const Value *v) { return v->type.rank > 0; }

/* e, or marks the pass out of memory when e is NULL. */
const Encoding *lp_chk(LP *P, const Encoding *e);
/* Whether c moves elements without computing (expand_dims ... split). */
bool lp_is_shape_op(OpCode c);
/* The encoding a shape op's operand needs for its result to be `out`. */
const Encoding *lp_shape_backward(LP *P, const Op *op, const Encoding *out);
/* x converted to e by a convert_layout placed before `before`. */
Value *lp_convert_before(LP *P, Op *before, Value *x, const Encoding *e);

#endif
