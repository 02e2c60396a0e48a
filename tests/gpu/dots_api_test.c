/* Every kind of dot on a real GPU through blk.h: a masked matmul (a K loop
 * of dot(x, y, acc)) over shapes that are not multiples of the tile (K
 * below BLOCK_K too, and one shape of multiples of 16, which the JIT
 * specializes), for f16 and bf16 (f32 accumulator, and f16 accumulator),
 * f32 with input_precision tf32 and tf32x3 (mma.sync m16n8k8; wgmma k8 on
 * sm_90a where the tile has 64 rows a warpgroup) and ieee (FMAs),
 * i8 into i32, and fp8 e4m3, e5m2 and the two mixed (mma.sync m16n8k32 from
 * sm_89 on), and some with B loaded along K (trans: a K-major B tile),
 * against references written here.
 *
 * References: the products of the inputs as the kernel's precision makes
 * them (tf32: both inputs truncated to tf32, their low 13 fraction bits
 * cleared, as the tensor cores read an f32;
 * tf32x3: a_small b_big + a_big b_small + a_big b_big), summed exactly.
 * Tolerances per element, S = sum |products| (+ |acc|): K 2^-23 S (the
 * order and rounding of the f32 additions), and for fp8 2^-10 S more for
 * each K step of 32 (Hopper's fp8 tensor cores add each step's products
 * into the accumulator keeping about 13 bits: sm_90a's wgmma; sm_89's
 * mma.sync within 2^-12 S overall); an f16
 * accumulator rounds once a K step: an f16 ulp of the result a step; an f16
 * result half an ulp; i8 exact.
 *
 * Where no GPU can be used it prints "SKIP: no GPU (reason)" and "0 passed,
 * 0 failed". BLK_GPU_TEST_BACKEND=interpreter runs it on the interpreter
 * (to check the test itself where there is no GPU). */
#include "blk.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond && blk_last_error()[0])
		printf("     last error: %s\n", blk_last_error());
	fflush(stdout);
	cond ? passed++ : failed++;
}

/* ---- element types -------------------------------------------------------------------- */

typedef enum { F16, BF16, F32, I8, I32, E4M3, E5M2 } ty;
static const char *const ty_name[] = {"f16", "bf16", "f32", "i8", "i32", "f8e4m3", "f8e5m2"};
static const int ty_bytes[] = {2, 2, 4, 1, 4, 1, 1};

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint32_t rnd(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* The value of a float format's bits: ebits of exponent (bias 2^(ebits-1) - 1), mbits of fraction. */
static double fp_value(uint32_t bits, int ebits, int mbits)
{
	int e = (int)(bits >> mbits) & ((1 << ebits) - 1), bias = (1 << (ebits - 1)) - 1;
	double f = (double)(bits & ((1u << mbits) - 1)) / (double)(1u << mbits);
	double v = e ? ldexp(1.0 + f, e - bias) : ldexp(f, 1 - bias);
	return bits >> (ebits + mbits) & 1 ? -v : v;
}

/* Fills element i of buffer p of type t with a random value, returns it. */
static double fill(void *p, ty t, int i)
{
	uint32_t r = rnd();
	switch (t) {
	case F16: { /* |x| in [2^-4, 4) */
		uint16_t b = (uint16_t)((r & 0x8000) | (uint32_t)(11 + r % 6) << 10 | (r >> 5 & 0x3ff));
		((uint16_t *)p)[i] = b;
		return fp_value(b, 5, 10);
	}
	case BF16: {
		uint16_t b = (uint16_t)((r & 0x8000) | (uint32_t)(123 + r % 6) << 7 | (r >> 5 & 0x7f));
		((uint16_t *)p)[i] = b;
		return fp_value(b, 8, 7);
	}
	case F32: { /* every fraction bit used: tf32 must truncate */
		float x = (float)((double)(r & 0xffffff) / 0x1p23 - 1.0) * (float)(1 + (r >> 24) % 4);
		((float *)p)[i] = x;
		return x;
	}
	case I8:
		((int8_t *)p)[i] = (int8_t)(r & 0xff);
		return (int8_t)(r & 0xff);
	case E4M3: { /* any but NaN (exponent and fraction all ones) */
		uint8_t b = (uint8_t)r;
		if ((b & 0x7f) == 0x7f)
			b ^= 1;
		((uint8_t *)p)[i] = b;
		return fp_value(b, 4, 3);
	}
	case E5M2: { /* finite, |x| <= 2^4 */
		uint8_t b = (uint8_t)((r & 0x80) | (8 + (r >> 8) % 12) << 2 | (r >> 16 & 3));
		((uint8_t *)p)[i] = b;
		return fp_value(b, 5, 2);
	}
	default:
		return 0;
	}
}

static double read_elem(const void *p, ty t, int i)
{
	switch (t) {
	case F16: return fp_value(((const uint16_t *)p)[i], 5, 10);
	case F32: return ((const float *)p)[i];
	case I32: return ((const int32_t *)p)[i];
	default: return 0;
	}
}

/* x truncated to tf32 (10 fraction bits kept), in double. */
static double tf32(double x)
{
	if (x == 0 || !isfinite(x))
		return x;
	int e;
	frexp(fabs(x), &e);
	double step = ldexp(1.0, e - 11 < -136 ? -136 : e - 11);
	return copysign(floor(fabs(x) / step) * step, x);
}

/* ---- the cases ------------------------------------------------------------------------ */

typedef struct Kind {
	const char *name; /* kernel name */
	ty a, b, acc, out;
	const char *prec; /* input_precision, or "" */
	bool bt;          /* b stored N x K, loaded along K and transposed (B's tile K-major) */
} Kind;

static const Kind kinds[] = {
	{"mm_f16", F16, F16, F32, F32, "", false},          {"mm_bf16", BF16, BF16, F32, F32, "", false},
	{"mm_f16_acc16", F16, F16, F16, F16, "", false},    {"mm_tf32", F32, F32, F32, F32, "", false},
	{"mm_tf32x3", F32, F32, F32, F32, "tf32x3", false}, {"mm_ieee", F32, F32, F32, F32, "ieee", false},
	{"mm_i8", I8, I8, I32, I32, "", false},             {"mm_e4m3", E4M3, E4M3, F32, F32, "", false},
	{"mm_e5m2", E5M2, E5M2, F32, F32, "", false},       {"mm_e4m3_e5m2", E4M3, E5M2, F32, F32, "", false},
	{"mm_e5m2_e4m3_f16", E5M2, E4M3, F32, F16, "", false},
	{"mm_f16_bt", F16, F16, F32, F32, "", true},   {"mm_tf32_bt", F32, F32, F32, F32, "", true},
	{"mm_i8_bt", I8, I8, I32, I32, "", true},      {"mm_e4m3_bt", E4M3, E4M3, F32, F32, "", true},
	{"mm_tf32x3_bt", F32, F32, F32, F32, "tf32x3", true},
};
enum { N_KINDS = sizeof kinds / sizeof kinds[0] };

static void kernel_source(char *out, size_t cap)
{
	size_t n = 0;
	for (int i = 0; i < N_KINDS && n < cap; i++) {
		const Kind *k = &kinds[i];
		char prec[48] = "";
		if (k->prec[0])
			snprintf(prec, sizeof prec, ", input_precision = \"%s\"", k->prec);
		n += (size_t)snprintf(
			out + n, cap - n,
			"kernel %s(a: *%s, b: *%s, c: *%s, M: i32, N: i32, K: i32, BM: const i32 = 32, BN: const i32 = 32,\n"
			"          BK: const i32 = 32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
			"    let rm = program_id(0) * BM + arange(0, BM);\n"
			"    let rn = program_id(1) * BN + arange(0, BN);\n"
			"    var acc = zeros((BM, BN), %s);\n"
			"    for k0 in range(0, K, BK) {\n"
			"        let rk = k0 + arange(0, BK);\n"
			"        let x = load(a + rm[:, None] * K + rk[None, :], mask = (rm[:, None] < M) & (rk[None, :] < K), other = 0);\n"
			"        let y = %s;\n"
			"        acc = dot(x, y, acc%s);\n"
			"    }\n"
			"    store(c + rm[:, None] * N + rn[None, :], acc.to(%s), mask = (rm[:, None] < M) & (rn[None, :] < N));\n"
			"}\n",
			k->name, ty_name[k->a], ty_name[k->b], ty_name[k->out], ty_name[k->acc],
			k->bt ? "trans(load(b + rn[:, None] * K + rk[None, :], mask = (rn[:, None] < N) & (rk[None, :] < K), other = 0))"
			      : "load(b + rk[:, None] * N + rn[None, :], mask = (rk[:, None] < K) & (rn[None, :] < N), other = 0)",
			prec, ty_name[k->out]);
	}
}

typedef struct Shape {
	int M, N, K, bm, bn, bk, warps;
} Shape;

static const Shape shapes[] = {
	{37, 45, 23, 32, 32, 32, 4},    /* K below BLOCK_K, nothing a multiple of the tile */
	{100, 70, 77, 64, 32, 32, 4},   /* three K steps, the last partial */
	{130, 66, 200, 64, 64, 64, 8},  /* 8 warps */
	{64, 64, 96, 64, 64, 32, 4},    /* multiples of 16: the JIT's specialized variant */
	{17, 19, 40, 16, 16, 16, 1},    /* 16 x 16 x 16 tiles on one warp (8-bit: K step under 32, FMAs) */
	{33, 40, 70, 32, 16, 64, 2},    /* BLOCK_N 16, BLOCK_K 64 */
	{200, 150, 100, 128, 128, 32, 8}, /* the bench's tile: two warpgroups along M (wgmma on sm_90a) */
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

static void run_case(blk_context *ctx, blk_module *m, const Kind *k, const Shape *s)
{
	int M = s->M, N = s->N, K = s->K;
	void *a = calloc((size_t)(M * K), (size_t)ty_bytes[k->a]), *b = calloc((size_t)(K * N), (size_t)ty_bytes[k->b]);
	void *c = calloc((size_t)(M * N), (size_t)ty_bytes[k->out]);
	double *av = malloc(sizeof(double) * (size_t)(M * K)), *bv = malloc(sizeof(double) * (size_t)(K * N));
	if (!a || !b || !c || !av || !bv) {
		expect(0, "host memory");
		return;
	}
	for (int i = 0; i < M * K; i++)
		av[i] = fill(a, k->a, i);
	for (int i = 0; i < K * N; i++) /* bv is K x N; b is N x K when bt */
		bv[k->bt ? i % K * N + i / K : i] = fill(b, k->b, i);
	blk_devptr da = 0, db = 0, dc = 0;
	int ok = blk_malloc(ctx, (size_t)(M * K * ty_bytes[k->a]), &da) == BLK_SUCCESS &&
	         blk_malloc(ctx, (size_t)(K * N * ty_bytes[k->b]), &db) == BLK_SUCCESS &&
	         blk_malloc(ctx, (size_t)(M * N * ty_bytes[k->out]), &dc) == BLK_SUCCESS &&
	         blk_copy_to_device(ctx, da, a, (size_t)(M * K * ty_bytes[k->a])) == BLK_SUCCESS &&
	         blk_copy_to_device(ctx, db, b, (size_t)(K * N * ty_bytes[k->b])) == BLK_SUCCESS;
	blk_kernel *kern = NULL;
	ok = ok && blk_kernel_get(m, k->name, &kern) == BLK_SUCCESS;
	blk_const cs[3] = {{.name = "BM", .i = s->bm}, {.name = "BN", .i = s->bn}, {.name = "BK", .i = s->bk}};
	blk_launch_options o = {.consts = cs, .n_consts = 3, .num_warps = s->warps};
	blk_arg args[6] = {blk_arg_ptr(da), blk_arg_ptr(db), blk_arg_ptr(dc), blk_arg_int(M), blk_arg_int(N), blk_arg_int(K)};
	ok = ok && blk_launch(kern, args, 6, &o) == BLK_SUCCESS &&
	     blk_copy_from_device(ctx, c, dc, (size_t)(M * N * ty_bytes[k->out])) == BLK_SUCCESS;
	int bad = 0, first = -1;
	double worst_got = 0, worst_want = 0;
	bool x3 = strcmp(k->prec, "tf32x3") == 0, ieee = strcmp(k->prec, "ieee") == 0;
	bool fp8 = k->a == E4M3 || k->a == E5M2;
	for (int i = 0; ok && i < M; i++)
		for (int j = 0; j < N; j++) {
			long double sum = 0, S = 0;
			double tol_steps = 0;
			for (int k0 = 0; k0 < K; k0 += s->bk) {
				long double step = 0;
				for (int kk = k0; kk < K && kk < k0 + s->bk; kk++) {
					double x = av[i * K + kk], y = bv[kk * N + j];
					long double p;
					if (k->a == F32 && !ieee) {
						double xb = tf32(x), yb = tf32(y);
						p = (long double)xb * yb;
						if (x3)
							p += (long double)tf32(x - xb) * yb + (long double)xb * tf32(y - yb);
					} else {
						p = (long double)x * y;
					}
					step += p;
					S += fabsl(p);
				}
				sum += step;
				if (k->acc == F16) { /* each K step's sum rounds once to f16 */
					int e;
					frexp((double)sum, &e);
					double ulp = ldexp(1.0, (e - 11) < -24 ? -24 : e - 11);
					sum = roundl(sum / ulp) * ulp;
					tol_steps += ulp;
				}
			}
			double got = read_elem(c, k->out, i * N + j), want = (double)sum;
			double tol = K * 0x1p-23 * (double)S + (fp8 ? (K + 31) / 32 * 0x1p-10 * (double)S : 0) + tol_steps;
			if (k->out == F16) {
				int e;
				frexp(want, &e);
				tol += ldexp(1.0, (e - 11) < -24 ? -24 : e - 11);
			} else if (k->out == F32) {
				tol += fabs(want) * 0x1p-23;
			}
			if (k->out == I32 ? got != (double)(int32_t)(int64_t)(sum) : !(fabs(got - want) <= tol)) {
				if (first < 0)
					first = i * N + j, worst_got = got, worst_want = want;
				bad++;
			}
		}
	char what[256];
	snprintf(what, sizeof what, "%s: (%d x %d) @ (%d x %d), tiles %d x %d x %d, %d warps: %d of %d elements off%s",
	         k->name, M, K, K, N, s->bm, s->bn, s->bk, s->warps, ok ? bad : -1, M * N, ok ? "" : " (did not run)");
	expect(ok && bad == 0, what);
	if (ok && bad)
		printf("     first at (%d, %d): %.9g, want %.9g\n", first / N, first % N, worst_got, worst_want);
	blk_free(ctx, da);
	blk_free(ctx, db);
	blk_free(ctx, dc);
	free(a);
	free(b);
	free(c);
	free(av);
	free(bv);
}

int main(void)
{
	const char *be = getenv("BLK_GPU_TEST_BACKEND");
	int interp = be && strcmp(be, "interpreter") == 0;
	blk_context *ctx = NULL;
	if (blk_context_create(interp ? BLK_BACKEND_INTERPRETER : BLK_BACKEND_GPU, 0, &ctx) != BLK_SUCCESS) {
		printf("SKIP: no GPU (%s)\n0 passed, 0 failed\n", blk_last_error());
		return 0;
	}
	static char src[20000];
	kernel_source(src, sizeof src);
	blk_module *m = NULL;
	blk_status st = blk_module_load_source(ctx, "dots_test.tile", src, strlen(src), NULL, &m);
	expect(st == BLK_SUCCESS, interp ? "the dot kernels load (interpreter)" : "the dot kernels load");
	if (st == BLK_SUCCESS)
		for (int i = 0; i < N_KINDS; i++)
			for (int j = 0; j < N_SHAPES; j++)
				run_case(ctx, m, &kinds[i], &shapes[j]);
	blk_module_destroy(m);
	blk_context_destroy(ctx);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
