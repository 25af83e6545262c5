/*
 * Writeback's header migration (get_cols of start_microbench.py; docs/spec/
 * replay.md §2): the layout a new table gets, and an old header brought to
 * it: legacy duration columns dropped or renamed, the base columns moved
 * into place, the steady-state statistics after the mean, and a MicroBench
 * counter before each Profiling one.  Writeback migrates the header alone
 * and maps its rows onto it as they stream (writeback_merge.c).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfdb/schema.h"
#include "replay/writeback_int.h"

static const char *const base_cols[PERFDB_SCHEMA_NBASE] = { PERFDB_SCHEMA_BASE_COLS };
static const char *const stat_cols[4] = {
	PERFDB_COL_MB_MIN, PERFDB_COL_MB_MEDIAN, PERFDB_COL_MB_STD, PERFDB_COL_MB_SAMPLES,
};

static int ensure_col(struct perfdb_table *t, const char *name, size_t at, struct perfdb_err *err)
{
	if (perfdb_table_col(t, name) >= 0)
		return 0;
	long r = perfdb_table_insert_col(t, name, at, err);
	return r < 0 ? (int)r : 0;
}

int perfdb_wb_new_header(struct perfdb_table *t, int with_ep, struct perfdb_err *err)
{
	const char *cols[8 + 1 + 4 + 3 + 2 * PERFDB_NCOUNTERS + 1];
	char names[2 * PERFDB_NCOUNTERS][64];
	size_t n = 0;
	for (int i = 0; i < 8; i++)
		cols[n++] = base_cols[i];
	cols[n++] = PERFDB_COL_MB_DUR;
	for (int i = 0; i < 4; i++)
		cols[n++] = stat_cols[i];
	cols[n++] = PERFDB_COL_PROF_AVG;
	cols[n++] = PERFDB_COL_PROF_MEDIAN;
	cols[n++] = PERFDB_COL_PROF_STD;
	for (int c = 0; c < PERFDB_NCOUNTERS; c++) {
		snprintf(names[2 * c], sizeof(names[0]), PERFDB_COL_MB_COUNTER_PREFIX "%s",
			 perfdb_counter_names[c]);
		snprintf(names[2 * c + 1], sizeof(names[0]), PERFDB_COL_PROF_COUNTER_PREFIX "%s",
			 perfdb_counter_names[c]);
		cols[n++] = names[2 * c];
		cols[n++] = names[2 * c + 1];
	}
	if (with_ep)
		cols[n++] = PERFDB_COL_EP_SIZE;
	return perfdb_table_set_header(t, cols, n, err);
}

int perfdb_wb_migrate(struct perfdb_table *t, struct perfdb_err *err)
{
	assert(t->nrows == 0);
	long c;
	if ((c = perfdb_table_col(t, PERFDB_COL_MB_TASK_DUR)) >= 0)
		perfdb_table_drop_col(t, (size_t)c);
	if ((c = perfdb_table_col(t, PERFDB_COL_MB_KERNEL_DUR)) >= 0)
		perfdb_table_drop_col(t, (size_t)c);
	c = perfdb_table_col(t, PERFDB_COL_MB_LEGACY);
	if (c >= 0 && perfdb_table_col(t, PERFDB_COL_MB_DUR) < 0)
		PERFDB_TRY(perfdb_table_rename_col(t, (size_t)c, PERFDB_COL_MB_DUR, err));
	if (perfdb_table_col(t, PERFDB_COL_MB_DUR) < 0) {
		/* BASE_COLS + Average Duration(us) + the rest */
		for (int i = 0; i < 8; i++) {
			long have = perfdb_table_col(t, base_cols[i]);
			if (have < 0)
				PERFDB_TRY(ensure_col(t, base_cols[i], (size_t)i, err));
			else if (have != i) {
				/* move it into place (no rows: the cells follow by name) */
				perfdb_table_drop_col(t, (size_t)have);
				long at = perfdb_table_insert_col(t, base_cols[i], (size_t)i, err);
				if (at < 0)
					return (int)at;
			}
		}
		PERFDB_TRY(ensure_col(t, PERFDB_COL_MB_DUR, 8, err));
	}
	/* Decision 2: the steady-state statistics sit right after the mean */
	size_t at = (size_t)perfdb_table_col(t, PERFDB_COL_MB_DUR) + 1;
	for (int i = 0; i < 4; i++, at++) {
		long have = perfdb_table_col(t, stat_cols[i]);
		if (have < 0)
			PERFDB_TRY(ensure_col(t, stat_cols[i], at, err));
		else
			at = (size_t)have;
	}
	/* MicroBench X before each existing Profiling Average X */
	for (int k = 0; k < PERFDB_NCOUNTERS; k++) {
		char prof[96], mb[96];
		snprintf(prof, sizeof(prof), PERFDB_COL_PROF_COUNTER_PREFIX "%s", perfdb_counter_names[k]);
		snprintf(mb, sizeof(mb), PERFDB_COL_MB_COUNTER_PREFIX "%s", perfdb_counter_names[k]);
		long p = perfdb_table_col(t, prof);
		if (p >= 0 && perfdb_table_col(t, mb) < 0)
			PERFDB_TRY(ensure_col(t, mb, (size_t)p, err));
	}
	return 0;
}

