/* tests/ops: conversions. x.to(T) for every pair of the 15 element types
 * (i1, i8..i64, u8..u64, f16, bf16, f32, f64, f8e4m3, f8e5m2), and
 * bitcast(x, T) for every pair of one width, as .tile kernels through blk.h.
 *
 * The reference is cast_ref in ops.h: integer narrowing wraps, to i1 is
 * x != 0, integer to float and float narrowing round to nearest even (the
 * float formats are encoded by ops.h's own fp_enc), float to integer
 * truncates toward zero. Where language.md leaves the result undefined (a
 * float out of an integer type's range, NaN to an integer) the reference
 * saturates and takes NaN to 0, as the interpreter does and as PTX's
 * cvt.rzi does; the 8-bit floats saturate on overflow (an infinity too), as
 * NVIDIA's cvt.rn.satfinite does. Everything is checked exactly: NaN matches
 * any NaN, the sign of zero counts.
 *
 * The inputs mix random values over the source type's whole range, values
 * at the edges of the destination's range, exact ties of the destination's
 * rounding (and their neighbours), subnormals, and specials. */
#include "ops.h"

enum { N = 2048 };
static const dt ALL[] = {DT_I1,  DT_I8,  DT_I16,  DT_I32, DT_I64, DT_U8,   DT_U16,  DT_U32,
                         DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64, DT_E4M3, DT_E5M2};

static int ebits_of(dt t) { return t == DT_F64 ? 11 : fmt_of(t)->ebits; }

/* A random value of float type `to` (finite), as a double. */
static double random_float_of(dt to)
{
	int eb = ebits_of(to), bias = (1 << (eb - 1)) - 1;
	int e = (int)rng_range(1 - bias - dt_mbits(to), bias); /* subnormals to the top */
	double v = round_to(to, ldexp(1.0 + rng_unit(), e));
	if (isinf(v) || v > dt_max(to))
		v = dt_max(to);
	return rng_u64() & 1 ? -v : v;
}

/* Integer inputs: every bit pattern, every bit length, ties of float
 * destinations, small values. */
static int64_t int_input(dt src, dt dst, int cat)
{
	int b = dts[src].bits;
	switch (cat) {
	case 0: return wrap_int(src, rng_u64());
	case 1: {
		uint64_t v = rng_u64() >> rng_range(0, 63);
		if (dt_signed(src) && (rng_u64() & 1))
			v = 0 - v;
		return wrap_int(src, v);
	}
	case 2:
		if (dt_float(dst) && b > dt_mbits(dst) + 1) {
			/* an exact tie: p + 1 significant bits ending in 1, shifted; +-1 too */
			int p = dt_mbits(dst) + 1, room = (dt_signed(src) ? b - 1 : b) - (p + 1);
			if (room < 0)
				return wrap_int(src, rng_u64());
			uint64_t m = (1ull << p) | (rng_u64() & ((1ull << p) - 1));
			uint64_t v = ((m << 1) | 1) << rng_range(0, room);
			v += (uint64_t)rng_range(-1, 1);
			if (dt_signed(src) && (rng_u64() & 1))
				v = 0 - v;
			return wrap_int(src, v);
		}
		return wrap_int(src, rng_u64());
	default: return wrap_int(src, (uint64_t)rng_range(dt_signed(src) ? -300 : 0, 300));
	}
}

/* Float inputs. */
static double float_input(dt src, dt dst, int cat)
{
	switch (cat) {
	case 0: return random_float_of(src);
	case 1:
		if (dt_float(dst) && dt_mbits(dst) < dt_mbits(src)) {
			/* the midpoint of two neighbours of dst (exact in src), or next to it */
			double v = fabs(random_float_of(dst));
			if (v >= dt_max(dst))
				v = dt_max(dst) / 2;
			double u = ulp_of(dst, v);
			double mid = v + u / 2;
			int k = (int)rng_range(0, 2);
			if (k == 1)
				mid += ulp_of(src, mid);
			if (k == 2)
				mid -= ulp_of(src, mid);
			return rng_u64() & 1 ? -mid : mid;
		}
		if (dt_int(dst) && dst != DT_I1) {
			/* around the edges of the integer range */
			int b = dts[dst].bits;
			double lo = dt_signed(dst) ? -ldexp(1.0, b - 1) : 0, hi = dt_signed(dst) ? ldexp(1.0, b - 1) : ldexp(1.0, b);
			double edge = rng_u64() & 1 ? lo : hi;
			double v = edge * (1 + ldexp(rng_uniform(-1, 1), -(int)rng_range(1, 30)));
			if (rng_range(0, 3) == 0)
				v = edge + rng_uniform(-3, 3);
			return v;
		}
		return random_float_of(src);
	case 2: return rng_uniform(-300, 300);
	default: {
		double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 0.5, -0.5, 0.9999, -0.9999, 1.5, -1.5,
		               2.5, -2.5, 255.5, 256.0, -129.0, 65504.0, 65520.0, 65519.99, 448.0, 464.0, 465.0,
		               57344.0, 61440.0, 1e-8, -1e-8, 6e-8, 3e-8, 2.98e-8, 1e-45, 1.4e-45, 3e38, 3.5e38,
		               -3.5e38, 1e300, 4294967296.0, 2147483648.0, -2147483649.0, 9.3e18, 1.8e19, 2e19};
		return sp[rng_range(0, COUNT(sp) - 1)];
	}
	}
}

static const char *CAST_SRC =
	"kernel k(x: *$A, out: *$B, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    let v = load(x + offs, mask = m);\n"
	"    store(out + offs, $EXPR, mask = m);\n"
	"}\n";

static void cast_case(dt src, dt dst)
{
	arr x = arr_new(src, N), want = arr_new(dst, N);
	for (int64_t i = 0; i < N; i++) {
		int cat = (int)(i % 4);
		if (src == DT_I1)
			set_i(x, i, (int64_t)(rng_u64() & 1));
		else if (dt_float(src))
			set_f(x, i, float_input(src, dst, cat));
		else
			set_i(x, i, int_input(src, dst, cat));
	}
	for (int64_t i = 0; i < N; i++)
		set_v(want, i, cast_ref(get_v(x, i), src, dst));
	char expr[64];
	snprintf(expr, sizeof expr, "v.to(%s)", dts[dst].name);
	blk_devptr dx = dev_from(x), dout = dev_zeros(dst, N);
	bool ok = run_kernel(render(CAST_SRC, "A", dts[src].name, "B", dts[dst].name, "EXPR", expr, NULL), "k",
	                     ARGS(P(dx), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, dst, N), want, &x, 1);
	result(ok, "cast %s -> %s", dts[src].name, dts[dst].name);
}

/* bitcast(x, T) and x.to(T, bitcast = true): the bits stay. */
static void bitcast_case(dt src, dt dst, bool method)
{
	arr x = arr_new(src, N), want = arr_new(dst, N);
	for (int64_t i = 0; i < N; i++) {
		uint64_t b = rng_u64();
		set_bits(x, i, b);
		set_bits(want, i, b);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(dst, N);
	char expr[64];
	snprintf(expr, sizeof expr, method ? "v.to(%s, bitcast = true)" : "bitcast(v, %s)", dts[dst].name);
	bool ok = run_kernel(render(CAST_SRC, "A", dts[src].name, "B", dts[dst].name, "EXPR", expr, NULL), "k",
	                     ARGS(P(dx), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok) {
		/* the bits, exactly (a NaN's payload too: a bitcast moves no value) */
		arr got = dev_read(dout, dst, N);
		int bad = 0;
		for (int64_t i = 0; i < N; i++)
			if (get_bits(got, i) != get_bits(want, i) && bad++ < 5)
				why("[%lld] got bits 0x%llx, want 0x%llx\n", (long long)i, (unsigned long long)get_bits(got, i),
				    (unsigned long long)get_bits(want, i));
		ok = bad == 0;
	}
	result(ok, "%s %s -> %s", method ? "to(bitcast = true)" : "bitcast", dts[src].name, dts[dst].name);
}

/* A conversion of a runtime scalar parameter. */
static const char *SCALAR_SRC = "kernel k(s: $A, out: *$B) {\n"
                                "    store(out, s.to($B));\n"
                                "}\n";

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	for (int a = 0; a < COUNT(ALL); a++)
		for (int b = 0; b < COUNT(ALL); b++)
			cast_case(ALL[a], ALL[b]);

	const dt widths[4][4] = {{DT_I8, DT_U8, DT_E4M3, DT_E5M2},
	                         {DT_I16, DT_U16, DT_F16, DT_BF16},
	                         {DT_I32, DT_U32, DT_F32, DT_COUNT},
	                         {DT_I64, DT_U64, DT_F64, DT_COUNT}};
	for (int w = 0; w < 4; w++)
		for (int a = 0; a < 4; a++)
			for (int b = 0; b < 4; b++)
				if (a != b && widths[w][a] != DT_COUNT && widths[w][b] != DT_COUNT)
					bitcast_case(widths[w][a], widths[w][b], false);
	bitcast_case(DT_F32, DT_I32, true);
	bitcast_case(DT_BF16, DT_U16, true);

	/* scalars: f64 and i64 parameters converted in the kernel */
	struct {
		dt a, b;
		double f;
		int64_t i;
	} sc[] = {
		{DT_F64, DT_F16, 65519.99, 0}, {DT_F64, DT_I32, -3.99, 0},     {DT_F64, DT_U8, 300.7, 0},
		{DT_F32, DT_BF16, 1.00390625, 0}, {DT_I64, DT_F32, 0, 16777217}, {DT_I64, DT_I8, 0, 383},
		{DT_I32, DT_F16, 0, 2049},     {DT_F64, DT_E4M3, 17.0, 0},
	};
	for (int i = 0; i < COUNT(sc); i++) {
		val v = {sc[i].i, sc[i].f};
		arr want = arr_new(sc[i].b, 1);
		if (dt_float(sc[i].a))
			v.f = round_to(sc[i].a, v.f);
		set_v(want, 0, cast_ref(v, sc[i].a, sc[i].b));
		blk_devptr dout = dev_zeros(sc[i].b, 1);
		blk_arg s = dt_float(sc[i].a) ? F(v.f) : I(v.i);
		bool ok = run_kernel(render(SCALAR_SRC, "A", dts[sc[i].a].name, "B", dts[sc[i].b].name, NULL), "k",
		                     ARGS(s, P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
		arr in = arr_new(sc[i].a, 1);
		set_v(in, 0, v);
		if (ok)
			ok = check_exact(dev_read(dout, sc[i].b, 1), want, &in, 1);
		result(ok, "cast scalar parameter %s %s -> %s", dts[sc[i].a].name, show(in, 0), dts[sc[i].b].name);
	}
	return ops_finish();
}
