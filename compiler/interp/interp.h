/* interp/interp.h: the reference interpreter, as the runtime and blkc use it. */
#ifndef BLK_INTERP_API_H
#define BLK_INTERP_API_H

#include "ir/ir.h"

/* ---- interpreter (interp.c and one file an op family) --------------------------------
 *
 * Runs an IrFunc on the CPU, a block at a time: the reference semantics of
 * blk, with every memory access checked against the buffers it was given.
 * docs/interpreter.md describes the semantics, the reports and the output. */

/* Host memory the kernel may touch; name (may be NULL) is used in reports.
 * Buffers must not overlap. */
typedef struct InterpBuffer {
	const char *name;
	void *data;
	size_t bytes;
} InterpBuffer;

/* The value of one runtime parameter: one per IrParam whose value is not
 * NULL (const parameters were folded away and take none), in order.
 * Integers and pointers (host addresses) go in i, floats in f with is_float. */
typedef struct InterpArg {
	bool is_float;
	int64_t i;
	double f;
} InterpArg;

static inline InterpArg interp_int(int64_t v) { return (InterpArg){.i = v}; }
static inline InterpArg interp_float(double v) { return (InterpArg){.is_float = true, .f = v}; }
static inline InterpArg interp_ptr(const void *p) { return (InterpArg){.i = (int64_t)(uintptr_t)p}; }

typedef struct InterpOptions {
	int grid[3];       /* programs along axes 0, 1, 2; an axis of 0 runs nothing */
	int threads;       /* OS threads running programs; 0 or 1: the calling thread */
	StrBuf *print_out; /* print appends here, a line an element; NULL: dropped */
	bool no_ub_checks; /* integer division by zero, shifts by the width or more
	                      and wrong hints give defined results instead of errors */
} InterpOptions;

/* Runs every program of the grid. An out-of-bounds or misaligned access, a
 * failed assert, an integer division by zero, a malformed IR or wrong
 * arguments stop the run: the error (file:line:col of the op, kernel,
 * program id, element) goes to diag and it returns false; stores made before
 * stay made. opt NULL: grid (1, 1, 1), one thread, print dropped. Never
 * prints; safe to call from several threads at once. */
bool interp_run(const IrFunc *f, const InterpArg *args, int n_args, const InterpBuffer *bufs, int n_bufs,
                const InterpOptions *opt, Diag *diag);

/* Philox4x32 of Random123: `rounds` rounds over ctr with key (out may be ctr). */
void philox4x32(const uint32_t ctr[4], const uint32_t key[2], int rounds, uint32_t out[4]);

#endif
