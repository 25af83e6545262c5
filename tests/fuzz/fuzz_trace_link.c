/*
 * Fuzz target: the trace linker (src/parse/trace_link.c,
 * src/parse/trace_link.h) and the external sort under it.
 *
 * The input is a program: 16-byte steps, each reporting one op, launch,
 * flow endpoint or device activity with small ids and times (so that ids
 * collide and intervals nest or overlap).  It is linked twice, once with a
 * memory limit that makes every sort spill to disk after a few records and
 * once in memory.  Invariants: both runs give the same calls in the same
 * order; every activity comes back exactly once; the linked count matches
 * the stats; a linked call names a key that was reported.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/trace_link.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXOUT 4096

struct out {
	uint32_t key[MAXOUT];
	int linked[MAXOUT];
	size_t ndev[MAXOUT];
	double dur[MAXOUT];
	size_t n, devs, linked_devs;
	uint32_t nkeys;
};

static int on_call(void *ctx, const struct perfdb_tlink_call *c, struct perfdb_err *err)
{
	(void)err;
	struct out *o = ctx;
	if (c->ndev == 0 || (!c->linked && c->ndev != 1))
		abort();
	if (c->linked && c->key >= o->nkeys)
		abort();
	double d = 0;
	for (size_t i = 0; i < c->ndev; i++)
		d += c->dev[i].dur_us;
	if (o->n < MAXOUT) {
		o->key[o->n] = c->linked ? c->key : 0;
		o->linked[o->n] = c->linked;
		o->ndev[o->n] = c->ndev;
		o->dur[o->n] = d;
	}
	o->n++;
	o->devs += c->ndev;
	o->linked_devs += c->linked ? c->ndev : 0;
	return 0;
}

static int run(const uint8_t *data, size_t size, size_t mem, struct out *o,
	       struct perfdb_tlink_stats *st)
{
	struct perfdb_tlink *l;
	struct perfdb_err err;
	if (perfdb_tlink_new(&l, mem, NULL, &err) < 0)
		return -1;
	int rc = 0;
	uint32_t nkeys = 0;
	for (size_t i = 0; i + 16 <= size && rc == 0; i += 16) {
		const uint8_t *p = data + i;
		uint32_t thread = p[1] & 3;
		int64_t ts = (int64_t)(p[2] | (p[3] << 8));
		int64_t end = ts + (p[4] | ((p[5] & 3) << 8));
		int64_t a = p[6] == 255 ? PERFDB_TLINK_NONE : (int64_t)(p[6] & 31);
		int64_t b = p[7] == 255 ? PERFDB_TLINK_NONE : (int64_t)(p[7] & 31);
		switch (p[0] & 3) {
		case 0:
			rc = perfdb_tlink_op(l, thread, ts, end, a, nkeys++, &err);
			break;
		case 1:
			rc = perfdb_tlink_launch(l, thread, ts, end, a, b, &err);
			break;
		case 2:
			/* `s` ends on the host threads, `f` ends on the device's */
			rc = perfdb_tlink_flow(l, p[8] & 1, (p[8] & 1) ? thread : 8 + thread, ts,
					       a == PERFDB_TLINK_NONE ? 0 : a, &err);
			break;
		default:
			rc = perfdb_tlink_device(l, 8 + thread, ts, end, a, (double)p[9] / 4.0,
						 p[10] & 7, p[11] & 1, p[12] & 1, &err);
			break;
		}
	}
	o->nkeys = nkeys;
	if (rc == 0)
		rc = perfdb_tlink_finish(l, on_call, o, st, &err);
	perfdb_tlink_free(l);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct out a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	struct perfdb_tlink_stats sa, sb;
	/* 5 sorters x 16 records: spills after a handful of steps */
	int ra = run(data, size, 5 * 16, &a, &sa);
	int rb = run(data, size, 0, &b, &sb);
	if (ra != rb)
		abort();
	if (ra < 0)
		return 0;
	if (a.n != b.n || a.devs != b.devs || a.devs != sa.devices ||
	    a.linked_devs != sa.devices_linked || sa.devices_linked != sb.devices_linked)
		abort();
	size_t n = a.n < MAXOUT ? a.n : MAXOUT;
	for (size_t i = 0; i < n; i++)
		if (a.key[i] != b.key[i] || a.linked[i] != b.linked[i] || a.ndev[i] != b.ndev[i] ||
		    a.dur[i] != b.dur[i])
			abort();
	return 0;
}
