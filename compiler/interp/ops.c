/* ops.c: the ops of the interpreter that compute: element-wise
 * arithmetic and conversions, shapes, dot, reductions and scans (running
 * their combine region over many lanes at once), philox and print.
 *
 * Each op is a loop over the elements of its block, chosen by op and element
 * kind before the loop starts. Floats compute in double and round once to
 * their kind: for + - * / sqrt of f32, f16, bf16 and fp8 operands that is the
 * correctly rounded result (a double has more than twice their precision
 * plus two bits). Integers compute in 64 bits and wrap to their width. */
#include "interp/interp_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* GCC's -O2 vectorizes a loop only when its trip count is a multiple of the
 * vector length (the "very cheap" cost model); these loops run over blocks
 * of any length: let it weigh the cost as -O3 does. (Clang vectorizes them
 * at -O2 anyway.) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif

/* ---- element-wise ---------------------------------------------------------- */

/* The float loop for EXPR over x = a[i], y = b[i], z = c[i], rounded to k. */
#define FLOOP(EXPR) \
	do { \
		if (k == SK_F32) \
			for (int64_t i = 0; i < n; i++) { \
				double x = a[i].f, y = b[i].f, z = c[i].f; \
				(void)y, (void)z; \
				r[i].f = (float)(EXPR); \
			} \
		else if (k == SK_F64) \
			for (int64_t i = 0; i < n; i++) { \
				double x = a[i].f, y = b[i].f, z = c[i].f; \
				(void)y, (void)z; \
				r[i].f = (EXPR); \
			} \
		else \
			for (int64_t i = 0; i < n; i++) { \
				double x = a[i].f, y = b[i].f, z = c[i].f; \
				(void)y, (void)z; \
				r[i].f = fp_round(k, (EXPR)); \
			} \
	} while (0)

/* The integer loop for EXPR over the bits x, y, z (uint64_t), wrapped to the
 * result's width: sign-extended for signed kinds, zero-extended otherwise. */
#define ILOOP(EXPR) \
	do { \
		if (sgn) \
			for (int64_t i = 0; i < n; i++) { \
				uint64_t x = a[i].u, y = b[i].u, z = c[i].u; \
				(void)y, (void)z; \
				r[i].i = (int64_t)((uint64_t)(EXPR) << sh) >> sh; \
			} \
		else \
			for (int64_t i = 0; i < n; i++) { \
				uint64_t x = a[i].u, y = b[i].u, z = c[i].u; \
				(void)y, (void)z; \
				r[i].u = (uint64_t)(EXPR) << sh >> sh; \
			} \
	} while (0)

/* The loop for EXPR whose result is exact in kind k already (a choice
 * among the operands, or a sign change): no rounding. */
#define XLOOP(EXPR) \
	for (int64_t i = 0; i < n; i++) { \
		double x = a[i].f, y = b[i].f; \
		(void)y; \
		r[i].f = (EXPR); \
	}

#define S(v) ((int64_t)(v))

/* maximum / minimum of floats: a NaN operand gives the other one, or NaN
 * when nan_prop; -0 is below +0. */
static inline double fmax_blk(double x, double y, bool nan_prop)
{
	if (x != x || y != y)
		return nan_prop ? (x != x ? x : y) : (x != x ? y : x);
	if (x == y)
		return signbit(x) ? y : x;
	return x > y ? x : y;
}

static inline double fmin_blk(double x, double y, bool nan_prop)
{
	if (x != x || y != y)
		return nan_prop ? (x != x ? x : y) : (x != x ? y : x);
	if (x == y)
		return signbit(x) ? x : y;
	return x < y ? x : y;
}

/* exp and exp2 below f64 (ftz) flush a subnormal f32 result to +0, as the
 * GPU's ex2.approx.ftz does (before any f16/bf16 rounding) */
static double flush_f32(double r, bool ftz)
{
	return ftz && fabs((float)r) < 0x1p-126 ? 0.0 : r;
}

static double math1(int64_t fn, double x, bool ftz)
{
	switch (fn) {
	case MATH_EXP: return flush_f32(exp(x), ftz);
	case MATH_EXP2: return flush_f32(exp2(x), ftz);
	case MATH_LOG: return log(x);
	case MATH_LOG2: return log2(x);
	case MATH_SQRT:
	case MATH_SQRT_RN: return sqrt(x); /* rounded once to the type: correctly rounded */
	case MATH_RSQRT: return 1.0 / sqrt(x);
	case MATH_SIN: return sin(x);
	case MATH_COS: return cos(x);
	case MATH_TANH: return tanh(x);
	case MATH_ERF: return erf(x);
	case MATH_FLOOR: return floor(x);
	default: return ceil(x);
	}
}

/* x (a float) to integer kind k: toward zero, saturating; NaN is 0. */
static int64_t float_to_int(double x, ScalarKind k)
{
	if (k == SK_I1)
		return x != 0;
	if (x != x)
		return 0;
	int bits = scalar_bits(k);
	double t = trunc(x);
	if (scalar_is_unsigned(k)) {
		double top = ldexp(1.0, bits); /* 2^bits */
		if (t <= 0)
			return 0;
		if (t >= top)
			return bits == 64 ? (int64_t)UINT64_MAX : (int64_t)((1ull << bits) - 1);
		return (int64_t)(uint64_t)t;
	}
	double top = ldexp(1.0, bits - 1);
	if (t >= top)
		return (int64_t)((1ull << (bits - 1)) - 1);
	if (t < -top)
		return (int64_t)(0 - (1ull << (bits - 1)));
	return (int64_t)t;
}

/* The bits of element e of type t (as stored in memory). */
static uint64_t elem_bits(Elem e, Type t)
{
	ScalarKind k = (ScalarKind)t.scalar;
	if (t.ptr)
		return e.u;
	if (scalar_is_int(k))
		return k == SK_I1 ? e.u : e.u & (scalar_bits(k) == 64 ? UINT64_MAX : (1ull << scalar_bits(k)) - 1);
	return k == SK_F32 ? fp_to_f32_bits(e.f) : exact_bits(k, e.f);
}

static Elem elem_of_bits(uint64_t b, Type t)
{
	ScalarKind k = (ScalarKind)t.scalar;
	Elem e;
	if (t.ptr)
		e.u = b;
	else if (scalar_is_int(k))
		e.i = canon_int(k, b);
	else
		e.f = k == SK_F32 ? fp_from_f32_bits((uint32_t)b) : fp_decode(k, b);
	return e;
}

static void cast(Elem *restrict r, const Elem *restrict a, int64_t n, Type from, Type to)
{
	ScalarKind ks = (ScalarKind)from.scalar, kd = (ScalarKind)to.scalar;
	if (from.ptr || to.ptr) { /* pointer to pointer: the address */
		memcpy(r, a, (size_t)n * sizeof *r);
		return;
	}
	bool fs = scalar_is_float(ks), fd = scalar_is_float(kd);
	if (ks == kd) {
		memcpy(r, a, (size_t)n * sizeof *r);
	} else if (!fs && !fd) {
		if (kd == SK_I1) {
			for (int64_t i = 0; i < n; i++)
				r[i].i = a[i].u != 0;
			return;
		}
		int sh = 64 - scalar_bits(kd);
		if (scalar_is_signed(kd))
			for (int64_t i = 0; i < n; i++)
				r[i].i = (int64_t)(a[i].u << sh) >> sh;
		else
			for (int64_t i = 0; i < n; i++)
				r[i].u = a[i].u << sh >> sh;
	} else if (!fs) {
		bool u = !scalar_is_signed(ks) || ks == SK_I1;
		for (int64_t i = 0; i < n; i++)
			r[i].f = fp_from_int(kd, a[i].i, u);
	} else if (!fd) {
		for (int64_t i = 0; i < n; i++)
			r[i].i = float_to_int(a[i].f, kd);
	} else if (kd == SK_F32) {
		for (int64_t i = 0; i < n; i++)
			r[i].f = a[i].f == a[i].f ? (double)(float)a[i].f : fp_round(kd, a[i].f);
	} else {
		for (int64_t i = 0; i < n; i++)
			r[i].f = fp_round(kd, a[i].f);
	}
}

static bool int_div(Worker *w, const Op *op, Elem *restrict r, const Elem *restrict a, const Elem *restrict b,
                    int64_t n, Type rt)
{
	ScalarKind k = (ScalarKind)rt.scalar;
	bool sgn = scalar_is_signed(k) && k != SK_I1, rem = op->code == OP_REM;
	int sh = 64 - scalar_bits(k);
	(void)w;
	/* defined results: x / 0 is all ones, x % 0 is x; MIN / -1 wraps to MIN */
	for (int64_t i = 0; i < n; i++) {
		uint64_t x = a[i].u, y = b[i].u, q;
		if (sgn) {
			if (y == 0)
				q = rem ? x : UINT64_MAX;
			else if (S(y) == -1)
				q = rem ? 0 : 0 - x;
			else
				q = (uint64_t)(rem ? S(x) % S(y) : S(x) / S(y));
			r[i].i = (int64_t)(q << sh) >> sh;
		} else {
			q = y == 0 ? (rem ? x : UINT64_MAX) : rem ? x % y : x / y;
			r[i].u = q << sh >> sh;
		}
	}
	return true;
}

static bool shift(Worker *w, const Op *op, Elem *restrict r, const Elem *restrict a, const Elem *restrict b,
                  int64_t n, Type rt)
{
	ScalarKind k = (ScalarKind)rt.scalar;
	int bits = scalar_bits(k), sh = 64 - bits;
	bool sgn = scalar_is_signed(k) && k != SK_I1;
	(void)w, (void)bits;
	/* defined results: counts of the width or more give 0, or the sign for >> of signed */
	const Elem *c = a;
	if (op->code == OP_SHL)
		ILOOP(y > 63 ? 0 : x << y);
	else if (sgn)
		for (int64_t i = 0; i < n; i++)
			r[i].i = S(a[i].u) >> (b[i].u > 63 ? 63 : b[i].u);
	else
		for (int64_t i = 0; i < n; i++)
			r[i].u = b[i].u > 63 ? 0 : a[i].u >> b[i].u;
	return true;
}

static bool compute_int(Worker *w, const Op *op, Elem *restrict r, const Elem *restrict a, const Elem *restrict b,
                        const Elem *restrict c, int64_t n, Type rt)
{
	ScalarKind k = (ScalarKind)rt.scalar;
	bool sgn = scalar_is_signed(k) && k != SK_I1;
	int sh = 64 - scalar_bits(k);
	switch (op->code) {
	case OP_ADD: ILOOP(x + y); break;
	case OP_SUB: ILOOP(x - y); break;
	case OP_MUL: ILOOP(x * y); break;
	case OP_DIV:
	case OP_REM: return int_div(w, op, r, a, b, n, rt);
	case OP_AND: ILOOP(x & y); break;
	case OP_OR: ILOOP(x | y); break;
	case OP_XOR: ILOOP(x ^ y); break;
	case OP_SHL:
	case OP_SHR: return shift(w, op, r, a, b, n, rt);
	case OP_MIN:
		if (sgn)
			ILOOP(S(x) < S(y) ? x : y);
		else
			ILOOP(x < y ? x : y);
		break;
	case OP_MAX:
		if (sgn)
			ILOOP(S(x) > S(y) ? x : y);
		else
			ILOOP(x > y ? x : y);
		break;
	case OP_UMULHI:
		if (scalar_bits(k) == 64)
			ILOOP((uint64_t)((unsigned __int128)x * y >> 64));
		else /* the operands' bits as unsigned, the high half of their product */
			ILOOP(((x << sh >> sh) * (y << sh >> sh)) >> (64 - sh));
		break;
	case OP_NEG: ILOOP(0 - x); break;
	case OP_NOT: ILOOP(~x); break;
	case OP_ABS:
		if (sgn)
			ILOOP(S(x) < 0 ? 0 - x : x);
		else
			ILOOP(x);
		break;
	case OP_FMA: ILOOP(x * y + z); break;
	default: return interp_fail(w, op, -1, rt, "internal error", "no integer form of '%s'", op_name(op->code));
	}
	return true;
}

static bool compute_float(Worker *w, const Op *op, Elem *restrict r, const Elem *restrict a, const Elem *restrict b,
                          const Elem *restrict c, int64_t n, Type rt)
{
	ScalarKind k = (ScalarKind)rt.scalar;
	bool prop = op->attr[0] != 0;
	switch (op->code) {
	case OP_ADD: FLOOP(x + y); break;
	case OP_SUB: FLOOP(x - y); break;
	case OP_MUL: FLOOP(x * y); break;
	case OP_DIV: FLOOP(x / y); break; /* rn or not: correctly rounded (53 >= 2 * 24 + 2 bits) */
	case OP_REM: FLOOP(fmod(x, y)); break;
	case OP_MIN: XLOOP(fmin_blk(x, y, prop)); break;
	case OP_MAX: XLOOP(fmax_blk(x, y, prop)); break;
	case OP_NEG: XLOOP(-x); break;
	case OP_ABS: XLOOP(fabs(x)); break;
	case OP_FMA: /* rounded once (fmaf for f32) */
		for (int64_t i = 0; i < n; i++)
			r[i].f = fp_fma(k, a[i].f, b[i].f, c[i].f);
		break;
	case OP_MATH: {
		int64_t fn = op->attr[0];
		FLOOP(math1(fn, x, k != SK_F64));
		break;
	}
	default: return interp_fail(w, op, -1, rt, "internal error", "no float form of '%s'", op_name(op->code));
	}
	return true;
}

/* A loop per predicate, over x, y of type T read from field F. */
#define CMP_LOOPS(T, F) \
	switch (p) { \
	case CMP_EQ: for (int64_t i = 0; i < n; i++) { T x = a[i].F, y = b[i].F; r[i].i = x == y; } break; \
	case CMP_NE: for (int64_t i = 0; i < n; i++) { T x = a[i].F, y = b[i].F; r[i].i = x != y; } break; \
	case CMP_LT: for (int64_t i = 0; i < n; i++) { T x = a[i].F, y = b[i].F; r[i].i = x < y; } break; \
	case CMP_LE: for (int64_t i = 0; i < n; i++) { T x = a[i].F, y = b[i].F; r[i].i = x <= y; } break; \
	case CMP_GT: for (int64_t i = 0; i < n; i++) { T x = a[i].F, y = b[i].F; r[i].i = x > y; } break; \
	default: for (int64_t i = 0; i < n; i++) { T x = a[i].F, y = b[i].F; r[i].i = x >= y; } break; \
	}

static void compare(const Op *op, Elem *restrict r, const Elem *restrict a, const Elem *restrict b, int64_t n, Type t)
{
	int64_t p = op->attr[0];
	ScalarKind k = (ScalarKind)t.scalar;
	if (!t.ptr && scalar_is_float(k))
		CMP_LOOPS(double, f)
	else if (!t.ptr && scalar_is_signed(k) && k != SK_I1)
		CMP_LOOPS(int64_t, i)
	else
		CMP_LOOPS(uint64_t, u)
}

/* Integer division by zero and shifts out of range, where they are errors:
 * the divisor or count is operand 1, of n elements (or one, repeated). */
static bool check_ub(Worker *w, const Op *op, const Slot *y, Type rt)
{
	ScalarKind k = (ScalarKind)rt.scalar;
	int bits = scalar_bits(k);
	bool shift_op = op->code == OP_SHL || op->code == OP_SHR;
	Type et = y->n == 1 ? type_elem(rt) : rt; /* one element: no index */
	for (int64_t i = 0; i < y->n; i++) {
		if (shift_op && y->p[i].u >= (uint64_t)bits) /* negative counts too */
			return interp_fail(w, op, i, et, "shift out of range", "by %lld, %s has %d bits", (long long)y->p[i].i,
			                   scalar_name(k), bits);
		if (!shift_op && y->p[i].u == 0)
			return interp_fail(w, op, i, et, op->code == OP_REM ? "integer remainder by zero" : "integer division by zero",
			                   "(a lane that a mask drops later still divides: divide by where(mask, y, 1))");
	}
	return true;
}

/* r[0..n) = op(a, b, c) over operands of n elements each. r is the result's
 * own buffer, which no operand shares (restrict: the loops vectorize). */
static bool compute(Worker *w, const Op *op, Elem *restrict r, const Elem *restrict a, const Elem *restrict b,
                    const Elem *restrict c, int64_t n)
{
	Type rt = op->results[0]->type, ot = op->operands[0]->type;
	switch (op->code) {
	case OP_CMP:
		compare(op, r, a, b, n, ot);
		return true;
	case OP_SELECT:
		for (int64_t i = 0; i < n; i++)
			r[i] = a[i].u ? b[i] : c[i];
		return true;
	case OP_ADDPTR: {
		uint64_t size = (uint64_t)elem_bytes(type_pointee(rt));
		for (int64_t i = 0; i < n; i++)
			r[i].u = a[i].u + b[i].u * size;
		return true;
	}
	case OP_CAST:
		cast(r, a, n, ot, rt);
		return true;
	case OP_BITCAST:
		for (int64_t i = 0; i < n; i++)
			r[i] = elem_of_bits(elem_bits(a[i], ot), rt);
		return true;
	case OP_PTR_TO_INT:
		for (int64_t i = 0; i < n; i++)
			r[i].i = canon_int((ScalarKind)rt.scalar, a[i].u);
		return true;
	case OP_INT_TO_PTR:
		memcpy(r, a, (size_t)n * sizeof *r);
		return true;
	default:
		if (scalar_is_float((ScalarKind)rt.scalar))
			return compute_float(w, op, r, a, b, c, n, rt);
		return compute_int(w, op, r, a, b, c, n, rt);
	}
}

enum { CHUNK = 256 };

/* The result has as many elements as the largest operand: the block's, the
 * lanes of a combine region, or one when every operand is uniform (a splat
 * or a block constant holds one element for all: so does the result). A
 * uniform operand beside full ones is read from a chunk of copies of it. */
bool interp_elementwise(Worker *w, const Op *op)
{
	int no = op->n_operands;
	const Slot *s[3];
	int64_t n = 1;
	for (int i = 0; i < no; i++) {
		s[i] = slot(w, op->operands[i]);
		n = s[i]->n > n ? s[i]->n : n;
	}
	Type rt = op->results[0]->type;
	if (w->run->ub_checks && no == 2 && scalar_is_int((ScalarKind)rt.scalar) && !rt.ptr &&
	    (op->code == OP_DIV || op->code == OP_REM || op->code == OP_SHL || op->code == OP_SHR) && !check_ub(w, op, s[1], rt))
		return false;
	Elem *r = interp_def(w, op->results[0], n);
	if (!r)
		return false;
	bool uniform = false;
	for (int i = 0; i < no; i++)
		uniform |= s[i]->n < n;
	if (!uniform)
		return compute(w, op, r, s[0]->p, no > 1 ? s[1]->p : s[0]->p, no > 2 ? s[2]->p : s[0]->p, n);
	Elem rep[3][CHUNK];
	for (int i = 0; i < no; i++)
		if (s[i]->n < n)
			for (int j = 0; j < CHUNK; j++)
				rep[i][j] = s[i]->p[0];
	for (int64_t off = 0; off < n; off += CHUNK) {
		int64_t len = n - off < CHUNK ? n - off : CHUNK;
		const Elem *in[3];
		for (int i = 0; i < no; i++)
			in[i] = s[i]->n < n ? rep[i] : s[i]->p + off;
		if (!compute(w, op, r + off, in[0], no > 1 ? in[1] : in[0], no > 2 ? in[2] : in[0], len))
			return false;
	}
	return true;
}

/* ---- shapes -------------------------------------------------------------------- */

/* dst, a row-major block of the given shape, from src read with a stride per
 * dimension (0 repeats, a permutation transposes). */
static void gather_strided(Elem *dst, const Elem *src, int rank, const int32_t *shape, const int64_t *st)
{
	if (rank == 0) {
		dst[0] = src[0];
		return;
	}
	int64_t idx[BLK_MAX_RANK] = {0}, off = 0, inner = shape[rank - 1], s = st[rank - 1], outer = 1;
	for (int d = 0; d < rank - 1; d++)
		outer *= shape[d];
	for (int64_t o = 0; o < outer; o++) {
		const Elem *p = src + off;
		if (s == 1)
			memcpy(dst, p, (size_t)inner * sizeof *dst);
		else
			for (int64_t j = 0; j < inner; j++)
				dst[j] = p[j * s];
		dst += inner;
		for (int d = rank - 2; d >= 0; d--) {
			off += st[d];
			if (++idx[d] < shape[d])
				break;
			off -= st[d] * shape[d];
			idx[d] = 0;
		}
	}
}

static void strides_of(Type t, int64_t *st)
{
	int64_t s = 1;
	for (int d = t.rank - 1; d >= 0; d--) {
		st[d] = s;
		s *= t.shape[d];
	}
}

/* Checks multiple_of (attr[0]) and max_contiguous (attr[1]) on x. */
static bool check_hint(Worker *w, const Op *op, const Slot *x)
{
	Type t = op->operands[0]->type;
	int64_t div = op->attr[0], con = op->attr[1], n = x->n;
	int64_t row = t.rank ? t.shape[t.rank - 1] : 1;
	uint64_t step = t.ptr ? (uint64_t)elem_bytes(type_pointee(t)) : 1; /* pointers: bytes */
	for (int64_t i = 0; i < n; i++) {
		int64_t j = i % row;
		bool run_start = j == 0 || x->p[i].u != x->p[i - 1].u + step;
		if (div > 0 && run_start) {
			bool ok = t.ptr ? x->p[i].u % (uint64_t)div == 0 : x->p[i].i % div == 0;
			if (!ok)
				return interp_fail(w, op, i, t, "wrong hint",
				                   "multiple_of(%lld) promised, but %s%lld starts a run of consecutive values",
				                   (long long)div, t.ptr ? "address " : "", (long long)x->p[i].i);
		}
		if (con > 1 && j % con != 0 && x->p[i].u != x->p[i - 1].u + step)
			return interp_fail(w, op, i, t, "wrong hint",
			                   "max_contiguous(%lld) promised, but %lld does not follow %lld", (long long)con,
			                   (long long)x->p[i].i, (long long)x->p[i - 1].i);
	}
	return true;
}

/* gather: r[i] = x[i with i[axis] = idx[i]]; an index outside the axis is
 * an error (undefined on the GPU). */
static bool gather(Worker *w, const Op *op)
{
	Type xt = op->operands[0]->type, rt = op->results[0]->type;
	int axis = (int)op->attr[0];
	int64_t n = type_numel(rt), xst[BLK_MAX_RANK], rst[BLK_MAX_RANK];
	strides_of(xt, xst);
	strides_of(rt, rst);
	const Elem *x = slot(w, op->operands[0])->p, *idx = slot(w, op->operands[1])->p;
	Elem *r = interp_def(w, op->results[0], n);
	if (!r)
		return false;
	for (int64_t i = 0; i < n; i++) {
		int64_t k = idx[i].i, src = 0, rem = i;
		if (k < 0 || k >= xt.shape[axis])
			return interp_fail(w, op, i, rt, "index out of range",
			                   "index %lld is outside [0, %d) along axis %d of the block indexed", (long long)k,
			                   xt.shape[axis], axis);
		for (int d = 0; d < rt.rank; d++) {
			int64_t c = rem / rst[d];
			rem -= c * rst[d];
			src += (d == axis ? k : c) * xst[d];
		}
		r[i] = x[src];
	}
	return true;
}

bool interp_shape(Worker *w, const Op *op)
{
	Type rt = op->n_results ? op->results[0]->type : (Type){0};
	int64_t n = type_numel(rt);
	ScalarKind k = (ScalarKind)rt.scalar;
	switch (op->code) {
	case OP_CONST: {
		Elem e;
		if (rt.ptr)
			e.u = (uint64_t)op->ival;
		else if (scalar_is_float(k))
			e.f = fp_round(k, op->fval);
		else
			e.i = canon_int(k, (uint64_t)op->ival);
		Elem *r = interp_def(w, op->results[0], 1); /* uniform: one element for the block */
		if (!r)
			return false;
		r[0] = e;
		return true;
	}
	case OP_ARANGE: {
		Elem *r = interp_def(w, op->results[0], n);
		if (!r)
			return false;
		int sh = 64 - scalar_bits(k);
		for (int64_t i = 0; i < n; i++) /* i32 by the table; any int kind wraps alike */
			r[i].i = (int64_t)((uint64_t)(op->attr[0] + i) << sh) >> sh;
		return true;
	}
	case OP_SPLAT: { /* uniform: the scalar's element stands for the block */
		Slot *s = slot(w, op->operands[0]), *d = slot(w, op->results[0]);
		d->p = s->p;
		d->n = 1;
		return true;
	}
	case OP_HINT:
		if (w->run->ub_checks &&
		    (!interp_full(w, op->operands[0]) || !check_hint(w, op, slot(w, op->operands[0]))))
			return false;
		/* fall through */
	case OP_EXPAND_DIMS:
	case OP_CONVERT_LAYOUT:
	case OP_RESHAPE: { /* the same elements in the same order: share them */
		Slot *s = slot(w, op->operands[0]), *d = slot(w, op->results[0]);
		d->p = s->p;
		d->n = s->n;
		return true;
	}
	case OP_BROADCAST:
	case OP_TRANS: {
		Type t = op->operands[0]->type;
		Slot *os = slot(w, op->operands[0]);
		if (op->code == OP_BROADCAST && os->n == 1) { /* uniform stays uniform */
			Slot *d = slot(w, op->results[0]);
			d->p = os->p;
			d->n = 1;
			return true;
		}
		if (!interp_full(w, op->operands[0]))
			return false;
		int64_t ost[BLK_MAX_RANK], st[BLK_MAX_RANK];
		strides_of(t, ost);
		for (int d = 0; d < rt.rank; d++)
			st[d] = op->code == OP_TRANS ? ost[op->attr[d]] : t.shape[d] == 1 ? 0 : ost[d];
		const Elem *src = slot(w, op->operands[0])->p;
		Elem *r = interp_def(w, op->results[0], n);
		if (!r)
			return false;
		gather_strided(r, src, rt.rank, rt.shape, st);
		return true;
	}
	case OP_CAT: {
		const Slot *a = slot(w, op->operands[0]), *b = slot(w, op->operands[1]);
		Elem *r = interp_def(w, op->results[0], n);
		if (!r)
			return false;
		memcpy(r, a->p, (size_t)a->n * sizeof *r);
		memcpy(r + a->n, b->p, (size_t)b->n * sizeof *r);
		return true;
	}
	case OP_JOIN: {
		const Elem *a = slot(w, op->operands[0])->p, *b = slot(w, op->operands[1])->p;
		Elem *r = interp_def(w, op->results[0], n);
		if (!r)
			return false;
		for (int64_t i = 0; i < n / 2; i++) {
			r[2 * i] = a[i];
			r[2 * i + 1] = b[i];
		}
		return true;
	}
	case OP_SPLIT: {
		const Elem *x = slot(w, op->operands[0])->p;
		Elem *a = interp_def(w, op->results[0], n), *b = a ? interp_def(w, op->results[1], n) : NULL;
		if (!b)
			return false;
		for (int64_t i = 0; i < n; i++) {
			a[i] = x[2 * i];
			b[i] = x[2 * i + 1];
		}
		return true;
	}
	case OP_GATHER:
		return gather(w, op);
	default:
		return interp_fail(w, op, -1, rt, "internal error", "the interpreter has no '%s'", op_name(op->code));
	}
}

/* ---- dot ------------------------------------------------------------------------------ */

/* x as tf32: its low 13 fraction bits cleared (truncation toward zero, 10
 * fraction bits kept), which is what the tensor cores read of an f32 in
 * shared memory; an infinity stays one, and so does a NaN with a payload
 * bit above the 13 (one whose payload lies only in them reads as an
 * infinity of its sign). */
static float tf32_trunc(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	u &= 0xffffe000u;
	memcpy(&x, &u, 4);
	return x;
}

/* An f32 dot with input_precision tf32 or tf32x3, as tensor cores compute
 * it: tf32 truncates both inputs to tf32 (their product is exact in f32)
 * and adds the products in k order in f32; tf32x3 splits each input into
 * big = tf32(x) and small = tf32(x - big) (x - big is exact) and adds,
 * for each k in turn, a_small b_big, a_big b_small and a_big b_big (small
 * x small left out).
 * A, B, C: the inputs and the accumulator in f32 (A and B are truncated in
 * place); the results go to r, rounded to `out`. */
static bool dot_tf32(Worker *w, const Op *op, float *A, float *B, float *C, int64_t M, int64_t N, int64_t K,
                     DotPrecision prec, Elem *r, ScalarKind out, Mark mk)
{
	float *As = NULL, *Bs = NULL;
	if (prec == DOT_TF32X3) {
		As = (float *)interp_scratch(w, (M * K + 1) / 2);
		Bs = (float *)interp_scratch(w, (K * N + 1) / 2);
		if (!As || !Bs)
			return false;
	}
	for (int64_t i = 0; i < M * K; i++) {
		float big = tf32_trunc(A[i]);
		if (As)
			As[i] = tf32_trunc(A[i] - big);
		A[i] = big;
	}
	for (int64_t i = 0; i < K * N; i++) {
		float big = tf32_trunc(B[i]);
		if (Bs)
			Bs[i] = tf32_trunc(B[i] - big);
		B[i] = big;
	}
	for (int64_t i = 0; i < M; i++) {
		float *crow = C + i * N;
		for (int64_t kk = 0; kk < K; kk++) {
			float av = A[i * K + kk];
			const float *brow = B + kk * N;
			if (As) {
				float as = As[i * K + kk];
				const float *bsrow = Bs + kk * N;
				for (int64_t j = 0; j < N; j++) {
					float c = crow[j] + as * brow[j];
					c += av * bsrow[j];
					crow[j] = c + av * brow[j];
				}
			} else {
				for (int64_t j = 0; j < N; j++)
					crow[j] += av * brow[j];
			}
		}
	}
	for (int64_t i = 0; i < M * N; i++)
		r[i].f = out == SK_F32 ? C[i] : fp_round(out, C[i]);
	Elem *d = interp_def(w, op->results[0], M * N);
	if (d)
		memcpy(d, r, (size_t)(M * N) * sizeof *d);
	interp_release(w, mk);
	return d != NULL;
}

bool interp_dot(Worker *w, const Op *op)
{
	Type at = op->operands[0]->type, bt = op->operands[1]->type, rt = op->results[0]->type;
	int64_t M = at.shape[0], K = at.shape[1], N = bt.shape[1];
	const Elem *a = slot(w, op->operands[0])->p, *b = slot(w, op->operands[1])->p;
	const Slot *acc = slot(w, op->operands[2]);
	ScalarKind ka = (ScalarKind)at.scalar, kb = (ScalarKind)bt.scalar, kc = (ScalarKind)rt.scalar;
	Mark mk = interp_mark(w);
	Elem *r = interp_scratch(w, M * N); /* acc may be this op's own result buffer */
	if (!r)
		return false;
	copy_elems(r, acc, M * N);
	bool fa = scalar_is_float(ka), fb = scalar_is_float(kb);
	/* a float accumulator narrower than f32 sums in f32 and rounds once at
	 * the end (irgen casts such an acc to f32 around the dot already) */
	bool narrow = kc == SK_F16 || kc == SK_BF16 || kc == SK_F8E4M3 || kc == SK_F8E5M2;
	if ((kc == SK_F32 || narrow) && fa && fb && ka != SK_F64 && kb != SK_F64) {
		/* f32 accumulation in k order; products of f16 and fp8 are exact in
		 * f32, those of bf16 and f32 are fused (fmaf: exact, then one rounding) */
		float *A = (float *)interp_scratch(w, (M * K + 1) / 2), *B = (float *)interp_scratch(w, (K * N + 1) / 2),
		      *C = (float *)interp_scratch(w, (M * N + 1) / 2);
		if (!A || !B || !C)
			return false;
		for (int64_t i = 0; i < M * K; i++)
			A[i] = (float)a[i].f;
		for (int64_t i = 0; i < K * N; i++)
			B[i] = (float)b[i].f;
		for (int64_t i = 0; i < M * N; i++)
			C[i] = (float)r[i].f;
		bool exact = ka != SK_BF16 && ka != SK_F32 && kb != SK_BF16 && kb != SK_F32;
		DotPrecision prec = ka == SK_F32 && kb == SK_F32 ? (DotPrecision)op->attr[0] : DOT_IEEE;
		if (prec != DOT_IEEE)
			return dot_tf32(w, op, A, B, C, M, N, K, prec, r, narrow ? kc : SK_F32, mk);
		for (int64_t i = 0; i < M; i++) {
			float *crow = C + i * N;
			for (int64_t kk = 0; kk < K; kk++) {
				float av = A[i * K + kk];
				const float *brow = B + kk * N;
				if (exact)
					for (int64_t j = 0; j < N; j++)
						crow[j] += av * brow[j];
				else
					for (int64_t j = 0; j < N; j++)
						crow[j] = fmaf(av, brow[j], crow[j]);
			}
		}
		for (int64_t i = 0; i < M * N; i++)
			r[i].f = narrow ? fp_round(kc, C[i]) : C[i];
	} else if (!fa && !fb && scalar_is_int(kc)) {
		/* integers wrap: summing in 64 bits and wrapping once is the same */
		for (int64_t i = 0; i < M; i++)
			for (int64_t kk = 0; kk < K; kk++) {
				uint64_t av = a[i * K + kk].u;
				for (int64_t j = 0; j < N; j++)
					r[i * N + j].u += av * b[kk * N + j].u;
			}
		for (int64_t i = 0; i < M * N; i++)
			r[i].i = canon_int(kc, r[i].u);
	} else {
		/* any other mix: in double, rounded to acc's kind (f32 for a
		 * narrow one, rounded once at the end) after each step */
		ScalarKind step = narrow ? SK_F32 : kc;
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				double s = r[i * N + j].f;
				for (int64_t kk = 0; kk < K; kk++) {
					double x = fa ? a[i * K + kk].f : (double)a[i * K + kk].i;
					double y = fb ? b[kk * N + j].f : (double)b[kk * N + j].i;
					/* float factors up to f32 into another kind: fp_fma rounds once */
					bool once = fa && fb && ka != SK_F64 && kb != SK_F64 && step != SK_F32 && step != SK_F64;
					s = once ? fp_fma(step, x, y, s) : fp_round(step, fma(x, y, s));
				}
				r[i * N + j].f = narrow ? fp_round(kc, s) : s;
			}
	}
	Elem *d = interp_def(w, op->results[0], M * N);
	if (d)
		memcpy(d, r, (size_t)(M * N) * sizeof *d);
	interp_release(w, mk);
	return d != NULL;
}

/* ---- reductions and scans ------------------------------------------------------------- */

/* Whether a combine region runs on many lanes at once: only element-wise ops
 * and constants (else it runs lane by lane). */
static bool lane_region(const Region *r)
{
	for (const Op *op = r->first; op; op = op->next)
		if (!(op_flags(op->code) & OPF_ELEMWISE) && op->code != OP_CONST && op->code != OP_YIELD)
			return false;
	return true;
}

/* Runs op's combine region over L lanes: its 2n arguments read in[0..2n),
 * its n results go to out[0..n). */
static bool combine(Worker *w, const Op *op, Elem *const *in, Elem *const *out, int64_t L)
{
	const Region *rg = &op->regions[0];
	int n = op->n_operands;
	if (lane_region(rg)) {
		for (int j = 0; j < 2 * n; j++) {
			Slot *s = slot(w, rg->args[j]);
			s->p = in[j];
			s->n = L;
		}
		const Op *y = interp_block(w, rg);
		if (!y)
			return false;
		for (int j = 0; j < n; j++)
			copy_elems(out[j], slot(w, y->operands[j]), L);
		return true;
	}
	for (int64_t l = 0; l < L; l++) {
		for (int j = 0; j < 2 * n; j++) {
			Slot *s = slot(w, rg->args[j]);
			s->p = in[j] + l;
			s->n = 1;
		}
		const Op *y = interp_block(w, rg);
		if (!y) {
			if (!w->failed)
				interp_fail(w, op, -1, (Type){0}, "a combine function returned from the kernel", NULL);
			return false;
		}
		for (int j = 0; j < n; j++)
			out[j][l] = slot(w, y->operands[j])->p[0];
	}
	return true;
}

/* Sizes around axis: outer (before), len (along), inner (after). */
static void split_axis(Type t, int axis, int64_t *outer, int64_t *len, int64_t *inner)
{
	*outer = *inner = 1;
	for (int d = 0; d < axis; d++)
		*outer *= t.shape[d];
	for (int d = axis + 1; d < t.rank; d++)
		*inner *= t.shape[d];
	*len = t.shape[axis];
}

enum { MAX_COMBINE = 64 };

/* A tree over the axis: each step combines neighbours (2h, 2h + 1) of every
 * row, all of them in one run of the region. The first operand of each call
 * holds the elements of lower index, so an index-aware combine (argmax's
 * "lowest index wins") and even a non-commutative one see them in order. */
bool interp_reduce(Worker *w, const Op *op)
{
	int n = op->n_operands;
	if (n > MAX_COMBINE)
		return interp_fail(w, op, -1, (Type){0}, "reduction of too many blocks", "%d (at most %d)", n, MAX_COMBINE);
	Type t = op->operands[0]->type;
	int64_t outer, len, inner;
	split_axis(t, (int)op->attr[0], &outer, &len, &inner);
	Mark mk = interp_mark(w);
	Elem *cur[MAX_COMBINE], *lanes[2 * MAX_COMBINE], *y[MAX_COMBINE];
	for (int j = 0; j < n; j++)
		cur[j] = slot(w, op->operands[j])->p;
	bool ok = true;
	while (ok && len > 1) {
		int64_t half = len / 2, odd = len & 1, L = outer * half * inner;
		for (int j = 0; ok && j < n; j++) {
			lanes[j] = interp_scratch(w, L);
			lanes[n + j] = interp_scratch(w, L);
			y[j] = interp_scratch(w, outer * (half + odd) * inner);
			ok = lanes[j] && lanes[n + j] && y[j];
		}
		if (!ok)
			break;
		for (int j = 0; j < n; j++)
			for (int64_t o = 0; o < outer; o++)
				for (int64_t h = 0; h < half; h++) {
					const Elem *src = cur[j] + (o * len + 2 * h) * inner;
					memcpy(lanes[j] + (o * half + h) * inner, src, (size_t)inner * sizeof *src);
					memcpy(lanes[n + j] + (o * half + h) * inner, src + inner, (size_t)inner * sizeof *src);
				}
		ok = combine(w, op, lanes, y, L);
		if (ok && odd) /* rows of half + 1: the last element of each row passes through */
			for (int j = 0; j < n; j++)
				for (int64_t o = outer - 1; o >= 0; o--) {
					memmove(y[j] + o * (half + 1) * inner, y[j] + o * half * inner, (size_t)(half * inner) * sizeof(Elem));
					memcpy(y[j] + (o * (half + 1) + half) * inner, cur[j] + (o * len + len - 1) * inner,
					       (size_t)inner * sizeof(Elem));
				}
		for (int j = 0; j < n; j++)
			cur[j] = y[j];
		len = half + odd;
	}
	for (int j = 0; ok && j < n; j++) {
		Elem *d = interp_def(w, op->results[j], outer * inner);
		ok = d != NULL;
		if (ok)
			memcpy(d, cur[j], (size_t)(outer * inner) * sizeof *d);
	}
	interp_release(w, mk);
	return ok;
}

/* Inclusive, in order along the axis (from its end with attr[1]): step s
 * combines the running value (first operand) with element s, over all rows
 * at once. */
bool interp_scan(Worker *w, const Op *op)
{
	int n = op->n_operands;
	if (n > MAX_COMBINE)
		return interp_fail(w, op, -1, (Type){0}, "scan of too many blocks", "%d (at most %d)", n, MAX_COMBINE);
	Type t = op->operands[0]->type;
	int64_t outer, len, inner;
	split_axis(t, (int)op->attr[0], &outer, &len, &inner);
	bool rev = op->attr[1] != 0;
	int64_t L = outer * inner;
	Mark mk = interp_mark(w);
	Elem *in[2 * MAX_COMBINE], *y[MAX_COMBINE], *x[MAX_COMBINE], *out[MAX_COMBINE];
	bool ok = true;
	for (int j = 0; ok && j < n; j++) {
		in[j] = interp_scratch(w, L);
		in[n + j] = interp_scratch(w, L);
		y[j] = interp_scratch(w, L);
		x[j] = slot(w, op->operands[j])->p;
		ok = in[j] && in[n + j] && y[j];
	}
	/* the operands are read to the end: results go to scratch, then out */
	for (int j = 0; ok && j < n; j++)
		ok = (out[j] = interp_scratch(w, outer * len * inner)) != NULL;
	for (int64_t s = 0; ok && s < len; s++) {
		int64_t e = rev ? len - 1 - s : s;
		for (int j = 0; j < n; j++)
			for (int64_t o = 0; o < outer; o++)
				memcpy((s ? in[n + j] : in[j]) + o * inner, x[j] + (o * len + e) * inner, (size_t)inner * sizeof(Elem));
		if (s) {
			ok = combine(w, op, in, y, L);
			for (int j = 0; ok && j < n; j++)
				memcpy(in[j], y[j], (size_t)L * sizeof(Elem));
		}
		for (int j = 0; ok && j < n; j++)
			for (int64_t o = 0; o < outer; o++)
				memcpy(out[j] + (o * len + e) * inner, in[j] + o * inner, (size_t)inner * sizeof(Elem));
	}
	for (int j = 0; ok && j < n; j++) {
		Elem *d = interp_def(w, op->results[j], outer * len * inner);
		ok = d != NULL;
		if (ok)
			memcpy(d, out[j], (size_t)(outer * len * inner) * sizeof *d);
	}
	interp_release(w, mk);
	return ok;
}

/* ---- philox ---------------------------------------------------------------------------- */

void philox4x32(const uint32_t ctr[4], const uint32_t key[2], int rounds, uint32_t out[4])
{
	uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
	for (int i = 0; i < rounds; i++) {
		uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
		uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
		c1 = (uint32_t)p1;
		c3 = (uint32_t)p0;
		c0 = n0;
		c2 = n2;
		k0 += 0x9E3779B9u; /* the Weyl sequence of the key */
		k1 += 0xBB67AE85u;
	}
	out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* As Triton's randint4x: key = (seed low 32 bits, seed high 32 bits), counter
 * (offset, 0, 0, 0). */
bool interp_philox(Worker *w, const Op *op)
{
	uint64_t seed = slot(w, op->operands[0])->p[0].u;
	const Slot *cs = slot(w, op->operands[1]);
	int64_t n = cs->n;
	Elem *r[4];
	for (int i = 0; i < 4; i++)
		if (!(r[i] = interp_def(w, op->results[i], n)))
			return false;
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	int rounds = op->attr[0] > 0 ? (int)op->attr[0] : 10;
	for (int64_t i = 0; i < n; i++) {
		uint32_t ctr[4] = {(uint32_t)cs->p[i].u, 0, 0, 0}, o[4];
		philox4x32(ctr, key, rounds, o);
		for (int k = 0; k < 4; k++)
			r[k][i].i = canon_int((ScalarKind)op->results[k]->type.scalar, o[k]);
	}
	return true;
}

/* ---- print ------------------------------------------------------------------------------- */

/* The shortest decimal that reads back as x in kind k; without an exponent
 * when x is of moderate size (60, not 6e+01). */
static void put_float(StrBuf *sb, double x, ScalarKind k)
{
	if (x != x) {
		sb_puts(sb, signbit(x) ? "-nan" : "nan");
		return;
	}
	int maxp = k == SK_F64 ? 17 : k == SK_F32 ? 9 : 5;
	bool moderate = fabs(x) >= 1e-4 && fabs(x) < 1e15;
	char buf[40];
	int p = 1;
	for (; p < maxp; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, x);
		if (fp_round(k, strtod(buf, NULL)) == x)
			break;
	}
	for (; p <= 17; p++) { /* more digits only drop the exponent */
		snprintf(buf, sizeof buf, "%.*g", p, x);
		if (!moderate || !strchr(buf, 'e'))
			break;
	}
	sb_puts(sb, buf);
}

static void put_elem(StrBuf *sb, Elem e, Type t, bool hex)
{
	ScalarKind k = (ScalarKind)t.scalar;
	if (t.ptr) {
		sb_printf(sb, "0x%llx", (unsigned long long)e.u);
	} else if (hex) {
		int bits = scalar_bits(k);
		sb_printf(sb, "0x%0*llx", bits < 4 ? 1 : bits / 4, (unsigned long long)elem_bits(e, t));
	} else if (scalar_is_float(k)) {
		put_float(sb, e.f, k);
	} else if (scalar_is_signed(k) && k != SK_I1) {
		sb_printf(sb, "%lld", (long long)e.i);
	} else {
		sb_printf(sb, "%llu", (unsigned long long)e.u);
	}
}

/* "pid (x, y, z) idx (i, j) PREFIX (operand k): " */
static void put_line_head(StrBuf *sb, Worker *w, int64_t elem, Type t, const char *prefix, int operand)
{
	sb_printf(sb, "pid (%d, %d, %d) idx (", w->pid[0], w->pid[1], w->pid[2]);
	int64_t idx[BLK_MAX_RANK] = {0};
	for (int d = t.rank - 1; d >= 0; d--) {
		idx[d] = elem % t.shape[d];
		elem /= t.shape[d];
	}
	for (int d = 0; d < t.rank; d++)
		sb_printf(sb, "%s%lld", d ? ", " : "", (long long)idx[d]);
	sb_putc(sb, ')');
	size_t pl = strlen(prefix);
	if (pl)
		sb_printf(sb, " %s", prefix);
	if (operand >= 0)
		sb_printf(sb, " (operand %d)", operand);
	/* "x =" and "x:" read well without another colon */
	if (!pl || operand >= 0 || (prefix[pl - 1] != ':' && prefix[pl - 1] != '='))
		sb_putc(sb, ':');
	sb_putc(sb, ' ');
}

/* One line per element: "pid (x, y, z) idx (i, j) PREFIX: value". Operands of
 * one shape share a line ("a, b"); otherwise each operand prints its own
 * lines, marked "(operand k)". The lines of one print reach print_out
 * together, never cut by another thread's. */
bool interp_print(Worker *w, const Op *op)
{
	Run *run = w->run;
	if (!run->print_out)
		return true;
	StrBuf sb = {0};
	const char *prefix = op->str ? op->str : "";
	bool hex = op->attr[0] != 0;
	int no = op->n_operands;
	bool same = true;
	for (int i = 1; i < no; i++)
		same &= slot(w, op->operands[i])->n == slot(w, op->operands[0])->n;
	if (no == 0) {
		sb_printf(&sb, "pid (%d, %d, %d) %s\n", w->pid[0], w->pid[1], w->pid[2], prefix);
	} else if (same) {
		Type t = op->operands[0]->type;
		for (int64_t e = 0; e < slot(w, op->operands[0])->n; e++) {
			put_line_head(&sb, w, e, t, prefix, -1);
			for (int i = 0; i < no; i++) {
				if (i)
					sb_puts(&sb, ", ");
				put_elem(&sb, slot(w, op->operands[i])->p[e], op->operands[i]->type, hex);
			}
			sb_putc(&sb, '\n');
		}
	} else {
		for (int i = 0; i < no; i++) {
			const Slot *s = slot(w, op->operands[i]);
			Type t = op->operands[i]->type;
			for (int64_t e = 0; e < s->n; e++) {
				put_line_head(&sb, w, e, t, prefix, i);
				put_elem(&sb, s->p[e], t, hex);
				sb_putc(&sb, '\n');
			}
		}
	}
	if (run->threaded)
		pthread_mutex_lock(&run->lock);
	if (sb.data)
		sb_putn(run->print_out, sb.data, sb.len);
	if (run->threaded)
		pthread_mutex_unlock(&run->lock);
	bool ok = !sb.failed;
	sb_free(&sb);
	return ok || interp_fail(w, op, -1, (Type){0}, "out of memory", NULL);
}
