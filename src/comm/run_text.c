/*
 * perfdb comm's words for people (comm.h): the run's header, one table
 * line per case, and the closing lines with the run's exit status.  The
 * JSON form is run_report.c's; rank 0's CLI prints either.
 */
#include <string.h>

#include "backend/transport.h"
#include "comm/comm.h"
#include "perfdb/strbuf.h"

int perfdb_comm_header_text(const struct perfdb_comm_report *r, const struct perfdb_comm_opts *o,
			    struct perfdb_strbuf *out)
{
	const struct perfdb_comm_context *x = &r->ctx;
	char grid[128];
	perfdb_comm_grid_repr(&o->grid, grid, sizeof(grid));
	int rc = perfdb_strbuf_addf(out, "# perfdb comm %s: backend %s, %d rank(s) on %d host(s) (%s)\n",
				    x->perfdb_version, o->transport->i->name, x->world_size, x->nhosts,
				    x->hosts);
	if (o->transport->i->describe) {
		char d[256];
		o->transport->i->describe(o->transport->ctx, d, sizeof(d));
		rc |= perfdb_strbuf_addf(out, "# %s\n", d);
	}
	rc |= perfdb_strbuf_addf(out, "# %s, MPI %s; %s\n", x->mpi_library, x->mpi_standard, x->cpu_model);
	rc |= perfdb_strbuf_addf(out, "# dtype %s (%s), grid %s, warm-up <= %ld, iterations %ld..%ld within "
				 "%g s per size\n", perfdb_comm_dtype(o->dtype)->name,
				 perfdb_comm_dtype(o->dtype)->label, grid, o->warmup,
				 o->min_iters < o->iters ? o->min_iters : o->iters, o->iters, o->time_budget);
	rc |= perfdb_strbuf_addstr(out, "# time = slowest rank per iteration (barrier before each), "
				   "Duration = median; checked once per size\n");
	rc |= perfdb_strbuf_addf(out, "# malloc: %s\n", x->malloc_settings);
	if (x->mca_env[0])
		rc |= perfdb_strbuf_addf(out, "# %s\n", x->mca_env);
	if (o->overhead && o->overhead->path)
		rc |= perfdb_strbuf_addf(out, "# overhead table %s added to Duration(us) (%zu entries)\n",
					 o->overhead->path, o->overhead->n);
	rc |= perfdb_strbuf_addf(out, "#\n#%14s %5s %4s %12s %12s %10s %10s %7s %11s %11s %6s  %s\n", "op",
				 "n", "tier", "bytes", "Duration(us)", "min(us)", "max(us)", "samples",
				 "algbw(GB/s)", "busbw(GB/s)", "check", "note");
	return rc < 0 ? -PERFDB_ENOMEM : 0;
}

int perfdb_comm_case_text(const struct perfdb_comm_case *c, const struct perfdb_comm_opts *o,
			  struct perfdb_strbuf *out)
{
	struct perfdb_comm_row r;
	perfdb_comm_row_compute(c, &r);
	struct perfdb_strbuf note = PERFDB_STRBUF_INIT;
	int rc = 0;
	if (c->unclean)
		rc |= perfdb_strbuf_addf(&note, "unclean (%zu of %zu rounds contended) ", c->rounds_bad, c->rounds);
	else if (c->rounds_bad)
		rc |= perfdb_strbuf_addf(&note, "%zu of %zu rounds dropped ", c->rounds_bad, c->rounds);
	if (c->contended)
		rc |= perfdb_strbuf_addf(&note, "contended (other CPU %.2f, %d attempts) ", c->other_cpu,
					 c->attempts);
	else if (c->attempts > 1)
		rc |= perfdb_strbuf_addf(&note, "repeated %d times ", c->attempts - 1);
	if (c->overhead_us != 0)
		rc |= perfdb_strbuf_addf(&note, "overhead +%g us ", c->overhead_us);
	/* a checked case without a destination is only printed: "not written" would say it failed */
	if (!c->written && !(c->check > 0 && o->database_path == NULL && o->output_csv == NULL))
		rc |= perfdb_strbuf_addstr(&note, "not written");
	rc |= perfdb_strbuf_addf(out, " %14s %5ld %4ld %12lld %12.2f %10.2f %10.2f %7zu %11.2f %11.2f %6s  %s\n",
				 perfdb_comm_op_name(c->op), c->num_devices, c->tier, c->message_bytes,
				 r.duration_us, r.min_us, r.max_us, r.samples, r.bandwidth_gbps, r.busbw_gbps,
				 c->check > 0 ? "ok" : "FAIL", note.buf);
	perfdb_strbuf_release(&note);
	return rc < 0 ? -PERFDB_ENOMEM : 0;
}

int perfdb_comm_outcome_text(const struct perfdb_comm_report *rep, size_t skipped_world, int world,
			     bool json, bool quiet, struct perfdb_strbuf *out, struct perfdb_strbuf *err)
{
	int rc = 0, status = 0;
	if (!json) {
		/* read after the last case (src/comm/harness.c), so after the table */
		rc |= perfdb_strbuf_addf(out, "# shared-memory single copy: %s\n", rep->ctx.shm_copy);
		/* without a destination nothing was saved: say so, not "(no output)" (issue 47) */
		if (strcmp(rep->output, "(no output)") == 0)
			rc |= perfdb_strbuf_addf(out, "Completed %zu benchmarks. Nothing saved: give --database-path "
						 "or --output-csv to keep the results\n", rep->written);
		else
			rc |= perfdb_strbuf_addf(out, "Completed %zu benchmarks. Results saved to %s\n", rep->written,
						 rep->output);
	}
	if (!quiet)
		rc |= perfdb_strbuf_addf(err, "perfdb comm: %zu case(s) in %.1f s: %zu written, %zu unclean (not "
					 "written), %zu contended, %zu non-monotonic, %zu check failure(s), %zu "
					 "skipped%s%s\n", rep->ncases, rep->seconds, rep->written, rep->unclean,
					 rep->contended, rep->nonmonotonic, rep->check_failed, rep->nskips,
					 rep->report_path[0] ? "; report " : "", rep->report_path);
	if (rep->check_failed) {
		rc |= perfdb_strbuf_addf(err, "perfdb comm: error: %zu size(s) failed the correctness check\n",
					 rep->check_failed);
		status = 1;
	}
	for (size_t i = 0; i < rep->nskips; i++)
		if (rep->skips[i].message_bytes >= 0)
			status = 1;   /* a size could not be allocated */
	if (rep->ncases == 0 && skipped_world) {
		rc |= perfdb_strbuf_addf(err, "perfdb comm: error: nothing measured: every group is larger than "
					 "the world (%d rank%s)\n", world, world == 1 ? "" : "s");
		status = 1;
	}
	return rc < 0 ? -PERFDB_ENOMEM : status;
}
