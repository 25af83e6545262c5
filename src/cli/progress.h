/*
 * Progress on stderr for long work: on a terminal a bar with percentage,
 * rate and ETA, redrawn every 0.2 s (coloured unless $NO_COLOR is set and
 * not empty, or TERM=dumb; https://no-color.org); otherwise a plain line
 * every 5 s; nothing when quiet.  Nothing is shown for work that finishes
 * within the first second.  Amounts are bytes (shown in MB) unless a unit
 * is set (rows, cases: shown as counts).
 */
#ifndef PERFDB_CLI_PROGRESS_H
#define PERFDB_CLI_PROGRESS_H

#include <stddef.h>

struct progress {
	const char *label;
	const char *unit;         /* NULL: bytes, shown in MB */
	unsigned long long total; /* 0: unknown (no bar, no ETA) */
	unsigned long long failed; /* failures so far (rows): shown when non-zero */
	double eta_s;             /* with eta_given: the caller's estimate of the time left */
	int eta_given;            /* 0: the ETA comes from the rate so far */
	int tty, color, quiet, shown;
	double start, last;
};

void progress_init(struct progress *p, const char *label, unsigned long long total, int quiet);
/* Count in unit ("rows") instead of bytes. */
void progress_set_unit(struct progress *p, const char *unit);
void progress_update(struct progress *p, unsigned long long done);
void progress_done(struct progress *p);

/*
 * The text of one update after elapsed seconds (for tests): the bar form
 * when p->tty (starting with '\r', no newline), else one line ending in
 * '\n'.  Returns snprintf's count.
 */
int progress_format(char *buf, size_t n, const struct progress *p, unsigned long long done,
		    double elapsed);

#endif
