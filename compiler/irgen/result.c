/* irgen/result.c: a fn's result set by a return inside a runtime if or loop.
 * Each value of the result is a hidden var, a slot ("#value", "#value1",
 * ...), which the ifs and loops carry like any var (stmt.c); the first such
 * return fixes how many there are, and each later one must give as many,
 * each a number where the others give a number and a pointer of the same
 * type where they give a pointer. A slot unset on a path holds a
 * placeholder there (0, or a null pointer), never read: the return flag
 * guards every use. */
#include "irgen/irgen_int.h"

#include <string.h>

bool ig_is_slot(const Binding *b)
{
	return b->is_var && !strncmp(b->name, FLAG_VALUE, sizeof FLAG_VALUE - 1);
}

/* A slot as messages name it: "the fn's result", or "value 2 of the fn's
 * result" for a tuple. */
const char *ig_slot_desc(Gen *g, const Binding *b)
{
	const FnResult *r = &g->res;
	if (r->n > 1 && b >= r->slots && b < r->slots + r->n)
		return arena_printf(g->arena, "value %d of the fn's result", (int)(b - r->slots) + 1);
	return "the fn's result";
}

/* The value of type t that an unset slot holds: 0, or a null pointer (a
 * scalar broadcast for a block). */
Value *ig_result_placeholder(Gen *g, Type t, Span at)
{
	if (!t.ptr)
		return ig_emit_const(g, ig_const_int(SK_I64, 0, false), t, at);
	Value *z = ig_emit_const(g, ig_const_int(SK_I64, 0, false), type_scalar(SK_I64), at);
	Value *p = z ? ig_emit(g, OP_INT_TO_PTR, at, type_elem(t), z, NULL, NULL) : NULL;
	return ig_broadcast_to(g, p, t.rank, t.shape, at);
}

static const char *count_desc(Gen *g, int n)
{
	return n == 1 ? "1 value" : arena_printf(g->arena, "%d values", n);
}

/* What a value is, for messages: "a pointer (*f32)", "a block of numbers
 * (f32[64])", "a float literal (f32)". */
static const char *kind_desc(Gen *g, Sym s)
{
	const char *what = s.type.ptr ? (s.type.rank ? "a block of pointers" : "a pointer")
	                 : s.type.rank ? "a block of numbers"
	                 : s.kind == S_CONST && s.weak ? (scalar_is_float((ScalarKind)s.type.scalar) ? "a float literal"
	                                                                                              : "an integer literal")
	                               : "a number";
	return arena_printf(g->arena, "%s (%s)", what, tstr(g, s.type));
}

/* Where value k of a return is written: its item in `return a, b;`, else
 * the whole statement. */
static Span value_span(const Node *ret, int k, int n)
{
	const Node *e = ret->a;
	if (n > 1 && e->kind == N_TUPLE && k < e->list.len)
		return ((const Node *)e->list.items[k])->span;
	return ret->span;
}

static void earlier(Gen *g, Span at)
{
	diag_note(g->diag, at, "the earlier 'return' is here");
}

/* A value whose element type is its own: a runtime value or a typed
 * constant (a literal takes the type of what it meets). */
static bool definite(Sym s)
{
	return s.kind == S_VALUE || (s.kind == S_CONST && !s.weak);
}

/* Whether two numbers may be values of one result: of one element type
 * where both have their own; a literal of the other's kind (a float
 * literal needs a float). */
static bool numbers_merge(Sym a, Sym b)
{
	if (definite(a) && definite(b))
		return a.type.scalar == b.type.scalar;
	if (definite(b)) {
		Sym t = a;
		a = b;
		b = t;
	}
	return !definite(a) || !scalar_is_float((ScalarKind)b.type.scalar) || scalar_is_float((ScalarKind)a.type.scalar);
}

/* Value k of a return (of n values), against what the earlier returns gave
 * (FnResult.ref; none for the first): reported when it cannot be merged
 * with them. */
static bool check_value(Gen *g, const Node *ret, Sym v, int k, int n)
{
	Span at = value_span(ret, k, n);
	const char *which = n > 1 ? arena_printf(g->arena, "value %d of ", k + 1) : "";
	const char *fn = g->cur_fn ? g->cur_fn->name : "?";
	if (!is_valueish(v)) {
		const char *fix = v.kind == S_TUPLE ? "return its values one by one in a flat tuple (return a, b, c;)"
		                                    : "return it at the end of the fn, outside any runtime 'if' or loop";
		error(g, at, "'return' of %s%s inside a runtime 'if' or loop is not supported (numbers, pointers, blocks of "
		             "them and tuples of these are); %s",
		      n > 1 ? "a tuple holding " : "", ig_sym_desc(g, v), fix);
		return false;
	}
	if (!g->res.n)
		return true;
	Sym f = g->res.ref[k];
	Span fat = g->res.ref_at[k];
	if (!f.type.ptr != !v.type.ptr) {
		const char *pt = tstr(g, type_elem(f.type.ptr ? f.type : v.type));
		error(g, at, "this 'return' gives %s as %sthe result of '%s', but an earlier 'return' gives %s; make both "
		             "pointers or both numbers: i.to(%s) turns an integer into a pointer (0.to(%s) is a null "
		             "pointer), p.to(i64) a pointer into an integer",
		      kind_desc(g, v), which, fn, kind_desc(g, f), pt, pt);
		earlier(g, fat);
		return false;
	}
	if (f.type.ptr && (f.type.ptr != v.type.ptr || f.type.scalar != v.type.scalar)) {
		error(g, at, "this 'return' gives %s as %sthe result of '%s', but an earlier 'return' gives %s; pointers of "
		             "two types cannot be one result: convert this one with .to(%s)",
		      kind_desc(g, v), which, fn, kind_desc(g, f), tstr(g, type_elem(f.type)));
		earlier(g, fat);
		return false;
	}
	if (!f.type.ptr && !numbers_merge(f, v) && !definite(v)) { /* a float literal where integers were given */
		error(g, at, "this 'return' gives %s as %sthe result of '%s', but an earlier 'return' gives %s; return an "
		             "integer here, or convert the earlier value with .to(%s)",
		      kind_desc(g, v), which, fn, kind_desc(g, f), scalar_name((ScalarKind)v.type.scalar));
		earlier(g, fat);
		return false;
	}
	if (!f.type.ptr && !numbers_merge(f, v)) {
		error(g, at, "this 'return' gives %s as %sthe result of '%s', but an earlier 'return' gives %s; convert this "
		             "one with .to(%s)",
		      kind_desc(g, v), which, fn, kind_desc(g, f), scalar_name((ScalarKind)f.type.scalar));
		earlier(g, fat);
		return false;
	}
	if (f.type.rank && v.type.rank && !type_eq(f.type, v.type)) { /* both values: their elements agree */
		error(g, at, "this 'return' gives %s as %sthe result of '%s', but an earlier 'return' gives %s; a result "
		             "keeps one shape: broadcast or reshape this one",
		      kind_desc(g, v), which, fn, kind_desc(g, f));
		earlier(g, fat);
		return false;
	}
	return true;
}

/* The first return with a value: n slots, unset. */
static bool make_slots(Gen *g, int n, Span at)
{
	FnResult *r = &g->res;
	r->slots = arena_alloc(g->arena, (size_t)n * sizeof *r->slots);
	r->ref = arena_alloc(g->arena, (size_t)n * sizeof *r->ref);
	r->ref_at = arena_alloc(g->arena, (size_t)n * sizeof *r->ref_at);
	if (!r->slots || !r->ref || !r->ref_at)
		return false;
	for (int k = 0; k < n; k++) {
		const char *name = k ? arena_printf(g->arena, FLAG_VALUE "%d", k) : FLAG_VALUE;
		if (!name)
			return false;
		r->slots[k] = (Binding){.name = name, .sym = VOID, .is_var = true, .span = at};
		r->ref[k] = VOID;
	}
	r->n = n;
	r->first_at = at;
	return true;
}

/* The values of `return v;` inside a runtime if or loop into the slots,
 * after the checks against the earlier returns. */
static bool set_result(Gen *g, const Node *ret, Sym v)
{
	int n = v.kind == S_TUPLE ? v.n : 1;
	const Sym *vals = v.kind == S_TUPLE ? v.items : &v;
	FnResult *r = &g->res;
	if (n < 1 || n > MAX_ARGS) {
		error(g, ret->span, "'return' of %s inside a runtime 'if' or loop is not supported (1 to %d values are); "
		                    "return it at the end of the fn, outside any runtime 'if' or loop",
		      ig_sym_desc(g, v), MAX_ARGS);
		return false;
	}
	if (r->n && n != r->n) {
		error(g, ret->span, "this 'return' gives %s, but an earlier 'return' of '%s' gives %s; every 'return' of a "
		                    "fn gives the same number of values: return %s here",
		      count_desc(g, n), g->cur_fn ? g->cur_fn->name : "?", count_desc(g, r->n), count_desc(g, r->n));
		earlier(g, r->first_at);
		return false;
	}
	for (int k = 0; k < n; k++)
		if (!check_value(g, ret, vals[k], k, n))
			return false;
	if (!r->n && !make_slots(g, n, ret->span))
		return false;
	for (int k = 0; k < n; k++) {
		Sym f = r->ref[k];
		if (f.kind == S_VOID || (!definite(f) && definite(vals[k])) || (!f.type.rank && vals[k].type.rank)) {
			r->ref[k] = vals[k];
			r->ref_at[k] = ret->span;
		}
		r->slots[k].sym = vals[k];
	}
	return true;
}

/* A return inside a runtime if or loop: sets the return flag (the rest of
 * the kernel or fn is guarded by it) and, in a fn, the result's slots. */
void ig_gen_nested_return(Gen *g, Node *n)
{
	Binding *flag = ig_lookup_local(g, FLAG_RETURN);
	if (!flag || !flag->is_var) {
		error(g, n->span, "'return' is not allowed here");
		return;
	}
	if (n->a) {
		Sym v = ig_gen_expr(g, n->a);
		if (v.kind == S_VOID)
			return;
		if (!g->in_fn) {
			error(g, n->span, "a kernel returns no value; write 'return;'");
			return;
		}
		if (!set_result(g, n, v)) { /* reported: the fn's result is nothing, so that its uses stay silent */
			g->res.failed = true;
			return;
		}
	}
	flag->sym = ig_const_int(SK_I1, 1, false);
}

/* The fn's result from its slots at the end of its body: one value, or a
 * tuple; VOID after an error in a return, or where a slot is unset. */
Sym ig_result_value(Gen *g)
{
	FnResult *r = &g->res;
	if (r->failed)
		return VOID;
	for (int k = 0; k < r->n; k++)
		if (r->slots[k].sym.kind == S_VOID)
			return VOID;
	if (r->n == 1)
		return r->slots[0].sym;
	Sym t = {.kind = S_TUPLE, .n = r->n};
	if (!(t.items = arena_alloc(g->arena, (size_t)r->n * sizeof *t.items)))
		return VOID;
	for (int k = 0; k < r->n; k++)
		t.items[k] = r->slots[k].sym;
	return t;
}
