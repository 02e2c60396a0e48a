/* axis_test: the axis analysis (gpu/axis.c) through %, /, minimum,
 * maximum, where, shifts and integer casts.
 *
 * Each case is a 1-D block of 128 whose elements this file computes itself,
 * for several values of the program id and of the arguments (n a multiple
 * of 16, k anything). Every case checks that the claims hold of those
 * values (runs of `contig` consecutive values whose first is a multiple of
 * `div`, runs of `constancy` equal values, aligned at multiples of their
 * length), then the exact facts expected, so that a rule that claims too
 * much fails the first check and one that loses a fact fails the second. */
#include "irtest.h"

static Type i32, i64, u32, i8, i1;
static AxisInfo *AX;

enum { N = 128 };

static Value *arange(int lo, int hi)
{
	Op *op = emit(OP_ARANGE, NULL, 0, (Type[]){B1(i32, hi - lo)}, 1);
	op->attr[0] = lo, op->attr[1] = hi;
	return op->results[0];
}

static Value *splat(Value *s) { return op1(OP_SPLAT, s, B1(s->type, N)); }
static Value *bin(OpCode c, Value *a, Value *b) { return op2(c, a, b, a->type); }
static Value *cb(int64_t v) { return ci(B1(i32, N), v); }

/* The cases: what element i holds when the program id is pid and the
 * arguments n and k. */
typedef enum Case {
	G, REM_N, REM_48, REM_3, REM_K, REM_NEG, REM_SPLAT, DIV_N, DIV_48, DIV_M4, DIV_K, MIN_RUNS, MIN_CLAMP,
	MAX_ZERO, MAX_RUNS, SEL_RUNS, SEL_MASK, SEL_TRUE, CAST_I64, CAST_I8, CAST_I8_N, CAST_NEG_U32, CAST_I1,
	SHL_2, SHL_N, N_CASES
} Case;

static int64_t value(Case c, int64_t i, int64_t pid, int64_t n, int64_t k)
{
	int64_t g = pid * N + i;
	switch (c) {
	case G: return g;
	case REM_N: return g % n;
	case REM_48: return g % 48;
	case REM_3: return g % 3;
	case REM_K: return g % k;
	case REM_NEG: return (i - 64) % 16;
	case REM_SPLAT: return n % 8;
	case DIV_N: return g / n;
	case DIV_48: return g / 48;
	case DIV_M4: return g / -4;
	case DIV_K: return g / k;
	case MIN_RUNS: return g < g + n ? g : g + n;
	case MIN_CLAMP: return g < n - 1 ? g : n - 1;
	case MAX_ZERO: return g - 64 > 0 ? g - 64 : 0;
	case MAX_RUNS: return g > i + n ? g : i + n;
	case SEL_RUNS: return k < 4 ? g : g + n;
	case SEL_MASK: return g < n ? g : 0;
	case SEL_TRUE: return g;
	case CAST_I64: return g;
	case CAST_I8: return (int8_t)(uint8_t)(g & 0xff);
	case CAST_I8_N: return (int8_t)(uint8_t)((i + n) & 0xff);
	case CAST_NEG_U32: return (uint32_t)(int32_t)(i - 64);
	case CAST_I1: return g != 0;
	case SHL_2: return g << 2;
	case SHL_N: return n << 3;
	default: return 0;
	}
}

static const char *describe(Case c)
{
	static const char *names[N_CASES] = {
		[G] = "pid * 128 + arange",
		[REM_N] = "g % n (n a multiple of 16)",
		[REM_48] = "g % 48",
		[REM_3] = "g % 3",
		[REM_K] = "g % k (k unknown)",
		[REM_NEG] = "(arange - 64) % 16 (dividend of either sign)",
		[REM_SPLAT] = "splat(n) % 8",
		[DIV_N] = "g / n",
		[DIV_48] = "g / 48",
		[DIV_M4] = "g / -4",
		[DIV_K] = "g / k",
		[MIN_RUNS] = "minimum(g, g + n)",
		[MIN_CLAMP] = "minimum(g, n - 1)",
		[MAX_ZERO] = "maximum(g - 64, 0)",
		[MAX_RUNS] = "maximum(g, arange + n)",
		[SEL_RUNS] = "where(k < 4, g, g + n)",
		[SEL_MASK] = "where(g < n, g, 0)",
		[SEL_TRUE] = "where(true, g, k)",
		[CAST_I64] = "g to i64",
		[CAST_I8] = "g to i8",
		[CAST_I8_N] = "(arange + n) to i8",
		[CAST_NEG_U32] = "(arange - 64) to u32",
		[CAST_I1] = "g to i1",
		[SHL_2] = "g << 2",
		[SHL_N] = "splat(n) << 3",
	};
	return names[c];
}

/* The claims of a along dimension 0 hold of vals[0..N). */
static bool holds(AxisInfo a, const int64_t *vals, char *why, size_t len)
{
	int64_t c = a.contig[0], k = a.constancy[0], d = a.div[0];
	for (int i = 0; i < N; i++) {
		if (i % c ? vals[i] != vals[i - 1] + 1 : vals[i] % d != 0) {
			snprintf(why, len, "element %d = %lld against contig %lld div %lld", i, (long long)vals[i],
			         (long long)c, (long long)d);
			return false;
		}
		if (i % k && vals[i] != vals[i - 1]) {
			snprintf(why, len, "element %d = %lld against constancy %lld", i, (long long)vals[i], (long long)k);
			return false;
		}
	}
	return true;
}

static void sound(Case c, const Value *v)
{
	static const int64_t pids[] = {0, 1, 3, 7, 100};
	static const int64_t ns[] = {16, 48, 80, 112, 160, 1024, 4096};
	static const int64_t ks[] = {1, 3, 5, 17, 100};
	char why[200] = "";
	bool ok = true;
	for (int p = 0; ok && p < 5; p++)
		for (int j = 0; ok && j < 7; j++)
			for (int l = 0; ok && l < 5; l++) {
				int64_t vals[N];
				for (int i = 0; i < N; i++)
					vals[i] = value(c, i, pids[p], ns[j], ks[l]);
				if (!holds(AX[v->id], vals, why, sizeof why))
					ok = false;
			}
	char name[160];
	snprintf(name, sizeof name, "axis: %s: every claim holds", describe(c));
	if (!check(ok, name))
		printf("  %s\n", why);
}

/* The facts expected (div 0: not checked). */
static void expect(Case c, const Value *v, int64_t contig, int64_t div, int64_t constancy, const char *why)
{
	AxisInfo a = AX[v->id];
	char name[300];
	snprintf(name, sizeof name, "axis: %s: %s", describe(c), why);
	if (!check(a.contig[0] == contig && (div == 0 || a.div[0] == div) && a.constancy[0] == constancy, name))
		printf("  got contig %lld div %lld constancy %lld\n", (long long)a.contig[0], (long long)a.div[0],
		       (long long)a.constancy[0]);
}

static void arith(void)
{
	begin("axis");
	Value *n = param("n", i32), *k = param("k", i32);
	F->params[0].divisibility = 16;
	Value *v[N_CASES];
	Value *pid = op0(OP_PROGRAM_ID, i32);
	Value *r = arange(0, N);
	Value *g = bin(OP_ADD, splat(op2(OP_MUL, pid, ci(i32, N), i32)), r);
	Value *sn = splat(n), *sk = splat(k);
	v[G] = g;
	v[REM_N] = bin(OP_REM, g, sn);
	v[REM_48] = bin(OP_REM, g, cb(48));
	v[REM_3] = bin(OP_REM, g, cb(3));
	v[REM_K] = bin(OP_REM, g, sk);
	v[REM_NEG] = bin(OP_REM, bin(OP_SUB, r, cb(64)), cb(16));
	v[REM_SPLAT] = bin(OP_REM, sn, cb(8));
	v[DIV_N] = bin(OP_DIV, g, sn);
	v[DIV_48] = bin(OP_DIV, g, cb(48));
	v[DIV_M4] = bin(OP_DIV, g, cb(-4));
	v[DIV_K] = bin(OP_DIV, g, sk);
	v[MIN_RUNS] = bin(OP_MIN, g, bin(OP_ADD, g, sn));
	v[MIN_CLAMP] = bin(OP_MIN, g, splat(op2(OP_SUB, n, ci(i32, 1), i32)));
	v[MAX_ZERO] = bin(OP_MAX, bin(OP_SUB, g, cb(64)), cb(0));
	v[MAX_RUNS] = bin(OP_MAX, g, bin(OP_ADD, r, sn));
	Value *klt = cmp(CMP_LT, sk, cb(4));
	v[SEL_RUNS] = op3(OP_SELECT, klt, g, bin(OP_ADD, g, sn), g->type);
	v[SEL_MASK] = op3(OP_SELECT, cmp(CMP_LT, g, sn), g, cb(0), g->type);
	v[SEL_TRUE] = op3(OP_SELECT, ci(B1(i1, N), 1), g, sk, g->type);
	v[CAST_I64] = op1(OP_CAST, g, B1(i64, N));
	v[CAST_I8] = op1(OP_CAST, g, B1(i8, N));
	v[CAST_I8_N] = op1(OP_CAST, bin(OP_ADD, r, sn), B1(i8, N));
	v[CAST_NEG_U32] = op1(OP_CAST, bin(OP_SUB, r, cb(64)), B1(u32, N));
	v[CAST_I1] = op1(OP_CAST, g, B1(i1, N));
	v[SHL_2] = bin(OP_SHL, g, cb(2));
	v[SHL_N] = bin(OP_SHL, sn, cb(3));
	ret();
	check_text(verify_msg(F, "test"), "", "axis: the arithmetic test kernel is valid");
	free(AX);
	AX = axis_analyze(F);
	for (int c = 0; c < N_CASES; c++)
		sound((Case)c, v[c]);
	check(AX[g->id].nonneg, "axis: pid * 128 + arange is known non-negative");
	expect(G, g, N, N, 1, "a run of 128 from a multiple of 128");
	expect(REM_N, v[REM_N], 16, 16, 1, "runs of 16 from multiples of 16");
	expect(REM_48, v[REM_48], 16, 16, 1, "48 = 3 * 16: runs of 16");
	expect(REM_3, v[REM_3], 1, 1, 1, "no run");
	expect(REM_K, v[REM_K], 1, 1, 1, "no run");
	expect(REM_NEG, v[REM_NEG], 1, 1, 1, "truncation bends at 0: no run");
	expect(REM_SPLAT, v[REM_SPLAT], 1, 8, N, "a constant multiple of 8");
	expect(DIV_N, v[DIV_N], 1, 1, 16, "constant over aligned runs of 16");
	expect(DIV_48, v[DIV_48], 1, 1, 16, "constant over aligned runs of 16");
	expect(DIV_M4, v[DIV_M4], 1, 1, 4, "-(g / 4) is constant in fours");
	expect(DIV_K, v[DIV_K], 1, 1, 1, "nothing known");
	expect(MIN_RUNS, v[MIN_RUNS], N, 16, 1, "a run from g or from g + n");
	expect(MIN_CLAMP, v[MIN_CLAMP], 1, 1, 1, "runs, then holds: no run");
	expect(MAX_ZERO, v[MAX_ZERO], 1, 1, 1, "holds at 0, then runs: no run");
	check(AX[v[MAX_ZERO]->id].nonneg && !AX[v[MIN_CLAMP]->id].nonneg,
	      "axis: maximum(x, 0) is non-negative, minimum(g, n - 1) not known to be");
	expect(MAX_RUNS, v[MAX_RUNS], N, 16, 1, "a run from g or arange + n");
	expect(SEL_RUNS, v[SEL_RUNS], N, 16, 1, "one condition for the block: a run");
	expect(SEL_MASK, v[SEL_MASK], 1, 1, 1, "a run against a constant: no run");
	expect(SEL_TRUE, v[SEL_TRUE], N, N, 1, "a constant condition picks g");
	expect(CAST_I64, v[CAST_I64], N, N, 1, "widening keeps all");
	expect(CAST_I8, v[CAST_I8], N, N, 1, "wraps only at multiples of 128: runs of 128 from multiples of 128");
	expect(CAST_I8_N, v[CAST_I8_N], 16, 16, 1, "wraps at multiples of 128: runs of 16 from multiples of 16");
	expect(CAST_NEG_U32, v[CAST_NEG_U32], 64, 64, 1, "wraps at 0: runs of 64");
	expect(CAST_I1, v[CAST_I1], 1, 1, 1, "x != 0: nothing but constancy");
	expect(SHL_2, v[SHL_2], 1, 4, 1, "multiples of 4");
	expect(SHL_N, v[SHL_N], 1, 128, N, "a constant multiple of 128");
}

int main(void)
{
	i32 = T(SK_I32), i64 = T(SK_I64), u32 = T(SK_U32), i8 = T(SK_I8), i1 = T(SK_I1);
	arith();
	free(AX);
	return done();
}
