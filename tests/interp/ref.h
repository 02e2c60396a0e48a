/* ref.h: for the interpreter's tests, a reference for the float formats that
 * shares nothing with compiler/fpconv.c: a format is the sorted table of its
 * values (built with ldexp), rounding is a binary search for the nearest
 * entry in __float128, and a tie is found by comparing 2|x| with the sum of
 * the two neighbours (both exact). Also the small harness every test uses:
 * result(), a seeded random generator. Included by the tests of tests/interp. */
#ifndef BLK_TEST_REF_H
#define BLK_TEST_REF_H

#include "interp/interp.h"
#include "irgen/irgen.h"
#include "lower/lower.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef __float128 quad;

static int passed, failed;

static void result(bool ok, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4), unused));
static void result(bool ok, const char *name, const char *fmt, ...)
{
	if (ok) {
		printf("ok   %s\n", name);
		passed++;
		return;
	}
	printf("FAIL %s: ", name);
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed++;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static __attribute__((unused)) uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

typedef struct Ref {
	const char *name;
	ScalarKind kind;
	int ebits, mbits;
	bool fn;          /* e4m3fn */
	bool sat;         /* what conversion to it does on overflow */
	int nbits;
	uint32_t maxbits; /* bits of the largest finite value */
	double *v;        /* v[j]: value of the positive pattern j, j <= maxbits + 1 */
} Ref;

static Ref refs[] = {
	{.name = "f16", .kind = SK_F16, .ebits = 5, .mbits = 10},
	{.name = "bf16", .kind = SK_BF16, .ebits = 8, .mbits = 7},
	{.name = "f8e4m3", .kind = SK_F8E4M3, .ebits = 4, .mbits = 3, .fn = true, .sat = true},
	{.name = "f8e5m2", .kind = SK_F8E5M2, .ebits = 5, .mbits = 2, .sat = true},
};
enum { N_REFS = sizeof refs / sizeof refs[0] };

static double ref_value(const Ref *r, uint32_t j)
{
	int bias = (1 << (r->ebits - 1)) - 1;
	uint32_t e = j >> r->mbits, m = j & ((1u << r->mbits) - 1);
	if (e == 0)
		return ldexp((double)m, 1 - bias - r->mbits);
	return ldexp((double)(m + (1u << r->mbits)), (int)e - bias - r->mbits);
}

static __attribute__((unused)) void ref_init(void)
{
	for (int i = 0; i < N_REFS; i++) {
		Ref *r = &refs[i];
		r->nbits = 1 + r->ebits + r->mbits;
		uint32_t all_ones_exp = ((1u << r->ebits) - 1) << r->mbits;
		r->maxbits = r->fn ? all_ones_exp + (1u << r->mbits) - 2 : all_ones_exp - 1;
		r->v = malloc((r->maxbits + 2) * sizeof *r->v);
		for (uint32_t j = 0; j <= r->maxbits; j++)
			r->v[j] = ref_value(r, j);
		/* one step past the largest: where rounding up from it would land */
		r->v[r->maxbits + 1] = 2 * r->v[r->maxbits] - r->v[r->maxbits - 1];
	}
}

static __attribute__((unused)) void ref_free(void)
{
	for (int i = 0; i < N_REFS; i++)
		free(refs[i].v);
}

static __attribute__((unused)) const Ref *ref_of(ScalarKind k)
{
	for (int i = 0; i < N_REFS; i++)
		if (refs[i].kind == k)
			return &refs[i];
	return NULL;
}

static uint32_t ref_overflow(const Ref *r, uint32_t sign, bool sat)
{
	/* saturate; else the pattern past the largest: inf, or e4m3's NaN */
	return sign | (sat ? r->maxbits : r->maxbits + 1);
}

/* x (not NaN) rounded to the format: its bits. */
static uint32_t ref_encode(const Ref *r, quad x, bool sat)
{
	uint32_t sign = x < 0 || (x == 0 && signbit((double)x)) ? 1u << (r->nbits - 1) : 0;
	quad a = x < 0 ? -x : x;
	if (a >= (quad)r->v[r->maxbits + 1])
		return ref_overflow(r, sign, sat);
	uint32_t lo = 0, hi = r->maxbits + 1; /* v[lo] <= a < v[hi] */
	double ad = (double)a; /* a rounded: the search compares exactly below */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (r->v[mid] < ad || (r->v[mid] == ad && (quad)r->v[mid] <= a))
			lo = mid;
		else
			hi = mid;
	}
	/* 2a and the sum of two neighbours are exact (in double too when a is one) */
	int c;
	if ((quad)ad == a) {
		double twice = 2 * ad, sum = r->v[lo] + r->v[hi];
		c = twice < sum ? -1 : twice > sum;
	} else {
		quad twice = 2 * a, sum = (quad)r->v[lo] + (quad)r->v[hi];
		c = twice < sum ? -1 : twice > sum;
	}
	uint32_t j = c < 0 ? lo : c > 0 ? hi : (lo & 1 ? hi : lo);
	if (j > r->maxbits)
		return ref_overflow(r, sign, sat);
	return sign | j;
}

static __attribute__((unused)) bool ref_is_nan(const Ref *r, uint32_t b)
{
	uint32_t mag = b & ((1u << (r->nbits - 1)) - 1);
	uint32_t exp_ones = ((1u << r->ebits) - 1) << r->mbits;
	if (r->fn)
		return mag == (exp_ones | ((1u << r->mbits) - 1));
	return (mag & exp_ones) == exp_ones && (mag & ((1u << r->mbits) - 1));
}

/* The value of pattern b (NaN for NaNs, +-inf for infinities). */
static __attribute__((unused)) double ref_decode(const Ref *r, uint32_t b)
{
	if (ref_is_nan(r, b))
		return (b >> (r->nbits - 1)) ? -NAN : NAN;
	uint32_t mag = b & ((1u << (r->nbits - 1)) - 1);
	double v = mag > r->maxbits ? INFINITY : r->v[mag];
	return (b >> (r->nbits - 1)) ? -v : v;
}

/* x rounded to float kind k (f32, f64 by the host's conversions). */
static __attribute__((unused)) double ref_round(ScalarKind k, quad x)
{
	if (x != x)
		return NAN;
	if (k == SK_F64)
		return (double)x;
	if (k == SK_F32)
		return (float)x; /* libgcc's __trunctfsf2: correctly rounded from quad */
	const Ref *r = ref_of(k);
	return ref_decode(r, ref_encode(r, x, r->sat));
}

#endif
