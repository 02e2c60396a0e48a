/* modules.c: modules loaded from a file or a string (their imports found
 * on the include path and in the standard library), their kernels and the
 * kernels' parameters; blk_check_source. */
#include "runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

blk_status blk_check_source(const char *name, const char *text, size_t len)
{
	if (!name || (!text && len))
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_check_source: %s is NULL", name ? "text" : "name");
	if (len > UINT32_MAX / 2)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_check_source: '%s' is too large (%zu bytes)", name, len);
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	Source src;
	source_from_string(&src, name, text ? text : "", len, &arena);
	blk_status status = BLK_SUCCESS;
	if (len && src.len != len) {
		status = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_check_source: out of memory reading '%s'", name);
	} else {
		parse_source(&src, &diag, &arena);
		if (diag.out.failed)
			status = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_check_source: out of memory checking '%s'", name);
		else if (diag.errors)
			status = rt_fail(BLK_ERROR_SOURCE, "%s", diag.out.data ? diag.out.data : "");
	}
	if (status == BLK_SUCCESS)
		rt_ok();
	diag_free(&diag);
	arena_free(&arena);
	return status;
}

/* The standard library: $BLK_STDLIB, else beside libblk as installed
 * (PREFIX/lib/libblk.so, PREFIX/share/blk/stdlib) or as built
 * (build/libblk.so, stdlib/). */
static pthread_once_t stdlib_once = PTHREAD_ONCE_INIT;
static char stdlib_path[4096];

static void find_stdlib(void)
{
	Dl_info info;
	if (!dladdr((void *)blk_version, &info) || !info.dli_fname)
		return;
	char dir[3500];
	snprintf(dir, sizeof dir, "%s", info.dli_fname);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	static const char *const rel[] = {"../share/blk/stdlib", "../stdlib", "../../stdlib"};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		snprintf(stdlib_path, sizeof stdlib_path, "%s/%s", dir, rel[i]);
		if (access(stdlib_path, R_OK) == 0)
			return;
	}
	stdlib_path[0] = '\0';
}

static const char *stdlib_dir(void)
{
	const char *env = getenv("BLK_STDLIB");
	if (env && env[0])
		return env;
	pthread_once(&stdlib_once, find_stdlib);
	return stdlib_path[0] ? stdlib_path : NULL;
}

/* Unloads m's GPU code (its context current). Caller holds m->lock. */
static void gpu_unload_module(blk_module *m)
{
	for (int i = 0; m->kernels && i < m->n_kernels; i++)
		for (int j = 0; j < m->kernels[i].n_variants; j++) {
			Variant *v = m->kernels[i].variants[j];
			if (v->cumod)
				m->ctx->cu->cuModuleUnload(v->cumod);
			v->cumod = NULL;
			v->fn = NULL;
		}
}

void rt_orphan_modules(blk_context *ctx)
{
	bool current = ctx->backend == BLK_BACKEND_GPU && rt_gpu_enter(ctx, "blk_context_destroy") == BLK_SUCCESS;
	pthread_mutex_lock(&ctx->lock);
	for (blk_module *m = ctx->modules; m; m = m->next_module) {
		pthread_mutex_lock(&m->lock);
		if (current)
			gpu_unload_module(m);
		m->ctx = NULL;
		pthread_mutex_unlock(&m->lock);
	}
	ctx->modules = NULL;
	pthread_mutex_unlock(&ctx->lock);
}

/* Bytes of an element a pointer parameter of type t points to. */
static int elem_bytes(Type t) { return type_bytes(type_pointee(type_elem(t))); }

/* Is `name` a const type parameter of kernel k? */
static bool type_param_of(const Node *k, const char *name)
{
	for (int i = 0; i < k->list.len; i++) {
		const Node *p = k->list.items[i];
		if (strcmp(p->name, name) == 0)
			return irgen_is_type_param(p);
	}
	return false;
}

/* The type the module's defines give the type parameter `name`. */
static bool bound_type(const blk_module *m, const char *name, Type *out)
{
	for (int i = 0; i < m->n_defines; i++)
		if (strcmp(m->defines[i].name, name) == 0)
			return m->defines[i].type && irgen_type_from_name(m->defines[i].type, out);
	return false;
}

/* Each parameter as blk_param_info says it. A parameter whose type names a
 * const type parameter (x: *T) is a pointer whose element size is known
 * only per launch (elem_bytes 0), or a scalar that takes an integer or a
 * float; where the module's defines bind T, its type is spelled out. */
static bool describe_params(blk_module *m, blk_kernel *k, Diag *diag)
{
	Node *n = k->node;
	k->n_params = n->list.len;
	k->params = arena_alloc(&m->arena, (size_t)(k->n_params ? k->n_params : 1) * sizeof *k->params);
	k->param_sk = arena_alloc(&m->arena, (size_t)(k->n_params ? k->n_params : 1));
	if (!k->params || !k->param_sk)
		return false;
	for (int i = 0; i < k->n_params; i++) {
		Node *p = n->list.items[i];
		Node *t = p->a;
		bool is_const = t && t->kind == N_TYPE_CONST;
		Node *base = is_const ? t->a : t;
		int depth = 0;
		while (base && base->kind == N_TYPE_PTR) {
			base = base->a;
			depth++;
		}
		if (irgen_is_type_param(p)) {
			k->params[i] = (blk_param_info){.name = p->name, .type = "const type", .kind = BLK_PARAM_INT, .is_const = 1};
			k->param_sk[i] = SK_I32;
			continue;
		}
		ScalarKind sk;
		Type bound;
		bool generic = base && base->kind == N_TYPE_NAME && type_param_of(n, base->name);
		if (generic && bound_type(m, base->name, &bound)) { /* the module's defines bind it */
			generic = false;
			sk = (ScalarKind)bound.scalar;
			depth += bound.ptr;
		} else if (!generic && (!base || base->kind != N_TYPE_NAME || !scalar_from_name(base->name, &sk))) {
			diag_error(diag, p->span, "parameter '%s' has no valid type", p->name);
			return false;
		}
		StrBuf sb = {0};
		if (is_const)
			sb_puts(&sb, "const ");
		Type ty = {0};
		if (generic) {
			/* a type parameter's: known per launch; a scalar takes an integer or a float argument */
			for (int d = 0; d < depth; d++)
				sb_putc(&sb, '*');
			sb_puts(&sb, base->name);
			sk = SK_F64;
		} else {
			ty = type_scalar(sk);
			ty.ptr = (uint8_t)depth;
			type_print(ty, &sb);
		}
		k->params[i] = (blk_param_info){
			.name = p->name,
			.type = sb.data ? arena_strndup(&m->arena, sb.data, sb.len) : "?",
			.kind = depth ? BLK_PARAM_POINTER : scalar_is_float(sk) ? BLK_PARAM_FLOAT : BLK_PARAM_INT,
			.is_const = is_const,
			.elem_bytes = generic ? 0 : depth ? elem_bytes(ty) : type_bytes(type_scalar(sk)),
		};
		sb_free(&sb);
		k->param_sk[i] = (uint8_t)sk;
		k->n_args += !is_const;
	}
	return true;
}

/* Where each name of the kernel's autotune key comes from. */
static bool describe_key(blk_module *m, blk_kernel *k)
{
	int n = k->autotune.n_key;
	k->key_arg = arena_alloc(&m->arena, (size_t)(n ? n : 1) * sizeof *k->key_arg);
	k->last.key = arena_alloc(&m->arena, (size_t)(n ? n : 1) * sizeof *k->last.key);
	if (!k->key_arg || !k->last.key)
		return false;
	for (int i = 0; i < n; i++) {
		k->key_arg[i] = -1;
		for (int p = 0, a = 0; p < k->n_params; p++) {
			if (strcmp(k->params[p].name, k->autotune.key[i]) == 0) {
				if (!k->params[p].is_const)
					k->key_arg[i] = a;
				break;
			}
			a += !k->params[p].is_const;
		}
	}
	return true;
}

static void destroy_module(blk_module *m);

static blk_status load_module(blk_context *ctx, const Source *given, const char *path, const blk_module_options *opt,
                              blk_module **out)
{
	if (!ctx || !out)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load: %s is NULL", ctx ? "out" : "ctx");
	*out = NULL;
	blk_status hs = rt_handle_check(ctx, H_CONTEXT, "blk_module_load");
	if (hs != BLK_SUCCESS)
		return hs;
	if (opt) {
		if (opt->n_include_dirs < 0 || (opt->n_include_dirs > 0 && !opt->include_dirs))
			return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load: opt->n_include_dirs is %d and "
			               "opt->include_dirs is %s", opt->n_include_dirs, opt->include_dirs ? "not NULL" : "NULL");
		for (int i = 0; i < opt->n_include_dirs; i++)
			if (!opt->include_dirs[i])
				return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load: opt->include_dirs[%d] is NULL", i);
		if (opt->n_defines < 0 || (opt->n_defines > 0 && !opt->defines))
			return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load: opt->n_defines is %d and opt->defines is %s",
			               opt->n_defines, opt->defines ? "not NULL" : "NULL");
		for (int i = 0; i < opt->n_defines; i++)
			if (!opt->defines[i].name)
				return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load: opt->defines[%d].name is NULL", i);
	}
	double t0 = rt_monotonic_ms();
	blk_module *m = calloc(1, sizeof *m);
	if (!m)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_module_load: out of memory");
	m->ctx = ctx;
	pthread_mutex_init(&m->lock, NULL);
	Diag diag;
	diag_init(&diag);
	m->set = (ModuleSet){.arena = &m->arena, .diag = &diag};
	m->set.stdlib_dir = stdlib_dir();
	if (opt) {
		/* copied: rt_module_clone loads the module again later */
		const char **dirs = arena_alloc(&m->arena, (size_t)(opt->n_include_dirs + 1) * sizeof *dirs);
		for (int i = 0; dirs && i < opt->n_include_dirs; i++)
			dirs[i] = arena_strndup(&m->arena, opt->include_dirs[i], strlen(opt->include_dirs[i]));
		m->set.include_dirs = dirs;
		m->set.n_include_dirs = dirs ? opt->n_include_dirs : 0;
		m->defines = arena_alloc(&m->arena, (size_t)(opt->n_defines ? opt->n_defines : 1) * sizeof *m->defines);
		for (int i = 0; m->defines && i < opt->n_defines; i++)
			m->defines[i] = (ConstBinding){arena_strndup(&m->arena, opt->defines[i].name, strlen(opt->defines[i].name)),
			                               opt->defines[i].is_float != 0, opt->defines[i].i, opt->defines[i].f,
			                               opt->defines[i].type ? arena_strndup(&m->arena, opt->defines[i].type,
			                                                                    strlen(opt->defines[i].type))
			                                                    : NULL};
		m->n_defines = opt->n_defines;
	}
	if (given) {
		Source *src = arena_alloc(&m->arena, sizeof *src);
		if (src) {
			source_from_string(src, arena_strndup(&m->arena, given->name, strlen(given->name)), given->text, given->len,
			                   &m->arena);
			m->mod = module_load_source(&m->set, src);
		}
	} else {
		m->mod = module_load_file(&m->set, path);
	}
	blk_status status = BLK_SUCCESS;
	if (!m->mod || diag.errors) {
		status = rt_fail(diag.errors ? BLK_ERROR_SOURCE : BLK_ERROR_NOT_FOUND, "%s",
		                 diag.out.data ? diag.out.data : "cannot load the module");
	} else {
		for (int i = 0; i < m->mod->file->list.len; i++)
			m->n_kernels += ((Node *)m->mod->file->list.items[i])->kind == N_KERNEL;
		/* not in the arena: BLK_DEBUG=1 keeps the kernels' bytes after the module is destroyed */
		m->kernels = calloc((size_t)(m->n_kernels ? m->n_kernels : 1), sizeof *m->kernels);
		int j = 0;
		for (int i = 0; m->kernels && i < m->mod->file->list.len; i++) {
			Node *n = m->mod->file->list.items[i];
			if (n->kind != N_KERNEL)
				continue;
			blk_kernel *k = &m->kernels[j++];
			k->m = m;
			k->node = n;
			if (!describe_params(m, k, &diag) || !irgen_autotune(m->mod, n, &k->autotune, &diag, &m->arena))
				break;
			if (!describe_key(m, k)) {
				free(m->kernels);
				m->kernels = NULL;
				break;
			}
		}
		if (diag.errors)
			status = rt_fail(BLK_ERROR_SOURCE, "%s", diag.out.data ? diag.out.data : "");
		else if (!m->kernels)
			status = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_module_load: out of memory");
	}
	diag_free(&diag);
	m->set.diag = NULL;
	if (status != BLK_SUCCESS) {
		destroy_module(m);
		return status;
	}
	m->ms_parse = rt_monotonic_ms() - t0;
	rt_handle_add(m, H_MODULE);
	for (int i = 0; i < m->n_kernels; i++)
		rt_handle_add(&m->kernels[i], H_KERNEL);
	pthread_mutex_lock(&ctx->lock);
	m->next_module = ctx->modules;
	ctx->modules = m;
	pthread_mutex_unlock(&ctx->lock);
	*out = m;
	return rt_ok();
}

blk_status blk_module_load_file(blk_context *ctx, const char *path, const blk_module_options *opt, blk_module **out)
{
	if (!path)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load_file: path is NULL");
	if (out)
		*out = NULL;
	if (access(path, R_OK) != 0)
		return rt_fail(BLK_ERROR_NOT_FOUND, "blk_module_load_file: cannot open '%s': %s", path, strerror(errno));
	return load_module(ctx, NULL, path, opt, out);
}

blk_status blk_module_load_source(blk_context *ctx, const char *name, const char *text, size_t len,
                                  const blk_module_options *opt, blk_module **out)
{
	if (!name || (!text && len))
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load_source: %s is NULL", name ? "text" : "name");
	if (len > UINT32_MAX / 2)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load_source: '%s' is too large", name);
	Source src = {.name = name, .text = text ? text : "", .len = (uint32_t)len};
	return load_module(ctx, &src, NULL, opt, out);
}

blk_status rt_module_clone(const blk_module *m, blk_context *ctx, blk_module **out)
{
	blk_const *defs = calloc((size_t)(m->n_defines ? m->n_defines : 1), sizeof *defs);
	if (!defs)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_module_load: out of memory");
	for (int i = 0; i < m->n_defines; i++)
		defs[i] = (blk_const){m->defines[i].name, m->defines[i].is_float, m->defines[i].i, m->defines[i].f,
		                      m->defines[i].type};
	blk_module_options o = {m->set.include_dirs, m->set.n_include_dirs, defs, m->n_defines};
	blk_status st = load_module(ctx, m->mod->src, NULL, &o, out);
	free(defs);
	return st;
}

void blk_module_destroy(blk_module *m)
{
	if (m && rt_handle_check(m, H_MODULE, "blk_module_destroy") == BLK_SUCCESS)
		destroy_module(m);
}

/* Unlinks m from its context, unloads its GPU code, frees it. */
static void destroy_module(blk_module *m)
{
	blk_context *ctx = m->ctx;
	if (ctx) {
		pthread_mutex_lock(&ctx->lock);
		for (blk_module **p = &ctx->modules; *p; p = &(*p)->next_module)
			if (*p == m) {
				*p = m->next_module;
				break;
			}
		pthread_mutex_unlock(&ctx->lock);
		GpuScope scope;
		if (ctx->backend == BLK_BACKEND_GPU && rt_gpu_push(ctx, "blk_module_destroy", &scope) == BLK_SUCCESS) {
			gpu_unload_module(m);
			rt_gpu_pop(&scope);
		}
	}
	for (int i = 0; m->kernels && i < m->n_kernels; i++) {
		free(m->kernels[i].last.consts);
		free(m->kernels[i].last.args);
		for (int j = 0; j < m->kernels[i].n_variants; j++)
			rt_tma_cache_free(m->kernels[i].variants[j]);
	}
	pthread_mutex_destroy(&m->lock);
	arena_free(&m->arena);
	/* BLK_DEBUG=1 keeps the module's and its kernels' own bytes: no new
	 * handle gets their addresses */
	bool keep = rt_handle_dead(m);
	for (int i = 0; keep && m->kernels && i < m->n_kernels; i++)
		rt_handle_dead(&m->kernels[i]);
	if (!keep) {
		free(m->kernels);
		free(m);
	}
}

blk_status blk_kernel_get(blk_module *m, const char *name, blk_kernel **out)
{
	if (!m || !out)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_get: %s is NULL", m ? "out" : "the module");
	*out = NULL;
	blk_status hs = rt_handle_check(m, H_MODULE, "blk_kernel_get");
	if (hs != BLK_SUCCESS)
		return hs;
	for (int i = 0; i < m->n_kernels; i++)
		if (!name || strcmp(m->kernels[i].node->name, name) == 0) {
			if (!name && m->n_kernels > 1) {
				StrBuf names = {0};
				for (int j = 0; j < m->n_kernels; j++) {
					sb_puts(&names, j ? ", " : "");
					sb_puts(&names, m->kernels[j].node->name);
				}
				blk_status st = rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_get: '%s' has %d kernels (%s); name one",
				                        m->mod->src->name, m->n_kernels, names.data ? names.data : "");
				sb_free(&names);
				return st;
			}
			*out = &m->kernels[i];
			return rt_ok();
		}
	return rt_fail(BLK_ERROR_NOT_FOUND, "blk_kernel_get: '%s' has no kernel%s%s", m->mod->src->name,
	               name ? " named " : "", name ? name : "");
}

int blk_kernel_num_params(const blk_kernel *k)
{
	if (!k || rt_handle_check(k, H_KERNEL, "blk_kernel_num_params") != BLK_SUCCESS)
		return 0;
	return k->n_params;
}

blk_status blk_kernel_param(const blk_kernel *k, int i, blk_param_info *out)
{
	blk_status hs = rt_handle_check(k, H_KERNEL, "blk_kernel_param");
	if (hs != BLK_SUCCESS)
		return hs;
	if (!k || !out || i < 0 || i >= k->n_params)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_param: no parameter %d", i);
	*out = k->params[i];
	return rt_ok();
}
