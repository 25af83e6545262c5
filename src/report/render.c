/*
 * Rendering of the database report (include/perfdb/dbreport.h,
 * docs/report.md): the markdown summary, and one HTML page whose charts
 * are inline SVG drawn here (log-log axes by decades), with no script and
 * no external asset, so that it reads the same offline.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfdb/dbreport.h"
#include "perfdb/replay.h"
#include "perfdb/schema.h"

#define W 460.0
#define H 320.0
#define ML 64.0
#define MR 16.0
#define MT 16.0
#define MB 44.0

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
};

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

static const char *family_name(enum perfdb_op_family f)
{
	return f == PERFDB_OP_FAMILY_MATMUL ? "matmul" : "vector";
}

int perfdb_dbreport_markdown(const struct perfdb_dbreport *r,
			     const struct perfdb_dbreport_ctx *ctx,
			     struct perfdb_strbuf *out)
{
	PERFDB_TRY(perfdb_strbuf_addf(out, "# perfdb report\n\n- database: %s\n- collectives: %s\n",
				      r->dbdir, r->hccl_dir ? r->hccl_dir : "none"));
	if (ctx->dev)
		PERFDB_TRY(perfdb_strbuf_addf(out, "- device: %s\n", ctx->dev->name));
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
	static const char *const hr[] = { "Kernel", "Family", "Points", "Best GFLOP/s",
					  "Best GB/s", "Peak GFLOP/s" };
	rows = alloc_rows(r->nk, 6);
	if (!rows)
		return -PERFDB_ENOMEM;
	for (size_t i = 0; i < r->nk; i++) {
		const struct perfdb_dbreport_kernel *k = &r->k[i];
		double bf = 0, bb = 0;
		size_t np = 0;
		for (size_t j = 0; j < k->rows; j++) {
			if (k->pts[j].gflops <= 0)
				continue;
			np++;
			bf = fmax(bf, k->pts[j].gflops);
			bb = fmax(bb, k->pts[j].gbps);
		}
		rows[i][0] = strdup(k->name);
		rows[i][1] = strdup(family_name(k->family));
		rows[i][2] = fmt_dec(0, (double)np);
		rows[i][3] = fmt_dec(2, bf);
		rows[i][4] = fmt_dec(2, bb);
		rows[i][5] = fmt_dec(0, perfdb_dbreport_peak_flops(ctx->dev, k->family,
								     k->dtype_bits) / 1e9);
	}
	if (!rows_ok(rows, r->nk, 6))
		return -PERFDB_ENOMEM;
	PERFDB_TRY(md_rows(out, hr, 6, rows, r->nk));

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

/* ---- HTML ------------------------------------------------------------ */

static int esc(struct perfdb_strbuf *o, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': PERFDB_TRY(perfdb_strbuf_addstr(o, "&amp;")); break;
		case '<': PERFDB_TRY(perfdb_strbuf_addstr(o, "&lt;")); break;
		case '>': PERFDB_TRY(perfdb_strbuf_addstr(o, "&gt;")); break;
		case '"': PERFDB_TRY(perfdb_strbuf_addstr(o, "&quot;")); break;
		default: PERFDB_TRY(perfdb_strbuf_addch(o, *s));
		}
	}
	return 0;
}

/* Log-log frame: decades [x0, x1] x [y0, y1] (exponents). */
struct frame {
	double x0, x1, y0, y1;
};

static void span_of(double lo, double hi, double *e0, double *e1)
{
	if (!(lo > 0) || !(hi > 0)) {
		lo = 1;
		hi = 10;
	}
	/* a little room, so that a point on a decade is not drawn on the frame */
	*e0 = floor(log10(lo) - 0.05);
	*e1 = ceil(log10(hi) + 0.05);
	if (*e1 <= *e0)
		*e1 = *e0 + 1;
}

static double px(const struct frame *f, double v)
{
	return ML + (log10(v) - f->x0) / (f->x1 - f->x0) * (W - ML - MR);
}

static double py(const struct frame *f, double v)
{
	return H - MB - (log10(v) - f->y0) / (f->y1 - f->y0) * (H - MT - MB);
}

static int chart_open(struct perfdb_strbuf *o, const struct frame *f, size_t npts,
		      const char *title, const char *xl, const char *yl)
{
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<figure><figcaption>"));
	PERFDB_TRY(esc(o, title));
	PERFDB_TRY(perfdb_strbuf_addf(o,
		"</figcaption>\n<svg class=\"chart\" data-points=\"%zu\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" class=\"plot\"/>\n",
		npts, W, H, W, H, ML, MT, W - ML - MR, H - MT - MB));
	for (double e = f->x0; e <= f->x1; e++) {
		double x = ML + (e - f->x0) / (f->x1 - f->x0) * (W - ML - MR);
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<line class=\"grid\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">1e%.0f</text>\n",
			x, MT, x, H - MB, x, H - MB + 14, e));
	}
	for (double e = f->y0; e <= f->y1; e++) {
		double y = H - MB - (e - f->y0) / (f->y1 - f->y0) * (H - MT - MB);
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<line class=\"grid\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">1e%.0f</text>\n",
			ML, y, W - MR, y, ML - 4, y + 4, e));
	}
	PERFDB_TRY(perfdb_strbuf_addf(o,
		"<text class=\"label\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
		(W + ML) / 2, H - 8));
	PERFDB_TRY(esc(o, xl));
	PERFDB_TRY(perfdb_strbuf_addf(o,
		"</text><text class=\"label\" transform=\"translate(14 %.0f) rotate(-90)\" "
		"text-anchor=\"middle\">", (H - MB + MT) / 2));
	PERFDB_TRY(esc(o, yl));
	PERFDB_TRY(perfdb_strbuf_addstr(o, "</text>\n"));
	if (!npts)
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<text class=\"empty\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">"
			"no data points</text>\n", (W + ML) / 2, H / 2));
	return 0;
}

static int chart_close(struct perfdb_strbuf *o)
{
	return perfdb_strbuf_addstr(o, "</svg></figure>\n");
}

static int scatter(struct perfdb_strbuf *o, const struct perfdb_dbreport_kernel *k)
{
	double lo = INFINITY, hi = 0;
	size_t n = 0;
	for (size_t i = 0; i < k->rows; i++) {
		const struct perfdb_dbreport_point *p = &k->pts[i];
		if (p->mb_us > 0 && p->prof_us > 0) {
			n++;
			lo = fmin(lo, fmin(p->mb_us, p->prof_us));
			hi = fmax(hi, fmax(p->mb_us, p->prof_us));
		}
	}
	struct frame f;
	span_of(n ? lo : 1, n ? hi : 10, &f.x0, &f.x1);
	f.y0 = f.x0;
	f.y1 = f.x1;
	char title[512];
	snprintf(title, sizeof(title), "%s: microbench vs profiling duration (%zu hotspots)",
		 k->name, k->hot);
	PERFDB_TRY(chart_open(o, &f, n, title, "profiling duration (us)",
			      "microbench duration (us)"));
	double a = pow(10, f.x0), b = pow(10, f.x1);
	/* the band, cut exactly at the frame's edges */
	PERFDB_TRY(perfdb_strbuf_addf(o,
		"<polygon class=\"band\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>"
		"<line class=\"diag\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		px(&f, a), py(&f, a), px(&f, a / PERFDB_SCHEMA_BAND_LO), py(&f, a),
		px(&f, b), py(&f, b * PERFDB_SCHEMA_BAND_LO), px(&f, b), py(&f, b),
		px(&f, b / PERFDB_SCHEMA_BAND_HI), py(&f, b),
		px(&f, a), py(&f, a * PERFDB_SCHEMA_BAND_HI),
		px(&f, a), py(&f, a), px(&f, b), py(&f, b)));
	for (size_t i = 0; i < k->rows; i++) {
		const struct perfdb_dbreport_point *p = &k->pts[i];
		if (p->mb_us > 0 && p->prof_us > 0)
			PERFDB_TRY(perfdb_strbuf_addf(o,
				"<circle class=\"pt%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\">"
				"<title>row %zu: profiling %.3f us, microbench %.3f us</title></circle>\n",
				p->hot ? " hot" : "", px(&f, p->prof_us), py(&f, p->mb_us),
				p->hot ? 5 : 3, i + 1, p->prof_us, p->mb_us));
	}
	return chart_close(o);
}

static int roofline(struct perfdb_strbuf *o, const struct perfdb_dbreport_kernel *k,
		    const struct perfdb_device *dev)
{
	double peak = perfdb_dbreport_peak_flops(dev, k->family, k->dtype_bits) / 1e9;
	double bw = dev ? dev->memory_bandwidth / 1e9 : 0;
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
	size_t n = 0;
	for (size_t i = 0; i < k->rows; i++) {
		const struct perfdb_dbreport_point *p = &k->pts[i];
		if (p->gflops > 0 && p->ai > 0) {
			n++;
			xlo = fmin(xlo, p->ai);
			xhi = fmax(xhi, p->ai);
			ylo = fmin(ylo, p->gflops);
			yhi = fmax(yhi, p->gflops);
		}
	}
	if (!n) {
		xlo = 0.1;
		xhi = 10;
		ylo = 1;
		yhi = 10;
	}
	if (peak > 0 && bw > 0) {
		xlo = fmin(xlo, peak / bw / 10);
		xhi = fmax(xhi, peak / bw * 10);
		yhi = fmax(yhi, peak);
	}
	struct frame f;
	span_of(xlo, xhi, &f.x0, &f.x1);
	span_of(ylo, yhi, &f.y0, &f.y1);
	char title[512];
	snprintf(title, sizeof(title), "%s (%s): roofline, peak %.0f GFLOP/s, %.0f GB/s",
		 k->name, family_name(k->family), peak, bw);
	PERFDB_TRY(chart_open(o, &f, n, title, "arithmetic intensity (FLOP/byte)",
			      "achieved GFLOP/s"));
	if (peak > 0 && bw > 0) {
		double a = pow(10, f.x0), b = pow(10, f.x1), ridge = peak / bw;
		double ya = fmax(a * bw, pow(10, f.y0));
		double xa = ya / bw;
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<polyline class=\"roof\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
			px(&f, xa), py(&f, ya), px(&f, ridge), py(&f, peak), px(&f, b),
			py(&f, peak)));
	}
	for (size_t i = 0; i < k->rows; i++) {
		const struct perfdb_dbreport_point *p = &k->pts[i];
		if (p->gflops > 0 && p->ai > 0)
			PERFDB_TRY(perfdb_strbuf_addf(o,
				"<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\">"
				"<title>row %zu: %.3f FLOP/B, %.2f GFLOP/s, %.2f GB/s</title></circle>\n",
				px(&f, p->ai), py(&f, p->gflops), i + 1, p->ai, p->gflops, p->gbps));
	}
	return chart_close(o);
}

static int comm_chart(struct perfdb_strbuf *o, const struct perfdb_dbreport_comm *c, bool bw)
{
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++) {
		double y = bw ? c->pts[i].busbw_gbps : c->pts[i].dur_us;
		if (y <= 0)
			continue;
		n++;
		xlo = fmin(xlo, c->pts[i].bytes);
		xhi = fmax(xhi, c->pts[i].bytes);
		ylo = fmin(ylo, y);
		yhi = fmax(yhi, y);
	}
	struct frame f;
	span_of(n ? xlo : 1, n ? xhi : 10, &f.x0, &f.x1);
	span_of(n ? ylo : 1, n ? yhi : 10, &f.y0, &f.y1);
	char title[256];
	snprintf(title, sizeof(title), "%s: %s", c->op,
		 bw ? (c->busbw_derived ? "busbw (derived from bandwidth_gbps)" : "busbw")
		    : "latency");
	PERFDB_TRY(chart_open(o, &f, n, title, "message size (bytes)",
			      bw ? "busbw (GB/s)" : "duration (us)"));
	size_t series = 0;
	for (size_t j = 0; j < c->n;) {
		size_t e = j;
		while (e < c->n && c->pts[e].ndev == c->pts[j].ndev && c->pts[e].tier == c->pts[j].tier)
			e++;
		const char *col = palette[series % (sizeof(palette) / sizeof(palette[0]))];
		PERFDB_TRY(perfdb_strbuf_addf(o, "<g class=\"series\" stroke=\"%s\" fill=\"%s\">"
					      "<polyline class=\"line\" points=\"", col, col));
		for (size_t i = j; i < e; i++) {
			double y = bw ? c->pts[i].busbw_gbps : c->pts[i].dur_us;
			if (y > 0)
				PERFDB_TRY(perfdb_strbuf_addf(o, "%.1f,%.1f ", px(&f, c->pts[i].bytes),
							      py(&f, y)));
		}
		PERFDB_TRY(perfdb_strbuf_addstr(o, "\"/>\n"));
		for (size_t i = j; i < e; i++) {
			double y = bw ? c->pts[i].busbw_gbps : c->pts[i].dur_us;
			if (y > 0)
				PERFDB_TRY(perfdb_strbuf_addf(o,
					"<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\">"
					"<title>%.0f bytes: %.2f</title></circle>\n",
					px(&f, c->pts[i].bytes), py(&f, y), c->pts[i].bytes, y));
		}
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<text class=\"legend\" stroke=\"none\" x=\"%.0f\" y=\"%.0f\">n=%ld tier %ld</text></g>\n",
			ML + 8, MT + 14 + 14 * (double)series, c->pts[j].ndev, c->pts[j].tier));
		series++;
		j = e;
	}
	return chart_close(o);
}

static const char css[] =
	"body{font-family:sans-serif;margin:2em;color:#222}"
	"table{border-collapse:collapse;margin:1em 0}"
	"td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
	"td:first-child,th:first-child,.ctx td{text-align:left}"
	"figure{display:inline-block;margin:0 1em 1em 0}"
	"figcaption{font-size:90%;margin-bottom:4px}"
	".plot{fill:#fff;stroke:#888}.grid{stroke:#eee}.tick,.label,.legend,.empty{font-size:11px}"
	".band{fill:#2ca02c;fill-opacity:.15;stroke:none}.diag{stroke:#2ca02c;stroke-dasharray:4 3}"
	".roof{fill:none;stroke:#d62728;stroke-width:2}.line{fill:none;stroke-width:1.5}"
	".pt{fill:#1f77b4;fill-opacity:.8}.pt.hot{fill:#d62728}"
	".series .pt{fill:inherit}";

int perfdb_dbreport_html(const struct perfdb_dbreport *r,
			 const struct perfdb_dbreport_ctx *ctx,
			 struct perfdb_strbuf *o)
{
	PERFDB_TRY(perfdb_strbuf_addf(o,
		"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<title>perfdb report</title><style>%s</style></head><body>\n"
		"<h1>perfdb report</h1>\n<h2>Run context</h2>\n<table class=\"ctx\">\n", css));
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
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		PERFDB_TRY(perfdb_strbuf_addf(o, "<tr><th>%s</th><td>", kv[i].k));
		PERFDB_TRY(esc(o, kv[i].v));
		PERFDB_TRY(perfdb_strbuf_addstr(o, "</td></tr>\n"));
	}
	if (d)
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<tr><th>peaks</th><td>matrix bf16 %.1f TFLOP/s, fp32 %.1f TFLOP/s; "
			"memory %.1f GB/s</td></tr>\n",
			d->mma_flops[PERFDB_PEAK_BF16] / 1e12, d->mma_flops[PERFDB_PEAK_FP32] / 1e12,
			d->memory_bandwidth / 1e9));
	PERFDB_TRY(perfdb_strbuf_addstr(o, "</table>\n<h2>Coverage per kernel type</h2>\n<table>"
		"<tr><th>Kernel</th><th>Rows</th><th>Profiling</th><th>MicroBench</th>"
		"<th>Theory-only</th><th>Both</th><th>Hotspots</th></tr>\n"));
	for (size_t i = 0; i < r->nk; i++) {
		const struct perfdb_dbreport_kernel *k = &r->k[i];
		PERFDB_TRY(perfdb_strbuf_addstr(o, "<tr><td>"));
		PERFDB_TRY(esc(o, k->name));
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td></tr>\n",
			k->rows, k->with_prof, k->with_mb, k->theory_only, k->both, k->hot));
	}
	PERFDB_TRY(perfdb_strbuf_addf(o, "</table>\n<h2>Microbench vs profiling</h2>\n"
		"<p>Green band: microbench within %gx-%gx of profiling; red points are hotspots.</p>\n",
		PERFDB_SCHEMA_BAND_LO, PERFDB_SCHEMA_BAND_HI));
	for (size_t i = 0; i < r->nk; i++)
		PERFDB_TRY(scatter(o, &r->k[i]));
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<h2>Roofline per kernel type</h2>\n"
		"<p>Achieved GFLOP/s (profiling duration, else microbench) against FLOP per byte "
		"moved; red: min(peak, intensity x memory bandwidth) from the device registry.</p>\n"));
	for (size_t i = 0; i < r->nk; i++)
		PERFDB_TRY(roofline(o, &r->k[i], d));
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<h2>Collectives</h2>\n"));
	if (!r->nc)
		PERFDB_TRY(perfdb_strbuf_addstr(o, "<p>No collective tables.</p>\n"));
	for (size_t i = 0; i < r->nc; i++) {
		PERFDB_TRY(comm_chart(o, &r->c[i], false));
		PERFDB_TRY(comm_chart(o, &r->c[i], true));
	}
	return perfdb_strbuf_addstr(o, "</body></html>\n");
}
