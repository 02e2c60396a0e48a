/* parser.y: the grammar of blk (docs/language.md has it in EBNF).
 * A pure, reentrant LALR(1) parser with locations. Errors are recovered at
 * statement and item level, so one run reports many. Tree building lives in
 * parse.c; the actions here only wire nodes together. */

%define api.pure full
%define parse.error custom
%locations
%define api.location.type {Span}
%parse-param {ParseCtx *ctx}
%lex-param {ParseCtx *ctx}
%expect 0

%code requires {
#include "lang.h"

typedef struct ParseCtx {
	Lexer lx;
	Diag *diag;
	Arena *arena;
	const Source *src;
	Node *root;
	Token last;       /* the last token read, for error messages */
	Token prev;       /* the token before it */
	Span open[LEX_MAX_NESTING + 1]; /* brackets open now, innermost last */
	int n_open;
	uint32_t lex_error_at; /* byte offset of the last token the lexer complained about, +1 */
	bool out_of_memory;
	bool too_deep;
} ParseCtx;

/* Spans of a rule: from its first symbol to its last; an empty rule sits at
 * the end of the symbol before it. */
Span span_end_point(const ParseCtx *ctx, Span sp);
#define YYLLOC_DEFAULT(Cur, Rhs, N) \
	do { \
		if (N) { \
			(Cur) = YYRHSLOC(Rhs, 1); \
			(Cur).end = YYRHSLOC(Rhs, N).end; \
		} else { \
			(Cur) = span_end_point(ctx, YYRHSLOC(Rhs, 0)); \
		} \
	} while (0)
}

%code provides {
int yylex(YYSTYPE *lval, Span *lloc, ParseCtx *ctx);
void yyerror(Span *lloc, ParseCtx *ctx, const char *msg);

Node *mk(ParseCtx *ctx, NodeKind kind, Span sp);
Node *mk1(ParseCtx *ctx, NodeKind kind, Span sp, Node *a);
Node *mk2(ParseCtx *ctx, NodeKind kind, Span sp, Node *a, Node *b);
Node *mk_op(ParseCtx *ctx, NodeKind kind, Span sp, int op, Node *a, Node *b);
Node *mk_name(ParseCtx *ctx, NodeKind kind, Span sp, const Token *name);
Node *mk_token_leaf(ParseCtx *ctx, const Token *tok);
bool add(ParseCtx *ctx, Node *n, Node *item);
bool add_attrs(ParseCtx *ctx, Node *decl, PtrVec attrs);
bool list_push(ParseCtx *ctx, PtrVec *v, Node *item);
bool seal(ParseCtx *ctx, Node *n); /* records depth; false past the limit */
void dotted_type(ParseCtx *ctx, Span sp, const Token *ns, const Token *name);
/* sp without its first character: the second '*' of a '**' */
static inline Span second_star(Span sp) { sp.begin++, sp.col++; return sp; }
}

%union {
	Node *node;
	Token tok;
	int op;
	PtrVec vec;
}

%token TK_EOF 0 "end of file"
%token <tok> TK_IDENT "identifier" TK_INT "integer literal" TK_FLOAT "float literal" TK_STRING "string literal"
%token <tok> TK_KW_IMPORT "'import'" TK_KW_AS "'as'" TK_KW_CONST "'const'" TK_KW_FN "'fn'"
%token <tok> TK_KW_KERNEL "'kernel'" TK_KW_GRID "'grid'" TK_KW_LET "'let'" TK_KW_VAR "'var'"
%token <tok> TK_KW_IF "'if'" TK_KW_ELSE "'else'" TK_KW_FOR "'for'" TK_KW_IN "'in'"
%token <tok> TK_KW_WHILE "'while'" TK_KW_BREAK "'break'" TK_KW_CONTINUE "'continue'"
%token <tok> TK_KW_RETURN "'return'" TK_KW_TRUE "'true'" TK_KW_FALSE "'false'" TK_KW_NONE "'None'"
%token <tok> TK_LPAREN "'('" TK_RPAREN "')'" TK_LBRACKET "'['" TK_RBRACKET "']'"
%token <tok> TK_LBRACE "'{'" TK_RBRACE "'}'" TK_COMMA "','" TK_SEMI "';'" TK_COLON "':'"
%token <tok> TK_DOT "'.'" TK_ARROW "'->'" TK_AT "'@'" TK_QUESTION "'?'"
%token <tok> TK_PLUS "'+'" TK_MINUS "'-'" TK_STAR "'*'" TK_SLASH "'/'" TK_PERCENT "'%'" TK_POW "'**'"
%token <tok> TK_AMP "'&'" TK_PIPE "'|'" TK_CARET "'^'" TK_TILDE "'~'" TK_BANG "'!'"
%token <tok> TK_SHL "'<<'" TK_SHR "'>>'" TK_ANDAND "'&&'" TK_OROR "'||'"
%token <tok> TK_EQ "'=='" TK_NE "'!='" TK_LT "'<'" TK_LE "'<='" TK_GT "'>'" TK_GE "'>='"
%token <tok> TK_ASSIGN "'='" TK_PLUS_ASSIGN "'+='" TK_MINUS_ASSIGN "'-='" TK_STAR_ASSIGN "'*='"
%token <tok> TK_SLASH_ASSIGN "'/='" TK_PERCENT_ASSIGN "'%='" TK_AMP_ASSIGN "'&='"
%token <tok> TK_PIPE_ASSIGN "'|='" TK_CARET_ASSIGN "'^='" TK_SHL_ASSIGN "'<<='" TK_SHR_ASSIGN "'>>='"

%right TK_QUESTION TK_COLON
%left TK_OROR
%left TK_ANDAND
%left TK_PIPE
%left TK_CARET
%left TK_AMP
%left TK_EQ TK_NE
%left TK_LT TK_LE TK_GT TK_GE
%left TK_SHL TK_SHR
%left TK_PLUS TK_MINUS
%left TK_STAR TK_SLASH TK_PERCENT
%precedence UNARY
%right TK_POW

%type <node> item import const_decl decl fn_decl kernel_decl attribute attr_arg attr_value config
%type <node> param type base_type ret_opt grid_opt default_opt type_opt
%type <node> block stmt let_stmt if_stmt else_opt value
%type <node> expr postfix primary arg index opt_expr list_elem named_value
%type <vec> items attrs attr_args attr_arg_list params param_list config_list config_items
%type <vec> stmts names ident_list expr_list args arg_list index_list list_elems list_elem_list
%type <op> assign_op

%%

/* file = { item } */
file
	: items { ctx->root = mk(ctx, N_FILE, @$); if (!ctx->root) YYABORT; ctx->root->list = $1; }
	;

items
	: %empty { $$ = (PtrVec){0}; }
	| items item { $$ = $1; if ($2 && !list_push(ctx, &$$, $2)) YYABORT; }
	;

item
	: import
	| const_decl
	| attrs decl { $$ = $2; if (!add_attrs(ctx, $$, $1)) YYABORT; }
	| error TK_SEMI { $$ = NULL; yyerrok; }
	| error block { $$ = NULL; yyerrok; }
	;

decl: fn_decl | kernel_decl ;

/* import = "import" STRING [ "as" IDENT ] ";" */
import
	: TK_KW_IMPORT TK_STRING TK_SEMI { $$ = mk_token_leaf(ctx, &$2); if (!$$) YYABORT; $$->kind = N_IMPORT; $$->span = @$; }
	| TK_KW_IMPORT TK_STRING TK_KW_AS TK_IDENT TK_SEMI {
		$$ = mk_token_leaf(ctx, &$2); if (!$$) YYABORT;
		$$->kind = N_IMPORT; $$->span = @$; $$->name = $4.str;
	}
	;

/* const_decl = "const" IDENT [ ":" type ] "=" expr ";" */
const_decl
	: TK_KW_CONST TK_IDENT type_opt TK_ASSIGN expr TK_SEMI {
		$$ = mk_name(ctx, N_CONST, @$, &$2); if (!$$) YYABORT;
		$$->a = $3; $$->b = $5; if (!seal(ctx, $$)) YYABORT;
	}
	;

attrs
	: %empty { $$ = (PtrVec){0}; }
	| attrs attribute { $$ = $1; if (!list_push(ctx, &$$, $2)) YYABORT; }
	;

/* attribute = "@" IDENT [ "(" [ attr_arg { "," attr_arg } [ "," ] ] ")" ] */
attribute
	: TK_AT TK_IDENT { $$ = mk_name(ctx, N_ATTR, @$, &$2); if (!$$) YYABORT; }
	| TK_AT TK_IDENT TK_LPAREN attr_args TK_RPAREN {
		$$ = mk_name(ctx, N_ATTR, @$, &$2); if (!$$) YYABORT;
		$$->flag = true; $$->list = $4; if (!seal(ctx, $$)) YYABORT;
	}
	;

attr_args
	: %empty { $$ = (PtrVec){0}; }
	| attr_arg_list opt_comma
	;

attr_arg_list
	: attr_arg { $$ = (PtrVec){0}; if (!list_push(ctx, &$$, $1)) YYABORT; }
	| attr_arg_list TK_COMMA attr_arg { $$ = $1; if (!list_push(ctx, &$$, $3)) YYABORT; }
	;

attr_arg
	: TK_IDENT TK_ASSIGN attr_value { $$ = mk_name(ctx, N_NAMED_ARG, @$, &$1); if (!$$) YYABORT; $$->a = $3; if (!seal(ctx, $$)) YYABORT; }
	| attr_value
	;

attr_value: expr | config ;

/* config = "{" [ IDENT "=" expr { "," IDENT "=" expr } [ "," ] ] "}" */
config
	: TK_LBRACE config_list TK_RBRACE { $$ = mk(ctx, N_CONFIG, @$); if (!$$) YYABORT; $$->list = $2; if (!seal(ctx, $$)) YYABORT; }
	;

config_list
	: %empty { $$ = (PtrVec){0}; }
	| config_items opt_comma
	;

config_items
	: named_value { $$ = (PtrVec){0}; if (!list_push(ctx, &$$, $1)) YYABORT; }
	| config_items TK_COMMA named_value { $$ = $1; if (!list_push(ctx, &$$, $3)) YYABORT; }
	;

named_value
	: TK_IDENT TK_ASSIGN expr { $$ = mk_name(ctx, N_NAMED_ARG, @$, &$1); if (!$$) YYABORT; $$->a = $3; if (!seal(ctx, $$)) YYABORT; }
	;

opt_comma: %empty | TK_COMMA ;

/* fn_decl = "fn" IDENT "(" [ params ] ")" [ "->" type ] block */
fn_decl
	: TK_KW_FN TK_IDENT TK_LPAREN params TK_RPAREN ret_opt block {
		$$ = mk_name(ctx, N_FN, @$, &$2); if (!$$) YYABORT;
		$$->list = $4; $$->a = $6; $$->b = $7; if (!seal(ctx, $$)) YYABORT;
	}
	;

ret_opt
	: %empty { $$ = NULL; }
	| TK_ARROW type { $$ = $2; }
	;

/* kernel_decl = "kernel" IDENT "(" [ params ] ")" [ "grid" "(" expr { "," expr } ")" ] block */
kernel_decl
	: TK_KW_KERNEL TK_IDENT TK_LPAREN params TK_RPAREN grid_opt block {
		$$ = mk_name(ctx, N_KERNEL, @$, &$2); if (!$$) YYABORT;
		$$->list = $4; $$->a = $6; $$->b = $7; if (!seal(ctx, $$)) YYABORT;
	}
	;

grid_opt
	: %empty { $$ = NULL; }
	| TK_KW_GRID TK_LPAREN expr_list opt_comma TK_RPAREN {
		$$ = mk(ctx, N_TUPLE, @$); if (!$$) YYABORT; $$->list = $3; if (!seal(ctx, $$)) YYABORT;
	}
	;

params
	: %empty { $$ = (PtrVec){0}; }
	| param_list opt_comma
	;

param_list
	: param { $$ = (PtrVec){0}; if (!list_push(ctx, &$$, $1)) YYABORT; }
	| param_list TK_COMMA param { $$ = $1; if (!list_push(ctx, &$$, $3)) YYABORT; }
	;

/* param = IDENT [ ":" type ] [ "=" expr ] */
param
	: TK_IDENT type_opt default_opt {
		$$ = mk_name(ctx, N_PARAM, @$, &$1); if (!$$) YYABORT;
		$$->a = $2; $$->b = $3; if (!seal(ctx, $$)) YYABORT;
	}
	;

type_opt
	: %empty { $$ = NULL; }
	| TK_COLON type { $$ = $2; }
	;

default_opt
	: %empty { $$ = NULL; }
	| TK_ASSIGN expr { $$ = $2; }
	;

/* type = "const" base_type | base_type ;  base_type = "*" base_type | IDENT */
type
	: TK_KW_CONST base_type { $$ = mk1(ctx, N_TYPE_CONST, @$, $2); if (!$$) YYABORT; }
	| base_type
	;

base_type
	: TK_STAR base_type { $$ = mk1(ctx, N_TYPE_PTR, @$, $2); if (!$$) YYABORT; }
	| TK_POW base_type { /* '**' lexes as one token: two pointer levels */
		Node *in = mk1(ctx, N_TYPE_PTR, second_star(@$), $2); if (!in) YYABORT;
		$$ = mk1(ctx, N_TYPE_PTR, @$, in); if (!$$) YYABORT;
	}
	| TK_IDENT { $$ = mk_name(ctx, N_TYPE_NAME, @$, &$1); if (!$$) YYABORT; }
	| TK_IDENT TK_DOT TK_IDENT {
		/* Triton's tl.constexpr, tl.float16: reported, then read as the last name */
		$$ = mk_name(ctx, N_TYPE_NAME, @3, &$3); if (!$$) YYABORT;
		dotted_type(ctx, @$, &$1, &$3);
	}
	;

/* block = "{" { stmt } "}" */
block
	: TK_LBRACE stmts TK_RBRACE { $$ = mk(ctx, N_BLOCK, @$); if (!$$) YYABORT; $$->list = $2; if (!seal(ctx, $$)) YYABORT; }
	;

stmts
	: %empty { $$ = (PtrVec){0}; }
	| stmts stmt { $$ = $1; if ($2 && !list_push(ctx, &$$, $2)) YYABORT; }
	;

stmt
	: let_stmt
	| expr_list assign_op value TK_SEMI {
		$$ = mk(ctx, N_ASSIGN, @$); if (!$$) YYABORT;
		$$->op = $2; $$->list = $1; $$->b = $3; if (!seal(ctx, $$)) YYABORT;
	}
	| expr TK_SEMI { $$ = mk1(ctx, N_EXPR_STMT, @$, $1); if (!$$) YYABORT; }
	| if_stmt
	| TK_KW_FOR TK_IDENT TK_KW_IN expr block {
		$$ = mk_name(ctx, N_FOR, @$, &$2); if (!$$) YYABORT;
		$$->a = $4; $$->b = $5; if (!seal(ctx, $$)) YYABORT;
	}
	| TK_KW_WHILE expr block { $$ = mk2(ctx, N_WHILE, @$, $2, $3); if (!$$) YYABORT; }
	| TK_KW_BREAK TK_SEMI { $$ = mk(ctx, N_BREAK, @1); if (!$$) YYABORT; }
	| TK_KW_CONTINUE TK_SEMI { $$ = mk(ctx, N_CONTINUE, @1); if (!$$) YYABORT; }
	| TK_KW_RETURN TK_SEMI { $$ = mk(ctx, N_RETURN, @1); if (!$$) YYABORT; }
	| TK_KW_RETURN value TK_SEMI { $$ = mk1(ctx, N_RETURN, @$, $2); if (!$$) YYABORT; }
	| block
	| TK_SEMI { $$ = NULL; }
	| error TK_SEMI { $$ = NULL; yyerrok; }
	;

/* let = ("let" | "var") names [ ":" type ] "=" expr ";" */
let_stmt
	: TK_KW_LET names type_opt TK_ASSIGN value TK_SEMI {
		$$ = mk(ctx, N_LET, @$); if (!$$) YYABORT;
		$$->list = $2; $$->a = $3; $$->b = $5; if (!seal(ctx, $$)) YYABORT;
	}
	| TK_KW_VAR names type_opt TK_ASSIGN value TK_SEMI {
		$$ = mk(ctx, N_LET, @$); if (!$$) YYABORT;
		$$->flag = true; $$->list = $2; $$->a = $3; $$->b = $5; if (!seal(ctx, $$)) YYABORT;
	}
	;

names
	: ident_list
	| TK_LPAREN ident_list TK_RPAREN { $$ = $2; }
	;

ident_list
	: TK_IDENT { $$ = (PtrVec){0}; Node *n = mk_name(ctx, N_IDENT, @1, &$1); if (!n || !list_push(ctx, &$$, n)) YYABORT; }
	| ident_list TK_COMMA TK_IDENT { $$ = $1; Node *n = mk_name(ctx, N_IDENT, @3, &$3); if (!n || !list_push(ctx, &$$, n)) YYABORT; }
	;

assign_op
	: TK_ASSIGN { $$ = T_ASSIGN; }
	| TK_PLUS_ASSIGN { $$ = T_PLUS_ASSIGN; }
	| TK_MINUS_ASSIGN { $$ = T_MINUS_ASSIGN; }
	| TK_STAR_ASSIGN { $$ = T_STAR_ASSIGN; }
	| TK_SLASH_ASSIGN { $$ = T_SLASH_ASSIGN; }
	| TK_PERCENT_ASSIGN { $$ = T_PERCENT_ASSIGN; }
	| TK_AMP_ASSIGN { $$ = T_AMP_ASSIGN; }
	| TK_PIPE_ASSIGN { $$ = T_PIPE_ASSIGN; }
	| TK_CARET_ASSIGN { $$ = T_CARET_ASSIGN; }
	| TK_SHL_ASSIGN { $$ = T_SHL_ASSIGN; }
	| TK_SHR_ASSIGN { $$ = T_SHR_ASSIGN; }
	;

/* if = "if" expr block [ "else" ( block | if ) ] */
if_stmt
	: TK_KW_IF expr block else_opt {
		$$ = mk2(ctx, N_IF, @$, $2, $3); if (!$$) YYABORT;
		$$->c = $4; if (!seal(ctx, $$)) YYABORT;
	}
	;

else_opt
	: %empty { $$ = NULL; }
	| TK_KW_ELSE block { $$ = $2; }
	| TK_KW_ELSE if_stmt { $$ = $2; }
	;

/* value = expr { "," expr }: several make a tuple (a, b = b, a; return x, y) */
value
	: expr_list {
		if ($1.len == 1) {
			$$ = $1.items[0];
		} else {
			$$ = mk(ctx, N_TUPLE, @$); if (!$$) YYABORT;
			$$->list = $1; if (!seal(ctx, $$)) YYABORT;
		}
	}
	;

expr_list
	: expr { $$ = (PtrVec){0}; if (!list_push(ctx, &$$, $1)) YYABORT; }
	| expr_list TK_COMMA expr { $$ = $1; if (!list_push(ctx, &$$, $3)) YYABORT; }
	;

/* Binary and ternary operators; precedence is declared above. */
expr
	: expr TK_QUESTION expr TK_COLON expr {
		$$ = mk2(ctx, N_TERNARY, @$, $1, $3); if (!$$) YYABORT;
		$$->c = $5; if (!seal(ctx, $$)) YYABORT;
	}
	| expr TK_OROR expr { $$ = mk_op(ctx, N_BINARY, @$, T_OROR, $1, $3); if (!$$) YYABORT; }
	| expr TK_ANDAND expr { $$ = mk_op(ctx, N_BINARY, @$, T_ANDAND, $1, $3); if (!$$) YYABORT; }
	| expr TK_PIPE expr { $$ = mk_op(ctx, N_BINARY, @$, T_PIPE, $1, $3); if (!$$) YYABORT; }
	| expr TK_CARET expr { $$ = mk_op(ctx, N_BINARY, @$, T_CARET, $1, $3); if (!$$) YYABORT; }
	| expr TK_AMP expr { $$ = mk_op(ctx, N_BINARY, @$, T_AMP, $1, $3); if (!$$) YYABORT; }
	| expr TK_EQ expr { $$ = mk_op(ctx, N_BINARY, @$, T_EQ, $1, $3); if (!$$) YYABORT; }
	| expr TK_NE expr { $$ = mk_op(ctx, N_BINARY, @$, T_NE, $1, $3); if (!$$) YYABORT; }
	| expr TK_LT expr { $$ = mk_op(ctx, N_BINARY, @$, T_LT, $1, $3); if (!$$) YYABORT; }
	| expr TK_LE expr { $$ = mk_op(ctx, N_BINARY, @$, T_LE, $1, $3); if (!$$) YYABORT; }
	| expr TK_GT expr { $$ = mk_op(ctx, N_BINARY, @$, T_GT, $1, $3); if (!$$) YYABORT; }
	| expr TK_GE expr { $$ = mk_op(ctx, N_BINARY, @$, T_GE, $1, $3); if (!$$) YYABORT; }
	| expr TK_SHL expr { $$ = mk_op(ctx, N_BINARY, @$, T_SHL, $1, $3); if (!$$) YYABORT; }
	| expr TK_SHR expr { $$ = mk_op(ctx, N_BINARY, @$, T_SHR, $1, $3); if (!$$) YYABORT; }
	| expr TK_PLUS expr { $$ = mk_op(ctx, N_BINARY, @$, T_PLUS, $1, $3); if (!$$) YYABORT; }
	| expr TK_MINUS expr { $$ = mk_op(ctx, N_BINARY, @$, T_MINUS, $1, $3); if (!$$) YYABORT; }
	| expr TK_STAR expr { $$ = mk_op(ctx, N_BINARY, @$, T_STAR, $1, $3); if (!$$) YYABORT; }
	| expr TK_SLASH expr { $$ = mk_op(ctx, N_BINARY, @$, T_SLASH, $1, $3); if (!$$) YYABORT; }
	| expr TK_PERCENT expr { $$ = mk_op(ctx, N_BINARY, @$, T_PERCENT, $1, $3); if (!$$) YYABORT; }
	| expr TK_POW expr { $$ = mk_op(ctx, N_BINARY, @$, T_POW, $1, $3); if (!$$) YYABORT; }
	| TK_MINUS expr %prec UNARY { $$ = mk_op(ctx, N_UNARY, @$, T_MINUS, $2, NULL); if (!$$) YYABORT; }
	| TK_PLUS expr %prec UNARY { $$ = mk_op(ctx, N_UNARY, @$, T_PLUS, $2, NULL); if (!$$) YYABORT; }
	| TK_BANG expr %prec UNARY { $$ = mk_op(ctx, N_UNARY, @$, T_BANG, $2, NULL); if (!$$) YYABORT; }
	| TK_TILDE expr %prec UNARY { $$ = mk_op(ctx, N_UNARY, @$, T_TILDE, $2, NULL); if (!$$) YYABORT; }
	| TK_STAR expr %prec UNARY { $$ = mk_op(ctx, N_UNARY, @$, T_STAR, $2, NULL); if (!$$) YYABORT; }
	| TK_POW expr %prec UNARY {
		Node *in = mk_op(ctx, N_UNARY, second_star(@$), T_STAR, $2, NULL); if (!in) YYABORT;
		$$ = mk_op(ctx, N_UNARY, @$, T_STAR, in, NULL); if (!$$) YYABORT;
	}
	| postfix
	;

/* postfix = primary { "(" [ args ] ")" | "[" index { "," index } "]" | "." IDENT } */
postfix
	: primary
	| postfix TK_LPAREN args TK_RPAREN {
		$$ = mk1(ctx, N_CALL, @$, $1); if (!$$) YYABORT;
		$$->list = $3; if (!seal(ctx, $$)) YYABORT;
	}
	| postfix TK_LBRACKET index_list TK_RBRACKET {
		$$ = mk1(ctx, N_INDEX, @$, $1); if (!$$) YYABORT;
		$$->list = $3; if (!seal(ctx, $$)) YYABORT;
	}
	| postfix TK_DOT TK_IDENT {
		$$ = mk1(ctx, N_FIELD, @$, $1); if (!$$) YYABORT;
		$$->name = $3.str;
	}
	;

args
	: %empty { $$ = (PtrVec){0}; }
	| arg_list opt_comma
	;

arg_list
	: arg { $$ = (PtrVec){0}; if (!list_push(ctx, &$$, $1)) YYABORT; }
	| arg_list TK_COMMA arg { $$ = $1; if (!list_push(ctx, &$$, $3)) YYABORT; }
	;

arg: named_value | expr ;

index_list
	: index { $$ = (PtrVec){0}; if (!list_push(ctx, &$$, $1)) YYABORT; }
	| index_list TK_COMMA index { $$ = $1; if (!list_push(ctx, &$$, $3)) YYABORT; }
	;

/* index = expr | [ expr ] ":" [ expr ] [ ":" [ expr ] ] */
index
	: expr
	| opt_expr TK_COLON opt_expr {
		$$ = mk2(ctx, N_SLICE, @$, $1, $3); if (!$$) YYABORT;
	}
	| opt_expr TK_COLON opt_expr TK_COLON opt_expr {
		$$ = mk2(ctx, N_SLICE, @$, $1, $3); if (!$$) YYABORT;
		$$->c = $5; if (!seal(ctx, $$)) YYABORT;
	}
	;

opt_expr
	: %empty { $$ = NULL; }
	| expr
	;

primary
	: TK_IDENT { $$ = mk_name(ctx, N_IDENT, @$, &$1); if (!$$) YYABORT; }
	| TK_INT { $$ = mk_token_leaf(ctx, &$1); if (!$$) YYABORT; }
	| TK_FLOAT { $$ = mk_token_leaf(ctx, &$1); if (!$$) YYABORT; }
	| TK_STRING { $$ = mk_token_leaf(ctx, &$1); if (!$$) YYABORT; }
	| TK_KW_TRUE { $$ = mk(ctx, N_BOOL, @$); if (!$$) YYABORT; $$->ival = 1; }
	| TK_KW_FALSE { $$ = mk(ctx, N_BOOL, @$); if (!$$) YYABORT; }
	| TK_KW_NONE { $$ = mk(ctx, N_NONE, @$); if (!$$) YYABORT; }
	| TK_LPAREN expr TK_RPAREN { $$ = $2; }
	| TK_LPAREN TK_RPAREN { $$ = mk(ctx, N_TUPLE, @$); if (!$$) YYABORT; }
	| TK_LPAREN expr TK_COMMA TK_RPAREN {
		$$ = mk(ctx, N_TUPLE, @$); if (!$$ || !add(ctx, $$, $2)) YYABORT;
	}
	| TK_LPAREN expr TK_COMMA expr_list opt_comma TK_RPAREN {
		$$ = mk(ctx, N_TUPLE, @$); if (!$$ || !add(ctx, $$, $2)) YYABORT;
		for (int i = 0; i < $4.len; i++)
			if (!add(ctx, $$, $4.items[i])) YYABORT;
	}
	| TK_LBRACKET list_elems TK_RBRACKET {
		$$ = mk(ctx, N_LIST, @$); if (!$$) YYABORT; $$->list = $2; if (!seal(ctx, $$)) YYABORT;
	}
	;

list_elems
	: %empty { $$ = (PtrVec){0}; }
	| list_elem_list opt_comma
	;

list_elem_list
	: list_elem { $$ = (PtrVec){0}; if (!list_push(ctx, &$$, $1)) YYABORT; }
	| list_elem_list TK_COMMA list_elem { $$ = $1; if (!list_push(ctx, &$$, $3)) YYABORT; }
	;

list_elem: expr | config ;

%%

/* Tokens that could only continue what came before (an operator after an
 * operand, a call's parenthesis): left out of "expected ..." lists, which
 * then name what would end or open a construct. */
static bool continues_expression(yysymbol_kind_t k)
{
	switch (k) {
	case YYSYMBOL_TK_QUESTION: case YYSYMBOL_TK_OROR: case YYSYMBOL_TK_ANDAND:
	case YYSYMBOL_TK_PIPE: case YYSYMBOL_TK_CARET: case YYSYMBOL_TK_AMP:
	case YYSYMBOL_TK_EQ: case YYSYMBOL_TK_NE: case YYSYMBOL_TK_LT: case YYSYMBOL_TK_LE:
	case YYSYMBOL_TK_GT: case YYSYMBOL_TK_GE: case YYSYMBOL_TK_SHL: case YYSYMBOL_TK_SHR:
	case YYSYMBOL_TK_PLUS: case YYSYMBOL_TK_MINUS: case YYSYMBOL_TK_STAR:
	case YYSYMBOL_TK_SLASH: case YYSYMBOL_TK_PERCENT: case YYSYMBOL_TK_POW: case YYSYMBOL_TK_LPAREN:
	case YYSYMBOL_TK_LBRACKET: case YYSYMBOL_TK_DOT: case YYSYMBOL_TK_COMMA:
	case YYSYMBOL_TK_ASSIGN: case YYSYMBOL_TK_PLUS_ASSIGN: case YYSYMBOL_TK_MINUS_ASSIGN:
	case YYSYMBOL_TK_STAR_ASSIGN: case YYSYMBOL_TK_SLASH_ASSIGN: case YYSYMBOL_TK_PERCENT_ASSIGN:
	case YYSYMBOL_TK_AMP_ASSIGN: case YYSYMBOL_TK_PIPE_ASSIGN: case YYSYMBOL_TK_CARET_ASSIGN:
	case YYSYMBOL_TK_SHL_ASSIGN: case YYSYMBOL_TK_SHR_ASSIGN:
		return true;
	default:
		return false;
	}
}

static void describe_found(StrBuf *msg, const Token *t)
{
	if (t->kind == T_EOF)
		sb_puts(msg, "end of file");
	else if (t->kind == T_IDENT)
		sb_printf(msg, "identifier '%s'", t->str);
	else if (t->kind == T_INT || t->kind == T_FLOAT || t->kind == T_STRING)
		sb_printf(msg, "%s", token_kind_spelling(t->kind));
	else
		sb_printf(msg, "'%s'", token_kind_spelling(t->kind));
}

/* The zero-width span just after token t (where a missing ';' belongs). */
static Span after(const Token *t)
{
	Span sp = t->span;
	sp.col += sp.end - sp.begin;
	sp.begin = sp.end;
	return sp;
}

/* Syntax errors in the words of the language: "expected ';' before 'let'",
 * "expected expression, found ')'", with a note at the unclosed bracket. */
static int yyreport_syntax_error(const yypcontext_t *yc, ParseCtx *ctx)
{
	if (ctx->lx.too_deep || ctx->too_deep || ctx->out_of_memory)
		return 0; /* already reported; the parse is ending */
	const Token *t = &ctx->last;
	/* The lexer already complained about this spot; one error is enough. */
	if (ctx->lex_error_at && ctx->lex_error_at - 1 >= ctx->prev.span.begin)
		return 0;
	yysymbol_kind_t all[YYNTOKENS], kept[YYNTOKENS];
	int n_all = yypcontext_expected_tokens(yc, all, YYNTOKENS), n = 0;
	bool ident = false, number = false, semi = false, decl = false, type = false;
	yysymbol_kind_t closing = YYSYMBOL_YYEMPTY;
	for (int i = 0; i < n_all; i++) {
		yysymbol_kind_t k = all[i];
		ident |= k == YYSYMBOL_TK_IDENT;
		number |= k == YYSYMBOL_TK_INT;
		type |= k == YYSYMBOL_TK_STAR;
		semi |= k == YYSYMBOL_TK_SEMI;
		decl |= k == YYSYMBOL_TK_KW_KERNEL;
		if (k == YYSYMBOL_TK_RPAREN || k == YYSYMBOL_TK_RBRACKET || k == YYSYMBOL_TK_RBRACE)
			closing = k;
		if (!continues_expression(k))
			kept[n++] = k;
	}
	if (n == 0) /* only continuations were possible: list them */
		for (int i = 0; i < n_all; i++)
			kept[n++] = all[i];

	StrBuf msg = {0};
	Span at = *yypcontext_location(yc);
	if (t->kind == T_EOF && closing != YYSYMBOL_YYEMPTY) {
		sb_printf(&msg, "expected %s, found ", yysymbol_name(closing));
	} else if (decl) {
		sb_puts(&msg, "expected a declaration ('import', 'const', 'fn' or 'kernel'), found ");
	} else if (semi && t->kind != T_EOF && ctx->prev.kind != T_EOF && t->span.line > ctx->prev.span.line) {
		/* the statement ended on the line before: put the ';' where it belongs */
		sb_puts(&msg, "expected ';' at the end of the statement, before ");
		at = after(&ctx->prev);
	} else if (ident && number) {
		sb_puts(&msg, "expected expression, found ");
	} else if (ident && type && !number) {
		sb_puts(&msg, "expected a type, found ");
	} else if (n <= 4) {
		sb_puts(&msg, "expected ");
		for (int i = 0; i < n; i++) {
			if (i)
				sb_puts(&msg, i == n - 1 ? " or " : ", ");
			sb_puts(&msg, yysymbol_name(kept[i]));
		}
		sb_puts(&msg, ", found ");
	} else {
		sb_puts(&msg, "unexpected ");
	}
	describe_found(&msg, t);
	diag_error(ctx->diag, at, "%s", msg.data ? msg.data : "syntax error");
	sb_free(&msg);

	/* Point at the bracket a missing closer belongs to. */
	if (closing != YYSYMBOL_YYEMPTY && ctx->n_open > 0 && !ctx->diag->stopped) {
		Span open = ctx->open[ctx->n_open - 1];
		const char *text = open.src->text;
		char want = text[open.begin] == '(' ? ')' : text[open.begin] == '[' ? ']' : '}';
		if ((want == ')' && closing == YYSYMBOL_TK_RPAREN) || (want == ']' && closing == YYSYMBOL_TK_RBRACKET) ||
		    (want == '}' && closing == YYSYMBOL_TK_RBRACE))
			diag_note(ctx->diag, open, "to match this '%c'", text[open.begin]);
	}
	return 0;
}
