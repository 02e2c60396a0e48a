/* lower/lower_int.h: what the files of the GPU lowering (GPU IR to LLVM IR)
 * share: its state, the tiles of values, the helpers every op uses. Internal
 * to compiler/lower.
 *
 * Layout. Every block value carries an encoding (layout.c), which the lowering
 * reads as a bit map (Lin): element k of a thread's registers is the one
 * whose linear index has the register bits of k, the lane bits and the
 * warp bits placed where the map says. Per thread, a block value is an
 * array of LLVM scalars, one per register. Element-wise ops work register
 * by register (their operands share the result's encoding); shape ops and
 * conversions whose lane and warp bits agree only rename registers; the
 * others go through shared memory, conversions with a swizzled scratch.
 * Reductions combine registers, then lanes with butterfly shuffles, then
 * warps through shared memory; scans likewise, in order (shfl.sync.up). A dot whose operands are dot_operand
 * encodings of an mma accumulator issues mma.sync; other dots use FMAs.
 *
 * Structured control flow becomes basic blocks with phis; all conditions
 * are scalars, so all threads of a program take the same path and barriers
 * inside loops and branches are safe.
 *
 * The files: lower.c (the entry point, the kernel and its state, the op
 * dispatch), builder.c (the helpers every op builds with: types, layouts
 * and indices, intrinsics, if blocks, counted loops), control_flow.c (for,
 * if, while), shared.c (the shared-memory scratch), global.c (global loads,
 * stores, atomics), async_copy.c (the dot tiles loops carry through shared
 * memory with cp.async), tma_copy.c (or with TMA), warp_spec.c (warp
 * specialization), elementwise.c, shape.c, convert.c (convert_layout,
 * ldmatrix), reduce.c, scan.c, dot.c (FMAs, or dot_mma.c's mma.sync,
 * dot_wgmma.c's wgmma), sort.c, histogram.c, gather.c, inline_asm.c,
 * print_assert.c; math.c has the math the GPU has no instruction for,
 * resources.c the register check, ptx.c LLVM IR to PTX.
 *
 * The files below lower.c call the helpers, never the dispatcher, but for
 * the two entries that lower IR inside an op: lower_region (a loop's body,
 * a combine region) and lw_lower_op (warp_spec.c's producer, op by op). */
#ifndef BLK_LOWER_INT_H
#define BLK_LOWER_INT_H

#include "lower/lower.h"

#include <llvm-c/Core.h>

enum { MAX_REDUCE_OPERANDS = 8 };

typedef struct Tile {
	LLVMValueRef *e; /* the elements this thread holds */
	int n;
} Tile;

typedef struct TmaFill TmaFill;

typedef struct Lower {
	Arena arena;      /* element arrays of tiles */
	const IrFunc *f;
	AxisInfo *ax;     /* by value id */
	Lin *lins;        /* by value id, filled on first use */
	bool *lin_done;
	Lin scalar_lin;   /* held by every thread */
	struct ThreadPart { Lin l; LLVMValueRef v; } *tparts; /* thread bits of an index, per map */
	int n_tparts, cap_tparts;
	LLVMBuilderRef pro; /* at the end of the entry block, before its branch */
	int smem_base;      /* bytes of shared memory pinned below the transient uses */
	int smem_floor;     /* below it, scratches kept for good (a wgmma operand hoisted out of its loops) */
	int kept_at[8], n_kept; /* where those start (n_kept 9: too many, no hole) */
	int hole_start, hole_lo, hole_end; /* free bytes below smem_floor, taken from hole_lo up */
	int smem_dirty;     /* bytes from 0 that may have been touched since the last barrier; -1: unknown */
	bool smem_unsynced; /* a pinned scratch written and no barrier since: one before reading it */
	bool async_pending; /* cp.async copies issued, not committed yet */
	bool async_synced;  /* the copies a conversion reads waited for since the last commit */
	bool wgmma_used;    /* shared memory is then aligned to 1024 bytes */
	struct LazyFrags **lazy; /* by value id: an mma operand read from its scratch when the dot needs it */
	bool *wg_inflight;       /* by value id: a wgmma dot's result its loop carries, the products still in flight */
	struct AsyncTile *async; /* dot tiles a loop carries through shared memory with cp.async */
	int n_async;
	LLVMValueRef tmap[TMA_MAX_MAPS]; /* the tensor maps' parameters (tma_copy.c) */
	struct TmaFill { int tile; LLVMValueRef buf, row, col; } tma_pending[32]; /* tile: in async */
	int n_tma_pending;             /* copies of tiles ahead, issued after their loop's next barrier */
	bool tma_stores;               /* the function has a TMA store (debug_barrier waits for them) */
	int ws;                        /* warp specialization (warp_spec.c): 0 none, WS_CONSUMER or WS_PRODUCER
	                                * for the code being lowered now */
	bool *ws_need;                 /* by value id: a scalar the producer computes */
	Diag *diag;
	bool failed;
	LLVMContextRef c;
	LLVMModuleRef m;
	LLVMBuilderRef b;
	LLVMValueRef fn;
	Tile *vals;       /* by value id */
	int T;            /* threads */
	LLVMValueRef tid; /* i32 */
	LLVMValueRef smem; /* dynamic shared memory, addrspace(3) */
	LLVMValueRef smem32; /* its 32-bit shared address, computed once (lw_smem_addr32) */
	int smem_bytes;
	int n_asserts;
	LLVMMetadataRef scope; /* the kernel's debug subprogram: ops carry .tile lines */
	LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, f64, gptr, sptr, vd;
} Lower;

/* A loop "for (i = lo; i < hi; i++)" around body(); phis for n values. */
typedef struct Loop {
	LLVMBasicBlockRef pre, head, body, exit;
	LLVMValueRef i;
	LLVMValueRef phis[MAX_REDUCE_OPERANDS];
	int n;
} Loop;

/* An mma operand read from its scratch with ldmatrix when its dot needs it
 * (convert.c says how). */
typedef struct LazyFrags {
	const Op *convert;
	const Lin *lo;
	Tile *t;
	bool *loaded;          /* by register */
	int offset;            /* of the pinned scratch, bytes */
	LLVMValueRef dyn;      /* i32 bytes added at run time (a cp.async stage), or NULL */
	bool owned;            /* its dot releases the scratch (not a loop's stage buffer) */
	bool wgmma;            /* read by wgmma from the scratch (no registers) */
	bool kept;             /* for every dot that reads it (converted outside their loop) */
	int stages;            /* the stage buffers it lies in (a loop's cp.async tiles), or 0 */
	int pair_bit, group;
	int kw;                /* elements of a 32-bit register: 4 / their bytes */
	bool b_op;             /* operand B (a group is b0 b1 of a tile, and of the next along N) */
	LLVMValueRef base_thread, fn;
	LLVMValueRef base_sw;  /* base_thread swizzled: a group's address is it ^ its register part's */
	unsigned thread_bits;  /* index bits base_thread may set */
	LLVMTypeRef ft;
} LazyFrags;

/* A dot tile a loop carries through shared memory with cp.async
 * (async_copy.c says how). */
typedef struct AsyncTile {
	const Op *loop;
	const Value *arg;        /* the carried tile */
	const Op *first, *ahead; /* its loads: before the loop, in the body */
	const Value *arg2;       /* two iterations ahead: the next iteration's tile, carried too (or NULL) */
	const Op *first2;        /* its load before the loop (iteration 1) */
	const Op *convert;       /* the tile to its dot operand */
	const Op *trans;         /* a transpose between the tile and the conversion (attention's K^T), or NULL */
	int offset, bytes;       /* n_stages stage buffers, pinned */
	int n_stages;            /* 2, or 3 for wgmma's operands (one more buffer for the dot left in flight) */
	int vec;                 /* elements a copy moves: 16 bytes */
	LLVMValueRef stage;      /* i32 in the body: the buffer the tile is in (with TMA, and the fill's parity) */
	LLVMValueRef stage2;     /* the buffer the next iteration's tile is in (arg2) */
	int tma;                 /* copied with TMA through f->tmaps[tma - 1] (tma_copy.c), or 0: cp.async */
	int bars;                /* with TMA: the buffers' mbarriers, 8 bytes each, after them */
	LLVMValueRef fills;      /* with TMA: an i32 alloca, bit b the parity of buffer b's next fill */
	LLVMValueRef count;      /* with warp specialization: i32 allocas, the fills in this run of the loop, */
	LLVMValueRef reads;      /* and the iterations that read one */
	int given_back;          /* how its dot gives buffers back: WS_PREVIOUS or WS_OWN (0: not yet known) */
} AsyncTile;

enum { WS_CONSUMER = 1, WS_PRODUCER = 2 };
enum { WS_PREVIOUS = 1, WS_OWN = 2 };

/* ---- builder.c: types, where a thread's elements lie, intrinsics ---- */

void lw_fail(Lower *L, Span at, const char *fmt, const char *what);
LLVMTypeRef lw_elem_type(Lower *L, Type t);
/* The type a value takes in shared memory (i1 as a byte). */
LLVMTypeRef lw_mem_type(Lower *L, Type t);

static inline int numel(Type t) { return (int)type_numel(t); }

static inline LLVMValueRef ci32(Lower *L, long long v) { return LLVMConstInt(L->i32, (unsigned long long)v, 1); }

/* Coordinate d of linear index idx in shape t (powers of two). */
LLVMValueRef lw_coord(Lower *L, Type t, LLVMValueRef idx, int d);
/* Linear index of coordinates c in shape t. */
LLVMValueRef lw_linearize(Lower *L, Type t, LLVMValueRef *c);
Tile lw_tile_new(Lower *L, int n);

static inline Tile *val(Lower *L, const Value *v) { return &L->vals[v->id]; }

/* Element k of value v, for an op whose result has `count` elements a
 * thread: scalars are uniform, so element 0 serves every k. */
static inline LLVMValueRef el(Lower *L, const Value *v, int k)
{
	Tile *t = val(L, v);
	return t->n == 1 ? t->e[0] : t->e[k];
}

const Lin *lw_lin_of(Lower *L, const Value *v);

/* Registers a thread holds of v. */
static inline int ept(Lower *L, const Value *v) { return 1 << lw_lin_of(L, v)->n_reg; }

/* The linear-index bits that register k sets. */
int lw_reg_const(const Lin *l, int k);
/* The register that holds the element whose register bits are c. */
int lw_reg_index(const Lin *l, int c);
/* The bits of the thread id that do not change which element (replicas). */
unsigned lw_repl_mask(const Lin *l);
/* The linear-index bits this thread's lane and warp set (i32), computed
 * once per map in the entry block. */
LLVMValueRef lw_thread_part(Lower *L, const Lin *l);
/* The linear index (i32) of register k of this thread in map l. */
LLVMValueRef lw_index_of(Lower *L, const Lin *l, int k);
/* Whether the thread-id bits in m are all 0 here (i1; the constant true
 * when m is empty). */
LLVMValueRef lw_tid_bits_zero(Lower *L, unsigned m);

/* Whether this thread is the first of the replicas of what it holds. */
static inline LLVMValueRef owner_of(Lower *L, const Lin *l) { return lw_tid_bits_zero(L, lw_repl_mask(l)); }

LLVMValueRef lw_call_intrinsic(Lower *L, const char *name, LLVMTypeRef *over, int n_over, LLVMValueRef *args,
                            int n_args);
LLVMValueRef lw_sreg(Lower *L, const char *name);
/* Branches to a new block when cond holds; returns the block to continue
 * in, for end_if (NULL, and no branch, when cond is the constant true). */
LLVMBasicBlockRef lw_begin_if(Lower *L, LLVMValueRef cond, const char *name);
void lw_end_if(Lower *L, LLVMBasicBlockRef done);

/* ---- builder.c: counted loops ---- */

void lw_loop_begin(Lower *L, Loop *lp, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef *init, int n);
void lw_loop_end(Lower *L, Loop *lp, LLVMValueRef *next);

/* ---- lower.c: the op dispatch; control_flow.c ---- */

/* Lowers r's ops in order (the tiles its loops carry through shared memory
 * found first). */
void lower_region(Lower *L, const Region *r);
void lw_lower_op(Lower *L, const Op *op);
/* Whether for-loop op's condition holds for iv. */
LLVMValueRef lw_loop_cond(Lower *L, const Op *op, LLVMValueRef iv);
void lower_for(Lower *L, const Op *op);
void lower_if(Lower *L, const Op *op);
void lower_while(Lower *L, const Op *op);

/* The values a region's terminator passes on. */
static inline const Op *terminator(const Region *r) { return r->last; }

/* ---- shared.c: shared memory ---- */

/* Element idx of type t from byte byte_offset of shared memory. */
LLVMValueRef lw_smem_abs(Lower *L, LLVMTypeRef t, int byte_offset, LLVMValueRef idx);
/* The 32-bit shared address of byte byte_offset (+ dyn, an i32 or NULL),
 * what mbarrier, TMA and wgmma descriptors take. */
LLVMValueRef lw_smem_addr32(Lower *L, int byte_offset, LLVMValueRef dyn);
/* The same, byte_offset from the transient uses' base. */
LLVMValueRef lw_smem_at(Lower *L, LLVMTypeRef t, int byte_offset, LLVMValueRef idx);
/* Pins bytes below the transient uses (until smem_base is lowered again);
 * returns where they start. */
int lw_smem_pin(Lower *L, int bytes);
/* The same, starting at a multiple of align (wgmma's swizzled operands). */
int lw_smem_pin_aligned(Lower *L, int bytes, int align);
/* A loop's stage buffers: pinned, in the hole below a kept scratch where
 * they fit (the buffers of the loop before). */
int lw_smem_pin_stages(Lower *L, int bytes, int align);
/* Frees the pinned bytes from `to` up, those kept for good excepted. */
void lw_smem_release(Lower *L, int to);
/* Keeps the scratch pinned at `at` (up to smem_base) for good. */
void lw_smem_keep(Lower *L, int at);
void lw_smem_barrier(Lower *L);
/* Transient shared memory for one use: the offset from smem_base (what
 * smem_at takes), behind a barrier where needed. */
int lw_smem_take(Lower *L, int bytes);
/* The barrier between a use's writes and its reads (of bytes at off). */
void lw_smem_sync(Lower *L, int off, int bytes);
/* Where what came before is not known (region boundaries). */
void lw_smem_unknown(Lower *L);
LLVMValueRef lw_to_mem(Lower *L, Type t, LLVMValueRef v);
LLVMValueRef lw_from_mem(Lower *L, Type t, LLVMValueRef v);
/* *p = v where pred holds, as one predicated st.shared. */
void lw_smem_store_if(Lower *L, LLVMValueRef pred, LLVMValueRef p, LLVMValueRef v);
/* Writes this thread's elements of x (tile v) to shared memory at
 * byte_offset (taken with smem_take), by linear index; replicas write once. */
void lw_smem_store_block(Lower *L, const Value *x, const Tile *v, int byte_offset);
LLVMValueRef lw_smem_load(Lower *L, Type t, int byte_offset, LLVMValueRef idx);

/* ---- async_copy.c: dot tiles through shared memory with cp.async ---- */

/* Finds the tiles loops in r carry through shared memory with cp.async
 * (before r is lowered: the first loads come before their loop). */
void lw_async_prescan(Lower *L, const Region *r);
/* The tile whose first or ahead load is ld, or that is carried as arg (or
 * transposed into it); NULL if none. */
AsyncTile *lw_async_of(Lower *L, const Op *ld, const Value *arg);
void lw_async_asm(Lower *L, const char *text, LLVMValueRef *args, LLVMTypeRef *types, int n, const char *cons);
void lw_async_commit(Lower *L);
/* Before a conversion reads tile a: its copies (and TMA fills) waited for
 * and visible to every thread, once an iteration; wgmma: read by wgmma. */
void lw_async_wait(Lower *L, const AsyncTile *a, bool wgmma);
/* Load op of tile a: its copies into a stage buffer, whose number is the
 * load's value. */
void lw_lower_async_load(Lower *L, const Op *op, AsyncTile *a);

/* ---- global.c: global memory ---- */

/* How many consecutive registers of ptr one access can take (contiguous,
 * aligned, under one mask bit; 16 bytes at most). */
int lw_access_width(Lower *L, const Value *ptr, const Value *mask);
/* A load or store through registers (not a carried tile's load). */
void lower_load_store(Lower *L, const Op *op);

/* ---- tma_copy.c: a loop's dot tiles copied with TMA ---- */

/* The tensor maps' parameters, from the kernel's parameter first_param on. */
void lw_tma_params(Lower *L, int first_param);
/* Whether tile a comes by TMA (then sets a->tma). */
bool lw_tma_tile(Lower *L, AsyncTile *a);
/* Before the loop: the buffers and barriers, pinned and set up. */
void lw_tma_init(Lower *L, AsyncTile *a);
/* Warp specialization, at the kernel's start: every TMA tile's buffers,
 * full and empty barriers and fill counts, for the whole kernel. */
void lw_tma_ws_init(Lower *L);
/* Warp specialization's consumers, after dot op's wgmma wait: the buffers
 * of its TMA operands the tensor cores are done with, given back (the
 * previous iteration's where its products stay in flight, else its own). */
void lw_tma_ws_release(Lower *L, const Op *op, bool in_flight);
/* Fills buffer buf with load ld's box; returns the tile's value. */
LLVMValueRef lw_tma_fill(Lower *L, AsyncTile *a, const Op *ld, LLVMValueRef buf);
/* The copies of loop's tiles ahead its body's loads left for after its
 * barrier (not another loop's: a loop inside the body has its own). */
void lw_tma_flush(Lower *L, const Op *loop);
/* The buffer number in a tile's value. */
LLVMValueRef lw_tma_buffer(Lower *L, LLVMValueRef stage);
/* Every thread waits for the TMA tiles of `loop` it reads now. */
void lw_tma_wait(Lower *L, const Op *loop);
/* After loop op: its copies ahead complete, its barriers invalidated. */
void lw_tma_drain(Lower *L, const Op *op);
/* A store marked MEMF_TMA copied out of shared memory (an atomic_rmw so
 * marked: reduced into memory); false for a uniform value (the plain store
 * or atomic takes it). */
bool lw_tma_store(Lower *L, const Op *op);
/* Before debug_barrier(): thread 0's TMA stores complete and visible. */
void lw_tma_store_fence(Lower *L);
void lower_atomic(Lower *L, const Op *op); /* global.c */

/* ---- warp_spec.c: warp specialization ---- */

/* Whether f's TMA loops split into a producer warpgroup and the consumers
 * (f->warp_specialize, and everything the producer computes is scalar);
 * then the async tiles of the whole function are known. */
bool lw_ws_plan(Lower *L);
/* At the body's start: the buffers and barriers of every TMA tile set up,
 * the producer warpgroup's code (to its return), the consumers' start. */
void lw_ws_begin(Lower *L);
/* The registers a thread may have at launch (the kernel's .maxnreg). */
int lw_ws_launch_regs(const Lower *L);

/* ---- elementwise.c ---- */

static inline bool is_fp8(Type t) { return !t.ptr && (t.scalar == SK_F8E4M3 || t.scalar == SK_F8E5M2); }
static inline bool is_signed(Type t) { return !t.ptr && scalar_is_signed((ScalarKind)t.scalar) && t.scalar != SK_I1; }

LLVMValueRef lw_const_elem(Lower *L, const Op *op, Type t);
LLVMValueRef lw_cast(Lower *L, Type from, Type to, LLVMValueRef v, Span at);
/* An OPF_ELEMWISE op whose result has n elements a thread. */
void lower_elementwise(Lower *L, const Op *op, int n);
void lower_philox(Lower *L, const Op *op);

/* ---- reduce.c, scan.c ---- */

/* Runs combine region r on scalars a[0..n) and b[0..n), results in out. */
void lw_combine(Lower *L, const Region *r, int n, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *out);
/* shfl.sync.MODE ("bfly", "up", "down", "idx") of v of any element type,
 * b the lane operand, over the whole warp. */
LLVMValueRef lw_shfl(Lower *L, const char *mode, LLVMValueRef v, LLVMValueRef b);
void lower_reduce(Lower *L, const Op *op);
void lower_scan(Lower *L, const Op *op);

/* ---- shape.c, convert.c, dot.c, dot_mma.c, print_assert.c ---- */

void lower_shape(Lower *L, const Op *op);
LLVMValueRef lw_swizzle_value(Lower *L, const Encoding *s, LLVMValueRef idx);
/* Scratch addresses of register k of map l: the register part swizzled at
 * compile time, the thread part (tsw) once per op. */
LLVMValueRef lw_scratch_addr(Lower *L, const Encoding *s, const Lin *l, LLVMValueRef tsw, int k);
/* Register k of a lazily read operand, loading its group first if needed. */
LLVMValueRef lw_frag(Lower *L, const Value *v, int k);
/* Stores x's registers (vec at a time: their addresses must run on) at
 * byte `at` of shared memory in scratch map s; replicas store once. */
void lw_scratch_store(Lower *L, const Value *x, const Encoding *s, int at, int vec);
/* The same, only the registers whose scratch addresses lie in part `part`
 * (of part_elems elements; the addresses stay the whole scratch's, so the
 * part's own bytes start at at + part * part_elems elements). */
void lw_scratch_store_part(Lower *L, const Value *x, const Encoding *s, int at, int vec, int part_elems, int part);
/* Whether each thread's part of x's scratch addresses stays below
 * part_elems: which part of that size a register's element lies in then
 * depends on the register alone. */
bool lw_scratch_parts(Lower *L, const Value *x, const Encoding *s, int part_elems);
/* Whether y's only use is a dot that comes after op in the same region. */
bool lw_only_for_dot(const Op *op);
/* as: the tile a loop carries in shared memory that op converts (read
 * from its stage buffer), or NULL. */
void lower_convert(Lower *L, const Op *op, AsyncTile *as);
void lower_dot(Lower *L, const Op *op);
void lower_dot_mma(Lower *L, const Op *op);
void lower_dot_wgmma(Lower *L, const Op *op);
/* wgmma.wait_group 0 with t's registers tied through it (a loop's result
 * whose last products may still be in flight); t becomes the waited copy. */
void lw_wgmma_wait(Lower *L, Tile *t);
void lower_sort(Lower *L, const Op *op);      /* sort.c: sort and topk */
/* sort.c: a sort or topk network of more word operations a thread than
 * SORT_UNROLL_MAX (unrolled, ptxas would take minutes on it) runs as loops
 * over its words: in shared memory where they take SORT_SMEM_BYTES or
 * less, else in local memory, its warps exchanging words through
 * SORT_XCHG_BYTES of shared memory at a time. */
enum { SORT_UNROLL_MAX = 8192, SORT_SMEM_BYTES = 65536, SORT_XCHG_BYTES = 16384 };
long gpu_sort_net_ops(const IrFunc *f, const Op *op);
/* The local memory a thread of op's looped network takes (bytes), 0 where
 * it is unrolled; *smem: the shared memory its words take there (0: they
 * lie in local memory). */
long gpu_sort_loop_bytes(const IrFunc *f, const Op *op, long *smem);
void lower_histogram(Lower *L, const Op *op); /* histogram.c */
/* Bins a histogram counts in shared memory at once (64 KiB); more are
 * counted in parts of that size, one pass over the block each. */
enum { HIST_PART_BINS = 16384 };
void lower_print(Lower *L, const Op *op);
/* gather.c */
void lower_gather(Lower *L, const Op *op);
void lower_sreg(Lower *L, const Op *op);
/* inline_asm.c */
void lower_inline_asm(Lower *L, const Op *op);
void lower_assert(Lower *L, const Op *op);

/* ---- resources.c ---- */

/* Registers a thread may need for one block value. Past GPU_SPILL_BLOCK_REGS
 * (four times the 255 a thread has) the block lives in local memory, spilled
 * by ptxas, with a warning naming it; past GPU_MAX_BLOCK_REGS lowering refuses
 * the kernel: ptxas would take minutes (a 512 x 512 f32 transpose on 4 warps,
 * 2,048 registers a thread, takes it about 9 s; a 1024 x 1024 one, 8,192,
 * two minutes). A sort or topk whose network grows past SORT_UNROLL_MAX
 * runs as loops instead (sort.c), with a warning. */
enum { GPU_SPILL_BLOCK_REGS = 4 * 255, GPU_MAX_BLOCK_REGS = 4096 };
/* A warning for a block value of f past GPU_SPILL_BLOCK_REGS, an error
 * (naming the kernel, the block's op and type, its registers a thread, and
 * what to do) past the limit; a warning for each looped sort or topk. */
bool gpu_check_registers(const IrFunc *f, Diag *diag);

/* ---- math.c ---- */

/* Math without a GPU instruction: f32 sin, cos, tanh and f64 exp, exp2,
 * log, log2, sin, cos, tanh as IR; NULL for the others. fp8 values are i8
 * bits; conversions with f32 round to nearest even and saturate. */
LLVMValueRef gpu_math(LLVMBuilderRef b, LLVMModuleRef m, MathFn fn, LLVMValueRef x);
LLVMValueRef gpu_fp8_to_f32(LLVMBuilderRef b, LLVMModuleRef m, ScalarKind kind, LLVMValueRef bits);
LLVMValueRef gpu_f32_to_fp8(LLVMBuilderRef b, LLVMModuleRef m, ScalarKind kind, LLVMValueRef x);
/* Exact fmod of two floats (the result has x's sign). */
LLVMValueRef gpu_fmod(LLVMModuleRef m, LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y);

#endif
