/* kernels.h: whole kernels built in tile IR by hand, as the front end would
 * build them from examples/: shared by kernels_test.c and bench_interp.c. */
#ifndef BLK_TEST_KERNELS_H
#define BLK_TEST_KERNELS_H

#include "kb.h"

/* vadd(x: *f32, y: *f32, out: *f32, n: i32, BLOCK: const): out = x + y,
 * BLOCK elements a program, masked at n. */
static __attribute__((unused)) void build_vadd(KB *b, int block)
{
	kb_begin(b, "vadd");
	Value *x = kb_param(b, "x", tP(SK_F32, 1)), *y = kb_param(b, "y", tP(SK_F32, 1)),
	      *out = kb_param(b, "out", tP(SK_F32, 1)), *n = kb_param(b, "n", tS(SK_I32));
	kb_const_param(b, "BLOCK", block);
	Type bi = tB(tS(SK_I32), block);
	Value *start = kb_op(b, OP_MUL, tS(SK_I32), kb_pid(b, 0), kb_ci(b, tS(SK_I32), block), NULL);
	Value *offs = kb_op(b, OP_ADD, bi, kb_op(b, OP_SPLAT, bi, start, NULL, NULL), kb_arange(b, 0, block), NULL);
	Value *mask = kb_op_a(b, OP_CMP, tB(tS(SK_I1), block), CMP_LT, offs, kb_op(b, OP_SPLAT, bi, n, NULL, NULL), NULL);
	Value *vx = kb_load(b, kb_ptrs(b, x, offs), mask, NULL);
	Value *vy = kb_load(b, kb_ptrs(b, y, offs), mask, NULL);
	Value *s = kb_op(b, OP_ADD, tB(tS(SK_F32), block), vx, vy, NULL);
	kb_store(b, kb_ptrs(b, out, offs), s, mask);
	kb_ret(b);
}

/* softmax(x: *f32, out: *f32): row pid of C columns, C a power of two:
 * e = exp(x - max(x)); out = e / sum(e). */
static __attribute__((unused)) void build_softmax(KB *b, int C)
{
	kb_begin(b, "softmax");
	Value *x = kb_param(b, "x", tP(SK_F32, 1)), *out = kb_param(b, "out", tP(SK_F32, 1));
	Type bi = tB(tS(SK_I32), C), bf = tB(tS(SK_F32), C);
	Value *row = kb_op(b, OP_MUL, tS(SK_I32), kb_pid(b, 0), kb_ci(b, tS(SK_I32), C), NULL);
	Value *offs = kb_op(b, OP_ADD, bi, kb_op(b, OP_SPLAT, bi, row, NULL, NULL), kb_arange(b, 0, C), NULL);
	Value *v = kb_load(b, kb_ptrs(b, x, offs), NULL, NULL);
	Op *mx = kb_combine_op(b, OP_REDUCE, &v, 1, 0, false);
	Region *top = b->r;
	b->r = &mx->regions[0];
	Value *m2 = kb_op(b, OP_MAX, tS(SK_F32), b->r->args[0], b->r->args[1], NULL);
	kb_yield(b, &m2, 1);
	b->r = top;
	Value *e = kb_op_a(b, OP_MATH, bf, MATH_EXP,
	                   kb_op(b, OP_SUB, bf, v, kb_op(b, OP_SPLAT, bf, mx->results[0], NULL, NULL), NULL), NULL, NULL);
	Op *sm = kb_combine_op(b, OP_REDUCE, &e, 1, 0, false);
	b->r = &sm->regions[0];
	Value *s2 = kb_op(b, OP_ADD, tS(SK_F32), b->r->args[0], b->r->args[1], NULL);
	kb_yield(b, &s2, 1);
	b->r = top;
	Value *y = kb_op(b, OP_DIV, bf, e, kb_op(b, OP_SPLAT, bf, sm->results[0], NULL, NULL), NULL);
	kb_store(b, kb_ptrs(b, out, offs), y, NULL);
	kb_ret(b);
}

/* matmul(a: *IN, b: *IN, c: *ACC): c[M, N] = a[M, K] @ b[K, N], row-major, a
 * BM x BN tile a program (grid M / BM, N / BN), K in steps of BK through a
 * for loop carrying the accumulator. */
static __attribute__((unused)) void build_matmul(KB *b, int M, int N, int K, int BM, int BN, int BK, ScalarKind in,
                                                 ScalarKind acc_kind)
{
	(void)M;
	kb_begin(b, "matmul");
	Value *a = kb_param(b, "a", tP(in, 1)), *bb = kb_param(b, "b", tP(in, 1)),
	      *c = kb_param(b, "c", tP(acc_kind, 1));
	Type i32 = tS(SK_I32);
	Value *rm = kb_op(b, OP_MUL, i32, kb_pid(b, 0), kb_ci(b, i32, BM), NULL);
	Value *rn = kb_op(b, OP_MUL, i32, kb_pid(b, 1), kb_ci(b, i32, BN), NULL);
	/* rows[BM, 1] * K and cols[1, BN] */
	Value *am = kb_op(b, OP_ADD, tB(i32, BM), kb_op(b, OP_SPLAT, tB(i32, BM), rm, NULL, NULL), kb_arange(b, 0, BM), NULL);
	Value *bn = kb_op(b, OP_ADD, tB(i32, BN), kb_op(b, OP_SPLAT, tB(i32, BN), rn, NULL, NULL), kb_arange(b, 0, BN), NULL);
	Value *am2 = kb_op_a(b, OP_EXPAND_DIMS, tB2(i32, BM, 1), 1, am, NULL, NULL);
	Value *bn2 = kb_op_a(b, OP_EXPAND_DIMS, tB2(i32, 1, BN), 0, bn, NULL, NULL);
	Value *kk = kb_arange(b, 0, BK);
	Value *ak = kb_op_a(b, OP_EXPAND_DIMS, tB2(i32, 1, BK), 0, kk, NULL, NULL);
	Value *bk = kb_op_a(b, OP_EXPAND_DIMS, tB2(i32, BK, 1), 1, kk, NULL, NULL);
	/* a offsets [BM, BK] = am2 * K + ak; b offsets [BK, BN] = bk * N + bn2 */
	Value *aoff = kb_op(b, OP_ADD, tB2(i32, BM, BK),
	                    kb_op(b, OP_BROADCAST, tB2(i32, BM, BK),
	                          kb_op(b, OP_MUL, tB2(i32, BM, 1), am2, kb_op(b, OP_SPLAT, tB2(i32, BM, 1), kb_ci(b, i32, K), NULL, NULL), NULL),
	                          NULL, NULL),
	                    kb_op(b, OP_BROADCAST, tB2(i32, BM, BK), ak, NULL, NULL), NULL);
	Value *boff = kb_op(b, OP_ADD, tB2(i32, BK, BN),
	                    kb_op(b, OP_BROADCAST, tB2(i32, BK, BN),
	                          kb_op(b, OP_MUL, tB2(i32, BK, 1), bk, kb_op(b, OP_SPLAT, tB2(i32, BK, 1), kb_ci(b, i32, N), NULL, NULL), NULL),
	                          NULL, NULL),
	                    kb_op(b, OP_BROADCAST, tB2(i32, BK, BN), bn2, NULL, NULL), NULL);
	Value *acc0 = kb_cf(b, tB2(tS(acc_kind), BM, BN), 0.0);
	Value *fops[4] = {kb_ci(b, i32, 0), kb_ci(b, i32, K), kb_ci(b, i32, BK), acc0};
	Type accT = tB2(tS(acc_kind), BM, BN);
	Op *loop = kb_opv(b, OP_FOR, fops, 4, &accT, 1);
	Value *k = ir_region_arg(b->f, &loop->regions[0], i32), *acc = ir_region_arg(b->f, &loop->regions[0], accT);
	Region *top = b->r;
	b->r = &loop->regions[0];
	Value *ka = kb_op(b, OP_SPLAT, tB2(i32, BM, BK), k, NULL, NULL);
	Value *kb2 = kb_op(b, OP_MUL, tB2(i32, BK, BN), kb_op(b, OP_SPLAT, tB2(i32, BK, BN), k, NULL, NULL),
	                   kb_op(b, OP_SPLAT, tB2(i32, BK, BN), kb_ci(b, i32, N), NULL, NULL), NULL);
	Value *ta = kb_load(b, kb_ptrs(b, a, kb_op(b, OP_ADD, tB2(i32, BM, BK), aoff, ka, NULL)), NULL, NULL);
	Value *tb = kb_load(b, kb_ptrs(b, bb, kb_op(b, OP_ADD, tB2(i32, BK, BN), boff, kb2, NULL)), NULL, NULL);
	Value *nacc = kb_op(b, OP_DOT, accT, ta, tb, acc);
	kb_yield(b, &nacc, 1);
	b->r = top;
	Value *coff = kb_op(b, OP_ADD, tB2(i32, BM, BN),
	                    kb_op(b, OP_BROADCAST, tB2(i32, BM, BN),
	                          kb_op(b, OP_MUL, tB2(i32, BM, 1), am2, kb_op(b, OP_SPLAT, tB2(i32, BM, 1), kb_ci(b, i32, N), NULL, NULL), NULL),
	                          NULL, NULL),
	                    kb_op(b, OP_BROADCAST, tB2(i32, BM, BN), bn2, NULL, NULL), NULL);
	kb_store(b, kb_ptrs(b, c, coff), loop->results[0], NULL);
	kb_ret(b);
}

#endif
