/* The disk cache's trust (runtime/cache.c; the threat model in
 * docs/runtime.md), through blk.h against the stand-in driver:
 *  - under umask 000 the folders blk makes are 0700 and its entries 0600;
 *  - a planted entry (a whole entry under the key the victim's kernel asks
 *    for, whose PTX carries the mark PLANTED, its checksum made to fit) is
 *    loaded from a folder only the user can write (the mark is seen), and
 *    never from a folder others can
 *    write (0777, 1777), behind a symbolic link, in a folder of another
 *    uid, or itself another uid's or writable by others, is never loaded:
 *    a warning (blk_context_warnings) names the path and the fix, and the
 *    kernel is compiled (into $XDG_RUNTIME_DIR/blk for a refused folder);
 *  - stale temporary files are removed by the next write, fresh ones kept;
 *  - an entry that checks but cannot be used (its PTX without the kernel,
 *    shared memory over the device's limit) is compiled again and rewritten.
 * The cases of another uid need root (chown, a child under setuid); without
 * it they are skipped with a line that says so. */
#include "blk.h"
#include "entry_format.h"
#include "fake_cuda.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { OTHER_UID = 12345 };

static int passed, failed;
static FakeCuda fc;
static int (*images_with)(const char *text);
static char tmpdir[512], rundir[600];

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		printf("     last error: %s\n", blk_last_error());
	cond ? passed++ : failed++;
}

static const char *source =
	"kernel add(x: *f32, y: *f32, out: *f32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {\n"
	"    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
	"    let mask = offs < n;\n"
	"    store(out + offs, load(x + offs, mask = mask) + load(y + offs, mask = mask), mask = mask);\n"
	"}\n";

typedef struct Compiled {
	blk_status st;
	int from_disk, made_ptx, jits; /* PTX made (ms_ptx > 0), compiled by the stand-in's JIT meanwhile */
	int planted;                   /* planted PTX loaded meanwhile */
	char warnings[4096];
} Compiled;

/* A fresh context and module compiling `add` (BLOCK = block) with the
 * cache folder dir: what came of it. */
static Compiled compile(const char *dir, int block)
{
	Compiled c = {0};
	setenv("BLK_CACHE_DIR", dir, 1);
	int jits = fc.jits(), planted = images_with("PLANTED");
	blk_context *ctx = NULL;
	blk_module *m = NULL;
	blk_kernel *k = NULL;
	c.st = blk_context_create(BLK_BACKEND_GPU, 0, &ctx);
	if (c.st == BLK_SUCCESS)
		c.st = blk_module_load_source(ctx, "trust.tile", source, strlen(source), NULL, &m);
	if (c.st == BLK_SUCCESS)
		c.st = blk_kernel_get(m, "add", &k);
	if (c.st == BLK_SUCCESS) {
		blk_const cst = {.name = "BLOCK", .i = block};
		blk_launch_options o = {.consts = &cst, .n_consts = 1};
		blk_compile_info info;
		c.st = blk_kernel_compile(k, NULL, 0, &o, &info);
		c.from_disk = c.st == BLK_SUCCESS && info.from_disk_cache;
		c.made_ptx = c.st == BLK_SUCCESS && info.ms_ptx > 0;
	}
	if (ctx)
		snprintf(c.warnings, sizeof c.warnings, "%s", blk_context_warnings(ctx));
	blk_module_destroy(m);
	blk_context_destroy(ctx);
	c.jits = fc.jits() - jits;
	c.planted = images_with("PLANTED") - planted;
	return c;
}

static char *slurp(const char *path, size_t *len)
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

static void spit(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd >= 0) {
		if (write(fd, data, len) != (ssize_t)len)
			printf("     (could not write %s)\n", path);
		close(fd);
		chmod(path, mode);
	}
}

/* The name of dir's one *.variant file into out; the count of them. */
static int only_entry(const char *dir, char *out, size_t size)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l > 8 && strcmp(e->d_name + l - 8, ".variant") == 0 && n++ == 0)
			snprintf(out, size, "%s", e->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

static int has_bytes(const char *data, size_t len, const char *text)
{
	return memmem(data, len, text, strlen(text)) != NULL;
}

static void sub(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* Empties $XDG_RUNTIME_DIR/blk (the private folder of refused ones). */
static void clear_rundir(void)
{
	char cmd[800];
	snprintf(cmd, sizeof cmd, "rm -rf '%s/blk'", rundir);
	if (system(cmd) != 0)
		printf("     (could not empty %s/blk)\n", rundir);
}

/* A refused folder: the planted entry not loaded, the warning naming the
 * folder and `fix`, the kernel compiled into $XDG_RUNTIME_DIR/blk. */
static void expect_refused_dir(const char *what, const char *dir, const char *fix)
{
	clear_rundir();
	Compiled c = compile(dir, 128);
	char msg[1200], name[64], priv[700];
	snprintf(msg, sizeof msg, "%s: the planted PTX is not loaded; compiled instead", what);
	expect(c.st == BLK_SUCCESS && c.planted == 0 && !c.from_disk && c.made_ptx, msg);
	snprintf(msg, sizeof msg, "%s: a warning names the folder and the fix (%s)", what, fix);
	expect(strstr(c.warnings, "warning: the disk cache folder") && strstr(c.warnings, dir) && strstr(c.warnings, fix),
	       msg);
	if (!strstr(c.warnings, dir))
		printf("     warnings: %s\n", c.warnings);
	snprintf(priv, sizeof priv, "%s/blk", rundir);
	struct stat st;
	snprintf(msg, sizeof msg, "%s: the entry went to $XDG_RUNTIME_DIR/blk (0700), the warning says so", what);
	int ok = only_entry(priv, name, sizeof name) == 1 && stat(priv, &st) == 0 && (st.st_mode & 0777) == 0700 &&
	         strstr(c.warnings, priv) != NULL;
	expect(ok, msg);
	c = compile(dir, 128);
	snprintf(msg, sizeof msg, "%s: again: a hit in the private folder, the planted PTX still not loaded", what);
	expect(c.st == BLK_SUCCESS && c.planted == 0 && c.from_disk && !c.made_ptx, msg);
}

/* A refused entry in a good folder: not loaded, a warning naming it, the
 * kernel compiled and the entry replaced by the user's own (0600). */
static void expect_refused_entry(const char *what, const char *dir, const char *name)
{
	char path[1200], msg[1400];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	Compiled c = compile(dir, 128);
	snprintf(msg, sizeof msg, "%s: the planted PTX is not loaded; compiled instead", what);
	expect(c.st == BLK_SUCCESS && c.planted == 0 && !c.from_disk && c.made_ptx, msg);
	snprintf(msg, sizeof msg, "%s: a warning names the entry", what);
	expect(strstr(c.warnings, "warning: the disk cache entry") && strstr(c.warnings, path), msg);
	struct stat st;
	size_t len = 0;
	char *data = slurp(path, &len);
	snprintf(msg, sizeof msg, "%s: the entry is replaced by this user's, 0600, without the mark", what);
	expect(data && stat(path, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0777) == 0600 &&
	           !has_bytes(data, len, "PLANTED"), msg);
	free(data);
	c = compile(dir, 128);
	snprintf(msg, sizeof msg, "%s: then a hit, no warning", what);
	expect(c.st == BLK_SUCCESS && c.from_disk && !c.made_ptx && c.warnings[0] == '\0', msg);
}

/* The host's name as runtime/cache.c puts it in a temporary file's. */
static void temp_host(char *buf, size_t size)
{
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	size_t n = 0;
	for (const char *h = host; *h && n + 1 < size && n < 40; h++, n++)
		buf[n] = (*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z') || (*h >= '0' && *h <= '9') ? *h : '_';
	buf[n] = '\0';
}

static void test_temps(void)
{
	char dir[600], host[64], names[4][100], path[1100];
	sub(dir, sizeof dir, "temps");
	mkdir(dir, 0700);
	temp_host(host, sizeof host);
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	snprintf(names[0], sizeof names[0], ".tmp-old");                            /* an hour old */
	snprintf(names[1], sizeof names[1], ".tmp-%ld-%s-1", (long)dead, host);     /* its writer is gone */
	snprintf(names[2], sizeof names[2], ".tmp-%ld-%s-2", (long)getpid(), host); /* its writer lives */
	snprintf(names[3], sizeof names[3], ".tmp-fresh");                          /* fresh, of no known writer */
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		spit(path, "partial", 7, 0600);
	}
	snprintf(path, sizeof path, "%s/%s", dir, names[0]);
	struct timespec old[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
	utimensat(AT_FDCWD, path, old, 0);
	Compiled c = compile(dir, 128);
	int gone[4];
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		gone[i] = access(path, F_OK) != 0;
	}
	expect(c.st == BLK_SUCCESS && c.made_ptx, "temporary files: a write into a folder holding four");
	expect(gone[0], "... removes the one an hour old");
	expect(gone[1], "... removes the one whose writer (a process of this host) is gone");
	expect(!gone[2] && !gone[3], "... keeps the fresh ones of a living writer or of none named");
}

/* Item 11: whole entries that cannot be used. */
static void test_unusable(void)
{
	char dir[600], name[64], path[800], what[300];
	sub(dir, sizeof dir, "unusable");
	/* its kernel missing: the entry's PTX with ".extry" for ".entry" (the
	 * JIT takes it; the kernel is not in the module), the checksum made to fit */
	Compiled c = compile(dir, 64);
	size_t len = 0, flen = 0;
	char *data = NULL, *forged = NULL;
	if (c.st == BLK_SUCCESS && only_entry(dir, name, sizeof name) == 1) {
		snprintf(path, sizeof path, "%s/%s", dir, name);
		data = slurp(path, &len);
	}
	const char *e = data ? memmem(data, len, ".entry", 6) : NULL;
	EntryHead h = {0};
	if (e)
		memcpy(&h, data, sizeof h);
	if (e && (size_t)(e - data) > entry_ptx_at(&h))
		forged = entry_forge(data, len, (size_t)(e - data) - entry_ptx_at(&h), 6, ".extry", &flen);
	if (forged)
		spit(path, forged, flen, 0600);
	free(data);
	free(forged);
	expect(forged != NULL, "a whole entry whose PTX has no kernel (\".extry\")");
	c = compile(dir, 64);
	expect(c.st == BLK_SUCCESS && !c.from_disk && c.made_ptx && c.jits == 2,
	       "... is loaded, its kernel not found: compiled again (no error)");
	c = compile(dir, 64);
	expect(c.st == BLK_SUCCESS && c.from_disk && !c.made_ptx, "... and rewritten: then a hit");
	/* shared memory over the device's limit: the header's shared_bytes, the
	 * checksum (which covers it) made to fit */
	snprintf(path, sizeof path, "%s/%s", dir, name);
	data = slurp(path, &len);
	uint32_t big = 300000;
	if (data && len > sizeof h && memcmp(data, "BLKVARNT", 8) == 0) {
		memcpy(&h, data, sizeof h);
		h.shared_bytes = big;
		memcpy(data, &h, sizeof h);
		h.checksum = entry_checksum_of(data, len);
		memcpy(data, &h, sizeof h);
		spit(path, data, len, 0600);
	}
	free(data);
	c = compile(dir, 64);
	snprintf(what, sizeof what, "an entry that says %u bytes of shared memory (the device allows 232448): loaded, "
	                            "then compiled again", (unsigned)big);
	expect(c.st == BLK_SUCCESS && !c.from_disk && c.made_ptx && c.jits == 2, what);
	c = compile(dir, 64);
	expect(c.st == BLK_SUCCESS && c.from_disk && !c.made_ptx, "... and rewritten: then a hit");
}

/* Makes the attacker's entry: `add` (BLOCK 128) compiled in a folder of
 * its own, a line "// PLANTED by another user" put at the head of its PTX
 * and the checksum made to fit (the checksum finds damage, not forgery);
 * its bytes into *len, its name (the key the victim asks for) into name. */
static char *make_planted(char *name, size_t size, size_t *len)
{
	char dir[600], path[800];
	sub(dir, sizeof dir, "attacker");
	Compiled c = compile(dir, 128);
	if (c.st != BLK_SUCCESS || only_entry(dir, name, size) != 1)
		return NULL;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	size_t n = 0;
	char *data = slurp(path, &n);
	char *forged = data ? entry_forge(data, n, 0, 0, "// PLANTED by another user\n", len) : NULL;
	free(data);
	return forged;
}

static void plant(const char *dir, const char *name, const char *data, size_t len, mode_t mode)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	spit(path, data, len, mode);
}

int main(void)
{
	char self[4096], path[4200];
	if (!fake_cuda_open(&fc, self, sizeof self, path, sizeof path))
		return 1;
	*(void **)&images_with = dlsym(fc.handle, "fake_cuda_images_with");
	if (!images_with) {
		printf("FAIL the stand-in driver has no fake_cuda_images_with\n0 passed, 1 failed\n");
		return 1;
	}
	snprintf(tmpdir, sizeof tmpdir, "%s/blk-trust.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL cannot make a temporary folder\n0 passed, 1 failed\n");
		return 1;
	}
	chmod(tmpdir, 0711); /* the other uid's child reaches its folder */
	sub(rundir, sizeof rundir, "run");
	mkdir(rundir, 0700);
	setenv("XDG_RUNTIME_DIR", rundir, 1);
	char what[300];

	/* ---- the attacker's entry, and a good folder first */
	char name[64];
	size_t len = 0;
	char *planted = make_planted(name, sizeof name, &len);
	expect(planted && has_bytes(planted, len, "PLANTED"), "the attacker's entry: a whole entry whose PTX is marked");
	if (!planted) {
		printf("%d passed, %d failed\n", passed, failed + 1);
		return 1;
	}
	char good[600];
	sub(good, sizeof good, "good");
	Compiled c = compile(good, 128);
	expect(c.st == BLK_SUCCESS && c.made_ptx && c.warnings[0] == '\0', "a folder blk made: compiled, no warning");
	c = compile(good, 128);
	expect(c.st == BLK_SUCCESS && c.from_disk && !c.made_ptx && c.planted == 0, "... then a hit");
	/* the mark is seen when the entry is loaded: else "not loaded" below would say nothing */
	char trusted[600];
	sub(trusted, sizeof trusted, "trusted");
	mkdir(trusted, 0700);
	plant(trusted, name, planted, len, 0600);
	c = compile(trusted, 128);
	expect(c.st == BLK_SUCCESS && c.from_disk && !c.made_ptx && c.planted == 1 && c.warnings[0] == '\0',
	       "the planted entry in a folder and file only the user can write: loaded, its mark seen");

	/* ---- umask 000 */
	mode_t old_mask = umask(0);
	char deep[720], mid[600];
	sub(mid, sizeof mid, "umask");
	snprintf(deep, sizeof deep, "%s/a", mid);
	c = compile(deep, 128);
	char entry[64];
	struct stat st_mid, st_deep, st_entry;
	int ok = c.st == BLK_SUCCESS && only_entry(deep, entry, sizeof entry) == 1;
	snprintf(path, sizeof path, "%s/%s", deep, entry);
	ok = ok && stat(mid, &st_mid) == 0 && stat(deep, &st_deep) == 0 && stat(path, &st_entry) == 0;
	snprintf(what, sizeof what, "umask 000: the folders blk makes are 0700 (%04o, %04o), its entry 0600 (%04o)",
	         ok ? (unsigned)(st_mid.st_mode & 07777) : 0, ok ? (unsigned)(st_deep.st_mode & 07777) : 0,
	         ok ? (unsigned)(st_entry.st_mode & 07777) : 0);
	expect(ok && (st_mid.st_mode & 07777) == 0700 && (st_deep.st_mode & 07777) == 0700 &&
	           (st_entry.st_mode & 07777) == 0600, what);
	umask(old_mask);

	/* ---- folders others can write, a link */
	char open_dir[600];
	sub(open_dir, sizeof open_dir, "shared-0777");
	mkdir(open_dir, 0777);
	chmod(open_dir, 0777);
	plant(open_dir, name, planted, len, 0644);
	expect_refused_dir("a 0777 folder with a planted entry", open_dir, "chmod 700");
	char sticky[600];
	sub(sticky, sizeof sticky, "shared-1777");
	mkdir(sticky, 0777);
	chmod(sticky, 01777);
	plant(sticky, name, planted, len, 0644);
	expect_refused_dir("a 1777 folder with a planted entry", sticky, "chmod 700");
	char target[600], link[600];
	sub(target, sizeof target, "link-target");
	mkdir(target, 0700);
	plant(target, name, planted, len, 0600);
	sub(link, sizeof link, "link");
	if (symlink(target, link) != 0)
		printf("     (could not make %s)\n", link);
	expect_refused_dir("a folder that is a symbolic link", link, "symbolic link");

	/* ---- an entry others can write */
	char wdir[600];
	sub(wdir, sizeof wdir, "entry-0666");
	mkdir(wdir, 0700);
	plant(wdir, name, planted, len, 0666);
	expect_refused_entry("an entry of mode 0666 in the user's folder", wdir, name);

	/* ---- temporary files; entries that cannot be used */
	test_temps();
	test_unusable();

	/* ---- another uid */
	if (geteuid() != 0) {
		printf("skipped: needs root to make files of another uid (the folder of uid %d, its entry, its writes)\n",
		       OTHER_UID);
	} else {
		char theirs[600];
		sub(theirs, sizeof theirs, "theirs");
		mkdir(theirs, 0700);
		plant(theirs, name, planted, len, 0644);
		snprintf(path, sizeof path, "%s/%s", theirs, name);
		ok = chown(theirs, OTHER_UID, OTHER_UID) == 0 && chown(path, OTHER_UID, OTHER_UID) == 0;
		expect(ok, "a 0700 folder of another uid, holding its planted entry");
		expect_refused_dir("a folder of another uid", theirs, "of your own");

		char mine[600];
		sub(mine, sizeof mine, "mine");
		mkdir(mine, 0700);
		plant(mine, name, planted, len, 0644);
		snprintf(path, sizeof path, "%s/%s", mine, name);
		expect(chown(path, OTHER_UID, OTHER_UID) == 0, "an entry of another uid (0644) in the user's folder");
		expect_refused_entry("an entry of another uid", mine, name);

		/* the attack itself: a process of the other uid plants the entry
		 * into a shared 1777 folder before the victim compiles */
		char shared[600];
		sub(shared, sizeof shared, "tmp-1777");
		mkdir(shared, 0777);
		chmod(shared, 01777);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			if (setgid(OTHER_UID) != 0 || setuid(OTHER_UID) != 0)
				_exit(2);
			snprintf(path, sizeof path, "%s/%s", shared, name);
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
			_exit(fd >= 0 && write(fd, planted, len) == (ssize_t)len && close(fd) == 0 ? 0 : 3);
		}
		int status = -1;
		waitpid(pid, &status, 0);
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", shared, name);
		expect(WIFEXITED(status) && WEXITSTATUS(status) == 0 && stat(path, &st) == 0 && st.st_uid == OTHER_UID,
		       "a process of uid 12345 plants its entry in a 1777 folder under the victim's key");
		expect_refused_dir("the victim's compilation in that 1777 folder", shared, "chmod 700");
	}

	free(planted);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("     (could not remove %s)\n", tmpdir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
