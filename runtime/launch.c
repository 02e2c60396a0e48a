/* launch.c: launches: the arguments checked against the kernel, the grid,
 * the arguments packed for cuLaunchKernel (failed asserts read back) or
 * given to the interpreter; blk_launch. */
#include "runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the arguments and the grid ---- */

blk_status rt_check_args(blk_kernel *k, const blk_arg *args, int n_args)
{
	const char *kn = k->node->name;
	int want = k->n_args;
	if (n_args != want || (!args && n_args))
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: kernel '%s' takes %d argument%s (its parameters that "
		                                           "are not const), given %d", kn, want, want == 1 ? "" : "s", n_args);
	for (int i = 0, a = 0; i < k->n_params; i++) {
		const blk_param_info *p = &k->params[i];
		if (p->is_const)
			continue;
		const blk_arg *arg = &args[a++];
		static const char *const kinds[] = {"a pointer", "an integer", "a float"};
		if (arg->kind > BLK_ARG_FLOAT)
			return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s') of '%s' has an unknown kind %d",
			               a, p->name, kn, (int)arg->kind);
		bool fits = (p->kind == BLK_PARAM_POINTER && arg->kind == BLK_ARG_PTR) ||
		            (p->kind == BLK_PARAM_INT && arg->kind == BLK_ARG_INT) ||
		            (p->kind == BLK_PARAM_FLOAT && (arg->kind == BLK_ARG_FLOAT || arg->kind == BLK_ARG_INT));
		if (!fits)
			return rt_fail(BLK_ERROR_INVALID_ARGUMENT,
			               "blk_launch: argument %d ('%s: %s') of '%s' must be %s, given %s", a, p->name, p->type, kn,
			               kinds[p->kind], kinds[arg->kind]);
		if (p->kind == BLK_PARAM_POINTER && arg->v.ptr == 0)
			return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s: %s') of '%s' is a null pointer",
			               a, p->name, p->type, kn);
		if (p->kind == BLK_PARAM_INT) {
			ScalarKind sk = (ScalarKind)k->param_sk[i];
			int bits = scalar_bits(sk);
			if (bits < 64) {
				bool ok_range = scalar_is_unsigned(sk) || sk == SK_I1
				                    ? arg->v.i >= 0 && arg->v.i < ((int64_t)1 << bits)
				                    : arg->v.i >= -((int64_t)1 << (bits - 1)) && arg->v.i < ((int64_t)1 << (bits - 1));
				if (!ok_range)
					return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: argument %d ('%s: %s') of '%s' is %lld, "
					                                           "out of range for %s", a, p->name, p->type, kn,
					               (long long)arg->v.i, p->type);
			}
		}
	}
	return BLK_SUCCESS;
}

blk_status rt_check_options(const blk_kernel *k, const blk_launch_options *opt, const char *fn)
{
	if (!opt)
		return BLK_SUCCESS;
	if (opt->threads < 0)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT,
		               "%s: opt->threads is %d; it takes 0 (BLK_INTERP_THREADS, else 1) or a count of threads", fn,
		               opt->threads);
	if (opt->n_consts < 0 || (opt->n_consts > 0 && !opt->consts))
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: opt->n_consts is %d and opt->consts is %s", fn, opt->n_consts,
		               opt->consts ? "not NULL" : "NULL");
	for (int i = 0; i < opt->n_consts; i++) {
		const char *name = opt->consts[i].name;
		if (!name)
			return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: opt->consts[%d].name is NULL", fn, i);
		if (irgen_is_option(name))
			continue;
		bool found = false;
		for (int p = 0; p < k->n_params && !found; p++)
			found = k->params[p].is_const && strcmp(k->params[p].name, name) == 0;
		if (!found)
			return rt_fail(BLK_ERROR_SOURCE, "%s: kernel '%s' has no const parameter '%s'", fn, k->node->name, name);
	}
	return BLK_SUCCESS;
}

bool rt_same_scalars(const blk_kernel *k, const blk_arg *a, const blk_arg *b)
{
	for (int i = 0, j = 0; i < k->n_params; i++) {
		if (k->params[i].is_const)
			continue;
		if (k->params[i].kind != BLK_PARAM_POINTER &&
		    (a[j].kind != b[j].kind || memcmp(&a[j].v, &b[j].v, sizeof a[j].v) != 0))
			return false;
		j++;
	}
	return true;
}

int rt_scalar_bindings(const blk_kernel *k, const IrFunc *f, const blk_arg *args, int n_args, ConstBinding *out)
{
	int n = 0;
	for (int i = 0, a = 0; i < k->n_params && a < n_args; i++) {
		if (k->params[i].is_const)
			continue;
		const blk_arg *arg = &args[a++];
		if (k->params[i].kind == BLK_PARAM_POINTER)
			continue;
		/* the variant's type decides (a parameter of a generic type T is either) */
		Type t = f ? f->params[i].type : (Type){0};
		bool is_float = f ? !t.ptr && scalar_is_float((ScalarKind)t.scalar) : arg->kind == BLK_ARG_FLOAT;
		double fv = arg->kind == BLK_ARG_FLOAT ? arg->v.f : (double)arg->v.i;
		int64_t iv = arg->kind == BLK_ARG_FLOAT ? (int64_t)arg->v.f : arg->v.i;
		out[n++] = (ConstBinding){k->params[i].name, is_float, iv, fv, NULL};
	}
	return n;
}

int rt_num_sms(const blk_kernel *k)
{
	const blk_module *m = k->m;
	return m->ctx && m->ctx->backend == BLK_BACKEND_GPU ? m->ctx->sm_count : RT_INTERP_NUM_SMS;
}

/* The launch's grid: given, or from the kernel's grid clause (evaluated
 * again only when its scalar arguments changed). Caller holds m->lock. */
blk_status rt_launch_grid(blk_kernel *k, Variant *v, const blk_arg *args, int n_args,
                       const blk_launch_options *opt, unsigned grid[3])
{
	if (opt && (opt->grid[0] || opt->grid[1] || opt->grid[2])) {
		for (int i = 0; i < 3; i++)
			grid[i] = opt->grid[i] ? opt->grid[i] : 1;
		return BLK_SUCCESS;
	}
	if (v->grid_args && rt_same_scalars(k, v->grid_args, args)) {
		memcpy(grid, v->grid, sizeof v->grid);
		return BLK_SUCCESS;
	}
	blk_module *m = k->m;
	ConstBinding buf[16];
	ConstBinding *scalars = n_args <= 16 ? buf : malloc((size_t)n_args * sizeof *scalars);
	if (!scalars)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	int n_scalars = rt_scalar_bindings(k, v->f, args, n_args, scalars);
	Diag diag;
	diag_init(&diag);
	int64_t g[3];
	Arena scratch = {0};
	blk_status st = BLK_SUCCESS;
	if (irgen_grid(m->mod, k->node,
	               &(IrgenOptions){.consts = v->consts, .n_consts = v->n_consts, .num_sms = rt_num_sms(k)}, scalars,
	               n_scalars, g, &diag, &scratch)) {
		if (g[0] < 0 || g[1] < 0 || g[2] < 0 || g[0] > UINT32_MAX || g[1] > UINT32_MAX || g[2] > UINT32_MAX) {
			st = rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: the grid clause of '%s' gives (%lld, %lld, %lld)",
			             k->node->name, (long long)g[0], (long long)g[1], (long long)g[2]);
		} else {
			for (int i = 0; i < 3; i++)
				grid[i] = (unsigned)g[i];
			if (!v->grid_args)
				v->grid_args = arena_alloc(&m->arena, (size_t)(n_args ? n_args : 1) * sizeof *args);
			if (v->grid_args) {
				memcpy(v->grid_args, args, (size_t)n_args * sizeof *args);
				memcpy(v->grid, grid, sizeof v->grid);
			}
		}
	} else {
		st = rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: %s", diag.out.data ? diag.out.data : "no grid");
	}
	arena_free(&scratch);
	diag_free(&diag);
	if (scalars != buf)
		free(scalars);
	return st;
}

/* ---- the GPU backend ---- */

/* A kernel with asserts records its first failure in blk_assert_state:
 * {assert number, program x, y, z, element}. Read after the launch (the
 * stream was synchronized), reported with the assert's place, then cleared. */
static blk_status check_asserts(blk_context *ctx, Variant *v)
{
	uint32_t st[8];
	char msg[512];
	CUresult r = ctx->cu->cuMemcpyDtoH(st, v->assert_state, sizeof st);
	if (r != CUDA_SUCCESS)
		return rt_fail(cuda_blk_status(r), "blk_launch: reading the asserts of '%s': %s", v->f->name,
		               cuda_describe(ctx->cu, r, "cuMemcpyDtoH_v2", msg, sizeof msg));
	if (!st[0])
		return rt_ok();
	const Op *asserts[256];
	int n = ir_assert_ops(v->f, asserts, 256);
	const Op *a = st[0] <= (uint32_t)n && st[0] <= 256 ? asserts[st[0] - 1] : NULL;
	uint32_t zero[8] = {0};
	ctx->cu->cuMemcpyHtoD(v->assert_state, zero, sizeof zero);
	if (!a)
		return rt_fail(BLK_ERROR_LAUNCH, "blk_launch: kernel '%s': assert %u failed in program (%u, %u, %u)",
		               v->f->name, st[0], st[1], st[2], st[3]);
	return rt_fail(BLK_ERROR_LAUNCH,
	               "%s:%u:%u: error: assertion failed: %s (kernel '%s', program (%u, %u, %u), element %u)",
	               a->loc.src ? a->loc.src->name : "?", a->loc.line, a->loc.col, a->str ? a->str : "", v->f->name,
	               st[1], st[2], st[3], st[4]);
}

blk_status rt_gpu_launch(blk_context *ctx, Variant *v, const blk_arg *args, int n_args, const unsigned grid[3],
                      const blk_launch_options *opt)
{
	blk_status st = rt_gpu_enter(ctx, "blk_launch");
	if (st != BLK_SUCCESS)
		return st;
	if (!grid[0] || !grid[1] || !grid[2])
		return rt_ok(); /* no programs */
	if (grid[0] > ctx->max_grid[0] || grid[1] > ctx->max_grid[1] || grid[2] > ctx->max_grid[2])
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT,
		               "blk_launch: the grid (%u, %u, %u) of '%s' is larger than the device "
		               "allows (%u, %u, %u)", grid[0], grid[1], grid[2], v->f->name, ctx->max_grid[0], ctx->max_grid[1],
		               ctx->max_grid[2]);
	/* Each argument in an 8-byte slot, its value in the low bytes (the
	 * driver reads as many as the parameter's size). */
	uint64_t slot_buf[64]; /* no allocation on the launch path up to 64 arguments */
	void *ptr_buf[64 + TMA_MAX_MAPS];
	uint64_t *slots = slot_buf;
	void **ptrs = ptr_buf;
	CUtensorMap maps[TMA_MAX_MAPS]; /* after the kernel's own parameters */
	int n_maps = v->f->n_tmaps;
	if (n_maps && (st = rt_tma_encode(ctx, v, args, maps)) != BLK_SUCCESS)
		return st;
	if (n_args > 64) {
		slots = malloc((size_t)n_args * sizeof *slots);
		ptrs = malloc((size_t)(n_args + n_maps) * sizeof *ptrs);
		if (!slots || !ptrs) {
			free(slots);
			free(ptrs);
			return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
		}
	}
	for (int i = 0; i < n_args; i++) {
		const blk_arg *a = &args[i];
		uint64_t bits;
		if (v->pkind[i] == PK_FLOAT) {
			double d = a->kind == BLK_ARG_FLOAT ? a->v.f : (double)a->v.i;
			ScalarKind sk = (ScalarKind)v->pscalar[i];
			if (sk == SK_F32) {
				float x = (float)d;
				uint32_t u;
				memcpy(&u, &x, sizeof u);
				bits = u;
			} else if (sk == SK_F64) {
				memcpy(&bits, &d, sizeof bits);
			} else {
				bits = fp_encode(sk, d);
			}
		} else {
			bits = a->kind == BLK_ARG_PTR     ? (uint64_t)a->v.ptr
			       : a->kind == BLK_ARG_FLOAT ? (uint64_t)(int64_t)a->v.f /* a generic T bound to an integer */
			                                  : (uint64_t)a->v.i;
		}
		slots[i] = bits;
		ptrs[i] = &slots[i];
	}
	for (int i = 0; i < n_maps; i++)
		ptrs[n_args + i] = &maps[i];
	CUstream stream = opt ? (CUstream)opt->stream : NULL;
	CUresult r = ctx->cu->cuLaunchKernel(v->fn, grid[0], grid[1], grid[2], v->block, 1, 1, (unsigned)v->shared_bytes,
	                                     stream, ptrs, NULL);
	if (slots != slot_buf) {
		free(slots);
		free(ptrs);
	}
	char msg[512];
	if (r != CUDA_SUCCESS)
		return rt_fail(cuda_blk_status(r), "blk_launch: kernel '%s': %s", v->f->name,
		               cuda_describe(ctx->cu, r, "cuLaunchKernel", msg, sizeof msg));
	if ((ctx->debug || v->assert_state) && (r = ctx->cu->cuStreamSynchronize(stream)) != CUDA_SUCCESS)
		return rt_fail(cuda_blk_status(r), "blk_launch: kernel '%s' failed (grid %u, %u, %u): %s", v->f->name, grid[0],
		               grid[1], grid[2], cuda_describe(ctx->cu, r, "cuStreamSynchronize", msg, sizeof msg));
	if (v->assert_state)
		return check_asserts(ctx, v);
	return rt_ok();
}

/* ---- the interpreter backend ---- */

blk_status rt_interp_launch(blk_context *ctx, blk_kernel *k, Variant *v, const blk_arg *args, int n_args,
                         const unsigned grid[3], const blk_launch_options *opt)
{
	if (grid[0] > INT32_MAX || grid[1] > INT32_MAX || grid[2] > INT32_MAX)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: the grid (%u, %u, %u) of '%s' is too large", grid[0],
		               grid[1], grid[2], k->node->name);
	InterpArg *iargs = malloc((size_t)(n_args ? n_args : 1) * sizeof *iargs);
	if (!iargs)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	for (int i = 0, a = 0; i < k->n_params; i++) {
		if (k->params[i].is_const)
			continue;
		const blk_arg *arg = &args[a];
		double fv = arg->kind == BLK_ARG_FLOAT ? arg->v.f : (double)arg->v.i;
		/* the variant's type decides (a parameter of a generic type T is either) */
		Type t = v->f->params[i].type;
		bool is_float = !t.ptr && scalar_is_float((ScalarKind)t.scalar);
		int64_t iv = arg->kind == BLK_ARG_PTR ? (int64_t)arg->v.ptr : arg->kind == BLK_ARG_FLOAT ? (int64_t)arg->v.f : arg->v.i;
		iargs[a++] = is_float ? interp_float(fv) : (InterpArg){.i = iv};
	}
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
			int b = arg->kind == BLK_ARG_PTR ? rt_find_buffer(ctx, arg->v.ptr, 0) : -1;
			if (b >= 0 && !bufs[b].name)
				bufs[b].name = k->params[i].name;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	const char *env = getenv("BLK_INTERP_THREADS");
	int threads = opt && opt->threads ? opt->threads : env ? atoi(env) : 1;
	StrBuf printed = {0};
	InterpOptions io = {.grid = {(int)grid[0], (int)grid[1], (int)grid[2]}, .threads = threads, .print_out = &printed};
	Diag diag;
	diag_init(&diag);
	blk_status st = BLK_SUCCESS;
	if (!bufs)
		st = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	else if (!interp_run(v->f, iargs, n_args, bufs, nb, &io, &diag))
		st = rt_fail(BLK_ERROR_LAUNCH, "%s", diag.out.data ? diag.out.data : "the kernel failed");
	diag_free(&diag);
	free(bufs);
	free(iargs);
	if (printed.len) {
		pthread_mutex_lock(&ctx->lock);
		sb_putn(&ctx->printed, printed.data, printed.len);
		pthread_mutex_unlock(&ctx->lock);
	}
	sb_free(&printed);
	return st == BLK_SUCCESS ? rt_ok() : st;
}

/* The interpreter's grid limits: CUDA's along each axis, and a total that
 * a CPU runs in reasonable time (docs/runtime.md). */
static blk_status interp_grid_limits(const blk_kernel *k, const unsigned grid[3])
{
	static const unsigned axis_max[3] = {2147483647u, 65535u, 65535u};
	for (int i = 0; i < 3; i++)
		if (grid[i] > axis_max[i])
			return rt_fail(BLK_ERROR_INVALID_ARGUMENT,
			               "blk_launch: the grid (%u, %u, %u) of '%s' is larger than the interpreter allows along "
			               "axis %d (%u)", grid[0], grid[1], grid[2], k->node->name, i, axis_max[i]);
	uint64_t total = (uint64_t)grid[0] * grid[1] * grid[2];
	if (total > RT_INTERP_MAX_PROGRAMS)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT,
		               "blk_launch: the grid (%u, %u, %u) of '%s' has %llu programs, more than the interpreter "
		               "runs (%u)", grid[0], grid[1], grid[2], k->node->name, (unsigned long long)total,
		               (unsigned)RT_INTERP_MAX_PROGRAMS);
	return BLK_SUCCESS;
}

/* Starts a launch for `fn` (blk_launch, blk_time_launch): the options and
 * arguments checked, the variant (compiled and loaded) and the grid. */
blk_status rt_prepare_launch(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                             const char *fn, blk_context **ctx_out, Variant **v_out, unsigned grid[3])
{
	*ctx_out = NULL;
	*v_out = NULL;
	grid[0] = grid[1] = grid[2] = 1;
	blk_status st = rt_check_options(k, opt, fn);
	if (st == BLK_SUCCESS)
		st = rt_check_args(k, args, n_args);
	if (st != BLK_SUCCESS)
		return st;
	blk_module *m = k->m;
	Variant *v = NULL;
	pthread_mutex_lock(&m->lock);
	blk_context *ctx = m->ctx;
	if (!ctx)
		st = rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: the context of kernel '%s' was destroyed", k->node->name);
	/* the interpreter specializes only to test the GPU passes (BLK_PASSES_TARGET) */
	bool spec = ctx && (ctx->backend == BLK_BACKEND_GPU || getenv("BLK_PASSES_TARGET"));
	if (st == BLK_SUCCESS)
		st = rt_find_variant(k, args, n_args, opt, spec ? rt_arg_spec(k, args) : 0, FIND_LAUNCH, &v);
	if (st == BLK_SUCCESS)
		st = rt_launch_grid(k, v, args, n_args, opt, grid);
	if (st == BLK_SUCCESS && ctx->backend == BLK_BACKEND_INTERPRETER)
		st = interp_grid_limits(k, grid);
	if (st == BLK_SUCCESS && ctx->backend == BLK_BACKEND_GPU)
		st = rt_gpu_ready(k, &v, args);
	pthread_mutex_unlock(&m->lock);
	*ctx_out = ctx;
	*v_out = v;
	return st;
}

blk_status blk_launch(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt)
{
	if (!k)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: kernel is NULL");
	blk_status hs = rt_handle_check(k, H_KERNEL, "blk_launch");
	if (hs != BLK_SUCCESS)
		return hs;
	unsigned grid[3];
	Variant *v;
	blk_context *ctx;
	GpuScope scope;
	blk_status st = rt_gpu_push(rt_kernel_context(k), "blk_launch", &scope);
	if (st == BLK_SUCCESS)
		st = rt_prepare_launch(k, args, n_args, opt, "blk_launch", &ctx, &v, grid);
	if (st == BLK_SUCCESS)
		st = ctx->backend == BLK_BACKEND_GPU ? rt_gpu_launch(ctx, v, args, n_args, grid, opt)
		                                     : rt_interp_launch(ctx, k, v, args, n_args, grid, opt);
	rt_gpu_pop(&scope);
	return st;
}
