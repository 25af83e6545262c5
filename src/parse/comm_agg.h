/*
 * Collectives a profile recorded, gathered into perfdb's comm tables
 * (src/parse/, not public API; the rules are docs/parse.md "Comm tables
 * from profiles").
 *
 * A reader reports each collective call it can size (op, message bytes as
 * docs/comm.md defines them per op, group size, dtype, the transport that
 * ran it) with its device time; calls of one (op, bytes, group, dtype,
 * backend) become one row of hcom_<op>_.csv with the duration statistics
 * over them, as `perfdb comm` writes a benchmarked size.
 */
#ifndef PERFDB_PARSE_COMM_AGG_H
#define PERFDB_PARSE_COMM_AGG_H

#include <stddef.h>

#include "perfdb/dtype.h"
#include "perfdb/err.h"
#include "perfdb/table.h"
#include "ops/coll.h"

struct perfdb_comm_obs {
	enum perfdb_comm_op op;
	long long message_bytes;
	long num_devices;
	const char *dtype;     /* the dtype column (perfdb_comm_obs_dtype) */
	const char *backend;   /* the Backend column: "profiled:nccl" */
	double dur_us;
};

/* The dtype column of a collective in t: perfdb comm's labels (DT_BF16,
 * DT_FP16, DT_FLOAT, DT_INT8), else the database spelling. */
const char *perfdb_comm_obs_dtype(enum perfdb_dtype t);

/* A collective's name ("all_reduce", "_allgather_base", "reduce_scatter_tensor_coalesced",
 * "hcom_allReduce_") to the op of its table, or -1 (broadcast, send, barrier, ...). */
int perfdb_comm_obs_op(const char *name, size_t len);

struct perfdb_comm_agg;

int perfdb_comm_agg_new(struct perfdb_comm_agg **out, struct perfdb_err *err);
void perfdb_comm_agg_free(struct perfdb_comm_agg *a);
int perfdb_comm_agg_add(struct perfdb_comm_agg *a, const struct perfdb_comm_obs *o,
			struct perfdb_err *err);
/* Every call of from, after into's (input order is kept). */
int perfdb_comm_agg_merge(struct perfdb_comm_agg *into, const struct perfdb_comm_agg *from,
			  struct perfdb_err *err);
size_t perfdb_comm_agg_ngroups(const struct perfdb_comm_agg *a);
/* Group i (first-appearance order): its key in *o and its samples (the
 * caller may reorder them); returns their number. */
size_t perfdb_comm_agg_group(const struct perfdb_comm_agg *a, size_t i, struct perfdb_comm_obs *o,
			     double **samples);

/* One comm table being merged (comm_tables.c). */
struct perfdb_comm_out {
	struct perfdb_table t;
	int used;      /* a group of this op exists */
	int exists;    /* the file was there */
	int raw;       /* it holds kernel rows (no message_bytes): left as it is */
	size_t groups, added, updated;
};

/*
 * Phase 1, in memory: load or start <outdir>/hcom_<op>_.csv for each op
 * that has calls and merge the rows (a row whose message_bytes,
 * num_devices, dtype and Backend match, with no topology_tier, gets the new
 * statistics; others are appended).  out[] is initialised here and owned by
 * the caller (perfdb_comm_tables_release).
 */
int perfdb_comm_tables_merge(const struct perfdb_comm_agg *a, const char *outdir,
			     struct perfdb_comm_out out[PERFDB_COMM_NOPS], struct perfdb_err *err);
void perfdb_comm_tables_release(struct perfdb_comm_out out[PERFDB_COMM_NOPS]);

#endif
