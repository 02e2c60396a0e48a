/* pipeline/passes.c: blk's passes by name (blkc --passes, BLK_PASSES, the
 * driver's pipelines). */
#include "pipeline/pipeline.h"

#include <string.h>

static const IrPass passes[] = {
	{"canonicalize", "fold constants, simplify identities, drop empty loops", ir_canonicalize},
	{"cse", "merge equal pure ops", ir_cse},
	{"dce", "remove pure ops whose results are unused", ir_dce},
	{"contract", "with fp_fusion, an f32/f64 product feeding one sum or difference becomes an fma", ir_contract},
	{"expand-descriptors", "tensor descriptor loads and stores as masked loads and stores of pointer blocks",
	 ir_expand_descriptors},
	{"pipeline", "issue the loads of a loop that writes no memory one iteration ahead (num_stages >= 2)",
	 ir_pipeline},
	{"pipeline-dots", "the same for loads that feed dots, issued at the top of the body", ir_pipeline_dots},
	{"layouts", "GPU IR: give every block an encoding (coalesced, slice, mma), insert conversions", ir_layouts},
	{"remove-conversions", "GPU IR: recompute cheap values where they are wanted, drop needless conversions",
	 ir_remove_conversions},
};
static const IrPassTable table = {passes, sizeof passes / sizeof *passes};

const IrPassTable *pipeline_pass_table(void)
{
	return &table;
}

const IrPass *pipeline_pass_find(const char *name)
{
	for (int i = 0; i < table.n; i++)
		if (strcmp(passes[i].name, name) == 0)
			return &passes[i];
	return NULL;
}

bool pipeline_run_passes(IrFunc *f, const char *pipeline, const char *dump_after, StrBuf *dump, Diag *diag)
{
	return ir_run_pass_table(&table, f, pipeline, dump_after, dump, diag);
}
