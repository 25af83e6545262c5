/* Progress reporting on stderr (src/cli/progress.h). */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
	p->label = label;
	p->unit = NULL;
	p->total = total;
	p->quiet = quiet;
	p->tty = isatty(2);
	p->color = p->tty && !(nc && *nc) && !(term && !strcmp(term, "dumb"));
	p->shown = 0;
	p->failed = 0;
	p->eta_s = 0;
	p->eta_given = 0;
	p->start = p->last = now();
}

void progress_set_unit(struct progress *p, const char *unit)
{
	p->unit = unit;
}

/* 42s, 3m07s, 2h05m */
static void fmt_eta(char *buf, size_t n, double s)
{
	long t = (long)(s + 0.5);
	if (t < 60)
		snprintf(buf, n, "%lds", t);
	else if (t < 3600)
		snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, n, "%ldh%02ldm", t / 3600, t % 3600 / 60);
}

int progress_format(char *buf, size_t n, const struct progress *p, unsigned long long done,
		    double elapsed)
{
	double scale = p->unit ? 1.0 : 1e6;
	const char *u = p->unit ? p->unit : "MB";
	double v = (double)done / scale, tot = (double)p->total / scale;
	double rate = elapsed > 0 ? v / elapsed : 0;
	char eta[32] = "?";
	if (p->eta_given && p->eta_s >= 0 && p->total >= done)
		fmt_eta(eta, sizeof(eta), p->eta_s);   /* the rows to come, by their cost */
	else if (rate > 0 && p->total >= done)
		fmt_eta(eta, sizeof(eta), (tot - v) / rate);
	char fl[48] = "";
	if (p->failed)
		snprintf(fl, sizeof(fl), ", %llu failed", p->failed);
	if (!p->total)
		return snprintf(buf, n, p->tty ? "\r%s: %.0f %s%s, %.1f %s/s " : "%s: %.0f %s%s, %.1f %s/s\n",
				p->label, v, u, fl, rate, u);
	double frac = (double)done / (double)p->total;
	if (frac > 1)
		frac = 1;
	if (!p->tty)
		return snprintf(buf, n, "%s: %.0f%% (%.0f of %.0f %s%s, %.1f %s/s, ETA %s)\n", p->label,
				frac * 100, v, tot, u, fl, rate, u, eta);
	int w = 30, fill = (int)(frac * w);
	return snprintf(buf, n, "\r%s [%s%.*s%s%.*s] %3.0f%% %.0f/%.0f %s%s %.1f %s/s ETA %s ",
			p->label, p->color ? "\033[32m" : "", fill, "##############################",
			p->color ? "\033[0m" : "", w - fill, "------------------------------",
			frac * 100, v, tot, u, fl, rate, u, eta);
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
	char buf[512];
	progress_format(buf, sizeof(buf), p, done, t - p->start);
	fputs(buf, stderr);
	p->shown = 1;
}

void progress_done(struct progress *p)
{
	if (p->shown && p->tty)
		fprintf(stderr, "\r%*s\r", 110, "");
	p->shown = 0;
}
