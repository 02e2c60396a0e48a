/* module.c: loading files and resolving imports. */
#include "lang.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	MAX_IMPORT_DEPTH = 64,
	MAX_MODULES = 4096, /* files in one ModuleSet (a lookup's visited set is a bitmap of this many) */
};

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
	if (slash == path)
		return "/";
	return slash ? arena_strndup(a, path, (size_t)(slash - path)) : ".";
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* Whether the canonical path `path` lies under the folder `dir` (any form:
 * it is made canonical here, so "..", "." and symbolic links count where
 * they lead). */
static bool inside(Arena *a, const char *path, const char *dir)
{
	const char *d = canonical(a, dir);
	if (!d)
		return false;
	size_t n = strlen(d);
	if (n == 1 && d[0] == '/')
		return true;
	return strncmp(path, d, n) == 0 && path[n] == '/';
}

/* How an import was resolved: the path as found (beside the importing file
 * it is named as that file was, so diagnostics show paths as the user wrote
 * them), its canonical form, or why there is none. */
typedef struct {
	const char *found, *canon;
	bool escapes; /* a file exists but lies outside every folder allowed */
} Resolved;

/* `base/want` when it is a file under base (or anywhere, with
 * allow_any_import). */
static bool try_in(ModuleSet *set, const char *base, const char *want, Resolved *r)
{
	Arena *a = set->arena;
	const char *p = arena_printf(a, "%s/%s", base, want);
	if (!p || !is_file(p))
		return false;
	const char *c = canonical(a, p);
	if (!c)
		return false;
	if (!set->allow_any_import && !inside(a, c, base)) {
		r->escapes = true;
		return false;
	}
	r->found = p;
	r->canon = c;
	return true;
}

/* "std/..." is the standard library and only that. Other paths: the
 * importing file's folder, then each -I folder; the file must lie inside
 * the folder it was found from, and the path must not be absolute, unless
 * set->allow_any_import (then absolute paths are taken as they are). */
static bool resolve(ModuleSet *set, const Module *from, const char *want, Resolved *r)
{
	Arena *a = set->arena;
	*r = (Resolved){0};
	if (strncmp(want, "std/", 4) == 0)
		return set->stdlib_dir && try_in(set, set->stdlib_dir, want + 4, r);
	if (want[0] == '/') {
		if (!set->allow_any_import || !is_file(want))
			return false;
		r->found = want;
		r->canon = canonical(a, want);
		return r->canon != NULL;
	}
	/* beside the importing file when it is one (source text named by no
	 * existing file has no folder; standard input has the current one) */
	bool has_dir = from && from->src && (from->path || strcmp(from->src->name, "<stdin>") == 0);
	if (has_dir && try_in(set, dir_of(a, from->src->name), want, r))
		return true;
	for (int i = 0; i < set->n_include_dirs; i++)
		if (try_in(set, set->include_dirs[i], want, r))
			return true;
	return false;
}

/* Reports why `want` was not resolved, at the import's span. */
static void import_error(ModuleSet *set, Span at, const char *want, const Resolved *r)
{
	if (r->escapes)
		diag_error(set->diag, at,
		           "import '%s' leads outside the folders imports may read (the importing file's, the -I folders "
		           "and the standard library); blkc --allow-any-import permits it",
		           want);
	else if (strncmp(want, "std/", 4) == 0)
		diag_error(set->diag, at, "cannot find '%s' in the standard library%s", want,
		           set->stdlib_dir ? "" : " (its folder was not found: set BLK_STDLIB)");
	else if (want[0] == '/' && !set->allow_any_import)
		diag_error(set->diag, at,
		           "import path '%s' is absolute: imports are relative to the importing file's folder or a -I "
		           "folder (blkc --allow-any-import permits absolute ones)",
		           want);
	else
		diag_error(set->diag, at, "cannot find '%s' (looked beside this file%s)", want,
		           set->n_include_dirs ? " and in the -I folders" : "");
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
		/* only .tile sources: a diagnostic in an imported file shows its
		 * lines, which must never be those of some other file */
		if (!ends_with(imp->str, ".tile")) {
			diag_error(set->diag, imp->span, "cannot import '%s': only .tile files can be imported", imp->str);
			continue;
		}
		Resolved r;
		if (!resolve(set, m, imp->str, &r)) {
			import_error(set, imp->span, imp->str, &r);
			continue;
		}
		const char *found = r.found, *path = r.canon;
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
			if (set->modules.len >= MAX_MODULES) {
				diag_error(set->diag, imp->span, "too many files imported: the limit is %d", MAX_MODULES);
				continue;
			}
			/* read through the canonical path the confinement check passed,
			 * so a link changed since cannot lead elsewhere; diagnostics
			 * name the file as it was found */
			Source *src = arena_alloc(set->arena, sizeof *src);
			if (!src || !source_read_file(src, path, set->arena, set->diag))
				continue;
			src->name = found;
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
	m->index = set->modules.len;
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

/* Depth first through the imports without alias, each module once: a
 * module already visited did not declare the name, nor did its imports
 * (those were visited then), so skipping it changes nothing and keeps an
 * import diamond linear instead of exponential. */
static Node *lookup(Module *m, const char *name, Module **owner, uint64_t *seen)
{
	if (m->index >= 0 && m->index < MAX_MODULES) {
		uint64_t bit = (uint64_t)1 << (m->index % 64);
		if (seen[m->index / 64] & bit)
			return NULL;
		seen[m->index / 64] |= bit;
	}
	for (int i = 0; i < m->file->list.len; i++) {
		Node *d = m->file->list.items[i];
		if ((d->kind == N_FN || d->kind == N_KERNEL || d->kind == N_CONST) && strcmp(d->name, name) == 0) {
			*owner = m;
			return d;
		}
	}
	for (int i = 0; i < m->n_imports; i++) {
		if (m->imports[i].alias)
			continue;
		Node *d = lookup(m->imports[i].module, name, owner, seen);
		if (d)
			return d;
	}
	return NULL;
}

Node *module_lookup(Module *m, const char *name, Module **owner)
{
	uint64_t seen[MAX_MODULES / 64] = {0};
	return lookup(m, name, owner, seen);
}

Module *module_alias(Module *m, const char *alias)
{
	for (int i = 0; i < m->n_imports; i++)
		if (m->imports[i].alias && strcmp(m->imports[i].alias, alias) == 0)
			return m->imports[i].module;
	return NULL;
}
