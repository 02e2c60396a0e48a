/* axis.c: axis analysis of the GPU IR.
 *
 * For every integer or pointer value, per dimension: how long the runs of
 * consecutive values are (contig), what power of two divides the first
 * value of each run (div; pointers in bytes), and how long the runs of equal
 * values are (constancy). Sources: arange, constants, multiple_of and
 * max_contiguous hints, and the runtime's specialization of arguments
 * (divisibility by 16, pointers aligned to 16 bytes). The layouts pass
 * orders each load and store by contiguity and the lowering sizes vector
 * accesses from it. */
#include "gpu/gpu.h"

#include <stdlib.h>
#include <string.h>

enum { DIV_MAX = 1 << 30 };

typedef struct Axis {
	const IrFunc *f;
	AxisInfo *ax;
} Axis;

static int64_t gcd64(int64_t a, int64_t b)
{
	if (a < 0)
		a = -a;
	if (b < 0)
		b = -b;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static int64_t pow2_factor(int64_t v)
{
	if (v == 0)
		return DIV_MAX;
	int64_t d = 1;
	while (!(v & d) && d < DIV_MAX)
		d <<= 1;
	return d;
}

static int dims(Type t) { return t.rank ? t.rank : 1; }
static int64_t size(Type t, int d) { return t.rank ? t.shape[d] : 1; }

static AxisInfo unknown(void)
{
	AxisInfo a;
	for (int d = 0; d < BLK_MAX_RANK; d++)
		a.contig[d] = a.div[d] = a.constancy[d] = 1;
	a.nonneg = false;
	return a;
}

/* What divides every element (not only the first of each run). */
static int64_t elem_div(AxisInfo a, Type t)
{
	int64_t d = DIV_MAX;
	for (int i = 0; i < dims(t); i++)
		d = gcd64(d, a.contig[i] > 1 ? 1 : a.div[i]);
	return d;
}

static AxisInfo meet(AxisInfo a, AxisInfo b)
{
	for (int d = 0; d < BLK_MAX_RANK; d++) {
		a.contig[d] = gcd64(a.contig[d], b.contig[d]);
		a.div[d] = gcd64(a.div[d], b.div[d]);
		a.constancy[d] = gcd64(a.constancy[d], b.constancy[d]);
	}
	a.nonneg = a.nonneg && b.nonneg;
	return a;
}


static void set(Axis *A, const Value *v, AxisInfo a)
{
	Type t = v->type;
	for (int d = 0; d < dims(t); d++) {
		int64_t n = size(t, d);
		if (a.contig[d] > n)
			a.contig[d] = n;
		if (a.constancy[d] > n)
			a.constancy[d] = n;
		if (a.contig[d] < 1)
			a.contig[d] = 1;
		if (a.constancy[d] < 1)
			a.constancy[d] = 1;
		if (a.div[d] < 1)
			a.div[d] = 1;
	}
	for (int d = dims(t); d < BLK_MAX_RANK; d++)
		a.contig[d] = a.div[d] = a.constancy[d] = 1;
	A->ax[v->id] = a;
}

static AxisInfo get(Axis *A, const Value *v) { return A->ax[v->id]; }

static void walk(Axis *A, const Region *r);

/* Runs of a + b: a run of a against constant runs of b, or the reverse. */
/* What divides the elements at every c-th position of x's runs: a run of
 * consecutive values from s holds s + k c unit there (unit: the element
 * size of pointers, 1 for integers), a run of equal or scattered values its
 * div throughout. */
static int64_t div_at(AxisInfo x, int d, int64_t c, int64_t unit)
{
	return x.contig[d] > 1 && c < x.contig[d] ? gcd64(x.div[d], c * unit) : x.div[d];
}

static AxisInfo add_info(AxisInfo a, AxisInfo b, int64_t scale, int n)
{
	AxisInfo out = unknown();
	for (int d = 0; d < n; d++) {
		int64_t x = gcd64(a.contig[d], b.constancy[d]), y = gcd64(b.contig[d], a.constancy[d]);
		out.contig[d] = x > y ? x : y;
		/* the result's runs start where both operands have that divisibility */
		out.div[d] = gcd64(div_at(a, d, out.contig[d], scale), div_at(b, d, out.contig[d], 1) * scale);
		out.constancy[d] = gcd64(a.constancy[d], b.constancy[d]);
	}
	return out;
}

/* Runs of equal values that all operands share stay runs of equal
 * results (an element-wise op of equal inputs gives equal outputs). */
static void constant_runs(Axis *A, const Op *op, int n, AxisInfo *out)
{
	for (int d = 0; d < n; d++) {
		int64_t c = get(A, op->operands[0]).constancy[d];
		for (int i = 1; i < op->n_operands; i++)
			c = gcd64(c, get(A, op->operands[i]).constancy[d]);
		out->constancy[d] = c;
	}
}

/* An op with regions (for, if, while, reduce, scan): its region arguments
 * and results; its regions are walked. */
static void analyze_region_op(Axis *A, const Op *op)
{
	const Region *r0 = &op->regions[0];
	if (op->code == OP_FOR) {
		AxisInfo lb = get(A, op->operands[0]), st = get(A, op->operands[2]);
		AxisInfo iv = unknown();
		iv.div[0] = gcd64(lb.div[0], st.div[0]);
		/* from a start >= 0 by a positive constant step */
		const Op *sd = op->operands[2]->def;
		iv.nonneg = lb.nonneg && sd && sd->code == OP_CONST && sd->ival > 0;
		set(A, r0->args[0], iv);
		/* carried values: what holds for the initial value and for every
		 * value yielded, to a fixed point (each step only weakens) */
		for (int i = 0; i < op->n_results; i++)
			set(A, r0->args[1 + i], get(A, op->operands[3 + i]));
		for (int round = 0; round < 8; round++) {
			walk(A, r0);
			bool moved = false;
			for (int i = 0; i < op->n_results; i++) {
				AxisInfo m = meet(get(A, r0->args[1 + i]), get(A, r0->last->operands[i]));
				if (memcmp(&m, &A->ax[r0->args[1 + i]->id], sizeof m) != 0) {
					set(A, r0->args[1 + i], round == 7 ? unknown() : m);
					moved = true;
				}
			}
			if (!moved)
				break;
		}
		for (int i = 0; i < op->n_results; i++)
			set(A, op->results[i], get(A, r0->args[1 + i]));
	} else if (op->code == OP_IF) {
		walk(A, &op->regions[0]);
		walk(A, &op->regions[1]);
		for (int i = 0; i < op->n_results; i++)
			set(A, op->results[i],
			    meet(get(A, op->regions[0].last->operands[i]), get(A, op->regions[1].last->operands[i])));
	} else if (op->code == OP_WHILE) {
		const Region *r1 = &op->regions[1];
		for (int i = 0; i < r0->n_args; i++)
			set(A, r0->args[i], get(A, op->operands[i]));
		for (int round = 0; round < 8; round++) {
			walk(A, r0);
			for (int i = 0; i < r1->n_args; i++)
				set(A, r1->args[i], get(A, r0->last->operands[1 + i]));
			walk(A, r1);
			bool moved = false;
			for (int i = 0; i < r0->n_args; i++) {
				AxisInfo m = meet(get(A, r0->args[i]), get(A, r1->last->operands[i]));
				if (memcmp(&m, &A->ax[r0->args[i]->id], sizeof m) != 0) {
					set(A, r0->args[i], round == 7 ? unknown() : m);
					moved = true;
				}
			}
			if (!moved)
				break;
		}
		for (int i = 0; i < op->n_results; i++)
			set(A, op->results[i], get(A, r0->last->operands[1 + i]));
	} else {
		/* reduce and scan: their regions combine scalars */
		for (int i = 0; i < op->n_regions; i++) {
			for (int j = 0; j < op->regions[i].n_args; j++)
				set(A, op->regions[i].args[j], unknown());
			walk(A, &op->regions[i]);
		}
		for (int i = 0; i < op->n_results; i++)
			set(A, op->results[i], unknown());
	}
}

/* The largest power of two dividing d (d > 0). */
static int64_t pow2_part(int64_t d) { return d > 0 ? d & -d : 1; }

/* What every element of a divisor v along d is a multiple of: a constant's
 * own magnitude (48 counts as 48, not 16), else what its div says of every
 * element; 0 where v is the constant 0 (x / 0 has no value to reason on).
 * The rules using it also need v equal within the runs they claim, which
 * its constancy says. */
static int64_t divisor_of(Axis *A, const Value *v, int d)
{
	const Op *c = v->def;
	if (c && c->code == OP_CONST) {
		if (c->ival == 0 || c->ival < -DIV_MAX || c->ival > DIV_MAX)
			return c->ival == 0 ? 0 : 1;
		return c->ival < 0 ? -c->ival : c->ival;
	}
	AxisInfo b = get(A, v);
	return b.contig[d] > 1 ? 1 : b.div[d];
}

/* Where a run of x (consecutive values from s, s a multiple of x.div) is
 * cut by a divisor c, a multiple of m equal over runs of k: x / c and x % c
 * change course only where s + i is a multiple of c, hence of m, and since
 * s is a multiple of x.div, i is a multiple of gcd(x.div, m). So aligned
 * groups of gcd(contig, div, m, k) lie between two cuts. Only for x >= 0
 * (or a floor): truncation toward zero bends at 0 as well, e.g.
 * (-17..-14) % 16 is -1, 0, -15, -14. */
static int64_t cut_runs(AxisInfo x, int d, int64_t m, int64_t k)
{
	if (x.contig[d] <= 1 || m <= 0)
		return 1;
	return gcd64(gcd64(x.contig[d], x.div[d]), gcd64(m, k));
}

/* x / c and x >> c (integers). */
static AxisInfo div_info(Axis *A, const Op *op, AxisInfo a, AxisInfo b, Type t, int n)
{
	AxisInfo out = unknown();
	const Op *c = op->operands[1]->def;
	bool shr = op->code == OP_SHR, positive = c && c->code == OP_CONST && c->ival > 0;
	/* an exact power of two: exact multiples stay multiples (x = by * q
	 * exactly, whatever the rounding) */
	int64_t by = 0;
	if (positive)
		by = shr ? (c->ival < 31 ? (int64_t)1 << c->ival : 0) : c->ival;
	if (by & (by - 1))
		by = 0;
	/* a shift, an unsigned division and a division of x >= 0 are floors
	 * (x / -c = -(x / c) for x >= 0 changes where x / c does) */
	bool floor = shr || !scalar_is_signed((ScalarKind)type_elem(t).scalar) || a.nonneg;
	out.nonneg = a.nonneg && (shr || positive);
	for (int d = 0; d < n; d++) {
		out.constancy[d] = gcd64(a.constancy[d], b.constancy[d]);
		/* a run of consecutive values divides into runs of equal ones whose
		 * values (s / by + k) need not be multiples of anything */
		out.div[d] = by && a.contig[d] == 1 && a.div[d] % by == 0 ? a.div[d] / by : 1;
		if (floor) {
			int64_t m = shr ? by : divisor_of(A, op->operands[1], d);
			int64_t g = cut_runs(a, d, m, b.constancy[d]);
			if (g > out.constancy[d])
				out.constancy[d] = g;
		}
	}
	return out;
}

/* x % c (integers): x - q c, so what divides x and c divides it; between
 * two cuts (cut_runs) q is one value and x - q c runs on as x does. */
static AxisInfo rem_info(Axis *A, const Op *op, AxisInfo a, AxisInfo b, int n)
{
	AxisInfo out = unknown();
	out.nonneg = a.nonneg; /* the sign of the dividend */
	for (int d = 0; d < n; d++) {
		int64_t m = divisor_of(A, op->operands[1], d);
		out.contig[d] = a.nonneg ? cut_runs(a, d, m, b.constancy[d]) : 1;
		out.div[d] = m ? gcd64(div_at(a, d, out.contig[d], 1), m) : 1;
		out.constancy[d] = gcd64(a.constancy[d], b.constancy[d]);
	}
	return out;
}

/* Integer casts. One that keeps the value keeps everything; any other
 * (narrowing, or a change of sign on a value that may not fit) keeps the
 * low bits: powers of two dividing the value, and runs of consecutive
 * values between the points where the value wraps. Those are multiples of
 * 2^(w-1), w the narrower width (127 -> -128 in i8, -1 -> 0xff..ff in u32,
 * 2^31 - 1 -> -2^31 from u32 to i32), so runs are cut as by a divisor of
 * 2^(w-1) (cut_runs). To i1 is x != 0: constancy only. */
static AxisInfo cast_info(AxisInfo a, Type from, Type to, int n)
{
	AxisInfo out = unknown();
	ScalarKind fk = (ScalarKind)type_elem(from).scalar, tk = (ScalarKind)type_elem(to).scalar;
	int fb = scalar_bits(fk), tb = scalar_bits(tk);
	bool fs = scalar_is_signed(fk), ts = scalar_is_signed(tk);
	if (tk == SK_I1) {
		for (int d = 0; d < n; d++)
			out.constancy[d] = a.constancy[d];
		return out;
	}
	/* wider from unsigned or into signed; the same signedness and width;
	 * a non-negative signed value into a type at least as wide */
	bool keeps = (tb > fb && (!fs || ts)) || (tb == fb && fs == ts) || (a.nonneg && fs && tb >= fb);
	if (keeps) {
		out = a;
		out.nonneg = a.nonneg || (!fs && tb > fb && ts);
		return out;
	}
	int e = (fb < tb ? fb : tb) - 1;
	int64_t wrap = (int64_t)1 << (e < 30 ? e : 30);
	for (int d = 0; d < n; d++) {
		out.contig[d] = cut_runs(a, d, wrap, DIV_MAX);
		out.div[d] = pow2_part(div_at(a, d, out.contig[d], 1));
		out.constancy[d] = a.constancy[d];
	}
	return out;
}

/* The integer arithmetic beyond + - * (false: not one of these ops). */
static bool analyze_arith(Axis *A, const Op *op, AxisInfo a, AxisInfo b, int n, AxisInfo *out)
{
	Type t = op->results[0]->type;
	int64_t unit = t.ptr ? type_bytes(type_pointee(type_elem(t))) : 1;
	switch (op->code) {
	case OP_DIV:
	case OP_SHR:
		if (type_is_float(t))
			return false;
		*out = div_info(A, op, a, b, t, n);
		return true;
	case OP_REM:
		if (type_is_float(t))
			return false;
		*out = rem_info(A, op, a, b, n);
		return true;
	case OP_SHL: {
		/* x << k = x * 2^k (wrapping keeps the low zero bits): what divides
		 * every element, times 2^k; a shift by 0 keeps all */
		const Op *c = op->operands[1]->def;
		if (!c || c->code != OP_CONST || c->ival < 0 || c->ival >= 30)
			return false;
		*out = unknown();
		for (int d = 0; d < n; d++) {
			int64_t x = (a.contig[d] > 1 ? 1 : a.div[d]) << c->ival;
			out->div[d] = x > DIV_MAX ? DIV_MAX : x;
			out->constancy[d] = a.constancy[d];
		}
		if (c->ival == 0)
			*out = a;
		return true;
	}
	case OP_MIN:
	case OP_MAX:
		if (type_is_float(t))
			return false;
		/* in aligned groups where both run (or both hold), min(s + i, u + i)
		 * = min(s, u) + i: a run from s or from u; against a constant the
		 * result runs, then holds: no run (min(offs, n - 1) clamps) */
		*out = unknown();
		for (int d = 0; d < n; d++) {
			int64_t g = gcd64(a.contig[d], b.contig[d]);
			out->contig[d] = g;
			out->div[d] = gcd64(div_at(a, d, g, unit), div_at(b, d, g, unit));
			out->constancy[d] = gcd64(a.constancy[d], b.constancy[d]);
		}
		out->nonneg = op->code == OP_MIN ? a.nonneg && b.nonneg : a.nonneg || b.nonneg;
		return true;
	case OP_SELECT: {
		/* a constant condition picks a side; else, in aligned groups where
		 * the condition holds one value, the result is all of a or all of
		 * b: runs where both run, what divides both */
		AxisInfo y = get(A, op->operands[2]);
		const Op *c = op->operands[0]->def;
		if (c && c->code == OP_CONST) {
			*out = c->ival ? b : y;
			return true;
		}
		*out = unknown();
		for (int d = 0; d < n; d++) {
			int64_t g = gcd64(a.constancy[d], gcd64(b.contig[d], y.contig[d]));
			out->contig[d] = g;
			out->div[d] = gcd64(div_at(b, d, g, unit), div_at(y, d, g, unit));
			out->constancy[d] = gcd64(a.constancy[d], gcd64(b.constancy[d], y.constancy[d]));
		}
		out->nonneg = b.nonneg && y.nonneg;
		return true;
	}
	case OP_CAST:
		if (type_is_float(type_elem(op->operands[0]->type)) || type_is_float(type_elem(t)) || t.ptr ||
		    op->operands[0]->type.ptr)
			return false;
		*out = cast_info(a, op->operands[0]->type, t, n);
		return true;
	default:
		return false;
	}
}

static void analyze_op(Axis *A, const Op *op)
{
	if (op->n_regions) {
		analyze_region_op(A, op);
		return;
	}
	if (op->n_results != 1) {
		for (int i = 0; i < op->n_results; i++)
			set(A, op->results[i], unknown());
		return;
	}
	const Value *r = op->results[0];
	Type t = r->type;
	int n = dims(t);
	AxisInfo a = op->n_operands > 0 ? get(A, op->operands[0]) : unknown();
	AxisInfo b = op->n_operands > 1 ? get(A, op->operands[1]) : unknown();
	AxisInfo out = unknown();
	if (analyze_arith(A, op, a, b, n, &out)) {
		set(A, r, out);
		return;
	}
	switch (op->code) {
	case OP_CONST:
		for (int d = 0; d < n; d++) {
			out.div[d] = type_is_float(t) ? 1 : pow2_factor(op->ival);
			out.constancy[d] = size(t, d);
		}
		out.nonneg = !type_is_float(t) && op->ival >= 0;
		break;
	case OP_ARANGE:
		out.contig[0] = op->attr[1] - op->attr[0];
		out.div[0] = pow2_factor(op->attr[0]);
		out.nonneg = op->attr[0] >= 0;
		break;
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS:
		out.nonneg = true;
		break;
	case OP_SPLAT:
		for (int d = 0; d < n; d++) {
			out.div[d] = a.div[0];
			out.constancy[d] = size(t, d);
		}
		out.nonneg = a.nonneg;
		break;
	case OP_BITCAST:
		/* a pointer read as another pointee (x.to(*f16)): the same addresses, so the
		 * same divisibility in bytes and constancy; runs stay contiguous in
		 * elements only when the element size does */
		if (t.ptr && op->operands[0]->type.ptr) {
			out = a;
			if (type_bytes(type_pointee(type_elem(t))) != type_bytes(type_pointee(type_elem(op->operands[0]->type))))
				for (int d = 0; d < n; d++)
					out.contig[d] = 1;
		}
		break;
	case OP_HINT:
	case OP_CONVERT_LAYOUT:
		out = a;
		if (op->code == OP_HINT) {
			/* multiple_of holds for every element; max_contiguous along the last dimension */
			if (op->attr[0])
				for (int d = 0; d < n; d++)
					out.div[d] = op->attr[0] * (t.ptr ? type_bytes(type_pointee(type_elem(t))) : 1);
			if (op->attr[1])
				out.contig[n - 1] = op->attr[1];
		}
		break;
	case OP_EXPAND_DIMS: {
		int axis = (int)op->attr[0];
		Type in = op->operands[0]->type;
		out.nonneg = a.nonneg;
		for (int d = 0, s = 0; d < n; d++) {
			if (d == axis) {
				out.div[d] = elem_div(a, in);
				continue;
			}
			out.contig[d] = a.contig[s], out.div[d] = a.div[s], out.constancy[d] = a.constancy[s];
			s++;
		}
		break;
	}
	case OP_BROADCAST: {
		Type in = op->operands[0]->type;
		out.nonneg = a.nonneg;
		for (int d = 0; d < n; d++) {
			if (in.shape[d] == 1 && t.shape[d] != 1) {
				out.div[d] = a.div[d];
				out.constancy[d] = t.shape[d];
			} else {
				out.contig[d] = a.contig[d], out.div[d] = a.div[d], out.constancy[d] = a.constancy[d];
			}
		}
		break;
	}
	case OP_RESHAPE: {
		Type in = op->operands[0]->type;
		out.nonneg = a.nonneg;
		int64_t ed = elem_div(a, in);
		for (int d = 0; d < n; d++)
			out.div[d] = ed;
		/* a reshape that only adds or drops dimensions of 1 (x[:, None])
		 * keeps every other dimension's runs */
		int src[BLK_MAX_RANK], s = 0;
		bool unit_only = true;
		for (int d = 0; d < t.rank && unit_only; d++) {
			if (t.shape[d] == 1) {
				src[d] = -1;
				continue;
			}
			while (s < in.rank && in.shape[s] == 1)
				s++;
			unit_only = s < in.rank && in.shape[s] == t.shape[d];
			src[d] = s++;
		}
		while (unit_only && s < in.rank && in.shape[s] == 1)
			s++;
		if (unit_only && s == in.rank && in.rank) {
			for (int d = 0; d < t.rank; d++)
				if (src[d] >= 0)
					out.contig[d] = a.contig[src[d]], out.div[d] = a.div[src[d]],
					out.constancy[d] = a.constancy[src[d]];
			break;
		}
		/* the last dimension keeps its runs when it keeps its length */
		if (in.rank && t.rank && in.shape[in.rank - 1] == t.shape[t.rank - 1]) {
			out.contig[n - 1] = a.contig[in.rank - 1];
			out.div[n - 1] = a.div[in.rank - 1];
			out.constancy[n - 1] = a.constancy[in.rank - 1];
		}
		break;
	}
	case OP_TRANS:
		out.nonneg = a.nonneg;
		for (int d = 0; d < n; d++) {
			int s = (int)op->attr[d];
			out.contig[d] = a.contig[s], out.div[d] = a.div[s], out.constancy[d] = a.constancy[s];
		}
		break;
	case OP_ADD:
	case OP_ADDPTR: {
		int64_t scale = op->code == OP_ADDPTR ? type_bytes(type_pointee(type_elem(op->operands[0]->type))) : 1;
		out = add_info(a, b, scale, n);
		out.nonneg = op->code == OP_ADD && a.nonneg && b.nonneg;
		break;
	}
	case OP_SUB:
		for (int d = 0; d < n; d++) {
			out.contig[d] = gcd64(a.contig[d], b.constancy[d]);
			out.div[d] = gcd64(div_at(a, d, out.contig[d], 1), div_at(b, d, out.contig[d], 1));
			out.constancy[d] = gcd64(a.constancy[d], b.constancy[d]);
		}
		break;
	case OP_MUL:
		for (int d = 0; d < n; d++) {
			/* the product's elements stand alone: what divides every element
			 * of each factor (the first of a run of consecutive values only) */
			int64_t x = (a.contig[d] > 1 ? 1 : a.div[d]) * (b.contig[d] > 1 ? 1 : b.div[d]);
			out.div[d] = x > DIV_MAX || x <= 0 ? DIV_MAX : x;
			out.constancy[d] = gcd64(a.constancy[d], b.constancy[d]);
			/* a run times 1 stays a run */
			if (op->operands[1]->def && op->operands[1]->def->code == OP_CONST && op->operands[1]->def->ival == 1)
				out.contig[d] = a.contig[d], out.div[d] = a.div[d];
		}
		out.nonneg = a.nonneg && b.nonneg;
		break;
	case OP_CMP: {
		/* a run of consecutive values against a constant block that both
		 * start at multiples of d: x < c (and x >= c) flips at c only, so
		 * aligned groups of d agree; x <= c, x > c, ==, != flip at c + 1 or
		 * single out one value */
		bool flips_at_c = op->attr[0] == CMP_LT || op->attr[0] == CMP_GE;
		for (int d = 0; d < n; d++) {
			int64_t c = gcd64(a.constancy[d], b.constancy[d]);
			if (flips_at_c && a.constancy[d] == 1 && (b.constancy[d] > 1 || op->operands[1]->type.rank == 0))
				c = gcd64(gcd64(a.contig[d], gcd64(a.div[d], b.div[d])), b.constancy[d]);
			out.constancy[d] = c < 1 ? 1 : c;
		}
		break;
	}
	case OP_AND:
	case OP_OR:
	case OP_XOR:
	case OP_NOT:
		constant_runs(A, op, n, &out);
		break;
	case OP_LOAD:
		/* one address, one value; where masked, `other` (0 when absent)
		 * stands in, so the mask and other must agree along the run too */
		constant_runs(A, op, n, &out);
		break;
	default:
		if (op_flags(op->code) & OPF_ELEMWISE)
			constant_runs(A, op, n, &out);
		break;
	}
	set(A, r, out);
}

static void walk(Axis *A, const Region *r)
{
	for (const Op *op = r->first; op; op = op->next)
		analyze_op(A, op);
}

AxisInfo *axis_analyze(const IrFunc *f)
{
	Axis A = {.f = f};
	A.ax = malloc((size_t)(f->n_values ? f->n_values : 1) * sizeof *A.ax);
	if (!A.ax)
		return NULL;
	for (int i = 0; i < f->n_values; i++)
		A.ax[i] = unknown();
	for (int i = 0; i < f->n_params; i++) {
		const IrParam *p = &f->params[i];
		if (p->value && p->divisibility > 0)
			A.ax[p->value->id].div[0] = p->divisibility;
	}
	walk(&A, &f->body);
	return A.ax;
}

int axis_access_width(const AxisInfo *ax, const Value *ptr, const Value *mask, int d)
{
	Type t = ptr->type;
	if (!t.rank)
		return 1;
	int eb = type_bytes(type_pointee(type_elem(t)));
	int w = 16 / eb;
	AxisInfo p = ax[ptr->id];
	while (w > 1 && (p.contig[d] % w || p.div[d] % (w * eb) || (mask && ax[mask->id].constancy[d] % w)))
		w /= 2;
	return w < 1 ? 1 : w;
}
