/* ir.c: building and editing tile IR. */
#include "ir/ir.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* gpu/'s table (ir.h, IrGpuHooks): one constant, stored atomically so that
 * threads compiling at once may each install it */
static _Atomic(const IrGpuHooks *) gpu_hooks;

void ir_set_gpu_hooks(const IrGpuHooks *hooks) { atomic_store_explicit(&gpu_hooks, hooks, memory_order_release); }

const IrGpuHooks *ir_gpu_hooks(void) { return atomic_load_explicit(&gpu_hooks, memory_order_acquire); }

static const char *const op_names[OP_COUNT] = {
#define OP_NAME(name, spelling, regions, flags) [OP_##name] = spelling,
	BLK_OPS(OP_NAME)
#undef OP_NAME
};

static const int op_region_counts[OP_COUNT] = {
#define OP_REGIONS(name, spelling, regions, flags) [OP_##name] = regions,
	BLK_OPS(OP_REGIONS)
#undef OP_REGIONS
};

static const int op_flag_bits[OP_COUNT] = {
#define OP_FLAGS(name, spelling, regions, flags) [OP_##name] = flags,
	BLK_OPS(OP_FLAGS)
#undef OP_FLAGS
};

const char *op_name(OpCode code) { return code < OP_COUNT ? op_names[code] : "?"; }
int op_flags(OpCode code) { return code < OP_COUNT ? op_flag_bits[code] : 0; }
int op_regions(OpCode code) { return code < OP_COUNT ? op_region_counts[code] : 0; }

void ir_set_target(IrFunc *f, const char *arch)
{
	if (!arch || strncmp(arch, "sm_", 3) != 0 || arch[3] < '0' || arch[3] > '9')
		return;
	f->sm = atoi(arch + 3);
	f->sm_a = arch[strlen(arch) - 1] == 'a';
}

IrFunc *ir_func_new(Arena *a, const char *name, Span loc)
{
	IrFunc *f = arena_alloc(a, sizeof *f);
	if (!f)
		return NULL;
	f->name = name;
	f->arena = a;
	f->loc = loc;
#define OPTION_DEFAULT(name, kind, dflt, ...) f->name = dflt;
	BLK_OPTIONS(OPTION_DEFAULT)
#undef OPTION_DEFAULT
	return f;
}

static Value *new_value(IrFunc *f, Type t)
{
	Value *v = arena_alloc(f->arena, sizeof *v);
	if (!v)
		return NULL;
	v->type = t;
	v->id = f->n_values++;
	return v;
}

Value *ir_region_arg(IrFunc *f, Region *r, Type t)
{
	Value *v = new_value(f, t);
	if (!v)
		return NULL;
	Value **args = arena_alloc(f->arena, (size_t)(r->n_args + 1) * sizeof *args);
	if (!args)
		return NULL;
	if (r->n_args)
		memcpy(args, r->args, (size_t)r->n_args * sizeof *args);
	args[r->n_args] = v;
	v->owner = r;
	v->index = r->n_args;
	r->args = args;
	r->n_args++;
	return v;
}

Op *ir_append(IrFunc *f, Region *r, OpCode code, Span loc, Value **operands, int n_operands,
              const Type *result_types, int n_results)
{
	Op *op = arena_alloc(f->arena, sizeof *op);
	if (!op)
		return NULL;
	op->code = code;
	op->loc = loc;
	if (n_operands) {
		op->operands = arena_alloc(f->arena, (size_t)n_operands * sizeof *op->operands);
		if (!op->operands)
			return NULL;
		for (int i = 0; i < n_operands; i++) {
			op->operands[i] = operands[i];
			operands[i]->uses++;
		}
	}
	op->n_operands = n_operands;
	if (n_results) {
		op->results = arena_alloc(f->arena, (size_t)n_results * sizeof *op->results);
		if (!op->results)
			return NULL;
		for (int i = 0; i < n_results; i++) {
			Value *v = new_value(f, result_types[i]);
			if (!v)
				return NULL;
			v->def = op;
			v->index = i;
			op->results[i] = v;
		}
	}
	op->n_results = n_results;
	op->n_regions = op_regions(code);
	if (op->n_regions) {
		op->regions = arena_alloc(f->arena, (size_t)op->n_regions * sizeof *op->regions);
		if (!op->regions)
			return NULL;
		for (int i = 0; i < op->n_regions; i++)
			op->regions[i].parent = op;
	}
	op->parent = r;
	op->prev = r->last;
	if (r->last)
		r->last->next = op;
	else
		r->first = op;
	r->last = op;
	return op;
}

static void drop_uses(Op *op)
{
	for (int i = 0; i < op->n_operands; i++)
		op->operands[i]->uses--;
	for (int i = 0; i < op->n_regions; i++)
		for (Op *o = op->regions[i].first; o; o = o->next)
			drop_uses(o);
}

void ir_unlink(Op *op)
{
	Region *r = op->parent;
	if (op->prev)
		op->prev->next = op->next;
	else
		r->first = op->next;
	if (op->next)
		op->next->prev = op->prev;
	else
		r->last = op->prev;
	op->prev = op->next = NULL;
	op->parent = NULL;
}

void ir_remove(Op *op)
{
	ir_unlink(op);
	drop_uses(op);
}

static void replace_in_region(Region *r, Value *from, Value *to)
{
	for (Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_operands; i++)
			if (op->operands[i] == from) {
				op->operands[i] = to;
				from->uses--;
				to->uses++;
			}
		for (int i = 0; i < op->n_regions; i++)
			replace_in_region(&op->regions[i], from, to);
	}
}

void ir_replace_uses(IrFunc *f, Value *from, Value *to)
{
	if (from != to)
		replace_in_region(&f->body, from, to);
}

static void renumber_region(IrFunc *f, Region *r)
{
	for (int i = 0; i < r->n_args; i++)
		r->args[i]->id = f->n_values++;
	for (Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_results; i++)
			op->results[i]->id = f->n_values++;
		for (int i = 0; i < op->n_regions; i++)
			renumber_region(f, &op->regions[i]);
	}
}

void ir_renumber(IrFunc *f)
{
	f->n_values = 0;
	renumber_region(f, &f->body);
}

void ir_move_region(Region *dst, Region *src)
{
	dst->args = src->args;
	dst->n_args = src->n_args;
	dst->first = src->first;
	dst->last = src->last;
	for (int i = 0; i < dst->n_args; i++)
		dst->args[i]->owner = dst;
	for (Op *op = dst->first; op; op = op->next)
		op->parent = dst;
	*src = (Region){0};
}

void ir_append_region(Region *dst, Region *src)
{
	for (Op *op = src->first; op; op = op->next)
		op->parent = dst;
	if (src->first) {
		src->first->prev = dst->last;
		if (dst->last)
			dst->last->next = src->first;
		else
			dst->first = src->first;
		dst->last = src->last;
	}
	*src = (Region){0};
}

void ir_clear_region(Region *r)
{
	while (r->last)
		ir_remove(r->last);
}

static void collect_asserts(const Region *r, const Op **out, int cap, int *n)
{
	for (const Op *op = r->first; op; op = op->next) {
		if (op->code == OP_ASSERT) {
			if (*n < cap)
				out[*n] = op;
			(*n)++;
		}
		for (int i = 0; i < op->n_regions; i++)
			collect_asserts(&op->regions[i], out, cap, n);
	}
}

int ir_assert_ops(const IrFunc *f, const Op **out, int cap)
{
	int n = 0;
	collect_asserts(&f->body, out, cap, &n);
	return n;
}
