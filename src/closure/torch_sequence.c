/*
 * `perfdb microbench --backend torch --sequence-trace TRACE` (closure.h):
 * the trace's step as rows, then the torch replay run in that order.
 */
#include <string.h>
#include <sys/stat.h>

#include "closure/closure.h"
#include "predict/predict.h"

int perfdb_closure_torch_microbench(const struct perfdb_torch_opts *o, const char *trace,
				    struct perfdb_torch_run *r, struct perfdb_err *err)
{
	memset(r, 0, sizeof(*r));   /* released by the caller whatever happens */
	struct stat st;
	if (stat(trace, &st) < 0)
		return perfdb_err_set(err, PERFDB_ENOENT, "trace not found: '%s' (--sequence-trace)", trace);
	struct perfdb_predict_opts po = { .trace = trace, .database = o->dbdir };
	struct perfdb_opseq seq;
	PERFDB_TRY(perfdb_predict_sequence(&po, &seq, err));
	struct perfdb_torch_opts so = *o;
	so.sequence = &seq;
	so.sequence_trace = trace;
	int rc = perfdb_torch_microbench(&so, r, err);
	perfdb_opseq_release(&seq);
	return rc;
}
