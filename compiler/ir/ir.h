/* ir/ir.h: the tile IR (building and editing, the printer, the verifier),
 * the pass manager and the shape-level passes (canonicalize, cse, dce), and
 * the float formats that constant folding and the interpreter share.
 *
 * Functions here and in the other compiler headers are internal to libblk
 * unless marked BLK_API: libblk.so is built with -fvisibility=hidden and a
 * version script that exports only blk_* symbols. Nothing here prints or
 * exits; errors come back through a Diag or as strings. */
#ifndef BLK_IR_H
#define BLK_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lang.h"
#include "ir/options.h"

/* Marks a function that libblk.so exports (its name must start with blk_). */
#ifndef BLK_API
#define BLK_API __attribute__((visibility("default")))
#endif

/* ---- tile IR (ir.c) ---------------------------------------------------------
 *
 * SSA over typed values: scalars, pointers, and blocks (static shapes).
 * Control flow is structured: `for`, `if`, `while`, `reduce` and `scan`
 * own regions; a region is one straight list of ops with arguments, ended
 * by a terminator (yield or condition). A kernel is one IrFunc.
 *
 * Operands of element-wise ops have equal types (irgen inserts casts and
 * broadcasts); only the exceptions are noted in the table.
 *
 * OP(name, spelling, regions, flags)   flags: OPF_PURE (no side effect, may be
 * removed or merged), OPF_TERM (terminator), OPF_ELEMWISE (applies per element)
 */

enum { OPF_PURE = 1, OPF_TERM = 2, OPF_ELEMWISE = 4 };
#define OPF_PE (OPF_PURE | OPF_ELEMWISE)

#define BLK_OPS(OP) \
	/* constants and index blocks */ \
	OP(CONST, "const", 0, OPF_PURE)            /* ival (ints, i1) or fval (floats); a block type splats */ \
	OP(ARANGE, "arange", 0, OPF_PURE)          /* i32[end - start]: attr[0] start, attr[1] end */ \
	OP(PROGRAM_ID, "program_id", 0, OPF_PURE)  /* i32: attr[0] axis 0..2 */ \
	OP(NUM_PROGRAMS, "num_programs", 0, OPF_PURE) \
	/* shape ops */ \
	OP(SPLAT, "splat", 0, OPF_PURE)            /* scalar -> block of the result type */ \
	OP(BROADCAST, "broadcast", 0, OPF_PURE)    /* block -> block, size-1 dims repeated; same rank */ \
	OP(EXPAND_DIMS, "expand_dims", 0, OPF_PURE) /* attr[0] axis: a new dim of size 1 there */ \
	OP(RESHAPE, "reshape", 0, OPF_PURE)        /* same element count, row-major order */ \
	OP(TRANS, "trans", 0, OPF_PURE)            /* attr[0..rank-1]: result dim i is operand dim attr[i] */ \
	OP(CAT, "cat", 0, OPF_PURE)                /* a, b: concatenated along dim 0 */ \
	OP(JOIN, "join", 0, OPF_PURE)              /* a, b of one shape -> shape + [2]; [..., 0] = a */ \
	OP(SPLIT, "split", 0, OPF_PURE)            /* last dim 2 -> two results, [..., 0] and [..., 1] */ \
	OP(GATHER, "gather", 0, OPF_PURE)          /* x, idx (i32 block of x's rank and shape but along attr[0]) \
	                                              -> idx's shape: r[i] = x[i with i[axis] = idx[i]] */ \
	/* arithmetic: ints wrap; / and % of ints truncate toward zero (C) */ \
	OP(ADD, "add", 0, OPF_PE) \
	OP(SUB, "sub", 0, OPF_PE) \
	OP(MUL, "mul", 0, OPF_PE) \
	OP(DIV, "div", 0, OPF_PE)                  /* floats: attr[0] 1 rounds to nearest even (div_rn) */ \
	OP(REM, "rem", 0, OPF_PE)                  /* floats: fmod */ \
	OP(AND, "and", 0, OPF_PE)                  /* ints and i1 */ \
	OP(OR, "or", 0, OPF_PE) \
	OP(XOR, "xor", 0, OPF_PE) \
	OP(SHL, "shl", 0, OPF_PE)                  /* shift counts >= width give 0 (or -1/0 for signed >>) */ \
	OP(SHR, "shr", 0, OPF_PE)                  /* arithmetic for signed, logical for unsigned */ \
	OP(MIN, "min", 0, OPF_PE)                  /* floats: attr[0] 1 propagates NaN, 0 returns the number */ \
	OP(MAX, "max", 0, OPF_PE) \
	OP(UMULHI, "umulhi", 0, OPF_PE)            /* high half of the full product, u32/i32 */ \
	OP(ADDPTR, "addptr", 0, OPF_PE)            /* ptr, integer offset in elements (types differ) */ \
	OP(CMP, "cmp", 0, OPF_PE)                  /* -> i1; attr[0] CmpPred; signedness from operands */ \
	OP(SELECT, "select", 0, OPF_PE)            /* i1 cond, a, b */ \
	OP(NEG, "neg", 0, OPF_PE) \
	OP(NOT, "not", 0, OPF_PE)                  /* bitwise; logical on i1 */ \
	OP(ABS, "abs", 0, OPF_PE) \
	OP(FMA, "fma", 0, OPF_PE)                  /* a * b + c, one rounding */ \
	OP(MATH, "math", 0, OPF_PE)                /* attr[0] MathFn; floats */ \
	/* conversions */ \
	OP(CAST, "cast", 0, OPF_PE)                /* element conversion; floats round to nearest even, \
	                                              float -> int truncates toward zero and saturates, NaN -> 0 */ \
	OP(BITCAST, "bitcast", 0, OPF_PE)          /* same bit width */ \
	OP(PTR_TO_INT, "ptr_to_int", 0, OPF_PE)    /* -> i64 */ \
	OP(INT_TO_PTR, "int_to_ptr", 0, OPF_PE) \
	OP(HINT, "hint", 0, OPF_PURE)              /* identity; attr[0] divisibility, attr[1] contiguity (0: none) */ \
	OP(CONVERT_LAYOUT, "convert_layout", 0, OPF_PURE) /* GPU IR: the same block in the result's encoding */ \
	/* memory */ \
	OP(LOAD, "load", 0, 0)                     /* ptr [, mask [, other]]; attr[0] operand flags (MEMF_*), \
	                                              attr[1] CacheMod, attr[2] Eviction, attr[3] volatile */ \
	OP(STORE, "store", 0, 0)                   /* ptr, value [, mask]; attr[0] MEMF_MASK, attr[1] CacheMod, attr[2] Eviction */ \
	OP(ATOMIC_RMW, "atomic_rmw", 0, 0)         /* ptr, value [, mask] -> old; attr[0] AtomicOp, attr[1] MemSem, \
	                                              attr[2] MemScope, attr[3] MEMF_MASK */ \
	OP(ATOMIC_CAS, "atomic_cas", 0, 0)         /* ptr, expected, desired -> old; attr[1] MemSem, attr[2] MemScope */ \
	OP(DESC_LOAD, "desc_load", 0, 0)           /* tensor descriptor load: base (scalar *T), shape[r], strides[r], \
	                                              offsets[r] (scalars of one integer type, i32 or i64) -> T[B0..] \
	                                              (r = its rank): element (o0 + i0, ...) at base + sum (o_d + i_d) * s_d, \
	                                              0 where an index is outside [0, shape_d) (NaN with attr[0] \
	                                              DESC_PAD_NAN); strides[r - 1] is 1 */ \
	OP(DESC_STORE, "desc_store", 0, 0)         /* base, shape[r], strides[r], offsets[r], value T[B0..]: the \
	                                              elements inside the bounds written, the others not */ \
	OP(DESC_ATOMIC, "desc_atomic", 0, 0)       /* as desc_store, each element inside the bounds combined \
	                                              atomically (relaxed, gpu scope) with attr[0] AtomicOp (add, \
	                                              max, min, and, or, xor); no result */ \
	OP(DESC_GATHER, "desc_gather", 0, 0)       /* rank 2: base, shape[2], strides[2], rows (index type [R]), \
	                                              col -> T[R, B1]: element (i, j) at (rows[i], col + j), 0 (NaN \
	                                              with attr[0] DESC_PAD_NAN) out of bounds */ \
	OP(DESC_SCATTER, "desc_scatter", 0, 0)     /* rank 2: base, shape[2], strides[2], rows [R], col, value \
	                                              T[R, B1]: the elements inside the bounds written */ \
	/* block computations */ \
	OP(REDUCE, "reduce", 1, OPF_PURE)          /* n blocks -> n results without dim attr[0]; region: \
	                                              (a_1..a_n, b_1..b_n) -> yield n combined values */ \
	OP(SCAN, "scan", 1, OPF_PURE)              /* n blocks -> n blocks of the same shape; attr[0] axis, \
	                                              attr[1] reverse; region as reduce; inclusive */ \
	OP(DOT, "dot", 0, OPF_PURE)                /* a[M, K], b[K, N], acc[M, N] -> [M, N]; attr[0] DotPrecision */ \
	OP(PHILOX, "philox", 0, OPF_PURE)          /* seed (u64), counter (u32 block) -> four u32 blocks; attr[0] rounds */ \
	OP(SORT, "sort", 0, OPF_PURE)              /* x -> x sorted along attr[0] [, i32 positions]; attr[1] descending; \
	                                              stable; NaN above +inf, -0.0 below +0.0 (docs/language.md) */ \
	OP(TOPK, "topk", 0, OPF_PURE)              /* x -> the attr[1] largest along attr[0], descending, and their i32 \
	                                              positions (the axis' length attr[1]); ties: the smaller position */ \
	OP(HISTOGRAM, "histogram", 0, OPF_PURE)    /* int block x [, i1 mask] -> i32[attr[0]]: counts of the values \
	                                              in [0, attr[0]) where mask holds */ \
	/* debugging */ \
	OP(PRINT, "print", 0, 0)                   /* values...; str prefix; attr[0] 1 for hex */ \
	OP(BARRIER, "barrier", 0, 0)               /* every thread of the program waits for the others (bar.sync 0) */ \
	OP(SREG, "sreg", 0, 0)                     /* a special register: attr[0] SregKind; a scalar */ \
	OP(INLINE_ASM, "inline_asm", 0, 0)         /* element-wise PTX: str the text, operands the blocks (or \
	                                              scalars) it reads, results of one shape; attr[0] pure, \
	                                              attr[1] elements an instance takes (pack); str2 the LLVM \
	                                              constraints, outputs first */ \
	OP(ASSERT, "assert", 0, 0)                 /* i1 cond (scalar or block); str message; loc the source */ \
	/* structured control flow */ \
	OP(FOR, "for", 1, 0)                       /* lb, ub, step, init... -> results; region (iv, iters...); \
	                                              attr[0] unroll hint (0: none) */ \
	OP(IF, "if", 2, 0)                         /* cond -> results; regions then, else */ \
	OP(WHILE, "while", 2, 0)                   /* init... -> results; region 0 (args) -> condition, \
	                                              region 1 (forwarded) -> yield */ \
	OP(YIELD, "yield", 0, OPF_TERM)            /* values to the parent op */ \
	OP(CONDITION, "condition", 0, OPF_TERM)    /* i1 cond, forwarded values... (ends a while's region 0) */ \
	OP(RETURN, "return", 0, OPF_TERM)          /* ends the kernel */

typedef enum OpCode {
#define OP_ENUM(name, spelling, regions, flags) OP_##name,
	BLK_OPS(OP_ENUM)
#undef OP_ENUM
	OP_COUNT
} OpCode;

typedef enum CmpPred { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } CmpPred;

#define BLK_MATH_FNS(M) \
	M(EXP, "exp") M(EXP2, "exp2") M(LOG, "log") M(LOG2, "log2") M(SQRT, "sqrt") M(RSQRT, "rsqrt") \
	M(SIN, "sin") M(COS, "cos") M(TANH, "tanh") M(ERF, "erf") M(FLOOR, "floor") M(CEIL, "ceil") \
	M(SQRT_RN, "sqrt_rn") M(TRUNC, "trunc") M(RINT, "rint") M(ROUND, "round")
typedef enum MathFn {
#define MATH_ENUM(name, spelling) MATH_##name,
	BLK_MATH_FNS(MATH_ENUM)
#undef MATH_ENUM
	MATH_COUNT
} MathFn;

/* MEMF_TMA (a load or store of a tensor descriptor's box, GPU pipeline
 * only): operands ptr, mask, other (a store: ptr, value, mask), then the
 * descriptor's offsets o_0..o_{r-1} (scalars); attr[4] the TmaMap of f it
 * goes through. The lowering may copy it with TMA instead; every other
 * reader takes it as the masked load or store it also is. An atomic_rmw
 * (a desc_atomic's box) has these flags in attr[3] (ptr, value, mask, then
 * the offsets) and its map in attr[4]: the lowering may reduce it into
 * memory with TMA (cp.reduce.async.bulk.tensor), its result then unset. */
enum { MEMF_MASK = 1, MEMF_OTHER = 2, MEMF_TMA = 4 };
typedef enum CacheMod { CACHE_DEFAULT, CACHE_CA, CACHE_CG, CACHE_CS, CACHE_CV, CACHE_WB, CACHE_WT } CacheMod;
typedef enum Eviction { EVICT_NORMAL, EVICT_FIRST, EVICT_LAST } Eviction;
/* what a descriptor load reads outside the tensor (attr[0] of desc_load, desc_gather) */
enum { DESC_PAD_ZERO, DESC_PAD_NAN };
typedef enum AtomicOp { ATOM_ADD, ATOM_MAX, ATOM_MIN, ATOM_AND, ATOM_OR, ATOM_XOR, ATOM_XCHG } AtomicOp;
typedef enum MemSem { SEM_ACQ_REL, SEM_ACQUIRE, SEM_RELEASE, SEM_RELAXED } MemSem;
typedef enum MemScope { SCOPE_GPU, SCOPE_CTA, SCOPE_SYS } MemScope;
typedef enum DotPrecision { DOT_TF32, DOT_TF32X3, DOT_IEEE } DotPrecision;
typedef enum SregKind { SREG_GLOBALTIMER, SREG_SMID } SregKind; /* u64 nanoseconds; i32 multiprocessor */

typedef struct Op Op;
typedef struct Region Region;
typedef struct Encoding Encoding;

typedef struct Value {
	Type type;
	int id;        /* unique in its function; dense from 0 */
	Op *def;       /* defining op; NULL for a region argument */
	Region *owner; /* for a region argument */
	int index;     /* result or argument position */
	int uses;      /* operand slots that refer to it */
	const Encoding *enc; /* GPU IR: how its elements lie across threads (blocks only) */
} Value;

struct Region {
	Value **args;
	int n_args;
	Op *first, *last;
	Op *parent;
};

struct Op {
	OpCode code;
	Span loc;
	Value **operands;
	int n_operands;
	Value **results;
	int n_results;
	Region *regions;
	int n_regions;
	int64_t attr[BLK_MAX_RANK];
	int64_t ival;
	double fval;
	const char *str;
	const char *str2; /* inline_asm: its constraints */
	Op *prev, *next;
	Region *parent;
	const Encoding *scratch; /* GPU IR: a convert_layout's shared-memory tile (NULL: in registers) */
};

typedef struct IrParam {
	const char *name;
	Value *value;  /* NULL for a const parameter (folded away) */
	int64_t divisibility; /* specialization: the argument is a multiple of this (pointers: in bytes); 0 unknown */
	bool equals_one;      /* specialization: the argument is 1 (its uses were given the constant) */
	bool is_const;
	bool is_type;  /* a const parameter of kind type: `type` is its value */
	int64_t const_ival;
	double const_fval;
	Type type;
} IrParam;

/* A tensor map the runtime makes for a launch (cuTensorMapEncodeTiled) and
 * passes after the kernel's own parameters, for TMA copies of the tiles of
 * a tensor descriptor (gpu/tma_plan.c plans them). Each size and stride is a
 * runtime argument (its index among them) or a constant (arg -1). */
enum { TMA_MAX_RANK = 2, TMA_MAX_MAPS = 8 };
typedef struct TmaDim {
	int arg;       /* runtime argument index, or -1 */
	int64_t value; /* the constant when arg < 0 */
} TmaDim;
typedef struct TmaMap {
	int base_arg;            /* the runtime argument that is the tensor's base pointer */
	int elem;                /* ScalarKind of its elements */
	int rank;
	TmaDim dim[TMA_MAX_RANK];    /* elements along each dimension, outermost first */
	TmaDim stride[TMA_MAX_RANK]; /* in elements; the last is 1 */
	int box[TMA_MAX_RANK];   /* the box one copy moves: the block's rows, and row_bytes / element bytes */
	int row_bytes;           /* 32, 64 or 128: the swizzle, as wgmma reads its operands */
	bool store;              /* a desc_store copies out through it (the runtime's rules differ) */
	bool nan_fill;           /* loads read NaN outside the tensor (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_...) */
} TmaMap;

typedef struct IrFunc {
	const char *name;
	Arena *arena;
	IrParam *params;
	int n_params;
	Region body;   /* ends with RETURN */
	int n_values;
	/* the options (ir/options.h), settled by irgen: num_warps, num_stages,
	 * tma (asked for; planned by gpu/tma_plan.c), fp_fusion, warp_specialize
	 * (lower/warp_spec.c), ... */
#define OPTION_FIELD(name, ...) int name;
	BLK_OPTIONS(OPTION_FIELD)
#undef OPTION_FIELD
	Span loc;
	/* GPU IR (gpu/): set by the layouts pass */
	bool gpu;          /* every block value has an encoding */
	int sm;            /* target compute capability (80, 90); 0: 80 */
	bool sm_a;         /* the target's arch-specific features (sm_90a: wgmma, setmaxnreg) */
	Encoding **encs;   /* the distinct encodings, numbered by Encoding.id */
	int n_encs, cap_encs;
	/* TMA (gpu/tma_plan.c): planned (when the option tma asks, on sm_90a), and the maps */
	bool tma_planned;
	TmaMap tmaps[TMA_MAX_MAPS];
	int n_tmaps;
} IrFunc;

/* The GPU IR's part of the printer and the verifier, which gpu/ provides
 * (gpu/invariants.c), so that ir/, the lower stage, needs no gpu/ header.
 * gpu/ installs its one table whenever it makes an encoding (and
 * gpu_install_ir_hooks() does it on purpose): IR with encodings always
 * finds the hooks that read them. Installing is an atomic store of one
 * constant table, safe from any thread, any number of times. */
typedef struct IrGpuHooks {
	/* "#blocked3": a reference to an encoding */
	void (*enc_ref)(const Encoding *e, StrBuf *out);
	/* "#blocked3 = blocked<...>" lines, one an encoding that f uses */
	void (*print_encodings)(const IrFunc *f, StrBuf *out);
	/* The GPU IR's invariants of one op whose tile IR checks passed (f->gpu
	 * set): false with what is wrong (without the place) in `why` */
	bool (*check_op)(const IrFunc *f, const Op *op, StrBuf *why);
} IrGpuHooks;

void ir_set_gpu_hooks(const IrGpuHooks *hooks);
const IrGpuHooks *ir_gpu_hooks(void); /* NULL until gpu/ installed them */

const char *op_name(OpCode code);
int op_flags(OpCode code);
int op_regions(OpCode code);

IrFunc *ir_func_new(Arena *a, const char *name, Span loc);
/* Sets f's target from a name such as "sm_90a" (compute capability 90,
 * arch-specific features on); other names leave it. */
void ir_set_target(IrFunc *f, const char *arch);
Value *ir_region_arg(IrFunc *f, Region *r, Type t);
/* Appends an op at the end of `r` with the given operands and result
 * types. Regions (op_regions(code) of them) start empty. */
Op *ir_append(IrFunc *f, Region *r, OpCode code, Span loc, Value **operands, int n_operands,
              const Type *result_types, int n_results);
void ir_remove(Op *op);           /* unlinks an op without uses of its results */
void ir_replace_uses(IrFunc *f, Value *from, Value *to);
/* Moves the ops and arguments of src into dst (src is left empty). */
void ir_move_region(Region *dst, Region *src);
/* src's ops (src has no arguments) moved to the end of dst; src left empty. */
void ir_append_region(Region *dst, Region *src);
/* Removes every op of r, last first. */
void ir_clear_region(Region *r);
/* The assert ops of f in program order (the GPU back end numbers them so,
 * from 1); returns their count, storing at most cap. */
int ir_assert_ops(const IrFunc *f, const Op **out, int cap);
/* Numbers values densely again, in program order (after ops were removed). */
void ir_renumber(IrFunc *f);
void ir_print(const IrFunc *f, StrBuf *out);
/* Checks the invariants listed above; reports to diag; returns false on a violation. */
bool ir_verify(const IrFunc *f, Diag *diag, const char *after_pass);


/* ---- IR printer, verifier, passes (print.c, verify.c, pass_manager.c,
 * canonicalize.c, cse.c, dce.c) ----------------------------------------------------------
 *
 * docs/ir.md describes the printed form, every invariant the verifier checks,
 * and each pass with an example. */

typedef struct IrPrintOpts {
	bool show_locations; /* " loc(LINE:COL)" at the end of each op's line */
} IrPrintOpts;

/* ir_print with options; opts NULL means all off (as ir_print). */
void ir_print_opts(const IrFunc *f, StrBuf *out, const IrPrintOpts *opts);
/* One op, its regions included, at the given indentation (2 spaces a level),
 * ending with a newline. For messages and tests. */
void ir_print_op(const Op *op, int indent, StrBuf *out, const IrPrintOpts *opts);

/* Names of enum attributes as the printer writes them ("lt", "exp", "cg",
 * "first", "add", "acq_rel", "gpu", "tf32"); "?" when out of range. */
const char *cmp_pred_name(int64_t p);
const char *math_fn_name(int64_t fn);
const char *cache_mod_name(int64_t c);
const char *eviction_name(int64_t e);
const char *atomic_op_name(int64_t a);
const char *mem_sem_name(int64_t s);
const char *mem_scope_name(int64_t s);
const char *dot_precision_name(int64_t p);

/* The canonical form of an integer constant of kind k: i1 is 0 or 1, other
 * signed kinds are sign-extended from their width, unsigned ones
 * zero-extended (u64 keeps its bits). CONST ops hold ival in this form. */
int64_t ir_int_normalize(ScalarKind k, uint64_t v);

/* A pass edits f in place; it returns false only when it failed (out of
 * memory), after reporting to diag. */
typedef struct IrPass {
	const char *name;
	const char *summary;
	bool (*run)(IrFunc *f, Diag *diag);
} IrPass;

/* The pipeline ir_run_pass_table runs when given NULL. */
#define IR_DEFAULT_PIPELINE "canonicalize,contract,cse,dce"

/* A table of passes, in no particular order (pipeline/passes.c has
 * blk's: the shape-level ones here and the GPU ones of gpu/). */
typedef struct IrPassTable {
	const IrPass *passes;
	int n;
} IrPassTable;

/* Runs `pipeline` (names of t's passes separated by commas; NULL: the
 * default) over f. f is verified first and after every pass; values are
 * renumbered after each pass. With dump_after set to a pass name (or
 * "all"), the IR after each run of that pass (of every pass) is appended
 * to `dump` under a line "// IR after NAME". An unknown pass name, a
 * dump_after naming a pass that the pipeline does not run, or an invalid
 * IR is an error reported to diag; then it returns false. */
bool ir_run_pass_table(const IrPassTable *t, IrFunc *f, const char *pipeline, const char *dump_after, StrBuf *dump,
                       Diag *diag);

/* Editing (edit.c). ir_insert_before builds an op as ir_append does, with
 * the location of `before`, and places it just before `before`. ir_unlink
 * takes an op out of its region keeping its operands' use counts (to move
 * it with ir_link_before); ir_remove is for ops that go away. */
Op *ir_insert_before(IrFunc *f, Op *before, OpCode code, Value **operands, int n_operands,
                     const Type *result_types, int n_results);
void ir_unlink(Op *op);
void ir_link_before(Op *op, Op *before);
/* Whether op (its regions included) stores to memory or does an atomic. */
bool ir_writes_memory(const Op *op);
/* A copy of op (no regions) with other operands, placed before `before`:
 * attributes, constants, string and place copied. NULL when out of memory. */
Op *ir_clone_before(IrFunc *f, const Op *op, Op *before, Value **operands);
/* Specialization: runtime parameter p is known to equal 1; its uses take
 * the constant (the passes then fold x * stride to x). False when out of memory. */
bool ir_param_is_one(IrFunc *f, IrParam *p);

/* Replacing values in one walk (ir_replace_uses walks the whole function
 * each time; a pass that replaces many values would be quadratic). A pass
 * records from -> to, removes the op of `from` at once, and rewrites each
 * later op's operands as the walk reaches it (uses follow definitions in
 * program order); ir_forward_region then catches any use the walk did not
 * visit (ops it moved). Use counts stay exact throughout. */
typedef struct IrForward {
	Value **to; /* by value id: the replacement, or NULL */
	int cap;
	bool oom;   /* a record failed for want of memory */
} IrForward;
void ir_forward_set(IrForward *m, Value *from, Value *to);
Value *ir_forward_get(const IrForward *m, Value *v); /* v itself when not replaced */
void ir_forward_operands(IrForward *m, Op *op);       /* op's own operands, not its regions' */
void ir_forward_region(IrForward *m, Region *r);      /* every op of r, regions included */
void ir_forward_clear(IrForward *m);                  /* forget the records, keep the memory */
void ir_forward_free(IrForward *m);

/* The passes, callable one by one (they do not verify). */
bool ir_canonicalize(IrFunc *f, Diag *diag); /* folds constants, simplifies */
bool ir_cse(IrFunc *f, Diag *diag);          /* merges equal pure ops */
bool ir_dce(IrFunc *f, Diag *diag);          /* removes unused pure ops */
bool ir_contract(IrFunc *f, Diag *diag);     /* a * b + c into fma (fp_fusion) */


/* ---- float formats (fpconv.c) --------------------------------------------
 *
 * Bit-exact conversions between the float types of blk, rounding to nearest
 * with ties to even. f8e4m3 is NVIDIA's e4m3fn (no infinities, largest 448,
 * NaN S.1111.111); f8e5m2 is IEEE-like (largest 57344, infinities). Narrowing
 * to f32, f16 and bf16 overflows to infinity; to the 8-bit formats it
 * saturates as NVIDIA's cvt.rn.satfinite does (a finite overflow and an
 * infinity become the largest finite value of that sign; NaN stays NaN).
 * NaN keeps its sign and the top bits of its payload. */

uint16_t fp_f32_to_f16(uint32_t f32_bits);
uint32_t fp_f16_to_f32(uint16_t f16_bits);  /* exact */
uint16_t fp_f32_to_bf16(uint32_t f32_bits);
uint32_t fp_bf16_to_f32(uint16_t bf16_bits); /* exact */
uint8_t fp_f32_to_e4m3(uint32_t f32_bits);  /* saturating */
uint32_t fp_e4m3_to_f32(uint8_t bits);      /* exact */
uint8_t fp_f32_to_e5m2(uint32_t f32_bits);  /* saturating */
uint32_t fp_e5m2_to_f32(uint8_t bits);      /* exact */
/* Any float kind k (f8e4m3 ... f64) from and to a double, which holds every
 * value of every kind exactly: fp_encode gives the bits of x rounded to k,
 * fp_decode the value of bits of kind k, fp_round(k, x) the value of kind k
 * nearest to x (fp_decode(k, fp_encode(k, x))). */
uint64_t fp_encode(ScalarKind k, double x);
double fp_decode(ScalarKind k, uint64_t bits);
double fp_round(ScalarKind k, double x);
/* x to f8e4m3 or f8e5m2, saturating or not (then e5m2 overflows to infinity
 * and e4m3 to NaN, as the OCP FP8 specification's non-saturating mode). */
uint8_t fp_encode_fp8(ScalarKind k, double x, bool satfinite);
/* f32 bits to and from a double, keeping NaN payloads (signaling ones too). */
double fp_from_f32_bits(uint32_t bits);
uint32_t fp_to_f32_bits(double x);
/* The integer v (its 64 bits read as unsigned when is_unsigned) rounded once
 * to float kind k. */
double fp_from_int(ScalarKind k, int64_t v, bool is_unsigned);
/* x * y + z of values of float kind k, rounded once to k (as fmaf for f32). */
double fp_fma(ScalarKind k, double x, double y, double z);

#endif
