/* passes.c: the pass manager, cse and dce, and the editing helpers the
 * passes share (docs/ir.md, "Passes"). canonicalize is in canonicalize.c. */
#include "gpu/gpu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- editing ------------------------------------------------------------- */

void ir_link_before(Op *op, Op *before)
{
	Region *r = before->parent;
	op->parent = r;
	op->next = before;
	op->prev = before->prev;
	if (before->prev)
		before->prev->next = op;
	else
		r->first = op;
	before->prev = op;
}

Op *ir_insert_before(IrFunc *f, Op *before, OpCode code, Value **operands, int n_operands,
                     const Type *result_types, int n_results)
{
	Op *op = ir_append(f, before->parent, code, before->loc, operands, n_operands, result_types, n_results);
	if (!op)
		return NULL;
	ir_unlink(op);
	ir_link_before(op, before);
	return op;
}

void ir_forward_set(IrForward *m, Value *from, Value *to)
{
	if (from->id >= m->cap) {
		int cap = m->cap ? m->cap : 256;
		while (cap <= from->id)
			cap *= 2;
		Value **t = realloc(m->to, (size_t)cap * sizeof *t);
		if (!t) {
			m->oom = true;
			return;
		}
		memset(t + m->cap, 0, (size_t)(cap - m->cap) * sizeof *t);
		m->to = t;
		m->cap = cap;
	}
	m->to[from->id] = to;
}

Value *ir_forward_get(const IrForward *m, Value *v)
{
	while (v && v->id < m->cap && m->to[v->id])
		v = m->to[v->id];
	return v;
}

void ir_forward_operands(IrForward *m, Op *op)
{
	if (!m->cap)
		return;
	for (int i = 0; i < op->n_operands; i++) {
		Value *v = op->operands[i], *w = ir_forward_get(m, v);
		if (w != v) {
			v->uses--;
			w->uses++;
			op->operands[i] = w;
		}
	}
}

void ir_forward_region(IrForward *m, Region *r)
{
	for (Op *op = r->first; op; op = op->next) {
		ir_forward_operands(m, op);
		for (int i = 0; i < op->n_regions; i++)
			ir_forward_region(m, &op->regions[i]);
	}
}

void ir_forward_clear(IrForward *m)
{
	if (m->cap)
		memset(m->to, 0, (size_t)m->cap * sizeof *m->to);
}

void ir_forward_free(IrForward *m)
{
	free(m->to);
	*m = (IrForward){0};
}

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

Op *ir_clone_before(IrFunc *f, const Op *op, Op *before, Value **operands)
{
	Type rt[8];
	if (op->n_results > 8 || op->n_regions)
		return NULL;
	for (int i = 0; i < op->n_results; i++)
		rt[i] = op->results[i]->type;
	Op *c = ir_insert_before(f, before, op->code, operands, op->n_operands, rt, op->n_results);
	if (!c)
		return NULL;
	memcpy(c->attr, op->attr, sizeof c->attr);
	c->ival = op->ival;
	c->fval = op->fval;
	c->str = op->str;
	c->loc = op->loc;
	return c;
}

bool ir_param_is_one(IrFunc *f, IrParam *p)
{
	p->equals_one = true;
	if (!p->value || !p->value->uses || !f->body.first)
		return true;
	Type t = p->value->type;
	Op *c = ir_insert_before(f, f->body.first, OP_CONST, NULL, 0, &t, 1);
	if (!c)
		return false;
	c->ival = 1;
	ir_replace_uses(f, p->value, c->results[0]);
	return true;
}

bool ir_writes_memory(const Op *op)
{
	if (op->code == OP_STORE || op->code == OP_ATOMIC_RMW || op->code == OP_ATOMIC_CAS)
		return true;
	for (int i = 0; i < op->n_regions; i++)
		for (const Op *o = op->regions[i].first; o; o = o->next)
			if (ir_writes_memory(o))
				return true;
	return false;
}

/* ---- the pass manager ---------------------------------------------------- */

static const IrPass passes[] = {
	{"canonicalize", "fold constants, simplify identities, drop empty loops", ir_canonicalize},
	{"cse", "merge equal pure ops", ir_cse},
	{"dce", "remove pure ops whose results are unused", ir_dce},
	{"pipeline", "issue the loads of a loop that writes no memory one iteration ahead (num_stages >= 2)",
	 ir_pipeline},
	{"pipeline-dots", "the same for loads that feed dots, issued at the top of the body", ir_pipeline_dots},
	{"layouts", "GPU IR: give every block an encoding (coalesced, slice, mma), insert conversions", ir_layouts},
	{"remove-conversions", "GPU IR: recompute cheap values where they are wanted, drop needless conversions",
	 ir_remove_conversions},
};
enum { N_PASSES = sizeof passes / sizeof *passes };

const IrPass *ir_pass_table(int *count)
{
	*count = N_PASSES;
	return passes;
}

const IrPass *ir_pass_find(const char *name)
{
	for (int i = 0; i < N_PASSES; i++)
		if (strcmp(passes[i].name, name) == 0)
			return &passes[i];
	return NULL;
}

static void known_passes(StrBuf *sb)
{
	for (int i = 0; i < N_PASSES; i++)
		sb_printf(sb, "%s%s", i ? ", " : "", passes[i].name);
}

static void unknown_pass(Diag *diag, const char *what, const char *name, size_t len)
{
	StrBuf known = {0};
	known_passes(&known);
	diag_plain(diag, DIAG_ERROR, "unknown %s '%.*s' (known passes: %s)", what, (int)len, name,
	           known.data ? known.data : "");
	sb_free(&known);
}

enum { MAX_PIPELINE = 64 };

/* Splits "a, b,c" into pass pointers; false (reported) on an unknown name. */
static int parse_pipeline(const char *p, const IrPass **out, Diag *diag)
{
	int n = 0;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		const char *s = p;
		while (*p && *p != ',' && *p != ' ')
			p++;
		size_t len = (size_t)(p - s);
		const IrPass *pass = NULL;
		for (int i = 0; i < N_PASSES && !pass; i++)
			if (strlen(passes[i].name) == len && memcmp(passes[i].name, s, len) == 0)
				pass = &passes[i];
		if (!pass) {
			unknown_pass(diag, "pass", s, len);
			return -1;
		}
		if (n == MAX_PIPELINE) {
			diag_plain(diag, DIAG_ERROR, "pipeline has more than %d passes", MAX_PIPELINE);
			return -1;
		}
		out[n++] = pass;
	}
	return n;
}

bool ir_run_passes(IrFunc *f, const char *pipeline, const char *dump_after, StrBuf *dump, Diag *diag)
{
	const IrPass *list[MAX_PIPELINE];
	int n = parse_pipeline(pipeline ? pipeline : IR_DEFAULT_PIPELINE, list, diag);
	if (n < 0)
		return false;
	bool dump_all = dump_after && strcmp(dump_after, "all") == 0;
	if (dump_after && !dump_all) {
		if (!ir_pass_find(dump_after)) {
			unknown_pass(diag, "pass for --dump-after", dump_after, strlen(dump_after));
			return false;
		}
		bool runs = false;
		for (int i = 0; i < n; i++)
			runs |= strcmp(list[i]->name, dump_after) == 0;
		if (!runs) {
			StrBuf sb = {0};
			for (int i = 0; i < n; i++)
				sb_printf(&sb, "%s%s", i ? "," : "", list[i]->name);
			diag_plain(diag, DIAG_ERROR, "--dump-after=%s: the pipeline does not run %s (it runs: %s)", dump_after,
			           dump_after, sb.data ? sb.data : "nothing");
			sb_free(&sb);
			return false;
		}
	}
	if (!ir_verify(f, diag, NULL))
		return false;
	for (int i = 0; i < n; i++) {
		if (!list[i]->run(f, diag))
			return false;
		ir_renumber(f);
		/* dumped before it is verified: a broken IR is what one wants to see */
		if (dump && (dump_all || (dump_after && strcmp(dump_after, list[i]->name) == 0))) {
			sb_printf(dump, "// IR after %s\n", list[i]->name);
			ir_print(f, dump);
		}
		if (!ir_verify(f, diag, list[i]->name))
			return false;
	}
	return true;
}
