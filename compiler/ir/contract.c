/* contract.c: a float product and the sum or difference it feeds become one
 * fma, under the option fp_fusion (on by default; docs/language.md,
 * "Precision of float math"). The rule is decided here, in the tile IR,
 * so that the interpreter and the GPU compute the same fma and agree bit
 * for bit; the GPU back end leaves LLVM no freedom to contract on its own.
 *
 * The rule: for an f32 or f64 `x + y` or `x - y` (blocks or scalars) one of
 * whose operands is a product `a * b` of the same type used there and
 * nowhere else, the left operand taken first when both are:
 *
 *   a * b + y  ->  fma(a, b, y)        x + a * b  ->  fma(a, b, x)
 *   a * b - y  ->  fma(a, b, -y)       x - a * b  ->  fma(-a, b, x)
 *
 * (negation is exact, so each is the exact a * b +- y rounded once). f16
 * and bf16 arithmetic is left as written. */
#include "ir/ir.h"

static bool is_wide_float(Type t)
{
	return !t.ptr && (t.scalar == SK_F32 || t.scalar == SK_F64);
}

/* The product v is, if it can fold into its one use of type t. */
static const Op *product(const Value *v, Type t)
{
	const Op *d = v->def;
	if (!d || d->code != OP_MUL || v->uses != 1 || !type_eq(v->type, t))
		return NULL;
	if (!type_eq(d->operands[0]->type, t) || !type_eq(d->operands[1]->type, t))
		return NULL;
	return d;
}

static Value *insert(IrFunc *f, Op *before, OpCode code, Value **operands, int n, Type t)
{
	Op *op = ir_insert_before(f, before, code, operands, n, &t, 1);
	return op ? op->results[0] : NULL;
}

/* Contracts op (an add or sub) where the rule allows; false when out of
 * memory. Its result's uses get the fma as the walk reaches them (fw): one
 * ir_replace_uses a contraction walked the whole function, quadratic in a
 * long chain (a fn unrolled 65,536 times took minutes). */
static bool contract_op(IrFunc *f, Op *op, IrForward *fw)
{
	Type t = op->results[0]->type;
	Value *x = op->operands[0], *y = op->operands[1];
	if (!is_wide_float(t) || !type_eq(x->type, t) || !type_eq(y->type, t))
		return true;
	const Op *px = product(x, t), *py = px ? NULL : product(y, t);
	if (!px && !py)
		return true;
	Value *a, *b, *c;
	if (px) {
		a = px->operands[0];
		b = px->operands[1];
		c = y;
		if (op->code == OP_SUB && !(c = insert(f, op, OP_NEG, &y, 1, t)))
			return false;
	} else {
		a = py->operands[0];
		b = py->operands[1];
		c = x;
		if (op->code == OP_SUB && !(a = insert(f, op, OP_NEG, &a, 1, t)))
			return false;
	}
	Value *abc[3] = {a, b, c};
	Value *r = insert(f, op, OP_FMA, abc, 3, t);
	if (!r)
		return false;
	ir_forward_set(fw, op->results[0], r);
	ir_remove(op);
	return !fw->oom;
}

static bool contract_region(IrFunc *f, Region *r, IrForward *fw)
{
	for (Op *op = r->first, *next; op; op = next) {
		next = op->next;
		ir_forward_operands(fw, op);
		for (int i = 0; i < op->n_regions; i++)
			if (!contract_region(f, &op->regions[i], fw))
				return false;
		if ((op->code == OP_ADD || op->code == OP_SUB) && !contract_op(f, op, fw))
			return false;
	}
	return true;
}

bool ir_contract(IrFunc *f, Diag *diag)
{
	if (!f->fp_fusion)
		return true;
	IrForward fw = {0};
	bool ok = contract_region(f, &f->body, &fw);
	if (ok)
		ir_forward_region(&fw, &f->body); /* (every use follows its definition: nothing is left) */
	ok = ok && !fw.oom;
	ir_forward_free(&fw);
	if (!ok) {
		diag_plain(diag, DIAG_ERROR, "out of memory contracting products in '%s'", f->name);
		return false;
	}
	return true;
}
