/*
 * What a native run says before writeback (native_run.h
 * perfdb_native_notes): failed and contended rows, the tables no replay
 * selects, the peaks measured, the journals resumed, and how it ended.
 * One bracketed tag per line, as docs/replay.md lists them; the CLI prints
 * the text on stderr.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "perfdb/strbuf.h"
#include "replay/native_run.h"

struct notes {
	struct perfdb_strbuf *out;
	int oom;
};

static void say(struct notes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct notes *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (perfdb_strbuf_vaddf(n->out, fmt, ap) < 0)
		n->oom = 1;
	va_end(ap);
}

int perfdb_native_notes(const struct perfdb_native_run *run, struct perfdb_strbuf *out)
{
	struct notes n = { .out = out };
	const struct perfdb_engine_result *res = &run->res;
	for (size_t i = 0; i < res->nrows; i++)
		if (res->rows[i].status == PERFDB_ENGINE_FAILED)
			say(&n, "[FAILED] %s:%zu: %s\n", res->rows[i].table, res->rows[i].line,
				res->rows[i].reason);
	if (res->nagain && perfdb_replay_again_note(res->nagain, res->nagain_written, out) < 0)
		n.oom = 1;
	for (size_t i = 0; i < res->nrows; i++)
		if (res->rows[i].status == PERFDB_ENGINE_CONTENDED) {
			const char *why = res->rows[i].reason ? res->rows[i].reason : "";
			if (strncmp(why, "contended: ", 11) == 0)
				why += 11;
			say(&n, "[CONTENDED] %s:%zu: not written: %s\n", res->rows[i].table, res->rows[i].line, why);
		}
	if (res->ncontended)
		say(&n, "[CONTENDED] %zu %s left unwritten; --update-mode missing-only measures %s again\n",
			res->ncontended, res->ncontended == 1 ? "row" : "rows", res->ncontended == 1 ? "it" : "them");
	if (run->st.nunreplayed) {
		size_t rows = 0;
		for (size_t i = 0; i < run->st.nunreplayed; i++)
			rows += run->st.unreplayed[i].rows;
		say(&n, "[NOT REPLAYED] %zu %s (%zu %s) that no replay selects:", run->st.nunreplayed,
			run->st.nunreplayed == 1 ? "table" : "tables", rows, rows == 1 ? "row" : "rows");
		for (size_t i = 0; i < run->st.nunreplayed && i < 8; i++)
			say(&n, "%s %s (%zu)", i ? "," : "", run->st.unreplayed[i].table,
				run->st.unreplayed[i].rows);
		if (run->st.nunreplayed > 8)
			say(&n, " and %zu more", run->st.nunreplayed - 8);
		say(&n, "; the status file says why\n");
	}
	if (res->absent)
		say(&n, "[NO TABLE] --ops %s: no table under %s\n", res->absent, run->dir.buf);
	if (res->nrows && !res->nok && !res->nfailed && !res->ncontended && !res->interrupted) {
		struct perfdb_strbuf why = PERFDB_STRBUF_INIT;
		if (perfdb_native_skip_reasons(res, &why) == 0)
			say(&n, "[NOTHING MEASURED] every row was skipped: %s\n", why.buf ? why.buf : "");
		perfdb_strbuf_release(&why);
	}
	if (run->peaks_file[0]) {
		const struct perfdb_device *d = &run->peaks;
		say(&n, "[PEAKS] %s: memory %.1f GB/s; GEMM fp32 %.0f, bf16 %.0f, fp16 %.0f GFLOP/s "
			"(0: not measured); recorded in %s for the report's roofline\n", d->name,
			d->memory_bandwidth / 1e9, d->mma_flops[PERFDB_PEAK_FP32] / 1e9,
			d->mma_flops[PERFDB_PEAK_BF16] / 1e9, d->mma_flops[PERFDB_PEAK_FP16] / 1e9, run->peaks_file);
	}
	if (res->nresumed) {
		say(&n, "[RESUME] %zu rows taken from %s", res->nresumed,
			run->nresumed_from ? run->resumed_from[0] : run->journal);
		if (run->nresumed_from > 1)
			say(&n, " and %zu other killed runs' journals", run->nresumed_from - 1);
		say(&n, "\n");
	}
	if (res->interrupted)
		say(&n, "[INTERRUPTED] writing back the rows measured so far\n");
	else if (res->stopped)
		say(&n, "[STOP] --fail-fast: stopped at the first failure\n");
	return n.oom ? -PERFDB_ENOMEM : 0;
}
