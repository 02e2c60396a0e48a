/* blk_check_source and blk_last_error through libblk.so. */
#include "blk.h"

#include <stdio.h>
#include <string.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	cond ? passed++ : failed++;
}

int main(void)
{
	const char *good = "kernel k(x: *f32, n: i32) {\n    store(x, load(x));\n}\n";
	expect(blk_check_source("good.tile", good, strlen(good)) == BLK_SUCCESS, "a valid kernel checks");
	expect(strcmp(blk_last_error(), "") == 0, "success leaves no error message");

	const char *bad = "kernel k(n: i32) {\n    let a = ;\n}\n";
	expect(blk_check_source("bad.tile", bad, strlen(bad)) == BLK_ERROR_SOURCE, "a syntax error is BLK_ERROR_SOURCE");
	expect(strstr(blk_last_error(), "bad.tile:2:13: error: expected expression, found ';'") != NULL,
	       "the message names file, line, column and problem");
	expect(strstr(blk_last_error(), "    let a = ;\n") != NULL && strstr(blk_last_error(), "^") != NULL,
	       "the message shows the source line and a caret");

	const char *warn = "kernel k(n: i32) {\n    n + 1;\n}\n";
	expect(blk_check_source("warn.tile", warn, strlen(warn)) == BLK_SUCCESS, "warnings alone succeed");

	expect(blk_check_source(NULL, good, strlen(good)) == BLK_ERROR_INVALID_ARGUMENT, "NULL name is rejected");
	expect(strstr(blk_last_error(), "name is NULL") != NULL, "NULL name is named in the message");
	expect(blk_check_source("x.tile", NULL, 5) == BLK_ERROR_INVALID_ARGUMENT, "NULL text is rejected");
	expect(blk_check_source("empty.tile", NULL, 0) == BLK_SUCCESS, "an empty source is valid");

	const char nul[] = "kernel k() {}\0garbage";
	expect(blk_check_source("nul.tile", nul, sizeof nul - 1) == BLK_ERROR_SOURCE, "an embedded NUL is an error");
	expect(strstr(blk_last_error(), "null character") != NULL, "the NUL is reported as such");

	expect(strcmp(blk_version(), "") != 0, "blk_version is not empty");
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
