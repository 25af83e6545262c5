/*
 * The replay engine's run: rows -> tensors -> timed runs -> measurements.
 * See engine.h for the method and docs/spec/replay.md §4 and Decisions 2,
 * 3, 6, 7 for the rules followed.  This file loads the selected tables and
 * walks their rows (skip, resume, measure, journal); the steps are in the
 * files engine_internal.h lists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/signature.h"
#include "perfdb/table.h"
#include "replay/engine_internal.h"
#include "perfdb/hugebuf.h"
#include "ops/aten.h"
#include "perfdb/schema.h"

/* No hooks: a run without o->hooks. */
static const struct perfdb_engine_hooks no_hooks;

static int selected(const struct perfdb_engine_opts *o, const char *op)
{
	if (!o->ops)
		return 1;
	for (size_t i = 0; i < o->nops; i++)
		if (strcmp(o->ops[i], op) == 0)
			return 1;
	return 0;
}

/*
 * The --ops that found no table: said, not silently skipped, so that a run
 * measuring nothing can tell the user why (docs/replay.md "Selecting rows").
 */
static int note_absent(const struct perfdb_engine_opts *o, const char *const *names, size_t ntab,
		       struct perfdb_engine_result *res, struct perfdb_err *err)
{
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	for (size_t i = 0; i < o->nops && o->ops; i++) {
		size_t j = 0;
		while (j < ntab && strcmp(names[j], o->ops[i]) != 0)
			j++;
		if (j == ntab && perfdb_strbuf_addf(&b, "%s%s", b.len ? ", " : "", o->ops[i]) < 0) {
			perfdb_strbuf_release(&b);
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		}
	}
	res->absent = b.len ? perfdb_strbuf_detach(&b, NULL) : NULL;
	perfdb_strbuf_release(&b);
	return 0;
}

const char *perfdb_engine_status_name(enum perfdb_engine_status st)
{
	static const char *const names[] = { "ok", "failed", "skipped", "contended" };
	return (unsigned)st < sizeof(names) / sizeof(names[0]) ? names[st] : "?";
}

static int set_reason(struct perfdb_engine_row *row, enum perfdb_engine_status st, const char *msg)
{
	row->status = st;
	row->reason = strdup(msg);
	return row->reason ? 0 : -PERFDB_ENOMEM;
}

/* ---- one row ------------------------------------------------------------ */

/*
 * --row-timeout holds before a row starts (docs/replay.md "Timeouts"): at
 * the best rates this run measured, the row's warm-up and samples would
 * take longer than the timeout.  The rates are the fastest seen, though a
 * large GEMM may beat the small rows before it: the reason carries the
 * estimate, so a user can raise the timeout.  No estimate before a row of
 * the same unit ran.
 */
static int row_over_timeout(const struct perfdb_engine_opts *o, const struct perfdb_op_cost *w,
			    const double *rates, struct perfdb_err *err)
{
	int known;
	double fr = rates[w->unit == PERFDB_OP_UNIT_MATRIX];
	double call = eta_call_s(rates, w->unit == PERFDB_OP_UNIT_MATRIX, w->flops, w->bytes, &known);
	double calls = 2.0 + (double)o->repeat;   /* the warm-up's two calls and the samples */
	if (!(call * calls > o->timeout_s))
		return 0;
	return perfdb_err_set(err, PERFDB_EINVAL,
			      "not run: %zu samples and the warm-up would take at least %.0f s (%.3g s a call at "
			      "the best rates this run measured: %.1f GFLOP/s, %.1f GB/s), over --row-timeout %g s",
			      o->repeat, call * calls, call, fr / 1e9, rates[2] / 1e9, o->timeout_s);
}

/* What a measured row tells of this machine's rates (row_over_timeout). */
static void note_rates(const struct perfdb_op_cost *w, const struct perfdb_engine_row *row, double *rates)
{
	double s = row->median * 1e-6;
	if (row->status != PERFDB_ENGINE_OK || !(s > 0))
		return;
	double *fr = &rates[w->unit == PERFDB_OP_UNIT_MATRIX];
	if (w->flops / s > *fr)
		*fr = w->flops / s;
	if (w->bytes / s > rates[2])
		rates[2] = w->bytes / s;
}

static int replay_row(const struct perfdb_engine_opts *o, const char *op, const struct perfdb_op_impl *impl,
		      const struct perfdb_table *t, size_t r, struct perfdb_engine_pool *pool,
		      uint64_t *flushbuf, size_t flushn, struct perfdb_probe *pr, double *rates,
		      struct perfdb_engine_row *row, struct perfdb_err *err)
{
	struct perfdb_op_case c;
	struct case_cells cc;
	PERFDB_TRY(case_from_row(o, op, impl, t, r, row->line, &cc, &c, err));
	const struct perfdb_opdef *def = c.def;
	/* the operator's own rules first, then the backend's limits */
	int rc = perfdb_case_check(def, impl, &c, err);
	/* the row's cost, once: what it would take at the run's rates, then what it took */
	struct perfdb_op_cost w;
	struct perfdb_err ignored;
	int costed = rc == 0 && perfdb_op_cost(&c, &w, &ignored) == 0;
	/* collective rows: every rank must take the same path, and their rates differ */
	if (costed && !(def->collective && o->comm))
		rc = row_over_timeout(o, &w, rates, err);
	if (def->collective && o->comm)
		rc = scaleout_agree(o, rc, err);
	if (rc < 0)
		return rc;
	rc = perfdb_engine_alloc_case(pool, &c, o->seed ^ ((uint64_t)row->line << 20), err);
	if (def->collective && o->comm)
		rc = scaleout_agree(o, rc, err);
	if (rc < 0)
		return rc;
	rc = impl->prepare ? impl->prepare(&c, err) : 0;
	snprintf(row->kernel, sizeof(row->kernel), "%s", c.kernel[0] ? c.kernel : "own");
	if (def->collective && o->comm)
		rc = scaleout_agree(o, rc, err);
	if (rc == 0)   /* collective rows: every rank must take the same path, so no per-rank retries */
		rc = timing_measure(o, impl, &c, flushbuf, flushn, def->collective && o->comm ? NULL : pr, row, err);
	if (rc == 0 && costed)
		note_rates(&w, row, rates);
	if (impl->release)
		impl->release(&c);
	return rc;
}

/* ---- a table's rows ----------------------------------------------------- */

/*
 * The impl an aten table's row r runs with (*impl; NULL when the backend
 * lacks the operator it lowers to, with " (aten.silu runs as Silu)" in
 * msg), or -1 with why the row does not lower in msg.
 */
static int row_lowered(const struct perfdb_backend_i *be, const char *op, const struct perfdb_table *t, size_t r,
		       const struct perfdb_op_impl **impl, char *msg, size_t msglen)
{
	struct perfdb_op_case c;
	struct perfdb_err e;
	perfdb_err_clear(&e);
	*impl = NULL;
	if (case_build_row(op, t, r, &c, &e) < 0) {
		snprintf(msg, msglen, "%s", e.msg);
		return -1;
	}
	if (be->supports_op(c.op))
		*impl = be->find_op(c.op);
	else
		snprintf(msg, msglen, " (%s runs as %s)", op, c.op);
	return 0;
}

/* The row's journal key (Decision 7): its table and signature. */
static int row_key(const char *op, const char *table, const struct perfdb_table *t, size_t r,
		   struct perfdb_strbuf *sig, struct perfdb_strbuf *key)
{
#define CELL(name) perfdb_table_get(t, r, perfdb_table_col(t, name))
	struct perfdb_sig_row sr = { CELL(PERFDB_COL_IN_SHAPES), CELL(PERFDB_COL_IN_DTYPES),
				     CELL(PERFDB_COL_IN_FORMATS), CELL(PERFDB_COL_OUT_SHAPES), CELL(PERFDB_COL_OUT_DTYPES),
				     perfdb_table_col(t, PERFDB_COL_EP_SIZE) >= 0 ? CELL(PERFDB_COL_EP_SIZE) : NULL };
#undef CELL
	if (perfdb_sig_compute(op, &sr, sig) < 0)
		return -PERFDB_ENOMEM;
	perfdb_strbuf_reset(key);
	perfdb_strbuf_addf(key, "%s\t%s", table, sig->buf ? sig->buf : "");
	return key->buf ? 0 : -PERFDB_ENOMEM;
}

/* A row the journal holds (a resumed run, or the operator process's
 * result): its figures and outcome as that run measured them. */
static int resume_row(struct engine_run_ctx *x, const char *op, const struct perfdb_table *t, size_t r,
		      const struct jentry *je, enum engine_pass pass, struct perfdb_engine_row *row)
{
	const struct perfdb_engine_opts *o = x->o;
	struct perfdb_engine_result *res = x->res;
	int rc = 0;
	row->samples = je->samples;
	row->mean = je->mean;
	row->median = je->median;
	row->min = je->min;
	row->std = je->std;
	row->cpu_ratio = je->cpu;
	row->probe_gbs = je->probe;
	row->retries = je->retries;
	snprintf(row->kernel, sizeof(row->kernel), "%s", je->kernel);
	/* resumed rows count in the reference like measured ones */
	if (x->probe && perfdb_probe_note(x->probe, je->probe) < 0)
		return -PERFDB_ENOMEM;
	row->discarded = je->discarded;
	row->outliers = je->outliers;
	row->blocks = je->blocks;
	row->blocks_bad = je->blocks_bad;
	row->worst_wait = je->worst_wait;
	if (je->ok) {
		res->nok++;
		res->nresumed += pass != ENGINE_PASS_COLLECT;
		row->resumed = pass != ENGINE_PASS_COLLECT;
		rc = result_add_measure(&res->measures, op, t, r, row);
	} else if (je->contended) {
		/* only the operator process's own row comes back so (resume finds ok lines only) */
		rc = set_reason(row, PERFDB_ENGINE_CONTENDED, je->reason ? je->reason : "contended");
		res->ncontended++;
	} else {
		rc = set_reason(row, PERFDB_ENGINE_FAILED, je->reason ? je->reason : "failed");
		res->nfailed++;
		res->stopped = o->fail_fast;
	}
	return rc;
}

int engine_run_table(struct engine_run_ctx *x, const char *op, const struct perfdb_table *t,
		     enum engine_pass pass, const char *crash, struct perfdb_err *err)
{
	const struct perfdb_engine_opts *o = x->o;
	struct perfdb_engine_result *res = x->res;
	const struct perfdb_backend_i *be = o->backend;
	/* an aten table's rows lower to an operator each (aten.h): the impl is the row's */
	const struct perfdb_aten_op *aten = perfdb_aten_find(op);
	int sup = !aten && be->supports_op(op);   /* asked first (docs/style.md rule 3) */
	const struct perfdb_op_impl *impl = sup ? be->find_op(op) : NULL;
	long cmb = perfdb_table_col(t, PERFDB_COL_MB_DUR), cprof = perfdb_table_col(t, PERFDB_COL_PROF_AVG);
	struct perfdb_strbuf sig = PERFDB_STRBUF_INIT, key = PERFDB_STRBUF_INIT;
	char table[4200], why[256];
	snprintf(table, sizeof(table), "%s", t->name ? t->name : op);
	int coll = impl && perfdb_opdef_get(op)->collective && o->comm;
	int rc = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		size_t ord = x->ordinal++;
		int sig_stop = pass != ENGINE_PASS_COLLECT && o->stop && *o->stop;
		if (coll) {
			if (scaleout_agree_stop(o, res->stopped, sig_stop, &res->interrupted)) {
				res->stopped = 1;
				break;
			}
		} else {
			if (res->stopped)
				break;
			if (!scaleout_row_mine(o, ord))
				continue;   /* another rank's row */
			if (sig_stop) {
				res->stopped = res->interrupted = 1;
				break;
			}
		}
		if (o->only && !o->only(o->only_ud, op, r + 2))
			continue;
		struct perfdb_engine_row *row = result_add_row(res, op, table, r + 2);
		if (row) {
			row->rank = o->comm ? o->rank : 0;
			row->threads = o->threads;
		}
		if (!row) {
			rc = -PERFDB_ENOMEM;
			break;
		}
		const struct perfdb_op_impl *rimpl = impl;
		char lowered[PERFDB_ERR_MSG_MAX] = "";
		if (aten && row_lowered(be, op, t, r, &rimpl, lowered, sizeof(lowered)) < 0) {
			rc = set_reason(row, PERFDB_ENGINE_FAILED, lowered);
			res->nfailed++;
			res->stopped = o->fail_fast;
		} else if (!rimpl) {
			char m[PERFDB_ERR_MSG_MAX + 64];
			snprintf(m, sizeof(m), "not supported by the %s backend%s", be->name, lowered);
			rc = set_reason(row, PERFDB_ENGINE_SKIPPED, m);
			res->nskipped++;
		} else if (o->missing_only && perfdb_schema_usable_duration(perfdb_table_get(t, r, cmb),
									    perfdb_table_get(t, r, cprof), false, NULL)) {
			rc = set_reason(row, PERFDB_ENGINE_SKIPPED, "has a valid duration");
			res->nskipped++;
		} else if (case_skipped(o, rimpl, t, r, why, sizeof(why))) {
			rc = set_reason(row, PERFDB_ENGINE_SKIPPED, why);
			res->nskipped++;
		} else {
			const struct jentry *je = NULL;
			if (x->jr) {
				if ((rc = row_key(op, table, t, r, &sig, &key)) < 0)
					break;
				if (pass == ENGINE_PASS_COLLECT || o->resume)
					je = journal_find(x->jr, key.buf, pass != ENGINE_PASS_COLLECT);
				/* a resumed row keeps its run's --threads: another count (or none recorded) is measured again */
				if (je && pass != ENGINE_PASS_COLLECT && je->threads != o->threads)
					je = NULL;
			}
			if (je) {
				rc = resume_row(x, op, t, r, je, pass, row);
			} else if (pass == ENGINE_PASS_COLLECT && o->stop && *o->stop) {
				/* interrupted: the child stopped before this row, as the in-process run would */
				free(row->op);
				free(row->table);
				res->nrows--;
				res->stopped = res->interrupted = 1;
				break;
			} else if (pass == ENGINE_PASS_COLLECT) {
				rc = set_reason(row, PERFDB_ENGINE_FAILED, crash ? crash : "not measured by the operator process");
				res->nfailed++;
				res->stopped = o->fail_fast;
			} else {
				struct perfdb_err e;
				perfdb_err_clear(&e);
				double w0 = engine_now_s(CLOCK_MONOTONIC);
				int rrc = replay_row(o, op, rimpl, t, r, x->pool, x->flushbuf, x->flushn, x->probe, x->rates,
						     row, &e);
				eta_row_done(&x->eta, engine_now_s(CLOCK_MONOTONIC) - w0);
				if (rrc < 0) {
					rc = set_reason(row, PERFDB_ENGINE_FAILED, e.msg);
					res->nfailed++;
					res->stopped = o->fail_fast;
				} else if (row->status == PERFDB_ENGINE_CONTENDED) {
					res->ncontended++;   /* not a duration: missing-only measures it again */
				} else {
					res->nok++;
					if (pass == ENGINE_PASS_MEASURE)
						rc = result_add_measure(&res->measures, op, t, r, row);
				}
				if (rc == 0 && x->jfd >= 0 && (rc = journal_append(x->jfd, op, table, sig.buf, row)) < 0) {
					perfdb_err_errno(err, errno, "cannot append to the journal '%s'", x->jpath);
					break;
				}
				if (x->hooks->exit_after && ++x->measured >= x->hooks->exit_after)
					_exit(75);   /* test hook: die like a killed run */
			}
		}
		if (rc < 0)
			break;
		if (pass != ENGINE_PASS_CHILD && o->progress) {
			/* the rows to come, at most once a second: the sum walks them all */
			double now = engine_now_s(CLOCK_MONOTONIC), eta = x->eta.last_eta - (now - x->eta.last_at);
			if (x->eta.n && now - x->eta.last_at >= 1.0) {
				x->eta.last_eta = eta = eta_estimate(&x->eta, o, x->rates, x->ordinal,
								     o->comm && o->nranks > 1 ? (size_t)o->nranks : 1);
				x->eta.last_at = now;
			}
			o->progress(o->ud, ++x->done, x->total, res->nfailed, x->eta.n && x->eta.last_eta >= 0
					    ? (eta > 0 ? eta : 0) : -1);
		}
	}
	perfdb_strbuf_release(&sig);
	perfdb_strbuf_release(&key);
	if (rc == -PERFDB_ENOMEM)
		perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return rc;
}

int perfdb_engine_run(const struct perfdb_engine_opts *o, struct perfdb_engine_result *res,
		      struct perfdb_err *err)
{
	memset(res, 0, sizeof(*res));
	res->probe_quiet_gbs = o->no_probe ? 0 : o->probe_quiet_gbs;
	const struct perfdb_backend_i *be = o->backend;
	/* the seed's tables, then the PyTorch op tables (aten.h) */
	size_t nall = perfdb_replay_nops + perfdb_aten_nops;
	struct perfdb_table *tabs = calloc(nall, sizeof(*tabs));
	const char **names = calloc(nall, sizeof(*names));
	size_t ntab = 0, total = 0;
	int rc = 0;
	if (!tabs || !names) {
		free(tabs);
		free(names);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	/* load every selected table first: a table that does not load stops the run before any work */
	for (size_t i = 0; i < nall; i++) {
		const char *op = i < perfdb_replay_nops ? perfdb_replay_ops[i] : perfdb_aten_ops[i - perfdb_replay_nops].stem;
		if (!selected(o, op))
			continue;
		/* the table writeback will update: with --ops found anywhere below the database (rglob) */
		struct perfdb_strbuf p = PERFDB_STRBUF_INIT;
		int found = perfdb_replay_table_path(o->dbdir, op, o->ops != NULL, &p);
		if (found <= 0) {
			perfdb_strbuf_release(&p);
			if (found < 0) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				goto out;
			}
			continue;
		}
		perfdb_table_init(&tabs[ntab]);
		if ((rc = perfdb_table_load(&tabs[ntab], p.buf, err)) < 0) {
			perfdb_table_release(&tabs[ntab]);
			perfdb_strbuf_release(&p);
			goto out;
		}
		if (perfdb_table_col(&tabs[ntab], PERFDB_COL_IN_SHAPES) < 0) {
			perfdb_table_release(&tabs[ntab]);
			rc = perfdb_err_set(err, PERFDB_ESCHEMA, "%s: no 'Input Shapes' column", p.buf);
			perfdb_strbuf_release(&p);
			goto out;
		}
		perfdb_strbuf_release(&p);
		names[ntab] = op;
		total += tabs[ntab].nrows;
		ntab++;
	}
	if ((rc = note_absent(o, names, ntab, res, err)) < 0)
		goto out;
	if (o->comm)
		total = scaleout_rank_share(o, tabs, names, ntab);
	size_t flushn = ENGINE_FLUSH_BYTES / sizeof(uint64_t);
	uint64_t *flushbuf = o->flush ? perfdb_huge_alloc(flushn * sizeof(uint64_t), NULL) : NULL;
	struct perfdb_engine_pool pool = { 0 };
	struct journal jr = { 0 };
	char jpath[4200] = "";
	struct perfdb_probe probe = { 0 };
	const struct perfdb_engine_hooks *hooks = o->hooks ? o->hooks : &no_hooks;
	struct engine_run_ctx x = { .o = o, .hooks = hooks, .res = res, .jr = NULL, .jfd = -1, .pool = &pool,
				    .flushbuf = flushbuf, .flushn = flushn, .total = total, .jpath = jpath };
	x.eta.last_eta = -1;
	if (o->progress && (rc = eta_init(&x.eta, o, tabs, names, ntab)) < 0) {
		perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto run_out;
	}
	/* device-timed backends measure the device, not this host's memory: no probe */
	if (!o->no_probe && !be->time_run) {
		if ((rc = perfdb_probe_init(&probe, hooks->probe_script_n ? 0 : PERFDB_PROBE_BYTES, err)) < 0)
			goto run_out;
		probe.script = hooks->probe_script;
		probe.nscript = hooks->probe_script_n;
		probe.pos = hooks->probe_script_pos ? *hooks->probe_script_pos : 0;
		x.probe = &probe;
	}
	if (o->journal) {
		if (o->comm)
			snprintf(jpath, sizeof(jpath), "%s.rank%d", o->journal, o->rank);
		else
			snprintf(jpath, sizeof(jpath), "%s", o->journal);
		if (o->resume) {
			rc = scaleout_journal_load_all(o->journal, &jr);
			for (size_t k = 0; rc == 0 && k < o->nresume_from; k++)
				rc = scaleout_journal_load_all(o->resume_from[k], &jr);
		} else {   /* this run's own journal starts empty (other runs' are theirs) */
			rc = scaleout_journal_reset(o);
		}
		if (rc < 0) {
			perfdb_err_errno(err, errno, "cannot prepare the journal '%s'", o->journal);
			goto run_out;
		}
		x.jr = &jr;
		x.jfd = open(jpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (o->resume ? 0 : O_TRUNC), 0644);
		if (x.jfd < 0) {
			rc = perfdb_err_errno(err, errno, "cannot open the journal '%s'", jpath);
			goto run_out;
		}
	}
	int frc = 0;
	struct perfdb_err ferr;
	perfdb_err_clear(&ferr);
	for (size_t ti = 0; ti < ntab; ti++) {
		/* under MPI a stopped rank still walks the tables: collective rows need every rank */
		if (res->stopped && !o->comm)
			break;
		int coll = o->comm && scaleout_table_collective(o, names[ti]);
		if (o->subprocess && x.jfd >= 0 && !coll)
			rc = subprocess_run_table(&x, names[ti], &tabs[ti], engine_run_table, err);
		else
			rc = engine_run_table(&x, names[ti], &tabs[ti], ENGINE_PASS_MEASURE, NULL, err);
		if (rc < 0) {
			if (!o->comm)
				break;
			if (!frc) {
				frc = rc;
				ferr = *err;
			}
			res->stopped = 1;
			rc = 0;
		}
		if (o->subprocess && o->stop && *o->stop)
			res->stopped = res->interrupted = 1;
	}
	if (frc) {
		rc = frc;
		*err = ferr;
	}
	if (o->comm) {
		if (x.jfd >= 0) {
			close(x.jfd);
			x.jfd = -1;
		}
		rc = scaleout_gather_rows(o, tabs, names, ntab, res, rc, err);
	}
run_out:
	if (x.probe && hooks->probe_script_pos)
		*hooks->probe_script_pos = probe.pos;
	eta_release(&x.eta);
	perfdb_probe_release(&probe);
	if (x.jfd >= 0)
		close(x.jfd);
	journal_release(&jr);
	perfdb_engine_pool_release(&pool);
	free(flushbuf);
out:
	for (size_t i = 0; i < ntab; i++)
		perfdb_table_release(&tabs[i]);
	free(tabs);
	free(names);
	return rc;
}
