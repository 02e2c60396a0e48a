/* parse.c: the bridge between lexer and parser, tree construction, and the
 * structural checks that need the whole tree (redefinitions, assignment
 * targets, break outside loops, argument order). */
#include "lang.h"
#include "parser.h"

#include <stdlib.h>
#include <string.h>

static const int bison_token[T_COUNT] = {
#define TOKEN_MAP(name, spelling) [T_##name] = TK_##name,
	BLK_TOKENS(TOKEN_MAP)
#undef TOKEN_MAP
};

int yylex(YYSTYPE *lval, Span *lloc, ParseCtx *ctx)
{
	int errors = ctx->diag->errors;
	Token t = lexer_next(&ctx->lx);
	if (ctx->diag->errors != errors)
		ctx->lex_error_at = t.span.begin + 1;
	ctx->prev = ctx->last;
	ctx->last = t;
	/* Open brackets, so that a syntax error can point at the unclosed one.
	 * The lexer caps nesting at LEX_MAX_NESTING; this stack holds that many. */
	if (t.kind == T_LPAREN || t.kind == T_LBRACKET || t.kind == T_LBRACE) {
		if (ctx->n_open <= LEX_MAX_NESTING)
			ctx->open[ctx->n_open++] = t.span;
	} else if ((t.kind == T_RPAREN || t.kind == T_RBRACKET || t.kind == T_RBRACE) && ctx->n_open > 0) {
		ctx->n_open--;
	}
	*lloc = t.span;
	lval->tok = t;
	return bison_token[t.kind];
}

/* A type written with a namespace (tl.constexpr, tl.float16): blk's types
 * have none; say how blk writes it. */
void dotted_type(ParseCtx *ctx, Span sp, const Token *ns, const Token *name)
{
	static const char *const triton[][2] = {
		{"float32", "f32"}, {"float16", "f16"}, {"bfloat16", "bf16"}, {"float64", "f64"}, {"int1", "i1"},
		{"int8", "i8"},     {"int16", "i16"},   {"int32", "i32"},     {"int64", "i64"},   {"uint8", "u8"},
		{"uint16", "u16"},  {"uint32", "u32"},  {"uint64", "u64"},
	};
	if (strcmp(name->str, "constexpr") == 0) {
		diag_error(ctx->diag, sp, "'%s.constexpr' is not a blk type: a compile-time parameter is written "
		           "'NAME: const i32' (or 'const type' for a type)", ns->str);
		return;
	}
	for (size_t i = 0; i < sizeof triton / sizeof triton[0]; i++)
		if (strcmp(name->str, triton[i][0]) == 0) {
			diag_error(ctx->diag, sp, "'%s.%s' is not a blk type: write '%s'", ns->str, name->str, triton[i][1]);
			return;
		}
	diag_error(ctx->diag, sp, "'%s.%s' is not a blk type: types have no namespace (write '%s')", ns->str, name->str,
	           name->str);
}

void yyerror(Span *lloc, ParseCtx *ctx, const char *msg)
{
	/* Bison calls this only when its own stack is exhausted. */
	if (strcmp(msg, "memory exhausted") == 0)
		diag_error(ctx->diag, *lloc, "input is nested too deeply for the parser");
	else
		diag_error(ctx->diag, *lloc, "%s", msg);
}

/* The empty span at the end of sp, with its own line and column.
 *
 * sp ends where a token ends, and that token is one the parser has just
 * read: the last one, or the one before it when a lookahead is pending.
 * A token lies on one line, so its line and column give those of its end at
 * once. (Scanning sp for newlines made each empty rule after a long list or
 * block, an absent trailing comma or else, cost the length of that list:
 * the size of the input times the nesting depth in all, seconds for a few
 * megabytes.) The scan stays for a symbol that ends further back, which
 * only error recovery leaves on the stack. */
Span span_end_point(const ParseCtx *ctx, Span sp)
{
	if (!sp.src)
		return sp;
	const Token *recent[2] = {&ctx->last, &ctx->prev};
	for (int i = 0; i < 2; i++) {
		Span t = recent[i]->span;
		if (t.src == sp.src && t.end == sp.end) {
			t.col += t.end - t.begin;
			t.begin = t.end;
			return t;
		}
	}
	const char *text = sp.src->text;
	uint32_t line_start = sp.begin - (sp.col - 1);
	for (const char *p = text + sp.begin, *e = text + sp.end; (p = memchr(p, '\n', (size_t)(e - p))); p++) {
		sp.line++;
		line_start = (uint32_t)(p - text) + 1;
	}
	sp.col = sp.end - line_start + 1;
	sp.begin = sp.end;
	return sp;
}

static bool out_of_memory(ParseCtx *ctx)
{
	if (!ctx->out_of_memory)
		diag_plain(ctx->diag, DIAG_ERROR, "out of memory while parsing '%s'", ctx->src->name);
	ctx->out_of_memory = true;
	return false;
}

static int height(const Node *n) { return n ? n->depth : 0; }

static bool depth_ok(ParseCtx *ctx, Node *n)
{
	if (n->depth <= PARSE_MAX_DEPTH)
		return true;
	if (!ctx->too_deep)
		diag_error(ctx->diag, n->span, "nested too deeply (more than %d levels)", PARSE_MAX_DEPTH);
	ctx->too_deep = true;
	return false;
}

bool seal(ParseCtx *ctx, Node *n)
{
	int d = height(n->a);
	if (height(n->b) > d)
		d = height(n->b);
	if (height(n->c) > d)
		d = height(n->c);
	for (int i = 0; i < n->list.len; i++)
		if (height(n->list.items[i]) > d)
			d = height(n->list.items[i]);
	n->depth = d + 1;
	return depth_ok(ctx, n);
}

Node *mk(ParseCtx *ctx, NodeKind kind, Span sp)
{
	Node *n = arena_alloc(ctx->arena, sizeof *n);
	if (!n) {
		out_of_memory(ctx);
		return NULL;
	}
	n->kind = kind;
	n->span = sp;
	n->depth = 1;
	return n;
}

Node *mk_op(ParseCtx *ctx, NodeKind kind, Span sp, int op, Node *a, Node *b)
{
	Node *n = mk(ctx, kind, sp);
	if (!n)
		return NULL;
	n->op = op;
	n->a = a;
	n->b = b;
	return seal(ctx, n) ? n : NULL;
}

Node *mk1(ParseCtx *ctx, NodeKind kind, Span sp, Node *a) { return mk_op(ctx, kind, sp, 0, a, NULL); }
Node *mk2(ParseCtx *ctx, NodeKind kind, Span sp, Node *a, Node *b) { return mk_op(ctx, kind, sp, 0, a, b); }

Node *mk_name(ParseCtx *ctx, NodeKind kind, Span sp, const Token *name)
{
	Node *n = mk(ctx, kind, sp);
	if (n)
		n->name = name->str;
	return n;
}

Node *mk_token_leaf(ParseCtx *ctx, const Token *tok)
{
	NodeKind kind = tok->kind == T_INT ? N_INT : tok->kind == T_FLOAT ? N_FLOAT : N_STRING;
	Node *n = mk(ctx, kind, tok->span);
	if (n) {
		n->ival = tok->ival;
		n->fval = tok->fval;
		n->str = tok->str;
		n->len = tok->len;
	}
	return n;
}

bool list_push(ParseCtx *ctx, PtrVec *v, Node *item)
{
	return ptrvec_push(ctx->arena, v, item) || out_of_memory(ctx);
}

/* Appends item to n's list and counts its height. Only the new item can
 * raise n's height: resealing the whole list on every add made a tuple of
 * k elements cost k^2 (a 3 MB tuple literal took minutes). */
bool add(ParseCtx *ctx, Node *n, Node *item)
{
	if (!list_push(ctx, &n->list, item))
		return false;
	if (height(item) + 1 > n->depth)
		n->depth = height(item) + 1;
	return depth_ok(ctx, n);
}

bool add_attrs(ParseCtx *ctx, Node *decl, PtrVec attrs)
{
	decl->attrs = attrs;
	if (attrs.len) /* the declaration starts at its first attribute */
		decl->span = span_join(((Node *)attrs.items[0])->span, decl->span);
	(void)ctx;
	return true;
}

/* ---- structural checks ---------------------------------------------------- */

typedef struct Checker {
	Diag *diag;
	int loop_depth;
	bool in_kernel;
	bool in_attr;
} Checker;

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Reports each node of `nodes` (of kind `only`, or any kind when only < 0)
 * whose name an earlier one already has, pointing at both. */
static void check_unique(Checker *ck, PtrVec nodes, int only, const char *message, const char *what)
{
	if (nodes.len < 2)
		return;
	uint32_t cap = 16;
	while (cap < 2u * (uint32_t)nodes.len)
		cap *= 2;
	const Node **table = calloc(cap, sizeof *table);
	if (!table)
		return; /* a check skipped, not a wrong answer */
	for (int i = 0; i < nodes.len; i++) {
		const Node *n = nodes.items[i];
		if (!n->name || (only >= 0 && n->kind != (NodeKind)only))
			continue;
		uint32_t h = hash_name(n->name) & (cap - 1);
		while (table[h] && strcmp(table[h]->name, n->name) != 0)
			h = (h + 1) & (cap - 1);
		if (!table[h]) {
			table[h] = n;
			continue;
		}
		diag_error(ck->diag, n->span, message, n->name);
		diag_note(ck->diag, table[h]->span, "previous %s of '%s' is here", what, n->name);
	}
	free(table);
}

static void check(Checker *ck, const Node *n);

static void check_list(Checker *ck, PtrVec v)
{
	for (int i = 0; i < v.len; i++)
		check(ck, v.items[i]);
}

static void check_call_args(Checker *ck, const Node *call)
{
	const Node *first_named = NULL;
	for (int i = 0; i < call->list.len; i++) {
		const Node *arg = call->list.items[i];
		if (arg->kind == N_NAMED_ARG) {
			if (!first_named)
				first_named = arg;
		} else if (first_named) {
			diag_error(ck->diag, arg->span, "positional argument after a named argument");
			diag_note(ck->diag, first_named->span, "first named argument is here");
			break;
		}
	}
	check_unique(ck, call->list, N_NAMED_ARG, "argument '%s' is given more than once", "use");
}

static bool is_name(const Node *n) { return n->kind == N_IDENT; }

static void check_assign(Checker *ck, const Node *n)
{
	for (int i = 0; i < n->list.len; i++) {
		const Node *t = n->list.items[i];
		if (is_name(t))
			continue;
		if (t->kind == N_INDEX)
			diag_error(ck->diag, t->span,
			           "cannot assign to an element of a block: blocks are values (build a new one with where())");
		else
			diag_error(ck->diag, t->span, "cannot assign to this expression: the target must be a variable");
	}
	if (n->op != T_ASSIGN && n->list.len > 1)
		diag_error(ck->diag, n->span, "compound assignment '%s' takes a single target",
		           token_kind_spelling((TokenKind)n->op));
}

/* A call, or a ternary one of whose arms has an effect (c ? store(...) : ...). */
static bool has_effect(const Node *e)
{
	return e->kind == N_CALL || (e->kind == N_TERNARY && (has_effect(e->b) || has_effect(e->c)));
}

static void check(Checker *ck, const Node *n)
{
	if (!n)
		return;
	switch (n->kind) {
	case N_FILE:
		check_unique(ck, n->list, -1, "redefinition of '%s'", "definition");
		check_list(ck, n->list);
		break;
	case N_KERNEL:
	case N_FN: {
		bool was = ck->in_kernel;
		ck->in_kernel = n->kind == N_KERNEL;
		check_unique(ck, n->list, -1, "duplicate parameter '%s'", "declaration");
		for (int i = 0; i < n->list.len; i++) {
			const Node *p = n->list.items[i];
			if (n->kind == N_KERNEL && !p->a)
				diag_error(ck->diag, p->span, "kernel parameter '%s' needs a type (e.g. '%s: *f32')",
				           p->name, p->name);
		}
		for (int i = 0; n->kind == N_FN && i < n->attrs.len; i++) {
			const Node *at = n->attrs.items[i];
			diag_error(ck->diag, at->span, "unknown attribute '@%s': a fn takes no attributes (a kernel takes @autotune)",
			           at->name);
		}
		ck->in_attr = true;
		check_list(ck, n->attrs);
		ck->in_attr = false;
		check_list(ck, n->list);
		check(ck, n->a);
		check(ck, n->b);
		ck->in_kernel = was;
		break;
	}
	case N_LET:
		check_unique(ck, n->list, -1, "'%s' is bound twice in one declaration", "binding");
		check(ck, n->a);
		check(ck, n->b);
		break;
	case N_ASSIGN:
		check_assign(ck, n);
		check_list(ck, n->list);
		check(ck, n->b);
		break;
	case N_EXPR_STMT:
		if (!has_effect(n->a))
			diag_warning(ck->diag, n->a->span, "expression result unused");
		check(ck, n->a);
		break;
	case N_FOR:
	case N_WHILE:
		check(ck, n->a);
		ck->loop_depth++;
		check(ck, n->b);
		ck->loop_depth--;
		break;
	case N_BREAK:
	case N_CONTINUE:
		if (ck->loop_depth == 0)
			diag_error(ck->diag, n->span, "'%s' outside a loop", n->kind == N_BREAK ? "break" : "continue");
		break;
	case N_RETURN:
		if (ck->in_kernel && n->a)
			diag_error(ck->diag, n->a->span, "a kernel cannot return a value; store results through a pointer");
		check(ck, n->a);
		break;
	case N_CALL:
		check_call_args(ck, n);
		check(ck, n->a);
		check_list(ck, n->list);
		break;
	case N_CONFIG:
		if (!ck->in_attr)
			diag_error(ck->diag, n->span, "a configuration '{...}' is only allowed in an attribute");
		check_unique(ck, n->list, -1, "'%s' is set twice in one configuration", "setting");
		check_list(ck, n->list);
		break;
	case N_ATTR:
		check_unique(ck, n->list, N_NAMED_ARG, "attribute argument '%s' is given more than once", "use");
		check_list(ck, n->list);
		break;
	default:
		check(ck, n->a);
		check(ck, n->b);
		check(ck, n->c);
		check_list(ck, n->list);
		break;
	}
}

Node *parse_source(const Source *src, Diag *diag, Arena *arena)
{
	ParseCtx ctx = {.diag = diag, .arena = arena, .src = src};
	lexer_init(&ctx.lx, src, diag, arena);
	int rc = yyparse(&ctx);
	if (rc != 0 && !ctx.root)
		return NULL;
	/* The file is all of the source. (The rule's own location would start at
	 * the parser's initial stack entry, which has no source.) */
	if (ctx.root)
		ctx.root->span = (Span){.src = src, .begin = 0, .end = src->len, .line = 1, .col = 1};
	if (ctx.root && !ctx.too_deep && !ctx.out_of_memory) {
		Checker ck = {.diag = diag};
		check(&ck, ctx.root);
	}
	return ctx.root;
}
