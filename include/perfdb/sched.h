/*
 * What the kernel's scheduler says about a timed block (sched.c;
 * docs/measuring.md "The scheduler's accounts"): an absolute sign of
 * contention, read from the process's own accounts rather than inferred
 * from the timings of the run itself.
 *
 * A block of timed work is bracketed by two readings.  Between them, per
 * thread of the process (the OpenMP and oneDNN workers included):
 *   - run-queue wait: time a runnable thread waited for a CPU
 *     (/proc/self/task/<tid>/schedstat, second field, ns);
 *   - involuntary context switches (/proc/self/task/<tid>/status);
 *   - CPU migrations (/proc/self/task/<tid>/sched, se.nr_migrations, when
 *     the kernel has it);
 * and for the machine, the steal time of a VM (/proc/stat, in ticks).
 * Each reading also counts, at its instant, the tasks running or
 * runnable on the whole machine (/proc/loadavg) and how many of them are
 * this process's threads (their status files' State: R): the others are
 * other processes, whose share of the CPUs no account of ours shows when
 * they take a CPU we leave free in the guest but share on the host
 * (docs/measuring.md "Other processes at the block's edges").
 * A thread that spins at a barrier while its partner waits for a CPU
 * shows the wait here even when CPU/Wall stays near 1.
 *
 * The parsers take the text of one file, so the arithmetic is tested on
 * recorded readings; perfdb_sched_read reads the live files.
 */
#ifndef PERFDB_SCHED_H
#define PERFDB_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"

/* One reading of the process's and the machine's accounts. */
struct perfdb_sched_reading {
	uint64_t wait_ns;         /* run-queue wait, summed over the process's threads */
	uint64_t nivcsw;          /* involuntary context switches, summed */
	uint64_t migrations;      /* CPU migrations, summed (0 where the kernel has no count) */
	uint64_t steal_ticks;     /* the machine's steal time (/proc/stat), USER_HZ ticks */
	uint64_t total_ticks;     /* every field of /proc/stat's cpu line, summed */
	size_t threads;           /* threads read */
	uint32_t running_ours;    /* of those, running or runnable at the reading (State: R) */
	uint32_t running_all;     /* tasks running or runnable on the machine (/proc/loadavg) */
	bool has_migrations;
	bool has_running;         /* running_all could be read */
};

/* "exec_ns wait_ns timeslices" of a schedstat file; -PERFDB_EPARSE if not that. */
int perfdb_sched_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *wait_ns);
/* nonvoluntary_ctxt_switches of a status file; -PERFDB_EPARSE if absent. */
int perfdb_sched_parse_status(const char *text, uint64_t *nivcsw);
/* The state letter of a status file's State: line ('R', 'S', ...); -PERFDB_EPARSE if absent. */
int perfdb_sched_parse_state(const char *text, char *state);
/* The running count of /proc/loadavg ("0.00 0.01 0.05 3/412 9876" gives 3); -PERFDB_EPARSE if not that. */
int perfdb_sched_parse_loadavg(const char *text, uint32_t *running);
/* se.nr_migrations of a sched file; -PERFDB_ENOENT if absent. */
int perfdb_sched_parse_migrations(const char *text, uint64_t *migrations);
/* The aggregate "cpu " line of /proc/stat: its steal field and the sum of all; -PERFDB_EPARSE if absent. */
int perfdb_sched_parse_stat(const char *text, uint64_t *steal, uint64_t *total);

/* The live accounts of this process and machine (a thread that exits mid-read is skipped). */
int perfdb_sched_read(struct perfdb_sched_reading *r, struct perfdb_err *err);

/*
 * CPU time (ns) the process's threads other than the caller have run, and
 * how many there are (*nothers); -1 when /proc/self/task cannot be listed.
 * The bandwidth probe reads it around a reading: the run's own workers,
 * still spinning after an op (OpenMP's for ~5 ms, OpenBLAS's for ~130 ms
 * on this VM), share the probe's memory and cores.
 */
int perfdb_sched_others_run_ns(uint64_t *ns, size_t *nothers);

/* Thresholds of perfdb_sched_judge (docs/measuring.md says why these). */
#define PERFDB_SCHED_WAIT_FRACTION 0.05   /* of the block's wall time, summed over threads */
#define PERFDB_SCHED_WAIT_MIN_NS 50000    /* below this a wait is the kernel's own housekeeping */
#define PERFDB_SCHED_STEAL_FRACTION 0.02  /* of the machine's ticks over the block */

/* What happened during one block. */
struct perfdb_sched_block {
	double wall_s;
	uint64_t wait_ns, nivcsw, migrations;
	uint32_t others;          /* other tasks running or runnable, the more of the two readings */
	double steal_fraction;    /* steal / total ticks over the block; 0 when no tick passed */
	bool contaminated;
	const char *why;          /* "run-queue wait", "steal", or NULL */
};

/*
 * The block between readings a and b, wall_s long (the timed part of it,
 * where the caller does untimed work inside a block): contaminated when
 * the threads waited for a CPU more than PERFDB_SCHED_WAIT_FRACTION of
 * wall_s and more than PERFDB_SCHED_WAIT_MIN_NS, when the VM lost more
 * than PERFDB_SCHED_STEAL_FRACTION of the machine's time to steal, or,
 * with free_cpus >= 0, when at either reading more tasks of other
 * processes were running or runnable than free_cpus (the CPUs the caller
 * leaves to others: the machine's CPUs less the threads it times with).
 * free_cpus < 0 leaves other processes unjudged.  Switches and
 * migrations are reported, not judged: a switch costs the wait it
 * causes, which is counted.
 */
void perfdb_sched_judge(const struct perfdb_sched_reading *a, const struct perfdb_sched_reading *b,
			double wall_s, int free_cpus, struct perfdb_sched_block *out);

#endif
