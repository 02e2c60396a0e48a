/* tests/ops: the launch's registers and facts, and inline PTX:
 * num_warps() against the num_warps the launch was given (default 4, 2, 8);
 * globaltimer() read twice (the second not before the first, both nonzero);
 * smid() (0 on the interpreter, below 1024 on a GPU); range(..., unroll = N)
 * computes what the loop without the hint computes (random trip counts,
 * integer and float sums); inline_asm_elementwise: on a GPU, an add of two
 * i32 blocks, a u64 split into its u32 halves (two results) and a scalar
 * broadcast against a block, against C; on the interpreter, refused with
 * its message; x y + z x - y z exact with and without fp_fusion. */
#include "ops.h"

static void num_warps_case(int w)
{
	const char *src = "kernel k(out: *i32) {\n"
	                  "    store(out + arange(0, 128), num_warps() + zeros(128, i32));\n"
	                  "}\n";
	blk_devptr d = dev_zeros(DT_I32, 128);
	bool ok = w ? run_kernel(src, NULL, ARGS(P(d)), CONSTS(CI("num_warps", w)), GRID(1, 1, 1)) == BLK_SUCCESS
	            : run_kernel(src, NULL, ARGS(P(d)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(d, DT_I32, 128);
		for (int i = 0; i < 128 && ok; i++)
			if (get_i(got, i) != (w ? w : 4)) {
				why("element %d is %lld, expected %d\n", i, (long long)get_i(got, i), w ? w : 4);
				ok = false;
			}
	}
	result(ok, "num_warps() with num_warps = %d%s", w ? w : 4, w ? "" : " (the default)");
}

static void timer_case(void)
{
	const char *src = "kernel k(t: *u64, s: *i32, x: *f32) {\n"
	                  "    let a = globaltimer();\n"
	                  "    store(x + arange(0, 1024), sqrt(load(x + arange(0, 1024))));\n"
	                  "    let b = globaltimer();\n"
	                  "    store(t, a);\n"
	                  "    store(t + 1, b);\n"
	                  "    store(s + program_id(0), smid());\n"
	                  "}\n";
	blk_devptr dt = dev_zeros(DT_U64, 2), ds = dev_zeros(DT_I32, 4), dx = dev_zeros(DT_F32, 1024);
	bool ok = run_kernel(src, NULL, ARGS(P(dt), P(ds), P(dx)), NO_CONSTS, GRID(4, 1, 1)) == BLK_SUCCESS;
	bool gpu = blk_context_backend(ops_ctx) == BLK_BACKEND_GPU;
	if (ok) {
		arr t = dev_read(dt, DT_U64, 2), s = dev_read(ds, DT_I32, 4);
		if (get_u(t, 0) == 0 || get_u(t, 1) < get_u(t, 0)) {
			why("globaltimer read %llu then %llu\n", (unsigned long long)get_u(t, 0), (unsigned long long)get_u(t, 1));
			ok = false;
		}
		for (int i = 0; i < 4; i++)
			if (gpu ? get_i(s, i) < 0 || get_i(s, i) >= 1024 : get_i(s, i) != 0) {
				why("program %d: smid() = %lld\n", i, (long long)get_i(s, i));
				ok = false;
			}
	}
	result(ok, "globaltimer() twice, smid() in each of 4 programs");
}

static void unroll_case(dt t, int u)
{
	const char *src = render("kernel k(x: *$T, out: *$T, n: i32) {\n"
	                         "    var acc = zeros(64, $T);\n"
	                         "    for i in range(0, n, unroll = $U) {\n"
	                         "        acc = acc + load(x + i * 64 + arange(0, 64));\n"
	                         "    }\n"
	                         "    store(out + arange(0, 64), acc);\n"
	                         "}\n",
	                         "T", dts[t].name, "U", u == 2 ? "2" : u == 4 ? "4" : "8", NULL);
	int n = (int)rng_range(0, 13);
	arr x = arr_new(t, 64 * (n + 1)), want = arr_new(t, 64);
	fill_random(x, 100);
	for (int j = 0; j < 64; j++) {
		val s = {0, 0};
		for (int i = 0; i < n; i++)
			s = binop_ref("+", t, s, get_v(x, i * 64 + j));
		set_v(want, j, s);
	}
	blk_devptr dx = dev_from(x), d = dev_zeros(t, 64);
	bool ok = run_kernel(src, NULL, ARGS(P(dx), P(d), I(n)), NO_CONSTS, GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(d, t, 64), want, &x, 1);
	result(ok, "range(0, %d, unroll = %d) summing %s", n, u, dts[t].name);
}

static const char *ASM_SRC =
	"kernel k(a: *i32, b: *i32, w: *u64, out: *i32, lo: *u32, hi: *u32, c: i32) {\n"
	"    let o = arange(0, 256);\n"
	"    let x = load(a + o);\n"
	"    let y = load(b + o);\n"
	"    store(out + o, inline_asm_elementwise(\"add.s32 $0, $1, $2;\", \"=r,r,r\", (x, y), i32, true, 1));\n"
	"    let l, h = inline_asm_elementwise(\"mov.b64 {$0, $1}, $2;\", \"=r,=r,l\", [load(w + o)], (u32, u32));\n"
	"    store(lo + o, l);\n"
	"    store(hi + o, h);\n"
	"    store(out + 256 + o, inline_asm(\"sub.s32 $0, $1, $2;\", \"=r,r,r\", (c, x), i32, is_pure = false));\n"
	"}\n";

static void asm_case(void)
{
	arr a = arr_new(DT_I32, 256), b = arr_new(DT_I32, 256), w = arr_new(DT_U64, 256);
	fill_random(a, 0);
	fill_random(b, 0);
	fill_random(w, 0);
	int c = (int)rng_range(-1000, 1000);
	blk_devptr da = dev_from(a), db = dev_from(b), dw = dev_from(w), dout = dev_zeros(DT_I32, 512),
	           dl = dev_zeros(DT_U32, 256), dh = dev_zeros(DT_U32, 256);
	blk_status st = run_kernel(ASM_SRC, NULL, ARGS(P(da), P(db), P(dw), P(dout), P(dl), P(dh), I(c)), NO_CONSTS,
	                           GRID(1, 1, 1));
	if (blk_context_backend(ops_ctx) != BLK_BACKEND_GPU) {
		bool ok = st != BLK_SUCCESS && strstr(ops_err, "inline_asm cannot run on the interpreter");
		if (ok)
			ops_why_len = 0;
		else
			why("status %d: %s\n", (int)st, ops_err);
		result(ok, "inline_asm_elementwise is refused by the interpreter, with its message");
		return;
	}
	arr want = arr_new(DT_I32, 512), wl = arr_new(DT_U32, 256), wh = arr_new(DT_U32, 256);
	for (int i = 0; i < 256; i++) {
		set_i(want, i, wrap_int(DT_I32, (uint64_t)get_i(a, i) + (uint64_t)get_i(b, i)));
		set_i(want, 256 + i, wrap_int(DT_I32, (uint64_t)(int64_t)c - (uint64_t)get_i(a, i)));
		set_i(wl, i, (int64_t)(get_u(w, i) & 0xffffffffu));
		set_i(wh, i, (int64_t)(get_u(w, i) >> 32));
	}
	bool ok = st == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, DT_I32, 512), want, &a, 1) && check_exact(dev_read(dl, DT_U32, 256), wl, &w, 1) &&
		     check_exact(dev_read(dh, DT_U32, 256), wh, &w, 1);
	result(ok, "inline_asm_elementwise: add.s32, mov.b64 into two u32 results, a scalar broadcast");
}

/* pack > 1: two f16 a register (add.f16x2), four u8 a register (a bytewise
 * xor), two i32 an instance (two registers in, two out), over 1024
 * elements (8 a thread on 4 warps); each result element depends on its
 * own inputs only, whatever elements share an instance. */
static const char *ASM_PACK_SRC =
	"kernel k(x: *f16, y: *f16, u: *u8, v: *u8, a: *i32, o16: *f16, o8: *u8, o32: *i32) {\n"
	"    let o = arange(0, 1024);\n"
	"    store(o16 + o, inline_asm_elementwise(\"add.f16x2 $0, $1, $2;\", \"=r,r,r\", (load(x + o), load(y + o)), f16,\n"
	"                                          true, 2));\n"
	"    store(o8 + o, inline_asm_elementwise(\"xor.b32 $0, $1, $2;\", \"=r,r,r\", (load(u + o), load(v + o)), u8, true, 4));\n"
	"    store(o32 + o, inline_asm_elementwise(\"add.s32 $0, $2, 1;\\n\\tadd.s32 $1, $3, 1;\", \"=r,=r,r,r\", [load(a + o)],\n"
	"                                          i32, true, 2));\n"
	"}\n";

static void asm_pack_case(void)
{
	if (blk_context_backend(ops_ctx) != BLK_BACKEND_GPU)
		return; /* (the interpreter refuses inline asm: asm_case checks that) */
	enum { N = 1024 };
	arr x = arr_new(DT_F16, N), y = arr_new(DT_F16, N), u = arr_new(DT_U8, N), v = arr_new(DT_U8, N),
	    a = arr_new(DT_I32, N);
	fill_random(x, 1);
	fill_random(y, 1);
	fill_random(u, 0);
	fill_random(v, 0);
	fill_random(a, 0);
	blk_devptr dx = dev_from(x), dy = dev_from(y), du = dev_from(u), dv = dev_from(v), da = dev_from(a);
	blk_devptr d16 = dev_zeros(DT_F16, N), d8 = dev_zeros(DT_U8, N), d32 = dev_zeros(DT_I32, N);
	blk_status st = run_kernel(ASM_PACK_SRC, NULL, ARGS(P(dx), P(dy), P(du), P(dv), P(da), P(d16), P(d8), P(d32)),
	                           NO_CONSTS, GRID(1, 1, 1));
	arr w16 = arr_new(DT_F16, N), w8 = arr_new(DT_U8, N), w32 = arr_new(DT_I32, N);
	for (int i = 0; i < N; i++) {
		set_f(w16, i, round_to(DT_F16, get_f(x, i) + get_f(y, i)));
		set_i(w8, i, (int64_t)(get_u(u, i) ^ get_u(v, i)));
		set_i(w32, i, wrap_int(DT_I32, (uint64_t)get_i(a, i) + 1));
	}
	bool ok = st == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(d16, DT_F16, N), w16, &x, 1) && check_exact(dev_read(d8, DT_U8, N), w8, &u, 1) &&
		     check_exact(dev_read(d32, DT_I32, N), w32, &a, 1);
	else
		why("status %d: %s\n", (int)st, ops_err);
	result(ok, "inline_asm_elementwise with pack: add.f16x2 (2), a bytewise xor of u8 (4), two i32 an instance (2)");
}

/* x y + z x - y z over f32 and f64 blocks: with fp_fusion = 0 each
 * operation is rounded as C rounds it; by default (fp_fusion on) the
 * contraction rule makes it fma(-y, z, fma(x, y, z x)): the inner sum's
 * left product first, then the difference's right product. Bit for bit
 * either way, on both backends. */
static void fusion_case(dt t, bool fusion)
{
	const char *src = render("kernel k(a: *$T, b: *$T, c: *$T, out: *$T, n: i32) grid(cdiv(n, 256)) {\n"
	                         "    let o = program_id(0) * 256 + arange(0, 256);\n"
	                         "    let x = load(a + o, mask = o < n);\n"
	                         "    let y = load(b + o, mask = o < n);\n"
	                         "    let z = load(c + o, mask = o < n);\n"
	                         "    store(out + o, x * y + z * x - y * z, mask = o < n);\n"
	                         "}\n",
	                         "T", dts[t].name, NULL);
	int n = 1000;
	arr a = arr_new(t, n), b = arr_new(t, n), c = arr_new(t, n), want = arr_new(t, n);
	fill_random(a, 4);
	fill_random(b, 4);
	fill_random(c, 4);
	for (int i = 0; i < n; i++) {
		double x = get_f(a, i), y = get_f(b, i), z = get_f(c, i);
		if (t == DT_F32) { /* as C's float, contracted by the rule or not at all */
			float fx = (float)x, fy = (float)y, fz = (float)z, zx = fz * fx;
			set_f(want, i, fusion ? fmaf(-fy, fz, fmaf(fx, fy, zx)) : fx * fy + zx - fy * fz);
		} else {
			set_f(want, i, fusion ? fma(-y, z, fma(x, y, z * x)) : x * y + z * x - y * z);
		}
	}
	blk_devptr da = dev_from(a), db = dev_from(b), dc = dev_from(c), d = dev_zeros(t, n);
	bool ok = (fusion ? run_kernel(src, NULL, ARGS(P(da), P(db), P(dc), P(d), I(n)), NO_CONSTS, GRID(0, 0, 0))
	                  : run_kernel(src, NULL, ARGS(P(da), P(db), P(dc), P(d), I(n)), CONSTS(CI("fp_fusion", 0)),
	                               GRID(0, 0, 0))) == BLK_SUCCESS;
	if (ok) {
		arr got = dev_read(d, t, n);
		const arr ins[] = {a, b, c};
		ok = check_exact(got, want, ins, 3);
	}
	result(ok, "x y + z x - y z, %s, %s", dts[t].name,
	       fusion ? "the default (fp_fusion on): the contraction rule's fmas, exact"
	              : "fp_fusion = 0: each operation rounded, exact");
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	num_warps_case(0);
	num_warps_case(2);
	num_warps_case(8);
	timer_case();
	const dt types[] = {DT_I32, DT_F32, DT_U8, DT_F64, DT_I64, DT_F16};
	for (int t = 0; t < 6; t++)
		unroll_case(types[t], 2 << (t % 3));
	asm_case();
	asm_pack_case();
	for (int f = 0; f < 2; f++) {
		fusion_case(DT_F32, f);
		fusion_case(DT_F64, f);
	}
	return ops_finish();
}
