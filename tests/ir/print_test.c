/* The printed form of tile IR: golden text for hand-built functions. */
#include "irtest.h"

static void vector_add(void)
{
	begin("vector_add");
	Type f32 = T(SK_F32), i32 = T(SK_I32);
	Value *x = param("x", P(f32)), *y = param("y", P(f32)), *out = param("out", P(f32));
	Value *n = param("n", i32);
	const_param("BLOCK", i32, 1024, 0);
	Value *pid = opa(OP_PROGRAM_ID, NULL, NULL, i32, 0);
	Value *start = op2(OP_MUL, pid, ci(i32, 1024), i32);
	Op *ar = emit(OP_ARANGE, NULL, 0, (Type[]){B1(i32, 1024)}, 1);
	ar->attr[1] = 1024;
	Value *offs = op2(OP_ADD, op1(OP_SPLAT, start, B1(i32, 1024)), ar->results[0], B1(i32, 1024));
	Value *mask = cmp(CMP_LT, offs, op1(OP_SPLAT, n, B1(i32, 1024)));
	Value *px = op2(OP_ADDPTR, op1(OP_SPLAT, x, B1(P(f32), 1024)), offs, B1(P(f32), 1024));
	Value *py = op2(OP_ADDPTR, op1(OP_SPLAT, y, B1(P(f32), 1024)), offs, B1(P(f32), 1024));
	Value *zero = cf(B1(f32, 1024), 0);
	Op *lx = emit(OP_LOAD, (Value *[]){px, mask, zero}, 3, (Type[]){B1(f32, 1024)}, 1);
	lx->attr[0] = MEMF_MASK | MEMF_OTHER;
	lx->attr[1] = CACHE_CG;
	Op *ly = emit(OP_LOAD, (Value *[]){py, mask}, 2, (Type[]){B1(f32, 1024)}, 1);
	ly->attr[0] = MEMF_MASK;
	ly->attr[2] = EVICT_FIRST;
	ly->attr[3] = 1;
	Value *sum = op2(OP_ADD, lx->results[0], ly->results[0], B1(f32, 1024));
	Value *po = op2(OP_ADDPTR, op1(OP_SPLAT, out, B1(P(f32), 1024)), offs, B1(P(f32), 1024));
	Op *st = emit(OP_STORE, (Value *[]){po, sum, mask}, 3, NULL, 0);
	st->attr[0] = MEMF_MASK;
	ret();
	check_text(print_fn(F),
	           "kernel @vector_add(%0: *f32, %1: *f32, %2: *f32, %3: i32, BLOCK = 1024) num_warps = 4, num_stages = 3 {\n"
	           "  %4 = program_id 0 : i32\n"
	           "  %5 = const 1024 : i32\n"
	           "  %6 = mul %4, %5 : i32\n"
	           "  %7 = arange 0, 1024 : i32[1024]\n"
	           "  %8 = splat %6 : i32[1024]\n"
	           "  %9 = add %8, %7 : i32[1024]\n"
	           "  %10 = splat %3 : i32[1024]\n"
	           "  %11 = cmp lt %9, %10 : i1[1024]\n"
	           "  %12 = splat %0 : *f32[1024]\n"
	           "  %13 = addptr %12, %9 : *f32[1024]\n"
	           "  %14 = splat %1 : *f32[1024]\n"
	           "  %15 = addptr %14, %9 : *f32[1024]\n"
	           "  %16 = const 0.0 : f32[1024]\n"
	           "  %17 = load %13, %11, %16 {mask, other, cache = cg} : f32[1024]\n"
	           "  %18 = load %15, %11 {mask, evict = first, volatile} : f32[1024]\n"
	           "  %19 = add %17, %18 : f32[1024]\n"
	           "  %20 = splat %2 : *f32[1024]\n"
	           "  %21 = addptr %20, %9 : *f32[1024]\n"
	           "  store %21, %19, %11 {mask}\n"
	           "  return\n"
	           "}\n",
	           "print: vector_add (params, const param, load/store attributes)");
	check(ir_verify(F, &(Diag){0}, "test"), "print: vector_add verifies");
}

/* A loop with a dot, a reduce with its combine region, an if, a while. */
static void regions(void)
{
	begin("regions");
	Type f32 = T(SK_F32), f16 = T(SK_F16), i32 = T(SK_I32), i1 = T(SK_I1);
	Type a_t = B2(f16, 16, 32), b_t = B2(f16, 32, 16), c_t = B2(f32, 16, 16);
	Value *pa = param("a", P(a_t)), *pb = param("b", P(b_t));
	Value *n = param("n", i32);
	Value *lb = ci(i32, 0), *st = ci(i32, 32);
	Value *acc0 = cf(c_t, 0);
	Op *loop = emit(OP_FOR, (Value *[]){lb, n, st, acc0}, 4, &c_t, 1);
	Region *outer = R;
	R = &loop->regions[0];
	ir_region_arg(F, R, i32);
	Value *acc = ir_region_arg(F, R, c_t);
	Value *a = emit(OP_LOAD, &pa, 1, &a_t, 1)->results[0];
	Value *b = emit(OP_LOAD, &pb, 1, &b_t, 1)->results[0];
	Op *d = emit(OP_DOT, (Value *[]){a, b, acc}, 3, &c_t, 1);
	d->attr[0] = DOT_IEEE;
	yield(d->results, 1);
	R = outer;
	Op *red = emit(OP_REDUCE, loop->results, 1, (Type[]){B1(f32, 16)}, 1);
	red->attr[0] = 1;
	R = &red->regions[0];
	Value *x = ir_region_arg(F, R, f32), *y = ir_region_arg(F, R, f32);
	Op *mx = emit(OP_MAX, (Value *[]){x, y}, 2, &f32, 1);
	mx->attr[0] = 1;
	yield(mx->results, 1);
	R = outer;
	Value *c = cmp(CMP_GT, n, ci(i32, 0));
	Op *iff = emit(OP_IF, &c, 1, &f32, 1);
	R = &iff->regions[0];
	Value *one = cf(f32, 1.5);
	yield(&one, 1);
	R = &iff->regions[1];
	Value *e = cf(f32, -0.25);
	yield(&e, 1);
	R = outer;
	Op *w = emit(OP_WHILE, (Value *[]){n}, 1, &i32, 1);
	R = &w->regions[0];
	Value *i = ir_region_arg(F, R, i32);
	Value *go = cmp(CMP_NE, i, ci(i32, 0));
	emit(OP_CONDITION, (Value *[]){go, i}, 2, NULL, 0);
	R = &w->regions[1];
	Value *j = ir_region_arg(F, R, i32);
	Value *j2 = op2(OP_SHR, j, ci(i32, 1), i32);
	yield(&j2, 1);
	R = outer;
	(void)i1;
	ret();
	check_text(print_fn(F),
	           "kernel @regions(%0: *f16[16, 32], %1: *f16[32, 16], %2: i32) num_warps = 4, num_stages = 3 {\n"
	           "  %3 = const 0 : i32\n"
	           "  %4 = const 32 : i32\n"
	           "  %5 = const 0.0 : f32[16, 16]\n"
	           "  %6 = for %3 to %2 step %4 iter(%5) : f32[16, 16] {\n"
	           "  ^(%7: i32, %8: f32[16, 16]):\n"
	           "    %9 = load %0 : f16[16, 32]\n"
	           "    %10 = load %1 : f16[32, 16]\n"
	           "    %11 = dot %9, %10, %8 {precision = ieee} : f32[16, 16]\n"
	           "    yield %11\n"
	           "  }\n"
	           "  %12 = reduce %6 {axis = 1} : f32[16] {\n"
	           "  ^(%13: f32, %14: f32):\n"
	           "    %15 = max %13, %14 {propagate_nan} : f32\n"
	           "    yield %15\n"
	           "  }\n"
	           "  %16 = const 0 : i32\n"
	           "  %17 = cmp gt %2, %16 : i1\n"
	           "  %18 = if %17 : f32 {\n"
	           "    %19 = const 1.5 : f32\n"
	           "    yield %19\n"
	           "  } else {\n"
	           "    %20 = const -0.25 : f32\n"
	           "    yield %20\n"
	           "  }\n"
	           "  %21 = while iter(%2) : i32 {\n"
	           "  ^(%22: i32):\n"
	           "    %23 = const 0 : i32\n"
	           "    %24 = cmp ne %22, %23 : i1\n"
	           "    condition %24, %22\n"
	           "  } do {\n"
	           "  ^(%25: i32):\n"
	           "    %26 = const 1 : i32\n"
	           "    %27 = shr %25, %26 : i32\n"
	           "    yield %27\n"
	           "  }\n"
	           "  return\n"
	           "}\n",
	           "print: for, dot, reduce, if/else, while/do regions");
	check_text(verify_msg(F, "test"), "", "print: the region example verifies");
}

/* Constants of every kind print so that they read back to the same value. */
static void constants(void)
{
	begin("consts");
	const_param("EPS", T(SK_F32), 0, (float)1e-5);
	const_param("ON", T(SK_I1), 1, 0);
	const_param("BIG", T(SK_U64), -1, 0);
	ci(T(SK_I8), -128);
	ci(T(SK_U8), 255);
	ci(T(SK_U32), 4294967295);
	ci(T(SK_I64), INT64_MIN);
	ci(T(SK_U64), -1);
	ci(T(SK_I1), 1);
	ci(B1(T(SK_I1), 4), 0);
	cf(T(SK_F32), (float)0.1);
	cf(T(SK_F64), 0.1);
	cf(T(SK_F16), 65504);
	cf(T(SK_BF16), 0x1.fep127); /* the largest finite bf16 */
	cf(T(SK_F32), 1e30f);
	cf(T(SK_F64), -0.0);
	cf(T(SK_F32), 1.0 / 0.0);
	cf(T(SK_F32), -1.0 / 0.0);
	cf(T(SK_F32), 0.0 / 0.0);
	cf(T(SK_F8E4M3), 448);
	cf(T(SK_F32), 0x1p-149);
	ret();
	check_text(print_fn(F),
	           "kernel @consts(EPS = 9.99999975e-06, ON = true, BIG = 18446744073709551615) num_warps = 4, num_stages = 3 {\n"
	           "  %0 = const -128 : i8\n"
	           "  %1 = const 255 : u8\n"
	           "  %2 = const 4294967295 : u32\n"
	           "  %3 = const -9223372036854775808 : i64\n"
	           "  %4 = const 18446744073709551615 : u64\n"
	           "  %5 = const true : i1\n"
	           "  %6 = const false : i1[4]\n"
	           "  %7 = const 0.100000001 : f32\n"
	           "  %8 = const 0.10000000000000001 : f64\n"
	           "  %9 = const 65504.0 : f16\n"
	           "  %10 = const 3.38953139e+38 : bf16\n"
	           "  %11 = const 1.00000002e+30 : f32\n"
	           "  %12 = const -0.0 : f64\n"
	           "  %13 = const inf : f32\n"
	           "  %14 = const -inf : f32\n"
	           "  %15 = const nan : f32\n"
	           "  %16 = const 448.0 : f8e4m3\n"
	           "  %17 = const 1.40129846e-45 : f32\n"
	           "  return\n"
	           "}\n",
	           "print: constants of every kind, round-trip digits, inf/nan/-0");
	check_text(verify_msg(F, "test"), "", "print: the constants verify");
	/* round trip: the printed digits read back to the same value */
	check((float)strtod("9.99999975e-06", NULL) == (float)1e-5 && (float)strtod("0.100000001", NULL) == (float)0.1 &&
	          strtod("0.10000000000000001", NULL) == 0.1 && (float)strtod("1.40129846e-45", NULL) == 0x1p-149f,
	      "print: float digits read back exactly");
}

/* Every other op's line: attributes by name, conversions with both types. */
static void op_lines(void)
{
	begin("ops");
	Type f32 = T(SK_F32), i32 = T(SK_I32), u32 = T(SK_U32), f16 = T(SK_F16);
	Value *p = param("p", P(f32));
	Value *x = param("x", B2(f32, 4, 8));
	Value *k = param("k", i32);
	Value *seed = param("seed", T(SK_U64));
	Value *row = param("row", B1(f32, 8));
	op1(OP_EXPAND_DIMS, row, B2(f32, 1, 8))->def->attr[0] = 0;
	op1(OP_BROADCAST, row->def ? row : op1(OP_EXPAND_DIMS, row, B2(f32, 1, 8)), B2(f32, 4, 8));
	Op *t = emit(OP_TRANS, &x, 1, (Type[]){B2(f32, 8, 4)}, 1);
	t->attr[0] = 1;
	op1(OP_RESHAPE, x, B1(f32, 32));
	op2(OP_CAT, row, row, B1(f32, 16));
	Value *jn = op2(OP_JOIN, row, row, B2(f32, 8, 2));
	emit(OP_SPLIT, &jn, 1, (Type[]){B1(f32, 8), B1(f32, 8)}, 2);
	opa(OP_MATH, x, NULL, B2(f32, 4, 8), MATH_RSQRT);
	op1(OP_CAST, x, B2(f16, 4, 8));
	op1(OP_BITCAST, x, B2(T(SK_I32), 4, 8));
	Value *pi = op1(OP_PTR_TO_INT, p, T(SK_I64));
	op1(OP_INT_TO_PTR, pi, P(f32));
	Op *h = emit(OP_HINT, &k, 1, &i32, 1);
	h->attr[0] = 16;
	h->attr[1] = 0;
	Value *v = cf(f32, 2);
	Op *a = emit(OP_ATOMIC_RMW, (Value *[]){p, v}, 2, &f32, 1);
	a->attr[0] = ATOM_MAX;
	a->attr[1] = SEM_RELAXED;
	a->attr[2] = SCOPE_CTA;
	Op *cas = emit(OP_ATOMIC_CAS, (Value *[]){p, v, v}, 3, &f32, 1);
	cas->attr[1] = SEM_ACQUIRE;
	cas->attr[2] = SCOPE_SYS;
	Value *ctr = op1(OP_SPLAT, op1(OP_CAST, k, u32), B1(u32, 8));
	Type u4[4] = {B1(u32, 8), B1(u32, 8), B1(u32, 8), B1(u32, 8)};
	emit(OP_PHILOX, (Value *[]){seed, ctr}, 2, u4, 4)->attr[0] = 10;
	Op *sc = emit(OP_SCAN, &row, 1, (Type[]){B1(f32, 8)}, 1);
	sc->attr[1] = 1;
	Region *outer = R;
	R = &sc->regions[0];
	Value *s0 = ir_region_arg(F, R, f32), *s1 = ir_region_arg(F, R, f32);
	yield((Value *[]){op2(OP_ADD, s0, s1, f32)}, 1);
	R = outer;
	Op *pr = emit(OP_PRINT, (Value *[]){k, v}, 2, NULL, 0);
	pr->str = "k = \"\t";
	pr->attr[0] = 1;
	Value *ok = cmp(CMP_GE, k, ci(i32, 0));
	emit(OP_ASSERT, &ok, 1, NULL, 0)->str = "k >= 0";
	op2(OP_UMULHI, k, k, i32);
	op3(OP_FMA, v, v, v, f32);
	op3(OP_SELECT, ok, v, v, f32);
	opa(OP_NUM_PROGRAMS, NULL, NULL, i32, 2);
	ret();
	check_text(print_fn(F),
	           "kernel @ops(%0: *f32, %1: f32[4, 8], %2: i32, %3: u64, %4: f32[8]) num_warps = 4, num_stages = 3 {\n"
	           "  %5 = expand_dims %4 {axis = 0} : f32[1, 8]\n"
	           "  %6 = expand_dims %4 {axis = 0} : f32[1, 8]\n"
	           "  %7 = broadcast %6 : f32[4, 8]\n"
	           "  %8 = trans %1 {perm = [1, 0]} : f32[8, 4]\n"
	           "  %9 = reshape %1 : f32[32]\n"
	           "  %10 = cat %4, %4 : f32[16]\n"
	           "  %11 = join %4, %4 : f32[8, 2]\n"
	           "  %12, %13 = split %11 : f32[8], f32[8]\n"
	           "  %14 = math rsqrt %1 : f32[4, 8]\n"
	           "  %15 = cast %1 : f32[4, 8] -> f16[4, 8]\n"
	           "  %16 = bitcast %1 : f32[4, 8] -> i32[4, 8]\n"
	           "  %17 = ptr_to_int %0 : *f32 -> i64\n"
	           "  %18 = int_to_ptr %17 : i64 -> *f32\n"
	           "  %19 = hint %2 {divisibility = 16} : i32\n"
	           "  %20 = const 2.0 : f32\n"
	           "  %21 = atomic_rmw max %0, %20 {sem = relaxed, scope = cta} : f32\n"
	           "  %22 = atomic_cas %0, %20, %20 {sem = acquire, scope = sys} : f32\n"
	           "  %23 = cast %2 : i32 -> u32\n"
	           "  %24 = splat %23 : u32[8]\n"
	           "  %25, %26, %27, %28 = philox %3, %24 {rounds = 10} : u32[8], u32[8], u32[8], u32[8]\n"
	           "  %29 = scan %4 {axis = 0, reverse} : f32[8] {\n"
	           "  ^(%30: f32, %31: f32):\n"
	           "    %32 = add %30, %31 : f32\n"
	           "    yield %32\n"
	           "  }\n"
	           "  print %2, %20 {prefix = \"k = \\\"\\t\", hex}\n"
	           "  %33 = const 0 : i32\n"
	           "  %34 = cmp ge %2, %33 : i1\n"
	           "  assert %34 {msg = \"k >= 0\"}\n"
	           "  %35 = umulhi %2, %2 : i32\n"
	           "  %36 = fma %20, %20, %20 : f32\n"
	           "  %37 = select %34, %20, %20 : f32\n"
	           "  %38 = num_programs 2 : i32\n"
	           "  return\n"
	           "}\n",
	           "print: shape ops, math, conversions, hint, atomics, philox, scan, print, assert");
	check_text(verify_msg(F, "test"), "", "print: the op example verifies");
}

static void locations(void)
{
	Source src = {.name = "k.tile", .text = "", .len = 0};
	here = (Span){.src = &src, .line = 3, .col = 14};
	begin("loc");
	Value *n = param("n", T(SK_I32));
	here.line = 4;
	here.col = 5;
	op2(OP_ADD, n, n, T(SK_I32));
	here.line = 5;
	ret();
	here = (Span){0};
	StrBuf sb = {0};
	ir_print_opts(F, &sb, &(IrPrintOpts){.show_locations = true});
	check_text(sb.data,
	           "kernel @loc(%0: i32) num_warps = 4, num_stages = 3 { loc(3:14)\n"
	           "  %1 = add %0, %0 : i32 loc(4:5)\n"
	           "  return loc(5:5)\n"
	           "}\n",
	           "print: show_locations puts loc(LINE:COL) at the end of lines");
	sb_free(&sb);
	check_text(print_fn(F), "kernel @loc(%0: i32) num_warps = 4, num_stages = 3 {\n  %1 = add %0, %0 : i32\n  return\n}\n",
	           "print: locations are off by default");
}

/* The printer survives broken IR (it is used in messages about it). */
static void broken(void)
{
	begin("broken");
	Value *n = param("n", T(SK_I32));
	Op *op = emit(OP_ADD, (Value *[]){n, n}, 2, (Type[]){T(SK_I32)}, 1);
	op->operands[1] = NULL;
	Op *c = emit(OP_CMP, (Value *[]){n, n}, 2, (Type[]){T(SK_I1)}, 1);
	c->attr[0] = 99;
	ret();
	check_text(print_fn(F),
	           "kernel @broken(%0: i32) num_warps = 4, num_stages = 3 {\n"
	           "  %1 = add %0, %<null> : i32\n"
	           "  %2 = cmp ? %0, %0 : i1\n"
	           "  return\n"
	           "}\n",
	           "print: a NULL operand and an unknown predicate print as placeholders");
	StrBuf sb = {0};
	ir_print_op(op, 2, &sb, NULL);
	check_text(sb.data, "    %1 = add %0, %<null> : i32\n", "print: ir_print_op indents by level");
	sb_free(&sb);
}

static void names(void)
{
	check(strcmp(cmp_pred_name(CMP_LE), "le") == 0 && strcmp(math_fn_name(MATH_ERF), "erf") == 0 &&
	          strcmp(cache_mod_name(CACHE_WT), "wt") == 0 && strcmp(eviction_name(EVICT_LAST), "last") == 0 &&
	          strcmp(atomic_op_name(ATOM_XCHG), "xchg") == 0 && strcmp(mem_sem_name(SEM_RELEASE), "release") == 0 &&
	          strcmp(mem_scope_name(SCOPE_SYS), "sys") == 0 && strcmp(dot_precision_name(DOT_TF32X3), "tf32x3") == 0 &&
	          strcmp(math_fn_name(-1), "?") == 0 && strcmp(cmp_pred_name(6), "?") == 0,
	      "print: enum names, and ? out of range");
}

/* div_rn and sqrt_rn: a div with {rn}, math sqrt_rn. */
static void rounding(void)
{
	begin("rn");
	Type f32 = T(SK_F32);
	Value *x = param("x", B1(f32, 8));
	Value *y = param("y", B1(f32, 8));
	opa(OP_DIV, x, y, B1(f32, 8), 1);
	opa(OP_DIV, x, y, B1(f32, 8), 0);
	opa(OP_MATH, x, NULL, B1(f32, 8), MATH_SQRT_RN);
	ret();
	check_text(print_fn(F),
	           "kernel @rn(%0: f32[8], %1: f32[8]) num_warps = 4, num_stages = 3 {\n"
	           "  %2 = div %0, %1 {rn} : f32[8]\n"
	           "  %3 = div %0, %1 : f32[8]\n"
	           "  %4 = math sqrt_rn %0 : f32[8]\n"
	           "  return\n"
	           "}\n",
	           "print: div {rn} (div_rn), math sqrt_rn");
	check(ir_verify(F, &(Diag){0}, "test"), "print: div rn and sqrt_rn verify");
}

int main(void)
{
	vector_add();
	regions();
	constants();
	op_lines();
	rounding();
	locations();
	broken();
	names();
	return done();
}
