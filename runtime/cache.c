/* cache.c: the disk cache of compiled GPU variants and of autotuning
 * choices (cache.h describes the files). Keys are XXH3-128 hashes, the
 * payload's checksum XXH64, both from xxHash (header-only). Every failure
 * is a miss: nothing here prints or exits; a folder or entry refused for
 * trust is described for the caller to report (cache_take_refusal). */
#include "cache.h"
#include "irgen/irgen.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* header-only; hashing is off the launch path, so small code over fast */
#define XXH_INLINE_ALL
#define XXH_NO_INLINE_HINTS 1
#include <xxhash.h>

/* ---- small things ------------------------------------------------------------ */

static bool env_is(const char *name, const char *value)
{
	const char *e = getenv(name);
	return e && strcmp(e, value) == 0;
}

CacheMode cache_mode(void)
{
	if (env_is("BLK_CACHE", "0"))
		return CACHE_OFF;
	const char *always = getenv("BLK_ALWAYS_COMPILE");
	if (always && always[0] && strcmp(always, "0") != 0)
		return CACHE_WRITE_ONLY;
	return CACHE_READ_WRITE;
}

/* ---- trust ---------------------------------------------------------------------- *
 *
 * PTX read from the cache is compiled and run in this process, and an entry's
 * checksum finds damage, not forgery: whoever can write into the folder
 * can plant an entry under any key. So the folder must be the user's
 * alone (owned by the effective user, written by no group or other user,
 * not a symbolic link), and so must each entry read, checked on the open
 * file (fstat), not on its name. What fails that is refused, and why is
 * kept for the caller to report (cache_take_refusal). */

static _Thread_local char refusal[2048];

/* Keeps the first refusal since the caller last took one. */
static void refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void refuse(const char *fmt, ...)
{
	if (refusal[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(refusal, sizeof refusal, fmt, ap);
	va_end(ap);
}

/* Adds to the refusal kept. */
static void refuse_more(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void refuse_more(const char *fmt, ...)
{
	size_t n = strlen(refusal);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(refusal + n, sizeof refusal - n, fmt, ap);
	va_end(ap);
}

bool cache_take_refusal(char *buf, size_t size)
{
	if (!refusal[0])
		return false;
	if (size)
		snprintf(buf, size, "%s", refusal);
	refusal[0] = '\0';
	return true;
}

/* Why a file or folder of these properties is not the user's alone, or NULL. */
static const char *not_private(const struct stat *st, char *buf, size_t size)
{
	if (st->st_uid != geteuid()) {
		snprintf(buf, size, "is owned by uid %ld, not by this user (uid %ld)", (long)st->st_uid, (long)geteuid());
		return buf;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(buf, size, "can be written by other users (mode %04o)", (unsigned)(st->st_mode & 07777));
		return buf;
	}
	return NULL;
}

/* Opens the cache folder dir (for openat); -1 when it cannot be, with a
 * refusal when it is there but not the user's alone (*refused then true;
 * quiet: no refusal kept). */
static int open_dir(const char *dir, bool quiet, bool *refused)
{
	*refused = false;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char why[128];
	if (fd < 0) {
		if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
			*refused = true;
			if (!quiet)
				refuse("the disk cache folder %s is a symbolic link: not followed, its entries are not run; "
				       "set BLK_CACHE_DIR to the folder itself", dir);
		}
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	if (not_private(&st, why, sizeof why)) {
		*refused = true;
		if (!quiet) {
			if (st.st_uid != geteuid())
				refuse("the disk cache folder %s %s: its entries are not run; set BLK_CACHE_DIR to a folder "
				       "of your own", dir, why);
			else
				refuse("the disk cache folder %s %s: its entries are not run; chmod 700 %s, or set "
				       "BLK_CACHE_DIR to a folder of your own", dir, why, dir);
		}
		close(fd);
		return -1;
	}
	return fd;
}

/* mkdir -p: every missing folder of path, each made 0700 whatever the
 * umask (folders already there are left as they are). */
static bool make_dirs(char *path)
{
	struct stat st;
	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode);
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		int r = mkdir(path, 0700);
		int e = errno;
		if (r == 0)
			chmod(path, 0700); /* the umask may have taken bits off */
		*p = c;
		if (r != 0 && e != EEXIST)
			return false;
		if (!c)
			break;
	}
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder cached entries go to when the chosen one is refused:
 * $XDG_RUNTIME_DIR/blk (the user's own by the XDG spec) when it is usable,
 * else none (kernels are then compiled in each process). Adds where to the
 * refusal when note. */
static bool private_dir(char *buf, size_t size, bool note)
{
	const char *run = getenv("XDG_RUNTIME_DIR");
	char dir[4096];
	bool refused;
	if (run && run[0] == '/' && (size_t)snprintf(dir, sizeof dir, "%s/blk", run) < size - 64 &&
	    strcmp(dir, buf) != 0 && make_dirs(dir)) {
		int fd = open_dir(dir, true, &refused);
		if (fd >= 0) {
			close(fd);
			if (note)
				refuse_more(" (kernels are cached in %s meanwhile)", dir);
			snprintf(buf, size, "%s", dir);
			return true;
		}
	}
	if (note)
		refuse_more(" (kernels are not cached on disk meanwhile)");
	return false;
}

bool cache_dir(char *buf, size_t size)
{
	const char *dir = getenv("BLK_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;
	if (dir && dir[0])
		n = snprintf(buf, size, "%s", dir);
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/blk", xdg);
	else if (home && home[0])
		n = snprintf(buf, size, "%s/.cache/blk", home);
	else
		return false;
	if (n <= 0 || (size_t)n >= size - 64) /* room for "/KEY.variant" */
		return false;
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	make_dirs(buf); /* (a link, a file: open_dir tells) */
	/* where kernels go instead is added to this refusal only, not to one
	 * kept from an earlier call (it would be said again each call) */
	bool fresh = !refusal[0], refused;
	int fd = open_dir(buf, false, &refused);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return refused && private_dir(buf, size, fresh);
}

/* ---- keys ---------------------------------------------------------------------- */

struct KeyHasher {
	XXH3_state_t st;
	bool oom; /* a field could not be hashed */
};

KeyHasher *rt_key_begin(const char *purpose)
{
	/* XXH3_state_t wants 64-byte alignment */
	KeyHasher *h = aligned_alloc(64, (sizeof *h + 63) & ~(size_t)63);
	if (!h)
		return NULL;
	XXH3_INITSTATE(&h->st);
	XXH3_128bits_reset(&h->st);
	h->oom = false;
	rt_key_str(h, purpose);
	rt_key_i64(h, CACHE_FORMAT_VERSION);
	return h;
}

void rt_key_bytes(KeyHasher *h, const void *data, size_t len)
{
	if (!h)
		return;
	uint64_t n = len;
	XXH3_128bits_update(&h->st, &n, sizeof n);
	if (len)
		XXH3_128bits_update(&h->st, data, len);
}

void rt_key_str(KeyHasher *h, const char *s)
{
	if (s) {
		rt_key_bytes(h, s, strlen(s));
	} else {
		static const uint8_t null_mark = 0xff;
		rt_key_bytes(h, &null_mark, 1);
		rt_key_bytes(h, NULL, 0);
	}
}

void rt_key_i64(KeyHasher *h, int64_t v) { rt_key_bytes(h, &v, sizeof v); }

bool rt_key_end(KeyHasher *h, CacheKey *out)
{
	memset(out, 0, sizeof *out);
	if (!h)
		return false;
	bool ok = !h->oom;
	XXH128_hash_t d = XXH3_128bits_digest(&h->st);
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, d);
	if (ok)
		memcpy(out->b, c.digest, sizeof out->b);
	free(h);
	return ok;
}

void cache_key_hex(const CacheKey *key, char out[33])
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		out[2 * i] = hex[key->b[i] >> 4];
		out[2 * i + 1] = hex[key->b[i] & 15];
	}
	out[32] = '\0';
}

static int cmp_const(const void *a, const void *b)
{
	const ConstBinding *x = *(const ConstBinding *const *)a, *y = *(const ConstBinding *const *)b;
	return strcmp(x->name, y->name);
}

void rt_key_sources(KeyHasher *h, const struct Source *const *sources, int n)
{
	rt_key_i64(h, n);
	for (int i = 0; i < n; i++) {
		rt_key_str(h, sources[i]->name);
		rt_key_bytes(h, sources[i]->text, sources[i]->len);
	}
}

void rt_key_consts(KeyHasher *h, const struct ConstBinding *consts, int n)
{
	/* by name, so that their order does not matter (nor does it to irgen) */
	const ConstBinding *buf[32];
	const ConstBinding **sorted = n <= 32 ? buf : malloc((size_t)n * sizeof *sorted);
	if (!sorted) {
		/* no memory: a key no entry has (key_end fails too) */
		if (h)
			h->oom = true;
		return;
	}
	for (int i = 0; i < n; i++)
		sorted[i] = &consts[i];
	qsort(sorted, (size_t)n, sizeof *sorted, cmp_const);
	rt_key_i64(h, n);
	for (int i = 0; i < n; i++) {
		rt_key_str(h, sorted[i]->name);
		if (sorted[i]->type) { /* a const type: its name (2 tells it from a number's is_float) */
			rt_key_i64(h, 2);
			rt_key_str(h, sorted[i]->type);
			continue;
		}
		rt_key_i64(h, sorted[i]->is_float);
		if (sorted[i]->is_float) {
			double f = sorted[i]->f;
			rt_key_bytes(h, &f, sizeof f);
		} else {
			rt_key_i64(h, sorted[i]->i);
		}
	}
	if (sorted != buf)
		free(sorted);
}

bool cache_variant_key(const VariantKeyInput *in, CacheKey *out)
{
	KeyHasher *h = rt_key_begin("blk variant");
	rt_key_str(h, in->compiler_version);
	rt_key_sources(h, in->sources, in->n_sources);
	rt_key_str(h, in->kernel);
	rt_key_consts(h, in->consts, in->n_consts);
	rt_key_i64(h, (int64_t)in->spec);
	rt_key_str(h, in->passes ? in->passes : "");
	rt_key_str(h, in->arch);
	rt_key_i64(h, in->cc_major);
	rt_key_i64(h, in->cc_minor);
	rt_key_i64(h, in->driver_version);
	for (int i = 0; i < OPTION_COUNT; i++)
		if (option_table[i].in_key) {
			rt_key_str(h, option_table[i].name);
			rt_key_i64(h, in->options[i]);
		}
	return rt_key_end(h, out);
}

/* ---- files ----------------------------------------------------------------------- */

/* ---- temporary files -------------------------------------------------------------- *
 *
 * An entry is written as DIR/.tmp-PID-HOST-N and renamed over DIR/NAME. A
 * writer killed on the way leaves its temporary file; each write first
 * removes those whose writer is gone (this host's, of a process that is no
 * more) or that are older than STALE_TEMP_SECONDS (another host's, or of a
 * name from before). */

enum { STALE_TEMP_SECONDS = 600 };

/* This host's name as it goes into a temporary file's: letters, digits and '_'. */
static void temp_host(char *buf, size_t size)
{
	char host[256] = "";
	if (gethostname(host, sizeof host - 1) != 0)
		host[0] = '\0';
	size_t n = 0;
	for (const char *h = host; *h && n + 1 < size && n < 40; h++, n++) {
		char c = *h;
		buf[n] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
	}
	buf[n] = '\0';
}

/* Is the temporary file named .tmp-REST one whose writer, a process of
 * this host, is gone? */
static bool writer_gone(const char *rest, const char *host)
{
	char *end;
	errno = 0;
	long pid = strtol(rest, &end, 10);
	if (errno || end == rest || *end != '-' || pid <= 0 || pid == (long)getpid())
		return false;
	size_t hl = strlen(host);
	if (strncmp(end + 1, host, hl) != 0 || end[1 + hl] != '-')
		return false;
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes the stale temporary files of the folder open as dfd. */
static void sweep_temps(int dfd, const char *host)
{
	int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	time_t now = time(NULL);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		if (strncmp(e->d_name, ".tmp-", 5) != 0 || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (now - st.st_mtime > STALE_TEMP_SECONDS || writer_gone(e->d_name + 5, host))
			unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
}

/* A new temporary file in the folder open as dfd, 0600 whatever the umask:
 * its fd (its name in tmp), or -1. */
static int make_temp(int dfd, const char *host, char *tmp, size_t size)
{
	static atomic_uint counter;
	for (int attempt = 0; attempt < 64; attempt++) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		unsigned n = atomic_fetch_add(&counter, 1) ^ (unsigned)ts.tv_nsec;
		snprintf(tmp, size, ".tmp-%ld-%s-%08x", (long)getpid(), host, n);
		int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			if (fchmod(fd, 0600) == 0)
				return fd;
			close(fd);
			unlinkat(dfd, tmp, 0);
			return -1;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/* Writes data to DIR/NAME through a temporary file in DIR and rename(),
 * DIR checked first (open_dir) and reached through its fd from then on. */
static bool write_atomically(const char *dir, const char *name, const void *a, size_t alen, const void *b, size_t blen,
                             const void *c, size_t clen)
{
	bool refused;
	int dfd = open_dir(dir, false, &refused);
	if (dfd < 0)
		return false;
	char host[64], tmp[128];
	temp_host(host, sizeof host);
	sweep_temps(dfd, host);
	int fd = make_temp(dfd, host, tmp, sizeof tmp);
	if (fd < 0) {
		close(dfd);
		return false;
	}
	bool ok = true;
	const void *parts[3] = {a, b, c};
	size_t lens[3] = {alen, blen, clen};
	for (int i = 0; ok && i < 3; i++) {
		const char *p = parts[i];
		size_t left = lens[i];
		while (ok && left) {
			ssize_t w = write(fd, p, left);
			if (w < 0 && errno == EINTR)
				continue;
			ok = w > 0;
			if (ok) {
				p += w;
				left -= (size_t)w;
			}
		}
	}
	if (close(fd) != 0)
		ok = false;
	if (ok && renameat(dfd, tmp, dfd, name) != 0)
		ok = false;
	if (!ok)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	return ok;
}

/* Reads a whole file (at most max bytes) into a malloc'd buffer with a
 * NUL after it. The file's folder must be the user's alone (open_dir), and
 * so must the file: a regular file owned by the user that no one else can
 * write, as the open file says (no link followed); else NULL, with a
 * refusal when it is not the user's alone. */
static void *read_file(const char *path, size_t max, size_t *len)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	if (!slash || (size_t)(slash - path) >= sizeof dir)
		return NULL;
	snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
	bool refused;
	int dfd = open_dir(dir, false, &refused);
	if (dfd < 0)
		return NULL;
	/* O_NONBLOCK: an entry replaced by a FIFO must not hang the open; the
	 * fstat below refuses it (a damaged entry: the variant is recompiled). */
	int fd = openat(dfd, slash + 1, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *data = NULL, why[128];
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && not_private(&st, why, sizeof why)) {
		refuse("the disk cache entry %s %s: it is not run; it is compiled again and replaced", path, why);
	} else if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= max &&
	           (data = malloc((size_t)st.st_size + 1)) != NULL) {
		size_t got = 0, want = (size_t)st.st_size;
		while (got < want) {
			ssize_t r = read(fd, data + got, want - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		data[got] = '\0';
		*len = got;
	}
	close(fd);
	return data;
}

/* ---- variants ------------------------------------------------------------------------ */

/* The header of a KEY.variant file, in the machine's byte order (the magic
 * tells another order apart). 56 bytes, no padding. */
typedef struct EntryHeader {
	char magic[8];         /* "BLKVARNT" */
	uint32_t version;      /* CACHE_FORMAT_VERSION */
	uint32_t shared_bytes;
	uint8_t key[16];
	uint64_t ptx_len;      /* the PTX's bytes, its NUL not included (the file has none) */
	uint64_t checksum;     /* entry_checksum: the fields below, the parameters' bytes, the PTX */
	uint32_t threads;      /* a program's (.maxntid) */
	uint16_t n_params;     /* the kernel's parameters: a uint16_t of bytes each follows */
	uint16_t n_tmaps;      /* the last n_tmaps of them are tensor maps */
} EntryHeader;
_Static_assert(sizeof(EntryHeader) == 56, "the entry header is 56 bytes");

static const char entry_magic[8] = {'B', 'L', 'K', 'V', 'A', 'R', 'N', 'T'};
enum { MAX_ENTRY = 1 << 30 };

static void entry_path(const char *dir, const CacheKey *key, const char *ext, char *buf, size_t size)
{
	char hex[33];
	cache_key_hex(key, hex);
	snprintf(buf, size, "%s/%s.%s", dir, hex, ext);
}

/* XXH64 (seed 0) of the header's account of the kernel (shared memory,
 * threads, parameters), the parameters' sizes and the PTX. */
static uint64_t entry_checksum(const EntryHeader *h, const void *sizes, size_t sizes_len, const void *ptx,
                               size_t ptx_len)
{
	uint32_t kernel[3] = {h->shared_bytes, h->threads, (uint32_t)h->n_params << 16 | h->n_tmaps};
	XXH64_state_t st;
	XXH64_reset(&st, 0);
	XXH64_update(&st, kernel, sizeof kernel);
	XXH64_update(&st, sizes, sizes_len);
	XXH64_update(&st, ptx, ptx_len);
	return XXH64_digest(&st);
}

/* Checks data as an entry; fills out (pointing into data) when fine. */
static const char *check_entry(void *data, size_t len, const CacheKey *key, CacheEntry *out)
{
	EntryHeader h;
	if (len < sizeof h)
		return "short";
	memcpy(&h, data, sizeof h);
	if (memcmp(h.magic, entry_magic, sizeof h.magic) != 0)
		return "bad magic";
	if (h.version != CACHE_FORMAT_VERSION)
		return "format version";
	size_t meta = (size_t)h.n_params * sizeof(uint16_t);
	if (h.ptx_len > MAX_ENTRY || sizeof h + meta + h.ptx_len != len)
		return "short";
	const char *payload = (const char *)data + sizeof h, *ptx = payload + meta;
	if (entry_checksum(&h, payload, meta, ptx, (size_t)h.ptx_len) != h.checksum)
		return "checksum";
	if (key && memcmp(h.key, key->b, sizeof h.key) != 0)
		return "key";
	/* (the checksum passed: what fails here was written so) */
	if (h.ptx_len == 0 || memchr(ptx, '\0', (size_t)h.ptx_len)) /* the JIT would read up to the NUL */
		return "ptx";
	bool fine = h.shared_bytes <= INT32_MAX && h.n_params <= CACHE_MAX_PARAMS && h.n_tmaps <= h.n_params &&
	            h.threads >= 1 && h.threads <= 1024;
	for (int i = 0; fine && i < h.n_params; i++) {
		uint16_t b;
		memcpy(&b, payload + (size_t)i * sizeof b, sizeof b);
		fine = b >= 1 && b <= 128;
	}
	if (!fine)
		return "metadata";
	int *sizes = out ? malloc((h.n_params ? h.n_params : 1) * sizeof *sizes) : NULL;
	if (out && !sizes)
		return "out of memory";
	for (int i = 0; sizes && i < h.n_params; i++) {
		uint16_t b;
		memcpy(&b, payload + (size_t)i * sizeof b, sizeof b);
		sizes[i] = b;
	}
	if (out) {
		out->data = data;
		out->ptx = ptx;
		out->ptx_len = (size_t)h.ptx_len;
		out->meta = (CacheMeta){.shared_bytes = (int)h.shared_bytes, .threads = (int)h.threads,
		                        .n_params = h.n_params, .n_tmaps = h.n_tmaps, .param_bytes = sizes};
		out->param_bytes = sizes;
	}
	return NULL;
}

const char *cache_check_variant_file(const char *path, const CacheKey *key)
{
	size_t len = 0;
	void *data = read_file(path, MAX_ENTRY, &len);
	if (!data)
		return "cannot be read";
	const char *why = check_entry(data, len, key, NULL);
	free(data);
	return why;
}

bool cache_read_variant(const char *dir, const CacheKey *key, CacheEntry *out)
{
	memset(out, 0, sizeof *out);
	char path[4200];
	entry_path(dir, key, "variant", path, sizeof path);
	size_t len = 0;
	void *data = read_file(path, MAX_ENTRY, &len);
	if (!data)
		return false;
	/* the PTX ends where the file does: read_file put a NUL there */
	if (check_entry(data, len, key, out)) {
		free(data);
		memset(out, 0, sizeof *out);
		return false;
	}
	return true;
}

void cache_entry_free(CacheEntry *e)
{
	if (!e)
		return;
	free(e->data);
	free(e->param_bytes);
	memset(e, 0, sizeof *e);
}

bool cache_write_variant(const char *dir, const CacheKey *key, const char *ptx, size_t ptx_len,
                         const CacheMeta *meta)
{
	if (!ptx || !ptx_len || ptx_len > MAX_ENTRY || memchr(ptx, '\0', ptx_len) || meta->shared_bytes < 0 ||
	    meta->n_params < 0 || meta->n_params > CACHE_MAX_PARAMS || (meta->n_params && !meta->param_bytes) ||
	    meta->threads < 1 || meta->threads > 1024)
		return false;
	EntryHeader h = {.version = CACHE_FORMAT_VERSION, .shared_bytes = (uint32_t)meta->shared_bytes,
	                 .ptx_len = ptx_len, .threads = (uint32_t)meta->threads, .n_params = (uint16_t)meta->n_params,
	                 .n_tmaps = (uint16_t)meta->n_tmaps};
	memcpy(h.magic, entry_magic, sizeof h.magic);
	memcpy(h.key, key->b, sizeof h.key);
	/* the header and the parameters' sizes, written as one part */
	size_t meta_len = (size_t)meta->n_params * sizeof(uint16_t);
	unsigned char *head = calloc(1, sizeof h + meta_len);
	if (!head)
		return false;
	for (int i = 0; i < meta->n_params; i++) {
		uint16_t b = (uint16_t)meta->param_bytes[i];
		memcpy(head + sizeof h + (size_t)i * sizeof b, &b, sizeof b);
	}
	h.checksum = entry_checksum(&h, head + sizeof h, meta_len, ptx, ptx_len);
	memcpy(head, &h, sizeof h);
	char name[64], hex[33];
	cache_key_hex(key, hex);
	snprintf(name, sizeof name, "%s.variant", hex);
	bool ok = write_atomically(dir, name, head, sizeof h + meta_len, ptx, ptx_len, NULL, 0);
	free(head);
	return ok;
}

/* ---- autotuning choices ------------------------------------------------------------------ *
 *
 * KEY.tune:
 *   blk-autotune 1
 *   KEY (32 hex digits)
 *   INDEX
 *   CONFIG (one line)
 */

bool cache_read_tune(const char *dir, const CacheKey *key, int *index, char *config, size_t size)
{
	char path[4200], hex[33];
	entry_path(dir, key, "tune", path, sizeof path);
	cache_key_hex(key, hex);
	size_t len = 0;
	char *data = read_file(path, 1 << 16, &len);
	if (!data)
		return false;
	bool ok = false;
	char head[32];
	int n = snprintf(head, sizeof head, "blk-autotune %d\n", (int)CACHE_FORMAT_VERSION);
	char *p = data;
	if (len > (size_t)n + 34 && memcmp(p, head, (size_t)n) == 0 && memcmp(p + n, hex, 32) == 0 && p[n + 32] == '\n') {
		p += n + 33;
		char *end;
		errno = 0;
		long idx = strtol(p, &end, 10);
		if (end != p && *end == '\n' && errno == 0 && idx >= 0 && idx < 1000000) {
			char *line = end + 1, *nl = strchr(line, '\n');
			if (nl && nl[1] == '\0' && (size_t)(nl - line) < size) {
				memcpy(config, line, (size_t)(nl - line));
				config[nl - line] = '\0';
				*index = (int)idx;
				ok = true;
			}
		}
	}
	free(data);
	return ok;
}

bool cache_write_tune(const char *dir, const CacheKey *key, int index, const char *config)
{
	if (index < 0 || strchr(config, '\n'))
		return false;
	char hex[33], name[64];
	cache_key_hex(key, hex);
	snprintf(name, sizeof name, "%s.tune", hex);
	char head[128];
	int n = snprintf(head, sizeof head, "blk-autotune %d\n%s\n%d\n", (int)CACHE_FORMAT_VERSION, hex, index);
	return write_atomically(dir, name, head, (size_t)n, config, strlen(config), "\n", 1);
}
