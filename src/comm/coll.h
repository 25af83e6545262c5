/*
 * The collective interface (the nccl-tests `struct testColl` idea,
 * docs/style.md rule 8): each collective is one small coll_<name>.c that fills a
 * struct perfdb_coll — names, what message_bytes means, the buffer layout,
 * the bus-bandwidth factor, the MPI call and its check data.  The harness
 * (harness.c) owns everything else: warm-up, timing, the check, contention.
 */
#ifndef PERFDB_COMM_COLL_H
#define PERFDB_COMM_COLL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "perfdb/comm.h"

/* One call's arguments, prepared by the harness. */
struct perfdb_coll_args {
	MPI_Comm comm;
	MPI_Datatype type;           /* the dtype's MPI type */
	MPI_Op op;                   /* the dtype's sum (reductions only) */
	void *send;                  /* NULL when the collective runs in place */
	void *recv;
	int count;                   /* perfdb_comm_layout.count */
};

struct perfdb_coll {
	enum perfdb_comm_op op;
	const char *name;            /* --ops spelling: "all_reduce" */
	const char *prefix;          /* kernel type prefix (spec §1): "hcom_allReduce_" */
	const char *file;            /* table: prefix + ".csv" */
	const char *bytes_meaning;   /* what message_bytes is, for docs and reports */
	bool reduces;                /* needs the dtype's sum */
	/* nccl-tests busbw = algbw * factor (doc/PERFORMANCE.md) */
	double (*busbw_factor)(long n);
	/* counts for message_bytes = elems * element size on n ranks */
	void (*layout)(size_t elems, long n, struct perfdb_comm_layout *l);
	/* the MPI call; returns an MPI error code */
	int (*run)(const struct perfdb_coll_args *a);
	/*
	 * Check data (Decision 2): the value rank puts at send index i (at
	 * receive index i when in place), and the value expected afterwards at
	 * receive index i.  Small integers, so every dtype holds them and every
	 * partial sum exactly, in any summation order.
	 */
	int (*send_value)(long rank, long n, size_t i, size_t count);
	int (*expected)(long rank, long n, size_t i, size_t count);
};

extern const struct perfdb_coll perfdb_coll_all_reduce;
extern const struct perfdb_coll perfdb_coll_all_gather;
extern const struct perfdb_coll perfdb_coll_reduce_scatter;
extern const struct perfdb_coll perfdb_coll_all_to_all;

/* The collective of op (never NULL for a valid op). */
const struct perfdb_coll *perfdb_coll_get(enum perfdb_comm_op op);

#endif
