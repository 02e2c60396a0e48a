/* tests/ops: reductions and scans, as .tile kernels through blk.h.
 *   sum max min     axis 0 of 1-D, axes 0 and 1 of 2-D, axis None; every
 *                   integer and float type; NaN ignored by max/min unless a
 *                   whole row is NaN
 *   argmax argmin   the same axes (not None); many ties: the smallest index
 *   reduce          with fn combiners, one block and a tuple of two
 *   cumsum cumprod associative_scan   along each axis, forward and reverse
 * Each program of a grid of 3 reduces its own block of the input.
 *
 * Tolerances: integers exact (they wrap, so any order gives the same sum).
 * Float sums have no fixed order: the reference sums in long double, and the
 * bound is n eps sum|x| (eps of the accumulator: f32 for f16, bf16, f32),
 * plus an ulp of the result type. max, min, argmax, argmin exact. Float
 * scans likewise, with n eps sum|x| of the prefix; cumprod of f32 over
 * factors near 1 gets n eps |prod|. f16 and bf16 scans accumulate in f32
 * (eps 2^-24) and round each output once (plus an ulp of the type); long
 * f16 and bf16 cumsums on inputs whose prefix sums are exact in f32 must
 * match the rounded exact sums bit for bit. */
#include "ops.h"

enum { PROGS = 3 };

static const dt NUMS[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32,
                          DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};

/* A layout: 1-D (L) is rows = 1, cols = L. axis: 0, 1 or -1 (None). */
typedef struct layout {
	int rank, rows, cols, axis;
} layout;

static const char *load_expr(layout l, char *buf, size_t n)
{
	if (l.rank == 1)
		snprintf(buf, n, "load(x + p * %d + arange(0, %d))", l.cols, l.cols);
	else
		snprintf(buf, n, "load(x + p * %d + arange(0, %d)[:, None] * %d + arange(0, %d)[None, :])", l.rows * l.cols,
		         l.rows, l.cols, l.cols);
	return buf;
}

/* Outputs per program, and the length of each reduced line. The reduced
 * axis of the (rows, cols) view: 1-D axis 0 and None reduce the cols. */
static int n_out(layout l) { return l.axis < 0 || l.rank == 1 ? 1 : l.axis == 0 ? l.cols : l.rows; }
static int line_len(layout l) { return l.axis < 0 ? l.rows * l.cols : l.rank == 1 || l.axis == 1 ? l.cols : l.rows; }

/* Element j of output line o within one program's block. */
static int line_elem(layout l, int o, int j)
{
	if (l.axis < 0 || l.rank == 1)
		return j;
	return l.axis == 1 ? o * l.cols + j : j * l.cols + o;
}

static const char *store_expr(layout l, char *buf, size_t n)
{
	int k = n_out(l);
	if (k == 1)
		snprintf(buf, n, "store(out + p, r);");
	else
		snprintf(buf, n, "store(out + p * %d + arange(0, %d), r);", k, k);
	return buf;
}

static const char *axis_text(layout l) { return l.axis < 0 ? "None" : l.axis ? "1" : "0"; }

static const char *layout_name(layout l)
{
	static char b[4][64];
	static int k;
	char *s = b[k++ & 3];
	if (l.rank == 1)
		snprintf(s, 64, "(%d,) axis %s", l.cols, axis_text(l));
	else
		snprintf(s, 64, "(%d, %d) axis %s", l.rows, l.cols, axis_text(l));
	return s;
}

static const char *RED_SRC = "kernel k(x: *$T, out: *$R) {\n"
                             "    let p = program_id(0);\n"
                             "    let v = $LOAD;\n"
                             "    let r: $R = $OP(v, axis = $AXIS);\n"
                             "    $STORE\n"
                             "}\n";

static dt sum_type(dt t)
{
	if (dt_int(t) && dts[t].bits < 32) /* i1 counts in i32 */
		return dt_signed(t) || t == DT_I1 ? DT_I32 : DT_U32;
	return t;
}

static bool is_arg(const char *op) { return !strcmp(op, "argmax") || !strcmp(op, "argmin"); }

static void reduction_case(const char *op, dt t, layout l)
{
	int per = l.rows * l.cols, total = PROGS * per, outs = n_out(l), len = line_len(l);
	bool sum = !strcmp(op, "sum"), arg = is_arg(op), is_max = !strcmp(op, "max") || !strcmp(op, "argmax");
	dt tr = sum ? sum_type(t) : arg ? DT_I32 : t;
	arr x = arr_new(t, total), want = arr_new(tr, PROGS * outs);
	double *wantf = calloc((size_t)(PROGS * outs), sizeof(double)), *tol = calloc((size_t)(PROGS * outs), sizeof(double));
	if (arg) /* few distinct values: many ties */
		for (int i = 0; i < total; i++)
			set_f(x, i, dt_float(t) ? (double)rng_range(-3, 3) * 0.5 : (double)rng_range(dt_signed(t) ? -3 : 0, 3));
	else if (sum && dt_float(t))
		fill_random(x, 10);
	else
		fill_random(x, 1000);
	if (dt_float(t) && !sum && !arg) {
		/* program 1: NaN in about one element of ten (ignored); program 2:
		 * its first line all NaN (the result is NaN), infinities elsewhere */
		for (int i = 0; i < per; i++)
			if (rng_range(0, 9) == 0)
				set_f(x, per + i, NAN);
		for (int j = 0; j < len; j++)
			set_f(x, 2 * per + line_elem(l, 0, j), NAN);
		set_f(x, 2 * per + line_elem(l, outs > 1 ? 1 : 0, 0), INFINITY);
		set_f(x, 2 * per + line_elem(l, outs > 2 ? 2 : 0, len - 1), -INFINITY);
	}
	for (int p = 0; p < PROGS; p++)
		for (int o = 0; o < outs; o++) {
			int oi = p * outs + o;
			if (sum && dt_float(t)) {
				long double s = 0, sa = 0;
				for (int j = 0; j < len; j++) {
					double v = get_f(x, p * per + line_elem(l, o, j));
					s += v;
					sa += fabs(v);
				}
				wantf[oi] = (double)s;
				double eps = t == DT_F64 ? 0x1p-53 : 0x1p-24;
				tol[oi] = len * eps * (double)sa + ulp_of(tr, (double)s);
				set_f(want, oi, (double)s);
			} else if (sum) {
				uint64_t s = 0;
				for (int j = 0; j < len; j++)
					s += (uint64_t)get_i(x, p * per + line_elem(l, o, j));
				set_i(want, oi, wrap_int(tr, s));
			} else {
				/* max/min (NaN ignored unless all are NaN); arg*: first index of the best */
				int best = -1;
				for (int j = 0; j < len; j++) {
					val v = get_v(x, p * per + line_elem(l, o, j));
					if (dt_float(t) && isnan(v.f))
						continue;
					if (best < 0) {
						best = j;
						continue;
					}
					val b = get_v(x, p * per + line_elem(l, o, best));
					bool gt = dt_float(t) ? v.f > b.f : dt_signed(t) ? v.i > b.i : (uint64_t)v.i > (uint64_t)b.i;
					bool lt = dt_float(t) ? v.f < b.f : dt_signed(t) ? v.i < b.i : (uint64_t)v.i < (uint64_t)b.i;
					if (is_max ? gt : lt)
						best = j;
				}
				if (arg)
					set_i(want, oi, best);
				else if (best < 0)
					set_f(want, oi, NAN);
				else
					set_v(want, oi, get_v(x, p * per + line_elem(l, o, best)));
			}
		}
	char lb[256], sb[128];
	const char *src = render(RED_SRC, "T", dts[t].name, "R", dts[tr].name, "LOAD", load_expr(l, lb, sizeof lb), "OP", op,
	                         "AXIS", axis_text(l), "STORE", store_expr(l, sb, sizeof sb), NULL);
	blk_devptr dx = dev_from(x), dout = dev_zeros(tr, PROGS * outs);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dout)), NO_CONSTS, GRID(PROGS, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, tr, PROGS * outs);
		if (sum && dt_float(t)) {
			int bad = 0;
			for (int i = 0; i < PROGS * outs; i++)
				if (!(fabs(get_f(got, i) - wantf[i]) <= tol[i]) && bad++ < 5)
					why("[%d] got %s, want %.17g (tolerance %g)\n", i, show(got, i), wantf[i], tol[i]);
			ok = bad == 0;
		} else {
			ok = check_value(got, want, NULL, 0);
		}
	}
	free(wantf);
	free(tol);
	result(ok, "%s %s %s", op, dts[t].name, layout_name(l));
}

/* ---- reduce with a fn ---------------------------------------------------------- */

static const char *REDUCE_FN_SRC = "fn comb(a, b) {\n"
                                   "    return $BODY;\n"
                                   "}\n"
                                   "kernel k(x: *$T, out: *$T) {\n"
                                   "    let p = program_id(0);\n"
                                   "    let v = $LOAD;\n"
                                   "    let r: $T = reduce(v, $AXIS, comb);\n"
                                   "    $STORE\n"
                                   "}\n";

/* combine: '+', '*', '|' (wrapping integers) or 'M' (maximum) */
static val combine_ref(dt t, char c, val a, val b)
{
	val r = a;
	if (c == 'M')
		r.f = a.f >= b.f ? a.f : b.f;
	else if (c == '+')
		r.i = wrap_int(t, (uint64_t)a.i + (uint64_t)b.i);
	else if (c == '*')
		r.i = wrap_int(t, (uint64_t)a.i * (uint64_t)b.i);
	else
		r.i = wrap_int(t, (uint64_t)a.i | (uint64_t)b.i);
	return r;
}

static void reduce_fn_case(dt t, char c, layout l)
{
	int per = l.rows * l.cols, total = PROGS * per, outs = n_out(l), len = line_len(l);
	arr x = arr_new(t, total), want = arr_new(t, PROGS * outs);
	fill_random(x, 1000);
	for (int p = 0; p < PROGS; p++)
		for (int o = 0; o < outs; o++) {
			val acc = get_v(x, p * per + line_elem(l, o, 0));
			for (int j = 1; j < len; j++)
				acc = combine_ref(t, c, acc, get_v(x, p * per + line_elem(l, o, j)));
			set_v(want, p * outs + o, acc);
		}
	const char *body = c == 'M' ? "maximum(a, b)" : c == '+' ? "a + b" : c == '*' ? "a * b" : "a | b";
	char lb[256], sb[128];
	const char *src = render(REDUCE_FN_SRC, "T", dts[t].name, "BODY", body, "LOAD", load_expr(l, lb, sizeof lb), "AXIS",
	                         axis_text(l), "STORE", store_expr(l, sb, sizeof sb), NULL);
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, PROGS * outs);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dout)), NO_CONSTS, GRID(PROGS, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, PROGS * outs), want, NULL, 0);
	result(ok, "reduce(fn: %s) %s %s", body, dts[t].name, layout_name(l));
}

/* A reduction of a tuple of two blocks, (value, index), with a fn of four
 * scalars returning two: the largest value, the smallest index among ties. */
static const char *REDUCE_TUPLE_SRC =
	"fn pick(av, ai, bv, bi) {\n"
	"    let take = (bv > av) | ((bv == av) & (bi < ai));\n"
	"    return where(take, bv, av), where(take, bi, ai);\n"
	"}\n"
	"kernel k(x: *f32, out: *i32, vout: *f32) {\n"
	"    let p = program_id(0);\n"
	"    let v = $LOAD;\n"
	"    let idx = $IDX;\n"
	"    let mv, mi = reduce((v, idx), $AXIS, pick);\n"
	"    let r: i32 = mi;\n"
	"    $STORE\n"
	"    let r2: f32 = mv;\n"
	"    $VSTORE\n"
	"}\n";

static void reduce_tuple_case(layout l)
{
	int per = l.rows * l.cols, total = PROGS * per, outs = n_out(l), len = line_len(l);
	arr x = arr_new(DT_F32, total), want = arr_new(DT_I32, PROGS * outs), wantv = arr_new(DT_F32, PROGS * outs);
	for (int i = 0; i < total; i++)
		set_f(x, i, (double)rng_range(-4, 4));
	for (int p = 0; p < PROGS; p++)
		for (int o = 0; o < outs; o++) {
			int best = 0;
			for (int j = 1; j < len; j++)
				if (get_f(x, p * per + line_elem(l, o, j)) > get_f(x, p * per + line_elem(l, o, best)))
					best = j;
			set_i(want, p * outs + o, best);
			set_f(wantv, p * outs + o, get_f(x, p * per + line_elem(l, o, best)));
		}
	char idx[160], lb[256], sb[128], vsb[128];
	if (l.rank == 1)
		snprintf(idx, sizeof idx, "arange(0, %d)", l.cols);
	else if (l.axis == 0)
		snprintf(idx, sizeof idx, "broadcast_to(arange(0, %d)[:, None], (%d, %d))", l.rows, l.rows, l.cols);
	else
		snprintf(idx, sizeof idx, "broadcast_to(arange(0, %d)[None, :], (%d, %d))", l.cols, l.rows, l.cols);
	store_expr(l, sb, sizeof sb);
	snprintf(vsb, sizeof vsb, "%s", sb);
	/* the value goes through vout, with r2 */
	char *q = strstr(vsb, "out +");
	if (q) {
		memmove(q + 1, q, strlen(q) + 1);
		q[0] = 'v';
	}
	q = strstr(vsb, ", r)");
	if (q)
		memcpy(q, ", r2);", 7);
	const char *src = render(REDUCE_TUPLE_SRC, "LOAD", load_expr(l, lb, sizeof lb), "IDX", idx, "AXIS", axis_text(l),
	                         "STORE", sb, "VSTORE", vsb, NULL);
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_I32, PROGS * outs), dv = dev_zeros(DT_F32, PROGS * outs);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dout), P(dv)), NO_CONSTS, GRID(PROGS, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_I32, PROGS * outs), want, NULL, 0) &&
		     check_exact(dev_read(dv, DT_F32, PROGS * outs), wantv, NULL, 0);
	result(ok, "reduce((value, index), pick) f32 %s", layout_name(l));
}

/* ---- scans ------------------------------------------------------------------------- */

static const char *SCAN_SRC = "fn comb(a, b) {\n"
                              "    return $BODY;\n"
                              "}\n"
                              "kernel k(x: *$T, out: *$R) {\n"
                              "    let p = program_id(0);\n"
                              "    let offs = $OFFS;\n"
                              "    let v = load(x + offs);\n"
                              "    let r: $R = $SCAN;\n"
                              "    store(out + offs, r);\n"
                              "}\n";

static const char *offs_expr(layout l, char *buf, size_t n)
{
	if (l.rank == 1)
		snprintf(buf, n, "p * %d + arange(0, %d)", l.cols, l.cols);
	else
		snprintf(buf, n, "p * %d + arange(0, %d)[:, None] * %d + arange(0, %d)[None, :]", l.rows * l.cols, l.rows,
		         l.cols, l.cols);
	return buf;
}

/* kind: "cumsum", "cumprod", or "scan+" "scanM" (associative_scan with a
 * + or maximum fn) */
static void scan_case(const char *kind, dt t, layout l, bool rev)
{
	int per = l.rows * l.cols, total = PROGS * per, outs = n_out(l), len = line_len(l);
	bool prod = !strcmp(kind, "cumprod"), mx = !strcmp(kind, "scanM");
	dt tr = !strcmp(kind, "cumsum") ? sum_type(t) : t;
	arr x = arr_new(t, total), want = arr_new(tr, total);
	double *wantf = calloc((size_t)total, sizeof(double)), *tol = calloc((size_t)total, sizeof(double));
	if (prod && dt_float(t))
		for (int i = 0; i < total; i++)
			set_f(x, i, rng_uniform(0.9, 1.1));
	else if (dt_float(t))
		fill_random(x, 10);
	else
		fill_random(x, 0);
	double eps = t == DT_F64 ? 0x1p-53 : 0x1p-24; /* f16 and bf16 accumulate in f32 */
	bool narrow = t == DT_F16 || t == DT_BF16;
	for (int p = 0; p < PROGS; p++)
		for (int o = 0; o < outs; o++) {
			long double s = prod ? 1 : 0, sa = 0;
			uint64_t si = prod ? 1 : 0;
			double m = -INFINITY;
			for (int s_ = 0; s_ < len; s_++) {
				int j = rev ? len - 1 - s_ : s_;
				int e = p * per + line_elem(l, o, j);
				val v = get_v(x, e);
				if (dt_float(t)) {
					if (mx) {
						m = v.f > m ? v.f : m;
						wantf[e] = m;
						tol[e] = 0;
					} else if (prod) {
						s *= v.f;
						wantf[e] = (double)s;
						tol[e] = 2 * (s_ + 1) * eps * fabs((double)s) + (narrow ? ulp_of(t, (double)s) : 0);
					} else {
						s += v.f;
						sa += fabs(v.f);
						wantf[e] = (double)s;
						tol[e] = (s_ + 1) * eps * (double)sa + ulp_of(t, (double)s);
					}
				} else {
					si = prod ? si * (uint64_t)v.i : si + (uint64_t)v.i;
					set_i(want, e, wrap_int(tr, si));
				}
			}
		}
	char ob[256], sc[160];
	if (!strncmp(kind, "scan", 4))
		snprintf(sc, sizeof sc, "associative_scan(v, %d, comb%s)", l.rank == 1 ? 0 : l.axis, rev ? ", reverse = true" : "");
	else
		snprintf(sc, sizeof sc, "%s(v, axis = %d%s)", kind, l.rank == 1 ? 0 : l.axis, rev ? ", reverse = true" : "");
	const char *src = render(SCAN_SRC, "T", dts[t].name, "R", dts[tr].name, "BODY", mx ? "maximum(a, b)" : "a + b",
	                         "OFFS", offs_expr(l, ob, sizeof ob), "SCAN", sc, NULL);
	blk_devptr dx = dev_from(x), dout = dev_zeros(tr, total);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dout)), NO_CONSTS, GRID(PROGS, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, tr, total);
		if (dt_float(t))
			ok = check_close_each(got, wantf, tol);
		else
			ok = check_exact(got, want, &x, 1);
	}
	free(wantf);
	free(tol);
	result(ok, "%s %s %s%s", sc, dts[t].name, layout_name(l), rev ? " reverse" : "");
}

/* cumsum of f16 and bf16 over long lines: the scan accumulates in f32 and
 * rounds each output once to the element type. The inputs are multiples of
 * 1/8 below 8 in magnitude, so every prefix sum (a multiple of 2^-3 below
 * 4096 * 8 = 2^15) is exact in f32, whatever the order of the additions:
 * each output must be the exact prefix sum rounded once, bit for bit (a scan
 * that accumulates in bf16 or f16 drifts by many ulps). */
static void scan_narrow_case(dt t, layout l, bool rev)
{
	int per = l.rows * l.cols, total = PROGS * per, outs = n_out(l), len = line_len(l);
	arr x = arr_new(t, total), want = arr_new(t, total);
	for (int i = 0; i < total; i++)
		set_f(x, i, (double)rng_range(-63, 63) / 8);
	for (int p = 0; p < PROGS; p++)
		for (int o = 0; o < outs; o++) {
			double s = 0; /* exact: integers times 2^-3 below 2^15 */
			for (int s_ = 0; s_ < len; s_++) {
				int e = p * per + line_elem(l, o, rev ? len - 1 - s_ : s_);
				s += get_f(x, e);
				set_f(want, e, s);
			}
		}
	char ob[256], sc[160];
	snprintf(sc, sizeof sc, "cumsum(v, axis = %d%s)", l.rank == 1 ? 0 : l.axis, rev ? ", reverse = true" : "");
	const char *src = render(SCAN_SRC, "T", dts[t].name, "R", dts[t].name, "BODY", "a + b", "OFFS",
	                         offs_expr(l, ob, sizeof ob), "SCAN", sc, NULL);
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, total);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dout)), NO_CONSTS, GRID(PROGS, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, total), want, &x, 1);
	result(ok, "%s %s %s%s, accumulated in f32", sc, dts[t].name, layout_name(l), rev ? " reverse" : "");
}

/* A scan of a tuple: the running (largest value, its first index). */
static const char *SCAN_TUPLE_SRC =
	"fn pick(av, ai, bv, bi) {\n"
	"    let take = (bv > av) | ((bv == av) & (bi < ai));\n"
	"    return where(take, bv, av), where(take, bi, ai);\n"
	"}\n"
	"kernel k(x: *i32, out: *i32) {\n"
	"    let p = program_id(0);\n"
	"    let offs = $OFFS;\n"
	"    let v = load(x + offs);\n"
	"    let mv, mi = associative_scan((v, $IDX), $AXIS, pick$REV);\n"
	"    store(out + offs, mi);\n"
	"}\n";

static void scan_tuple_case(layout l, bool rev)
{
	int per = l.rows * l.cols, total = PROGS * per, outs = n_out(l), len = line_len(l);
	arr x = arr_new(DT_I32, total), want = arr_new(DT_I32, total);
	for (int i = 0; i < total; i++)
		set_i(x, i, rng_range(0, 5));
	for (int p = 0; p < PROGS; p++)
		for (int o = 0; o < outs; o++) {
			int best = -1;
			for (int s_ = 0; s_ < len; s_++) {
				int j = rev ? len - 1 - s_ : s_;
				int e = p * per + line_elem(l, o, j);
				if (best < 0)
					best = j;
				else {
					int64_t bv = get_i(x, p * per + line_elem(l, o, best)), v = get_i(x, e);
					if (v > bv || (v == bv && j < best))
						best = j;
				}
				set_i(want, e, best);
			}
		}
	char idx[160], ob[256];
	int axis = l.rank == 1 ? 0 : l.axis;
	if (l.rank == 1)
		snprintf(idx, sizeof idx, "arange(0, %d)", l.cols);
	else if (axis == 0)
		snprintf(idx, sizeof idx, "broadcast_to(arange(0, %d)[:, None], (%d, %d))", l.rows, l.rows, l.cols);
	else
		snprintf(idx, sizeof idx, "broadcast_to(arange(0, %d)[None, :], (%d, %d))", l.cols, l.rows, l.cols);
	char ax[8];
	snprintf(ax, sizeof ax, "%d", axis);
	const char *src = render(SCAN_TUPLE_SRC, "OFFS", offs_expr(l, ob, sizeof ob), "IDX", idx, "AXIS", ax, "REV",
	                         rev ? ", reverse = true" : "", NULL);
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_I32, total);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dout)), NO_CONSTS, GRID(PROGS, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_I32, total), want, &x, 1);
	result(ok, "associative_scan((value, index), pick) %s%s", layout_name(l), rev ? " reverse" : "");
}

/* keep_dims = true: the reduced axis stays with size 1. */
static const char *KEEP_SRC = "kernel k(x: *f32, out: *f32) {\n"
                              "    let v = load(x + arange(0, 8)[:, None] * 16 + arange(0, 16)[None, :]);\n"
                              "    let s = max(v, axis = $AXIS, keep_dims = true);\n"
                              "    static_assert(s.shape[$AXIS] == 1, \"kept\");\n"
                              "    let r = v - s;\n"
                              "    store(out + arange(0, 8)[:, None] * 16 + arange(0, 16)[None, :], r);\n"
                              "}\n";

static void keep_dims_case(int axis)
{
	arr x = arr_new(DT_F32, 128), want = arr_new(DT_F32, 128);
	fill_random(x, 100);
	for (int m = 0; m < 8; m++)
		for (int n = 0; n < 16; n++) {
			double mx = -INFINITY;
			for (int j = 0; j < (axis ? 16 : 8); j++) {
				double v = get_f(x, axis ? m * 16 + j : j * 16 + n);
				mx = v > mx ? v : mx;
			}
			set_f(want, m * 16 + n, get_f(x, m * 16 + n) - mx);
		}
	char ax[4];
	snprintf(ax, sizeof ax, "%d", axis);
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_F32, 128);
	bool ok = run_kernel(render(KEEP_SRC, "AXIS", ax, NULL), NULL, ARGS(P(dx), P(dout)), NO_CONSTS, GRID(1, 1, 1)) ==
	          BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_F32, 128), want, &x, 1);
	result(ok, "max(keep_dims = true) axis %d, broadcast back", axis);
}

/* ---- 3-D blocks ------------------------------------------------------------------- */

static const char *RED3_SRC =
	"kernel k(x: *$T, out: *$R) {\n"
	"    let v = load(x + arange(0, 4)[:, None, None] * 128 + arange(0, 8)[None, :, None] * 16 +\n"
	"                 arange(0, 16)[None, None, :]);\n"
	"    let r: $R = $EXPR;\n"
	"    store(out + $OFFS, r);\n"
	"}\n";

/* op: sum, max, argmin (reductions over axis) or cumsum (a scan) of a (4, 8, 16) block */
static void red3_case(const char *op, dt t, int axis)
{
	const int dims[3] = {4, 8, 16};
	bool scan = !strcmp(op, "cumsum"), arg = !strcmp(op, "argmin");
	dt tr = arg ? DT_I32 : !strcmp(op, "sum") || scan ? sum_type(t) : t;
	arr x = arr_new(t, 512);
	if (arg)
		for (int i = 0; i < 512; i++)
			set_f(x, i, (double)rng_range(-2, 2));
	else
		fill_random(x, 100);
	int od[3], on = 0; /* output dims */
	for (int d = 0; d < 3; d++)
		if (scan || d != axis)
			od[on++] = dims[d];
	int nout = scan ? 512 : 512 / dims[axis];
	arr want = arr_new(tr, nout);
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 8; b++)
			for (int c = 0; c < 16; c++) {
				int idx[3] = {a, b, c};
				if (!scan && idx[axis] != 0)
					continue;
				int len = scan ? idx[axis] + 1 : dims[axis];
				uint64_t s = 0;
				val best = {0, 0};
				int bi = -1;
				for (int j = 0; j < len; j++) {
					int e[3] = {a, b, c};
					e[axis] = j;
					int flat = e[0] * 128 + e[1] * 16 + e[2];
					s += (uint64_t)get_i(x, flat);
					val v = get_v(x, flat); /* signed types only here */
					bool lt = dt_float(t) ? v.f < best.f : v.i < best.i, gt = dt_float(t) ? v.f > best.f : v.i > best.i;
					if (bi < 0 || (arg ? lt : gt)) {
						best = v;
						bi = j;
					}
				}
				int o;
				if (scan)
					o = a * 128 + b * 16 + c;
				else {
					int k = 0, oi[2];
					for (int d = 0; d < 3; d++)
						if (d != axis)
							oi[k++] = idx[d];
					o = oi[0] * od[1] + oi[1];
				}
				if (arg)
					set_i(want, o, bi);
				else if (!strcmp(op, "max"))
					set_v(want, o, best);
				else
					set_i(want, o, wrap_int(tr, s));
			}
	char expr[64], offs[160];
	if (scan)
		snprintf(expr, sizeof expr, "cumsum(v, axis = %d)", axis);
	else
		snprintf(expr, sizeof expr, "%s(v, axis = %d)", op, axis);
	if (scan)
		snprintf(offs, sizeof offs, "arange(0, 4)[:, None, None] * 128 + arange(0, 8)[None, :, None] * 16 + "
		                            "arange(0, 16)[None, None, :]");
	else
		snprintf(offs, sizeof offs, "arange(0, %d)[:, None] * %d + arange(0, %d)[None, :]", od[0], od[1], od[1]);
	blk_devptr dx = dev_from(x), dout = dev_zeros(tr, nout);
	bool ok = run_kernel(render(RED3_SRC, "T", dts[t].name, "R", dts[tr].name, "EXPR", expr, "OFFS", offs, NULL), NULL,
	                     ARGS(P(dx), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, tr, nout), want, NULL, 0);
	result(ok, "%s %s (4, 8, 16)", expr, dts[t].name);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	const layout red_layouts[] = {{1, 1, 64, 0}, {1, 1, 64, -1}, {2, 16, 32, 0}, {2, 16, 32, 1}, {2, 16, 32, -1}};
	const char *ops[] = {"sum", "max", "min", "argmax", "argmin"};
	for (int o = 0; o < COUNT(ops); o++)
		for (int t = 0; t < COUNT(NUMS); t++)
			for (int l = 0; l < COUNT(red_layouts); l++)
				if (!(is_arg(ops[o]) && red_layouts[l].axis < 0))
					reduction_case(ops[o], NUMS[t], red_layouts[l]);
	/* i1 masks: sum counts them (in u32), max and min are any and all */
	for (int l = 0; l < COUNT(red_layouts); l++) {
		reduction_case("sum", DT_I1, red_layouts[l]);
		reduction_case("max", DT_I1, red_layouts[l]);
		reduction_case("min", DT_I1, red_layouts[l]);
	}
	for (int axis = 0; axis < 3; axis++) {
		red3_case("sum", DT_I32, axis);
		red3_case("max", DT_I64, axis);
		red3_case("max", DT_F32, axis);
		red3_case("argmin", DT_I16, axis);
		red3_case("cumsum", DT_I32, axis);
	}
	/* a reduction over a long axis, and a non-square one */
	reduction_case("sum", DT_F32, (layout){1, 1, 4096, 0});
	reduction_case("sum", DT_I32, (layout){2, 2, 1024, 1});
	reduction_case("max", DT_BF16, (layout){2, 128, 4, 0});
	keep_dims_case(0);
	keep_dims_case(1);

	const layout fn_layouts[] = {{1, 1, 64, 0}, {2, 16, 32, 0}, {2, 16, 32, 1}, {2, 16, 32, -1}};
	for (int l = 0; l < COUNT(fn_layouts); l++) {
		reduce_fn_case(DT_I32, '+', fn_layouts[l]);
		reduce_fn_case(DT_F32, 'M', fn_layouts[l]);
		reduce_fn_case(DT_I64, '*', fn_layouts[l]);
		reduce_fn_case(DT_U16, '|', fn_layouts[l]);
		if (fn_layouts[l].axis >= 0)
			reduce_tuple_case(fn_layouts[l]);
	}

	const layout scan_layouts[] = {{1, 1, 64, 0}, {2, 8, 32, 0}, {2, 8, 32, 1}};
	const dt sum_types[] = {DT_I8, DT_U16, DT_I32, DT_I64, DT_F16, DT_BF16, DT_F32, DT_F64};
	const dt prod_types[] = {DT_I32, DT_U32, DT_I64, DT_F16, DT_BF16, DT_F32};
	for (int l = 0; l < COUNT(scan_layouts); l++)
		for (int rev = 0; rev < 2; rev++) {
			for (int t = 0; t < COUNT(sum_types); t++)
				scan_case("cumsum", sum_types[t], scan_layouts[l], rev);
			for (int t = 0; t < COUNT(prod_types); t++)
				scan_case("cumprod", prod_types[t], scan_layouts[l], rev);
			scan_case("scan+", DT_I32, scan_layouts[l], rev);
			scan_case("scan+", DT_U64, scan_layouts[l], rev);
			scan_case("scanM", DT_F32, scan_layouts[l], rev);
			scan_tuple_case(scan_layouts[l], rev);
		}
	const layout long_layouts[] = {{1, 1, 1024, 0}, {1, 1, 4096, 0}, {2, 1024, 4, 0}, {2, 2, 2048, 1}};
	for (int l = 0; l < COUNT(long_layouts); l++)
		for (int rev = 0; rev < 2; rev++) {
			scan_narrow_case(DT_F16, long_layouts[l], rev);
			scan_narrow_case(DT_BF16, long_layouts[l], rev);
		}
	return ops_finish();
}
