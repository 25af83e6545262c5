/*
 * An op sequence: the database rows a traced step called, in the order it
 * called them (docs/replay.md "In the trace's sequence").  Plain data that
 * the predict stage builds from a trace and the torch replay runs, so that
 * neither stage sees the other (docs/design.md "Layers").
 */
#ifndef PERFDB_OPSEQ_H
#define PERFDB_OPSEQ_H

#include <stddef.h>

/* One call of the step: a row of a table of the database. */
struct perfdb_opseq_step {
	char *table;      /* the table's stem (aten.linear) */
	size_t line;      /* its CSV line (header = 1) */
};

struct perfdb_opseq {
	struct perfdb_opseq_step *v;
	size_t n, cap;
	size_t unplaced;  /* calls that compute and have no row of their own nor rows under them */
};

/* Append (table, line); 0 or -PERFDB_ENOMEM (the sequence is unchanged). */
int perfdb_opseq_add(struct perfdb_opseq *s, const char *table, size_t len, size_t line);
void perfdb_opseq_release(struct perfdb_opseq *s);

#endif
