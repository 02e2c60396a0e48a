/* remove_conversions.c: the remove-conversions pass over GPU IR. It
 * recomputes a converted value in the wanted encoding
 * when it comes from cheap ops (constants, aranges, element-wise and shape
 * ops, a load used once), moves what is left of a conversion up to before a
 * broadcast where the block is smaller, folds chains, drops identities, and
 * gives each conversion that crosses threads a swizzled shared scratch. */
#include "gpu/layout_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- remove-conversions ---------------------------------------------------------------- */

enum { REMAT_BUDGET = 64 };

/* What remat made: v recomputed in encoding e. */
typedef struct Remade {
	const Value *v;
	const Encoding *e;
	Value *to;
} Remade;

typedef struct RC {
	LP P;
	Remade *memo; /* a conversion's walk reuses what an earlier one made */
	int n_memo, cap_memo;
	int budget;
	Op **moved_loads; /* loads recomputed elsewhere: removed once unused */
	int n_moved, cap_moved;
} RC;

static Value *memo_get(RC *R, const Value *v, const Encoding *e)
{
	for (int i = 0; i < R->n_memo; i++)
		if (R->memo[i].v == v && R->memo[i].e == e)
			return R->memo[i].to;
	return NULL;
}

static void memo_put(RC *R, Value *v, const Encoding *e, Value *to)
{
	if (R->n_memo == R->cap_memo) {
		int cap = R->cap_memo ? 2 * R->cap_memo : 64;
		Remade *m = realloc(R->memo, (size_t)cap * sizeof *m);
		if (!m) {
			R->P.oom = true;
			return;
		}
		R->memo = m;
		R->cap_memo = cap;
	}
	R->memo[R->n_memo++] = (Remade){v, e, to};
}

static bool writes_between(const Op *from, const Op *to)
{
	if (from->parent != to->parent)
		return true;
	for (const Op *o = from->next; o && o != to; o = o->next)
		if (ir_writes_memory(o))
			return true;
	return false;
}

/* How many elements one access of load d takes in encoding e: the run of
 * registers along the pointers' most contiguous dimension, as far as the
 * axis analysis allows. */
static int access_in(RC *R, const Op *d, const Encoding *e)
{
	const Value *p = d->operands[0];
	Type t = p->type;
	Lin l;
	if (!R->P.ax || p->id >= R->P.n_ax || !enc_lin(e, t, R->P.f->num_warps, &l))
		return 1;
	int best = 0;
	for (int i = 1; i < t.rank; i++)
		if (R->P.ax[p->id].contig[i] > R->P.ax[p->id].contig[best])
			best = i;
	int run = 0;
	while (run < l.n_reg && l.reg[run] == lin_bit(t, best, run) && (1 << run) < t.shape[best])
		run++;
	int w = axis_access_width(R->P.ax, p, NULL, best);
	return w < (1 << run) ? w : 1 << run;
}

/* Whether loading in e would take narrower accesses than where it is (a
 * transposed store wanting the load transposed): then the data moves
 * through shared memory instead, the load keeps its coalesced accesses. */
static bool narrower_access(RC *R, const Op *d, const Encoding *e)
{
	return d->operands[0]->type.rank && access_in(R, d, e) < access_in(R, d, d->results[0]->enc);
}

/* A copy of d placed right after it, with the given operands and its
 * (single) result in encoding e. */
static Value *clone_after(RC *R, Op *d, Value **ops, const Encoding *e)
{
	Op *c = ir_clone_before(R->P.f, d, d->next, ops);
	if (!c) {
		R->P.oom = true;
		return NULL;
	}
	for (int i = 0; i < c->n_results; i++)
		c->results[i]->enc = e;
	return c->results[0];
}

/* v in encoding e, recomputed from cheap ops where it can be; `at` is the
 * conversion being removed, `limit` the size above which a conversion left
 * on the way is no better than the one removed. NULL when it cannot. */
static Value *remat(RC *R, Value *v, const Encoding *e, const Op *at, int64_t limit)
{
	if (!is_block(v) || enc_equiv(v->enc, e, v->type, R->P.f->num_warps))
		return v;
	Value *m = memo_get(R, v, e);
	if (m)
		return m;
	Op *d = v->def;
	/* a constant, an arange or a scalar's splat costs nothing to make again:
	 * never a conversion left at one for want of budget */
	bool leaf = d && (d->code == OP_CONST || d->code == OP_ARANGE ||
	                  (d->code == OP_SPLAT && !is_block(d->operands[0])));
	if ((!leaf && --R->budget < 0) || !d || d->n_results != 1)
		goto boundary;
	Value *ops[8];
	if (d->n_operands > 8)
		goto boundary;
	switch (d->code) {
	case OP_CONVERT_LAYOUT: {
		Value *x = remat(R, d->operands[0], e, at, limit);
		if (x)
			return x;
		goto boundary;
	}
	case OP_CONST:
	case OP_ARANGE:
		break;
	case OP_SPLAT:
		break;
	case OP_LOAD:
		if (d->attr[3] || v->uses > 1 || writes_between(d, at) || narrower_access(R, d, e))
			goto boundary;
		break;
	default:
		if (!(op_flags(d->code) & OPF_ELEMWISE) && d->code != OP_HINT && !lp_is_shape_op(d->code))
			goto boundary;
		if (d->code == OP_SPLIT)
			goto boundary;
		break;
	}
	for (int i = 0; i < d->n_operands; i++) {
		Value *x = d->operands[i];
		if (!is_block(x)) {
			ops[i] = x;
			continue;
		}
		const Encoding *w = lp_is_shape_op(d->code) ? lp_shape_backward(&R->P, d, e) : e;
		if (!w)
			goto boundary;
		ops[i] = remat(R, x, w, at, limit);
		if (!ops[i])
			goto boundary;
	}
	Value *c = clone_after(R, d, ops, e);
	if (c)
		memo_put(R, v, e, c);
	if (c && d->code == OP_LOAD) {
		if (R->n_moved == R->cap_moved) {
			int cap = R->cap_moved ? 2 * R->cap_moved : 16;
			Op **n = realloc(R->moved_loads, (size_t)cap * sizeof *n);
			if (!n) {
				R->P.oom = true;
				return c;
			}
			R->moved_loads = n;
			R->cap_moved = cap;
		}
		R->moved_loads[R->n_moved++] = d;
	}
	return c;
boundary:
	/* a conversion here pays when the block is smaller than the one at `at` */
	if (type_numel(v->type) < limit && d) {
		Op *anchor = d->next;
		Value *c = lp_convert_before(&R->P, anchor, v, e);
		memo_put(R, v, e, c);
		return c;
	}
	return NULL;
}

static void replace_all(IrFunc *f, Value *from, Value *to) { ir_replace_uses(f, from, to); }

/* The low index bits a thread holds in registers: vectors of consecutive
 * elements it can move to and from shared memory at once. In the first
 * registers (anyplace false: what cp.async and the dot operands' stores
 * take), or anywhere among them (convert.c gathers those registers; a
 * transposed tile whose threads hold 2-D blocks moves vectors both ways). */
static int contiguous_regs(const Lin *l, bool anyplace)
{
	int v = 0;
	for (bool found = true; found;) {
		found = false;
		for (int r = 0; r < l->n_reg && !found; r++)
			found = l->reg[r] == v && (anyplace || r == v);
		v += found;
	}
	return v;
}

/* A basis over GF(2), kept reduced: basis_add tells whether x was
 * independent of what it holds (and then holds it too). */
typedef struct Basis {
	uint32_t v[32];
	int n;
} Basis;

static uint32_t reduce_by(const Basis *b, uint32_t x)
{
	for (int i = 0; i < b->n; i++)
		if ((x ^ b->v[i]) < x)
			x ^= b->v[i];
	return x;
}

static bool basis_add(Basis *b, uint32_t x)
{
	x = reduce_by(b, x);
	if (!x)
		return false;
	int i = b->n++;
	b->v[i] = x;
	/* sorted by leading bit, highest first, so that reduce_by works */
	for (; i > 0 && b->v[i] > b->v[i - 1]; i--) {
		uint32_t t = b->v[i];
		b->v[i] = b->v[i - 1];
		b->v[i - 1] = t;
	}
	return true;
}

/* The scratch of a conversion: address = index XOR the swizzle of its bits.
 * One access of a warp is free of bank conflicts when its lanes that reach
 * different 4-byte words reach different banks: over GF(2), the lanes' word
 * images must stay independent once cut to the 5 bank bits (lanes of one
 * word share it). Going through each side's lanes (those on bank bits
 * first: they cannot move), a lane whose word is new but whose bank is not
 * gets a bank bit XORed into its address. Only index bits above the bank
 * bits are changed, and only bank bits are XORed in, so the map stays one
 * to one; vectors of vec elements stay whole. tests/ir/banks_test.c replays
 * every conversion of the examples against this. */
static const Encoding *scratch_for(LP *P, const Lin *src, const Lin *dst, const Encoding *dst_enc, Type t,
                                   bool allow_ldmatrix)
{
	Encoding s;
	memset(&s, 0, sizeof s);
	s.kind = ENC_SHARED;
	int bits = 0;
	for (int d = 0; d < t.rank; d++)
		bits += log2i(t.shape[d]);
	s.n_index_bits = bits;
	int eb = type_bytes(type_elem(t));
	if (eb > 8)
		eb = 8;
	/* where each bit of the linear index lands in the address before the
	 * swizzle: itself (the tile row-major), or, for a B operand stored
	 * K-major, K's bits low and N's above them */
	int ab[LIN_MAX_BITS];
	for (int j = 0; j < bits; j++)
		ab[j] = j;
	bool anyplace = !dst_enc || dst_enc->kind != ENC_DOT_OPERAND;
	int vb[2] = {contiguous_regs(src, anyplace), contiguous_regs(dst, anyplace)};
	/* an mma operand whose 32-bit registers are k_width elements of one
	 * row (A) or column (B) is read with ldmatrix: each lane gives the
	 * address of a row of 16 bytes (A: 16 / eb k of one m; B of 16-bit
	 * elements: 8 n of one k, transposed on the way; B K-major: 16 / eb k
	 * of one n, as they lie); the 8 lanes of one matrix are its rows.
	 * ldmatrix transposes 16-bit elements only: a B of 8-bit or 32-bit
	 * elements needs its tile K-major. Its matrices are 8 rows of 16 bytes,
	 * A's two of a 16-row tile: a padded operand (A of fewer than 16 rows,
	 * B of fewer than 8 columns) is read with plain loads */
	Lin rows = *dst;
	int rb = log2i(16 / eb); /* index bits of a 16-byte row */
	if (allow_ldmatrix && dst_enc && dst_enc->kind == ENC_DOT_OPERAND && eb * dst_enc->k_width == 4 &&
	    t.shape[1] >= 8 && (dst_enc->op_idx == 1 || (t.shape[1] >= 16 / eb && t.shape[0] >= 16))) {
		int rows_dim = 0;
		s.ldmatrix = dst_enc->op_idx == 0 ? 1 : 2;
		/* a B tile whose registers run along K (attention's K^T) is
		 * stored as it was loaded, 16 bytes a store (or a cp.async), and
		 * read without .trans */
		int nb = log2i(t.shape[1]), kb = log2i(t.shape[0]), along_k = 0;
		while (s.ldmatrix == 2 && along_k < rb && along_k < src->n_reg && src->reg[along_k] == lin_bit(t, 0, along_k))
			along_k++;
		/* an A tile whose registers run along M (a transposed load: the
		 * weight gradient's x^T) is stored as loaded, M-major, and read
		 * with .trans: rows of 8 m of one k (16-bit elements only) */
		int along_m = 0;
		while (s.ldmatrix == 1 && eb == 2 && along_m < rb && along_m < src->n_reg &&
		       src->reg[along_m] == lin_bit(t, 0, along_m))
			along_m++;
		if ((along_k == rb || along_m == rb) && t.shape[0] >= 2 << rb) {
			s.ldmatrix = s.ldmatrix == 1 ? 4 : 3;
			rows_dim = 1;
			for (int j = 0; j < bits; j++)
				ab[j] = j < nb ? j + kb : j - nb;
		}
		if (s.ldmatrix == 2 && eb != 2) {
			s.ldmatrix = 0; /* plain loads */
		} else {
			vb[1] = rb;
			for (int i = 0; i < 5; i++)
				rows.lane[i] = (int8_t)(i < 3 ? lin_bit(t, rows_dim, i) : -1);
		}
	}
	if (s.ldmatrix >= 3) { /* the store's vector: registers whose addresses run on */
		vb[0] = 0;
		while (vb[0] < src->n_reg && ab[src->reg[vb[0]]] == vb[0])
			vb[0]++;
	}
	for (int i = 0; i < 2; i++)
		while (vb[i] > 0 && (1 << vb[i]) * eb > 16)
			vb[i]--;
	s.vec = 1 << vb[0];
	s.load_vec = 1 << vb[1];
	/* element address bits: below `sub` inside a word; the word's low 5 bits its bank */
	int sub = eb >= 4 ? 0 : log2i(4 / eb), word_shift = eb > 4 ? 1 : 0;
	int lo_target = vb[0] > vb[1] ? vb[0] : vb[1]; /* XOR targets keep vectors and words whole */
	if (lo_target < sub)
		lo_target = sub;
	uint32_t img[LIN_MAX_BITS];
	for (int j = 0; j < bits; j++)
		img[j] = 1u << ab[j];
	const Lin *side[2] = {src, &rows};
	bool conflicts = false;
	for (int round = 0; round < 2; round++)
		for (int si = 0; si < 2; si++) {
			const Lin *l = side[si];
			int access = (1 << vb[si]) * eb;
			int lanes = access <= 4 ? 5 : access == 8 ? 4 : 3; /* lanes of one wavefront */
			Basis words = {.n = 0}, banks = {.n = 0};
			for (int i = 0; i < 2 * lanes; i++) {
				int j = l->lane[i % lanes];
				if (j < 0 || (i < lanes) != (ab[j] < sub + 5))
					continue;
				uint32_t w = (img[j] >> sub) << word_shift; /* 8-byte elements: two words */
				if (!reduce_by(&words, w))
					continue; /* a word already reached: no new bank needed */
				uint32_t bk = w & 31;
				if (reduce_by(&banks, bk)) {
					basis_add(&words, w);
					basis_add(&banks, bk);
					continue;
				}
				bool fixed = false;
				for (int tb = lo_target; tb < sub + 5 && ab[j] >= sub + 5 && !fixed; tb++) {
					uint32_t cand = img[j] ^ (1u << tb);
					uint32_t cw = (cand >> sub) << word_shift;
					if (reduce_by(&banks, cw & 31)) {
						img[j] = cand;
						basis_add(&words, cw);
						basis_add(&banks, cw & 31);
						fixed = true;
					}
				}
				if (!fixed && round == 1)
					conflicts = true;
			}
		}
	/* ldmatrix keeps 8 elements of a row together, which leaves fewer bank
	 * bits to swizzle: where that is not enough for the other side, plain
	 * loads without conflicts are worth more */
	if (conflicts && s.ldmatrix)
		return scratch_for(P, src, dst, dst_enc, t, false);
	for (int j = 0; j < bits; j++)
		s.swizzle[j] = img[j] ^ (1u << j);
	return lp_chk(P, enc_intern(P->f, &s));
}

/* The scratch a wgmma operand goes through: A (M x K) with K's elements
 * adjacent; B (K x N) along N, or along K where the registers it comes
 * from run along K (attention's K^T), so stores stay 16 bytes wide. The
 * row width is the widest swizzle the tile allows (B along N: no wider
 * than the instruction's N, whose start must begin a row). */
static const Encoding *wgmma_scratch(LP *P, const Lin *src, Type t, const Encoding *operand)
{
	Encoding e;
	if (!wgmma_operand_layout(&e, src, t, operand->op_idx, operand->parent->instr_n))
		return NULL;
	return lp_chk(P, enc_intern(P->f, &e));
}

/* Conversions inside a loop of values from outside it are done once,
 * before the loop (attention's q as a dot operand). */
static void hoist_conversions(Op *loop)
{
	for (int i = 0; i < loop->n_regions; i++)
		for (Op *op = loop->regions[i].first; op;) {
			Op *next = op->next;
			const Value *x = op->code == OP_CONVERT_LAYOUT ? op->operands[0] : NULL;
			bool outside = x && (x->def ? x->def->parent != &loop->regions[i] : x->owner != &loop->regions[i]);
			/* from outside: defined in an enclosing region, before the loop */
			if (outside && x->def) {
				const Region *r = x->def->parent;
				const Op *p = loop;
				while (p && p->parent != r)
					p = p->parent ? p->parent->parent : NULL;
				outside = p != NULL;
			} else if (outside) {
				outside = false; /* a region argument of an enclosing op: leave it */
			}
			if (outside) {
				ir_unlink(op);
				ir_link_before(op, loop);
			}
			op = next;
		}
}

static void rc_region(RC *R, Region *r)
{
	for (Op *op = r->first; op && !R->P.oom;) {
		Op *next = op->next;
		for (int i = 0; i < op->n_regions; i++)
			rc_region(R, &op->regions[i]);
		if (op->code == OP_FOR || op->code == OP_WHILE)
			hoist_conversions(op);
		if (op->code == OP_CONVERT_LAYOUT) {
			Value *x = op->operands[0], *y = op->results[0];
			Value *to = NULL;
			if (enc_equiv(x->enc, y->enc, x->type, R->P.f->num_warps)) {
				to = x;
			} else {
				R->budget = REMAT_BUDGET;
				to = remat(R, x, y->enc, op, type_numel(y->type));
				/* the same conversion, found again in the chain, is no gain */
				if (to && to->def && to->def->code == OP_CONVERT_LAYOUT && to->def->operands[0] == x)
					to = NULL;
			}
			if (to && to != y) {
				replace_all(R->P.f, y, to);
				ir_remove(op);
			}
		}
		op = next;
	}
}

static void scratch_region(RC *R, Region *r)
{
	for (Op *op = r->first; op && !R->P.oom; op = op->next) {
		for (int i = 0; i < op->n_regions; i++)
			scratch_region(R, &op->regions[i]);
		if (op->code != OP_CONVERT_LAYOUT)
			continue;
		Lin a, b;
		Type t = op->results[0]->type;
		int w = R->P.f->num_warps;
		op->scratch = NULL;
		if (!enc_lin(op->operands[0]->enc, t, w, &a) || !enc_lin(op->results[0]->enc, t, w, &b))
			continue;
		bool same = a.n_warp == b.n_warp && memcmp(a.lane, b.lane, sizeof a.lane) == 0 &&
		            memcmp(a.warp, b.warp, (size_t)a.n_warp) == 0;
		const Encoding *de = op->results[0]->enc;
		bool reg_a = same && de && de->op_idx == 0 && type_bytes(type_elem(t)) == 2; /* A in registers: 16-bit */
		if (de && de->kind == ENC_DOT_OPERAND && de->parent->version == 3 && !reg_a)
			op->scratch = wgmma_scratch(&R->P, &a, op->results[0]->type, de);
		else if (!same)
			op->scratch = scratch_for(&R->P, &a, &b, op->results[0]->enc, t, true);
	}
}

bool ir_remove_conversions(IrFunc *f, Diag *diag)
{
	if (!f->gpu)
		return true;
	RC R = {.P = {.f = f, .T = 32 * f->num_warps}};
	R.P.ax = axis_analyze(f);
	R.P.n_ax = R.P.ax ? f->n_values : 0;
	rc_region(&R, &f->body);
	/* the ops left without users, then the loads they were the only users of */
	ir_dce(f, diag);
	for (int i = 0; i < R.n_moved; i++)
		if (!R.moved_loads[i]->results[0]->uses)
			ir_remove(R.moved_loads[i]);
	ir_dce(f, diag);
	scratch_region(&R, &f->body);
	free(R.P.ax);
	free(R.moved_loads);
	free(R.memo);
	if (R.P.oom)
		diag_plain(diag, DIAG_ERROR, "out of memory removing conversions in '%s'", f->name);
	return !R.P.oom;
}
