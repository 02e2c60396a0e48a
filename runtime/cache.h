/* cache.h: the disk cache (cache.c), internal to runtime/.
 *
 * Compiled GPU variants and autotuning choices, one file each in one folder:
 * $BLK_CACHE_DIR, else $XDG_CACHE_HOME/blk, else $HOME/.cache/blk (made when
 * missing). A file is named after its key, a 128-bit XXH3 hash in hex:
 * KEY.variant holds a header (magic, format version, key, the PTX's
 * length, shared memory, threads, XXH64 of the payload) and the payload
 * (the bytes of each kernel parameter, then the PTX, which the driver's JIT
 * loads: no cubin, the driver keeps its own compiled code): what the
 * compile driver said of the kernel beside its code, so that nothing reads
 * the PTX back;
 * KEY.tune is four lines of text. Files are written to a temporary file in
 * the folder and renamed over the old one, so a reader sees a whole file or
 * none; a file that is short, damaged, of another format or another key is
 * refused (and rewritten by the caller). Nothing here reports errors: a
 * cache that cannot be used is a miss.
 *
 * Trust: folders are made 0700 and files 0600 whatever the umask; the
 * folder must be the user's alone (owned by the effective user, written by
 * no group or other user, not a symbolic link), and so must every file
 * read from it. A folder or file that is not is refused (a miss; for the
 * folder, $XDG_RUNTIME_DIR/blk instead when usable, else no disk cache),
 * and the refusal is kept for the caller to report (cache_take_refusal).
 * Temporary files left by a writer that died are removed by later writes. */
#ifndef BLK_CACHE_H
#define BLK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 3: the PTX alone (2 held the cubin of a link, relocatable code that
 * takes more registers: its entries and tuning choices are not used). Part
 * of every key, and of the tuning files' first line. */
enum { CACHE_FORMAT_VERSION = 3 };

typedef struct CacheKey {
	uint8_t b[16];
} CacheKey;

/* The environment's wish: BLK_CACHE=0 neither reads nor writes;
 * BLK_ALWAYS_COMPILE=1 (not 0) writes but never reads. Read at each call. */
typedef enum CacheMode { CACHE_OFF, CACHE_READ_WRITE, CACHE_WRITE_ONLY } CacheMode;
CacheMode cache_mode(void);

/* The cache folder (made with its parents when missing) into buf; false
 * when there is none (no variable says where, or it cannot be made). A
 * folder that is not the user's alone is refused: buf then names the
 * private folder used instead, or false when there is none. */
bool cache_dir(char *buf, size_t size);

/* The calling thread's first refusal since it last asked ("the disk cache
 * folder /x can be written by other users (mode 0777): ..."; naming the
 * path and the fix), into buf; false when there was none. Clears it. */
bool cache_take_refusal(char *buf, size_t size);

/* A key, built field by field: each field is hashed with its length, so
 * that ("ab", "c") and ("a", "bc") differ. key_begin returns NULL when out
 * of memory; the other calls accept NULL (key_end then gives all zeros and
 * returns false). */
typedef struct KeyHasher KeyHasher;
KeyHasher *rt_key_begin(const char *purpose);
void rt_key_bytes(KeyHasher *h, const void *data, size_t len);
void rt_key_str(KeyHasher *h, const char *s); /* NULL hashes as "" with a mark of its own */
void rt_key_i64(KeyHasher *h, int64_t v);
bool rt_key_end(KeyHasher *h, CacheKey *out);

/* "0123...ef": 32 hex digits and a NUL. */
void cache_key_hex(const CacheKey *key, char out[33]);

struct Source;
struct ConstBinding;
/* The sources' names and texts, in order; const values by name (their
 * order does not count). */
void rt_key_sources(KeyHasher *h, const struct Source *const *sources, int n);
void rt_key_consts(KeyHasher *h, const struct ConstBinding *consts, int n);

/* What a compiled variant's key is made of. */
typedef struct VariantKeyInput {
	const char *compiler_version;        /* blk_compiler_version() */
	const struct Source *const *sources; /* the module's and its imports', in the order loaded */
	int n_sources;
	const char *kernel;
	const struct ConstBinding *consts;   /* every const value it was compiled with, in any order */
	int n_consts;
	uint64_t spec;                       /* arguments specialized (multiples of 16; equal to 1) */
	const char *passes;                  /* BLK_PASSES, or NULL: the tile passes that ran */
	const int *options;                  /* the settled value of each option (ir/options.h: OPTION_COUNT) */
	const char *arch;                    /* the PTX target, "sm_90" */
	int cc_major, cc_minor;              /* the device's: the driver compiles the PTX for it */
	int driver_version;                  /* cuDriverGetVersion: the driver that compiles it */
} VariantKeyInput;
bool cache_variant_key(const VariantKeyInput *in, CacheKey *out);

/* What the compile driver says of a variant's kernel, kept beside it:
 * dynamic shared memory, threads a program (.maxntid), its parameters (the
 * runtime ones, then n_tmaps tensor maps) and the bytes of each. */
enum { CACHE_MAX_PARAMS = 4096 }; /* (PTX gives a kernel 4352 bytes of parameters, 2 or more each) */
typedef struct CacheMeta {
	int shared_bytes, threads, n_params, n_tmaps;
	const int *param_bytes; /* n_params of them */
} CacheMeta;

/* An entry read back: data is the whole file (free with cache_entry_free);
 * ptx is NUL-terminated, ptx_len bytes before the NUL and none of them a
 * NUL (the image the driver's JIT loads). */
typedef struct CacheEntry {
	void *data;
	const char *ptx;
	size_t ptx_len;
	CacheMeta meta;         /* its param_bytes are the entry's own (cache_entry_free) */
	int *param_bytes;
} CacheEntry;

/* Reads DIR/KEY.variant: true when the file is whole and is the entry of
 * key. */
bool cache_read_variant(const char *dir, const CacheKey *key, CacheEntry *out);
void cache_entry_free(CacheEntry *e);
/* Writes DIR/KEY.variant (atomically); false when it could not, or when
 * the PTX is empty or holds a NUL. */
bool cache_write_variant(const char *dir, const CacheKey *key, const char *ptx, size_t ptx_len,
                         const CacheMeta *meta);
/* Checks an entry file as cache_read_variant does: NULL when it is whole
 * (and of `key` when key is not NULL), else why not ("short", "bad magic",
 * "format version", "checksum", "key", "metadata", "ptx" (empty, or a NUL
 * in it), "cannot be read"). For tests. */
const char *cache_check_variant_file(const char *path, const CacheKey *key);

/* Autotuning choices: DIR/KEY.tune holds the index of the best config and
 * its text ("BLOCK=1024 num_warps=4"). Reading gives both (config of at
 * most `size` bytes); the caller checks that the index and text still name
 * one of the kernel's configs. */
bool cache_read_tune(const char *dir, const CacheKey *key, int *index, char *config, size_t size);
bool cache_write_tune(const char *dir, const CacheKey *key, int index, const char *config);

#endif
