/*
 * Whether a backend takes a row (backend.h perfdb_case_check): the one
 * sequence of checks the engine, the unit tests and the benches run, so
 * that none of them can skip the operator's own rules.
 */
#include "backend/backend.h"
#include "ops/opdef.h"

int perfdb_case_check(const struct perfdb_opdef *def, const struct perfdb_op_impl *impl,
		      const struct perfdb_op_case *c, struct perfdb_err *err)
{
	int rc = def && def->check ? def->check(c, err) : 0;
	if (rc == 0 && impl && impl->check)
		rc = impl->check(c, err);
	return rc;
}
