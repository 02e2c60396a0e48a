/* tests/ops: random numbers, as .tile kernels through blk.h.
 *   - philox: this file's own Philox4x32 (Salmon et al., Random123) against
 *     the Random123 known-answer vectors; then randint and randint4x against
 *     it, for random 64-bit seeds and offsets (counter (offset, 0, 0, 0),
 *     key (seed low, seed high), as Triton's), also with n_rounds = 7, and
 *     the zero-key vector straight from a kernel;
 *   - rand: 1M samples in [0, 1), mean and variance within 6 sigma of 1/2
 *     and 1/12, a 16-bin chi-square, the same numbers for the same (seed,
 *     offset) in another launch and another order, different ones for
 *     another seed;
 *   - randn: 1M samples, finite, mean 0 and variance 1 within 6 sigma, the
 *     share beyond 3 sigma near 0.27%, deterministic likewise. */
#include "ops.h"

/* Philox4x32, R rounds: ctr <- (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1,
 * lo(M0 c0)); the key gains the Weyl constants between rounds. */
static void philox_ref(const uint32_t ctr_in[4], const uint32_t key_in[2], int rounds, uint32_t out[4])
{
	uint32_t c[4] = {ctr_in[0], ctr_in[1], ctr_in[2], ctr_in[3]}, k[2] = {key_in[0], key_in[1]};
	for (int r = 0; r < rounds; r++) {
		if (r) {
			k[0] += 0x9E3779B9u;
			k[1] += 0xBB67AE85u;
		}
		uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
		uint32_t n[4] = {(uint32_t)(p1 >> 32) ^ c[1] ^ k[0], (uint32_t)p1, (uint32_t)(p0 >> 32) ^ c[3] ^ k[1],
		                 (uint32_t)p0};
		memcpy(c, n, sizeof c);
	}
	memcpy(out, c, sizeof c);
}

static void kat_case(void)
{
	/* Random123 kat_vectors: philox4x32 10 rounds, counter, key, result */
	static const uint32_t kat[3][10] = {
		{0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
		{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
		 0x6d5451fd},
		{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
		 0x24126ea1},
	};
	bool ok = true;
	for (int v = 0; v < 3; v++) {
		uint32_t out[4];
		philox_ref(kat[v], kat[v] + 4, 10, out);
		for (int i = 0; i < 4; i++)
			if (out[i] != kat[v][6 + i]) {
				why("vector %d word %d: 0x%08x, want 0x%08x\n", v, i, out[i], kat[v][6 + i]);
				ok = false;
			}
	}
	result(ok, "philox4x32-10 reference (this test's) matches the Random123 known answers");
}

static const char *RANDINT_SRC = "kernel k(seed: u64, offs: *$O, out: *u32, n: i32) {\n"
                                 "    let i = program_id(0) * 256 + arange(0, 256);\n"
                                 "    let m = i < n;\n"
                                 "    let o = load(offs + i, mask = m, other = 0);\n"
                                 "    $BODY\n"
                                 "}\n";

/* four: randint4x (all four words), else randint (the first). */
static void randint_case(dt ot, bool four, int rounds, uint64_t fixed_seed, bool use_fixed)
{
	int n = 1000;
	uint64_t seed = use_fixed ? fixed_seed : rng_u64();
	arr offs = arr_new(ot, n), want = arr_new(DT_U32, 4 * n);
	for (int i = 0; i < n; i++)
		set_bits(offs, i, use_fixed ? (uint64_t)i : rng_u64());
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	for (int i = 0; i < n; i++) {
		uint32_t ctr[4] = {(uint32_t)get_bits(offs, i), 0, 0, 0}, o[4];
		philox_ref(ctr, key, rounds, o);
		for (int w = 0; w < 4; w++)
			set_bits(want, w * n + i, four || w == 0 ? o[w] : 0);
	}
	char rr[32] = "";
	if (rounds != 10)
		snprintf(rr, sizeof rr, ", n_rounds = %d", rounds);
	char body[512];
	if (four)
		snprintf(body, sizeof body,
		         "let a, b, c, d = randint4x(seed, o%s);\n"
		         "    store(out + i, a, mask = m);\n"
		         "    store(out + n + i, b, mask = m);\n"
		         "    store(out + 2 * n + i, c, mask = m);\n"
		         "    store(out + 3 * n + i, d, mask = m);",
		         rr);
	else
		snprintf(body, sizeof body, "let r: u32 = randint(seed, o%s);\n    store(out + i, r, mask = m);", rr);
	blk_devptr doffs = dev_from(offs), dout = dev_zeros(DT_U32, 4 * n);
	bool ok = run_kernel(render(RANDINT_SRC, "O", dts[ot].name, "BODY", body, NULL), NULL,
	                     ARGS(I((int64_t)seed), P(doffs), P(dout), I(n)), NO_CONSTS, GRID(4, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_U32, 4 * n), want, NULL, 0);
	result(ok, "%s(seed 0x%llx, %s offsets%s) against the reference", four ? "randint4x" : "randint",
	       (unsigned long long)seed, dts[ot].name, rr);
}

/* 1M samples of rand or randn at offsets base + i. */
static const char *SAMPLES_SRC =
	"kernel k(seed: i64, out: *f32, base: i32, BLOCK: const i32 = 1024) {\n"
	"    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let r: f32 = $FN(seed, base + i);\n"
	"    store(out + i, r);\n"
	"}\n";

enum { NS = 1 << 20 };

static arr samples(const char *fn, int64_t seed, int base)
{
	blk_devptr d = dev_zeros(DT_F32, NS);
	if (run_kernel(render(SAMPLES_SRC, "FN", fn, NULL), NULL, ARGS(I(seed), P(d), I(base)), NO_CONSTS,
	               GRID(NS / 1024, 1, 1)) != BLK_SUCCESS)
		return (arr){DT_F32, 0, NULL};
	return dev_read(d, DT_F32, NS);
}

/* The same offsets in the reverse order, and an element-wise repeat, in one kernel. */
static const char *REPEAT_SRC = "kernel k(seed: i64, out: *f32, base: i32) {\n"
                                "    let i = arange(0, 1024);\n"
                                "    let a = $FN(seed, base + (1023 - i));\n"
                                "    let b = $FN(seed, base + i);\n"
                                "    store(out + (1023 - i), a);\n"
                                "    store(out + 1024 + i, b);\n"
                                "}\n";

static void stats_case(const char *fn)
{
	bool uni = !strcmp(fn, "rand");
	int64_t seed = (int64_t)(rng_u64() >> 1);
	arr s = samples(fn, seed, 0);
	bool ok = s.n == NS;
	if (ok)
		s = arr_keep(s); /* kept for the cases below */
	if (ok) {
		long double sum = 0, sq = 0;
		long hist[16] = {0}, tails = 0, bad = 0;
		for (int i = 0; i < NS; i++) {
			double v = get_f(s, i);
			if (!isfinite(v) || (uni && (v < 0 || v >= 1))) {
				if (bad++ < 5)
					why("[%d] %.9g is out of range\n", i, v);
				continue;
			}
			sum += v;
			sq += (long double)v * v;
			if (uni)
				hist[(int)(v * 16)]++;
			else
				tails += fabs(v) > 3;
		}
		double mean = (double)(sum / NS), var = (double)(sq / NS) - mean * mean;
		double want_mean = uni ? 0.5 : 0, want_var = uni ? 1.0 / 12 : 1;
		/* sigma of the mean: sqrt(var / n); of the variance: sqrt((mu4 - var^2) / n) */
		double sm = sqrt(want_var / NS), sv = uni ? sqrt((1.0 / 80 - 1.0 / 144) / NS) : sqrt(2.0 / NS);
		if (fabs(mean - want_mean) > 6 * sm) {
			why("mean %.6f, want %.6f +- %.6f\n", mean, want_mean, 6 * sm);
			bad++;
		}
		if (fabs(var - want_var) > 6 * sv) {
			why("variance %.6f, want %.6f +- %.6f\n", var, want_var, 6 * sv);
			bad++;
		}
		if (uni) {
			double chi = 0, e = NS / 16.0;
			for (int b = 0; b < 16; b++)
				chi += (hist[b] - e) * (hist[b] - e) / e;
			if (chi > 50) { /* 15 degrees of freedom: P(chi2 > 50) < 2e-5 */
				why("chi-square over 16 bins %.1f (15 degrees of freedom)\n", chi);
				bad++;
			}
		} else {
			double frac = (double)tails / NS, p = 0.0026998, sp = sqrt(p * (1 - p) / NS);
			if (fabs(frac - p) > 6 * sp) {
				why("share beyond 3 sigma %.5f, want %.5f\n", frac, p);
				bad++;
			}
		}
		ok = bad == 0;
	}
	result(ok, "%s: %d samples, range, mean, variance, %s", fn, NS, uni ? "chi-square" : "tails");

	/* determinism: another launch, other offsets orders, the same values */
	int base = (int)rng_range(0, NS - 2048);
	blk_devptr d = dev_zeros(DT_F32, 2048);
	bool ok2 = s.n == NS && run_kernel(render(REPEAT_SRC, "FN", fn, NULL), NULL, ARGS(I(seed), P(d), I(base)), NO_CONSTS,
	                                   GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok2) {
		arr r = dev_read(d, DT_F32, 2048);
		int bad = 0;
		for (int i = 0; i < 2048; i++)
			if (get_bits(r, i) != get_bits(s, base + i % 1024) && bad++ < 5)
				why("offset %d: %.9g, first launch %.9g\n", base + i % 1024, get_f(r, i), get_f(s, base + i % 1024));
		ok2 = bad == 0;
	}
	result(ok2, "%s: the same (seed, offset) gives the same number in another launch and order", fn);

	/* another seed: a different stream */
	arr s2 = samples(fn, seed ^ 0x5DEECE66Dll, 0);
	bool ok3 = s.n == NS && s2.n == NS;
	if (ok3) {
		long same = 0;
		for (int i = 0; i < NS; i++)
			same += get_bits(s, i) == get_bits(s2, i);
		if (same > NS / 1000) {
			why("%ld of %d samples equal for two seeds\n", same, NS);
			ok3 = false;
		}
	}
	result(ok3, "%s: another seed gives another stream", fn);
	if (s.n == NS)
		arr_release(s);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	kat_case();
	randint_case(DT_I32, true, 10, 0, true); /* seed 0, offsets 0..: word 0 of offset 0 is 6627e8d5 */
	randint_case(DT_I32, false, 10, 0, false);
	randint_case(DT_I32, true, 10, 0, false);
	randint_case(DT_U32, false, 10, 0, false);
	randint_case(DT_I64, false, 10, 0, false);
	randint_case(DT_I32, true, 7, 0, false);
	randint_case(DT_I32, false, 10, 0xFFFFFFFFFFFFFFFFull, true);
	stats_case("rand");
	stats_case("randn");
	return ops_finish();
}
