/* compiler.h: the middle and back end of blk (tile IR, passes, lowering to
 * LLVM IR, PTX emission) and the few entry points libblk exports from it.
 *
 * Functions here are internal to libblk unless marked BLK_API: libblk.so is
 * built with -fvisibility=hidden and a version script that exports only
 * blk_* symbols. Nothing here prints or exits; errors come back as strings. */
#ifndef BLK_COMPILER_H
#define BLK_COMPILER_H

#include <stdbool.h>
#include <stddef.h>

#include <llvm-c/Types.h>

/* Marks a function that libblk.so exports (its name must start with blk_). */
#ifndef BLK_API
#define BLK_API __attribute__((visibility("default")))
#endif

/* ---- versions (llvm_ptx.c) --------------------------------------------- */

/* "blk 0.1.0 (LLVM 19.1.7, NVPTX)". A static string; never NULL. */
BLK_API const char *blk_compiler_version(void);

/* The version of the LLVM linked into libblk, "19.1.7". A static string. */
const char *llvm_version_string(void);

/* ---- PTX emission (llvm_ptx.c) ----------------------------------------- */

/* The PTX ISA version llvm_emit_ptx uses for `arch` (e.g. 80 for "sm_90",
 * meaning .version 8.0), or 0 when `arch` is not a target it supports.
 * Supported: sm_70 sm_72 sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a. */
int llvm_ptx_isa_version(const char *arch);

/* Compiles module `m` to PTX assembly for `arch` ("sm_80", "sm_90a", ...).
 *
 * Sets the module's target triple (nvptx64-nvidia-cuda) and data layout,
 * verifies it, runs LLVM's default<On> pipeline when opt_level is 1..3
 * (none at 0), and emits PTX. Kernels are marked as usual for NVPTX (the
 * nvvm.annotations "kernel" metadata or the ptx_kernel calling convention).
 * Safe to call from several threads at once on different modules.
 *
 * On success returns true and sets *ptx_out to a NUL-terminated string of
 * *ptx_len bytes (ptx_len may be NULL); free it with free().
 * On failure returns false and sets *err_msg (if err_msg is not NULL) to a
 * message to free with free(); *ptx_out is then NULL. */
bool llvm_emit_ptx(LLVMModuleRef m, const char *arch, int opt_level,
                   char **ptx_out, size_t *ptx_len, char **err_msg);

#endif
