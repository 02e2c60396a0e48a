/* irgen/irgen.h: the syntax tree of one kernel to tile IR (semantic analysis
 * and IR construction in one walk), its grid clause and its @autotune. */
#ifndef BLK_IRGEN_H
#define BLK_IRGEN_H

#include "ir/ir.h"

/* ---- IR generation (irgen.c and the files beside it) -----------------
 *
 * Semantic analysis and IR construction in one walk over the tree of one
 * kernel, for one set of const values: names are resolved, types and shapes
 * inferred, Triton's promotion applied, constant expressions folded,
 * `static_range` unrolled, `if` on constants decided, and `fn` helpers
 * inlined at each call. Every semantic error is reported with its place. */

typedef struct ConstBinding {
	const char *name;
	bool is_float;
	int64_t i;
	double f;
	const char *type; /* a type for a `const type` parameter ("f16", "*bf16"); NULL for a number */
} ConstBinding;

/* A type written as a const type's value ("f16", "*f32"): false when s
 * names none. */
bool irgen_type_from_name(const char *s, Type *out);
/* Whether a parameter's type is the kind `const type` (T: const type). */
bool irgen_is_type_param(const Node *param);

typedef struct IrgenOptions {
	const ConstBinding *consts; /* values of const parameters (-D, autotune configs) */
	int n_consts;
	int n_checked;              /* the first n_checked consts must name const parameters of the
	                               kernel (a launch's own); the others apply where they fit */
	int num_warps;              /* 0: a const num_warps, else the default */
	int num_stages;             /* 0: a const num_stages, else the default */
	const int *defaults;        /* OPTION_COUNT values replacing the table's defaults (the runtime's
	                               environment, blkc's --tma), or NULL */
	int num_sms;                /* grid clauses: what num_sms() gives, the launch's device's multiprocessors
	                               (0: unknown here, num_sms() is an error) */
} IrgenOptions;

/* Whether `name` is an option (ir/options.h: num_warps, num_stages, tma,
 * fp_fusion, warp_specialize, ...) rather than a const parameter. Each
 * may be given where consts are: -D, @autotune configs, a launch's consts. */
bool irgen_is_option(const char *name);
/* NULL when b, binding an option, holds a value it takes (or b binds no
 * option); else what is wrong (the option, the value, the range), written
 * into buf. */
const char *irgen_option_error(const ConstBinding *b, char *buf, size_t size);
/* The value option `id` takes for these options as irgen settles it: the
 * launch's num_warps or num_stages (when not 0), else a const of its name,
 * else opt->defaults[id], else the table's default. irgen_kernel reports
 * a value out of the option's range. */
int irgen_option_value(const IrgenOptions *opt, int id);
/* The const parameter (of `kernel`, or of any kernel of m when NULL) or
 * option nearest in spelling to `name`, for a "did you mean"; NULL if none. */
const char *irgen_near_const(Module *m, const Node *kernel, const char *name);

/* The kernel named `name` in m (NULL: m's only kernel); reports if absent. */
Node *irgen_find_kernel(Module *m, const char *name, Diag *diag);
/* Builds the IR of `kernel` (declared in m). NULL on error. */
IrFunc *irgen_kernel(Module *m, Node *kernel, const IrgenOptions *opt, Diag *diag, Arena *arena);
/* Evaluates the kernel's grid(...) clause with the given values of its
 * scalar arguments (by name) and const parameters; missing axes are 1. */
bool irgen_grid(Module *m, Node *kernel, const IrgenOptions *opt, const ConstBinding *args, int n_args,
                int64_t grid[3], Diag *diag, Arena *arena);

/* A kernel's @autotune: the key (parameter names) and the configs, each a
 * list of const values (num_warps and num_stages among them). */
typedef struct AutotuneSpec {
	const char **key;
	int n_key;
	ConstBinding **configs;
	int *config_len;
	int n_configs; /* 0: no @autotune */
	/* @heuristics(NAME = expr, ...): const parameters computed at each
	 * launch from the scalar arguments and the consts bound before them */
	const char **heur_name;
	Node **heur_expr;
	int n_heur;
} AutotuneSpec;

/* Reads the kernel's attributes, @autotune and @heuristics (an unknown one is an error). */
bool irgen_autotune(Module *m, Node *kernel, AutotuneSpec *out, Diag *diag, Arena *arena);
/* Heuristic `i` of `at` for a launch: its value from the scalar arguments
 * (by name) and the consts of opt, as a grid clause is computed. */
bool irgen_heuristic(Module *m, Node *kernel, const AutotuneSpec *at, int i, const IrgenOptions *opt,
                     const ConstBinding *args, int n_args, ConstBinding *out, Diag *diag, Arena *arena);

#endif
