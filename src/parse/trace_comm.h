/*
 * Collectives in PyTorch traces (src/parse/, not public API; the rules are
 * docs/chrome_trace.md "Collectives").
 *
 * Two spellings reach the reader.  Older Kineto: the process group's
 * annotation (`nccl:all_reduce`, a user_annotation) with the tensor it
 * moves in "Input Dims", the group size only in distributedInfo.  Newer
 * Kineto: `record_param_comms` with args "Collective name", "dtype",
 * "In msg nelems", "Out msg nelems" and "Group size".  Either op is a
 * collective here: its key carries what the args say (perfdb_tcomm_key),
 * and when its calls are joined to their kernels perfdb_tcomm_resolve gives
 * the row's name and cells and the comm-table observation.
 */
#ifndef PERFDB_PARSE_TRACE_COMM_H
#define PERFDB_PARSE_TRACE_COMM_H

#include "comm_agg.h"
#include "perfdb/strbuf.h"
#include "trace_stream.h"

/* The key field of an op event: "" for an op that is no collective,
 * "A" for a collective annotation, "R\x1e<coll>\x1e<dtype>\x1e<in>\x1e<out>\x1e<group>"
 * for a record_param_comms with a "Collective name". */
int perfdb_tcomm_key(const struct perfdb_tevent *ev, int annotation, struct perfdb_strbuf *out);

struct perfdb_tcomm {
	int coll;                 /* the op is a collective */
	/* record_param_comms: its row's op name and cells, from the args */
	char name[96];            /* "nccl:all_reduce"; "" keeps the op's own */
	char shapes[32];          /* "\"<In msg nelems>\"" */
	char dtypes[24];
	int has_obs;              /* obs is a comm-table call */
	struct perfdb_comm_obs obs;   /* dur_us left 0 */
	char backend[48];
	const char *skip;         /* a collective of a table without obs: why */
};

/* name/shapes/dtypes: the op's key fields; meta: its perfdb_tcomm_key field;
 * tm: the trace's distributedInfo.  0 or -PERFDB_ENOMEM. */
int perfdb_tcomm_resolve(struct perfdb_span name, struct perfdb_span shapes,
			 struct perfdb_span dtypes, struct perfdb_span meta,
			 const struct perfdb_tmeta *tm, struct perfdb_tcomm *out);

/* A collective's row name and cells (key fields f[0..3]) from its args, when
 * it has them (record_param_comms). */
void perfdb_tcomm_cells(const struct perfdb_tcomm *tc, struct perfdb_span f[5]);

/* One call of the collective on one device, us of device time: counted in
 * info, and handed to o->comm when it makes a comm-table row. */
struct perfdb_chrome_trace_opts;
struct perfdb_chrome_trace_info;
int perfdb_tcomm_call(const struct perfdb_tcomm *tc, double us, const char *device,
		      const struct perfdb_chrome_trace_opts *o, struct perfdb_chrome_trace_info *info,
		      struct perfdb_err *err);

#endif
