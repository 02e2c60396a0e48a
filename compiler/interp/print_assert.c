/* print_assert.c: print (a line an element) and assert, as in
 * lower/print_assert.c. */
#include "interp/interp_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The shortest decimal that reads back as x in kind k; without an exponent
 * when x is of moderate size (60, not 6e+01). */
static void put_float(StrBuf *sb, double x, ScalarKind k)
{
	if (x != x) {
		sb_puts(sb, signbit(x) ? "-nan" : "nan");
		return;
	}
	int maxp = k == SK_F64 ? 17 : k == SK_F32 ? 9 : 5;
	bool moderate = fabs(x) >= 1e-4 && fabs(x) < 1e15;
	char buf[40];
	int p = 1;
	for (; p < maxp; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, x);
		if (fp_round(k, strtod(buf, NULL)) == x)
			break;
	}
	for (; p <= 17; p++) { /* more digits only drop the exponent */
		snprintf(buf, sizeof buf, "%.*g", p, x);
		if (!moderate || !strchr(buf, 'e'))
			break;
	}
	sb_puts(sb, buf);
}

static void put_elem(StrBuf *sb, Elem e, Type t, bool hex)
{
	ScalarKind k = (ScalarKind)t.scalar;
	if (t.ptr) {
		sb_printf(sb, "0x%llx", (unsigned long long)e.u);
	} else if (hex) {
		int bits = scalar_bits(k);
		sb_printf(sb, "0x%0*llx", bits < 4 ? 1 : bits / 4, (unsigned long long)elem_bits(e, t));
	} else if (scalar_is_float(k)) {
		put_float(sb, e.f, k);
	} else if (scalar_is_signed(k) && k != SK_I1) {
		sb_printf(sb, "%lld", (long long)e.i);
	} else {
		sb_printf(sb, "%llu", (unsigned long long)e.u);
	}
}

/* "pid (x, y, z) idx (i, j) PREFIX (operand k): " */
static void put_line_head(StrBuf *sb, Worker *w, int64_t elem, Type t, const char *prefix, int operand)
{
	sb_printf(sb, "pid (%d, %d, %d) idx (", w->pid[0], w->pid[1], w->pid[2]);
	int64_t idx[BLK_MAX_RANK] = {0};
	for (int d = t.rank - 1; d >= 0; d--) {
		idx[d] = elem % t.shape[d];
		elem /= t.shape[d];
	}
	for (int d = 0; d < t.rank; d++)
		sb_printf(sb, "%s%lld", d ? ", " : "", (long long)idx[d]);
	sb_putc(sb, ')');
	size_t pl = strlen(prefix);
	if (pl)
		sb_printf(sb, " %s", prefix);
	if (operand >= 0)
		sb_printf(sb, " (operand %d)", operand);
	/* "x =" and "x:" read well without another colon */
	if (!pl || operand >= 0 || (prefix[pl - 1] != ':' && prefix[pl - 1] != '='))
		sb_putc(sb, ':');
	sb_putc(sb, ' ');
}

/* One line per element: "pid (x, y, z) idx (i, j) PREFIX: value". Operands of
 * one shape share a line ("a, b"); otherwise each operand prints its own
 * lines, marked "(operand k)". The lines of one print reach print_out
 * together, never cut by another thread's. */
bool interp_print(Worker *w, const Op *op)
{
	Run *run = w->run;
	if (!run->print_out)
		return true;
	StrBuf sb = {0};
	const char *prefix = op->str ? op->str : "";
	bool hex = op->attr[0] != 0;
	int no = op->n_operands;
	bool same = true;
	for (int i = 1; i < no; i++)
		same &= slot(w, op->operands[i])->n == slot(w, op->operands[0])->n;
	if (no == 0) {
		sb_printf(&sb, "pid (%d, %d, %d) %s\n", w->pid[0], w->pid[1], w->pid[2], prefix);
	} else if (same) {
		Type t = op->operands[0]->type;
		for (int64_t e = 0; e < slot(w, op->operands[0])->n; e++) {
			put_line_head(&sb, w, e, t, prefix, -1);
			for (int i = 0; i < no; i++) {
				if (i)
					sb_puts(&sb, ", ");
				put_elem(&sb, slot(w, op->operands[i])->p[e], op->operands[i]->type, hex);
			}
			sb_putc(&sb, '\n');
		}
	} else {
		for (int i = 0; i < no; i++) {
			const Slot *s = slot(w, op->operands[i]);
			Type t = op->operands[i]->type;
			for (int64_t e = 0; e < s->n; e++) {
				put_line_head(&sb, w, e, t, prefix, i);
				put_elem(&sb, s->p[e], t, hex);
				sb_putc(&sb, '\n');
			}
		}
	}
	if (run->threaded)
		pthread_mutex_lock(&run->lock);
	if (sb.data)
		sb_putn(run->print_out, sb.data, sb.len);
	if (run->threaded)
		pthread_mutex_unlock(&run->lock);
	bool ok = !sb.failed;
	sb_free(&sb);
	return ok || interp_fail(w, op, -1, (Type){0}, "out of memory", NULL);
}

bool interp_assert(Worker *w, const Op *op)
{
	const Slot *c = slot(w, op->operands[0]);
	for (int64_t i = 0; i < c->n; i++)
		if (!c->p[i].u)
			return interp_fail(w, op, i, op->operands[0]->type, "assertion failed", "%s",
			                   op->str && *op->str ? op->str : "(no message)");
	return true;
}
