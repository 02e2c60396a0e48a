/* tests/ops: atomics under contention, as .tile kernels through blk.h.
 * 64 programs of 32 lanes each apply atomic_add/max/min/and/or/xor to one
 * address or to four (lane j to address j % K), on integer and float types;
 * the interpreter runs them on 4 threads, so the programs really race.
 *   - the final values: integers exact (every order gives the same), float
 *     sums within n eps sum|v| (the order is free), f16/bf16 sums of small
 *     integers exact;
 *   - the values returned: a ticket counter (atomic_add of 1) hands out
 *     every ticket exactly once; atomic_xchg returns every value written,
 *     and the initial one, exactly once (with the final value);
 *   - masked lanes change nothing;
 *   - atomic_cas: a retry loop that makes every program's increment count,
 *     and slot claiming (each program takes the first free slot of a table:
 *     every slot is taken once, no spinning on one address). */
#include "ops.h"

enum { PROGS = 64, LANES = 32, THREADS = 4 };

static const char *RMW_SRC =
	"kernel k(out: *$T, vals: *$T, old: *$T, K: i32, BLOCK: const i32 = 32) {\n"
	"    let pid = program_id(0);\n"
	"    let j = arange(0, BLOCK);\n"
	"    let v = load(vals + pid * BLOCK + j);\n"
	"    let o = atomic_$OP(out + j % K, v$MORE);\n"
	"    store(old + pid * BLOCK + j, o, mask = $MASK);\n"
	"}\n";

static void rmw_case(const char *op, dt t, int K, const char *more)
{
	int n = PROGS * LANES;
	bool add = !strcmp(op, "add"), mx = !strcmp(op, "max"), mn = !strcmp(op, "min");
	bool masked = strstr(more, "mask") != NULL;
	arr vals = arr_new(t, n), init = arr_new(t, K), want = arr_new(t, K);
	if (add && (t == DT_F16 || t == DT_BF16))
		for (int i = 0; i < n; i++) /* small integers: every partial sum exact */
			set_f(vals, i, (double)rng_range(t == DT_BF16 ? -1 : -3, t == DT_BF16 ? 1 : 3));
	else if (add && dt_float(t))
		fill_random(vals, 1);
	else
		fill_random(vals, 1000);
	fill_random(init, 1000);
	if (add && (t == DT_F16 || t == DT_BF16))
		for (int k = 0; k < K; k++)
			set_f(init, k, (double)rng_range(-10, 10));
	size_t nk = K > 0 ? (size_t)K : 1;
	double *wantf = calloc(nk, sizeof(double)), *tol = calloc(nk, sizeof(double));
	for (int k = 0; k < K; k++) {
		val acc = get_v(init, k);
		long double s = acc.f, sa = fabs(acc.f);
		int cnt = 0;
		for (int i = 0; i < n; i++) {
			int lane = i % LANES;
			if (lane % K != k || (masked && lane % 3 == 0))
				continue;
			val v = get_v(vals, i);
			cnt++;
			if (add && dt_float(t)) {
				s += v.f;
				sa += fabs(v.f);
			} else if (add) {
				acc.i = wrap_int(t, (uint64_t)acc.i + (uint64_t)v.i);
			} else if (mx || mn) {
				bool gt = dt_float(t) ? v.f > acc.f : dt_signed(t) ? v.i > acc.i : (uint64_t)v.i > (uint64_t)acc.i;
				bool lt = dt_float(t) ? v.f < acc.f : dt_signed(t) ? v.i < acc.i : (uint64_t)v.i < (uint64_t)acc.i;
				if (mx ? gt : lt)
					acc = v;
			} else {
				uint64_t a = (uint64_t)acc.i, b = (uint64_t)v.i;
				acc.i = wrap_int(t, op[0] == 'a' ? a & b : op[0] == 'o' ? a | b : a ^ b);
			}
		}
		if (add && dt_float(t)) {
			acc.f = (double)s;
			wantf[k] = (double)s;
			double eps = t == DT_F64 ? 0x1p-53 : t == DT_F32 ? 0x1p-24 : 0;
			tol[k] = cnt * eps * (double)sa;
		}
		set_v(want, k, acc);
	}
	char kk[8];
	snprintf(kk, sizeof kk, "%d", K);
	blk_devptr dout = dev_from(init), dv = dev_from(vals), dold = dev_zeros(t, n);
	const char *src = render(RMW_SRC, "T", dts[t].name, "OP", op, "MORE", more, "MASK", masked ? "j % 3 != 0" : "true",
	                         NULL);
	bool ok = run_kernel_t(src, NULL, ARGS(P(dout), P(dv), P(dold), I(K)), NO_CONSTS, GRID(PROGS, 1, 1), THREADS) ==
	          BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(dout, t, K);
		if (add && dt_float(t))
			ok = check_close_each(got, wantf, tol);
		else
			ok = check_exact(got, want, NULL, 0);
	}
	free(wantf);
	free(tol);
	result(ok, "atomic_%s %s, %d programs x %d lanes on %d address%s%s", op, dts[t].name, PROGS, LANES, K,
	       K == 1 ? "" : "es", more);
}

/* A ticket counter: every lane takes atomic_add(counter, 1); the tickets
 * returned are 0 .. n-1, each once. */
static const char *TICKET_SRC = "kernel k(counter: *$T, tickets: *$T, BLOCK: const i32 = 32) {\n"
                                "    let pid = program_id(0);\n"
                                "    let j = arange(0, BLOCK);\n"
                                "    let t = atomic_add(counter + zeros((BLOCK,), i32), 1$SEM);\n"
                                "    store(tickets + pid * BLOCK + j, t);\n"
                                "}\n";

static void ticket_case(dt t, const char *sem)
{
	int n = PROGS * LANES;
	blk_devptr dc = dev_zeros(t, 1), dt_ = dev_zeros(t, n);
	bool ok = run_kernel_t(render(TICKET_SRC, "T", dts[t].name, "SEM", sem, NULL), NULL, ARGS(P(dc), P(dt_)), NO_CONSTS,
	                       GRID(PROGS, 1, 1), THREADS) == BLK_SUCCESS;
	if (ok) {
		arr tk = dev_read(dt_, t, n), c = dev_read(dc, t, 1);
		char *seen = calloc((size_t)n, 1);
		int bad = 0;
		for (int i = 0; i < n; i++) {
			double v = get_f(tk, i);
			if (v < 0 || v >= n || v != floor(v) || seen[(int)v]++) {
				if (bad++ < 5)
					why("lane %d got ticket %s (out of range or a duplicate)\n", i, show(tk, i));
			}
		}
		if (get_f(c, 0) != n) {
			why("the counter ends at %s, want %d\n", show(c, 0), n);
			bad++;
		}
		free(seen);
		ok = bad == 0;
	}
	result(ok, "ticket counter atomic_add(1) %s%s: every ticket once", dts[t].name, sem);
}

/* atomic_xchg on one address: the values returned plus the final one are
 * the initial value and every value written, each once. */
static const char *XCHG_SRC = "kernel k(cell: *$T, old: *$T) {\n"
                              "    let pid = program_id(0);\n"
                              "    let o = atomic_xchg(cell, (pid + 1).to($T));\n"
                              "    store(old + pid, o);\n"
                              "}\n";

static void xchg_case(dt t)
{
	int n = PROGS * 4;
	arr init = arr_new(t, 1);
	set_f(init, 0, -5);
	blk_devptr dc = dev_from(init), dold = dev_zeros(t, n);
	bool ok = run_kernel_t(render(XCHG_SRC, "T", dts[t].name, NULL), NULL, ARGS(P(dc), P(dold)), NO_CONSTS,
	                       GRID((unsigned)n, 1, 1), THREADS) == BLK_SUCCESS;
	if (ok) {
		arr olds = dev_read(dold, t, n), fin = dev_read(dc, t, 1);
		char *seen = calloc((size_t)n + 1, 1);
		int bad = 0;
		for (int i = 0; i <= n; i++) {
			double v = i < n ? get_f(olds, i) : get_f(fin, 0);
			int slot = v == -5 ? 0 : (int)v; /* -5 is the initial value; pid + 1 the others */
			if (slot < 0 || slot > n || (v != -5 && v != floor(v)) || seen[slot]++) {
				if (bad++ < 5)
					why("%s %g appears twice or was never written\n", i < n ? "a returned value" : "the final value", v);
			}
		}
		free(seen);
		ok = bad == 0;
	}
	result(ok, "atomic_xchg %s, %d programs on one address: each value once", dts[t].name, n);
}

/* The CAS retry loop: read with a CAS that cannot change anything, then
 * try cur -> cur + 1 until it lands; a failed CAS returns the new value. */
static const char *CAS_LOOP_SRC = "kernel k(counter: *$T, seen: *$T) {\n"
                                  "    let pid = program_id(0);\n"
                                  "    var cur = atomic_cas(counter, 0, 0);\n"
                                  "    var done = false;\n"
                                  "    var tries = 0;\n"
                                  "    while !done {\n"
                                  "        let prev = atomic_cas(counter, cur, cur + 1);\n"
                                  "        done = prev == cur;\n"
                                  "        cur = prev;\n"
                                  "        tries += 1;\n"
                                  "    }\n"
                                  "    store(seen + pid, cur);\n"
                                  "}\n";

static void cas_loop_case(dt t)
{
	int n = PROGS * 2;
	blk_devptr dc = dev_zeros(t, 1), ds = dev_zeros(t, n);
	bool ok = run_kernel_t(render(CAS_LOOP_SRC, "T", dts[t].name, NULL), NULL, ARGS(P(dc), P(ds)), NO_CONSTS,
	                       GRID((unsigned)n, 1, 1), THREADS) == BLK_SUCCESS;
	if (ok) {
		arr seen = dev_read(ds, t, n), c = dev_read(dc, t, 1);
		char *hit = calloc((size_t)n, 1);
		int bad = get_i(c, 0) != n;
		if (bad)
			why("the counter ends at %s, want %d\n", show(c, 0), n);
		for (int i = 0; i < n; i++) {
			int64_t v = get_i(seen, i); /* the value each program moved from */
			if (v < 0 || v >= n || hit[v]++)
				if (bad++ < 5)
					why("program %d incremented from %lld (a duplicate or out of range)\n", i, (long long)v);
		}
		free(hit);
		ok = bad == 0;
	}
	result(ok, "atomic_cas retry loop counter %s, %d programs", dts[t].name, n);
}

/* Slot claiming: each program walks a table and takes the first slot whose
 * CAS 0 -> pid + 1 succeeds; no program waits on another. */
static const char *CLAIM_SRC = "kernel k(table: *$T, mine: *i32, S: i32) {\n"
                               "    let pid = program_id(0);\n"
                               "    var got = -1;\n"
                               "    var s = 0;\n"
                               "    while got < 0 && s < S {\n"
                               "        let prev = atomic_cas(table + (s + pid) % S, 0, (pid + 1).to($T));\n"
                               "        if prev == 0 {\n"
                               "            got = (s + pid) % S;\n"
                               "        }\n"
                               "        s += 1;\n"
                               "    }\n"
                               "    store(mine + pid, got);\n"
                               "}\n";

static void claim_case(dt t)
{
	int P = PROGS, S = PROGS + 7;
	blk_devptr dt_ = dev_zeros(t, S), dm = dev_zeros(DT_I32, P);
	bool ok = run_kernel_t(render(CLAIM_SRC, "T", dts[t].name, NULL), NULL, ARGS(P(dt_), P(dm), I(S)), NO_CONSTS,
	                       GRID((unsigned)P, 1, 1), THREADS) == BLK_SUCCESS;
	if (ok) {
		arr table = dev_read(dt_, t, S), mine = dev_read(dm, DT_I32, P);
		int bad = 0, used = 0;
		for (int p = 0; p < P; p++) {
			int64_t s = get_i(mine, p);
			if (s < 0 || s >= S || get_i(table, s) != p + 1) {
				if (bad++ < 5)
					why("program %d claimed slot %lld, which holds %s\n", p, (long long)s,
					    s >= 0 && s < S ? show(table, s) : "-");
			}
		}
		for (int s = 0; s < S; s++)
			used += get_i(table, s) != 0;
		if (used != P) {
			why("%d slots taken, want %d\n", used, P);
			bad++;
		}
		ok = bad == 0;
	}
	result(ok, "atomic_cas slot claiming %s, %d programs, %d slots", dts[t].name, P, S);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	const dt add_types[] = {DT_I16, DT_I32, DT_I64, DT_U32, DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};
	const dt mm_types[] = {DT_I8, DT_I32, DT_I64, DT_U16, DT_U32, DT_U64, DT_F16, DT_F32, DT_F64};
	const dt bit_types[] = {DT_U16, DT_I32, DT_U32, DT_I64, DT_U64};
	const int Ks[] = {1, 4};
	for (int k = 0; k < 2; k++) {
		for (int t = 0; t < COUNT(add_types); t++)
			rmw_case("add", add_types[t], Ks[k], "");
		for (int t = 0; t < COUNT(mm_types); t++) {
			rmw_case("max", mm_types[t], Ks[k], "");
			rmw_case("min", mm_types[t], Ks[k], "");
		}
		for (int t = 0; t < COUNT(bit_types); t++) {
			rmw_case("and", bit_types[t], Ks[k], "");
			rmw_case("or", bit_types[t], Ks[k], "");
			rmw_case("xor", bit_types[t], Ks[k], "");
		}
	}
	rmw_case("add", DT_I32, 4, ", mask = j % 3 != 0");
	rmw_case("add", DT_F32, 1, ", mask = j % 3 != 0");
	rmw_case("max", DT_I64, 4, ", mask = j % 3 != 0");
	rmw_case("xor", DT_U32, 1, ", mask = j % 3 != 0");
	rmw_case("add", DT_I32, 1, ", sem = \"relaxed\", scope = \"gpu\"");
	rmw_case("min", DT_F32, 4, ", sem = \"acquire\", scope = \"cta\"");
	rmw_case("or", DT_U64, 1, ", sem = \"release\", scope = \"sys\"");

	ticket_case(DT_I32, "");
	ticket_case(DT_U32, ", sem = \"relaxed\"");
	ticket_case(DT_I64, "");
	ticket_case(DT_F32, "");
	xchg_case(DT_I32);
	xchg_case(DT_I64);
	xchg_case(DT_F32);
	xchg_case(DT_F64);
	cas_loop_case(DT_I32);
	cas_loop_case(DT_U64);
	cas_loop_case(DT_I16);
	claim_case(DT_I32);
	claim_case(DT_I64);
	return ops_finish();
}
