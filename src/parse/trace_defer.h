/*
 * Rows of a CPU trace's dtype conversions held back until their copy_ child
 * says the target dtype (src/parse/, not public API; docs/chrome_trace.md
 * "Conversions").
 *
 * `aten::to(self, dtype, ...)` and `aten::_to_copy` take the target dtype as
 * a scalar, which the profiler does not record; the `aten::copy_(dst, src)`
 * they run inside records dst as a tensor, with that dtype.  Their rows
 * wait here, in arrival order, until an event of their thread starts after
 * they ended (or the trace ends); a copy_ inside gives each the dtype, also
 * one of the last PERFDB_TDEFER_SEEN copy_ rows seen before the conversion.
 */
#ifndef PERFDB_PARSE_TRACE_DEFER_H
#define PERFDB_PARSE_TRACE_DEFER_H

#include <stdint.h>

#include "parse/parse.h"

struct perfdb_held {
	uint32_t thread;
	int64_t ts, end;
	struct perfdb_strbuf s;   /* the row's strings, each ended by '\0' */
	size_t off[7], len[7];    /* type, name, trace name, shapes, dtypes, formats, duration */
	char out_dtype[32];       /* from the copy_ inside; "" while unknown */
};

/* A copy_ seen lately, for a conversion the file lists after its children
 * (events need not come in time order). */
struct perfdb_seen_copy {
	uint32_t thread;
	int64_t ts, end;
	char dtype[32];
};

#define PERFDB_TDEFER_SEEN 32

struct perfdb_tdefer {
	struct perfdb_held *v;
	size_t n, cap;
	struct perfdb_seen_copy seen[PERFDB_TDEFER_SEEN];   /* a ring of the last copy_ rows */
	size_t nseen;
};

void perfdb_tdefer_init(struct perfdb_tdefer *d);
void perfdb_tdefer_release(struct perfdb_tdefer *d);

/* The ops whose rows are held: aten::to, aten::_to_copy. */
int perfdb_tdefer_wants(const char *name, size_t len);

/* Hold row (its strings copied); a copy_ seen lately inside it gives it its dtype. */
int perfdb_tdefer_hold(struct perfdb_tdefer *d, const struct perfdb_kernel_row *row);

/* A copy_ row: every held row of its thread that contains it and has no
 * dtype yet takes the dtype of copy_'s first input. */
void perfdb_tdefer_copy(struct perfdb_tdefer *d, const struct perfdb_kernel_row *copy);

/* Hand emit every held row of thread that ended before ts (all rows of
 * every thread when all), in arrival order, and drop them. */
int perfdb_tdefer_flush(struct perfdb_tdefer *d, uint32_t thread, int64_t ts, int all,
			int (*emit)(void *ctx, const struct perfdb_held *h, struct perfdb_err *err),
			void *ctx, struct perfdb_err *err);

/* Field i of a held row (perfdb_held.off order). */
struct perfdb_span perfdb_held_field(const struct perfdb_held *h, int i);

/* Fill row (whose other fields the caller set) from held row h: its input
 * cells, times and, when its copy_ said the dtype, its output cells (the
 * input's shape in that dtype, in outs/outt/outf). */
int perfdb_held_row(const struct perfdb_held *h, struct perfdb_kernel_row *row, struct perfdb_strbuf *outs,
		    struct perfdb_strbuf *outt, struct perfdb_strbuf *outf);

#endif
