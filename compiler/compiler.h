/* compiler.h: the middle and back end of blk (tile IR, passes, lowering to
 * LLVM IR, PTX emission) and the few entry points libblk exports from it.
 *
 * Functions here are internal to libblk unless marked BLK_API: libblk.so is
 * built with -fvisibility=hidden and a version script that exports only
 * blk_* symbols. Nothing here prints or exits; errors come back as strings. */
#ifndef BLK_COMPILER_H
#define BLK_COMPILER_H

#include <stdbool.h>
#include <stddef.h>

#include <llvm-c/Types.h>

#include "lang.h"

/* Marks a function that libblk.so exports (its name must start with blk_). */
#ifndef BLK_API
#define BLK_API __attribute__((visibility("default")))
#endif

/* ---- versions (llvm_ptx.c) --------------------------------------------- */

/* "blk 0.1.0 (LLVM 19.1.7, NVPTX)". A static string; never NULL. */
BLK_API const char *blk_compiler_version(void);

/* The version of the LLVM linked into libblk, "19.1.7". A static string. */
const char *llvm_version_string(void);

/* ---- PTX emission (llvm_ptx.c) ----------------------------------------- */

/* The PTX ISA version llvm_emit_ptx uses for `arch` (e.g. 80 for "sm_90",
 * meaning .version 8.0), or 0 when `arch` is not a target it supports.
 * Supported: sm_70 sm_72 sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a. */
int llvm_ptx_isa_version(const char *arch);

/* Compiles module `m` to PTX assembly for `arch` ("sm_80", "sm_90a", ...).
 *
 * Sets the module's target triple (nvptx64-nvidia-cuda) and data layout,
 * verifies it, runs LLVM's default<On> pipeline when opt_level is 1..3
 * (none at 0), and emits PTX. Kernels are marked as usual for NVPTX (the
 * nvvm.annotations "kernel" metadata or the ptx_kernel calling convention).
 * Safe to call from several threads at once on different modules.
 *
 * On success returns true and sets *ptx_out to a NUL-terminated string of
 * *ptx_len bytes (ptx_len may be NULL); free it with free().
 * On failure returns false and sets *err_msg (if err_msg is not NULL) to a
 * message to free with free(); *ptx_out is then NULL. */
bool llvm_emit_ptx(LLVMModuleRef m, const char *arch, int opt_level,
                   char **ptx_out, size_t *ptx_len, char **err_msg);


/* ---- tile IR (ir.c) ------------------------------------------------------
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
	/* arithmetic: ints wrap; / and % of ints truncate toward zero (C) */ \
	OP(ADD, "add", 0, OPF_PE) \
	OP(SUB, "sub", 0, OPF_PE) \
	OP(MUL, "mul", 0, OPF_PE) \
	OP(DIV, "div", 0, OPF_PE) \
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
	/* memory */ \
	OP(LOAD, "load", 0, 0)                     /* ptr [, mask [, other]]; attr[0] operand flags (MEMF_*), \
	                                              attr[1] CacheMod, attr[2] Eviction, attr[3] volatile */ \
	OP(STORE, "store", 0, 0)                   /* ptr, value [, mask]; attr[0] MEMF_MASK, attr[1] CacheMod, attr[2] Eviction */ \
	OP(ATOMIC_RMW, "atomic_rmw", 0, 0)         /* ptr, value [, mask] -> old; attr[0] AtomicOp, attr[1] MemSem, \
	                                              attr[2] MemScope, attr[3] MEMF_MASK */ \
	OP(ATOMIC_CAS, "atomic_cas", 0, 0)         /* ptr, expected, desired -> old; attr[1] MemSem, attr[2] MemScope */ \
	/* block computations */ \
	OP(REDUCE, "reduce", 1, OPF_PURE)          /* n blocks -> n results without dim attr[0]; region: \
	                                              (a_1..a_n, b_1..b_n) -> yield n combined values */ \
	OP(SCAN, "scan", 1, OPF_PURE)              /* n blocks -> n blocks of the same shape; attr[0] axis, \
	                                              attr[1] reverse; region as reduce; inclusive */ \
	OP(DOT, "dot", 0, OPF_PURE)                /* a[M, K], b[K, N], acc[M, N] -> [M, N]; attr[0] DotPrecision */ \
	OP(PHILOX, "philox", 0, OPF_PURE)          /* seed (u64), counter (u32 block) -> four u32 blocks; attr[0] rounds */ \
	/* debugging */ \
	OP(PRINT, "print", 0, 0)                   /* values...; str prefix; attr[0] 1 for hex */ \
	OP(ASSERT, "assert", 0, 0)                 /* i1 cond (scalar or block); str message; loc the source */ \
	/* structured control flow */ \
	OP(FOR, "for", 1, 0)                       /* lb, ub, step, init... -> results; region (iv, iters...) */ \
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
	M(SIN, "sin") M(COS, "cos") M(TANH, "tanh") M(ERF, "erf") M(FLOOR, "floor") M(CEIL, "ceil")
typedef enum MathFn {
#define MATH_ENUM(name, spelling) MATH_##name,
	BLK_MATH_FNS(MATH_ENUM)
#undef MATH_ENUM
	MATH_COUNT
} MathFn;

enum { MEMF_MASK = 1, MEMF_OTHER = 2 };
typedef enum CacheMod { CACHE_DEFAULT, CACHE_CA, CACHE_CG, CACHE_CS, CACHE_CV, CACHE_WB, CACHE_WT } CacheMod;
typedef enum Eviction { EVICT_NORMAL, EVICT_FIRST, EVICT_LAST } Eviction;
typedef enum AtomicOp { ATOM_ADD, ATOM_MAX, ATOM_MIN, ATOM_AND, ATOM_OR, ATOM_XOR, ATOM_XCHG } AtomicOp;
typedef enum MemSem { SEM_ACQ_REL, SEM_ACQUIRE, SEM_RELEASE, SEM_RELAXED } MemSem;
typedef enum MemScope { SCOPE_GPU, SCOPE_CTA, SCOPE_SYS } MemScope;
typedef enum DotPrecision { DOT_TF32, DOT_TF32X3, DOT_IEEE } DotPrecision;

typedef struct Op Op;
typedef struct Region Region;

typedef struct Value {
	Type type;
	int id;        /* unique in its function; dense from 0 */
	Op *def;       /* defining op; NULL for a region argument */
	Region *owner; /* for a region argument */
	int index;     /* result or argument position */
	int uses;      /* operand slots that refer to it */
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
	Op *prev, *next;
	Region *parent;
};

typedef struct IrParam {
	const char *name;
	Value *value;  /* NULL for a const parameter (folded away) */
	bool is_const;
	int64_t const_ival;
	double const_fval;
	Type type;
} IrParam;

typedef struct IrFunc {
	const char *name;
	Arena *arena;
	IrParam *params;
	int n_params;
	Region body;   /* ends with RETURN */
	int n_values;
	int num_warps;
	int num_stages;
	Span loc;
} IrFunc;

const char *op_name(OpCode code);
int op_flags(OpCode code);
int op_regions(OpCode code);

IrFunc *ir_func_new(Arena *a, const char *name, Span loc);
Value *ir_region_arg(IrFunc *f, Region *r, Type t);
/* Appends an op at the end of `r` with the given operands and result
 * types. Regions (op_regions(code) of them) start empty. */
Op *ir_append(IrFunc *f, Region *r, OpCode code, Span loc, Value **operands, int n_operands,
              const Type *result_types, int n_results);
void ir_remove(Op *op);           /* unlinks an op without uses of its results */
void ir_replace_uses(IrFunc *f, Value *from, Value *to);
/* Numbers values densely again, in program order (after ops were removed). */
void ir_renumber(IrFunc *f);
void ir_print(const IrFunc *f, StrBuf *out);
/* Checks the invariants listed above; reports to diag; returns false on a violation. */
bool ir_verify(const IrFunc *f, Diag *diag, const char *after_pass);

#endif
