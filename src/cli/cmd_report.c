/*
 * perfdb report: read a database back and show what it holds (docs/report.md):
 * a markdown summary (or --json) on stdout and one self-contained HTML page.
 */
#include <jansson.h>
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

static json_t *report_json(const struct perfdb_dbreport *r, const char *device,
			   const char *html)
{
	json_t *ks = json_array(), *cs = json_array();
	for (size_t i = 0; i < r->nk; i++) {
		const struct perfdb_dbreport_kernel *k = &r->k[i];
		json_array_append_new(ks, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"kernel", k->name, "family", k->family,
			"rows", (json_int_t)k->rows, "profiling", (json_int_t)k->with_prof,
			"microbench", (json_int_t)k->with_mb, "theory_only", (json_int_t)k->theory_only,
			"both", (json_int_t)k->both, "hotspots", (json_int_t)k->hot,
			"failed", (json_int_t)k->failed, "contended", (json_int_t)k->contended,
			"roofline_points", (json_int_t)k->roof, "above_roof", (json_int_t)k->above,
			"no_cost", (json_int_t)k->no_cost, "device_unknown", (json_int_t)k->no_device));
	}
	for (size_t i = 0; i < r->nc; i++) {
		const struct perfdb_dbreport_comm *c = &r->c[i];
		for (size_t j = 0; j < c->n; j++)
			json_array_append_new(cs, json_pack("{s:s, s:I, s:I, s:f, s:f, s:f}",
				"op", c->op, "num_devices", (json_int_t)c->pts[j].ndev,
				"topology_tier", (json_int_t)c->pts[j].tier,
				"message_bytes", c->pts[j].bytes, "duration_us", c->pts[j].dur_us,
				"busbw_gbps", c->pts[j].busbw_gbps));
	}
	struct perfdb_dbreport_summary s;
	perfdb_dbreport_summary(r, &s);
	json_t *gaps = json_array();
	for (size_t i = 0; i < s.ngaps; i++) {
		const struct perfdb_dbreport_kernel *k = &r->k[s.gaps[i].k];
		json_array_append_new(gaps, json_pack("{s:s, s:I, s:f}", "table", k->name,
			"line", (json_int_t)k->pts[s.gaps[i].p].line, "ratio", s.gaps[i].ratio));
	}
	json_t *sum = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
		"rows", (json_int_t)s.rows, "usable", (json_int_t)s.usable, "profiled", (json_int_t)s.profiled,
		"mb_only", (json_int_t)s.mb_only, "theory_only", (json_int_t)s.theory_only,
		"both", (json_int_t)s.both, "hot", (json_int_t)s.hot, "failed", (json_int_t)s.failed,
		"contended", (json_int_t)s.contended, "roof", (json_int_t)s.roof, "above", (json_int_t)s.above,
		"no_cost", (json_int_t)s.no_cost, "no_device", (json_int_t)s.no_device,
		"comm_tables", (json_int_t)s.comm_tables, "comm_series", (json_int_t)s.comm_series,
		"comm_points", (json_int_t)s.comm_points, "comm_ops", (json_int_t)s.comm_ops, "gaps", gaps);
	return json_pack("{s:s, s:s?, s:s, s:s, s:o, s:o, s:o}", "database", r->dbdir,
			 "collectives_dir", r->hccl_dir, "device", device, "html", html,
			 "summary", sum, "kernels", ks, "collectives", cs);
}

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
		json_t *j = report_json(&p.r, o->device, p.path.buf);
		char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
					    JSON_REAL_PRECISION(10)) : NULL;
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(j);
		rc = s ? 0 : 1;
	} else {
		printf("%sHTML report: %s\n", p.md.buf, p.path.buf);
	}
	perfdb_dbreport_page_release(&p);
	perfdb_strbuf_release(&dir);
	return rc;
}
