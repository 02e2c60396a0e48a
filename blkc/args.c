/* args.c: the kernel arguments of blkc run, bench and tune from NAME=SPEC:
 * buffers of COUNT[:INIT] elements (filled, random or read from a file) and
 * scalar values. */
#include "blkc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t rng_state;

static double next_uniform(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng_state >> 11) * 0x1p-53 * 2.0 - 1.0;
}

static double next_normal(void)
{
	double u1 = (next_uniform() + 1.0) / 2.0, u2 = (next_uniform() + 1.0) / 2.0;
	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int elem_size(ScalarKind k) { return type_bytes(type_scalar(k)); }

static void put_elem(void *base, int64_t i, ScalarKind k, double v)
{
	unsigned char *p = (unsigned char *)base + i * elem_size(k);
	uint64_t bits;
	if (scalar_is_float(k))
		bits = fp_encode(k, v);
	else if (k == SK_I1)
		bits = v != 0;
	else
		bits = (uint64_t)(int64_t)v;
	memcpy(p, &bits, (size_t)elem_size(k)); /* little-endian: the low bytes */
}

double get_elem(const void *base, int64_t i, ScalarKind k)
{
	uint64_t bits = 0;
	memcpy(&bits, (const unsigned char *)base + i * elem_size(k), (size_t)elem_size(k));
	if (scalar_is_float(k))
		return fp_decode(k, bits);
	if (scalar_is_signed(k) && k != SK_I1) {
		int w = scalar_bits(k);
		if (w < 64 && (bits >> (w - 1)) & 1)
			bits |= ~((UINT64_C(1) << w) - 1);
		return (double)(int64_t)bits;
	}
	return (double)bits;
}

bool read_raw(const char *path, void *dst, size_t bytes)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: error: cannot open '%s': %s\n", tool_name, path, strerror(errno));
		return false;
	}
	size_t got = fread(dst, 1, bytes, f);
	int extra = fgetc(f);
	fclose(f);
	if (got != bytes || extra != EOF) {
		fprintf(stderr, "%s: error: '%s' holds %s bytes than the %zu the buffer needs\n", tool_name, path,
		        got != bytes ? "fewer" : "more", bytes);
		return false;
	}
	return true;
}

/* Makes the host side of a buffer from "COUNT[:INIT]": 0, or the exit
 * status (2 for a mistake in the words, 1 when it cannot be made). */
static int make_buffer(RunBuffer *b, const char *spec)
{
	char *end;
	errno = 0;
	long long count = strtoll(spec, &end, 0);
	if (errno || count <= 0 || count > (1LL << 34) || (*end && *end != ':')) {
		fprintf(stderr, "%s: error: '%s=%s': a buffer is COUNT[:INIT] with COUNT > 0\n", tool_name, b->name, spec);
		return 2;
	}
	b->count = count;
	b->bytes = (size_t)count * (size_t)elem_size(b->kind);
	b->host = calloc(1, b->bytes);
	if (!b->host) {
		fprintf(stderr, "%s: error: out of memory for '%s'\n", tool_name, b->name);
		return 1;
	}
	const char *init = *end ? end + 1 : "zeros";
	if (strncmp(init, "file=", 5) == 0)
		return read_raw(init + 5, b->host, b->bytes) ? 0 : 1;
	double fill = 0;
	bool is_fill = strncmp(init, "fill=", 5) == 0;
	if (is_fill) {
		fill = strtod(init + 5, &end);
		if (*end || end == init + 5) {
			fprintf(stderr, "%s: error: '%s': fill= needs a number\n", tool_name, b->name);
			return 2;
		}
	} else if (strcmp(init, "zeros") && strcmp(init, "ones") && strcmp(init, "arange") && strcmp(init, "random") &&
	           strcmp(init, "randn")) {
		fprintf(stderr, "%s: error: '%s': unknown INIT '%s' (zeros, ones, arange, random, randn, fill=V, "
		                "file=PATH)\n", tool_name, b->name, init);
		return 2;
	}
	bool is_int = !scalar_is_float(b->kind);
	for (int64_t i = 0; i < count; i++) {
		double v = is_fill ? fill : strcmp(init, "ones") == 0 ? 1 : strcmp(init, "arange") == 0 ? (double)i
		         : strcmp(init, "random") == 0 ? (is_int ? floor((next_uniform() + 1) * 64) : next_uniform())
		         : strcmp(init, "randn") == 0 ? next_normal() : 0;
		put_elem(b->host, i, b->kind, v);
	}
	return 0;
}

/* The kernel's arguments from the NAME=SPEC words argv[first..argc): a value
 * for each scalar parameter, a buffer for each pointer (bufs[(*n_bufs)++],
 * made on the host, then copied to the device). *args_out is malloc'd.
 * Returns 0, or after reporting what is wrong the exit status: 2 for a
 * mistake in the words (a command-line mistake), 1 for a failure. */
int make_args(blk_context *ctx, blk_kernel *k, int argc, char **argv, int first, blk_arg **args_out,
               int *n_args_out, RunBuffer *bufs, int *n_bufs)
{
	int np = blk_kernel_num_params(k);
	*args_out = calloc((size_t)(np ? np : 1), sizeof **args_out);
	blk_arg *args = *args_out;
	if (!args)
		return 1;
	int n_args = 0;
	for (int i = 0; i < np; i++) {
		blk_param_info p;
		blk_kernel_param(k, i, &p);
		if (p.is_const)
			continue;
		const char *spec = NULL;
		size_t len = strlen(p.name);
		for (int a = first; a < argc; a++)
			if (strncmp(argv[a], p.name, len) == 0 && argv[a][len] == '=')
				spec = argv[a] + len + 1;
		if (!spec) {
			fprintf(stderr, "%s: error: give the argument '%s' (%s) as %s=%s\n", tool_name, p.name, p.type, p.name,
			        p.kind == BLK_PARAM_POINTER ? "COUNT[:INIT]" : "VALUE");
			return 2;
		}
		if (p.kind != BLK_PARAM_POINTER) {
			char *end;
			if (p.kind == BLK_PARAM_INT) {
				errno = 0;
				long long v = strtoll(spec, &end, 0);
				if (*end || errno) {
					fprintf(stderr, "%s: error: '%s' (%s) needs an integer, got '%s'\n", tool_name, p.name, p.type, spec);
					return 2;
				}
				args[n_args++] = blk_arg_int(v);
			} else {
				double v = strtod(spec, &end);
				if (*end) {
					fprintf(stderr, "%s: error: '%s' (%s) needs a number, got '%s'\n", tool_name, p.name, p.type, spec);
					return 2;
				}
				args[n_args++] = blk_arg_float(v);
			}
			continue;
		}
		if (strncmp(p.type, "**", 2) == 0) {
			fprintf(stderr, "%s: error: '%s' is %s: pointers to pointers can only be given through the C API\n", tool_name,
			        p.name, p.type);
			return 2;
		}
		ScalarKind elem;
		if (!scalar_from_name(p.type + 1, &elem)) { /* *T, T a const type parameter */
			fprintf(stderr, "%s: error: the element type of '%s' (%s) is a const type parameter: give it with -D %s=f32 "
			        "(or another type)\n", tool_name, p.name, p.type, p.type + 1);
			return 2;
		}
		RunBuffer *b = &bufs[(*n_bufs)++];
		b->name = p.name;
		b->kind = elem;
		int st = make_buffer(b, spec);
		if (st)
			return st;
		if (blk_malloc(ctx, b->bytes, &b->dev) != BLK_SUCCESS ||
		    blk_copy_to_device(ctx, b->dev, b->host, b->bytes) != BLK_SUCCESS) {
			print_lib_error(NULL);
			return 1;
		}
		args[n_args++] = blk_arg_ptr(b->dev);
	}
	*n_args_out = n_args;
	for (int a = first; a < argc; a++) {
		const char *eq = strchr(argv[a], '=');
		bool known = false;
		for (int i = 0; i < np && eq && !known; i++) {
			blk_param_info p;
			blk_kernel_param(k, i, &p);
			known = !p.is_const && strlen(p.name) == (size_t)(eq - argv[a]) && strncmp(p.name, argv[a], (size_t)(eq - argv[a])) == 0;
		}
		if (!known) {
			fprintf(stderr, "%s: error: '%s' names no runtime parameter of the kernel\n", tool_name, argv[a]);
			return 2;
		}
	}
	return 0;
}
