/* invariants.c: what ir/ asks of gpu/ (ir.h, IrGpuHooks): the GPU IR's
 * invariants, which ir_verify checks of each op of a function with f->gpu
 * set, and the printing of encodings. ir/ reaches them through the hooks,
 * so that it never includes this stage's header. */
#include "gpu/gpu.h"

#include <stdarg.h>
#include <stdlib.h>

typedef struct GpuCheck {
	const IrFunc *f;
	StrBuf *why;
	bool failed;
} GpuCheck;

/* The first violation only (later ones tend to be its echoes). */
static void gfail(GpuCheck *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gfail(GpuCheck *g, const char *fmt, ...)
{
	if (g->failed)
		return;
	g->failed = true;
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(g->why, fmt, ap);
	va_end(ap);
}


/* Every block has an encoding that can lay it out; element-wise
 * ops keep their operands' encoding; loop-carried and yielded values keep
 * theirs across the region boundary. */
static bool enc_ok(GpuCheck *g, const Value *x, const char *what)
{
	Lin l;
	if (x->type.rank == 0)
		return true;
	if (!x->enc) {
		gfail(g, "%s %%%d has no encoding", what, x->id);
		return false;
	}
	if (!enc_lin(x->enc, x->type, g->f->num_warps, &l)) {
		StrBuf sb = {0};
		enc_print(x->enc, &sb);
		gfail(g, "%s %%%d: %s cannot lay out %s", what, x->id, sb.data ? sb.data : "?", type_cstr(x->type));
		sb_free(&sb);
		return false;
	}
	return true;
}

static void same_enc(GpuCheck *g, const Value *a, const Value *b, const char *what)
{
	if (!g->failed && a->type.rank && b->type.rank && !enc_equiv(a->enc, b->enc, a->type, g->f->num_warps))
		gfail(g, "%s: %%%d and %%%d differ in encoding", what, a->id, b->id);
}

static void check_encodings(GpuCheck *g, const Op *op)
{
	if (op->code == OP_DESC_LOAD || op->code == OP_DESC_STORE || op->code == OP_DESC_ATOMIC ||
	    op->code == OP_DESC_GATHER || op->code == OP_DESC_SCATTER) {
		gfail(g, "a tensor descriptor op in GPU IR (expand-descriptors runs before layouts)");
		return;
	}
	for (int i = 0; i < op->n_results; i++)
		if (!enc_ok(g, op->results[i], "result"))
			return;
	for (int i = 0; i < op->n_regions; i++)
		for (int j = 0; j < op->regions[i].n_args; j++)
			if (!enc_ok(g, op->regions[i].args[j], "region argument"))
				return;
	if (op_flags(op->code) & OPF_ELEMWISE || op->code == OP_HINT)
		for (int i = 0; i < op->n_operands; i++)
			same_enc(g, op->operands[i], op->results[0], "operand and result");
	switch (op->code) {
	case OP_FOR: {
		const Region *b = &op->regions[0];
		for (int i = 0; i < op->n_results; i++) {
			same_enc(g, op->operands[3 + i], b->args[1 + i], "initial value and loop argument");
			same_enc(g, b->last->operands[i], b->args[1 + i], "yielded value and loop argument");
			same_enc(g, op->results[i], b->args[1 + i], "result and loop argument");
		}
		break;
	}
	case OP_IF:
		for (int i = 0; i < op->n_results; i++)
			for (int r = 0; r < 2; r++)
				same_enc(g, op->regions[r].last->operands[i], op->results[i], "yielded value and result");
		break;
	case OP_WHILE: {
		const Region *r0 = &op->regions[0], *r1 = &op->regions[1];
		for (int i = 0; i < r0->n_args; i++) {
			same_enc(g, op->operands[i], r0->args[i], "initial value and loop argument");
			same_enc(g, r1->last->operands[i], r0->args[i], "yielded value and loop argument");
		}
		for (int i = 0; i < r1->n_args; i++) {
			same_enc(g, r0->last->operands[1 + i], r1->args[i], "forwarded value and argument");
			same_enc(g, op->results[i], r1->args[i], "result and argument");
		}
		break;
	}
	case OP_DOT: {
		/* mma.sync (version 2): A and B as its dot operands, k_width
		 * elements a 32-bit register (4 / their bytes), acc as the result */
		const Encoding *c = op->results[0]->enc;
		if (!c || c->kind != ENC_MMA || c->version != 2 || op->n_operands != 3)
			break;
		for (int i = 0; i < 2; i++) {
			const Value *x = op->operands[i];
			Encoding want = {.kind = ENC_DOT_OPERAND, .rank = 2, .op_idx = i, .parent = c,
			                 .k_width = 4 / type_bytes(type_elem(x->type))};
			if (!g->failed && !enc_equiv(x->enc, &want, x->type, g->f->num_warps))
				gfail(g, "operand %d (%%%d) is not laid out as the mma's dot_operand of k_width %d", i, x->id,
				     want.k_width);
		}
		same_enc(g, op->operands[2], op->results[0], "accumulator and result");
		break;
	}
	case OP_CONVERT_LAYOUT:
		if (op->n_operands != 1 || op->n_results != 1 || !type_eq(op->operands[0]->type, op->results[0]->type))
			gfail(g, "converts one block to the same type");
		break;
	case OP_LOAD:
	case OP_STORE:
	case OP_ATOMIC_RMW:
	case OP_ATOMIC_CAS:
		/* each thread reaches the elements it holds: pointers, masks,
		 * values and results in one encoding */
		for (int i = 1; i < op->n_operands; i++)
			if (!(i == 1 && ((op->code == OP_STORE && (op->attr[0] & MEMF_TMA)) ||
			                 (op->code == OP_ATOMIC_RMW && (op->attr[3] & MEMF_TMA))))) /* its value: as it lies */
				same_enc(g, op->operands[i], op->operands[0], "memory operand and pointers");
		for (int i = 0; i < op->n_results; i++)
			same_enc(g, op->results[i], op->operands[0], "result and pointers");
		break;
	default:
		break;
	}
}


static bool check_op(const IrFunc *f, const Op *op, StrBuf *why)
{
	GpuCheck g = {.f = f, .why = why};
	check_encodings(&g, op);
	return !g.failed;
}

/* ---- printing ---------------------------------------------------------------- */

/* Marks the encodings that values, scratches and parents use. */
static void mark_enc(const Encoding *e, bool *used)
{
	for (; e && !used[e->id]; e = e->parent)
		used[e->id] = true;
}

static void mark_region(const Region *r, bool *used)
{
	for (int i = 0; i < r->n_args; i++)
		mark_enc(r->args[i]->enc, used);
	for (const Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_results; i++)
			mark_enc(op->results[i]->enc, used);
		mark_enc(op->scratch, used);
		for (int i = 0; i < op->n_regions; i++)
			mark_region(&op->regions[i], used);
	}
}

/* GPU IR: "#blocked0 = blocked<...>" for each encoding in use, by number. */
static void print_encodings(const IrFunc *f, StrBuf *out)
{
	if (!f->n_encs)
		return;
	bool *used = calloc((size_t)f->n_encs, sizeof *used);
	if (!used)
		return;
	mark_region(&f->body, used);
	for (int i = 0; i < f->n_encs; i++) {
		if (!used[i])
			continue;
		enc_ref(f->encs[i], out);
		sb_puts(out, " = ");
		enc_print(f->encs[i], out);
		sb_putc(out, '\n');
	}
	free(used);
}

static const IrGpuHooks hooks = {.enc_ref = enc_ref, .print_encodings = print_encodings, .check_op = check_op};

void gpu_install_ir_hooks(void)
{
	/* enc_intern calls this for every encoding: store only when not yet there */
	if (ir_gpu_hooks() != &hooks)
		ir_set_gpu_hooks(&hooks);
}
