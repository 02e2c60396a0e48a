/* encoding.c: encodings of the GPU IR and their bit maps.
 *
 * An encoding says which thread of a program holds which element of a
 * block. Blocks have power-of-two shapes, so an element's row-major linear
 * index is a string of bits, and every encoding blk uses maps bits of
 * (register, lane, warp) to bits of that index one to one, or to none (the
 * element is then held by several threads). Lin is that map; the parametric
 * kinds (blocked, slice, mma, dot_operand) are ways to write common ones,
 * and enc_lin expands them for a given shape. The passes that assign and
 * convert encodings are in layouts.c and remove_conversions.c. */
#include "gpu/gpu.h"

#include <stddef.h>
#include <string.h>

int lin_bit(Type t, int d, int i)
{
	int b = i;
	for (int e = d + 1; e < t.rank; e++)
		b += log2i(t.shape[e]);
	return b;
}

/* ---- interning and constructors ------------------------------------------- */

const Encoding *enc_intern(IrFunc *f, const Encoding *e)
{
	gpu_install_ir_hooks(); /* IR with encodings: ir_print and ir_verify read them through these */
	for (int i = 0; i < f->n_encs; i++)
		if (memcmp(f->encs[i], e, offsetof(Encoding, id)) == 0)
			return f->encs[i];
	if (f->n_encs == f->cap_encs) {
		int cap = f->cap_encs ? 2 * f->cap_encs : 16;
		Encoding **n = arena_alloc(f->arena, (size_t)cap * sizeof *n);
		if (!n)
			return NULL;
		if (f->n_encs)
			memcpy(n, f->encs, (size_t)f->n_encs * sizeof *n);
		f->encs = n;
		f->cap_encs = cap;
	}
	Encoding *c = arena_alloc(f->arena, sizeof *c);
	if (!c)
		return NULL;
	memcpy(c, e, sizeof *c);
	c->id = f->n_encs;
	f->encs[f->n_encs++] = c;
	return c;
}

static void enc_zero(Encoding *e, EncKind kind, int rank)
{
	memset(e, 0, sizeof *e);
	e->kind = kind;
	e->rank = rank;
}

const Encoding *enc_blocked(IrFunc *f, int rank, const int *spt, const int *tpw, const int *wpc, const int *order)
{
	Encoding e;
	enc_zero(&e, ENC_BLOCKED, rank);
	for (int d = 0; d < rank; d++) {
		e.spt[d] = spt[d];
		e.tpw[d] = tpw[d];
		e.wpc[d] = wpc[d];
		e.order[d] = order[d];
	}
	return enc_intern(f, &e);
}

/* Deals n (lanes or warps) out along ord, each dimension taking what it
 * has room for (left, which shrinks by it); the rest goes to the slowest. */
static void spread(int n, int rank, const int *ord, int *left, int *out)
{
	for (int i = 0; i < rank; i++) {
		int d = ord[i], k = 1;
		while (k < n && k < left[d])
			k *= 2;
		out[d] = k;
		n /= k;
		left[d] /= k;
	}
	out[ord[rank - 1]] *= n;
}

const Encoding *enc_default(IrFunc *f, Type t, int vec, const int *order)
{
	int rank = t.rank, spt[BLK_MAX_RANK] = {0}, tpw[BLK_MAX_RANK] = {0}, wpc[BLK_MAX_RANK] = {0},
	    ord[BLK_MAX_RANK] = {0};
	if (rank < 1)
		return NULL;
	for (int i = 0; i < rank; i++) {
		ord[i] = order ? order[i] : rank - 1 - i;
		spt[i] = tpw[i] = wpc[i] = 1;
	}
	int fast = ord[0];
	spt[fast] = vec < 1 ? 1 : vec > t.shape[fast] ? t.shape[fast] : vec;
	/* lanes, then warps, along order; what is left over replicates along
	 * the slowest dimension */
	int left[BLK_MAX_RANK];
	for (int i = 0; i < rank; i++)
		left[i] = t.shape[i] / spt[i];
	spread(32, rank, ord, left, tpw);
	spread(f->num_warps, rank, ord, left, wpc);
	return enc_blocked(f, rank, spt, tpw, wpc, ord);
}

const Encoding *enc_slice(IrFunc *f, int dim, const Encoding *parent)
{
	Encoding e;
	enc_zero(&e, ENC_SLICE, parent->rank - 1);
	e.dim = dim;
	e.parent = parent;
	return enc_intern(f, &e);
}

const Encoding *enc_mma(IrFunc *f, int wm, int wn)
{
	Encoding e;
	enc_zero(&e, ENC_MMA, 2);
	e.version = 2;
	e.wpc[0] = wm;
	e.wpc[1] = wn;
	e.order[0] = 1;
	return enc_intern(f, &e);
}

const Encoding *enc_mma3(IrFunc *f, int wm, int wn, int instr_n)
{
	Encoding e;
	enc_zero(&e, ENC_MMA, 2);
	e.version = 3;
	e.wpc[0] = wm;
	e.wpc[1] = wn;
	e.instr_n = instr_n;
	e.order[0] = 1;
	return enc_intern(f, &e);
}

static int wgmma_row_bytes(Type t, int fast)
{
	int bytes = t.shape[fast] * type_bytes(type_elem(t));
	return bytes >= 128 ? 128 : bytes >= 64 ? 64 : bytes >= 32 ? 32 : 0;
}

/* wgmma's shared-memory operand layout: the tile cut along `fast` into
 * atoms of E = row bytes / element bytes elements; atom after atom, each
 * the other dimension's rows of E elements, one after another; then, in
 * every 1024 bytes, the 16-byte unit bits of the address (4.. of the byte
 * address, as many as a row has: 3, 2 or 1) XORed with its bits 7.., which
 * wgmma undoes when it reads (the buffer aligned to 1024 bytes): for
 * 128-byte rows the row number's low 3 bits, for 64-byte rows its bits 1
 * and 2, for 32-byte rows its bit 2. As a map of index bits: index bit j
 * goes to address bit image(j), and swizzle[j] is what that changes. */
static void wgmma_shared_fill(Encoding *out, Type t, int fast, int bytes)
{
	Encoding e;
	enc_zero(&e, ENC_SHARED, 2);
	int eb = type_bytes(type_elem(t)), other = 1 - fast;
	int log_e = log2i(bytes / eb), log_o = log2i(t.shape[other]), unit = log2i(16 / eb), units = log2i(bytes / 16);
	int first = 7 - log2i(bytes); /* the row bit on byte address bit 7 */
	e.wgmma = bytes;
	e.wgmma_fast = fast;
	e.vec = e.load_vec = 16 / eb;
	e.n_index_bits = log2i(t.shape[0]) + log2i(t.shape[1]);
	for (int j = 0; j < e.n_index_bits; j++) {
		int dim = j < log2i(t.shape[1]) ? 1 : 0, b = dim == 1 ? j : j - log2i(t.shape[1]);
		uint32_t img;
		if (dim == fast)
			img = 1u << (b < log_e ? b : b + log_o);
		else
			img = (1u << (log_e + b)) | (b >= first && b < first + units ? 1u << (unit + b - first) : 0);
		e.swizzle[j] = img ^ (1u << j);
	}
	*out = e;
}

bool wgmma_operand_layout(Encoding *e, const Lin *src, Type t, int op_idx, int instr_n)
{
	int eb = type_bytes(type_elem(t));
	bool along0 = src->n_reg > 0 && src->reg[0] == lin_bit(t, 0, 0);
	int fast = (op_idx == 1 && (eb != 2 || along0)) || (op_idx == 0 && eb == 2 && along0) ? 0 : 1;
	int bytes = wgmma_row_bytes(t, fast);
	while (op_idx == 1 && fast == 1 && bytes > 32 && bytes > instr_n * eb)
		bytes /= 2;
	if (!bytes)
		return false;
	wgmma_shared_fill(e, t, fast, bytes);
	int v = 0;
	while (v < src->n_reg && (1 << (v + 1)) * eb <= 16 && (e->swizzle[src->reg[v]] ^ (1u << src->reg[v])) == 1u << v)
		v++;
	e->vec = e->load_vec = 1 << v;
	return true;
}

const Encoding *enc_dot_operand(IrFunc *f, int op_idx, const Encoding *parent, int k_width)
{
	Encoding e;
	enc_zero(&e, ENC_DOT_OPERAND, 2);
	e.op_idx = op_idx;
	e.parent = parent;
	e.k_width = k_width;
	return enc_intern(f, &e);
}

const Encoding *enc_linear(IrFunc *f, const Lin *lin)
{
	Encoding e;
	enc_zero(&e, ENC_LINEAR, 0);
	/* field by field (not the padding), unused slots -1: equal maps compare
	 * equal; the rank does not matter to a bit map */
	memset(&e.lin, -1, sizeof e.lin);
	e.lin.n_reg = lin->n_reg < LIN_MAX_BITS ? lin->n_reg : LIN_MAX_BITS;
	e.lin.n_lane = 5;
	e.lin.n_warp = lin->n_warp < LIN_MAX_WARP_BITS ? lin->n_warp : LIN_MAX_WARP_BITS;
	memcpy(e.lin.reg, lin->reg, (size_t)e.lin.n_reg);
	memcpy(e.lin.lane, lin->lane, 5);
	memcpy(e.lin.warp, lin->warp, (size_t)e.lin.n_warp);
	return enc_intern(f, &e);
}

/* ---- bit maps ------------------------------------------------------------- */

static void lin_init(Lin *l, int num_warps)
{
	memset(l, -1, sizeof *l);
	l->n_reg = 0;
	l->n_lane = 5;
	l->n_warp = log2i(num_warps);
}

/* Appends the next bit of dimension d (or none, once d's bits are used up)
 * to a slot list; registers never take "none". */
static void take(Type t, int *pos, int d, int8_t *slots, int *n, bool is_reg)
{
	int bits = log2i(t.shape[d]);
	if (pos[d] < bits) {
		if (*n < LIN_MAX_BITS)
			slots[(*n)++] = (int8_t)lin_bit(t, d, pos[d]++);
	} else if (!is_reg) {
		slots[(*n)++] = -1;
	}
}

/* Every bit of every dimension not yet placed goes to registers, fastest
 * dimension of `order` first. False when they do not fit LIN_MAX_BITS (a
 * block past BLK_MAX_NUMEL, which irgen refuses: without this check a
 * shape whose element count overflowed looped here for ever). */
static bool rest_to_regs(Type t, int *pos, const int *order, Lin *l)
{
	for (int i = 0; i < t.rank; i++) {
		int d = order[i];
		while (pos[d] < log2i(t.shape[d])) {
			if (l->n_reg >= LIN_MAX_BITS)
				return false;
			take(t, pos, d, l->reg, &l->n_reg, true);
		}
	}
	return true;
}

static bool blocked_lin(const Encoding *e, Type t, Lin *l)
{
	int pos[BLK_MAX_RANK] = {0}, nl = 0, nw = 0, lane_bits = 0, warp_bits = 0;
	for (int d = 0; d < t.rank; d++) {
		if (e->tpw[d] < 1 || e->wpc[d] < 1 || e->spt[d] < 1 || (e->tpw[d] & (e->tpw[d] - 1)) ||
		    (e->wpc[d] & (e->wpc[d] - 1)) || (e->spt[d] & (e->spt[d] - 1)))
			return false;
		lane_bits += log2i(e->tpw[d]);
		warp_bits += log2i(e->wpc[d]);
	}
	if (lane_bits != 5 || warp_bits != l->n_warp)
		return false; /* 32 threads a warp, and the kernel's warps */
	for (int i = 0; i < t.rank; i++) {
		int d = e->order[i];
		for (int k = log2i(e->spt[d]); k > 0; k--)
			take(t, pos, d, l->reg, &l->n_reg, true);
	}
	for (int i = 0; i < t.rank; i++) {
		int d = e->order[i];
		for (int k = log2i(e->tpw[d]); k > 0 && nl < 5; k--)
			take(t, pos, d, l->lane, &nl, false);
	}
	for (int i = 0; i < t.rank; i++) {
		int d = e->order[i];
		for (int k = log2i(e->wpc[d]); k > 0 && nw < l->n_warp; k--)
			take(t, pos, d, l->warp, &nw, false);
	}
	if (nl != 5 || nw != l->n_warp)
		return false;
	return rest_to_regs(t, pos, e->order, l);
}

/* mma.sync m16n8: the accumulator (idx -1) and the operands A (0) and B (1)
 * in the PTX ISA's fragment layouts. kw (k_width) elements of one row of A
 * (column of B) lie along K in each 32-bit register: 1 (m16n8k8 of tf32), 2
 * (m16n8k16 of f16 and bf16) or 4 (m16n8k32 of i8 and fp8); g = lane / 4,
 * t = lane % 4, a K tile is 8 kw long:
 *   C  c0 c1: row g, cols 2t + 0, 1;  c2 c3: row g + 8
 *   A  a0: row g, k kw t .. kw t + kw - 1;  a1: row g + 8;  a2, a3: k + 4 kw
 *   B  b0: k kw t .. kw t + kw - 1, col g;  b1: k + 4 kw
 * (each register ai of A holds elements kw i .. kw i + kw - 1 of the map).
 * Warps tile M by wpc[0] (the low bits of the warp id) and N by wpc[1]. */
static bool mma_lin(const Encoding *mma, int idx, int kw, Type t, Lin *l)
{
	if (t.rank != 2 || (kw != 1 && kw != 2 && kw != 4))
		return false;
	int wm = log2i(mma->wpc[0]), wn = log2i(mma->wpc[1]), kwb = log2i(kw);
	/* dimension 0 is rows (M, or K for B), 1 columns (K for A, or N). K
	 * takes one step at least; M under 16 and N under 8 are padded: the
	 * instruction's rows or columns past the block have no bit, so their
	 * lanes hold replicas and their fragment registers are absent (the
	 * lowering feeds zeros there and drops what comes out) */
	int need0 = idx == 1 ? 8 * kw : 1, need1 = idx == 0 ? 8 * kw : 1;
	if (t.shape[0] < need0 || t.shape[1] < need1 || wm + wn > l->n_warp)
		return false;
	int pos[2] = {0, 0}, nl = 0, nw = 0;
	int order[2] = {1, 0};
	if (idx == 1) { /* B is K x N: k bits on dimension 0, n on 1 */
		for (int i = 0; i < kwb; i++)
			take(t, pos, 0, l->reg, &l->n_reg, true); /* k within a register */
		take(t, pos, 0, l->lane, &nl, false);
		take(t, pos, 0, l->lane, &nl, false);
		for (int i = 0; i < 3; i++)
			take(t, pos, 1, l->lane, &nl, false); /* n0..n2 */
		take(t, pos, 0, l->reg, &l->n_reg, true); /* b1: k + 4 kw */
		order[0] = 0, order[1] = 1;
	} else {
		/* C: col0 in a register; A: k within a register */
		for (int i = 0; i < (idx == -1 ? 1 : kwb); i++)
			take(t, pos, 1, l->reg, &l->n_reg, true);
		take(t, pos, 1, l->lane, &nl, false);
		take(t, pos, 1, l->lane, &nl, false);
		for (int i = 0; i < 3; i++)
			take(t, pos, 0, l->lane, &nl, false); /* row0..row2 */
		take(t, pos, 0, l->reg, &l->n_reg, true); /* row3 */
		if (idx == 0)
			take(t, pos, 1, l->reg, &l->n_reg, true); /* a2 a3: k + 4 kw */
	}
	/* warps: M first, then N; an operand is replicated over the other's */
	for (int i = 0; i < wm; i++) {
		if (idx == 1)
			l->warp[nw++] = -1;
		else
			take(t, pos, 0, l->warp, &nw, false);
	}
	for (int i = 0; i < wn; i++) {
		if (idx == 0)
			l->warp[nw++] = -1;
		else
			take(t, pos, 1, l->warp, &nw, false);
	}
	while (nw < l->n_warp)
		l->warp[nw++] = -1;
	return rest_to_regs(t, pos, order, l);
}

/* Linear-index bits of register k of l, and the register of l that holds
 * an element whose register bits are c. */
static int reg_bits(const Lin *l, int k)
{
	int c = 0;
	for (int i = 0; i < l->n_reg; i++)
		if (k >> i & 1)
			c |= 1 << l->reg[i];
	return c;
}

static int reg_of(const Lin *l, int c)
{
	int k = 0;
	for (int i = 0; i < l->n_reg; i++)
		if (c >> l->reg[i] & 1)
			k |= 1 << i;
	return k;
}

bool mma_frag_regs(const Lin *lc, const Lin *la, const Lin *lb, Type ct, int K, int kw, int g, int kk, int c[4],
                   int a[4], int b[2])
{
	int M = ct.shape[0], N = ct.shape[1], nb = log2i(N), kb = log2i(K), cc = reg_bits(lc, g);
	int row_c = cc >> nb, col_c = cc & (N - 1), k0 = kk * 8 * kw;
	if ((row_c & 8) || (col_c & 1))
		return false; /* inside a tile, not its first register */
	for (int i = 0; i < 4; i++) {
		int row = row_c + 8 * (i >> 1), col = col_c + (i & 1); /* c_i */
		c[i] = row < M && col < N ? reg_of(lc, (row << nb) | col) : -1;
		row = row_c + 8 * (i & 1); /* a_i: its k 4 kw further from a2 on */
		a[i] = row < M ? reg_of(la, (row << kb) | (k0 + 4 * kw * (i >> 1))) : -1;
	}
	for (int i = 0; i < 2; i++)
		b[i] = reg_of(lb, ((k0 + 4 * kw * i) << nb) | col_c);
	return true;
}

/* wgmma m64nNk16, N = instr_n: the accumulator (idx -1) as mma.sync's over
 * a warpgroup's 64 x N tile, the 4 warps along M (16 rows each) and one
 * instruction's registers its N's 8-column groups in order; then the
 * warpgroups, wpc[0] / 4 along M (64-row blocks), wpc[1] along N (blocks of
 * instr_n columns); what is left goes to registers, columns first. The
 * operands (held in registers only where a dot's A comes from another
 * dot): A as mma.sync's A per warp, B as mma.sync's B, each replicated
 * over the other's warps. */
static bool mma3_lin(const Encoding *mma, int idx, Type t, Lin *l)
{
	if (t.rank != 2)
		return false;
	int gm = log2i(mma->wpc[0]) - 2, gn = log2i(mma->wpc[1]), nb = log2i(mma->instr_n);
	int m_dim = idx == 1 ? -1 : 0, n_dim = idx == 0 ? -1 : 1, k_dim = idx == 0 ? 1 : idx == 1 ? 0 : -1;
	if (gm < 0 || gm + 2 + gn != l->n_warp || nb < 3)
		return false;
	if ((m_dim >= 0 && t.shape[m_dim] < 64 << gm) || (n_dim >= 0 && t.shape[n_dim] < mma->instr_n << gn) ||
	    (k_dim >= 0 && t.shape[k_dim] < 16))
		return false;
	int pos[2] = {0, 0}, nl = 0, nw = 0;
	int order[2] = {1, 0};
	if (idx == -1) {
		take(t, pos, 1, l->reg, &l->n_reg, true); /* col0 */
		take(t, pos, 1, l->lane, &nl, false);      /* col1, col2 */
		take(t, pos, 1, l->lane, &nl, false);
		for (int i = 0; i < 3; i++)
			take(t, pos, 0, l->lane, &nl, false); /* row0..row2 */
		take(t, pos, 0, l->reg, &l->n_reg, true); /* row3 */
		for (int i = 3; i < nb; i++)
			take(t, pos, 1, l->reg, &l->n_reg, true); /* the instruction's 8-column groups */
	} else if (idx == 0) {
		take(t, pos, 1, l->reg, &l->n_reg, true); /* k0 */
		take(t, pos, 1, l->lane, &nl, false);
		take(t, pos, 1, l->lane, &nl, false);
		for (int i = 0; i < 3; i++)
			take(t, pos, 0, l->lane, &nl, false); /* row0..row2 */
		take(t, pos, 0, l->reg, &l->n_reg, true); /* row3 */
		take(t, pos, 1, l->reg, &l->n_reg, true); /* k3 */
	} else {
		take(t, pos, 0, l->reg, &l->n_reg, true); /* k0 */
		take(t, pos, 0, l->lane, &nl, false);
		take(t, pos, 0, l->lane, &nl, false);
		for (int i = 0; i < 3; i++)
			take(t, pos, 1, l->lane, &nl, false); /* n0..n2 */
		take(t, pos, 0, l->reg, &l->n_reg, true); /* k3 */
		for (int i = 3; i < nb; i++)
			take(t, pos, 1, l->reg, &l->n_reg, true); /* the rest of the instruction's N */
		order[0] = 0, order[1] = 1;
	}
	for (int i = 0; i < 2 + gm; i++) { /* the warpgroup's warps, then warpgroups along M */
		if (m_dim < 0)
			l->warp[nw++] = -1;
		else
			take(t, pos, 0, l->warp, &nw, false);
	}
	for (int i = 0; i < gn; i++) {
		if (n_dim < 0)
			l->warp[nw++] = -1;
		else
			take(t, pos, 1, l->warp, &nw, false);
	}
	return rest_to_regs(t, pos, order, l) && nl == 5;
}

bool enc_lin(const Encoding *e, Type t, int num_warps, Lin *out)
{
	lin_init(out, num_warps);
	if (t.rank == 0)
		return true;
	switch (e->kind) {
	case ENC_BLOCKED:
		return e->rank == t.rank && blocked_lin(e, t, out);
	case ENC_SLICE: {
		if (e->rank != t.rank || t.rank + 1 > BLK_MAX_RANK)
			return false;
		/* the parent over the shape with a dimension of 1 put back: its
		 * bits along dim are gone, and the linear index is the same */
		Type p = t;
		p.rank = (uint8_t)(t.rank + 1);
		for (int i = 0, j = 0; i < p.rank; i++)
			p.shape[i] = i == e->dim ? 1 : t.shape[j++];
		return enc_lin(e->parent, p, num_warps, out);
	}
	case ENC_MMA:
		return e->version == 3 ? mma3_lin(e, -1, t, out) : mma_lin(e, -1, 1, t, out);
	case ENC_DOT_OPERAND:
		if (e->parent->kind == ENC_MMA && e->parent->version == 3)
			return mma3_lin(e->parent, e->op_idx, t, out);
		return e->parent->kind == ENC_MMA && mma_lin(e->parent, e->op_idx, e->k_width, t, out);
	case ENC_LINEAR: {
		/* every bit of the block's index once, registers never "none" */
		*out = e->lin;
		int bits = 0;
		for (int d = 0; d < t.rank; d++)
			bits += log2i(t.shape[d]);
		uint32_t seen = 0;
		for (int i = 0; i < out->n_reg + 5 + out->n_warp; i++) {
			int b = i < out->n_reg ? out->reg[i] : i < out->n_reg + 5 ? out->lane[i - out->n_reg]
			                                                             : out->warp[i - out->n_reg - 5];
			if (b < 0 && i < out->n_reg)
				return false;
			if (b < 0)
				continue;
			if (b >= bits || (seen >> b & 1))
				return false;
			seen |= 1u << b;
		}
		return seen == (bits ? (1u << bits) - 1 : 0) && out->n_warp == log2i(num_warps);
	}
	case ENC_SHARED:
		return false;
	}
	return false;
}

void lin_slice(const Lin *in, Type t, int axis, Lin *out)
{
	int lo = lin_bit(t, axis, 0), nbits = log2i(t.shape[axis]);
	unsigned amask = ((1u << nbits) - 1) << lo;
	*out = *in;
	out->n_reg = 0;
	for (int i = 0; i < in->n_reg; i++)
		if (!(amask >> in->reg[i] & 1))
			out->reg[out->n_reg++] = (int8_t)(in->reg[i] < lo ? in->reg[i] : in->reg[i] - nbits);
	for (int i = 0; i < 5 + in->n_warp; i++) {
		int8_t *slot = i < 5 ? &out->lane[i] : &out->warp[i - 5];
		int b = *slot;
		if (b >= 0)
			*slot = (int8_t)((amask >> b & 1) ? -1 : b < lo ? b : b - nbits);
	}
}

bool enc_equiv(const Encoding *a, const Encoding *b, Type t, int num_warps)
{
	if (a == b)
		return true;
	if (!a || !b)
		return false;
	Lin la, lb;
	return enc_lin(a, t, num_warps, &la) && enc_lin(b, t, num_warps, &lb) && la.n_reg == lb.n_reg &&
	       la.n_warp == lb.n_warp && memcmp(la.reg, lb.reg, (size_t)la.n_reg) == 0 &&
	       memcmp(la.lane, lb.lane, 5) == 0 && memcmp(la.warp, lb.warp, (size_t)la.n_warp) == 0;
}

const Encoding *enc_canonical(IrFunc *f, const Encoding *e, Type t)
{
	if (!e || e->kind != ENC_LINEAR)
		return e;
	for (int i = 0; i < f->n_encs; i++) {
		const Encoding *o = f->encs[i];
		if (o->kind != ENC_LINEAR && o->kind != ENC_SHARED && enc_equiv(o, e, t, f->num_warps))
			return o;
	}
	return e;
}

/* ---- printing ---------------------------------------------------------------- */

static const char *kind_name(EncKind k)
{
	static const char *const names[] = {"blocked", "slice", "mma", "dot_op", "linear", "shared"};
	return k <= ENC_SHARED ? names[k] : "?";
}

void enc_ref(const Encoding *e, StrBuf *out) { sb_printf(out, "#%s%d", kind_name(e->kind), e->id); }

static void put_list(StrBuf *out, const char *name, const int *v, int n)
{
	sb_printf(out, "%s = [", name);
	for (int i = 0; i < n; i++)
		sb_printf(out, "%s%d", i ? ", " : "", v[i]);
	sb_putc(out, ']');
}

static void put_bits(StrBuf *out, const char *name, const int8_t *v, int n)
{
	sb_printf(out, "%s = [", name);
	for (int i = 0; i < n; i++)
		sb_printf(out, "%s%d", i ? ", " : "", v[i]);
	sb_putc(out, ']');
}

void enc_print(const Encoding *e, StrBuf *out)
{
	sb_printf(out, "%s<", e->kind == ENC_DOT_OPERAND ? "dot_operand" : kind_name(e->kind));
	switch (e->kind) {
	case ENC_BLOCKED:
		put_list(out, "spt", e->spt, e->rank);
		put_list(out, ", tpw", e->tpw, e->rank);
		put_list(out, ", wpc", e->wpc, e->rank);
		put_list(out, ", order", e->order, e->rank);
		break;
	case ENC_SLICE:
		sb_printf(out, "dim = %d, parent = ", e->dim);
		enc_ref(e->parent, out);
		break;
	case ENC_MMA:
		sb_printf(out, "version = %d, ", e->version);
		put_list(out, "wpc", e->wpc, 2);
		if (e->version == 3)
			sb_printf(out, ", instr = [64, %d, 16]", e->instr_n);
		break;
	case ENC_DOT_OPERAND:
		sb_printf(out, "idx = %d, parent = ", e->op_idx);
		enc_ref(e->parent, out);
		sb_printf(out, ", k_width = %d", e->k_width);
		break;
	case ENC_LINEAR:
		put_bits(out, "reg", e->lin.reg, e->lin.n_reg);
		put_bits(out, ", lane", e->lin.lane, 5);
		put_bits(out, ", warp", e->lin.warp, e->lin.n_warp);
		break;
	case ENC_SHARED: {
		if (e->wgmma)
			sb_printf(out, "wgmma = %d, fast = %d, ", e->wgmma, e->wgmma_fast);
		sb_printf(out, "vec = %d, load_vec = %d, %sswizzle = [", e->vec, e->load_vec,
		          e->ldmatrix == 3 ? "ldmatrix.kmajor, " : e->ldmatrix == 2 ? "ldmatrix.trans, " : e->ldmatrix ? "ldmatrix, " : "");
		int n = 0;
		for (int j = 0; j < e->n_index_bits; j++)
			if (e->swizzle[j])
				sb_printf(out, "%s%d: 0x%x", n++ ? ", " : "", j, e->swizzle[j]);
		sb_putc(out, ']');
		break;
	}
	}
	sb_putc(out, '>');
}
