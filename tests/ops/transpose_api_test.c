/* tests/ops: transposes and permutes of whole tiles as programs write them
 * (issue 14): a tiled 2-D transpose of an M x N matrix, edges masked; a
 * batched one (a 3-D tile, its last two axes swapped); every permutation of
 * a 3-D tile; each for every element type, against C references. On the
 * GPU these go through the conversions of docs/compiler.md ("Conversions
 * that keep both sides wide"): sizes that are multiples of 16 take the
 * 16-byte paths, the others the scalar ones. Exact: these move values. */
#include "ops.h"

static const dt TYPES[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32,
                           DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};

enum { PAD = 64 }; /* elements after each output, which no store may touch */

static arr random_arr(dt t, int64_t n)
{
	arr a = arr_new(t, n);
	fill_random(a, 1000);
	return a;
}

/* Runs src on x into an output of want.n + PAD zeros; compares all of it. */
static void run_case(const char *src, const blk_arg *args, int n_args, blk_devptr dout, arr want, grid3 grid,
                     const arr *ins, const char *name)
{
	bool ok = run_kernel(src, NULL, args, n_args, NO_CONSTS, grid) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, want.t, want.n), want, ins, 1);
	result(ok, "%s", name);
}

/* ---- tiled 2-D transpose --------------------------------------------------------- */

static const char *T2_SRC =
	"kernel k(x: *$T, y: *$T, M: i32, N: i32) {\n"
	"    let rm = program_id(0) * $BM + arange(0, $BM);\n"
	"    let rn = program_id(1) * $BN + arange(0, $BN);\n"
	"    let mask = (rm < M)[:, None] & (rn < N)[None, :];\n"
	"    let tile = load(x + rm[:, None] * N + rn[None, :], mask = mask);\n"
	"    store(y + rn[:, None] * M + rm[None, :], $EXPR, mask = trans(mask));\n"
	"}\n";

static void transpose2_case(dt t, int M, int N, int bm, int bn, bool twice)
{
	arr x = random_arr(t, (int64_t)M * N), want = arr_new(t, (int64_t)M * N + PAD);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			val v = get_v(x, (int64_t)i * N + j);
			set_v(want, (int64_t)j * M + i, twice ? binop_ref("+", t, v, v) : v);
		}
	char sbm[16], sbn[16], name[120];
	snprintf(sbm, sizeof sbm, "%d", bm);
	snprintf(sbn, sizeof sbn, "%d", bn);
	snprintf(name, sizeof name, "tiled transpose %s %d x %d, tiles %d x %d%s", dts[t].name, M, N, bm, bn,
	         twice ? ", of tile + tile" : "");
	const char *src = render(T2_SRC, "T", dts[t].name, "BM", sbm, "BN", sbn, "EXPR",
	                         twice ? "trans(tile + tile)" : "trans(tile)", NULL);
	blk_devptr dx = dev_from(x), dy = dev_zeros(t, want.n);
	unsigned gm = (unsigned)((M + bm - 1) / bm), gn = (unsigned)((N + bn - 1) / bn);
	run_case(src, ARGS(P(dx), P(dy), I(M), I(N)), dy, want, GRID(gm, gn, 1), &x, name);
}

/* ---- batched transpose: a 3-D tile, axes 1 and 2 swapped -------------------------- */

static const char *T3_SRC =
	"kernel k(x: *$T, y: *$T, B: i32, M: i32, N: i32) {\n"
	"    let rb = program_id(2) * 2 + arange(0, 2);\n"
	"    let rm = program_id(0) * 32 + arange(0, 32);\n"
	"    let rn = program_id(1) * 16 + arange(0, 16);\n"
	"    let mask = (rb < B)[:, None, None] & (rm < M)[None, :, None] & (rn < N)[None, None, :];\n"
	"    let tile = load(x + rb[:, None, None] * (M * N) + rm[None, :, None] * N + rn[None, None, :], mask = mask);\n"
	"    store(y + rb[:, None, None] * (M * N) + rn[None, :, None] * M + rm[None, None, :],\n"
	"          permute(tile, (0, 2, 1)), mask = permute(mask, (0, 2, 1)));\n"
	"}\n";

static void batched_case(dt t, int B, int M, int N)
{
	int64_t n = (int64_t)B * M * N;
	arr x = random_arr(t, n), want = arr_new(t, n + PAD);
	for (int b = 0; b < B; b++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++)
				set_v(want, ((int64_t)b * N + j) * M + i, get_v(x, ((int64_t)b * M + i) * N + j));
	char name[120];
	snprintf(name, sizeof name, "batched transpose %s %d x %d x %d, tiles 2 x 32 x 16", dts[t].name, B, M, N);
	blk_devptr dx = dev_from(x), dy = dev_zeros(t, want.n);
	grid3 g = {(unsigned)((M + 31) / 32), (unsigned)((N + 15) / 16), (unsigned)((B + 1) / 2)};
	run_case(render(T3_SRC, "T", dts[t].name, NULL), ARGS(P(dx), P(dy), I(B), I(M), I(N)), dy, want, g, &x, name);
}

/* ---- every permutation of an (8, 16, 32) tile ------------------------------------ */

static const char *P3_SRC =
	"kernel k(x: *$T, y: *$T) {\n"
	"    let v = load(x + arange(0, 8)[:, None, None] * 512 + arange(0, 16)[None, :, None] * 32 +\n"
	"                 arange(0, 32)[None, None, :]);\n"
	"    let t = permute(v, ($P0, $P1, $P2));\n"
	"    store(y + arange(0, $D0)[:, None, None] * ($D1 * $D2) + arange(0, $D1)[None, :, None] * $D2 +\n"
	"          arange(0, $D2)[None, None, :], t);\n"
	"}\n";

static void permute_case(dt t, const int *perm)
{
	int dims[3] = {8, 16, 32}, od[3] = {dims[perm[0]], dims[perm[1]], dims[perm[2]]};
	arr x = random_arr(t, 4096), want = arr_new(t, 4096 + PAD);
	for (int a = 0; a < od[0]; a++)
		for (int b = 0; b < od[1]; b++)
			for (int c = 0; c < od[2]; c++) {
				int in[3];
				in[perm[0]] = a;
				in[perm[1]] = b;
				in[perm[2]] = c;
				set_v(want, (a * od[1] + b) * od[2] + c, get_v(x, (in[0] * 16 + in[1]) * 32 + in[2]));
			}
	char s[6][8], name[100];
	for (int i = 0; i < 3; i++) {
		snprintf(s[i], 8, "%d", perm[i]);
		snprintf(s[3 + i], 8, "%d", od[i]);
	}
	snprintf(name, sizeof name, "permute (8, 16, 32) by (%d, %d, %d) %s", perm[0], perm[1], perm[2], dts[t].name);
	const char *src = render(P3_SRC, "T", dts[t].name, "P0", s[0], "P1", s[1], "P2", s[2], "D0", s[3], "D1", s[4],
	                         "D2", s[5], NULL);
	blk_devptr dx = dev_from(x), dy = dev_zeros(t, want.n);
	run_case(src, ARGS(P(dx), P(dy)), dy, want, GRID(1, 1, 1), &x, name);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	static const int perms[][3] = {{0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
	for (int i = 0; i < COUNT(TYPES); i++) {
		dt t = TYPES[i];
		transpose2_case(t, 96, 80, 64, 64, false); /* multiples of 16: 16-byte accesses on the GPU */
		transpose2_case(t, 100, 72, 64, 32, false); /* odd edges: scalar */
		batched_case(t, 3, 48, 40);
		for (int p = 0; p < COUNT(perms); p++)
			permute_case(t, perms[p]);
	}
	transpose2_case(DT_F32, 128, 96, 32, 64, true);
	transpose2_case(DT_I32, 64, 64, 64, 64, true);
	transpose2_case(DT_F16, 200, 136, 128, 64, false);
	return ops_finish();
}
