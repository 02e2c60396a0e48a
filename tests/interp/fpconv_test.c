/* fpconv_test: the float conversions of compiler/fpconv.c against the
 * reference of ref.h (a table search, written differently). Every bit
 * pattern of the 16- and 8-bit formats is decoded and round-tripped; every
 * tie between two neighbours (and the values one step either side) is
 * rounded from f32 and from f64; a few million random patterns too.
 *
 * Prints "ok NAME" / "FAIL NAME: why" a case and last "N passed, N failed". */
#include "ref.h"

static float f32_of(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static uint32_t bits_of_f32(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

static double f64_of(uint64_t b)
{
	double d;
	memcpy(&d, &b, 8);
	return d;
}

static uint32_t to_fmt_from_f32(const Ref *r, uint32_t f)
{
	switch (r->kind) {
	case SK_F16: return fp_f32_to_f16(f);
	case SK_BF16: return fp_f32_to_bf16(f);
	case SK_F8E4M3: return fp_f32_to_e4m3(f);
	default: return fp_f32_to_e5m2(f);
	}
}

static uint32_t fmt_to_f32(const Ref *r, uint32_t b)
{
	switch (r->kind) {
	case SK_F16: return fp_f16_to_f32((uint16_t)b);
	case SK_BF16: return fp_bf16_to_f32((uint16_t)b);
	case SK_F8E4M3: return fp_e4m3_to_f32((uint8_t)b);
	default: return fp_e5m2_to_f32((uint8_t)b);
	}
}

/* ---- cases --------------------------------------------------------------- */

/* Every pattern decodes to the reference value (fp_decode and the f32 path). */
static void test_decode_all(const Ref *r)
{
	char name[64];
	snprintf(name, sizeof name, "%s: every pattern decodes exactly", r->name);
	uint32_t n = 1u << r->nbits;
	for (uint32_t b = 0; b < n; b++) {
		double d = fp_decode(r->kind, b);
		float f = f32_of(fmt_to_f32(r, b));
		uint32_t mag = b & ((1u << (r->nbits - 1)) - 1);
		bool neg = b >> (r->nbits - 1);
		if (ref_is_nan(r, b)) {
			if (!isnan(d) || !isnan(f) || !signbit(d) != !neg || !signbit(f) != !neg) {
				result(false, name, "pattern 0x%x: not a NaN of the right sign", b);
				return;
			}
			continue;
		}
		double want;
		if (!r->fn && (mag >> r->mbits) == (1u << r->ebits) - 1)
			want = INFINITY;
		else
			want = r->v[mag];
		if (neg)
			want = -want;
		if (d != want || (double)f != want || !signbit(d) != !signbit(want)) {
			result(false, name, "pattern 0x%x: got %.17g / %.9g, want %.17g", b, d, (double)f, want);
			return;
		}
	}
	result(true, name, " ");
}

/* Every pattern survives format -> f32 -> format and format -> f64 -> format,
 * NaN payloads included; but the saturating conversion to e5m2 turns its
 * infinities into the largest finite values (the non-saturating one keeps them). */
static void test_round_trip_all(const Ref *r)
{
	char name[64];
	snprintf(name, sizeof name, "%s: every pattern round-trips through f32 and f64", r->name);
	uint32_t n = 1u << r->nbits;
	for (uint32_t b = 0; b < n; b++) {
		uint32_t want = b;
		if (r->kind == SK_F8E5M2 && (b & 0x7F) == 0x7C)
			want = (b & 0x80) | 0x7B;
		uint32_t back = to_fmt_from_f32(r, fmt_to_f32(r, b));
		uint32_t back64 = (uint32_t)fp_encode(r->kind, fp_decode(r->kind, b));
		if (back != want || back64 != want) {
			result(false, name, "0x%x came back as 0x%x (f32), 0x%x (f64)", b, back, back64);
			return;
		}
		if (r->sat && fp_encode_fp8(r->kind, fp_decode(r->kind, b), false) != b) {
			result(false, name, "0x%x came back as 0x%x (not saturating)", b,
			       fp_encode_fp8(r->kind, fp_decode(r->kind, b), false));
			return;
		}
	}
	result(true, name, " ");
}

static bool check_f32(const Ref *r, uint32_t f, const char *name)
{
	float x = f32_of(f);
	uint32_t got = to_fmt_from_f32(r, f);
	uint32_t got64 = (uint32_t)fp_encode(r->kind, (double)x);
	if (isnan(x)) { /* the host's f32 -> f64 quiets a signaling NaN: the payloads may differ */
		if (!ref_is_nan(r, got) || !ref_is_nan(r, got64) || (got >> (r->nbits - 1)) != (f >> 31) ||
		    (got64 >> (r->nbits - 1)) != (f >> 31)) {
			result(false, name, "NaN 0x%08x gave 0x%x / 0x%x", f, got, got64);
			return false;
		}
		return true;
	}
	uint32_t want = ref_encode(r, (quad)x, r->sat);
	if (got != want || got64 != want) {
		result(false, name, "f32 0x%08x (%.9g) gave 0x%x (f64 path 0x%x), want 0x%x", f, (double)x, got,
		       got64, want);
		return false;
	}
	return true;
}

/* Each point between two neighbours (ties), those points one f32 step either
 * side, the neighbours themselves, of both signs; past the largest value too. */
static void test_f32_ties(const Ref *r)
{
	char name[80];
	snprintf(name, sizeof name, "%s: from f32 at every tie and one step around it", r->name);
	long n = 0;
	for (uint32_t j = 0; j <= r->maxbits; j++) {
		double mid = (r->v[j] + r->v[j + 1]) / 2;
		float m = (float)mid;
		if ((double)m != mid)
			continue; /* below f32's range: not a tie f32 can hold */
		float cand[] = {m, nextafterf(m, 0), nextafterf(m, INFINITY), (float)r->v[j], (float)r->v[j + 1],
		                nextafterf(m, 0) == 0 ? m : nextafterf(nextafterf(m, 0), 0)};
		for (size_t k = 0; k < sizeof cand / sizeof cand[0]; k++)
			for (int s = 0; s < 2; s++) {
				uint32_t f = bits_of_f32(cand[k]) | (uint32_t)s << 31;
				if (!check_f32(r, f, name))
					return;
				n++;
			}
	}
	result(true, name, " ");
	(void)n;
}

static void test_f32_random(const Ref *r)
{
	char name[80];
	snprintf(name, sizeof name, "%s: from 2M random f32 patterns and specials", r->name);
	uint32_t specials[] = {0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001,
	                       0x00000001, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x3F800000};
	for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
		if (!check_f32(r, specials[i], name))
			return;
	for (int i = 0; i < 2000000; i++) {
		uint32_t f = (uint32_t)rnd();
		/* half of them near the format's range, where rounding is interesting */
		if (i & 1) {
			int bias = (1 << (r->ebits - 1)) - 1;
			int e = (int)(rnd() % (uint64_t)(2 * bias + r->mbits + 6)) - bias - r->mbits - 2;
			f = (f & 0x807FFFFF) | (uint32_t)(e + 127) << 23;
		}
		if (!check_f32(r, f, name))
			return;
	}
	result(true, name, " ");
}

/* From f64: ties and one f64 step either side (fp_encode straight from double). */
static void test_f64_ties(const Ref *r)
{
	char name[80];
	snprintf(name, sizeof name, "%s: from f64 at every tie and one step around it", r->name);
	for (uint32_t j = 0; j <= r->maxbits; j++) {
		double mid = (r->v[j] + r->v[j + 1]) / 2;
		double cand[] = {mid, nextafter(mid, 0), nextafter(mid, INFINITY), (double)r->v[j]};
		for (size_t k = 0; k < sizeof cand / sizeof cand[0]; k++)
			for (int s = 0; s < 2; s++) {
				double x = s ? -cand[k] : cand[k];
				uint32_t got = (uint32_t)fp_encode(r->kind, x);
				uint32_t want = ref_encode(r, (quad)x, r->sat);
				if (got != want) {
					result(false, name, "%.17g gave 0x%x, want 0x%x", x, got, want);
					return;
				}
				double rounded = fp_round(r->kind, x), wantv = fp_decode(r->kind, want);
				if (memcmp(&rounded, &wantv, sizeof rounded) != 0) {
					result(false, name, "fp_round(%.17g) = %.17g, want %.17g", x, rounded, wantv);
					return;
				}
			}
	}
	result(true, name, " ");
}

/* Large integers to narrow floats round once (no double rounding via f64). */
static void test_from_int(const Ref *r)
{
	char name[80];
	snprintf(name, sizeof name, "%s: from i64 and u64, rounded once", r->name);
	for (int i = 0; i < 200000; i++) {
		uint64_t u = rnd() >> (rnd() % 64);
		if (i % 3 == 0) /* just above a tie at 8 bits of precision */
			u = (1ull << 60) + (1ull << 52) + (rnd() & 7);
		bool is_unsigned = i & 1;
		int64_t v = (int64_t)u;
		quad exact = is_unsigned ? (quad)u : (quad)v;
		double got = fp_from_int(r->kind, v, is_unsigned);
		uint32_t want = ref_encode(r, exact, r->sat);
		if (fp_encode(r->kind, got) != want) {
			result(false, name, "%s %llu gave %.17g, want pattern 0x%x", is_unsigned ? "u64" : "i64",
			       (unsigned long long)u, got, want);
			return;
		}
	}
	result(true, name, " ");
}

/* An independent formula for f32 -> bf16 (add the rounding bias, truncate). */
static void test_bf16_bias_formula(void)
{
	const char *name = "bf16: agrees with the rounding-bias formula on 4M patterns";
	for (int i = 0; i < 4000000; i++) {
		uint32_t f = (uint32_t)rnd();
		if (i < 65536 * 2) /* every tie pattern: low half 0x8000 */
			f = ((uint32_t)(i >> 1) << 16) | (i & 1 ? 0x8000u : 0x7FFFu);
		if ((f & 0x7F800000) == 0x7F800000 && (f & 0x7FFFFF))
			continue; /* NaN: the formula does not apply */
		uint32_t want = (f + 0x7FFF + ((f >> 16) & 1)) >> 16;
		if (fp_f32_to_bf16(f) != want) {
			result(false, name, "0x%08x gave 0x%04x, want 0x%04x", f, fp_f32_to_bf16(f), want);
			return;
		}
	}
	result(true, name, " ");
}

static void test_specials(void)
{
	struct {
		ScalarKind k;
		double x;
		bool sat;
		uint32_t want;
	} cases[] = {
		{SK_F16, 65504.0, false, 0x7BFF},
		{SK_F16, 65519.99, false, 0x7BFF},
		{SK_F16, 65520.0, false, 0x7C00},     /* the tie past the largest goes to infinity */
		{SK_F16, ldexp(1, -24), false, 0x0001},
		{SK_F16, ldexp(1, -25), false, 0x0000}, /* tie to even: zero */
		{SK_F16, ldexp(1.5, -25), false, 0x0001},
		{SK_F16, ldexp(3, -25), false, 0x0002}, /* 1.5 ulp: tie to even, 2 */
		{SK_F16, -0.0, false, 0x8000},
		{SK_F16, INFINITY, false, 0x7C00},
		{SK_BF16, 1.00390625, false, 0x3F80}, /* 1 + 2^-8: tie, to even */
		{SK_BF16, 1.01171875, false, 0x3F82}, /* 1 + 3 * 2^-8: tie, to even (up) */
		{SK_F8E4M3, 448.0, true, 0x7E},
		{SK_F8E4M3, 464.0, true, 0x7E},       /* tie between 448 and (480): even is 448 */
		{SK_F8E4M3, 480.0, true, 0x7E},       /* saturates */
		{SK_F8E4M3, 1e30, true, 0x7E},
		{SK_F8E4M3, -INFINITY, true, 0xFE},
		{SK_F8E4M3, 480.0, false, 0x7F},      /* not saturating: NaN */
		{SK_F8E4M3, NAN, true, 0x7F},
		{SK_F8E4M3, ldexp(1, -9), true, 0x01}, /* smallest subnormal */
		{SK_F8E4M3, ldexp(1, -10), true, 0x00},
		{SK_F8E5M2, 57344.0, true, 0x7B},
		{SK_F8E5M2, 61440.0, true, 0x7B},     /* tie to (65536): saturates */
		{SK_F8E5M2, 61440.0, false, 0x7C},    /* not saturating: infinity */
		{SK_F8E5M2, INFINITY, true, 0x7B},
		{SK_F8E5M2, INFINITY, false, 0x7C},
		{SK_F8E5M2, ldexp(1, -16), true, 0x01},
	};
	const char *name = "specials: largest values, overflow, subnormals, ties";
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint32_t got;
		if (cases[i].k == SK_F8E4M3 || cases[i].k == SK_F8E5M2)
			got = fp_encode_fp8(cases[i].k, cases[i].x, cases[i].sat);
		else
			got = (uint32_t)fp_encode(cases[i].k, cases[i].x);
		if (got != cases[i].want) {
			result(false, name, "%s(%.17g%s) = 0x%x, want 0x%x", scalar_name(cases[i].k), cases[i].x,
			       cases[i].sat ? ", sat" : "", got, cases[i].want);
			return;
		}
	}
	result(true, name, " ");
}

/* f32 <-> double keeps every pattern, signaling NaNs included; fp_round to
 * f32 is the host's conversion on numbers. */
static void test_f32_bits(void)
{
	const char *name = "f32: bits to double and back keep every pattern (4M random, NaNs)";
	for (int i = 0; i < 4000000; i++) {
		uint32_t f = (uint32_t)rnd();
		if (i & 1)
			f |= 0x7F800000; /* infinities and NaNs, signaling ones too */
		if (fp_to_f32_bits(fp_from_f32_bits(f)) != f || fp_encode(SK_F32, fp_from_f32_bits(f)) != f) {
			result(false, name, "0x%08x came back as 0x%08x", f, fp_to_f32_bits(fp_from_f32_bits(f)));
			return;
		}
	}
	for (int i = 0; i < 1000000; i++) {
		double d = f64_of(rnd());
		if (isnan(d))
			continue;
		double want = (double)(float)d;
		if (fp_round(SK_F32, d) != want || fp_to_f32_bits(d) != bits_of_f32((float)d)) {
			result(false, name, "fp_round(f32, %.17g) = %.17g, want %.17g", d, fp_round(SK_F32, d), want);
			return;
		}
	}
	result(true, name, " ");
}

/* fp_fma rounds once: random operands of moderate size against quad (exact
 * there), and the case a double fma gets wrong: a product that is exactly a
 * midpoint of bf16 plus a z far below double's precision (the exact sum is
 * just off the midpoint; the double sum is the midpoint, then ties to even). */
static void test_fma(void)
{
	const char *name = "fp_fma: one rounding for f16, bf16, fp8 (a midpoint plus a tiny z too)";
	for (int i = 0; i < N_REFS; i++) {
		const Ref *r = &refs[i];
		for (int n = 0; n < 200000; n++) {
			double v[3];
			for (int j = 0; j < 3; j++) {
				uint32_t b = (uint32_t)rnd() & ((1u << r->nbits) - 1);
				v[j] = fp_decode(r->kind, b);
				if (!isfinite(v[j]) || fabs(v[j]) > 1e4 || (v[j] != 0 && fabs(v[j]) < 1e-4))
					v[j] = 1.5;
			}
			double got = fp_fma(r->kind, v[0], v[1], v[2]);
			uint32_t want = ref_encode(r, (quad)v[0] * v[1] + v[2], r->sat);
			if (fp_encode(r->kind, got) != want) {
				result(false, name, "%s: fma(%.17g, %.17g, %.17g) = %.17g, want pattern 0x%x", r->name, v[0], v[1],
				       v[2], got, want);
				return;
			}
		}
	}
	const Ref *bf = ref_of(SK_BF16);
	int found = 0;
	double tiny = ldexp(1, -133); /* bf16's smallest subnormal */
	for (int a = 0; a < 128; a++)
		for (int b = 0; b < 128; b++) {
			double x = 1 + a / 128.0, y = 1 + b / 128.0, p = x * y;
			uint32_t lo = ref_encode(bf, p, false) & 0x7FFF;
			double vlo = bf->v[lo] <= p ? bf->v[lo] : bf->v[lo - 1];
			uint32_t jlo = bf->v[lo] <= p ? lo : lo - 1;
			if (2 * p != vlo + bf->v[jlo + 1])
				continue; /* not a midpoint */
			found++;
			for (int s = -1; s <= 1; s += 2) {
				double got = fp_fma(SK_BF16, x, y, s * tiny), want = s > 0 ? bf->v[jlo + 1] : vlo;
				if (got != want) {
					result(false, name, "bf16 fma(%.9g, %.9g, %s2^-133) = %.9g, want %.9g", x, y, s > 0 ? "" : "-",
					       got, want);
					return;
				}
			}
		}
	result(found > 0, name, "no midpoint products found");
}

int main(void)
{
	ref_init();
	for (int i = 0; i < N_REFS; i++) {
		test_decode_all(&refs[i]);
		test_round_trip_all(&refs[i]);
		test_f32_ties(&refs[i]);
		test_f32_random(&refs[i]);
		test_f64_ties(&refs[i]);
		test_from_int(&refs[i]);
	}
	test_bf16_bias_formula();
	test_specials();
	test_f32_bits();
	test_fma();
	ref_free();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
