/* Table-driven option parsing and help (src/cli/opt.h). */
#include "opt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int opt_usage_error(const struct cmd_help *h, const char *fmt, ...)
{
	fprintf(stderr, "usage: %s\n", h->usage);
	fprintf(stderr, "perfdb %s: error: ", h->name);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

int cli_error(const char *cmd, const struct perfdb_err *err)
{
	fprintf(stderr, "perfdb %s: error: %s\n", cmd, err->msg[0] ? err->msg : "unknown error");
	return 1;
}

int cli_oom(const char *cmd)
{
	fprintf(stderr, "perfdb %s: error: out of memory\n", cmd);
	return 1;
}

int cli_print_text(const char *cmd, FILE *f, int rc, struct perfdb_strbuf *sb)
{
	fputs(sb->buf, f);
	fflush(f);
	perfdb_strbuf_reset(sb);
	return rc < 0 ? cli_oom(cmd) : 0;
}

void cli_replaced(const char *cmd, const char *(*path)(const void *ctx, size_t i),
		  const void *ctx, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += path(ctx, i) != NULL;
	if (!k)
		return;
	fprintf(stderr, "perfdb %s: %zu table(s) had been replaced before the error:", cmd, k);
	size_t shown = 0;
	for (size_t i = 0; i < n && shown < 20; i++) {
		const char *p = path(ctx, i);
		if (p)
			fprintf(stderr, "%s %s", shown++ ? "," : "", p);
	}
	if (k > shown)
		fprintf(stderr, " and %zu more", k - shown);
	fputc('\n', stderr);
}

static void print_choices(FILE *f, const char *const *c)
{
	fputc('{', f);
	for (size_t i = 0; c[i]; i++)
		fprintf(f, "%s%s", i ? "," : "", c[i]);
	fputc('}', f);
}

/* Print text word-wrapped to 79 columns, each line indented by 8. */
static void print_wrapped(FILE *f, const char *text)
{
	const int indent = 8, width = 79;
	int col = 0;
	const char *p = text;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *w = p;
		while (*p && *p != ' ')
			p++;
		int len = (int)(p - w);
		if (!len)
			break;
		if (col == 0) {
			fprintf(f, "%*s", indent, "");
			col = indent;
		} else if (col + 1 + len > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else {
			fputc(' ', f);
			col++;
		}
		fwrite(w, 1, (size_t)len, f);
		col += len;
	}
	fputc('\n', f);
}

void opt_print_help(FILE *f, const struct opt *opts, const struct cmd_help *h)
{
	fprintf(f, "usage: %s\n", h->usage);
	if (h->description)
		fprintf(f, "\n%s\n", h->description);
	if (h->positional)
		fprintf(f, "\narguments:\n%s\n", h->positional);
	fprintf(f, "\noptions:\n  -h, --help\n");
	print_wrapped(f, "show this help and exit");
	for (const struct opt *o = opts; o->type != OPT_END; o++) {
		if (o->type == OPT_GROUP) {
			fprintf(f, "\n%s:\n", o->name);
			continue;
		}
		fprintf(f, "  ");
		if (o->short_name)
			fprintf(f, "-%c, ", o->short_name);
		fprintf(f, "--%s", o->name);
		if (o->type != OPT_FLAG) {
			fputc(' ', f);
			if (o->choices)
				print_choices(f, o->choices);
			else
				fputs(o->metavar ? o->metavar : "VALUE", f);
			if (o->type == OPT_LIST)
				fputs(" [...]", f);
		}
		fputc('\n', f);
		print_wrapped(f, o->help);
	}
}

static int in_list(const char *const *l, const char *name)
{
	for (; l && *l; l++)
		if (strcmp(*l, name) == 0)
			return 1;
	return 0;
}

/*
 * Find an option by long name or unique prefix (cmd_help.reference says
 * in which order the candidates are looked at).  Returns NULL when nothing
 * matches or, with *nmatch > 1, on a tie; matches[] then lists up to 8.
 */
static struct opt *find_long(struct opt *opts, const char *const *ref, const char *name,
			     size_t len, struct opt **matches, size_t *nmatch)
{
	*nmatch = 0;
	for (struct opt *o = opts; o->type != OPT_END; o++)
		if (o->type != OPT_GROUP && strlen(o->name) == len &&
		    strncmp(o->name, name, len) == 0)
			return o;
	for (int pass = ref ? 0 : 1; pass < 2; pass++) {
		for (struct opt *o = opts; o->type != OPT_END; o++) {
			if (o->type == OPT_GROUP || strncmp(o->name, name, len) != 0)
				continue;
			if (pass == 0 && !in_list(ref, o->name))
				continue;
			if (*nmatch < 8)
				matches[*nmatch] = o;
			++*nmatch;
		}
		if (*nmatch)
			break;
	}
	return *nmatch == 1 ? matches[0] : NULL;
}

/* $PERFDB_TRACE_OPTIONS=1: say on stderr which option each prefix became. */
static void trace_option(const struct cmd_help *h, const char *given, size_t len,
			 const struct opt *o)
{
	const char *t = getenv("PERFDB_TRACE_OPTIONS");
	if (t && strcmp(t, "1") == 0)
		fprintf(stderr, "perfdb %s: option --%.*s is --%s\n", h->name, (int)len, given,
			o->name);
}

static struct opt *find_short(struct opt *opts, char c)
{
	for (struct opt *o = opts; o->type != OPT_END; o++)
		if (o->type != OPT_GROUP && o->short_name == c)
			return o;
	return NULL;
}

static int set_value(struct opt *o, const struct cmd_help *h, const char *v)
{
	if (o->choices) {
		int ok = 0;
		for (size_t i = 0; o->choices[i]; i++)
			if (strcmp(o->choices[i], v) == 0)
				ok = 1;
		if (!ok) {
			fprintf(stderr, "usage: %s\n", h->usage);
			fprintf(stderr, "perfdb %s: error: argument --%s: invalid choice: '%s' (choose from ",
				h->name, o->name, v);
			for (size_t i = 0; o->choices[i]; i++)
				fprintf(stderr, "%s'%s'", i ? ", " : "", o->choices[i]);
			fprintf(stderr, ")\n");
			return 2;
		}
	}
	if (o->check) {
		struct perfdb_err err;
		perfdb_err_clear(&err);
		if (o->check(v, &err) < 0)
			return opt_usage_error(h, "argument --%s: %s", o->name, err.msg);
	}
	switch (o->type) {
	case OPT_STRING:
		*(const char **)o->dest = v;
		break;
	case OPT_INT: {
		char *end;
		errno = 0;
		long x = strtol(v, &end, 10);
		if (!*v || *end || errno)
			return opt_usage_error(h, "argument --%s: invalid int value: '%s'", o->name, v);
		if (o->has_min && x < o->min)
			return opt_usage_error(h, "argument --%s: must be at least %ld, got %ld",
					       o->name, o->min, x);
		*(long *)o->dest = x;
		break;
	}
	case OPT_DOUBLE: {
		char *end;
		errno = 0;
		double x = strtod(v, &end);
		if (!*v || *end || errno)
			return opt_usage_error(h, "argument --%s: invalid float value: '%s'", o->name, v);
		*(double *)o->dest = x;
		break;
	}
	case OPT_LIST: {
		struct opt_list *l = o->dest;
		const char **nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
		if (!nv) {
			fprintf(stderr, "perfdb %s: error: out of memory\n", h->name);
			return 2;
		}
		l->v = nv;
		l->v[l->n++] = v;
		break;
	}
	default:
		break;
	}
	return 0;
}

static int is_option_token(const char *a)
{
	/* "-5" is a negative number, not an option */
	return a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9') && !(a[1] == '.');
}

/* The option a long flag names (its value after '=' in *inline_val); NULL after a usage error in *rc. */
static struct opt *long_option(struct opt *opts, const struct cmd_help *h, const char *a,
			       const char **inline_val, int *rc)
{
	const char *name = a + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	struct opt *m[8];
	size_t nm;
	struct opt *o = find_long(opts, h->reference, name, len, m, &nm);
	if (nm > 1) {
		/* argparse's wording */
		char list[512];
		size_t w = 0;
		for (size_t k = 0; k < nm && k < 8 && w < sizeof(list); k++)
			w += (size_t)snprintf(list + w, sizeof(list) - w, "%s--%s", k ? ", " : "",
					      m[k]->name);
		*rc = opt_usage_error(h, "ambiguous option: --%.*s could match %s", (int)len, name,
				      list);
		return NULL;
	}
	if (!o) {
		*rc = opt_usage_error(h, "unrecognized arguments: %s", a);
		return NULL;
	}
	trace_option(h, name, len, o);
	if (eq)
		*inline_val = eq + 1;
	return o;
}

/* The values of option o at argv[*i] (consumed as they are taken); 0 or the usage status. */
static int take_values(struct opt *o, const struct cmd_help *h, int argc, char **argv, int *i,
		       const char *inline_val)
{
	int rc;
	if (o->type == OPT_FLAG) {
		if (inline_val)
			return opt_usage_error(h, "argument --%s: ignored explicit argument '%s'",
					       o->name, inline_val);
		*(bool *)o->dest = true;
		return 0;
	}
	if (o->type == OPT_LIST) {
		int got = 0;
		if (inline_val) {
			if ((rc = set_value(o, h, inline_val)))
				return rc;
			got = 1;
		}
		while (*i + 1 < argc && !is_option_token(argv[*i + 1]) &&
		       strcmp(argv[*i + 1], "--") != 0) {
			if ((rc = set_value(o, h, argv[++*i])))
				return rc;
			got = 1;
		}
		if (!got)
			return opt_usage_error(h, "argument --%s: expected at least one argument",
					       o->name);
		return 0;
	}
	const char *v = inline_val;
	if (!v) {
		if (*i + 1 >= argc || (is_option_token(argv[*i + 1])))
			return opt_usage_error(h, "argument --%s: expected one argument", o->name);
		v = argv[++*i];
	}
	return set_value(o, h, v);
}

int opt_parse(int argc, char **argv, struct opt *opts, const struct cmd_help *h,
	      const char **pos, size_t *npos)
{
	*npos = 0;
	int only_pos = 0, rc = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_pos || !is_option_token(a)) {
			if (*npos >= h->max_positional)
				return opt_usage_error(h, "unrecognized arguments: %s", a);
			pos[(*npos)++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			opt_print_help(stdout, opts, h);
			return 1;
		}
		struct opt *o;
		const char *inline_val = NULL;
		if (a[1] == '-') {
			if (!(o = long_option(opts, h, a, &inline_val, &rc)))
				return rc;
		} else {
			if (!(o = find_short(opts, a[1])))
				return opt_usage_error(h, "unrecognized arguments: %s", a);
			if (a[2])
				inline_val = a + 2;
		}
		o->seen = true;
		if ((rc = take_values(o, h, argc, argv, &i, inline_val)))
			return rc;
	}
	for (struct opt *o = opts; o->type != OPT_END; o++)
		if (o->required && !o->seen)
			return opt_usage_error(h, "the following arguments are required: --%s", o->name);
	return 0;
}
