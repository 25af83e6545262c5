/*
 * The report's charts (render.h): inline SVG, log-log axes by decades with
 * SI tick labels, drawn here so that the page needs no script and no
 * external asset.  The viewBox keeps the drawing scalable: the CSS sizes
 * a chart to its column, on a 1366-px screen and on paper alike.
 */
#include <math.h>
#include <stdio.h>

#include "render.h"

#define W 480.0
#define H 330.0
#define ML 70.0
#define MR 16.0
#define MT 14.0
#define MB 46.0

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#393b79",
	"#637939",
};

const char *report_colour(size_t i)
{
	return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}

int report_esc(struct perfdb_strbuf *o, const char *s)
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

void report_frame_fit(struct report_frame *f, double xlo, double xhi, double ylo, double yhi)
{
	span_of(xlo, xhi, &f->x0, &f->x1);
	span_of(ylo, yhi, &f->y0, &f->y1);
}

double report_px(const struct report_frame *f, double v)
{
	return ML + (log10(v) - f->x0) / (f->x1 - f->x0) * (W - ML - MR);
}

double report_py(const struct report_frame *f, double v)
{
	return H - MB - (log10(v) - f->y0) / (f->y1 - f->y0) * (H - MT - MB);
}

void report_plot_box(double *l, double *r, double *b, double *t)
{
	*l = ML;
	*r = W - MR;
	*b = H - MB;
	*t = MT;
}

/* 10^e as a label: 0.001 to 0.1, then SI: 1, 10, 100, 1k ... 100P (below 0.001: µ, n); beyond, 1e18. */
static void tick_label(double e, char *buf, size_t n)
{
	static const char *const si[] = { "n", "µ", "m", "", "k", "M", "G", "T", "P" };
	int d = (int)e, g = (int)floor(d / 3.0);
	if (d >= -3 && d < 0) {
		snprintf(buf, n, "%.*f", -d, pow(10, d));
		return;
	}
	if (g < -3 || g > 5) {
		snprintf(buf, n, "1e%d", d);
		return;
	}
	snprintf(buf, n, "%.0f%s", pow(10, d - 3 * g), si[g + 3]);
}

int report_chart_open(struct perfdb_strbuf *o, const struct report_frame *f, size_t npts, const char *title,
		      const char *xl, const char *yl)
{
	PERFDB_TRY(perfdb_strbuf_addstr(o, "<figure><figcaption>"));
	PERFDB_TRY(report_esc(o, title));
	PERFDB_TRY(perfdb_strbuf_addf(o,
		"</figcaption>\n<svg class=\"chart\" data-points=\"%zu\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n"
		"<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" class=\"plot\"/>\n",
		npts, W, H, ML, MT, W - ML - MR, H - MT - MB));
	char lab[32];
	for (double e = f->x0; e <= f->x1; e++) {
		double x = ML + (e - f->x0) / (f->x1 - f->x0) * (W - ML - MR);
		tick_label(e, lab, sizeof(lab));
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<line class=\"grid\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
			x, MT, x, H - MB, x, H - MB + 15, lab));
	}
	for (double e = f->y0; e <= f->y1; e++) {
		double y = H - MB - (e - f->y0) / (f->y1 - f->y0) * (H - MT - MB);
		tick_label(e, lab, sizeof(lab));
		PERFDB_TRY(perfdb_strbuf_addf(o,
			"<line class=\"grid\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			ML, y, W - MR, y, ML - 5, y + 4, lab));
	}
	PERFDB_TRY(perfdb_strbuf_addf(o, "<text class=\"label\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
				      (W + ML) / 2, H - 10));
	PERFDB_TRY(report_esc(o, xl));
	PERFDB_TRY(perfdb_strbuf_addf(o,
		"</text><text class=\"label\" transform=\"translate(16 %.0f) rotate(-90)\" text-anchor=\"middle\">",
		(H - MB + MT) / 2));
	PERFDB_TRY(report_esc(o, yl));
	return perfdb_strbuf_addstr(o, "</text>\n");
}

int report_chart_close(struct perfdb_strbuf *o)
{
	return perfdb_strbuf_addstr(o, "</svg></figure>\n");
}

int report_legend(struct perfdb_strbuf *o, size_t i, const char *colour, const char *text)
{
	double y = MT + 12 + 13 * (double)i;
	PERFDB_TRY(perfdb_strbuf_addf(o,
		"<g class=\"legend\"><rect x=\"%.0f\" y=\"%.0f\" width=\"8\" height=\"8\" fill=\"%s\"/>"
		"<text x=\"%.0f\" y=\"%.0f\">", ML + 6, y - 8, colour, ML + 18, y));
	PERFDB_TRY(report_esc(o, text));
	return perfdb_strbuf_addstr(o, "</text></g>\n");
}
