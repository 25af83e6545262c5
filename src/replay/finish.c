/*
 * The end of every replay run (docs/spec/replay.md §1 steps 8-9, §2, §3):
 * measurements, from the native engine or aggregated from msprof's
 * op_summary files, written back into the database, then the profile
 * update report.  `perfdb writeback`, `microbench --backend msprof` and the
 * native backends all finish here; the caller prints what it returns.
 */
#include <stdlib.h>
#include <string.h>

#include "perfdb/signature.h"
#include "replay/replay.h"

void perfdb_finish_result_release(struct perfdb_finish_result *r)
{
	perfdb_wb_result_release(&r->wb);
	perfdb_strbuf_release(&r->md);
	free(r->md_path);
	free(r->csv_path);
	memset(r, 0, sizeof(*r));
}

int perfdb_replay_again_note(size_t n, size_t kept, struct perfdb_strbuf *out)
{
	return perfdb_strbuf_addf(out, "[MEASURED AGAIN] %zu row%s measured before the run had a median to hold "
				  "%s to read low against it: measured again at the end, %zu now written\n", n,
				  n == 1 ? "" : "s", n == 1 ? "it" : "them", kept) < 0 ? -PERFDB_ENOMEM : 0;
}

static int selected(const struct perfdb_finish_opts *o, const char *op)
{
	if (!o->nops)
		return 1;
	for (size_t i = 0; i < o->nops; i++) {
		if (strcmp(o->ops[i], op) == 0)
			return 1;
		/* the matmul family aliases each other (docs/spec/replay.md §1b) */
		if (perfdb_sig_is_matmul_family(o->ops[i]) && perfdb_sig_is_matmul_family(op))
			return 1;
	}
	return 0;
}

int perfdb_replay_finish(const struct perfdb_finish_opts *o, struct perfdb_measures *mm,
			 struct perfdb_finish_result *r, struct perfdb_err *err)
{
	memset(r, 0, sizeof(*r));
	perfdb_strbuf_init(&r->md);
	struct perfdb_measures m = *mm;
	memset(mm, 0, sizeof(*mm));
	struct perfdb_wb_opts wo = {
		.dbdir = o->dbdir, .ops = o->nops ? o->ops : NULL, .nops = o->nops,
		.missing_only = o->missing_only, .prune = o->prune, .lock_timeout = -1,
		.seen = o->seen, .op_mapping = o->op_mapping, .aten = o->aten,
	};
	/* what can fail after the tables is checked before them */
	int rc = perfdb_report_dir_prepare(o->dbdir, err);
	if (rc == 0)
		rc = perfdb_writeback(&wo, &m, &r->wb, err);
	else
		memset(&r->wb, 0, sizeof(r->wb));
	perfdb_measures_release(&m);
	if (rc < 0)
		return rc;
	r->written_back = true;
	return perfdb_report_write(o->dbdir, &r->wb, o->status, o->ts, &r->md, &r->md_path,
				   &r->csv_path, err);
}

int perfdb_replay_ingest(const struct perfdb_finish_opts *o, char *const *files, size_t nfiles,
			 struct perfdb_finish_result *r, struct perfdb_err *err)
{
	memset(r, 0, sizeof(*r));
	perfdb_strbuf_init(&r->md);
	struct perfdb_measures m;
	memset(&m, 0, sizeof(m));
	int rc = perfdb_msprof_aggregate(files, nfiles, o->ep, &m, err);
	if (rc < 0)
		return rc;
	/* keep the selected operators and their aliases */
	size_t w = 0;
	for (size_t i = 0; i < m.n; i++) {
		if (selected(o, m.v[i].op))
			m.v[w++] = m.v[i];
		else
			perfdb_measure_release(&m.v[i]);
	}
	m.n = w;
	return perfdb_replay_finish(o, &m, r, err);
}
