/* elementwise_test: every element-wise op of tile IR on every element kind it
 * takes, on random inputs and edge values, against references in C: native C
 * arithmetic on the C type of each kind (integers wrap through C's
 * conversions), f32 and f64 in float and double, the narrow floats through
 * __float128 and the table rounding of ref.h. A kernel per case loads its
 * inputs from memory, applies the op to a block of 512 lanes, stores the
 * result; the bytes must match (any NaN matches a NaN).
 *
 * Prints "ok NAME" / "FAIL NAME: why" a case and last "N passed, N failed". */
#include "kb.h"

#include <limits.h>

enum { N = 512 };

typedef union Val {
	int64_t i;
	uint64_t u;
	double f;
} Val;

static const ScalarKind ints[] = {SK_I8, SK_I16, SK_I32, SK_I64, SK_U8, SK_U16, SK_U32, SK_U64};
static const ScalarKind floats[] = {SK_F16, SK_BF16, SK_F32, SK_F64, SK_F8E4M3, SK_F8E5M2};
#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

static int kbytes(ScalarKind k) { return k == SK_I1 ? 1 : scalar_bits(k) / 8; }
static bool is_f(ScalarKind k) { return scalar_is_float(k); }
static bool is_s(ScalarKind k) { return scalar_is_signed(k) && k != SK_I1; }

/* A value in memory, as C reads it: integers through their C type, floats
 * through float, double or the reference decoder. */
static Val mem_get(ScalarKind k, const void *p)
{
	Val v;
	switch (k) {
	case SK_I1: v.i = *(const uint8_t *)p != 0; break;
	case SK_I8: v.i = *(const int8_t *)p; break;
	case SK_U8: v.i = *(const uint8_t *)p; break;
	case SK_I16: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
	case SK_U16: { uint16_t x; memcpy(&x, p, 2); v.i = x; break; }
	case SK_I32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
	case SK_U32: { uint32_t x; memcpy(&x, p, 4); v.i = x; break; }
	case SK_I64: case SK_U64: memcpy(&v.u, p, 8); break;
	case SK_F32: { float x; memcpy(&x, p, 4); v.f = x; break; }
	case SK_F64: memcpy(&v.f, p, 8); break;
	case SK_F16: case SK_BF16: { uint16_t x; memcpy(&x, p, 2); v.f = ref_decode(ref_of(k), x); break; }
	default: v.f = ref_decode(ref_of(k), *(const uint8_t *)p); break;
	}
	return v;
}

/* Writes v (for floats: a value of kind k, or NaN) as C would. */
static void mem_put(ScalarKind k, void *p, Val v)
{
	switch (k) {
	case SK_I1: *(uint8_t *)p = v.u != 0; break;
	case SK_I8: case SK_U8: *(uint8_t *)p = (uint8_t)v.u; break;
	case SK_I16: case SK_U16: { uint16_t x = (uint16_t)v.u; memcpy(p, &x, 2); break; }
	case SK_I32: case SK_U32: { uint32_t x = (uint32_t)v.u; memcpy(p, &x, 4); break; }
	case SK_I64: case SK_U64: memcpy(p, &v.u, 8); break;
	case SK_F32: { float x = (float)v.f; memcpy(p, &x, 4); break; }
	case SK_F64: memcpy(p, &v.f, 8); break;
	default: {
		const Ref *r = ref_of(k);
		/* an exact value: no saturation (an e5m2 infinity stays one) */
		uint32_t b = v.f != v.f ? (1u << (r->nbits - 1)) - 1 : ref_encode(r, (quad)v.f, false);
		if (r->nbits == 16) {
			uint16_t x = (uint16_t)b;
			memcpy(p, &x, 2);
		} else {
			*(uint8_t *)p = (uint8_t)b;
		}
	}
	}
}

/* The value v narrowed to integer kind k by C's conversions. */
static Val wrap(ScalarKind k, uint64_t v)
{
	Val r;
	switch (k) {
	case SK_I1: r.i = v & 1; break;
	case SK_I8: r.i = (int8_t)v; break;
	case SK_U8: r.i = (uint8_t)v; break;
	case SK_I16: r.i = (int16_t)v; break;
	case SK_U16: r.i = (uint16_t)v; break;
	case SK_I32: r.i = (int32_t)v; break;
	case SK_U32: r.i = (uint32_t)v; break;
	default: r.u = v; break;
	}
	return r;
}

static int64_t kmin(ScalarKind k) { return is_s(k) ? (int64_t)(0 - (1ull << (scalar_bits(k) - 1))) : 0; }
static uint64_t kmax(ScalarKind k)
{
	int b = scalar_bits(k);
	return is_s(k) ? (1ull << (b - 1)) - 1 : b == 64 ? UINT64_MAX : (1ull << b) - 1;
}

/* A random input of kind k in memory; edge values first. */
static void fill(ScalarKind k, void *buf, int salt)
{
	char *p = buf;
	int w = kbytes(k);
	for (int i = 0; i < N; i++) {
		Val v;
		uint64_t r = rnd();
		if (k == SK_I1) {
			v.u = r & 1;
		} else if (!is_f(k)) {
			static const int64_t edge[] = {0, 1, -1, 2, -2, 7, 100};
			if (i < 7)
				v.i = edge[(i + salt) % 7];
			else if (i < 9)
				v.i = i == 7 ? kmin(k) : (int64_t)kmax(k);
			else
				v.u = r >> (r % 64);
		} else if (k == SK_F32 || k == SK_F64) {
			static const double edge[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.5, 1e-40, 3e38, 0.1};
			if (i < 10)
				v.f = edge[(i + salt) % 10];
			else if (i % 4 == 0) { /* any pattern */
				if (k == SK_F32) {
					uint32_t b = (uint32_t)r;
					float f;
					memcpy(&f, &b, 4);
					v.f = f;
				} else {
					memcpy(&v.f, &r, 8);
				}
			} else {
				v.f = (double)((int64_t)(r % 2000001) - 1000000) / 1024.0 * (i % 3 ? 1.0 : 1e-3);
			}
		} else { /* narrow floats: any pattern of the format */
			const Ref *rf = ref_of(k);
			v.f = ref_decode(rf, (uint32_t)r & ((1u << rf->nbits) - 1));
		}
		mem_put(k, p + i * w, v);
	}
}

/* ---- the kernel ------------------------------------------------------------ */

typedef struct Case {
	OpCode code;
	int64_t attr;
	ScalarKind in[3];
	int nin;
	ScalarKind out;
	bool no_ub_checks;
} Case;

/* out[i] = op(in0[i], in1[i], in2[i]) for i < N. */
static bool run_case(const Case *c, void *const *in, void *out, char *err, size_t errlen)
{
	KB b;
	kb_begin(&b, "ew");
	Value *ps[3], *po;
	for (int i = 0; i < c->nin; i++)
		ps[i] = kb_param(&b, "in", tP(c->in[i], 1));
	po = kb_param(&b, "out", tP(c->out, 1));
	Value *offs = kb_arange(&b, 0, N), *x[3] = {0};
	for (int i = 0; i < c->nin; i++)
		x[i] = kb_load(&b, kb_ptrs(&b, ps[i], offs), NULL, NULL);
	Value *r;
	if (c->code == OP_CMP) {
		r = kb_op_a(&b, OP_CMP, tB(tS(SK_I1), N), c->attr, x[0], x[1], NULL);
	} else {
		r = kb_op_a(&b, c->code, tB(tS(c->out), N), c->attr, x[0], x[1], x[2]);
	}
	kb_store(&b, kb_ptrs(&b, po, offs), r, NULL);
	kb_ret(&b);
	InterpBuffer bufs[4];
	InterpArg args[4];
	for (int i = 0; i < c->nin; i++) {
		bufs[i] = (InterpBuffer){"in", in[i], (size_t)N * kbytes(c->in[i])};
		args[i] = interp_ptr(in[i]);
	}
	bufs[c->nin] = (InterpBuffer){"out", out, (size_t)N * kbytes(c->out)};
	args[c->nin] = interp_ptr(out);
	InterpOptions o = {.grid = {1, 1, 1}, .no_ub_checks = c->no_ub_checks};
	Diag d;
	diag_init(&d);
	bool ok = interp_run(b.f, args, c->nin + 1, bufs, c->nin + 1, &o, &d);
	if (!ok)
		snprintf(err, errlen, "%s", d.out.data ? d.out.data : "failed");
	diag_free(&d);
	kb_free(&b);
	return ok;
}

typedef Val (*RefFn)(const Case *c, const Val *in);

/* Runs case c on fresh random inputs (prepare may adjust them) and compares
 * with ref. Returns false and says why on the first mismatch. */
static bool check_case(const Case *c, RefFn ref, void (*prepare)(const Case *, void *const *), char *why, size_t wl)
{
	static char bufs[4][N * 8];
	void *in[3] = {bufs[0], bufs[1], bufs[2]};
	for (int i = 0; i < c->nin; i++)
		fill(c->in[i], in[i], i * 3);
	if (prepare)
		prepare(c, in);
	memset(bufs[3], 0xAB, sizeof bufs[3]);
	if (!run_case(c, in, bufs[3], why, wl))
		return false;
	int w = kbytes(c->out);
	for (int e = 0; e < N; e++) {
		Val v[3];
		for (int i = 0; i < c->nin; i++)
			v[i] = mem_get(c->in[i], (char *)in[i] + e * kbytes(c->in[i]));
		Val want = ref(c, v);
		char exp[8];
		mem_put(c->out, exp, want);
		const char *got = bufs[3] + e * w;
		bool nan_ok = is_f(c->out) && want.f != want.f && mem_get(c->out, got).f != mem_get(c->out, got).f;
		if (memcmp(exp, got, (size_t)w) != 0 && !nan_ok) {
			char ins[200] = "", gw[100];
			for (int i = 0; i < c->nin; i++) {
				size_t l = strlen(ins);
				if (is_f(c->in[i]))
					snprintf(ins + l, sizeof ins - l, " %.17g", v[i].f);
				else
					snprintf(ins + l, sizeof ins - l, " %lld", (long long)v[i].i);
			}
			Val g = mem_get(c->out, got);
			if (is_f(c->out))
				snprintf(gw, sizeof gw, "got %.17g, want %.17g", g.f, want.f);
			else
				snprintf(gw, sizeof gw, "got %lld, want %lld", (long long)g.i, (long long)want.i);
			snprintf(why, wl, "%s -> %s, element %d, inputs%s: %s", scalar_name(c->in[0]), scalar_name(c->out), e,
			         ins, gw);
			return false;
		}
	}
	return true;
}

/* ---- references --------------------------------------------------------------- */

/* Rounds an exact (or nearly: quad) result to float kind k. */
static double rnd_to(ScalarKind k, quad x) { return ref_round(k, x); }

static double fmin_ref(double x, double y, bool prop)
{
	if (isnan(x) || isnan(y))
		return prop ? NAN : isnan(x) ? y : x;
	if (x == 0 && y == 0)
		return signbit(x) || signbit(y) ? -0.0 : 0.0;
	return x < y ? x : y;
}

static double fmax_ref(double x, double y, bool prop)
{
	if (isnan(x) || isnan(y))
		return prop ? NAN : isnan(x) ? y : x;
	if (x == 0 && y == 0)
		return signbit(x) && signbit(y) ? -0.0 : 0.0;
	return x > y ? x : y;
}

static Val ref_arith(const Case *c, const Val *in)
{
	ScalarKind k = c->out;
	Val r;
	if (is_f(k)) {
		double x = in[0].f, y = c->nin > 1 ? in[1].f : 0, z = c->nin > 2 ? in[2].f : 0;
		if (k == SK_F32) {
			float a = (float)x, b = (float)y;
			switch (c->code) {
			case OP_ADD: r.f = a + b; break;
			case OP_SUB: r.f = a - b; break;
			case OP_MUL: r.f = a * b; break;
			case OP_DIV: r.f = a / b; break;
			case OP_REM: r.f = fmodf(a, b); break;
			case OP_NEG: r.f = -a; break;
			case OP_ABS: r.f = fabsf(a); break;
			case OP_FMA: r.f = fmaf(a, b, (float)z); break;
			default: r.f = 0; break;
			}
		} else if (k == SK_F64) {
			switch (c->code) {
			case OP_ADD: r.f = x + y; break;
			case OP_SUB: r.f = x - y; break;
			case OP_MUL: r.f = x * y; break;
			case OP_DIV: r.f = x / y; break;
			case OP_REM: r.f = fmod(x, y); break;
			case OP_NEG: r.f = -x; break;
			case OP_ABS: r.f = fabs(x); break;
			case OP_FMA: r.f = fma(x, y, z); break;
			default: r.f = 0; break;
			}
		} else {
			quad a = x, b = y;
			switch (c->code) {
			case OP_ADD: r.f = rnd_to(k, a + b); break;
			case OP_SUB: r.f = rnd_to(k, a - b); break;
			case OP_MUL: r.f = rnd_to(k, a * b); break;
			case OP_DIV: r.f = rnd_to(k, a / b); break;
			case OP_REM: r.f = rnd_to(k, fmod(x, y)); break;
			case OP_NEG: r.f = -x; break;
			case OP_ABS: r.f = fabs(x); break;
			case OP_FMA: r.f = rnd_to(k, a * b + (quad)z); break;
			default: r.f = 0; break;
			}
		}
		if (c->code == OP_MIN)
			r.f = fmin_ref(x, y, c->attr);
		if (c->code == OP_MAX)
			r.f = fmax_ref(x, y, c->attr);
		return r;
	}
	uint64_t x = in[0].u, y = c->nin > 1 ? in[1].u : 0, z = c->nin > 2 ? in[2].u : 0;
	int64_t sx = in[0].i, sy = c->nin > 1 ? in[1].i : 0;
	bool s = is_s(k);
	int bits = scalar_bits(k);
	switch (c->code) {
	case OP_ADD: return wrap(k, x + y);
	case OP_SUB: return wrap(k, x - y);
	case OP_MUL: return wrap(k, x * y);
	case OP_DIV:
		if (y == 0)
			return wrap(k, UINT64_MAX);
		if (s && sy == -1)
			return wrap(k, 0 - x);
		return wrap(k, s ? (uint64_t)(sx / sy) : x / y);
	case OP_REM:
		if (y == 0)
			return wrap(k, x);
		if (s && sy == -1)
			return wrap(k, 0);
		return wrap(k, s ? (uint64_t)(sx % sy) : x % y);
	case OP_AND: return wrap(k, x & y);
	case OP_OR: return wrap(k, x | y);
	case OP_XOR: return wrap(k, x ^ y);
	case OP_SHL: return wrap(k, y >= (uint64_t)bits ? 0 : x << y);
	case OP_SHR:
		if (y >= (uint64_t)bits)
			return wrap(k, s && sx < 0 ? UINT64_MAX : 0);
		return wrap(k, s ? (uint64_t)(sx >> y) : x >> y);
	case OP_MIN: return wrap(k, s ? (uint64_t)(sx < sy ? sx : sy) : x < y ? x : y);
	case OP_MAX: return wrap(k, s ? (uint64_t)(sx > sy ? sx : sy) : x > y ? x : y);
	case OP_NEG: return wrap(k, 0 - x);
	case OP_NOT: return wrap(k, ~x);
	case OP_ABS: return wrap(k, s && sx < 0 ? 0 - x : x);
	case OP_FMA: return wrap(k, x * y + z);
	case OP_UMULHI: {
		uint64_t mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
		unsigned __int128 p = (unsigned __int128)(x & mask) * (y & mask);
		return wrap(k, (uint64_t)(p >> bits));
	}
	default: return wrap(k, 0);
	}
}

static Val ref_cmp(const Case *c, const Val *in)
{
	ScalarKind k = c->in[0];
	Val r;
	int cmp; /* -1, 0, 1, or 2 unordered */
	if (is_f(k))
		cmp = isnan(in[0].f) || isnan(in[1].f) ? 2 : in[0].f < in[1].f ? -1 : in[0].f > in[1].f;
	else if (is_s(k))
		cmp = in[0].i < in[1].i ? -1 : in[0].i > in[1].i;
	else
		cmp = in[0].u < in[1].u ? -1 : in[0].u > in[1].u;
	switch (c->attr) {
	case CMP_EQ: r.i = cmp == 0; break;
	case CMP_NE: r.i = cmp != 0; break;
	case CMP_LT: r.i = cmp == -1; break;
	case CMP_LE: r.i = cmp == -1 || cmp == 0; break;
	case CMP_GT: r.i = cmp == 1; break;
	default: r.i = cmp == 1 || cmp == 0; break;
	}
	return r;
}

static Val ref_select(const Case *c, const Val *in)
{
	(void)c;
	return in[0].u ? in[1] : in[2];
}

static Val ref_math(const Case *c, const Val *in)
{
	double x = in[0].f, y;
	switch (c->attr) {
	case MATH_EXP: y = exp(x); break;
	case MATH_EXP2: y = exp2(x); break;
	case MATH_LOG: y = log(x); break;
	case MATH_LOG2: y = log2(x); break;
	case MATH_SQRT:
	case MATH_SQRT_RN: y = sqrt(x); break;
	case MATH_RSQRT: y = 1 / sqrt(x); break;
	case MATH_SIN: y = sin(x); break;
	case MATH_COS: y = cos(x); break;
	case MATH_TANH: y = tanh(x); break;
	case MATH_ERF: y = erf(x); break;
	case MATH_FLOOR: y = floor(x); break;
	case MATH_TRUNC: y = trunc(x); break;
	case MATH_RINT: y = rint(x); break;
	case MATH_ROUND: y = round(x); break;
	default: y = ceil(x); break;
	}
	/* below f64, exp and exp2 flush an f32 result under 2^-126 to +0
	 * (the GPU's ex2.approx.ftz; language.md) before rounding to the type */
	if ((c->attr == MATH_EXP || c->attr == MATH_EXP2) && c->out != SK_F64 && fabsf((float)y) < 0x1p-126f)
		y = 0;
	Val r;
	r.f = rnd_to(c->out, y);
	return r;
}

/* Conversions, written out case by case with C's own conversions. */
static Val ref_cast(const Case *c, const Val *in)
{
	ScalarKind from = c->in[0], to = c->out;
	Val r;
	if (from == to)
		return in[0];
	if (to == SK_I1) {
		r.i = is_f(from) ? in[0].f != 0 : in[0].u != 0;
		return r;
	}
	if (!is_f(from) && !is_f(to))
		return wrap(to, in[0].u);
	if (!is_f(from)) {
		bool u = !is_s(from);
		if (to == SK_F32)
			r.f = u ? (float)in[0].u : (float)in[0].i;
		else if (to == SK_F64)
			r.f = u ? (double)in[0].u : (double)in[0].i;
		else
			r.f = rnd_to(to, u ? (quad)in[0].u : (quad)in[0].i);
		return r;
	}
	double x = in[0].f;
	if (is_f(to)) {
		r.f = to == SK_F32 ? (float)x : rnd_to(to, (quad)x);
		return r;
	}
	/* float -> int: toward zero, saturating, NaN -> 0 */
	if (isnan(x))
		return wrap(to, 0);
	quad t = (quad)trunc(x);
	if (is_s(to)) {
		if (t < (quad)kmin(to))
			return wrap(to, (uint64_t)kmin(to));
		if (t > (quad)(int64_t)kmax(to))
			return wrap(to, kmax(to));
		return wrap(to, (uint64_t)(int64_t)t);
	}
	if (t < 0)
		return wrap(to, 0);
	if (t > (quad)kmax(to))
		return wrap(to, kmax(to));
	return wrap(to, (uint64_t)t);
}

/* ---- cases --------------------------------------------------------------------- */

/* Divisors and shift counts where the ops are defined; MIN / -1 on some lanes. */
static void prep_div(const Case *c, void *const *in)
{
	ScalarKind k = c->in[0];
	int w = kbytes(k);
	for (int i = 0; i < N; i++) {
		Val y = mem_get(k, (char *)in[1] + i * w);
		if (!is_f(k) && y.u == 0 && !c->no_ub_checks) {
			y.i = 3;
			mem_put(k, (char *)in[1] + i * w, y);
		}
		if (!is_f(k) && is_s(k) && i % 17 == 0) {
			Val x = {.i = kmin(k)}, m1 = {.i = -1};
			mem_put(k, (char *)in[0] + i * w, x);
			mem_put(k, (char *)in[1] + i * w, m1);
		}
	}
}

static void prep_shift(const Case *c, void *const *in)
{
	ScalarKind k = c->in[0];
	int w = kbytes(k), bits = scalar_bits(k);
	for (int i = 0; i < N; i++) {
		Val y = mem_get(k, (char *)in[1] + i * w);
		if (!c->no_ub_checks || i % 2)
			y.u %= (uint64_t)bits;
		mem_put(k, (char *)in[1] + i * w, y);
	}
}

/* bf16 fma: moderate magnitudes keep the reference's quad sum exact. */
static void prep_fma(const Case *c, void *const *in)
{
	if (c->out != SK_BF16)
		return;
	for (int j = 0; j < 3; j++)
		for (int i = 0; i < N; i++) {
			Val v = {.f = ldexp((double)(int)(rnd() % 255) - 127, (int)(rnd() % 40) - 20)};
			mem_put(SK_BF16, (char *)in[j] + i * 2, v);
		}
}

static void test_op(const char *name, OpCode code, int64_t attr, int nin, const ScalarKind *kinds, int nk,
                    void (*prep)(const Case *, void *const *), bool no_ub)
{
	char why[512];
	for (int i = 0; i < nk; i++) {
		Case c = {code, attr, {kinds[i], kinds[i], kinds[i]}, nin, kinds[i], no_ub};
		for (int rep = 0; rep < 2; rep++)
			if (!check_case(&c, ref_arith, prep, why, sizeof why)) {
				result(false, name, "%s", why);
				return;
			}
	}
	result(true, name, " ");
}

static void test_arith(void)
{
	ScalarKind all[COUNT(ints) + COUNT(floats)];
	memcpy(all, ints, sizeof ints);
	memcpy(all + COUNT(ints), floats, sizeof floats);
	int na = COUNT(all);
	ScalarKind bits[COUNT(ints) + 1];
	memcpy(bits, ints, sizeof ints);
	bits[COUNT(ints)] = SK_I1;
	test_op("add: every int and float kind", OP_ADD, 0, 2, all, na, NULL, false);
	test_op("sub: every int and float kind", OP_SUB, 0, 2, all, na, NULL, false);
	test_op("mul: every int and float kind", OP_MUL, 0, 2, all, na, NULL, false);
	test_op("div: every int and float kind (MIN / -1 wraps)", OP_DIV, 0, 2, all, na, prep_div, false);
	test_op("div rn (div_rn): every float kind, in double, rounded once", OP_DIV, 1, 2, floats, COUNT(floats), NULL, false);
	test_op("rem: every int and float kind (MIN % -1 is 0)", OP_REM, 0, 2, all, na, prep_div, false);
	test_op("div, rem by zero with no_ub_checks: all ones, x", OP_DIV, 0, 2, ints, COUNT(ints), prep_div, true);
	test_op("rem by zero with no_ub_checks: x", OP_REM, 0, 2, ints, COUNT(ints), prep_div, true);
	test_op("min: ints; floats return the number beside a NaN, -0 < +0", OP_MIN, 0, 2, all, na, NULL, false);
	test_op("max: ints; floats return the number beside a NaN, -0 < +0", OP_MAX, 0, 2, all, na, NULL, false);
	test_op("min with propagate_nan: floats", OP_MIN, 1, 2, floats, COUNT(floats), NULL, false);
	test_op("max with propagate_nan: floats", OP_MAX, 1, 2, floats, COUNT(floats), NULL, false);
	test_op("and: every int kind and i1", OP_AND, 0, 2, bits, COUNT(bits), NULL, false);
	test_op("or: every int kind and i1", OP_OR, 0, 2, bits, COUNT(bits), NULL, false);
	test_op("xor: every int kind and i1", OP_XOR, 0, 2, bits, COUNT(bits), NULL, false);
	test_op("not: every int kind and i1", OP_NOT, 0, 1, bits, COUNT(bits), NULL, false);
	test_op("shl: every int kind", OP_SHL, 0, 2, ints, COUNT(ints), prep_shift, false);
	test_op("shr: arithmetic for signed, logical for unsigned", OP_SHR, 0, 2, ints, COUNT(ints), prep_shift, false);
	test_op("shl by >= width with no_ub_checks: 0", OP_SHL, 0, 2, ints, COUNT(ints), prep_shift, true);
	test_op("shr by >= width with no_ub_checks: sign or 0", OP_SHR, 0, 2, ints, COUNT(ints), prep_shift, true);
	test_op("neg: every int and float kind", OP_NEG, 0, 1, all, na, NULL, false);
	test_op("abs: every int and float kind (abs(MIN) wraps)", OP_ABS, 0, 1, all, na, NULL, false);
	test_op("fma: every int and float kind, one rounding", OP_FMA, 0, 3, all, na, prep_fma, false);
	ScalarKind hi[] = {SK_I32, SK_U32, SK_I64, SK_U64, SK_I8, SK_U16};
	test_op("umulhi: 32 and 64 bits (and narrower)", OP_UMULHI, 0, 2, hi, COUNT(hi), NULL, false);
}

static void test_cmp(void)
{
	ScalarKind all[COUNT(ints) + COUNT(floats) + 1];
	memcpy(all, ints, sizeof ints);
	memcpy(all + COUNT(ints), floats, sizeof floats);
	all[COUNT(all) - 1] = SK_I1;
	char why[512];
	for (int p = CMP_EQ; p <= CMP_GE; p++)
		for (int i = 0; i < COUNT(all); i++) {
			Case c = {OP_CMP, p, {all[i], all[i]}, 2, SK_I1, false};
			if (!check_case(&c, ref_cmp, NULL, why, sizeof why)) {
				result(false, "cmp: six predicates, every kind, NaN unordered", "predicate %d: %s", p, why);
				return;
			}
		}
	result(true, "cmp: six predicates, every kind, NaN unordered", " ");
}

static void test_select(void)
{
	ScalarKind all[COUNT(ints) + COUNT(floats)];
	memcpy(all, ints, sizeof ints);
	memcpy(all + COUNT(ints), floats, sizeof floats);
	char why[512];
	for (int i = 0; i < COUNT(all); i++) {
		Case c = {OP_SELECT, 0, {SK_I1, all[i], all[i]}, 3, all[i], false};
		if (!check_case(&c, ref_select, NULL, why, sizeof why)) {
			result(false, "select: every kind", "%s", why);
			return;
		}
	}
	result(true, "select: every kind", " ");
}

static void test_math(void)
{
	static const char *names[] = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf", "floor", "ceil", "sqrt_rn", "trunc", "rint", "round"};
	_Static_assert(sizeof names / sizeof names[0] == MATH_COUNT, "a name for each math function");
	char why[512];
	for (int fn = 0; fn < MATH_COUNT; fn++) {
		bool ok = true;
		for (int i = 0; ok && i < COUNT(floats); i++) {
			Case c = {OP_MATH, fn, {floats[i]}, 1, floats[i], false};
			ok = check_case(&c, ref_math, NULL, why, sizeof why);
		}
		char name[64];
		snprintf(name, sizeof name, "math %s: every float kind, in double, rounded once", names[fn]);
		result(ok, name, "%s", why);
	}
}

static void test_cast(void)
{
	ScalarKind all[COUNT(ints) + COUNT(floats) + 1];
	memcpy(all, ints, sizeof ints);
	memcpy(all + COUNT(ints), floats, sizeof floats);
	all[COUNT(all) - 1] = SK_I1;
	char why[512];
	for (int i = 0; i < COUNT(all); i++) {
		bool ok = true;
		for (int j = 0; ok && j < COUNT(all); j++) {
			Case c = {OP_CAST, 0, {all[i]}, 1, all[j], false};
			for (int rep = 0; ok && rep < 3; rep++)
				ok = check_case(&c, ref_cast, NULL, why, sizeof why);
		}
		char name[80];
		snprintf(name, sizeof name, "cast from %s to every kind", scalar_name(all[i]));
		result(ok, name, "%s", why);
	}
}

/* Bitcasts keep the bytes, NaN payloads included. */
static void test_bitcast(void)
{
	ScalarKind groups[][4] = {{SK_I8, SK_U8, SK_F8E4M3, SK_F8E5M2},
	                          {SK_I16, SK_U16, SK_F16, SK_BF16},
	                          {SK_I32, SK_U32, SK_F32, SK_F32},
	                          {SK_I64, SK_U64, SK_F64, SK_F64}};
	static unsigned char in[N * 8], mid[N * 8], out[N * 8];
	for (int g = 0; g < 4; g++)
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 4; j++) {
				ScalarKind a = groups[g][i], b = groups[g][j];
				int w = kbytes(a);
				for (int e = 0; e < N * w; e++)
					in[e] = (unsigned char)rnd();
				/* e4m3 has one NaN pattern per sign: keep to valid patterns */
				if (a == SK_F8E4M3)
					for (int e = 0; e < N; e++)
						if ((in[e] & 0x7F) == 0x7F)
							in[e] = 0x7F;
				char why[512] = "";
				Case c1 = {OP_BITCAST, 0, {a}, 1, b, false}, c2 = {OP_BITCAST, 0, {b}, 1, a, false};
				void *p1[1] = {in}, *p2[1] = {mid};
				bool ok = run_case(&c1, p1, mid, why, sizeof why) && run_case(&c2, p2, out, why, sizeof why);
				int bad = -1;
				for (int e = 0; ok && e < N * w && bad < 0; e++)
					if (in[e] != out[e])
						bad = e;
				if (!ok || bad >= 0) {
					result(false, "bitcast: every pair of one width, there and back", "%s <-> %s: %s byte %d",
					       scalar_name(a), scalar_name(b), why, bad);
					return;
				}
			}
	result(true, "bitcast: every pair of one width, there and back", " ");
}

int main(void)
{
	ref_init();
	test_arith();
	test_cmp();
	test_select();
	test_math();
	test_cast();
	test_bitcast();
	ref_free();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
