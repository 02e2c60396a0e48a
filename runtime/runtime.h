/* runtime.h: internal to runtime/ (blk.h is the public header): the
 * handles' structs and what the runtime's files share. The runtime is the
 * public API of libblk: errors, contexts, memory, modules, kernels,
 * variants and launches, on two backends.
 *
 * The interpreter runs kernels on the CPU with every access checked. The
 * GPU backend (driver.c loads the CUDA driver) compiles each variant to PTX
 * at its first launch (blk_pipeline_run) or takes the PTX from the disk
 * cache (cache.c), loads it with the driver's JIT (cuModuleLoadDataEx: a
 * whole program, jit.c), keeps the CUfunction with the variant, and launches with cuLaunchKernel,
 * asynchronously (BLK_DEBUG=1: synchronizing after each launch, to name
 * the kernel that faulted). Device printf goes to the process's stdout;
 * blk_context_printed gives "" there. Copies are synchronous and ordered
 * after earlier work on the default stream.
 *
 * Timing (blk_time_launch, autotuning) uses CUDA events on the launch's
 * stream with the L2 cache flushed between runs, or the wall clock on the
 * interpreter. An @autotune kernel whose launch leaves a config's const
 * open is tuned at the first launch for each value of its key (see
 * autotune.c).
 *
 * One job a file: error.c, context.c, buffers.c, modules.c (modules and
 * their kernels), variant.c (a kernel's compiled variants), jit.c (a
 * variant compiled for the GPU and loaded), launch.c, timing.c,
 * autotune.c, prune.c (the configs autotuning does not time), handles.c (BLK_DEBUG=1's record of live handles). driver.c
 * (driver.h) and cache.c (cache.h) know nothing of
 * the rest. Nothing here prints or exits. */
#ifndef BLK_RUNTIME_H
#define BLK_RUNTIME_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk.h"
#include "cache.h"
#include "driver.h"
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "pipeline/pipeline.h"

/* ---- the handles ------------------------------------------------------------------ */

struct blk_context {
	blk_backend backend;
	int device;
	pthread_mutex_t lock;
	InterpBuffer *bufs; /* memory from blk_malloc (device addresses on a GPU); few */
	int n_bufs, cap_bufs;
	StrBuf printed;      /* print output collected by launches */
	StrBuf printed_out;  /* what blk_context_printed returned last */
	StrBuf warnings;     /* compilations' warnings (register spills), a line each */
	StrBuf warnings_out; /* what blk_context_warnings returned last */
	uint64_t cache_warned; /* a hash of the disk cache's refusal reported last (rt_cache_warning) */
	blk_module *modules; /* loaded on this context, linked through next_module */
	/* the GPU backend */
	const CudaDriver *cu;
	CUdevice dev;
	CUcontext cuctx;
	bool retained_primary; /* cuctx is the device's primary context, retained by us (released
	                          on destroy); false for a context borrowed from the caller */
	bool debug;            /* BLK_DEBUG=1: synchronize after each launch, name the kernel that failed */
	bool tma_ok;           /* sm_90a with cuTensorMapEncodeTiled: descriptor tiles can come by TMA */
	int option_defaults[OPTION_COUNT]; /* the options' defaults, from the environment (BLK_TMA, ...) */
	char arch[16];         /* "sm_90" */
	char device_name[128];
	int cc_major, cc_minor;
	int sm_count;
	int smem_optin;        /* shared memory a block may opt in to, bytes */
	int max_threads;
	unsigned max_grid[3];
	int l2_bytes;          /* the L2 cache's size (0: unknown) */
	int driver_version;    /* cuDriverGetVersion: 13000 for CUDA 13.0 */
	/* timing: a buffer of twice the L2 cache's size, written between timed
	 * runs to flush it; made at the first timing */
	pthread_mutex_t flush_lock;
	CUdeviceptr flush_buf;
	size_t flush_bytes;
};

/* How a runtime argument goes into a GPU launch. */
enum { PK_PTR, PK_INT, PK_FLOAT };

/* One compiled specialization of a kernel. Never moves once made. */
typedef struct Variant {
	ConstBinding *consts; /* what it was compiled with (launch consts, defines, config) */
	int n_consts;
	uint64_t spec;        /* GPU: runtime arguments known to be multiples of 16 (bit i: argument i) */
	IrFunc *f;
	/* the grid its clause gave for the scalar arguments of grid_args */
	blk_arg *grid_args;   /* NULL until the clause was evaluated */
	unsigned grid[3];
	/* GPU: loaded at its first launch */
	CUmodule cumod;
	CUfunction fn;
	int shared_bytes;     /* dynamic shared memory a program needs */
	unsigned block;       /* threads a program: 32 * num_warps, or the compiled .maxntid (a producer warpgroup more) */
	uint8_t *pkind;       /* per runtime argument: PK_* */
	uint8_t *pscalar;     /* per runtime argument: its ScalarKind */
	CUdeviceptr assert_state; /* GPU: the kernel's record of a failed assert, or 0 without asserts */
	const char *ptx;      /* GPU: its PTX (in the module's arena), for blk_kernel_compile */
	size_t ptx_len;
	/* how it was made: milliseconds of each phase (blk_compile_info) */
	double ms_irgen, ms_passes, ms_llvm, ms_ptx, ms_cubin;
	bool from_disk;       /* GPU: the PTX came from the disk cache */
	int spill_bytes;      /* GPU: bytes of spill stores a thread (the JIT's log, or local memory) */
	int registers;        /* GPU: registers a thread of the loaded function (0: unknown) */
	int max_block;        /* GPU: the most threads a program of the loaded function may have, its
	                         registers counted (the driver's; 0: unknown) */
	const char *warning;  /* GPU: the warning about it (module arena), or NULL */
	struct TmaCache *tma_cache; /* GPU, with tensor maps: those of its recent launches (tensor_maps.c) */
} Variant;

/* The config an @autotune kernel runs for some values of its key (and a
 * specialization of its arguments). */
typedef struct Tuned {
	int64_t *key;         /* one value per key name (key_values) */
	uint64_t spec;
	int best;             /* index into the kernel's configs */
} Tuned;

struct blk_kernel {
	blk_module *m;
	Node *node;
	AutotuneSpec autotune;
	blk_param_info *params;
	uint8_t *param_sk;    /* ScalarKind of each parameter (of the pointee for a pointer) */
	int n_params;
	int n_args;           /* parameters that are not const: blk_launch's arguments */
	Variant **variants;
	int n_variants, cap_variants;
	/* @autotune: for each key name, the runtime argument that gives it, or
	 * -1 for a const parameter; the choices made so far */
	int *key_arg;
	Tuned *tuned;
	int n_tuned, cap_tuned;
	/* The last launch's request (its consts, num_warps, num_stages) and the
	 * variant it got: a launch asking the same skips the search. */
	struct {
		blk_const *consts; /* one malloc'd block with the names */
		size_t cap;        /* its bytes */
		int n_consts, num_warps, num_stages;
		uint64_t spec;
		Variant *v;
		bool tuned;        /* it chose among the configs for its key values: */
		int64_t *key;      /* these (n_key, allocated with the kernel) */
		blk_arg *args;     /* with @heuristics: its arguments (malloc'd, n_args_cap) */
		int n_args_cap;
	} last;
};

struct blk_module {
	blk_context *ctx;     /* NULL once the context was destroyed */
	blk_module *next_module;
	Arena arena;
	ModuleSet set;
	Module *mod;
	ConstBinding *defines;
	int n_defines;
	blk_kernel *kernels;
	int n_kernels;
	double ms_parse;      /* loading: reading, parsing and checking the sources */
	pthread_mutex_t lock;
};

/* ---- handles under BLK_DEBUG=1 (handles.c) ------------------------------------------ */

typedef enum HandleKind { H_CONTEXT, H_MODULE, H_KERNEL } HandleKind;

/* Whether BLK_DEBUG=1 asked for the record of handles (read once). */
bool rt_debug_handles(void);
/* Records a handle made (nothing without BLK_DEBUG=1). */
void rt_handle_add(const void *p, HandleKind kind);
/* Marks a handle destroyed; true when it was recorded and live: its
 * caller then frees what it holds but keeps its own bytes. */
bool rt_handle_dead(const void *p);
/* BLK_SUCCESS without BLK_DEBUG=1, for NULL, or for a live handle of that
 * kind; else BLK_ERROR_INVALID_ARGUMENT naming the handle ("fn: the
 * blk_kernel 0x... was destroyed"). */
blk_status rt_handle_check(const void *p, HandleKind kind, const char *fn);

/* ---- errors (error.c) -------------------------------------------------------------- */

/* Sets this thread's last error (blk_last_error) to the message; returns
 * status. */
blk_status rt_fail(blk_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears this thread's last error; returns BLK_SUCCESS. */
blk_status rt_ok(void);

/* Reports a failed driver call made for `fn` (ctx may be NULL). */
blk_status cuda_fail(blk_context *ctx, CUresult r, const char *fn, const char *call);

/* What a failed driver call means to a caller of blk.h (a blk_status):
 * out of memory; no device (no driver, no GPU, the driver too old); a
 * kernel that failed while running (illegal address, assert, ... : the
 * context is unusable afterwards); else BLK_ERROR_LAUNCH as well. */
blk_status cuda_blk_status(CUresult r);

/* ---- contexts (context.c) and memory (buffers.c) ------------------------------------ */

/* Makes ctx's CUDA context current on this thread (a check when it is). */
blk_status rt_gpu_enter(blk_context *ctx, const char *fn);

/* A public call's hold on the calling thread's current CUDA context: every
 * call of blk.h that reaches the driver for a GPU context starts with
 * rt_gpu_push (ctx's context made current, what was current remembered)
 * and ends with rt_gpu_pop (that put back), so that work on device N never
 * lands in device M's context and the caller's current context (PyTorch's)
 * is left as it was. No-ops for NULL or an interpreter context. */
typedef struct GpuScope {
	const CudaDriver *cu;
	CUcontext prev;
	bool swapped; /* prev was not ctx's context: put back on pop */
} GpuScope;
blk_status rt_gpu_push(blk_context *ctx, const char *fn, GpuScope *s);
void rt_gpu_pop(GpuScope *s);

/* Adds the disk cache's refusal on this thread (cache_take_refusal), if
 * any, to ctx's warnings (blk_context_warnings), unless it is the one ctx
 * reported last. */
void rt_cache_warning(blk_context *ctx);

/* The context of k's module (NULL once destroyed), read under its lock. */
blk_context *rt_kernel_context(blk_kernel *k);

/* The buffer of ctx holding [p, p + bytes), or -1. Caller holds ctx->lock. */
int rt_find_buffer(blk_context *ctx, blk_devptr p, size_t bytes);

/* ---- modules (modules.c) ----------------------------------------------------------- */

/* Detaches ctx's modules as ctx is destroyed: their GPU code is unloaded
 * and their kernels fail to launch from then on. */
void rt_orphan_modules(blk_context *ctx);

/* Loads m's source again on ctx, with m's include path and defines: the
 * same kernels on another device (sweep.c). */
blk_status rt_module_clone(const blk_module *m, blk_context *ctx, blk_module **out);

/* ---- variants (variant.c) ---------------------------------------------------------- */

enum { SPEC_ARGS = 31 }; /* arguments specialized (arg_spec) */
/* The last bit of a specialization: no TMA (a launch whose arguments no
 * tensor map can describe runs the variant made without). */
#define SPEC_NO_TMA ((uint64_t)1 << 63)
#define SPEC_ONES(spec) (((spec) >> SPEC_ARGS) & (((uint64_t)1 << SPEC_ARGS) - 1))

typedef enum FindMode {
	FIND_LAUNCH,  /* a launch: tune when the choice for the key is not known */
	FIND_COMPILE, /* compiling ahead: the known choice, else the first config */
} FindMode;

/* The variant this launch runs (for an @autotune kernel, tuning first when
 * needed); args may be NULL when compiling ahead. Caller holds m->lock. */
blk_status rt_find_variant(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                        uint64_t spec, FindMode mode, Variant **out);

/* The variant of config `cfg` (of an @autotune kernel; any index for one
 * without) for this launch's options and arguments (what @heuristics
 * computes from them; NULL: none given). Caller holds m->lock. */
blk_status rt_config_variant(blk_kernel *k, const blk_launch_options *opt, int cfg, uint64_t spec,
                             const blk_arg *args, int n_args, Variant **out);
/* Do a and b give the kernel's scalar (not pointer) arguments the same values? */
bool rt_same_scalars(const blk_kernel *k, const blk_arg *a, const blk_arg *b);
/* The kernel's scalar arguments by name (what the grid clause and
 * @heuristics compute from), in `out` (n_args entries), typed by the
 * variant's parameters where f is given, else as the arguments come;
 * returns how many. */
int rt_scalar_bindings(const blk_kernel *k, const IrFunc *f, const blk_arg *args, int n_args, ConstBinding *out);
/* num_sms() for the kernel's compile-time clauses: the device's
 * multiprocessors, or the interpreter's fixed count. */
int rt_num_sms(const blk_kernel *k);

/* v's twin made without TMA (its request with SPEC_NO_TMA). Caller holds m->lock. */
blk_status rt_variant_without_tma(blk_kernel *k, const Variant *v, Variant **out);

/* The arguments' specialization (GPU only): bit i when argument i is a
 * multiple of 16 or 16-byte aligned, bit SPEC_ARGS + i when it equals 1
 * (the first SPEC_ARGS arguments). */
uint64_t rt_arg_spec(const blk_kernel *k, const blk_arg *args);

/* ---- tensor maps (tensor_maps.c) ---------------------------------------------------- */

/* Whether the arguments fit every tensor map of v (sizes from 1 to 2^31 -
 * 1, rows 16-byte aligned and apart by at least a row, a base aligned to
 * 16 bytes). */
bool rt_tma_fits(const Variant *v, const blk_arg *args);
/* v's tensor maps for these arguments (which fit), into maps[0..n_tmaps):
 * copied from v's cache where a recent launch had the same bases, sizes
 * and strides, else encoded (and kept). */
blk_status rt_tma_encode(const blk_context *ctx, Variant *v, const blk_arg *args, CUtensorMap *maps);
/* Gives v (loaded, with tensor maps) its cache, in arena a; false when out
 * of memory. The module's lock held. rt_tma_cache_free undoes it. */
bool rt_tma_cache_new(Variant *v, Arena *a);
void rt_tma_cache_free(Variant *v);

/* ---- the GPU's code (jit.c) -------------------------------------------------------- */

/* Compiles (or takes from the disk cache) and loads v for its context's
 * device. Caller holds m->lock. */
blk_status rt_gpu_load_variant(blk_kernel *k, Variant *v);
/* *v loaded, for these arguments (NULL: any): where its descriptor tiles
 * come by TMA and the arguments fit no tensor map, its twin without TMA
 * instead. Caller holds m->lock. */
blk_status rt_gpu_ready(blk_kernel *k, Variant **v, const blk_arg *args);

/* The PTX target for a device of compute capability major.minor: the
 * newest target the PTX back end supports (llvm_ptx_isa_version) that is
 * not newer than the device, "sm_90a" for 9.0 (its arch-specific features,
 * wgmma, run there alone), "sm_80" for 8.0, "sm_90" for 10.0 (PTX is
 * compiled by the driver for newer devices). False when
 * the device is older than every target (below sm_70). */
bool cuda_arch_for(int major, int minor, char *buf, size_t size);

/* ---- launches (launch.c) ----------------------------------------------------------- */

/* The launch's arguments against the kernel's parameters. */
blk_status rt_check_args(blk_kernel *k, const blk_arg *args, int n_args);

/* The most programs one interpreter launch runs (2^24). */
#define RT_INTERP_MAX_PROGRAMS (1u << 24)
/* What num_sms() gives in a grid clause on the interpreter (a GPU gives its
 * multiprocessor count): fixed, so that a persistent kernel runs the same
 * way on every host. */
#define RT_INTERP_NUM_SMS 4

/* Checks a launch's options: consts given where n_consts says, each with a
 * name, each naming a const parameter of k (or num_warps, num_stages). */
blk_status rt_check_options(const blk_kernel *k, const blk_launch_options *opt, const char *fn);

/* The launch's grid: given, or from the kernel's grid clause. Caller holds
 * m->lock. */
blk_status rt_launch_grid(blk_kernel *k, Variant *v, const blk_arg *args, int n_args, const blk_launch_options *opt,
                       unsigned grid[3]);

/* Starts a launch for `fn` (blk_launch, blk_time_launch): the options and
 * arguments checked, the variant (compiled and loaded) and the grid. */
blk_status rt_prepare_launch(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                             const char *fn, blk_context **ctx_out, Variant **v_out, unsigned grid[3]);

/* One launch of a prepared variant, on each backend. */
blk_status rt_gpu_launch(blk_context *ctx, Variant *v, const blk_arg *args, int n_args, const unsigned grid[3],
                      const blk_launch_options *opt);
blk_status rt_interp_launch(blk_context *ctx, blk_kernel *k, Variant *v, const blk_arg *args, int n_args,
                         const unsigned grid[3], const blk_launch_options *opt);

/* ---- timing (timing.c) ------------------------------------------------------------- */

/* CLOCK_MONOTONIC in milliseconds. */
double rt_monotonic_ms(void);

/* The median of n values (sorts them). 0 for n == 0. */
double rt_median_of(double *v, int n);

/* The median time of v on the GPU in milliseconds, of `reps` launches
 * after `warmups`, the L2 cache flushed before each. */
blk_status rt_time_gpu(blk_context *ctx, Variant *v, const blk_arg *args, int n_args, const unsigned grid[3],
                    const blk_launch_options *opt, int warmups, int reps, double *median);

/* ---- pruning configs before timing them (prune.c) ------------------------------------ */

/* What checking one config before it is timed found. */
typedef struct ConfigCheck {
	Variant *v;           /* its variant, ready to launch with these arguments; NULL when pruned,
	                         failed, or not checked (its launch would tune first) */
	blk_status status;    /* not BLK_SUCCESS: making it failed for another reason than fit (note) */
	int pruned;           /* 0, BLK_PRUNE_FIT or BLK_PRUNE_IDLE */
	unsigned grid[3];
	uint64_t programs;    /* grid[0] * grid[1] * grid[2]; 0 when not known */
	char note[512];       /* "pruned: why", why making it failed (lines of a diagnostic), or "" */
} ConfigCheck;

/* Makes each of n configs ready (compiled, loaded, its grid evaluated for
 * args) and applies the pruning rules (BLK_PRUNE_FIT, BLK_PRUNE_IDLE; none
 * for fewer than two configs). by_index: config c is the kernel's @autotune
 * config c with the options `launch`, and opts[c] says what it gives (as
 * rt_config_options makes them); else config c is opts[c] as a launch's
 * options. GPU context; caller holds m->lock. */
void rt_check_configs(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *launch,
                      const blk_launch_options *opts, int n, bool by_index, uint64_t spec, int rules,
                      ConfigCheck *checks);

/* ---- autotuning (autotune.c) ------------------------------------------------------- */

/* BLK_ERROR_INVALID_ARGUMENT naming the counts when result cannot hold
 * k's configs (more than BLK_TUNE_MAX_CONFIGS); else BLK_SUCCESS. */
blk_status rt_check_tune_result(const blk_kernel *k, const blk_tune_result *result, const char *fn);

/* Does this launch leave the choice among the kernel's configs open? */
bool rt_needs_tuning(const blk_kernel *k, const blk_launch_options *opt);

/* The values of the kernel's autotune key in this launch (k->autotune.n_key
 * of them). */
void rt_key_values(const blk_kernel *k, const blk_arg *args, const blk_launch_options *opt, int64_t *out);

/* Do the arguments give the key the values the last launch's did? */
bool rt_same_key(const blk_kernel *k, const blk_arg *args);

/* Remembers config `best` as the choice for the key values of this launch
 * (in memory and in the disk cache), as blk_autotune does. Caller holds
 * m->lock. */
void rt_store_choice(blk_kernel *k, const blk_arg *args, const blk_launch_options *opt, uint64_t spec, int best);

/* Config c of an @autotune kernel as a launch's options: opt's, with the
 * config's consts that opt does not give, and its num_warps and
 * num_stages where opt leaves them 0. consts has room for opt->n_consts +
 * the config's entries. */
void rt_config_options(const blk_kernel *k, const blk_launch_options *opt, int c, blk_const *consts,
                       blk_launch_options *out);

/* The config for these key values: remembered, on disk, or (for a launch)
 * tuned now; *known is false for a guess. Caller holds m->lock. */
blk_status rt_choose_config(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                         uint64_t spec, const int64_t *key, FindMode mode, int *cfg, bool *known);

#endif
