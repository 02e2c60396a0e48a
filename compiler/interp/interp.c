/* interp.c: the CPU interpreter of tile IR, the reference semantics of blk.
 *
 * interp_run checks the IR once (what the interpreter relies on), then runs
 * every program of the grid, on the calling thread or on a few OS threads,
 * each of which claims programs in increasing order. A program runs its ops
 * one at a time, each over a whole block (interp.h has the representation).
 * This file has the run, control flow and the reports; the ops are in one
 * file a family, named as lowering's (memory.c: loads, stores and atomics,
 * all checked against the registered buffers; elementwise.c, shape.c,
 * gather.c, dot.c, reduce.c, scan.c, sort.c, histogram.c, print_assert.c).
 * docs/interpreter.md is the user's view. */
#include "interp/interp_int.h"

#include <time.h>

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors -------------------------------------------------------------- */

static void put_index(StrBuf *sb, int64_t elem, Type t)
{
	int64_t idx[BLK_MAX_RANK] = {0};
	for (int d = t.rank - 1; d >= 0; d--) {
		int64_t n = t.shape[d] > 0 ? t.shape[d] : 1;
		idx[d] = elem % n;
		elem /= n;
	}
	sb_putc(sb, '[');
	for (int d = 0; d < t.rank; d++)
		sb_printf(sb, "%s%lld", d ? ", " : "", (long long)idx[d]);
	sb_putc(sb, ']');
}

bool interp_fail(Worker *w, const Op *op, int64_t elem, Type t, const char *what, const char *fmt, ...)
{
	if (w->failed)
		return false;
	w->failed = true;
	w->err_loc = op ? op->loc : w->run->f->loc;
	StrBuf *sb = &w->err;
	sb->len = 0;
	sb_printf(sb, "%s in kernel '%s', program (%d, %d, %d)", what, w->run->f->name, w->pid[0], w->pid[1],
	          w->pid[2]);
	if (elem >= 0 && t.rank) {
		sb_puts(sb, ", element ");
		put_index(sb, elem, t);
	} else if (elem > 0) {
		sb_printf(sb, ", lane %lld", (long long)elem); /* inside a combine region */
	}
	if (fmt) {
		sb_puts(sb, ": ");
		va_list ap;
		va_start(ap, fmt);
		sb_vprintf(sb, fmt, ap);
		va_end(ap);
	}
	return false;
}

static bool out_of_memory(Worker *w, const Op *op)
{
	return interp_fail(w, op, -1, (Type){0}, "out of memory", NULL);
}

/* ---- value buffers and scratch -------------------------------------------- */

static bool grow(Elem **p, int64_t *cap, int64_t n)
{
	if (*cap >= n)
		return true;
	int64_t c = *cap ? *cap : 1;
	while (c < n)
		c *= 2;
	Elem *q = realloc(*p, (size_t)c * sizeof *q);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

Elem *interp_def(Worker *w, const Value *v, int64_t n)
{
	Slot *s = slot(w, v);
	if (!grow(&s->own, &s->cap, n)) {
		out_of_memory(w, v->def);
		return NULL;
	}
	s->p = s->own;
	s->n = n;
	return s->p;
}

bool interp_full(Worker *w, const Value *v)
{
	Slot *s = slot(w, v);
	int64_t n = type_numel(v->type);
	if (s->n >= n)
		return true;
	Elem e = s->p[0]; /* s->p may be another value's buffer: write to v's own */
	if (!grow(&s->own, &s->cap, n)) {
		out_of_memory(w, v->def);
		return false;
	}
	for (int64_t i = 0; i < n; i++)
		s->own[i] = e;
	s->p = s->own;
	s->n = n;
	return true;
}

Mark interp_mark(Worker *w)
{
	if (w->n_chunks == 0)
		return (Mark){0, 0};
	return (Mark){w->cur_chunk, w->chunks[w->cur_chunk].used};
}

void interp_release(Worker *w, Mark m)
{
	for (int i = m.chunk + 1; i < w->n_chunks; i++)
		w->chunks[i].used = 0;
	if (w->n_chunks) {
		w->cur_chunk = m.chunk;
		w->chunks[m.chunk].used = m.used;
	}
}

Elem *interp_scratch(Worker *w, int64_t n)
{
	if (n < 1)
		n = 1;
	for (int i = w->n_chunks ? w->cur_chunk : 0; i < w->n_chunks; i++) {
		Chunk *c = &w->chunks[i];
		if (c->cap - c->used >= n) {
			w->cur_chunk = i;
			Elem *p = c->p + c->used;
			c->used += n;
			return p;
		}
	}
	Chunk *cs = realloc(w->chunks, (size_t)(w->n_chunks + 1) * sizeof *cs);
	if (!cs)
		goto oom;
	w->chunks = cs;
	int64_t cap = n > (1 << 16) ? n : (1 << 16);
	if (w->n_chunks && cap < 2 * w->chunks[w->n_chunks - 1].cap)
		cap = 2 * w->chunks[w->n_chunks - 1].cap;
	Elem *p = malloc((size_t)cap * sizeof *p);
	if (!p)
		goto oom;
	w->chunks[w->n_chunks] = (Chunk){p, cap, n};
	w->cur_chunk = w->n_chunks++;
	return p;
oom:
	out_of_memory(w, NULL);
	return NULL;
}

/* ---- control flow ---------------------------------------------------------- */

/* Region arguments args[0..n) take the values src[0..n) at once (a source may
 * be an argument itself: a swap): each goes to the argument's spare buffer,
 * which then becomes its own. */
static bool assign_args(Worker *w, Value *const *args, Value *const *src, int n)
{
	for (int i = 0; i < n; i++) {
		Slot *d = slot(w, args[i]);
		int64_t cnt = type_numel(args[i]->type);
		if (!grow(&d->alt, &d->alt_cap, cnt))
			return out_of_memory(w, NULL);
		copy_elems(d->alt, slot(w, src[i]), cnt);
	}
	for (int i = 0; i < n; i++) {
		Slot *d = slot(w, args[i]);
		Elem *t = d->own;
		int64_t c = d->cap;
		d->own = d->alt;
		d->cap = d->alt_cap;
		d->alt = t;
		d->alt_cap = c;
		d->p = d->own;
		d->n = type_numel(args[i]->type);
	}
	return true;
}

/* The op's results take the values src. */
static bool assign_results(Worker *w, const Op *op, Value *const *src)
{
	for (int i = 0; i < op->n_results; i++) {
		int64_t n = type_numel(op->results[i]->type);
		Elem *d = interp_def(w, op->results[i], n);
		if (!d)
			return false;
		copy_elems(d, slot(w, src[i]), n);
	}
	return true;
}

/* After a region gave no terminator: fine if it returned, else it failed. */
static bool unwound(Worker *w) { return !w->failed; }

static bool exec_if(Worker *w, const Op *op)
{
	bool c = slot(w, op->operands[0])->p[0].u != 0;
	const Op *t = interp_block(w, &op->regions[c ? 0 : 1]);
	if (!t)
		return unwound(w);
	return assign_results(w, op, t->operands);
}

static bool exec_for(Worker *w, const Op *op)
{
	const Region *r = &op->regions[0];
	Type it = op->operands[0]->type;
	bool is_unsigned = scalar_is_unsigned((ScalarKind)it.scalar);
	Elem lb = slot(w, op->operands[0])->p[0], ub = slot(w, op->operands[1])->p[0],
	     st = slot(w, op->operands[2])->p[0];
	__int128 iv = is_unsigned ? (__int128)lb.u : lb.i, end = is_unsigned ? (__int128)ub.u : ub.i,
	         step = is_unsigned ? (__int128)st.u : st.i;
	if (step == 0)
		return interp_fail(w, op, -1, (Type){0}, "for loop with a step of 0", "it would never end");
	int nv = op->n_operands - 3;
	if (!assign_args(w, r->args + 1, op->operands + 3, nv))
		return false;
	while (step > 0 ? iv < end : iv > end) {
		Elem *e = interp_def(w, r->args[0], 1);
		if (!e)
			return false;
		e->i = (int64_t)iv;
		const Op *t = interp_block(w, r);
		if (!t)
			return unwound(w);
		if (!assign_args(w, r->args + 1, t->operands, nv))
			return false;
		iv += step;
	}
	return assign_results(w, op, r->args + 1);
}

static bool exec_while(Worker *w, const Op *op)
{
	const Region *before = &op->regions[0], *after = &op->regions[1];
	if (!assign_args(w, before->args, op->operands, op->n_operands))
		return false;
	for (;;) {
		const Op *t = interp_block(w, before);
		if (!t)
			return unwound(w);
		if (!slot(w, t->operands[0])->p[0].u)
			return assign_results(w, op, t->operands + 1);
		if (!assign_args(w, after->args, t->operands + 1, after->n_args))
			return false;
		t = interp_block(w, after);
		if (!t)
			return unwound(w);
		if (!assign_args(w, before->args, t->operands, before->n_args))
			return false;
	}
}

static bool exec(Worker *w, const Op *op)
{
	if (op_flags(op->code) & OPF_ELEMWISE)
		return interp_elementwise(w, op);
	switch (op->code) {
	case OP_SPLAT: case OP_BROADCAST: case OP_RESHAPE: case OP_EXPAND_DIMS: case OP_HINT: case OP_CONVERT_LAYOUT:
	case OP_IF: case OP_FOR: case OP_WHILE:
		break; /* they take uniform operands as they are */
	default:
		for (int i = 0; i < op->n_operands; i++) {
			/* a load's other, a store's value and an atomic's values may stay
			 * uniform: they are read with stride 0 */
			bool other = op->code == OP_LOAD && (op->attr[0] & MEMF_OTHER) && i >= 2; /* (and TMA offsets) */
			if (other || (op->code == OP_STORE && i == 1) || (op->code == OP_ATOMIC_RMW && i == 1) ||
			    (op->code == OP_ATOMIC_CAS && i > 0) || ((op->code == OP_DESC_STORE || op->code == OP_DESC_ATOMIC || op->code == OP_DESC_SCATTER) &&
			     i == op->n_operands - 1))
				continue;
			if (!interp_full(w, op->operands[i]))
				return false;
		}
	}
	switch (op->code) {
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS: {
		Elem *r = interp_def(w, op->results[0], 1);
		if (!r)
			return false;
		int axis = (int)op->attr[0];
		r->i = op->code == OP_PROGRAM_ID ? w->pid[axis] : w->run->grid[axis];
		return true;
	}
	case OP_LOAD: return interp_load(w, op);
	case OP_STORE: return interp_store(w, op);
	case OP_ATOMIC_RMW:
	case OP_ATOMIC_CAS: return interp_atomic(w, op);
	case OP_DESC_LOAD:
	case OP_DESC_STORE:
	case OP_DESC_ATOMIC:
	case OP_DESC_GATHER:
	case OP_DESC_SCATTER: return interp_desc(w, op);
	case OP_REDUCE: return interp_reduce(w, op);
	case OP_SCAN: return interp_scan(w, op);
	case OP_DOT: return interp_dot(w, op);
	case OP_PHILOX: return interp_philox(w, op);
	case OP_SORT: case OP_TOPK: return interp_sort(w, op);
	case OP_HISTOGRAM: return interp_histogram(w, op);
	case OP_PRINT: return interp_print(w, op);
	case OP_ASSERT: return interp_assert(w, op);
	case OP_BARRIER: return true; /* programs run one at a time: nothing to wait for */
	case OP_SREG: return interp_sreg(w, op);
	case OP_IF: return exec_if(w, op);
	case OP_FOR: return exec_for(w, op);
	case OP_WHILE: return exec_while(w, op);
	default: return interp_shape(w, op);
	}
}

const Op *interp_block(Worker *w, const Region *r)
{
	for (const Op *op = r->first; op; op = op->next) {
		switch (op->code) {
		case OP_YIELD:
		case OP_CONDITION:
			return op;
		case OP_RETURN:
			w->returned = true;
			return NULL;
		default:
			if (!exec(w, op) || w->returned)
				return NULL;
		}
	}
	return NULL;
}

/* ---- the run ------------------------------------------------------------------ */

static void run_program(Worker *w, int64_t prog)
{
	Run *r = w->run;
	w->prog = prog;
	w->pid[0] = (int)(prog % r->grid[0]);
	w->pid[1] = (int)(prog / r->grid[0] % r->grid[1]);
	w->pid[2] = (int)(prog / ((int64_t)r->grid[0] * r->grid[1]));
	w->returned = false;
	for (int i = 0; i < r->f->n_params; i++) {
		Value *v = r->f->params[i].value;
		if (v) {
			Slot *s = slot(w, v);
			s->p = &r->params[i];
			s->n = 1;
		}
	}
	interp_block(w, &r->f->body);
}

/* Claims programs in increasing order until none is left or one failed. */
static void *work(void *arg)
{
	Worker *w = arg;
	Run *r = w->run;
	for (;;) {
		int64_t prog;
		if (r->threaded) {
			pthread_mutex_lock(&r->lock);
			prog = r->next < r->n_programs && r->next < r->stop_at ? r->next++ : -1;
			pthread_mutex_unlock(&r->lock);
		} else {
			prog = r->next < r->n_programs && r->next < r->stop_at ? r->next++ : -1;
		}
		if (prog < 0)
			break;
		run_program(w, prog);
		if (w->failed) {
			/* keep the failure of the lowest program: the one a run on one
			 * thread reports (programs before it run to their end) */
			if (r->threaded)
				pthread_mutex_lock(&r->lock);
			if (prog < r->stop_at) {
				r->stop_at = prog;
				r->err_loc = w->err_loc;
				r->err.len = 0;
				sb_putn(&r->err, w->err.data ? w->err.data : "", w->err.len);
			}
			if (r->threaded)
				pthread_mutex_unlock(&r->lock);
			w->failed = false;
		}
	}
	return NULL;
}

static void worker_free(Worker *w)
{
	if (w->v) {
		for (int i = 0; i < w->run->f->n_values; i++) {
			free(w->v[i].own);
			free(w->v[i].alt);
		}
		free(w->v);
	}
	for (int i = 0; i < w->n_chunks; i++)
		free(w->chunks[i].p);
	free(w->chunks);
	sb_free(&w->err);
}

static int cmp_buf(const void *a, const void *b)
{
	uint64_t x = ((const Buf *)a)->lo, y = ((const Buf *)b)->lo;
	return x < y ? -1 : x > y;
}

/* The registered buffers, sorted; overlaps and bad entries are errors. */
static bool setup_bufs(Run *r, const InterpBuffer *bufs, int n_bufs, Diag *diag)
{
	if (n_bufs < 0 || (n_bufs && !bufs)) {
		diag_plain(diag, DIAG_ERROR, "interp_run: bad buffer list");
		return false;
	}
	r->bufs = calloc((size_t)n_bufs + 1, sizeof *r->bufs);
	if (!r->bufs) {
		diag_plain(diag, DIAG_ERROR, "out of memory");
		return false;
	}
	for (int i = 0; i < n_bufs; i++) {
		const InterpBuffer *b = &bufs[i];
		if (!b->bytes)
			continue;
		uint64_t lo = (uint64_t)(uintptr_t)b->data;
		if (!b->data || lo + b->bytes < lo) {
			diag_plain(diag, DIAG_ERROR, "interp_run: buffer %d ('%s') has no memory", i, b->name ? b->name : "");
			return false;
		}
		r->bufs[r->n_bufs++] = (Buf){lo, lo + b->bytes, b->name, i};
	}
	qsort(r->bufs, (size_t)r->n_bufs, sizeof *r->bufs, cmp_buf);
	for (int i = 1; i < r->n_bufs; i++)
		if (r->bufs[i].lo < r->bufs[i - 1].hi) {
			const Buf *a = &r->bufs[i - 1], *b = &r->bufs[i];
			diag_plain(diag, DIAG_ERROR, "interp_run: buffers %d ('%s') and %d ('%s') overlap", a->index,
			           a->name ? a->name : "", b->index, b->name ? b->name : "");
			return false;
		}
	return true;
}

/* The arguments, one per parameter with a value, as canonical slot values. */
static bool setup_params(Run *r, const InterpArg *args, int n_args, Diag *diag)
{
	const IrFunc *f = r->f;
	int want = 0;
	for (int i = 0; i < f->n_params; i++)
		want += f->params[i].value != NULL;
	if (n_args != want || (n_args && !args)) {
		diag_error(diag, f->loc, "kernel '%s' takes %d runtime argument%s (const parameters take none), %d given",
		           f->name, want, want == 1 ? "" : "s", n_args);
		return false;
	}
	r->params = calloc((size_t)f->n_params + 1, sizeof *r->params);
	if (!r->params) {
		diag_plain(diag, DIAG_ERROR, "out of memory");
		return false;
	}
	for (int i = 0, k = 0; i < f->n_params; i++) {
		Value *v = f->params[i].value;
		if (!v)
			continue;
		const InterpArg *a = &args[k++];
		Type t = v->type;
		bool fl = type_is_float(t);
		if (a->is_float != fl) {
			diag_error(diag, f->loc, "argument %d of kernel '%s' ('%s', %s) needs %s", k, f->name,
			           f->params[i].name ? f->params[i].name : "?", t.ptr ? "a pointer" : scalar_name((ScalarKind)t.scalar),
			           fl ? "a float (is_float set)" : "an integer or an address in .i");
			return false;
		}
		if (t.ptr)
			r->params[i].u = (uint64_t)a->i;
		else if (fl)
			r->params[i].f = fp_round((ScalarKind)t.scalar, a->f);
		else
			r->params[i].i = canon_int((ScalarKind)t.scalar, (uint64_t)a->i);
	}
	return true;
}

/* What the interpreter cannot run, in IR that ir_verify accepts: inline PTX
 * (it does not read PTX), and dots of rank 3 (it multiplies matrices; irgen
 * makes a batched dot one dot a product). False with the error in diag. */
static bool runnable(const IrFunc *f, const Region *r, Diag *diag)
{
	for (const Op *op = r->first; op; op = op->next) {
		if (op->code == OP_INLINE_ASM) {
			diag_error(diag, op->loc,
			           "inline_asm cannot run on the interpreter (it does not read PTX); run this kernel on the GPU, "
			           "or write the operation with builtins");
			return false;
		}
		if (op->code == OP_DOT && op->operands[0]->type.rank != 2) {
			diag_error(diag, op->loc, "the interpreter runs dots of matrices, not of rank %d (in kernel '%s')",
			           op->operands[0]->type.rank, f->name);
			return false;
		}
		for (int i = 0; i < op->n_regions; i++)
			if (!runnable(f, &op->regions[i], diag))
				return false;
	}
	return true;
}

/* The interpreter runs verified IR: ir_verify checks every invariant it
 * relies on (operands defined before their use and in scope, counts, types
 * and shapes, so that no loop reads past a buffer); beyond that, runnable()
 * above, and that each parameter is a scalar (one InterpArg each). */
static bool check_ir(const IrFunc *f, Diag *diag)
{
	if (!ir_verify(f, diag, NULL))
		return false;
	for (int i = 0; i < f->n_params; i++)
		if (f->params[i].value && f->params[i].value->type.rank) {
			diag_error(diag, f->loc, "kernel '%s': parameter '%s' is not a scalar value (one argument each)", f->name,
			           f->params[i].name ? f->params[i].name : "?");
			return false;
		}
	return runnable(f, &f->body, diag);
}

bool interp_run(const IrFunc *f, const InterpArg *args, int n_args, const InterpBuffer *bufs, int n_bufs,
                const InterpOptions *opt, Diag *diag)
{
	static const InterpOptions defaults = {.grid = {1, 1, 1}};
	if (!opt)
		opt = &defaults;
	if (!f) {
		diag_plain(diag, DIAG_ERROR, "interp_run: no kernel");
		return false;
	}
	if (!check_ir(f, diag))
		return false;
	Run r = {.f = f, .ub_checks = !opt->no_ub_checks, .print_out = opt->print_out, .stop_at = INT64_MAX};
	r.n_programs = 1;
	for (int i = 0; i < 3; i++) {
		if (opt->grid[i] < 0) {
			diag_plain(diag, DIAG_ERROR, "interp_run: grid axis %d is %d", i, opt->grid[i]);
			return false;
		}
		r.grid[i] = opt->grid[i];
		r.n_programs *= opt->grid[i];
	}
	Worker *ws = NULL;
	int nt = opt->threads > 1 ? opt->threads : 1;
	if (nt > r.n_programs)
		nt = r.n_programs > 0 ? (int)r.n_programs : 1;
	bool ok = setup_bufs(&r, bufs, n_bufs, diag) && setup_params(&r, args, n_args, diag);
	if (ok && r.n_programs > 0) {
		ws = calloc((size_t)nt, sizeof *ws);
		ok = ws != NULL;
		for (int i = 0; ok && i < nt; i++) {
			ws[i].run = &r;
			ws[i].v = calloc((size_t)f->n_values + 1, sizeof *ws[i].v);
			ok = ws[i].v != NULL;
		}
		if (!ok)
			diag_plain(diag, DIAG_ERROR, "out of memory");
	}
	if (ok && r.n_programs > 0) {
		pthread_mutex_init(&r.lock, NULL);
		r.threaded = nt > 1;
		pthread_t *tids = r.threaded ? calloc((size_t)nt, sizeof *tids) : NULL;
		int started = 0;
		if (tids)
			for (; started < nt; started++)
				if (pthread_create(&tids[started], NULL, work, &ws[started]) != 0)
					break;
		if (!started) { /* one thread, or none could start: run here */
			r.threaded = false;
			work(&ws[0]);
		}
		for (int i = 0; i < started; i++)
			pthread_join(tids[i], NULL);
		free(tids);
		pthread_mutex_destroy(&r.lock);
		if (r.stop_at != INT64_MAX) {
			diag_error(diag, r.err_loc, "%s", r.err.data ? r.err.data : "error");
			ok = false;
		}
	}
	for (int i = 0; ws && i < nt; i++)
		worker_free(&ws[i]);
	free(ws);
	free(r.bufs);
	free(r.params);
	sb_free(&r.err);
	return ok;
}
