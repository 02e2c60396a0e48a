/* irgen/builtins_sort.c: sort, argsort, topk and histogram. The order they
 * sort by (stable; NaN above everything) is the interpreter's and the GPU
 * lowering's; docs/language.md states it. */
#include "irgen/irgen_int.h"

static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* The block to sort, with a message naming what to write instead. */
static Value *sort_arg(Gen *g, Args *a)
{
	Value *x = ig_block_arg(g, a, 0);
	if (!x)
		return NULL;
	ScalarKind k = (ScalarKind)x->type.scalar;
	if (x->type.ptr || k == SK_I1 || k == SK_F8E4M3 || k == SK_F8E5M2) {
		error(g, a->at[0], "'%s' takes blocks of integers or of f16, bf16, f32, f64, found %s (convert it with .to() first)",
		      a->fname, tstr(g, x->type));
		return NULL;
	}
	return x;
}

/* A size argument (topk's k, num_bins) known at compile time. */
static bool size_arg(Gen *g, Args *a, int i, const char *what, int64_t *out)
{
	if (a->v[i].kind == S_VALUE) {
		error(g, a->at[i], "%s of '%s' must be known at compile time (a literal or a const parameter), found %s", what,
		      a->fname, ig_sym_desc(g, a->v[i]));
		return false;
	}
	return ig_arg_int(g, a, i, out);
}

static Sym pair(Gen *g, Value *v, Value *i)
{
	if (!v || !i)
		return VOID;
	Sym s = {.kind = S_TUPLE, .n = 2};
	s.items = arena_alloc(g->arena, 2 * sizeof *s.items);
	if (!s.items)
		return VOID;
	s.items[0] = ig_value_sym(v);
	s.items[1] = ig_value_sym(i);
	return s;
}

/* sort(x, axis = -1, descending = false, return_indices = false);
 * argsort(x, axis = -1, descending = false) (which = 1): the positions. */
Sym ig_bi_sort(Gen *g, Args *a, int which)
{
	Value *x = sort_arg(g, a);
	if (!x)
		return VOID;
	int axis = x->type.rank - 1;
	bool desc, with_idx = which == 1;
	if (a->given[1] && a->v[1].kind != S_NONE && !ig_axis_arg(g, a, 1, x->type.rank, &axis))
		return VOID;
	if (!ig_arg_bool(g, a, 2, false, &desc))
		return VOID;
	if (!which && !ig_arg_bool(g, a, 3, false, &with_idx))
		return VOID;
	Type rt[2] = {x->type, x->type};
	rt[1].scalar = SK_I32;
	Op *op = ig_emit_op(g, OP_SORT, a->call, &x, 1, rt, with_idx ? 2 : 1);
	if (!op)
		return VOID;
	op->attr[0] = axis;
	op->attr[1] = desc;
	if (which == 1)
		return ig_value_sym(op->results[1]);
	return with_idx ? pair(g, op->results[0], op->results[1]) : ig_value_sym(op->results[0]);
}

/* topk(x, k, axis = -1): the k largest along axis, descending, and their positions. */
Sym ig_bi_topk(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = sort_arg(g, a);
	int64_t k;
	if (!x || !size_arg(g, a, 1, "k", &k))
		return VOID;
	int axis = x->type.rank - 1;
	if (a->given[2] && a->v[2].kind != S_NONE && !ig_axis_arg(g, a, 2, x->type.rank, &axis))
		return VOID;
	int len = x->type.shape[axis];
	if (!is_pow2(k)) {
		error(g, a->at[1], "k of 'topk' must be a power of two, found %lld", (long long)k);
		return VOID;
	}
	if (k > len) {
		error(g, a->at[1], "k of 'topk' is %lld, more than the %d elements along axis %d of %s", (long long)k, len, axis,
		      tstr(g, x->type));
		return VOID;
	}
	Type rt[2] = {x->type, x->type};
	rt[0].shape[axis] = rt[1].shape[axis] = (int32_t)k;
	rt[1].scalar = SK_I32;
	Op *op = ig_emit_op(g, OP_TOPK, a->call, &x, 1, rt, 2);
	if (!op)
		return VOID;
	op->attr[0] = axis;
	op->attr[1] = k;
	return pair(g, op->results[0], op->results[1]);
}

/* histogram(x, num_bins, mask = None): i32[num_bins] counts of x's values
 * in [0, num_bins) where mask holds (others are not counted). */
Sym ig_bi_histogram(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_block_arg(g, a, 0);
	int64_t bins;
	if (!x || !size_arg(g, a, 1, "num_bins", &bins))
		return VOID;
	ScalarKind k = (ScalarKind)x->type.scalar;
	if (x->type.ptr || !scalar_is_int(k) || k == SK_I1) {
		error(g, a->at[0], "'histogram' counts integers, found %s (convert it with .to(i32) first)", tstr(g, x->type));
		return VOID;
	}
	if (!is_pow2(bins) || bins > BLK_MAX_NUMEL) {
		error(g, a->at[1], "num_bins of 'histogram' must be a power of two up to %d, found %lld", BLK_MAX_NUMEL,
		      (long long)bins);
		return VOID;
	}
	Value *ops[2] = {x, NULL};
	if (a->given[2] && a->v[2].kind != S_NONE) {
		Sym m = ig_truth(g, a->v[2], a->at[2]);
		if (m.kind == S_VOID)
			return VOID;
		if (m.kind == S_CONST && !m.i) {
			int32_t nb = (int32_t)bins; /* nothing counted */
			return ig_value_sym(ig_emit_const(g, weak_int(0), type_block(type_scalar(SK_I32), 1, &nb), a->call));
		}
		if (m.kind != S_CONST) {
			int rank;
			int32_t shape[BLK_MAX_RANK];
			if (!ig_common_shape(g, x->type, m.type, &rank, shape, a->call, "the block and the mask"))
				return VOID;
			if (rank != x->type.rank || type_numel(type_block(x->type, rank, shape)) != type_numel(x->type)) {
				error(g, a->at[2], "the mask of 'histogram' must have the shape of the block (%s) or broadcast to it, found %s",
				      tstr(g, x->type), tstr(g, m.type));
				return VOID;
			}
			if (!(ops[1] = ig_broadcast_to(g, m.v, rank, shape, a->at[2])))
				return VOID;
		}
	}
	int32_t nb = (int32_t)bins;
	Value *r = ig_emit(g, OP_HISTOGRAM, a->call, type_block(type_scalar(SK_I32), 1, &nb), x, ops[1], NULL);
	if (r)
		r->def->attr[0] = bins;
	return ig_value_sym(r);
}
