/*
 * perfdb grid's words for people (grid.h): the reference's first lines once
 * the tables are found, the lines that say a table's rows were filtered
 * ([MEMORY], [TIME]), and the closing summary.  The JSON form is
 * grid_json.c; the CLI prints either.
 */
#include <inttypes.h>
#include <string.h>

#include "grid/grid.h"
#include "perfdb/op_mapping.h"
#include "perfdb/strbuf.h"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

int perfdb_grid_session_header(const struct perfdb_grid_session *s, long rows, double gb,
			       struct perfdb_strbuf *out)
{
	const struct perfdb_grid_opts *go = &s->go;
	int rc = perfdb_strbuf_addstr(out, "Mode: theory | Target models: ");
	if (!go->models_given) {
		rc |= perfdb_strbuf_addstr(out, "ALL (full grid)\n");
	} else {
		/* as a person writes them, not Python's repr of a list (issue 47) */
		size_t n = s->nids ? s->nids : s->loaded.n;
		for (size_t i = 0; i < n; i++)
			rc |= perfdb_strbuf_addf(out, "%s%s", i ? ", " : "",
						 s->nids ? s->ids[i] : s->loaded.v[i].id);
		rc |= perfdb_strbuf_addch(out, '\n');
	}
	size_t nmap = perfdb_opmap_count(s->opmap);
	if (nmap)
		rc |= perfdb_strbuf_addf(out, "Config: %s | op_mapping: %zu entr%s | ", base_name(s->cfg_path),
					 nmap, nmap == 1 ? "y" : "ies");
	else
		rc |= perfdb_strbuf_addf(out, "Config: %s | op_mapping: none | ", base_name(s->cfg_path));
	if (rows > 0)
		rc |= perfdb_strbuf_addf(out, "max_rows/csv: %ld\n", rows);
	else
		rc |= perfdb_strbuf_addstr(out, "max_rows/csv: unlimited\n");
	if (go->max_hbm_bytes)
		rc |= perfdb_strbuf_addf(out, "HBM budget: %.1f GiB per shape row\n", gb);
	if (go->use_rng && s->seed_chosen)
		rc |= perfdb_strbuf_addf(out, "Seed: %" PRIu64 " (chosen at random; --seed %" PRIu64
					 " repeats this run)\n", go->seed, go->seed);
	else if (go->use_rng)
		rc |= perfdb_strbuf_addf(out, "Seed: %" PRIu64 "\n", go->seed);
	return rc < 0 ? -PERFDB_ENOMEM : 0;
}

/* "<before>N<after>" and the files of status st, one per line; nothing when none has it. */
static int file_list(struct perfdb_strbuf *out, const char *before, const char *after,
		     const struct perfdb_grid_result *res, enum perfdb_grid_file_status st)
{
	size_t n = 0;
	for (size_t i = 0; i < res->nfiles; i++)
		n += res->files[i].status == st;
	if (!n)
		return 0;
	int rc = perfdb_strbuf_addf(out, "%s%zu%s", before, n, after);
	for (size_t i = 0; i < res->nfiles; i++)
		if (res->files[i].status == st)
			rc |= perfdb_strbuf_addf(out, "  - %s\n", base_name(res->files[i].path));
	return rc;
}

int perfdb_grid_session_text(const struct perfdb_grid_session *s, const char *db,
			     struct perfdb_strbuf *out)
{
	const struct perfdb_grid_result *res = &s->res;
	/* the files that get rows: the count a person reads "across N files" as (issue 47) */
	size_t with_rows = 0;
	for (size_t i = 0; i < res->nfiles; i++)
		with_rows += res->files[i].appended > 0;
	int rc = 0;
	if (s->go.dry_run) {
		rc |= perfdb_strbuf_addf(out, "Dry run: nothing written.\n  %-40s %-26s %10s %10s %8s %10s %9s\n",
					 "file", "pattern", "candidates", "sampled", "over HBM", "duplicates",
					 "appended");
		for (size_t i = 0; i < res->nfiles; i++) {
			const struct perfdb_grid_file *f = &res->files[i];
			if (f->pattern)
				rc |= perfdb_strbuf_addf(out, "  %-40s %-26s %10zu %10zu %8zu %10zu %9zu\n",
							 base_name(f->path), f->pattern, f->candidates, f->sampled,
							 f->hbm_filtered, f->duplicates, f->appended);
		}
	}
	rc |= perfdb_strbuf_addf(out, "%s %zu rows to %zu of the %zu CSV files under %s.\n",
				 s->go.dry_run ? "Would append" : "Appended", res->appended, with_rows,
				 res->nfiles, db);
	rc |= file_list(out, "Skipped ", " files (no theory generator):\n", res, PERFDB_GRID_FILE_NO_GENERATOR);
	rc |= file_list(out, "Skipped ", " files (no template row: no data row or no 'Input Shapes' column):\n",
			res, PERFDB_GRID_FILE_NO_TEMPLATE);
	rc |= file_list(out, "", " files got 0 new rows (every candidate already present or over the HBM "
			"budget):\n", res, PERFDB_GRID_FILE_NO_NEW_ROWS);
	return rc < 0 ? -PERFDB_ENOMEM : 0;
}

/* format_bytes of memory_estimator.py */
static int add_bytes(struct perfdb_strbuf *out, uint64_t n)
{
	if (n >= (1ull << 30))
		return perfdb_strbuf_addf(out, "%.2f GiB", (double)n / 1073741824.0);
	if (n >= (1ull << 20))
		return perfdb_strbuf_addf(out, "%.2f MiB", (double)n / 1048576.0);
	if (n >= 1024)
		return perfdb_strbuf_addf(out, "%.2f KiB", (double)n / 1024.0);
	return perfdb_strbuf_addf(out, "%" PRIu64 " B", n);
}

int perfdb_grid_memory_text(const char *file, size_t filtered, size_t total, uint64_t budget,
			    struct perfdb_strbuf *out)
{
	int rc = perfdb_strbuf_addf(out, "[MEMORY] %s: filtered %zu/%zu rows exceeding ", base_name(file),
				    filtered, total);
	rc |= add_bytes(out, budget);
	rc |= perfdb_strbuf_addstr(out, " HBM budget\n");
	return rc < 0 ? -PERFDB_ENOMEM : 0;
}

int perfdb_grid_slow_text(const char *file, const char *device, size_t filtered, size_t total,
			  double max_row_s, struct perfdb_strbuf *out)
{
	int rc = perfdb_strbuf_addf(out, "[TIME] %s: filtered %zu/%zu rows whose replay on %s would exceed %g s "
				    "(a warm-up and 30 samples at its peaks)\n", base_name(file), filtered, total,
				    device, max_row_s);
	return rc < 0 ? -PERFDB_ENOMEM : 0;
}
