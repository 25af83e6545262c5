/*
 * The report's HTML page (src/report/dbreport.h, docs/report.md): the
 * summary first, each figure linking to its section; then the sections,
 * the large ones folded in <details> (no script: the page reads the same
 * offline and without JavaScript).  A chart is drawn only where it has
 * points; kernel types with fewer than PERFDB_DBREPORT_MIN_POINTS go into
 * compact tables.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/coll.h"
#include "perfdb/schema.h"
#include "render.h"

/* The families' colours: the operator layer's families, in this order, then "other". */
static const char *const families[] = {
	"matmul", "attention", "moe", "norm", "eltwise", "quant", "index", "rope", "cache", "reduce", "other",
};
#define NFAM (sizeof(families) / sizeof(families[0]))

static size_t family_index(const char *f)
{
	for (size_t i = 0; i < NFAM; i++)
		if (!strcmp(f, families[i]))
			return i;
	return NFAM - 1;
}

static int cell(struct perfdb_strbuf *o, const char *s)
{
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<td>"));
	PERFDB_TRY(report_esc(o, s));
	return perfdb_strbuf_addstr(o, "</td>");
}

/* A summary figure the Chromium test reads back: <b data-figure="name">value</b>. */
static int figure(struct perfdb_strbuf *o, const char *name, size_t v)
{
	return perfdb_strbuf_addf(o, "<b data-figure=\"%s\">%zu</b>", name, v);
}

static double pct(size_t a, size_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

/* ---- microbench vs profiling --------------------------------------------------- */

static int band(struct perfdb_strbuf *o, const struct report_frame *f)
{
	double a = pow(10, f->x0), b = pow(10, f->x1);
	const double lo = PERFDB_SCHEMA_BAND_LO, hi = PERFDB_SCHEMA_BAND_HI;
	/* the band, cut exactly at the frame's edges */
	return perfdb_strbuf_addf(o,
		"<polygon class=\"band\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>"
		"<line class=\"diag\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		report_px(f, a), report_py(f, a), report_px(f, a / lo), report_py(f, a), report_px(f, b),
		report_py(f, b * lo), report_px(f, b), report_py(f, b), report_px(f, b / hi), report_py(f, b),
		report_px(f, a), report_py(f, a * hi), report_px(f, a), report_py(f, a), report_px(f, b),
		report_py(f, b));
}

/* The scatter of kernel ks[0..nk): every row with both durations, coloured by family when several types. */
/* ", noise 12.3 %", and ", contended" / ", noisy" where the run records say so. */
static int mark(struct perfdb_strbuf *o, const struct perfdb_dbreport_point *p)
{
	if (p->noise >= 0)
		PERFDB_TRY(perfdb_strbuf_addf(o, ", noise %.1f %%", 100 * p->noise));
	if (p->contended)
		PERFDB_TRY(perfdb_strbuf_addstr(o, ", contended"));
	if (p->noisy)
		PERFDB_TRY(perfdb_strbuf_addstr(o, ", noisy"));
	return 0;
}

static int scatter(struct perfdb_strbuf *o, const struct perfdb_dbreport_kernel *ks, size_t nk, const char *title)
{
	double lo = INFINITY, hi = 0;
	size_t n = 0, hot = 0;
	bool fam[NFAM] = { false };
	for (size_t i = 0; i < nk; i++)
		for (size_t j = 0; j < ks[i].rows; j++) {
			const struct perfdb_dbreport_point *p = &ks[i].pts[j];
			if (p->mb_us > 0 && p->prof_us > 0) {
				n++;
				hot += p->hot;
				fam[family_index(ks[i].family)] = true;
				lo = fmin(lo, fmin(p->mb_us, p->prof_us));
				hi = fmax(hi, fmax(p->mb_us, p->prof_us));
			}
		}
	if (!n)
		return 0;
	struct report_frame f;
	report_frame_fit(&f, lo, hi, lo, hi);
	char t[512];
	snprintf(t, sizeof(t), "%s: %zu rows, %zu outside the band", title, n, hot);
	PERFDB_TRY(report_chart_open(o, &f, n, t, "profiling duration (µs)", "microbench duration (µs)"));
	PERFDB_TRY(band(o, &f));
	for (size_t i = 0; i < nk; i++)
		for (size_t j = 0; j < ks[i].rows; j++) {
			const struct perfdb_dbreport_point *p = &ks[i].pts[j];
			if (!(p->mb_us > 0 && p->prof_us > 0))
				continue;
			PERFDB_TRY(perfdb_strbuf_addf(o,
				"<circle class=\"pt%s%s%s\" fill=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\"><title>",
				p->hot ? " hot" : "", p->contended ? " contended" : "", p->noisy ? " noisy" : "",
				report_colour(family_index(ks[i].family)), report_px(&f, p->prof_us),
				report_py(&f, p->mb_us), p->hot ? 4 : 3));
			PERFDB_TRY(report_esc(o, ks[i].name));
			PERFDB_TRY(perfdb_strbuf_addf(o, ".csv:%zu: profiling %.3f µs, microbench %.3f µs (%.2fx)",
						      p->line, p->prof_us, p->mb_us, p->mb_us / p->prof_us));
			PERFDB_TRY(mark(o, p));
			PERFDB_TRY(perfdb_strbuf_addstr(o, "</title></circle>\n"));
		}
	size_t li = 0;
	if (nk > 1)
		for (size_t i = 0; i < NFAM; i++)
			if (fam[i])
				PERFDB_TRY(report_legend(o, li++, report_colour(i), families[i]));
	return report_chart_close(o);
}

static int section_scatter(struct perfdb_strbuf *o, const struct perfdb_dbreport *r,
			   const struct perfdb_dbreport_summary *s)
{
	PERFDB_TRY(perfdb_strbuf_addf(o, "<h2 id=\"scatter\">Microbench vs profiling</h2>\n"
		"<p>Rows with both durations. Green band: microbench within %gx–%gx of profiling; points outside "
		"it (drawn larger, outlined) are hotspots. Per-type charts are drawn for kernel types with at least "
		"%d such rows; the others are in the table below.</p>\n",
		PERFDB_SCHEMA_BAND_LO, PERFDB_SCHEMA_BAND_HI, PERFDB_DBREPORT_MIN_POINTS));
	if (!s->both)
		return perfdb_strbuf_addstr(o, "<p class=\"none\">No row has both a microbench and a profiling "
					       "duration: nothing to compare.</p>\n");
	PERFDB_TRY(scatter(o, r->k, r->nk, "All kernel types, by family"));
	size_t big = 0, small = 0;
	for (size_t i = 0; i < r->nk; i++) {
		big += r->k[i].both >= PERFDB_DBREPORT_MIN_POINTS;
		small += r->k[i].both && r->k[i].both < PERFDB_DBREPORT_MIN_POINTS;
	}
	if (big) {
		PERFDB_TRY(perfdb_strbuf_addf(o, "<details open><summary>%zu per-type charts</summary>\n", big));
		for (size_t i = 0; i < r->nk; i++)
			if (r->k[i].both >= PERFDB_DBREPORT_MIN_POINTS)
				PERFDB_TRY(scatter(o, &r->k[i], 1, r->k[i].name));
		PERFDB_TRY(perfdb_strbuf_addstr(o, "</details>\n"));
	}
	if (small) {
		PERFDB_TRY(perfdb_strbuf_addf(o, "<details><summary>%zu kernel types with fewer rows</summary>\n"
			"<table><tr><th>Kernel</th><th>Both</th><th>Hotspots</th><th>Microbench / profiling</th></tr>\n",
			small));
		for (size_t i = 0; i < r->nk; i++) {
			const struct perfdb_dbreport_kernel *k = &r->k[i];
			if (!k->both || k->both >= PERFDB_DBREPORT_MIN_POINTS)
				continue;
			PERFDB_TRY(perfdb_strbuf_addstr(o, "<tr>"));
			PERFDB_TRY(cell(o, k->name));
			PERFDB_TRY(perfdb_strbuf_addf(o, "<td>%zu</td><td>%zu</td><td>", k->both, k->hot));
			const char *sep = "";
			for (size_t j = 0; j < k->rows; j++)
				if (k->pts[j].mb_us > 0 && k->pts[j].prof_us > 0) {
					PERFDB_TRY(perfdb_strbuf_addf(o, "%s:%zu %.2fx", sep, k->pts[j].line,
								      k->pts[j].mb_us / k->pts[j].prof_us));
					sep = ", ";
				}
			PERFDB_TRY(perfdb_strbuf_addstr(o, "</td></tr>\n"));
		}
		PERFDB_TRY(perfdb_strbuf_addstr(o, "</table></details>\n"));
	}
	return 0;
}

/* ---- roofline ----------------------------------------------------------------- */

/* The distinct roofs (peak, bandwidth) of a kernel's points, at most 4. */
struct roofs {
	double peak[4], bw[4];
	const char *dev[4];
	size_t n;
};

static void roofs_of(const struct perfdb_dbreport_kernel *k, struct roofs *rf)
{
	/* a bandwidth chart's roof is the bandwidth alone */
	bool bw_only = k->movement;
	rf->n = 0;
	for (size_t j = 0; j < k->rows; j++) {
		const struct perfdb_dbreport_point *p = &k->pts[j];
		if (!p->roof)
			continue;
		size_t i = 0;
		while (i < rf->n && !((bw_only || rf->peak[i] == p->peak_gflops) && rf->bw[i] == p->bw_gbps))
			i++;
		if (i == rf->n && rf->n < 4) {
			rf->peak[i] = p->peak_gflops;
			rf->bw[i] = p->bw_gbps;
			rf->dev[i] = p->dev_name ? p->dev_name : "?";
			rf->n++;
		}
	}
}

/* A roofline (GFLOP/s against FLOP/byte) or, for 0-FLOP types, achieved GB/s against bytes moved. */
static int roofline(struct perfdb_strbuf *o, const struct perfdb_dbreport_kernel *k)
{
	struct roofs rf;
	roofs_of(k, &rf);
	bool mv = k->movement;
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
	for (size_t j = 0; j < k->rows; j++) {
		const struct perfdb_dbreport_point *p = &k->pts[j];
		if (!p->roof)
			continue;
		double x = mv ? p->bytes : p->ai, y = mv ? p->gbps : p->gflops;
		if (!(x > 0) || !(y > 0))
			continue;
		xlo = fmin(xlo, x);
		xhi = fmax(xhi, x);
		ylo = fmin(ylo, y);
		yhi = fmax(yhi, y);
	}
	size_t n = 0;
	for (size_t j = 0; j < k->rows; j++) {
		const struct perfdb_dbreport_point *p = &k->pts[j];
		n += p->roof && (mv ? p->bytes : p->ai) > 0 && (mv ? p->gbps : p->gflops) > 0;
	}
	if (!n)
		return 0;
	for (size_t i = 0; i < rf.n; i++) {
		if (mv) {
			yhi = fmax(yhi, rf.bw[i]);
		} else {
			double ridge = rf.peak[i] / rf.bw[i];
			xlo = fmin(xlo, ridge / 10);
			xhi = fmax(xhi, ridge * 10);
			yhi = fmax(yhi, rf.peak[i]);
		}
	}
	struct report_frame f;
	report_frame_fit(&f, xlo, xhi, ylo, yhi);
	char t[512];
	snprintf(t, sizeof(t), "%s (%s): %zu points, %zu above the roof%s", k->name, k->family, n, k->above,
		 mv ? " (data movement: bandwidth only)" : "");
	PERFDB_TRY(report_chart_open(o, &f, n, t, mv ? "bytes moved (B)" : "arithmetic intensity (FLOP/B)",
				     mv ? "achieved bandwidth (GB/s)" : "achieved GFLOP/s"));
	double l, rr, b, tp;
	report_plot_box(&l, &rr, &b, &tp);
	for (size_t i = 0; i < rf.n; i++) {
		double a = pow(10, f.x0), e = pow(10, f.x1);
		if (mv) {
			PERFDB_TRY(perfdb_strbuf_addf(o, "<polyline class=\"roof\" stroke=\"%s\" points=\"%.1f,%.1f %.1f,%.1f\"/>\n",
						      report_colour(i), report_px(&f, a), report_py(&f, rf.bw[i]),
						      report_px(&f, e), report_py(&f, rf.bw[i])));
		} else {
			double ridge = rf.peak[i] / rf.bw[i];
			double ya = fmax(a * rf.bw[i], pow(10, f.y0));
			PERFDB_TRY(perfdb_strbuf_addf(o,
				"<polyline class=\"roof\" stroke=\"%s\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
				report_colour(i), report_px(&f, ya / rf.bw[i]), report_py(&f, ya), report_px(&f, ridge),
				report_py(&f, rf.peak[i]), report_px(&f, e), report_py(&f, rf.peak[i])));
		}
		char leg[256];
		snprintf(leg, sizeof(leg), mv ? "roof: %s, %.0f GB/s" : "roof: %s, %.0f GFLOP/s, %.0f GB/s", rf.dev[i],
			 mv ? rf.bw[i] : rf.peak[i], rf.bw[i]);
		PERFDB_TRY(report_legend(o, i, report_colour(i), leg));
	}
	for (size_t j = 0; j < k->rows; j++) {
		const struct perfdb_dbreport_point *p = &k->pts[j];
		double x = mv ? p->bytes : p->ai, y = mv ? p->gbps : p->gflops;
		if (!p->roof || !(x > 0) || !(y > 0))
			continue;
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<circle class=\"pt%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\"><title>%s.csv:%zu: %.3g FLOP/B, "
			"%.4g GFLOP/s, %.4g GB/s, %.0f%% of the roof%s",
			p->above ? " above" : "", report_px(&f, x), report_py(&f, y), p->above ? 5 : 3, k->name, p->line,
			p->ai, p->gflops, p->gbps, 100 * p->roof_frac, p->above ? " (above: a model error)" : ""));
		PERFDB_TRY(mark(o, p));
		PERFDB_TRY(perfdb_strbuf_addstr(o, "</title></circle>\n"));
	}
	return report_chart_close(o);
}

static int outliers(struct perfdb_strbuf *o, const struct perfdb_dbreport *r, size_t nabove)
{
	PERFDB_TRY(perfdb_strbuf_addf(o, "<details id=\"outliers\"%s><summary>%zu points above the roof</summary>\n"
		"<p>A point above its roof is not a result: the op's cost (docs/ops.md \"Costs\") is wrong, or the "
		"duration was not measured on the device it is plotted against. Each is listed here to investigate.</p>\n"
		"<table><tr><th>Row</th><th>Device</th><th>Duration</th><th>GFLOP/s</th><th>GB/s</th>"
		"<th>Roof GFLOP/s</th><th>Roof GB/s</th><th>Of the roof</th></tr>\n", nabove <= 20 ? " open" : "", nabove));
	for (size_t i = 0; i < r->nk; i++)
		for (size_t j = 0; j < r->k[i].rows; j++) {
			const struct perfdb_dbreport_point *p = &r->k[i].pts[j];
			if (!p->above)
				continue;
			char row[512];
			snprintf(row, sizeof(row), "%s.csv:%zu", r->k[i].name, p->line);
			PERFDB_TRY(perfdb_strbuf_addstr(o, "<tr class=\"above\">"));
			PERFDB_TRY(cell(o, row));
			PERFDB_TRY(cell(o, p->dev_name ? p->dev_name : "?"));
			PERFDB_TRY(perfdb_strbuf_addf(o, "<td>%s %.3f µs</td>", p->from_prof ? "profiling" : "microbench",
						      p->from_prof ? p->prof_us : p->mb_us));
			double v[4] = { p->gflops, p->gbps, p->peak_gflops, p->bw_gbps };
			for (size_t c = 0; c < 4; c++)
				PERFDB_TRY(perfdb_strbuf_addf(o, v[c] >= 100 ? "<td>%.0f</td>" : "<td>%.3g</td>", v[c]));
			PERFDB_TRY(perfdb_strbuf_addf(o, "<td>%.0f%%</td></tr>\n", 100 * p->roof_frac));
		}
	return perfdb_strbuf_addstr(o, "</table></details>\n");
}

static int section_roofline(struct perfdb_strbuf *o, const struct perfdb_dbreport *r,
			    const struct perfdb_dbreport_summary *s)
{
	PERFDB_TRY(perfdb_strbuf_addf(o, "<h2 id=\"roofline\">Roofline</h2>\n"
		"<p>Each row's FLOPs and bytes are its operator's cost in the operator layer (docs/ops.md "
		"\"Costs\": what the op touches, attention over its real lengths). A row is plotted against the "
		"peaks of the device that measured the duration plotted (the profiling duration: the database's "
		"device; a microbench duration: the host of its run record), and not plotted when that device "
		"or its peaks are unknown. Lines: min(peak, intensity × memory bandwidth). Charts for kernel types "
		"with at least %d points; points above the roof are drawn large in red and listed below.</p>\n",
		PERFDB_DBREPORT_MIN_POINTS));
	size_t big = 0;
	for (size_t i = 0; i < r->nk; i++)
		big += r->k[i].roof >= PERFDB_DBREPORT_MIN_POINTS;
	if (big) {
		PERFDB_TRY(perfdb_strbuf_addf(o, "<details open><summary>%zu per-type charts</summary>\n", big));
		for (size_t i = 0; i < r->nk; i++)
			if (r->k[i].roof >= PERFDB_DBREPORT_MIN_POINTS)
				PERFDB_TRY(roofline(o, &r->k[i]));
		PERFDB_TRY(perfdb_strbuf_addstr(o, "</details>\n"));
	} else {
		PERFDB_TRY(perfdb_strbuf_addstr(o, "<p class=\"none\">No kernel type has enough plotted points for "
					       "a chart.</p>\n"));
	}
	if (s->above)
		PERFDB_TRY(outliers(o, r, s->above));
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<details><summary>Every kernel type</summary>\n<table><tr>"
		"<th>Kernel</th><th>Family</th><th>Plotted</th><th>Above</th><th>Best GFLOP/s</th><th>Best GB/s</th>"
		"<th>No cost</th><th>Roof unknown</th><th>Why no cost</th></tr>\n"));
	for (size_t i = 0; i < r->nk; i++) {
		const struct perfdb_dbreport_kernel *k = &r->k[i];
		double bf = 0, bb = 0;
		for (size_t j = 0; j < k->rows; j++)
			if (k->pts[j].roof) {
				bf = fmax(bf, k->pts[j].gflops);
				bb = fmax(bb, k->pts[j].gbps);
			}
		PERFDB_TRY(perfdb_strbuf_addstr(o, "<tr>"));
		PERFDB_TRY(cell(o, k->name));
		PERFDB_TRY(cell(o, k->family));
		PERFDB_TRY(perfdb_strbuf_addf(o, "<td>%zu</td><td>%zu</td><td>%.1f</td><td>%.1f</td><td>%zu</td><td>%zu</td>",
					      k->roof, k->above, bf, bb, k->no_cost, k->no_device));
		PERFDB_TRY(cell(o, k->no_cost_why ? k->no_cost_why : ""));
		PERFDB_TRY(perfdb_strbuf_addstr(o, "</tr>\n"));
	}
	return perfdb_strbuf_addstr(o, "</table></details>\n");
}

/* ---- run records, coverage --------------------------------------------------------- */

static int section_runs(struct perfdb_strbuf *o, const struct perfdb_dbreport *r,
			const struct perfdb_dbreport_summary *s)
{
	PERFDB_TRY(perfdb_strbuf_addf(o, "<h2 id=\"runs\">Failed, contended and noisy rows</h2>\n<p>From the %zu run "
		"record(s) in reports/ (the newest record that measured each row): failed; contended, either left "
		"unwritten because too few samples were clean by the scheduler's accounts or measured while "
		"the memory-bandwidth probe read more than %.0f%% below its reference; or noisy, the kept samples' "
		"std / mean above %.0f%%. Re-run these.</p>\n", r->nruns, 100 * PERFDB_PROBE_TOLERANCE,
		100 * PERFDB_DBREPORT_NOISY));
	if (!s->failed && !s->contended && !s->noisy)
		return perfdb_strbuf_addstr(o, "<p class=\"none\">No row is flagged.</p>\n");
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<details open><summary>Flagged rows</summary>\n<table><tr><th>Row</th>"
				       "<th>Flag</th><th>Noise</th></tr>\n"));
	for (size_t i = 0; i < r->nk; i++)
		for (size_t j = 0; j < r->k[i].rows; j++) {
			const struct perfdb_dbreport_point *p = &r->k[i].pts[j];
			if (!p->failed && !p->contended && !p->noisy)
				continue;
			char row[512], noise[32] = "";
			snprintf(row, sizeof(row), "%s.csv:%zu", r->k[i].name, p->line);
			if (p->noise >= 0)
				snprintf(noise, sizeof(noise), "%.1f%%", 100 * p->noise);
			PERFDB_TRY(perfdb_strbuf_addstr(o, "<tr>"));
			PERFDB_TRY(cell(o, row));
			PERFDB_TRY(cell(o, p->failed ? "failed" : p->contended ? "contended" : "noisy"));
			PERFDB_TRY(cell(o, noise));
			PERFDB_TRY(perfdb_strbuf_addstr(o, "</tr>\n"));
		}
	return perfdb_strbuf_addstr(o, "</table></details>\n");
}

static int section_coverage(struct perfdb_strbuf *o, const struct perfdb_dbreport *r)
{
	PERFDB_TRY(perfdb_strbuf_addf(o, "<h2 id=\"coverage\">Coverage per kernel type</h2>\n"
		"<details><summary>%zu kernel tables</summary>\n<table>"
		"<tr><th>Kernel</th><th>Family</th><th>Rows</th><th>Profiling</th><th>MicroBench</th>"
		"<th>Theory-only</th><th>Both</th><th>Hotspots</th></tr>\n", r->nk));
	for (size_t i = 0; i < r->nk; i++) {
		const struct perfdb_dbreport_kernel *k = &r->k[i];
		PERFDB_TRY(perfdb_strbuf_addstr(o, "<tr>"));
		PERFDB_TRY(cell(o, k->name));
		PERFDB_TRY(cell(o, k->family));
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td></tr>\n",
			k->rows, k->with_prof, k->with_mb, k->theory_only, k->both, k->hot));
	}
	return perfdb_strbuf_addstr(o, "</table></details>\n");
}

/* ---- collectives --------------------------------------------------------------------- */

static int comm_chart(struct perfdb_strbuf *o, const struct perfdb_dbreport_comm *c, bool bw)
{
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++) {
		double y = bw ? c->pts[i].busbw_gbps : c->pts[i].dur_us;
		if (!(y > 0))
			continue;
		n++;
		xlo = fmin(xlo, c->pts[i].bytes);
		xhi = fmax(xhi, c->pts[i].bytes);
		ylo = fmin(ylo, y);
		yhi = fmax(yhi, y);
	}
	if (!n)
		return 0;
	struct report_frame f;
	report_frame_fit(&f, xlo, xhi, ylo, yhi);
	char title[256];
	snprintf(title, sizeof(title), "%s: %s against message size", c->op,
		 bw ? (c->busbw_derived ? "bus bandwidth (derived from bandwidth_gbps)" : "bus bandwidth") : "latency");
	PERFDB_TRY(report_chart_open(o, &f, n, title, "message size (B)", bw ? "busbw (GB/s)" : "latency (µs)"));
	size_t series = 0;
	for (size_t j = 0; j < c->n;) {
		size_t e = j;
		while (e < c->n && c->pts[e].ndev == c->pts[j].ndev && c->pts[e].tier == c->pts[j].tier)
			e++;
		const char *col = report_colour(series);
		PERFDB_TRY(perfdb_strbuf_addf(o, "<g class=\"series\" stroke=\"%s\" fill=\"%s\">"
					      "<polyline class=\"line\" points=\"", col, col));
		for (size_t i = j; i < e; i++) {
			double y = bw ? c->pts[i].busbw_gbps : c->pts[i].dur_us;
			if (y > 0)
				PERFDB_TRY(perfdb_strbuf_addf(o, "%.1f,%.1f ", report_px(&f, c->pts[i].bytes),
							      report_py(&f, y)));
		}
		PERFDB_TRY(perfdb_strbuf_addstr(o, "\"/>\n"));
		for (size_t i = j; i < e; i++) {
			double y = bw ? c->pts[i].busbw_gbps : c->pts[i].dur_us;
			if (y > 0)
				PERFDB_TRY(perfdb_strbuf_addf(o,
					"<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\">"
					"<title>%ld devices, tier %ld, %.0f B: %.4g %s</title></circle>\n",
					report_px(&f, c->pts[i].bytes), report_py(&f, y), c->pts[j].ndev, c->pts[j].tier,
					c->pts[i].bytes, y, bw ? "GB/s" : "µs"));
		}
		PERFDB_TRY(perfdb_strbuf_addstr(o, "</g>\n"));
		char leg[64];
		snprintf(leg, sizeof(leg), "%ld devices, tier %ld", c->pts[j].ndev, c->pts[j].tier);
		PERFDB_TRY(report_legend(o, series, col, leg));
		series++;
		j = e;
	}
	return report_chart_close(o);
}

static int section_comm(struct perfdb_strbuf *o, const struct perfdb_dbreport *r)
{
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<h2 id=\"collectives\">Collectives</h2>\n"));
	if (!r->nc)
		return perfdb_strbuf_addstr(o, "<p class=\"none\">No collective tables.</p>\n");
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<p>One curve per group size and topology tier, from "));
	PERFDB_TRY(report_esc(o, r->hccl_dir));
	PERFDB_TRY(perfdb_strbuf_addstr(o, ".</p>\n"));
	for (size_t i = 0; i < r->nc; i++) {
		PERFDB_TRY(comm_chart(o, &r->c[i], false));
		PERFDB_TRY(comm_chart(o, &r->c[i], true));
	}
	return 0;
}

/* ---- the page ------------------------------------------------------------------------ */

static int summary(struct perfdb_strbuf *o, const struct perfdb_dbreport *r, const struct perfdb_dbreport_summary *s)
{
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<section id=\"summary\"><h2>Summary</h2>\n<ul>\n<li><a href=\"#coverage\">"
				       "Usable durations</a>: "));
	PERFDB_TRY(figure(o, "usable", s->usable));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " of "));
	PERFDB_TRY(figure(o, "rows", s->rows));
	PERFDB_TRY(perfdb_strbuf_addf(o, " rows (%.1f%%).</li>\n<li><a href=\"#coverage\">Measured vs theory-only"
				      "</a>: ", pct(s->usable, s->rows)));
	PERFDB_TRY(figure(o, "profiled", s->profiled));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " profiled, "));
	PERFDB_TRY(figure(o, "mb_only", s->mb_only));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " microbench only, "));
	PERFDB_TRY(figure(o, "theory_only", s->theory_only));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " theory-only (no duration yet), "));
	PERFDB_TRY(figure(o, "out_of_range", s->out_of_range));
	PERFDB_TRY(perfdb_strbuf_addf(o, " with a duration outside %g–%g µs (usable, neither compared nor "
				      "plotted).</li>\n<li><a href=\"#scatter\">Microbench vs profiling</a>: ",
				      PERFDB_DBREPORT_MIN_US, PERFDB_DBREPORT_MAX_US));
	PERFDB_TRY(figure(o, "both", s->both));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " rows have both, "));
	PERFDB_TRY(figure(o, "hot", s->hot));
	PERFDB_TRY(perfdb_strbuf_addf(o, " outside %gx–%gx.", PERFDB_SCHEMA_BAND_LO, PERFDB_SCHEMA_BAND_HI));
	if (s->ngaps) {
		PERFDB_TRY(perfdb_strbuf_addf(o, " The %zu worst gaps (rows measured under contention left out):\n"
			"<table class=\"gaps\"><tr><th>Row</th><th>Microbench (µs)</th><th>Profiling (µs)</th>"
			"<th>Ratio</th><th>Noise</th></tr>\n", s->ngaps));
		for (size_t i = 0; i < s->ngaps; i++) {
			const struct perfdb_dbreport_kernel *k = &r->k[s->gaps[i].k];
			const struct perfdb_dbreport_point *p = &k->pts[s->gaps[i].p];
			char row[512];
			snprintf(row, sizeof(row), "%s.csv:%zu", k->name, p->line);
			PERFDB_TRY(perfdb_strbuf_addstr(o, "<tr class=\"gap\">"));
			PERFDB_TRY(cell(o, row));
			PERFDB_TRY(perfdb_strbuf_addf(o, "<td>%.3f</td><td>%.3f</td><td>%.2fx</td>", p->mb_us,
						      p->prof_us, s->gaps[i].ratio));
			if (p->noise >= 0)
				PERFDB_TRY(perfdb_strbuf_addf(o, "<td>%.1f%%%s</td></tr>\n", 100 * p->noise,
							      p->noisy ? " (noisy)" : ""));
			else
				PERFDB_TRY(perfdb_strbuf_addstr(o, "<td></td></tr>\n"));
		}
		PERFDB_TRY(perfdb_strbuf_addstr(o, "</table>"));
	}
	PERFDB_TRY(perfdb_strbuf_addstr(o, "</li>\n<li><a href=\"#runs\">Failed, contended or noisy</a>: "));
	PERFDB_TRY(figure(o, "failed", s->failed));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " failed, "));
	PERFDB_TRY(figure(o, "contended", s->contended));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " contended, "));
	PERFDB_TRY(figure(o, "noisy", s->noisy));
	PERFDB_TRY(perfdb_strbuf_addf(o, " noisy rows (%zu run records).</li>\n<li><a href=\"#roofline\">"
				      "Roofline</a>: ", r->nruns));
	PERFDB_TRY(figure(o, "roof", s->roof));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " rows plotted, <a href=\"#outliers\">"));
	PERFDB_TRY(figure(o, "above", s->above));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " above the roof</a>; not plotted: "));
	PERFDB_TRY(figure(o, "no_cost", s->no_cost));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " without a cost, "));
	PERFDB_TRY(figure(o, "no_device", s->no_device));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " without a known roof (the measuring device, or its peak for the dtype, unknown).</li>\n<li><a href=\"#collectives\">"
				       "Collectives</a>: "));
	PERFDB_TRY(figure(o, "comm_tables", s->comm_tables));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " tables ("));
	PERFDB_TRY(figure(o, "comm_ops", s->comm_ops));
	PERFDB_TRY(perfdb_strbuf_addf(o, " of the %d standard collectives), ", PERFDB_COMM_NOPS));
	PERFDB_TRY(figure(o, "comm_series", s->comm_series));
	PERFDB_TRY(perfdb_strbuf_addstr(o, " group-size/tier curves, "));
	PERFDB_TRY(figure(o, "comm_points", s->comm_points));
	return perfdb_strbuf_addstr(o, " measured sizes.</li>\n</ul></section>\n");
}

static int context(struct perfdb_strbuf *o, const struct perfdb_dbreport *r, const struct perfdb_dbreport_ctx *ctx)
{
	const struct perfdb_device *d = ctx->dev;
	char dates[64] = "";
	if (r->mtime_max) {
		time_t t0 = (time_t)r->mtime_min, t1 = (time_t)r->mtime_max;
		struct tm a, b;
		char s0[16], s1[16];
		gmtime_r(&t0, &a);
		gmtime_r(&t1, &b);
		strftime(s0, sizeof(s0), "%Y-%m-%d", &a);
		strftime(s1, sizeof(s1), "%Y-%m-%d", &b);
		snprintf(dates, sizeof(dates), strcmp(s0, s1) ? "%s to %s (UTC)" : "%s (UTC)", s0, s1);
	}
	struct { const char *k, *v; } kv[] = {
		{ "database", r->dbdir },
		{ "collectives", r->hccl_dir ? r->hccl_dir : "none" },
		{ "device", d ? d->name : "unknown" },
		{ "description", d && d->description ? d->description : "" },
		{ "generated", ctx->generated ? ctx->generated : "" },
		{ "perfdb", ctx->version ? ctx->version : "" },
		{ "libraries", ctx->libraries ? ctx->libraries : "" },
		{ "tables written", dates },
	};
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<details><summary>Run context</summary>\n<table class=\"ctx\">\n"));
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		PERFDB_TRY(perfdb_strbuf_addf(o, "<tr><th>%s</th>", kv[i].k));
		PERFDB_TRY(cell(o, kv[i].v));
		PERFDB_TRY(perfdb_strbuf_addstr(o, "</tr>\n"));
	}
	if (d)
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<tr><th>peaks</th><td>matrix bf16 %.1f TFLOP/s, fp32 %.1f TFLOP/s; vector bf16 %.1f TFLOP/s; "
			"memory %.1f GB/s</td></tr>\n",
			d->mma_flops[PERFDB_PEAK_BF16] / 1e12, d->mma_flops[PERFDB_PEAK_FP32] / 1e12,
			d->vector_flops[PERFDB_PEAK_BF16] / 1e12, d->memory_bandwidth / 1e9));
	return perfdb_strbuf_addstr(o, "</table></details>\n");
}

static const char css[] =
	"body{font-family:sans-serif;margin:1.5em auto;max-width:1280px;padding:0 1em;color:#222;line-height:1.4}"
	"table{border-collapse:collapse;margin:.6em 0}"
	"td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
	"td:first-child,th:first-child,.ctx td{text-align:left}"
	"#summary{background:#f6f8fa;border:1px solid #ddd;padding:.2em 1em}#summary li{margin:.3em 0}"
	"details{margin:.5em 0}summary{cursor:pointer;font-weight:bold}"
	"figure{display:inline-block;vertical-align:top;width:480px;max-width:100%;margin:0 1em 1em 0}"
	"figure svg{width:100%;height:auto}figcaption{font-size:90%;margin-bottom:4px}"
	".plot{fill:#fff;stroke:#888}.grid{stroke:#eee}.tick{font-size:11px}.label{font-size:12px}"
	".legend text{font-size:10px}"
	".band{fill:#2ca02c;fill-opacity:.15;stroke:none}.diag{stroke:#2ca02c;stroke-dasharray:4 3}"
	".roof{fill:none;stroke-width:2}.line{fill:none;stroke-width:1.5}"
	".pt{fill-opacity:.75}.pt.hot{stroke:#000;stroke-width:1}.pt.noisy{fill-opacity:.35}"
	".pt.contended{stroke:#d00;stroke-width:2;stroke-dasharray:2 1}"
	"circle.pt:not([fill]){fill:#1f77b4}circle.pt.above:not([fill]){fill:#d62728;stroke:#000}"
	".series circle.pt{fill:inherit}"
	"tr.above td{background:#fdecea}.none{color:#666}"
	"@media print{body{max-width:none;margin:0}figure{break-inside:avoid;width:45%}"
	"details>summary{list-style:none}}";

int perfdb_dbreport_html(const struct perfdb_dbreport *r, const struct perfdb_dbreport_ctx *ctx,
			 struct perfdb_strbuf *o)
{
	struct perfdb_dbreport_summary s;
	perfdb_dbreport_summary(r, &s);
	PERFDB_TRY(perfdb_strbuf_addf(o,
		"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		"<title>perfdb report</title><style>%s</style></head><body>\n<h1>perfdb report</h1>\n<p>", css));
	PERFDB_TRY(report_esc(o, r->dbdir));
	PERFDB_TRY(perfdb_strbuf_addf(o, " — device %s</p>\n", ctx->dev ? ctx->dev->name : "unknown"));
	PERFDB_TRY(summary(o, r, &s));
	PERFDB_TRY(context(o, r, ctx));
	PERFDB_TRY(section_scatter(o, r, &s));
	PERFDB_TRY(section_roofline(o, r, &s));
	PERFDB_TRY(section_runs(o, r, &s));
	PERFDB_TRY(section_comm(o, r));
	PERFDB_TRY(section_coverage(o, r));
	return perfdb_strbuf_addstr(o, "</body></html>\n");
}
