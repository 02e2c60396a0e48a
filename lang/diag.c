/* diag.c: rendering diagnostics the way gcc and clang do.
 *
 *   file:line:col: error: message
 *     12 |     let x = y +;
 *        |               ^
 *
 * Everything is written into d->out; the library never prints. */
#include "lang.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

enum {
	ECHO_WINDOW = 160,            /* bytes of a long line shown around the column */
	ECHO_REACH = ECHO_WINDOW + 8, /* how far to look for the ends of the line */
};

#define C_BOLD "\033[1m"
#define C_RED "\033[1;31m"
#define C_MAGENTA "\033[1;35m"
#define C_CYAN "\033[1;36m"
#define C_GREEN "\033[1;32m"
#define C_RESET "\033[0m"

void diag_init(Diag *d)
{
	*d = (Diag){.max_errors = DIAG_MAX_ERRORS_DEFAULT};
}

void diag_free(Diag *d) { sb_free(&d->out); }

Span span_join(Span a, Span b)
{
	if (b.end > a.end)
		a.end = b.end;
	return a;
}

static const char *level_name(DiagLevel l)
{
	return l == DIAG_ERROR ? "error" : l == DIAG_WARNING ? "warning" : "note";
}

static const char *level_color(DiagLevel l)
{
	return l == DIAG_ERROR ? C_RED : l == DIAG_WARNING ? C_MAGENTA : C_CYAN;
}

/* Length of the valid UTF-8 sequence at p (before end), or 0 if invalid. */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	int n;
	unsigned min;
	if (c < 0x80)
		return 1;
	else if ((c & 0xE0) == 0xC0)
		n = 2, min = 0x80;
	else if ((c & 0xF0) == 0xE0)
		n = 3, min = 0x800;
	else if ((c & 0xF8) == 0xF0)
		n = 4, min = 0x10000;
	else
		return 0;
	if (end - p < n)
		return 0;
	unsigned cp = c & (0x7F >> n);
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

/* Echoes the source line that holds sp, and a caret line under the span.
 * Control bytes and invalid UTF-8 are shown as '?', so that whatever the
 * file holds, the terminal sees only printable text. */
static void echo_line(Diag *d, Span sp)
{
	const Source *s = sp.src;
	const unsigned char *text = (const unsigned char *)s->text;
	uint32_t begin = sp.begin > s->len ? s->len : sp.begin;
	/* The line around begin, looked for no further than ECHO_REACH bytes each
	 * way: a diagnostic costs the same on a line of any length (a long line
	 * can hold a warning every few bytes). ls and le stop at ECHO_REACH when
	 * the line goes on; the window below then shows "..." on that side. */
	uint32_t floor = begin > ECHO_REACH ? begin - ECHO_REACH : 0;
	uint32_t ceil = s->len - begin > ECHO_REACH ? begin + ECHO_REACH : s->len;
	uint32_t ls = begin, le = begin;
	while (ls > floor && text[ls - 1] != '\n')
		ls--;
	while (le < ceil && text[le] != '\n')
		le++;
	bool line_ends = le == s->len || text[le] == '\n';
	if (line_ends && le > ls && text[le - 1] == '\r')
		le--;
	uint32_t end = sp.end > le ? le : sp.end;
	if (end <= begin)
		end = begin + 1; /* at least one caret, also at the end of a line */

	uint32_t lo = ls, hi = le;
	if (le - ls > ECHO_WINDOW) {
		/* The window's edges move onto character boundaries: past at most
		 * three continuation bytes, however many stray ones follow. */
		lo = begin > ls + ECHO_WINDOW / 2 ? begin - ECHO_WINDOW / 2 : ls;
		for (int k = 0; k < 3 && lo > ls && lo < begin && (text[lo] & 0xC0) == 0x80; k++)
			lo++;
		hi = lo + ECHO_WINDOW < le ? lo + ECHO_WINDOW : le;
		for (int k = 0; k < 3 && hi < le && (text[hi] & 0xC0) == 0x80; k++)
			hi++;
	}

	char num[16];
	int w = snprintf(num, sizeof num, "%u", sp.line);
	StrBuf src = {0}, mark = {0};
	if (lo > ls) {
		sb_puts(&src, "...");
		sb_puts(&mark, "   ");
	}
	for (uint32_t i = lo; i < hi;) {
		int n = utf8_len(text + i, text + hi);
		bool in_span = i >= begin && i < end;
		char m = in_span ? (i == begin ? '^' : '~') : ' ';
		if (n == 0 || (n == 1 && (text[i] < 0x20 || text[i] == 0x7F) && text[i] != '\t')) {
			sb_putc(&src, '?');
			sb_putc(&mark, m);
			i++;
			continue;
		}
		sb_putn(&src, (const char *)text + i, (size_t)n);
		sb_putc(&mark, text[i] == '\t' && !in_span ? '\t' : m);
		i += (uint32_t)n;
	}
	if (hi < le)
		sb_puts(&src, "...");
	if (begin >= hi) /* the span starts at the end of the line */
		sb_putc(&mark, '^');
	/* trailing blanks of the caret line are noise */
	while (mark.len && (mark.data[mark.len - 1] == ' ' || mark.data[mark.len - 1] == '\t'))
		mark.data[--mark.len] = '\0';

	sb_printf(&d->out, " %s | %s\n", num, src.data ? src.data : "");
	sb_printf(&d->out, " %*s | %s%s%s\n", w, "", d->color ? C_GREEN : "",
	          mark.data ? mark.data : "", d->color ? C_RESET : "");
	sb_free(&src);
	sb_free(&mark);
}

/* Counts the report and says whether to render it, applying the error cap. */
static bool admit(Diag *d, DiagLevel level)
{
	if (d->stopped)
		return false;
	if (level == DIAG_ERROR) {
		if (d->max_errors > 0 && d->errors >= d->max_errors) {
			d->stopped = true;
			sb_printf(&d->out, "%s%s:%s too many errors emitted, stopping now (limit %d)\n",
			          d->color ? C_RED : "", "fatal error", d->color ? C_RESET : "", d->max_errors);
			return false;
		}
		d->errors++;
	} else if (level == DIAG_WARNING) {
		d->warnings++;
	}
	return true;
}

static void header(Diag *d, DiagLevel level)
{
	sb_printf(&d->out, "%s%s:%s ", d->color ? level_color(level) : "", level_name(level),
	          d->color ? C_RESET : "");
}

void diag_vreport(Diag *d, DiagLevel level, Span sp, const char *fmt, va_list ap)
{
	if (!admit(d, level))
		return;
	if (!sp.src) {
		header(d, level);
		sb_vprintf(&d->out, fmt, ap);
		sb_putc(&d->out, '\n');
		return;
	}
	sb_printf(&d->out, "%s%s:%u:%u:%s ", d->color ? C_BOLD : "", sp.src->name, sp.line, sp.col,
	          d->color ? C_RESET : "");
	header(d, level);
	if (d->color)
		sb_puts(&d->out, C_BOLD);
	sb_vprintf(&d->out, fmt, ap);
	if (d->color)
		sb_puts(&d->out, C_RESET);
	sb_putc(&d->out, '\n');
	echo_line(d, sp);
}

void diag_report(Diag *d, DiagLevel level, Span sp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vreport(d, level, sp, fmt, ap);
	va_end(ap);
}

void diag_plain(Diag *d, DiagLevel level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vreport(d, level, (Span){0}, fmt, ap);
	va_end(ap);
}

/* ---- reading sources ---------------------------------------------------- */

enum { SOURCE_MAX_BYTES = 256u << 20 }; /* spans are 32-bit; keep far from that */

void source_from_string(Source *out, const char *name, const char *text, size_t len, Arena *arena)
{
	char *copy = arena_strndup(arena, text, len);
	*out = (Source){.name = name, .text = copy ? copy : "", .len = copy ? (uint32_t)len : 0};
}

bool source_read_file(Source *out, const char *path, Arena *arena, Diag *d)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *f = stdin;
	if (!is_stdin) {
		/* O_NONBLOCK: opening a FIFO must not wait for a writer; anything
		 * but a regular file is refused before a read could hang. */
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			diag_plain(d, DIAG_ERROR, "cannot open '%s': %s", path, strerror(errno));
			return false;
		}
		struct stat st;
		bool stat_ok = fstat(fd, &st) == 0;
		if (!stat_ok || !S_ISREG(st.st_mode)) {
			if (stat_ok)
				diag_plain(d, DIAG_ERROR, "cannot read '%s': it is not a regular file", path);
			else
				diag_plain(d, DIAG_ERROR, "cannot read '%s': %s", path, strerror(errno));
			close(fd);
			return false;
		}
		int flags = fcntl(fd, F_GETFL);
		if (flags >= 0)
			fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
		f = fdopen(fd, "rb");
		if (!f) {
			diag_plain(d, DIAG_ERROR, "cannot open '%s': %s", path, strerror(errno));
			close(fd);
			return false;
		}
	}
	StrBuf buf = {0};
	char chunk[65536];
	size_t n;
	bool too_big = false;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (buf.len + n > SOURCE_MAX_BYTES) {
			too_big = true;
			break;
		}
		sb_putn(&buf, chunk, n);
	}
	bool read_error = ferror(f);
	int err = errno;
	if (!is_stdin)
		fclose(f);
	if (read_error || too_big || buf.failed) {
		if (too_big)
			diag_plain(d, DIAG_ERROR, "'%s' is larger than %u MiB", path, SOURCE_MAX_BYTES >> 20);
		else if (buf.failed)
			diag_plain(d, DIAG_ERROR, "out of memory reading '%s'", path);
		else
			diag_plain(d, DIAG_ERROR, "cannot read '%s': %s", path, strerror(err));
		sb_free(&buf);
		return false;
	}
	source_from_string(out, is_stdin ? "<stdin>" : arena_strndup(arena, path, strlen(path)),
	                   buf.data ? buf.data : "", buf.len, arena);
	sb_free(&buf);
	if (!out->name || (buf.len && !out->len)) {
		diag_plain(d, DIAG_ERROR, "out of memory reading '%s'", path);
		return false;
	}
	return true;
}

/* ---- "did you mean" ---------------------------------------------------------- */

enum { MAX_WORD = 64 };

/* Edit distance with adjacent transpositions (optimal string alignment);
 * letters that differ only in case count as half an edit (units of 2). */
static int distance2(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la >= MAX_WORD || lb >= MAX_WORD)
		return 1 << 20;
	int d[MAX_WORD + 1][MAX_WORD + 1];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = 2 * (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = 2 * (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			char x = a[i - 1], y = b[j - 1];
			int sub = x == y ? 0 : (x | 0x20) == (y | 0x20) && ((x | 0x20) >= 'a' && (x | 0x20) <= 'z') ? 1 : 2;
			int best = d[i - 1][j - 1] + sub;
			if (d[i - 1][j] + 2 < best)
				best = d[i - 1][j] + 2;
			if (d[i][j - 1] + 2 < best)
				best = d[i][j - 1] + 2;
			if (i > 1 && j > 1 && x == b[j - 2] && a[i - 2] == y && d[i - 2][j - 2] + 2 < best)
				best = d[i - 2][j - 2] + 2;
			d[i][j] = best;
		}
	return d[la][lb];
}

void nearest_init(Nearest *n, const char *want)
{
	size_t len = strlen(want);
	/* short names are near only by case; longer ones by an edit per three letters */
	int edits = len < 3 ? 0 : len < 6 ? 1 : len < 9 ? 2 : 3;
	*n = (Nearest){.want = want, .best = NULL, .dist = 2 * edits + 2};
}

void nearest_consider(Nearest *n, const char *cand)
{
	/* hidden names (#iv, _widen) are not for users to write */
	char c0 = cand ? (char)(cand[0] | 0x20) : 0;
	if (!cand || c0 < 'a' || c0 > 'z' || strcmp(cand, n->want) == 0)
		return;
	int d = distance2(n->want, cand);
	if (d < n->dist) {
		n->dist = d;
		n->best = cand;
	}
}

