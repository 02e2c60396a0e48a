/* lower/histogram.c: histogram(x, num_bins, mask) as counts in shared
 * memory: the bins zeroed (each thread its share), a barrier, each element
 * in range and not masked off added by its first holder with one
 * predicated red.shared.add.u32, a barrier, then each thread reads the
 * counts of the result's layout. Merging the programs' counts is the
 * kernel's own atomic_add of the result. More bins than HIST_PART_BINS
 * (more shared memory than a program should take) are counted a part at
 * a time: each part a pass over the elements. */
#include "lower/lower_int.h"

#include <string.h>

/* @pred red.shared.add.u32 [p], 1 (no branch around it). */
static void red_add_if(Lower *L, LLVMValueRef pred, LLVMValueRef p)
{
	static const char text[] = "@$0 red.shared.add.u32 [$1], 1;";
	LLVMTypeRef at[2] = {L->i1, LLVMTypeOf(p)};
	LLVMValueRef args[2] = {pred, p};
	LLVMTypeRef ft = LLVMFunctionType(L->vd, at, 2, 0);
	LLVMValueRef a = LLVMGetInlineAsm(ft, (char *)text, strlen(text), (char *)"b,l,~{memory}", strlen("b,l,~{memory}"), 1, 0,
	                                  LLVMInlineAsmDialectATT, 0);
	LLVMBuildCall2(L->b, ft, a, args, 2, "");
}

/* One part of the bins, [base, base + n): zeroed, counted, and the
 * result's registers whose bin lies in it read (others left as they are). */
static void count_part(Lower *L, const Op *op, int base, int n, Tile *out)
{
	const Value *x = op->operands[0], *m = op->n_operands > 1 ? op->operands[1] : NULL;
	int bins = (int)op->attr[0], bytes = n * 4;
	bool whole = n == bins;
	Type t = x->type;
	const Lin *li = lw_lin_of(L, x), *lo = lw_lin_of(L, op->results[0]);
	int off = lw_smem_take(L, bytes);
	for (int i = 0; i < n; i += L->T) {
		LLVMValueRef at = LLVMBuildAdd(L->b, L->tid, ci32(L, i), "");
		LLVMValueRef in = n - i >= L->T ? LLVMConstInt(L->i1, 1, 0) : LLVMBuildICmp(L->b, LLVMIntULT, at, ci32(L, n), "");
		lw_smem_store_if(L, in, lw_smem_at(L, L->i32, off, at), ci32(L, 0));
	}
	lw_smem_sync(L, off, bytes);
	/* a negative value is a large unsigned one: out of range either way */
	int bits = scalar_bits((ScalarKind)t.scalar);
	LLVMTypeRef wt = bits > 32 ? L->i64 : L->i32;
	LLVMValueRef own = owner_of(L, li);
	for (int k = 0, ne = 1 << li->n_reg; k < ne; k++) {
		LLVMValueRef v = el(L, x, k);
		if (bits < 32)
			v = is_signed(t) ? LLVMBuildSExt(L->b, v, wt, "") : LLVMBuildZExt(L->b, v, wt, "");
		if (!whole)
			v = LLVMBuildSub(L->b, v, LLVMConstInt(wt, (unsigned)base, 0), "");
		LLVMValueRef ok = LLVMBuildICmp(L->b, LLVMIntULT, v, LLVMConstInt(wt, (unsigned)n, 0), "");
		ok = LLVMBuildAnd(L->b, ok, own, "");
		if (m)
			ok = LLVMBuildAnd(L->b, ok, el(L, m, k), "");
		LLVMValueRef bin = bits > 32 ? LLVMBuildTrunc(L->b, v, L->i32, "") : v;
		bin = LLVMBuildSelect(L->b, ok, bin, ci32(L, 0), "");
		red_add_if(L, ok, lw_smem_at(L, L->i32, off, bin));
	}
	lw_smem_sync(L, off, bytes);
	for (int k = 0; k < out->n && !L->failed; k++) {
		if (whole) {
			out->e[k] = LLVMBuildLoad2(L->b, L->i32, lw_smem_at(L, L->i32, off, lw_index_of(L, lo, k)), "");
			continue;
		}
		/* the bin of register k, in this part or not (the thread decides) */
		LLVMValueRef b = LLVMBuildSub(L->b, lw_index_of(L, lo, k), ci32(L, base), "");
		LLVMValueRef in = LLVMBuildICmp(L->b, LLVMIntULT, b, ci32(L, n), "");
		LLVMValueRef at = LLVMBuildSelect(L->b, in, b, ci32(L, 0), "");
		LLVMValueRef got = LLVMBuildLoad2(L->b, L->i32, lw_smem_at(L, L->i32, off, at), "");
		out->e[k] = LLVMBuildSelect(L->b, in, got, out->e[k], "");
	}
}

void lower_histogram(Lower *L, const Op *op)
{
	const Value *r = op->results[0];
	int bins = (int)op->attr[0], part = bins < HIST_PART_BINS ? bins : HIST_PART_BINS;
	Tile out = lw_tile_new(L, 1 << lw_lin_of(L, r)->n_reg);
	for (int k = 0; k < out.n && !L->failed; k++)
		out.e[k] = ci32(L, 0);
	for (int base = 0; base < bins && !L->failed; base += part)
		count_part(L, op, base, part, &out);
	L->vals[r->id] = out;
}
