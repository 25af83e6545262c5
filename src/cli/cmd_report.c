/*
 * perfdb report: read a database back and show what it holds (docs/report.md):
 * a markdown summary (or --json) on stdout and one self-contained HTML page.
 */
#include <jansson.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "builtin.h"
#include "dbopts.h"
#include "report/dbreport.h"
#include "perfdb/fsio.h"
#include "perfdb_build.h"

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
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT, md = PERFDB_STRBUF_INIT,
			     page = PERFDB_STRBUF_INIT, path = PERFDB_STRBUF_INIT;
	struct perfdb_dbreport r;
	perfdb_dbreport_init(&r);
	char ts[32], date[64];
	const char *fixed = getenv("PERFDB_TIMESTAMP");
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	if (fixed && *fixed) {
		snprintf(ts, sizeof(ts), "%s", fixed);
		snprintf(date, sizeof(date), "%s", fixed);
	} else {
		strftime(ts, sizeof(ts), "%Y%m%d_%H%M%S", &tm);
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %z", &tm);
	}
	rc = perfdb_db_resolve(o, &dir, &err);
	if (rc == 0)
		rc = perfdb_dbreport_load(&r, dir.buf, hccl, &db->reg, o->device, &err);
	char mpi[MPI_MAX_LIBRARY_VERSION_STRING], libs[MPI_MAX_LIBRARY_VERSION_STRING + 128];
	int mlen = 0;
	/* one of the few MPI calls allowed before MPI_Init */
	if (MPI_Get_library_version(mpi, &mlen) != MPI_SUCCESS)
		mlen = 0;
	mpi[mlen] = '\0';
	mpi[strcspn(mpi, ",\n")] = '\0';
	snprintf(libs, sizeof(libs), "jansson %s, libyaml %s, %s", JANSSON_VERSION,
		 yaml_get_version_string(), mlen ? mpi : "MPI (unknown)");
	struct perfdb_dbreport_ctx ctx = {
		.dev = perfdb_device_find(&db->reg, o->device),
		.generated = date,
		.version = PERFDB_VERSION " (git " PERFDB_GIT_HASH ")",
		.libraries = libs,
	};
	if (rc == 0 && (perfdb_dbreport_markdown(&r, &ctx, &md) < 0 ||
			perfdb_dbreport_html(&r, &ctx, &page) < 0))
		rc = perfdb_err_set(&err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0) {
		if (html) {
			rc = perfdb_strbuf_addstr(&path, html);
		} else {
			struct perfdb_strbuf rep = PERFDB_STRBUF_INIT;
			rc = perfdb_strbuf_addf(&rep, "%s/reports", dir.buf);
			if (rc == 0)
				rc = perfdb_mkdir_p(rep.buf, &err);
			if (rc == 0)
				rc = perfdb_strbuf_addf(&path, "%s/perfdb_report_%s.html", rep.buf, ts);
			perfdb_strbuf_release(&rep);
		}
		if (rc == 0)
			rc = perfdb_file_write_atomic(path.buf, page.buf, page.len, &err);
	}
	if (rc < 0) {
		rc = cli_error("report", &err);
	} else if (json) {
		json_t *j = report_json(&r, o->device, path.buf);
		char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
					    JSON_REAL_PRECISION(10)) : NULL;
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(j);
		rc = s ? 0 : 1;
	} else {
		printf("%sHTML report: %s\n", md.buf, path.buf);
	}
	perfdb_dbreport_release(&r);
	perfdb_strbuf_release(&dir);
	perfdb_strbuf_release(&md);
	perfdb_strbuf_release(&page);
	perfdb_strbuf_release(&path);
	return rc;
}
