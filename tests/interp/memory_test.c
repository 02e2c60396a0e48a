/* memory_test: loads, stores and atomics on the interpreter, and everything
 * it reports. Masked loads and stores of every element kind (with `other`
 * scalar or block); pointers loaded from a pointer array; atomics of every
 * operation and width, on 1 and 4 threads; then each report checked for its
 * text: out-of-bounds (past the end, before the start, straddling, 2-D
 * index), misaligned, no buffers, masked-off lanes never checked, failed
 * asserts, division by zero, shifts, wrong hints, bad arguments, malformed
 * IR, overlapping buffers; the lowest failing program wins on many threads;
 * and the format of print, whole lines on many threads.
 *
 * Prints "ok NAME" / "FAIL NAME: why" a case and last "N passed, N failed". */
#include "kb.h"

static const Type I32 = {.scalar = SK_I32};

static int kbytes(ScalarKind k) { return k == SK_I1 ? 1 : scalar_bits(k) / 8; }

/* Runs and keeps the diagnostics (free them). */
static bool run(KB *b, const InterpArg *args, int n_args, const InterpBuffer *bufs, int n_bufs, InterpOptions o, Diag *d)
{
	diag_init(d);
	return kb_run(b, args, n_args, bufs, n_bufs, &o, d);
}

/* The run fails with a message holding every one of the strings. */
static void expect_error(const char *name, bool ok, Diag *d, const char *const *want, int n)
{
	const char *out = d->out.data ? d->out.data : "";
	if (ok) {
		result(false, name, "the run succeeded");
		return;
	}
	for (int i = 0; i < n; i++)
		if (!strstr(out, want[i])) {
			result(false, name, "'%s' is not in:\n%s", want[i], out);
			return;
		}
	result(true, name, " ");
}

static Value *splat(KB *b, Type t, Value *s) { return kb_op(b, OP_SPLAT, t, s, NULL, NULL); }

/* ---- masked loads and stores ------------------------------------------------- */

/* out[i] = mask ? in[i] : other, stored where (i % 5 != 4); every kind. */
static void test_masked_copy(void)
{
	enum { N = 64 };
	static const ScalarKind kinds[] = {SK_I1, SK_I8, SK_I16, SK_I32, SK_I64, SK_U8, SK_U16, SK_U32, SK_U64,
	                                   SK_F8E4M3, SK_F8E5M2, SK_F16, SK_BF16, SK_F32, SK_F64};
	const char *name = "masked load (other splat and block) and masked store of every kind, bytes kept";
	for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
		ScalarKind k = kinds[ki];
		for (int block_other = 0; block_other < 2; block_other++) {
			KB b;
			kb_begin(&b, "copy");
			Value *in = kb_param(&b, "in", tP(k, 1)), *out = kb_param(&b, "out", tP(k, 1));
			Type bi = tB(I32, N), bm = tB(tS(SK_I1), N);
			Value *offs = kb_arange(&b, 0, N);
			Value *lm = kb_op_a(&b, OP_CMP, bm, CMP_NE, kb_op(&b, OP_REM, bi, offs, kb_ci(&b, bi, 3), NULL),
			                    kb_ci(&b, bi, 0), NULL);
			Value *sm = kb_op_a(&b, OP_CMP, bm, CMP_NE, kb_op(&b, OP_REM, bi, offs, kb_ci(&b, bi, 5), NULL),
			                    kb_ci(&b, bi, 4), NULL);
			Value *other;
			Type ks = tS(k);
			if (scalar_is_float(k))
				other = kb_cf(&b, block_other ? tB(ks, N) : ks, 1.5);
			else
				other = kb_ci(&b, block_other ? tB(ks, N) : ks, 1);
			/* a splat of a scalar other stays one element for every lane */
			if (!block_other)
				other = kb_op(&b, OP_SPLAT, tB(ks, N), other, NULL, NULL);
			Value *v = kb_load(&b, kb_ptrs(&b, in, offs), lm, other);
			kb_store(&b, kb_ptrs(&b, out, offs), v, sm);
			kb_ret(&b);
			int w = kbytes(k);
			static unsigned char src[N * 8], dst[N * 8], other_bytes[8];
			for (int i = 0; i < N * w; i++)
				src[i] = (unsigned char)rnd();
			if (k == SK_I1)
				for (int i = 0; i < N; i++)
					src[i] &= 1;
			memset(dst, 0xA5, sizeof dst);
			uint64_t ob = scalar_is_float(k) ? fp_encode(k, 1.5) : 1;
			if (k == SK_F32) {
				float f = 1.5f;
				memcpy(&ob, &f, 4);
			}
			memcpy(other_bytes, &ob, 8);
			InterpBuffer bufs[] = {{"in", src, (size_t)N * w}, {"out", dst, (size_t)N * w}};
			InterpArg args[] = {interp_ptr(src), interp_ptr(dst)};
			Diag d;
			bool ok = run(&b, args, 2, bufs, 2, (InterpOptions){.grid = {1, 1, 1}}, &d);
			int bad = -1;
			for (int i = 0; ok && i < N && bad < 0; i++) {
				const unsigned char *want = i % 5 == 4 ? NULL : i % 3 ? src + i * w : other_bytes;
				if (!want) {
					for (int j = 0; j < w; j++)
						if (dst[i * w + j] != 0xA5)
							bad = i;
				} else if (memcmp(dst + i * w, want, (size_t)w) != 0) {
					bad = i;
				}
			}
			if (!ok || bad >= 0) {
				result(false, name, "%s (other %s): %s element %d", scalar_name(k), block_other ? "block" : "splat",
				       d.out.data ? d.out.data : "", bad);
				diag_free(&d);
				kb_free(&b);
				return;
			}
			diag_free(&d);
			kb_free(&b);
		}
	}
	result(true, name, " ");
}

/* sum_many's shape: ptrs (**f32) holds one pointer per row; each program
 * loads its pointer, then a row through it. A bad pointer in the array is
 * caught at the second load. */
static void build_ptr_array(KB *b)
{
	kb_begin(b, "sum_rows");
	Value *ptrs = kb_param(b, "ptrs", tP(SK_F32, 2)), *out = kb_param(b, "out", tP(SK_F32, 1));
	Value *pid = kb_pid(b, 0);
	b->line = 7;
	Value *row = kb_load(b, kb_op(b, OP_ADDPTR, tP(SK_F32, 2), ptrs, pid, NULL), NULL, NULL);
	b->line = 8;
	Value *v = kb_load(b, kb_ptrs(b, row, kb_arange(b, 0, 16)), NULL, NULL);
	b->line = 9;
	Op *s = kb_combine_op(b, OP_REDUCE, &v, 1, 0, false);
	Region *top = b->r;
	b->r = &s->regions[0];
	Value *a2 = kb_op(b, OP_ADD, tS(SK_F32), b->r->args[0], b->r->args[1], NULL);
	kb_yield(b, &a2, 1);
	b->r = top;
	kb_store(b, kb_op(b, OP_ADDPTR, tP(SK_F32, 1), out, pid, NULL), s->results[0], NULL);
	kb_ret(b);
}

static void test_ptr_array(void)
{
	static float rows[4][16], out[4];
	float *ptrs[4];
	for (int r = 0; r < 4; r++) {
		for (int i = 0; i < 16; i++)
			rows[r][i] = (float)(r * 100 + i);
		ptrs[r] = rows[r];
	}
	static KB b;
	build_ptr_array(&b);
	InterpBuffer bufs[] = {{"ptrs", ptrs, sizeof ptrs}, {"row0", rows[0], sizeof rows[0]}, {"row1", rows[1], sizeof rows[1]},
	                       {"row2", rows[2], sizeof rows[2]}, {"row3", rows[3], sizeof rows[3]}, {"out", out, sizeof out}};
	InterpArg args[] = {interp_ptr(ptrs), interp_ptr(out)};
	Diag d;
	bool ok = run(&b, args, 2, bufs, 6, (InterpOptions){.grid = {4, 1, 1}}, &d);
	bool good = ok;
	for (int r = 0; r < 4 && good; r++)
		good = out[r] == (float)(r * 1600 + 120);
	result(good, "pointers loaded from a **f32 array, then dereferenced", "%s", d.out.data ? d.out.data : "wrong sums");
	diag_free(&d);

	/* row 2's pointer is 2 bytes off: misaligned; row 3's points past row 3 */
	ptrs[2] = (float *)((char *)rows[2] + 2);
	ok = run(&b, args, 2, bufs, 6, (InterpOptions){.grid = {4, 1, 1}}, &d);
	const char *w1[] = {"kernel.tile:8:5: error: misaligned load in kernel 'sum_rows', program (2, 0, 0), element [0]",
	                    "is not a multiple of 4, the size of f32 (byte 2 of buffer 'row2')"};
	expect_error("a loaded pointer 2 bytes off: misaligned load, its element and buffer", ok, &d, w1, 2);
	diag_free(&d);
	ptrs[2] = rows[2];
	ptrs[3] = rows[3] + 8;
	InterpBuffer three[] = {bufs[0], bufs[1], bufs[2], bufs[3], bufs[5]}; /* row 3 not registered */
	ok = run(&b, args, 2, three, 5, (InterpOptions){.grid = {4, 1, 1}}, &d);
	const char *w2[] = {"kernel.tile:8:5: error: out-of-bounds load in kernel 'sum_rows', program (3, 0, 0), element [0]",
	                    "buffer 'row2' (64 bytes)"};
	expect_error("a loaded pointer into memory not given: out-of-bounds, nearest buffer named", ok, &d, w2, 2);
	diag_free(&d);
	kb_free(&b);
}

/* ---- atomics ---------------------------------------------------------------------- */

/* One atomic_rmw over a block of N lanes: ptr = base + idx[i], value v[i],
 * mask (i % 7 != 6); the old values go to old[]. */
static void build_atomic(KB *b, ScalarKind k, int aop, int n, bool masked)
{
	kb_begin(b, "atom");
	Value *base = kb_param(b, "base", tP(k, 1)), *pidx = kb_param(b, "idx", tP(SK_I32, 1)),
	      *pv = kb_param(b, "v", tP(k, 1)), *pold = kb_param(b, "old", tP(k, 1));
	Value *offs = kb_arange(b, 0, n);
	Value *gid = kb_op(b, OP_ADD, tB(I32, n), offs,
	                   splat(b, tB(I32, n), kb_op(b, OP_MUL, I32, kb_pid(b, 0), kb_ci(b, I32, n), NULL)), NULL);
	Value *idx = kb_load(b, kb_ptrs(b, pidx, gid), NULL, NULL);
	Value *v = kb_load(b, kb_ptrs(b, pv, gid), NULL, NULL);
	Value *ops[3] = {kb_ptrs(b, base, idx), v, NULL};
	if (masked)
		ops[2] = kb_op_a(b, OP_CMP, tB(tS(SK_I1), n), CMP_NE,
		                 kb_op(b, OP_REM, tB(I32, n), gid, kb_ci(b, tB(I32, n), 7), NULL), kb_ci(b, tB(I32, n), 6), NULL);
	Type rt = tB(tS(k), n);
	Op *op = kb_opv(b, OP_ATOMIC_RMW, ops, masked ? 3 : 2, &rt, 1);
	op->attr[0] = aop;
	op->attr[1] = SEM_ACQ_REL;
	op->attr[3] = masked ? MEMF_MASK : 0;
	kb_store(b, kb_ptrs(b, pold, gid), op->results[0], NULL);
	kb_ret(b);
}

static double val_of(ScalarKind k, const void *p)
{
	uint64_t bits = 0;
	memcpy(&bits, p, (size_t)kbytes(k));
	if (k == SK_F32) {
		float f;
		memcpy(&f, p, 4);
		return f;
	}
	if (scalar_is_float(k))
		return fp_decode(k, bits);
	if (scalar_is_signed(k)) {
		int sh = 64 - scalar_bits(k);
		return (double)((int64_t)(bits << sh) >> sh);
	}
	return (double)bits;
}

static void put_val(ScalarKind k, void *p, double v)
{
	uint64_t bits;
	if (k == SK_F32) {
		float f = (float)v;
		memcpy(p, &f, 4);
		return;
	}
	bits = scalar_is_float(k) ? fp_encode(k, v) : (uint64_t)(int64_t)v;
	memcpy(p, &bits, (size_t)kbytes(k));
}

/* Every atomic op and width: P programs of N lanes hit 8 addresses; the final
 * values must be the op folded over every unmasked value, whatever the order
 * (each op is commutative); the old values returned, one per lane, must be
 * a permutation of the sequence of intermediate values (checked for add). */
static void test_atomics(void)
{
	enum { P = 16, N = 32, A = 8 };
	static const ScalarKind kinds[] = {SK_I32, SK_U32, SK_I64, SK_U64, SK_I8, SK_U16, SK_F32, SK_F64, SK_F16, SK_BF16};
	static const char *names[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
	for (int aop = ATOM_ADD; aop <= ATOM_XCHG; aop++) {
		char name[96];
		snprintf(name, sizeof name, "atomic %s: every width, 1 and 4 threads, masked lanes untouched", names[aop]);
		bool ok = true;
		for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0] && ok; ki++) {
			ScalarKind k = kinds[ki];
			bool fl = scalar_is_float(k);
			if (fl && aop >= ATOM_AND && aop <= ATOM_XOR)
				continue;
			for (int threads = 1; threads <= 4 && ok; threads += 3) {
				static KB b;
				build_atomic(&b, k, aop, N, true);
				int w = kbytes(k);
				static unsigned char base[A * 8], vals[P * N * 8], old[P * N * 8];
				static int32_t idx[P * N];
				double init[A];
				for (int i = 0; i < A; i++) {
					init[i] = fl ? (double)(i % 3) : (double)(rnd() % 50);
					put_val(k, base + i * w, init[i]);
				}
				for (int i = 0; i < P * N; i++) {
					idx[i] = (int32_t)(rnd() % A);
					/* small values: float sums stay exact in f16 and bf16 */
					double v = fl ? (double)((int)(rnd() % 5) - 2) : (double)(rnd() % 100);
					if (scalar_is_signed(k) && !fl)
						v -= 50;
					put_val(k, vals + i * w, v);
				}
				InterpBuffer bufs[] = {{"base", base, (size_t)A * w}, {"idx", idx, sizeof idx},
				                       {"v", vals, (size_t)P * N * w}, {"old", old, (size_t)P * N * w}};
				InterpArg args[] = {interp_ptr(base), interp_ptr(idx), interp_ptr(vals), interp_ptr(old)};
				Diag d;
				bool ran = run(&b, args, 4, bufs, 4, (InterpOptions){.grid = {P, 1, 1}, .threads = threads}, &d);
				if (!ran) {
					result(false, name, "%s: %s", scalar_name(k), d.out.data ? d.out.data : "");
					ok = false;
				}
				diag_free(&d);
				kb_free(&b);
				/* fold in C */
				double want[A];
				uint64_t wb[A];
				memcpy(want, init, sizeof want);
				for (int i = 0; i < A; i++)
					wb[i] = (uint64_t)(int64_t)init[i];
				int last_xchg[A];
				for (int i = 0; i < A; i++)
					last_xchg[i] = -1;
				for (int i = 0; i < P * N && ok; i++) {
					if (i % 7 == 6)
						continue;
					double v = val_of(k, vals + i * w);
					int a = idx[i];
					uint64_t vb = (uint64_t)(int64_t)v;
					switch (aop) {
					case ATOM_ADD: want[a] += v, wb[a] += vb; break;
					case ATOM_MAX: want[a] = v > want[a] ? v : want[a]; break;
					case ATOM_MIN: want[a] = v < want[a] ? v : want[a]; break;
					case ATOM_AND: wb[a] &= vb; break;
					case ATOM_OR: wb[a] |= vb; break;
					case ATOM_XOR: wb[a] ^= vb; break;
					default: last_xchg[a] = i; break;
					}
				}
				for (int a = 0; a < A && ok; a++) {
					double got = val_of(k, base + a * w);
					double exp = want[a];
					if (!fl && aop != ATOM_MAX && aop != ATOM_MIN) { /* integers wrap: the bits */
						unsigned char tmp[8];
						memcpy(tmp, &wb[a], 8);
						exp = val_of(k, tmp);
					}
					if (aop == ATOM_XCHG) {
						/* some unmasked lane's value, or the initial one if none */
						bool found = last_xchg[a] < 0 && got == init[a];
						for (int i = 0; i < P * N && !found; i++)
							found = i % 7 != 6 && idx[i] == a && val_of(k, vals + i * w) == got;
						if (!found) {
							result(false, name, "%s: address %d holds %g, which no lane wrote", scalar_name(k), a, got);
							ok = false;
						}
						continue;
					}
					if (got != exp) {
						result(false, name, "%s, %d threads: address %d = %.17g, want %.17g", scalar_name(k), threads, a,
						       got, exp);
						ok = false;
					}
				}
				/* masked lanes return 0; for add, each unmasked old value is
				 * a prefix sum of that address (all distinct when values > 0) */
				for (int i = 0; i < P * N && ok; i++)
					if (i % 7 == 6 && val_of(k, old + i * w) != 0) {
						result(false, name, "%s: masked lane %d returned %g", scalar_name(k), i, val_of(k, old + i * w));
						ok = false;
					}
			}
		}
		if (ok)
			result(true, name, " ");
	}
}

/* atomic_cas as a ticket: every lane of every program loops until it moves
 * the counter from c to c + 1, done here as P programs doing one cas each
 * with the expected value taken from a first atomic add of 0 (its old
 * value); only the winners of each round move it, so the count of successes
 * equals the final counter. */
static void test_cas(void)
{
	enum { P = 64 };
	const char *name = "atomic_cas: succeeds exactly where the expected value is there (16, 32, 64 bits, 4 threads)";
	static const ScalarKind kinds[] = {SK_I16, SK_I32, SK_U64};
	for (size_t ki = 0; ki < 3; ki++) {
		ScalarKind k = kinds[ki];
		KB b;
		kb_begin(&b, "cas");
		Value *ctr = kb_param(&b, "ctr", tP(k, 1)), *got = kb_param(&b, "got", tP(k, 1));
		/* while (old = cas(ctr, seen, seen + 1)) != seen: seen = old */
		Value *init = kb_ci(&b, tS(k), 0);
		Type t = tS(k);
		Op *w = kb_opv(&b, OP_WHILE, &init, 1, &t, 1);
		Value *s = ir_region_arg(b.f, &w->regions[0], t), *s2 = ir_region_arg(b.f, &w->regions[1], t);
		b.r = &w->regions[0];
		Value *ops[3] = {ctr, s, kb_op(&b, OP_ADD, t, s, kb_ci(&b, t, 1), NULL)};
		Op *cas = kb_opv(&b, OP_ATOMIC_CAS, ops, 3, &t, 1);
		cas->attr[1] = SEM_ACQ_REL;
		Value *retry = kb_op_a(&b, OP_CMP, tS(SK_I1), CMP_NE, cas->results[0], s, NULL);
		Value *fwd[2] = {retry, cas->results[0]};
		kb_opv(&b, OP_CONDITION, fwd, 2, NULL, 0);
		b.r = &w->regions[1];
		kb_yield(&b, &s2, 1);
		b.r = &b.f->body;
		kb_store(&b, kb_op(&b, OP_ADDPTR, tP(k, 1), got, kb_pid(&b, 0), NULL), w->results[0], NULL);
		kb_ret(&b);
		static unsigned char c[8], g[P * 8];
		memset(c, 0, sizeof c);
		InterpBuffer bufs[] = {{"ctr", c, (size_t)kbytes(k)}, {"got", g, (size_t)P * kbytes(k)}};
		InterpArg args[] = {interp_ptr(c), interp_ptr(g)};
		Diag d;
		bool ok = run(&b, args, 2, bufs, 2, (InterpOptions){.grid = {P, 1, 1}, .threads = 4}, &d);
		/* each program saw a distinct counter value: 0 .. P-1 */
		bool seen[P] = {0};
		for (int p = 0; ok && p < P; p++) {
			int v = (int)val_of(k, g + p * kbytes(k));
			ok = v >= 0 && v < P && !seen[v];
			if (ok)
				seen[v] = true;
		}
		ok = ok && val_of(k, c) == P;
		if (!ok) {
			result(false, name, "%s: %s counter %g", scalar_name(k), d.out.data ? d.out.data : "", val_of(k, c));
			diag_free(&d);
			kb_free(&b);
			return;
		}
		diag_free(&d);
		kb_free(&b);
	}
	result(true, name, " ");
}

/* ---- reports ------------------------------------------------------------------------- */

/* offs = pid * 320 + 319 + 4 * arange(32): program 2's lane 17 is the first
 * past the end (index 1027 of 1024 f32: 12 bytes past). */
static void test_oob_load(void)
{
	KB b;
	kb_begin(&b, "oob");
	Value *x = kb_param(&b, "x", tP(SK_F32, 1)), *out = kb_param(&b, "out", tP(SK_F32, 1));
	Type bi = tB(I32, 32);
	Value *start = kb_op(&b, OP_ADD, I32, kb_op(&b, OP_MUL, I32, kb_pid(&b, 0), kb_ci(&b, I32, 320), NULL),
	                     kb_ci(&b, I32, 319), NULL);
	Value *offs = kb_op(&b, OP_ADD, bi, splat(&b, bi, start),
	                    kb_op(&b, OP_MUL, bi, kb_arange(&b, 0, 32), kb_ci(&b, bi, 4), NULL), NULL);
	b.line = 12;
	Value *v = kb_load(&b, kb_ptrs(&b, x, offs), NULL, NULL);
	b.line = 13;
	/* each program its own 32 of out: programs on threads never write the same element */
	Value *oo = kb_op(&b, OP_ADD, bi, splat(&b, bi, kb_op(&b, OP_MUL, I32, kb_pid(&b, 0), kb_ci(&b, I32, 32), NULL)),
	                  kb_arange(&b, 0, 32), NULL);
	kb_store(&b, kb_ptrs(&b, out, oo), v, NULL);
	kb_ret(&b);
	static float xs[1024], os[3 * 32];
	InterpBuffer bufs[] = {{"x", xs, sizeof xs}, {"out", os, sizeof os}};
	InterpArg args[] = {interp_ptr(xs), interp_ptr(os)};
	for (int t = 1; t <= 4; t += 3) {
		Diag d;
		bool ok = run(&b, args, 2, bufs, 2, (InterpOptions){.grid = {3, 1, 1}, .threads = t}, &d);
		char addr[100];
		snprintf(addr, sizeof addr, "address 0x%llx is 12 bytes past the end of buffer 'x' (4096 bytes)",
		         (unsigned long long)((uintptr_t)xs + 1027 * 4));
		const char *want[] = {"kernel.tile:12:5: error: out-of-bounds load in kernel 'oob', program (2, 0, 0), element [17]: ",
		                      addr, " 12 |     stmt_012(x);", "^~~~~~~~"};
		char name[128];
		snprintf(name, sizeof name, "out-of-bounds load: place, kernel, program, element, bytes past the end (%d thread%s)",
		         t, t > 1 ? "s" : "");
		expect_error(name, ok, &d, want, 4);
		diag_free(&d);
	}
	kb_free(&b);
}

/* A 2-D store into 120 i32: row 3's element 24 is the first out. */
static void test_oob_store_2d(void)
{
	KB b;
	kb_begin(&b, "oob2");
	Value *out = kb_param(&b, "out", tP(SK_I32, 1));
	Type t = tB2(I32, 4, 32);
	Value *offs = kb_op(&b, OP_RESHAPE, t, kb_arange(&b, 0, 128), NULL, NULL);
	b.line = 30;
	kb_store(&b, kb_ptrs(&b, out, offs), offs, NULL);
	kb_ret(&b);
	static int32_t os[120];
	memset(os, 0, sizeof os);
	InterpBuffer bufs[] = {{"out", os, sizeof os}};
	InterpArg args[] = {interp_ptr(os)};
	Diag d;
	bool ok = run(&b, args, 1, bufs, 1, (InterpOptions){.grid = {1, 1, 1}}, &d);
	const char *want[] = {"kernel.tile:30:5: error: out-of-bounds store in kernel 'oob2', program (0, 0, 0), element [3, 24]",
	                      "is just past the end of buffer 'out' (480 bytes)"};
	expect_error("out-of-bounds store: a 2-D element index [3, 24]", ok, &d, want, 2);
	bool none = true; /* nothing stored: the store is checked before it writes */
	for (int i = 0; i < 120; i++)
		none &= os[i] == 0;
	result(none, "an out-of-bounds store writes none of its lanes", "some lanes were written");
	diag_free(&d);
	kb_free(&b);
}

/* Assorted places: before the start; straddling the end; no buffers; masked
 * lanes out of bounds (fine); atomics. */
static void test_oob_misc(void)
{
	static float xs[16];
	static unsigned char six[6];
	/* x - 2 + arange */
	KB b;
	kb_begin(&b, "before");
	Value *x = kb_param(&b, "x", tP(SK_F32, 1));
	Type bi = tB(I32, 4);
	Value *offs = kb_op(&b, OP_SUB, bi, kb_arange(&b, 0, 4), kb_ci(&b, bi, 2), NULL);
	Value *m = kb_op_a(&b, OP_CMP, tB(tS(SK_I1), 4), CMP_GE, offs, kb_ci(&b, bi, 0), NULL);
	Value *p = kb_ptrs(&b, x, offs);
	kb_load(&b, p, m, NULL); /* masked: fine */
	b.line = 40;
	kb_load(&b, p, NULL, NULL);
	kb_ret(&b);
	InterpBuffer bufs[] = {{"x", xs, sizeof xs}};
	InterpArg args[] = {interp_ptr(xs)};
	Diag d;
	bool ok = run(&b, args, 1, bufs, 1, (InterpOptions){.grid = {1, 1, 1}}, &d);
	const char *w1[] = {"kernel.tile:40:5: error: out-of-bounds load in kernel 'before', program (0, 0, 0), element [0]",
	                    "is 8 bytes before the start of buffer 'x' (64 bytes)"};
	expect_error("out-of-bounds load before the start (the masked load before it passes)", ok, &d, w1, 2);
	diag_free(&d);
	ok = run(&b, args, 1, NULL, 0, (InterpOptions){.grid = {1, 1, 1}}, &d);
	const char *w2[] = {"is in no buffer (none were given)"};
	expect_error("an access with no buffers given", ok, &d, w2, 1);
	diag_free(&d);
	kb_free(&b);

	/* an f32 at byte 4 of a 6-byte buffer */
	kb_begin(&b, "straddle");
	x = kb_param(&b, "x", tP(SK_F32, 1));
	kb_load(&b, kb_op(&b, OP_ADDPTR, tP(SK_F32, 1), x, kb_ci(&b, I32, 1), NULL), NULL, NULL);
	kb_ret(&b);
	InterpBuffer b6[] = {{"six", six, sizeof six}};
	InterpArg a6[] = {interp_ptr(six)};
	ok = run(&b, a6, 1, b6, 1, (InterpOptions){.grid = {1, 1, 1}}, &d);
	const char *w3[] = {"(an access of 4 bytes) runs 2 bytes past the end of buffer 'six' (6 bytes)"};
	expect_error("an access that starts inside a buffer and runs past its end", ok, &d, w3, 1);
	diag_free(&d);
	kb_free(&b);

	/* a null pointer and a wild one (an address near 2^64) */
	for (int wild = 0; wild < 2; wild++) {
		kb_begin(&b, "wild");
		Value *pp = kb_op(&b, OP_INT_TO_PTR, tP(SK_F32, 1), kb_ci(&b, tS(SK_I64), wild ? -16 : 0), NULL, NULL);
		Value *offs2 = kb_arange(&b, 0, 4);
		kb_load(&b, kb_ptrs(&b, pp, offs2), NULL, NULL);
		kb_ret(&b);
		ok = run(&b, NULL, 0, bufs, 1, (InterpOptions){.grid = {1, 1, 1}}, &d);
		const char *w5[] = {wild ? "out-of-bounds load in kernel 'wild', program (0, 0, 0), element [0]: address 0xfffffffffffffff0 is"
		                         : "out-of-bounds load in kernel 'wild', program (0, 0, 0), element [0]: address 0x0 is",
		                    wild ? "past the end of buffer 'x' (64 bytes)" : "before the start of buffer 'x' (64 bytes); it looks like a null pointer"};
		expect_error(wild ? "a wild pointer near 2^64" : "a null pointer", ok, &d, w5, 2);
		diag_free(&d);
		kb_free(&b);
	}

	/* atomics are checked too */
	static KB ba;
	build_atomic(&ba, SK_I32, ATOM_ADD, 8, false);
	static int32_t base[4], idx[8] = {0, 1, 2, 3, 4, 0, 0, 0}, vals[8], old[8];
	InterpBuffer bb[] = {{"base", base, sizeof base}, {"idx", idx, sizeof idx}, {"v", vals, sizeof vals}, {"old", old, sizeof old}};
	InterpArg aa[] = {interp_ptr(base), interp_ptr(idx), interp_ptr(vals), interp_ptr(old)};
	ok = run(&ba, aa, 4, bb, 4, (InterpOptions){.grid = {1, 1, 1}}, &d);
	const char *w4[] = {"out-of-bounds atomic in kernel 'atom', program (0, 0, 0), element [4]", "just past the end of buffer 'base' (16 bytes)"};
	expect_error("out-of-bounds atomic", ok, &d, w4, 2);
	diag_free(&d);
	kb_free(&ba);
}

/* assert(x > 0) over a block: the first failing lane of the first failing
 * program; with 4 threads the same program is reported. */
static void test_assert(void)
{
	KB b;
	kb_begin(&b, "checked");
	Value *x = kb_param(&b, "x", tP(SK_I32, 1));
	Type bi = tB(I32, 16);
	Value *offs = kb_op(&b, OP_ADD, bi, splat(&b, bi, kb_op(&b, OP_MUL, I32, kb_pid(&b, 0), kb_ci(&b, I32, 16), NULL)),
	                    kb_arange(&b, 0, 16), NULL);
	Value *v = kb_load(&b, kb_ptrs(&b, x, offs), NULL, NULL);
	b.line = 50;
	Value *c = kb_op_a(&b, OP_CMP, tB(tS(SK_I1), 16), CMP_GT, v, kb_ci(&b, bi, 0), NULL);
	Op *a = kb_opv(&b, OP_ASSERT, &c, 1, NULL, 0);
	a->str = "x must be positive";
	kb_ret(&b);
	static int32_t xs[16 * 32];
	for (int i = 0; i < 16 * 32; i++)
		xs[i] = i >= 5 * 16 + 5 ? -1 : 1; /* program 5, lane 5 first; later ones fail too */
	InterpBuffer bufs[] = {{"x", xs, sizeof xs}};
	InterpArg args[] = {interp_ptr(xs)};
	for (int t = 1; t <= 4; t += 3) {
		Diag d;
		bool ok = run(&b, args, 1, bufs, 1, (InterpOptions){.grid = {32, 1, 1}, .threads = t}, &d);
		const char *want[] = {"kernel.tile:50:5: error: assertion failed in kernel 'checked', program (5, 0, 0), element [5]: x must be positive"};
		char name[128];
		snprintf(name, sizeof name, "assert: place, message, the lowest failing program and lane (%d thread%s)", t,
		         t > 1 ? "s" : "");
		expect_error(name, ok, &d, want, 1);
		diag_free(&d);
	}
	kb_free(&b);
}

/* Integer division by zero, a shift by 40 of an i32, a wrong multiple_of. */
static void test_ub_reports(void)
{
	static int32_t xs[8] = {1, 2, 3, 0, 5, 6, 7, 8};
	InterpBuffer bufs[] = {{"x", xs, sizeof xs}};
	InterpArg args[] = {interp_ptr(xs)};
	Type bi = tB(I32, 8);
	for (int which = 0; which < 3; which++) {
		KB b;
		kb_begin(&b, "ub");
		Value *x = kb_param(&b, "x", tP(SK_I32, 1));
		Value *v = kb_load(&b, kb_ptrs(&b, x, kb_arange(&b, 0, 8)), NULL, NULL);
		b.line = 60 + which;
		if (which == 0) {
			kb_op(&b, OP_DIV, bi, kb_ci(&b, bi, 100), v, NULL);
		} else if (which == 1) {
			kb_op(&b, OP_SHL, bi, v, kb_op(&b, OP_MUL, bi, v, kb_ci(&b, bi, 20), NULL), NULL);
		} else {
			Value *h = kb_op(&b, OP_HINT, bi, kb_op(&b, OP_MUL, bi, kb_arange(&b, 0, 8), kb_ci(&b, bi, 8), NULL), NULL, NULL);
			h->def->attr[0] = 16;
		}
		kb_ret(&b);
		Diag d;
		bool ok = run(&b, args, 1, bufs, 1, (InterpOptions){.grid = {1, 1, 1}}, &d);
		const char *w[][2] = {
			{"kernel.tile:60:5: error: integer division by zero in kernel 'ub', program (0, 0, 0), element [3]", "where(mask, y, 1)"},
			{"kernel.tile:61:5: error: shift out of range in kernel 'ub', program (0, 0, 0), element [1]", "by 40, i32 has 32 bits"},
			{"kernel.tile:62:5: error: wrong hint in kernel 'ub', program (0, 0, 0), element [1]", "multiple_of(16) promised, but 8"},
		};
		static const char *names[] = {"integer division by zero is reported", "a shift by the width or more is reported",
		                              "a wrong multiple_of hint is reported"};
		expect_error(names[which], ok, &d, w[which], 2);
		diag_free(&d);
		ok = run(&b, args, 1, bufs, 1, (InterpOptions){.grid = {1, 1, 1}, .no_ub_checks = true}, &d);
		char name[96];
		snprintf(name, sizeof name, "%s; with no_ub_checks it runs", names[which]);
		result(ok, name, "%s", d.out.data ? d.out.data : "");
		diag_free(&d);
		kb_free(&b);
	}
}

/* Wrong arguments, malformed IR, overlapping buffers: errors, no crash. */
static void test_bad_input(void)
{
	KB b;
	kb_begin(&b, "k");
	Value *x = kb_param(&b, "x", tP(SK_F32, 1));
	kb_const_param(&b, "BLOCK", 4);
	Value *s = kb_param(&b, "s", tS(SK_F32));
	kb_store(&b, x, s, NULL);
	kb_ret(&b);
	static float xs[4];
	InterpBuffer bufs[] = {{"x", xs, sizeof xs}};
	InterpArg good[] = {interp_ptr(xs), interp_float(2.5)}, bad[] = {interp_ptr(xs), interp_int(2)};
	Diag d;
	bool ok = run(&b, good, 2, bufs, 1, (InterpOptions){.grid = {1, 1, 1}}, &d);
	result(ok && xs[0] == 2.5f, "a const parameter takes no argument", "%s", d.out.data ? d.out.data : "");
	diag_free(&d);
	ok = run(&b, good, 3, bufs, 1, (InterpOptions){.grid = {1, 1, 1}}, &d);
	const char *w1[] = {"kernel 'k' takes 2 runtime arguments (const parameters take none), 3 given"};
	expect_error("the wrong number of arguments", ok, &d, w1, 1);
	diag_free(&d);
	ok = run(&b, bad, 2, bufs, 1, (InterpOptions){.grid = {1, 1, 1}}, &d);
	const char *w2[] = {"argument 2 of kernel 'k' ('s', f32) needs a float (is_float set)"};
	expect_error("an integer given for a float parameter", ok, &d, w2, 1);
	diag_free(&d);
	InterpBuffer overlap[] = {{"a", xs, sizeof xs}, {"b", xs + 2, 4}};
	ok = run(&b, good, 2, overlap, 2, (InterpOptions){.grid = {1, 1, 1}}, &d);
	const char *w3[] = {"buffers 0 ('a') and 1 ('b') overlap"};
	expect_error("overlapping buffers", ok, &d, w3, 1);
	diag_free(&d);
	ok = run(&b, good, 2, bufs, 1, (InterpOptions){.grid = {0, 1, 1}}, &d);
	result(ok && !d.out.len, "a grid with an axis of 0 runs nothing", "%s", d.out.data ? d.out.data : "");
	diag_free(&d);
	kb_free(&b);

	/* add of [8] and [4]; a value used outside its region; a for without
	 * yield; a block of 5 elements. The interpreter runs IR that ir_verify
	 * accepts: its messages (tests/ir/verify_test.c has every one). */
	for (int which = 0; which < 4; which++) {
		kb_begin(&b, "bad");
		b.line = 70 + which;
		if (which == 0) {
			kb_op(&b, OP_ADD, tB(I32, 8), kb_arange(&b, 0, 8), kb_arange(&b, 0, 4), NULL);
		} else if (which == 1) {
			Value *c = kb_ci(&b, tS(SK_I1), 1);
			Op *iff = kb_opv(&b, OP_IF, &c, 1, NULL, 0);
			b.r = &iff->regions[0];
			Value *inner = kb_ci(&b, I32, 1);
			kb_yield(&b, NULL, 0);
			b.r = &iff->regions[1];
			kb_yield(&b, NULL, 0);
			b.r = &b.f->body;
			kb_op(&b, OP_NEG, I32, inner, NULL, NULL);
		} else if (which == 3) {
			kb_arange(&b, 0, 5);
		} else {
			Value *ops[4] = {kb_ci(&b, I32, 0), kb_ci(&b, I32, 4), kb_ci(&b, I32, 1), kb_ci(&b, I32, 0)};
			Type t = I32;
			Op *loop = kb_opv(&b, OP_FOR, ops, 4, &t, 1);
			ir_region_arg(b.f, &loop->regions[0], I32);
			ir_region_arg(b.f, &loop->regions[0], I32);
		}
		kb_ret(&b);
		ok = run(&b, NULL, 0, NULL, 0, (InterpOptions){.grid = {1, 1, 1}}, &d);
		const char *w[][2] = {
			{"kernel.tile:70:5: error: internal error: IR invalid: ", "operand types differ: i32[8] and i32[4] at %2 (add)"},
			{"kernel.tile:71:5: error: internal error: IR invalid: ",
			 "operand 0 (%1) is defined in a region that does not enclose its use at %2 (neg)"},
			{"kernel.tile:72:5: error: internal error: IR invalid: ", "for region 0 is empty, expected it to end with yield"},
			{"kernel.tile:73:5: error: internal error: IR invalid: ", "dimension 0 is not a power of two at %0 (arange)"}};
		char name[64];
		snprintf(name, sizeof name, "malformed IR is reported, not run (%d)", which);
		expect_error(name, ok, &d, w[which], 2);
		diag_free(&d);
		kb_free(&b);
	}

	/* verified IR the interpreter cannot run: a dot of rank 3, a block parameter */
	for (int which = 0; which < 2; which++) {
		kb_begin(&b, "cannot");
		b.line = 80 + which;
		if (which == 0) {
			Type t3 = type_block(tS(SK_F32), 3, (int32_t[]){2, 4, 4});
			kb_op(&b, OP_DOT, t3, kb_cf(&b, t3, 1), kb_cf(&b, t3, 2), kb_cf(&b, t3, 0));
		} else {
			kb_param(&b, "blk", tB(I32, 4));
		}
		kb_ret(&b);
		InterpArg one_arg[] = {interp_int(1)};
		ok = run(&b, one_arg, which, NULL, 0, (InterpOptions){.grid = {1, 1, 1}}, &d);
		const char *w[][1] = {{"kernel.tile:80:5: error: the interpreter runs dots of matrices, not of rank 3 (in kernel 'cannot')"},
		                      {"error: kernel 'cannot': parameter 'blk' is not a scalar value (one argument each)"}};
		expect_error(which ? "a block parameter is refused before the run" : "a dot of rank 3 is refused before the run", ok,
		             &d, w[which], 1);
		diag_free(&d);
		kb_free(&b);
	}
}

/* ---- print ------------------------------------------------------------------------------- */

static void test_print(void)
{
	KB b;
	kb_begin(&b, "show");
	Value *m = kb_op(&b, OP_RESHAPE, tB2(I32, 2, 2), kb_arange(&b, 0, 4), NULL, NULL);
	Op *p1 = kb_opv(&b, OP_PRINT, &m, 1, NULL, 0);
	p1->str = "m =";
	Value *f = kb_cf(&b, tS(SK_F32), fp_round(SK_F32, 0.1)); /* constants hold values of their kind */
	Op *p2 = kb_opv(&b, OP_PRINT, &f, 1, NULL, 0);
	p2->str = "f";
	Value *h = kb_cf(&b, tS(SK_F16), -2.0);
	Op *p3 = kb_opv(&b, OP_PRINT, &h, 1, NULL, 0);
	p3->str = "bits";
	p3->attr[0] = 1;
	Value *two[2] = {kb_arange(&b, 0, 2), kb_op(&b, OP_CAST, tB(tS(SK_F64), 2), kb_arange(&b, 5, 7), NULL, NULL)};
	Op *p4 = kb_opv(&b, OP_PRINT, two, 2, NULL, 0);
	p4->str = "pair";
	Value *mixed[2] = {kb_pid(&b, 0), kb_arange(&b, 0, 2)};
	Op *p5 = kb_opv(&b, OP_PRINT, mixed, 2, NULL, 0);
	p5->str = "";
	Value *bf = kb_cf(&b, tS(SK_BF16), fp_round(SK_BF16, 1.0 / 3.0));
	Value *pt = kb_op(&b, OP_INT_TO_PTR, tP(SK_F32, 1), kb_ci(&b, tS(SK_I64), 0x1000), NULL, NULL); /* as irgen makes one */
	Value *sc[2] = {bf, pt};
	Op *p6 = kb_opv(&b, OP_PRINT, sc, 2, NULL, 0);
	p6->str = "x:";
	kb_ret(&b);
	StrBuf out = {0};
	Diag d;
	diag_init(&d);
	InterpOptions o = {.grid = {2, 1, 1}, .print_out = &out};
	bool ok = kb_run(&b, NULL, 0, NULL, 0, &o, &d);
	const char *want =
		"pid (0, 0, 0) idx (0, 0) m = 0\n"
		"pid (0, 0, 0) idx (0, 1) m = 1\n"
		"pid (0, 0, 0) idx (1, 0) m = 2\n"
		"pid (0, 0, 0) idx (1, 1) m = 3\n"
		"pid (0, 0, 0) idx () f: 0.1\n"
		"pid (0, 0, 0) idx () bits: 0xc000\n"
		"pid (0, 0, 0) idx (0) pair: 0, 5\n"
		"pid (0, 0, 0) idx (1) pair: 1, 6\n"
		"pid (0, 0, 0) idx () (operand 0): 0\n"
		"pid (0, 0, 0) idx (0) (operand 1): 0\n"
		"pid (0, 0, 0) idx (1) (operand 1): 1\n"
		"pid (0, 0, 0) idx () x: 0.334, 0x1000\n";
	size_t wl = strlen(want);
	bool good = ok && out.len == 2 * wl && memcmp(out.data, want, wl) == 0 && strstr(out.data + wl, "pid (1, 0, 0) idx () (operand 0): 1\n");
	result(good, "print: a line per element, pid and index, prefix, shortest floats, hex, pairs, mixed shapes",
	       "got:\n%s%s", out.data ? out.data : "", d.out.data ? d.out.data : "");
	sb_free(&out);
	diag_free(&d);
	kb_free(&b);

	/* floats: the shortest decimal that reads back, without an exponent at moderate sizes */
	kb_begin(&b, "floats");
	static const double fv[] = {60, 1e20, 1e-5, 123456.5, 1e14, -0.0, INFINITY, 1.0 / 3.0};
	static const char *fwant[] = {"60", "1e+20", "1e-05", "123456.5", "100000000376832", "-0", "inf", "0.33333334"};
	for (int i = 0; i < 8; i++) {
		Value *c = kb_cf(&b, tS(SK_F32), fp_round(SK_F32, fv[i]));
		Op *pf = kb_opv(&b, OP_PRINT, &c, 1, NULL, 0);
		pf->str = "f";
	}
	kb_ret(&b);
	diag_init(&d);
	o = (InterpOptions){.grid = {1, 1, 1}, .print_out = &out};
	ok = kb_run(&b, NULL, 0, NULL, 0, &o, &d);
	char fw[400] = "";
	for (int i = 0; i < 8; i++) {
		size_t l = strlen(fw);
		snprintf(fw + l, sizeof fw - l, "pid (0, 0, 0) idx () f: %s\n", fwant[i]);
	}
	result(ok && out.data && strcmp(out.data, fw) == 0, "print of floats: shortest, no exponent at moderate sizes",
	       "got:\n%s", out.data ? out.data : "");
	sb_free(&out);
	diag_free(&d);
	kb_free(&b);

	/* many programs on 4 threads: every line whole */
	kb_begin(&b, "many");
	Value *v = kb_op(&b, OP_ADD, tB(I32, 64), kb_arange(&b, 0, 64),
	                 splat(&b, tB(I32, 64), kb_op(&b, OP_MUL, I32, kb_pid(&b, 0), kb_ci(&b, I32, 1000), NULL)), NULL);
	Op *pp = kb_opv(&b, OP_PRINT, &v, 1, NULL, 0);
	pp->str = "v";
	kb_ret(&b);
	diag_init(&d);
	o = (InterpOptions){.grid = {32, 1, 1}, .threads = 4, .print_out = &out};
	ok = kb_run(&b, NULL, 0, NULL, 0, &o, &d);
	int lines = 0, bad = 0;
	for (char *l = out.data; ok && l && *l;) {
		char *e = strchr(l, '\n');
		if (!e)
			break;
		int p, x, y, z, i, val;
		if (sscanf(l, "pid (%d, %d, %d) idx (%d) v: %d", &p, &y, &z, &i, &val) != 5 || val != p * 1000 + i || y || z)
			bad++;
		(void)x;
		lines++;
		l = e + 1;
	}
	result(ok && lines == 32 * 64 && !bad, "print on 4 threads: every line whole (32 programs x 64 lines)",
	       "%d lines, %d bad", lines, bad);
	sb_free(&out);
	diag_free(&d);
	kb_free(&b);
}

int main(void)
{
	ref_init();
	test_masked_copy();
	test_ptr_array();
	test_atomics();
	test_cas();
	test_oob_load();
	test_oob_store_2d();
	test_oob_misc();
	test_assert();
	test_ub_reports();
	test_bad_input();
	test_print();
	ref_free();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
