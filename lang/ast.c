/* ast.c: names of node kinds and the tree printer behind --emit=ast. */
#include "lang.h"

#include <stdio.h>
#include <string.h>

static const char *const kind_names[N_COUNT] = {
	[N_FILE] = "File", [N_IMPORT] = "Import", [N_CONST] = "Const", [N_FN] = "Fn",
	[N_KERNEL] = "Kernel", [N_PARAM] = "Param", [N_ATTR] = "Attr", [N_CONFIG] = "Config",
	[N_TYPE_NAME] = "TypeName", [N_TYPE_PTR] = "TypePtr", [N_TYPE_CONST] = "TypeConst",
	[N_BLOCK] = "Block", [N_LET] = "Let", [N_ASSIGN] = "Assign", [N_EXPR_STMT] = "ExprStmt",
	[N_IF] = "If", [N_FOR] = "For", [N_WHILE] = "While", [N_BREAK] = "Break",
	[N_CONTINUE] = "Continue", [N_RETURN] = "Return", [N_IDENT] = "Ident", [N_INT] = "Int",
	[N_FLOAT] = "Float", [N_STRING] = "String", [N_BOOL] = "Bool", [N_NONE] = "None",
	[N_UNARY] = "Unary", [N_BINARY] = "Binary", [N_TERNARY] = "Ternary", [N_CALL] = "Call",
	[N_NAMED_ARG] = "NamedArg", [N_INDEX] = "Index", [N_SLICE] = "Slice", [N_FIELD] = "Field",
	[N_TUPLE] = "Tuple", [N_LIST] = "List",
};

const char *node_kind_name(NodeKind k)
{
	return k < N_COUNT && kind_names[k] ? kind_names[k] : "?";
}

/* Labels for the a, b, c children where their role is not obvious. */
typedef struct Roles {
	const char *a, *b, *c;
} Roles;

static Roles roles(NodeKind k)
{
	switch (k) {
	case N_CONST: return (Roles){"type", "value", NULL};
	case N_FN: return (Roles){"returns", "body", NULL};
	case N_KERNEL: return (Roles){"grid", "body", NULL};
	case N_PARAM: return (Roles){"type", "default", NULL};
	case N_LET: return (Roles){"type", "value", NULL};
	case N_ASSIGN: return (Roles){NULL, "value", NULL};
	case N_IF: return (Roles){"cond", "then", "else"};
	case N_FOR: return (Roles){"range", "body", NULL};
	case N_WHILE: return (Roles){"cond", "body", NULL};
	case N_SLICE: return (Roles){"start", "stop", "step"};
	case N_TERNARY: return (Roles){"cond", "then", "else"};
	default: return (Roles){NULL, NULL, NULL};
	}
}

static void put_quoted(StrBuf *out, const char *s, size_t len)
{
	sb_putc(out, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '\n': sb_puts(out, "\\n"); break;
		case '\t': sb_puts(out, "\\t"); break;
		case '\r': sb_puts(out, "\\r"); break;
		case '"': sb_puts(out, "\\\""); break;
		case '\\': sb_puts(out, "\\\\"); break;
		default:
			if (c < 0x20 || c >= 0x7F)
				sb_printf(out, "\\x%02X", c);
			else
				sb_putc(out, (char)c);
		}
	}
	sb_putc(out, '"');
}

static void dump(const Node *n, int indent, const char *role, StrBuf *out);

static void dump_list(PtrVec v, int indent, const char *role, StrBuf *out)
{
	for (int i = 0; i < v.len; i++)
		dump(v.items[i], indent, role, out);
}

static void dump(const Node *n, int indent, const char *role, StrBuf *out)
{
	/* two spaces a level, written in runs: one call a level made a deep
	 * tree's dump slow (a tree is up to PARSE_MAX_DEPTH levels high) */
	static const char spaces[] = "                                                                ";
	for (size_t left = (size_t)indent * 2; left > 0;) {
		size_t k = left < sizeof spaces - 1 ? left : sizeof spaces - 1;
		sb_putn(out, spaces, k);
		left -= k;
	}
	if (role)
		sb_printf(out, "%s: ", role);
	if (!n) {
		sb_puts(out, "(null)\n");
		return;
	}
	sb_puts(out, n->kind == N_LET && n->flag ? "Var" : node_kind_name(n->kind));
	switch (n->kind) {
	case N_FILE:
		sb_printf(out, " %s", n->span.src ? n->span.src->name : "?");
		break;
	case N_IMPORT:
		sb_putc(out, ' ');
		put_quoted(out, n->str, n->len);
		if (n->name)
			sb_printf(out, " as %s", n->name);
		break;
	case N_STRING:
		sb_putc(out, ' ');
		put_quoted(out, n->str, n->len);
		break;
	case N_INT:
		sb_printf(out, " %llu", (unsigned long long)n->ival);
		break;
	case N_FLOAT: {
		char num[40];
		snprintf(num, sizeof num, "%.17g", n->fval);
		/* keep floats recognizable: 1.0, not 1 */
		sb_printf(out, " %s%s", num, strpbrk(num, ".eni") ? "" : ".0");
		break;
	}
	case N_BOOL:
		sb_puts(out, n->ival ? " true" : " false");
		break;
	case N_UNARY:
	case N_BINARY:
	case N_ASSIGN:
		sb_printf(out, " %s", token_kind_spelling((TokenKind)n->op));
		break;
	case N_LET:
		for (int i = 0; i < n->list.len; i++)
			sb_printf(out, "%s %s", i ? "," : "", ((Node *)n->list.items[i])->name);
		break;
	case N_ATTR:
		sb_printf(out, " @%s", n->name);
		break;
	default:
		if (n->name)
			sb_printf(out, " %s", n->name);
		break;
	}
	if (n->kind != N_FILE)
		sb_printf(out, " @%u:%u", n->span.line, n->span.col);
	sb_putc(out, '\n');

	Roles r = roles(n->kind);
	indent++;
	dump_list(n->attrs, indent, NULL, out);
	if (n->kind == N_SLICE) {
		/* absent bounds are meaningful: a[:n] vs a[n:] */
		if (n->a) dump(n->a, indent, r.a, out);
		if (n->b) dump(n->b, indent, r.b, out);
		if (n->c) dump(n->c, indent, r.c, out);
		return;
	}
	if (n->kind == N_FN || n->kind == N_KERNEL) {
		dump_list(n->list, indent, NULL, out);
		if (n->a) dump(n->a, indent, r.a, out);
		if (n->b) dump(n->b, indent, r.b, out);
		return;
	}
	if (n->kind == N_LET) { /* names are on the header line */
		if (n->a) dump(n->a, indent, r.a, out);
		dump(n->b, indent, r.b, out);
		return;
	}
	if (n->kind == N_CALL || n->kind == N_INDEX) {
		dump(n->a, indent, NULL, out);
		dump_list(n->list, indent, NULL, out);
		return;
	}
	if (n->kind == N_ASSIGN) {
		dump_list(n->list, indent, "target", out);
		dump(n->b, indent, r.b, out);
		return;
	}
	if (n->a) dump(n->a, indent, r.a, out);
	if (n->b) dump(n->b, indent, r.b, out);
	if (n->c) dump(n->c, indent, r.c, out);
	dump_list(n->list, indent, NULL, out);
}

void ast_dump(const Node *n, StrBuf *out)
{
	dump(n, 0, NULL, out);
}
