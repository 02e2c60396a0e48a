/* compile.c: the plain compile: each file through the front end, irgen, the
 * passes and the GPU back end to what --emit asks for; --time's phase times. */
#include "blkc.h"

#include <errno.h>
#include "pipeline/pipeline.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}


/* The errno of the first short write of the output (0: none). */
static int write_errno;

int compile_write_errno(void)
{
	return write_errno;
}

int compile_outputs(const Options *opt, char outs[2][4200])
{
	if (!opt->output || !opt->output[0] || strcmp(opt->output, "-") == 0)
		return 0;
	if (opt->emit != EMIT_C) {
		snprintf(outs[0], sizeof outs[0], "%s", opt->output);
		return 1;
	}
	char base[4096]; /* NAME.c and NAME.h, as write_aot names them */
	snprintf(base, sizeof base, "%s", opt->output);
	size_t bl = strlen(base);
	if (bl > 2 && (strcmp(base + bl - 2, ".c") == 0 || strcmp(base + bl - 2, ".h") == 0))
		base[bl - 2] = '\0';
	snprintf(outs[0], sizeof outs[0], "%s.c", base);
	snprintf(outs[1], sizeof outs[1], "%s.h", base);
	return 2;
}

/* The const values for one compilation: an autotune config (if any) with
 * the -D bindings over it. */
static int const_values(const Options *opt, const AutotuneSpec *at, int config, ConstBinding *out)
{
	int n = 0;
	if (at->n_configs)
		for (int i = 0; i < at->config_len[config]; i++) {
			bool overridden = false;
			for (int j = 0; j < opt->n_defines && !overridden; j++)
				overridden = strcmp(opt->defines[j].name, at->configs[config][i].name) == 0;
			if (!overridden)
				out[n++] = at->configs[config][i];
		}
	for (int j = 0; j < opt->n_defines; j++)
		out[n++] = opt->defines[j];
	return n;
}

/* --assume=x:16,n:16 sets what specialization would promise. */
static bool apply_assumptions(IrFunc *f, const char *spec, Diag *diag)
{
	const char *p = spec;
	while (*p) {
		const char *comma = strchr(p, ',');
		if (!comma)
			comma = p + strlen(p);
		const char *colon = memchr(p, ':', (size_t)(comma - p)), *eq = memchr(p, '=', (size_t)(comma - p));
		const char *sep = colon ? colon : eq;
		char *end = NULL;
		long long n = sep ? strtoll(sep + 1, &end, 10) : 0;
		bool ok = sep && end == comma && (colon ? n > 0 && !(n & (n - 1)) : n == 1);
		if (!ok) {
			diag_plain(diag, DIAG_ERROR,
			           "--assume expects NAME:N (a multiple of N, a power of two) or NAME=1, got '%.*s'",
			           (int)(comma - p), p);
			return false;
		}
		bool found = false;
		for (int i = 0; i < f->n_params; i++) {
			IrParam *prm = &f->params[i];
			if (!prm->value || strlen(prm->name) != (size_t)(sep - p) || strncmp(prm->name, p, (size_t)(sep - p)) != 0)
				continue;
			found = true;
			if (colon)
				prm->divisibility = n;
			else if (!ir_param_is_one(f, prm)) /* equal to 1, as the JIT specializes */
				return false;
		}
		if (!found) {
			diag_plain(diag, DIAG_ERROR, "--assume: kernel '%s' has no runtime parameter '%.*s'", f->name,
			           (int)(sep - p), p);
			return false;
		}
		p = *comma ? comma + 1 : comma;
	}
	return true;
}

/* After irgen (the driver's prepare): --assume, and no TMA for --emit=c
 * (its launch functions pass no tensor maps). */
static bool prepare(IrFunc *f, void *user, Diag *diag)
{
	const Options *opt = user;
	if (opt->assume && !apply_assumptions(f, opt->assume, diag))
		return false;
	if (opt->emit == EMIT_C)
		f->tma = 0;
	return true;
}

/* Generates, verifies and optimizes one kernel for each of its configs
 * (only the first when printing; each for --emit=c). Returns false on an error. */
static bool compile_kernel(Compile *cc, Module *m, Node *k)
{
	const Options *opt = cc->opt;
	Diag *diag = cc->diag;
	Arena *arena = cc->arena;
	AutotuneSpec at;
	double t0 = now_ms();
	bool ok = irgen_autotune(m, k, &at, diag, arena);
	cc->t.irgen += now_ms() - t0;
	if (!ok)
		return false;
	int configs = at.n_configs && (opt->emit == EMIT_CHECK || opt->emit == EMIT_C) ? at.n_configs : 1;
	for (int c = 0; c < configs && ok; c++) {
		int cap = opt->n_defines + (at.n_configs ? at.config_len[c] : 0);
		ConstBinding *consts = arena_alloc(arena, (size_t)(cap ? cap : 1) * sizeof *consts);
		if (!consts)
			return false;
		int defaults[OPTION_COUNT]; /* the table's, and --tma */
		for (int o = 0; o < OPTION_COUNT; o++)
			defaults[o] = option_table[o].dflt;
		defaults[OPTION_tma] = opt->tma;
		IrgenOptions io = {.consts = consts, .n_consts = const_values(opt, &at, c, consts), .defaults = defaults};
		PipelineRequest req = {
			.from = STAGE_IRGEN, .mod = m, .kernel = k, .irgen = &io, .arena = arena, .prepare = prepare,
			.user = (void *)opt, .passes = opt->passes && strcmp(opt->passes, "none") == 0 ? "" : opt->passes,
			.dump_after = opt->dump_after, .dump = cc->text, .arch = opt->arch,
			.to = opt->emit == EMIT_LLVM ? STAGE_LOWER : opt->emit >= EMIT_PTX ? STAGE_PTX : STAGE_TILE_PASSES,
		};
		PipelineResult res;
		ok = blk_pipeline_run(&req, &res, diag);
		cc->t.irgen += res.ms[STAGE_IRGEN];
		cc->t.passes += res.ms[STAGE_TILE_PASSES];
		cc->t.llvm += res.ms[STAGE_TARGET] + res.ms[STAGE_GPU_PASSES] + res.ms[STAGE_LOWER];
		cc->t.ptx += res.ms[STAGE_PTX];
		IrFunc *f = res.f;
		if (!f) {
			if (at.n_configs > 1)
				diag_note(diag, k->span, "while compiling '%s' with autotune config %d", k->name, c + 1);
			return false;
		}
		cc->t.variants++;
		if (ok && opt->emit == EMIT_IR) {
			IrPrintOpts po = {.show_locations = opt->locations};
			/* the GPU passes ran inside libblk.so, whose copy of ir/ got the
			 * hooks; blkc prints with its own (libblk.a's) */
			gpu_install_ir_hooks();
			ir_print_opts(f, cc->text, &po);
		} else if (ok && opt->emit >= EMIT_LLVM) {
			char *code = res.text;
			size_t len = res.len;
			int shared = res.shared_bytes;
			unsigned char *cubin = NULL;
			size_t cubin_len = 0;
			if (ok && (opt->emit == EMIT_CUBIN || (opt->emit == EMIT_C && opt->ptxas))) {
				t0 = now_ms();
				ok = run_ptxas(opt->ptxas, opt->arch, k->name, code, len, &cubin, &cubin_len, diag);
				cc->t.cubin += now_ms() - t0;
			}
			if (ok && opt->emit == EMIT_C) {
				if (cc->n_vars == cc->cap_vars) {
					int ncap = cc->cap_vars ? 2 * cc->cap_vars : 8;
					AotVariant *nv = realloc(cc->vars, (size_t)ncap * sizeof *nv);
					if (!nv) {
						free(code);
						free(cubin);
						return false;
					}
					cc->vars = nv;
					cc->cap_vars = ncap;
				}
				cc->vars[cc->n_vars++] = (AotVariant){
					.kernel = k->name, .config = at.n_configs ? c : -1, .consts = consts, .n_consts = io.n_consts,
					.f = f, .ptx = code, .ptx_len = len, .cubin = cubin, .cubin_len = cubin_len, .shared = shared,
					.grid = k->a ? k->a->span.src->text + k->a->span.begin : NULL,
					.grid_len = k->a ? (int)(k->a->span.end - k->a->span.begin) : 0,
				};
				continue;
			}
			if (ok)
				sb_putn(cc->text, opt->emit == EMIT_CUBIN ? (const char *)cubin : code,
				        opt->emit == EMIT_CUBIN ? cubin_len : len);
			free(code);
			free(cubin);
		}
	}
	return ok;
}

/* in_process: the time of all but ptxas (the median of its sums, for
 * several runs), or < 0 to add up the phases shown */
static void print_times(const Options *opt, const char *path, const PhaseTimes *t, double in_process, double wall,
                        int runs)
{
	fprintf(stderr, "blkc: time: %s, %d kernel variant%s%s%s", path, t->variants, t->variants == 1 ? "" : "s",
	        opt->emit >= EMIT_LLVM ? ", " : "", opt->emit >= EMIT_LLVM ? opt->arch : "");
	if (runs > 1)
		fprintf(stderr, ", medians of %d runs", runs);
	fputc('\n', stderr);
	struct { const char *name; double ms; bool shown; } rows[] = {
		{"parse+imports", t->parse, true},
		{"irgen", t->irgen, opt->emit >= EMIT_CHECK && opt->emit != EMIT_TOKENS && opt->emit != EMIT_AST},
		{"passes", t->passes, opt->emit != EMIT_TOKENS && opt->emit != EMIT_AST},
		{opt->emit == EMIT_LLVM ? "llvm lower" : "llvm lower+opt", t->llvm, opt->emit >= EMIT_LLVM},
		{"ptx emission", t->ptx, opt->emit >= EMIT_PTX},
		{"cubin (ptxas)", t->cubin, opt->emit == EMIT_CUBIN || (opt->emit == EMIT_C && opt->ptxas)},
	};
	double sum = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if (!rows[i].shown)
			continue;
		fprintf(stderr, "  %-16s %9.3f ms\n", rows[i].name, rows[i].ms);
		if (i < 5)
			sum += rows[i].ms;
	}
	if (in_process < 0)
		in_process = sum;
	fprintf(stderr, "  %-16s %9.3f ms\n", "in process", in_process);
	fprintf(stderr, "  %-16s %9.3f ms\n", "wall", wall);
}

/* Compiles one file; returns 0, 1 when it had errors, 2 when its output
 * would overwrite a file it reads. With quiet, it
 * writes neither output nor diagnostics (a --time=N run before the last);
 * *times gets the phases' times and *wall the whole file's. */
static int compile_file(const Options *opt, const char *path, FILE *out, bool quiet, PhaseTimes *times,
                        double *wall)
{
	double start = now_ms();
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	diag.max_errors = opt->max_errors;
	diag.color = opt->color;

	StrBuf text = {0};
	Compile cc = {.opt = opt, .diag = &diag, .arena = &arena, .text = &text};
	int rc = 0;
	if (opt->emit == EMIT_TOKENS || opt->emit == EMIT_AST) {
		Source src;
		double t0 = now_ms();
		if (!source_read_file(&src, path, &arena, &diag)) {
			rc = 1;
		} else if (opt->emit == EMIT_TOKENS) {
			lexer_dump(&src, &diag, &arena, &text);
		} else {
			Node *file = parse_source(&src, &diag, &arena);
			if (file && diag.errors == 0)
				ast_dump(file, &text);
		}
		cc.t.parse = now_ms() - t0;
	} else {
		ModuleSet set = {.arena = &arena, .diag = &diag, .include_dirs = opt->include_dirs,
		                 .n_include_dirs = opt->n_include_dirs, .stdlib_dir = opt->stdlib_dir,
		                 .allow_any_import = opt->allow_any_import};
		double t0 = now_ms();
		Module *m = module_load_file(&set, path);
		cc.t.parse = now_ms() - t0;
		/* -o onto a file the input imports: refused before anything is written */
		char outs[2][4200];
		for (int o = compile_outputs(opt, outs) - 1; o >= 0 && m && !quiet; o--)
			if (output_is_source("blkc", "-o", outs[o], path, &set.modules))
				m = NULL, rc = 2;
		/* -D applies to the kernels that have the parameter; one that no
		 * kernel of the file has is most likely a typo */
		for (int d = 0; m && d < opt->n_defines; d++) {
			const char *dn = opt->defines[d].name;
			bool used = irgen_is_option(dn);
			for (int i = 0; i < m->file->list.len && !used; i++) {
				Node *k = m->file->list.items[i];
				for (int j = 0; k->kind == N_KERNEL && j < k->list.len && !used; j++) {
					Node *p = k->list.items[j];
					used = strcmp(p->name, dn) == 0 && p->a && p->a->kind == N_TYPE_CONST;
				}
			}
			const char *near = used ? NULL : irgen_near_const(m, NULL, dn);
			if (!used)
				diag_plain(&diag, DIAG_ERROR, "-D %s: no kernel of '%s' has a const parameter '%s'%s%s%s", dn, path, dn,
				           near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		}
		if (m && diag.errors == 0) {
			if ((opt->emit >= EMIT_IR && opt->emit != EMIT_C) || opt->kernel) {
				Node *k = irgen_find_kernel(m, opt->kernel, &diag);
				if (k)
					compile_kernel(&cc, m, k);
			} else {
				for (int i = 0; i < m->file->list.len && !diag.stopped; i++) {
					Node *k = m->file->list.items[i];
					if (k->kind == N_KERNEL)
						compile_kernel(&cc, m, k);
				}
			}
			if (opt->emit == EMIT_C && diag.errors == 0 && !cc.n_vars)
				diag_plain(&diag, DIAG_ERROR, "'%s' has no kernel to compile", path);
			if (opt->emit == EMIT_C && diag.errors == 0 && !text.failed && !diag.out.failed && !quiet &&
			    !write_aot(&cc, path))
				rc = 1;
		}
	}
	for (int i = 0; i < cc.n_vars; i++) {
		free(cc.vars[i].ptx);
		free(cc.vars[i].cubin);
	}
	free(cc.vars);
	if (text.failed || diag.out.failed) {
		fprintf(stderr, "blkc: error: out of memory compiling '%s'\n", path);
		rc = 1;
	}
	if (text.len && diag.errors == 0 && !quiet && fwrite(text.data, 1, text.len, out) != text.len && !write_errno)
		write_errno = errno ? errno : EIO;
	sb_free(&text);
	if (diag.errors && !rc)
		rc = 1;
	if (diag.out.len && !quiet) {
		fwrite(diag.out.data, 1, diag.out.len, stderr);
		if (diag.errors && !diag.stopped)
			fprintf(stderr, "%d error%s generated.\n", diag.errors, diag.errors == 1 ? "" : "s");
	}
	*times = cc.t;
	*wall = now_ms() - start;
	diag_free(&diag);
	arena_free(&arena);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Compiles a file once, or with --time=N N times (quietly but for the
 * last), and prints its phase times: each phase's median over the runs. */
int compile_file_timed(const Options *opt, const char *path, FILE *out)
{
	/* standard input can be read once: one run */
	int runs = opt->time && opt->time_runs > 1 && strcmp(path, "-") != 0 ? opt->time_runs : 1;
	PhaseTimes *t = calloc((size_t)runs, sizeof *t);
	double *wall = calloc((size_t)runs, sizeof *wall), *v = calloc((size_t)runs, sizeof *v);
	if (!t || !wall || !v) {
		free(t), free(wall), free(v);
		fprintf(stderr, "blkc: error: out of memory for %d timed runs\n", runs);
		return 1;
	}
	int rc = 0, done = 0;
	while (done < runs && !rc) {
		rc = compile_file(opt, path, out, done < runs - 1, &t[done], &wall[done]);
		done++;
	}
	if (rc && done < runs) /* a quiet run failed: show what went wrong */
		compile_file(opt, path, out, false, &t[0], &wall[0]);
	if (opt->time && !rc) {
		static const size_t phase[] = {offsetof(PhaseTimes, parse), offsetof(PhaseTimes, irgen),
		                               offsetof(PhaseTimes, passes), offsetof(PhaseTimes, llvm),
		                               offsetof(PhaseTimes, ptx), offsetof(PhaseTimes, cubin)};
		PhaseTimes med = t[0];
		for (size_t f = 0; f < sizeof phase / sizeof phase[0]; f++) {
			for (int r = 0; r < runs; r++)
				memcpy(&v[r], (const char *)&t[r] + phase[f], sizeof v[r]);
			double m = median_of(v, runs);
			memcpy((char *)&med + phase[f], &m, sizeof m);
		}
		for (int r = 0; r < runs; r++) /* in process: each run's phases but ptxas */
			v[r] = t[r].parse + t[r].irgen + t[r].passes + t[r].llvm + t[r].ptx;
		print_times(opt, path, &med, runs > 1 ? median_of(v, runs) : -1, median_of(wall, runs), runs);
	}
	free(t), free(wall), free(v);
	return rc;
}
