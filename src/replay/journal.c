/*
 * The replay journal: append, read with jansson, index by (table,
 * signature) (src/replay/journal.h gives the format).
 */
#include "replay/journal.h"

#include <errno.h>
#include <stdint.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "perfdb/hash.h"
#include "perfdb/strbuf.h"

#define NONE ((size_t)-1)

void journal_release(struct journal *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free(j->v[i].key);
		free(j->v[i].reason);
	}
	free(j->v);
	free(j->slots);
	memset(j, 0, sizeof(*j));
}

static struct jslot *slot_of(const struct journal *j, const char *key)
{
	size_t m = j->nslots - 1;
	for (size_t h = (size_t)perfdb_fnv1a64(key, strlen(key)) & m;; h = (h + 1) & m)
		if (!j->slots[h].key || strcmp(j->slots[h].key, key) == 0)
			return &j->slots[h];
}

/* Rebuild the index at twice the size (keys point into the entries). */
static int grow_index(struct journal *j)
{
	size_t ns = j->nslots ? 2 * j->nslots : 256;
	struct jslot *old = j->slots;
	size_t on = j->nslots;
	j->slots = calloc(ns, sizeof(*j->slots));
	if (!j->slots) {
		j->slots = old;
		return -PERFDB_ENOMEM;
	}
	j->nslots = ns;
	for (size_t i = 0; i < on; i++)
		if (old[i].key)
			*slot_of(j, old[i].key) = old[i];
	free(old);
	return 0;
}

static int index_entry(struct journal *j, size_t i)
{
	if (2 * (j->nkeys + 1) > j->nslots)
		PERFDB_TRY(grow_index(j));
	struct jslot *s = slot_of(j, j->v[i].key);
	if (!s->key) {
		s->key = j->v[i].key;
		s->last = s->last_ok = NONE;
		j->nkeys++;
	}
	s->last = i;
	if (j->v[i].ok)
		s->last_ok = i;
	return 0;
}

const struct jentry *journal_find(const struct journal *j, const char *key, int ok_only)
{
	if (!j->nslots)
		return NULL;
	const struct jslot *s = slot_of(j, key);
	if (!s->key)
		return NULL;
	size_t i = ok_only ? s->last_ok : s->last;
	return i == NONE ? NULL : &j->v[i];
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/*
 * A count field: absent reads 0; present, it must be an integral number in
 * [0, INT_MAX], else -1 (converting 1e308 to int is undefined behaviour:
 * fuzz_journal's finding).
 */
static int count_of(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	if (!v)
		return 0;
	double d = json_is_number(v) ? json_number_value(v) : -1;
	return d >= 0 && d <= INT_MAX && d == floor(d) ? (int)d : -1;
}

/* One line into an entry; 0 = not an entry (skipped), 1 = filled. */
static int parse_line(const char *line, size_t len, struct jentry *e)
{
	json_error_t je;
	json_t *o = json_loadb(line, len, 0, &je);
	const char *table = json_string_value(json_object_get(o, "table"));
	const char *sig = json_string_value(json_object_get(o, "signature"));
	const char *st = json_string_value(json_object_get(o, "status"));
	const json_t *n = json_object_get(o, "samples");
	int ok = json_is_object(o) && table && sig && st && json_is_integer(n) &&
		 json_integer_value(n) >= 0;
	if (ok) {
		memset(e, 0, sizeof(*e));
		struct perfdb_strbuf k = PERFDB_STRBUF_INIT;
		perfdb_strbuf_addf(&k, "%s\t%s", table, sig);
		e->key = perfdb_strbuf_detach(&k, NULL);
		const char *why = json_string_value(json_object_get(o, "reason"));
		e->reason = why ? strdup(why) : NULL;
		e->ok = strcmp(st, "ok") == 0;
		e->contended = strcmp(st, "contended") == 0;
		e->samples = (size_t)json_integer_value(n);
		e->mean = num(o, "mean");
		e->median = num(o, "median");
		e->min = num(o, "min");
		e->std = num(o, "std");
		e->cpu = num(o, "cpu_ratio");
		e->probe = num(o, "probe_gbs");   /* absent before 2026-11-30 */
		e->retries = count_of(o, "retries");
		e->threads = count_of(o, "threads");   /* absent before 2026-12-02 */
		int d = count_of(o, "discarded"), ol = count_of(o, "outliers");
		int bl = count_of(o, "blocks"), bb = count_of(o, "blocks_bad");
		e->worst_wait = num(o, "worst_wait");
		if (d < 0 || ol < 0 || bl < 0 || bb < 0 || !(e->worst_wait >= 0))
			e->ok = e->contended = 0;
		e->discarded = d > 0 ? (size_t)d : 0;
		e->outliers = ol > 0 ? (size_t)ol : 0;
		e->blocks = bl > 0 ? (size_t)bl : 0;
		e->blocks_bad = bb > 0 ? (size_t)bb : 0;
		const char *kern = json_string_value(json_object_get(o, "kernel"));
		snprintf(e->kernel, sizeof(e->kernel), "%s", kern ? kern : "");
		/* a journal edited or damaged to hold a negative time is not a
		 * measurement (jansson refuses 1e999 and nan outright): the row
		 * is measured again, never written as inf */
		const double t[] = { e->mean, e->median, e->min, e->std };
		for (size_t q = 0; q < 4; q++)
			if (!isfinite(t[q]) || t[q] < 0)
				e->ok = 0;
		/* nor is one whose counts are not counts */
		if (e->retries < 0 || e->threads < 0)
			e->ok = 0;
		if (!e->key || (why && !e->reason))
			ok = -1;
	}
	json_decref(o);
	return ok;
}

int journal_load(const char *path, struct journal *j)
{
	struct perfdb_err ignored;
	int fd = perfdb_open_regular(path, &ignored);   /* a FIFO is no journal */
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	int rc = journal_read(f, j);
	fclose(f);
	return rc;
}

int journal_read(FILE *f, struct journal *j)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;
	while (rc == 0 && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] != '\n')
			break;   /* torn: the process died while writing it */
		if (j->n == j->cap) {
			size_t nc = j->cap ? 2 * j->cap : 64;
			void *p = realloc(j->v, nc * sizeof(*j->v));
			if (!p) {
				rc = -PERFDB_ENOMEM;
				break;
			}
			j->v = p;
			j->cap = nc;
		}
		int got = parse_line(line, (size_t)len, &j->v[j->n]);
		if (got < 0) {
			free(j->v[j->n].key);
			free(j->v[j->n].reason);
			rc = -PERFDB_ENOMEM;
		} else if (got) {
			rc = index_entry(j, j->n);
			j->n++;
		}
	}
	free(line);
	return rc;
}

static void json_str(struct perfdb_strbuf *b, const char *s)
{
	perfdb_strbuf_addch(b, '"');
	for (const unsigned char *q = (const unsigned char *)(s ? s : ""); *q; q++) {
		if (*q == '"' || *q == '\\')
			perfdb_strbuf_addf(b, "\\%c", *q);
		else if (*q < 0x20)
			perfdb_strbuf_addf(b, "\\u%04x", *q);
		else
			perfdb_strbuf_addch(b, (char)*q);
	}
	perfdb_strbuf_addch(b, '"');
}

int journal_append(int fd, const char *op, const char *table, const char *sig,
			  const struct perfdb_engine_row *row)
{
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addstr(&b, "{\"op\":");
	json_str(&b, op);
	perfdb_strbuf_addstr(&b, ",\"table\":");
	json_str(&b, table);
	perfdb_strbuf_addf(&b, ",\"line\":%zu,\"signature\":", row->line);
	json_str(&b, sig);
	perfdb_strbuf_addf(&b, ",\"status\":\"%s\",\"samples\":%zu,\"mean\":%.17g,\"median\":%.17g,"
			   "\"min\":%.17g,\"std\":%.17g,\"cpu_ratio\":%.17g,\"probe_gbs\":%.17g,\"retries\":%d,"
			   "\"threads\":%d,\"discarded\":%zu,\"outliers\":%zu,\"blocks\":%zu,\"blocks_bad\":%zu,"
			   "\"worst_wait\":%.17g,\"kernel\":",
			   row->status == PERFDB_ENGINE_OK ? "ok" : row->status == PERFDB_ENGINE_CONTENDED ? "contended"
												  : "failed",
			   row->samples, row->mean, row->median, row->min, row->std, row->cpu_ratio, row->probe_gbs,
			   row->retries, row->threads, row->discarded, row->outliers, row->blocks, row->blocks_bad,
			   row->worst_wait);
	json_str(&b, row->kernel);
	perfdb_strbuf_addstr(&b, ",\"reason\":");
	json_str(&b, row->reason);
	perfdb_strbuf_addstr(&b, "}\n");
	int rc = 0;
	if (!b.buf) {
		rc = -PERFDB_ENOMEM;
	} else {
		size_t off = 0;
		while (off < b.len) {
			ssize_t w = write(fd, b.buf + off, b.len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = -PERFDB_EIO;
				break;
			}
			off += (size_t)w;
		}
		if (rc == 0 && fsync(fd) < 0)
			rc = -PERFDB_EIO;
	}
	perfdb_strbuf_release(&b);
	return rc;
}

