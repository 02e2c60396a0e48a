/* Pointer conversions (docs/language.md, "Conversions with pointers"):
 * x.to(*U) reads the same address as another element type; p.to(i64) and
 * the like give the address as an integer; i.to(*T) makes a pointer of one.
 * Each is checked against C on random data: the bits a reinterpreting load
 * must see, the addresses blk_malloc gave, loads through pointers rebuilt
 * from integers (kept in memory, or computed), and on the interpreter the
 * bounds check of an access through a converted pointer. */
#include "ops.h"

enum { N = 1000, BLOCK = 256 };

/* x.to(*U): element i of the result is element i of x's bytes read as U. */
static void reinterpret_case(dt from, dt to)
{
	int64_t n_to = (int64_t)N * dts[from].bytes / dts[to].bytes;
	arr x = arr_new(from, N), want = arr_new(to, n_to);
	for (int64_t i = 0; i < N; i++)
		set_bits(x, i, rng_u64());
	memcpy(want.p, x.p, (size_t)N * (size_t)dts[from].bytes);
	const char *src = render("kernel k(x: *$A, out: *$B, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	                         "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	                         "    let m = offs < n;\n"
	                         "    store(out + offs, load(x.to(*$B) + offs, mask = m), mask = m);\n"
	                         "}\n",
	                         "A", dts[from].name, "B", dts[to].name, NULL);
	blk_devptr dx = dev_from(x), dout = dev_zeros(to, n_to);
	bool ok = run_kernel(src, "k", ARGS(P(dx), P(dout), I(n_to)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok) /* compared as bits: a NaN read as a float is the same pattern */
		ok = memcmp(dev_read(dout, to, n_to).p, want.p, (size_t)n_to * (size_t)dts[to].bytes) == 0 ||
		     (why("the bytes differ\n"), false);
	result(ok, "x.to(*%s) for x: *%s reads x's bytes as %s", dts[to].name, dts[from].name, dts[to].name);
}

/* A block of pointers to an integer of type t: each lane's address. */
static void address_case(dt t)
{
	arr x = arr_new(DT_F32, N), want = arr_new(t, BLOCK);
	blk_devptr dx = dev_from(x);
	for (int64_t i = 0; i < BLOCK; i++)
		set_i(want, i, wrap_int(t, (uint64_t)dx + (uint64_t)i * 12));
	const char *src = render("kernel k(x: *f32, out: *$T) {\n"
	                         "    let offs = arange(0, 256);\n"
	                         "    store(out + offs, (x + offs * 3).to($T));\n"
	                         "}\n",
	                         "T", dts[t].name, NULL);
	blk_devptr dout = dev_zeros(t, BLOCK);
	bool ok = run_kernel(src, "k", ARGS(P(dx), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, BLOCK), want, NULL, 0);
	result(ok, "(x + offs).to(%s) is each lane's address%s", dts[t].name, dts[t].bits < 64 ? ", wrapped" : "");
}

/* Addresses as integers of type t in memory (a gather table), turned back
 * into pointers: out[i] = *(f32 *)table[i], table[i] = &x[perm[i]]. */
static void table_case(dt t)
{
	arr x = arr_new(DT_F32, N), table = arr_new(t, BLOCK), want = arr_new(DT_F32, BLOCK);
	fill_random(x, 100);
	blk_devptr dx = dev_from(x);
	for (int64_t i = 0; i < BLOCK; i++) {
		int64_t j = rng_range(0, N - 1);
		set_i(table, i, (int64_t)((uint64_t)dx + (uint64_t)j * 4));
		set_f(want, i, get_f(x, j));
	}
	const char *src = render("kernel k(table: *$T, out: *f32) {\n"
	                         "    let offs = arange(0, 256);\n"
	                         "    let a = load(table + offs);\n"
	                         "    store(out + offs, load(a.to(*f32)));\n"
	                         "}\n",
	                         "T", dts[t].name, NULL);
	blk_devptr dt_ = dev_from(table), dout = dev_zeros(DT_F32, BLOCK);
	bool ok = run_kernel(src, "k", ARGS(P(dt_), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_F32, BLOCK), want, &x, 1);
	result(ok, "addresses kept as %s, loaded and turned back into *f32", dts[t].name);
}

/* Address arithmetic on integers: (x.to(i64) + 8 * i).to(*f64), masked. */
static void arith_case(void)
{
	arr x = arr_new(DT_F64, N), want = arr_new(DT_F64, N);
	fill_random(x, 1e6);
	for (int64_t i = 0; i < N; i++)
		set_f(want, i, get_f(x, N - 1 - i) * 2);
	const char *src = "kernel k(x: *f64, out: *f64, n: i32, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	                  "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	                  "    let m = offs < n;\n"
	                  "    let a = x.to(i64) + (n - 1 - offs).to(i64) * 8;\n"
	                  "    store(out + offs, load(a.to(*f64), mask = m) * 2.0, mask = m);\n"
	                  "}\n";
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_F64, N);
	bool ok = run_kernel(src, "k", ARGS(P(dx), P(dout), I(N)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_F64, N), want, &x, 1);
	result(ok, "an address computed as i64, back to *f64 (reversed, masked)");
}

/* Pointers compare as unsigned addresses: random 64-bit values, half with
 * the top bit set, made pointers and compared lane by lane with each op. */
static void compare_case(void)
{
	static const char *ops[] = {"<", "<=", ">", ">=", "==", "!="};
	for (int k = 0; k < 6; k++) { /* result() frees the case's arrays */
		arr a = arr_new(DT_U64, BLOCK), b = arr_new(DT_U64, BLOCK);
		for (int64_t i = 0; i < BLOCK; i++) {
			uint64_t u = rng_u64(), v = i % 4 == 0 ? u : rng_u64();
			set_bits(a, i, u);
			set_bits(b, i, i % 8 == 1 ? v ^ (1ull << 63) : v);
		}
		blk_devptr da = dev_from(a), db = dev_from(b);
		arr want = arr_new(DT_I32, BLOCK);
		for (int64_t i = 0; i < BLOCK; i++) {
			uint64_t u = get_u(a, i), v = get_u(b, i);
			bool r = k == 0 ? u < v : k == 1 ? u <= v : k == 2 ? u > v : k == 3 ? u >= v : k == 4 ? u == v : u != v;
			set_i(want, i, r);
		}
		const char *src = render("kernel k(a: *u64, b: *u64, out: *i32) {\n"
		                         "    let offs = arange(0, 256);\n"
		                         "    let p = load(a + offs).to(*f32);\n"
		                         "    let q = load(b + offs).to(*f32);\n"
		                         "    store(out + offs, (p $OP q).to(i32));\n"
		                         "}\n",
		                         "OP", ops[k], NULL);
		blk_devptr dout = dev_zeros(DT_I32, BLOCK);
		bool ok = run_kernel(src, "k", ARGS(P(da), P(db), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
		if (ok)
			ok = check_exact(dev_read(dout, DT_I32, BLOCK), want, NULL, 0);
		result(ok, "pointers compared with %s, as unsigned addresses", ops[k]);
	}
}

/* The interpreter checks a converted pointer's access against the buffer
 * it reaches: one element past the end, through an integer, is reported. */
static void bounds_case(void)
{
	if (blk_context_backend(ops_ctx) != BLK_BACKEND_INTERPRETER)
		return; /* a GPU does not check */
	blk_devptr dx = dev_zeros(DT_F32, 64), dout = dev_zeros(DT_F32, 64);
	const char *src = "kernel k(x: *f32, out: *f32, n: i32) {\n"
	                  "    let a = (x.to(u64) + (n * 4).to(u64)).to(*f32);\n"
	                  "    store(out, load(a));\n"
	                  "}\n";
	bool in = run_kernel(src, "k", ARGS(P(dx), P(dout), I(63)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	bool out = run_kernel(src, "k", ARGS(P(dx), P(dout), I(64)), NO_CONSTS, GRID(1, 1, 1)) == BLK_ERROR_LAUNCH &&
	           strstr(ops_err, "out-of-bounds load") && strstr(ops_err, "past the end of buffer 'x'");
	result(in && out, "interpreter: a load through an integer made a pointer is bounds checked (%s)",
	       out ? "reported past the end of x" : ops_err);
	const char *src2 = "kernel k(x: *f32, out: *f32) {\n"
	                   "    store(out, load(x.to(*f64) + 8).to(f32));\n"
	                   "}\n";
	bool bad = run_kernel(src2, "k", ARGS(P(dx), P(dout)), NO_CONSTS, GRID(1, 1, 1)) == BLK_ERROR_LAUNCH &&
	           strstr(ops_err, "out-of-bounds load");
	result(bad, "interpreter: x.to(*f64) reads 8 bytes an element, checked against x's 256 bytes");
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	static const dt pairs[][2] = {{DT_F32, DT_U16}, {DT_F32, DT_I32}, {DT_F16, DT_BF16}, {DT_U8, DT_I64},
	                              {DT_F64, DT_F32}, {DT_I16, DT_U8},  {DT_BF16, DT_F64}, {DT_U32, DT_F16}};
	for (int i = 0; i < (int)(sizeof pairs / sizeof *pairs); i++)
		reinterpret_case(pairs[i][0], pairs[i][1]);
	static const dt ints[] = {DT_I64, DT_U64, DT_I32, DT_U32, DT_U16, DT_I8};
	for (int i = 0; i < (int)(sizeof ints / sizeof *ints); i++)
		address_case(ints[i]);
	table_case(DT_I64);
	table_case(DT_U64);
	arith_case();
	compare_case();
	bounds_case();
	return ops_finish();
}
