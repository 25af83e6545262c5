/*
 * The closure stage (docs/replay.md "In the trace's sequence"): the torch
 * replay run in the op sequence of the trace a database was parsed from,
 * so that each row is timed under the conditions the model gave it.  The
 * sequence is read by the predict stage; the replay is the replay stage's.
 */
#ifndef PERFDB_CLOSURE_H
#define PERFDB_CLOSURE_H

#include "perfdb/err.h"
#include "replay/torch_run.h"

/*
 * perfdb_torch_microbench with o->sequence read from trace (a PyTorch CPU
 * trace, or a directory holding one) against o->dbdir.  Errors: those of
 * perfdb_predict_sequence (nothing is run then) and of the replay.
 */
int perfdb_closure_torch_microbench(const struct perfdb_torch_opts *o, const char *trace,
				    struct perfdb_torch_run *r, struct perfdb_err *err);

#endif
