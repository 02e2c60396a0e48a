/* irgen/stmt.c: statements: let/var, assignment, and control flow (if, for over
 * range and static_range, while), with the variables they carry; break,
 * continue and a return inside a runtime if or loop as hidden i1 variables
 * carried the same way (FLAG_* in irgen_int.h), and a fn's result set by
 * such a return as hidden vars too (its slots, result.c). */
#include "irgen/irgen_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void gen_stmt(Gen *g, Node *n);
static void gen_stmts(Gen *g, Node **items, int n);
static void gen_for_as_while(Gen *g, Node *n, Value *bounds[3], Sym step);

enum { MAX_CARRIED = MAX_ARGS * 4 }; /* vars one if or loop carries */

/* ---- statements -------------------------------------------------------------- */

static void bind_names(Gen *g, Node *let, Sym v)
{
	int n = let->list.len;
	if (v.kind == S_VOID) { /* bound to nothing: later uses stay silent */
		for (int i = 0; i < n; i++) {
			Node *id = let->list.items[i];
			ig_scope_bind(g, id->name, VOID, let->flag, id->span);
		}
		return;
	}
	if (n == 1) {
		Node *id = let->list.items[0];
		ig_scope_bind(g, id->name, v, let->flag, id->span);
		return;
	}
	if (v.kind != S_TUPLE || v.n != n) {
		error(g, let->b->span, "%d names are bound but the value is %s", n, ig_sym_desc(g, v));
		bind_names(g, let, VOID);
		return;
	}
	for (int i = 0; i < n; i++) {
		Node *id = let->list.items[i];
		ig_scope_bind(g, id->name, v.items[i], let->flag, id->span);
	}
}

static void gen_let(Gen *g, Node *n)
{
	Sym v = ig_gen_expr(g, n->b);
	if (v.kind != S_VOID && n->a) {
		Type t;
		if (!ig_resolve_type(g, n->a, &t, NULL))
			v = VOID;
		else if (v.kind == S_CONST)
			v = ig_const_to_type(g, v, t, n->b->span);
		else if (v.kind == S_VALUE && !(v.type.scalar == t.scalar && v.type.ptr == t.ptr)) {
			error(g, n->b->span, "declared %s, but the value is %s; convert it with .to(%s)", tstr(g, t),
			      ig_sym_desc(g, v), tstr(g, t));
			v = VOID;
		}
	}
	bind_names(g, n, v);
}

static Binding *assignable(Gen *g, Node *target)
{
	Binding *b = ig_lookup_local(g, target->name);
	if (!b) {
		Module *owner;
		if (module_lookup(g->mod, target->name, &owner))
			error(g, target->span, "cannot assign to the global '%s'", target->name);
		else
			ig_unknown_name(g, target->span, "use of undeclared identifier", target->name, NEAR_VALUES);
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

/* A shape as a tuple literal: (64,) or (64, 32). */
static const char *shape_tuple(Gen *g, Type t)
{
	StrBuf sb = {0};
	sb_putc(&sb, '(');
	for (int i = 0; i < t.rank; i++)
		sb_printf(&sb, i ? ", %d" : "%d", (int)t.shape[i]);
	sb_puts(&sb, t.rank == 1 ? ",)" : ")");
	const char *s = sb.data ? arena_strndup(g->arena, sb.data, sb.len) : "(...)";
	sb_free(&sb);
	return s ? s : "(...)";
}

/* A weak literal converts to the var's element type: an integer literal to
 * any integer or float type it fits, a float literal to any float type. */
static bool literal_converts(Sym v, Type t)
{
	if (v.kind != S_CONST || !v.weak || t.ptr || t.rank || v.type.scalar == SK_I1 || t.scalar == SK_I1)
		return false;
	return scalar_is_float((ScalarKind)t.scalar) || !scalar_is_float((ScalarKind)v.type.scalar);
}

static void assign_mismatch(Gen *g, const char *name, Sym v, Type t, Span at)
{
	Type vt = v.type;
	const char *vs = tstr(g, vt), *ts = tstr(g, t);
	if (vt.rank != t.rank || (vt.rank && !type_eq(type_block(vt, t.rank, t.shape), vt))) {
		if (t.rank == 0)
			error(g, at, "cannot assign %s to '%s' of type %s: a var keeps its shape; declare it as a block, "
			             "e.g. var %s = zeros(%s, %s)",
			      vs, name, ts, name, shape_tuple(g, vt), scalar_name((ScalarKind)vt.scalar));
		else
			error(g, at, "cannot assign %s to '%s' of type %s: a var keeps its shape", vs, name, ts);
		return;
	}
	if (v.kind == S_CONST && !scalar_is_float((ScalarKind)t.scalar) && scalar_is_float((ScalarKind)vt.scalar)) {
		char lit[64];
		snprintf(lit, sizeof lit, "%.17g", v.f);
		if (!strpbrk(lit, ".eni"))
			strcat(lit, ".0");
		const char *decl = v.weak && vt.scalar == SK_F32 ? arena_printf(g->arena, "var %s = 0.0", name)
		                                                 : arena_printf(g->arena, "var %s: %s = ...", name, vs);
		error(g, at, "cannot assign %s to '%s' of type %s; write %s = (%s).to(%s), or declare '%s' as %s (%s)", vs,
		      name, ts, name, lit, ts, name, vs, decl);
	} else if (t.ptr || vt.ptr)
		error(g, at, "cannot assign %s to '%s' of type %s", vs, name, ts);
	else
		error(g, at, "cannot assign %s to '%s' of type %s; convert the value with .to(%s), or declare '%s' as %s", vs,
		      name, ts, scalar_name((ScalarKind)t.scalar), name, vs);
}

/* v as the new value of the var `name` that holds old: a var keeps its
 * element type and shape (a literal is converted). VOID after an error. */
static Sym assign_value(Gen *g, const char *name, Sym old, Sym v, Span at)
{
	if (v.kind == S_VOID || old.kind == S_VOID)
		return v;
	if (old.kind == S_TUPLE) {
		if (v.kind != S_TUPLE || v.n != old.n) {
			error(g, at, "cannot assign %s to '%s', which holds %s", ig_sym_desc(g, v), name, ig_sym_desc(g, old));
			return VOID;
		}
		Sym t = v;
		t.items = arena_alloc(g->arena, (size_t)(v.n ? v.n : 1) * sizeof *t.items);
		if (!t.items)
			return VOID;
		for (int i = 0; i < v.n; i++)
			if ((t.items[i] = assign_value(g, name, old.items[i], v.items[i], at)).kind == S_VOID)
				return VOID;
		return t;
	}
	if (!is_valueish(old))
		return v;
	Type t = old.type;
	if (!is_valueish(v)) {
		error(g, at, "cannot assign %s to '%s' of type %s", ig_sym_desc(g, v), name, tstr(g, t));
		return VOID;
	}
	if (type_eq(v.type, t))
		return v;
	if (literal_converts(v, t)) {
		Sym c = ig_const_to_type(g, v, t, at);
		c.weak = c.kind == S_CONST && old.weak;
		return c;
	}
	assign_mismatch(g, name, v, t, at);
	return VOID;
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
	Sym v = ig_gen_expr(g, n->b);
	if (v.kind == S_VOID)
		return;
	if (n->op != T_ASSIGN)
		v = ig_gen_binary(g, compound_op(n->op), bs[0]->sym, v, n->span);
	if (nt == 1) {
		v = assign_value(g, bs[0]->name, bs[0]->sym, v, n->span);
		if (v.kind != S_VOID)
			bs[0]->sym = v;
		return;
	}
	if (v.kind != S_TUPLE || v.n != nt) {
		error(g, n->b->span, "%d targets are assigned but the value is %s", nt, ig_sym_desc(g, v));
		return;
	}
	Sym vs[MAX_ARGS];
	for (int i = 0; i < nt; i++) {
		Node *t = n->list.items[i];
		if ((vs[i] = assign_value(g, bs[i]->name, bs[i]->sym, v.items[i], t->span)).kind == S_VOID)
			return;
	}
	for (int i = 0; i < nt; i++)
		bs[i]->sym = vs[i];
}

/* ---- control flow ------------------------------------------------------------ */

/* Names assigned anywhere in n (targets of '=' and 'op='). */
static void collect_assigned(Gen *g, Node *n, PtrVec *out)
{
	if (!n)
		return;
	const char *flag = n->kind == N_BREAK ? FLAG_BREAK : n->kind == N_CONTINUE ? FLAG_CONTINUE
	                 : n->kind == N_RETURN ? FLAG_RETURN : NULL;
	for (int k = 0; flag && k < 2; k++) {
		const char *name = k ? (n->kind == N_RETURN && n->a ? FLAG_VALUE : NULL) : flag;
		bool seen = !name;
		for (int j = 0; j < out->len && !seen; j++)
			seen = strcmp(out->items[j], name) == 0;
		if (!seen)
			ptrvec_push(g->arena, out, (void *)name);
	}
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

static bool push_var(Gen *g, Binding **vars, int *n, Binding *b, Span at)
{
	if (*n == MAX_CARRIED) {
		error(g, at, "more than %d variables change inside this loop or 'if'; keep related values in blocks "
		             "(join, cat) or move part of the work into a loop of its own", MAX_CARRIED);
		return false;
	}
	vars[(*n)++] = b;
	return true;
}

/* The vars of `names` declared outside the region being made (FLAG_VALUE:
 * the fn result's slots); -1 after an error. */
static int resolve_vars(Gen *g, const PtrVec *names, Binding **out, Span at)
{
	int n = 0;
	for (int i = 0; i < names->len; i++) {
		if (!strcmp(names->items[i], FLAG_VALUE)) {
			for (int k = 0; k < g->res.n; k++)
				if (!push_var(g, out, &n, &g->res.slots[k], at))
					return -1;
			continue;
		}
		Binding *b = ig_lookup_local(g, names->items[i]);
		if (b && b->is_var && !push_var(g, out, &n, b, at))
			return -1;
	}
	return n;
}

/* The variables declared outside `body` that it may assign: they flow into
 * and out of the region as arguments and results; -1 after an error. */
static int carried_vars(Gen *g, Node *body, Binding **out, Span at)
{
	PtrVec names = {0};
	collect_assigned(g, body, &names);
	return resolve_vars(g, &names, out, at);
}

/* The fn result's slots made while generating a region's code (by the fn's
 * first return with a value), from *known on: added to vars, unset before
 * the region. */
static int add_new_slots(Gen *g, Binding **vars, int nv, int *known, Sym *before, Span at)
{
	for (; *known < g->res.n; ++*known) {
		Binding *s = &g->res.slots[*known];
		if (!push_var(g, vars, &nv, s, at)) {
			s->sym = VOID;
			continue;
		}
		before[nv - 1] = VOID;
	}
	return nv;
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
		if (!ig_const_fits(g, s, (ScalarKind)t.scalar, at))
			return NULL;
		return ig_emit_const(g, s, t, at);
	}
	if (s.kind != S_VALUE)
		return NULL;
	if (type_eq(s.v->type, t))
		return s.v;
	if (s.v->type.rank == 0 && t.rank && s.v->type.scalar == t.scalar && s.v->type.ptr == t.ptr)
		return ig_broadcast_to(g, s.v, t.rank, t.shape, at);
	return NULL;
}

static const char *shown(Gen *g, const Binding *b)
{
	return ig_is_slot(b) ? ig_slot_desc(g, b) : b->name;
}

/* A carried var's value at a loop's entry: for an unset slot of the fn's
 * result, 0 (a placeholder, retyped by the loop's body). */
static Sym entry_sym(const Binding *b)
{
	return ig_is_slot(b) && b->sym.kind == S_VOID ? weak_int(0) : b->sym;
}

/* A carried var's value at a loop's entry as type t: an unset slot's
 * placeholder of that type. */
static Value *entry_value(Gen *g, const Binding *b, Type t, Span at)
{
	if (ig_is_slot(b) && b->sym.kind == S_VOID)
		return ig_result_placeholder(g, t, at);
	return coerce(g, b->sym, t, at);
}

/* The type a carried variable has in IR: a constant's own type. */
static bool carried_type(Gen *g, Binding *b, Span at, Type *t)
{
	Sym s = entry_sym(b);
	if (s.kind == S_VALUE || s.kind == S_CONST) {
		*t = s.type;
		return true;
	}
	error(g, at, "'%s' is %s and cannot change inside a loop or a runtime 'if'", b->name, ig_sym_desc(g, s));
	return false;
}

/* Whether integer s needs i64 as a descriptor's size or stride (as
 * desc_load and desc_store decide: 64 bits wide, u32, or a constant past
 * i32). */
static bool index_wide(Sym s)
{
	if (s.kind == S_CONST)
		return !ig_fits(SK_I32, ig_int_value(s));
	return scalar_bits((ScalarKind)s.type.scalar) == 64 || s.type.scalar == SK_U32;
}

/* Whether components x and y of two descriptors are the same: one value,
 * or integer constants of one value (whatever their types: desc_load and
 * desc_store convert them, and a const parameter 1 as a stride is then
 * still a constant). */
static bool comp_same(Sym x, Sym y)
{
	if (x.kind == S_CONST && y.kind == S_CONST && !scalar_is_float((ScalarKind)x.type.scalar) &&
	    !scalar_is_float((ScalarKind)y.type.scalar))
		return ig_int_value(x) == ig_int_value(y);
	return sym_same(x, y);
}

/* ---- descriptors carried by loops -------------------------------------------- */

/* A descriptor var a loop carries, by its components: 0 its base, 1 + j its
 * item j (the sizes, then the strides). A component the body gives anew
 * is a part, a hidden var the loop carries (at vars[part[c]]); one the body
 * leaves as it entered stays the entry's (part[c] < 0): a descriptor
 * rebuilt the same each iteration carries nothing, and a constant stride
 * stays constant. */
typedef struct DescCarry {
	Binding *var;
	Sym entry;
	int part[1 + 2 * BLK_MAX_RANK];
} DescCarry;

typedef struct DescSet {
	DescCarry d[MAX_CARRIED];
	int n;
	bool grew; /* the last body made a part or widened one: generate it again */
} DescSet;

static Sym desc_comp(Sym d, int c) { return c ? d.items[c - 1] : ig_value_sym(d.v); }

/* Component c of a descriptor as a value of the part's type t, in the current region. */
static Value *comp_value(Gen *g, Sym s, int c, Type t, Span at)
{
	if (!c)
		return s.v;
	return ig_to_elem(g, s, (ScalarKind)t.scalar, at);
}

/* Takes the descriptor vars out of vars[0..*nv) into ds, with no parts yet. */
static void split_descs(Binding **vars, int *nv, DescSet *ds)
{
	int kept = 0;
	ds->n = 0;
	ds->grew = false;
	for (int i = 0; i < *nv; i++) {
		if (vars[i]->sym.kind != S_DESC || ig_is_slot(vars[i])) {
			vars[kept++] = vars[i];
			continue;
		}
		DescCarry *d = &ds->d[ds->n++];
		d->var = vars[i];
		d->entry = vars[i]->sym;
		for (int c = 0; c < 1 + 2 * BLK_MAX_RANK; c++)
			d->part[c] = -1;
	}
	*nv = kept;
}

/* Each descriptor var as its parts hold it now (vars[part]->sym), its other
 * components the entry's. False when out of memory. */
static bool pack_descs(Gen *g, Binding **vars, const DescSet *ds)
{
	for (int k = 0; k < ds->n; k++) {
		const DescCarry *d = &ds->d[k];
		Sym s = d->entry;
		s.items = arena_alloc(g->arena, (size_t)(2 * s.n) * sizeof *s.items);
		if (!s.items) {
			d->var->sym = VOID;
			return false;
		}
		for (int c = 0; c <= 2 * s.n; c++) {
			Sym p = d->part[c] < 0 ? desc_comp(d->entry, c) : vars[d->part[c]]->sym;
			if (c)
				s.items[c - 1] = p;
			else
				s.v = p.v;
		}
		d->var->sym = s;
	}
	return true;
}

static void restore_descs(const DescSet *ds)
{
	for (int k = 0; k < ds->n; k++)
		ds->d[k].var->sym = ds->d[k].entry;
}

/* After a loop body (in the current region): each descriptor var's
 * components into its parts, for the yield. A component the body changed
 * that has no part gets one, a part too narrow for the body's value is
 * made i64, their entry values made in `parent`: ds->grew, for another
 * attempt. False (reported) where the body left the var another kind of
 * descriptor or no descriptor. */
static bool unpack_descs(Gen *g, Region *parent, DescSet *ds, Binding **vars, int *nv, Value **init, Type *types,
                         Span at)
{
	ds->grew = false;
	for (int k = 0; k < ds->n; k++) {
		DescCarry *d = &ds->d[k];
		Sym s = d->var->sym, e = d->entry;
		if (s.kind != S_DESC || !type_eq(s.type, e.type) || s.n != e.n || !type_eq(s.v->type, e.v->type) ||
		    s.i != e.i) {
			if (s.kind != S_VOID)
				error(g, at, "'%s' is %s before the loop but %s after an iteration: a descriptor may change in a "
				      "loop only to one of the same element type, block shape and padding", d->var->name,
				      ig_sym_desc(g, e), ig_sym_desc(g, s));
			return false;
		}
		for (int c = 0; c <= 2 * e.n; c++) {
			Sym x = desc_comp(s, c), y = desc_comp(e, c);
			int p = d->part[c];
			if (p < 0 && comp_same(x, y))
				continue;
			bool wide = c && (index_wide(x) || index_wide(y));
			if (p < 0) {
				Binding *b = arena_alloc(g->arena, sizeof *b);
				if (!b || !push_var(g, vars, nv, b, at))
					return false;
				*b = (Binding){.name = d->var->name, .is_var = true, .span = d->var->span};
				p = d->part[c] = *nv - 1;
				types[p] = c ? type_scalar(wide ? SK_I64 : SK_I32) : y.v->type;
				init[p] = NULL;
			} else if (wide && types[p].scalar != SK_I64) {
				types[p] = type_scalar(SK_I64);
				init[p] = NULL;
			}
			if (!init[p]) { /* the entry's component, before the loop */
				Region *r = g->region;
				g->region = parent;
				init[p] = comp_value(g, y, c, types[p], at);
				g->region = r;
				if (!init[p])
					return false;
				vars[p]->sym = ig_value_sym(init[p]);
				ds->grew = true;
			}
			if (!ds->grew) {
				Value *v = comp_value(g, x, c, types[p], at);
				if (!v)
					return false;
				vars[p]->sym = ig_value_sym(v);
			}
		}
	}
	return true;
}

/* A static_range loop being unrolled: its copies from `from` on may be
 * the then part (after a copy that may break or return). */
typedef struct StaticLoop {
	Node *n;
	__int128 lo, step, count;
	int errors;
} StaticLoop;

/* The then part of a runtime if: a block, or (a guard) the rest of a block,
 * or the rest of a static_range's copies, after what may have set the
 * flags `flags`, which are false in it. */
typedef struct IfParts {
	Node *then_n, *else_n;
	Node **rest;
	int nrest;
	const StaticLoop *copies;
	__int128 from;
	Binding **flags;
	int nflags;
} IfParts;

static void static_copies(Gen *g, const StaticLoop *L, __int128 from);

static void runtime_if(Gen *g, Span span, Sym c, Span cspan, IfParts p);

static void gen_if(Gen *g, Node *n)
{
	Sym c = ig_truth(g, ig_gen_expr(g, n->a), n->a->span);
	if (c.kind == S_VOID)
		return;
	if (c.kind == S_CONST) { /* decided now: only the taken branch exists */
		if (c.i)
			ig_gen_block(g, n->b);
		else if (n->c)
			gen_stmt(g, n->c);
		return;
	}
	if (c.type.rank) {
		error(g, n->a->span, "an 'if' condition must be a scalar, found %s; use where() for blocks", ig_sym_desc(g, c));
		return;
	}
	runtime_if(g, n->span, c, n->a->span, (IfParts){.then_n = n->b, .else_n = n->c});
}

static void add_name(Gen *g, PtrVec *names, const char *name)
{
	for (int j = 0; j < names->len; j++)
		if (strcmp(names->items[j], name) == 0)
			return;
	ptrvec_push(g->arena, names, (void *)name);
}

/* The type a var has after a runtime if whose branches leave it a and b (a
 * slot of the fn's result unset on one side: the other side's). */
static bool merge_type(Gen *g, const Binding *var, Sym a, Sym b, Span span, Type *t)
{
	if (a.kind == S_VOID)
		a = b;
	if (b.kind == S_VOID)
		b = a;
	if (!is_valueish(a) || !is_valueish(b)) {
		error(g, span, "'%s' is %s after one branch and %s after the other", shown(g, var), ig_sym_desc(g, a),
		      ig_sym_desc(g, b));
		return false;
	}
	if (a.kind == S_VALUE)
		*t = a.type;
	else if (b.kind == S_VALUE)
		*t = b.type;
	else {
		ScalarKind k;
		const char *why;
		if (!promote_arith((ScalarKind)a.type.scalar, false, (ScalarKind)b.type.scalar, false, false, &k, &why)) {
			error(g, span, "'%s': %s", shown(g, var), why);
			return false;
		}
		*t = type_scalar(k);
	}
	if (a.kind == S_VALUE && b.kind == S_VALUE && b.v->type.rank > a.v->type.rank)
		*t = b.type;
	return true;
}

/* A tensor descriptor each branch of a runtime if leaves in a var (of one
 * block type): its base and each size and stride the branches give
 * differently become results of the if (sizes and strides in i64 where
 * either side's needs it, else i32), n_out of them from out_t[0], then_v and
 * else_v; *merged is the descriptor after the if, its items S_VOID where a
 * result (in order) goes (those the same on both sides, a literal 1 stride
 * among them, stay as they are). False (reported) where they cannot. */
static bool merge_desc(Gen *g, const Binding *var, Sym a, Sym b, Region *then_r, Region *else_r, Span span,
                       Type *out_t, Value **then_v, Value **else_v, int room, int *n_out, Sym *merged)
{
	if (!type_eq(a.type, b.type) || a.n != b.n || !type_eq(a.v->type, b.v->type) || a.i != b.i ||
	    1 + 2 * a.n > room) {
		error(g, span, "'%s' is %s after one branch and %s after the other: a descriptor may change in a runtime "
		      "'if' only to one of the same element type, block shape and padding", shown(g, var),
		      ig_sym_desc(g, a), ig_sym_desc(g, b));
		return false;
	}
	Region *saved = g->region;
	*merged = a;
	merged->items = arena_alloc(g->arena, (size_t)(2 * a.n) * sizeof *merged->items);
	if (!merged->items)
		return false;
	out_t[0] = a.v->type;
	then_v[0] = a.v;
	else_v[0] = b.v;
	int n = 1;
	for (int j = 0; j < 2 * a.n; j++) {
		Sym x = a.items[j], y = b.items[j];
		merged->items[j] = x;
		if (comp_same(x, y))
			continue;
		merged->items[j] = VOID;
		Type t = type_scalar(index_wide(x) || index_wide(y) ? SK_I64 : SK_I32);
		out_t[n] = t;
		g->region = then_r;
		then_v[n] = x.kind == S_CONST ? ig_emit_const(g, x, t, span) : ig_cast_value(g, x.v, t.scalar, span);
		g->region = else_r;
		else_v[n] = y.kind == S_CONST ? ig_emit_const(g, y, t, span) : ig_cast_value(g, y.v, t.scalar, span);
		if (!then_v[n] || !else_v[n]) {
			g->region = saved;
			return false;
		}
		n++;
	}
	g->region = saved;
	*n_out = n;
	return true;
}

static void runtime_if(Gen *g, Span span, Sym c, Span cspan, IfParts p)
{
	PtrVec names = {0};
	collect_assigned(g, p.then_n, &names);
	collect_assigned(g, p.else_n, &names);
	for (int i = 0; i < p.nrest; i++)
		collect_assigned(g, p.rest[i], &names);
	if (p.copies)
		collect_assigned(g, p.copies->n->b, &names);
	for (int i = 0; i < p.nflags; i++)
		add_name(g, &names, p.flags[i]->name);
	Binding *vars[MAX_CARRIED];
	int nv = resolve_vars(g, &names, vars, span), known = g->res.n;
	if (nv < 0)
		return;
	Sym before[MAX_CARRIED], after_then[MAX_CARRIED], after_else[MAX_CARRIED];
	for (int i = 0; i < nv; i++)
		before[i] = vars[i]->sym;
	Region *saved = g->region;
	Region then_r = {0}, else_r = {0};
	g->runtime_depth++;
	g->region = &then_r;
	if (p.rest || p.copies) {
		for (int i = 0; i < p.nflags; i++)
			p.flags[i]->sym = ig_const_int(SK_I1, 0, false);
		ig_scope_push(g, false);
		if (p.copies)
			static_copies(g, p.copies, p.from);
		else
			gen_stmts(g, p.rest, p.nrest);
		scope_pop(g);
	} else {
		ig_gen_block(g, p.then_n);
	}
	nv = add_new_slots(g, vars, nv, &known, before, span);
	for (int i = 0; i < nv; i++) {
		after_then[i] = vars[i]->sym;
		vars[i]->sym = before[i];
	}
	g->region = &else_r;
	if (p.else_n)
		gen_stmt(g, p.else_n);
	int nt = nv;
	nv = add_new_slots(g, vars, nv, &known, before, span);
	for (int i = 0; i < nv; i++) {
		after_then[i] = i < nt ? after_then[i] : VOID;
		after_else[i] = vars[i]->sym;
		vars[i]->sym = before[i];
	}
	g->runtime_depth--;
	/* The variables that differ between the branches become results. */
	Type types[MAX_CARRIED];
	Value *then_v[MAX_CARRIED], *else_v[MAX_CARRIED];
	Binding *res_vars[MAX_CARRIED];
	Sym desc_of[MAX_CARRIED]; /* where is_desc[i]: res_vars[i] a descriptor, results i.. its parts */
	bool is_desc[MAX_CARRIED] = {false};
	int nr = 0;
	bool ok = true;
	for (int i = 0; i < nv; i++) {
		Sym a = after_then[i], b = after_else[i];
		if (sym_same(a, b)) {
			vars[i]->sym = a;
			continue;
		}
		if (a.kind == S_DESC && b.kind == S_DESC) {
			int n = 0;
			if (!merge_desc(g, vars[i], a, b, &then_r, &else_r, span, types + nr, then_v + nr, else_v + nr,
			                MAX_CARRIED - nr, &n, &desc_of[nr])) {
				ok = false;
				continue;
			}
			for (int j = 0; j < n; j++)
				res_vars[nr + j] = NULL;
			res_vars[nr] = vars[i];
			is_desc[nr] = true;
			nr += n;
			continue;
		}
		if (a.kind == S_VOID || b.kind == S_VOID) {
			if (!ig_is_slot(vars[i])) { /* after an error */
				ok = false;
				continue;
			}
			if (a.kind == b.kind) /* a slot of the fn's result unset on both sides */
				continue;
		}
		Type t;
		if (!merge_type(g, vars[i], a, b, span, &t)) {
			ok = false;
			continue;
		}
		/* a slot of the fn's result unset on one side holds a placeholder there (never read) */
		g->region = &then_r;
		then_v[nr] = a.kind == S_VOID ? ig_result_placeholder(g, t, span) : coerce(g, a, t, span);
		g->region = &else_r;
		else_v[nr] = b.kind == S_VOID ? ig_result_placeholder(g, t, span) : coerce(g, b, t, span);
		if (!then_v[nr] || !else_v[nr]) {
			error(g, span, "'%s' is %s after the 'then' branch but %s after the 'else' branch", shown(g, vars[i]),
			      ig_sym_desc(g, a), ig_sym_desc(g, b));
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
	ig_emit_op(g, OP_YIELD, span, then_v, nr, NULL, 0);
	g->region = &else_r;
	ig_emit_op(g, OP_YIELD, span, else_v, nr, NULL, 0);
	g->region = saved;
	Value *cv = ig_materialize(g, c, cspan);
	Op *op = cv ? ig_emit_op(g, OP_IF, span, &cv, 1, types, nr) : NULL;
	if (!op)
		return;
	ir_move_region(&op->regions[0], &then_r);
	ir_move_region(&op->regions[1], &else_r);
	for (int i = 0; i < nr; i++) {
		if (!res_vars[i])
			continue;
		if (!is_desc[i]) {
			res_vars[i]->sym = ig_value_sym(op->results[i]);
			continue;
		}
		/* a descriptor: its base, then the sizes and strides that differed */
		Sym out = desc_of[i];
		out.v = op->results[i];
		for (int j = 0, r = i + 1; j < 2 * out.n; j++)
			if (out.items[j].kind == S_VOID)
				out.items[j] = ig_value_sym(op->results[r++]);
		res_vars[i]->sym = out;
	}
}

/* The loop-carried variables' entry values as IR values. */
static bool materialize_inits(Gen *g, Binding **vars, int nv, Value **init, Type *types, Span at)
{
	for (int i = 0; i < nv; i++) {
		if (!carried_type(g, vars[i], at, &types[i]))
			return false;
		init[i] = ig_materialize(g, entry_sym(vars[i]), at);
		if (!init[i])
			return false;
	}
	return true;
}

/* Whether n has a statement of kind k: break and continue of this loop
 * (not of a loop inside it), return anywhere. */
static bool has_stmt(const Node *n, NodeKind k)
{
	if (!n)
		return false;
	if (n->kind == k)
		return true;
	if ((n->kind == N_FOR || n->kind == N_WHILE) && k != N_RETURN)
		return false;
	if (has_stmt(n->a, k) || has_stmt(n->b, k) || has_stmt(n->c, k))
		return true;
	for (int i = 0; i < n->list.len; i++)
		if (has_stmt(n->list.items[i], k))
			return true;
	return false;
}

/* The slots of the fn's result that the loop body made (by the fn's first
 * return with a value), from `known` on: added to the loop's vars, from
 * their placeholders (in the loop's parent region) of the types the body
 * gave them, for another attempt. False after an error. */
static bool add_loop_slots(Gen *g, Region *parent, int known, Binding **vars, int *nv, Value **init, Type *types,
                           Span at)
{
	Region *r = g->region;
	bool ok = true;
	for (int k = known; ok && k < g->res.n; k++) {
		Sym s = g->res.slots[k].sym;
		int i = *nv;
		if (!(ok = is_valueish(s) && push_var(g, vars, nv, &g->res.slots[k], at)))
			break;
		types[i] = s.type;
		g->region = parent;
		ok = (init[i] = ig_result_placeholder(g, types[i], at)) != NULL;
		g->region = r;
	}
	for (int k = known; k < g->res.n; k++) /* unset before the loop */
		g->res.slots[k].sym = VOID;
	return ok;
}

/* Generates a loop body into r, then yields the carried variables' values.
 * On a type change of a variable that entered as a constant, or slots of
 * the fn's result made in the body (more vars: *nv), sets *retype and the
 * new types so that the caller can try again; on parts of descriptors made
 * or widened (more vars too), ds->grew. */
static bool gen_loop_body(Gen *g, Region *r, Node *body, Binding **vars, int *pnv, Value **args, Type *types,
                          Value **init, bool *retype, DescSet *ds, Span at)
{
	int nv = *pnv, known = g->res.n;
	Sym before[MAX_CARRIED];
	for (int i = 0; i < nv; i++) {
		before[i] = vars[i]->sym;
		vars[i]->sym = ig_value_sym(args[i]);
		/* an iteration starts only while the loop's flags are false */
		if (!strcmp(vars[i]->name, FLAG_BREAK) || !strcmp(vars[i]->name, FLAG_RETURN))
			vars[i]->sym = ig_const_int(SK_I1, 0, false);
		else if (ig_is_slot(vars[i])) /* read only after a return in this iteration */
			vars[i]->sym = VOID;
	}
	Region *saved = g->region;
	g->region = r;
	int errors = g->diag->errors;
	bool ok = pack_descs(g, vars, ds);
	ig_scope_push(g, false);
	if (has_stmt(body, N_CONTINUE))
		ig_scope_bind(g, FLAG_CONTINUE, ig_const_int(SK_I1, 0, false), true, body->span);
	if (ok)
		ig_gen_block(g, body);
	scope_pop(g);
	Value *yield[MAX_CARRIED];
	ok = ok && g->diag->errors == errors && unpack_descs(g, saved, ds, vars, pnv, init, types, at);
	*retype = false;
	for (int i = 0; ok && !ds->grew && i < nv; i++) {
		Sym s = vars[i]->sym;
		bool slot = ig_is_slot(vars[i]);
		yield[i] = slot && s.kind == S_VOID ? ig_result_placeholder(g, types[i], at) : coerce(g, s, types[i], at);
		if (yield[i])
			continue;
		bool placeholder = before[i].kind == S_CONST || (slot && before[i].kind == S_VOID);
		if (is_valueish(s) && placeholder && init[i]->def && init[i]->def->code == OP_CONST) {
			types[i] = s.type; /* entered as a constant: take the type the body gives */
			*retype = true;
			continue;
		}
		if (slot && s.kind == S_VALUE && !types[i].rank && type_eq(type_elem(s.type), types[i])) {
			types[i] = s.type; /* a fn's scalar result, a block in the body: broadcast at the entry */
			*retype = true;
			continue;
		}
		error(g, at, "'%s' is %s before the loop but %s after an iteration", shown(g, vars[i]), tstr(g, types[i]),
		      ig_sym_desc(g, s));
		ok = false;
	}
	if (g->res.n > known) {
		ok = add_loop_slots(g, saved, known, vars, pnv, init, types, at) && ok;
		*retype = true;
	}
	if (ok && !*retype && !ds->grew)
		ok = ig_emit_op(g, OP_YIELD, at, yield, nv, NULL, 0) != NULL;
	g->region = saved;
	for (int i = 0; i < nv; i++)
		vars[i]->sym = before[i];
	restore_descs(ds);
	return ok;
}

static bool range_args(Gen *g, Node *call, Sym out[3], Span at[3], int64_t *unroll)
{
	int n = call->list.len;
	*unroll = 0;
	/* the trailing options: num_stages = N (the pipelining hint: checked;
	 * the depth is the kernel's num_stages), unroll = N (a hint to the GPU
	 * back end: llvm.loop.unroll.count); None means the default */
	for (Node *last; n && (last = call->list.items[n - 1])->kind == N_NAMED_ARG &&
	                 (!strcmp(last->name, "num_stages") || !strcmp(last->name, "unroll"));
	     n--) {
		Sym s = ig_gen_expr(g, last->a);
		if (s.kind == S_VOID)
			return false;
		if (s.kind == S_NONE)
			continue;
		if (s.kind != S_CONST || s.type.rank || !scalar_is_int((ScalarKind)s.type.scalar) || ig_int_value(s) < 1) {
			error(g, last->span, "%s of a range must be a constant integer of at least 1, found %s", last->name,
			      ig_sym_desc(g, s));
			return false;
		}
		if (!strcmp(last->name, "unroll"))
			*unroll = (int64_t)ig_int_value(s);
	}
	if (n < 1 || n > 3) {
		error(g, call->span, "range takes 1 to 3 arguments: range(end), range(start, end), range(start, end, step)");
		return false;
	}
	for (int i = 0; i < n; i++)
		if (((Node *)call->list.items[i])->kind == N_NAMED_ARG) {
			error(g, ((Node *)call->list.items[i])->span,
			      "range takes positional arguments, num_stages = N and unroll = N; found '%s'",
			      ((Node *)call->list.items[i])->name);
			return false;
		}
	Sym v[3];
	for (int i = 0; i < n; i++) {
		Node *arg = call->list.items[i];
		v[i] = ig_gen_expr(g, arg);
		at[i] = arg->span;
		if (v[i].kind == S_VOID)
			return false;
		if (!is_valueish(v[i]) || v[i].type.rank || v[i].type.ptr || !scalar_is_int((ScalarKind)v[i].type.scalar)) {
			error(g, arg->span, "range bounds must be integer scalars, found %s", ig_sym_desc(g, v[i]));
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
	__int128 lo = ig_int_value(r[0]), hi = ig_int_value(r[1]), step = ig_int_value(r[2]);
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
	ig_scope_push(g, false);
	if (has_stmt(n->b, N_BREAK))
		ig_scope_bind(g, FLAG_BREAK, ig_const_int(SK_I1, 0, false), true, n->span);
	StaticLoop L = {n, lo, step, count, g->diag->errors};
	static_copies(g, &L, 0);
	scope_pop(g);
}

/* The copies of a static_range body from `from` on; after one that may have
 * broken out or returned, the rest go under an 'if' of the flags' negation,
 * as the statements of a block do. */
static void static_copies(Gen *g, const StaticLoop *L, __int128 from)
{
	static const char *const names[] = {FLAG_BREAK, FLAG_RETURN};
	bool has_continue = has_stmt(L->n->b, N_CONTINUE);
	for (__int128 i = from; i < L->count && !g->returned && g->diag->errors == L->errors; i++) { /* an error: once */
		ig_scope_push(g, false);
		ig_scope_bind(g, L->n->name, weak_int(L->lo + i * L->step), false, L->n->span);
		if (has_continue)
			ig_scope_bind(g, FLAG_CONTINUE, ig_const_int(SK_I1, 0, false), true, L->n->span);
		ig_gen_block(g, L->n->b);
		scope_pop(g);
		Binding *flags[2];
		int nf = 0;
		for (int k = 0; k < 2; k++) {
			Binding *b = ig_lookup_local(g, names[k]);
			if (!b || !b->is_var)
				continue;
			if (b->sym.kind == S_CONST && is_const_true(b->sym))
				return;
			if (b->sym.kind == S_VALUE)
				flags[nf++] = b;
		}
		if (!nf || i + 1 == L->count)
			continue;
		Span at = L->n->b->span;
		Sym any = nf == 2 ? ig_gen_binary(g, T_PIPE, flags[0]->sym, flags[1]->sym, at) : flags[0]->sym;
		Sym go = ig_gen_unary(g, T_BANG, any, at);
		if (go.kind == S_VALUE)
			runtime_if(g, at, go, at, (IfParts){.copies = L, .from = i + 1, .flags = flags, .nflags = nf});
		return;
	}
}

/* A loop body whose variables changed type: the entry values coerced to
 * the new types for another attempt (false, reported, on the second). */
static bool retype_inits(Gen *g, Node *n, int attempt, Binding **vars, int nv, Value **init, const Type *types)
{
	if (attempt == 1) {
		error(g, n->span, "the types of the loop's variables do not settle");
		return false;
	}
	for (int i = 0; i < nv; i++)
		if (!type_eq(init[i]->type, types[i]) && !(init[i] = entry_value(g, vars[i], types[i], n->span))) {
			error(g, n->span, "'%s' enters the loop as %s but becomes %s", shown(g, vars[i]),
			      ig_sym_desc(g, vars[i]->sym), tstr(g, types[i]));
			return false;
		}
	return true;
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
	int64_t unroll;
	if (!range_args(g, it, r, at, &unroll))
		return;
	if (strcmp(it->a->name, "static_range") == 0) {
		gen_static_for(g, n, r, at);
		return;
	}
	if (r[2].kind == S_CONST && ig_int_value(r[2]) == 0) {
		error(g, at[2], "the step of range cannot be 0");
		return;
	}
	/* The induction variable's type: i32, or i64 when a bound is 64-bit. */
	ScalarKind k = SK_I32;
	for (int i = 0; i < 3; i++)
		if (!r[i].weak && scalar_bits((ScalarKind)r[i].type.scalar) == 64)
			k = SK_I64;
	Value *bounds[3];
	for (int i = 0; i < 3; i++)
		if (!(bounds[i] = ig_to_elem(g, r[i], k, at[i])))
			return;
	Binding *ret = ig_lookup_local(g, FLAG_RETURN);
	if (has_stmt(n->b, N_BREAK) || (ret && ret->is_var && has_stmt(n->b, N_RETURN))) {
		gen_for_as_while(g, n, bounds, r[2]);
		return;
	}
	Binding *vars[MAX_CARRIED];
	int nv = carried_vars(g, n->b, vars, n->span);
	Value *init[MAX_CARRIED];
	Type types[MAX_CARRIED];
	DescSet *ds = arena_alloc(g->arena, sizeof *ds);
	if (nv < 0 || !ds)
		return;
	split_descs(vars, &nv, ds);
	if (!materialize_inits(g, vars, nv, init, types, n->span))
		return;
	Region body = {0};
	Value *args[MAX_CARRIED];
	for (int attempt = 0;;) {
		body = (Region){0};
		Value *iv = ir_region_arg(g->f, &body, type_scalar(k));
		for (int i = 0; i < nv; i++)
			args[i] = ir_region_arg(g->f, &body, types[i]);
		ig_scope_push(g, false);
		ig_scope_bind(g, n->name, ig_value_sym(iv), false, n->span);
		g->runtime_depth++;
		bool retype;
		bool ok = gen_loop_body(g, &body, n->b, vars, &nv, args, types, init, &retype, ds, n->span);
		g->runtime_depth--;
		scope_pop(g);
		if (!ok)
			return;
		if (!retype && !ds->grew)
			break;
		ir_clear_region(&body);
		if (retype && !retype_inits(g, n, attempt++, vars, nv, init, types))
			return;
	}
	Value *operands[3 + MAX_CARRIED] = {bounds[0], bounds[1], bounds[2]};
	for (int i = 0; i < nv; i++)
		operands[3 + i] = init[i];
	Op *op = ig_emit_op(g, OP_FOR, n->span, operands, 3 + nv, types, nv);
	if (!op)
		return;
	op->attr[0] = unroll;
	ir_move_region(&op->regions[0], &body);
	for (int i = 0; i < nv; i++)
		vars[i]->sym = ig_value_sym(op->results[i]);
	pack_descs(g, vars, ds);
}

/* cv && !flag for the flags carried by the loop (in its condition region,
 * where they are the region's arguments). */
static Value *and_not_flags(Gen *g, Value *cv, Span at)
{
	static const char *const names[] = {FLAG_BREAK, FLAG_RETURN};
	for (int k = 0; k < 2 && cv; k++) {
		Binding *b = ig_lookup_local(g, names[k]);
		if (!b || !b->is_var || b->sym.kind != S_VALUE)
			continue;
		Sym c = ig_gen_binary(g, T_AMP, ig_value_sym(cv), ig_gen_unary(g, T_BANG, b->sym, at), at);
		cv = c.kind == S_VOID ? NULL : ig_materialize(g, c, at);
	}
	return cv;
}

static void while_loop(Gen *g, Node *n);

/* A while loop, with the flag of a break in it. */
static void gen_while(Gen *g, Node *n)
{
	ig_scope_push(g, false);
	if (has_stmt(n->b, N_BREAK))
		ig_scope_bind(g, FLAG_BREAK, ig_const_int(SK_I1, 0, false), true, n->span);
	while_loop(g, n);
	scope_pop(g);
}

static Node *mk_node(Gen *g, NodeKind kind, Span at, Node *a, Node *b)
{
	Node *n = arena_alloc(g->arena, sizeof *n);
	if (n) {
		n->kind = kind;
		n->span = at;
		n->a = a;
		n->b = b;
	}
	return n;
}

static Node *mk_ident(Gen *g, const char *name, Span at)
{
	Node *n = mk_node(g, N_IDENT, at, NULL, NULL);
	if (n)
		n->name = name;
	return n;
}

static Node *mk_binary(Gen *g, int op, Node *a, Node *b, Span at)
{
	Node *n = a && b ? mk_node(g, N_BINARY, at, a, b) : NULL;
	if (n)
		n->op = op;
	return n;
}

/* A for loop with a break or a return in it, as the while loop
 *   var #iv = start; while (#iv < end, or > for a negative step) {
 *       let i = #iv; #iv += step; body }
 * (the step before the body, so that a continue takes it too). */
static void gen_for_as_while(Gen *g, Node *n, Value *bounds[3], Sym step)
{
	Span at = n->span;
	ig_scope_push(g, false);
	ig_scope_bind(g, "#iv", ig_value_sym(bounds[0]), true, at);
	ig_scope_bind(g, "#end", ig_value_sym(bounds[1]), false, at);
	ig_scope_bind(g, "#step", ig_value_sym(bounds[2]), false, at);
	Node *up = mk_binary(g, T_LT, mk_ident(g, "#iv", at), mk_ident(g, "#end", at), at);
	Node *down = mk_binary(g, T_GT, mk_ident(g, "#iv", at), mk_ident(g, "#end", at), at);
	Node *cond = step.kind == S_CONST ? (ig_int_value(step) > 0 ? up : down) : NULL;
	if (!cond) {
		Node *zero = mk_node(g, N_INT, at, NULL, NULL);
		Node *pos = mk_binary(g, T_GT, mk_ident(g, "#step", at), zero, at);
		Node *neg = mk_binary(g, T_LT, mk_ident(g, "#step", at), zero, at);
		cond = mk_binary(g, T_OROR, mk_binary(g, T_ANDAND, pos, up, at), mk_binary(g, T_ANDAND, neg, down, at), at);
	}
	Node *let = mk_node(g, N_LET, at, NULL, mk_ident(g, "#iv", at));
	Node *name = mk_ident(g, n->name, at);
	Node *inc = mk_node(g, N_ASSIGN, at, NULL, mk_ident(g, "#step", at));
	Node *iv = mk_ident(g, "#iv", at);
	Node *body = mk_node(g, N_BLOCK, at, NULL, NULL);
	Node *loop = mk_node(g, N_WHILE, at, cond, body);
	if (cond && let && name && inc && iv && loop) {
		name->span = n->span;
		ptrvec_push(g->arena, &let->list, name);
		inc->op = T_PLUS_ASSIGN;
		ptrvec_push(g->arena, &inc->list, iv);
		ptrvec_push(g->arena, &body->list, let);
		ptrvec_push(g->arena, &body->list, inc);
		ptrvec_push(g->arena, &body->list, n->b);
		gen_while(g, loop);
	}
	scope_pop(g);
}

static void while_loop(Gen *g, Node *n)
{
	Binding *vars[MAX_CARRIED];
	int nv = carried_vars(g, n->b, vars, n->span);
	Value *init[MAX_CARRIED];
	Type types[MAX_CARRIED];
	DescSet *ds = arena_alloc(g->arena, sizeof *ds);
	if (nv < 0 || !ds)
		return;
	split_descs(vars, &nv, ds);
	if (!materialize_inits(g, vars, nv, init, types, n->span))
		return;
	Region before = {0}, after = {0};
	Region *saved = g->region;
	for (int attempt = 0;;) {
		before = (Region){0};
		after = (Region){0};
		/* region 0: the condition over the carried values */
		Value *bargs[MAX_CARRIED], *aargs[MAX_CARRIED];
		Sym entry[MAX_CARRIED];
		for (int i = 0; i < nv; i++) {
			bargs[i] = ir_region_arg(g->f, &before, types[i]);
			entry[i] = vars[i]->sym;
			vars[i]->sym = ig_value_sym(bargs[i]);
		}
		g->region = &before;
		g->runtime_depth++;
		Sym c = pack_descs(g, vars, ds) ? ig_truth(g, ig_gen_expr(g, n->a), n->a->span) : VOID;
		restore_descs(ds);
		Value *cv = c.kind == S_VOID ? NULL : ig_materialize(g, c, n->a->span);
		if (cv && cv->type.rank) {
			error(g, n->a->span, "a 'while' condition must be a scalar, found %s", tstr(g, cv->type));
			cv = NULL;
		}
		cv = and_not_flags(g, cv, n->a->span);
		Value *fwd[1 + MAX_CARRIED] = {cv};
		for (int i = 0; i < nv; i++) {
			fwd[1 + i] = bargs[i];
			vars[i]->sym = entry[i];
		}
		if (cv)
			ig_emit_op(g, OP_CONDITION, n->span, fwd, 1 + nv, NULL, 0);
		g->region = saved;
		if (!cv) {
			g->runtime_depth--;
			return;
		}
		/* region 1: the body */
		for (int i = 0; i < nv; i++)
			aargs[i] = ir_region_arg(g->f, &after, types[i]);
		ig_scope_push(g, false);
		bool retype;
		bool ok = gen_loop_body(g, &after, n->b, vars, &nv, aargs, types, init, &retype, ds, n->span);
		scope_pop(g);
		g->runtime_depth--;
		if (!ok)
			return;
		if (!retype && !ds->grew)
			break;
		ir_clear_region(&before);
		ir_clear_region(&after);
		if (retype && !retype_inits(g, n, attempt++, vars, nv, init, types))
			return;
	}
	Op *op = ig_emit_op(g, OP_WHILE, n->span, init, nv, types, nv);
	if (!op)
		return;
	ir_move_region(&op->regions[0], &before);
	ir_move_region(&op->regions[1], &after);
	for (int i = 0; i < nv; i++)
		vars[i]->sym = ig_value_sym(op->results[i]);
	pack_descs(g, vars, ds);
}

/* break and continue set their loop's flag; in a static_range loop (whose
 * flags are bound as non-vars) they are not supported. */
static void gen_break(Gen *g, Node *n)
{
	const char *what = n->kind == N_BREAK ? "break" : "continue";
	Binding *b = ig_lookup_local(g, n->kind == N_BREAK ? FLAG_BREAK : FLAG_CONTINUE);
	if (!b || !b->is_var) {
		error(g, n->span, "'%s' outside a loop", what);
		return;
	}
	b->sym = ig_const_int(SK_I1, 1, false);
}

static void gen_stmt(Gen *g, Node *n)
{
	if (!ig_count_node(g, n->span))
		return;
	switch (n->kind) {
	case N_LET:
		gen_let(g, n);
		break;
	case N_ASSIGN:
		gen_assign(g, n);
		break;
	case N_EXPR_STMT:
		ig_gen_expr(g, n->a);
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
		gen_break(g, n);
		break;
	case N_RETURN:
		if (g->runtime_depth > 0) {
			ig_gen_nested_return(g, n);
			break;
		}
		g->ret = n->a ? ig_gen_expr(g, n->a) : (Sym){.kind = S_NONE};
		g->returned = true;
		break;
	case N_BLOCK:
		ig_gen_block(g, n);
		break;
	default:
		error(g, n->span, "expected a statement");
		break;
	}
}

/* The statements items[0..n) of one block: after one that set a flag at
 * run time, the rest runs under an 'if' of the flags' negation; after one
 * that set it for certain, the rest is left out. */
static void gen_stmts(Gen *g, Node **items, int n)
{
	static const char *const names[] = {FLAG_BREAK, FLAG_CONTINUE, FLAG_RETURN};
	for (int i = 0; i < n && !g->returned && !g->diag->stopped; i++) {
		gen_stmt(g, items[i]);
		if (i + 1 == n)
			break;
		Binding *flags[3];
		int nf = 0;
		bool stop = false;
		for (int k = 0; k < 3; k++) {
			Binding *b = ig_lookup_local(g, names[k]);
			if (!b || !b->is_var)
				continue;
			if (b->sym.kind == S_CONST)
				stop |= is_const_true(b->sym);
			else if (b->sym.kind == S_VALUE)
				flags[nf++] = b;
		}
		if (stop)
			break;
		if (!nf)
			continue;
		Span at = ((Node *)items[i + 1])->span;
		Sym any = flags[0]->sym;
		for (int k = 1; k < nf; k++)
			any = ig_gen_binary(g, T_PIPE, any, flags[k]->sym, at);
		Sym go = ig_gen_unary(g, T_BANG, any, at);
		if (go.kind != S_VALUE)
			return;
		runtime_if(g, at, go, at,
		           (IfParts){.rest = items + i + 1, .nrest = n - i - 1, .flags = flags, .nflags = nf});
		break;
	}
}

void ig_gen_block(Gen *g, Node *block)
{
	ig_scope_push(g, false);
	gen_stmts(g, (Node **)block->list.items, block->list.len);
	scope_pop(g);
}

void ig_gen_body(Gen *g, Node *block)
{
	ig_scope_bind(g, FLAG_RETURN, ig_const_int(SK_I1, 0, false), true, block->span);
	ig_gen_block(g, block);
	/* a fn's result set by returns inside runtime ifs or loops (its slots
	 * are unset before the first) */
	Binding *flag = ig_lookup_local(g, FLAG_RETURN);
	bool may_return = flag && !(flag->sym.kind == S_CONST && !is_const_true(flag->sym));
	if (g->res.failed || (!g->returned && g->res.n && may_return)) {
		g->ret = ig_result_value(g);
		g->returned = true;
	}
}
