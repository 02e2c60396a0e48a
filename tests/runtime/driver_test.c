/* The CUDA driver layer's pure parts (runtime/driver.c) and the runtime's
 * use of them, no driver needed: error names and descriptions, messages,
 * what an error means to blk.h (error.c), the PTX target for a compute
 * capability and the parameters of a PTX entry (jit.c). */
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

/* ptx_entry_params into a string "4,8,2" (or "-1") */
static const char *params_of(const char *ptx, const char *name)
{
	static char out[256];
	int sizes[16];
	int n = rt_ptx_entry_params(ptx, strlen(ptx), name, sizes, 16);
	if (n < 0)
		return "-1";
	out[0] = '\0';
	for (int i = 0; i < n && i < 16; i++)
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%d", i ? "," : "", sizes[i]);
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

	/* PTX entries */
	const char *llvm = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.0\n.target sm_90\n.address_size 64\n\n"
	                   "\t// .globl\tvector_add\n\n.visible .entry vector_add(\n"
	                   "\t.param .u64 vector_add_param_0,\n\t.param .u64 vector_add_param_1,\n"
	                   "\t.param .u64 vector_add_param_2,\n\t.param .u32 vector_add_param_3\n)\n"
	                   ".maxntid 128, 1, 1\n{\n\tret;\n}\n";
	expect(streq(params_of(llvm, "vector_add"), "8,8,8,4"), "an LLVM entry: three pointers and an i32");
	expect(streq(params_of(llvm, "vector"), "-1") && streq(params_of(llvm, "vector_add_param_0"), "-1") &&
	           streq(params_of(llvm, "other"), "-1"), "another name finds no entry");
	const char *kinds = ".entry k(.param .u8 a, .param .s16 b, .param .b16 h, .param .f32 c,\n"
	                    "  .param .f64 d, .param .u64 .ptr .global .align 16 p, .param .align 8 .b8 agg[24],\n"
	                    "  .param .b32 e) { ret; }";
	expect(streq(params_of(kinds, "k"), "1,2,2,4,8,8,24,4"),
	       "sizes of 8-, 16-, 32- and 64-bit types, a qualified pointer and a byte array");
	expect(streq(params_of(".visible .entry empty()\n{\n\tret;\n}\n", "empty"), ""), "an entry without parameters");
	const char *two = ".visible .func f(.param .u32 x) { ret; }\n.visible .entry f2(.param .u32 a)\n{}\n"
	                  ".entry /* c */ f // x\n ( // first\n .param .u64 a, /* b */ .param .u16 b )\n{}\n";
	expect(streq(params_of(two, "f"), "8,2"), "a .func of the same name is no entry; comments are skipped");
	expect(streq(params_of(two, "f2"), "4"), "a longer name is another entry");
	expect(streq(params_of(".entry bad(.param a)", "bad"), "-1") &&
	           streq(params_of(".entry cut(.param .u32 a,", "cut"), "-1"), "an unreadable list is -1");
	/* the threads a program runs: .maxntid's x (a producer warpgroup more with warp specialization) */
	const char *ws = ".visible .entry k(.param .u32 a)\n.maxntid 384, 1, 1\n.maxnreg 168\n{ ret; }";
	expect(rt_ptx_threads(ws, strlen(ws)) == 384, ".maxntid 384 read as 384 threads");
	expect(rt_ptx_threads(kinds, strlen(kinds)) == 0 && rt_ptx_threads(NULL, 0) == 0, "no .maxntid: 0");
	expect(rt_ptx_threads(ws, 12) == 0, "a .maxntid past the length is not read");
	expect(rt_ptx_threads(".maxntid 99999, 1, 1", 20) == 0 && rt_ptx_threads(".maxntid x", 10) == 0,
	       "a count past 1024, or none, is 0");
	expect(rt_ptx_threads(".maxntid 2", 9) == 0, "digits past the length are not read");
	int few[2];
	expect(rt_ptx_entry_params(kinds, strlen(kinds), "k", few, 2) == 8 && few[0] == 1 && few[1] == 2,
	       "the count is returned in full when fewer sizes fit");

	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
