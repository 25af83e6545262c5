/*
 * perfdb comm-suite's words for people (comm.h): the planned launches of a
 * dry run, the log's header and its closing summary.  The JSON forms are
 * suite_json.c's.
 */
#include <stdio.h>
#include <time.h>

#include "comm/comm.h"
#include "perfdb/strbuf.h"

const char *perfdb_comm_suite_clock(char *buf, size_t cap, bool full)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, cap, full ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
	return buf;
}

int perfdb_comm_suite_plan_text(const struct perfdb_comm_suite *s, struct perfdb_strbuf *out)
{
	int rc = 0;
	for (size_t i = 0; i < s->nlaunch; i++) {
		rc |= perfdb_strbuf_addf(out, "# %s\n", s->launch[i].title);
		rc |= perfdb_comm_argv_format(s->launch[i].argv, out);
		rc |= perfdb_strbuf_addch(out, '\n');
	}
	return rc < 0 ? -PERFDB_ENOMEM : 0;
}

int perfdb_comm_suite_header_text(const struct perfdb_comm_suite *s, const char *outdir,
				  struct perfdb_strbuf *out)
{
	char tbuf[64];
	int rc = perfdb_strbuf_addf(out, "=== perfdb comm-suite: collective microbenchmarks ===\nOutput: %s\n",
				    outdir);
	if (s->multi_node)
		rc |= perfdb_strbuf_addf(out, "Mode: multi-node, %ld hosts x %ld ranks = %ld, tier 0\n",
					 s->nhosts, s->nproc, s->world);
	else
		rc |= perfdb_strbuf_addf(out, "Mode: single node, %ld ranks\n", s->world);
	rc |= perfdb_strbuf_addstr(out, "Group sizes:");
	for (size_t i = 0; i < s->nnd; i++)
		rc |= perfdb_strbuf_addf(out, " %ld", s->nd[i]);
	rc |= perfdb_strbuf_addf(out, "\nSizes: %zu (%lld .. %lld bytes)\nStart time: %s\n", s->nbytes,
				 s->bytes[0], s->bytes[s->nbytes - 1],
				 perfdb_comm_suite_clock(tbuf, sizeof(tbuf), true));
	return rc < 0 ? -PERFDB_ENOMEM : 0;
}

int perfdb_comm_suite_summary_text(const struct perfdb_comm_suite *s,
				   const struct perfdb_comm_suite_result *r, struct perfdb_strbuf *out)
{
	char tbuf[64];
	int rc = perfdb_strbuf_addf(out, "\n=== Collection complete: %zu of %zu launches succeeded ===\n"
				    "End time: %s\n", r->nlaunch - r->nfailed, s->nlaunch,
				    perfdb_comm_suite_clock(tbuf, sizeof(tbuf), true));
	for (size_t i = 0; i < r->ntables; i++)
		if (r->tables[i].rows < 0)
			rc |= perfdb_strbuf_addf(out, "  %-24s unreadable\n", r->tables[i].file);
		else
			rc |= perfdb_strbuf_addf(out, "  %-24s %ld rows\n", r->tables[i].file, r->tables[i].rows);
	return rc < 0 ? -PERFDB_ENOMEM : 0;
}
