/* pass_manager.c: running a pipeline of passes from a table the caller
 * gives (pipeline/passes.c holds blk's), with verification and dumps
 * (docs/ir.md, "Passes"). */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

static const IrPass *find_pass(const IrPassTable *t, const char *name, size_t len)
{
	for (int i = 0; i < t->n; i++)
		if (strlen(t->passes[i].name) == len && memcmp(t->passes[i].name, name, len) == 0)
			return &t->passes[i];
	return NULL;
}

static void unknown_pass(const IrPassTable *t, Diag *diag, const char *what, const char *name, size_t len)
{
	StrBuf known = {0};
	for (int i = 0; i < t->n; i++)
		sb_printf(&known, "%s%s", i ? ", " : "", t->passes[i].name);
	diag_plain(diag, DIAG_ERROR, "unknown %s '%.*s' (known passes: %s)", what, (int)len, name,
	           known.data ? known.data : "");
	sb_free(&known);
}

enum { MAX_PIPELINE = 64 };

/* Splits "a, b,c" into pass pointers; false (reported) on an unknown name. */
static int parse_pipeline(const IrPassTable *t, const char *p, const IrPass **out, Diag *diag)
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
		const IrPass *pass = find_pass(t, s, len);
		if (!pass) {
			unknown_pass(t, diag, "pass", s, len);
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

bool ir_run_pass_table(const IrPassTable *t, IrFunc *f, const char *pipeline, const char *dump_after, StrBuf *dump,
                       Diag *diag)
{
	const IrPass *list[MAX_PIPELINE];
	int n = parse_pipeline(t, pipeline ? pipeline : IR_DEFAULT_PIPELINE, list, diag);
	if (n < 0)
		return false;
	bool dump_all = dump_after && strcmp(dump_after, "all") == 0;
	if (dump_after && !dump_all) {
		if (!find_pass(t, dump_after, strlen(dump_after))) {
			unknown_pass(t, diag, "pass for --dump-after", dump_after, strlen(dump_after));
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
