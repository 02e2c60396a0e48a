/* Choosing a backend through blk.h where there is no CUDA driver: a GPU
 * context is BLK_ERROR_NO_DEVICE naming libcuda, BLK_BACKEND_AUTO falls
 * back to the interpreter silently, BLK_BACKEND decides for AUTO.
 *
 * "No driver" is made certain, on any machine, by BLK_CUDA_DRIVER naming a
 * file that does not exist; a child process also tries the default
 * libcuda.so.1 and reports what it found. */
#include "blk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

/* In a child with the default driver path: 0 no driver (and the message
 * named libcuda.so.1), 1 a driver that gave a GPU context, 2 a driver
 * without a usable device, 3 something else. */
static int default_driver_child(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		unsetenv("BLK_CUDA_DRIVER");
		unsetenv("BLK_BACKEND");
		blk_context *ctx = NULL;
		blk_status st = blk_context_create(BLK_BACKEND_GPU, 0, &ctx);
		if (st == BLK_SUCCESS)
			_exit(1);
		if (st == BLK_ERROR_NO_DEVICE &&
		    strstr(blk_last_error(), "no CUDA driver found (libcuda.so.1: ") != NULL)
			_exit(0);
		if (st == BLK_ERROR_NO_DEVICE) {
			fprintf(stderr, "     (a driver, no usable device: %s)\n", blk_last_error());
			_exit(2);
		}
		_exit(3);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 3;
	return WEXITSTATUS(status);
}

int main(void)
{
	int child = default_driver_child();
	if (child == 0)
		expect(1, "no libcuda.so.1 here: a GPU context names it (\"no CUDA driver found (libcuda.so.1: ...)\")");
	else
		expect(child == 1 || child == 2, child == 1 ? "libcuda.so.1 is installed here and gave a GPU context"
		                                            : "libcuda.so.1 is installed here, without a usable device");

	setenv("BLK_CUDA_DRIVER", "/nonexistent/blk-test/libcuda.so.1", 1);
	unsetenv("BLK_BACKEND");

	blk_context *ctx = (blk_context *)1;
	blk_status st = blk_context_create(BLK_BACKEND_GPU, 0, &ctx);
	expect(st == BLK_ERROR_NO_DEVICE && ctx == NULL, "BLK_BACKEND_GPU without a driver: BLK_ERROR_NO_DEVICE, no context");
	expect(strstr(blk_last_error(), "blk_context_create: no CUDA driver found (/nonexistent/blk-test/libcuda.so.1: ") !=
	           NULL, "the message says no driver was found and names the library");
	expect(strstr(blk_last_error(), "No such file or directory") != NULL, "the message carries dlopen's reason");
	const char *first = strstr(blk_last_error(), "(/nonexistent");
	expect(first && !strstr(first + 1, "(/nonexistent"), "the library is named once");

	expect(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx) == BLK_SUCCESS && ctx, "BLK_BACKEND_AUTO without a driver");
	expect(blk_context_backend(ctx) == BLK_BACKEND_INTERPRETER, "... gives the interpreter");
	expect(strcmp(blk_last_error(), "") == 0, "... silently (no error left)");
	blk_devptr p;
	expect(blk_malloc(ctx, 64, &p) == BLK_SUCCESS && blk_free(ctx, p) == BLK_SUCCESS, "... and works");
	blk_context_destroy(ctx);

	setenv("BLK_BACKEND", "gpu", 1);
	ctx = NULL;
	st = blk_context_create(BLK_BACKEND_AUTO, 0, &ctx);
	expect(st == BLK_ERROR_NO_DEVICE && !ctx && strstr(blk_last_error(), "libcuda.so.1"),
	       "BLK_BACKEND=gpu makes AUTO insist on the GPU: BLK_ERROR_NO_DEVICE naming libcuda");

	setenv("BLK_BACKEND", "interpreter", 1);
	expect(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx) == BLK_SUCCESS &&
	           blk_context_backend(ctx) == BLK_BACKEND_INTERPRETER, "BLK_BACKEND=interpreter gives the interpreter");
	blk_context_destroy(ctx);

	setenv("BLK_BACKEND", "cuda", 1);
	ctx = NULL;
	expect(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx) == BLK_ERROR_INVALID_ARGUMENT && !ctx &&
	           strstr(blk_last_error(), "BLK_BACKEND='cuda'"), "an unknown BLK_BACKEND is refused by name");

	setenv("BLK_BACKEND", "gpu", 1);
	expect(blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ctx) == BLK_SUCCESS &&
	           blk_context_backend(ctx) == BLK_BACKEND_INTERPRETER, "BLK_BACKEND decides only for AUTO");
	blk_context_destroy(ctx);
	unsetenv("BLK_BACKEND");

	ctx = NULL;
	expect(blk_context_create((blk_backend)7, 0, &ctx) == BLK_ERROR_INVALID_ARGUMENT && !ctx,
	       "an unknown backend is refused");

	/* the driver is looked for once: the same answer again */
	st = blk_context_create(BLK_BACKEND_GPU, 1, &ctx);
	expect(st == BLK_ERROR_NO_DEVICE && strstr(blk_last_error(), "no CUDA driver found"), "asking again: the same answer");

	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
