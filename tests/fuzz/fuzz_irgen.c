/* fuzz_irgen: semantic analysis, IR generation, the verifier and the passes
 * (the GPU ones too) on any input (`make fuzz-irgen`). Whatever parses must either be refused
 * with diagnostics or give IR the verifier accepts and the passes keep
 * valid; nothing may crash, leak or hang. */
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "pipeline/pipeline.h"
#include "lower/lower.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 20000)
		return 0;
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	Source src;
	source_from_string(&src, "fuzz.tile", (const char *)data, size, &arena);
	ModuleSet set = {.arena = &arena, .diag = &diag};
	Module *m = module_load_source(&set, &src);
	if (m && diag.errors == 0) {
		for (int i = 0; i < m->file->list.len; i++) {
			Node *k = m->file->list.items[i];
			if (k->kind != N_KERNEL)
				continue;
			AutotuneSpec at;
			irgen_autotune(m, k, &at, &diag, &arena);
			IrgenOptions io = {0};
			if (at.n_configs) {
				io.consts = at.configs[0];
				io.n_consts = at.config_len[0];
			}
			int before = diag.errors;
			IrFunc *f = irgen_kernel(m, k, &io, &diag, &arena);
			if (f) {
				if (diag.errors != before)
					abort(); /* a function despite errors */
				if (!ir_verify(f, &diag, "irgen"))
					abort(); /* irgen made invalid IR */
				if (!pipeline_run_passes(f, NULL, NULL, NULL, &diag) && !diag.out.failed)
					abort(); /* a pass broke valid IR */
				/* the GPU passes too (they need no GPU and no LLVM), with loads
				 * pipelined first: each keeps the IR valid, GPU IR included;
				 * inputs of odd length for sm_90a (wgmma, two ahead) with TMA
				 * asked for and every argument specialized, as the JIT does */
				if (size & 1) {
					ir_set_target(f, "sm_90a");
					f->tma = true;
					for (int p = 0; p < f->n_params; p++)
						if (f->params[p].value)
							f->params[p].divisibility = 16;
				}
				if (!pipeline_run_passes(f, "pipeline," IR_GPU_PIPELINE, NULL, NULL, &diag) && !diag.out.failed)
					abort();
				StrBuf out = {0};
				ir_print(f, &out);
				sb_free(&out);
			}
		}
	}
	diag_free(&diag);
	arena_free(&arena);
	return 0;
}
