/* irgen/irgen_int.h: what the files of irgen share: the Sym an expression
 * evaluates to, scopes, the generator's state, call arguments, and the
 * functions the files call across each other. Internal to irgen. */
#ifndef BLK_IRGEN_INT_H
#define BLK_IRGEN_INT_H

#include "irgen/irgen.h"

enum {
	MAX_INLINE_DEPTH = 64,
	MAX_INLINED_CALLS = 16384, /* fn calls inlined into one kernel */
	/* What generating one kernel may cost (issue 27): source nodes
	 * generated, inlined fn bodies and unrolled static_range bodies counted
	 * at each copy; IR ops made; bytes of the compilation's arena used. */
	MAX_KERNEL_NODES = 2000000,
	MAX_KERNEL_OPS = 500000,
	MAX_KERNEL_BYTES = 512 << 20,
	MAX_UNROLL = 4096,     /* static_range iterations */
};

typedef enum SymKind {
	S_VOID,   /* the result of an error, or of a call that returns nothing */
	S_VALUE,  /* an IR value */
	S_CONST,  /* a compile-time scalar */
	S_TUPLE,
	S_TYPE,   /* f16, *f32 ... used as a value */
	S_FN,
	S_MODULE,
	S_STRING,
	S_NONE,
	S_DESC,   /* a tensor descriptor: v its base, items its shape then strides (n each), type its block */
} SymKind;

typedef struct Sym Sym;
struct Sym {
	SymKind kind;
	bool weak;   /* S_CONST written without a type (a literal, or folded from literals) */
	Type type;   /* S_VALUE: v->type; S_CONST: its scalar type; S_TYPE: the type */
	int64_t i;   /* S_CONST integer, canonical for its type (unsigned zero-extended) */
	double f;    /* S_CONST float */
	Value *v;
	Sym *items;  /* S_TUPLE */
	int n;
	Node *fn;    /* S_FN */
	Module *mod; /* S_FN: the defining module; S_MODULE */
	const char *str;
	size_t len;
};

typedef struct Binding {
	const char *name;
	Sym sym;
	bool is_var;
	Span span;
} Binding;

typedef struct Scope Scope;
struct Scope {
	Binding *items;
	int len, cap;
	Scope *parent;
	bool fn_boundary; /* the outermost scope of an inlined fn or the kernel */
	int depth;        /* g->scope_depth just after this scope's push */
};

/* A global const being evaluated or evaluated, by declaration. */
typedef struct GlobalConst {
	Node *decl;
	Sym value;
	bool busy, done;
} GlobalConst;

/* The result of the fn being inlined, as returns inside a runtime if or
 * loop set it (result.c): a hidden var a value (slots: "#value", "#value1",
 * ...), VOID until set; n, their number, is 0 until the first such return
 * fixes it. ref[k]: the most specific value k given so far (a runtime value
 * over a constant, a block over a scalar), which later returns must match,
 * given by the return at ref_at[k]. */
typedef struct FnResult {
	Binding *slots;
	Sym *ref;
	Span *ref_at;
	int n;
	Span first_at; /* the return that fixed n */
	bool failed;   /* a return was refused (reported): the result is VOID */
} FnResult;

typedef struct Gen {
	Diag *diag;
	Arena *arena;
	IrFunc *f;
	Region *region; /* where new ops go */
	Scope *scope;
	Module *mod;    /* the module whose code is being generated */
	int inline_depth;
	int inlined_calls;  /* fn calls inlined so far, against MAX_INLINED_CALLS */
	bool inline_limit;  /* an inlining limit was reported: notes only at the outermost call */
	int scope_depth;    /* pushes minus pops, failed pushes included */
	bool oom;           /* out of memory was reported */
	long long nodes;    /* source nodes generated, against MAX_KERNEL_NODES */
	long long n_ops;    /* IR ops made, against MAX_KERNEL_OPS */
	size_t arena_base;  /* arena->used_total when the kernel's generation began */
	bool too_big;       /* a size limit was reported: generate nothing more */
	Node *outer_fn;     /* the fn inlined by the kernel's own body that is being generated */
	Node *cur_fn;      /* the fn being inlined now, NULL in the kernel's own body */
	int runtime_depth; /* runtime if/for/while around this point, within the current fn */
	bool in_fn;
	bool returned;
	Sym ret;
	FnResult res;      /* the current fn's result from nested returns */
	GlobalConst *globals;
	int n_globals, cap_globals;
	const char *no_ir; /* set while evaluating what must be constant: why no IR may be made */
	int num_sms;       /* in a grid clause: the value of num_sms() (0: not a grid clause, or unknown) */
	bool in_grid;      /* evaluating a grid clause */
	bool consts_may_lack; /* @heuristics: a const without a value binds to nothing, silently */
} Gen;

static const Sym VOID = {.kind = S_VOID};

#define error(g, sp, ...) diag_error((g)->diag, (sp), __VA_ARGS__)

enum { MAX_ARGS = 16 };

/* Hidden i1 vars of the control flow (names no identifier can have): set
 * by break, continue and a return inside a runtime if or loop; the
 * statements after one that may set them run under an 'if' of their
 * negation, and loops stop on them. */
#define FLAG_BREAK "#break"
#define FLAG_CONTINUE "#continue"
#define FLAG_RETURN "#return"
#define FLAG_VALUE "#value" /* a fn's result set by such a return: its slots (result.c) */

typedef struct Args {
	Span call;          /* the whole call */
	const char *fname;  /* for messages */
	int n;              /* parameters bound */
	Sym v[MAX_ARGS];    /* by parameter position; S_VOID where not given */
	bool given[MAX_ARGS];
	Span at[MAX_ARGS];  /* where each argument was written (the call when absent) */
} Args;

typedef struct RawArgs {
	Sym pos[MAX_ARGS];
	Span pos_at[MAX_ARGS];
	int n_pos;
	const char *names[MAX_ARGS];
	Sym named[MAX_ARGS];
	Span named_at[MAX_ARGS];
	int n_named;
	Span call;
} RawArgs;

typedef Sym (*BuiltinFn)(Gen *g, Args *a, int which);

typedef struct Builtin {
	const char *name;
	const char *params;
	BuiltinFn fn;
	int which; /* a MathFn, AtomicOp ... for handlers shared by several names */
} Builtin;

/* Combine kinds of built-in reductions and scans. */
enum { COMBINE_ADD, COMBINE_MUL, COMBINE_MAX, COMBINE_MIN, COMBINE_ARGMAX, COMBINE_ARGMIN, COMBINE_FN };

/* rand, randn, randint, randint4x: (seed, offsets, n_rounds = 10) over Philox 4x32. */
enum { RAND_UNIFORM, RAND_NORMAL, RAND_INT, RAND_INT4X };

/* ---- irgen.c ----------------------------------------------------------------- */

/* Scopes: a fn_boundary scope ends the names an inlined fn sees. Names:
 * types, global consts (evaluated once), what a module declares. */
Scope *ig_scope_push(Gen *g, bool fn_boundary);
Binding *ig_scope_bind(Gen *g, const char *name, Sym sym, bool is_var, Span sp);
Binding *ig_lookup_local(Gen *g, const char *name);
/* Generates the body of a kernel or fn: binds the return flag first. */
void ig_gen_body(Gen *g, Node *block);
bool ig_resolve_type(Gen *g, Node *n, Type *out, bool *is_const);
Sym ig_const_to_type(Gen *g, Sym v, Type t, Span at);
Sym ig_decl_sym(Gen *g, Node *decl, Module *owner, Span at);
Sym ig_gen_ident(Gen *g, Node *n);
bool ig_bind_params_of_kernel(Gen *g, Node *k, const IrgenOptions *opt, const ConstBinding *args, int n_args);

/* Undoes the matching ig_scope_push, also when that push failed (out of
 * memory: then no scope was added, and none is removed). */
static inline void scope_pop(Gen *g)
{
	g->scope_depth--;
	if (g->scope && g->scope->depth > g->scope_depth)
		g->scope = g->scope->parent;
}

/* ---- suggest.c ----------------------------------------------------------------- */

enum { NEAR_FNS = 1, NEAR_VALUES = 2, NEAR_TYPES = 4 };
/* The name in scope nearest to `name` among the kinds `what` (NEAR_*), or NULL. */
const char *ig_near_name(Gen *g, const char *name, int what);
/* "std/FILE.tile" when a standard library file declares fn `name`, else NULL. */
const char *ig_stdlib_home(Gen *g, const char *name);
/* Reports "WHAT 'NAME'" with where a fn of that name lives or a near spelling. */
void ig_unknown_name(Gen *g, Span at, const char *what, const char *name, int near);
/* Reports Triton's tl.NAME (a call when `call`) where tl is not a name in
 * scope: blk has no such namespace. False when `field` is not that. */
bool ig_triton_namespace(Gen *g, Node *field, bool call);
/* False, reported with where each shape comes from, when the operands of the
 * binary node n do not broadcast to one shape. */
bool ig_operand_shapes(Gen *g, Node *n, Sym a, Sym b);

/* ---- sym.c ------------------------------------------------------------------- */

/* Constants: an integer is canonical for its type (wrap); a weak constant
 * (a literal) takes the type of what it meets. */
const char *ig_sym_desc(Gen *g, Sym s);
bool ig_fits(ScalarKind k, __int128 v);
int64_t ig_wrap(ScalarKind k, __int128 v);
__int128 ig_int_value(Sym s);
Sym ig_const_int(ScalarKind k, __int128 v, bool weak);
ScalarKind ig_literal_int_kind(__int128 v);
Sym ig_const_float(ScalarKind k, double x, bool weak);
Sym ig_weak_float(double x);
double ig_const_as_double(Sym s);
double ig_const_in_kind(Sym s, ScalarKind k);

static inline const char *tstr(Gen *g, Type t) { return type_str(t, g->arena); }

static inline Sym weak_int(__int128 v) { return ig_const_int(ig_literal_int_kind(v), v, true); }

static inline bool is_const_true(Sym s)
{
	return s.kind == S_CONST && (scalar_is_float(s.type.scalar) ? s.f != 0 : s.i != 0);
}

/* ---- emit.c ------------------------------------------------------------------ */

/* Counts one source node generated at `at`: false (reported once) when the
 * kernel has gone over MAX_KERNEL_NODES or MAX_KERNEL_BYTES of memory;
 * nothing more is generated then. */
bool ig_count_node(Gen *g, Span at);
/* True when a block of this shape has at most BLK_MAX_NUMEL elements;
 * otherwise reports "block of shape (...) has N elements; the limit is M"
 * at `at` (the count checked for overflow, exact in the message). */
bool ig_shape_fits(Gen *g, int rank, const int32_t *shape, Span at);
/* IR construction in g->region; NULL after an error (reported). */
Value *ig_emit(Gen *g, OpCode code, Span at, Type rt, Value *a, Value *b, Value *c);
Op *ig_emit_op(Gen *g, OpCode code, Span at, Value **operands, int n, const Type *rt, int n_results);
Sym ig_value_sym(Value *v);
Value *ig_emit_const(Gen *g, Sym s, Type t, Span at);
bool ig_const_fits(Gen *g, Sym s, ScalarKind k, Span at);
Value *ig_cast_value(Gen *g, Value *v, ScalarKind k, Span at);
Value *ig_to_elem(Gen *g, Sym s, ScalarKind k, Span at);
Value *ig_materialize(Gen *g, Sym s, Span at);
Value *ig_broadcast_to(Gen *g, Value *v, int rank, const int32_t *shape, Span at);
bool ig_common_shape(Gen *g, Type a, Type b, int *rank, int32_t *shape, Span at, const char *what);

static inline bool is_valueish(Sym s) { return s.kind == S_VALUE || s.kind == S_CONST; }

/* The type of a value-like Sym (a constant is a scalar). */
static inline Type sym_type(Sym s) { return s.type; }

/* ---- expr.c ------------------------------------------------------------------ */

/* Operators with Triton's promotion; ig_truth() makes a scalar condition. */
Sym ig_gen_binary(Gen *g, int tok, Sym a, Sym b, Span at);
Sym ig_truth(Gen *g, Sym s, Span at);
Sym ig_gen_unary(Gen *g, int tok, Sym a, Span at);
Sym ig_gen_expr(Gen *g, Node *n);

/* ---- call.c ------------------------------------------------------------------ */

Sym ig_gen_call(Gen *g, Node *call);
Sym ig_call_fn(Gen *g, Node *fn, Module *mod, RawArgs *raw);

/* ---- stmt.c ------------------------------------------------------------------ */

void ig_gen_block(Gen *g, Node *block);

/* ---- result.c ---------------------------------------------------------------- */

/* A fn's result set by a return inside a runtime if or loop: the slots
 * (FnResult), carried by the ifs and loops as vars; a placeholder where
 * a slot is unset (0, or a null pointer: never read). */
bool ig_is_slot(const Binding *b);
const char *ig_slot_desc(Gen *g, const Binding *b);
Value *ig_result_placeholder(Gen *g, Type t, Span at);
void ig_gen_nested_return(Gen *g, Node *n);
Sym ig_result_value(Gen *g);

/* ---- builtins.c -------------------------------------------------------------- */

/* Arguments of builtins, reported by position when they are not what is
 * needed; the builtin of a name (NULL: none). */
bool ig_arg_int(Gen *g, const Args *a, int i, int64_t *out);
bool ig_arg_bool(Gen *g, const Args *a, int i, bool dflt, bool *out);
bool ig_arg_type(Gen *g, const Args *a, int i, Type *out);
int ig_arg_choice(Gen *g, const Args *a, int i, const char *choices, int dflt);
Value *ig_value_arg(Gen *g, Args *a, int i);
Value *ig_block_arg(Gen *g, Args *a, int i);
bool ig_axis_arg(Gen *g, Args *a, int i, int rank, int *axis);
const Builtin *ig_find_builtin(const char *name);
/* The name of the i-th builtin, NULL past the last. */
const char *ig_builtin_name(int i);

/* ---- builtins_memory.c ------------------------------------------------------- */

/* The handlers of the builtin table (builtins.c), by family; expr.c calls
 * ig_bi_where (for ?:) and ig_bi_trans (for .T) too. */
Sym ig_bi_load(Gen *g, Args *a, int which);
Sym ig_bi_store(Gen *g, Args *a, int which);
Sym ig_bi_atomic(Gen *g, Args *a, int which);
Sym ig_bi_atomic_cas(Gen *g, Args *a, int which);

/* ---- builtins_desc.c --------------------------------------------------------- */

Sym ig_bi_tensor_desc(Gen *g, Args *a, int which);
Sym ig_bi_desc_load(Gen *g, Args *a, int which);
Sym ig_bi_desc_store(Gen *g, Args *a, int which);
Sym ig_bi_desc_atomic(Gen *g, Args *a, int which);
Sym ig_bi_desc_gather(Gen *g, Args *a, int which);
Sym ig_bi_desc_scatter(Gen *g, Args *a, int which);

/* ---- builtins_shape.c -------------------------------------------------------- */

Sym ig_shape_sym(Gen *g, Type t);
Sym ig_bi_arange(Gen *g, Args *a, int which);
Sym ig_bi_full(Gen *g, Args *a, int zeros);
Sym ig_bi_zeros_like(Gen *g, Args *a, int which);
Sym ig_bi_reshape(Gen *g, Args *a, int which);
Sym ig_bi_flatten(Gen *g, Args *a, int which);
Sym ig_bi_trans(Gen *g, Args *a, int which);
Sym ig_bi_expand_dims(Gen *g, Args *a, int which);
Sym ig_bi_broadcast_to(Gen *g, Args *a, int which);
Sym ig_bi_join_cat(Gen *g, Args *a, int join);
Sym ig_bi_split(Gen *g, Args *a, int which);

/* ---- builtins_index.c -------------------------------------------------------- */

/* base[...] with an integer index or a bounded slice among its items. */
Sym ig_index_block(Gen *g, Node *n, Sym base);
/* x[k] along axis (a constant k in range), the axis removed; x of rank 2 or more. */
Value *ig_take(Gen *g, Value *x, int axis, int64_t k, Span at);
Sym ig_bi_gather(Gen *g, Args *a, int which);
Sym ig_bi_flip(Gen *g, Args *a, int which);
Sym ig_bi_interleave(Gen *g, Args *a, int which);
Sym ig_bi_sreg(Gen *g, Args *a, int which);
Sym ig_bi_num_warps(Gen *g, Args *a, int which);
Sym ig_bi_inline_asm(Gen *g, Args *a, int which);

/* ---- builtins_math.c --------------------------------------------------------- */

Sym ig_bi_inf(Gen *g, Args *a, int which);
Sym ig_bi_where(Gen *g, Args *a, int which);
/* Operand i as a float for math: a weak int constant becomes a float; other integers are an error. */
bool ig_float_operand(Gen *g, Args *a, int i, Sym *out);
Sym ig_bi_math(Gen *g, Args *a, int fn);
Sym ig_bi_sigmoid(Gen *g, Args *a, int which);
/* libm.c: the functions expanded into IR ops (which: a LIBM_ or FPC_ value) */
enum {
	LIBM_TANH, LIBM_SINH, LIBM_COSH, LIBM_TAN, LIBM_ATAN, LIBM_ASIN, LIBM_ACOS, LIBM_ASINH, LIBM_ACOSH,
	LIBM_ATANH, LIBM_LOG1P, LIBM_EXPM1, LIBM_LOG10, LIBM_EXP10, LIBM_CBRT, LIBM_ERFC, LIBM_ERFINV, LIBM_LGAMMA,
	LIBM_TGAMMA, LIBM_I0, LIBM_I1, LIBM_J0, LIBM_J1, LIBM_Y0, LIBM_Y1
};
enum { LIBM_POW, LIBM_POW_PRECISE, LIBM_ATAN2, LIBM_HYPOT, LIBM_REMAINDER, LIBM_COPYSIGN, LIBM_NEXTAFTER };
enum { FPC_NAN, FPC_INF, FPC_FINITE, FPC_SIGNBIT };
Sym ig_bi_libm1(Gen *g, Args *a, int which);
Sym ig_bi_libm2(Gen *g, Args *a, int which);
Sym ig_bi_fpclass(Gen *g, Args *a, int which);
Sym ig_bi_ldexp(Gen *g, Args *a, int which);
Sym ig_bi_frexp(Gen *g, Args *a, int which);
Sym ig_bi_fmod(Gen *g, Args *a, int which);
/* a ** b: pow, or an exact integer power of two integer literals */
Sym ig_gen_pow(Gen *g, Node *n);
Sym ig_bi_abs(Gen *g, Args *a, int which);
Sym ig_bi_minmax(Gen *g, Args *a, int code);
Sym ig_bi_clamp(Gen *g, Args *a, int which);
Sym ig_bi_fma(Gen *g, Args *a, int which);
Sym ig_bi_div_rn(Gen *g, Args *a, int which);
Sym ig_bi_umulhi(Gen *g, Args *a, int which);
Sym ig_bi_to(Gen *g, Args *a, int which);
Sym ig_bi_rand(Gen *g, Args *a, int kind);

/* ---- builtins_reduce.c ------------------------------------------------------- */

Sym ig_bi_reduction(Gen *g, Args *a, int kind);
Sym ig_bi_reduce(Gen *g, Args *a, int which);
Sym ig_bi_scan(Gen *g, Args *a, int kind);
Sym ig_bi_dot(Gen *g, Args *a, int which);
/* ---- builtins_scaled.c -------------------------------------------------------- */
Sym ig_bi_dot_scaled(Gen *g, Args *a, int which);

/* ---- builtins_sort.c --------------------------------------------------------- */

Sym ig_bi_sort(Gen *g, Args *a, int which); /* sort; argsort (which = 1) */
Sym ig_bi_topk(Gen *g, Args *a, int which);
Sym ig_bi_histogram(Gen *g, Args *a, int which);

#endif
