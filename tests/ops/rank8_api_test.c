/* tests/ops: blocks of rank 8 (BLK_MAX_RANK), on every element type: a
 * (256,) block reshaped to (4, 2, 2, 1, 2, 2, 2, 2), max and min along
 * each of the 8 axes, a permutation of all 8 axes, an integer index and a slice of a
 * rank-8 block, and back to one axis. The input's edge is masked (elements
 * at n and after read as 0). All exact. */
#include "ops.h"

/* Element i of x as the kernel loads it (0 at n and after). */
static int64_t i_of(arr x, int i, int n) { return i < n ? get_i(x, i) : 0; }

static const dt ALL[] = {DT_I1,  DT_I8,  DT_I16, DT_I32, DT_I64,  DT_U8,   DT_U16,
                         DT_U32, DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64, DT_E4M3, DT_E5M2};

static const int SH[8] = {4, 2, 2, 1, 2, 2, 2, 2};
static const int PERM[8] = {3, 7, 0, 5, 1, 6, 2, 4};

/* Row-major strides of SH. */
static void strides(const int *sh, int *st)
{
	int s = 1;
	for (int d = 7; d >= 0; d--) {
		st[d] = s;
		s *= sh[d];
	}
}

static const char *SRC =
	"kernel k(x: *$T, out: *$T, n: i32) {\n"
	"    let offs = arange(0, 256);\n"
	"    let v = load(x + offs, mask = offs < n, other = 0);\n"
	"    let r = reshape(v, 4, 2, 2, 1, 2, 2, 2, 2);\n"
	"    let o = arange(0, 128);\n"
	"    store(out + 0 * 256 + arange(0, 64), reshape(max(r, 0), 64));\n"
	"    store(out + 1 * 256 + o, reshape(max(r, 1), 128));\n"
	"    store(out + 2 * 256 + o, reshape(min(r, 2), 128));\n"
	"    store(out + 3 * 256 + offs, reshape(max(r, 3), 256));\n"
	"    store(out + 4 * 256 + o, reshape(min(r, 4), 128));\n"
	"    store(out + 5 * 256 + o, reshape(max(r, 5), 128));\n"
	"    store(out + 6 * 256 + o, reshape(min(r, 6), 128));\n"
	"    store(out + 7 * 256 + o, reshape(max(r, 7), 128));\n"
	"    store(out + 8 * 256 + offs, reshape(permute(r, 3, 7, 0, 5, 1, 6, 2, 4), 256));\n"
	"    store(out + 9 * 256 + arange(0, 16), reshape(r[2, 1, :, 0, :, 1], 16));\n"
	"    store(out + 10 * 256 + o, reshape(r[1:3, ::-1], 128));\n"
	"}\n";

static double minmax(dt t, double a, double b, bool mx)
{
	if (dt_float(t) && (isnan(a) || isnan(b)))
		return isnan(a) ? b : a;
	return mx ? (a > b ? a : b) : (a < b ? a : b);
}

static void rank8_case(dt t)
{
	arr x = arr_new(t, 256), want = arr_new(t, 11 * 256);
	fill_random(x, 1000);
	int n = (int)rng_range(128, 256), st[8];
	strides(SH, st);
	double xv[256];
	for (int i = 0; i < 256; i++)
		xv[i] = i < n ? (dt_float(t) ? get_f(x, i) : (double)get_i(x, i)) : 0;
	/* reductions: out element j of axis d, all the inputs with the other
	 * coordinates of j */
	for (int d = 0; d < 8; d++) {
		int rs[7], rst[7], k = 0;
		for (int e = 0; e < 8; e++)
			if (e != d)
				rs[k++] = SH[e];
		int s = 1;
		for (int e = 6; e >= 0; e--) {
			rst[e] = s;
			s *= rs[e];
		}
		bool mx = d == 0 || d == 1 || d == 3 || d == 5 || d == 7;
		for (int j = 0; j < 256 / SH[d]; j++) {
			int base = 0;
			for (int e = 0, q = 0; e < 8; e++) {
				if (e == d)
					continue;
				base += (j / rst[q] % rs[q]) * st[e];
				q++;
			}
			if (dt_float(t)) {
				double m = xv[base];
				for (int c = 1; c < SH[d]; c++)
					m = minmax(t, m, xv[base + c * st[d]], mx);
				set_f(want, d * 256 + j, m);
			} else {
				int64_t m = i_of(x, base, n);
				for (int c = 1; c < SH[d]; c++) {
					int64_t y = i_of(x, base + c * st[d], n);
					bool u = dt_unsigned(t);
					bool gt = u ? (uint64_t)y > (uint64_t)m : y > m;
					if (mx ? gt : (!gt && y != m))
						m = y;
				}
				set_i(want, d * 256 + j, m);
			}
		}
	}
	/* the permutation: out coordinate i of axis e is input axis PERM[e] */
	int psh[8], pst[8];
	for (int e = 0; e < 8; e++)
		psh[e] = SH[PERM[e]];
	strides(psh, pst);
	for (int j = 0; j < 256; j++) {
		int src = 0;
		for (int e = 0; e < 8; e++)
			src += (j / pst[e] % psh[e]) * st[PERM[e]];
		set_bits(want, 8 * 256 + j, src < n ? get_bits(x, src) : 0);
	}
	/* r[2, 1, :, 0, :, 1] is (2, 2, 2, 2): axes 2, 4, 6, 7 */
	for (int j = 0; j < 32; j++) {
		int src = 2 * st[0] + 1 * st[1] + 0 * st[3] + 1 * st[5] + (j >> 3 & 1) * st[2] + (j >> 2 & 1) * st[4] +
		          (j >> 1 & 1) * st[6] + (j & 1) * st[7];
		set_bits(want, 9 * 256 + j, j < 16 && src < n ? get_bits(x, src) : 0);
	}
	/* r[1:3, ::-1]: rows 1, 2 of axis 0, axis 1 reversed; (2, 2, 2, 1, 2, 2, 2, 2) */
	for (int j = 0; j < 128; j++) {
		int q = j, a0 = q / 64 + 1, a1 = 1 - (q / 32 % 2), rest = q % 32;
		int src = a0 * st[0] + a1 * st[1] + rest;
		set_bits(want, 10 * 256 + j, src < n ? get_bits(x, src) : 0);
	}
	blk_devptr dx = dev_from(x), dout = dev_zeros(t, 11 * 256);
	bool ok = run_kernel(render(SRC, "T", dts[t].name, NULL), NULL, ARGS(P(dx), P(dout), I(n)), NO_CONSTS,
	                     GRID(1, 1, 1)) == BLK_SUCCESS;
	if (ok)
		ok = check_exact(dev_read(dout, t, 11 * 256), want, &x, 1);
	result(ok, "rank 8 (4, 2, 2, 1, 2, 2, 2, 2) %s: max, min along each axis, permute, index, slice (n = %d)",
	       dts[t].name, n);
}

int main(int argc, char **argv)
{
	ops_init(argc, argv);
	for (int t = 0; t < COUNT(ALL); t++)
		rank8_case(ALL[t]);
	return ops_finish();
}
