/* aot_host.c: drives the C that `blkc --emit=c -o types` made of
 * tests/cli/kernels/types.tile, against fake_libcuda.c (tests/cli/run.sh
 * builds both). Prints "ok NAME" or "FAIL NAME: why" a check; exits with
 * the number of failures.
 *
 *   aot_host cubin|ptx|assert
 *     cubin   the fake takes the cubin (blkc found ptxas)
 *     ptx     no cubin, or the fake refuses it: kernels come from PTX
 *     assert  as ptx, and the fake records a failed assert at each launch */
#define _POSIX_C_SOURCE 200809L

#include "types.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *name, const char *why)
{
	if (ok)
		printf("ok   aot: %s\n", name);
	else
		printf("FAIL aot: %s: %s\n", name, why);
	failures += !ok;
}

typedef int (*last_fn)(char *, unsigned *, unsigned *, unsigned *, int *, unsigned char (*)[8]);

static long long param_int(unsigned char b[8], int size)
{
	long long v = 0;
	memcpy(&v, b, (size_t)size); /* little-endian */
	if (size < 8 && (v >> (size * 8 - 1)) & 1)
		v -= 1LL << (size * 8);
	return v;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ptx";
	char msg[512];
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	void *f_last = lib ? dlsym(lib, "fake_last_launch") : NULL, *f_launches = lib ? dlsym(lib, "fake_launches") : NULL;
	void *f_live = lib ? dlsym(lib, "fake_modules_live") : NULL, *f_refs = lib ? dlsym(lib, "fake_primary_refs") : NULL;
	if (!f_last || !f_launches || !f_live || !f_refs) {
		printf("FAIL aot: the fake driver is not the libcuda.so.1 found\n");
		return 1;
	}
	last_fn last;
	int (*launches)(void), (*live)(void), (*refs)(void);
	memcpy(&last, &f_last, sizeof last);
	memcpy(&launches, &f_launches, sizeof launches);
	memcpy(&live, &f_live, sizeof live);
	memcpy(&refs, &f_refs, sizeof refs);

	blk_status st = types_load();
	snprintf(msg, sizeof msg, "status %d: %s", (int)st, types_error());
	check(st == BLK_SUCCESS, "load", msg);
	int from_ptx = types_loaded_from_ptx();
	snprintf(msg, sizeof msg, "%d of 2 kernels from PTX", from_ptx);
	check(strcmp(mode, "cubin") == 0 ? from_ptx == 0 : from_ptx == 2, "kernels loaded from the expected image", msg);
	check(live() == 2 && refs() == 1, "two modules, device 0's primary context retained", "wrong counts");

	char name[128];
	unsigned grid[3], block[3], smem;
	int sizes[64];
	unsigned char bytes[64][8];
	float out[16] = {0};
	unsigned char flags[16] = {0};
	CUdeviceptr d_out = (CUdeviceptr)(uintptr_t)out, d_flags = (CUdeviceptr)(uintptr_t)flags; /* host memory */

	st = types_fill_launch(NULL, 3, 1, 1, d_out, 130, 2.5f);
	int np = last(name, grid, block, &smem, sizes, bytes);
	snprintf(msg, sizeof msg, "status %d (%s), '%s' grid %u,%u,%u block %u shared %u", (int)st, types_error(), name,
	         grid[0], grid[1], grid[2], block[0], smem);
	check(st == BLK_SUCCESS && strcmp(name, "fill") == 0 && grid[0] == 3 && grid[1] == 1 && grid[2] == 1 &&
	          block[0] == 128 && block[1] == 1 && smem == 0,
	      "fill: launched with its grid, 128 threads", msg);
	if (np == 3) {
		float v;
		memcpy(&v, bytes[2], 4);
		check(sizes[0] == 8 && param_int(bytes[0], 8) == (long long)d_out && sizes[1] == 4 &&
		          param_int(bytes[1], 4) == 130 && sizes[2] == 4 && v == 2.5f,
		      "fill: arguments in the sizes the PTX declares", "wrong bytes");
	}

	/* every kind of scalar: the PTX's sizes and the values' bytes */
	st = types_mix_launch(NULL, 1, 1, 1, d_out, d_flags, -3, -2, 65535, -5, 1ULL << 40, 0x3c00, 0x3f80, 2.5, true, 7,
	                      8, 1.5f);
	np = last(name, grid, block, &smem, sizes, bytes);
	snprintf(msg, sizeof msg, "status %d (%s)", (int)st, types_error());
	check(st == BLK_SUCCESS && strcmp(name, "mix") == 0, "mix: launched", msg);
	if (np >= 0) {
		static const int want_size[14] = {8, 8, 4, 4, 4, 8, 8, 2, 2, 8, 4, 4, 4, 4};
		static const long long want_int[14] = {0, 0, -3, -2, 65535, -5, 1LL << 40, 0x3c00, 0x3f80, 0, 1, 7, 8, 0};
		int ok = np == 14;
		for (int i = 0; ok && i < 14; i++) {
			ok = sizes[i] == want_size[i];
			if (ok && i >= 2 && i != 9 && i != 13)
				ok = param_int(bytes[i], sizes[i]) == want_int[i];
			if (!ok)
				snprintf(msg, sizeof msg, "parameter %d: %d bytes, %lld", i, sizes[i], param_int(bytes[i], sizes[i]));
		}
		double h;
		float dflt;
		memcpy(&h, bytes[9], 8);
		memcpy(&dflt, bytes[13], 4);
		if (ok && (h != 2.5 || dflt != 1.5f)) {
			ok = 0;
			snprintf(msg, sizeof msg, "floats: %g, %g", h, (double)dflt);
		}
		if (np != 14)
			snprintf(msg, sizeof msg, "%d parameters", np);
		check(ok, "mix: i8, i16, u16 widened to 32 bits; i64, u64, f16, bf16, f64, i1, f32 as the PTX takes them", msg);
	}

	st = types_mix_check(NULL);
	if (strcmp(mode, "assert") == 0) {
		const char *want = "tests/cli/kernels/types.tile:7:5: error: assertion failed: lane in range (kernel 'mix', "
		                   "program (2, 0, 0), element 5)";
		snprintf(msg, sizeof msg, "status %d: '%s'", (int)st, types_error());
		check(st == BLK_ERROR_LAUNCH && strcmp(types_error(), want) == 0, "mix_check reports the failed assert", msg);
		st = types_mix_check(NULL);
		check(st == BLK_SUCCESS, "mix_check clears it", types_error());
	} else {
		check(st == BLK_SUCCESS, "mix_check: no assert failed", types_error());
	}

	int before = launches();
	st = types_fill_launch(NULL, 0, 1, 1, d_out, 0, 0.0f);
	check(st == BLK_SUCCESS && launches() == before, "a grid of no programs launches nothing", types_error());

	types_unload();
	check(live() == 0 && refs() == 0, "unload: modules unloaded, the primary context released", "still held");
	st = types_fill_launch(NULL, 1, 1, 1, d_out, 1, 1.0f);
	check(st == BLK_SUCCESS && live() == 2, "a launch after unload loads again", types_error());
	types_unload();
	(void)fabs(0.0);
	return failures;
}
