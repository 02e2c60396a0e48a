/* irgen/emit.c: making IR: ops appended to the current region (an error in a
 * constant context), constants, element-type casts and broadcasting. */
#include "irgen/irgen_int.h"

/* In a constant context (global const, grid clause, default of a const
 * parameter) anything that would make IR is an error instead. */
static bool ir_allowed(Gen *g, Span at)
{
	if (!g->no_ir)
		return true;
	error(g, at, "%s", g->no_ir);
	return false;
}

bool ig_shape_fits(Gen *g, int rank, const int32_t *shape, Span at)
{
	int64_t n;
	if (shape_numel(rank, shape, &n) && n <= BLK_MAX_NUMEL)
		return true;
	StrBuf sb = {0};
	sb_putc(&sb, '(');
	for (int i = 0; i < rank; i++)
		sb_printf(&sb, "%s%d", i ? ", " : "", (int)shape[i]);
	sb_puts(&sb, rank == 1 ? ",) has " : ") has ");
	shape_count_print(rank, shape, &sb);
	error(g, at, "block of shape %s elements; the limit is %d", sb.data ? sb.data : "?", BLK_MAX_NUMEL);
	sb_free(&sb);
	return false;
}

/* A result over BLK_MAX_NUMEL elements is an error at the expression that
 * makes it (a broadcast, a dot, a reshape ...), not a verifier failure. */
static bool fits_limit(Gen *g, const Type *rt, int n, Span at)
{
	for (int i = 0; i < n; i++)
		if (!ig_shape_fits(g, rt[i].rank, rt[i].shape, at))
			return false;
	return true;
}

/* "inlining 'f' (...)" or "the kernel 'k'": what went over a limit. */
static const char *what_grew(Gen *g)
{
	const char *s = NULL;
	if (g->outer_fn)
		s = arena_printf(g->arena, "inlining '%s' (with the fns it calls and the static_range loops it unrolls)",
		                 g->outer_fn->name);
	else if (g->f)
		s = arena_printf(g->arena, "the kernel '%s'", g->f->name);
	return s ? s : "evaluating this grid or attribute"; /* no g->f: a grid clause or @autotune */
}

static bool over_limit(Gen *g)
{
	g->too_big = true;
	g->inline_limit = true; /* no more inlining, the call's note only at the outermost */
	return false;
}

bool ig_count_node(Gen *g, Span at)
{
	if (g->too_big)
		return false;
	if (++g->nodes > MAX_KERNEL_NODES) {
		error(g, at, "%s goes over the limit of %d source nodes generated into one kernel (fns count at each call, "
		             "static_range bodies at each iteration)",
		      what_grew(g), MAX_KERNEL_NODES);
		return over_limit(g);
	}
	size_t used = g->arena->used_total - g->arena_base;
	if ((g->nodes & 1023) == 0 && used > MAX_KERNEL_BYTES) {
		error(g, at, "%s goes over the limit of %d MiB of compiler memory for one kernel (%zu MiB used)",
		      what_grew(g), MAX_KERNEL_BYTES >> 20, used >> 20);
		return over_limit(g);
	}
	return true;
}

/* ir_append, reporting its failure (out of memory) once. */
static Op *append(Gen *g, OpCode code, Span at, Value **operands, int n, const Type *rt, int n_results)
{
	if (g->too_big)
		return NULL;
	if (++g->n_ops > MAX_KERNEL_OPS) {
		error(g, at, "%s goes over the limit of %d IR ops in one kernel", what_grew(g), MAX_KERNEL_OPS);
		over_limit(g);
		return NULL;
	}
	Op *op = ir_append(g->f, g->region, code, at, operands, n, rt, n_results);
	if (!op && !g->oom) {
		error(g, at, "out of memory while generating the kernel's code");
		g->oom = true;
	}
	return op;
}

Value *ig_emit(Gen *g, OpCode code, Span at, Type rt, Value *a, Value *b, Value *c)
{
	if (!ir_allowed(g, at) || !fits_limit(g, &rt, 1, at))
		return NULL;
	Value *ops[3] = {a, b, c};
	int n = c ? 3 : b ? 2 : a ? 1 : 0;
	Op *op = append(g, code, at, ops, n, &rt, 1);
	return op ? op->results[0] : NULL;
}

Op *ig_emit_op(Gen *g, OpCode code, Span at, Value **operands, int n, const Type *rt, int n_results)
{
	if (!ir_allowed(g, at) || !fits_limit(g, rt, n_results, at))
		return NULL;
	return append(g, code, at, operands, n, rt, n_results);
}

Sym ig_value_sym(Value *v)
{
	if (!v)
		return VOID;
	return (Sym){.kind = S_VALUE, .v = v, .type = v->type};
}

/* An IR constant of type t (scalar or splatted block) with s's value. */
Value *ig_emit_const(Gen *g, Sym s, Type t, Span at)
{
	if (!ir_allowed(g, at) || !fits_limit(g, &t, 1, at))
		return NULL;
	Op *op = append(g, OP_CONST, at, NULL, 0, &t, 1);
	if (!op)
		return NULL;
	ScalarKind k = (ScalarKind)t.scalar;
	if (scalar_is_float(k))
		op->fval = ig_const_in_kind(s, k);
	else
		op->ival = scalar_is_float((ScalarKind)s.type.scalar) ? ig_wrap(k, (__int128)s.f) : ig_wrap(k, ig_int_value(s));
	return op->results[0];
}

/* A constant converted to element type k, checking that it fits. */
bool ig_const_fits(Gen *g, Sym s, ScalarKind k, Span at)
{
	ScalarKind from = (ScalarKind)s.type.scalar;
	if (scalar_is_float(from) && !scalar_is_float(k) && k != SK_I1) {
		/* (NaN fails both comparisons; the range test keeps the cast to __int128 defined) */
		if (!(s.f > -0x1p127 && s.f < 0x1p127) || !ig_fits(k, (__int128)s.f)) {
			error(g, at, "constant %g does not fit in %s", s.f, scalar_name(k));
			return false;
		}
		return true;
	}
	if (scalar_is_float(k) || scalar_is_float(from))
		return true;
	if (k == SK_I1)
		return true;
	if (!ig_fits(k, ig_int_value(s))) {
		error(g, at, "constant %lld does not fit in %s", (long long)ig_int_value(s), scalar_name(k));
		return false;
	}
	return true;
}

Value *ig_cast_value(Gen *g, Value *v, ScalarKind k, Span at)
{
	if (v->type.scalar == k && v->type.ptr == 0)
		return v;
	Type t = v->type;
	t.scalar = (uint8_t)k;
	t.ptr = 0;
	return ig_emit(g, OP_CAST, at, t, v, NULL, NULL);
}

/* s as an IR value of element type k (shape kept). */
Value *ig_to_elem(Gen *g, Sym s, ScalarKind k, Span at)
{
	if (s.kind == S_CONST) {
		if (!ig_const_fits(g, s, k, at))
			return NULL;
		return ig_emit_const(g, s, type_scalar(k), at);
	}
	if (s.kind != S_VALUE)
		return NULL;
	return ig_cast_value(g, s.v, k, at);
}

/* The IR value of s, materializing a constant in its own type. */
Value *ig_materialize(Gen *g, Sym s, Span at)
{
	if (s.kind == S_VALUE)
		return s.v;
	if (s.kind == S_CONST)
		return ig_emit_const(g, s, s.type, at);
	if (s.kind != S_VOID)
		error(g, at, "expected a scalar or block value, found %s", ig_sym_desc(g, s));
	return NULL;
}

/* v broadcast to shape (rank dims): scalars splat, missing leading dims are
 * added, size-1 dims repeat. */
Value *ig_broadcast_to(Gen *g, Value *v, int rank, const int32_t *shape, Span at)
{
	if (!v)
		return NULL;
	Type want = type_block(v->type, rank, shape);
	if (rank == 0)
		return v;
	if (v->type.rank == 0)
		return ig_emit(g, OP_SPLAT, at, want, v, NULL, NULL);
	while (v && v->type.rank < rank) {
		int32_t sh[BLK_MAX_RANK] = {1};
		for (int i = 0; i < v->type.rank; i++)
			sh[i + 1] = v->type.shape[i];
		Value *e = ig_emit(g, OP_EXPAND_DIMS, at, type_block(v->type, v->type.rank + 1, sh), v, NULL, NULL);
		if (e)
			e->def->attr[0] = 0;
		v = e;
	}
	if (v && !type_eq(v->type, want))
		v = ig_emit(g, OP_BROADCAST, at, want, v, NULL, NULL);
	return v;
}

bool ig_common_shape(Gen *g, Type a, Type b, int *rank, int32_t *shape, Span at, const char *what)
{
	if (broadcast_shapes(a, b, rank, shape)) {
		Type t = type_block(a, *rank, shape);
		return fits_limit(g, &t, 1, at);
	}
	error(g, at, "cannot broadcast %s: shapes %s and %s", what, tstr(g, a), tstr(g, b));
	return false;
}
