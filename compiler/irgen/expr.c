/* irgen/expr.c: expressions: the operators (with Triton's type promotion and
 * constant folding), conditions, indexing, fields and tuples. */
#include "irgen/irgen_int.h"

#include <math.h>
#include <string.h>

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
			double x = weak ? ig_const_as_double(a) : ig_const_in_kind(a, k);
			double y = weak ? ig_const_as_double(b) : ig_const_in_kind(b, k);
			r = tok == T_EQ ? x == y : tok == T_NE ? x != y : tok == T_LT ? x < y : tok == T_LE ? x <= y
			  : tok == T_GT ? x > y : x >= y;
		} else {
			__int128 x = ig_int_value(a), y = ig_int_value(b);
			r = tok == T_EQ ? x == y : tok == T_NE ? x != y : tok == T_LT ? x < y : tok == T_LE ? x <= y
			  : tok == T_GT ? x > y : x >= y;
		}
		return ig_const_int(SK_I1, r, weak);
	}
	if (scalar_is_float(k)) {
		double x = weak ? ig_const_as_double(a) : ig_const_in_kind(a, k);
		double y = weak ? ig_const_as_double(b) : ig_const_in_kind(b, k), r;
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
		return weak ? ig_weak_float(r) : ig_const_float(k, r, false);
	}
	__int128 x = ig_int_value(a), y = ig_int_value(b), r;
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
		if (!ig_fits(SK_I64, r) && !ig_fits(SK_U64, r)) {
			error(g, at, "constant expression overflows 64 bits");
			return VOID;
		}
		return weak_int(r);
	}
	return ig_const_int(k, r, false);
}

/* a OP b for pointers: ptr + int, int + ptr, ptr - int, comparisons of equal pointers. */
static Sym pointer_arith(Gen *g, int tok, Sym a, Sym b, Span at)
{
	Type ta = sym_type(a), tb = sym_type(b);
	if (is_cmp(tok) && ta.ptr && tb.ptr && ta.ptr == tb.ptr && ta.scalar == tb.scalar) {
		int rank;
		int32_t shape[BLK_MAX_RANK];
		if (!ig_common_shape(g, ta, tb, &rank, shape, at, "the operands"))
			return VOID;
		Value *x = ig_broadcast_to(g, ig_materialize(g, a, at), rank, shape, at);
		Value *y = ig_broadcast_to(g, ig_materialize(g, b, at), rank, shape, at);
		/* Addresses compare unsigned: ptr_to_int makes i64, reread as u64. */
		Type ti = type_block(type_scalar(SK_I64), rank, shape), tu = type_block(type_scalar(SK_U64), rank, shape);
		Value *ix = x ? ig_emit(g, OP_PTR_TO_INT, at, ti, x, NULL, NULL) : NULL;
		Value *iy = y ? ig_emit(g, OP_PTR_TO_INT, at, ti, y, NULL, NULL) : NULL;
		Value *cx = ix ? ig_emit(g, OP_BITCAST, at, tu, ix, NULL, NULL) : NULL;
		Value *cy = iy ? ig_emit(g, OP_BITCAST, at, tu, iy, NULL, NULL) : NULL;
		if (!cx || !cy)
			return VOID;
		Value *r = ig_emit(g, OP_CMP, at, type_block(type_scalar(SK_I1), rank, shape), cx, cy, NULL);
		if (r)
			r->def->attr[0] = cmp_pred(tok);
		return ig_value_sym(r);
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
		error(g, at, "invalid operands to '%s': %s and %s", token_kind_spelling(tok), ig_sym_desc(g, a), ig_sym_desc(g, b));
		return VOID;
	}
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!ig_common_shape(g, ta, tb, &rank, shape, at, "the pointer and the offset"))
		return VOID;
	Value *off;
	if (b.kind == S_CONST) {
		Sym c = b;
		if (tok == T_MINUS)
			c = ig_const_int((ScalarKind)(c.weak ? ig_literal_int_kind(-ig_int_value(c)) : c.type.scalar), -ig_int_value(c), c.weak);
		off = ig_emit_const(g, c, c.type, at);
	} else {
		off = b.v;
		if (tok == T_MINUS)
			off = ig_emit(g, OP_NEG, at, off->type, off, NULL, NULL);
	}
	/* unsigned offsets narrower than 64 bits are zero-extended: addptr is signed */
	if (off && scalar_is_unsigned((ScalarKind)off->type.scalar) && off->type.scalar != SK_U64)
		off = ig_cast_value(g, off, SK_I64, at);
	Value *p = ig_broadcast_to(g, ig_materialize(g, a, at), rank, shape, at);
	off = ig_broadcast_to(g, off, rank, shape, at);
	if (!p || !off)
		return VOID;
	return ig_value_sym(ig_emit(g, OP_ADDPTR, at, type_block(ta, rank, shape), p, off, NULL));
}

Sym ig_gen_binary(Gen *g, int tok, Sym a, Sym b, Span at)
{
	if (a.kind == S_VOID || b.kind == S_VOID)
		return VOID;
	/* types compare at compile time: T == f32 in a generic kernel's const if */
	if (a.kind == S_TYPE && b.kind == S_TYPE && (tok == T_EQ || tok == T_NE))
		return ig_const_int(SK_I1, type_eq(a.type, b.type) == (tok == T_EQ), false);
	if (!is_valueish(a) || !is_valueish(b)) {
		error(g, at, "invalid operands to '%s': %s and %s", token_kind_spelling(tok), ig_sym_desc(g, a), ig_sym_desc(g, b));
		return VOID;
	}
	Type ta = sym_type(a), tb = sym_type(b);
	if (ta.ptr || tb.ptr)
		return pointer_arith(g, tok, a, b, at);
	ScalarKind ka = (ScalarKind)ta.scalar, kb = (ScalarKind)tb.scalar, k;
	bool div_or_mod = tok == T_SLASH || tok == T_PERCENT;
	const char *why;
	if (!promote_arith(ka, a.kind == S_CONST, kb, b.kind == S_CONST, div_or_mod, &k, &why)) {
		error(g, at, "invalid operands to '%s' (%s and %s): %s", token_kind_spelling(tok), ig_sym_desc(g, a),
		      ig_sym_desc(g, b), why);
		return VOID;
	}
	if (is_bitwise(tok) && !scalar_is_int(k)) {
		error(g, at, "operator '%s' needs integer operands, found %s and %s", token_kind_spelling(tok),
		      ig_sym_desc(g, a), ig_sym_desc(g, b));
		return VOID;
	}
	if ((tok == T_SHL || tok == T_SHR) && k == SK_I1) {
		error(g, at, "operator '%s' does not shift i1 values (%s and %s): convert them first, as in m.to(i32)",
		      token_kind_spelling(tok), ig_sym_desc(g, a), ig_sym_desc(g, b));
		return VOID;
	}
	if (a.kind == S_CONST && b.kind == S_CONST)
		return fold_binary(g, tok, a, b, k, at);
	Sym lit = a.kind == S_CONST ? a : b, other = a.kind == S_CONST ? b : a;
	if (lit.kind == S_CONST && scalar_is_int(k) && k != SK_I1 && other.type.scalar == k &&
	    !scalar_is_float((ScalarKind)lit.type.scalar) && !ig_fits(k, ig_int_value(lit))) {
		error(g, at, "the constant %lld does not fit in %s, the element type of the other operand of '%s' (a constant "
		             "takes the type of what it meets): convert the operand first, as in x.to(i32)",
		      (long long)ig_int_value(lit), scalar_name(k), token_kind_spelling(tok));
		return VOID;
	}
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!ig_common_shape(g, ta, tb, &rank, shape, at, "the operands"))
		return VOID;
	Value *x = ig_broadcast_to(g, ig_to_elem(g, a, k, at), rank, shape, at);
	Value *y = ig_broadcast_to(g, ig_to_elem(g, b, k, at), rank, shape, at);
	if (!x || !y)
		return VOID;
	if (is_cmp(tok)) {
		Value *r = ig_emit(g, OP_CMP, at, type_block(type_scalar(SK_I1), rank, shape), x, y, NULL);
		if (r)
			r->def->attr[0] = cmp_pred(tok);
		return ig_value_sym(r);
	}
	return ig_value_sym(ig_emit(g, arith_code(tok), at, x->type, x, y, NULL));
}

/* Scalar condition of if/while/&&/||: an i1, or an integer compared with 0. */
Sym ig_truth(Gen *g, Sym s, Span at)
{
	if (s.kind == S_VOID)
		return VOID;
	if (!is_valueish(s) || s.type.ptr) {
		error(g, at, "expected a condition, found %s", ig_sym_desc(g, s));
		return VOID;
	}
	if (s.type.scalar == SK_I1)
		return s;
	if (s.kind == S_CONST)
		return ig_const_int(SK_I1, is_const_true(s), s.weak);
	Sym zero = weak_int(0);
	return ig_gen_binary(g, T_NE, s, zero, at);
}

static Sym gen_logical(Gen *g, int tok, Sym a, Sym b, Span at)
{
	a = ig_truth(g, a, at);
	b = ig_truth(g, b, at);
	if (a.kind == S_VOID || b.kind == S_VOID)
		return VOID;
	if (a.type.rank || b.type.rank) {
		error(g, at, "'%s' takes scalar conditions; combine masks with '%s'", token_kind_spelling(tok),
		      tok == T_ANDAND ? "&" : "|");
		return VOID;
	}
	return ig_gen_binary(g, tok == T_ANDAND ? T_AMP : T_PIPE, a, b, at);
}

Sym ig_gen_unary(Gen *g, int tok, Sym a, Span at)
{
	if (a.kind == S_VOID)
		return VOID;
	if (tok == T_STAR) { /* *T: the pointer type, as in x.to(*f16) */
		if (a.kind != S_TYPE) {
			error(g, at, "prefix '*' makes a pointer type from a type (as in *f16), found %s; to read memory write "
			             "load(p)", ig_sym_desc(g, a));
			return VOID;
		}
		if (a.type.ptr >= BLK_MAX_PTR_DEPTH || a.type.rank) {
			error(g, at, "pointers nest at most %d deep", BLK_MAX_PTR_DEPTH);
			return VOID;
		}
		return (Sym){.kind = S_TYPE, .type = type_pointer_to(a.type)};
	}
	if (!is_valueish(a) || a.type.ptr) {
		error(g, at, "invalid operand to unary '%s': %s", token_kind_spelling(tok), ig_sym_desc(g, a));
		return VOID;
	}
	ScalarKind k = (ScalarKind)a.type.scalar;
	switch (tok) {
	case T_PLUS:
		return a;
	case T_MINUS:
		if (a.kind == S_CONST) {
			if (scalar_is_float(k))
				return a.weak ? ig_weak_float(-a.f) : ig_const_float(k, -a.f, false);
			return a.weak ? weak_int(-ig_int_value(a)) : ig_const_int(k, -ig_int_value(a), false);
		}
		return ig_value_sym(ig_emit(g, OP_NEG, at, a.type, a.v, NULL, NULL));
	case T_TILDE:
		if (!scalar_is_int(k)) {
			error(g, at, "'~' needs an integer operand, found %s", ig_sym_desc(g, a));
			return VOID;
		}
		if (a.kind == S_CONST)
			return a.weak ? weak_int(~ig_int_value(a)) : ig_const_int(k, ~ig_int_value(a), false);
		return ig_value_sym(ig_emit(g, OP_NOT, at, a.type, a.v, NULL, NULL));
	case T_BANG:
		if (scalar_is_float(k)) {
			error(g, at, "'!' needs an i1 or integer operand, found %s", ig_sym_desc(g, a));
			return VOID;
		}
		if (k != SK_I1)
			return ig_gen_binary(g, T_EQ, a, weak_int(0), at);
		if (a.kind == S_CONST)
			return ig_const_int(SK_I1, !a.i, a.weak);
		return ig_value_sym(ig_emit(g, OP_NOT, at, a.type, a.v, NULL, NULL));
	}
	return VOID;
}

/* ---- expressions ------------------------------------------------------------ */

/* base[...]: a tuple item, or a block with new axes (None) between kept ones (:). */
static Sym gen_index(Gen *g, Node *n)
{
	Sym base = ig_gen_expr(g, n->a);
	if (base.kind == S_VOID)
		return VOID;
	if (base.kind == S_TUPLE) {
		if (n->list.len != 1 || ((Node *)n->list.items[0])->kind == N_SLICE) {
			error(g, n->span, "a tuple takes one integer index");
			return VOID;
		}
		Sym i = ig_gen_expr(g, n->list.items[0]);
		if (i.kind != S_CONST || scalar_is_float((ScalarKind)i.type.scalar)) {
			if (i.kind != S_VOID)
				error(g, ((Node *)n->list.items[0])->span, "a tuple index must be a constant integer");
			return VOID;
		}
		__int128 k = ig_int_value(i);
		if (k < 0)
			k += base.n;
		if (k < 0 || k >= base.n) {
			error(g, ((Node *)n->list.items[0])->span, "index %lld is out of range for a tuple of %d",
			      (long long)ig_int_value(i), base.n);
			return VOID;
		}
		return base.items[(int)k];
	}
	if (!is_valueish(base)) {
		error(g, n->a->span, "%s cannot be indexed", ig_sym_desc(g, base));
		return VOID;
	}
	for (int i = 0; i < n->list.len; i++) {
		Node *it = n->list.items[i];
		if (it->kind != N_NONE && !(it->kind == N_SLICE && !it->a && !it->b && !it->c))
			return ig_index_block(g, n, base); /* x[i], x[a:b]: builtins_index.c */
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
				error(g, it->span, "too many ':' for %s", ig_sym_desc(g, base));
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
	for (; kept < base.type.rank; kept++) { /* axes not mentioned at the end are kept */
		if (rank >= BLK_MAX_RANK) {
			error(g, n->span, "blocks have at most %d dimensions", BLK_MAX_RANK);
			return VOID;
		}
		shape[rank++] = base.type.shape[kept];
	}
	if (rank == base.type.rank)
		return base;
	Value *v = ig_materialize(g, base, n->a->span);
	if (!v)
		return VOID;
	Type t = type_block(v->type, rank, shape);
	return ig_value_sym(ig_emit(g, v->type.rank ? OP_RESHAPE : OP_SPLAT, n->span, t, v, NULL, NULL));
}

static Sym gen_field(Gen *g, Node *n)
{
	if (n->a->kind == N_IDENT && !ig_lookup_local(g, n->a->name)) {
		Module *m = module_alias(g->mod, n->a->name);
		if (m) {
			Module *owner;
			Node *decl = module_lookup(m, n->name, &owner);
			if (!decl) {
				error(g, n->span, "the module '%s' has no '%s'", n->a->name, n->name);
				return VOID;
			}
			return ig_decl_sym(g, decl, owner, n->span);
		}
	}
	if (ig_triton_namespace(g, n, false))
		return VOID;
	Sym base = ig_gen_expr(g, n->a);
	if (base.kind == S_VOID)
		return VOID;
	if (is_valueish(base) && strcmp(n->name, "shape") == 0)
		return ig_shape_sym(g, base.type);
	if (is_valueish(base) && strcmp(n->name, "dtype") == 0)
		return (Sym){.kind = S_TYPE, .type = type_elem(base.type)};
	/* a descriptor's fields: its shape and strides as given (scalars), its
	 * block shape (constants) and element type */
	if (base.kind == S_DESC) {
		bool shape = strcmp(n->name, "shape") == 0, strides = strcmp(n->name, "strides") == 0;
		if (shape || strides)
			return (Sym){.kind = S_TUPLE, .n = base.n, .items = base.items + (strides ? base.n : 0)};
		if (strcmp(n->name, "block_shape") == 0)
			return ig_shape_sym(g, base.type);
		if (strcmp(n->name, "dtype") == 0)
			return (Sym){.kind = S_TYPE, .type = type_elem(base.type)};
	}
	/* a pointer type's pointee (x.dtype.element_ty, as Triton writes it) */
	if (base.kind == S_TYPE && strcmp(n->name, "element_ty") == 0) {
		if (!base.type.ptr) {
			error(g, n->span, "'element_ty' of %s: only a pointer type has one", tstr(g, base.type));
			return VOID;
		}
		Sym t = base;
		t.type.ptr--;
		return t;
	}
	if (is_valueish(base) && strcmp(n->name, "T") == 0) {
		Args a = {.fname = "trans", .call = n->span, .n = 2};
		a.v[0] = base;
		a.at[0] = n->a->span;
		a.given[0] = true;
		return ig_bi_trans(g, &a, 0);
	}
	Nearest near;
	nearest_init(&near, n->name);
	if (is_valueish(base)) {
		nearest_consider(&near, "shape");
		nearest_consider(&near, "dtype");
		nearest_consider(&near, "T");
	}
	if (base.kind == S_DESC) {
		nearest_consider(&near, "shape");
		nearest_consider(&near, "strides");
		nearest_consider(&near, "block_shape");
		nearest_consider(&near, "dtype");
	}
	if (near.best)
		error(g, n->span, "%s has no field '%s'; did you mean '%s'?", ig_sym_desc(g, base), n->name, near.best);
	else
		error(g, n->span, "%s has no field '%s'", ig_sym_desc(g, base), n->name);
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
		t.items[i] = ig_gen_expr(g, it);
		if (t.items[i].kind == S_VOID)
			return VOID;
	}
	return t;
}

/* Whether a ternary's arm, generated into region r, may run whichever way
 * the condition goes: pure ops that cannot fault (no load, no integer
 * division or remainder, no gather, nothing with a region of its own). */
static bool speculatable(const Region *r)
{
	for (const Op *op = r->first; op; op = op->next) {
		if (!(op_flags(op->code) & OPF_PURE) || op->n_regions || op->code == OP_GATHER)
			return false;
		if ((op->code == OP_DIV || op->code == OP_REM) && !type_is_float(type_elem(op->results[0]->type)))
			return false;
	}
	return true;
}

/* c ? x : y for a runtime scalar c: only the chosen arm runs. Each arm is
 * generated into a region of its own; where both are speculatable their ops
 * join the current region and a select picks (as where(c, x, y)); otherwise
 * a runtime if runs one arm (arms without values, such as stores, too). */
static Sym gen_ternary(Gen *g, Node *n, Sym c)
{
	Region *saved = g->region;
	Region r[2] = {{0}, {0}};
	Sym v[2];
	Node *arm[2] = {n->b, n->c};
	for (int i = 0; i < 2; i++) {
		g->region = &r[i];
		v[i] = ig_gen_expr(g, arm[i]);
	}
	g->region = saved;
	if (v[0].kind == S_VOID || v[1].kind == S_VOID)
		return VOID;
	bool none = v[0].kind == S_NONE && v[1].kind == S_NONE;
	if (!none && speculatable(&r[0]) && speculatable(&r[1])) {
		ir_append_region(saved, &r[0]);
		ir_append_region(saved, &r[1]);
		Args a = {.fname = "?:", .call = n->span, .n = 3};
		a.v[0] = c;
		a.v[1] = v[0];
		a.v[2] = v[1];
		a.at[0] = n->a->span;
		a.at[1] = n->b->span;
		a.at[2] = n->c->span;
		return ig_bi_where(g, &a, 0);
	}
	Type t = {0};
	int nr = 0;
	if (!none) {
		if (!is_valueish(v[0]) || !is_valueish(v[1])) {
			error(g, n->span, "the arms of '?:' are %s and %s: both values, or both without one",
			      ig_sym_desc(g, v[0]), ig_sym_desc(g, v[1]));
			return VOID;
		}
		bool ptrs = v[0].type.ptr || v[1].type.ptr;
		ScalarKind k = (ScalarKind)v[0].type.scalar;
		const char *why = NULL;
		if (ptrs ? v[0].type.ptr != v[1].type.ptr || v[0].type.scalar != v[1].type.scalar
		         : !promote_arith((ScalarKind)v[0].type.scalar, v[0].kind == S_CONST, (ScalarKind)v[1].type.scalar,
		                          v[1].kind == S_CONST, false, &k, &why)) {
			error(g, n->span, "the arms of '?:': %s", why ? why : "pointers to different types");
			return VOID;
		}
		int rank;
		int32_t shape[BLK_MAX_RANK];
		if (!ig_common_shape(g, v[0].type, v[1].type, &rank, shape, n->span, "the arms of '?:'"))
			return VOID;
		Value *y[2];
		for (int i = 0; i < 2; i++) {
			g->region = &r[i];
			Value *e = ptrs ? ig_materialize(g, v[i], arm[i]->span) : ig_to_elem(g, v[i], k, arm[i]->span);
			y[i] = e ? ig_broadcast_to(g, e, rank, shape, arm[i]->span) : NULL;
			if (y[i])
				ig_emit_op(g, OP_YIELD, arm[i]->span, &y[i], 1, NULL, 0);
		}
		g->region = saved;
		if (!y[0] || !y[1])
			return VOID;
		t = y[0]->type;
		nr = 1;
	} else {
		for (int i = 0; i < 2; i++) {
			g->region = &r[i];
			ig_emit_op(g, OP_YIELD, arm[i]->span, NULL, 0, NULL, 0);
		}
		g->region = saved;
	}
	Value *cv = ig_materialize(g, c, n->a->span);
	Op *op = cv ? ig_emit_op(g, OP_IF, n->span, &cv, 1, &t, nr) : NULL;
	if (!op)
		return VOID;
	ir_move_region(&op->regions[0], &r[0]);
	ir_move_region(&op->regions[1], &r[1]);
	return nr ? ig_value_sym(op->results[0]) : (Sym){.kind = S_NONE};
}

Sym ig_gen_expr(Gen *g, Node *n)
{
	if (!ig_count_node(g, n->span))
		return VOID;
	switch (n->kind) {
	case N_IDENT:
		return ig_gen_ident(g, n);
	case N_INT:
		return weak_int(n->ival);
	case N_FLOAT:
		return ig_weak_float(n->fval);
	case N_STRING:
		return (Sym){.kind = S_STRING, .str = n->str, .len = n->len};
	case N_BOOL:
		return ig_const_int(SK_I1, n->ival, true);
	case N_NONE:
		return (Sym){.kind = S_NONE};
	case N_UNARY:
		return ig_gen_unary(g, n->op, ig_gen_expr(g, n->a), n->span);
	case N_BINARY:
		if (n->op == T_ANDAND || n->op == T_OROR) {
			Sym a = ig_truth(g, ig_gen_expr(g, n->a), n->a->span);
			/* constants short-circuit: the other side is not evaluated */
			if (a.kind == S_CONST && (n->op == T_ANDAND ? !a.i : a.i))
				return a;
			if (a.kind == S_CONST)
				return ig_truth(g, ig_gen_expr(g, n->b), n->b->span);
			return gen_logical(g, n->op, a, ig_gen_expr(g, n->b), n->span);
		}
		if (n->op == T_POW)
			return ig_gen_pow(g, n);
		/* the right operand first, as the generated code always had it */
		Sym b = ig_gen_expr(g, n->b), a = ig_gen_expr(g, n->a);
		if (!ig_operand_shapes(g, n, a, b))
			return VOID;
		return ig_gen_binary(g, n->op, a, b, n->span);
	case N_TERNARY: {
		Sym c = ig_truth(g, ig_gen_expr(g, n->a), n->a->span);
		if (c.kind == S_VOID)
			return VOID;
		if (c.kind == S_CONST)
			return ig_gen_expr(g, c.i ? n->b : n->c);
		if (!c.type.rank)
			return gen_ternary(g, n, c);
		Args a = {.fname = "?:", .call = n->span, .n = 3};
		a.v[0] = c;
		a.v[1] = ig_gen_expr(g, n->b);
		a.v[2] = ig_gen_expr(g, n->c);
		a.at[0] = n->a->span;
		a.at[1] = n->b->span;
		a.at[2] = n->c->span;
		if (a.v[1].kind == S_VOID || a.v[2].kind == S_VOID)
			return VOID;
		return ig_bi_where(g, &a, 0);
	}
	case N_CALL:
		return ig_gen_call(g, n);
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
