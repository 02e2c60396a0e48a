/* The C API's robustness through blk.h: inputs that are not regular files,
 * NULL and inconsistent options, unknown const names, grids too large. */
#include "blk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static int has(const char *text) { return strstr(blk_last_error(), text) != NULL; }

static const char *source =
	"kernel scale(x: *f32, n: i32, BLOCK: const i32 = 64) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, load(x + offs, mask = offs < n) * 2.0, mask = offs < n);\n"
	"}\n";

static void bad_options(blk_context *ctx)
{
	blk_module *m = NULL;
	blk_const unnamed = {.name = NULL, .i = 64};
	blk_module_options o1 = {.defines = &unnamed, .n_defines = 1};
	expect(blk_module_load_source(ctx, "s.tile", source, strlen(source), &o1, &m) == BLK_ERROR_INVALID_ARGUMENT &&
	           !m && has("defines[0].name is NULL"), "a define with a NULL name: INVALID_ARGUMENT naming it");
	blk_module_options o2 = {.defines = NULL, .n_defines = 2};
	expect(blk_module_load_source(ctx, "s.tile", source, strlen(source), &o2, &m) == BLK_ERROR_INVALID_ARGUMENT &&
	           has("n_defines is 2 and opt->defines is NULL"), "n_defines > 0 with defines NULL: INVALID_ARGUMENT");
	blk_module_options o3 = {.include_dirs = NULL, .n_include_dirs = 1};
	expect(blk_module_load_source(ctx, "s.tile", source, strlen(source), &o3, &m) == BLK_ERROR_INVALID_ARGUMENT &&
	           has("n_include_dirs is 1 and opt->include_dirs is NULL"),
	       "n_include_dirs > 0 with include_dirs NULL: INVALID_ARGUMENT");
	const char *dirs[1] = {NULL};
	blk_module_options o4 = {.include_dirs = dirs, .n_include_dirs = 1};
	expect(blk_module_load_source(ctx, "s.tile", source, strlen(source), &o4, &m) == BLK_ERROR_INVALID_ARGUMENT &&
	           has("include_dirs[0] is NULL"), "a NULL include dir: INVALID_ARGUMENT");

	expect(blk_module_load_source(ctx, "s.tile", source, strlen(source), NULL, &m) == BLK_SUCCESS, "a module");
	blk_kernel *k = NULL;
	blk_kernel_get(m, NULL, &k);
	blk_devptr dx;
	blk_malloc(ctx, 256 * sizeof(float), &dx);
	blk_arg args[2] = {blk_arg_ptr(dx), blk_arg_int(256)};
	blk_launch_options l1 = {.consts = &unnamed, .n_consts = 1};
	expect(blk_launch(k, args, 2, &l1) == BLK_ERROR_INVALID_ARGUMENT && has("consts[0].name is NULL"),
	       "a launch const with a NULL name: INVALID_ARGUMENT naming it");
	/* the same launch again: the remembered request must not hide it */
	blk_const block = {.name = "BLOCK", .i = 32};
	blk_launch_options ok1 = {.consts = &block, .n_consts = 1};
	expect(blk_launch(k, args, 2, &ok1) == BLK_SUCCESS, "a launch with BLOCK = 32");
	blk_launch_options l2 = {.consts = NULL, .n_consts = 1};
	expect(blk_launch(k, args, 2, &l2) == BLK_ERROR_INVALID_ARGUMENT && has("n_consts is 1 and opt->consts is NULL"),
	       "n_consts > 0 with consts NULL (after a launch of one const): INVALID_ARGUMENT");
	blk_const typo = {.name = "BLOKC", .i = 32};
	blk_launch_options l3 = {.consts = &typo, .n_consts = 1};
	expect(blk_launch(k, args, 2, &l3) == BLK_ERROR_SOURCE && has("kernel 'scale' has no const parameter 'BLOKC'"),
	       "an unknown launch const: BLK_ERROR_SOURCE naming it");
	expect(blk_kernel_compile(k, NULL, 0, &l3, NULL) == BLK_ERROR_SOURCE && has("no const parameter 'BLOKC'"),
	       "... blk_kernel_compile too");
	double ms;
	expect(blk_time_launch(k, args, 2, &l2, 1, &ms) == BLK_ERROR_INVALID_ARGUMENT, "... blk_time_launch too");
	expect(blk_autotune(k, args, 2, &l1, NULL) == BLK_ERROR_INVALID_ARGUMENT, "... blk_autotune too");
	blk_const warps = {.name = "num_warps", .i = 2};
	blk_launch_options l4 = {.consts = &warps, .n_consts = 1};
	expect(blk_launch(k, args, 2, &l4) == BLK_SUCCESS, "num_warps in consts is still accepted");
	blk_free(ctx, dx);
	blk_module_destroy(m);
}

static void grid_limits(blk_context *ctx)
{
	blk_module *m = NULL;
	blk_module_load_source(ctx, "s.tile", source, strlen(source), NULL, &m);
	blk_kernel *k = NULL;
	blk_kernel_get(m, NULL, &k);
	blk_devptr dx;
	blk_malloc(ctx, 256 * sizeof(float), &dx);
	blk_arg args[2] = {blk_arg_ptr(dx), blk_arg_int(0)};
	blk_launch_options huge = {.grid = {65535, 65535, 65535}};
	alarm(20); /* accepted, it would run for hours */
	expect(blk_launch(k, args, 2, &huge) == BLK_ERROR_INVALID_ARGUMENT &&
	           has("the grid (65535, 65535, 65535) of 'scale'") && has("more than the interpreter runs (16777216)"),
	       "a grid of 65535^3 on the interpreter: refused at once, naming the grid and the limit");
	blk_launch_options tall = {.grid = {1, 70000, 1}};
	expect(blk_launch(k, args, 2, &tall) == BLK_ERROR_INVALID_ARGUMENT && has("along axis 1 (65535)"),
	       "70000 programs along y: refused, naming the axis limit");
	double ms;
	expect(blk_time_launch(k, args, 2, &huge, 1, &ms) == BLK_ERROR_INVALID_ARGUMENT, "... blk_time_launch too");
	alarm(0);
	blk_launch_options fine = {.grid = {4096, 16, 1}};
	expect(blk_launch(k, args, 2, &fine) == BLK_SUCCESS, "a grid of 65536 programs (n = 0: each does nothing) runs");
	blk_free(ctx, dx);
	blk_module_destroy(m);
}

static void fifo_input(blk_context *ctx)
{
	char dir[] = "/tmp/blk_robust_XXXXXX";
	if (!mkdtemp(dir)) {
		expect(0, "a temporary folder");
		return;
	}
	char path[64];
	snprintf(path, sizeof path, "%s/fifo.tile", dir);
	expect(mkfifo(path, 0600) == 0, "a FIFO");
	alarm(20); /* a hang kills the test: no counts, a failure */
	blk_module *m = (blk_module *)1;
	blk_status st = blk_module_load_file(ctx, path, NULL, &m);
	alarm(0);
	expect(st != BLK_SUCCESS && m == NULL && has(path) && has("is not a regular file"),
	       "blk_module_load_file on a FIFO: refused at once, naming the path");
	unlink(path);
	st = blk_module_load_file(ctx, dir, NULL, &m);
	expect(st != BLK_SUCCESS && has("is not a regular file"), "blk_module_load_file on a folder: refused");
	rmdir(dir);
}

int main(void)
{
	blk_context *ctx;
	expect(blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ctx) == BLK_SUCCESS, "interpreter context");
	fifo_input(ctx);
	bad_options(ctx);
	grid_limits(ctx);
	blk_context_destroy(ctx);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
