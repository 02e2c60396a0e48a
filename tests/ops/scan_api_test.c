/* tests/ops: scans over lines of every length, as .tile kernels through blk.h.
 *   lengths   1, 2, 4, ... 2^16 along axis 0 of 1-D blocks (cumsum of f32
 *             and i32, forward and reverse; a masked tail); 1 to 2^15 along
 *             both axes of 2-D blocks and 1 to 2^14 along the three axes of
 *             3-D blocks (the other dimensions 2)
 *   dtypes    cumsum of every type it takes (i1, the integers, f16, bf16,
 *             f32, f64, f8e4m3, f8e5m2), cumprod of the integers and floats
 *   combine   associative_scan of two blocks with a combine that is not
 *             commutative: affine maps x -> a x + b composed in order,
 *             (a, b) then (c, d) = (a c, b c + d); and of four blocks, the
 *             products of 2x2 matrices
 * Every case runs 2 programs, each scanning its own block, and varies
 * num_warps (1 to 32), so that on a GPU the line's bits fall on registers,
 * lanes, warps and the chunks of registers above them in each mix.
 *
 * Exact checks only. Integers wrap, so every order of the combines gives the
 * same results. Float inputs are small multiples of a power of two (cumsum:
 * k/8, |k| < 64; fp8: integers below 8), so every partial sum is exact in
 * f32, whatever the order: f32 and f64 outputs are the exact prefix sums and
 * f16, bf16 and fp8 outputs (accumulated in f32) the exact ones rounded
 * once (fp8 saturating, as its casts do). cumprod inputs are +-1 with a few +-2 and +-1/2: exact products,
 * lines no longer than 4096 so that no partial product leaves f32's range. */
#include "ops.h"

enum { PROGS = 2 };

typedef struct shape {
	int rank, dims[3], axis;
} shape;

static int numel_of(shape s)
{
	int n = 1;
	for (int d = 0; d < s.rank; d++)
		n *= s.dims[d];
	return n;
}

static const char *shape_name(shape s)
{
	static char b[4][64];
	static int k;
	char *p = b[k++ & 3];
	if (s.rank == 1)
		snprintf(p, 64, "(%d,) axis 0", s.dims[0]);
	else if (s.rank == 2)
		snprintf(p, 64, "(%d, %d) axis %d", s.dims[0], s.dims[1], s.axis);
	else
		snprintf(p, 64, "(%d, %d, %d) axis %d", s.dims[0], s.dims[1], s.dims[2], s.axis);
	return p;
}

/* The block's row-major offsets. */
static const char *offs_expr(shape s, char *buf, size_t n)
{
	int *d = s.dims;
	if (s.rank == 1)
		snprintf(buf, n, "arange(0, %d)", d[0]);
	else if (s.rank == 2)
		snprintf(buf, n, "arange(0, %d)[:, None] * %d + arange(0, %d)[None, :]", d[0], d[1], d[1]);
	else
		snprintf(buf, n, "arange(0, %d)[:, None, None] * %d + arange(0, %d)[None, :, None] * %d + "
		         "arange(0, %d)[None, None, :]", d[0], d[1] * d[2], d[1], d[2], d[2]);
	return buf;
}

/* Line geometry: element j of line (o, i) is at (o * len + j) * inner + i. */
static void split(shape s, int *outer, int *len, int *inner)
{
	*outer = *inner = 1;
	for (int d = 0; d < s.axis; d++)
		*outer *= s.dims[d];
	for (int d = s.axis + 1; d < s.rank; d++)
		*inner *= s.dims[d];
	*len = s.dims[s.axis];
}

/* num_warps for a case: many warps for long blocks (at most 64 elements
 * a thread), else a mix of 1, 4 and 8 by the case's number. */
static int warps_for(int elems, int salt)
{
	if (elems >= 8192) {
		int w = elems / 2048;
		return w > 32 ? 32 : w;
	}
	static const int mix[] = {4, 1, 8};
	return mix[salt % 3];
}

static dt acc_type(const char *op, dt t)
{
	if (!strcmp(op, "cumsum") && dt_int(t) && dts[t].bits < 32)
		return dt_signed(t) || t == DT_I1 ? DT_I32 : DT_U32;
	return t;
}

/* ---- cumsum and cumprod ------------------------------------------------------------- */

static const char *SCAN_SRC = "kernel k(x: *$T, out: *$R, n: i32) {\n"
                              "    let p = program_id(0);\n"
                              "    let i = $OFFS;\n"
                              "    let m = i < n;\n"
                              "    let v = load(x + p * $PER + i, mask = m, other = 0);\n"
                              "    let r: $R = $OP(v, axis = $AXIS$REV);\n"
                              "    store(out + p * $PER + i, r, mask = m);\n"
                              "}\n";

static void fill_inputs(arr x, const char *op, dt t)
{
	bool prod = !strcmp(op, "cumprod");
	for (int64_t i = 0; i < x.n; i++) {
		if (dt_int(t)) {
			set_bits(x, i, t == DT_I1 ? rng_u64() & 1 : rng_u64());
		} else if (prod) {
			int r = (int)rng_range(0, 31);
			double v = r == 0 ? 2 : r == 1 ? 0.5 : 1;
			set_f(x, i, rng_range(0, 1) ? v : -v);
		} else if (t == DT_E4M3 || t == DT_E5M2) {
			set_f(x, i, (double)rng_range(-7, 7));
		} else {
			set_f(x, i, (double)rng_range(-63, 63) / 8);
		}
	}
}

/* op: cumsum or cumprod of type t over shape s, the first n elements of
 * each program's block loaded (the rest masked off: other 0). */
static void scan_case(const char *op, dt t, shape s, bool rev, int n, int warps)
{
	bool prod = !strcmp(op, "cumprod");
	dt tr = acc_type(op, t);
	int per = numel_of(s), total = PROGS * per, outer, len, inner;
	split(s, &outer, &len, &inner);
	arr x = arr_new(t, total), want = arr_new(tr, total);
	fill_inputs(x, op, t);
	for (int p = 0; p < PROGS; p++)
		for (int o = 0; o < outer; o++)
			for (int i = 0; i < inner; i++) {
				uint64_t si = prod ? 1 : 0;
				double sf = prod ? 1 : 0; /* exact (see the header) */
				for (int q = 0; q < len; q++) {
					int j = rev ? len - 1 - q : q, e = (o * len + j) * inner + i;
					bool in = e < n;
					if (dt_int(t)) {
						uint64_t v = in ? (uint64_t)get_i(x, p * per + e) : 0;
						si = prod ? si * v : si + v;
					} else {
						double v = in ? get_f(x, p * per + e) : 0;
						sf = prod ? sf * v : sf + v;
					}
					if (!in)
						continue;
					if (dt_int(t))
						set_i(want, p * per + e, wrap_int(tr, si));
					else if (t == DT_E4M3 || t == DT_E5M2) /* casts to fp8 saturate */
						set_bits(want, p * per + e, fp_enc(*fmt_of(t), sf, true));
					else
						set_f(want, p * per + e, sf);
				}
			}
	char ob[256], per_s[16], ax[8];
	snprintf(per_s, sizeof per_s, "%d", per);
	snprintf(ax, sizeof ax, "%d", s.axis);
	const char *src = render(SCAN_SRC, "T", dts[t].name, "R", dts[tr].name, "OFFS", offs_expr(s, ob, sizeof ob), "PER",
	                         per_s, "OP", op, "AXIS", ax, "REV", rev ? ", reverse = true" : "", NULL);
	/* out starts as want, with the elements the kernel must write spoiled:
	 * the masked-off tail must keep its values */
	arr spoiled = arr_new(tr, total);
	memcpy(spoiled.p, want.p, (size_t)total * (size_t)dts[tr].bytes);
	for (int p = 0; p < PROGS; p++)
		for (int e = 0; e < n && e < per; e++)
			set_bits(spoiled, p * per + e, ~get_bits(want, p * per + e));
	blk_devptr dx = dev_from(x), dout = dev_from(spoiled);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dout), I(n)), CONSTS(CI("num_warps", warps)), GRID(PROGS, 1, 1)) ==
	          BLK_SUCCESS;
	if (ok)
		ok = check_value(dev_read(dout, tr, total), want, &x, 1);
	result(ok, "%s %s %s%s%s, num_warps %d", op, dts[t].name, shape_name(s), rev ? " reverse" : "",
	       n < per ? " masked" : "", warps);
}

/* ---- associative_scan with a combine that does not commute -------------------------- */

static const char *AFFINE_SRC = "fn compose(a, b, c, d) {\n"
                                "    return a * c, b * c + d;\n"
                                "}\n"
                                "kernel k(x: *i32, y: *i32, ra: *i32, rb: *i32) {\n"
                                "    let i = program_id(0) * $PER + $OFFS;\n"
                                "    let a, b = associative_scan((load(x + i), load(y + i)), $AXIS, compose$REV);\n"
                                "    store(ra + i, a);\n"
                                "    store(rb + i, b);\n"
                                "}\n";

static const char *MATRIX_SRC = "fn mul(a, b, c, d, e, f, g, h) {\n"
                                "    return a * e + b * g, a * f + b * h, c * e + d * g, c * f + d * h;\n"
                                "}\n"
                                "kernel k(m: *u64, r: *u64) {\n"
                                "    let i = program_id(0) * $PER + $OFFS;\n"
                                "    let p, q, s, t = associative_scan((load(m + i), load(m + $N + i), load(m + 2 * $N + i),\n"
                                "                                       load(m + 3 * $N + i)), $AXIS, mul$REV);\n"
                                "    store(r + i, p);\n"
                                "    store(r + $N + i, q);\n"
                                "    store(r + 2 * $N + i, s);\n"
                                "    store(r + 3 * $N + i, t);\n"
                                "}\n";

/* kind 'a': affine maps of i32 (two blocks); 'm': 2x2 matrices of u64 (four). */
static void noncomm_case(char kind, shape s, bool rev, int warps)
{
	int per = numel_of(s), total = PROGS * per, outer, len, inner, nb = kind == 'a' ? 2 : 4;
	split(s, &outer, &len, &inner);
	dt t = kind == 'a' ? DT_I32 : DT_U64;
	arr x = arr_new(t, (int64_t)nb * total), want = arr_new(t, (int64_t)nb * total);
	fill_random(x, 0);
	for (int p = 0; p < PROGS; p++)
		for (int o = 0; o < outer; o++)
			for (int i = 0; i < inner; i++) {
				uint64_t acc[4] = {0};
				for (int q = 0; q < len; q++) {
					int j = rev ? len - 1 - q : q, e = p * per + (o * len + j) * inner + i;
					uint64_t v[4];
					for (int c = 0; c < nb; c++)
						v[c] = (uint64_t)get_i(x, (int64_t)c * total + e);
					if (q == 0) {
						memcpy(acc, v, sizeof acc);
					} else if (kind == 'a') { /* acc then v */
						uint64_t a = acc[0] * v[0], b = acc[1] * v[0] + v[1];
						acc[0] = a;
						acc[1] = b;
					} else { /* acc times v */
						uint64_t r[4] = {acc[0] * v[0] + acc[1] * v[2], acc[0] * v[1] + acc[1] * v[3],
						                 acc[2] * v[0] + acc[3] * v[2], acc[2] * v[1] + acc[3] * v[3]};
						memcpy(acc, r, sizeof acc);
					}
					for (int c = 0; c < nb; c++)
						set_i(want, (int64_t)c * total + e, wrap_int(t, acc[c]));
				}
			}
	char ob[256], per_s[16], ax[8], n_s[16];
	snprintf(per_s, sizeof per_s, "%d", per);
	snprintf(n_s, sizeof n_s, "%d", total);
	snprintf(ax, sizeof ax, "%d", s.axis);
	const char *src = render(kind == 'a' ? AFFINE_SRC : MATRIX_SRC, "OFFS", offs_expr(s, ob, sizeof ob), "PER", per_s,
	                         "N", n_s, "AXIS", ax, "REV", rev ? ", reverse = true" : "", NULL);
	bool ok;
	if (kind == 'a') {
		arr xa = {t, total, x.p}, xb = {t, total, x.p + (size_t)total * 4};
		blk_devptr da = dev_from(xa), db = dev_from(xb), ra = dev_zeros(t, total), rb = dev_zeros(t, total);
		ok = run_kernel(src, NULL, ARGS(P(da), P(db), P(ra), P(rb)), CONSTS(CI("num_warps", warps)),
		                GRID(PROGS, 1, 1)) == BLK_SUCCESS;
		if (ok) {
			arr wa = {t, total, want.p}, wb = {t, total, want.p + (size_t)total * 4};
			ok = check_exact(dev_read(ra, t, total), wa, &xa, 1) && check_exact(dev_read(rb, t, total), wb, &xb, 1);
		}
	} else {
		blk_devptr dm = dev_from(x), dr = dev_zeros(t, (int64_t)nb * total);
		ok = run_kernel(src, NULL, ARGS(P(dm), P(dr)), CONSTS(CI("num_warps", warps)), GRID(PROGS, 1, 1)) ==
		     BLK_SUCCESS;
		if (ok)
			ok = check_exact(dev_read(dr, t, (int64_t)nb * total), want, NULL, 0);
	}
	result(ok, "associative_scan(%s) %s%s, num_warps %d", kind == 'a' ? "affine maps (a, b) . (c, d), i32" :
	       "2x2 matrix products, u64", shape_name(s), rev ? " reverse" : "", warps);
}

/* A shape of rank r, length len along axis, the other dimensions 2. */
static shape line_shape(int r, int axis, int len)
{
	shape s = {r, {2, 2, 2}, axis};
	s.dims[axis] = len;
	return s;
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	int salt = 0;
	/* lengths along every axis */
	for (int lg = 0; lg <= 16; lg++) {
		int len = 1 << lg;
		shape s = line_shape(1, 0, len);
		for (int rev = 0; rev < 2; rev++) {
			scan_case("cumsum", DT_F32, s, rev, len, warps_for(len, salt++));
			scan_case("cumsum", DT_I32, s, rev, len > 4 ? len - 3 : len, warps_for(len, salt++));
		}
	}
	for (int r = 2; r <= 3; r++)
		for (int axis = 0; axis < r; axis++)
			for (int lg = 0; lg <= (r == 2 ? 15 : 14); lg++) {
				shape s = line_shape(r, axis, 1 << lg);
				int per = numel_of(s);
				scan_case("cumsum", DT_F32, s, lg & 1, per, warps_for(per, salt++));
				if (lg % 3 == 0)
					noncomm_case('a', s, !(lg & 1), warps_for(per, salt++));
			}
	/* every type cumsum and cumprod take */
	const dt sum_types[] = {DT_I1, DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32, DT_U64,
	                        DT_F16, DT_BF16, DT_F32, DT_F64, DT_E4M3, DT_E5M2};
	const dt prod_types[] = {DT_I8, DT_I32, DT_U16, DT_U32, DT_I64, DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};
	const shape type_shapes[] = {{1, {1024, 1, 1}, 0}, {2, {16, 64, 1}, 0}, {2, {8, 128, 1}, 1}, {3, {4, 32, 8}, 1},
	                             {3, {2, 8, 256}, 2}, {1, {4096, 1, 1}, 0}};
	for (int i = 0; i < COUNT(type_shapes); i++)
		for (int rev = 0; rev < 2; rev++) {
			shape s = type_shapes[i];
			for (int t = 0; t < COUNT(sum_types); t++)
				scan_case("cumsum", sum_types[t], s, rev, numel_of(s), warps_for(numel_of(s), salt++));
			for (int t = 0; t < COUNT(prod_types); t++)
				scan_case("cumprod", prod_types[t], s, rev, numel_of(s), warps_for(numel_of(s), salt++));
		}
	/* combines that do not commute, on every warp count */
	const shape nc_shapes[] = {{1, {1, 1, 1}, 0},    {1, {32, 1, 1}, 0},   {1, {512, 1, 1}, 0},
	                           {1, {8192, 1, 1}, 0}, {2, {64, 32, 1}, 0},  {2, {4, 2048, 1}, 1},
	                           {3, {8, 16, 4}, 0},   {3, {2, 64, 8}, 1},   {3, {4, 4, 128}, 2}};
	const int warp_counts[] = {1, 2, 4, 8};
	for (int i = 0; i < COUNT(nc_shapes); i++)
		for (int rev = 0; rev < 2; rev++) {
			int w = warp_counts[(i + rev) % COUNT(warp_counts)];
			noncomm_case('a', nc_shapes[i], rev, w);
			noncomm_case('m', nc_shapes[i], rev, w);
		}
	return ops_finish();
}
