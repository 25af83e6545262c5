/*
 * perfdb report: read a database back and show what it holds (docs/report.md):
 * a markdown summary (or --json) on stdout and one self-contained HTML page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "dbopts.h"
#include "report/dbreport.h"

/* the reference's flags (the database flags every reference tool has): prefixes resolve among them first */
static const char *const reference_flags[] = {
	OPT_REFERENCE_DB, NULL
};

const struct cmd_help cmd_report_help = {
	.name = "report",
	.reference = reference_flags,
	.usage = "perfdb report [--html FILE] [--hccl-dir DIR] [--json] [database flags]",
	.summary = "summarise a database: coverage, hotspots, rooflines, collectives (HTML + markdown)",
	.description =
		"Reads every <Kernel>.csv of the database directory, the run records of its\n"
		"reports/ and the hcom_*.csv tables of the newest <root>/<device>/hccl/<ver>/\n"
		"(or --hccl-dir), prints a markdown summary and writes one HTML page with\n"
		"inline SVG charts (no external assets): the summary first (usable durations,\n"
		"the worst microbench/profiling gaps, failed and contended rows, points above\n"
		"the roof, collectives' coverage), microbench vs profiling with the 0.8x-1.2x\n"
		"band, rooflines from the operator layer's costs against the peaks of the\n"
		"device that measured each row, and collective latency and busbw against\n"
		"message size per group size and tier.",
};

int cmd_report(int argc, char **argv, struct cmd_db *db)
{
	struct perfdb_db_opts *o = &db->o;   /* filled by DB_OPTIONS, finished below */
	const char *html = NULL, *hccl = NULL;
	bool json = false;
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "html", .dest = &html, .metavar = "FILE",
		  .help = "HTML page to write (default: <database>/reports/perfdb_report_<timestamp>.html)" },
		{ .type = OPT_STRING, .name = "hccl-dir", .dest = &hccl, .metavar = "DIR",
		  .help = "collective tables (default: newest <root>/<device>/hccl/<ver>/ with hcom_*.csv)" },
		{ .type = OPT_FLAG, .name = "json", .dest = &json,
		  .help = "print a JSON object instead of the markdown summary (keys: docs/cli.md)" },
		DB_OPTIONS(o),
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_report_help, pos, &npos);
	if (rc)
		return rc == 1 ? 0 : rc;

	if ((rc = db_opts_finish(db, &cmd_report_help))) {
		return rc;
	}
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT;
	struct perfdb_dbreport_page p;
	perfdb_dbreport_page_init(&p);
	rc = perfdb_db_resolve(o, &dir, &err);
	struct perfdb_dbreport_request rq = { .dbdir = dir.buf, .hccl_dir = hccl, .reg = &db->reg,
					      .device = o->device, .html_path = html };
	if (rc == 0)
		rc = perfdb_dbreport_page_write(&rq, &p, &err);
	if (rc < 0) {
		rc = cli_error("report", &err);
	} else if (json) {
		struct perfdb_strbuf js = PERFDB_STRBUF_INIT;
		rc = perfdb_dbreport_json(&p.r, o->device, p.path.buf, &js) < 0 ? cli_oom("report") : 0;
		fputs(js.buf, stdout);
		perfdb_strbuf_release(&js);
	} else {
		printf("%sHTML report: %s\n", p.md.buf, p.path.buf);
	}
	perfdb_dbreport_page_release(&p);
	perfdb_strbuf_release(&dir);
	return rc;
}
