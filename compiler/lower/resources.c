/* resources.c: what a kernel asks of a GPU thread, checked before and read
 * back after code generation.
 *   - gpu_check_registers: a block value whose elements, spread over the
 *     program's threads, need more registers a thread than there are lives
 *     in local memory (ptxas spills it), with a warning naming it; one so
 *     large that ptxas would spend minutes on it is an error before LLVM
 *     runs (one program transposing a 1024 x 1024 f32 tile: 8,192 registers
 *     a thread on 4 warps, two minutes of ptxas; on 8 warps it compiles);
 *     a sort or topk whose network runs as loops over local memory (too
 *     large to unroll: lower/sort.c), a warning saying what that costs.
 *   - gpu_ptxas_spills: the bytes of spill stores and loads in the log of
 *     ptxas -v (blkc) or the driver's JIT (CU_JIT_LOG_VERBOSE), for the
 *     warning that names the kernel. */
#include "lower/lower_int.h"

#include <stdlib.h>
#include <string.h>

/* 32-bit registers a thread of the program needs to hold v. */
static long value_regs(const IrFunc *f, const Value *v)
{
	Lin l;
	if (!v->enc || !enc_lin(v->enc, v->type, f->num_warps, &l))
		return 0;
	int eb = v->type.ptr ? 8 : type_bytes(type_elem(v->type));
	long elems = 1L << l.n_reg;
	return (elems * (eb < 1 ? 1 : eb) + 3) / 4;
}

/* Values that need no registers of their own: constants, aranges, splats
 * and the shape ops around them are recomputed or folded where used, and
 * pointer blocks are their base plus offsets. The value to blame is data. */
static bool counts(const Op *op, const Value *v)
{
	switch (op->code) {
	case OP_CONST:
	case OP_ARANGE:
	case OP_SPLAT:
	case OP_BROADCAST:
	case OP_EXPAND_DIMS:
	case OP_RESHAPE:
		return false;
	default:
		return v->type.rank > 0 && !v->type.ptr;
	}
}

/* A block value and the registers a thread it needs. */
typedef struct Big {
	const Op *op;
	const Value *v;
	long regs;
} Big;

static void keep(Big *b, const Op *op, const Value *v, long regs)
{
	/* among equals the largest block: the one a reader changes */
	if (regs > b->regs || (regs && regs == b->regs && type_numel(v->type) > type_numel(b->v->type)))
		*b = (Big){op, v, regs};
}

/* The largest value of r (and the regions in it), in registers a thread. */
static void largest(const IrFunc *f, const Region *r, Big *all)
{
	for (const Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_regions; i++)
			largest(f, &op->regions[i], all);
		for (int i = 0; i < op->n_results; i++)
			keep(all, op, op->results[i], counts(op, op->results[i]) ? value_regs(f, op->results[i]) : 0);
	}
}

/* A warning for each sort or topk of r whose network runs as loops over
 * local memory (lower/sort.c): what it costs. */
static void warn_looped_sorts(const IrFunc *f, const Region *r, Diag *diag)
{
	for (const Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_regions; i++)
			warn_looped_sorts(f, &op->regions[i], diag);
		long smem = 0, bytes = op->code == OP_SORT || op->code == OP_TOPK ? gpu_sort_loop_bytes(f, op, &smem) : 0;
		if (!bytes)
			continue;
		StrBuf t = {0};
		type_print(op->operands[0]->type, &t);
		long kib = (bytes + 1023) / 1024;
		char where[160];
		if (smem)
			snprintf(where, sizeof where, "in shared memory (%ld KiB a program; %ld KiB a thread of local memory "
			         "besides)", (smem + 1023) / 1024, kib);
		else
			snprintf(where, sizeof where, "in local memory (%ld KiB a thread, %ld KiB a program) and shared memory",
			         kib, kib * 32 * f->num_warps);
		diag_report(diag, DIAG_WARNING, op->loc, "kernel '%s': this %s of a block (%s) on %d warp%s is a network of "
		            "%ld word comparisons a thread, which unrolled would take the compiler minutes: it runs as "
		            "loops over the block %s: correct but slower than in registers; a smaller block or more warps "
		            "(num_warps) keeps it in registers",
		            f->name, op_name(op->code), t.data ? t.data : "?", f->num_warps, f->num_warps == 1 ? "" : "s",
		            gpu_sort_net_ops(f, op), where);
		sb_free(&t);
	}
}

static void block_report(const IrFunc *f, Diag *diag, DiagLevel level, const Op *op, const Value *v, long regs,
                         const char *why)
{
	StrBuf t = {0};
	type_print(v->type, &t);
	diag_report(diag, level, op->loc, "kernel '%s': this block (%s, from %s) needs %ld registers a thread on %d warp%s "
	            "(%lld elements over %d threads); a thread has 255: %s",
	            f->name, t.data ? t.data : "?", op_name(op->code), regs, f->num_warps, f->num_warps == 1 ? "" : "s",
	            (long long)type_numel(v->type),
	            32 * f->num_warps, why);
	sb_free(&t);
}

bool gpu_check_registers(const IrFunc *f, Diag *diag)
{
	Big all = {0};
	largest(f, &f->body, &all);
	char why[320];
	if (all.regs > GPU_MAX_BLOCK_REGS) {
		snprintf(why, sizeof why, "past %d the compiler would spend minutes spilling it to memory: use a smaller "
		         "block or more warps (num_warps)", GPU_MAX_BLOCK_REGS);
		block_report(f, diag, DIAG_ERROR, all.op, all.v, all.regs, why);
		return false;
	}
	if (all.regs > GPU_SPILL_BLOCK_REGS) {
		long kib = (all.regs * 4 + 1023) / 1024;
		snprintf(why, sizeof why, "it lives in local memory (about %ld KiB a thread, %ld KiB a program, spilled by "
		         "ptxas): correct but slower, and slower to compile; a smaller block or more warps (num_warps) keeps "
		         "it in registers", kib, kib * 32 * f->num_warps);
		block_report(f, diag, DIAG_WARNING, all.op, all.v, all.regs, why);
	}
	warn_looped_sorts(f, &f->body, diag);
	return true;
}

/* "N bytes spill stores, M bytes spill loads" lines of a ptxas log: the
 * largest of each (one kernel a log, or its worst function). */
bool gpu_ptxas_spills(const char *log, long *stores, long *loads)
{
	*stores = *loads = 0;
	bool found = false;
	for (const char *p = log; p && (p = strstr(p, "bytes spill stores")) != NULL; p++) {
		/* the number before it, then ", M bytes spill loads" */
		const char *q = p;
		while (q > log && q[-1] == ' ')
			q--;
		while (q > log && q[-1] >= '0' && q[-1] <= '9')
			q--;
		long s = strtol(q, NULL, 10), l = 0;
		const char *c = strchr(p, ',');
		if (c && c - p < 24)
			l = strtol(c + 1, NULL, 10);
		if (s > *stores)
			*stores = s;
		if (l > *loads)
			*loads = l;
		found = true;
	}
	return found;
}
