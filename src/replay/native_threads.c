/*
 * One thread count per database (docs/replay.md "Threads and libraries"):
 * a native run refuses a database whose earlier runs measured rows with
 * another --threads, so that rows of different thread counts never mix in
 * one table.  The earlier runs are read from their records,
 * <db>/reports/microbench_env_<ts>.txt (`threads=` and `rows_ok=`); the
 * database format itself has no place for the thread count.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/fsio.h"
#include "perfdb/strbuf.h"
#include "replay/native_run.h"

/* The value of a `key=` line of a record, or -1 when it has none. */
static long record_value(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, kl) == 0 && l[kl] == '=')
			return strtol(l + kl + 1, NULL, 10);
	return -1;
}

int perfdb_native_check_threads(const char *dbdir, long threads, struct perfdb_err *err)
{
	char rep[4200], p[4500], worst[300] = "";
	long other = 0;
	snprintf(rep, sizeof(rep), "%s/reports", dbdir);
	DIR *d = opendir(rep);
	if (!d)
		return 0;   /* no earlier run */
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (strncmp(e->d_name, "microbench_env_", 15) != 0 || n < 19 || strcmp(e->d_name + n - 4, ".txt") != 0 ||
		    n >= sizeof(worst))
			continue;
		snprintf(p, sizeof(p), "%s/%s", rep, e->d_name);
		perfdb_strbuf_reset(&b);
		struct perfdb_err ignore;
		if (perfdb_file_read_all(p, &b, &ignore) < 0 || !b.buf)
			continue;   /* unreadable: no rows of its are known */
		long t = record_value(b.buf, "threads"), ok = record_value(b.buf, "rows_ok");
		/* a record without a thread count, or of a run that measured nothing, says nothing */
		if (t < 1 || ok < 1 || t == threads)
			continue;
		if (strcmp(e->d_name, worst) > 0) {   /* the latest such run names the conflict */
			snprintf(worst, sizeof(worst), "%s", e->d_name);
			other = t;
		}
	}
	closedir(d);
	perfdb_strbuf_release(&b);
	if (!other)
		return 0;
	return perfdb_err_set(err, PERFDB_EINVAL,
			      "'%s' holds rows measured with --threads %ld (reports/%s); this run measures with "
			      "--threads %ld, and rows of different thread counts do not mix in one table: use "
			      "--threads %ld, or another database (--database-path)",
			      dbdir, other, worst, threads, other);
}
