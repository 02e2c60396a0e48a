/* Several threads compiling distinct variants and launching them at once on
 * the interpreter backend: every compile and launch succeeds and computes
 * the right values (the compiler keeps no shared parse state, e.g. strtok). */
#include "blk.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	cond ? passed++ : failed++;
}

/* Many builtin calls with named and optional arguments: each binds its
 * arguments to the builtin's parameter list. */
static const char *source =
	"kernel scale(x: *f32, out: *f32, n: i32, BLOCK: const i32 = 64, K: const i32 = 1) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let mask = offs < n;\n"
	"    let v = load(x + offs, mask = mask, other = 0.0);\n"
	"    let w = load(x + offs, mask = mask, other = 1.0);\n"
	"    let t = maximum(v, minimum(w, v)) + where(mask, v, 0.0) * 0.0;\n"
	"    let c = cdiv(n, BLOCK) * 0 + cdiv(K, 1);\n"
	"    store(out + offs, t * c + sum(v, axis = 0) * 0.0, mask = mask);\n"
	"}\n";

enum { THREADS = 8, ROUNDS = 24, N = 300 };

typedef struct {
	blk_context *ctx;
	int id;
	int ok_launches;
	char error[256];
} Job;

static void *worker(void *arg)
{
	Job *job = arg;
	float x[N], out[N];
	for (int i = 0; i < N; i++)
		x[i] = (float)(i % 17) - 8.0f;
	blk_devptr dx = 0, dout = 0;
	if (blk_malloc(job->ctx, sizeof x, &dx) != BLK_SUCCESS || blk_malloc(job->ctx, sizeof out, &dout) != BLK_SUCCESS) {
		snprintf(job->error, sizeof job->error, "blk_malloc: %s", blk_last_error());
		return NULL;
	}
	blk_copy_to_device(job->ctx, dx, x, sizeof x);
	for (int r = 0; r < ROUNDS; r++) {
		/* a module of its own each round: every launch compiles a variant */
		blk_module *m;
		if (blk_module_load_source(job->ctx, "scale.tile", source, strlen(source), NULL, &m) != BLK_SUCCESS) {
			snprintf(job->error, sizeof job->error, "load: %s", blk_last_error());
			break;
		}
		blk_kernel *k;
		blk_kernel_get(m, NULL, &k);
		blk_const consts[2] = {{.name = "BLOCK", .i = 16 << (r % 4)}, {.name = "K", .i = 1 + job->id}};
		blk_launch_options o = {.consts = consts, .n_consts = 2};
		blk_arg args[3] = {blk_arg_ptr(dx), blk_arg_ptr(dout), blk_arg_int(N)};
		blk_status s = blk_launch(k, args, 3, &o);
		if (s != BLK_SUCCESS) {
			snprintf(job->error, sizeof job->error, "launch: %s", blk_last_error());
			blk_module_destroy(m);
			break;
		}
		blk_copy_from_device(job->ctx, out, dout, sizeof out);
		int wrong = 0;
		for (int i = 0; i < N; i++)
			wrong += out[i] != x[i] * (float)(1 + job->id);
		blk_module_destroy(m);
		if (wrong) {
			snprintf(job->error, sizeof job->error, "%d wrong values in round %d", wrong, r);
			break;
		}
		job->ok_launches++;
	}
	blk_free(job->ctx, dx);
	blk_free(job->ctx, dout);
	return NULL;
}

int main(void)
{
	blk_context *ctx;
	expect(blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ctx) == BLK_SUCCESS, "interpreter context");
	Job jobs[THREADS];
	pthread_t tids[THREADS];
	for (int t = 0; t < THREADS; t++) {
		jobs[t] = (Job){.ctx = ctx, .id = t};
		pthread_create(&tids[t], NULL, worker, &jobs[t]);
	}
	int all_ok = 1;
	for (int t = 0; t < THREADS; t++) {
		pthread_join(tids[t], NULL);
		if (jobs[t].ok_launches != ROUNDS) {
			printf("     thread %d: %d of %d launches; %s\n", t, jobs[t].ok_launches, ROUNDS, jobs[t].error);
			all_ok = 0;
		}
	}
	expect(all_ok, "8 threads x 24 compiles and launches of distinct variants all succeed");
	blk_context_destroy(ctx);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
