/* reduce.c: reductions (registers, then lanes by butterfly shuffles, then
 * warps through shared memory), and the combine and shuffle helpers that
 * scans (scan.c) share. */
#include "lower/lower_int.h"

#include <stdio.h>
#include <string.h>

/* Runs a combine region on scalars a[0..n) and b[0..n) (one element each),
 * leaving the n results in out. */
void lw_combine(Lower *L, const Region *r, int n, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *out)
{
	for (int i = 0; i < n; i++) {
		Tile ta = lw_tile_new(L, 1), tb = lw_tile_new(L, 1);
		if (L->failed)
			return;
		ta.e[0] = a[i];
		tb.e[0] = b[i];
		L->vals[r->args[i]->id] = ta;
		L->vals[r->args[n + i]->id] = tb;
	}
	lower_region(L, r);
	const Op *y = terminator(r);
	for (int i = 0; i < n && !L->failed; i++)
		out[i] = val(L, y->operands[i])->e[0];
}

/* shfl.sync.MODE (bfly, up, down, idx) of v, of any element type, with
 * lane operand b (i32) over the whole warp. */
LLVMValueRef lw_shfl(Lower *L, const char *mode, LLVMValueRef v, LLVMValueRef b)
{
	LLVMTypeRef t = LLVMTypeOf(v);
	LLVMValueRef full = LLVMConstInt(L->i32, 0xFFFFFFFFu, 0);
	LLVMValueRef clamp = ci32(L, strcmp(mode, "up") ? 31 : 0); /* up counts from lane 0, the others clamp at 31 */
	char name[48];
	if (t == L->f32) { /* the f32 form: no bitcasts for the code generator to fold */
		LLVMValueRef a[4] = {full, v, b, clamp};
		snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.f32", mode);
		return lw_call_intrinsic(L, name, NULL, 0, a, 4);
	}
	snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.i32", mode);
	unsigned bits = LLVMGetTypeKind(t) == LLVMPointerTypeKind ? 64 : LLVMGetTypeKind(t) == LLVMIntegerTypeKind
	                                                                 ? LLVMGetIntTypeWidth(t)
	                                                                 : t == L->f64 ? 64 : t == L->f32 ? 32 : 16;
	LLVMValueRef as_int = LLVMGetTypeKind(t) == LLVMPointerTypeKind ? LLVMBuildPtrToInt(L->b, v, L->i64, "")
	                      : LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? v
	                      : LLVMBuildBitCast(L->b, v, LLVMIntTypeInContext(L->c, bits), "");
	LLVMValueRef r;
	if (bits == 64) {
		LLVMValueRef lo = LLVMBuildTrunc(L->b, as_int, L->i32, "");
		LLVMValueRef hi = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, as_int, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
		LLVMValueRef a1[4] = {full, lo, b, clamp};
		LLVMValueRef a2[4] = {full, hi, b, clamp};
		lo = lw_call_intrinsic(L, name, NULL, 0, a1, 4);
		hi = lw_call_intrinsic(L, name, NULL, 0, a2, 4);
		r = LLVMBuildOr(L->b, LLVMBuildZExt(L->b, lo, L->i64, ""),
		                LLVMBuildShl(L->b, LLVMBuildZExt(L->b, hi, L->i64, ""), LLVMConstInt(L->i64, 32, 0), ""), "");
	} else {
		LLVMValueRef x = bits < 32 ? LLVMBuildZExt(L->b, as_int, L->i32, "") : as_int;
		LLVMValueRef a[4] = {full, x, b, clamp};
		r = lw_call_intrinsic(L, name, NULL, 0, a, 4);
		if (bits < 32)
			r = LLVMBuildTrunc(L->b, r, LLVMIntTypeInContext(L->c, bits), "");
	}
	if (LLVMGetTypeKind(t) == LLVMPointerTypeKind)
		return LLVMBuildIntToPtr(L->b, r, t, "");
	return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(L->b, r, t, "");
}

/* Reduces along the op's axis: the registers of each thread, then lanes
 * by butterfly shuffles, then warps through shared memory. What is left is
 * laid out as the slice of the operand's map (ls); when the results' map
 * differs, or warps took part, the last step reads them in their own map
 * from shared memory. */
void lower_reduce(Lower *L, const Op *op)
{
	int n = op->n_operands, axis = (int)op->attr[0];
	if (n > MAX_REDUCE_OPERANDS) {
		lw_fail(L, op->loc, "%s of more than 8 blocks", op_name(op->code));
		return;
	}
	const Region *r = &op->regions[0];
	Type in_t = op->operands[0]->type;
	const Lin *li = lw_lin_of(L, op->operands[0]);
	int lo_bit = lin_bit(in_t, axis, 0), nbits = log2i(in_t.shape[axis]);
	unsigned amask = ((1u << nbits) - 1) << lo_bit;
	/* ls: the operand's map without the axis (its result's slice) */
	Lin ls;
	lin_slice(li, in_t, axis, &ls);
	unsigned axis_warps = 0; /* thread-id bits of warps along the axis */
	int n_axis_warps = 0;
	for (int i = 0; i < li->n_warp; i++)
		if (li->warp[i] >= 0 && (amask >> li->warp[i] & 1)) {
			axis_warps |= 1u << (5 + i);
			n_axis_warps++;
		}
	int n_acc = 1 << ls.n_reg;
	LLVMValueRef *acc = arena_alloc(&L->arena, (size_t)(n_acc * n) * sizeof *acc);
	bool *have = arena_alloc(&L->arena, (size_t)n_acc * sizeof *have);
	if (!acc || !have) {
		L->failed = true;
		return;
	}
	memset(have, 0, (size_t)n_acc * sizeof *have);
	LLVMValueRef nxt[MAX_REDUCE_OPERANDS], res[MAX_REDUCE_OPERANDS];
	for (int k = 0, n_in = 1 << li->n_reg; k < n_in && !L->failed; k++) {
		int c = lw_reg_const(li, k) & (int)~amask;
		int ks = lw_reg_index(&ls, (c & ((1 << lo_bit) - 1)) | ((c >> nbits) & ~((1 << lo_bit) - 1)));
		LLVMValueRef *a = acc + ks * n;
		if (!have[ks]) {
			for (int i = 0; i < n; i++)
				a[i] = el(L, op->operands[i], k);
			have[ks] = true;
			continue;
		}
		for (int i = 0; i < n; i++)
			nxt[i] = el(L, op->operands[i], k);
		lw_combine(L, r, n, a, nxt, res);
		memcpy(a, res, sizeof(LLVMValueRef) * (size_t)n);
	}
	for (int b = 4; b >= 0 && !L->failed; b--) {
		if (li->lane[b] < 0 || !(amask >> li->lane[b] & 1))
			continue;
		for (int ks = 0; ks < n_acc && !L->failed; ks++) {
			LLVMValueRef *a = acc + ks * n;
			for (int i = 0; i < n; i++)
				nxt[i] = lw_shfl(L, "bfly", a[i], ci32(L, 1 << b));
			lw_combine(L, r, n, a, nxt, res);
			memcpy(a, res, sizeof(LLVMValueRef) * (size_t)n);
		}
	}
	if (L->failed)
		return;
	const Value *out0 = op->results[0];
	const Lin *lo = lw_lin_of(L, out0);
	bool same = memcmp(lo->lane, ls.lane, 5) == 0 && memcmp(lo->warp, ls.warp, (size_t)ls.n_warp) == 0 &&
	            lo->n_reg == ls.n_reg;
	for (int i = 0; same && i < lo->n_reg; i++) {
		bool found = false;
		for (int j = 0; j < ls.n_reg; j++)
			found |= ls.reg[j] == lo->reg[i];
		same = found;
	}
	int n_out = 1 << lo->n_reg;
	Tile outs[MAX_REDUCE_OPERANDS];
	for (int i = 0; i < n; i++)
		outs[i] = lw_tile_new(L, n_out);
	if (L->failed)
		return;
	if (same && !n_axis_warps) {
		for (int k = 0; k < n_out; k++)
			for (int i = 0; i < n; i++)
				outs[i].e[k] = acc[lw_reg_index(&ls, lw_reg_const(lo, k)) * n + i];
	} else {
		/* partials by (result element, warp along the axis) */
		int G = 1 << n_axis_warps, N = out0->type.rank ? numel(out0->type) : 1;
		int off = 0, offs[MAX_REDUCE_OPERANDS];
		for (int i = 0; i < n; i++) {
			offs[i] = off;
			off += (N * G * type_bytes(op->operands[i]->type) + 15) & ~15;
		}
		int base = lw_smem_take(L, off);
		for (int i = 0; i < n; i++)
			offs[i] += base;
		LLVMValueRef g = ci32(L, 0);
		for (int i = 5, j = 0; i < 5 + li->n_warp; i++)
			if (axis_warps >> i & 1) {
				LLVMValueRef bit = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, L->tid, ci32(L, i), ""), ci32(L, 1), "");
				g = LLVMBuildOr(L->b, g, LLVMBuildShl(L->b, bit, ci32(L, j++), ""), "");
			}
		/* one writer per partial: the first of its replicas, warps along the axis apart */
		LLVMValueRef writer = lw_tid_bits_zero(L, lw_repl_mask(&ls) & ~axis_warps);
		for (int ks = 0; ks < n_acc; ks++) {
			LLVMValueRef slot = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, lw_index_of(L, &ls, ks), ci32(L, G), ""), g, "");
			for (int i = 0; i < n; i++) {
				Type t = type_elem(op->operands[i]->type);
				lw_smem_store_if(L, writer, lw_smem_at(L, lw_mem_type(L, t), offs[i], slot), lw_to_mem(L, t, acc[ks * n + i]));
			}
		}
		lw_smem_sync(L, base, off);
		/* each element's G partials are adjacent: read them V at a time,
		 * up to 16 bytes a load where the scratch's alignment allows */
		int V[MAX_REDUCE_OPERANDS];
		for (int i = 0; i < n; i++) {
			int eb = type_bytes(type_elem(op->operands[i]->type));
			for (V[i] = G; V[i] > 1 && (V[i] * eb > 16 || (L->smem_base + offs[i]) % (V[i] * eb)); V[i] /= 2)
				;
		}
		LLVMValueRef *part = arena_alloc(&L->arena, (size_t)(G * n) * sizeof *part);
		for (int k = 0; k < n_out && part && !L->failed; k++) {
			LLVMValueRef idx = lw_index_of(L, lo, k);
			for (int i = 0; i < n; i++) {
				Type t = type_elem(op->operands[i]->type);
				LLVMTypeRef vt = LLVMVectorType(lw_mem_type(L, t), (unsigned)V[i]);
				LLVMValueRef vidx = LLVMBuildMul(L->b, idx, ci32(L, G / V[i]), "");
				for (int w = 0; w < G; w += V[i]) {
					LLVMValueRef slot = w ? LLVMBuildAdd(L->b, vidx, ci32(L, w / V[i]), "") : vidx;
					if (V[i] == 1) {
						part[w * n + i] = lw_smem_load(L, t, offs[i], slot);
						continue;
					}
					LLVMValueRef v = LLVMBuildLoad2(L->b, vt, lw_smem_at(L, vt, offs[i], slot), "");
					for (int j = 0; j < V[i]; j++)
						part[(w + j) * n + i] = lw_from_mem(L, t, LLVMBuildExtractElement(L->b, v, ci32(L, j), ""));
				}
			}
			LLVMValueRef a[MAX_REDUCE_OPERANDS];
			memcpy(a, part, sizeof(LLVMValueRef) * (size_t)n);
			for (int w = 1; w < G && !L->failed; w++) {
				lw_combine(L, r, n, a, part + w * n, res);
				memcpy(a, res, sizeof(LLVMValueRef) * (size_t)n);
			}
			for (int i = 0; i < n; i++)
				outs[i].e[k] = a[i];
		}
		if (!part)
			L->failed = true;
	}
	for (int i = 0; i < n; i++)
		L->vals[op->results[i]->id] = outs[i];
}
