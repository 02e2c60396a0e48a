/* The CUDA driver layer's pure parts (runtime/driver.c) and the runtime's
 * use of them, no driver needed: error names and descriptions, messages,
 * what an error means to blk.h (error.c), the PTX target for a compute
 * capability (jit.c), and what the compile driver says of a kernel's
 * parameters and threads (pipeline/compile.c), which the runtime keeps
 * beside the cubin. */
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	cond ? passed++ : failed++;
}

static int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* The compile driver's account of a kernel (what the runtime keeps beside
 * the cubin instead of reading the PTX back): "sizes;threads;smem", with
 * the PTX's .maxntid checked against the threads. */
static const char *compiled(const char *src_text, int num_warps, const char *arch)
{
	static char out[256];
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	Source src;
	source_from_string(&src, "driver.tile", src_text, strlen(src_text), &arena);
	ModuleSet set = {.arena = &arena, .diag = &diag, .stdlib_dir = "stdlib"};
	Module *m = module_load_source(&set, &src);
	Node *k = m ? irgen_find_kernel(m, NULL, &diag) : NULL;
	IrgenOptions io = {.num_warps = num_warps};
	PipelineRequest req = {.from = STAGE_IRGEN, .to = STAGE_PTX, .mod = m, .kernel = k, .irgen = &io,
	                       .arena = &arena, .arch = arch};
	PipelineResult res;
	snprintf(out, sizeof out, "error");
	if (k && blk_pipeline_run(&req, &res, &diag)) {
		char want[64];
		snprintf(want, sizeof want, ".maxntid %d, 1, 1", res.threads);
		out[0] = '\0';
		for (int i = 0; i < res.n_params; i++)
			snprintf(out + strlen(out), sizeof out - strlen(out), "%s%d", i ? "," : "", res.param_bytes[i]);
		snprintf(out + strlen(out), sizeof out - strlen(out), ";%d;%d%s", res.threads, res.shared_bytes,
		         res.text && strstr(res.text, want) ? "" : " (not the PTX's .maxntid)");
		free(res.text);
	} else if (diag.out.data) {
		snprintf(out, sizeof out, "error: %s", diag.out.data);
	}
	diag_free(&diag);
	arena_free(&arena);
	return out;
}

int main(void)
{
	/* names and descriptions */
	expect(streq(cuda_error_name(0), "CUDA_SUCCESS"), "0 is CUDA_SUCCESS");
	expect(streq(cuda_error_name(2), "CUDA_ERROR_OUT_OF_MEMORY") && streq(cuda_error_string(2), "out of memory"),
	       "2 is CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
	expect(streq(cuda_error_name(700), "CUDA_ERROR_ILLEGAL_ADDRESS"), "700 is CUDA_ERROR_ILLEGAL_ADDRESS");
	expect(streq(cuda_error_name(709), "CUDA_ERROR_CONTEXT_IS_DESTROYED"), "709 is CUDA_ERROR_CONTEXT_IS_DESTROYED");
	expect(streq(cuda_error_name(710), "CUDA_ERROR_ASSERT"), "710 is CUDA_ERROR_ASSERT");
	expect(streq(cuda_error_name(719), "CUDA_ERROR_LAUNCH_FAILED"), "719 is CUDA_ERROR_LAUNCH_FAILED");
	expect(streq(cuda_error_name(218), "CUDA_ERROR_INVALID_PTX"), "218 is CUDA_ERROR_INVALID_PTX");
	expect(streq(cuda_error_name(222), "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"), "222 is CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
	expect(streq(cuda_error_name(100), "CUDA_ERROR_NO_DEVICE"), "100 is CUDA_ERROR_NO_DEVICE");
	expect(streq(cuda_error_name(34), "CUDA_ERROR_STUB_LIBRARY"), "34 is CUDA_ERROR_STUB_LIBRARY");
	expect(streq(cuda_error_name(917), "CUDA_ERROR_STREAM_DETACHED"), "917 is CUDA_ERROR_STREAM_DETACHED");
	expect(streq(cuda_error_name(999), "CUDA_ERROR_UNKNOWN"), "999 is CUDA_ERROR_UNKNOWN");
	expect(cuda_error_name(9) == NULL && cuda_error_string(12345) == NULL && cuda_error_name(-1) == NULL,
	       "codes not in cuda.h have no name");
	/* every code from 0 to 1000 with a name has a description and a name that is an identifier */
	int named = 0, bad = 0;
	for (int c = 0; c <= 1000; c++) {
		const char *n = cuda_error_name(c);
		if (!n)
			continue;
		named++;
		bad += !cuda_error_string(c) || strncmp(n, "CUDA_", 5) != 0 || strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") != strlen(n);
	}
	char what[128];
	snprintf(what, sizeof what, "%d codes named, each with a description (the table is sorted)", named);
	expect(named >= 100 && bad == 0, what);

	/* messages */
	char buf[256];
	expect(streq(cuda_describe(NULL, 2, "cuMemAlloc_v2", buf, sizeof buf),
	             "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"),
	       "a message names the call, the error and its description");
	expect(streq(cuda_describe(NULL, 12345, "cuLaunchKernel", buf, sizeof buf), "cuLaunchKernel failed: CUDA error 12345"),
	       "an unknown code is given as a number");
	cuda_describe(NULL, 2, "cuMemAlloc_v2", buf, 20);
	expect(strlen(buf) == 19, "a message is cut to the buffer");

	/* what errors mean to blk.h */
	expect(cuda_blk_status(0) == BLK_SUCCESS, "success is BLK_SUCCESS");
	expect(cuda_blk_status(2) == BLK_ERROR_OUT_OF_MEMORY, "out of memory is BLK_ERROR_OUT_OF_MEMORY");
	expect(cuda_blk_status(100) == BLK_ERROR_NO_DEVICE && cuda_blk_status(3) == BLK_ERROR_NO_DEVICE &&
	           cuda_blk_status(34) == BLK_ERROR_NO_DEVICE && cuda_blk_status(222) == BLK_ERROR_NO_DEVICE,
	       "no device, not initialized, a stub driver, PTX too new for the driver: BLK_ERROR_NO_DEVICE");
	expect(cuda_blk_status(700) == BLK_ERROR_LAUNCH && cuda_blk_status(710) == BLK_ERROR_LAUNCH &&
	           cuda_blk_status(218) == BLK_ERROR_LAUNCH && cuda_blk_status(12345) == BLK_ERROR_LAUNCH,
	       "faults, bad PTX and unknown codes: BLK_ERROR_LAUNCH");
	expect(cuda_error_is_sticky(700) && cuda_error_is_sticky(710) && cuda_error_is_sticky(719) &&
	           !cuda_error_is_sticky(2) && !cuda_error_is_sticky(1) && !cuda_error_is_sticky(701),
	       "faults are sticky; out of memory, bad values and too many resources are not");

	/* targets */
	struct {
		int major, minor;
		const char *arch;
	} archs[] = {{9, 0, "sm_90a"}, {8, 0, "sm_80"}, {8, 6, "sm_86"}, {8, 7, "sm_87"}, {8, 9, "sm_89"},
	             {7, 0, "sm_70"}, {7, 5, "sm_75"}, {10, 0, "sm_90"}, {12, 0, "sm_90"}, {8, 8, "sm_87"}};
	for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
		char arch[16];
		snprintf(what, sizeof what, "compute capability %d.%d runs %s", archs[i].major, archs[i].minor, archs[i].arch);
		expect(cuda_arch_for(archs[i].major, archs[i].minor, arch, sizeof arch) && streq(arch, archs[i].arch), what);
	}
	char arch[16] = "x";
	expect(!cuda_arch_for(6, 1, arch, sizeof arch) && arch[0] == '\0', "compute capability 6.1 has no target");

	/* the compile driver's metadata */
	const char *add = "kernel add(x: *f32, y: *f32, out: *f32, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	                  "    let o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	                  "    store(out + o, load(x + o, mask = o < n) + load(y + o, mask = o < n), mask = o < n);\n}\n";
	const char *got = compiled(add, 0, "sm_90");
	expect(streq(got, "8,8,8,4;128;0"), "the driver: three pointers and an i32, 128 threads, no shared memory");
	if (!streq(got, "8,8,8,4;128;0"))
		printf("  got %s\n", got);
	expect(streq(compiled(add, 2, "sm_80"), "8,8,8,4;64;0"), "the driver: num_warps 2 runs 64 threads");
	const char *kinds = "kernel k(a: i8, b: i16, h: f16, c: f32, d: f64, p: *u8, e: u64, g: bf16) {\n"
	                    "    if program_id(0) == 0 { store(p, (a + b + e + h + c + d + g) as u8); }\n}\n";
	got = compiled(kinds, 1, "sm_90");
	expect(streq(got, "4,4,2,4,8,8,8,2;32;0"),
	       "the driver: narrow integers take 4 bytes, f16 and bf16 2, the rest their size");
	if (!streq(got, "4,4,2,4,8,8,8,2;32;0"))
		printf("  got %s\n", got);
	expect(!strncmp(compiled(add, 0, "sm_12"), "error: ", 7), "the driver: an unknown target is an error");

	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
