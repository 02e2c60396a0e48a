/* edit.c: the editing helpers the passes share: inserting, moving and
 * cloning ops, forwarding replaced values in one walk, specialization. */
#include "ir/ir.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void ir_link_before(Op *op, Op *before)
{
	Region *r = before->parent;
	op->parent = r;
	op->next = before;
	op->prev = before->prev;
	if (before->prev)
		before->prev->next = op;
	else
		r->first = op;
	before->prev = op;
}

Op *ir_insert_before(IrFunc *f, Op *before, OpCode code, Value **operands, int n_operands,
                     const Type *result_types, int n_results)
{
	Op *op = ir_append(f, before->parent, code, before->loc, operands, n_operands, result_types, n_results);
	if (!op)
		return NULL;
	ir_unlink(op);
	ir_link_before(op, before);
	return op;
}

void ir_forward_set(IrForward *m, Value *from, Value *to)
{
	if (from->id >= m->cap) {
		int cap = m->cap ? m->cap : 256;
		while (cap <= from->id)
			cap *= 2;
		Value **t = realloc(m->to, (size_t)cap * sizeof *t);
		if (!t) {
			m->oom = true;
			return;
		}
		memset(t + m->cap, 0, (size_t)(cap - m->cap) * sizeof *t);
		m->to = t;
		m->cap = cap;
	}
	m->to[from->id] = to;
}

Value *ir_forward_get(const IrForward *m, Value *v)
{
	while (v && v->id < m->cap && m->to[v->id])
		v = m->to[v->id];
	return v;
}

void ir_forward_operands(IrForward *m, Op *op)
{
	if (!m->cap)
		return;
	for (int i = 0; i < op->n_operands; i++) {
		Value *v = op->operands[i], *w = ir_forward_get(m, v);
		if (w != v) {
			v->uses--;
			w->uses++;
			op->operands[i] = w;
		}
	}
}

void ir_forward_region(IrForward *m, Region *r)
{
	for (Op *op = r->first; op; op = op->next) {
		ir_forward_operands(m, op);
		for (int i = 0; i < op->n_regions; i++)
			ir_forward_region(m, &op->regions[i]);
	}
}

void ir_forward_clear(IrForward *m)
{
	if (m->cap)
		memset(m->to, 0, (size_t)m->cap * sizeof *m->to);
}

void ir_forward_free(IrForward *m)
{
	free(m->to);
	*m = (IrForward){0};
}

Op *ir_clone_before(IrFunc *f, const Op *op, Op *before, Value **operands)
{
	Type rt[8];
	if (op->n_results > 8 || op->n_regions)
		return NULL;
	for (int i = 0; i < op->n_results; i++)
		rt[i] = op->results[i]->type;
	Op *c = ir_insert_before(f, before, op->code, operands, op->n_operands, rt, op->n_results);
	if (!c)
		return NULL;
	memcpy(c->attr, op->attr, sizeof c->attr);
	c->ival = op->ival;
	c->fval = op->fval;
	c->str = op->str;
	c->str2 = op->str2;
	c->loc = op->loc;
	return c;
}

bool ir_param_is_one(IrFunc *f, IrParam *p)
{
	p->equals_one = true;
	if (!p->value || !p->value->uses || !f->body.first)
		return true;
	Type t = p->value->type;
	Op *c = ir_insert_before(f, f->body.first, OP_CONST, NULL, 0, &t, 1);
	if (!c)
		return false;
	c->ival = 1;
	ir_replace_uses(f, p->value, c->results[0]);
	return true;
}

bool ir_writes_memory(const Op *op)
{
	if (op->code == OP_STORE || op->code == OP_ATOMIC_RMW || op->code == OP_ATOMIC_CAS || op->code == OP_DESC_STORE ||
	    op->code == OP_DESC_ATOMIC || op->code == OP_DESC_SCATTER)
		return true;
	for (int i = 0; i < op->n_regions; i++)
		for (const Op *o = op->regions[i].first; o; o = o->next)
			if (ir_writes_memory(o))
				return true;
	return false;
}
