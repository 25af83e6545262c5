/*
 * Scale-out of the replay engine under mpirun (engine.h "Scale-out";
 * docs/replay.md): rows of ordinary ops are sharded round-robin over the
 * ranks (one device each), rows of collective ops are replayed by every
 * rank together and every step of theirs agreed on; each rank journals to
 * `<journal>.rank<R>`, resume reads them all; at the end every rank's rows
 * are gathered on rank 0, which rebuilds the run's result.
 */
#include <errno.h>
#include <glob.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay/engine_internal.h"

/*
 * Collective rows: every rank must take the same path, so a step that failed
 * on one rank fails on all (the reason of the failing rank is this rank's
 * own when it failed, else a pointer to the rank that did).
 */
int scaleout_agree(const struct perfdb_engine_opts *o, int rc, struct perfdb_err *err)
{
	int bad = rc < 0 ? o->rank + 1 : 0, first = 0;
	MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MAX, *(MPI_Comm *)o->comm);
	if (rc < 0)
		return rc;
	if (first)
		return perfdb_err_set(err, PERFDB_EINVAL, "failed on rank %d", first - 1);
	return 0;
}

int scaleout_agree_stop(const struct perfdb_engine_opts *o, int stop, int sig_stop, int *interrupted)
{
	/* every rank takes every row, or all stop together */
	int v[2] = { stop || sig_stop, sig_stop }, g[2];
	MPI_Allreduce(v, g, 2, MPI_INT, MPI_MAX, *(MPI_Comm *)o->comm);
	*interrupted |= g[1];
	return g[0];
}

int scaleout_table_collective(const struct perfdb_engine_opts *o, const char *op)
{
	const struct perfdb_backend_i *be = o->backend;
	return be->supports_op(op) && be->find_op(op) && perfdb_opdef_get(op)->collective;
}

int scaleout_row_mine(const struct perfdb_engine_opts *o, size_t ord)
{
	return !o->comm || ord % (size_t)o->nranks == (size_t)o->rank;
}

size_t scaleout_rank_share(const struct perfdb_engine_opts *o, const struct perfdb_table *tabs,
			   const char *const *names, size_t ntab)
{
	size_t ord = 0, n = 0;
	for (size_t ti = 0; ti < ntab; ti++) {
		int coll = scaleout_table_collective(o, names[ti]);
		for (size_t r = 0; r < tabs[ti].nrows; r++, ord++)
			n += coll || scaleout_row_mine(o, ord);
	}
	return n;
}

/*
 * Call fn(ctx, path, rank) for every `<journal>.rank<R>` file (rank -1 when
 * the suffix is not a number); stops at the first fn < 0 and returns it.
 */
static int each_rank_journal(const char *journal, int (*fn)(void *ctx, const char *path, long rank), void *ctx)
{
	char pat[4200];
	snprintf(pat, sizeof(pat), "%s.rank*", journal);
	glob_t g;
	int rc = 0;
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && rc == 0; i++) {
			const char *num = g.gl_pathv[i] + strlen(journal) + 5;
			char *end;
			long r = strtol(num, &end, 10);
			rc = fn(ctx, g.gl_pathv[i], *end == '\0' && end != num && r >= 0 ? r : -1);
		}
		globfree(&g);
	}
	return rc;
}

static int load_one(void *ctx, const char *path, long rank)
{
	(void)rank;
	return journal_load(path, ctx);
}

int scaleout_journal_load_all(const char *journal, struct journal *j)
{
	PERFDB_TRY(journal_load(journal, j));
	return each_rank_journal(journal, load_one, j);
}

/* Removes a rank journal unless it is one of the first `keep` ranks; every file is tried. */
struct remove_ctx {
	long keep;
	int rc;
};

static int remove_one(void *ctx, const char *path, long rank)
{
	struct remove_ctx *x = ctx;
	if ((rank < 0 || rank >= x->keep) && unlink(path) < 0 && errno != ENOENT)
		x->rc = -PERFDB_EIO;
	return 0;
}

/*
 * One process removes every rank file; under MPI rank 0 removes the plain
 * journal and rank files beyond this run's ranks (each rank truncates its
 * own file when it opens it).
 */
int scaleout_journal_reset(const struct perfdb_engine_opts *o)
{
	if (o->comm && o->rank != 0)
		return 0;
	if (o->comm && unlink(o->journal) < 0 && errno != ENOENT)
		return -PERFDB_EIO;
	struct remove_ctx x = { o->comm ? o->nranks : 0, 0 };
	each_rank_journal(o->journal, remove_one, &x);
	return x.rc;
}

void perfdb_engine_journal_remove(const char *journal)
{
	unlink(journal);
	struct remove_ctx x = { 0, 0 };
	each_rank_journal(journal, remove_one, &x);
}

void scaleout_pack_row(struct perfdb_strbuf *b, const struct perfdb_engine_row *w)
{
	perfdb_strbuf_addf(b, "%s\x1f%zu\x1f%d\x1f%d\x1f%d\x1f%zu\x1f%.17g\x1f%.17g\x1f%.17g\x1f%.17g\x1f%.17g\x1f"
			   "%.17g\x1f%d\x1f%d\x1f%zu\x1f%zu\x1f%zu\x1f%zu\x1f%.17g\x1f",
			   w->op, w->line, (int)w->status, w->resumed, w->rank, w->samples, w->mean, w->median, w->min,
			   w->std, w->cpu_ratio, w->probe_gbs, w->retries, w->threads, w->discarded, w->outliers,
			   w->blocks, w->blocks_bad, w->worst_wait);
	for (const char *q = w->kernel; *q; q++)
		perfdb_strbuf_addch(b, *q == '\x1f' || *q == '\x1e' ? ' ' : *q);
	perfdb_strbuf_addch(b, '\x1f');
	for (const char *q = w->reason ? w->reason : ""; *q; q++)
		perfdb_strbuf_addch(b, *q == '\x1f' || *q == '\x1e' ? ' ' : *q);
	perfdb_strbuf_addch(b, '\x1e');
}

int scaleout_unpack_row(const char *f, struct perfdb_engine_row *w)
{
	char *e;
	strtoull(f, &e, 10);                               /* line, known */
	w->status = (enum perfdb_engine_status)strtol(e + 1, &e, 10);
	w->resumed = (int)strtol(e + 1, &e, 10);
	w->rank = (int)strtol(e + 1, &e, 10);
	w->samples = (size_t)strtoull(e + 1, &e, 10);
	w->mean = strtod(e + 1, &e);
	w->median = strtod(e + 1, &e);
	w->min = strtod(e + 1, &e);
	w->std = strtod(e + 1, &e);
	w->cpu_ratio = strtod(e + 1, &e);
	w->probe_gbs = strtod(e + 1, &e);
	w->retries = (int)strtol(e + 1, &e, 10);
	w->threads = (int)strtol(e + 1, &e, 10);
	w->discarded = (size_t)strtoull(e + 1, &e, 10);
	w->outliers = (size_t)strtoull(e + 1, &e, 10);
	w->blocks = (size_t)strtoull(e + 1, &e, 10);
	w->blocks_bad = (size_t)strtoull(e + 1, &e, 10);
	w->worst_wait = strtod(e + 1, &e);
	const char *k = e + 1, *ke = strchr(k, '\x1f');
	if (!ke)
		ke = k + strlen(k);   /* pack_row always ends the kernel; a record cut short has no reason */
	snprintf(w->kernel, sizeof(w->kernel), "%.*s", (int)(ke - k), k);
	if (w->status != PERFDB_ENGINE_OK && !(w->reason = strdup(*ke ? ke + 1 : ke)))
		return -PERFDB_ENOMEM;
	return 0;
}

struct packed {
	size_t table, line;
	const char *rec;
};

static int packed_cmp(const void *a, const void *b)
{
	const struct packed *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Collective rows are sent once, from rank 0 itself; a failure on any rank fails the run on every rank. */
int scaleout_gather_rows(const struct perfdb_engine_opts *o, const struct perfdb_table *tabs,
			 const char *const *names, size_t ntab, struct perfdb_engine_result *res, int rc,
			 struct perfdb_err *err)
{
	MPI_Comm comm = *(MPI_Comm *)o->comm;
	int flags[3] = { rc < 0 ? o->rank + 1 : 0, res->stopped, res->interrupted }, g[3];
	MPI_Allreduce(flags, g, 3, MPI_INT, MPI_MAX, comm);
	if (g[0]) {
		if (rc < 0)
			return rc;
		return perfdb_err_set(err, PERFDB_EIO, "rank %d of the run failed (see its message)", g[0] - 1);
	}
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	for (size_t i = 0; i < res->nrows; i++) {
		const struct perfdb_engine_row *w = &res->rows[i];
		if (o->rank != 0 && scaleout_table_collective(o, w->op))
			continue;   /* rank 0 has the same row */
		scaleout_pack_row(&b, w);
	}
	int mylen = (int)b.len, *lens = NULL, *offs = NULL;
	char *all = NULL;
	if (o->rank == 0) {
		lens = calloc((size_t)o->nranks, sizeof(int));
		offs = calloc((size_t)o->nranks, sizeof(int));
	}
	MPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
	size_t tot = 0;
	if (o->rank == 0 && lens && offs) {
		for (int r = 0; r < o->nranks; r++) {
			offs[r] = (int)tot;
			tot += (size_t)lens[r];
		}
		all = malloc(tot + 1);
	}
	MPI_Gatherv(b.buf ? b.buf : "", mylen, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, comm);
	perfdb_strbuf_release(&b);
	free(lens);
	free(offs);
	if (o->rank != 0) {
		perfdb_engine_result_release(res);
		res->stopped = g[1];
		res->interrupted = g[2];
		return 0;
	}
	if (!all)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	all[tot] = '\0';
	/* split into records, order them, rebuild the result */
	size_t nrec = 0;
	for (size_t i = 0; i < tot; i++)
		nrec += all[i] == '\x1e';
	struct packed *pk = calloc(nrec ? nrec : 1, sizeof(*pk));
	if (!pk) {
		free(all);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	size_t k = 0;
	for (char *p = all; k < nrec; k++) {
		char *end = strchr(p, '\x1e');
		*end = '\0';
		pk[k].rec = p;
		char *f = strchr(p, '\x1f');
		*f = '\0';
		pk[k].table = ntab;
		for (size_t ti = 0; ti < ntab; ti++)
			if (strcmp(names[ti], p) == 0)
				pk[k].table = ti;
		pk[k].line = (size_t)strtoull(f + 1, NULL, 10);
		p = end + 1;
	}
	qsort(pk, nrec, sizeof(*pk), packed_cmp);
	perfdb_engine_result_release(res);
	res->stopped = g[1];
	res->interrupted = g[2];
	rc = 0;
	for (k = 0; k < nrec && rc == 0; k++) {
		if (pk[k].table >= ntab)
			continue;
		const char *op = names[pk[k].table];
		struct perfdb_engine_row *w = result_add_row(res, op, tabs[pk[k].table].name, pk[k].line);
		if (!w) {
			rc = -PERFDB_ENOMEM;
			break;
		}
		rc = scaleout_unpack_row(pk[k].rec + strlen(pk[k].rec) + 1, w);
		res->nresumed += (size_t)w->resumed;
		if (w->status == PERFDB_ENGINE_OK) {
			res->nok++;
			if (rc == 0)
				rc = result_add_measure(&res->measures, op, &tabs[pk[k].table], pk[k].line - 2, w);
		} else if (w->status == PERFDB_ENGINE_FAILED) {
			res->nfailed++;
		} else if (w->status == PERFDB_ENGINE_CONTENDED) {
			res->ncontended++;
		} else {
			res->nskipped++;
		}
	}
	free(pk);
	free(all);
	if (rc < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return 0;
}
