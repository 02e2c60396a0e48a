/* irgen/suggest.c: what an error about an unknown name can add to teach: the
 * nearest known spelling in scope ("did you mean 'arange'?", measured by
 * lang's nearest_*), the standard library file that defines a fn, how blk
 * spells a few Triton habits, and where mismatched operand shapes come from. */
#include "irgen/irgen_int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The top-level names of m and of the modules it imports without alias. */
static void consider_module(Nearest *n, Module *m, bool fns, bool consts, bool aliases, int depth)
{
	if (!m || depth > 16)
		return;
	for (int i = 0; m->file && i < m->file->list.len; i++) {
		Node *d = m->file->list.items[i];
		if ((fns && d->kind == N_FN) || (consts && d->kind == N_CONST))
			nearest_consider(n, d->name);
	}
	for (int i = 0; i < m->n_imports; i++) {
		if (m->imports[i].alias) {
			if (aliases)
				nearest_consider(n, m->imports[i].alias);
		} else {
			consider_module(n, m->imports[i].module, fns, consts, aliases, depth + 1);
		}
	}
}

const char *ig_near_name(Gen *g, const char *name, int what)
{
	Nearest n;
	nearest_init(&n, name);
	for (Scope *s = g->scope; s; s = s->parent) {
		for (int i = s->len - 1; i >= 0; i--) {
			Sym *y = &s->items[i].sym;
			bool ok = (what & NEAR_VALUES) || ((what & NEAR_FNS) && y->kind == S_FN) ||
			          ((what & NEAR_TYPES) && y->kind == S_TYPE);
			if (ok)
				nearest_consider(&n, s->items[i].name);
		}
		if (s->fn_boundary)
			break;
	}
	/* a global const may hold a type (const T = f16) */
	consider_module(&n, g->mod, what & (NEAR_FNS | NEAR_VALUES), what & (NEAR_VALUES | NEAR_TYPES), what & NEAR_VALUES,
	                0);
	if (what & (NEAR_FNS | NEAR_VALUES)) {
		for (int i = 0; ig_builtin_name(i); i++)
			nearest_consider(&n, ig_builtin_name(i));
		nearest_consider(&n, "print");
	}
	if (what & NEAR_TYPES)
		for (int k = 0; k < SK_COUNT; k++)
			nearest_consider(&n, scalar_name((ScalarKind)k));
	return n.best;
}

/* Whether the text of a .tile file declares `fn name(` at the start of a line. */
static bool declares_fn(const char *text, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "fn ", 3) != 0)
			continue;
		p += 3;
		while (*p == ' ')
			p++;
		if (strncmp(p, name, len) == 0 && (p[len] == '(' || p[len] == ' ' || p[len] == '['))
			return true;
	}
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *ig_stdlib_home(Gen *g, const char *name)
{
	const char *dir = g->mod ? g->mod->stdlib_dir : NULL;
	DIR *d = dir ? opendir(dir) : NULL;
	if (!d)
		return NULL;
	/* in name order, so that the answer does not depend on the directory's order */
	const char *files[64];
	int n = 0;
	for (struct dirent *e; (e = readdir(d)) && n < 64;) {
		size_t len = strlen(e->d_name);
		if (len > 5 && strcmp(e->d_name + len - 5, ".tile") == 0)
			files[n++] = arena_printf(g->arena, "%s", e->d_name);
	}
	closedir(d);
	qsort(files, (size_t)n, sizeof files[0], by_name);
	for (int i = 0; i < n; i++) {
		if (!files[i])
			continue;
		char *path = arena_printf(g->arena, "%s/%s", dir, files[i]);
		FILE *f = path ? fopen(path, "rb") : NULL;
		if (!f)
			continue;
		/* a standard library file is small: its first MiB is all of it */
		size_t cap = 1 << 20;
		char *text = malloc(cap + 1);
		size_t got = text ? fread(text, 1, cap, f) : 0;
		fclose(f);
		if (!text)
			return NULL;
		text[got] = 0;
		bool found = declares_fn(text, name);
		free(text);
		if (found)
			return arena_printf(g->arena, "std/%s", files[i]);
	}
	return NULL;
}

void ig_unknown_name(Gen *g, Span at, const char *what, const char *name, int near)
{
	if (near & NEAR_FNS) {
		const char *home = ig_stdlib_home(g, name);
		if (home) {
			error(g, at, "%s '%s': it is defined in the standard library; add 'import \"%s\";'", what, name, home);
			return;
		}
	}
	const char *best = ig_near_name(g, name, near);
	if (best)
		error(g, at, "%s '%s'; did you mean '%s'?", what, name, best);
	else
		error(g, at, "%s '%s'", what, name);
}

bool ig_triton_namespace(Gen *g, Node *field, bool call)
{
	Node *base = field->a;
	Module *owner;
	if (base->kind != N_IDENT || (strcmp(base->name, "tl") != 0 && strcmp(base->name, "triton") != 0) ||
	    ig_lookup_local(g, base->name) || module_alias(g->mod, base->name) || module_lookup(g->mod, base->name, &owner))
		return false;
	static const struct {
		const char *triton, *blk;
	} types[] = {
		{"float32", "f32"}, {"float16", "f16"}, {"bfloat16", "bf16"}, {"float64", "f64"}, {"int1", "i1"},
		{"int8", "i8"},     {"int16", "i16"},   {"int32", "i32"},     {"int64", "i64"},   {"uint8", "u8"},
		{"uint16", "u16"},  {"uint32", "u32"},  {"uint64", "u64"},
	};
	const char *blk = field->name;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(field->name, types[i].triton) == 0)
			blk = types[i].blk;
	if (call)
		error(g, base->span, "blk has no '%s' namespace: builtins are called by their name alone, as %s(...)",
		      base->name, field->name);
	else
		error(g, base->span, "blk has no '%s' namespace: write '%s' for '%s.%s'", base->name, blk, base->name,
		      field->name);
	return true;
}

/* Where an operand's shape comes from: the operand, and for a variable where
 * it was last bound. */
static void operand_note(Gen *g, Node *e, const char *side, Sym s)
{
	Binding *b = e->kind == N_IDENT ? ig_lookup_local(g, e->name) : NULL;
	if (b && b->span.src)
		diag_note(g->diag, b->span, "the %s operand '%s', %s, was bound here", side, e->name, tstr(g, s.type));
	else
		diag_note(g->diag, e->span, "the %s operand, %s, comes from here", side, tstr(g, s.type));
}

bool ig_operand_shapes(Gen *g, Node *n, Sym a, Sym b)
{
	int rank;
	int32_t shape[BLK_MAX_RANK];
	if (!is_valueish(a) || !is_valueish(b) || broadcast_shapes(a.type, b.type, &rank, shape))
		return true;
	error(g, n->span, "cannot broadcast the operands of '%s': shapes %s and %s", token_kind_spelling(n->op),
	      tstr(g, a.type), tstr(g, b.type));
	operand_note(g, n->a, "left", a);
	operand_note(g, n->b, "right", b);
	return false;
}

const char *irgen_near_const(Module *m, const Node *kernel, const char *name)
{
	Nearest n;
	nearest_init(&n, name);
	for (int i = 0; m && m->file && i < m->file->list.len; i++) {
		const Node *k = m->file->list.items[i];
		if (k->kind != N_KERNEL || (kernel && k != kernel))
			continue;
		for (int j = 0; j < k->list.len; j++) {
			const Node *p = k->list.items[j];
			if (p->a && p->a->kind == N_TYPE_CONST)
				nearest_consider(&n, p->name);
		}
	}
	for (int i = 0; i < OPTION_COUNT; i++) /* every option of ir/options.h's table */
		nearest_consider(&n, option_table[i].name);
	return n.best;
}
