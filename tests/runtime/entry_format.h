/* entry_format.h: a disk cache entry (KEY.variant) as runtime/cache.c
 * writes it, mirrored here with xxHash of the tests' own, for the tests
 * that check entries byte by byte or forge them as someone who can write
 * the folder could (an attacker's entry, one that checks but cannot be
 * used). A change of the format that this file does not follow makes those
 * tests fail. */
#ifndef BLK_TEST_ENTRY_FORMAT_H
#define BLK_TEST_ENTRY_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

enum { ENTRY_FORMAT = 3 };

/* The header; a uint16_t of bytes a parameter follows it, then the PTX
 * (no NUL) to the end of the file. */
typedef struct EntryHead {
	char magic[8]; /* "BLKVARNT" */
	uint32_t version, shared_bytes;
	uint8_t key[16];
	uint64_t ptx_len, checksum;
	uint32_t threads;
	uint16_t n_params, n_tmaps;
} EntryHead;
_Static_assert(sizeof(EntryHead) == 56, "an entry's header is 56 bytes");

/* Where the PTX of the entry whose header is h starts. */
static inline size_t entry_ptx_at(const EntryHead *h)
{
	return sizeof *h + (size_t)h->n_params * sizeof(uint16_t);
}

/* The checksum the header of the entry d (len bytes, at least a header)
 * must hold: XXH64 of the header's shared memory, threads and parameter
 * counts, then of everything after the header. */
static inline uint64_t entry_checksum_of(const char *d, size_t len)
{
	EntryHead h;
	memcpy(&h, d, sizeof h);
	uint32_t kernel[3] = {h.shared_bytes, h.threads, (uint32_t)h.n_params << 16 | h.n_tmaps};
	XXH64_state_t st;
	XXH64_reset(&st, 0);
	XXH64_update(&st, kernel, sizeof kernel);
	XXH64_update(&st, d + sizeof h, len - sizeof h);
	return XXH64_digest(&st);
}

/* A whole entry made of the entry d (len bytes) with `cut` bytes of its
 * PTX from byte `at` of the PTX replaced by `insert`, its length and
 * checksum set to match: a forgery the checksum cannot tell. malloc'd,
 * its length in *out_len; NULL when d has no PTX of that length. */
static inline char *entry_forge(const char *d, size_t len, size_t at, size_t cut, const char *insert,
                                size_t *out_len)
{
	EntryHead h;
	if (len < sizeof h)
		return NULL;
	memcpy(&h, d, sizeof h);
	size_t ptx = entry_ptx_at(&h), ins = strlen(insert);
	if (ptx > len || at + cut > len - ptx)
		return NULL;
	size_t n = len - cut + ins;
	char *f = malloc(n);
	if (!f)
		return NULL;
	memcpy(f, d, ptx + at);
	memcpy(f + ptx + at, insert, ins);
	memcpy(f + ptx + at + ins, d + ptx + at + cut, len - ptx - at - cut);
	h.ptx_len = n - ptx;
	memcpy(f, &h, sizeof h);
	h.checksum = entry_checksum_of(f, n);
	memcpy(f, &h, sizeof h);
	*out_len = n;
	return f;
}

#endif
