/* tests/ops: loads and stores, as .tile kernels through blk.h: masked copies
 * of every element type at sizes that are not a multiple of the block (the
 * bits of every pattern must survive, and nothing past the end may be
 * written), masked loads with `other` (scalars, literals, blocks), 2-D tiles
 * with row and column masks and runtime strides, arrays of pointers (**T)
 * for loads and stores, blocks of pointers chosen by where, scalar loads and
 * stores, cache and eviction hints. All exact. */
#include "ops.h"

static const dt ALL[] = {DT_I1,  DT_I8,  DT_I16,  DT_I32, DT_I64, DT_U8,   DT_U16,  DT_U32,
                         DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64, DT_E4M3, DT_E5M2};

static const char *COPY_SRC =
	"kernel k(x: *$T, out: *$T, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let m = offs < n;\n"
	"    store(out + offs, load(x + offs, mask = m$HINTS), mask = m$SHINTS);\n"
	"}\n";

enum { PAD = 37 };

/* out has n + PAD elements, all a sentinel; x exactly n (the interpreter
 * checks every access against the buffers). Every bit pattern is copied,
 * NaN payloads and f8e5m2 infinities too. */
static void copy_case(dt t, int n, int block, const char *hints, const char *shints)
{
	arr x = arr_new(t, n), out0 = arr_new(t, n + PAD), want = arr_new(t, n + PAD);
	for (int i = 0; i < n; i++)
		set_bits(x, i, t == DT_I1 ? rng_u64() & 1 : rng_u64());
	if (t == DT_E5M2 && n > 2) {
		set_bits(x, 0, 0x7c); /* +inf */
		set_bits(x, 1, 0xfc); /* -inf */
	}
	for (int i = 0; i < n + PAD; i++) {
		set_bits(out0, i, t == DT_I1 ? 1 : 0x5a5a5a5a5a5a5a5aull);
		set_bits(want, i, i < n ? get_bits(x, i) : get_bits(out0, i));
	}
	blk_devptr dx = dev_from(x), dout = dev_from(out0);
	const char *src = render(COPY_SRC, "T", dts[t].name, "HINTS", hints, "SHINTS", shints, NULL);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dout), I(n)), CONSTS(CI("BLOCK", block)), GRID(0)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, t, n + PAD);
		int bad = 0;
		for (int i = 0; i < n + PAD; i++)
			if (get_bits(got, i) != get_bits(want, i) && bad++ < 5)
				why("[%d] got bits 0x%llx, want 0x%llx%s\n", i, (unsigned long long)get_bits(got, i),
				    (unsigned long long)get_bits(want, i), i >= n ? " (past the end: must not be written)" : "");
		ok = bad == 0;
	}
	result(ok, "masked copy %s n = %d BLOCK = %d%s%s", dts[t].name, n, block, hints, shints);
}

/* load(..., other = V): the lanes past n read V. */
static const char *OTHER_SRC = "kernel k(x: *$T, out: *$T, n: i32, BLOCK: const i32) {\n"
                               "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                               "    store(out + offs, load(x + offs, mask = offs < n, other = $OTHER));\n"
                               "}\n";

static void other_case(dt t, const char *other_text, bool block_other)
{
	int n = 100, block = 64, progs = 2, total = progs * block;
	arr x = arr_new(t, n), want = arr_new(t, total);
	fill_random(x, 100);
	for (int i = 0; i < total; i++) {
		if (i < n) {
			set_v(want, i, get_v(x, i));
			continue;
		}
		val v = {0, 0};
		if (block_other) { /* other = (offs * 3).to(T) */
			val o = {i * 3, 0};
			v = cast_ref(o, DT_I32, t);
		} else if (dt_float(t)) {
			v.f = strtod(other_text[0] == '-' && strstr(other_text, "inf") ? "-inf" : other_text, NULL);
			v.f = round_to(t, v.f);
		} else if (t == DT_I1) {
			v.i = !strcmp(other_text, "true");
		} else {
			v.i = wrap_int(t, (uint64_t)strtoll(other_text, NULL, 0));
		}
		set_v(want, i, v);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, total);
	const char *src = render(OTHER_SRC, "T", dts[t].name, "OTHER", other_text, NULL);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dout), I(n)), CONSTS(CI("BLOCK", block)), GRID(progs, 1, 1)) ==
	          BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, total), want, NULL, 0);
	result(ok, "load other = %s %s", other_text, dts[t].name);
}

/* A 2-D tile with masks on rows and columns and runtime strides: out is
 * the transpose of x, times 2, for an M x N matrix with row stride sx. */
static const char *TILE_SRC =
	"kernel k(x: *$T, out: *$T, M: i32, N: i32, sx: i32, so: i32, BM: const i32 = 16, BN: const i32 = 16)\n"
	"        grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    let rows = program_id(0) * BM + arange(0, BM);\n"
	"    let cols = program_id(1) * BN + arange(0, BN);\n"
	"    let m = (rows[:, None] < M) & (cols[None, :] < N);\n"
	"    let v = load(x + rows[:, None] * sx + cols[None, :], mask = m, other = 0);\n"
	"    let t = trans(v * 2);\n"
	"    store(out + cols[:, None] * so + rows[None, :], t, mask = trans(m));\n"
	"}\n";

static void tile_case(dt t, int M, int N, int sx, int so)
{
	arr x = arr_new(t, M * sx), out0 = arr_new(t, N * so), want = arr_new(t, N * so);
	fill_random(x, 100);
	for (int i = 0; i < N * so; i++) {
		set_f(out0, i, 3);
		set_f(want, i, 3);
	}
	val two = {2, 2.0};
	for (int r = 0; r < M; r++)
		for (int c = 0; c < N; c++)
			set_v(want, c * so + r, binop_ref("*", t, get_v(x, r * sx + c), two));
	blk_devptr dx = dev_from(x), dout = dev_from(out0);
	bool ok = run_kernel(render(TILE_SRC, "T", dts[t].name, NULL), NULL, ARGS(P(dx), P(dout), I(M), I(N), I(sx), I(so)),
	                     NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, N * so), want, NULL, 0);
	result(ok, "2-D masked tile, transposed store %s %dx%d strides %d, %d", dts[t].name, M, N, sx, so);
}

/* Arrays of pointers: program t sums tensor t (read through ptrs[t]) and
 * writes the prefix sums through outs[t] (sum_many, with stores). */
static const char *PTRS_SRC =
	"kernel k(ptrs: **$T, outs: **$T, sizes: *i32, sums: *$T, BLOCK: const i32 = 32) {\n"
	"    let t = program_id(0);\n"
	"    let data = load(ptrs + t);\n"
	"    let dst = load(outs + t);\n"
	"    let size = load(sizes + t);\n"
	"    var acc = zeros((BLOCK,), $T);\n"
	"    var carry = zeros((1,), $T);\n"
	"    for start in range(0, size, BLOCK) {\n"
	"        let offs = start + arange(0, BLOCK);\n"
	"        let v = load(data + offs, mask = offs < size, other = 0);\n"
	"        acc += v;\n"
	"        let c = cumsum(v, axis = 0) + carry;\n"
	"        store(dst + offs, c, mask = offs < size);\n"
	"        carry = broadcast_to(sum(v, axis = 0), (1,)) + carry;\n"
	"    }\n"
	"    store(sums + t, sum(acc, axis = 0));\n"
	"}\n";

static void ptrs_case(dt t)
{
	enum { T = 6 };
	int sizes[T];
	arr data[T], sz = arr_new(DT_I32, T), sums_want = arr_new(t, T);
	arr pin = arr_new(DT_U64, T), pout = arr_new(DT_U64, T);
	blk_devptr dout[T];
	for (int k = 0; k < T; k++) {
		sizes[k] = k == 0 ? 0 : (int)rng_range(1, 150);
		set_i(sz, k, sizes[k]);
		data[k] = arr_new(t, sizes[k]);
		for (int i = 0; i < sizes[k]; i++)
			set_f(data[k], i, (double)rng_range(-5, 5)); /* every prefix sum exact, f16 too */
		set_bits(pin, k, dev_from(data[k]));
		dout[k] = dev_zeros(t, sizes[k]);
		set_bits(pout, k, dout[k]);
		double s = 0;
		for (int i = 0; i < sizes[k]; i++)
			s += get_f(data[k], i);
		set_f(sums_want, k, s);
	}
	blk_devptr dp = dev_from(pin), dpo = dev_from(pout), dsz = dev_from(sz), dsums = dev_zeros(t, T);
	bool ok = run_kernel(render(PTRS_SRC, "T", dts[t].name, NULL), NULL, ARGS(P(dp), P(dpo), P(dsz), P(dsums)),
	                     NO_CONSTS, GRID(T, 1, 1)) == BLK_SUCCESS;
	if (ok) /* small integers: every sum and order is exact */
		ok = check_exact(dev_read(dsums, t, T), sums_want, NULL, 0);
	for (int k = 0; ok && k < T; k++) {
		arr got = dev_read(dout[k], t, sizes[k]), want = arr_new(t, sizes[k]);
		double s = 0;
		for (int i = 0; i < sizes[k]; i++) {
			s += get_f(data[k], i);
			set_f(want, i, s);
		}
		if (!check_exact(got, want, NULL, 0)) {
			why("(tensor %d)\n", k);
			ok = false;
		}
	}
	result(ok, "arrays of pointers **%s: loads and stores through them", dts[t].name);
}

/* A block of pointers chosen element by element from two buffers. */
static const char *WHERE_PTR_SRC = "kernel k(a: *f32, b: *f32, c: *i1, out: *f32) {\n"
                                   "    let i = arange(0, 128);\n"
                                   "    let p = where(load(c + i), a + i, b + (127 - i));\n"
                                   "    store(out + i, load(p));\n"
                                   "}\n";

static void where_ptr_case(void)
{
	arr a = arr_new(DT_F32, 128), b = arr_new(DT_F32, 128), c = arr_new(DT_I1, 128), want = arr_new(DT_F32, 128);
	fill_random(a, 100);
	fill_random(b, 100);
	fill_random(c, 0);
	for (int i = 0; i < 128; i++)
		set_f(want, i, get_i(c, i) ? get_f(a, i) : get_f(b, 127 - i));
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_from(c), dout = dev_zeros(DT_F32, 128);
	bool ok = run_kernel(WHERE_PTR_SRC, NULL, ARGS(P(da), P(db), P(dc), P(dout)), NO_CONSTS, GRID(1, 1, 1)) ==
	          BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_F32, 128), want, NULL, 0);
	result(ok, "a block of pointers from where, gathered");
}

/* Gather and scatter: indices from memory. */
static const char *GATHER_SRC = "kernel k(x: *$T, idx: *i32, out: *$T, n: i32) {\n"
                                "    let i = arange(0, 256);\n"
                                "    let j = load(idx + i);\n"
                                "    let v = load(x + j, mask = j < n, other = 0);\n"
                                "    store(out + (255 - i), v);\n"
                                "}\n";

static void gather_case(dt t)
{
	int n = 200;
	arr x = arr_new(t, n), idx = arr_new(DT_I32, 256), want = arr_new(t, 256);
	fill_random(x, 100);
	for (int i = 0; i < 256; i++)
		set_i(idx, i, rng_range(0, 260));
	for (int i = 0; i < 256; i++) {
		int64_t j = get_i(idx, i);
		val z = {0, 0.0};
		set_v(want, 255 - i, j < n ? get_v(x, j) : z);
	}
	blk_devptr dx = dev_from(x), di = dev_from(idx), dout = dev_zeros(t, 256);
	bool ok = run_kernel(render(GATHER_SRC, "T", dts[t].name, NULL), NULL, ARGS(P(dx), P(di), P(dout), I(n)),
	                     NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, 256), want, NULL, 0);
	result(ok, "gather with masked indices, reversed scatter %s", dts[t].name);
}

/* Scalars: one element per program. */
static const char *SCALAR_SRC = "kernel k(x: *$T, out: *$T) {\n"
                                "    let i = program_id(0);\n"
                                "    let v = load(x + i);\n"
                                "    store(out + (num_programs(0) - 1 - i), v + v);\n"
                                "}\n";

static void scalar_case(dt t)
{
	int n = 50;
	arr x = arr_new(t, n), want = arr_new(t, n);
	fill_random(x, 100);
	for (int i = 0; i < n; i++)
		set_v(want, n - 1 - i, binop_ref("+", t, get_v(x, i), get_v(x, i)));
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, n);
	bool ok = run_kernel(render(SCALAR_SRC, "T", dts[t].name, NULL), NULL, ARGS(P(dx), P(dout)), NO_CONSTS,
	                     GRID((unsigned)n, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, n), want, NULL, 0);
	result(ok, "scalar load and store per program %s", dts[t].name);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	for (int t = 0; t < COUNT(ALL); t++)
		copy_case(ALL[t], 1000, 128, "", "");
	copy_case(DT_F32, 1, 64, "", "");
	copy_case(DT_F32, 0, 64, "", "");
	copy_case(DT_I8, 4097, 1024, "", "");
	copy_case(DT_F16, 333, 32, ", cache = \"cg\", eviction = \"evict_last\"", ", cache = \"wb\"");
	copy_case(DT_F64, 333, 16, ", cache = \"cv\", eviction = \"evict_first\"", ", eviction = \"evict_normal\"");

	other_case(DT_F32, "-inf(f32)", false);
	other_case(DT_F32, "0.25", false);
	other_case(DT_F16, "0.5", false);
	other_case(DT_BF16, "-3", false);
	other_case(DT_I32, "-7", false);
	other_case(DT_I64, "0x7fffffffffff", false);
	other_case(DT_U8, "255", false);
	other_case(DT_I1, "true", false);
	other_case(DT_I16, "(offs * 3).to(i16)", true);
	other_case(DT_F32, "(offs * 3).to(f32)", true);

	tile_case(DT_F32, 37, 45, 45, 40);
	tile_case(DT_F16, 16, 16, 20, 16);
	tile_case(DT_I64, 50, 7, 9, 64);
	tile_case(DT_BF16, 1, 33, 40, 1);
	tile_case(DT_I8, 31, 17, 17, 31);

	ptrs_case(DT_F32);
	ptrs_case(DT_I32);
	ptrs_case(DT_F16);
	ptrs_case(DT_F64);
	where_ptr_case();
	gather_case(DT_F32);
	gather_case(DT_I16);
	gather_case(DT_U64);
	scalar_case(DT_F32);
	scalar_case(DT_I8);
	scalar_case(DT_BF16);
	return ops_finish();
}
