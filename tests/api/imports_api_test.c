/* Imports of source loaded through blk.h are confined (issue 27 item 10):
 * source text named by no file has no folder (the current directory is not
 * searched), include_dirs and the standard library are; "..", absolute
 * paths and links leading out of a folder are refused; "std/" is only the
 * standard library; a file that is not .tile is never read, so no message
 * shows its lines. Works in a new temporary folder, made the current one. */
#include "blk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int passed, failed;
static blk_context *ctx;
static char dir[256];
static char last_error[4096]; /* blk_last_error of the failing call (later calls reset it) */

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", last_error);
	cond ? passed++ : failed++;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Loads `import "IMP";` and a kernel calling CALL, named `name`, with the
 * include folder `inc` (or none). */
static blk_status load(const char *name, const char *imp, const char *call, const char *inc)
{
	char src[1024];
	snprintf(src, sizeof src, "import \"%s\";\nkernel k(x: *f32) {\n    store(x, %s);\n}\n", imp, call);
	const char *dirs[1] = {inc};
	blk_module_options mo = {.include_dirs = dirs, .n_include_dirs = inc ? 1 : 0};
	blk_module *m = NULL;
	blk_status st = blk_module_load_source(ctx, name, src, strlen(src), &mo, &m);
	snprintf(last_error, sizeof last_error, "%s", blk_last_error());
	if (st == BLK_SUCCESS) {
		blk_kernel *k = NULL;
		st = blk_kernel_get(m, "k", &k); /* names resolve when the kernel compiles */
		if (st == BLK_SUCCESS) {
			float x = 0;
			blk_devptr d = 0;
			st = blk_malloc(ctx, sizeof x, &d);
			if (st == BLK_SUCCESS) {
				blk_arg a[1] = {blk_arg_ptr(d)};
				blk_launch_options lo = {.grid = {1, 1, 1}};
				st = blk_launch(k, a, 1, &lo);
				snprintf(last_error, sizeof last_error, "%s", blk_last_error());
				blk_free(ctx, d);
			}
		}
		blk_module_destroy(m);
	}
	return st;
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s/blk-imports-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir) || chdir(dir) != 0 || mkdir("inc", 0700) != 0 || mkdir("std", 0700) != 0) {
		printf("cannot make a temporary folder\n0 passed, 1 failed\n");
		return 1;
	}
	write_file("helper.tile", "fn helper() -> f32 { return 2.0; }\n");
	write_file("inc/inc.tile", "fn from_inc() -> f32 { return 3.0; }\n");
	write_file("std/math.tile", "fn local_marker() -> f32 { return 1.0; }\n");
	write_file("secret", "root:x:0:0:root:/root:/bin/bash\n");
	if (symlink("../helper.tile", "inc/link.tile") != 0)
		printf("(no symbolic link made)\n");
	char inc[300], named[300], secret[300];
	snprintf(inc, sizeof inc, "%s/inc", dir);
	snprintf(named, sizeof named, "%s/main.tile", dir);
	snprintf(secret, sizeof secret, "%s/secret", dir);
	write_file(named, "");
	expect(blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ctx) == BLK_SUCCESS, "interpreter context");

	expect(load("<source>", "helper.tile", "helper()", NULL) == BLK_ERROR_SOURCE &&
	           strstr(last_error, "cannot find 'helper.tile'"),
	       "source text has no folder: a file in the current directory is not found");
	expect(load(named, "helper.tile", "helper()", NULL) == BLK_SUCCESS,
	       "source named by an existing file: its folder is searched");
	expect(load("<source>", "inc.tile", "from_inc()", inc) == BLK_SUCCESS, "include_dirs are searched");
	expect(load("<source>", "../helper.tile", "helper()", inc) == BLK_ERROR_SOURCE &&
	           strstr(last_error, "leads outside the folders imports may read"),
	       "'..' leaving an include folder is refused");
	expect(load("<source>", "link.tile", "helper()", inc) == BLK_ERROR_SOURCE &&
	           strstr(last_error, "leads outside the folders imports may read"),
	       "a link leading out of an include folder is refused");
	char abs_helper[300];
	snprintf(abs_helper, sizeof abs_helper, "%s/helper.tile", dir);
	expect(load("<source>", abs_helper, "helper()", NULL) == BLK_ERROR_SOURCE &&
	           strstr(last_error, "is absolute"),
	       "an absolute import is refused");
	expect(load("<source>", secret, "1.0", NULL) == BLK_ERROR_SOURCE &&
	           strstr(last_error, "only .tile files can be imported") && !strstr(last_error, "root:"),
	       "a file that is not .tile is refused, its lines not shown");
	expect(load(named, "std/math.tile", "local_marker()", NULL) == BLK_ERROR_SOURCE &&
	           strstr(last_error, "local_marker"),
	       "std/ is the standard library, not a std/ folder beside the file");
	expect(load(named, "std/math.tile", "relu(1.0)", NULL) == BLK_SUCCESS,
	       "std/math.tile is the standard library's");

	blk_context_destroy(ctx);
	remove("inc/link.tile");
	remove("inc/inc.tile");
	remove("std/math.tile");
	remove("helper.tile");
	remove("secret");
	remove(named);
	rmdir("inc");
	rmdir("std");
	if (chdir("/") == 0)
		rmdir(dir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
