/* shared.c: the shared-memory scratch: pinned and transient uses, the
 * barriers between them, element stores and loads. */
#include "lower/lower_int.h"

#include <string.h>

/* ---- shared memory ------------------------------------------------------------------ */

/* bar.sync 0 for the whole program; with warp specialization the
 * consumers' barrier 1 counts them alone (the producer never waits on it). */
static void barrier(Lower *L)
{
	if (L->ws == WS_CONSUMER) {
		LLVMValueRef args[2] = {ci32(L, 1), ci32(L, L->T)};
		lw_call_intrinsic(L, "llvm.nvvm.barrier.sync.cnt", NULL, 0, args, 2);
		return;
	}
	lw_call_intrinsic(L, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
}

/* Shared memory: scratches that must outlive their op (an mma operand
 * read by its dot, a loop's cp.async stages) are pinned at the bottom,
 * below smem_base (lw_smem_pin); every other use is transient and lies above
 * it (lw_smem_take). */
static void need_smem(Lower *L, int bytes)
{
	if (L->smem_base + bytes > L->smem_bytes)
		L->smem_bytes = L->smem_base + bytes;
}

/* Element idx of type t from byte byte_offset of shared memory. */
LLVMValueRef lw_smem_abs(Lower *L, LLVMTypeRef t, int byte_offset, LLVMValueRef idx)
{
	LLVMValueRef base = L->smem;
	if (byte_offset) {
		LLVMValueRef off = ci32(L, byte_offset);
		base = LLVMBuildGEP2(L->b, L->i8, base, &off, 1, "");
	}
	return LLVMBuildGEP2(L->b, t, base, &idx, 1, "");
}

/* Warp-specialized, the base is computed once, in the entry block, by an
 * asm statement that LLVM cannot see through: as a constant, the address
 * is made again in every block that uses it (ptxas reads the CTA's id in
 * the cluster for each), which cost the producer's loop a third of its
 * instructions. Elsewhere the constant stays: a register live through the
 * whole kernel made attention (d64, 4 warps) spill. */
LLVMValueRef lw_smem_addr32(Lower *L, int byte_offset, LLVMValueRef dyn)
{
	if (!L->ws) {
		LLVMValueRef p = lw_smem_abs(L, L->i8, byte_offset, ci32(L, 0));
		LLVMValueRef a = LLVMBuildTrunc(L->b, LLVMBuildPtrToInt(L->b, p, L->i64, ""), L->i32, "");
		return dyn ? LLVMBuildAdd(L->b, a, dyn, "") : a;
	}
	if (!L->smem32) {
		LLVMValueRef p = LLVMBuildPtrToInt(L->pro, L->smem, L->i64, "");
		LLVMTypeRef ft = LLVMFunctionType(L->i32, &L->i64, 1, 0);
		static const char text[] = "cvt.u32.u64 $0, $1;", cons[] = "=r,l";
		LLVMValueRef fn = LLVMGetInlineAsm(ft, text, sizeof text - 1, cons, sizeof cons - 1, 0, 0,
		                                   LLVMInlineAsmDialectATT, 0);
		L->smem32 = LLVMBuildCall2(L->pro, ft, fn, &p, 1, "smem32");
	}
	LLVMValueRef a = byte_offset ? LLVMBuildAdd(L->b, L->smem32, ci32(L, byte_offset), "") : L->smem32;
	return dyn ? LLVMBuildAdd(L->b, a, dyn, "") : a;
}

/* The same, byte_offset from the transient uses' base. */
LLVMValueRef lw_smem_at(Lower *L, LLVMTypeRef t, int byte_offset, LLVMValueRef idx)
{
	return lw_smem_abs(L, t, byte_offset + L->smem_base, idx);
}

/* Pins bytes below the transient uses (until smem_base is lowered again);
 * returns where they start. */
int lw_smem_pin(Lower *L, int bytes)
{
	int at = L->smem_base;
	L->smem_base += bytes;
	need_smem(L, 0);
	return at;
}

int lw_smem_pin_aligned(Lower *L, int bytes, int align)
{
	L->smem_base = (L->smem_base + align - 1) & ~(align - 1);
	L->wgmma_used = true;
	return lw_smem_pin(L, (bytes + align - 1) & ~(align - 1));
}

/* A scratch kept for good (a wgmma operand hoisted out of its loops) may
 * lie above what an earlier pin frees (the stage buffers of a loop before,
 * pinned first): freeing stops below it, or the next pin would overwrite
 * what later dots still read. The bytes between are a hole that the next
 * loop's stage buffers take where they fit (lw_smem_pin_stages). */
void lw_smem_release(Lower *L, int to)
{
	if (to < L->smem_floor) {
		if (L->hole_end > to && to >= L->hole_start) {
			if (to < L->hole_lo)
				L->hole_lo = to;
		} else if (L->n_kept <= 8 && (L->hole_end == 0 || L->hole_lo == L->hole_start)) {
			int end = L->smem_floor; /* the first kept scratch above `to` */
			for (int i = 0; i < L->n_kept; i++)
				if (L->kept_at[i] >= to && L->kept_at[i] < end)
					end = L->kept_at[i];
			L->hole_start = L->hole_lo = to;
			L->hole_end = end;
		}
		to = L->smem_floor;
	}
	if (to < L->smem_base)
		L->smem_base = to;
}

void lw_smem_keep(Lower *L, int at)
{
	if (L->n_kept < 8)
		L->kept_at[L->n_kept] = at;
	L->n_kept += L->n_kept <= 8;
	L->smem_floor = L->smem_base;
}

int lw_smem_pin_stages(Lower *L, int bytes, int align)
{
	int at = (L->hole_lo + align - 1) & ~(align - 1);
	if (L->hole_end > 0 && at + bytes <= L->hole_end) {
		L->hole_lo = at + bytes;
		if (align > 1)
			L->wgmma_used = true;
		return at;
	}
	return align > 1 ? lw_smem_pin_aligned(L, bytes, align) : lw_smem_pin(L, bytes);
}

void lw_smem_barrier(Lower *L)
{
	barrier(L);
	L->smem_dirty = 0;
	L->smem_unsynced = false;
}

/* Transient shared memory: each use (write, barrier, read) takes the next
 * bytes after what may have been touched since the last barrier, so that
 * it needs no barrier of its own before it writes; when those bytes would
 * grow the kernel's shared memory past what it already uses (or 4 KB), or
 * what came before is not known (the start of a loop's body, after an if),
 * it starts again at the bottom behind a barrier. Returns the offset from
 * smem_base (what lw_smem_at takes). */
int lw_smem_take(Lower *L, int bytes)
{
	bytes = (bytes + 15) & ~15;
	int base = L->smem_base;
	int room = L->smem_bytes > base + 4096 ? L->smem_bytes : base + 4096;
	int start = L->smem_dirty < 0 ? -1 : L->smem_dirty > base ? L->smem_dirty : base;
	if (start < 0 || start + bytes > room) {
		lw_smem_barrier(L);
		start = base;
	}
	L->smem_dirty = start + bytes;
	need_smem(L, start - base + bytes);
	return start - base;
}

/* The barrier between a use's writes and its reads (of bytes at off). */
void lw_smem_sync(Lower *L, int off, int bytes)
{
	lw_smem_barrier(L);
	L->smem_dirty = L->smem_base + off + ((bytes + 15) & ~15);
}

/* Where what came before is not known (region boundaries). */
void lw_smem_unknown(Lower *L)
{
	if (L->smem_unsynced)
		lw_smem_barrier(L);
	L->smem_dirty = -1;
}

LLVMValueRef lw_to_mem(Lower *L, Type t, LLVMValueRef v)
{
	return !t.ptr && t.scalar == SK_I1 ? LLVMBuildZExt(L->b, v, L->i8, "") : v;
}

LLVMValueRef lw_from_mem(Lower *L, Type t, LLVMValueRef v)
{
	return !t.ptr && t.scalar == SK_I1 ? LLVMBuildTrunc(L->b, v, L->i1, "") : v;
}

/* *p = v where pred holds, as one predicated st.shared: no branch, so the
 * kernel stays in fewer basic blocks, each of which costs the code
 * generator a DAG of its own. */
void lw_smem_store_if(Lower *L, LLVMValueRef pred, LLVMValueRef p, LLVMValueRef v)
{
	if (LLVMIsAConstantInt(pred) && LLVMConstIntGetZExtValue(pred)) {
		LLVMBuildStore(L->b, v, p);
		return;
	}
	LLVMTypeRef t = LLVMTypeOf(v);
	LLVMTypeKind k = LLVMGetTypeKind(t);
	int bits = k == LLVMIntegerTypeKind ? (int)LLVMGetIntTypeWidth(t) : k == LLVMDoubleTypeKind ? 64
	         : k == LLVMFloatTypeKind ? 32 : k == LLVMPointerTypeKind ? 64 : 16;
	LLVMValueRef w = k == LLVMIntegerTypeKind ? v
	               : k == LLVMPointerTypeKind ? LLVMBuildPtrToInt(L->b, v, L->i64, "") /* a pointer tile */
	                                          : LLVMBuildBitCast(L->b, v, LLVMIntTypeInContext(L->c, (unsigned)bits), "");
	if (bits < 16) /* bytes travel in 16-bit registers */
		w = LLVMBuildZExt(L->b, w, L->i16, "");
	char text[64], cons[16];
	snprintf(text, sizeof text, "@$0 st.shared.b%d [$1], $2;", bits);
	snprintf(cons, sizeof cons, "b,l,%s", bits == 64 ? "l" : bits == 32 ? "r" : "h");
	LLVMTypeRef args_t[3] = {L->i1, LLVMTypeOf(p), LLVMTypeOf(w)};
	LLVMValueRef args[3] = {pred, p, w};
	LLVMTypeRef ft = LLVMFunctionType(L->vd, args_t, 3, 0);
	LLVMValueRef a = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	LLVMBuildCall2(L->b, ft, a, args, 3, "");
}

/* Writes this thread's elements of x (tile v) to shared memory at
 * byte_offset (taken with lw_smem_take), by linear index; replicas write once. */
void lw_smem_store_block(Lower *L, const Value *x, const Tile *v, int byte_offset)
{
	Type t = x->type;
	const Lin *l = lw_lin_of(L, x);
	LLVMTypeRef mt = lw_mem_type(L, t);
	LLVMValueRef own = owner_of(L, l);
	/* a uniform tile (a splat) holds one element for all the block's */
	for (int k = 0, n = 1 << l->n_reg; k < n; k++)
		lw_smem_store_if(L, own, lw_smem_at(L, mt, byte_offset, lw_index_of(L, l, k)), lw_to_mem(L, t, v->n == 1 ? v->e[0] : v->e[k]));
}

LLVMValueRef lw_smem_load(Lower *L, Type t, int byte_offset, LLVMValueRef idx)
{
	LLVMTypeRef mt = lw_mem_type(L, t);
	return lw_from_mem(L, t, LLVMBuildLoad2(L->b, mt, lw_smem_at(L, mt, byte_offset, idx), ""));
}
