/*
 * `perfdb report` as one step (docs/report.md): the database read into
 * numbers, the markdown summary and the HTML page drawn from them, the page
 * written atomically (to the given path, or <db>/reports/
 * perfdb_report_<ts>.html), stamped with the date and the versions of
 * perfdb and the libraries it ran with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfdb/device.h"
#include "perfdb/fsio.h"
#include "perfdb/versions.h"
#include "perfdb_build.h"
#include "report/dbreport.h"

void perfdb_dbreport_page_init(struct perfdb_dbreport_page *p)
{
	perfdb_dbreport_init(&p->r);
	perfdb_strbuf_init(&p->md);
	perfdb_strbuf_init(&p->path);
}

void perfdb_dbreport_page_release(struct perfdb_dbreport_page *p)
{
	perfdb_dbreport_release(&p->r);
	perfdb_strbuf_release(&p->md);
	perfdb_strbuf_release(&p->path);
}

/* $PERFDB_TIMESTAMP (reproducible runs) for both, else the local time. */
static void stamps(char *ts, size_t tscap, char *date, size_t datecap)
{
	const char *fixed = getenv("PERFDB_TIMESTAMP");
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	if (fixed && *fixed) {
		snprintf(ts, tscap, "%s", fixed);
		snprintf(date, datecap, "%s", fixed);
	} else {
		strftime(ts, tscap, "%Y%m%d_%H%M%S", &tm);
		strftime(date, datecap, "%Y-%m-%d %H:%M:%S %z", &tm);
	}
}

static int page_path(const struct perfdb_dbreport_request *rq, const char *ts,
		     struct perfdb_strbuf *path, struct perfdb_err *err)
{
	if (rq->html_path)
		return perfdb_strbuf_addstr(path, rq->html_path);
	struct perfdb_strbuf rep = PERFDB_STRBUF_INIT;
	int rc = perfdb_strbuf_addf(&rep, "%s/reports", rq->dbdir);
	if (rc == 0)
		rc = perfdb_mkdir_p(rep.buf, err);
	if (rc == 0)
		rc = perfdb_strbuf_addf(path, "%s/perfdb_report_%s.html", rep.buf, ts);
	perfdb_strbuf_release(&rep);
	return rc;
}

int perfdb_dbreport_page_write(const struct perfdb_dbreport_request *rq,
			       struct perfdb_dbreport_page *p, struct perfdb_err *err)
{
	char ts[32], date[64], libs[512];
	stamps(ts, sizeof(ts), date, sizeof(date));
	PERFDB_TRY(perfdb_dbreport_load(&p->r, rq->dbdir, rq->hccl_dir, rq->reg, rq->device, err));
	perfdb_library_versions(libs, sizeof(libs));
	struct perfdb_dbreport_ctx ctx = {
		.dev = perfdb_device_find(rq->reg, rq->device),
		.generated = date,
		.version = PERFDB_VERSION " (git " PERFDB_GIT_HASH ")",
		.libraries = libs,
	};
	struct perfdb_strbuf page = PERFDB_STRBUF_INIT;
	int rc = 0;
	if (perfdb_dbreport_markdown(&p->r, &ctx, &p->md) < 0 ||
	    perfdb_dbreport_html(&p->r, &ctx, &page) < 0)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0)
		rc = page_path(rq, ts, &p->path, err);
	if (rc == 0)
		rc = perfdb_file_write_atomic(p->path.buf, page.buf, page.len, err);
	perfdb_strbuf_release(&page);
	return rc;
}
