/* global.c: global loads and stores in inline PTX (as wide as the layout
 * and the pointers' alignment allow, predicated by their masks), and
 * atomics. */
#include "lower/lower_int.h"

#include <string.h>

/* ---- global memory ----------------------------------------------------------------- */

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
	const Lin *l = lw_lin_of(L, ptr);
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
int lw_access_width(Lower *L, const Value *ptr, const Value *mask)
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

void lower_load_store(Lower *L, const Op *op)
{
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
	LLVMTypeRef let = lw_elem_type(L, et), mt = lw_mem_type(L, et);
	int n = ept(L, ptr);
	int w = lw_access_width(L, ptr, mask);
	int total = w * eb;
	int word_bytes = total >= 4 ? (total >= 8 && eb == 8 ? 8 : 4) : total;
	int n_words = total / word_bytes;
	Tile res = store ? (Tile){0} : lw_tile_new(L, n);
	bool replicated = ptr->type.rank && (lw_repl_mask(lw_lin_of(L, ptr)) & (unsigned)(L->T - 1));
	int same = !store && w == 1 && !op->attr[3] ? same_address_run(L, ptr, mask) : 1;
	for (int k = 0; k < n && !L->failed; k += w) {
		if (k % same) {
			res.e[k] = res.e[k - k % same];
			continue;
		}
		LLVMValueRef pred = mask ? el(L, mask, k) : NULL;
		if (store && replicated) { /* one owner stores each element */
			LLVMValueRef own = owner_of(L, lw_lin_of(L, ptr));
			pred = pred ? LLVMBuildAnd(L->b, pred, own, "") : own;
		}
		LLVMValueRef elems[16], words[16], others[16];
		if (store) {
			for (int i = 0; i < w; i++)
				elems[i] = lw_to_mem(L, et, el(L, op->operands[1], k + i));
			pack(L, elems, w, mt, eb, words, word_bytes);
			access_asm(L, true, el(L, ptr, k), pred, words, n_words, word_bytes, NULL, op, NULL);
			continue;
		}
		bool has_other = other != NULL;
		if (has_other) {
			for (int i = 0; i < w; i++)
				elems[i] = lw_to_mem(L, et, el(L, other, k + i));
			pack(L, elems, w, mt, eb, others, word_bytes);
		} else if (pred) {
			for (int i = 0; i < n_words; i++)
				others[i] = LLVMConstInt(LLVMIntTypeInContext(L->c, (unsigned)word_bytes * 8), 0, 0);
			has_other = true;
		}
		access_asm(L, false, el(L, ptr, k), pred, NULL, n_words, word_bytes, has_other ? others : NULL, op, words);
		unpack(L, words, word_bytes, mt, eb, w, elems);
		for (int i = 0; i < w; i++)
			res.e[k + i] = lw_from_mem(L, et, elems[i]);
		(void)let;
	}
	if (!store)
		L->vals[op->results[0]->id] = res;
}

/* ---- atomics ------------------------------------------------------------------------
 *
 * LLVM's NVPTX back end drops an atomic's ordering and scope (it prints a
 * relaxed atom.global), so atomics are PTX of their own, sm_70's ordered
 * forms: atom.<sem>.<scope>.global.<op>.<type>, with sem and scope as the
 * program gave them. The few kinds with no such instruction (8- and 16-bit
 * read-modify-write, float min and max, bf16 add below sm_90) keep LLVM's
 * atomic (a relaxed atom or a loop of cas) between fence.acq_rel fences of
 * the scope: one before where sem releases, one after where it acquires. */

static const char *sem_ptx(int64_t s)
{
	return s == SEM_RELAXED ? ".relaxed" : s == SEM_ACQUIRE ? ".acquire" : s == SEM_RELEASE ? ".release" : ".acq_rel";
}

static const char *scope_ptx(int64_t s) { return s == SCOPE_CTA ? ".cta" : s == SCOPE_SYS ? ".sys" : ".gpu"; }

static void atomic_fence(Lower *L, int64_t scope)
{
	char text[64];
	snprintf(text, sizeof text, "fence.acq_rel%s;", scope_ptx(scope));
	LLVMTypeRef ft = LLVMFunctionType(LLVMVoidTypeInContext(L->c), NULL, 0, 0);
	LLVMValueRef a = LLVMGetInlineAsm(ft, text, strlen(text), "~{memory}", 9, 1, 0, LLVMInlineAsmDialectATT, 0);
	LLVMBuildCall2(L->b, ft, a, NULL, 0, "");
}

/* The PTX "op.type" of atomic op on et with an ordered form, or NULL. */
static const char *atomic_form(const Lower *L, const Op *op, Type et, char *buf, size_t n)
{
	int bits = type_bytes(et) * 8;
	bool f = type_is_float(et);
	if (op->code == OP_ATOMIC_CAS) {
		snprintf(buf, n, "cas.b%d", bits);
		return bits >= 16 ? buf : NULL;
	}
	static const char *const names[] = {"add", "max", "min", "and", "or", "xor", "exch"};
	int64_t a = op->attr[0];
	if (a < 0 || a > ATOM_XCHG)
		return NULL;
	if (f && a == ATOM_ADD && bits == 16) {
		bool bf = et.scalar == SK_BF16;
		if (bf && L->f->sm < 90)
			return NULL;
		snprintf(buf, n, "add.noftz.%s", bf ? "bf16" : "f16");
		return buf;
	}
	if (bits < 32)
		return NULL;
	if (f && a == ATOM_ADD)
		snprintf(buf, n, "add.f%d", bits);
	else if (f && a != ATOM_XCHG)
		return NULL; /* float min, max */
	else if (a == ATOM_MAX || a == ATOM_MIN)
		snprintf(buf, n, "%s.%c%d", names[a], is_signed(et) ? 's' : 'u', bits);
	else if (a == ATOM_ADD)
		snprintf(buf, n, "add.u%d", bits);
	else
		snprintf(buf, n, "%s.b%d", names[a], bits);
	return buf;
}

/* atom.<sem>.<scope>.global.<form> on ptr with operands b (and c for cas). */
static LLVMValueRef atomic_asm(Lower *L, const Op *op, Type et, const char *form, LLVMValueRef ptr, LLVMValueRef b,
                               LLVMValueRef c)
{
	int bits = type_bytes(et) * 8;
	bool f = type_is_float(et) && bits >= 32 && strncmp(form, "add", 3) == 0; /* f32, f64 add in float registers */
	LLVMTypeRef vt = f ? lw_elem_type(L, et) : LLVMIntTypeInContext(L->c, (unsigned)bits);
	const char *r = f ? (bits == 64 ? "d" : "f") : bits == 64 ? "l" : bits == 16 ? "h" : "r";
	LLVMValueRef args[3] = {ptr, LLVMBuildBitCast(L->b, b, vt, ""), c ? LLVMBuildBitCast(L->b, c, vt, "") : NULL};
	LLVMTypeRef types[3] = {L->gptr, vt, vt};
	char text[128], cons[64];
	snprintf(text, sizeof text, "atom%s%s.global.%s $0, [$1], $2%s;", sem_ptx(op->attr[1]), scope_ptx(op->attr[2]), form,
	         c ? ", $3" : "");
	snprintf(cons, sizeof cons, "=%s,l,%s%s%s,~{memory}", r, r, c ? "," : "", c ? r : "");
	LLVMTypeRef ft = LLVMFunctionType(vt, types, c ? 3 : 2, 0);
	LLVMValueRef a = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	LLVMValueRef old = LLVMBuildCall2(L->b, ft, a, args, c ? 3 : 2, "");
	return LLVMBuildBitCast(L->b, old, lw_elem_type(L, et), "");
}

void lower_atomic(Lower *L, const Op *op)
{
	const Value *ptr = op->operands[0];
	Type et = type_pointee(type_elem(ptr->type));
	int n = ept(L, ptr);
	bool cas = op->code == OP_ATOMIC_CAS;
	const Value *mask = !cas && (op->attr[3] & MEMF_MASK) ? op->operands[2] : NULL;
	Tile res = lw_tile_new(L, n);
	static const LLVMAtomicRMWBinOp int_ops[] = {LLVMAtomicRMWBinOpAdd, LLVMAtomicRMWBinOpMax, LLVMAtomicRMWBinOpMin,
	                                             LLVMAtomicRMWBinOpAnd, LLVMAtomicRMWBinOpOr, LLVMAtomicRMWBinOpXor,
	                                             LLVMAtomicRMWBinOpXchg};
	LLVMAtomicOrdering ord = op->attr[1] == SEM_RELAXED ? LLVMAtomicOrderingMonotonic
	                         : op->attr[1] == SEM_ACQUIRE ? LLVMAtomicOrderingAcquire
	                         : op->attr[1] == SEM_RELEASE ? LLVMAtomicOrderingRelease
	                                                      : LLVMAtomicOrderingAcquireRelease;
	bool replicated = ptr->type.rank && (lw_repl_mask(lw_lin_of(L, ptr)) & (unsigned)(L->T - 1));
	for (int k = 0; k < n && !L->failed; k++) {
		LLVMValueRef pred = mask ? el(L, mask, k) : NULL;
		if (replicated || !ptr->type.rank) { /* each element once: its owner (thread 0 for a scalar) */
			LLVMValueRef own = owner_of(L, lw_lin_of(L, ptr));
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
		char buf[32];
		const char *form = atomic_form(L, op, et, buf, sizeof buf);
		bool rel = op->attr[1] == SEM_RELEASE || op->attr[1] == SEM_ACQ_REL;
		bool acq = op->attr[1] == SEM_ACQUIRE || op->attr[1] == SEM_ACQ_REL;
		if (form) {
			r = atomic_asm(L, op, et, form, el(L, ptr, k), el(L, op->operands[1], k),
			               cas ? el(L, op->operands[2], k) : NULL);
		} else if (cas) {
			if (rel)
				atomic_fence(L, op->attr[2]);
			r = LLVMBuildAtomicCmpXchg(L->b, el(L, ptr, k), el(L, op->operands[1], k), el(L, op->operands[2], k), ord,
			                           LLVMAtomicOrderingMonotonic, 0);
			r = LLVMBuildExtractValue(L->b, r, 0, "");
			if (acq)
				atomic_fence(L, op->attr[2]);
		} else {
			if (rel)
				atomic_fence(L, op->attr[2]);
			LLVMAtomicRMWBinOp bop = int_ops[op->attr[0]];
			if (type_is_float(et))
				bop = op->attr[0] == ATOM_ADD ? LLVMAtomicRMWBinOpFAdd : op->attr[0] == ATOM_MAX ? LLVMAtomicRMWBinOpFMax
				    : op->attr[0] == ATOM_MIN ? LLVMAtomicRMWBinOpFMin : LLVMAtomicRMWBinOpXchg;
			else if (!is_signed(et) && (op->attr[0] == ATOM_MAX || op->attr[0] == ATOM_MIN))
				bop = op->attr[0] == ATOM_MAX ? LLVMAtomicRMWBinOpUMax : LLVMAtomicRMWBinOpUMin;
			r = LLVMBuildAtomicRMW(L->b, bop, el(L, ptr, k), el(L, op->operands[1], k), ord, 0);
			if (acq)
				atomic_fence(L, op->attr[2]);
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
			int off = lw_smem_take(L, 8);
			LLVMBasicBlockRef done = lw_begin_if(L, lw_tid_bits_zero(L, ~0u), "t0");
			LLVMBuildStore(L->b, lw_to_mem(L, rt, res.e[0]), lw_smem_at(L, lw_mem_type(L, rt), off, ci32(L, 0)));
			lw_end_if(L, done);
			lw_smem_sync(L, off, 8);
			res.e[0] = lw_smem_load(L, rt, off, ci32(L, 0));
		} else {
			int bytes = numel(rt) * type_bytes(rt);
			int off = lw_smem_take(L, bytes);
			lw_smem_store_block(L, op->results[0], &res, off);
			lw_smem_sync(L, off, bytes);
			for (int k = 0; k < n; k++)
				res.e[k] = lw_smem_load(L, rt, off, lw_index_of(L, lw_lin_of(L, op->results[0]), k));
		}
	}
	L->vals[op->results[0]->id] = res;
}
