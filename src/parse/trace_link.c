/*
 * Linking device activities to the ops that launched them
 * (src/parse/trace_link.h; rules in docs/chrome_trace.md "Linking").
 */
#include "parse/trace_link.h"

#include <stdlib.h>
#include <string.h>

#include "parse/recsort.h"

#define DEFAULT_MEM ((size_t)16 << 20)

enum { TL_OP = 0, TL_LAUNCH = 1, TL_FLOW = 2 };   /* order at equal ts */
enum { DT_DEV = 0, DT_FLOW = 1 };

/* host timeline */
struct tl {
	uint32_t thread;
	uint32_t kind;
	int64_t ts, end;
	int64_t a;      /* op: External id; launch: correlation; flow: id */
	int64_t b;      /* op: call number; launch: External id */
	uint64_t seq;   /* report order (ties) */
	uint32_t key;
	uint32_t pad;
};

/* a launch with its op */
struct lr {
	int64_t corr;
	uint64_t call;
	uint32_t key;
	uint32_t linked;
};

/* device timeline, and activities by correlation */
struct dr {
	uint32_t thread;
	uint32_t kind;
	int64_t ts, end;
	int64_t corr;
	uint64_t seq;
	double dur;
	uint32_t name;
	int32_t device;
	uint32_t is_kernel;
	uint32_t pad;
};

/* an activity with its op call */
struct cr {
	uint64_t call;   /* op call, or bit 63 | activity number when unlinked */
	uint64_t seq;
	double dur;
	uint32_t key, name;
	int32_t device;
	uint32_t is_kernel;
};

struct perfdb_tlink {
	struct perfdb_recsort *host, *devtl, *bycorr_l, *bycorr_d, *bycall;
	uint64_t nops, nseq;
	struct perfdb_tlink_stats st;
	int any_dev_without_corr;
};

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

static int cmp_tl(const void *pa, const void *pb)
{
	const struct tl *a = pa, *b = pb;
	CMP(a->thread, b->thread);
	CMP(a->ts, b->ts);
	CMP(a->kind, b->kind);
	CMP(b->end, a->end);   /* the outer of two ops starting together first */
	CMP(a->seq, b->seq);
	return 0;
}

static int cmp_lr(const void *pa, const void *pb)
{
	const struct lr *a = pa, *b = pb;
	CMP(a->corr, b->corr);
	CMP(a->call, b->call);
	CMP(a->key, b->key);
	CMP(a->linked, b->linked);
	return 0;
}

static int cmp_dtl(const void *pa, const void *pb)
{
	const struct dr *a = pa, *b = pb;
	CMP(a->thread, b->thread);
	CMP(a->ts, b->ts);
	CMP(a->kind, b->kind);
	CMP(a->seq, b->seq);
	return 0;
}

static int cmp_dcorr(const void *pa, const void *pb)
{
	const struct dr *a = pa, *b = pb;
	CMP(a->corr, b->corr);
	CMP(a->seq, b->seq);
	return 0;
}

static int cmp_cr(const void *pa, const void *pb)
{
	const struct cr *a = pa, *b = pb;
	CMP(a->call, b->call);
	CMP(a->seq, b->seq);
	return 0;
}

int perfdb_tlink_new(struct perfdb_tlink **out, size_t mem_limit, const char *spill_dir,
		     struct perfdb_err *err)
{
	struct perfdb_tlink *l = calloc(1, sizeof(*l));
	if (!l)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	size_t m = (mem_limit ? mem_limit : DEFAULT_MEM) / 5;
	int rc = perfdb_recsort_new(&l->host, sizeof(struct tl), cmp_tl, m, spill_dir, err);
	if (rc == 0)
		rc = perfdb_recsort_new(&l->devtl, sizeof(struct dr), cmp_dtl, m, spill_dir, err);
	if (rc == 0)
		rc = perfdb_recsort_new(&l->bycorr_l, sizeof(struct lr), cmp_lr, m, spill_dir, err);
	if (rc == 0)
		rc = perfdb_recsort_new(&l->bycorr_d, sizeof(struct dr), cmp_dcorr, m, spill_dir, err);
	if (rc == 0)
		rc = perfdb_recsort_new(&l->bycall, sizeof(struct cr), cmp_cr, m, spill_dir, err);
	if (rc < 0) {
		perfdb_tlink_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

void perfdb_tlink_free(struct perfdb_tlink *l)
{
	if (!l)
		return;
	perfdb_recsort_free(l->host);
	perfdb_recsort_free(l->devtl);
	perfdb_recsort_free(l->bycorr_l);
	perfdb_recsort_free(l->bycorr_d);
	perfdb_recsort_free(l->bycall);
	free(l);
}

int perfdb_tlink_op(struct perfdb_tlink *l, uint32_t thread, int64_t ts, int64_t end,
		    int64_t ext, uint32_t key, struct perfdb_err *err)
{
	struct tl r = { thread, TL_OP, ts, end, ext, (int64_t)l->nops++, l->nseq++, key, 0 };
	l->st.ops++;
	return perfdb_recsort_add(l->host, &r, err);
}

int perfdb_tlink_launch(struct perfdb_tlink *l, uint32_t thread, int64_t ts, int64_t end,
			int64_t corr, int64_t ext, struct perfdb_err *err)
{
	struct tl r = { thread, TL_LAUNCH, ts, end, corr, ext, l->nseq++, 0, 0 };
	l->st.launches++;
	return perfdb_recsort_add(l->host, &r, err);
}

int perfdb_tlink_flow(struct perfdb_tlink *l, int is_start, uint32_t thread, int64_t ts,
		      int64_t id, struct perfdb_err *err)
{
	l->st.flows++;
	if (is_start) {
		struct tl r = { thread, TL_FLOW, ts, ts, id, 0, l->nseq++, 0, 0 };
		return perfdb_recsort_add(l->host, &r, err);
	}
	struct dr r = { thread, DT_FLOW, ts, ts, id, l->nseq++, 0, 0, 0, 0, 0 };
	return perfdb_recsort_add(l->devtl, &r, err);
}

int perfdb_tlink_device(struct perfdb_tlink *l, uint32_t thread, int64_t ts, int64_t end,
			int64_t corr, double dur_us, uint32_t name, int32_t device,
			int is_kernel, struct perfdb_err *err)
{
	struct dr r = { thread, DT_DEV, ts, end, corr, l->st.devices++, dur_us, name, device,
			(uint32_t)(is_kernel != 0), 0 };
	/* with a correlation of its own an activity needs no flow */
	if (corr != PERFDB_TLINK_NONE)
		return perfdb_recsort_add(l->bycorr_d, &r, err);
	l->any_dev_without_corr = 1;
	return perfdb_recsort_add(l->devtl, &r, err);
}

/* ---- 1. host timeline ---------------------------------------------------- */

struct open_op {
	int64_t end, ext;
	uint64_t call;
	uint32_t key;
};

struct sweep {
	struct open_op *v;
	size_t n, cap;
};

static int emit_launch(struct perfdb_tlink *l, const struct lr *p, struct perfdb_err *err)
{
	if (p->linked)
		l->st.launches_linked++;
	if (p->corr == PERFDB_TLINK_NONE)
		return 0;   /* no correlation and no flow: nothing can reach it */
	return perfdb_recsort_add(l->bycorr_l, p, err);
}

static int host_sweep(struct perfdb_tlink *l, struct perfdb_err *err)
{
	struct sweep s = { 0 };
	struct tl r;
	struct lr pend;
	int64_t pend_end = 0;
	uint32_t thread = 0;
	int have_pend = 0, first = 1, rc;
	while ((rc = perfdb_recsort_next(l->host, &r, err)) > 0) {
		if (first || r.thread != thread) {
			if (have_pend && (rc = emit_launch(l, &pend, err)) < 0)
				break;
			have_pend = 0;
			s.n = 0;
			thread = r.thread;
			first = 0;
		}
		if (r.kind == TL_FLOW) {
			/* an `s` endpoint lies inside the launch it starts from */
			if (have_pend && pend.corr == PERFDB_TLINK_NONE && r.ts <= pend_end)
				pend.corr = r.a;
			continue;
		}
		while (s.n && s.v[s.n - 1].end < r.ts)
			s.n--;
		if (r.kind == TL_OP) {
			if (s.n == s.cap) {
				size_t cap = s.cap ? s.cap * 2 : 64;
				struct open_op *nv = realloc(s.v, cap * sizeof(*nv));
				if (!nv) {
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
					break;
				}
				s.v = nv;
				s.cap = cap;
			}
			s.v[s.n++] = (struct open_op){ r.end, r.a, (uint64_t)r.b, r.key };
			continue;
		}
		if (have_pend && (rc = emit_launch(l, &pend, err)) < 0)
			break;
		have_pend = 1;
		pend_end = r.end;
		pend = (struct lr){ r.a, 0, 0, 0 };
		const struct open_op *hit = NULL;
		for (size_t i = s.n; i-- > 0;) {
			if (s.v[i].end < r.ts)
				continue;   /* ended under a longer-running op above it */
			if (!hit)
				hit = &s.v[i];   /* the innermost open op */
			if (r.b != PERFDB_TLINK_NONE && s.v[i].ext == r.b) {
				hit = &s.v[i];
				break;
			}
		}
		if (hit)
			pend = (struct lr){ r.a, hit->call, hit->key, 1 };
	}
	if (rc == 0 && have_pend)
		rc = emit_launch(l, &pend, err);
	free(s.v);
	return rc;
}

/* ---- 2. device timeline ---------------------------------------------------- */

static int dev_sweep(struct perfdb_tlink *l, struct perfdb_err *err)
{
	struct dr r, pend;
	int have = 0, rc;
	while ((rc = perfdb_recsort_next(l->devtl, &r, err)) > 0) {
		if (have && r.thread != pend.thread) {
			if ((rc = perfdb_recsort_add(l->bycorr_d, &pend, err)) < 0)
				return rc;
			have = 0;
		}
		if (r.kind == DT_FLOW) {
			if (have && pend.corr == PERFDB_TLINK_NONE && r.ts <= pend.end)
				pend.corr = r.corr;
			continue;
		}
		if (have && (rc = perfdb_recsort_add(l->bycorr_d, &pend, err)) < 0)
			return rc;
		pend = r;
		have = 1;
	}
	if (rc == 0 && have)
		rc = perfdb_recsort_add(l->bycorr_d, &pend, err);
	return rc;
}

/* ---- 3. by correlation ---------------------------------------------------- */

static int corr_join(struct perfdb_tlink *l, struct perfdb_err *err)
{
	struct dr d;
	struct lr la;
	int have_l = 0, rc;
	PERFDB_TRY(rc = perfdb_recsort_next(l->bycorr_l, &la, err));
	have_l = rc > 0;
	while ((rc = perfdb_recsort_next(l->bycorr_d, &d, err)) > 0) {
		while (have_l && d.corr != PERFDB_TLINK_NONE && la.corr < d.corr) {
			PERFDB_TRY(rc = perfdb_recsort_next(l->bycorr_l, &la, err));
			have_l = rc > 0;
		}
		struct cr c = { (1ull << 63) | d.seq, d.seq, d.dur, 0, d.name, d.device, d.is_kernel };
		if (have_l && d.corr != PERFDB_TLINK_NONE && la.corr == d.corr && la.linked) {
			c.call = la.call;
			c.key = la.key;
			l->st.devices_linked++;
		}
		PERFDB_TRY(perfdb_recsort_add(l->bycall, &c, err));
	}
	return rc;
}

/* ---- 4. by op call ---------------------------------------------------------- */

int perfdb_tlink_finish(struct perfdb_tlink *l,
			int (*fn)(void *ctx, const struct perfdb_tlink_call *c,
				  struct perfdb_err *err),
			void *ctx, struct perfdb_tlink_stats *st, struct perfdb_err *err)
{
	int rc = host_sweep(l, err);
	if (rc == 0)
		rc = dev_sweep(l, err);
	if (rc == 0)
		rc = corr_join(l, err);
	struct perfdb_tlink_dev *v = NULL;
	size_t n = 0, cap = 0;
	struct cr c;
	uint64_t call = 0;
	uint32_t key = 0;
	while (rc == 0 && (rc = perfdb_recsort_next(l->bycall, &c, err)) >= 0) {
		int more = rc > 0;
		rc = 0;
		if (n && (!more || c.call != call)) {
			struct perfdb_tlink_call out = { !(call >> 63), key, v, n };
			if ((rc = fn(ctx, &out, err)) < 0)
				break;
			n = 0;
		}
		if (!more)
			break;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct perfdb_tlink_dev *nv = realloc(v, ncap * sizeof(*nv));
			if (!nv) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			v = nv;
			cap = ncap;
		}
		v[n++] = (struct perfdb_tlink_dev){ c.dur, c.name, c.device, (int)c.is_kernel };
		call = c.call;
		key = c.key;
	}
	free(v);
	l->st.spilled = perfdb_recsort_spilled(l->host) || perfdb_recsort_spilled(l->devtl) ||
			perfdb_recsort_spilled(l->bycorr_l) || perfdb_recsort_spilled(l->bycorr_d) ||
			perfdb_recsort_spilled(l->bycall);
	if (st)
		*st = l->st;
	return rc < 0 ? rc : 0;
}
