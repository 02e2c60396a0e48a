/* cse.c: common subexpression elimination over pure ops, scoped by region
 * (docs/ir.md, "Passes"). */
#include "ir/ir.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- cse ------------------------------------------------------------------
 * A scoped hash table of the pure ops seen so far: entering a region opens
 * a scope, leaving it drops what the region added, so an op is replaced
 * only by an equal op that dominates it (earlier in its region or in an
 * enclosing one). Ops with regions are left alone. */

typedef struct CseEntry {
	Op *op;
	uint64_t hash;
	int next;      /* the entry below in the same bucket, or -1 */
} CseEntry;

typedef struct Cse {
	IrFunc *f;
	IrForward fwd;
	CseEntry *entries;
	int n, cap;
	int *buckets;  /* entry index or -1 */
	int n_buckets; /* a power of two */
	bool oom;
} Cse;

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdu;
}

static uint64_t op_hash(const Op *op)
{
	uint64_t h = mix(0, (uint64_t)op->code);
	for (int i = 0; i < op->n_operands; i++)
		h = mix(h, (uint64_t)(uintptr_t)op->operands[i]);
	for (int i = 0; i < BLK_MAX_RANK; i++)
		h = mix(h, (uint64_t)op->attr[i]);
	h = mix(h, (uint64_t)op->ival);
	uint64_t bits;
	memcpy(&bits, &op->fval, sizeof bits);
	h = mix(h, bits);
	for (int i = 0; i < op->n_results; i++) {
		Type t = op->results[i]->type;
		h = mix(h, (uint64_t)t.scalar | (uint64_t)t.ptr << 8 | (uint64_t)t.rank << 16);
		for (int d = 0; d < t.rank; d++)
			h = mix(h, (uint64_t)t.shape[d]);
	}
	return h;
}

static bool op_equal(const Op *a, const Op *b)
{
	if (a->code != b->code || a->n_operands != b->n_operands || a->n_results != b->n_results)
		return false;
	for (int i = 0; i < a->n_operands; i++)
		if (a->operands[i] != b->operands[i])
			return false;
	for (int i = 0; i < a->n_results; i++)
		if (!type_eq(a->results[i]->type, b->results[i]->type) || a->results[i]->enc != b->results[i]->enc)
			return false;
	/* floats by their bits: NaN equals NaN, -0 is not 0 */
	if (memcmp(a->attr, b->attr, sizeof a->attr) != 0 || a->ival != b->ival ||
	    memcmp(&a->fval, &b->fval, sizeof a->fval) != 0)
		return false;
	if ((a->str == NULL) != (b->str == NULL) || (a->str && strcmp(a->str, b->str) != 0))
		return false;
	return true;
}

static bool cse_grow(Cse *c)
{
	if (c->n < c->cap)
		return true;
	int cap = c->cap ? 2 * c->cap : 256;
	CseEntry *e = realloc(c->entries, (size_t)cap * sizeof *e);
	if (!e)
		return false;
	c->entries = e;
	c->cap = cap;
	if (c->n_buckets < 2 * cap) { /* load at most 1/2: rebuild the buckets */
		int nb = 2 * cap;
		int *b = malloc((size_t)nb * sizeof *b);
		if (!b)
			return false;
		for (int i = 0; i < nb; i++)
			b[i] = -1;
		free(c->buckets);
		c->buckets = b;
		c->n_buckets = nb;
		for (int i = 0; i < c->n; i++) {
			int k = (int)(c->entries[i].hash & (uint64_t)(nb - 1));
			c->entries[i].next = b[k];
			b[k] = i;
		}
	}
	return true;
}

/* Drops the entries from index `mark` on (they belong to a closed scope). */
static void cse_pop(Cse *c, int mark)
{
	while (c->n > mark) {
		CseEntry *e = &c->entries[--c->n];
		c->buckets[e->hash & (uint64_t)(c->n_buckets - 1)] = e->next;
	}
}

static void cse_region(Cse *c, Region *r)
{
	int mark = c->n;
	for (Op *op = r->first, *next; op && !c->oom; op = next) {
		next = op->next;
		ir_forward_operands(&c->fwd, op);
		if (op->n_regions) {
			for (int i = 0; i < op->n_regions; i++)
				cse_region(c, &op->regions[i]);
			continue;
		}
		if (!(op_flags(op->code) & OPF_PURE) || op->n_results == 0)
			continue;
		uint64_t h = op_hash(op);
		Op *same = NULL;
		if (c->n_buckets)
			for (int i = c->buckets[h & (uint64_t)(c->n_buckets - 1)]; i >= 0; i = c->entries[i].next)
				if (c->entries[i].hash == h && op_equal(c->entries[i].op, op)) {
					same = c->entries[i].op;
					break;
				}
		if (same) {
			for (int i = 0; i < op->n_results; i++)
				ir_forward_set(&c->fwd, op->results[i], same->results[i]);
			ir_remove(op);
			c->oom |= c->fwd.oom;
			continue;
		}
		if (!cse_grow(c)) {
			c->oom = true;
			break;
		}
		int k = (int)(h & (uint64_t)(c->n_buckets - 1));
		c->entries[c->n] = (CseEntry){op, h, c->buckets[k]};
		c->buckets[k] = c->n++;
	}
	cse_pop(c, mark);
}

bool ir_cse(IrFunc *f, Diag *diag)
{
	Cse c = {.f = f};
	cse_region(&c, &f->body);
	ir_forward_free(&c.fwd);
	free(c.entries);
	free(c.buckets);
	if (c.oom) {
		diag_plain(diag, DIAG_ERROR, "out of memory in cse");
		return false;
	}
	return true;
}
