/* lower.c: GPU IR to LLVM IR for NVPTX: the entry points, the kernel and its
 * lowering state, and the op dispatch, which also settles which loads and
 * conversions are of the tiles loops carry through shared memory
 * (async_copy.c). lower_int.h says how the lowering goes and which file does
 * what. */
#include "lower/lower_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/DebugInfo.h>

/* ---- the op dispatch ------------------------------------------------------------------ */

void lw_lower_op(Lower *L, const Op *op)
{
	const Value *res = op->n_results ? op->results[0] : NULL;
	int n = res ? ept(L, res) : 1;
	int flags = op_flags(op->code);
	if (flags & OPF_ELEMWISE) {
		lower_elementwise(L, op, n);
		return;
	}
	switch (op->code) {
	case OP_CONST: {
		Tile t = lw_tile_new(L, 1);
		if (!L->failed)
			t.e[0] = lw_const_elem(L, op, type_elem(res->type));
		L->vals[res->id] = t;
		break;
	}
	case OP_ARANGE: {
		Tile t = lw_tile_new(L, n);
		for (int k = 0; k < n && !L->failed; k++)
			t.e[k] = op->attr[0] ? LLVMBuildAdd(L->b, lw_index_of(L, lw_lin_of(L, res), k), ci32(L, op->attr[0]), "")
			                     : lw_index_of(L, lw_lin_of(L, res), k);
		L->vals[res->id] = t;
		break;
	}
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS: {
		static const char *const ids[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
		                                   "llvm.nvvm.read.ptx.sreg.ctaid.z"};
		static const char *const ns[3] = {"llvm.nvvm.read.ptx.sreg.nctaid.x", "llvm.nvvm.read.ptx.sreg.nctaid.y",
		                                  "llvm.nvvm.read.ptx.sreg.nctaid.z"};
		Tile t = lw_tile_new(L, 1);
		if (!L->failed)
			t.e[0] = lw_sreg(L, (op->code == OP_PROGRAM_ID ? ids : ns)[op->attr[0]]);
		L->vals[res->id] = t;
		break;
	}
	case OP_SPLAT: /* uniform: one element stands for all */
	case OP_HINT:  /* the same elements in the same encoding */
		L->vals[res->id] = *val(L, op->operands[0]);
		break;
	case OP_RESHAPE:
	case OP_EXPAND_DIMS:
	case OP_BROADCAST:
	case OP_TRANS:
	case OP_CAT:
	case OP_JOIN:
	case OP_SPLIT:
		lower_shape(L, op);
		break;
	case OP_CONVERT_LAYOUT: /* of a tile a loop carries in shared memory: from its stage buffer */
		lower_convert(L, op, lw_async_of(L, NULL, op->operands[0]));
		break;
	case OP_GATHER:
		lower_gather(L, op);
		break;
	case OP_SREG:
		lower_sreg(L, op);
		break;
	case OP_INLINE_ASM:
		lower_inline_asm(L, op);
		break;
	case OP_LOAD: { /* a tile a loop carries in shared memory: copies into its stage buffer */
		AsyncTile *at = lw_async_of(L, op, NULL);
		if (at)
			lw_lower_async_load(L, op, at);
		else
			lower_load_store(L, op);
		break;
	}
	case OP_STORE:
		if (!((op->attr[0] & MEMF_TMA) && lw_tma_store(L, op)))
			lower_load_store(L, op);
		break;
	case OP_ATOMIC_RMW:
	case OP_ATOMIC_CAS:
		if (!(op->code == OP_ATOMIC_RMW && (op->attr[3] & MEMF_TMA) && lw_tma_store(L, op)))
			lower_atomic(L, op);
		break;
	case OP_REDUCE:
		lower_reduce(L, op);
		break;
	case OP_SCAN:
		lower_scan(L, op);
		break;
	case OP_DOT:
		lower_dot(L, op);
		break;
	case OP_PHILOX:
		lower_philox(L, op);
		break;
	case OP_SORT:
	case OP_TOPK:
		lower_sort(L, op);
		break;
	case OP_HISTOGRAM:
		lower_histogram(L, op);
		break;
	case OP_FOR:
	case OP_IF:
	case OP_WHILE:
		lw_smem_unknown(L); /* a barrier inside may come from either side */
		(op->code == OP_FOR ? lower_for : op->code == OP_IF ? lower_if : lower_while)(L, op); /* control_flow.c */
		lw_smem_unknown(L);
		break;
	case OP_YIELD:
	case OP_CONDITION:
		break;
	case OP_RETURN:
		LLVMBuildRetVoid(L->b);
		break;
	case OP_PRINT:
		lower_print(L, op);
		break;
	case OP_ASSERT:
		lower_assert(L, op);
		break;
	case OP_BARRIER:
		lw_tma_store_fence(L);
		lw_smem_barrier(L);
		break;
	default:
		lw_fail(L, op->loc, "internal error: cannot lower '%s' to the GPU", op_name(op->code));
		break;
	}
}

void lower_region(Lower *L, const Region *r)
{
	lw_async_prescan(L, r);
	for (const Op *op = r->first; op && !L->failed; op = op->next) {
		if (L->scope && op->loc.line)
			LLVMSetCurrentDebugLocation2(L->b, LLVMDIBuilderCreateDebugLocation(L->c, op->loc.line, op->loc.col,
			                                                                    L->scope, NULL));
		lw_lower_op(L, op);
	}
}

/* Line tables, so that PTX carries .loc directives and profilers and
 * compute-sanitizer point at .tile lines. */
static LLVMDIBuilderRef debug_info(Lower *L)
{
	const IrFunc *f = L->f;
	if (!f->loc.src)
		return NULL;
	LLVMDIBuilderRef di = LLVMCreateDIBuilder(L->m);
	const char *path = f->loc.src->name;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dir = slash ? path : ".";
	size_t dir_len = slash ? (size_t)(slash - path) : 1;
	LLVMMetadataRef file = LLVMDIBuilderCreateFile(di, base, strlen(base), dir, dir_len);
	const char *producer = "blk";
	LLVMDIBuilderCreateCompileUnit(di, LLVMDWARFSourceLanguageC, file, producer, strlen(producer), 1, "", 0, 0, "", 0,
	                               (LLVMDWARFEmissionKind)3 /* DebugDirectivesOnly: .loc and .file, no DWARF sections (ptxas would treat those as a debug build) */, 0, 0, 0, "", 0, "", 0);
	LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(di, file, NULL, 0, LLVMDIFlagZero);
	L->scope = LLVMDIBuilderCreateFunction(di, file, f->name, strlen(f->name), f->name, strlen(f->name), file,
	                                       f->loc.line, ty, 0, 1, f->loc.line, LLVMDIFlagZero, 1);
	LLVMSetSubprogram(L->fn, L->scope);
	LLVMAddModuleFlag(L->m, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
	                  LLVMValueAsMetadata(LLVMConstInt(L->i32, LLVMDebugMetadataVersion(), 0)));
	LLVMAddModuleFlag(L->m, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
	                  LLVMValueAsMetadata(LLVMConstInt(L->i32, 2, 0)));
	return di;
}

/* ---- the kernel ----------------------------------------------------------------------------- */

/* How a runtime parameter is passed: pointers as global pointers, integers
 * narrower than 32 bits as 32-bit, f16 and bf16 as their 16 bits. */
static LLVMTypeRef param_type(Lower *L, Type t)
{
	if (t.ptr)
		return L->gptr;
	switch ((ScalarKind)t.scalar) {
	case SK_I64: case SK_U64: return L->i64;
	case SK_F16: case SK_BF16: return L->i16;
	case SK_F32: return L->f32;
	case SK_F64: return L->f64;
	default: return L->i32;
	}
}

/* Bytes of parameter space a kernel may take with the PTX ISA versions
 * llvm_emit_ptx emits (at most 8.0; 8.1 raised it to 32764). */
enum { PTX_PARAM_SPACE = 4352 };

/* The bytes the kernel's parameters take, each at a multiple of its size
 * (the tensor maps: 128 bytes at a multiple of 64); *count gets how many. */
static long param_bytes(const IrFunc *f, int *count)
{
	long at = 0;
	*count = f->n_tmaps;
	for (int i = 0; i < f->n_params; i++) {
		if (!f->params[i].value)
			continue;
		++*count;
		Type t = f->params[i].type;
		int size = t.ptr ? 8 : t.scalar == SK_I64 || t.scalar == SK_U64 || t.scalar == SK_F64 ? 8
		         : t.scalar == SK_F16 || t.scalar == SK_BF16 ? 2 : 4;
		at = (at + size - 1) / size * size + size;
	}
	for (int i = 0; i < f->n_tmaps; i++)
		at = (at + 63) / 64 * 64 + 128;
	return at;
}

static void add_annotation(Lower *L, const char *key, int value)
{
	LLVMValueRef md[3] = {L->fn, LLVMMDStringInContext(L->c, key, (unsigned)strlen(key)), ci32(L, value)};
	LLVMAddNamedMetadataOperand(L->m, "nvvm.annotations", LLVMMDNodeInContext(L->c, md, 3));
}

/* What a program of an sm_90 GPU may take of shared memory (opt-in). */
enum { SM90_SMEM_MAX = 227 * 1024 };

static bool lower_kernel(const IrFunc *f, LLVMContextRef ctx, LLVMModuleRef *out, int *shared_bytes, Diag *diag,
                         bool allow_ws, bool *split);

bool gpu_lower_llvm(const IrFunc *f, LLVMContextRef ctx, LLVMModuleRef *out, int *shared_bytes, Diag *diag)
{
	bool split = false;
	if (!lower_kernel(f, ctx, out, shared_bytes, diag, true, &split))
		return false;
	/* warp specialization keeps the loops' buffers for the whole kernel:
	 * where that outgrows the GPU's shared memory, the kernel is not split */
	if (split && *shared_bytes > SM90_SMEM_MAX) {
		LLVMDisposeModule(*out);
		return lower_kernel(f, ctx, out, shared_bytes, diag, false, &split);
	}
	return true;
}

static bool lower_kernel(const IrFunc *f, LLVMContextRef ctx, LLVMModuleRef *out, int *shared_bytes, Diag *diag,
                         bool allow_ws, bool *split)
{
	int count = 0;
	long pbytes = param_bytes(f, &count);
	if (pbytes > PTX_PARAM_SPACE) {
		diag_report(diag, DIAG_ERROR, f->loc,
		            "kernel '%s': its %d parameters take %ld bytes, more than the %d bytes a kernel's parameters "
		            "may take on the GPU (pass the values through a buffer)",
		            f->name, count, pbytes, PTX_PARAM_SPACE);
		return false;
	}
	Lower L = {.f = f, .diag = diag, .c = ctx, .T = 32 * f->num_warps};
	L.m = LLVMModuleCreateWithNameInContext(f->name, ctx);
	L.b = LLVMCreateBuilderInContext(ctx);
	L.i1 = LLVMInt1TypeInContext(ctx);
	L.i8 = LLVMInt8TypeInContext(ctx);
	L.i16 = LLVMInt16TypeInContext(ctx);
	L.i32 = LLVMInt32TypeInContext(ctx);
	L.i64 = LLVMInt64TypeInContext(ctx);
	L.f16 = LLVMHalfTypeInContext(ctx);
	L.bf16 = LLVMBFloatTypeInContext(ctx);
	L.f32 = LLVMFloatTypeInContext(ctx);
	L.f64 = LLVMDoubleTypeInContext(ctx);
	L.gptr = LLVMPointerTypeInContext(ctx, 1);
	L.sptr = LLVMPointerTypeInContext(ctx, 3);
	L.vd = LLVMVoidTypeInContext(ctx);
	size_t nv = (size_t)(f->n_values ? f->n_values : 1);
	L.vals = calloc(nv, sizeof *L.vals);
	L.ax = axis_analyze(f);
	L.lins = calloc(nv, sizeof *L.lins);
	L.lin_done = calloc(nv, sizeof *L.lin_done);
	L.lazy = calloc(nv, sizeof *L.lazy);
	L.wg_inflight = calloc(nv, sizeof *L.wg_inflight);
	memset(&L.scalar_lin, -1, sizeof L.scalar_lin);
	L.scalar_lin.n_reg = 0;
	L.scalar_lin.n_lane = 5;
	L.scalar_lin.n_warp = log2i(f->num_warps);
	if (!f->gpu || !gpu_check_registers(f, diag)) { /* a block too large for registers: the error said so */
		if (!f->gpu)
			diag_plain(diag, DIAG_ERROR, "internal error: '%s' is not GPU IR (the layouts pass did not run)",
			           f->name);
		free(L.vals);
		free(L.ax);
		free(L.lins);
		free(L.lin_done);
		free(L.lazy);
		free(L.wg_inflight);
		LLVMDisposeBuilder(L.b);
		LLVMDisposeModule(L.m);
		return false;
	}
	LLVMTypeRef *params = malloc((size_t)(f->n_params + f->n_tmaps + 1) * sizeof *params);
	int np = 0;
	for (int i = 0; i < f->n_params && params; i++)
		if (f->params[i].value)
			params[np++] = param_type(&L, f->params[i].type);
	int n_own = np;
	for (int i = 0; i < f->n_tmaps && params; i++) /* the tensor maps, by value (tma_copy.c) */
		params[np++] = LLVMPointerTypeInContext(ctx, 0);
	bool ok = L.vals && L.ax && L.lins && L.lin_done && L.lazy && L.wg_inflight && params;
	if (ok) {
		LLVMTypeRef ft = LLVMFunctionType(L.vd, params, (unsigned)np, 0);
		free(params);
		params = NULL;
		L.fn = LLVMAddFunction(L.m, f->name, ft);
		lw_tma_params(&L, n_own);
		bool ws = allow_ws && lw_ws_plan(&L); /* then a producer warpgroup runs beside the num_warps warps */
		*split = ws;
		add_annotation(&L, "kernel", 1);
		add_annotation(&L, "maxntidx", L.T + (ws ? 128 : 0));
		if (ws) /* at most what the consumers take later (setmaxnreg.inc must not lower it) */
			add_annotation(&L, "maxnreg", lw_ws_launch_regs(&L));
		LLVMValueRef smem = LLVMAddGlobalInAddressSpace(L.m, LLVMArrayType(L.i8, 0), "blk_smem", 3);
		LLVMSetLinkage(smem, LLVMExternalLinkage);
		LLVMSetAlignment(smem, 16);
		L.smem = smem;
		LLVMDIBuilderRef di = debug_info(&L);
		LLVMPositionBuilderAtEnd(L.b, LLVMAppendBasicBlockInContext(ctx, L.fn, "entry"));
		L.tid = lw_sreg(&L, "llvm.nvvm.read.ptx.sreg.tid.x");
		for (int i = 0, a = 0; i < f->n_params && !L.failed; i++) {
			const IrParam *p = &f->params[i];
			if (!p->value)
				continue;
			LLVMValueRef v = LLVMGetParam(L.fn, (unsigned)a++);
			Type t = p->type;
			if (!t.ptr && (t.scalar == SK_F16 || t.scalar == SK_BF16))
				v = LLVMBuildBitCast(L.b, v, lw_elem_type(&L, t), "");
			else if (!t.ptr && LLVMTypeOf(v) != lw_elem_type(&L, t))
				v = LLVMBuildTrunc(L.b, v, lw_elem_type(&L, t), "");
			Tile tl = lw_tile_new(&L, 1);
			if (L.failed)
				break;
			tl.e[0] = v;
			L.vals[p->value->id] = tl;
		}
		/* the entry block ends in a branch; index math shared by all ops
		 * goes before it (L.pro), the kernel's body after */
		LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(ctx, L.fn, "body");
		LLVMValueRef br = LLVMBuildBr(L.b, body);
		L.pro = LLVMCreateBuilderInContext(ctx);
		LLVMPositionBuilderBefore(L.pro, br);
		LLVMPositionBuilderAtEnd(L.b, body);
		if (ws)
			lw_ws_begin(&L);
		lower_region(&L, &f->body);
		ok = !L.failed;
		if (L.wgmma_used) /* the swizzled operands' pattern repeats every 1024 bytes from the window's start */
			LLVMSetAlignment(smem, 1024);
		if (di) {
			LLVMDIBuilderFinalize(di);
			LLVMDisposeDIBuilder(di);
		}
	} else {
		diag_plain(diag, DIAG_ERROR, "out of memory lowering '%s'", f->name);
	}
	free(params);
	arena_free(&L.arena);
	free(L.vals);
	free(L.ax);
	free(L.lins);
	free(L.lin_done);
	free(L.lazy);
	free(L.wg_inflight);
	free(L.async);
	free(L.tparts);
	free(L.ws_need);
	if (L.pro)
		LLVMDisposeBuilder(L.pro);
	LLVMDisposeBuilder(L.b);
	if (!ok) {
		LLVMDisposeModule(L.m);
		return false;
	}
	*out = L.m;
	*shared_bytes = L.smem_bytes;
	return true;
}
