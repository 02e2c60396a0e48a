/* irgen/builtins_memory.c: the builtins that reach memory: load, store and the
 * atomics (read-modify-write and compare-and-swap). */
#include "irgen/irgen_int.h"

#include <string.h>

/* A mask argument as an i1 value, or NULL when absent or constant true. */
static bool mask_arg(Gen *g, Args *a, int i, Value **out)
{
	*out = NULL;
	if (!a->given[i] || a->v[i].kind == S_NONE)
		return true;
	Sym m = ig_truth(g, a->v[i], a->at[i]);
	if (m.kind == S_VOID)
		return false;
	if (m.kind == S_CONST && m.i)
		return true;
	*out = ig_materialize(g, m, a->at[i]);
	return *out != NULL;
}

static bool pointer_arg(Gen *g, Args *a, int i, Value **out)
{
	Sym p = a->v[i];
	if (p.kind != S_VALUE || !p.type.ptr) {
		error(g, a->at[i], "'%s' needs a pointer or block of pointers, found %s", a->fname, ig_sym_desc(g, p));
		return false;
	}
	*out = p.v;
	return true;
}

static const char *const cache_names = "|ca|cg|cs|cv|wb|wt";
static const char *const eviction_names = "evict_normal|evict_first|evict_last";

Sym ig_bi_load(Gen *g, Args *a, int which)
{
	(void)which;
	Value *ptr, *mask;
	if (!pointer_arg(g, a, 0, &ptr) || !mask_arg(g, a, 1, &mask))
		return VOID;
	int cache = ig_arg_choice(g, a, 3, cache_names, 0), evict = ig_arg_choice(g, a, 4, eviction_names, 0);
	bool vol;
	if (cache < 0 || evict < 0 || !ig_arg_bool(g, a, 5, false, &vol))
		return VOID;
	Sym other = a->given[2] ? a->v[2] : (Sym){.kind = S_NONE};
	if (other.kind != S_NONE && !is_valueish(other)) {
		error(g, a->at[2], "'other' must be a scalar or block, found %s", ig_sym_desc(g, other));
		return VOID;
	}
	int rank = ptr->type.rank;
	int32_t shape[BLK_MAX_RANK];
	memcpy(shape, ptr->type.shape, sizeof shape);
	Type shape_t = ptr->type;
	if (mask && !ig_common_shape(g, shape_t, mask->type, &rank, shape, a->at[1], "the pointer and the mask"))
		return VOID;
	shape_t = type_block(shape_t, rank, shape);
	if (other.kind != S_NONE && !ig_common_shape(g, shape_t, other.type, &rank, shape, a->at[2], "the pointer and 'other'"))
		return VOID;
	Type rt = type_block(type_pointee(type_elem(ptr->type)), rank, shape);
	Value *ops[3];
	int n = 0;
	ops[n++] = ig_broadcast_to(g, ptr, rank, shape, a->at[0]);
	int flags = 0;
	if (mask) {
		ops[n++] = ig_broadcast_to(g, mask, rank, shape, a->at[1]);
		flags |= MEMF_MASK;
		if (other.kind != S_NONE) {
			Value *o = rt.ptr ? ig_materialize(g, other, a->at[2]) : ig_to_elem(g, other, (ScalarKind)rt.scalar, a->at[2]);
			if (o && rt.ptr && !(o->type.ptr == rt.ptr && o->type.scalar == rt.scalar)) {
				error(g, a->at[2], "'other' must be a %s, found %s", tstr(g, type_elem(rt)), tstr(g, o->type));
				return VOID;
			}
			ops[n++] = ig_broadcast_to(g, o, rank, shape, a->at[2]);
			flags |= MEMF_OTHER;
		}
	}
	for (int i = 0; i < n; i++)
		if (!ops[i])
			return VOID;
	Op *op = ig_emit_op(g, OP_LOAD, a->call, ops, n, &rt, 1);
	if (!op)
		return VOID;
	op->attr[0] = flags;
	op->attr[1] = cache;
	op->attr[2] = evict;
	op->attr[3] = vol;
	return ig_value_sym(op->results[0]);
}

/* Whether a value of type from stores through a pointer to `to` without
 * losing anything: the same type, or a wider type of the same kind (i1 and
 * unsigned integers also to wider signed ones, narrow floats to wider floats
 * but not f16 and bf16 to each other). */
static bool exact_store(ScalarKind from, ScalarKind to)
{
	if (from == to)
		return true;
	int fb = scalar_bits(from), tb = scalar_bits(to);
	if (scalar_is_float(from) || scalar_is_float(to))
		return scalar_is_float(from) && scalar_is_float(to) && tb > fb;
	if (from == SK_I1)
		return true;
	if (scalar_is_signed(from) && !scalar_is_signed(to))
		return false;
	return tb > fb;
}

/* value converted to the pointee type of ptr and broadcast with it. A store
 * (strict) also takes the pointer's shape as it is and only exact conversions
 * of a value that is not a constant. */
static bool store_operands(Gen *g, Args *a, Value **ptr, int vi, Value **val, Value **mask, int mi, bool strict)
{
	Sym v = a->v[vi];
	if (!is_valueish(v)) {
		error(g, a->at[vi], "the value to store must be a scalar or block, found %s", ig_sym_desc(g, v));
		return false;
	}
	Type elem = type_pointee(type_elem((*ptr)->type));
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!ig_common_shape(g, (*ptr)->type, v.type, &rank, shape, a->at[vi], "the pointer and the value"))
		return false;
	if (*mask) {
		Type t = type_block((*ptr)->type, rank, shape);
		if (!ig_common_shape(g, t, (*mask)->type, &rank, shape, a->at[mi], "the pointer and the mask"))
			return false;
	}
	if (strict && !type_eq(type_block((*ptr)->type, rank, shape), (*ptr)->type)) {
		/* the value or the mask would widen the pointer: racing writes */
		bool by_value = v.type.rank > 0 && !type_eq(type_block((*ptr)->type, v.type.rank, v.type.shape), (*ptr)->type);
		Span at = by_value || !*mask ? a->at[vi] : a->at[mi];
		Type wide = by_value || !*mask ? v.type : (*mask)->type;
		if ((*ptr)->type.rank == 0)
			error(g, at, "cannot store through the single pointer %s with a %s %s: every element would write the "
			             "same address; store through a block of pointers, such as p + arange(0, N)",
			      tstr(g, (*ptr)->type), by_value || !*mask ? "value" : "mask", tstr(g, wide));
		else
			error(g, at, "cannot store through the pointer block %s with a %s %s: the value and the mask must "
			             "broadcast to the pointer's shape",
			      tstr(g, (*ptr)->type), by_value || !*mask ? "value" : "mask", tstr(g, wide));
		return false;
	}
	Value *x;
	if (elem.ptr) {
		x = ig_materialize(g, v, a->at[vi]);
		if (x && (x->type.ptr != elem.ptr || x->type.scalar != elem.scalar)) {
			error(g, a->at[vi], "cannot store %s through %s", tstr(g, x->type), tstr(g, (*ptr)->type));
			return false;
		}
	} else {
		if (v.type.ptr) {
			error(g, a->at[vi], "cannot store %s through %s", ig_sym_desc(g, v), tstr(g, (*ptr)->type));
			return false;
		}
		ScalarKind from = (ScalarKind)v.type.scalar, to = (ScalarKind)elem.scalar;
		if (strict && v.kind != S_CONST && !exact_store(from, to)) {
			error(g, a->at[vi], "cannot store %s through %s: the value must have the pointee type %s (or one that "
			                    "converts exactly); convert it first: .to(%s)",
			      ig_sym_desc(g, v), tstr(g, (*ptr)->type), scalar_name(to), scalar_name(to));
			return false;
		}
		x = ig_to_elem(g, v, to, a->at[vi]);
	}
	*val = ig_broadcast_to(g, x, rank, shape, a->at[vi]);
	*ptr = ig_broadcast_to(g, *ptr, rank, shape, a->at[0]);
	if (*mask)
		*mask = ig_broadcast_to(g, *mask, rank, shape, a->at[mi]);
	return *val && *ptr && (!*mask || *mask);
}

Sym ig_bi_store(Gen *g, Args *a, int which)
{
	(void)which;
	Value *ptr, *mask, *val;
	if (!pointer_arg(g, a, 0, &ptr) || !mask_arg(g, a, 2, &mask))
		return VOID;
	int cache = ig_arg_choice(g, a, 3, cache_names, 0), evict = ig_arg_choice(g, a, 4, eviction_names, 0);
	if (cache < 0 || evict < 0 || !store_operands(g, a, &ptr, 1, &val, &mask, 2, true))
		return VOID;
	Value *ops[3] = {ptr, val, mask};
	Op *op = ig_emit_op(g, OP_STORE, a->call, ops, mask ? 3 : 2, NULL, 0);
	if (!op)
		return VOID;
	op->attr[0] = mask ? MEMF_MASK : 0;
	op->attr[1] = cache;
	op->attr[2] = evict;
	return (Sym){.kind = S_NONE};
}

static const char *const sem_names = "acq_rel|acquire|release|relaxed";
static const char *const scope_names = "gpu|cta|sys";

Sym ig_bi_atomic(Gen *g, Args *a, int which)
{
	Value *ptr, *mask, *val;
	if (!pointer_arg(g, a, 0, &ptr) || !mask_arg(g, a, 2, &mask))
		return VOID;
	int sem = ig_arg_choice(g, a, 3, sem_names, 0), scope = ig_arg_choice(g, a, 4, scope_names, 0);
	if (sem < 0 || scope < 0)
		return VOID;
	Type elem = type_pointee(type_elem(ptr->type));
	ScalarKind k = (ScalarKind)elem.scalar;
	bool is_float = scalar_is_float(k);
	if (elem.ptr || k == SK_I1 || (is_float && which != ATOM_ADD && which != ATOM_MAX && which != ATOM_MIN &&
	                               which != ATOM_XCHG) || (is_float && scalar_bits(k) < 16)) {
		error(g, a->at[0], "'%s' does not apply to %s", a->fname, tstr(g, ptr->type));
		return VOID;
	}
	if (!store_operands(g, a, &ptr, 1, &val, &mask, 2, false))
		return VOID;
	Type rt = type_block(elem, ptr->type.rank, ptr->type.shape);
	Value *ops[3] = {ptr, val, mask};
	Op *op = ig_emit_op(g, OP_ATOMIC_RMW, a->call, ops, mask ? 3 : 2, &rt, 1);
	if (!op)
		return VOID;
	op->attr[0] = which;
	op->attr[1] = sem;
	op->attr[2] = scope;
	op->attr[3] = mask ? MEMF_MASK : 0;
	return ig_value_sym(op->results[0]);
}

Sym ig_bi_atomic_cas(Gen *g, Args *a, int which)
{
	(void)which;
	Value *ptr, *no_mask = NULL, *cmp, *val;
	if (!pointer_arg(g, a, 0, &ptr))
		return VOID;
	int sem = ig_arg_choice(g, a, 3, sem_names, 0), scope = ig_arg_choice(g, a, 4, scope_names, 0);
	if (sem < 0 || scope < 0)
		return VOID;
	Type elem = type_pointee(type_elem(ptr->type));
	if (elem.ptr || !scalar_is_int((ScalarKind)elem.scalar) || scalar_bits((ScalarKind)elem.scalar) < 16) {
		error(g, a->at[0], "atomic_cas needs pointers to 16-, 32- or 64-bit integers, found %s", tstr(g, ptr->type));
		return VOID;
	}
	Value *p2 = ptr;
	if (!store_operands(g, a, &ptr, 1, &cmp, &no_mask, 0, false) || !store_operands(g, a, &p2, 2, &val, &no_mask, 0, false))
		return VOID;
	if (!type_eq(cmp->type, val->type) || !type_eq(ptr->type, p2->type)) {
		error(g, a->call, "atomic_cas: the pointer, 'cmp' and 'val' must have one shape");
		return VOID;
	}
	Type rt = type_block(elem, ptr->type.rank, ptr->type.shape);
	Value *ops[3] = {ptr, cmp, val};
	Op *op = ig_emit_op(g, OP_ATOMIC_CAS, a->call, ops, 3, &rt, 1);
	if (!op)
		return VOID;
	op->attr[1] = sem;
	op->attr[2] = scope;
	return ig_value_sym(op->results[0]);
}
