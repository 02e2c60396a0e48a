/* tests/ops: sort, argsort, topk and histogram, as .tile kernels through blk.h.
 *   sort     every integer type and f16, bf16, f32, f64; ascending and
 *            descending; values alone, values with positions, argsort;
 *            1-D lengths 1 to 4096, both axes of 2-D blocks; random inputs
 *            and inputs of few distinct values (ties; for floats also NaN,
 *            +-0.0, +-inf)
 *   large    sorts and topks whose networks are too large to unroll (16 x
 *            4096, 65536 and more elements on 4 warps): on the GPU loops
 *            over local memory, with a warning (checked)
 *   topk     k of 1 up to the length, 1-D and both axes of 2-D
 *   histogram every integer type, values in and out of [0, num_bins), with
 *            and without a mask; up to 131072 bins (counted in parts)
 * Each program of a grid of PROGS works on its own block.
 *
 * The reference, written here: a stable sort of positions (insertion into
 * runs, then merges) by the documented order: integers by value; floats by
 * value with -0.0 below +0.0 and NaN above +inf, NaNs equal to each other;
 * equal keys keep their positions' order, descending too. topk: the first k
 * of the descending order. Results exact: values bit for bit (a NaN
 * matches any NaN), positions equal. */
#include "ops.h"

enum { PROGS = 2 };

static const dt SORTED[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8,  DT_U16, DT_U32,
                            DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};
static const dt INTS[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32, DT_U64};

static bool is_interp(void) { return blk_context_backend(ops_ctx) == BLK_BACKEND_INTERPRETER; }

/* ---- the reference order ----------------------------------------------------------- */

/* -1, 0, 1: element i of a below, equal to, above element j. */
static int key_cmp(arr a, int64_t i, int64_t j)
{
	if (dt_float(a.t)) {
		double x = get_f(a, i), y = get_f(a, j);
		if (isnan(x) || isnan(y))
			return isnan(x) - isnan(y);
		if (x != y)
			return x < y ? -1 : 1;
		bool nx = signbit(x) != 0, ny = signbit(y) != 0;
		return nx == ny ? 0 : nx ? -1 : 1;
	}
	if (dt_signed(a.t)) {
		int64_t x = get_i(a, i), y = get_i(a, j);
		return x < y ? -1 : x > y;
	}
	uint64_t x = get_u(a, i), y = get_u(a, j);
	return x < y ? -1 : x > y;
}

/* The positions of line elems[0..n) of a (element indices in a), stably
 * sorted; out[j] is a position along the line. */
static void ref_sort(arr a, const int64_t *elems, int n, bool desc, int *out)
{
	int *tmp = malloc((size_t)n * sizeof *tmp);
	for (int j = 0; j < n; j++)
		out[j] = j;
	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				int c = key_cmp(a, elems[out[j]], elems[out[i]]);
				bool take_right = desc ? c > 0 : c < 0; /* strictly before: ties keep the left (earlier) one */
				tmp[k++] = take_right ? out[j++] : out[i++];
			}
			while (i < mid)
				tmp[k++] = out[i++];
			while (j < hi)
				tmp[k++] = out[j++];
		}
		memcpy(out, tmp, (size_t)n * sizeof *out);
	}
	free(tmp);
}

/* Whether value got equals x's element e: bits, or NaN for NaN. */
static bool same_value(arr got, int64_t i, arr x, int64_t e)
{
	if (dt_float(x.t) && isnan(get_f(x, e)))
		return isnan(get_f(got, i));
	return get_bits(got, i) == get_bits(x, e);
}

/* Few distinct values (ties): for floats, NaN, +-0.0 and +-inf among them. */
static void fill_ties(arr a)
{
	static const double fv[] = {-1.5, -0.0, 0.0, 0.5, 2.0, INFINITY, -INFINITY, NAN};
	for (int64_t i = 0; i < a.n; i++) {
		if (dt_float(a.t))
			set_f(a, i, fv[rng_range(0, COUNT(fv) - 1)]);
		else if (dt_signed(a.t))
			set_i(a, i, rng_range(-3, 3));
		else
			set_i(a, i, rng_range(0, 5) == 5 ? -1 : rng_range(0, 4)); /* the largest value too */
	}
}

/* On the GPU, the context's warnings say that the last kernel's op (sort
 * or topk) of a block of type `block` runs as loops (lower/sort.c). */
static void looped(const char *op, const char *block)
{
	if (is_interp())
		return;
	const char *w = blk_context_warnings(ops_ctx);
	char needle[96];
	snprintf(needle, sizeof needle, "this %s of a block (%s)", op, block);
	const char *at = w ? strstr(w, needle) : NULL;
	bool ok = at && strstr(at, "it runs as loops");
	if (!ok)
		why("no warning about the %s of %s in the context's warnings:\n%s\n", op, block, w ? w : "(none)");
	result(ok, "GPU warning: the %s network of %s runs as loops", op, block);
}

/* ---- kernels --------------------------------------------------------------------------- */

/* $OFFS the block's element offsets, $ROFFS the topk results'. */
static const char *SORT_SRC = "kernel k(x: *$T, v: *$T, vi: *i32, vo: *$T, ai: *i32) {\n"
                              "    let p = program_id(0);\n"
                              "    let offs = p * $N + $OFFS;\n"
                              "    let a = load(x + offs);\n"
                              "    let (s, i) = sort(a, $AXIS, $DESC, return_indices = true);\n"
                              "    store(v + offs, s);\n"
                              "    store(vi + offs, i);\n"
                              "    store(vo + offs, sort(a, axis = $AXIS, descending = $DESC));\n"
                              "    store(ai + offs, argsort(a, $AXIS, descending = $DESC));\n"
                              "}\n";

static const char *TOPK_SRC = "kernel k(x: *$T, v: *$T, vi: *i32) {\n"
                              "    let p = program_id(0);\n"
                              "    let (t, i) = topk(load(x + p * $N + $OFFS), $K, axis = $AXIS);\n"
                              "    store(v + p * $M + $ROFFS, t);\n"
                              "    store(vi + p * $M + $ROFFS, i);\n"
                              "}\n";

/* A block: 1-D (rows = 0) or (rows, cols); axis along which to sort. */
typedef struct shape2 {
	int rows, cols, axis;
} shape2;

static int numel2(shape2 s) { return s.rows ? s.rows * s.cols : s.cols; }
static int len_of(shape2 s) { return s.rows && s.axis == 0 ? s.rows : s.cols; }
static int lines_of(shape2 s) { return numel2(s) / len_of(s); }

/* Element index (within a program's block) of position j of line o, in a
 * block whose axis has length len. */
static int64_t at(shape2 s, int len, int o, int j)
{
	if (!s.rows)
		return j;
	return s.axis == 1 ? (int64_t)o * len + j : (int64_t)j * s.cols + o;
}

static const char *offs_text(shape2 s, int len, char *buf, size_t n)
{
	int rows = s.rows && s.axis == 0 ? len : s.rows;
	int cols = s.rows && s.axis == 1 ? len : s.cols;
	if (!s.rows)
		snprintf(buf, n, "arange(0, %d)", len);
	else
		snprintf(buf, n, "arange(0, %d)[:, None] * %d + arange(0, %d)[None, :]", rows, cols, cols);
	return buf;
}

static const char *shape_name(shape2 s)
{
	static char b[4][48];
	static int k;
	char *p = b[k++ & 3];
	if (!s.rows)
		snprintf(p, 48, "(%d,)", s.cols);
	else
		snprintf(p, 48, "(%d, %d) axis %d", s.rows, s.cols, s.axis);
	return p;
}

static void case_sort(dt t, shape2 s, bool desc, bool ties)
{
	int N = numel2(s), len = len_of(s), lines = lines_of(s);
	char offs[160], nb[16];
	snprintf(nb, sizeof nb, "%d", N);
	const char *src = render(SORT_SRC, "T", dts[t].name, "N", nb, "OFFS", offs_text(s, len, offs, sizeof offs), "AXIS",
	                         s.rows ? (s.axis ? "1" : "0") : "0", "DESC", desc ? "true" : "false", NULL);
	arr x = arr_new(t, (int64_t)N * PROGS);
	if (ties)
		fill_ties(x);
	else
		fill_random(x, 1000.0);
	blk_devptr dx = dev_from(x), dv = dev_zeros(t, x.n), di = dev_zeros(DT_I32, x.n), dvo = dev_zeros(t, x.n),
	           dai = dev_zeros(DT_I32, x.n);
	blk_status st = run_kernel(src, NULL, ARGS(P(dx), P(dv), P(di), P(dvo), P(dai)), NO_CONSTS, GRID(PROGS, 1, 1));
	bool ok = st == BLK_SUCCESS;
	if (ok) {
		arr v = dev_read(dv, t, x.n), vi = dev_read(di, DT_I32, x.n), vo = dev_read(dvo, t, x.n),
		    ai = dev_read(dai, DT_I32, x.n);
		int64_t *elems = malloc((size_t)len * sizeof *elems);
		int *pos = malloc((size_t)len * sizeof *pos);
		int bad = 0;
		for (int p = 0; p < PROGS; p++)
			for (int o = 0; o < lines; o++) {
				for (int j = 0; j < len; j++)
					elems[j] = (int64_t)p * N + at(s, len, o, j);
				ref_sort(x, elems, len, desc, pos);
				for (int j = 0; j < len && bad < 5; j++) {
					int64_t e = elems[j], want = elems[pos[j]];
					bool good = same_value(v, e, x, want) && get_i(vi, e) == pos[j] && same_value(vo, e, x, want) &&
					            get_i(ai, e) == pos[j];
					if (!good) {
						why("program %d line %d position %d: want %s (position %d), got %s at %lld", p, o, j,
						    show(x, want), pos[j], show(v, e), (long long)get_i(vi, e));
						why(", values alone %s, argsort %lld\n", show(vo, e), (long long)get_i(ai, e));
						bad++;
					}
				}
			}
		free(elems);
		free(pos);
		ok = bad == 0;
	}
	result(ok, "sort %s %s %s%s", dts[t].name, shape_name(s), desc ? "descending" : "ascending", ties ? " ties" : "");
}

static void case_topk(dt t, shape2 s, int K, bool ties)
{
	int N = numel2(s), len = len_of(s), lines = lines_of(s), M = N / len * K;
	char offs[160], roffs[160], nb[16], mb[16], kb[16];
	snprintf(nb, sizeof nb, "%d", N);
	snprintf(mb, sizeof mb, "%d", M);
	snprintf(kb, sizeof kb, "%d", K);
	const char *src = render(TOPK_SRC, "T", dts[t].name, "N", nb, "M", mb, "K", kb, "OFFS",
	                         offs_text(s, len, offs, sizeof offs), "ROFFS", offs_text(s, K, roffs, sizeof roffs), "AXIS",
	                         s.rows ? (s.axis ? "1" : "0") : "0", NULL);
	arr x = arr_new(t, (int64_t)N * PROGS);
	if (ties)
		fill_ties(x);
	else
		fill_random(x, 1000.0);
	blk_devptr dx = dev_from(x), dv = dev_zeros(t, (int64_t)M * PROGS), di = dev_zeros(DT_I32, (int64_t)M * PROGS);
	blk_status st = run_kernel(src, NULL, ARGS(P(dx), P(dv), P(di)), NO_CONSTS, GRID(PROGS, 1, 1));
	bool ok = st == BLK_SUCCESS;
	if (ok) {
		arr v = dev_read(dv, t, (int64_t)M * PROGS), vi = dev_read(di, DT_I32, (int64_t)M * PROGS);
		int64_t *elems = malloc((size_t)len * sizeof *elems);
		int *pos = malloc((size_t)len * sizeof *pos);
		int bad = 0;
		for (int p = 0; p < PROGS; p++)
			for (int o = 0; o < lines; o++) {
				for (int j = 0; j < len; j++)
					elems[j] = (int64_t)p * N + at(s, len, o, j);
				ref_sort(x, elems, len, true, pos);
				for (int j = 0; j < K && bad < 5; j++) {
					int64_t r = (int64_t)p * M + at(s, K, o, j), want = elems[pos[j]];
					if (!same_value(v, r, x, want) || get_i(vi, r) != pos[j]) {
						why("program %d line %d rank %d: want %s (position %d), got %s at %lld\n", p, o, j, show(x, want),
						    pos[j], show(v, r), (long long)get_i(vi, r));
						bad++;
					}
				}
			}
		free(elems);
		free(pos);
		ok = bad == 0;
	}
	result(ok, "topk %s %s k = %d%s", dts[t].name, shape_name(s), K, ties ? " ties" : "");
}

/* ---- histogram -------------------------------------------------------------------------- */

static const char *HIST_SRC = "kernel k(x: *$T, m: *i8, out: *i32) {\n"
                              "    let p = program_id(0);\n"
                              "    let offs = p * $N + arange(0, $N);\n"
                              "    let h = histogram(load(x + offs), $B$MASK);\n"
                              "    store(out + p * $B + arange(0, $B), h);\n"
                              "}\n";

static void case_histogram(dt t, int n, int bins, bool masked)
{
	char nb[16], bb[16];
	snprintf(nb, sizeof nb, "%d", n);
	snprintf(bb, sizeof bb, "%d", bins);
	const char *src = render(HIST_SRC, "T", dts[t].name, "N", nb, "B", bb, "MASK",
	                         masked ? ", mask = load(m + offs) != 0" : "", NULL);
	arr x = arr_new(t, (int64_t)n * PROGS), m = arr_new(DT_I8, (int64_t)n * PROGS);
	int64_t hi = bins + 3;
	if (dt_unsigned(t) && dts[t].bytes == 1 && hi > 255)
		hi = 255;
	if (dts[t].bytes == 1 && dt_signed(t) && hi > 127)
		hi = 127;
	for (int64_t i = 0; i < x.n; i++) {
		int64_t v = rng_range(dt_signed(t) ? -3 : 0, hi);
		if (rng_range(0, 15) == 0) /* far out of range, negative ones too */
			v = dt_signed(t) ? -(int64_t)rng_range(1, 100) : (int64_t)(rng_u64() | (1ull << (dts[t].bytes * 8 - 1)));
		set_i(x, i, v);
		set_i(m, i, rng_range(0, 3) != 0);
	}
	blk_devptr dx = dev_from(x), dm = dev_from(m), dout = dev_zeros(DT_I32, (int64_t)bins * PROGS);
	blk_status st = run_kernel(src, NULL, ARGS(P(dx), P(dm), P(dout)), NO_CONSTS, GRID(PROGS, 1, 1));
	bool ok = st == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, DT_I32, (int64_t)bins * PROGS);
		int bad = 0;
		for (int p = 0; p < PROGS; p++)
			for (int b = 0; b < bins; b++) {
				int64_t want = 0;
				for (int i = 0; i < n; i++) {
					int64_t e = (int64_t)p * n + i;
					bool in = dt_signed(t) ? get_i(x, e) == b : get_u(x, e) == (uint64_t)b;
					want += in && (!masked || get_i(m, e));
				}
				if (get_i(got, (int64_t)p * bins + b) != want && bad++ < 5)
					why("program %d bin %d: want %lld, got %lld\n", p, b, (long long)want,
					    (long long)get_i(got, (int64_t)p * bins + b));
			}
		ok = bad == 0;
	}
	result(ok, "histogram %s n = %d bins = %d%s", dts[t].name, n, bins, masked ? " masked" : "");
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	/* every type: short and mid lengths, both directions, random and ties */
	for (int i = 0; i < COUNT(SORTED); i++) {
		dt t = SORTED[i];
		case_sort(t, (shape2){0, 1, 0}, false, false);
		case_sort(t, (shape2){0, 16, 0}, true, true);
		case_sort(t, (shape2){0, 256, 0}, false, true);
		case_sort(t, (shape2){0, 512, 0}, true, false);
		case_sort(t, (shape2){8, 32, 1}, rng_range(0, 1), true);
		case_sort(t, (shape2){32, 8, 0}, rng_range(0, 1), true);
		case_topk(t, (shape2){0, 64, 0}, 8, true);
		case_topk(t, (shape2){0, 256, 0}, 4, false);
	}
	/* lengths 1 to 4096 (65536 on the interpreter) */
	for (int len = 1; len <= 4096; len *= 2)
		case_sort(len % 3 ? DT_F32 : DT_I32, (shape2){0, len, 0}, len & 1024, true);
	case_sort(DT_F32, (shape2){0, 4096, 0}, true, false);
	case_sort(DT_F64, (shape2){0, 2048, 0}, false, true);
	case_sort(DT_BF16, (shape2){0, 4096, 0}, true, true);
	/* networks too large to unroll on 4 warps: loops over local memory on
	 * the GPU, with a warning naming the block */
	case_sort(DT_F32, (shape2){0, 65536, 0}, false, true);
	looped("sort", "f32[65536]");
	case_sort(DT_F32, (shape2){16, 4096, 1}, true, true);
	looped("sort", "f32[16, 4096]");
	case_sort(DT_I32, (shape2){4096, 16, 0}, false, false);
	looped("sort", "i32[4096, 16]");
	case_sort(DT_F64, (shape2){0, 16384, 0}, true, true);
	looped("sort", "f64[16384]");
	case_sort(DT_U16, (shape2){2, 16384, 1}, false, true);
	looped("sort", "u16[2, 16384]");
	case_topk(DT_F32, (shape2){0, 65536, 0}, 16, true);
	looped("topk", "f32[65536]");
	case_topk(DT_F32, (shape2){0, 32768, 0}, 64, false);
	looped("topk", "f32[32768]");
	case_topk(DT_F64, (shape2){4, 8192, 1}, 32, true);
	looped("topk", "f64[4, 8192]");
	case_topk(DT_I32, (shape2){16384, 4, 0}, 64, true);
	looped("topk", "i32[16384, 4]");
	/* 2-D: every axis, several shapes */
	case_sort(DT_F32, (shape2){4, 1024, 1}, false, true);
	case_sort(DT_F32, (shape2){1024, 4, 0}, true, true);
	case_sort(DT_I64, (shape2){16, 64, 0}, false, true);
	case_sort(DT_U16, (shape2){2, 2048, 1}, true, true);
	/* topk: k from 1 to the length */
	for (int K = 1; K <= 64; K *= 2)
		case_topk(DT_F32, (shape2){0, 64, 0}, K, true);
	case_topk(DT_F32, (shape2){0, 4096, 0}, 8, false);
	case_topk(DT_F32, (shape2){0, 4096, 0}, 8, true);
	case_topk(DT_F16, (shape2){0, 4096, 0}, 32, true);
	case_topk(DT_I64, (shape2){0, 1024, 0}, 2, true);
	case_topk(DT_F32, (shape2){16, 256, 1}, 8, true);
	case_topk(DT_F32, (shape2){256, 16, 0}, 4, true);
	case_topk(DT_I32, (shape2){8, 8, 0}, 8, true);
	case_topk(DT_U8, (shape2){4, 2, 1}, 1, true);
	/* histogram */
	for (int i = 0; i < COUNT(INTS); i++) {
		case_histogram(INTS[i], 1024, 16, false);
		case_histogram(INTS[i], 256, 64, true);
	}
	case_histogram(DT_I32, 4096, 256, true);
	case_histogram(DT_I32, 8192, 256, false);
	case_histogram(DT_I32, 128, 1024, true);
	case_histogram(DT_U32, 16, 1, false);
	case_histogram(DT_I32, 1, 2, true);
	/* more bins than shared memory counts at once: in parts */
	case_histogram(DT_I32, 4096, 65536, true);
	case_histogram(DT_U16, 2048, 32768, false);
	case_histogram(DT_I64, 1024, 131072, true);
	return ops_finish();
}
