/* runtime.c: the public API of libblk (blk.h): errors, contexts, memory,
 * modules, kernels, variants and launches. The interpreter backend runs
 * here; the GPU backend comes with the driver layer. */
#include "blk.h"
#include "compiler.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------ */

static _Thread_local StrBuf last_error;

static blk_status fail(blk_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static blk_status fail(blk_status status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	last_error.len = 0;
	if (last_error.data)
		last_error.data[0] = '\0';
	sb_vprintf(&last_error, fmt, ap);
	va_end(ap);
	return status;
}

static blk_status ok(void)
{
	last_error.len = 0;
	if (last_error.data)
		last_error.data[0] = '\0';
	return BLK_SUCCESS;
}

const char *blk_version(void)
{
#ifdef BLK_VERSION
	return BLK_VERSION;
#else
	return "0.1.0";
#endif
}

const char *blk_last_error(void)
{
	return last_error.data && !last_error.failed ? last_error.data : "";
}

blk_status blk_check_source(const char *name, const char *text, size_t len)
{
	if (!name || (!text && len))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_check_source: %s is NULL", name ? "text" : "name");
	if (len > UINT32_MAX / 2)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_check_source: '%s' is too large (%zu bytes)", name, len);
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	Source src;
	source_from_string(&src, name, text ? text : "", len, &arena);
	blk_status status = BLK_SUCCESS;
	if (len && src.len != len) {
		status = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_check_source: out of memory reading '%s'", name);
	} else {
		parse_source(&src, &diag, &arena);
		if (diag.out.failed)
			status = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_check_source: out of memory checking '%s'", name);
		else if (diag.errors)
			status = fail(BLK_ERROR_SOURCE, "%s", diag.out.data ? diag.out.data : "");
	}
	if (status == BLK_SUCCESS)
		ok();
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

/* ---- contexts and memory ----------------------------------------------------------- */

struct blk_context {
	blk_backend backend;
	int device;
	pthread_mutex_t lock;
	InterpBuffer *bufs; /* interpreter memory, sorted by nothing: few */
	int n_bufs, cap_bufs;
	StrBuf printed;      /* print output collected by launches */
	StrBuf printed_out;  /* what blk_context_printed returned last */
};

blk_status blk_context_create(blk_backend backend, int device, blk_context **out)
{
	if (!out)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_context_create: out is NULL");
	*out = NULL;
	if (backend == BLK_BACKEND_AUTO) {
		const char *env = getenv("BLK_BACKEND");
		if (env && strcmp(env, "gpu") == 0)
			backend = BLK_BACKEND_GPU;
		else if (env && (strcmp(env, "interpreter") == 0 || strcmp(env, "interp") == 0))
			backend = BLK_BACKEND_INTERPRETER;
		else if (env && env[0])
			return fail(BLK_ERROR_INVALID_ARGUMENT, "BLK_BACKEND='%s': expected gpu or interpreter", env);
		else
			backend = BLK_BACKEND_INTERPRETER;
	}
	if (backend == BLK_BACKEND_GPU)
		return fail(BLK_ERROR_NO_DEVICE, "blk_context_create: this build of libblk has no GPU backend yet; "
		                                 "use BLK_BACKEND_INTERPRETER");
	if (backend != BLK_BACKEND_INTERPRETER)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_context_create: unknown backend %d", (int)backend);
	blk_context *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_context_create: out of memory");
	ctx->backend = backend;
	ctx->device = device;
	pthread_mutex_init(&ctx->lock, NULL);
	*out = ctx;
	return ok();
}

void blk_context_destroy(blk_context *ctx)
{
	if (!ctx)
		return;
	for (int i = 0; i < ctx->n_bufs; i++)
		free(ctx->bufs[i].data);
	free(ctx->bufs);
	sb_free(&ctx->printed);
	sb_free(&ctx->printed_out);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

blk_backend blk_context_backend(const blk_context *ctx) { return ctx ? ctx->backend : BLK_BACKEND_AUTO; }

const char *blk_context_printed(blk_context *ctx)
{
	if (!ctx)
		return "";
	pthread_mutex_lock(&ctx->lock);
	StrBuf t = ctx->printed_out;
	ctx->printed_out = ctx->printed;
	ctx->printed = t;
	ctx->printed.len = 0;
	if (ctx->printed.data)
		ctx->printed.data[0] = '\0';
	pthread_mutex_unlock(&ctx->lock);
	return ctx->printed_out.data && !ctx->printed_out.failed ? ctx->printed_out.data : "";
}

blk_status blk_malloc(blk_context *ctx, size_t bytes, blk_devptr *out)
{
	if (!ctx || !out)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_malloc: %s is NULL", ctx ? "out" : "ctx");
	if (bytes == 0 || bytes > ((size_t)1 << 40))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_malloc: cannot allocate %zu bytes", bytes);
	/* 256-byte alignment, as cuMemAlloc gives, so that alignment-dependent
	 * code behaves the same on both backends. */
	void *p = aligned_alloc(256, (bytes + 255) & ~(size_t)255);
	if (!p)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc: out of memory (%zu bytes)", bytes);
	memset(p, 0, bytes);
	pthread_mutex_lock(&ctx->lock);
	if (ctx->n_bufs == ctx->cap_bufs) {
		int cap = ctx->cap_bufs ? ctx->cap_bufs * 2 : 16;
		InterpBuffer *b = realloc(ctx->bufs, (size_t)cap * sizeof *b);
		if (!b) {
			pthread_mutex_unlock(&ctx->lock);
			free(p);
			return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc: out of memory");
		}
		ctx->bufs = b;
		ctx->cap_bufs = cap;
	}
	ctx->bufs[ctx->n_bufs++] = (InterpBuffer){.data = p, .bytes = bytes};
	pthread_mutex_unlock(&ctx->lock);
	*out = (blk_devptr)(uintptr_t)p;
	return ok();
}

/* The buffer holding [p, p + bytes), or -1. Caller holds the lock. */
static int find_buffer(blk_context *ctx, blk_devptr p, size_t bytes)
{
	for (int i = 0; i < ctx->n_bufs; i++) {
		uintptr_t lo = (uintptr_t)ctx->bufs[i].data;
		if (p >= lo && p - lo <= ctx->bufs[i].bytes && bytes <= ctx->bufs[i].bytes - (p - lo))
			return i;
	}
	return -1;
}

blk_status blk_free(blk_context *ctx, blk_devptr ptr)
{
	if (!ctx)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_free: ctx is NULL");
	if (!ptr)
		return ok();
	pthread_mutex_lock(&ctx->lock);
	for (int i = 0; i < ctx->n_bufs; i++)
		if ((uintptr_t)ctx->bufs[i].data == ptr) {
			free(ctx->bufs[i].data);
			ctx->bufs[i] = ctx->bufs[--ctx->n_bufs];
			pthread_mutex_unlock(&ctx->lock);
			return ok();
		}
	pthread_mutex_unlock(&ctx->lock);
	return fail(BLK_ERROR_NOT_FOUND, "blk_free: 0x%llx is not memory from blk_malloc", (unsigned long long)ptr);
}

static blk_status copy(blk_context *ctx, void *host, blk_devptr dev, size_t bytes, bool to_device)
{
	const char *fn = to_device ? "blk_copy_to_device" : "blk_copy_from_device";
	if (!ctx || (!host && bytes))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, ctx ? "the host pointer" : "ctx");
	pthread_mutex_lock(&ctx->lock);
	int b = find_buffer(ctx, dev, bytes);
	pthread_mutex_unlock(&ctx->lock);
	if (b < 0)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "%s: [0x%llx, +%zu bytes) is not inside memory from blk_malloc", fn,
		            (unsigned long long)dev, bytes);
	if (bytes) {
		if (to_device)
			memcpy((void *)(uintptr_t)dev, host, bytes);
		else
			memcpy(host, (const void *)(uintptr_t)dev, bytes);
	}
	return ok();
}

blk_status blk_copy_to_device(blk_context *ctx, blk_devptr dst, const void *src, size_t bytes)
{
	return copy(ctx, (void *)src, dst, bytes, true);
}

blk_status blk_copy_from_device(blk_context *ctx, void *dst, blk_devptr src, size_t bytes)
{
	return copy(ctx, dst, src, bytes, false);
}

/* ---- modules and kernels ---------------------------------------------------------- */

typedef struct Variant {
	ConstBinding *consts; /* what it was compiled with (launch consts, defines, config) */
	int n_consts;
	IrFunc *f;
} Variant;

struct blk_kernel {
	blk_module *m;
	Node *node;
	AutotuneSpec autotune;
	blk_param_info *params;
	int n_params;
	Variant *variants;
	int n_variants, cap_variants;
};

struct blk_module {
	blk_context *ctx;
	Arena arena;
	ModuleSet set;
	Module *mod;
	ConstBinding *defines;
	int n_defines;
	blk_kernel *kernels;
	int n_kernels;
	pthread_mutex_t lock;
};

static int elem_bytes(Type t)
{
	Type e = type_pointee(type_elem(t));
	if (e.ptr)
		return 8;
	int bits = scalar_bits((ScalarKind)e.scalar);
	return bits < 8 ? 1 : bits / 8;
}

static bool describe_params(blk_module *m, blk_kernel *k, Diag *diag)
{
	Node *n = k->node;
	k->n_params = n->list.len;
	k->params = arena_alloc(&m->arena, (size_t)(k->n_params ? k->n_params : 1) * sizeof *k->params);
	if (!k->params)
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
		ScalarKind sk;
		if (!base || base->kind != N_TYPE_NAME || !scalar_from_name(base->name, &sk)) {
			diag_error(diag, p->span, "parameter '%s' has no valid type", p->name);
			return false;
		}
		Type ty = type_scalar(sk);
		ty.ptr = (uint8_t)depth;
		StrBuf sb = {0};
		if (is_const)
			sb_puts(&sb, "const ");
		type_print(ty, &sb);
		k->params[i] = (blk_param_info){
			.name = p->name,
			.type = sb.data ? arena_strndup(&m->arena, sb.data, sb.len) : "?",
			.kind = depth ? BLK_PARAM_POINTER : scalar_is_float(sk) ? BLK_PARAM_FLOAT : BLK_PARAM_INT,
			.is_const = is_const,
			.elem_bytes = depth ? elem_bytes(ty) : (scalar_bits(sk) < 8 ? 1 : scalar_bits(sk) / 8),
		};
		sb_free(&sb);
	}
	return true;
}

static blk_status load_module(blk_context *ctx, const Source *given, const char *path, const blk_module_options *opt,
                              blk_module **out)
{
	if (!ctx || !out)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load: %s is NULL", ctx ? "out" : "ctx");
	*out = NULL;
	blk_module *m = calloc(1, sizeof *m);
	if (!m)
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_module_load: out of memory");
	m->ctx = ctx;
	pthread_mutex_init(&m->lock, NULL);
	Diag diag;
	diag_init(&diag);
	m->set = (ModuleSet){.arena = &m->arena, .diag = &diag};
	m->set.stdlib_dir = stdlib_dir();
	if (opt) {
		m->set.include_dirs = opt->include_dirs;
		m->set.n_include_dirs = opt->n_include_dirs;
		m->defines = arena_alloc(&m->arena, (size_t)(opt->n_defines ? opt->n_defines : 1) * sizeof *m->defines);
		for (int i = 0; m->defines && i < opt->n_defines; i++)
			m->defines[i] = (ConstBinding){arena_strndup(&m->arena, opt->defines[i].name, strlen(opt->defines[i].name)),
			                               opt->defines[i].is_float != 0, opt->defines[i].i, opt->defines[i].f};
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
		status = fail(diag.errors ? BLK_ERROR_SOURCE : BLK_ERROR_NOT_FOUND, "%s",
		              diag.out.data ? diag.out.data : "cannot load the module");
	} else {
		for (int i = 0; i < m->mod->file->list.len; i++)
			m->n_kernels += ((Node *)m->mod->file->list.items[i])->kind == N_KERNEL;
		m->kernels = arena_alloc(&m->arena, (size_t)(m->n_kernels ? m->n_kernels : 1) * sizeof *m->kernels);
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
		}
		if (diag.errors)
			status = fail(BLK_ERROR_SOURCE, "%s", diag.out.data ? diag.out.data : "");
		else if (!m->kernels)
			status = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_module_load: out of memory");
	}
	diag_free(&diag);
	m->set.diag = NULL;
	if (status != BLK_SUCCESS) {
		blk_module_destroy(m);
		return status;
	}
	*out = m;
	return ok();
}

blk_status blk_module_load_file(blk_context *ctx, const char *path, const blk_module_options *opt, blk_module **out)
{
	if (!path)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load_file: path is NULL");
	return load_module(ctx, NULL, path, opt, out);
}

blk_status blk_module_load_source(blk_context *ctx, const char *name, const char *text, size_t len,
                                  const blk_module_options *opt, blk_module **out)
{
	if (!name || (!text && len))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load_source: %s is NULL", name ? "text" : "name");
	if (len > UINT32_MAX / 2)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_module_load_source: '%s' is too large", name);
	Source src = {.name = name, .text = text ? text : "", .len = (uint32_t)len};
	return load_module(ctx, &src, NULL, opt, out);
}

void blk_module_destroy(blk_module *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	arena_free(&m->arena);
	free(m);
}

blk_status blk_kernel_get(blk_module *m, const char *name, blk_kernel **out)
{
	if (!m || !out)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_get: %s is NULL", m ? "out" : "the module");
	*out = NULL;
	for (int i = 0; i < m->n_kernels; i++)
		if (!name || strcmp(m->kernels[i].node->name, name) == 0) {
			if (!name && m->n_kernels > 1)
				return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_get: '%s' has %d kernels; name one",
				            m->mod->src->name, m->n_kernels);
			*out = &m->kernels[i];
			return ok();
		}
	return fail(BLK_ERROR_NOT_FOUND, "blk_kernel_get: '%s' has no kernel%s%s", m->mod->src->name, name ? " named " : "",
	            name ? name : "");
}

int blk_kernel_num_params(const blk_kernel *k) { return k ? k->n_params : 0; }

blk_status blk_kernel_param(const blk_kernel *k, int i, blk_param_info *out)
{
	if (!k || !out || i < 0 || i >= k->n_params)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_param: no parameter %d", i);
	*out = k->params[i];
	return ok();
}

/* ---- variants and launches -------------------------------------------------------- */

/* The const values of a launch: the launch's own, then the module's
 * defines, then (for names still missing) the kernel's first autotune
 * config; defaults in the source come last, in irgen. */
static int launch_consts(blk_kernel *k, const blk_launch_options *opt, ConstBinding *out)
{
	int n = 0;
	for (int i = 0; opt && i < opt->n_consts; i++)
		out[n++] = (ConstBinding){opt->consts[i].name, opt->consts[i].is_float != 0, opt->consts[i].i,
		                          opt->consts[i].f};
	const ConstBinding *more[2] = {k->m->defines, k->autotune.n_configs ? k->autotune.configs[0] : NULL};
	int counts[2] = {k->m->n_defines, k->autotune.n_configs ? k->autotune.config_len[0] : 0};
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < counts[s]; i++) {
			bool seen = false;
			for (int j = 0; j < n && !seen; j++)
				seen = strcmp(out[j].name, more[s][i].name) == 0;
			if (!seen)
				out[n++] = more[s][i];
		}
	return n;
}

static bool same_consts(const Variant *v, const ConstBinding *c, int n)
{
	if (v->n_consts != n)
		return false;
	for (int i = 0; i < n; i++) {
		bool found = false;
		for (int j = 0; j < n && !found; j++)
			found = strcmp(v->consts[j].name, c[i].name) == 0 && v->consts[j].is_float == c[i].is_float &&
			        (c[i].is_float ? v->consts[j].f == c[i].f : v->consts[j].i == c[i].i);
		if (!found)
			return false;
	}
	return true;
}

/* The compiled variant for these consts, made on first use. Caller holds m->lock. */
static blk_status get_variant(blk_kernel *k, const ConstBinding *consts, int n, int num_warps, int num_stages,
                              IrFunc **out)
{
	blk_module *m = k->m;
	for (int i = 0; i < k->n_variants; i++)
		if (same_consts(&k->variants[i], consts, n) &&
		    (!num_warps || k->variants[i].f->num_warps == num_warps) &&
		    (!num_stages || k->variants[i].f->num_stages == num_stages)) {
			*out = k->variants[i].f;
			return BLK_SUCCESS;
		}
	if (k->n_variants == k->cap_variants) {
		int cap = k->cap_variants ? k->cap_variants * 2 : 4;
		Variant *v = arena_alloc(&m->arena, (size_t)cap * sizeof *v);
		if (!v)
			return fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory compiling '%s'", k->node->name);
		if (k->n_variants)
			memcpy(v, k->variants, (size_t)k->n_variants * sizeof *v);
		k->variants = v;
		k->cap_variants = cap;
	}
	Diag diag;
	diag_init(&diag);
	m->set.diag = &diag;
	ConstBinding *copy = arena_alloc(&m->arena, (size_t)(n ? n : 1) * sizeof *copy);
	for (int i = 0; copy && i < n; i++) {
		copy[i] = consts[i];
		copy[i].name = arena_strndup(&m->arena, consts[i].name, strlen(consts[i].name));
	}
	IrgenOptions io = {.consts = copy, .n_consts = n, .num_warps = num_warps, .num_stages = num_stages};
	IrFunc *f = copy ? irgen_kernel(m->mod, k->node, &io, &diag, &m->arena) : NULL;
	if (f && !ir_run_passes(f, NULL, NULL, NULL, &diag))
		f = NULL;
	blk_status status = BLK_SUCCESS;
	if (!f)
		status = fail(diag.errors ? BLK_ERROR_SOURCE : BLK_ERROR_OUT_OF_MEMORY, "%s",
		              diag.out.data ? diag.out.data : "out of memory");
	else
		k->variants[k->n_variants++] = (Variant){copy, n, f};
	m->set.diag = NULL;
	diag_free(&diag);
	*out = f;
	return status;
}

static blk_status check_args(blk_kernel *k, const blk_arg *args, int n_args)
{
	int want = 0;
	for (int i = 0; i < k->n_params; i++)
		want += !k->params[i].is_const;
	const char *kn = k->node->name;
	if (n_args != want || (!args && n_args))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: kernel '%s' takes %d argument%s (its parameters that "
		                                        "are not const), given %d", kn, want, want == 1 ? "" : "s", n_args);
	for (int i = 0, a = 0; i < k->n_params; i++) {
		const blk_param_info *p = &k->params[i];
		if (p->is_const)
			continue;
		const blk_arg *arg = &args[a++];
		static const char *const kinds[] = {"a pointer", "an integer", "a float"};
		if (arg->kind > BLK_ARG_FLOAT)
			return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s') of '%s' has an unknown kind %d", a,
			            p->name, kn, (int)arg->kind);
		bool fits = (p->kind == BLK_PARAM_POINTER && arg->kind == BLK_ARG_PTR) ||
		            (p->kind == BLK_PARAM_INT && arg->kind == BLK_ARG_INT) ||
		            (p->kind == BLK_PARAM_FLOAT && (arg->kind == BLK_ARG_FLOAT || arg->kind == BLK_ARG_INT));
		if (!fits)
			return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s: %s') of '%s' must be %s, given %s", a,
			            p->name, p->type, kn, kinds[p->kind], kinds[arg->kind]);
		if (p->kind == BLK_PARAM_POINTER && arg->v.ptr == 0)
			return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s: %s') of '%s' is a null pointer", a,
			            p->name, p->type, kn);
		if (p->kind == BLK_PARAM_INT) {
			ScalarKind sk;
			const char *t = p->type;
			if (scalar_from_name(t, &sk) && scalar_bits(sk) < 64) {
				int bits = scalar_bits(sk);
				bool ok_range = scalar_is_unsigned(sk) || sk == SK_I1
				                    ? arg->v.i >= 0 && arg->v.i < ((int64_t)1 << bits)
				                    : arg->v.i >= -((int64_t)1 << (bits - 1)) && arg->v.i < ((int64_t)1 << (bits - 1));
				if (!ok_range)
					return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s: %s') of '%s' is %lld, "
					                                        "out of range for %s", a, p->name, p->type, kn,
					            (long long)arg->v.i, t);
			}
		}
	}
	return BLK_SUCCESS;
}

blk_status blk_launch(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt)
{
	if (!k)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: kernel is NULL");
	blk_status st = check_args(k, args, n_args);
	if (st != BLK_SUCCESS)
		return st;
	blk_module *m = k->m;
	blk_context *ctx = m->ctx;
	int cap = (opt ? opt->n_consts : 0) + m->n_defines + (k->autotune.n_configs ? k->autotune.config_len[0] : 0);
	ConstBinding *consts = malloc((size_t)(cap ? cap : 1) * sizeof *consts);
	ConstBinding *scalars = malloc((size_t)(n_args ? n_args : 1) * sizeof *scalars);
	InterpArg *iargs = malloc((size_t)(n_args ? n_args : 1) * sizeof *iargs);
	if (!consts || !scalars || !iargs) {
		free(consts);
		free(scalars);
		free(iargs);
		return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	}
	int n_consts = launch_consts(k, opt, consts), n_scalars = 0;
	for (int i = 0, a = 0; i < k->n_params; i++) {
		if (k->params[i].is_const)
			continue;
		const blk_arg *arg = &args[a];
		bool is_float = k->params[i].kind == BLK_PARAM_FLOAT;
		double fv = arg->kind == BLK_ARG_FLOAT ? arg->v.f : (double)arg->v.i;
		iargs[a++] = is_float ? interp_float(fv) : (InterpArg){.i = arg->kind == BLK_ARG_PTR ? (int64_t)arg->v.ptr : arg->v.i};
		if (k->params[i].kind != BLK_PARAM_POINTER)
			scalars[n_scalars++] = (ConstBinding){k->params[i].name, is_float, arg->v.i, fv};
	}

	pthread_mutex_lock(&m->lock);
	IrFunc *f;
	st = get_variant(k, consts, n_consts, opt ? opt->num_warps : 0, opt ? opt->num_stages : 0, &f);
	int grid[3] = {1, 1, 1};
	if (st == BLK_SUCCESS) {
		if (opt && (opt->grid[0] || opt->grid[1] || opt->grid[2])) {
			for (int i = 0; i < 3; i++)
				grid[i] = (int)(opt->grid[i] ? opt->grid[i] : 1);
		} else {
			Diag diag;
			diag_init(&diag);
			int64_t g[3];
			Arena scratch = {0};
			if (irgen_grid(m->mod, k->node, &(IrgenOptions){.consts = consts, .n_consts = n_consts}, scalars, n_scalars,
			               g, &diag, &scratch)) {
				for (int i = 0; i < 3; i++)
					grid[i] = (int)g[i];
			} else {
				st = fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: %s", diag.out.data ? diag.out.data : "no grid");
			}
			arena_free(&scratch);
			diag_free(&diag);
		}
	}
	pthread_mutex_unlock(&m->lock);

	if (st == BLK_SUCCESS) {
		pthread_mutex_lock(&ctx->lock);
		int nb = ctx->n_bufs;
		InterpBuffer *bufs = malloc((size_t)(nb ? nb : 1) * sizeof *bufs);
		if (bufs) {
			memcpy(bufs, ctx->bufs, (size_t)nb * sizeof *bufs);
			/* name each buffer after the first pointer argument into it */
			for (int i = 0, a = 0; i < k->n_params; i++) {
				if (k->params[i].is_const)
					continue;
				const blk_arg *arg = &args[a++];
				int b = arg->kind == BLK_ARG_PTR ? find_buffer(ctx, arg->v.ptr, 0) : -1;
				if (b >= 0 && !bufs[b].name)
					bufs[b].name = k->params[i].name;
			}
		}
		pthread_mutex_unlock(&ctx->lock);
		const char *env = getenv("BLK_INTERP_THREADS");
		int threads = opt && opt->threads ? opt->threads : env ? atoi(env) : 1;
		StrBuf printed = {0};
		InterpOptions io = {.grid = {grid[0], grid[1], grid[2]}, .threads = threads, .print_out = &printed};
		Diag diag;
		diag_init(&diag);
		if (!bufs)
			st = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
		else if (!interp_run(f, iargs, n_args, bufs, nb, &io, &diag))
			st = fail(BLK_ERROR_LAUNCH, "%s", diag.out.data ? diag.out.data : "the kernel failed");
		diag_free(&diag);
		free(bufs);
		if (printed.len) {
			pthread_mutex_lock(&ctx->lock);
			sb_putn(&ctx->printed, printed.data, printed.len);
			pthread_mutex_unlock(&ctx->lock);
		}
		sb_free(&printed);
	}
	free(consts);
	free(scalars);
	free(iargs);
	return st == BLK_SUCCESS ? ok() : st;
}
