/* tests/ops: tensor descriptors, as .tile kernels through blk.h, against
 * references in C: a box of a 2-D descriptor loaded (elements outside
 * [0, shape) read as 0) and stored (only the elements inside written, rows
 * padded past N untouched), for every element type, at random offsets that
 * put the box inside, across an edge, wholly outside and at negative
 * offsets; rank 1 (a scalar shape) and rank 3 boxes with i64 offsets; a
 * descriptor made before a loop and read in it; a persistent grid of
 * num_sms() programs. On the interpreter also the checks it makes: a last
 * stride other than 1, and a box inside the descriptor but outside the
 * buffer it was given. All exact. */
#include "ops.h"

static const dt ALL[] = {DT_I1,  DT_I8,  DT_I16,  DT_I32, DT_I64, DT_U8,   DT_U16,  DT_U32,
                         DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64, DT_E4M3, DT_E5M2};

enum { PAD = 29 };

static bool is_interp(void) { return blk_context_backend(ops_ctx) == BLK_BACKEND_INTERPRETER; }

static uint64_t random_bits(dt t) { return t == DT_I1 ? rng_u64() & 1 : rng_u64(); }

/* load: the BM x BN box of x (M x N, row stride sx) at (om, on), written
 * densely to out. */
static const char *LOAD_SRC =
	"kernel k(x: *$T, out: *$T, M: i32, N: i32, sx: i32, om: i32, on: i32, BM: const i32, BN: const i32)\n"
	"        grid(1) {\n"
	"    let src = tensor_desc(x, (M, N), (sx, 1), (BM, BN));\n"
	"    let t = src.load((om, on));\n"
	"    store(out + arange(0, BM)[:, None] * BN + arange(0, BN)[None, :], t);\n"
	"}\n";

static void load_case(dt t, int M, int N, int sx, int om, int on, int BM, int BN)
{
	arr x = arr_new(t, (int64_t)M * sx), want = arr_new(t, BM * BN);
	for (int i = 0; i < M * sx; i++)
		set_bits(x, i, random_bits(t));
	for (int i = 0; i < BM; i++)
		for (int j = 0; j < BN; j++) {
			int r = om + i, c = on + j;
			bool in = r >= 0 && r < M && c >= 0 && c < N;
			set_bits(want, i * BN + j, in ? get_bits(x, (int64_t)r * sx + c) : 0);
		}
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, BM * BN);
	bool ok = run_kernel(render(LOAD_SRC, "T", dts[t].name, NULL), NULL,
	                     ARGS(P(dx), P(dout), I(M), I(N), I(sx), I(om), I(on)), CONSTS(CI("BM", BM), CI("BN", BN)),
	                     GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, BM * BN), want, NULL, 0);
	result(ok, "desc load %s %dx%d (row stride %d), %dx%d box at (%d, %d)", dts[t].name, M, N, sx, BM, BN, om, on);
}

/* store: a dense BM x BN block of x stored through a descriptor of out
 * (M x N, row stride so) at (om, on). */
static const char *STORE_SRC =
	"kernel k(x: *$T, out: *$T, M: i32, N: i32, so: i32, om: i32, on: i32, BM: const i32, BN: const i32)\n"
	"        grid(1) {\n"
	"    let v = load(x + arange(0, BM)[:, None] * BN + arange(0, BN)[None, :]);\n"
	"    let dst = tensor_desc(out, (M, N), (so, 1), (BM, BN));\n"
	"    dst.store((om, on), v);\n"
	"}\n";

static void store_case(dt t, int M, int N, int so, int om, int on, int BM, int BN)
{
	int64_t n_out = (int64_t)M * so + PAD;
	arr x = arr_new(t, BM * BN), out0 = arr_new(t, n_out), want = arr_new(t, n_out);
	for (int i = 0; i < BM * BN; i++)
		set_bits(x, i, random_bits(t));
	for (int64_t i = 0; i < n_out; i++) {
		set_bits(out0, i, t == DT_I1 ? 1 : 0x5a5a5a5a5a5a5a5aull);
		set_bits(want, i, get_bits(out0, i));
	}
	for (int i = 0; i < BM; i++)
		for (int j = 0; j < BN; j++) {
			int r = om + i, c = on + j;
			if (r >= 0 && r < M && c >= 0 && c < N)
				set_bits(want, (int64_t)r * so + c, get_bits(x, i * BN + j));
		}
	blk_devptr dx = dev_from(x), dout = dev_from(out0);
	bool ok = run_kernel(render(STORE_SRC, "T", dts[t].name, NULL), NULL,
	                     ARGS(P(dx), P(dout), I(M), I(N), I(so), I(om), I(on)), CONSTS(CI("BM", BM), CI("BN", BN)),
	                     GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, n_out), want, NULL, 0);
	result(ok, "desc store %s %dx%d (row stride %d), %dx%d box at (%d, %d)", dts[t].name, M, N, so, BM, BN, om, on);
}

/* An offset for a box of b along a dimension of n: inside, across either
 * edge, wholly before or past it. */
static int random_offset(int n, int b)
{
	switch (rng_range(0, 4)) {
	case 0: return (int)rng_range(0, n > b ? n - b : 0);
	case 1: return (int)rng_range(-b + 1, 0);
	case 2: return (int)rng_range(n - b + 1 > 0 ? n - b + 1 : 0, n);
	case 3: return (int)rng_range(-3 * b, -b);
	default: return (int)rng_range(n, n + 2 * b);
	}
}

/* rank 1 with a scalar shape, stride and block; rank 3 with an i64 offset
 * (the index type becomes i64), copied box to box. */
static const char *RANKS_SRC =
	"kernel k(x: *$T, out: *$T, n: i32, o: i32, A: i32, B: i32, C: i32, o0: i64, o1: i32, o2: i32) grid(1) {\n"
	"    let v = tensor_desc(x, n, 1, 64).load(o);\n"
	"    tensor_desc(out, n, 1, 64).store((o + 3,), v);\n"
	"    let src = tensor_desc(x, (A, B, C), (B * C, C, 1), (2, 4, 8));\n"
	"    let dst = tensor_desc(out + n, (A, B, C), (B * C, C, 1), (2, 4, 8));\n"
	"    dst.store((o0, o1, o2), src.load((o0, o1, o2)));\n"
	"}\n";

static void ranks_case(dt t, int n, int o, int A, int B, int C, int o0, int o1, int o2)
{
	int64_t n3 = (int64_t)A * B * C, total = n + n3;
	arr x = arr_new(t, total > n ? total : n), out0 = arr_new(t, total), want = arr_new(t, total);
	for (int64_t i = 0; i < x.n; i++)
		set_bits(x, i, random_bits(t));
	for (int64_t i = 0; i < total; i++) {
		set_bits(out0, i, t == DT_I1 ? 1 : 0x3c3c3c3c3c3c3c3cull);
		set_bits(want, i, get_bits(out0, i));
	}
	for (int i = 0; i < 64; i++) { /* out[o + 3 + i] = x[o + i] (0 outside [0, n)) */
		int dst = o + 3 + i, src = o + i;
		if (dst >= 0 && dst < n)
			set_bits(want, dst, src >= 0 && src < n ? get_bits(x, src) : 0);
	}
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			for (int k = 0; k < 8; k++) {
				int a = o0 + i, b = o1 + j, c = o2 + k;
				if (a >= 0 && a < A && b >= 0 && b < B && c >= 0 && c < C) {
					int64_t at = ((int64_t)a * B + b) * C + c;
					set_bits(want, n + at, get_bits(x, at));
				}
			}
	blk_devptr dx = dev_from(x), dout = dev_from(out0);
	bool ok = run_kernel(render(RANKS_SRC, "T", dts[t].name, NULL), NULL,
	                     ARGS(P(dx), P(dout), I(n), I(o), I(A), I(B), I(C), I(o0), I(o1), I(o2)), NO_CONSTS,
	                     GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, total), want, NULL, 0);
	result(ok, "desc ranks 1 and 3 %s: n %d at %d; %dx%dx%d at (%d, %d, %d)", dts[t].name, n, o, A, B, C, o0, o1, o2);
}

/* A persistent grid: num_sms() programs (at most the number of row blocks)
 * each walk the row blocks from program_id(0) in steps of num_programs(0),
 * reading and writing through descriptors made before the loop. */
static const char *PERSIST_SRC =
	"kernel k(x: *f32, out: *f32, M: i32, N: i32, counts: *i32, BM: const i32 = 8, BN: const i32 = 32)\n"
	"        grid(minimum(num_sms(), cdiv(M, BM))) {\n"
	"    let src = tensor_desc(x, (M, N), (N, 1), (BM, BN));\n"
	"    let dst = tensor_desc(out, (M, N), (N, 1), (BM, BN));\n"
	"    var done = 0;\n"
	"    for t in range(program_id(0), cdiv(M, BM), num_programs(0)) {\n"
	"        for c in range(0, N, BN) {\n"
	"            dst.store((t * BM, c), src.load((t * BM, c)) * 2.0 + 1.0);\n"
	"        }\n"
	"        done += 1;\n"
	"    }\n"
	"    atomic_add(counts + program_id(0), done);\n"
	"}\n";

static void persistent_case(int M, int N)
{
	arr x = arr_new(DT_F32, (int64_t)M * N), want = arr_new(DT_F32, (int64_t)M * N);
	fill_random(x, 100);
	for (int64_t i = 0; i < x.n; i++)
		set_f(want, i, (double)(float)((float)get_f(x, i) * 2.0f + 1.0f));
	int blocks = (M + 7) / 8;
	blk_devptr dx = dev_from(x), dout = dev_zeros(DT_F32, (int64_t)M * N), dc = dev_zeros(DT_I32, 4096);
	bool ok = run_kernel(PERSIST_SRC, NULL, ARGS(P(dx), P(dout), I(M), I(N), P(dc)), NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_F32, (int64_t)M * N), want, NULL, 0);
	if (ok) { /* every row block once, by programs of a grid no larger than blocks */
		arr counts = dev_read(dc, DT_I32, 4096);
		int64_t sum = 0, programs = 0;
		for (int i = 0; i < 4096; i++) {
			sum += get_i(counts, i);
			programs += get_i(counts, i) > 0;
		}
		if (sum != blocks || programs > blocks || (is_interp() && programs != (blocks < 4 ? blocks : 4))) {
			why("%lld row blocks done by %lld programs; want %d blocks%s\n", (long long)sum, (long long)programs,
			    blocks, is_interp() ? " by min(4, blocks) programs (num_sms() is 4 on the interpreter)" : "");
			ok = false;
		}
	}
	result(ok, "persistent grid of num_sms() programs over %d row blocks, %dx%d f32", blocks, M, N);
}

/* What the interpreter checks: these are errors there, with these words. */
static void interp_error_case(const char *what, const char *src, const blk_arg *args, int n_args, const char *words)
{
	bool ok = run_kernel(src, NULL, args, n_args, NO_CONSTS, GRID(0)) != BLK_SUCCESS && strstr(ops_err, words);
	if (!ok)
		why("want a failed launch saying '%s'; got: %s\n", words, ops_err[0] ? ops_err : "success");
	ops_why_len = ok ? 0 : ops_why_len;
	result(ok, "interpreter: %s", what);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	for (int i = 0; i < COUNT(ALL); i++) {
		dt t = ALL[i];
		load_case(t, 37, 45, 48, 30, 40, 16, 16); /* across the bottom right corner */
		store_case(t, 37, 45, 48, -5, -9, 16, 16); /* across the top left corner, negative offsets */
		load_case(t, 20, 24, 24, random_offset(20, 8), random_offset(24, 32), 8, 32);
		store_case(t, 20, 24, 30, random_offset(20, 8), random_offset(24, 32), 8, 32);
		ranks_case(t, 100, (int)rng_range(-70, 100), 3, 5, 9, (int)rng_range(-2, 3), (int)rng_range(-4, 5),
		           (int)rng_range(-8, 9));
	}
	for (int i = 0; i < 12; i++) {
		int M = (int)rng_range(1, 40), N = (int)rng_range(1, 40), BM = 1 << rng_range(0, 4), BN = 1 << rng_range(0, 5);
		load_case(DT_F32, M, N, N + (int)rng_range(0, 3), random_offset(M, BM), random_offset(N, BN), BM, BN);
		store_case(DT_BF16, M, N, N + (int)rng_range(0, 3), random_offset(M, BM), random_offset(N, BN), BM, BN);
	}
	load_case(DT_F32, 16, 16, 16, 0, 0, 16, 16);      /* exactly the matrix */
	load_case(DT_F32, 16, 16, 16, 16, 0, 16, 16);     /* just past it */
	store_case(DT_F16, 16, 16, 16, 0, -16, 16, 16);   /* just before it: nothing written */
	load_case(DT_I32, 0, 8, 8, 0, 0, 4, 8);           /* an empty matrix reads zeros */
	persistent_case(100, 70);
	persistent_case(13, 32);
	persistent_case(4, 5);

	if (is_interp()) {
		const char *stride_src = "kernel k(x: *f32, s: i32) grid(1) {\n"
		                         "    let d = tensor_desc(x, (4, 4), (4, s), (4, 4));\n"
		                         "    d.store((0, 0), d.load((0, 0)) + 1.0);\n"
		                         "}\n";
		blk_devptr dx = dev_zeros(DT_F32, 64);
		/* the desc ops check it; once expanded (BLK_PASSES with expand-descriptors, as
		 * tests/interp/cases/descriptors_expanded.sh runs this) the stride is honoured */
		const char *passes = getenv("BLK_PASSES");
		if (!passes || !strstr(passes, "expand-descriptors"))
			interp_error_case("a last stride of 2 at run time", stride_src, ARGS(P(dx), I(2)), "last stride is 2");
		const char *big_src = "kernel k(x: *f32, out: *f32) grid(1) {\n"
		                      "    store(out + arange(0, 16), tensor_desc(x, 100, 1, 16).load(8));\n"
		                      "}\n";
		blk_devptr dy = dev_zeros(DT_F32, 16), dout = dev_zeros(DT_F32, 16);
		interp_error_case("a box inside the descriptor but past the buffer", big_src, ARGS(P(dy), P(dout)),
		                  "out-of-bounds load");
	}
	return ops_finish();
}
