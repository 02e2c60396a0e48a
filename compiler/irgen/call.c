/* irgen/call.c: calls: the callee resolved, the arguments evaluated and bound
 * to a builtin's parameters, print, and `fn` helpers inlined at each call. */
#include "irgen/irgen_int.h"

#include <string.h>

/* ---- calls ---------------------------------------------------------------- */

/* Binds raw arguments to parameters spelled "a b c? d?" (a trailing ?
 * marks an optional one). Reports missing, unknown and extra arguments. */
static bool bind_params(Gen *g, const char *fname, const char *spec, const RawArgs *raw, Args *out)
{
	const char *names[MAX_ARGS];
	bool optional[MAX_ARGS];
	int n = 0;
	/* A hand scan, not strtok: several threads compile at once. */
	for (const char *p = spec; *p && n < MAX_ARGS;) {
		while (*p == ' ')
			p++;
		size_t len = strcspn(p, " ");
		if (len == 0)
			break;
		optional[n] = p[len - 1] == '?';
		names[n] = arena_strndup(g->arena, p, optional[n] ? len - 1 : len);
		n++;
		p += len;
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
		if (!(vals[n++] = ig_materialize(g, raw->pos[i], raw->pos_at[i])))
			return VOID;
	Op *op = ig_emit_op(g, OP_PRINT, raw->call, vals, n, NULL, 0);
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

Sym ig_gen_call(Gen *g, Node *call)
{
	Node *callee = call->a;
	RawArgs raw = {.call = call->span};
	const char *name;
	Module *in_mod = NULL;
	if (callee->kind == N_FIELD) {
		name = callee->name;
		Node *base = callee->a;
		if (base->kind == N_IDENT && !ig_lookup_local(g, base->name) && (in_mod = module_alias(g->mod, base->name))) {
			/* m.f(...) with m an imported module */
		} else {
			if (ig_triton_namespace(g, callee, true))
				return VOID;
			Sym self = ig_gen_expr(g, base);
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
			raw.named[raw.n_named] = ig_gen_expr(g, arg->a);
			failed |= raw.named[raw.n_named++].kind == S_VOID;
		} else {
			raw.pos_at[raw.n_pos] = arg->span;
			raw.pos[raw.n_pos] = ig_gen_expr(g, arg);
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
		return ig_call_fn(g, decl, owner, &raw);
	}
	Binding *b = ig_lookup_local(g, name);
	if (b && callee->kind == N_IDENT) {
		if (b->sym.kind == S_FN)
			return ig_call_fn(g, b->sym.fn, b->sym.mod, &raw);
		error(g, callee->span, "'%s' is %s, not a function", name, ig_sym_desc(g, b->sym));
		return VOID;
	}
	Node *decl = module_lookup(g->mod, name, &owner);
	if (decl && decl->kind == N_FN)
		return ig_call_fn(g, decl, owner, &raw);
	if (decl && decl->kind == N_KERNEL) {
		error(g, callee->span, "cannot call kernel '%s' from a kernel", name);
		return VOID;
	}
	if (strcmp(name, "print") == 0)
		return gen_print(g, &raw);
	/* on a tensor descriptor, load, store, the atomics, gather and scatter
	 * (d.load(offsets), atomic_add(d, offsets, v)) are desc_load ... */
	static const char *const desc_ops[][2] = {
		{"load", "desc_load"},             {"store", "desc_store"},           {"atomic_add", "desc_atomic_add"},
		{"atomic_max", "desc_atomic_max"}, {"atomic_min", "desc_atomic_min"}, {"atomic_and", "desc_atomic_and"},
		{"atomic_or", "desc_atomic_or"},   {"atomic_xor", "desc_atomic_xor"}, {"gather", "desc_gather"},
		{"scatter", "desc_scatter"}};
	for (size_t i = 0; raw.n_pos && raw.pos[0].kind == S_DESC && i < sizeof desc_ops / sizeof desc_ops[0]; i++)
		if (strcmp(name, desc_ops[i][0]) == 0) {
			name = desc_ops[i][1];
			break;
		}
	const Builtin *bi = ig_find_builtin(name);
	if (bi)
		return call_builtin(g, bi, &raw);
	if (decl)
		error(g, callee->span, "'%s' is a constant, not a function", name);
	else if (callee->kind == N_FIELD)
		ig_unknown_name(g, callee->span, "no function to call as a method named", name, NEAR_FNS);
	else
		ig_unknown_name(g, callee->span, "call to undeclared function", name, NEAR_FNS);
	return VOID;
}

/* ---- fn inlining ------------------------------------------------------------ */

/* s converted to the declared type t of a fn parameter or result. */
static Sym check_declared(Gen *g, Sym s, Type t, Span at, const char *what)
{
	if (s.kind == S_CONST && !t.ptr)
		return ig_const_to_type(g, s, t, at);
	if (s.kind == S_VALUE && s.type.scalar == t.scalar && s.type.ptr == t.ptr)
		return s;
	if (s.kind != S_VOID)
		error(g, at, "%s must be %s, found %s", what, tstr(g, t), ig_sym_desc(g, s));
	return VOID;
}

/* Binds parameter p of fn to its argument (NULL: not given, its default),
 * checking a declared type; a const parameter takes only a compile-time
 * value (a constant, or for `const type` a type). */
static bool bind_fn_param(Gen *g, Node *fn, Node *p, const Sym *arg, Span at, Span call)
{
	Sym v;
	if (arg) {
		v = *arg;
	} else if (p->b) {
		v = ig_gen_expr(g, p->b); /* defaults see the parameters before them */
		at = p->b->span;
	} else {
		error(g, call, "missing argument '%s' of '%s'", p->name, fn->name);
		diag_note(g->diag, fn->span, "'%s' is declared here", fn->name);
		return false;
	}
	if (v.kind == S_VOID)
		return false;
	if (irgen_is_type_param(p)) {
		if (v.kind != S_TYPE) {
			error(g, at, "argument '%s' of '%s' is a const type parameter: give it a type (such as f16 or x.dtype), "
			             "found %s", p->name, fn->name, ig_sym_desc(g, v));
			return false;
		}
	} else if (p->a) {
		Type t;
		bool is_const;
		if (!ig_resolve_type(g, p->a, &t, &is_const))
			return false;
		if (is_const && v.kind != S_CONST) {
			error(g, at, "argument '%s' of '%s' is a const parameter: it needs a value known at compile time (a "
			             "constant or a const parameter), found %s", p->name, fn->name,
			      v.kind == S_VALUE ? arena_printf(g->arena, "a runtime %s", ig_sym_desc(g, v)) : ig_sym_desc(g, v));
			return false;
		}
		v = check_declared(g, v, t, at, arena_printf(g->arena, "argument '%s' of '%s'", p->name, fn->name));
	}
	return v.kind != S_VOID && ig_scope_bind(g, p->name, v, false, p->span);
}

Sym ig_call_fn(Gen *g, Node *fn, Module *mod, RawArgs *raw)
{
	if (g->inline_limit)
		return VOID; /* reported: stop inlining at once */
	if (g->inline_depth >= MAX_INLINE_DEPTH) {
		error(g, raw->call, "calls nested more than %d deep (is '%s' recursive?)", MAX_INLINE_DEPTH, fn->name);
		g->inline_limit = true;
		return VOID;
	}
	if (++g->inlined_calls > MAX_INLINED_CALLS) {
		error(g, raw->call, "inlining '%s' goes over the limit of %d fn calls inlined into one kernel (do fns call "
		                    "each other several times in a chain?)",
		      fn->name, MAX_INLINED_CALLS);
		g->inline_limit = true;
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
	int scope_depth = g->scope_depth;
	Module *saved_mod = g->mod;
	bool returned = g->returned, in_fn = g->in_fn;
	Sym ret = g->ret;
	FnResult res = g->res;
	int runtime_depth = g->runtime_depth;
	g->scope = NULL;
	ig_scope_push(g, true);
	g->mod = mod;
	Node *outer_fn = g->outer_fn;
	if (!g->inline_depth)
		g->outer_fn = fn;
	g->inline_depth++;
	bool ok = true;
	/* const type parameters first: the types of the others may name them */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; ok && i < n; i++) {
			Node *p = fn->list.items[i];
			if (irgen_is_type_param(p) != (pass == 0))
				continue;
			ok = bind_fn_param(g, fn, p, given[i] ? &args[i] : NULL, given[i] ? at[i] : raw->call, raw->call);
		}
	g->in_fn = true;
	g->returned = false;
	g->ret = (Sym){.kind = S_NONE};
	g->res = (FnResult){0};
	g->runtime_depth = 0;
	int errors = g->diag->errors;
	Node *caller = g->cur_fn;
	g->cur_fn = fn;
	if (ok)
		ig_gen_body(g, fn->b);
	g->cur_fn = caller;
	/* errors in the body point at the fn; say which call it was inlined for
	 * (once for a recursion: at the call from outside) */
	if (g->diag->errors != errors && caller != fn && (!g->inline_limit || g->inline_depth == 1))
		diag_note(g->diag, raw->call, "in this call of '%s'", fn->name);
	Sym result = ok ? g->ret : VOID;
	if (ok && fn->a) {
		Type t;
		result = ig_resolve_type(g, fn->a, &t, NULL) ? check_declared(g, result, t, fn->a->span,
		                                                           arena_printf(g->arena, "the result of '%s'", fn->name))
		                                          : VOID;
	}
	g->inline_depth--;
	g->outer_fn = outer_fn;
	g->scope = scope;
	g->scope_depth = scope_depth;
	g->mod = saved_mod;
	g->returned = returned;
	g->in_fn = in_fn;
	g->ret = ret;
	g->res = res;
	g->runtime_depth = runtime_depth;
	return result;
}
