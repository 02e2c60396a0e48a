/* lexer.re: the blk lexer. re2c turns this file into build/gen/lexer.c.
 *
 * The source ends with a NUL sentinel (text[len]). re2c checks the bound
 * only when it reads a NUL, so NUL bytes inside the file are told from the
 * end at no cost. Token shapes are re2c rules; numbers, strings and comments
 * are finished by hand, where the errors need more care than a regular
 * expression gives. Nothing is ever read past text[len], and every byte is
 * looked at a bounded number of times. */
#include "lang.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
#define TOKEN_NAME(name, spelling) #name,
	BLK_TOKENS(TOKEN_NAME)
#undef TOKEN_NAME
};

static const char *const kind_spellings[] = {
#define TOKEN_SPELLING(name, spelling) spelling,
	BLK_TOKENS(TOKEN_SPELLING)
#undef TOKEN_SPELLING
};

const char *token_kind_name(TokenKind k)
{
	return k >= 0 && k < T_COUNT ? kind_names[k] : "?";
}

const char *token_kind_spelling(TokenKind k)
{
	return k >= 0 && k < T_COUNT ? kind_spellings[k] : "?";
}

/* ---- helpers ------------------------------------------------------------- */

#define U(p) ((unsigned char)*(p))

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_alnum(int c) { return is_alpha(c) || is_digit(c); }

static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static const char *limit(const Lexer *lx) { return lx->src->text + lx->src->len; }

/* The span [b, e); b lies on the current line. */
static Span span_at(const Lexer *lx, const char *b, const char *e)
{
	const char *text = lx->src->text;
	return (Span){
		.src = lx->src,
		.begin = (uint32_t)(b - text),
		.end = (uint32_t)(e - text),
		.line = lx->line,
		.col = (uint32_t)(b - lx->line_start) + 1,
	};
}

static Token make(const Lexer *lx, TokenKind k, const char *b, const char *e)
{
	return (Token){.kind = k, .span = span_at(lx, b, e)};
}

/* Gives up: the rest of the source is not lexed. */
static Token out_of_memory(Lexer *lx, const char *at)
{
	diag_error(lx->diag, span_at(lx, at, at), "out of memory");
	lx->cur = limit(lx);
	return make(lx, T_EOF, lx->cur, lx->cur);
}

/* Decodes the UTF-8 sequence at p (before lim) into *cp and returns its
 * length, or 0 when it is not valid UTF-8 (overlong, surrogate, cut short). */
static int utf8_decode(const char *p, const char *lim, uint32_t *cp)
{
	unsigned c = U(p);
	int n;
	uint32_t min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xE0) == 0xC0) {
		n = 2, min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		n = 3, min = 0x800;
	} else if ((c & 0xF8) == 0xF0) {
		n = 4, min = 0x10000;
	} else {
		return 0;
	}
	if (lim - p < n)
		return 0;
	uint32_t v = c & (0x7Fu >> n);
	for (int i = 1; i < n; i++) {
		if ((U(p + i) & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (U(p + i) & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

/* Reports the run of NUL bytes at p (before the end) and returns its end. */
static const char *skip_nuls(Lexer *lx, const char *p)
{
	const char *q = p, *lim = limit(lx);
	while (q < lim && *q == '\0')
		q++;
	diag_error(lx->diag, span_at(lx, p, q), "null character in source");
	return q;
}

/* One error for a run [b, e) of bytes that start no token, named after its
 * first character. */
static void invalid_run(Lexer *lx, const char *b, const char *e)
{
	Span sp = span_at(lx, b, e);
	uint32_t cp;
	int n = utf8_decode(b, e, &cp);
	if (n == 0)
		diag_error(lx->diag, sp, "invalid byte 0x%02X in source", U(b));
	else if (cp == '\'')
		diag_error(lx->diag, sp, "invalid character ''' in source (strings use \"...\")");
	else if (cp > 0x20 && cp < 0x7F)
		diag_error(lx->diag, sp, "invalid character '%c' in source", (int)cp);
	else if (cp == 0xFEFF)
		diag_error(lx->diag, sp, "invalid character U+FEFF in source (a byte order mark)");
	else
		diag_error(lx->diag, sp, "invalid character U+%04" PRIX32 " in source", cp);
}

/* ---- comments ------------------------------------------------------------ */

static void skip_line_comment(Lexer *lx, const char *p)
{
	const char *lim = limit(lx);
	while (p < lim && *p != '\n') {
		if (*p == '\0')
			p = skip_nuls(lx, p);
		else
			p++;
	}
	lx->cur = p;
}

/* p is just past the opening slash-star at open. Block comments do not nest. */
static void skip_block_comment(Lexer *lx, const char *open, const char *p)
{
	const char *lim = limit(lx);
	Span sp = span_at(lx, open, open + 2); /* before the line moves on */
	while (p < lim) {
		if (*p == '*' && p[1] == '/') { /* p[1] is at worst the sentinel */
			lx->cur = p + 2;
			return;
		}
		if (*p == '\n') {
			lx->line++;
			lx->line_start = ++p;
		} else if (*p == '\0') {
			p = skip_nuls(lx, p);
			if (lx->diag->stopped) {
				/* Stop here, not at the end: lx->line counts the lines up
				 * to p only, and the EOF token that follows must carry the
				 * line and column of where it is. */
				lx->cur = p;
				return;
			}
		} else {
			p++;
		}
	}
	diag_error(lx->diag, sp, "unterminated comment");
	lx->cur = lim;
}

/* ---- numbers ------------------------------------------------------------- */

/* The placement of '_' in one part of a number: between digits only. */
static const char *underscore_error(const char *b, const char *e)
{
	if (b == e)
		return NULL;
	if (*b == '_')
		return "'_' cannot begin the digits of a number";
	if (e[-1] == '_')
		return "'_' cannot end the digits of a number";
	for (const char *p = b; p + 1 < e; p++)
		if (p[0] == '_' && p[1] == '_')
			return "'_' cannot follow another '_' in a number";
	return NULL;
}

static bool has_digit(const char *b, const char *e)
{
	for (const char *p = b; p < e; p++)
		if (*p != '_')
			return true;
	return false;
}

/* Numbers are scanned by hand: the shapes overlap (1. 1.x 1..2 0x1.8p3 1e5
 * 1else) and each way to get one wrong deserves its own message.
 *
 *   decimal: D+ [ '.' D* ] [ e [+-] D+ ]  or  '.' D+ [ e [+-] D+ ]
 *   prefixed: 0x H+ [ '.' H* ] [ p [+-] D+ ],  0b D+,  0o D+  (or 0X 0B 0O)
 *
 * where D and H include '_'. A '.' belongs to the number unless a letter
 * or '_' follows it, so that `1.to(f16)` is INT DOT IDENT. Letters and
 * digits glued to the end are an invalid suffix. */
static Token lex_number(Lexer *lx, const char *start)
{
	const char *p = start;
	int base = 10;
	if (p[0] == '0') {
		char c = p[1] | 0x20; /* 0X 0B 0O too, as in Python */
		base = c == 'x' ? 16 : c == 'b' ? 2 : c == 'o' ? 8 : 10;
		if (base != 10)
			p += 2;
	}
	const char *ib = p; /* integer digits [ib, ie) */
	while (base == 16 ? hex_value(U(p)) >= 0 || *p == '_' : is_digit(U(p)) || *p == '_')
		p++;
	const char *ie = p;

	bool is_float = false;
	const char *fb = p, *fe = p; /* fraction digits */
	if (base == 10 && *p == '.' && !is_alpha(U(p + 1))) {
		is_float = true;
		fb = ++p;
		while (is_digit(U(p)) || *p == '_')
			p++;
		fe = p;
	} else if (base == 16 && *p == '.' &&
	           (hex_value(U(p + 1)) >= 0 ||
	            ((p[1] == 'p' || p[1] == 'P') && (is_digit(U(p + 2)) || p[2] == '+' || p[2] == '-')))) {
		is_float = true;
		fb = ++p;
		while (hex_value(U(p)) >= 0 || *p == '_')
			p++;
		fe = p;
	}

	/* An exponent: e (or p for hex) then a sign, a digit or '_', or then
	 * nothing that could be a suffix (`1e` alone wants digits; `1em` is 1
	 * with a suffix). */
	const char *xb = p, *xe = p;
	bool has_exp = false;
	char e = base == 16 ? 'p' : 'e', E = base == 16 ? 'P' : 'E';
	if ((base == 10 || base == 16) && (*p == e || *p == E)) {
		const char *q = p + 1;
		if (*q == '+' || *q == '-' || is_digit(U(q)) || *q == '_' || !is_alnum(U(q))) {
			if (*q == '+' || *q == '-')
				q++;
			has_exp = is_float = true;
			xb = q;
			while (is_digit(U(q)) || *q == '_')
				q++;
			xe = p = q;
		}
	}
	const char *num_end = p;
	while (is_alnum(U(p)))
		p++;
	lx->cur = p;

	Token t = make(lx, is_float ? T_FLOAT : T_INT, start, p);
	const char *what = is_float ? "float" : "integer";
	const char *base_name = base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary";
	Span sp = t.span;
	const char *msg;

	if (p > num_end) {
		int n = (int)(p - num_end);
		diag_error(lx->diag, sp, "invalid suffix '%.*s%s' on %s literal", n > 32 ? 32 : n, num_end,
		           n > 32 ? "..." : "", what);
		return t;
	}
	if (base == 2 || base == 8) {
		for (const char *q = ib; q < ie; q++) {
			if (*q != '_' && *q - '0' >= base) {
				diag_error(lx->diag, sp, "invalid digit '%c' in %s literal", *q, base_name);
				return t;
			}
		}
	}
	if (base != 10 && !has_digit(ib, ie) && !has_digit(fb, fe)) {
		diag_error(lx->diag, sp, "%s literal has no digits", base_name);
		return t;
	}
	if (has_exp && !has_digit(xb, xe)) {
		diag_error(lx->diag, sp, "exponent has no digits");
		return t;
	}
	if ((msg = underscore_error(ib, ie)) || (msg = underscore_error(fb, fe)) ||
	    (msg = underscore_error(xb, xe))) {
		diag_error(lx->diag, sp, "%s", msg);
		return t;
	}
	if (base == 16 && is_float && !has_exp) {
		diag_error(lx->diag, sp, "hexadecimal float literal needs an exponent ('p')");
		return t;
	}

	if (is_float) {
		/* strtod wants the text without '_'. It follows the C locale's
		 * decimal point; the compiler never calls setlocale. */
		char small[128], *buf = small;
		size_t need = (size_t)(num_end - start) + 1;
		if (need > sizeof small && !(buf = malloc(need)))
			return out_of_memory(lx, start);
		size_t n = 0;
		for (const char *q = start; q < num_end; q++)
			if (*q != '_')
				buf[n++] = *q;
		buf[n] = '\0';
		t.fval = strtod(buf, NULL);
		if (buf != small)
			free(buf);
		if (isinf(t.fval)) {
			diag_error(lx->diag, sp, "float literal is too large");
			t.fval = 0;
		}
		return t;
	}

	if (base == 10 && ie - ib > 1 && ib[0] == '0') {
		/* 017: C would read octal, Python rejects it; so do we, and say how
		 * to write either meaning. */
		char digits[40];
		size_t n = 0;
		bool octal = true, shown = true;
		const char *q = ib;
		while (q < ie && (*q == '0' || *q == '_'))
			q++;
		for (; q < ie; q++) {
			if (*q == '_')
				continue;
			if (n + 1 >= sizeof digits) {
				shown = false;
				break;
			}
			octal &= *q < '8';
			digits[n++] = *q;
		}
		if (n == 0)
			digits[n++] = '0';
		digits[n] = '\0';
		if (!shown)
			diag_error(lx->diag, sp, "leading zero in integer literal (write '0o...' for octal)");
		else if (octal)
			diag_error(lx->diag, sp, "leading zero in integer literal (write '0o%s' for octal, '%s' for decimal)",
			           digits, digits);
		else
			diag_error(lx->diag, sp, "leading zero in integer literal (write '%s')", digits);
		return t;
	}
	uint64_t v = 0;
	for (const char *q = ib; q < ie; q++) {
		if (*q == '_')
			continue;
		unsigned d = (unsigned)hex_value(U(q));
		if (v > (UINT64_MAX - d) / (unsigned)base) {
			diag_error(lx->diag, sp, "integer literal is too large");
			return t;
		}
		v = v * (unsigned)base + d;
	}
	t.ival = v;
	return t;
}

/* ---- strings ------------------------------------------------------------- */

static void bad_escape(Lexer *lx, const char *b, const char *e)
{
	Span sp = span_at(lx, b, e);
	uint32_t cp;
	int n = utf8_decode(b + 1, e, &cp);
	if (n == 1 && cp >= 0x20 && cp < 0x7F)
		diag_error(lx->diag, sp, "unknown escape sequence '\\%c'", (int)cp);
	else if (n > 0)
		diag_error(lx->diag, sp, "unknown escape sequence: '\\' followed by U+%04" PRIX32, cp);
	else
		diag_error(lx->diag, sp, "unknown escape sequence: '\\' followed by byte 0x%02X", U(b + 1));
}

/* open is the opening '"'. Strings end at the line's end; the value is
 * decoded into the arena and may hold NULs. */
static Token lex_string(Lexer *lx, const char *open)
{
	const char *lim = limit(lx), *p = open + 1;
	/* Find the end first: it sizes the value, and an unterminated string
	 * gets one error, not one for each escape in the rest of the line. */
	while (p < lim && *p != '"' && *p != '\n') {
		if (*p == '\\' && p + 1 < lim && p[1] != '\n')
			p++;
		p++;
	}
	const char *body_end = p;
	bool closed = p < lim && *p == '"';
	lx->cur = closed ? p + 1 : p;
	Token t = make(lx, T_STRING, open, lx->cur);
	if (!closed)
		diag_error(lx->diag, span_at(lx, open, open + 1), "missing terminating '\"' character");

	char *buf = arena_alloc(lx->arena, (size_t)(body_end - open));
	if (!buf)
		return out_of_memory(lx, open);
	size_t n = 0;
	for (const char *q = open + 1; q < body_end;) {
		if (*q == '\0') {
			q = skip_nuls(lx, q);
			continue;
		}
		if (*q != '\\') {
			buf[n++] = *q++;
			continue;
		}
		if (q + 1 >= body_end) /* a '\' before the end of the line */
			break;
		const char *e = q + 2;
		switch (q[1]) {
		case 'n': buf[n++] = '\n'; break;
		case 't': buf[n++] = '\t'; break;
		case 'r': buf[n++] = '\r'; break;
		case '0': buf[n++] = '\0'; break;
		case '\\': buf[n++] = '\\'; break;
		case '"': buf[n++] = '"'; break;
		case '\'': buf[n++] = '\''; break;
		case 'x': {
			/* body_end holds '"', '\n' or the sentinel: no hex digit, so
			 * these reads stop there. */
			int hi = hex_value(U(q + 2)), lo = hi < 0 ? -1 : hex_value(U(q + 3));
			if (lo >= 0) {
				buf[n++] = (char)(hi * 16 + lo);
				e = q + 4;
			} else {
				e = q + (hi < 0 ? 2 : 3);
				if (closed)
					diag_error(lx->diag, span_at(lx, q, e), "'\\x' must be followed by two hex digits");
			}
			break;
		}
		case '\0':
			e = skip_nuls(lx, q + 1);
			break;
		default: {
			uint32_t cp;
			int len = utf8_decode(q + 1, body_end, &cp);
			e = q + 1 + (len > 0 ? len : 1);
			if (closed)
				bad_escape(lx, q, e);
			break;
		}
		}
		q = e;
	}
	t.str = buf;
	t.len = n;
	return t;
}

/* ---- tokens -------------------------------------------------------------- */

void lexer_init(Lexer *lx, const Source *src, Diag *diag, Arena *arena)
{
	*lx = (Lexer){
		.src = src,
		.diag = diag,
		.arena = arena,
		.cur = src->text,
		.line_start = src->text,
		.line = 1,
	};
}

/* Counts an opening bracket; false when that one is too many. */
static bool open_bracket(Lexer *lx, const char *at)
{
	if (lx->nesting >= LEX_MAX_NESTING) {
		diag_error(lx->diag, span_at(lx, at, at + 1), "nesting too deep (more than %d open brackets)",
		           LEX_MAX_NESTING);
		lx->too_deep = true;
		return false;
	}
	lx->nesting++;
	return true;
}

static void close_bracket(Lexer *lx)
{
	if (lx->nesting > 0)
		lx->nesting--;
}

/*!re2c
	re2c:define:YYCTYPE = "unsigned char";
	re2c:define:YYCURSOR = cur;
	re2c:define:YYLIMIT = lim;
	re2c:yyfill:enable = 0;
	re2c:eof = 0;

	// Bytes that start no token: control characters other than the
	// whitespace, $ # ` ' \ DEL, and everything outside ASCII (a valid
	// UTF-8 sequence is taken whole).
	u8   = [\xC2-\xDF][\x80-\xBF]
	     | "\xE0"[\xA0-\xBF][\x80-\xBF] | [\xE1-\xEC\xEE\xEF][\x80-\xBF]{2}
	     | "\xED"[\x80-\x9F][\x80-\xBF]
	     | "\xF0"[\x90-\xBF][\x80-\xBF]{2} | [\xF1-\xF3][\x80-\xBF]{3}
	     | "\xF4"[\x80-\x8F][\x80-\xBF]{2};
	bad  = [\x01-\x08\x0E-\x1F$#`'\\\x7F] | u8 | [\x80-\xFF];
	ident = [A-Za-z_][A-Za-z0-9_]*;
*/

Token lexer_next(Lexer *lx)
{
	const char *lim = limit(lx);
	for (;;) {
		if (lx->diag->stopped || lx->too_deep)
			return make(lx, T_EOF, lx->cur, lx->cur);
		const char *start = lx->cur, *cur = start;
		TokenKind k = T_EOF;
		/*!re2c
		$ { return make(lx, T_EOF, lim, lim); }

		[ \t\r\v\f]+ { lx->cur = cur; continue; }
		"\n" { lx->cur = lx->line_start = cur; lx->line++; continue; }
		"//" { skip_line_comment(lx, cur); continue; }
		"/*" { skip_block_comment(lx, start, cur); continue; }
		"\x00" { lx->cur = skip_nuls(lx, start); continue; }
		bad+ { lx->cur = cur; invalid_run(lx, start, cur); continue; }
		* { lx->cur = cur; invalid_run(lx, start, cur); continue; }

		"import"   { k = T_KW_IMPORT; goto done; }
		"as"       { k = T_KW_AS; goto done; }
		"const"    { k = T_KW_CONST; goto done; }
		"fn"       { k = T_KW_FN; goto done; }
		"kernel"   { k = T_KW_KERNEL; goto done; }
		"grid"     { k = T_KW_GRID; goto done; }
		"let"      { k = T_KW_LET; goto done; }
		"var"      { k = T_KW_VAR; goto done; }
		"if"       { k = T_KW_IF; goto done; }
		"else"     { k = T_KW_ELSE; goto done; }
		"for"      { k = T_KW_FOR; goto done; }
		"in"       { k = T_KW_IN; goto done; }
		"while"    { k = T_KW_WHILE; goto done; }
		"break"    { k = T_KW_BREAK; goto done; }
		"continue" { k = T_KW_CONTINUE; goto done; }
		"return"   { k = T_KW_RETURN; goto done; }
		"true"     { k = T_KW_TRUE; goto done; }
		"false"    { k = T_KW_FALSE; goto done; }
		"None"     { k = T_KW_NONE; goto done; }

		ident {
			lx->cur = cur;
			Token t = make(lx, T_IDENT, start, cur);
			t.len = (size_t)(cur - start);
			if (!(t.str = arena_strndup(lx->arena, start, t.len)))
				return out_of_memory(lx, start);
			return t;
		}
		[0-9] | "." [0-9] { return lex_number(lx, start); }
		["] { return lex_string(lx, start); }

		"(" { if (!open_bracket(lx, start)) continue; k = T_LPAREN; goto done; }
		"[" { if (!open_bracket(lx, start)) continue; k = T_LBRACKET; goto done; }
		"{" { if (!open_bracket(lx, start)) continue; k = T_LBRACE; goto done; }
		")" { close_bracket(lx); k = T_RPAREN; goto done; }
		"]" { close_bracket(lx); k = T_RBRACKET; goto done; }
		"}" { close_bracket(lx); k = T_RBRACE; goto done; }

		","   { k = T_COMMA; goto done; }
		";"   { k = T_SEMI; goto done; }
		":"   { k = T_COLON; goto done; }
		"."   { k = T_DOT; goto done; }
		"->"  { k = T_ARROW; goto done; }
		"@"   { k = T_AT; goto done; }
		"?"   { k = T_QUESTION; goto done; }
		"+"   { k = T_PLUS; goto done; }
		"-"   { k = T_MINUS; goto done; }
		"**"  { k = T_POW; goto done; }
		"*"   { k = T_STAR; goto done; }
		"/"   { k = T_SLASH; goto done; }
		"%"   { k = T_PERCENT; goto done; }
		"&"   { k = T_AMP; goto done; }
		"|"   { k = T_PIPE; goto done; }
		"^"   { k = T_CARET; goto done; }
		"~"   { k = T_TILDE; goto done; }
		"!"   { k = T_BANG; goto done; }
		"<<"  { k = T_SHL; goto done; }
		">>"  { k = T_SHR; goto done; }
		"&&"  { k = T_ANDAND; goto done; }
		"||"  { k = T_OROR; goto done; }
		"=="  { k = T_EQ; goto done; }
		"!="  { k = T_NE; goto done; }
		"<"   { k = T_LT; goto done; }
		"<="  { k = T_LE; goto done; }
		">"   { k = T_GT; goto done; }
		">="  { k = T_GE; goto done; }
		"="   { k = T_ASSIGN; goto done; }
		"+="  { k = T_PLUS_ASSIGN; goto done; }
		"-="  { k = T_MINUS_ASSIGN; goto done; }
		"*="  { k = T_STAR_ASSIGN; goto done; }
		"/="  { k = T_SLASH_ASSIGN; goto done; }
		"%="  { k = T_PERCENT_ASSIGN; goto done; }
		"&="  { k = T_AMP_ASSIGN; goto done; }
		"|="  { k = T_PIPE_ASSIGN; goto done; }
		"^="  { k = T_CARET_ASSIGN; goto done; }
		"<<=" { k = T_SHL_ASSIGN; goto done; }
		">>=" { k = T_SHR_ASSIGN; goto done; }
		*/
done:
		lx->cur = cur;
		return make(lx, k, start, cur);
	}
}

/* ---- dump ---------------------------------------------------------------- */

/* Bytes as they are, but anything unprintable as \xHH. */
static void put_text(StrBuf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x7F)
			sb_printf(out, "\\x%02X", c);
		else
			sb_putc(out, (char)c);
	}
}

/* A string value in blk's own escapes. */
static void put_quoted(StrBuf *out, const char *s, size_t n)
{
	sb_putc(out, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '\n': sb_puts(out, "\\n"); break;
		case '\t': sb_puts(out, "\\t"); break;
		case '\r': sb_puts(out, "\\r"); break;
		case '\0': sb_puts(out, "\\0"); break;
		case '"': sb_puts(out, "\\\""); break;
		case '\\': sb_puts(out, "\\\\"); break;
		default: put_text(out, s + i, 1); break;
		}
	}
	sb_putc(out, '"');
}

void lexer_dump(const Source *src, Diag *diag, Arena *arena, StrBuf *out)
{
	Lexer lx;
	lexer_init(&lx, src, diag, arena);
	for (;;) {
		Token t = lexer_next(&lx);
		sb_printf(out, "%" PRIu32 ":%" PRIu32 " %s", t.span.line, t.span.col, token_kind_name(t.kind));
		if (t.kind == T_EOF) {
			sb_putc(out, '\n');
			return;
		}
		sb_putc(out, ' ');
		if (t.kind == T_STRING)
			put_quoted(out, t.str, t.len);
		else
			put_text(out, src->text + t.span.begin, t.span.end - t.span.begin);
		if (t.kind == T_INT)
			sb_printf(out, " = %" PRIu64, t.ival);
		else if (t.kind == T_FLOAT)
			sb_printf(out, " = %.17g", t.fval);
		sb_putc(out, '\n');
	}
}
