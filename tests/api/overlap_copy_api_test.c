/* Copies on the interpreter whose host range overlaps the buffer itself
 * (a blk_devptr there is a host address): the result is memmove's, both
 * ways, both directions of overlap (under ASan, memcpy of overlapping
 * ranges is reported as memcpy-param-overlap: make SANITIZE=1 runs this). */
#include "blk.h"

#include <stdint.h>
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

enum { N = 4096, SHIFT = 40 };

/* buf and want both 0, 1, 2, ...; want then moved as memmove does. */
static void fill(unsigned char *buf, unsigned char *want)
{
	for (int i = 0; i < N; i++)
		buf[i] = want[i] = (unsigned char)(i * 7 + 3);
}

int main(void)
{
	blk_context *ctx = NULL;
	if (blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ctx) != BLK_SUCCESS) {
		printf("FAIL an interpreter context: %s\n0 passed, 1 failed\n", blk_last_error());
		return 1;
	}
	blk_devptr d = 0;
	expect(blk_malloc(ctx, N, &d) == BLK_SUCCESS, "a buffer of 4096 bytes");
	unsigned char *buf = (unsigned char *)(uintptr_t)d, want[N];
	size_t len = N - SHIFT;

	fill(buf, want);
	memmove(want + SHIFT, want, len);
	expect(blk_copy_to_device(ctx, d + SHIFT, buf, len) == BLK_SUCCESS && memcmp(buf, want, N) == 0,
	       "blk_copy_to_device onto itself, 40 bytes up: memmove's result");
	fill(buf, want);
	memmove(want, want + SHIFT, len);
	expect(blk_copy_to_device(ctx, d, buf + SHIFT, len) == BLK_SUCCESS && memcmp(buf, want, N) == 0,
	       "blk_copy_to_device onto itself, 40 bytes down: memmove's result");
	fill(buf, want);
	memmove(want + SHIFT, want, len);
	expect(blk_copy_from_device(ctx, buf + SHIFT, d, len) == BLK_SUCCESS && memcmp(buf, want, N) == 0,
	       "blk_copy_from_device onto itself, 40 bytes up: memmove's result");
	fill(buf, want);
	memmove(want, want + SHIFT, len);
	expect(blk_copy_from_device(ctx, buf, d + SHIFT, len) == BLK_SUCCESS && memcmp(buf, want, N) == 0,
	       "blk_copy_from_device onto itself, 40 bytes down: memmove's result");
	fill(buf, want);
	expect(blk_copy_to_device(ctx, d, buf, N) == BLK_SUCCESS && memcmp(buf, want, N) == 0,
	       "a copy of the whole buffer onto itself: unchanged");
	blk_context_destroy(ctx);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
