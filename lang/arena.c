/* arena.c: bump allocation for one compilation, growable buffers. */
#include "lang.h"

#include <stdlib.h>
#include <string.h>

struct ArenaChunk {
	ArenaChunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

enum { ARENA_CHUNK_MIN = 64 * 1024 };

void *arena_alloc(Arena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	ArenaChunk *c = a->head;
	if (!c || c->size - c->used < size) {
		size_t want = size > ARENA_CHUNK_MIN ? size : ARENA_CHUNK_MIN;
		/* Grow chunk size with the total, so a large compilation makes few chunks. */
		if (want < a->used_total / 4)
			want = a->used_total / 4;
		c = malloc(sizeof *c + want);
		if (!c)
			return NULL;
		c->next = a->head;
		c->size = want;
		c->used = 0;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += size;
	a->used_total += size;
	memset(p, 0, size);
	return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = n < 0 ? NULL : arena_alloc(a, (size_t)n + 1);
	if (p)
		vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

void arena_free(Arena *a)
{
	ArenaChunk *c = a->head;
	while (c) {
		ArenaChunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->used_total = 0;
}

bool ptrvec_push(Arena *a, PtrVec *v, void *item)
{
	if (v->len == v->cap) {
		int cap = v->cap ? v->cap * 2 : 4;
		void **items = arena_alloc(a, (size_t)cap * sizeof *items);
		if (!items)
			return false;
		if (v->len)
			memcpy(items, v->items, (size_t)v->len * sizeof *items);
		v->items = items;
		v->cap = cap;
	}
	v->items[v->len++] = item;
	return true;
}

static bool sb_reserve(StrBuf *sb, size_t extra)
{
	if (sb->failed)
		return false;
	if (sb->len + extra + 1 <= sb->cap)
		return true;
	size_t cap = sb->cap ? sb->cap : 256;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	char *d = realloc(sb->data, cap);
	if (!d) {
		sb->failed = true;
		return false;
	}
	sb->data = d;
	sb->cap = cap;
	return true;
}

void sb_putn(StrBuf *sb, const char *s, size_t n)
{
	if (!sb_reserve(sb, n))
		return;
	memcpy(sb->data + sb->len, s, n);
	sb->len += n;
	sb->data[sb->len] = '\0';
}

void sb_putc(StrBuf *sb, char c) { sb_putn(sb, &c, 1); }
void sb_puts(StrBuf *sb, const char *s) { sb_putn(sb, s, strlen(s)); }

void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	if (n >= 0 && sb_reserve(sb, (size_t)n)) {
		vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
		sb->len += (size_t)n;
	}
	va_end(ap2);
}

void sb_printf(StrBuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

void sb_free(StrBuf *sb)
{
	free(sb->data);
	*sb = (StrBuf){0};
}
