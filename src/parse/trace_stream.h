/*
 * Streaming reader of Chrome-trace JSON (src/parse/, not public API).
 *
 * yajl's event parser walks the document once, in chunks; only the event
 * being read is held (its fields below), so memory does not grow with the
 * file.  The top level is an object with "traceEvents" (Kineto's form) or
 * a bare array of events.  Besides the events, "deviceProperties" (id,
 * name), "distributedInfo" (rank, world_size, backend) and
 * "baseTimeNanoseconds" are kept; every other value is skipped.
 */
#ifndef PERFDB_PARSE_TRACE_STREAM_H
#define PERFDB_PARSE_TRACE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"
#include "trace_source.h"

/* How a field was written: absent, a JSON number, a string, anything else. */
enum perfdb_tval { PERFDB_TV_ABSENT = 0, PERFDB_TV_NUM, PERFDB_TV_STR, PERFDB_TV_OTHER };

struct perfdb_tfield {
	enum perfdb_tval kind;
	struct perfdb_strbuf text;   /* the number's text or the string's bytes */
};

enum perfdb_tfield_id {
	PERFDB_TF_PH, PERFDB_TF_CAT, PERFDB_TF_NAME, PERFDB_TF_PID, PERFDB_TF_TID,
	PERFDB_TF_TS, PERFDB_TF_DUR, PERFDB_TF_ID,
	/* inside "args" */
	PERFDB_TF_EXT, PERFDB_TF_CORR, PERFDB_TF_DEVICE, PERFDB_TF_STREAM,
	/* a collective's metadata (record_param_comms, newer Kineto) */
	PERFDB_TF_COLL, PERFDB_TF_CDTYPE, PERFDB_TF_IN_NELEMS, PERFDB_TF_OUT_NELEMS,
	PERFDB_TF_GROUP,
	PERFDB_TF_N
};

struct perfdb_tevent {
	uint64_t index;                         /* 0-based position in the event array */
	struct perfdb_tfield f[PERFDB_TF_N];
	/*
	 * "Input Dims" re-written as compact JSON of integers ("[[8,64],[]]");
	 * dims_kind ABSENT, OTHER when it was not an array, or NUM when it is
	 * an array whose leaves are all integers (STR: an array holding
	 * something else, kept as "?" in dims).
	 */
	enum perfdb_tval dims_kind;
	struct perfdb_strbuf dims;
	/* "Input Strides" (newer Kineto), the same way */
	enum perfdb_tval strides_kind;
	struct perfdb_strbuf strides;
	/* "Input type": its entries, each ended by '\x1e' (a non-string entry
	 * is empty); types_n entries. */
	enum perfdb_tval types_kind;
	struct perfdb_strbuf types;
	size_t types_n;
};

#define PERFDB_TRACE_MAX_DEVICES 64

struct perfdb_tmeta {
	size_t ndevices;
	struct {
		long long id;
		char name[128];
	} devices[PERFDB_TRACE_MAX_DEVICES];
	int has_dist;
	long long rank, world_size;             /* -1 when absent */
	char backend[32];
	int has_base_time;
	long long base_time_ns;
};

/*
 * Read src to the end, calling on_event for every element of the event
 * array that is an object.  An element that is not an object, or a
 * negative return of on_event, stops the read with
 * "<file>: event #<index> (ending at byte <offset>): <what>" (offsets are
 * into the decompressed JSON); invalid JSON gives
 * "<file>: invalid JSON at byte <offset>: <yajl's reason>".
 * meta is filled from the top-level object (order in the file does not
 * matter: it is complete when this returns 0).
 */
int perfdb_trace_stream(struct perfdb_tsrc *src,
			int (*on_event)(void *ctx, const struct perfdb_tevent *ev,
					struct perfdb_err *err),
			void *ctx, struct perfdb_tmeta *meta, uint64_t *bytes,
			struct perfdb_err *err);

#endif
