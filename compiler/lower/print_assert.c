/* print_assert.c: print (vprintf, a line per element from its owner) and
 * assert (the first failure recorded for the runtime to report). */
#include "lower/lower_int.h"

#include <string.h>

/* A C string in the constant address space, as a generic pointer. */
static LLVMValueRef cstring(Lower *L, const char *text)
{
	size_t len = strlen(text);
	LLVMValueRef init = LLVMConstStringInContext(L->c, text, (unsigned)len, 0);
	LLVMValueRef g = LLVMAddGlobalInAddressSpace(L->m, LLVMTypeOf(init), "blk_str", 4);
	LLVMSetInitializer(g, init);
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	return LLVMConstAddrSpaceCast(g, LLVMPointerTypeInContext(L->c, 0));
}

static LLVMValueRef runtime_fn(Lower *L, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int n)
{
	LLVMValueRef fn = LLVMGetNamedFunction(L->m, name);
	if (!fn)
		fn = LLVMAddFunction(L->m, name, LLVMFunctionType(ret, params, (unsigned)n, 0));
	return fn;
}

/* print: a line per element through vprintf, from the thread that owns it:
 * "pid (x, y, z) idx (i, j) PREFIX: value, value". */
void lower_print(Lower *L, const Op *op)
{
	LLVMTypeRef gp = LLVMPointerTypeInContext(L->c, 0);
	LLVMTypeRef vp[2] = {gp, gp};
	LLVMValueRef vprintf = runtime_fn(L, "vprintf", L->i32, vp, 2);
	Type t = op->n_operands ? op->operands[0]->type : type_scalar(SK_I32);
	for (int i = 1; i < op->n_operands; i++)
		if (numel(op->operands[i]->type) != numel(t)) {
			lw_fail(L, op->loc, "%s", "print of blocks of different sizes is not supported on the GPU yet");
			return;
		}
	char fmt[1024];
	int pos = snprintf(fmt, sizeof fmt, "pid (%%d, %%d, %%d) idx (");
	for (int d = 0; d < t.rank; d++)
		pos += snprintf(fmt + pos, sizeof fmt - (size_t)pos, "%s%%d", d ? ", " : "");
	const char *prefix = op->str ? op->str : "";
	size_t pl = strlen(prefix);
	/* the message is vprintf's format: a '%' in it doubled, so that it
	 * prints as itself and reads no argument */
	char text[2 * 200 + 1];
	size_t tl = 0;
	for (size_t i = 0; i < pl && i < 200; i++) {
		if (prefix[i] == '%')
			text[tl++] = '%';
		text[tl++] = prefix[i];
	}
	text[tl] = 0;
	pos += snprintf(fmt + pos, sizeof fmt - (size_t)pos, ")%s%s%s ", pl ? " " : "", text,
	                !pl || (prefix[pl - 1] != ':' && prefix[pl - 1] != '=') ? ":" : "");
	/* a conversion for each value passed (16 at most), and room for each */
	for (int i = 0; i < op->n_operands && i < 16 && pos < (int)sizeof fmt - 16; i++) {
		Type et = type_elem(op->operands[i]->type);
		const char *f = et.ptr ? "0x%llx" : type_is_float(et) ? "%.9g" : op->attr[0] ? "0x%llx" : is_signed(et) ? "%lld" : "%llu";
		pos += snprintf(fmt + pos, sizeof fmt - (size_t)pos, "%s%s", i ? ", " : "", f);
	}
	snprintf(fmt + pos, sizeof fmt - (size_t)pos, "\n");
	LLVMValueRef fstr = cstring(L, fmt);
	const Lin *ol = op->n_operands ? lw_lin_of(L, op->operands[0]) : &L->scalar_lin;
	int n = 1 << ol->n_reg;
	for (int k = 0; k < n && !L->failed; k++) {
		LLVMValueRef own = owner_of(L, ol);
		LLVMBasicBlockRef done = lw_begin_if(L, own, "print");
		LLVMTypeRef fields[3 + BLK_MAX_RANK + 16];
		LLVMValueRef vals[3 + BLK_MAX_RANK + 16];
		int nf = 0;
		static const char *const ids[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
		                                   "llvm.nvvm.read.ptx.sreg.ctaid.z"};
		for (int d = 0; d < 3; d++)
			fields[nf] = L->i32, vals[nf++] = lw_sreg(L, ids[d]);
		LLVMValueRef idx = t.rank ? lw_index_of(L, ol, k) : NULL;
		for (int d = 0; d < t.rank; d++)
			fields[nf] = L->i32, vals[nf++] = lw_coord(L, t, idx, d);
		for (int i = 0; i < op->n_operands && i < 16; i++) {
			Type et = type_elem(op->operands[i]->type);
			LLVMValueRef v = el(L, op->operands[i], k);
			if (et.ptr)
				v = LLVMBuildPtrToInt(L->b, v, L->i64, "");
			else if (is_fp8(et))
				v = LLVMBuildFPExt(L->b, gpu_fp8_to_f32(L->b, L->m, (ScalarKind)et.scalar, v), L->f64, "");
			else if (type_is_float(et) && et.scalar != SK_F64)
				v = LLVMBuildFPExt(L->b, v, L->f64, "");
			else if (!type_is_float(et) && LLVMTypeOf(v) != L->i64)
				v = is_signed(et) ? LLVMBuildSExt(L->b, v, L->i64, "") : LLVMBuildZExt(L->b, v, L->i64, "");
			fields[nf] = LLVMTypeOf(v), vals[nf++] = v;
		}
		LLVMTypeRef st = LLVMStructTypeInContext(L->c, fields, (unsigned)nf, 0);
		LLVMValueRef buf = LLVMBuildAlloca(L->b, st, "");
		for (int f = 0; f < nf; f++)
			LLVMBuildStore(L->b, vals[f], LLVMBuildStructGEP2(L->b, st, buf, (unsigned)f, ""));
		LLVMValueRef args[2] = {fstr, buf};
		LLVMBuildCall2(L->b, LLVMFunctionType(L->i32, vp, 2, 0), vprintf, args, 2, "");
		lw_end_if(L, done);
	}
}

/* assert: the first failing element of any program records, in the
 * module's global blk_assert_state, which assert failed (its ordinal in
 * program order, +1), the program id and the element; the kernel runs on
 * (a thread leaving early would strand the others at barriers). The runtime
 * reads the record after the launch and fails it with the message and the
 * .tile place (ir_assert_ops lists the asserts in the same order). */
void lower_assert(Lower *L, const Op *op)
{
	LLVMValueRef state = LLVMGetNamedGlobal(L->m, "blk_assert_state");
	if (!state) {
		LLVMTypeRef at = LLVMArrayType(L->i32, 8);
		state = LLVMAddGlobalInAddressSpace(L->m, at, "blk_assert_state", 1);
		LLVMSetInitializer(state, LLVMConstNull(at));
		LLVMSetLinkage(state, LLVMExternalLinkage);
		LLVMSetAlignment(state, 16);
	}
	int id = ++L->n_asserts;
	const Value *c = op->operands[0];
	const Lin *cl = lw_lin_of(L, c);
	int n = 1 << cl->n_reg;
	for (int k = 0; k < n && !L->failed; k++) {
		LLVMValueRef bad = LLVMBuildNot(L->b, el(L, c, k), "");
		LLVMValueRef own = owner_of(L, cl);
		LLVMBasicBlockRef done = lw_begin_if(L, LLVMBuildAnd(L->b, bad, own, ""), "assert");
		LLVMValueRef old = LLVMBuildAtomicCmpXchg(L->b, state, ci32(L, 0), ci32(L, id), LLVMAtomicOrderingMonotonic,
		                                          LLVMAtomicOrderingMonotonic, 0);
		old = LLVMBuildExtractValue(L->b, old, 0, "");
		LLVMBasicBlockRef won = lw_begin_if(L, LLVMBuildICmp(L->b, LLVMIntEQ, old, ci32(L, 0), ""), "assert.first");
		static const char *const ids[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
		                                   "llvm.nvvm.read.ptx.sreg.ctaid.z"};
		for (int d = 0; d < 3; d++) {
			LLVMValueRef at = ci32(L, 1 + d);
			LLVMValueRef zero = ci32(L, 0);
			LLVMValueRef idx[2] = {zero, at};
			LLVMBuildStore(L->b, lw_sreg(L, ids[d]), LLVMBuildGEP2(L->b, LLVMArrayType(L->i32, 8), state, idx, 2, ""));
		}
		LLVMValueRef idx[2] = {ci32(L, 0), ci32(L, 4)};
		LLVMBuildStore(L->b, c->type.rank ? lw_index_of(L, cl, k) : ci32(L, 0),
		               LLVMBuildGEP2(L->b, LLVMArrayType(L->i32, 8), state, idx, 2, ""));
		lw_end_if(L, won);
		lw_end_if(L, done);
	}
}
