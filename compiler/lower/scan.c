/* scan.c: scans (cumsum, cumprod, associative_scan) along one axis, work
 * efficient: O(n) combines for a line of n, in log steps across threads.
 *
 * The bits of an element's position p along the axis are set by register,
 * lane or warp bits of the block's map (Lin). The scan runs directly in
 * the operand's map when, from p's low bit up, they come as
 *
 *     R^a L^b W^c R^d     (a register bits, b lane bits, c warp bits, d
 *                          register bits: "chunks" of the line)
 *
 * which is what blocked layouts give (sizePerThread, then lanes, then
 * warps, then the wrap-around repeats); any other map is first converted
 * through shared memory into one of this form (its axis bits reassigned
 * registers first, then lanes, then warps), and back after. Then:
 *
 *   1. registers: each run of 2^a registers is scanned in order;
 *   2. lanes: the run's last value (the thread's total) is scanned across
 *      the b lane bits, Kogge-Stone with shfl.sync.up (down for reverse;
 *      shfl.sync.idx where those lane bits are not contiguous): b steps;
 *      one more shuffle gives each lane the total of the lanes before it;
 *   3. units: a unit is a (chunk, warp) pair, 2^(c+d) of them along the
 *      line. Each unit's total (at its last lane) goes to shared memory
 *      (or, with no warps along the axis, comes by shfl.sync.idx); every
 *      thread combines the totals in order and picks the prefix before its
 *      own unit;
 *   4. each element becomes (prefix of units) . (prefix of lanes) . itself.
 *
 * The combine region always gets the earlier part as its left operand, so
 * a combine that is associative but not commutative stays correct. Reverse
 * is the mirror: positions are read as len - 1 - p ("scan order"), so the
 * digits below are flipped and shuffles go down instead of up. */
#include "lower/lower_int.h"

#include <string.h>

enum { K_NONE, K_REG, K_LANE, K_WARP };

typedef struct Scan {
	Lower *L;
	const Op *op;
	const Region *r;
	int n;    /* operands */
	bool rev;
	Type t;   /* the block's type */
	Type et[MAX_REDUCE_OPERANDS];
	int lo_bit, nbits;
	Lin s;            /* the map the scan runs in */
	int a, b, c, d;   /* position bits: registers (low), lanes, warps, registers (chunks) */
	int lane_bit[5];  /* bit i of the lane digit: this lane-id bit */
	int warp_bit[LIN_MAX_WARP_BITS];
	LLVMValueRef *x[MAX_REDUCE_OPERANDS]; /* x[i][k]: operand i, register k of map s */
	LLVMValueRef qL, qW; /* this thread's lane and warp digits, in scan order */
} Scan;

/* What sets index bit ib in map l: K_REG, K_LANE or K_WARP, its slot in *num. */
static int slot_of(const Lin *l, int ib, int *num)
{
	for (int i = 0; i < l->n_reg; i++)
		if (l->reg[i] == ib)
			return *num = i, K_REG;
	for (int i = 0; i < 5; i++)
		if (l->lane[i] == ib)
			return *num = i, K_LANE;
	for (int i = 0; i < l->n_warp; i++)
		if (l->warp[i] == ib)
			return *num = i, K_WARP;
	return K_NONE;
}

static bool lin_same(const Lin *x, const Lin *y)
{
	return x->n_reg == y->n_reg && x->n_warp == y->n_warp && !memcmp(x->reg, y->reg, (size_t)x->n_reg) &&
	       !memcmp(x->lane, y->lane, 5) && !memcmp(x->warp, y->warp, (size_t)x->n_warp);
}

/* Reads the runs R^a L^b W^c R^d of map s along the axis; false when its
 * bits do not come in that order. */
static bool read_runs(Scan *S)
{
	int kind[32], num[32];
	for (int j = 0; j < S->nbits; j++)
		if ((kind[j] = slot_of(&S->s, S->lo_bit + j, &num[j])) == K_NONE)
			return false;
	int j = 0;
	S->a = S->b = S->c = S->d = 0;
	for (; j < S->nbits && kind[j] == K_REG; j++)
		S->a++;
	for (; j < S->nbits && kind[j] == K_LANE; j++)
		S->lane_bit[S->b++] = num[j];
	for (; j < S->nbits && kind[j] == K_WARP; j++)
		S->warp_bit[S->c++] = num[j];
	for (; j < S->nbits && kind[j] == K_REG; j++)
		S->d++;
	return j == S->nbits;
}

/* The map for a scan: in's, with the axis' index bits given to its
 * register slots first (in register order), then its lane slots, then its
 * warp slots. */
static void scan_map(const Lin *in, int lo_bit, int nbits, Lin *out)
{
	*out = *in;
	int next = lo_bit;
	bool on_axis;
#define TAKE(field, count)                                                         \
	for (int i = 0; i < (count); i++) {                                        \
		on_axis = in->field[i] >= lo_bit && in->field[i] < lo_bit + nbits; \
		if (on_axis)                                                       \
			out->field[i] = (int8_t)next++;                            \
	}
	TAKE(reg, in->n_reg)
	TAKE(lane, 5)
	TAKE(warp, in->n_warp)
#undef TAKE
}

/* Moves the n blocks x (registers of map from) to map to through shared
 * memory; the new registers replace x's arrays. */
static void relayout(Scan *S, const Lin *from, const Lin *to)
{
	Lower *L = S->L;
	int N = numel(S->t), off = 0, offs[MAX_REDUCE_OPERANDS];
	for (int i = 0; i < S->n; i++) {
		offs[i] = off;
		off += (N * type_bytes(S->et[i]) + 15) & ~15;
	}
	int base = lw_smem_take(L, off);
	LLVMValueRef own = owner_of(L, from);
	for (int i = 0; i < S->n; i++) {
		LLVMTypeRef mt = lw_mem_type(L, S->et[i]);
		for (int k = 0; k < 1 << from->n_reg; k++)
			lw_smem_store_if(L, own, lw_smem_at(L, mt, base + offs[i], lw_index_of(L, from, k)),
			                 lw_to_mem(L, S->et[i], S->x[i][k]));
	}
	lw_smem_sync(L, base, off);
	for (int i = 0; i < S->n; i++) {
		LLVMValueRef *y = arena_alloc(&L->arena, sizeof *y << to->n_reg);
		if (!y) {
			L->failed = true;
			return;
		}
		for (int k = 0; k < 1 << to->n_reg; k++)
			y[k] = lw_smem_load(L, S->et[i], base + offs[i], lw_index_of(L, to, k));
		S->x[i] = y;
	}
}

/* ---- digits: positions in scan order ------------------------------------------ */

/* The index bits that register digit qi (the low a bits) and chunk digit
 * qc (the high d bits) set, both in scan order. */
static int pos_const(const Scan *S, int qc, int qi)
{
	if (S->rev) {
		qi ^= (1 << S->a) - 1;
		qc ^= (1 << S->d) - 1;
	}
	return (qi | qc << (S->a + S->b + S->c)) << S->lo_bit;
}

/* The register digit of index bits cst, in scan order. */
static int qin_of(const Scan *S, int cst)
{
	int v = cst >> S->lo_bit & ((1 << S->a) - 1);
	return S->rev ? v ^ ((1 << S->a) - 1) : v;
}

/* The digit of this thread's id bits base + bits[i], in scan order. */
static LLVMValueRef tid_digit(Scan *S, const int *bits, int nb, int base)
{
	Lower *L = S->L;
	LLVMValueRef v = ci32(L, 0);
	for (int i = 0; i < nb; i++) {
		LLVMValueRef bit = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, L->tid, ci32(L, base + bits[i]), ""), ci32(L, 1), "");
		v = LLVMBuildOr(L->b, v, i ? LLVMBuildShl(L->b, bit, ci32(L, i), "") : bit, "");
	}
	return S->rev && nb ? LLVMBuildXor(L->b, v, ci32(L, (1 << nb) - 1), "") : v;
}

static bool is_true(LLVMValueRef c) { return LLVMIsAConstantInt(c) && LLVMConstIntGetZExtValue(c); }
static bool is_false(LLVMValueRef c) { return LLVMIsAConstantInt(c) && !LLVMConstIntGetZExtValue(c); }

/* out = cond ? yes : no, for the n operands. */
static void pick(Scan *S, LLVMValueRef cond, LLVMValueRef *yes, LLVMValueRef *no, LLVMValueRef *out)
{
	for (int i = 0; i < S->n; i++)
		out[i] = is_true(cond) ? yes[i] : is_false(cond) ? no[i] : LLVMBuildSelect(S->L->b, cond, yes[i], no[i], "");
}

/* v = have ? combine(p, v) : v */
static void apply(Scan *S, LLVMValueRef have, LLVMValueRef *p, LLVMValueRef *v)
{
	if (is_false(have))
		return;
	LLVMValueRef y[MAX_REDUCE_OPERANDS];
	lw_combine(S->L, S->r, S->n, p, v, y);
	pick(S, have, y, v, v);
}

/* ---- the phases ----------------------------------------------------------------- */

/* 1: each run of 2^a registers in order. */
static void scan_registers(Scan *S)
{
	Lower *L = S->L;
	int nreg = 1 << S->s.n_reg, A = 1 << S->a;
	if (A == 1)
		return;
	int *qi = arena_alloc(&L->arena, sizeof *qi * (size_t)nreg);
	if (!qi) {
		L->failed = true;
		return;
	}
	for (int k = 0; k < nreg; k++)
		qi[k] = qin_of(S, lw_reg_const(&S->s, k));
	int inmask = (A - 1) << S->lo_bit;
	LLVMValueRef a[MAX_REDUCE_OPERANDS], b[MAX_REDUCE_OPERANDS];
	for (int q = 1; q < A && !L->failed; q++)
		for (int k = 0; k < nreg && !L->failed; k++) {
			if (qi[k] != q)
				continue;
			/* the run's digit q - 1; the other bits (the chunk's too) are k's */
			int prev = lw_reg_index(&S->s, (lw_reg_const(&S->s, k) & ~inmask) | (pos_const(S, 0, q - 1) & inmask));
			for (int i = 0; i < S->n; i++) {
				a[i] = S->x[i][prev];
				b[i] = S->x[i][k];
			}
			lw_combine(L, S->r, S->n, a, b, b);
			for (int i = 0; i < S->n; i++)
				S->x[i][k] = b[i];
		}
}

/* The lane operand of a shuffle that brings, along the lane digit, the
 * value `step` places before this lane in scan order (its mode in *mode). */
static LLVMValueRef lane_source(Scan *S, int step, const char **mode)
{
	Lower *L = S->L;
	bool contiguous = true;
	for (int i = 1; i < S->b; i++)
		contiguous &= S->lane_bit[i] == S->lane_bit[0] + i;
	if (contiguous) {
		*mode = S->rev ? "down" : "up";
		return ci32(L, step << S->lane_bit[0]);
	}
	/* the lane with this lane's digit minus step, its other bits kept */
	*mode = "idx";
	LLVMValueRef q = LLVMBuildSub(L->b, S->qL, ci32(L, step), "");
	if (S->rev)
		q = LLVMBuildXor(L->b, q, ci32(L, (1 << S->b) - 1), "");
	unsigned mask = 0;
	LLVMValueRef src = NULL;
	for (int i = 0; i < S->b; i++) {
		mask |= 1u << S->lane_bit[i];
		LLVMValueRef bit = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, q, ci32(L, i), ""), ci32(L, 1), "");
		bit = LLVMBuildShl(L->b, bit, ci32(L, S->lane_bit[i]), "");
		src = src ? LLVMBuildOr(L->b, src, bit, "") : bit;
	}
	LLVMValueRef lane = LLVMBuildAnd(L->b, L->tid, ci32(L, 31 & ~mask), "");
	return LLVMBuildOr(L->b, lane, src, "");
}

/* 2: v (the thread's totals of one run, n operands) scanned across the
 * lane digit (Kogge-Stone); excl gets the value of the lane before (valid
 * where qL > 0) when wanted. */
static void scan_lanes(Scan *S, LLVMValueRef *v, LLVMValueRef *excl)
{
	Lower *L = S->L;
	LLVMValueRef y[MAX_REDUCE_OPERANDS], z[MAX_REDUCE_OPERANDS];
	for (int j = 0; j < S->b && !L->failed; j++) {
		const char *mode;
		LLVMValueRef src = lane_source(S, 1 << j, &mode);
		for (int i = 0; i < S->n; i++)
			y[i] = lw_shfl(L, mode, v[i], src);
		lw_combine(L, S->r, S->n, y, v, z);
		LLVMValueRef ok = LLVMBuildICmp(L->b, LLVMIntUGE, S->qL, ci32(L, 1 << j), "");
		pick(S, ok, z, v, v);
	}
	if (excl) {
		const char *mode;
		LLVMValueRef src = lane_source(S, 1, &mode);
		for (int i = 0; i < S->n; i++)
			excl[i] = lw_shfl(L, mode, v[i], src);
	}
}

/* The index of the line (the block's other coordinates) of register k, as
 * the linear index with the axis' bits taken out. */
static LLVMValueRef line_of(Scan *S, int k)
{
	Lower *L = S->L;
	LLVMValueRef idx = lw_index_of(L, &S->s, k);
	LLVMValueRef lo = LLVMBuildAnd(L->b, idx, ci32(L, (1 << S->lo_bit) - 1), "");
	LLVMValueRef hi = LLVMBuildLShr(L->b, idx, ci32(L, S->lo_bit + S->nbits), "");
	return LLVMBuildOr(L->b, lo, LLVMBuildShl(L->b, hi, ci32(L, S->lo_bit), ""), "");
}

/* 3 and 4 for the lines of this thread. tot[(g * C + qc) * n + i]: the
 * inclusive lane scan of run (line g, chunk qc); ex the lanes' exclusive
 * prefixes likewise (NULL: none, b = 0 or a = 0); line_reg[g] a register
 * of line g. */
static void finish(Scan *S, int n_lines, const int *line_reg, LLVMValueRef *tot, LLVMValueRef *ex)
{
	Lower *L = S->L;
	int n = S->n, A = 1 << S->a, C = 1 << S->d, G = 1 << S->c, U = C * G;
	bool units = U > 1;
	LLVMValueRef *T = NULL; /* T[(g * U + u) * n + i]: unit u's total, in scan order */
	if (units && !(T = arena_alloc(&L->arena, sizeof *T * (size_t)(n_lines * U * n)))) {
		L->failed = true;
		return;
	}
	if (units && G == 1) {
		/* the chunks' totals from the last lane of the lane digit */
		unsigned mask = 0;
		for (int i = 0; i < S->b; i++)
			mask |= 1u << S->lane_bit[i];
		LLVMValueRef lane = LLVMBuildAnd(L->b, L->tid, ci32(L, 31), "");
		LLVMValueRef src = S->rev ? LLVMBuildAnd(L->b, lane, ci32(L, 31 & ~mask), "")
		                          : LLVMBuildOr(L->b, lane, ci32(L, mask), "");
		for (int j = 0; j < n_lines * U * n; j++)
			T[j] = S->b ? lw_shfl(L, "idx", tot[j], src) : tot[j];
	} else if (units) {
		/* each unit's last lane writes its total; all read them back */
		int N = numel(S->t) / (1 << S->nbits), off = 0, offs[MAX_REDUCE_OPERANDS];
		for (int i = 0; i < n; i++) {
			offs[i] = off;
			off += (N * U * type_bytes(S->et[i]) + 15) & ~15;
		}
		int base = lw_smem_take(L, off);
		LLVMValueRef last = LLVMBuildICmp(L->b, LLVMIntEQ, S->qL, ci32(L, (1 << S->b) - 1), "");
		LLVMValueRef writer = LLVMBuildAnd(L->b, last, owner_of(L, &S->s), "");
		LLVMValueRef *slot0 = arena_alloc(&L->arena, sizeof *slot0 * (size_t)n_lines);
		if (!slot0) {
			L->failed = true;
			return;
		}
		for (int g = 0; g < n_lines; g++) {
			slot0[g] = LLVMBuildMul(L->b, line_of(S, line_reg[g]), ci32(L, U), "");
			for (int qc = 0; qc < C; qc++) {
				LLVMValueRef slot = LLVMBuildAdd(L->b, slot0[g], LLVMBuildAdd(L->b, S->qW, ci32(L, qc * G), ""), "");
				for (int i = 0; i < n; i++) {
					LLVMTypeRef mt = lw_mem_type(L, S->et[i]);
					lw_smem_store_if(L, writer, lw_smem_at(L, mt, base + offs[i], slot),
					                 lw_to_mem(L, S->et[i], tot[(g * C + qc) * n + i]));
				}
			}
		}
		lw_smem_sync(L, base, off);
		for (int g = 0; g < n_lines; g++)
			for (int u = 0; u < U; u++) {
				LLVMValueRef slot = LLVMBuildAdd(L->b, slot0[g], ci32(L, u), "");
				for (int i = 0; i < n; i++)
					T[(g * U + u) * n + i] = lw_smem_load(L, S->et[i], base + offs[i], slot);
			}
	}
	LLVMValueRef eqW[64]; /* this thread's warp digit is w */
	for (int w = 1; w < G; w++)
		eqW[w] = LLVMBuildICmp(L->b, LLVMIntEQ, S->qW, ci32(L, w), "");
	LLVMValueRef haveL = S->a && S->b ? LLVMBuildICmp(L->b, LLVMIntNE, S->qL, ci32(L, 0), "") : NULL;
	LLVMValueRef haveW0 = G > 1 ? LLVMBuildICmp(L->b, LLVMIntNE, S->qW, ci32(L, 0), "") : LLVMConstInt(L->i1, 0, 0);
	for (int g = 0; g < n_lines && !L->failed; g++) {
		LLVMValueRef *Tg = T ? T + g * U * n : NULL;
		/* inclusive prefixes of the units, in place */
		for (int u = 1; u < U && !L->failed; u++)
			lw_combine(L, S->r, n, Tg + (u - 1) * n, Tg + u * n, Tg + u * n);
		for (int qc = 0; qc < C && !L->failed; qc++) {
			LLVMValueRef P[MAX_REDUCE_OPERANDS], E[MAX_REDUCE_OPERANDS], have = LLVMConstInt(L->i1, 0, 0);
			if (units) {
				/* the prefix before unit (qc, qW): a pick among G of them */
				have = qc ? LLVMConstInt(L->i1, 1, 0) : haveW0;
				int u0 = qc * G - 1;
				for (int i = 0; i < n; i++)
					E[i] = Tg[(u0 < 0 ? 0 : u0) * n + i];
				for (int w = 1; w < G; w++)
					pick(S, eqW[w], Tg + (u0 + w) * n, E, E);
				memcpy(P, E, sizeof(LLVMValueRef) * (size_t)n);
			}
			if (haveL) {
				LLVMValueRef *El = ex + (g * C + qc) * n;
				if (units) {
					LLVMValueRef both[MAX_REDUCE_OPERANDS];
					lw_combine(L, S->r, n, E, El, both);
					pick(S, haveL, both, E, P);
					pick(S, have, P, El, P);
					have = is_true(have) ? have : LLVMBuildOr(L->b, have, haveL, "");
				} else {
					memcpy(P, El, sizeof(LLVMValueRef) * (size_t)n);
					have = haveL;
				}
			}
			if (is_false(have))
				continue;
			int g_const = lw_reg_const(&S->s, line_reg[g]);
			for (int q = 0; q < A && !L->failed; q++) {
				int k = lw_reg_index(&S->s, g_const | pos_const(S, qc, q));
				LLVMValueRef v[MAX_REDUCE_OPERANDS];
				for (int i = 0; i < n; i++)
					v[i] = S->x[i][k];
				apply(S, have, P, v);
				for (int i = 0; i < n; i++)
					S->x[i][k] = v[i];
			}
		}
	}
}

/* The scan in map s (of the runs read_runs found), on S->x in place. */
static void scan_map_runs(Scan *S)
{
	Lower *L = S->L;
	int n = S->n, nreg = 1 << S->s.n_reg, A = 1 << S->a, C = 1 << S->d;
	S->qL = tid_digit(S, S->lane_bit, S->b, 0);
	S->qW = tid_digit(S, S->warp_bit, S->c, 5);
	scan_registers(S);
	/* the lines: registers whose axis bits are 0 */
	int axis_mask = ((1 << S->nbits) - 1) << S->lo_bit;
	int *line_reg = arena_alloc(&L->arena, sizeof *line_reg * (size_t)nreg), n_lines = 0;
	if (!line_reg) {
		L->failed = true;
		return;
	}
	for (int k = 0; k < nreg; k++)
		if (!(lw_reg_const(&S->s, k) & axis_mask))
			line_reg[n_lines++] = k;
	LLVMValueRef *tot = arena_alloc(&L->arena, sizeof *tot * (size_t)(n_lines * C * n));
	LLVMValueRef *ex = S->a && S->b ? arena_alloc(&L->arena, sizeof *ex * (size_t)(n_lines * C * n)) : NULL;
	if (!tot || (S->a && S->b && !ex)) {
		L->failed = true;
		return;
	}
	for (int g = 0; g < n_lines && !L->failed; g++)
		for (int qc = 0; qc < C; qc++) {
			int k = lw_reg_index(&S->s, lw_reg_const(&S->s, line_reg[g]) | pos_const(S, qc, A - 1));
			LLVMValueRef *v = tot + (g * C + qc) * n;
			for (int i = 0; i < n; i++)
				v[i] = S->x[i][k];
			if (S->b)
				scan_lanes(S, v, ex ? ex + (g * C + qc) * n : NULL);
			if (!S->a) /* the run is this one element: it is its lanes' scan */
				for (int i = 0; i < n; i++)
					S->x[i][k] = v[i];
		}
	finish(S, n_lines, line_reg, tot, ex);
}

void lower_scan(Lower *L, const Op *op)
{
	int n = op->n_operands;
	if (n > MAX_REDUCE_OPERANDS) {
		lw_fail(L, op->loc, "%s of more than 8 blocks", op_name(op->code));
		return;
	}
	Scan S = {.L = L, .op = op, .r = &op->regions[0], .n = n, .rev = op->attr[1] != 0, .t = op->operands[0]->type};
	int axis = (int)op->attr[0];
	S.lo_bit = lin_bit(S.t, axis, 0);
	S.nbits = log2i(S.t.shape[axis]);
	const Lin *li = lw_lin_of(L, op->operands[0]), *lo = lw_lin_of(L, op->results[0]);
	for (int i = 0; i < n; i++) {
		S.et[i] = type_elem(op->operands[i]->type);
		if (!(S.x[i] = arena_alloc(&L->arena, sizeof *S.x[i] << li->n_reg))) {
			L->failed = true;
			return;
		}
		for (int k = 0; k < 1 << li->n_reg; k++)
			S.x[i][k] = el(L, op->operands[i], k);
	}
	S.s = *li;
	if (!read_runs(&S)) {
		scan_map(li, S.lo_bit, S.nbits, &S.s);
		if (!read_runs(&S)) {
			lw_fail(L, op->loc, "internal error: %s of a block whose layout misses an axis bit", "scan");
			return;
		}
		relayout(&S, li, &S.s);
	}
	if (S.nbits && !L->failed)
		scan_map_runs(&S);
	if (!L->failed && !lin_same(&S.s, lo))
		relayout(&S, &S.s, lo);
	for (int i = 0; i < n && !L->failed; i++) {
		Tile t = lw_tile_new(L, 1 << lo->n_reg);
		if (L->failed)
			return;
		memcpy(t.e, S.x[i], sizeof(LLVMValueRef) << lo->n_reg);
		L->vals[op->results[i]->id] = t;
	}
}
