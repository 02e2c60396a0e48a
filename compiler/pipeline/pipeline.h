/* pipeline/pipeline.h: the compile driver, the one place that names the
 * stages of a kernel's compilation in order (compile.c), and the table of
 * passes (passes.c). Above irgen, gpu and lower; below the runtime and
 * blkc, which call blk_pipeline_run. */
#ifndef BLK_PIPELINE_H
#define BLK_PIPELINE_H

#include "irgen/irgen.h"
#include "gpu/gpu.h"

/* ---- the passes (passes.c) ------------------------------------------------ */

/* blk's passes: the shape-level ones (ir/) and the GPU ones (gpu/). */
const IrPassTable *pipeline_pass_table(void);
const IrPass *pipeline_pass_find(const char *name);
/* ir_run_pass_table over blk's passes (pipeline NULL: IR_DEFAULT_PIPELINE). */
bool pipeline_run_passes(IrFunc *f, const char *pipeline, const char *dump_after, StrBuf *dump, Diag *diag);

/* ---- the driver (compile.c) ---------------------------------------------- */

/* The stages, in the order they run. */
typedef enum {
	STAGE_IRGEN,       /* the kernel's syntax tree to tile IR (irgen_kernel), then the caller's prepare */
	STAGE_TILE_PASSES, /* canonicalize, cse, dce (or the pipeline asked for) */
	STAGE_TARGET,      /* the GPU target (ir_set_target) and the TMA plan (ir_tma_plan) */
	STAGE_GPU_PASSES,  /* IR_GPU_PIPELINE: tile IR to GPU IR */
	STAGE_LOWER,       /* GPU IR to LLVM IR, and LLVM's optimization when PTX follows */
	STAGE_PTX,         /* LLVM IR to PTX (the NVPTX code generator) */
	STAGE_COUNT
} PipelineStage;
/* The cubin is the caller's: the runtime hands the PTX to the driver's
 * JIT (cuModuleLoadDataEx), blkc runs ptxas. */

typedef struct PipelineRequest {
	PipelineStage from, to;  /* the stages run, from..to */
	/* STAGE_IRGEN */
	Module *mod;
	Node *kernel;
	const IrgenOptions *irgen;
	Arena *arena;            /* the IR's */
	/* after irgen (before the tile passes): what the caller knows of the
	 * arguments (specialization, blkc's --assume); false: an error,
	 * reported to diag, or NULL */
	bool (*prepare)(IrFunc *f, void *user, Diag *diag);
	void *user;
	/* later stages start from the IR of an earlier run */
	IrFunc *f;
	/* STAGE_TILE_PASSES: the pipeline (NULL: IR_DEFAULT_PIPELINE), and the
	 * IR after a pass (or "all") appended to dump */
	const char *passes;
	const char *dump_after;
	StrBuf *dump;
	/* the target ("sm_90a"): set before the tile passes too when given
	 * there, as the GPU passes a test names choose by it */
	const char *arch;
} PipelineRequest;

typedef struct PipelineResult {
	IrFunc *f;
	/* STAGE_LOWER or STAGE_PTX last: LLVM IR or PTX text (free() it) */
	char *text;
	size_t len;
	/* from lowering: the kernel's parameters (its runtime ones, then
	 * n_tmaps tensor maps of 128 bytes) and the bytes of each, the
	 * threads of a program (.maxntid), the dynamic shared memory */
	int n_params, n_tmaps;
	int *param_bytes; /* n_params of them, in the IR's arena */
	int threads;
	int shared_bytes;
	/* milliseconds of each stage run (LLVM's optimization counts in STAGE_LOWER) */
	double ms[STAGE_COUNT];
} PipelineResult;

/* Runs stages req->from..req->to. On success fills *out (zeroed first);
 * on failure reports to diag, frees what it made and returns false.
 * Exported for blkc, which reaches LLVM only through libblk.so. */
BLK_API bool blk_pipeline_run(const PipelineRequest *req, PipelineResult *out, Diag *diag);

#endif
