/* handles.c: BLK_DEBUG=1's record of handles. Using a context, module or
 * kernel after it was destroyed is undefined in blk.h; with BLK_DEBUG=1
 * (read once, at the first call that asks) every handle made is recorded,
 * a destroyed one is marked dead and its own few bytes are kept allocated
 * for the life of the process (what it holds is freed), so that its
 * address is never reused by a new handle; each public call first checks
 * its handle here and fails with BLK_ERROR_INVALID_ARGUMENT naming the
 * handle's type and address when it is dead or not a handle at all. */
#include "runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct Handle {
	const void *p;   /* NULL: a free slot */
	uint8_t kind;    /* HandleKind */
	bool live;
} Handle;

static pthread_once_t debug_once = PTHREAD_ONCE_INIT;
static bool debug_on;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Handle *table; /* open addressing by address; slots are never emptied */
static size_t cap, used;
static bool incomplete; /* a handle could not be recorded (no memory): unknown addresses pass */

static const char *const kind_names[] = {"blk_context", "blk_module", "blk_kernel"};

static void read_debug(void)
{
	const char *d = getenv("BLK_DEBUG");
	debug_on = d && d[0] && strcmp(d, "0") != 0;
}

bool rt_debug_handles(void)
{
	pthread_once(&debug_once, read_debug);
	return debug_on;
}

static size_t slot_of(const void *p, size_t n)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 17) & (n - 1);
}

/* The slot of p, or of where it would go. Caller holds the lock; cap > 0. */
static Handle *find(const void *p)
{
	for (size_t i = slot_of(p, cap);; i = (i + 1) & (cap - 1))
		if (table[i].p == p || !table[i].p)
			return &table[i];
}

static bool grow(void)
{
	size_t n = cap ? cap * 2 : 256;
	Handle *t = calloc(n, sizeof *t);
	if (!t)
		return false;
	for (size_t i = 0; i < cap; i++)
		if (table[i].p) {
			size_t j = slot_of(table[i].p, n);
			while (t[j].p)
				j = (j + 1) & (n - 1);
			t[j] = table[i];
		}
	free(table);
	table = t;
	cap = n;
	return true;
}

void rt_handle_add(const void *p, HandleKind kind)
{
	if (!p || !rt_debug_handles())
		return;
	pthread_mutex_lock(&lock);
	if ((used + 1) * 2 > cap && !grow()) {
		incomplete = true;
	} else {
		Handle *h = find(p);
		used += !h->p;
		*h = (Handle){p, (uint8_t)kind, true};
	}
	pthread_mutex_unlock(&lock);
}

bool rt_handle_dead(const void *p)
{
	if (!p || !rt_debug_handles())
		return false;
	pthread_mutex_lock(&lock);
	bool was = false;
	if (cap) {
		Handle *h = find(p);
		was = h->p && h->live;
		h->live = false;
	}
	pthread_mutex_unlock(&lock);
	return was;
}

blk_status rt_handle_check(const void *p, HandleKind kind, const char *fn)
{
	if (!p || !rt_debug_handles())
		return BLK_SUCCESS;
	pthread_mutex_lock(&lock);
	Handle h = {0};
	if (cap)
		h = *find(p);
	bool pass = incomplete && !h.p;
	pthread_mutex_unlock(&lock);
	if (pass || (h.p && h.live && h.kind == kind))
		return BLK_SUCCESS;
	if (!h.p)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: %p is not a %s (BLK_DEBUG=1: no handle was made there)", fn,
		               p, kind_names[kind]);
	if (!h.live)
		return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: the %s %p was destroyed (BLK_DEBUG=1)", fn,
		               kind_names[h.kind], p);
	return rt_fail(BLK_ERROR_INVALID_ARGUMENT, "%s: %p is a %s, not a %s (BLK_DEBUG=1)", fn, p, kind_names[h.kind],
	               kind_names[kind]);
}
