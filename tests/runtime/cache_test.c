/* The disk cache's pieces (runtime/cache.c), without a driver: what a
 * variant's key is made of (each field changes it, the order of const
 * values does not), entries written and read back, every kind of damage
 * refused (short, bad magic, another format version (2, a link's cubin),
 * checksum, another key, PTX that is empty or holds a NUL), autotuning
 * choices, where the folder is, BLK_CACHE and
 * BLK_ALWAYS_COMPILE, a folder that cannot be made, a refused one. */
#include "runtime.h"
#include "entry_format.h"
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "lower/lower.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int passed, failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	cond ? passed++ : failed++;
}

static int same(const CacheKey *a, const CacheKey *b) { return memcmp(a->b, b->b, sizeof a->b) == 0; }

static char tmpdir[256];

static void write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

static char *read_bytes(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *d = malloc((size_t)n + 1);
	*len = fread(d, 1, (size_t)n, f);
	d[*len] = '\0';
	fclose(f);
	return d;
}

/* Files in dir whose name starts with prefix. */
static int count_files(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static void test_keys(void)
{
	Source a = {.name = "main.tile", .text = "kernel k(x: *f32) { store(x, 1.0); }\n"};
	a.len = (uint32_t)strlen(a.text);
	Source b = {.name = "std/math.tile", .text = "fn sq(x) { return x * x; }\n"};
	b.len = (uint32_t)strlen(b.text);
	const Source *srcs[2] = {&a, &b};
	ConstBinding consts[2] = {{"BLOCK", false, 1024, 0, NULL}, {"EPS", true, 0, 1e-5, NULL}};
	int options[OPTION_COUNT];
	for (int i = 0; i < OPTION_COUNT; i++)
		options[i] = option_table[i].dflt;
	VariantKeyInput base = {
		.compiler_version = "blk 0.1.0 (LLVM 19.1.7, NVPTX)",
		.sources = srcs, .n_sources = 2, .kernel = "k", .consts = consts, .n_consts = 2,
		.spec = 5, .options = options, .arch = "sm_90", .cc_major = 9, .cc_minor = 0,
		.driver_version = 13000,
	};
	CacheKey k0, k1;
	expect(cache_variant_key(&base, &k0) && cache_variant_key(&base, &k1) && same(&k0, &k1),
	       "key: the same inputs give the same key");
	char hex[33];
	cache_key_hex(&k0, hex);
	expect(strlen(hex) == 32 && strspn(hex, "0123456789abcdef") == 32, "key: 32 hex digits");

	ConstBinding swapped[2] = {consts[1], consts[0]};
	VariantKeyInput in = base;
	in.consts = swapped;
	expect(cache_variant_key(&in, &k1) && same(&k0, &k1), "key: the order of const values does not count");

	struct {
		const char *what;
		VariantKeyInput in;
	} changes[32];
	int n = 0;
#define CHANGE(text, field, value) \
	do { \
		changes[n].what = text; \
		changes[n].in = base; \
		changes[n].in.field = value; \
		n++; \
	} while (0)
	CHANGE("the compiler version", compiler_version, "blk 0.1.1 (LLVM 19.1.7, NVPTX)");
	CHANGE("the kernel", kernel, "k2");
	CHANGE("the specialization", spec, 4);
	CHANGE("the tile passes (BLK_PASSES)", passes, "canonicalize,cse,dce,pipeline");
	CHANGE("the target", arch, "sm_80");
	CHANGE("the device's compute capability", cc_major, 10);
	CHANGE("the device's minor compute capability", cc_minor, 9);
	CHANGE("the driver's version", driver_version, 12080);
	CHANGE("one source fewer", n_sources, 1);
	CHANGE("a const value fewer", n_consts, 1);
	for (int i = 0; i < n; i++) {
		char what[160];
		snprintf(what, sizeof what, "key: %s changes it", changes[i].what);
		expect(cache_variant_key(&changes[i].in, &k1) && !same(&k0, &k1), what);
	}
	/* every option of the table that enters the key */
	for (int i = 0; i < OPTION_COUNT; i++) {
		int other[OPTION_COUNT];
		memcpy(other, options, sizeof other);
		other[i] = options[i] == option_table[i].lo ? option_table[i].hi : option_table[i].lo;
		in = base;
		in.options = other;
		char what[160];
		snprintf(what, sizeof what, "key: the option %s (%d, not %d) changes it", option_table[i].name, other[i],
		         options[i]);
		expect(option_table[i].in_key && cache_variant_key(&in, &k1) && !same(&k0, &k1), what);
	}
	/* sources: any byte, the name, the order */
	Source a2 = a;
	char text[256];
	snprintf(text, sizeof text, "%s", a.text);
	text[strlen(text) - 1] = ' '; /* the final newline becomes a space */
	a2.text = text;
	const Source *s2[2] = {&a2, &b};
	in = base;
	in.sources = s2;
	expect(cache_variant_key(&in, &k1) && !same(&k0, &k1), "key: one byte of the main source (whitespace) changes it");
	Source b2 = b;
	b2.text = "fn sq(x) { return x * x; } \n";
	b2.len = (uint32_t)strlen(b2.text);
	const Source *s3[2] = {&a, &b2};
	in.sources = s3;
	expect(cache_variant_key(&in, &k1) && !same(&k0, &k1), "key: a byte of an imported source changes it");
	Source a3 = a;
	a3.name = "other.tile";
	const Source *s4[2] = {&a3, &b};
	in.sources = s4;
	expect(cache_variant_key(&in, &k1) && !same(&k0, &k1), "key: the source's name changes it");
	const Source *s5[2] = {&b, &a};
	in.sources = s5;
	expect(cache_variant_key(&in, &k1) && !same(&k0, &k1), "key: the sources' order changes it");
	ConstBinding c2[2] = {consts[0], consts[1]};
	c2[0].i = 512;
	in = base;
	in.consts = c2;
	expect(cache_variant_key(&in, &k1) && !same(&k0, &k1), "key: a const's value changes it");
	c2[0] = (ConstBinding){"BLOCK", true, 0, 1024.0, NULL};
	expect(cache_variant_key(&in, &k1) && !same(&k0, &k1), "key: an int const given as the float 1024.0 changes it");
	c2[0] = (ConstBinding){"BLOCKS", false, 1024, 0, NULL};
	expect(cache_variant_key(&in, &k1) && !same(&k0, &k1), "key: a const's name changes it");
	/* const type parameters: each type its own entry, and none a number's */
	CacheKey kt[3];
	const char *types[3] = {"f16", "bf16", "f32"};
	for (int t = 0; t < 3; t++) {
		c2[0] = (ConstBinding){"T", false, 0, 0, types[t]};
		expect(cache_variant_key(&in, &kt[t]), "key: a const type gives a key");
	}
	expect(!same(&kt[0], &kt[1]) && !same(&kt[0], &kt[2]) && !same(&kt[1], &kt[2]),
	       "key: T = f16, bf16 and f32 give three keys");
	c2[0] = (ConstBinding){"T", false, 0, 0, NULL};
	expect(cache_variant_key(&in, &k1) && !same(&k1, &kt[0]), "key: T = f16 is not T = 0");
	c2[0] = (ConstBinding){"T", false, 0, 0, "f16"};
	expect(cache_variant_key(&in, &k1) && same(&k1, &kt[0]), "key: T = f16 twice gives one key");

	/* fields are hashed with their lengths */
	KeyHasher *h = rt_key_begin("t");
	rt_key_str(h, "ab");
	rt_key_str(h, "c");
	rt_key_end(h, &k0);
	h = rt_key_begin("t");
	rt_key_str(h, "a");
	rt_key_str(h, "bc");
	rt_key_end(h, &k1);
	expect(!same(&k0, &k1), "key: (\"ab\", \"c\") and (\"a\", \"bc\") differ");
	h = rt_key_begin("t");
	rt_key_str(h, NULL);
	rt_key_end(h, &k0);
	h = rt_key_begin("t");
	rt_key_str(h, "");
	rt_key_end(h, &k1);
	expect(!same(&k0, &k1), "key: NULL and \"\" differ");
	h = rt_key_begin("variant");
	rt_key_end(h, &k0);
	h = rt_key_begin("tune");
	rt_key_end(h, &k1);
	expect(!same(&k0, &k1), "key: the purpose is part of it");
}

static void test_entries(void)
{
	CacheKey key, other;
	KeyHasher *h = rt_key_begin("entry");
	rt_key_str(h, "one");
	rt_key_end(h, &key);
	h = rt_key_begin("entry");
	rt_key_str(h, "two");
	rt_key_end(h, &other);
	char hex[33], path[512], opath[512];
	const char *ptx = ".version 8.0\n.target sm_90\n.entry k() { ret; }\n";
	cache_key_hex(&key, hex);
	snprintf(path, sizeof path, "%s/%s.variant", tmpdir, hex);
	cache_key_hex(&other, hex);
	snprintf(opath, sizeof opath, "%s/%s.variant", tmpdir, hex);

	/* what the compile driver said of the kernel: three parameters, the
	 * last a tensor map, 384 threads, 4096 bytes of shared memory */
	CacheMeta meta = {.shared_bytes = 4096, .threads = 384, .n_params = 3, .n_tmaps = 1, .param_bytes = (const int[]){8, 4, 128}};
	CacheMeta none = {.threads = 32};
	CacheEntry e;
	expect(!cache_read_variant(tmpdir, &key, &e) && e.data == NULL, "entry: none yet, a miss");
	expect(cache_write_variant(tmpdir, &key, ptx, strlen(ptx), &meta), "entry: written");
	expect(count_files(tmpdir, ".tmp-") == 0 && count_files(tmpdir, "") >= 1, "entry: no temporary file left behind");
	int hit = cache_read_variant(tmpdir, &key, &e);
	expect(hit && e.ptx_len == strlen(ptx) && strcmp(e.ptx, ptx) == 0 && e.meta.shared_bytes == 4096,
	       "entry: read back, the PTX whole and NUL-terminated (the image the JIT loads), the shared memory");
	expect(hit && e.meta.threads == 384 && e.meta.n_params == 3 && e.meta.n_tmaps == 1 && e.meta.param_bytes[0] == 8 &&
	           e.meta.param_bytes[1] == 4 && e.meta.param_bytes[2] == 128,
	       "entry: the driver's metadata read back (threads, parameters and their bytes, tensor maps)");
	cache_entry_free(&e);
	expect(cache_check_variant_file(path, &key) == NULL && cache_check_variant_file(path, NULL) == NULL,
	       "entry: cache_check_variant_file accepts it");
	expect(!cache_read_variant(tmpdir, &other, &e), "entry: another key is a miss");

	size_t len = 0;
	char *good = read_bytes(path, &len);
	expect(good && len == 56 + 3 * 2 + strlen(ptx), "entry: 56 bytes of header, 2 of bytes a parameter, the PTX");
	if (!good)
		return;
	struct {
		const char *what, *why;
		size_t cut;  /* write this many bytes (0: all) */
		long flip;   /* flip this byte (-1: none) */
		int extra;   /* append a byte */
	} damage[] = {
		{"an empty file", "short", 0, -1, 0},
		{"10 bytes", "short", 10, -1, 0},
		{"the header alone", "short", 56, -1, 0},
		{"one byte short", "short", len - 1, -1, 0},
		{"one byte more", "short", len, -1, 1},
		{"a flipped byte in the PTX", "checksum", len, 56 + 6 + 10, 0},
		{"a flipped byte in the parameters' sizes", "checksum", len, 56 + 2, 0},
		{"a flipped byte in the threads", "checksum", len, 48, 0},
		{"a flipped byte in the parameter count (the PTX then starts elsewhere)", "short", len, 52, 0},
		{"a flipped byte in the tensor map count", "checksum", len, 54, 0},
		{"a flipped byte in the shared memory", "checksum", len, 12, 0},
		{"a flipped byte at the PTX's end", "checksum", len, (long)len - 3, 0},
		{"a flipped byte in the magic", "bad magic", len, 0, 0},
		{"format 2 (a link's cubin, relocatable code)", "format version", len, 8, 0},
		{"a flipped byte in the key", "key", len, 16 + 3, 0},
		{"a flipped byte in the checksum", "checksum", len, 40, 0},
		{"a PTX length of 2^62", "short", len, 32 + 7, 0},
	};
	for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
		char *bad = malloc(len + 1);
		memcpy(bad, good, len);
		size_t n = damage[i].cut;
		if (damage[i].flip >= 0)
			bad[damage[i].flip] ^= damage[i].flip == 32 + 7 ? 0x40 : 0x01; /* (version 3 ^ 1 = 2) */
		if (damage[i].extra)
			bad[n++] = 'x';
		if (i == 0)
			n = 0;
		write_bytes(path, bad, n);
		free(bad);
		const char *why = cache_check_variant_file(path, &key);
		char what[200];
		snprintf(what, sizeof what, "entry: %s is refused as '%s' (%s) and read as a miss", damage[i].what,
		         damage[i].why, why ? why : "accepted");
		expect(why && strcmp(why, damage[i].why) == 0 && !cache_read_variant(tmpdir, &key, &e) && e.data == NULL,
		       what);
	}
	/* whole entries (the checksum made to fit) whose PTX the JIT would not
	 * read as written: empty, or a NUL inside (the driver stops there) */
	size_t flen = 0;
	char *forged = entry_forge(good, len, 0, strlen(ptx), "", &flen);
	if (forged)
		write_bytes(path, forged, flen);
	const char *why = forged ? cache_check_variant_file(path, &key) : "not made";
	expect(why && strcmp(why, "ptx") == 0 && !cache_read_variant(tmpdir, &key, &e),
	       "entry: a whole entry with an empty PTX is refused as 'ptx'");
	free(forged);
	forged = malloc(len);
	memcpy(forged, good, len);
	forged[len - 8] = '\0';
	EntryHead eh;
	memcpy(&eh, forged, sizeof eh);
	eh.checksum = entry_checksum_of(forged, len);
	memcpy(forged, &eh, sizeof eh);
	write_bytes(path, forged, len);
	why = cache_check_variant_file(path, &key);
	expect(why && strcmp(why, "ptx") == 0 && !cache_read_variant(tmpdir, &key, &e),
	       "entry: a whole entry with a NUL in its PTX is refused as 'ptx'");
	free(forged);
	write_bytes(opath, good, len);
	expect(!cache_read_variant(tmpdir, &other, &e) && strcmp(cache_check_variant_file(opath, &other), "key") == 0,
	       "entry: a whole entry under another key's name is refused ('key')");
	unlink(opath);
	expect(cache_write_variant(tmpdir, &key, ptx, strlen(ptx), &meta) && cache_read_variant(tmpdir, &key, &e),
	       "entry: rewritten over a damaged one, read back");
	cache_entry_free(&e);
	expect(!cache_write_variant(tmpdir, &key, ptx, 0, &none) && !cache_write_variant(tmpdir, &key, NULL, 0, &none),
	       "entry: an empty PTX is not written");
	char nul[] = ".version 8.0\n\0.entry k() { ret; }\n";
	expect(!cache_write_variant(tmpdir, &key, nul, sizeof nul - 1, &none), "entry: a PTX holding a NUL is not written");
	int many[600];
	for (int i = 0; i < 600; i++)
		many[i] = i % 2 ? 8 : 4;
	CacheMeta wide = {.threads = 128, .n_params = 600, .param_bytes = many};
	expect(cache_write_variant(tmpdir, &key, ptx, strlen(ptx), &wide) && cache_read_variant(tmpdir, &key, &e) &&
	           e.meta.n_params == 600 && e.meta.param_bytes[598] == 4 && e.meta.param_bytes[599] == 8 &&
	           strcmp(e.ptx, ptx) == 0,
	       "entry: 600 parameters' bytes (PTX allows 4352 bytes of them) kept, the PTX after them");
	cache_entry_free(&e);
	CacheMeta odd = meta;
	odd.threads = 0;
	expect(!cache_write_variant(tmpdir, &key, ptx, strlen(ptx), &odd), "entry: metadata without threads is not written");
	free(good);
	unlink(path);

	char bad_dir[600];
	snprintf(bad_dir, sizeof bad_dir, "%s/no-such-folder", tmpdir);
	expect(!cache_write_variant(bad_dir, &key, ptx, strlen(ptx), &none) && !cache_read_variant(bad_dir, &key, &e),
	       "entry: a folder that does not exist: not written, a miss");
}

static void test_tune(void)
{
	CacheKey key;
	KeyHasher *h = rt_key_begin("tune");
	rt_key_end(h, &key);
	int index = -1;
	char config[128];
	expect(!cache_read_tune(tmpdir, &key, &index, config, sizeof config), "tune: none yet");
	expect(cache_write_tune(tmpdir, &key, 2, "BLOCK=1024 num_warps=8") &&
	           cache_read_tune(tmpdir, &key, &index, config, sizeof config) && index == 2 &&
	           strcmp(config, "BLOCK=1024 num_warps=8") == 0, "tune: the index and the config's text read back");
	char hex[33], path[512];
	cache_key_hex(&key, hex);
	snprintf(path, sizeof path, "%s/%s.tune", tmpdir, hex);
	size_t len;
	char *text = read_bytes(path, &len);
	char want[256];
	snprintf(want, sizeof want, "blk-autotune %d\n%s\n2\nBLOCK=1024 num_warps=8\n", (int)CACHE_FORMAT_VERSION, hex);
	expect(text && len == strlen(want) && memcmp(text, want, len) == 0, "tune: four lines of text");
	expect(!cache_read_tune(tmpdir, &key, &index, config, 8), "tune: a config longer than the buffer is refused");
	write_bytes(path, text, len - 1);
	expect(!cache_read_tune(tmpdir, &key, &index, config, sizeof config), "tune: a cut file is refused");
	text[20] ^= 1;
	write_bytes(path, text, len);
	expect(!cache_read_tune(tmpdir, &key, &index, config, sizeof config), "tune: another key inside is refused");
	text[20] ^= 1;
	text[strlen(text) - strlen("2\nBLOCK=1024 num_warps=8\n")] = 'x';
	write_bytes(path, text, len);
	expect(!cache_read_tune(tmpdir, &key, &index, config, sizeof config), "tune: an index that is no number is refused");
	free(text);
	expect(!cache_write_tune(tmpdir, &key, 1, "two\nlines"), "tune: a config of two lines is not written");
	unlink(path);
}

static void test_dirs(void)
{
	char buf[1024], want[1024];
	const char *home = getenv("HOME");
	setenv("BLK_CACHE_DIR", tmpdir, 1);
	expect(cache_dir(buf, sizeof buf) && strcmp(buf, tmpdir) == 0, "folder: $BLK_CACHE_DIR");
	snprintf(want, sizeof want, "%s/a/b/c/", tmpdir);
	setenv("BLK_CACHE_DIR", want, 1);
	want[strlen(want) - 1] = '\0';
	struct stat st;
	expect(cache_dir(buf, sizeof buf) && strcmp(buf, want) == 0 && stat(want, &st) == 0 && S_ISDIR(st.st_mode),
	       "folder: made with its parents, without the final '/'");
	unsetenv("BLK_CACHE_DIR");
	snprintf(want, sizeof want, "%s/xdg", tmpdir);
	setenv("XDG_CACHE_HOME", want, 1);
	strcat(want, "/blk");
	expect(cache_dir(buf, sizeof buf) && strcmp(buf, want) == 0, "folder: else $XDG_CACHE_HOME/blk");
	setenv("XDG_CACHE_HOME", "relative/path", 1);
	snprintf(want, sizeof want, "%s/home", tmpdir);
	setenv("HOME", want, 1);
	strcat(want, "/.cache/blk");
	expect(cache_dir(buf, sizeof buf) && strcmp(buf, want) == 0,
	       "folder: else $HOME/.cache/blk (a relative $XDG_CACHE_HOME is ignored, as the XDG spec says)");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	expect(!cache_dir(buf, sizeof buf), "folder: none when no variable says where");
	char file[600];
	snprintf(file, sizeof file, "%s/a-file", tmpdir);
	write_bytes(file, "x", 1);
	snprintf(want, sizeof want, "%s/sub", file);
	setenv("BLK_CACHE_DIR", want, 1);
	expect(!cache_dir(buf, sizeof buf), "folder: none when it cannot be made (under a file)");
	setenv("BLK_CACHE_DIR", file, 1);
	expect(!cache_dir(buf, sizeof buf), "folder: none when it is a file");
	unlink(file);

	/* a refused folder: the fallback's note once in the refusal, however
	 * often the folder is asked for before the refusal is taken */
	char shared[600], run[600], why[2048];
	snprintf(shared, sizeof shared, "%s/shared", tmpdir);
	snprintf(run, sizeof run, "%s/run", tmpdir);
	mkdir(shared, 0700);
	chmod(shared, 0777);
	mkdir(run, 0700);
	const char *old_run = getenv("XDG_RUNTIME_DIR");
	char *saved_run = old_run ? strdup(old_run) : NULL;
	setenv("XDG_RUNTIME_DIR", run, 1);
	setenv("BLK_CACHE_DIR", shared, 1);
	cache_take_refusal(NULL, 0);
	snprintf(want, sizeof want, "%s/blk", run);
	bool fell_back = cache_dir(buf, sizeof buf) && strcmp(buf, want) == 0;
	fell_back = fell_back && cache_dir(buf, sizeof buf) && strcmp(buf, want) == 0;
	bool took = cache_take_refusal(why, sizeof why);
	const char *note = strstr(why, "(kernels are cached in");
	expect(fell_back && took && note && !strstr(note + 1, "(kernels are cached in"),
	       "folder: a refused one falls back to $XDG_RUNTIME_DIR/blk, said once when asked twice");
	if (saved_run)
		setenv("XDG_RUNTIME_DIR", saved_run, 1);
	else
		unsetenv("XDG_RUNTIME_DIR");
	free(saved_run);
	unsetenv("BLK_CACHE_DIR");
	if (home)
		setenv("HOME", home, 1);

	unsetenv("BLK_CACHE");
	unsetenv("BLK_ALWAYS_COMPILE");
	expect(cache_mode() == CACHE_READ_WRITE, "mode: read and write by default");
	setenv("BLK_CACHE", "0", 1);
	expect(cache_mode() == CACHE_OFF, "mode: BLK_CACHE=0 is off");
	setenv("BLK_ALWAYS_COMPILE", "1", 1);
	expect(cache_mode() == CACHE_OFF, "mode: ... whatever BLK_ALWAYS_COMPILE says");
	setenv("BLK_CACHE", "1", 1);
	expect(cache_mode() == CACHE_WRITE_ONLY, "mode: BLK_ALWAYS_COMPILE=1 writes, never reads");
	setenv("BLK_ALWAYS_COMPILE", "0", 1);
	expect(cache_mode() == CACHE_READ_WRITE, "mode: BLK_ALWAYS_COMPILE=0 is the default");
	unsetenv("BLK_CACHE");
	unsetenv("BLK_ALWAYS_COMPILE");
}

static void test_median(void)
{
	double a[] = {5, 1, 4, 2, 3}, b[] = {4, 1, 3, 2}, c[] = {7};
	expect(rt_median_of(a, 5) == 3 && rt_median_of(b, 4) == 2.5 && rt_median_of(c, 1) == 7 && rt_median_of(c, 0) == 0,
	       "median: odd, even, one, none");
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/blk-cache-test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL cannot make a temporary folder\n0 passed, 1 failed\n");
		return 1;
	}
	test_keys();
	test_entries();
	test_tune();
	test_dirs();
	test_median();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("     (could not remove %s)\n", tmpdir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
