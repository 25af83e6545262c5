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


/* ---- collectives (docs/spec/comm.md §1) ------------------------------------ */

enum perfdb_comm_op {
	PERFDB_COMM_ALL_REDUCE,
	PERFDB_COMM_ALL_GATHER,
	PERFDB_COMM_REDUCE_SCATTER,
	PERFDB_COMM_ALL_TO_ALL,
	PERFDB_COMM_NOPS
};

/* "all_reduce" … (the --ops spelling); NULL-terminated list in op order. */
extern const char *const perfdb_comm_op_names[PERFDB_COMM_NOPS + 1];
const char *perfdb_comm_op_name(enum perfdb_comm_op op);
/* Kernel type prefix and table name: "hcom_allReduce_", "hcom_allReduce_.csv". */
const char *perfdb_comm_op_prefix(enum perfdb_comm_op op);
const char *perfdb_comm_op_file(enum perfdb_comm_op op);
/* What message_bytes means for op (one phrase, for docs and reports). */
const char *perfdb_comm_op_bytes_meaning(enum perfdb_comm_op op);
/* Op by --ops name, or -1. */
int perfdb_comm_op_from_name(const char *name);
/* nccl-tests bus-bandwidth factor for a group of n ranks (doc/PERFORMANCE.md). */
double perfdb_comm_busbw_factor(enum perfdb_comm_op op, long n);

/* Element counts of one call for message_bytes = elems * element size. */
struct perfdb_comm_layout {
	size_t count;        /* the MPI count argument (per rank, per peer for all_to_all) */
	size_t send_elems;   /* elements of the send buffer (0: in place) */
	size_t recv_elems;   /* elements of the receive buffer */
};
void perfdb_comm_layout_of(enum perfdb_comm_op op, size_t elems, long n,
			   struct perfdb_comm_layout *l);
/* Bytes nccl-tests counts for algbw: the larger buffer of one rank. */
double perfdb_comm_bus_bytes(enum perfdb_comm_op op, size_t elems, long n, size_t elem_size);

/* ---- dtypes (docs/spec/comm.md §1) ----------------------------------------- */

enum perfdb_comm_dtype {
	PERFDB_COMM_BF16,
	PERFDB_COMM_FP16,
	PERFDB_COMM_FP32,
	PERFDB_COMM_INT8,
	PERFDB_COMM_NDTYPES
};

struct perfdb_comm_dtype_info {
	const char *name;    /* "torch.bfloat16" (the --dtype spelling) */
	const char *label;   /* "DT_BF16" (the dtype column) */
	size_t size;         /* bytes per element */
};

extern const char *const perfdb_comm_dtype_names[PERFDB_COMM_NDTYPES + 1];
const struct perfdb_comm_dtype_info *perfdb_comm_dtype(enum perfdb_comm_dtype d);
int perfdb_comm_dtype_from_name(const char *name);   /* -1 if unknown */

/* The built-in message sizes (spec §1): 20 powers of two, 1 KiB … 512 MiB. */
#define PERFDB_COMM_DEFAULT_NBYTES 20
extern const long long perfdb_comm_default_bytes[PERFDB_COMM_DEFAULT_NBYTES];

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
