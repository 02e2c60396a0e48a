/* layout.c: prints the sizes and field offsets of the blk.h structs that
 * bench/blkffi.py mirrors with ctypes, one "struct.field offset" per line.
 * bench/selftest.py compiles and runs it and compares every number with the
 * ctypes layout; blkffi.py asserts the same numbers at import. */
#include "blk.h"

#include <stddef.h>
#include <stdio.h>

#define SIZE(T) printf(#T " sizeof %zu\n" #T " alignof %zu\n", sizeof(T), _Alignof(T))
#define OFF(T, f) printf(#T "." #f " %zu\n", offsetof(T, f))

int main(void)
{
	SIZE(blk_arg);
	OFF(blk_arg, kind);
	OFF(blk_arg, v);
	SIZE(blk_const);
	OFF(blk_const, name);
	OFF(blk_const, is_float);
	OFF(blk_const, i);
	OFF(blk_const, f);
	OFF(blk_const, type);
	SIZE(blk_launch_options);
	OFF(blk_launch_options, grid);
	OFF(blk_launch_options, consts);
	OFF(blk_launch_options, n_consts);
	OFF(blk_launch_options, num_warps);
	OFF(blk_launch_options, num_stages);
	OFF(blk_launch_options, stream);
	OFF(blk_launch_options, threads);
	SIZE(blk_param_info);
	OFF(blk_param_info, name);
	OFF(blk_param_info, type);
	OFF(blk_param_info, kind);
	OFF(blk_param_info, is_const);
	OFF(blk_param_info, elem_bytes);
	SIZE(blk_module_options);
	OFF(blk_module_options, include_dirs);
	OFF(blk_module_options, n_include_dirs);
	OFF(blk_module_options, defines);
	OFF(blk_module_options, n_defines);
	SIZE(blk_compile_info);
	OFF(blk_compile_info, ptx);
	OFF(blk_compile_info, ptx_len);
	OFF(blk_compile_info, shared_bytes);
	OFF(blk_compile_info, num_warps);
	OFF(blk_compile_info, num_stages);
	OFF(blk_compile_info, ms_parse);
	OFF(blk_compile_info, ms_irgen);
	OFF(blk_compile_info, ms_passes);
	OFF(blk_compile_info, ms_llvm);
	OFF(blk_compile_info, ms_ptx);
	OFF(blk_compile_info, ms_cubin);
	OFF(blk_compile_info, from_disk_cache);
	OFF(blk_compile_info, spill_bytes);
	OFF(blk_compile_info, warnings);
	OFF(blk_compile_info, registers);
	SIZE(blk_tune_result);
	OFF(blk_tune_result, n_configs);
	OFF(blk_tune_result, best);
	OFF(blk_tune_result, ms);
	OFF(blk_tune_result, note);
	return 0;
}
