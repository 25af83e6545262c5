/*
 * The database report's markdown (src/report/dbreport.h,
 * docs/report.md): the summary figures, then coverage, roofline and
 * collectives tables.  The HTML page is render_html.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/dbreport.h"
#include "perfdb/md_table.h"
#include "perfdb/schema.h"

/* ---- markdown ------------------------------------------------------- */

static int md_rows(struct perfdb_strbuf *out, const char *const *hdr, size_t ncols,
		   char ***rows, size_t n)
{
	int rc = perfdb_md_table(out, hdr, ncols, rows, n);
	for (size_t i = 0; i < n; i++) {
		for (size_t c = 0; c < ncols; c++)
			free(rows[i][c]);
		free(rows[i]);
	}
	free(rows);
	if (rc == 0)
		rc = perfdb_strbuf_addstr(out, "\n\n");
	return rc;
}

static char *fmt_dec(int prec, double v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*f", prec, v);
	return strdup(buf);
}

static char ***alloc_rows(size_t n, size_t ncols)
{
	char ***rows = calloc(n ? n : 1, sizeof(*rows));
	for (size_t i = 0; rows && i < n; i++)
		if (!(rows[i] = calloc(ncols, sizeof(**rows))))
			return NULL; /* leaks on OOM only; the caller fails */
	return rows;
}

static bool rows_ok(char ***rows, size_t n, size_t ncols)
{
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < ncols; c++)
			if (!rows[i][c])
				return false;
	return true;
}

int perfdb_dbreport_markdown(const struct perfdb_dbreport *r,
			     const struct perfdb_dbreport_ctx *ctx,
			     struct perfdb_strbuf *out)
{
	PERFDB_TRY(perfdb_strbuf_addf(out, "# perfdb report\n\n- database: %s\n- collectives: %s\n",
				      r->dbdir, r->hccl_dir ? r->hccl_dir : "none"));
	if (ctx->dev)
		PERFDB_TRY(perfdb_strbuf_addf(out, "- device: %s\n", ctx->dev->name));
	struct perfdb_dbreport_summary sm;
	perfdb_dbreport_summary(r, &sm);
	PERFDB_TRY(perfdb_strbuf_addf(out,
		"\n## Summary\n\n- usable durations: %zu of %zu rows\n"
		"- measured: %zu profiled, %zu microbench only, %zu theory-only, %zu out of range\n"
		"- microbench vs profiling: %zu rows with both, %zu outside the band\n"
		"- run records: %zu failed, %zu contended, %zu noisy rows\n"
		"- roofline: %zu rows plotted, %zu above the roof; not plotted: %zu without a cost, "
		"%zu without a known roof\n"
		"- collectives: %zu tables, %zu group-size/tier curves, %zu sizes\n",
		sm.usable, sm.rows, sm.profiled, sm.mb_only, sm.theory_only, sm.out_of_range, sm.both, sm.hot, sm.failed,
		sm.contended, sm.noisy, sm.roof, sm.above, sm.no_cost, sm.no_device, sm.comm_tables, sm.comm_series,
		sm.comm_points));
	PERFDB_TRY(perfdb_strbuf_addstr(out, "\n## Coverage per kernel type\n\n"));

	static const char *const hc[] = { "Kernel", "Rows", "Profiling", "MicroBench",
					  "Theory-only", "Both", "Hotspots" };
	char ***rows = alloc_rows(r->nk + 1, 7);
	if (!rows)
		return -PERFDB_ENOMEM;
	size_t tot[6] = { 0 };
	for (size_t i = 0; i < r->nk; i++) {
		const struct perfdb_dbreport_kernel *k = &r->k[i];
		size_t v[6] = { k->rows, k->with_prof, k->with_mb, k->theory_only, k->both, k->hot };
		rows[i][0] = strdup(k->name);
		for (size_t c = 0; c < 6; c++) {
			rows[i][c + 1] = fmt_dec(0, (double)v[c]);
			tot[c] += v[c];
		}
	}
	size_t nrows = r->nk;
	if (r->nk) {
		rows[nrows][0] = strdup("(total)");
		for (size_t c = 0; c < 6; c++)
			rows[nrows][c + 1] = fmt_dec(0, (double)tot[c]);
		nrows++;
	}
	if (!rows_ok(rows, nrows, 7))
		return -PERFDB_ENOMEM;
	PERFDB_TRY(md_rows(out, hc, 7, rows, nrows));

	PERFDB_TRY(perfdb_strbuf_addstr(out, "## Roofline per kernel type\n\n"));
	static const char *const hr[] = { "Kernel", "Family", "Points", "Above roof", "Best GFLOP/s",
					  "Best GB/s", "No cost", "Roof unknown" };
	rows = alloc_rows(r->nk, 8);
	if (!rows)
		return -PERFDB_ENOMEM;
	for (size_t i = 0; i < r->nk; i++) {
		const struct perfdb_dbreport_kernel *k = &r->k[i];
		double bf = 0, bb = 0;
		for (size_t j = 0; j < k->rows; j++) {
			if (!k->pts[j].roof)
				continue;
			bf = fmax(bf, k->pts[j].gflops);
			bb = fmax(bb, k->pts[j].gbps);
		}
		rows[i][0] = strdup(k->name);
		rows[i][1] = strdup(k->family);
		rows[i][2] = fmt_dec(0, (double)k->roof);
		rows[i][3] = fmt_dec(0, (double)k->above);
		rows[i][4] = fmt_dec(2, bf);
		rows[i][5] = fmt_dec(2, bb);
		rows[i][6] = fmt_dec(0, (double)k->no_cost);
		rows[i][7] = fmt_dec(0, (double)k->no_device);
	}
	if (!rows_ok(rows, r->nk, 8))
		return -PERFDB_ENOMEM;
	PERFDB_TRY(md_rows(out, hr, 8, rows, r->nk));

	PERFDB_TRY(perfdb_strbuf_addstr(out, "## Collectives\n\n"));
	static const char *const hl[] = { "Collective", "Group", "Tier", "Sizes",
					  "Min latency(us)", "Max busbw(GB/s)" };
	size_t ns = 0;
	for (size_t i = 0; i < r->nc; i++)
		for (size_t j = 0; j < r->c[i].n; j++)
			ns += j == 0 || r->c[i].pts[j].ndev != r->c[i].pts[j - 1].ndev ||
			      r->c[i].pts[j].tier != r->c[i].pts[j - 1].tier;
	rows = alloc_rows(ns, 6);
	if (!rows)
		return -PERFDB_ENOMEM;
	size_t s = 0;
	for (size_t i = 0; i < r->nc; i++) {
		const struct perfdb_dbreport_comm *c = &r->c[i];
		for (size_t j = 0; j < c->n;) {
			size_t e = j;
			double lat = c->pts[j].dur_us, bw = 0;
			while (e < c->n && c->pts[e].ndev == c->pts[j].ndev &&
			       c->pts[e].tier == c->pts[j].tier) {
				lat = fmin(lat, c->pts[e].dur_us);
				bw = fmax(bw, c->pts[e].busbw_gbps);
				e++;
			}
			rows[s][0] = strdup(c->op);
			rows[s][1] = fmt_dec(0, (double)c->pts[j].ndev);
			rows[s][2] = fmt_dec(0, (double)c->pts[j].tier);
			rows[s][3] = fmt_dec(0, (double)(e - j));
			rows[s][4] = fmt_dec(2, lat);
			rows[s][5] = fmt_dec(2, bw);
			s++;
			j = e;
		}
	}
	if (!rows_ok(rows, ns, 6))
		return -PERFDB_ENOMEM;
	return md_rows(out, hl, 6, rows, ns);
}

