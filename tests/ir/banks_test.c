/* banks_test.c: every conversion through shared memory in the examples (and
 * in the transposes and permutes of bench/kernels/transpose.tile and
 * tests/ptx/patterns) is free of bank conflicts, by simulation.
 *
 * For each example kernel, with each of its autotune configs (or its
 * defaults) and with arguments specialized as the JIT does (divisible by 16)
 * and not, the GPU passes run; for each convert_layout with a scratch, every
 * warp's store (in the source encoding, replicas left out) and load (in the
 * destination one) is replayed lane by lane through the scratch's swizzle.
 * An access of B bytes a lane is served in 4-byte banks, 32 of them, in
 * wavefronts of 32, 16 or 8 lanes (B = 4 or less, 8, 16); an ldmatrix
 * reads one 8 x 8 matrix a wavefront, a 16-byte row a lane; a wavefront costs
 * as many passes as the most distinct words one bank must serve. The test
 * counts passes against one a wavefront and also checks that the swizzle
 * maps indices to addresses one to one (no two elements share a slot). */
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "pipeline/pipeline.h"
#include "lower/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void check(bool ok, const char *fmt, const char *a, const char *b, long x, long y)
{
	printf("%s ", ok ? "ok  " : "FAIL");
	printf(fmt, a, b, x, y);
	printf("\n");
	ok ? passed++ : failed++;
}

static int index_of(const Lin *l, int k, int tid)
{
	int c = 0;
	for (int i = 0; i < l->n_reg; i++)
		if (k >> i & 1)
			c |= 1 << l->reg[i];
	for (int i = 0; i < 5 + l->n_warp; i++) {
		int b = i < 5 ? l->lane[i] : l->warp[i - 5];
		if (b >= 0 && (tid >> i & 1))
			c |= 1 << b;
	}
	return c;
}

static bool replica(const Lin *l, int tid)
{
	for (int i = 0; i < 5 + l->n_warp; i++) {
		int b = i < 5 ? l->lane[i] : l->warp[i - 5];
		if (b < 0 && (tid >> i & 1))
			return true;
	}
	return false;
}

static unsigned swizzled(const Encoding *s, unsigned c)
{
	unsigned a = c;
	for (int j = 0; j < s->n_index_bits; j++)
		if (c >> j & 1)
			a ^= s->swizzle[j];
	return a;
}

/* Passes over the banks that one warp access takes, and the fewest it could. */
static void warp_access(const long *byte_addr, const bool *active, int width, long *passes, long *ideal)
{
	int phases = width <= 4 ? 1 : width == 8 ? 2 : 4, per = 32 / phases;
	int words_each = width < 4 ? 1 : width / 4;
	for (int p = 0; p < phases; p++) {
		bool any = false;
		int most = 0;
		for (int bank = 0; bank < 32; bank++) {
			long words[128];
			int n = 0;
			for (int l = p * per; l < (p + 1) * per; l++) {
				if (!active[l])
					continue;
				any = true;
				for (int w = 0; w < words_each; w++) {
					long word = byte_addr[l] / 4 + w;
					if ((word & 31) != bank)
						continue;
					bool seen = false;
					for (int q = 0; q < n; q++)
						seen |= words[q] == word;
					if (!seen)
						words[n++] = word;
				}
			}
			if (n > most)
				most = n;
		}
		*passes += most;
		*ideal += any;
	}
}

static unsigned swizzled(const Encoding *s, unsigned c);

/* The vector an access of l moves: vec registers when their addresses
 * run on in the scratch (for each address bit i below vec, some register
 * bit lands on it), else 1; *regs: those register bits. */
static int vector_of(const Encoding *s, const Lin *l, int vec, int *regs)
{
	*regs = 0;
	for (int i = 0; (1 << i) < vec; i++) {
		int found = -1;
		for (int r = 0; r < l->n_reg && found < 0; r++)
			if (l->reg[r] >= 0 && swizzled(s, 1u << l->reg[r]) == 1u << i)
				found = r;
		if (found < 0) {
			*regs = 0;
			return 1;
		}
		*regs |= 1 << found;
	}
	return vec;
}

static int conversions;

static void simulate(const Op *op, int num_warps, const char *what)
{
	const Value *x = op->operands[0], *y = op->results[0];
	const Encoding *s = op->scratch;
	Lin li, lo;
	if (!s || !enc_lin(x->enc, x->type, num_warps, &li) || !enc_lin(y->enc, y->type, num_warps, &lo))
		return;
	conversions++;
	int eb = scalar_bits((ScalarKind)x->type.scalar) / 8;
	if (x->type.ptr)
		eb = 8;
	if (eb < 1)
		eb = 1;
	int n = (int)type_numel(x->type);
	/* one to one */
	char *used = calloc((size_t)n, 1);
	bool bijective = used != NULL;
	for (int i = 0; bijective && i < n; i++) {
		unsigned a = swizzled(s, (unsigned)i);
		if (a >= (unsigned)n || used[a])
			bijective = false;
		else
			used[a] = 1;
	}
	free(used);
	char name[256];
	snprintf(name, sizeof name, "%s: %%%d", what, y->id);
	check(bijective, "%s%s: the swizzle is one to one (%ld, %ld elements)", name, "", n, n);
	if (s->ldmatrix) {
		/* ldmatrix: one 8 x 8 matrix (8 rows of 16 bytes, a lane's address
		 * each) a phase; rows run along dimension 0, 8 elements along 1
		 * (a B operand stored K-major, an A stored M-major: rows along 1,
		 * elements along 0) */
		long passes = 0, ideal = 0;
		Type t = y->type;
		int row_bit = 0, elem_bit = 0, nbits1 = 0;
		while ((1 << nbits1) < t.shape[1])
			nbits1++;
		if (s->ldmatrix >= 3)
			elem_bit = nbits1;
		else
			row_bit = nbits1;
		for (int w = 0; w < num_warps; w++)
			for (int k = 0; k < (1 << lo.n_reg); k++) {
				int base = index_of(&lo, k, w * 32) & ~(7 << elem_bit); /* the fragment's row start, lanes 0 */
				for (int i = 0; i < 5; i++)
					if (lo.lane[i] >= 0)
						base &= ~(1 << lo.lane[i]);
				base &= ~(15 << row_bit);
				long addr[32];
				bool act[32] = {0};
				for (int r = 0; r < 8; r++) {
					addr[r] = (long)swizzled(s, (unsigned)(base | r << row_bit)) * eb;
					act[r] = true;
				}
				for (int r = 8; r < 32; r++)
					addr[r] = 0;
				long p = 0, q = 0;
				warp_access(addr, act, 16, &p, &q);
				passes += p, ideal += q;
			}
		check(passes == ideal, "%s %s: %ld bank passes, %ld without conflicts", name, "ldmatrix", passes, ideal);
	}
	for (int side = 0; side < 2 - (s->ldmatrix != 0); side++) {
		const Lin *l = side ? &lo : &li;
		int vregs;
		int vec = side ? vector_of(s, &lo, s->load_vec, &vregs) : vector_of(s, &li, s->vec, &vregs);
		long passes = 0, ideal = 0;
		for (int w = 0; w < num_warps; w++)
			for (int k = 0; k < (1 << l->n_reg); k++) {
				if (k & vregs)
					continue; /* a register of the vector at k & ~vregs */
				long addr[32];
				bool act[32];
				for (int t = 0; t < 32; t++) {
					int tid = w * 32 + t;
					addr[t] = (long)swizzled(s, (unsigned)index_of(l, k, tid)) * eb;
					act[t] = side == 1 || !replica(l, tid);
				}
				warp_access(addr, act, vec * eb, &passes, &ideal);
			}
		check(passes == ideal, "%s %s: %ld bank passes, %ld without conflicts", name, side ? "load" : "store",
		      passes, ideal);
	}
}

static void walk(const Region *r, int num_warps, const char *what)
{
	for (const Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_regions; i++)
			walk(&op->regions[i], num_warps, what);
		if (op->code == OP_CONVERT_LAYOUT)
			simulate(op, num_warps, what);
	}
}

/* Every conversion of kernel `kernel` of path (NULL: the file's only kernel)
 * after the GPU passes, in each @autotune config. */
static void kernel_file(const char *path, const char *kernel, const char *const *defines, int n_defines)
{
	for (int spec = 0; spec < 2; spec++) {
		Arena arena = {0};
		Diag diag;
		diag_init(&diag);
		ModuleSet set = {.arena = &arena, .diag = &diag, .stdlib_dir = "stdlib"};
		Module *m = module_load_file(&set, path);
		Node *k = m ? irgen_find_kernel(m, kernel, &diag) : NULL;
		AutotuneSpec at = {0};
		if (!k || !irgen_autotune(m, k, &at, &diag, &arena)) {
			check(false, "%s%s: loads (%ld, %ld)", path, "", 0, 0);
			arena_free(&arena);
			diag_free(&diag);
			return;
		}
		int configs = at.n_configs ? at.n_configs : 1;
		for (int c = 0; c < configs; c++) {
			ConstBinding b[16];
			int nb = 0;
			for (int i = 0; i < n_defines && nb < 16; i++) {
				const char *eq = strchr(defines[i], '=');
				char *name = arena_alloc(&arena, (size_t)(eq - defines[i]) + 1);
				memcpy(name, defines[i], (size_t)(eq - defines[i]));
				name[eq - defines[i]] = 0;
				b[nb++] = (ConstBinding){.name = name, .i = atoll(eq + 1)};
			}
			for (int i = 0; at.n_configs && i < at.config_len[c] && nb < 16; i++)
				b[nb++] = at.configs[c][i];
			IrgenOptions io = {.consts = b, .n_consts = nb};
			IrFunc *f = irgen_kernel(m, k, &io, &diag, &arena);
			if (!f) {
				check(false, "%s%s: builds (%ld, %ld)", path, "", c, 0);
				continue;
			}
			for (int i = 0; spec && i < f->n_params; i++)
				if (f->params[i].value)
					f->params[i].divisibility = 16;
			char what[200];
			snprintf(what, sizeof what, "%s config %d%s", path, c, spec ? " (args by 16)" : "");
			if (!pipeline_run_passes(f, "canonicalize,cse,dce," IR_GPU_PIPELINE, NULL, NULL, &diag)) {
				check(false, "%s%s: GPU passes (%ld, %ld)", what, "", 0, 0);
				continue;
			}
			walk(&f->body, f->num_warps, what);
		}
		arena_free(&arena);
		diag_free(&diag);
	}
}

int main(void)
{
	static const char *const none[] = {NULL};
	static const char *const gemv[] = {"BLOCK_N=8", "BLOCK_K=512"};
	kernel_file("examples/matmul.tile", NULL, none, 0);
	kernel_file("stdlib/nn/attention.tile", "attention_fwd", none, 0);
	kernel_file("examples/w4a16_gemv.tile", NULL, none, 0);
	kernel_file("examples/w4a16_gemv.tile", NULL, gemv, 2);
	kernel_file("examples/softmax.tile", NULL, none, 0);
	kernel_file("examples/layernorm.tile", NULL, none, 0);
	kernel_file("bench/kernels/transpose.tile", NULL, none, 0);
	kernel_file("tests/ptx/patterns/transpose_f32_64.tile", NULL, none, 0);
	kernel_file("tests/ptx/patterns/permute3d_f32.tile", NULL, none, 0);
	kernel_file("tests/ptx/patterns/permute3d_f16.tile", NULL, none, 0);
	static const char *const tn[] = {"BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=32"};
	kernel_file("tests/ptx/patterns/matmul_tn_sm80.tile", NULL, tn, 3);
	printf("(%d conversions simulated)\n", conversions);
	check(conversions >= 20, "%s%sthe examples have conversions to simulate (%ld, at least %ld)", "", "",
	      conversions, 20);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
