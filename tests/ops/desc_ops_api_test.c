/* tests/ops: the tensor-descriptor operations beyond load and store, as
 * .tile kernels through blk.h, against references in C:
 *  - atomics through a descriptor (d.atomic_add / max / min / and / or /
 *    xor(offsets, value)): each element of the box inside the bounds
 *    combined once into the tensor, the others (and the row padding past N)
 *    untouched, on every element type each takes; one program (float adds
 *    round once, in program order) and, for integers, four programs adding
 *    into one box (atomicity);
 *  - padding_option = "nan": a box across the edges reads NaN outside; a
 *    K loop's dot of such tiles is NaN where K is not a multiple of the
 *    tile (with TMA: a tensor map that fills with NaN);
 *  - rows gathered and scattered (d.gather(rows, col), d.scatter(value,
 *    rows, col)) with rows out of bounds (negative, past the end) and
 *    repeated (a gather), columns across the edges.
 * The boxes of 32 to 128-byte rows, 16-byte aligned row strides, are the
 * ones the copy engine takes (with BLK_TMA=1 on an H100, the reductions
 * by cp.reduce.async.bulk.tensor, the NaN fill by the tensor map); the
 * rest the masked pointer form. All exact. */
#include "ops.h"

enum { PAD = 23 };

static const dt INTS[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32, DT_U64};
static const dt FLOATS[] = {DT_F16, DT_BF16, DT_F32, DT_F64};
static const dt ALL_FLOATS[] = {DT_F16, DT_BF16, DT_F32, DT_F64, DT_E4M3, DT_E5M2};

/* one element of the reference: old OP v (float max and min as maximum()) */
static val combine_ref(const char *op, dt t, val old, val v)
{
	if (!strcmp(op, "add"))
		return binop_ref("+", t, old, v);
	if (!strcmp(op, "and") || !strcmp(op, "or") || !strcmp(op, "xor"))
		return binop_ref(op[0] == 'a' ? "&" : op[0] == 'o' ? "|" : "^", t, old, v);
	bool max = !strcmp(op, "max");
	if (dt_float(t)) {
		if (isnan(old.f) || isnan(v.f))
			return isnan(old.f) ? v : old;
		return (max ? v.f > old.f : v.f < old.f) ? v : old;
	}
	bool gt = dt_signed(t) ? v.i > old.i : (uint64_t)v.i > (uint64_t)old.i;
	bool lt = dt_signed(t) ? v.i < old.i : (uint64_t)v.i < (uint64_t)old.i;
	return (max ? gt : lt) ? v : old;
}

static void random_fill(arr a)
{
	if (dt_float(a.t))
		fill_random(a, 50);
	else
		for (int64_t i = 0; i < a.n; i++)
			set_bits(a, i, rng_u64());
}

/* d.atomic_OP((om, on), v) for a dense BM x BN block v of x, into out (M x
 * N, row stride so), by G programs; SPELL picks the method or a function. */
static const char *ATOMIC_SRC =
	"kernel k(x: *$T, out: *$T, M: i32, N: i32, so: i32, om: i32, on: i32, BM: const i32, BN: const i32)\n"
	"        grid($G) {\n"
	"    let v = load(x + arange(0, BM)[:, None] * BN + arange(0, BN)[None, :]);\n"
	"    let dst = tensor_desc(out, (M, N), (so, 1), (BM, BN));\n"
	"    $CALL;\n"
	"}\n";

static void atomic_case(dt t, const char *op, int programs, int M, int N, int so, int om, int on, int BM, int BN)
{
	int64_t n_out = (int64_t)M * so + PAD;
	arr x = arr_new(t, BM * BN), out0 = arr_new(t, n_out), want = arr_new(t, n_out);
	random_fill(x);
	random_fill(out0);
	for (int64_t i = 0; i < n_out; i++)
		set_bits(want, i, get_bits(out0, i));
	for (int p = 0; p < programs; p++)
		for (int i = 0; i < BM; i++)
			for (int j = 0; j < BN; j++) {
				int r = om + i, c = on + j;
				if (r >= 0 && r < M && c >= 0 && c < N) {
					int64_t at = (int64_t)r * so + c;
					set_v(want, at, combine_ref(op, t, get_v(want, at), get_v(x, i * BN + j)));
				}
			}
	static int spelling;
	char call[96];
	switch (spelling++ % 3) {
	case 0: snprintf(call, sizeof call, "dst.atomic_%s((om, on), v)", op); break;
	case 1: snprintf(call, sizeof call, "atomic_%s(dst, (om, on), v)", op); break;
	default: snprintf(call, sizeof call, "desc_atomic_%s(dst, (om, on), v)", op); break;
	}
	blk_devptr dx = dev_from(x), dout = dev_from(out0);
	bool ok = run_kernel(render(ATOMIC_SRC, "T", dts[t].name, "G", num(programs), "CALL", call, NULL), NULL,
	                     ARGS(P(dx), P(dout), I(M), I(N), I(so), I(om), I(on)), CONSTS(CI("BM", BM), CI("BN", BN)),
	                     GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = dt_float(t) ? check_value(dev_read(dout, t, n_out), want, NULL, 0)
		                 : check_exact(dev_read(dout, t, n_out), want, NULL, 0);
	result(ok, "desc atomic_%s %s by %d program%s, %dx%d (row stride %d), %dx%d box at (%d, %d)", op, dts[t].name,
	       programs, programs == 1 ? "" : "s", M, N, so, BM, BN, om, on);
}

/* A box through a descriptor with padding_option = "nan", written densely. */
static const char *NAN_SRC =
	"kernel k(x: *$T, out: *$T, M: i32, N: i32, sx: i32, om: i32, on: i32, BM: const i32, BN: const i32)\n"
	"        grid(1) {\n"
	"    let src = tensor_desc(x, (M, N), (sx, 1), (BM, BN), padding_option = \"nan\");\n"
	"    store(out + arange(0, BM)[:, None] * BN + arange(0, BN)[None, :], src.load((om, on)));\n"
	"}\n";

static void nan_case(dt t, int M, int N, int sx, int om, int on, int BM, int BN)
{
	arr x = arr_new(t, (int64_t)M * sx), want = arr_new(t, BM * BN);
	fill_random(x, 10);
	for (int i = 0; i < BM; i++)
		for (int j = 0; j < BN; j++) {
			int r = om + i, c = on + j;
			bool in = r >= 0 && r < M && c >= 0 && c < N;
			set_f(want, i * BN + j, in ? get_f(x, (int64_t)r * sx + c) : NAN);
		}
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, BM * BN);
	bool ok = run_kernel(render(NAN_SRC, "T", dts[t].name, NULL), NULL,
	                     ARGS(P(dx), P(dout), I(M), I(N), I(sx), I(om), I(on)), CONSTS(CI("BM", BM), CI("BN", BN)),
	                     GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, BM * BN), want, NULL, 0);
	result(ok, "desc load with NaN padding %s %dx%d (row stride %d), %dx%d box at (%d, %d)", dts[t].name, M, N, sx,
	       BM, BN, om, on);
}

/* Rows rows[i] (an i32 array), columns col.. of x gathered into a dense
 * R x BN block, then scattered to the same rows of out (a descriptor of
 * the same shape): PADOPT the gather's padding. */
static const char *GATHER_SRC =
	"kernel k(x: *$T, out: *$T, rows: *i32, M: i32, N: i32, s: i32, col: i32, g: *$T, R: const i32,\n"
	"         BN: const i32) grid(1) {\n"
	"    let src = tensor_desc(x, (M, N), (s, 1), (1, BN)$PADOPT);\n"
	"    let dst = tensor_desc(out, (M, N), (s, 1), (1, BN));\n"
	"    let r = load(rows + arange(0, R));\n"
	"    let v = $GATHER;\n"
	"    store(g + arange(0, R)[:, None] * BN + arange(0, BN)[None, :], v);\n"
	"    $SCATTER;\n"
	"}\n";

static void gather_case(dt t, bool nan, int M, int N, int s, int R, int BN, int col, bool spell_fn)
{
	int64_t n = (int64_t)M * s + PAD;
	arr x = arr_new(t, n), out0 = arr_new(t, n), want_out = arr_new(t, n), rows = arr_new(DT_I32, R),
	    want_g = arr_new(t, R * BN);
	random_fill(x);
	random_fill(out0);
	for (int64_t i = 0; i < n; i++)
		set_bits(want_out, i, get_bits(out0, i));
	/* rows spread over the matrix and past it, some negative */
	int base = (int)rng_range(-2, M - R + 3);
	for (int i = 0; i < R; i++)
		set_i(rows, i, rng_range(0, 5) == 0 ? -1 - i : base + 2 * i - (i % 2) * R);
	for (int i = 0; i < R; i++) /* distinct: each row written once */
		for (int k = 0; k < i; k++)
			if (get_i(rows, i) == get_i(rows, k))
				set_i(rows, i, -100 - i);
	for (int i = 0; i < R; i++)
		for (int j = 0; j < BN; j++) {
			int r = (int)get_i(rows, i), c = col + j;
			bool in = r >= 0 && r < M && c >= 0 && c < N;
			int64_t at = (int64_t)r * s + c;
			if (in) {
				set_bits(want_g, i * BN + j, get_bits(x, at));
				set_bits(want_out, at, get_bits(x, at));
			} else if (nan) {
				set_f(want_g, i * BN + j, NAN);
			} else {
				set_bits(want_g, i * BN + j, 0);
			}
		}
	blk_devptr dx = dev_from(x), dout = dev_from(out0), drows = dev_from(rows), dg = dev_zeros(t, R * BN);
	const char *gather = spell_fn ? "desc_gather(src, r, col)" : "src.gather(r, col)";
	const char *scatter = spell_fn ? "scatter(dst, v, r, col)" : "dst.scatter(v, r, col)";
	bool ok = run_kernel(render(GATHER_SRC, "T", dts[t].name, "PADOPT", nan ? ", padding_option = \"nan\"" : "",
	                            "GATHER", gather, "SCATTER", scatter, NULL),
	                     NULL, ARGS(P(dx), P(dout), P(drows), I(M), I(N), I(s), I(col), P(dg)),
	                     CONSTS(CI("R", R), CI("BN", BN)), GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dg, t, R * BN), want_g, NULL, 0);
	if (ok)
		ok = check_exact(dev_read(dout, t, n), want_out, NULL, 0);
	result(ok, "desc gather%s and scatter %s %dx%d (row stride %d), %d rows of %d from column %d", nan ? " (NaN)" : "",
	       dts[t].name, M, N, s, R, BN, col);
}

/* C = A B with A through a descriptor with NaN padding, in a K loop of
 * dots (with BLK_TMA=1 on an H100, a's tiles come through a tensor map that
 * fills with NaN): where K is not a multiple of the tile's 32, the last
 * tile's columns past K are NaN, and so is every element of C; else C is
 * the product. */
static const char *NAN_DOT_SRC =
	"kernel k(a: *f16, b: *f16, c: *f32, M: i32, N: i32, K: i32) grid(cdiv(M, 64), cdiv(N, 64)) {\n"
	"    let ad = tensor_desc(a, (M, K), (K, 1), (64, 32), padding_option = \"nan\");\n"
	"    let bd = tensor_desc(b, (K, N), (N, 1), (32, 64));\n"
	"    let cd = tensor_desc(c, (M, N), (N, 1), (64, 64));\n"
	"    let m0 = program_id(0) * 64;\n"
	"    let n0 = program_id(1) * 64;\n"
	"    var acc = zeros((64, 64), f32);\n"
	"    for k in range(0, K, 32) {\n"
	"        acc = dot(ad.load((m0, k)), bd.load((k, n0)), acc);\n"
	"    }\n"
	"    cd.store((m0, n0), acc);\n"
	"}\n";

static void nan_dot_case(int M, int N, int K)
{
	arr a = arr_new(DT_F16, (int64_t)M * K), b = arr_new(DT_F16, (int64_t)K * N);
	fill_random(a, 1);
	fill_random(b, 1);
	double *want = host_alloc((size_t)M * N * sizeof *want);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += get_f(a, (int64_t)i * K + k) * get_f(b, (int64_t)k * N + j);
			want[i * N + j] = K % 32 ? NAN : s;
		}
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_zeros(DT_F32, (int64_t)M * N);
	bool ok = run_kernel(NAN_DOT_SRC, NULL, ARGS(P(da), P(db), P(dc), I(M), I(N), I(K)), NO_CONSTS, GRID(0)) ==
	          BLK_SUCCESS;
	if (ok)
		ok = check_close(dev_read(dc, DT_F32, (int64_t)M * N), want, NULL, 0, 1e-3, 1e-3, 0);
	result(ok, "dot of a NaN-padded descriptor's tiles, %dx%dx%d f16: %s", M, N, K,
	       K % 32 ? "K not a multiple of 32, every element NaN" : "the product");
}

/* An offset for a box of b along a dimension of n: inside, across either
 * edge, wholly before or past it. */
static int random_offset(int n, int b)
{
	switch (rng_range(0, 3)) {
	case 0: return (int)rng_range(0, n > b ? n - b : 0);
	case 1: return (int)rng_range(-b + 1, 0);
	case 2: return (int)rng_range(n - b + 1 > 0 ? n - b + 1 : 0, n);
	default: return (int)rng_range(-2 * b, n + b);
	}
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	static const char *const int_ops[] = {"add", "max", "min", "and", "or", "xor"};
	for (int i = 0; i < COUNT(INTS); i++)
		for (int k = 0; k < COUNT(int_ops); k++) {
			dt t = INTS[i];
			/* rows of 32 bytes or more, a 16-byte aligned stride */
			int bn = 128 / dts[t].bytes > 64 ? 64 : 128 / dts[t].bytes, so = bn + 16;
			atomic_case(t, int_ops[k], 1, 37, bn + 5, so, random_offset(37, 16), random_offset(bn + 5, bn), 16, bn);
			atomic_case(t, int_ops[k], 4, 20, 24, 24, random_offset(20, 8), random_offset(24, 16), 8, 16);
		}
	static const char *const float_ops[] = {"add", "max", "min"};
	for (int i = 0; i < COUNT(FLOATS); i++)
		for (int k = 0; k < COUNT(float_ops); k++) {
			dt t = FLOATS[i];
			int bn = 128 / dts[t].bytes > 64 ? 64 : 128 / dts[t].bytes, so = bn + 16;
			atomic_case(t, float_ops[k], 1, 37, bn, so, 30, bn - 8, 16, bn);      /* bottom right corner */
			atomic_case(t, float_ops[k], 1, 37, bn, so, -5, -9, 16, bn);          /* top left */
			atomic_case(t, float_ops[k], 1, 40, 48, 48, 8, 0, 8, 32);            /* inside */
		}
	atomic_case(DT_F32, "add", 1, 16, 16, 16, 16, 0, 16, 16); /* just past the matrix: nothing changes */
	for (int i = 0; i < COUNT(ALL_FLOATS); i++) {
		dt t = ALL_FLOATS[i];
		nan_case(t, 37, 45, 48, 30, 40, 16, 16);
		nan_case(t, 20, 24, 32, random_offset(20, 8), random_offset(24, 32), 8, 32);
		nan_case(t, 16, 16, 16, 0, 0, 16, 16); /* all inside: no NaN */
	}
	nan_dot_case(100, 64, 48);
	nan_dot_case(100, 128, 64);
	static const dt GATHER_TYPES[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U32, DT_F16, DT_BF16, DT_F32, DT_F64, DT_E5M2};
	for (int i = 0; i < COUNT(GATHER_TYPES); i++) {
		dt t = GATHER_TYPES[i];
		gather_case(t, false, 30, 40, 48, 8, 16, (int)rng_range(-20, 40), i % 2);
		gather_case(t, false, 9, 20, 20, 16, 32, (int)rng_range(-10, 10), i % 2 == 0);
		if (dt_float(t))
			gather_case(t, true, 30, 40, 48, 8, 16, 30, i % 2);
	}
	return ops_finish();
}
