/* softmax_generic.c: runs examples/softmax_generic.tile, one row-wise
 * softmax written once over its element type T, for f16, bf16 and f32.
 *
 *   build/examples/softmax_generic [path/to/softmax_generic.tile]
 *
 * The kernel's `T: const type` is bound at each launch like any const
 * parameter, by name, with a type in place of a number:
 *     blk_const t = {.name = "T", .type = "bf16"};
 * Each type compiles its own variant (and disk cache entry). The inputs
 * are rounded to T first; the reference is computed in double from those
 * rounded values, and the result is compared after its rounding to T. */
#include "common.h"

enum { ROWS = 129, COLS = 700, X_STRIDE = 704, OUT_STRIDE = COLS };

typedef struct elem_type {
	const char *name;
	int bytes;
	double tol;   /* relative: a few roundings to T's precision */
	double floor; /* below its smallest normal value, T's error is absolute */
} elem_type;

/* Element i of a buffer of type t as a float, and v stored into it. */
static float get(const elem_type *t, const void *buf, size_t i)
{
	if (t->bytes == 4)
		return ((const float *)buf)[i];
	uint16_t h = ((const uint16_t *)buf)[i];
	return t->name[0] == 'b' ? bf16_to_float(h) : f16_to_float(h);
}

static void put(const elem_type *t, void *buf, size_t i, float v)
{
	if (t->bytes == 4)
		((float *)buf)[i] = v;
	else
		((uint16_t *)buf)[i] = t->name[0] == 'b' ? bf16_from_float(v) : f16_from_float(v);
}

/* Runs the kernel for type t on random rows; returns the comparison. */
static compare run_type(blk_context *ctx, blk_kernel *kernel, const elem_type *t, rng *r)
{
	size_t x_elems = (size_t)ROWS * X_STRIDE, out_elems = (size_t)ROWS * OUT_STRIDE;
	void *x = xmalloc(x_elems * (size_t)t->bytes), *out = xmalloc(out_elems * (size_t)t->bytes);
	/* the padding past each row's end holds huge values: reading it would show */
	for (size_t i = 0; i < (size_t)ROWS; i++)
		for (size_t j = 0; j < X_STRIDE; j++)
			put(t, x, i * X_STRIDE + j, j < COLS ? rng_uniform(r, -6, 6) : 6e4f);
	blk_devptr dx, dout;
	CHECK(blk_malloc(ctx, x_elems * (size_t)t->bytes, &dx));
	CHECK(blk_malloc(ctx, out_elems * (size_t)t->bytes, &dout));
	CHECK(blk_copy_to_device(ctx, dx, x, x_elems * (size_t)t->bytes));

	blk_const type = {.name = "T", .type = t->name};
	blk_launch_options opt = {.consts = &type, .n_consts = 1};
	blk_arg args[] = {blk_arg_ptr(dx),          blk_arg_ptr(dout),  blk_arg_int(X_STRIDE),
	                  blk_arg_int(OUT_STRIDE), blk_arg_int(ROWS), blk_arg_int(COLS)};
	CHECK(blk_launch(kernel, args, 6, &opt));
	CHECK(blk_copy_from_device(ctx, out, dout, out_elems * (size_t)t->bytes));

	double *want = xmalloc(out_elems * sizeof(double)), *got = xmalloc(out_elems * sizeof(double));
	for (size_t i = 0; i < (size_t)ROWS; i++) {
		double *w = want + i * OUT_STRIDE, m = -INFINITY, s = 0;
		for (size_t j = 0; j < COLS; j++)
			m = fmax(m, get(t, x, i * X_STRIDE + j));
		for (size_t j = 0; j < COLS; j++)
			s += w[j] = exp(get(t, x, i * X_STRIDE + j) - m);
		for (size_t j = 0; j < COLS; j++) {
			w[j] /= s;
			got[i * OUT_STRIDE + j] = get(t, out, i * OUT_STRIDE + j);
		}
	}
	compare c = compare_start(t->name, t->tol);
	for (size_t i = 0; i < out_elems; i++)
		compare_one(&c, (long)i, got[i], want[i], t->floor);
	CHECK(blk_free(ctx, dx));
	CHECK(blk_free(ctx, dout));
	free(x), free(out), free(want), free(got);
	return c;
}

int main(int argc, char **argv)
{
	blk_context *ctx;
	CHECK(blk_context_create(BLK_BACKEND_AUTO, 0, &ctx));
	blk_module *mod;
	blk_kernel *kernel;
	CHECK(blk_module_load_file(ctx, example_tile(argc, argv, "softmax_generic.tile"), NULL, &mod));
	CHECK(blk_kernel_get(mod, "softmax", &kernel));

	/* f16 keeps 11 significant bits, bf16 8: the result is rounded once to
	 * T after an f32 computation (half an ulp), plus f32's own error; f16's
	 * subnormals (below 2^-14) are spaced 2^-24 apart. */
	const elem_type types[] = {{"f16", 2, 1e-3, 0x1p-14}, {"bf16", 2, 8e-3, 1e-30}, {"f32", 4, 1e-5, 1e-30}};
	compare cs[3];
	rng r = {15};
	for (int i = 0; i < 3; i++)
		cs[i] = run_type(ctx, kernel, &types[i], &r);

	char title[128];
	snprintf(title, sizeof title, "softmax_generic %dx%d f16, bf16, f32 (%s)", ROWS, COLS, backend_name(ctx));
	int status = compare_report(title, cs, 3);
	blk_module_destroy(mod);
	blk_context_destroy(ctx);
	return status;
}
