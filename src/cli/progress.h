/*
 * Progress on stderr for long work: a bar with rate and ETA on a terminal,
 * a plain line every 5 s otherwise, nothing when quiet.  Nothing is shown
 * for work that finishes within the first second.
 */
#ifndef PERFDB_CLI_PROGRESS_H
#define PERFDB_CLI_PROGRESS_H

struct progress {
	const char *label;
	unsigned long long total;
	int tty, quiet, shown;
	double start, last;
};

void progress_init(struct progress *p, const char *label, unsigned long long total, int quiet);
void progress_update(struct progress *p, unsigned long long done);
void progress_done(struct progress *p);

#endif
