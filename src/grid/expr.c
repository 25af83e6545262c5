/*
 * Dimension expressions of the grid configuration (docs/spec/grid.md §3
 * "Template engine", reference grid_generator/evaluator.py).
 *
 * The reference hands each expression to Python's eval() with only max,
 * min, abs and align in scope and a regex that rejects '.' and '__'.  We
 * compile the same integer subset of Python once, at load time, into a
 * tree, so a typo or an unknown name is reported with its file and line
 * before anything runs, and evaluation is a tree walk on int64 values.
 *
 * Grammar (Python precedence, lowest first):
 *   or_expr   := and_expr ('or' and_expr)*
 *   and_expr  := not_expr ('and' not_expr)*
 *   not_expr  := 'not' not_expr | cmp
 *   cmp       := arith (('<'|'<='|'>'|'>='|'=='|'!=') arith)*   (chained)
 *   arith     := term (('+'|'-') term)*
 *   term      := unary (('*'|'//'|'%') unary)*
 *   unary     := ('+'|'-') unary | power
 *   power     := atom ('**' unary)?
 *   atom      := INT | NAME | NAME '(' args ')' | '(' or_expr ')'
 * INT is decimal with optional '_' between digits.  Semantics are Python's
 * on integers: '//' floors, '%' takes the divisor's sign, comparisons give
 * 0/1, 'and'/'or' return an operand, comparisons chain (a < b < c).  True
 * division '/' is refused (the reference would produce a float and int()
 * it; write '//').  Results outside int64 are errors, as are division by
 * zero and negative exponents.
 */
#include "grid_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op {
	OP_INT, OP_VAR, OP_NEG, OP_POS, OP_NOT, OP_ADD, OP_SUB, OP_MUL, OP_FLOORDIV,
	OP_MOD, OP_POW, OP_AND, OP_OR, OP_CMP, OP_CALL,
};

enum cmp { CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_EQ, CMP_NE };
enum fn { FN_MAX, FN_MIN, FN_ABS, FN_ALIGN };

struct node {
	enum op op;
	int64_t v;          /* OP_INT value; OP_VAR index; OP_CALL function */
	int a, b;           /* children (OP_CMP chain: a = first operand index into args) */
	int nargs;          /* OP_CALL / OP_CMP: number of args (operands) */
	int args;           /* index into expr->args of the first argument */
};

struct grid_expr {
	char *text;
	struct node *n;
	size_t nn, capn;
	int *args;          /* argument lists (node indices; for OP_CMP: operand, op, operand, ...) */
	size_t na, capa;
	int root;
};

/*
 * Nesting limit: the parser and the evaluator recurse once per level, so a
 * pathological expression ("((((…" or "not not …" or a chain of 10^5
 * '+') would overflow the stack (found by fuzz_grid_yaml under `make
 * fuzz-long`).  Real grid expressions nest a few levels.
 */
#define EXPR_MAX_DEPTH 200   /* counts parse_or and parse_unary: about 100 parentheses */

struct parser {
	struct grid_expr *e;
	const char *s, *p;
	const char *const *vars;
	size_t nvars;
	int depth;          /* recursion of parse_or / parse_not / parse_unary */
	char msg[256];
};

static int fail(struct parser *ps, const char *what)
{
	if (!ps->msg[0])
		snprintf(ps->msg, sizeof(ps->msg), "%s at column %zu", what,
			 (size_t)(ps->p - ps->s) + 1);
	return -1;
}

static int new_node(struct parser *ps, enum op op)
{
	struct grid_expr *e = ps->e;
	if (e->nn == e->capn) {
		size_t cap = e->capn ? e->capn * 2 : 16;
		struct node *n = realloc(e->n, cap * sizeof(*n));
		if (!n)
			return fail(ps, "out of memory");
		e->n = n;
		e->capn = cap;
	}
	memset(&e->n[e->nn], 0, sizeof(e->n[0]));
	e->n[e->nn].op = op;
	return (int)e->nn++;
}

static int push_arg(struct parser *ps, int v)
{
	struct grid_expr *e = ps->e;
	if (e->na == e->capa) {
		size_t cap = e->capa ? e->capa * 2 : 16;
		int *a = realloc(e->args, cap * sizeof(*a));
		if (!a)
			return fail(ps, "out of memory");
		e->args = a;
		e->capa = cap;
	}
	e->args[e->na++] = v;
	return 0;
}

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static int is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Accept keyword kw (a whole word) at the cursor. */
static int accept_kw(struct parser *ps, const char *kw)
{
	skip_ws(ps);
	size_t n = strlen(kw);
	if (strncmp(ps->p, kw, n) == 0 && !is_ident(ps->p[n])) {
		ps->p += n;
		return 1;
	}
	return 0;
}

static int accept(struct parser *ps, const char *tok)
{
	skip_ws(ps);
	size_t n = strlen(tok);
	if (strncmp(ps->p, tok, n) == 0) {
		ps->p += n;
		return 1;
	}
	return 0;
}

static int parse_or(struct parser *ps);
static int parse_unary(struct parser *ps);

static int binary(struct parser *ps, enum op op, int a, int b)
{
	if (a < 0 || b < 0)
		return -1;
	int n = new_node(ps, op);
	if (n < 0)
		return -1;
	ps->e->n[n].a = a;
	ps->e->n[n].b = b;
	return n;
}

static int parse_atom(struct parser *ps)
{
	skip_ws(ps);
	const char *c = ps->p;
	if (isdigit((unsigned char)*c)) {
		int64_t v = 0;
		while (isdigit((unsigned char)*c) || (*c == '_' && isdigit((unsigned char)c[1]) &&
						     c > ps->p)) {
			if (*c != '_') {
				if (v > (INT64_MAX - (*c - '0')) / 10) {
					ps->p = c;
					return fail(ps, "integer literal too large");
				}
				v = v * 10 + (*c - '0');
			}
			c++;
		}
		if (is_ident(*c) || *c == '.') {
			ps->p = c;
			return fail(ps, "malformed number");
		}
		ps->p = c;
		int n = new_node(ps, OP_INT);
		if (n >= 0)
			ps->e->n[n].v = v;
		return n;
	}
	if (is_ident_start(*c)) {
		const char *start = c;
		while (is_ident(*c))
			c++;
		size_t len = (size_t)(c - start);
		ps->p = c;
		skip_ws(ps);
		if (*ps->p == '(') {
			static const char *const fns[] = { "max", "min", "abs", "align" };
			int f = -1;
			for (int i = 0; i < 4; i++)
				if (strlen(fns[i]) == len && strncmp(fns[i], start, len) == 0)
					f = i;
			if (f < 0) {
				ps->p = start;
				snprintf(ps->msg, sizeof(ps->msg),
					 "unknown function '%.*s' at column %zu (max, min, abs, align)",
					 (int)len, start, (size_t)(start - ps->s) + 1);
				return -1;
			}
			ps->p++;
			int list[64];
			int nargs = 0;
			skip_ws(ps);
			if (*ps->p != ')') {
				for (;;) {
					if (nargs == 64)
						return fail(ps, "too many arguments");
					int a = parse_or(ps);
					if (a < 0)
						return -1;
					list[nargs++] = a;
					if (accept(ps, ","))
						continue;
					break;
				}
			}
			if (!accept(ps, ")"))
				return fail(ps, "expected ')'");
			if ((f == FN_ABS && nargs != 1) || (f == FN_ALIGN && nargs != 2) ||
			    ((f == FN_MAX || f == FN_MIN) && nargs < 2)) {
				snprintf(ps->msg, sizeof(ps->msg),
					 "%s() takes %s argument%s, got %d", fns[f],
					 f == FN_ABS ? "1" : f == FN_ALIGN ? "2" : "at least 2",
					 f == FN_ABS ? "" : "s", nargs);
				return -1;
			}
			int n = new_node(ps, OP_CALL);
			if (n < 0)
				return -1;
			ps->e->n[n].v = f;
			ps->e->n[n].nargs = nargs;
			ps->e->n[n].args = (int)ps->e->na;
			for (int i = 0; i < nargs; i++)
				if (push_arg(ps, list[i]) < 0)
					return -1;
			return n;
		}
		for (size_t i = 0; i < ps->nvars; i++) {
			if (strlen(ps->vars[i]) == len && strncmp(ps->vars[i], start, len) == 0) {
				int n = new_node(ps, OP_VAR);
				if (n >= 0)
					ps->e->n[n].v = (int64_t)i;
				return n;
			}
		}
		ps->p = start;
		snprintf(ps->msg, sizeof(ps->msg), "unknown name '%.*s' at column %zu", (int)len,
			 start, (size_t)(start - ps->s) + 1);
		return -1;
	}
	if (*c == '(') {
		ps->p++;
		int n = parse_or(ps);
		if (n < 0)
			return -1;
		if (!accept(ps, ")"))
			return fail(ps, "expected ')'");
		return n;
	}
	return fail(ps, *c ? "unexpected character" : "unexpected end of expression");
}

static int parse_power(struct parser *ps)
{
	int a = parse_atom(ps);
	if (a < 0)
		return -1;
	if (accept(ps, "**"))
		return binary(ps, OP_POW, a, parse_unary(ps));
	return a;
}

static int parse_unary_at(struct parser *ps)
{
	skip_ws(ps);
	if (*ps->p == '-' || *ps->p == '+') {
		enum op op = *ps->p == '-' ? OP_NEG : OP_POS;
		ps->p++;
		int a = parse_unary(ps);
		if (a < 0)
			return -1;
		int n = new_node(ps, op);
		if (n >= 0)
			ps->e->n[n].a = a;
		return n;
	}
	return parse_power(ps);
}

static int parse_unary(struct parser *ps)
{
	if (ps->depth >= EXPR_MAX_DEPTH)
		return fail(ps, "expression nested too deeply");
	ps->depth++;
	int r = parse_unary_at(ps);
	ps->depth--;
	return r;
}

static int parse_term(struct parser *ps)
{
	int a = parse_unary(ps);
	while (a >= 0) {
		skip_ws(ps);
		if (ps->p[0] == '*' && ps->p[1] != '*') {
			ps->p++;
			a = binary(ps, OP_MUL, a, parse_unary(ps));
		} else if (ps->p[0] == '/' && ps->p[1] == '/') {
			ps->p += 2;
			a = binary(ps, OP_FLOORDIV, a, parse_unary(ps));
		} else if (ps->p[0] == '/') {
			return fail(ps, "true division '/' is not supported (use '//')");
		} else if (ps->p[0] == '%') {
			ps->p++;
			a = binary(ps, OP_MOD, a, parse_unary(ps));
		} else {
			break;
		}
	}
	return a;
}

static int parse_arith(struct parser *ps)
{
	int a = parse_term(ps);
	while (a >= 0) {
		if (accept(ps, "+"))
			a = binary(ps, OP_ADD, a, parse_term(ps));
		else if (accept(ps, "-"))
			a = binary(ps, OP_SUB, a, parse_term(ps));
		else
			break;
	}
	return a;
}

static int cmp_op(struct parser *ps)
{
	skip_ws(ps);
	static const struct { const char *tok; enum cmp c; } ops[] = {
		{ "<=", CMP_LE }, { ">=", CMP_GE }, { "==", CMP_EQ }, { "!=", CMP_NE },
		{ "<", CMP_LT }, { ">", CMP_GT },
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (accept(ps, ops[i].tok))
			return (int)ops[i].c;
	return -1;
}

static int parse_cmp(struct parser *ps)
{
	int a = parse_arith(ps);
	if (a < 0)
		return -1;
	int c = cmp_op(ps);
	if (c < 0)
		return a;
	int n = new_node(ps, OP_CMP);
	if (n < 0)
		return -1;
	int list[64];
	int k = 0;
	list[k++] = a;
	while (c >= 0) {
		if (k + 2 > 64)
			return fail(ps, "comparison chain too long");
		int b = parse_arith(ps);
		if (b < 0)
			return -1;
		list[k++] = c;
		list[k++] = b;
		c = cmp_op(ps);
	}
	ps->e->n[n].nargs = k;
	ps->e->n[n].args = (int)ps->e->na;
	for (int i = 0; i < k; i++)
		if (push_arg(ps, list[i]) < 0)
			return -1;
	return n;
}

static int parse_not(struct parser *ps)
{
	if (accept_kw(ps, "not")) {
		if (ps->depth >= EXPR_MAX_DEPTH)
			return fail(ps, "expression nested too deeply");
		ps->depth++;
		int a = parse_not(ps);
		ps->depth--;
		if (a < 0)
			return -1;
		int n = new_node(ps, OP_NOT);
		if (n >= 0)
			ps->e->n[n].a = a;
		return n;
	}
	return parse_cmp(ps);
}

static int parse_and(struct parser *ps)
{
	int a = parse_not(ps);
	while (a >= 0 && accept_kw(ps, "and"))
		a = binary(ps, OP_AND, a, parse_not(ps));
	return a;
}

static int parse_or_at(struct parser *ps)
{
	int a = parse_and(ps);
	while (a >= 0 && accept_kw(ps, "or"))
		a = binary(ps, OP_OR, a, parse_and(ps));
	return a;
}

static int parse_or(struct parser *ps)
{
	if (ps->depth >= EXPR_MAX_DEPTH)
		return fail(ps, "expression nested too deeply");
	ps->depth++;
	int r = parse_or_at(ps);
	ps->depth--;
	return r;
}

/*
 * Depth of the compiled tree (the evaluator's recursion): children are
 * created before their parent, so one pass in index order suffices.
 */
static int tree_too_deep(const struct grid_expr *e)
{
	int *d = calloc(e->nn ? e->nn : 1, sizeof(int)), deep = 0;
	if (!d)
		return 1;
	for (size_t i = 0; i < e->nn && !deep; i++) {
		const struct node *n = &e->n[i];
		int m = 0;
		switch (n->op) {
		case OP_INT:
		case OP_VAR:
			break;
		case OP_CMP:
			for (int k = 0; k < n->nargs; k += 2)
				m = d[e->args[n->args + k]] > m ? d[e->args[n->args + k]] : m;
			break;
		case OP_CALL:
			for (int k = 0; k < n->nargs; k++)
				m = d[e->args[n->args + k]] > m ? d[e->args[n->args + k]] : m;
			break;
		case OP_NEG:
		case OP_POS:
		case OP_NOT:
			m = d[n->a];
			break;
		default:
			m = d[n->a] > d[n->b] ? d[n->a] : d[n->b];
			break;
		}
		d[i] = m + 1;
		deep = d[i] > 4 * EXPR_MAX_DEPTH;
	}
	free(d);
	return deep;
}

void grid_expr_free(struct grid_expr *e)
{
	if (!e)
		return;
	free(e->text);
	free(e->n);
	free(e->args);
	free(e);
}

int grid_expr_compile(struct grid_expr **out, const char *text, size_t len,
		      const char *const *vars, size_t nvars, char *msg, size_t msgsz)
{
	*out = NULL;
	struct grid_expr *e = calloc(1, sizeof(*e));
	if (!e || !(e->text = malloc(len + 1))) {
		free(e);
		snprintf(msg, msgsz, "out of memory");
		return -PERFDB_ENOMEM;
	}
	memcpy(e->text, text, len);
	e->text[len] = '\0';
	/* The reference's guard: no attribute access, no dunder names. */
	if (strlen(e->text) != len || strchr(e->text, '.') || strstr(e->text, "__")) {
		snprintf(msg, msgsz, "expression contains forbidden patterns (dots, double "
			 "underscores or NUL bytes)");
		grid_expr_free(e);
		return -PERFDB_EPARSE;
	}
	struct parser ps = { .e = e, .s = e->text, .p = e->text, .vars = vars, .nvars = nvars };
	e->root = parse_or(&ps);
	if (e->root >= 0) {
		skip_ws(&ps);
		if (*ps.p)
			e->root = fail(&ps, "unexpected text after the expression");
		else if (tree_too_deep(e))
			e->root = fail(&ps, "expression too long to evaluate (a chain of over 800 operators)");
	}
	if (e->root < 0) {
		snprintf(msg, msgsz, "%s", ps.msg[0] ? ps.msg : "syntax error");
		grid_expr_free(e);
		return -PERFDB_EPARSE;
	}
	*out = e;
	return 0;
}

const char *grid_expr_text(const struct grid_expr *e)
{
	return e->text;
}

/* Checked int64 arithmetic; *bad set on overflow. */
static int64_t add(int64_t a, int64_t b, const char **bad)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		*bad = "integer overflow";
	return r;
}

static int64_t sub(int64_t a, int64_t b, const char **bad)
{
	int64_t r;
	if (__builtin_sub_overflow(a, b, &r))
		*bad = "integer overflow";
	return r;
}

static int64_t mul(int64_t a, int64_t b, const char **bad)
{
	int64_t r;
	if (__builtin_mul_overflow(a, b, &r))
		*bad = "integer overflow";
	return r;
}

static int64_t floordiv(int64_t a, int64_t b, const char **bad)
{
	if (b == 0) {
		*bad = "integer division by zero";
		return 0;
	}
	if (a == INT64_MIN && b == -1) {
		*bad = "integer overflow";
		return 0;
	}
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static int64_t pymod(int64_t a, int64_t b, const char **bad)
{
	if (b == 0) {
		*bad = "integer modulo by zero";
		return 0;
	}
	if (b == -1)
		return 0;
	int64_t r = a % b;
	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

static int64_t eval(const struct grid_expr *e, int i, const int64_t *vals, const char **bad)
{
	const struct node *n = &e->n[i];
	if (*bad)
		return 0;
	switch (n->op) {
	case OP_INT:
		return n->v;
	case OP_VAR:
		return vals[n->v];
	case OP_NEG:
		return sub(0, eval(e, n->a, vals, bad), bad);
	case OP_POS:
		return eval(e, n->a, vals, bad);
	case OP_NOT:
		return !eval(e, n->a, vals, bad);
	case OP_ADD:
		return add(eval(e, n->a, vals, bad), eval(e, n->b, vals, bad), bad);
	case OP_SUB:
		return sub(eval(e, n->a, vals, bad), eval(e, n->b, vals, bad), bad);
	case OP_MUL:
		return mul(eval(e, n->a, vals, bad), eval(e, n->b, vals, bad), bad);
	case OP_FLOORDIV:
		return floordiv(eval(e, n->a, vals, bad), eval(e, n->b, vals, bad), bad);
	case OP_MOD:
		return pymod(eval(e, n->a, vals, bad), eval(e, n->b, vals, bad), bad);
	case OP_POW: {
		int64_t base = eval(e, n->a, vals, bad), ex = eval(e, n->b, vals, bad), r = 1;
		if (ex < 0) {
			*bad = "negative exponent (the result would not be an integer)";
			return 0;
		}
		for (int64_t k = 0; k < ex && !*bad; k++) {
			r = mul(r, base, bad);
			if (r == 0 || r == 1)
				break;
		}
		return r;
	}
	case OP_AND: {
		int64_t a = eval(e, n->a, vals, bad);
		return a ? eval(e, n->b, vals, bad) : a;
	}
	case OP_OR: {
		int64_t a = eval(e, n->a, vals, bad);
		return a ? a : eval(e, n->b, vals, bad);
	}
	case OP_CMP: {
		const int *args = e->args + n->args;
		int64_t left = eval(e, args[0], vals, bad);
		for (int k = 1; k + 1 < n->nargs; k += 2) {
			int64_t right = eval(e, args[k + 1], vals, bad);
			int ok;
			switch ((enum cmp)args[k]) {
			case CMP_LT: ok = left < right; break;
			case CMP_LE: ok = left <= right; break;
			case CMP_GT: ok = left > right; break;
			case CMP_GE: ok = left >= right; break;
			case CMP_EQ: ok = left == right; break;
			default: ok = left != right; break;
			}
			if (!ok)
				return 0;
			left = right;
		}
		return 1;
	}
	case OP_CALL: {
		const int *args = e->args + n->args;
		int64_t a = eval(e, args[0], vals, bad);
		switch ((enum fn)n->v) {
		case FN_ABS:
			return a < 0 ? sub(0, a, bad) : a;
		case FN_ALIGN: {
			int64_t al = eval(e, args[1], vals, bad);
			/* ((x + a - 1) // a) * a */
			return mul(floordiv(sub(add(a, al, bad), 1, bad), al, bad), al, bad);
		}
		default:
			for (int k = 1; k < n->nargs; k++) {
				int64_t b = eval(e, args[k], vals, bad);
				if (n->v == FN_MAX ? b > a : b < a)
					a = b;
			}
			return a;
		}
	}
	}
	*bad = "bad expression";
	return 0;
}

int grid_expr_eval(const struct grid_expr *e, const int64_t *vals, int64_t *out,
		   const char **why)
{
	const char *bad = NULL;
	int64_t v = eval(e, e->root, vals, &bad);
	if (bad) {
		*why = bad;
		return -PERFDB_EINVAL;
	}
	*out = v;
	return 0;
}
