/*
 * The tables a native run leaves alone (docs/replay.md "Tables not
 * replayed"): a database parsed from a PyTorch trace holds a table per op,
 * views and tensor lists included, and a user reading "success" and
 * "failed" should also learn which tables no replay selected and how many
 * rows that is.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/table.h"
#include "replay/replay.h"

static const char *reason_of(const char *stem)
{
	if (strcmp(stem, "aten.cat") == 0 || strcmp(stem, "aten.stack") == 0)
		return "its tensor list is recorded without shapes";
	if (strncmp(stem, "aten.", 5) == 0)
		return "no replay of this PyTorch op (docs/ops.md \"PyTorch operators\")";
	return "not an operator perfdb replays";
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct perfdb_status_unreplayed *)a)->table,
		      ((const struct perfdb_status_unreplayed *)b)->table);
}

int perfdb_status_unreplayed(const char *dbdir, struct perfdb_status *st, struct perfdb_err *err)
{
	DIR *d = opendir(dbdir);
	if (!d)
		return 0;   /* no database yet: nothing left alone */
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len <= 4 || strcmp(e->d_name + len - 4, ".csv") != 0 || e->d_name[0] == '.')
			continue;
		char stem[512];
		snprintf(stem, sizeof(stem), "%.*s", (int)(len - 4), e->d_name);
		if (perfdb_replay_op_known(stem) || perfdb_replay_aten_target(stem))
			continue;
		struct perfdb_status_unreplayed *v =
			realloc(st->unreplayed, (st->nunreplayed + 1) * sizeof(*v));
		if (!v) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		st->unreplayed = v;
		struct perfdb_status_unreplayed *u = &v[st->nunreplayed];
		u->table = strdup(stem);
		u->reason = strdup(reason_of(stem));
		u->rows = 0;
		st->nunreplayed++;
		if (!u->table || !u->reason) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", dbdir, e->d_name);
		struct perfdb_table t;
		struct perfdb_err ignored;
		perfdb_table_init(&t);
		if (perfdb_table_load(&t, path, &ignored) == 0)
			u->rows = t.nrows;
		perfdb_table_release(&t);
	}
	closedir(d);
	if (st->nunreplayed > 1)
		qsort(st->unreplayed, st->nunreplayed, sizeof(*st->unreplayed), by_name);
	return rc;
}
