/* irgen/builtins_index.c: picking elements of blocks: x[i] and constant
 * slices x[a:b:c] (expr.c hands such subscripts here), gather, flip and
 * interleave; the launch's registers and facts: globaltimer, smid,
 * num_warps; element-wise inline PTX (inline_asm).
 *
 * Every selection becomes one IR gather (x at i32 indices along an axis):
 * x[i] gathers one index and reshapes the axis away, a slice gathers
 * start + step * arange(len), flip gathers size - 1 - arange(size). */
#include "irgen/irgen_int.h"

#include <string.h>

/* ---- gather -------------------------------------------------------------------- */

/* x gathered at idx (an i32 block of x's rank, of x's shape but along axis). */
static Value *gather(Gen *g, Value *x, Value *idx, int axis, Span at)
{
	Value *ops[2] = {x, idx};
	Type rt = type_block(type_elem(x->type), idx->type.rank, idx->type.shape);
	Op *op = ig_emit_op(g, OP_GATHER, at, ops, 2, &rt, 1);
	if (!op)
		return NULL;
	op->attr[0] = axis;
	return op->results[0];
}

/* start + step * k along axis (k = 0 .. len - 1), as an i32 block of x's
 * shape with len along axis. */
static Value *axis_indices(Gen *g, Type xt, int axis, int32_t len, int64_t start, int64_t step, Span at)
{
	Value *r = ig_emit(g, OP_ARANGE, at, type_block(type_scalar(SK_I32), 1, &len), NULL, NULL, NULL);
	if (!r)
		return NULL;
	r->def->attr[0] = 0;
	r->def->attr[1] = len;
	if (step != 1) {
		Value *s = ig_emit_const(g, ig_const_int(SK_I32, step, false), r->type, at);
		r = s ? ig_emit(g, OP_MUL, at, r->type, r, s, NULL) : NULL;
	}
	if (r && start != 0) {
		Value *s = ig_emit_const(g, ig_const_int(SK_I32, start, false), r->type, at);
		r = s ? ig_emit(g, OP_ADD, at, r->type, r, s, NULL) : NULL;
	}
	if (!r)
		return NULL;
	int32_t shape[BLK_MAX_RANK];
	for (int d = 0; d < xt.rank; d++)
		shape[d] = d == axis ? len : 1;
	if (xt.rank > 1 && !(r = ig_emit(g, OP_RESHAPE, at, type_block(r->type, xt.rank, shape), r, NULL, NULL)))
		return NULL;
	shape[axis] = len;
	for (int d = 0; d < xt.rank; d++)
		if (d != axis)
			shape[d] = xt.shape[d];
	return ig_broadcast_to(g, r, xt.rank, shape, at);
}

/* A block of one element as a scalar (a reduction of one element: nothing
 * is combined, the element comes out as it is). */
static Value *only_element(Gen *g, Value *v, Span at)
{
	int32_t one = 1;
	if (v->type.rank != 1 && !(v = ig_emit(g, OP_RESHAPE, at, type_block(v->type, 1, &one), v, NULL, NULL)))
		return NULL;
	Type st = type_elem(v->type);
	Op *op = ig_emit_op(g, OP_REDUCE, at, &v, 1, &st, 1);
	if (!op)
		return NULL;
	op->attr[0] = 0;
	Region *saved = g->region;
	Value *a = ir_region_arg(g->f, &op->regions[0], st), *b = ir_region_arg(g->f, &op->regions[0], st);
	bool ok = a && b;
	g->region = &op->regions[0];
	ok = ok && ig_emit_op(g, OP_YIELD, at, &a, 1, NULL, 0);
	g->region = saved;
	return ok ? op->results[0] : NULL;
}

/* A constant integer of a slice bound (NULL: absent). */
static bool slice_bound(Gen *g, Node *e, bool *given, int64_t *out)
{
	*given = e != NULL;
	if (!e)
		return true;
	Sym s = ig_gen_expr(g, e);
	if (s.kind == S_VOID)
		return false;
	if (s.kind != S_CONST || scalar_is_float((ScalarKind)s.type.scalar)) {
		error(g, e->span, "a slice of a block needs constant integer bounds, found %s; for a runtime offset, "
		                  "load from a moved pointer or gather(x, idx, axis)", ig_sym_desc(g, s));
		return false;
	}
	*out = (int64_t)ig_int_value(s);
	return true;
}

/* x[a:b:c] along axis d: the elements as a gather; *len the new size. */
static Value *slice_axis(Gen *g, Value *v, int d, Node *it, int32_t *len)
{
	int64_t size = v->type.shape[d], start = 0, stop = size, step = 1;
	bool has_a, has_b, has_c;
	if (!slice_bound(g, it->c, &has_c, &step) || !slice_bound(g, it->a, &has_a, &start) ||
	    !slice_bound(g, it->b, &has_b, &stop))
		return NULL;
	if (has_c && step == 0) {
		error(g, it->c->span, "a slice step cannot be 0");
		return NULL;
	}
	if (!has_a)
		start = step > 0 ? 0 : size - 1;
	else if (start < 0)
		start += size;
	if (!has_b)
		stop = step > 0 ? size : -1;
	else if (stop < 0)
		stop += size;
	/* bounds past the ends are cut to them, as Python's slices are */
	int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? size : size - 1;
	start = start < lo ? lo : start > hi ? hi : start;
	stop = stop < lo ? lo : stop > hi ? hi : stop;
	int64_t n = step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / -step;
	if (n <= 0 || (n & (n - 1))) {
		error(g, it->span, "this slice of axis %d (size %lld) has %lld elements: block dimensions must be powers "
		                   "of two", d, (long long)size, (long long)(n < 0 ? 0 : n));
		return NULL;
	}
	*len = (int32_t)n;
	if (n == size && step == 1)
		return v;
	Value *idx = axis_indices(g, v->type, d, (int32_t)n, start, step, it->span);
	return idx ? gather(g, v, idx, d, it->span) : NULL;
}

/* x[i] along axis d: a size-1 gather (the axis is dropped by the caller). */
static Value *index_axis(Gen *g, Value *v, int d, Node *it, Type orig)
{
	Sym i = ig_gen_expr(g, it);
	if (i.kind == S_VOID)
		return NULL;
	int64_t size = v->type.shape[d];
	if (!is_valueish(i) || i.type.rank || i.type.ptr || !scalar_is_int((ScalarKind)i.type.scalar) ||
	    i.type.scalar == SK_I1) {
		error(g, it->span, "a block index must be an integer scalar, found %s; to pick elements by a block of "
		                   "indices, write gather(x, idx, axis)", ig_sym_desc(g, i));
		return NULL;
	}
	int32_t shape[BLK_MAX_RANK];
	memcpy(shape, v->type.shape, sizeof shape);
	shape[d] = 1;
	Type it_t = type_block(type_scalar(SK_I32), v->type.rank, shape);
	Value *idx;
	if (i.kind == S_CONST) {
		__int128 k = ig_int_value(i);
		if (k < 0)
			k += size;
		if (k < 0 || k >= size) {
			error(g, it->span, "index %lld is out of range for axis %d of %s (size %lld)",
			      (long long)ig_int_value(i), d, tstr(g, orig), (long long)size);
			return NULL;
		}
		idx = ig_emit_const(g, ig_const_int(SK_I32, k, false), it_t, it->span);
	} else {
		Value *s = ig_cast_value(g, i.v, SK_I32, it->span);
		idx = s ? ig_broadcast_to(g, s, it_t.rank, shape, it->span) : NULL;
	}
	return idx ? gather(g, v, idx, d, it->span) : NULL;
}

Value *ig_take(Gen *g, Value *x, int axis, int64_t k, Span at)
{
	int32_t shape[BLK_MAX_RANK];
	memcpy(shape, x->type.shape, sizeof shape);
	shape[axis] = 1;
	Value *idx = ig_emit_const(g, ig_const_int(SK_I32, k, false), type_block(type_scalar(SK_I32), x->type.rank, shape),
	                           at);
	Value *v = idx ? gather(g, x, idx, axis, at) : NULL;
	for (int d = axis; d + 1 < x->type.rank; d++)
		shape[d] = shape[d + 1];
	return v ? ig_emit(g, OP_RESHAPE, at, type_block(x->type, x->type.rank - 1, shape), v, NULL, NULL) : NULL;
}

Sym ig_index_block(Gen *g, Node *n, Sym base)
{
	if (base.type.rank == 0) {
		error(g, n->a->span, "%s is a scalar: only blocks can be indexed", ig_sym_desc(g, base));
		return VOID;
	}
	Value *v = ig_materialize(g, base, n->a->span);
	if (!v)
		return VOID;
	int d = 0, rank = 0, rank_in = v->type.rank;
	Type orig = v->type;
	int32_t shape[BLK_MAX_RANK];
	for (int k = 0; k < n->list.len; k++) {
		Node *it = n->list.items[k];
		if (it->kind == N_NONE) {
			if (rank >= BLK_MAX_RANK) {
				error(g, it->span, "blocks have at most %d dimensions", BLK_MAX_RANK);
				return VOID;
			}
			shape[rank++] = 1;
			continue;
		}
		if (d >= rank_in) {
			error(g, it->span, "too many indices for %s", tstr(g, orig));
			return VOID;
		}
		if (it->kind == N_SLICE) {
			int32_t len;
			if (rank >= BLK_MAX_RANK) {
				error(g, it->span, "blocks have at most %d dimensions", BLK_MAX_RANK);
				return VOID;
			}
			if (!(v = slice_axis(g, v, d, it, &len)))
				return VOID;
			shape[rank++] = len;
		} else if (!(v = index_axis(g, v, d, it, orig))) {
			return VOID;
		}
		d++;
	}
	for (; d < rank_in; d++) { /* the axes not written are kept whole */
		if (rank >= BLK_MAX_RANK) {
			error(g, n->span, "blocks have at most %d dimensions", BLK_MAX_RANK);
			return VOID;
		}
		shape[rank++] = v->type.shape[d];
	}
	if (rank == 0)
		return ig_value_sym(only_element(g, v, n->span));
	Type t = type_block(v->type, rank, shape);
	if (type_eq(t, v->type))
		return ig_value_sym(v);
	return ig_value_sym(ig_emit(g, OP_RESHAPE, n->span, t, v, NULL, NULL));
}

/* gather(src, index, axis): out[i][j] = src[index[i][j]][j] along axis 0, and
 * so on (Triton's tl.gather). */
Sym ig_bi_gather(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_block_arg(g, a, 0), *idx = ig_block_arg(g, a, 1);
	int axis;
	if (!x || !idx || !ig_axis_arg(g, a, 2, x->type.rank, &axis))
		return VOID;
	if (idx->type.ptr || !scalar_is_int((ScalarKind)idx->type.scalar) || idx->type.scalar == SK_I1) {
		error(g, a->at[1], "the indices of gather must be an integer block, found %s", tstr(g, idx->type));
		return VOID;
	}
	bool ok = idx->type.rank == x->type.rank;
	for (int d = 0; ok && d < x->type.rank; d++)
		ok = d == axis || idx->type.shape[d] == x->type.shape[d];
	if (!ok) {
		error(g, a->call, "gather along axis %d needs indices of the source's rank and of its shape on the other "
		                  "axes: source %s, indices %s", axis, tstr(g, x->type), tstr(g, idx->type));
		return VOID;
	}
	Value *i32 = ig_cast_value(g, idx, SK_I32, a->at[1]);
	return ig_value_sym(i32 ? gather(g, x, i32, axis, a->call) : NULL);
}

/* flip(x, dim = last): the elements along dim in reverse order. */
Sym ig_bi_flip(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_block_arg(g, a, 0);
	int axis;
	if (!x)
		return VOID;
	if (!a->given[1] || a->v[1].kind == S_NONE)
		axis = x->type.rank - 1;
	else if (!ig_axis_arg(g, a, 1, x->type.rank, &axis))
		return VOID;
	int32_t n = x->type.shape[axis];
	if (n == 1)
		return ig_value_sym(x);
	Value *idx = axis_indices(g, x->type, axis, n, n - 1, -1, a->call);
	return ig_value_sym(idx ? gather(g, x, idx, axis, a->call) : NULL);
}

/* interleave(a, b): join(a, b) with its last two axes merged: a[..., 0],
 * b[..., 0], a[..., 1], b[..., 1] ... (Triton's tl.interleave). */
Sym ig_bi_interleave(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_value_arg(g, a, 0), *y = ig_value_arg(g, a, 1);
	if (!x || !y)
		return VOID;
	if (!type_eq(type_elem(x->type), type_elem(y->type))) {
		error(g, a->call, "interleave needs two blocks of one element type, found %s and %s", tstr(g, x->type),
		      tstr(g, y->type));
		return VOID;
	}
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!ig_common_shape(g, x->type, y->type, &rank, shape, a->call, "the operands of interleave"))
		return VOID;
	if (rank == 0 || rank >= BLK_MAX_RANK) {
		error(g, a->call, "interleave needs blocks of rank 1 to %d, found %s", BLK_MAX_RANK - 1, tstr(g, x->type));
		return VOID;
	}
	if (!(x = ig_broadcast_to(g, x, rank, shape, a->call)) || !(y = ig_broadcast_to(g, y, rank, shape, a->call)))
		return VOID;
	Type jt = type_block(x->type, rank, shape);
	jt.shape[jt.rank++] = 2;
	Value *j = ig_emit(g, OP_JOIN, a->call, jt, x, y, NULL);
	if (!j)
		return VOID;
	shape[rank - 1] *= 2;
	return ig_value_sym(ig_emit(g, OP_RESHAPE, a->call, type_block(x->type, rank, shape), j, NULL, NULL));
}

/* ---- registers and launch facts ------------------------------------------------ */

/* globaltimer() (u64 nanoseconds) and smid() (i32): the GPU's special
 * registers; the interpreter gives the host's clock and multiprocessor 0. */
Sym ig_bi_sreg(Gen *g, Args *a, int which)
{
	Type t = type_scalar(which == SREG_GLOBALTIMER ? SK_U64 : SK_I32);
	Op *op = ig_emit_op(g, OP_SREG, a->call, NULL, 0, &t, 1);
	if (!op)
		return VOID;
	op->attr[0] = which;
	return ig_value_sym(op->results[0]);
}

/* num_warps(): the warps a program of this launch has (a constant i32). */
Sym ig_bi_num_warps(Gen *g, Args *a, int which)
{
	(void)which;
	if (!g->f || g->in_grid) {
		error(g, a->call, "num_warps() is known only inside a kernel's body");
		return VOID;
	}
	return ig_const_int(SK_I32, g->f->num_warps, false);
}

/* ---- inline PTX ------------------------------------------------------------------ */

/* inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack): the
 * PTX text once for each `pack` elements of the arguments (broadcast to one
 * shape), outputs first in the constraints ("=r,r,r"), $0 ... in the text;
 * dtype a type or a tuple of types (one result each). pack: 1, 2, 4, 8 or
 * 16 (lower/inline_asm.c says how the elements go into registers). */
Sym ig_bi_inline_asm(Gen *g, Args *a, int which)
{
	(void)which;
	if (a->v[0].kind != S_STRING || a->v[1].kind != S_STRING) {
		error(g, a->v[0].kind != S_STRING ? a->at[0] : a->at[1],
		      "inline_asm_elementwise takes the PTX text and its constraints as strings");
		return VOID;
	}
	int64_t pack = 1;
	if (a->given[5] && !ig_arg_int(g, a, 5, &pack))
		return VOID;
	if (pack < 1 || pack > 16 || (pack & (pack - 1))) {
		error(g, a->at[5], "the pack of inline_asm_elementwise must be 1, 2, 4, 8 or 16 (elements an instance of the "
		                   "PTX takes), found %lld", (long long)pack);
		return VOID;
	}
	bool pure;
	if (!ig_arg_bool(g, a, 4, true, &pure))
		return VOID;
	Sym args = a->v[2], dt = a->v[3];
	const Sym *ai = args.kind == S_TUPLE ? args.items : &args, *ti = dt.kind == S_TUPLE ? dt.items : &dt;
	int na = args.kind == S_TUPLE ? args.n : 1, nt = dt.kind == S_TUPLE ? dt.n : 1;
	if (na > MAX_ARGS || nt < 1 || nt > MAX_ARGS) {
		error(g, a->call, "inline_asm_elementwise takes at most %d arguments and 1 to %d result types", MAX_ARGS,
		      MAX_ARGS);
		return VOID;
	}
	Value *vals[MAX_ARGS];
	int rank = 0;
	int32_t shape[BLK_MAX_RANK] = {0};
	for (int i = 0; i < na; i++) {
		if (!(vals[i] = ig_materialize(g, ai[i], a->at[2])))
			return VOID;
		Type s = type_block(vals[i]->type, rank, shape);
		if (!ig_common_shape(g, s, vals[i]->type, &rank, shape, a->at[2], "the arguments of inline_asm_elementwise"))
			return VOID;
	}
	for (int i = 0; i < na; i++)
		if (!(vals[i] = ig_broadcast_to(g, vals[i], rank, shape, a->at[2])))
			return VOID;
	Type rts[MAX_ARGS];
	for (int i = 0; i < nt; i++) {
		if (ti[i].kind != S_TYPE || ti[i].type.rank) {
			error(g, a->at[3], "the dtype of inline_asm_elementwise must be a scalar type or a tuple of them, found %s",
			      ig_sym_desc(g, ti[i]));
			return VOID;
		}
		rts[i] = type_block(ti[i].type, rank, shape);
	}
	Op *op = ig_emit_op(g, OP_INLINE_ASM, a->call, vals, na, rts, nt);
	if (!op)
		return VOID;
	op->str = arena_strndup(g->arena, a->v[0].str, a->v[0].len);
	op->str2 = arena_strndup(g->arena, a->v[1].str, a->v[1].len);
	op->attr[0] = pure;
	op->attr[1] = pack;
	if (!op->str || !op->str2)
		return VOID;
	if (nt == 1)
		return ig_value_sym(op->results[0]);
	Sym out = {.kind = S_TUPLE, .n = nt};
	if (!(out.items = arena_alloc(g->arena, (size_t)nt * sizeof *out.items)))
		return VOID;
	for (int i = 0; i < nt; i++)
		out.items[i] = ig_value_sym(op->results[i]);
	return out;
}
