/*
 * The rules of the database schema (include/perfdb/schema.h): which cells
 * hold a usable duration (docs/spec/replay.md §2 "Validity") and the
 * hotspot band (§3).
 */
#include <math.h>
#include <string.h>

#include "perfdb/schema.h"
#include "perfdb/stats.h"

#define NAME(n) n,
const char *const perfdb_counter_names[PERFDB_NCOUNTERS] = { PERFDB_SCHEMA_COUNTERS(NAME) };
#undef NAME

bool perfdb_schema_duration(const char *cell, bool finite, double *us)
{
	double v;
	if (!cell || perfdb_stats_parse_double(cell, strlen(cell), &v) < 0)
		return false;
	/* NaN fails v > 0 */
	if (!(v > 0) || (finite && !isfinite(v)))
		return false;
	if (us)
		*us = v;
	return true;
}

bool perfdb_schema_usable_duration(const char *mb_cell, const char *prof_cell, bool finite,
				   double *us)
{
	return perfdb_schema_duration(mb_cell, finite, us) ||
	       perfdb_schema_duration(prof_cell, finite, us);
}

bool perfdb_schema_in_band(double ratio)
{
	/* written as "not outside" so that NaN, which compares false, is no hotspot */
	return !(ratio < PERFDB_SCHEMA_BAND_LO || ratio > PERFDB_SCHEMA_BAND_HI);
}
