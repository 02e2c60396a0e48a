/* print.c: the printed form of tile IR (docs/ir.md, "Printed form").
 *
 * One op a line; regions indented two spaces a level. The format is pinned
 * by golden tests: change it only on purpose, and the docs with it.
 * The printer never fails on broken IR (the verifier reports that): missing
 * pieces print as "<null>" and out-of-range enums as "?". */
#include "ir/ir.h"

#include <stdlib.h>

#include <inttypes.h>
#include <math.h>
#include <string.h>

static const char *pick(const char *const *names, int n, int64_t i)
{
	return i >= 0 && i < n && names[i] ? names[i] : "?";
}

#define NAMES(fn, ...) \
	const char *fn(int64_t i) \
	{ \
		static const char *const names[] = {__VA_ARGS__}; \
		return pick(names, (int)(sizeof names / sizeof *names), i); \
	}

NAMES(cmp_pred_name, "eq", "ne", "lt", "le", "gt", "ge")
NAMES(cache_mod_name, "default", "ca", "cg", "cs", "cv", "wb", "wt")
NAMES(eviction_name, "normal", "first", "last")
NAMES(atomic_op_name, "add", "max", "min", "and", "or", "xor", "xchg")
NAMES(mem_sem_name, "acq_rel", "acquire", "release", "relaxed")
NAMES(mem_scope_name, "gpu", "cta", "sys")
NAMES(dot_precision_name, "tf32", "tf32x3", "ieee")

const char *math_fn_name(int64_t i)
{
	static const char *const names[MATH_COUNT] = {
#define MATH_NAME(name, spelling) [MATH_##name] = spelling,
		BLK_MATH_FNS(MATH_NAME)
#undef MATH_NAME
	};
	return pick(names, MATH_COUNT, i);
}

int64_t ir_int_normalize(ScalarKind k, uint64_t v)
{
	int w = scalar_bits(k);
	if (k == SK_I1)
		return (int64_t)(v & 1);
	if (w <= 0 || w >= 64)
		return (int64_t)v;
	uint64_t m = (UINT64_C(1) << w) - 1;
	v &= m;
	if (scalar_is_signed(k) && (v >> (w - 1)) & 1)
		v |= ~m;
	return (int64_t)v;
}

/* ---- pieces -------------------------------------------------------------- */

static void put_value(StrBuf *out, const Value *v)
{
	if (v)
		sb_printf(out, "%%%d", v->id);
	else
		sb_puts(out, "%<null>");
}

static void put_values(StrBuf *out, Value *const *vs, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			sb_puts(out, ", ");
		put_value(out, vs ? vs[i] : NULL);
	}
}

/* A float such that reading it back gives the same value of its type:
 * 17 digits for f64, 9 for the rest (every f16, bf16 and fp8 value is an
 * f32 value). Integral values keep a ".0" so that they read as floats. */
static void put_float(StrBuf *out, double x, ScalarKind k)
{
	if (isnan(x)) {
		sb_puts(out, "nan");
		return;
	}
	if (isinf(x)) {
		sb_puts(out, x < 0 ? "-inf" : "inf");
		return;
	}
	char buf[40];
	snprintf(buf, sizeof buf, k == SK_F64 ? "%.17g" : "%.9g", x);
	sb_puts(out, buf);
	if (!strpbrk(buf, ".e"))
		sb_puts(out, ".0");
}

static void put_int(StrBuf *out, int64_t v, ScalarKind k)
{
	if (k == SK_I1)
		sb_puts(out, v == 0 ? "false" : v == 1 ? "true" : "?");
	else if (scalar_is_unsigned(k))
		sb_printf(out, "%" PRIu64, (uint64_t)v);
	else
		sb_printf(out, "%" PRId64, v);
}

/* A constant of type t, from an op's ival and fval (or a const parameter's). */
static void put_const(StrBuf *out, Type t, int64_t ival, double fval)
{
	if (scalar_is_float((ScalarKind)t.scalar) && !t.ptr)
		put_float(out, fval, (ScalarKind)t.scalar);
	else
		put_int(out, ival, (ScalarKind)t.scalar);
}

static void put_string(StrBuf *out, const char *s)
{
	sb_putc(out, '"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			sb_printf(out, "\\%c", c);
		else if (c == '\n')
			sb_puts(out, "\\n");
		else if (c == '\t')
			sb_puts(out, "\\t");
		else if (c < 0x20 || c == 0x7F)
			sb_printf(out, "\\x%02x", c);
		else
			sb_putc(out, (char)c);
	}
	sb_putc(out, '"');
}

/* Attributes in braces, " {a, b = c}"; nothing when there are none. */
typedef struct Attrs {
	StrBuf *out;
	int n;
} Attrs;

static void attr(Attrs *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void attr(Attrs *a, const char *fmt, ...)
{
	sb_puts(a->out, a->n++ ? ", " : " {");
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(a->out, fmt, ap);
	va_end(ap);
}

static void attrs_end(Attrs *a)
{
	if (a->n)
		sb_putc(a->out, '}');
}

static void indent_to(StrBuf *out, int indent)
{
	for (int i = 0; i < indent; i++)
		sb_puts(out, "  ");
}

/* "#blocked3" (gpu/ names encodings; they exist only once it installed its hooks) */
static void put_enc_ref(StrBuf *out, const Encoding *e)
{
	const IrGpuHooks *h = ir_gpu_hooks();
	if (h)
		h->enc_ref(e, out);
	else
		sb_puts(out, "#?");
}

static void put_types(StrBuf *out, Value *const *vs, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			sb_puts(out, ", ");
		if (vs && vs[i]) {
			type_print(vs[i]->type, out);
			if (vs[i]->enc) {
				sb_putc(out, ' ');
				put_enc_ref(out, vs[i]->enc);
			}
		} else
			sb_puts(out, "<null>");
	}
}

static Value *operand(const Op *op, int i)
{
	return op->operands && i < op->n_operands ? op->operands[i] : NULL;
}

/* The op's own line up to (not including) its regions and newline. */
static void put_op_line(const Op *op, StrBuf *out)
{
	if (op->n_results > 0) {
		put_values(out, op->results, op->n_results);
		sb_puts(out, " = ");
	}
	sb_puts(out, op_name(op->code));
	Attrs a = {out, 0};
	bool types_done = false;
	switch (op->code) {
	case OP_CONST:
		sb_putc(out, ' ');
		if (op->n_results > 0 && op->results && op->results[0])
			put_const(out, op->results[0]->type, op->ival, op->fval);
		else
			sb_printf(out, "%" PRId64, op->ival);
		break;
	case OP_ARANGE:
		sb_printf(out, " %" PRId64 ", %" PRId64, op->attr[0], op->attr[1]);
		break;
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS:
		sb_printf(out, " %" PRId64, op->attr[0]);
		break;
	case OP_CMP:
		sb_printf(out, " %s", cmp_pred_name(op->attr[0]));
		break;
	case OP_MATH:
		sb_printf(out, " %s", math_fn_name(op->attr[0]));
		break;
	case OP_ATOMIC_RMW:
	case OP_DESC_ATOMIC:
		sb_printf(out, " %s", atomic_op_name(op->attr[0]));
		break;
	case OP_FOR:
		/* for %lb to %ub step %st iter(%init, ...) */
		sb_putc(out, ' ');
		put_value(out, operand(op, 0));
		sb_puts(out, " to ");
		put_value(out, operand(op, 1));
		sb_puts(out, " step ");
		put_value(out, operand(op, 2));
		if (op->attr[0] > 0)
			sb_printf(out, " unroll %" PRId64, op->attr[0]);
		if (op->n_operands > 3) {
			sb_puts(out, " iter(");
			put_values(out, op->operands + 3, op->n_operands - 3);
			sb_putc(out, ')');
		}
		goto types;
	case OP_WHILE:
		if (op->n_operands > 0) {
			sb_puts(out, " iter(");
			put_values(out, op->operands, op->n_operands);
			sb_putc(out, ')');
		}
		goto types;
	default:
		break;
	}
	if (op->n_operands > 0) {
		sb_putc(out, ' ');
		put_values(out, op->operands, op->n_operands);
	}

	switch (op->code) {
	case OP_EXPAND_DIMS:
		attr(&a, "axis = %" PRId64, op->attr[0]);
		break;
	case OP_TRANS: {
		int rank = op->n_results > 0 && op->results && op->results[0] ? op->results[0]->type.rank : 0;
		sb_puts(out, a.n++ ? ", " : " {");
		sb_puts(out, "perm = [");
		for (int i = 0; i < rank && i < BLK_MAX_RANK; i++)
			sb_printf(out, "%s%" PRId64, i ? ", " : "", op->attr[i]);
		sb_putc(out, ']');
		break;
	}
	case OP_MIN:
	case OP_MAX:
		if (op->attr[0])
			attr(&a, "propagate_nan");
		break;
	case OP_DIV:
		if (op->attr[0])
			attr(&a, "rn");
		break;
	case OP_CONVERT_LAYOUT:
		if (op->scratch) {
			sb_puts(out, a.n++ ? ", " : " {");
			sb_puts(out, "scratch = ");
			put_enc_ref(out, op->scratch);
		}
		break;
	case OP_HINT:
		if (op->attr[0])
			attr(&a, "divisibility = %" PRId64, op->attr[0]);
		if (op->attr[1])
			attr(&a, "contiguity = %" PRId64, op->attr[1]);
		break;
	case OP_LOAD:
		if (op->attr[0] & MEMF_MASK)
			attr(&a, "mask");
		if (op->attr[0] & MEMF_OTHER)
			attr(&a, "other");
		if (op->attr[0] & MEMF_TMA)
			attr(&a, "tma = %" PRId64, op->attr[4]);
		if (op->attr[1])
			attr(&a, "cache = %s", cache_mod_name(op->attr[1]));
		if (op->attr[2])
			attr(&a, "evict = %s", eviction_name(op->attr[2]));
		if (op->attr[3])
			attr(&a, "volatile");
		break;
	case OP_STORE:
		if (op->attr[0] & MEMF_MASK)
			attr(&a, "mask");
		if (op->attr[0] & MEMF_TMA)
			attr(&a, "tma = %" PRId64, op->attr[4]);
		if (op->attr[1])
			attr(&a, "cache = %s", cache_mod_name(op->attr[1]));
		if (op->attr[2])
			attr(&a, "evict = %s", eviction_name(op->attr[2]));
		break;
	case OP_DESC_LOAD:
	case OP_DESC_GATHER:
		if (op->attr[0] == DESC_PAD_NAN)
			attr(&a, "padding = nan");
		break;
	case OP_ATOMIC_RMW:
		if (op->attr[3] & MEMF_MASK)
			attr(&a, "mask");
		if (op->attr[3] & MEMF_TMA)
			attr(&a, "tma = %" PRId64, op->attr[4]);
		/* fallthrough */
	case OP_ATOMIC_CAS:
		attr(&a, "sem = %s", mem_sem_name(op->attr[1]));
		attr(&a, "scope = %s", mem_scope_name(op->attr[2]));
		break;
	case OP_REDUCE:
		attr(&a, "axis = %" PRId64, op->attr[0]);
		break;
	case OP_SCAN:
		attr(&a, "axis = %" PRId64, op->attr[0]);
		if (op->attr[1])
			attr(&a, "reverse");
		break;
	case OP_DOT:
		attr(&a, "precision = %s", dot_precision_name(op->attr[0]));
		break;
	case OP_PHILOX:
		attr(&a, "rounds = %" PRId64, op->attr[0]);
		break;
	case OP_SORT:
		attr(&a, "axis = %" PRId64, op->attr[0]);
		if (op->attr[1])
			attr(&a, "descending");
		break;
	case OP_TOPK:
		attr(&a, "axis = %" PRId64, op->attr[0]);
		attr(&a, "k = %" PRId64, op->attr[1]);
		break;
	case OP_HISTOGRAM:
		attr(&a, "bins = %" PRId64, op->attr[0]);
		break;
	case OP_GATHER:
		attr(&a, "axis = %" PRId64, op->attr[0]);
		break;
	case OP_SREG:
		attr(&a, "%s", op->attr[0] == SREG_GLOBALTIMER ? "globaltimer" : "smid");
		break;
	case OP_INLINE_ASM:
		sb_puts(out, a.n++ ? ", " : " {");
		sb_puts(out, "asm = ");
		put_string(out, op->str ? op->str : "");
		sb_puts(out, ", constraints = ");
		put_string(out, op->str2 ? op->str2 : "");
		if (op->attr[0])
			attr(&a, "pure");
		attr(&a, "pack = %" PRId64, op->attr[1]);
		break;
	case OP_PRINT:
		if (op->str && *op->str) {
			sb_puts(out, a.n++ ? ", " : " {");
			sb_puts(out, "prefix = ");
			put_string(out, op->str);
		}
		if (op->attr[0])
			attr(&a, "hex");
		break;
	case OP_ASSERT:
		sb_puts(out, a.n++ ? ", " : " {");
		sb_puts(out, "msg = ");
		put_string(out, op->str);
		break;
	case OP_CAST:
	case OP_BITCAST:
	case OP_PTR_TO_INT:
	case OP_INT_TO_PTR:
		/* conversions show both sides: "cast %3 : i32[16] -> f32[16]" */
		attrs_end(&a);
		if (op->n_results > 0) {
			sb_puts(out, " : ");
			put_types(out, op->operands, op->n_operands);
			sb_puts(out, " -> ");
			put_types(out, op->results, op->n_results);
		}
		types_done = true;
		break;
	default:
		break;
	}
	if (types_done)
		return;
	attrs_end(&a);
types:
	if (op->n_results > 0) {
		sb_puts(out, " : ");
		put_types(out, op->results, op->n_results);
	}
}

static void put_loc(StrBuf *out, Span loc, const IrPrintOpts *opts)
{
	if (opts && opts->show_locations && loc.line)
		sb_printf(out, " loc(%u:%u)", loc.line, loc.col);
}

static void put_region(const Region *r, int indent, StrBuf *out, const IrPrintOpts *opts);

void ir_print_op(const Op *op, int indent, StrBuf *out, const IrPrintOpts *opts)
{
	indent_to(out, indent);
	put_op_line(op, out);
	if (op->n_regions > 0 && op->regions) {
		sb_puts(out, " {");
		put_loc(out, op->loc, opts);
		sb_putc(out, '\n');
		for (int i = 0; i < op->n_regions; i++) {
			if (i) {
				indent_to(out, indent);
				sb_puts(out, op->code == OP_WHILE ? "} do {\n" : "} else {\n");
			}
			put_region(&op->regions[i], indent, out, opts);
		}
		indent_to(out, indent);
		sb_puts(out, "}\n");
		return;
	}
	put_loc(out, op->loc, opts);
	sb_putc(out, '\n');
}

/* Arguments on a line of their own at the op's indentation, as a block
 * label, "^(%5: i32, %6: f32[128]):"; then the ops one level deeper. */
static void put_region(const Region *r, int indent, StrBuf *out, const IrPrintOpts *opts)
{
	if (r->n_args > 0) {
		indent_to(out, indent);
		sb_puts(out, "^(");
		for (int i = 0; i < r->n_args; i++) {
			if (i)
				sb_puts(out, ", ");
			put_value(out, r->args ? r->args[i] : NULL);
			sb_puts(out, ": ");
			if (r->args && r->args[i])
				type_print(r->args[i]->type, out);
		}
		sb_puts(out, "):\n");
	}
	for (const Op *op = r->first; op; op = op->next)
		ir_print_op(op, indent + 1, out, opts);
}

void ir_print_opts(const IrFunc *f, StrBuf *out, const IrPrintOpts *opts)
{
	const IrGpuHooks *h = ir_gpu_hooks();
	if (f->n_encs && h) /* GPU IR: its encodings first (gpu/ prints them) */
		h->print_encodings(f, out);
	sb_printf(out, "kernel @%s(", f->name ? f->name : "?");
	int n = 0;
	int args_seen = 0;
	for (int i = 0; i < f->n_params; i++) {
		const IrParam *p = &f->params[i];
		if (n++)
			sb_puts(out, ", ");
		if (!p->value) {
			sb_printf(out, "%s = ", p->name ? p->name : "?");
			if (p->is_type)
				type_print(p->type, out);
			else
				put_const(out, p->type, p->const_ival, p->const_fval);
			continue;
		}
		put_value(out, p->value);
		sb_puts(out, ": ");
		type_print(p->value->type, out);
		args_seen++;
	}
	/* Body arguments that no parameter names (hand-built IR) still show. */
	for (int i = args_seen; i < f->body.n_args; i++) {
		if (n++)
			sb_puts(out, ", ");
		put_value(out, f->body.args ? f->body.args[i] : NULL);
		sb_puts(out, ": ");
		if (f->body.args && f->body.args[i])
			type_print(f->body.args[i]->type, out);
	}
	sb_printf(out, ") num_warps = %d, num_stages = %d%s%s {", f->num_warps, f->num_stages,
	          !f->fp_fusion ? ", fp_fusion = 0" : "", f->warp_specialize ? ", warp_specialize" : "");
	put_loc(out, f->loc, opts);
	sb_putc(out, '\n');
	for (int i = 0; i < f->n_tmaps; i++) { /* runtime arguments by number */
		const TmaMap *t = &f->tmaps[i];
		sb_printf(out, "  // tma %d: base arg %d, %s, dims", i, t->base_arg, scalar_name((ScalarKind)t->elem));
		for (int k = 0; k < 2 * t->rank; k++) {
			const TmaDim *d = k < t->rank ? &t->dim[k] : &t->stride[k - t->rank];
			sb_puts(out, k == t->rank ? "], strides" : k ? "," : "");
			sb_puts(out, k % t->rank ? " " : " [");
			if (d->arg >= 0)
				sb_printf(out, "arg %d", d->arg);
			else
				sb_printf(out, "%" PRId64, d->value);
		}
		sb_printf(out, "], box [%d, %d], %d-byte rows%s\n", t->box[0], t->box[1], t->row_bytes,
		          t->nan_fill ? ", NaN fill" : "");
	}
	for (const Op *op = f->body.first; op; op = op->next)
		ir_print_op(op, 1, out, opts);
	sb_puts(out, "}\n");
}

void ir_print(const IrFunc *f, StrBuf *out) { ir_print_opts(f, out, NULL); }
