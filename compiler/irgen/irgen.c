/* irgen.c: from the syntax tree of one kernel to tile IR.
 *
 * One walk does semantic analysis and IR construction together, the way a
 * kernel is specialized: const parameters have values, so constant
 * expressions fold as they are met, `if` on a constant takes one branch,
 * `static_range` unrolls, and each `fn` call is inlined with its arguments'
 * types. Every expression evaluates to a Sym: a compile-time constant, an IR
 * value, a tuple, a type, a function or a module. An error makes a "void"
 * Sym that later operations pass on silently, so one mistake is reported
 * once. */
#include "irgen/irgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	MAX_INLINE_DEPTH = 64,
	MAX_UNROLL = 4096,     /* static_range iterations */
};

typedef enum SymKind {
	S_VOID,   /* the result of an error, or of a call that returns nothing */
	S_VALUE,  /* an IR value */
	S_CONST,  /* a compile-time scalar */
	S_TUPLE,
	S_TYPE,   /* f16, *f32 ... used as a value */
	S_FN,
	S_MODULE,
	S_STRING,
	S_NONE,
} SymKind;

typedef struct Sym Sym;
struct Sym {
	SymKind kind;
	bool weak;   /* S_CONST written without a type (a literal, or folded from literals) */
	Type type;   /* S_VALUE: v->type; S_CONST: its scalar type; S_TYPE: the type */
	int64_t i;   /* S_CONST integer, canonical for its type (unsigned zero-extended) */
	double f;    /* S_CONST float */
	Value *v;
	Sym *items;  /* S_TUPLE */
	int n;
	Node *fn;    /* S_FN */
	Module *mod; /* S_FN: the defining module; S_MODULE */
	const char *str;
	size_t len;
};

typedef struct Binding {
	const char *name;
	Sym sym;
	bool is_var;
	Span span;
} Binding;

typedef struct Scope Scope;
struct Scope {
	Binding *items;
	int len, cap;
	Scope *parent;
	bool fn_boundary; /* the outermost scope of an inlined fn or the kernel */
};

/* A global const being evaluated or evaluated, by declaration. */
typedef struct GlobalConst {
	Node *decl;
	Sym value;
	bool busy, done;
} GlobalConst;

typedef struct Gen {
	Diag *diag;
	Arena *arena;
	IrFunc *f;
	Region *region; /* where new ops go */
	Scope *scope;
	Module *mod;    /* the module whose code is being generated */
	int inline_depth;
	Node *cur_fn;      /* the fn being inlined now, NULL in the kernel's own body */
	int runtime_depth; /* runtime if/for/while around this point, within the current fn */
	bool in_fn;
	bool returned;
	Sym ret;
	GlobalConst *globals;
	int n_globals, cap_globals;
	const char *no_ir; /* set while evaluating what must be constant: why no IR may be made */
} Gen;

static const Sym VOID = {.kind = S_VOID};

/* ---- errors ------------------------------------------------------------- */

#define error(g, sp, ...) diag_error((g)->diag, (sp), __VA_ARGS__)

static const char *tstr(Gen *g, Type t) { return type_str(t, g->arena); }

static const char *sym_desc(Gen *g, Sym s)
{
	switch (s.kind) {
	case S_VOID: return "nothing";
	case S_VALUE: return tstr(g, s.type);
	case S_CONST: return arena_printf(g->arena, "constant %s", tstr(g, s.type));
	case S_TUPLE: return arena_printf(g->arena, "a tuple of %d", s.n);
	case S_TYPE: return arena_printf(g->arena, "the type %s", tstr(g, s.type));
	case S_FN: return arena_printf(g->arena, "the function '%s'", s.fn->name);
	case S_MODULE: return "a module";
	case S_STRING: return "a string";
	case S_NONE: return "None";
	}
	return "?";
}

/* ---- constants -------------------------------------------------------- */

static bool fits(ScalarKind k, __int128 v)
{
	if (k == SK_I1)
		return v == 0 || v == 1;
	int bits = scalar_bits(k);
	if (scalar_is_unsigned(k))
		return v >= 0 && (bits == 64 || v < ((__int128)1 << bits));
	return v >= -((__int128)1 << (bits - 1)) && v < ((__int128)1 << (bits - 1));
}

/* v wrapped to k's width, canonical (sign- or zero-extended). */
static int64_t wrap(ScalarKind k, __int128 v)
{
	int bits = scalar_bits(k);
	uint64_t u = (uint64_t)v;
	if (bits < 64)
		u &= ((uint64_t)1 << bits) - 1;
	if (k == SK_I1)
		return (int64_t)(u & 1);
	if (scalar_is_signed(k) && bits < 64 && (u >> (bits - 1)) & 1)
		u |= ~(((uint64_t)1 << bits) - 1);
	return (int64_t)u;
}

/* The value of an integer constant as a mathematical integer. */
static __int128 int_value(Sym s)
{
	if (s.type.scalar == SK_U64)
		return (__int128)(uint64_t)s.i;
	return s.i;
}

static Sym const_int(ScalarKind k, __int128 v, bool weak)
{
	return (Sym){.kind = S_CONST, .type = type_scalar(k), .i = wrap(k, v), .weak = weak};
}

/* The type of an integer literal: the first of i32, u32, i64, u64 it fits in. */
static ScalarKind literal_int_kind(__int128 v)
{
	if (fits(SK_I32, v))
		return SK_I32;
	if (fits(SK_U32, v))
		return SK_U32;
	if (fits(SK_I64, v))
		return SK_I64;
	return SK_U64;
}

static Sym weak_int(__int128 v) { return const_int(literal_int_kind(v), v, true); }

static double round_float(ScalarKind k, double x);

static Sym const_float(ScalarKind k, double x, bool weak)
{
	return (Sym){.kind = S_CONST, .type = type_scalar(k), .f = weak ? x : round_float(k, x), .weak = weak};
}

static Sym weak_float(double x)
{
	double a = fabs(x);
	bool f32 = a == 0 || isinf(x) || isnan(x) || (a >= 0x1p-126 && a <= 0x1.fffffep127);
	return const_float(f32 ? SK_F32 : SK_F64, x, true);
}

static double const_as_double(Sym s)
{
	if (scalar_is_float((ScalarKind)s.type.scalar))
		return s.f;
	return (double)int_value(s);
}

/* s's value in float kind k, rounded once: an integer straight from its
 * bits (through a double it would round twice: 2^62 + 2^38 + 1 to f32). */
static double const_in_kind(Sym s, ScalarKind k)
{
	if (scalar_is_float((ScalarKind)s.type.scalar))
		return fp_round(k, s.f);
	__int128 v = int_value(s);
	return v < 0 ? fp_from_int(k, (int64_t)v, false) : fp_from_int(k, (int64_t)(uint64_t)v, true);
}

static bool is_const_true(Sym s) { return s.kind == S_CONST && (scalar_is_float(s.type.scalar) ? s.f != 0 : s.i != 0); }

/* ---- scopes -------------------------------------------------------------- */

static Scope *scope_push(Gen *g, bool fn_boundary)
{
	Scope *s = arena_alloc(g->arena, sizeof *s);
	if (!s)
		return g->scope;
	s->parent = g->scope;
	s->fn_boundary = fn_boundary;
	g->scope = s;
	return s;
}

static void scope_pop(Gen *g) { g->scope = g->scope->parent; }

static Binding *bind(Gen *g, const char *name, Sym sym, bool is_var, Span sp)
{
	Scope *s = g->scope;
	for (int i = 0; i < s->len; i++)
		if (strcmp(s->items[i].name, name) == 0) {
			/* a new let of the same name in the same block shadows the old one */
			s->items[i] = (Binding){name, sym, is_var, sp};
			return &s->items[i];
		}
	if (s->len == s->cap) {
		int cap = s->cap ? s->cap * 2 : 8;
		Binding *items = arena_alloc(g->arena, (size_t)cap * sizeof *items);
		if (!items)
			return NULL;
		if (s->len)
			memcpy(items, s->items, (size_t)s->len * sizeof *items);
		s->items = items;
		s->cap = cap;
	}
	s->items[s->len] = (Binding){name, sym, is_var, sp};
	return &s->items[s->len++];
}

/* The binding of a local name, up to the enclosing fn's boundary. */
static Binding *lookup_local(Gen *g, const char *name)
{
	for (Scope *s = g->scope; s; s = s->parent) {
		for (int i = s->len - 1; i >= 0; i--)
			if (strcmp(s->items[i].name, name) == 0)
				return &s->items[i];
		if (s->fn_boundary)
			break;
	}
	return NULL;
}

/* ---- emitting ops ----------------------------------------------------------- */

/* In a constant context (global const, grid clause, default of a const
 * parameter) anything that would make IR is an error instead. */
static bool ir_allowed(Gen *g, Span at)
{
	if (!g->no_ir)
		return true;
	error(g, at, "%s", g->no_ir);
	return false;
}

static Value *emit(Gen *g, OpCode code, Span at, Type rt, Value *a, Value *b, Value *c)
{
	if (!ir_allowed(g, at))
		return NULL;
	Value *ops[3] = {a, b, c};
	int n = c ? 3 : b ? 2 : a ? 1 : 0;
	Op *op = ir_append(g->f, g->region, code, at, ops, n, &rt, 1);
	return op ? op->results[0] : NULL;
}

static Op *emit_op(Gen *g, OpCode code, Span at, Value **operands, int n, const Type *rt, int n_results)
{
	if (!ir_allowed(g, at))
		return NULL;
	return ir_append(g->f, g->region, code, at, operands, n, rt, n_results);
}

static Sym value_sym(Value *v)
{
	if (!v)
		return VOID;
	return (Sym){.kind = S_VALUE, .v = v, .type = v->type};
}

/* An IR constant of type t (scalar or splatted block) with s's value. */
static Value *emit_const(Gen *g, Sym s, Type t, Span at)
{
	if (!ir_allowed(g, at))
		return NULL;
	Op *op = ir_append(g->f, g->region, OP_CONST, at, NULL, 0, &t, 1);
	if (!op)
		return NULL;
	ScalarKind k = (ScalarKind)t.scalar;
	if (scalar_is_float(k))
		op->fval = const_in_kind(s, k);
	else
		op->ival = scalar_is_float((ScalarKind)s.type.scalar) ? wrap(k, (__int128)s.f) : wrap(k, int_value(s));
	return op->results[0];
}

static bool is_valueish(Sym s) { return s.kind == S_VALUE || s.kind == S_CONST; }

/* The type of a value-like Sym (a constant is a scalar). */
static Type sym_type(Sym s) { return s.type; }

/* A constant converted to element type k, checking that it fits. */
static bool const_fits(Gen *g, Sym s, ScalarKind k, Span at)
{
	ScalarKind from = (ScalarKind)s.type.scalar;
	if (scalar_is_float(k) || scalar_is_float(from))
		return true;
	if (k == SK_I1)
		return true;
	if (!fits(k, int_value(s))) {
		error(g, at, "constant %lld does not fit in %s", (long long)int_value(s), scalar_name(k));
		return false;
	}
	return true;
}

static Value *cast_value(Gen *g, Value *v, ScalarKind k, Span at)
{
	if (v->type.scalar == k && v->type.ptr == 0)
		return v;
	Type t = v->type;
	t.scalar = (uint8_t)k;
	t.ptr = 0;
	return emit(g, OP_CAST, at, t, v, NULL, NULL);
}

/* s as an IR value of element type k (shape kept). */
static Value *to_elem(Gen *g, Sym s, ScalarKind k, Span at)
{
	if (s.kind == S_CONST) {
		if (!const_fits(g, s, k, at))
			return NULL;
		return emit_const(g, s, type_scalar(k), at);
	}
	if (s.kind != S_VALUE)
		return NULL;
	return cast_value(g, s.v, k, at);
}

/* The IR value of s, materializing a constant in its own type. */
static Value *materialize(Gen *g, Sym s, Span at)
{
	if (s.kind == S_VALUE)
		return s.v;
	if (s.kind == S_CONST)
		return emit_const(g, s, s.type, at);
	if (s.kind != S_VOID)
		error(g, at, "expected a scalar or block value, found %s", sym_desc(g, s));
	return NULL;
}

/* v broadcast to shape (rank dims): scalars splat, missing leading dims are
 * added, size-1 dims repeat. */
static Value *broadcast_to(Gen *g, Value *v, int rank, const int32_t *shape, Span at)
{
	if (!v)
		return NULL;
	Type want = type_block(v->type, rank, shape);
	if (rank == 0)
		return v;
	if (v->type.rank == 0)
		return emit(g, OP_SPLAT, at, want, v, NULL, NULL);
	while (v && v->type.rank < rank) {
		int32_t sh[BLK_MAX_RANK] = {1};
		for (int i = 0; i < v->type.rank; i++)
			sh[i + 1] = v->type.shape[i];
		Value *e = emit(g, OP_EXPAND_DIMS, at, type_block(v->type, v->type.rank + 1, sh), v, NULL, NULL);
		if (e)
			e->def->attr[0] = 0;
		v = e;
	}
	if (v && !type_eq(v->type, want))
		v = emit(g, OP_BROADCAST, at, want, v, NULL, NULL);
	return v;
}

static bool common_shape(Gen *g, Type a, Type b, int *rank, int32_t *shape, Span at, const char *what)
{
	if (broadcast_shapes(a, b, rank, shape))
		return true;
	error(g, at, "cannot broadcast %s: shapes %s and %s", what, tstr(g, a), tstr(g, b));
	return false;
}

/* ---- element types ------------------------------------------------------ */

/* Rounds x to the nearest value of float type k (ties to even), with the
 * same conversions the interpreter uses. */
static double round_float(ScalarKind k, double x)
{
	return scalar_is_float(k) ? fp_round(k, x) : x;
}

/* ---- operators ------------------------------------------------------------ */

static bool is_cmp(int tok)
{
	return tok == T_EQ || tok == T_NE || tok == T_LT || tok == T_LE || tok == T_GT || tok == T_GE;
}

static CmpPred cmp_pred(int tok)
{
	switch (tok) {
	case T_EQ: return CMP_EQ;
	case T_NE: return CMP_NE;
	case T_LT: return CMP_LT;
	case T_LE: return CMP_LE;
	case T_GT: return CMP_GT;
	default: return CMP_GE;
	}
}

static OpCode arith_code(int tok)
{
	switch (tok) {
	case T_PLUS: return OP_ADD;
	case T_MINUS: return OP_SUB;
	case T_STAR: return OP_MUL;
	case T_SLASH: return OP_DIV;
	case T_PERCENT: return OP_REM;
	case T_AMP: return OP_AND;
	case T_PIPE: return OP_OR;
	case T_CARET: return OP_XOR;
	case T_SHL: return OP_SHL;
	case T_SHR: return OP_SHR;
	default: return OP_COUNT;
	}
}

static bool is_bitwise(int tok) { return tok == T_AMP || tok == T_PIPE || tok == T_CARET || tok == T_SHL || tok == T_SHR; }

/* Folds a binary operator over two constants. */
static Sym fold_binary(Gen *g, int tok, Sym a, Sym b, ScalarKind k, Span at)
{
	bool weak = a.weak && b.weak;
	if (is_cmp(tok)) {
		bool r;
		if (scalar_is_float(k)) {
			/* the operands converted to k first, as at run time (literals exact) */
			double x = weak ? const_as_double(a) : const_in_kind(a, k);
			double y = weak ? const_as_double(b) : const_in_kind(b, k);
			r = tok == T_EQ ? x == y : tok == T_NE ? x != y : tok == T_LT ? x < y : tok == T_LE ? x <= y
			  : tok == T_GT ? x > y : x >= y;
		} else {
			__int128 x = int_value(a), y = int_value(b);
			r = tok == T_EQ ? x == y : tok == T_NE ? x != y : tok == T_LT ? x < y : tok == T_LE ? x <= y
			  : tok == T_GT ? x > y : x >= y;
		}
		return const_int(SK_I1, r, weak);
	}
	if (scalar_is_float(k)) {
		double x = weak ? const_as_double(a) : const_in_kind(a, k);
		double y = weak ? const_as_double(b) : const_in_kind(b, k), r;
		switch (tok) {
		case T_PLUS: r = x + y; break;
		case T_MINUS: r = x - y; break;
		case T_STAR: r = x * y; break;
		case T_SLASH: r = x / y; break;
		case T_PERCENT: r = fmod(x, y); break;
		default:
			error(g, at, "operator '%s' needs integer operands, found %s", token_kind_spelling(tok), scalar_name(k));
			return VOID;
		}
		return weak ? weak_float(r) : const_float(k, r, false);
	}
	__int128 x = int_value(a), y = int_value(b), r;
	int bits = weak ? 64 : scalar_bits(k);
	switch (tok) {
	case T_PLUS: r = x + y; break;
	case T_MINUS: r = x - y; break;
	case T_STAR: r = x * y; break;
	case T_SLASH:
	case T_PERCENT:
		if (y == 0) {
			error(g, at, "division by zero in a constant expression");
			return VOID;
		}
		r = tok == T_SLASH ? x / y : x % y;
		break;
	case T_AMP: r = x & y; break;
	case T_PIPE: r = x | y; break;
	case T_CARET: r = x ^ y; break;
	case T_SHL:
	case T_SHR:
		if (y < 0 || y >= bits) {
			error(g, at, "shift by %lld is out of range for %d-bit values", (long long)y, bits);
			return VOID;
		}
		/* << through unsigned: shifting a negative value is undefined in C */
		r = tok == T_SHL ? (__int128)((unsigned __int128)x << (int)y) : x >> (int)y;
		break;
	default:
		return VOID;
	}
	if (weak) {
		if (!fits(SK_I64, r) && !fits(SK_U64, r)) {
			error(g, at, "constant expression overflows 64 bits");
			return VOID;
		}
		return weak_int(r);
	}
	return const_int(k, r, false);
}

/* a OP b for pointers: ptr + int, int + ptr, ptr - int, comparisons of equal pointers. */
static Sym pointer_arith(Gen *g, int tok, Sym a, Sym b, Span at)
{
	Type ta = sym_type(a), tb = sym_type(b);
	if (is_cmp(tok) && ta.ptr && tb.ptr && ta.ptr == tb.ptr && ta.scalar == tb.scalar) {
		int rank;
		int32_t shape[BLK_MAX_RANK];
		if (!common_shape(g, ta, tb, &rank, shape, at, "the operands"))
			return VOID;
		Value *x = broadcast_to(g, materialize(g, a, at), rank, shape, at);
		Value *y = broadcast_to(g, materialize(g, b, at), rank, shape, at);
		Value *cx = x ? emit(g, OP_PTR_TO_INT, at, type_block(type_scalar(SK_U64), rank, shape), x, NULL, NULL) : NULL;
		Value *cy = y ? emit(g, OP_PTR_TO_INT, at, type_block(type_scalar(SK_U64), rank, shape), y, NULL, NULL) : NULL;
		if (!cx || !cy)
			return VOID;
		Value *r = emit(g, OP_CMP, at, type_block(type_scalar(SK_I1), rank, shape), cx, cy, NULL);
		if (r)
			r->def->attr[0] = cmp_pred(tok);
		return value_sym(r);
	}
	if (tok == T_PLUS && !ta.ptr) { /* int + ptr */
		Sym t = a;
		a = b;
		b = t;
		ta = sym_type(a);
		tb = sym_type(b);
	}
	if ((tok != T_PLUS && tok != T_MINUS) || !ta.ptr || tb.ptr || !scalar_is_int((ScalarKind)tb.scalar) ||
	    tb.scalar == SK_I1) {
		error(g, at, "invalid operands to '%s': %s and %s", token_kind_spelling(tok), sym_desc(g, a), sym_desc(g, b));
		return VOID;
	}
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!common_shape(g, ta, tb, &rank, shape, at, "the pointer and the offset"))
		return VOID;
	Value *off;
	if (b.kind == S_CONST) {
		Sym c = b;
		if (tok == T_MINUS)
			c = const_int((ScalarKind)(c.weak ? literal_int_kind(-int_value(c)) : c.type.scalar), -int_value(c), c.weak);
		off = emit_const(g, c, c.type, at);
	} else {
		off = b.v;
		if (tok == T_MINUS)
			off = emit(g, OP_NEG, at, off->type, off, NULL, NULL);
	}
	/* unsigned offsets narrower than 64 bits are zero-extended: addptr is signed */
	if (off && scalar_is_unsigned((ScalarKind)off->type.scalar) && off->type.scalar != SK_U64)
		off = cast_value(g, off, SK_I64, at);
	Value *p = broadcast_to(g, materialize(g, a, at), rank, shape, at);
	off = broadcast_to(g, off, rank, shape, at);
	if (!p || !off)
		return VOID;
	return value_sym(emit(g, OP_ADDPTR, at, type_block(ta, rank, shape), p, off, NULL));
}

static Sym gen_binary(Gen *g, int tok, Sym a, Sym b, Span at)
{
	if (a.kind == S_VOID || b.kind == S_VOID)
		return VOID;
	if (!is_valueish(a) || !is_valueish(b)) {
		error(g, at, "invalid operands to '%s': %s and %s", token_kind_spelling(tok), sym_desc(g, a), sym_desc(g, b));
		return VOID;
	}
	Type ta = sym_type(a), tb = sym_type(b);
	if (ta.ptr || tb.ptr)
		return pointer_arith(g, tok, a, b, at);
	ScalarKind ka = (ScalarKind)ta.scalar, kb = (ScalarKind)tb.scalar, k;
	bool div_or_mod = tok == T_SLASH || tok == T_PERCENT;
	const char *why;
	if (!promote_arith(ka, a.kind == S_CONST, kb, b.kind == S_CONST, div_or_mod, &k, &why)) {
		error(g, at, "invalid operands to '%s' (%s and %s): %s", token_kind_spelling(tok), sym_desc(g, a),
		      sym_desc(g, b), why);
		return VOID;
	}
	if (is_bitwise(tok) && !scalar_is_int(k)) {
		error(g, at, "operator '%s' needs integer operands, found %s and %s", token_kind_spelling(tok),
		      sym_desc(g, a), sym_desc(g, b));
		return VOID;
	}
	if (a.kind == S_CONST && b.kind == S_CONST)
		return fold_binary(g, tok, a, b, k, at);
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!common_shape(g, ta, tb, &rank, shape, at, "the operands"))
		return VOID;
	Value *x = broadcast_to(g, to_elem(g, a, k, at), rank, shape, at);
	Value *y = broadcast_to(g, to_elem(g, b, k, at), rank, shape, at);
	if (!x || !y)
		return VOID;
	if (is_cmp(tok)) {
		Value *r = emit(g, OP_CMP, at, type_block(type_scalar(SK_I1), rank, shape), x, y, NULL);
		if (r)
			r->def->attr[0] = cmp_pred(tok);
		return value_sym(r);
	}
	return value_sym(emit(g, arith_code(tok), at, x->type, x, y, NULL));
}

/* Scalar condition of if/while/&&/||: an i1, or an integer compared with 0. */
static Sym truth(Gen *g, Sym s, Span at)
{
	if (s.kind == S_VOID)
		return VOID;
	if (!is_valueish(s) || s.type.ptr) {
		error(g, at, "expected a condition, found %s", sym_desc(g, s));
		return VOID;
	}
	if (s.type.scalar == SK_I1)
		return s;
	if (s.kind == S_CONST)
		return const_int(SK_I1, is_const_true(s), s.weak);
	Sym zero = weak_int(0);
	return gen_binary(g, T_NE, s, zero, at);
}

static Sym gen_logical(Gen *g, int tok, Sym a, Sym b, Span at)
{
	a = truth(g, a, at);
	b = truth(g, b, at);
	if (a.kind == S_VOID || b.kind == S_VOID)
		return VOID;
	if (a.type.rank || b.type.rank) {
		error(g, at, "'%s' takes scalar conditions; combine masks with '%s'", token_kind_spelling(tok),
		      tok == T_ANDAND ? "&" : "|");
		return VOID;
	}
	return gen_binary(g, tok == T_ANDAND ? T_AMP : T_PIPE, a, b, at);
}

static Sym gen_unary(Gen *g, int tok, Sym a, Span at)
{
	if (a.kind == S_VOID)
		return VOID;
	if (!is_valueish(a) || a.type.ptr) {
		error(g, at, "invalid operand to unary '%s': %s", token_kind_spelling(tok), sym_desc(g, a));
		return VOID;
	}
	ScalarKind k = (ScalarKind)a.type.scalar;
	switch (tok) {
	case T_PLUS:
		return a;
	case T_MINUS:
		if (a.kind == S_CONST) {
			if (scalar_is_float(k))
				return a.weak ? weak_float(-a.f) : const_float(k, -a.f, false);
			return a.weak ? weak_int(-int_value(a)) : const_int(k, -int_value(a), false);
		}
		return value_sym(emit(g, OP_NEG, at, a.type, a.v, NULL, NULL));
	case T_TILDE:
		if (!scalar_is_int(k)) {
			error(g, at, "'~' needs an integer operand, found %s", sym_desc(g, a));
			return VOID;
		}
		if (a.kind == S_CONST)
			return a.weak ? weak_int(~int_value(a)) : const_int(k, ~int_value(a), false);
		return value_sym(emit(g, OP_NOT, at, a.type, a.v, NULL, NULL));
	case T_BANG:
		if (scalar_is_float(k)) {
			error(g, at, "'!' needs an i1 or integer operand, found %s", sym_desc(g, a));
			return VOID;
		}
		if (k != SK_I1)
			return gen_binary(g, T_EQ, a, weak_int(0), at);
		if (a.kind == S_CONST)
			return const_int(SK_I1, !a.i, a.weak);
		return value_sym(emit(g, OP_NOT, at, a.type, a.v, NULL, NULL));
	}
	return VOID;
}

/* ---- calls ---------------------------------------------------------------- */

enum { MAX_ARGS = 16 };

typedef struct Args {
	Span call;          /* the whole call */
	const char *fname;  /* for messages */
	int n;              /* parameters bound */
	Sym v[MAX_ARGS];    /* by parameter position; S_VOID where not given */
	bool given[MAX_ARGS];
	Span at[MAX_ARGS];  /* where each argument was written (the call when absent) */
} Args;

typedef struct RawArgs {
	Sym pos[MAX_ARGS];
	Span pos_at[MAX_ARGS];
	int n_pos;
	const char *names[MAX_ARGS];
	Sym named[MAX_ARGS];
	Span named_at[MAX_ARGS];
	int n_named;
	Span call;
} RawArgs;

/* Binds raw arguments to parameters spelled "a b c? d?" (a trailing ?
 * marks an optional one). Reports missing, unknown and extra arguments. */
static bool bind_params(Gen *g, const char *fname, const char *spec, const RawArgs *raw, Args *out)
{
	const char *names[MAX_ARGS];
	bool optional[MAX_ARGS];
	int n = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", spec);
	for (char *tok = strtok(buf, " "); tok && n < MAX_ARGS; tok = strtok(NULL, " ")) {
		size_t len = strlen(tok);
		optional[n] = tok[len - 1] == '?';
		if (optional[n])
			tok[len - 1] = '\0';
		names[n++] = arena_strndup(g->arena, tok, strlen(tok));
	}
	*out = (Args){.call = raw->call, .fname = fname, .n = n};
	for (int i = 0; i < n; i++)
		out->at[i] = raw->call;
	if (raw->n_pos > n) {
		error(g, raw->pos_at[n], "too many arguments to '%s' (it takes %d)", fname, n);
		return false;
	}
	for (int i = 0; i < raw->n_pos; i++) {
		out->v[i] = raw->pos[i];
		out->given[i] = true;
		out->at[i] = raw->pos_at[i];
	}
	for (int j = 0; j < raw->n_named; j++) {
		int i = 0;
		while (i < n && (!names[i] || strcmp(names[i], raw->names[j]) != 0))
			i++;
		if (i == n) {
			error(g, raw->named_at[j], "'%s' has no parameter named '%s'", fname, raw->names[j]);
			return false;
		}
		if (out->given[i]) {
			error(g, raw->named_at[j], "argument '%s' of '%s' is given twice", raw->names[j], fname);
			return false;
		}
		out->v[i] = raw->named[j];
		out->given[i] = true;
		out->at[i] = raw->named_at[j];
	}
	for (int i = 0; i < n; i++)
		if (!out->given[i] && !optional[i]) {
			error(g, raw->call, "missing argument '%s' of '%s'", names[i], fname);
			return false;
		}
	for (int i = 0; i < n; i++)
		if (out->given[i] && out->v[i].kind == S_VOID)
			return false; /* an argument had an error, already reported */
	return true;
}

/* Argument i as a compile-time integer. */
static bool arg_int(Gen *g, const Args *a, int i, int64_t *out)
{
	Sym s = a->v[i];
	if (s.kind != S_CONST || scalar_is_float((ScalarKind)s.type.scalar)) {
		error(g, a->at[i], "argument %d of '%s' must be a constant integer, found %s", i + 1, a->fname,
		      sym_desc(g, s));
		return false;
	}
	*out = (int64_t)int_value(s);
	return true;
}

static bool arg_bool(Gen *g, const Args *a, int i, bool dflt, bool *out)
{
	if (!a->given[i]) {
		*out = dflt;
		return true;
	}
	int64_t v;
	if (!arg_int(g, a, i, &v))
		return false;
	*out = v != 0;
	return true;
}

static bool arg_type(Gen *g, const Args *a, int i, Type *out)
{
	if (a->v[i].kind != S_TYPE) {
		error(g, a->at[i], "argument %d of '%s' must be a type (such as f32), found %s", i + 1, a->fname,
		      sym_desc(g, a->v[i]));
		return false;
	}
	*out = a->v[i].type;
	return true;
}

/* A string argument matched against choices "a|b|c": the index, or -1. */
static int arg_choice(Gen *g, const Args *a, int i, const char *choices, int dflt)
{
	if (!a->given[i])
		return dflt;
	Sym s = a->v[i];
	const char *listed = choices[0] == '|' ? choices + 1 : choices; /* the leading empty choice is the default */
	if (s.kind != S_STRING) {
		error(g, a->at[i], "argument %d of '%s' must be a string, one of \"%s\"", i + 1, a->fname, listed);
		return -1;
	}
	int idx = 0;
	for (const char *c = choices;; idx++) {
		const char *bar = strchr(c, '|');
		size_t len = bar ? (size_t)(bar - c) : strlen(c);
		if (len == s.len && strncmp(c, s.str, len) == 0)
			return idx;
		if (!bar)
			break;
		c = bar + 1;
	}
	error(g, a->at[i], "unknown value \"%.*s\" for argument %d of '%s' (expected one of \"%s\")", (int)s.len, s.str,
	      i + 1, a->fname, listed);
	return -1;
}

/* A shape: a tuple (or list) of constant powers of two. */
static bool sym_shape(Gen *g, Sym s, Span at, int *rank, int32_t shape[BLK_MAX_RANK])
{
	Sym one = s;
	const Sym *items = s.kind == S_TUPLE ? s.items : &one;
	int n = s.kind == S_TUPLE ? s.n : 1;
	if (n > BLK_MAX_RANK) {
		error(g, at, "blocks have at most %d dimensions, this shape has %d", BLK_MAX_RANK, n);
		return false;
	}
	int64_t numel = 1;
	for (int i = 0; i < n; i++) {
		if (items[i].kind != S_CONST || scalar_is_float((ScalarKind)items[i].type.scalar)) {
			error(g, at, "a shape must be a tuple of constant integers, found %s", sym_desc(g, items[i]));
			return false;
		}
		int64_t d = (int64_t)int_value(items[i]);
		if (d <= 0 || (d & (d - 1)) || d > BLK_MAX_NUMEL) {
			error(g, at, "block dimensions must be powers of two, found %lld", (long long)d);
			return false;
		}
		numel *= d;
		shape[i] = (int32_t)d;
	}
	if (numel > BLK_MAX_NUMEL) {
		error(g, at, "a block of %lld elements is larger than the limit of %d", (long long)numel, BLK_MAX_NUMEL);
		return false;
	}
	*rank = n;
	return true;
}

static Sym shape_sym(Gen *g, Type t)
{
	Sym s = {.kind = S_TUPLE, .n = t.rank};
	s.items = arena_alloc(g->arena, (size_t)(t.rank ? t.rank : 1) * sizeof *s.items);
	if (!s.items)
		return VOID;
	for (int i = 0; i < t.rank; i++)
		s.items[i] = weak_int(t.shape[i]);
	return s;
}

/* ---- builtins -------------------------------------------------------------- */

typedef Sym (*BuiltinFn)(Gen *g, Args *a, int which);

typedef struct Builtin {
	const char *name;
	const char *params;
	BuiltinFn fn;
	int which; /* a MathFn, AtomicOp ... for handlers shared by several names */
} Builtin;

static Value *value_arg(Gen *g, Args *a, int i)
{
	if (a->v[i].kind == S_VALUE || a->v[i].kind == S_CONST)
		return materialize(g, a->v[i], a->at[i]);
	error(g, a->at[i], "argument %d of '%s' must be a scalar or block, found %s", i + 1, a->fname,
	      sym_desc(g, a->v[i]));
	return NULL;
}

static Sym bi_program_id(Gen *g, Args *a, int which)
{
	int64_t axis;
	if (!arg_int(g, a, 0, &axis))
		return VOID;
	if (axis < 0 || axis > 2) {
		error(g, a->at[0], "grid axis must be 0, 1 or 2, found %lld", (long long)axis);
		return VOID;
	}
	Value *v = emit(g, which ? OP_NUM_PROGRAMS : OP_PROGRAM_ID, a->call, type_scalar(SK_I32), NULL, NULL, NULL);
	if (v)
		v->def->attr[0] = axis;
	return value_sym(v);
}

static Sym bi_arange(Gen *g, Args *a, int which)
{
	(void)which;
	int64_t lo, hi;
	if (!arg_int(g, a, 0, &lo) || !arg_int(g, a, 1, &hi))
		return VOID;
	int64_t n = hi - lo;
	if (n <= 0 || (n & (n - 1)) || n > BLK_MAX_NUMEL) {
		error(g, a->call, "arange(%lld, %lld) has %lld elements: the count must be a power of two up to %d",
		      (long long)lo, (long long)hi, (long long)n, BLK_MAX_NUMEL);
		return VOID;
	}
	if (!fits(SK_I32, lo) || !fits(SK_I32, hi)) {
		error(g, a->call, "arange bounds must fit in i32");
		return VOID;
	}
	int32_t shape[1] = {(int32_t)n};
	Value *v = emit(g, OP_ARANGE, a->call, type_block(type_scalar(SK_I32), 1, shape), NULL, NULL, NULL);
	if (v) {
		v->def->attr[0] = lo;
		v->def->attr[1] = hi;
	}
	return value_sym(v);
}

/* A block of `shape` filled with s (a constant or a runtime scalar) as type t. */
static Sym fill(Gen *g, Sym s, Type t, int rank, const int32_t *shape, Span at)
{
	if (s.kind == S_VOID)
		return VOID;
	if (!is_valueish(s) || s.type.rank) {
		error(g, at, "the fill value must be a scalar, found %s", sym_desc(g, s));
		return VOID;
	}
	Type bt = type_block(t, rank, shape);
	if (s.kind == S_CONST) {
		if (!const_fits(g, s, (ScalarKind)t.scalar, at))
			return VOID;
		return value_sym(emit_const(g, s, bt, at));
	}
	Value *v = t.ptr ? s.v : cast_value(g, s.v, (ScalarKind)t.scalar, at);
	return value_sym(broadcast_to(g, v, rank, shape, at));
}

static Sym bi_full(Gen *g, Args *a, int zeros)
{
	int rank;
	int32_t shape[BLK_MAX_RANK];
	Type t;
	int ti = zeros ? 1 : 2;
	if (!sym_shape(g, a->v[0], a->at[0], &rank, shape) || !arg_type(g, a, ti, &t))
		return VOID;
	return fill(g, zeros ? weak_int(0) : a->v[1], t, rank, shape, a->call);
}

static Sym bi_zeros_like(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x = a->v[0];
	if (!is_valueish(x)) {
		error(g, a->at[0], "zeros_like needs a block, found %s", sym_desc(g, x));
		return VOID;
	}
	return fill(g, weak_int(0), type_elem(x.type), x.type.rank, x.type.shape, a->call);
}

static Sym bi_inf(Gen *g, Args *a, int which)
{
	(void)which;
	Type t;
	if (!arg_type(g, a, 0, &t))
		return VOID;
	if (!scalar_is_float((ScalarKind)t.scalar) || t.ptr || t.scalar == SK_F8E4M3) {
		error(g, a->at[0], "inf needs a float type with an infinity, found %s", tstr(g, t));
		return VOID;
	}
	return const_float((ScalarKind)t.scalar, INFINITY, false);
}

static Sym bi_cdiv(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x = a->v[0], y = a->v[1];
	if (!is_valueish(x) || !is_valueish(y) || !scalar_is_int((ScalarKind)x.type.scalar) ||
	    !scalar_is_int((ScalarKind)y.type.scalar) || x.type.ptr || y.type.ptr) {
		error(g, a->call, "cdiv needs integer operands, found %s and %s", sym_desc(g, x), sym_desc(g, y));
		return VOID;
	}
	Sym s = gen_binary(g, T_PLUS, x, y, a->call);
	s = gen_binary(g, T_MINUS, s, weak_int(1), a->call);
	return gen_binary(g, T_SLASH, s, y, a->call);
}

static Sym bi_next_power_of_2(Gen *g, Args *a, int which)
{
	(void)which;
	int64_t n;
	if (!arg_int(g, a, 0, &n))
		return VOID;
	int64_t p = 1;
	while (p < n && p < ((int64_t)1 << 62))
		p <<= 1;
	return weak_int(p);
}

static Sym bi_range(Gen *g, Args *a, int which)
{
	(void)which;
	error(g, a->call, "'%s' can only be the iterable of a for loop", a->fname);
	return VOID;
}

/* A mask argument as an i1 value, or NULL when absent or constant true. */
static bool mask_arg(Gen *g, Args *a, int i, Value **out)
{
	*out = NULL;
	if (!a->given[i] || a->v[i].kind == S_NONE)
		return true;
	Sym m = truth(g, a->v[i], a->at[i]);
	if (m.kind == S_VOID)
		return false;
	if (m.kind == S_CONST && m.i)
		return true;
	*out = materialize(g, m, a->at[i]);
	return *out != NULL;
}

static bool pointer_arg(Gen *g, Args *a, int i, Value **out)
{
	Sym p = a->v[i];
	if (p.kind != S_VALUE || !p.type.ptr) {
		error(g, a->at[i], "'%s' needs a pointer or block of pointers, found %s", a->fname, sym_desc(g, p));
		return false;
	}
	*out = p.v;
	return true;
}

static const char *const cache_names = "|ca|cg|cs|cv|wb|wt";
static const char *const eviction_names = "evict_normal|evict_first|evict_last";

static Sym bi_load(Gen *g, Args *a, int which)
{
	(void)which;
	Value *ptr, *mask;
	if (!pointer_arg(g, a, 0, &ptr) || !mask_arg(g, a, 1, &mask))
		return VOID;
	int cache = arg_choice(g, a, 3, cache_names, 0), evict = arg_choice(g, a, 4, eviction_names, 0);
	bool vol;
	if (cache < 0 || evict < 0 || !arg_bool(g, a, 5, false, &vol))
		return VOID;
	Sym other = a->given[2] ? a->v[2] : (Sym){.kind = S_NONE};
	if (other.kind != S_NONE && !is_valueish(other)) {
		error(g, a->at[2], "'other' must be a scalar or block, found %s", sym_desc(g, other));
		return VOID;
	}
	int rank = ptr->type.rank;
	int32_t shape[BLK_MAX_RANK];
	memcpy(shape, ptr->type.shape, sizeof shape);
	Type shape_t = ptr->type;
	if (mask && !common_shape(g, shape_t, mask->type, &rank, shape, a->call, "the pointer and the mask"))
		return VOID;
	shape_t = type_block(shape_t, rank, shape);
	if (other.kind != S_NONE && !common_shape(g, shape_t, other.type, &rank, shape, a->call, "the pointer and 'other'"))
		return VOID;
	Type rt = type_block(type_pointee(type_elem(ptr->type)), rank, shape);
	Value *ops[3];
	int n = 0;
	ops[n++] = broadcast_to(g, ptr, rank, shape, a->at[0]);
	int flags = 0;
	if (mask) {
		ops[n++] = broadcast_to(g, mask, rank, shape, a->at[1]);
		flags |= MEMF_MASK;
		if (other.kind != S_NONE) {
			Value *o = rt.ptr ? materialize(g, other, a->at[2]) : to_elem(g, other, (ScalarKind)rt.scalar, a->at[2]);
			if (o && rt.ptr && !(o->type.ptr == rt.ptr && o->type.scalar == rt.scalar)) {
				error(g, a->at[2], "'other' must be a %s, found %s", tstr(g, type_elem(rt)), tstr(g, o->type));
				return VOID;
			}
			ops[n++] = broadcast_to(g, o, rank, shape, a->at[2]);
			flags |= MEMF_OTHER;
		}
	}
	for (int i = 0; i < n; i++)
		if (!ops[i])
			return VOID;
	Op *op = emit_op(g, OP_LOAD, a->call, ops, n, &rt, 1);
	if (!op)
		return VOID;
	op->attr[0] = flags;
	op->attr[1] = cache;
	op->attr[2] = evict;
	op->attr[3] = vol;
	return value_sym(op->results[0]);
}

/* value converted to the pointee type of ptr and broadcast with it. */
static bool store_operands(Gen *g, Args *a, Value **ptr, int vi, Value **val, Value **mask, int mi)
{
	Sym v = a->v[vi];
	if (!is_valueish(v)) {
		error(g, a->at[vi], "the value to store must be a scalar or block, found %s", sym_desc(g, v));
		return false;
	}
	Type elem = type_pointee(type_elem((*ptr)->type));
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!common_shape(g, (*ptr)->type, v.type, &rank, shape, a->call, "the pointer and the value"))
		return false;
	if (*mask) {
		Type t = type_block((*ptr)->type, rank, shape);
		if (!common_shape(g, t, (*mask)->type, &rank, shape, a->call, "the pointer and the mask"))
			return false;
	}
	Value *x;
	if (elem.ptr) {
		x = materialize(g, v, a->at[vi]);
		if (x && (x->type.ptr != elem.ptr || x->type.scalar != elem.scalar)) {
			error(g, a->at[vi], "cannot store %s through %s", tstr(g, x->type), tstr(g, (*ptr)->type));
			return false;
		}
	} else {
		if (v.type.ptr) {
			error(g, a->at[vi], "cannot store %s through %s", sym_desc(g, v), tstr(g, (*ptr)->type));
			return false;
		}
		x = to_elem(g, v, (ScalarKind)elem.scalar, a->at[vi]);
	}
	*val = broadcast_to(g, x, rank, shape, a->at[vi]);
	*ptr = broadcast_to(g, *ptr, rank, shape, a->at[0]);
	if (*mask)
		*mask = broadcast_to(g, *mask, rank, shape, a->at[mi]);
	return *val && *ptr && (!*mask || *mask);
}

static Sym bi_store(Gen *g, Args *a, int which)
{
	(void)which;
	Value *ptr, *mask, *val;
	if (!pointer_arg(g, a, 0, &ptr) || !mask_arg(g, a, 2, &mask))
		return VOID;
	int cache = arg_choice(g, a, 3, cache_names, 0), evict = arg_choice(g, a, 4, eviction_names, 0);
	if (cache < 0 || evict < 0 || !store_operands(g, a, &ptr, 1, &val, &mask, 2))
		return VOID;
	Value *ops[3] = {ptr, val, mask};
	Op *op = emit_op(g, OP_STORE, a->call, ops, mask ? 3 : 2, NULL, 0);
	if (!op)
		return VOID;
	op->attr[0] = mask ? MEMF_MASK : 0;
	op->attr[1] = cache;
	op->attr[2] = evict;
	return (Sym){.kind = S_NONE};
}

static const char *const sem_names = "acq_rel|acquire|release|relaxed";
static const char *const scope_names = "gpu|cta|sys";

static Sym bi_atomic(Gen *g, Args *a, int which)
{
	Value *ptr, *mask, *val;
	if (!pointer_arg(g, a, 0, &ptr) || !mask_arg(g, a, 2, &mask))
		return VOID;
	int sem = arg_choice(g, a, 3, sem_names, 0), scope = arg_choice(g, a, 4, scope_names, 0);
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
	if (!store_operands(g, a, &ptr, 1, &val, &mask, 2))
		return VOID;
	Type rt = type_block(elem, ptr->type.rank, ptr->type.shape);
	Value *ops[3] = {ptr, val, mask};
	Op *op = emit_op(g, OP_ATOMIC_RMW, a->call, ops, mask ? 3 : 2, &rt, 1);
	if (!op)
		return VOID;
	op->attr[0] = which;
	op->attr[1] = sem;
	op->attr[2] = scope;
	op->attr[3] = mask ? MEMF_MASK : 0;
	return value_sym(op->results[0]);
}

static Sym bi_atomic_cas(Gen *g, Args *a, int which)
{
	(void)which;
	Value *ptr, *no_mask = NULL, *cmp, *val;
	if (!pointer_arg(g, a, 0, &ptr))
		return VOID;
	int sem = arg_choice(g, a, 3, sem_names, 0), scope = arg_choice(g, a, 4, scope_names, 0);
	if (sem < 0 || scope < 0)
		return VOID;
	Type elem = type_pointee(type_elem(ptr->type));
	if (elem.ptr || !scalar_is_int((ScalarKind)elem.scalar) || scalar_bits((ScalarKind)elem.scalar) < 16) {
		error(g, a->at[0], "atomic_cas needs pointers to 16-, 32- or 64-bit integers, found %s", tstr(g, ptr->type));
		return VOID;
	}
	Value *p2 = ptr;
	if (!store_operands(g, a, &ptr, 1, &cmp, &no_mask, 0) || !store_operands(g, a, &p2, 2, &val, &no_mask, 0))
		return VOID;
	if (!type_eq(cmp->type, val->type) || !type_eq(ptr->type, p2->type)) {
		error(g, a->call, "atomic_cas: the pointer, 'cmp' and 'val' must have one shape");
		return VOID;
	}
	Type rt = type_block(elem, ptr->type.rank, ptr->type.shape);
	Value *ops[3] = {ptr, cmp, val};
	Op *op = emit_op(g, OP_ATOMIC_CAS, a->call, ops, 3, &rt, 1);
	if (!op)
		return VOID;
	op->attr[1] = sem;
	op->attr[2] = scope;
	return value_sym(op->results[0]);
}

static Sym bi_where(Gen *g, Args *a, int which)
{
	(void)which;
	Sym c = truth(g, a->v[0], a->at[0]), x = a->v[1], y = a->v[2];
	if (c.kind == S_VOID || !is_valueish(x) || !is_valueish(y)) {
		if (c.kind != S_VOID)
			error(g, a->call, "where needs values, found %s and %s", sym_desc(g, x), sym_desc(g, y));
		return VOID;
	}
	bool ptrs = x.type.ptr || y.type.ptr;
	ScalarKind k = (ScalarKind)x.type.scalar;
	if (ptrs) {
		if (x.type.ptr != y.type.ptr || x.type.scalar != y.type.scalar) {
			error(g, a->call, "where: %s and %s differ", sym_desc(g, x), sym_desc(g, y));
			return VOID;
		}
	} else {
		const char *why;
		if (!promote_arith((ScalarKind)x.type.scalar, x.kind == S_CONST, (ScalarKind)y.type.scalar,
		                   y.kind == S_CONST, false, &k, &why)) {
			error(g, a->call, "where: %s", why);
			return VOID;
		}
	}
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!common_shape(g, x.type, y.type, &rank, shape, a->call, "the operands of where"))
		return VOID;
	Type xy = type_block(x.type, rank, shape);
	if (!common_shape(g, xy, c.type, &rank, shape, a->call, "the condition and the operands of where"))
		return VOID;
	if (c.kind == S_CONST && x.kind == S_CONST && y.kind == S_CONST && !ptrs) {
		Sym r = c.i ? x : y;
		return r.weak ? r : (scalar_is_float(k) ? const_float(k, const_in_kind(r, k), false)
		                                        : const_int(k, int_value(r), false));
	}
	Value *vx = broadcast_to(g, ptrs ? materialize(g, x, a->at[1]) : to_elem(g, x, k, a->at[1]), rank, shape, a->at[1]);
	Value *vy = broadcast_to(g, ptrs ? materialize(g, y, a->at[2]) : to_elem(g, y, k, a->at[2]), rank, shape, a->at[2]);
	Value *vc = broadcast_to(g, materialize(g, c, a->at[0]), rank, shape, a->at[0]);
	if (!vx || !vy || !vc)
		return VOID;
	return value_sym(emit(g, OP_SELECT, a->call, vx->type, vc, vx, vy));
}

/* A float operand for math: weak int constants become floats; other
 * integers are an error. */
static bool float_operand(Gen *g, Args *a, int i, Sym *out)
{
	Sym x = a->v[i];
	if (!is_valueish(x) || x.type.ptr) {
		error(g, a->at[i], "'%s' needs a float operand, found %s", a->fname, sym_desc(g, x));
		return false;
	}
	if (scalar_is_float((ScalarKind)x.type.scalar)) {
		*out = x;
		return true;
	}
	if (x.kind == S_CONST) {
		*out = weak_float(const_as_double(x));
		return true;
	}
	error(g, a->at[i], "'%s' needs a float operand, found %s; convert with .to(f32)", a->fname, sym_desc(g, x));
	return false;
}

static double math_eval(MathFn fn, double x)
{
	switch (fn) {
	case MATH_EXP: return exp(x);
	case MATH_EXP2: return exp2(x);
	case MATH_LOG: return log(x);
	case MATH_LOG2: return log2(x);
	case MATH_SQRT: return sqrt(x);
	case MATH_RSQRT: return 1 / sqrt(x);
	case MATH_SIN: return sin(x);
	case MATH_COS: return cos(x);
	case MATH_TANH: return tanh(x);
	case MATH_ERF: return erf(x);
	case MATH_FLOOR: return floor(x);
	case MATH_CEIL: return ceil(x);
	default: return NAN;
	}
}

static Sym math1(Gen *g, MathFn fn, Sym x, Span at)
{
	if (x.kind == S_CONST)
		return x.weak ? weak_float(math_eval(fn, x.f)) : const_float((ScalarKind)x.type.scalar, math_eval(fn, x.f), false);
	Value *v = emit(g, OP_MATH, at, x.type, x.v, NULL, NULL);
	if (v)
		v->def->attr[0] = fn;
	return value_sym(v);
}

static Sym bi_math(Gen *g, Args *a, int fn)
{
	Sym x;
	if (!float_operand(g, a, 0, &x))
		return VOID;
	return math1(g, (MathFn)fn, x, a->call);
}

static Sym convert(Gen *g, Sym x, Type t, bool bitcast, Span at);

/* 1 / (1 + exp(-x)) in x's type; f16, bf16 and fp8 compute in f32 and round
 * once, like the other math functions (in their own type the steps would
 * round three times, and '/' would make the result f32). */
static Sym bi_sigmoid(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x;
	if (!float_operand(g, a, 0, &x))
		return VOID;
	ScalarKind k = (ScalarKind)x.type.scalar;
	bool narrow = !x.weak && k != SK_F32 && k != SK_F64;
	if (narrow)
		x = convert(g, x, type_scalar(SK_F32), false, a->call);
	Sym e = math1(g, MATH_EXP, gen_unary(g, T_MINUS, x, a->call), a->call);
	Sym r = gen_binary(g, T_SLASH, weak_float(1.0), gen_binary(g, T_PLUS, weak_float(1.0), e, a->call), a->call);
	return narrow ? convert(g, r, type_scalar(k), false, a->call) : r;
}

static Sym bi_abs(Gen *g, Args *a, int which)
{
	(void)which;
	Sym x = a->v[0];
	if (!is_valueish(x) || x.type.ptr) {
		error(g, a->at[0], "abs needs a number, found %s", sym_desc(g, x));
		return VOID;
	}
	if (x.kind == S_CONST) {
		if (scalar_is_float((ScalarKind)x.type.scalar))
			return x.weak ? weak_float(fabs(x.f)) : const_float((ScalarKind)x.type.scalar, fabs(x.f), false);
		__int128 v = int_value(x);
		return x.weak ? weak_int(v < 0 ? -v : v) : const_int((ScalarKind)x.type.scalar, v < 0 ? -v : v, false);
	}
	if (scalar_is_unsigned((ScalarKind)x.type.scalar) || x.type.scalar == SK_I1)
		return x;
	return value_sym(emit(g, OP_ABS, a->call, x.type, x.v, NULL, NULL));
}

/* Element-wise op over n operands promoted together (maximum, fma, umulhi). */
static Sym elementwise(Gen *g, Args *a, int n, OpCode code, bool floats_only, bool ints_only)
{
	ScalarKind k = SK_I1;
	bool any_runtime = false, first = true, k_lit = true;
	for (int i = 0; i < n; i++) {
		Sym x = a->v[i];
		if (!is_valueish(x) || x.type.ptr) {
			error(g, a->at[i], "'%s' needs numbers, found %s", a->fname, sym_desc(g, x));
			return VOID;
		}
		any_runtime |= x.kind == S_VALUE;
		if (first) {
			k = (ScalarKind)x.type.scalar;
			k_lit = x.kind == S_CONST;
			first = false;
			continue;
		}
		const char *why;
		if (!promote_arith(k, k_lit, (ScalarKind)x.type.scalar, x.kind == S_CONST, false, &k, &why)) {
			error(g, a->call, "'%s': %s", a->fname, why);
			return VOID;
		}
		k_lit = k_lit && x.kind == S_CONST;
	}
	if ((floats_only && !scalar_is_float(k)) || (ints_only && !scalar_is_int(k))) {
		error(g, a->call, "'%s' needs %s operands, found %s", a->fname, floats_only ? "float" : "integer",
		      scalar_name(k));
		return VOID;
	}
	int rank = 0;
	int32_t shape[BLK_MAX_RANK] = {0};
	Type acc = type_scalar(k);
	for (int i = 0; i < n; i++) {
		if (!common_shape(g, acc, a->v[i].type, &rank, shape, a->call, "the operands"))
			return VOID;
		acc = type_block(acc, rank, shape);
	}
	if (!any_runtime && (code == OP_MAX || code == OP_MIN)) {
		if (scalar_is_float(k)) {
			double x = k_lit ? const_as_double(a->v[0]) : const_in_kind(a->v[0], k);
			double y = k_lit ? const_as_double(a->v[1]) : const_in_kind(a->v[1], k);
			double v = code == OP_MAX ? fmax(x, y) : fmin(x, y);
			return k_lit ? weak_float(v) : const_float(k, v, false);
		}
		/* integers compare exactly (as doubles, 2^60 and 2^60 + 1 would tie),
		 * converted to k as at run time */
		__int128 x = int_value(a->v[0]), y = int_value(a->v[1]);
		if (!k_lit) {
			x = int_value(const_int(k, x, false));
			y = int_value(const_int(k, y, false));
		}
		Sym r = (code == OP_MAX ? x >= y : x <= y) ? a->v[0] : a->v[1];
		return k_lit ? r : const_int(k, int_value(r), false);
	}
	Value *ops[3];
	for (int i = 0; i < n; i++)
		if (!(ops[i] = broadcast_to(g, to_elem(g, a->v[i], k, a->at[i]), rank, shape, a->at[i])))
			return VOID;
	Op *op = emit_op(g, code, a->call, ops, n, &ops[0]->type, 1);
	return op ? value_sym(op->results[0]) : VOID;
}

static Sym bi_minmax(Gen *g, Args *a, int code)
{
	bool nan;
	if (!arg_bool(g, a, 2, false, &nan))
		return VOID;
	Sym r = elementwise(g, a, 2, (OpCode)code, false, false);
	if (r.kind == S_VALUE && r.v->def && r.v->def->code == (OpCode)code)
		r.v->def->attr[0] = nan;
	return r;
}

static Sym bi_clamp(Gen *g, Args *a, int which)
{
	(void)which;
	Args lo = *a;
	lo.fname = "clamp";
	lo.v[2] = (Sym){.kind = S_CONST, .type = type_scalar(SK_I1)}; /* propagate_nan = false */
	lo.given[2] = false;
	Sym r = bi_minmax(g, &lo, OP_MAX);
	if (r.kind == S_VOID)
		return VOID;
	Args hi = lo;
	hi.v[0] = r;
	hi.v[1] = a->v[2];
	hi.at[1] = a->at[2];
	return bi_minmax(g, &hi, OP_MIN);
}

static Sym bi_fma(Gen *g, Args *a, int which)
{
	(void)which;
	return elementwise(g, a, 3, OP_FMA, true, false);
}

static Sym bi_umulhi(Gen *g, Args *a, int which)
{
	(void)which;
	return elementwise(g, a, 2, OP_UMULHI, false, true);
}

static Sym convert(Gen *g, Sym x, Type t, bool bitcast, Span at)
{
	if (x.kind == S_VOID)
		return VOID;
	if (!is_valueish(x)) {
		error(g, at, "cannot convert %s", sym_desc(g, x));
		return VOID;
	}
	ScalarKind to = (ScalarKind)t.scalar, from = (ScalarKind)x.type.scalar;
	if (t.rank) {
		error(g, at, "convert to an element type, not %s", tstr(g, t));
		return VOID;
	}
	if (bitcast) {
		int wf = x.type.ptr ? 64 : scalar_bits(from), wt = t.ptr ? 64 : scalar_bits(to);
		if (wf != wt) {
			error(g, at, "bitcast needs types of one width: %s is %d bits, %s is %d", sym_desc(g, x), wf,
			      tstr(g, t), wt);
			return VOID;
		}
		Value *v = materialize(g, x, at);
		return v ? value_sym(emit(g, OP_BITCAST, at, type_block(t, v->type.rank, v->type.shape), v, NULL, NULL)) : VOID;
	}
	if (t.ptr || x.type.ptr) {
		if (x.type.ptr && !t.ptr && (to == SK_I64 || to == SK_U64)) {
			Value *v = materialize(g, x, at);
			return v ? value_sym(emit(g, OP_PTR_TO_INT, at, type_block(t, v->type.rank, v->type.shape), v, NULL, NULL))
			         : VOID;
		}
		if (t.ptr && x.type.ptr)
			return value_sym(emit(g, OP_BITCAST, at, type_block(t, x.type.rank, x.type.shape), x.v, NULL, NULL));
		error(g, at, "cannot convert %s to %s", sym_desc(g, x), tstr(g, t));
		return VOID;
	}
	if (x.kind == S_CONST) {
		if (scalar_is_float(to))
			return const_float(to, const_in_kind(x, to), false);
		if (to == SK_I1)
			return const_int(SK_I1, is_const_true(x), false);
		if (scalar_is_float(from)) {
			if (isnan(x.f) || !fits(to, (__int128)x.f)) {
				error(g, at, "%g does not fit in %s", x.f, scalar_name(to));
				return VOID;
			}
			return const_int(to, (__int128)x.f, false);
		}
		return const_int(to, int_value(x), false);
	}
	if (to == SK_I1 && from != SK_I1)
		return gen_binary(g, T_NE, x, weak_int(0), at);
	return value_sym(cast_value(g, x.v, to, at));
}

static Sym bi_to(Gen *g, Args *a, int which)
{
	Type t;
	bool bc = which;
	if (!arg_type(g, a, 1, &t) || (!which && !arg_bool(g, a, 2, false, &bc)))
		return VOID;
	return convert(g, a->v[0], t, bc, a->call);
}

static Value *block_arg(Gen *g, Args *a, int i)
{
	Sym x = a->v[i];
	if (x.kind != S_VALUE || x.type.rank == 0) {
		if (x.kind != S_VOID)
			error(g, a->at[i], "'%s' needs a block, found %s", a->fname, sym_desc(g, x));
		return NULL;
	}
	return x.v;
}

static bool axis_arg(Gen *g, Args *a, int i, int rank, int *axis)
{
	int64_t v;
	if (!arg_int(g, a, i, &v))
		return false;
	if (v < 0)
		v += rank;
	if (v < 0 || v >= rank) {
		error(g, a->at[i], "axis %lld is out of range for a block of rank %d", (long long)int_value(a->v[i]), rank);
		return false;
	}
	*axis = (int)v;
	return true;
}

/* Combine kinds of built-in reductions and scans. */
enum { COMBINE_ADD, COMBINE_MUL, COMBINE_MAX, COMBINE_MIN, COMBINE_ARGMAX, COMBINE_ARGMIN, COMBINE_FN };

static Sym call_fn(Gen *g, Node *fn, Module *mod, RawArgs *raw);

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
		out[0] = emit(g, kind == COMBINE_ADD ? OP_ADD : OP_MUL, at, t, args[0], args[1], NULL);
		break;
	case COMBINE_MAX:
	case COMBINE_MIN:
		out[0] = emit(g, kind == COMBINE_MAX ? OP_MAX : OP_MIN, at, t, args[0], args[1], NULL);
		break;
	case COMBINE_ARGMAX:
	case COMBINE_ARGMIN: {
		/* take b when it is better, or equal with a smaller index */
		Type i1 = type_scalar(SK_I1);
		Value *better = emit(g, OP_CMP, at, i1, args[2], args[0], NULL);
		Value *equal = emit(g, OP_CMP, at, i1, args[2], args[0], NULL);
		Value *earlier = emit(g, OP_CMP, at, i1, args[3], args[1], NULL);
		if (!better || !equal || !earlier)
			break;
		better->def->attr[0] = kind == COMBINE_ARGMAX ? CMP_GT : CMP_LT;
		equal->def->attr[0] = CMP_EQ;
		earlier->def->attr[0] = CMP_LT;
		Value *tie = emit(g, OP_AND, at, i1, equal, earlier, NULL);
		Value *take = tie ? emit(g, OP_OR, at, i1, better, tie, NULL) : NULL;
		out[0] = take ? emit(g, OP_SELECT, at, t, take, args[2], args[0]) : NULL;
		out[1] = take ? emit(g, OP_SELECT, at, args[1]->type, take, args[3], args[1]) : NULL;
		break;
	}
	case COMBINE_FN: {
		RawArgs raw = {.call = at, .n_pos = 2 * n};
		for (int i = 0; i < 2 * n; i++) {
			raw.pos[i] = value_sym(args[i]);
			raw.pos_at[i] = at;
		}
		Sym res = call_fn(g, fn.fn, fn.mod, &raw);
		const Sym *items = res.kind == S_TUPLE ? res.items : &res;
		int m = res.kind == S_TUPLE ? res.n : 1;
		if (res.kind == S_VOID) {
			ok = false;
			break;
		}
		if (m != n) {
			error(g, at, "the combine function '%s' must return %d value%s, it returns %s", fn.fn->name, n,
			      n == 1 ? "" : "s", sym_desc(g, res));
			ok = false;
			break;
		}
		for (int i = 0; i < n; i++) {
			Sym it = items[i];
			if (!is_valueish(it) || it.type.rank) {
				error(g, at, "the combine function '%s' must return scalars, found %s", fn.fn->name, sym_desc(g, it));
				ok = false;
				break;
			}
			out[i] = to_elem(g, it, (ScalarKind)args[i]->type.scalar, at);
		}
		break;
	}
	}
	int results = kind == COMBINE_ARGMAX || kind == COMBINE_ARGMIN ? 2 : n;
	for (int i = 0; ok && i < results; i++)
		ok = out[i] != NULL;
	if (ok)
		ok = emit_op(g, OP_YIELD, at, out, results, NULL, 0) != NULL;
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
	Op *op = emit_op(g, code, at, in, n, rts, n);
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
			Value *e = emit(g, OP_EXPAND_DIMS, at, type_block(v->type, in[i]->type.rank, shape), v, NULL, NULL);
			if (e)
				e->def->attr[0] = axis;
			v = e;
		}
		out.items[i] = value_sym(v);
	}
	return n == 1 ? out.items[0] : out;
}

/* x flattened to one dimension (for axis = None). */
static Value *flatten(Gen *g, Value *x, Span at)
{
	if (x->type.rank == 1)
		return x;
	int32_t n = (int32_t)type_numel(x->type);
	return emit(g, OP_RESHAPE, at, type_block(x->type, 1, &n), x, NULL, NULL);
}

/* The i32 index of each element along axis, broadcast to shape t. */
static Value *axis_index(Gen *g, Type t, int axis, Span at)
{
	int32_t n = t.shape[axis];
	Value *r = emit(g, OP_ARANGE, at, type_block(type_scalar(SK_I32), 1, &n), NULL, NULL, NULL);
	if (!r)
		return NULL;
	r->def->attr[0] = 0;
	r->def->attr[1] = n;
	int32_t shape[BLK_MAX_RANK];
	for (int d = 0; d < t.rank; d++)
		shape[d] = d == axis ? n : 1;
	if (t.rank > 1)
		r = emit(g, OP_RESHAPE, at, type_block(r->type, t.rank, shape), r, NULL, NULL);
	return r ? broadcast_to(g, r, t.rank, t.shape, at) : NULL;
}

/* sum max min argmax argmin: (x, axis = None, keep_dims = false[, dtype]) */
static Sym bi_reduction(Gen *g, Args *a, int kind)
{
	Value *x = block_arg(g, a, 0);
	bool keep;
	if (!x || !arg_bool(g, a, 2, false, &keep))
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
	} else if (!axis_arg(g, a, 1, x->type.rank, &axis)) {
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
			if (!arg_type(g, a, 3, &dt))
				return VOID;
			acc = (ScalarKind)dt.scalar;
			k = acc;
		} else if (scalar_is_int(k) && scalar_bits(k) < 32) {
			acc = k = scalar_is_unsigned(k) ? SK_U32 : SK_I32;
		} else if (k == SK_F16 || k == SK_BF16 || k == SK_F8E4M3 || k == SK_F8E5M2) {
			acc = SK_F32;
		}
		x = cast_value(g, x, acc, a->call);
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
		r = value_sym(cast_value(g, r.v, k, a->call));
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
			error(g, a->at[i], "'%s' needs blocks of one shape, found %s", a->fname, sym_desc(g, items[j]));
			return false;
		}
		in[j] = items[j].v;
	}
	return true;
}

static bool fn_arg(Gen *g, Args *a, int i, Sym *fn)
{
	if (a->v[i].kind != S_FN) {
		error(g, a->at[i], "argument %d of '%s' must be a fn, found %s", i + 1, a->fname, sym_desc(g, a->v[i]));
		return false;
	}
	*fn = a->v[i];
	return true;
}

/* reduce(x, axis, combine, keep_dims = false) */
static Sym bi_reduce(Gen *g, Args *a, int which)
{
	(void)which;
	Value *in[MAX_ARGS];
	int n, axis;
	Sym fn;
	bool keep;
	if (!blocks_of(g, a, 0, in, &n) || !fn_arg(g, a, 2, &fn) || !arg_bool(g, a, 3, false, &keep))
		return VOID;
	if (a->v[1].kind == S_NONE) {
		for (int i = 0; i < n; i++)
			if (!(in[i] = flatten(g, in[i], a->call)))
				return VOID;
		axis = 0;
		keep = false;
	} else if (!axis_arg(g, a, 1, in[0]->type.rank, &axis)) {
		return VOID;
	}
	return reduce_blocks(g, OP_REDUCE, in, n, axis, keep, false, COMBINE_FN, fn, a->call);
}

/* cumsum/cumprod(x, axis = 0, reverse = false); associative_scan(x, axis, combine, reverse = false) */
static Sym bi_scan(Gen *g, Args *a, int kind)
{
	Value *in[MAX_ARGS];
	int n = 1, axis = 0;
	bool reverse;
	Sym fn = VOID;
	int rev_i = kind == COMBINE_FN ? 3 : 2;
	if (kind == COMBINE_FN) {
		if (!blocks_of(g, a, 0, in, &n) || !fn_arg(g, a, 2, &fn))
			return VOID;
	} else if (!(in[0] = block_arg(g, a, 0))) {
		return VOID;
	}
	if (!arg_bool(g, a, rev_i, false, &reverse))
		return VOID;
	if (a->given[1] && !axis_arg(g, a, 1, in[0]->type.rank, &axis))
		return VOID;
	if (kind == COMBINE_ADD) {
		ScalarKind k = (ScalarKind)in[0]->type.scalar;
		if (scalar_is_int(k) && scalar_bits(k) < 32)
			in[0] = cast_value(g, in[0], scalar_is_unsigned(k) ? SK_U32 : SK_I32, a->call);
	}
	return reduce_blocks(g, OP_SCAN, in, n, axis, false, reverse, kind, fn, a->call);
}

static Sym bi_dot(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = block_arg(g, a, 0), *y = block_arg(g, a, 1);
	if (!x || !y)
		return VOID;
	if (x->type.rank != 2 || y->type.rank != 2 || x->type.shape[1] != y->type.shape[0]) {
		error(g, a->call, "dot needs blocks of shapes (M, K) and (K, N), found %s and %s", tstr(g, x->type),
		      tstr(g, y->type));
		return VOID;
	}
	int32_t M = x->type.shape[0], K = x->type.shape[1], N = y->type.shape[1];
	if (M < 16 || N < 16 || K < 16) {
		error(g, a->call, "dot needs M, N and K of at least 16, found M = %d, N = %d, K = %d", M, N, K);
		return VOID;
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
	int prec = arg_choice(g, a, 3, "tf32|tf32x3|ieee", DOT_TF32);
	if (prec < 0)
		return VOID;
	ScalarKind acc_k = kx == SK_I8 ? SK_I32 : SK_F32;
	if (a->given[4] && a->v[4].kind != S_NONE) {
		Type t;
		if (!arg_type(g, a, 4, &t))
			return VOID;
		acc_k = (ScalarKind)t.scalar;
	}
	int32_t shape[2] = {M, N};
	Value *acc;
	if (a->given[2] && a->v[2].kind != S_NONE) {
		acc = value_arg(g, a, 2);
		if (!acc)
			return VOID;
		if (acc->type.rank != 2 || acc->type.shape[0] != M || acc->type.shape[1] != N || acc->type.ptr) {
			error(g, a->at[2], "the accumulator must be a (%d, %d) block, found %s", M, N, tstr(g, acc->type));
			return VOID;
		}
	} else {
		acc = emit_const(g, weak_int(0), type_block(type_scalar(acc_k), 2, shape), a->call);
	}
	if (!acc)
		return VOID;
	Value *r = emit(g, OP_DOT, a->call, acc->type, x, y, acc);
	if (r)
		r->def->attr[0] = kx == SK_F32 ? prec : DOT_IEEE;
	return value_sym(r);
}

static Sym bi_reshape(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = value_arg(g, a, 0);
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!x || !sym_shape(g, a->v[1], a->at[1], &rank, shape))
		return VOID;
	Type t = type_block(x->type, rank, shape);
	if (type_numel(t) != type_numel(x->type)) {
		error(g, a->call, "cannot reshape %s (%lld elements) to %s", tstr(g, x->type), (long long)type_numel(x->type),
		      tstr(g, t));
		return VOID;
	}
	if (type_eq(t, x->type))
		return value_sym(x);
	return value_sym(rank == 0 ? NULL : emit(g, OP_RESHAPE, a->call, t, x, NULL, NULL));
}

static Sym bi_trans(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = block_arg(g, a, 0);
	if (!x)
		return VOID;
	int rank = x->type.rank;
	int64_t perm[BLK_MAX_RANK];
	for (int i = 0; i < rank; i++)
		perm[i] = rank - 1 - i;
	if (a->given[1]) {
		Sym p = a->v[1];
		if (p.kind != S_TUPLE || p.n != rank) {
			error(g, a->at[1], "trans needs a permutation of %d axes", rank);
			return VOID;
		}
		bool seen[BLK_MAX_RANK] = {0};
		for (int i = 0; i < rank; i++) {
			if (p.items[i].kind != S_CONST || int_value(p.items[i]) < 0 || int_value(p.items[i]) >= rank ||
			    seen[(int)int_value(p.items[i])]) {
				error(g, a->at[1], "trans needs a permutation of 0..%d", rank - 1);
				return VOID;
			}
			perm[i] = (int64_t)int_value(p.items[i]);
			seen[perm[i]] = true;
		}
	} else if (rank != 2) {
		error(g, a->at[0], "trans without a permutation needs a 2-D block, found %s", tstr(g, x->type));
		return VOID;
	}
	int32_t shape[BLK_MAX_RANK];
	for (int i = 0; i < rank; i++)
		shape[i] = x->type.shape[perm[i]];
	Value *r = emit(g, OP_TRANS, a->call, type_block(x->type, rank, shape), x, NULL, NULL);
	if (r)
		memcpy(r->def->attr, perm, sizeof perm);
	return value_sym(r);
}

static Sym bi_expand_dims(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = value_arg(g, a, 0);
	int64_t axis;
	if (!x || !arg_int(g, a, 1, &axis))
		return VOID;
	int rank = x->type.rank;
	if (axis < 0)
		axis += rank + 1;
	if (axis < 0 || axis > rank || rank >= BLK_MAX_RANK) {
		error(g, a->at[1], "cannot insert an axis at %lld into %s", (long long)int_value(a->v[1]), tstr(g, x->type));
		return VOID;
	}
	int32_t shape[BLK_MAX_RANK] = {0};
	for (int d = 0, s = 0; d <= rank; d++)
		shape[d] = d == axis ? 1 : x->type.shape[s++];
	Value *r = emit(g, rank ? OP_EXPAND_DIMS : OP_SPLAT, a->call, type_block(x->type, rank + 1, shape), x, NULL, NULL);
	if (r)
		r->def->attr[0] = axis;
	return value_sym(r);
}

static Sym bi_broadcast_to(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = value_arg(g, a, 0);
	int rank, r2;
	int32_t shape[BLK_MAX_RANK], check[BLK_MAX_RANK];
	if (!x || !sym_shape(g, a->v[1], a->at[1], &rank, shape))
		return VOID;
	Type want = type_block(x->type, rank, shape);
	if (!broadcast_shapes(x->type, want, &r2, check) || r2 != rank || memcmp(check, shape, sizeof(int32_t) * rank)) {
		error(g, a->call, "cannot broadcast %s to %s", tstr(g, x->type), tstr(g, want));
		return VOID;
	}
	return value_sym(broadcast_to(g, x, rank, shape, a->call));
}

static Sym bi_join_cat(Gen *g, Args *a, int join)
{
	Value *x = value_arg(g, a, 0), *y = value_arg(g, a, 1);
	if (!x || !y)
		return VOID;
	if (!type_eq(x->type, y->type)) {
		error(g, a->call, "'%s' needs two blocks of one type and shape, found %s and %s", a->fname, tstr(g, x->type),
		      tstr(g, y->type));
		return VOID;
	}
	Type t = x->type;
	int axis = 0;
	if (join) {
		if (t.rank >= BLK_MAX_RANK) {
			error(g, a->call, "join would make more than %d dimensions", BLK_MAX_RANK);
			return VOID;
		}
		t.shape[t.rank++] = 2;
	} else {
		if (t.rank == 0) {
			error(g, a->call, "cat needs blocks, found scalars");
			return VOID;
		}
		if (a->given[2] && !axis_arg(g, a, 2, t.rank, &axis))
			return VOID;
		t.shape[axis] *= 2;
	}
	if (type_numel(t) > BLK_MAX_NUMEL) {
		error(g, a->call, "the result of '%s' is larger than %d elements", a->fname, BLK_MAX_NUMEL);
		return VOID;
	}
	if (!join && axis != 0) {
		/* the IR's cat joins along dim 0 (docs/ir.md): move the axis to the
		 * front, concatenate, and move it back */
		int64_t perm[BLK_MAX_RANK] = {0}, inv[BLK_MAX_RANK] = {0};
		perm[0] = axis;
		for (int d = 0, k = 1; d < t.rank; d++)
			if (d != axis)
				perm[k++] = d;
		for (int d = 0; d < t.rank; d++)
			inv[perm[d]] = d;
		int32_t xs[BLK_MAX_RANK] = {0}, rs[BLK_MAX_RANK] = {0};
		for (int d = 0; d < t.rank; d++) {
			xs[d] = x->type.shape[perm[d]];
			rs[d] = t.shape[perm[d]];
		}
		Value *xt = emit(g, OP_TRANS, a->call, type_block(x->type, t.rank, xs), x, NULL, NULL);
		Value *yt = emit(g, OP_TRANS, a->call, type_block(y->type, t.rank, xs), y, NULL, NULL);
		if (!xt || !yt)
			return VOID;
		memcpy(xt->def->attr, perm, sizeof perm);
		memcpy(yt->def->attr, perm, sizeof perm);
		Value *c = emit(g, OP_CAT, a->call, type_block(t, t.rank, rs), xt, yt, NULL);
		Value *r = c ? emit(g, OP_TRANS, a->call, t, c, NULL, NULL) : NULL;
		if (!r)
			return VOID;
		memcpy(r->def->attr, inv, sizeof inv);
		return value_sym(r);
	}
	Value *r = emit(g, join ? OP_JOIN : OP_CAT, a->call, t, x, y, NULL);
	if (r)
		r->def->attr[0] = axis;
	return value_sym(r);
}

static Sym bi_split(Gen *g, Args *a, int which)
{
	(void)which;
	Value *x = block_arg(g, a, 0);
	if (!x)
		return VOID;
	Type t = x->type;
	if (t.shape[t.rank - 1] != 2) {
		error(g, a->at[0], "split needs a last axis of size 2, found %s", tstr(g, t));
		return VOID;
	}
	t.shape[--t.rank] = 0;
	Type rts[2] = {t, t};
	Op *op = emit_op(g, OP_SPLIT, a->call, &x, 1, rts, 2);
	if (!op)
		return VOID;
	Sym out = {.kind = S_TUPLE, .n = 2};
	out.items = arena_alloc(g->arena, 2 * sizeof *out.items);
	if (!out.items)
		return VOID;
	out.items[0] = value_sym(op->results[0]);
	out.items[1] = value_sym(op->results[1]);
	return out;
}

/* rand, randn, randint, randint4x: (seed, offsets, n_rounds = 10) over Philox 4x32. */
enum { RAND_UNIFORM, RAND_NORMAL, RAND_INT, RAND_INT4X };

/* u32 random bits to a uniform f32 in [0, 1). */
static Sym uniform_f32(Gen *g, Value *bits, Span at)
{
	Type ti = bits->type;
	ti.scalar = SK_I32;
	Sym x = value_sym(emit(g, OP_BITCAST, at, ti, bits, NULL, NULL));
	Sym neg = gen_binary(g, T_LT, x, weak_int(0), at);
	Sym flipped = gen_binary(g, T_MINUS, gen_unary(g, T_MINUS, x, at), weak_int(1), at);
	if (neg.kind == S_VOID || flipped.kind == S_VOID)
		return VOID;
	Value *sel = emit(g, OP_SELECT, at, ti, neg.v, flipped.v, x.v);
	if (!sel)
		return VOID;
	Sym f = value_sym(cast_value(g, sel, SK_F32, at));
	return gen_binary(g, T_STAR, f, weak_float(4.6566127342e-10), at);
}

static Sym bi_rand(Gen *g, Args *a, int kind)
{
	int64_t rounds = 10;
	if (a->given[2] && !arg_int(g, a, 2, &rounds))
		return VOID;
	if (rounds < 1 || rounds > 64) {
		error(g, a->at[2], "n_rounds must be between 1 and 64");
		return VOID;
	}
	Sym seed = a->v[0], offs = a->v[1];
	if (!is_valueish(seed) || seed.type.rank || seed.type.ptr || !scalar_is_int((ScalarKind)seed.type.scalar)) {
		error(g, a->at[0], "the seed must be an integer scalar, found %s", sym_desc(g, seed));
		return VOID;
	}
	if (!is_valueish(offs) || offs.type.ptr || !scalar_is_int((ScalarKind)offs.type.scalar)) {
		error(g, a->at[1], "the offsets must be integers, found %s", sym_desc(g, offs));
		return VOID;
	}
	Value *s = to_elem(g, seed.kind == S_CONST ? const_int(SK_U64, int_value(seed), false) : seed, SK_U64, a->at[0]);
	Value *o = offs.kind == S_CONST ? emit_const(g, offs, type_scalar(SK_U32), a->at[1])
	                                : cast_value(g, offs.v, SK_U32, a->at[1]);
	if (!s || !o)
		return VOID;
	Type rt[4] = {o->type, o->type, o->type, o->type};
	Value *ops[2] = {s, o};
	Op *op = emit_op(g, OP_PHILOX, a->call, ops, 2, rt, 4);
	if (!op)
		return VOID;
	op->attr[0] = rounds;
	switch (kind) {
	case RAND_INT:
		return value_sym(op->results[0]);
	case RAND_INT4X: {
		Sym out = {.kind = S_TUPLE, .n = 4};
		out.items = arena_alloc(g->arena, 4 * sizeof *out.items);
		if (!out.items)
			return VOID;
		for (int i = 0; i < 4; i++)
			out.items[i] = value_sym(op->results[i]);
		return out;
	}
	case RAND_UNIFORM:
		return uniform_f32(g, op->results[0], a->call);
	default: {
		Sym u1 = uniform_f32(g, op->results[0], a->call), u2 = uniform_f32(g, op->results[1], a->call);
		Args mx = {.fname = "maximum", .call = a->call, .n = 3};
		mx.v[0] = u1;
		mx.v[1] = weak_float(1.0e-7);
		mx.at[0] = mx.at[1] = a->call;
		u1 = elementwise(g, &mx, 2, OP_MAX, true, false);
		Sym th = gen_binary(g, T_STAR, weak_float(6.283185307179586), u2, a->call);
		Sym r = math1(g, MATH_SQRT, gen_binary(g, T_STAR, weak_float(-2.0), math1(g, MATH_LOG, u1, a->call), a->call),
		              a->call);
		return gen_binary(g, T_STAR, r, math1(g, MATH_COS, th, a->call), a->call);
	}
	}
}

static Sym bi_hint(Gen *g, Args *a, int slot)
{
	Sym x = a->v[0];
	int64_t n;
	if (!arg_int(g, a, 1, &n))
		return VOID;
	if (n <= 0) {
		error(g, a->at[1], "'%s' needs a positive value", a->fname);
		return VOID;
	}
	if (x.kind == S_CONST)
		return x;
	if (x.kind != S_VALUE || (!scalar_is_int((ScalarKind)x.type.scalar) && !x.type.ptr)) {
		error(g, a->at[0], "'%s' applies to integers and pointers, found %s", a->fname, sym_desc(g, x));
		return VOID;
	}
	Value *v = emit(g, OP_HINT, a->call, x.type, x.v, NULL, NULL);
	if (v)
		v->def->attr[slot] = n;
	return value_sym(v);
}

static Sym bi_static_assert(Gen *g, Args *a, int which)
{
	(void)which;
	Sym c = a->v[0];
	if (c.kind != S_CONST) {
		error(g, a->at[0], "static_assert needs a condition known at compile time, found %s", sym_desc(g, c));
		return VOID;
	}
	if (a->given[1] && a->v[1].kind != S_STRING) {
		error(g, a->at[1], "the message of static_assert must be a string");
		return VOID;
	}
	if (!is_const_true(c)) {
		if (a->given[1])
			error(g, a->call, "static assertion failed: %.*s", (int)a->v[1].len, a->v[1].str);
		else
			error(g, a->call, "static assertion failed");
	}
	return (Sym){.kind = S_NONE};
}

static Sym bi_assert(Gen *g, Args *a, int which)
{
	(void)which;
	Sym c = truth(g, a->v[0], a->at[0]);
	if (c.kind == S_VOID)
		return VOID;
	if (a->given[1] && a->v[1].kind != S_STRING) {
		error(g, a->at[1], "the message of assert must be a string");
		return VOID;
	}
	Value *v = materialize(g, c, a->at[0]);
	Op *op = v ? emit_op(g, OP_ASSERT, a->call, &v, 1, NULL, 0) : NULL;
	if (!op)
		return VOID;
	op->str = a->given[1] ? arena_strndup(g->arena, a->v[1].str, a->v[1].len) : "assertion failed";
	return (Sym){.kind = S_NONE};
}

static const Builtin builtins[] = {
	{"program_id", "axis", bi_program_id, 0},
	{"num_programs", "axis", bi_program_id, 1},
	{"arange", "start end", bi_arange, 0},
	{"full", "shape value dtype", bi_full, 0},
	{"zeros", "shape dtype", bi_full, 1},
	{"zeros_like", "x", bi_zeros_like, 0},
	{"inf", "dtype", bi_inf, 0},
	{"cdiv", "a b", bi_cdiv, 0},
	{"next_power_of_2", "n", bi_next_power_of_2, 0},
	{"range", "a b? c?", bi_range, 0},
	{"static_range", "a b? c?", bi_range, 0},
	{"load", "ptr mask? other? cache? eviction? volatile?", bi_load, 0},
	{"store", "ptr value mask? cache? eviction?", bi_store, 0},
	{"atomic_add", "ptr val mask? sem? scope?", bi_atomic, ATOM_ADD},
	{"atomic_max", "ptr val mask? sem? scope?", bi_atomic, ATOM_MAX},
	{"atomic_min", "ptr val mask? sem? scope?", bi_atomic, ATOM_MIN},
	{"atomic_and", "ptr val mask? sem? scope?", bi_atomic, ATOM_AND},
	{"atomic_or", "ptr val mask? sem? scope?", bi_atomic, ATOM_OR},
	{"atomic_xor", "ptr val mask? sem? scope?", bi_atomic, ATOM_XOR},
	{"atomic_xchg", "ptr val mask? sem? scope?", bi_atomic, ATOM_XCHG},
	{"atomic_cas", "ptr cmp val sem? scope?", bi_atomic_cas, 0},
	{"where", "condition x y", bi_where, 0},
	{"to", "x dtype bitcast?", bi_to, 0},
	{"bitcast", "x dtype", bi_to, 1},
	{"exp", "x", bi_math, MATH_EXP},
	{"exp2", "x", bi_math, MATH_EXP2},
	{"log", "x", bi_math, MATH_LOG},
	{"log2", "x", bi_math, MATH_LOG2},
	{"sqrt", "x", bi_math, MATH_SQRT},
	{"rsqrt", "x", bi_math, MATH_RSQRT},
	{"sin", "x", bi_math, MATH_SIN},
	{"cos", "x", bi_math, MATH_COS},
	{"tanh", "x", bi_math, MATH_TANH},
	{"erf", "x", bi_math, MATH_ERF},
	{"floor", "x", bi_math, MATH_FLOOR},
	{"ceil", "x", bi_math, MATH_CEIL},
	{"sigmoid", "x", bi_sigmoid, 0},
	{"abs", "x", bi_abs, 0},
	{"fma", "a b c", bi_fma, 0},
	{"maximum", "a b propagate_nan?", bi_minmax, OP_MAX},
	{"minimum", "a b propagate_nan?", bi_minmax, OP_MIN},
	{"clamp", "x lo hi", bi_clamp, 0},
	{"umulhi", "a b", bi_umulhi, 0},
	{"sum", "x axis? keep_dims? dtype?", bi_reduction, COMBINE_ADD},
	{"max", "x axis? keep_dims?", bi_reduction, COMBINE_MAX},
	{"min", "x axis? keep_dims?", bi_reduction, COMBINE_MIN},
	{"argmax", "x axis keep_dims?", bi_reduction, COMBINE_ARGMAX},
	{"argmin", "x axis keep_dims?", bi_reduction, COMBINE_ARGMIN},
	{"reduce", "x axis combine_fn keep_dims?", bi_reduce, 0},
	{"cumsum", "x axis? reverse?", bi_scan, COMBINE_ADD},
	{"cumprod", "x axis? reverse?", bi_scan, COMBINE_MUL},
	{"associative_scan", "x axis combine_fn reverse?", bi_scan, COMBINE_FN},
	{"dot", "a b acc? input_precision? out_dtype?", bi_dot, 0},
	{"reshape", "x shape", bi_reshape, 0},
	{"trans", "x dims?", bi_trans, 0},
	{"permute", "x dims", bi_trans, 0},
	{"expand_dims", "x axis", bi_expand_dims, 0},
	{"broadcast_to", "x shape", bi_broadcast_to, 0},
	{"join", "a b", bi_join_cat, 1},
	{"cat", "a b axis?", bi_join_cat, 0},
	{"split", "x", bi_split, 0},
	{"rand", "seed offsets n_rounds?", bi_rand, RAND_UNIFORM},
	{"randn", "seed offsets n_rounds?", bi_rand, RAND_NORMAL},
	{"randint", "seed offsets n_rounds?", bi_rand, RAND_INT},
	{"randint4x", "seed offsets n_rounds?", bi_rand, RAND_INT4X},
	{"multiple_of", "x value", bi_hint, 0},
	{"max_contiguous", "x value", bi_hint, 1},
	{"static_assert", "condition msg?", bi_static_assert, 0},
	{"assert", "condition msg?", bi_assert, 0},
};

static const Builtin *find_builtin(const char *name)
{
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
		if (strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

/* ---- expressions ------------------------------------------------------------ */

static Sym gen_expr(Gen *g, Node *n);
static void gen_block(Gen *g, Node *block);
static void gen_stmt(Gen *g, Node *n);

static bool resolve_type(Gen *g, Node *n, Type *out, bool *is_const)
{
	if (is_const)
		*is_const = false;
	if (n->kind == N_TYPE_CONST) {
		if (!is_const) {
			error(g, n->span, "'const' is only meaningful on a kernel parameter");
			return false;
		}
		*is_const = true;
		return resolve_type(g, n->a, out, NULL);
	}
	if (n->kind == N_TYPE_PTR) {
		if (!resolve_type(g, n->a, out, NULL))
			return false;
		if (out->ptr >= BLK_MAX_PTR_DEPTH) {
			error(g, n->span, "pointers nest at most %d deep", BLK_MAX_PTR_DEPTH);
			return false;
		}
		*out = type_pointer_to(*out);
		return true;
	}
	ScalarKind k;
	if (!scalar_from_name(n->name, &k)) {
		error(g, n->span, "unknown type '%s'", n->name);
		return false;
	}
	*out = type_scalar(k);
	return true;
}

static GlobalConst *global_entry(Gen *g, Node *decl)
{
	for (int i = 0; i < g->n_globals; i++)
		if (g->globals[i].decl == decl)
			return &g->globals[i];
	if (g->n_globals == g->cap_globals) {
		int cap = g->cap_globals ? g->cap_globals * 2 : 16;
		GlobalConst *items = arena_alloc(g->arena, (size_t)cap * sizeof *items);
		if (!items)
			return NULL;
		if (g->n_globals)
			memcpy(items, g->globals, (size_t)g->n_globals * sizeof *items);
		g->globals = items;
		g->cap_globals = cap;
	}
	g->globals[g->n_globals] = (GlobalConst){.decl = decl};
	return &g->globals[g->n_globals++];
}

/* A constant converted to a declared type (const globals, const params). */
static Sym const_to_type(Gen *g, Sym v, Type t, Span at)
{
	if (v.kind != S_CONST || t.ptr) {
		error(g, at, "expected a constant %s, found %s", tstr(g, t), sym_desc(g, v));
		return VOID;
	}
	ScalarKind k = (ScalarKind)t.scalar;
	if (scalar_is_float(k))
		return const_float(k, const_in_kind(v, k), false);
	if (scalar_is_float((ScalarKind)v.type.scalar)) {
		error(g, at, "expected an integer constant of type %s, found %s", scalar_name(k), sym_desc(g, v));
		return VOID;
	}
	if (!const_fits(g, v, k, at))
		return VOID;
	return const_int(k, int_value(v), false);
}

static Sym global_const(Gen *g, Node *decl, Module *owner)
{
	GlobalConst *gc = global_entry(g, decl);
	if (!gc)
		return VOID;
	if (gc->done)
		return gc->value;
	if (gc->busy) {
		error(g, decl->span, "the constant '%s' is defined in terms of itself", decl->name);
		return VOID;
	}
	gc->busy = true;
	Scope *scope = g->scope;
	Module *mod = g->mod;
	const char *no_ir = g->no_ir;
	g->scope = NULL;
	scope_push(g, true);
	g->mod = owner;
	g->no_ir = "the value of a const must be known at compile time";
	Sym v = gen_expr(g, decl->b);
	if (v.kind == S_VALUE) {
		error(g, decl->b->span, "the value of const '%s' is not known at compile time", decl->name);
		v = VOID;
	}
	Type t;
	if (v.kind != S_VOID && decl->a) {
		v = resolve_type(g, decl->a, &t, NULL) ? const_to_type(g, v, t, decl->b->span) : VOID;
	}
	g->scope = scope;
	g->mod = mod;
	g->no_ir = no_ir;
	gc = global_entry(g, decl); /* the table may have grown */
	if (gc) {
		gc->busy = false;
		gc->done = true;
		gc->value = v;
	}
	return v;
}

/* A declaration found in a module as a Sym. */
static Sym decl_sym(Gen *g, Node *decl, Module *owner, Span at)
{
	if (decl->kind == N_CONST)
		return global_const(g, decl, owner);
	if (decl->kind == N_FN)
		return (Sym){.kind = S_FN, .fn = decl, .mod = owner};
	error(g, at, "kernel '%s' cannot be used inside a kernel", decl->name);
	return VOID;
}

static Sym gen_ident(Gen *g, Node *n)
{
	Binding *b = lookup_local(g, n->name);
	if (b)
		return b->sym;
	Module *owner;
	Node *decl = module_lookup(g->mod, n->name, &owner);
	if (decl)
		return decl_sym(g, decl, owner, n->span);
	Module *alias = module_alias(g->mod, n->name);
	if (alias)
		return (Sym){.kind = S_MODULE, .mod = alias};
	ScalarKind k;
	if (scalar_from_name(n->name, &k))
		return (Sym){.kind = S_TYPE, .type = type_scalar(k)};
	if (find_builtin(n->name) || strcmp(n->name, "print") == 0)
		error(g, n->span, "'%s' is a builtin function; call it", n->name);
	else
		error(g, n->span, "use of undeclared identifier '%s'", n->name);
	return VOID;
}

static Sym gen_print(Gen *g, RawArgs *raw)
{
	if (raw->n_pos < 1 || raw->pos[0].kind != S_STRING) {
		error(g, raw->call, "print needs a string first: print(\"x =\", x)");
		return VOID;
	}
	bool hex = false;
	for (int i = 0; i < raw->n_named; i++) {
		if (strcmp(raw->names[i], "hex") != 0 || raw->named[i].kind != S_CONST) {
			error(g, raw->named_at[i], "print takes only 'hex = true|false' as a named argument");
			return VOID;
		}
		hex = raw->named[i].i != 0;
	}
	Value *vals[MAX_ARGS];
	int n = 0;
	for (int i = 1; i < raw->n_pos; i++)
		if (!(vals[n++] = materialize(g, raw->pos[i], raw->pos_at[i])))
			return VOID;
	Op *op = emit_op(g, OP_PRINT, raw->call, vals, n, NULL, 0);
	if (!op)
		return VOID;
	op->str = arena_strndup(g->arena, raw->pos[0].str, raw->pos[0].len);
	op->attr[0] = hex;
	return (Sym){.kind = S_NONE};
}

static Sym call_builtin(Gen *g, const Builtin *b, RawArgs *raw)
{
	Args a;
	if (!bind_params(g, b->name, b->params, raw, &a))
		return VOID;
	return b->fn(g, &a, b->which);
}

static Sym gen_call(Gen *g, Node *call)
{
	Node *callee = call->a;
	RawArgs raw = {.call = call->span};
	const char *name;
	Module *in_mod = NULL;
	if (callee->kind == N_FIELD) {
		name = callee->name;
		Node *base = callee->a;
		if (base->kind == N_IDENT && !lookup_local(g, base->name) && (in_mod = module_alias(g->mod, base->name))) {
			/* m.f(...) with m an imported module */
		} else {
			Sym self = gen_expr(g, base);
			if (self.kind == S_VOID)
				return VOID;
			raw.pos[0] = self;
			raw.pos_at[0] = base->span;
			raw.n_pos = 1;
		}
	} else if (callee->kind == N_IDENT) {
		name = callee->name;
	} else {
		error(g, callee->span, "this expression cannot be called");
		return VOID;
	}
	bool failed = false;
	for (int i = 0; i < call->list.len; i++) {
		Node *arg = call->list.items[i];
		if (raw.n_pos + raw.n_named >= MAX_ARGS) {
			error(g, arg->span, "too many arguments (at most %d)", MAX_ARGS);
			return VOID;
		}
		if (arg->kind == N_NAMED_ARG) {
			raw.names[raw.n_named] = arg->name;
			raw.named_at[raw.n_named] = arg->span;
			raw.named[raw.n_named] = gen_expr(g, arg->a);
			failed |= raw.named[raw.n_named++].kind == S_VOID;
		} else {
			raw.pos_at[raw.n_pos] = arg->span;
			raw.pos[raw.n_pos] = gen_expr(g, arg);
			failed |= raw.pos[raw.n_pos++].kind == S_VOID;
		}
	}
	if (failed)
		return VOID;
	Module *owner;
	if (in_mod) {
		Node *decl = module_lookup(in_mod, name, &owner);
		if (!decl || decl->kind != N_FN) {
			error(g, callee->span, "the module '%s' has no function '%s'", callee->a->name, name);
			return VOID;
		}
		return call_fn(g, decl, owner, &raw);
	}
	Binding *b = lookup_local(g, name);
	if (b && callee->kind == N_IDENT) {
		if (b->sym.kind == S_FN)
			return call_fn(g, b->sym.fn, b->sym.mod, &raw);
		error(g, callee->span, "'%s' is %s, not a function", name, sym_desc(g, b->sym));
		return VOID;
	}
	Node *decl = module_lookup(g->mod, name, &owner);
	if (decl && decl->kind == N_FN)
		return call_fn(g, decl, owner, &raw);
	if (decl && decl->kind == N_KERNEL) {
		error(g, callee->span, "cannot call kernel '%s' from a kernel", name);
		return VOID;
	}
	if (strcmp(name, "print") == 0)
		return gen_print(g, &raw);
	const Builtin *bi = find_builtin(name);
	if (bi)
		return call_builtin(g, bi, &raw);
	if (decl)
		error(g, callee->span, "'%s' is a constant, not a function", name);
	else if (callee->kind == N_FIELD)
		error(g, callee->span, "no function '%s' to call as a method", name);
	else
		error(g, callee->span, "call to undeclared function '%s'", name);
	return VOID;
}

/* base[...]: a tuple item, or a block with new axes (None) between kept ones (:). */
static Sym gen_index(Gen *g, Node *n)
{
	Sym base = gen_expr(g, n->a);
	if (base.kind == S_VOID)
		return VOID;
	if (base.kind == S_TUPLE) {
		if (n->list.len != 1 || ((Node *)n->list.items[0])->kind == N_SLICE) {
			error(g, n->span, "a tuple takes one integer index");
			return VOID;
		}
		Sym i = gen_expr(g, n->list.items[0]);
		if (i.kind != S_CONST || scalar_is_float((ScalarKind)i.type.scalar)) {
			if (i.kind != S_VOID)
				error(g, ((Node *)n->list.items[0])->span, "a tuple index must be a constant integer");
			return VOID;
		}
		__int128 k = int_value(i);
		if (k < 0)
			k += base.n;
		if (k < 0 || k >= base.n) {
			error(g, ((Node *)n->list.items[0])->span, "index %lld is out of range for a tuple of %d",
			      (long long)int_value(i), base.n);
			return VOID;
		}
		return base.items[(int)k];
	}
	if (!is_valueish(base)) {
		error(g, n->a->span, "%s cannot be indexed", sym_desc(g, base));
		return VOID;
	}
	int kept = 0, rank = 0;
	int32_t shape[BLK_MAX_RANK];
	for (int i = 0; i < n->list.len; i++) {
		Node *it = n->list.items[i];
		if (it->kind == N_NONE) {
			if (rank >= BLK_MAX_RANK) {
				error(g, it->span, "blocks have at most %d dimensions", BLK_MAX_RANK);
				return VOID;
			}
			shape[rank++] = 1;
		} else if (it->kind == N_SLICE && !it->a && !it->b && !it->c) {
			if (kept >= base.type.rank) {
				error(g, it->span, "too many ':' for %s", sym_desc(g, base));
				return VOID;
			}
			if (rank >= BLK_MAX_RANK) {
				error(g, it->span, "blocks have at most %d dimensions", BLK_MAX_RANK);
				return VOID;
			}
			shape[rank++] = base.type.shape[kept++];
		} else {
			error(g, it->span, "a block can only be indexed with ':' and None (to add an axis); select elements "
			                   "with a mask or a pointer offset instead");
			return VOID;
		}
	}
	if (kept != base.type.rank) {
		error(g, n->span, "%s needs %d ':' in its index, found %d", sym_desc(g, base), base.type.rank, kept);
		return VOID;
	}
	if (rank == base.type.rank)
		return base;
	Value *v = materialize(g, base, n->a->span);
	if (!v)
		return VOID;
	Type t = type_block(v->type, rank, shape);
	return value_sym(emit(g, v->type.rank ? OP_RESHAPE : OP_SPLAT, n->span, t, v, NULL, NULL));
}

static Sym gen_field(Gen *g, Node *n)
{
	if (n->a->kind == N_IDENT && !lookup_local(g, n->a->name)) {
		Module *m = module_alias(g->mod, n->a->name);
		if (m) {
			Module *owner;
			Node *decl = module_lookup(m, n->name, &owner);
			if (!decl) {
				error(g, n->span, "the module '%s' has no '%s'", n->a->name, n->name);
				return VOID;
			}
			return decl_sym(g, decl, owner, n->span);
		}
	}
	Sym base = gen_expr(g, n->a);
	if (base.kind == S_VOID)
		return VOID;
	if (is_valueish(base) && strcmp(n->name, "shape") == 0)
		return shape_sym(g, base.type);
	if (is_valueish(base) && strcmp(n->name, "dtype") == 0)
		return (Sym){.kind = S_TYPE, .type = type_elem(base.type)};
	if (is_valueish(base) && strcmp(n->name, "T") == 0) {
		Args a = {.fname = "trans", .call = n->span, .n = 2};
		a.v[0] = base;
		a.at[0] = n->a->span;
		a.given[0] = true;
		return bi_trans(g, &a, 0);
	}
	error(g, n->span, "%s has no field '%s'", sym_desc(g, base), n->name);
	return VOID;
}

static Sym gen_tuple(Gen *g, Node *n)
{
	Sym t = {.kind = S_TUPLE, .n = n->list.len};
	t.items = arena_alloc(g->arena, (size_t)(t.n ? t.n : 1) * sizeof *t.items);
	if (!t.items)
		return VOID;
	for (int i = 0; i < t.n; i++) {
		Node *it = n->list.items[i];
		if (it->kind == N_CONFIG) {
			error(g, it->span, "a configuration '{...}' is only allowed in an attribute");
			return VOID;
		}
		t.items[i] = gen_expr(g, it);
		if (t.items[i].kind == S_VOID)
			return VOID;
	}
	return t;
}

static Sym gen_expr(Gen *g, Node *n)
{
	switch (n->kind) {
	case N_IDENT:
		return gen_ident(g, n);
	case N_INT:
		return weak_int(n->ival);
	case N_FLOAT:
		return weak_float(n->fval);
	case N_STRING:
		return (Sym){.kind = S_STRING, .str = n->str, .len = n->len};
	case N_BOOL:
		return const_int(SK_I1, n->ival, true);
	case N_NONE:
		return (Sym){.kind = S_NONE};
	case N_UNARY:
		return gen_unary(g, n->op, gen_expr(g, n->a), n->span);
	case N_BINARY:
		if (n->op == T_ANDAND || n->op == T_OROR) {
			Sym a = truth(g, gen_expr(g, n->a), n->a->span);
			/* constants short-circuit: the other side is not evaluated */
			if (a.kind == S_CONST && (n->op == T_ANDAND ? !a.i : a.i))
				return a;
			if (a.kind == S_CONST)
				return truth(g, gen_expr(g, n->b), n->b->span);
			return gen_logical(g, n->op, a, gen_expr(g, n->b), n->span);
		}
		return gen_binary(g, n->op, gen_expr(g, n->a), gen_expr(g, n->b), n->span);
	case N_TERNARY: {
		Sym c = truth(g, gen_expr(g, n->a), n->a->span);
		if (c.kind == S_VOID)
			return VOID;
		if (c.kind == S_CONST)
			return gen_expr(g, c.i ? n->b : n->c);
		Args a = {.fname = "?:", .call = n->span, .n = 3};
		a.v[0] = c;
		a.v[1] = gen_expr(g, n->b);
		a.v[2] = gen_expr(g, n->c);
		a.at[0] = n->a->span;
		a.at[1] = n->b->span;
		a.at[2] = n->c->span;
		if (a.v[1].kind == S_VOID || a.v[2].kind == S_VOID)
			return VOID;
		return bi_where(g, &a, 0);
	}
	case N_CALL:
		return gen_call(g, n);
	case N_INDEX:
		return gen_index(g, n);
	case N_FIELD:
		return gen_field(g, n);
	case N_TUPLE:
	case N_LIST:
		return gen_tuple(g, n);
	case N_SLICE:
		error(g, n->span, "a slice is only allowed inside '[...]'");
		return VOID;
	case N_CONFIG:
		error(g, n->span, "a configuration '{...}' is only allowed in an attribute");
		return VOID;
	default:
		error(g, n->span, "expected an expression");
		return VOID;
	}
}

/* ---- fn inlining ------------------------------------------------------------ */

/* s converted to the declared type t of a fn parameter or result. */
static Sym check_declared(Gen *g, Sym s, Type t, Span at, const char *what)
{
	if (s.kind == S_CONST && !t.ptr)
		return const_to_type(g, s, t, at);
	if (s.kind == S_VALUE && s.type.scalar == t.scalar && s.type.ptr == t.ptr)
		return s;
	if (s.kind != S_VOID)
		error(g, at, "%s must be %s, found %s", what, tstr(g, t), sym_desc(g, s));
	return VOID;
}

static Sym call_fn(Gen *g, Node *fn, Module *mod, RawArgs *raw)
{
	if (g->inline_depth >= MAX_INLINE_DEPTH) {
		error(g, raw->call, "calls nested more than %d deep (is '%s' recursive?)", MAX_INLINE_DEPTH, fn->name);
		return VOID;
	}
	int n = fn->list.len;
	if (raw->n_pos > n) {
		error(g, raw->pos_at[n], "too many arguments to '%s' (it takes %d)", fn->name, n);
		return VOID;
	}
	Sym args[MAX_ARGS];
	bool given[MAX_ARGS] = {0};
	Span at[MAX_ARGS];
	for (int i = 0; i < raw->n_pos; i++) {
		args[i] = raw->pos[i];
		at[i] = raw->pos_at[i];
		given[i] = true;
	}
	for (int j = 0; j < raw->n_named; j++) {
		int i = 0;
		while (i < n && strcmp(((Node *)fn->list.items[i])->name, raw->names[j]) != 0)
			i++;
		if (i == n || given[i]) {
			error(g, raw->named_at[j], i == n ? "'%s' has no parameter named '%s'" : "argument '%2$s' of '%1$s' is given twice",
			      fn->name, raw->names[j]);
			return VOID;
		}
		args[i] = raw->named[j];
		at[i] = raw->named_at[j];
		given[i] = true;
	}

	Scope *scope = g->scope;
	Module *saved_mod = g->mod;
	bool returned = g->returned, in_fn = g->in_fn;
	Sym ret = g->ret;
	int runtime_depth = g->runtime_depth;
	g->scope = NULL;
	scope_push(g, true);
	g->mod = mod;
	g->inline_depth++;
	bool ok = true;
	for (int i = 0; ok && i < n; i++) {
		Node *p = fn->list.items[i];
		Sym v = args[i];
		if (!given[i]) {
			if (!p->b) {
				error(g, raw->call, "missing argument '%s' of '%s'", p->name, fn->name);
				diag_note(g->diag, fn->span, "'%s' is declared here", fn->name);
				ok = false;
				break;
			}
			v = gen_expr(g, p->b); /* defaults see the parameters before them */
			at[i] = p->b->span;
		}
		Type t;
		if (p->a) {
			if (!resolve_type(g, p->a, &t, NULL)) {
				ok = false;
				break;
			}
			v = check_declared(g, v, t, at[i], arena_printf(g->arena, "argument '%s' of '%s'", p->name, fn->name));
		}
		ok = v.kind != S_VOID && bind(g, p->name, v, false, p->span);
	}
	g->in_fn = true;
	g->returned = false;
	g->ret = (Sym){.kind = S_NONE};
	g->runtime_depth = 0;
	int errors = g->diag->errors;
	Node *caller = g->cur_fn;
	g->cur_fn = fn;
	if (ok)
		gen_block(g, fn->b);
	g->cur_fn = caller;
	/* errors in the body point at the fn; say which call it was inlined for
	 * (once for a recursion: at the call from outside) */
	if (g->diag->errors != errors && caller != fn)
		diag_note(g->diag, raw->call, "in this call of '%s'", fn->name);
	Sym result = ok ? g->ret : VOID;
	if (ok && fn->a) {
		Type t;
		result = resolve_type(g, fn->a, &t, NULL) ? check_declared(g, result, t, fn->a->span,
		                                                           arena_printf(g->arena, "the result of '%s'", fn->name))
		                                          : VOID;
	}
	g->inline_depth--;
	g->scope = scope;
	g->mod = saved_mod;
	g->returned = returned;
	g->in_fn = in_fn;
	g->ret = ret;
	g->runtime_depth = runtime_depth;
	return result;
}

/* ---- statements -------------------------------------------------------------- */

static void bind_names(Gen *g, Node *let, Sym v)
{
	int n = let->list.len;
	if (v.kind == S_VOID) { /* bound to nothing: later uses stay silent */
		for (int i = 0; i < n; i++) {
			Node *id = let->list.items[i];
			bind(g, id->name, VOID, let->flag, id->span);
		}
		return;
	}
	if (n == 1) {
		Node *id = let->list.items[0];
		bind(g, id->name, v, let->flag, id->span);
		return;
	}
	if (v.kind != S_TUPLE || v.n != n) {
		error(g, let->b->span, "%d names are bound but the value is %s", n, sym_desc(g, v));
		bind_names(g, let, VOID);
		return;
	}
	for (int i = 0; i < n; i++) {
		Node *id = let->list.items[i];
		bind(g, id->name, v.items[i], let->flag, id->span);
	}
}

static void gen_let(Gen *g, Node *n)
{
	Sym v = gen_expr(g, n->b);
	if (v.kind != S_VOID && n->a) {
		Type t;
		if (!resolve_type(g, n->a, &t, NULL))
			v = VOID;
		else if (v.kind == S_CONST)
			v = const_to_type(g, v, t, n->b->span);
		else if (v.kind == S_VALUE && !(v.type.scalar == t.scalar && v.type.ptr == t.ptr)) {
			error(g, n->b->span, "declared %s, but the value is %s; convert it with .to(%s)", tstr(g, t),
			      sym_desc(g, v), tstr(g, t));
			v = VOID;
		}
	}
	bind_names(g, n, v);
}

static Binding *assignable(Gen *g, Node *target)
{
	Binding *b = lookup_local(g, target->name);
	if (!b) {
		Module *owner;
		if (module_lookup(g->mod, target->name, &owner))
			error(g, target->span, "cannot assign to the global '%s'", target->name);
		else
			error(g, target->span, "use of undeclared identifier '%s'", target->name);
		return NULL;
	}
	if (!b->is_var) {
		error(g, target->span, "cannot assign to '%s': it is declared with 'let'", target->name);
		diag_note(g->diag, b->span, "declared here; use 'var' for a variable that changes");
		return NULL;
	}
	return b;
}

static int compound_op(int op)
{
	switch (op) {
	case T_PLUS_ASSIGN: return T_PLUS;
	case T_MINUS_ASSIGN: return T_MINUS;
	case T_STAR_ASSIGN: return T_STAR;
	case T_SLASH_ASSIGN: return T_SLASH;
	case T_PERCENT_ASSIGN: return T_PERCENT;
	case T_AMP_ASSIGN: return T_AMP;
	case T_PIPE_ASSIGN: return T_PIPE;
	case T_CARET_ASSIGN: return T_CARET;
	case T_SHL_ASSIGN: return T_SHL;
	default: return T_SHR;
	}
}

static void gen_assign(Gen *g, Node *n)
{
	int nt = n->list.len;
	Binding *bs[MAX_ARGS];
	if (nt > MAX_ARGS) {
		error(g, n->span, "too many assignment targets");
		return;
	}
	for (int i = 0; i < nt; i++)
		if (!(bs[i] = assignable(g, n->list.items[i])))
			return;
	Sym v = gen_expr(g, n->b);
	if (v.kind == S_VOID)
		return;
	if (n->op != T_ASSIGN) {
		v = gen_binary(g, compound_op(n->op), bs[0]->sym, v, n->span);
		if (v.kind != S_VOID)
			bs[0]->sym = v;
		return;
	}
	if (nt == 1) {
		bs[0]->sym = v;
		return;
	}
	if (v.kind != S_TUPLE || v.n != nt) {
		error(g, n->b->span, "%d targets are assigned but the value is %s", nt, sym_desc(g, v));
		return;
	}
	for (int i = 0; i < nt; i++)
		bs[i]->sym = v.items[i];
}

/* ---- control flow ------------------------------------------------------------ */

/* Names assigned anywhere in n (targets of '=' and 'op='). */
static void collect_assigned(Gen *g, Node *n, PtrVec *out)
{
	if (!n)
		return;
	if (n->kind == N_ASSIGN)
		for (int i = 0; i < n->list.len; i++) {
			Node *t = n->list.items[i];
			if (t->kind != N_IDENT)
				continue;
			bool seen = false;
			for (int j = 0; j < out->len && !seen; j++)
				seen = strcmp(out->items[j], t->name) == 0;
			if (!seen)
				ptrvec_push(g->arena, out, (void *)t->name);
		}
	collect_assigned(g, n->a, out);
	collect_assigned(g, n->b, out);
	collect_assigned(g, n->c, out);
	for (int i = 0; i < n->list.len; i++)
		collect_assigned(g, n->list.items[i], out);
}

/* The variables declared outside `body` that it may assign: they flow into
 * and out of the region as arguments and results. */
static int carried_vars(Gen *g, Node *body, Node *other, Binding **out)
{
	PtrVec names = {0};
	collect_assigned(g, body, &names);
	collect_assigned(g, other, &names);
	int n = 0;
	for (int i = 0; i < names.len && n < MAX_ARGS * 4; i++) {
		Binding *b = lookup_local(g, names.items[i]);
		if (b && b->is_var)
			out[n++] = b;
	}
	return n;
}

static bool sym_same(Sym a, Sym b)
{
	if (a.kind != b.kind)
		return false;
	if (a.kind == S_VALUE)
		return a.v == b.v;
	if (a.kind == S_CONST)
		return type_eq(a.type, b.type) && a.weak == b.weak && a.i == b.i &&
		       (a.f == b.f || (isnan(a.f) && isnan(b.f)));
	return false;
}

/* s as a value of exactly type t, in the current region: constants are
 * made in t, scalars broadcast; anything else must already be t. */
static Value *coerce(Gen *g, Sym s, Type t, Span at)
{
	if (s.kind == S_CONST && !t.ptr) {
		if (!const_fits(g, s, (ScalarKind)t.scalar, at))
			return NULL;
		return emit_const(g, s, t, at);
	}
	if (s.kind != S_VALUE)
		return NULL;
	if (type_eq(s.v->type, t))
		return s.v;
	if (s.v->type.rank == 0 && t.rank && s.v->type.scalar == t.scalar && s.v->type.ptr == t.ptr)
		return broadcast_to(g, s.v, t.rank, t.shape, at);
	return NULL;
}

/* The type a carried variable has in IR: a constant's own type. */
static bool carried_type(Gen *g, Binding *b, Span at, Type *t)
{
	Sym s = b->sym;
	if (s.kind == S_VALUE || s.kind == S_CONST) {
		*t = s.type;
		return true;
	}
	error(g, at, "'%s' is %s and cannot change inside a loop or a runtime 'if'", b->name, sym_desc(g, s));
	return false;
}

static void gen_if(Gen *g, Node *n)
{
	Sym c = truth(g, gen_expr(g, n->a), n->a->span);
	if (c.kind == S_VOID)
		return;
	if (c.kind == S_CONST) { /* decided now: only the taken branch exists */
		if (c.i)
			gen_block(g, n->b);
		else if (n->c)
			gen_stmt(g, n->c);
		return;
	}
	if (c.type.rank) {
		error(g, n->a->span, "an 'if' condition must be a scalar, found %s; use where() for blocks", sym_desc(g, c));
		return;
	}
	Binding *vars[MAX_ARGS * 4];
	int nv = carried_vars(g, n->b, n->c, vars);
	Sym before[MAX_ARGS * 4], after_then[MAX_ARGS * 4], after_else[MAX_ARGS * 4];
	for (int i = 0; i < nv; i++)
		before[i] = vars[i]->sym;
	Region *saved = g->region;
	Region then_r = {0}, else_r = {0};
	g->runtime_depth++;
	g->region = &then_r;
	gen_block(g, n->b);
	for (int i = 0; i < nv; i++) {
		after_then[i] = vars[i]->sym;
		vars[i]->sym = before[i];
	}
	g->region = &else_r;
	if (n->c)
		gen_stmt(g, n->c);
	for (int i = 0; i < nv; i++) {
		after_else[i] = vars[i]->sym;
		vars[i]->sym = before[i];
	}
	g->runtime_depth--;
	/* The variables that differ between the branches become results. */
	Type types[MAX_ARGS * 4];
	Value *then_v[MAX_ARGS * 4], *else_v[MAX_ARGS * 4];
	Binding *res_vars[MAX_ARGS * 4];
	int nr = 0;
	bool ok = true;
	for (int i = 0; i < nv; i++) {
		Sym a = after_then[i], b = after_else[i];
		if (sym_same(a, b)) {
			vars[i]->sym = a;
			continue;
		}
		if (a.kind == S_VOID || b.kind == S_VOID) {
			ok = false;
			continue;
		}
		Type t;
		if (!is_valueish(a) || !is_valueish(b)) {
			error(g, n->span, "'%s' is %s after one branch and %s after the other", vars[i]->name, sym_desc(g, a),
			      sym_desc(g, b));
			ok = false;
			continue;
		}
		if (a.kind == S_VALUE)
			t = a.type;
		else if (b.kind == S_VALUE)
			t = b.type;
		else {
			ScalarKind k;
			const char *why;
			if (!promote_arith((ScalarKind)a.type.scalar, false, (ScalarKind)b.type.scalar, false, false, &k, &why)) {
				error(g, n->span, "'%s': %s", vars[i]->name, why);
				ok = false;
				continue;
			}
			t = type_scalar(k);
		}
		if (a.kind == S_VALUE && b.kind == S_VALUE && b.v->type.rank > a.v->type.rank)
			t = b.type;
		g->region = &then_r;
		then_v[nr] = coerce(g, a, t, n->span);
		g->region = &else_r;
		else_v[nr] = coerce(g, b, t, n->span);
		if (!then_v[nr] || !else_v[nr]) {
			error(g, n->span, "'%s' is %s after the 'then' branch but %s after the 'else' branch", vars[i]->name,
			      sym_desc(g, a), sym_desc(g, b));
			ok = false;
			continue;
		}
		types[nr] = t;
		res_vars[nr++] = vars[i];
	}
	g->region = saved;
	if (!ok)
		return;
	g->region = &then_r;
	emit_op(g, OP_YIELD, n->span, then_v, nr, NULL, 0);
	g->region = &else_r;
	emit_op(g, OP_YIELD, n->span, else_v, nr, NULL, 0);
	g->region = saved;
	Value *cv = materialize(g, c, n->a->span);
	Op *op = cv ? emit_op(g, OP_IF, n->span, &cv, 1, types, nr) : NULL;
	if (!op)
		return;
	ir_move_region(&op->regions[0], &then_r);
	ir_move_region(&op->regions[1], &else_r);
	for (int i = 0; i < nr; i++)
		res_vars[i]->sym = value_sym(op->results[i]);
}

/* The loop-carried variables' entry values as IR values. */
static bool materialize_inits(Gen *g, Binding **vars, int nv, Value **init, Type *types, Span at)
{
	for (int i = 0; i < nv; i++) {
		if (!carried_type(g, vars[i], at, &types[i]))
			return false;
		init[i] = materialize(g, vars[i]->sym, at);
		if (!init[i])
			return false;
	}
	return true;
}

/* Generates a loop body into r (whose first `skip` arguments are not
 * carried), then yields the carried variables' values. On a type change
 * of a variable that entered as a constant, sets *retype and its new type
 * so that the caller can try again. */
static bool gen_loop_body(Gen *g, Region *r, Node *body, Binding **vars, int nv, Value **args, Type *types,
                          Value **init, bool *retype, Span at)
{
	Sym before[MAX_ARGS * 4];
	for (int i = 0; i < nv; i++) {
		before[i] = vars[i]->sym;
		vars[i]->sym = value_sym(args[i]);
	}
	Region *saved = g->region;
	g->region = r;
	int errors = g->diag->errors;
	gen_block(g, body);
	Value *yield[MAX_ARGS * 4];
	bool ok = g->diag->errors == errors;
	*retype = false;
	for (int i = 0; ok && i < nv; i++) {
		Sym s = vars[i]->sym;
		yield[i] = coerce(g, s, types[i], at);
		if (yield[i])
			continue;
		if (is_valueish(s) && before[i].kind == S_CONST && init[i]->def && init[i]->def->code == OP_CONST &&
		    (s.kind == S_VALUE || s.kind == S_CONST)) {
			types[i] = s.type; /* entered as a constant: take the type the body gives */
			*retype = true;
			continue;
		}
		error(g, at, "'%s' is %s before the loop but %s after an iteration", vars[i]->name, tstr(g, types[i]),
		      sym_desc(g, s));
		ok = false;
	}
	if (ok && !*retype)
		ok = emit_op(g, OP_YIELD, at, yield, nv, NULL, 0) != NULL;
	g->region = saved;
	for (int i = 0; i < nv; i++)
		vars[i]->sym = before[i];
	return ok;
}

static bool range_args(Gen *g, Node *call, Sym out[3], Span at[3])
{
	int n = call->list.len;
	if (n < 1 || n > 3) {
		error(g, call->span, "range takes 1 to 3 arguments: range(end), range(start, end), range(start, end, step)");
		return false;
	}
	for (int i = 0; i < n; i++)
		if (((Node *)call->list.items[i])->kind == N_NAMED_ARG) {
			error(g, ((Node *)call->list.items[i])->span, "range takes positional arguments");
			return false;
		}
	Sym v[3];
	for (int i = 0; i < n; i++) {
		Node *arg = call->list.items[i];
		v[i] = gen_expr(g, arg);
		at[i] = arg->span;
		if (v[i].kind == S_VOID)
			return false;
		if (!is_valueish(v[i]) || v[i].type.rank || v[i].type.ptr || !scalar_is_int((ScalarKind)v[i].type.scalar)) {
			error(g, arg->span, "range bounds must be integer scalars, found %s", sym_desc(g, v[i]));
			return false;
		}
	}
	out[0] = n == 1 ? weak_int(0) : v[0];
	out[1] = n == 1 ? v[0] : v[1];
	out[2] = n == 3 ? v[2] : weak_int(1);
	if (n == 1) {
		at[1] = at[0];
		at[2] = at[0];
	} else if (n == 2) {
		at[2] = call->span;
	}
	return true;
}

static void gen_static_for(Gen *g, Node *n, Sym r[3], Span at[3])
{
	for (int i = 0; i < 3; i++)
		if (r[i].kind != S_CONST) {
			error(g, at[i], "static_range bounds must be known at compile time");
			return;
		}
	__int128 lo = int_value(r[0]), hi = int_value(r[1]), step = int_value(r[2]);
	if (step == 0) {
		error(g, at[2], "the step of static_range cannot be 0");
		return;
	}
	__int128 count = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0) : (lo > hi ? (lo - hi - step - 1) / -step : 0);
	if (count > MAX_UNROLL) {
		error(g, n->a->span, "static_range of %lld iterations is more than the limit of %d", (long long)count,
		      MAX_UNROLL);
		return;
	}
	for (__int128 i = 0; i < count && !g->returned; i++) {
		scope_push(g, false);
		bind(g, n->name, weak_int(lo + i * step), false, n->span);
		gen_block(g, n->b);
		scope_pop(g);
	}
}

static void gen_for(Gen *g, Node *n)
{
	Node *it = n->a;
	if (it->kind != N_CALL || it->a->kind != N_IDENT ||
	    (strcmp(it->a->name, "range") != 0 && strcmp(it->a->name, "static_range") != 0)) {
		error(g, it->span, "a for loop iterates over range(...) or static_range(...)");
		return;
	}
	Sym r[3];
	Span at[3];
	if (!range_args(g, it, r, at))
		return;
	if (strcmp(it->a->name, "static_range") == 0) {
		gen_static_for(g, n, r, at);
		return;
	}
	if (r[2].kind == S_CONST && int_value(r[2]) <= 0) {
		error(g, at[2], "the step of range must be positive");
		return;
	}
	/* The induction variable's type: i32, or i64 when a bound is 64-bit. */
	ScalarKind k = SK_I32;
	for (int i = 0; i < 3; i++)
		if (!r[i].weak && scalar_bits((ScalarKind)r[i].type.scalar) == 64)
			k = SK_I64;
	Value *bounds[3];
	for (int i = 0; i < 3; i++)
		if (!(bounds[i] = to_elem(g, r[i], k, at[i])))
			return;
	Binding *vars[MAX_ARGS * 4];
	int nv = carried_vars(g, n->b, NULL, vars);
	Value *init[MAX_ARGS * 4];
	Type types[MAX_ARGS * 4];
	if (!materialize_inits(g, vars, nv, init, types, n->span))
		return;
	Region body = {0};
	Value *args[MAX_ARGS * 4];
	for (int attempt = 0;; attempt++) {
		body = (Region){0};
		Value *iv = ir_region_arg(g->f, &body, type_scalar(k));
		for (int i = 0; i < nv; i++)
			args[i] = ir_region_arg(g->f, &body, types[i]);
		scope_push(g, false);
		bind(g, n->name, value_sym(iv), false, n->span);
		g->runtime_depth++;
		bool retype;
		bool ok = gen_loop_body(g, &body, n->b, vars, nv, args, types, init, &retype, n->span);
		g->runtime_depth--;
		scope_pop(g);
		if (!ok)
			return;
		if (!retype)
			break;
		ir_clear_region(&body);
		if (attempt == 1) {
			error(g, n->span, "the types of the loop's variables do not settle");
			return;
		}
		for (int i = 0; i < nv; i++)
			if (!type_eq(init[i]->type, types[i]) && !(init[i] = coerce(g, vars[i]->sym, types[i], n->span))) {
				error(g, n->span, "'%s' enters the loop as %s but becomes %s", vars[i]->name,
				      sym_desc(g, vars[i]->sym), tstr(g, types[i]));
				return;
			}
	}
	Value *operands[3 + MAX_ARGS * 4] = {bounds[0], bounds[1], bounds[2]};
	for (int i = 0; i < nv; i++)
		operands[3 + i] = init[i];
	Op *op = emit_op(g, OP_FOR, n->span, operands, 3 + nv, types, nv);
	if (!op)
		return;
	ir_move_region(&op->regions[0], &body);
	for (int i = 0; i < nv; i++)
		vars[i]->sym = value_sym(op->results[i]);
}

static void gen_while(Gen *g, Node *n)
{
	Binding *vars[MAX_ARGS * 4];
	int nv = carried_vars(g, n->b, NULL, vars);
	Value *init[MAX_ARGS * 4];
	Type types[MAX_ARGS * 4];
	if (!materialize_inits(g, vars, nv, init, types, n->span))
		return;
	Region before = {0}, after = {0};
	Region *saved = g->region;
	for (int attempt = 0;; attempt++) {
		before = (Region){0};
		after = (Region){0};
		/* region 0: the condition over the carried values */
		Value *bargs[MAX_ARGS * 4], *aargs[MAX_ARGS * 4];
		Sym entry[MAX_ARGS * 4];
		for (int i = 0; i < nv; i++) {
			bargs[i] = ir_region_arg(g->f, &before, types[i]);
			entry[i] = vars[i]->sym;
			vars[i]->sym = value_sym(bargs[i]);
		}
		g->region = &before;
		g->runtime_depth++;
		Sym c = truth(g, gen_expr(g, n->a), n->a->span);
		Value *cv = c.kind == S_VOID ? NULL : materialize(g, c, n->a->span);
		if (cv && cv->type.rank) {
			error(g, n->a->span, "a 'while' condition must be a scalar, found %s", tstr(g, cv->type));
			cv = NULL;
		}
		Value *fwd[1 + MAX_ARGS * 4] = {cv};
		for (int i = 0; i < nv; i++) {
			fwd[1 + i] = bargs[i];
			vars[i]->sym = entry[i];
		}
		if (cv)
			emit_op(g, OP_CONDITION, n->span, fwd, 1 + nv, NULL, 0);
		g->region = saved;
		if (!cv) {
			g->runtime_depth--;
			return;
		}
		/* region 1: the body */
		for (int i = 0; i < nv; i++)
			aargs[i] = ir_region_arg(g->f, &after, types[i]);
		scope_push(g, false);
		bool retype;
		bool ok = gen_loop_body(g, &after, n->b, vars, nv, aargs, types, init, &retype, n->span);
		scope_pop(g);
		g->runtime_depth--;
		if (!ok)
			return;
		if (!retype)
			break;
		ir_clear_region(&before);
		ir_clear_region(&after);
		if (attempt == 1) {
			error(g, n->span, "the types of the loop's variables do not settle");
			return;
		}
		for (int i = 0; i < nv; i++)
			if (!type_eq(init[i]->type, types[i]) && !(init[i] = coerce(g, vars[i]->sym, types[i], n->span))) {
				error(g, n->span, "'%s' enters the loop as %s but becomes %s", vars[i]->name,
				      sym_desc(g, vars[i]->sym), tstr(g, types[i]));
				return;
			}
	}
	Op *op = emit_op(g, OP_WHILE, n->span, init, nv, types, nv);
	if (!op)
		return;
	ir_move_region(&op->regions[0], &before);
	ir_move_region(&op->regions[1], &after);
	for (int i = 0; i < nv; i++)
		vars[i]->sym = value_sym(op->results[i]);
}

static void gen_stmt(Gen *g, Node *n)
{
	switch (n->kind) {
	case N_LET:
		gen_let(g, n);
		break;
	case N_ASSIGN:
		gen_assign(g, n);
		break;
	case N_EXPR_STMT:
		gen_expr(g, n->a);
		break;
	case N_IF:
		gen_if(g, n);
		break;
	case N_FOR:
		gen_for(g, n);
		break;
	case N_WHILE:
		gen_while(g, n);
		break;
	case N_BREAK:
	case N_CONTINUE:
		error(g, n->span, "'%s' is not supported yet: a loop runs to its end (use a 'while' condition)",
		      n->kind == N_BREAK ? "break" : "continue");
		break;
	case N_RETURN:
		if (g->runtime_depth > 0) {
			error(g, n->span, "'return' inside a runtime 'if' or loop is not supported; compute the value and "
			                  "return it at the end");
			break;
		}
		g->ret = n->a ? gen_expr(g, n->a) : (Sym){.kind = S_NONE};
		g->returned = true;
		break;
	case N_BLOCK:
		gen_block(g, n);
		break;
	default:
		error(g, n->span, "expected a statement");
		break;
	}
}

static void gen_block(Gen *g, Node *block)
{
	scope_push(g, false);
	for (int i = 0; i < block->list.len && !g->returned && !g->diag->stopped; i++)
		gen_stmt(g, block->list.items[i]);
	scope_pop(g);
}

/* ---- kernels ------------------------------------------------------------------ */

Node *irgen_find_kernel(Module *m, const char *name, Diag *diag)
{
	Node *found = NULL;
	int count = 0;
	for (int i = 0; i < m->file->list.len; i++) {
		Node *d = m->file->list.items[i];
		if (d->kind != N_KERNEL)
			continue;
		count++;
		if (name ? strcmp(d->name, name) == 0 : !found)
			found = d;
	}
	if (name && !found)
		diag_plain(diag, DIAG_ERROR, "%s: no kernel named '%s'", m->src->name, name);
	else if (!name && count == 0)
		diag_plain(diag, DIAG_ERROR, "%s: no kernel in this file", m->src->name);
	else if (!name && count > 1) {
		diag_plain(diag, DIAG_ERROR, "%s: %d kernels in this file; name one", m->src->name, count);
		return NULL;
	}
	return found;
}

static const ConstBinding *find_binding(const ConstBinding *b, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(b[i].name, name) == 0)
			return &b[i];
	return NULL;
}

/* A bound value; for a u64 parameter, i holds the bits (blk_const.i and
 * blk_arg_int are int64_t: values of 2^63 and more come negative). */
static Sym binding_sym(const ConstBinding *b, Type t)
{
	if (b->is_float)
		return weak_float(b->f);
	if (t.scalar == SK_U64 && !t.ptr && b->i < 0)
		return weak_int((__int128)(uint64_t)b->i);
	return weak_int(b->i);
}

/* Binds the kernel's parameters: const ones to their values, the others to
 * the body's arguments (or, for a grid clause, to given argument values). */
static bool bind_params_of_kernel(Gen *g, Node *k, const IrgenOptions *opt, const ConstBinding *args, int n_args)
{
	bool ok = true;
	int n = k->list.len;
	if (g->f) {
		g->f->params = arena_alloc(g->arena, (size_t)(n ? n : 1) * sizeof *g->f->params);
		if (!g->f->params)
			return false;
	}
	for (int i = 0; i < n; i++) {
		Node *p = k->list.items[i];
		Type t;
		bool is_const;
		if (!p->a || !resolve_type(g, p->a, &t, &is_const)) {
			ok = false;
			continue;
		}
		Sym v;
		if (is_const) {
			if (t.ptr) {
				error(g, p->a->span, "a const parameter must be a number, not a pointer");
				ok = false;
				continue;
			}
			const ConstBinding *b = find_binding(opt->consts, opt->n_consts, p->name);
			if (b) {
				v = const_to_type(g, binding_sym(b, t), t, p->span);
			} else if (p->b) {
				const char *no_ir = g->no_ir;
				g->no_ir = "the default of a const parameter must be known at compile time";
				v = gen_expr(g, p->b);
				g->no_ir = no_ir;
				v = v.kind == S_VOID ? VOID : const_to_type(g, v, t, p->b->span);
			} else {
				error(g, p->span, "the const parameter '%s' has no value: give it a default, -D %s=VALUE, or an "
				                  "@autotune config", p->name, p->name);
				ok = false;
				continue;
			}
			if (v.kind == S_VOID) {
				ok = false;
				continue;
			}
			if (g->f)
				g->f->params[i] = (IrParam){.name = p->name, .is_const = true, .type = t,
				                            .const_ival = v.i, .const_fval = v.f};
		} else if (p->b) {
			error(g, p->b->span, "only const parameters take defaults");
			ok = false;
			continue;
		} else if (g->f) {
			Value *arg = ir_region_arg(g->f, &g->f->body, t);
			if (!arg)
				return false;
			g->f->params[i] = (IrParam){.name = p->name, .value = arg, .type = t};
			v = value_sym(arg);
		} else {
			const ConstBinding *b = find_binding(args, n_args, p->name);
			v = b && !t.ptr ? const_to_type(g, binding_sym(b, t), t, p->span) : VOID;
		}
		bind(g, p->name, v, false, p->span);
	}
	if (g->f)
		g->f->n_params = n;
	/* A launch's own values for names that are not const parameters are
	 * most likely typos; module-wide defines apply where they fit. */
	for (int i = 0; i < opt->n_checked && i < opt->n_consts; i++) {
		const char *name = opt->consts[i].name;
		if (strcmp(name, "num_warps") == 0 || strcmp(name, "num_stages") == 0)
			continue;
		bool found = false;
		for (int j = 0; j < n && !found; j++) {
			Node *p = k->list.items[j];
			found = strcmp(p->name, name) == 0 && p->a && p->a->kind == N_TYPE_CONST;
		}
		if (!found) {
			diag_plain(g->diag, DIAG_ERROR, "kernel '%s' has no const parameter '%s'", k->name, name);
			ok = false;
		}
	}
	return ok;
}

static int option_int(const IrgenOptions *opt, const char *name, int given, int dflt)
{
	if (given > 0)
		return given;
	const ConstBinding *b = find_binding(opt->consts, opt->n_consts, name);
	return b && !b->is_float && b->i > 0 && b->i <= 64 ? (int)b->i : dflt;
}

IrFunc *irgen_kernel(Module *m, Node *k, const IrgenOptions *opt, Diag *diag, Arena *arena)
{
	int errors = diag->errors;
	Gen g = {.diag = diag, .arena = arena, .mod = m};
	g.f = ir_func_new(arena, k->name, k->span);
	if (!g.f)
		return NULL;
	g.f->num_warps = option_int(opt, "num_warps", opt->num_warps, 4);
	g.f->num_stages = option_int(opt, "num_stages", opt->num_stages, 3);
	if (g.f->num_warps & (g.f->num_warps - 1)) {
		diag_plain(diag, DIAG_ERROR, "num_warps must be a power of two, found %d", g.f->num_warps);
		return NULL;
	}
	g.region = &g.f->body;
	scope_push(&g, true);
	if (!bind_params_of_kernel(&g, k, opt, NULL, 0))
		return NULL;
	gen_block(&g, k->b);
	g.region = &g.f->body;
	g.no_ir = NULL;
	emit_op(&g, OP_RETURN, k->span, NULL, 0, NULL, 0);
	if (diag->errors != errors)
		return NULL;
	ir_renumber(g.f);
	return g.f;
}

bool irgen_grid(Module *m, Node *k, const IrgenOptions *opt, const ConstBinding *args, int n_args, int64_t grid[3],
                Diag *diag, Arena *arena)
{
	int errors = diag->errors;
	if (!k->a) {
		diag_plain(diag, DIAG_ERROR, "kernel '%s' has no grid(...) clause: give the grid explicitly", k->name);
		return false;
	}
	Gen g = {.diag = diag, .arena = arena, .mod = m};
	scope_push(&g, true);
	if (!bind_params_of_kernel(&g, k, opt, args, n_args))
		return false;
	g.no_ir = "a grid clause must be computable from the kernel's scalar arguments";
	if (k->a->list.len > 3) {
		error(&g, k->a->span, "a grid has at most 3 dimensions");
		return false;
	}
	for (int i = 0; i < 3; i++)
		grid[i] = 1;
	for (int i = 0; i < k->a->list.len; i++) {
		Node *e = k->a->list.items[i];
		Sym v = gen_expr(&g, e);
		if (v.kind == S_VOID)
			return false;
		if (v.kind != S_CONST || scalar_is_float((ScalarKind)v.type.scalar) || int_value(v) < 0 ||
		    int_value(v) > INT32_MAX) {
			error(&g, e->span, "a grid dimension must be a non-negative integer below 2^31, found %s",
			      v.kind == S_CONST ? arena_printf(arena, "%lld", (long long)int_value(v)) : sym_desc(&g, v));
			return false;
		}
		grid[i] = (int64_t)int_value(v);
	}
	return diag->errors == errors;
}

/* ---- attributes ------------------------------------------------------------- */

static bool is_const_param(Node *k, const char *name)
{
	for (int j = 0; j < k->list.len; j++) {
		Node *p = k->list.items[j];
		if (strcmp(p->name, name) == 0)
			return p->a && p->a->kind == N_TYPE_CONST;
	}
	return false;
}

static bool parse_config(Gen *g, Node *k, Node *cfg, ConstBinding **out, int *len)
{
	*len = cfg->list.len;
	*out = arena_alloc(g->arena, (size_t)(*len ? *len : 1) * sizeof **out);
	if (!*out)
		return false;
	for (int i = 0; i < cfg->list.len; i++) {
		Node *nv = cfg->list.items[i];
		if (!is_const_param(k, nv->name) && strcmp(nv->name, "num_warps") != 0 &&
		    strcmp(nv->name, "num_stages") != 0) {
			error(g, nv->span, "'%s' is not a const parameter of kernel '%s' (nor num_warps or num_stages)",
			      nv->name, k->name);
			return false;
		}
		Sym v = gen_expr(g, nv->a);
		if (v.kind != S_CONST) {
			if (v.kind != S_VOID)
				error(g, nv->a->span, "a configuration value must be a constant number, found %s", sym_desc(g, v));
			return false;
		}
		bool is_float = scalar_is_float((ScalarKind)v.type.scalar);
		(*out)[i] = (ConstBinding){.name = nv->name, .is_float = is_float, .i = is_float ? 0 : (int64_t)int_value(v),
		                           .f = is_float ? v.f : (double)int_value(v)};
	}
	return true;
}

bool irgen_autotune(Module *m, Node *k, AutotuneSpec *out, Diag *diag, Arena *arena)
{
	*out = (AutotuneSpec){0};
	int errors = diag->errors;
	Gen g = {.diag = diag, .arena = arena, .mod = m, .no_ir = "attribute arguments must be known at compile time"};
	scope_push(&g, true);
	for (int i = 0; i < k->attrs.len; i++) {
		Node *attr = k->attrs.items[i];
		if (strcmp(attr->name, "autotune") != 0) {
			diag_warning(diag, attr->span, "unknown attribute '@%s' is ignored", attr->name);
			continue;
		}
		for (int j = 0; j < attr->list.len; j++) {
			Node *arg = attr->list.items[j];
			if (arg->kind != N_NAMED_ARG || (strcmp(arg->name, "key") != 0 && strcmp(arg->name, "configs") != 0)) {
				error(&g, arg->span, "@autotune takes 'key = [...]' and 'configs = [{...}, ...]'");
				continue;
			}
			Node *list = arg->a;
			if (list->kind != N_LIST) {
				error(&g, list->span, "'%s' must be a list '[...]'", arg->name);
				continue;
			}
			if (strcmp(arg->name, "key") == 0) {
				out->key = arena_alloc(arena, (size_t)(list->list.len ? list->list.len : 1) * sizeof *out->key);
				for (int e = 0; out->key && e < list->list.len; e++) {
					Node *name = list->list.items[e];
					bool param = false;
					for (int p = 0; name->kind == N_IDENT && p < k->list.len && !param; p++)
						param = strcmp(((Node *)k->list.items[p])->name, name->name) == 0;
					if (!param) {
						error(&g, name->span, "an autotune key must name a parameter of '%s'", k->name);
						continue;
					}
					out->key[out->n_key++] = name->name;
				}
				continue;
			}
			int n = list->list.len;
			out->configs = arena_alloc(arena, (size_t)(n ? n : 1) * sizeof *out->configs);
			out->config_len = arena_alloc(arena, (size_t)(n ? n : 1) * sizeof *out->config_len);
			if (!out->configs || !out->config_len)
				return false;
			for (int e = 0; e < n; e++) {
				Node *cfg = list->list.items[e];
				if (cfg->kind != N_CONFIG) {
					error(&g, cfg->span, "each autotune config is written '{NAME = value, ...}'");
					continue;
				}
				if (parse_config(&g, k, cfg, &out->configs[out->n_configs], &out->config_len[out->n_configs]))
					out->n_configs++;
			}
			if (n == 0)
				error(&g, list->span, "@autotune needs at least one config");
		}
	}
	return diag->errors == errors;
}
