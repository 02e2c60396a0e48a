/* gpu/gpu.h: GPU IR: encodings, axis analysis, the layout passes,
 * remove-conversions and pipelining. Tile IR in, GPU IR out; no LLVM. */
#ifndef BLK_GPU_H
#define BLK_GPU_H

#include "ir/ir.h"

/* ---- GPU IR: encodings, axis analysis, layout passes (encoding.c, axis.c,
 * layouts.c, remove_conversions.c, pipeline.c) ----
 *
 * The GPU passes turn tile IR into GPU IR: every block value gets an
 * encoding that says which thread holds which element, and a change of
 * encoding is an explicit convert_layout. docs/compiler.md shows each kind.
 *
 *   blocked<spt, tpw, wpc, order>  sizePerThread, threadsPerWarp, warpsPerCTA
 *                                  per dimension; order lists the fastest first
 *   slice<dim, parent>             what a reduction along dim leaves of parent
 *   mma<v2, wpc>                   a dot's accumulator: mma.sync m16n8 tiles
 *   mma<v3, wpc, instr_n>          a dot's accumulator: wgmma m64n<instr_n>k16
 *                                  tiles, a warpgroup's 4 warps along M, the
 *                                  warpgroups wpc[0] / 4 along M, wpc[1] along N
 *   dot_operand<idx, parent, kw>   input idx (0: A, 1: B) of such a dot
 *   linear<reg, lane, warp>        any other bit map (from join, reshape ...)
 *   shared<vec, load_vec, swizzle> a tile in shared memory (the scratch of a
 *                                  convert_layout), XOR-swizzled; read back
 *                                  with ldmatrix for mma operands, or read by
 *                                  wgmma itself (wgmma = the swizzle's bytes)
 *
 * Every distributed encoding of a block of power-of-two shape is a map of
 * bits (Lin): each bit of a thread's register number, of its lane and of
 * its warp sets one bit of the element's row-major linear index, or none
 * (-1: the element is held by several threads, replicated). Registers never
 * repeat an element. Lowering works on Lin alone. */

typedef enum EncKind { ENC_BLOCKED, ENC_SLICE, ENC_MMA, ENC_DOT_OPERAND, ENC_LINEAR, ENC_SHARED } EncKind;

enum { LIN_MAX_BITS = 24, LIN_MAX_WARP_BITS = 6 };

typedef struct Lin {
	int n_reg, n_lane, n_warp;
	int8_t reg[LIN_MAX_BITS], lane[5], warp[LIN_MAX_WARP_BITS];
} Lin;

struct Encoding {
	EncKind kind;
	int rank;
	int spt[BLK_MAX_RANK], tpw[BLK_MAX_RANK], wpc[BLK_MAX_RANK], order[BLK_MAX_RANK]; /* blocked; mma: wpc[0..1] */
	int dim;                  /* slice */
	int op_idx, k_width;      /* dot_operand */
	int version;              /* mma: 2 mma.sync, 3 wgmma */
	int instr_n;              /* mma v3: the N of one wgmma */
	const Encoding *parent;   /* slice, dot_operand */
	Lin lin;                  /* linear */
	int vec, load_vec;        /* shared: elements a thread stores at once, and loads */
	int ldmatrix;             /* shared: 1 the loads are ldmatrix, 2 ldmatrix.trans (a dot operand), 3 ldmatrix
	                           * of a B operand stored K-major (its K bits low in the address), 4
	                           * ldmatrix.trans of a 16-bit A stored M-major (its M bits low) */
	int wgmma;                /* shared: read by wgmma, in its layout of rows of this many bytes (32, 64,
	                           * 128), swizzled so; wgmma_fast the dimension whose elements are adjacent */
	int wgmma_fast;
	uint32_t swizzle[LIN_MAX_BITS]; /* shared: address bits XORed in when index bit j is set */
	int n_index_bits;         /* shared */
	int id;                   /* its number in the function */
};

/* The function's copy of e (equal encodings are one); NULL when out of memory. */
const Encoding *enc_intern(IrFunc *f, const Encoding *e);
const Encoding *enc_blocked(IrFunc *f, int rank, const int *spt, const int *tpw, const int *wpc, const int *order);
/* A blocked encoding for blocks of type t: vec elements a thread along
 * order[0] (NULL: the last dimension fastest), threads then warps along
 * order, so that 32 * num_warps threads cover the block once where they can. */
const Encoding *enc_default(IrFunc *f, Type t, int vec, const int *order);
const Encoding *enc_slice(IrFunc *f, int dim, const Encoding *parent);
const Encoding *enc_mma(IrFunc *f, int wm, int wn);
const Encoding *enc_mma3(IrFunc *f, int wm, int wn, int instr_n);
/* The shared scratch a wgmma reads operand t from: rows of `bytes` bytes
 * (32, 64 or 128) along dimension fast, swizzled as wgmma expects. */
/* The shared scratch (not interned) a wgmma reads operand op_idx (0: A,
 * 1: B) of type t from, stored from registers laid out by src: K-major
 * (A always; B where src's registers run along K, and 8-bit B always),
 * else B along N with rows no wider than the instruction's instr_n; its
 * store vector the registers from src's first whose elements lie one
 * after another there. False when no row width fits the tile. */
bool wgmma_operand_layout(Encoding *e, const Lin *src, Type t, int op_idx, int instr_n);
const Encoding *enc_dot_operand(IrFunc *f, int op_idx, const Encoding *parent, int k_width);
const Encoding *enc_linear(IrFunc *f, const Lin *lin);
/* The bit map of encoding e over blocks of type t. False when e cannot lay
 * out t (an mma operand shorter than one K step, a linear map of another size). */
bool enc_lin(const Encoding *e, Type t, int num_warps, Lin *out);
/* The registers that one mma.sync of a dot reads and writes, given the
 * maps of its accumulator (lc, over ct = [M, N]) and of its operands A
 * (la, [M, K]) and B (lb, [K, N]) in dot_operand encodings of k_width kw:
 * the tile that accumulator register g starts (false when g lies inside a
 * tile: column bit 0 or row bit 3 set), at K step kk (8 kw wide). c[i]:
 * the register of c_i (c0 c1 a row, columns +0 +1; c2 c3 eight rows on);
 * a[i]: the first of the kw registers of a_i (a1 a3 eight rows on, a2 a3
 * 4 kw k on); b[i] that of b_i (b1 4 kw k on). -1: the instruction's row
 * or column lies past a block of fewer than 16 rows or 8 columns (padding:
 * zeros go in, what comes out is dropped). Rows and columns past it that
 * fall on lanes are replicas in the maps already. */
bool mma_frag_regs(const Lin *lc, const Lin *la, const Lin *lb, Type ct, int K, int kw, int g, int kk, int c[4],
                   int a[4], int b[2]);
/* Whether a and b lay out blocks of type t the same way (register order too). */
bool enc_equiv(const Encoding *a, const Encoding *b, Type t, int num_warps);
/* A named (blocked, slice, mma ...) encoding of f equal to linear e for
 * blocks of type t, or e. */
const Encoding *enc_canonical(IrFunc *f, const Encoding *e, Type t);
void enc_print(const Encoding *e, StrBuf *out); /* "blocked<spt = [1, 4], ...>" */
/* Installs gpu/'s part of ir_print and ir_verify (ir.h, IrGpuHooks;
 * invariants.c). Making an encoding installs it too, so only a caller that
 * prints or verifies GPU IR gpu/ did not make need call it; any thread, any
 * number of times. */
void gpu_install_ir_hooks(void);
void enc_ref(const Encoding *e, StrBuf *out);   /* "#blocked3" */
/* What a reduction along axis of a block of type t laid out by in leaves:
 * the axis' bits gone (their lanes and warps replicas), the rest renumbered. */
void lin_slice(const Lin *in, Type t, int axis, Lin *out);
/* The exponent of the power of two at or above x (block sizes are powers of two). */
static inline int log2i(int x)
{
	int s = 0;
	while ((1 << s) < x)
		s++;
	return s;
}
/* The linear-index bit of bit i of dimension d in shape t. */
int lin_bit(Type t, int d, int i);

/* What is known of a block of integers or pointers along each dimension:
 * runs of contig[d] consecutive values (pointers: consecutive elements),
 * the first of each run divisible by div[d] (pointers: in bytes), and runs
 * of constancy[d] equal values. Scalars use index 0. */
typedef struct AxisInfo {
	int64_t contig[BLK_MAX_RANK], div[BLK_MAX_RANK], constancy[BLK_MAX_RANK];
	bool nonneg; /* an integer known to be >= 0 (aranges, program ids, sums of such) */
} AxisInfo;
/* Analyzes every value of f (loop-carried ones to a fixed point); an array
 * by value id to free(), or NULL when out of memory. */
AxisInfo *axis_analyze(const IrFunc *f);
/* The widest access (elements, a power of two up to 16 bytes) that pointers
 * `ptr` (with `mask`, may be NULL) allow along dimension d. */
int axis_access_width(const AxisInfo *ax, const Value *ptr, const Value *mask, int d);

/* The GPU passes: layouts assigns encodings (coalesced loads and stores,
 * slices for reductions, mma for dots) and inserts conversions;
 * remove-conversions recomputes cheap values in the encoding their users
 * want, folds chains of conversions and drops those that change nothing,
 * and gives each remaining one through shared memory its swizzled scratch. */
bool ir_layouts(IrFunc *f, Diag *diag);
/* pipeline (pipeline.c): with num_stages >= 2, each load at the top of a
 * `for` that writes no memory is issued one iteration ahead, its block
 * carried by the loop. Tile IR to tile IR; not in the GPU pipeline (through
 * registers it measured slower: docs/performance.md), run with --passes. */
bool ir_pipeline(IrFunc *f, Diag *diag);
/* pipeline-dots: only loads whose block goes into dots, the next
 * iteration's issued at the top of the body, before the dot, its pointers
 * computed there again from the loop's arguments; on sm_90a with
 * num_stages >= 4, wgmma tiles two iterations ahead. */
bool ir_pipeline_dots(IrFunc *f, Diag *diag);
/* Shape ops (expand_dims, reshape, broadcast, trans, join, cat, split) as
 * maps of linear-index bits: the operand bit that result bit out_bit comes
 * from, MAP_DROP when the operand has none (a broadcast dimension), MAP_SEL
 * when it picks the operand (join, cat). shape_in_registers tells whether
 * the op moves no element between threads from Lin in to Lin out. */
enum { MAP_DROP = -2, MAP_SEL = -3 };
bool shape_bit_map(const Op *op, int out_bit, int *in_bit);
bool shape_in_registers(const Op *op, const Lin *in, const Lin *out);
bool ir_remove_conversions(IrFunc *f, Diag *diag);
/* expand-descriptors (descriptors.c): each desc_load / desc_store becomes
 * a masked load / store of pointers base + sum (o_d + i_d) * s_d (tile IR
 * to tile IR; first in the GPU pipeline, so the passes after it see
 * ordinary loads and stores). */
bool ir_expand_descriptors(IrFunc *f, Diag *diag);
/* TMA (tma_plan.c): with f->tma on sm_90a, records in f->tmaps the tensor maps
 * of the descriptors whose tiles a loop loads for dots (what the runtime
 * encodes at launch, in this order, after the kernel's parameters); once
 * per function (f->tma_planned). ir_tma_map_of: the map a desc_load reads
 * through, or -1. expand-descriptors plans, then marks such loads MEMF_TMA. */
void ir_tma_plan(IrFunc *f);
int ir_tma_map_of(const IrFunc *f, const Op *op);
#define IR_GPU_PIPELINE "expand-descriptors,pipeline-dots,layouts,remove-conversions,cse,dce"

#endif
