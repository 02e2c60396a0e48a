/* interp/interp_int.h: what the interpreter's files share: interp.c (the
 * run, control flow) and one file an op family, named as lowering's
 * (elementwise.c, shape.c, gather.c, memory.c, dot.c, reduce.c, scan.c,
 * sort.c, histogram.c, print_assert.c). Internal to the interpreter.
 *
 * Every value holds a buffer of elements, one 8-byte slot each:
 *   signed ints   int64, sign-extended from their width (canonical)
 *   unsigned ints uint64, zero-extended; i1 is 0 or 1
 *   floats        double, always a value exact in the value's type (each op
 *                 rounds its result to the type once)
 *   pointers      uint64 host addresses
 * An op runs as one loop over the elements of its operands.
 *
 * A splat, a block constant, and element-wise ops over only such values are
 * uniform: their slot holds one element (n = 1) that stands for the whole
 * block. Element-wise ops take uniform operands as they are, and so do
 * shape ops and control flow; other ops have their operands written out in
 * full first (interp_full), but for the values memory ops read with stride 0. */
#ifndef BLK_INTERP_INT_H
#define BLK_INTERP_INT_H

#include "interp/interp.h"

#include <pthread.h>
#include <string.h>

/* GCC's -O2 vectorizes a loop only when its trip count is a multiple of the
 * vector length (the "very cheap" cost model); these loops run over blocks
 * of any length: let it weigh the cost as -O3 does. (Clang vectorizes them
 * at -O2 anyway.) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif

typedef union Elem {
	int64_t i;
	uint64_t u;
	double f;
} Elem;

typedef struct Slot {
	Elem *p;      /* the elements now (own, or another value's: reshape aliases) */
	int64_t n;    /* how many: the type's element count, or lanes in a combine region */
	Elem *own;    /* this value's buffer, kept from one program to the next */
	int64_t cap;
	Elem *alt;    /* loop-carried region arguments: the next iteration's buffer */
	int64_t alt_cap;
} Slot;

/* A registered buffer: [lo, hi) in host addresses. */
typedef struct Buf {
	uint64_t lo, hi;
	const char *name;
	int index;
} Buf;

/* One stack chunk of scratch memory (operand splats, reduction lanes). */
typedef struct Chunk {
	Elem *p;
	int64_t cap, used;
} Chunk;
typedef struct Mark {
	int chunk;
	int64_t used;
} Mark;

typedef struct Run Run;

typedef struct Worker {
	Run *run;
	Slot *v;             /* by value id */
	int pid[3];
	int64_t prog;        /* linear program index, x fastest */
	int last_buf;        /* the buffer the last access hit */
	bool returned;       /* a RETURN ran: unwind, done */
	bool failed;         /* an error was recorded: unwind */
	Span err_loc;
	StrBuf err;          /* the message, without location */
	Chunk *chunks;
	int n_chunks, cur_chunk;
} Worker;

struct Run {
	const IrFunc *f;
	bool ub_checks;
	int grid[3];
	int64_t n_programs;
	Buf *bufs;
	int n_bufs;
	Elem *params;        /* by param index: the argument's canonical value */
	StrBuf *print_out;
	pthread_mutex_t lock; /* print_out, the error below, next */
	int64_t next;         /* next program to claim */
	int64_t stop_at;      /* smallest program that failed; INT64_MAX: none */
	Span err_loc;
	StrBuf err;
	bool threaded;
};

/* ---- interp.c ---- */

/* Records an error of the op at w's program (what happened, then details)
 * and returns false. elem >= 0 names the element of a block of shape t. */
bool interp_fail(Worker *w, const Op *op, int64_t elem, Type t, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* The result buffer of v, holding n elements (reallocated when too small). */
Elem *interp_def(Worker *w, const Value *v, int64_t n);
/* Scratch memory, released to a mark. */
Mark interp_mark(Worker *w);
void interp_release(Worker *w, Mark m);
Elem *interp_scratch(Worker *w, int64_t n);
/* Makes v's slot hold all its type's elements (a uniform value, one element
 * standing for a whole block, is written out). False when out of memory. */
bool interp_full(Worker *w, const Value *v);
/* Runs the ops of r up to its terminator, which it returns; NULL at the end
 * of a region without one, or when w->failed or w->returned. */
const Op *interp_block(Worker *w, const Region *r);

static inline Slot *slot(Worker *w, const Value *v) { return &w->v[v->id]; }

/* dst[0..n) = the elements of s (one element is repeated). */
static inline void copy_elems(Elem *dst, const Slot *s, int64_t n)
{
	if (s->n == n) {
		memcpy(dst, s->p, (size_t)n * sizeof *dst);
	} else {
		Elem v = s->p[0];
		for (int64_t i = 0; i < n; i++)
			dst[i] = v;
	}
}

/* Row-major strides (in elements) of a block of type t. */
static inline void strides_of(Type t, int64_t *st)
{
	int64_t s = 1;
	for (int d = t.rank - 1; d >= 0; d--) {
		st[d] = s;
		s *= t.shape[d];
	}
}

/* ---- one file an op family (as lower/'s) ---- */

/* elementwise.c */
bool interp_elementwise(Worker *w, const Op *op); /* every OPF_ELEMWISE op */
bool interp_philox(Worker *w, const Op *op);
/* shape.c: const, arange, splat ... split, hint (and gather, in gather.c) */
bool interp_shape(Worker *w, const Op *op);
/* gather.c */
bool interp_gather(Worker *w, const Op *op);
bool interp_sreg(Worker *w, const Op *op);
/* memory.c: checked against the run's buffers */
bool interp_load(Worker *w, const Op *op);
bool interp_store(Worker *w, const Op *op);
bool interp_atomic(Worker *w, const Op *op); /* atomic_rmw and atomic_cas */
bool interp_desc(Worker *w, const Op *op);   /* desc_load and desc_store */
/* dot.c */
bool interp_dot(Worker *w, const Op *op);
/* reduce.c */
enum { MAX_COMBINE = 64 }; /* the blocks a reduce or scan combines */
bool interp_reduce(Worker *w, const Op *op);
/* Runs op's combine region over L lanes: its 2n arguments read in[0..2n),
 * its n results go to out[0..n). */
bool interp_combine(Worker *w, const Op *op, Elem *const *in, Elem *const *out, int64_t L);
/* t's elements around axis: outer rows of len elements, inner apart. */
void interp_split_axis(Type t, int axis, int64_t *outer, int64_t *len, int64_t *inner);
/* scan.c */
bool interp_scan(Worker *w, const Op *op);
/* sort.c */
bool interp_sort(Worker *w, const Op *op); /* sort and topk */
/* histogram.c */
bool interp_histogram(Worker *w, const Op *op);
/* print_assert.c */
bool interp_print(Worker *w, const Op *op);
bool interp_assert(Worker *w, const Op *op);

/* Whether t is a float scalar or a block of floats (not a pointer). */

/* The canonical slot value of the bits v for int kind k (i1: v != 0). */
static inline int64_t canon_int(ScalarKind k, uint64_t v)
{
	if (k == SK_I1)
		return v != 0;
	int sh = 64 - scalar_bits(k);
	if (scalar_is_signed(k))
		return (int64_t)(v << sh) >> sh;
	return (int64_t)((v << sh) >> sh);
}

/* The bits of x, a value of float kind k (exact: no rounding). Unlike
 * fp_encode, an infinity of e5m2 stays one (fp_encode saturates it, as a
 * conversion to e5m2 does). */
static inline uint64_t exact_bits(ScalarKind k, double x)
{
	if (k == SK_F8E5M2 || k == SK_F8E4M3)
		return fp_encode_fp8(k, x, false);
	return fp_encode(k, x);
}

/* The bits of element e of type t (as stored in memory). */
static inline uint64_t elem_bits(Elem e, Type t)
{
	ScalarKind k = (ScalarKind)t.scalar;
	if (t.ptr)
		return e.u;
	if (scalar_is_int(k))
		return k == SK_I1 ? e.u : e.u & (scalar_bits(k) == 64 ? UINT64_MAX : (1ull << scalar_bits(k)) - 1);
	return k == SK_F32 ? fp_to_f32_bits(e.f) : exact_bits(k, e.f);
}

#endif
