/*
 * Merging aggregated kernel keys into database tables (docs/spec/parse.md §4,
 * Decision 1 "merge, never overwrite", Decision 5 "Profiling Count").
 *
 * Row identity inside a table is the aggregation key without the type:
 * (Input Shapes, Input Data Types, Input Formats, Output Shapes), cells
 * compared verbatim but for equivalent format spellings (format_key.c),
 * which a matched row keeps as it had them.  A matched row gets the new profiling statistics and
 * the profile's OP State / Accelerator Core / output dtypes and formats;
 * every other cell (Average Duration(us), MicroBench …, unknown columns) is
 * kept, and `Runtime …` cells are only filled where empty.  New keys are
 * appended in first-appearance order; rows the profile lacks are kept.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "parse_internal.h"
#include "parse/fia.h"
#include "perfdb/hash.h"
#include "perfdb/schema.h"
#include "perfdb/stats.h"
#include "perfdb/table.h"

#define PROF_COUNTER(n) PERFDB_COL_PROF_COUNTER_PREFIX n,
const char *const perfdb_parse_columns[PERFDB_PARSE_NBASE] = {
	PERFDB_SCHEMA_BASE_COLS,
	PERFDB_COL_PROF_AVG, PERFDB_COL_PROF_MEDIAN, PERFDB_COL_PROF_STD,
	PERFDB_SCHEMA_COUNTERS(PROF_COUNTER)
};
#undef PROF_COUNTER

int perfdb_parse_sanitize_name(const char *type, struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	const char *s = type, *e = type + strlen(type);
	while (s < e && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		e--;
	if (s == e)
		return perfdb_strbuf_addstr(out, "UNKNOWN_TYPE");
	/* a leading '.' would make a hidden table that every directory walk
	 * (grid, check, microbench) skips, as it skips temporary files */
	for (const char *first = s; s < e; s++) {
		unsigned char c = (unsigned char)*s;
		int bad = c < 0x20 || strchr("<>:\"/\\|?*", c) != NULL || (s == first && c == '.');
		PERFDB_TRY(perfdb_strbuf_addch(out, bad ? '_' : c));
	}
	/*
	 * GPU kernel names (C++ templates) run to thousands of bytes, past the
	 * 255-byte file name limit: keep a readable prefix and make it unique
	 * with a hash of the whole name.  200 leaves room for ".csv" and the
	 * temporary-file decoration of an atomic write.
	 */
	if (out->len > PERFDB_PARSE_NAME_MAX) {
		uint64_t h = perfdb_fnv1a64(out->buf, out->len);
		size_t keep = PERFDB_PARSE_NAME_MAX - 17;
		while (keep && ((unsigned char)out->buf[keep] & 0xC0) == 0x80)
			keep--;   /* never cut a UTF-8 sequence */
		out->len = keep;
		out->buf[keep] = '\0';
		PERFDB_TRY(perfdb_strbuf_addf(out, "~%016llx", (unsigned long long)h));
	}
	return 0;
}

int perfdb_parse_op_table_name(const char *op, size_t len, struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)op[i];
		if (c == ':' && i + 1 < len && op[i + 1] == ':' && i > 0) {
			PERFDB_TRY(perfdb_strbuf_addch(out, '.'));
			i++;
		} else if (c < 0x20 || c == 0x7f || strchr("<>:\"/\\|?*.%", c) ||
			   (c == ' ' && (i == 0 || i + 1 == len))) {
			/* edge spaces too: the table writer trims them */
			PERFDB_TRY(perfdb_strbuf_addf(out, "%%%02X", c));
		} else {
			PERFDB_TRY(perfdb_strbuf_addch(out, (char)c));
		}
	}
	return 0;
}

void perfdb_parse_result_release(struct perfdb_parse_result *r)
{
	for (size_t i = 0; i < r->ntables; i++) {
		free(r->tables[i].path);
		free(r->tables[i].type);
	}
	free(r->tables);
	for (size_t i = 0; i < r->ntr; i++)
		free(r->tr[i].path);
	free(r->tr);
	for (size_t i = 0; i < r->ndbs; i++) {
		free(r->dbs[i].device);
		free(r->dbs[i].outdir);
	}
	free(r->dbs);
	memset(r, 0, sizeof(*r));
}

/* One output file and the groups that go into it. */
struct outfile {
	char *name;          /* sanitized */
	size_t *groups;
	size_t n, cap;
	int fia;             /* holds FusedInferAttentionScore rows */
	int kern;            /* holds per-op trace rows: a Kernels column */
	int trace;           /* named from a trace: a Trace Name column */
	int strides;         /* a row with strided inputs: an Input Strides column */
	struct perfdb_table t;
	int exists;
};

static int fmt6(double v, char *buf, size_t cap)
{
	return perfdb_stats_format6(v, buf, cap) < 0 ? -1 : 0;
}

/* Our value for each column of the output (NULL = not ours to set). */
struct rowvals {
	const char *v[PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS + 4];
	char num[3 + PERFDB_NCOUNTERS + 1][40];
};

static void group_values(const struct perfdb_agg_group *g, const char *const *fia,
			 struct rowvals *rv)
{
	const char **v = rv->v;
	v[0] = g->op_state;
	v[1] = g->accel_core;
	v[2] = g->in_shapes;
	v[3] = g->in_dtypes;
	v[4] = g->in_formats;
	v[5] = g->out_shapes;
	v[6] = g->out_dtypes;
	v[7] = g->out_formats;
	double stats[3] = { g->mean, g->median, g->std };
	for (int i = 0; i < 3; i++) {
		rv->num[i][0] = '\0';
		if (g->n)
			fmt6(stats[i], rv->num[i], sizeof(rv->num[i]));
		v[8 + i] = rv->num[i];
	}
	for (int c = 0; c < PERFDB_NCOUNTERS; c++) {
		char *b = rv->num[3 + c];
		b[0] = '\0';
		if (g->cn[c])
			fmt6((g->csum[c] + g->ccomp[c]) / (double)g->cn[c], b, sizeof(rv->num[0]));
		v[11 + c] = b;
	}
	for (int c = 0; c < PERFDB_FIA_NCOLS; c++)
		v[PERFDB_PARSE_NBASE + c] = fia ? fia[c] : "";
	snprintf(rv->num[3 + PERFDB_NCOUNTERS], sizeof(rv->num[0]), "%zu", g->n);
	v[PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS] = rv->num[3 + PERFDB_NCOUNTERS];
	v[PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS + 1] = g->kernels;
	v[PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS + 2] = g->trace_name;
	v[PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS + 3] = g->in_strides;
}

static const char *col_of(size_t i)
{
	if (i < PERFDB_PARSE_NBASE)
		return perfdb_parse_columns[i];
	if (i < PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS)
		return perfdb_fia_columns[i - PERFDB_PARSE_NBASE];
	if (i == PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS)
		return PERFDB_COL_PROF_COUNT;
	if (i == PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS + 1)
		return PERFDB_PARSE_COL_KERNELS;
	if (i == PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS + 2)
		return PERFDB_PARSE_COL_TRACE_NAME;
	return PERFDB_COL_IN_STRIDES;
}

#define NOUT (PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS + 4)
#define COL_COUNT (NOUT - 4)
#define COL_KERNELS (NOUT - 3)
#define COL_TRACE (NOUT - 2)
#define COL_STRIDES (NOUT - 1)

static int is_fia_col(size_t i)
{
	return i >= PERFDB_PARSE_NBASE && i < PERFDB_PARSE_NBASE + PERFDB_FIA_NCOLS;
}

/* A column this file carries: FIA columns only in FIA tables, Kernels only
 * in per-op trace tables. */
static int wanted(const struct outfile *of, size_t i)
{
	if (is_fia_col(i))
		return of->fia;
	if (i == COL_KERNELS)
		return of->kern;
	if (i == COL_TRACE)
		return of->trace;
	if (i == COL_STRIDES)
		return of->strides;
	return 1;
}

/* Two Input/Output Formats cells that spell the same formats (ND, FORMAT_ND). */
static int same_format(const char *a, const char *b)
{
	struct perfdb_strbuf x = PERFDB_STRBUF_INIT, y = PERFDB_STRBUF_INIT;
	int same = perfdb_format_key_str(a, &x) == 0 && perfdb_format_key_str(b, &y) == 0 &&
		   strcmp(x.buf ? x.buf : "", y.buf ? y.buf : "") == 0;
	perfdb_strbuf_release(&x);
	perfdb_strbuf_release(&y);
	return same;
}

static int row_key(const struct perfdb_table *t, size_t r, const long *ci,
		   struct perfdb_strbuf *sb)
{
	perfdb_strbuf_reset(sb);
	static const int kc[4] = { 2, 3, 4, 5 };
	for (int i = 0; i < 4; i++) {
		if (i)
			PERFDB_TRY(perfdb_strbuf_addch(sb, '\x1f'));
		const char *cell = perfdb_table_get(t, r, ci[kc[i]]);
		/* formats in their key form, as the aggregator keys them */
		PERFDB_TRY(kc[i] == 4 ? perfdb_format_key_str(cell, sb) : perfdb_strbuf_addstr(sb, cell));
	}
	return 0;
}

/* Load or create the table, make sure our columns exist, merge the groups. */
static int merge_file(struct outfile *of, const char *path, const struct perfdb_agg *agg,
		      const struct perfdb_fia *fia, struct perfdb_parse_table *res,
		      struct perfdb_err *err)
{
	int rc;
	perfdb_table_init(&of->t);
	/* lstat, not open: a FIFO named like the table must not block us;
	 * perfdb_table_load then refuses anything but a regular file */
	struct stat st;
	of->exists = lstat(path, &st) == 0;
	res->created = !of->exists;
	if (of->exists) {
		PERFDB_TRY(perfdb_table_load(&of->t, path, err));
	} else {
		const char *names[NOUT];
		size_t n = 0;
		for (size_t i = 0; i < NOUT; i++)
			if (wanted(of, i))
				names[n++] = col_of(i);
		PERFDB_TRY(perfdb_table_set_header(&of->t, names, n, err));
		of->t.name = strdup(path);
	}
	long ci[NOUT];
	for (size_t i = 0; i < NOUT; i++) {
		ci[i] = perfdb_table_col(&of->t, col_of(i));
		if (ci[i] < 0 && wanted(of, i)) {
			long at = perfdb_table_insert_col(&of->t, col_of(i), of->t.ncols, err);
			if (at < 0)
				return (int)at;
			ci[i] = at;
		}
	}
	/* index existing rows; the first row of a key wins, as in writeback */
	struct perfdb_sig_index ix;
	struct perfdb_strbuf key = PERFDB_STRBUF_INIT;
	perfdb_sig_index_init(&ix);
	rc = 0;
	for (size_t r = 0; r < of->t.nrows && rc == 0; r++)
		if (row_key(&of->t, r, ci, &key) < 0 || perfdb_sig_index_add(&ix, key.buf, r) < 0)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	struct rowvals rv;
	for (size_t k = 0; k < of->n && rc == 0; k++) {
		const struct perfdb_agg_group *g = perfdb_agg_group(agg, of->groups[k]);
		const char *const *meta = NULL;
		if (fia && strcmp(g->type, PERFDB_FIA_TYPE) == 0)
			meta = perfdb_fia_lookup(fia, g->in_shapes, g->out_shapes);
		group_values(g, meta, &rv);
		perfdb_strbuf_reset(&key);
		perfdb_strbuf_addf(&key, "%s\x1f%s\x1f", g->in_shapes, g->in_dtypes);
		perfdb_format_key_str(g->in_formats, &key);
		perfdb_strbuf_addf(&key, "\x1f%s", g->out_shapes);
		const struct perfdb_sig_index_entry *e = perfdb_sig_index_find(&ix, key.buf);
		size_t r;
		int fresh = 0;
		if (e) {
			r = e->row;
		} else {
			long nr = perfdb_table_append_row(&of->t, err);
			if (nr < 0) {
				rc = (int)nr;
				break;
			}
			r = (size_t)nr;
			fresh = 1;
			if (perfdb_sig_index_add(&ix, key.buf, r) < 0) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
		}
		int changed = 0;
		for (size_t i = 0; i < NOUT && rc == 0; i++) {
			if (ci[i] < 0)
				continue;
			const char *val = rv.v[i];
			const char *cur = perfdb_table_get(&of->t, r, ci[i]);
			/* an existing cell is never blanked, and runtime cells
			 * that already hold a value are kept (Decision 1) */
			if (!fresh && !val[0])
				continue;
			/* a key without a valid sample leaves the old statistics and
			 * their count together */
			if (!fresh && !g->n && (i == COL_COUNT || i == COL_KERNELS))
				continue;
			if (!fresh && is_fia_col(i) && cur[0])
				continue;
			/* the row keeps its own spelling of an equivalent format (ND = FORMAT_ND) */
			if (!fresh && (i == 4 || i == 7) && same_format(cur, val))
				continue;
			if (strcmp(cur, val) != 0) {
				rc = perfdb_table_set(&of->t, r, (size_t)ci[i], val, strlen(val), err);
				changed = 1;
			}
		}
		if (fresh)
			res->added++;
		else if (changed)
			res->updated++;
	}
	res->groups = of->n;
	perfdb_strbuf_release(&key);
	perfdb_sig_index_release(&ix);
	return rc;
}

/* The comm tables in the run's summary, after the kernel tables (from slot
 * base of res->tables, which has room for them). */
static int comm_entries(const struct perfdb_comm_out cout[PERFDB_COMM_NOPS], const char *outdir,
			struct perfdb_parse_result *res, size_t base, struct perfdb_err *err)
{
	size_t n = 0;
	for (int op = 0; op < PERFDB_COMM_NOPS; op++) {
		const struct perfdb_comm_out *co = &cout[op];
		if (!co->used)
			continue;
		if (co->raw) {
			res->comm_raw++;
			continue;
		}
		struct perfdb_parse_table *t = &res->tables[base + n++];
		res->ntables++;
		if (asprintf(&t->path, "%s/%s", outdir, perfdb_comm_op_file((enum perfdb_comm_op)op)) < 0) {
			t->path = NULL;
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		}
		t->type = strdup(perfdb_comm_op_prefix((enum perfdb_comm_op)op));
		if (!t->type)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		t->groups = co->groups;
		t->added = co->added;
		t->updated = co->updated;
		t->created = !co->exists;
	}
	return 0;
}

int perfdb_parse_write_tables(const char *outdir, const struct perfdb_agg *agg,
			      const struct perfdb_comm_agg *comm,
			      const struct perfdb_fia *fia, double lock_timeout,
			      const struct perfdb_opmap_opts *opmap,
			      struct perfdb_parse_result *res, struct perfdb_err *err)
{
	struct outfile *files = NULL;
	size_t nfiles = 0, cap = 0;
	struct perfdb_strbuf name = PERFDB_STRBUF_INIT, path = PERFDB_STRBUF_INIT,
			     tstem = PERFDB_STRBUF_INIT;
	struct perfdb_trace_claims claims = { 0 };
	struct perfdb_lock lock = PERFDB_LOCK_INIT;
	int rc = 0;

	/* under the lock from here: which file a trace's name takes depends on the tables there */
	rc = perfdb_mkdir_p(outdir, err);
	if (rc == 0)
		rc = perfdb_lock_acquire(&lock, outdir, lock_timeout, err);
	/* group keys by output file, in first-appearance order */
	for (size_t i = 0; i < perfdb_agg_ngroups(agg) && rc == 0; i++) {
		const struct perfdb_agg_group *g = perfdb_agg_group(agg, i);
		if ((rc = perfdb_parse_sanitize_name(g->type, &name)) < 0)
			break;
		/* a table a trace names: readable; a name given before (name) is kept */
		if (g->trace_name[0]) {
			if ((rc = perfdb_trace_table_stem(outdir, g->trace_name, name.buf, &claims, &tstem)) < 0)
				break;
			perfdb_strbuf_reset(&name);
			if ((rc = perfdb_strbuf_addstr(&name, tstem.buf)) < 0)
				break;
		}
		size_t f = 0;
		while (f < nfiles && strcmp(files[f].name, name.buf) != 0)
			f++;
		if (f == nfiles) {
			if (nfiles == cap) {
				cap = cap ? cap * 2 : 32;
				struct outfile *nf = realloc(files, cap * sizeof(*nf));
				if (!nf) {
					rc = -PERFDB_ENOMEM;
					break;
				}
				files = nf;
			}
			memset(&files[nfiles], 0, sizeof(files[0]));
			files[nfiles].name = strdup(name.buf);
			if (!files[nfiles].name) {
				rc = -PERFDB_ENOMEM;
				break;
			}
			nfiles++;
		}
		struct outfile *of = &files[f];
		if (of->n == of->cap) {
			of->cap = of->cap ? of->cap * 2 : 16;
			size_t *ng = realloc(of->groups, of->cap * sizeof(*ng));
			if (!ng) {
				rc = -PERFDB_ENOMEM;
				break;
			}
			of->groups = ng;
		}
		of->groups[of->n++] = i;
		if (strcmp(g->type, PERFDB_FIA_TYPE) == 0)
			of->fia = 1;
		if (g->kernels[0])
			of->kern = 1;
		if (g->trace_name[0])
			of->trace = 1;
		if (g->in_strides[0])
			of->strides = 1;
	}
	if (rc == -PERFDB_ENOMEM)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	perfdb_trace_claims_release(&claims);
	perfdb_strbuf_release(&tstem);

	/* appended: a run writes one database per device */
	size_t base = res->ntables;
	struct perfdb_parse_table *nt = realloc(res->tables,
						(base + nfiles + PERFDB_COMM_NOPS + 1) * sizeof(*nt));
	if (rc == 0 && !nt)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (nt) {
		res->tables = nt;
		memset(nt + base, 0, (nfiles + PERFDB_COMM_NOPS + 1) * sizeof(*nt));
	}
	struct perfdb_comm_out cout[PERFDB_COMM_NOPS];
	size_t cbase = base + nfiles;
	if (rc == 0)
		rc = perfdb_comm_tables_merge(comm, outdir, cout, err);
	else
		perfdb_comm_tables_merge(NULL, outdir, cout, err);
	/* phase 1: everything in memory; any error leaves the database untouched */
	for (size_t f = 0; f < nfiles && rc == 0; f++) {
		perfdb_strbuf_reset(&path);
		perfdb_strbuf_addf(&path, "%s/%s.csv", outdir, files[f].name);
		struct perfdb_parse_table *t = &res->tables[base + f];
		t->path = strdup(path.buf);
		t->type = strdup(perfdb_agg_group(agg, files[f].groups[0])->type);
		res->ntables++;
		if (!t->path || !t->type)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		else
			rc = merge_file(&files[f], path.buf, agg, fia, t, err);
	}
	if (rc == 0)
		rc = comm_entries(cout, outdir, res, cbase, err);
	/* phase 2: replace the changed tables, each atomically */
	for (size_t f = 0; f < nfiles && rc == 0; f++) {
		if (!files[f].t.dirty && files[f].exists)
			continue;
		rc = perfdb_table_save(&files[f].t, res->tables[base + f].path, &lock, err);
		if (rc == 0)
			res->tables[base + f].written = 1;
	}
	for (int op = 0, k = 0; op < PERFDB_COMM_NOPS && rc == 0; op++) {
		struct perfdb_comm_out *co = &cout[op];
		if (!co->used || co->raw)
			continue;
		struct perfdb_parse_table *t = &res->tables[cbase + (size_t)k++];
		if (co->t.dirty || !co->exists)
			rc = perfdb_table_save(&co->t, t->path, &lock, err);
		t->written = rc == 0 && (co->t.dirty || !co->exists);
	}
	perfdb_comm_tables_release(cout);
	/* the simulator's routing for the tables now there (docs/database.md "op_mapping.yaml") */
	if (rc == 0 && opmap)
		rc = perfdb_opmap_update(outdir, opmap, &res->op_mapping, err);
	perfdb_lock_release(&lock);
	for (size_t f = 0; f < nfiles; f++) {
		free(files[f].name);
		free(files[f].groups);
		perfdb_table_release(&files[f].t);
	}
	free(files);
	perfdb_strbuf_release(&name);
	perfdb_strbuf_release(&path);
	return rc;
}
