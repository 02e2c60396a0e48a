/* tests/ops: the standard library, std/math.tile and std/random.tile, as
 * .tile kernels that import it, through blk.h.
 *
 *   relu softplus silu gelu gelu_tanh   element-wise on f32, f16, bf16 (and
 *       f64 but gelu, whose erf has no f64 form on the GPU yet), blocks,
 *       runtime scalars and literals (folded at compile time); random inputs
 *       over the whole useful range, log-uniform magnitudes 2^-24 .. 2^7, and
 *       0, -0, +-inf, NaN, +-20, +-30, +-90, +-100 ...
 *   logsumexp softmax   along each axis of a (32, 64) block, f32 f16 bf16;
 *       lines around 0, 1000 and -1000, wide and nearly constant ones; rows
 *       of -inf, with +inf, masked entries, NaN
 *   online_softmax_update   one step against the formulas (all four
 *       results), scores f32, f16, bf16; and iterated over four column
 *       blocks with acc = acc * alpha + dot(p, v), normalized by l: the
 *       full softmax
 *   uniform normal dropout_mask dropout   1M samples: range, mean, variance,
 *       keep rate; deterministic for the same (seed, offset); another seed
 *       another mask; kept elements scaled by 1 / (1 - p), dropped ones 0
 *   imports   `import "std/random.tile" as rnd;` and rnd.dropout beside a
 *       local dropout; std/math.tile under an alias; "std/nope.tile" is
 *       BLK_ERROR_SOURCE naming the path; an integer argument is an error.
 *
 * References are written here in long double (expl, log1pl, erfcl), from
 * the definitions, not from the .tile code.
 *
 * Tolerances, |got - want| at most:
 *   - relu, maximum of m: exact.
 *   - f16, bf16: 1 ulp of the type, at the reference computed in long double
 *     and rounded to the type (std/math.tile computes them in f32 and rounds
 *     once: the f32 result may sit on the other side of a rounding tie).
 *   - f32: 2e-6 relative, for every function here goes through exp, log,
 *     tanh or erf and the GPU's exp and log are ex2.approx and lg2.approx
 *     (2 ulp, and x * log2(e) rounded to f32), plus c 2^-22 relative where c
 *     is the function's relative condition number |x f'(x) / f(x)| at x (the
 *     f32 steps before an exponential, such as x * x in gelu or x * log2(e)
 *     in exp, round with 2^-24 relative each, and the function multiplies
 *     that by c: this allows four of them), plus 2^-126 absolute (results in
 *     the subnormal range keep fewer bits); the activations max(1, |x|)
 *     2^-126 more below f64 (exp flushes a result under 2^-126 to +0,
 *     language.md, and silu and gelu multiply that term by x). softmax and the online softmax:
 *     the same with c = |x_i - max| + sum_j p_j |x_j - max|; logsumexp: 2e-6
 *     relative + 2e-6 absolute (the sum of 64 terms and lg2.approx's 2^-22.6
 *     absolute error), the iterated online softmax: 1e-5 relative + 2 c
 *     2^-22 (four steps that each rescale).
 *   - f64: 1e-14 relative + c 2^-50; softplus 5e-8 relative (its log1p is a
 *     series made for f32, language.md says so).
 *   - dropout: bit for bit where 1 / (1 - p) is a power of two, else 2 ulp of
 *     f32 (the GPU's f32 '/', ops.h) or 1 ulp of f16 / bf16.
 *   - statistics over n samples: within 6 standard deviations. */
#include "ops.h"

#define PI_L 3.141592653589793238462643383279502884L

/* ---- references ----------------------------------------------------------------- */

static long double relu_ld(long double x) { return isnan(x) ? 0 : x > 0 ? x : 0; }

/* log(1 + exp(x)) */
static long double softplus_ld(long double x) { return x > 0 ? x + log1pl(expl(-x)) : log1pl(expl(x)); }

/* x sigmoid(x); -0 at -inf (the limit) */
static long double silu_ld(long double x)
{
	if (isinf(x))
		return x > 0 ? x : -0.0L;
	long double e = expl(-fabsl(x));
	return (x >= 0 ? x : x * e) / (1 + e);
}

/* x Phi(x) = x/2 erfc(-x / sqrt 2) */
static long double gelu_ld(long double x)
{
	if (isinf(x))
		return x > 0 ? x : -0.0L;
	return 0.5L * x * erfcl(-x / sqrtl(2.0L));
}

/* x/2 (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3) */
static long double gelu_tanh_ld(long double x)
{
	if (isinf(x))
		return x > 0 ? x : -0.0L;
	long double u = sqrtl(2.0L / PI_L) * (x + 0.044715L * x * x * x);
	long double e = expl(-2 * fabsl(u));
	return (u >= 0 ? x : x * e) / (1 + e);
}

/* |x f'(x) / f(x)| by a central difference in long double; 1 where that
 * means nothing (x = 0, f(x) = 0, not finite). */
static double cond_of(long double (*f)(long double), double x)
{
	long double fx = f(x);
	if (x == 0 || !isfinite(x) || fx == 0 || !isfinite(fx))
		return 1;
	long double h = 1e-7L * fabsl((long double)x);
	long double d = (f(x + h) - f(x - h)) / (2 * h);
	double c = (double)fabsl(x * d / fx);
	return isfinite(c) ? c : 1;
}

/* ---- comparing --------------------------------------------------------------------- */

/* got[i] against want[i] within tol[i]: NaN matches NaN, infinities must
 * be equal; a zero of either sign matches a zero. Up to 5 mismatches are
 * reported with the input element in[i] (when in.n > i). */
static bool check_tol(arr got, const double *want, const double *tol, arr in)
{
	int bad = 0;
	for (int64_t i = 0; i < got.n; i++) {
		double g = get_f(got, i), w = want[i];
		bool ok = isnan(w) || isnan(g) ? isnan(w) && isnan(g) : isinf(w) || isinf(g) ? g == w : fabs(g - w) <= tol[i];
		if (ok)
			continue;
		if (bad++ < 5) {
			why("[%lld] got %s, want %.17g (error %.3g, tolerance %.3g)", (long long)i, show(got, i), w, fabs(g - w),
			    tol[i]);
			if (in.p && i < in.n)
				why(" for x = %s", show(in, i));
			why("\n");
		}
	}
	if (bad > 5)
		why("... %d mismatches of %lld\n", bad, (long long)got.n);
	return bad == 0;
}

/* The tolerance of a result of type t whose exact value is w: 1 ulp for
 * f16 and bf16 (w already rounded to them), else rel |w| + c 2^-22 |w| +
 * 2^-126 for f32, rel |w| + c 2^-50 |w| for f64. */
static double tol_of(dt t, double w, double rel, double c)
{
	if (t == DT_F16 || t == DT_BF16)
		return ulp_of(t, w);
	if (t == DT_F32)
		return fabs(w) * (rel + c * 0x1p-22) + 0x1p-126;
	return fabs(w) * (rel + c * 0x1p-50) + 0x1p-1022;
}

/* ---- element-wise functions -------------------------------------------------------- */

typedef struct actfn {
	const char *name;
	long double (*f)(long double);
	double range;   /* random inputs uniform in [-range, range] */
	double rel64;   /* f64 relative tolerance */
} actfn;

static const actfn ACTS[] = {
	{"relu", relu_ld, 100, 0},
	{"softplus", softplus_ld, 40, 5e-8},
	{"silu", silu_ld, 110, 1e-14},
	{"gelu", gelu_ld, 20, 1e-14},
	{"gelu_tanh", gelu_tanh_ld, 15, 1e-14},
};

static const char *ACT_SRC =
	"import \"std/math.tile\";\n"
	"kernel k(x: *$T, out: *$T, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let r: $T = $FN(load(x + offs, mask = m, other = 0.0));\n"
	"    store(out + offs, r, mask = m);\n"
	"}\n";

static const double SPECIAL[] = {0.0,   -0.0, INFINITY, -INFINITY, NAN,  1.0,   -1.0,   0.5,   -0.5,  20.0,
                                 -20.0, 20.5, -20.5,    30.0,      -30.0, 88.0, -88.0,  90.0,  -90.0, 100.0,
                                 -100.0, 3.0, -3.0,     5.0,       -5.0, 10.0,  -10.0,  1e-6,  -1e-6, 0x1p-20};

enum { NACT = 4099 }; /* not a multiple of the block: the mask matters */

static void act_case(const actfn *fn, dt t)
{
	arr x = arr_new(t, NACT);
	for (int64_t i = 0; i < NACT; i++) {
		double v;
		if (i < COUNT(SPECIAL))
			v = SPECIAL[i];
		else if (i % 2)
			v = rng_uniform(-fn->range, fn->range);
		else
			v = ldexp(1 + rng_unit(), (int)rng_range(-24, 6)) * ((rng_u64() & 1) ? -1 : 1);
		set_f(x, i, v);
	}
	double *want = calloc(NACT, sizeof *want), *tol = calloc(NACT, sizeof *tol);
	bool exact = !strcmp(fn->name, "relu");
	for (int64_t i = 0; i < NACT; i++) {
		double xi = get_f(x, i);
		double w = round_to(t, (double)fn->f(xi));
		want[i] = w;
		tol[i] = exact ? 0 : tol_of(t, w, t == DT_F64 ? fn->rel64 : 2e-6, cond_of(fn->f, xi));
		if (!exact && t != DT_F64) /* an exp term under 2^-126 is +0, times at most |x| */
			tol[i] += fmax(1, fabs(xi)) * 0x1p-126;
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, NACT);
	bool ok = run_kernel(render(ACT_SRC, "T", dts[t].name, "FN", fn->name, NULL), "k",
	                     ARGS(P(dx), P(dout), I(NACT)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_tol(dev_read(dout, t, NACT), want, tol, x);
	free(want);
	free(tol);
	result(ok, "%s %s: %d values, specials and magnitudes to 2^7", fn->name, dts[t].name, NACT);
}

/* The five on a runtime scalar (a: f32) and on literals, which fold at
 * compile time. */
static const char *SCALAR_SRC = "import \"std/math.tile\";\n"
                                "kernel k(a: f32, out: *f32) {\n"
                                "    store(out + 0, relu(a));\n"
                                "    store(out + 1, softplus(a));\n"
                                "    store(out + 2, silu(a));\n"
                                "    store(out + 3, gelu(a));\n"
                                "    store(out + 4, gelu_tanh(a));\n"
                                "}\n";

static void scalar_case(void)
{
	double as[] = {-30.0, -2.5, 0.0, 0.75, 30.0, -90.0, (float)rng_uniform(-8, 8)};
	bool ok = true;
	for (int j = 0; j < COUNT(as) && ok; j++) {
		blk_devptr d = dev_zeros(DT_F32, 5);
		ok = run_kernel(SCALAR_SRC, "k", ARGS(F(as[j]), P(d)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
		if (!ok)
			break;
		arr got = dev_read(d, DT_F32, 5);
		double want[5], tol[5];
		for (int f = 0; f < 5; f++) {
			want[f] = round_to(DT_F32, (double)ACTS[f].f(as[j]));
			tol[f] = f == 0 ? 0 : tol_of(DT_F32, want[f], 2e-6, cond_of(ACTS[f].f, as[j])) +
			                          fmax(1, fabs(as[j])) * 0x1p-126; /* as in act_case */
		}
		if (!check_tol(got, want, tol, (arr){DT_F32, 0, NULL})) {
			why("  (a = %.9g; elements: relu softplus silu gelu gelu_tanh)\n", as[j]);
			ok = false;
		}
	}
	result(ok, "relu softplus silu gelu gelu_tanh of a runtime f32 scalar");
}

static const char *LITERAL_SRC = "import \"std/math.tile\";\n"
                                 "kernel k(out: *f32) {\n"
                                 "    store(out + 0, softplus(30.0));\n"
                                 "    store(out + 1, softplus(-30.0));\n"
                                 "    store(out + 2, silu(-90.0));\n"
                                 "    store(out + 3, gelu(-5.0));\n"
                                 "    store(out + 4, gelu_tanh(-3.0));\n"
                                 "    store(out + 5, relu(-2.0));\n"
                                 "    store(out + 6, softplus(0.0));\n"
                                 "    store(out + 7, gelu(1.5));\n"
                                 "}\n";

static void literal_case(void)
{
	static const struct {
		int f;
		double x;
	} lit[] = {{1, 30}, {1, -30}, {2, -90}, {3, -5}, {4, -3}, {0, -2}, {1, 0}, {3, 1.5}};
	blk_devptr d = dev_zeros(DT_F32, COUNT(lit));
	bool ok = run_kernel(LITERAL_SRC, "k", ARGS(P(d)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		double want[COUNT(lit)], tol[COUNT(lit)];
		for (int j = 0; j < COUNT(lit); j++) {
			want[j] = round_to(DT_F32, (double)ACTS[lit[j].f].f(lit[j].x));
			tol[j] = tol_of(DT_F32, want[j], 2e-6, cond_of(ACTS[lit[j].f].f, lit[j].x));
		}
		ok = check_tol(dev_read(d, DT_F32, COUNT(lit)), want, tol, (arr){DT_F32, 0, NULL});
	}
	result(ok, "softplus(30.0), softplus(-30.0), silu(-90.0), gelu(-5.0) ... of literals (folded)");
}

/* ---- logsumexp and softmax ----------------------------------------------------------- */

enum { RM = 32, RN = 64 };

static const char *LSE_SRC = "import \"std/math.tile\";\n"
                             "kernel k(x: *$T, out: *$T) {\n"
                             "    let r = arange(0, $M);\n"
                             "    let c = arange(0, $N);\n"
                             "    let v = load(x + r[:, None] * $N + c[None, :]);\n"
                             "    let s: $T = logsumexp(v, $AXIS);\n"
                             "    store(out + arange(0, $L), s);\n"
                             "}\n";

static const char *SOFTMAX_SRC = "import \"std/math.tile\";\n"
                                 "kernel k(x: *$T, out: *$T) {\n"
                                 "    let r = arange(0, $M);\n"
                                 "    let c = arange(0, $N);\n"
                                 "    let v = load(x + r[:, None] * $N + c[None, :]);\n"
                                 "    let p: $T = softmax(v, $AXIS);\n"
                                 "    store(out + r[:, None] * $N + c[None, :], p);\n"
                                 "}\n";

/* Element j of line o of an (m, n) row-major block reduced along axis. */
static int at2(int n, int axis, int o, int j) { return axis == 1 ? o * n + j : j * n + o; }

/* Lines along the reduced axis, each of a kind: around 0 (spread 4), around
 * 1000 and -1000 (spread 8), wide (spread 30), nearly constant (spread
 * 1e-3 around 7), around a random base in [-50, 50] (spread 2). */
static void fill_lines(arr x, int m, int n, int axis)
{
	int lines = axis == 1 ? m : n, len = axis == 1 ? n : m;
	for (int o = 0; o < lines; o++) {
		double base, spread;
		switch (o % 6) {
		case 0: base = 0, spread = 4; break;
		case 1: base = 1000, spread = 8; break;
		case 2: base = -1000, spread = 8; break;
		case 3: base = 0, spread = 30; break;
		case 4: base = 7, spread = 1e-3; break;
		default: base = rng_uniform(-50, 50), spread = 2; break;
		}
		for (int j = 0; j < len; j++)
			set_f(x, at2(n, axis, o, j), base + rng_uniform(-spread, spread));
	}
}


/* logsumexp of the lines: m + log(sum exp(x - m)); softmax into p (may be NULL) */
static void lse_ref(arr x, int m, int n, int axis, double *lse, double *p, double *cond)
{
	int lines = axis == 1 ? m : n, len = axis == 1 ? n : m;
	for (int o = 0; o < lines; o++) {
		long double mx = -INFINITY, s = 0, dbar = 0;
		bool nan = false;
		for (int j = 0; j < len; j++) {
			double v = get_f(x, at2(n, axis, o, j));
			nan |= isnan(v);
			if (v > mx)
				mx = v;
		}
		long double ms = isinf(mx) ? 0 : mx;
		for (int j = 0; j < len; j++)
			s += expl(get_f(x, at2(n, axis, o, j)) - ms);
		for (int j = 0; j < len && isfinite(mx); j++) {
			long double d = get_f(x, at2(n, axis, o, j)) - mx;
			if (isfinite(d))
				dbar += expl(d) / s * fabsl(d);
		}
		if (lse)
			lse[o] = nan ? NAN : (double)(ms + logl(s));
		for (int j = 0; j < len && p; j++) {
			int e = at2(n, axis, o, j);
			long double d = get_f(x, e) - mx;
			p[e] = (double)(expl(d) / s);
			cond[e] = isfinite(d) ? (double)(fabsl(d) + dbar) : 0;
		}
	}
}

static void lse_case(dt t, int axis)
{
	int lines = axis == 1 ? RM : RN;
	arr x = arr_new(t, RM * RN);
	fill_lines(x, RM, RN, axis);
	double want[RN], tol[RN];
	lse_ref(x, RM, RN, axis, want, NULL, NULL);
	for (int o = 0; o < lines; o++) {
		want[o] = round_to(t, want[o]);
		tol[o] = t == DT_F32 ? 2e-6 * fabs(want[o]) + 2e-6 : ulp_of(t, want[o]);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, lines);
	bool ok = run_kernel(render(LSE_SRC, "T", dts[t].name, "M", num(RM), "N", num(RN), "AXIS", num(axis), "L",
	                            num(lines), NULL),
	                     "k", ARGS(P(dx), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_tol(dev_read(dout, t, lines), want, tol, (arr){t, 0, NULL});
	result(ok, "logsumexp axis %d of (%d, %d) %s: lines around 0, 1000, -1000, wide, nearly constant", axis, RM, RN,
	       dts[t].name);
}

static void softmax_case(dt t, int axis)
{
	arr x = arr_new(t, RM * RN);
	fill_lines(x, RM, RN, axis);
	double *want = calloc(RM * RN, sizeof *want), *tol = calloc(RM * RN, sizeof *tol),
	       *c = calloc(RM * RN, sizeof *c);
	lse_ref(x, RM, RN, axis, NULL, want, c);
	for (int i = 0; i < RM * RN; i++) {
		want[i] = round_to(t, want[i]);
		tol[i] = tol_of(t, want[i], 2e-6, c[i]);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, RM * RN);
	bool ok = run_kernel(render(SOFTMAX_SRC, "T", dts[t].name, "M", num(RM), "N", num(RN), "AXIS", num(axis), NULL),
	                     "k", ARGS(P(dx), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_tol(dev_read(dout, t, RM * RN), want, tol, x);
	free(want);
	free(tol);
	free(c);
	result(ok, "softmax axis %d of (%d, %d) %s: lines around 0, 1000, -1000, wide, nearly constant", axis, RM, RN,
	       dts[t].name);
}

/* Rows of (8, 16) f32 with infinities and NaN: logsumexp of a row of -inf
 * is -inf, of a row with +inf +inf, -inf entries count as 0; NaN gives NaN.
 * softmax of rows with masked (-inf) entries: 0 there. */
static void special_rows(arr x)
{
	for (int i = 0; i < 8 * 16; i++)
		set_f(x, i, rng_uniform(-4, 4));
	for (int j = 0; j < 16; j++) {
		set_f(x, 0 * 16 + j, -INFINITY);             /* row 0: all -inf */
		if (j % 3 == 0)
			set_f(x, 2 * 16 + j, -INFINITY);     /* row 2: masked entries */
		if (j > 0)
			set_f(x, 3 * 16 + j, -INFINITY);     /* row 3: one finite entry */
		set_f(x, 5 * 16 + j, 5.0);                   /* row 5: all equal */
		set_f(x, 6 * 16 + j, 3e38 - j * 1e36);       /* row 6: near the largest f32 */
		set_f(x, 7 * 16 + j, -3e38 + j * 1e36);      /* row 7: near the most negative */
	}
	set_f(x, 1 * 16 + 5, INFINITY); /* row 1: one +inf */
	set_f(x, 4 * 16 + 9, NAN);      /* row 4: one NaN */
}

static void lse_special_case(void)
{
	arr x = arr_new(DT_F32, 8 * 16);
	special_rows(x);
	double want[8], tol[8];
	lse_ref(x, 8, 16, 1, want, NULL, NULL);
	for (int o = 0; o < 8; o++) {
		want[o] = round_to(DT_F32, want[o]);
		tol[o] = 2e-6 * fabs(want[o]) + 2e-6;
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_F32, 8);
	bool ok = run_kernel(render(LSE_SRC, "T", "f32", "M", "8", "N", "16", "AXIS", "1", "L", "8", NULL), "k",
	                     ARGS(P(dx), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_tol(dev_read(dout, DT_F32, 8), want, tol, (arr){DT_F32, 0, NULL});
	result(ok, "logsumexp f32: a row of -inf gives -inf, with +inf +inf, masked -inf entries, NaN, +-3e38");
}

static void softmax_masked_case(void)
{
	arr x = arr_new(DT_F32, 8 * 16);
	special_rows(x);
	for (int j = 0; j < 16; j++) { /* no all -inf, +inf or NaN rows here */
		set_f(x, 0 * 16 + j, j < 8 ? -INFINITY : rng_uniform(-4, 4));
		set_f(x, 1 * 16 + j, 1000 + rng_uniform(-4, 4));
		set_f(x, 4 * 16 + j, rng_uniform(-4, 4));
	}
	double want[128], tol[128], c[128];
	lse_ref(x, 8, 16, 1, NULL, want, c);
	for (int i = 0; i < 128; i++) {
		want[i] = round_to(DT_F32, want[i]);
		tol[i] = tol_of(DT_F32, want[i], 2e-6, c[i]);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_F32, 128);
	bool ok = run_kernel(render(SOFTMAX_SRC, "T", "f32", "M", "8", "N", "16", "AXIS", "1", NULL), "k",
	                     ARGS(P(dx), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_tol(dev_read(dout, DT_F32, 128), want, tol, x);
	result(ok, "softmax f32: masked (-inf) entries give 0, one finite entry gives 1, +-3e38");
}

/* ---- online softmax ------------------------------------------------------------------- */

enum { OM = 16, ON = 32 };

static const char *ONLINE_SRC =
	"import \"std/math.tile\";\n"
	"kernel k(m: *f32, l: *f32, s: *$T, om: *f32, ol: *f32, op: *f32, oa: *f32) {\n"
	"    let r = arange(0, 16);\n"
	"    let c = arange(0, 32);\n"
	"    let sv = load(s + r[:, None] * 32 + c[None, :]);\n"
	"    let m_new, l_new, p, alpha = online_softmax_update(load(m + r), load(l + r), sv);\n"
	"    let p32: f32 = p;\n"
	"    store(om + r, m_new);\n"
	"    store(ol + r, l_new);\n"
	"    store(op + r[:, None] * 32 + c[None, :], p32);\n"
	"    store(oa + r, alpha);\n"
	"}\n";

/* One step on rows of these kinds (r % 8): 0 the first step (m = -inf, l =
 * 0); 1 m above every score (alpha = 1); 2 m below the row's maximum; 3
 * scores around 1000; 4 every score -inf on the first step (m stays -inf,
 * l 0, p 0, alpha 0: no NaN); 5 every score -inf after a finite m (p 0,
 * alpha 1); 6 masked scores on the first step; 7 m equal to the maximum. */
static void online_step_case(dt t)
{
	arr m = arr_new(DT_F32, OM), l = arr_new(DT_F32, OM), s = arr_new(t, OM * ON);
	for (int r = 0; r < OM; r++) {
		int kind = r % 8;
		double smax = -INFINITY;
		for (int j = 0; j < ON; j++) {
			double v = kind == 3 ? 1000 + rng_uniform(-10, 10) : rng_uniform(-20, 20) * 1.4426950408889634;
			if (kind == 4 || kind == 5 || (kind == 6 && j % 4 == 1))
				v = -INFINITY;
			set_f(s, r * ON + j, v);
			v = get_f(s, r * ON + j);
			if (v > smax)
				smax = v;
		}
		double mv = kind == 0 || kind == 4 || kind == 6 ? -INFINITY
		            : kind == 1 ? smax + 3
		            : kind == 2 ? smax - rng_uniform(0.5, 10)
		            : kind == 3 ? 995
		            : kind == 5 ? 2.0
		            : smax;
		set_f(m, r, mv);
		set_f(l, r, isinf(mv) ? 0 : rng_uniform(0.5, 40));
	}
	double wm[OM], wl[OM], wa[OM], ta[OM], tl[OM], wp[OM * ON], tp[OM * ON];
	for (int r = 0; r < OM; r++) {
		long double mo = get_f(m, r), mn = mo;
		for (int j = 0; j < ON; j++)
			if (get_f(s, r * ON + j) > mn)
				mn = get_f(s, r * ON + j);
		long double ms = isinf(mn) ? 0 : mn; /* a row with no finite score yet */
		long double a = exp2l(mo - ms), sum = 0, tsum = 0;
		for (int j = 0; j < ON; j++) {
			long double d = get_f(s, r * ON + j) - ms, p = exp2l(d);
			sum += p;
			wp[r * ON + j] = (double)p;
			tp[r * ON + j] = tol_of(DT_F32, (double)p, 2e-6, isfinite(d) ? (double)fabsl(d) : 0);
			tsum += tp[r * ON + j];
		}
		wm[r] = (double)mn;
		wa[r] = (double)a;
		ta[r] = tol_of(DT_F32, wa[r], 2e-6, isfinite(mo - ms) ? (double)fabsl(mo - ms) : 0);
		wl[r] = (double)(get_f(l, r) * a + sum);
		tl[r] = (double)tsum + get_f(l, r) * ta[r] + 2e-6 * fabs(wl[r]);
	}
	blk_devptr dm = dev_from(m), dl = dev_from(l), ds = dev_from(s), om = dev_zeros(DT_F32, OM),
	           ol = dev_zeros(DT_F32, OM), op = dev_zeros(DT_F32, OM * ON), oa = dev_zeros(DT_F32, OM);
	bool ok = run_kernel(render(ONLINE_SRC, "T", dts[t].name, NULL), "k",
	                     ARGS(P(dm), P(dl), P(ds), P(om), P(ol), P(op), P(oa)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr wma = arr_new(DT_F32, OM);
		for (int r = 0; r < OM; r++)
			set_f(wma, r, wm[r]);
		why("m_new:\n");
		bool a1 = check_value(dev_read(om, DT_F32, OM), wma, &m, 1);
		why("l_new:\n");
		bool a2 = check_tol(dev_read(ol, DT_F32, OM), wl, tl, l);
		why("p:\n");
		bool a3 = check_tol(dev_read(op, DT_F32, OM * ON), wp, tp, s);
		why("alpha:\n");
		bool a4 = check_tol(dev_read(oa, DT_F32, OM), wa, ta, m);
		ok = a1 && a2 && a3 && a4;
	}
	result(ok, "online_softmax_update one step, %s scores: m_new, l_new, p, alpha (first step, -inf rows, m above "
	       "and below the maximum)", dts[t].name);
}

/* Four column blocks of 32 through online_softmax_update; acc gathers each
 * block's p into its columns (dot with a 0/1 matrix, exact in ieee f32):
 * acc / l is the softmax (base 2) of the whole row. */
static const char *ONLINE_ITER_SRC =
	"import \"std/math.tile\";\n"
	"kernel k(s: *f32, out: *f32, lout: *f32) {\n"
	"    let r = arange(0, 16);\n"
	"    let cols = arange(0, 128);\n"
	"    var m = full((16,), -inf(f32), f32);\n"
	"    var l = zeros((16,), f32);\n"
	"    var acc = zeros((16, 128), f32);\n"
	"    for j in range(0, 128, 32) {\n"
	"        let c = j + arange(0, 32);\n"
	"        let sv = load(s + r[:, None] * 128 + c[None, :]);\n"
	"        let m_new, l_new, p, alpha = online_softmax_update(m, l, sv);\n"
	"        let v = where(c[:, None] == cols[None, :], 1.0, 0.0);\n"
	"        acc = acc * alpha[:, None] + dot(p, v, input_precision = \"ieee\");\n"
	"        m = m_new;\n"
	"        l = l_new;\n"
	"    }\n"
	"    store(out + r[:, None] * 128 + cols[None, :], acc / l[:, None]);\n"
	"    store(lout + r, l);\n"
	"}\n";

static void online_iter_case(void)
{
	enum { M = 16, NT = 128 };
	arr s = arr_new(DT_F32, M * NT);
	for (int r = 0; r < M; r++)
		for (int j = 0; j < NT; j++) {
			double v;
			switch (r % 5) {
			case 0: v = j * 0.25; break;                            /* a new maximum in every block */
			case 1: v = 1000 + rng_uniform(-10, 10); break;         /* large */
			case 2: v = j < 32 ? -INFINITY : rng_uniform(-20, 20); break; /* first block masked */
			case 3: v = j % 7 == 0 ? -INFINITY : rng_uniform(-30, 30); break;
			default: v = rng_uniform(-20, 20) * 1.4426950408889634; break;
			}
			set_f(s, r * NT + j, v);
		}
	double *want = calloc(M * NT, sizeof *want), *tol = calloc(M * NT, sizeof *tol);
	for (int r = 0; r < M; r++) {
		long double mx = -INFINITY, sum = 0, dbar = 0;
		for (int j = 0; j < NT; j++)
			if (get_f(s, r * NT + j) > mx)
				mx = get_f(s, r * NT + j);
		for (int j = 0; j < NT; j++)
			sum += exp2l(get_f(s, r * NT + j) - mx);
		for (int j = 0; j < NT; j++) {
			long double d = get_f(s, r * NT + j) - mx;
			if (isfinite(d))
				dbar += exp2l(d) / sum * fabsl(d);
		}
		for (int j = 0; j < NT; j++) {
			long double d = get_f(s, r * NT + j) - mx;
			want[r * NT + j] = (double)(exp2l(d) / sum);
			double c = isfinite(d) ? (double)(fabsl(d) + dbar) : 0;
			tol[r * NT + j] = fabs(want[r * NT + j]) * (1e-5 + 2 * c * 0x1p-22) + 0x1p-126;
		}
	}
	blk_devptr ds = dev_from(s), dout = dev_zeros(DT_F32, M * NT), dl = dev_zeros(DT_F32, M);
	bool ok = run_kernel(ONLINE_ITER_SRC, "k", ARGS(P(ds), P(dout), P(dl)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_tol(dev_read(dout, DT_F32, M * NT), want, tol, s);
	free(want);
	free(tol);
	result(ok, "online_softmax_update over 4 column blocks, acc * alpha + dot(p, v), / l: the full softmax (a new "
	       "maximum in each block, ~1000, a masked first block)");
}

/* ---- random ----------------------------------------------------------------------------- */

enum { NS = 1 << 20 };

static const char *UNIFORM_SRC = "import \"std/random.tile\";\n"
                                 "kernel k(seed: i64, out: *f32, lo: f32, hi: f32, BLOCK: const i32 = 1024) {\n"
                                 "    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                                 "    let r: f32 = uniform(seed, i, $LO, $HI);\n"
                                 "    store(out + i, r);\n"
                                 "}\n";

/* mean and variance of n samples against the distribution's, within 6
 * sigma: sd_mean = sqrt(var / n), sd_var = sqrt((mu4 - var^2) / n). */
static bool moments(arr a, double mean, double var, double mu4, const char *what)
{
	long double s = 0, sq = 0;
	for (int64_t i = 0; i < a.n; i++)
		s += get_f(a, i);
	long double mu = s / a.n;
	for (int64_t i = 0; i < a.n; i++)
		sq += (get_f(a, i) - mu) * (get_f(a, i) - mu);
	double m = (double)mu, v = (double)(sq / a.n);
	double sm = sqrt(var / a.n), sv = sqrt((mu4 - var * var) / a.n);
	bool ok = true;
	if (fabs(m - mean) > 6 * sm) {
		why("%s: mean %.7g, want %.7g +- %.3g\n", what, m, mean, 6 * sm);
		ok = false;
	}
	if (fabs(v - var) > 6 * sv) {
		why("%s: variance %.7g, want %.7g +- %.3g\n", what, v, var, 6 * sv);
		ok = false;
	}
	return ok;
}

static void uniform_case(bool literal)
{
	double lo = literal ? 2.0 : (double)(float)rng_uniform(-5, 0), hi = literal ? 2.5 : (double)(float)rng_uniform(0.5, 7);
	int64_t seed = (int64_t)(rng_u64() >> 1);
	blk_devptr d = dev_zeros(DT_F32, NS);
	bool ok = run_kernel(render(UNIFORM_SRC, "LO", literal ? "2.0" : "lo", "HI", literal ? "2.5" : "hi", NULL), "k",
	                     ARGS(I(seed), P(d), F(lo), F(hi)), NO_CONSTS, GRID(NS / 1024, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr a = dev_read(d, DT_F32, NS);
		int bad = 0;
		for (int i = 0; i < NS; i++) {
			double v = get_f(a, i);
			if (!(v >= lo && v < hi) && bad++ < 5)
				why("[%d] %.9g is outside [%.9g, %.9g)\n", i, v, lo, hi);
		}
		double w = hi - lo;
		ok = moments(a, (lo + hi) / 2, w * w / 12, w * w * w * w / 80, "uniform") && bad == 0;
	}
	result(ok, "uniform(seed, offsets, %s): %d samples in [lo, hi), mean, variance", literal ? "2.0, 2.5" : "lo, hi (runtime f32)",
	       NS);
}

/* Philox4x32-10, word 0, as random_api_test.c checks it against the
 * Random123 vectors: counter (offset, 0, 0, 0), key (seed low, seed high). */
static uint32_t philox_word0(uint32_t off, uint64_t seed)
{
	uint32_t c[4] = {off, 0, 0, 0}, k[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	for (int r = 0; r < 10; r++) {
		if (r) {
			k[0] += 0x9E3779B9u;
			k[1] += 0xBB67AE85u;
		}
		uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
		uint32_t n[4] = {(uint32_t)(p1 >> 32) ^ c[1] ^ k[0], (uint32_t)p1, (uint32_t)(p0 >> 32) ^ c[3] ^ k[1],
		                 (uint32_t)p0};
		memcpy(c, n, sizeof c);
	}
	return c[0];
}

static const char *EDGE_SRC = "import \"std/random.tile\";\n"
                              "kernel k(seed: i64, offs: *i32, out: *f32, lo: f32, hi: f32) {\n"
                              "    let o = load(offs + arange(0, 4));\n"
                              "    store(out + arange(0, 4), rand(seed, o));\n"
                              "    store(out + 4 + arange(0, 4), uniform(seed, o, lo, hi));\n"
                              "    store(out + 8 + arange(0, 4), uniform(seed, o, 0.5, 1.5));\n"
                              "}\n";

/* rand's largest value is 1 - 2^-24 (the 31-bit integer rounds to 2^31 in
 * f32, times the f32 constant below 2^-31); with seed 2 the offsets
 * 16234771 and 18376921 give it (found by search with philox_word0). There
 * 1 + (2 - 1) (1 - 2^-24) and 0.5 + 1.5 (1 - 2^-24) round up to hi: uniform
 * must still stay below hi. */
static void uniform_edge_case(void)
{
	const uint64_t seed = 2;
	int32_t offs[4] = {16234771, 18376921, 0, (int32_t)rng_range(1, 1 << 30)};
	bool ok = true;
	for (int j = 0; j < 2; j++) {
		int32_t x = (int32_t)philox_word0((uint32_t)offs[j], seed);
		if (x < 0)
			x = -x - 1;
		if (x < 2147483584) {
			why("premise: offset %d gives %d, not one that rounds to 2^31\n", offs[j], x);
			ok = false;
		}
	}
	arr ao = arr_new(DT_I32, 4);
	for (int j = 0; j < 4; j++)
		set_i(ao, j, offs[j]);
	blk_devptr doffs = dev_from(ao), d = dev_zeros(DT_F32, 12);
	ok = ok && run_kernel(EDGE_SRC, "k", ARGS(I((int64_t)seed), P(doffs), P(d), F(1.0), F(2.0)), NO_CONSTS,
	                      GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr a = dev_read(d, DT_F32, 12);
		for (int j = 0; j < 4; j++) {
			double r = get_f(a, j), u = get_f(a, 4 + j), h = get_f(a, 8 + j);
			if (j < 2 && r != 1 - 0x1p-24) {
				why("premise: rand at offset %d is %.9g, not 1 - 2^-24\n", offs[j], r);
				ok = false;
			}
			if (!(u >= 1 && u < 2)) {
				why("uniform(seed 2, offset %d, 1, 2) = %.9g: not in [1, 2) (rand %.9g)\n", offs[j], u, r);
				ok = false;
			}
			if (!(h >= 0.5 && h < 1.5)) {
				why("uniform(seed 2, offset %d, 0.5, 1.5) = %.9g: not in [0.5, 1.5) (rand %.9g)\n", offs[j], h, r);
				ok = false;
			}
		}
	}
	result(ok, "uniform stays below hi where rand is 1 - 2^-24 and lo + (hi - lo) rand rounds to hi");
}

static const char *NORMAL_SRC = "import \"std/random.tile\";\n"
                                "kernel k(seed: i64, out: *f32, mean: f32, std: f32, BLOCK: const i32 = 1024) {\n"
                                "    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                                "    let r: f32 = normal(seed, i, mean, std);\n"
                                "    store(out + i, r);\n"
                                "}\n";

static void normal_case(double mean, double sd)
{
	int64_t seed = (int64_t)(rng_u64() >> 1);
	blk_devptr d = dev_zeros(DT_F32, NS);
	bool ok = run_kernel(NORMAL_SRC, "k", ARGS(I(seed), P(d), F(mean), F(sd)), NO_CONSTS, GRID(NS / 1024, 1, 1)) ==
	          BLK_SUCCESS;
	if (ok) {
		arr a = dev_read(d, DT_F32, NS);
		int bad = 0;
		for (int i = 0; i < NS; i++)
			if (!isfinite(get_f(a, i)) && bad++ < 5)
				why("[%d] %g is not finite\n", i, get_f(a, i));
		double v = sd * sd;
		ok = moments(a, mean, v, 3 * v * v, "normal") && bad == 0;
	}
	result(ok, "normal(seed, offsets, %g, %g): %d samples, mean and variance", mean, sd, NS);
}

static const char *MASK_SRC = "import \"std/random.tile\";\n"
                              "kernel k(seed: i64, out: *i32, p: f32, base: i32, BLOCK: const i32 = 1024) {\n"
                              "    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                              "    store(out + i, dropout_mask(seed, base + i, p).to(i32));\n"
                              "}\n";

static arr mask_of(int64_t seed, double p, int base)
{
	blk_devptr d = dev_zeros(DT_I32, NS);
	if (run_kernel(MASK_SRC, "k", ARGS(I(seed), P(d), F(p), I(base)), NO_CONSTS, GRID(NS / 1024, 1, 1)) != BLK_SUCCESS)
		return (arr){DT_I32, 0, NULL};
	return dev_read(d, DT_I32, NS);
}

static void keep_rate_case(double p)
{
	int64_t seed = (int64_t)(rng_u64() >> 1);
	arr a = mask_of(seed, p, 0);
	bool ok = a.n == NS;
	if (ok) {
		long kept = 0;
		for (int i = 0; i < NS; i++)
			kept += get_i(a, i);
		double rate = (double)kept / NS, sd = sqrt(p * (1 - p) / NS);
		if (fabs(rate - (1 - p)) > 6 * sd + 1e-12) {
			why("kept %.6f, want %.6f +- %.6f\n", rate, 1 - p, 6 * sd);
			ok = false;
		}
	}
	result(ok, "dropout_mask p = %g: keep rate of %d elements within 6 sigma of %g", p, NS, 1 - p);
}

/* The same (seed, offsets) in another launch and another order give the
 * same mask; it is rand(seed, offsets) >= p; another seed gives another
 * mask (differing in about 2 p (1 - p) of the elements). */
static const char *MASK_ORDER_SRC = "import \"std/random.tile\";\n"
                                    "kernel k(seed: i64, out: *i32, p: f32, base: i32) {\n"
                                    "    let i = arange(0, 1024);\n"
                                    "    let a = dropout_mask(seed, base + (1023 - i), p);\n"
                                    "    store(out + (1023 - i), a.to(i32));\n"
                                    "    store(out + 1024 + i, (rand(seed, base + i) >= p).to(i32));\n"
                                    "}\n";

static void mask_determinism_cases(void)
{
	int64_t seed = (int64_t)(rng_u64() >> 1);
	double p = 0.3;
	arr a = mask_of(seed, p, 0);
	bool ok = a.n == NS;
	if (ok)
		a = arr_keep(a);
	arr b = ok ? mask_of(seed, p, 0) : a;
	ok = ok && b.n == NS;
	int base = (int)rng_range(0, NS - 1024);
	blk_devptr d = dev_zeros(DT_I32, 2048);
	ok = ok && run_kernel(MASK_ORDER_SRC, "k", ARGS(I(seed), P(d), F(p), I(base)), NO_CONSTS, GRID(1, 1, 1)) ==
	                   BLK_SUCCESS;
	if (ok) {
		arr c = dev_read(d, DT_I32, 2048);
		int bad = 0;
		for (int i = 0; i < NS; i++)
			if (get_i(a, i) != get_i(b, i) && bad++ < 5)
				why("[%d] %lld in the first launch, %lld in the second\n", i, (long long)get_i(a, i),
				    (long long)get_i(b, i));
		for (int i = 0; i < 1024; i++) {
			if (get_i(c, i) != get_i(a, base + i) && bad++ < 5)
				why("offset %d in reverse order: %lld, first launch %lld\n", base + i, (long long)get_i(c, i),
				    (long long)get_i(a, base + i));
			if (get_i(c, 1024 + i) != get_i(a, base + i) && bad++ < 5)
				why("offset %d: rand >= p is %lld, dropout_mask %lld\n", base + i, (long long)get_i(c, 1024 + i),
				    (long long)get_i(a, base + i));
		}
		ok = bad == 0;
	}
	result(ok, "dropout_mask: the same seed and offsets give the same mask (another launch, another order), rand >= p");

	arr o = a.n == NS ? mask_of(seed ^ 0x9E3779B97F4A7C15ll, p, 0) : a;
	bool ok2 = a.n == NS && o.n == NS;
	if (ok2) {
		long diff = 0;
		for (int i = 0; i < NS; i++)
			diff += get_i(a, i) != get_i(o, i);
		double want = 2 * p * (1 - p), rate = (double)diff / NS, sd = sqrt(want * (1 - want) / NS);
		if (fabs(rate - want) > 6 * sd) {
			why("%ld of %d differ (%.5f), want %.5f +- %.5f for independent masks\n", diff, NS, rate, want, 6 * sd);
			ok2 = false;
		}
	}
	result(ok2, "dropout_mask: another seed gives another mask (about 2 p (1 - p) of the elements differ)");
	if (a.n == NS)
		arr_release(a);
}

static void mask_edges_case(void)
{
	int64_t seed = (int64_t)(rng_u64() >> 1);
	arr a0 = mask_of(seed, 0.0, 0);
	bool ok = a0.n == NS;
	arr a1 = ok ? mask_of(seed, 1.0, 0) : a0;
	ok = ok && a1.n == NS;
	if (ok) {
		long k0 = 0, k1 = 0;
		for (int i = 0; i < NS; i++) {
			k0 += get_i(a0, i);
			k1 += get_i(a1, i);
		}
		if (k0 != NS)
			why("p = 0 kept %ld of %d\n", k0, NS);
		if (k1 != 0)
			why("p = 1 kept %ld of %d\n", k1, NS);
		ok = k0 == NS && k1 == 0;
	}
	result(ok, "dropout_mask: p = 0 keeps every element, p = 1 none");
}

static const char *DROPOUT_SRC =
	"import \"std/random.tile\";\n"
	"kernel k(seed: i64, x: *$T, out: *$T, p: f32, n: i32, BLOCK: const i32 = 1024) grid(cdiv(n, BLOCK)) {\n"
	"    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = i < n;\n"
	"    let y: $T = dropout(load(x + i, mask = m, other = 0.0), seed, i, p);\n"
	"    store(out + i, y, mask = m);\n"
	"}\n";

static void dropout_case(dt t, double p)
{
	enum { ND = 65536 + 123 };
	int64_t seed = (int64_t)(rng_u64() >> 1);
	arr x = arr_new(t, ND);
	fill_random(x, 100);
	arr mask = mask_of(seed, p, 0);
	bool ok = mask.n == NS;
	if (ok)
		mask = arr_keep(mask);
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, ND);
	ok = ok && run_kernel(render(DROPOUT_SRC, "T", dts[t].name, NULL), "k", ARGS(I(seed), P(dx), P(dout), F(p), I(ND)),
	                      NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	/* 1 - p in f32, as the kernel has it (p is an f32 argument) */
	double q = round_to(DT_F32, 1.0 - round_to(DT_F32, p));
	bool pow2 = frexp(q, &(int){0}) == 0.5;
	if (ok) {
		arr got = dev_read(dout, t, ND);
		double *want = calloc(ND, sizeof *want), *tol = calloc(ND, sizeof *tol);
		long kept = 0;
		for (int i = 0; i < ND; i++) {
			bool keep = get_i(mask, i) != 0;
			kept += keep;
			want[i] = keep ? round_to(t, round_to(DT_F32, get_f(x, i) / q)) : 0.0;
			tol[i] = !keep || pow2 ? 0 : t == DT_F32 ? 2 * ulp_of(t, want[i]) : ulp_of(t, want[i]);
		}
		ok = check_tol(got, want, tol, x);
		/* dropped elements are 0 exactly, kept ones never 0 (x != 0 here) */
		int bad = 0;
		for (int i = 0; i < ND; i++)
			if (get_f(x, i) != 0 && (get_f(got, i) == 0) != (get_i(mask, i) == 0) && bad++ < 5)
				why("[%d] got %s for mask %lld\n", i, show(got, i), (long long)get_i(mask, i));
		double rate = (double)kept / ND, sd = sqrt(p * (1 - p) / ND);
		if (fabs(rate - (1 - p)) > 6 * sd) {
			why("kept %.5f, want %.5f +- %.5f\n", rate, 1 - p, 6 * sd);
			bad++;
		}
		ok = ok && bad == 0;
		free(want);
		free(tol);
	}
	if (mask.n == NS)
		arr_release(mask);
	result(ok, "dropout %s p = %g: kept elements x / (1 - p)%s, dropped 0, the mask of dropout_mask", dts[t].name, p,
	       pow2 ? " bit for bit" : "");
}

/* ---- imports ------------------------------------------------------------------------------ */

static const char *ALIAS_SRC = "import \"std/random.tile\" as rnd;\n"
                               "fn dropout(x, seed, offsets, p) { return x; }\n"
                               "kernel k(seed: i64, x: *f32, out: *f32, out2: *f32, p: f32, BLOCK: const i32 = 1024) {\n"
                               "    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                               "    let v = load(x + i);\n"
                               "    store(out + i, rnd.dropout(v, seed, i, p));\n"
                               "    store(out2 + i, dropout(v, seed, i, p));\n"
                               "}\n";

static void alias_random_case(void)
{
	enum { NA = 8192 };
	int64_t seed = (int64_t)(rng_u64() >> 1);
	double p = 0.25;
	arr x = arr_new(DT_F32, NA);
	fill_random(x, 10);
	blk_devptr dx = dev_from(x), d1 = dev_zeros(DT_F32, NA), d2 = dev_zeros(DT_F32, NA), d3 = dev_zeros(DT_F32, NA);
	bool ok = run_kernel(ALIAS_SRC, "k", ARGS(I(seed), P(dx), P(d1), P(d2), F(p)), NO_CONSTS, GRID(NA / 1024, 1, 1)) ==
	          BLK_SUCCESS;
	ok = ok && run_kernel(render(DROPOUT_SRC, "T", "f32", NULL), "k", ARGS(I(seed), P(dx), P(d3), F(p), I(NA)),
	                      NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok) {
		why("rnd.dropout against dropout of an unaliased import:\n");
		bool a = check_exact(dev_read(d1, DT_F32, NA), dev_read(d3, DT_F32, NA), &x, 1);
		why("the local dropout (the identity):\n");
		bool b = check_exact(dev_read(d2, DT_F32, NA), x, &x, 1);
		ok = a && b;
	}
	result(ok, "import \"std/random.tile\" as rnd: rnd.dropout is the library's, a local dropout stays separate");
}

static const char *MATH_ALIAS_SRC = "import \"std/math.tile\" as mt;\n"
                                    "kernel k(x: *f32, out: *f32) {\n"
                                    "    let r = arange(0, 16);\n"
                                    "    let c = arange(0, 32);\n"
                                    "    let v = load(x + r[:, None] * 32 + c[None, :]);\n"
                                    "    store(out + r[:, None] * 32 + c[None, :], mt.softmax(mt.gelu(v), 1));\n"
                                    "    store(out + 512 + r, mt.logsumexp(mt.silu(v), 1));\n"
                                    "}\n";

static const char *MATH_PLAIN_SRC = "import \"std/math.tile\";\n"
                                    "kernel k(x: *f32, out: *f32) {\n"
                                    "    let r = arange(0, 16);\n"
                                    "    let c = arange(0, 32);\n"
                                    "    let v = load(x + r[:, None] * 32 + c[None, :]);\n"
                                    "    store(out + r[:, None] * 32 + c[None, :], softmax(gelu(v), 1));\n"
                                    "    store(out + 512 + r, logsumexp(silu(v), 1));\n"
                                    "}\n";

static void alias_math_case(void)
{
	arr x = arr_new(DT_F32, 512);
	fill_random(x, 6);
	blk_devptr dx = dev_from(x), d1 = dev_zeros(DT_F32, 528), d2 = dev_zeros(DT_F32, 528);
	bool ok = run_kernel(MATH_ALIAS_SRC, "k", ARGS(P(dx), P(d1)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS &&
	          run_kernel(MATH_PLAIN_SRC, "k", ARGS(P(dx), P(d2)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(d1, DT_F32, 528), dev_read(d2, DT_F32, 528), NULL, 0);
	result(ok, "import \"std/math.tile\" as mt: mt.softmax(mt.gelu(v), 1), mt.logsumexp(mt.silu(v), 1) as unaliased");
}

/* A source that must not compile: loading it, getting its kernel or
 * launching it (type errors show when the kernel is compiled, at the
 * launch) fails with BLK_ERROR_SOURCE, `needle` in the message. */
static void bad_source_case(const char *src, const char *needle, const char *name)
{
	blk_module *m = NULL;
	blk_kernel *k = NULL;
	blk_devptr d = dev_zeros(DT_F32, 16);
	blk_status st = blk_module_load_source(ops_ctx, "ops.tile", src, strlen(src), NULL, &m);
	if (st == BLK_SUCCESS)
		st = blk_kernel_get(m, NULL, &k);
	if (st == BLK_SUCCESS) {
		blk_launch_options o = {.grid = {1, 1, 1}};
		st = blk_launch(k, ARGS(P(d), P(d)), &o);
	}
	const char *msg = st == BLK_SUCCESS ? "" : blk_last_error();
	bool ok = st == BLK_ERROR_SOURCE && strstr(msg, needle) != NULL;
	if (!ok)
		why("status %d (want %d, BLK_ERROR_SOURCE), message:\n%s\nwant it to name \"%s\"\n", (int)st,
		    (int)BLK_ERROR_SOURCE, msg, needle);
	blk_module_destroy(m);
	result(ok, "%s", name);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	static const dt TYPES[] = {DT_F32, DT_F16, DT_BF16, DT_F64};
	for (int f = 0; f < COUNT(ACTS); f++)
		for (int t = 0; t < COUNT(TYPES); t++)
			if (!(TYPES[t] == DT_F64 && !strcmp(ACTS[f].name, "gelu")))
				act_case(&ACTS[f], TYPES[t]);
	scalar_case();
	literal_case();
	for (int t = 0; t < 3; t++)
		for (int axis = 0; axis < 2; axis++) {
			lse_case(TYPES[t], axis);
			softmax_case(TYPES[t], axis);
		}
	lse_special_case();
	softmax_masked_case();
	online_step_case(DT_F32);
	online_step_case(DT_F16);
	online_step_case(DT_BF16);
	online_iter_case();
	uniform_case(false);
	uniform_case(true);
	uniform_edge_case();
	normal_case(0.0, 1.0);
	normal_case(3.5, 0.25);
	normal_case(-100.0, 7.0);
	keep_rate_case(0.1);
	keep_rate_case(0.5);
	keep_rate_case(0.9);
	mask_edges_case();
	mask_determinism_cases();
	dropout_case(DT_F32, 0.5);
	dropout_case(DT_F32, 0.75);
	dropout_case(DT_F32, 0.3);
	dropout_case(DT_F16, 0.5);
	dropout_case(DT_BF16, 0.3);
	alias_random_case();
	alias_math_case();
	bad_source_case("import \"std/nope.tile\";\nkernel k(x: *f32, y: *f32) { store(x, 1.0); }\n", "std/nope.tile",
	                "import \"std/nope.tile\": BLK_ERROR_SOURCE naming the path");
	bad_source_case("import \"std/math.tile\";\n"
	                "kernel k(x: *i32, out: *f32) { store(out + arange(0, 4), gelu(load(x + arange(0, 4)))); }\n",
	                "i32", "gelu of an i32 block: BLK_ERROR_SOURCE (convert with .to(f32))");
	return ops_finish();
}
