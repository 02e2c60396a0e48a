/* module.c: loading files and resolving imports. */
#include "lang.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_IMPORT_DEPTH = 64 };

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Canonical path of an existing file, in the arena (NULL if none). */
static const char *canonical(Arena *a, const char *path)
{
	char buf[PATH_MAX];
	if (!realpath(path, buf))
		return NULL;
	return arena_strndup(a, buf, strlen(buf));
}

static const char *dir_of(Arena *a, const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? arena_strndup(a, path, (size_t)(slash - path)) : ".";
}

/* Search order: the importing file's folder, then each -I folder, then the
 * standard library for "std/..." paths. Absolute paths are taken as they are. */
static const char *resolve(ModuleSet *set, const Module *from, const char *want)
{
	Arena *a = set->arena;
	if (want[0] == '/')
		return is_file(want) ? want : NULL;
	if (from && from->src) {
		/* beside the importing file, named as that file was (diagnostics
		 * then show paths as the user wrote them, not absolute ones) */
		const char *p = arena_printf(a, "%s/%s", dir_of(a, from->src->name), want);
		if (p && is_file(p))
			return p;
	}
	for (int i = 0; i < set->n_include_dirs; i++) {
		const char *p = arena_printf(a, "%s/%s", set->include_dirs[i], want);
		if (p && is_file(p))
			return p;
	}
	if (set->stdlib_dir && strncmp(want, "std/", 4) == 0) {
		const char *p = arena_printf(a, "%s/%s", set->stdlib_dir, want + 4);
		if (p && is_file(p))
			return p;
	}
	return NULL;
}

static Module *find_loaded(ModuleSet *set, const char *path)
{
	for (int i = 0; i < set->modules.len; i++) {
		Module *m = set->modules.items[i];
		if (m->path && strcmp(m->path, path) == 0)
			return m;
	}
	return NULL;
}

static Module *load(ModuleSet *set, const Source *src, const char *path, int depth);

static void load_imports(ModuleSet *set, Module *m, int depth)
{
	int n = 0;
	for (int i = 0; i < m->file->list.len; i++)
		n += ((Node *)m->file->list.items[i])->kind == N_IMPORT;
	if (!n)
		return;
	m->imports = arena_alloc(set->arena, (size_t)n * sizeof *m->imports);
	if (!m->imports)
		return;
	for (int i = 0; i < m->file->list.len; i++) {
		Node *imp = m->file->list.items[i];
		if (imp->kind != N_IMPORT)
			continue;
		if (memchr(imp->str, '\0', imp->len)) {
			diag_error(set->diag, imp->span, "import path contains a NUL byte");
			continue;
		}
		const char *found = resolve(set, m, imp->str);
		const char *path = found ? canonical(set->arena, found) : NULL;
		if (!path) {
			diag_error(set->diag, imp->span, "cannot find '%s' (looked beside this file%s%s)", imp->str,
			           set->n_include_dirs ? ", in the -I folders" : "",
			           strncmp(imp->str, "std/", 4) == 0 ? " and in the standard library" : "");
			continue;
		}
		Module *dep = find_loaded(set, path);
		if (dep && dep->loading) {
			diag_error(set->diag, imp->span, "'%s' imports itself (through a cycle of imports)", imp->str);
			continue;
		}
		if (!dep) {
			if (depth >= MAX_IMPORT_DEPTH) {
				diag_error(set->diag, imp->span, "imports nested too deeply (more than %d)", MAX_IMPORT_DEPTH);
				continue;
			}
			Source *src = arena_alloc(set->arena, sizeof *src);
			if (!src || !source_read_file(src, found, set->arena, set->diag))
				continue;
			dep = load(set, src, path, depth + 1);
			if (!dep)
				continue;
		}
		m->imports[m->n_imports++] = (ModuleImport){.alias = imp->name, .module = dep, .span = imp->span};
	}
}

static Module *load(ModuleSet *set, const Source *src, const char *path, int depth)
{
	Node *file = parse_source(src, set->diag, set->arena);
	if (!file)
		return NULL;
	Module *m = arena_alloc(set->arena, sizeof *m);
	if (!m)
		return NULL;
	m->src = src;
	m->path = path;
	m->file = file;
	m->stdlib_dir = set->stdlib_dir;
	if (!ptrvec_push(set->arena, &set->modules, m))
		return NULL;
	m->loading = true;
	load_imports(set, m, depth);
	m->loading = false;
	return m;
}

Module *module_load_source(ModuleSet *set, const Source *src)
{
	const char *path = strcmp(src->name, "<stdin>") == 0 ? NULL : canonical(set->arena, src->name);
	return load(set, src, path, 0);
}

Module *module_load_file(ModuleSet *set, const char *path)
{
	Source *src = arena_alloc(set->arena, sizeof *src);
	if (!src || !source_read_file(src, path, set->arena, set->diag))
		return NULL;
	return module_load_source(set, src);
}

static Node *lookup(Module *m, const char *name, Module **owner, int depth)
{
	for (int i = 0; i < m->file->list.len; i++) {
		Node *d = m->file->list.items[i];
		if ((d->kind == N_FN || d->kind == N_KERNEL || d->kind == N_CONST) && strcmp(d->name, name) == 0) {
			*owner = m;
			return d;
		}
	}
	if (depth >= MAX_IMPORT_DEPTH)
		return NULL;
	for (int i = 0; i < m->n_imports; i++) {
		if (m->imports[i].alias)
			continue;
		Node *d = lookup(m->imports[i].module, name, owner, depth + 1);
		if (d)
			return d;
	}
	return NULL;
}

Node *module_lookup(Module *m, const char *name, Module **owner)
{
	return lookup(m, name, owner, 0);
}

Module *module_alias(Module *m, const char *alias)
{
	for (int i = 0; i < m->n_imports; i++)
		if (m->imports[i].alias && strcmp(m->imports[i].alias, alias) == 0)
			return m->imports[i].module;
	return NULL;
}
