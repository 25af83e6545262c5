/*
 * Fuzz target: the run status file run_all_op_status_<ts>.json
 * (src/replay/status.c perfdb_status_parse), which `microbench` reads back
 * from the database's reports/ to resume the reference's bookkeeping.
 * Invariants: no crash or leak; a file that reads holds only non-NULL
 * names and reasons; one that does not reads as no status, all empty.
 */
#include <stdint.h>
#include <stdlib.h>

#include "replay/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfdb_status s;
	if (perfdb_status_parse((const char *)data, size, &s)) {
		for (size_t i = 0; i < s.nsuccess; i++)
			if (!s.success[i])
				abort();
		for (size_t i = 0; i < s.nskipped; i++)
			if (!s.skipped[i])
				abort();
		for (size_t i = 0; i < s.nfailed; i++)
			if (!s.failed[i].op || !s.failed[i].reason)
				abort();
	} else if (s.nsuccess || s.nskipped || s.nfailed || s.success || s.skipped || s.failed) {
		abort();
	}
	perfdb_status_release(&s);
	return 0;
}
