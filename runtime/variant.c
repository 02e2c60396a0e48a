/* variant.c: a kernel's variants, each compiled to tile IR (irgen, the
 * tile passes) for a set of const values, num_warps, num_stages and an
 * argument specialization; the one a launch asks for, found or made. */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>

/* ---- variants and launches --------------------------------------------------------
 *
 * The cached path of a launch (the same request and specialization as the
 * kernel's last launch, the grid clause given the same scalars as last
 * time, or an explicit grid) compiles nothing, allocates nothing for up to
 * 16 arguments, and compares no strings but the names of the launch's own
 * consts: argument checks, one uncontended lock, packing, cuLaunchKernel.
 * A request unlike the last searches the kernel's variants (string
 * compares of const names) but allocates only when the launch's consts
 * outgrow what the kernel remembered before. */

/* The const values of a launch: the launch's own, then the module's
 * defines, then (for names still missing) the kernel's autotune config
 * `cfg` (when it has configs); defaults in the source come last, in irgen. */
static int launch_consts(blk_kernel *k, const blk_launch_options *opt, int cfg, ConstBinding *out)
{
	int n = 0;
	for (int i = 0; opt && i < opt->n_consts; i++)
		out[n++] = (ConstBinding){opt->consts[i].name, opt->consts[i].is_float != 0, opt->consts[i].i,
		                          opt->consts[i].f, opt->consts[i].type};
	bool has = cfg >= 0 && cfg < k->autotune.n_configs;
	const ConstBinding *more[2] = {k->m->defines, has ? k->autotune.configs[cfg] : NULL};
	int counts[2] = {k->m->n_defines, has ? k->autotune.config_len[cfg] : 0};
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

/* The consts the kernel's @heuristics compute for this launch, appended to
 * consts[0..*n) (each one not bound there already, in order, from the scalar
 * arguments and the consts before it). */
static blk_status heuristics(blk_kernel *k, const blk_arg *args, int n_args, ConstBinding *consts, int *count)
{
	int n = *count;
	blk_status st = BLK_SUCCESS;
	const AutotuneSpec *at = &k->autotune;
	ConstBinding buf[16], *scalars = NULL;
	int n_scalars = 0;
	for (int h = 0; h < at->n_heur; h++) {
		bool bound = false;
		for (int j = 0; j < n && !bound; j++)
			bound = strcmp(consts[j].name, at->heur_name[h]) == 0;
		if (bound)
			continue;
		if (!args)
			return rt_fail(BLK_ERROR_INVALID_ARGUMENT,
			               "kernel '%s': @heuristics computes '%s' from the launch's arguments; give '%s' as a const "
			               "to compile without them", k->node->name, at->heur_name[h], at->heur_name[h]);
		if (!scalars) { /* the scalar arguments by name, as given */
			scalars = n_args <= 16 ? buf : malloc((size_t)n_args * sizeof *scalars);
			if (!scalars)
				return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
			n_scalars = rt_scalar_bindings(k, NULL, args, n_args, scalars);
		}
		Diag diag;
		diag_init(&diag);
		Arena scratch = {0};
		bool ok = irgen_heuristic(k->m->mod, k->node, at, h, &(IrgenOptions){.consts = consts, .n_consts = n,
		                                                                      .num_sms = rt_num_sms(k)},
		                          scalars, n_scalars, &consts[n], &diag, &scratch);
		if (!ok)
			st = rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_launch: %s", diag.out.data ? diag.out.data : "@heuristics");
		arena_free(&scratch);
		diag_free(&diag);
		if (!ok)
			break;
		n++;
	}
	if (scalars != buf)
		free(scalars);
	*count = n;
	return st;
}

/* Do a and b (of one name) bind the same number or type? */
static bool same_value(const ConstBinding *a, const ConstBinding *b)
{
	if (a->type || b->type)
		return a->type && b->type && strcmp(a->type, b->type) == 0;
	return a->is_float == b->is_float && (a->is_float ? a->f == b->f : a->i == b->i);
}

static bool same_consts(const Variant *v, const ConstBinding *c, int n)
{
	if (v->n_consts != n)
		return false;
	for (int i = 0; i < n; i++) {
		bool found = false;
		for (int j = 0; j < n && !found; j++)
			found = strcmp(v->consts[j].name, c[i].name) == 0 && same_value(&v->consts[j], &c[i]);
		if (!found)
			return false;
	}
	return true;
}

/* Integer arguments known to equal 1 (bit i: runtime argument i) become
 * the constant 1 in the IR, so that the passes fold them (x * stride is x). */
static bool constant_ones(IrFunc *f, uint64_t ones)
{
	for (int i = 0, j = 0; i < f->n_params; i++) {
		IrParam *p = &f->params[i];
		if (!p->value)
			continue;
		if (j < SPEC_ARGS && (ones >> j & 1) && !ir_param_is_one(f, p))
			return false;
		j++;
	}
	return true;
}
/* What the arguments promise (spec's low bits: 16-byte aligned pointers,
 * integers divisible by 16), as divisibility for the passes to use. */
static void promise_alignment(IrFunc *f, uint64_t spec)
{
	for (int i = 0, j = 0; i < f->n_params; i++)
		if (f->params[i].value) {
			if (j < SPEC_ARGS && (spec >> j & 1))
				f->params[i].divisibility = 16;
			j++;
		}
}


/* What the runtime knows after irgen (the driver's prepare): the
 * specialization, whether TMA can run here. */
typedef struct Prepare {
	blk_module *m;
	uint64_t spec;
	bool test_passes;
} Prepare;

static bool prepare(IrFunc *f, void *user, Diag *diag)
{
	(void)diag;
	const Prepare *p = user;
	if (SPEC_ONES(p->spec) && !constant_ones(f, SPEC_ONES(p->spec)))
		return false;
	/* TMA is planned when the target is known (jit.c), where the device can */
	if (!p->m->ctx || !p->m->ctx->tma_ok || (p->spec & SPEC_NO_TMA))
		f->tma = 0;
	if (p->test_passes) /* what the arguments promise, for the GPU passes a test names */
		promise_alignment(f, p->spec);
	return true;
}

/* The compiled variant for these consts, made on first use. Caller holds m->lock. */
static blk_status get_variant(blk_kernel *k, const ConstBinding *consts, int n, int num_warps, int num_stages,
                              uint64_t spec, Variant **out)
{
	blk_module *m = k->m;
	const int *defaults = m->ctx ? m->ctx->option_defaults : NULL;
	IrgenOptions io = {.consts = consts, .n_consts = n, .num_warps = num_warps, .num_stages = num_stages,
	                   .defaults = defaults};
	int warps = irgen_option_value(&io, OPTION_num_warps), stages = irgen_option_value(&io, OPTION_num_stages);
	for (int i = 0; i < k->n_variants; i++)
		if (k->variants[i]->spec == spec && same_consts(k->variants[i], consts, n) &&
		    k->variants[i]->f->num_warps == warps && k->variants[i]->f->num_stages == stages) {
			*out = k->variants[i];
			return BLK_SUCCESS;
		}
	if (k->n_variants == k->cap_variants) {
		int cap = k->cap_variants ? k->cap_variants * 2 : 4;
		Variant **v = arena_alloc(&m->arena, (size_t)cap * sizeof *v);
		if (!v)
			return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory compiling '%s'", k->node->name);
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
		if (consts[i].type)
			copy[i].type = arena_strndup(&m->arena, consts[i].type, strlen(consts[i].type));
	}
	Variant *v = arena_alloc(&m->arena, sizeof *v);
	io.consts = copy;
	/* BLK_PASSES replaces the tile passes (for tests of a pass on the
	 * interpreter: the examples' references hold whatever runs) */
	const char *passes = getenv("BLK_PASSES");
	Prepare p = {.m = m, .spec = spec, .test_passes = passes && *passes};
	PipelineRequest req = {.from = STAGE_IRGEN, .to = STAGE_TILE_PASSES, .mod = m->mod, .kernel = k->node,
	                       .irgen = &io, .arena = &m->arena, .prepare = prepare, .user = &p,
	                       .passes = p.test_passes ? passes : NULL,
	                       .arch = p.test_passes ? getenv("BLK_PASSES_TARGET") : NULL}; /* what those passes choose by */
	PipelineResult res;
	IrFunc *f = copy && v && blk_pipeline_run(&req, &res, &diag) ? res.f : NULL;
	blk_status status = BLK_SUCCESS;
	if (!f) {
		status = rt_fail(diag.errors ? BLK_ERROR_SOURCE : BLK_ERROR_OUT_OF_MEMORY, "%s",
		                 diag.out.data ? diag.out.data : "out of memory");
	} else {
		promise_alignment(f, spec); /* for the GPU back end to use (16-byte accesses) */
		*v = (Variant){.consts = copy, .n_consts = n, .spec = spec, .f = f, .ms_irgen = res.ms[STAGE_IRGEN],
		               .ms_passes = res.ms[STAGE_TILE_PASSES]};
		k->variants[k->n_variants++] = v;
	}
	m->set.diag = NULL;
	diag_free(&diag);
	*out = f ? v : NULL;
	return status;
}

blk_status rt_variant_without_tma(blk_kernel *k, const Variant *v, Variant **out)
{
	return get_variant(k, v->consts, v->n_consts, v->f->num_warps, v->f->num_stages, v->spec | SPEC_NO_TMA, out);
}

/* Does this launch ask what the kernel's last one asked? */
static bool same_request(const blk_kernel *k, const blk_launch_options *opt, uint64_t spec)
{
	int n = opt ? opt->n_consts : 0;
	if (!k->last.v || k->last.spec != spec || k->last.n_consts != n || k->last.num_warps != (opt ? opt->num_warps : 0) ||
	    k->last.num_stages != (opt ? opt->num_stages : 0))
		return false;
	for (int i = 0; i < n; i++) {
		const blk_const *a = &opt->consts[i], *b = &k->last.consts[i];
		if ((a->is_float != 0) != (b->is_float != 0) || (a->is_float ? a->f != b->f : a->i != b->i) ||
		    !a->name || strcmp(a->name, b->name) != 0 || !a->type != !b->type ||
		    (a->type && strcmp(a->type, b->type) != 0))
			return false;
	}
	return true;
}

static void remember_request(blk_kernel *k, const blk_launch_options *opt, uint64_t spec, Variant *v)
{
	int n = opt ? opt->n_consts : 0;
	size_t bytes = (size_t)n * sizeof(blk_const);
	for (int i = 0; i < n; i++)
		bytes += strlen(opt->consts[i].name) + 1 + (opt->consts[i].type ? strlen(opt->consts[i].type) + 1 : 0);
	k->last.v = NULL;
	if (bytes > k->last.cap || !k->last.consts) {
		free(k->last.consts);
		k->last.cap = bytes > 64 ? bytes : 64;
		if (!(k->last.consts = malloc(k->last.cap))) {
			k->last.cap = 0;
			return; /* no memory: the next launch searches */
		}
	}
	blk_const *c = k->last.consts;
	char *names = (char *)(c + n);
	for (int i = 0; i < n; i++) {
		c[i] = opt->consts[i];
		size_t len = strlen(opt->consts[i].name) + 1;
		memcpy(names, opt->consts[i].name, len);
		c[i].name = names;
		names += len;
		if (c[i].type) {
			len = strlen(opt->consts[i].type) + 1;
			memcpy(names, opt->consts[i].type, len);
			c[i].type = names;
			names += len;
		}
	}
	k->last.n_consts = n;
	k->last.num_warps = opt ? opt->num_warps : 0;
	k->last.num_stages = opt ? opt->num_stages : 0;
	k->last.spec = spec;
	k->last.v = v;
}

/* A copy of the launch's arguments, for a kernel with @heuristics (whose
 * consts they decide); false when there are none or no memory. */
static bool remember_args(blk_kernel *k, const blk_arg *args, int n_args)
{
	if (!args)
		return false;
	if (n_args > k->last.n_args_cap || !k->last.args) {
		blk_arg *a = realloc(k->last.args, (size_t)(n_args ? n_args : 1) * sizeof *a);
		if (!a)
			return false;
		k->last.args = a;
		k->last.n_args_cap = n_args ? n_args : 1;
	}
	memcpy(k->last.args, args, (size_t)n_args * sizeof *args);
	return true;
}

/* The variant of config `cfg` (of an @autotune kernel; any index for one
 * without) for this launch's options. Caller holds m->lock. */
blk_status rt_config_variant(blk_kernel *k, const blk_launch_options *opt, int cfg, uint64_t spec,
                             const blk_arg *args, int n_args, Variant **out)
{
	int cap = (opt ? opt->n_consts : 0) + k->m->n_defines +
	          (cfg >= 0 && cfg < k->autotune.n_configs ? k->autotune.config_len[cfg] : 0) + k->autotune.n_heur;
	ConstBinding buf[32];
	ConstBinding *consts = cap <= 32 ? buf : malloc((size_t)cap * sizeof *consts);
	if (!consts)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	int n = launch_consts(k, opt, cfg, consts);
	blk_status st = k->autotune.n_heur ? heuristics(k, args, n_args, consts, &n) : BLK_SUCCESS;
	if (st == BLK_SUCCESS)
		st = get_variant(k, consts, n, opt ? opt->num_warps : 0, opt ? opt->num_stages : 0, spec, out);
	if (consts != buf)
		free(consts);
	return st;
}

/* The variant this launch runs (for an @autotune kernel, tuning first when
 * needed). Caller holds m->lock. */
blk_status rt_find_variant(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                        uint64_t spec, FindMode mode, Variant **out)
{
	/* (with @heuristics the consts depend on the scalar arguments too) */
	if (same_request(k, opt, spec) && (!k->last.tuned || (args && rt_same_key(k, args))) &&
	    (!k->autotune.n_heur || (args && k->last.args && rt_same_scalars(k, k->last.args, args)))) {
		*out = k->last.v;
		return BLK_SUCCESS;
	}
	bool tuned = rt_needs_tuning(k, opt), known = true;
	int cfg = 0, n_key = k->autotune.n_key;
	int64_t kbuf[16];
	int64_t *key = n_key <= 16 ? kbuf : malloc((size_t)n_key * sizeof *key);
	if (!key)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_launch: out of memory");
	blk_status st = BLK_SUCCESS;
	if (tuned && !args) {
		known = false; /* compiling ahead without arguments: the first config */
	} else if (tuned) {
		rt_key_values(k, args, opt, key);
		st = rt_choose_config(k, args, n_args, opt, spec, key, mode, &cfg, &known);
	}
	if (st == BLK_SUCCESS)
		st = rt_config_variant(k, opt, cfg, spec, args, n_args, out);
	if (st == BLK_SUCCESS && known) {
		remember_request(k, opt, spec, *out);
		k->last.tuned = tuned;
		if (tuned)
			memcpy(k->last.key, key, (size_t)n_key * sizeof *key);
		if (k->autotune.n_heur && !remember_args(k, args, n_args))
			k->last.v = NULL; /* no memory: the next launch searches */
	}
	if (key != kbuf)
		free(key);
	return st;
}

/* Specialization, as Triton does it: which arguments are multiples of 16
 * (integers) or 16-byte aligned (pointers), bit i for argument i, and which
 * integers equal 1, bit SPEC_ARGS + i (a stride of 1 makes a block of
 * pointers contiguous); the first SPEC_ARGS arguments. Each pattern is a variant of its
 * own. GPU only: the interpreter gains nothing from it. */
uint64_t rt_arg_spec(const blk_kernel *k, const blk_arg *args)
{
	uint64_t spec = 0;
	for (int i = 0, a = 0; i < k->n_params && a < SPEC_ARGS; i++) {
		if (k->params[i].is_const)
			continue;
		const blk_arg *arg = &args[a];
		bool is_int = arg->kind == BLK_ARG_INT && k->params[i].kind == BLK_PARAM_INT;
		if ((arg->kind == BLK_ARG_PTR && k->params[i].kind == BLK_PARAM_POINTER && (arg->v.ptr & 15) == 0) ||
		    (is_int && (arg->v.i & 15) == 0))
			spec |= (uint64_t)1 << a;
		if (is_int && arg->v.i == 1)
			spec |= (uint64_t)1 << (SPEC_ARGS + a);
		a++;
	}
	return spec;
}
