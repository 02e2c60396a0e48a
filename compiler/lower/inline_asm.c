/* inline_asm.c: element-wise inline PTX (inline_asm_elementwise): the text
 * runs once for each element a thread holds, with the operands' elements
 * of that register as its inputs and the results' as its outputs. */
#include "lower/lower_int.h"

#include <string.h>

void lower_inline_asm(Lower *L, const Op *op)
{
	int nr = op->n_results, no = op->n_operands;
	if (nr > 16 || no > 64) {
		lw_fail(L, op->loc, "%s", "inline_asm with more than 16 results or 64 operands");
		return;
	}
	LLVMTypeRef rt[16], at[64];
	for (int i = 0; i < nr; i++)
		rt[i] = lw_elem_type(L, type_elem(op->results[i]->type));
	for (int i = 0; i < no; i++)
		at[i] = lw_elem_type(L, type_elem(op->operands[i]->type));
	LLVMTypeRef ret = nr == 1 ? rt[0] : LLVMStructTypeInContext(L->c, rt, (unsigned)nr, 0);
	LLVMTypeRef ft = LLVMFunctionType(ret, at, (unsigned)no, 0);
	/* not pure: volatile (kept, in order); pure ones may be merged or dropped */
	LLVMValueRef fn = LLVMGetInlineAsm(ft, op->str, strlen(op->str), (char *)op->str2, strlen(op->str2),
	                                   !op->attr[0], 0, LLVMInlineAsmDialectATT, 0);
	int n = ept(L, op->results[0]);
	bool uniform = true; /* scalars, or splats: one instance for all */
	for (int i = 0; i < no; i++)
		uniform = uniform && val(L, op->operands[i])->n == 1;
	if (uniform && op->attr[0])
		n = 1;
	Tile t[16];
	for (int i = 0; i < nr; i++)
		if (t[i] = lw_tile_new(L, n), L->failed)
			return;
	for (int k = 0; k < n; k++) {
		LLVMValueRef args[64];
		for (int i = 0; i < no; i++)
			args[i] = el(L, op->operands[i], k);
		LLVMValueRef r = LLVMBuildCall2(L->b, ft, fn, args, (unsigned)no, "");
		for (int i = 0; i < nr; i++)
			t[i].e[k] = nr == 1 ? r : LLVMBuildExtractValue(L->b, r, (unsigned)i, "");
	}
	for (int i = 0; i < nr; i++)
		L->vals[op->results[i]->id] = t[i];
}
