/* Kernels on a real GPU through blk.h (libblk.so only): vector add with a
 * masked tail and const variants, every scalar argument type, a 3-D grid,
 * reductions, a transpose through more than 48 KiB of shared memory, many
 * launches from several threads, errors from the driver by name, the
 * shared-memory limit, a spin lock of acquire and release atomics, NaNs
 * narrowed to bf16, launch overhead against a raw cuLaunchKernel, and
 * last (it ruins the context) a faulting kernel under BLK_DEBUG=1.
 *
 * Where no GPU can be used it prints one line "SKIP: no GPU (reason)" and
 * "0 passed, 0 failed". BLK_GPU_TEST_BACKEND=interpreter runs the portable
 * cases on the interpreter (to check the test itself where there is no GPU).
 * For tests/gpu/sanitize.sh, which runs it under compute-sanitizer:
 * BLK_GPU_TEST_NO_FAULT=1 leaves out the faulting kernel (a deliberate
 * out-of-bounds store), and BLK_GPU_TEST_NO_TIMING=1 runs one batch of the
 * launch-overhead comparison and does not hold it to its target (a sanitizer
 * slows every launch). */
#include "blk.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	fflush(stdout);
	cond ? passed++ : failed++;
}

static const char *source =
	"kernel vector_add(x: *f32, y: *f32, out: *f32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let mask = offs < n;\n"
	"    store(out + offs, load(x + offs, mask = mask) + load(y + offs, mask = mask), mask = mask);\n"
	"}\n"
	"kernel axpy(a: f32, x: *f32, y: *f32, n: i64, BLOCK: const i32 = 256) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0).to(i64) * BLOCK + arange(0, BLOCK).to(i64);\n"
	"    let mask = offs < n;\n"
	"    store(y + offs, a * load(x + offs, mask = mask) + load(y + offs, mask = mask), mask = mask);\n"
	"}\n"
	"kernel scalars(oi: *i64, of: *f64, a: i8, b: i16, c: u32, d: i64, e: f32, f: f64, g: f16, h: bf16,\n"
	"               flag: i1, u: u8, w: u16, q: u64) {\n"
	"    store(oi, a.to(i64));\n"
	"    store(oi + 1, b.to(i64));\n"
	"    store(oi + 2, c.to(i64));\n"
	"    store(oi + 3, d);\n"
	"    store(oi + 4, flag.to(i64));\n"
	"    store(oi + 5, u.to(i64));\n"
	"    store(oi + 6, w.to(i64));\n"
	"    store(oi + 7, (q >> 32).to(i64));\n"
	"    store(oi + 8, (q & 4294967295).to(i64));\n"
	"    store(of, e.to(f64));\n"
	"    store(of + 1, f);\n"
	"    store(of + 2, g.to(f64));\n"
	"    store(of + 3, h.to(f64));\n"
	"}\n"
	"kernel ids(out: *i32) {\n"
	"    let p = program_id(0) + num_programs(0) * (program_id(1) + num_programs(1) * program_id(2));\n"
	"    store(out + p, program_id(0) + 100 * program_id(1) + 10000 * program_id(2));\n"
	"}\n"
	"kernel row_sum(x: *f32, out: *f32, N: const i32 = 1024) grid(1) {\n"
	"    let row = program_id(0);\n"
	"    store(out + row, sum(load(x + row * N + arange(0, N)), axis = 0));\n"
	"}\n"
	"kernel transpose(x: *f32, out: *f32, T: const i32 = 128) {\n"
	"    let r = arange(0, T);\n"
	"    let t = load(x + r[:, None] * T + r[None, :]);\n"
	/* a store between the load and the transpose: the load cannot be
	 * recomputed in the transposed layout, the data goes through shared memory */
	"    store(out + r[:, None] * T + r[None, :], t);\n"
	"    store(out + r[:, None] * T + r[None, :], trans(t));\n"
	"}\n"
	/* gather keeps the whole block in shared memory */
	"kernel flipcols(x: *f32, out: *f32, T: const i32 = 128) {\n"
	"    let r = arange(0, T);\n"
	"    let t = load(x + r[:, None] * T + r[None, :]);\n"
	"    store(out + r[:, None] * T + r[None, :], gather(t, broadcast_to((T - 1 - r)[None, :], (T, T)), 1));\n"
	"}\n"
	"kernel fill(out: *i32, base: i32, BLOCK: const i32 = 256) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    store(out + offs, base + offs);\n"
	"}\n"
	"kernel spin_lock(lock: *i32, x: *f32) {\n"
	"    let c = arange(0, 128);\n"
	"    while atomic_cas(lock, 0, 1, sem = \"acquire\") == 1 { }\n"
	"    store(x + c, load(x + c) + 1.0);\n"
	"    debug_barrier();\n"
	"    atomic_xchg(lock, 0, sem = \"release\");\n"
	"}\n"
	"kernel to_bf16(x: *f32, y: *bf16) {\n"
	"    let c = arange(0, 8);\n"
	"    store(y + c, load(x + c).to(bf16));\n"
	"}\n"
	"kernel wild(x: *f32) {\n"
	"    store(x + 1099511627776, 1.0);\n"
	"}\n";

static blk_kernel *kernel(blk_module *m, const char *name)
{
	blk_kernel *k = NULL;
	if (blk_kernel_get(m, name, &k) != BLK_SUCCESS)
		printf("     (no kernel %s: %s)\n", name, blk_last_error());
	return k;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static uint32_t seed = 12345;
static float frand(void)
{
	seed = seed * 1103515245u + 12345u;
	return (float)((seed >> 8) & 0xFFFF) / 65536.0f * 4.0f - 2.0f;
}

static void vector_add_cases(blk_context *ctx, blk_module *m)
{
	blk_kernel *k = kernel(m, "vector_add");
	enum { N = 100003 };
	float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
	for (int i = 0; i < N; i++)
		x[i] = frand(), y[i] = frand();
	blk_devptr dx = 0, dy = 0, dout = 0;
	expect(blk_malloc(ctx, N * 4, &dx) == BLK_SUCCESS && blk_malloc(ctx, N * 4, &dy) == BLK_SUCCESS &&
	           blk_malloc(ctx, N * 4, &dout) == BLK_SUCCESS, "blk_malloc, 3 x 400 KB");
	blk_copy_from_device(ctx, out, dout, N * 4);
	int nonzero = 0;
	for (int i = 0; i < N; i++)
		nonzero += out[i] != 0.0f;
	expect(nonzero == 0, "blk_malloc's memory is zero-filled");
	blk_copy_to_device(ctx, dx, x, N * 4);
	blk_copy_to_device(ctx, dy, y, N * 4);
	blk_arg args[4] = {blk_arg_ptr(dx), blk_arg_ptr(dy), blk_arg_ptr(dout), blk_arg_int(N)};
	static const int blocks[] = {128, 64, 1024, 128};
	for (int b = 0; b < 4; b++) {
		blk_const c = {.name = "BLOCK", .i = blocks[b]};
		blk_launch_options o = {.consts = &c, .n_consts = 1};
		memset(out, 0, N * 4);
		blk_copy_to_device(ctx, dout, out, N * 4);
		blk_status st = blk_launch(k, args, 4, &o);
		int wrong = -1;
		if (st == BLK_SUCCESS && blk_copy_from_device(ctx, out, dout, N * 4) == BLK_SUCCESS) {
			wrong = 0;
			for (int i = 0; i < N; i++)
				wrong += out[i] != x[i] + y[i];
		}
		char what[160];
		snprintf(what, sizeof what, "vector_add of 100003 f32, BLOCK %d%s: exact, the masked tail included",
		         blocks[b], b == 3 ? " again (the cached variant)" : "");
		expect(st == BLK_SUCCESS && wrong == 0, what);
	}
	blk_launch_options w8 = {.num_warps = 8};
	memset(out, 0, N * 4);
	blk_copy_to_device(ctx, dout, out, N * 4);
	int wrong = -1;
	if (blk_launch(k, args, 4, &w8) == BLK_SUCCESS && blk_copy_from_device(ctx, out, dout, N * 4) == BLK_SUCCESS) {
		wrong = 0;
		for (int i = 0; i < N; i++)
			wrong += out[i] != x[i] + y[i];
	}
	expect(wrong == 0, "vector_add with num_warps 8");
	/* specialization: n a multiple of 16 (16-byte accesses), then pointers
	 * one element past 16-byte alignment */
	struct {
		int off, n;
		const char *what;
	} specs[] = {{0, 100000, "vector_add, n = 100000 (a multiple of 16: the specialized variant)"},
	             {1, 99984, "vector_add from pointers 4 bytes past 16-byte alignment, n = 99984"},
	             {0, 100000, "vector_add, n = 100000 again"}};
	for (int sc = 0; sc < 3; sc++) {
		memset(out, 0, N * 4);
		blk_copy_to_device(ctx, dout, out, N * 4);
		blk_devptr o = (blk_devptr)specs[sc].off * 4;
		blk_arg sargs[4] = {blk_arg_ptr(dx + o), blk_arg_ptr(dy + o), blk_arg_ptr(dout + o), blk_arg_int(specs[sc].n)};
		blk_status sst = blk_launch(k, sargs, 4, NULL);
		int bad = -1;
		if (sst == BLK_SUCCESS && blk_copy_from_device(ctx, out, dout, N * 4) == BLK_SUCCESS) {
			bad = 0;
			for (int i = 0; i < N; i++) {
				int in = i >= specs[sc].off && i < specs[sc].off + specs[sc].n;
				bad += out[i] != (in ? x[i] + y[i] : 0.0f);
			}
		}
		expect(sst == BLK_SUCCESS && bad == 0, specs[sc].what);
	}
	blk_launch_options two = {.grid = {2, 1, 1}};
	memset(out, 0, N * 4);
	blk_copy_to_device(ctx, dout, out, N * 4);
	blk_launch(k, args, 4, &two);
	blk_copy_from_device(ctx, out, dout, N * 4);
	expect(out[255] == x[255] + y[255] && out[256] == 0.0f, "an explicit grid of 2 runs only those programs");

	/* axpy over 2^24 + 3 elements: an f32 scalar and an i64 size */
	enum { M = (1 << 24) + 3 };
	float *ax = malloc(M * sizeof *ax), *ay = malloc(M * sizeof *ay), *ar = malloc(M * sizeof *ar);
	for (int i = 0; i < M; i++)
		ax[i] = (float)(i % 1000) * 0.5f, ay[i] = (float)(i % 7);
	blk_devptr dax, day;
	blk_malloc(ctx, (size_t)M * 4, &dax);
	blk_malloc(ctx, (size_t)M * 4, &day);
	blk_copy_to_device(ctx, dax, ax, (size_t)M * 4);
	blk_copy_to_device(ctx, day, ay, (size_t)M * 4);
	blk_arg aargs[4] = {blk_arg_float(2.5), blk_arg_ptr(dax), blk_arg_ptr(day), blk_arg_int(M)};
	blk_status st = blk_launch(kernel(m, "axpy"), aargs, 4, NULL);
	wrong = -1;
	if (st == BLK_SUCCESS && blk_copy_from_device(ctx, ar, day, (size_t)M * 4) == BLK_SUCCESS) {
		wrong = 0;
		for (int i = 0; i < M; i++)
			wrong += ar[i] != 2.5f * ax[i] + ay[i]; /* exact: small multiples of 0.25 */
	}
	expect(st == BLK_SUCCESS && wrong == 0, "axpy (a: f32, n: i64) over 2^24 + 3 elements");
	blk_free(ctx, dax);
	blk_free(ctx, day);
	free(ax), free(ay), free(ar);
	blk_free(ctx, dx);
	blk_free(ctx, dy);
	blk_free(ctx, dout);
	free(x), free(y), free(out);
}

static void scalar_cases(blk_context *ctx, blk_module *m)
{
	blk_devptr oi, of;
	blk_malloc(ctx, 9 * 8, &oi);
	blk_malloc(ctx, 4 * 8, &of);
	blk_arg args[14] = {blk_arg_ptr(oi),       blk_arg_ptr(of),          blk_arg_int(-3),       blk_arg_int(-300),
	                    blk_arg_int(4000000000LL), blk_arg_int(-5000000000LL), blk_arg_float(0.25), blk_arg_float(-1.5),
	                    blk_arg_float(1.5),    blk_arg_float(-2.0),      blk_arg_int(1),        blk_arg_int(200),
	                    blk_arg_int(65000),    blk_arg_int((int64_t)0x89ABCDEF01234567ull)};
	blk_launch_options one = {.grid = {1, 1, 1}};
	blk_status st = blk_launch(kernel(m, "scalars"), args, 14, &one);
	int64_t vi[9] = {0};
	double vf[4] = {0};
	if (st == BLK_SUCCESS) {
		blk_copy_from_device(ctx, vi, oi, sizeof vi);
		blk_copy_from_device(ctx, vf, of, sizeof vf);
	}
	expect(st == BLK_SUCCESS, "a kernel with a parameter of every scalar type launches");
	expect(vi[0] == -3 && vi[1] == -300, "i8 -3 and i16 -300 arrive sign-extended");
	expect(vi[2] == 4000000000LL && vi[3] == -5000000000LL, "u32 4000000000 and i64 -5000000000");
	expect(vi[4] == 1 && vi[5] == 200 && vi[6] == 65000, "i1 true, u8 200, u16 65000");
	expect(vi[7] == 0x89ABCDEF && vi[8] == 0x01234567, "u64 0x89ABCDEF01234567");
	expect(vf[0] == 0.25 && vf[1] == -1.5 && vf[2] == 1.5 && vf[3] == -2.0, "f32 0.25, f64 -1.5, f16 1.5, bf16 -2.0");
	blk_free(ctx, oi);
	blk_free(ctx, of);
}

static void grid_and_reduction_cases(blk_context *ctx, blk_module *m)
{
	enum { G0 = 37, G1 = 5, G2 = 3 };
	blk_devptr d;
	blk_malloc(ctx, G0 * G1 * G2 * 4, &d);
	blk_arg a = blk_arg_ptr(d);
	blk_launch_options o = {.grid = {G0, G1, G2}};
	blk_status st = blk_launch(kernel(m, "ids"), &a, 1, &o);
	int32_t got[G0 * G1 * G2];
	int wrong = -1;
	if (st == BLK_SUCCESS && blk_copy_from_device(ctx, got, d, sizeof got) == BLK_SUCCESS) {
		wrong = 0;
		for (int z = 0; z < G2; z++)
			for (int yy = 0; yy < G1; yy++)
				for (int xx = 0; xx < G0; xx++)
					wrong += got[xx + G0 * (yy + G1 * z)] != xx + 100 * yy + 10000 * z;
	}
	expect(st == BLK_SUCCESS && wrong == 0, "a (37, 5, 3) grid: program_id and num_programs on each axis");
	blk_free(ctx, d);

	enum { ROWS = 300, COLS = 1024 };
	float *x = malloc(ROWS * COLS * sizeof *x), sums[ROWS];
	double want[ROWS];
	for (int r = 0; r < ROWS; r++) {
		want[r] = 0;
		for (int c = 0; c < COLS; c++) {
			x[r * COLS + c] = (float)((r * 7 + c * 13) % 17 - 8); /* integers: sums are exact */
			want[r] += x[r * COLS + c];
		}
	}
	blk_devptr dx, ds;
	blk_malloc(ctx, ROWS * COLS * 4, &dx);
	blk_malloc(ctx, ROWS * 4, &ds);
	blk_copy_to_device(ctx, dx, x, ROWS * COLS * 4);
	for (int warps = 1; warps <= 8; warps *= 2) {
		blk_arg args[2] = {blk_arg_ptr(dx), blk_arg_ptr(ds)};
		blk_launch_options ro = {.grid = {ROWS, 1, 1}, .num_warps = warps};
		memset(sums, 0, sizeof sums);
		blk_copy_to_device(ctx, ds, sums, sizeof sums);
		st = blk_launch(kernel(m, "row_sum"), args, 2, &ro);
		wrong = -1;
		if (st == BLK_SUCCESS && blk_copy_from_device(ctx, sums, ds, sizeof sums) == BLK_SUCCESS) {
			wrong = 0;
			for (int r = 0; r < ROWS; r++)
				wrong += sums[r] != want[r];
		}
		char what[128];
		snprintf(what, sizeof what, "sums of 300 rows of 1024 f32, num_warps %d (across warps: shared memory)", warps);
		expect(st == BLK_SUCCESS && wrong == 0, what);
	}
	blk_free(ctx, dx);
	blk_free(ctx, ds);
	free(x);

	/* a transpose of 128 x 128 f32 goes through 64 KiB of shared memory: over 48 KiB, opted in */
	enum { T = 128 };
	float *t = malloc(T * T * sizeof *t), *tt = malloc(T * T * sizeof *tt);
	for (int i = 0; i < T * T; i++)
		t[i] = (float)i;
	blk_devptr dt, dtt;
	blk_malloc(ctx, T * T * 4, &dt);
	blk_malloc(ctx, T * T * 4, &dtt);
	blk_copy_to_device(ctx, dt, t, T * T * 4);
	blk_arg targs[2] = {blk_arg_ptr(dt), blk_arg_ptr(dtt)};
	blk_launch_options to = {.grid = {1, 1, 1}};
	st = blk_launch(kernel(m, "transpose"), targs, 2, &to);
	wrong = -1;
	if (st == BLK_SUCCESS && blk_copy_from_device(ctx, tt, dtt, T * T * 4) == BLK_SUCCESS) {
		wrong = 0;
		for (int r = 0; r < T; r++)
			for (int c = 0; c < T; c++)
				wrong += tt[r * T + c] != t[c * T + r];
	}
	expect(st == BLK_SUCCESS && wrong == 0, "a transpose of 128 x 128 f32 (64 KiB of shared memory)");
	blk_free(ctx, dt);
	blk_free(ctx, dtt);
	free(t), free(tt);
}

typedef struct Worker {
	blk_context *ctx;
	blk_kernel *k;
	blk_devptr out;
	int index, launches, errors;
} Worker;

/* A spin lock: 2000 programs each add 1 to 128 floats under the lock, taken
 * by an acquiring cas and freed by a releasing exchange after a barrier; with
 * relaxed atomics the increments race and some are lost. */
static void lock_cases(blk_context *ctx, blk_module *m)
{
	enum { N = 128, PROGRAMS = 2000 };
	blk_devptr lock = 0, x = 0;
	float got[N];
	int32_t zero = 0;
	blk_status st = blk_malloc(ctx, 4, &lock);
	if (st == BLK_SUCCESS)
		st = blk_malloc(ctx, N * sizeof(float), &x);
	float zeros[N] = {0};
	if (st == BLK_SUCCESS)
		st = blk_copy_to_device(ctx, lock, &zero, 4);
	if (st == BLK_SUCCESS)
		st = blk_copy_to_device(ctx, x, zeros, sizeof zeros);
	blk_arg a[2] = {blk_arg_ptr(lock), blk_arg_ptr(x)};
	blk_launch_options o = {.grid = {PROGRAMS, 1, 1}};
	if (st == BLK_SUCCESS)
		st = blk_launch(kernel(m, "spin_lock"), a, 2, &o);
	int wrong = -1;
	if (st == BLK_SUCCESS && blk_copy_from_device(ctx, got, x, sizeof got) == BLK_SUCCESS) {
		wrong = 0;
		for (int i = 0; i < N; i++)
			wrong += got[i] != (float)PROGRAMS;
		if (wrong)
			printf("     x[0] = %g, want %d\n", (double)got[0], PROGRAMS);
	}
	expect(st == BLK_SUCCESS && wrong == 0, "a spin lock (acquire cas, release exchange, debug_barrier): 2000 programs add 1 to 128 floats");
	blk_free(ctx, lock);
	blk_free(ctx, x);
}

/* f32 to bf16 keeps a NaN's sign and the top bits of its payload, as the
 * interpreter and numpy do (cvt.rn.bf16.f32 alone gives 0x7FFF); ordinary
 * values round to nearest even. */
static void bf16_cases(blk_context *ctx, blk_module *m)
{
	const uint32_t in[8] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x7FA00000u,
	                        0x3F800000u, 0x3F808000u, 0x3F818000u, 0xFF800000u};
	const uint16_t want[8] = {0x7FC0, 0xFFC0, 0x7FC0, 0x7FA0, 0x3F80, 0x3F80, 0x3F82, 0xFF80};
	uint16_t got[8] = {0};
	blk_devptr x = 0, y = 0;
	blk_status st = blk_malloc(ctx, sizeof in, &x);
	if (st == BLK_SUCCESS)
		st = blk_malloc(ctx, sizeof got, &y);
	if (st == BLK_SUCCESS)
		st = blk_copy_to_device(ctx, x, in, sizeof in);
	blk_arg a[2] = {blk_arg_ptr(x), blk_arg_ptr(y)};
	blk_launch_options o = {.grid = {1, 1, 1}};
	if (st == BLK_SUCCESS)
		st = blk_launch(kernel(m, "to_bf16"), a, 2, &o);
	if (st == BLK_SUCCESS)
		st = blk_copy_from_device(ctx, got, y, sizeof got);
	int wrong = 0;
	for (int i = 0; i < 8; i++)
		if (got[i] != want[i]) {
			printf("     bf16 of 0x%08X: got 0x%04X, want 0x%04X\n", (unsigned)in[i], got[i], want[i]);
			wrong++;
		}
	expect(st == BLK_SUCCESS && !wrong, "f32 to bf16: NaNs keep sign and payload (0x7FC0, not 0x7FFF), values round to even");
	blk_free(ctx, x);
	blk_free(ctx, y);
}

static void *worker(void *p)
{
	Worker *w = p;
	for (int i = 0; i < w->launches; i++) {
		blk_arg args[2] = {blk_arg_ptr(w->out + (blk_devptr)w->index * 4096 * 4), blk_arg_int(w->index * 1000000 + i)};
		blk_launch_options o = {.grid = {16, 1, 1}};
		w->errors += blk_launch(w->k, args, 2, &o) != BLK_SUCCESS;
	}
	return NULL;
}

static void thread_cases(blk_context *ctx, blk_module *m)
{
	enum { THREADS = 4, EACH = 100 };
	blk_devptr out;
	blk_malloc(ctx, THREADS * 4096 * 4, &out);
	pthread_t t[THREADS];
	Worker w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i] = (Worker){ctx, kernel(m, "fill"), out, i, EACH, 0};
		pthread_create(&t[i], NULL, worker, &w[i]);
	}
	int errors = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		errors += w[i].errors;
	}
	static int32_t got[THREADS * 4096];
	int wrong = -1;
	if (blk_copy_from_device(ctx, got, out, sizeof got) == BLK_SUCCESS) {
		wrong = 0;
		for (int i = 0; i < THREADS; i++)
			for (int j = 0; j < 4096; j++)
				wrong += got[i * 4096 + j] != i * 1000000 + EACH - 1 + j;
	}
	expect(errors == 0 && wrong == 0, "4 threads x 100 launches, each its own slice (the last launch of each stays)");
	blk_free(ctx, out);
}

/* ---- the driver, directly: errors, limits, overhead ------------------------------------ */

/* An environment variable set to something other than "" or "0". */
static int env_flag(const char *name)
{
	const char *v = getenv(name);
	return v && v[0] && strcmp(v, "0") != 0;
}

static void gpu_only_cases(blk_context *ctx, blk_module *m)
{
	blk_devptr huge;
	blk_status st = blk_malloc(ctx, (size_t)1 << 40, &huge);
	expect(st == BLK_ERROR_OUT_OF_MEMORY &&
	           strstr(blk_last_error(), "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"),
	       "1 TiB: BLK_ERROR_OUT_OF_MEMORY, with the driver's call and error named");

	/* 256 x 256 f32 transposed by one program: its conversion's 256 KiB go
	 * through shared memory 64 KiB at a time */
	blk_devptr a, b;
	blk_malloc(ctx, 256 * 256 * 4, &a);
	blk_malloc(ctx, 256 * 256 * 4, &b);
	static float hx[256 * 256], hy[256 * 256];
	for (int i = 0; i < 256 * 256; i++)
		hx[i] = (float)i;
	blk_copy_to_device(ctx, a, hx, sizeof hx);
	blk_const c = {.name = "T", .i = 256};
	blk_launch_options o = {.grid = {1, 1, 1}, .consts = &c, .n_consts = 1};
	blk_arg args[2] = {blk_arg_ptr(a), blk_arg_ptr(b)};
	st = blk_launch(kernel(m, "transpose"), args, 2, &o);
	int same = st == BLK_SUCCESS && blk_copy_from_device(ctx, hy, b, sizeof hy) == BLK_SUCCESS;
	for (int i = 0; same && i < 256 * 256; i++)
		same = hy[i] == hx[(i % 256) * 256 + i / 256];
	expect(same, "a transpose of 256 x 256 f32 by one program: its 256 KiB conversion through shared memory in parts");
	/* a gather of the same block holds all of it: more than any GPU allows a block */
	st = blk_launch(kernel(m, "flipcols"), args, 2, &o);
	expect(st == BLK_ERROR_LAUNCH && strstr(blk_last_error(), "kernel 'flipcols' needs ") &&
	           strstr(blk_last_error(), " bytes of shared memory; the device allows "),
	       "a gather of 256 x 256 f32: more shared memory than the device allows, refused with both numbers");
	printf("     (%s)\n", blk_last_error());
	blk_free(ctx, a);
	blk_free(ctx, b);

	blk_launch_options wide = {.grid = {1, 70000, 1}};
	blk_devptr d;
	blk_malloc(ctx, 4, &d);
	blk_arg ia = blk_arg_ptr(d);
	expect(blk_launch(kernel(m, "ids"), &ia, 1, &wide) == BLK_ERROR_INVALID_ARGUMENT &&
	           strstr(blk_last_error(), "larger than the device allows"), "a grid of 70000 along y is refused");

	/* launch overhead: blk_launch of vector_add (3 pointers and an i32, one
	 * program) against cuLaunchKernel of an empty kernel with the same
	 * parameters, in batches of 500 (the launch queue never fills),
	 * synchronized between batches; the median batch, per launch */
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!cuda)
		cuda = dlopen(getenv("BLK_CUDA_DRIVER") ? getenv("BLK_CUDA_DRIVER") : "libcuda.so.1", RTLD_NOW);
	int (*ModuleLoadData)(void **, const void *) = cuda ? (int (*)(void **, const void *))dlsym(cuda, "cuModuleLoadData") : NULL;
	int (*ModuleGetFunction)(void **, void *, const char *) =
		cuda ? (int (*)(void **, void *, const char *))dlsym(cuda, "cuModuleGetFunction") : NULL;
	int (*LaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
	                    void **) = cuda ? (int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                                                unsigned, void *, void **, void **))dlsym(cuda, "cuLaunchKernel")
	                                    : NULL;
	int (*CtxSynchronize)(void) = cuda ? (int (*)(void))dlsym(cuda, "cuCtxSynchronize") : NULL;
	static const char ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
	                          ".visible .entry noop(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n"
	                          "{\n\tret;\n}\n";
	/* blk leaves no context current between calls: the raw side makes
	 * device 0's primary context (the one blk's context uses) current */
	int (*PrimaryCtxRetain)(void **, int) = cuda ? (int (*)(void **, int))dlsym(cuda, "cuDevicePrimaryCtxRetain") : NULL;
	int (*CtxSetCurrent)(void *) = cuda ? (int (*)(void *))dlsym(cuda, "cuCtxSetCurrent") : NULL;
	void *mod = NULL, *fn = NULL, *primary = NULL;
	int ok_raw = ModuleLoadData && ModuleGetFunction && LaunchKernel && CtxSynchronize && PrimaryCtxRetain &&
	             CtxSetCurrent && PrimaryCtxRetain(&primary, 0) == 0 && CtxSetCurrent(primary) == 0 &&
	             ModuleLoadData(&mod, ptx) == 0 && ModuleGetFunction(&fn, mod, "noop") == 0;
	expect(ok_raw, "a raw kernel for comparison (cuModuleLoadData of hand-written PTX)");
	if (!ok_raw)
		return;
	blk_devptr p[3];
	for (int i = 0; i < 3; i++)
		blk_malloc(ctx, 4096, &p[i]);
	blk_kernel *va = kernel(m, "vector_add");
	blk_arg vargs[4] = {blk_arg_ptr(p[0]), blk_arg_ptr(p[1]), blk_arg_ptr(p[2]), blk_arg_int(100)};
	unsigned long long raw_p[3] = {p[0], p[1], p[2]};
	int n32 = 100;
	void *raw_args[4] = {&raw_p[0], &raw_p[1], &raw_p[2], &n32};
	enum { BATCH = 500, BATCHES = 21 };
	int timed = !env_flag("BLK_GPU_TEST_NO_TIMING");
	int nb = timed ? BATCHES : 1;
	double t_blk[BATCHES], t_raw[BATCHES];
	int errors = 0;
	for (int i = 0; i < 200; i++) { /* warm up both */
		errors += blk_launch(va, vargs, 4, NULL) != BLK_SUCCESS;
		errors += LaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, NULL, raw_args, NULL) != 0;
	}
	CtxSynchronize();
	for (int b = 0; b < nb; b++) {
		double t0 = now();
		for (int i = 0; i < BATCH; i++)
			errors += blk_launch(va, vargs, 4, NULL) != BLK_SUCCESS;
		t_blk[b] = (now() - t0) / BATCH;
		CtxSynchronize();
		t0 = now();
		for (int i = 0; i < BATCH; i++)
			errors += LaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, NULL, raw_args, NULL) != 0;
		t_raw[b] = (now() - t0) / BATCH;
		CtxSynchronize();
	}
	qsort(t_blk, (size_t)nb, sizeof(double), cmp_double);
	qsort(t_raw, (size_t)nb, sizeof(double), cmp_double);
	double mb = t_blk[nb / 2] * 1e6, mr = t_raw[nb / 2] * 1e6;
	char what[200];
	snprintf(what, sizeof what, "launch overhead: blk_launch %.2f us, cuLaunchKernel %.2f us, ratio %.2f (target <= 1.25%s)",
	         mb, mr, mb / mr, timed ? "" : "; not held to it: BLK_GPU_TEST_NO_TIMING");
	expect(errors == 0 && (!timed || mb <= 1.25 * mr + 0.25), what);
	for (int i = 0; i < 3; i++)
		blk_free(ctx, p[i]);
}

/* Last: a kernel that stores far out of bounds ruins the (primary) context. */
static void fault_cases(blk_context *ctx)
{
	blk_devptr keep;
	float f[4] = {0};
	blk_malloc(ctx, sizeof f, &keep);
	setenv("BLK_DEBUG", "1", 1);
	blk_context *dctx = NULL;
	blk_module *dm = NULL;
	blk_status st = blk_context_create(BLK_BACKEND_GPU, 0, &dctx);
	unsetenv("BLK_DEBUG");
	if (st == BLK_SUCCESS)
		st = blk_module_load_source(dctx, "gpu_test.tile", source, strlen(source), NULL, &dm);
	expect(st == BLK_SUCCESS, "a BLK_DEBUG=1 context");
	if (st != BLK_SUCCESS)
		return;
	blk_devptr d;
	blk_malloc(dctx, 4, &d);
	blk_arg a = blk_arg_ptr(d);
	blk_launch_options one = {.grid = {1, 1, 1}};
	st = blk_launch(kernel(dm, "wild"), &a, 1, &one);
	expect(st == BLK_ERROR_LAUNCH && strstr(blk_last_error(), "blk_launch: kernel 'wild' failed (grid 1, 1, 1): "
	                                                           "cuStreamSynchronize failed: CUDA_ERROR_"),
	       "BLK_DEBUG=1: a store 4 TiB out of bounds fails its launch, naming the kernel and the error");
	printf("     (%s)\n", blk_last_error());
	st = blk_copy_from_device(ctx, f, keep, sizeof f);
	expect(st == BLK_ERROR_LAUNCH && strstr(blk_last_error(), "the GPU context is unusable"),
	       "afterwards a copy in another context of the device fails: the context is unusable, it says");
	printf("     (%s)\n", blk_last_error());
	blk_module_destroy(dm);
	blk_context_destroy(dctx);
}

int main(void)
{
	const char *b = getenv("BLK_GPU_TEST_BACKEND");
	int interp = b && strcmp(b, "interpreter") == 0;
	blk_context *ctx = NULL;
	blk_status st = blk_context_create(interp ? BLK_BACKEND_INTERPRETER : BLK_BACKEND_GPU, 0, &ctx);
	if (st != BLK_SUCCESS) {
		printf("SKIP: no GPU (%s)\n0 passed, 0 failed\n", blk_last_error());
		return 0;
	}
	expect(1, interp ? "an interpreter context (BLK_GPU_TEST_BACKEND=interpreter)" : "a GPU context");
	if (!interp) {
		const char *env = getenv("BLK_BACKEND");
		blk_context *actx = NULL;
		if (!env || !env[0] || strcmp(env, "gpu") == 0) {
			expect(blk_context_create(BLK_BACKEND_AUTO, 0, &actx) == BLK_SUCCESS &&
			           blk_context_backend(actx) == BLK_BACKEND_GPU, "BLK_BACKEND_AUTO picks the GPU");
			blk_context_destroy(actx);
		}
	}
	blk_module *m = NULL;
	st = blk_module_load_source(ctx, "gpu_test.tile", source, strlen(source), NULL, &m);
	expect(st == BLK_SUCCESS, "the test's kernels load");
	if (st != BLK_SUCCESS) {
		printf("%d passed, %d failed\n", passed, failed);
		return 1;
	}
	vector_add_cases(ctx, m);
	scalar_cases(ctx, m);
	grid_and_reduction_cases(ctx, m);
	thread_cases(ctx, m);
	lock_cases(ctx, m);
	bf16_cases(ctx, m);
	if (!interp) {
		gpu_only_cases(ctx, m);
		if (!env_flag("BLK_GPU_TEST_NO_FAULT"))
			fault_cases(ctx);
		else
			printf("     (the faulting kernel left out: BLK_GPU_TEST_NO_FAULT)\n");
	}
	blk_module_destroy(m);
	blk_context_destroy(ctx);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
