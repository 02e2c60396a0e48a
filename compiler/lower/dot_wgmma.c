/* dot_wgmma.c: dot with wgmma (sm_90a): a warpgroup of 4 warps multiplies
 * a 64 x N tile of A by an N-wide tile of B per K step of 16, asynchronously,
 * B (and A, unless it is already in registers: a chained dot's scores) read
 * by the tensor cores straight from shared memory through descriptors. The
 * operands' scratches are in the layout gpu/encoding.c's wgmma_operand_layout
 * describes; convert.c and async_copy.c fill them (stores, or cp.async stage
 * buffers) and leave them to the dot. */
#include "lower/lower_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Where an operand lies for wgmma: its scratch (bytes from the start of
 * shared memory, plus dyn at run time) and layout. */
typedef struct WgOperand {
	const Encoding *s; /* NULL: A in registers */
	int offset;
	LLVMValueRef dyn;
	LLVMValueRef desc0; /* i64: the descriptor of the tile's start, the address still to add */
	LLVMValueRef base;  /* i32: the shared address of the tile's start */
} WgOperand;

/* The 64-bit matrix descriptor fields: start address, leading-dimension
 * byte offset (between atoms along the adjacent dimension), stride byte
 * offset (between groups of 8 rows), swizzle mode; all but the mode in
 * 16-byte units. */
static unsigned long long desc_fields(int lbo, int sbo, int row_bytes)
{
	unsigned long long mode = row_bytes == 128 ? 1 : row_bytes == 64 ? 2 : row_bytes == 32 ? 3 : 0;
	return ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) | ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) |
	       (mode << 62);
}

static bool operand_from(Lower *L, const LazyFrags *z, const Encoding *s, Type t, WgOperand *o);

/* An operand the layout passes left in registers (a load made straight in
 * its encoding, a transpose in registers): stored into a scratch of
 * wgmma's layout here, pinned until the dot is done (*pinned: where). */
static bool operand_store(Lower *L, const Value *v, int op_idx, const Encoding *mma, WgOperand *o, int *pinned)
{
	Type t = v->type;
	int eb = type_bytes(type_elem(t));
	Encoding *s = arena_alloc(&L->arena, sizeof *s);
	if (!s || !wgmma_operand_layout(s, lw_lin_of(L, v), t, op_idx, mma->instr_n)) {
		L->failed = !s;
		return false;
	}
	if (L->smem_dirty < 0 || L->smem_dirty > L->smem_base)
		lw_smem_barrier(L);
	int total = numel(t) * eb;
	int at = lw_smem_pin_aligned(L, total, 1024);
	if (*pinned < 0)
		*pinned = at;
	lw_scratch_store(L, v, s, at, s->vec);
	if (L->smem_dirty < at + total)
		L->smem_dirty = at + total;
	L->smem_unsynced = true;
	LazyFrags z = {.convert = NULL, .offset = at, .wgmma = true};
	return operand_from(L, &z, s, t, o);
}

static bool operand_setup(Lower *L, const Value *v, WgOperand *o)
{
	memset(o, 0, sizeof *o);
	LazyFrags *z = L->lazy[v->id];
	if (!z || !z->wgmma)
		return false;
	return operand_from(L, z, z->convert->scratch, v->type, o);
}

static bool operand_from(Lower *L, const LazyFrags *z, const Encoding *s, Type t, WgOperand *o)
{
	memset(o, 0, sizeof *o);
	o->s = s;
	o->offset = z->offset;
	o->dyn = z->dyn;
	int other = t.shape[1 - s->wgmma_fast];
	o->desc0 = LLVMConstInt(L->i64, desc_fields(other * s->wgmma, 8 * s->wgmma, s->wgmma), 0);
	o->base = lw_smem_addr32(L, z->offset, z->dyn);
	return true;
}

/* The descriptor of the 16 x 16-byte-unit box at (x0, x1) of operand o
 * (element coordinates of its two dimensions). */
static LLVMValueRef operand_desc(Lower *L, const WgOperand *o, Type t, LLVMValueRef x0, LLVMValueRef x1)
{
	int fast = o->s->wgmma_fast, eb = type_bytes(type_elem(t));
	int e = o->s->wgmma / eb, other = t.shape[1 - fast];
	LLVMValueRef xf = fast ? x1 : x0, xo = fast ? x0 : x1;
	/* atom (xf / e) of other * e elements, row xo of e, element xf % e */
	LLVMValueRef off = LLVMBuildAdd(
	    L->b, LLVMBuildMul(L->b, LLVMBuildUDiv(L->b, xf, ci32(L, e), ""), ci32(L, other * e), ""),
	    LLVMBuildAdd(L->b, LLVMBuildMul(L->b, xo, ci32(L, e), ""), LLVMBuildURem(L->b, xf, ci32(L, e), ""), ""), "");
	LLVMValueRef addr = LLVMBuildAdd(L->b, o->base, LLVMBuildMul(L->b, off, ci32(L, eb), ""), "");
	LLVMValueRef field = LLVMBuildZExt(L->b, LLVMBuildLShr(L->b, LLVMBuildAnd(L->b, addr, ci32(L, 0x3FFFF), ""),
	                                                      ci32(L, 4), ""),
	                                   L->i64, "");
	return LLVMBuildOr(L->b, o->desc0, field, "");
}

static void wg_asm(Lower *L, const char *text)
{
	lw_async_asm(L, text, NULL, NULL, 0, "");
}

/* tf32x3: the small parts x - tf32(x) of operand o's f32 tile (x - tf32(x)
 * is exact), word for word into the scratch pinned at `at`, of o's layout
 * (the swizzle moves whole words: the word at each address is the small
 * part of o's word at the same address), 16 bytes a thread at a time.
 * wgmma reads them as it reads o's words, truncated: small = tf32(x -
 * big). The caller has made o's words visible to every thread. */
static void small_parts(Lower *L, const WgOperand *o, Type t, int at, WgOperand *s)
{
	int n4 = numel(t) / 4;
	LLVMTypeRef v4 = LLVMVectorType(L->f32, 4), w4 = LLVMVectorType(L->i32, 4);
	LLVMValueRef src = lw_smem_abs(L, L->i8, o->offset, o->dyn ? o->dyn : ci32(L, 0));
	LLVMValueRef dst = lw_smem_abs(L, L->i8, at, ci32(L, 0));
	LLVMValueRef keep = LLVMConstVector((LLVMValueRef[]){ci32(L, (int32_t)0xffffe000u), ci32(L, (int32_t)0xffffe000u),
	                                                     ci32(L, (int32_t)0xffffe000u), ci32(L, (int32_t)0xffffe000u)},
	                                    4);
	for (int i = 0; i * L->T < n4; i++) {
		LLVMValueRef idx = LLVMBuildAdd(L->b, L->tid, ci32(L, i * L->T), "");
		LLVMBasicBlockRef done = NULL;
		if ((i + 1) * L->T > n4) { /* the threads past the tile's end skip it */
			LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(L->b));
			LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->c, fn, "small");
			done = LLVMAppendBasicBlockInContext(L->c, fn, "small.done");
			LLVMBuildCondBr(L->b, LLVMBuildICmp(L->b, LLVMIntULT, idx, ci32(L, n4), ""), body, done);
			LLVMPositionBuilderAtEnd(L->b, body);
		}
		LLVMValueRef x = LLVMBuildLoad2(L->b, v4, LLVMBuildGEP2(L->b, v4, src, &idx, 1, ""), "");
		LLVMSetAlignment(x, 16);
		LLVMValueRef big = LLVMBuildBitCast(L->b, LLVMBuildAnd(L->b, LLVMBuildBitCast(L->b, x, w4, ""), keep, ""), v4, "");
		LLVMValueRef st = LLVMBuildStore(L->b, LLVMBuildFSub(L->b, x, big, ""), LLVMBuildGEP2(L->b, v4, dst, &idx, 1, ""));
		LLVMSetAlignment(st, 16);
		if (done) {
			LLVMBuildBr(L->b, done);
			LLVMPositionBuilderAtEnd(L->b, done);
		}
	}
	*s = *o;
	s->offset = at;
	s->dyn = NULL;
	s->base = LLVMBuildTrunc(L->b, LLVMBuildPtrToInt(L->b, dst, L->i64, ""), L->i32, "");
}

/* The 32-bit register of A's elements k and k + 1 (16-bit), packed. */
static LLVMValueRef a_word(Lower *L, const Value *a, int k)
{
	LLVMTypeRef pair = LLVMVectorType(lw_elem_type(L, type_elem(a->type)), 2);
	LLVMValueRef v = LLVMGetUndef(pair);
	v = LLVMBuildInsertElement(L->b, v, el(L, a, k), ci32(L, 0), "");
	v = LLVMBuildInsertElement(L->b, v, el(L, a, k + 1), ci32(L, 1), "");
	return LLVMBuildBitCast(L->b, v, L->i32, "");
}

/* What a dot's wgmma is: its type suffix (".f32.f16.f16"), its K step,
 * whether its operands may be transposed (16-bit inputs only; the others
 * are read K-major) and whether it has scale immediates (not integers). */
typedef struct WgKind {
	char types[32];
	int k, trans, scales;
	bool integer;
} WgKind;

static const char *wg_type_name(Type t)
{
	switch (t.scalar) {
	case SK_F16: return "f16";
	case SK_BF16: return "bf16";
	case SK_F8E4M3: return "e4m3";
	case SK_F8E5M2: return "e5m2";
	case SK_I8: return "s8";
	case SK_F32: return "tf32"; /* the tensor cores read each f32 truncated */
	default: return "?";
	}
}

static WgKind wg_kind(Type a, Type b, Type c)
{
	WgKind w;
	int eb = type_bytes(type_elem(a));
	w.integer = c.scalar == SK_I32;
	snprintf(w.types, sizeof w.types, ".%s.%s.%s", w.integer ? "s32" : "f32", wg_type_name(a), wg_type_name(b));
	w.k = 32 / eb;
	w.trans = eb == 2;
	w.scales = !w.integer;
	return w;
}

/* One wgmma m64nNk<K> into n_acc accumulators (tied in and out; with
 * scale_d 0 their values in are not read: D = A B). */
static void issue(Lower *L, const WgKind *w, int n, LLVMValueRef *acc, LLVMValueRef a_desc, LLVMValueRef *a_regs,
                  LLVMValueRef b_desc, int trans_a, int trans_b, int scale_d)
{
	int n_acc = n / 2, n_a = a_regs ? 4 : 1, n_in = n_a + 1 + n_acc;
	char text[2048], cons[2048], tail[48];
	if (!w->scales)
		snprintf(tail, sizeof tail, "%d", scale_d);
	else if (!w->trans)
		snprintf(tail, sizeof tail, "%d, 1, 1", scale_d);
	else if (a_regs)
		snprintf(tail, sizeof tail, "%d, 1, 1, %d", scale_d, trans_b);
	else
		snprintf(tail, sizeof tail, "%d, 1, 1, %d, %d", scale_d, trans_a, trans_b);
	int p = snprintf(text, sizeof text, "wgmma.mma_async.sync.aligned.m64n%dk%d%s {", n, w->k, w->types);
	for (int i = 0; i < n_acc; i++)
		p += snprintf(text + p, sizeof text - (size_t)p, "%s$%d", i ? ", " : "", i);
	if (a_regs)
		p += snprintf(text + p, sizeof text - (size_t)p, "}, {$%d, $%d, $%d, $%d}, $%d, %s;", n_acc, n_acc + 1,
		              n_acc + 2, n_acc + 3, n_acc + 4, tail);
	else
		p += snprintf(text + p, sizeof text - (size_t)p, "}, $%d, $%d, %s;", n_acc, n_acc + 1, tail);
	LLVMTypeRef acc_t = w->integer ? L->i32 : L->f32;
	int c = 0;
	for (int i = 0; i < n_acc; i++)
		c += snprintf(cons + c, sizeof cons - (size_t)c, "%s=%c", i ? "," : "", w->integer ? 'r' : 'f');
	for (int i = 0; i < n_a; i++)
		c += snprintf(cons + c, sizeof cons - (size_t)c, a_regs ? ",r" : ",l");
	c += snprintf(cons + c, sizeof cons - (size_t)c, ",l");
	for (int i = 0; i < n_acc; i++)
		c += snprintf(cons + c, sizeof cons - (size_t)c, ",%d", i);
	LLVMTypeRef fields[128], args_t[133];
	LLVMValueRef args[133];
	for (int i = 0; i < n_acc; i++)
		fields[i] = acc_t;
	int k = 0;
	for (int i = 0; i < n_a; i++) {
		args_t[k] = a_regs ? L->i32 : L->i64;
		args[k++] = a_regs ? a_regs[i] : a_desc;
	}
	args_t[k] = L->i64;
	args[k++] = b_desc;
	for (int i = 0; i < n_acc; i++) {
		args_t[k] = acc_t;
		args[k++] = acc[i];
	}
	LLVMTypeRef rt = LLVMStructTypeInContext(L->c, fields, (unsigned)n_acc, 0);
	LLVMTypeRef ft = LLVMFunctionType(rt, args_t, (unsigned)n_in, 0);
	LLVMValueRef fn = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	LLVMValueRef r = LLVMBuildCall2(L->b, ft, fn, args, (unsigned)n_in, "");
	for (int i = 0; i < n_acc; i++)
		acc[i] = LLVMBuildExtractValue(L->b, r, (unsigned)i, "");
}

/* wgmma.wait_group 0, the accumulators tied through it so that nothing
 * reads them before the products are in (an asm a group of 128). */
static void wait_all(Lower *L, LLVMValueRef *acc, int n);

void lw_wgmma_wait(Lower *L, Tile *t)
{
	Tile c = lw_tile_new(L, t->n);
	if (L->failed)
		return;
	memcpy(c.e, t->e, (size_t)t->n * sizeof *c.e);
	wait_all(L, c.e, c.n);
	*t = c;
}

static bool uses_value(const Op *o, const Value *v)
{
	for (int i = 0; i < o->n_operands; i++)
		if (o->operands[i] == v)
			return true;
	for (int i = 0; i < o->n_regions; i++)
		for (const Op *p = o->regions[i].first; p; p = p->next)
			if (uses_value(p, v))
				return true;
	return false;
}

/* With A in registers, whether the loop writes them again only after
 * `waiter` (a dot of the body that waits for every product), or never: the
 * tensor cores read A until its products are waited for, and ptxas keeps a
 * PTX register the loop writes again in its physical register (a K loop
 * loaded the next A by ld.global into the registers the products in flight
 * still read: wrong sums for 128 x 256 tiles on the H200). Attention's P
 * is made from the scores, after their dot's wait. */
static bool a_regs_kept(const Region *body, const Op *waiter, const Value *a)
{
	const Op *at = a->def;
	if (!at) {
		if (a->owner == body)
			return false; /* carried by the loop: written at its head */
		at = a->owner ? a->owner->parent : NULL;
	}
	while (at && at->parent != body)
		at = at->parent ? at->parent->parent : NULL;
	if (!at)
		return waiter != NULL; /* from outside the loop (its words are packed at the dot) */
	for (const Op *o = waiter ? waiter->next : NULL; o; o = o->next)
		if (o == at)
			return true;
	return false;
}

/* Whether dot op can leave its products in flight past its iteration: its
 * result goes only to the loop's next iteration, where either the dot
 * itself is the accumulator's only use (a K loop's acc = dot(x, y, acc)),
 * or a dot that waits for everything comes before any use (attention: the
 * scores' dot waits for the last iteration's P V); A in registers made
 * after that wait (a_regs_kept), else A and B in stage buffers of which the
 * loop fills none the dot may still read (three: the next iteration fills
 * the one two dots back, which every warpgroup has waited for before the
 * barrier that precedes it). */
static bool stays_in_flight(Lower *L, const Op *op)
{
	const Region *body = op->parent;
	const Op *loop = body ? body->parent : NULL;
	const Value *y = op->results[0];
	if (!loop || loop->code != OP_FOR || y->uses != 1)
		return false;
	const Op *term = body->last;
	int j = 0;
	while (j < term->n_operands && term->operands[j] != y)
		j++;
	if (j == term->n_operands)
		return false;
	const Value *arg = body->args[1 + j];
	const Op *waiter = NULL;
	if (op->operands[2] != arg || arg->uses != 1) {
		const Op *o = body->first;
		for (; o && o != op; o = o->next) {
			if (o->code == OP_DOT && o->results[0]->enc && o->results[0]->enc->kind == ENC_MMA &&
			    o->results[0]->enc->version == 3 && !L->wg_inflight[o->results[0]->id])
				break;
			if (uses_value(o, arg))
				return false;
		}
		if (o == op)
			return false;
		waiter = o;
	}
	for (int i = 0; i < 2; i++) {
		const LazyFrags *z = L->lazy[op->operands[i]->id];
		if (i == 0 && !z) {
			if (!a_regs_kept(body, waiter, op->operands[0]))
				return false;
			continue;
		}
		if (!z || !z->wgmma || z->stages < 3)
			return false;
	}
	return true;
}

static void wait_all(Lower *L, LLVMValueRef *acc, int n)
{
	for (int at = 0; at < n || at == 0; at += 128) {
		int m = n - at < 128 ? n - at : 128;
		char text[64], cons[1024];
		snprintf(text, sizeof text, "%s", at == 0 ? "wgmma.wait_group.sync.aligned 0;" : "");
		LLVMTypeRef ty = n ? LLVMTypeOf(acc[at]) : L->f32; /* f32, or i32 (integer dots) */
		int c = 0;
		for (int i = 0; i < m; i++)
			c += snprintf(cons + c, sizeof cons - (size_t)c, "%s=%c", i ? "," : "", ty == L->i32 ? 'r' : 'f');
		for (int i = 0; i < m; i++)
			c += snprintf(cons + c, sizeof cons - (size_t)c, ",%d", i);
		LLVMTypeRef fields[128], args_t[128];
		for (int i = 0; i < m; i++)
			fields[i] = args_t[i] = ty;
		LLVMTypeRef rt = LLVMStructTypeInContext(L->c, fields, (unsigned)m, 0);
		LLVMTypeRef ft = LLVMFunctionType(rt, args_t, (unsigned)m, 0);
		LLVMValueRef fn = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
		LLVMValueRef r = LLVMBuildCall2(L->b, ft, fn, acc + at, (unsigned)m, "");
		for (int i = 0; i < m; i++)
			acc[at + i] = LLVMBuildExtractValue(L->b, r, (unsigned)i, "");
		if (!n)
			break;
	}
}

void lower_dot_wgmma(Lower *L, const Op *op)
{
	const Value *a = op->operands[0], *b = op->operands[1], *y = op->results[0];
	const Encoding *mma = y->enc;
	const Lin *lc = lw_lin_of(L, y), *la = lw_lin_of(L, a);
	Type at = a->type, bt = b->type, ct = y->type;
	WgKind w = wg_kind(type_elem(at), type_elem(bt), type_elem(ct));
	int K = at.shape[1], n_instr = mma->instr_n, per = n_instr / 2;
	int n_c = 1 << lc->n_reg;
	WgOperand oa, ob;
	int pinned = -1; /* operands stored here: pinned from this byte until the dot is done */
	bool a_smem = operand_setup(L, a, &oa);
	/* A from registers is wgmma's for 16-bit inputs only */
	if (!a_smem && type_bytes(type_elem(at)) != 2 && !(a_smem = operand_store(L, a, 0, mma, &oa, &pinned))) {
		lw_fail(L, op->loc, "internal error: wgmma dot whose A operand cannot go to shared memory%s", "");
		return;
	}
	if (!operand_setup(L, b, &ob) && !operand_store(L, b, 1, mma, &ob, &pinned)) {
		lw_fail(L, op->loc, "internal error: wgmma dot whose B operand cannot go to shared memory%s", "");
		return;
	}
	if (n_c % per) {
		lw_fail(L, op->loc, "internal error: wgmma dot of %s accumulator registers", "an odd count of");
		return;
	}
	Tile t = lw_tile_new(L, n_c);
	if (L->failed)
		return;
	/* an accumulator of zeros is not set up: the first K step ignores it */
	const Op *cd = op->operands[2]->def;
	bool zero = cd && cd->code == OP_CONST && cd->ival == 0 && cd->fval == 0.0 && !signbit(cd->fval);
	for (int k = 0; k < n_c; k++)
		t.e[k] = zero ? LLVMGetUndef(w.integer ? L->i32 : L->f32) : el(L, op->operands[2], k);
	/* the warpgroup's rows and columns: the accumulator map's warp bits
	 * above the first two (those are the warpgroup's own warps) */
	Lin wg = *lc;
	memset(wg.lane, -1, sizeof wg.lane);
	wg.warp[0] = wg.warp[1] = -1;
	LLVMValueRef wg_idx = lw_thread_part(L, &wg);
	LLVMValueRef wg_row = lw_coord(L, ct, wg_idx, 0), wg_col = lw_coord(L, ct, wg_idx, 1);
	int trans_a = a_smem && oa.s->wgmma_fast == 0, trans_b = ob.s->wgmma_fast == 1;
	if ((!w.trans && (trans_a || trans_b || !a_smem)) || K % w.k) {
		lw_fail(L, op->loc, "internal error: a wgmma dot of %s inputs with an operand not K-major in shared memory",
		        wg_type_name(type_elem(at)));
		return;
	}
	/* tf32x3: the small parts of both operands in scratches of their own
	 * (pinned until the dot is done), computed once the operands' words
	 * are visible to every thread */
	bool x3 = type_elem(at).scalar == SK_F32 && op->attr[0] == DOT_TF32X3;
	WgOperand sa, sb;
	if (x3) {
		int bytes_a = numel(at) * 4, bytes_b = numel(bt) * 4;
		int at_a = lw_smem_pin_aligned(L, bytes_a, 1024), at_b = lw_smem_pin_aligned(L, bytes_b, 1024);
		if (pinned < 0)
			pinned = at_a;
		lw_smem_barrier(L);
		small_parts(L, &oa, at, at_a, &sa);
		small_parts(L, &ob, bt, at_b, &sb);
		if (L->smem_dirty < at_b + bytes_b)
			L->smem_dirty = at_b + bytes_b;
		L->smem_unsynced = true;
	}
	/* the stores (or copies) of the operands are done and visible to the
	 * tensor cores (the async proxy) */
	if (L->smem_unsynced) {
		wg_asm(L, "fence.proxy.async.shared::cta;");
		lw_smem_barrier(L);
	}
	/* A from registers: packed into words before the fence, so that no
	 * register a wgmma reads is written between the instructions */
	int n_g = n_c / per;
	LLVMValueRef *a_words = NULL;
	if (!a_smem) {
		a_words = arena_alloc(&L->arena, (size_t)(K / w.k * n_g * 4) * sizeof *a_words);
		if (!a_words) {
			L->failed = true;
			return;
		}
		for (int kk = 0; kk < K / w.k; kk++)
			for (int g = 0; g < n_g; g++) {
				/* this warp's 16 rows at k0: A's registers k0..k0+15 as
				 * mma.sync's fragment, in order */
				int cc = lw_reg_const(lc, g * per);
				int ka = lw_reg_index(la, ((cc >> log2i(ct.shape[1])) << log2i(K)) | (kk * 16));
				for (int i = 0; i < 4; i++)
					a_words[(kk * n_g + g) * 4 + i] = a_word(L, a, ka + 2 * i);
			}
	}
	wg_asm(L, "wgmma.fence.sync.aligned;");
	for (int kk = 0; kk < K / w.k && !L->failed; kk++) {
		LLVMValueRef k0 = ci32(L, kk * w.k);
		for (int g = 0; g < n_g && !L->failed; g++) {
			int cc = lw_reg_const(lc, g * per);
			LLVMValueRef row = LLVMBuildAdd(L->b, ci32(L, cc >> log2i(ct.shape[1])), wg_row, "");
			LLVMValueRef col = LLVMBuildAdd(L->b, ci32(L, cc & (ct.shape[1] - 1)), wg_col, "");
			LLVMValueRef a_desc = a_smem ? operand_desc(L, &oa, at, row, k0) : NULL;
			LLVMValueRef b_desc = operand_desc(L, &ob, bt, k0, col);
			int first = !(zero && kk == 0);
			if (x3) { /* a_small b_big, then a_big b_small, as mma.sync and the interpreter */
				issue(L, &w, n_instr, t.e + g * per, operand_desc(L, &sa, at, row, k0), NULL, b_desc, 0, 0, first);
				issue(L, &w, n_instr, t.e + g * per, a_desc, NULL, operand_desc(L, &sb, bt, k0, col), 0, 0, 1);
				first = 1;
			}
			issue(L, &w, n_instr, t.e + g * per, a_desc, a_words ? a_words + (kk * n_g + g) * 4 : NULL, b_desc,
			      trans_a, trans_b, first);
		}
	}
	wg_asm(L, "wgmma.commit_group.sync.aligned;");
	if (!x3 && stays_in_flight(L, op)) { /* (tf32x3's small parts are rewritten by the next iteration) */
		/* the previous iteration's products are in; this one's go on
		 * under the next iteration's copies and barrier */
		wg_asm(L, "wgmma.wait_group.sync.aligned 1;");
		L->wg_inflight[y->id] = true;
		if (L->ws == WS_CONSUMER)
			lw_tma_ws_release(L, op, true);
	} else {
		wait_all(L, t.e, n_c);
		if (L->ws == WS_CONSUMER)
			lw_tma_ws_release(L, op, false);
	}
	/* the operands' pinned scratches are free again; what the tensor cores
	 * read is done */
	if (pinned >= 0)
		lw_smem_release(L, pinned);
	for (int i = 0; i < 2; i++) {
		LazyFrags *z = L->lazy[op->operands[i]->id];
		if (z && z->owned)
			lw_smem_release(L, z->offset);
		if (z && !z->kept)
			L->lazy[op->operands[i]->id] = NULL;
	}
	L->vals[y->id] = t;
}
