/* tests/ops: div_rn and sqrt_rn (language.md, "Element-wise"), correctly
 * rounded on every backend, on every float type they take: f16 bf16 f32 f64
 * and the 8-bit floats.
 *
 * References, bit for bit (any NaN matches any NaN: the payload and sign of a
 * NaN result are not specified):
 *   - f32: (float)((double)x / y) and sqrtf(x): a double quotient or root
 *     rounded once to f32 is the correctly rounded one (53 >= 2 * 24 + 2);
 *   - f64: x / y and sqrt(x) of the host;
 *   - f16, bf16, f8e4m3, f8e5m2: the double quotient or root rounded once to
 *     the type (round_to; the 8-bit floats saturate, as the language's
 *     conversions do).
 * Inputs: the special values first (zeros of both signs, infinities, NaN,
 * the smallest and largest subnormals, the smallest normal, the largest
 * finite value, negatives for sqrt), every pair of them for div_rn; then
 * random bit patterns (every exponent, subnormals, infinities and NaNs
 * included) and random values of moderate magnitude. */
#include "ops.h"

enum { N = 4096 };
static const dt TYPES[] = {DT_F16, DT_BF16, DT_F32, DT_F64, DT_E4M3, DT_E5M2};

/* The special values of t (k of them, at most 16). */
static int specials(dt t, double *v)
{
	arr one = arr_new(t, 4);
	set_bits(one, 0, 1);                        /* the smallest subnormal */
	set_bits(one, 1, (1ull << dt_mbits(t)) - 1); /* the largest subnormal */
	set_bits(one, 2, 1ull << dt_mbits(t));      /* the smallest normal */
	int k = 0;
	v[k++] = 0.0;
	v[k++] = -0.0;
	v[k++] = INFINITY;
	v[k++] = -INFINITY;
	v[k++] = NAN;
	v[k++] = 1.0;
	v[k++] = -1.0;
	v[k++] = 3.0;
	v[k++] = get_f(one, 0);
	v[k++] = -get_f(one, 0);
	v[k++] = get_f(one, 1);
	v[k++] = get_f(one, 2);
	v[k++] = dt_max(t);
	v[k++] = -dt_max(t);
	return k;
}

/* Random contents of a float type: the first half random bits, the rest
 * moderate values of either sign (magnitudes 2^-8 to 2^8). */
static void fill(arr a, int from)
{
	for (int64_t i = from; i < a.n; i++) {
		if (i < a.n / 2) {
			set_bits(a, i, rng_u64());
		} else {
			double v = ldexp(1.0 + rng_unit(), (int)rng_range(-8, 8));
			set_f(a, i, (rng_u64() & 1) ? -v : v);
		}
	}
}

static double div_ref(dt t, double x, double y)
{
	if (t == DT_F32)
		return (float)((double)(float)x / (float)y);
	if (t == DT_F64)
		return x / y;
	return round_to(t, x / y);
}

static double sqrt_ref(dt t, double x)
{
	if (t == DT_F32)
		return sqrtf((float)x);
	if (t == DT_F64)
		return sqrt(x);
	return round_to(t, sqrt(x));
}

static const char *BIN_SRC =
	"kernel k(x: *$T, y: *$T, out: *$T, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let a = load(x + offs, mask = m);\n"
	"    let b = load(y + offs, mask = m);\n"
	"    let r: $T = div_rn(a, b);\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static void div_case(dt t)
{
	arr x = arr_new(t, N), y = arr_new(t, N), want = arr_new(t, N);
	double sp[16];
	int k = specials(t, sp), n = 0;
	for (int i = 0; i < k; i++)
		for (int j = 0; j < k; j++, n++) {
			set_f(x, n, sp[i]);
			set_f(y, n, sp[j]);
		}
	fill(x, n);
	fill(y, n);
	for (int64_t i = 0; i < N; i++)
		set_f(want, i, div_ref(t, get_f(x, i), get_f(y, i)));
	blk_devptr dx = dev_from(x), dy = dev_from(y), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(BIN_SRC, "T", dts[t].name, NULL), "k", ARGS(P(dx), P(dy), P(dout), I(N)),
	                     NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	arr ins[2] = {x, y};
	if (ok)
		ok = check_exact(dev_read(dout, t, N), want, ins, 2);
	result(ok, "div_rn %s: correctly rounded, specials and subnormals", dts[t].name);
}

static const char *UNARY_SRC =
	"kernel k(x: *$T, out: *$T, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let r: $T = sqrt_rn(load(x + offs, mask = m));\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static void sqrt_case(dt t)
{
	arr x = arr_new(t, N), want = arr_new(t, N);
	double sp[16];
	int k = specials(t, sp);
	for (int i = 0; i < k; i++)
		set_f(x, i, sp[i]);
	fill(x, k);
	for (int64_t i = 0; i < N; i++)
		set_f(want, i, sqrt_ref(t, get_f(x, i)));
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, N);
	bool ok = run_kernel(render(UNARY_SRC, "T", dts[t].name, NULL), "k", ARGS(P(dx), P(dout), I(N)), NO_CONSTS,
	                     GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, N), want, &x, 1);
	result(ok, "sqrt_rn %s: correctly rounded, negatives NaN, -0 stays -0", dts[t].name);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	for (int t = 0; t < COUNT(TYPES); t++) {
		div_case(TYPES[t]);
		sqrt_case(TYPES[t]);
	}
	return ops_finish();
}
