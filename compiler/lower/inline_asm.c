/* inline_asm.c: element-wise inline PTX (inline_asm_elementwise): the text
 * runs once for each `pack` elements a thread holds (pack 1: each element),
 * with the operands' elements of those registers as its inputs and the
 * results' as its outputs. With pack > 1 an operand or result of elements
 * narrower than 32 bits takes pack * bytes / 4 registers of 32 bits (at
 * least one), its elements packed from the low bits (as Triton packs them:
 * four u8 or two f16 a register); wider ones take pack registers each. A
 * thread whose elements are not a multiple of pack is an error (which
 * elements an instance gets is the layout's business, as in Triton), but
 * for one element a thread, which fills the instance's every slot. */
#include "lower/lower_int.h"

#include <string.h>

/* The registers one instance passes for `pack` elements of type t. */
static int regs_of(Type t, int pack)
{
	int eb = type_bytes(t);
	return pack == 1 || eb >= 4 ? pack : (pack * eb + 3) / 4;
}

/* The type of each of those registers. */
static LLVMTypeRef reg_type(Lower *L, Type t, int pack)
{
	return pack == 1 || type_bytes(t) >= 4 ? lw_elem_type(L, t) : L->i32;
}

/* Elements e[0..pack) of type t into regs_of registers. */
static void pack_regs(Lower *L, Type t, int pack, LLVMValueRef *e, LLVMValueRef *out)
{
	int eb = type_bytes(t), per = eb >= 4 ? 1 : 4 / eb;
	if (pack == 1 || eb >= 4) {
		for (int i = 0; i < pack; i++)
			out[i] = e[i];
		return;
	}
	LLVMTypeRef et = lw_mem_type(L, t), vt = LLVMVectorType(et, (unsigned)per);
	for (int r = 0; r * per < pack; r++) {
		LLVMValueRef v = LLVMConstNull(vt);
		for (int j = 0; j < per && r * per + j < pack; j++)
			v = LLVMBuildInsertElement(L->b, v, lw_to_mem(L, t, e[r * per + j]), ci32(L, j), "");
		out[r] = LLVMBuildBitCast(L->b, v, L->i32, "");
	}
}

/* The inverse: registers to elements e[0..pack). */
static void unpack_regs(Lower *L, Type t, int pack, LLVMValueRef *regs, LLVMValueRef *e)
{
	int eb = type_bytes(t), per = eb >= 4 ? 1 : 4 / eb;
	if (pack == 1 || eb >= 4) {
		for (int i = 0; i < pack; i++)
			e[i] = regs[i];
		return;
	}
	LLVMTypeRef et = lw_mem_type(L, t), vt = LLVMVectorType(et, (unsigned)per);
	for (int r = 0; r * per < pack; r++) {
		LLVMValueRef v = LLVMBuildBitCast(L->b, regs[r], vt, "");
		for (int j = 0; j < per && r * per + j < pack; j++)
			e[r * per + j] = lw_from_mem(L, t, LLVMBuildExtractElement(L->b, v, ci32(L, j), ""));
	}
}

void lower_inline_asm(Lower *L, const Op *op)
{
	int nr = op->n_results, no = op->n_operands, pack = (int)op->attr[1];
	int n_out = 0, n_in = 0;
	for (int i = 0; i < nr; i++)
		n_out += regs_of(type_elem(op->results[i]->type), pack);
	for (int i = 0; i < no; i++)
		n_in += regs_of(type_elem(op->operands[i]->type), pack);
	if (n_out > 64 || n_in > 128 || pack < 1 || pack > 16) {
		lw_fail(L, op->loc, "%s", "inline_asm with more than 64 output or 128 input registers");
		return;
	}
	LLVMTypeRef rt[64], at[128];
	for (int i = 0, r = 0; i < nr; i++)
		for (int k = 0, m = regs_of(type_elem(op->results[i]->type), pack); k < m; k++)
			rt[r++] = reg_type(L, type_elem(op->results[i]->type), pack);
	for (int i = 0, r = 0; i < no; i++)
		for (int k = 0, m = regs_of(type_elem(op->operands[i]->type), pack); k < m; k++)
			at[r++] = reg_type(L, type_elem(op->operands[i]->type), pack);
	LLVMTypeRef ret = n_out == 1 ? rt[0] : LLVMStructTypeInContext(L->c, rt, (unsigned)n_out, 0);
	LLVMTypeRef ft = LLVMFunctionType(ret, at, (unsigned)n_in, 0);
	/* not pure: volatile (kept, in order); pure ones may be merged or dropped */
	LLVMValueRef fn = LLVMGetInlineAsm(ft, op->str, strlen(op->str), (char *)op->str2, strlen(op->str2),
	                                   !op->attr[0], 0, LLVMInlineAsmDialectATT, 0);
	int n = ept(L, op->results[0]);
	bool uniform = true; /* scalars, or splats: one instance for all */
	for (int i = 0; i < no; i++)
		uniform = uniform && val(L, op->operands[i])->n == 1;
	if (uniform && op->attr[0])
		n = 1;
	/* one element a thread (or one for all): it fills every slot of its
	 * one instance, and the first result of each kind is it */
	bool one = n == 1;
	if (!one && n % pack) {
		char what[256];
		snprintf(what, sizeof what, "inline_asm_elementwise with pack = %d: a thread holds %d elements of the block, "
		         "not a multiple of the pack (a larger block, fewer warps or a smaller pack)", pack, n);
		lw_fail(L, op->loc, "%s", what);
		return;
	}
	Tile t[16];
	for (int i = 0; i < nr; i++)
		if (t[i] = lw_tile_new(L, n), L->failed)
			return;
	/* an instance a pack (a uniform block: one, its element in every slot) */
	for (int k0 = 0; k0 < n; k0 += pack) {
		LLVMValueRef args[128], elems[16];
		for (int i = 0, r = 0; i < no; i++) {
			Type et = type_elem(op->operands[i]->type);
			for (int j = 0; j < pack; j++)
				elems[j] = el(L, op->operands[i], one ? 0 : k0 + j);
			pack_regs(L, et, pack, elems, args + r);
			r += regs_of(et, pack);
		}
		LLVMValueRef res = LLVMBuildCall2(L->b, ft, fn, args, (unsigned)n_in, "");
		LLVMValueRef regs[64];
		for (int r = 0; r < n_out; r++)
			regs[r] = n_out == 1 ? res : LLVMBuildExtractValue(L->b, res, (unsigned)r, "");
		for (int i = 0, r = 0; i < nr; i++) {
			Type et = type_elem(op->results[i]->type);
			unpack_regs(L, et, pack, regs + r, elems);
			r += regs_of(et, pack);
			for (int j = 0; j < pack && k0 + j < n; j++)
				t[i].e[k0 + j] = elems[j];
		}
	}
	for (int i = 0; i < nr; i++)
		L->vals[op->results[i]->id] = t[i];
}
