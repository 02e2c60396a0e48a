/* tma_test.c: TMA for tensor-descriptor tiles (gpu/tma_plan.c, the
 * expand-descriptors marks, lower/tma_copy.c's placement), without a GPU.
 *
 *  - the plan: which descriptors get a tensor map (a K loop's dot tiles on
 *    sm_90a with BLK_TMA's flag, the base and row stride aligned to 16
 *    bytes) and the map's fields, for kernels built from source; what is
 *    left out (sm_90, no flag, unaligned, outside a loop, not a dot's, a
 *    row under 32 bytes, constant strides of the wrong size); the printed
 *    form (a comment line a map, tma = N on its loads and store);
 *  - the marks: after expand-descriptors and pipeline-dots, every load of
 *    a planned tile (and the store) is MEMF_TMA with its offsets, and the interpreter runs
 *    that IR to the same numbers as the IR without TMA and as a matmul in
 *    C, on random f16 inputs with edges masked (TMA loads are still the
 *    masked loads they were);
 *  - the placement: for every element of a tile, the byte where a copy of
 *    the map's box (atom after atom, swizzled by 16-byte units within 1024
 *    bytes as the copy engine does for 32-, 64- and 128-byte rows) puts it
 *    is the byte wgmma's operand layout (gpu/encoding.c) says it is at. */
#include "gpu/gpu.h"
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "pipeline/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
static Arena arena;

static bool check(bool ok, const char *name)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", name);
	ok ? passed++ : failed++;
	return ok;
}

/* ---- kernels from source ---- */

static const char *mm_src =
	"kernel mm(a: *f16, b: *f16, c: *f32, M: i32, N: i32, K: i32, sa: i32, sb: i32, sc: i32,\n"
	"          BM: const i32, BN: const i32, BK: const i32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    let ad = tensor_desc(a, (M, K), (sa, 1), (BM, BK));\n"
	"    let bd = tensor_desc(b, (K, N), (sb, 1), (BK, BN));\n"
	"    let cd = tensor_desc(c, (M, N), (sc, 1), (BM, BN));\n"
	"    let m0 = program_id(0) * BM;\n"
	"    let n0 = program_id(1) * BN;\n"
	"    var acc = zeros((BM, BN), f32);\n"
	"    for k in range(0, K, BK) {\n"
	"        acc = dot(ad.load((m0, k)), bd.load((k, n0)), acc);\n"
	"    }\n"
	"    cd.store((m0, n0), acc);\n"
	"}\n"
	/* a's stride a constant (64 elements: 128 bytes), b's 4 (8 bytes: no map) */
	"kernel fixed(a: *f16, b: *f16, c: *f32, M: i32, N: i32, K: i32) grid(1) {\n"
	"    let ad = tensor_desc(a, (M, K), (64, 1), (64, 64));\n"
	"    let bd = tensor_desc(b, (K, N), (4, 1), (64, 64));\n"
	"    var acc = zeros((64, 64), f32);\n"
	"    for k in range(0, K, 64) {\n"
	"        acc = dot(ad.load((0, k)), bd.load((k, 0)), acc);\n"
	"    }\n"
	"    store(c + arange(0, 64)[:, None] * 64 + arange(0, 64)[None, :], acc);\n"
	"}\n"
	/* b given as N x K rows, read transposed (attention's K^T) */
	"kernel mmt(a: *f16, b: *f16, c: *f32, M: i32, N: i32, K: i32, sa: i32, sb: i32, sc: i32,\n"
	"           BM: const i32, BN: const i32, BK: const i32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    let ad = tensor_desc(a, (M, K), (sa, 1), (BM, BK));\n"
	"    let bd = tensor_desc(b, (N, K), (sb, 1), (BN, BK));\n"
	"    let cd = tensor_desc(c, (M, N), (sc, 1), (BM, BN));\n"
	"    let m0 = program_id(0) * BM;\n"
	"    let n0 = program_id(1) * BN;\n"
	"    var acc = zeros((BM, BN), f32);\n"
	"    for k in range(0, K, BK) {\n"
	"        acc = dot(ad.load((m0, k)), trans(bd.load((n0, k))), acc);\n"
	"    }\n"
	"    cd.store((m0, n0), acc);\n"
	"}\n"
	/* stores of 4 and of 8 rows of 256 bytes (two atoms each), and of a constant */
	"kernel st4(x: *f16, y: *f16, N: i32, ld: i32) grid(1) {\n"
	"    let d = tensor_desc(y, (N, N), (ld, 1), (4, 128));\n"
	"    d.store((0, 0), load(x + arange(0, 4)[:, None] * 128 + arange(0, 128)[None, :]));\n"
	"}\n"
	"kernel st8(x: *f16, y: *f16, N: i32, ld: i32) grid(1) {\n"
	"    let d = tensor_desc(y, (N, N), (ld, 1), (8, 128));\n"
	"    d.store((0, 0), load(x + arange(0, 8)[:, None] * 128 + arange(0, 128)[None, :]));\n"
	"    d.store((8, 0), 2.0);\n"
	"}\n"
	/* a's descriptor with NaN padding, ci's an atomic_add of i32 (a
	 * reduction), c's f32 atomic_add and atomic_max per element */
	"kernel mmnan(a: *f16, b: *f16, c: *f32, ci: *i32, M: i32, N: i32, K: i32, sa: i32, sb: i32, sc: i32)\n"
	"        grid(cdiv(M, 64), cdiv(N, 64)) {\n"
	"    let ad = tensor_desc(a, (M, K), (sa, 1), (64, 64), padding_option = \"nan\");\n"
	"    let bd = tensor_desc(b, (K, N), (sb, 1), (64, 64));\n"
	"    let cd = tensor_desc(c, (M, N), (sc, 1), (64, 64));\n"
	"    let id = tensor_desc(ci, (M, N), (sc, 1), (64, 64));\n"
	"    var acc = zeros((64, 64), f32);\n"
	"    for k in range(0, K, 64) {\n"
	"        acc = dot(ad.load((0, k)), bd.load((k, 0)), acc);\n"
	"    }\n"
	"    id.atomic_add((0, 0), acc.to(i32));\n"
	"    cd.atomic_add((0, 0), acc);\n"
	"    cd.atomic_max((0, 0), acc);\n"
	"}\n"
	/* reductions the copy engine does not do as atomic_* does: float max, 16-bit integers */
	"kernel red(x: *f32, y: *i16, M: i32, N: i32, ld: i32) grid(1) {\n"
	"    let d = tensor_desc(x, (M, N), (ld, 1), (8, 32));\n"
	"    d.atomic_max((0, 0), load(x + arange(0, 8)[:, None] * 32 + arange(0, 32)[None, :]));\n"
	"    let e = tensor_desc(y, (M, N), (ld, 1), (8, 64));\n"
	"    e.atomic_add((0, 0), load(y + arange(0, 8)[:, None] * 64 + arange(0, 64)[None, :]));\n"
	"}\n"
	/* tiles no loop's dot reads: summed in a loop, and a dot outside a loop */
	"kernel other(a: *f16, b: *f16, c: *f32, M: i32, K: i32, sa: i32) grid(1) {\n"
	"    let ad = tensor_desc(a, (M, K), (sa, 1), (64, 64));\n"
	"    var s = zeros((64,), f32);\n"
	"    for k in range(0, K, 64) {\n"
	"        s = s + sum(ad.load((0, k)).to(f32), axis = 1);\n"
	"    }\n"
	"    let d = dot(ad.load((0, 0)), ad.load((0, 64)));\n"
	"    store(c + arange(0, 64), s + sum(d, axis = 1));\n"
	"}\n";

static Module *mod;
static Diag diag;

static IrFunc *build(const char *kernel, int bm, int bn, int bk, const char *arch, bool tma, bool div16,
                     const char *passes)
{
	Node *k = NULL;
	for (int i = 0; i < mod->file->list.len && !k; i++) {
		Node *n = mod->file->list.items[i];
		if (n->kind == N_KERNEL && strcmp(n->name, kernel) == 0)
			k = n;
	}
	ConstBinding consts[3] = {{.name = "BM", .i = bm}, {.name = "BN", .i = bn}, {.name = "BK", .i = bk}};
	IrgenOptions io = {.consts = consts, .n_consts = 3, .num_warps = 4, .num_stages = 3};
	IrFunc *f = k ? irgen_kernel(mod, k, &io, &diag, &arena) : NULL;
	if (!f)
		return NULL;
	for (int p = 0; div16 && p < f->n_params; p++)
		if (f->params[p].value)
			f->params[p].divisibility = 16;
	ir_set_target(f, arch);
	f->tma = tma;
	if (!pipeline_run_passes(f, passes, NULL, NULL, &diag))
		return NULL;
	return f;
}

static bool dim_is(TmaDim d, int arg, int64_t value) { return d.arg == arg && (arg >= 0 || d.value == value); }

/* The printed form: a comment line a map after the header, and each load
 * and store through a map naming it. */
static void print_case(const IrFunc *f)
{
	StrBuf text = {0};
	ir_print(f, &text);
	const char *t = text.data ? text.data : "";
	const char *want[] = {
		"\n  // tma 0: base arg 0, f16, dims [arg 3, arg 5], strides [arg 6, 1], box [128, 64], 128-byte rows\n",
		"\n  // tma 1: base arg 1, f16, dims [arg 5, arg 4], strides [arg 7, 1], box [64, 64], 128-byte rows\n",
		"\n  // tma 2: base arg 2, f32, dims [arg 3, arg 4], strides [arg 8, 1], box [128, 32], 128-byte rows\n",
		"{mask, other, tma = 0}", "{mask, other, tma = 1}", "{mask, tma = 2}"};
	bool ok = true;
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (!strstr(t, want[i])) {
			printf("     missing: %s\n", want[i]);
			ok = false;
		}
	check(ok, "printed: a comment line a map, and tma = N on the loads and the store through it");
	sb_free(&text);
}

static void plan_cases(void)
{
	const char *tile = "canonicalize,cse,dce,expand-descriptors";
	IrFunc *f = build("mm", 128, 128, 64, "sm_90a", true, true, tile);
	bool three = f && f->n_tmaps == 3;
	check(three, "mm, sm_90a, arguments by 16: three maps (a and b for the loop's dot, c for the store)");
	if (three) {
		const TmaMap *a = &f->tmaps[0], *b = &f->tmaps[1], *c = &f->tmaps[2];
		check(a->base_arg == 0 && a->elem == SK_F16 && a->rank == 2 && dim_is(a->dim[0], 3, 0) &&
		          dim_is(a->dim[1], 5, 0) && dim_is(a->stride[0], 6, 0) && dim_is(a->stride[1], -1, 1) &&
		          a->box[0] == 128 && a->box[1] == 64 && a->row_bytes == 128,
		      "map 0: a, f16, sizes (M, K), strides (sa, 1), box 128 x 64, 128-byte rows");
		check(b->base_arg == 1 && dim_is(b->dim[0], 5, 0) && dim_is(b->dim[1], 4, 0) && dim_is(b->stride[0], 7, 0) &&
		          b->box[0] == 64 && b->box[1] == 64 && b->row_bytes == 128,
		      "map 1: b, sizes (K, N), strides (sb, 1), box 64 x 64 (two copies a 64 x 128 tile)");
		check(c->base_arg == 2 && c->elem == SK_F32 && dim_is(c->dim[0], 3, 0) && dim_is(c->dim[1], 4, 0) &&
		          dim_is(c->stride[0], 8, 0) && c->box[0] == 128 && c->box[1] == 32 && c->row_bytes == 128,
		      "map 2: c (the store), f32, sizes (M, N), strides (sc, 1), box 128 x 32 (four copies)");
		print_case(f);
	}
	f = build("mm", 64, 64, 16, "sm_90a", true, true, tile);
	check(f && f->n_tmaps == 3 && f->tmaps[0].row_bytes == 32 && f->tmaps[0].box[0] == 64 && f->tmaps[0].box[1] == 16 &&
	          f->tmaps[1].row_bytes == 128 && f->tmaps[1].box[0] == 16 && f->tmaps[1].box[1] == 64,
	      "BK = 16: a's rows of 32 bytes (box 64 x 16), b's of 128 (box 16 x 64)");
	f = build("mm", 64, 32, 32, "sm_90a", true, true, tile);
	check(f && f->n_tmaps == 3 && f->tmaps[0].row_bytes == 64 && f->tmaps[0].box[1] == 32 &&
	          f->tmaps[1].row_bytes == 64 && f->tmaps[1].box[0] == 32,
	      "BK = 32, BN = 32: rows of 64 bytes, boxes 64 x 32 and 32 x 32");
	f = build("mm", 64, 8, 32, "sm_90a", true, true, tile);
	check(f && f->n_tmaps == 2 && f->tmaps[0].base_arg == 0 && f->tmaps[1].base_arg == 2 && f->tmaps[1].row_bytes == 32,
	      "BN = 8: b's rows of 16 bytes take no map, a's do, and c's rows of 32 bytes");
	f = build("mm", 128, 128, 64, "sm_90", true, true, tile);
	check(f && f->n_tmaps == 0, "sm_90 (no wgmma): no map");
	f = build("mm", 128, 128, 64, "sm_90a", false, true, tile);
	check(f && f->n_tmaps == 0, "without the flag (BLK_TMA, blkc --tma): no map");
	f = build("mm", 128, 128, 64, "sm_90a", true, false, tile);
	check(f && f->n_tmaps == 0, "arguments not known to be multiples of 16: no map");
	f = build("fixed", 0, 0, 0, "sm_90a", true, true, tile);
	check(f && f->n_tmaps == 1 && f->tmaps[0].base_arg == 0 && dim_is(f->tmaps[0].stride[0], -1, 64),
	      "constant row strides: 64 f16 (128 bytes) takes a map, 4 (8 bytes) does not");
	f = build("other", 0, 0, 0, "sm_90a", true, true, tile);
	check(f && f->n_tmaps == 0, "a tile summed in a loop, a dot outside a loop: no map");
	f = build("st4", 0, 0, 0, "sm_90a", true, true, tile);
	check(f && f->n_tmaps == 0, "a store of 4 rows of 256 bytes: no map (its second atom would start inside a "
	                            "1024-byte swizzle period)");
	f = build("mmnan", 0, 0, 0, "sm_90a", true, true, tile);
	check(f && f->n_tmaps == 3 && f->tmaps[0].nan_fill && f->tmaps[0].base_arg == 0 && !f->tmaps[1].nan_fill &&
	          f->tmaps[2].base_arg == 3 && f->tmaps[2].store && !f->tmaps[2].nan_fill,
	      "NaN padding: a's map fills with NaN, b's not; ci's i32 atomic_add reduces through a map (c's float "
	      "add and max do not)");
	if (f) {
		int tma = 0, plain = 0;
		for (const Op *op = f->body.first; op; op = op->next)
			if (op->code == OP_ATOMIC_RMW)
				(op->attr[3] & MEMF_TMA) && op->attr[4] == 2 && op->attr[0] == ATOM_ADD ? tma++ : plain++;
		check(tma == 1 && plain == 2, "the i32 atomic_add an atomic_rmw marked MEMF_TMA (map 2), the f32 add and "
		                              "max plain ones");
	}
	f = build("red", 0, 0, 0, "sm_90a", true, true, tile);
	check(f && f->n_tmaps == 0, "float atomic_max and i16 atomic_add through descriptors: no map");
	f = build("st8", 0, 0, 0, "sm_90a", true, true, tile);
	check(f && f->n_tmaps == 1 && f->tmaps[0].box[0] == 8 && f->tmaps[0].box[1] == 64,
	      "a store of 8 rows of 256 bytes: a map (box 8 x 64); the store of a constant stays plain");
}

/* ---- the marks, and the interpreter on them ---- */

static int count_tma(const Region *r, OpCode code, int maps, bool *shaped)
{
	int n = 0;
	for (const Op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->n_regions; i++)
			n += count_tma(&op->regions[i], code, maps, shaped);
		if (op->code == code && (op->attr[0] & MEMF_TMA)) {
			n++;
			*shaped &= op->n_operands == 5 && op->attr[4] >= 0 && op->attr[4] < maps;
		}
	}
	return n;
}

static uint32_t rng = 12345;
static double rnd(void)
{
	rng = rng * 1664525u + 1013904223u;
	return (double)(rng >> 8) / (1 << 24) * 2 - 1;
}

static bool run(const IrFunc *f, uint16_t *a, uint16_t *b, float *c, int M, int N, int K, int sb, int bm, int bn)
{
	InterpArg args[9] = {interp_ptr(a), interp_ptr(b), interp_ptr(c), interp_int(M), interp_int(N), interp_int(K),
	                     interp_int(K), interp_int(sb), interp_int(N)};
	InterpBuffer bufs[3] = {{"a", a, (size_t)M * K * 2}, {"b", b, (size_t)K * N * 2}, {"c", c, (size_t)M * N * 4}};
	InterpOptions opt = {.grid = {(M + bm - 1) / bm, (N + bn - 1) / bn, 1}};
	return interp_run(f, args, 9, bufs, 3, &opt, &diag);
}

/* kernel mm, or mmt (b given as N x K, read transposed) */
static void interp_cases(const char *kernel, bool trans)
{
	const char *passes = "canonicalize,cse,dce,expand-descriptors,pipeline-dots,cse,dce";
	IrFunc *f = build(kernel, 64, 64, 32, "sm_90a", true, true, passes);
	IrFunc *g = build(kernel, 64, 64, 32, "sm_90a", false, true, passes);
	bool shaped = true;
	int n = f ? count_tma(&f->body, OP_LOAD, f->n_tmaps, &shaped) : 0;
	int stores = f ? count_tma(&f->body, OP_STORE, f->n_tmaps, &shaped) : 0;
	char what[200];
	snprintf(what, sizeof what, "%s after pipeline-dots: four TMA loads (a and b%s, before the loop and ahead) and c's "
	         "TMA store, each with its two offsets", kernel, trans ? " transposed" : "");
	check(f && f->n_tmaps == 3 && n == 4 && stores == 1 && shaped, what);
	bool none = true;
	snprintf(what, sizeof what, "%s without the flag: no TMA load or store", kernel);
	check(g && count_tma(&g->body, OP_LOAD, 0, &none) + count_tma(&g->body, OP_STORE, 0, &none) == 0, what);
	if (!f || !g)
		return;
	static const int sizes[][3] = {{64, 64, 64}, {100, 72, 200}, {1, 1, 32}, {65, 130, 31}, {128, 64, 0}};
	for (int s = 0; s < 5; s++) {
		int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
		uint16_t *a = malloc((size_t)(M * K + 1) * 2), *b = malloc((size_t)(K * N + 1) * 2);
		float *c1 = malloc((size_t)M * N * 4), *c2 = malloc((size_t)M * N * 4);
		double *ref = malloc((size_t)M * N * sizeof *ref);
		for (int i = 0; i < M * K; i++)
			a[i] = (uint16_t)fp_encode(SK_F16, rnd());
		for (int i = 0; i < K * N; i++)
			b[i] = (uint16_t)fp_encode(SK_F16, rnd());
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double acc = 0;
				for (int k = 0; k < K; k++)
					acc += fp_decode(SK_F16, a[i * K + k]) * fp_decode(SK_F16, b[trans ? j * K + k : k * N + j]);
				ref[i * N + j] = acc;
			}
		int sb = trans ? K : N;
		bool ok = run(f, a, b, c1, M, N, K, sb, 64, 64) && run(g, a, b, c2, M, N, K, sb, 64, 64);
		double worst = 0;
		for (int i = 0; ok && i < M * N; i++) {
			double e = c1[i] - ref[i];
			worst = e < 0 ? (-e > worst ? -e : worst) : (e > worst ? e : worst);
			ok = memcmp(&c1[i], &c2[i], 4) == 0;
		}
		char name[160];
		snprintf(name, sizeof name, "interpreter, %s M N K = %d %d %d: TMA-marked IR gives the IR's numbers, "
		         "and C's (max error %.2g)", kernel, M, N, K, worst);
		check(ok && worst < 1e-3 * (K ? K : 1), name);
		free(a);
		free(b);
		free(c1);
		free(c2);
		free(ref);
	}
}

/* ---- the placement ---- */

static unsigned swizzled(const Encoding *s, unsigned c)
{
	unsigned a = c;
	for (int j = 0; j < s->n_index_bits; j++)
		if (c >> j & 1)
			a ^= s->swizzle[j];
	return a;
}

/* Where the copy engine puts element (r, c) of an R x C tile copied as
 * boxes of R rows of `row` bytes (atom after atom), swizzled. */
static unsigned tma_byte(int R, int eb, int row, int r, int c)
{
	int e = row / eb;
	unsigned byte = (unsigned)((c / e) * R * row + r * row + (c % e) * eb);
	unsigned units = (unsigned)row / 16 - 1; /* 7, 3 or 1: the 16-byte unit bits a row has */
	return byte ^ (((byte >> 7) & units) << 4);
}

/* B read K-major (8-bit and tf32 always, 16-bit where its registers run
 * along K): the tile loaded as N x K rows (attention's K, transposed on
 * the way) is copied as such; element (n, k) of it must lie where the
 * scratch of B = its transpose (K x N, K contiguous) has element (k, n). */
static void placement_kmajor(int *cases, int *bad, char *first, size_t first_size)
{
	static const ScalarKind kinds[] = {SK_F8E4M3, SK_F16, SK_F32};
	for (int ki = 0; ki < 3; ki++)
		for (int lk = 3; lk <= 8; lk++)
			for (int ln = 3; ln <= 8; ln++) {
				ScalarKind k = kinds[ki];
				int eb = scalar_bits(k) / 8, K = 1 << lk, N = 1 << ln;
				if (K * eb < 32 || N > 256)
					continue;
				Type t = type_block(type_scalar(k), 2, (int32_t[]){K, N});
				Lin src;
				memset(&src, -1, sizeof src);
				src.n_reg = 1, src.n_lane = 5, src.n_warp = 2;
				src.reg[0] = (int8_t)ln; /* registers along K: B K-major */
				Encoding e;
				if (!wgmma_operand_layout(&e, &src, t, 1, 256) || e.wgmma_fast != 0)
					continue;
				(*cases)++;
				int row = K * eb >= 128 ? 128 : K * eb;
				for (int n = 0; n < N; n++)
					for (int kk = 0; kk < K; kk++) {
						unsigned want = tma_byte(N, eb, row, n, kk);
						unsigned got = swizzled(&e, (unsigned)(kk * N + n)) * (unsigned)eb;
						if (want != got && !(*bad)++)
							snprintf(first, first_size, " (first: %s B^T %d x %d, element %d %d: copy %u, wgmma %u)",
							         scalar_name(k), N, K, n, kk, want, got);
					}
			}
}

static void placement_cases(void)
{
	static const ScalarKind kinds[] = {SK_F8E4M3, SK_F16, SK_F32};
	int cases = 0, bad = 0, kcases = 0, kbad = 0;
	char first[160] = "", kfirst[160] = "";
	for (int ki = 0; ki < 3; ki++)
		for (int op = 0; op < 2; op++)
			for (int lr = 0; lr <= 8; lr++)
				for (int lc = 3; lc <= 8; lc++) {
					ScalarKind k = kinds[ki];
					int eb = scalar_bits(k) / 8, R = 1 << lr, C = 1 << lc;
					if (C * eb < 32 || (op == 1 && eb != 2))
						continue; /* no row; B tiles along N are 16-bit only */
					if (C * eb > 128 && R * 128 % 1024)
						continue; /* several atoms under 8 rows: the plan makes no map (tma_plan.c) */
					Type t = type_block(type_scalar(k), 2, (int32_t[]){R, C});
					Lin src;
					memset(&src, -1, sizeof src);
					src.n_reg = 1, src.n_lane = 5, src.n_warp = 2;
					src.reg[0] = 0; /* registers along the columns: B stays along N */
					Encoding e;
					if (!wgmma_operand_layout(&e, &src, t, op, 256) || e.wgmma_fast != 1)
						continue;
					cases++;
					int row = C * eb >= 128 ? 128 : C * eb;
					for (int r = 0; r < R; r++)
						for (int c = 0; c < C; c++) {
							unsigned want = tma_byte(R, eb, row, r, c);
							unsigned got = swizzled(&e, (unsigned)(r * C + c)) * (unsigned)eb;
							if (want != got && !bad++)
								snprintf(first, sizeof first, " (first: %s %s %d x %d, element %d %d: copy %u, "
								         "wgmma %u)", scalar_name(k), op ? "B" : "A", R, C, r, c, want, got);
						}
				}
	char name[320];
	snprintf(name, sizeof name, "every element of %d tile shapes (A and B, 8-, 16- and 32-bit, 32- to 128-byte rows) "
	         "lies where the copy engine puts it%s", cases, first);
	check(cases >= 40 && !bad, name);
	placement_kmajor(&kcases, &kbad, kfirst, sizeof kfirst);
	snprintf(name, sizeof name, "K-major B of %d shapes (8-, 16- and 32-bit): a transposed tile's copy lies where "
	         "wgmma reads B%s", kcases, kfirst);
	check(kcases >= 30 && !kbad, name);
}

int main(void)
{
	diag_init(&diag);
	diag.max_errors = 0;
	Source src;
	source_from_string(&src, "tma.tile", mm_src, strlen(mm_src), &arena);
	ModuleSet set = {.arena = &arena, .diag = &diag, .stdlib_dir = "stdlib"};
	mod = module_load_source(&set, &src);
	if (!check(mod && !diag.errors, "the kernels compile")) {
		fputs(diag.out.data ? diag.out.data : "", stdout);
		printf("%d passed, %d failed\n", passed, failed);
		return 1;
	}
	plan_cases();
	interp_cases("mm", false);
	interp_cases("mmt", true);
	placement_cases();
	if (diag.errors)
		fputs(diag.out.data ? diag.out.data : "", stdout);
	diag_free(&diag);
	arena_free(&arena);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
