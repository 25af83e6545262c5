/*
 * The collective interface (the nccl-tests `struct testColl` idea,
 * docs/style.md rule 8): each collective is one small coll_<name>.c that fills a
 * struct perfdb_coll — names, what message_bytes means, the buffer layout,
 * the bus-bandwidth factor and its check data.  The table says nothing of
 * a transport: the same one drives MPI and NCCL (transport.h), each of
 * which maps `op` and the layout's count to its own call.  The harness
 * (harness.c) owns everything else: warm-up, timing, the check, contention.
 */
#ifndef PERFDB_COMM_COLL_H
#define PERFDB_COMM_COLL_H

#include <stdbool.h>
#include <stddef.h>

#include "perfdb/comm.h"

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
