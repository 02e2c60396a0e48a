/* kb.h: tile IR built by hand, for the interpreter's tests (the front end's
 * tests go from .tile source instead). Ops get a place in a fake source,
 * "kernel.tile", whose line L holds "stmt_L(x);": set b->line before making
 * the op a test wants to see in a message; its column is 5. */
#ifndef BLK_TEST_KB_H
#define BLK_TEST_KB_H

#include "ref.h"

enum { KB_LINES = 400, KB_WIDTH = 17 }; /* "    stmt_001(x);\n" */

typedef struct KB {
	Arena arena;
	IrFunc *f;
	Region *r; /* where ops go */
	Source src;
	char text[KB_LINES * KB_WIDTH + 1];
	int line;
} KB;

static __attribute__((unused)) Type tS(ScalarKind k) { return type_scalar(k); }
static __attribute__((unused)) Type tP(ScalarKind k, int depth)
{
	Type t = type_scalar(k);
	t.ptr = (uint8_t)depth;
	return t;
}
static __attribute__((unused)) Type tB(Type e, int d0)
{
	int32_t s[1] = {d0};
	return type_block(e, 1, s);
}
static __attribute__((unused)) Type tB2(Type e, int d0, int d1)
{
	int32_t s[2] = {d0, d1};
	return type_block(e, 2, s);
}
static __attribute__((unused)) Type tB3(Type e, int d0, int d1, int d2)
{
	int32_t s[3] = {d0, d1, d2};
	return type_block(e, 3, s);
}

static __attribute__((unused)) Span kb_span(KB *b, int line)
{
	uint32_t begin = (uint32_t)((line - 1) * KB_WIDTH + 4);
	return (Span){.src = &b->src, .begin = begin, .end = begin + 8, .line = (uint32_t)line, .col = 5};
}

static __attribute__((unused)) void kb_begin(KB *b, const char *name)
{
	memset(b, 0, sizeof *b);
	for (int l = 0; l < KB_LINES; l++) {
		char *t = b->text + l * KB_WIDTH;
		memcpy(t, "    stmt_000(x);\n", KB_WIDTH);
		t[9] = (char)('0' + (l + 1) / 100 % 10);
		t[10] = (char)('0' + (l + 1) / 10 % 10);
		t[11] = (char)('0' + (l + 1) % 10);
	}
	b->src = (Source){.name = "kernel.tile", .text = b->text, .len = KB_LINES * KB_WIDTH};
	b->line = 1;
	b->f = ir_func_new(&b->arena, name, kb_span(b, 1));
	b->f->params = arena_alloc(&b->arena, 16 * sizeof *b->f->params);
	b->r = &b->f->body;
}

static __attribute__((unused)) void kb_free(KB *b) { arena_free(&b->arena); }

/* A runtime parameter: an argument of the body. */
static __attribute__((unused)) Value *kb_param(KB *b, const char *name, Type t)
{
	Value *v = ir_region_arg(b->f, &b->f->body, t);
	b->f->params[b->f->n_params++] = (IrParam){.name = name, .value = v, .type = t};
	return v;
}

/* A const parameter: folded away, no value, no argument. */
static __attribute__((unused)) void kb_const_param(KB *b, const char *name, int64_t v)
{
	b->f->params[b->f->n_params++] = (IrParam){.name = name, .is_const = true, .const_ival = v,
	                                           .type = type_scalar(SK_I32)};
}

static __attribute__((unused)) Op *kb_opv(KB *b, OpCode c, Value **ops, int n, const Type *rts, int nr)
{
	return ir_append(b->f, b->r, c, kb_span(b, b->line), ops, n, rts, nr);
}

/* An op with up to three operands (the first NULL ends them) and one result. */
static __attribute__((unused)) Value *kb_op(KB *b, OpCode c, Type rt, Value *x, Value *y, Value *z)
{
	Value *ops[3] = {x, y, z};
	int n = !x ? 0 : !y ? 1 : !z ? 2 : 3;
	return kb_opv(b, c, ops, n, &rt, 1)->results[0];
}

static __attribute__((unused)) Value *kb_op_a(KB *b, OpCode c, Type rt, int64_t attr0, Value *x, Value *y, Value *z)
{
	Value *v = kb_op(b, c, rt, x, y, z);
	v->def->attr[0] = attr0;
	return v;
}

static __attribute__((unused)) Value *kb_ci(KB *b, Type t, int64_t v)
{
	Value *r = kb_op(b, OP_CONST, t, NULL, NULL, NULL);
	r->def->ival = v;
	return r;
}

static __attribute__((unused)) Value *kb_cf(KB *b, Type t, double v)
{
	Value *r = kb_op(b, OP_CONST, t, NULL, NULL, NULL);
	r->def->fval = v;
	return r;
}

static __attribute__((unused)) Value *kb_arange(KB *b, int start, int end)
{
	Value *r = kb_op(b, OP_ARANGE, tB(tS(SK_I32), end - start), NULL, NULL, NULL);
	r->def->attr[0] = start;
	r->def->attr[1] = end;
	return r;
}

static __attribute__((unused)) Value *kb_pid(KB *b, int axis)
{
	return kb_op_a(b, OP_PROGRAM_ID, tS(SK_I32), axis, NULL, NULL, NULL);
}

/* base + offs: a block of pointers of offs' shape. */
static __attribute__((unused)) Value *kb_ptrs(KB *b, Value *base, Value *offs)
{
	Type pt = type_block(base->type, offs->type.rank, offs->type.shape);
	Value *p = offs->type.rank ? kb_op(b, OP_SPLAT, pt, base, NULL, NULL) : base;
	return kb_op(b, OP_ADDPTR, pt, p, offs, NULL);
}

static __attribute__((unused)) Value *kb_load(KB *b, Value *ptr, Value *mask, Value *other)
{
	Type rt = type_pointee(ptr->type);
	Value *ops[3] = {ptr, mask, other};
	int n = 1;
	if (mask)
		ops[n++] = mask;
	if (other)
		ops[n++] = other;
	Op *op = kb_opv(b, OP_LOAD, ops, n, &rt, 1);
	op->attr[0] = (mask ? MEMF_MASK : 0) | (other ? MEMF_OTHER : 0);
	return op->results[0];
}

static __attribute__((unused)) void kb_store(KB *b, Value *ptr, Value *v, Value *mask)
{
	Value *ops[3] = {ptr, v, mask};
	Op *op = kb_opv(b, OP_STORE, ops, mask ? 3 : 2, NULL, 0);
	op->attr[0] = mask ? MEMF_MASK : 0;
}

static __attribute__((unused)) void kb_ret(KB *b) { kb_opv(b, OP_RETURN, NULL, 0, NULL, 0); }

static __attribute__((unused)) void kb_yield(KB *b, Value **vals, int n) { kb_opv(b, OP_YIELD, vals, n, NULL, 0); }

/* A reduce or scan over axis of the n blocks x, its region left for the
 * caller to fill (b->r points into it; the 2n arguments are made). */
static __attribute__((unused)) Op *kb_combine_op(KB *b, OpCode c, Value **x, int n, int axis, bool reverse)
{
	Type rts[8];
	for (int i = 0; i < n; i++) {
		Type t = x[i]->type;
		if (c == OP_REDUCE) {
			int32_t shape[BLK_MAX_RANK] = {0};
			int r = 0;
			for (int d = 0; d < t.rank; d++)
				if (d != axis)
					shape[r++] = t.shape[d];
			t = type_block(t, r, shape);
		}
		rts[i] = t;
	}
	Op *op = kb_opv(b, c, x, n, rts, n);
	op->attr[0] = axis;
	op->attr[1] = reverse;
	for (int i = 0; i < 2 * n; i++)
		ir_region_arg(b->f, &op->regions[0], type_elem(x[i % n]->type));
	return op;
}

static __attribute__((unused)) bool kb_run(KB *b, const InterpArg *args, int n_args, const InterpBuffer *bufs,
                                           int n_bufs, const InterpOptions *opt, Diag *d)
{
	return interp_run(b->f, args, n_args, bufs, n_bufs, opt, d);
}

#endif
