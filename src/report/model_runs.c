/*
 * The run records the report reads (docs/replay.md "Outputs"): each native
 * microbench run leaves microbench_env_<ts>.txt (its host= is the device
 * that measured) and microbench_rows_<ts>.csv (per row: Operator, Line,
 * Status, Probe(GB/s)).  From them the report knows which device measured
 * a microbench duration, and which rows failed or ran under contention.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "perfdb/fsio.h"
#include "perfdb/schema.h"
#include "perfdb/table.h"

/* value of "key=" in an env record, or NULL (pointer into text, up to the newline). */
static const char *env_value(const char *text, const char *key, size_t *len)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			const char *v = p + kl + 1;
			*len = strcspn(v, "\r\n");
			return v;
		}
	}
	return NULL;
}

static int cmp_row(const void *a, const void *b)
{
	const struct report_run_row *x = a, *y = b;
	int c = strcmp(x->op, y->op);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int add_rows(struct report_runs *rr, const char *path, const char *host, double ref, size_t *cap,
		    struct perfdb_err *err)
{
	struct perfdb_table t;
	perfdb_table_init(&t);
	static const char *const need[] = { "Operator", "Line", "Status" };
	long col[3] = { -1, -1, -1 };
	int rc = perfdb_table_load_cols(&t, path, "a run record", need, 3, col,
					"needs Operator, Line, Status", err);
	long co = col[0], cl = col[1], cs = col[2], cp = perfdb_table_col(&t, "Probe(GB/s)");
	long cn = perfdb_table_col(&t, "Noise");   /* absent before 2026-12-06 */
	for (size_t i = 0; rc == 0 && i < t.nrows; i++) {
		const char *st = perfdb_table_get(&t, i, cs);
		bool ok = strcmp(st, "ok") == 0, failed = strcmp(st, "failed") == 0;
		bool unwritten = strcmp(st, "contended") == 0;
		if (!ok && !failed && !unwritten)
			continue;   /* skipped: the run did not measure the row */
		if (rr->n == *cap) {
			size_t nc = *cap ? 2 * *cap : 64;
			struct report_run_row *v = realloc(rr->v, nc * sizeof(*v));
			if (!v) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			rr->v = v;
			*cap = nc;
		}
		struct report_run_row *x = &rr->v[rr->n];
		double probe = cp < 0 ? 0 : strtod(perfdb_table_get(&t, i, cp), NULL);
		x->line = strtoul(perfdb_table_get(&t, i, cl), NULL, 10);
		x->seq = rr->n;
		x->failed = failed;
		/* contended: left unwritten by the scheduler's judgement, or written under a low bandwidth probe */
		x->unwritten = unwritten;
		x->contended = unwritten || (ok && probe > 0 && ref > 0 && probe < (1.0 - PERFDB_PROBE_TOLERANCE) * ref);
		const char *nz = cn < 0 ? "" : perfdb_table_get(&t, i, cn);
		char *end;
		double noise = strtod(nz, &end);
		x->noise = ok && end != nz && *end == '%' && noise >= 0 ? noise / 100.0 : -1;
		x->host = host;
		if (!(x->op = strdup(perfdb_table_get(&t, i, co)))) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		rr->n++;
	}
	perfdb_table_release(&t);
	return rc;
}

int report_runs_load(struct report_runs *rr, const char *dbdir, struct perfdb_err *err)
{
	memset(rr, 0, sizeof(*rr));
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/reports", dbdir);
	char **envs;
	size_t n, cap = 0;
	if (report_list_dir(dir, "microbench_env_", ".txt", false, &envs, &n) < 0)
		return 0;   /* no reports directory: no run record */
	int rc = 0;
	if (n && !(rr->hosts = calloc(n, sizeof(*rr->hosts))))
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char path[4400], rows[4400];
		snprintf(path, sizeof(path), "%s/%s", dir, envs[i]);
		/* microbench_env_<ts>.txt -> microbench_rows_<ts>.csv */
		size_t tl = strlen(envs[i]) - strlen("microbench_env_") - strlen(".txt");
		snprintf(rows, sizeof(rows), "%s/microbench_rows_%.*s.csv", dir, (int)tl,
			 envs[i] + strlen("microbench_env_"));
		struct perfdb_strbuf text = PERFDB_STRBUF_INIT;
		if ((rc = perfdb_file_read_all(path, &text, err)) < 0) {
			perfdb_strbuf_release(&text);
			break;
		}
		size_t hl = 0, rl = 0;
		/* the reference the run judged its rows against: the machine's quiet figure, else its own median */
		const char *h = env_value(text.buf, "host", &hl), *ref = env_value(text.buf, "probe_quiet_gbs", &rl);
		if (!ref)
			ref = env_value(text.buf, "probe_median_gbs", &rl);
		double refv = ref ? strtod(ref, NULL) : 0;
		rr->hosts[rr->nruns] = h ? strndup(h, hl) : NULL;
		perfdb_strbuf_release(&text);
		if (h && !rr->hosts[rr->nruns]) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		rr->nruns++;
		if (access(rows, F_OK) == 0)
			rc = add_rows(rr, rows, rr->hosts[rr->nruns - 1], refv, &cap, err);
	}
	report_free_list(envs, n);
	if (rc == 0 && rr->n)
		qsort(rr->v, rr->n, sizeof(*rr->v), cmp_row);
	return rc;
}

void report_runs_release(struct report_runs *rr)
{
	for (size_t i = 0; i < rr->n; i++)
		free(rr->v[i].op);
	for (size_t i = 0; i < rr->nruns; i++)
		free(rr->hosts[i]);
	free(rr->v);
	free(rr->hosts);
	memset(rr, 0, sizeof(*rr));
}

const struct report_run_row *report_runs_find(const struct report_runs *rr, const char *op, size_t line)
{
	/* the last of the (op, line) run in the sorted records is the newest */
	size_t lo = 0, hi = rr->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct report_run_row *x = &rr->v[mid];
		int c = strcmp(x->op, op);
		if (c < 0 || (c == 0 && x->line <= line))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct report_run_row *x = &rr->v[lo - 1];
	return strcmp(x->op, op) == 0 && x->line == line ? x : NULL;
}
