/*
 * What the report's renderers share (render.c, render_html.c,
 * render_svg.c): escaping, and the inline-SVG log-log charts.
 */
#ifndef PERFDB_REPORT_RENDER_H
#define PERFDB_REPORT_RENDER_H

#include <stddef.h>

#include "report/dbreport.h"

/* HTML-escape s into o. */
int report_esc(struct perfdb_strbuf *o, const char *s);

/* A log-log frame over whole decades: x in [10^x0, 10^x1], y in [10^y0, 10^y1]. */
struct report_frame {
	double x0, x1, y0, y1;
};

/* The frame's decades spanning [xlo, xhi] x [ylo, yhi] (positive), with a little room. */
void report_frame_fit(struct report_frame *f, double xlo, double xhi, double ylo, double yhi);
double report_px(const struct report_frame *f, double v);
double report_py(const struct report_frame *f, double v);
/* The frame's left and right x, bottom and top y, in pixels. */
void report_plot_box(double *l, double *r, double *b, double *t);

/*
 * Open a chart of npts (> 0) points: <figure>, caption, <svg class="chart"
 * data-points="npts">, frame, decade grid with ticks and the axis labels
 * (with their units).  Close with report_chart_close.
 */
int report_chart_open(struct perfdb_strbuf *o, const struct report_frame *f, size_t npts, const char *title,
		      const char *xlabel, const char *ylabel);
int report_chart_close(struct perfdb_strbuf *o);
/* A legend entry (coloured dot and text) at row i of the chart's top-left corner. */
int report_legend(struct perfdb_strbuf *o, size_t i, const char *colour, const char *text);

/* The colour of series or family index i. */
const char *report_colour(size_t i);

#endif
