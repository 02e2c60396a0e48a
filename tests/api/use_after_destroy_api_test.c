/* BLK_DEBUG=1 turns the use of a destroyed handle (undefined in blk.h)
 * into BLK_ERROR_INVALID_ARGUMENT naming the handle's type and address: a
 * kernel after its module was destroyed, a module or context destroyed
 * twice, a context after blk_context_destroy, a handle of another type, an
 * address that is no handle. Without the record these calls read freed
 * memory (a crash, or ASan's heap-use-after-free). */
#include "blk.h"

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

/* Does the last error name `type` and the address p? */
static int names(const char *type, const void *p)
{
	char addr[64];
	snprintf(addr, sizeof addr, "%p", p);
	return strstr(blk_last_error(), type) != NULL && strstr(blk_last_error(), addr) != NULL;
}

static const char *source =
	"kernel twice(x: *f32, n: i32, BLOCK: const i32 = 64) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(x + offs, load(x + offs, mask = offs < n) * 2.0, mask = offs < n);\n"
	"}\n";

int main(void)
{
	setenv("BLK_DEBUG", "1", 1); /* read once, at the first call that asks */
	blk_context *ctx = NULL;
	blk_module *m = NULL;
	blk_kernel *k = NULL;
	if (blk_context_create(BLK_BACKEND_INTERPRETER, 0, &ctx) != BLK_SUCCESS ||
	    blk_module_load_source(ctx, "t.tile", source, strlen(source), NULL, &m) != BLK_SUCCESS ||
	    blk_kernel_get(m, NULL, &k) != BLK_SUCCESS) {
		printf("FAIL a module on the interpreter: %s\n0 passed, 1 failed\n", blk_last_error());
		return 1;
	}
	blk_devptr x = 0;
	blk_malloc(ctx, 1024, &x);
	blk_arg args[2] = {blk_arg_ptr(x), blk_arg_int(256)};
	expect(blk_launch(k, args, 2, NULL) == BLK_SUCCESS && blk_kernel_num_params(k) == 3,
	       "live handles work as without BLK_DEBUG");

	/* ---- a kernel after its module */
	blk_module_destroy(m);
	expect(blk_launch(k, args, 2, NULL) == BLK_ERROR_INVALID_ARGUMENT && names("blk_kernel", k) &&
	           strstr(blk_last_error(), "blk_launch: the blk_kernel") && strstr(blk_last_error(), "was destroyed"),
	       "blk_launch of a kernel whose module was destroyed: INVALID_ARGUMENT naming the kernel");
	blk_compile_info info;
	double ms;
	blk_tune_result r;
	blk_param_info pi;
	expect(blk_kernel_compile(k, NULL, 0, NULL, &info) == BLK_ERROR_INVALID_ARGUMENT && names("blk_kernel", k),
	       "... blk_kernel_compile too");
	expect(blk_time_launch(k, args, 2, NULL, 1, &ms) == BLK_ERROR_INVALID_ARGUMENT && names("blk_kernel", k),
	       "... blk_time_launch too");
	expect(blk_autotune(k, args, 2, NULL, &r) == BLK_ERROR_INVALID_ARGUMENT && names("blk_kernel", k),
	       "... blk_autotune too");
	expect(blk_kernel_param(k, 0, &pi) == BLK_ERROR_INVALID_ARGUMENT && names("blk_kernel", k),
	       "... blk_kernel_param too");
	expect(blk_kernel_num_params(k) == 0 && names("blk_kernel", k), "... blk_kernel_num_params: 0, the error set");
	blk_kernel *k2 = NULL;
	expect(blk_kernel_get(m, NULL, &k2) == BLK_ERROR_INVALID_ARGUMENT && names("blk_module", m) && !k2,
	       "blk_kernel_get on the destroyed module: INVALID_ARGUMENT naming the module");
	blk_module_destroy(m);
	expect(names("blk_module", m) && strstr(blk_last_error(), "blk_module_destroy"),
	       "blk_module_destroy a second time: nothing done, the error names the module");

	/* ---- new handles never take a destroyed one's address */
	blk_module *m2 = NULL;
	blk_kernel *kk = NULL;
	expect(blk_module_load_source(ctx, "t.tile", source, strlen(source), NULL, &m2) == BLK_SUCCESS &&
	           blk_kernel_get(m2, NULL, &kk) == BLK_SUCCESS && m2 != m && kk != k &&
	           blk_launch(kk, args, 2, NULL) == BLK_SUCCESS,
	       "a module loaded again: new addresses, and it launches");
	expect(blk_launch(k, args, 2, NULL) == BLK_ERROR_INVALID_ARGUMENT && names("blk_kernel", k),
	       "... while the old kernel still fails");

	/* ---- a handle of another type, an address that is none */
	expect(blk_launch((blk_kernel *)m2, args, 2, NULL) == BLK_ERROR_INVALID_ARGUMENT &&
	           strstr(blk_last_error(), "is a blk_module, not a blk_kernel"),
	       "a module passed as a kernel: INVALID_ARGUMENT saying which it is");
	int local = 0;
	expect(blk_launch((blk_kernel *)&local, args, 2, NULL) == BLK_ERROR_INVALID_ARGUMENT &&
	           strstr(blk_last_error(), "is not a blk_kernel"),
	       "an address that is no handle: INVALID_ARGUMENT");

	/* ---- a context after blk_context_destroy */
	blk_context_destroy(ctx);
	expect(blk_launch(kk, args, 2, NULL) != BLK_SUCCESS && strstr(blk_last_error(), "destroyed"),
	       "a kernel of a live module whose context was destroyed: an error, as without BLK_DEBUG");
	blk_devptr y = 0;
	expect(blk_malloc(ctx, 64, &y) == BLK_ERROR_INVALID_ARGUMENT && names("blk_context", ctx),
	       "blk_malloc on a destroyed context: INVALID_ARGUMENT naming the context");
	float host[4] = {0};
	expect(blk_copy_to_device(ctx, x, host, sizeof host) == BLK_ERROR_INVALID_ARGUMENT && names("blk_context", ctx),
	       "... blk_copy_to_device too");
	expect(blk_synchronize(ctx) == BLK_ERROR_INVALID_ARGUMENT && names("blk_context", ctx), "... blk_synchronize too");
	blk_module *m3 = NULL;
	expect(blk_module_load_source(ctx, "t.tile", source, strlen(source), NULL, &m3) == BLK_ERROR_INVALID_ARGUMENT &&
	           !m3 && names("blk_context", ctx),
	       "... blk_module_load_source too");
	expect(blk_context_backend(ctx) == BLK_BACKEND_AUTO && strcmp(blk_context_warnings(ctx), "") == 0 &&
	           strcmp(blk_context_printed(ctx), "") == 0,
	       "... blk_context_backend, _warnings, _printed: their empty answers");
	blk_context_destroy(ctx);
	expect(names("blk_context", ctx), "blk_context_destroy a second time: nothing done, the error names it");
	blk_module_destroy(m2);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
