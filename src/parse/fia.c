/*
 * FIA runtime metadata (src/parse/fia.h; docs/spec/parse.md §5).
 *
 * Values written per key: source_profile = the kernel file's parent
 * directory name; actual_seq_lengths_shape, actual_seq_lengths_kv_shape and
 * block_table_shape = input slots 5, 6 and 14 of the operator row's Input
 * Shapes (the kernel row's when the operator row has none), as
 * comma-joined integers; metadata_completeness = profile_shapes_only; every
 * other field empty (the reference's backfill tool no longer exists).  A
 * slot that is not a list of integers leaves its field empty and warns
 * (Decision 8) instead of aborting the run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/csv.h"
#include "parse/fia.h"
#include "perfdb/schema.h"
#include "perfdb/stats.h"
#include "perfdb/strbuf.h"
#include "perfdb/table.h"

const char *const perfdb_fia_columns[PERFDB_FIA_NCOLS] = {
	PERFDB_COL_RT_SOURCE_PROFILE, PERFDB_COL_RT_SEQ_SHAPE,
	PERFDB_COL_RT_SEQ_VALUES, PERFDB_COL_RT_SEQ_KV_SHAPE,
	PERFDB_COL_RT_SEQ_KV_VALUES, PERFDB_COL_RT_AVG_SEQ_LEN,
	PERFDB_COL_RT_BLOCK_TABLE_SHAPE, PERFDB_COL_RT_BLOCK_TABLE_VALID,
	PERFDB_COL_RT_NUM_HEADS, PERFDB_COL_RT_NUM_KV_HEADS, PERFDB_COL_RT_SPARSE_MODE,
	PERFDB_COL_RT_INPUT_LAYOUT, PERFDB_COL_RT_BLOCK_SIZE, PERFDB_COL_RT_ATTN_STATE,
	PERFDB_COL_RT_KV_CACHE_MODE, PERFDB_COL_RT_COMPLETENESS,
};

/* "in\x1fout" -> first row index within the file */
struct perfdb_fia_file {
	struct perfdb_sig_index first;
	size_t count;
	char **kernel_in;     /* Input Shapes of each first row, by key entry order */
};

int perfdb_fia_file_new(struct perfdb_fia_file **out, struct perfdb_err *err)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	perfdb_sig_index_init(&(*out)->first);
	return 0;
}

void perfdb_fia_file_free(struct perfdb_fia_file *f)
{
	if (!f)
		return;
	perfdb_sig_index_release(&f->first);
	free(f);
}

static int make_key(struct perfdb_strbuf *sb, const char *in, size_t il, const char *out,
		    size_t ol)
{
	perfdb_strbuf_reset(sb);
	PERFDB_TRY(perfdb_strbuf_add(sb, in, il));
	PERFDB_TRY(perfdb_strbuf_addch(sb, '\x1f'));
	return perfdb_strbuf_add(sb, out, ol);
}

int perfdb_fia_file_row(struct perfdb_fia_file *f, struct perfdb_span in_shapes,
			struct perfdb_span out_shapes, struct perfdb_err *err)
{
	struct perfdb_strbuf key = PERFDB_STRBUF_INIT;
	int rc = make_key(&key, in_shapes.p, in_shapes.len, out_shapes.p, out_shapes.len);
	if (rc == 0 && !perfdb_sig_index_find(&f->first, key.buf))
		rc = perfdb_sig_index_add(&f->first, key.buf, f->count);
	perfdb_strbuf_release(&key);
	f->count++;
	return rc < 0 ? perfdb_err_set(err, PERFDB_ENOMEM, "out of memory") : 0;
}

/* ---- global ------------------------------------------------------------ */

struct fia_key {
	char *key;          /* in \x1f out */
	char *dir;          /* kernel file's directory */
	size_t index;       /* FIA row index within the directory */
	const char *vals[PERFDB_FIA_NCOLS];
	char *store;        /* owns the value strings */
};

struct fia_dir {
	char *dir;
	size_t rows;        /* FIA kernel rows in the directory */
};

struct perfdb_fia {
	struct fia_key *k;
	size_t nk, capk;
	struct perfdb_sig_index ix;   /* key -> index in k */
	struct fia_dir *d;
	size_t nd, capd;
};

int perfdb_fia_new(struct perfdb_fia **out, struct perfdb_err *err)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	perfdb_sig_index_init(&(*out)->ix);
	return 0;
}

void perfdb_fia_free(struct perfdb_fia *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nk; i++) {
		free(x->k[i].key);
		free(x->k[i].dir);
		free(x->k[i].store);
	}
	for (size_t i = 0; i < x->nd; i++)
		free(x->d[i].dir);
	free(x->k);
	free(x->d);
	perfdb_sig_index_release(&x->ix);
	free(x);
}

static char *dirname_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static struct fia_dir *get_dir(struct perfdb_fia *x, const char *dir)
{
	for (size_t i = 0; i < x->nd; i++)
		if (strcmp(x->d[i].dir, dir) == 0)
			return &x->d[i];
	if (x->nd == x->capd) {
		size_t cap = x->capd ? x->capd * 2 : 8;
		struct fia_dir *nd = realloc(x->d, cap * sizeof(*nd));
		if (!nd)
			return NULL;
		x->d = nd;
		x->capd = cap;
	}
	x->d[x->nd].dir = strdup(dir);
	x->d[x->nd].rows = 0;
	return x->d[x->nd].dir ? &x->d[x->nd++] : NULL;
}

int perfdb_fia_add_file(struct perfdb_fia *x, const char *kernel_path,
			const struct perfdb_fia_file *f, struct perfdb_err *err)
{
	if (!f->count)
		return 0;
	char *dir = dirname_of(kernel_path);
	struct fia_dir *d = dir ? get_dir(x, dir) : NULL;
	if (!d) {
		free(dir);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	/* keys in first-row order, so the earliest file and row win */
	size_t n = f->first.n, j = 0;
	struct perfdb_sig_index_entry **order = malloc((n ? n : 1) * sizeof(*order));
	if (!order) {
		free(dir);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < f->first.cap; i++)
		if (f->first.slots[i].sig)
			order[j++] = &f->first.slots[i];
	for (size_t a = 1; a < n; a++)
		for (size_t b = a; b > 0 && order[b - 1]->row > order[b]->row; b--) {
			struct perfdb_sig_index_entry *t = order[b];
			order[b] = order[b - 1];
			order[b - 1] = t;
		}
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (perfdb_sig_index_find(&x->ix, order[i]->sig))
			continue;
		if (x->nk == x->capk) {
			size_t cap = x->capk ? x->capk * 2 : 16;
			struct fia_key *nk = realloc(x->k, cap * sizeof(*nk));
			if (!nk) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			x->k = nk;
			x->capk = cap;
		}
		struct fia_key *k = &x->k[x->nk];
		memset(k, 0, sizeof(*k));
		k->key = strdup(order[i]->sig);
		k->dir = strdup(dir);
		k->index = d->rows + order[i]->row;
		if (!k->key || !k->dir || perfdb_sig_index_add(&x->ix, k->key, x->nk) < 0) {
			free(k->key);
			free(k->dir);
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		x->nk++;
	}
	d->rows += f->count;
	free(order);
	free(dir);
	return rc;
}

/* lowercased with non-alphanumerics removed, contains "fusedinferattentionscore" */
static int mentions_fia(const char *p, size_t len)
{
	static const char want[] = "fusedinferattentionscore";
	char buf[512];
	size_t n = 0;
	for (size_t i = 0; i < len && n < sizeof(buf) - 1; i++) {
		char c = p[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			buf[n++] = c;
	}
	buf[n] = '\0';
	return strstr(buf, want) != NULL;
}

/* One slot as comma-joined integers; 0 ok, -1 not integers. */
static int slot_text(const struct perfdb_slots *slots, size_t i, struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	if (i >= slots->n)
		return 0;
	int64_t dims[PERFDB_SHAPE_MAX_DIMS];
	size_t nd;
	struct perfdb_err e;
	if (perfdb_shape_parse_dims(slots->v[i], dims, PERFDB_SHAPE_MAX_DIMS, &nd, &e) < 0)
		return -1;
	for (size_t d = 0; d < nd; d++)
		perfdb_strbuf_addf(out, "%s%lld", d ? "," : "", (long long)dims[d]);
	return 0;
}

static int fill_values(struct fia_key *k, const char *source_text,
		       void (*warn)(void *, const char *), void *wctx, struct perfdb_err *err)
{
	static const size_t slot_of[3] = { 5, 6, 14 };
	static const int col_of[3] = { 1, 3, 6 };
	struct perfdb_slots slots;
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT, all = PERFDB_STRBUF_INIT;
	perfdb_slots_init(&slots);
	struct perfdb_span cell = { source_text, strlen(source_text) };
	int rc = perfdb_shape_split_slots(cell, &slots);
	const char *base = strrchr(k->dir, '/');
	base = base ? base + 1 : k->dir;
	size_t off[PERFDB_FIA_NCOLS];
	for (int c = 0; c < PERFDB_FIA_NCOLS; c++)
		off[c] = (size_t)-1;
	/* all values go into one buffer; offsets are fixed up at the end */
	off[0] = all.len;
	rc = rc ? rc : perfdb_strbuf_add(&all, base, strlen(base) + 1);
	for (int s = 0; s < 3 && rc == 0; s++) {
		if (slot_text(&slots, slot_of[s], &sb) < 0) {
			char msg[600];
			snprintf(msg, sizeof(msg),
				 "FIA %s left empty: input slot %zu is not a list of integers in '%.300s'",
				 perfdb_fia_columns[col_of[s]], slot_of[s], source_text);
			if (warn)
				warn(wctx, msg);
			perfdb_strbuf_reset(&sb);
		}
		off[col_of[s]] = all.len;
		rc = perfdb_strbuf_add(&all, sb.buf, sb.len + 1);
	}
	off[15] = all.len;
	if (rc == 0)
		rc = perfdb_strbuf_add(&all, "profile_shapes_only", sizeof("profile_shapes_only"));
	if (rc == 0) {
		k->store = perfdb_strbuf_detach(&all, NULL);
		for (int c = 0; c < PERFDB_FIA_NCOLS; c++)
			k->vals[c] = off[c] == (size_t)-1 ? "" : k->store + off[c];
	}
	perfdb_slots_release(&slots);
	perfdb_strbuf_release(&sb);
	perfdb_strbuf_release(&all);
	return rc < 0 ? perfdb_err_set(err, PERFDB_ENOMEM, "out of memory") : 0;
}

/* FIA operator rows of one operator_details.csv: their Input Shapes at the
 * wanted indices (NULL = not wanted), and the total count. */
static int read_operator_rows(const char *path, char **want_in, size_t nwant, size_t *count,
			      struct perfdb_err *err)
{
	struct perfdb_csv_reader *r;
	PERFDB_TRY(perfdb_csv_open(&r, path, PERFDB_CSV_TRIM | PERFDB_CSV_UTF8, err));
	struct perfdb_csv_row row;
	int rc = perfdb_csv_next(r, &row, err);
	if (rc <= 0) {
		perfdb_csv_close(r);
		*count = 0;
		return rc;
	}
	static const char *const name_cols[] = { "Type", "Name", "Op Type", "Op Name",
						 "Operator Type", "Operator Name" };
	long nc[6], in_col = -1, out_col = -1;
	for (int c = 0; c < 6; c++) {
		nc[c] = -1;
		for (size_t i = 0; i < row.n; i++)
			if (row.f[i].len == strlen(name_cols[c]) &&
			    memcmp(row.f[i].p, name_cols[c], row.f[i].len) == 0)
				nc[c] = (long)i;
	}
	for (size_t i = 0; i < row.n; i++) {
		if (row.f[i].len == sizeof(PERFDB_COL_IN_SHAPES) - 1 &&
		    memcmp(row.f[i].p, PERFDB_COL_IN_SHAPES, row.f[i].len) == 0)
			in_col = (long)i;
		if (row.f[i].len == sizeof(PERFDB_COL_OUT_SHAPES) - 1 &&
		    memcmp(row.f[i].p, PERFDB_COL_OUT_SHAPES, row.f[i].len) == 0)
			out_col = (long)i;
	}
	size_t n = 0;
	while ((rc = perfdb_csv_next(r, &row, err)) > 0) {
		int fia = 0;
		for (int c = 0; c < 6 && !fia; c++)
			if (nc[c] >= 0 && (size_t)nc[c] < row.n)
				fia = mentions_fia(row.f[nc[c]].p, row.f[nc[c]].len);
		if (!fia || in_col < 0 || out_col < 0 || (size_t)in_col >= row.n ||
		    (size_t)out_col >= row.n || !row.f[in_col].len || !row.f[out_col].len)
			continue;
		if (n < nwant && want_in[n] == (char *)1) {
			want_in[n] = strndup(row.f[in_col].p, row.f[in_col].len);
			if (!want_in[n]) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
		}
		n++;
	}
	perfdb_csv_close(r);
	*count = n;
	return rc < 0 ? rc : 0;
}

int perfdb_fia_resolve(struct perfdb_fia *x, char *const *operator_details, size_t nops,
		       void (*warn)(void *ctx, const char *msg), void *wctx,
		       struct perfdb_err *err)
{
	int rc = 0;
	for (size_t di = 0; di < x->nd && rc == 0; di++) {
		struct fia_dir *d = &x->d[di];
		const char *ops = NULL;
		for (size_t i = 0; i < nops; i++) {
			char *od = dirname_of(operator_details[i]);
			if (od && strcmp(od, d->dir) == 0)
				ops = operator_details[i];
			free(od);
		}
		/* wanted indices: marked with (char *)1, replaced by the text */
		char **want = calloc(d->rows ? d->rows : 1, sizeof(*want));
		if (!want)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		for (size_t i = 0; i < x->nk; i++)
			if (strcmp(x->k[i].dir, d->dir) == 0 && x->k[i].index < d->rows)
				want[x->k[i].index] = (char *)1;
		size_t nop = 0;
		if (ops)
			rc = read_operator_rows(ops, want, d->rows, &nop, err);
		if (rc == 0 && nop && nop != d->rows && warn) {
			char msg[1200];
			snprintf(msg, sizeof(msg),
				 "FIA kernel/operator row count mismatch under %s: "
				 "kernel_rows=%zu, operator_rows=%zu. Pairing uses row order for the "
				 "shared prefix only.", d->dir, d->rows, nop);
			warn(wctx, msg);
		}
		for (size_t i = 0; i < x->nk && rc == 0; i++) {
			struct fia_key *k = &x->k[i];
			if (strcmp(k->dir, d->dir) != 0)
				continue;
			const char *text = NULL;
			if (k->index < nop && want[k->index] && want[k->index] != (char *)1)
				text = want[k->index];
			if (!text || !*text) {
				/* the kernel row's own Input Shapes: the key up to 0x1f */
				size_t il = strcspn(k->key, "\x1f");
				char *kin = strndup(k->key, il);
				if (!kin) {
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
					break;
				}
				rc = fill_values(k, kin, warn, wctx, err);
				free(kin);
			} else {
				rc = fill_values(k, text, warn, wctx, err);
			}
		}
		for (size_t i = 0; i < d->rows; i++)
			if (want[i] != (char *)1)
				free(want[i]);
		free(want);
	}
	return rc;
}

const char *const *perfdb_fia_lookup(const struct perfdb_fia *x, const char *in_shapes,
				     const char *out_shapes)
{
	struct perfdb_strbuf key = PERFDB_STRBUF_INIT;
	const char *const *res = NULL;
	if (make_key(&key, in_shapes, strlen(in_shapes), out_shapes, strlen(out_shapes)) == 0) {
		const struct perfdb_sig_index_entry *e = perfdb_sig_index_find(&x->ix, key.buf);
		if (e && x->k[e->row].store)
			res = x->k[e->row].vals;
	}
	perfdb_strbuf_release(&key);
	return res;
}

int perfdb_fia_avg_seq_len(const char *values, char *out, size_t cap)
{
	out[0] = '\0';
	double sum = 0;
	size_t n = 0;
	const char *p = values;
	while (*p) {
		size_t len = strcspn(p, ";,");
		const char *s = p, *e = p + len;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e > s) {
			char *end;
			char buf[64];
			if ((size_t)(e - s) >= sizeof(buf))
				return -1;
			memcpy(buf, s, (size_t)(e - s));
			buf[e - s] = '\0';
			long long v = strtoll(buf, &end, 10);
			if (*end)
				return -1;
			sum += (double)v;
			n++;
		}
		p += len;
		if (*p)
			p++;
	}
	if (!n)
		return 0;
	return perfdb_stats_format6(sum / (double)n, out, cap) < 0 ? -1 : 0;
}
