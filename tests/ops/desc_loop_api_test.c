/* tests/ops: tensor descriptors that change at run time, as .tile kernels
 * through blk.h, against references in C: a descriptor var given a new base
 * and shape in each iteration of a for loop (Triton's loop-carried
 * descriptor), a shape and row stride that start constant and change
 * (bounds move), descriptors made afresh in each iteration from
 * loop-varying values (pointer + i * stride, a size loaded from memory),
 * one chosen in a while loop whose condition reads it, one chosen in a
 * runtime if inside a loop, stores through a loop-carried descriptor whose
 * size widens to i64, a u32 size past i32 through an if and a loop, nested
 * loops with a break, a K loop whose A descriptor moves along K (its dots
 * exact in f16). Last the changes that stay errors. All exact, i32 data
 * but for the K loop. */
#include "ops.h"

enum { W = 64, SENTINEL = -123456 };

typedef struct Buf {
	arr host;
	blk_devptr dev;
} Buf;

/* A random i32 input of n elements. */
static Buf input(int64_t n)
{
	Buf b = {arr_new(DT_I32, n), 0};
	for (int64_t i = 0; i < n; i++)
		set_i(b.host, i, rng_range(-1000, 1000));
	b.dev = dev_from(b.host);
	return b;
}

/* An output of n elements holding SENTINEL, and its expected contents (the
 * same to start). */
static Buf output(int64_t n, arr *want)
{
	Buf b = {arr_new(DT_I32, n), 0};
	*want = arr_new(DT_I32, n);
	for (int64_t i = 0; i < n; i++) {
		set_i(b.host, i, SENTINEL);
		set_i(*want, i, SENTINEL);
	}
	b.dev = dev_from(b.host);
	return b;
}

static void check(const char *src, const blk_arg *args, int n_args, Buf out, arr want, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static void check(const char *src, const blk_arg *args, int n_args, Buf out, arr want, const char *fmt, ...)
{
	char name[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	bool ok = run_kernel(src, NULL, args, n_args, NO_CONSTS, GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(out.dev, DT_I32, want.n), want, NULL, 0);
	result(ok, "%s", name);
}

/* Triton's loop-carried descriptor: each iteration reads row 0 of d, then
 * gives d the next row as its base and one row fewer; after the loop, d
 * reads row n (nothing where the rows have run out). */
static const char *BASE_SRC = "kernel k(x: *i32, out: *i32, M: i32, N: i32, n: i32) grid(1) {\n"
                              "    var d = tensor_desc(x, (M, N), (N, 1), (1, 64));\n"
                              "    for i in range(0, n) {\n"
                              "        store(out + i * 64 + arange(0, 64), reshape(d.load((0, 0)), (64,)));\n"
                              "        d = tensor_desc(x + (i + 1) * N, (M - i - 1, N), (N, 1), (1, 64));\n"
                              "    }\n"
                              "    store(out + n * 64 + arange(0, 64), reshape(d.load((0, 0)), (64,)));\n"
                              "}\n";

static void base_case(int M, int N, int n)
{
	Buf x = input((int64_t)M * N + 1);
	arr want;
	Buf out = output((int64_t)(n + 1) * W, &want);
	for (int i = 0; i <= n; i++)
		for (int j = 0; j < W; j++)
			set_i(want, i * W + j, i < M && j < N ? get_i(x.host, (int64_t)i * N + j) : 0);
	check(BASE_SRC, ARGS(P(x.dev), P(out.dev), I(M), I(N), I(n)), out, want,
	      "loop-carried base and shape: %dx%d, %d iterations", M, N, n);
}

/* The shape and row stride start as constants and change in the loop: the
 * columns shrink by 9 each iteration, the rows are s apart after the first. */
static const char *SHAPE_SRC = "kernel k(x: *i32, out: *i32, n: i32, s: i32) grid(1) {\n"
                               "    var d = tensor_desc(x, (8, 64), (64, 1), (1, 64));\n"
                               "    for i in range(0, n) {\n"
                               "        store(out + i * 64 + arange(0, 64), reshape(d.load((i, 0)), (64,)));\n"
                               "        d = tensor_desc(x, (8, 64 - 9 * (i + 1)), (s, 1), (1, 64));\n"
                               "    }\n"
                               "}\n";

static void shape_case(int n, int s)
{
	Buf x = input(8 * W);
	arr want;
	Buf out = output((int64_t)n * W, &want);
	for (int i = 0; i < n; i++) {
		int stride = i ? s : W, cols = W - 9 * i;
		for (int j = 0; j < W; j++)
			set_i(want, i * W + j, i < 8 && j < cols ? get_i(x.host, (int64_t)i * stride + j) : 0);
	}
	check(SHAPE_SRC, ARGS(P(x.dev), P(out.dev), I(n), I(s)), out, want,
	      "loop-carried shape and stride from constants: %d iterations, row stride %d", n, s);
}

/* Descriptors made afresh in each iteration: the source at x + i * 64 with
 * a width loaded from memory, the destination at out + i * 64 with the
 * rest of the row. */
static const char *FRESH_SRC = "kernel k(x: *i32, out: *i32, widths: *i32, n: i32) grid(1) {\n"
                               "    for i in range(0, n) {\n"
                               "        let w = load(widths + i);\n"
                               "        let src = tensor_desc(x + i * 64, (1, w), (64, 1), (1, 64));\n"
                               "        let dst = tensor_desc(out + i * 64, (1, 64 - w), (64, 1), (1, 64));\n"
                               "        dst.store((0, 0), src.load((0, 0)) + 1);\n"
                               "    }\n"
                               "}\n";

static void fresh_case(int n)
{
	Buf x = input((int64_t)n * W), widths = {arr_new(DT_I32, n), 0};
	for (int i = 0; i < n; i++)
		set_i(widths.host, i, rng_range(0, W));
	widths.dev = dev_from(widths.host);
	arr want;
	Buf out = output((int64_t)n * W, &want);
	for (int i = 0; i < n; i++) {
		int w = (int)get_i(widths.host, i);
		for (int j = 0; j < W - w; j++)
			set_i(want, i * W + j, (j < w ? get_i(x.host, i * W + j) : 0) + 1);
	}
	check(FRESH_SRC, ARGS(P(x.dev), P(out.dev), P(widths.dev), I(n)), out, want,
	      "descriptors made in each of %d iterations (pointer + i * stride, a loaded width)", n);
}

/* A while loop over rows while d has columns: d moves to the next row with
 * that row's width; the trip count is stored last. */
static const char *WHILE_SRC = "kernel k(x: *i32, out: *i32, widths: *i32) grid(1) {\n"
                               "    var d = tensor_desc(x, (1, load(widths)), (64, 1), (1, 64));\n"
                               "    var i = 0;\n"
                               "    while d.shape[1] > 0 {\n"
                               "        store(out + i * 64 + arange(0, 64), reshape(d.load((0, 0)), (64,)));\n"
                               "        i += 1;\n"
                               "        d = tensor_desc(x + i * 64, (1, load(widths + i)), (64, 1), (1, 64));\n"
                               "    }\n"
                               "    store(out + 16 * 64, i);\n"
                               "}\n";

static void while_case(int rows)
{
	Buf x = input(16 * W), widths = {arr_new(DT_I32, 16), 0};
	for (int i = 0; i < 16; i++)
		set_i(widths.host, i, i < rows ? rng_range(1, W + 20) : 0);
	widths.dev = dev_from(widths.host);
	arr want;
	Buf out = output(16 * W + 1, &want);
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < W; j++)
			set_i(want, i * W + j, j < get_i(widths.host, i) ? get_i(x.host, i * W + j) : 0);
	set_i(want, 16 * W, rows);
	check(WHILE_SRC, ARGS(P(x.dev), P(out.dev), P(widths.dev)), out, want,
	      "a descriptor chosen in a while loop that reads it: %d rows", rows);
}

/* A runtime if inside a loop: sel[i] 1 switches d to y (40 columns), 2 back
 * to x, 0 keeps what the earlier iterations chose; row i is read through d. */
static const char *IF_SRC = "kernel k(x: *i32, y: *i32, out: *i32, sel: *i32, n: i32) grid(1) {\n"
                            "    var d = tensor_desc(x, (16, 64), (64, 1), (1, 64));\n"
                            "    for i in range(0, n) {\n"
                            "        let s = load(sel + i);\n"
                            "        if s == 1 {\n"
                            "            d = tensor_desc(y, (16, 40), (64, 1), (1, 64));\n"
                            "        } else if s == 2 {\n"
                            "            d = tensor_desc(x, (16, 64), (64, 1), (1, 64));\n"
                            "        }\n"
                            "        store(out + i * 64 + arange(0, 64), reshape(d.load((i, 0)), (64,)));\n"
                            "    }\n"
                            "}\n";

static void if_case(int n)
{
	Buf x = input(16 * W), y = input(16 * W), sel = {arr_new(DT_I32, n), 0};
	for (int i = 0; i < n; i++)
		set_i(sel.host, i, rng_range(0, 2));
	sel.dev = dev_from(sel.host);
	arr want;
	Buf out = output((int64_t)n * W, &want);
	bool on_y = false;
	for (int i = 0; i < n; i++) {
		int s = (int)get_i(sel.host, i);
		on_y = s == 1 ? true : s == 2 ? false : on_y;
		for (int j = 0; j < W; j++) /* rows past 16 read as 0 */
			set_i(want, i * W + j,
			      i >= 16 ? 0 : on_y ? (j < 40 ? get_i(y.host, i * W + j) : 0) : get_i(x.host, i * W + j));
	}
	check(IF_SRC, ARGS(P(x.dev), P(y.dev), P(out.dev), P(sel.dev), I(n)), out, want,
	      "a descriptor chosen in a runtime if inside a loop of %d iterations", n);
}

/* Stores through a loop-carried descriptor: row i of out gets row i of x,
 * the first 50 columns in row 0, then big - i + 1 (an i64: the size that
 * began as the constant 50 is carried in i64). */
static const char *STORE_SRC = "kernel k(x: *i32, out: *i32, n: i32, big: i64) grid(1) {\n"
                               "    var d = tensor_desc(out, (1, 50), (64, 1), (1, 64));\n"
                               "    for i in range(0, n) {\n"
                               "        d.store((0, 0), reshape(load(x + i * 64 + arange(0, 64)), (1, 64)));\n"
                               "        d = tensor_desc(out + (i + 1) * 64, (1, big - i), (64, 1), (1, 64));\n"
                               "    }\n"
                               "}\n";

static void store_case(int n, int64_t big)
{
	Buf x = input((int64_t)n * W);
	arr want;
	Buf out = output((int64_t)n * W, &want);
	for (int i = 0; i < n; i++) {
		int64_t cols = i ? big - (i - 1) : 50;
		for (int j = 0; j < W && j < cols; j++)
			set_i(want, i * W + j, get_i(x.host, i * W + j));
	}
	check(STORE_SRC, ARGS(P(x.dev), P(out.dev), I(n), I(big)), out, want,
	      "stores through a loop-carried descriptor (an i64 size): %d iterations, big %lld", n, (long long)big);
}

/* A u32 size past i32 given in a runtime if and in a loop: indices in i64,
 * so the whole row is inside (in i32 the size would be negative). */
static const char *U32_SRC = "kernel k(x: *i32, out: *i32, n: i32, big: u32) grid(1) {\n"
                             "    var d = tensor_desc(x, (1, 16), (64, 1), (1, 64));\n"
                             "    if n > 0 {\n"
                             "        d = tensor_desc(x, (1, big), (64, 1), (1, 64));\n"
                             "    }\n"
                             "    store(out + arange(0, 64), reshape(d.load((0, 0)), (64,)));\n"
                             "    var e = tensor_desc(x, (1, 16), (64, 1), (1, 64));\n"
                             "    for i in range(0, n) {\n"
                             "        e = tensor_desc(x + 64, (1, big), (64, 1), (1, 64));\n"
                             "    }\n"
                             "    store(out + 64 + arange(0, 64), reshape(e.load((0, 0)), (64,)));\n"
                             "}\n";

static void u32_case(int n, uint32_t big)
{
	Buf x = input(2 * W);
	arr want;
	Buf out = output(2 * W, &want);
	int64_t cols = n > 0 ? big : 16;
	for (int j = 0; j < W; j++) {
		set_i(want, j, j < cols ? get_i(x.host, j) : 0);
		set_i(want, W + j, j < cols ? get_i(x.host, (n > 0 ? W : 0) + j) : 0);
	}
	check(U32_SRC, ARGS(P(x.dev), P(out.dev), I(n), I(big)), out, want,
	      "a u32 size of %u through a runtime if and a loop of %d iterations", big, n);
}

/* Nested loops: the inner one moves d two rows on (to row 2i + 2, the rows
 * left as its size); the outer one stops at `stop` before storing; after
 * the loop d is read once more into row 15. */
static const char *NESTED_SRC = "kernel k(x: *i32, out: *i32, n: i32, stop: i32) grid(1) {\n"
                                "    var d = tensor_desc(x, (16, 64), (64, 1), (1, 64));\n"
                                "    for i in range(0, n) {\n"
                                "        for j in range(0, 2) {\n"
                                "            let r = 2 * i + j + 1;\n"
                                "            d = tensor_desc(x + 64 * r, (16 - r, 64), (64, 1), (1, 64));\n"
                                "        }\n"
                                "        if i == stop {\n"
                                "            break;\n"
                                "        }\n"
                                "        store(out + i * 64 + arange(0, 64), reshape(d.load((0, 0)), (64,)));\n"
                                "    }\n"
                                "    store(out + 15 * 64 + arange(0, 64), reshape(d.load((0, 0)), (64,)));\n"
                                "}\n";

static void nested_case(int n, int stop)
{
	Buf x = input(16 * W);
	arr want;
	Buf out = output(16 * W, &want);
	int row = 0;
	for (int i = 0; i < n; i++) {
		row = 2 * i + 2;
		if (i == stop)
			break;
		for (int j = 0; j < W; j++)
			set_i(want, i * W + j, row < 16 ? get_i(x.host, row * W + j) : 0);
	}
	for (int j = 0; j < W; j++)
		set_i(want, 15 * W + j, row < 16 ? get_i(x.host, row * W + j) : 0);
	check(NESTED_SRC, ARGS(P(x.dev), P(out.dev), I(n), I(stop)), out, want,
	      "a descriptor carried by nested loops with a break: %d iterations, break at %d", n, stop);
}

/* A K loop whose A descriptor is loop-carried: it moves along K (the next
 * tile's base, K shrinking) and is read at column 0; B's is the same
 * throughout (on sm_90a its tiles may come by TMA, A's by cp.async). Small
 * integers in f16: the sums are exact. */
static const char *MM_SRC =
	"kernel mm(a: *f16, b: *f16, c: *f32, M: i32, N: i32, K: i32, sa: i32, sb: i32, sc: i32,\n"
	"          BM: const i32, BN: const i32, BK: const i32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    var ad = tensor_desc(a, (M, K), (sa, 1), (BM, BK));\n"
	"    let bd = tensor_desc(b, (K, N), (sb, 1), (BK, BN));\n"
	"    let cd = tensor_desc(c, (M, N), (sc, 1), (BM, BN));\n"
	"    let m0 = program_id(0) * BM;\n"
	"    let n0 = program_id(1) * BN;\n"
	"    var acc = zeros((BM, BN), f32);\n"
	"    for k in range(0, K, BK) {\n"
	"        acc = dot(ad.load((m0, 0)), bd.load((k, n0)), acc);\n"
	"        ad = tensor_desc(a + k + BK, (M, K - k - BK), (sa, 1), (BM, BK));\n"
	"    }\n"
	"    cd.store((m0, n0), acc);\n"
	"}\n";

static void mm_case(int M, int N, int K, int pad, int BM, int BN, int BK)
{
	int sa = K + pad, sb = N + pad, sc = N + pad;
	arr a = arr_new(DT_F16, (int64_t)M * sa + 1), b = arr_new(DT_F16, (int64_t)K * sb + 1);
	for (int64_t i = 0; i < a.n; i++)
		set_f(a, i, (double)rng_range(-4, 4));
	for (int64_t i = 0; i < b.n; i++)
		set_f(b, i, (double)rng_range(-4, 4));
	arr want = arr_new(DT_F32, (int64_t)M * sc);
	for (int64_t i = 0; i < want.n; i++)
		set_f(want, i, 0.0);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double sum = 0;
			for (int k = 0; k < K; k++)
				sum += get_f(a, (int64_t)i * sa + k) * get_f(b, (int64_t)k * sb + j);
			set_f(want, (int64_t)i * sc + j, sum);
		}
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_zeros(DT_F32, want.n);
	bool ok = run_kernel(MM_SRC, NULL, ARGS(P(da), P(db), P(dc), I(M), I(N), I(K), I(sa), I(sb), I(sc)),
	                     CONSTS(CI("BM", BM), CI("BN", BN), CI("BK", BK)), GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dc, DT_F32, want.n), want, NULL, 0);
	result(ok, "a K loop through a loop-carried A descriptor: %dx%dx%d (rows padded by %d), %dx%dx%d tiles", M, N,
	       K, pad, BM, BN, BK);
}

/* What stays an error: a loop may change a descriptor var only to one of
 * the same element type, block shape and padding. d is over x (i32) or,
 * with `p` "y", over y (f32). */
static void error_case_p(const char *p, const char *what, const char *body, const char *words)
{
	const char *src = render("kernel k(x: *i32, y: *f32, n: i32) grid(1) {\n"
	                         "    var d = tensor_desc($P, (4, 64), (64, 1), (1, 64));\n"
	                         "    for i in range(0, n) {\n"
	                         "        $BODY\n"
	                         "    }\n"
	                         "    store($P + arange(0, 64), reshape(d.load((0, 0)), (64,)));\n"
	                         "}\n",
	                         "BODY", body, "P", p, NULL);
	blk_devptr dx = dev_zeros(DT_I32, 256), dy = dev_zeros(DT_F32, 256);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(dy), I(2)), NO_CONSTS, GRID(0)) == BLK_ERROR_SOURCE &&
	          strstr(ops_err, words);
	if (!ok)
		why("want a compile error saying '%s'; got: %s\n", words, ops_err[0] ? ops_err : "success");
	ops_why_len = ok ? 0 : ops_why_len;
	result(ok, "error: %s", what);
}

static void error_case(const char *what, const char *body, const char *words)
{
	error_case_p("x", what, body, words);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	base_case(5, 64, 3);
	base_case(4, 37, 6); /* past the rows: zeros */
	base_case(7, 50, 0);
	base_case((int)rng_range(1, 12), (int)rng_range(1, W + 1), (int)rng_range(0, 14));
	shape_case(9, 64);
	shape_case(5, 33);
	shape_case((int)rng_range(0, 11), (int)rng_range(1, W + 1));
	fresh_case(1);
	fresh_case(7);
	fresh_case((int)rng_range(0, 12));
	while_case(0);
	while_case(5);
	while_case((int)rng_range(0, 15));
	if_case(16);
	if_case(18);
	if_case((int)rng_range(0, 17));
	store_case(5, 60);
	store_case(3, (int64_t)1 << 40);
	store_case((int)rng_range(0, 8), rng_range(-3, 80));
	u32_case(1, 3000000000u);
	u32_case(0, 3000000000u);
	u32_case(2, 40);
	nested_case(4, 9);
	nested_case(9, 2);
	nested_case(0, 0);
	nested_case((int)rng_range(0, 10), (int)rng_range(0, 10));
	mm_case(32, 32, 64, 0, 16, 16, 16);
	mm_case(37, 21, 45, 3, 16, 16, 16); /* edges inside every tile */
	mm_case(20, 40, 8, 8, 16, 32, 16);  /* K below the tile's */
	mm_case(16, 16, 0, 0, 16, 16, 16);  /* no K: zeros */
	mm_case((int)rng_range(1, 50), (int)rng_range(1, 50), (int)rng_range(1, 80), (int)rng_range(0, 8), 16, 16, 32);
	error_case("a new block shape in a loop", "d = tensor_desc(x, (4, 64), (64, 1), (2, 64));",
	           "'d' is a tensor descriptor of i32[1, 64] blocks before the loop but a tensor descriptor of i32[2, 64] "
	           "blocks after an iteration");
	error_case("a new element type in a loop", "d = tensor_desc(y, (4, 64), (64, 1), (1, 64));",
	           "a descriptor may change in a loop only to one of the same element type, block shape and padding");
	error_case_p("y", "another padding in a loop", "d = tensor_desc(y, (4, 64), (64, 1), (1, 64), padding_option = \"nan\");",
	             "a descriptor may change in a loop only to one of the same element type, block shape and padding");
	error_case("a value that is not a descriptor", "d = 3;",
	           "'d' is a tensor descriptor of i32[1, 64] blocks before the loop but constant i32 after an iteration");
	error_case("a new block shape in a runtime if in a loop",
	           "if i > 0 { d = tensor_desc(x, (4, 64), (64, 1), (1, 32)); }",
	           "a descriptor may change in a runtime 'if' only to one of the same element type, block shape and padding");
	return ops_finish();
}
