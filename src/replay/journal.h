/*
 * The replay journal (docs/spec/replay.md Decision 7): one JSON object per
 * line, appended and fsynced after every finished row, so a killed run
 * resumes where it stopped (--resume) and subprocess mode collects its
 * child's rows.  Format of a line, as journal_append writes it:
 *
 *   {"op":"Add","table":"<path>","line":3,"signature":"<sig>",
 *    "status":"ok"|"failed","samples":N,"mean":us,"median":us,"min":us,
 *    "std":us,"cpu_ratio":x,"probe_gbs":x,"retries":N,"threads":N,
 *    "kernel":"...","reason":"..."}
 *
 * Reading parses each line with jansson; a torn last line (no newline), a
 * line that is not such an object, and an "ok" entry whose times are not
 * finite and >= 0 or whose retries or threads are not integers in
 * [0, INT_MAX] are not measurements.  Entries are found by (table,
 * signature) through a hash index, so resuming n rows costs O(n).
 */
#ifndef PERFDB_REPLAY_JOURNAL_H
#define PERFDB_REPLAY_JOURNAL_H

#include <stddef.h>
#include <stdio.h>

#include "replay/engine.h"

struct jentry {
	char *key;                         /* table path '\t' signature */
	int ok;
	int contended;                     /* status "contended": not a duration, measured again on resume */
	size_t samples;
	size_t discarded, outliers, blocks, blocks_bad;   /* absent before 2026-12-06: 0 */
	double worst_wait;
	double mean, median, min, std, cpu, probe;
	int retries;
	int threads;                       /* --threads of the run that measured it (0: not recorded) */
	char kernel[64];
	char *reason;
};

struct journal {
	struct jentry *v;
	size_t n, cap;
	/* the index: per distinct key, its last entry and its last ok entry */
	struct jslot {
		const char *key;           /* the entry's own key; NULL: free */
		size_t last, last_ok;      /* (size_t)-1: none */
	} *slots;
	size_t nslots;                     /* power of two, or 0 */
	size_t nkeys;
};

void journal_release(struct journal *j);

/* Append the entries of the journal at path (missing: none).  0 or -PERFDB_ENOMEM. */
int journal_load(const char *path, struct journal *j);

/* The same from an open stream, read to its end (or its torn last line). */
int journal_read(FILE *f, struct journal *j);

/* The last entry for key (the last ok one when ok_only), or NULL. */
const struct jentry *journal_find(const struct journal *j, const char *key, int ok_only);

/* Append one finished row to the open journal fd and fsync it.  0 or -PERFDB_E*. */
int journal_append(int fd, const char *op, const char *table, const char *sig,
		   const struct perfdb_engine_row *row);

#endif
