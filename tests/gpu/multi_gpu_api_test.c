/* Two GPUs through blk.h (libblk.so only): one module's source on a
 * context per device, a vector add on each checked against C, a thread per
 * device launching at once, the caller's (no) current context untouched;
 * blk_autotune_devices and blk_time_configs split across devices 0 and 1:
 * every config timed, the arguments untouched, the remembered choice
 * computing the right result. Where fewer than two GPUs can be used it
 * prints one line "SKIP: ..." and "0 passed, 0 failed". */
#include "blk.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	fflush(stdout);
	cond ? passed++ : failed++;
}

static const char *source =
	"@autotune(key = [n], configs = [{BLOCK = 128, num_warps = 4}, {BLOCK = 1024, num_warps = 4},\n"
	"                                {BLOCK = 512, num_warps = 8}, {BLOCK = 256, num_warps = 2}])\n"
	"kernel add(x: *f32, y: *f32, out: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let mask = offs < n;\n"
	"    store(out + offs, load(x + offs, mask = mask) + load(y + offs, mask = mask), mask = mask);\n"
	"}\n";

enum { N = 1 << 20 };

typedef struct Dev {
	int device;
	blk_context *ctx;
	blk_module *m;
	blk_kernel *k;
	blk_devptr x, y, out;
	float *hx, *hy, *hout;
	int launches, wrong;
	blk_status st;
} Dev;

static float frand(unsigned *s)
{
	*s = *s * 1664525u + 1013904223u;
	return (float)(*s >> 8) / (float)(1u << 24) - 0.5f;
}

/* A thread per device: launches, then the result against C. */
static void *run_device(void *p)
{
	Dev *d = p;
	blk_arg a[4] = {blk_arg_ptr(d->x), blk_arg_ptr(d->y), blk_arg_ptr(d->out), blk_arg_int(N - 3)};
	blk_const b = {.name = "BLOCK", .i = 256};
	blk_launch_options o = {.consts = &b, .n_consts = 1};
	d->st = BLK_SUCCESS;
	for (int i = 0; i < d->launches && d->st == BLK_SUCCESS; i++)
		d->st = blk_launch(d->k, a, 4, &o);
	if (d->st == BLK_SUCCESS)
		d->st = blk_copy_from_device(d->ctx, d->hout, d->out, N * sizeof(float));
	d->wrong = 0;
	for (int i = 0; i < N; i++)
		d->wrong += d->hout[i] != (i < N - 3 ? d->hx[i] + d->hy[i] : 0.0f);
	return NULL;
}

static int setup(Dev *d, int device, unsigned seed)
{
	d->device = device;
	d->hx = malloc(N * sizeof(float));
	d->hy = malloc(N * sizeof(float));
	d->hout = malloc(N * sizeof(float));
	if (!d->hx || !d->hy || !d->hout)
		return 0;
	for (int i = 0; i < N; i++)
		d->hx[i] = frand(&seed), d->hy[i] = frand(&seed);
	return blk_module_load_source(d->ctx, "multi.tile", source, strlen(source), NULL, &d->m) == BLK_SUCCESS &&
	       blk_kernel_get(d->m, "add", &d->k) == BLK_SUCCESS && blk_malloc(d->ctx, N * sizeof(float), &d->x) == BLK_SUCCESS &&
	       blk_malloc(d->ctx, N * sizeof(float), &d->y) == BLK_SUCCESS &&
	       blk_malloc(d->ctx, N * sizeof(float), &d->out) == BLK_SUCCESS &&
	       blk_copy_to_device(d->ctx, d->x, d->hx, N * sizeof(float)) == BLK_SUCCESS &&
	       blk_copy_to_device(d->ctx, d->y, d->hy, N * sizeof(float)) == BLK_SUCCESS;
}

int main(void)
{
	Dev dev[2] = {{0}};
	if (blk_context_create(BLK_BACKEND_GPU, 0, &dev[0].ctx) != BLK_SUCCESS) {
		printf("SKIP: no GPU (%s)\n0 passed, 0 failed\n", blk_last_error());
		return 0;
	}
	if (blk_context_create(BLK_BACKEND_GPU, 1, &dev[1].ctx) != BLK_SUCCESS) {
		printf("SKIP: fewer than 2 GPUs (%s)\n0 passed, 0 failed\n", blk_last_error());
		blk_context_destroy(dev[0].ctx);
		return 0;
	}
	expect(setup(&dev[0], 0, 1) && setup(&dev[1], 1, 2), "a context, the module and memory on devices 0 and 1");

	/* a thread per device, at once */
	pthread_t t[2];
	for (int i = 0; i < 2; i++) {
		dev[i].launches = 100;
		pthread_create(&t[i], NULL, run_device, &dev[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		char what[160];
		snprintf(what, sizeof what, "device %d: 100 launches from its own thread, the sum right (%d wrong)", i,
		         dev[i].wrong);
		expect(dev[i].st == BLK_SUCCESS && dev[i].wrong == 0, what);
	}

	/* sweeps across both */
	Dev *d = &dev[0];
	blk_arg a[4] = {blk_arg_ptr(d->x), blk_arg_ptr(d->y), blk_arg_ptr(d->out), blk_arg_int(N - 3)};
	int devs[2] = {0, 1};
	blk_tune_result r;
	memset(d->hout, 0, N * sizeof(float));
	blk_copy_to_device(d->ctx, d->out, d->hout, N * sizeof(float));
	blk_status st = blk_autotune_devices(d->k, a, 4, NULL, devs, 2, &r);
	if (st == BLK_ERROR_INVALID_ARGUMENT && strstr(blk_last_error(), "one model only")) {
		printf("ok   (devices 0 and 1 are of two models: the sweep is refused: %s)\n", blk_last_error());
		passed++;
	} else {
		int ran = 0;
		for (int c = 0; c < r.n_configs; c++)
			ran += r.ms[c] > 0;
		char what[200];
		snprintf(what, sizeof what, "blk_autotune_devices over 0 and 1: %d of 4 configs timed, the best %d (%.4f ms)",
		         ran, r.best, r.best >= 0 ? r.ms[r.best] : -1.0);
		expect(st == BLK_SUCCESS && r.n_configs == 4 && ran == 4, what);
		blk_copy_from_device(d->ctx, d->hout, d->out, N * sizeof(float));
		int touched = 0;
		for (int i = 0; i < N; i++)
			touched += d->hout[i] != 0.0f;
		expect(touched == 0, "... the arguments untouched (each device timed its own copies)");
		int wrong = 0;
		expect(blk_launch(d->k, a, 4, NULL) == BLK_SUCCESS &&
		           blk_copy_from_device(d->ctx, d->hout, d->out, N * sizeof(float)) == BLK_SUCCESS, "the tuned launch");
		for (int i = 0; i < N; i++)
			wrong += d->hout[i] != (i < N - 3 ? d->hx[i] + d->hy[i] : 0.0f);
		expect(wrong == 0, "... computes x + y");
		blk_const b[2] = {{.name = "BLOCK", .i = 128}, {.name = "BLOCK", .i = 1024}};
		blk_launch_options cf[2] = {{.consts = &b[0], .n_consts = 1}, {.consts = &b[1], .n_consts = 1}};
		double ms[2] = {-1, -1};
		expect(blk_time_configs(d->k, a, 4, cf, 2, 20, devs, 2, ms, NULL, 0) == BLK_SUCCESS && ms[0] > 0 && ms[1] > 0,
		       "blk_time_configs: two configs, one on each device, both timed");
	}
	for (int i = 0; i < 2; i++) {
		blk_module_destroy(dev[i].m);
		blk_context_destroy(dev[i].ctx);
		free(dev[i].hx);
		free(dev[i].hy);
		free(dev[i].hout);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
