/* resources.c: what a kernel asks of a GPU thread, checked before and read
 * back after code generation.
 *   - gpu_check_registers: a block value whose elements, spread over the
 *     program's threads, need far more registers a thread than there are
 *     is an error before LLVM runs: ptxas would spend minutes on it (one
 *     program transposing a 1024 x 1024 f32 tile: 8,192 registers a thread
 *     on 4 warps, 40 KB of spills, 16 s of ptxas) and the kernel would crawl.
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

/* The value of r (and the regions in it) that needs the most registers. */
static void largest(const IrFunc *f, const Region *r, const Op **at, const Value **which, long *most)
{
	for (const Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_regions; i++)
			largest(f, &op->regions[i], at, which, most);
		for (int i = 0; i < op->n_results; i++) {
			long regs = counts(op, op->results[i]) ? value_regs(f, op->results[i]) : 0;
			/* among equals the largest block: the one a reader changes */
			if (regs > *most || (regs && regs == *most && type_numel(op->results[i]->type) > type_numel((*which)->type)))
				*most = regs, *at = op, *which = op->results[i];
		}
	}
}

bool gpu_check_registers(const IrFunc *f, Diag *diag)
{
	const Op *op = NULL;
	const Value *v = NULL;
	long regs = 0;
	largest(f, &f->body, &op, &v, &regs);
	if (regs <= GPU_MAX_BLOCK_REGS)
		return true;
	StrBuf t = {0};
	type_print(v->type, &t);
	diag_report(diag, DIAG_ERROR, op->loc,
	            "kernel '%s': this block (%s, from %s) needs %ld registers a thread on %d warps (%lld elements "
	            "over %d threads); a thread has 255, and past %d the compiler would spend minutes spilling them to "
	            "memory: use a smaller block or more warps (num_warps)",
	            f->name, t.data ? t.data : "?", op_name(op->code), regs, f->num_warps, (long long)type_numel(v->type),
	            32 * f->num_warps, GPU_MAX_BLOCK_REGS);
	sb_free(&t);
	return false;
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
