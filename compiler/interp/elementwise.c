/* elementwise.c: the element-wise ops of the interpreter (arithmetic,
 * compares, selects, conversions, math) and philox, as in lower/elementwise.c.
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
	case MATH_TRUNC: return trunc(x);
	case MATH_RINT: return rint(x); /* to nearest even: the default rounding mode */
	case MATH_ROUND: return round(x);
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
		uint64_t size = (uint64_t)type_bytes(type_pointee(rt));
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
