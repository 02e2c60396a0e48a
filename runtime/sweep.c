/* sweep.c: a sweep's configs split across GPUs of one model
 * (blk_time_configs, blk_autotune_devices).
 *
 * Each device listed gets a context of its own (its primary context), the
 * kernel's module loaded again on it, and its own copy of every allocation
 * a pointer argument points into (pointers are per device: each copy is
 * read from the kernel's context once, written to each device, and the
 * pointers moved by the same offset). A thread per device times the
 * configs c with c % n_devices == its place in the list, putting its
 * copies back after each config; the times land in one array. The
 * arguments themselves are never written. Devices must be of the model of
 * the kernel's own device (name and compute capability): the times are
 * compared, and the choice is remembered for that model. */
#include "runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SWEEP_DEVICES = 64 };

/* An allocation a pointer argument points into, read to the host. */
typedef struct HostCopy {
	CUdeviceptr base;
	size_t bytes;
	void *host;
} HostCopy;

typedef struct Sweep {
	const char *fn;
	blk_kernel *k;
	const blk_arg *args;
	int n_args;
	const blk_launch_options *configs;
	int n_configs, reps;
	HostCopy *copies;
	int n_copies;
	double *ms;         /* per config; negative: it did not run */
	char *notes;        /* per config, note_size bytes each, or NULL */
	size_t note_size;
} Sweep;

typedef struct Part {
	const Sweep *sw;
	int place, stride;  /* configs place, place + stride, ... */
	int device;
	blk_context *ctx;
	blk_module *m;
	blk_kernel *k;      /* the kernel in m */
	blk_devptr *bases;  /* the copy of each HostCopy on this device */
	blk_arg *args;
	blk_status st;      /* a failure before any config ran */
	char msg[512];
} Part;

static void note(const Sweep *sw, int c, const char *text)
{
	if (!sw->notes || !sw->note_size)
		return;
	char *n = sw->notes + (size_t)c * sw->note_size;
	size_t i = 0;
	for (; text[i] && i + 1 < sw->note_size; i++)
		n[i] = text[i] == '\n' ? ' ' : text[i];
	n[i] = '\0';
}

/* Reads each allocation the pointer arguments point into, once, from the
 * kernel's context. */
static blk_status read_arguments(Sweep *sw, blk_context *ctx)
{
	const CudaDriver *cu = ctx->cu;
	GpuScope scope;
	blk_status st = rt_gpu_push(ctx, sw->fn, &scope);
	if (st != BLK_SUCCESS)
		return st;
	sw->copies = calloc((size_t)(sw->n_args ? sw->n_args : 1), sizeof *sw->copies);
	CUresult r = cu->cuCtxSynchronize(); /* what the arguments hold is final */
	if (!sw->copies)
		st = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", sw->fn);
	else if (r != CUDA_SUCCESS)
		st = cuda_fail(ctx, r, sw->fn, "cuCtxSynchronize");
	for (int a = 0; st == BLK_SUCCESS && a < sw->n_args; a++) {
		if (sw->args[a].kind != BLK_ARG_PTR)
			continue;
		CUdeviceptr base = 0;
		size_t bytes = 0;
		char msg[512];
		if ((r = cu->cuMemGetAddressRange(&base, &bytes, (CUdeviceptr)sw->args[a].v.ptr)) != CUDA_SUCCESS) {
			st = rt_fail(cuda_blk_status(r), "%s: argument %d of '%s' (0x%llx) is not memory of device %d: %s",
			             sw->fn, a + 1, sw->k->node->name, (unsigned long long)sw->args[a].v.ptr, ctx->device,
			             cuda_describe(cu, r, "cuMemGetAddressRange_v2", msg, sizeof msg));
			break;
		}
		bool seen = false;
		for (int j = 0; j < sw->n_copies && !seen; j++)
			seen = sw->copies[j].base == base;
		if (seen)
			continue;
		HostCopy *h = &sw->copies[sw->n_copies];
		if (!(h->host = malloc(bytes))) {
			st = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes of argument %d)", sw->fn, bytes, a + 1);
			break;
		}
		h->base = base;
		h->bytes = bytes;
		sw->n_copies++;
		if ((r = cu->cuMemcpyDtoH(h->host, base, bytes)) != CUDA_SUCCESS)
			st = cuda_fail(ctx, r, sw->fn, "cuMemcpyDtoH_v2");
	}
	rt_gpu_pop(&scope);
	return st;
}

/* The part's module and its copies of the arguments. */
static blk_status part_setup(Part *p)
{
	const Sweep *sw = p->sw;
	blk_status st = rt_module_clone(sw->k->m, p->ctx, &p->m);
	if (st == BLK_SUCCESS)
		st = blk_kernel_get(p->m, sw->k->node->name, &p->k);
	p->bases = calloc((size_t)(sw->n_copies ? sw->n_copies : 1), sizeof *p->bases);
	p->args = malloc((size_t)(sw->n_args ? sw->n_args : 1) * sizeof *p->args);
	if (st == BLK_SUCCESS && (!p->bases || !p->args))
		st = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", sw->fn);
	for (int i = 0; st == BLK_SUCCESS && i < sw->n_copies; i++) {
		st = blk_malloc(p->ctx, sw->copies[i].bytes, &p->bases[i]);
		if (st == BLK_SUCCESS)
			st = blk_copy_to_device(p->ctx, p->bases[i], sw->copies[i].host, sw->copies[i].bytes);
	}
	for (int a = 0; st == BLK_SUCCESS && a < sw->n_args; a++) {
		p->args[a] = sw->args[a];
		if (sw->args[a].kind != BLK_ARG_PTR)
			continue;
		for (int i = 0; i < sw->n_copies; i++) {
			const HostCopy *h = &sw->copies[i];
			if (sw->args[a].v.ptr >= h->base && sw->args[a].v.ptr - h->base < h->bytes) {
				p->args[a].v.ptr = p->bases[i] + (sw->args[a].v.ptr - h->base);
				break;
			}
		}
	}
	return st;
}

/* A device's share of the sweep, on its own thread. */
static void *part_main(void *arg)
{
	Part *p = arg;
	const Sweep *sw = p->sw;
	p->st = part_setup(p);
	if (p->st != BLK_SUCCESS) {
		snprintf(p->msg, sizeof p->msg, "device %d: %s", p->device, blk_last_error());
		for (int c = p->place; c < sw->n_configs; c += p->stride)
			note(sw, c, p->msg);
		return NULL;
	}
	for (int c = p->place; c < sw->n_configs; c += p->stride) {
		blk_launch_options o = sw->configs[c];
		o.stream = NULL; /* a stream belongs to the kernel's context */
		double ms = -1;
		blk_status st = blk_time_launch(p->k, p->args, sw->n_args, &o, sw->reps, &ms);
		(void)blk_context_printed(p->ctx);
		if (st == BLK_SUCCESS) {
			sw->ms[c] = ms >= 0 ? ms : 0;
			note(sw, c, "");
		} else {
			const char *e = blk_last_error();
			char text[600];
			snprintf(text, sizeof text, "device %d: %s", p->device,
			         strncmp(e, "blk_time_launch: ", 17) == 0 ? e + 17 : e);
			note(sw, c, text);
		}
		/* each config starts from the arguments as given */
		for (int i = 0; i < sw->n_copies; i++)
			blk_copy_to_device(p->ctx, p->bases[i], sw->copies[i].host, sw->copies[i].bytes);
	}
	return NULL;
}

/* Checks the device list and opens a context on each (the kernel's model). */
static blk_status open_parts(const Sweep *sw, blk_context *kctx, const int *devices, int n, Part *parts)
{
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < i; j++)
			if (devices[j] == devices[i])
				return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: device %d is listed twice", sw->fn, devices[i]);
		parts[i] = (Part){.sw = sw, .place = i, .stride = n, .device = devices[i]};
		if (blk_context_create(BLK_BACKEND_GPU, devices[i], &parts[i].ctx) != BLK_SUCCESS) {
			char why[512];
			snprintf(why, sizeof why, "%s", blk_last_error());
			return rt_fail(BLK_ERROR_NO_DEVICE, "%s: devices[%d]: %s", sw->fn, i, why);
		}
		blk_context *c = parts[i].ctx;
		if (strcmp(c->device_name, kctx->device_name) != 0 || c->cc_major != kctx->cc_major ||
		    c->cc_minor != kctx->cc_minor)
			return rt_fail(BLK_ERROR_INVALID_ARGUMENT,
			               "%s: device %d is a %s (compute capability %d.%d) and device %d, the kernel's, a %s "
			               "(%d.%d): a sweep is split across GPUs of one model only", sw->fn, devices[i],
			               c->device_name, c->cc_major, c->cc_minor, kctx->device, kctx->device_name,
			               kctx->cc_major, kctx->cc_minor);
	}
	return BLK_SUCCESS;
}

static void close_parts(Part *parts, int n)
{
	for (int i = 0; i < n; i++) {
		blk_module_destroy(parts[i].m);
		blk_context_destroy(parts[i].ctx); /* frees the copies */
		free(parts[i].bases);
		free(parts[i].args);
	}
}

/* Times sw's configs across the devices (n >= 1). */
static blk_status sweep_devices(Sweep *sw, const int *devices, int n)
{
	blk_context *kctx = rt_kernel_context(sw->k);
	if (!kctx)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: the context of kernel '%s' was destroyed", sw->fn,
		               sw->k->node->name);
	if (kctx->backend != BLK_BACKEND_GPU)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: devices name GPUs; kernel '%s' is on the interpreter", sw->fn,
		               sw->k->node->name);
	if (!devices || n > MAX_SWEEP_DEVICES)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: %d devices (%s)", sw->fn, n,
		               devices ? "at most 64" : "devices is NULL");
	Part *parts = calloc((size_t)n, sizeof *parts);
	pthread_t *threads = calloc((size_t)n, sizeof *threads);
	bool *started = calloc((size_t)n, sizeof *started);
	blk_status st = parts && threads && started ? BLK_SUCCESS : rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", sw->fn);
	if (st == BLK_SUCCESS)
		st = open_parts(sw, kctx, devices, n, parts);
	if (st == BLK_SUCCESS)
		st = read_arguments(sw, kctx);
	for (int i = 0; st == BLK_SUCCESS && i < n; i++) {
		started[i] = pthread_create(&threads[i], NULL, part_main, &parts[i]) == 0;
		if (!started[i])
			part_main(&parts[i]); /* no thread: on this one */
	}
	for (int i = 0; parts && threads && started && i < n; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
	if (parts)
		close_parts(parts, n);
	for (int i = 0; i < sw->n_copies; i++)
		free(sw->copies[i].host);
	free(sw->copies);
	free(parts);
	free(threads);
	free(started);
	return st;
}

/* Checks the arguments shared by both entries. */
static blk_status check_sweep(const Sweep *sw, const int *devices, int n_devices)
{
	if (!sw->k)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: kernel is NULL", sw->fn);
	blk_status hs = rt_handle_check(sw->k, H_KERNEL, sw->fn);
	if (hs != BLK_SUCCESS)
		return hs;
	if (n_devices < 0 || (n_devices > 0 && !devices))
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: n_devices is %d and devices is %s", sw->fn, n_devices,
		               devices ? "not NULL" : "NULL");
	return rt_check_args(sw->k, sw->args, sw->n_args);
}

blk_status blk_time_configs(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *configs,
                            int n_configs, int reps, const int *devices, int n_devices, double *ms, char *notes,
                            size_t note_size)
{
	Sweep sw = {"blk_time_configs", k, args, n_args, configs, n_configs, reps, NULL, 0, ms, notes, note_size};
	blk_status st = check_sweep(&sw, devices, n_devices);
	if (st != BLK_SUCCESS)
		return st;
	if (n_configs < 0 || (n_configs && (!configs || !ms)))
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_time_configs: %d configs, configs %s, ms %s", n_configs,
		               configs ? "given" : "NULL", ms ? "given" : "NULL");
	if (reps < 1 || reps > 100000)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_time_configs: reps is %d (1 to 100000)", reps);
	for (int c = 0; c < n_configs; c++) {
		if ((st = rt_check_options(k, &configs[c], "blk_time_configs")) != BLK_SUCCESS)
			return st;
		ms[c] = -1;
		note(&sw, c, "");
	}
	if (n_devices > 0) {
		st = sweep_devices(&sw, devices, n_devices);
		return st == BLK_SUCCESS ? rt_ok() : st;
	}
	/* no devices: the kernel's own context, one config after another */
	for (int c = 0; c < n_configs; c++) {
		double t = -1;
		if (blk_time_launch(k, args, n_args, &configs[c], reps, &t) == BLK_SUCCESS)
			ms[c] = t >= 0 ? t : 0;
		else
			note(&sw, c, blk_last_error());
	}
	return rt_ok();
}

/* Checks the kernel's configs (configs[c]: the launch's options with
 * config c) on its own context and prunes as blk_autotune does: pruned[c]
 * and notes[c] for each. */
static blk_status prune_own(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                            const blk_launch_options *configs, int nc, int *pruned, char (*notes)[96])
{
	ConfigCheck *checks = calloc((size_t)nc, sizeof *checks);
	if (!checks)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_autotune_devices: out of memory");
	GpuScope scope;
	blk_status st = rt_gpu_push(rt_kernel_context(k), "blk_autotune_devices", &scope);
	if (st == BLK_SUCCESS) {
		pthread_mutex_lock(&k->m->lock);
		if (k->m->ctx && k->m->ctx->backend == BLK_BACKEND_GPU) /* else sweep_devices refuses it */
			rt_check_configs(k, args, n_args, opt, configs, nc, true, rt_arg_spec(k, args),
			                 BLK_PRUNE_FIT | BLK_PRUNE_IDLE, checks);
		else if (!k->m->ctx)
			st = rt_fail(BLK_ERROR_INVALID_ARGUMENT, "blk_autotune_devices: the context of kernel '%s' was destroyed",
			             k->node->name);
		pthread_mutex_unlock(&k->m->lock);
		rt_gpu_pop(&scope);
	}
	for (int c = 0; st == BLK_SUCCESS && c < nc; c++) {
		pruned[c] = checks[c].pruned;
		if (pruned[c])
			note(&(Sweep){.notes = notes[0], .note_size = sizeof notes[0]}, c, checks[c].note);
	}
	free(checks);
	return st;
}

blk_status blk_autotune_devices(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                                const int *devices, int n_devices, blk_tune_result *result)
{
	const char *fn = "blk_autotune_devices";
	Sweep sw = {.fn = fn, .k = k, .args = args, .n_args = n_args, .reps = 10};
	blk_status st = check_sweep(&sw, devices, n_devices);
	if (st != BLK_SUCCESS)
		return st;
	if (n_devices == 0)
		return blk_autotune(k, args, n_args, opt, result);
	if ((st = rt_check_options(k, opt, fn)) != BLK_SUCCESS || (st = rt_check_tune_result(k, result, fn)) != BLK_SUCCESS)
		return st;
	/* each config as a launch's options (a kernel without configs: the one launch) */
	int nc = k->autotune.n_configs > 1 ? k->autotune.n_configs : 1;
	int given = opt ? opt->n_consts : 0, per = given + 1; /* consts a config's launch can have */
	for (int c = 0; c < k->autotune.n_configs; c++)
		if (given + k->autotune.config_len[c] > per)
			per = given + k->autotune.config_len[c];
	blk_launch_options *configs = calloc((size_t)nc, sizeof *configs);
	blk_const *consts = calloc((size_t)nc * (size_t)per, sizeof *consts);
	double *ms = calloc((size_t)nc, sizeof *ms);
	char(*notes)[96] = calloc((size_t)nc, sizeof *notes);
	if (!configs || !consts || !ms || !notes)
		st = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
	for (int c = 0; st == BLK_SUCCESS && c < nc; c++) {
		if (nc > 1)
			rt_config_options(k, opt, c, consts + (size_t)c * per, &configs[c]);
		else
			configs[c] = opt ? *opt : (blk_launch_options){0};
		ms[c] = -1;
	}
	/* pruned on the kernel's own device (prune.c); the others timed across the devices */
	int *pruned = calloc((size_t)nc, sizeof *pruned);
	if (st == BLK_SUCCESS && !pruned)
		st = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
	if (st == BLK_SUCCESS && nc > 1)
		st = prune_own(k, args, n_args, opt, configs, nc, pruned, notes);
	double *kept_ms = calloc((size_t)nc, sizeof *kept_ms);
	char(*kept_notes)[96] = calloc((size_t)nc, sizeof *kept_notes);
	if (st == BLK_SUCCESS && (!kept_ms || !kept_notes))
		st = rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
	int kept = 0;
	for (int c = 0; st == BLK_SUCCESS && c < nc; c++)
		if (!pruned[c]) {
			configs[kept] = configs[c];
			kept_ms[kept++] = -1;
		}
	sw.configs = configs;
	sw.n_configs = kept;
	sw.ms = kept_ms;
	sw.notes = kept_notes ? kept_notes[0] : NULL;
	sw.note_size = sizeof notes[0];
	if (st == BLK_SUCCESS && kept)
		st = sweep_devices(&sw, devices, n_devices);
	/* back in the order of the configs */
	for (int c = 0, j = 0; st == BLK_SUCCESS && c < nc; c++) {
		if (pruned[c]) {
			ms[c] = BLK_TUNE_PRUNED;
			continue;
		}
		ms[c] = kept_ms[j];
		memcpy(notes[c], kept_notes[j], sizeof notes[c]);
		j++;
	}
	free(kept_ms);
	free(kept_notes);
	int best = -1;
	for (int c = 0; st == BLK_SUCCESS && c < nc; c++)
		if (ms[c] >= 0 && (best < 0 || ms[c] < ms[best]))
			best = c;
	if (st == BLK_SUCCESS && best < 0)
		st = rt_fail(BLK_ERROR_LAUNCH, "no config of kernel '%s' can run; the first: %s", k->node->name, notes[0]);
	free(pruned);
	if (result && st == BLK_SUCCESS) {
		memset(result, 0, sizeof *result);
		result->n_configs = nc;
		result->best = best;
		for (int c = 0; c < BLK_TUNE_MAX_CONFIGS; c++)
			result->ms[c] = c < nc ? ms[c] : -1;
		for (int c = 0; c < nc && c < BLK_TUNE_MAX_CONFIGS; c++)
			snprintf(result->note[c], sizeof result->note[c], "%s", notes[c]);
	}
	if (st == BLK_SUCCESS) {
		/* remembered for the kernel's own context, as blk_autotune does */
		pthread_mutex_lock(&k->m->lock);
		if (k->m->ctx)
			rt_store_choice(k, args, opt, rt_arg_spec(k, args), best);
		pthread_mutex_unlock(&k->m->lock);
	}
	free(configs);
	free(consts);
	free(ms);
	free(notes);
	return st == BLK_SUCCESS ? rt_ok() : st;
}
