/* pipeline/compile.c: the compile driver. One kernel from its syntax tree
 * (or from the IR of an earlier run) through the stages pipeline.h lists,
 * in order, to PTX; what lowering decided about the kernel's parameters,
 * threads and shared memory comes back with it, so that no one reads the
 * PTX text to learn it. */
#include "pipeline/pipeline.h"
#include "lower/lower.h"

#include <llvm-c/Core.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Milliseconds since *t; *t becomes now. */
static double lap(double *t)
{
	double now = now_ms(), ms = now - *t;
	*t = now;
	return ms;
}

/* Bytes of a kernel parameter of LLVM type t as PTX passes it (0: none). */
static int param_bytes(LLVMTypeRef t)
{
	switch (LLVMGetTypeKind(t)) {
	case LLVMIntegerTypeKind:
		return (int)(LLVMGetIntTypeWidth(t) + 7) / 8;
	case LLVMHalfTypeKind:
	case LLVMBFloatTypeKind:
		return 2;
	case LLVMFloatTypeKind:
		return 4;
	case LLVMDoubleTypeKind:
	case LLVMPointerTypeKind:
		return 8;
	case LLVMArrayTypeKind:
		return (int)LLVMGetArrayLength2(t) * param_bytes(LLVMGetElementType(t));
	default:
		return 0;
	}
}

/* The value of kernel fn's nvvm.annotations entry `key` into *value (left
 * as it is where there is none); false when out of memory. */
static bool annotation(LLVMModuleRef m, LLVMValueRef fn, const char *key, long *value)
{
	unsigned n = LLVMGetNamedMetadataNumOperands(m, "nvvm.annotations");
	LLVMValueRef *notes = malloc((n ? n : 1) * sizeof *notes);
	if (!notes)
		return false;
	LLVMGetNamedMetadataOperands(m, "nvvm.annotations", notes);
	size_t want = strlen(key);
	for (unsigned i = 0; i < n; i++) {
		LLVMValueRef ops[3];
		unsigned len = 0;
		if (LLVMGetMDNodeNumOperands(notes[i]) != 3)
			continue;
		LLVMGetMDNodeOperands(notes[i], ops);
		const char *k = LLVMGetMDString(ops[1], &len);
		if (ops[0] == fn && k && len == want && memcmp(k, key, want) == 0)
			*value = (long)LLVMConstIntGetSExtValue(ops[2]);
	}
	free(notes);
	return true;
}

/* The kernel's parameters (a by-value one, a tensor map, by its type's
 * size) and the .maxntid lowering annotated. */
static bool read_kernel(LLVMModuleRef m, const IrFunc *f, PipelineResult *out, Diag *diag)
{
	LLVMValueRef fn = LLVMGetNamedFunction(m, f->name);
	unsigned np = fn ? LLVMCountParams(fn) : 0;
	if (!fn) {
		diag_plain(diag, DIAG_ERROR, "internal error: lowering made no kernel '%s'", f->name);
		return false;
	}
	if (!(out->param_bytes = arena_alloc(f->arena, (np ? np : 1) * sizeof *out->param_bytes))) {
		diag_plain(diag, DIAG_ERROR, "out of memory lowering '%s'", f->name);
		return false;
	}
	unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
	for (unsigned i = 0; i < np; i++) {
		LLVMAttributeRef a = LLVMGetEnumAttributeAtIndex(fn, i + 1, byval);
		out->param_bytes[i] = param_bytes(a ? LLVMGetTypeAttributeValue(a) : LLVMTypeOf(LLVMGetParam(fn, i)));
	}
	out->n_params = (int)np;
	out->n_tmaps = f->n_tmaps;
	long threads = 0;
	if (!annotation(m, fn, "maxntidx", &threads)) {
		diag_plain(diag, DIAG_ERROR, "out of memory lowering '%s'", f->name);
		return false;
	}
	out->threads = (int)threads;
	return true;
}

/* The option maxnreg: a cap on the registers of a thread, the kernel's
 * .maxnreg (as Triton's). Warp specialization sets its own (its consumers
 * take more registers later); then the option is not applied, with a
 * warning. */
static void cap_registers(LLVMModuleRef m, const IrFunc *f, Diag *diag)
{
	LLVMValueRef fn = LLVMGetNamedFunction(m, f->name);
	long set = 0;
	if (!fn || !annotation(m, fn, "maxnreg", &set))
		return;
	if (set) {
		diag_plain(diag, DIAG_WARNING, "kernel '%s': maxnreg %d is not applied: warp specialization sets .maxnreg %ld",
		           f->name, f->maxnreg, set);
		return;
	}
	LLVMContextRef c = LLVMGetModuleContext(m);
	LLVMValueRef md[3] = {fn, LLVMMDStringInContext(c, "maxnreg", 7),
	                      LLVMConstInt(LLVMInt32TypeInContext(c), (unsigned long long)f->maxnreg, 0)};
	LLVMAddNamedMetadataOperand(m, "nvvm.annotations", LLVMMDNodeInContext(c, md, 3));
}

/* STAGE_LOWER and STAGE_PTX: f to LLVM IR, then (to STAGE_PTX) PTX. */
static bool lower_and_emit(const PipelineRequest *req, IrFunc *f, PipelineResult *out, Diag *diag)
{
	double t = now_ms();
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m;
	bool ok = gpu_lower_llvm(f, ctx, &m, &out->shared_bytes, diag);
	if (ok && f->maxnreg)
		cap_registers(m, f, diag);
	if (ok && !(ok = read_kernel(m, f, out, diag)))
		LLVMDisposeModule(m);
	if (ok && req->to == STAGE_LOWER) {
		char *s = LLVMPrintModuleToString(m);
		out->text = s ? strdup(s) : NULL;
		out->len = out->text ? strlen(out->text) : 0;
		LLVMDisposeMessage(s);
		LLVMDisposeModule(m);
		if (!(ok = out->text != NULL))
			diag_plain(diag, DIAG_ERROR, "out of memory printing the LLVM IR of '%s'", f->name);
		out->ms[STAGE_LOWER] = lap(&t);
	} else if (ok) {
		out->ms[STAGE_LOWER] = lap(&t);
		char *err = NULL;
		double ms_opt = 0, ms_emit = 0;
		ok = llvm_emit_ptx_timed(m, req->arch, 3, &out->text, &out->len, &err, &ms_opt, &ms_emit);
		if (!ok)
			diag_plain(diag, DIAG_ERROR, "kernel '%s': %s", f->name, err ? err : "PTX emission failed");
		free(err);
		LLVMDisposeModule(m);
		out->ms[STAGE_LOWER] += ms_opt;
		out->ms[STAGE_PTX] = ms_emit;
	}
	LLVMContextDispose(ctx);
	return ok;
}

BLK_API bool blk_pipeline_run(const PipelineRequest *req, PipelineResult *out, Diag *diag)
{
	*out = (PipelineResult){.f = req->f};
	IrFunc *f = req->f;
	double t = now_ms();
#define RUNS(stage) (req->from <= (stage) && (stage) <= req->to)
	if (RUNS(STAGE_IRGEN)) {
		f = out->f = irgen_kernel(req->mod, req->kernel, req->irgen, diag, req->arena);
		if (!f || (req->prepare && !req->prepare(f, req->user, diag)))
			return false;
		out->ms[STAGE_IRGEN] = lap(&t);
	}
	if (!f)
		return false;
	if (RUNS(STAGE_TILE_PASSES)) {
		if (req->arch) /* the passes asked for may be GPU ones (blkc --passes, BLK_PASSES), which choose by it */
			ir_set_target(f, req->arch);
		if (!pipeline_run_passes(f, req->passes, req->dump_after, req->dump, diag))
			return false;
		out->ms[STAGE_TILE_PASSES] = lap(&t);
	}
	if (RUNS(STAGE_TARGET)) {
		bool known = req->arch && llvm_ptx_isa_version(req->arch);
		if (req->to >= STAGE_PTX && !known) {
			diag_plain(diag, DIAG_ERROR, "unknown GPU target '%s' (sm_80, sm_86, sm_89, sm_90, sm_90a ...)",
			           req->arch ? req->arch : "");
			return false;
		}
		if (!f->gpu && known) /* (GPU IR has its target: a test's BLK_PASSES_TARGET, blkc's --passes) */
			ir_set_target(f, req->arch);
		if (!f->gpu)
			ir_tma_plan(f); /* the tensor maps a launch passes, whether or not the code comes from a cache */
		out->ms[STAGE_TARGET] = lap(&t);
	}
	if (RUNS(STAGE_GPU_PASSES)) {
		if (!f->gpu && !pipeline_run_passes(f, IR_GPU_PIPELINE, NULL, NULL, diag))
			return false;
		out->ms[STAGE_GPU_PASSES] = lap(&t);
	}
	if (RUNS(STAGE_LOWER) && !lower_and_emit(req, f, out, diag))
		return false;
#undef RUNS
	return true;
}
