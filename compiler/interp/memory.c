/* memory.c: the interpreter's loads, stores and atomics, each access checked
 * against the buffers the run was given (docs/interpreter.md, "Memory"). */
#include "interp/interp_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
/* r[i] = lane on ? what is at p[i] : other (0 without other), for the n
 * lanes of a load of blocks of type rt; the accesses were checked. */
static void gather(Elem *r, Type rt, int64_t n, const Elem *p, const Elem *m, const Elem *o, int64_t os)
{
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
}

bool interp_load(Worker *w, const Op *op)
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
	if (!r || !check_access(w, op, "load", p, m, n, type_bytes(rt), op->operands[0]->type))
		return false;
	gather(r, rt, n, p, m, o, os);
	return true;
}

/* What is at p[i] = v[i * vs] where lane i of n is on (m NULL: all are),
 * for a store of elements of type vt; the accesses were checked. */
static void scatter(Type vt, int64_t n, const Elem *p, const Elem *m, const Elem *v, int64_t vs)
{
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
}

bool interp_store(Worker *w, const Op *op)
{
	Type pt = op->operands[0]->type, vt = type_pointee(pt);
	int64_t n = type_numel(pt), vs;
	const Elem *p = slot(w, op->operands[0])->p, *v = operand(w, op, 1, &vs), *m = NULL;
	if (op->attr[0] & MEMF_MASK)
		m = slot(w, op->operands[2])->p;
	if (!check_access(w, op, "store", p, m, n, type_bytes(vt), pt))
		return false;
	scatter(vt, n, p, m, v, vs);
	return true;
}

/* ---- tensor descriptors ------------------------------------------------------ */

static void rmw_elems(Type vt, int64_t n, const Elem *p, const Elem *m, const Elem *v, int64_t vs, int64_t aop, int so,
                      int fo, Elem *r);

/* desc_load, desc_store, desc_atomic: the box of the block's shape at the
 * offsets; desc_gather and desc_scatter: the rows of a rank-2 descriptor
 * given by a block of row indices, the columns from the second offset.
 * Elements with an index outside [0, shape) read as 0 (NaN with NaN
 * padding) and are not written; the others are checked like any access
 * (inside a buffer, aligned). */
bool interp_desc(Worker *w, const Op *op)
{
	bool store = op->code == OP_DESC_STORE || op->code == OP_DESC_ATOMIC || op->code == OP_DESC_SCATTER;
	bool by_rows = op->code == OP_DESC_GATHER || op->code == OP_DESC_SCATTER;
	Type bt = store ? op->operands[op->n_operands - 1]->type : op->results[0]->type;
	int r = bt.rank;
	int64_t n = type_numel(bt), shape[BLK_MAX_RANK], stride[BLK_MAX_RANK], off[BLK_MAX_RANK];
	uint64_t base = slot(w, op->operands[0])->p[0].u;
	for (int d = 0; d < r; d++) {
		shape[d] = slot(w, op->operands[1 + d])->p[0].i;
		stride[d] = slot(w, op->operands[1 + r + d])->p[0].i;
		off[d] = by_rows && d == 0 ? 0 : slot(w, op->operands[1 + 2 * r + d])->p[0].i;
	}
	const Elem *rows = by_rows ? slot(w, op->operands[1 + 2 * r])->p : NULL;
	Type pt = bt;
	pt.ptr++;
	const char *kind = op->code == OP_DESC_ATOMIC ? "atomic" : store ? "store" : "load";
	if (stride[r - 1] != 1)
		return interp_fail(w, op, -1, pt, store ? "bad tensor descriptor store" : "bad tensor descriptor load",
		                   "the last stride is %lld; a tensor descriptor's last stride must be 1",
		                   (long long)stride[r - 1]);
	Elem *res = store ? NULL : interp_def(w, op->results[0], n);
	if (!store && !res)
		return false;
	Mark mk = interp_mark(w);
	Elem *p = interp_scratch(w, n), *m = interp_scratch(w, n);
	if (!p || !m) {
		interp_release(w, mk);
		return false;
	}
	int eb = type_bytes(bt);
	int64_t idx[BLK_MAX_RANK] = {0};
	bool all_in = true;
	for (int64_t i = 0; i < n; i++) {
		uint64_t a = base;
		bool in = true;
		for (int d = 0; d < r; d++) {
			int64_t x = (by_rows && d == 0 ? rows[idx[0]].i : off[d]) + idx[by_rows && d == 0 ? 1 : d] * 0 +
			            (by_rows && d == 0 ? 0 : idx[d]);
			in &= x >= 0 && x < shape[d];
			a += (uint64_t)x * (uint64_t)stride[d] * (uint64_t)eb; /* wraps as the GPU's address arithmetic */
		}
		p[i].u = a;
		m[i].u = in;
		all_in &= in;
		for (int d = r - 1; d >= 0 && ++idx[d] == bt.shape[d]; d--)
			idx[d] = 0;
	}
	const Elem *mask = all_in ? NULL : m;
	bool ok = check_access(w, op, kind, p, mask, n, eb, pt);
	int64_t vs = 0;
	const Elem *v = store && ok ? operand(w, op, op->n_operands - 1, &vs) : NULL;
	if (ok && op->code == OP_DESC_ATOMIC) {
		rmw_elems(bt, n, p, mask, v, vs, op->attr[0], __ATOMIC_RELAXED, __ATOMIC_RELAXED, NULL);
	} else if (ok && store) {
		scatter(bt, n, p, mask, v, vs);
	} else if (ok) {
		Elem nan = {.f = NAN};
		gather(res, bt, n, p, mask, op->attr[0] == DESC_PAD_NAN ? &nan : NULL, 0);
	}
	interp_release(w, mk);
	return ok;
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

/* The read-modify-writes aop of v into the elements at p where m is on
 * (or everywhere without m); r (where not NULL) gets the old values, 0
 * where m is off. */
static void rmw_elems(Type vt, int64_t n, const Elem *p, const Elem *m, const Elem *v, int64_t vs, int64_t aop, int so,
                      int fo, Elem *r)
{
	int bytes = type_bytes(vt);
	bool is_int = vt.ptr || scalar_is_int((ScalarKind)vt.scalar);
	for (int64_t i = 0; i < n; i++) {
		Elem old_e = {.u = 0};
		if (m && !m[i].u) {
			if (r)
				r[i] = old_e;
			continue;
		}
		void *q = addr(p[i].u);
		Elem val = v[i * vs];
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
			old_e = from_bits(old, vt);
		} else {
			/* everything else: read, combine, compare-and-swap until it sticks */
			uint64_t old = atomic_get(q, bytes);
			for (;;) {
				old_e = from_bits(old, vt);
				uint64_t want = to_bits(combine(aop, old_e, val, vt), vt);
				if (atomic_cas_bits(q, bytes, &old, want, so, fo))
					break;
			}
		}
		if (r)
			r[i] = old_e;
	}
}

bool interp_atomic(Worker *w, const Op *op)
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
	int bytes = type_bytes(vt);
	if (!r || !check_access(w, op, "atomic", p, m, n, bytes, pt))
		return false;
	int so = success_order(op->attr[1]), fo = failure_order(op->attr[1]);
	if (!cas) {
		rmw_elems(vt, n, p, m, v, vs, op->attr[0], so, fo, r);
		return true;
	}
	for (int64_t i = 0; i < n; i++) {
		uint64_t old = to_bits(c[i * cs], vt);
		atomic_cas_bits(addr(p[i].u), bytes, &old, to_bits(v[i * vs], vt), so, fo);
		r[i] = from_bits(old, vt);
	}
	return true;
}
