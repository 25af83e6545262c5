/*
 * File names of the tables a trace names (docs/chrome_trace.md "Table
 * names"; issue 47 item 4): readable and shell-safe, the name the trace
 * spelled kept in the table's `Trace Name` column, and a short hash only
 * where two names would share a file.
 *
 * The readable form of an op or kernel name: a C++ kernel's return type,
 * template arguments and parameter list are dropped (`void
 * at::native::(anonymous namespace)::vectorized_elementwise_kernel<4,
 * …>(int, …)` -> `at.native.vectorized_elementwise_kernel`), `::` becomes
 * `.`, every byte outside [A-Za-z0-9._+-] becomes `_` (runs of them one),
 * a leading `.` or `-` and a trailing `.` go (no hidden file, nothing a
 * shell reads as a flag).  A name longer than PERFDB_TRACE_NAME_MAX keeps its readable head
 * and ends in `~` and 8 hex digits of a hash of the whole trace name, as
 * does a name whose readable form another trace name already holds.
 *
 * Which file a trace name writes to, in order: a table an older perfdb
 * wrote under the one-to-one per-op rule (`aten.add%2ETensor.csv`) keeps
 * its rows; else the readable name when that file is free, holds this
 * trace name, or predates the column; else the readable name with the
 * hash.  A run's own choices count as held (claims), so two names of one
 * run never share a file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfdb/csv.h"
#include "perfdb/hash.h"
#include "perfdb/table.h"
#include "parse/parse.h"

static int safe_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '+';
}

static int add_hash(struct perfdb_strbuf *out, const char *orig, size_t len)
{
	uint64_t h = perfdb_fnv1a64(orig, len);
	return perfdb_strbuf_addf(out, "~%08llx", (unsigned long long)(h & 0xffffffffu));
}

int perfdb_trace_readable_name(const char *orig, size_t len, struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	const char *s = orig, *e = orig + len;
	while (s < e && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		e--;
	if ((size_t)(e - s) > 5 && memcmp(s, "void ", 5) == 0)
		s += 5;   /* a kernel's return type */
	static const char anon[] = "(anonymous namespace)";
	const size_t alen = sizeof(anon) - 1;
	/* the qualified name: up to the template arguments or the parameter list */
	const char *cut = e;
	for (const char *p = s; p < e; p++) {
		if (*p == '(' && (size_t)(e - p) >= alen && memcmp(p, anon, alen) == 0) {
			p += alen - 1;
			continue;
		}
		if ((*p == '<' || *p == '(') && p > s) {
			cut = p;
			break;
		}
	}
	int pending = 0;   /* a run of unsafe bytes, written as one '_' */
	for (const char *p = s; p < cut; p++) {
		if ((size_t)(cut - p) >= alen && memcmp(p, anon, alen) == 0) {
			p += alen - 1;
			if (cut - p > 2 && p[1] == ':' && p[2] == ':')
				p += 2;
			continue;
		}
		if (p[0] == ':' && p + 1 < cut && p[1] == ':') {
			PERFDB_TRY(perfdb_strbuf_addch(out, '.'));
			pending = 0;
			p++;
			continue;
		}
		if (!safe_byte((unsigned char)*p)) {
			pending = 1;
			continue;
		}
		if (pending && out->len && out->buf[out->len - 1] != '_')
			PERFDB_TRY(perfdb_strbuf_addch(out, '_'));
		pending = 0;
		PERFDB_TRY(perfdb_strbuf_addch(out, *p));
	}
	/* no hidden file, nothing a shell reads as a flag; an op's own '_' stays (aten::add_) */
	size_t a = 0, b = out->len;
	while (a < b && (out->buf[a] == '.' || out->buf[a] == '-'))
		a++;
	while (b > a && out->buf[b - 1] == '.')
		b--;
	memmove(out->buf, out->buf + a, b - a);
	out->len = b - a;
	if (out->buf)
		out->buf[out->len] = '\0';
	if (!out->len)
		return perfdb_strbuf_addstr(out, "UNKNOWN_OP");
	if (out->len > PERFDB_TRACE_NAME_MAX) {
		out->len = PERFDB_TRACE_NAME_MAX;
		while (out->len && out->buf[out->len - 1] == '.')
			out->len--;
		out->buf[out->len] = '\0';
		return add_hash(out, orig, len);
	}
	return 0;
}

static int file_exists(const char *dir, const char *stem, struct perfdb_strbuf *path)
{
	perfdb_strbuf_reset(path);
	if (perfdb_strbuf_addf(path, "%s/%s.csv", dir, stem) < 0)
		return -PERFDB_ENOMEM;
	struct stat st;
	return lstat(path->buf, &st) == 0;
}

/*
 * The Trace Name of the table at path, into out: 1 when the table has the
 * column (an empty table: ""), 0 when it predates it.  A table that does not
 * read is left to the writer, whose load names the fault.
 */
static int table_trace_name(const char *path, struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	struct perfdb_err ignore;
	struct perfdb_csv_reader *r;
	if (perfdb_csv_open(&r, path, PERFDB_CSV_UTF8, &ignore) < 0)
		return 0;
	struct perfdb_table t;
	perfdb_table_init(&t);
	int rc = 0;
	if (perfdb_table_read_header(&t, r, &ignore) == 0) {
		long c = perfdb_table_col(&t, PERFDB_PARSE_COL_TRACE_NAME);
		if (c >= 0) {
			rc = 1;
			if (perfdb_table_read_row(&t, r, &ignore) == 1 &&
			    perfdb_strbuf_addstr(out, perfdb_table_get(&t, 0, c)) < 0)
				rc = -PERFDB_ENOMEM;
		}
	}
	perfdb_csv_close(r);
	perfdb_table_release(&t);
	return rc;
}

void perfdb_trace_claims_release(struct perfdb_trace_claims *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].stem);
		free(c->v[i].name);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static const char *claimed(const struct perfdb_trace_claims *c, const char *stem)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (strcmp(c->v[i].stem, stem) == 0)
			return c->v[i].name;
	return NULL;
}

static int claim(struct perfdb_trace_claims *c, const char *stem, const char *name)
{
	if (!c || claimed(c, stem))
		return 0;
	void *v = realloc(c->v, (c->n + 1) * sizeof(*c->v));
	if (!v)
		return -PERFDB_ENOMEM;
	c->v = v;
	c->v[c->n].stem = strdup(stem);
	c->v[c->n].name = strdup(name);
	if (!c->v[c->n].stem || !c->v[c->n].name) {
		free(c->v[c->n].stem);
		free(c->v[c->n].name);
		return -PERFDB_ENOMEM;
	}
	c->n++;
	return 0;
}

enum { OTHER = 0, HOLDS = 1, FREE = 2 };

/* Whether the file stem holds name (this name, or a table older than the
 * column), another name holds it, or it is free. */
static int holds(const char *dir, const char *stem, const char *name,
		 const struct perfdb_trace_claims *c, struct perfdb_strbuf *path,
		 struct perfdb_strbuf *tn)
{
	const char *by = claimed(c, stem);
	if (by)
		return strcmp(by, name) == 0 ? HOLDS : OTHER;
	int ex = file_exists(dir, stem, path);
	if (ex <= 0)
		return ex < 0 ? ex : FREE;
	int has = table_trace_name(path->buf, tn);
	if (has < 0)
		return has;
	return !has || tn->len == 0 || strcmp(tn->buf, name) == 0 ? HOLDS : OTHER;
}

/* The readable name with the hash of name, unless it carries one already (cut to fit). */
static int hashed(struct perfdb_strbuf *out, const char *name)
{
	if (strchr(out->buf, '~'))
		return 0;
	if (out->len > PERFDB_TRACE_NAME_MAX - 9)
		out->len = PERFDB_TRACE_NAME_MAX - 9;
	out->buf[out->len] = '\0';
	return add_hash(out, name, strlen(name));
}

int perfdb_trace_table_stem(const char *dir, const char *name, const char *legacy,
			    struct perfdb_trace_claims *claims, struct perfdb_strbuf *out)
{
	/* a name this run placed already stays where it went */
	for (size_t i = 0; claims && i < claims->n; i++)
		if (strcmp(claims->v[i].name, name) == 0) {
			perfdb_strbuf_reset(out);
			return perfdb_strbuf_addstr(out, claims->v[i].stem);
		}
	struct perfdb_strbuf path = PERFDB_STRBUF_INIT, tn = PERFDB_STRBUF_INIT;
	int rc = perfdb_trace_readable_name(name, strlen(name), out);
	int legacy_there = 0;
	if (rc == 0 && legacy && strcmp(legacy, out->buf) != 0 && !claimed(claims, legacy))
		rc = legacy_there = file_exists(dir, legacy, &path);
	if (legacy_there > 0) {
		/* a table an older perfdb named by the one-to-one rule keeps its rows */
		perfdb_strbuf_reset(out);
		rc = perfdb_strbuf_addstr(out, legacy);
	} else if (rc == 0) {
		int h = holds(dir, out->buf, name, claims, &path, &tn);
		rc = h < 0 ? h : h == OTHER ? hashed(out, name) : 0;
	}
	if (rc == 0)
		rc = claim(claims, out->buf, name);
	perfdb_strbuf_release(&path);
	perfdb_strbuf_release(&tn);
	return rc < 0 ? rc : 0;
}

int perfdb_trace_table_find(const char *dir, const char *name, struct perfdb_strbuf *out)
{
	struct perfdb_strbuf path = PERFDB_STRBUF_INIT, tn = PERFDB_STRBUF_INIT;
	int rc = perfdb_trace_readable_name(name, strlen(name), out);
	if (rc == 0) {
		int h = holds(dir, out->buf, name, NULL, &path, &tn);
		if (h < 0)
			rc = h;
		else if (h == HOLDS)
			rc = 1;
		else if ((rc = hashed(out, name)) == 0)
			rc = file_exists(dir, out->buf, &path);
	}
	perfdb_strbuf_release(&path);
	perfdb_strbuf_release(&tn);
	return rc;
}
