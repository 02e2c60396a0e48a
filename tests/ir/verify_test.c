/* ir_verify: a valid function passes; each invariant, broken on purpose,
 * gives its own message naming the op. */
#include "irtest.h"

static Type f32, f16, i32, i64, u32, i1, i8;

static void expect(const char *what, const char *name)
{
	char want[512];
	snprintf(want, sizeof want, "error: internal error: IR invalid after test: %s\n", what);
	check_text(verify_msg(F, "test"), want, name);
}

/* A small valid kernel; returns the pointer parameter. */
static Value *start(void)
{
	begin("k");
	return param("p", P(B1(f32, 16)));
}

static void valid(void)
{
	Value *p = start();
	Value *x = emit(OP_LOAD, &p, 1, (Type[]){B1(f32, 16)}, 1)->results[0];
	store(p, op2(OP_ADD, x, x, B1(f32, 16)));
	ret();
	check_text(verify_msg(F, "test"), "", "verify: a valid kernel passes");
}

static void message_forms(void)
{
	Value *p = start();
	Value *x = emit(OP_LOAD, &p, 1, (Type[]){B1(f32, 16)}, 1)->results[0];
	op2(OP_ADD, x, x, B1(f16, 16));
	ret();
	check_text(verify_msg(F, NULL),
	           "error: internal error: IR invalid: result type is f16[16], expected f32[16] at %2 (add)\n",
	           "verify: without a pass name the message says 'IR invalid:'");
	Source src = {.name = "k.tile", .text = "x\n", .len = 2};
	F->body.first->next->loc = (Span){.src = &src, .begin = 0, .end = 1, .line = 1, .col = 1};
	check_has(verify_msg(F, "dce"), "k.tile:1:1: error: internal error: IR invalid after dce: result type",
	          "verify: the op's location leads the message");
}

static void elementwise_types(void)
{
	start();
	Value *a = ci(i32, 1);
	Value *b = cf(f32, 1);
	op2(OP_ADD, a, b, i32);
	ret();
	expect("operand types differ: i32 and f32 at %3 (add)", "verify: element-wise operands must have one type");

	start();
	op2(OP_MUL, ci(i32, 1), ci(i32, 2), i64);
	ret();
	expect("result type is i64, expected i32 at %3 (mul)", "verify: element-wise result has the operands' type");

	start();
	emit(OP_SUB, (Value *[]){ci(i32, 1)}, 1, &i32, 1);
	ret();
	expect("expects 2 operands, has 1 at %2 (sub)", "verify: operand count per op");

	start();
	op2(OP_SHL, cf(f32, 1), cf(f32, 1), f32);
	ret();
	expect("operand type f32 is not an integer at %3 (shl)", "verify: shifts take integers");

	start();
	opa(OP_MATH, ci(i32, 1), NULL, i32, MATH_EXP);
	ret();
	expect("operand type i32 is not a float at %2 (math)", "verify: math takes floats");

	start();
	opa(OP_DIV, ci(i32, 7), ci(i32, 2), i32, 1);
	ret();
	expect("rn divides floats, not i32 at %3 (div)", "verify: div rn takes floats");

	start();
	op2(OP_AND, cf(f32, 1), cf(f32, 1), f32);
	ret();
	expect("operand type f32 is not an integer or i1 at %3 (and)", "verify: bitwise ops take integers or i1");

	start();
	emit(OP_ADD, (Value *[]){ci(i32, 1), ci(i32, 1)}, 2, NULL, 0);
	ret();
	expect("expects 1 result, has 0 at (add)", "verify: result count per op");
}

static void cmp_select_addptr(void)
{
	start();
	opa(OP_CMP, ci(B1(i32, 8), 1), ci(B1(i32, 8), 2), B1(i32, 8), CMP_LT);
	ret();
	expect("result type is i32[8], expected i1[8] at %3 (cmp)", "verify: cmp gives i1 of its operands' shape");

	start();
	opa(OP_CMP, ci(i32, 1), ci(i32, 2), i1, 9);
	ret();
	expect("predicate 9 is out of range (0..5) at %3 (cmp)", "verify: cmp predicate in range");

	start();
	op3(OP_SELECT, cf(B1(f32, 8), 1), cf(B1(f32, 8), 1), cf(B1(f32, 8), 2), B1(f32, 8));
	ret();
	expect("condition has type f32[8], expected i1[8] at %4 (select)", "verify: select's condition is i1 of its shape");

	Value *p = start();
	op2(OP_ADDPTR, p, cf(f32, 1), P(B1(f32, 16)));
	ret();
	expect("operands *f32[16] and f32 are not a pointer and an integer of its shape at %2 (addptr)",
	       "verify: addptr takes a pointer and an integer offset");

	start();
	Value *q = param("q", P(f32));
	Value *o = ci(B1(i32, 4), 1);
	op2(OP_ADDPTR, q, o, P(f32));
	ret();
	expect("operands *f32 and i32[4] are not a pointer and an integer of its shape at %3 (addptr)",
	       "verify: addptr offset has the pointer's shape");
}

static void memory(void)
{
	Value *p = start();
	emit(OP_LOAD, &p, 1, (Type[]){B1(f16, 16)}, 1);
	ret();
	expect("result type is f16[16], expected f32[16] at %1 (load)", "verify: load gives the pointee type");

	p = start();
	Op *l = emit(OP_LOAD, (Value *[]){p, ci(B1(i1, 8), 1)}, 2, (Type[]){B1(f32, 16)}, 1);
	l->attr[0] = MEMF_MASK;
	ret();
	expect("mask has type i1[8], expected i1[16] at %2 (load)", "verify: load mask is i1 of the pointer's shape");

	p = start();
	l = emit(OP_LOAD, (Value *[]){p, ci(B1(i1, 16), 1), cf(f32, 0)}, 3, (Type[]){B1(f32, 16)}, 1);
	l->attr[0] = MEMF_MASK | MEMF_OTHER;
	ret();
	expect("other has type f32, expected f32[16] at %3 (load)", "verify: load other has the result type");

	p = start();
	l = emit(OP_LOAD, (Value *[]){p, ci(B1(i1, 16), 1)}, 2, (Type[]){B1(f32, 16)}, 1);
	l->attr[0] = MEMF_OTHER;
	ret();
	expect("other without mask at %2 (load)", "verify: load other needs a mask");

	p = start();
	l = emit(OP_LOAD, (Value *[]){p, ci(B1(i1, 16), 1)}, 2, (Type[]){B1(f32, 16)}, 1);
	ret();
	expect("expects 1 operand, has 2 at %2 (load)", "verify: load operands agree with its flags");

	p = start();
	l = emit(OP_LOAD, &p, 1, (Type[]){B1(f32, 16)}, 1);
	l->attr[1] = 7;
	ret();
	expect("cache modifier 7 is out of range (0..6) at %1 (load)", "verify: load cache modifier in range");

	p = start();
	store(p, cf(B1(f16, 16), 0));
	ret();
	expect("value has type f16[16], expected f32[16] at (store)", "verify: store value has the pointee type");

	p = start();
	Op *a = emit(OP_ATOMIC_RMW, (Value *[]){p, cf(B1(f32, 16), 1)}, 2, (Type[]){B1(f32, 16)}, 1);
	a->attr[1] = 4;
	ret();
	expect("sem 4 is out of range (0..3) at %2 (atomic_rmw)", "verify: atomic sem in range");

	p = start();
	a = emit(OP_ATOMIC_RMW, (Value *[]){p, cf(B1(f32, 16), 1)}, 2, (Type[]){B1(f32, 16)}, 1);
	a->attr[0] = ATOM_AND;
	ret();
	expect("atomic and does not apply to f32[16] at %2 (atomic_rmw)", "verify: bitwise atomics take integers");

	begin("k");
	Value *pp = param("pp", P(B1(P(f32), 16)));
	Value *np = emit(OP_LOAD, &pp, 1, (Type[]){B1(P(f32), 16)}, 1)->results[0];
	a = emit(OP_ATOMIC_RMW, (Value *[]){pp, np}, 2, (Type[]){B1(P(f32), 16)}, 1);
	a->attr[0] = ATOM_ADD;
	ret();
	expect("atomic add does not apply to *f32[16] at %2 (atomic_rmw)", "verify: a pointer is only exchanged");

	p = start();
	emit(OP_ATOMIC_CAS, (Value *[]){p, cf(B1(f32, 16), 1), cf(B1(f16, 16), 1)}, 3, (Type[]){B1(f32, 16)}, 1);
	ret();
	expect("operands *f32[16], f32[16], f16[16] are not a pointer and two values of its pointee at %3 (atomic_cas)",
	       "verify: atomic_cas values have the pointee type");
}

static void shapes_and_consts(void)
{
	start();
	ci(B1(i32, 12), 0);
	ret();
	expect("result has type i32[12]: dimension 0 is not a power of two at %1 (const)",
	       "verify: block dimensions are powers of two");

	start();
	ci(B2(i32, 2048, 1024), 0);
	ret();
	expect("result has type i32[2048, 1024]: 2097152 elements, more than 1048576 at %1 (const)",
	       "verify: a block has at most BLK_MAX_NUMEL elements");

	start();
	ci(i8, 200);
	ret();
	expect("constant 200 is not a value of i8 at %1 (const)", "verify: integer constants are normalized to their type");

	start();
	ci(u32, -1);
	ret();
	expect("constant -1 is not a value of u32 at %1 (const)", "verify: unsigned constants are zero-extended");

	start();
	cf(f32, 0.1);
	ret();
	expect("constant 0.10000000000000001 is not a value of f32 at %1 (const)",
	       "verify: float constants are rounded to their type");

	start();
	cf(f16, 70000);
	ret();
	expect("constant 70000 is not a value of f16 at %1 (const)", "verify: f16 constants are in range");

	start();
	Op *ar = emit(OP_ARANGE, NULL, 0, (Type[]){B1(i32, 8)}, 1);
	ar->attr[0] = 0;
	ar->attr[1] = 6;
	ret();
	expect("range 0..6 is not a power-of-two length of i32 at %1 (arange)", "verify: arange length");

	start();
	opa(OP_PROGRAM_ID, NULL, NULL, i32, 3);
	ret();
	expect("axis 3 is out of range (0..2) at %1 (program_id)", "verify: program_id axis");
}

static void shape_ops(void)
{
	start();
	op1(OP_SPLAT, ci(B1(i32, 4), 1), B1(i32, 4));
	ret();
	expect("splats i32[4] to i32[4]: not a scalar to a block at %2 (splat)", "verify: splat takes a scalar");

	start();
	op1(OP_BROADCAST, ci(B2(i32, 2, 4), 1), B2(i32, 4, 4));
	ret();
	expect("cannot broadcast i32[2, 4] to i32[4, 4] at %2 (broadcast)", "verify: broadcast repeats only size-1 dims");

	start();
	opa(OP_EXPAND_DIMS, ci(B1(i32, 4), 1), NULL, B2(i32, 4, 1), 0);
	ret();
	expect("result type is i32[4, 1], expected i32[1, 4] at %2 (expand_dims)", "verify: expand_dims inserts at its axis");

	start();
	Op *t = emit(OP_TRANS, (Value *[]){ci(B2(i32, 2, 4), 1)}, 1, (Type[]){B2(i32, 4, 2)}, 1);
	t->attr[0] = 1;
	t->attr[1] = 1;
	ret();
	expect("permutation repeats 1 at %2 (trans)", "verify: trans takes a permutation");

	start();
	op1(OP_RESHAPE, ci(B1(i32, 8), 1), B2(i32, 2, 2));
	ret();
	expect("cannot reshape i32[8] to i32[2, 2] at %2 (reshape)", "verify: reshape keeps the element count");

	start();
	op1(OP_CAST, param("q", P(f32)), i64);
	ret();
	expect("cannot cast *f32 to i64 at %2 (cast)", "verify: cast converts numbers only");

	start();
	op1(OP_BITCAST, ci(i32, 1), f16);
	ret();
	expect("cannot bitcast i32 to f16 at %2 (bitcast)", "verify: bitcast keeps the bit width");
}

static void reduce_dot(void)
{
	start();
	Op *r = emit(OP_REDUCE, (Value *[]){cf(B2(f32, 4, 8), 1)}, 1, (Type[]){B1(f32, 8)}, 1);
	r->attr[0] = 1;
	Region *outer = R;
	R = &r->regions[0];
	Value *a = ir_region_arg(F, R, f32), *b = ir_region_arg(F, R, f32);
	yield((Value *[]){op2(OP_ADD, a, b, f32)}, 1);
	R = outer;
	ret();
	expect("result type is f32[8], expected f32[4] at %2 (reduce)", "verify: reduce drops its axis from the shape");

	start();
	r = emit(OP_REDUCE, (Value *[]){cf(B1(f32, 8), 1)}, 1, &f32, 1);
	R = &r->regions[0];
	a = ir_region_arg(F, R, f32);
	yield(&a, 1);
	R = &F->body;
	ret();
	expect("combine region has 1 argument, expected 2 at %2 (reduce)", "verify: reduce's region takes 2n arguments");

	start();
	r = emit(OP_REDUCE, (Value *[]){cf(B1(f32, 8), 1)}, 1, &f32, 1);
	R = &r->regions[0];
	a = ir_region_arg(F, R, f32);
	b = ir_region_arg(F, R, f32);
	yield((Value *[]){cmp(CMP_LT, a, b)}, 1);
	R = &F->body;
	ret();
	expect("combine region's yield value 0 has type i1, expected f32 at %2 (reduce)",
	       "verify: reduce's region yields its element types");

	start();
	Value *x = cf(B2(f16, 16, 32), 1), *y = cf(B2(f16, 16, 16), 1), *c = cf(B2(f32, 16, 16), 0);
	op3(OP_DOT, x, y, c, B2(f32, 16, 16));
	ret();
	expect("shapes do not multiply: f16[16, 32] times f16[16, 16] plus f32[16, 16] at %4 (dot)",
	       "verify: dot shapes M x K times K x N plus M x N");

	start();
	x = cf(B2(f16, 16, 16), 1);
	c = ci(B2(i32, 16, 16), 0);
	op3(OP_DOT, x, x, c, B2(i32, 16, 16));
	ret();
	expect("accumulator type i32[16, 16] does not suit inputs f16[16, 16] at %3 (dot)",
	       "verify: dot accumulator suits its inputs");

	start();
	Value *seed = param("seed", T(SK_U32));
	Value *ctr = ci(B1(u32, 8), 0);
	Type u4[4] = {B1(u32, 8), B1(u32, 8), B1(u32, 8), B1(u32, 8)};
	emit(OP_PHILOX, (Value *[]){seed, ctr}, 2, u4, 4)->attr[0] = 10;
	ret();
	expect("operands u32 and u32[8] are not a u64 seed and u32 counters at %3 (philox)", "verify: philox's seed is u64");
}

/* for (%lb, %ub, %step, inits) with its body. */
static Op *loop(Value *lb, Type iv, Value **init, int n, const Type *res, int nres)
{
	Value *ops[8] = {lb, lb, lb};
	for (int i = 0; i < n; i++)
		ops[3 + i] = init[i];
	Op *op = emit(OP_FOR, ops, 3 + n, res, nres);
	R = &op->regions[0];
	ir_region_arg(F, R, iv);
	return op;
}

static void control_flow(void)
{
	start();
	Value *acc = cf(f32, 0);
	Op *l = loop(ci(i32, 0), i64, &acc, 1, &f32, 1);
	Value *it = ir_region_arg(F, R, f32);
	yield(&it, 1);
	R = &F->body;
	ret();
	(void)l;
	expect("body region argument 0 (%4) has type i64, expected i32 at %3 (for)",
	       "verify: for's induction variable has the bounds' type");

	start();
	acc = cf(f32, 0);
	loop(ci(i32, 0), i32, &acc, 1, &f32, 1);
	ir_region_arg(F, R, f32);
	yield((Value *[]){ci(i32, 0)}, 1);
	R = &F->body;
	ret();
	expect("body region's yield value 0 has type i32, expected f32 at %3 (for)",
	       "verify: for's yield matches its loop-carried values");

	start();
	acc = cf(f32, 0);
	loop(ci(i32, 0), i32, &acc, 1, NULL, 0);
	Value *a2 = ir_region_arg(F, R, f32);
	yield(&a2, 1);
	R = &F->body;
	ret();
	expect("has 0 results for 1 loop-carried values at (for)", "verify: for has a result per loop-carried value");

	start();
	Op *iff = emit(OP_IF, (Value *[]){ci(i32, 1)}, 1, NULL, 0);
	R = &iff->regions[0];
	yield(NULL, 0);
	R = &iff->regions[1];
	yield(NULL, 0);
	R = &F->body;
	ret();
	expect("condition has type i32, not i1 at (if)", "verify: if's condition is a scalar i1");

	start();
	iff = emit(OP_IF, (Value *[]){ci(i1, 1)}, 1, &f32, 1);
	R = &iff->regions[0];
	yield((Value *[]){cf(f32, 1)}, 1);
	R = &iff->regions[1];
	yield((Value *[]){cf(f16, 1)}, 1);
	R = &F->body;
	ret();
	expect("else region's yield value 0 has type f16, expected f32 at %2 (if)", "verify: both branches yield the results' types");

	start();
	Op *w = emit(OP_WHILE, (Value *[]){ci(i32, 5)}, 1, &i32, 1);
	R = &w->regions[0];
	Value *i = ir_region_arg(F, R, i32);
	emit(OP_CONDITION, (Value *[]){i, i}, 2, NULL, 0);
	R = &w->regions[1];
	yield((Value *[]){ir_region_arg(F, R, i32)}, 1);
	R = &F->body;
	ret();
	expect("condition has type i32, not i1 at %2 (while)", "verify: while's condition is i1");

	start();
	iff = emit(OP_IF, (Value *[]){ci(i1, 1)}, 1, NULL, 0);
	R = &iff->regions[0];
	yield(NULL, 0);
	R = &F->body;
	ret();
	expect("if region 1 is empty, expected it to end with yield at (if)", "verify: every region ends with a terminator");

	start();
	ci(i32, 1);
	expect("kernel region 0 ends with const, expected return at %1 (const)", "verify: the kernel ends with return");

	start();
	ret();
	ci(i32, 1);
	ret();
	expect("terminator return is not at the end of its region at (return)", "verify: terminators only at region ends");

	start();
	acc = cf(f32, 0);
	loop(ci(i32, 0), i32, &acc, 1, &f32, 1);
	Value *a3 = ir_region_arg(F, R, f32);
	emit(OP_CONDITION, (Value *[]){ci(i1, 1), a3}, 2, NULL, 0);
	R = &F->body;
	ret();
	expect("for region 0 ends with condition, expected yield at (condition)",
	       "verify: the terminator suits the region (condition only in while)");
}

static void dominance(void)
{
	/* a use before the definition, in one region */
	start();
	Value *a = ci(i32, 1);
	Value *b = op2(OP_ADD, a, a, i32);
	Value *c = op2(OP_MUL, a, a, i32);
	ret();
	b->def->operands[1] = c;
	a->uses--;
	c->uses++;
	expect("operand 1 (%3) is not defined before its use at %2 (add)", "verify: a value is used after its definition");

	/* a value of a loop body used after the loop */
	start();
	Value *acc = cf(f32, 0);
	loop(ci(i32, 0), i32, &acc, 1, &f32, 1);
	Value *it = ir_region_arg(F, R, f32);
	Value *inner = op2(OP_ADD, it, it, f32);
	yield(&inner, 1);
	R = &F->body;
	op2(OP_MUL, inner, inner, f32);
	ret();
	expect("operand 0 (%6) is defined in a region that does not enclose its use at %7 (mul)",
	       "verify: an inner region's values do not escape it");

	/* the while's before-region values are not visible in its after-region */
	start();
	Op *w = emit(OP_WHILE, (Value *[]){ci(i32, 5)}, 1, &i32, 1);
	R = &w->regions[0];
	Value *i = ir_region_arg(F, R, i32);
	Value *go = cmp(CMP_NE, i, i);
	emit(OP_CONDITION, (Value *[]){go, i}, 2, NULL, 0);
	R = &w->regions[1];
	ir_region_arg(F, R, i32);
	yield(&i, 1);
	R = &F->body;
	ret();
	expect("operand 0 (%3) is defined in a region that does not enclose its use at (yield)",
	       "verify: sibling regions do not see each other's values");

	/* an op cannot use its own result, even in its region */
	start();
	acc = cf(f32, 0);
	Op *l = loop(ci(i32, 0), i32, &acc, 1, &f32, 1);
	ir_region_arg(F, R, f32);
	yield(l->results, 1);
	R = &F->body;
	ret();
	expect("operand 0 (%3) is not defined before its use at (yield)", "verify: an op's results are not visible in its regions");

	/* a value from another function */
	IrFunc *other = begin("other");
	Value *foreign = ci(i32, 7);
	ret();
	start();
	ci(i32, 1);
	op2(OP_ADD, foreign, foreign, i32);
	ret();
	(void)other;
	expect("operand 0 (%0) is not defined before its use at %2 (add)", "verify: a value of another function is caught");
}

static void bookkeeping(void)
{
	start();
	Value *a = ci(i32, 1);
	op2(OP_ADD, a, a, i32);
	ret();
	a->uses = 1;
	expect("%1 counts 1 use, has 2 at %1 (const)", "verify: use counts agree with operand slots");

	start();
	Value *b = ci(i32, 1);
	Op *add = op2(OP_ADD, b, b, i32)->def;
	ret();
	add->operands[0] = NULL;
	expect("operand 0 is NULL at %2 (add)", "verify: a NULL operand is reported, not followed");

	start();
	ci(i32, 1);
	Op *c = F->body.first;
	ret();
	c->parent = NULL;
	expect("op's parent link does not name its region at %1 (const)", "verify: parent links");

	start();
	Value *d = ci(i32, 1);
	ret();
	F->body.last->prev = NULL;
	(void)d;
	expect("op list links are inconsistent at (return)", "verify: prev/next links (a cycle cannot hang it)");

	start();
	Value *e = ci(i32, 1);
	ret();
	e->id = 0;
	expect("result %0 is defined twice at %0 (const)", "verify: value ids are unique");

	begin("k");
	Value *q = param("q", i32);
	F->params[0].value = ci(i32, 0);
	ret();
	(void)q;
	expect("parameter 0 (q) is not the kernel body's argument 0", "verify: parameters are the body's arguments");

	start();
	ci(i32, 1)->def->code = (OpCode)1000;
	ret();
	check_has(verify_msg(F, "test"), "unknown op code 1000", "verify: an unknown op code is reported");
}

/* ---- GPU IR ------------------------------------------------------------------
 * After the layouts pass (f->gpu) every block has an encoding that lays it
 * out, element-wise ops and loops keep encodings (compared as bit maps), and
 * convert_layout exists only there. */

/* The encodings the GPU cases use: a 1-D blocked one for 128 elements on 4
 * warps, the same with 4 elements a thread, and a linear map equal to the first. */
static const Encoding *blk1, *blk4, *lin1;

static void gpu_start(void)
{
	start();
	F->gpu = true;
	blk1 = enc_blocked(F, 1, (int[]){1}, (int[]){32}, (int[]){4}, (int[]){0});
	blk4 = enc_blocked(F, 1, (int[]){4}, (int[]){32}, (int[]){4}, (int[]){0});
	Lin l;
	enc_lin(blk1, B1(f32, 128), 4, &l);
	lin1 = enc_linear(F, &l);
}

static Value *with(Value *v, const Encoding *e)
{
	v->enc = e;
	return v;
}

/* for %lb to %lb step %lb iter(init) over one f32[128] value; R is left at the body. */
static Op *gpu_loop(Value *init, const Encoding *arg_enc)
{
	Value *lb = ci(i32, 0);
	Op *l = emit(OP_FOR, (Value *[]){lb, lb, lb, init}, 4, (Type[]){B1(f32, 128)}, 1);
	R = &l->regions[0];
	ir_region_arg(F, R, i32);
	with(ir_region_arg(F, R, B1(f32, 128)), arg_enc);
	return l;
}

static void gpu_ir(void)
{
	/* tile IR has no conversions */
	start();
	Value *x = ci(B1(f32, 128), 1);
	op1(OP_CONVERT_LAYOUT, x, B1(f32, 128));
	ret();
	expect("convert_layout outside GPU IR at %2 (convert_layout)", "verify: convert_layout in tile IR is rejected");

	/* a valid GPU function: scalars need no encoding, a conversion between
	 * two encodings, an element-wise op whose operand is named differently
	 * but lays out the same (linear = blocked) */
	gpu_start();
	Value *a = with(ci(B1(f32, 128), 1), blk1);
	Value *b = with(op1(OP_CONVERT_LAYOUT, a, B1(f32, 128)), blk4);
	Value *c = with(op1(OP_CONVERT_LAYOUT, b, B1(f32, 128)), lin1);
	with(op2(OP_ADD, a, c, B1(f32, 128)), blk1);
	Op *l = gpu_loop(a, blk1);
	yield((Value *[]){with(op2(OP_MUL, l->regions[0].args[1], c, B1(f32, 128)), lin1)}, 1);
	R = &F->body;
	with(l->results[0], lin1);
	ret();
	check_text(verify_msg(F, "test"), "", "verify: GPU IR with encodings on every block passes");

	/* a block without an encoding */
	gpu_start();
	a = with(ci(B1(f32, 128), 1), blk1);
	op2(OP_ADD, a, a, B1(f32, 128));
	ret();
	expect("result %2 has no encoding at %2 (add)", "verify: GPU IR: a block without an encoding is rejected");

	gpu_start();
	ci(B1(f32, 128), 1);
	ret();
	expect("result %1 has no encoding at %1 (const)", "verify: GPU IR: a constant block without an encoding is rejected");

	/* an element-wise op whose operand's bit map is not its result's */
	gpu_start();
	a = with(ci(B1(f32, 128), 1), blk1);
	b = with(ci(B1(f32, 128), 2), blk4);
	with(op2(OP_ADD, a, b, B1(f32, 128)), blk1);
	ret();
	expect("operand and result: %2 and %3 differ in encoding at %3 (add)",
	       "verify: GPU IR: an element-wise operand in another encoding is rejected");

	gpu_start();
	a = with(ci(B1(f32, 128), 1), blk1);
	with(op1(OP_NEG, a, B1(f32, 128)), blk4);
	ret();
	expect("operand and result: %1 and %2 differ in encoding at %2 (neg)",
	       "verify: GPU IR: an element-wise result in another encoding is rejected");

	/* a loop whose yielded value's encoding differs from its argument's */
	gpu_start();
	a = with(ci(B1(f32, 128), 1), blk1);
	l = gpu_loop(a, blk1);
	b = with(ci(B1(f32, 128), 2), blk4);
	yield(&b, 1);
	R = &F->body;
	with(l->results[0], blk1);
	ret();
	expect("yielded value and loop argument: %6 and %5 differ in encoding at %3 (for)",
	       "verify: GPU IR: a loop yielding another encoding than its argument's is rejected");

	gpu_start();
	a = with(ci(B1(f32, 128), 1), blk4);
	l = gpu_loop(a, blk1);
	yield(&l->regions[0].args[1], 1);
	R = &F->body;
	with(l->results[0], blk1);
	ret();
	expect("initial value and loop argument: %1 and %5 differ in encoding at %3 (for)",
	       "verify: GPU IR: a loop's initial value in another encoding than its argument's is rejected");

	/* an encoding that cannot lay out the type (an 8 x 8 accumulator is
	 * padded to the instruction's 16 x 8; a K shorter than a step is not) */
	gpu_start();
	with(cf(B2(f16, 16, 8), 0), enc_dot_operand(F, 0, enc_mma(F, 1, 1), 2));
	ret();
	expect("result %1: dot_operand<idx = 0, parent = #mma3, k_width = 2> cannot lay out f16[16, 8] at %1 (const)",
	       "verify: GPU IR: an mma operand A with 8 of K (k_width 2) is rejected");
	gpu_start();
	with(cf(B1(f32, 128), 0), enc_mma(F, 1, 1));
	ret();
	expect("result %1: mma<version = 2, wpc = [1, 1]> cannot lay out f32[128] at %1 (const)",
	       "verify: GPU IR: mma on a 1-D block is rejected");

	/* an mma dot's operands are its dot_operands with k_width elements a
	 * 32-bit register: 4 for i8 (m16n8k32), not 2 */
	for (int kw = 4; kw >= 2; kw -= 2) {
		gpu_start();
		const Encoding *m = enc_mma(F, 1, 1);
		a = with(ci(B2(i8, 16, 32), 1), enc_dot_operand(F, 0, m, kw));
		b = with(ci(B2(i8, 32, 16), 1), enc_dot_operand(F, 1, m, 4));
		c = with(ci(B2(i32, 16, 16), 0), m);
		with(op3(OP_DOT, a, b, c, B2(i32, 16, 16)), m);
		ret();
		if (kw == 4)
			check_text(verify_msg(F, "test"), "", "verify: GPU IR: an i8 mma dot with dot_operands of k_width 4 passes");
		else
			expect("operand 0 (%1) is not laid out as the mma's dot_operand of k_width 4 at %4 (dot)",
			       "verify: GPU IR: an i8 mma dot whose A has k_width 2 is rejected");
	}

	gpu_start();
	with(cf(B2(f32, 16, 16), 0), blk1);
	ret();
	expect("result %1: blocked<spt = [1], tpw = [32], wpc = [4], order = [0]> cannot lay out f32[16, 16] at %1 (const)",
	       "verify: GPU IR: a blocked encoding of another rank is rejected");

	/* a conversion changes the encoding, never the type */
	gpu_start();
	a = with(ci(B1(f32, 128), 1), blk1);
	with(op1(OP_CONVERT_LAYOUT, a, B1(f16, 128)), blk4);
	ret();
	expect("result type is f16[128], expected f32[128] at %2 (convert_layout)",
	       "verify: GPU IR: a conversion to another type is rejected");

	/* KNOWN BUG (not counted unless BLK_KNOWN_BUGS=1): loads and stores
	 * are not element-wise ops, and the verifier does not compare their
	 * operands' encodings, but the lowering walks pointer, mask and value
	 * registers in one order (lower_load_store): a store of a value held in
	 * another encoding than its pointers passes and stores elements to the
	 * wrong addresses. */
	gpu_start();
	Value *p = param("q", P(f32));
	Value *ptrs = with(op1(OP_SPLAT, p, P(B1(f32, 128))), blk1);
	ptrs = with(op2(OP_ADDPTR, ptrs, with(ci(B1(i32, 128), 0), blk1), P(B1(f32, 128))), blk1);
	store(ptrs, with(cf(B1(f32, 128), 1), blk4));
	ret();
	const char *msg = verify_msg(F, "test");
	bool caught = msg[0] != 0;
	const char *kb = getenv("BLK_KNOWN_BUGS");
	if (caught || (kb && strcmp(kb, "1") == 0))
		check(caught, "verify: GPU IR: a store whose value's encoding is not its pointers' is rejected");
	else
		printf("bug  verify: GPU IR: a store whose value's encoding is not its pointers' is rejected"
		       " (KNOWN BUG, not counted; BLK_KNOWN_BUGS=1 counts it)\n");
}

/* ---- random corruption -----------------------------------------------------
 * A valid function with every kind of region, corrupted at random in ways a
 * buggy pass could (a wrong operand, type, attribute, op code, use count, an
 * op moved or dropped): the verifier must never crash and must say exactly
 * one thing when it objects. */

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static Value *pool[256];
static Op *ops_seen[256];
static int n_pool, n_ops;

static void collect(Region *r)
{
	for (int i = 0; i < r->n_args && n_pool < 256; i++)
		pool[n_pool++] = r->args[i];
	for (Op *op = r->first; op; op = op->next) {
		if (n_ops < 256)
			ops_seen[n_ops++] = op;
		for (int i = 0; i < op->n_results && n_pool < 256; i++)
			pool[n_pool++] = op->results[i];
		for (int i = 0; i < op->n_regions; i++)
			collect(&op->regions[i]);
	}
}

static void rich(void)
{
	begin("rich");
	Value *p = param("p", P(B1(f32, 16))), *n = param("n", i32);
	Value *x = emit(OP_LOAD, &p, 1, (Type[]){B1(f32, 16)}, 1)->results[0];
	Value *ops[4] = {ci(i32, 0), n, NULL, x};
	ops[2] = ci(i32, 1);
	Op *l = emit(OP_FOR, ops, 4, (Type[]){B1(f32, 16)}, 1);
	R = &l->regions[0];
	ir_region_arg(F, R, i32);
	Value *acc = ir_region_arg(F, R, B1(f32, 16));
	Value *y = op2(OP_MUL, acc, acc, B1(f32, 16));
	yield(&y, 1);
	R = &F->body;
	Op *red = emit(OP_REDUCE, l->results, 1, &f32, 1);
	R = &red->regions[0];
	Value *a = ir_region_arg(F, R, f32), *b = ir_region_arg(F, R, f32);
	yield((Value *[]){op2(OP_ADD, a, b, f32)}, 1);
	R = &F->body;
	Value *c = cmp(CMP_GT, n, ops[0]);
	Op *iff = emit(OP_IF, &c, 1, &f32, 1);
	R = &iff->regions[0];
	yield(red->results, 1);
	R = &iff->regions[1];
	yield((Value *[]){cf(f32, 1)}, 1);
	R = &F->body;
	Op *w = emit(OP_WHILE, &n, 1, &i32, 1);
	R = &w->regions[0];
	Value *i = ir_region_arg(F, R, i32);
	emit(OP_CONDITION, (Value *[]){cmp(CMP_NE, i, ops[0]), i}, 2, NULL, 0);
	R = &w->regions[1];
	Value *j = ir_region_arg(F, R, i32);
	yield((Value *[]){op2(OP_SUB, j, ops[2], i32)}, 1);
	R = &F->body;
	Value *s = op1(OP_SPLAT, iff->results[0], B1(f32, 16));
	Op *st = emit(OP_STORE, (Value *[]){p, s, cmp(CMP_LT, y == acc ? s : s, s)}, 3, NULL, 0);
	st->attr[0] = MEMF_MASK;
	ret();
}

static void corrupt(Value *foreign)
{
	Op *op = ops_seen[rnd() % (uint64_t)n_ops];
	static const int32_t dims[] = {0, 1, 2, 3, 16, -4, 1 << 21};
	static const int64_t attrs[] = {-1, 0, 1, 2, 3, 5, 7, 100, INT64_MIN};
	switch (rnd() % 10) {
	case 0: /* an operand replaced by another value, a foreign one or NULL */
		if (op->n_operands) {
			int k = (int)(rnd() % (uint64_t)op->n_operands);
			uint64_t r = rnd() % (uint64_t)(n_pool + 2);
			op->operands[k] = r < (uint64_t)n_pool ? pool[r] : r == (uint64_t)n_pool ? foreign : NULL;
		}
		break;
	case 1: { /* a result or region argument of another type */
		Value *v = pool[rnd() % (uint64_t)n_pool];
		v->type.scalar = (uint8_t)(rnd() % (SK_COUNT + 2));
		v->type.ptr = (uint8_t)(rnd() % 6);
		v->type.rank = (uint8_t)(rnd() % 6);
		for (int d = 0; d < BLK_MAX_RANK; d++)
			v->type.shape[d] = dims[rnd() % 7];
		break;
	}
	case 2:
		op->attr[rnd() % BLK_MAX_RANK] = attrs[rnd() % 9];
		break;
	case 3:
		op->ival = (int64_t)rnd();
		op->fval = (double)(int64_t)rnd() / 3;
		break;
	case 4:
		op->code = (OpCode)(rnd() % (OP_COUNT + 2));
		break;
	case 5: /* an op dropped without its uses dropped */
		if (op->code != OP_RETURN)
			ir_unlink(op);
		break;
	case 6: /* two neighbours swapped */
		if (op->next && op->next->code != OP_RETURN && !(op_flags(op->code) & OPF_TERM)) {
			Op *nx = op->next;
			ir_unlink(op);
			if (nx->next)
				ir_link_before(op, nx->next);
		}
		break;
	case 7:
		pool[rnd() % (uint64_t)n_pool]->uses += rnd() % 2 ? 1 : -1;
		break;
	case 8: { /* an op moved before another, maybe into another region */
		Op *to = ops_seen[rnd() % (uint64_t)n_ops];
		if (to != op && op->code != OP_RETURN && op->n_regions == 0 && to->parent) {
			ir_unlink(op);
			ir_link_before(op, to);
		}
		break;
	}
	case 9:
		if (op->n_results)
			op->n_results--;
		else if (op->n_operands)
			op->n_operands--;
		break;
	}
}

static void fuzz(void)
{
	begin("foreign");
	Value *foreign = ci(i32, 1);
	int trials = 3000, caught = 0, bad = 0;
	for (int t = 0; t < trials; t++) {
		rich();
		n_pool = n_ops = 0;
		collect(&F->body);
		int k = 1 + (int)(rnd() % 2);
		for (int i = 0; i < k; i++)
			corrupt(foreign);
		char *m = verify_msg(F, "test");
		if (!*m)
			continue;
		caught++;
		const char *nl = strchr(m, '\n');
		static const char head[] = "error: internal error: IR invalid after test: ";
		if (strncmp(m, head, sizeof head - 1) != 0 || !nl || nl[1]) {
			if (bad++ < 3)
				printf("  unexpected report: %s", m);
		}
	}
	printf("  %d of %d corruptions caught\n", caught, trials);
	check(bad == 0, "verify: random corruptions never crash it, each report is one line");
	check(caught > trials * 3 / 4, "verify: most random corruptions are caught");
}

int main(void)
{
	f32 = T(SK_F32), f16 = T(SK_F16), i32 = T(SK_I32), i64 = T(SK_I64), u32 = T(SK_U32), i1 = T(SK_I1),
	i8 = T(SK_I8);
	valid();
	message_forms();
	elementwise_types();
	cmp_select_addptr();
	memory();
	shapes_and_consts();
	shape_ops();
	reduce_dot();
	control_flow();
	dominance();
	bookkeeping();
	gpu_ir();
	fuzz();
	return done();
}
