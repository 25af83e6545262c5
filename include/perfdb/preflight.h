/*
 * How busy the machine is before a measuring run starts (preflight.c;
 * docs/measuring.md "The preflight"): what `perfdb microbench` and
 * `perfdb comm` print on their first line, and what `--require-quiet`
 * refuses to start on.
 *
 * Over a short window (PERFDB_PREFLIGHT_WINDOW_S) while this process
 * sleeps: the CPU time other processes used (/proc/stat's busy ticks less
 * our own rusage), the VM's steal, and the memory bandwidth one thread
 * reads, against this machine's quiet figure.
 *
 * The quiet figures live in one small JSON file per machine,
 * <state dir>/quiet-<hostname>.json (state dir: $PERFDB_STATE_DIR, else
 * $XDG_STATE_HOME/perfdb, else ~/.local/state/perfdb): the last
 * PERFDB_QUIET_KEEP readings of three kinds, each compared only with
 * readings taken the same way:
 *   - "preflight_gbs": the preflight's own probe, recorded whenever the
 *     preflight finds the CPUs quiet (other processes and steal);
 *   - "row_gbs": a quiet run's median row probe (the replay engine's probe
 *     between rows), the reference of a later run's rows, so that a run
 *     contended from start to end cannot set its own reference;
 *   - "torch_gbs": the torch backend's probe (data/torch_replay.py, numpy's
 *     reading of the same lines, which is not the C loop's figure), every
 *     run's median reading.
 * A figure is the median of its readings (the torch one: the highest,
 * src/replay/torch_run.c says why).
 */
#ifndef PERFDB_PREFLIGHT_H
#define PERFDB_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

#define PERFDB_PREFLIGHT_WINDOW_S 0.5
#define PERFDB_PREFLIGHT_OTHER_CPUS 0.25   /* other processes' CPUs from which the machine is busy */
#define PERFDB_PREFLIGHT_STEAL 0.02        /* steal fraction from which a VM is busy */
#define PERFDB_QUIET_KEEP 9                /* readings kept per kind */

/* The aggregate cpu line of /proc/stat, in ticks. */
struct perfdb_cpu_ticks {
	uint64_t busy;     /* user + nice + system + irq + softirq + steal */
	uint64_t steal;
	uint64_t total;    /* busy + idle + iowait */
};

/* Parse the text of /proc/stat; -PERFDB_EPARSE without a "cpu " line of at least 4 fields. */
int perfdb_cpu_ticks_parse(const char *text, struct perfdb_cpu_ticks *t);

/* This machine's quiet figures (0: none recorded). */
struct perfdb_quiet {
	double preflight_gbs[PERFDB_QUIET_KEEP];
	size_t npreflight;
	double row_gbs[PERFDB_QUIET_KEEP];
	size_t nrow;
	double torch_gbs[PERFDB_QUIET_KEEP];   /* the torch backend's probe, read its own way */
	size_t ntorch;
};

/* The kinds of reading, each compared only with its own. */
enum perfdb_quiet_kind {
	PERFDB_QUIET_PREFLIGHT,   /* the preflight's probe */
	PERFDB_QUIET_ROW,         /* the native replay's row probe, a quiet run's median */
	PERFDB_QUIET_TORCH,       /* the torch backend's probe (numpy), a quiet run's median */
};

/* The state file's path for this host into out. */
int perfdb_quiet_path(struct perfdb_strbuf *out);
/* Parse the file's text; a file that is not ours reads as no figures (-PERFDB_EPARSE). */
int perfdb_quiet_parse(const char *text, size_t len, struct perfdb_quiet *q);
/* Load (a missing or unreadable file: no figures, 0). */
int perfdb_quiet_load(struct perfdb_quiet *q);
/* The median of the kept readings of a kind, 0 when none. */
double perfdb_quiet_figure(const double *v, size_t n);
/* Append a reading (the oldest goes past PERFDB_QUIET_KEEP) and write the file atomically. */
int perfdb_quiet_note(enum perfdb_quiet_kind kind, double gbs, struct perfdb_err *err);

struct perfdb_preflight {
	double window_s;
	int ncpus;                 /* CPUs online */
	double other_cpus;         /* other processes' CPU time / wall time, in CPUs */
	double steal;              /* steal / all ticks over the window */
	double probe_gbs;          /* memory bandwidth now (0: not probed) */
	double quiet_gbs;          /* this machine's quiet preflight figure (0: none) */
	double row_quiet_gbs;      /* its quiet row figure (0: none) */
	bool quiet;
	char why[256];             /* why not quiet ("" when quiet) */
};

/*
 * Watch the machine for the window, probe the memory bandwidth (probe:
 * false skips it: PERFDB_PROBE=0), judge, and record the probe as a quiet
 * reading when the CPUs were quiet (a state file that cannot be written
 * is not an error: the figure is not kept).  0, or -PERFDB_EIO when
 * /proc/stat cannot be read.
 */
int perfdb_preflight_run(bool probe, struct perfdb_preflight *pf, struct perfdb_err *err);

/* The judgement of given readings (the arithmetic of perfdb_preflight_run; fills quiet and why). */
void perfdb_preflight_judge(struct perfdb_preflight *pf);

/* One line for people: "other processes 0.02 of 2 CPUs, steal 0.0 %, memory 31.2 GB/s (96 % of quiet): quiet". */
void perfdb_preflight_line(const struct perfdb_preflight *pf, char *buf, size_t cap);

#endif
