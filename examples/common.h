/* common.h: small helpers shared by the example host programs.
 *
 *   CHECK(call)               stop with blk_last_error() when a blk_* call fails
 *   example_tile(...)         find examples/NAME.tile, or a kernel file of the
 *                             standard library as "../stdlib/nn/NAME.tile"
 *                             (argument, source folder, or a folder above the program)
 *   rng_*                     a seeded random generator (the same numbers everywhere)
 *   f16_from_float, f16_to_float, bf16_from_float, bf16_to_float
 *                             half precision and bfloat16, round to nearest even
 *   dtype_*, rng_buffer, dot_operand
 *                             buffers of f16, bf16 or f32 (a kernel's T)
 *   gemm_reference            a matrix product in double, and its error scale
 *   fill_device               set device memory to a byte
 *   compare_*                 error against a reference, with a tolerance
 *
 * Only blk.h and the C library are used: what a program outside this
 * repository would write. */
#ifndef EXAMPLES_COMMON_H
#define EXAMPLES_COMMON_H

#include "blk.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- errors ------------------------------------------------------------ */

/* Every blk_* function returns a status; on failure blk_last_error() says why. */
#define CHECK(call) check_status((call), #call, __FILE__, __LINE__)

static inline void check_status(blk_status s, const char *what, const char *file, int line)
{
	if (s != BLK_SUCCESS) {
		fprintf(stderr, "%s:%d: %s failed (status %d):\n%s\n", file, line, what, (int)s, blk_last_error());
		exit(1);
	}
}

static inline void *xmalloc(size_t bytes)
{
	void *p = calloc(1, bytes ? bytes : 1);
	if (!p) {
		fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
		exit(1);
	}
	return p;
}

static inline const char *backend_name(const blk_context *ctx)
{
	return blk_context_backend(ctx) == BLK_BACKEND_GPU ? "gpu" : "interpreter";
}

/* ---- finding the kernel source ----------------------------------------- */

static inline int file_exists(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The path of examples/NAME (e.g. "softmax.tile"): argv[1] when given;
 * else NAME beside the example's source file (this works when the program
 * runs from the repository root: the Makefile compiles "examples/NAME.c");
 * else examples/NAME in the folder of the program or a folder above it (so
 * build/examples/softmax finds the source from anywhere). NAME may start
 * with "../" to reach beside examples/: "../stdlib/nn/attention.tile", the
 * standard library's kernels that examples/attention.c drives. */
#define example_tile(argc, argv, name) example_tile_at((argc), (argv), (name), __FILE__)

static inline const char *example_tile_at(int argc, char **argv, const char *name, const char *source)
{
	static char path[8192];
	if (argc > 1)
		return argv[1];

	const char *slash = strrchr(source, '/');
	snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - source + 1) : 0, source, name);
	if (file_exists(path))
		return path;

	char dir[4096];
	ssize_t len = readlink("/proc/self/exe", dir, sizeof dir - 1);
	if (len > 0)
		dir[len] = 0;
	else
		snprintf(dir, sizeof dir, "%s", argv[0]);
	for (char *end; (end = strrchr(dir, '/')) != NULL;) {
		*end = 0; /* up one folder */
		snprintf(path, sizeof path, "%s/examples/%s", dir[0] ? dir : "", name);
		if (file_exists(path))
			return path;
	}
	fprintf(stderr, "cannot find %s: give its path as the first argument\n", name);
	exit(1);
}

/* ---- random numbers ------------------------------------------------------ */

/* splitmix64: tiny, seeded, and the same sequence on every machine. */
typedef struct rng {
	uint64_t state;
} rng;

static inline uint64_t rng_next(rng *r)
{
	uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi), rounded to float (values near 0 keep all their bits). */
static inline float rng_uniform(rng *r, float lo, float hi)
{
	float f = (float)(lo + ((double)hi - lo) * (double)(rng_next(r) >> 11) * 0x1p-53);
	return f < hi ? f : lo; /* rounding can reach hi */
}

/* Uniform integer in [lo, hi]. */
static inline int64_t rng_int(rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* ---- half precision ------------------------------------------------------ */

/* f16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits. */
typedef uint16_t f16;

/* float -> f16, rounding to nearest, ties to even; overflow gives infinity. */
static inline f16 f16_from_float(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
	uint32_t ax = x & 0x7FFFFFFFu;
	if (ax >= 0x7F800000u) /* infinity, or NaN (kept quiet) */
		return sign | (ax > 0x7F800000u ? 0x7E00 : 0x7C00);
	if (ax >= 0x477FF000u) /* >= 65520, halfway past 65504: rounds to infinity */
		return sign | 0x7C00;
	if (ax < 0x38800000u) {
		/* Below 2^-14, the smallest normal f16: a multiple of 2^-24. Scaling
		 * by 2^24 is exact; rintf rounds to nearest even (the default mode).
		 * 1024 is the smallest normal's encoding, so rounding up works. */
		float a;
		memcpy(&a, &ax, sizeof a);
		return sign | (uint16_t)rintf(a * 0x1p24f);
	}
	/* Normal: rebias the exponent, keep 10 of 23 fraction bits, round on
	 * the 13 dropped ones. A carry out of the fraction bumps the exponent,
	 * which is what rounding up to the next binade means. */
	uint32_t h = ((ax >> 23) - 127 + 15) << 10 | ((ax >> 13) & 0x3FF);
	uint32_t rest = ax & 0x1FFF;
	if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
		h++;
	return sign | (uint16_t)h;
}

static inline float f16_to_float(f16 h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1F, frac = h & 0x3FF;
	if (exp == 0) { /* zero or subnormal: frac * 2^-24 */
		float v = ldexpf((float)frac, -24);
		return sign ? -v : v;
	}
	uint32_t x = sign | (exp == 31 ? 0x7F800000u | frac << 13 : (exp - 15 + 127) << 23 | frac << 13);
	float f;
	memcpy(&f, &x, sizeof f);
	return f;
}

/* Random f16 values in [lo, hi); `as_float` (may be NULL) gets the values
 * the kernel will actually see, for the reference. */
static inline void rng_fill_f16(rng *r, f16 *out, float *as_float, size_t n, float lo, float hi)
{
	for (size_t i = 0; i < n; i++) {
		out[i] = f16_from_float(rng_uniform(r, lo, hi));
		if (as_float)
			as_float[i] = f16_to_float(out[i]);
	}
}

/* ---- bf16, and buffers of a chosen element type ------------------------- */

/* bf16: the top 16 bits of an f32, rounded to nearest even (NaN kept a NaN). */
static inline uint16_t bf16_from_float(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	if ((u & 0x7FFFFFFFu) > 0x7F800000u)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7FFFu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

static inline float bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* An element type a kernel's `T: const type` takes: its name (the
 * blk_const .type string) and size; element i of a buffer of that type
 * read as a float, or a float rounded into it. */
typedef enum dtype { DT_F16, DT_BF16, DT_F32 } dtype;

static inline const char *dtype_name(dtype t)
{
	return t == DT_F16 ? "f16" : t == DT_BF16 ? "bf16" : "f32";
}

static inline size_t dtype_size(dtype t)
{
	return t == DT_F32 ? 4 : 2;
}

static inline float dtype_get(dtype t, const void *buf, size_t i)
{
	if (t == DT_F32)
		return ((const float *)buf)[i];
	uint16_t h = ((const uint16_t *)buf)[i];
	return t == DT_BF16 ? bf16_to_float(h) : f16_to_float(h);
}

static inline void dtype_put(dtype t, void *buf, size_t i, float v)
{
	if (t == DT_F32)
		((float *)buf)[i] = v;
	else
		((uint16_t *)buf)[i] = t == DT_BF16 ? bf16_from_float(v) : f16_from_float(v);
}

/* Random values in [lo, hi) rounded to t, into a buffer of n elements. */
static inline void *rng_buffer(rng *r, dtype t, size_t n, float lo, float hi)
{
	void *buf = xmalloc(n * dtype_size(t));
	for (size_t i = 0; i < n; i++)
		dtype_put(t, buf, i, rng_uniform(r, lo, hi));
	return buf;
}

/* The value a dot multiplies for element i of buf: f32 inputs are read as
 * tf32 by default (language.md, dot: the low 13 fraction bits cleared);
 * f16 and bf16 ones as they are. */
static inline double dot_operand(dtype t, const void *buf, size_t i)
{
	float f = dtype_get(t, buf, i);
	if (t == DT_F32) {
		uint32_t u;
		memcpy(&u, &f, sizeof u);
		u &= ~0x1FFFu;
		memcpy(&f, &u, sizeof f);
	}
	return f;
}

/* The product of A (M x K, element (m, k) at m * sam + k * sak) and B
 * (K x N, element (k, n) at k * sbk + n * sbn), both of type t, in double
 * from the values dot multiplies: want[m * N + n]. scale[m * N + n] is
 * sum_k |a b|, at least 2^-10: the size of the rounding errors of a float
 * sum is proportional to it (compare_one's floor). */
static inline void gemm_reference(dtype t, const void *a, long sam, long sak, const void *b, long sbk, long sbn,
                                  int M, int N, int K, double *want, double *scale)
{
	for (long m = 0; m < M; m++)
		for (long n = 0; n < N; n++) {
			double sum = 0, abs_sum = 0;
			for (long k = 0; k < K; k++) {
				double prod = dot_operand(t, a, (size_t)(m * sam + k * sak)) *
				              dot_operand(t, b, (size_t)(k * sbk + n * sbn));
				sum += prod;
				abs_sum += fabs(prod);
			}
			want[m * N + n] = sum;
			scale[m * N + n] = fmax(abs_sum, 0x1p-10);
		}
}

/* Sets `bytes` bytes of device memory to `byte` (0xFF makes every f32, f16
 * and bf16 a NaN, so an element a kernel leaves unwritten shows). */
static inline void fill_device(blk_context *ctx, blk_devptr p, int byte, size_t bytes)
{
	void *host = xmalloc(bytes);
	memset(host, byte, bytes);
	CHECK(blk_copy_to_device(ctx, p, host, bytes));
	free(host);
}

/* ---- comparing with a reference ----------------------------------------- */

/* The error of one element is |got - want| / max(|want|, floor): relative
 * where the reference is large, and relative to `floor` (the scale of the
 * data) where it is near zero, so that cancellation does not blow it up.
 * An element passes when its error is at most `tol`; NaN never passes. */
typedef struct compare {
	const char *what;
	double tol;
	double max_err;
	long count, bad;
} compare;

static inline compare compare_start(const char *what, double tol)
{
	return (compare){.what = what, .tol = tol};
}

static inline void compare_one(compare *c, long i, double got, double want, double floor)
{
	double err = got == want ? 0 : fabs(got - want) / fmax(fabs(want), floor);
	if (isnan(err)) /* a NaN, or a finite value where infinity was wanted */
		err = INFINITY;
	c->count++;
	if (err > c->max_err)
		c->max_err = err;
	if (!(err <= c->tol) && c->bad++ < 5)
		printf("  %s[%ld]: got %.9g, want %.9g (error %.2e > %.0e)\n", c->what, i, got, want, err, c->tol);
}

/* Counts a pair of results that must be the same bits (a failure when not). */
static inline void compare_bits(compare *c, const char *what, const void *x, const void *y, size_t bytes)
{
	c->count++;
	if (memcmp(x, y, bytes) != 0) {
		c->max_err = INFINITY;
		if (c->bad++ < 5)
			printf("  %s: not the same bits\n", what);
	}
}

/* Element-wise comparison of a float array with a double reference. */
static inline void compare_floats(compare *c, const float *got, const double *want, long n, double floor)
{
	for (long i = 0; i < n; i++)
		compare_one(c, i, got[i], want[i], floor);
}

static inline void compare_f16s(compare *c, const f16 *got, const double *want, long n, double floor)
{
	for (long i = 0; i < n; i++)
		compare_one(c, i, f16_to_float(got[i]), want[i], floor);
}

/* Prints the summary line "TITLE: max rel err E OK" (or FAIL, with the
 * count) over any number of comparisons; returns the exit status. */
static inline int compare_report(const char *title, const compare *cs, int n)
{
	double worst = 0;
	long bad = 0;
	for (int i = 0; i < n; i++) {
		worst = cs[i].max_err > worst ? cs[i].max_err : worst;
		bad += cs[i].bad;
		if (cs[i].bad)
			printf("  %s: %ld of %ld elements over the tolerance %.0e\n", cs[i].what, cs[i].bad, cs[i].count,
			       cs[i].tol);
	}
	printf("%s: max rel err %.1e %s\n", title, worst, bad ? "FAIL" : "OK");
	return bad ? 1 : 0;
}

#endif
