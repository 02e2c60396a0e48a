/* layouts.c: the layouts pass, which makes tile IR into GPU IR. It gives
 * every block value an encoding, in three steps.
 *   1. Forward, in program order: loads, stores and atomics take a
 *      coalesced blocked encoding (ordered by the pointers' contiguity,
 *      16 bytes a thread where the axis analysis allows); a reduction's
 *      results take the slice of its operand's encoding; a dot takes mma
 *      where tensor cores apply; element-wise and shape ops follow their
 *      operands; a loop-carried value follows what the loop yields.
 *      Constants, aranges and splats are left free.
 *   2. Backward: a free value takes the encoding its user wants (a pointer
 *      block built from aranges takes its load's coalesced encoding).
 *   3. Every operand whose encoding is not the one its op needs gets an
 *      explicit convert_layout in front of the op. */
#include "gpu/layout_int.h"

#include <stdlib.h>
#include <string.h>

const Encoding *lp_chk(LP *P, const Encoding *e)
{
	if (!e)
		P->oom = true;
	return e;
}

static const Encoding *default_enc(LP *P, Type t)
{
	int n = (int)type_numel(t), vec = n / P->T;
	if (vec > 4)
		vec = 4;
	return lp_chk(P, enc_default(P->f, t, vec < 1 ? 1 : vec, NULL));
}

/* The coalesced encoding of accesses through pointer block p: dimensions
 * ordered by contiguity (the last first among equals), as many elements a
 * thread along the most contiguous one as a 16-byte access allows, spread
 * over all threads first. coalesced_order: its order and that width. */
static int coalesced_order(LP *P, const Value *p, int *order)
{
	Type t = p->type;
	int n = 0;
	bool used[BLK_MAX_RANK] = {0};
	for (int k = 0; k < t.rank; k++) {
		int best = -1;
		for (int d = t.rank - 1; d >= 0; d--)
			if (!used[d] && (best < 0 || P->ax[p->id].contig[d] > P->ax[p->id].contig[best]))
				best = d;
		used[best] = true;
		order[n++] = best;
	}
	int vec = axis_access_width(P->ax, p, NULL, order[0]);
	int per_thread = (int)type_numel(t) / P->T;
	if (vec > per_thread)
		vec = per_thread < 1 ? 1 : per_thread;
	return vec;
}

static const Encoding *coalesced(LP *P, const Value *p)
{
	if (p->id >= P->n_enc) /* made by this pass: no axis facts; it has its encoding */
		return p->enc;
	int order[BLK_MAX_RANK], vec = coalesced_order(P, p, order);
	return lp_chk(P, enc_default(P->f, p->type, vec, order));
}

/* ---- loads that a transposed store reads ------------------------------------------
 *
 * A tile loaded along one dimension and stored (through trans, permute and
 * element-wise ops) along another moves through shared memory. Its load
 * then gives each thread a small 2-D block: the 16-byte run along the
 * pointers' contiguous dimension and a run along the dimension the store
 * goes along, so that both sides of the conversion move vectors through the
 * scratch (convert.c) while the global load and store stay 16 bytes wide. */

/* Marks the load(s) v comes from as read by a store running along their
 * dimension d, vec elements a thread. */
static void want_wide(LP *P, const Value *v, int d, int vec, int depth)
{
	const Op *op = v->def;
	if (!op || depth > 8 || v->id >= P->n_enc)
		return;
	if (op->code == OP_LOAD) {
		if (is_block(op->operands[0]) && !P->wide_vec[v->id]) {
			P->wide_dim[v->id] = (int8_t)d;
			P->wide_vec[v->id] = (int8_t)vec;
		}
		return;
	}
	if (op->code == OP_TRANS) {
		want_wide(P, op->operands[0], (int)op->attr[d], vec, depth + 1);
		return;
	}
	if (!(op_flags(op->code) & OPF_ELEMWISE))
		return;
	for (int i = 0; i < op->n_operands; i++)
		if (is_block(op->operands[i]) && op->operands[i]->type.rank == v->type.rank)
			want_wide(P, op->operands[i], d, vec, depth + 1);
}

static void find_wide(LP *P, const Region *r)
{
	for (const Op *op = r->first; op && !P->oom; op = op->next) {
		for (int i = 0; i < op->n_regions; i++)
			find_wide(P, &op->regions[i]);
		if (op->code != OP_STORE || !is_block(op->operands[0]) || op->operands[0]->id >= P->n_enc ||
		    (op->attr[0] & MEMF_TMA))
			continue;
		int order[BLK_MAX_RANK], vec = coalesced_order(P, op->operands[0], order);
		if (vec > 1)
			want_wide(P, op->operands[1], order[0], vec, 0);
	}
}

/* A load's encoding: coalesced, widened for a transposed store. */
static const Encoding *load_enc(LP *P, const Op *op)
{
	const Encoding *e = coalesced(P, op->operands[0]);
	const Value *res = op->results[0];
	if (!e || e->kind != ENC_BLOCKED || res->id >= P->n_enc || !P->wide_vec[res->id])
		return e;
	Type t = res->type;
	int d = P->wide_dim[res->id], fast = e->order[0], r = t.rank;
	int room = (int)type_numel(t) / P->T / e->spt[fast], w = P->wide_vec[res->id];
	if (d == fast || e->spt[d] > 1)
		return e;
	if (w > room)
		w = room;
	if (w > t.shape[d])
		w = t.shape[d];
	if (w < 2)
		return e;
	int spt[BLK_MAX_RANK], tpw[BLK_MAX_RANK], wpc[BLK_MAX_RANK], left[BLK_MAX_RANK];
	for (int i = 0; i < r; i++) {
		spt[i] = i == d ? w : e->spt[i];
		left[i] = t.shape[i] / spt[i];
	}
	/* lanes, then warps, along the order; what is left replicates along the slowest */
	for (int pass = 0; pass < 2; pass++) {
		int n = pass ? P->f->num_warps : 32, *out = pass ? wpc : tpw;
		for (int i = 0; i < r; i++) {
			int k = 1, dd = e->order[i];
			while (k < n && k < left[dd])
				k *= 2;
			out[dd] = k;
			n /= k;
			left[dd] /= k;
		}
		out[e->order[r - 1]] *= n;
	}
	return lp_chk(P, enc_blocked(P->f, r, spt, tpw, wpc, e->order));
}

/* ---- shape ops as bit maps ------------------------------------------------------
 *
 * Each shape op maps bits of its result's linear index to bits of its
 * operand's: MAP_DROP for a bit the operand does not have (a broadcast
 * dimension), MAP_SEL for the bit that picks the operand (join, cat). */
bool shape_bit_map(const Op *op, int out_bit, int *in_bit)
{
	Type in = op->operands[0]->type, out = op->results[0]->type;
	if (out_bit < 0) {
		*in_bit = out_bit;
		return true;
	}
	switch (op->code) {
	case OP_EXPAND_DIMS:
	case OP_RESHAPE:
	case OP_HINT:
	case OP_CONVERT_LAYOUT:
		*in_bit = out_bit;
		return true;
	case OP_BROADCAST:
	case OP_TRANS:
		for (int d = 0; d < out.rank; d++) {
			int lo = lin_bit(out, d, 0), bits = log2i(out.shape[d]);
			if (out_bit < lo || out_bit >= lo + bits)
				continue;
			if (op->code == OP_BROADCAST)
				*in_bit = in.shape[d] == 1 ? MAP_DROP : lin_bit(in, d, out_bit - lo);
			else
				*in_bit = lin_bit(in, (int)op->attr[d], out_bit - lo);
			return true;
		}
		return false;
	case OP_JOIN:
		*in_bit = out_bit == 0 ? MAP_SEL : out_bit - 1;
		return true;
	case OP_CAT: {
		int top = lin_bit(in, 0, log2i(in.shape[0]));
		*in_bit = out_bit == top ? MAP_SEL : out_bit;
		return true;
	}
	case OP_SPLIT:
		*in_bit = out_bit + 1;
		return true;
	default:
		return false;
	}
}

bool lp_is_shape_op(OpCode c)
{
	return c == OP_EXPAND_DIMS || c == OP_RESHAPE || c == OP_BROADCAST || c == OP_TRANS || c == OP_JOIN ||
	       c == OP_CAT || c == OP_SPLIT;
}

/* Whether the op moves no data between threads from in to out: every lane
 * and warp bit of the result means the same as the operand's. */
bool shape_in_registers(const Op *op, const Lin *in, const Lin *out)
{
	for (int i = 0; i < 5 + out->n_warp; i++) {
		int ob = i < 5 ? out->lane[i] : out->warp[i - 5];
		int ib = i < 5 ? in->lane[i] : in->warp[i - 5];
		int m;
		if (!shape_bit_map(op, ob, &m))
			return false;
		if (m == MAP_SEL)
			return false;
		if (m == MAP_DROP)
			m = -1;
		if (m != ib)
			return false;
	}
	return true;
}

/* The operand's Lin that makes the op register-only for result Lin out. */
static bool lin_backward(const Op *op, const Lin *out, Lin *in)
{
	memset(in, -1, sizeof *in);
	in->n_lane = 5;
	in->n_warp = out->n_warp;
	in->n_reg = 0;
	int m;
	for (int i = 0; i < 5 + out->n_warp; i++) {
		int ob = i < 5 ? out->lane[i] : out->warp[i - 5];
		if (!shape_bit_map(op, ob, &m) || m == MAP_SEL)
			return false;
		int8_t *slot = i < 5 ? &in->lane[i] : &in->warp[i - 5];
		*slot = (int8_t)(m == MAP_DROP ? -1 : m);
	}
	for (int i = 0; i < out->n_reg; i++) {
		if (!shape_bit_map(op, out->reg[i], &m))
			return false;
		if (m >= 0)
			in->reg[in->n_reg++] = (int8_t)m;
	}
	if (op->code == OP_SPLIT) /* the bit split off stays in registers, first */
	{
		memmove(in->reg + 1, in->reg, (size_t)in->n_reg);
		in->reg[0] = 0;
		in->n_reg++;
	}
	return true;
}

/* The result's Lin that makes the op register-only for operand Lin in. */
static bool lin_forward(const Op *op, const Lin *in, Lin *out)
{
	Type ot = op->results[0]->type;
	int bits = 0;
	for (int d = 0; d < ot.rank; d++)
		bits += log2i(ot.shape[d]);
	int8_t inv[64];
	bool have[64] = {0};
	memset(inv, -1, sizeof inv);
	int sel = -1, m;
	for (int b = 0; b < bits; b++) {
		if (!shape_bit_map(op, b, &m))
			return false;
		if (m >= 0)
			inv[m] = (int8_t)b;
		else if (m == MAP_SEL)
			sel = b;
	}
	memset(out, -1, sizeof *out);
	out->n_lane = 5;
	out->n_warp = in->n_warp;
	out->n_reg = 0;
	if (sel >= 0)
		out->reg[out->n_reg++] = (int8_t)sel;
	for (int i = 0; i < in->n_reg; i++) {
		if (op->code == OP_SPLIT && in->reg[i] == 0)
			continue;
		if (in->reg[i] >= 0 && inv[in->reg[i]] < 0)
			return false;
		out->reg[out->n_reg++] = inv[in->reg[i]];
	}
	for (int i = 0; i < 5 + in->n_warp; i++) {
		int ib = i < 5 ? in->lane[i] : in->warp[i - 5];
		if (op->code == OP_SPLIT && ib == 0)
			return false; /* the split bit is spread over threads */
		int8_t ob = ib >= 0 ? inv[ib] : -1;
		if (ib >= 0 && ob < 0)
			return false;
		if (i < 5)
			out->lane[i] = ob;
		else
			out->warp[i - 5] = ob;
	}
	for (int i = 0; i < out->n_reg; i++)
		have[out->reg[i]] = true;
	for (int i = 0; i < 5 + out->n_warp; i++) {
		int ob = i < 5 ? out->lane[i] : out->warp[i - 5];
		if (ob >= 0)
			have[ob] = true;
	}
	/* bits the operand lacks (broadcast dimensions) fill replicated lanes
	 * and warps first, lowest first, then registers */
	for (int b = 0; b < bits; b++) {
		if (have[b])
			continue;
		bool placed = false;
		for (int i = 0; i < 5 + out->n_warp && !placed; i++) {
			int8_t *slot = i < 5 ? &out->lane[i] : &out->warp[i - 5];
			if (*slot < 0 && op->code == OP_BROADCAST) {
				*slot = (int8_t)b;
				placed = true;
			}
		}
		if (!placed && out->n_reg < LIN_MAX_BITS)
			out->reg[out->n_reg++] = (int8_t)b;
	}
	return true;
}

/* An encoding equal to e written for another op's shape: blocked ones
 * permuted through trans, grown through expand_dims. NULL if none. */
static const Encoding *blocked_through(LP *P, const Op *op, const Encoding *e, bool forward)
{
	if (e->kind != ENC_BLOCKED)
		return NULL;
	int spt[BLK_MAX_RANK], tpw[BLK_MAX_RANK], wpc[BLK_MAX_RANK], ord[BLK_MAX_RANK];
	int r = e->rank;
	if (op->code == OP_TRANS) {
		int perm[BLK_MAX_RANK], inv[BLK_MAX_RANK];
		for (int d = 0; d < r; d++) {
			perm[d] = (int)op->attr[d]; /* result dim d is operand dim perm[d] */
			inv[perm[d]] = d;
		}
		for (int d = 0; d < r; d++) {
			int s = forward ? perm[d] : inv[d];
			spt[d] = e->spt[s], tpw[d] = e->tpw[s], wpc[d] = e->wpc[s];
			ord[d] = forward ? inv[e->order[d]] : perm[e->order[d]];
		}
		return lp_chk(P, enc_blocked(P->f, r, spt, tpw, wpc, ord));
	}
	if (op->code == OP_EXPAND_DIMS && forward && r + 1 <= BLK_MAX_RANK) {
		int axis = (int)op->attr[0];
		for (int d = 0, s = 0; d <= r; d++) {
			if (d == axis) {
				spt[d] = tpw[d] = wpc[d] = 1;
				continue;
			}
			spt[d] = e->spt[s], tpw[d] = e->tpw[s], wpc[d] = e->wpc[s];
			s++;
		}
		for (int i = 0; i < r; i++)
			ord[i] = e->order[i] >= axis ? e->order[i] + 1 : e->order[i];
		ord[r] = axis;
		return lp_chk(P, enc_blocked(P->f, r + 1, spt, tpw, wpc, ord));
	}
	if (op->code == OP_BROADCAST)
		return e;
	return NULL;
}

/* The result's encoding that keeps shape op `op` in registers, given its
 * operand's; NULL when there is none. */
static const Encoding *shape_forward(LP *P, const Op *op, const Encoding *in)
{
	const Value *x = op->operands[0], *y = op->results[0];
	if (op->code == OP_EXPAND_DIMS && in->kind == ENC_SLICE && in->dim == op->attr[0] && in->parent->kind == ENC_BLOCKED)
		return in->parent;
	Lin li, lo, lc;
	if (!enc_lin(in, x->type, P->f->num_warps, &li))
		return NULL;
	const Encoding *c = blocked_through(P, op, in, true);
	if (c && enc_lin(c, y->type, P->f->num_warps, &lc) && shape_in_registers(op, &li, &lc))
		return c;
	if (!lin_forward(op, &li, &lo))
		return NULL;
	return lp_chk(P, enc_canonical(P->f, lp_chk(P, enc_linear(P->f, &lo)), y->type));
}

/* The operand's encoding that keeps shape op `op` in registers, given the
 * result's; NULL when there is none. */
const Encoding *lp_shape_backward(LP *P, const Op *op, const Encoding *out)
{
	const Value *x = op->operands[0], *y = op->results[0];
	if (op->code == OP_EXPAND_DIMS && out->kind == ENC_BLOCKED)
		return lp_chk(P, enc_slice(P->f, (int)op->attr[0], out));
	Lin lo, li, lc;
	if (!enc_lin(out, y->type, P->f->num_warps, &lo))
		return NULL;
	const Encoding *c = blocked_through(P, op, out, false);
	if (c && enc_lin(c, x->type, P->f->num_warps, &lc) && shape_in_registers(op, &lc, &lo))
		return c;
	if (!lin_backward(op, &lo, &li))
		return NULL;
	return lp_chk(P, enc_canonical(P->f, lp_chk(P, enc_linear(P->f, &li)), x->type));
}

/* ---- dot ----------------------------------------------------------------------- */

/* The k_width of a dot's mma.sync operands (elements a thread holds along
 * K in one 32-bit register), or 0 where it stays on FMAs: f16 and bf16
 * inputs of one kind with an f32 accumulator, m16n8k16 (2); f32 inputs
 * rounded to tf32 (input_precision tf32 or tf32x3; "ieee" stays exact),
 * m16n8k8 (1); i8 into i32, and fp8 (e4m3, e5m2, mixed) into f32 from
 * sm_89 on, m16n8k32 (4). K at least one step (8 kw); M under 16 and N
 * under 8 are padded to the instruction's 16 x 8 (encoding.c's mma_lin,
 * dot_mma.c). */
static int dot_mma_width(const IrFunc *f, const Op *op)
{
	if (f->sm && f->sm < 80)
		return 0; /* mma.sync m16n8k* is sm_80's */
	Type a = op->operands[0]->type, b = op->operands[1]->type, c = op->results[0]->type;
	if (a.ptr || b.ptr || c.ptr)
		return 0;
	bool fp8a = a.scalar == SK_F8E4M3 || a.scalar == SK_F8E5M2, fp8b = b.scalar == SK_F8E4M3 || b.scalar == SK_F8E5M2;
	int kw = 0;
	if (a.scalar == b.scalar && (a.scalar == SK_F16 || a.scalar == SK_BF16) && c.scalar == SK_F32)
		kw = 2;
	else if (a.scalar == SK_F32 && b.scalar == SK_F32 && c.scalar == SK_F32 && op->attr[0] != DOT_IEEE)
		kw = 1;
	else if (a.scalar == SK_I8 && b.scalar == SK_I8 && c.scalar == SK_I32)
		kw = 4;
	else if (fp8a && fp8b && c.scalar == SK_F32 && f->sm >= 89)
		kw = 4; /* mma.sync of e4m3 and e5m2 is sm_89's */
	if (!kw || a.shape[1] < 8 * kw)
		return 0;
	return kw;
}

static bool dot_uses_mma(const IrFunc *f, const Op *op) { return dot_mma_width(f, op) > 0; }

static bool op_depends_on(const Op *op, const Value *x, bool *seen, int n);

/* Whether v depends on x: through the operands of its defining op and of
 * the ops nested in that op's regions (an if's yields); seen: a flag per
 * value id, so each value is looked at once. */
static bool depends_on(const Value *v, const Value *x, bool *seen, int n)
{
	if (v == x)
		return true;
	if (!v->def || v->id >= n || seen[v->id])
		return false;
	seen[v->id] = true;
	return op_depends_on(v->def, x, seen, n);
}

static bool op_depends_on(const Op *op, const Value *x, bool *seen, int n)
{
	for (int i = 0; i < op->n_operands; i++)
		if (depends_on(op->operands[i], x, seen, n))
			return true;
	for (int i = 0; i < op->n_regions; i++)
		for (const Op *o = op->regions[i].first; o; o = o->next)
			if (op_depends_on(o, x, seen, n))
				return true;
	return false;
}

/* Whether a dot is chained to another dot of its region (attention: the
 * scores' dot feeds the probabilities' dot through the row statistics).
 * Its warps then go along M alone, as the other's do: the first's result
 * reaches the second's A operand, and the rows' reductions in between,
 * without leaving the warp that holds the rows. */
static bool dot_is_chained(LP *P, const Op *dot)
{
	int n = P->f->n_values;
	bool *seen = calloc((size_t)n + 1, sizeof *seen);
	if (!seen) {
		P->oom = true;
		return false;
	}
	bool chained = false;
	for (const Op *o = dot->parent->first; o && !chained; o = o->next) {
		if (o == dot || o->code != OP_DOT)
			continue;
		memset(seen, 0, (size_t)n + 1);
		chained = op_depends_on(o, dot->results[0], seen, n); /* o after dot, using its result */
		memset(seen, 0, (size_t)n + 1);
		chained = chained || op_depends_on(dot, o->results[0], seen, n); /* dot after o */
	}
	free(seen);
	return chained;
}

/* sm_90a: wgmma, where the tile has a 64-row block for each warpgroup
 * (of 4 warps) along M; warpgroups go along M first (B, read from shared
 * memory, is the same for all of them), and along N (blocks of at least
 * 16 columns) when M runs out. One instruction covers a warpgroup's
 * columns up to 256. NULL: mma.sync instead. */
static const Encoding *dot_wgmma(LP *P, const Op *op)
{
	Type a = op->operands[0]->type, c = op->results[0]->type;
	int M = c.shape[0], N = c.shape[1], K = a.shape[1], W = P->f->num_warps;
	if (P->f->sm != 90 || !P->f->sm_a || W % 4 || M < 64 || N < 8 || K < 16)
		return NULL;
	Type b = op->operands[1]->type;
	bool half = (a.scalar == SK_F16 || a.scalar == SK_BF16) && b.scalar == a.scalar && c.scalar == SK_F32;
	bool fp8 = (a.scalar == SK_F8E4M3 || a.scalar == SK_F8E5M2) && (b.scalar == SK_F8E4M3 || b.scalar == SK_F8E5M2) &&
	           c.scalar == SK_F32;
	bool i8 = a.scalar == SK_I8 && b.scalar == SK_I8 && c.scalar == SK_I32;
	/* f32 as tf32: wgmma reads each f32 of shared memory truncated, as
	 * input_precision "tf32" means (tf32x3: and its small parts, which the
	 * dot computes into scratches of their own; ieee stays on FMAs) */
	bool tf32 = a.scalar == SK_F32 && b.scalar == SK_F32 && c.scalar == SK_F32 && op->attr[0] != DOT_IEEE;
	if (!half && !tf32 && !((fp8 || i8) && K >= 32))
		return NULL;
	int gm = 1, gn = 1;
	while (gm * gn < W / 4) {
		if (M / (64 * gm) >= 2)
			gm *= 2;
		else if (N / (16 * gn) >= 2 && !dot_is_chained(P, op))
			gn *= 2;
		else
			return NULL;
	}
	int instr_n = N / gn > 256 ? 256 : N / gn;
	return lp_chk(P, enc_mma3(P->f, 4 * gm, gn, instr_n));
}

static const Encoding *dot_mma(LP *P, const Op *op)
{
	Type c = op->results[0]->type;
	int M = c.shape[0], N = c.shape[1], W = P->f->num_warps, wm = 1, wn = 1;
	const Encoding *wg = dot_wgmma(P, op);
	if (wg || P->oom)
		return wg;
	if (M >= 16 * W && dot_is_chained(P, op))
		return lp_chk(P, enc_mma(P->f, W, 1));
	while (wm * wn < W) {
		bool m_room = M / (16 * wm) >= 2, n_room = N / (8 * wn) >= 2;
		if (m_room && (!n_room || M / (16 * wm) >= N / (8 * wn)))
			wm *= 2;
		else if (n_room)
			wn *= 2;
		else
			wm *= 2; /* more warps than tiles: replicated */
	}
	return lp_chk(P, enc_mma(P->f, wm, wn));
}

/* ---- step 1: forward ---------------------------------------------------------------- */

static const Encoding *E(LP *P, const Value *v) { return v->id < P->n_enc ? P->enc[v->id] : v->enc; }
static void setE(LP *P, const Value *v, const Encoding *e)
{
	if (is_block(v) && v->id < P->n_enc)
		P->enc[v->id] = e;
}

/* What a reduction along axis leaves of encoding e: a slice of a blocked
 * one, the bit map without the axis otherwise. */
static const Encoding *slice_of(LP *P, const Encoding *e, Type t, int axis)
{
	if (e->kind == ENC_BLOCKED)
		return lp_chk(P, enc_slice(P->f, axis, e));
	Lin in, out;
	if (!enc_lin(e, t, P->f->num_warps, &in))
		return NULL;
	lin_slice(&in, t, axis, &out);
	Type st = t;
	st.rank--;
	for (int d = axis; d < st.rank; d++)
		st.shape[d] = t.shape[d + 1];
	return lp_chk(P, enc_canonical(P->f, lp_chk(P, enc_linear(P->f, &out)), st));
}

static const Encoding *reduce_input(LP *P, const Op *op)
{
	const Encoding *e = E(P, op->operands[0]);
	return e ? e : default_enc(P, op->operands[0]->type);
}

/* sort and topk: the axis fastest, up to 32 elements of it a thread (the
 * compare-exchanges of its low bits stay in registers), then lanes, warps. */
static const Encoding *sort_enc(LP *P, Type t, int axis)
{
	int order[BLK_MAX_RANK], n = 0, vec = (int)type_numel(t) / P->T;
	order[n++] = axis;
	for (int d = t.rank - 1; d >= 0; d--)
		if (d != axis)
			order[n++] = d;
	vec = vec < 1 ? 1 : vec > 32 ? 32 : vec;
	return lp_chk(P, enc_default(P->f, t, vec, order));
}

static void forward_region(LP *P, const Region *r);

static void forward_loop(LP *P, const Op *op)
{
	const Region *body = &op->regions[0];
	int nc = op->n_results;
	for (int i = 0; i < nc; i++)
		setE(P, body->args[1 + i], E(P, op->operands[3 + i]));
	for (int round = 0; round < 3; round++) {
		forward_region(P, body);
		bool moved = false;
		for (int i = 0; i < nc; i++) {
			const Encoding *y = E(P, body->last->operands[i]);
			if (y && y != E(P, body->args[1 + i])) {
				setE(P, body->args[1 + i], y);
				moved = true;
			}
		}
		if (!moved)
			break;
	}
	for (int i = 0; i < nc; i++)
		setE(P, op->results[i], E(P, body->args[1 + i]));
}

static void forward_while(LP *P, const Op *op)
{
	const Region *r0 = &op->regions[0], *r1 = &op->regions[1];
	for (int i = 0; i < r0->n_args; i++)
		setE(P, r0->args[i], E(P, op->operands[i]));
	for (int round = 0; round < 3; round++) {
		forward_region(P, r0);
		for (int i = 0; i < r1->n_args; i++)
			setE(P, r1->args[i], E(P, r0->last->operands[1 + i]));
		forward_region(P, r1);
		bool moved = false;
		for (int i = 0; i < r0->n_args; i++) {
			const Encoding *y = E(P, r1->last->operands[i]);
			if (y && y != E(P, r0->args[i])) {
				setE(P, r0->args[i], y);
				moved = true;
			}
		}
		if (!moved)
			break;
	}
	for (int i = 0; i < op->n_results; i++)
		setE(P, op->results[i], E(P, r1->args[i]));
}

static void forward_op(LP *P, const Op *op)
{
	const Value *res = op->n_results ? op->results[0] : NULL;
	switch (op->code) {
	case OP_CONST:
	case OP_ARANGE:
	case OP_SPLAT:
		return; /* free */
	case OP_LOAD:
	case OP_ATOMIC_RMW:
	case OP_ATOMIC_CAS:
		if (is_block(op->operands[0]))
			setE(P, res, op->code == OP_LOAD ? load_enc(P, op) : coalesced(P, op->operands[0]));
		return;
	case OP_REDUCE: {
		const Encoding *in = reduce_input(P, op);
		for (int i = 0; i < op->n_results; i++)
			setE(P, op->results[i], in ? slice_of(P, in, op->operands[0]->type, (int)op->attr[0]) : NULL);
		return;
	}
	case OP_SCAN: {
		const Encoding *in = reduce_input(P, op);
		for (int i = 0; i < op->n_results; i++)
			setE(P, op->results[i], in);
		return;
	}
	case OP_DOT:
		if (dot_uses_mma(P->f, op)) {
			setE(P, res, dot_mma(P, op));
		} else {
			/* FMAs: the accumulator's encoding, unless it is an mma one
			 * (another dot's result), which says this dot is mma.sync */
			const Encoding *acc = E(P, op->operands[2]);
			setE(P, res, acc && acc->kind != ENC_MMA ? acc : default_enc(P, res->type));
		}
		return;
	case OP_PHILOX:
		for (int i = 0; i < op->n_results; i++)
			setE(P, op->results[i], E(P, op->operands[1]));
		return;
	case OP_SORT:
	case OP_TOPK:
	case OP_HISTOGRAM: /* sort: in place; topk and histogram: through shared memory */
		for (int i = 0; i < op->n_results; i++)
			setE(P, op->results[i], op->code == OP_SORT ? sort_enc(P, res->type, (int)op->attr[0])
			                                            : default_enc(P, op->results[i]->type));
		return;
	case OP_GATHER: /* the result lies as its indices (x is read through shared memory) */
		setE(P, res, E(P, op->operands[1]));
		return;
	case OP_INLINE_ASM: /* every result as the first operand block with an encoding (or free) */
		for (int i = 0; i < op->n_operands; i++)
			if (is_block(op->operands[i]) && E(P, op->operands[i])) {
				for (int j = 0; j < op->n_results; j++)
					setE(P, op->results[j], E(P, op->operands[i]));
				return;
			}
		return;
	case OP_FOR:
		forward_loop(P, op);
		return;
	case OP_WHILE:
		forward_while(P, op);
		return;
	case OP_IF:
		forward_region(P, &op->regions[0]);
		forward_region(P, &op->regions[1]);
		for (int i = 0; i < op->n_results; i++) {
			const Encoding *a = E(P, op->regions[0].last->operands[i]);
			setE(P, op->results[i], a ? a : E(P, op->regions[1].last->operands[i]));
		}
		return;
	default:
		break;
	}
	if (!res || !is_block(res))
		return;
	if (lp_is_shape_op(op->code)) {
		const Encoding *in = E(P, op->operands[0]);
		if (op->code == OP_CAT && (!in || E(P, op->operands[1]) != in))
			in = in ? in : E(P, op->operands[1]);
		if (!in)
			return;
		const Encoding *out = shape_forward(P, op, in);
		if (op->code == OP_SPLIT)
			for (int i = 0; i < op->n_results; i++)
				setE(P, op->results[i], out);
		else
			setE(P, res, out);
		return;
	}
	/* element-wise, hint, convert: the first operand block with an encoding */
	for (int i = 0; i < op->n_operands; i++)
		if (is_block(op->operands[i]) && E(P, op->operands[i])) {
			setE(P, res, E(P, op->operands[i]));
			return;
		}
}

static void forward_region(LP *P, const Region *r)
{
	for (const Op *op = r->first; op; op = op->next)
		forward_op(P, op);
}

/* ---- what an op wants of its operands ------------------------------------------ */

/* The encoding op needs operand i in (NULL: any); for a terminator, i
 * indexes its operands and the parent op decides. */
static const Encoding *want(LP *P, const Op *op, int i)
{
	const Value *x = op->operands[i];
	if (!is_block(x))
		return NULL;
	const Value *res = op->n_results ? op->results[0] : NULL;
	switch (op->code) {
	case OP_ATOMIC_RMW:
		if (i == 1 && (op->attr[3] & MEMF_TMA))
			return NULL; /* a TMA reduction writes its value to shared memory as it lies */
		/* fallthrough */
	case OP_LOAD:
	case OP_ATOMIC_CAS:
		return is_block(op->operands[0]) ? E(P, res) : NULL;
	case OP_STORE:
		if (i == 1 && (op->attr[0] & MEMF_TMA))
			return NULL; /* a TMA store writes its value to shared memory as it lies */
		return is_block(op->operands[0]) ? coalesced(P, op->operands[0]) : NULL;
	case OP_REDUCE:
	case OP_SCAN:
		return reduce_input(P, op);
	case OP_DOT:
		if (dot_uses_mma(P->f, op)) {
			const Encoding *mma = E(P, res);
			if (!mma || mma->kind != ENC_MMA)
				return NULL;
			return i == 2 ? mma : lp_chk(P, enc_dot_operand(P->f, i, mma, dot_mma_width(P->f, op)));
		}
		return i == 2 ? E(P, res) : NULL;
	case OP_PHILOX:
	case OP_GATHER:
		return i == 1 ? E(P, res) : NULL;
	case OP_SORT:
	case OP_TOPK:
		return sort_enc(P, x->type, (int)op->attr[0]);
	case OP_HISTOGRAM: /* the mask laid out as the values */
		return reduce_input(P, op);
	case OP_FOR:
		return i >= 3 ? E(P, op->regions[0].args[i - 2]) : NULL;
	case OP_WHILE:
		return E(P, op->regions[0].args[i]);
	case OP_YIELD:
	case OP_CONDITION: {
		const Op *parent = op->parent->parent;
		if (!parent)
			return NULL;
		if (parent->code == OP_FOR)
			return E(P, op->parent->args[1 + i]);
		if (parent->code == OP_IF)
			return E(P, parent->results[i]);
		if (parent->code == OP_WHILE) {
			if (op->code == OP_CONDITION)
				return i == 0 ? NULL : E(P, parent->regions[1].args[i - 1]);
			return E(P, parent->regions[0].args[i]);
		}
		return NULL; /* reduce and scan regions yield scalars */
	}
	case OP_PRINT:
		for (int j = 0; j < op->n_operands; j++)
			if (is_block(op->operands[j]) && E(P, op->operands[j]))
				return E(P, op->operands[j]);
		return NULL;
	case OP_ASSERT:
		return NULL;
	default:
		break;
	}
	if (!res || !E(P, res))
		return NULL;
	if (lp_is_shape_op(op->code))
		return lp_shape_backward(P, op, E(P, res));
	return E(P, res); /* element-wise, hint, convert */
}

/* ---- step 2: backward -------------------------------------------------------------- */

static void backward_region(LP *P, const Region *r)
{
	for (const Op *op = r->last; op; op = op->prev) {
		/* a loop's free arguments take what its results' users want, or
		 * their initial value's encoding */
		if (op->code == OP_FOR)
			for (int i = 0; i < op->n_results; i++) {
				const Value *a = op->regions[0].args[1 + i];
				if (!E(P, a))
					setE(P, a, E(P, op->results[i]) ? E(P, op->results[i]) : E(P, op->operands[3 + i]));
			}
		if (op->code == OP_WHILE)
			for (int i = 0; i < op->n_operands; i++) {
				const Value *a = op->regions[0].args[i];
				if (!E(P, a))
					setE(P, a, E(P, op->operands[i]));
				if (i < op->n_results && !E(P, op->regions[1].args[i]))
					setE(P, op->regions[1].args[i], E(P, op->results[i]));
			}
		for (int i = op->n_regions - 1; i >= 0; i--)
			backward_region(P, &op->regions[i]);
		for (int i = 0; i < op->n_operands; i++) {
			const Value *x = op->operands[i];
			if (is_block(x) && !E(P, x)) {
				const Encoding *w = want(P, op, i);
				if (w)
					setE(P, x, w);
			}
		}
	}
}

/* Values still free: element-wise and shape ops from their operands,
 * everything else the default. */
static void fill_region(LP *P, const Region *r)
{
	for (int i = 0; i < r->n_args; i++)
		if (is_block(r->args[i]) && !E(P, r->args[i]))
			setE(P, r->args[i], default_enc(P, r->args[i]->type));
	for (const Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_results; i++) {
			const Value *v = op->results[i];
			if (!is_block(v) || E(P, v))
				continue;
			const Encoding *e = NULL;
			if (op->n_operands && is_block(op->operands[0]) && E(P, op->operands[0])) {
				if (lp_is_shape_op(op->code))
					e = shape_forward(P, op, E(P, op->operands[0]));
				else if (op_flags(op->code) & OPF_ELEMWISE || op->code == OP_HINT)
					e = E(P, op->operands[0]);
			}
			setE(P, v, e ? e : default_enc(P, v->type));
		}
		for (int i = 0; i < op->n_regions; i++)
			fill_region(P, &op->regions[i]);
		/* a loop's results are its arguments' last values */
		for (int i = 0; i < op->n_results && op->code == OP_FOR; i++)
			setE(P, op->results[i], E(P, op->regions[0].args[1 + i]));
		for (int i = 0; i < op->n_results && op->code == OP_WHILE; i++)
			setE(P, op->results[i], E(P, op->regions[1].args[i]));
	}
}

/* ---- step 3: conversions ------------------------------------------------------------ */

Value *lp_convert_before(LP *P, Op *before, Value *x, const Encoding *e)
{
	Op *c = ir_insert_before(P->f, before, OP_CONVERT_LAYOUT, &x, 1, &x->type, 1);
	if (!c) {
		P->oom = true;
		return x;
	}
	c->results[0]->enc = e;
	return c->results[0];
}

static void set_operand(Op *op, int i, Value *v)
{
	op->operands[i]->uses--;
	op->operands[i] = v;
	v->uses++;
}

static void materialize_region(LP *P, Region *r)
{
	for (int i = 0; i < r->n_args; i++)
		if (is_block(r->args[i]))
			r->args[i]->enc = E(P, r->args[i]);
	for (Op *op = r->first; op && !P->oom; op = op->next) {
		for (int i = 0; i < op->n_results; i++)
			if (is_block(op->results[i]))
				op->results[i]->enc = E(P, op->results[i]);
		for (int i = 0; i < op->n_regions; i++)
			materialize_region(P, &op->regions[i]);
		/* every operand's want first: a store wants the coalesced encoding
		 * of its pointer operand, which must be asked of the pointer
		 * analysed (a conversion inserted for it is a new value the axis
		 * analysis never saw), or the value and mask would be laid out for
		 * another pointer than the one the store is given */
		const Encoding *ws[16], **w = op->n_operands <= 16 ? ws : malloc((size_t)op->n_operands * sizeof *w);
		if (!w) {
			P->oom = true;
			return;
		}
		for (int i = 0; i < op->n_operands; i++)
			w[i] = want(P, op, i);
		for (int i = 0; i < op->n_operands; i++) {
			Value *x = op->operands[i];
			if (!is_block(x) || !w[i] || enc_equiv(x->enc, w[i], x->type, P->f->num_warps))
				continue;
			set_operand(op, i, lp_convert_before(P, op, x, w[i]));
		}
		if (w != ws)
			free(w);
	}
}

bool ir_layouts(IrFunc *f, Diag *diag)
{
	if (f->gpu)
		return true;
	LP P = {.f = f, .T = 32 * f->num_warps};
	P.ax = axis_analyze(f);
	P.enc = calloc((size_t)(f->n_values ? f->n_values : 1), sizeof *P.enc);
	P.n_enc = f->n_values;
	P.wide_dim = calloc((size_t)(f->n_values ? f->n_values : 1), 2);
	P.wide_vec = P.wide_dim ? P.wide_dim + (f->n_values ? f->n_values : 1) : NULL;
	if (P.ax && P.enc && P.wide_dim) {
		find_wide(&P, &f->body);
		forward_region(&P, &f->body);
		backward_region(&P, &f->body);
		fill_region(&P, &f->body);
		/* results of ops with regions and ops that were free may have been
		 * given an encoding after their users looked: settle once more */
		materialize_region(&P, &f->body);
		f->gpu = true;
		gpu_install_ir_hooks(); /* what verifies GPU IR (a kernel of scalars makes no encoding) */
	} else {
		P.oom = true;
	}
	free(P.ax);
	free(P.enc);
	free(P.wide_dim);
	if (P.oom)
		diag_plain(diag, DIAG_ERROR, "out of memory assigning layouts to '%s'", f->name);
	return !P.oom;
}
