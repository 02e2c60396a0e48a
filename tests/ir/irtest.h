/* irtest.h: building tile IR by hand for the tests of tests/ir, and a
 * small harness: each case prints "ok   NAME" or "FAIL NAME" (with what
 * differed) and main ends with done(), "N passed, N failed". */
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "lower/lower.h"
#include "pipeline/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
static Arena arena;
static IrFunc *F; /* the function being built */
static Region *R; /* where emit() appends */
static Span here;

static inline bool check(bool ok, const char *name)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", name);
	ok ? passed++ : failed++;
	return ok;
}

/* got == want, or both printed. */
static inline bool check_text(const char *got, const char *want, const char *name)
{
	bool ok = got && strcmp(got, want) == 0;
	if (!check(ok, name))
		printf("--- want\n%s--- got\n%s---\n", want, got ? got : "(null)\n");
	return ok;
}

/* `needle` occurs in got. */
static inline bool check_has(const char *got, const char *needle, const char *name)
{
	bool ok = got && strstr(got, needle);
	if (!check(ok, name))
		printf("--- want a line with\n%s\n--- got\n%s---\n", needle, got ? got : "(null)\n");
	return ok;
}

static inline int done(void)
{
	arena_free(&arena);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}

/* ---- types ---- */

static inline Type T(ScalarKind k) { return type_scalar(k); }
static inline Type P(Type t) { return type_pointer_to(t); }
static inline Type B1(Type e, int n) { return type_block(e, 1, (int32_t[]){n}); }
static inline Type B2(Type e, int m, int n) { return type_block(e, 2, (int32_t[]){m, n}); }

/* ---- building ---- */

enum { MAX_PARAMS = 16 };

static inline IrFunc *begin(const char *name)
{
	F = ir_func_new(&arena, name, here);
	F->params = arena_alloc(&arena, MAX_PARAMS * sizeof *F->params);
	R = &F->body;
	return F;
}

static inline Value *param(const char *name, Type t)
{
	Value *v = ir_region_arg(F, &F->body, t);
	F->params[F->n_params++] = (IrParam){.name = name, .value = v, .type = t};
	return v;
}

static inline void const_param(const char *name, Type t, int64_t i, double f)
{
	F->params[F->n_params++] = (IrParam){.name = name, .is_const = true, .const_ival = i, .const_fval = f, .type = t};
}

static inline Op *emit(OpCode code, Value **ops, int n, const Type *res, int nres)
{
	return ir_append(F, R, code, here, ops, n, res, nres);
}

static inline Value *op0(OpCode code, Type t) { return emit(code, NULL, 0, &t, 1)->results[0]; }
static inline Value *op1(OpCode code, Value *a, Type t) { return emit(code, &a, 1, &t, 1)->results[0]; }
static inline Value *op2(OpCode code, Value *a, Value *b, Type t) { return emit(code, (Value *[]){a, b}, 2, &t, 1)->results[0]; }
static inline Value *op3(OpCode code, Value *a, Value *b, Value *c, Type t)
{
	return emit(code, (Value *[]){a, b, c}, 3, &t, 1)->results[0];
}
static inline Value *opa(OpCode code, Value *a, Value *b, Type t, int64_t attr0)
{
	Op *op = emit(code, (Value *[]){a, b}, !a ? 0 : b ? 2 : 1, &t, 1);
	op->attr[0] = attr0;
	return op->results[0];
}

static inline Value *ci(Type t, int64_t v)
{
	Op *op = emit(OP_CONST, NULL, 0, &t, 1);
	op->ival = v;
	return op->results[0];
}

static inline Value *cf(Type t, double v)
{
	Op *op = emit(OP_CONST, NULL, 0, &t, 1);
	op->fval = v;
	return op->results[0];
}

static inline Value *cmp(CmpPred p, Value *a, Value *b)
{
	Type t = a->type;
	t.scalar = SK_I1;
	t.ptr = 0;
	return opa(OP_CMP, a, b, t, p);
}

static inline void store(Value *p, Value *v) { emit(OP_STORE, (Value *[]){p, v}, 2, NULL, 0); }
static inline void ret(void) { emit(OP_RETURN, NULL, 0, NULL, 0); }
static inline void yield(Value **vs, int n) { emit(OP_YIELD, vs, n, NULL, 0); }

/* sb's text, copied into the test arena (freed at exit: tests are short);
 * sb is emptied. */
static inline char *take_text(StrBuf *sb)
{
	char *s = arena_strndup(&arena, sb->data ? sb->data : "", sb->len);
	sb_free(sb);
	return s;
}

/* Text of the whole function. */
static inline char *print_fn(const IrFunc *f)
{
	StrBuf sb = {0};
	ir_print(f, &sb);
	return take_text(&sb);
}

/* What ir_verify reports ("" when the function is valid). */
static inline char *verify_msg(const IrFunc *f, const char *pass)
{
	Diag d;
	diag_init(&d);
	d.max_errors = 0;
	bool ok = ir_verify(f, &d, pass);
	char *s = arena_strndup(&arena, d.out.data ? d.out.data : "", d.out.len);
	if (ok != (d.out.len == 0))
		s = "(ir_verify's result and its report disagree)";
	diag_free(&d);
	return s;
}
