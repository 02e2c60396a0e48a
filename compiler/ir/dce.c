/* dce.c: dead code elimination (docs/ir.md, "Passes"). */
#include "ir/ir.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- dce ------------------------------------------------------------------
 * Pure ops none of whose results is used go, innermost and last first, so
 * that one sweep frees what the next op up used; repeated to a fixed point
 * (a region's ops may free values of the enclosing region). */

static bool dce_region(Region *r)
{
	bool changed = false;
	for (Op *op = r->last, *prev; op; op = prev) {
		prev = op->prev;
		for (int i = 0; i < op->n_regions; i++)
			changed |= dce_region(&op->regions[i]);
		if (!(op_flags(op->code) & OPF_PURE))
			continue;
		bool used = false;
		for (int i = 0; i < op->n_results; i++)
			used |= op->results[i]->uses > 0;
		if (!used) {
			ir_remove(op);
			changed = true;
		}
	}
	return changed;
}

bool ir_dce(IrFunc *f, Diag *diag)
{
	(void)diag;
	while (dce_region(&f->body))
		;
	return true;
}
