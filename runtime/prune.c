/* prune.c: the configs autotuning leaves untimed, and why. Before timing a
 * kernel's configs (autotune.c, sweep.c) or a sweep's (blk_prune_configs),
 * each is compiled, loaded and its grid evaluated for the launch's
 * arguments; then two rules drop some:
 *
 *  - fit (BLK_PRUNE_FIT): a config that cannot run on the device: more
 *    shared memory than a program may opt in to, more threads a program
 *    than the device allows, or more threads than the register file holds
 *    at the registers its compiled code uses (the driver's
 *    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
 *  - idle (BLK_PRUNE_IDLE): a config of fewer programs than half the
 *    device's multiprocessors (more than half of them would have nothing
 *    to run) while another config that fits runs at least one program on
 *    every multiprocessor. The config of the most programs is never
 *    pruned by it, so it never prunes them all.
 *
 * With fewer than two configs nothing is pruned: the lone config is what
 * runs, and its launch says why it cannot. GPU only: on the interpreter
 * nothing is timed and nothing is pruned. */
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "227 KiB", "48.5 KiB" */
static void kib(long bytes, char *buf, size_t size)
{
	if (bytes % 1024 == 0)
		snprintf(buf, size, "%ld KiB", bytes / 1024);
	else
		snprintf(buf, size, "%.1f KiB", (double)bytes / 1024);
}

/* Why v cannot run on ctx's device ("pruned: ..."), or false when it can
 * as far as is known: what loading it found even when loading failed
 * (jit.c sets shared_bytes and block before its checks). */
static bool does_not_fit(const blk_context *ctx, const Variant *v, char *why, size_t size)
{
	long threads = v->block ? (long)v->block : 32L * v->f->num_warps;
	if (v->shared_bytes > ctx->smem_optin) {
		char need[32], have[32];
		kib(v->shared_bytes, need, sizeof need);
		kib(ctx->smem_optin, have, sizeof have);
		snprintf(why, size, "pruned: %s shared memory > %s", need, have);
		return true;
	}
	if (threads > ctx->max_threads) {
		snprintf(why, size, "pruned: %ld threads a program > %d", threads, ctx->max_threads);
		return true;
	}
	if (v->fn && v->max_block > 0 && threads > v->max_block) {
		if (v->registers > 0)
			snprintf(why, size, "pruned: %d registers x %ld threads > the register file (%d threads fit)",
			         v->registers, threads, v->max_block);
		else
			snprintf(why, size, "pruned: %ld threads a program > %d at its registers", threads, v->max_block);
		return true;
	}
	return false;
}

/* One line of text, cut to fit. */
static void one_line(char *dst, size_t size, const char *src)
{
	size_t n = 0;
	for (; src[n] && n + 1 < size; n++)
		dst[n] = src[n] == '\n' ? ' ' : src[n];
	dst[n] = '\0';
}

/* Makes config c ready and checks that it fits (rules & BLK_PRUNE_FIT). */
static void check_one(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *launch,
                      const blk_launch_options *own, int cfg, uint64_t spec, int rules, ConfigCheck *out)
{
	blk_context *ctx = k->m->ctx;
	*out = (ConfigCheck){.status = BLK_SUCCESS};
	const blk_launch_options *o = cfg >= 0 ? launch : own;
	if (cfg < 0 && rt_needs_tuning(k, own))
		return; /* its launch tunes first: which variant runs is not known here */
	Variant *v = NULL;
	blk_status st = cfg >= 0 ? rt_config_variant(k, launch, cfg, spec, args, n_args, &v)
	                         : rt_find_variant(k, args, n_args, own, spec, FIND_COMPILE, &v);
	bool fit = rules & BLK_PRUNE_FIT;
	if (st == BLK_SUCCESS && !(fit && does_not_fit(ctx, v, out->note, sizeof out->note)))
		st = rt_gpu_ready(k, &v, args);
	if (v && fit && does_not_fit(ctx, v, out->note, sizeof out->note)) {
		out->pruned = BLK_PRUNE_FIT;
		return;
	}
	if (st == BLK_SUCCESS)
		st = rt_launch_grid(k, v, args, n_args, o, out->grid);
	if (st != BLK_SUCCESS) {
		const char *e = blk_last_error();
		out->status = st;
		snprintf(out->note, sizeof out->note, "%s", strncmp(e, "blk_launch: ", 12) == 0 ? e + 12 : e);
		return;
	}
	out->v = v;
	out->programs = (uint64_t)out->grid[0] * out->grid[1] * out->grid[2];
}

/* "BLOCK=128 num_warps=8": the values of config a that b does not share,
 * at most about `size` characters. */
static void difference(const blk_launch_options *a, const blk_launch_options *b, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < a->n_consts + 2; i++) {
		char item[128];
		if (i < a->n_consts) {
			const blk_const *x = &a->consts[i], *y = NULL;
			for (int j = 0; j < b->n_consts && !y; j++)
				if (strcmp(b->consts[j].name, x->name) == 0)
					y = &b->consts[j];
			bool same = y && !x->type == !y->type && (x->type ? strcmp(x->type, y->type) == 0
			                                           : (x->is_float != 0) == (y->is_float != 0) &&
			                                                 (x->is_float ? x->f == y->f : x->i == y->i));
			if (same)
				continue;
			if (x->type)
				snprintf(item, sizeof item, "%s=%s", x->name, x->type);
			else if (x->is_float)
				snprintf(item, sizeof item, "%s=%g", x->name, x->f);
			else
				snprintf(item, sizeof item, "%s=%lld", x->name, (long long)x->i);
		} else {
			bool warps = i == a->n_consts;
			int va = warps ? a->num_warps : a->num_stages, vb = warps ? b->num_warps : b->num_stages;
			if (va <= 0 || va == vb)
				continue;
			snprintf(item, sizeof item, "%s=%d", warps ? "num_warps" : "num_stages", va);
		}
		size_t len = strlen(item) + (n ? 1 : 0);
		if (n + len + 4 >= size) {
			snprintf(buf + n, size - n, "%s...", n ? " " : "");
			return;
		}
		n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? " " : "", item);
	}
}

void rt_check_configs(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *launch,
                      const blk_launch_options *opts, int n, bool by_index, uint64_t spec, int rules,
                      ConfigCheck *checks)
{
	if (n < 2)
		rules = 0; /* a lone config is never pruned */
	for (int c = 0; c < n; c++)
		check_one(k, args, n_args, launch, &opts[c], by_index ? c : -1, spec, rules, &checks[c]);
	int sms = k->m->ctx->sm_count, top = -1;
	if (!(rules & BLK_PRUNE_IDLE) || sms <= 0)
		return;
	for (int c = 0; c < n; c++)
		if (!checks[c].pruned && checks[c].programs && (top < 0 || checks[c].programs > checks[top].programs))
			top = c;
	if (top < 0 || checks[top].programs < (uint64_t)sms)
		return;
	for (int c = 0; c < n; c++) {
		ConfigCheck *ch = &checks[c];
		if (ch->pruned || !ch->programs || 2 * ch->programs >= (uint64_t)sms)
			continue;
		char other[56];
		difference(&opts[top], &opts[c], other, sizeof other);
		if (!other[0])
			snprintf(other, sizeof other, "config %d", top);
		ch->pruned = BLK_PRUNE_IDLE;
		snprintf(ch->note, sizeof ch->note, "pruned: %llu programs on %d SMs; %s gives %llu",
		         (unsigned long long)ch->programs, sms, other, (unsigned long long)checks[top].programs);
	}
}

blk_status blk_prune_configs(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *configs,
                             int n_configs, int rules, int *pruned, char *notes, size_t note_size)
{
	const char *fn = "blk_prune_configs";
	if (!k)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: kernel is NULL", fn);
	if (rt_handle_check(k, H_KERNEL, fn) != BLK_SUCCESS)
		return BLK_ERROR_INVALID_ARGUMENT;
	if (n_configs < 0 || (n_configs && (!configs || !pruned)))
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: %d configs, configs %s, pruned %s", fn, n_configs,
		               configs ? "given" : "NULL", pruned ? "given" : "NULL");
	if (rules & ~(BLK_PRUNE_FIT | BLK_PRUNE_IDLE))
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: rules is %d (BLK_PRUNE_FIT, BLK_PRUNE_IDLE or both)", fn,
		               rules);
	blk_status st = rt_check_args(k, args, n_args);
	for (int c = 0; st == BLK_SUCCESS && c < n_configs; c++)
		st = rt_check_options(k, &configs[c], fn);
	if (st != BLK_SUCCESS)
		return st;
	for (int c = 0; c < n_configs; c++) {
		pruned[c] = 0;
		if (notes && note_size)
			notes[(size_t)c * note_size] = '\0';
	}
	ConfigCheck *checks = calloc((size_t)(n_configs ? n_configs : 1), sizeof *checks);
	if (!checks)
		return rt_fail(BLK_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
	blk_module *m = k->m;
	GpuScope scope;
	if ((st = rt_gpu_push(rt_kernel_context(k), fn, &scope)) != BLK_SUCCESS) {
		free(checks);
		return st;
	}
	pthread_mutex_lock(&m->lock);
	blk_context *ctx = m->ctx;
	if (!ctx)
		st = rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: the context of kernel '%s' was destroyed", fn, k->node->name);
	else if (ctx->backend == BLK_BACKEND_GPU)
		rt_check_configs(k, args, n_args, NULL, configs, n_configs, false, rt_arg_spec(k, args), rules, checks);
	pthread_mutex_unlock(&m->lock);
	rt_gpu_pop(&scope);
	for (int c = 0; st == BLK_SUCCESS && c < n_configs; c++) {
		pruned[c] = checks[c].pruned;
		if (checks[c].pruned && notes && note_size)
			one_line(notes + (size_t)c * note_size, note_size, checks[c].note);
	}
	free(checks);
	return st == BLK_SUCCESS ? rt_ok() : st;
}
