/* Progress reporting on stderr (src/cli/progress.h). */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_init(struct progress *p, const char *label, unsigned long long total, int quiet)
{
	p->label = label;
	p->total = total;
	p->quiet = quiet;
	p->tty = isatty(2);
	p->shown = 0;
	p->start = p->last = now();
}

void progress_update(struct progress *p, unsigned long long done)
{
	if (p->quiet)
		return;
	double t = now();
	double interval = p->tty ? 0.2 : 5.0;
	if (t - p->start < 1.0 || t - p->last < interval)
		return;
	p->last = t;
	double mb = (double)done / 1e6, rate = mb / (t - p->start);
	double frac = p->total ? (double)done / (double)p->total : 0;
	double eta = rate > 0 && p->total ? ((double)p->total - (double)done) / 1e6 / rate : 0;
	if (p->tty) {
		int w = 30, fill = (int)(frac * w);
		if (fill > w)
			fill = w;
		fprintf(stderr, "\r%s [%.*s%.*s] %3.0f%% %.0f/%.0f MB %.0f MB/s ETA %.0fs ",
			p->label, fill, "##############################", w - fill,
			"------------------------------", frac * 100, mb, (double)p->total / 1e6,
			rate, eta);
	} else {
		fprintf(stderr, "%s: %.0f%% (%.0f of %.0f MB, %.0f MB/s)\n", p->label, frac * 100, mb,
			(double)p->total / 1e6, rate);
	}
	p->shown = 1;
}

void progress_done(struct progress *p)
{
	if (p->shown && p->tty)
		fprintf(stderr, "\r%*s\r", 100, "");
	p->shown = 0;
}
