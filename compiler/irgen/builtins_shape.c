/* irgen/builtins_shape.c: the builtins that make and reshape blocks: arange,
 * full, zeros, reshape, trans, expand_dims, broadcast_to, join, cat, split. */
#include "irgen/irgen_int.h"

#include <string.h>

/* A shape: a tuple (or list) of constant powers of two. */
static bool sym_shape(Gen *g, Sym s, Span at, int *rank, int32_t shape[BLK_MAX_RANK])
{
	Sym one = s;
	const Sym *items = s.kind == S_TUPLE ? s.items : &one;
	int n = s.kind == S_TUPLE ? s.n : 1;
	if (n > BLK_MAX_RANK) {
		error(g, at, "blocks have at most %d dimensions, this shape has %d", BLK_MAX_RANK, n);
		return false;
	}
	for (int i = 0; i < n; i++) {
		if (items[i].kind != S_CONST || scalar_is_float((ScalarKind)items[i].type.scalar)) {
			error(g, at, "a shape must be a tuple of constant integers, found %s", ig_sym_desc(g, items[i]));
			return false;
		}
		int64_t d = (int64_t)ig_int_value(items[i]);
		if (d <= 0 || (d & (d - 1)) || d > BLK_MAX_NUMEL) {
			error(g, at, "block dimensions must be powers of two, found %lld", (long long)d);
			return false;
		}
		shape[i] = (int32_t)d;
	}
	if (!ig_shape_fits(g, n, shape, at))
		return false;
	*rank = n;
	return true;
}

/* The variadic spelling f(x, 4, 8) beside f(x, (4, 8)): parameter `first`
 * and the optional ones after it (d1 ...), given by position, become one
 * tuple in a->v[first]. Types among them are left out (zeros(4, 8, f32)
 * takes its dtype there): their index goes to *type_at (or -1). */
static bool variadic(Gen *g, Args *a, int first, int *type_at)
{
	int end = type_at ? a->n - 1 : a->n; /* zeros: its last parameter is dtype */
	if (type_at)
		*type_at = -1;
	int n = 0;
	for (int i = first; i < end; i++) {
		if (!a->given[i])
			continue;
		if (type_at && a->v[i].kind == S_TYPE && *type_at < 0) {
			*type_at = i;
			continue;
		}
		n++;
	}
	if (n <= 1)
		return true;
	Sym t = {.kind = S_TUPLE};
	t.items = arena_alloc(g->arena, (size_t)n * sizeof *t.items);
	if (!t.items)
		return false;
	for (int i = first; i < end; i++)
		if (a->given[i] && i != (type_at ? *type_at : -1)) {
			if (a->v[i].kind == S_TUPLE) {
				error(g, a->at[i], "'%s' takes its sizes either as one tuple or one by one, not both", a->fname);
				return false;
			}
			t.items[t.n++] = a->v[i];
		}
	a->v[first] = t;
	a->given[first] = true;
	return true;
}

Sym ig_shape_sym(Gen *g, Type t)
{
	Sym s = {.kind = S_TUPLE, .n = t.rank};
	s.items = arena_alloc(g->arena, (size_t)(t.rank ? t.rank : 1) * sizeof *s.items);
	if (!s.items)
		return VOID;
	for (int i = 0; i < t.rank; i++)
		s.items[i] = weak_int(t.shape[i]);
	return s;
}

Sym ig_bi_arange(Gen *g, Args *a, int which)
{
	(void)which;
	int64_t lo, hi;
	if (!ig_arg_int(g, a, 0, &lo) || !ig_arg_int(g, a, 1, &hi))
		return VOID;
	int64_t n;
	if (__builtin_sub_overflow(hi, lo, &n))
		n = -1; /* reported as a bad count below */
	if (n <= 0 || (n & (n - 1)) || n > BLK_MAX_NUMEL) {
		error(g, a->call, "arange(%lld, %lld) has %lld elements: the count must be a power of two up to %d",
		      (long long)lo, (long long)hi, (long long)n, BLK_MAX_NUMEL);
		return VOID;
	}
	if (!ig_fits(SK_I32, lo) || !ig_fits(SK_I32, hi)) {
		error(g, a->call, "arange bounds must fit in i32");
		return VOID;
	}
	int32_t shape[1] = {(int32_t)n};
	Value *v = ig_emit(g, OP_ARANGE, a->call, type_block(type_scalar(SK_I32), 1, shape), NULL, NULL, NULL);
	if (v) {
		v->def->attr[0] = lo;
		v->def->attr[1] = hi;
	}
	return ig_value_sym(v);
}

/* A block of `shape` filled with s (a constant or a runtime scalar) as type t. */
static Sym fill(Gen *g, Sym s, Type t, int rank, const int32_t *shape, Span at)
{
	if (s.kind == S_VOID)
		return VOID;
	if (!is_valueish(s) || s.type.rank) {
		error(g, at, "the fill value must be a scalar, found %s", ig_sym_desc(g, s));
		return VOID;
	}
	Type bt = type_block(t, rank, shape);
	if (s.kind == S_CONST) {
		if (!ig_const_fits(g, s, (ScalarKind)t.scalar, at))
			return VOID;
		return ig_value_sym(ig_emit_const(g, s, bt, at));
	}
	Value *v = t.ptr ? s.v : ig_cast_value(g, s.v, (ScalarKind)t.scalar, at);
	return ig_value_sym(ig_broadcast_to(g, v, rank, shape, at));
}

Sym ig_bi_full(Gen *g, Args *a, int zeros)
{
	int rank;
	int32_t shape[BLK_MAX_RANK];
	Type t;
	int ti = zeros ? 1 : 2;
	if (zeros) { /* zeros(shape, d1 ..., dtype): dtype named, or the type among the sizes */
		int at;
		if (!variadic(g, a, 0, &at))
			return VOID;
		ti = a->given[a->n - 1] ? a->n - 1 : at;
		if (ti < 0) {
			error(g, a->call, "missing argument 'dtype' of 'zeros'");
			return VOID;
		}
		if (at >= 0 && ti != at) {
			error(g, a->at[at], "'zeros' is given two element types");
			return VOID;
		}
	}
	if (!sym_shape(g, a->v[0], a->at[0], &rank, shape) || !ig_arg_type(g, a, ti, &t))
		return VOID;
	return fill(g, zeros ? weak_int(0) : a->v[1], t, rank, shape, a->call);
}

Sym ig_bi_zeros_like(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x = a->v[0];
	if (!is_valueish(x)) {
		error(g, a->at[0], "zeros_like needs a block, found %s", ig_sym_desc(g, x));
		return VOID;
	}
	if (x.type.ptr) { /* a constant pointer block is nothing the IR can hold */
		error(g, a->at[0], "zeros_like of a block of pointers (%s): pointers have no zero here; offsets "
		      "from a pointer are zeros_like(offs), values zeros(shape, T)", tstr(g, x.type));
		return VOID;
	}
	return fill(g, weak_int(0), type_elem(x.type), x.type.rank, x.type.shape, a->call);
}

Sym ig_bi_reshape(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_value_arg(g, a, 0);
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!x || !variadic(g, a, 1, NULL) || !sym_shape(g, a->v[1], a->at[1], &rank, shape))
		return VOID;
	Type t = type_block(x->type, rank, shape);
	if (type_numel(t) != type_numel(x->type)) {
		error(g, a->call, "cannot reshape %s (%lld elements) to %s", tstr(g, x->type), (long long)type_numel(x->type),
		      tstr(g, t));
		return VOID;
	}
	if (type_eq(t, x->type))
		return ig_value_sym(x);
	return ig_value_sym(rank == 0 ? NULL : ig_emit(g, OP_RESHAPE, a->call, t, x, NULL, NULL));
}

/* flatten(x): x's elements in row-major order as one axis. */
Sym ig_bi_flatten(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_value_arg(g, a, 0);
	if (!x)
		return VOID;
	int32_t n = (int32_t)type_numel(x->type);
	Type t = type_block(x->type, 1, &n);
	if (type_eq(t, x->type) || !x->type.rank)
		return ig_value_sym(x);
	return ig_value_sym(ig_emit(g, OP_RESHAPE, a->call, t, x, NULL, NULL));
}

Sym ig_bi_trans(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_block_arg(g, a, 0);
	if (!x)
		return VOID;
	int rank = x->type.rank;
	int64_t perm[BLK_MAX_RANK];
	for (int i = 0; i < rank; i++)
		perm[i] = rank - 1 - i;
	if (!variadic(g, a, 1, NULL))
		return VOID;
	if (a->given[1]) {
		Sym p = a->v[1];
		if (p.kind != S_TUPLE || p.n != rank) {
			error(g, a->at[1], "trans needs a permutation of %d axes", rank);
			return VOID;
		}
		bool seen[BLK_MAX_RANK] = {0};
		for (int i = 0; i < rank; i++) {
			if (p.items[i].kind != S_CONST || ig_int_value(p.items[i]) < 0 || ig_int_value(p.items[i]) >= rank ||
			    seen[(int)ig_int_value(p.items[i])]) {
				error(g, a->at[1], "trans needs a permutation of 0..%d", rank - 1);
				return VOID;
			}
			perm[i] = (int64_t)ig_int_value(p.items[i]);
			seen[perm[i]] = true;
		}
	} else if (rank != 2) {
		error(g, a->at[0], "trans without a permutation needs a 2-D block, found %s", tstr(g, x->type));
		return VOID;
	}
	int32_t shape[BLK_MAX_RANK];
	for (int i = 0; i < rank; i++)
		shape[i] = x->type.shape[perm[i]];
	Value *r = ig_emit(g, OP_TRANS, a->call, type_block(x->type, rank, shape), x, NULL, NULL);
	if (r)
		memcpy(r->def->attr, perm, sizeof perm);
	return ig_value_sym(r);
}

Sym ig_bi_expand_dims(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_value_arg(g, a, 0);
	int64_t axis;
	if (!x || !ig_arg_int(g, a, 1, &axis))
		return VOID;
	int rank = x->type.rank;
	if (axis < 0)
		axis += rank + 1;
	if (rank >= BLK_MAX_RANK) {
		error(g, a->call, "blocks have at most %d dimensions: cannot add one to %s", BLK_MAX_RANK, tstr(g, x->type));
		return VOID;
	}
	if (axis < 0 || axis > rank) {
		error(g, a->at[1], "cannot insert an axis at %lld into %s", (long long)ig_int_value(a->v[1]), tstr(g, x->type));
		return VOID;
	}
	int32_t shape[BLK_MAX_RANK] = {0};
	for (int d = 0, s = 0; d <= rank; d++)
		shape[d] = d == axis ? 1 : x->type.shape[s++];
	Value *r = ig_emit(g, rank ? OP_EXPAND_DIMS : OP_SPLAT, a->call, type_block(x->type, rank + 1, shape), x, NULL, NULL);
	if (r)
		r->def->attr[0] = axis;
	return ig_value_sym(r);
}

Sym ig_bi_broadcast_to(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_value_arg(g, a, 0);
	int rank, r2;
	int32_t shape[BLK_MAX_RANK], check[BLK_MAX_RANK];
	if (!x || !variadic(g, a, 1, NULL) || !sym_shape(g, a->v[1], a->at[1], &rank, shape))
		return VOID;
	Type want = type_block(x->type, rank, shape);
	if (!broadcast_shapes(x->type, want, &r2, check) || r2 != rank || memcmp(check, shape, sizeof(int32_t) * rank)) {
		error(g, a->call, "cannot broadcast %s to %s", tstr(g, x->type), tstr(g, want));
		return VOID;
	}
	return ig_value_sym(ig_broadcast_to(g, x, rank, shape, a->call));
}

Sym ig_bi_join_cat(Gen *g, Args *a, int join)
{
	Value *x = ig_value_arg(g, a, 0), *y = ig_value_arg(g, a, 1);
	if (!x || !y)
		return VOID;
	if (!type_eq(x->type, y->type)) {
		error(g, a->call, "'%s' needs two blocks of one type and shape, found %s and %s", a->fname, tstr(g, x->type),
		      tstr(g, y->type));
		return VOID;
	}
	Type t = x->type;
	int axis = 0;
	if (join) {
		if (t.rank >= BLK_MAX_RANK) {
			error(g, a->call, "join would make more than %d dimensions", BLK_MAX_RANK);
			return VOID;
		}
		t.shape[t.rank++] = 2;
	} else {
		if (t.rank == 0) {
			error(g, a->call, "cat needs blocks, found scalars");
			return VOID;
		}
		if (a->given[2] && !ig_axis_arg(g, a, 2, t.rank, &axis))
			return VOID;
		t.shape[axis] *= 2;
	}
	if (!ig_shape_fits(g, t.rank, t.shape, a->call))
		return VOID;
	if (!join && axis != 0) {
		/* the IR's cat joins along dim 0 (docs/ir.md): move the axis to the
		 * front, concatenate, and move it back */
		int64_t perm[BLK_MAX_RANK] = {0}, inv[BLK_MAX_RANK] = {0};
		perm[0] = axis;
		for (int d = 0, k = 1; d < t.rank; d++)
			if (d != axis)
				perm[k++] = d;
		for (int d = 0; d < t.rank; d++)
			inv[perm[d]] = d;
		int32_t xs[BLK_MAX_RANK] = {0}, rs[BLK_MAX_RANK] = {0};
		for (int d = 0; d < t.rank; d++) {
			xs[d] = x->type.shape[perm[d]];
			rs[d] = t.shape[perm[d]];
		}
		Value *xt = ig_emit(g, OP_TRANS, a->call, type_block(x->type, t.rank, xs), x, NULL, NULL);
		Value *yt = ig_emit(g, OP_TRANS, a->call, type_block(y->type, t.rank, xs), y, NULL, NULL);
		if (!xt || !yt)
			return VOID;
		memcpy(xt->def->attr, perm, sizeof perm);
		memcpy(yt->def->attr, perm, sizeof perm);
		Value *c = ig_emit(g, OP_CAT, a->call, type_block(t, t.rank, rs), xt, yt, NULL);
		Value *r = c ? ig_emit(g, OP_TRANS, a->call, t, c, NULL, NULL) : NULL;
		if (!r)
			return VOID;
		memcpy(r->def->attr, inv, sizeof inv);
		return ig_value_sym(r);
	}
	Value *r = ig_emit(g, join ? OP_JOIN : OP_CAT, a->call, t, x, y, NULL);
	if (r)
		r->def->attr[0] = axis;
	return ig_value_sym(r);
}

Sym ig_bi_split(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_block_arg(g, a, 0);
	if (!x)
		return VOID;
	Type t = x->type;
	if (t.shape[t.rank - 1] != 2) {
		error(g, a->at[0], "split needs a last axis of size 2, found %s", tstr(g, t));
		return VOID;
	}
	t.shape[--t.rank] = 0;
	Type rts[2] = {t, t};
	Op *op = ig_emit_op(g, OP_SPLIT, a->call, &x, 1, rts, 2);
	if (!op)
		return VOID;
	Sym out = {.kind = S_TUPLE, .n = 2};
	out.items = arena_alloc(g->arena, 2 * sizeof *out.items);
	if (!out.items)
		return VOID;
	out.items[0] = ig_value_sym(op->results[0]);
	out.items[1] = ig_value_sym(op->results[1]);
	return out;
}
