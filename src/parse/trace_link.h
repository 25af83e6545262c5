/*
 * Kineto's linking rules in bounded memory (the parse stage,
 * src/parse/trace_link.c; the rules are docs/chrome_trace.md "Linking").
 *
 * The caller reports every cpu_op, launch (cuda_runtime / cuda_driver),
 * ac2g flow endpoint and device activity (kernel, gpu_memcpy, gpu_memset)
 * in file order.  finish() then joins them with external sorts
 * (src/parse/recsort.h):
 *   1. host timeline, by (thread, ts): a stack of the open ops of the
 *      thread gives each launch its op: the open op whose External id the
 *      launch names, else the innermost open op; an `s` flow endpoint
 *      inside a launch gives the launch its correlation when it has none;
 *   2. device timeline, by (thread, ts): an `f` flow endpoint inside an
 *      activity gives the activity its correlation when it has none;
 *   3. activities and launches by correlation;
 *   4. activities by op call.
 * Memory: the sorters' buffers, the open ops of one thread, and the
 * activities of one op call.
 */
#ifndef PERFDB_TRACE_LINK_H
#define PERFDB_TRACE_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"

#define PERFDB_TLINK_NONE INT64_MIN   /* an absent id */

struct perfdb_tlink;

/* mem_limit: bytes for all sorters together (0 = 16 MiB). */
int perfdb_tlink_new(struct perfdb_tlink **out, size_t mem_limit, const char *spill_dir,
		     struct perfdb_err *err);
void perfdb_tlink_free(struct perfdb_tlink *l);

/* thread: the caller's id of the (pid, tid) pair; times in ns. */
int perfdb_tlink_op(struct perfdb_tlink *l, uint32_t thread, int64_t ts, int64_t end,
		    int64_t ext, uint32_t key, struct perfdb_err *err);
int perfdb_tlink_launch(struct perfdb_tlink *l, uint32_t thread, int64_t ts, int64_t end,
			int64_t corr, int64_t ext, struct perfdb_err *err);
int perfdb_tlink_flow(struct perfdb_tlink *l, int is_start, uint32_t thread, int64_t ts,
		      int64_t id, struct perfdb_err *err);
int perfdb_tlink_device(struct perfdb_tlink *l, uint32_t thread, int64_t ts, int64_t end,
			int64_t corr, double dur_us, uint32_t name, int32_t device,
			int is_kernel, struct perfdb_err *err);

struct perfdb_tlink_dev {
	double dur_us;
	uint32_t name;
	int32_t device;
	int is_kernel;
};

/* The activities one op call launched (linked), or one activity whose
 * chain reached no op (linked == 0; key is then meaningless). */
struct perfdb_tlink_call {
	int linked;
	uint32_t key;
	const struct perfdb_tlink_dev *dev;
	size_t ndev;
};

struct perfdb_tlink_stats {
	uint64_t ops, launches, flows, devices;
	uint64_t launches_linked;   /* launches that got an op */
	uint64_t devices_linked;    /* activities that got an op */
	int spilled;
};

/* Join and call fn once per call, calls in the order their ops were
 * reported (unlinked activities after them, in report order). */
int perfdb_tlink_finish(struct perfdb_tlink *l,
			int (*fn)(void *ctx, const struct perfdb_tlink_call *c,
				  struct perfdb_err *err),
			void *ctx, struct perfdb_tlink_stats *st, struct perfdb_err *err);

#endif
