/* layout_test: the GPU IR's encodings and bit maps (layout.c), shape ops as
 * maps of index bits (gpu/layouts.c) and the axis analysis (axis.c).
 *
 * Each expectation is computed here independently of the code under test:
 * blocked layouts from Triton's sizePerThread / threadsPerWarp /
 * warpsPerCTA / order written as coordinates, mma from the PTX ISA's
 * fragment tables of mma.m16n8k16, shape ops from the coordinates they move,
 * axis facts from the values a block holds.
 *
 * Cases marked KNOWN BUG expose faults found in the code under test (see the
 * comment at each). By default they run and print "bug " lines but are not
 * counted, so that the suite stays green; BLK_KNOWN_BUGS=1 counts them (they
 * then fail until fixed). Once one passes it counts as an ordinary "ok". */
#include "irtest.h"

static Type f32, f16, i32, u32, i8, f64;

/* ---- the known-bug switch ---- */

static bool count_bugs;
static int open_bugs;

static bool known_bug(bool ok, const char *name)
{
	if (ok || count_bugs)
		return check(ok, name);
	printf("bug  %s (KNOWN BUG, not counted; BLK_KNOWN_BUGS=1 counts it)\n", name);
	open_bugs++;
	return false;
}

/* ---- bit maps as functions ---- */

static int lg(int x)
{
	int s = 0;
	while ((1 << s) < x)
		s++;
	return s;
}

/* The linear index that thread t (lane t % 32, warp t / 32) holds in
 * register r under l. */
static int lin_apply(const Lin *l, int t, int r)
{
	int idx = 0, lane = t & 31, warp = t >> 5;
	for (int i = 0; i < l->n_reg; i++)
		if (r >> i & 1 && l->reg[i] >= 0)
			idx ^= 1 << l->reg[i];
	for (int i = 0; i < 5; i++)
		if (lane >> i & 1 && l->lane[i] >= 0)
			idx ^= 1 << l->lane[i];
	for (int i = 0; i < l->n_warp; i++)
		if (warp >> i & 1 && l->warp[i] >= 0)
			idx ^= 1 << l->warp[i];
	return idx;
}

static int row_major(int rank, const int *shape, const int *c)
{
	int idx = 0;
	for (int d = 0; d < rank; d++)
		idx = idx * shape[d] + c[d];
	return idx;
}

static Type shaped(ScalarKind k, int rank, const int *shape)
{
	int32_t s[BLK_MAX_RANK] = {0};
	for (int d = 0; d < rank; d++)
		s[d] = shape[d];
	return type_block(T(k), rank, s);
}

static bool lin_eq(const Lin *a, const Lin *b)
{
	if (a->n_reg != b->n_reg || a->n_warp != b->n_warp)
		return false;
	for (int i = 0; i < a->n_reg; i++)
		if (a->reg[i] != b->reg[i])
			return false;
	for (int i = 0; i < 5; i++)
		if (a->lane[i] != b->lane[i])
			return false;
	for (int i = 0; i < a->n_warp; i++)
		if (a->warp[i] != b->warp[i])
			return false;
	return true;
}

static void lin_str(const Lin *l, char *buf, size_t n)
{
	int k = snprintf(buf, n, "reg [");
	for (int i = 0; i < l->n_reg; i++)
		k += snprintf(buf + k, n - (size_t)k, "%s%d", i ? " " : "", l->reg[i]);
	k += snprintf(buf + k, n - (size_t)k, "] lane [");
	for (int i = 0; i < 5; i++)
		k += snprintf(buf + k, n - (size_t)k, "%s%d", i ? " " : "", l->lane[i]);
	k += snprintf(buf + k, n - (size_t)k, "] warp [");
	for (int i = 0; i < l->n_warp; i++)
		k += snprintf(buf + k, n - (size_t)k, "%s%d", i ? " " : "", l->warp[i]);
	snprintf(buf + k, n - (size_t)k, "]");
}

static char why[1024]; /* the first difference a comparison found */

/* Every element of numel is held by some thread, and no thread holds one
 * element in two registers. */
static bool lin_covers(const Lin *l, int threads, int numel)
{
	static unsigned char held[1 << 16], mine[1 << 16];
	memset(held, 0, (size_t)numel);
	int regs = 1 << l->n_reg;
	for (int t = 0; t < threads; t++) {
		memset(mine, 0, (size_t)numel);
		for (int r = 0; r < regs; r++) {
			int e = lin_apply(l, t, r);
			if (e < 0 || e >= numel) {
				snprintf(why, sizeof why, "thread %d register %d: index %d out of range", t, r, e);
				return false;
			}
			if (mine[e]++) {
				snprintf(why, sizeof why, "thread %d holds element %d twice", t, e);
				return false;
			}
			held[e] = 1;
		}
	}
	for (int e = 0; e < numel; e++)
		if (!held[e]) {
			snprintf(why, sizeof why, "element %d is held by no thread", e);
			return false;
		}
	return true;
}

/* ---- blocked layouts, Triton style ---- */

typedef struct Blk {
	int rank, nw;
	int shape[BLK_MAX_RANK], spt[BLK_MAX_RANK], tpw[BLK_MAX_RANK], wpc[BLK_MAX_RANK], order[BLK_MAX_RANK];
} Blk;

/* x split into digits of sizes[d], d along order (order[0] fastest). */
static void split(int x, const int *sizes, const int *order, int rank, int *out)
{
	for (int i = 0; i < rank; i++) {
		int d = order[i];
		out[d] = x % sizes[d];
		x /= sizes[d];
	}
}

/* Elements a thread holds along d inside its sizePerThread tile (a tile
 * larger than the block holds each element once), and how many times the
 * whole CTA tile repeats along d. */
static int blk_elems(const Blk *b, int d) { return b->spt[d] < b->shape[d] ? b->spt[d] : b->shape[d]; }
static int blk_reps(const Blk *b, int d)
{
	int tile = b->spt[d] * b->tpw[d] * b->wpc[d];
	return b->shape[d] > tile ? b->shape[d] / tile : 1;
}

static int blk_regs(const Blk *b)
{
	int n = 1;
	for (int d = 0; d < b->rank; d++)
		n *= blk_elems(b, d) * blk_reps(b, d);
	return n;
}

/* The coordinate thread t holds in register r: lane and warp ids split over
 * tpw and wpc along order; r split into its place inside the thread's
 * sizePerThread tile (along order), then the repetition of the CTA tile
 * (along order); coordinates wrap modulo the shape (replication). */
static void blk_coord(const Blk *b, int t, int r, int *c)
{
	int l[BLK_MAX_RANK], w[BLK_MAX_RANK], e[BLK_MAX_RANK], rep[BLK_MAX_RANK], es[BLK_MAX_RANK],
	    rs[BLK_MAX_RANK], pe = 1;
	for (int d = 0; d < b->rank; d++) {
		es[d] = blk_elems(b, d);
		rs[d] = blk_reps(b, d);
		pe *= es[d];
	}
	split(t % 32, b->tpw, b->order, b->rank, l);
	split(t / 32, b->wpc, b->order, b->rank, w);
	split(r % pe, es, b->order, b->rank, e);
	split(r / pe, rs, b->order, b->rank, rep);
	for (int d = 0; d < b->rank; d++) {
		int v = rep[d] * b->spt[d] * b->tpw[d] * b->wpc[d] + w[d] * b->spt[d] * b->tpw[d] + l[d] * b->spt[d] + e[d];
		c[d] = v % b->shape[d];
	}
}

/* enc_lin of the blocked encoding b against blk_coord, element by element. */
static bool blocked_matches(const Blk *b)
{
	begin("blocked");
	F->num_warps = b->nw;
	const Encoding *e = enc_blocked(F, b->rank, b->spt, b->tpw, b->wpc, b->order);
	Type t = shaped(SK_F32, b->rank, b->shape);
	Lin l;
	if (!e || !enc_lin(e, t, b->nw, &l)) {
		snprintf(why, sizeof why, "enc_lin refused it");
		return false;
	}
	int regs = blk_regs(b), numel = (int)type_numel(t);
	if (l.n_reg != lg(regs) || l.n_warp != lg(b->nw) || l.n_lane != 5) {
		snprintf(why, sizeof why, "%d register bits, %d warp bits; want %d and %d", l.n_reg, l.n_warp, lg(regs),
		         lg(b->nw));
		return false;
	}
	for (int th = 0; th < 32 * b->nw; th++)
		for (int r = 0; r < regs; r++) {
			int c[BLK_MAX_RANK];
			blk_coord(b, th, r, c);
			int want = row_major(b->rank, b->shape, c), got = lin_apply(&l, th, r);
			if (want != got) {
				char ls[256];
				lin_str(&l, ls, sizeof ls);
				snprintf(why, sizeof why, "thread %d register %d: index %d, want %d (%s)", th, r, got, want, ls);
				return false;
			}
		}
	return lin_covers(&l, 32 * b->nw, numel);
}

static Blk blk(int rank, const int *shape, const int *spt, const int *tpw, const int *wpc, const int *order, int nw)
{
	Blk b = {.rank = rank, .nw = nw};
	for (int d = 0; d < rank; d++) {
		b.shape[d] = shape[d];
		b.spt[d] = spt[d];
		b.tpw[d] = tpw[d];
		b.wpc[d] = wpc[d];
		b.order[d] = order[d];
	}
	return b;
}

static void check_blocked(Blk b, const char *name)
{
	bool ok = blocked_matches(&b);
	if (!check(ok, name))
		printf("  %s\n", why);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static int rnd(int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (int)(rng % (uint64_t)n);
}

/* A random blocked encoding and shape: power-of-two sizes, threads per warp
 * multiplying to 32, warps per CTA to nw, any order. */
static Blk random_blk(int rank)
{
	Blk b = {.rank = rank, .nw = 1 << rnd(4)};
	int bits_left = 13;
	for (int d = 0; d < rank; d++) {
		int sb = rnd(8);
		if (sb > bits_left)
			sb = bits_left;
		bits_left -= sb;
		b.shape[d] = 1 << sb;
		b.spt[d] = 1 << rnd(4);
		b.tpw[d] = b.wpc[d] = 1;
		b.order[d] = d;
	}
	for (int i = 0; i < 5; i++)
		b.tpw[rnd(rank)] *= 2;
	for (int i = 0; i < lg(b.nw); i++)
		b.wpc[rnd(rank)] *= 2;
	for (int i = rank - 1; i > 0; i--) {
		int j = rnd(i + 1), x = b.order[i];
		b.order[i] = b.order[j];
		b.order[j] = x;
	}
	return b;
}

static void blk_str(const Blk *b, char *buf, size_t n)
{
	int k = 0;
	const int *v[5] = {b->shape, b->spt, b->tpw, b->wpc, b->order};
	const char *nm[5] = {"shape", "spt", "tpw", "wpc", "order"};
	for (int i = 0; i < 5; i++) {
		k += snprintf(buf + k, n - (size_t)k, "%s%s [", i ? " " : "", nm[i]);
		for (int d = 0; d < b->rank; d++)
			k += snprintf(buf + k, n - (size_t)k, "%s%d", d ? " " : "", v[i][d]);
		k += snprintf(buf + k, n - (size_t)k, "]");
	}
	snprintf(buf + k, n - (size_t)k, " warps %d", b->nw);
}

static void blocked(void)
{
	/* 1-D: one element a thread exactly; lanes and warps replicate; registers repeat */
	check_blocked(blk(1, (int[]){128}, (int[]){1}, (int[]){32}, (int[]){4}, (int[]){0}, 4),
	              "blocked 1-D: 128 elements on 128 threads");
	check_blocked(blk(1, (int[]){16}, (int[]){1}, (int[]){32}, (int[]){4}, (int[]){0}, 4),
	              "blocked 1-D: 16 elements, lanes and warps replicate");
	check_blocked(blk(1, (int[]){1024}, (int[]){4}, (int[]){32}, (int[]){2}, (int[]){0}, 2),
	              "blocked 1-D: 4 a thread, the CTA tile repeated 4 times");
	check_blocked(blk(1, (int[]){2}, (int[]){4}, (int[]){32}, (int[]){1}, (int[]){0}, 1),
	              "blocked 1-D: sizePerThread larger than the block");
	check_blocked(blk(1, (int[]){1}, (int[]){1}, (int[]){32}, (int[]){4}, (int[]){0}, 4),
	              "blocked 1-D: one element held by every thread");
	/* 2-D */
	check_blocked(blk(2, (int[]){16, 64}, (int[]){1, 4}, (int[]){2, 16}, (int[]){4, 1}, (int[]){1, 0}, 4),
	              "blocked 2-D: [16, 64] rows fastest-last, 4 a thread");
	check_blocked(blk(2, (int[]){64, 16}, (int[]){4, 1}, (int[]){16, 2}, (int[]){1, 4}, (int[]){0, 1}, 4),
	              "blocked 2-D: [64, 16] column-major order");
	check_blocked(blk(2, (int[]){4, 4}, (int[]){1, 1}, (int[]){4, 8}, (int[]){2, 2}, (int[]){1, 0}, 4),
	              "blocked 2-D: [4, 4] smaller than the thread tile");
	check_blocked(blk(2, (int[]){128, 128}, (int[]){2, 2}, (int[]){8, 4}, (int[]){2, 4}, (int[]){1, 0}, 8),
	              "blocked 2-D: [128, 128] 2 x 2 a thread, tile repeated in both dims");
	check_blocked(blk(2, (int[]){8, 1}, (int[]){1, 1}, (int[]){1, 32}, (int[]){4, 1}, (int[]){1, 0}, 4),
	              "blocked 2-D: a dim of 1 under 32 lanes");
	check_blocked(blk(2, (int[]){32, 32}, (int[]){1, 8}, (int[]){8, 4}, (int[]){1, 2}, (int[]){0, 1}, 2),
	              "blocked 2-D: order [0, 1] with spt along dim 1");
	/* 3-D */
	check_blocked(blk(3, (int[]){2, 8, 16}, (int[]){1, 1, 4}, (int[]){2, 4, 4}, (int[]){1, 2, 2}, (int[]){2, 1, 0}, 4),
	              "blocked 3-D: [2, 8, 16] order [2, 1, 0]");
	check_blocked(blk(3, (int[]){8, 4, 32}, (int[]){2, 1, 2}, (int[]){1, 4, 8}, (int[]){2, 1, 2}, (int[]){0, 2, 1}, 4),
	              "blocked 3-D: [8, 4, 32] order [0, 2, 1]");
	check_blocked(blk(3, (int[]){4, 64, 2}, (int[]){1, 2, 2}, (int[]){2, 8, 2}, (int[]){8, 1, 1}, (int[]){1, 2, 0}, 8),
	              "blocked 3-D: [4, 64, 2] warps past the block replicate");

	/* random ones */
	int bad = 0;
	for (int i = 0; i < 600; i++) {
		Blk b = random_blk(1 + rnd(3));
		if (!blocked_matches(&b) && bad++ == 0) {
			char s[256];
			blk_str(&b, s, sizeof s);
			printf("  %s: %s\n", s, why);
		}
	}
	check(bad == 0, "blocked: 600 random encodings and shapes, element by element");

	/* an encoding that does not fill a warp, or asks for fewer warps than run, lays out nothing */
	begin("blocked");
	Lin l;
	check(!enc_lin(enc_blocked(F, 1, (int[]){1}, (int[]){16}, (int[]){4}, (int[]){0}), B1(f32, 128), 4, &l),
	      "blocked: 16 threads a warp lays out nothing");
	check(!enc_lin(enc_blocked(F, 1, (int[]){1}, (int[]){32}, (int[]){2}, (int[]){0}), B1(f32, 128), 4, &l),
	      "blocked: 2 warps per CTA where 4 run lays out nothing");
	check(!enc_lin(enc_blocked(F, 2, (int[]){1, 1}, (int[]){1, 32}, (int[]){1, 4}, (int[]){1, 0}), B1(f32, 128), 4, &l),
	      "blocked: rank 2 encoding on a rank 1 block lays out nothing");
	/* more bits than a layout holds: a block of 2^64 elements, which irgen
	 * refuses, but whose count once wrapped to 0 and let it reach here,
	 * where placing its bits in registers looped for ever */
	check(!enc_lin(enc_blocked(F, 4, (int[]){1, 1, 1, 1}, (int[]){1, 1, 1, 32}, (int[]){1, 1, 1, 4}, (int[]){3, 2, 1, 0}),
	               type_block(type_scalar(SK_I32), 4, (int32_t[]){65536, 65536, 65536, 65536}), 4, &l),
	      "blocked: a block of 65536^4 elements lays out nothing (and returns)");
	/* KNOWN BUG: more lanes or warps than exist are cut silently (blocked_lin
	 * stops taking bits at 5 lanes and num_warps warps and returns true), so
	 * the Lin is not the layout the encoding names. */
	known_bug(!enc_lin(enc_blocked(F, 1, (int[]){1}, (int[]){64}, (int[]){4}, (int[]){0}), B1(f32, 256), 4, &l),
	          "blocked: 64 threads a warp lays out nothing");
	known_bug(!enc_lin(enc_blocked(F, 1, (int[]){1}, (int[]){32}, (int[]){8}, (int[]){0}), B1(f32, 256), 4, &l),
	          "blocked: 8 warps per CTA where 4 run lays out nothing");
}

/* enc_default: vec elements a thread along the fastest dimension, then every
 * thread covering the block once where it is large enough. */
static void defaults(void)
{
	int bad = 0;
	for (int i = 0; i < 300; i++) {
		Blk b = random_blk(1 + rnd(3));
		int vec = 1 << rnd(3), order[BLK_MAX_RANK];
		for (int d = 0; d < b.rank; d++)
			order[d] = b.order[d];
		if (vec > b.shape[order[0]])
			vec = b.shape[order[0]];
		begin("default");
		F->num_warps = b.nw;
		Type t = shaped(SK_F32, b.rank, b.shape);
		const Encoding *e = enc_default(F, t, vec, order);
		Lin l;
		bool ok = e && e->kind == ENC_BLOCKED && enc_lin(e, t, b.nw, &l) && lin_covers(&l, 32 * b.nw, (int)type_numel(t));
		for (int j = 0; ok && j < lg(vec); j++)
			ok = l.reg[j] == lin_bit(t, order[0], j);
		if (ok && type_numel(t) >= (int64_t)32 * b.nw * vec) { /* then no thread is idle */
			for (int j = 0; j < 5; j++)
				ok = ok && l.lane[j] >= 0;
			for (int j = 0; j < l.n_warp; j++)
				ok = ok && l.warp[j] >= 0;
		}
		if (!ok && bad++ == 0) {
			char s[256];
			blk_str(&b, s, sizeof s);
			printf("  shape and order of %s, vec %d\n", s, vec);
		}
	}
	check(bad == 0, "enc_default: vec along the fastest dim, no idle thread once the block is large enough");
}

/* ---- slices ---- */

/* slice<dim, b> against Triton's definition: the parent's coordinates over
 * the shape with a dimension of 1 put back at dim, without that coordinate. */
static bool slice_matches(const Blk *parent, int dim)
{
	begin("slice");
	F->num_warps = parent->nw;
	Blk p = *parent;
	int shape[BLK_MAX_RANK], rank = p.rank - 1;
	for (int d = 0, j = 0; d < p.rank; d++)
		if (d != dim)
			shape[j++] = p.shape[d];
	p.shape[dim] = 1;
	const Encoding *pe = enc_blocked(F, p.rank, p.spt, p.tpw, p.wpc, p.order);
	const Encoding *se = enc_slice(F, dim, pe);
	Type t = shaped(SK_F32, rank, shape), full = shaped(SK_F32, parent->rank, parent->shape);
	Lin l, lf, ls;
	if (!enc_lin(se, t, p.nw, &l)) {
		snprintf(why, sizeof why, "enc_lin refused the slice");
		return false;
	}
	if (l.n_reg != lg(blk_regs(&p))) {
		snprintf(why, sizeof why, "%d register bits, want %d", l.n_reg, lg(blk_regs(&p)));
		return false;
	}
	for (int th = 0; th < 32 * p.nw; th++)
		for (int r = 0; r < 1 << l.n_reg; r++) {
			int c[BLK_MAX_RANK], sc[BLK_MAX_RANK];
			blk_coord(&p, th, r, c);
			for (int d = 0, j = 0; d < p.rank; d++)
				if (d != dim)
					sc[j++] = c[d];
			int want = row_major(rank, shape, sc), got = lin_apply(&l, th, r);
			if (want != got) {
				snprintf(why, sizeof why, "thread %d register %d: index %d, want %d", th, r, got, want);
				return false;
			}
		}
	if (!lin_covers(&l, 32 * p.nw, (int)type_numel(t)))
		return false;
	/* lin_slice of the parent over the whole block gives the same map */
	if (!enc_lin(pe, full, p.nw, &lf)) {
		snprintf(why, sizeof why, "enc_lin refused the parent");
		return false;
	}
	lin_slice(&lf, full, dim, &ls);
	if (!lin_eq(&ls, &l)) {
		char a[256], b[256];
		lin_str(&ls, a, sizeof a);
		lin_str(&l, b, sizeof b);
		snprintf(why, sizeof why, "lin_slice gives %s, enc_lin of the slice %s", a, b);
		return false;
	}
	return true;
}

/* What a reduction along axis leaves, checked on any bit map: each thread
 * holds exactly the projections of the elements it held, each once. */
static bool lin_slice_projects(const Lin *in, Type t, int axis, int threads)
{
	Lin out;
	lin_slice(in, t, axis, &out);
	int shape[BLK_MAX_RANK], rank = t.rank - 1;
	for (int d = 0, j = 0; d < t.rank; d++)
		if (d != axis)
			shape[j++] = t.shape[d];
	int numel_out = 1;
	for (int d = 0; d < rank; d++)
		numel_out *= shape[d];
	static unsigned char want[1 << 16], got[1 << 16];
	for (int th = 0; th < threads; th++) {
		memset(want, 0, (size_t)numel_out);
		memset(got, 0, (size_t)numel_out);
		for (int r = 0; r < 1 << in->n_reg; r++) {
			int idx = lin_apply(in, th, r), c[BLK_MAX_RANK], sc[BLK_MAX_RANK];
			for (int d = t.rank - 1; d >= 0; d--) {
				c[d] = idx % t.shape[d];
				idx /= t.shape[d];
			}
			for (int d = 0, j = 0; d < t.rank; d++)
				if (d != axis)
					sc[j++] = c[d];
			want[row_major(rank, shape, sc)] = 1;
		}
		for (int r = 0; r < 1 << out.n_reg; r++) {
			int e = lin_apply(&out, th, r);
			if (got[e]++) {
				snprintf(why, sizeof why, "thread %d holds reduced element %d twice", th, e);
				return false;
			}
		}
		for (int e = 0; e < numel_out; e++)
			if (want[e] != got[e]) {
				snprintf(why, sizeof why, "thread %d: reduced element %d %s", th, e,
				         want[e] ? "missing" : "not one of its own");
				return false;
			}
	}
	return true;
}

static void slices(void)
{
	Blk b = blk(2, (int[]){16, 64}, (int[]){1, 4}, (int[]){2, 16}, (int[]){4, 1}, (int[]){1, 0}, 4);
	check(slice_matches(&b, 1), "slice: dim 1 of a [16, 64] blocked (rows left, lanes along dim 1 replicate)");
	check(slice_matches(&b, 0), "slice: dim 0 of a [16, 64] blocked (warps along dim 0 replicate)");
	b = blk(3, (int[]){2, 8, 16}, (int[]){1, 1, 4}, (int[]){2, 4, 4}, (int[]){1, 2, 2}, (int[]){2, 1, 0}, 4);
	check(slice_matches(&b, 1), "slice: the middle dim of a 3-D blocked");
	int bad = 0;
	for (int i = 0; i < 400; i++) {
		Blk r = random_blk(2 + rnd(2));
		int dim = rnd(r.rank);
		if (!slice_matches(&r, dim) && bad++ == 0) {
			char s[256];
			blk_str(&r, s, sizeof s);
			printf("  slice %d of %s: %s\n", dim, s, why);
		}
	}
	check(bad == 0, "slice: 400 random blocked parents against the parent's coordinates, lin_slice agrees");

	/* lin_slice on maps that are not blocked: an mma accumulator reduced
	 * along either axis, a dot operand, a blocked map with registers first */
	begin("lin_slice");
	Lin l;
	int bad2 = 0;
	for (int wm = 1; wm <= 4; wm *= 2)
		for (int wn = 1; wn <= 4; wn *= 2)
			for (int axis = 0; axis < 2; axis++) {
				const Encoding *m = enc_mma(F, wm, wn);
				Type t = B2(f32, 64, 32);
				int nw = wm * wn;
				if (!enc_lin(m, t, nw, &l) || !lin_slice_projects(&l, t, axis, 32 * nw)) {
					if (bad2++ == 0)
						printf("  mma [%d, %d] axis %d: %s\n", wm, wn, axis, why);
				}
				const Encoding *a = enc_dot_operand(F, 0, m, 2);
				if (!enc_lin(a, B2(f16, 64, 32), nw, &l) || !lin_slice_projects(&l, B2(f16, 64, 32), axis, 32 * nw)) {
					if (bad2++ == 0)
						printf("  dot_operand 0 of mma [%d, %d] axis %d: %s\n", wm, wn, axis, why);
				}
			}
	check(bad2 == 0, "lin_slice: mma accumulators and dot operands reduced along each axis keep each thread's projections");
	int bad3 = 0;
	for (int i = 0; i < 300; i++) {
		Blk r = random_blk(2 + rnd(2));
		begin("lin_slice");
		F->num_warps = r.nw;
		Type t = shaped(SK_F32, r.rank, r.shape);
		int axis = rnd(r.rank);
		if (!enc_lin(enc_blocked(F, r.rank, r.spt, r.tpw, r.wpc, r.order), t, r.nw, &l) ||
		    !lin_slice_projects(&l, t, axis, 32 * r.nw))
			if (bad3++ == 0)
				printf("  %s\n", why);
	}
	check(bad3 == 0, "lin_slice: 300 random blocked maps keep each thread's projections");

	/* the attention kernel's row maximum: an mma [128, 64] of 2 x 2 warps
	 * reduced along dim 1 (rows 0..2 in lanes 2..4, row 3 in a register,
	 * row 4 in warp bit 0, rows 5 and 6 in registers) */
	begin("lin_slice");
	Lin acc, rows;
	enc_lin(enc_mma(F, 2, 2), B2(f32, 128, 64), 4, &acc);
	lin_slice(&acc, B2(f32, 128, 64), 1, &rows);
	Lin want = {.n_reg = 3, .n_lane = 5, .n_warp = 2, .reg = {3, 5, 6}, .lane = {-1, -1, 0, 1, 2}, .warp = {4, -1}};
	char s[256];
	lin_str(&rows, s, sizeof s);
	check_text(s, "reg [3 5 6] lane [-1 -1 0 1 2] warp [4 -1]", "lin_slice: rows of an mma [128, 64] accumulator");
	check(lin_eq(&rows, &want), "lin_slice: rows of an mma accumulator, as a Lin");
}

/* ---- mma and dot operands, from the PTX ISA ---- */

/* mma.m16n8k16, f16 inputs, f32 accumulators (PTX ISA, "Matrix fragments
 * for mma.m16n8k16"), groupID = lane / 4, threadID_in_group = lane % 4:
 *   C: c0,c1 row groupID,     col 2 * tig + {0, 1};  c2,c3 row groupID + 8
 *   A: a0,a1 row groupID,     k 2 * tig + {0, 1};    a2,a3 row + 8;
 *      a4,a5 k + 8;           a6,a7 row + 8, k + 8
 *   B: b0,b1 k 2 * tig + {0, 1}, col groupID;        b2,b3 k + 8
 * Warps: warp % wm tiles M, (warp / wm) % wn tiles N, the rest replicate.
 * Tiles repeat over the block; a thread's registers are its fragments tile
 * after tile (4 or 8 consecutive registers a tile), N tiles fastest for C,
 * K tiles fastest for A and B. */
typedef struct Mma {
	int M, N, K, wm, wn, nw, kw; /* kw: k_width, elements of A or B a 32-bit register (1, 2 or 4) */
} Mma;

static int reps(int tiles, int warps) { return tiles > warps ? tiles / warps : 1; }

static int mma_regs(const Mma *m, int idx)
{
	int tm = m->M / 16, tn = m->N / 8, tk = m->K / (8 * m->kw);
	return idx < 0 ? 4 * reps(tm, m->wm) * reps(tn, m->wn)
	               : idx == 0 ? 4 * m->kw * reps(tm, m->wm) * tk : 2 * m->kw * tk * reps(tn, m->wn);
}

/* The (row, col) of thread t's register r: C (idx -1) is M x N, A (0) M x K, B (1) K x N. */
static void mma_coord(const Mma *m, int idx, int t, int r, int *row, int *col)
{
	int lane = t % 32, warp = t / 32, g = lane / 4, q = lane % 4;
	int tm = m->M / 16, tn = m->N / 8, kw = m->kw, tk = m->K / (8 * kw);
	int warp_m = warp % m->wm, warp_n = (warp / m->wm) % m->wn;
	if (idx < 0) {
		int c = r % 4, rep = r / 4, rn = rep % reps(tn, m->wn), rm = rep / reps(tn, m->wn);
		int mi = (warp_m + m->wm * rm) % tm, ni = (warp_n + m->wn * rn) % tn;
		*row = 16 * mi + g + 8 * (c >> 1);
		*col = 8 * ni + 2 * q + (c & 1);
	} else if (idx == 0) { /* element i of a0..a(4 kw - 1): word i / kw */
		int a = r % (4 * kw), rep = r / (4 * kw), rk = rep % tk, rm = rep / tk, word = a / kw;
		int mi = (warp_m + m->wm * rm) % tm;
		*row = 16 * mi + g + 8 * (word & 1);
		*col = 8 * kw * rk + kw * q + a % kw + 4 * kw * (word >> 1);
	} else {
		int b = r % (2 * kw), rep = r / (2 * kw), rk = rep % tk, rn = rep / tk;
		int ni = (warp_n + m->wn * rn) % tn;
		*row = 8 * kw * rk + kw * q + b % kw + 4 * kw * (b / kw);
		*col = 8 * ni + g;
	}
}

static bool mma_matches(const Mma *m, int idx)
{
	begin("mma");
	F->num_warps = m->nw;
	const Encoding *c = enc_mma(F, m->wm, m->wn);
	const Encoding *e = idx < 0 ? c : enc_dot_operand(F, idx, c, m->kw);
	int rows = idx == 1 ? m->K : m->M, cols = idx == 0 ? m->K : m->N;
	Type t = B2(idx < 0 ? f32 : f16, rows, cols);
	Lin l;
	if (!enc_lin(e, t, m->nw, &l)) {
		snprintf(why, sizeof why, "enc_lin refused it");
		return false;
	}
	int regs = mma_regs(m, idx);
	if (l.n_reg != lg(regs) || l.n_warp != lg(m->nw)) {
		snprintf(why, sizeof why, "%d register bits, %d warp bits; want %d and %d", l.n_reg, l.n_warp, lg(regs),
		         lg(m->nw));
		return false;
	}
	for (int th = 0; th < 32 * m->nw; th++)
		for (int r = 0; r < regs; r++) {
			int row, col;
			mma_coord(m, idx, th, r, &row, &col);
			int want = row * cols + col, got = lin_apply(&l, th, r);
			if (want != got) {
				char ls[256];
				lin_str(&l, ls, sizeof ls);
				snprintf(why, sizeof why, "thread %d register %d: (%d, %d), want (%d, %d) (%s)", th, r, got / cols,
				         got % cols, row, col, ls);
				return false;
			}
		}
	return lin_covers(&l, 32 * m->nw, rows * cols);
}

/* For every accumulator tile a thread holds, and every K tile, the same
 * thread holds the A and B fragments that mma.sync reads for it, each in
 * four (B: two) consecutive pairs of registers in fragment order. */
static bool mma_feeds(const Mma *m)
{
	begin("mma");
	F->num_warps = m->nw;
	const Encoding *c = enc_mma(F, m->wm, m->wn);
	Lin lc, la, lb;
	if (!enc_lin(c, B2(f32, m->M, m->N), m->nw, &lc) ||
	    !enc_lin(enc_dot_operand(F, 0, c, m->kw), B2(f16, m->M, m->K), m->nw, &la) ||
	    !enc_lin(enc_dot_operand(F, 1, c, m->kw), B2(f16, m->K, m->N), m->nw, &lb)) {
		snprintf(why, sizeof why, "enc_lin refused one");
		return false;
	}
	static int areg[1 << 16], breg[1 << 16];
	for (int th = 0; th < 32 * m->nw; th++) {
		int lane = th % 32, g = lane / 4, q = lane % 4;
		for (int i = 0; i < m->M * m->K; i++)
			areg[i] = -1;
		for (int i = 0; i < m->K * m->N; i++)
			breg[i] = -1;
		for (int r = 0; r < 1 << la.n_reg; r++)
			areg[lin_apply(&la, th, r)] = r;
		for (int r = 0; r < 1 << lb.n_reg; r++)
			breg[lin_apply(&lb, th, r)] = r;
		for (int r = 0; r < 1 << lc.n_reg; r += 4) {
			int e = lin_apply(&lc, th, r), row0 = e / m->N - g, col0 = e % m->N - 2 * q; /* the tile's corner */
			/* the PTX ISA's a_i (i < 4 kw): row g, + 8 in odd registers; k kw q + i % kw, + 4 kw from
			 * a_(2 kw) on. b_i (i < 2 kw): k kw q + i % kw, + 4 kw from b_kw on; column g */
			int kw = m->kw;
			for (int k0 = 0; k0 < m->K; k0 += 8 * kw) {
				int a0 = areg[(row0 + g) * m->K + k0 + kw * q], b0 = breg[(k0 + kw * q) * m->N + col0 + g];
				for (int i = 0; i < 4 * kw; i++) {
					int ar = row0 + g + ((i / kw) % 2 ? 8 : 0), ak = k0 + kw * q + i % kw + (i >= 2 * kw ? 4 * kw : 0);
					if (a0 < 0 || areg[ar * m->K + ak] != a0 + i) {
						snprintf(why, sizeof why, "thread %d, C tile at (%d, %d), k %d: a%d = A[%d][%d] not in register %d",
						         th, row0, col0, k0, i, ar, ak, a0 + i);
						return false;
					}
				}
				for (int i = 0; i < 2 * kw; i++) {
					int bk = k0 + kw * q + i % kw + (i >= kw ? 4 * kw : 0), bc = col0 + g;
					if (b0 < 0 || breg[bk * m->N + bc] != b0 + i) {
						snprintf(why, sizeof why, "thread %d, C tile at (%d, %d), k %d: b%d = B[%d][%d] not in register %d",
						         th, row0, col0, k0, i, bk, bc, b0 + i);
						return false;
					}
				}
			}
			/* c0..c3 of this tile in registers r..r+3 */
			for (int i = 0; i < 4; i++) {
				int ce = lin_apply(&lc, th, r + i);
				if (ce != (row0 + g + 8 * (i >> 1)) * m->N + col0 + 2 * q + (i & 1)) {
					snprintf(why, sizeof why, "thread %d: c%d of the tile at (%d, %d) is not register %d", th, i, row0,
					         col0, r + i);
					return false;
				}
			}
		}
	}
	return true;
}

/* Padded tiles (M under 16, N under 8), and the others: the dot as the
 * lowering issues it (dot_mma.c: each tile and K step through
 * mma_frag_regs, zeros where it says -1, the results of -1 dropped), each
 * mma.sync emulated from the PTX ISA's fragment tables over the 32 lanes of
 * a warp (the padded 16 x 8 x 8 kw product, integers), must leave in every
 * thread's registers the elements of A B + C its map says it holds. The
 * inputs are 1 to 7, so a product left out or counted twice shows. */
static bool mma_emulated(const Mma *m)
{
	begin("mma");
	F->num_warps = m->nw;
	const Encoding *c = enc_mma(F, m->wm, m->wn);
	Type ct = B2(f32, m->M, m->N);
	Lin lc, la, lb;
	if (!enc_lin(c, ct, m->nw, &lc) || !enc_lin(enc_dot_operand(F, 0, c, m->kw), B2(f16, m->M, m->K), m->nw, &la) ||
	    !enc_lin(enc_dot_operand(F, 1, c, m->kw), B2(f16, m->K, m->N), m->nw, &lb)) {
		snprintf(why, sizeof why, "enc_lin refused one");
		return false;
	}
	static long long A[1 << 12], Bm[1 << 12], C[1 << 12], want[1 << 12];
	static long long creg[8][32][256];
	int kw = m->kw, nc = 1 << lc.n_reg;
	if (m->M * m->K > 1 << 12 || m->K * m->N > 1 << 12 || nc > 256 || m->nw > 8)
		return false;
	unsigned seed = (unsigned)(m->M * 131 + m->N * 17 + m->K + kw);
	for (int i = 0; i < m->M * m->K; i++)
		A[i] = 1 + (seed = seed * 1103515245u + 12345u) % 7;
	for (int i = 0; i < m->K * m->N; i++)
		Bm[i] = 1 + (seed = seed * 1103515245u + 12345u) % 7;
	for (int i = 0; i < m->M * m->N; i++) {
		C[i] = 1 + (seed = seed * 1103515245u + 12345u) % 7;
		want[i] = C[i];
		for (int k = 0; k < m->K; k++)
			want[i] += A[(i / m->N) * m->K + k] * Bm[k * m->N + i % m->N];
	}
	for (int w = 0; w < m->nw; w++)
		for (int ln = 0; ln < 32; ln++)
			for (int r = 0; r < nc; r++)
				creg[w][ln][r] = C[lin_apply(&lc, 32 * w + ln, r)];
	int ks = 8 * kw;
	for (int w = 0; w < m->nw; w++)
		for (int kk = 0; kk < m->K / ks; kk++)
			for (int g = 0; g < nc; g++) {
				int cr[4], ar[4], br[2];
				if (!mma_frag_regs(&lc, &la, &lb, ct, m->K, kw, g, kk, cr, ar, br))
					continue;
				long long pa[16][32] = {{0}}, pb[32][8] = {{0}}, pc[16][8] = {{0}};
				for (int ln = 0; ln < 32; ln++) {
					int th = 32 * w + ln, gq = ln / 4, q = ln % 4;
					for (int i = 0; i < 4; i++) /* a_i: row + 8 (i & 1), k + 4 kw (i >> 1) */
						for (int h = 0; h < kw; h++)
							pa[gq + 8 * (i & 1)][kw * q + h + 4 * kw * (i >> 1)] =
								ar[i] < 0 ? 0 : A[lin_apply(&la, th, ar[i] + h)];
					for (int i = 0; i < 2; i++) /* b_i: k + 4 kw i, column g */
						for (int h = 0; h < kw; h++)
							pb[kw * q + h + 4 * kw * i][gq] = Bm[lin_apply(&lb, th, br[i] + h)];
					for (int i = 0; i < 4; i++) /* c_i: column 2q + (i & 1), row + 8 (i >> 1) */
						pc[gq + 8 * (i >> 1)][2 * q + (i & 1)] = cr[i] < 0 ? 0 : creg[w][ln][cr[i]];
				}
				for (int ln = 0; ln < 32; ln++) {
					int gq = ln / 4, q = ln % 4;
					for (int i = 0; i < 4; i++) {
						if (cr[i] < 0)
							continue;
						int row = gq + 8 * (i >> 1), col = 2 * q + (i & 1);
						long long d = pc[row][col];
						for (int k = 0; k < ks; k++)
							d += pa[row][k] * pb[k][col];
						creg[w][ln][cr[i]] = d;
					}
				}
			}
	for (int w = 0; w < m->nw; w++)
		for (int ln = 0; ln < 32; ln++)
			for (int r = 0; r < nc; r++) {
				int e = lin_apply(&lc, 32 * w + ln, r);
				if (creg[w][ln][r] != want[e]) {
					snprintf(why, sizeof why, "warp %d lane %d register %d: C[%d][%d] = %lld, want %lld", w, ln, r,
					         e / m->N, e % m->N, creg[w][ln][r], want[e]);
					return false;
				}
			}
	return true;
}

static void mma_padded(void)
{
	static const int sizes[] = {1, 2, 4, 8, 16, 32};
	static const int w[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1}, {1, 4}, {4, 2}, {2, 4}};
	int bad = 0, n = 0;
	for (int kwi = 1; kwi <= 4; kwi *= 2)
		for (int mi = 0; mi < 6; mi++)
			for (int ni = 0; ni < 6; ni++)
				for (int ki = 1; ki <= 2; ki++)
					for (size_t j = 0; j < sizeof w / sizeof w[0]; j++) {
						Mma m = {sizes[mi], sizes[ni], 8 * kwi * ki, w[j][0], w[j][1], w[j][0] * w[j][1], kwi};
						n++;
						if (!mma_emulated(&m) && bad++ == 0)
							printf("  emulated mma.sync, M %d N %d K %d, k_width %d, warps [%d, %d]: %s\n", m.M, m.N,
							       m.K, m.kw, m.wm, m.wn, why);
					}
	char what[200];
	snprintf(what, sizeof what,
	         "mma: %d dots (M and N 1 to 32, padded under 16 x 8; k_width 1, 2, 4) emulated lane by lane give A B + C",
	         n);
	check(bad == 0, what);
}

static void mma(void)
{
	static const int mn[][2] = {{16, 8}, {16, 16}, {32, 32}, {64, 16}, {16, 64}, {128, 64}, {64, 128}};
	static const int w[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1}, {1, 4}, {4, 2}, {2, 4}};
	static const int ks[] = {8, 16, 32, 64};
	static const int kws[] = {2, 1, 4};
	int bad[4] = {0};
	const char *names[4] = {"accumulator", "operand A", "operand B", "fragments feed"};
	for (size_t i = 0; i < sizeof mn / sizeof mn[0]; i++)
		for (size_t j = 0; j < sizeof w / sizeof w[0]; j++)
			for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
				for (int extra = 1; extra <= 2; extra++)
					for (size_t kwi = 0; kwi < sizeof kws / sizeof kws[0]; kwi++) {
						Mma m = {mn[i][0], mn[i][1], ks[k], w[j][0], w[j][1], w[j][0] * w[j][1] * extra, kws[kwi]};
						if (m.nw > 32 || m.K < 8 * m.kw)
							continue;
						for (int idx = -1; idx <= 2; idx++) {
							bool ok = idx == 2 ? mma_feeds(&m) : mma_matches(&m, idx);
							if (!ok && bad[idx + 1]++ == 0)
								printf("  %s, M %d N %d K %d, k_width %d, warps [%d, %d] of %d: %s\n", names[idx + 1], m.M,
								       m.N, m.K, m.kw, m.wm, m.wn, m.nw, why);
						}
					}
	check(bad[0] == 0, "mma: accumulators of m16n8k16 (c0..c3) over 7 shapes and 8 warp splits, per the PTX ISA");
	check(bad[1] == 0, "mma: dot_operand idx 0 (a0..a(4 kw - 1)), k_width 1 (tf32), 2 (f16), 4 (i8, fp8), per the PTX ISA");
	check(bad[2] == 0, "mma: dot_operand idx 1 (b0..b(2 kw - 1)), k_width 1, 2, 4, per the PTX ISA");
	check(bad[3] == 0, "mma: the A and B fragments of each (m, n, k) tile sit in the thread of the C tile they feed");

	/* a few exact maps, as the lowering reads them */
	begin("mma");
	Lin l;
	char s[256];
	enc_lin(enc_mma(F, 1, 1), B2(f32, 16, 8), 1, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [0 6] lane [1 2 3 4 5] warp []", "mma: one 16 x 8 tile on one warp");
	enc_lin(enc_dot_operand(F, 0, enc_mma(F, 1, 1), 2), B2(f16, 16, 16), 1, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [0 7 3] lane [1 2 4 5 6] warp []", "mma: A of one 16 x 16 tile (k0, row 3, k3 in registers)");
	enc_lin(enc_dot_operand(F, 1, enc_mma(F, 1, 1), 2), B2(f16, 16, 8), 1, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [3 6] lane [4 5 0 1 2] warp []", "mma: B of one 16 x 8 tile (k0, k3 in registers)");
	enc_lin(enc_dot_operand(F, 0, enc_mma(F, 1, 1), 1), B2(f32, 16, 8), 1, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [6 2] lane [0 1 3 4 5] warp []", "mma: A of one m16n8k8 tf32 tile (k_width 1: row 3, k2 in registers)");
	enc_lin(enc_dot_operand(F, 1, enc_mma(F, 1, 1), 1), B2(f32, 8, 8), 1, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [5] lane [3 4 0 1 2] warp []", "mma: B of one m16n8k8 tf32 tile (k_width 1: k2 in a register)");
	enc_lin(enc_dot_operand(F, 0, enc_mma(F, 1, 1), 4), B2(i8, 16, 32), 1, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [0 1 8 4] lane [2 3 5 6 7] warp []", "mma: A of one m16n8k32 i8 tile (k_width 4: k0, k1, row 3, k4)");
	enc_lin(enc_dot_operand(F, 1, enc_mma(F, 1, 1), 4), B2(i8, 32, 8), 1, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [3 4 7] lane [5 6 0 1 2] warp []", "mma: B of one m16n8k32 i8 tile (k_width 4: k0, k1, k4)");
	check(!enc_lin(enc_dot_operand(F, 0, enc_mma(F, 1, 1), 4), B2(i8, 16, 16), 1, &l),
	      "mma: operand A of k_width 4 needs 32 columns of K");
	check(!enc_lin(enc_dot_operand(F, 0, enc_mma(F, 1, 1), 3), B2(i8, 16, 32), 1, &l), "mma: k_width 3 lays out nothing");
	enc_lin(enc_mma(F, 2, 2), B2(f32, 64, 32), 4, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [0 8 4 10] lane [1 2 5 6 7] warp [9 3]",
	           "mma: [64, 32] on 2 x 2 warps (warp bit 0 takes row 16, bit 1 col 8)");

	/* what an mma cannot lay out */
	enc_lin(enc_mma(F, 1, 1), B2(f32, 8, 8), 1, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [0] lane [1 2 3 4 5] warp []", "mma: an 8 x 8 block, padded (no register for row 3)");
	enc_lin(enc_mma(F, 1, 1), B2(f32, 16, 4), 1, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [0 5] lane [1 -1 2 3 4] warp []", "mma: a 16 x 4 block, padded (lane bit 1 a replica)");
	enc_lin(enc_dot_operand(F, 0, enc_mma(F, 1, 1), 2), B2(f16, 2, 16), 1, &l);
	lin_str(&l, s, sizeof s);
	check_text(s, "reg [0 3] lane [1 2 4 -1 -1] warp []", "mma: A of 2 rows, padded (rows 2-7 replicas, no row 3)");
	check(!enc_lin(enc_dot_operand(F, 0, enc_mma(F, 1, 1), 2), B2(f16, 16, 8), 1, &l),
	      "mma: operand A needs 16 columns of K");
	check(!enc_lin(enc_dot_operand(F, 1, enc_mma(F, 1, 1), 2), B2(f16, 8, 8), 1, &l),
	      "mma: operand B needs 16 rows of K");
	check(!enc_lin(enc_mma(F, 2, 4), B2(f32, 64, 64), 4, &l), "mma: 8 warps' split on 4 warps");
	check(!enc_lin(enc_mma(F, 1, 1), B1(f32, 128), 4, &l), "mma: a 1-D block");
	check(!enc_lin(enc_dot_operand(F, 0, enc_blocked(F, 2, (int[]){1, 1}, (int[]){4, 8}, (int[]){4, 1}, (int[]){1, 0}), 2),
	               B2(f16, 16, 16), 4, &l),
	      "dot_operand: of a blocked parent lays out nothing");
}

/* ---- equivalence, canonical names, interning, printing ---- */

static const char *printed(const Encoding *e)
{
	StrBuf sb = {0};
	enc_print(e, &sb);
	return take_text(&sb);
}

static const char *ref(const Encoding *e)
{
	StrBuf sb = {0};
	enc_ref(e, &sb);
	return take_text(&sb);
}

static void equivalence(void)
{
	begin("equiv");
	Lin l;
	Type t = B2(f32, 16, 64);
	const Encoding *b = enc_blocked(F, 2, (int[]){1, 4}, (int[]){2, 16}, (int[]){4, 1}, (int[]){1, 0});
	enc_lin(b, t, 4, &l);
	const Encoding *lin = enc_linear(F, &l);
	check(lin && lin != b && enc_equiv(b, lin, t, 4) && enc_equiv(lin, b, t, 4),
	      "enc_equiv: a blocked encoding and its own bit map are equivalent");
	check(enc_canonical(F, lin, t) == b, "enc_canonical: a linear map names the equal blocked encoding");
	check(enc_canonical(F, b, t) == b, "enc_canonical: a named encoding stays itself");
	check(enc_canonical(F, NULL, t) == NULL, "enc_canonical: NULL stays NULL");

	/* the same spt/tpw/wpc in another order: registers in another order */
	const Encoding *b2 = enc_blocked(F, 2, (int[]){2, 2}, (int[]){4, 8}, (int[]){2, 2}, (int[]){1, 0});
	const Encoding *b3 = enc_blocked(F, 2, (int[]){2, 2}, (int[]){4, 8}, (int[]){2, 2}, (int[]){0, 1});
	check(!enc_equiv(b2, b3, B2(f32, 32, 32), 4), "enc_equiv: blocked maps that differ in order are not equivalent");
	Lin l2, l3;
	enc_lin(b2, B2(f32, 2, 2), 4, &l2);
	enc_lin(b3, B2(f32, 2, 2), 4, &l3);
	check(!enc_equiv(b2, b3, B2(f32, 2, 2), 4) && l2.reg[0] != l3.reg[0],
	      "enc_equiv: the same elements in another register order are not equivalent");
	/* order does not matter where only one dimension has threads */
	const Encoding *c1 = enc_blocked(F, 2, (int[]){1, 1}, (int[]){1, 32}, (int[]){1, 4}, (int[]){1, 0});
	const Encoding *c2 = enc_blocked(F, 2, (int[]){1, 1}, (int[]){1, 32}, (int[]){1, 4}, (int[]){0, 1});
	check(c1 != c2 && enc_equiv(c1, c2, B2(f32, 1, 128), 4), "enc_equiv: order is moot on a [1, 128] block");
	check(enc_equiv(c1, c2, B2(f32, 2, 128), 4), "enc_equiv: ... and on [2, 128], where one register bit is left");
	check(!enc_equiv(c1, c2, B2(f32, 2, 256), 4), "enc_equiv: ... but not on [2, 256], where two registers bits differ in order");
	/* a slice is a blocked encoding of one rank less where its bits agree */
	const Encoding *s = enc_slice(F, 0, c1);
	const Encoding *one = enc_blocked(F, 1, (int[]){1}, (int[]){32}, (int[]){4}, (int[]){0});
	check(enc_equiv(s, one, B1(f32, 128), 4), "enc_equiv: slice<0> of [1, 32] threads is the 1-D blocked one");
	check(!enc_equiv(b, NULL, t, 4) && !enc_equiv(NULL, b, t, 4), "enc_equiv: an encoding and none differ");
	check(enc_equiv(b, b, t, 4), "enc_equiv: an encoding is its own equal");
	check(!enc_equiv(enc_mma(F, 2, 2), b, t, 4), "enc_equiv: mma and blocked differ");
	check(!enc_equiv(enc_mma(F, 2, 2), enc_mma(F, 4, 1), B2(f32, 64, 64), 4), "enc_equiv: mma warp splits differ");
	/* mma with one warp on 16 x 8 is some blocked layout: canonical finds it */
	const Encoding *mm = enc_mma(F, 1, 1);
	enc_lin(mm, B2(f32, 16, 8), 1, &l);
	F->num_warps = 1;
	check(enc_canonical(F, enc_linear(F, &l), B2(f32, 16, 8)) == mm,
	      "enc_canonical: a linear map equal to an mma accumulator is named mma");
	/* a map nothing named equals stays linear */
	Lin odd = l;
	int8_t x = odd.lane[0];
	odd.lane[0] = odd.lane[1];
	odd.lane[1] = x;
	const Encoding *oe = enc_linear(F, &odd);
	check(oe->kind == ENC_LINEAR && enc_canonical(F, oe, B2(f32, 16, 8)) == oe,
	      "enc_canonical: a map no named encoding equals stays linear");
	/* a linear map lays out blocks of its own number of elements */
	Lin l4;
	memset(&l4, -1, sizeof l4);
	l4.n_reg = 2, l4.n_lane = 5, l4.n_warp = 0;
	l4.reg[0] = 0, l4.reg[1] = 1;
	check(enc_lin(enc_linear(F, &l4), B1(f32, 4), 1, &l) && enc_lin(enc_linear(F, &l4), B2(f32, 2, 2), 1, &l),
	      "enc_lin: a linear map of 2 bits lays out [4] and [2, 2]");
	check(!enc_lin(enc_linear(F, &l4), B1(f32, 8), 1, &l), "enc_lin: ... but not [8]");
	check(!enc_lin(enc_linear(F, &l4), B1(f32, 4), 2, &l), "enc_lin: ... nor on another number of warps");
	/* KNOWN BUG: enc_lin counts a linear map's bits but does not check that
	 * they are distinct and inside the block, so the verifier accepts maps
	 * whose registers repeat an element (reg [0, 0]) or point past the
	 * block (reg [0, 5] on 4 elements). */
	l4.reg[1] = 0;
	known_bug(!enc_lin(enc_linear(F, &l4), B1(f32, 4), 1, &l), "enc_lin: a linear map that sets bit 0 twice lays out nothing");
	l4.reg[1] = 5;
	known_bug(!enc_lin(enc_linear(F, &l4), B1(f32, 4), 1, &l), "enc_lin: a linear map with bit 5 lays out nothing of 4 elements");
	/* shared encodings are never a name for a distributed map */
	Encoding sh;
	memset(&sh, 0, sizeof sh);
	sh.kind = ENC_SHARED;
	sh.vec = 1;
	sh.n_index_bits = 7;
	check(enc_intern(F, &sh)->kind == ENC_SHARED && enc_canonical(F, oe, B2(f32, 16, 8)) == oe,
	      "enc_canonical: shared encodings are never chosen");
}

static void interning(void)
{
	begin("intern");
	const Encoding *a = enc_blocked(F, 2, (int[]){1, 4}, (int[]){2, 16}, (int[]){4, 1}, (int[]){1, 0});
	const Encoding *b = enc_blocked(F, 2, (int[]){1, 4}, (int[]){2, 16}, (int[]){4, 1}, (int[]){1, 0});
	const Encoding *c = enc_blocked(F, 2, (int[]){1, 4}, (int[]){2, 16}, (int[]){4, 1}, (int[]){0, 1});
	check(a == b && a != c, "enc_intern: equal blocked encodings are one pointer, others not");
	check(enc_slice(F, 1, a) == enc_slice(F, 1, b) && enc_slice(F, 1, a) != enc_slice(F, 0, a) &&
	          enc_slice(F, 1, a) != enc_slice(F, 1, c),
	      "enc_intern: slices by dim and parent");
	check(enc_mma(F, 2, 2) == enc_mma(F, 2, 2) && enc_mma(F, 2, 2) != enc_mma(F, 4, 1), "enc_intern: mma by warp split");
	const Encoding *m = enc_mma(F, 2, 2);
	check(enc_dot_operand(F, 0, m, 2) == enc_dot_operand(F, 0, m, 2) &&
	          enc_dot_operand(F, 0, m, 2) != enc_dot_operand(F, 1, m, 2) &&
	          enc_dot_operand(F, 0, m, 2) != enc_dot_operand(F, 0, m, 4),
	      "enc_intern: dot operands by index, parent and k_width");
	int n = F->n_encs;
	bool dense = true;
	for (int i = 0; i < n; i++)
		dense = dense && F->encs[i]->id == i;
	check(dense && n == 10, "enc_intern: encodings numbered densely in order of first use");
	/* linear maps: slots past n_reg and n_warp do not count */
	Lin l1, l2;
	memset(&l1, -1, sizeof l1);
	l1.n_reg = 1, l1.n_lane = 5, l1.n_warp = 2;
	l1.reg[0] = 7;
	for (int i = 0; i < 5; i++)
		l1.lane[i] = (int8_t)i;
	l1.warp[0] = 5, l1.warp[1] = 6;
	l2 = l1;
	l2.reg[1] = 3; /* past n_reg */
	l2.warp[2] = 9; /* past n_warp */
	check(enc_linear(F, &l1) == enc_linear(F, &l2), "enc_intern: linear maps ignore slots past their counts");
	l2.reg[0] = 6;
	check(enc_linear(F, &l1) != enc_linear(F, &l2), "enc_intern: linear maps that differ are two");
	/* KNOWN BUG: enc_intern compares whole structs with memcmp, padding
	 * included: Lin has a byte of padding after warp[], which enc_linear
	 * copies from its caller, so a Lin that was not memset (here built field
	 * by field over zeros instead of over -1) interns as a second encoding. */
	Lin l3;
	memset(&l3, 0, sizeof l3);
	l3.n_reg = 1, l3.n_lane = 5, l3.n_warp = 2;
	l3.reg[0] = 7;
	for (int i = 0; i < 5; i++)
		l3.lane[i] = (int8_t)i;
	l3.warp[0] = 5, l3.warp[1] = 6;
	for (int i = 1; i < LIN_MAX_BITS; i++)
		l3.reg[i] = -1;
	for (int i = 2; i < LIN_MAX_WARP_BITS; i++)
		l3.warp[i] = -1;
	known_bug(enc_linear(F, &l1) == enc_linear(F, &l3),
	          "enc_intern: equal linear maps are one pointer whatever the padding bytes of the Lin");
}

static void printing(void)
{
	begin("print");
	const Encoding *b = enc_blocked(F, 2, (int[]){1, 4}, (int[]){8, 4}, (int[]){4, 1}, (int[]){1, 0});
	const Encoding *s = enc_slice(F, 1, b);
	const Encoding *m = enc_mma(F, 2, 2);
	const Encoding *a = enc_dot_operand(F, 0, m, 2);
	const Encoding *bb = enc_dot_operand(F, 1, m, 2);
	Lin l;
	memset(&l, -1, sizeof l);
	l.n_reg = 1, l.n_lane = 5, l.n_warp = 2;
	l.reg[0] = 3;
	l.lane[0] = -1, l.lane[1] = -1, l.lane[2] = -1, l.lane[3] = -1, l.lane[4] = 0;
	l.warp[0] = 1, l.warp[1] = 2;
	const Encoding *li = enc_linear(F, &l);
	Encoding sh;
	memset(&sh, 0, sizeof sh);
	sh.kind = ENC_SHARED;
	sh.vec = 2;
	sh.n_index_bits = 8;
	sh.swizzle[0] = 0x2;
	sh.swizzle[6] = 0x18;
	const Encoding *se = enc_intern(F, &sh);
	const Encoding *b3 = enc_blocked(F, 3, (int[]){1, 1, 4}, (int[]){2, 4, 4}, (int[]){1, 2, 2}, (int[]){2, 1, 0});
	check_text(printed(b), "blocked<spt = [1, 4], tpw = [8, 4], wpc = [4, 1], order = [1, 0]>", "enc_print: blocked");
	check_text(printed(s), "slice<dim = 1, parent = #blocked0>", "enc_print: slice names its parent");
	check_text(printed(m), "mma<version = 2, wpc = [2, 2]>", "enc_print: mma");
	check_text(printed(a), "dot_operand<idx = 0, parent = #mma2, k_width = 2>", "enc_print: dot_operand A");
	check_text(printed(bb), "dot_operand<idx = 1, parent = #mma2, k_width = 2>", "enc_print: dot_operand B");
	check_text(printed(li), "linear<reg = [3], lane = [-1, -1, -1, -1, 0], warp = [1, 2]>", "enc_print: linear");
	/* shared: what else it prints between vec and swizzle is still moving */
	const char *ps = printed(se);
	check(strncmp(ps, "shared<vec = 2, ", 16) == 0 && strstr(ps, "swizzle = [0: 0x2, 6: 0x18]>") &&
	          strlen(strstr(ps, "swizzle = [0: 0x2, 6: 0x18]>")) == strlen("swizzle = [0: 0x2, 6: 0x18]>"),
	      "enc_print: shared lists the bits that swizzle");
	check_text(printed(b3), "blocked<spt = [1, 1, 4], tpw = [2, 4, 4], wpc = [1, 2, 2], order = [2, 1, 0]>",
	           "enc_print: blocked of rank 3");
	char all[256];
	snprintf(all, sizeof all, "%s %s %s %s %s %s %s %s", ref(b), ref(s), ref(m), ref(a), ref(bb), ref(li), ref(se), ref(b3));
	check_text(all, "#blocked0 #slice1 #mma2 #dot_op3 #dot_op4 #linear5 #shared6 #blocked7",
	           "enc_ref: kind and number");
	Encoding empty;
	memset(&empty, 0, sizeof empty);
	empty.kind = ENC_SHARED;
	empty.vec = 1;
	const char *pe = printed(enc_intern(F, &empty));
	check(strncmp(pe, "shared<vec = 1, ", 16) == 0 && strstr(pe, "swizzle = []>") &&
	          strcmp(strstr(pe, "swizzle = []>"), "swizzle = []>") == 0,
	      "enc_print: shared without swizzle");
}

/* ---- shape ops as maps of index bits ---- */

static void coords_of(int idx, Type t, int *c)
{
	for (int d = t.rank - 1; d >= 0; d--) {
		c[d] = idx % t.shape[d];
		idx /= t.shape[d];
	}
}

/* The operand element (and which operand) that result element o of op
 * comes from, by the op's definition in coordinates. */
static int source_of(const Op *op, int o, int *which)
{
	Type in = op->operands[0]->type, out = op->results[0]->type;
	int c[BLK_MAX_RANK], ic[BLK_MAX_RANK];
	coords_of(o, out, c);
	*which = 0;
	switch (op->code) {
	case OP_EXPAND_DIMS:
		for (int d = 0, j = 0; d < out.rank; d++)
			if (d != op->attr[0])
				ic[j++] = c[d];
		break;
	case OP_BROADCAST:
		for (int d = 0; d < in.rank; d++)
			ic[d] = in.shape[d] == 1 ? 0 : c[d];
		break;
	case OP_TRANS:
		for (int d = 0; d < out.rank; d++)
			ic[op->attr[d]] = c[d];
		break;
	case OP_RESHAPE:
		return o;
	case OP_JOIN:
		*which = c[out.rank - 1];
		for (int d = 0; d < in.rank; d++)
			ic[d] = c[d];
		break;
	case OP_CAT:
		*which = c[0] >= in.shape[0];
		for (int d = 0; d < in.rank; d++)
			ic[d] = d == 0 ? c[0] % in.shape[0] : c[d];
		break;
	case OP_SPLIT: /* result 0: [..., 0] of the operand */
		for (int d = 0; d < out.rank; d++)
			ic[d] = c[d];
		ic[out.rank] = 0;
		break;
	default:
		return -1;
	}
	return row_major(in.rank, (const int *)in.shape, ic);
}

/* shape_bit_map, bit by bit, reproduces source_of for every element. */
static bool bit_map_matches(const Op *op)
{
	Type out = op->results[0]->type;
	int bits = 0;
	for (int d = 0; d < out.rank; d++)
		bits += lg(out.shape[d]);
	int map[32];
	for (int b = 0; b < bits; b++)
		if (!shape_bit_map(op, b, &map[b])) {
			snprintf(why, sizeof why, "no map for bit %d", b);
			return false;
		}
	int m;
	if (!shape_bit_map(op, -1, &m) || m != -1) {
		snprintf(why, sizeof why, "a replicated bit (-1) does not stay -1");
		return false;
	}
	for (int o = 0; o < (int)type_numel(out); o++) {
		int which, want = source_of(op, o, &which), got = 0, gw = 0;
		for (int b = 0; b < bits; b++)
			if (o >> b & 1) {
				if (map[b] >= 0)
					got |= 1 << map[b];
				else if (map[b] == MAP_SEL)
					gw = 1;
			}
		if (op->code == OP_SPLIT) { /* the map leaves out the bit that picks the half */
			if (want != got) {
				snprintf(why, sizeof why, "element %d: operand index %d, want %d", o, got, want);
				return false;
			}
			continue;
		}
		if (want != got || which != gw) {
			snprintf(why, sizeof why, "element %d: operand %d index %d, want operand %d index %d", o, gw, got, which, want);
			return false;
		}
	}
	return true;
}

static void check_map(Value *v, const char *name)
{
	if (!check(bit_map_matches(v->def), name))
		printf("  %s\n", why);
}

static Lin blocked_lin(const Encoding *e, Type t, int nw)
{
	Lin l;
	if (!enc_lin(e, t, nw, &l))
		memset(&l, 0, sizeof l);
	return l;
}

static void shape_maps(void)
{
	begin("shape");
	Value *x = param("x", B1(f32, 16));
	Value *y = param("y", B2(f32, 4, 8));
	Value *z = param("z", type_block(f32, 3, (int32_t[]){2, 4, 8}));
	Value *e0 = opa(OP_EXPAND_DIMS, x, NULL, B2(f32, 1, 16), 0);
	Value *e1 = opa(OP_EXPAND_DIMS, x, NULL, B2(f32, 16, 1), 1);
	check_map(e0, "shape_bit_map: expand_dims at 0");
	check_map(e1, "shape_bit_map: expand_dims at 1");
	Value *bc0 = op1(OP_BROADCAST, e0, B2(f32, 8, 16));
	Value *bc1 = op1(OP_BROADCAST, e1, B2(f32, 16, 32));
	check_map(bc0, "shape_bit_map: broadcast of dim 0 (high bits dropped)");
	check_map(bc1, "shape_bit_map: broadcast of dim 1 (low bits dropped, the rest shifted)");
	int m;
	check(shape_bit_map(bc1->def, 0, &m) && m == MAP_DROP && shape_bit_map(bc1->def, 5, &m) && m == 0,
	      "shape_bit_map: a broadcast dimension's bits are MAP_DROP");
	Op *t2 = emit(OP_TRANS, &y, 1, (Type[]){B2(f32, 8, 4)}, 1);
	t2->attr[0] = 1, t2->attr[1] = 0;
	check_map(t2->results[0], "shape_bit_map: trans of [4, 8]");
	Op *t3 = emit(OP_TRANS, &z, 1, (Type[]){type_block(f32, 3, (int32_t[]){8, 2, 4})}, 1);
	t3->attr[0] = 2, t3->attr[1] = 0, t3->attr[2] = 1;
	check_map(t3->results[0], "shape_bit_map: trans of [2, 4, 8] by [2, 0, 1]");
	check_map(op1(OP_RESHAPE, y, B1(f32, 32)), "shape_bit_map: reshape [4, 8] -> [32]");
	check_map(op1(OP_RESHAPE, z, B2(f32, 16, 4)), "shape_bit_map: reshape [2, 4, 8] -> [16, 4]");
	Value *j = op2(OP_JOIN, y, y, type_block(f32, 3, (int32_t[]){4, 8, 2}));
	check_map(j, "shape_bit_map: join (bit 0 picks the operand)");
	check(shape_bit_map(j->def, 0, &m) && m == MAP_SEL, "shape_bit_map: join's bit 0 is MAP_SEL");
	Value *ct = op2(OP_CAT, y, y, B2(f32, 8, 8));
	check_map(ct, "shape_bit_map: cat (the top bit picks the operand)");
	Op *sp = emit(OP_SPLIT, &j, 1, (Type[]){B2(f32, 4, 8), B2(f32, 4, 8)}, 2);
	check_map(sp->results[0], "shape_bit_map: split (result bit b is operand bit b + 1)");
	check(!shape_bit_map(op2(OP_ADD, x, x, B1(f32, 16))->def, 0, &m), "shape_bit_map: not a shape op");

	/* shape_in_registers: whether lanes and warps mean the same on both sides */
	const int nw = 4;
	const Encoding *b2 = enc_blocked(F, 2, (int[]){1, 1}, (int[]){4, 8}, (int[]){4, 1}, (int[]){1, 0});
	const Encoding *b2t = enc_blocked(F, 2, (int[]){1, 1}, (int[]){8, 4}, (int[]){1, 4}, (int[]){0, 1});
	const Encoding *b2c = enc_blocked(F, 2, (int[]){1, 1}, (int[]){32, 1}, (int[]){1, 4}, (int[]){0, 1});
	Lin in, out;
	/* broadcast [16, 1] -> [16, 32] in one blocked encoding: lanes along dim 1 replicate in the operand */
	in = blocked_lin(b2, B2(f32, 16, 1), nw);
	out = blocked_lin(b2, B2(f32, 16, 32), nw);
	check(shape_in_registers(bc1->def, &in, &out), "shape_in_registers: broadcast within one blocked encoding");
	in = blocked_lin(b2c, B2(f32, 16, 1), nw);
	check(!shape_in_registers(bc1->def, &in, &out), "shape_in_registers: broadcast from rows in lanes to rows in warps moves data");
	/* expand_dims [16] -> [16, 1] from the slice of the result's encoding */
	in = blocked_lin(enc_slice(F, 1, b2), B1(f32, 16), nw);
	out = blocked_lin(b2, B2(f32, 16, 1), nw);
	check(shape_in_registers(e1->def, &in, &out), "shape_in_registers: expand_dims of the slice");
	in = blocked_lin(enc_slice(F, 0, b2), B1(f32, 16), nw);
	check(!shape_in_registers(e1->def, &in, &out), "shape_in_registers: expand_dims of the other slice moves data");
	/* trans [4, 8] -> [8, 4]: the transposed encoding keeps threads, the same one does not */
	in = blocked_lin(b2, B2(f32, 4, 8), nw);
	out = blocked_lin(b2t, B2(f32, 8, 4), nw);
	check(shape_in_registers(t2, &in, &out), "shape_in_registers: trans into the transposed blocked encoding");
	out = blocked_lin(b2, B2(f32, 8, 4), nw);
	check(!shape_in_registers(t2, &in, &out), "shape_in_registers: trans into the same blocked encoding moves data");
	/* reshape keeps the linear index: the same bits are the same threads */
	in = blocked_lin(b2, B2(f32, 4, 8), nw);
	out = blocked_lin(enc_blocked(F, 1, (int[]){1}, (int[]){32}, (int[]){4}, (int[]){0}), B1(f32, 32), nw);
	check(lin_eq(&in, &out), "shape_in_registers: [4, 8] in 4 x 8 lanes has the bits of [32] in 32 lanes");
	Value *rs = op1(OP_RESHAPE, y, B1(f32, 32));
	check(shape_in_registers(rs->def, &in, &out), "shape_in_registers: reshape with the same bit map");
	out = blocked_lin(enc_blocked(F, 1, (int[]){2}, (int[]){32}, (int[]){4}, (int[]){0}), B1(f32, 32), nw);
	check(!shape_in_registers(rs->def, &in, &out), "shape_in_registers: reshape to another bit map moves data");
	/* the same lanes, warps swapped: data moves between warps */
	in = blocked_lin(b2, B2(f32, 16, 32), nw);
	out = in;
	out.warp[0] = in.warp[1], out.warp[1] = in.warp[0];
	Value *big = param("big", B2(f32, 16, 32));
	Value *id = op1(OP_RESHAPE, big, B1(f32, 512));
	check(in.warp[0] >= 0 && in.warp[1] >= 0 && !shape_in_registers(id->def, &in, &out),
	      "shape_in_registers: the same lanes in other warps moves data");
	check(shape_in_registers(id->def, &in, &in), "shape_in_registers: ... and the same warps does not");
	/* join: the picking bit must stay in registers */
	begin("join"); /* a fresh function for a one-warp join */
	F->num_warps = 1;
	Value *a = param("a", B1(f32, 64));
	Value *jj = op2(OP_JOIN, a, a, B2(f32, 64, 2));
	Lin li, lo;
	memset(&li, -1, sizeof li);
	li.n_reg = 1, li.n_lane = 5, li.n_warp = 0, li.reg[0] = 5;
	for (int i = 0; i < 5; i++)
		li.lane[i] = (int8_t)i;
	lo = li;
	lo.n_reg = 2, lo.reg[0] = 0, lo.reg[1] = 6;
	for (int i = 0; i < 5; i++)
		lo.lane[i] = (int8_t)(i + 1);
	check(shape_in_registers(jj->def, &li, &lo), "shape_in_registers: join with the new bit in a register");
	lo.lane[0] = 0, lo.reg[0] = 1;
	check(!shape_in_registers(jj->def, &li, &lo), "shape_in_registers: join with the new bit in a lane moves data");
	/* a replicated result lane over an operand lane that is not moves data */
	lo = li;
	lo.lane[4] = -1;
	lo.n_reg = 2, lo.reg[1] = 4;
	Value *rr = op1(OP_RESHAPE, a, B2(f32, 8, 8));
	check(!shape_in_registers(rr->def, &li, &lo), "shape_in_registers: a lane replicated on one side only moves data");
}

/* ---- axis analysis ---- */

static AxisInfo *AX;

static void analyze(void)
{
	free(AX);
	AX = axis_analyze(F);
}

static AxisInfo ax(const Value *v) { return AX[v->id]; }

#define HUGE_DIV ((int64_t)1 << 20) /* "divisible by anything that matters" (the start 0) */

static Value *arange(int lo, int hi)
{
	Op *op = emit(OP_ARANGE, NULL, 0, (Type[]){B1(i32, hi - lo)}, 1);
	op->attr[0] = lo, op->attr[1] = hi;
	return op->results[0];
}

static Value *hint(Value *x, int64_t div, int64_t contig)
{
	Op *op = emit(OP_HINT, &x, 1, &x->type, 1);
	op->attr[0] = div, op->attr[1] = contig;
	return op->results[0];
}

static Value *param_div(const char *name, Type t, int64_t div)
{
	Value *v = param(name, t);
	F->params[F->n_params - 1].divisibility = div;
	return v;
}

static bool axis_is(const Value *v, int d, int64_t contig, int64_t div, int64_t constancy)
{
	AxisInfo a = ax(v);
	bool ok = (contig < 0 || a.contig[d] == contig) &&
	          (div < 0 ? a.div[d] >= HUGE_DIV : div == 0 || a.div[d] == div) &&
	          (constancy < 0 || a.constancy[d] == constancy);
	if (!ok)
		snprintf(why, sizeof why, "dim %d: contig %lld div %lld constancy %lld", d, (long long)a.contig[d],
		         (long long)a.div[d], (long long)a.constancy[d]);
	return ok;
}

static void check_axis(const Value *v, int d, int64_t contig, int64_t div, int64_t constancy, const char *name)
{
	if (!check(axis_is(v, d, contig, div, constancy), name))
		printf("  got %s\n", why);
}

static void known_axis(const Value *v, int d, int64_t contig, int64_t div, int64_t constancy, const char *name)
{
	if (!known_bug(axis_is(v, d, contig, div, constancy), name))
		printf("  got %s\n", why);
}

/* A sound claim: the runs given, and a divisor that divides `div` (the
 * exact one; a smaller power of two is merely less precise). */
static void known_axis_sound(const Value *v, int d, int64_t contig, int64_t div, int64_t constancy, const char *name)
{
	AxisInfo a = ax(v);
	bool ok = a.contig[d] == contig && a.constancy[d] == constancy && a.div[d] >= 1 && div % a.div[d] == 0;
	snprintf(why, sizeof why, "dim %d: contig %lld div %lld constancy %lld", d, (long long)a.contig[d],
	         (long long)a.div[d], (long long)a.constancy[d]);
	if (!known_bug(ok, name))
		printf("  got %s\n", why);
}

static void axis_basics(void)
{
	begin("axis");
	Value *p = param_div("p", P(f32), 16);
	Value *n16 = param_div("n", i32, 16);
	Value *k = param("k", i32);
	Value *r = arange(0, 128);
	Value *r2 = arange(32, 96);
	Value *r3 = arange(3, 7);
	Value *s16 = op1(OP_SPLAT, n16, B1(i32, 128));
	Value *sk = op1(OP_SPLAT, k, B1(i32, 128));
	Value *c12 = ci(B1(i32, 128), 12);
	Value *sum = op2(OP_ADD, r, s16, B1(i32, 128));
	Value *sumk = op2(OP_ADD, r, sk, B1(i32, 128));
	Value *diff = op2(OP_SUB, r, s16, B1(i32, 128));
	Value *one = op2(OP_MUL, r, ci(B1(i32, 128), 1), B1(i32, 128));
	Value *n64 = op2(OP_MUL, s16, ci(B1(i32, 128), 4), B1(i32, 128));
	Value *pid = op0(OP_PROGRAM_ID, i32);
	Value *ps = op1(OP_SPLAT, p, P(B1(f32, 128)));
	Value *ptr = op2(OP_ADDPTR, ps, r, P(B1(f32, 128)));
	Value *ptr2 = op2(OP_ADDPTR, ps, sum, P(B1(f32, 128)));
	Value *ptrk = op2(OP_ADDPTR, ps, sumk, P(B1(f32, 128)));
	ret();
	check_text(verify_msg(F, "test"), "", "axis: the test kernel is valid");
	analyze();
	check_axis(r, 0, 128, -1, 1, "axis: arange(0, 128) is one run of 128 from 0");
	check(ax(r).nonneg, "axis: arange from 0 is non-negative");
	check_axis(r2, 0, 64, 32, 1, "axis: arange(32, 96) is a run of 64 from a multiple of 32");
	check_axis(r3, 0, 4, 1, 1, "axis: arange(3, 7) is a run from an odd start");
	check_axis(s16, 0, 1, 16, 128, "axis: a splat of an argument known a multiple of 16");
	check_axis(sk, 0, 1, 1, 128, "axis: a splat of an unknown argument is constant only");
	check_axis(c12, 0, 1, 4, 128, "axis: a constant 12 block is a multiple of 4");
	check_axis(sum, 0, 128, 16, 1, "axis: arange + splat(16 n): a run from a multiple of 16");
	check(!ax(sum).nonneg && !ax(diff).nonneg, "axis: arange + an argument of unknown sign is not known non-negative");
	check_axis(sumk, 0, 128, 1, 1, "axis: arange + splat(k): a run from anywhere");
	check_axis(diff, 0, 128, 16, 1, "axis: arange - splat(16 n): still a run");
	check_axis(one, 0, 128, -1, 1, "axis: arange * 1 stays a run");
	check_axis(n64, 0, 1, 64, 128, "axis: splat(16 n) * 4 is a multiple of 64");
	check(ax(pid).nonneg, "axis: program_id is non-negative");
	check_axis(ptr, 0, 128, 16, 1, "axis: p + arange: pointers of one run, 16-byte aligned");
	check_axis(ptr2, 0, 128, 16, 1, "axis: p + (arange + 16 n): a multiple of 16 elements stays 16-byte aligned");
	check_axis(ptrk, 0, 128, 4, 1, "axis: p + (arange + k): aligned to the element only");
	check(axis_access_width(AX, ptr, NULL, 0) == 4, "axis_access_width: f32 run from a 16-byte boundary: 4 elements");
	check(axis_access_width(AX, ptrk, NULL, 0) == 1, "axis_access_width: f32 run from anywhere: 1 element");

	/* KNOWN BUG: div is documented as dividing the first element of each
	 * run of contig; once an op leaves runs of 1 it must divide every
	 * element. mul multiplies the divisors of a run's first elements
	 * (arange * 4: 0, 4, 8, ... claimed divisible by 2^30, truly by 4;
	 * arange * 3 claimed 2^30, truly 1), add keeps gcd(div a, div b) when
	 * runs collapse (arange + arange: 0, 2, 4, ... claimed 2^30), div by a
	 * power of two divides it (arange / 2: 0, 0, 1, 1, ... claimed 2^29).
	 * Through expand_dims or reshape, which take what divides every element
	 * as the new dimension's divisor, this makes vector accesses that are
	 * not aligned: (rows * 17)[:, None] + cols[None, :] gives ld.global.v2
	 * at odd rows. */
	begin("axis");
	Value *ra = arange(0, 128);
	Value *m4 = op2(OP_MUL, ra, ci(B1(i32, 128), 4), B1(i32, 128));
	Value *m3 = op2(OP_MUL, ra, ci(B1(i32, 128), 3), B1(i32, 128));
	Value *aa = op2(OP_ADD, ra, ra, B1(i32, 128));
	Value *d2 = op2(OP_DIV, ra, ci(B1(i32, 128), 2), B1(i32, 128));
	Value *s2 = op2(OP_SHR, ra, ci(B1(i32, 128), 1), B1(i32, 128));
	Value *ex = opa(OP_EXPAND_DIMS, m3, NULL, B2(i32, 128, 1), 1);
	ret();
	analyze();
	known_axis_sound(m4, 0, 1, 4, 1, "axis: arange * 4 is divisible by 4, not more");
	known_axis_sound(m3, 0, 1, 1, 1, "axis: arange * 3 is divisible by 1 only");
	known_axis_sound(aa, 0, 1, 2, 1, "axis: arange + arange is divisible by 2, not more");
	known_axis_sound(d2, 0, 1, 1, 2, "axis: arange / 2 is constant in pairs, divisible by 1 only");
	known_axis_sound(s2, 0, 1, 1, 2, "axis: arange >> 1 is constant in pairs, divisible by 1 only");
	known_axis_sound(ex, 1, 1, 1, 1, "axis: (arange * 3)[:, None] is divisible by 1 only along the new dim");
}

static void axis_shapes(void)
{
	begin("axis");
	Value *p = param_div("p", P(f32), 16);
	Value *rows = arange(0, 64), *cols = arange(0, 64);
	Value *re = opa(OP_EXPAND_DIMS, rows, NULL, B2(i32, 64, 1), 1);
	Value *ce = opa(OP_EXPAND_DIMS, cols, NULL, B2(i32, 1, 64), 0);
	Value *rb = op1(OP_BROADCAST, re, B2(i32, 64, 32));
	Value *cb = op1(OP_BROADCAST, ce, B2(i32, 32, 64));
	Value *rm = op2(OP_MUL, re, ci(B2(i32, 64, 1), 64), B2(i32, 64, 1));
	Value *offs = op2(OP_ADD, op1(OP_BROADCAST, rm, B2(i32, 64, 64)), op1(OP_BROADCAST, ce, B2(i32, 64, 64)), B2(i32, 64, 64));
	Value *ptr = op2(OP_ADDPTR, op1(OP_SPLAT, p, P(B2(f32, 64, 64))), offs, P(B2(f32, 64, 64)));
	Op *tr = emit(OP_TRANS, &offs, 1, (Type[]){B2(i32, 64, 64)}, 1);
	tr->attr[0] = 1, tr->attr[1] = 0;
	Value *flat = op1(OP_RESHAPE, offs, B1(i32, 4096));
	Value *rows2 = op1(OP_RESHAPE, offs, B2(i32, 128, 32));
	Value *three = op1(OP_RESHAPE, offs, type_block(i32, 3, (int32_t[]){2, 32, 64}));
	ret();
	check_text(verify_msg(F, "test"), "", "axis: the 2-D test kernel is valid");
	analyze();
	check_axis(ce, 1, 64, -1, 1, "axis: cols[None, :] keeps its run along dim 1");
	check_axis(ce, 0, 1, 1, 1, "axis: cols[None, :] along the new dim: what divides every element (1)");
	check_axis(re, 0, 64, -1, 1, "axis: rows[:, None] keeps its run along dim 0");
	check_axis(rb, 1, 1, 1, 32, "axis: broadcast along dim 1 is constant along it");
	check_axis(cb, 0, 1, 1, 32, "axis: broadcast along dim 0 is constant along it");
	check_axis(cb, 1, 64, -1, 1, "axis: broadcast keeps the other dim's run");
	check_axis(offs, 1, 64, 64, 1, "axis: rows * 64 + cols: runs of 64 along dim 1 from multiples of 64");
	check_axis(offs, 0, 1, 0, 1, "axis: rows * 64 + cols: no run along dim 0");
	check_axis(ptr, 1, 64, 16, 1, "axis: p + offs: runs along dim 1, 16-byte aligned");
	check(axis_access_width(AX, ptr, NULL, 1) == 4 && axis_access_width(AX, ptr, NULL, 0) == 1,
	      "axis_access_width: 4 along the run, 1 across rows");
	check_axis(tr->results[0], 0, 64, 64, 1, "axis: trans moves the run to dim 0");
	check_axis(three, 2, 64, 64, 1, "axis: a reshape that keeps the last dim keeps its runs");
	/* where the last dim changes length, any claim must still be true:
	 * runs of 64 from multiples of 64 (flat), of 32 from multiples of 32 (rows2) */
	check(64 % ax(flat).contig[0] == 0 && (ax(flat).contig[0] == 1 || ax(flat).div[0] % ax(flat).contig[0] == 0),
	      "axis: a reshape to 1-D claims no more than runs of 64");
	check(32 % ax(rows2).contig[1] == 0 && (ax(rows2).contig[1] == 1 || ax(rows2).div[1] % ax(rows2).contig[1] == 0),
	      "axis: a reshape that cuts the last dim claims no more than runs of 32");
}

static void axis_division(void)
{
	begin("axis");
	Value *n16 = param_div("n", i32, 16);
	Value *r = arange(0, 128);
	Value *pid = op0(OP_PROGRAM_ID, i32);
	Value *base = op1(OP_SPLAT, op2(OP_MUL, pid, ci(i32, 128), i32), B1(i32, 128));
	Value *g = op2(OP_ADD, base, r, B1(i32, 128));         /* pid * 128 + arange: >= 0 */
	Value *neg = op2(OP_SUB, r, ci(B1(i32, 128), 64), B1(i32, 128)); /* -64 .. 63 */
	Value *sn = op2(OP_ADD, op1(OP_SPLAT, n16, B1(i32, 128)), r, B1(i32, 128)); /* n + arange, n of unknown sign */
	Value *c4 = ci(B1(i32, 128), 4), *c2 = ci(B1(i32, 128), 2), *c3 = ci(B1(i32, 128), 3);
	Value *q_r = op2(OP_DIV, r, c4, B1(i32, 128));
	Value *q_g = op2(OP_DIV, g, c4, B1(i32, 128));
	Value *q_neg = op2(OP_DIV, neg, c4, B1(i32, 128));
	Value *q_sn = op2(OP_DIV, sn, c4, B1(i32, 128));
	Value *sh_neg = op2(OP_SHR, neg, c2, B1(i32, 128));
	Value *sh_sn = op2(OP_SHR, sn, c2, B1(i32, 128));
	Value *u = op1(OP_CAST, neg, B1(u32, 128));
	Value *q_u = op2(OP_DIV, u, ci(B1(u32, 128), 4), B1(u32, 128));
	Value *q3 = op2(OP_DIV, r, c3, B1(i32, 128));
	Value *odd = arange(1, 129);
	Value *q_odd = op2(OP_DIV, odd, c4, B1(i32, 128));
	Value *q_big = op2(OP_DIV, r, ci(B1(i32, 128), 256), B1(i32, 128));
	Value *splat_q = op2(OP_DIV, op1(OP_SPLAT, n16, B1(i32, 128)), c4, B1(i32, 128));
	Value *neg_q = op2(OP_DIV, r, ci(B1(i32, 128), -4), B1(i32, 128));
	Value *rn = arange(-64, 64);
	Value *q_rn = op2(OP_DIV, rn, c4, B1(i32, 128));
	ret();
	check_text(verify_msg(F, "test"), "", "axis: the division test kernel is valid");
	analyze();
	check(ax(g).nonneg && !ax(neg).nonneg && !ax(sn).nonneg, "axis: pid * 128 + arange is non-negative, arange - 64 not");
	check_axis(q_r, 0, 1, 0, 4, "axis: arange / 4 (non-negative) is constant in aligned fours");
	check_axis(q_g, 0, 1, 0, 4, "axis: (pid * 128 + arange) / 4 is constant in fours");
	check_axis(q_neg, 0, 1, 0, 1, "axis: (arange - 64) / 4 truncates toward 0: no constant runs");
	check_axis(q_sn, 0, 1, 0, 1, "axis: (n + arange) / 4, n of unknown sign: no constant runs");
	check_axis(sh_neg, 0, 1, 0, 4, "axis: (arange - 64) >> 2 floors: constant in fours");
	check_axis(sh_sn, 0, 1, 0, 4, "axis: (n + arange) >> 2 floors: constant in fours");
	check_axis(q_u, 0, 1, 0, 4, "axis: an unsigned division floors: constant in fours");
	check_axis(q3, 0, 1, 0, 1, "axis: division by 3: nothing known");
	check_axis(q_odd, 0, 1, 0, 1, "axis: arange(1, 129) / 4: runs not aligned, nothing known");
	check_axis(q_big, 0, 1, 0, 128, "axis: arange / 256 is constant over the run it has (128)");
	check_axis(splat_q, 0, 1, 4, 128, "axis: splat(16 n) / 4 is a constant multiple of 4");
	check_axis(neg_q, 0, 1, 1, 4, "axis: arange / -4 = -(arange / 4) is constant in fours");
	check(!ax(rn).nonneg, "axis: arange(-64, 64) is not non-negative");
	check_axis(rn, 0, 128, 64, 1, "axis: arange(-64, 64) is a run from a multiple of 64");
	check_axis(q_rn, 0, 1, 0, 1, "axis: arange(-64, 64) / 4 truncates toward 0: no constant runs");
}

static void axis_hints_masks(void)
{
	begin("axis");
	Value *p = param_div("p", P(f32), 16);
	Value *ph = param_div("h", P(f16), 16);
	Value *pb = param_div("b", P(i8), 16);
	Value *pd = param_div("d", P(f64), 16);
	Value *p8 = param_div("q", P(f32), 8);
	Value *n16 = param_div("n", i32, 16);
	Value *k = param("k", i32);
	Value *idx = param("idx", P(i32));
	Value *r = arange(0, 64);
	Value *off = emit(OP_LOAD, (Value *[]){op2(OP_ADDPTR, op1(OP_SPLAT, idx, P(B1(i32, 64))), r, P(B1(i32, 64)))}, 1,
	                  (Type[]){B1(i32, 64)}, 1)->results[0];
	Value *ho = hint(off, 8, 4);
	Value *hp = hint(op2(OP_ADDPTR, op1(OP_SPLAT, ph, P(B1(f16, 64))), off, P(B1(f16, 64))), 8, 8);
	Value *pf = op2(OP_ADDPTR, op1(OP_SPLAT, p, P(B1(f32, 64))), r, P(B1(f32, 64)));
	Value *pfh = op2(OP_ADDPTR, op1(OP_SPLAT, ph, P(B1(f16, 64))), r, P(B1(f16, 64)));
	Value *pfb = op2(OP_ADDPTR, op1(OP_SPLAT, pb, P(B1(i8, 64))), r, P(B1(i8, 64)));
	Value *pfd = op2(OP_ADDPTR, op1(OP_SPLAT, pd, P(B1(f64, 64))), r, P(B1(f64, 64)));
	Value *pf8 = op2(OP_ADDPTR, op1(OP_SPLAT, p8, P(B1(f32, 64))), r, P(B1(f32, 64)));
	Value *lt16 = cmp(CMP_LT, r, op1(OP_SPLAT, n16, B1(i32, 64)));
	Value *ltk = cmp(CMP_LT, r, op1(OP_SPLAT, k, B1(i32, 64)));
	Value *ge16 = cmp(CMP_GE, r, op1(OP_SPLAT, n16, B1(i32, 64)));
	Value *eq0 = cmp(CMP_EQ, r, ci(B1(i32, 64), 0));
	Value *ne0 = cmp(CMP_NE, r, ci(B1(i32, 64), 0));
	Value *le16 = cmp(CMP_LE, r, op1(OP_SPLAT, n16, B1(i32, 64)));
	Value *gt16 = cmp(CMP_GT, r, op1(OP_SPLAT, n16, B1(i32, 64)));
	Value *both = op2(OP_AND, lt16, ltk, B1(T(SK_I1), 64));
	/* a load of one address under a mask that changes */
	Value *one = op1(OP_SPLAT, p, P(B1(f32, 64)));
	Op *ld = emit(OP_LOAD, (Value *[]){one, ltk, cf(B1(f32, 64), 0)}, 3, (Type[]){B1(f32, 64)}, 1);
	ld->attr[0] = MEMF_MASK | MEMF_OTHER;
	Op *ldu = emit(OP_LOAD, (Value *[]){one}, 1, (Type[]){B1(f32, 64)}, 1);
	ret();
	check_text(verify_msg(F, "test"), "", "axis: the hint and mask test kernel is valid");
	analyze();
	check_axis(off, 0, 1, 1, 1, "axis: loaded offsets: nothing known");
	check_axis(ho, 0, 4, 8, 1, "axis: multiple_of 8, max_contiguous 4 on offsets");
	check_axis(hp, 0, 8, 16, 1, "axis: multiple_of 8 on f16 pointers is 16 bytes");
	check(axis_access_width(AX, hp, NULL, 0) == 8, "axis_access_width: hinted f16 pointers: 8 elements");
	check(axis_access_width(AX, pf, NULL, 0) == 4, "axis_access_width: f32: 4");
	check(axis_access_width(AX, pfh, NULL, 0) == 8, "axis_access_width: f16: 8");
	check(axis_access_width(AX, pfb, NULL, 0) == 16, "axis_access_width: i8: 16");
	check(axis_access_width(AX, pfd, NULL, 0) == 2, "axis_access_width: f64: 2");
	check(axis_access_width(AX, pf8, NULL, 0) == 2, "axis_access_width: f32 from an 8-byte boundary: 2");
	check_axis(lt16, 0, 1, 0, 16, "axis: arange < splat(16 n) changes only at multiples of 16");
	check_axis(ge16, 0, 1, 0, 16, "axis: arange >= splat(16 n) changes only at multiples of 16");
	check_axis(ltk, 0, 1, 0, 1, "axis: arange < splat(k) may change anywhere");
	check_axis(both, 0, 1, 0, 1, "axis: a mask and'ed with an unknown one is unknown");
	check(axis_access_width(AX, pf, lt16, 0) == 4, "axis_access_width: f32 under a mask of runs of 16: 4");
	check(axis_access_width(AX, pfb, lt16, 0) == 16, "axis_access_width: i8 under a mask of runs of 16: 16");
	check(axis_access_width(AX, pf, ltk, 0) == 1, "axis_access_width: f32 under a mask that may change anywhere: 1");
	check_axis(ldu->results[0], 0, 1, 0, 64, "axis: a load of one address is one value");
	/* KNOWN BUG: cmp gives runs of gcd(contig, div) for every predicate,
	 * but only < and >= change at the bound itself: arange == 0 is true at
	 * element 0 alone, arange <= 16 n changes after element 16 n. The
	 * lowering then stores 4 elements under element 0's mask:
	 * store(out + offs, x, mask = offs == 0) writes out[0..3]. */
	known_axis(eq0, 0, 1, 0, 1, "axis: arange == 0 is not constant over any run");
	known_axis(ne0, 0, 1, 0, 1, "axis: arange != 0 is not constant over any run");
	known_axis(le16, 0, 1, 0, 1, "axis: arange <= splat(16 n) changes after a multiple of 16");
	known_axis(gt16, 0, 1, 0, 1, "axis: arange > splat(16 n) changes after a multiple of 16");
	known_bug(axis_access_width(AX, pf, eq0, 0) == 1, "axis_access_width: under the mask arange == 0: 1 element");
	/* KNOWN BUG: a masked load of one address is only constant where its
	 * mask is (masked-off elements take `other`); axis.c keeps the
	 * pointer's constancy. */
	known_axis(ld->results[0], 0, 1, 0, 1, "axis: a load of one address under a changing mask is not one value");
}

static Value *arg_of(Op *loop, int i) { return loop->regions[0].args[i]; }

static void axis_loops(void)
{
	begin("axis");
	Value *p = param_div("p", P(f32), 16);
	Value *n = param("n", i32);
	Value *r = arange(0, 64);
	Value *ptr0 = op2(OP_ADDPTR, op1(OP_SPLAT, p, P(B1(f32, 64))), r, P(B1(f32, 64)));
	/* for i in range(0, n, 1): ptrs += 64; qtrs += 1; u = load(...) */
	Value *lb = ci(i32, 0), *st = ci(i32, 1);
	Type pt = P(B1(f32, 64));
	Op *l = emit(OP_FOR, (Value *[]){lb, n, st, ptr0, ptr0, ptr0}, 6, (Type[]){pt, pt, pt}, 3);
	Region *outer = R;
	R = &l->regions[0];
	ir_region_arg(F, R, i32);
	Value *a = ir_region_arg(F, R, pt), *b = ir_region_arg(F, R, pt), *c = ir_region_arg(F, R, pt);
	Value *a2 = op2(OP_ADDPTR, a, ci(B1(i32, 64), 64), pt);
	Value *b2 = op2(OP_ADDPTR, b, ci(B1(i32, 64), 1), pt);
	Value *idx = emit(OP_LOAD, (Value *[]){op2(OP_ADDPTR, op1(OP_SPLAT, p, pt), r, pt)}, 1, (Type[]){B1(f32, 64)}, 1)->results[0];
	Value *c2 = op2(OP_ADDPTR, c, op1(OP_CAST, idx, B1(i32, 64)), pt);
	yield((Value *[]){a2, b2, c2}, 3);
	R = outer;
	/* for j in range(0, n, 4) and for j in range(n, n, 1) */
	Op *l4 = emit(OP_FOR, (Value *[]){lb, n, ci(i32, 4)}, 3, NULL, 0);
	R = &l4->regions[0];
	ir_region_arg(F, R, i32);
	yield(NULL, 0);
	R = outer;
	Op *ln = emit(OP_FOR, (Value *[]){n, n, st}, 3, NULL, 0);
	R = &ln->regions[0];
	ir_region_arg(F, R, i32);
	yield(NULL, 0);
	R = outer;
	ret();
	check_text(verify_msg(F, "test"), "", "axis: the loop test kernel is valid");
	analyze();
	check_axis(arg_of(l, 1), 0, 64, 16, 1, "axis: a pointer advanced by 64 elements stays 16-byte aligned in the loop");
	check_axis(l->results[0], 0, 64, 16, 1, "axis: ... and after it");
	check(axis_access_width(AX, arg_of(l, 1), NULL, 0) == 4, "axis_access_width: the loop-carried pointer: 4");
	check_axis(arg_of(l, 2), 0, 64, 4, 1, "axis: a pointer advanced by 1 element is 4-byte aligned in the loop");
	check_axis(l->results[1], 0, 64, 4, 1, "axis: ... and after it");
	check_axis(b2, 0, 64, 4, 1, "axis: ... and what the loop yields");
	check(axis_access_width(AX, arg_of(l, 2), NULL, 0) == 1, "axis_access_width: the misaligned loop pointer: 1");
	/* p + 4 k bytes for unknown k: 4 is exact, less is sound */
	check(ax(arg_of(l, 3)).contig[0] == 1 && 4 % ax(arg_of(l, 3)).div[0] == 0,
	      "axis: a pointer advanced by loaded offsets: no run in the loop, aligned to 4 bytes at most");
	check_axis(arg_of(l, 0), 0, 1, 1, 1, "axis: the induction variable of step 1");
	check(ax(arg_of(l, 0)).nonneg, "axis: an induction variable from 0 by a positive step is non-negative");
	check_axis(arg_of(l4, 0), 0, 1, 4, 1, "axis: the induction variable of range(0, n, 4) is a multiple of 4");
	check(!ax(arg_of(ln, 0)).nonneg, "axis: an induction variable from n (unknown sign) is not known non-negative");
}

int main(void)
{
	f32 = T(SK_F32), f16 = T(SK_F16), i32 = T(SK_I32), u32 = T(SK_U32), i8 = T(SK_I8), f64 = T(SK_F64);
	const char *kb = getenv("BLK_KNOWN_BUGS");
	count_bugs = kb && strcmp(kb, "1") == 0;
	blocked();
	defaults();
	slices();
	mma();
	mma_padded();
	equivalence();
	interning();
	printing();
	shape_maps();
	axis_basics();
	axis_shapes();
	axis_division();
	axis_hints_masks();
	axis_loops();
	free(AX);
	if (open_bugs)
		printf("  %d known-bug cases not counted (BLK_KNOWN_BUGS=1 counts them)\n", open_bugs);
	return done();
}
