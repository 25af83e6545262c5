/*
 * `perfdb report --json` (docs/report.md "--json"): the report's numbers as
 * one JSON document, keys in docs/cli.md.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "perfdb/json_out.h"
#include "report/dbreport.h"

static json_t *report_json(const struct perfdb_dbreport *r, const char *device,
			   const char *html)
{
	json_t *ks = json_array(), *cs = json_array();
	for (size_t i = 0; i < r->nk; i++) {
		const struct perfdb_dbreport_kernel *k = &r->k[i];
		json_array_append_new(ks, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"kernel", k->name, "family", k->family,
			"rows", (json_int_t)k->rows, "profiling", (json_int_t)k->with_prof,
			"microbench", (json_int_t)k->with_mb, "theory_only", (json_int_t)k->theory_only,
			"both", (json_int_t)k->both, "hotspots", (json_int_t)k->hot,
			"failed", (json_int_t)k->failed, "contended", (json_int_t)k->contended,
			"noisy", (json_int_t)k->noisy, "roofline_points", (json_int_t)k->roof, "above_roof", (json_int_t)k->above,
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
		const struct perfdb_dbreport_point *p = &k->pts[s.gaps[i].p];
		json_array_append_new(gaps, json_pack("{s:s, s:I, s:f, s:o}", "table", k->name, "line", (json_int_t)p->line,
			"ratio", s.gaps[i].ratio, "noise", p->noise >= 0 ? json_real(round(p->noise * 1e4) / 1e4) : json_null()));
	}
	json_t *sum = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
		"rows", (json_int_t)s.rows, "usable", (json_int_t)s.usable, "profiled", (json_int_t)s.profiled,
		"mb_only", (json_int_t)s.mb_only, "theory_only", (json_int_t)s.theory_only,
		"both", (json_int_t)s.both, "hot", (json_int_t)s.hot, "failed", (json_int_t)s.failed,
		"contended", (json_int_t)s.contended, "noisy", (json_int_t)s.noisy,
		"out_of_range", (json_int_t)s.out_of_range, "roof", (json_int_t)s.roof, "above", (json_int_t)s.above,
		"no_cost", (json_int_t)s.no_cost, "no_device", (json_int_t)s.no_device,
		"comm_tables", (json_int_t)s.comm_tables, "comm_series", (json_int_t)s.comm_series,
		"comm_points", (json_int_t)s.comm_points, "comm_ops", (json_int_t)s.comm_ops, "gaps", gaps);
	return json_pack("{s:s, s:s?, s:s, s:s, s:o, s:o, s:o}", "database", r->dbdir,
			 "collectives_dir", r->hccl_dir, "device", device, "html", html,
			 "summary", sum, "kernels", ks, "collectives", cs);
}

int perfdb_dbreport_json(const struct perfdb_dbreport *r, const char *device, const char *html,
			 struct perfdb_strbuf *out)
{
	return perfdb_json_dump(report_json(r, device, html),
				JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10), out);
}
