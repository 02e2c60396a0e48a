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

static bool is_float(Type t) { return !t.ptr && scalar_is_float((ScalarKind)t.scalar); }

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
	switch (op->code) {
	case OP_CONST:
		for (int d = 0; d < n; d++) {
			out.div[d] = is_float(t) ? 1 : pow2_factor(op->ival);
			out.constancy[d] = size(t, d);
		}
		out.nonneg = !is_float(t) && op->ival >= 0;
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
	case OP_DIV:
	case OP_SHR: {
		/* by a power of two: exact multiples stay multiples; for a floor
		 * (a shift, or unsigned division) aligned runs become constant runs */
		const Op *c = op->operands[1]->def;
		if (!c || c->code != OP_CONST || is_float(t) || c->ival <= 0)
			break;
		int64_t by = op->code == OP_SHR ? (c->ival < 62 ? (int64_t)1 << c->ival : 0) : c->ival;
		if (by <= 0 || (by & (by - 1)))
			break;
		bool floor = op->code == OP_SHR || !scalar_is_signed((ScalarKind)type_elem(t).scalar) || a.nonneg;
		out.nonneg = a.nonneg;
		for (int d = 0; d < n; d++) {
			/* a run of consecutive values divides into runs of equal ones whose
			 * values (s / by + k) need not be multiples of anything */
			out.div[d] = a.contig[d] == 1 && a.div[d] % by == 0 ? a.div[d] / by : 1;
			out.constancy[d] = a.constancy[d];
			if (floor && a.div[d] % by == 0 && gcd64(a.contig[d], by) > out.constancy[d])
				out.constancy[d] = gcd64(a.contig[d], by);
		}
		break;
	}
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
	case OP_SELECT:
	case OP_NOT:
		constant_runs(A, op, n, &out);
		break;
	case OP_CAST:
		/* between integers the low bits, and so powers of two dividing the
		 * value and runs of consecutive values, survive */
		if (!is_float(type_elem(op->operands[0]->type)) && !is_float(type_elem(t))) {
			out = a;
			/* a wider type keeps the value; a narrower one may wrap */
			out.nonneg = a.nonneg && scalar_bits((ScalarKind)type_elem(t).scalar) >=
			                           scalar_bits((ScalarKind)type_elem(op->operands[0]->type).scalar);
		}
		else
			for (int d = 0; d < n; d++)
				out.constancy[d] = a.constancy[d];
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
