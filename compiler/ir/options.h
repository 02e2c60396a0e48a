/* ir/options.h: the launch and compile options, one row each.
 *
 * An option is given where a const value is: -D NAME=V (blkc), a key of
 * an @autotune config, a launch's consts (blk_launch_options, a Python
 * keyword); num_warps and num_stages also as blk_launch_options fields.
 * Everything else comes from this table: irgen's recognition and range
 * checks, the defaults, the IrFunc field that holds the settled value, the
 * environment variable that changes the default (runtime), the lines of
 * the disk cache's key, blkc's -D help and the list libblk gives Python
 * (blk_option_name). A new option is a row here and the code that reads
 * its IrFunc field.
 *
 * X(name, kind, default, lo, hi, env, in_key, help):
 *   kind      OPTION_INT (lo..hi), OPTION_POW2 (a power of two in lo..hi),
 *             OPTION_FLAG (0 or 1)
 *   env       the variable whose integer value replaces the default in the
 *             runtime, or NULL
 *   in_key    whether the settled value enters the disk cache's key */
#ifndef BLK_IR_OPTIONS_H
#define BLK_IR_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BLK_OPTIONS(X)                                                                                        \
	X(num_warps, OPTION_POW2, 4, 1, 32, NULL, true, "warps a program runs (32 threads each)")                  \
	X(num_stages, OPTION_INT, 3, 1, 64, NULL, true, "loads a pipelined loop keeps in flight")                  \
	X(tma, OPTION_FLAG, 0, 0, 1, "BLK_TMA", true, "sm_90a: descriptor tiles that loops load for dots by TMA")  \
	X(fp_fusion, OPTION_FLAG, 1, 0, 1, NULL, true, "a float a * b + c is contracted into one fma")      \
	X(warp_specialize, OPTION_FLAG, 0, 0, 1, "BLK_WARP_SPECIALIZE", true,                                     \
	  "sm_90a: TMA loops split into a producer and consumer warps")                                            \
	X(maxnreg, OPTION_INT, 0, 0, 255, NULL, true, "registers a thread may use at most (.maxnreg; 0: no cap)")

typedef enum { OPTION_INT, OPTION_POW2, OPTION_FLAG } OptionKind;

typedef enum {
#define OPTION_ID(name, ...) OPTION_##name,
	BLK_OPTIONS(OPTION_ID)
#undef OPTION_ID
	OPTION_COUNT
} OptionId;

typedef struct OptionInfo {
	const char *name;
	OptionKind kind;
	int dflt, lo, hi;
	const char *env;
	bool in_key;
	const char *help;
} OptionInfo;

extern const OptionInfo option_table[OPTION_COUNT];

/* The option called `name`, or -1. */
int option_find(const char *name);
/* NULL when `v` is a value option `id` takes; else the error (naming the
 * option, the value and what it takes), written into buf. A float or a
 * type given for it is passed as its text in `text` (then v is unused). */
const char *option_check(int id, const char *text, int64_t v, char *buf, size_t size);
/* What option `id` takes, as the errors say it ("a power of two in 1..32"). */
const char *option_range(int id, char *buf, size_t size);

#endif
