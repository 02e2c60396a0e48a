/* run.c: blkc run: one launch of the kernel, then its buffers printed,
 * summed, saved or compared with files. */
#include "blkc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void run_usage(FILE *f)
{
	fputs("usage: blkc run [options] FILE [NAME=SPEC ...]\n"
	      "\n"
	      "Runs a kernel on the GPU when one can be used, else on the interpreter\n"
	      "(BLK_BACKEND=gpu or BLK_BACKEND=interpreter chooses one).\n"
	      "FILE '-' reads the program from standard input.\n"
	      "Each runtime parameter NAME of the kernel gets a SPEC:\n"
	      "  pointer   COUNT[:INIT]   a new buffer of COUNT elements of the pointee type;\n"
	      "                           INIT: zeros (default), ones, arange, random (uniform in\n"
	      "                           [-1, 1)), randn, fill=VALUE, file=PATH (raw elements)\n"
	      "  scalar    VALUE          an integer or float\n"
	      "\n"
	      "options:\n"
	      "  -k, --kernel=NAME        the kernel (default: the only one)\n"
	      "  -D, --define=NAME=VALUE  a const parameter's value\n"
	      "  -I, --include=DIR        import search path\n"
	      "      --grid=X[,Y[,Z]]     the grid (default: the kernel's grid clause)\n"
	      "      --threads=N          interpreter threads (default 1)\n"
	      "      --seed=S             seed of random fills (default 1)\n"
	      "      --print=NAME[:N]     print buffer NAME after the run (its first N elements)\n"
	      "      --checksum           print the sum and a hash of every buffer after the run\n"
	      "      --save=NAME:PATH     write buffer NAME's raw elements to PATH (never the\n"
	      "                           program or a file it imports: exit 2)\n"
	      "      --compare=NAME:PATH[:TOL]\n"
	      "                           compare buffer NAME with PATH's raw elements; floats\n"
	      "                           within TOL relative (default 1e-6); exit 1 if they differ\n"
	      "\n"
	      "blkc bench and blkc tune take the same arguments to time the kernel.\n",
	      f);
}

static RunBuffer *find_run_buffer(RunBuffer *bufs, int n, const char *name, size_t len)
{
	for (int i = 0; i < n; i++)
		if (strlen(bufs[i].name) == len && strncmp(bufs[i].name, name, len) == 0)
			return &bufs[i];
	fprintf(stderr, "%s: error: no buffer named '%.*s'\n", tool_name, (int)len, name);
	return NULL;
}

/* --compare=NAME:PATH[:TOL]: says whether buffer NAME matches PATH's raw
 * elements; false when it differs or cannot be compared. */
static bool compare_buffer(const char *arg, RunBuffer *bufs, int n_bufs)
{
	bool ok = true;
	char *spec = strdup(arg);
	char *p1 = spec ? strchr(spec, ':') : NULL;
	char *p2 = p1 ? strchr(p1 + 1, ':') : NULL;
	if (p2)
		*p2 = '\0';
	double tol = p2 ? strtod(p2 + 1, NULL) : 1e-6;
	RunBuffer *b = p1 ? find_run_buffer(bufs, n_bufs, spec, (size_t)(p1 - spec)) : NULL;
	void *ref = b ? malloc(b->bytes) : NULL;
	if (!ref || !read_raw(p1 + 1, ref, b->bytes)) {
		fprintf(stderr, "%s: error: cannot compare '%s'\n", tool_name, arg);
		ok = false;
	} else {
		int64_t bad = 0, first = -1;
		for (int64_t j = 0; j < b->count; j++) {
			double x = get_elem(b->host, j, b->kind), y = get_elem(ref, j, b->kind);
			bool same = scalar_is_float(b->kind) ? (isnan(x) && isnan(y)) || fabs(x - y) <= tol * fabs(y) || x == y
			                                     : x == y;
			if (!same && bad++ == 0)
				first = j;
		}
		if (bad) {
			printf("%s: %lld of %lld elements differ from %s; first at %lld: %.9g, expected %.9g\n", b->name,
			       (long long)bad, (long long)b->count, p1 + 1, (long long)first, get_elem(b->host, first, b->kind),
			       get_elem(ref, first, b->kind));
			ok = false;
		} else {
			printf("%s: matches %s (%lld elements)\n", b->name, p1 + 1, (long long)b->count);
		}
	}
	free(ref);
	free(spec);
	return ok;
}

/* blkc run after the arguments are made: launches the kernel once, reads
 * its buffers back and does what --print, --checksum, --save and --compare
 * ask. Returns the exit status. */
int run_kernel(const ToolOptions *o, blk_context *ctx, blk_kernel *k, const blk_arg *args, int n_args,
               const blk_launch_options *lo, RunBuffer *bufs, int n_bufs)
{
	blk_status st = blk_launch(k, args, n_args, lo);
	fputs(blk_context_printed(ctx), stdout);
	if (st != BLK_SUCCESS) {
		print_lib_error(NULL);
		return 1;
	}
	for (int i = 0; i < n_bufs; i++)
		if (blk_copy_from_device(ctx, bufs[i].host, bufs[i].dev, bufs[i].bytes) != BLK_SUCCESS) {
			/* a kernel that faulted shows here: its buffers were never written */
			char what[300];
			snprintf(what, sizeof what, "reading back '%s'", bufs[i].name);
			print_lib_error(what);
			return 1;
		}
	int status = 0;
	for (int i = 0; i < o->n_print; i++) {
		const char *colon = strchr(o->prints[i], ':');
		RunBuffer *b = find_run_buffer(bufs, n_bufs, o->prints[i],
		                               colon ? (size_t)(colon - o->prints[i]) : strlen(o->prints[i]));
		if (!b) {
			status = 1;
			continue;
		}
		int64_t n = colon ? strtoll(colon + 1, NULL, 10) : b->count;
		if (n <= 0 || n > b->count)
			n = b->count;
		printf("%s:", b->name);
		for (int64_t j = 0; j < n; j++)
			printf(" %.9g", get_elem(b->host, j, b->kind));
		putchar('\n');
	}
	if (o->checksum)
		for (int i = 0; i < n_bufs; i++) {
			double sum = 0;
			uint64_t h = 14695981039346656037ull; /* FNV-1a of the bytes */
			for (int64_t j = 0; j < bufs[i].count; j++)
				sum += get_elem(bufs[i].host, j, bufs[i].kind);
			for (size_t j = 0; j < bufs[i].bytes; j++)
				h = (h ^ ((unsigned char *)bufs[i].host)[j]) * 1099511628211ull;
			printf("%s: sum %.9g hash %016llx\n", bufs[i].name, sum, (unsigned long long)h);
		}
	for (int i = 0; i < o->n_save; i++) {
		const char *colon = strchr(o->saves[i], ':');
		RunBuffer *b = colon ? find_run_buffer(bufs, n_bufs, o->saves[i], (size_t)(colon - o->saves[i])) : NULL;
		FILE *f = b ? fopen(colon + 1, "wb") : NULL;
		if (!f || fwrite(b->host, 1, b->bytes, f) != b->bytes || fclose(f) != 0) {
			fprintf(stderr, "%s: error: cannot save '%s'\n", tool_name, o->saves[i]);
			status = 1;
		}
	}
	for (int i = 0; i < o->n_cmp; i++)
		if (!compare_buffer(o->compares[i], bufs, n_bufs))
			status = 1;
	return status;
}
