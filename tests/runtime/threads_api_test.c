/* threads_api_test: blk.h's promise that every function is safe to call from
 * several threads, on the calls where the runtime shares state, against the
 * stand-in driver (fake/libcuda.so.1). Written for ThreadSanitizer
 * (make SANITIZE=thread test), where a race is a report; in other builds it
 * checks that every call succeeds. Threads start together at a barrier:
 *  - first calls into libblk: contexts created at once (the driver is loaded
 *    once);
 *  - one context, one module: the first launches of the same variants and of
 *    distinct ones (compiled once, through LLVM), blk_kernel_compile,
 *    blk_time_launch (the L2 flush buffer), blk_autotune of one kernel and
 *    key (the choice and the disk cache), memory allocated and freed, and an
 *    error on each thread that stays that thread's;
 *  - an interpreter context: launches that each run on threads of their own,
 *    printing. */
#include "blk.h"
#include "fake_cuda.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 3, N = 4096 };

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	cond ? passed++ : failed++;
}

static const char *source =
	"@autotune(key = [n], configs = [{BLOCK = 128}, {BLOCK = 256}, {BLOCK = 512, num_warps = 8}])\n"
	"kernel add1(x: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, load(x + offs, mask = offs < n) + 1.0, mask = offs < n);\n"
	"}\n"
	"kernel plain(x: *f32, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, load(x + offs, mask = offs < n) * 2.0, mask = offs < n);\n"
	"}\n"
	"kernel say(x: *f32, n: i32, BLOCK: const i32 = 64) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let v = load(x + offs, mask = offs < n, other = 0.0);\n"
	"    store(x + offs, v + 1.0, mask = offs < n);\n"
	"    if program_id(0) == 0 {\n"
	"        print(\"sum\", sum(v, axis = 0));\n"
	"    }\n"
	"}\n";

static pthread_barrier_t barrier;
static blk_context *shared_ctx, *interp_ctx;
static blk_module *shared_mod, *interp_mod;

typedef struct {
	int id;
	int errors;         /* calls that failed (and should not have) */
	char first[256];    /* the first of them */
	int own_error_kept; /* the thread's own last error survived the others */
} Job;

static void note(Job *j, int ok, const char *what)
{
	if (ok)
		return;
	if (!j->errors++)
		snprintf(j->first, sizeof j->first, "thread %d: %s: %s", j->id, what, blk_last_error());
}

static blk_kernel *kernel(blk_module *m, const char *name)
{
	blk_kernel *k = NULL;
	blk_kernel_get(m, name, &k);
	return k;
}

static void *first_calls(void *arg)
{
	Job *j = arg;
	pthread_barrier_wait(&barrier);
	blk_context *ctx = NULL;
	note(j, blk_context_create(BLK_BACKEND_GPU, 0, &ctx) == BLK_SUCCESS, "blk_context_create");
	blk_devptr p = 0;
	note(j, ctx && blk_malloc(ctx, 1024, &p) == BLK_SUCCESS && blk_free(ctx, p) == BLK_SUCCESS, "blk_malloc");
	blk_context_destroy(ctx);
	return NULL;
}

static void *gpu_work(void *arg)
{
	Job *j = arg;
	static float host[THREADS][N];
	blk_context *ctx = shared_ctx;
	blk_devptr x = 0;
	note(j, blk_malloc(ctx, N * sizeof(float), &x) == BLK_SUCCESS, "blk_malloc");
	note(j, blk_copy_to_device(ctx, x, host[j->id], sizeof host[j->id]) == BLK_SUCCESS, "blk_copy_to_device");
	blk_kernel *plain = kernel(shared_mod, "plain"), *add1 = kernel(shared_mod, "add1");
	blk_arg args[2] = {blk_arg_ptr(x), blk_arg_int(N)};
	pthread_barrier_wait(&barrier);
	for (int r = 0; r < ROUNDS; r++) {
		/* the same variant on every thread, and one of this thread's own */
		blk_const same = {.name = "BLOCK", .i = 64 << r};
		blk_launch_options o_same = {.consts = &same, .n_consts = 1};
		note(j, blk_launch(plain, args, 2, &o_same) == BLK_SUCCESS, "blk_launch (shared variant)");
		blk_const own = {.name = "BLOCK", .i = 32 << (j->id % 4)};
		blk_launch_options o_own = {.consts = &own, .n_consts = 1, .num_warps = 1 << (r % 3)};
		blk_compile_info info;
		note(j, blk_kernel_compile(plain, args, 2, &o_own, &info) == BLK_SUCCESS && info.ptx, "blk_kernel_compile");
		note(j, blk_launch(plain, args, 2, &o_own) == BLK_SUCCESS, "blk_launch (own variant)");
		double ms = 0;
		note(j, blk_time_launch(plain, args, 2, &o_same, 2, &ms) == BLK_SUCCESS && ms >= 0, "blk_time_launch");
		blk_tune_result res;
		note(j, blk_autotune(add1, args, 2, NULL, &res) == BLK_SUCCESS && res.best >= 0, "blk_autotune");
		note(j, blk_launch(add1, args, 2, NULL) == BLK_SUCCESS, "blk_launch (tuned)");
		blk_devptr tmp = 0;
		note(j, blk_malloc(ctx, 256u << j->id, &tmp) == BLK_SUCCESS && blk_free(ctx, tmp) == BLK_SUCCESS,
		     "blk_malloc and blk_free");
		/* an error of this thread's own: kept while the others succeed */
		char mine[64];
		snprintf(mine, sizeof mine, "no_such_kernel_%d", j->id);
		blk_kernel *none = NULL;
		if (blk_kernel_get(shared_mod, mine, &none) == BLK_SUCCESS)
			note(j, 0, "blk_kernel_get of a missing kernel");
		sched_yield();
		j->own_error_kept += strstr(blk_last_error(), mine) != NULL;
	}
	note(j, blk_synchronize(ctx) == BLK_SUCCESS, "blk_synchronize");
	note(j, blk_copy_from_device(ctx, host[j->id], x, sizeof host[j->id]) == BLK_SUCCESS, "blk_copy_from_device");
	note(j, blk_free(ctx, x) == BLK_SUCCESS, "blk_free");
	return NULL;
}

static void *interp_work(void *arg)
{
	Job *j = arg;
	static float host[THREADS][N];
	blk_devptr x = 0;
	note(j, blk_malloc(interp_ctx, N * sizeof(float), &x) == BLK_SUCCESS, "blk_malloc (interpreter)");
	for (int i = 0; i < N; i++)
		host[j->id][i] = (float)i;
	note(j, blk_copy_to_device(interp_ctx, x, host[j->id], sizeof host[j->id]) == BLK_SUCCESS,
	     "blk_copy_to_device (interpreter)");
	blk_arg args[2] = {blk_arg_ptr(x), blk_arg_int(N)};
	blk_launch_options o = {.threads = 3};
	pthread_barrier_wait(&barrier);
	for (int r = 0; r < ROUNDS; r++)
		note(j, blk_launch(kernel(interp_mod, "say"), args, 2, &o) == BLK_SUCCESS, "blk_launch (interpreter)");
	note(j, blk_copy_from_device(interp_ctx, host[j->id], x, sizeof host[j->id]) == BLK_SUCCESS,
	     "blk_copy_from_device (interpreter)");
	int right = 1;
	for (int i = 0; i < N; i++)
		right &= host[j->id][i] == (float)i + ROUNDS;
	note(j, right, "the values after the launches (interpreter)");
	note(j, blk_free(interp_ctx, x) == BLK_SUCCESS, "blk_free (interpreter)");
	return NULL;
}

/* Runs fn on THREADS threads started together; the number of failed calls. */
static int run_threads(void *(*fn)(void *), Job *jobs)
{
	pthread_t t[THREADS];
	int errors = 0;
	pthread_barrier_init(&barrier, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (Job){.id = i};
		pthread_create(&t[i], NULL, fn, &jobs[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		if (jobs[i].errors && !errors)
			printf("     %s\n", jobs[i].first);
		errors += jobs[i].errors;
	}
	pthread_barrier_destroy(&barrier);
	return errors;
}

int main(void)
{
	FakeCuda fc;
	char self[4096], path[4096];
	if (!fake_cuda_open(&fc, self, sizeof self, path, sizeof path))
		return 1;
	Job jobs[THREADS];

	expect(run_threads(first_calls, jobs) == 0, "4 threads' first calls: contexts created at once, memory");

	expect(blk_context_create(BLK_BACKEND_GPU, 0, &shared_ctx) == BLK_SUCCESS &&
	           blk_module_load_source(shared_ctx, "threads.tile", source, strlen(source), NULL, &shared_mod) ==
	               BLK_SUCCESS,
	       "a GPU context and a module");
	int before = fc.launches();
	expect(run_threads(gpu_work, jobs) == 0,
	       "4 threads x 3 rounds on one module: first launches of shared and own variants, compile, time, "
	       "autotune one key, malloc and free");
	expect(fc.launches() > before + THREADS * ROUNDS * 4, "... every launch reached the driver");
	int kept = 0;
	for (int i = 0; i < THREADS; i++)
		kept += jobs[i].own_error_kept;
	expect(kept == THREADS * ROUNDS, "... each thread's last error is its own");
	blk_module_destroy(shared_mod);
	blk_context_destroy(shared_ctx);
	expect(fc.modules_live() == 0 && fc.allocs_live() == 0 && fc.primary_refs() == 0, "all given back");

	expect(blk_context_create(BLK_BACKEND_INTERPRETER, 0, &interp_ctx) == BLK_SUCCESS &&
	           blk_module_load_source(interp_ctx, "threads.tile", source, strlen(source), NULL, &interp_mod) ==
	               BLK_SUCCESS,
	       "an interpreter context and the module");
	expect(run_threads(interp_work, jobs) == 0,
	       "4 threads x 3 launches, each on 3 threads of its own, printing: right values");
	const char *printed = blk_context_printed(interp_ctx);
	int lines = 0;
	for (const char *s = printed; s && (s = strstr(s, "sum")); s++)
		lines++;
	expect(lines == THREADS * ROUNDS, "... every print kept (blk_context_printed)");
	blk_module_destroy(interp_mod);
	blk_context_destroy(interp_ctx);

	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
