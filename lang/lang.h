/* lang.h: the front end of blk. Sources, spans, diagnostics, the arena,
 * tokens, the lexer, the syntax tree and the parser.
 *
 * Nothing here knows about LLVM or CUDA. Everything a compilation allocates
 * lives in one Arena and is freed with it. */
#ifndef BLK_LANG_H
#define BLK_LANG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- arena (arena.c) --------------------------------------------------- */

typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
	ArenaChunk *head;
	size_t used_total;
} Arena;

void *arena_alloc(Arena *a, size_t size);   /* zeroed, 16-byte aligned; NULL when out of memory */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_free(Arena *a);

/* A growable array of pointers, allocated in an arena. */
typedef struct PtrVec {
	void **items;
	int len, cap;
} PtrVec;
bool ptrvec_push(Arena *a, PtrVec *v, void *item);

/* A growable string buffer on the heap (for diagnostics and printers). */
typedef struct StrBuf {
	char *data;
	size_t len, cap;
	bool failed; /* out of memory; further appends are dropped */
} StrBuf;
void sb_putc(StrBuf *sb, char c);
void sb_puts(StrBuf *sb, const char *s);
void sb_putn(StrBuf *sb, const char *s, size_t n);
void sb_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap);
void sb_free(StrBuf *sb);

/* ---- sources and spans ------------------------------------------------- */

typedef struct Source {
	const char *name;  /* as given: path, or "<stdin>" */
	const char *text;  /* text[len] == '\0' always (the lexer's sentinel) */
	uint32_t len;
} Source;

/* A half-open byte range [begin, end) of one source, with the 1-based line
 * and column (in bytes) of its first byte. */
typedef struct Span {
	const Source *src;
	uint32_t begin, end;
	uint32_t line, col;
} Span;

Span span_join(Span a, Span b); /* from the start of a to the end of b */

/* ---- diagnostics (diag.c) ---------------------------------------------- */

enum { DIAG_MAX_ERRORS_DEFAULT = 20 };

typedef enum DiagLevel { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

/* Diagnostics are rendered into `out` (never printed by the library):
 *   file:line:col: error: message
 *    12 |     let x = y +;
 *       |                ^
 * The caller prints `out` where it wants. */
typedef struct Diag {
	StrBuf out;
	int errors, warnings;
	int max_errors;  /* 0: no cap */
	bool color;
	bool stopped;    /* the cap was reached; "too many errors" was reported */
} Diag;

void diag_init(Diag *d);
void diag_free(Diag *d);
void diag_report(Diag *d, DiagLevel level, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void diag_vreport(Diag *d, DiagLevel level, Span sp, const char *fmt, va_list ap);
/* A diagnostic with no source location ("blkc: error: ..."). */
void diag_plain(Diag *d, DiagLevel level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The nearest spelling of a misspelt word among candidates (for "did you
 * mean"): nearest_init, then nearest_consider for each candidate; best is
 * NULL when none is near enough (an edit per three letters, case alone for
 * names shorter than three). Names that do not start with a letter are
 * never suggested. */
typedef struct Nearest {
	const char *want, *best;
	int dist; /* of best, in half edits; a candidate must be nearer */
} Nearest;
void nearest_init(Nearest *n, const char *want);
void nearest_consider(Nearest *n, const char *candidate);
#define diag_error(d, sp, ...) diag_report((d), DIAG_ERROR, (sp), __VA_ARGS__)
#define diag_warning(d, sp, ...) diag_report((d), DIAG_WARNING, (sp), __VA_ARGS__)
#define diag_note(d, sp, ...) diag_report((d), DIAG_NOTE, (sp), __VA_ARGS__)

/* ---- tokens ------------------------------------------------------------ */

/* TOKEN(name, spelling): every token of the language. The parser declares
 * the same names; parse.c maps one onto the other. */
#define BLK_TOKENS(TOKEN) \
	TOKEN(EOF, "end of file") \
	TOKEN(IDENT, "identifier") \
	TOKEN(INT, "integer literal") \
	TOKEN(FLOAT, "float literal") \
	TOKEN(STRING, "string literal") \
	/* keywords */ \
	TOKEN(KW_IMPORT, "import") \
	TOKEN(KW_AS, "as") \
	TOKEN(KW_CONST, "const") \
	TOKEN(KW_FN, "fn") \
	TOKEN(KW_KERNEL, "kernel") \
	TOKEN(KW_GRID, "grid") \
	TOKEN(KW_LET, "let") \
	TOKEN(KW_VAR, "var") \
	TOKEN(KW_IF, "if") \
	TOKEN(KW_ELSE, "else") \
	TOKEN(KW_FOR, "for") \
	TOKEN(KW_IN, "in") \
	TOKEN(KW_WHILE, "while") \
	TOKEN(KW_BREAK, "break") \
	TOKEN(KW_CONTINUE, "continue") \
	TOKEN(KW_RETURN, "return") \
	TOKEN(KW_TRUE, "true") \
	TOKEN(KW_FALSE, "false") \
	TOKEN(KW_NONE, "None") \
	/* punctuation */ \
	TOKEN(LPAREN, "(") \
	TOKEN(RPAREN, ")") \
	TOKEN(LBRACKET, "[") \
	TOKEN(RBRACKET, "]") \
	TOKEN(LBRACE, "{") \
	TOKEN(RBRACE, "}") \
	TOKEN(COMMA, ",") \
	TOKEN(SEMI, ";") \
	TOKEN(COLON, ":") \
	TOKEN(DOT, ".") \
	TOKEN(ARROW, "->") \
	TOKEN(AT, "@") \
	TOKEN(QUESTION, "?") \
	/* operators */ \
	TOKEN(PLUS, "+") \
	TOKEN(MINUS, "-") \
	TOKEN(STAR, "*") \
	TOKEN(POW, "**") \
	TOKEN(SLASH, "/") \
	TOKEN(PERCENT, "%") \
	TOKEN(AMP, "&") \
	TOKEN(PIPE, "|") \
	TOKEN(CARET, "^") \
	TOKEN(TILDE, "~") \
	TOKEN(BANG, "!") \
	TOKEN(SHL, "<<") \
	TOKEN(SHR, ">>") \
	TOKEN(ANDAND, "&&") \
	TOKEN(OROR, "||") \
	TOKEN(EQ, "==") \
	TOKEN(NE, "!=") \
	TOKEN(LT, "<") \
	TOKEN(LE, "<=") \
	TOKEN(GT, ">") \
	TOKEN(GE, ">=") \
	TOKEN(ASSIGN, "=") \
	TOKEN(PLUS_ASSIGN, "+=") \
	TOKEN(MINUS_ASSIGN, "-=") \
	TOKEN(STAR_ASSIGN, "*=") \
	TOKEN(SLASH_ASSIGN, "/=") \
	TOKEN(PERCENT_ASSIGN, "%=") \
	TOKEN(AMP_ASSIGN, "&=") \
	TOKEN(PIPE_ASSIGN, "|=") \
	TOKEN(CARET_ASSIGN, "^=") \
	TOKEN(SHL_ASSIGN, "<<=") \
	TOKEN(SHR_ASSIGN, ">>=")

typedef enum TokenKind {
#define TOKEN_ENUM(name, spelling) T_##name,
	BLK_TOKENS(TOKEN_ENUM)
#undef TOKEN_ENUM
	T_COUNT
} TokenKind;

const char *token_kind_name(TokenKind k);     /* "IDENT", "KW_IF", "PLUS" ... */
const char *token_kind_spelling(TokenKind k); /* "identifier", "if", "+" ... */

typedef struct Token {
	TokenKind kind;
	Span span;
	/* T_INT: ival. T_FLOAT: fval. T_IDENT: str is the name.
	 * T_STRING: str is the decoded value (escapes resolved), len its length. */
	uint64_t ival;
	double fval;
	const char *str;
	size_t len;
} Token;

/* ---- lexer (lexer.re) -------------------------------------------------- */

enum { LEX_MAX_NESTING = 256 }; /* ( [ { open at once */

typedef struct Lexer {
	const Source *src;
	Diag *diag;
	Arena *arena;
	const char *cur;        /* next byte to read */
	const char *line_start; /* first byte of the current line */
	uint32_t line;
	int nesting;            /* brackets open now */
	bool too_deep;          /* nesting limit hit: the lexer returns T_EOF from then on */
} Lexer;

void lexer_init(Lexer *lx, const Source *src, Diag *diag, Arena *arena);
/* The next token. Invalid input is reported to lx->diag and skipped; the
 * lexer never fails otherwise. After T_EOF it keeps returning T_EOF. */
Token lexer_next(Lexer *lx);
/* Prints every token of src, one a line: "LINE:COL KIND 'text'". */
void lexer_dump(const Source *src, Diag *diag, Arena *arena, StrBuf *out);

/* ---- syntax tree (ast.c) ----------------------------------------------- */

typedef enum NodeKind {
	/* declarations */
	N_FILE,       /* list: items */
	N_IMPORT,     /* str: path; name: alias or NULL */
	N_CONST,      /* name; a: type or NULL; b: value */
	N_FN,         /* name; list: params; a: return type or NULL; b: body; attrs */
	N_KERNEL,     /* name; list: params; a: grid (N_TUPLE) or NULL; b: body; attrs */
	N_PARAM,      /* name; a: type or NULL; b: default value or NULL */
	N_ATTR,       /* name; list: args (N_NAMED_ARG or exprs); flag: has parentheses */
	N_CONFIG,     /* { NAME = expr, ... } in attribute arguments; list: N_NAMED_ARG */
	/* types */
	N_TYPE_NAME,  /* name */
	N_TYPE_PTR,   /* a: pointee */
	N_TYPE_CONST, /* a: type */
	/* statements */
	N_BLOCK,      /* list: statements */
	N_LET,        /* list: names (N_IDENT); a: type or NULL; b: value; flag: var */
	N_ASSIGN,     /* op: T_ASSIGN or a compound one; list: targets; b: value */
	N_EXPR_STMT,  /* a: expr */
	N_IF,         /* a: cond; b: then block; c: else (N_BLOCK or N_IF) or NULL */
	N_FOR,        /* name: induction variable; a: iterable (a call); b: body */
	N_WHILE,      /* a: cond; b: body */
	N_BREAK,
	N_CONTINUE,
	N_RETURN,     /* a: value (N_TUPLE for several) or NULL */
	/* expressions */
	N_IDENT,      /* name */
	N_INT,        /* ival */
	N_FLOAT,      /* fval */
	N_STRING,     /* str, len */
	N_BOOL,       /* ival: 0 or 1 */
	N_NONE,
	N_UNARY,      /* op: T_MINUS T_PLUS T_BANG T_TILDE; a */
	N_BINARY,     /* op; a, b */
	N_TERNARY,    /* a ? b : c */
	N_CALL,       /* a: callee; list: args */
	N_NAMED_ARG,  /* name = a */
	N_INDEX,      /* a: base; list: index items */
	N_SLICE,      /* a:b:c, each may be NULL */
	N_FIELD,      /* a.name */
	N_TUPLE,      /* list */
	N_LIST,       /* list */
	N_COUNT
} NodeKind;

typedef struct Node Node;
struct Node {
	NodeKind kind;
	int op;       /* TokenKind of the operator */
	bool flag;
	Span span;
	const char *name;
	const char *str;
	size_t len;
	uint64_t ival;
	double fval;
	Node *a, *b, *c;
	PtrVec list;  /* of Node * */
	PtrVec attrs; /* of N_ATTR */
	int depth;    /* height of the tree under this node, for the nesting limit */
};

const char *node_kind_name(NodeKind k);
/* One node a line, indented by depth: "Kind detail @LINE:COL". */
void ast_dump(const Node *n, StrBuf *out);

/* ---- parser (parser.y, parse.c) ---------------------------------------- */

enum { PARSE_MAX_DEPTH = 1000 }; /* tree height limit: recursion over the tree stays bounded */

/* Parses one source into an N_FILE node in `arena`. Errors go to `diag`;
 * the tree is returned even then (with the parts that parsed), or NULL
 * when nothing could be recovered. */
Node *parse_source(const Source *src, Diag *diag, Arena *arena);

/* ---- files ------------------------------------------------------------- */

/* Reads a whole file (or standard input for "-") into the arena, with a
 * terminating NUL. On failure reports to diag and returns false. */
bool source_read_file(Source *out, const char *path, Arena *arena, Diag *diag);
void source_from_string(Source *out, const char *name, const char *text, size_t len, Arena *arena);


/* ---- types (types.c) --------------------------------------------------- */

/* Element types. f8e4m3 is the NVIDIA "fn" variant (no infinities, NaN is
 * S.1111.111); f8e5m2 is IEEE-like. */
#define BLK_SCALARS(S) \
	S(I1, "i1", 1) S(I8, "i8", 8) S(I16, "i16", 16) S(I32, "i32", 32) S(I64, "i64", 64) \
	S(U8, "u8", 8) S(U16, "u16", 16) S(U32, "u32", 32) S(U64, "u64", 64) \
	S(F8E4M3, "f8e4m3", 8) S(F8E5M2, "f8e5m2", 8) S(F16, "f16", 16) S(BF16, "bf16", 16) \
	S(F32, "f32", 32) S(F64, "f64", 64)

typedef enum ScalarKind {
#define SCALAR_ENUM(name, spelling, bits) SK_##name,
	BLK_SCALARS(SCALAR_ENUM)
#undef SCALAR_ENUM
	SK_COUNT
} ScalarKind;

enum {
	BLK_MAX_RANK = 8,
	BLK_MAX_NUMEL = 1 << 20, /* elements in one block */
	BLK_MAX_PTR_DEPTH = 4,
};

/* A type is a value: an element type, a pointer depth over it, and a shape.
 *   f32            {SK_F32, ptr 0, rank 0}
 *   *f16           {SK_F16, ptr 1, rank 0}
 *   i32[128]       {SK_I32, ptr 0, rank 1, shape {128}}
 *   *f32[64, 64]   a 64x64 block of pointers to f32
 * Compare with type_eq; unused shape entries are 0. */
typedef struct Type {
	uint8_t scalar; /* ScalarKind of the element (of the pointee, for pointers) */
	uint8_t ptr;    /* pointer depth */
	uint8_t rank;   /* 0 for a scalar */
	int32_t shape[BLK_MAX_RANK];
} Type;

const char *scalar_name(ScalarKind k);
int scalar_bits(ScalarKind k);
bool scalar_from_name(const char *name, ScalarKind *out);
static inline bool scalar_is_float(ScalarKind k) { return k >= SK_F8E4M3 && k <= SK_F64; }
static inline bool scalar_is_int(ScalarKind k) { return k <= SK_U64; }
static inline bool scalar_is_signed(ScalarKind k) { return k >= SK_I1 && k <= SK_I64; }
static inline bool scalar_is_unsigned(ScalarKind k) { return k >= SK_U8 && k <= SK_U64; }

Type type_scalar(ScalarKind k);
Type type_block(Type elem, int rank, const int32_t *shape); /* elem's shape is replaced */
Type type_elem(Type t);     /* the same type with rank 0 */
Type type_pointee(Type t);  /* one pointer level less */
Type type_pointer_to(Type t);
bool type_eq(Type a, Type b);
bool type_is_ptr(Type t);
/* Whether t's elements are floats (fp8 included; a pointer is not). */
bool type_is_float(Type t);
/* Bytes of one element of type t in memory (pointers 8, i1 and the 8-bit
 * kinds 1). */
int type_bytes(Type t);
/* t as text ("f32[64]") in one of four buffers of the calling thread's,
 * each reused every fourth call: for a message made at once. */
const char *type_cstr(Type t);
int64_t type_numel(Type t); /* 1 for a scalar */
/* "f32", "*f16", "i32[128]", "*f32[64, 64]" */
void type_print(Type t, StrBuf *out);
const char *type_str(Type t, Arena *a);
/* The element count of a shape; false when it overflows an int64_t (or a
 * size is negative), *n then INT64_MAX so that no limit check passes it
 * (type_numel is this count: INT64_MAX for a shape that overflows). */
bool shape_numel(int rank, const int32_t *shape, int64_t *n);
/* The element count of a shape in decimal, exact even past int64_t. */
void shape_count_print(int rank, const int32_t *shape, StrBuf *out);

/* The element type two operands of an arithmetic operator are computed in
 * (docs/language.md, "Type promotion"). A literal operand (a_lit/b_lit)
 * of the same or a lower kind than the other side takes the other side's
 * type. Returns false with *why set when the pair is not allowed. */
bool promote_arith(ScalarKind a, bool a_lit, ScalarKind b, bool b_lit, bool div_or_mod,
                   ScalarKind *out, const char **why);
/* Broadcast shapes of a and b (rank aligned at the right; sizes equal or 1).
 * False when they do not match. */
bool broadcast_shapes(Type a, Type b, int *rank, int32_t shape[BLK_MAX_RANK]);


/* ---- modules and imports (module.c) ------------------------------------ */

/* A parsed file with its imports resolved. `import "p";` makes p's
 * declarations visible as if written here; `import "p" as m;` makes them
 * visible as m.name. Each file is loaded once per ModuleSet. */
typedef struct Module Module;
typedef struct ModuleImport {
	const char *alias; /* NULL: names are merged into the importer's scope */
	Module *module;
	Span span;
} ModuleImport;

struct Module {
	const Source *src;
	const char *path;     /* as resolved, for loading each file once */
	Node *file;           /* N_FILE */
	const char *stdlib_dir; /* the set's, for errors that name a standard library file */
	ModuleImport *imports;
	int n_imports;
	bool loading;         /* on the import stack (cycle detection) */
	int index;            /* in the ModuleSet's modules */
};

typedef struct ModuleSet {
	Arena *arena;
	Diag *diag;
	const char *const *include_dirs; /* -I, in order */
	int n_include_dirs;
	const char *stdlib_dir;          /* "std/x.tile" is looked up here as "x.tile", only here */
	/* false: an import must be a relative path leading to a file under the
	 * importing file's folder, a -I folder or the standard library (for
	 * untrusted source); true: absolute paths and any "..", as given */
	bool allow_any_import;
	PtrVec modules;                  /* every Module loaded */
} ModuleSet;

/* Loads and parses a file (path "-" is standard input) or a source already
 * read, and everything it imports. Reports errors to set->diag; returns
 * NULL when the main file could not be read or parsed at all. */
Module *module_load_file(ModuleSet *set, const char *path);
Module *module_load_source(ModuleSet *set, const Source *src);
/* The top-level declaration (N_FN, N_KERNEL or N_CONST) named `name` visible
 * in m: m's own, then those of imports without alias (depth first). Sets
 * *owner to the module that declares it. */
Node *module_lookup(Module *m, const char *name, Module **owner);
/* The module imported into m as `alias`, or NULL. */
Module *module_alias(Module *m, const char *alias);

#endif
