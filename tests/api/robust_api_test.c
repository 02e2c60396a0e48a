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
	blk_context_destroy(ctx);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
