/*
 * Writeback's own pieces (writeback.c drives them): the header migration
 * (writeback_header.c) and the merge of one table as it streams
 * (writeback_merge.c).  Not an API: only src/replay/writeback*.c include it.
 */
#ifndef PERFDB_REPLAY_WRITEBACK_INT_H
#define PERFDB_REPLAY_WRITEBACK_INT_H

#include <sys/types.h>

#include "perfdb/table.h"
#include "replay/replay.h"

/* The columns a new table gets (get_cols of an empty file), EP Size with with_ep. */
int perfdb_wb_new_header(struct perfdb_table *t, int with_ep, struct perfdb_err *err);

/* An existing header brought to the current layout (get_cols); t holds no rows. */
int perfdb_wb_migrate(struct perfdb_table *t, struct perfdb_err *err);

/*
 * Where merged tables wait for the commit: one spill file (unlinked, in
 * the database directory), each table a range of it.
 */
struct perfdb_wb_spill {
	int fd;
	off_t end;
};

/*
 * Merge m into the table at path (stem names its operator; it may not
 * exist yet), reading it one row at a time and appending the merged file
 * to the spill at *off.  *len is its size; *write says whether it must
 * replace the table (new, or a row changed, was added or pruned).  fr
 * and res get what happened, in the order an in-memory merge gives.
 */
int perfdb_wb_merge(const struct perfdb_wb_opts *o, const char *stem, const char *path,
		    const struct perfdb_measures *m, struct perfdb_wb_spill *sp, off_t *off,
		    size_t *len, int *write, struct perfdb_wb_file *fr, struct perfdb_wb_result *res,
		    struct perfdb_err *err);

#endif
