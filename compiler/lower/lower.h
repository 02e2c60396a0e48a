/* lower/lower.h: what other folders use of the GPU back end: GPU IR to PTX
 * (or LLVM IR), LLVM IR to PTX, versions, ptxas's spill counts. The rest is
 * lower_int.h's, internal to compiler/lower. */
#ifndef BLK_LOWER_H
#define BLK_LOWER_H

#include <llvm-c/Types.h>

#include "gpu/gpu.h"

/* ---- versions (ptx.c) --------------------------------------------- */

/* "blk 0.1.0 (LLVM 19.1.7, NVPTX)". A static string; never NULL. */
BLK_API const char *blk_compiler_version(void);

/* The version of the LLVM linked into libblk, "19.1.7". A static string. */
const char *llvm_version_string(void);

/* ---- PTX emission (ptx.c) ----------------------------------------- */

/* The PTX ISA version llvm_emit_ptx uses for `arch` (e.g. 80 for "sm_90",
 * meaning .version 8.0), or 0 when `arch` is not a target it supports.
 * Supported: sm_70 sm_72 sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a. */
int llvm_ptx_isa_version(const char *arch);

/* Compiles module `m` to PTX assembly for `arch` ("sm_80", "sm_90a", ...).
 *
 * Sets the module's target triple (nvptx64-nvidia-cuda) and data layout,
 * verifies it, runs LLVM's default<O1> or default<O2> pipeline at opt_level
 * 1 or 2, the kernel pipeline at 3 (as good as default<O3> on blk's kernels,
 * a third of its cost: ptx.c), none at 0, and emits PTX. Kernels are marked as usual for NVPTX (the
 * nvvm.annotations "kernel" metadata or the ptx_kernel calling convention).
 * Safe to call from several threads at once on different modules.
 *
 * On success returns true and sets *ptx_out to a NUL-terminated string of
 * *ptx_len bytes (ptx_len may be NULL); free it with free().
 * On failure returns false and sets *err_msg (if err_msg is not NULL) to a
 * message to free with free(); *ptx_out is then NULL. */
bool llvm_emit_ptx(LLVMModuleRef m, const char *arch, int opt_level,
                   char **ptx_out, size_t *ptx_len, char **err_msg);
/* The same, timed: *ms_opt gets the milliseconds spent before code
 * generation (target machine, verifier, the optimization pipeline), *ms_emit
 * those of the code generator (either pointer may be NULL). */
bool llvm_emit_ptx_timed(LLVMModuleRef m, const char *arch, int opt_level, char **ptx_out, size_t *ptx_len,
                         char **err_msg, double *ms_opt, double *ms_emit);


/* ---- GPU code generation (lower.c and the files lower_int.h lists) ----------------------------------------------
 *
 * Tile IR to LLVM IR for NVPTX, then PTX. The kernel's parameters are its
 * runtime parameters in order: pointers as 64-bit global pointers, integers
 * narrower than 32 bits and i32/u32 as 32-bit, i64/u64 as 64-bit, f16 and bf16
 * as their 16 bits, f32 and f64 as themselves. It runs with 32 * num_warps
 * threads along x and needs `shared_bytes` of dynamic shared memory. */
bool gpu_lower_llvm(const IrFunc *f, LLVMContextRef ctx, LLVMModuleRef *out, int *shared_bytes, Diag *diag);
/* ---- resources (resources.c) ---------------------------------------------------- */

/* The largest "N bytes spill stores, M bytes spill loads" of a ptxas -v or
 * JIT info log; false when the log has none. */
bool gpu_ptxas_spills(const char *log, long *stores, long *loads);


#endif
