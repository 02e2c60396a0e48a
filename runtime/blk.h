/* blk.h: the public interface of libblk.
 *
 * Every function returns a status; when it is not BLK_SUCCESS,
 * blk_last_error() says what went wrong and where. The library never prints
 * and never exits.
 *
 * Threads: every function may be called from several threads at once, on
 * the same context, module or kernel too (the last error is kept per
 * thread), except that a handle must not be destroyed while another thread
 * uses it (blk_context_destroy, blk_module_destroy).
 *
 * Devices: a GPU context is one device's (blk_context_create's `device`,
 * or the device of the context blk_context_create_current borrows), and
 * so is everything made on it: memory (a blk_devptr is an address of that
 * device), modules, kernels, launches, timing. Use a context per device;
 * contexts of one device share its primary CUDA context. A call on a GPU
 * context makes that context's CUDA context current on the calling thread
 * for its own time and puts back what was current before (a program's or
 * PyTorch's current device is left as it was). What is shared across
 * contexts: a variant's PTX, compiled once per architecture (the disk
 * cache, BLK_CACHE) and loaded by the driver's JIT into each context that
 * launches it. */
#ifndef BLK_H
#define BLK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BLK_EXPORT __attribute__((visibility("default")))
#else
#define BLK_EXPORT
#endif

typedef enum blk_status {
	BLK_SUCCESS = 0,
	BLK_ERROR_INVALID_ARGUMENT, /* a null pointer, a size out of range, a wrong kernel argument */
	BLK_ERROR_SOURCE,           /* the .tile source has errors (diagnostics in blk_last_error) */
	BLK_ERROR_OUT_OF_MEMORY,
	BLK_ERROR_NOT_FOUND,        /* no such file, kernel or buffer */
	BLK_ERROR_NO_DEVICE,        /* no CUDA driver or GPU for a GPU context */
	BLK_ERROR_LAUNCH,           /* the kernel failed while running (out of bounds, assert) */
} blk_status;

/* "0.1.0" */
BLK_EXPORT const char *blk_version(void);

/* The kernel options (num_warps, num_stages, tma, fp_fusion, ...): names a
 * launch may give among its consts, as -D and @autotune configs may. For
 * bindings, which read the list rather than copy it: option i's name, or
 * NULL past the last; *lo and *hi (either may be NULL) get the lowest and
 * highest value it takes, *pow2 whether it takes powers of two alone. */
BLK_EXPORT const char *blk_option(int i, int *lo, int *hi, int *pow2);

/* The message of the last failed call on this thread ("" if none). The
 * string stays valid until the next call into libblk on this thread. */
BLK_EXPORT const char *blk_last_error(void);

/* Parses a .tile source and checks its structure. `name` is used in
 * diagnostics ("file:line:col: error: ..."). On BLK_ERROR_SOURCE the
 * diagnostics, caret lines included, are in blk_last_error(). Warnings alone
 * leave the status BLK_SUCCESS. */
BLK_EXPORT blk_status blk_check_source(const char *name, const char *text, size_t len);

/* ---- contexts: where kernels run --------------------------------------
 *
 * A context runs kernels on a GPU or on the interpreter (the CPU, with
 * every memory access checked). A host program writes the same code for
 * both: memory from blk_malloc, arguments as blk_arg, blk_launch; only the
 * backend given to blk_context_create differs. */

typedef enum blk_backend {
	BLK_BACKEND_AUTO = 0,    /* the GPU when one can be used, else the interpreter;
	                            the environment variable BLK_BACKEND=gpu|interpreter decides first */
	BLK_BACKEND_GPU,
	BLK_BACKEND_INTERPRETER,
} blk_backend;

typedef struct blk_context blk_context;
typedef struct blk_module blk_module;
typedef struct blk_kernel blk_kernel;

/* An address in a context's memory (a device pointer on a GPU). */
typedef uint64_t blk_devptr;

BLK_EXPORT blk_status blk_context_create(blk_backend backend, int device, blk_context **out);
BLK_EXPORT void blk_context_destroy(blk_context *ctx);
BLK_EXPORT blk_backend blk_context_backend(const blk_context *ctx);
/* Text the kernels' print() calls produced on the interpreter since the
 * last call (NUL-terminated; valid until the next call on ctx). */
BLK_EXPORT const char *blk_context_printed(blk_context *ctx);
/* Warnings of the kernels compiled on the context since the last call, a
 * line each ("warning: kernel 'k' spills registers for sm_90a: ..."; ""
 * when none). The library prints nothing itself: a program shows these as
 * it likes (blkc prints them to stderr). Valid until the next call on ctx. */
BLK_EXPORT const char *blk_context_warnings(blk_context *ctx);

/* Memory of the context, zero-filled. */
BLK_EXPORT blk_status blk_malloc(blk_context *ctx, size_t bytes, blk_devptr *out);
BLK_EXPORT blk_status blk_free(blk_context *ctx, blk_devptr ptr);
/* Copies (synchronous). On the interpreter a host range may overlap the
 * context's memory (a blk_devptr there is a host address): the copy is
 * then as memmove makes it. */
BLK_EXPORT blk_status blk_copy_to_device(blk_context *ctx, blk_devptr dst, const void *src, size_t bytes);
BLK_EXPORT blk_status blk_copy_from_device(blk_context *ctx, void *dst, blk_devptr src, size_t bytes);

/* ---- modules and kernels ------------------------------------------------ */

/* A compile-time value for a const parameter (like blkc -D NAME=VALUE): a
 * number, or for a parameter of kind type (T: const type) a type name. */
typedef struct blk_const {
	const char *name;
	int is_float;
	int64_t i;  /* for a u64 parameter, the value's bits: 2^63 and more read as negative */
	double f;
	const char *type; /* a type for a `const type` parameter ("f16", "bf16", "*f32"); NULL for a number */
} blk_const;

typedef struct blk_module_options {
	const char *const *include_dirs; /* import search path, after the file's folder */
	int n_include_dirs;
	const blk_const *defines;        /* const values for every kernel of the module */
	int n_defines;
} blk_module_options;

/* Loads a .tile file or source text, with its imports; checks it. */
BLK_EXPORT blk_status blk_module_load_file(blk_context *ctx, const char *path, const blk_module_options *opt,
                                           blk_module **out);
BLK_EXPORT blk_status blk_module_load_source(blk_context *ctx, const char *name, const char *text, size_t len,
                                             const blk_module_options *opt, blk_module **out);
BLK_EXPORT void blk_module_destroy(blk_module *m);

/* The kernel `name` of the module (NULL: its only kernel). Owned by the module. */
BLK_EXPORT blk_status blk_kernel_get(blk_module *m, const char *name, blk_kernel **out);

typedef enum blk_param_kind { BLK_PARAM_POINTER, BLK_PARAM_INT, BLK_PARAM_FLOAT } blk_param_kind;

typedef struct blk_param_info {
	const char *name;
	const char *type;    /* as written: "*f32", "i32", "const i32", "const type"; a parameter of a
	                        generic type reads "*T" (or "*f16" where the module's defines bind T) */
	blk_param_kind kind;
	int is_const;        /* a const parameter: given through blk_const, not blk_arg */
	int elem_bytes;      /* size of the element a pointer points to, or of the scalar */
} blk_param_info;

BLK_EXPORT int blk_kernel_num_params(const blk_kernel *k);
BLK_EXPORT blk_status blk_kernel_param(const blk_kernel *k, int i, blk_param_info *out);

/* ---- launching ------------------------------------------------------------- */

typedef enum blk_arg_kind { BLK_ARG_PTR, BLK_ARG_INT, BLK_ARG_FLOAT } blk_arg_kind;

/* One runtime argument: the kernel's parameters that are not const, in order. */
typedef struct blk_arg {
	blk_arg_kind kind;
	union {
		blk_devptr ptr;
		int64_t i;
		double f;
	} v;
} blk_arg;

static inline blk_arg blk_arg_ptr(blk_devptr p) { blk_arg a = {BLK_ARG_PTR, {0}}; a.v.ptr = p; return a; }
static inline blk_arg blk_arg_int(int64_t i) { blk_arg a = {BLK_ARG_INT, {0}}; a.v.i = i; return a; }
static inline blk_arg blk_arg_float(double f) { blk_arg a = {BLK_ARG_FLOAT, {0}}; a.v.f = f; return a; }

typedef struct blk_launch_options {
	unsigned grid[3];       /* all 0: computed by the kernel's grid(...) clause */
	const blk_const *consts; /* const parameters, over the module's defines; also the
	                            options (blk_option: num_warps, num_stages, tma (0 or 1:
	                            tensor-descriptor tiles by TMA on sm_90a; unset: BLK_TMA),
	                            fp_fusion (0 or 1: a * b + c may become an fma), ...);
	                            a name given twice is an error */
	int n_consts;
	int num_warps;          /* 0: a const num_warps, the kernel's config, or 4 */
	int num_stages;         /* 0: a const num_stages, the kernel's config, or 3 */
	void *stream;           /* GPU: a CUstream; NULL the default stream */
	int threads;            /* interpreter: OS threads (0: $BLK_INTERP_THREADS or 1) */
} blk_launch_options;

/* Compiles the kernel for these const values (once; later launches reuse
 * it) and runs it. On the interpreter the run is complete on return; an
 * out-of-bounds access or failed assert is BLK_ERROR_LAUNCH with the
 * kernel, the .tile line, the program id and the element in the message. */
BLK_EXPORT blk_status blk_launch(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt);


/* ---- synchronizing, timing, compiling ahead ---------------------------------------- */

/* Waits until the context's work is done (GPU); on the interpreter a no-op. */
BLK_EXPORT blk_status blk_synchronize(blk_context *ctx);

/* Compiles the variant a launch with these options would run, without
 * running it (const values, specialization from args when given, else
 * none). Fills info when not NULL. The strings in info stay valid while
 * the module lives. */
typedef struct blk_compile_info {
	const char *ptx;        /* GPU: the PTX text; NULL on the interpreter */
	size_t ptx_len;
	int shared_bytes;       /* dynamic shared memory a program needs */
	int num_warps, num_stages;
	double ms_parse, ms_irgen, ms_passes, ms_llvm, ms_ptx, ms_cubin; /* phases of this compilation (0: cached) */
	int from_disk_cache;    /* 1 when the PTX came from the disk cache */
	int spill_bytes;        /* GPU: bytes of registers spilled to local memory a thread (0: none) */
	const char *warnings;   /* the compilation's warnings, a line each, or "" (valid while the module lives) */
	int registers;          /* GPU: registers a thread (the loaded kernel's, from the driver); 0 on the interpreter */
} blk_compile_info;
BLK_EXPORT blk_status blk_kernel_compile(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                                         blk_compile_info *info);

/* Times a launch: warm-up, then `reps` timed runs (GPU: CUDA events, with
 * the L2 cache flushed between runs; interpreter: the wall clock); the
 * median in milliseconds. Outputs are written by every run. */
BLK_EXPORT blk_status blk_time_launch(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                                      int reps, double *median_ms);

/* ---- autotuning ---------------------------------------------------------------------- */

/* Runs the kernel's @autotune configs (or, with opt->consts naming no
 * config, just the one launch) on these arguments, timing each, and keeps
 * the fastest for the values of the kernel's key (in memory and in the
 * disk cache); later blk_launch calls with the same key use it. Buffers
 * the kernel writes are saved before and restored after each config, so
 * the arguments hold their old contents on return. result may be NULL. */
#define BLK_TUNE_MAX_CONFIGS 64 /* the configs a blk_tune_result holds: a kernel of more is
                                   tuned by a launch, or by blk_autotune with result NULL */
#define BLK_TUNE_PRUNED (-2.0) /* ms of a config pruned before timing (blk_prune_configs' rules) */
typedef struct blk_tune_result {
	int n_configs;
	int best;                 /* index of the fastest config */
	double ms[BLK_TUNE_MAX_CONFIGS];   /* median time of each config; negative: it could not run
	                                      (BLK_TUNE_PRUNED: pruned, not timed) */
	char note[BLK_TUNE_MAX_CONFIGS][96]; /* why a config could not run ("pruned: ..." when pruned), or "" */
} blk_tune_result;
BLK_EXPORT blk_status blk_autotune(blk_kernel *k, const blk_arg *args, int n_args, const blk_launch_options *opt,
                                   blk_tune_result *result);

/* Which configs autotuning leaves untimed (GPU; on the interpreter none),
 * by two rules: BLK_PRUNE_FIT, a config that cannot run on the device (its
 * shared memory over the per-program limit, more threads than a program
 * may have, or than the register file holds at its registers a thread);
 * BLK_PRUNE_IDLE, a config of fewer programs than half the device's SMs
 * while another that fits has one or more for every SM. blk_autotune and
 * an @autotune launch apply both to the kernel's configs; this applies
 * `rules` to any n_configs launches (each compiled and loaded, its grid
 * evaluated for args): pruned[i] gets 0 or the rule that pruned config i,
 * notes (n_configs strings of note_size bytes; may be NULL) "pruned: why"
 * or "". With fewer than two configs none is pruned. A config that fails
 * for another reason, or whose launch would be tuned first (it leaves a
 * const of the kernel's @autotune configs open), is kept. */
#define BLK_PRUNE_FIT 1
#define BLK_PRUNE_IDLE 2
BLK_EXPORT blk_status blk_prune_configs(blk_kernel *k, const blk_arg *args, int n_args,
                                        const blk_launch_options *configs, int n_configs, int rules, int *pruned,
                                        char *notes, size_t note_size);

/* ---- sweeps across GPUs ------------------------------------------------------------------ *
 *
 * Both split a kernel's configs across the GPUs `devices` lists (CUDA
 * device ordinals; the kernel's own device may or may not be among them),
 * config c to devices[c % n_devices], a thread per device. Each device
 * gets a context of its own, the kernel's module loaded again, and its own
 * copy of every allocation a pointer argument points into (the arguments
 * must be memory of the kernel's device; they are read, never written).
 * Every device must be the model of the kernel's device (name and compute
 * capability), else BLK_ERROR_INVALID_ARGUMENT names both; a device that
 * does not exist is BLK_ERROR_NO_DEVICE naming it and the device count.
 * With n_devices 0 they run on the kernel's own context alone. */

/* blk_autotune across devices: each @autotune config timed on one of
 * them, the results merged into one blk_tune_result (a note says on which
 * device a config failed), the fastest remembered for the kernel as
 * blk_autotune does. */
BLK_EXPORT blk_status blk_autotune_devices(blk_kernel *k, const blk_arg *args, int n_args,
                                           const blk_launch_options *opt, const int *devices, int n_devices,
                                           blk_tune_result *result);

/* Times n_configs launches (blk_time_launch with configs[i] and `reps`;
 * a config's stream is not used across devices): ms[i] is the median of
 * launch i, negative when it could not run, and notes (n_configs strings
 * of note_size bytes; may be NULL) say why. BLK_SUCCESS when the sweep
 * could be made, whether or not each config ran. */
BLK_EXPORT blk_status blk_time_configs(blk_kernel *k, const blk_arg *args, int n_args,
                                       const blk_launch_options *configs, int n_configs, int reps, const int *devices,
                                       int n_devices, double *ms, char *notes, size_t note_size);

/* ---- borrowing a CUDA context -------------------------------------------------------- */

/* A GPU context on the CUDA context current on this thread (one a program
 * built on PyTorch or the CUDA runtime already made), of that context's
 * device: nothing is created, retained or destroyed with it beyond blk's
 * own modules and memory. */
BLK_EXPORT blk_status blk_context_create_current(blk_context **out);

#ifdef __cplusplus
}
#endif

#endif
