/*
 * The grid stage end to end (src/grid/grid.h perfdb_grid_run;
 * docs/spec/grid.md §1, §4, §7 and Decisions 1, 2, 7, 8).
 *
 * Two phases.  Phase 1, under the database lock: every routed table is
 * read, its new rows built and its new file image kept in memory; any
 * error (a malformed table, an expression that divides by zero) ends the
 * run with every table untouched.  Phase 2 replaces the changed tables,
 * each atomically (perfdb_file_write_atomic).  A dry run stops after phase
 * 1 and takes no lock.
 *
 * --rows N: the candidates of a table are counted first; when there are
 * more than N, N of them are chosen (prng.c) and built in generation order;
 * then the HBM filter and the dedupe run, so at most N rows are appended.
 */
#include "grid_internal.h"
#include "perfdb/device.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfdb/fsio.h"
#include "perfdb/lock.h"
#include "perfdb/schema.h"

uint64_t perfdb_grid_hbm_budget(double gb)
{
	if (!(gb > 0))
		return 0;
	double b = gb * 1073741824.0;
	if (b >= 9.2e18)
		return UINT64_MAX;
	return (uint64_t)b;   /* int(gb * 1024**3) */
}

void perfdb_grid_result_release(struct perfdb_grid_result *r)
{
	for (size_t i = 0; i < r->nfiles; i++) {
		free(r->files[i].path);
		free(r->files[i].kernel);
		for (size_t k = 0; k < r->files[i].ncols_added; k++)
			free(r->files[i].cols_added[k]);
		free(r->files[i].cols_added);
	}
	free(r->files);
	memset(r, 0, sizeof(*r));
}

/* ---- listing ------------------------------------------------------------------ */

struct list {
	char **v;
	size_t n, cap;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_add(struct list *l, const char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -PERFDB_ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(s)))
		return -PERFDB_ENOMEM;
	l->n++;
	return 0;
}

static void list_release(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Sorted depth-first walk = the reference's sorted(rglob("*.csv")). */
static int walk(const char *dir, struct list *out, int depth, struct perfdb_err *err)
{
	if (depth > 64)
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return perfdb_err_errno(err, errno, "cannot read directory '%s'", dir);
	struct list names = { 0 };
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d))) {
		/* hidden entries (the lock, temp files) and reports/ are not tables */
		if (de->d_name[0] == '.' || strcmp(de->d_name, "reports") == 0)
			continue;
		rc = list_add(&names, de->d_name);
	}
	closedir(d);
	if (rc < 0) {
		list_release(&names);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	qsort(names.v, names.n, sizeof(*names.v), cmp_str);
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names.v[i]);
		/* lstat: a link is not followed, so the walk stays inside the
		 * database and cannot loop; links, FIFOs and devices are no tables */
		struct stat st;
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			rc = walk(path, out, depth + 1, err);
		else if (S_ISREG(st.st_mode) && ends_with(names.v[i], ".csv") &&
			 !strstr(names.v[i], ".tmp.csv"))
			rc = list_add(out, path) < 0 ? perfdb_err_set(err, PERFDB_ENOMEM,
								       "out of memory") : 0;
	}
	list_release(&names);
	return rc;
}

/* ---- one table ------------------------------------------------------------------ */

struct build {
	struct grid_file *f;
	const bool *sel;            /* NULL: every candidate */
	size_t limit;               /* without sel: at most this many (0 = all) */
	size_t index;
	size_t count;
};

static int emit_count(void *arg, const struct grid_cand *c, struct perfdb_err *err)
{
	(void)c;
	(void)err;
	((struct build *)arg)->count++;
	return 0;
}

static int emit_build(void *arg, const struct grid_cand *c, struct perfdb_err *err)
{
	struct build *b = arg;
	size_t i = b->index++;
	if (b->sel ? !b->sel[i] : (b->limit && i >= b->limit))
		return 0;
	return grid_file_add(b->f, c, err);
}

/* Combinations of one template pattern walked in full; above this, --rows N
 * draws its candidates by combination index (docs/grid.md "Bounded work"). */
#define GRID_ENUM_CAP 10000000u
/* At most this many rows are drawn from such a product. */
#define GRID_SAMPLE_ROWS_CAP 1000000u

/* The set of combination indices drawn so far (open addressing, grows). */
struct drawn {
	uint64_t *v;   /* 0 = free; index i stored as i + 1 */
	size_t cap, n;
};

/* 1 if i was new (and is now in), 0 if drawn before, <0 out of memory */
static int drawn_add(struct drawn *d, uint64_t i)
{
	if (2 * (d->n + 1) > d->cap) {
		size_t nc = d->cap ? 2 * d->cap : 1024;
		uint64_t *nv = calloc(nc, sizeof(*nv));
		if (!nv)
			return -PERFDB_ENOMEM;
		for (size_t k = 0; k < d->cap; k++) {
			if (!d->v[k])
				continue;
			size_t h = (size_t)((d->v[k] * 0x9E3779B97F4A7C15ull) >> 17) & (nc - 1);
			while (nv[h])
				h = (h + 1) & (nc - 1);
			nv[h] = d->v[k];
		}
		free(d->v);
		d->v = nv;
		d->cap = nc;
	}
	uint64_t key = i + 1;
	size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (d->cap - 1);
	while (d->v[h]) {
		if (d->v[h] == key)
			return 0;
		h = (h + 1) & (d->cap - 1);
	}
	d->v[h] = key;
	d->n++;
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * A template product above GRID_ENUM_CAP is never walked: --rows N draws
 * combination indices uniformly without replacement (the PRNG of
 * docs/grid.md; without it, indices 0, 1, 2, ...), keeps those that pass
 * the constraints until N are found, and builds them in generation order;
 * that is a uniform sample of the candidates, as the small path's.  The
 * draws are bounded (1,000,000 + 4 N); --rows 0 on such a product is
 * refused.  *done = 1 when the table was handled here.
 */
static int sample_big(const struct perfdb_grid_opts *o, const struct grid_gen_ctx *g,
		      struct grid_rng *rng, struct perfdb_grid_file *rf, struct build *b,
		      int *done, struct perfdb_err *err)
{
	*done = 0;
	if (g->p->kind != GRID_KIND_TEMPLATE)
		return 0;
	struct grid_tmpl *m;
	PERFDB_TRY(grid_tmpl_open(g, &m, err));
	bool ovf;
	uint64_t P = grid_tmpl_combinations(m, &ovf);
	if (!ovf && P <= GRID_ENUM_CAP) {
		grid_tmpl_free(m);
		return 0;
	}
	*done = 1;
	rf->candidates = P;   /* combinations, before the constraints */
	if (o->rows == 0 || o->rows > GRID_SAMPLE_ROWS_CAP) {
		grid_tmpl_free(m);
		return perfdb_err_at(err, PERFDB_EINVAL, g->cfg->path, g->p->line, 0,
			"pattern '%s' (%s): %s%" PRIu64 " combinations of its iterators, more than "
			"the %u that are enumerated; sample them with --rows N (at most %u)",
			g->p->name, rf->kernel, ovf ? "over " : "", P, GRID_ENUM_CAP,
			GRID_SAMPLE_ROWS_CAP);
	}
	size_t want = (size_t)o->rows, max_draws = 1000000 + 4 * want, ngot = 0, draws = 0;
	uint64_t *got = malloc(want * sizeof(*got));
	struct drawn d = { 0 };
	int rc = got ? 0 : perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	while (rc == 0 && ngot < want && draws < max_draws && draws < P) {
		uint64_t i = draws++;
		if (o->use_rng) {
			i = grid_rng_below(rng, P);
			int fresh = drawn_add(&d, i);
			if (fresh < 0)
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			if (fresh <= 0)
				continue;
		}
		int pass = grid_tmpl_at(m, i, NULL, NULL, err);
		if (pass < 0)
			rc = pass;
		else if (pass)
			got[ngot++] = i;
	}
	if (rc == 0 && ngot < want)
		rc = perfdb_err_at(err, PERFDB_EINVAL, g->cfg->path, g->p->line, 0,
			"pattern '%s' (%s): %zu of %zu candidates found in %zu draws among %" PRIu64
			" combinations: its constraints pass too few to sample; narrow its iterators",
			g->p->name, rf->kernel, ngot, want, draws, P);
	if (rc == 0)
		qsort(got, ngot, sizeof(*got), cmp_u64);
	for (size_t k = 0; rc == 0 && k < ngot; k++)
		rc = grid_tmpl_at(m, got[k], emit_build, b, err);
	free(d.v);
	free(got);
	grid_tmpl_free(m);
	return rc;
}

static char *stem_of(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (n > 4 && strcmp(base + n - 4, ".csv") == 0)
		n -= 4;
	return strndup(base, n);
}

struct image {
	size_t file;
	struct perfdb_strbuf data;
};

static int one_table(const struct perfdb_grid_opts *o, const struct grid_gen_ctx *g,
		     struct grid_rng *rng, struct perfdb_grid_file *rf, struct image *img,
		     bool *have_image, struct perfdb_err *err)
{
	struct perfdb_strbuf orig = PERFDB_STRBUF_INIT;
	struct perfdb_table t;
	struct grid_file *f = NULL;
	bool *sel = NULL;
	perfdb_table_init(&t);
	int rc = perfdb_file_read_all(rf->path, &orig, err);
	if (rc == 0)
		rc = perfdb_table_load_mem(&t, rf->path, orig.buf, orig.len, err);
	if (rc < 0)
		goto out;
	if (perfdb_table_col(&t, PERFDB_COL_IN_SHAPES) < 0 || t.nrows == 0) {
		rf->status = PERFDB_GRID_FILE_NO_TEMPLATE;
		goto out;
	}
	rc = grid_file_new(&f, &t, rf->kernel, grid_pattern_extra_cols(g->p), o->max_hbm_bytes,
			   err);
	if (rc < 0)
		goto out;
	const struct perfdb_device *dev = o->reg ? perfdb_device_of_dir(o->reg, rf->path) : NULL;
	grid_file_set_time_limit(f, dev, 32, o->max_row_s);
	struct build b = { .f = f };
	int sampled = 0;
	rc = sample_big(o, g, rng, rf, &b, &sampled, err);
	if (rc < 0)
		goto out;
	if (sampled)
		goto built;
	if (o->rows > 0) {
		rc = grid_generate(g, emit_count, &b, err);
		if (rc < 0)
			goto out;
		rf->candidates = b.count;
		if (b.count > o->rows) {
			if (o->use_rng) {
				sel = malloc(b.count * sizeof(*sel));
				if (!sel || grid_rng_sample(rng, b.count, o->rows, sel) < 0) {
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
					goto out;
				}
				b.sel = sel;
			} else {
				b.limit = o->rows;
			}
		}
	}
	b.count = 0;
	rc = grid_generate(g, emit_build, &b, err);
	if (rc < 0)
		goto out;
	if (o->rows == 0)
		rf->candidates = b.index;
built:;
	const struct grid_file_stats *st = grid_file_stats(f);
	rf->sampled = st->considered;
	rf->hbm_filtered = st->hbm_filtered;
	rf->time_filtered = st->time_filtered;
	rf->duplicates = st->duplicates;
	rf->appended = st->kept;
	rf->status = st->kept ? PERFDB_GRID_FILE_APPENDED : PERFDB_GRID_FILE_NO_NEW_ROWS;
	if (st->hbm_filtered && o->memory)
		o->memory(o->ctx, rf->path, st->hbm_filtered, st->considered);
	if (st->time_filtered && o->slow)
		o->slow(o->ctx, rf->path, dev ? dev->name : "?", st->time_filtered, st->considered);
	if (st->kept) {
		const char *const *names;
		size_t n = grid_file_added_cols(f, &names);
		if (n) {
			rf->cols_added = calloc(n, sizeof(char *));
			if (!rf->cols_added) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				goto out;
			}
			for (size_t i = 0; i < n; i++) {
				if (!(rf->cols_added[i] = strdup(names[i]))) {
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
					goto out;
				}
				rf->ncols_added = i + 1;
			}
		}
		if (!o->dry_run) {
			perfdb_strbuf_init(&img->data);
			rc = grid_file_image(f, orig.buf, orig.len, &img->data, err);
			*have_image = rc == 0;
			if (rc < 0)
				perfdb_strbuf_release(&img->data);
		}
	}
out:
	free(sel);
	grid_file_free(f);
	perfdb_table_release(&t);
	perfdb_strbuf_release(&orig);
	return rc;
}

int perfdb_grid_run(const struct perfdb_grid_opts *o, struct perfdb_grid_result *res,
		    struct perfdb_err *err)
{
	memset(res, 0, sizeof(*res));
	if (!perfdb_is_dir(o->db_dir))
		return perfdb_err_set(err, PERFDB_ENOENT, "Data directory does not exist: %s",
				      o->db_dir);
	/* the lock before the listing: a table another writer creates while we
	 * wait is then seen, not missed (a dry run writes nothing, locks nothing) */
	struct perfdb_lock lock = PERFDB_LOCK_INIT;
	int rc = o->dry_run ? 0 : perfdb_lock_acquire(&lock, o->db_dir, o->lock_timeout, err);
	if (rc < 0)
		return rc;
	struct list csvs = { 0 };
	rc = walk(o->db_dir, &csvs, 0, err);
	if (rc == 0 && csvs.n == 0)
		rc = perfdb_err_set(err, PERFDB_ENOENT, "No CSV files found under: %s", o->db_dir);
	struct image *imgs = NULL;
	if (rc == 0) {
		res->files = calloc(csvs.n, sizeof(*res->files));
		imgs = calloc(csvs.n, sizeof(*imgs));
		if (!res->files || !imgs)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	if (rc < 0) {
		free(imgs);
		list_release(&csvs);
		perfdb_lock_release(&lock);
		return rc;
	}
	int64_t(*pairs)[2] = NULL;
	size_t npairs = 0, nimg = 0;
	if (rc == 0 && o->start)
		o->start(o->ctx);
	if (rc == 0 && o->models_given)
		rc = perfdb_grid_nk_pairs(o->models, &pairs, &npairs, err);
	struct grid_rng rng;
	grid_rng_seed(&rng, o->seed);
	/* progress in bytes of the tables gone through */
	size_t total_bytes = 0, done_bytes = 0;
	size_t *sizes = calloc(csvs.n, sizeof(*sizes));
	if (!sizes && rc == 0)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; sizes && i < csvs.n; i++) {
		struct stat st;
		sizes[i] = stat(csvs.v[i], &st) == 0 ? (size_t)st.st_size : 0;
		total_bytes += sizes[i];
	}
	for (size_t i = 0; rc == 0 && i < csvs.n; i++) {
		struct perfdb_grid_file *rf = &res->files[res->nfiles++];
		rf->path = csvs.v[i];
		csvs.v[i] = NULL;
		if (!(rf->kernel = stem_of(rf->path))) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		const char *pname;
		if (perfdb_grid_route(o->cfg, o->opmap, rf->kernel, &pname) !=
		    PERFDB_GRID_ROUTE_PATTERN) {
			rf->status = PERFDB_GRID_FILE_NO_GENERATOR;
		} else {
			const struct grid_pattern *p = grid_config_pattern(o->cfg, pname);
			rf->pattern = p->name;
			struct grid_gen_ctx g = {
				.cfg = o->cfg, .p = p, .models = o->models,
				.models_given = o->models_given,
				.pairs = (const int64_t(*)[2])pairs, .npairs = npairs,
			};
			bool have = false;
			rc = one_table(o, &g, &rng, rf, &imgs[nimg], &have, err);
			if (have) {
				imgs[nimg].file = i;
				nimg++;
			}
			res->appended += rf->appended;
		}
		done_bytes += sizes[i];
		if (o->progress)
			o->progress(o->ctx, done_bytes, total_bytes);
	}
	/* phase 2: every input was good; replace the changed tables */
	for (size_t k = 0; rc == 0 && k < nimg; k++) {
		struct perfdb_grid_file *rf = &res->files[imgs[k].file];
		rc = perfdb_file_write_atomic(rf->path, imgs[k].data.buf, imgs[k].data.len, err);
		if (rc == 0) {
			rf->written = true;
			res->written++;
		}
	}
	for (size_t k = 0; k < nimg; k++)
		perfdb_strbuf_release(&imgs[k].data);
	free(imgs);
	free(sizes);
	free(pairs);
	perfdb_lock_release(&lock);
	list_release(&csvs);
	return rc;
}
