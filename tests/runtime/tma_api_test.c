/* Tensor maps against the stand-in driver (fake_cuda.c): with BLK_TMA=1 on
 * a 9.0 device (sm_90a), a kernel whose loop loads descriptor tiles for a
 * dot gets one tensor map per descriptor after its own parameters; each
 * launch encodes them from its arguments (the stand-in writes what it was
 * given into the map, and records the maps a launch passes), or copies
 * those of a recent launch with the same arguments (the variant's cache,
 * also from several threads at once), so this
 * checks the map's type, address, sizes, row stride, box and swizzle
 * against the arguments; the PTX copies with cp.async.bulk.tensor; a launch
 * whose arguments no map can describe (a size of 0, overlapping rows) runs
 * the variant without TMA; an encoding the driver refuses is an error that
 * names the map; without BLK_TMA, and on the disk cache's other key, no map
 * is passed. A descriptor with padding_option = "nan" gets a map filling
 * with NaN, and a desc atomic_add a map its reduction goes through. */
#include "blk.h"
#include "fake_cuda.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FakeCuda fc;
static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

/* C = A B through descriptors (a K loop of dots), and one descriptor
 * whose tile no dot reads (no map for it). */
static const char *source =
	"kernel mm(a: *T, b: *T, c: *f32, M: i32, N: i32, K: i32, sa: i32, sb: i32, sc: i32,\n"
	"          T: const type, BM: const i32, BN: const i32, BK: const i32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    let ad = tensor_desc(a, (M, K), (sa, 1), (BM, BK));\n"
	"    let bd = tensor_desc(b, (K, N), (sb, 1), (BK, BN));\n"
	"    let cd = tensor_desc(c, (M, N), (sc, 1), (BM, BN));\n"
	"    let m0 = program_id(0) * BM;\n"
	"    let n0 = program_id(1) * BN;\n"
	"    var acc = cd.load((m0, n0));\n"
	"    for k in range(0, K, BK) {\n"
	"        acc = dot(ad.load((m0, k)), bd.load((k, n0)), acc);\n"
	"    }\n"
	"    cd.store((m0, n0), acc);\n"
	"}\n";

typedef struct Run {
	blk_kernel *k;
	blk_devptr a, b, c;
	const char *type;
	int bm, bn, bk;
} Run;

/* A launch's arguments and options (c's row stride sc, N unless given). */
typedef struct Request {
	blk_arg args[9];
	blk_const consts[4];
	blk_launch_options opt;
} Request;

static void request(Request *q, const Run *r, int M, int N, int K, int sa, int sb, int sc)
{
	blk_devptr ptrs[3] = {r->a, r->b, r->c};
	int64_t ints[6] = {M, N, K, sa, sb, sc};
	for (int i = 0; i < 3; i++)
		q->args[i] = (blk_arg){.kind = BLK_ARG_PTR, .v.ptr = ptrs[i]};
	for (int i = 0; i < 6; i++)
		q->args[3 + i] = (blk_arg){.kind = BLK_ARG_INT, .v.i = ints[i]};
	q->consts[0] = (blk_const){.name = "T", .type = r->type};
	q->consts[1] = (blk_const){.name = "BM", .i = r->bm};
	q->consts[2] = (blk_const){.name = "BN", .i = r->bn};
	q->consts[3] = (blk_const){.name = "BK", .i = r->bk};
	q->opt = (blk_launch_options){.consts = q->consts, .n_consts = 4, .num_warps = 4, .num_stages = 3};
}

static blk_status launch_sc(const Run *r, int M, int N, int K, int sa, int sb, int sc, FakeLaunch *out)
{
	Request q;
	request(&q, r, M, N, K, sa, sb, sc);
	blk_status st = blk_launch(r->k, q.args, 9, &q.opt);
	fc.last_launch(out);
	return st;
}

static blk_status launch(const Run *r, int M, int N, int K, int sa, int sb, FakeLaunch *out)
{
	return launch_sc(r, M, N, K, sa, sb, N, out);
}

static const char *ptx_of(const Run *r, int M, int N, int K, int sa, int sb)
{
	Request q;
	request(&q, r, M, N, K, sa, sb, N);
	blk_compile_info info;
	return blk_kernel_compile(r->k, q.args, 9, &q.opt, &info) == BLK_SUCCESS ? info.ptx : NULL;
}

/* A map the stand-in encoded: these fields. */
static int map_is(const FakeTensorMap *m, int dtype, blk_devptr base, long long rows, long long cols,
                  long long stride_bytes, unsigned box_rows, unsigned box_cols, int swizzle)
{
	return m->magic == FAKE_TMAP_MAGIC && m->dtype == dtype && m->rank == 2 && m->address == base &&
	       m->dims[0] == (unsigned long long)cols && m->dims[1] == (unsigned long long)rows &&
	       m->strides[0] == (unsigned long long)stride_bytes && m->box[0] == box_cols && m->box[1] == box_rows &&
	       m->swizzle == swizzle;
}

/* A context on the stand-in's device and the module of `source`, the case
 * `what` passing or failing by whether they came. */
static blk_module *load(blk_context **ctx, const char *what)
{
	blk_module *m = NULL;
	if (blk_context_create(BLK_BACKEND_GPU, 0, ctx) != BLK_SUCCESS ||
	    blk_module_load_source(*ctx, "mm.tile", source, strlen(source), NULL, &m) != BLK_SUCCESS)
		m = NULL;
	expect(m != NULL, what);
	return m;
}

/* mm for f16 tiles of 128 x 128 x 64, over three buffers of 4 MiB. */
static Run f16_run(blk_context *ctx, blk_module *m)
{
	Run r = {.type = "f16", .bm = 128, .bn = 128, .bk = 64};
	blk_kernel_get(m, "mm", &r.k);
	blk_malloc(ctx, 1 << 22, &r.a);
	blk_malloc(ctx, 1 << 22, &r.b);
	blk_malloc(ctx, 1 << 22, &r.c);
	return r;
}

static void with_tma(void)
{
	blk_context *ctx = NULL;
	blk_module *m = load(&ctx, "BLK_TMA=1: a context on the stand-in's 9.0 device, the module loaded");
	if (!m)
		return;
	Run r = f16_run(ctx, m);
	const char *ptx = ptx_of(&r, 256, 256, 512, 512, 256);
	expect(ptx && strstr(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global") &&
	           strstr(ptx, "cp.async.bulk.tensor.2d.global.shared::cta") && strstr(ptx, "mbarrier.try_wait.parity") &&
	           strstr(ptx, ".param .align 64 .b8 mm_param_9[128]") && strstr(ptx, ".param .align 64 .b8 mm_param_10[128]") &&
	           strstr(ptx, ".param .align 64 .b8 mm_param_11[128]") && !strstr(ptx, "mm_param_12"),
	       "f16: the PTX copies with TMA (the loop's tiles in, c out) and takes three tensor maps after its nine "
	       "parameters");
	long before = fc.get("encodes", 0);
	FakeLaunch l;
	blk_status st = launch(&r, 256, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && l.n_params == 12 && l.n_maps == 3, "f16: a launch passes 12 parameters, 3 maps");
	expect(l.n_maps == 3 && map_is(&l.maps[0], 6, r.a, 256, 512, 512 * 2, 128, 64, 3),
	       "f16: map 0 is a: FLOAT16, 256 x 512, rows 1024 bytes apart, box 128 x 64, 128-byte swizzle");
	expect(l.n_maps == 3 && map_is(&l.maps[1], 6, r.b, 512, 256, 256 * 2, 64, 64, 3),
	       "f16: map 1 is b: 512 x 256, rows 512 bytes apart, box 64 x 64 (two copies a tile of 128 columns)");
	expect(l.n_maps == 3 && map_is(&l.maps[2], 7, r.c, 256, 256, 256 * 4, 128, 32, 3),
	       "f16: map 2 is c (the store): FLOAT32, 256 x 256, box 128 x 32");
	expect(fc.get("encodes", 0) == before + 3, "f16: a launch encodes each map once");

	/* odd sizes: the maps carry the real bounds (the copies read zeros past them) */
	st = launch(&r, 100, 208, 300, 304, 256, &l);
	expect(st == BLK_SUCCESS && l.n_maps == 3 && map_is(&l.maps[0], 6, r.a, 100, 300, 304 * 2, 128, 64, 3) &&
	           map_is(&l.maps[1], 6, r.b, 300, 208, 256 * 2, 64, 64, 3) &&
	           map_is(&l.maps[2], 7, r.c, 100, 208, 208 * 4, 128, 32, 3),
	       "f16, M N K = 100 208 300: the maps' sizes are the arguments, not the tiles'");

	/* arguments no map can describe: the variant without TMA */
	int launches = fc.launches();
	st = launch(&r, 256, 256, 0, 512, 256, &l);
	expect(st == BLK_SUCCESS && fc.launches() == launches + 1 && l.n_params == 9 && l.n_maps == 0,
	       "K = 0 (a size no map takes): the launch runs the variant without TMA, nine parameters");
	st = launch(&r, 256, 256, 512, 256, 256, &l); /* rows of a 256 apart but 512 long: they overlap */
	expect(st == BLK_SUCCESS && l.n_params == 9 && l.n_maps == 0,
	       "a's rows closer than a row: the variant without TMA");
	st = launch(&r, 256, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && l.n_maps == 3, "the same kernel with fitting arguments again: TMA again");
	/* c's rows 256 apart but 206 f32 long (824 bytes, not whole 16-byte
	 * units): the copy engine would write a store box's row end up to the
	 * next 16 bytes, past the tensor, so the launch takes no map */
	st = launch_sc(&r, 256, 206, 512, 512, 256, 256, &l);
	expect(st == BLK_SUCCESS && l.n_params == 9 && l.n_maps == 0,
	       "a stored tensor whose rows are not whole 16-byte units (206 f32): the variant without TMA");
	st = launch_sc(&r, 256, 208, 300, 304, 256, 256, &l);
	expect(st == BLK_SUCCESS && l.n_maps == 3 && map_is(&l.maps[0], 6, r.a, 256, 300, 304 * 2, 128, 64, 3) &&
	           map_is(&l.maps[2], 7, r.c, 256, 208, 256 * 4, 128, 32, 3),
	       "a loaded tensor whose rows are not whole 16-byte units (K = 300 f16) and a stored one whose rows are "
	       "(208 f32, 256 apart): TMA, the maps' sizes the arguments'");
	st = launch(&r, 256, 256, 512, 520, 256, &l); /* not a multiple of 16: another specialization */
	expect(st == BLK_SUCCESS && l.n_maps == 2 && map_is(&l.maps[0], 6, r.b, 512, 256, 512, 64, 64, 3),
	       "a row stride not a multiple of 16: a's tiles without TMA (b's and c's maps only)");

	/* the maps of recent launches are kept: the same arguments encode nothing */
	before = fc.get("encodes", 0);
	st = launch(&r, 256, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && l.n_maps == 3 && fc.get("encodes", 0) == before &&
	           map_is(&l.maps[0], 6, r.a, 256, 512, 512 * 2, 128, 64, 3) &&
	           map_is(&l.maps[2], 7, r.c, 256, 256, 256 * 4, 128, 32, 3),
	       "a launch with a recent launch's arguments: its maps again, none encoded");
	blk_devptr a2;
	blk_malloc(ctx, 1 << 22, &a2);
	Run r2 = r;
	r2.a = a2;
	st = launch(&r2, 256, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && fc.get("encodes", 0) == before + 3 && map_is(&l.maps[0], 6, a2, 256, 512, 1024, 128, 64, 3),
	       "another base for a: the maps encoded again, a's with the new base");
	st = launch(&r, 256, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && fc.get("encodes", 0) == before + 3 && map_is(&l.maps[0], 6, r.a, 256, 512, 1024, 128, 64, 3),
	       "back to the first base: its maps from the cache");
	for (int i = 1; i <= 200; i++) /* 200 other sizes: more than the cache keeps */
		launch(&r, 256, 256 - 16 * (i % 8), 512 - 16 * (i / 8), 512, 256, &l); /* one specialization */
	before = fc.get("encodes", 0);
	st = launch(&r, 256, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && fc.get("encodes", 0) == before + 3 && map_is(&l.maps[0], 6, r.a, 256, 512, 1024, 128, 64, 3),
	       "after 200 launches of other sizes: the first sizes' maps encoded again");
	st = launch(&r, 256, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && fc.get("encodes", 0) == before + 3, "and kept again");

	fc.fail("cuTensorMapEncodeTiled", 1 /* CUDA_ERROR_INVALID_VALUE */, 1, NULL);
	st = launch(&r, 96, 256, 512, 512, 256, &l);
	expect(st == BLK_ERROR_LAUNCH && strstr(blk_last_error(), "kernel 'mm': tensor map 0 (96 x 512 elements") &&
	           strstr(blk_last_error(), "cuTensorMapEncodeTiled"),
	       "the driver refusing a map: BLK_ERROR_LAUNCH naming the kernel, the map and its sizes");
	before = fc.get("encodes", 0);
	st = launch(&r, 96, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && fc.get("encodes", 0) == before + 3 && map_is(&l.maps[0], 6, r.a, 96, 512, 1024, 128, 64, 3),
	       "a refused map is not kept: the same launch again encodes its maps");

	/* 8-bit and 32-bit elements */
	Run r8 = r, r32 = r;
	r8.type = "f8e4m3";
	r32.type = "f32";
	r32.bk = 32;
	st = launch(&r8, 256, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && l.n_maps >= 1 && map_is(&l.maps[0], 0, r.a, 256, 512, 512, 128, 64, 2),
	       "e4m3: a's map is bytes (UINT8), rows of 64 bytes (64-byte swizzle)");
	st = launch(&r32, 256, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && l.n_maps >= 1 && map_is(&l.maps[0], 7, r.a, 256, 512, 2048, 128, 32, 3),
	       "f32: a's map is FLOAT32, box 128 x 32 (128-byte rows)");
	blk_module_destroy(m);
	blk_context_destroy(ctx);
}

/* Threads launching at once, each over sizes of its own and shared ones:
 * every launch succeeds (TSan: the cache's lock). */
enum { CACHE_THREADS = 4, CACHE_LAUNCHES = 200 };
static Run cache_run;
static int cache_failures;
static pthread_mutex_t cache_failures_lock = PTHREAD_MUTEX_INITIALIZER;

static void *cache_thread(void *arg)
{
	int t = (int)(intptr_t)arg, bad = 0;
	for (int i = 0; i < CACHE_LAUNCHES; i++) {
		int M = i % 2 ? 256 : 128 + 16 * t; /* shared, and the thread's own */
		Request q;
		request(&q, &cache_run, M, 256, 512, 512, 256, 256);
		bad += blk_launch(cache_run.k, q.args, 9, &q.opt) != BLK_SUCCESS;
	}
	pthread_mutex_lock(&cache_failures_lock);
	cache_failures += bad;
	pthread_mutex_unlock(&cache_failures_lock);
	return NULL;
}

static void cache_threads(void)
{
	blk_context *ctx = NULL;
	blk_module *m = load(&ctx, "threads: the module loaded");
	if (!m)
		return;
	cache_run = f16_run(ctx, m);
	pthread_t th[CACHE_THREADS];
	long before = fc.get("encodes", 0);
	int started = 0;
	for (int t = 0; t < CACHE_THREADS; t++)
		started += pthread_create(&th[t], NULL, cache_thread, (void *)(intptr_t)t) == 0;
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	long encodes = fc.get("encodes", 0) - before;
	/* 5 argument sets of 3 maps: 15 encodes at least, more where threads
	 * miss at once or sets collide; without the cache, 2400 */
	expect(started == CACHE_THREADS && cache_failures == 0 && encodes >= 15 && encodes < 1200,
	       "4 threads, 800 launches over 5 argument sets at once: all launched, the maps encoded fewer than half "
	       "as often as launched");
	if (encodes < 15 || encodes >= 1200)
		printf("     encodes: %ld\n", encodes);
	blk_module_destroy(m);
	blk_context_destroy(ctx);
}

static void without_tma(void)
{
	unsetenv("BLK_TMA");
	blk_context *ctx = NULL;
	blk_module *m = load(&ctx, "without BLK_TMA: the module loaded");
	if (!m)
		return;
	Run r = f16_run(ctx, m);
	/* the disk cache holds the TMA variant of the same source and
	 * arguments: its key must tell them apart */
	const char *ptx = ptx_of(&r, 256, 256, 512, 512, 256);
	expect(ptx && !strstr(ptx, "cp.async.bulk.tensor") && !strstr(ptx, "[128]"),
	       "without BLK_TMA: no TMA in the PTX (not the disk cache's TMA entry)");
	FakeLaunch l;
	blk_status st = launch(&r, 256, 256, 512, 512, 256, &l);
	expect(st == BLK_SUCCESS && l.n_params == 9 && l.n_maps == 0, "without BLK_TMA: nine parameters, no map");
	blk_module_destroy(m);
	blk_context_destroy(ctx);
}

/* mm's launch with the option tma bound to `tma` among its consts. */
static blk_status launch_tma(const Run *r, int64_t tma, FakeLaunch *out)
{
	Request q;
	request(&q, r, 256, 256, 512, 512, 256, 256);
	blk_const consts[5];
	memcpy(consts, q.consts, sizeof q.consts);
	consts[4] = (blk_const){.name = "tma", .i = tma};
	q.opt.consts = consts;
	q.opt.n_consts = 5;
	blk_status st = blk_launch(r->k, q.args, 9, &q.opt);
	fc.last_launch(out);
	return st;
}

/* mm with @autotune over the option tma. */
static const char *tuned_source =
	"@autotune(key = [M], configs = [{BM = 128, BN = 128, BK = 64, tma = 0}, {BM = 128, BN = 128, BK = 64, tma = 1}])\n"
	"kernel mm(a: *f16, b: *f16, c: *f32, M: i32, N: i32, K: i32, sa: i32, sb: i32, sc: i32,\n"
	"          BM: const i32, BN: const i32, BK: const i32) grid(cdiv(M, BM), cdiv(N, BN)) {\n"
	"    let ad = tensor_desc(a, (M, K), (sa, 1), (BM, BK));\n"
	"    let bd = tensor_desc(b, (K, N), (sb, 1), (BK, BN));\n"
	"    let cd = tensor_desc(c, (M, N), (sc, 1), (BM, BN));\n"
	"    var acc = zeros((BM, BN), f32);\n"
	"    for k in range(0, K, BK) {\n"
	"        acc = dot(ad.load((program_id(0) * BM, k)), bd.load((k, program_id(1) * BN)), acc);\n"
	"    }\n"
	"    cd.store((program_id(0) * BM, program_id(1) * BN), acc);\n"
	"}\n";

/* The launch option tma: 1 asks for TMA without BLK_TMA, 0 turns it off
 * under BLK_TMA=1, another value is an error; @autotune configs may set it,
 * and the configs with and without are timed apart. */
static void tma_option(bool env)
{
	const char *where = env ? "BLK_TMA=1" : "without BLK_TMA";
	if (env)
		setenv("BLK_TMA", "1", 1);
	else
		unsetenv("BLK_TMA");
	blk_context *ctx = NULL;
	blk_module *m = load(&ctx, "tma option: the module loaded");
	if (!m)
		return;
	Run r = f16_run(ctx, m);
	FakeLaunch l;
	blk_status st = launch_tma(&r, 1, &l);
	char what[160];
	snprintf(what, sizeof what, "%s, tma = 1: the launch passes 12 parameters, 3 maps", where);
	expect(st == BLK_SUCCESS && l.n_params == 12 && l.n_maps == 3, what);
	st = launch_tma(&r, 0, &l);
	snprintf(what, sizeof what, "%s, tma = 0: nine parameters, no map", where);
	expect(st == BLK_SUCCESS && l.n_params == 9 && l.n_maps == 0, what);
	st = launch(&r, 256, 256, 512, 512, 256, &l);
	snprintf(what, sizeof what, "%s, tma not given: %s", where, env ? "3 maps (BLK_TMA decides)" : "no map");
	expect(st == BLK_SUCCESS && l.n_maps == (env ? 3 : 0), what);
	int launches = fc.launches();
	st = launch_tma(&r, 2, &l);
	snprintf(what, sizeof what, "%s, tma = 2: an error that says what tma takes, nothing launched", where);
	expect(st == BLK_ERROR_SOURCE && strstr(blk_last_error(), "the option tma is 0 or 1") &&
	           fc.launches() == launches,
	       what);
	blk_module *tm = NULL;
	blk_kernel *tk = NULL;
	st = blk_module_load_source(ctx, "tuned.tile", tuned_source, strlen(tuned_source), NULL, &tm);
	if (st == BLK_SUCCESS)
		st = blk_kernel_get(tm, "mm", &tk);
	snprintf(what, sizeof what, "%s: @autotune configs that set tma load", where);
	expect(st == BLK_SUCCESS, what);
	if (st == BLK_SUCCESS) {
		Request q;
		request(&q, &r, 256, 256, 512, 512, 256, 256);
		blk_launch_options opt = {.num_warps = 4, .num_stages = 3};
		blk_tune_result res;
		int maps = fc.get("encodes", 0);
		st = blk_autotune(tk, q.args, 9, &opt, &res);
		snprintf(what, sizeof what, "%s: both configs timed, the tma = 1 one with maps", where);
		expect(st == BLK_SUCCESS && res.n_configs == 2 && res.ms[0] >= 0 && res.ms[1] >= 0 &&
		           fc.get("encodes", 0) > maps,
		       what);
		blk_module_destroy(tm);
	}
	blk_module_destroy(m);
	blk_context_destroy(ctx);
}

/* A descriptor with padding_option = "nan" gets a map that fills with NaN
 * (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA), the others zeros; a
 * desc atomic_add of i32 goes out by cp.reduce.async.bulk.tensor through a
 * map of its own. */
static const char *nan_source =
	"kernel mm(a: *f16, b: *f16, c: *i32, M: i32, N: i32, K: i32, sa: i32, sb: i32, sc: i32)\n"
	"        grid(cdiv(M, 128), cdiv(N, 128)) {\n"
	"    let ad = tensor_desc(a, (M, K), (sa, 1), (128, 64), padding_option = \"nan\");\n"
	"    let bd = tensor_desc(b, (K, N), (sb, 1), (64, 128));\n"
	"    let cd = tensor_desc(c, (M, N), (sc, 1), (128, 128));\n"
	"    let m0 = program_id(0) * 128;\n"
	"    let n0 = program_id(1) * 128;\n"
	"    var acc = zeros((128, 128), f32);\n"
	"    for k in range(0, K, 64) {\n"
	"        acc = dot(ad.load((m0, k)), bd.load((k, n0)), acc);\n"
	"    }\n"
	"    cd.atomic_add((m0, n0), acc.to(i32));\n"
	"}\n";

static void nan_fill_and_reduce(void)
{
	blk_context *ctx = NULL;
	blk_module *m = NULL;
	blk_kernel *k = NULL;
	bool ok = blk_context_create(BLK_BACKEND_GPU, 0, &ctx) == BLK_SUCCESS &&
	          blk_module_load_source(ctx, "nan.tile", nan_source, strlen(nan_source), NULL, &m) == BLK_SUCCESS &&
	          blk_kernel_get(m, "mm", &k) == BLK_SUCCESS;
	expect(ok, "NaN padding and a desc atomic_add: the module loaded");
	if (!ok)
		return;
	blk_devptr a, b, c;
	blk_malloc(ctx, 1 << 22, &a);
	blk_malloc(ctx, 1 << 22, &b);
	blk_malloc(ctx, 1 << 22, &c);
	blk_arg args[9] = {{.kind = BLK_ARG_PTR, .v.ptr = a}, {.kind = BLK_ARG_PTR, .v.ptr = b},
	                   {.kind = BLK_ARG_PTR, .v.ptr = c}};
	int64_t ints[6] = {256, 256, 512, 512, 256, 256};
	for (int i = 0; i < 6; i++)
		args[3 + i] = (blk_arg){.kind = BLK_ARG_INT, .v.i = ints[i]};
	blk_launch_options opt = {.num_warps = 4, .num_stages = 3};
	blk_compile_info info;
	const char *ptx = blk_kernel_compile(k, args, 9, &opt, &info) == BLK_SUCCESS ? info.ptx : NULL;
	expect(ptx && strstr(ptx, "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group") &&
	           strstr(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global") && (strstr(ptx, "atom.") || strstr(ptx, "red.")),
	       "desc atomic_add of i32: cp.reduce.async.bulk.tensor (per-element atomics only where the box starts "
	       "above or left of the tensor); the tiles by TMA");
	FakeLaunch l;
	blk_status st = blk_launch(k, args, 9, &opt);
	fc.last_launch(&l);
	expect(st == BLK_SUCCESS && l.n_maps == 3 && map_is(&l.maps[0], 6, a, 256, 512, 512 * 2, 128, 64, 3) &&
	           map_is(&l.maps[1], 6, b, 512, 256, 256 * 2, 64, 64, 3) &&
	           map_is(&l.maps[2], 3, c, 256, 256, 256 * 4, 128, 32, 3),
	       "NaN padding: three maps (a, b, and c for the reduction)");
	expect(l.n_maps == 3 && l.maps[0].oob_fill == 1 && l.maps[1].oob_fill == 0 && l.maps[2].oob_fill == 0,
	       "the map of the descriptor with padding_option = \"nan\" fills with NaN "
	       "(CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA), the others with zeros");
	blk_module_destroy(m);
	blk_context_destroy(ctx);
}

int main(void)
{
	char self[4096], path[4200];
	if (!fake_cuda_open(&fc, self, sizeof self, path, sizeof path))
		return 1;
	setenv("BLK_TMA", "1", 1);
	with_tma();
	nan_fill_and_reduce();
	cache_threads();
	without_tma();
	tma_option(false);
	tma_option(true);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
