/* pass_manager.c: the table of passes, and running a pipeline of them
 * with verification and dumps (docs/ir.md, "Passes"). */
#include "gpu/gpu.h"

#include <stdlib.h>
#include <string.h>

/* ---- the pass manager ---------------------------------------------------- */

static const IrPass passes[] = {
	{"canonicalize", "fold constants, simplify identities, drop empty loops", ir_canonicalize},
	{"cse", "merge equal pure ops", ir_cse},
	{"dce", "remove pure ops whose results are unused", ir_dce},
	{"expand-descriptors", "tensor descriptor loads and stores as masked loads and stores of pointer blocks",
	 ir_expand_descriptors},
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
