/* irgen/builtins_reduce.c: reductions and scans (sum ... argmin, cumsum,
 * cumprod; reduce and associative_scan with a combine fn), and dot. */
#include "irgen/irgen_int.h"

/* Fills the combine region of a reduce or scan op: its arguments are
 * (a_1..a_n, b_1..b_n) as scalars; it yields n combined values. */
static bool build_combine(Gen *g, Op *op, int n, int kind, Sym fn, Span at)
{
	Region *saved = g->region;
	Region *r = &op->regions[0];
	Value *args[2 * MAX_ARGS];
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < n; i++)
			args[j * n + i] = ir_region_arg(g->f, r, type_elem(op->operands[i]->type));
	for (int i = 0; i < 2 * n; i++)
		if (!args[i])
			return false;
	g->region = r;
	Value *out[MAX_ARGS];
	bool ok = true;
	Type t = args[0]->type;
	switch (kind) {
	case COMBINE_ADD:
	case COMBINE_MUL:
		out[0] = ig_emit(g, kind == COMBINE_ADD ? OP_ADD : OP_MUL, at, t, args[0], args[1], NULL);
		break;
	case COMBINE_MAX:
	case COMBINE_MIN:
		out[0] = ig_emit(g, kind == COMBINE_MAX ? OP_MAX : OP_MIN, at, t, args[0], args[1], NULL);
		break;
	case COMBINE_ARGMAX:
	case COMBINE_ARGMIN: {
		/* take b when it is better, or equal with a smaller index */
		Type i1 = type_scalar(SK_I1);
		Value *better = ig_emit(g, OP_CMP, at, i1, args[2], args[0], NULL);
		Value *equal = ig_emit(g, OP_CMP, at, i1, args[2], args[0], NULL);
		Value *earlier = ig_emit(g, OP_CMP, at, i1, args[3], args[1], NULL);
		if (!better || !equal || !earlier)
			break;
		better->def->attr[0] = kind == COMBINE_ARGMAX ? CMP_GT : CMP_LT;
		equal->def->attr[0] = CMP_EQ;
		earlier->def->attr[0] = CMP_LT;
		Value *tie = ig_emit(g, OP_AND, at, i1, equal, earlier, NULL);
		Value *take = tie ? ig_emit(g, OP_OR, at, i1, better, tie, NULL) : NULL;
		out[0] = take ? ig_emit(g, OP_SELECT, at, t, take, args[2], args[0]) : NULL;
		out[1] = take ? ig_emit(g, OP_SELECT, at, args[1]->type, take, args[3], args[1]) : NULL;
		break;
	}
	case COMBINE_FN: {
		RawArgs raw = {.call = at, .n_pos = 2 * n};
		for (int i = 0; i < 2 * n; i++) {
			raw.pos[i] = ig_value_sym(args[i]);
			raw.pos_at[i] = at;
		}
		Sym res = ig_call_fn(g, fn.fn, fn.mod, &raw);
		const Sym *items = res.kind == S_TUPLE ? res.items : &res;
		int m = res.kind == S_TUPLE ? res.n : 1;
		if (res.kind == S_VOID) {
			ok = false;
			break;
		}
		if (m != n) {
			error(g, at, "the combine function '%s' must return %d value%s, it returns %s", fn.fn->name, n,
			      n == 1 ? "" : "s", ig_sym_desc(g, res));
			ok = false;
			break;
		}
		for (int i = 0; i < n; i++) {
			Sym it = items[i];
			if (!is_valueish(it) || it.type.rank) {
				error(g, at, "the combine function '%s' must return scalars, found %s", fn.fn->name, ig_sym_desc(g, it));
				ok = false;
				break;
			}
			out[i] = ig_to_elem(g, it, (ScalarKind)args[i]->type.scalar, at);
		}
		break;
	}
	}
	int results = kind == COMBINE_ARGMAX || kind == COMBINE_ARGMIN ? 2 : n;
	for (int i = 0; ok && i < results; i++)
		ok = out[i] != NULL;
	if (ok)
		ok = ig_emit_op(g, OP_YIELD, at, out, results, NULL, 0) != NULL;
	g->region = saved;
	return ok;
}

/* Reduces (or scans) the n blocks `in` along axis. */
static Sym reduce_blocks(Gen *g, OpCode code, Value **in, int n, int axis, bool keep_dims, bool reverse, int kind,
                         Sym fn, Span at)
{
	Type rts[MAX_ARGS];
	for (int i = 0; i < n; i++) {
		Type t = in[i]->type;
		if (code == OP_REDUCE) {
			int32_t shape[BLK_MAX_RANK] = {0};
			int r = 0;
			for (int d = 0; d < t.rank; d++)
				if (d != axis)
					shape[r++] = t.shape[d];
			t = type_block(t, r, shape);
		}
		rts[i] = t;
	}
	Op *op = ig_emit_op(g, code, at, in, n, rts, n);
	if (!op)
		return VOID;
	op->attr[0] = axis;
	op->attr[1] = reverse;
	if (!build_combine(g, op, n, kind, fn, at))
		return VOID;
	Sym out = {.kind = S_TUPLE, .n = n};
	out.items = arena_alloc(g->arena, (size_t)n * sizeof *out.items);
	if (!out.items)
		return VOID;
	for (int i = 0; i < n; i++) {
		Value *v = op->results[i];
		if (code == OP_REDUCE && keep_dims) {
			int32_t shape[BLK_MAX_RANK] = {0};
			for (int d = 0, s = 0; d < in[i]->type.rank; d++)
				shape[d] = d == axis ? 1 : v->type.shape[s++];
			Value *e = ig_emit(g, OP_EXPAND_DIMS, at, type_block(v->type, in[i]->type.rank, shape), v, NULL, NULL);
			if (e)
				e->def->attr[0] = axis;
			v = e;
		}
		out.items[i] = ig_value_sym(v);
	}
	return n == 1 ? out.items[0] : out;
}

/* x flattened to one dimension (for axis = None). */
static Value *flatten(Gen *g, Value *x, Span at)
{
	if (x->type.rank == 1)
		return x;
	int32_t n = (int32_t)type_numel(x->type);
	return ig_emit(g, OP_RESHAPE, at, type_block(x->type, 1, &n), x, NULL, NULL);
}

/* The i32 index of each element along axis, broadcast to shape t. */
static Value *axis_index(Gen *g, Type t, int axis, Span at)
{
	int32_t n = t.shape[axis];
	Value *r = ig_emit(g, OP_ARANGE, at, type_block(type_scalar(SK_I32), 1, &n), NULL, NULL, NULL);
	if (!r)
		return NULL;
	r->def->attr[0] = 0;
	r->def->attr[1] = n;
	int32_t shape[BLK_MAX_RANK];
	for (int d = 0; d < t.rank; d++)
		shape[d] = d == axis ? n : 1;
	if (t.rank > 1)
		r = ig_emit(g, OP_RESHAPE, at, type_block(r->type, t.rank, shape), r, NULL, NULL);
	return r ? ig_broadcast_to(g, r, t.rank, t.shape, at) : NULL;
}

/* sum max min argmax argmin: (x, axis = None, keep_dims = false[, dtype]) */
Sym ig_bi_reduction(Gen *g, Args *a, int kind)
{
	Value *x = ig_block_arg(g, a, 0);
	bool keep;
	if (!x || !ig_arg_bool(g, a, 2, false, &keep))
		return VOID;
	int axis = 0;
	bool all = !a->given[1] || a->v[1].kind == S_NONE;
	if (all) {
		if (kind == COMBINE_ARGMAX || kind == COMBINE_ARGMIN) {
			error(g, a->call, "'%s' needs an axis", a->fname);
			return VOID;
		}
		x = flatten(g, x, a->call);
		keep = false;
	} else if (!ig_axis_arg(g, a, 1, x->type.rank, &axis)) {
		return VOID;
	}
	if (!x)
		return VOID;
	ScalarKind k = (ScalarKind)x->type.scalar, acc = k;
	if (x->type.ptr) {
		error(g, a->at[0], "'%s' of pointers", a->fname);
		return VOID;
	}
	if (kind == COMBINE_ADD) {
		Type dt;
		if (a->given[3] && a->v[3].kind != S_NONE) {
			if (!ig_arg_type(g, a, 3, &dt))
				return VOID;
			acc = (ScalarKind)dt.scalar;
			k = acc;
		} else if (scalar_is_int(k) && scalar_bits(k) < 32) {
			acc = k = scalar_is_unsigned(k) ? SK_U32 : SK_I32;
		} else if (k == SK_F16 || k == SK_BF16 || k == SK_F8E4M3 || k == SK_F8E5M2) {
			acc = SK_F32;
		}
		x = ig_cast_value(g, x, acc, a->call);
	}
	Value *in[2] = {x, NULL};
	int n = 1;
	if (kind == COMBINE_ARGMAX || kind == COMBINE_ARGMIN) {
		in[1] = axis_index(g, x->type, axis, a->call);
		n = 2;
	}
	if (!x || (n == 2 && !in[1]))
		return VOID;
	Sym r = reduce_blocks(g, OP_REDUCE, in, n, axis, keep, false, kind, VOID, a->call);
	if (r.kind == S_TUPLE)
		r = r.items[1]; /* argmax/argmin: the index */
	if (kind == COMBINE_ADD && acc != k && r.kind == S_VALUE)
		r = ig_value_sym(ig_cast_value(g, r.v, k, a->call));
	return r;
}

static bool blocks_of(Gen *g, Args *a, int i, Value **in, int *n)
{
	Sym x = a->v[i];
	const Sym *items = x.kind == S_TUPLE ? x.items : &x;
	*n = x.kind == S_TUPLE ? x.n : 1;
	if (*n < 1 || *n > MAX_ARGS / 2) {
		error(g, a->at[i], "'%s' takes 1 to %d blocks", a->fname, MAX_ARGS / 2);
		return false;
	}
	for (int j = 0; j < *n; j++) {
		if (items[j].kind != S_VALUE || items[j].type.rank == 0 ||
		    (j && !type_eq(type_block(type_scalar(SK_I1), items[j].type.rank, items[j].type.shape),
		                   type_block(type_scalar(SK_I1), in[0]->type.rank, in[0]->type.shape)))) {
			error(g, a->at[i], "'%s' needs blocks of one shape, found %s", a->fname, ig_sym_desc(g, items[j]));
			return false;
		}
		in[j] = items[j].v;
	}
	return true;
}

static bool fn_arg(Gen *g, Args *a, int i, Sym *fn)
{
	if (a->v[i].kind != S_FN) {
		error(g, a->at[i], "argument %d of '%s' must be a fn, found %s", i + 1, a->fname, ig_sym_desc(g, a->v[i]));
		return false;
	}
	*fn = a->v[i];
	return true;
}

/* reduce(x, axis, combine, keep_dims = false) */
Sym ig_bi_reduce(Gen *g, Args *a, int which)
{
	(void)which;
	Value *in[MAX_ARGS];
	int n, axis;
	Sym fn;
	bool keep;
	if (!blocks_of(g, a, 0, in, &n) || !fn_arg(g, a, 2, &fn) || !ig_arg_bool(g, a, 3, false, &keep))
		return VOID;
	if (a->v[1].kind == S_NONE) {
		for (int i = 0; i < n; i++)
			if (!(in[i] = flatten(g, in[i], a->call)))
				return VOID;
		axis = 0;
		keep = false;
	} else if (!ig_axis_arg(g, a, 1, in[0]->type.rank, &axis)) {
		return VOID;
	}
	return reduce_blocks(g, OP_REDUCE, in, n, axis, keep, false, COMBINE_FN, fn, a->call);
}

/* cumsum/cumprod(x, axis = 0, reverse = false); associative_scan(x, axis, combine, reverse = false) */
Sym ig_bi_scan(Gen *g, Args *a, int kind)
{
	Value *in[MAX_ARGS];
	int n = 1, axis = 0;
	bool reverse;
	Sym fn = VOID;
	int rev_i = kind == COMBINE_FN ? 3 : 2;
	if (kind == COMBINE_FN) {
		if (!blocks_of(g, a, 0, in, &n) || !fn_arg(g, a, 2, &fn))
			return VOID;
	} else if (!(in[0] = ig_block_arg(g, a, 0))) {
		return VOID;
	}
	if (!ig_arg_bool(g, a, rev_i, false, &reverse))
		return VOID;
	if (a->given[1] && !ig_axis_arg(g, a, 1, in[0]->type.rank, &axis))
		return VOID;
	ScalarKind k = (ScalarKind)in[0]->type.scalar;
	if (kind == COMBINE_ADD && scalar_is_int(k) && scalar_bits(k) < 32)
		in[0] = ig_cast_value(g, in[0], scalar_is_unsigned(k) ? SK_U32 : SK_I32, a->call);
	/* cumsum and cumprod of f16, bf16 and fp8 accumulate in f32 and round
	 * each output once to x's type, as sum does */
	bool narrow = k == SK_F16 || k == SK_BF16 || k == SK_F8E4M3 || k == SK_F8E5M2;
	if ((kind == COMBINE_ADD || kind == COMBINE_MUL) && narrow && !in[0]->type.ptr)
		in[0] = ig_cast_value(g, in[0], SK_F32, a->call);
	if (!in[0])
		return VOID;
	Sym r = reduce_blocks(g, OP_SCAN, in, n, axis, false, reverse, kind, fn, a->call);
	if ((kind == COMBINE_ADD || kind == COMBINE_MUL) && narrow && r.kind == S_VALUE)
		r = ig_value_sym(ig_cast_value(g, r.v, k, a->call));
	return r;
}

/* dot of (B, M, K) and (B, K, N) (and acc (B, M, N)): a dot for each of the
 * B products, stacked again along axis 0. */
static Sym batched_dot(Gen *g, Args *a, Value *x, Value *y)
{
	Type xt = x->type, yt = y->type;
	int32_t B = xt.shape[0];
	if (yt.shape[0] != B || xt.shape[2] != yt.shape[1]) {
		error(g, a->call, "a batched dot needs blocks of shapes (B, M, K) and (B, K, N), found %s and %s", tstr(g, xt),
		      tstr(g, yt));
		return VOID;
	}
	Value *acc = NULL;
	if (a->given[2] && a->v[2].kind != S_NONE) {
		acc = ig_value_arg(g, a, 2);
		if (!acc)
			return VOID;
		if (acc->type.rank != 3 || acc->type.shape[0] != B || acc->type.shape[1] != xt.shape[1] ||
		    acc->type.shape[2] != yt.shape[2]) {
			error(g, a->at[2], "the accumulator must be a (%d, %d, %d) block, found %s", B, xt.shape[1], yt.shape[2],
			      tstr(g, acc->type));
			return VOID;
		}
	}
	Value **parts = arena_alloc(g->arena, (size_t)B * sizeof *parts);
	if (!parts)
		return VOID;
	for (int32_t b = 0; b < B; b++) {
		Args one = *a;
		Value *xb = ig_take(g, x, 0, b, a->at[0]), *yb = ig_take(g, y, 0, b, a->at[1]);
		if (!xb || !yb)
			return VOID;
		one.v[0] = ig_value_sym(xb);
		one.v[1] = ig_value_sym(yb);
		if (acc) {
			Value *cb = ig_take(g, acc, 0, b, a->at[2]);
			if (!cb)
				return VOID;
			one.v[2] = ig_value_sym(cb);
		}
		Sym r = ig_bi_dot(g, &one, 0);
		if (r.kind != S_VALUE)
			return VOID;
		Type t = r.v->type;
		int32_t shape[3] = {1, t.shape[0], t.shape[1]};
		if (!(parts[b] = ig_emit(g, OP_RESHAPE, a->call, type_block(t, 3, shape), r.v, NULL, NULL)))
			return VOID;
	}
	/* stacked pairwise: B is a power of two */
	for (int32_t n = B; n > 1; n /= 2)
		for (int32_t i = 0; i < n / 2; i++) {
			Type t = parts[2 * i]->type;
			t.shape[0] *= 2;
			if (!(parts[i] = ig_emit(g, OP_CAT, a->call, t, parts[2 * i], parts[2 * i + 1], NULL)))
				return VOID;
		}
	return ig_value_sym(parts[0]);
}

/* v (rank 2) with zeros appended along axis 0 up to `to` rows (a power of
 * two: v doubled with a block of zeros until it is there). */
static Value *pad_rows(Gen *g, Value *v, int32_t to, Span at)
{
	while (v && v->type.shape[0] < to) {
		Value *z = ig_emit_const(g, weak_int(0), v->type, at);
		Type t = v->type;
		t.shape[0] *= 2;
		v = z ? ig_emit(g, OP_CAT, at, t, v, z, NULL) : NULL;
	}
	return v;
}

static Value *transpose2(Gen *g, Value *v, Span at)
{
	int32_t shape[2] = {v->type.shape[1], v->type.shape[0]};
	Value *r = ig_emit(g, OP_TRANS, at, type_block(v->type, 2, shape), v, NULL, NULL);
	if (r) {
		r->def->attr[0] = 1;
		r->def->attr[1] = 0;
	}
	return r;
}

Sym ig_bi_dot(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = ig_block_arg(g, a, 0), *y = ig_block_arg(g, a, 1);
	if (!x || !y)
		return VOID;
	if (x->type.rank == 3 && y->type.rank == 3)
		return batched_dot(g, a, x, y);
	if (x->type.rank != 2 || y->type.rank != 2 || x->type.shape[1] != y->type.shape[0]) {
		error(g, a->call, "dot needs blocks of shapes (M, K) and (K, N), or (B, M, K) and (B, K, N), found %s and %s",
		      tstr(g, x->type), tstr(g, y->type));
		return VOID;
	}
	int32_t M = x->type.shape[0], K = x->type.shape[1], N = y->type.shape[1];
	/* K under 16 (the tensor cores' least): both operands padded with zeros
	 * to K = 16, as Triton does; the products of the zeros add nothing */
	if (K < 16) {
		Value *xt = transpose2(g, x, a->at[0]);
		x = xt ? pad_rows(g, xt, 16, a->at[0]) : NULL;
		x = x ? transpose2(g, x, a->at[0]) : NULL;
		y = pad_rows(g, y, 16, a->at[1]);
		if (!x || !y)
			return VOID;
		K = 16;
	}
	ScalarKind kx = (ScalarKind)x->type.scalar, ky = (ScalarKind)y->type.scalar;
	bool ok_in = kx == ky && !x->type.ptr && !y->type.ptr &&
	             (kx == SK_F16 || kx == SK_BF16 || kx == SK_F32 || kx == SK_I8 || kx == SK_F8E4M3 || kx == SK_F8E5M2);
	bool fp8_mix = (kx == SK_F8E4M3 || kx == SK_F8E5M2) && (ky == SK_F8E4M3 || ky == SK_F8E5M2);
	if (!ok_in && !fp8_mix) {
		error(g, a->call, "dot of %s and %s: the inputs must both be f16, bf16, f32, i8 or fp8", tstr(g, x->type),
		      tstr(g, y->type));
		return VOID;
	}
	int prec = ig_arg_choice(g, a, 3, "tf32|tf32x3|ieee", DOT_TF32);
	if (prec < 0)
		return VOID;
	ScalarKind acc_k = kx == SK_I8 ? SK_I32 : SK_F32;
	if (a->given[4] && a->v[4].kind != S_NONE) {
		Type t;
		if (!ig_arg_type(g, a, 4, &t))
			return VOID;
		acc_k = (ScalarKind)t.scalar;
	}
	int32_t shape[2] = {M, N};
	Value *acc;
	if (a->given[2] && a->v[2].kind != S_NONE) {
		acc = ig_value_arg(g, a, 2);
		if (!acc)
			return VOID;
		if (acc->type.rank != 2 || acc->type.shape[0] != M || acc->type.shape[1] != N || acc->type.ptr) {
			error(g, a->at[2], "the accumulator must be a (%d, %d) block, found %s", M, N, tstr(g, acc->type));
			return VOID;
		}
	} else {
		acc = ig_emit_const(g, weak_int(0), type_block(type_scalar(acc_k), 2, shape), a->call);
	}
	if (!acc)
		return VOID;
	/* an f16, bf16 or fp8 accumulator: the products are summed in f32 from
	 * acc's value and the result is rounded once to acc's type (on the GPU,
	 * f16 and bf16 inputs then run on tensor cores with f32 accumulators) */
	ScalarKind kc = (ScalarKind)acc->type.scalar;
	if (scalar_is_int(kc) != (kx == SK_I8) || kc == SK_I1) {
		error(g, a->given[2] && a->v[2].kind != S_NONE ? a->at[2] : a->call,
		      "dot of %s inputs needs %s accumulator, found %s", tstr(g, type_elem(x->type)),
		      kx == SK_I8 ? "an integer (i32)" : "a float", tstr(g, acc->type));
		return VOID;
	}
	bool narrow = kc == SK_F16 || kc == SK_BF16 || kc == SK_F8E4M3 || kc == SK_F8E5M2;
	if (narrow && !(acc = ig_cast_value(g, acc, SK_F32, a->call)))
		return VOID;
	Value *r = ig_emit(g, OP_DOT, a->call, acc->type, x, y, acc);
	if (r)
		r->def->attr[0] = kx == SK_F32 ? prec : DOT_IEEE;
	if (r && narrow)
		r = ig_cast_value(g, r, kc, a->call);
	return ig_value_sym(r);
}
