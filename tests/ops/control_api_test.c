/* tests/ops: control flow and programs, as .tile kernels through blk.h:
 * for over range (constant and runtime bounds, steps > 1, negative steps,
 * zero trips), static_range, while, break and continue, if/else carrying
 * blocks, else-if chains, nested loops, early return, ternaries, fn helpers
 * (tuples, defaults, named arguments, generic types, fns as arguments),
 * compile-time if on const parameters, loops carrying tuples;
 * program_id and num_programs on 1-, 2- and 3-D grids (grid clauses and
 * explicit grids); print (the text blk_context_printed returns, on the
 * interpreter) and assert (a failing one is BLK_ERROR_LAUNCH naming the
 * message, the line and the program). All exact. */
#include "ops.h"

/* One kernel over an i32 input x (n = PROGS * 64) and an i32 output. */
enum { B = 64, PROGS = 4 };

/* A feature that language.md specifies and the compiler reports as not
 * supported yet: the case passes, marked pending, while the compiler gives
 * exactly that error; once it compiles, the result is checked. */
static const char *pending;

static void int_case(const char *src, const blk_arg *extra, int n_extra, const blk_const *consts, int n_consts,
                     int64_t (*ref)(const arr *x, int i, const int64_t *params), const int64_t *params,
                     const char *name)
{
	int n = PROGS * B;
	arr x = arr_new(DT_I32, n), want = arr_new(DT_I32, n), init = arr_new(DT_I32, n);
	for (int i = 0; i < n; i++) {
		set_i(x, i, rng_range(-1000, 1000));
		set_i(init, i, -123456);
	}
	for (int i = 0; i < n; i++)
		set_i(want, i, ref(&x, i, params));
	blk_devptr dx = dev_from(x), dout = dev_from(init);
	blk_arg args[8] = {P(dx), P(dout)};
	for (int i = 0; i < n_extra; i++)
		args[2 + i] = extra[i];
	blk_status st = run_kernel(src, NULL, args, 2 + n_extra, consts, n_consts, GRID(PROGS, 1, 1));
	if (pending && st == BLK_ERROR_SOURCE && strstr(ops_err, pending)) {
		ops_why_len = 0;
		ops_why[0] = '\0';
		result(true, "%s [pending: the compiler says \"%s\"]", name, pending);
		pending = NULL;
		return;
	}
	pending = NULL;
	bool ok = st == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_I32, n), want, &x, 1);
	result(ok, "%s", name);
}

#define X(i) get_i(*x, (i))
#define LANE(i) ((i) % B)
#define PID(i) ((i) / B)

/* ---- for ------------------------------------------------------------------------- */

static const char *FOR_CONST_SRC = "kernel k(x: *i32, out: *i32) {\n"
                                   "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                                   "    let v = load(x + offs);\n"
                                   "    var acc = zeros((64,), i32);\n"
                                   "    for k in range(0, 8) {\n"
                                   "        acc += v * k;\n"
                                   "    }\n"
                                   "    store(out + offs, acc);\n"
                                   "}\n";
static int64_t for_const_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	return X(i) * 28;
}

/* rows lo, lo + step, ... < hi of a (16, 64) table: a sum per lane */
static const char *FOR_RUNTIME_SRC = "kernel k(x: *i32, out: *i32, lo: i32, hi: i32, step: i32) {\n"
                                     "    let lanes = arange(0, 64);\n"
                                     "    var acc = zeros((64,), i32);\n"
                                     "    var trips = 0;\n"
                                     "    for r in range(lo, hi, step) {\n"
                                     "        acc += load(x + ((r % 4 + 4) % 4) * 64 + lanes) * r;\n"
                                     "        trips += 1;\n"
                                     "    }\n"
                                     "    store(out + program_id(0) * 64 + lanes, acc + trips);\n"
                                     "}\n";
static int64_t for_runtime_ref(const arr *x, int i, const int64_t *p)
{
	int64_t acc = 0, trips = 0;
	for (int64_t r = p[0]; p[2] > 0 ? r < p[1] : r > p[1]; r += p[2]) {
		acc += X((int)((r % 4 + 4) % 4) * 64 + LANE(i)) * r;
		trips++;
	}
	return (int32_t)(acc + trips);
}

static void for_runtime_case(int64_t lo, int64_t hi, int64_t step)
{
	int64_t p[3] = {lo, hi, step};
	char name[96];
	snprintf(name, sizeof name, "for r in range(%lld, %lld, %lld) with runtime bounds, carried block",
	         (long long)lo, (long long)hi, (long long)step);
	int_case(FOR_RUNTIME_SRC, (blk_arg[]){I(lo), I(hi), I(step)}, 3, NO_CONSTS, for_runtime_ref, p, name);
}

static const char *STATIC_SRC = "kernel k(x: *i32, out: *i32) {\n"
                                "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                                "    var acc = load(x + offs);\n"
                                "    for i in static_range(0, 10, 3) {\n"
                                "        static_assert(i % 3 == 0, \"a constant in each copy\");\n"
                                "        let w = reshape(broadcast_to(acc[:, None], (64, 1 << (i / 3))), (64 << (i / 3),));\n"
                                "        acc = acc * 2 + i + sum(w, axis = 0) % 7;\n"
                                "    }\n"
                                "    store(out + offs, acc);\n"
                                "}\n";
static int64_t static_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	int base = PID(i) * 64;
	int64_t acc[64];
	for (int l = 0; l < 64; l++)
		acc[l] = X(base + l);
	for (int s = 0; s < 10; s += 3) {
		int64_t tot = 0;
		for (int l = 0; l < 64; l++)
			tot += acc[l] * (1 << (s / 3));
		tot = (int32_t)tot;
		for (int l = 0; l < 64; l++)
			acc[l] = (int32_t)(acc[l] * 2 + s + tot % 7);
	}
	return acc[LANE(i)];
}

/* ---- while, break, continue ------------------------------------------------------------ */

/* Collatz steps of |x| + 1 per program, scalar, with a ternary. */
static const char *WHILE_SRC = "kernel k(x: *i32, out: *i32) {\n"
                               "    let i = program_id(0) * 64;\n"
                               "    for l in range(0, 64) {\n"
                               "        var n = abs(load(x + i + l)) + 1;\n"
                               "        var steps = 0;\n"
                               "        while n != 1 {\n"
                               "            n = n % 2 == 0 ? n / 2 : 3 * n + 1;\n"
                               "            steps += 1;\n"
                               "        }\n"
                               "        store(out + i + l, steps);\n"
                               "    }\n"
                               "}\n";
static int64_t while_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	int64_t n = llabs(X(i)) + 1, steps = 0;
	while (n != 1) {
		n = n % 2 == 0 ? n / 2 : 3 * n + 1;
		steps++;
	}
	return steps;
}

/* Ternaries on a runtime condition run only the arm chosen: the other
 * arm's load would be out of bounds, its division by zero, and a ternary
 * of two stores (no value) stores once; a ternary of blocks with arms that
 * cannot fault picks as where does. */
static const char *TERNARY_SRC = "kernel k(x: *i32, out: *i32, zero: i32) {\n"
                                 "    let pid = program_id(0);\n"
                                 "    let offs = pid * 64 + arange(0, 64);\n"
                                 "    let v = pid >= 0 ? load(x + offs) : load(x + offs + 100000000);\n"
                                 "    let q = zero != 0 ? 1000 / zero : 7;\n"
                                 "    let w = pid % 3 == 0 ? v * 2 : v + q;\n"
                                 "    pid % 2 == 0 ? store(out + offs, w + q) : store(out + offs, -w);\n"
                                 "}\n";
static int64_t ternary_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	int64_t w = PID(i) % 3 == 0 ? X(i) * 2 : X(i) + 7;
	return PID(i) % 2 == 0 ? w + 7 : -w;
}

/* view as a method, flatten, range's options given as None, and a type
 * compared with == in a const if (T is i32, or f32: then negated). */
static const char *CONSTRUCTS_SRC = "kernel k(x: *i32, out: *i32, T: const type = i32) {\n"
                                    "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                                    "    let v = load(x + offs).view(4, 16);\n"
                                    "    var acc = flatten(trans(v));\n"
                                    "    for i in range(0, 2, num_stages = None, unroll = None) {\n"
                                    "        acc += 1;\n"
                                    "    }\n"
                                    "    if T == i32 {\n"
                                    "        store(out + offs, acc);\n"
                                    "    } else {\n"
                                    "        store(out + offs, -acc);\n"
                                    "    }\n"
                                    "}\n";
static int64_t constructs_ref(const arr *x, int i, const int64_t *p)
{
	int j = LANE(i);
	int64_t w = X(PID(i) * 64 + (j % 4) * 16 + j / 4) + 2;
	return p[0] ? w : -w;
}

/* A tensor descriptor's fields: shape, strides, block_shape, dtype. */
static const char *DESC_FIELDS_SRC = "kernel k(x: *i32, out: *i32) {\n"
                                     "    let d = tensor_desc(x, (4, 64), (64, 1), (1, 64));\n"
                                     "    let rows, cols = d.shape;\n"
                                     "    let s0, s1 = d.strides;\n"
                                     "    let b0, b1 = d.block_shape;\n"
                                     "    let v = d.load((program_id(0), 0));\n"
                                     "    let w = zeros(d.block_shape, d.dtype) + v * (rows + cols + s0 + s1 + b0 + b1);\n"
                                     "    store(out + program_id(0) * 64 + arange(0, 64), reshape(w, (64,)));\n"
                                     "}\n";
static int64_t desc_fields_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	return X(i) * (4 + 64 + 64 + 1 + 1 + 64);
}

/* A pointer's element type as a type field: p.dtype is *i32, its
 * element_ty i32 (Triton's spelling); the i64 product converts to it. */
static const char *ELEMENT_TY_SRC = "kernel k(x: *i32, out: *i32) {\n"
                                    "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                                    "    let p = out + program_id(0) * 64;\n"
                                    "    let v = load(x + offs).to(i64) * 3;\n"
                                    "    store(p + arange(0, 64), v.to(p.dtype.element_ty));\n"
                                    "}\n";
static int64_t element_ty_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	return (int32_t)(uint32_t)((uint64_t)X(i) * 3u);
}

/* A descriptor var changed in a runtime if: odd programs read the next
 * program's row through a descriptor of another base and shape (rows past
 * its 3 read as 0: the last program's). */
static const char *DESC_IF_SRC = "kernel k(x: *i32, out: *i32) {\n"
                                 "    let pid = program_id(0);\n"
                                 "    var d = tensor_desc(x, (4, 64), (64, 1), (1, 64));\n"
                                 "    if pid % 2 == 1 {\n"
                                 "        d = tensor_desc(x + 64, (3, 64), (64, 1), (1, 64));\n"
                                 "    }\n"
                                 "    let rows, cols = d.shape;\n"
                                 "    let v = d.load((pid, 0)) + rows;\n"
                                 "    store(out + pid * 64 + arange(0, 64), reshape(v, (64,)));\n"
                                 "}\n";
static int64_t desc_if_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	if (PID(i) % 2 == 0)
		return X(i) + 4;
	return (PID(i) + 1 < 4 ? X(i + 64) : 0) + 3;
}

/* A block carried through a while loop with a runtime trip count. */
static const char *WHILE_BLOCK_SRC = "kernel k(x: *i32, out: *i32, trips: i32) {\n"
                                     "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                                     "    var v = load(x + offs);\n"
                                     "    var t = 0;\n"
                                     "    while t < trips + program_id(0) {\n"
                                     "        v = (v * 3 + t) % 1001;\n"
                                     "        t += 1;\n"
                                     "    }\n"
                                     "    store(out + offs, v);\n"
                                     "}\n";
static int64_t while_block_ref(const arr *x, int i, const int64_t *p)
{
	int64_t v = X(i);
	for (int t = 0; t < p[0] + PID(i); t++)
		v = (v * 3 + t) % 1001;
	return v;
}

static const char *BREAK_SRC = "kernel k(x: *i32, out: *i32, limit: i32) {\n"
                               "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                               "    var acc = load(x + offs);\n"
                               "    for k in range(0, 100) {\n"
                               "        if k % 3 == 0 {\n"
                               "            continue;\n"
                               "        }\n"
                               "        if k > limit + program_id(0) {\n"
                               "            break;\n"
                               "        }\n"
                               "        acc += k;\n"
                               "    }\n"
                               "    var w = 0;\n"
                               "    while true {\n"
                               "        w += 1;\n"
                               "        if w >= 5 { break; }\n"
                               "    }\n"
                               "    store(out + offs, acc * 10 + w);\n"
                               "}\n";
/* The same loop written with a while condition (supported today). */
static const char *WHILE_COND_SRC = "kernel k(x: *i32, out: *i32, limit: i32) {\n"
                                    "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                                    "    var acc = load(x + offs);\n"
                                    "    var k = 0;\n"
                                    "    var stop = false;\n"
                                    "    while k < 100 && !stop {\n"
                                    "        if k % 3 != 0 {\n"
                                    "            if k > limit + program_id(0) {\n"
                                    "                stop = true;\n"
                                    "            } else {\n"
                                    "                acc += k;\n"
                                    "            }\n"
                                    "        }\n"
                                    "        k += 1;\n"
                                    "    }\n"
                                    "    store(out + offs, acc * 10 + 5);\n"
                                    "}\n";

static int64_t break_ref(const arr *x, int i, const int64_t *p)
{
	int64_t acc = X(i);
	for (int k = 0; k < 100; k++) {
		if (k % 3 == 0)
			continue;
		if (k > p[0] + PID(i))
			break;
		acc += k;
	}
	return acc * 10 + 5;
}

/* ---- if / else ------------------------------------------------------------------------------ */

static const char *IF_SRC = "kernel k(x: *i32, out: *i32, s: i32) {\n"
                            "    let pid = program_id(0);\n"
                            "    let offs = pid * 64 + arange(0, 64);\n"
                            "    let v = load(x + offs);\n"
                            "    var r = zeros((64,), i32);\n"
                            "    if pid == s {\n"
                            "        r = v * 2;\n"
                            "    } else if pid > s {\n"
                            "        r = v - 1;\n"
                            "        if pid % 2 == 0 {\n"
                            "            r = -r;\n"
                            "        }\n"
                            "    } else {\n"
                            "        r = where(v > 0, v, 0);\n"
                            "    }\n"
                            "    store(out + offs, r);\n"
                            "}\n";
static int64_t if_ref(const arr *x, int i, const int64_t *p)
{
	int pid = PID(i);
	int64_t v = X(i);
	if (pid == p[0])
		return v * 2;
	if (pid > p[0])
		return pid % 2 == 0 ? -(v - 1) : v - 1;
	return v > 0 ? v : 0;
}

/* Nested loops: a triangle of row sums. */
static const char *NESTED_SRC = "kernel k(x: *i32, out: *i32, n: i32) {\n"
                                "    let pid = program_id(0);\n"
                                "    var acc = zeros((64,), i32);\n"
                                "    for i in range(0, n) {\n"
                                "        for j in range(0, i) {\n"
                                "            for s in static_range(2) {\n"
                                "                acc += load(x + ((pid + i + j + s) % 4) * 64 + arange(0, 64));\n"
                                "            }\n"
                                "        }\n"
                                "    }\n"
                                "    store(out + pid * 64 + arange(0, 64), acc);\n"
                                "}\n";
static int64_t nested_ref(const arr *x, int i, const int64_t *p)
{
	int64_t acc = 0;
	int pid = PID(i);
	for (int a = 0; a < p[0]; a++)
		for (int b = 0; b < a; b++)
			for (int s = 0; s < 2; s++)
				acc += X(((pid + a + b + s) % 4) * 64 + LANE(i));
	return acc;
}

/* Early return: odd programs leave before storing. */
static const char *RETURN_SRC = "kernel k(x: *i32, out: *i32) {\n"
                                "    let pid = program_id(0);\n"
                                "    if pid % 2 == 1 {\n"
                                "        return;\n"
                                "    }\n"
                                "    let offs = pid * 64 + arange(0, 64);\n"
                                "    store(out + offs, load(x + offs) + 1);\n"
                                "}\n";
static int64_t return_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	return PID(i) % 2 ? -123456 : X(i) + 1;
}

/* ---- break, continue, early return, negative steps ----------------------------------------------- */

/* A constant negative step (with a num_stages hint), then a runtime one. */
static const char *STEP_SRC = "kernel k(x: *i32, out: *i32, lo: i32, hi: i32, st: i32) {\n"
                              "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                              "    var acc = load(x + offs);\n"
                              "    for i in range(15, -16, -2, num_stages = 3) {\n"
                              "        acc = acc + i * (i + program_id(0));\n"
                              "    }\n"
                              "    var n = 0;\n"
                              "    for j in range(lo, hi, st) {\n"
                              "        acc += j;\n"
                              "        n += 1;\n"
                              "    }\n"
                              "    store(out + offs, acc * 64 + n);\n"
                              "}\n";
static int64_t step_ref(const arr *x, int i, const int64_t *p)
{
	int64_t acc = X(i), n = 0;
	for (int64_t k = 15; k > -16; k -= 2)
		acc += k * (k + PID(i));
	for (int64_t j = p[0]; p[2] > 0 ? j < p[1] : j > p[1]; j += p[2]) {
		acc += j;
		n++;
	}
	return acc * 64 + n;
}

static void step_case(int64_t lo, int64_t hi, int64_t st)
{
	int64_t p[3] = {lo, hi, st};
	char name[128];
	snprintf(name, sizeof name, "range(15, -16, -2, num_stages = 3), then range(%lld, %lld, %lld) at run time",
	         (long long)lo, (long long)hi, (long long)st);
	int_case(STEP_SRC, (blk_arg[]){I(lo), I(hi), I(st)}, 3, NO_CONSTS, step_ref, p, name);
}

/* break and continue in a for at iterations b and c (per program), the
 * values carried out of the broken loop. */
static const char *EXIT_FOR_SRC = "kernel k(x: *i32, out: *i32, b: i32, c: i32) {\n"
                                  "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                                  "    var acc = load(x + offs);\n"
                                  "    var last = -1;\n"
                                  "    for i in range(0, 20) {\n"
                                  "        if i == c + program_id(0) { continue; }\n"
                                  "        acc = acc + i * (i + 1);\n"
                                  "        last = i;\n"
                                  "        if i >= b { break; }\n"
                                  "        acc += 1;\n"
                                  "    }\n"
                                  "    store(out + offs, acc + last * 100000);\n"
                                  "}\n";
static int64_t exit_for_ref(const arr *x, int i, const int64_t *p)
{
	int64_t acc = X(i), last = -1;
	for (int64_t k = 0; k < 20; k++) {
		if (k == p[1] + PID(i))
			continue;
		acc += k * (k + 1);
		last = k;
		if (k >= p[0])
			break;
		acc += 1;
	}
	return acc + last * 100000;
}

/* A while with continue and break around a for (negative step) whose
 * break leaves the inner loop only. */
static const char *EXIT_NESTED_SRC = "kernel k(x: *i32, out: *i32, n: i32) {\n"
                                     "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                                     "    var acc = load(x + offs);\n"
                                     "    var i = 0;\n"
                                     "    while i < n {\n"
                                     "        i += 1;\n"
                                     "        if i % 4 == 2 { continue; }\n"
                                     "        for j in range(10, 0, -3) {\n"
                                     "            if j < i { break; }\n"
                                     "            if j == 7 { continue; }\n"
                                     "            acc += j * i;\n"
                                     "        }\n"
                                     "        if i > 6 + program_id(0) { break; }\n"
                                     "    }\n"
                                     "    store(out + offs, acc * 16 + i);\n"
                                     "}\n";
static int64_t exit_nested_ref(const arr *x, int i, const int64_t *p)
{
	int64_t acc = X(i), k = 0;
	while (k < p[0]) {
		k++;
		if (k % 4 == 2)
			continue;
		for (int64_t j = 10; j > 0; j -= 3) {
			if (j < k)
				break;
			if (j == 7)
				continue;
			acc += j * k;
		}
		if (k > 6 + PID(i))
			break;
	}
	return acc * 16 + k;
}

/* return from nested ifs inside a loop, and from an if after it. */
static const char *EXIT_RETURN_SRC = "kernel k(x: *i32, out: *i32, n: i32) {\n"
                                     "    let pid = program_id(0);\n"
                                     "    let offs = pid * 64 + arange(0, 64);\n"
                                     "    var acc = load(x + offs);\n"
                                     "    for r in range(0, n) {\n"
                                     "        acc += r;\n"
                                     "        if r == pid + 1 {\n"
                                     "            if pid % 2 == 1 {\n"
                                     "                store(out + offs, acc);\n"
                                     "                return;\n"
                                     "            }\n"
                                     "        }\n"
                                     "    }\n"
                                     "    if pid == 2 { return; }\n"
                                     "    store(out + offs, acc * 2);\n"
                                     "}\n";
static int64_t exit_return_ref(const arr *x, int i, const int64_t *p)
{
	int64_t acc = X(i);
	for (int64_t r = 0; r < p[0]; r++) {
		acc += r;
		if (r == PID(i) + 1 && PID(i) % 2 == 1)
			return acc;
	}
	return PID(i) == 2 ? -123456 : acc * 2;
}

/* fns returning from inside a loop and from nested ifs: the values
 * carried out (a scalar found by a search, a block by cases). */
static const char *EXIT_FN_SRC = "fn find(x: *i32, lo: i32, n: i32, t: i32) {\n"
                                 "    for i in range(lo, n) {\n"
                                 "        if load(x + i) % 7 == t { return i - lo; }\n"
                                 "    }\n"
                                 "    return -1;\n"
                                 "}\n"
                                 "fn pick(v, s) {\n"
                                 "    if s > 0 {\n"
                                 "        if s > 2 { return v * 3; }\n"
                                 "        return v + s;\n"
                                 "    }\n"
                                 "    return -v;\n"
                                 "}\n"
                                 "kernel k(x: *i32, out: *i32, t: i32) {\n"
                                 "    let pid = program_id(0);\n"
                                 "    let offs = pid * 64 + arange(0, 64);\n"
                                 "    let f = find(x, pid * 64, pid * 64 + 64, t);\n"
                                 "    store(out + offs, pick(load(x + offs), pid - 1) + f * 10000);\n"
                                 "}\n";
static int64_t exit_fn_ref(const arr *x, int i, const int64_t *p)
{
	int64_t f = -1, v = X(i), s = PID(i) - 1;
	for (int k = 0; k < 64; k++)
		if (X(PID(i) * 64 + k) % 7 == p[0]) {
			f = k;
			break;
		}
	return (s > 0 ? (s > 2 ? v * 3 : v + s) : -v) + f * 10000;
}
/* A for with only continue (it stays a for), a while with a return, fns
 * returning from a while (an i64 merged with a literal) and from a for (a
 * block). */
static const char *EXIT_MIXED_SRC = "fn firstv(x: *i32, lo: i32, n: i32, t: i32) {\n"
                                    "    var i = 0;\n"
                                    "    while i < n {\n"
                                    "        let v = load(x + lo + i);\n"
                                    "        if v > t { return (v * 2).to(i64); }\n"
                                    "        i += 1;\n"
                                    "    }\n"
                                    "    return 7;\n"
                                    "}\n"
                                    "fn twice_after(v, n: i32) {\n"
                                    "    for i in range(0, n) {\n"
                                    "        if i == 3 { return v * 2; }\n"
                                    "    }\n"
                                    "    return v;\n"
                                    "}\n"
                                    "kernel k(x: *i32, out: *i32, n: i32) {\n"
                                    "    let pid = program_id(0);\n"
                                    "    let offs = pid * 64 + arange(0, 64);\n"
                                    "    var s = 0;\n"
                                    "    for i in range(0, n) {\n"
                                    "        if i % 2 == 0 { continue; }\n"
                                    "        s += i;\n"
                                    "    }\n"
                                    "    var w = 0;\n"
                                    "    while w < 100 {\n"
                                    "        w += 1;\n"
                                    "        if w == n + pid { return; }\n"
                                    "    }\n"
                                    "    let f = firstv(x, pid * 64, 64, n * 10).to(i32);\n"
                                    "    store(out + offs, twice_after(load(x + offs), n) + f + s);\n"
                                    "}\n";
static int64_t exit_mixed_ref(const arr *x, int i, const int64_t *p)
{
	int64_t n = p[0], s = 0, f = 7;
	for (int64_t k = 1; k < n; k += 2)
		s += k;
	if (n + PID(i) >= 1 && n + PID(i) <= 100)
		return -123456;
	for (int k = 0; k < 64; k++)
		if (X(PID(i) * 64 + k) > n * 10) {
			f = X(PID(i) * 64 + k) * 2;
			break;
		}
	return (n > 3 ? X(i) * 2 : X(i)) + f + s;
}
/* break, continue and return in static_range loops: the copies after one
 * that may leave go under an if. */
static const char *EXIT_STATIC_SRC = "kernel k(x: *i32, out: *i32, b: i32) {\n"
                                     "    let pid = program_id(0);\n"
                                     "    let offs = pid * 64 + arange(0, 64);\n"
                                     "    var acc = load(x + offs);\n"
                                     "    for i in static_range(0, 6) {\n"
                                     "        if i == pid { continue; }\n"
                                     "        acc = acc * 2 + i;\n"
                                     "        if i >= b { break; }\n"
                                     "    }\n"
                                     "    for j in static_range(0, 4) {\n"
                                     "        if j + pid == b + 5 { return; }\n"
                                     "        acc += j;\n"
                                     "    }\n"
                                     "    store(out + offs, acc);\n"
                                     "}\n";
static int64_t exit_static_ref(const arr *x, int i, const int64_t *p)
{
	int64_t acc = X(i);
	for (int k = 0; k < 6; k++) {
		if (k == PID(i))
			continue;
		acc = acc * 2 + k;
		if (k >= p[0])
			break;
	}
	for (int j = 0; j < 4; j++) {
		if (j + PID(i) == p[0] + 5)
			return -123456;
		acc += j;
	}
	return acc;
}

static void exit_cases(void)
{
	for (int b = -3; b <= 9; b += 3) {
		int64_t p[1] = {b};
		char name[96];
		snprintf(name, sizeof name, "break, continue and return in static_range loops (b = %d)", b);
		int_case(EXIT_STATIC_SRC, (blk_arg[]){I(b)}, 1, NO_CONSTS, exit_static_ref, p, name);
	}
	for (int k = 0; k < 4; k++) {
		int64_t p[1] = {(int64_t[]){0, 4, 99, 150}[k]};
		char name[96];
		snprintf(name, sizeof name, "for with continue only, while with return, fns returning from loops (n = %lld)",
		         (long long)p[0]);
		int_case(EXIT_MIXED_SRC, (blk_arg[]){I((int)p[0])}, 1, NO_CONSTS, exit_mixed_ref, p, name);
	}
	step_case(3, 10, -1);   /* empty */
	step_case(10, -7, -4);  /* overshoots the end */
	step_case(0, -1, -5);   /* one trip */
	step_case(-3, 12, 5);
	int64_t bc[][2] = {{-1, -5}, {0, 0}, {7, 3}, {30, -5}, {12, 1}};
	for (int k = 0; k < COUNT(bc); k++) {
		char name[96];
		snprintf(name, sizeof name, "break at i >= %lld, continue at i == %lld + pid, in a for", (long long)bc[k][0],
		         (long long)bc[k][1]);
		int_case(EXIT_FOR_SRC, (blk_arg[]){I(bc[k][0]), I(bc[k][1])}, 2, NO_CONSTS, exit_for_ref, bc[k], name);
	}
	for (int n = 0; n <= 12; n += 4) {
		int64_t p[1] = {n};
		char name[96];
		snprintf(name, sizeof name, "while (n = %d) with continue and break around a for whose break is its own", n);
		int_case(EXIT_NESTED_SRC, (blk_arg[]){I(n)}, 1, NO_CONSTS, exit_nested_ref, p, name);
	}
	for (int n = 0; n <= 5; n += 5) {
		int64_t p[1] = {n};
		char name[96];
		snprintf(name, sizeof name, "early return from nested ifs in a for (n = %d) and after it", n);
		int_case(EXIT_RETURN_SRC, (blk_arg[]){I(n)}, 1, NO_CONSTS, exit_return_ref, p, name);
	}
	for (int t = -3; t <= 3; t += 3) {
		int64_t p[1] = {t};
		char name[96];
		snprintf(name, sizeof name, "fns returning from a loop and from nested ifs (t = %d)", t);
		int_case(EXIT_FN_SRC, (blk_arg[]){I(t)}, 1, NO_CONSTS, exit_fn_ref, p, name);
	}
}

/* ---- fn helpers ------------------------------------------------------------------------------ */

static const char *FN_SRC = "fn divmod(a, b) {\n"
                            "    return a / b, a % b;\n"
                            "}\n"
                            "fn swap(a, b) { return b, a; }\n"
                            "fn scale(v, k: i32 = 3, bias = 0) -> i32 { return v * k + bias; }\n"
                            "fn twice(f, v) { return f(f(v)); }\n"
                            "fn inc(v) { return v + 1; }\n"
                            "fn stats(v) {\n"
                            "    let lo, hi = min(v, axis = 0), max(v, axis = 0);\n"
                            "    return (lo, hi);\n"
                            "}\n"
                            "kernel k(x: *i32, out: *i32) {\n"
                            "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                            "    let v = load(x + offs);\n"
                            "    let q, r = divmod(v, 7);\n"
                            "    let (a, b) = swap(q, r);\n"
                            "    let s = scale(a) + scale(b, k = 5) + scale(v, bias = 2, k = 1);\n"
                            "    let lo, hi = stats(v);\n"
                            "    let w = twice(inc, s) + (hi - lo) + v.to(i64).sum(axis = 0).to(i32) % 10;\n"
                            "    store(out + offs, w);\n"
                            "}\n";
static int64_t fn_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	int64_t v = X(i), q = v / 7, r = v % 7;
	int64_t s = r * 3 + q * 5 + v + 2;
	int64_t lo = INT64_MAX, hi = INT64_MIN, sum = 0;
	for (int l = 0; l < 64; l++) {
		int64_t e = X(PID(i) * 64 + l);
		lo = e < lo ? e : lo;
		hi = e > hi ? e : hi;
		sum += e;
	}
	return s + 2 + (hi - lo) + sum % 10;
}

/* A generic fn used at two element types. */
static const char *GENERIC_SRC = "fn mix(a, b) { return a * 2 + b; }\n"
                                 "kernel k(x: *i32, out: *i32) {\n"
                                 "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                                 "    let v = load(x + offs);\n"
                                 "    let f: f32 = mix(v.to(f32), 0.5);\n"
                                 "    let i: i64 = mix(v.to(i64), 3);\n"
                                 "    store(out + offs, (f * 2.0).to(i32) + i.to(i32));\n"
                                 "}\n";
static int64_t generic_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	return (X(i) * 2 * 2 + 1) + X(i) * 2 + 3;
}

/* A loop carrying a tuple (running max and rescaled sum, online). */
static const char *TUPLE_LOOP_SRC = "fn step(m, l, v) {\n"
                                    "    let mn = maximum(m, v);\n"
                                    "    return mn, l * (m - mn + 1) + v;\n"
                                    "}\n"
                                    "kernel k(x: *i32, out: *i32) {\n"
                                    "    let pid = program_id(0);\n"
                                    "    var m = full((64,), -2000, i32);\n"
                                    "    var l = zeros((64,), i32);\n"
                                    "    for r in range(0, 4) {\n"
                                    "        m, l = step(m, l, load(x + ((r + pid) % 4) * 64 + arange(0, 64)));\n"
                                    "    }\n"
                                    "    store(out + pid * 64 + arange(0, 64), l * 3 + m);\n"
                                    "}\n";
static int64_t tuple_loop_ref(const arr *x, int i, const int64_t *p)
{
	(void)p;
	int64_t m = -2000, l = 0;
	for (int r = 0; r < 4; r++) {
		int64_t v = X(((r + PID(i)) % 4) * 64 + LANE(i)), mn = v > m ? v : m;
		l = (int32_t)(l * (m - mn + 1) + v);
		m = mn;
	}
	return (int32_t)(l * 3 + m);
}

/* if on a const parameter: decided while compiling, each value its own kernel. */
static const char *CONST_IF_SRC = "kernel k(x: *i32, out: *i32, MODE: const i32) {\n"
                                  "    let offs = program_id(0) * 64 + arange(0, 64);\n"
                                  "    let v = load(x + offs);\n"
                                  "    if MODE == 0 {\n"
                                  "        store(out + offs, v + 1);\n"
                                  "    } else if MODE == 1 {\n"
                                  "        let w = reshape(v, (8, 8));\n" /* shapes valid in this branch only */
                                  "        store(out + offs, reshape(trans(w), (64,)));\n"
                                  "    } else {\n"
                                  "        store(out + offs, v * MODE);\n"
                                  "    }\n"
                                  "}\n";
static int64_t const_if_ref(const arr *x, int i, const int64_t *p)
{
	if (p[0] == 0)
		return X(i) + 1;
	if (p[0] == 1) {
		int l = LANE(i), r = l / 8, c = l % 8;
		return X(PID(i) * 64 + c * 8 + r);
	}
	return X(i) * p[0];
}

/* ---- grids ------------------------------------------------------------------------------------ */

static const char *GRID_SRC =
	"kernel k(out: *i32, a: i32, b: i32, c: i32) grid(a, b, c) {\n"
	"    let p0 = program_id(0);\n"
	"    let p1 = program_id(1);\n"
	"    let p2 = program_id(2);\n"
	"    let lin = (p2 * num_programs(1) + p1) * num_programs(0) + p0;\n"
	"    let i = arange(0, 4);\n"
	"    let v = where(i == 0, p0, where(i == 1, p1, where(i == 2, p2, num_programs(0) * 10000 +\n"
	"                  num_programs(1) * 100 + num_programs(2))));\n"
	"    store(out + lin * 4 + i, v);\n"
	"}\n";

static void grid_case(int a, int b, int c, bool explicit_grid)
{
	int n = a * b * c;
	arr want = arr_new(DT_I32, 4 * n);
	for (int z = 0; z < c; z++)
		for (int y = 0; y < b; y++)
			for (int xx = 0; xx < a; xx++) {
				int lin = (z * b + y) * a + xx;
				set_i(want, lin * 4, xx);
				set_i(want, lin * 4 + 1, y);
				set_i(want, lin * 4 + 2, z);
				set_i(want, lin * 4 + 3, a * 10000 + b * 100 + c);
			}
	blk_devptr dout = dev_zeros(DT_I32, 4 * n);
	/* an explicit grid overrides the clause (whose arguments are then 1, 1, 1) */
	bool ok = run_kernel(GRID_SRC, NULL,
	                     ARGS(P(dout), I(explicit_grid ? 1 : a), I(explicit_grid ? 1 : b), I(explicit_grid ? 1 : c)),
	                     NO_CONSTS, explicit_grid ? GRID((unsigned)a, (unsigned)b, (unsigned)c) : GRID(0)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_I32, 4 * n), want, NULL, 0);
	result(ok, "program_id and num_programs on a (%d, %d, %d) grid (%s)", a, b, c,
	       explicit_grid ? "given at launch" : "grid clause");
}

/* ---- print and assert ------------------------------------------------------------------------ */

static const char *PRINT_SRC = "kernel k(x: *$T) {\n"
                               "    let v = load(x + program_id(0) * 4 + arange(0, 4));\n"
                               "    print(\"v =\", v);\n"
                               "}\n";

/* The interpreter's print: one line per element, "pid (x, y, z) idx (i) MSG value". */
static void print_case(dt t)
{
	if (blk_context_backend(ops_ctx) != BLK_BACKEND_INTERPRETER) {
		result(true, "print %s (skipped: blk_context_printed captures the interpreter only)", dts[t].name);
		return;
	}
	int progs = 2;
	arr x = arr_new(t, 4 * progs);
	for (int i = 0; i < 4 * progs; i++)
		set_f(x, i, dt_float(t) ? (double)rng_range(-100, 100) * 0.25 : (double)rng_range(-100, 100));
	blk_devptr dx = dev_from(x);
	(void)blk_context_printed(ops_ctx); /* drop what came before */
	bool ok = run_kernel(render(PRINT_SRC, "T", dts[t].name, NULL), NULL, ARGS(P(dx)), NO_CONSTS,
	                     GRID((unsigned)progs, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		/* one line per element, in order: "pid (p, 0, 0) idx (i) v = VALUE";
		 * the number must read back as the element (its spelling is free:
		 * the interpreter writes the shortest that reads back, "2e+01") */
		const char *text = blk_context_printed(ops_ctx), *line = text;
		int k = 0;
		for (; *line && k < 4 * progs; k++) {
			const char *end = strchr(line, '\n');
			int len = end ? (int)(end - line) : (int)strlen(line);
			int p = -1, y = -1, z = -1, i = -1, used = 0;
			char num[64] = "";
			bool good = sscanf(line, "pid (%d, %d, %d) idx (%d) v = %63s%n", &p, &y, &z, &i, num, &used) == 5 &&
			            used == len && p == k / 4 && y == 0 && z == 0 && i == k % 4;
			char *e;
			double v = strtod(num, &e);
			good = good && *e == '\0' && v == get_f(x, k);
			if (!good) {
				why("line %d: \"%.*s\", want pid (%d, 0, 0) idx (%d) v = %s\n", k, len, line, k / 4, k % 4, show(x, k));
				ok = false;
			}
			line = end ? end + 1 : line + len;
		}
		if (k != 4 * progs || *line) {
			why("%d lines, want %d; printed:\n%s", k, 4 * progs, text);
			ok = false;
		}
	}
	result(ok, "print(\"v =\", %s block) on 2 programs", dts[t].name);
}

static const char *ASSERT_SRC = "kernel k(x: *i32, limit: i32) {\n"
                                "    let v = load(x + program_id(0) * 64 + arange(0, 64));\n"
                                "    assert(v < limit, \"value over the limit\");\n"
                                "}\n";

static void assert_case(bool fails)
{
	if (fails && blk_context_backend(ops_ctx) != BLK_BACKEND_INTERPRETER) {
		/* a failed device-side assert also leaves the CUDA context unusable */
		result(true, "a failing assert (skipped: the GPU checks asserts only in debug builds, language.md)");
		return;
	}
	int n = PROGS * 64, bad_at = 2 * 64 + 17; /* program 2, element 17 */
	arr x = arr_new(DT_I32, n);
	for (int i = 0; i < n; i++)
		set_i(x, i, rng_range(0, 99));
	set_i(x, bad_at, 500);
	blk_devptr dx = dev_from(x);
	blk_status st = run_kernel(ASSERT_SRC, NULL, ARGS(P(dx), I(fails ? 100 : 1000)), NO_CONSTS, GRID(PROGS, 1, 1));
	bool ok;
	if (!fails) {
		ok = st == BLK_SUCCESS;
	} else {
		ops_why_len = 0; /* the failure is expected: keep only what is checked below */
		ops_why[0] = '\0';
		ok = st == BLK_ERROR_LAUNCH && strstr(ops_err, "value over the limit") && strstr(ops_err, "ops.tile:3") &&
		     strstr(ops_err, "(2, 0, 0)");
		if (!ok)
			why("status %d, message: %s\n(want BLK_ERROR_LAUNCH naming the message, ops.tile:3 and program (2, 0, 0))\n",
			    (int)st, ops_err);
	}
	result(ok, fails ? "a failing assert is BLK_ERROR_LAUNCH with the message, line and program"
	                 : "a passing assert lets the launch succeed");
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	int_case(FOR_CONST_SRC, NULL, 0, NO_CONSTS, for_const_ref, NULL, "for k in range(0, 8): constant bounds");
	for_runtime_case(0, 16, 1);
	for_runtime_case(1, 16, 3);
	for_runtime_case(15, -2, -2);
	for_runtime_case(5, 5, 1);
	for_runtime_case(9, 3, 2);
	for_runtime_case(rng_range(-20, 0), rng_range(1, 40), rng_range(1, 7));
	int_case(STATIC_SRC, NULL, 0, NO_CONSTS, static_ref, NULL, "static_range(0, 10, 3): constants and shapes per copy");
	int_case(WHILE_SRC, NULL, 0, NO_CONSTS, while_ref, NULL, "while: Collatz steps, a scalar ternary");
	int_case(CONSTRUCTS_SRC, NULL, 0, NO_CONSTS, constructs_ref, (int64_t[]){1},
	         "x.view(4, 16), flatten(trans(v)), range(..., num_stages = None, unroll = None), T == i32 (T = i32)");
	int_case(CONSTRUCTS_SRC, NULL, 0, CONSTS(CT("T", "f32")), constructs_ref, (int64_t[]){0},
	         "the same with T = f32: T == i32 is false at compile time");
	int_case(DESC_FIELDS_SRC, NULL, 0, NO_CONSTS, desc_fields_ref, NULL,
	         "a descriptor's fields: shape, strides, block_shape, dtype");
	int_case(ELEMENT_TY_SRC, NULL, 0, NO_CONSTS, element_ty_ref, NULL,
	         "p.dtype.element_ty: a pointer's element type (the i64 product converted to i32)");
	int_case(DESC_IF_SRC, NULL, 0, NO_CONSTS, desc_if_ref, NULL,
	         "a descriptor var changed in a runtime if (another base and shape in odd programs)");
	int_case(TERNARY_SRC, (blk_arg[]){I(0)}, 1, NO_CONSTS, ternary_ref, NULL,
	         "?: on a runtime condition runs only the chosen arm (an out-of-bounds load, a division by zero, stores)");
	int64_t trips[1] = {rng_range(0, 20)};
	int_case(WHILE_BLOCK_SRC, (blk_arg[]){I(trips[0])}, 1, NO_CONSTS, while_block_ref, trips,
	         "while carrying a block, runtime trip count per program");
	int64_t lim[1] = {rng_range(0, 60)};
	int_case(WHILE_COND_SRC, (blk_arg[]){I(lim[0])}, 1, NO_CONSTS, break_ref, lim,
	         "while with a stop flag and nested if/else, carried block");
	int_case(BREAK_SRC, (blk_arg[]){I(lim[0])}, 1, NO_CONSTS, break_ref, lim, "break and continue in for, while true with break");
	for (int s = -1; s <= PROGS; s += 2) {
		int64_t sp[1] = {s};
		char name[64];
		snprintf(name, sizeof name, "if / else if / else carrying a block (s = %d)", s);
		int_case(IF_SRC, (blk_arg[]){I(s)}, 1, NO_CONSTS, if_ref, sp, name);
	}
	int64_t nn[1] = {rng_range(3, 9)};
	int_case(NESTED_SRC, (blk_arg[]){I(nn[0])}, 1, NO_CONSTS, nested_ref, nn, "nested loops: for in for with static_range inside");
	int_case(RETURN_SRC, NULL, 0, NO_CONSTS, return_ref, NULL, "early return in odd programs");
	exit_cases();
	int_case(FN_SRC, NULL, 0, NO_CONSTS, fn_ref, NULL, "fn helpers: tuples, defaults, named arguments, fn arguments, method sugar");
	int_case(GENERIC_SRC, NULL, 0, NO_CONSTS, generic_ref, NULL, "a generic fn at f32 and i64");
	int_case(TUPLE_LOOP_SRC, NULL, 0, NO_CONSTS, tuple_loop_ref, NULL, "a loop carrying a tuple from a fn");
	for (int mode = 0; mode < 3; mode++) {
		int64_t mp[1] = {mode == 2 ? 7 : mode};
		char name[64];
		snprintf(name, sizeof name, "if on a const parameter (MODE = %lld)", (long long)mp[0]);
		int_case(CONST_IF_SRC, NULL, 0, CONSTS(CI("MODE", mp[0])), const_if_ref, mp, name);
	}
	grid_case(7, 1, 1, false);
	grid_case(5, 3, 1, false);
	grid_case(3, 4, 2, false);
	grid_case(2, 3, 5, true);
	grid_case(1, 1, 6, true);
	print_case(DT_I32);
	print_case(DT_F32);
	print_case(DT_I8);
	assert_case(false);
	assert_case(true);
	return ops_finish();
}
