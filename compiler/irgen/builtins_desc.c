/* irgen/builtins_desc.c: tensor descriptors: tensor_desc(base, shape,
 * strides, block_shape, padding_option) makes one (a compile-time
 * aggregate, S_DESC: no IR of its own; Sym.i its padding, DESC_PAD_*),
 * desc_load and desc_store (also spelled d.load(offsets) and
 * d.store(offsets, value)) read and write the box of the block shape at
 * element offsets, as desc_load / desc_store ops; desc_atomic_add and the
 * other atomics (d.atomic_add(offsets, value)) combine a box into memory;
 * desc_gather and desc_scatter (d.gather(rows, col), d.scatter(value,
 * rows, col)) read and write chosen rows of a rank-2 descriptor. */
#include "irgen/irgen_int.h"

#include <string.h>

static int desc_padding(Gen *g, Args *a, Type elem);

/* The elements of a tuple argument, or the argument itself (a rank-1
 * descriptor may give a scalar instead of a 1-tuple). */
static const Sym *tuple_items(const Sym *s, int *n)
{
	if (s->kind == S_TUPLE) {
		*n = s->n;
		return s->items;
	}
	*n = 1;
	return s;
}

/* An integer scalar (a runtime value or a constant) for part `what` of a
 * descriptor. */
static bool index_sym(Gen *g, Sym s, Span at, const char *what, int d)
{
	bool is_int = is_valueish(s) && !s.type.ptr && scalar_is_int((ScalarKind)s.type.scalar) &&
	              s.type.scalar != SK_I1;
	if (is_int && s.type.rank == 0)
		return true;
	if (s.kind != S_VOID)
		error(g, at, "%s %d of a tensor descriptor must be an integer scalar, found %s", what, d,
		      ig_sym_desc(g, s));
	return false;
}

Sym ig_bi_tensor_desc(Gen *g, Args *a, int which)
{
	(void)which;
	Sym base = a->v[0];
	if (base.kind != S_VALUE || !base.type.ptr || base.type.rank) {
		error(g, a->at[0], "the base of a tensor descriptor must be a pointer (such as a *f16 parameter), found %s",
		      ig_sym_desc(g, base));
		return VOID;
	}
	Type elem = type_pointee(base.type);
	if (elem.ptr) {
		error(g, a->at[0], "a tensor descriptor holds scalars, but the base points to %s", tstr(g, elem));
		return VOID;
	}
	int r, ns, nb;
	const Sym *shape = tuple_items(&a->v[1], &r), *strides = tuple_items(&a->v[2], &ns),
	          *block = tuple_items(&a->v[3], &nb);
	if (r < 1 || r > BLK_MAX_RANK) {
		error(g, a->at[1], "a tensor descriptor has rank 1 to %d; this shape has %d dimension%s", BLK_MAX_RANK, r,
		      r == 1 ? "" : "s");
		return VOID;
	}
	if (ns != r || nb != r) {
		error(g, a->at[ns != r ? 2 : 3], "the %s has %d element%s, but the shape has %d",
		      ns != r ? "strides tuple" : "block shape", ns != r ? ns : nb, (ns != r ? ns : nb) == 1 ? "" : "s", r);
		return VOID;
	}
	Sym out = {.kind = S_DESC, .v = base.v, .n = r};
	out.items = arena_alloc(g->arena, (size_t)(2 * r) * sizeof *out.items);
	if (!out.items)
		return VOID;
	int32_t bshape[BLK_MAX_RANK];
	for (int d = 0; d < r; d++) {
		if (!index_sym(g, shape[d], a->at[1], "dimension", d) || !index_sym(g, strides[d], a->at[2], "stride", d))
			return VOID;
		Sym b = block[d];
		__int128 bv = b.kind == S_CONST && !scalar_is_float((ScalarKind)b.type.scalar) ? ig_int_value(b) : 0;
		if (b.kind != S_CONST || scalar_is_float((ScalarKind)b.type.scalar)) {
			error(g, a->at[3], "the block shape of a tensor descriptor must be constant: dimension %d is %s", d,
			      ig_sym_desc(g, b));
			return VOID;
		}
		if (bv < 1 || bv > BLK_MAX_NUMEL || (bv & (bv - 1))) {
			error(g, a->at[3], "dimension %d of the block shape is %lld, not a power of two up to %d", d,
			      (long long)bv, BLK_MAX_NUMEL);
			return VOID;
		}
		bshape[d] = (int32_t)bv;
		out.items[d] = shape[d];
		out.items[r + d] = strides[d];
	}
	if (!ig_shape_fits(g, r, bshape, a->at[3]))
		return VOID;
	Sym last = strides[r - 1];
	if (last.kind == S_CONST && ig_int_value(last) != 1) {
		error(g, a->at[2], "the last stride of a tensor descriptor must be 1 (its rows are contiguous), found %lld",
		      (long long)ig_int_value(last));
		return VOID;
	}
	out.type = type_block(elem, r, bshape);
	int pad = desc_padding(g, a, elem);
	if (pad < 0)
		return VOID;
	out.i = pad;
	return out;
}

/* The descriptor argument of desc_load / desc_store. */
static bool desc_arg(Gen *g, Args *a, Sym *d)
{
	*d = a->v[0];
	if (d->kind == S_DESC)
		return true;
	error(g, a->at[0], "'%s' needs a tensor descriptor (from tensor_desc) first, found %s", a->fname,
	      ig_sym_desc(g, *d));
	return false;
}

/* True when integer s needs 64 bits as a descriptor index. */
static bool wide(Sym s)
{
	ScalarKind k = (ScalarKind)s.type.scalar;
	if (s.kind == S_CONST)
		return !ig_fits(SK_I32, ig_int_value(s));
	return scalar_bits(k) == 64 || k == SK_U32;
}

/* The operands base, shape[r], strides[r], offsets[r] of a desc op: the
 * integers in i64 when any needs it, else i32. */
static bool desc_operands(Gen *g, Args *a, Sym d, Value **ops)
{
	int r = d.n, no;
	const Sym *offs = tuple_items(&a->v[1], &no);
	if (no != r) {
		error(g, a->at[1], "this tensor descriptor has rank %d, but %d offset%s %s given", r, no, no == 1 ? "" : "s",
		      no == 1 ? "is" : "are");
		return false;
	}
	Sym idx[3 * BLK_MAX_RANK];
	for (int i = 0; i < 2 * r; i++)
		idx[i] = d.items[i];
	bool w64 = false;
	for (int i = 0; i < r; i++) {
		if (!index_sym(g, offs[i], a->at[1], "offset", i))
			return false;
		idx[2 * r + i] = offs[i];
	}
	for (int i = 0; i < 3 * r; i++)
		w64 |= wide(idx[i]);
	ops[0] = d.v;
	for (int i = 0; i < 3 * r; i++)
		if (!(ops[1 + i] = ig_to_elem(g, idx[i], w64 ? SK_I64 : SK_I32, a->at[1])))
			return false;
	return true;
}

Sym ig_bi_desc_load(Gen *g, Args *a, int which)
{
	(void)which;
	Sym d;
	Value *ops[1 + 3 * BLK_MAX_RANK];
	if (!desc_arg(g, a, &d) || !desc_operands(g, a, d, ops))
		return VOID;
	Op *op = ig_emit_op(g, OP_DESC_LOAD, a->call, ops, 1 + 3 * d.n, &d.type, 1);
	if (op)
		op->attr[0] = d.i; /* the padding */
	return op ? ig_value_sym(op->results[0]) : VOID;
}

Sym ig_bi_desc_store(Gen *g, Args *a, int which)
{
	(void)which;
	Sym d;
	Value *ops[2 + 3 * BLK_MAX_RANK];
	if (!desc_arg(g, a, &d))
		return VOID;
	Sym v = a->v[2];
	ScalarKind k = (ScalarKind)d.type.scalar;
	const char *bt = tstr(g, d.type);
	if (!is_valueish(v) || v.type.ptr || (v.kind == S_VALUE && v.type.scalar != k) ||
	    (v.kind == S_CONST && !v.weak && v.type.scalar != k)) {
		if (is_valueish(v) && !v.type.ptr)
			error(g, a->at[2], "cannot store %s through a tensor descriptor of %s blocks; convert it with .to(%s)",
			      ig_sym_desc(g, v), bt, scalar_name(k));
		else
			error(g, a->at[2], "the value to store must be a block of %s, found %s", bt, ig_sym_desc(g, v));
		return VOID;
	}
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!ig_common_shape(g, d.type, v.type, &rank, shape, a->call, "the descriptor's block and the value"))
		return VOID;
	if (!type_eq(type_block(d.type, rank, shape), d.type)) {
		error(g, a->at[2], "the value is %s, larger than the descriptor's block %s", ig_sym_desc(g, v), bt);
		return VOID;
	}
	if (!desc_operands(g, a, d, ops))
		return VOID;
	Value *x = ig_to_elem(g, v, k, a->at[2]);
	if (!(ops[1 + 3 * d.n] = ig_broadcast_to(g, x, d.n, d.type.shape, a->at[2])))
		return VOID;
	ig_emit_op(g, OP_DESC_STORE, a->call, ops, 2 + 3 * d.n, NULL, 0);
	return (Sym){.kind = S_NONE};
}

/* ---- padding, atomics, row gather and scatter --------------------------------- */

/* tensor_desc's padding_option (argument 4): "zero" (the default) or "nan",
 * NaN only for float elements. -1 after an error. */
static int desc_padding(Gen *g, Args *a, Type elem)
{
	int pad = ig_arg_choice(g, a, 4, "zero|nan", DESC_PAD_ZERO);
	if (pad == DESC_PAD_NAN && (elem.ptr || !scalar_is_float((ScalarKind)elem.scalar))) {
		error(g, a->at[4], "padding_option = \"nan\" needs float elements, but the base points to %s; integers "
		                   "have no NaN", tstr(g, elem));
		return -1;
	}
	return pad;
}

/* Value argument vi of a desc op (its element type k exactly, or a literal
 * converted), broadcast to shape `to` of rank r, and no larger. */
static Value *block_value(Gen *g, Args *a, int vi, ScalarKind k, int r, const int32_t *to)
{
	Sym v = a->v[vi];
	Type want = type_block(type_scalar(k), r, to);
	const char *bt = tstr(g, want);
	if (!is_valueish(v) || v.type.ptr || (v.kind == S_VALUE && v.type.scalar != k) ||
	    (v.kind == S_CONST && !v.weak && v.type.scalar != k)) {
		if (is_valueish(v) && !v.type.ptr)
			error(g, a->at[vi], "'%s' through a tensor descriptor of %s elements takes %s, found %s; convert it "
			                    "with .to(%s)", a->fname, scalar_name(k), bt, ig_sym_desc(g, v), scalar_name(k));
		else
			error(g, a->at[vi], "the value of '%s' must be a block of %s, found %s", a->fname, bt,
			      ig_sym_desc(g, v));
		return NULL;
	}
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!ig_common_shape(g, want, v.type, &rank, shape, a->at[vi], "the descriptor's block and the value"))
		return NULL;
	if (!type_eq(type_block(want, rank, shape), want)) {
		error(g, a->at[vi], "the value is %s, larger than the block %s", ig_sym_desc(g, v), bt);
		return NULL;
	}
	Value *x = ig_to_elem(g, v, k, a->at[vi]);
	return x ? ig_broadcast_to(g, x, r, to, a->at[vi]) : NULL;
}

/* desc_atomic_add / _max / _min / _and / _or / _xor(desc, offsets, value):
 * each element of value inside the bounds combined into the tensor. */
Sym ig_bi_desc_atomic(Gen *g, Args *a, int which)
{
	Sym d;
	Value *ops[2 + 3 * BLK_MAX_RANK];
	if (!desc_arg(g, a, &d))
		return VOID;
	ScalarKind k = (ScalarKind)d.type.scalar;
	bool is_float = scalar_is_float(k);
	if (k == SK_I1 || (is_float && (which > ATOM_MIN || scalar_bits(k) < 16))) {
		error(g, a->at[0], "'%s' does not apply to a tensor descriptor of %s: %s", a->fname, scalar_name(k),
		      which > ATOM_MIN ? "and, or and xor take integers"
		                       : "add, max and min take integers (not i1) and floats of 16 bits or more");
		return VOID;
	}
	if (!desc_operands(g, a, d, ops) || !(ops[1 + 3 * d.n] = block_value(g, a, 2, k, d.n, d.type.shape)))
		return VOID;
	Op *op = ig_emit_op(g, OP_DESC_ATOMIC, a->call, ops, 2 + 3 * d.n, NULL, 0);
	if (op)
		op->attr[0] = which;
	return (Sym){.kind = S_NONE};
}

/* The operands of desc_gather / desc_scatter (arguments desc, rows at ri,
 * column at ri + 1): base, shape[2], strides[2], the rows as a block of the
 * index type, the column; *d the descriptor and *nrows the rows' count. */
static bool rows_operands(Gen *g, Args *a, int ri, Sym *d, Value **ops, int32_t *nrows)
{
	if (!desc_arg(g, a, d))
		return false;
	if (d->n != 2 || d->type.shape[0] != 1) {
		error(g, a->at[0], "'%s' needs a rank-2 tensor descriptor with a block shape of (1, N) (a row, the "
		      "columns it reads of each row it picks), found %s", a->fname, ig_sym_desc(g, *d));
		return false;
	}
	Sym rows = a->v[ri], col = a->v[ri + 1];
	if (rows.kind != S_VALUE || rows.type.ptr || rows.type.rank != 1 ||
	    !scalar_is_int((ScalarKind)rows.type.scalar) || rows.type.scalar == SK_I1) {
		error(g, a->at[ri], "the row offsets of '%s' must be a 1-D block of integers (such as arange(0, 16) + r), "
		      "found %s", a->fname, ig_sym_desc(g, rows));
		return false;
	}
	if (!is_valueish(col) || col.type.ptr || col.type.rank || !scalar_is_int((ScalarKind)col.type.scalar) ||
	    col.type.scalar == SK_I1) {
		if (col.kind != S_VOID)
			error(g, a->at[ri + 1], "the column offset of '%s' must be an integer scalar, found %s", a->fname,
			      ig_sym_desc(g, col));
		return false;
	}
	bool w64 = wide(rows) || wide(col);
	for (int i = 0; i < 4; i++)
		w64 |= wide(d->items[i]);
	ScalarKind it = w64 ? SK_I64 : SK_I32;
	ops[0] = d->v;
	for (int i = 0; i < 4; i++)
		if (!(ops[1 + i] = ig_to_elem(g, d->items[i], it, a->at[0])))
			return false;
	*nrows = rows.type.shape[0];
	return (ops[5] = ig_to_elem(g, rows, it, a->at[ri])) && (ops[6] = ig_to_elem(g, col, it, a->at[ri + 1]));
}

/* desc_gather(desc, x_offsets, y_offset): rows x_offsets[i], columns
 * y_offset .. y_offset + N - 1, as a [R, N] block. */
Sym ig_bi_desc_gather(Gen *g, Args *a, int which)
{
	(void)which;
	Sym d;
	Value *ops[7];
	int32_t r;
	if (!rows_operands(g, a, 1, &d, ops, &r))
		return VOID;
	int32_t shape[2] = {r, d.type.shape[1]};
	Type t = type_block(d.type, 2, shape);
	if (!ig_shape_fits(g, 2, shape, a->call))
		return VOID;
	Op *op = ig_emit_op(g, OP_DESC_GATHER, a->call, ops, 7, &t, 1);
	if (!op)
		return VOID;
	op->attr[0] = d.i;
	return ig_value_sym(op->results[0]);
}

/* desc_scatter(desc, value, x_offsets, y_offset): value's row i written
 * to row x_offsets[i], the elements inside the bounds. */
Sym ig_bi_desc_scatter(Gen *g, Args *a, int which)
{
	(void)which;
	Sym d;
	Value *ops[8];
	int32_t r;
	if (!rows_operands(g, a, 2, &d, ops, &r))
		return VOID;
	int32_t shape[2] = {r, d.type.shape[1]};
	if (!ig_shape_fits(g, 2, shape, a->call) ||
	    !(ops[7] = block_value(g, a, 1, (ScalarKind)d.type.scalar, 2, shape)))
		return VOID;
	ig_emit_op(g, OP_DESC_SCATTER, a->call, ops, 8, NULL, 0);
	return (Sym){.kind = S_NONE};
}
