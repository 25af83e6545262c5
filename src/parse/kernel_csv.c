/*
 * Reading kernel_details and op_summary tables into kernel rows
 * (docs/spec/parse.md §1 "Required kernel_details columns", Decisions 3 and 6).
 *
 * Cells are trimmed as the reference trims them (Ascend pads some with a
 * tab).  Only the columns the aggregator uses are looked up, once, from the
 * header; each record then costs one tokenization and a few span copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/csv.h"
#include "parse/parse.h"
#include "perfdb/schema.h"


enum col {
	C_TYPE, C_NAME, C_STATE, C_CORE, C_INS, C_IND, C_INF, C_OUTS, C_OUTD, C_OUTF, C_DUR,
	C_START, C_WAIT,   /* only perfdb predict reads them; never reported missing */
	C_FIXED_
};
#define NCOLS (C_FIXED_ + PERFDB_NCOUNTERS)

/* Column names per input kind; NULL = not in that kind of file. */
static const char *col_name(enum perfdb_input_kind k, size_t c)
{
	static const char *const kd[C_FIXED_] = {
		PERFDB_COL_KD_TYPE, PERFDB_COL_KD_NAME, PERFDB_COL_OP_STATE, PERFDB_COL_ACCEL_CORE,
		PERFDB_COL_IN_SHAPES, PERFDB_COL_IN_DTYPES, PERFDB_COL_IN_FORMATS,
		PERFDB_COL_OUT_SHAPES, PERFDB_COL_OUT_DTYPES, PERFDB_COL_OUT_FORMATS,
		PERFDB_COL_DURATION, "Start Time(us)", "Wait Time(us)",
	};
	static const char *const os[C_FIXED_] = {
		PERFDB_COL_OPS_TYPE, PERFDB_COL_OPS_NAME, PERFDB_COL_OP_STATE, PERFDB_COL_OPS_TASK_TYPE,
		PERFDB_COL_IN_SHAPES, PERFDB_COL_IN_DTYPES, PERFDB_COL_IN_FORMATS,
		PERFDB_COL_OUT_SHAPES, PERFDB_COL_OUT_DTYPES, PERFDB_COL_OUT_FORMATS,
		PERFDB_COL_OPS_TASK_DUR, "Task Start Time(us)", "Task Wait Time(us)",
	};
	if (c >= C_FIXED_)
		return perfdb_counter_names[c - C_FIXED_];
	return k == PERFDB_INPUT_OP_SUMMARY ? os[c] : kd[c];
}

static int is_required(size_t c)
{
	return c == C_TYPE || c == C_INS || c == C_OUTS || c == C_DUR;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int read_rows(struct perfdb_csv_reader *r, const char *path, enum perfdb_input_kind kind,
		     const struct perfdb_row_sink *sink, struct perfdb_csv_input_stats *st,
		     void (*progress)(void *ctx, unsigned long long bytes), void *pctx,
		     struct perfdb_err *err)
{
	memset(st, 0, sizeof(*st));
	struct perfdb_csv_row row;
	int rc = perfdb_csv_next(r, &row, err);
	if (rc <= 0) {
		perfdb_csv_close(r);
		if (rc == 0)
			return perfdb_err_set(err, PERFDB_EPARSE, "%s: empty file: no header row", path);
		return rc;
	}
	/* a repeated column name would make "which cell?" a guess: refuse it */
	size_t dup = perfdb_csv_first_duplicate(row.f, row.n);
	if (dup < row.n) {
		int rc2 = perfdb_err_at(err, PERFDB_ESCHEMA, path, row.line,
					perfdb_csv_field_col(r, &row, dup),
					"duplicate column '%.*s' in header",
					(int)row.f[dup].len, row.f[dup].p);
		perfdb_csv_close(r);
		return rc2;
	}
	long idx[NCOLS];
	const char *missing_req[4];
	size_t nmiss = 0;
	for (size_t c = 0; c < NCOLS; c++) {
		const char *want = col_name(kind, c);
		size_t wl = strlen(want);
		idx[c] = -1;
		for (size_t i = 0; i < row.n; i++)
			if (row.f[i].len == wl && memcmp(row.f[i].p, want, wl) == 0) {
				idx[c] = (long)i;
				break;
			}
		if (idx[c] >= 0)
			continue;
		if (is_required(c)) {
			missing_req[nmiss++] = want;
		} else if (c >= C_FIXED_) {
			st->missing_optional++;
			st->missing_counters++;
		} else if (c != C_NAME && c != C_START && c != C_WAIT) {
			size_t used = strlen(st->missing_names);
			if (used + wl + 3 < sizeof(st->missing_names))
				snprintf(st->missing_names + used, sizeof(st->missing_names) - used,
					 "%s%s", used ? ", " : "", want);
			st->missing_optional++;
		}
	}
	if (nmiss) {
		qsort(missing_req, nmiss, sizeof(*missing_req), cmp_str);
		char names[256] = "";
		for (size_t i = 0; i < nmiss; i++) {
			strcat(names, i ? ", " : "");
			strcat(names, missing_req[i]);
		}
		perfdb_csv_close(r);
		return perfdb_err_set(err, PERFDB_ESCHEMA, "%s is missing required columns: %s",
				      path, names);
	}

	struct perfdb_kernel_row kr;
	memset(&kr, 0, sizeof(kr));
	kr.file = path;
	struct perfdb_span *slot[NCOLS] = {
		&kr.type, &kr.name, &kr.op_state, &kr.accel_core, &kr.in_shapes, &kr.in_dtypes,
		&kr.in_formats, &kr.out_shapes, &kr.out_dtypes, &kr.out_formats, &kr.duration,
		&kr.start, &kr.wait,
	};
	for (size_t c = 0; c < PERFDB_NCOUNTERS; c++)
		slot[C_FIXED_ + c] = &kr.counters[c];
	unsigned long long next_progress = 64ull << 20;
	size_t ncols = row.n;
	while ((rc = perfdb_csv_next(r, &row, err)) > 0) {
		/* a cell beyond the header belongs to no column (pandas refuses
		 * such a row too); fewer cells read as empty, as documented */
		if (row.n > ncols) {
			rc = perfdb_err_at(err, PERFDB_EPARSE, path, row.line,
					   perfdb_csv_field_col(r, &row, ncols),
					   "record has %zu fields, header has %zu", row.n, ncols);
			break;
		}
		for (size_t c = 0; c < NCOLS; c++) {
			long i = idx[c];
			if (i >= 0 && (size_t)i < row.n) {
				slot[c]->p = row.f[i].p;
				slot[c]->len = row.f[i].len;
			} else {
				slot[c]->p = "";
				slot[c]->len = 0;
			}
		}
		kr.line = row.line;
		st->rows++;
		if ((rc = sink->row(sink->ctx, &kr, err)) < 0)
			break;
		if (progress && perfdb_csv_offset(r) >= next_progress) {
			progress(pctx, perfdb_csv_offset(r));
			next_progress = perfdb_csv_offset(r) + (64ull << 20);
		}
	}
	st->bytes = perfdb_csv_offset(r);
	perfdb_csv_close(r);
	return rc < 0 ? rc : 0;
}

int perfdb_parse_read_csv(const char *path, enum perfdb_input_kind kind,
			  const struct perfdb_row_sink *sink,
			  struct perfdb_csv_input_stats *st,
			  void (*progress)(void *ctx, unsigned long long bytes), void *pctx,
			  struct perfdb_err *err)
{
	struct perfdb_csv_reader *r;
	PERFDB_TRY(perfdb_csv_open(&r, path, PERFDB_CSV_TRIM | PERFDB_CSV_UTF8, err));
	return read_rows(r, path, kind, sink, st, progress, pctx, err);
}

int perfdb_parse_read_csv_mem(const char *name, const void *data, size_t len,
			      enum perfdb_input_kind kind, const struct perfdb_row_sink *sink,
			      struct perfdb_csv_input_stats *st, struct perfdb_err *err)
{
	struct perfdb_csv_reader *r;
	PERFDB_TRY(perfdb_csv_open_mem(&r, name, data, len, PERFDB_CSV_TRIM | PERFDB_CSV_UTF8, err));
	return read_rows(r, name, kind, sink, st, NULL, NULL, err);
}
