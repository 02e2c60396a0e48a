/* ops.h: the shared harness of tests/ops, the operation-by-dtype suite.
 *
 * Every program of tests/ops runs real .tile kernels through blk.h only
 * (never an internal header), on a context made with BLK_BACKEND_AUTO: the
 * interpreter today, a GPU when BLK_BACKEND=gpu, against the same references.
 * The references are written here in plain C, independently of the compiler:
 * the float formats (f16, bf16, f8e4m3, f8e5m2) are encoded and decoded by
 * the functions below, by double arithmetic on powers of two and rint().
 *
 * Inputs are random and fresh at each run: the seed comes from BLK_OPS_SEED
 * (or the first command-line argument) when given, else from the clock. It
 * is printed at the start and under every failure; rerun with
 * BLK_OPS_SEED=N to get the same inputs. A program prints one line per case
 * ("ok   NAME" or "FAIL NAME" with details indented below) and ends with
 * "N passed, N failed".
 *
 * Tolerances, chosen so that a GPU backend built on the usual instructions
 * passes too (and stated where they are used):
 *   - integers, comparisons, shapes, casts, + - * of floats, sqrt, fma,
 *     floor, ceil, abs, where, loads and stores: exact (NaN matches any
 *     NaN; the sign of zero counts). IEEE requires these correctly rounded
 *     and PTX has the correctly rounded forms (add.rn, mul.rn, sqrt.rn,
 *     fma.rn, cvt.rn). maximum, minimum, max, min: exact value, either
 *     sign of zero (not specified).
 *   - f32 '/' : 2 ulp (div.full.f32, the default of CUDA without
 *     -prec-div, is within 2 ulp); f64 '/' exact (div.rn.f64); '%' of
 *     floats 2 ulp of the dividend (arith_api_test.c says why).
 *   - atomics: integer results exact; float atomic_add within n eps sum|v|
 *     (the order is free).
 *   - transcendental functions: see tests/ops/math_api_test.c (a few ulp of
 *     f32, an ulp of f16/bf16 after rounding, 1e-14 relative for f64).
 *   - reductions and dot of floats: the order of additions is unspecified,
 *     so the reference sums in long double and the bound scales with
 *     sum(|x|) (see those tests).
 */
#ifndef BLK_TESTS_OPS_H
#define BLK_TESTS_OPS_H

#include "blk.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every helper is static; a program uses some of them. */
#define OPS_UNUSED __attribute__((unused))

/* ---- results ---------------------------------------------------------------- */

static int ops_passed, ops_failed;
static uint64_t ops_seed;
static blk_context *ops_ctx;

/* Details of the case being checked, printed under its FAIL line. */
static char ops_why[8192];
static size_t ops_why_len;

static OPS_UNUSED void why(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static OPS_UNUSED void why(const char *fmt, ...)
{
	if (ops_why_len + 1 >= sizeof ops_why)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(ops_why + ops_why_len, sizeof ops_why - ops_why_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		ops_why_len += (size_t)n;
	if (ops_why_len >= sizeof ops_why)
		ops_why_len = sizeof ops_why - 1;
}

static OPS_UNUSED void free_all(void);

/* Ends a case: prints its line (and, on failure, the details and the
 * seed), counts it, and frees the device memory it allocated. */
static OPS_UNUSED void result(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static OPS_UNUSED void result(bool ok, const char *fmt, ...)
{
	char name[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	printf("%s %s\n", ok ? "ok  " : "FAIL", name);
	if (!ok) {
		if (ops_why_len) {
			/* indent every line of the details */
			const char *p = ops_why;
			while (*p) {
				const char *e = strchr(p, '\n');
				int len = e ? (int)(e - p) : (int)strlen(p);
				printf("     %.*s\n", len, p);
				p += len + (e != NULL);
			}
		}
		printf("     seed %llu (rerun with BLK_OPS_SEED=%llu)\n", (unsigned long long)ops_seed,
		       (unsigned long long)ops_seed);
		ops_failed++;
	} else {
		ops_passed++;
	}
	fflush(stdout);
	ops_why_len = 0;
	ops_why[0] = '\0';
	free_all();
}

/* ---- random numbers (splitmix64) ------------------------------------------- */

static uint64_t rng_state;

static OPS_UNUSED uint64_t rng_u64(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static OPS_UNUSED uint32_t rng_u32(void) { return (uint32_t)(rng_u64() >> 32); }

/* [0, 1) with 53 random bits */
static OPS_UNUSED double rng_unit(void) { return (double)(rng_u64() >> 11) * 0x1p-53; }

static OPS_UNUSED double rng_uniform(double lo, double hi) { return lo + (hi - lo) * rng_unit(); }

/* an integer in [lo, hi] */
static OPS_UNUSED int64_t rng_range(int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
	return span ? (int64_t)((uint64_t)lo + rng_u64() % span) : (int64_t)rng_u64();
}

/* ---- data types -------------------------------------------------------------- */

typedef enum dt {
	DT_I1, DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32, DT_U64,
	DT_F16, DT_BF16, DT_F32, DT_F64, DT_E4M3, DT_E5M2, DT_COUNT
} dt;

static const struct {
	const char *name;
	int bytes;
	char kind; /* 'b' i1, 'i' signed, 'u' unsigned, 'f' float */
	int bits;
} dts[DT_COUNT] = {
	[DT_I1] = {"i1", 1, 'b', 1},        [DT_I8] = {"i8", 1, 'i', 8},       [DT_I16] = {"i16", 2, 'i', 16},
	[DT_I32] = {"i32", 4, 'i', 32},     [DT_I64] = {"i64", 8, 'i', 64},    [DT_U8] = {"u8", 1, 'u', 8},
	[DT_U16] = {"u16", 2, 'u', 16},     [DT_U32] = {"u32", 4, 'u', 32},    [DT_U64] = {"u64", 8, 'u', 64},
	[DT_F16] = {"f16", 2, 'f', 16},     [DT_BF16] = {"bf16", 2, 'f', 16},  [DT_F32] = {"f32", 4, 'f', 32},
	[DT_F64] = {"f64", 8, 'f', 64},     [DT_E4M3] = {"f8e4m3", 1, 'f', 8}, [DT_E5M2] = {"f8e5m2", 1, 'f', 8},
};

static OPS_UNUSED bool dt_float(dt t) { return dts[t].kind == 'f'; }
static OPS_UNUSED bool dt_int(dt t) { return dts[t].kind != 'f'; }
static OPS_UNUSED bool dt_signed(dt t) { return dts[t].kind == 'i'; }
static OPS_UNUSED bool dt_unsigned(dt t) { return dts[t].kind == 'u' || dts[t].kind == 'b'; }

/* ---- float formats, written for these tests ------------------------------------
 *
 * A format: ebits exponent bits, mbits fraction bits; fn: no infinities, the
 * only NaN is S.1111.111 (f8e4m3, NVIDIA's e4m3fn). Values travel as
 * doubles, which hold every value of these formats exactly. */

typedef struct fpfmt {
	int ebits, mbits;
	bool fn;
} fpfmt;

static const fpfmt FMT_F16 = {5, 10, false}, FMT_BF16 = {8, 7, false}, FMT_F32 = {8, 23, false},
                   FMT_E4M3 = {4, 3, true}, FMT_E5M2 = {5, 2, false};

static OPS_UNUSED double fmt_max(fpfmt f)
{
	int bias = (1 << (f.ebits - 1)) - 1;
	if (f.fn) /* top exponent is normal; fraction all ones is NaN */
		return ldexp(2.0 - ldexp(1.0, 1 - f.mbits), (1 << f.ebits) - 1 - bias);
	return ldexp(2.0 - ldexp(1.0, -f.mbits), bias);
}

static OPS_UNUSED double fmt_min_normal(fpfmt f) { return ldexp(1.0, 2 - (1 << (f.ebits - 1))); }

/* The bits of x rounded to nearest, ties to even. Overflow (a finite value
 * rounding past the largest, or an infinity): sat gives the largest finite
 * value of that sign, else infinity (fn formats: NaN). NaN: the canonical
 * quiet NaN of that sign. */
static OPS_UNUSED uint32_t fp_enc(fpfmt f, double x, bool sat)
{
	uint32_t sign = signbit(x) ? 1u << (f.ebits + f.mbits) : 0;
	uint32_t emax_field = (1u << f.ebits) - 1, mmask = (1u << f.mbits) - 1;
	uint32_t inf = emax_field << f.mbits;
	uint32_t nan = f.fn ? inf | mmask : inf | (1u << (f.mbits - 1));
	uint32_t maxbits = f.fn ? (inf | mmask) - 1 : inf - 1;
	uint32_t over = sat ? maxbits : f.fn ? nan : inf;
	if (isnan(x))
		return sign | nan;
	double a = fabs(x);
	if (isinf(a))
		return sign | over;
	if (a == 0)
		return sign;
	int bias = (1 << (f.ebits - 1)) - 1, emin = 1 - bias;
	int ex;
	frexp(a, &ex); /* a = m 2^ex, m in [0.5, 1): a in [2^(ex-1), 2^ex) */
	int e = ex - 1;
	if (e < emin)
		e = emin;
	double quantum = ldexp(1.0, e - f.mbits);
	double q = rint(a / quantum); /* a / quantum is exact; rint rounds half to even */
	double r = q * quantum;
	if (r > fmt_max(f))
		return sign | over;
	if (r < fmt_min_normal(f))
		return sign | (uint32_t)q; /* subnormal (or 0): exponent field 0 */
	frexp(r, &ex);
	e = ex - 1;
	uint32_t frac = (uint32_t)(ldexp(r, f.mbits - e) - ldexp(1.0, f.mbits));
	return sign | (uint32_t)(e + bias) << f.mbits | frac;
}

static OPS_UNUSED double fp_dec(fpfmt f, uint32_t b)
{
	int bias = (1 << (f.ebits - 1)) - 1;
	uint32_t emask = (1u << f.ebits) - 1, mmask = (1u << f.mbits) - 1;
	bool neg = (b >> (f.ebits + f.mbits)) & 1;
	uint32_t e = (b >> f.mbits) & emask, m = b & mmask;
	double v;
	if (e == emask && !f.fn)
		v = m ? NAN : INFINITY;
	else if (e == emask && m == mmask)
		v = NAN;
	else if (e == 0)
		v = ldexp((double)m, 1 - bias - f.mbits);
	else
		v = ldexp(1.0 + ldexp((double)m, -f.mbits), (int)e - bias);
	return neg ? -v : v;
}

static OPS_UNUSED uint16_t f16_bits(double x) { return (uint16_t)fp_enc(FMT_F16, x, false); }
static OPS_UNUSED uint16_t bf16_bits(double x) { return (uint16_t)fp_enc(FMT_BF16, x, false); }
static OPS_UNUSED double f16_val(uint16_t b) { return fp_dec(FMT_F16, b); }
static OPS_UNUSED double bf16_val(uint16_t b) { return fp_dec(FMT_BF16, b); }

static OPS_UNUSED const fpfmt *fmt_of(dt t)
{
	switch (t) {
	case DT_F16: return &FMT_F16;
	case DT_BF16: return &FMT_BF16;
	case DT_F32: return &FMT_F32;
	case DT_E4M3: return &FMT_E4M3;
	case DT_E5M2: return &FMT_E5M2;
	default: return NULL;
	}
}

/* x rounded to float type t (to nearest even; the 8-bit floats saturate, as
 * NVIDIA's cvt.rn.satfinite does). f32 goes through fp_enc too, so that no
 * host conversion is involved. */
static OPS_UNUSED double round_to(dt t, double x)
{
	if (t == DT_F64)
		return x;
	const fpfmt *f = fmt_of(t);
	return fp_dec(*f, fp_enc(*f, x, t == DT_E4M3 || t == DT_E5M2));
}

/* Largest finite value and ulp of a float type near x. */
static OPS_UNUSED double dt_max(dt t) { return t == DT_F64 ? 1.7976931348623157e308 : fmt_max(*fmt_of(t)); }
static OPS_UNUSED int dt_mbits(dt t) { return t == DT_F64 ? 52 : fmt_of(t)->mbits; }
static OPS_UNUSED double ulp_of(dt t, double x)
{
	int ebits = t == DT_F64 ? 11 : fmt_of(t)->ebits;
	int emin = 2 - (1 << (ebits - 1));
	int ex;
	frexp(fabs(x), &ex);
	int e = x == 0 || ex - 1 < emin ? emin : ex - 1;
	return ldexp(1.0, e - dt_mbits(t));
}

/* An integer rounded to float type t, correctly: the magnitude is rounded
 * to the type's precision in integer arithmetic first (a plain (double)v
 * would round a 64-bit integer twice). */
static OPS_UNUSED double int_to_float(dt t, uint64_t mag, bool neg)
{
	int p = dt_mbits(t) + 1;
	double d;
	if (mag == 0) {
		d = 0;
	} else {
		int top = 63 - __builtin_clzll(mag);
		if (top < p) {
			d = (double)mag;
		} else {
			int drop = top + 1 - p;
			uint64_t q = mag >> drop, rem = mag & ((1ull << drop) - 1), half = 1ull << (drop - 1);
			if (rem > half || (rem == half && (q & 1)))
				q++;
			d = ldexp((double)q, drop); /* q <= 2^p: exact */
		}
	}
	return round_to(t, neg ? -d : d); /* exact unless it overflows the type */
}

/* ---- host arrays in device layout ---------------------------------------------- */

typedef struct arr {
	dt t;
	int64_t n;
	unsigned char *p;
} arr;

#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

/* v as text for a kernel's source; 16 calls may be live at once. */
static OPS_UNUSED const char *num(int v)
{
	static char ring[16][16];
	static int k;
	char *s = ring[k++ & 15];
	snprintf(s, 16, "%d", v);
	return s;
}

#define OPS_MAX_ARRS 256
static void *ops_host[OPS_MAX_ARRS];
static int ops_n_host;

static OPS_UNUSED void *host_alloc(size_t bytes)
{
	void *p = calloc(1, bytes ? bytes : 1);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	if (ops_n_host < OPS_MAX_ARRS)
		ops_host[ops_n_host++] = p;
	return p;
}

static OPS_UNUSED arr arr_new(dt t, int64_t n)
{
	arr a = {t, n, host_alloc((size_t)n * (size_t)dts[t].bytes)};
	return a;
}

/* A copy of a that outlives the case (result() frees the arrays of a
 * case); release it with arr_release. */
static OPS_UNUSED arr arr_keep(arr a)
{
	arr k = a;
	size_t bytes = (size_t)a.n * (size_t)dts[a.t].bytes;
	k.p = malloc(bytes ? bytes : 1);
	if (!k.p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	if (bytes)
		memcpy(k.p, a.p, bytes);
	return k;
}

static OPS_UNUSED void arr_release(arr a) { free(a.p); }

/* Element i as an integer: signed types sign-extended, unsigned and i1
 * zero-extended (u64 as its bits). */
static OPS_UNUSED int64_t get_i(arr a, int64_t i)
{
	const unsigned char *q = a.p + i * dts[a.t].bytes;
	switch (a.t) {
	case DT_I1: return *q != 0;
	case DT_I8: return (int8_t)*q;
	case DT_U8: case DT_E4M3: case DT_E5M2: return *q;
	case DT_I16: { int16_t v; memcpy(&v, q, 2); return v; }
	case DT_U16: case DT_F16: case DT_BF16: { uint16_t v; memcpy(&v, q, 2); return v; }
	case DT_I32: { int32_t v; memcpy(&v, q, 4); return v; }
	case DT_U32: case DT_F32: { uint32_t v; memcpy(&v, q, 4); return v; }
	default: { int64_t v; memcpy(&v, q, 8); return v; }
	}
}

static OPS_UNUSED uint64_t get_u(arr a, int64_t i) { return (uint64_t)get_i(a, i); }

/* The raw bits of element i. */
static OPS_UNUSED uint64_t get_bits(arr a, int64_t i)
{
	uint64_t v = (uint64_t)get_i(a, i);
	int b = dts[a.t].bytes * 8;
	return b == 64 ? v : v & ((1ull << b) - 1);
}

/* Element i as a double: floats decoded, integers converted (exactly up to 2^53). */
static OPS_UNUSED double get_f(arr a, int64_t i)
{
	uint64_t b = get_bits(a, i);
	switch (a.t) {
	case DT_F64: { double d; memcpy(&d, &b, 8); return d; }
	case DT_F32: { float f; uint32_t u = (uint32_t)b; memcpy(&f, &u, 4); return f; }
	case DT_F16: case DT_BF16: case DT_E4M3: case DT_E5M2: return fp_dec(*fmt_of(a.t), (uint32_t)b);
	case DT_U64: return (double)b;
	default: return (double)get_i(a, i);
	}
}

/* Stores the low bits of v (integers wrap; i1 stores v != 0). */
static OPS_UNUSED void set_bits(arr a, int64_t i, uint64_t v)
{
	unsigned char *q = a.p + i * dts[a.t].bytes;
	switch (dts[a.t].bytes) {
	case 1: *q = a.t == DT_I1 ? v != 0 : (unsigned char)v; break;
	case 2: { uint16_t w = (uint16_t)v; memcpy(q, &w, 2); break; }
	case 4: { uint32_t w = (uint32_t)v; memcpy(q, &w, 4); break; }
	default: memcpy(q, &v, 8); break;
	}
}

static OPS_UNUSED void set_i(arr a, int64_t i, int64_t v) { set_bits(a, i, (uint64_t)v); }

/* Stores x rounded to a's float type (to nearest even; overflow gives
 * infinity, NaN for f8e4m3, never saturates: an infinity of f8e5m2 stays
 * one). Integer types take (int64_t)x. */
static OPS_UNUSED void set_f(arr a, int64_t i, double x)
{
	switch (a.t) {
	case DT_F64: { uint64_t b; memcpy(&b, &x, 8); set_bits(a, i, b); break; }
	case DT_F32: case DT_F16: case DT_BF16: case DT_E4M3: case DT_E5M2:
		set_bits(a, i, fp_enc(*fmt_of(a.t), x, false));
		break;
	default: set_bits(a, i, (uint64_t)(int64_t)x); break;
	}
}

/* Random contents: integers over their whole range; floats uniform in
 * [-range, range] rounded to the type. */
static OPS_UNUSED void fill_random(arr a, double range)
{
	for (int64_t i = 0; i < a.n; i++) {
		if (dt_float(a.t))
			set_f(a, i, rng_uniform(-range, range));
		else
			set_bits(a, i, a.t == DT_I1 ? rng_u64() & 1 : rng_u64());
	}
}

/* Random floats of every magnitude: sign, exponent in [lo_exp, hi_exp] and
 * fraction uniform. */
static OPS_UNUSED void fill_random_log(arr a, int lo_exp, int hi_exp)
{
	for (int64_t i = 0; i < a.n; i++) {
		double m = 1.0 + rng_unit();
		double v = ldexp(m, (int)rng_range(lo_exp, hi_exp));
		set_f(a, i, (rng_u64() & 1) ? -v : v);
	}
}

/* A printable form of element i. */
static OPS_UNUSED const char *show(arr a, int64_t i)
{
	static char ring[8][96];
	static int k;
	char *s = ring[k++ & 7];
	if (dt_float(a.t))
		snprintf(s, 96, "%.17g (0x%llx)", get_f(a, i), (unsigned long long)get_bits(a, i));
	else if (dt_unsigned(a.t))
		snprintf(s, 96, "%llu", (unsigned long long)get_u(a, i));
	else
		snprintf(s, 96, "%lld", (long long)get_i(a, i));
	return s;
}

/* Whether two elements are the same: integers by value, floats bit for bit
 * except that any NaN matches any NaN. */
static OPS_UNUSED bool same_elem(arr a, int64_t i, arr b, int64_t j)
{
	if (dt_float(a.t)) {
		double x = get_f(a, i), y = get_f(b, j);
		if (isnan(x) || isnan(y))
			return isnan(x) && isnan(y);
	}
	return get_bits(a, i) == get_bits(b, j);
}

/* ---- values and the reference semantics of conversions ----------------------------
 *
 * A val holds one element: integers as their bits, sign-extended for signed
 * types (so .i is the value), zero-extended for unsigned ones; floats as a
 * double (exact in their type). */

typedef struct val {
	int64_t i;
	double f;
} val;

static OPS_UNUSED val get_v(arr a, int64_t k)
{
	val v = {0, 0};
	if (dt_float(a.t))
		v.f = get_f(a, k);
	else
		v.i = get_i(a, k);
	return v;
}

static OPS_UNUSED void set_v(arr a, int64_t k, val v)
{
	if (dt_float(a.t))
		set_f(a, k, v.f);
	else
		set_bits(a, k, (uint64_t)v.i);
}

/* The integer bits u wrapped to integer type t (canonical form). */
static OPS_UNUSED int64_t wrap_int(dt t, uint64_t u)
{
	if (t == DT_I1)
		return u != 0;
	int b = dts[t].bits;
	if (b == 64)
		return (int64_t)u;
	u &= (1ull << b) - 1;
	if (dt_signed(t) && (u >> (b - 1)))
		u |= ~((1ull << b) - 1);
	return (int64_t)u;
}

/* x.to(to) for x of type from, as language.md specifies it: integer
 * narrowing wraps, to i1 is x != 0, integer to float and float narrowing
 * round to nearest even, float to integer truncates toward zero. Out of
 * range float to integer is undefined in language.md; like the interpreter
 * and the GPU's cvt.rzi, this reference saturates and takes NaN to 0. */
static OPS_UNUSED val cast_ref(val x, dt from, dt to)
{
	val r = {0, 0};
	if (from == to)
		return x;
	if (dt_int(from) && dt_int(to)) {
		r.i = wrap_int(to, (uint64_t)x.i);
	} else if (dt_int(from)) {
		bool neg = dt_signed(from) && x.i < 0;
		uint64_t mag = neg ? 0 - (uint64_t)x.i : (uint64_t)x.i;
		r.f = int_to_float(to, mag, neg);
	} else if (dt_float(to)) {
		r.f = round_to(to, x.f);
	} else if (to == DT_I1) {
		r.i = x.f != 0;
	} else if (isnan(x.f)) {
		r.i = 0;
	} else {
		double t = trunc(x.f);
		int b = dts[to].bits;
		if (dt_unsigned(to)) {
			if (t <= 0)
				r.i = 0;
			else if (t >= ldexp(1.0, b))
				r.i = wrap_int(to, b == 64 ? UINT64_MAX : (1ull << b) - 1);
			else
				r.i = wrap_int(to, (uint64_t)t);
		} else {
			double top = ldexp(1.0, b - 1);
			if (t >= top)
				r.i = b == 64 ? INT64_MAX : (int64_t)((1ull << (b - 1)) - 1);
			else if (t < -top)
				r.i = b == 64 ? INT64_MIN : -(int64_t)(1ull << (b - 1));
			else
				r.i = (int64_t)t;
		}
	}
	return r;
}

/* Arithmetic shift right of a signed value. */
static OPS_UNUSED int64_t sar(int64_t v, int s) { return v >= 0 ? v >> s : ~(~v >> s); }

/* a OP b in type t, both operands already of type t. Integers wrap; / and %
 * truncate toward zero (b != 0); shifts take 0 <= b < width. Floats compute
 * exactly in double and round once to t (for + - * / of f32 and narrower
 * that is the correctly rounded result: a double has more than twice their
 * precision plus two bits); % is fmod. Comparisons give i1 in .i. */
static OPS_UNUSED val binop_ref(const char *op, dt t, val a, val b)
{
	val r = {0, 0};
	bool cmp = !strcmp(op, "==") || !strcmp(op, "!=") || !strcmp(op, "<") || !strcmp(op, "<=") ||
	           !strcmp(op, ">") || !strcmp(op, ">=");
	if (cmp) {
		int lt, eq;
		if (dt_float(t)) {
			if (isnan(a.f) || isnan(b.f)) {
				r.i = !strcmp(op, "!=");
				return r;
			}
			lt = a.f < b.f;
			eq = a.f == b.f;
		} else if (dt_signed(t)) {
			lt = a.i < b.i;
			eq = a.i == b.i;
		} else {
			lt = (uint64_t)a.i < (uint64_t)b.i;
			eq = a.i == b.i;
		}
		r.i = !strcmp(op, "==") ? eq : !strcmp(op, "!=") ? !eq : !strcmp(op, "<") ? lt
		      : !strcmp(op, "<=") ? lt || eq : !strcmp(op, ">") ? !lt && !eq : !lt;
		return r;
	}
	if (dt_float(t)) {
		double x = a.f, y = b.f, v;
		switch (op[0]) {
		case '+': v = x + y; break;
		case '-': v = x - y; break;
		case '*': v = x * y; break;
		case '/': v = x / y; break;
		default: v = fmod(x, y); break;
		}
		r.f = round_to(t, v);
		return r;
	}
	uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i, v = 0;
	bool sgn = dt_signed(t);
	int width = dts[t].bits;
	if (!strcmp(op, "<<"))
		v = x << y;
	else if (!strcmp(op, ">>"))
		v = sgn ? (uint64_t)sar(a.i, (int)y) : (x & (width == 64 ? UINT64_MAX : (1ull << width) - 1)) >> y;
	else
		switch (op[0]) {
		case '+': v = x + y; break;
		case '-': v = x - y; break;
		case '*': v = x * y; break;
		case '&': v = x & y; break;
		case '|': v = x | y; break;
		case '^': v = x ^ y; break;
		case '/':
			if (sgn)
				v = b.i == -1 ? 0 - x : (uint64_t)(a.i / b.i);
			else
				v = x / y;
			break;
		case '%':
			if (sgn)
				v = b.i == -1 ? 0 : (uint64_t)(a.i % b.i);
			else
				v = x % y;
			break;
		}
	r.i = wrap_int(t, v);
	return r;
}

/* ---- device memory --------------------------------------------------------------- */

#define OPS_MAX_DEV 256
static blk_devptr ops_dev[OPS_MAX_DEV];
static int ops_n_dev;

static OPS_UNUSED blk_devptr dev_alloc(size_t bytes)
{
	blk_devptr p = 0;
	if (blk_malloc(ops_ctx, bytes ? bytes : 1, &p) != BLK_SUCCESS) {
		fprintf(stderr, "blk_malloc(%zu): %s\n", bytes, blk_last_error());
		exit(2);
	}
	if (ops_n_dev < OPS_MAX_DEV)
		ops_dev[ops_n_dev++] = p;
	return p;
}

/* A device copy of a. */
static OPS_UNUSED blk_devptr dev_from(arr a)
{
	size_t bytes = (size_t)a.n * (size_t)dts[a.t].bytes;
	blk_devptr p = dev_alloc(bytes);
	blk_copy_to_device(ops_ctx, p, a.p, bytes);
	return p;
}

/* A zero-filled device array for n elements of t. */
static OPS_UNUSED blk_devptr dev_zeros(dt t, int64_t n)
{
	return dev_alloc((size_t)n * (size_t)dts[t].bytes);
}

/* The device array p read back into a new host array. */
static OPS_UNUSED arr dev_read(blk_devptr p, dt t, int64_t n)
{
	arr a = arr_new(t, n);
	blk_copy_from_device(ops_ctx, a.p, p, (size_t)n * (size_t)dts[t].bytes);
	return a;
}

static OPS_UNUSED void free_all(void)
{
	for (int i = 0; i < ops_n_dev; i++)
		blk_free(ops_ctx, ops_dev[i]);
	ops_n_dev = 0;
	for (int i = 0; i < ops_n_host; i++)
		free(ops_host[i]);
	ops_n_host = 0;
}

/* ---- kernel sources ---------------------------------------------------------------- */

/* tmpl with each $NAME (NAME: capitals, digits, _) replaced by its value from
 * the NULL-terminated pairs: render(src, "T", "f16", "OP", "+", NULL). The
 * result lives in a ring of buffers (valid for the next 7 calls). */
static OPS_UNUSED const char *render(const char *tmpl, ...)
{
	static char ring[8][32768];
	static int k;
	char *out = ring[k++ & 7];
	size_t o = 0, cap = sizeof ring[0];
	const char *keys[32], *vals[32];
	int nk = 0;
	va_list ap;
	va_start(ap, tmpl);
	for (const char *key; nk < 32 && (key = va_arg(ap, const char *)) != NULL; nk++) {
		keys[nk] = key;
		vals[nk] = va_arg(ap, const char *);
	}
	va_end(ap);
	for (const char *p = tmpl; *p && o + 1 < cap;) {
		if (*p == '$') {
			const char *q = p + 1;
			while ((*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_')
				q++;
			size_t len = (size_t)(q - p - 1);
			int found = -1;
			for (int i = 0; i < nk; i++)
				if (strlen(keys[i]) == len && strncmp(keys[i], p + 1, len) == 0)
					found = i;
			if (found >= 0) {
				size_t vl = strlen(vals[found]);
				if (o + vl + 1 >= cap)
					break;
				memcpy(out + o, vals[found], vl);
				o += vl;
				p = q;
				continue;
			}
			fprintf(stderr, "render: no value for $%.*s\n", (int)len, p + 1);
			exit(2);
		}
		out[o++] = *p++;
	}
	out[o] = '\0';
	return out;
}

/* ---- running kernels ------------------------------------------------------------------ */

/* The message of the last failed run_kernel (the library's, whole). */
static char ops_err[8192];

typedef struct grid3 {
	unsigned x, y, z;
} grid3;

#define GRID(...) ((grid3){__VA_ARGS__})

/* Loads src as a module, takes its kernel `kernel` (NULL: the only one) and
 * launches it once with args, const values and grid (all 0: the kernel's
 * grid clause); threads > 0 asks the interpreter for that many threads. On
 * failure the library's message is in ops_err and, for anything but a
 * launch error, in the case's details. */
static OPS_UNUSED blk_status run_kernel_t(const char *src, const char *kernel, const blk_arg *args, int n_args,
                               const blk_const *consts, int n_consts, grid3 grid, int threads)
{
	blk_module *m = NULL;
	blk_kernel *k = NULL;
	ops_err[0] = '\0';
	blk_status st = blk_module_load_source(ops_ctx, "ops.tile", src, strlen(src), NULL, &m);
	if (st == BLK_SUCCESS)
		st = blk_kernel_get(m, kernel, &k);
	if (st == BLK_SUCCESS) {
		blk_launch_options o = {.grid = {grid.x, grid.y, grid.z}, .consts = consts, .n_consts = n_consts,
		                        .threads = threads};
		st = blk_launch(k, args, n_args, &o);
	}
	if (st != BLK_SUCCESS) {
		snprintf(ops_err, sizeof ops_err, "%s", blk_last_error());
		if (st != BLK_ERROR_LAUNCH)
			why("status %d: %s\nkernel source:\n%s\n", (int)st, ops_err, src);
		else
			why("launch failed: %s\n", ops_err);
	}
	blk_module_destroy(m);
	return st;
}

static OPS_UNUSED blk_status run_kernel(const char *src, const char *kernel, const blk_arg *args,
                                                     int n_args, const blk_const *consts, int n_consts, grid3 grid)
{
	return run_kernel_t(src, kernel, args, n_args, consts, n_consts, grid, 0);
}

#define ARGS(...) ((const blk_arg[]){__VA_ARGS__}), (int)(sizeof((const blk_arg[]){__VA_ARGS__}) / sizeof(blk_arg))
#define P(p) blk_arg_ptr(p)
#define I(i) blk_arg_int(i)
#define F(f) blk_arg_float(f)
#define NO_CONSTS NULL, 0
#define CONSTS(...) ((const blk_const[]){__VA_ARGS__}), (int)(sizeof((const blk_const[]){__VA_ARGS__}) / sizeof(blk_const))
#define CI(nm, v) ((blk_const){.name = (nm), .i = (v)})
#define CF(nm, v) ((blk_const){.name = (nm), .is_float = 1, .f = (v)})
#define CT(nm, t) ((blk_const){.name = (nm), .type = (t)})

/* ---- comparing ----------------------------------------------------------------------- */

/* Compares got with want element by element, exactly (same_elem); reports
 * up to 5 mismatches with the inputs' elements at that index. */
static OPS_UNUSED bool check_exact(arr got, arr want, const arr *ins, int n_ins)
{
	int bad = 0;
	for (int64_t i = 0; i < want.n; i++) {
		if (same_elem(got, i, want, i))
			continue;
		if (bad++ < 5) {
			why("[%lld] got %s, want %s", (long long)i, show(got, i), show(want, i));
			for (int j = 0; j < n_ins; j++)
				why("%s in%d = %s", j ? "," : "  for", j, show(ins[j], i < ins[j].n ? i : 0));
			why("\n");
		}
	}
	if (bad > 5)
		why("... %d mismatches of %lld\n", bad, (long long)want.n);
	return bad == 0;
}

/* Like check_exact, but by value: a zero of either sign matches a zero
 * (where the sign of a zero result is not specified, as for maximum and
 * max), NaN matches NaN. */
static OPS_UNUSED bool check_value(arr got, arr want, const arr *ins, int n_ins)
{
	int bad = 0;
	for (int64_t i = 0; i < want.n; i++) {
		bool ok;
		if (dt_float(want.t)) {
			double g = get_f(got, i), w = get_f(want, i);
			ok = g == w || (isnan(g) && isnan(w));
		} else {
			ok = get_bits(got, i) == get_bits(want, i);
		}
		if (!ok && bad++ < 5) {
			why("[%lld] got %s, want %s", (long long)i, show(got, i), show(want, i));
			for (int j = 0; j < n_ins; j++)
				why("%s in%d = %s", j ? "," : "  for", j, show(ins[j], i < ins[j].n ? i : 0));
			why("\n");
		}
	}
	if (bad > 5)
		why("... %d mismatches of %lld\n", bad, (long long)want.n);
	return bad == 0;
}

/* Compares floats got with the reference want (doubles): |got - want| <=
 * atol + rtol |want| + ulps ulp_of(got's type, want); infinities and NaN
 * must match exactly. */
static OPS_UNUSED bool check_close(arr got, const double *want, const arr *ins, int n_ins, double atol, double rtol,
                        double ulps)
{
	int bad = 0;
	double worst = 0;
	for (int64_t i = 0; i < got.n; i++) {
		double g = get_f(got, i), w = want[i];
		bool ok;
		if (isnan(w) || isnan(g))
			ok = isnan(w) && isnan(g);
		else if (isinf(w) || isinf(g))
			ok = g == w;
		else {
			double tol = atol + rtol * fabs(w) + ulps * ulp_of(got.t, w);
			ok = fabs(g - w) <= tol;
			if (!ok && fabs(g - w) > worst)
				worst = fabs(g - w);
		}
		if (ok)
			continue;
		if (bad++ < 5) {
			why("[%lld] got %s, want %.17g", (long long)i, show(got, i), w);
			for (int j = 0; j < n_ins; j++)
				why("%s in%d = %s", j ? "," : "  for", j, show(ins[j], i < ins[j].n ? i : 0));
			why("\n");
		}
	}
	if (bad > 5)
		why("... %d mismatches of %lld (largest error %g)\n", bad, (long long)got.n, worst);
	return bad == 0;
}

/* Compares floats got with want[i] within tol[i] each; infinities and NaN
 * must match exactly. */
static OPS_UNUSED bool check_close_each(arr got, const double *want, const double *tol)
{
	int bad = 0;
	for (int64_t i = 0; i < got.n; i++) {
		double g = get_f(got, i), w = want[i];
		bool ok = isnan(w) || isnan(g) ? isnan(w) && isnan(g) : isinf(w) || isinf(g) ? g == w : fabs(g - w) <= tol[i];
		if (!ok && bad++ < 5)
			why("[%lld] got %s, want %.17g (tolerance %g)\n", (long long)i, show(got, i), w, tol[i]);
	}
	if (bad > 5)
		why("... %d mismatches of %lld\n", bad, (long long)got.n);
	return bad == 0;
}

/* ---- start and end -------------------------------------------------------------------- */

static OPS_UNUSED void ops_init(int argc, char **argv)
{
	const char *s = getenv("BLK_OPS_SEED");
	if (argc > 1)
		s = argv[1];
	if (s && *s) {
		ops_seed = strtoull(s, NULL, 0);
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ops_seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec;
		ops_seed %= 1000000000ull;
	}
	rng_state = ops_seed;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed %llu\n", (unsigned long long)ops_seed);
	blk_status st = blk_context_create(BLK_BACKEND_AUTO, 0, &ops_ctx);
	if (st != BLK_SUCCESS) {
		printf("FAIL context: %s\n", blk_last_error());
		printf("0 passed, 1 failed\n");
		exit(1);
	}
}

static OPS_UNUSED int ops_finish(void)
{
	free_all();
	blk_context_destroy(ops_ctx);
	printf("%d passed, %d failed\n", ops_passed, ops_failed);
	return ops_failed != 0;
}

#endif
