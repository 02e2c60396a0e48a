/* @heuristics through blk.h on the interpreter: const parameters computed
 * at each launch from the scalar arguments (and the consts bound before
 * them, an @autotune config's included), as Triton's @heuristics does.
 *
 *  - one kernel object launched with arguments that change a heuristic's
 *    value, back and forth: each launch runs the variant its arguments ask
 *    for (the launch that repeats the last request must not reuse a
 *    variant made for other arguments);
 *  - a launch that gives the const itself: the heuristic is not computed;
 *  - a heuristic that reads an @autotune config's const;
 *  - errors: a heuristic using a const computed after it, and compiling
 *    without arguments (blk_kernel_compile) when the const is not given. */
#include "blk.h"

#include <stdio.h>
#include <string.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static const char *source =
	"@heuristics(EVEN = n % 64 == 0, SCALE = 3)\n"
	"kernel k(x: *i32, out: *i32, n: i32, EVEN: const i1, SCALE: const i32) grid(cdiv(n, 64)) {\n"
	"    let offs = program_id(0) * 64 + arange(0, 64);\n"
	"    let v = load(x + offs, mask = offs < n, other = 0);\n"
	"    store(out + offs, EVEN ? v * SCALE : v - SCALE, mask = offs < n);\n"
	"}\n"
	"@autotune(key = [n], configs = [{BLOCK = 32}, {BLOCK = 64}])\n"
	"@heuristics(HALF = BLOCK / 2)\n"
	"kernel tuned(out: *i32, n: i32, BLOCK: const i32, HALF: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(out + offs, full((BLOCK,), BLOCK * 1000 + HALF, i32), mask = offs < n);\n"
	"}\n"
	"@heuristics(A = B + 1, B = 2)\n"
	"kernel bad(out: *i32, A: const i32, B: const i32) grid(1) {\n"
	"    store(out, A);\n"
	"}\n";

enum { N = 256 };

/* Launches k over n elements of x (x[i] = i) and checks out[i] against
 * even ? 3 i : i - 3 (the heuristic's choice) for i < n. */
static void run(blk_context *ctx, blk_kernel *k, blk_devptr x, blk_devptr out, int n, const blk_const *c, int nc,
                int even, const char *what)
{
	int host[N];
	for (int i = 0; i < N; i++)
		host[i] = -1;
	blk_copy_to_device(ctx, out, host, sizeof host);
	blk_arg args[3] = {blk_arg_ptr(x), blk_arg_ptr(out), blk_arg_int(n)};
	blk_launch_options opt = {.consts = c, .n_consts = nc};
	blk_status st = blk_launch(k, args, 3, &opt);
	blk_copy_from_device(ctx, host, out, sizeof host);
	int ok = st == BLK_SUCCESS;
	for (int i = 0; ok && i < N; i++)
		ok = host[i] == (i >= n ? -1 : even ? 3 * i : i - 3);
	expect(ok, what);
}

int main(void)
{
	blk_context *ctx = NULL;
	blk_module *m = NULL;
	if (blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ctx) != BLK_SUCCESS ||
	    blk_module_load_source(ctx, "heuristics.tile", source, strlen(source), NULL, &m) != BLK_SUCCESS) {
		expect(0, "the module with @heuristics loads");
		printf("%d passed, %d failed\n", passed, failed);
		return 1;
	}
	expect(1, "the module with @heuristics loads");
	blk_kernel *k = NULL, *tuned = NULL, *bad = NULL;
	blk_kernel_get(m, "k", &k);
	blk_kernel_get(m, "tuned", &tuned);
	blk_kernel_get(m, "bad", &bad);
	blk_devptr x = 0, out = 0;
	blk_malloc(ctx, N * sizeof(int), &x);
	blk_malloc(ctx, N * sizeof(int), &out);
	int host[N];
	for (int i = 0; i < N; i++)
		host[i] = i;
	blk_copy_to_device(ctx, x, host, sizeof host);

	run(ctx, k, x, out, 256, NULL, 0, 1, "n = 256: EVEN computed true, SCALE 3: out = 3 x");
	run(ctx, k, x, out, 250, NULL, 0, 0, "n = 250 on the same kernel: EVEN computed false: out = x - 3");
	run(ctx, k, x, out, 192, NULL, 0, 1, "n = 192: true again");
	run(ctx, k, x, out, 192, NULL, 0, 1, "n = 192 once more (the last request again)");
	run(ctx, k, x, out, 100, NULL, 0, 0, "n = 100 after it: false");
	blk_const given = {.name = "EVEN", .i = 0};
	run(ctx, k, x, out, 256, &given, 1, 0, "n = 256 with EVEN = 0 given: the heuristic is not computed");

	/* with @autotune: HALF from the config's BLOCK (the interpreter takes the first config) */
	for (int i = 0; i < N; i++)
		host[i] = -1;
	blk_copy_to_device(ctx, out, host, sizeof host);
	blk_arg targs[2] = {blk_arg_ptr(out), blk_arg_int(100)};
	blk_status st = blk_launch(tuned, targs, 2, NULL);
	blk_copy_from_device(ctx, host, out, sizeof host);
	int ok = st == BLK_SUCCESS;
	for (int i = 0; ok && i < N; i++)
		ok = host[i] == (i < 100 ? 32 * 1000 + 16 : -1);
	expect(ok, "@autotune and @heuristics: HALF = BLOCK / 2 from the config's BLOCK (32: 16)");
	blk_const block64 = {.name = "BLOCK", .i = 64};
	blk_launch_options o64 = {.consts = &block64, .n_consts = 1};
	st = blk_launch(tuned, targs, 2, &o64);
	blk_copy_from_device(ctx, host, out, sizeof host);
	expect(st == BLK_SUCCESS && host[0] == 64 * 1000 + 32 && host[99] == 64 * 1000 + 32,
	       "BLOCK = 64 given: HALF computed from it (32)");

	/* errors */
	blk_arg bargs[1] = {blk_arg_ptr(out)};
	st = blk_launch(bad, bargs, 1, NULL);
	expect(st != BLK_SUCCESS && strstr(blk_last_error(), "'A' uses a const that has no value yet"),
	       "a heuristic reading one computed after it: an error naming it");
	blk_compile_info info;
	st = blk_kernel_compile(k, NULL, 0, NULL, &info);
	expect(st != BLK_SUCCESS && strstr(blk_last_error(), "@heuristics computes 'EVEN' from the launch's arguments"),
	       "compiling without arguments, EVEN not given: an error that says to give it");
	blk_const both[2] = {{.name = "EVEN", .i = 1}, {.name = "SCALE", .i = 3}};
	st = blk_kernel_compile(k, NULL, 0, &(blk_launch_options){.consts = both, .n_consts = 2}, &info);
	expect(st == BLK_SUCCESS, "compiling without arguments with EVEN and SCALE given");

	blk_free(ctx, x);
	blk_free(ctx, out);
	blk_module_destroy(m);
	blk_context_destroy(ctx);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
