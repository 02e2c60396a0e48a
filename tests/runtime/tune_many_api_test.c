/* An @autotune kernel of more configs than a blk_tune_result holds
 * (BLK_TUNE_MAX_CONFIGS, 64), on the stand-in driver: 70 configs whose
 * last is the fastest. blk_autotune and blk_autotune_devices with a result
 * refuse it, naming the count and the limit (before, blk_autotune
 * answered best = 69 with 64 slots); with result NULL, and at a launch,
 * it is tuned, and the fastest (the 70th) runs. */
#include "blk.h"
#include "fake_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static int has(const char *s) { return strstr(blk_last_error(), s) != NULL; }

enum { CONFIGS = 70 };

int main(void)
{
	char self[4096], path[4200];
	FakeCuda fc;
	if (!fake_cuda_open(&fc, self, sizeof self, path, sizeof path))
		return 1;
	setenv("BLK_CACHE", "0", 1);
	/* 69 configs of BLOCK 64 (told apart by TAG), then BLOCK 1024: on the
	 * stand-in's clock the fewest programs are the fastest */
	static char source[8192];
	size_t n = (size_t)snprintf(source, sizeof source, "@autotune(key = [n], configs = [");
	for (int c = 0; c < CONFIGS; c++)
		n += (size_t)snprintf(source + n, sizeof source - n, "%s{BLOCK = %d, TAG = %d}", c ? ", " : "",
		                      c == CONFIGS - 1 ? 1024 : 64, c);
	snprintf(source + n, sizeof source - n,
	         "])\nkernel many(x: *f32, n: i32, BLOCK: const i32, TAG: const i32) grid(cdiv(n, BLOCK)) {\n"
	         "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	         "    store(x + offs, load(x + offs, mask = offs < n) + 1.0, mask = offs < n);\n"
	         "}\n");
	blk_context *ctx = NULL;
	blk_module *m = NULL;
	blk_kernel *k = NULL;
	if (blk_context_create(BLK_BACKEND_GPU, 0, &ctx) != BLK_SUCCESS ||
	    blk_module_load_source(ctx, "many.tile", source, strlen(source), NULL, &m) != BLK_SUCCESS ||
	    blk_kernel_get(m, "many", &k) != BLK_SUCCESS) {
		printf("FAIL a kernel of 70 configs on the stand-in: %s\n0 passed, 1 failed\n", blk_last_error());
		return 1;
	}
	blk_devptr x = 0;
	blk_malloc(ctx, 1 << 20, &x);
	blk_arg args[2] = {blk_arg_ptr(x), blk_arg_int(1 << 18)};
	blk_tune_result *r = malloc(sizeof *r);
	memset(r, 0x5a, sizeof *r);
	int launches = fc.launches();
	blk_status st = blk_autotune(k, args, 2, NULL, r);
	char what[300];
	snprintf(what, sizeof what, "blk_autotune with a result: INVALID_ARGUMENT naming 70 configs and the limit 64 "
	                            "(status %d, best %d)", (int)st, r->best);
	expect(st == BLK_ERROR_INVALID_ARGUMENT && has("70 @autotune configs") && has("at most 64") && has("'many'"), what);
	expect(fc.launches() == launches, "... nothing launched");
	int dev = 0;
	expect(blk_autotune_devices(k, args, 2, NULL, &dev, 1, r) == BLK_ERROR_INVALID_ARGUMENT &&
	           has("blk_autotune_devices") && has("70 @autotune configs"),
	       "blk_autotune_devices with a result: the same");
	expect(blk_autotune(k, args, 2, NULL, NULL) == BLK_SUCCESS, "blk_autotune with result NULL: tuned");
	expect(blk_launch(k, args, 2, NULL) == BLK_SUCCESS && fake_last(&fc).grid[0] == (1 << 18) / 1024,
	       "... a launch then runs the fastest, the 70th (BLOCK 1024)");
	blk_module_destroy(m);
	blk_module_load_source(ctx, "many.tile", source, strlen(source), NULL, &m);
	blk_kernel_get(m, "many", &k);
	expect(blk_launch(k, args, 2, NULL) == BLK_SUCCESS && fake_last(&fc).grid[0] == (1 << 18) / 1024,
	       "a first launch of it tunes all 70 and runs the 70th");
	free(r);
	blk_module_destroy(m);
	blk_context_destroy(ctx);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
