/* autotune.c: @autotune kernels: whether a launch leaves the config open,
 * the values of the kernel's key, and the best config for each:
 * remembered, from the disk cache, or timed now (blk_autotune). */
#include "runtime.h"
#include "lower/lower.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- autotuning ------------------------------------------------------------------------ *
 *
 * A launch of an @autotune kernel that leaves a config's name open
 * (needs_tuning) runs the config chosen for the values of the kernel's key:
 * remembered in memory (k->tuned), else in the disk cache (KEY.tune), else
 * chosen now by timing each config on the launch's own arguments. The
 * memory of every pointer argument is saved first and put back after each
 * config, so the launch itself runs on what it was given. On the
 * interpreter nothing is timed: the first config that compiles is taken. */

/* Does the launch give `name` (its consts, the module's defines; for
 * num_warps and num_stages, its options too)? */
static bool launch_gives(const blk_kernel *k, const blk_launch_options *opt, const char *name)
{
	if (opt && opt->num_warps > 0 && strcmp(name, "num_warps") == 0)
		return true;
	if (opt && opt->num_stages > 0 && strcmp(name, "num_stages") == 0)
		return true;
	for (int i = 0; opt && i < opt->n_consts; i++)
		if (opt->consts[i].name && strcmp(opt->consts[i].name, name) == 0)
			return true;
	for (int i = 0; i < k->m->n_defines; i++)
		if (strcmp(k->m->defines[i].name, name) == 0)
			return true;
	return false;
}

/* Does this launch leave the choice among the kernel's configs open? With
 * two configs or more: when the configs set const parameters, one of
 * those the launch does not give (a launch that gives them all runs as
 * given, num_warps and num_stages from the first config unless given);
 * when they set only num_warps or num_stages, one of those. */
bool rt_needs_tuning(const blk_kernel *k, const blk_launch_options *opt)
{
	if (k->autotune.n_configs < 2)
		return false;
	bool consts = false, open_const = false, open_option = false;
	for (int c = 0; c < k->autotune.n_configs; c++)
		for (int i = 0; i < k->autotune.config_len[c]; i++) {
			const char *name = k->autotune.configs[c][i].name;
			bool option = irgen_is_option(name);
			bool given = launch_gives(k, opt, name);
			consts |= !option;
			open_const |= !option && !given;
			open_option |= option && !given;
		}
	return consts ? open_const : open_option;
}

/* The value of the kernel's key name i in this launch: an integer
 * argument's value, a float's bits, for a pointer whether it is 16-byte
 * aligned; a const parameter's value as the launch gives it (INT64_MIN
 * when it does not). */
static int64_t key_arg_value(const blk_arg *a)
{
	int64_t v;
	switch (a->kind) {
	case BLK_ARG_PTR:
		return (a->v.ptr & 15) == 0;
	case BLK_ARG_FLOAT:
		memcpy(&v, &a->v.f, sizeof v);
		return v;
	default:
		return a->v.i;
	}
}

/* A const type's value in a key: a hash of its name (FNV-1a). */
static int64_t type_key(const char *type)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *p = type; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return (int64_t)(h >> 1);
}

void rt_key_values(const blk_kernel *k, const blk_arg *args, const blk_launch_options *opt, int64_t *out)
{
	for (int i = 0; i < k->autotune.n_key; i++) {
		if (k->key_arg[i] >= 0) {
			out[i] = key_arg_value(&args[k->key_arg[i]]);
			continue;
		}
		out[i] = INT64_MIN;
		const char *name = k->autotune.key[i];
		const blk_const *c = NULL;
		for (int j = 0; opt && j < opt->n_consts && !c; j++)
			if (opt->consts[j].name && strcmp(opt->consts[j].name, name) == 0)
				c = &opt->consts[j];
		if (c) {
			if (c->type)
				out[i] = type_key(c->type);
			else if (c->is_float)
				memcpy(&out[i], &c->f, sizeof out[i]);
			else
				out[i] = c->i;
			continue;
		}
		for (int j = 0; j < k->m->n_defines; j++)
			if (strcmp(k->m->defines[j].name, name) == 0) {
				if (k->m->defines[j].type)
					out[i] = type_key(k->m->defines[j].type);
				else if (k->m->defines[j].is_float)
					memcpy(&out[i], &k->m->defines[j].f, sizeof out[i]);
				else
					out[i] = k->m->defines[j].i;
				break;
			}
	}
}

/* Do the arguments give the key the values the last launch's did? (Its
 * const names were compared with the request.) */
bool rt_same_key(const blk_kernel *k, const blk_arg *args)
{
	for (int i = 0; i < k->autotune.n_key; i++)
		if (k->key_arg[i] >= 0 && key_arg_value(&args[k->key_arg[i]]) != k->last.key[i])
			return false;
	return true;
}

static Tuned *find_tuned(blk_kernel *k, const int64_t *key, uint64_t spec)
{
	size_t bytes = (size_t)k->autotune.n_key * sizeof *key;
	for (int i = 0; i < k->n_tuned; i++)
		if (k->tuned[i].spec == spec && memcmp(k->tuned[i].key, key, bytes) == 0)
			return &k->tuned[i];
	return NULL;
}

static void remember_tuned(blk_kernel *k, const int64_t *key, uint64_t spec, int best)
{
	Tuned *t = find_tuned(k, key, spec);
	if (!t) {
		if (k->n_tuned == k->cap_tuned) {
			int cap = k->cap_tuned ? 2 * k->cap_tuned : 8;
			Tuned *nt = arena_alloc(&k->m->arena, (size_t)cap * sizeof *nt);
			if (!nt)
				return; /* no memory: the next launch tunes again */
			if (k->n_tuned)
				memcpy(nt, k->tuned, (size_t)k->n_tuned * sizeof *nt);
			k->tuned = nt;
			k->cap_tuned = cap;
		}
		int64_t *copy = arena_alloc(&k->m->arena, (size_t)(k->autotune.n_key ? k->autotune.n_key : 1) * sizeof *copy);
		if (!copy)
			return;
		memcpy(copy, key, (size_t)k->autotune.n_key * sizeof *key);
		t = &k->tuned[k->n_tuned++];
		t->key = copy;
		t->spec = spec;
	}
	t->best = best;
	/* launches that remembered another choice look again */
	k->last.v = NULL;
}

/* "BLOCK=1024 num_warps=4": config c as text (the disk cache checks it). */
static void config_text(const blk_kernel *k, int c, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; c < k->autotune.n_configs && i < k->autotune.config_len[c] && n < size; i++) {
		const ConstBinding *b = &k->autotune.configs[c][i];
		int w = b->type       ? snprintf(buf + n, size - n, "%s%s=%s", i ? " " : "", b->name, b->type)
		        : b->is_float ? snprintf(buf + n, size - n, "%s%s=%.17g", i ? " " : "", b->name, b->f)
		                      : snprintf(buf + n, size - n, "%s%s=%lld", i ? " " : "", b->name, (long long)b->i);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/* The disk cache's key of the choice for these key values: the sources,
 * the kernel, what the launch gives (defines, consts, num_warps,
 * num_stages), the key's values, the specialization, the device. */
static bool tune_key(blk_kernel *k, const blk_launch_options *opt, const int64_t *key, uint64_t spec, CacheKey *out)
{
	blk_module *m = k->m;
	int n = m->set.modules.len, nc = opt ? opt->n_consts : 0;
	const Source **srcs = malloc((size_t)(n ? n : 1) * sizeof *srcs);
	ConstBinding *given = malloc((size_t)(nc ? nc : 1) * sizeof *given);
	KeyHasher *h = srcs && given ? rt_key_begin("blk autotune") : NULL;
	if (h) {
		for (int i = 0; i < n; i++)
			srcs[i] = ((Module *)m->set.modules.items[i])->src;
		for (int i = 0; i < nc; i++)
			given[i] = (ConstBinding){opt->consts[i].name ? opt->consts[i].name : "", opt->consts[i].is_float != 0,
			                          opt->consts[i].i, opt->consts[i].f, opt->consts[i].type};
		rt_key_str(h, blk_compiler_version());
		rt_key_sources(h, srcs, n);
		rt_key_str(h, k->node->name);
		rt_key_consts(h, m->defines, m->n_defines);
		rt_key_consts(h, given, nc);
		rt_key_i64(h, opt ? opt->num_warps : 0);
		rt_key_i64(h, opt ? opt->num_stages : 0);
		rt_key_bytes(h, key, (size_t)k->autotune.n_key * sizeof *key);
		rt_key_i64(h, (int64_t)spec);
		rt_key_str(h, m->ctx->device_name);
		rt_key_str(h, m->ctx->arch);
	}
	free(srcs);
	free(given);
	return rt_key_end(h, out);
}

/* The memory of a pointer argument, saved while configs are timed. */
typedef struct Saved {
	CUdeviceptr base, copy;
	size_t bytes;
} Saved;

static void free_saved(blk_context *ctx, Saved *s, int n)
{
	for (int i = 0; i < n; i++)
		ctx->cu->cuMemFree(s[i].copy);
	free(s);
}

/* Copies (on the device) the whole allocation holding each pointer
 * argument, each allocation once. */
static blk_status save_buffers(blk_context *ctx, const blk_kernel *k, const blk_arg *args, int n_args, Saved **out,
                               int *n_out)
{
	const CudaDriver *cu = ctx->cu;
	const char *fn = "blk_autotune";
	*out = NULL;
	*n_out = 0;
	CUresult r = cu->cuCtxSynchronize(); /* what the arguments hold is final */
	if (r != CUDA_SUCCESS)
		return cuda_fail(ctx, r, fn, "cuCtxSynchronize");
	Saved *s = calloc((size_t)(n_args ? n_args : 1), sizeof *s);
	if (!s)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
	int n = 0;
	blk_status st = BLK_SUCCESS;
	for (int a = 0; a < n_args && st == BLK_SUCCESS; a++) {
		if (args[a].kind != BLK_ARG_PTR)
			continue;
		CUdeviceptr base = 0;
		size_t bytes = 0;
		if ((r = cu->cuMemGetAddressRange(&base, &bytes, (CUdeviceptr)args[a].v.ptr)) != CUDA_SUCCESS) {
			char msg[512];
			st = rt_fail(cuda_blk_status(r), "%s: argument %d of '%s' (0x%llx) is not device memory: %s", fn, a + 1,
			             k->node->name, (unsigned long long)args[a].v.ptr,
			             cuda_describe(cu, r, "cuMemGetAddressRange_v2", msg, sizeof msg));
			break;
		}
		bool seen = false;
		for (int j = 0; j < n && !seen; j++)
			seen = s[j].base == base;
		if (seen)
			continue;
		if ((r = cu->cuMemAlloc(&s[n].copy, bytes)) != CUDA_SUCCESS) {
			char msg[512];
			st = rt_fail(cuda_blk_status(r),
			             "%s: saving the %zu bytes argument %d of '%s' points into, to put them back "
			             "after each config: %s (give the kernel's consts to launch without tuning)",
			             fn, bytes, a + 1, k->node->name, cuda_describe(cu, r, "cuMemAlloc_v2", msg, sizeof msg));
			break;
		}
		s[n].base = base;
		s[n].bytes = bytes;
		n++;
		if ((r = cu->cuMemcpyDtoD(s[n - 1].copy, base, bytes)) != CUDA_SUCCESS)
			st = cuda_fail(ctx, r, fn, "cuMemcpyDtoD_v2");
	}
	if (st != BLK_SUCCESS) {
		free_saved(ctx, s, n);
		return st;
	}
	*out = s;
	*n_out = n;
	return BLK_SUCCESS;
}

static blk_status restore_buffers(blk_context *ctx, const Saved *s, int n)
{
	const CudaDriver *cu = ctx->cu;
	CUresult r = cu->cuCtxSynchronize();
	for (int i = 0; i < n && r == CUDA_SUCCESS; i++)
		r = cu->cuMemcpyDtoD(s[i].base, s[i].copy, s[i].bytes);
	if (r == CUDA_SUCCESS)
		r = cu->cuCtxSynchronize(); /* before launches on streams that do not wait for the default one */
	return r == CUDA_SUCCESS ? BLK_SUCCESS : cuda_fail(ctx, r, "blk_autotune", "cuMemcpyDtoD_v2");
}

/* Sets config c's note in res (one line, cut to fit). */
static void set_note(blk_tune_result *res, int c, const char *text)
{
	if (!res || c >= BLK_TUNE_MAX_CONFIGS)
		return;
	size_t size = sizeof res->note[c], n = 0;
	for (; text[n] && n + 1 < size; n++)
		res->note[c][n] = text[n] == '\n' ? ' ' : text[n];
	res->note[c][n] = '\0';
}

/* On the interpreter nothing is timed: the first config that compiles. */
static blk_status tune_interp(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt, int nc,
                               blk_tune_result *res, int *best)
{
	blk_status first = BLK_SUCCESS;
	StrBuf msg = {0};
	for (int c = 0; c < nc; c++) {
		Variant *v = NULL;
		if (*best >= 0) {
			set_note(res, c, "not timed on the interpreter");
			continue;
		}
		blk_status st = rt_config_variant(k, opt, c, 0, args, n_args, &v);
		if (st == BLK_SUCCESS) {
			*best = c;
			if (res && c < BLK_TUNE_MAX_CONFIGS)
				res->ms[c] = 0;
			continue;
		}
		const char *e = blk_last_error();
		set_note(res, c, strncmp(e, "blk_launch: ", 12) == 0 ? e + 12 : e);
		if (first == BLK_SUCCESS) {
			first = st;
			sb_puts(&msg, e);
		}
	}
	blk_status st = BLK_SUCCESS;
	if (*best < 0)
		st = rt_fail(first, "no config of kernel '%s' can run; the first: %s", k->node->name, msg.data ? msg.data : "?");
	sb_free(&msg);
	return st;
}

/* Times the configs checks[] kept (round 0) or, when none of them ran,
 * those pruned for idleness (round 1), on the saved arguments; the fastest
 * into *best. A fault ends it: the context is unusable. */
static blk_status time_configs(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                               ConfigCheck *checks, int nc, const Saved *saved, int n_saved, blk_tune_result *res,
                               int *best)
{
	blk_context *ctx = k->m->ctx;
	double best_ms = 0;
	for (int round = 0; round < 2 && *best < 0; round++)
		for (int c = 0; c < nc; c++) {
			ConfigCheck *ch = &checks[c];
			if (!ch->v || ch->status != BLK_SUCCESS || ch->pruned != (round ? BLK_PRUNE_IDLE : 0))
				continue;
			double ms = 0;
			blk_status st = rt_time_gpu(ctx, ch->v, args, n_args, ch->grid, opt, 3, 10, &ms);
			if (st == BLK_SUCCESS) {
				if (res && c < BLK_TUNE_MAX_CONFIGS) {
					res->ms[c] = ms;
					res->note[c][0] = '\0'; /* an idle config timed after all */
				}
				if (*best < 0 || ms < best_ms) {
					*best = c;
					best_ms = ms;
				}
			} else {
				const char *e = blk_last_error();
				ch->status = st;
				snprintf(ch->note, sizeof ch->note, "%s", strncmp(e, "blk_launch: ", 12) == 0 ? e + 12 : e);
				set_note(res, c, ch->note);
				if (res && c < BLK_TUNE_MAX_CONFIGS)
					res->ms[c] = -1;
			}
			CUresult r = ctx->cu->cuCtxSynchronize();
			blk_status rs = cuda_error_is_sticky(r) ? st : restore_buffers(ctx, saved, n_saved);
			if (rs != BLK_SUCCESS) {
				*best = -1;
				return rs;
			}
		}
	return BLK_SUCCESS;
}

/* Runs every config of k on these arguments and sets *best to the fastest
 * (a kernel without configs: the one launch). On a GPU each config is first
 * made ready and checked (prune.c): those pruned, and those that could not
 * be made, are not timed. Caller holds m->lock. */
static blk_status tune(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt, uint64_t spec,
                       blk_tune_result *res, int *best)
{
	blk_context *ctx = k->m->ctx;
	int nc = k->autotune.n_configs > 1 ? k->autotune.n_configs : 1;
	if (res) {
		memset(res, 0, sizeof *res);
		res->n_configs = nc;
		res->best = -1;
		for (int c = 0; c < BLK_TUNE_MAX_CONFIGS; c++)
			res->ms[c] = -1;
	}
	*best = -1;
	if (ctx->backend != BLK_BACKEND_GPU) {
		blk_status st = tune_interp(k, args, n_args, opt, nc, res, best);
		if (res)
			res->best = *best;
		return st;
	}
	/* each config's options (what it gives, for the notes) and its check */
	int per = (opt ? opt->n_consts : 0) + 1;
	for (int c = 0; c < k->autotune.n_configs; c++)
		if ((opt ? opt->n_consts : 0) + k->autotune.config_len[c] > per)
			per = (opt ? opt->n_consts : 0) + k->autotune.config_len[c];
	blk_launch_options *opts = calloc((size_t)nc, sizeof *opts);
	blk_const *consts = calloc((size_t)nc * (size_t)per, sizeof *consts);
	ConfigCheck *checks = calloc((size_t)nc, sizeof *checks);
	blk_status st = BLK_SUCCESS;
	if (!opts || !consts || !checks)
		st = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_autotune: out of memory");
	for (int c = 0; st == BLK_SUCCESS && c < nc; c++)
		rt_config_options(k, opt, c, consts + (size_t)c * per, &opts[c]);
	if (st == BLK_SUCCESS)
		rt_check_configs(k, args, n_args, opt, opts, nc, true, spec, BLK_PRUNE_FIT | BLK_PRUNE_IDLE, checks);
	int n_fit = 0, first = -1;
	bool to_time = false;
	for (int c = 0; st == BLK_SUCCESS && c < nc; c++) {
		ConfigCheck *ch = &checks[c];
		n_fit += ch->pruned == BLK_PRUNE_FIT;
		to_time |= ch->v != NULL;
		if (res && c < BLK_TUNE_MAX_CONFIGS && ch->pruned)
			res->ms[c] = BLK_TUNE_PRUNED;
		set_note(res, c, ch->note);
	}
	Saved *saved = NULL;
	int n_saved = 0;
	if (st == BLK_SUCCESS && to_time && (st = save_buffers(ctx, k, args, n_args, &saved, &n_saved)) == BLK_SUCCESS) {
		st = time_configs(k, args, n_args, opt, checks, nc, saved, n_saved, res, best);
		free_saved(ctx, saved, n_saved);
	}
	for (int c = 0; st == BLK_SUCCESS && *best < 0 && first < 0 && c < nc; c++)
		if (checks[c].pruned == BLK_PRUNE_FIT || checks[c].status != BLK_SUCCESS)
			first = c; /* the first that could not run, for the error */
	if (st == BLK_SUCCESS && *best < 0 && n_fit == nc)
		st = rt_fail(BLK_ERROR_LAUNCH, "no config of kernel '%s' fits the device (%s): all %d pruned; config 0: %s",
		             k->node->name, ctx->device_name, nc, checks[0].note + strlen("pruned: "));
	else if (st == BLK_SUCCESS && *best < 0)
		st = rt_fail(first >= 0 && checks[first].status != BLK_SUCCESS ? checks[first].status : BLK_ERROR_LAUNCH,
		             "no config of kernel '%s' can run; the first: %s", k->node->name,
		             first >= 0 ? checks[first].note : "?");
	free(opts);
	free(consts);
	free(checks);
	if (res)
		res->best = *best;
	return st;
}

/* The config for these key values: remembered, on disk, or (for a launch)
 * tuned now. *known is false when it is only a guess (compiling ahead
 * before any tuning: the first config). Caller holds m->lock. */
blk_status rt_choose_config(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                         uint64_t spec, const int64_t *key, FindMode mode, int *cfg, bool *known)
{
	*known = true;
	*cfg = 0;
	Tuned *t = find_tuned(k, key, spec);
	if (t) {
		*cfg = t->best;
		return BLK_SUCCESS;
	}
	bool gpu = k->m->ctx->backend == BLK_BACKEND_GPU;
	char dir[4096], text[512], stored[512];
	CacheKey ck;
	bool disk = gpu && cache_mode() != CACHE_OFF && cache_dir(dir, sizeof dir) && tune_key(k, opt, key, spec, &ck);
	int index;
	bool read = disk && cache_read_tune(dir, &ck, &index, stored, sizeof stored);
	rt_cache_warning(k->m->ctx);
	if (read && index < k->autotune.n_configs) {
		config_text(k, index, text, sizeof text);
		if (strcmp(text, stored) == 0) {
			remember_tuned(k, key, spec, index);
			*cfg = index;
			return BLK_SUCCESS;
		}
	}
	if (mode == FIND_COMPILE) {
		*known = false;
		return BLK_SUCCESS;
	}
	blk_status st = tune(k, args, n_args, opt, spec, NULL, cfg);
	if (st != BLK_SUCCESS)
		return st;
	remember_tuned(k, key, spec, *cfg);
	if (disk) {
		config_text(k, *cfg, text, sizeof text);
		cache_write_tune(dir, &ck, *cfg, text);
	}
	return BLK_SUCCESS;
}

void rt_store_choice(blk_kernel *k, const blk_arg *args, const blk_launch_options *opt, uint64_t spec, int best)
{
	if (k->autotune.n_configs < 2 || best < 0)
		return;
	int n_key = k->autotune.n_key;
	int64_t kbuf[16];
	int64_t *key = n_key <= 16 ? kbuf : malloc((size_t)n_key * sizeof *key);
	if (!key)
		return; /* no memory: the next launch tunes again */
	rt_key_values(k, args, opt, key);
	remember_tuned(k, key, spec, best);
	char dir[4096], text[512];
	CacheKey ck;
	if (k->m->ctx->backend == BLK_BACKEND_GPU && cache_mode() != CACHE_OFF && cache_dir(dir, sizeof dir) &&
	    tune_key(k, opt, key, spec, &ck)) {
		config_text(k, best, text, sizeof text);
		cache_write_tune(dir, &ck, best, text);
	}
	rt_cache_warning(k->m->ctx);
	if (key != kbuf)
		free(key);
}

void rt_config_options(const blk_kernel *k, const blk_launch_options *opt, int c, blk_const *consts,
                       blk_launch_options *out)
{
	*out = opt ? *opt : (blk_launch_options){0};
	int n = 0;
	for (int i = 0; opt && i < opt->n_consts; i++)
		consts[n++] = opt->consts[i];
	for (int i = 0; c < k->autotune.n_configs && i < k->autotune.config_len[c]; i++) {
		const ConstBinding *b = &k->autotune.configs[c][i];
		if (strcmp(b->name, "num_warps") == 0 || strcmp(b->name, "num_stages") == 0) {
			int *field = b->name[4] == 'w' ? &out->num_warps : &out->num_stages;
			if (*field <= 0)
				*field = (int)b->i;
			continue;
		}
		if (!launch_gives(k, opt, b->name))
			consts[n++] = (blk_const){b->name, b->is_float, b->i, b->f, b->type};
	}
	out->consts = n ? consts : NULL;
	out->n_consts = n;
}

blk_status rt_check_tune_result(const blk_kernel *k, const blk_tune_result *result, const char *fn)
{
	if (result && k->autotune.n_configs > BLK_TUNE_MAX_CONFIGS)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT,
		               "%s: kernel '%s' has %d @autotune configs; a blk_tune_result holds at most %d "
		               "(tune it with result NULL, or by a launch)", fn, k->node->name, k->autotune.n_configs,
		               BLK_TUNE_MAX_CONFIGS);
	return BLK_SUCCESS;
}

blk_status blk_autotune(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                        blk_tune_result *result)
{
	if (!k)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_autotune: kernel is NULL");
	if (rt_handle_check(k, H_KERNEL, "blk_autotune") != BLK_SUCCESS)
		return BLK_ERROR_INVALID_ARGUMENT;
	blk_status st = rt_check_options(k, opt, "blk_autotune");
	if (st != BLK_SUCCESS)
		return st;
	if ((st = rt_check_tune_result(k, result, "blk_autotune")) != BLK_SUCCESS)
		return st;
	st = rt_check_args(k, args, n_args);
	if (st != BLK_SUCCESS)
		return st;
	blk_module *m = k->m;
	GpuScope scope;
	if ((st = rt_gpu_push(rt_kernel_context(k), "blk_autotune", &scope)) != BLK_SUCCESS)
		return st;
	pthread_mutex_lock(&m->lock);
	blk_context *ctx = m->ctx;
	if (!ctx)
		st = rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_autotune: the context of kernel '%s' was destroyed",
		             k->node->name);
	int best = -1;
	uint64_t spec = ctx && ctx->backend == BLK_BACKEND_GPU ? rt_arg_spec(k, args) : 0;
	if (st == BLK_SUCCESS)
		st = tune(k, args, n_args, opt, spec, result, &best);
	if (st == BLK_SUCCESS)
		rt_store_choice(k, args, opt, spec, best);
	pthread_mutex_unlock(&m->lock);
	rt_gpu_pop(&scope);
	return st == BLK_SUCCESS ? rt_ok() : st;
}
