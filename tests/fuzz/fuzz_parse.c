/* fuzz_parse.c: libFuzzer target for the front end (lexer, parser, tree
 * printer, diagnostics).
 *
 * Each input is taken as a whole source file. The harness
 *   1. drives the lexer token by token and checks every token against the
 *      source bytes (spans, line:col, spellings, identifier text),
 *   2. runs lexer_dump and checks that its lines match those tokens and end
 *      with the EOF line,
 *   3. runs parse_source and, when a tree comes back, walks it (shape of each
 *      node kind, spans inside the source and inside their parent, height)
 *      and prints it with ast_dump,
 *   4. checks every diagnostic rendering: printable UTF-8 only, colour codes
 *      only when colour is on, "file:line:col: level: message" headers each
 *      followed by the two echo lines, counts that match Diag's counters,
 *      the error cap respected,
 *   5. for inputs parsed with colour on (chosen by the low bit of the last
 *      byte), parses again without colour and checks that the two runs agree
 *      once the colour codes are stripped (this also catches reads of
 *      uninitialized or stale state).
 * A violated invariant abort()s. Everything is freed, so LeakSanitizer sees
 * leaks. Nothing is printed unless an invariant fails.
 *
 * Built by `make fuzz` (clang -fsanitize=fuzzer,address,undefined); see
 * docs/testing.md. */
#include "lang.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The checks below are not what is being fuzzed: no coverage feedback and
 * no comparison tracing from them (that would make libFuzzer keep inputs that
 * are new only to the checker, and costs a third of the time). */
#if defined(__clang__)
#define CHECKER __attribute__((no_sanitize("coverage")))
#else
#define CHECKER
#endif

static const char SOURCE_NAME[] = "fuzz.tile";

/* Slack over PARSE_MAX_DEPTH for nodes that are not sealed (the file node,
 * attributes hanging off a declaration). */
enum { HEIGHT_SLACK = 3 };

/* Longest echo line: a window of ECHO_WINDOW (160) bytes in diag.c, widened to
 * whole UTF-8 characters, plus "..." on each side. */
enum { ECHO_MAX = 160 + 3 + 2 * 3 + 4 };

CHECKER __attribute__((noreturn)) static void fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "fuzz_parse: invariant violated at %s:%d: %s\n", file, line, what);
	abort();
}

#define CHECK(cond) \
	do { \
		if (!(cond)) \
			fail(#cond, __FILE__, __LINE__); \
	} while (0)

/* ---- the source and its lines -------------------------------------------- */

typedef struct Lines {
	const Source *src;
	uint32_t *nl; /* offsets of the '\n' bytes, ascending */
	uint32_t n;
} Lines;

CHECKER static void lines_init(Lines *ln, const Source *src)
{
	ln->src = src;
	ln->n = 0;
	for (uint32_t i = 0; i < src->len; i++)
		ln->n += src->text[i] == '\n';
	ln->nl = malloc(((size_t)ln->n + 1) * sizeof *ln->nl);
	CHECK(ln->nl != NULL);
	uint32_t k = 0;
	for (uint32_t i = 0; i < src->len; i++)
		if (src->text[i] == '\n')
			ln->nl[k++] = i;
}

/* 1-based line and byte column of offset `off`. */
CHECKER static void line_col(const Lines *ln, uint32_t off, uint32_t *line, uint32_t *col)
{
	uint32_t lo = 0, hi = ln->n; /* number of newlines before off */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ln->nl[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	*line = lo + 1;
	*col = off - (lo ? ln->nl[lo - 1] + 1 : 0) + 1;
}

/* Length of line `line` (1-based), without its '\n'. */
CHECKER static uint32_t line_len(const Lines *ln, uint32_t line)
{
	uint32_t start = line >= 2 ? ln->nl[line - 2] + 1 : 0;
	uint32_t end = line - 1 < ln->n ? ln->nl[line - 1] : ln->src->len;
	return end - start;
}

CHECKER static void check_span(const Lines *ln, Span sp)
{
	CHECK(sp.src == ln->src);
	CHECK(sp.begin <= sp.end);
	CHECK(sp.end <= ln->src->len);
	uint32_t line, col;
	line_col(ln, sp.begin, &line, &col);
	CHECK(sp.line == line);
	CHECK(sp.col == col);
}

/* ---- diagnostics ---------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p, or 0 (same rules as diag.c). */
CHECKER static int utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	int n;
	unsigned min;
	if (c < 0x80)
		return 1;
	if ((c & 0xE0) == 0xC0)
		n = 2, min = 0x80;
	else if ((c & 0xF0) == 0xE0)
		n = 3, min = 0x800;
	else if ((c & 0xF8) == 0xF0)
		n = 4, min = 0x10000;
	else
		return 0;
	if (end - p < n)
		return 0;
	unsigned cp = c & (0x7Fu >> n);
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

/* Checks that `s` is printable: valid UTF-8, no control bytes but '\n' and
 * '\t', and ESC only as the start of an SGR sequence "ESC [ digits;... m"
 * when `color` allows it. Returns a copy with the SGR sequences removed. */
CHECKER static char *printable_stripped(const char *s, size_t len, bool color)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char *out = malloc(len + 1);
	CHECK(out != NULL);
	size_t o = 0;
	while (p < end) {
		if (*p == 0x1B) {
			CHECK(color);
			CHECK(end - p >= 3 && p[1] == '[');
			const unsigned char *q = p + 2;
			while (q < end && ((*q >= '0' && *q <= '9') || *q == ';'))
				q++;
			CHECK(q < end && *q == 'm' && q > p + 2);
			p = q + 1;
			continue;
		}
		int n = utf8_len(p, end);
		CHECK(n > 0);
		if (n == 1)
			CHECK(*p >= 0x20 ? *p != 0x7F : (*p == '\n' || *p == '\t'));
		memcpy(out + o, p, (size_t)n);
		o += (size_t)n;
		p += n;
	}
	out[o] = '\0';
	return out;
}

CHECKER static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Parses a decimal number at *p (at least one digit, no leading '+'). */
CHECKER static bool number(const char **p, uint32_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9') {
		x = x * 10 + (uint64_t)(*s++ - '0');
		if (x > UINT32_MAX)
			return false;
	}
	*v = (uint32_t)x;
	*p = s;
	return true;
}

/* "error: ", "warning: " or "note: " at *p: returns the level or -1. */
CHECKER static int level_at(const char **p)
{
	static const char *const names[] = {[DIAG_ERROR] = "error: ", [DIAG_WARNING] = "warning: ",
	                                    [DIAG_NOTE] = "note: "};
	for (int l = 0; l < 3; l++)
		if (starts_with(*p, names[l])) {
			*p += strlen(names[l]);
			return l;
		}
	return -1;
}

/* A short line is echoed whole: each valid UTF-8 character as it is, other
 * bytes and control characters (but tab) as '?'; the caret sits under the
 * character at column `col`. So the header's line:col and the echoed line
 * must agree: they come from one span, whose line and col must match its
 * byte offset. (Long lines are shown in a window; not checked here.) */
CHECKER static void check_echo(const Lines *ln, uint32_t line, uint32_t col, const char *echo, ptrdiff_t caret)
{
	const unsigned char *text = (const unsigned char *)ln->src->text;
	uint32_t ls = line >= 2 ? ln->nl[line - 2] + 1 : 0;
	uint32_t le = ls + line_len(ln, line);
	if (le > ls && text[le - 1] == '\r')
		le--;
	if (le - ls > 160)
		return;
	uint32_t at = ls + col - 1;
	ptrdiff_t chars_before = -1, chars = 0;
	size_t o = 0;
	for (uint32_t i = ls; i < le; chars++) {
		if (i == at)
			chars_before = chars;
		int n = utf8_len(text + i, text + le);
		if (n == 0 || (n == 1 && (text[i] < 0x20 || text[i] == 0x7F) && text[i] != '\t')) {
			CHECK(echo[o++] == '?');
			i++;
			continue;
		}
		CHECK(memcmp(echo + o, text + i, (size_t)n) == 0);
		o += (size_t)n;
		i += (uint32_t)n;
	}
	CHECK(echo[o] == '\0');
	if (at >= le)
		chars_before = chars; /* at the end of the line */
	CHECK(chars_before >= 0); /* not inside a character */
	CHECK(caret == chars_before);
}

/* Checks the rendered diagnostics of `d` and its counters. */
CHECKER static void check_diag(const Diag *d, const Lines *ln, bool color, char **stripped_out)
{
	CHECK(!d->out.failed);
	CHECK(d->errors >= 0 && d->warnings >= 0);
	CHECK(d->max_errors == DIAG_MAX_ERRORS_DEFAULT);
	CHECK(d->errors <= d->max_errors);
	CHECK(!d->stopped || d->errors == d->max_errors);
	if (d->out.len == 0) {
		CHECK(d->errors == 0 && d->warnings == 0);
		if (stripped_out)
			*stripped_out = NULL;
		return;
	}
	CHECK(d->out.data != NULL);
	CHECK(d->out.data[d->out.len] == '\0');
	CHECK(strlen(d->out.data) == d->out.len); /* no NUL inside */
	CHECK(d->out.data[d->out.len - 1] == '\n');

	char *text = printable_stripped(d->out.data, d->out.len, color);
	int errors = 0, warnings = 0, fatal = 0;
	char *line = text;
	while (*line) {
		char *eol = strchr(line, '\n');
		CHECK(eol != NULL);
		*eol = '\0';
		CHECK(fatal == 0); /* "too many errors" is the last line */
		const char *p = line;
		int level;
		if (starts_with(p, "fatal error: ")) {
			CHECK(strstr(p, "too many errors") != NULL);
			fatal++;
			line = eol + 1;
			continue;
		}
		bool located = starts_with(p, SOURCE_NAME) && p[strlen(SOURCE_NAME)] == ':';
		uint32_t l = 0, c = 0;
		if (located) {
			p += strlen(SOURCE_NAME) + 1;
			CHECK(number(&p, &l) && *p++ == ':');
			CHECK(number(&p, &c) && *p++ == ':' && *p++ == ' ');
			CHECK(l >= 1 && c >= 1);
			CHECK(l <= ln->n + 1);
			CHECK(c - 1 <= line_len(ln, l));
		}
		level = level_at(&p);
		CHECK(level >= 0);
		CHECK(*p != '\0'); /* a message */
		errors += level == DIAG_ERROR;
		warnings += level == DIAG_WARNING;
		line = eol + 1;
		if (!located)
			continue;

		/* " 12 | source text" */
		eol = strchr(line, '\n');
		CHECK(eol != NULL);
		*eol = '\0';
		p = line;
		CHECK(*p++ == ' ');
		uint32_t echoed;
		const char *num = p;
		CHECK(number(&p, &echoed) && echoed == l);
		int width = (int)(p - num);
		CHECK(strncmp(p, " |", 2) == 0);
		p += 2;
		CHECK(*p == '\0' || *p == ' ');
		CHECK(strlen(p) <= ECHO_MAX + 1);
		const char *echo = *p ? p + 1 : p;
		line = eol + 1;

		/* "    |    ^~~~" */
		eol = strchr(line, '\n');
		CHECK(eol != NULL);
		*eol = '\0';
		p = line;
		for (int i = 0; i < width + 1; i++)
			CHECK(*p++ == ' ');
		CHECK(strncmp(p, " |", 2) == 0);
		p += 2;
		CHECK(strlen(p) <= ECHO_MAX + 2);
		int carets = 0;
		for (; *p; p++) {
			CHECK(*p == ' ' || *p == '\t' || *p == '^' || *p == '~');
			carets += *p == '^';
		}
		CHECK(carets == 1);
		check_echo(ln, l, c, echo, strchr(line, '^') - (line + width + 4));
		line = eol + 1;
	}
	CHECK(errors == d->errors);
	CHECK(warnings == d->warnings);
	CHECK(fatal == (d->stopped ? 1 : 0));
	if (stripped_out)
		*stripped_out = text;
	else
		free(text);
}

/* ---- tokens ---------------------------------------------------------------- */

CHECKER static bool is_keyword_or_punct(TokenKind k) { return k >= T_KW_IMPORT && k < T_COUNT; }

typedef struct TokInfo {
	uint32_t line, col;
	TokenKind kind;
} TokInfo;

/* Drives the lexer to the end and checks every token. Returns the tokens'
 * positions and kinds (for comparison with lexer_dump); *count is set. */
CHECKER static TokInfo *lex_all(const Source *src, const Lines *ln, bool color, size_t *count, int *errors)
{
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	diag.color = color;
	Lexer lx;
	lexer_init(&lx, src, &diag, &arena);

	size_t cap = 64, n = 0;
	TokInfo *toks = malloc(cap * sizeof *toks);
	CHECK(toks != NULL);
	uint32_t prev_end = 0;
	for (;;) {
		Token t = lexer_next(&lx);
		CHECK((unsigned)t.kind < T_COUNT);
		check_span(ln, t.span);
		CHECK(t.span.begin >= prev_end); /* in order, no overlap */
		CHECK(lx.nesting >= 0 && lx.nesting <= LEX_MAX_NESTING);
		/* every token but EOF consumes a byte: the loop ends */
		CHECK(n <= src->len);
		if (n == cap) {
			cap *= 2;
			toks = realloc(toks, cap * sizeof *toks);
			CHECK(toks != NULL);
		}
		toks[n++] = (TokInfo){t.span.line, t.span.col, t.kind};
		if (t.kind == T_EOF)
			break;
		prev_end = t.span.end;
		const char *text = src->text + t.span.begin;
		size_t len = t.span.end - t.span.begin;
		CHECK(len > 0);
		if (is_keyword_or_punct(t.kind)) {
			const char *sp = token_kind_spelling(t.kind);
			CHECK(len == strlen(sp) && memcmp(text, sp, len) == 0);
		} else if (t.kind == T_IDENT) {
			CHECK(t.str != NULL);
			CHECK(strlen(t.str) == len && memcmp(t.str, text, len) == 0);
			for (int k = T_KW_IMPORT; k <= T_KW_NONE; k++)
				CHECK(strcmp(t.str, token_kind_spelling((TokenKind)k)) != 0);
		} else if (t.kind == T_INT) {
			CHECK(text[0] >= '0' && text[0] <= '9');
		} else if (t.kind == T_FLOAT) {
			CHECK((text[0] >= '0' && text[0] <= '9') || text[0] == '.');
			CHECK(!isnan(t.fval)); /* no NaN from a literal */
		} else if (t.kind == T_STRING) {
			CHECK(text[0] == '"');
			CHECK(t.str != NULL);
			CHECK(t.len <= len);
			CHECK(memchr(text, '\n', len) == NULL); /* strings are one line */
		}
	}
	/* after EOF, EOF forever */
	for (int i = 0; i < 2; i++) {
		Token t = lexer_next(&lx);
		CHECK(t.kind == T_EOF);
		check_span(ln, t.span);
	}
	check_diag(&diag, ln, color, NULL);
	*errors = diag.errors;
	*count = n;
	diag_free(&diag);
	arena_free(&arena);
	return toks;
}

/* lexer_dump: one "LINE:COL KIND ..." line a token, the same tokens as
 * lex_all saw, ending with the EOF line. */
CHECKER static void check_lexer_dump(const Source *src, const Lines *ln, bool color, const TokInfo *toks, size_t n)
{
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	diag.color = color;
	StrBuf out = {0};
	lexer_dump(src, &diag, &arena, &out);
	CHECK(!out.failed);
	CHECK(out.len > 0 && out.data[out.len - 1] == '\n');
	CHECK(strlen(out.data) == out.len);
	size_t i = 0;
	const char *p = out.data;
	while (*p) {
		CHECK(i < n);
		uint32_t l, c;
		CHECK(number(&p, &l) && *p++ == ':' && number(&p, &c) && *p++ == ' ');
		CHECK(l == toks[i].line && c == toks[i].col);
		const char *name = token_kind_name(toks[i].kind);
		size_t nl = strlen(name);
		CHECK(strncmp(p, name, nl) == 0 && (p[nl] == ' ' || p[nl] == '\n'));
		/* a line per token: the token's text must not break the line */
		const char *eol = strchr(p, '\n');
		CHECK(eol != NULL);
		p = eol + 1;
		i++;
	}
	CHECK(i == n);
	CHECK(toks[n - 1].kind == T_EOF);
	check_diag(&diag, ln, color, NULL);
	sb_free(&out);
	diag_free(&diag);
	arena_free(&arena);
}

/* ---- the tree ---------------------------------------------------------------- */

CHECKER static bool is_expr(const Node *n)
{
	return n && n->kind >= N_IDENT && n->kind <= N_LIST && n->kind != N_NAMED_ARG &&
	       n->kind != N_SLICE;
}

CHECKER static bool is_type(const Node *n)
{
	return n && (n->kind == N_TYPE_NAME || n->kind == N_TYPE_PTR || n->kind == N_TYPE_CONST);
}

CHECKER static bool is_block(const Node *n) { return n && n->kind == N_BLOCK; }

CHECKER static bool is_stmt(const Node *n)
{
	return n && n->kind >= N_BLOCK && n->kind <= N_RETURN;
}

CHECKER static bool inside(Span child, Span parent)
{
	return child.begin >= parent.begin && child.end <= parent.end;
}

/* Checks one node and its subtree; returns the subtree's height. */
CHECKER static int check_node(const Lines *ln, const Node *n, const Node *parent, int level, size_t *count)
{
	CHECK(n != NULL);
	CHECK(level <= PARSE_MAX_DEPTH + HEIGHT_SLACK);
	CHECK((unsigned)n->kind < N_COUNT);
	(*count)++;
	if (n->kind == N_FILE) {
		CHECK(parent == NULL);
		check_span(ln, n->span); /* the whole file */
		CHECK(n->span.begin == 0 && n->span.end == ln->src->len);
	} else {
		CHECK(parent != NULL);
		check_span(ln, n->span);
		if (parent->kind != N_FILE)
			CHECK(inside(n->span, parent->span));
	}
	for (int i = 0; i < n->list.len; i++)
		CHECK(n->list.items[i] != NULL);
	for (int i = 0; i < n->attrs.len; i++)
		CHECK(n->attrs.items[i] != NULL && ((Node *)n->attrs.items[i])->kind == N_ATTR);
	if (n->attrs.len)
		CHECK(n->kind == N_FN || n->kind == N_KERNEL);

	switch (n->kind) {
	case N_FILE:
		for (int i = 0; i < n->list.len; i++) {
			NodeKind k = ((Node *)n->list.items[i])->kind;
			CHECK(k == N_IMPORT || k == N_CONST || k == N_FN || k == N_KERNEL);
		}
		break;
	case N_IMPORT:
		CHECK(n->str != NULL);
		break;
	case N_CONST:
		CHECK(n->name && (!n->a || is_type(n->a)) && is_expr(n->b));
		break;
	case N_FN:
	case N_KERNEL:
		CHECK(n->name && is_block(n->b));
		for (int i = 0; i < n->list.len; i++)
			CHECK(((Node *)n->list.items[i])->kind == N_PARAM);
		if (n->a)
			CHECK(n->kind == N_FN ? is_type(n->a) : n->a->kind == N_TUPLE && n->a->list.len >= 1);
		break;
	case N_PARAM:
		CHECK(n->name && (!n->a || is_type(n->a)) && (!n->b || is_expr(n->b)));
		break;
	case N_ATTR:
		CHECK(n->name);
		CHECK(n->flag || n->list.len == 0);
		break;
	case N_CONFIG:
		for (int i = 0; i < n->list.len; i++)
			CHECK(((Node *)n->list.items[i])->kind == N_NAMED_ARG);
		break;
	case N_TYPE_NAME:
		CHECK(n->name && !n->a);
		break;
	case N_TYPE_PTR:
		CHECK(is_type(n->a) && n->a->kind != N_TYPE_CONST);
		break;
	case N_TYPE_CONST:
		CHECK(is_type(n->a) && n->a->kind != N_TYPE_CONST);
		break;
	case N_BLOCK:
		for (int i = 0; i < n->list.len; i++)
			CHECK(is_stmt(n->list.items[i]));
		break;
	case N_LET:
		CHECK(n->list.len >= 1 && is_expr(n->b) && (!n->a || is_type(n->a)));
		for (int i = 0; i < n->list.len; i++)
			CHECK(((Node *)n->list.items[i])->kind == N_IDENT);
		break;
	case N_ASSIGN:
		CHECK(n->list.len >= 1 && is_expr(n->b));
		CHECK(n->op == T_ASSIGN || (n->op >= T_PLUS_ASSIGN && n->op <= T_SHR_ASSIGN));
		break;
	case N_EXPR_STMT:
		CHECK(is_expr(n->a));
		break;
	case N_IF:
		CHECK(is_expr(n->a) && is_block(n->b));
		CHECK(!n->c || n->c->kind == N_BLOCK || n->c->kind == N_IF);
		break;
	case N_FOR:
		CHECK(n->name && is_expr(n->a) && is_block(n->b));
		break;
	case N_WHILE:
		CHECK(is_expr(n->a) && is_block(n->b));
		break;
	case N_BREAK:
	case N_CONTINUE:
		CHECK(!n->a && !n->b && !n->c && n->list.len == 0);
		break;
	case N_RETURN:
		CHECK(!n->a || is_expr(n->a));
		break;
	case N_IDENT:
		CHECK(n->name && n->name[0]);
		break;
	case N_STRING:
		CHECK(n->str != NULL);
		break;
	case N_BOOL:
		CHECK(n->ival <= 1);
		break;
	case N_UNARY:
		CHECK(is_expr(n->a) && !n->b);
		CHECK(n->op == T_MINUS || n->op == T_PLUS || n->op == T_BANG || n->op == T_TILDE ||
		      n->op == T_STAR); /* prefix `*`: a pointer type in an expression (`x.to(*f16)`) */
		break;
	case N_BINARY:
		CHECK(is_expr(n->a) && is_expr(n->b));
		CHECK(n->op >= T_PLUS && n->op <= T_GE);
		break;
	case N_TERNARY:
		CHECK(is_expr(n->a) && is_expr(n->b) && is_expr(n->c));
		break;
	case N_CALL:
		CHECK(is_expr(n->a));
		for (int i = 0; i < n->list.len; i++) {
			const Node *arg = n->list.items[i];
			CHECK(is_expr(arg) || arg->kind == N_NAMED_ARG);
		}
		break;
	case N_NAMED_ARG:
		CHECK(n->name && n->a);
		break;
	case N_INDEX:
		CHECK(is_expr(n->a) && n->list.len >= 1);
		for (int i = 0; i < n->list.len; i++) {
			const Node *ix = n->list.items[i];
			CHECK(is_expr(ix) || ix->kind == N_SLICE);
		}
		break;
	case N_SLICE:
		CHECK(parent->kind == N_INDEX);
		break;
	case N_FIELD:
		CHECK(is_expr(n->a) && n->name);
		break;
	case N_TUPLE:
		for (int i = 0; i < n->list.len; i++)
			CHECK(is_expr(n->list.items[i]));
		break;
	default:
		break;
	}

	int h = 0, k;
	const Node *kids[3] = {n->a, n->b, n->c};
	for (int i = 0; i < 3; i++)
		if (kids[i] && (k = check_node(ln, kids[i], n, level + 1, count)) > h)
			h = k;
	for (int i = 0; i < n->list.len; i++)
		if ((k = check_node(ln, n->list.items[i], n, level + 1, count)) > h)
			h = k;
	for (int i = 0; i < n->attrs.len; i++)
		if ((k = check_node(ln, n->attrs.items[i], n, level + 1, count)) > h)
			h = k;
	CHECK(h + 1 <= PARSE_MAX_DEPTH + HEIGHT_SLACK);
	return h + 1;
}

/* ast_dump: one node a line, children indented two spaces under their
 * parent, starting with the File line. */
CHECKER static void check_ast_dump(const StrBuf *out)
{
	CHECK(!out->failed);
	CHECK(out->len > 0 && out->data[out->len - 1] == '\n');
	CHECK(strlen(out->data) == out->len);
	CHECK(starts_with(out->data, "File fuzz.tile\n"));
	const char *p = out->data;
	size_t prev = 0;
	bool first = true;
	while (*p) {
		size_t ind = 0;
		while (p[ind] == ' ')
			ind++;
		CHECK(ind % 2 == 0);
		CHECK(first ? ind == 0 : ind >= 2 && ind <= prev + 2);
		CHECK(p[ind] != '\n' && p[ind] != '\0');
		const char *eol = strchr(p, '\n');
		CHECK(eol != NULL);
		for (const char *q = p; q < eol; q++) /* strings are escaped */
			CHECK((unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7F);
		prev = ind;
		first = false;
		p = eol + 1;
	}
}

typedef struct ParseResult {
	char *diag;   /* stripped diagnostics, or NULL */
	StrBuf ast;   /* tree dump, empty when no tree came back */
	int errors, warnings;
	bool tree;
} ParseResult;

CHECKER static ParseResult parse_and_check(const Source *src, const Lines *ln, bool color)
{
	ParseResult r = {0};
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	diag.color = color;
	Node *root = parse_source(src, &diag, &arena);
	check_diag(&diag, ln, color, &r.diag);
	r.errors = diag.errors;
	r.warnings = diag.warnings;
	if (root) {
		r.tree = true;
		CHECK(root->kind == N_FILE);
		size_t count = 0;
		check_node(ln, root, NULL, 0, &count);
		ast_dump(root, &r.ast);
		check_ast_dump(&r.ast);
	} else {
		CHECK(diag.errors > 0); /* no tree without saying why */
	}
	diag_free(&diag);
	arena_free(&arena);
	return r;
}

CHECKER static void result_free(ParseResult *r)
{
	free(r->diag);
	sb_free(&r->ast);
}

CHECKER int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64u << 20)
		return 0; /* spans are 32-bit; source_read_file caps files lower still */
	/* Exactly size + 1 bytes, so that ASan sees any read past the sentinel. */
	char *text = malloc(size + 1);
	CHECK(text != NULL);
	if (size)
		memcpy(text, data, size);
	text[size] = '\0';
	Source src = {.name = SOURCE_NAME, .text = text, .len = (uint32_t)size};
	Lines ln;
	lines_init(&ln, &src);
	bool color = size && (data[size - 1] & 1);

	size_t ntok;
	int lex_errors;
	TokInfo *toks = lex_all(&src, &ln, color, &ntok, &lex_errors);
	check_lexer_dump(&src, &ln, color, toks, ntok);
	free(toks);

	ParseResult r = parse_and_check(&src, &ln, color);
	/* what the lexer rejects, the parser reports too (unless it stopped
	 * earlier, which is an error as well) */
	if (lex_errors)
		CHECK(r.errors > 0);

	if (color) {
		ParseResult plain = parse_and_check(&src, &ln, false);
		CHECK(plain.errors == r.errors && plain.warnings == r.warnings && plain.tree == r.tree);
		CHECK((r.diag == NULL) == (plain.diag == NULL));
		CHECK(!r.diag || strcmp(r.diag, plain.diag) == 0);
		CHECK(r.ast.len == plain.ast.len);
		CHECK(!r.ast.len || memcmp(r.ast.data, plain.ast.data, r.ast.len) == 0);
		result_free(&plain);
	}
	result_free(&r);
	free(ln.nl);
	free(text);
	return 0;
}
