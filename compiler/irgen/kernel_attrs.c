/* irgen/kernel_attrs.c: what a kernel declares for its launch: the grid(...)
 * clause, evaluated from the arguments, and the @autotune attribute. */
#include "irgen/irgen_int.h"

#include <string.h>

/* ---- the grid clause ----------------------------------------------------- */

bool irgen_grid(Module *m, Node *k, const IrgenOptions *opt, const ConstBinding *args, int n_args, int64_t grid[3],
                Diag *diag, Arena *arena)
{
	int errors = diag->errors;
	if (!k->a) {
		diag_plain(diag, DIAG_ERROR, "kernel '%s' has no grid(...) clause: give the grid explicitly", k->name);
		return false;
	}
	Gen g = {.diag = diag, .arena = arena, .mod = m, .num_sms = opt ? opt->num_sms : 0, .in_grid = true,
	         .arena_base = arena->used_total};
	ig_scope_push(&g, true);
	if (!ig_bind_params_of_kernel(&g, k, opt, args, n_args))
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
		Sym v = ig_gen_expr(&g, e);
		if (v.kind == S_VOID)
			return false;
		if (v.kind != S_CONST || scalar_is_float((ScalarKind)v.type.scalar) || ig_int_value(v) < 0 ||
		    ig_int_value(v) > INT32_MAX) {
			error(&g, e->span, "a grid dimension must be a non-negative integer below 2^31, found %s",
			      v.kind == S_CONST ? arena_printf(arena, "%lld", (long long)ig_int_value(v)) : ig_sym_desc(&g, v));
			return false;
		}
		grid[i] = (int64_t)ig_int_value(v);
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
		if (!is_const_param(k, nv->name) && !irgen_is_option(nv->name)) {
			const char *near = irgen_near_const(g->mod, k, nv->name);
			error(g, nv->span, "'%s' is neither a const parameter of kernel '%s' nor an option (num_warps, "
			      "num_stages, ...: blkc --help lists them)%s%s%s", nv->name, k->name,
			      near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			return false;
		}
		Sym v = ig_gen_expr(g, nv->a);
		if (v.kind == S_TYPE) { /* the value of a const type parameter */
			(*out)[i] = (ConstBinding){.name = nv->name, .type = tstr(g, v.type)};
			continue;
		}
		if (v.kind != S_CONST) {
			if (v.kind != S_VOID)
				error(g, nv->a->span, "a configuration value must be a constant number or a type, found %s",
				      ig_sym_desc(g, v));
			return false;
		}
		bool is_float = scalar_is_float((ScalarKind)v.type.scalar);
		(*out)[i] = (ConstBinding){.name = nv->name, .is_float = is_float, .i = is_float ? 0 : (int64_t)ig_int_value(v),
		                           .f = is_float ? v.f : (double)ig_int_value(v)};
		char msg[160];
		if (irgen_option_error(&(*out)[i], msg, sizeof msg)) {
			error(g, nv->a->span, "%s", msg);
			return false;
		}
	}
	return true;
}

/* @heuristics(NAME = expr, ...): each NAME a const parameter of k (not an
 * option), once; the expressions are kept for the launches to compute. */
static void parse_heuristics(Gen *g, Node *k, Node *attr, AutotuneSpec *out)
{
	int n = attr->list.len;
	out->heur_name = arena_alloc(g->arena, (size_t)(n ? n : 1) * sizeof *out->heur_name);
	out->heur_expr = arena_alloc(g->arena, (size_t)(n ? n : 1) * sizeof *out->heur_expr);
	if (!out->heur_name || !out->heur_expr)
		return;
	if (!n)
		error(g, attr->span, "@heuristics needs at least one 'NAME = expression'");
	for (int j = 0; j < n; j++) {
		Node *arg = attr->list.items[j];
		if (arg->kind != N_NAMED_ARG) {
			error(g, arg->span, "@heuristics takes 'NAME = expression' items, NAME a const parameter of '%s'", k->name);
			continue;
		}
		if (!is_const_param(k, arg->name)) {
			error(g, arg->span, "'%s' is not a const parameter of kernel '%s': @heuristics computes const parameters",
			      arg->name, k->name);
			continue;
		}
		bool twice = false;
		for (int e = 0; e < out->n_heur && !twice; e++)
			twice = strcmp(out->heur_name[e], arg->name) == 0;
		if (twice) {
			error(g, arg->span, "@heuristics gives '%s' twice", arg->name);
			continue;
		}
		out->heur_name[out->n_heur] = arg->name;
		out->heur_expr[out->n_heur++] = arg->a;
	}
}

bool irgen_heuristic(Module *m, Node *k, const AutotuneSpec *at, int i, const IrgenOptions *opt,
                     const ConstBinding *args, int n_args, ConstBinding *out, Diag *diag, Arena *arena)
{
	int errors = diag->errors;
	Gen g = {.diag = diag, .arena = arena, .mod = m, .num_sms = opt ? opt->num_sms : 0, .in_grid = true,
	         .consts_may_lack = true, .arena_base = arena->used_total};
	ig_scope_push(&g, true);
	/* (the consts it and the later heuristics compute have no value yet:
	 * bound to nothing, an error only where this expression uses one) */
	ig_bind_params_of_kernel(&g, k, opt, args, n_args);
	if (diag->errors != errors)
		return false;
	g.no_ir = "a @heuristics value must be computable from the kernel's scalar arguments and consts";
	Node *e = at->heur_expr[i];
	Sym v = ig_gen_expr(&g, e);
	if (v.kind == S_VOID && diag->errors == errors)
		error(&g, e->span, "@heuristics: '%s' uses a const that has no value yet (one computed by itself or by a "
		      "later heuristic, or one without a default)", at->heur_name[i]);
	if (v.kind == S_VOID)
		return false;
	if (v.kind != S_CONST || v.type.rank) {
		error(&g, e->span, "@heuristics: '%s' must be a constant number or bool, found %s", at->heur_name[i],
		      ig_sym_desc(&g, v));
		return false;
	}
	bool is_float = scalar_is_float((ScalarKind)v.type.scalar);
	*out = (ConstBinding){.name = at->heur_name[i], .is_float = is_float,
	                      .i = is_float ? 0 : (int64_t)ig_int_value(v), .f = is_float ? v.f : (double)ig_int_value(v)};
	return diag->errors == errors;
}

bool irgen_autotune(Module *m, Node *k, AutotuneSpec *out, Diag *diag, Arena *arena)
{
	*out = (AutotuneSpec){0};
	int errors = diag->errors;
	Gen g = {.diag = diag, .arena = arena, .mod = m, .no_ir = "attribute arguments must be known at compile time",
	         .arena_base = arena->used_total};
	ig_scope_push(&g, true);
	for (int i = 0; i < k->attrs.len; i++) {
		Node *attr = k->attrs.items[i];
		if (strcmp(attr->name, "heuristics") == 0) {
			parse_heuristics(&g, k, attr, out);
			continue;
		}
		if (strcmp(attr->name, "autotune") != 0) {
			error(&g, attr->span, "unknown attribute '@%s': the attributes are @autotune and @heuristics", attr->name);
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
