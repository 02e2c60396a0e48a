/* tests/ops: a fn's return inside a runtime if or loop (docs/language.md,
 * "return") of tuples, pointers, blocks of pointers and blocks: pointers
 * chosen by an if (scalars and blocks), a tuple (index, row block, sum)
 * returned from a for loop that the kernel calls from its own loop, a
 * tuple (block of pointers, pointer, index) from a while loop, a tuple from
 * a static_range loop with runtime ifs, a fn returning another fn's tuple
 * from inside its if, a `-> *i32` fn leaving a while loop by continue,
 * break and return, a scalar result before a loop and a block inside it. Each program takes its own condition (a parameter per
 * program, random, with the programs that force every path), so one launch
 * takes both sides of each; the references are plain C, and each case
 * checks that its inputs took at least as many paths as it names. Exact. */
#include "ops.h"

/* x: R rows of B lanes; out: B lanes a program. */
enum { B = 64, R = 8, PROGS = 8, MAX_PATHS = 16 };

/* out[pid][lane] from x and the program's parameter; *path: which way the
 * program's fn went. */
typedef int64_t (*ref_fn)(const arr *x, int lane, int64_t p, int *path);

#define X(r, l) get_i(*x, (int64_t)(r) * B + (l))

/* Runs src (kernel k(x: *i32, ps: *i32, out: *i32, n: i32) over PROGS
 * programs, n = R) and compares with ref; the programs must take at least
 * min_paths of the fn's paths. */
static void run_case(const char *src, arr x, arr ps, ref_fn ref, int min_paths, const char *name)
{
	arr want = arr_new(DT_I32, PROGS * B);
	bool seen[MAX_PATHS] = {0};
	int paths = 0;
	for (int pid = 0; pid < PROGS; pid++)
		for (int l = 0; l < B; l++) {
			int path = 0;
			set_i(want, (int64_t)pid * B + l, (int32_t)ref(&x, l, get_i(ps, pid), &path));
			if (path >= 0 && path < MAX_PATHS && !seen[path]) {
				seen[path] = true;
				paths++;
			}
		}
	blk_devptr dx = dev_from(x), dp = dev_from(ps), dout = dev_zeros(DT_I32, PROGS * B);
	bool ok = paths >= min_paths || (why("the inputs took %d paths, fewer than %d\n", paths, min_paths), false);
	ok = ok && run_kernel(src, "k", ARGS(P(dx), P(dp), P(dout), I(R)), NO_CONSTS, GRID(PROGS, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_I32, PROGS * B), want, NULL, 0);
	result(ok, "%s (%d paths)", name, paths);
}

static arr random_table(void)
{
	arr x = arr_new(DT_I32, R * B);
	for (int i = 0; i < R * B; i++)
		set_i(x, i, rng_range(-1000, 1000));
	return x;
}

/* A parameter a program: the forced ones first, then random in [lo, hi]. */
static arr params(const int64_t *forced, int n_forced, int64_t lo, int64_t hi)
{
	arr ps = arr_new(DT_I32, PROGS);
	for (int i = 0; i < PROGS; i++)
		set_i(ps, i, i < n_forced ? forced[i] : rng_range(lo, hi));
	return ps;
}

/* ---- pointers chosen by an if ---------------------------------------------------- */

static const char *PICK_SRC = "fn pick(p, q, c: i32) {\n"
                              "    if c > 0 { return p, q; }\n"
                              "    return q, p;\n"
                              "}\n"
                              "kernel k(x: *i32, ps: *i32, out: *i32, n: i32) {\n"
                              "    let pid = program_id(0);\n"
                              "    let lanes = arange(0, 64);\n"
                              "    let c = load(ps + pid);\n"
                              "    let a, b = pick(x + lanes, x + 256 + lanes, c);\n"
                              "    let s, t = pick(x + 128, x + 384, -c);\n"
                              "    let d = load(s + lanes) - load(t + lanes);\n"
                              "    store(out + pid * 64 + lanes, load(a) * 3 - load(b) + d * 5);\n"
                              "}\n";

static int64_t pick_ref(const arr *x, int l, int64_t c, int *path)
{
	*path = c > 0 ? 0 : c < 0 ? 1 : 2;
	int64_t a = c > 0 ? X(0, l) : X(4, l), b = c > 0 ? X(4, l) : X(0, l);
	int64_t s = -c > 0 ? X(2, l) : X(6, l), t = -c > 0 ? X(6, l) : X(2, l);
	return a * 3 - b + (s - t) * 5;
}

/* ---- a tuple from a for loop, called from the kernel's loop ------------------------------ */

/* the first of n rows whose sum is over t: (its index, the row, the sum) */
#define FIND_FN "fn find(x: *i32, n: i32, t: i32) {\n"                      \
                "    for r in range(0, n) {\n"                               \
                "        let v = load(x + r * 64 + arange(0, 64));\n"        \
                "        let s = sum(v, axis = 0);\n"                        \
                "        if s > t { return r, v, s; }\n"                     \
                "    }\n"                                                    \
                "    return -1, zeros((64,), i32), 0;\n"                     \
                "}\n"

static const char *FIND_SRC = FIND_FN
                              "kernel k(x: *i32, ps: *i32, out: *i32, n: i32) {\n"
                              "    let pid = program_id(0);\n"
                              "    let t = load(ps + pid);\n"
                              "    var acc = zeros((64,), i32);\n"
                              "    for j in range(0, 2) {\n"
                              "        let r, v, s = find(x + j * 64, n - j, t + j * 300);\n"
                              "        acc = acc * 3 + v + r * 100000 + s;\n"
                              "    }\n"
                              "    store(out + pid * 64 + arange(0, 64), acc);\n"
                              "}\n";

typedef struct Found {
	int64_t r, v, s;
} Found;

/* find() over rows first, first + 1, ... (n of them) for lane l */
static Found find_ref(const arr *x, int first, int n, int64_t t, int l)
{
	for (int r = 0; r < n; r++) {
		int64_t s = 0;
		for (int k = 0; k < B; k++)
			s += X(first + r, k);
		if (s > t)
			return (Found){r, X(first + r, l), s};
	}
	return (Found){-1, 0, 0};
}

static int64_t find_loop_ref(const arr *x, int l, int64_t t, int *path)
{
	int64_t acc = 0;
	*path = 0;
	for (int j = 0; j < 2; j++) {
		Found f = find_ref(x, j, R - j, t + j * 300, l);
		acc = acc * 3 + f.v + f.r * 100000 + f.s;
		*path = *path * 9 % MAX_PATHS + (int)(f.r + 1); /* which rows the two calls stopped at */
	}
	return acc;
}

/* ---- a tuple with pointers from a while loop ----------------------------------------- */

static const char *SEEK_SRC = "fn seek(x: *i32, n: i32, t: i32) {\n"
                              "    var r = 0;\n"
                              "    while r < n {\n"
                              "        let p = x + r * 64;\n"
                              "        if (load(p) & 7) == t { return p + arange(0, 64), p + 1, r; }\n"
                              "        r += 1;\n"
                              "    }\n"
                              "    return x + arange(0, 64), x + 2, n;\n"
                              "}\n"
                              "kernel k(x: *i32, ps: *i32, out: *i32, n: i32) {\n"
                              "    let pid = program_id(0);\n"
                              "    let ptrs, p, r = seek(x, n, load(ps + pid));\n"
                              "    store(out + pid * 64 + arange(0, 64), load(ptrs) + load(p) * 3 + r * 100000);\n"
                              "}\n";

static int64_t seek_ref(const arr *x, int l, int64_t t, int *path)
{
	for (int r = 0; r < R; r++)
		if ((X(r, 0) & 7) == t) {
			*path = r;
			return X(r, l) + X(r, 1) * 3 + r * 100000;
		}
	*path = R;
	return X(0, l) + X(0, 2) * 3 + R * 100000;
}

/* ---- a tuple from a static_range loop with runtime ifs ----------------------------------- */

static const char *STATIC_SRC = "fn first_below(x: *i32, t: i32) {\n"
                                "    for i in static_range(0, 4) {\n"
                                "        let p = x + i * 64;\n"
                                "        if load(p) < t { return p, i * 10; }\n"
                                "    }\n"
                                "    return x + 5, -7;\n"
                                "}\n"
                                "kernel k(x: *i32, ps: *i32, out: *i32, n: i32) {\n"
                                "    let pid = program_id(0);\n"
                                "    let p, k = first_below(x, load(ps + pid));\n"
                                "    store(out + pid * 64 + arange(0, 64), load(p + arange(0, 64)) + k);\n"
                                "}\n";

static int64_t static_ref(const arr *x, int l, int64_t t, int *path)
{
	for (int i = 0; i < 4; i++)
		if (X(i, 0) < t) {
			*path = i;
			return X(i, l) + i * 10;
		}
	*path = 4;
	return get_i(*x, 5 + l) - 7;
}

/* ---- a fn returning another fn's tuple from inside its if --------------------------------- */

static const char *OUTER_SRC = FIND_FN
                               "fn outer(x: *i32, n: i32, t: i32) {\n"
                               "    if t % 2 == 0 { return find(x, n, t); }\n"
                               "    let r, v, s = find(x, n, t + 500);\n"
                               "    if r < 0 { return find(x + 64, n - 1, -t); }\n"
                               "    return r + 10, v * 2, s;\n"
                               "}\n"
                               "kernel k(x: *i32, ps: *i32, out: *i32, n: i32) {\n"
                               "    let pid = program_id(0);\n"
                               "    let r, v, s = outer(x, n, load(ps + pid));\n"
                               "    store(out + pid * 64 + arange(0, 64), v + r * 100000 + s);\n"
                               "}\n";

static int64_t outer_ref(const arr *x, int l, int64_t t, int *path)
{
	Found f;
	if (t % 2 == 0) {
		f = find_ref(x, 0, R, t, l);
		*path = 0;
	} else if ((f = find_ref(x, 0, R, t + 500, l)).r < 0) {
		f = find_ref(x, 1, R - 1, -t, l);
		*path = 1;
	} else {
		f = (Found){f.r + 10, f.v * 2, f.s};
		*path = 2;
	}
	return f.v + f.r * 100000 + f.s;
}

/* ---- a `-> *i32` fn leaving a while loop by continue, break and return -------------------- */

static const char *SEL_SRC = "fn sel(p: *i32, q: *i32, c: i32) -> *i32 {\n"
                             "    var i = 0;\n"
                             "    while true {\n"
                             "        i += 1;\n"
                             "        if i < c { continue; }\n"
                             "        if c > 3 { return p + i; }\n"
                             "        break;\n"
                             "    }\n"
                             "    return q;\n"
                             "}\n"
                             "kernel k(x: *i32, ps: *i32, out: *i32, n: i32) {\n"
                             "    let pid = program_id(0);\n"
                             "    let p = sel(x, x + 320, load(ps + pid));\n"
                             "    store(out + pid * 64 + arange(0, 64), load(p + arange(0, 64)));\n"
                             "}\n";

static int64_t sel_ref(const arr *x, int l, int64_t c, int *path)
{
	*path = c > 3;
	return c > 3 ? get_i(*x, c + l) : X(5, l);
}

/* ---- a scalar result before a loop, a block inside it ------------------------------------ */

static const char *WIDEN_SRC = "fn widen(x: *i32, n: i32, t: i32) {\n"
                               "    if t > 5000 { return t, 1; }\n"
                               "    for r in range(0, n) {\n"
                               "        if load(x + r * 64) > t { return load(x + r * 64 + arange(0, 64)), r; }\n"
                               "    }\n"
                               "    return -t, n;\n"
                               "}\n"
                               "kernel k(x: *i32, ps: *i32, out: *i32, n: i32) {\n"
                               "    let pid = program_id(0);\n"
                               "    let v, r = widen(x, n, load(ps + pid));\n"
                               "    store(out + pid * 64 + arange(0, 64), v + r * 100000);\n"
                               "}\n";

static int64_t widen_ref(const arr *x, int l, int64_t t, int *path)
{
	if (t > 5000) {
		*path = 0;
		return t + 100000;
	}
	for (int r = 0; r < R; r++)
		if (X(r, 0) > t) {
			*path = 1;
			return X(r, l) + r * 100000;
		}
	*path = 2;
	return -t + R * 100000;
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	arr x = random_table();
	run_case(PICK_SRC, x, params((const int64_t[]){1, -1, 0}, 3, -3, 3), pick_ref, 3,
	         "pointers and blocks of pointers chosen by a runtime if");
	x = random_table();
	run_case(FIND_SRC, x, params((const int64_t[]){-1000000, 1000000}, 2, -2000, 2000), find_loop_ref, 2,
	         "(index, row, sum) returned from a for loop, the fn called in the kernel's loop");
	x = random_table();
	int64_t none = 8, row0 = get_i(x, 0) & 7; /* no row's first element ends in 8; the first row's does */
	run_case(SEEK_SRC, x, params((const int64_t[]){row0, none}, 2, 0, 7), seek_ref, 2,
	         "(block of pointers, pointer, index) returned from a while loop");
	x = random_table();
	run_case(STATIC_SRC, x, params((const int64_t[]){-2000, 2000}, 2, -1000, 1000), static_ref, 2,
	         "(pointer, number) returned from a static_range loop's runtime ifs");
	x = random_table();
	run_case(OUTER_SRC, x, params((const int64_t[]){0, -100001, 100001}, 3, -3000, 3000), outer_ref, 3,
	         "a fn returning another fn's tuple from inside its if, the inner fn's from its loop");
	x = random_table();
	run_case(SEL_SRC, x, params((const int64_t[]){5, 1}, 2, -2, 9), sel_ref, 2,
	         "a '-> *i32' fn leaving a while loop by continue, break and return");
	x = random_table();
	run_case(WIDEN_SRC, x, params((const int64_t[]){6000, -2000, 1000}, 3, -1000, 1000), widen_ref, 3,
	         "a scalar result before a loop, a block inside it (broadcast)");
	return ops_finish();
}
