/* jit.c: a variant compiled for the GPU and loaded: the PTX target for a
 * device, PTX and the kernel's parameters from the compile driver or from
 * the disk cache (with the driver's metadata beside it), loaded by the CUDA
 * driver's JIT; blk_kernel_compile. */
#include "runtime.h"
#include "lower/lower.h"
#include "pipeline/pipeline.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the PTX target ------------------------------------------------------------------ */

bool cuda_arch_for(int major, int minor, char *buf, size_t size)
{
	static const int targets[] = {90, 89, 87, 86, 80, 75, 72, 70};
	int cc = major * 10 + minor;
	if (cc == 90 && llvm_ptx_isa_version("sm_90a")) { /* wgmma and setmaxnreg: sm_90a runs on 9.0 alone */
		snprintf(buf, size, "sm_90a");
		return true;
	}
	for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
		if (targets[i] > cc)
			continue;
		char arch[16];
		snprintf(arch, sizeof arch, "sm_%d", targets[i]);
		if (!llvm_ptx_isa_version(arch))
			continue;
		snprintf(buf, size, "%s", arch);
		return true;
	}
	if (size)
		buf[0] = '\0';
	return false;
}

/* ---- compiling and loading ---------------------------------------------------------- */

/* The disk cache's key of v (cache.h: what it is made of). */
static bool variant_key(blk_kernel *k, Variant *v, CacheKey *out)
{
	blk_module *m = k->m;
	blk_context *ctx = m->ctx;
	int n = m->set.modules.len;
	const Source *buf[16];
	const Source **srcs = n <= 16 ? buf : malloc((size_t)n * sizeof *srcs);
	if (!srcs)
		return false;
	for (int i = 0; i < n; i++)
		srcs[i] = ((Module *)m->set.modules.items[i])->src;
	int options[OPTION_COUNT];
#define OPTION_VALUE(name, ...) options[OPTION_##name] = v->f->name;
	BLK_OPTIONS(OPTION_VALUE)
#undef OPTION_VALUE
	VariantKeyInput in = {
		.compiler_version = blk_compiler_version(),
		.sources = srcs,
		.n_sources = n,
		.kernel = k->node->name,
		.consts = v->consts,
		.n_consts = v->n_consts,
		.spec = v->spec,
		.passes = getenv("BLK_PASSES"),
		.options = options,
		.arch = ctx->arch,
		.cc_major = ctx->cc_major,
		.cc_minor = ctx->cc_minor,
		.driver_version = ctx->driver_version,
	};
	bool ok = cache_variant_key(&in, out);
	if (srcs != buf)
		free(srcs);
	return ok;
}

/* The warnings of a variant: the compiler's (compiler, or NULL) and the
 * one about spilled registers, from the JIT's info log (verbose: ptxas's "N
 * bytes spill stores, M bytes spill loads"): kept in the variant
 * (blk_compile_info) and added to the context's warnings
 * (blk_context_warnings). Nothing is printed. */
static void spill_warning(blk_kernel *k, Variant *v, const char *log, const char *compiler)
{
	blk_context *ctx = k->m->ctx;
	long stores = 0, loads = 0;
	char text[512] = "";
	if (gpu_ptxas_spills(log, &stores, &loads) && (stores || loads)) {
		snprintf(text, sizeof text,
		         "warning: kernel '%s' spills registers for %s: %ld bytes of spill stores and %ld bytes of spill "
		         "loads a thread; a smaller block or more warps (num_warps) keeps its values in registers\n",
		         v->f->name, ctx->arch, stores, loads);
		v->spill_bytes = stores > INT32_MAX ? INT32_MAX : (int)stores;
	}
	if (!compiler && !text[0])
		return;
	StrBuf all = {0};
	if (compiler)
		sb_putn(&all, compiler, strlen(compiler));
	sb_putn(&all, text, strlen(text));
	if (!all.data)
		return;
	v->warning = arena_strndup(&k->m->arena, all.data, all.len);
	pthread_mutex_lock(&ctx->lock);
	sb_putn(&ctx->warnings, all.data, all.len);
	pthread_mutex_unlock(&ctx->lock);
	sb_free(&all);
}

/* PTX (NUL-terminated) to a module loaded into the current context by the
 * driver's JIT: cuModuleLoadDataEx, which compiles it as a whole program.
 * (A link, cuLinkAddData, compiles PTX as relocatable code, which takes
 * more registers: bf16 bias + GELU on 4 warps got 40 a thread through a
 * link, 32 through this, and with them 75% occupancy against 100%.) The
 * driver keeps what it compiles in its own JIT cache, so PTX it has seen
 * loads quickly. info (info_size bytes) gets the JIT's info log, verbose:
 * ptxas's lines of registers and spills; errlog its error log. */
static CUresult jit_ptx(const CudaDriver *cu, const char *ptx, CUmodule *out, char *info, size_t info_size,
                        char *errlog, size_t errlog_size)
{
	CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
	                       CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
	void *vals[] = {info, (void *)(uintptr_t)info_size, errlog, (void *)(uintptr_t)errlog_size, (void *)(uintptr_t)1};
	info[0] = errlog[0] = '\0';
	CUresult r = cu->cuModuleLoadDataEx(out, ptx, sizeof opts / sizeof opts[0], opts, vals);
	info[info_size - 1] = errlog[errlog_size - 1] = '\0';
	return r;
}

/* The PTX just made (len bytes and a NUL) to a loaded module (jit_ptx);
 * the PTX and what the compile driver said of it (meta) go into the disk
 * cache as DIR/KEY.variant when dir is not NULL and the driver took it. *ms
 * gets the time of the JIT; info (info_size bytes) its log. */
static blk_status gpu_jit(blk_context *ctx, const char *kn, const char *ptx, size_t len, const CacheMeta *meta,
                          const char *dir, const CacheKey *key, CUmodule *out, double *ms, char *info, size_t info_size)
{
	const CudaDriver *cu = ctx->cu;
	char errlog[16384], msg[512];
	double t0 = rt_monotonic_ms();
	CUresult r = jit_ptx(cu, ptx, out, info, info_size, errlog, sizeof errlog);
	*ms = rt_monotonic_ms() - t0;
	if (r == CUDA_SUCCESS) {
		/* a cache that cannot be written is no error: the next process compiles again */
		if (dir)
			cache_write_variant(dir, key, ptx, len, meta);
		return BLK_SUCCESS;
	}
	size_t n = strlen(errlog);
	while (n && (errlog[n - 1] == '\n' || errlog[n - 1] == '\r'))
		errlog[--n] = '\0';
	return rt_fail(cuda_blk_status(r), "blk_launch: kernel '%s' for %s: %s%s%s", kn, ctx->arch,
	               cuda_describe(cu, r, "cuModuleLoadDataEx", msg, sizeof msg), n ? "\n" : "", errlog);
}

/* The arguments' layout: what the IR says each runtime parameter is, in
 * the bytes lowering gave it (meta, from the driver or the disk cache). */
static blk_status param_layout(blk_kernel *k, Variant *v, const CacheMeta *meta)
{
	const IrFunc *f = v->f;
	const char *kn = f->name;
	int n_rt = 0;
	for (int i = 0; i < f->n_params; i++)
		n_rt += f->params[i].value != NULL;
	if (!v->pkind)
		v->pkind = arena_alloc(&k->m->arena, (size_t)(n_rt ? n_rt : 1));
	if (!v->pscalar)
		v->pscalar = arena_alloc(&k->m->arena, (size_t)(n_rt ? n_rt : 1));
	if (!v->pkind || !v->pscalar)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	if (n_rt != k->n_args)
		return rt_fail(BLK_ERROR_LAUNCH, "blk_launch: internal error: kernel '%s' has %d runtime parameters in its IR, "
		                                 "%d in its source", kn, n_rt, k->n_args);
	bool maps = meta->n_tmaps == f->n_tmaps; /* the tensor maps after the kernel's own, 128 bytes each */
	for (int i = 0; maps && i < f->n_tmaps && n_rt + i < meta->n_params; i++)
		maps = meta->param_bytes[n_rt + i] == (int)sizeof(CUtensorMap);
	if (!maps || meta->n_params != n_rt + f->n_tmaps)
		return rt_fail(BLK_ERROR_LAUNCH,
		               "blk_launch: internal error: the compiled kernel '%s' takes %d parameters (%d tensor maps); it "
		               "has %d runtime parameters and %d tensor maps", kn, meta->n_params, meta->n_tmaps, n_rt,
		               f->n_tmaps);
	for (int i = 0, j = 0; i < f->n_params; i++) {
		const IrParam *p = &f->params[i];
		if (!p->value)
			continue;
		ScalarKind sk = (ScalarKind)p->type.scalar;
		int bits = p->type.ptr ? 64 : scalar_bits(sk), size = meta->param_bytes[j];
		bool fits = (size == 1 || size == 2 || size == 4 || size == 8) && size * 8 >= bits &&
		            (p->type.ptr || !scalar_is_float(sk) || sk < SK_F32 || size * 8 == bits);
		if (!fits) {
			StrBuf t = {0};
			type_print(p->type, &t);
			blk_status st = rt_fail(BLK_ERROR_LAUNCH,
			                        "blk_launch: internal error: parameter '%s: %s' of kernel '%s' takes %d bytes "
			                        "in its compiled code", p->name, t.data ? t.data : "?", kn, size);
			sb_free(&t);
			return st;
		}
		v->pkind[j] = p->type.ptr ? PK_PTR : scalar_is_float(sk) ? PK_FLOAT : PK_INT;
		v->pscalar[j] = (uint8_t)sk;
		j++;
	}
	return BLK_SUCCESS;
}

/* Compiles and loads v for ctx's device: PTX, the parameters' layout,
 * shared memory, a CUfunction. The PTX and what the compile driver said
 * of it come from the disk cache when it has them (BLK_CACHE,
 * BLK_ALWAYS_COMPILE) and read_cache; else the compile driver runs and they
 * are put there. Either way the CUDA driver's JIT loads the PTX. Caller
 * holds m->lock. */
static blk_status load_variant(blk_kernel *k, Variant *v, bool read_cache)
{
	blk_module *m = k->m;
	blk_context *ctx = m->ctx;
	IrFunc *f = v->f;
	const char *kn = f->name;
	blk_status st = rt_gpu_enter(ctx, "blk_launch");
	if (st != BLK_SUCCESS)
		return st;
	int warps = f->num_warps;
	if (warps < 1 || 32 * (long)warps > ctx->max_threads)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: kernel '%s' with num_warps %d needs %ld threads a "
		                                           "program; the device allows %d", kn, warps, 32 * (long)warps,
		               ctx->max_threads);

	/* the disk cache */
	CacheMode mode = cache_mode();
	char dir[4096];
	CacheKey key;
	bool cached = mode != CACHE_OFF && cache_dir(dir, sizeof dir) && variant_key(k, v, &key);
	CacheEntry entry = {0};
	CacheMeta meta = {0};
	CUmodule mod = NULL;
	char *ptx = NULL;
	size_t len = 0;
	v->from_disk = false;
	v->ms_llvm = v->ms_ptx = v->ms_cubin = 0;
	double t0 = rt_monotonic_ms();
	if (cached && mode == CACHE_READ_WRITE && read_cache && cache_read_variant(dir, &key, &entry)) {
		/* the entry's PTX through the JIT as a miss's (the driver's own cache
		 * makes it quick); its log is not read: a spill warning was given by
		 * the process that compiled it */
		char info[1024], errlog[1024];
		if (jit_ptx(ctx->cu, entry.ptx, &mod, info, sizeof info, errlog, sizeof errlog) == CUDA_SUCCESS) {
			ptx = (char *)entry.ptx;
			len = entry.ptx_len;
			meta = entry.meta;
			v->from_disk = true;
			v->ms_cubin = rt_monotonic_ms() - t0;
		} else {
			/* PTX this driver refuses: compiled again, and the entry rewritten */
			mod = NULL;
			cache_entry_free(&entry);
		}
	}
	/* the driver's later stages: with the module loaded only the target and
	 * the TMA plan (the tensor maps launches pass) */
	Diag diag;
	diag_init(&diag);
	PipelineRequest req = {.from = STAGE_TARGET, .to = mod ? STAGE_TARGET : STAGE_PTX, .f = f, .arch = ctx->arch};
	PipelineResult res;
	if (!blk_pipeline_run(&req, &res, &diag) || (!mod && !res.text)) {
		st = rt_fail(diag.errors ? BLK_ERROR_SOURCE : BLK_ERROR_OUT_OF_MEMORY, "%s",
		             diag.out.data && diag.out.len ? diag.out.data : "blk_launch: the kernel could not be compiled");
		diag_free(&diag);
		free(res.text);
		if (mod)
			ctx->cu->cuModuleUnload(mod);
		cache_entry_free(&entry);
		return st;
	}
	/* the compiler's warnings (a block kept in local memory, an option not
	 * applied): kept with the variant and the context's warnings, as the
	 * JIT's spill warning below */
	StrBuf compile_warning = {0};
	if (!mod && diag.warnings) { /* taken from diag, not copied */
		compile_warning = diag.out;
		diag.out = (StrBuf){0};
	}
	diag_free(&diag);
	if (!mod) {
		ptx = res.text;
		len = res.len;
		meta = (CacheMeta){.shared_bytes = res.shared_bytes, .threads = res.threads, .n_params = res.n_params,
		                   .n_tmaps = res.n_tmaps, .param_bytes = res.param_bytes};
		v->ms_llvm = res.ms[STAGE_TARGET] + res.ms[STAGE_GPU_PASSES] + res.ms[STAGE_LOWER];
		v->ms_ptx = res.ms[STAGE_PTX];
	}
	int smem = meta.shared_bytes;
	/* known before the checks, so that autotuning can say why a config does not fit (prune.c) */
	v->shared_bytes = smem;
	/* more than num_warps' threads with warp specialization's producer warpgroup */
	v->block = meta.threads > 32 * warps ? (unsigned)meta.threads : 32u * (unsigned)warps;
	if (smem < 0 || smem > ctx->smem_optin)
		st = rt_fail(BLK_ERROR_LAUNCH, "blk_launch: kernel '%s' needs %d bytes of shared memory; the device allows %d",
		             kn, smem, ctx->smem_optin);
	else if (v->block > (unsigned)ctx->max_threads)
		st = rt_fail(BLK_ERROR_LAUNCH, "blk_launch: kernel '%s' needs %u threads a program; the device allows %d", kn,
		             v->block, ctx->max_threads);
	if (st == BLK_SUCCESS)
		st = param_layout(k, v, &meta);

	v->spill_bytes = 0;
	v->registers = 0;
	v->max_block = 0;
	v->warning = NULL;
	if (st == BLK_SUCCESS && !mod) {
		char info[8192];
		st = gpu_jit(ctx, kn, ptx, len, &meta, cached ? dir : NULL, &key, &mod, &v->ms_cubin, info, sizeof info);
		if (st == BLK_SUCCESS)
			spill_warning(k, v, info, compile_warning.len ? compile_warning.data : NULL);
	}
	sb_free(&compile_warning);
	if (st == BLK_SUCCESS) {
		/* kept for blk_kernel_compile */
		v->ptx = arena_strndup(&m->arena, ptx, len);
		v->ptx_len = v->ptx ? len : 0;
		if (!v->ptx)
			st = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	}
	if (v->from_disk)
		cache_entry_free(&entry);
	else
		free(ptx);
	if (st != BLK_SUCCESS) {
		if (mod)
			ctx->cu->cuModuleUnload(mod);
		return st;
	}
	char msg[512];
	CUfunction fn = NULL;
	CUresult r = ctx->cu->cuModuleGetFunction(&fn, mod, kn);
	if (r == CUDA_SUCCESS && smem > 48 * 1024) {
		r = ctx->cu->cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
		if (r != CUDA_SUCCESS)
			cuda_describe(ctx->cu, r, "cuFuncSetAttribute", msg, sizeof msg);
	} else if (r != CUDA_SUCCESS) {
		cuda_describe(ctx->cu, r, "cuModuleGetFunction", msg, sizeof msg);
	}
	if (r != CUDA_SUCCESS) {
		ctx->cu->cuModuleUnload(mod);
		return rt_fail(cuda_blk_status(r), "blk_launch: kernel '%s': %s", kn, msg);
	}
	if (!rt_tma_cache_new(v, &m->arena)) {
		ctx->cu->cuModuleUnload(mod);
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	}
	int regs = 0, most = 0; /* reported (blk_compile_info) and checked by autotuning: an error leaves 0 */
	v->registers = ctx->cu->cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn) == CUDA_SUCCESS ? regs : 0;
	v->max_block =
		ctx->cu->cuFuncGetAttribute(&most, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn) == CUDA_SUCCESS ? most : 0;
	v->cumod = mod;
	v->fn = fn;
	v->assert_state = 0;
	if (ir_assert_ops(v->f, NULL, 0) > 0) {
		size_t bytes;
		if (ctx->cu->cuModuleGetGlobal(&v->assert_state, &bytes, mod, "blk_assert_state") != CUDA_SUCCESS)
			v->assert_state = 0;
	}
	return BLK_SUCCESS;
}

blk_status rt_gpu_load_variant(blk_kernel *k, Variant *v)
{
	blk_status st = load_variant(k, v, true);
	if (st != BLK_SUCCESS && v->from_disk) {
		/* an entry that checks but cannot be used (its function missing, its
		 * shared memory over the device's limit): compiled once more, and the
		 * entry rewritten */
		st = load_variant(k, v, false);
	}
	rt_cache_warning(k->m->ctx);
	return st;
}

blk_status rt_gpu_ready(blk_kernel *k, Variant **v, const blk_arg *args)
{
	blk_status st = (*v)->fn ? BLK_SUCCESS : rt_gpu_load_variant(k, *v);
	if (st == BLK_SUCCESS && args && (*v)->f->n_tmaps && !rt_tma_fits(*v, args)) {
		st = rt_variant_without_tma(k, *v, v);
		if (st == BLK_SUCCESS && !(*v)->fn)
			st = rt_gpu_load_variant(k, *v);
	}
	return st;
}

blk_status blk_kernel_compile(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                              blk_compile_info *info)
{
	if (!k)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_compile: kernel is NULL");
	if (rt_handle_check(k, H_KERNEL, "blk_kernel_compile") != BLK_SUCCESS)
		return BLK_ERROR_INVALID_ARGUMENT;
	if (info)
		memset(info, 0, sizeof *info);
	blk_status st = rt_check_options(k, opt, "blk_kernel_compile");
	if (st != BLK_SUCCESS)
		return st;
	if (args || n_args) {
		if ((st = rt_check_args(k, args, n_args)) != BLK_SUCCESS)
			return st;
	}
	blk_module *m = k->m;
	Variant *v = NULL;
	GpuScope scope;
	if ((st = rt_gpu_push(rt_kernel_context(k), "blk_kernel_compile", &scope)) != BLK_SUCCESS)
		return st;
	pthread_mutex_lock(&m->lock);
	blk_context *ctx = m->ctx;
	if (!ctx)
		st = rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_kernel_compile: the context of kernel '%s' was destroyed",
		             k->node->name);
	int before = k->n_variants;
	bool gpu = ctx && ctx->backend == BLK_BACKEND_GPU, loaded = false;
	if (st == BLK_SUCCESS)
		st = rt_find_variant(k, args, n_args, opt, gpu && args ? rt_arg_spec(k, args) : 0, FIND_COMPILE, &v);
	if (st == BLK_SUCCESS && gpu && !v->fn)
		loaded = true;
	if (st == BLK_SUCCESS && gpu)
		st = rt_gpu_ready(k, &v, args);
	if (st == BLK_SUCCESS && info) {
		bool made = k->n_variants > before && k->variants[k->n_variants - 1] == v;
		info->ptx = gpu ? v->ptx : NULL;
		info->ptx_len = gpu ? v->ptx_len : 0;
		info->shared_bytes = gpu ? v->shared_bytes : 0;
		info->num_warps = v->f->num_warps;
		info->num_stages = v->f->num_stages;
		if (made) {
			info->ms_parse = m->ms_parse;
			info->ms_irgen = v->ms_irgen;
			info->ms_passes = v->ms_passes;
		}
		if (loaded) {
			info->ms_llvm = v->ms_llvm;
			info->ms_ptx = v->ms_ptx;
			info->ms_cubin = v->ms_cubin;
		}
		info->from_disk_cache = gpu && v->from_disk;
		info->spill_bytes = gpu ? v->spill_bytes : 0;
		info->registers = gpu ? v->registers : 0;
		info->warnings = gpu && v->warning ? v->warning : "";
	}
	pthread_mutex_unlock(&m->lock);
	rt_gpu_pop(&scope);
	return st == BLK_SUCCESS ? rt_ok() : st;
}
