/* canonicalize against the interpreter: random element-wise ops and casts on
 * constants of every kind, run before and after folding. Whatever folds must
 * store the very bits the interpreter computes at run time; whatever the
 * interpreter rejects (division by zero, shifts out of range) must not fold. */
#include "irtest.h"

#include <math.h>

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int64_t rand_int(ScalarKind k)
{
	int w = scalar_bits(k);
	uint64_t pick[] = {0, 1, 2, 3, 7, (uint64_t)-1, (uint64_t)-2, (uint64_t)-7, (uint64_t)w, (uint64_t)(w - 1),
	                   UINT64_C(1) << (w - 1), (UINT64_C(1) << (w - 1)) - 1, rnd(), rnd() & 0xFF};
	return ir_int_normalize(k, pick[rnd() % (sizeof pick / sizeof *pick)]);
}

static double rand_float(ScalarKind k)
{
	double pick[] = {0, -0.0, 1, -1, 0.5, 2, 3, -2.5, 1e-8, 65504, 65520, 448, 3.0e9, -3.0e9, 1e30, INFINITY,
	                 -INFINITY, NAN, 0x1p-149, (double)(int64_t)rnd() / (double)(rnd() | 1),
	                 ldexp((double)(rnd() & 0xFFFFFF), (int)(rnd() % 40) - 20)};
	return fp_round(k, pick[rnd() % (sizeof pick / sizeof *pick)]);
}

static Value *rand_const(Type t)
{
	ScalarKind k = (ScalarKind)t.scalar;
	return scalar_is_float(k) ? cf(t, rand_float(k)) : ci(t, rand_int(k));
}

static int elem_bytes(ScalarKind k) { return k == SK_I1 ? 1 : scalar_bits(k) / 8; }

/* Runs f (one parameter: the pointer) over buf; false when the interpreter stops with an error. */
static bool run(IrFunc *f, unsigned char *buf)
{
	memset(buf, 0xA5, 16);
	Diag d;
	diag_init(&d);
	InterpBuffer b = {"p", buf, 16};
	InterpArg arg = interp_ptr(buf);
	bool ok = interp_run(f, &arg, 1, &b, 1, NULL, &d);
	diag_free(&d);
	return ok;
}

static const OpCode codes[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_REM, OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR,
                               OP_MIN, OP_MAX, OP_UMULHI, OP_NEG, OP_NOT, OP_ABS, OP_FMA, OP_CMP, OP_SELECT,
                               OP_CAST, OP_MATH};

typedef struct Tally {
	int cases, folded, bad;
} Tally;

static void trial(Tally *t, bool casts)
{
	ScalarKind k = (ScalarKind)(rnd() % SK_COUNT);
	OpCode code = casts ? OP_CAST : codes[rnd() % (sizeof codes / sizeof *codes - 1)];
	Type in = T(k), out = in;
	int n = code == OP_FMA || code == OP_SELECT ? 3 : code == OP_NEG || code == OP_NOT || code == OP_ABS ||
	                                                          code == OP_CAST || code == OP_MATH
	                                                      ? 1
	                                                      : 2;
	if (code == OP_CMP)
		out = T(SK_I1);
	if (code == OP_CAST)
		out = T((ScalarKind)(rnd() % SK_COUNT));
	if (!casts && rnd() % 8 == 0) {
		code = OP_MATH;
		n = 1;
	}
	begin("fold");
	Value *p = param("p", P(out));
	Value *ops[3];
	for (int i = 0; i < n; i++)
		ops[i] = code == OP_SELECT && i == 0 ? ci(T(SK_I1), (int64_t)(rnd() & 1)) : rand_const(in);
	Op *op = emit(code, ops, n, &out, 1);
	static const int64_t math[] = {MATH_SQRT, MATH_FLOOR, MATH_CEIL, MATH_EXP, MATH_RSQRT};
	op->attr[0] = code == OP_CMP ? (int64_t)(rnd() % 6) : code == OP_MATH ? math[rnd() % 5] : (int64_t)(rnd() & 1);
	store(p, op->results[0]);
	ret();
	Diag d;
	diag_init(&d);
	bool valid = ir_verify(F, &d, NULL);
	diag_free(&d);
	if (!valid)
		return; /* e.g. shifts of floats: not a case */
	unsigned char before[16], after_buf[16];
	bool ok1 = run(F, before);
	StrBuf text = {0};
	ir_print(F, &text);
	diag_init(&d);
	bool passes = pipeline_run_passes(F, "canonicalize", NULL, NULL, &d);
	diag_free(&d);
	Value *stored = F->body.last->prev->operands[1];
	bool folded = stored->def && stored->def->code == OP_CONST;
	bool ok2 = passes && run(F, after_buf);
	int nb = elem_bytes((ScalarKind)out.scalar);
	bool same = ok1 == ok2 && (!ok1 || memcmp(before, after_buf, (size_t)nb) == 0);
	if (!same && ok1 && ok2 && scalar_is_float((ScalarKind)out.scalar)) {
		/* NaN payloads aside */
		ScalarKind ko = (ScalarKind)out.scalar;
		uint64_t a = 0, b = 0;
		memcpy(&a, before, (size_t)nb);
		memcpy(&b, after_buf, (size_t)nb);
		same = isnan(fp_decode(ko, a)) && isnan(fp_decode(ko, b));
	}
	t->cases++;
	t->folded += folded;
	if (!same && t->bad++ < 5) {
		printf("  differs (run %s before, %s after folding):\n%s", ok1 ? "ok" : "failed", ok2 ? "ok" : "failed",
		       text.data);
		printf("  after: %s\n", print_fn(F));
	}
	sb_free(&text);
}

int main(void)
{
	Tally ops = {0}, casts = {0};
	for (int i = 0; i < 20000; i++)
		trial(&ops, false);
	for (int i = 0; i < 5000; i++)
		trial(&casts, true);
	printf("  ops: %d cases, %d folded; casts: %d cases, %d folded\n", ops.cases, ops.folded, casts.cases,
	       casts.folded);
	check(ops.bad == 0, "fold vs interpreter: element-wise ops on constants store the same bits folded or not");
	check(ops.folded > ops.cases / 2, "fold vs interpreter: most element-wise cases fold");
	check(casts.bad == 0, "fold vs interpreter: casts between every pair of kinds store the same bits");
	check(casts.folded > casts.cases / 2, "fold vs interpreter: most casts fold");
	return done();
}
