/* gpu_invariants_test: what the layouts and remove-conversions passes
 * promise, checked on every kernel of the examples, of tests/ir/golden and
 * of tests/lang that compiles, in each autotune config, with arguments
 * specialized as the JIT does (multiples of 16) and not.
 *
 * After canonicalize,cse,dce,expand-descriptors,layouts,remove-conversions,dce:
 *  - the IR verifies (pipeline_run_passes checks it after every pass);
 *  - a reduction's results lay out what lin_slice leaves of its operand, a
 *    scan's its operand's;
 *  - a dot that runs on tensor cores (16-bit float inputs of one kind, an
 *    f32 accumulator, at least 16 x 8 x 16) has an mma result, its inputs
 *    are dot_operand idx 0 and 1 of that mma with k_width 2, its accumulator
 *    lays out as the result;
 *  - a load's, store's or atomic's pointer, mask, other and value blocks lay
 *    out alike (the lowering walks their registers together; the verifier
 *    does not check this);
 *  - every convert_layout changes the layout (as a bit map), does not
 *    convert a conversion, and does not convert a constant, an arange or a
 *    splat (those are rebuilt in the wanted encoding);
 *  - a conversion has a shared scratch exactly when some lane or warp bit
 *    differs (threads exchange data), and that scratch maps indices to
 *    addresses one to one.
 * Cases are counted per kernel and config; a kernel that does not compile
 * (error tests, const parameters without a value) is skipped. */
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "pipeline/pipeline.h"
#include "lower/lower.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed, kernels, ops_checked;

static void result(bool ok, const char *name, const char *why)
{
	printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", name, ok ? "" : ": ", ok ? "" : why);
	ok ? passed++ : failed++;
}

static bool lin_same(const Value *a, const Value *b, int nw)
{
	return enc_equiv(a->enc, b->enc, a->type, nw);
}

static bool lin_eq(const Lin *a, const Lin *b)
{
	return a->n_reg == b->n_reg && a->n_warp == b->n_warp && memcmp(a->reg, b->reg, (size_t)a->n_reg) == 0 &&
	       memcmp(a->lane, b->lane, 5) == 0 && memcmp(a->warp, b->warp, (size_t)a->n_warp) == 0;
}

static bool is_block(const Value *v) { return v && v->type.rank > 0; }

typedef struct Check {
	const IrFunc *f;
	char why[512];
	bool bad;
} Check;

static void bad(Check *c, const Op *op, const char *what)
{
	if (c->bad)
		return;
	c->bad = true;
	snprintf(c->why, sizeof c->why, "%s at %s %%%d", what, op_name(op->code),
	         op->n_results ? op->results[0]->id : -1);
}

static bool uses_mma(const Op *op)
{
	Type a = op->operands[0]->type, b = op->operands[1]->type, c = op->results[0]->type;
	return !a.ptr && !b.ptr && a.scalar == b.scalar && (a.scalar == SK_F16 || a.scalar == SK_BF16) && !c.ptr &&
	       c.scalar == SK_F32 && a.shape[0] >= 16 && a.shape[1] >= 16 && b.shape[1] >= 8;
}

static bool cheap(const Op *d)
{
	return d && (d->code == OP_CONST || d->code == OP_ARANGE || d->code == OP_SPLAT);
}

static void check_op(Check *c, const Op *op)
{
	int nw = c->f->num_warps;
	ops_checked++;
	switch (op->code) {
	case OP_REDUCE:
		for (int i = 0; i < op->n_results; i++) {
			const Value *x = op->operands[i], *y = op->results[i];
			if (!is_block(y))
				continue;
			Lin lx, ly, want;
			if (!enc_lin(x->enc, x->type, nw, &lx) || !enc_lin(y->enc, y->type, nw, &ly)) {
				bad(c, op, "an encoding lays out nothing");
				return;
			}
			lin_slice(&lx, x->type, (int)op->attr[0], &want);
			if (!lin_eq(&ly, &want))
				bad(c, op, "the result is not what lin_slice leaves of the operand");
		}
		break;
	case OP_SCAN:
		for (int i = 0; i < op->n_results; i++)
			if (!lin_same(op->operands[i], op->results[i], nw))
				bad(c, op, "the result's layout is not the operand's");
		break;
	case OP_DOT: {
		const Value *acc = op->operands[2], *y = op->results[0];
		if (!lin_same(acc, y, nw))
			bad(c, op, "the accumulator's layout is not the result's");
		if (!uses_mma(op))
			break;
		const Encoding *m = y->enc;
		if (!m || m->kind != ENC_MMA) {
			bad(c, op, "a tensor-core dot without an mma result");
			break;
		}
		/* each input lies as dot_operand<i> of the result's mma: that
		 * encoding, or one with the same map (a chained dot's A operand,
		 * computed from the first dot's result, keeps its own label) */
		for (int i = 0; i < 2; i++) {
			Encoding want;
			memset(&want, 0, sizeof want);
			want.kind = ENC_DOT_OPERAND;
			want.rank = 2;
			want.op_idx = i;
			want.parent = m;
			want.k_width = 2;
			if (!op->operands[i]->enc || !enc_equiv(op->operands[i]->enc, &want, op->operands[i]->type, nw))
				bad(c, op, i ? "input B is not dot_operand<1> of the result's mma"
				             : "input A is not dot_operand<0> of the result's mma");
		}
		break;
	}
	case OP_LOAD:
	case OP_STORE:
	case OP_ATOMIC_RMW:
	case OP_ATOMIC_CAS: {
		const Value *p = op->operands[0];
		if (!is_block(p))
			break;
		for (int i = 1; i < op->n_operands; i++)
			if (is_block(op->operands[i]) && !lin_same(op->operands[i], p, nw))
				bad(c, op, "an operand's layout is not the pointers'");
		for (int i = 0; i < op->n_results; i++)
			if (!lin_same(op->results[i], p, nw))
				bad(c, op, "the result's layout is not the pointers'");
		break;
	}
	case OP_CONVERT_LAYOUT: {
		const Value *x = op->operands[0], *y = op->results[0];
		if (lin_same(x, y, nw))
			bad(c, op, "a conversion that changes nothing");
		if (x->def && x->def->code == OP_CONVERT_LAYOUT)
			bad(c, op, "a conversion of a conversion");
		if (cheap(x->def))
			bad(c, op, "a conversion of a constant, arange or splat");
		Lin a, b;
		if (!enc_lin(x->enc, x->type, nw, &a) || !enc_lin(y->enc, y->type, nw, &b)) {
			bad(c, op, "an encoding lays out nothing");
			break;
		}
		bool same_threads = memcmp(a.lane, b.lane, 5) == 0 && memcmp(a.warp, b.warp, (size_t)a.n_warp) == 0;
		if (same_threads != (op->scratch == NULL))
			bad(c, op, same_threads ? "a scratch for a conversion inside threads" : "no scratch for a conversion across threads");
		if (op->scratch) {
			int n = (int)type_numel(x->type);
			unsigned char *used = calloc((size_t)n, 1);
			for (int i = 0; used && i < n; i++) {
				unsigned adr = (unsigned)i;
				for (int j = 0; j < op->scratch->n_index_bits; j++)
					if (i >> j & 1)
						adr ^= op->scratch->swizzle[j];
				if (adr >= (unsigned)n || used[adr]++) {
					bad(c, op, "the scratch's swizzle is not one to one");
					break;
				}
			}
			free(used);
		}
		break;
	}
	default:
		break;
	}
}

static void walk(Check *c, const Region *r)
{
	for (const Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_regions; i++)
			walk(c, &op->regions[i]);
		check_op(c, op);
	}
}

static int skipped;

static void kernel_file(const char *path)
{
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	diag.max_errors = 0;
	ModuleSet set = {.arena = &arena, .diag = &diag, .stdlib_dir = "stdlib"};
	Module *m = module_load_file(&set, path);
	if (!m || diag.errors) {
		skipped++;
		goto out;
	}
	for (int i = 0; i < m->file->list.len; i++) {
		Node *k = m->file->list.items[i];
		if (k->kind != N_KERNEL)
			continue;
		AutotuneSpec at = {0};
		if (!irgen_autotune(m, k, &at, &diag, &arena)) {
			skipped++;
			continue;
		}
		int configs = at.n_configs ? at.n_configs : 1;
		for (int cfg = 0; cfg < configs; cfg++)
			for (int spec = 0; spec < 2; spec++) {
				IrgenOptions io = {0};
				if (at.n_configs) {
					io.consts = at.configs[cfg];
					io.n_consts = at.config_len[cfg];
				}
				int before = diag.errors;
				IrFunc *f = irgen_kernel(m, k, &io, &diag, &arena);
				if (!f || diag.errors != before) {
					skipped++;
					continue;
				}
				for (int p = 0; spec && p < f->n_params; p++)
					if (f->params[p].value)
						f->params[p].divisibility = 16;
				char name[300];
				snprintf(name, sizeof name, "%s: %s%s%.0d%s", path, f->name, at.n_configs ? " config " : "", cfg,
				         spec ? " (args by 16)" : "");
				if (at.n_configs && cfg == 0)
					snprintf(name, sizeof name, "%s: %s config 0%s", path, f->name, spec ? " (args by 16)" : "");
				Diag d;
				diag_init(&d);
				bool ok = pipeline_run_passes(f, "canonicalize,cse,dce,expand-descriptors,layouts,remove-conversions,dce", NULL, NULL, &d);
				if (!ok) {
					result(false, name, d.out.data ? d.out.data : "the passes failed");
					diag_free(&d);
					continue;
				}
				diag_free(&d);
				Check c = {.f = f};
				walk(&c, &f->body);
				kernels++;
				result(!c.bad, name, c.why);
			}
	}
out:
	diag_free(&diag);
	arena_free(&arena);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void dir_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	char *names[1024];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 1024) {
		size_t len = strlen(e->d_name);
		if (len > 5 && strcmp(e->d_name + len - 5, ".tile") == 0 && strncmp(e->d_name, "err_", 4) != 0) {
			names[n] = malloc(strlen(dir) + len + 2);
			sprintf(names[n++], "%s/%s", dir, e->d_name);
		}
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof *names, cmp_str);
	for (int i = 0; i < n; i++) {
		kernel_file(names[i]);
		free(names[i]);
	}
}

int main(void)
{
	dir_files("examples");
	dir_files("tests/ir/golden");
	dir_files("tests/lang");
	dir_files("tests/ptx/patterns");
	printf("  (%d kernel compilations, %d ops checked, %d files or kernels skipped)\n", kernels, ops_checked, skipped);
	if (kernels < 40) {
		printf("FAIL too few kernels compiled (%d)\n", kernels);
		failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
