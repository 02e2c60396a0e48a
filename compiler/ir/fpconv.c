/* fpconv.c: the float formats of blk, bit-exact.
 *
 * A double holds every value of every float format of blk exactly, so values
 * travel as doubles: decoding is exact, encoding rounds once, to nearest with
 * ties to even, straight from the double (never through f32, which would
 * round twice). Everything is integer arithmetic on the bits: the results do
 * not depend on the host's rounding mode or its float conversions.
 *
 * Overflow: f16, bf16 and f32 round to infinity (IEEE). The 8-bit formats
 * saturate by default, as NVIDIA's cvt.rn.satfinite does: a finite value
 * beyond the largest one, and an infinity, become the largest finite value of
 * that sign; NaN stays NaN. fp_encode_fp8 with satfinite false gives the
 * other choice (e5m2: infinity; e4m3, which has none: NaN).
 *
 * NaN: the sign and the top bits of the payload are kept (a payload that
 * would become zero sets the quiet bit), so a NaN survives a round trip
 * through a wider format bit for bit. e4m3 has one NaN per sign, S.1111.111. */
#include "ir/ir.h"

#include <math.h>
#include <string.h>

typedef struct Fmt {
	int ebits, mbits;
	bool fn; /* no infinities; NaN is only S.1..1.1..1 (e4m3fn) */
} Fmt;

static const Fmt fmt_f32 = {8, 23, false};
static const Fmt fmt_f16 = {5, 10, false};
static const Fmt fmt_bf16 = {8, 7, false};
static const Fmt fmt_e4m3 = {4, 3, true};
static const Fmt fmt_e5m2 = {5, 2, false};

static uint64_t dbits(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static double bitsd(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* Rounds the double with bits u into format f. */
static uint32_t encode(uint64_t u, Fmt f, bool sat)
{
	uint32_t sign = (uint32_t)(u >> 63) << (f.ebits + f.mbits);
	uint64_t a = u & ~(1ull << 63);
	uint32_t mmask = (1u << f.mbits) - 1;
	uint32_t inf = ((1u << f.ebits) - 1) << f.mbits; /* the all-ones exponent */
	uint32_t nan = inf | mmask;                      /* the fn formats' NaN */
	uint32_t maxfin = f.fn ? nan - 1 : inf - 1;
	uint32_t over = sat ? maxfin : f.fn ? nan : inf;

	if (a > 0x7FF0000000000000ull) {
		if (f.fn)
			return sign | nan;
		uint32_t m = (uint32_t)(a >> (52 - f.mbits)) & mmask;
		return sign | inf | (m ? m : 1u << (f.mbits - 1));
	}
	if (a == 0x7FF0000000000000ull)
		return sign | over;

	int bias = (1 << (f.ebits - 1)) - 1, emin = 1 - bias;
	int e = (int)(a >> 52) - 1023;
	uint64_t m = a & ((1ull << 52) - 1);
	if (a >> 52)
		m |= 1ull << 52;
	else
		e = -1022; /* a double subnormal: far below every format's range */
	/* m * 2^(e - 52); keep mbits bits after the leading one, fewer below
	 * emin (a subnormal result). */
	int shift = 52 - f.mbits;
	if (e < emin) {
		shift += emin - e;
		e = emin;
	}
	uint64_t q = 0;
	if (shift < 64) { /* else m < 2^53 <= half the last kept bit: 0 */
		q = m >> shift;
		uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
		if (rem > half || (rem == half && (q & 1)))
			q++;
	}
	/* q holds the leading one for a normal result (it may have carried into
	 * the next binade: the addition moves the exponent up) and none for a
	 * subnormal one, whose exponent field is 0. */
	uint64_t bits = ((uint64_t)(e + bias - 1) << f.mbits) + q;
	if (bits > maxfin)
		return sign | over;
	return sign | (uint32_t)bits;
}

static double decode(uint32_t b, Fmt f)
{
	int bias = (1 << (f.ebits - 1)) - 1;
	uint32_t emask = (1u << f.ebits) - 1, mmask = (1u << f.mbits) - 1;
	uint64_t sign = (uint64_t)((b >> (f.ebits + f.mbits)) & 1) << 63;
	uint32_t e = (b >> f.mbits) & emask, m = b & mmask;
	if (e == emask && (!f.fn || m == mmask)) /* inf or NaN: payload on top */
		return bitsd(sign | 0x7FF0000000000000ull | (uint64_t)m << (52 - f.mbits));
	if (e == 0) {
		double v = ldexp((double)m, 1 - bias - f.mbits);
		return sign ? -v : v;
	}
	return bitsd(sign | (uint64_t)(e - bias + 1023) << 52 | (uint64_t)m << (52 - f.mbits));
}

static const Fmt *fmt_of(ScalarKind k)
{
	switch (k) {
	case SK_F32: return &fmt_f32;
	case SK_F16: return &fmt_f16;
	case SK_BF16: return &fmt_bf16;
	case SK_F8E4M3: return &fmt_e4m3;
	case SK_F8E5M2: return &fmt_e5m2;
	default: return NULL;
	}
}

uint64_t fp_encode(ScalarKind k, double x)
{
	if (k == SK_F64)
		return dbits(x);
	const Fmt *f = fmt_of(k);
	return f ? encode(dbits(x), *f, k == SK_F8E4M3 || k == SK_F8E5M2) : 0;
}

double fp_decode(ScalarKind k, uint64_t bits)
{
	if (k == SK_F64)
		return bitsd(bits);
	const Fmt *f = fmt_of(k);
	return f ? decode((uint32_t)bits, *f) : 0.0;
}

double fp_round(ScalarKind k, double x)
{
	switch (k) {
	case SK_F64:
		return x;
	case SK_F32:
		if (x == x)
			return (double)(float)x; /* the host's conversion rounds to nearest even */
		return decode(encode(dbits(x), fmt_f32, false), fmt_f32);
	default:
		return fp_decode(k, fp_encode(k, x));
	}
}

uint8_t fp_encode_fp8(ScalarKind k, double x, bool satfinite)
{
	return (uint8_t)encode(dbits(x), k == SK_F8E4M3 ? fmt_e4m3 : fmt_e5m2, satfinite);
}

uint16_t fp_f32_to_f16(uint32_t f) { return (uint16_t)encode(dbits(decode(f, fmt_f32)), fmt_f16, false); }
uint32_t fp_f16_to_f32(uint16_t h) { return encode(dbits(decode(h, fmt_f16)), fmt_f32, false); }
uint16_t fp_f32_to_bf16(uint32_t f) { return (uint16_t)encode(dbits(decode(f, fmt_f32)), fmt_bf16, false); }
uint32_t fp_bf16_to_f32(uint16_t h) { return (uint32_t)h << 16; }
uint8_t fp_f32_to_e4m3(uint32_t f) { return (uint8_t)encode(dbits(decode(f, fmt_f32)), fmt_e4m3, true); }
uint32_t fp_e4m3_to_f32(uint8_t b) { return encode(dbits(decode(b, fmt_e4m3)), fmt_f32, false); }
uint8_t fp_f32_to_e5m2(uint32_t f) { return (uint8_t)encode(dbits(decode(f, fmt_f32)), fmt_e5m2, true); }
uint32_t fp_e5m2_to_f32(uint8_t b) { return encode(dbits(decode(b, fmt_e5m2)), fmt_f32, false); }

double fp_from_f32_bits(uint32_t f) { return decode(f, fmt_f32); }
uint32_t fp_to_f32_bits(double x) { return encode(dbits(x), fmt_f32, false); }

/* An integer as a double rounded to odd: the 53 leading bits, the last one
 * set when anything below was. Rounding that double once more, to any format
 * of at most 51 bits of precision, gives the integer correctly rounded. */
static double round_odd_u64(uint64_t v)
{
	if (v < (1ull << 53))
		return (double)v;
	int lz = __builtin_clzll(v);
	int drop = 11 - lz; /* bits below the 53 kept */
	uint64_t kept = v >> drop;
	if (v & ((1ull << drop) - 1))
		kept |= 1;
	return ldexp((double)kept, drop);
}

double fp_from_int(ScalarKind k, int64_t v, bool is_unsigned)
{
	if (k == SK_F64)
		return is_unsigned ? (double)(uint64_t)v : (double)v;
	if (k == SK_F32) /* the host's conversion is correctly rounded */
		return is_unsigned ? (double)(float)(uint64_t)v : (double)(float)v;
	double d;
	if (is_unsigned || v >= 0)
		d = round_odd_u64((uint64_t)v);
	else
		d = -round_odd_u64(-(uint64_t)v);
	return fp_round(k, d);
}

/* x * y + z for factors whose product is exact in double (f32 and
 * narrower), rounded to odd in double: the sum's error comes from
 * TwoSum, and an inexact even sum moves to its odd neighbour toward the true
 * value. Rounding that once more to a format of at most 51 bits is then the
 * correctly rounded fma, where a plain double sum would round twice. */
static double fma_odd(double x, double y, double z)
{
	double p = x * y, s = p + z;
	if (!isfinite(s))
		return s;
	double v = s - p, e = (p - (s - v)) + (z - v);
	uint64_t bits = dbits(s);
	if (e != 0 && !(bits & 1))
		s = nextafter(s, e > 0 ? INFINITY : -INFINITY);
	return s;
}

double fp_fma(ScalarKind k, double x, double y, double z)
{
	switch (k) {
	case SK_F64:
		return fma(x, y, z);
	case SK_F32:
		return fmaf((float)x, (float)y, (float)z);
	default:
		return fp_round(k, fma_odd(x, y, z));
	}
}
