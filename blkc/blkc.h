/* blkc.h: what the files of blkc, the command-line tool, share: the options
 * of a compile and of blkc run, bench and tune, the variants --emit=c writes,
 * the configurations bench and tune time. Internal to blkc/. */
#ifndef BLK_BLKC_H
#define BLK_BLKC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "blk.h"
#include "irgen/irgen.h"
#include "lang.h"

/* ---- the plain compile (main.c, compile.c) ------------------------------ */

typedef enum Emit { EMIT_CHECK, EMIT_TOKENS, EMIT_AST, EMIT_IR, EMIT_LLVM, EMIT_PTX, EMIT_CUBIN, EMIT_C } Emit;

typedef struct Options {
	Emit emit;
	const char *output;
	int color; /* -1 auto, 0 never, 1 always */
	int max_errors;
	const char **include_dirs;
	int n_include_dirs;
	bool allow_any_import;  /* --allow-any-import */
	ConstBinding *defines;
	int n_defines;
	const char *kernel;     /* --kernel */
	const char *passes;     /* --passes; NULL: the default pipeline, "none": no pass */
	const char *dump_after; /* --dump-after */
	const char *stdlib_dir;
	bool locations;         /* --locations: loc(LINE:COL) in printed IR */
	const char *arch;       /* --arch */
	const char *assume;     /* --assume=NAME:DIV,... */
	bool tma;               /* --tma: TMA copies of descriptor tiles on sm_90a */
	bool time;              /* --time: each phase's time on stderr */
	int time_runs;          /* --time=N: compile each file N times, print medians */
	const char *ptxas;      /* --emit=cubin and c: the ptxas found, or NULL */
} Options;

/* Compiles a file (with --time=N, N times) and prints its phase times
 * with --time; returns 0, 1 when it had errors, 2 when it would overwrite
 * a file it reads. */
int compile_file_timed(const Options *opt, const char *path, FILE *out);
/* The files -o names: none (standard output), the file, or NAME.c and
 * NAME.h for --emit=c. Returns how many. */
int compile_outputs(const Options *opt, char outs[2][4200]);
/* The errno of the first write to the output that fell short (0: none). */
int compile_write_errno(void);

/* ---- one file's compilation (compile.c), --emit=c (aot.c) --------------- */

/* Milliseconds spent in each phase of one blkc invocation on a file. */
typedef struct PhaseTimes {
	double parse, irgen, passes, llvm, ptx, cubin;
	int variants;
} PhaseTimes;

/* One kernel variant (a kernel at one set of const values) for --emit=c. */
typedef struct AotVariant {
	const char *kernel;
	int config;              /* index of the @autotune config, -1 without one */
	ConstBinding *consts;
	int n_consts;
	IrFunc *f;
	char *ptx;
	size_t ptx_len;
	unsigned char *cubin;    /* NULL without ptxas */
	size_t cubin_len;
	int shared;
	const char *grid;        /* the grid clause as written, or NULL */
	int grid_len;
	char prefix[512];        /* C names: PREFIX_launch, ... */
} AotVariant;

typedef struct Compile {
	const Options *opt;
	Diag *diag;
	Arena *arena;
	StrBuf *text;
	PhaseTimes t;
	AotVariant *vars;
	int n_vars, cap_vars;
} Compile;

/* Writes NAME.h and NAME.c (NAME: -o less a .c or .h) for the variants
 * of cc; false (reported) when a file cannot be written. */
bool write_aot(const Compile *cc, const char *src_path);

/* ---- ptxas and files (ptxas.c) ------------------------------------------ */

const char *find_ptxas(char *buf, size_t size);
/* Writes a whole file: through a temporary file renamed into place when the
 * path is a regular file or none, else (a device, a FIFO) directly; every
 * write checked. false with errno set on failure. */
bool write_file(const char *path, const void *data, size_t len);
/* A temporary file beside path to write it through (tmp gets its name), or
 * path itself where it exists and is not a regular file (tmp = ""). */
FILE *open_output(const char *path, char *tmp, size_t size);
/* Closes f (from open_output), checking every write; renames tmp over
 * path on success, removes it otherwise. false with errno set on failure. */
bool close_output(FILE *f, const char *path, const char *tmp, bool keep);
bool run_ptxas(const char *ptxas, const char *arch, const char *kernel, const char *ptx, size_t len,
               unsigned char **cubin, size_t *cubin_len, Diag *diag);

/* ---- shared by the command lines (options.c) ---------------------------- */

int bad_usage(const char *fmt, const char *arg);
struct option;
/* Reports the option getopt_long has just refused as unknown (a short one by
 * its letter and the word it was in, a long one with the nearest of
 * longopts); returns 2. */
int unknown_option(int argc, char **argv, const struct option *longopts);
bool is_identifier(const char *s, size_t n);
bool parse_define(const char *arg, ConstBinding *out);
const char *find_stdlib(char *buf, size_t size);
/* Is `out`, written by option `flag`, the input or a file it imports (of
 * modules, NULL for none)? Reported (`who` first) when it is: the caller
 * exits with status 2 before writing anything. */
bool output_is_source(const char *who, const char *flag, const char *out, const char *input, const PtrVec *modules);

/* ---- blkc run, bench and tune (tool.c) ---------------------------------- */

typedef enum Tool { TOOL_RUN, TOOL_BENCH, TOOL_TUNE } Tool;

typedef enum Format { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON } Format; /* --format of bench and tune */

/* Their command line. */
typedef struct ToolOptions {
	Tool tool;
	const char *kernel;        /* -k */
	blk_const *defines;        /* -D */
	int n_def;
	const char **includes;     /* -I */
	int n_inc;
	unsigned grid[3];          /* --grid; zeros: the kernel's grid clause */
	int threads;               /* --threads; 0: the default */
	const char **prints, **saves, **compares; /* blkc run: --print, --save, --compare */
	int n_print, n_save, n_cmp;
	bool checksum;             /* --checksum */
	int reps;                  /* --reps */
	double bytes;              /* --bytes; < 0: the sum of the buffers' sizes */
	Format format;             /* --format */
	const char **config_args;  /* blkc tune: --config */
	int n_config_args;
	const char **sweep_args;   /* --sweep */
	int n_sweeps;
	const char *svg;           /* --svg */
	int devices[64];           /* blkc tune --devices: GPUs the configs are split across */
	int n_devices;
	bool no_prune;             /* blkc tune --no-prune: time every config */
	const Source *source;      /* the program read from standard input (FILE "-"), else NULL */
} ToolOptions;

extern const char *tool_name; /* "blkc run", "blkc bench" or "blkc tune", in messages */
/* A libblk message without the C function's name it starts with
 * ("blk_launch: error: what" is "what"). */
const char *lib_message(const char *e);
/* Prints blk_last_error() as the tool's error (after "CONTEXT: " when not
 * NULL); compiler diagnostics as they are. */
void print_lib_error(const char *context);

int tool_main(Tool tool, int argc, char **argv);

/* ---- NAME=SPEC arguments (args.c) --------------------------------------- */

typedef struct RunBuffer {
	const char *name;
	ScalarKind kind;  /* of an element (pointers: u64) */
	int64_t count;
	size_t bytes;
	void *host;
	blk_devptr dev;
} RunBuffer;

extern uint64_t rng_state; /* of the random fills: --seed */

double get_elem(const void *base, int64_t i, ScalarKind k);
bool read_raw(const char *path, void *dst, size_t bytes);
int make_args(blk_context *ctx, blk_kernel *k, int argc, char **argv, int first, blk_arg **args, int *n_args,
               RunBuffer *bufs, int *n_bufs);

/* ---- blkc run (run.c) --------------------------------------------------- */

void run_usage(FILE *f);
int run_kernel(const ToolOptions *o, blk_context *ctx, blk_kernel *k, const blk_arg *args, int n_args,
               const blk_launch_options *lo, RunBuffer *bufs, int n_bufs);

/* ---- configurations (tune.c) -------------------------------------------- */

enum { TUNE_MAX_CONSTS = 32, TUNE_MAX_CONFIGS = 4096 };

typedef struct TuneConfig {
	blk_const c[TUNE_MAX_CONSTS];
	int n;
	double ms;        /* negative: it could not run */
	bool pruned;      /* not timed (blk_prune_configs): note says why */
	char note[240];   /* why not */
} TuneConfig;

typedef struct TuneRun {
	const char *kernel;
	const char *backend;
	int reps;
	double bytes;     /* moved by one launch; 0: unknown */
	TuneConfig *cfg;
	int n;
	int best;         /* -1: none ran */
	const char **names; /* the const names of every config, in order of appearance */
	int n_names;
} TuneRun;

void tune_usage(FILE *f);
void free_config(TuneConfig *c);
void config_label(const TuneConfig *c, char *buf, size_t size, const char *sep);
const blk_const *config_get(const TuneConfig *c, const char *name);
/* src: the program already read (standard input), else NULL to read path. */
bool kernel_autotune(const char *path, const Source *src, const char *kernel, const char **inc, int n_inc, char **name,
                     TuneConfig **cfg, int *n_cfg);
int tune_configs(const ToolOptions *o, TuneRun *tr, TuneConfig *at, int n_at);

/* ---- timing (bench.c), results (report.c), the chart (plot.c) ----------- */

void bench_usage(FILE *f);
int tool_time(const ToolOptions *o, blk_context *ctx, blk_kernel *k, const blk_arg *args, int n_args,
              blk_launch_options *lo, TuneRun *tr, const char *path, const RunBuffer *bufs, int n_bufs,
              char **kernel_name);
void print_bench(FILE *f, const TuneRun *r, Format fmt);
void print_tune(FILE *f, const TuneRun *r, Format fmt);
bool write_svg(const char *path, const TuneRun *r);

#endif
