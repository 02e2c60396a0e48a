/* irgen/irgen.c: from the syntax tree of one kernel to tile IR: the entry
 * points, the kernel's parameters, scopes, and names (locals, global consts,
 * what modules declare).
 *
 * One walk does semantic analysis and IR construction together, the way a
 * kernel is specialized: const parameters have values, so constant
 * expressions fold as they are met, `if` on a constant takes one branch,
 * `static_range` unrolls, and each `fn` call is inlined with its arguments'
 * types. Every expression evaluates to a Sym: a compile-time constant, an IR
 * value, a tuple, a type, a function or a module. An error makes a "void"
 * Sym that later operations pass on silently, so one mistake is reported
 * once. */
#include "irgen/irgen_int.h"

#include <string.h>

/* ---- scopes -------------------------------------------------------------- */

Scope *ig_scope_push(Gen *g, bool fn_boundary)
{
	g->scope_depth++;
	Scope *s = arena_alloc(g->arena, sizeof *s);
	if (!s) {
		if (!g->oom)
			diag_plain(g->diag, DIAG_ERROR, "out of memory while generating the kernel's code");
		g->oom = true;
		return g->scope;
	}
	s->parent = g->scope;
	s->fn_boundary = fn_boundary;
	s->depth = g->scope_depth;
	g->scope = s;
	return s;
}

Binding *ig_scope_bind(Gen *g, const char *name, Sym sym, bool is_var, Span sp)
{
	Scope *s = g->scope;
	if (!s)
		return NULL; /* its push failed: out of memory, reported */
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
Binding *ig_lookup_local(Gen *g, const char *name)
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

/* ---- names ------------------------------------------------------------- */

bool irgen_is_type_param(const Node *param)
{
	const Node *t = param ? param->a : NULL;
	return t && t->kind == N_TYPE_CONST && t->a && t->a->kind == N_TYPE_NAME && strcmp(t->a->name, "type") == 0;
}

bool irgen_type_from_name(const char *s, Type *out)
{
	int depth = 0;
	while (s && *s == '*' && depth <= BLK_MAX_PTR_DEPTH) {
		s++;
		depth++;
	}
	ScalarKind k;
	if (!s || depth > BLK_MAX_PTR_DEPTH || !scalar_from_name(s, &k))
		return false;
	*out = type_scalar(k);
	out->ptr = (uint8_t)depth;
	return true;
}

/* A type named by an identifier that is not a scalar type's name: a const
 * type parameter (T) or a global const whose value is a type. */
static bool named_type(Gen *g, Node *n, Type *out)
{
	Binding *b = ig_lookup_local(g, n->name);
	Module *owner = NULL;
	Node *decl = b ? NULL : module_lookup(g->mod, n->name, &owner);
	if (!b && (!decl || decl->kind != N_CONST)) {
		if (strcmp(n->name, "type") == 0)
			error(g, n->span, "'type' is the kind of a const parameter: write 'T: const type'");
		else if (strcmp(n->name, "constexpr") == 0)
			error(g, n->span, "unknown type 'constexpr': a compile-time parameter is written 'NAME: const i32' "
			                  "(or 'const type' for a type)");
		else
			ig_unknown_name(g, n->span, "unknown type", n->name, NEAR_TYPES);
		return false;
	}
	Sym s = b ? b->sym : ig_decl_sym(g, decl, owner, n->span);
	if (s.kind == S_TYPE) {
		*out = s.type;
		return true;
	}
	if (s.kind != S_VOID) /* void: its error was reported where it was bound */
		error(g, n->span, "'%s' is %s, not a type", n->name, ig_sym_desc(g, s));
	return false;
}

bool ig_resolve_type(Gen *g, Node *n, Type *out, bool *is_const)
{
	if (is_const)
		*is_const = false;
	if (n->kind == N_TYPE_CONST) {
		if (!is_const) {
			error(g, n->span, "'const' is only meaningful on a parameter");
			return false;
		}
		*is_const = true;
		return ig_resolve_type(g, n->a, out, NULL);
	}
	if (n->kind == N_TYPE_PTR) {
		if (!ig_resolve_type(g, n->a, out, NULL))
			return false;
		if (out->ptr >= BLK_MAX_PTR_DEPTH) {
			error(g, n->span, "pointers nest at most %d deep", BLK_MAX_PTR_DEPTH);
			return false;
		}
		*out = type_pointer_to(*out);
		return true;
	}
	ScalarKind k;
	if (!scalar_from_name(n->name, &k))
		return named_type(g, n, out);
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
Sym ig_const_to_type(Gen *g, Sym v, Type t, Span at)
{
	if (v.kind != S_CONST || t.ptr) {
		error(g, at, "expected a constant %s, found %s", tstr(g, t), ig_sym_desc(g, v));
		return VOID;
	}
	ScalarKind k = (ScalarKind)t.scalar;
	if (scalar_is_float(k))
		return ig_const_float(k, ig_const_in_kind(v, k), false);
	if (scalar_is_float((ScalarKind)v.type.scalar)) {
		error(g, at, "expected an integer constant of type %s, found %s", scalar_name(k), ig_sym_desc(g, v));
		return VOID;
	}
	if (!ig_const_fits(g, v, k, at))
		return VOID;
	return ig_const_int(k, ig_int_value(v), false);
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
	int scope_depth = g->scope_depth;
	g->scope = NULL;
	ig_scope_push(g, true);
	g->mod = owner;
	g->no_ir = "the value of a const must be known at compile time";
	Sym v = ig_gen_expr(g, decl->b);
	if (v.kind == S_VALUE) {
		error(g, decl->b->span, "the value of const '%s' is not known at compile time", decl->name);
		v = VOID;
	}
	Type t;
	if (v.kind != S_VOID && decl->a) {
		v = ig_resolve_type(g, decl->a, &t, NULL) ? ig_const_to_type(g, v, t, decl->b->span) : VOID;
	}
	g->scope = scope;
	g->scope_depth = scope_depth;
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
Sym ig_decl_sym(Gen *g, Node *decl, Module *owner, Span at)
{
	if (decl->kind == N_CONST)
		return global_const(g, decl, owner);
	if (decl->kind == N_FN)
		return (Sym){.kind = S_FN, .fn = decl, .mod = owner};
	error(g, at, "kernel '%s' cannot be used inside a kernel", decl->name);
	return VOID;
}

Sym ig_gen_ident(Gen *g, Node *n)
{
	Binding *b = ig_lookup_local(g, n->name);
	if (b)
		return b->sym;
	Module *owner;
	Node *decl = module_lookup(g->mod, n->name, &owner);
	if (decl)
		return ig_decl_sym(g, decl, owner, n->span);
	Module *alias = module_alias(g->mod, n->name);
	if (alias)
		return (Sym){.kind = S_MODULE, .mod = alias};
	ScalarKind k;
	if (scalar_from_name(n->name, &k))
		return (Sym){.kind = S_TYPE, .type = type_scalar(k)};
	if (ig_find_builtin(n->name) || strcmp(n->name, "print") == 0)
		error(g, n->span, "'%s' is a builtin function; call it", n->name);
	else
		ig_unknown_name(g, n->span, "use of undeclared identifier", n->name, NEAR_VALUES);
	return VOID;
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
		StrBuf names = {0};
		for (int i = 0; i < m->file->list.len; i++) {
			Node *d = m->file->list.items[i];
			if (d->kind == N_KERNEL) {
				sb_puts(&names, names.len ? ", " : "");
				sb_puts(&names, d->name);
			}
		}
		diag_plain(diag, DIAG_ERROR, "%s: %d kernels in this file (%s); name one with -k NAME", m->src->name, count,
		           names.data ? names.data : "");
		sb_free(&names);
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
		return ig_weak_float(b->f);
	if (t.scalar == SK_U64 && !t.ptr && b->i < 0)
		return weak_int((__int128)(uint64_t)b->i);
	return weak_int(b->i);
}

/* The value of the const type parameter p: its binding or its default. */
static Sym bind_type_param(Gen *g, Node *p, const IrgenOptions *opt)
{
	const ConstBinding *b = find_binding(opt->consts, opt->n_consts, p->name);
	Type t;
	if (b && b->type && irgen_type_from_name(b->type, &t))
		return (Sym){.kind = S_TYPE, .type = t};
	if (b) {
		if (b->type)
			error(g, p->span, "the const parameter '%s' is a type, and '%s' names none (give one such as f16 or *f32)",
			      p->name, b->type);
		else if (b->is_float)
			error(g, p->span, "the const parameter '%s' is a type, but it was given the number %g (give a type "
			                  "such as f16)", p->name, b->f);
		else
			error(g, p->span, "the const parameter '%s' is a type, but it was given the number %lld (give a type "
			                  "such as f16)", p->name, (long long)b->i);
		return VOID;
	}
	if (!p->b) {
		error(g, p->span, "the const parameter '%s' has no value: give it a type as its default, -D %s=f16, or an "
		                  "@autotune config", p->name, p->name);
		return VOID;
	}
	const char *no_ir = g->no_ir;
	g->no_ir = "the default of a const parameter must be known at compile time";
	Sym v = ig_gen_expr(g, p->b);
	g->no_ir = no_ir;
	if (v.kind != S_TYPE && v.kind != S_VOID) {
		error(g, p->b->span, "the default of the const type parameter '%s' must be a type, found %s", p->name,
		      ig_sym_desc(g, v));
		return VOID;
	}
	return v;
}

/* The value of the const parameter p of type t (a number). */
static Sym bind_const_param(Gen *g, Node *p, Type t, const IrgenOptions *opt)
{
	if (t.ptr) {
		error(g, p->a->span, "a const parameter must be a number or a type, not a pointer");
		return VOID;
	}
	const ConstBinding *b = find_binding(opt->consts, opt->n_consts, p->name);
	if (b && b->type) {
		error(g, p->span, "the const parameter '%s' is a number (%s), but it was given the type %s", p->name,
		      tstr(g, t), b->type);
		return VOID;
	}
	if (b)
		return ig_const_to_type(g, binding_sym(b, t), t, p->span);
	if (p->b) {
		const char *no_ir = g->no_ir;
		g->no_ir = "the default of a const parameter must be known at compile time";
		Sym v = ig_gen_expr(g, p->b);
		g->no_ir = no_ir;
		return v.kind == S_VOID ? VOID : ig_const_to_type(g, v, t, p->b->span);
	}
	if (!g->consts_may_lack)
		error(g, p->span, "the const parameter '%s' has no value: give it a default, -D %s=VALUE, or an "
		                  "@autotune config", p->name, p->name);
	return VOID;
}

/* Binds the kernel's parameters: const ones to their values, the others to
 * the body's arguments (or, for a grid clause, to given argument values).
 * Const type parameters come first, so that any parameter's type may name
 * them (x: *T, T: const type). */
bool ig_bind_params_of_kernel(Gen *g, Node *k, const IrgenOptions *opt, const ConstBinding *args, int n_args)
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
		if (!irgen_is_type_param(p))
			continue;
		Sym v = bind_type_param(g, p, opt);
		ok &= v.kind == S_TYPE;
		if (g->f && v.kind == S_TYPE)
			g->f->params[i] = (IrParam){.name = p->name, .is_const = true, .is_type = true, .type = v.type};
		ig_scope_bind(g, p->name, v, false, p->span);
	}
	for (int i = 0; i < n; i++) {
		Node *p = k->list.items[i];
		Type t;
		bool is_const;
		if (irgen_is_type_param(p))
			continue;
		if (!p->a || !ig_resolve_type(g, p->a, &t, &is_const)) {
			ok = false;
			ig_scope_bind(g, p->name, VOID, false, p->span);
			continue;
		}
		Sym v;
		if (is_const) {
			v = bind_const_param(g, p, t, opt);
			if (v.kind == S_VOID) {
				ok = false;
				ig_scope_bind(g, p->name, VOID, false, p->span);
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
			v = ig_value_sym(arg);
		} else {
			const ConstBinding *b = find_binding(args, n_args, p->name);
			v = b && !t.ptr ? ig_const_to_type(g, binding_sym(b, t), t, p->span) : VOID;
		}
		ig_scope_bind(g, p->name, v, false, p->span);
	}
	if (g->f)
		g->f->n_params = n;
	/* A launch's own values for names that are not const parameters are
	 * most likely typos; module-wide defines apply where they fit. */
	for (int i = 0; i < opt->n_checked && i < opt->n_consts; i++) {
		const char *name = opt->consts[i].name;
		if (irgen_is_option(name))
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

bool irgen_is_option(const char *name)
{
	return option_find(name) >= 0;
}

const char *irgen_option_error(const ConstBinding *b, char *buf, size_t size)
{
	int id = option_find(b->name);
	char text[64];
	if (id < 0)
		return NULL;
	if (b->type)
		return option_check(id, b->type, 0, buf, size);
	if (b->is_float) {
		snprintf(text, sizeof text, "the float %g", b->f);
		return option_check(id, text, 0, buf, size);
	}
	return option_check(id, NULL, b->i, buf, size);
}

/* The launch's own num_warps or num_stages (0: not given). */
static int launch_field(const IrgenOptions *opt, int id)
{
	return id == OPTION_num_warps ? opt->num_warps : id == OPTION_num_stages ? opt->num_stages : 0;
}

int irgen_option_value(const IrgenOptions *opt, int id)
{
	if (launch_field(opt, id))
		return launch_field(opt, id);
	const ConstBinding *b = find_binding(opt->consts, opt->n_consts, option_table[id].name);
	if (b && !b->type && !b->is_float)
		return b->i >= INT32_MIN && b->i <= INT32_MAX ? (int)b->i : -1;
	return opt->defaults ? opt->defaults[id] : option_table[id].dflt;
}

/* Every option's value (reported when out of its range) into f's fields;
 * a const given twice is an error. */
static bool settle_options(IrFunc *f, const IrgenOptions *opt, Diag *diag)
{
	for (int i = 0; i < opt->n_consts; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(opt->consts[i].name, opt->consts[j].name) == 0) {
				diag_plain(diag, DIAG_ERROR, "const '%s' given twice", opt->consts[i].name);
				return false;
			}
	int v[OPTION_COUNT];
	for (int id = 0; id < OPTION_COUNT; id++) {
		char msg[160];
		const ConstBinding *b = find_binding(opt->consts, opt->n_consts, option_table[id].name);
		const char *bad = b ? irgen_option_error(b, msg, sizeof msg) : NULL;
		if (!bad && launch_field(opt, id))
			bad = option_check(id, NULL, launch_field(opt, id), msg, sizeof msg);
		if (bad) {
			diag_plain(diag, DIAG_ERROR, "%s", bad);
			return false;
		}
		v[id] = irgen_option_value(opt, id);
	}
#define OPTION_SET(name, ...) f->name = v[OPTION_##name];
	BLK_OPTIONS(OPTION_SET)
#undef OPTION_SET
	return true;
}

IrFunc *irgen_kernel(Module *m, Node *k, const IrgenOptions *opt, Diag *diag, Arena *arena)
{
	int errors = diag->errors;
	Gen g = {.diag = diag, .arena = arena, .mod = m, .arena_base = arena->used_total};
	g.f = ir_func_new(arena, k->name, k->span);
	if (!g.f)
		return NULL;
	if (!settle_options(g.f, opt, diag))
		return NULL;
	g.region = &g.f->body;
	ig_scope_push(&g, true);
	if (!ig_bind_params_of_kernel(&g, k, opt, NULL, 0))
		return NULL;
	ig_gen_body(&g, k->b);
	g.region = &g.f->body;
	g.no_ir = NULL;
	ig_emit_op(&g, OP_RETURN, k->span, NULL, 0, NULL, 0);
	if (diag->errors != errors)
		return NULL;
	ir_renumber(g.f);
	return g.f;
}
