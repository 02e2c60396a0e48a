/* interp.c: the CPU interpreter of tile IR, the reference semantics of blk.
 *
 * interp_run checks the IR once (what the interpreter relies on), then runs
 * every program of the grid, on the calling thread or on a few OS threads,
 * each of which claims programs in increasing order. A program runs its ops
 * one at a time, each over a whole block (interp.h has the representation).
 * This file has the run, control flow, memory (loads, stores, atomics, all
 * checked against the registered buffers) and the reports; interp_ops.c has
 * the ops that compute. docs/interpreter.md is the user's view. */
#include "interp/interp_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* GCC's -O2 vectorizes a loop only when its trip count is a multiple of the
 * vector length (the "very cheap" cost model); these loops run over blocks
 * of any length: let it weigh the cost as -O3 does. (Clang vectorizes them
 * at -O2 anyway.) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif

/* ---- errors -------------------------------------------------------------- */

static void put_index(StrBuf *sb, int64_t elem, Type t)
{
	int64_t idx[BLK_MAX_RANK] = {0};
	for (int d = t.rank - 1; d >= 0; d--) {
		int64_t n = t.shape[d] > 0 ? t.shape[d] : 1;
		idx[d] = elem % n;
		elem /= n;
	}
	sb_putc(sb, '[');
	for (int d = 0; d < t.rank; d++)
		sb_printf(sb, "%s%lld", d ? ", " : "", (long long)idx[d]);
	sb_putc(sb, ']');
}

bool interp_fail(Worker *w, const Op *op, int64_t elem, Type t, const char *what, const char *fmt, ...)
{
	if (w->failed)
		return false;
	w->failed = true;
	w->err_loc = op ? op->loc : w->run->f->loc;
	StrBuf *sb = &w->err;
	sb->len = 0;
	sb_printf(sb, "%s in kernel '%s', program (%d, %d, %d)", what, w->run->f->name, w->pid[0], w->pid[1],
	          w->pid[2]);
	if (elem >= 0 && t.rank) {
		sb_puts(sb, ", element ");
		put_index(sb, elem, t);
	} else if (elem > 0) {
		sb_printf(sb, ", lane %lld", (long long)elem); /* inside a combine region */
	}
	if (fmt) {
		sb_puts(sb, ": ");
		va_list ap;
		va_start(ap, fmt);
		sb_vprintf(sb, fmt, ap);
		va_end(ap);
	}
	return false;
}

static bool out_of_memory(Worker *w, const Op *op)
{
	return interp_fail(w, op, -1, (Type){0}, "out of memory", NULL);
}

/* ---- value buffers and scratch -------------------------------------------- */

static bool grow(Elem **p, int64_t *cap, int64_t n)
{
	if (*cap >= n)
		return true;
	int64_t c = *cap ? *cap : 1;
	while (c < n)
		c *= 2;
	Elem *q = realloc(*p, (size_t)c * sizeof *q);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

Elem *interp_def(Worker *w, const Value *v, int64_t n)
{
	Slot *s = slot(w, v);
	if (!grow(&s->own, &s->cap, n)) {
		out_of_memory(w, v->def);
		return NULL;
	}
	s->p = s->own;
	s->n = n;
	return s->p;
}

bool interp_full(Worker *w, const Value *v)
{
	Slot *s = slot(w, v);
	int64_t n = type_numel(v->type);
	if (s->n >= n)
		return true;
	Elem e = s->p[0]; /* s->p may be another value's buffer: write to v's own */
	if (!grow(&s->own, &s->cap, n)) {
		out_of_memory(w, v->def);
		return false;
	}
	for (int64_t i = 0; i < n; i++)
		s->own[i] = e;
	s->p = s->own;
	s->n = n;
	return true;
}

Mark interp_mark(Worker *w)
{
	if (w->n_chunks == 0)
		return (Mark){0, 0};
	return (Mark){w->cur_chunk, w->chunks[w->cur_chunk].used};
}

void interp_release(Worker *w, Mark m)
{
	for (int i = m.chunk + 1; i < w->n_chunks; i++)
		w->chunks[i].used = 0;
	if (w->n_chunks) {
		w->cur_chunk = m.chunk;
		w->chunks[m.chunk].used = m.used;
	}
}

Elem *interp_scratch(Worker *w, int64_t n)
{
	if (n < 1)
		n = 1;
	for (int i = w->n_chunks ? w->cur_chunk : 0; i < w->n_chunks; i++) {
		Chunk *c = &w->chunks[i];
		if (c->cap - c->used >= n) {
			w->cur_chunk = i;
			Elem *p = c->p + c->used;
			c->used += n;
			return p;
		}
	}
	Chunk *cs = realloc(w->chunks, (size_t)(w->n_chunks + 1) * sizeof *cs);
	if (!cs)
		goto oom;
	w->chunks = cs;
	int64_t cap = n > (1 << 16) ? n : (1 << 16);
	if (w->n_chunks && cap < 2 * w->chunks[w->n_chunks - 1].cap)
		cap = 2 * w->chunks[w->n_chunks - 1].cap;
	Elem *p = malloc((size_t)cap * sizeof *p);
	if (!p)
		goto oom;
	w->chunks[w->n_chunks] = (Chunk){p, cap, n};
	w->cur_chunk = w->n_chunks++;
	return p;
oom:
	out_of_memory(w, NULL);
	return NULL;
}

/* ---- buffers -------------------------------------------------------------- */

/* [a, a + size) lies inside b. */
static inline bool within(const Buf *b, uint64_t a, uint64_t size)
{
	return a >= b->lo && a <= b->hi && b->hi - a >= size;
}

/* The buffer whose range holds address a, or NULL. */
static const Buf *find_buf(Worker *w, uint64_t a)
{
	Run *r = w->run;
	if (!r->n_bufs)
		return NULL;
	const Buf *b = &r->bufs[w->last_buf];
	if (a >= b->lo && a < b->hi)
		return b;
	int lo = 0, hi = r->n_bufs; /* the last buffer with lo <= a */
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (r->bufs[mid].lo <= a)
			lo = mid;
		else
			hi = mid;
	}
	b = &r->bufs[lo];
	if (a >= b->lo && a < b->hi) {
		w->last_buf = lo;
		return b;
	}
	return NULL;
}

static void put_buf_name(StrBuf *sb, const Buf *b)
{
	if (b->name)
		sb_printf(sb, "buffer '%s'", b->name);
	else
		sb_printf(sb, "buffer #%d", b->index);
}

/* Says where address a (an access of size bytes) is, relative to the nearest
 * buffer: "12 bytes past the end of buffer 'x' (4096 bytes)". */
static void describe_miss(Worker *w, StrBuf *sb, uint64_t a, int size)
{
	Run *r = w->run;
	sb_printf(sb, "address 0x%llx ", (unsigned long long)a);
	if (!r->n_bufs) {
		sb_puts(sb, "is in no buffer (none were given)");
		return;
	}
	const Buf *before = NULL, *after = NULL; /* the nearest below and above */
	for (int i = 0; i < r->n_bufs; i++) {
		const Buf *b = &r->bufs[i];
		if (b->lo <= a)
			before = b;
		else if (!after)
			after = b;
	}
	if (before && a < before->hi) { /* starts inside, runs past the end */
		sb_printf(sb, "(an access of %d bytes) runs %llu byte%s past the end of ", size,
		          (unsigned long long)(a + (uint64_t)size - before->hi), a + (uint64_t)size - before->hi == 1 ? "" : "s");
		put_buf_name(sb, before);
		sb_printf(sb, " (%llu bytes)", (unsigned long long)(before->hi - before->lo));
		return;
	}
	uint64_t past = before ? a - before->hi : UINT64_MAX, ahead = after ? after->lo - a : UINT64_MAX;
	const Buf *b = past <= ahead ? before : after;
	uint64_t d = past <= ahead ? past : ahead;
	if (d == 0 && b == before)
		sb_puts(sb, "is just past the end of ");
	else
		sb_printf(sb, "is %llu byte%s %s ", (unsigned long long)d, d == 1 ? "" : "s",
		          b == before ? "past the end of" : "before the start of");
	put_buf_name(sb, b);
	sb_printf(sb, " (%llu bytes)", (unsigned long long)(b->hi - b->lo));
	if (a < 4096)
		sb_puts(sb, "; it looks like a null pointer");
}

/* Reports the first bad lane of an access, looking lane by lane. */
static bool report_access(Worker *w, const Op *op, const char *kind, const Elem *p, const Elem *m, int64_t n,
                          int size, Type pt)
{
	for (int64_t i = 0; i < n; i++) {
		if (m && !m[i].u)
			continue;
		uint64_t a = p[i].u;
		const Buf *b = find_buf(w, a);
		char what[48];
		if (!b || !within(b, a, (uint64_t)size)) {
			StrBuf sb = {0};
			describe_miss(w, &sb, a, size);
			snprintf(what, sizeof what, "out-of-bounds %s", kind);
			interp_fail(w, op, i, pt, what, "%s", sb.data ? sb.data : "?");
			sb_free(&sb);
			return false;
		}
		if (a & (uint64_t)(size - 1)) {
			StrBuf sb = {0}, tn = {0};
			put_buf_name(&sb, b);
			type_print(type_elem(type_pointee(pt)), &tn);
			snprintf(what, sizeof what, "misaligned %s", kind);
			interp_fail(w, op, i, pt, what, "address 0x%llx is not a multiple of %d, the size of %s (byte %llu of %s)",
			            (unsigned long long)a, size, tn.data ? tn.data : "?", (unsigned long long)(a - b->lo),
			            sb.data ? sb.data : "?");
			sb_free(&sb);
			sb_free(&tn);
			return false;
		}
	}
	return true;
}

/* Checks every active lane of an access of size bytes at the addresses p:
 * inside one registered buffer and aligned to size. The usual case (every
 * lane in the buffer of the first one) costs one look-up and one branch-free
 * pass; anything else goes lane by lane. */
static bool check_access(Worker *w, const Op *op, const char *kind, const Elem *p, const Elem *m, int64_t n, int size,
                         Type pt)
{
	int64_t first = 0;
	if (m) {
		while (first < n && !m[first].u)
			first++;
		if (first == n)
			return true;
	}
	const Buf *b = find_buf(w, p[first].u);
	if (b && b->hi - b->lo >= (uint64_t)size) {
		uint64_t lo = b->lo, span = b->hi - b->lo - (uint64_t)size, amask = (uint64_t)size - 1;
		/* Branch-free and without compares (so that the loops vectorize):
		 * with d = a - lo, a lane is out when d or span - d has its top bit
		 * set, exact while buffers lie below 2^62 (they do). Every lane, on
		 * or off, first: when all are fine (most programs of a masked kernel)
		 * the mask need not be read. An i1 mask is 0 or 1: 0 - m is a lane
		 * mask. */
		if (b->hi < (1ull << 62)) {
			uint64_t out = 0, any = 0;
			for (int64_t i = first; i < n; i++) {
				uint64_t a = p[i].u, d = a - lo;
				out |= d | (span - d);
				any |= a;
			}
			if (!(out >> 63) && !(any & amask))
				return true;
			if (m) {
				out = any = 0;
				for (int64_t i = first; i < n; i++) {
					uint64_t a = p[i].u, d = a - lo, on = 0 - m[i].u;
					out |= (d | (span - d)) & on;
					any |= a & on;
				}
				if (!(out >> 63) && !(any & amask))
					return true;
			}
		}
	}
	return report_access(w, op, kind, p, m, n, size, pt);
}

/* ---- loads and stores ------------------------------------------------------ */

static inline void *addr(uint64_t a) { return (void *)(uintptr_t)a; }

static inline double load_f32(const void *q)
{
	uint32_t b;
	memcpy(&b, q, 4);
	if ((b & 0x7F800000) == 0x7F800000)
		return fp_from_f32_bits(b); /* keeps a NaN's bits */
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static inline void store_f32(void *q, double x)
{
	uint32_t b;
	if (x != x) {
		b = fp_to_f32_bits(x);
	} else {
		float f = (float)x;
		memcpy(&b, &f, 4);
	}
	memcpy(q, &b, 4);
}

/* One element of type t at q, as a slot value. */
static Elem load_elem(const void *q, Type t)
{
	Elem e;
	if (t.ptr) {
		memcpy(&e.u, q, 8);
		return e;
	}
	switch ((ScalarKind)t.scalar) {
	case SK_I1: e.i = *(const uint8_t *)q != 0; break;
	case SK_I8: e.i = *(const int8_t *)q; break;
	case SK_U8: e.i = *(const uint8_t *)q; break;
	case SK_I16: { int16_t v; memcpy(&v, q, 2); e.i = v; break; }
	case SK_U16: { uint16_t v; memcpy(&v, q, 2); e.i = v; break; }
	case SK_I32: { int32_t v; memcpy(&v, q, 4); e.i = v; break; }
	case SK_U32: { uint32_t v; memcpy(&v, q, 4); e.i = v; break; }
	case SK_I64: case SK_U64: memcpy(&e.u, q, 8); break;
	case SK_F32: e.f = load_f32(q); break;
	case SK_F64: memcpy(&e.f, q, 8); break;
	case SK_F16: case SK_BF16: { uint16_t v; memcpy(&v, q, 2); e.f = fp_decode((ScalarKind)t.scalar, v); break; }
	default: e.f = fp_decode((ScalarKind)t.scalar, *(const uint8_t *)q); break;
	}
	return e;
}

static void store_elem(void *q, Elem e, Type t)
{
	if (t.ptr) {
		memcpy(q, &e.u, 8);
		return;
	}
	switch ((ScalarKind)t.scalar) {
	case SK_I1: *(uint8_t *)q = e.u != 0; break;
	case SK_I8: case SK_U8: *(uint8_t *)q = (uint8_t)e.u; break;
	case SK_I16: case SK_U16: { uint16_t v = (uint16_t)e.u; memcpy(q, &v, 2); break; }
	case SK_I32: case SK_U32: { uint32_t v = (uint32_t)e.u; memcpy(q, &v, 4); break; }
	case SK_I64: case SK_U64: case SK_F64: memcpy(q, &e.u, 8); break;
	case SK_F32: store_f32(q, e.f); break;
	case SK_F16: case SK_BF16: { uint16_t v = (uint16_t)fp_encode((ScalarKind)t.scalar, e.f); memcpy(q, &v, 2); break; }
	default: *(uint8_t *)q = (uint8_t)exact_bits((ScalarKind)t.scalar, e.f); break;
	}
}

/* An operand of n elements (a single one is repeated: stride 0). */
static inline const Elem *operand(Worker *w, const Op *op, int i, int64_t *stride)
{
	Slot *s = slot(w, op->operands[i]);
	*stride = s->n == 1 ? 0 : 1;
	return s->p;
}

/* The pointers and the mask of a memory op are written out in full (exec);
 * other, a store's value and an atomic's operands may be uniform. */
static bool exec_load(Worker *w, const Op *op)
{
	Type rt = op->results[0]->type;
	int64_t n = type_numel(rt), os = 0;
	const Elem *p = slot(w, op->operands[0])->p, *m = NULL, *o = NULL;
	int k = 1;
	if (op->attr[0] & MEMF_MASK)
		m = slot(w, op->operands[k++])->p;
	if (op->attr[0] & MEMF_OTHER)
		o = operand(w, op, k++, &os);
	Elem *r = interp_def(w, op->results[0], n);
	if (!r || !check_access(w, op, "load", p, m, n, elem_bytes(rt), op->operands[0]->type))
		return false;
	/* A loop per element kind: r[i] = lane on ? what is at p[i] : other. */
#define GATHER(DECL, CONV) \
	do { \
		if (!m) \
			for (int64_t i = 0; i < n; i++) { \
				const void *q = addr(p[i].u); \
				DECL; \
				r[i].CONV; \
			} \
		else \
			for (int64_t i = 0; i < n; i++) { \
				if (!m[i].u) { \
					r[i].u = o ? o[i * os].u : 0; /* no `other`: undefined on the GPU; 0 here */ \
					continue; \
				} \
				const void *q = addr(p[i].u); \
				DECL; \
				r[i].CONV; \
			} \
	} while (0)
	switch (rt.ptr ? SK_U64 : (ScalarKind)rt.scalar) {
	case SK_F32: GATHER((void)0, f = load_f32(q)); break;
	case SK_I32: GATHER(int32_t v; memcpy(&v, q, 4), i = v); break;
	case SK_U32: GATHER(uint32_t v; memcpy(&v, q, 4), i = v); break;
	case SK_I64: case SK_U64: case SK_F64: GATHER(uint64_t v; memcpy(&v, q, 8), u = v); break;
	case SK_F16: GATHER(uint16_t v; memcpy(&v, q, 2), f = fp_decode(SK_F16, v)); break;
	case SK_BF16: GATHER(uint16_t v; memcpy(&v, q, 2); uint32_t fb = (uint32_t)v << 16; float fv; memcpy(&fv, &fb, 4),
	                     f = (v & 0x7F80) == 0x7F80 ? fp_decode(SK_BF16, v) : fv); break;
	default: GATHER((void)0, u = load_elem(q, rt).u); break;
	}
#undef GATHER
	return true;
}

static bool exec_store(Worker *w, const Op *op)
{
	Type pt = op->operands[0]->type, vt = type_pointee(pt);
	int64_t n = type_numel(pt), vs;
	const Elem *p = slot(w, op->operands[0])->p, *v = operand(w, op, 1, &vs), *m = NULL;
	if (op->attr[0] & MEMF_MASK)
		m = slot(w, op->operands[2])->p;
	if (!check_access(w, op, "store", p, m, n, elem_bytes(vt), pt))
		return false;
	/* A loop per element kind: what is at p[i] = v[i] where the lane is on. */
#define SCATTER(STMT) \
	do { \
		if (!m) \
			for (int64_t i = 0; i < n; i++) { \
				void *q = addr(p[i].u); \
				Elem e = v[i * vs]; \
				STMT; \
			} \
		else \
			for (int64_t i = 0; i < n; i++) { \
				if (!m[i].u) \
					continue; \
				void *q = addr(p[i].u); \
				Elem e = v[i * vs]; \
				STMT; \
			} \
	} while (0)
	switch (vt.ptr ? SK_U64 : (ScalarKind)vt.scalar) {
	case SK_F32: SCATTER(store_f32(q, e.f)); break;
	case SK_I32: case SK_U32: SCATTER(uint32_t b = (uint32_t)e.u; memcpy(q, &b, 4)); break;
	case SK_I64: case SK_U64: case SK_F64: SCATTER(memcpy(q, &e.u, 8)); break;
	default: SCATTER(store_elem(q, e, vt)); break;
	}
#undef SCATTER
	return true;
}

/* ---- atomics ------------------------------------------------------------- */

static int success_order(int64_t sem)
{
	switch (sem) {
	case SEM_ACQUIRE: return __ATOMIC_ACQUIRE;
	case SEM_RELEASE: return __ATOMIC_RELEASE;
	case SEM_RELAXED: return __ATOMIC_RELAXED;
	default: return __ATOMIC_ACQ_REL;
	}
}

static int failure_order(int64_t sem)
{
	return sem == SEM_ACQUIRE || sem == SEM_ACQ_REL ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;
}

static uint64_t atomic_get(void *q, int bytes)
{
	switch (bytes) {
	case 1: return __atomic_load_n((uint8_t *)q, __ATOMIC_RELAXED);
	case 2: return __atomic_load_n((uint16_t *)q, __ATOMIC_RELAXED);
	case 4: return __atomic_load_n((uint32_t *)q, __ATOMIC_RELAXED);
	default: return __atomic_load_n((uint64_t *)q, __ATOMIC_RELAXED);
	}
}

/* Compare-and-swap of the bits at q; *old gets what was there. */
static bool atomic_cas_bits(void *q, int bytes, uint64_t *old, uint64_t desired, int so, int fo)
{
	switch (bytes) {
	case 1: {
		uint8_t e = (uint8_t)*old;
		bool ok = __atomic_compare_exchange_n((uint8_t *)q, &e, (uint8_t)desired, false, so, fo);
		*old = e;
		return ok;
	}
	case 2: {
		uint16_t e = (uint16_t)*old;
		bool ok = __atomic_compare_exchange_n((uint16_t *)q, &e, (uint16_t)desired, false, so, fo);
		*old = e;
		return ok;
	}
	case 4: {
		uint32_t e = (uint32_t)*old;
		bool ok = __atomic_compare_exchange_n((uint32_t *)q, &e, (uint32_t)desired, false, so, fo);
		*old = e;
		return ok;
	}
	default:
		return __atomic_compare_exchange_n((uint64_t *)q, old, desired, false, so, fo);
	}
}

/* The bits of slot value e as an element of type t in memory, and back. */
static uint64_t to_bits(Elem e, Type t)
{
	if (t.ptr || scalar_is_int((ScalarKind)t.scalar))
		return e.u;
	if ((ScalarKind)t.scalar == SK_F32)
		return fp_to_f32_bits(e.f);
	return exact_bits((ScalarKind)t.scalar, e.f);
}

static Elem from_bits(uint64_t b, Type t)
{
	Elem e;
	if (t.ptr)
		e.u = b;
	else if (scalar_is_int((ScalarKind)t.scalar))
		e.i = canon_int((ScalarKind)t.scalar, b);
	else if ((ScalarKind)t.scalar == SK_F32)
		e.f = fp_from_f32_bits((uint32_t)b);
	else
		e.f = fp_decode((ScalarKind)t.scalar, b);
	return e;
}

/* old OP v, as atomic_rmw computes it (max and min of floats as maximum()). */
static Elem combine(int64_t aop, Elem old, Elem v, Type t)
{
	ScalarKind k = (ScalarKind)t.scalar;
	Elem r = old;
	if (!t.ptr && scalar_is_float(k)) {
		double x = old.f, y = v.f;
		switch (aop) {
		case ATOM_ADD: r.f = fp_round(k, x + y); break;
		case ATOM_MAX: r.f = x != x ? y : y != y ? x : x == y ? (signbit(x) ? y : x) : x > y ? x : y; break;
		case ATOM_MIN: r.f = x != x ? y : y != y ? x : x == y ? (signbit(x) ? x : y) : x < y ? x : y; break;
		case ATOM_XCHG: r = v; break;
		}
		return r;
	}
	bool sgn = scalar_is_signed(k) && k != SK_I1;
	switch (aop) {
	case ATOM_ADD: r.u = old.u + v.u; break;
	case ATOM_MAX: r = sgn ? (old.i > v.i ? old : v) : (old.u > v.u ? old : v); break;
	case ATOM_MIN: r = sgn ? (old.i < v.i ? old : v) : (old.u < v.u ? old : v); break;
	case ATOM_AND: r.u = old.u & v.u; break;
	case ATOM_OR: r.u = old.u | v.u; break;
	case ATOM_XOR: r.u = old.u ^ v.u; break;
	case ATOM_XCHG: r = v; break;
	}
	if (!t.ptr)
		r.i = canon_int(k, r.u);
	return r;
}

static bool exec_atomic(Worker *w, const Op *op)
{
	bool cas = op->code == OP_ATOMIC_CAS;
	Type pt = op->operands[0]->type, vt = type_pointee(pt);
	int64_t n = type_numel(pt), vs, cs = 0;
	const Elem *p = slot(w, op->operands[0])->p, *v, *m = NULL, *c = NULL;
	if (cas) {
		c = operand(w, op, 1, &cs);
		v = operand(w, op, 2, &vs);
	} else {
		v = operand(w, op, 1, &vs);
		if (op->attr[3] & MEMF_MASK)
			m = slot(w, op->operands[2])->p;
	}
	Elem *r = interp_def(w, op->results[0], n);
	int bytes = elem_bytes(vt);
	if (!r || !check_access(w, op, "atomic", p, m, n, bytes, pt))
		return false;
	int so = success_order(op->attr[1]), fo = failure_order(op->attr[1]);
	bool is_int = vt.ptr || scalar_is_int((ScalarKind)vt.scalar);
	for (int64_t i = 0; i < n; i++) {
		if (m && !m[i].u) {
			r[i].u = 0;
			continue;
		}
		void *q = addr(p[i].u);
		Elem val = v[i * vs];
		if (cas) {
			uint64_t old = to_bits(c[i * cs], vt);
			atomic_cas_bits(q, bytes, &old, to_bits(val, vt), so, fo);
			r[i] = from_bits(old, vt);
			continue;
		}
		int64_t aop = op->attr[0];
		if (is_int && bytes >= 4 && aop != ATOM_MAX && aop != ATOM_MIN) {
			uint64_t b = val.u, old = 0;
			/* the fetch-ops the hardware has, at 32 and 64 bits */
			if (bytes == 4) {
				uint32_t *q4 = q, b4 = (uint32_t)b;
				switch (aop) {
				case ATOM_ADD: old = __atomic_fetch_add(q4, b4, so); break;
				case ATOM_AND: old = __atomic_fetch_and(q4, b4, so); break;
				case ATOM_OR: old = __atomic_fetch_or(q4, b4, so); break;
				case ATOM_XOR: old = __atomic_fetch_xor(q4, b4, so); break;
				default: old = __atomic_exchange_n(q4, b4, so); break;
				}
			} else {
				uint64_t *q8 = q;
				switch (aop) {
				case ATOM_ADD: old = __atomic_fetch_add(q8, b, so); break;
				case ATOM_AND: old = __atomic_fetch_and(q8, b, so); break;
				case ATOM_OR: old = __atomic_fetch_or(q8, b, so); break;
				case ATOM_XOR: old = __atomic_fetch_xor(q8, b, so); break;
				default: old = __atomic_exchange_n(q8, b, so); break;
				}
			}
			r[i] = from_bits(old, vt);
			continue;
		}
		/* everything else: read, combine, compare-and-swap until it sticks */
		uint64_t old = atomic_get(q, bytes);
		for (;;) {
			Elem now = from_bits(old, vt);
			uint64_t want = to_bits(combine(aop, now, val, vt), vt);
			if (atomic_cas_bits(q, bytes, &old, want, so, fo)) {
				r[i] = now;
				break;
			}
		}
	}
	return true;
}

/* ---- control flow ---------------------------------------------------------- */

/* Region arguments args[0..n) take the values src[0..n) at once (a source may
 * be an argument itself: a swap): each goes to the argument's spare buffer,
 * which then becomes its own. */
static bool assign_args(Worker *w, Value *const *args, Value *const *src, int n)
{
	for (int i = 0; i < n; i++) {
		Slot *d = slot(w, args[i]);
		int64_t cnt = type_numel(args[i]->type);
		if (!grow(&d->alt, &d->alt_cap, cnt))
			return out_of_memory(w, NULL);
		copy_elems(d->alt, slot(w, src[i]), cnt);
	}
	for (int i = 0; i < n; i++) {
		Slot *d = slot(w, args[i]);
		Elem *t = d->own;
		int64_t c = d->cap;
		d->own = d->alt;
		d->cap = d->alt_cap;
		d->alt = t;
		d->alt_cap = c;
		d->p = d->own;
		d->n = type_numel(args[i]->type);
	}
	return true;
}

/* The op's results take the values src. */
static bool assign_results(Worker *w, const Op *op, Value *const *src)
{
	for (int i = 0; i < op->n_results; i++) {
		int64_t n = type_numel(op->results[i]->type);
		Elem *d = interp_def(w, op->results[i], n);
		if (!d)
			return false;
		copy_elems(d, slot(w, src[i]), n);
	}
	return true;
}

/* After a region gave no terminator: fine if it returned, else it failed. */
static bool unwound(Worker *w) { return !w->failed; }

static bool exec_if(Worker *w, const Op *op)
{
	bool c = slot(w, op->operands[0])->p[0].u != 0;
	const Op *t = interp_block(w, &op->regions[c ? 0 : 1]);
	if (!t)
		return unwound(w);
	return assign_results(w, op, t->operands);
}

static bool exec_for(Worker *w, const Op *op)
{
	const Region *r = &op->regions[0];
	Type it = op->operands[0]->type;
	bool is_unsigned = scalar_is_unsigned((ScalarKind)it.scalar);
	Elem lb = slot(w, op->operands[0])->p[0], ub = slot(w, op->operands[1])->p[0],
	     st = slot(w, op->operands[2])->p[0];
	__int128 iv = is_unsigned ? (__int128)lb.u : lb.i, end = is_unsigned ? (__int128)ub.u : ub.i,
	         step = is_unsigned ? (__int128)st.u : st.i;
	if (step == 0)
		return interp_fail(w, op, -1, (Type){0}, "for loop with a step of 0", "it would never end");
	int nv = op->n_operands - 3;
	if (!assign_args(w, r->args + 1, op->operands + 3, nv))
		return false;
	while (step > 0 ? iv < end : iv > end) {
		Elem *e = interp_def(w, r->args[0], 1);
		if (!e)
			return false;
		e->i = (int64_t)iv;
		const Op *t = interp_block(w, r);
		if (!t)
			return unwound(w);
		if (!assign_args(w, r->args + 1, t->operands, nv))
			return false;
		iv += step;
	}
	return assign_results(w, op, r->args + 1);
}

static bool exec_while(Worker *w, const Op *op)
{
	const Region *before = &op->regions[0], *after = &op->regions[1];
	if (!assign_args(w, before->args, op->operands, op->n_operands))
		return false;
	for (;;) {
		const Op *t = interp_block(w, before);
		if (!t)
			return unwound(w);
		if (!slot(w, t->operands[0])->p[0].u)
			return assign_results(w, op, t->operands + 1);
		if (!assign_args(w, after->args, t->operands + 1, after->n_args))
			return false;
		t = interp_block(w, after);
		if (!t)
			return unwound(w);
		if (!assign_args(w, before->args, t->operands, before->n_args))
			return false;
	}
}

static bool exec_assert(Worker *w, const Op *op)
{
	const Slot *c = slot(w, op->operands[0]);
	for (int64_t i = 0; i < c->n; i++)
		if (!c->p[i].u)
			return interp_fail(w, op, i, op->operands[0]->type, "assertion failed", "%s",
			                   op->str && *op->str ? op->str : "(no message)");
	return true;
}

static bool exec(Worker *w, const Op *op)
{
	if (op_flags(op->code) & OPF_ELEMWISE)
		return interp_elementwise(w, op);
	switch (op->code) {
	case OP_SPLAT: case OP_BROADCAST: case OP_RESHAPE: case OP_EXPAND_DIMS: case OP_HINT: case OP_CONVERT_LAYOUT:
	case OP_IF: case OP_FOR: case OP_WHILE:
		break; /* they take uniform operands as they are */
	default:
		for (int i = 0; i < op->n_operands; i++) {
			/* a load's other, a store's value and an atomic's values may stay
			 * uniform: they are read with stride 0 */
			bool other = op->code == OP_LOAD && (op->attr[0] & MEMF_OTHER) && i == op->n_operands - 1;
			if (other || (op->code == OP_STORE && i == 1) || (op->code == OP_ATOMIC_RMW && i == 1) ||
			    (op->code == OP_ATOMIC_CAS && i > 0))
				continue;
			if (!interp_full(w, op->operands[i]))
				return false;
		}
	}
	switch (op->code) {
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS: {
		Elem *r = interp_def(w, op->results[0], 1);
		if (!r)
			return false;
		int axis = (int)op->attr[0];
		r->i = op->code == OP_PROGRAM_ID ? w->pid[axis] : w->run->grid[axis];
		return true;
	}
	case OP_LOAD: return exec_load(w, op);
	case OP_STORE: return exec_store(w, op);
	case OP_ATOMIC_RMW:
	case OP_ATOMIC_CAS: return exec_atomic(w, op);
	case OP_REDUCE: return interp_reduce(w, op);
	case OP_SCAN: return interp_scan(w, op);
	case OP_DOT: return interp_dot(w, op);
	case OP_PHILOX: return interp_philox(w, op);
	case OP_PRINT: return interp_print(w, op);
	case OP_ASSERT: return exec_assert(w, op);
	case OP_IF: return exec_if(w, op);
	case OP_FOR: return exec_for(w, op);
	case OP_WHILE: return exec_while(w, op);
	default: return interp_shape(w, op);
	}
}

const Op *interp_block(Worker *w, const Region *r)
{
	for (const Op *op = r->first; op; op = op->next) {
		switch (op->code) {
		case OP_YIELD:
		case OP_CONDITION:
			return op;
		case OP_RETURN:
			w->returned = true;
			return NULL;
		default:
			if (!exec(w, op) || w->returned)
				return NULL;
		}
	}
	return NULL;
}

/* ---- checking the IR ---------------------------------------------------------
 *
 * What the interpreter relies on, checked once before running: every operand
 * defined before its use, operand and result counts, and shapes (so that no
 * loop reads past a buffer). A violation is a bug of the compiler, reported
 * as "malformed IR". */

typedef struct Check {
	const IrFunc *f;
	Diag *diag;
	bool *defined; /* by value id */
	bool ok;
} Check;

static bool bad(Check *c, const Op *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool bad(Check *c, const Op *op, const char *fmt, ...)
{
	StrBuf sb = {0};
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	diag_error(c->diag, op->loc, "malformed IR in kernel '%s': '%s' %s", c->f->name, op_name(op->code),
	           sb.data ? sb.data : "");
	sb_free(&sb);
	c->ok = false;
	return false;
}

static bool same_elem(Type a, Type b) { return a.scalar == b.scalar && a.ptr == b.ptr; }
static bool is_int_t(Type t) { return !t.ptr && scalar_is_int((ScalarKind)t.scalar); }
static bool is_float_t(Type t) { return !t.ptr && scalar_is_float((ScalarKind)t.scalar); }
static bool is_i1(Type t) { return !t.ptr && t.scalar == SK_I1; }

/* Operand i has n elements (or one, repeated). */
static bool fits(const Op *op, int i, int64_t n)
{
	int64_t m = type_numel(op->operands[i]->type);
	return m == n || m == 1;
}

static bool valid_type(Type t)
{
	if (t.scalar >= SK_COUNT || t.rank > BLK_MAX_RANK || t.ptr > BLK_MAX_PTR_DEPTH)
		return false;
	int64_t n = 1;
	for (int d = 0; d < t.rank; d++) {
		if (t.shape[d] < 1 || t.shape[d] > BLK_MAX_NUMEL)
			return false;
		n *= t.shape[d];
		if (n > BLK_MAX_NUMEL)
			return false;
	}
	return true;
}

static bool check_region(Check *c, const Region *r, const Op *owner);

/* The terminator that ends r, if it is of that kind with n operands. */
static const Op *ends_with(const Region *r, OpCode code, int n)
{
	const Op *t = r->last;
	return t && t->code == code && (n < 0 || t->n_operands == n) ? t : NULL;
}

/* vals[i] have the types of tv[i] (elements and count). */
static bool match_types(Value *const *vals, Value *const *tv, int n)
{
	for (int i = 0; i < n; i++)
		if (!same_elem(vals[i]->type, tv[i]->type) || type_numel(vals[i]->type) != type_numel(tv[i]->type))
			return false;
	return true;
}

static bool check_op(Check *c, const Op *op)
{
	int no = op->n_operands, nr = op->n_results;
	Type r0 = nr ? op->results[0]->type : (Type){0}, o0 = no ? op->operands[0]->type : (Type){0};
	int64_t n = type_numel(r0);
	if (op->code >= OP_COUNT)
		return bad(c, op, "has an unknown op code");
	if (op->n_regions != op_regions(op->code) || (op->n_regions && !op->regions))
		return bad(c, op, "has %d regions", op->n_regions);
	for (int i = 0; i < no; i++)
		if (!op->operands[i] || op->operands[i]->id < 0 || op->operands[i]->id >= c->f->n_values ||
		    !c->defined[op->operands[i]->id])
			return bad(c, op, "uses operand %d before it is defined (or from outside its scope)", i);
	for (int i = 0; i < no; i++)
		if (!valid_type(op->operands[i]->type))
			return bad(c, op, "has an operand of an invalid type");
	for (int i = 0; i < nr; i++)
		if (!op->results[i] || op->results[i]->id < 0 || op->results[i]->id >= c->f->n_values ||
		    !valid_type(op->results[i]->type))
			return bad(c, op, "has a bad result %d", i);

	int want_ops = -1, want_res = -1;
	if (op_flags(op->code) & OPF_ELEMWISE) {
		switch (op->code) {
		case OP_NEG: case OP_NOT: case OP_ABS: case OP_MATH: case OP_CAST: case OP_BITCAST:
		case OP_PTR_TO_INT: case OP_INT_TO_PTR:
			want_ops = 1;
			break;
		case OP_SELECT: case OP_FMA:
			want_ops = 3;
			break;
		default:
			want_ops = 2;
		}
		if (no != want_ops || nr != 1)
			return bad(c, op, "takes %d operands and gives 1 result", want_ops);
		for (int i = 0; i < no; i++)
			if (!fits(op, i, n))
				return bad(c, op, "operand %d has %lld elements, the result %lld", i,
				           (long long)type_numel(op->operands[i]->type), (long long)n);
		Type o1 = no > 1 ? op->operands[1]->type : o0;
		switch (op->code) {
		case OP_ADDPTR:
			if (!r0.ptr || !same_elem(o0, r0) || !is_int_t(o1))
				return bad(c, op, "takes a pointer and an integer offset");
			break;
		case OP_CMP:
			if (!is_i1(r0) || !same_elem(o0, o1) || op->attr[0] < CMP_EQ || op->attr[0] > CMP_GE)
				return bad(c, op, "compares two operands of one type into i1");
			break;
		case OP_SELECT:
			if (!is_i1(o0) || !same_elem(o1, r0) || !same_elem(op->operands[2]->type, r0))
				return bad(c, op, "takes an i1 condition and two values of the result's type");
			break;
		case OP_CAST:
			if ((o0.ptr != 0) != (r0.ptr != 0) && !(o0.ptr && r0.ptr))
				return bad(c, op, "converts elements (pointers: use ptr_to_int, int_to_ptr)");
			break;
		case OP_BITCAST:
			if (elem_bytes(o0) != elem_bytes(r0) || (o0.ptr != 0) != (r0.ptr != 0) ||
			    (!o0.ptr && scalar_bits((ScalarKind)o0.scalar) != scalar_bits((ScalarKind)r0.scalar)))
				return bad(c, op, "needs types of the same width");
			break;
		case OP_PTR_TO_INT:
			if (!o0.ptr || !is_int_t(r0))
				return bad(c, op, "turns a pointer into an integer");
			break;
		case OP_INT_TO_PTR:
			if (!is_int_t(o0) || !r0.ptr)
				return bad(c, op, "turns an integer into a pointer");
			break;
		case OP_MATH:
			if (!is_float_t(r0) || !same_elem(o0, r0) || op->attr[0] < 0 || op->attr[0] >= MATH_COUNT)
				return bad(c, op, "applies a known function to floats");
			break;
		case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR: case OP_NOT: case OP_UMULHI:
			for (int i = 0; i < no; i++)
				if (!is_int_t(op->operands[i]->type) || !same_elem(op->operands[i]->type, r0))
					return bad(c, op, "takes integers of the result's type");
			break;
		default: /* add sub mul div rem min max neg abs fma */
			if (r0.ptr)
				return bad(c, op, "does not take pointers");
			for (int i = 0; i < no; i++)
				if (!same_elem(op->operands[i]->type, r0))
					return bad(c, op, "takes operands of the result's type");
		}
		return true;
	}

	switch (op->code) {
	case OP_CONST:
		want_ops = 0, want_res = 1;
		break;
	case OP_ARANGE:
		if (no || nr != 1 || r0.rank != 1 || !is_int_t(r0) || op->attr[1] - op->attr[0] != r0.shape[0])
			return bad(c, op, "gives an i32[end - start] block");
		break;
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS:
		if (no || nr != 1 || r0.rank || !is_int_t(r0) || op->attr[0] < 0 || op->attr[0] > 2)
			return bad(c, op, "gives an integer scalar for axis 0, 1 or 2");
		break;
	case OP_SPLAT:
		if (no != 1 || nr != 1 || type_numel(o0) != 1 || !same_elem(o0, r0))
			return bad(c, op, "repeats one element of the result's type");
		break;
	case OP_BROADCAST:
		if (no != 1 || nr != 1 || o0.rank != r0.rank || !same_elem(o0, r0))
			return bad(c, op, "keeps the rank and element type");
		for (int d = 0; d < r0.rank; d++)
			if (o0.shape[d] != r0.shape[d] && o0.shape[d] != 1)
				return bad(c, op, "stretches only dimensions of size 1");
		break;
	case OP_EXPAND_DIMS:
	case OP_RESHAPE:
	case OP_HINT:
	case OP_CONVERT_LAYOUT:
		if (no != 1 || nr != 1 || type_numel(o0) != n || !same_elem(o0, r0))
			return bad(c, op, "keeps the elements");
		break;
	case OP_TRANS: {
		bool seen[BLK_MAX_RANK] = {0};
		if (no != 1 || nr != 1 || o0.rank != r0.rank || !same_elem(o0, r0))
			return bad(c, op, "keeps the rank and element type");
		for (int d = 0; d < r0.rank; d++) {
			int64_t s = op->attr[d];
			if (s < 0 || s >= r0.rank || seen[s] || o0.shape[s] != r0.shape[d])
				return bad(c, op, "needs a permutation of the operand's dimensions");
			seen[s] = true;
		}
		break;
	}
	case OP_CAT:
		if (no != 2 || nr != 1 || !type_eq(o0, op->operands[1]->type) || o0.rank < 1 || r0.rank != o0.rank ||
		    !same_elem(o0, r0) || r0.shape[0] != 2 * o0.shape[0])
			return bad(c, op, "joins two blocks of one type along dimension 0");
		break;
	case OP_JOIN:
		if (no != 2 || nr != 1 || !type_eq(o0, op->operands[1]->type) || r0.rank != o0.rank + 1 ||
		    r0.shape[r0.rank - 1] != 2 || type_numel(r0) != 2 * type_numel(o0) || !same_elem(o0, r0))
			return bad(c, op, "stacks two blocks of one type along a new last dimension");
		break;
	case OP_SPLIT:
		if (no != 1 || nr != 2 || o0.rank < 1 || o0.shape[o0.rank - 1] != 2 || !same_elem(o0, r0) ||
		    !type_eq(r0, op->results[1]->type) || 2 * n != type_numel(o0))
			return bad(c, op, "halves a block whose last dimension is 2");
		break;
	case OP_LOAD: {
		int k = 1 + !!(op->attr[0] & MEMF_MASK) + !!(op->attr[0] & MEMF_OTHER);
		if (no != k || nr != 1 || !o0.ptr || !same_elem(type_pointee(o0), r0) || type_numel(o0) != n)
			return bad(c, op, "takes a pointer, then a mask and other as its flags say");
		if ((op->attr[0] & MEMF_MASK) && (!is_i1(op->operands[1]->type) || !fits(op, 1, n)))
			return bad(c, op, "needs an i1 mask of the pointer's shape");
		if ((op->attr[0] & MEMF_OTHER) && (!same_elem(op->operands[k - 1]->type, r0) || !fits(op, k - 1, n)))
			return bad(c, op, "needs 'other' of the loaded type");
		break;
	}
	case OP_STORE: {
		int k = 2 + !!(op->attr[0] & MEMF_MASK);
		int64_t np = type_numel(o0);
		if (no != k || nr || !o0.ptr || !same_elem(type_pointee(o0), op->operands[1]->type) || !fits(op, 1, np))
			return bad(c, op, "takes a pointer, a value of the pointee type, and a mask as its flags say");
		if (k == 3 && (!is_i1(op->operands[2]->type) || !fits(op, 2, np)))
			return bad(c, op, "needs an i1 mask of the pointer's shape");
		break;
	}
	case OP_ATOMIC_RMW: {
		int k = 2 + !!(op->attr[3] & MEMF_MASK);
		Type vt = type_pointee(o0);
		if (no != k || nr != 1 || !o0.ptr || !same_elem(vt, r0) || type_numel(o0) != n || !fits(op, 1, n) ||
		    !same_elem(op->operands[1]->type, vt) || (k == 3 && (!is_i1(op->operands[2]->type) || !fits(op, 2, n))))
			return bad(c, op, "takes a pointer, a value and a mask as its flags say; gives the old values");
		if (op->attr[0] < ATOM_ADD || op->attr[0] > ATOM_XCHG ||
		    (op->attr[0] >= ATOM_AND && op->attr[0] <= ATOM_XOR && !is_int_t(vt)) ||
		    (op->attr[0] != ATOM_XCHG && vt.ptr) || elem_bytes(vt) > 8)
			return bad(c, op, "has an operation its type does not allow");
		break;
	}
	case OP_ATOMIC_CAS:
		if (no != 3 || nr != 1 || !o0.ptr || !same_elem(type_pointee(o0), r0) || type_numel(o0) != n ||
		    !same_elem(op->operands[1]->type, r0) || !same_elem(op->operands[2]->type, r0) || !fits(op, 1, n) ||
		    !fits(op, 2, n))
			return bad(c, op, "takes a pointer, the expected and the new values");
		break;
	case OP_REDUCE:
	case OP_SCAN: {
		const Region *rg = op->regions;
		int64_t axis = op->attr[0];
		if (no < 1 || nr != no || rg->n_args != 2 * no || axis < 0 || axis >= o0.rank)
			return bad(c, op, "takes n blocks, gives n results, has a region of 2n arguments and a valid axis");
		for (int i = 0; i < no; i++) {
			Type t = op->operands[i]->type, rt = op->results[i]->type;
			if (t.rank != o0.rank || memcmp(t.shape, o0.shape, sizeof t.shape) != 0)
				return bad(c, op, "needs operands of one shape");
			if (!same_elem(rt, t) || !same_elem(rg->args[i]->type, t) || !same_elem(rg->args[no + i]->type, t) ||
			    rg->args[i]->type.rank || rg->args[no + i]->type.rank)
				return bad(c, op, "needs scalar region arguments and results of its operands' element types");
			if (op->code == OP_SCAN ? !type_eq(rt, t) : type_numel(rt) * t.shape[axis] != type_numel(t))
				return bad(c, op, "has results of the wrong shape");
		}
		const Op *y = ends_with(rg, OP_YIELD, no);
		if (!y)
			return bad(c, op, "needs a region ending with a yield of %d values", no);
		break;
	}
	case OP_DOT: {
		Type b = no > 1 ? op->operands[1]->type : (Type){0}, acc = no > 2 ? op->operands[2]->type : (Type){0};
		if (no != 3 || nr != 1 || o0.rank != 2 || b.rank != 2 || acc.rank != 2 || !type_eq(acc, r0) ||
		    o0.shape[1] != b.shape[0] || o0.shape[0] != acc.shape[0] || b.shape[1] != acc.shape[1] || o0.ptr ||
		    b.ptr || r0.ptr)
			return bad(c, op, "takes a[M, K], b[K, N] and acc[M, N] and gives acc's type");
		break;
	}
	case OP_PHILOX:
		if (no != 2 || nr != 4 || type_numel(o0) != 1 || !is_int_t(o0) || !is_int_t(op->operands[1]->type) ||
		    type_numel(op->operands[1]->type) != n)
			return bad(c, op, "takes an integer seed and a block of counters, gives four blocks");
		for (int i = 0; i < 4; i++)
			if (!is_int_t(op->results[i]->type) || type_numel(op->results[i]->type) != n)
				return bad(c, op, "gives four integer blocks of the counters' shape");
		break;
	case OP_PRINT:
		want_res = 0;
		break;
	case OP_ASSERT:
		if (no != 1 || nr || !is_i1(o0))
			return bad(c, op, "takes one i1 condition");
		break;
	case OP_FOR: {
		const Region *rg = op->regions;
		int nv = no - 3;
		if (no < 3 || nr != nv || rg->n_args != nv + 1)
			return bad(c, op, "takes lower bound, upper bound, step and initial values; its region an iv and the values");
		for (int i = 0; i < 3; i++)
			if (!is_int_t(op->operands[i]->type) || op->operands[i]->type.rank ||
			    !same_elem(op->operands[i]->type, o0) || !same_elem(rg->args[0]->type, o0) || rg->args[0]->type.rank)
				return bad(c, op, "needs integer scalar bounds and step of the iv's type");
		if (!match_types(op->operands + 3, rg->args + 1, nv) || !match_types(op->results, rg->args + 1, nv))
			return bad(c, op, "needs initial values, region arguments and results of the same types");
		const Op *y = ends_with(rg, OP_YIELD, nv);
		if (!y && !ends_with(rg, OP_RETURN, -1))
			return bad(c, op, "needs a region ending with a yield of %d values", nv);
		break;
	}
	case OP_IF:
		if (no != 1 || !is_i1(o0) || o0.rank)
			return bad(c, op, "takes a scalar i1 condition");
		for (int i = 0; i < 2; i++) {
			if (op->regions[i].n_args)
				return bad(c, op, "has regions without arguments");
			if (nr && !ends_with(&op->regions[i], OP_YIELD, nr) && !ends_with(&op->regions[i], OP_RETURN, -1))
				return bad(c, op, "needs both regions to end with a yield of %d values", nr);
		}
		break;
	case OP_WHILE: {
		const Region *b = &op->regions[0], *a = &op->regions[1];
		if (b->n_args != no || a->n_args != nr || !match_types(op->operands, b->args, no))
			return bad(c, op, "needs region 0 to take its initial values and region 1 its results");
		const Op *cd = ends_with(b, OP_CONDITION, nr + 1);
		if (!cd && !ends_with(b, OP_RETURN, -1))
			return bad(c, op, "needs region 0 to end with a condition forwarding %d values", nr);
		if (cd && !match_types(cd->operands + 1, a->args, nr))
			return bad(c, op, "forwards values of other types than region 1 takes");
		if (!match_types(op->results, a->args, nr))
			return bad(c, op, "has results of other types than region 1 takes");
		break;
	}
	case OP_YIELD:
	case OP_CONDITION:
	case OP_RETURN:
		if (op->next)
			return bad(c, op, "must end its region");
		if (op->code == OP_CONDITION && (no < 1 || !is_i1(o0) || o0.rank))
			return bad(c, op, "takes a scalar i1 condition first");
		if (op->code == OP_YIELD) { /* the values the parent expects */
			const Op *p = op->parent ? op->parent->parent : NULL;
			Value *const *want = NULL;
			int nw = -1;
			if (p && p->code == OP_FOR)
				want = p->regions[0].args + 1, nw = p->regions[0].n_args - 1;
			else if (p && p->code == OP_WHILE)
				want = p->operands, nw = p->n_operands;
			else if (p && p->code == OP_IF)
				want = p->results, nw = p->n_results;
			else if (p && (p->code == OP_REDUCE || p->code == OP_SCAN))
				want = p->regions[0].args, nw = p->n_operands;
			if (nw >= 0 && (no != nw || !match_types(op->operands, want, nw)))
				return bad(c, op, "gives values other than its parent '%s' takes", op_name(p->code));
		}
		break;
	default:
		break;
	}
	if ((want_ops >= 0 && no != want_ops) || (want_res >= 0 && nr != want_res))
		return bad(c, op, "has %d operands and %d results", no, nr);
	return true;
}

static bool check_region(Check *c, const Region *r, const Op *owner)
{
	(void)owner;
	for (int i = 0; i < r->n_args; i++) {
		Value *a = r->args[i];
		if (!a || a->id < 0 || a->id >= c->f->n_values || !valid_type(a->type) || c->defined[a->id])
			return c->ok = false, diag_error(c->diag, owner ? owner->loc : c->f->loc,
			                                  "malformed IR in kernel '%s': a bad region argument", c->f->name),
			       false;
		c->defined[a->id] = true;
	}
	for (const Op *op = r->first; op; op = op->next) {
		if (!check_op(c, op))
			return false;
		for (int i = 0; i < op->n_regions; i++)
			if (!check_region(c, &op->regions[i], op))
				return false;
		for (int i = 0; i < op->n_results; i++) {
			if (c->defined[op->results[i]->id])
				return bad(c, op, "defines a value twice");
			c->defined[op->results[i]->id] = true;
		}
	}
	/* leaving the region: its values go out of scope */
	for (int i = 0; i < r->n_args; i++)
		c->defined[r->args[i]->id] = false;
	for (const Op *op = r->first; op; op = op->next)
		for (int i = 0; i < op->n_results; i++)
			c->defined[op->results[i]->id] = false;
	return true;
}

static bool check_func(const IrFunc *f, Diag *diag)
{
	Check c = {.f = f, .diag = diag, .ok = true};
	c.defined = calloc((size_t)f->n_values + 1, sizeof *c.defined);
	if (!c.defined) {
		diag_plain(diag, DIAG_ERROR, "out of memory");
		return false;
	}
	/* parameters are the body's arguments (or values of their own) */
	for (int i = 0; i < f->n_params && c.ok; i++) {
		Value *v = f->params[i].value;
		if (!v)
			continue;
		if (v->id < 0 || v->id >= f->n_values || v->type.rank || !valid_type(v->type)) {
			diag_error(diag, f->loc, "malformed IR in kernel '%s': parameter '%s' is not a scalar value", f->name,
			           f->params[i].name ? f->params[i].name : "?");
			c.ok = false;
		} else if (v->owner != &f->body) {
			c.defined[v->id] = true;
		}
	}
	if (c.ok)
		check_region(&c, &f->body, NULL);
	free(c.defined);
	return c.ok;
}

/* ---- the run ------------------------------------------------------------------ */

static void run_program(Worker *w, int64_t prog)
{
	Run *r = w->run;
	w->prog = prog;
	w->pid[0] = (int)(prog % r->grid[0]);
	w->pid[1] = (int)(prog / r->grid[0] % r->grid[1]);
	w->pid[2] = (int)(prog / ((int64_t)r->grid[0] * r->grid[1]));
	w->returned = false;
	for (int i = 0; i < r->f->n_params; i++) {
		Value *v = r->f->params[i].value;
		if (v) {
			Slot *s = slot(w, v);
			s->p = &r->params[i];
			s->n = 1;
		}
	}
	interp_block(w, &r->f->body);
}

/* Claims programs in increasing order until none is left or one failed. */
static void *work(void *arg)
{
	Worker *w = arg;
	Run *r = w->run;
	for (;;) {
		int64_t prog;
		if (r->threaded) {
			pthread_mutex_lock(&r->lock);
			prog = r->next < r->n_programs && r->next < r->stop_at ? r->next++ : -1;
			pthread_mutex_unlock(&r->lock);
		} else {
			prog = r->next < r->n_programs && r->next < r->stop_at ? r->next++ : -1;
		}
		if (prog < 0)
			break;
		run_program(w, prog);
		if (w->failed) {
			/* keep the failure of the lowest program: the one a run on one
			 * thread reports (programs before it run to their end) */
			if (r->threaded)
				pthread_mutex_lock(&r->lock);
			if (prog < r->stop_at) {
				r->stop_at = prog;
				r->err_loc = w->err_loc;
				r->err.len = 0;
				sb_putn(&r->err, w->err.data ? w->err.data : "", w->err.len);
			}
			if (r->threaded)
				pthread_mutex_unlock(&r->lock);
			w->failed = false;
		}
	}
	return NULL;
}

static void worker_free(Worker *w)
{
	if (w->v) {
		for (int i = 0; i < w->run->f->n_values; i++) {
			free(w->v[i].own);
			free(w->v[i].alt);
		}
		free(w->v);
	}
	for (int i = 0; i < w->n_chunks; i++)
		free(w->chunks[i].p);
	free(w->chunks);
	sb_free(&w->err);
}

static int cmp_buf(const void *a, const void *b)
{
	uint64_t x = ((const Buf *)a)->lo, y = ((const Buf *)b)->lo;
	return x < y ? -1 : x > y;
}

/* The registered buffers, sorted; overlaps and bad entries are errors. */
static bool setup_bufs(Run *r, const InterpBuffer *bufs, int n_bufs, Diag *diag)
{
	if (n_bufs < 0 || (n_bufs && !bufs)) {
		diag_plain(diag, DIAG_ERROR, "interp_run: bad buffer list");
		return false;
	}
	r->bufs = calloc((size_t)n_bufs + 1, sizeof *r->bufs);
	if (!r->bufs) {
		diag_plain(diag, DIAG_ERROR, "out of memory");
		return false;
	}
	for (int i = 0; i < n_bufs; i++) {
		const InterpBuffer *b = &bufs[i];
		if (!b->bytes)
			continue;
		uint64_t lo = (uint64_t)(uintptr_t)b->data;
		if (!b->data || lo + b->bytes < lo) {
			diag_plain(diag, DIAG_ERROR, "interp_run: buffer %d ('%s') has no memory", i, b->name ? b->name : "");
			return false;
		}
		r->bufs[r->n_bufs++] = (Buf){lo, lo + b->bytes, b->name, i};
	}
	qsort(r->bufs, (size_t)r->n_bufs, sizeof *r->bufs, cmp_buf);
	for (int i = 1; i < r->n_bufs; i++)
		if (r->bufs[i].lo < r->bufs[i - 1].hi) {
			const Buf *a = &r->bufs[i - 1], *b = &r->bufs[i];
			diag_plain(diag, DIAG_ERROR, "interp_run: buffers %d ('%s') and %d ('%s') overlap", a->index,
			           a->name ? a->name : "", b->index, b->name ? b->name : "");
			return false;
		}
	return true;
}

/* The arguments, one per parameter with a value, as canonical slot values. */
static bool setup_params(Run *r, const InterpArg *args, int n_args, Diag *diag)
{
	const IrFunc *f = r->f;
	int want = 0;
	for (int i = 0; i < f->n_params; i++)
		want += f->params[i].value != NULL;
	if (n_args != want || (n_args && !args)) {
		diag_error(diag, f->loc, "kernel '%s' takes %d runtime argument%s (const parameters take none), %d given",
		           f->name, want, want == 1 ? "" : "s", n_args);
		return false;
	}
	r->params = calloc((size_t)f->n_params + 1, sizeof *r->params);
	if (!r->params) {
		diag_plain(diag, DIAG_ERROR, "out of memory");
		return false;
	}
	for (int i = 0, k = 0; i < f->n_params; i++) {
		Value *v = f->params[i].value;
		if (!v)
			continue;
		const InterpArg *a = &args[k++];
		Type t = v->type;
		bool fl = is_float_t(t);
		if (a->is_float != fl) {
			diag_error(diag, f->loc, "argument %d of kernel '%s' ('%s', %s) needs %s", k, f->name,
			           f->params[i].name ? f->params[i].name : "?", t.ptr ? "a pointer" : scalar_name((ScalarKind)t.scalar),
			           fl ? "a float (is_float set)" : "an integer or an address in .i");
			return false;
		}
		if (t.ptr)
			r->params[i].u = (uint64_t)a->i;
		else if (fl)
			r->params[i].f = fp_round((ScalarKind)t.scalar, a->f);
		else
			r->params[i].i = canon_int((ScalarKind)t.scalar, (uint64_t)a->i);
	}
	return true;
}

bool interp_run(const IrFunc *f, const InterpArg *args, int n_args, const InterpBuffer *bufs, int n_bufs,
                const InterpOptions *opt, Diag *diag)
{
	static const InterpOptions defaults = {.grid = {1, 1, 1}};
	if (!opt)
		opt = &defaults;
	if (!f) {
		diag_plain(diag, DIAG_ERROR, "interp_run: no kernel");
		return false;
	}
	if (!check_func(f, diag))
		return false;
	Run r = {.f = f, .ub_checks = !opt->no_ub_checks, .print_out = opt->print_out, .stop_at = INT64_MAX};
	r.n_programs = 1;
	for (int i = 0; i < 3; i++) {
		if (opt->grid[i] < 0) {
			diag_plain(diag, DIAG_ERROR, "interp_run: grid axis %d is %d", i, opt->grid[i]);
			return false;
		}
		r.grid[i] = opt->grid[i];
		r.n_programs *= opt->grid[i];
	}
	Worker *ws = NULL;
	int nt = opt->threads > 1 ? opt->threads : 1;
	if (nt > r.n_programs)
		nt = r.n_programs > 0 ? (int)r.n_programs : 1;
	bool ok = setup_bufs(&r, bufs, n_bufs, diag) && setup_params(&r, args, n_args, diag);
	if (ok && r.n_programs > 0) {
		ws = calloc((size_t)nt, sizeof *ws);
		ok = ws != NULL;
		for (int i = 0; ok && i < nt; i++) {
			ws[i].run = &r;
			ws[i].v = calloc((size_t)f->n_values + 1, sizeof *ws[i].v);
			ok = ws[i].v != NULL;
		}
		if (!ok)
			diag_plain(diag, DIAG_ERROR, "out of memory");
	}
	if (ok && r.n_programs > 0) {
		pthread_mutex_init(&r.lock, NULL);
		r.threaded = nt > 1;
		pthread_t *tids = r.threaded ? calloc((size_t)nt, sizeof *tids) : NULL;
		int started = 0;
		if (tids)
			for (; started < nt; started++)
				if (pthread_create(&tids[started], NULL, work, &ws[started]) != 0)
					break;
		if (!started) { /* one thread, or none could start: run here */
			r.threaded = false;
			work(&ws[0]);
		}
		for (int i = 0; i < started; i++)
			pthread_join(tids[i], NULL);
		free(tids);
		pthread_mutex_destroy(&r.lock);
		if (r.stop_at != INT64_MAX) {
			diag_error(diag, r.err_loc, "%s", r.err.data ? r.err.data : "error");
			ok = false;
		}
	}
	for (int i = 0; ws && i < nt; i++)
		worker_free(&ws[i]);
	free(ws);
	free(r.bufs);
	free(r.params);
	sb_free(&r.err);
	return ok;
}
