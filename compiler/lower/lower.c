/* lower.c: GPU IR to LLVM IR for NVPTX.
 *
 * Layout. Every block value carries an encoding (layout.c), which this file
 * reads as a bit map (Lin): element k of a thread's registers is the one
 * whose linear index has the register bits of k, the lane bits and the
 * warp bits placed where the map says. Per thread, a block value is an
 * array of LLVM scalars, one per register. Element-wise ops work register
 * by register (their operands share the result's encoding); shape ops and
 * conversions whose lane and warp bits agree only rename registers; the
 * others go through shared memory, conversions with a swizzled scratch.
 * Reductions combine registers, then lanes with butterfly shuffles, then
 * warps through shared memory. A dot whose operands are dot_operand
 * encodings of an mma accumulator issues mma.sync; other dots use FMAs.
 *
 * Structured control flow becomes basic blocks with phis; all conditions
 * are scalars, so all threads of a program take the same path and barriers
 * inside loops and branches are safe. */
#include "lower/lower.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

enum { MAX_REDUCE_OPERANDS = 8 };

typedef struct Tile {
	LLVMValueRef *e; /* the elements this thread holds */
	int n;
} Tile;

typedef struct Lower {
	Arena arena;      /* element arrays of tiles */
	const IrFunc *f;
	AxisInfo *ax;     /* by value id */
	Lin *lins;        /* by value id, filled on first use */
	bool *lin_done;
	Lin scalar_lin;   /* held by every thread */
	struct ThreadPart { Lin l; LLVMValueRef v; } *tparts; /* thread bits of an index, per map */
	int n_tparts, cap_tparts;
	LLVMBuilderRef pro; /* at the end of the entry block, before its branch */
	int smem_base;      /* bytes of shared memory pinned below the transient uses */
	int smem_dirty;     /* bytes from 0 that may have been touched since the last barrier; -1: unknown */
	bool smem_unsynced; /* a pinned scratch written and no barrier since: one before reading it */
	bool async_pending; /* cp.async copies issued, not committed yet */
	bool async_synced;  /* the copies a conversion reads waited for since the last commit */
	struct LazyFrags **lazy; /* by value id: an mma operand read from its scratch when the dot needs it */
	struct AsyncTile *async; /* dot tiles a loop carries through shared memory with cp.async */
	int n_async;
	Diag *diag;
	bool failed;
	LLVMContextRef c;
	LLVMModuleRef m;
	LLVMBuilderRef b;
	LLVMValueRef fn;
	Tile *vals;       /* by value id */
	int T;            /* threads */
	LLVMValueRef tid; /* i32 */
	LLVMValueRef smem; /* dynamic shared memory, addrspace(3) */
	int smem_bytes;
	int n_asserts;
	LLVMMetadataRef scope; /* the kernel's debug subprogram: ops carry .tile lines */
	LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, f64, gptr, sptr, vd;
} Lower;

static void fail(Lower *L, Span at, const char *fmt, const char *what)
{
	if (!L->failed)
		diag_report(L->diag, DIAG_ERROR, at, fmt, what);
	L->failed = true;
}

/* ---- types and layout ----------------------------------------------------------- */

static LLVMTypeRef elem_type(Lower *L, Type t)
{
	if (t.ptr)
		return L->gptr;
	switch ((ScalarKind)t.scalar) {
	case SK_I1: return L->i1;
	case SK_I8: case SK_U8: case SK_F8E4M3: case SK_F8E5M2: return L->i8;
	case SK_I16: case SK_U16: return L->i16;
	case SK_I32: case SK_U32: return L->i32;
	case SK_I64: case SK_U64: return L->i64;
	case SK_F16: return L->f16;
	case SK_BF16: return L->bf16;
	case SK_F32: return L->f32;
	default: return L->f64;
	}
}

/* The type a value takes in shared memory (i1 as a byte). */
static LLVMTypeRef mem_type(Lower *L, Type t)
{
	return !t.ptr && t.scalar == SK_I1 ? L->i8 : elem_type(L, t);
}

static int numel(Type t) { return (int)type_numel(t); }

static LLVMValueRef ci32(Lower *L, long long v) { return LLVMConstInt(L->i32, (unsigned long long)v, 1); }

/* Coordinate d of linear index idx in shape t (powers of two). */
static LLVMValueRef coord(Lower *L, Type t, LLVMValueRef idx, int d)
{
	int shift = 0;
	for (int i = d + 1; i < t.rank; i++)
		shift += log2i(t.shape[i]);
	LLVMValueRef v = shift ? LLVMBuildLShr(L->b, idx, ci32(L, shift), "") : idx;
	return LLVMBuildAnd(L->b, v, ci32(L, t.shape[d] - 1), "");
}

/* Linear index of coordinates c in shape t. */
static LLVMValueRef linearize(Lower *L, Type t, LLVMValueRef *c)
{
	LLVMValueRef idx = ci32(L, 0);
	for (int d = 0; d < t.rank; d++) {
		idx = LLVMBuildShl(L->b, idx, ci32(L, log2i(t.shape[d])), "");
		idx = LLVMBuildOr(L->b, idx, c[d], "");
	}
	return idx;
}

static Tile tile_new(Lower *L, int n)
{
	Tile t = {.n = n};
	t.e = arena_alloc(&L->arena, (size_t)(n ? n : 1) * sizeof *t.e);
	if (!t.e)
		L->failed = true;
	return t;
}

static Tile *val(Lower *L, const Value *v) { return &L->vals[v->id]; }

/* Element k of value v, for an op whose result has `count` elements a
 * thread: scalars are uniform, so element 0 serves every k. */
static LLVMValueRef el(Lower *L, const Value *v, int k)
{
	Tile *t = val(L, v);
	return t->n == 1 ? t->e[0] : t->e[k];
}

/* ---- layouts ------------------------------------------------------------------- */

static const Lin *lin_of(Lower *L, const Value *v)
{
	if (!v->type.rank)
		return &L->scalar_lin;
	if (!L->lin_done[v->id]) {
		L->lin_done[v->id] = true;
		if (!v->enc || !enc_lin(v->enc, v->type, L->f->num_warps, &L->lins[v->id])) {
			fail(L, v->def ? v->def->loc : L->f->loc, "internal error: %s without a layout on the GPU",
			     "a block");
			L->lins[v->id] = L->scalar_lin;
		}
	}
	return &L->lins[v->id];
}

/* Registers a thread holds of v. */
static int ept(Lower *L, const Value *v) { return 1 << lin_of(L, v)->n_reg; }

/* The linear-index bits that register k sets. */
static int reg_const(const Lin *l, int k)
{
	int c = 0;
	for (int i = 0; i < l->n_reg; i++)
		if (k >> i & 1)
			c |= 1 << l->reg[i];
	return c;
}

/* The register that holds the element whose register bits are c. */
static int reg_index(const Lin *l, int c)
{
	int k = 0;
	for (int i = 0; i < l->n_reg; i++)
		if (c >> l->reg[i] & 1)
			k |= 1 << i;
	return k;
}

/* The bits of the thread id that do not change which element (replicas). */
static unsigned repl_mask(const Lin *l)
{
	unsigned m = 0;
	for (int i = 0; i < 5; i++)
		if (l->lane[i] < 0)
			m |= 1u << i;
	for (int i = 0; i < l->n_warp; i++)
		if (l->warp[i] < 0)
			m |= 1u << (5 + i);
	return m;
}

/* The linear-index bits this thread's lane and warp set (i32), computed
 * once per map in the entry block. */
static LLVMValueRef thread_part(Lower *L, const Lin *l)
{
	for (int i = 0; i < L->n_tparts; i++) {
		const Lin *o = &L->tparts[i].l;
		if (memcmp(o->lane, l->lane, 5) == 0 && o->n_warp == l->n_warp &&
		    memcmp(o->warp, l->warp, (size_t)l->n_warp) == 0)
			return L->tparts[i].v;
	}
	/* the thread-id bits that move by the same shift go together: one
	 * and, one shift (none for the identity map of a whole tid) */
	LLVMValueRef v = NULL;
	unsigned done = 0;
	for (int i = 0; i < 5 + l->n_warp; i++) {
		int to = i < 5 ? l->lane[i] : l->warp[i - 5];
		if (to < 0 || done >> i & 1)
			continue;
		unsigned m = 0;
		for (int j = i; j < 5 + l->n_warp; j++) {
			int tj = j < 5 ? l->lane[j] : l->warp[j - 5];
			if (tj >= 0 && tj - j == to - i)
				m |= 1u << j;
		}
		done |= m;
		LLVMValueRef part = m == (unsigned)(L->T - 1) ? L->tid : LLVMBuildAnd(L->pro, L->tid, ci32(L, m), "");
		part = to > i ? LLVMBuildShl(L->pro, part, ci32(L, to - i), "")
		     : to < i ? LLVMBuildLShr(L->pro, part, ci32(L, i - to), "") : part;
		v = v ? LLVMBuildOr(L->pro, v, part, "") : part;
	}
	if (!v)
		v = ci32(L, 0);
	if (L->n_tparts == L->cap_tparts) {
		int cap = L->cap_tparts ? 2 * L->cap_tparts : 16;
		struct ThreadPart *n = realloc(L->tparts, (size_t)cap * sizeof *n);
		if (!n) {
			L->failed = true;
			return v;
		}
		L->tparts = n;
		L->cap_tparts = cap;
	}
	L->tparts[L->n_tparts].l = *l;
	L->tparts[L->n_tparts++].v = v;
	return v;
}

/* The linear index (i32) of register k of this thread in map l. */
static LLVMValueRef index_of(Lower *L, const Lin *l, int k)
{
	int c = reg_const(l, k);
	LLVMValueRef t = thread_part(L, l);
	return c ? LLVMBuildOr(L->b, t, ci32(L, c), "") : t;
}

/* Whether the thread-id bits in m are all 0 here (i1; the constant true
 * when m is empty). */
static LLVMValueRef tid_bits_zero(Lower *L, unsigned m)
{
	m &= (unsigned)(L->T - 1);
	if (!m)
		return LLVMConstInt(L->i1, 1, 0);
	return LLVMBuildICmp(L->b, LLVMIntEQ, LLVMBuildAnd(L->b, L->tid, ci32(L, (long long)m), ""), ci32(L, 0), "");
}

/* Whether this thread is the first of the replicas of what it holds. */
static LLVMValueRef owner_of(Lower *L, const Lin *l) { return tid_bits_zero(L, repl_mask(l)); }

/* ---- intrinsics and inline PTX ----------------------------------------------------- */

static LLVMValueRef call_intrinsic(Lower *L, const char *name, LLVMTypeRef *over, int n_over, LLVMValueRef *args,
                                   int n_args)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(L->m, id, over, (size_t)n_over);
	LLVMTypeRef ft = LLVMIntrinsicGetType(L->c, id, over, (size_t)n_over);
	return LLVMBuildCall2(L->b, ft, fn, args, (unsigned)n_args, "");
}

static LLVMValueRef sreg(Lower *L, const char *name)
{
	return call_intrinsic(L, name, NULL, 0, NULL, 0);
}

static void barrier(Lower *L)
{
	call_intrinsic(L, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
}

/* An f32 PTX approximation through its NVVM intrinsic ("ex2" is
 * llvm.nvvm.ex2.approx.f: ex2.approx.f32), cheaper for the code generator
 * than the same instruction as inline PTX, and free for LLVM to number and
 * hoist. */
static LLVMValueRef approx_f32(Lower *L, const char *fn, LLVMValueRef x)
{
	char name[64];
	snprintf(name, sizeof name, "llvm.nvvm.%s.approx.f", fn);
	return call_intrinsic(L, name, NULL, 0, &x, 1);
}

/* Branches to a new block when cond holds; returns the block to continue
 * in, for end_if (NULL, and no branch, when cond is the constant true). */
static LLVMBasicBlockRef begin_if(Lower *L, LLVMValueRef cond, const char *name)
{
	if (LLVMIsAConstantInt(cond) && LLVMConstIntGetZExtValue(cond))
		return NULL;
	LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(L->c, L->fn, name);
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->c, L->fn, "endif");
	LLVMBuildCondBr(L->b, cond, then, done);
	LLVMPositionBuilderAtEnd(L->b, then);
	return done;
}

static void end_if(Lower *L, LLVMBasicBlockRef done)
{
	if (!done)
		return;
	LLVMBuildBr(L->b, done);
	LLVMPositionBuilderAtEnd(L->b, done);
}

/* ---- shared memory ------------------------------------------------------------------ */

/* Shared memory: scratches that must outlive their op (an mma operand
 * read by its dot, a loop's cp.async stages) are pinned at the bottom,
 * below smem_base (smem_pin); every other use is transient and lies above
 * it (smem_take). */
static void need_smem(Lower *L, int bytes)
{
	if (L->smem_base + bytes > L->smem_bytes)
		L->smem_bytes = L->smem_base + bytes;
}

/* Element idx of type t from byte byte_offset of shared memory. */
static LLVMValueRef smem_abs(Lower *L, LLVMTypeRef t, int byte_offset, LLVMValueRef idx)
{
	LLVMValueRef base = L->smem;
	if (byte_offset) {
		LLVMValueRef off = ci32(L, byte_offset);
		base = LLVMBuildGEP2(L->b, L->i8, base, &off, 1, "");
	}
	return LLVMBuildGEP2(L->b, t, base, &idx, 1, "");
}

/* The same, byte_offset from the transient uses' base. */
static LLVMValueRef smem_at(Lower *L, LLVMTypeRef t, int byte_offset, LLVMValueRef idx)
{
	return smem_abs(L, t, byte_offset + L->smem_base, idx);
}

/* Pins bytes below the transient uses (until smem_base is lowered again);
 * returns where they start. */
static int smem_pin(Lower *L, int bytes)
{
	int at = L->smem_base;
	L->smem_base += bytes;
	need_smem(L, 0);
	return at;
}

static void smem_barrier(Lower *L)
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
 * smem_base (what smem_at takes). */
static int smem_take(Lower *L, int bytes)
{
	bytes = (bytes + 15) & ~15;
	int base = L->smem_base;
	int room = L->smem_bytes > base + 4096 ? L->smem_bytes : base + 4096;
	int start = L->smem_dirty < 0 ? -1 : L->smem_dirty > base ? L->smem_dirty : base;
	if (start < 0 || start + bytes > room) {
		smem_barrier(L);
		start = base;
	}
	L->smem_dirty = start + bytes;
	need_smem(L, start - base + bytes);
	return start - base;
}

/* The barrier between a use's writes and its reads (of bytes at off). */
static void smem_sync(Lower *L, int off, int bytes)
{
	smem_barrier(L);
	L->smem_dirty = L->smem_base + off + ((bytes + 15) & ~15);
}

/* Where what came before is not known (region boundaries). */
static void smem_unknown(Lower *L)
{
	if (L->smem_unsynced)
		smem_barrier(L);
	L->smem_dirty = -1;
}

static LLVMValueRef to_mem(Lower *L, Type t, LLVMValueRef v)
{
	return !t.ptr && t.scalar == SK_I1 ? LLVMBuildZExt(L->b, v, L->i8, "") : v;
}

static LLVMValueRef from_mem(Lower *L, Type t, LLVMValueRef v)
{
	return !t.ptr && t.scalar == SK_I1 ? LLVMBuildTrunc(L->b, v, L->i1, "") : v;
}

/* *p = v where pred holds, as one predicated st.shared: no branch, so the
 * kernel stays in fewer basic blocks, each of which costs the code
 * generator a DAG of its own. */
static void smem_store_if(Lower *L, LLVMValueRef pred, LLVMValueRef p, LLVMValueRef v)
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
 * byte_offset (taken with smem_take), by linear index; replicas write once. */
static void smem_store_block(Lower *L, const Value *x, const Tile *v, int byte_offset)
{
	Type t = x->type;
	const Lin *l = lin_of(L, x);
	LLVMTypeRef mt = mem_type(L, t);
	LLVMValueRef own = owner_of(L, l);
	/* a uniform tile (a splat) holds one element for all the block's */
	for (int k = 0, n = 1 << l->n_reg; k < n; k++)
		smem_store_if(L, own, smem_at(L, mt, byte_offset, index_of(L, l, k)), to_mem(L, t, v->n == 1 ? v->e[0] : v->e[k]));
}

static LLVMValueRef smem_load(Lower *L, Type t, int byte_offset, LLVMValueRef idx)
{
	LLVMTypeRef mt = mem_type(L, t);
	return from_mem(L, t, LLVMBuildLoad2(L->b, mt, smem_at(L, mt, byte_offset, idx), ""));
}

/* ---- ops ---------------------------------------------------------------------------- */

static bool is_float(Type t) { return !t.ptr && scalar_is_float((ScalarKind)t.scalar); }
static bool is_fp8(Type t) { return !t.ptr && (t.scalar == SK_F8E4M3 || t.scalar == SK_F8E5M2); }
static bool is_signed(Type t) { return !t.ptr && scalar_is_signed((ScalarKind)t.scalar) && t.scalar != SK_I1; }

static LLVMValueRef const_elem(Lower *L, const Op *op, Type t)
{
	LLVMTypeRef lt = elem_type(L, t);
	if (is_float(t)) {
		if (t.scalar == SK_F8E4M3 || t.scalar == SK_F8E5M2)
			return LLVMConstInt(L->i8, fp_encode((ScalarKind)t.scalar, op->fval), 0);
		return LLVMConstReal(lt, op->fval);
	}
	return LLVMConstInt(lt, (unsigned long long)op->ival, 0);
}

static LLVMValueRef binary(Lower *L, OpCode code, Type t, LLVMValueRef a, LLVMValueRef b, int64_t attr0)
{
	bool f = is_float(t), s = is_signed(t);
	switch (code) {
	case OP_ADD: return f ? LLVMBuildFAdd(L->b, a, b, "") : LLVMBuildAdd(L->b, a, b, "");
	case OP_SUB: return f ? LLVMBuildFSub(L->b, a, b, "") : LLVMBuildSub(L->b, a, b, "");
	case OP_MUL: return f ? LLVMBuildFMul(L->b, a, b, "") : LLVMBuildMul(L->b, a, b, "");
	case OP_DIV:
		if (f && LLVMTypeOf(a) == L->f32) {
			/* as Triton's '/': div.full.f32, within 2 ulp over the whole range
			 * (div.rn.f32 is a dozen instructions and a branch) */
			LLVMTypeRef ps[2] = {L->f32, L->f32};
			LLVMTypeRef ft = LLVMFunctionType(L->f32, ps, 2, 0);
			const char *text = "div.full.f32 $0, $1, $2;";
			LLVMValueRef fn = LLVMGetInlineAsm(ft, (char *)text, strlen(text), "=f,f,f", 6, 0, 0,
			                                   LLVMInlineAsmDialectATT, 0);
			LLVMValueRef args[2] = {a, b};
			return LLVMBuildCall2(L->b, ft, fn, args, 2, "");
		}
		return f ? LLVMBuildFDiv(L->b, a, b, "") : s ? LLVMBuildSDiv(L->b, a, b, "") : LLVMBuildUDiv(L->b, a, b, "");
	case OP_REM:
		if (f) /* exact fmod: LLVM's frem becomes x - trunc(x/y)*y on NVPTX */
			return gpu_fmod(L->m, L->b, a, b);
		return s ? LLVMBuildSRem(L->b, a, b, "") : LLVMBuildURem(L->b, a, b, "");
	case OP_AND: return LLVMBuildAnd(L->b, a, b, "");
	case OP_OR: return LLVMBuildOr(L->b, a, b, "");
	case OP_XOR: return LLVMBuildXor(L->b, a, b, "");
	case OP_SHL: return LLVMBuildShl(L->b, a, b, "");
	case OP_SHR: return s ? LLVMBuildAShr(L->b, a, b, "") : LLVMBuildLShr(L->b, a, b, "");
	case OP_MIN:
	case OP_MAX: {
		if (f) {
			LLVMTypeRef ty = LLVMTypeOf(a);
			LLVMValueRef args[2] = {a, b};
			const char *name = code == OP_MIN ? (attr0 ? "llvm.minimum" : "llvm.minnum")
			                                  : (attr0 ? "llvm.maximum" : "llvm.maxnum");
			return call_intrinsic(L, name, &ty, 1, args, 2);
		}
		LLVMIntPredicate p = code == OP_MIN ? (s ? LLVMIntSLT : LLVMIntULT) : (s ? LLVMIntSGT : LLVMIntUGT);
		return LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, p, a, b, ""), a, b, "");
	}
	default: return NULL;
	}
}

static LLVMValueRef compare(Lower *L, CmpPred p, Type t, LLVMValueRef a, LLVMValueRef b)
{
	if (is_float(t)) {
		static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
		return LLVMBuildFCmp(L->b, fp[p], a, b, "");
	}
	if (t.ptr) {
		a = LLVMBuildPtrToInt(L->b, a, L->i64, "");
		b = LLVMBuildPtrToInt(L->b, b, L->i64, "");
	}
	bool s = is_signed(t);
	static const LLVMIntPredicate sp[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
	static const LLVMIntPredicate up[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
	return LLVMBuildICmp(L->b, s ? sp[p] : up[p], a, b, "");
}

/* Float math in f32 (f16 and bf16 are widened and rounded back). */
static LLVMValueRef math(Lower *L, MathFn fn, Type t, LLVMValueRef x, Span at)
{
	if (t.scalar == SK_F64) {
		LLVMTypeRef ty = L->f64;
		switch (fn) {
		case MATH_SQRT: return call_intrinsic(L, "llvm.sqrt", &ty, 1, &x, 1);
		case MATH_FLOOR: return call_intrinsic(L, "llvm.floor", &ty, 1, &x, 1);
		case MATH_CEIL: return call_intrinsic(L, "llvm.ceil", &ty, 1, &x, 1);
		case MATH_RSQRT:
			return LLVMBuildFDiv(L->b, LLVMConstReal(ty, 1.0), call_intrinsic(L, "llvm.sqrt", &ty, 1, &x, 1), "");
		default: {
			LLVMValueRef r = gpu_math(L->b, L->m, fn, x);
			if (r)
				return r;
			fail(L, at, "%s of f64 is not supported on the GPU yet", math_fn_name(fn));
			return LLVMGetUndef(ty);
		}
		}
	}
	LLVMTypeRef ty = LLVMTypeOf(x);
	bool narrow = ty != L->f32;
	if (narrow)
		x = LLVMBuildFPExt(L->b, x, L->f32, "");
	LLVMValueRef r;
	LLVMTypeRef f32 = L->f32;
	switch (fn) {
	case MATH_EXP: r = approx_f32(L, "ex2", LLVMBuildFMul(L->b, x, LLVMConstReal(f32, 1.4426950408889634), "")); break;
	case MATH_EXP2: r = approx_f32(L, "ex2", x); break;
	case MATH_LOG: r = LLVMBuildFMul(L->b, approx_f32(L, "lg2", x), LLVMConstReal(f32, 0.6931471805599453), ""); break;
	case MATH_LOG2: r = approx_f32(L, "lg2", x); break;
	case MATH_SQRT: r = call_intrinsic(L, "llvm.sqrt", &f32, 1, &x, 1); break;
	case MATH_RSQRT: r = approx_f32(L, "rsqrt", x); break;
	case MATH_SIN:
	case MATH_COS:
	case MATH_TANH: r = gpu_math(L->b, L->m, fn, x); break; /* accurate: the .approx forms are 2^-11 to 2^-21 off */
	case MATH_FLOOR: r = call_intrinsic(L, "llvm.floor", &f32, 1, &x, 1); break;
	case MATH_CEIL: r = call_intrinsic(L, "llvm.ceil", &f32, 1, &x, 1); break;
	case MATH_ERF: {
		/* erf(x) = sign(x) (1 - p(t) e^(-x^2)), t = 1 / (1 + 0.3275911 |x|): 1.5e-7 absolute */
		LLVMValueRef ax = call_intrinsic(L, "llvm.fabs", &f32, 1, &x, 1);
		LLVMValueRef t = LLVMBuildFDiv(L->b, LLVMConstReal(f32, 1.0),
		                               LLVMBuildFAdd(L->b, LLVMConstReal(f32, 1.0),
		                                             LLVMBuildFMul(L->b, ax, LLVMConstReal(f32, 0.3275911), ""), ""), "");
		static const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
		LLVMValueRef p = LLVMConstReal(f32, a[0]);
		for (int i = 1; i < 5; i++)
			p = LLVMBuildFAdd(L->b, LLVMBuildFMul(L->b, p, t, ""), LLVMConstReal(f32, a[i]), "");
		p = LLVMBuildFMul(L->b, p, t, "");
		LLVMValueRef e = approx_f32(L, "ex2",
		                         LLVMBuildFMul(L->b, LLVMBuildFNeg(L->b, LLVMBuildFMul(L->b, ax, ax, ""), ""),
		                                       LLVMConstReal(f32, 1.4426950408889634), ""));
		LLVMValueRef y = LLVMBuildFSub(L->b, LLVMConstReal(f32, 1.0), LLVMBuildFMul(L->b, p, e, ""), "");
		LLVMValueRef args[2] = {y, x};
		r = call_intrinsic(L, "llvm.copysign", &f32, 1, args, 2);
		/* below |x| = 0.5 that absolute error is a large relative one: the
		 * series 2/sqrt(pi) sum (-1)^k x^(2k+1) / (k! (2k+1)), to k = 6 */
		LLVMValueRef x2 = LLVMBuildFMul(L->b, x, x, "");
		static const double c[] = {1.0, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216, -1.0 / 1320, 1.0 / 9360};
		LLVMValueRef q = LLVMConstReal(f32, c[6]);
		for (int i = 5; i >= 0; i--)
			q = LLVMBuildFAdd(L->b, LLVMBuildFMul(L->b, q, x2, ""), LLVMConstReal(f32, c[i]), "");
		q = LLVMBuildFMul(L->b, LLVMBuildFMul(L->b, q, x, ""), LLVMConstReal(f32, 1.1283791670955126), "");
		LLVMValueRef small = LLVMBuildFCmp(L->b, LLVMRealOLT, ax, LLVMConstReal(f32, 0.5), "");
		r = LLVMBuildSelect(L->b, small, q, r, "");
		break;
	}
	default: r = x; break;
	}
	return narrow ? LLVMBuildFPTrunc(L->b, r, ty, "") : r;
}

static LLVMValueRef cast(Lower *L, Type from, Type to, LLVMValueRef v, Span at)
{
	LLVMTypeRef lt = elem_type(L, to);
	bool ff = is_float(from), ft = is_float(to);
	if (is_fp8(from) || is_fp8(to)) { /* through f32, which holds every fp8 value */
		Type f32 = type_scalar(SK_F32);
		if (is_fp8(from) && is_fp8(to) && from.scalar == to.scalar)
			return v;
		LLVMValueRef mid;
		if (is_fp8(from)) {
			mid = gpu_fp8_to_f32(L->b, L->m, (ScalarKind)from.scalar, v);
		} else if (from.scalar == SK_F64) {
			/* f64 to f32 rounding to odd (toward zero, then the last bit set
			 * when inexact), so that rounding again to fp8 rounds once */
			LLVMTypeRef ft = LLVMFunctionType(L->f32, &L->f64, 1, 0);
			LLVMValueRef rz = LLVMGetInlineAsm(ft, "cvt.rz.f32.f64 $0, $1;", 22, "=f,d", 4, 0, 0, LLVMInlineAsmDialectATT, 0);
			LLVMValueRef t = LLVMBuildCall2(L->b, ft, rz, &v, 1, "");
			LLVMValueRef inexact = LLVMBuildFCmp(L->b, LLVMRealONE, LLVMBuildFPExt(L->b, t, L->f64, ""), v, "");
			LLVMValueRef bits = LLVMBuildBitCast(L->b, t, L->i32, "");
			bits = LLVMBuildSelect(L->b, inexact, LLVMBuildOr(L->b, bits, ci32(L, 1), ""), bits, "");
			mid = LLVMBuildBitCast(L->b, bits, L->f32, "");
		} else {
			mid = cast(L, from, f32, v, at);
		}
		return is_fp8(to) ? gpu_f32_to_fp8(L->b, L->m, (ScalarKind)to.scalar, mid) : cast(L, f32, to, mid, at);
	}
	if (ff && ft) {
		int bf = scalar_bits((ScalarKind)from.scalar), bt = scalar_bits((ScalarKind)to.scalar);
		if (from.scalar == to.scalar)
			return v;
		if ((from.scalar == SK_F16 && to.scalar == SK_BF16) || (from.scalar == SK_BF16 && to.scalar == SK_F16))
			return LLVMBuildFPTrunc(L->b, LLVMBuildFPExt(L->b, v, L->f32, ""), lt, "");
		return bt > bf ? LLVMBuildFPExt(L->b, v, lt, "") : LLVMBuildFPTrunc(L->b, v, lt, "");
	}
	if (ff) {
		if (to.scalar == SK_I1)
			return LLVMBuildFCmp(L->b, LLVMRealUNE, v, LLVMConstReal(LLVMTypeOf(v), 0), "");
		/* saturating, NaN to 0, as the interpreter and cvt.rzi.sat do */
		LLVMTypeRef over[2] = {lt, LLVMTypeOf(v)};
		return call_intrinsic(L, is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", over, 2, &v, 1);
	}
	if (ft)
		return is_signed(from) ? LLVMBuildSIToFP(L->b, v, lt, "") : LLVMBuildUIToFP(L->b, v, lt, "");
	if (to.scalar == SK_I1)
		return LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), "");
	int bf = scalar_bits((ScalarKind)from.scalar), bt = scalar_bits((ScalarKind)to.scalar);
	if (bt == bf)
		return v;
	if (bt < bf)
		return LLVMBuildTrunc(L->b, v, lt, "");
	return is_signed(from) ? LLVMBuildSExt(L->b, v, lt, "") : LLVMBuildZExt(L->b, v, lt, "");
}

static void lower_region(Lower *L, const Region *r);

/* The values a region's terminator passes on. */
static const Op *terminator(const Region *r) { return r->last; }

/* Runs a combine region on scalars a[0..n) and b[0..n) (one element each),
 * leaving the n results in out. */
static void combine(Lower *L, const Region *r, int n, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *out)
{
	for (int i = 0; i < n; i++) {
		Tile ta = tile_new(L, 1), tb = tile_new(L, 1);
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

static LLVMValueRef shuffle_xor(Lower *L, LLVMValueRef v, int lane_mask)
{
	LLVMTypeRef t = LLVMTypeOf(v);
	LLVMValueRef full = LLVMConstInt(L->i32, 0xFFFFFFFFu, 0);
	if (t == L->f32) { /* the f32 form: no bitcasts for the code generator to fold */
		LLVMValueRef a[4] = {full, v, ci32(L, lane_mask), ci32(L, 31)};
		return call_intrinsic(L, "llvm.nvvm.shfl.sync.bfly.f32", NULL, 0, a, 4);
	}
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
		LLVMValueRef a1[4] = {full, lo, ci32(L, lane_mask), ci32(L, 31)};
		LLVMValueRef a2[4] = {full, hi, ci32(L, lane_mask), ci32(L, 31)};
		lo = call_intrinsic(L, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, a1, 4);
		hi = call_intrinsic(L, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, a2, 4);
		r = LLVMBuildOr(L->b, LLVMBuildZExt(L->b, lo, L->i64, ""),
		                LLVMBuildShl(L->b, LLVMBuildZExt(L->b, hi, L->i64, ""), LLVMConstInt(L->i64, 32, 0), ""), "");
	} else {
		LLVMValueRef x = bits < 32 ? LLVMBuildZExt(L->b, as_int, L->i32, "") : as_int;
		LLVMValueRef a[4] = {full, x, ci32(L, lane_mask), ci32(L, 31)};
		r = call_intrinsic(L, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, a, 4);
		if (bits < 32)
			r = LLVMBuildTrunc(L->b, r, LLVMIntTypeInContext(L->c, bits), "");
	}
	if (LLVMGetTypeKind(t) == LLVMPointerTypeKind)
		return LLVMBuildIntToPtr(L->b, r, t, "");
	return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(L->b, r, t, "");
}

/* A loop "for (i = lo; i < hi; i++)" around body(); phis for n values. */
typedef struct Loop {
	LLVMBasicBlockRef pre, head, body, exit;
	LLVMValueRef i;
	LLVMValueRef phis[MAX_REDUCE_OPERANDS];
	int n;
} Loop;

static void loop_begin(Lower *L, Loop *lp, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef *init, int n)
{
	lp->n = n;
	lp->pre = LLVMGetInsertBlock(L->b);
	lp->head = LLVMAppendBasicBlockInContext(L->c, L->fn, "loop");
	lp->body = LLVMAppendBasicBlockInContext(L->c, L->fn, "loop.body");
	lp->exit = LLVMAppendBasicBlockInContext(L->c, L->fn, "loop.exit");
	LLVMBuildBr(L->b, lp->head);
	LLVMPositionBuilderAtEnd(L->b, lp->head);
	lp->i = LLVMBuildPhi(L->b, L->i32, "i");
	LLVMAddIncoming(lp->i, &lo, &lp->pre, 1);
	for (int k = 0; k < n; k++) {
		lp->phis[k] = LLVMBuildPhi(L->b, LLVMTypeOf(init[k]), "");
		LLVMAddIncoming(lp->phis[k], &init[k], &lp->pre, 1);
	}
	LLVMBuildCondBr(L->b, LLVMBuildICmp(L->b, LLVMIntSLT, lp->i, hi, ""), lp->body, lp->exit);
	LLVMPositionBuilderAtEnd(L->b, lp->body);
}

static void loop_end(Lower *L, Loop *lp, LLVMValueRef *next)
{
	LLVMValueRef inc = LLVMBuildAdd(L->b, lp->i, ci32(L, 1), "");
	LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
	LLVMAddIncoming(lp->i, &inc, &end, 1);
	for (int k = 0; k < lp->n; k++)
		LLVMAddIncoming(lp->phis[k], &next[k], &end, 1);
	LLVMBuildBr(L->b, lp->head);
	LLVMPositionBuilderAtEnd(L->b, lp->exit);
}

/* Scan through shared memory: each element's owner walks its line. */
static void lower_scan(Lower *L, const Op *op)
{
	int n = op->n_operands, axis = (int)op->attr[0];
	bool reverse = op->attr[1];
	Type in_t = op->operands[0]->type;
	int len = in_t.shape[axis];
	int off = 0, offs[MAX_REDUCE_OPERANDS];
	for (int i = 0; i < n; i++) {
		offs[i] = off;
		off += numel(op->operands[i]->type) * type_bytes(op->operands[i]->type);
		off = (off + 7) & ~7;
	}
	int base = smem_take(L, off);
	for (int i = 0; i < n; i++) {
		offs[i] += base;
		smem_store_block(L, op->operands[i], val(L, op->operands[i]), offs[i]);
	}
	smem_sync(L, base, off);
	const Value *res = op->results[0];
	const Lin *lo = lin_of(L, res);
	int count = 1 << lo->n_reg;
	Tile outs[MAX_REDUCE_OPERANDS];
	for (int i = 0; i < n; i++)
		outs[i] = tile_new(L, count);
	for (int k = 0; k < count && !L->failed; k++) {
		LLVMValueRef c[BLK_MAX_RANK];
		LLVMValueRef oidx = index_of(L, lo, k);
		for (int d = 0; d < in_t.rank; d++)
			c[d] = coord(L, in_t, oidx, d);
		LLVMValueRef pos = c[axis]; /* this element's position along the axis */
		c[axis] = ci32(L, reverse ? len - 1 : 0);
		LLVMValueRef base = linearize(L, in_t, c);
		int st = 1; /* the axis' stride in linear indices */
		for (int d = axis + 1; d < in_t.rank; d++)
			st *= in_t.shape[d];
		LLVMValueRef stride = ci32(L, st);
		LLVMValueRef init[MAX_REDUCE_OPERANDS];
		for (int i = 0; i < n; i++)
			init[i] = smem_load(L, type_elem(op->operands[i]->type), offs[i], base);
		LLVMValueRef steps = reverse ? LLVMBuildSub(L->b, ci32(L, len - 1), pos, "") : pos;
		Loop lp;
		loop_begin(L, &lp, ci32(L, 0), steps, init, n);
		LLVMValueRef j = LLVMBuildAdd(L->b, lp.i, ci32(L, 1), "");
		LLVMValueRef idx = reverse ? LLVMBuildSub(L->b, base, LLVMBuildMul(L->b, j, stride, ""), "")
		                           : LLVMBuildAdd(L->b, base, LLVMBuildMul(L->b, j, stride, ""), "");
		LLVMValueRef nxt[MAX_REDUCE_OPERANDS], r[MAX_REDUCE_OPERANDS];
		for (int i = 0; i < n; i++)
			nxt[i] = smem_load(L, type_elem(op->operands[i]->type), offs[i], idx);
		combine(L, &op->regions[0], n, lp.phis, nxt, r);
		loop_end(L, &lp, r);
		for (int i = 0; i < n; i++)
			outs[i].e[k] = lp.phis[i];
	}
	for (int i = 0; i < n; i++)
		L->vals[op->results[i]->id] = outs[i];
}

/* Reduces along the op's axis: the registers of each thread, then lanes
 * by butterfly shuffles, then warps through shared memory. What is left is
 * laid out as the slice of the operand's map (ls); when the results' map
 * differs, or warps took part, the last step reads them in their own map
 * from shared memory. */
static void lower_reduce(Lower *L, const Op *op)
{
	int n = op->n_operands, axis = (int)op->attr[0];
	if (n > MAX_REDUCE_OPERANDS) {
		fail(L, op->loc, "%s of more than 8 blocks", op_name(op->code));
		return;
	}
	if (op->code == OP_SCAN) {
		lower_scan(L, op);
		return;
	}
	const Region *r = &op->regions[0];
	Type in_t = op->operands[0]->type;
	const Lin *li = lin_of(L, op->operands[0]);
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
		int c = reg_const(li, k) & (int)~amask;
		int ks = reg_index(&ls, (c & ((1 << lo_bit) - 1)) | ((c >> nbits) & ~((1 << lo_bit) - 1)));
		LLVMValueRef *a = acc + ks * n;
		if (!have[ks]) {
			for (int i = 0; i < n; i++)
				a[i] = el(L, op->operands[i], k);
			have[ks] = true;
			continue;
		}
		for (int i = 0; i < n; i++)
			nxt[i] = el(L, op->operands[i], k);
		combine(L, r, n, a, nxt, res);
		memcpy(a, res, sizeof(LLVMValueRef) * (size_t)n);
	}
	for (int b = 4; b >= 0 && !L->failed; b--) {
		if (li->lane[b] < 0 || !(amask >> li->lane[b] & 1))
			continue;
		for (int ks = 0; ks < n_acc && !L->failed; ks++) {
			LLVMValueRef *a = acc + ks * n;
			for (int i = 0; i < n; i++)
				nxt[i] = shuffle_xor(L, a[i], 1 << b);
			combine(L, r, n, a, nxt, res);
			memcpy(a, res, sizeof(LLVMValueRef) * (size_t)n);
		}
	}
	if (L->failed)
		return;
	const Value *out0 = op->results[0];
	const Lin *lo = lin_of(L, out0);
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
		outs[i] = tile_new(L, n_out);
	if (L->failed)
		return;
	if (same && !n_axis_warps) {
		for (int k = 0; k < n_out; k++)
			for (int i = 0; i < n; i++)
				outs[i].e[k] = acc[reg_index(&ls, reg_const(lo, k)) * n + i];
	} else {
		/* partials by (result element, warp along the axis) */
		int G = 1 << n_axis_warps, N = out0->type.rank ? numel(out0->type) : 1;
		int off = 0, offs[MAX_REDUCE_OPERANDS];
		for (int i = 0; i < n; i++) {
			offs[i] = off;
			off += (N * G * type_bytes(op->operands[i]->type) + 15) & ~15;
		}
		int base = smem_take(L, off);
		for (int i = 0; i < n; i++)
			offs[i] += base;
		LLVMValueRef g = ci32(L, 0);
		for (int i = 5, j = 0; i < 5 + li->n_warp; i++)
			if (axis_warps >> i & 1) {
				LLVMValueRef bit = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, L->tid, ci32(L, i), ""), ci32(L, 1), "");
				g = LLVMBuildOr(L->b, g, LLVMBuildShl(L->b, bit, ci32(L, j++), ""), "");
			}
		/* one writer per partial: the first of its replicas, warps along the axis apart */
		LLVMValueRef writer = tid_bits_zero(L, repl_mask(&ls) & ~axis_warps);
		for (int ks = 0; ks < n_acc; ks++) {
			LLVMValueRef slot = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, index_of(L, &ls, ks), ci32(L, G), ""), g, "");
			for (int i = 0; i < n; i++) {
				Type t = type_elem(op->operands[i]->type);
				smem_store_if(L, writer, smem_at(L, mem_type(L, t), offs[i], slot), to_mem(L, t, acc[ks * n + i]));
			}
		}
		smem_sync(L, base, off);
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
			LLVMValueRef idx = index_of(L, lo, k);
			for (int i = 0; i < n; i++) {
				Type t = type_elem(op->operands[i]->type);
				LLVMTypeRef vt = LLVMVectorType(mem_type(L, t), (unsigned)V[i]);
				LLVMValueRef vidx = LLVMBuildMul(L->b, idx, ci32(L, G / V[i]), "");
				for (int w = 0; w < G; w += V[i]) {
					LLVMValueRef slot = w ? LLVMBuildAdd(L->b, vidx, ci32(L, w / V[i]), "") : vidx;
					if (V[i] == 1) {
						part[w * n + i] = smem_load(L, t, offs[i], slot);
						continue;
					}
					LLVMValueRef v = LLVMBuildLoad2(L->b, vt, smem_at(L, vt, offs[i], slot), "");
					for (int j = 0; j < V[i]; j++)
						part[(w + j) * n + i] = from_mem(L, t, LLVMBuildExtractElement(L->b, v, ci32(L, j), ""));
				}
			}
			LLVMValueRef a[MAX_REDUCE_OPERANDS];
			memcpy(a, part, sizeof(LLVMValueRef) * (size_t)n);
			for (int w = 1; w < G && !L->failed; w++) {
				combine(L, r, n, a, part + w * n, res);
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

/* Index maps of the shape ops: the input linear index of an output one. */
static LLVMValueRef source_index(Lower *L, const Op *op, LLVMValueRef oidx, int *which)
{
	Type in_t = op->operands[0]->type, out_t = op->results[0]->type;
	LLVMValueRef c[BLK_MAX_RANK], ic[BLK_MAX_RANK];
	for (int d = 0; d < out_t.rank; d++)
		c[d] = coord(L, out_t, oidx, d);
	*which = 0;
	switch (op->code) {
	case OP_BROADCAST:
		for (int d = 0; d < in_t.rank; d++)
			ic[d] = in_t.shape[d] == 1 ? ci32(L, 0) : c[d];
		return linearize(L, in_t, ic);
	case OP_TRANS:
		for (int d = 0; d < out_t.rank; d++)
			ic[op->attr[d]] = c[d];
		return linearize(L, in_t, ic);
	case OP_CAT: {
		int axis = (int)op->attr[0], half = in_t.shape[axis];
		/* which input is a runtime choice: handled by the caller with a select */
		for (int d = 0; d < in_t.rank; d++)
			ic[d] = d == axis ? LLVMBuildAnd(L->b, c[d], ci32(L, half - 1), "") : c[d];
		*which = -1 - axis;
		return linearize(L, in_t, ic);
	}
	case OP_JOIN:
		for (int d = 0; d < in_t.rank; d++)
			ic[d] = c[d];
		*which = -100; /* the last coordinate picks the input */
		return linearize(L, in_t, ic);
	default:
		return oidx;
	}
}

/* ---- shape ops, conversions ------------------------------------------------------- */

/* Shape ops rename registers when the lanes and warps of result and
 * operand mean the same (what the layouts pass arranges); otherwise the
 * operands go through shared memory. */
static void lower_shape(Lower *L, const Op *op)
{
	const Value *x = op->operands[0];
	const Lin *li = lin_of(L, x);
	int nres = op->code == OP_SPLIT ? 2 : 1;
	Type in_t = x->type;
	bool staged = false;
	int first = 0, second = (numel(in_t) * type_bytes(in_t) + 7) & ~7;
	for (int r = 0; r < nres && !L->failed; r++) {
		const Value *y = op->results[r];
		const Lin *lo = lin_of(L, y);
		int n_out = 1 << lo->n_reg;
		Tile t = tile_new(L, n_out);
		if (L->failed)
			return;
		if (op->code != OP_SPLIT && op->n_operands == 1 && val(L, x)->n == 1) {
			t.e[0] = val(L, x)->e[0]; /* uniform stays uniform */
			t.n = 1;
			L->vals[y->id] = t;
			continue;
		}
		if (shape_in_registers(op, li, lo)) {
			for (int k = 0; k < n_out; k++) {
				int c = reg_const(lo, k), in_c = op->code == OP_SPLIT ? r : 0, which = 0, m;
				for (int bit = 0; bit < 31; bit++)
					if (c >> bit & 1) {
						shape_bit_map(op, bit, &m);
						if (m >= 0)
							in_c |= 1 << m;
						else if (m == MAP_SEL)
							which = 1;
					}
				t.e[k] = el(L, op->operands[which], reg_index(li, in_c));
			}
			L->vals[y->id] = t;
			continue;
		}
		if (!staged) {
			first = smem_take(L, op->n_operands > 1 ? 2 * second : second);
			second += first;
			smem_store_block(L, x, val(L, x), first);
			if (op->n_operands > 1)
				smem_store_block(L, op->operands[1], val(L, op->operands[1]), second);
			smem_sync(L, first, (op->n_operands > 1 ? 2 : 1) * (second - first));
			staged = true;
		}
		Type out_t = y->type;
		for (int k = 0; k < n_out && !L->failed; k++) {
			LLVMValueRef oidx = index_of(L, lo, k);
			if (op->code == OP_SPLIT) {
				LLVMValueRef src = LLVMBuildOr(L->b, LLVMBuildShl(L->b, oidx, ci32(L, 1), ""), ci32(L, r), "");
				t.e[k] = smem_load(L, in_t, first, src);
				continue;
			}
			int which;
			LLVMValueRef src = source_index(L, op, oidx, &which);
			if (which == 0) {
				t.e[k] = smem_load(L, in_t, first, src);
				continue;
			}
			LLVMValueRef pick; /* i1: take the second input */
			if (which == -100) {
				pick = LLVMBuildICmp(L->b, LLVMIntNE, coord(L, out_t, oidx, out_t.rank - 1), ci32(L, 0), "");
			} else {
				int axis = -1 - which;
				pick = LLVMBuildICmp(L->b, LLVMIntUGE, coord(L, out_t, oidx, axis), ci32(L, in_t.shape[axis]), "");
			}
			LLVMValueRef a = smem_load(L, in_t, first, src), b = smem_load(L, in_t, second, src);
			t.e[k] = LLVMBuildSelect(L->b, pick, b, a, "");
		}
		L->vals[y->id] = t;
	}
}

/* The scratch address (in elements) of linear index bits c: the swizzle
 * XORs address bits in for each index bit set. */
static unsigned swizzle_const(const Encoding *s, unsigned c)
{
	unsigned a = c;
	for (int j = 0; s && j < s->n_index_bits; j++)
		if (c >> j & 1)
			a ^= s->swizzle[j];
	return a;
}

static LLVMValueRef swizzle_value(Lower *L, const Encoding *s, LLVMValueRef idx)
{
	/* each set bit j flips swizzle[j]; bits that flip the one bit d below
	 * them go together, idx ^ ((idx >> d) & mask), as the usual swizzles
	 * (row bits onto 16-byte column bits) all do */
	LLVMValueRef a = idx;
	unsigned done = 0;
	for (int j = 0; s && j < s->n_index_bits; j++) {
		uint32_t m = s->swizzle[j];
		if (!m || done >> j & 1)
			continue;
		int p = (m & (m - 1)) ? -1 : log2i((int)m);
		if (p >= 0 && p < j) {
			int d = j - p;
			unsigned from = 0;
			for (int i = j; i < s->n_index_bits; i++)
				if (!(done >> i & 1) && i >= d && s->swizzle[i] == 1u << (i - d))
					from |= 1u << i;
			done |= from;
			LLVMValueRef f = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, idx, ci32(L, d), ""), ci32(L, (long long)(from >> d)), "");
			a = LLVMBuildXor(L->b, a, f, "");
			continue;
		}
		LLVMValueRef bit = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, idx, ci32(L, j), ""), ci32(L, 1), "");
		a = LLVMBuildXor(L->b, a, LLVMBuildMul(L->b, bit, ci32(L, (long long)m), ""), "");
	}
	return a;
}

/* Scratch addresses of register k of map l: the register part swizzled at
 * compile time, the thread part (tsw) once per op. */
static LLVMValueRef scratch_addr(Lower *L, const Encoding *s, const Lin *l, LLVMValueRef tsw, int k)
{
	unsigned c = swizzle_const(s, (unsigned)reg_const(l, k));
	return c ? LLVMBuildXor(L->b, tsw, ci32(L, c), "") : tsw;
}

/* Reads an mma operand (16-bit elements) from the scratch with ldmatrix:
 * each instruction moves four 8 x 8 matrices, lane 8i + r giving the
 * address of row r of matrix i, and leaves in each lane the two elements
 * of each matrix that the fragment maps of layout.c put there. A (idx 0):
 * matrices (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15)
 * of one 16 x 16 tile = a0a1, a2a3, a4a5, a6a7. B (idx 1, transposed on the
 * way, rows of 8 n): (k 0-7), (k 8-15) of one 16 x 8 tile = b0b1, b2b3, and
 * the same of the thread's next tile along N when it has one. A dot reads
 * each group when it first needs it (frag()), so that only one K step of
 * its operands is live in registers at a time. */
typedef struct LazyFrags {
	const Op *convert;
	const Lin *lo;
	Tile *t;
	bool *loaded;          /* by register */
	int offset;            /* of the pinned scratch, bytes */
	LLVMValueRef dyn;      /* i32 bytes added at run time (a cp.async stage), or NULL */
	bool owned;            /* its dot releases the scratch (not a loop's stage buffer) */
	int pair_bit, group;
	LLVMValueRef base_thread, fn;
	LLVMValueRef base_sw;  /* base_thread swizzled: a group's address is it ^ its register part's */
	unsigned thread_bits;  /* index bits base_thread may set */
	LLVMTypeRef ft;
} LazyFrags;

static LazyFrags *ldmatrix_setup(Lower *L, const Op *op, const Lin *lo, Tile *t, int offset)
{
	const Value *y = op->results[0];
	const Encoding *s = op->scratch;
	Type ty = y->type;
	bool b_op = s->ldmatrix >= 2, trans = s->ldmatrix == 2; /* 3: B stored K-major, read as it lies */
	LazyFrags *z = arena_alloc(&L->arena, sizeof *z);
	bool *loaded = arena_alloc(&L->arena, (size_t)(1 << lo->n_reg) * sizeof *loaded);
	if (!z || !loaded) {
		L->failed = true;
		return NULL;
	}
	memset(loaded, 0, (size_t)(1 << lo->n_reg) * sizeof *loaded);
	*z = (LazyFrags){.convert = op, .lo = lo, .t = t, .loaded = loaded, .offset = offset, .owned = true,
	                 .pair_bit = -1, .group = b_op ? 4 : 8};
	int row_bit = lin_bit(ty, 0, 0); /* bit 0 of dimension 0: m for A, k for B */
	/* the thread's warp part (lanes choose rows below, not the fragment map) */
	Lin warps = *lo;
	for (int i = 0; i < 5; i++)
		warps.lane[i] = -1;
	LLVMValueRef wpart = thread_part(L, &warps);
	LLVMValueRef lane = LLVMBuildAnd(L->b, L->tid, ci32(L, 31), "");
	LLVMValueRef r = LLVMBuildAnd(L->b, lane, ci32(L, 7), "");
	LLVMValueRef i0 = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, lane, ci32(L, 3), ""), ci32(L, 1), "");
	LLVMValueRef i1 = LLVMBuildLShr(L->b, lane, ci32(L, 4), "");
	/* B: the register bit of the thread's next tile along N, if any */
	for (int i = 0; b_op && i < lo->n_reg && z->pair_bit < 0; i++)
		if (lo->reg[i] < row_bit && lo->reg[i] >= 3)
			z->pair_bit = i;
	/* lane r of matrix i0 + 2 i1 gives row r: along dimension 0 (A's m,
	 * B's k), or for B K-major along n (dimension 1, bit 0 of the index),
	 * the row's 8 elements along k; i0 picks the k (B) or m (A) half */
	LLVMValueRef lane_idx = LLVMBuildOr(L->b, LLVMBuildShl(L->b, r, ci32(L, b_op && !trans ? 0 : row_bit), ""),
	                                    LLVMBuildShl(L->b, i0, ci32(L, row_bit + 3), ""), "");
	if (!b_op)
		lane_idx = LLVMBuildOr(L->b, lane_idx, LLVMBuildShl(L->b, i1, ci32(L, 3), ""), "");
	else if (z->pair_bit >= 0)
		lane_idx = LLVMBuildOr(L->b, lane_idx, LLVMBuildShl(L->b, i1, ci32(L, lo->reg[z->pair_bit]), ""), "");
	z->base_thread = LLVMBuildOr(L->b, wpart, lane_idx, "");
	/* the index bits base_thread may set: the rows (along n for B K-major),
	 * the half picked by i0, the next tile or k half picked by i1, the warp */
	z->thread_bits = (b_op && !trans ? 7u : 7u << row_bit) | 1u << (row_bit + 3) |
	                 (!b_op ? 8u : z->pair_bit >= 0 ? 1u << lo->reg[z->pair_bit] : 0u);
	for (int i = 0; i < lo->n_warp; i++)
		if (lo->warp[i] >= 0)
			z->thread_bits |= 1u << lo->warp[i];
	z->base_sw = swizzle_value(L, s, z->base_thread);
	int x4 = !b_op || z->pair_bit >= 0;
	char text[128];
	snprintf(text, sizeof text, "ldmatrix.sync.aligned.m8n8.%s%s.shared.b16 %s, [$%d];", x4 ? "x4" : "x2",
	         trans ? ".trans" : "", x4 ? "{$0, $1, $2, $3}" : "{$0, $1}", x4 ? 4 : 2);
	const char *cons = x4 ? "=r,=r,=r,=r,l" : "=r,=r,l";
	LLVMTypeRef fields[4] = {L->i32, L->i32, L->i32, L->i32};
	LLVMTypeRef rt = LLVMStructTypeInContext(L->c, fields, x4 ? 4 : 2, 0);
	z->ft = LLVMFunctionType(rt, &L->i64, 1, 0);
	/* volatile: it reads shared memory, so it must stay between the barrier and the next store */
	z->fn = LLVMGetInlineAsm(z->ft, text, strlen(text), (char *)cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	return z;
}

/* The 32-bit register of a pair of 16-bit elements: the word they were
 * taken from when they are its halves in order (an ldmatrix result), else
 * the pair packed. */
static LLVMValueRef pair_word(Lower *L, LLVMValueRef lo, LLVMValueRef hi, LLVMTypeRef pair)
{
	if (LLVMIsAExtractElementInst(lo) && LLVMIsAExtractElementInst(hi) &&
	    LLVMGetOperand(lo, 0) == LLVMGetOperand(hi, 0) && LLVMIsAConstantInt(LLVMGetOperand(lo, 1)) &&
	    LLVMIsAConstantInt(LLVMGetOperand(hi, 1)) && LLVMConstIntGetZExtValue(LLVMGetOperand(lo, 1)) == 0 &&
	    LLVMConstIntGetZExtValue(LLVMGetOperand(hi, 1)) == 1) {
		LLVMValueRef v = LLVMGetOperand(lo, 0);
		if (LLVMIsABitCastInst(v) && LLVMTypeOf(LLVMGetOperand(v, 0)) == L->i32)
			return LLVMGetOperand(v, 0);
	}
	LLVMValueRef v = LLVMGetUndef(pair);
	v = LLVMBuildInsertElement(L->b, v, lo, ci32(L, 0), "");
	v = LLVMBuildInsertElement(L->b, v, hi, ci32(L, 1), "");
	return LLVMBuildBitCast(L->b, v, L->i32, "");
}

/* Register k of a lazily read operand, loading its group first if needed. */
static LLVMValueRef frag(Lower *L, const Value *v, int k)
{
	LazyFrags *z = L->lazy ? L->lazy[v->id] : NULL;
	if (!z)
		return el(L, v, k);
	if (z->loaded[k])
		return z->t->e[k];
	const Lin *lo = z->lo;
	bool trans = z->group == 4;
	int g = k & ~(z->group - 1);
	if (z->pair_bit >= 0)
		g &= ~(1 << z->pair_bit);
	if (L->smem_unsynced)
		smem_barrier(L); /* the operands' stores are done */
	int end = z->offset + (int)type_numel(v->type) * 2;
	if (L->smem_dirty >= 0 && L->smem_dirty < end)
		L->smem_dirty = end;
	int c = reg_const(lo, g);
	LLVMValueRef sw;
	if (!((unsigned)c & z->thread_bits)) { /* the swizzle is linear: the register part's at compile time */
		unsigned cs = swizzle_const(z->convert->scratch, (unsigned)c);
		sw = cs ? LLVMBuildXor(L->b, z->base_sw, ci32(L, cs), "") : z->base_sw;
	} else {
		LLVMValueRef idx = c ? LLVMBuildOr(L->b, z->base_thread, ci32(L, c), "") : z->base_thread;
		sw = swizzle_value(L, z->convert->scratch, idx);
	}
	if (z->dyn) /* the stage buffer, in elements */
		sw = LLVMBuildAdd(L->b, sw, LLVMBuildLShr(L->b, z->dyn, ci32(L, 1), ""), "");
	LLVMValueRef addr = smem_abs(L, L->i16, z->offset, sw);
	LLVMValueRef a = LLVMBuildPtrToInt(L->b, addr, L->i64, "");
	LLVMValueRef res = LLVMBuildCall2(L->b, z->ft, z->fn, &a, 1, "");
	int x4 = !trans || z->pair_bit >= 0;
	LLVMTypeRef pair = LLVMVectorType(elem_type(L, type_elem(v->type)), 2);
	for (int m = 0; m < (x4 ? 4 : 2); m++) {
		LLVMValueRef w = LLVMBuildBitCast(L->b, LLVMBuildExtractValue(L->b, res, (unsigned)m, ""), pair, "");
		/* matrix m's pair of registers */
		int r = trans ? g + 2 * (m & 1) + (m >> 1) * (1 << (z->pair_bit < 0 ? 0 : z->pair_bit)) : g + 2 * m;
		for (int h = 0; h < 2; h++) {
			z->t->e[r + h] = LLVMBuildExtractElement(L->b, w, ci32(L, h), "");
			z->loaded[r + h] = true;
		}
	}
	return z->t->e[k];
}

/* ---- dot tiles through shared memory with cp.async ---------------------------
 *
 * pipeline-dots leaves a loop that carries a dot's tile: loaded before the
 * loop for the first iteration, loaded at the top of the body for the next,
 * converted to its dot operand. Such a tile goes to shared memory with
 * cp.async instead of through registers: two stage buffers (the convert's
 * swizzled scratch, twice), the loads become 16-byte asynchronous copies
 * into the buffer the next iteration reads (zero-filled where masked), the
 * loop carries the buffer's number, and the conversion waits for the copies
 * of its own iteration (cp.async.wait_group 1: the next ones stay in
 * flight under this iteration's mma) and reads with ldmatrix. */
typedef struct AsyncTile {
	const Op *loop;
	const Value *arg;        /* the carried tile */
	const Op *first, *ahead; /* its loads: before the loop, in the body */
	const Op *convert;       /* the tile to its dot operand */
	int offset, bytes;       /* two stage buffers, pinned */
	int vec;                 /* elements a copy moves: 16 bytes */
	LLVMValueRef stage;      /* i32 in the body: the buffer the tile is in */
} AsyncTile;

static bool only_for_dot(const Op *op);
static int access_width(Lower *L, const Value *ptr, const Value *mask);

static bool zero_const(const Value *v)
{
	return v->def && v->def->code == OP_CONST && v->def->ival == 0 && v->def->fval == 0.0;
}

/* A load a cp.async can do: 16 bytes a copy from aligned, contiguous
 * pointers held once, zero where masked off. */
static int async_width(Lower *L, const Op *ld, const Encoding *s)
{
	const Value *ptr = ld->operands[0];
	int flags = (int)ld->attr[0];
	if (ld->attr[3] || !ptr->type.rank || (flags & MEMF_OTHER && !zero_const(ld->operands[2])))
		return 0;
	Type et = type_pointee(type_elem(ptr->type));
	int eb = type_bytes(et);
	const Lin *l = lin_of(L, ptr);
	if (repl_mask(l) & (unsigned)(L->T - 1))
		return 0;
	int w = access_width(L, ptr, flags & MEMF_MASK ? ld->operands[1] : NULL);
	if (w * eb != 16 || s->vec < w)
		return 0;
	return w;
}

/* Finds the tiles loops in r carry that way (before r is lowered: the first
 * loads come before their loop). */
static void async_prescan(Lower *L, const Region *r)
{
	for (const Op *op = r->first; op; op = op->next) {
		if (op->code != OP_FOR || (L->f->sm && L->f->sm < 80))
			continue; /* cp.async is sm_80's */
		const Region *body = &op->regions[0];
		for (int j = 0; j < op->n_results; j++) {
			const Value *arg = body->args[1 + j], *init = op->operands[3 + j], *y = body->last->operands[j];
			if (!init->def || init->def->code != OP_LOAD || init->def->parent != r || init->uses != 1 ||
			    !y->def || y->def->code != OP_LOAD || y->def->parent != body || y->uses != 1 || arg->uses != 1 ||
			    op->results[j]->uses)
				continue;
			const Op *conv = NULL;
			for (const Op *o = body->first; o && !conv; o = o->next)
				if (o->n_operands == 1 && o->operands[0] == arg)
					conv = o;
			/* (a K-major B scratch is filled by stores: no example has
			 * reached it straight from a loop's load yet) */
			if (!conv || conv->code != OP_CONVERT_LAYOUT || !conv->scratch || !conv->scratch->ldmatrix ||
			    conv->scratch->ldmatrix == 3 || !only_for_dot(conv))
				continue;
			int w = async_width(L, init->def, conv->scratch);
			if (!w || async_width(L, y->def, conv->scratch) != w)
				continue;
			AsyncTile *n = realloc(L->async, (size_t)(L->n_async + 1) * sizeof *n);
			if (!n) {
				L->failed = true;
				return;
			}
			L->async = n;
			int bytes = ((int)type_numel(arg->type) * type_bytes(type_elem(arg->type)) + 127) & ~127;
			L->async[L->n_async++] = (AsyncTile){.loop = op, .arg = arg, .first = init->def, .ahead = y->def,
			                                     .convert = conv, .bytes = bytes, .vec = w, .offset = -1};
		}
	}
}

static AsyncTile *async_of(Lower *L, const Op *ld, const Value *arg)
{
	for (int i = 0; i < L->n_async; i++)
		if ((ld && (L->async[i].first == ld || L->async[i].ahead == ld)) || (arg && L->async[i].arg == arg))
			return &L->async[i];
	return NULL;
}

static void async_asm(Lower *L, const char *text, LLVMValueRef *args, LLVMTypeRef *types, int n, const char *cons)
{
	LLVMTypeRef ft = LLVMFunctionType(L->vd, types, (unsigned)n, 0);
	LLVMValueRef fn = LLVMGetInlineAsm(ft, (char *)text, strlen(text), (char *)cons, strlen(cons), 1, 0,
	                                   LLVMInlineAsmDialectATT, 0);
	LLVMBuildCall2(L->b, ft, fn, args, (unsigned)n, "");
}

/* The copies of load ld into stage buffer `stage` (an i32), uncommitted. */
static void async_copy(Lower *L, AsyncTile *a, const Op *ld, LLVMValueRef stage)
{
	const Value *ptr = ld->operands[0];
	const Value *mask = ld->attr[0] & MEMF_MASK ? ld->operands[1] : NULL;
	const Encoding *s = a->convert->scratch;
	const Lin *li = lin_of(L, ptr);
	int eb = type_bytes(type_pointee(type_elem(ptr->type)));
	/* the buffers lie below the transient uses: written only here and read
	 * by ldmatrix, so a barrier first only where bytes were touched since */
	if (L->smem_dirty < 0 || L->smem_dirty > a->offset)
		smem_barrier(L);
	LLVMValueRef tsw = swizzle_value(L, s, thread_part(L, li));
	LLVMValueRef base = LLVMBuildAdd(L->b, ci32(L, a->offset), LLVMBuildMul(L->b, stage, ci32(L, a->bytes), ""), "");
	const char *text = "cp.async.cg.shared.global [$0], [$1], 16, $2;";
	LLVMTypeRef types[3] = {L->i64, L->gptr, L->i32};
	for (int k = 0, n = ept(L, ptr); k < n && !L->failed; k += a->vec) {
		LLVMValueRef el_idx = scratch_addr(L, s, li, tsw, k);
		LLVMValueRef byte = LLVMBuildAdd(L->b, base, LLVMBuildMul(L->b, el_idx, ci32(L, eb), ""), "");
		LLVMValueRef dst = LLVMBuildGEP2(L->b, L->i8, L->smem, &byte, 1, "");
		LLVMValueRef args[3] = {LLVMBuildPtrToInt(L->b, dst, L->i64, ""), el(L, ptr, k),
		                        mask ? LLVMBuildSelect(L->b, el(L, mask, k), ci32(L, 16), ci32(L, 0), "") : ci32(L, 16)};
		async_asm(L, text, args, types, 3, "l,l,r");
	}
	L->async_pending = true;
}

static void async_commit(Lower *L)
{
	if (L->async_pending) {
		async_asm(L, "cp.async.commit_group;", NULL, NULL, 0, "");
		L->async_synced = false;
	}
	L->async_pending = false;
}

/* A first or ahead load of a carried tile: the copies, and the buffer's
 * number as its value. */
static void lower_async_load(Lower *L, const Op *op, AsyncTile *a)
{
	Tile t = tile_new(L, 1);
	if (L->failed)
		return;
	LLVMValueRef stage;
	if (op == a->first) {
		a->offset = smem_pin(L, 2 * a->bytes); /* two buffers, kept until after the loop */
		stage = ci32(L, 0);
	} else {
		stage = LLVMBuildXor(L->b, a->stage, ci32(L, 1), ""); /* the other buffer */
	}
	async_copy(L, a, op, stage);
	t.e[0] = stage;
	L->vals[op->results[0]->id] = t;
}

/* Whether y's only use is a dot that comes after op in the same region. */
static bool only_for_dot(const Op *op)
{
	const Value *y = op->results[0];
	if (y->uses != 1)
		return false;
	for (const Op *o = op->next; o; o = o->next)
		for (int i = 0; i < o->n_operands; i++)
			if (o->operands[i] == y)
				return o->code == OP_DOT && i < 2;
	return false;
}

static void lower_convert(Lower *L, const Op *op)
{
	const Value *x = op->operands[0], *y = op->results[0];
	const Lin *li = lin_of(L, x), *lo = lin_of(L, y);
	Tile *in = val(L, x);
	int n_out = 1 << lo->n_reg;
	Tile t = tile_new(L, n_out);
	if (L->failed)
		return;
	AsyncTile *as = async_of(L, NULL, x);
	if (as) {
		/* this iteration's copies are done (the next ones may fly on), and
		 * every thread's are visible; then its dot reads with ldmatrix */
		async_commit(L);
		if (!L->async_synced) {
			async_asm(L, "cp.async.wait_group 1;", NULL, NULL, 0, "");
			smem_barrier(L);
			L->async_synced = true;
		}
		Tile *kept = arena_alloc(&L->arena, sizeof *kept);
		if (!kept) {
			L->failed = true;
			return;
		}
		*kept = t;
		LazyFrags *z = ldmatrix_setup(L, op, lo, kept, as->offset);
		if (!z)
			return;
		z->owned = false;
		z->dyn = LLVMBuildMul(L->b, as->stage, ci32(L, as->bytes), "");
		L->lazy[y->id] = z;
		L->vals[y->id] = t;
		return;
	}
	if (in->n == 1 && (1 << li->n_reg) > 1) {
		t.e[0] = in->e[0];
		t.n = 1;
		L->vals[y->id] = t;
		return;
	}
	bool same = memcmp(li->lane, lo->lane, 5) == 0 && li->n_warp == lo->n_warp &&
	            memcmp(li->warp, lo->warp, (size_t)li->n_warp) == 0;
	if (same) {
		for (int k = 0; k < n_out; k++)
			t.e[k] = in->n == 1 ? in->e[0] : in->e[reg_index(li, reg_const(lo, k))];
		L->vals[y->id] = t;
		return;
	}
	const Encoding *s = op->scratch;
	Type et = type_elem(x->type);
	LLVMTypeRef mt = mem_type(L, et);
	int eb = type_bytes(et);
	int vec = s ? s->vec : 1, load_vec = s ? s->load_vec : 1;
	/* a vector store needs register bit i on address bit i (the scratch's
	 * map keeps the vector's bits out of every other bit's image) */
	for (int i = 0; (1 << i) < vec; i++)
		if (i >= li->n_reg || swizzle_const(s, 1u << li->reg[i]) != 1u << i)
			vec = 1;
	/* an operand read by its dot later is pinned below the transient uses;
	 * it needs a barrier first only where something touched its bytes since
	 * the last one, and one after (before the dot reads) shared with the
	 * other operand's */
	bool lazy = s && s->ldmatrix && L->lazy && only_for_dot(op);
	int bytes = numel(x->type) * eb, at; /* where the scratch starts, from byte 0 */
	if (lazy) {
		if (L->smem_dirty < 0 || L->smem_dirty > L->smem_base)
			smem_barrier(L);
		at = smem_pin(L, (bytes + 127) & ~127);
	} else {
		at = L->smem_base + smem_take(L, bytes);
	}
	LLVMBasicBlockRef owned = begin_if(L, owner_of(L, li), "own");
	LLVMTypeRef vt = LLVMVectorType(mt, (unsigned)vec);
	LLVMValueRef tsw = swizzle_value(L, s, thread_part(L, li));
	for (int k = 0, n_in = 1 << li->n_reg; k < n_in; k += vec) {
		LLVMValueRef p = smem_abs(L, mt, at, scratch_addr(L, s, li, tsw, k));
		LLVMValueRef st;
		if (vec == 1) {
			st = LLVMBuildStore(L->b, to_mem(L, et, in->e[k]), p);
		} else {
			LLVMValueRef v = LLVMGetUndef(vt);
			for (int i = 0; i < vec; i++)
				v = LLVMBuildInsertElement(L->b, v, to_mem(L, et, in->e[k + i]), ci32(L, i), "");
			st = LLVMBuildStore(L->b, v, p);
		}
		LLVMSetAlignment(st, (unsigned)(vec * eb));
	}
	end_if(L, owned);
	if (lazy) { /* kept until the dot has read it */
		if (L->smem_dirty < at + bytes)
			L->smem_dirty = at + bytes;
		L->smem_unsynced = true;
		Tile *kept = arena_alloc(&L->arena, sizeof *kept);
		if (!kept) {
			L->failed = true;
			return;
		}
		*kept = t;
		L->lazy[y->id] = ldmatrix_setup(L, op, lo, kept, at);
		L->vals[y->id] = t;
		return;
	}
	smem_sync(L, at - L->smem_base, bytes);
	if (s && s->ldmatrix) { /* read all of it now */
		LazyFrags *z = ldmatrix_setup(L, op, lo, &t, at);
		L->lazy[y->id] = z;
		for (int k = 0; k < n_out && !L->failed; k++)
			t.e[k] = frag(L, y, k);
		L->lazy[y->id] = NULL;
		L->vals[y->id] = t;
		return;
	}
	for (int i = 0; (1 << i) < load_vec; i++)
		if (i >= lo->n_reg || lo->reg[i] != i)
			load_vec = 1;
	LLVMTypeRef lvt = LLVMVectorType(mt, (unsigned)load_vec);
	tsw = swizzle_value(L, s, thread_part(L, lo));
	for (int k = 0; k < n_out; k += load_vec) {
		LLVMValueRef p = smem_abs(L, mt, at, scratch_addr(L, s, lo, tsw, k));
		if (load_vec == 1) {
			t.e[k] = from_mem(L, et, LLVMBuildLoad2(L->b, mt, p, ""));
			continue;
		}
		LLVMValueRef ld = LLVMBuildLoad2(L->b, lvt, p, "");
		LLVMSetAlignment(ld, (unsigned)(load_vec * eb));
		for (int i = 0; i < load_vec; i++)
			t.e[k + i] = from_mem(L, et, LLVMBuildExtractElement(L->b, ld, ci32(L, i), ""));
	}
	L->vals[y->id] = t;
}

/* ---- dot ------------------------------------------------------------------------------ */

/* mma.sync m16n8k16 over operands in dot_operand encodings of the result's
 * mma encoding (layout.c has the fragment maps): each group of four
 * accumulator registers is one 16 x 8 tile, walked over K in steps of 16. */
static void lower_dot_mma(Lower *L, const Op *op)
{
	const Value *a = op->operands[0], *b = op->operands[1], *y = op->results[0];
	const Lin *la = lin_of(L, a), *lb = lin_of(L, b), *lc = lin_of(L, y);
	Type at = a->type, ct = y->type;
	int K = at.shape[1], N = ct.shape[1], kb = log2i(K), nb = log2i(N);
	bool bf = at.scalar == SK_BF16;
	int n_c = 1 << lc->n_reg;
	Tile t = tile_new(L, n_c);
	if (L->failed)
		return;
	for (int k = 0; k < n_c; k++)
		t.e[k] = el(L, op->operands[2], k);
	char text[256];
	snprintf(text, sizeof text,
	         "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, "
	         "{$10, $11, $12, $13};",
	         bf ? "bf16" : "f16", bf ? "bf16" : "f16");
	const char *cons = "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f";
	LLVMTypeRef args_t[14], fields[4] = {L->f32, L->f32, L->f32, L->f32};
	for (int i = 0; i < 6; i++)
		args_t[i] = L->i32;
	for (int i = 6; i < 10; i++)
		args_t[i] = L->f32;
	LLVMTypeRef rt = LLVMStructTypeInContext(L->c, fields, 4, 0);
	LLVMTypeRef ft = LLVMFunctionType(rt, args_t, 10, 0);
	LLVMValueRef mma = LLVMGetInlineAsm(ft, text, strlen(text), (char *)cons, strlen(cons), 0, 0,
	                                    LLVMInlineAsmDialectATT, 0);
	LLVMTypeRef pair = LLVMVectorType(bf ? L->bf16 : L->f16, 2);
	/* K steps outside: one step of the operands is live at a time */
	for (int kk = 0; kk < K / 16 && !L->failed; kk++)
		for (int g = 0; g < n_c / 4 && !L->failed; g++) {
			int cc = reg_const(lc, 4 * g);
			int row_c = cc >> nb, col_c = cc & (N - 1);
			int ka = reg_index(la, (row_c << kb) | (kk * 16));
			int kbb = reg_index(lb, ((kk * 16) << nb) | col_c);
			LLVMValueRef args[10];
			for (int i = 0; i < 6; i++) {
				const Value *src = i < 4 ? a : b;
				int r0 = i < 4 ? ka + 2 * i : kbb + 2 * (i - 4);
				args[i] = pair_word(L, frag(L, src, r0), frag(L, src, r0 + 1), pair);
			}
			for (int i = 0; i < 4; i++)
				args[6 + i] = t.e[4 * g + i];
			LLVMValueRef r = LLVMBuildCall2(L->b, ft, mma, args, 10, "");
			for (int i = 0; i < 4; i++)
				t.e[4 * g + i] = LLVMBuildExtractValue(L->b, r, (unsigned)i, "");
		}
	/* the operands' pinned scratches are free again */
	for (int i = 0; i < 2; i++) {
		LazyFrags *z = L->lazy[op->operands[i]->id];
		if (z && z->owned && z->offset < L->smem_base)
			L->smem_base = z->offset;
		L->lazy[op->operands[i]->id] = NULL;
	}
	L->vals[y->id] = t;
}

/* dot with FMAs from shared memory: each result element walks K. */
static void lower_dot(Lower *L, const Op *op)
{
	const Value *a = op->operands[0], *b = op->operands[1], *y = op->results[0];
	/* the layouts pass leaves the operands of an mma dot as its
	 * dot_operands (or in encodings with the same map) */
	if (a->enc && y->enc && y->enc->kind == ENC_MMA) {
		lower_dot_mma(L, op);
		return;
	}
	Type at = a->type, bt = b->type, ct = y->type;
	int K = at.shape[1];
	int a_bytes = (numel(at) * type_bytes(at) + 15) & ~15;
	int b_bytes = numel(bt) * type_bytes(bt);
	int base = smem_take(L, a_bytes + b_bytes);
	smem_store_block(L, a, val(L, a), base);
	smem_store_block(L, b, val(L, b), base + a_bytes);
	smem_sync(L, base, a_bytes + b_bytes);
	const Lin *lo = lin_of(L, y);
	int count = 1 << lo->n_reg;
	Tile t = tile_new(L, count);
	Type acc_t = type_elem(ct);
	bool fl = is_float(acc_t);
	Type in_e = type_elem(at);
	for (int k = 0; k < count && !L->failed; k++) {
		LLVMValueRef oidx = index_of(L, lo, k);
		LLVMValueRef i = coord(L, ct, oidx, 0), j = coord(L, ct, oidx, 1);
		LLVMValueRef acc = el(L, op->operands[2], k);
		Loop lp;
		loop_begin(L, &lp, ci32(L, 0), ci32(L, K), &acc, 1);
		LLVMValueRef ai = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, i, ci32(L, K), ""), lp.i, "");
		LLVMValueRef bi = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, lp.i, ci32(L, bt.shape[1]), ""), j, "");
		LLVMValueRef xv = cast(L, in_e, acc_t, smem_load(L, in_e, base, ai), op->loc);
		LLVMValueRef yv = cast(L, in_e, acc_t, smem_load(L, in_e, base + a_bytes, bi), op->loc);
		LLVMValueRef next;
		if (fl) {
			LLVMTypeRef ty = LLVMTypeOf(xv);
			LLVMValueRef args[3] = {xv, yv, lp.phis[0]};
			next = call_intrinsic(L, "llvm.fma", &ty, 1, args, 3);
		} else {
			next = LLVMBuildAdd(L->b, lp.phis[0], LLVMBuildMul(L->b, xv, yv, ""), "");
		}
		loop_end(L, &lp, &next);
		t.e[k] = lp.phis[0];
	}
	L->vals[y->id] = t;
}

/* ---- memory ------------------------------------------------------------------------ */

/* How many consecutive registers one access can take: the map must hold
 * them at consecutive positions of one dimension, and the pointers must be
 * contiguous and aligned along it (at most 16 bytes, a mask that does not
 * change across them). */
/* The run of registers that hold consecutive elements along one dimension
 * of ptr's block (from register 0): its dimension (*dim, -1 if none) and
 * length (a power of two). */
static int reg_run(Lower *L, const Value *ptr, int *dim)
{
	Type t = ptr->type;
	const Lin *l = lin_of(L, ptr);
	*dim = -1;
	if (!t.rank || l->n_reg == 0)
		return 1;
	for (int i = 0; i < t.rank; i++)
		if (t.shape[i] > 1 && l->reg[0] == lin_bit(t, i, 0))
			*dim = i;
	if (*dim < 0)
		return 1;
	int run = 0;
	while (run < l->n_reg && (1 << run) < t.shape[*dim] && l->reg[run] == lin_bit(t, *dim, run))
		run++;
	return 1 << run;
}

/* How many consecutive registers one access can take: the map must hold
 * them at consecutive positions of one dimension, and the pointers must be
 * contiguous and aligned along it (at most 16 bytes, a mask that does not
 * change across them). */
static int access_width(Lower *L, const Value *ptr, const Value *mask)
{
	int d, run = reg_run(L, ptr, &d);
	if (d < 0)
		return 1;
	int w = axis_access_width(L->ax, ptr, mask, d);
	return w < run ? w : run;
}

/* How many consecutive registers load one address under one mask bit (a
 * scale per group of weights): those after the first reuse its value. */
static int same_address_run(Lower *L, const Value *ptr, const Value *mask)
{
	int d, run = reg_run(L, ptr, &d);
	if (d < 0)
		return 1;
	int64_t c = L->ax[ptr->id].constancy[d];
	if (mask && L->ax[mask->id].constancy[d] < c)
		c = L->ax[mask->id].constancy[d];
	while (run > c)
		run /= 2;
	return run;
}

/* The inline PTX register letter and bits for one word of an access. */
static const char *reg_of(int bytes) { return bytes == 8 ? "l" : bytes == 4 ? "r" : "h"; }

/* w elements of type et packed into `words` integers of word_bytes each. */
static void pack(Lower *L, LLVMValueRef *elems, int w, LLVMTypeRef et, int eb, LLVMValueRef *words, int word_bytes)
{
	LLVMTypeRef wt = LLVMIntTypeInContext(L->c, (unsigned)word_bytes * 8);
	if (eb == word_bytes) {
		for (int i = 0; i < w; i++) {
			LLVMValueRef x = elems[i];
			if (LLVMGetTypeKind(et) == LLVMPointerTypeKind)
				x = LLVMBuildPtrToInt(L->b, x, wt, "");
			else if (et != wt)
				x = LLVMBuildBitCast(L->b, x, wt, "");
			words[i] = x;
		}
		return;
	}
	/* several narrow elements to a word */
	LLVMTypeRef vt = LLVMVectorType(et, (unsigned)w);
	LLVMValueRef v = LLVMGetUndef(vt);
	for (int i = 0; i < w; i++)
		v = LLVMBuildInsertElement(L->b, v, elems[i], ci32(L, i), "");
	int n = w * eb / word_bytes;
	LLVMValueRef wv = LLVMBuildBitCast(L->b, v, LLVMVectorType(wt, (unsigned)n), "");
	for (int i = 0; i < n; i++)
		words[i] = LLVMBuildExtractElement(L->b, wv, ci32(L, i), "");
}

static void unpack(Lower *L, LLVMValueRef *words, int word_bytes, LLVMTypeRef et, int eb, int w, LLVMValueRef *elems)
{
	LLVMTypeRef wt = LLVMIntTypeInContext(L->c, (unsigned)word_bytes * 8);
	if (eb == word_bytes) {
		for (int i = 0; i < w; i++) {
			LLVMValueRef x = words[i];
			if (LLVMGetTypeKind(et) == LLVMPointerTypeKind)
				x = LLVMBuildIntToPtr(L->b, x, et, "");
			else if (et != wt)
				x = LLVMBuildBitCast(L->b, x, et, "");
			elems[i] = x;
		}
		return;
	}
	int n = w * eb / word_bytes;
	LLVMValueRef wv = LLVMGetUndef(LLVMVectorType(wt, (unsigned)n));
	for (int i = 0; i < n; i++)
		wv = LLVMBuildInsertElement(L->b, wv, words[i], ci32(L, i), "");
	LLVMValueRef v = LLVMBuildBitCast(L->b, wv, LLVMVectorType(et, (unsigned)w), "");
	for (int i = 0; i < w; i++)
		elems[i] = LLVMBuildExtractElement(L->b, v, ci32(L, i), "");
}

static const char *cache_suffix(int64_t c)
{
	static const char *const s[] = {"", ".ca", ".cg", ".cs", ".cv", ".wb", ".wt"};
	return c >= 0 && c < 7 ? s[c] : "";
}

/* PTX takes an L1 eviction priority only where the access may use L1:
 * with the default cache operator or .ca. */
static const char *evict_suffix(int64_t e, int64_t cache)
{
	if (cache != CACHE_DEFAULT && cache != CACHE_CA)
		return "";
	return e == EVICT_FIRST ? ".L1::evict_first" : e == EVICT_LAST ? ".L1::evict_last" : "";
}

/* One (possibly masked, vector) global load or store in inline PTX. */
static void access_asm(Lower *L, bool store, LLVMValueRef ptr, LLVMValueRef pred, LLVMValueRef *words, int n_words,
                       int word_bytes, LLVMValueRef *others, const Op *op, LLVMValueRef *out)
{
	char text[512], cons[256];
	const char *r = reg_of(word_bytes);
	int bits = word_bytes * 8;
	int reg_bits = bits < 16 ? 16 : bits; /* bytes travel in 16-bit registers */
	char vec[16] = "";
	if (n_words > 1)
		snprintf(vec, sizeof vec, ".v%d", n_words);
	int pos = 0, cpos = 0;
	LLVMValueRef args[16];
	LLVMTypeRef arg_types[16];
	int na = 0;
	LLVMTypeRef wt = LLVMIntTypeInContext(L->c, (unsigned)reg_bits);
	if (reg_bits != bits && words)
		for (int i = 0; i < n_words; i++)
			words[i] = LLVMBuildZExt(L->b, words[i], wt, "");
	if (reg_bits != bits && others)
		for (int i = 0; i < n_words; i++)
			others[i] = LLVMBuildZExt(L->b, others[i], wt, "");
	if (store) {
		pos += snprintf(text + pos, sizeof text - (size_t)pos, "%sst.global%s%s%s.b%d [$0], {", pred ? "@$1 " : "",
		                cache_suffix(op->attr[1]), evict_suffix(op->attr[2], op->attr[1]), vec, bits);
		cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, "l%s", pred ? ",b" : "");
		args[na] = ptr, arg_types[na++] = L->gptr;
		if (pred)
			args[na] = pred, arg_types[na++] = L->i1;
		for (int i = 0; i < n_words; i++) {
			pos += snprintf(text + pos, sizeof text - (size_t)pos, "%s$%d", i ? ", " : "", na);
			cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",%s", r);
			args[na] = words[i], arg_types[na++] = wt;
		}
		snprintf(text + pos, sizeof text - (size_t)pos, "};");
		LLVMTypeRef ft = LLVMFunctionType(L->vd, arg_types, (unsigned)na, 0);
		LLVMValueRef a = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
		LLVMBuildCall2(L->b, ft, a, args, (unsigned)na, "");
		return;
	}
	/* load: outputs $0..$n-1 start as `other`, then the predicated load */
	for (int i = 0; i < n_words; i++)
		cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, "%s=&%s", i ? "," : "", r);
	int p_idx = n_words, pred_idx = n_words + 1, other_idx = n_words + (pred ? 2 : 1);
	cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",l");
	args[na] = ptr, arg_types[na++] = L->gptr;
	if (pred) {
		cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",b");
		args[na] = pred, arg_types[na++] = L->i1;
	}
	if (others)
		for (int i = 0; i < n_words; i++) {
			pos += snprintf(text + pos, sizeof text - (size_t)pos, "mov.b%d $%d, $%d; ", reg_bits, i, other_idx + i);
			cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",%s", r);
			args[na] = others[i], arg_types[na++] = wt;
		}
	if (pred)
		pos += snprintf(text + pos, sizeof text - (size_t)pos, "@$%d ", pred_idx);
	pos += snprintf(text + pos, sizeof text - (size_t)pos, "ld.global%s%s%s.b%d {", cache_suffix(op->attr[1]),
	                evict_suffix(op->attr[2], op->attr[1]), vec, bits);
	for (int i = 0; i < n_words; i++)
		pos += snprintf(text + pos, sizeof text - (size_t)pos, "%s$%d", i ? ", " : "", i);
	snprintf(text + pos, sizeof text - (size_t)pos, "}, [$%d];", p_idx);
	LLVMTypeRef rt;
	LLVMTypeRef fields[4];
	for (int i = 0; i < n_words; i++)
		fields[i] = wt;
	rt = n_words == 1 ? wt : LLVMStructTypeInContext(L->c, fields, (unsigned)n_words, 0);
	LLVMTypeRef ft = LLVMFunctionType(rt, arg_types, (unsigned)na, 0);
	LLVMValueRef a = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	LLVMValueRef res = LLVMBuildCall2(L->b, ft, a, args, (unsigned)na, "");
	for (int i = 0; i < n_words; i++) {
		out[i] = n_words == 1 ? res : LLVMBuildExtractValue(L->b, res, (unsigned)i, "");
		if (reg_bits != bits)
			out[i] = LLVMBuildTrunc(L->b, out[i], LLVMIntTypeInContext(L->c, (unsigned)bits), "");
	}
}

static void lower_load_store(Lower *L, const Op *op)
{
	AsyncTile *at = op->code == OP_LOAD ? async_of(L, op, NULL) : NULL;
	if (at) {
		lower_async_load(L, op, at);
		return;
	}
	bool store = op->code == OP_STORE;
	const Value *ptr = op->operands[0];
	int flags = (int)op->attr[0];
	const Value *mask = NULL, *other = NULL;
	if (store && op->n_operands > 2)
		mask = op->operands[2];
	if (!store && (flags & MEMF_MASK))
		mask = op->operands[1];
	if (!store && (flags & MEMF_OTHER))
		other = op->operands[2];
	Type et = type_pointee(type_elem(ptr->type));
	int eb = type_bytes(et);
	LLVMTypeRef let = elem_type(L, et), mt = mem_type(L, et);
	int n = ept(L, ptr);
	int w = access_width(L, ptr, mask);
	int total = w * eb;
	int word_bytes = total >= 4 ? (total >= 8 && eb == 8 ? 8 : 4) : total;
	int n_words = total / word_bytes;
	Tile res = store ? (Tile){0} : tile_new(L, n);
	bool replicated = ptr->type.rank && (repl_mask(lin_of(L, ptr)) & (unsigned)(L->T - 1));
	int same = !store && w == 1 && !op->attr[3] ? same_address_run(L, ptr, mask) : 1;
	for (int k = 0; k < n && !L->failed; k += w) {
		if (k % same) {
			res.e[k] = res.e[k - k % same];
			continue;
		}
		LLVMValueRef pred = mask ? el(L, mask, k) : NULL;
		if (store && replicated) { /* one owner stores each element */
			LLVMValueRef own = owner_of(L, lin_of(L, ptr));
			pred = pred ? LLVMBuildAnd(L->b, pred, own, "") : own;
		}
		LLVMValueRef elems[16], words[16], others[16];
		if (store) {
			for (int i = 0; i < w; i++)
				elems[i] = to_mem(L, et, el(L, op->operands[1], k + i));
			pack(L, elems, w, mt, eb, words, word_bytes);
			access_asm(L, true, el(L, ptr, k), pred, words, n_words, word_bytes, NULL, op, NULL);
			continue;
		}
		bool has_other = other != NULL;
		if (has_other) {
			for (int i = 0; i < w; i++)
				elems[i] = to_mem(L, et, el(L, other, k + i));
			pack(L, elems, w, mt, eb, others, word_bytes);
		} else if (pred) {
			for (int i = 0; i < n_words; i++)
				others[i] = LLVMConstInt(LLVMIntTypeInContext(L->c, (unsigned)word_bytes * 8), 0, 0);
			has_other = true;
		}
		access_asm(L, false, el(L, ptr, k), pred, NULL, n_words, word_bytes, has_other ? others : NULL, op, words);
		unpack(L, words, word_bytes, mt, eb, w, elems);
		for (int i = 0; i < w; i++)
			res.e[k + i] = from_mem(L, et, elems[i]);
		(void)let;
	}
	if (!store)
		L->vals[op->results[0]->id] = res;
}

static void lower_atomic(Lower *L, const Op *op)
{
	const Value *ptr = op->operands[0];
	Type et = type_pointee(type_elem(ptr->type));
	int n = ept(L, ptr);
	bool cas = op->code == OP_ATOMIC_CAS;
	const Value *mask = !cas && (op->attr[3] & MEMF_MASK) ? op->operands[2] : NULL;
	Tile res = tile_new(L, n);
	static const LLVMAtomicRMWBinOp int_ops[] = {LLVMAtomicRMWBinOpAdd, LLVMAtomicRMWBinOpMax, LLVMAtomicRMWBinOpMin,
	                                             LLVMAtomicRMWBinOpAnd, LLVMAtomicRMWBinOpOr, LLVMAtomicRMWBinOpXor,
	                                             LLVMAtomicRMWBinOpXchg};
	LLVMAtomicOrdering ord = op->attr[1] == SEM_RELAXED ? LLVMAtomicOrderingMonotonic
	                         : op->attr[1] == SEM_ACQUIRE ? LLVMAtomicOrderingAcquire
	                         : op->attr[1] == SEM_RELEASE ? LLVMAtomicOrderingRelease
	                                                      : LLVMAtomicOrderingAcquireRelease;
	bool replicated = ptr->type.rank && (repl_mask(lin_of(L, ptr)) & (unsigned)(L->T - 1));
	for (int k = 0; k < n && !L->failed; k++) {
		LLVMValueRef pred = mask ? el(L, mask, k) : NULL;
		if (replicated || !ptr->type.rank) { /* each element once: its owner (thread 0 for a scalar) */
			LLVMValueRef own = owner_of(L, lin_of(L, ptr));
			pred = pred ? LLVMBuildAnd(L->b, pred, own, "") : own;
		}
		LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b), doit = NULL, done = NULL;
		if (pred) {
			doit = LLVMAppendBasicBlockInContext(L->c, L->fn, "atom");
			done = LLVMAppendBasicBlockInContext(L->c, L->fn, "atom.done");
			LLVMBuildCondBr(L->b, pred, doit, done);
			LLVMPositionBuilderAtEnd(L->b, doit);
		}
		LLVMValueRef r;
		if (cas) {
			r = LLVMBuildAtomicCmpXchg(L->b, el(L, ptr, k), el(L, op->operands[1], k), el(L, op->operands[2], k), ord,
			                           LLVMAtomicOrderingMonotonic, 0);
			r = LLVMBuildExtractValue(L->b, r, 0, "");
		} else {
			LLVMAtomicRMWBinOp bop = int_ops[op->attr[0]];
			if (is_float(et))
				bop = op->attr[0] == ATOM_ADD ? LLVMAtomicRMWBinOpFAdd : op->attr[0] == ATOM_MAX ? LLVMAtomicRMWBinOpFMax
				    : op->attr[0] == ATOM_MIN ? LLVMAtomicRMWBinOpFMin : LLVMAtomicRMWBinOpXchg;
			else if (!is_signed(et) && (op->attr[0] == ATOM_MAX || op->attr[0] == ATOM_MIN))
				bop = op->attr[0] == ATOM_MAX ? LLVMAtomicRMWBinOpUMax : LLVMAtomicRMWBinOpUMin;
			r = LLVMBuildAtomicRMW(L->b, bop, el(L, ptr, k), el(L, op->operands[1], k), ord, 0);
		}
		if (pred) {
			LLVMBuildBr(L->b, done);
			LLVMPositionBuilderAtEnd(L->b, done);
			LLVMValueRef phi = LLVMBuildPhi(L->b, LLVMTypeOf(r), "");
			LLVMValueRef und = LLVMGetUndef(LLVMTypeOf(r));
			LLVMAddIncoming(phi, &r, &doit, 1);
			LLVMAddIncoming(phi, &und, &pre, 1);
			r = phi;
		}
		res.e[k] = r;
	}
	if (!ptr->type.rank || replicated) {
		/* only owners hold the old values: share them through shared memory */
		Type rt = op->results[0]->type;
		if (!rt.rank) {
			int off = smem_take(L, 8);
			LLVMBasicBlockRef done = begin_if(L, tid_bits_zero(L, ~0u), "t0");
			LLVMBuildStore(L->b, to_mem(L, rt, res.e[0]), smem_at(L, mem_type(L, rt), off, ci32(L, 0)));
			end_if(L, done);
			smem_sync(L, off, 8);
			res.e[0] = smem_load(L, rt, off, ci32(L, 0));
		} else {
			int bytes = numel(rt) * type_bytes(rt);
			int off = smem_take(L, bytes);
			smem_store_block(L, op->results[0], &res, off);
			smem_sync(L, off, bytes);
			for (int k = 0; k < n; k++)
				res.e[k] = smem_load(L, rt, off, index_of(L, lin_of(L, op->results[0]), k));
		}
	}
	L->vals[op->results[0]->id] = res;
}

/* ---- control flow ------------------------------------------------------------------ */

/* Phis for the elements of a region's arguments, fed from `from` with init. */
static void make_phis(Lower *L, const Region *r, const Value *const *init, LLVMBasicBlockRef from, Tile *phis)
{
	for (int i = 0; i < r->n_args; i++) {
		const Value *a = r->args[i];
		AsyncTile *at = async_of(L, NULL, a); /* a tile in shared memory: its buffer's number */
		int n = at ? 1 : ept(L, a);
		phis[i] = tile_new(L, n);
		for (int k = 0; k < n && !L->failed; k++) {
			LLVMValueRef in = el(L, init[i], k);
			phis[i].e[k] = LLVMBuildPhi(L->b, at ? L->i32 : elem_type(L, a->type), "");
			LLVMAddIncoming(phis[i].e[k], &in, &from, 1);
		}
		if (at && !L->failed)
			at->stage = phis[i].e[0];
		L->vals[a->id] = phis[i];
	}
}

static void add_incoming(Lower *L, Tile *phis, int n, const Value *const *vals, LLVMBasicBlockRef from)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < phis[i].n; k++) {
			LLVMValueRef v = el(L, vals[i], k);
			LLVMAddIncoming(phis[i].e[k], &v, &from, 1);
		}
}

static void lower_for(Lower *L, const Op *op)
{
	const Region *body = &op->regions[0];
	int nc = op->n_results;
	async_commit(L); /* the first iteration's copies: a group of their own */
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b);
	LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->c, L->fn, "for");
	LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(L->c, L->fn, "for.body");
	LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(L->c, L->fn, "for.end");
	LLVMBuildBr(L->b, head);
	LLVMPositionBuilderAtEnd(L->b, head);
	const Value *init[1 + 64];
	if (nc > 64) {
		fail(L, op->loc, "%s", "a loop carrying more than 64 values");
		return;
	}
	init[0] = op->operands[0];
	for (int i = 0; i < nc; i++)
		init[1 + i] = op->operands[3 + i];
	Tile phis[1 + 64];
	make_phis(L, body, init, pre, phis);
	if (L->failed)
		return;
	LLVMValueRef iv = phis[0].e[0];
	bool sgn = is_signed(body->args[0]->type);
	/* a step below zero counts down: iv > ub (a constant step was checked positive) */
	LLVMValueRef ub = el(L, op->operands[1], 0), step = el(L, op->operands[2], 0);
	LLVMValueRef up = LLVMBuildICmp(L->b, sgn ? LLVMIntSLT : LLVMIntULT, iv, ub, "");
	LLVMValueRef cond = up;
	if (sgn && !LLVMIsAConstantInt(step)) {
		LLVMValueRef down = LLVMBuildICmp(L->b, LLVMIntSGT, iv, ub, "");
		LLVMValueRef neg = LLVMBuildICmp(L->b, LLVMIntSLT, step, LLVMConstInt(LLVMTypeOf(step), 0, 0), "");
		cond = LLVMBuildSelect(L->b, neg, down, up, "");
	}
	LLVMBuildCondBr(L->b, cond, bb, exit);
	LLVMPositionBuilderAtEnd(L->b, bb);
	smem_unknown(L); /* after the previous iteration, or what came before the loop */
	L->async_synced = false; /* this iteration's tiles: not waited for yet */
	lower_region(L, body);
	if (L->failed)
		return;
	const Op *y = terminator(body);
	LLVMValueRef next = LLVMBuildAdd(L->b, iv, el(L, op->operands[2], 0), "");
	LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
	LLVMAddIncoming(iv, &next, &end, 1);
	add_incoming(L, phis + 1, nc, (const Value *const *)y->operands, end);
	LLVMBuildBr(L->b, head);
	LLVMPositionBuilderAtEnd(L->b, exit);
	for (int i = 0; i < nc; i++)
		L->vals[op->results[i]->id] = phis[1 + i];
	/* the loop's stage buffers: the last copies (masked off) done, then free */
	int lowest = -1;
	for (int i = 0; i < L->n_async; i++)
		if (L->async[i].loop == op && L->async[i].offset >= 0 && (lowest < 0 || L->async[i].offset < lowest))
			lowest = L->async[i].offset;
	if (lowest >= 0) {
		async_commit(L);
		async_asm(L, "cp.async.wait_group 0;", NULL, NULL, 0, "");
		smem_barrier(L);
		L->smem_base = lowest;
	}
}

static void lower_if(Lower *L, const Op *op)
{
	LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(L->c, L->fn, "then");
	LLVMBasicBlockRef eb = LLVMAppendBasicBlockInContext(L->c, L->fn, "else");
	LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(L->c, L->fn, "endif");
	LLVMBuildCondBr(L->b, el(L, op->operands[0], 0), tb, eb);
	LLVMBasicBlockRef ends[2];
	const Op *ys[2];
	LLVMBasicBlockRef starts[2] = {tb, eb};
	for (int r = 0; r < 2; r++) {
		LLVMPositionBuilderAtEnd(L->b, starts[r]);
		smem_unknown(L);
		lower_region(L, &op->regions[r]);
		if (L->failed)
			return;
		ys[r] = terminator(&op->regions[r]);
		ends[r] = LLVMGetInsertBlock(L->b);
		LLVMBuildBr(L->b, merge);
	}
	LLVMPositionBuilderAtEnd(L->b, merge);
	for (int i = 0; i < op->n_results; i++) {
		const Value *res = op->results[i];
		int n = ept(L, res);
		Tile t = tile_new(L, n);
		for (int k = 0; k < n && !L->failed; k++) {
			t.e[k] = LLVMBuildPhi(L->b, elem_type(L, res->type), "");
			LLVMValueRef in[2] = {el(L, ys[0]->operands[i], k), el(L, ys[1]->operands[i], k)};
			LLVMAddIncoming(t.e[k], in, ends, 2);
		}
		L->vals[res->id] = t;
	}
}

static void lower_while(Lower *L, const Op *op)
{
	const Region *before = &op->regions[0], *after = &op->regions[1];
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b);
	LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->c, L->fn, "while");
	LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(L->c, L->fn, "while.body");
	LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(L->c, L->fn, "while.end");
	LLVMBuildBr(L->b, head);
	LLVMPositionBuilderAtEnd(L->b, head);
	int n = before->n_args;
	if (n > 64) {
		fail(L, op->loc, "%s", "a loop carrying more than 64 values");
		return;
	}
	Tile phis[64];
	make_phis(L, before, (const Value *const *)op->operands, pre, phis);
	smem_unknown(L);
	lower_region(L, before);
	if (L->failed)
		return;
	const Op *cond = terminator(before);
	LLVMBuildCondBr(L->b, el(L, cond->operands[0], 0), bb, exit);
	LLVMPositionBuilderAtEnd(L->b, bb);
	for (int i = 0; i < after->n_args; i++)
		L->vals[after->args[i]->id] = *val(L, cond->operands[1 + i]);
	smem_unknown(L);
	lower_region(L, after);
	if (L->failed)
		return;
	const Op *y = terminator(after);
	LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
	add_incoming(L, phis, n, (const Value *const *)y->operands, end);
	LLVMBuildBr(L->b, head);
	LLVMPositionBuilderAtEnd(L->b, exit);
	for (int i = 0; i < op->n_results; i++)
		L->vals[op->results[i]->id] = *val(L, cond->operands[1 + i]);
}

/* ---- philox ---------------------------------------------------------------------------- */

static void lower_philox(Lower *L, const Op *op)
{
	int n = ept(L, op->results[0]);
	Tile out[4];
	for (int i = 0; i < 4; i++)
		out[i] = tile_new(L, n);
	LLVMValueRef seed = el(L, op->operands[0], 0);
	LLVMValueRef k0 = LLVMBuildTrunc(L->b, seed, L->i32, "");
	LLVMValueRef k1 = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, seed, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
	for (int k = 0; k < n && !L->failed; k++) {
		LLVMValueRef c[4] = {el(L, op->operands[1], k), ci32(L, 0), ci32(L, 0), ci32(L, 0)};
		LLVMValueRef key0 = k0, key1 = k1;
		for (int r = 0; r < op->attr[0]; r++) {
			LLVMValueRef p0 = LLVMBuildMul(L->b, LLVMBuildZExt(L->b, c[0], L->i64, ""), LLVMConstInt(L->i64, 0xD2511F53u, 0), "");
			LLVMValueRef p1 = LLVMBuildMul(L->b, LLVMBuildZExt(L->b, c[2], L->i64, ""), LLVMConstInt(L->i64, 0xCD9E8D57u, 0), "");
			LLVMValueRef hi0 = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, p0, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
			LLVMValueRef lo0 = LLVMBuildTrunc(L->b, p0, L->i32, "");
			LLVMValueRef hi1 = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, p1, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
			LLVMValueRef lo1 = LLVMBuildTrunc(L->b, p1, L->i32, "");
			LLVMValueRef n0 = LLVMBuildXor(L->b, LLVMBuildXor(L->b, hi1, c[1], ""), key0, "");
			LLVMValueRef n2 = LLVMBuildXor(L->b, LLVMBuildXor(L->b, hi0, c[3], ""), key1, "");
			c[0] = n0;
			c[1] = lo1;
			c[2] = n2;
			c[3] = lo0;
			key0 = LLVMBuildAdd(L->b, key0, LLVMConstInt(L->i32, 0x9E3779B9u, 0), "");
			key1 = LLVMBuildAdd(L->b, key1, LLVMConstInt(L->i32, 0xBB67AE85u, 0), "");
		}
		for (int i = 0; i < 4; i++)
			out[i].e[k] = c[i];
	}
	for (int i = 0; i < 4; i++)
		L->vals[op->results[i]->id] = out[i];
}

/* ---- print and assert --------------------------------------------------------------- */

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
static void lower_print(Lower *L, const Op *op)
{
	LLVMTypeRef gp = LLVMPointerTypeInContext(L->c, 0);
	LLVMTypeRef vp[2] = {gp, gp};
	LLVMValueRef vprintf = runtime_fn(L, "vprintf", L->i32, vp, 2);
	Type t = op->n_operands ? op->operands[0]->type : type_scalar(SK_I32);
	for (int i = 1; i < op->n_operands; i++)
		if (numel(op->operands[i]->type) != numel(t)) {
			fail(L, op->loc, "%s", "print of blocks of different sizes is not supported on the GPU yet");
			return;
		}
	char fmt[512];
	int pos = snprintf(fmt, sizeof fmt, "pid (%%d, %%d, %%d) idx (");
	for (int d = 0; d < t.rank; d++)
		pos += snprintf(fmt + pos, sizeof fmt - (size_t)pos, "%s%%d", d ? ", " : "");
	const char *prefix = op->str ? op->str : "";
	size_t pl = strlen(prefix);
	pos += snprintf(fmt + pos, sizeof fmt - (size_t)pos, ")%s%.*s%s ", pl ? " " : "", (int)(pl > 200 ? 200 : pl), prefix,
	                !pl || (prefix[pl - 1] != ':' && prefix[pl - 1] != '=') ? ":" : "");
	for (int i = 0; i < op->n_operands && pos < (int)sizeof fmt - 16; i++) {
		Type et = type_elem(op->operands[i]->type);
		const char *f = et.ptr ? "0x%llx" : is_float(et) ? "%.9g" : op->attr[0] ? "0x%llx" : is_signed(et) ? "%lld" : "%llu";
		pos += snprintf(fmt + pos, sizeof fmt - (size_t)pos, "%s%s", i ? ", " : "", f);
	}
	snprintf(fmt + pos, sizeof fmt - (size_t)pos, "\n");
	LLVMValueRef fstr = cstring(L, fmt);
	const Lin *ol = op->n_operands ? lin_of(L, op->operands[0]) : &L->scalar_lin;
	int n = 1 << ol->n_reg;
	for (int k = 0; k < n && !L->failed; k++) {
		LLVMValueRef own = owner_of(L, ol);
		LLVMBasicBlockRef done = begin_if(L, own, "print");
		LLVMTypeRef fields[3 + BLK_MAX_RANK + 16];
		LLVMValueRef vals[3 + BLK_MAX_RANK + 16];
		int nf = 0;
		static const char *const ids[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
		                                   "llvm.nvvm.read.ptx.sreg.ctaid.z"};
		for (int d = 0; d < 3; d++)
			fields[nf] = L->i32, vals[nf++] = sreg(L, ids[d]);
		LLVMValueRef idx = t.rank ? index_of(L, ol, k) : NULL;
		for (int d = 0; d < t.rank; d++)
			fields[nf] = L->i32, vals[nf++] = coord(L, t, idx, d);
		for (int i = 0; i < op->n_operands && i < 16; i++) {
			Type et = type_elem(op->operands[i]->type);
			LLVMValueRef v = el(L, op->operands[i], k);
			if (et.ptr)
				v = LLVMBuildPtrToInt(L->b, v, L->i64, "");
			else if (is_fp8(et))
				v = LLVMBuildFPExt(L->b, gpu_fp8_to_f32(L->b, L->m, (ScalarKind)et.scalar, v), L->f64, "");
			else if (is_float(et) && et.scalar != SK_F64)
				v = LLVMBuildFPExt(L->b, v, L->f64, "");
			else if (!is_float(et) && LLVMTypeOf(v) != L->i64)
				v = is_signed(et) ? LLVMBuildSExt(L->b, v, L->i64, "") : LLVMBuildZExt(L->b, v, L->i64, "");
			fields[nf] = LLVMTypeOf(v), vals[nf++] = v;
		}
		LLVMTypeRef st = LLVMStructTypeInContext(L->c, fields, (unsigned)nf, 0);
		LLVMValueRef buf = LLVMBuildAlloca(L->b, st, "");
		for (int f = 0; f < nf; f++)
			LLVMBuildStore(L->b, vals[f], LLVMBuildStructGEP2(L->b, st, buf, (unsigned)f, ""));
		LLVMValueRef args[2] = {fstr, buf};
		LLVMBuildCall2(L->b, LLVMFunctionType(L->i32, vp, 2, 0), vprintf, args, 2, "");
		end_if(L, done);
	}
}

/* assert: the first failing element of any program records, in the
 * module's global blk_assert_state, which assert failed (its ordinal in
 * program order, +1), the program id and the element; the kernel runs on
 * (a thread leaving early would strand the others at barriers). The runtime
 * reads the record after the launch and fails it with the message and the
 * .tile place (ir_assert_ops lists the asserts in the same order). */
static void lower_assert(Lower *L, const Op *op)
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
	const Lin *cl = lin_of(L, c);
	int n = 1 << cl->n_reg;
	for (int k = 0; k < n && !L->failed; k++) {
		LLVMValueRef bad = LLVMBuildNot(L->b, el(L, c, k), "");
		LLVMValueRef own = owner_of(L, cl);
		LLVMBasicBlockRef done = begin_if(L, LLVMBuildAnd(L->b, bad, own, ""), "assert");
		LLVMValueRef old = LLVMBuildAtomicCmpXchg(L->b, state, ci32(L, 0), ci32(L, id), LLVMAtomicOrderingMonotonic,
		                                          LLVMAtomicOrderingMonotonic, 0);
		old = LLVMBuildExtractValue(L->b, old, 0, "");
		LLVMBasicBlockRef won = begin_if(L, LLVMBuildICmp(L->b, LLVMIntEQ, old, ci32(L, 0), ""), "assert.first");
		static const char *const ids[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
		                                   "llvm.nvvm.read.ptx.sreg.ctaid.z"};
		for (int d = 0; d < 3; d++) {
			LLVMValueRef at = ci32(L, 1 + d);
			LLVMValueRef zero = ci32(L, 0);
			LLVMValueRef idx[2] = {zero, at};
			LLVMBuildStore(L->b, sreg(L, ids[d]), LLVMBuildGEP2(L->b, LLVMArrayType(L->i32, 8), state, idx, 2, ""));
		}
		LLVMValueRef idx[2] = {ci32(L, 0), ci32(L, 4)};
		LLVMBuildStore(L->b, c->type.rank ? index_of(L, cl, k) : ci32(L, 0),
		               LLVMBuildGEP2(L->b, LLVMArrayType(L->i32, 8), state, idx, 2, ""));
		end_if(L, won);
		end_if(L, done);
	}
}

/* ---- the op dispatch ------------------------------------------------------------------ */

/* One element of an element-wise op from its operands' elements (c is the
 * third operand's, for fma and select). */
static LLVMValueRef elementwise_value(Lower *L, const Op *op, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
	Type rt = op->results[0]->type;
	Type in_t = op->n_operands ? type_elem(op->operands[0]->type) : rt;
	/* fp8 computes in f32: exact for + - *, one more rounding that cannot
	 * matter for / (24 bits against 4) */
	bool fp8 = is_fp8(in_t) && op->code != OP_CAST && op->code != OP_BITCAST && op->code != OP_SELECT &&
	           op->code != OP_NEG && op->code != OP_ABS; /* those two are exact on the bits */
	Type fp8_t = in_t;
	if (fp8) {
		in_t = type_scalar(SK_F32);
		a = gpu_fp8_to_f32(L->b, L->m, (ScalarKind)fp8_t.scalar, a);
		if (b)
			b = gpu_fp8_to_f32(L->b, L->m, (ScalarKind)fp8_t.scalar, b);
	}
	LLVMValueRef r = NULL;
	switch (op->code) {
	case OP_CMP: r = compare(L, (CmpPred)op->attr[0], in_t, a, b); break;
	case OP_SELECT: r = LLVMBuildSelect(L->b, a, b, c, ""); break;
	case OP_NEG:
		r = is_fp8(in_t) ? LLVMBuildXor(L->b, a, LLVMConstInt(L->i8, 0x80, 0), "")
		    : is_float(in_t) ? LLVMBuildFNeg(L->b, a, "") : LLVMBuildNeg(L->b, a, "");
		break;
	case OP_NOT: r = LLVMBuildNot(L->b, a, ""); break;
	case OP_ABS:
		if (is_fp8(in_t)) {
			r = LLVMBuildAnd(L->b, a, LLVMConstInt(L->i8, 0x7F, 0), "");
		} else if (is_float(in_t)) {
			LLVMTypeRef ty = LLVMTypeOf(a);
			r = call_intrinsic(L, "llvm.fabs", &ty, 1, &a, 1);
		} else {
			LLVMTypeRef ty = LLVMTypeOf(a);
			LLVMValueRef args[2] = {a, LLVMConstInt(L->i1, 0, 0)};
			r = call_intrinsic(L, "llvm.abs", &ty, 1, args, 2);
		}
		break;
	case OP_FMA: {
		LLVMTypeRef ty = LLVMTypeOf(a);
		if (fp8)
			c = gpu_fp8_to_f32(L->b, L->m, (ScalarKind)fp8_t.scalar, c);
		LLVMValueRef args[3] = {a, b, c};
		r = call_intrinsic(L, "llvm.fma", &ty, 1, args, 3);
		break;
	}
	case OP_MATH: r = math(L, (MathFn)op->attr[0], in_t, a, op->loc); break;
	case OP_UMULHI: {
		LLVMTypeRef wide = in_t.scalar == SK_I64 || in_t.scalar == SK_U64 ? LLVMInt128TypeInContext(L->c) : L->i64;
		/* the high half of the unsigned product, whatever the signedness */
		LLVMValueRef x = LLVMBuildZExt(L->b, a, wide, "");
		LLVMValueRef y = LLVMBuildZExt(L->b, b, wide, "");
		unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(a));
		r = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, LLVMBuildMul(L->b, x, y, ""), LLVMConstInt(wide, bits, 0), ""),
		                   LLVMTypeOf(a), "");
		break;
	}
	case OP_ADDPTR: {
		LLVMTypeRef pt = mem_type(L, type_pointee(type_elem(op->operands[0]->type)));
		r = LLVMBuildGEP2(L->b, pt, a, &b, 1, "");
		break;
	}
	case OP_CAST: r = cast(L, in_t, type_elem(rt), a, op->loc); break;
	case OP_BITCAST: {
		LLVMTypeRef to = elem_type(L, type_elem(rt));
		if (LLVMGetTypeKind(to) == LLVMPointerTypeKind || LLVMGetTypeKind(LLVMTypeOf(a)) == LLVMPointerTypeKind)
			r = LLVMGetTypeKind(to) == LLVMPointerTypeKind
			        ? (LLVMGetTypeKind(LLVMTypeOf(a)) == LLVMPointerTypeKind ? a : LLVMBuildIntToPtr(L->b, a, to, ""))
			        : LLVMBuildPtrToInt(L->b, a, to, "");
		else
			r = LLVMBuildBitCast(L->b, a, to, "");
		break;
	}
	case OP_PTR_TO_INT: r = LLVMBuildPtrToInt(L->b, a, elem_type(L, type_elem(rt)), ""); break;
	case OP_INT_TO_PTR: r = LLVMBuildIntToPtr(L->b, a, L->gptr, ""); break;
	default: r = binary(L, op->code, in_t, a, b, op->attr[0]); break;
	}
	if (!r) {
		fail(L, op->loc, "internal error: cannot lower '%s' to the GPU", op_name(op->code));
		return NULL;
	}
	if (fp8 && is_fp8(type_elem(rt)))
		r = gpu_f32_to_fp8(L->b, L->m, (ScalarKind)rt.scalar, r);
	return r;
}

static void lower_op(Lower *L, const Op *op)
{
	const Value *res = op->n_results ? op->results[0] : NULL;
	int n = res ? ept(L, res) : 1;
	int flags = op_flags(op->code);
	if (flags & OPF_ELEMWISE) {
		Tile t = tile_new(L, n);
		for (int k = 0; k < n && !L->failed; k++) {
			LLVMValueRef a = op->n_operands > 0 ? el(L, op->operands[0], k) : NULL;
			LLVMValueRef b = op->n_operands > 1 ? el(L, op->operands[1], k) : NULL;
			LLVMValueRef c = op->n_operands > 2 ? el(L, op->operands[2], k) : NULL;
			t.e[k] = elementwise_value(L, op, a, b, c);
			if (!t.e[k])
				return;
		}
		L->vals[res->id] = t;
		return;
	}
	switch (op->code) {
	case OP_CONST: {
		Tile t = tile_new(L, 1);
		if (!L->failed)
			t.e[0] = const_elem(L, op, type_elem(res->type));
		L->vals[res->id] = t;
		break;
	}
	case OP_ARANGE: {
		Tile t = tile_new(L, n);
		for (int k = 0; k < n && !L->failed; k++)
			t.e[k] = op->attr[0] ? LLVMBuildAdd(L->b, index_of(L, lin_of(L, res), k), ci32(L, op->attr[0]), "")
			                     : index_of(L, lin_of(L, res), k);
		L->vals[res->id] = t;
		break;
	}
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS: {
		static const char *const ids[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
		                                   "llvm.nvvm.read.ptx.sreg.ctaid.z"};
		static const char *const ns[3] = {"llvm.nvvm.read.ptx.sreg.nctaid.x", "llvm.nvvm.read.ptx.sreg.nctaid.y",
		                                  "llvm.nvvm.read.ptx.sreg.nctaid.z"};
		Tile t = tile_new(L, 1);
		if (!L->failed)
			t.e[0] = sreg(L, (op->code == OP_PROGRAM_ID ? ids : ns)[op->attr[0]]);
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
	case OP_CONVERT_LAYOUT:
		lower_convert(L, op);
		break;
	case OP_LOAD:
	case OP_STORE:
		lower_load_store(L, op);
		break;
	case OP_ATOMIC_RMW:
	case OP_ATOMIC_CAS:
		lower_atomic(L, op);
		break;
	case OP_REDUCE:
	case OP_SCAN:
		lower_reduce(L, op);
		break;
	case OP_DOT:
		lower_dot(L, op);
		break;
	case OP_PHILOX:
		lower_philox(L, op);
		break;
	case OP_FOR:
	case OP_IF:
	case OP_WHILE:
		smem_unknown(L); /* a barrier inside may come from either side */
		(op->code == OP_FOR ? lower_for : op->code == OP_IF ? lower_if : lower_while)(L, op);
		smem_unknown(L);
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
	default:
		fail(L, op->loc, "internal error: cannot lower '%s' to the GPU", op_name(op->code));
		break;
	}
}

static void lower_region(Lower *L, const Region *r)
{
	async_prescan(L, r);
	for (const Op *op = r->first; op && !L->failed; op = op->next) {
		if (L->scope && op->loc.line)
			LLVMSetCurrentDebugLocation2(L->b, LLVMDIBuilderCreateDebugLocation(L->c, op->loc.line, op->loc.col,
			                                                                    L->scope, NULL));
		lower_op(L, op);
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

static void add_annotation(Lower *L, const char *key, int value)
{
	LLVMValueRef md[3] = {L->fn, LLVMMDStringInContext(L->c, key, (unsigned)strlen(key)), ci32(L, value)};
	LLVMAddNamedMetadataOperand(L->m, "nvvm.annotations", LLVMMDNodeInContext(L->c, md, 3));
}

bool gpu_lower_llvm(const IrFunc *f, LLVMContextRef ctx, LLVMModuleRef *out, int *shared_bytes, Diag *diag)
{
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
	memset(&L.scalar_lin, -1, sizeof L.scalar_lin);
	L.scalar_lin.n_reg = 0;
	L.scalar_lin.n_lane = 5;
	L.scalar_lin.n_warp = log2i(f->num_warps);
	if (!f->gpu) {
		diag_plain(diag, DIAG_ERROR, "internal error: '%s' is not GPU IR (the layouts pass did not run)", f->name);
		free(L.vals);
		free(L.ax);
		free(L.lins);
		free(L.lin_done);
		free(L.lazy);
		LLVMDisposeBuilder(L.b);
		LLVMDisposeModule(L.m);
		return false;
	}
	LLVMTypeRef params[256];
	int np = 0;
	for (int i = 0; i < f->n_params; i++)
		if (f->params[i].value && np < 256)
			params[np++] = param_type(&L, f->params[i].type);
	bool ok = L.vals && L.ax && L.lins && L.lin_done && L.lazy && np < 256;
	if (ok) {
		LLVMTypeRef ft = LLVMFunctionType(L.vd, params, (unsigned)np, 0);
		L.fn = LLVMAddFunction(L.m, f->name, ft);
		add_annotation(&L, "kernel", 1);
		add_annotation(&L, "maxntidx", L.T);
		LLVMValueRef smem = LLVMAddGlobalInAddressSpace(L.m, LLVMArrayType(L.i8, 0), "blk_smem", 3);
		LLVMSetLinkage(smem, LLVMExternalLinkage);
		LLVMSetAlignment(smem, 16);
		L.smem = smem;
		LLVMDIBuilderRef di = debug_info(&L);
		LLVMPositionBuilderAtEnd(L.b, LLVMAppendBasicBlockInContext(ctx, L.fn, "entry"));
		L.tid = sreg(&L, "llvm.nvvm.read.ptx.sreg.tid.x");
		for (int i = 0, a = 0; i < f->n_params && !L.failed; i++) {
			const IrParam *p = &f->params[i];
			if (!p->value)
				continue;
			LLVMValueRef v = LLVMGetParam(L.fn, (unsigned)a++);
			Type t = p->type;
			if (!t.ptr && (t.scalar == SK_F16 || t.scalar == SK_BF16))
				v = LLVMBuildBitCast(L.b, v, elem_type(&L, t), "");
			else if (!t.ptr && LLVMTypeOf(v) != elem_type(&L, t))
				v = LLVMBuildTrunc(L.b, v, elem_type(&L, t), "");
			Tile tl = tile_new(&L, 1);
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
		lower_region(&L, &f->body);
		ok = !L.failed;
		if (di) {
			LLVMDIBuilderFinalize(di);
			LLVMDisposeDIBuilder(di);
		}
	} else {
		diag_plain(diag, DIAG_ERROR, "out of memory lowering '%s'", f->name);
	}
	arena_free(&L.arena);
	free(L.vals);
	free(L.ax);
	free(L.lins);
	free(L.lin_done);
	free(L.lazy);
	free(L.async);
	free(L.tparts);
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

static double lower_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool gpu_compile_ptx(IrFunc *f, const char *arch, char **ptx, size_t *ptx_len, int *shared_bytes, Diag *diag)
{
	return gpu_compile_ptx_timed(f, arch, ptx, ptx_len, shared_bytes, NULL, NULL, diag);
}

bool gpu_compile_ptx_timed(IrFunc *f, const char *arch, char **ptx, size_t *ptx_len, int *shared_bytes,
                           double *ms_llvm, double *ms_ptx, Diag *diag)
{
	*ptx = NULL;
	if (ms_llvm)
		*ms_llvm = 0;
	if (ms_ptx)
		*ms_ptx = 0;
	if (!llvm_ptx_isa_version(arch)) {
		diag_plain(diag, DIAG_ERROR, "unknown GPU target '%s' (sm_80, sm_86, sm_89, sm_90, sm_90a ...)", arch);
		return false;
	}
	double t0 = lower_now_ms();
	if (!f->gpu)
		f->sm = atoi(arch + 3); /* "sm_90a": 90 */
	if (!f->gpu && !ir_run_passes(f, IR_GPU_PIPELINE, NULL, NULL, diag))
		return false;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m;
	bool ok = gpu_lower_llvm(f, ctx, &m, shared_bytes, diag);
	double ms_lower = lower_now_ms() - t0, ms_opt = 0, ms_emit = 0;
	if (ok) {
		char *err = NULL;
		ok = llvm_emit_ptx_timed(m, arch, 3, ptx, ptx_len, &err, &ms_opt, &ms_emit);
		if (!ok)
			diag_plain(diag, DIAG_ERROR, "kernel '%s': %s", f->name, err ? err : "PTX emission failed");
		free(err);
		LLVMDisposeModule(m);
	}
	LLVMContextDispose(ctx);
	if (ms_llvm)
		*ms_llvm = ms_lower + ms_opt;
	if (ms_ptx)
		*ms_ptx = ms_emit;
	return ok;
}

BLK_API bool blk_gpu_emit(IrFunc *f, const char *arch, bool llvm_ir, char **text, size_t *len, int *shared_bytes,
                          Diag *diag)
{
	return blk_gpu_emit_timed(f, arch, llvm_ir, text, len, shared_bytes, NULL, NULL, diag);
}

BLK_API bool blk_gpu_emit_timed(IrFunc *f, const char *arch, bool llvm_ir, char **text, size_t *len,
                                int *shared_bytes, double *ms_llvm, double *ms_ptx, Diag *diag)
{
	if (!llvm_ir)
		return gpu_compile_ptx_timed(f, arch, text, len, shared_bytes, ms_llvm, ms_ptx, diag);
	if (ms_ptx)
		*ms_ptx = 0;
	double t0 = lower_now_ms();
	if (!f->gpu && llvm_ptx_isa_version(arch))
		f->sm = atoi(arch + 3);
	if (!f->gpu && !ir_run_passes(f, IR_GPU_PIPELINE, NULL, NULL, diag))
		return false;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m;
	bool ok = gpu_lower_llvm(f, ctx, &m, shared_bytes, diag);
	if (ok) {
		char *s = LLVMPrintModuleToString(m);
		*text = s ? strdup(s) : NULL;
		*len = *text ? strlen(*text) : 0;
		LLVMDisposeMessage(s);
		LLVMDisposeModule(m);
		ok = *text != NULL;
	}
	LLVMContextDispose(ctx);
	if (ms_llvm)
		*ms_llvm = lower_now_ms() - t0;
	return ok;
}
