/*
 * Models for the grid stage (docs/spec/grid.md §2, Decision 6): the built-in
 * table of the grid configuration, local HuggingFace config.json files
 * (jansson; the reference's field fallbacks, no network), id resolution
 * and the GEMM (N,K) pairs.
 *
 * config.json fields read (first present wins, JSON null counts as absent):
 *   hidden        hidden_size | d_model                              (> 0)
 *   inter         intermediate_size | 0
 *   heads         num_attention_heads                                (> 0)
 *   kv_heads      num_key_value_heads | multi_query_group_num | heads (> 0)
 *   q/kv lora     q_lora_rank | 0, kv_lora_rank | 0
 *   nope, rope    qk_nope_head_dim | 0, qk_rope_head_dim | rotary_dim | 64
 *   head_dim      MLA: v_head_dim | qk_head_dim | head_dim | 128
 *                 dense: head_dim | kv_channels | hidden / heads
 *   experts       n_routed_experts | num_experts | 0
 *   topk          num_experts_per_tok | top_k | num_experts_per_token | 0
 *   expert inter  moe_intermediate_size | expert_intermediate_size | 0
 *   per card      n_experts_per_card | experts   (0 without experts)
 *   tp            (1, 2, 4, 8, 16); ep (1, then 2, 4, 8 up to experts)
 * A value that is not a non-negative integer is an error naming the file
 * and field; a JSON syntax error names file:line:col.
 */
#include "grid_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfdb/fsio.h"

void grid_normalize_name(const char *s, char *out, size_t outsz)
{
	size_t w = 0;
	for (; *s && w + 1 < outsz; s++) {
		if (*s == '-' || *s == '_' || *s == '.' || *s == '/' || *s == ' ')
			continue;
		out[w++] = (char)tolower((unsigned char)*s);
	}
	out[w] = '\0';
}

bool grid_model_is_mla(const struct perfdb_grid_model *m)
{
	return m->q_lora > 0 || m->kv_lora > 0;
}

bool grid_model_is_moe(const struct perfdb_grid_model *m)
{
	return m->experts > 0;
}

void perfdb_grid_models_init(struct perfdb_grid_models *m)
{
	memset(m, 0, sizeof(*m));
}

static void model_release(struct perfdb_grid_model *m)
{
	free(m->id);
	free(m->key);
	free(m->source);
}

void perfdb_grid_models_release(struct perfdb_grid_models *m)
{
	for (size_t i = 0; i < m->n; i++)
		model_release(&m->v[i]);
	free(m->v);
	perfdb_grid_models_init(m);
}

/* Append a deep copy of src. */
static int models_add(struct perfdb_grid_models *m, const struct perfdb_grid_model *src,
		      struct perfdb_err *err)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 8;
		struct perfdb_grid_model *v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		m->v = v;
		m->cap = cap;
	}
	struct perfdb_grid_model *d = &m->v[m->n];
	*d = *src;
	d->id = strdup(src->id);
	d->key = strdup(src->key);
	d->source = strdup(src->source);
	if (!d->id || !d->key || !d->source) {
		model_release(d);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	m->n++;
	return 0;
}

/* ---- config.json ---------------------------------------------------------------- */

/* First present, non-null field of names; 1 found, 0 absent, <0 error. */
static int field(json_t *root, const char *const *names, int64_t *out, const char *file,
		 struct perfdb_err *err)
{
	for (; *names; names++) {
		json_t *v = json_object_get(root, *names);
		if (!v || json_is_null(v))
			continue;
		double d = json_is_real(v) ? json_real_value(v) : 0.5;
		if (json_is_integer(v)) {
			*out = (int64_t)json_integer_value(v);
		} else if (json_is_real(v) && d >= -9e18 && d <= 9e18 && d == (double)(int64_t)d) {
			*out = (int64_t)d;
		} else {
			return perfdb_err_at(err, PERFDB_EPARSE, file, 0, 0,
					     "field '%s' must be an integer", *names);
		}
		if (*out < 0 || *out > ((int64_t)1 << 40))
			return perfdb_err_at(err, PERFDB_EPARSE, file, 0, 0,
					     "field '%s' is out of range: %lld", *names,
					     (long long)*out);
		return 1;
	}
	return 0;
}

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

int perfdb_grid_model_parse_hf(struct perfdb_grid_models *out, const char *name,
			       const char *id, const char *json, size_t len,
			       const struct perfdb_grid_config *cfg, struct perfdb_err *err)
{
	json_error_t je;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return perfdb_err_at(err, PERFDB_EPARSE, name, (size_t)(je.line > 0 ? je.line : 0),
				     (size_t)(je.column > 0 ? je.column : 0), "malformed JSON: %s",
				     je.text);
	int rc = 0;
	if (!json_is_object(root)) {
		rc = perfdb_err_at(err, PERFDB_EPARSE, name, 1, 1,
				   "a HuggingFace config.json must be a JSON object");
		goto out;
	}
	struct perfdb_grid_model m;
	memset(&m, 0, sizeof(m));
	int64_t v;
	struct { const char *const *names; int64_t *dst; int64_t def; } f[] = {
		{ NAMES("hidden_size", "d_model"), &m.hidden, 0 },
		{ NAMES("intermediate_size"), &m.inter, 0 },
		{ NAMES("num_attention_heads"), &m.heads, 0 },
		{ NAMES("q_lora_rank"), &m.q_lora, 0 },
		{ NAMES("kv_lora_rank"), &m.kv_lora, 0 },
		{ NAMES("qk_nope_head_dim"), &m.nope, 0 },
		{ NAMES("qk_rope_head_dim", "rotary_dim"), &m.rope, 64 },
		{ NAMES("n_routed_experts", "num_experts"), &m.experts, 0 },
		{ NAMES("num_experts_per_tok", "top_k", "num_experts_per_token"), &m.topk, 0 },
		{ NAMES("moe_intermediate_size", "expert_intermediate_size"), &m.expert_inter, 0 },
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		*f[i].dst = f[i].def;
		if ((rc = field(root, f[i].names, f[i].dst, name, err)) < 0)
			goto out;
	}
	if (m.hidden <= 0 || m.heads <= 0) {
		rc = perfdb_err_at(err, PERFDB_EPARSE, name, 0, 0,
				   "config.json needs a positive %s",
				   m.hidden <= 0 ? "hidden_size (or d_model)" : "num_attention_heads");
		goto out;
	}
	m.kv_heads = m.heads;
	if ((rc = field(root, NAMES("num_key_value_heads", "multi_query_group_num"), &m.kv_heads,
			name, err)) < 0)
		goto out;
	if (m.kv_heads <= 0) {
		rc = perfdb_err_at(err, PERFDB_EPARSE, name, 0, 0,
				   "config.json: num_key_value_heads must be positive");
		goto out;
	}
	if (grid_model_is_mla(&m)) {
		m.head_dim = 128;
		rc = field(root, NAMES("v_head_dim", "qk_head_dim", "head_dim"), &m.head_dim, name,
			   err);
	} else {
		m.head_dim = m.hidden / m.heads;   /* int(hidden / heads) */
		rc = field(root, NAMES("head_dim", "kv_channels"), &m.head_dim, name, err);
	}
	if (rc < 0)
		goto out;
	rc = 0;
	if (m.experts > 0) {
		m.experts_per_card = m.experts;
		if ((rc = field(root, NAMES("n_experts_per_card"), &v, name, err)) < 0)
			goto out;
		if (rc == 1)
			m.experts_per_card = v;
		rc = 0;
		m.ep[m.nep++] = 1;
		for (int64_t s = 2; s <= 8; s *= 2)
			if (s <= m.experts)
				m.ep[m.nep++] = s;
	} else {
		m.ep[m.nep++] = 1;
	}
	static const int64_t tp[] = { 1, 2, 4, 8, 16 };
	memcpy(m.tp, tp, sizeof(tp));
	m.ntp = 5;
	/* the scene key: a built-in's key when the id names a built-in model */
	char norm[512], other[512];
	grid_normalize_name(id, norm, sizeof(norm));
	const char *key = norm;
	for (size_t i = 0; cfg && i < cfg->nmodels; i++) {
		grid_normalize_name(cfg->models[i].id, other, sizeof(other));
		if (strcmp(other, norm) == 0)
			key = cfg->models[i].key;
	}
	m.id = (char *)id;
	m.key = (char *)key;
	m.source = (char *)name;
	rc = models_add(out, &m, err);
out:
	json_decref(root);
	return rc;
}

static int load_file(struct perfdb_grid_models *out, const char *file, const char *id,
		     const struct perfdb_grid_config *cfg, struct perfdb_err *err)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	int rc = perfdb_file_read_all(file, &sb, err);
	if (rc == -PERFDB_ENOENT)
		rc = perfdb_err_set(err, PERFDB_ENOENT, "model config '%s' does not exist", file);
	if (rc == 0)
		rc = perfdb_grid_model_parse_hf(out, file, id, sb.buf, sb.len, cfg, err);
	perfdb_strbuf_release(&sb);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int perfdb_grid_models_load_hf(struct perfdb_grid_models *out, const char *path,
			       const struct perfdb_grid_config *cfg, struct perfdb_err *err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return perfdb_err_set(err, PERFDB_ENOENT, "model config '%s' does not exist", path);
	if (!S_ISDIR(st.st_mode))
		return load_file(out, path, path, cfg, err);
	size_t plen = strlen(path);
	while (plen > 1 && path[plen - 1] == '/')
		plen--;
	char file[4096];
	snprintf(file, sizeof(file), "%.*s/config.json", (int)plen, path);
	if (stat(file, &st) == 0) {
		char id[4096];
		snprintf(id, sizeof(id), "%.*s", (int)plen, path);
		return load_file(out, file, id, cfg, err);
	}
	DIR *d = opendir(path);
	if (!d)
		return perfdb_err_errno(err, errno, "cannot open '%s'", path);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char sub[4096];
		snprintf(sub, sizeof(sub), "%.*s/%s/config.json", (int)plen, path, de->d_name);
		if (stat(sub, &st) != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			char **nn = realloc(names, cap * sizeof(*nn));
			if (!nn) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			names = nn;
		}
		if (!(names[n] = strdup(de->d_name))) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		n++;
	}
	closedir(d);
	if (rc == 0 && n == 0)
		rc = perfdb_err_set(err, PERFDB_ENOENT,
				    "no config.json in '%s' or in its subdirectories", path);
	if (rc == 0)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char sub[4200], id[4096];
		snprintf(id, sizeof(id), "%.*s/%s", (int)plen, path, names[i]);
		snprintf(sub, sizeof(sub), "%s/config.json", id);
		rc = load_file(out, sub, id, cfg, err);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* ---- resolution --------------------------------------------------------------- */

static int known_ids(const struct perfdb_grid_config *cfg, const struct perfdb_grid_models *l,
		     char *buf, size_t sz)
{
	size_t w = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < cfg->nmodels && w < sz; i++)
		w += (size_t)snprintf(buf + w, sz - w, "%s%s", w ? ", " : "", cfg->models[i].id);
	for (size_t i = 0; l && i < l->n && w < sz; i++)
		w += (size_t)snprintf(buf + w, sz - w, "%s%s", w ? ", " : "", l->v[i].id);
	return 0;
}

int perfdb_grid_models_resolve(const struct perfdb_grid_config *cfg,
			       const struct perfdb_grid_models *loaded,
			       const char *const *ids, size_t nids,
			       struct perfdb_grid_models *out, struct perfdb_err *err)
{
	if (nids == 0) {
		if (loaded && loaded->n) {
			for (size_t i = 0; i < loaded->n; i++)
				PERFDB_TRY(models_add(out, &loaded->v[i], err));
		} else {
			for (size_t i = 0; i < cfg->nmodels; i++)
				PERFDB_TRY(models_add(out, &cfg->models[i], err));
		}
		return 0;
	}
	for (size_t k = 0; k < nids; k++) {
		char norm[512], other[512], known[2048];
		grid_normalize_name(ids[k], norm, sizeof(norm));
		const struct perfdb_grid_model *hit = NULL;
		for (size_t i = 0; loaded && i < loaded->n && !hit; i++) {
			grid_normalize_name(loaded->v[i].id, other, sizeof(other));
			if (strcmp(other, norm) == 0)
				hit = &loaded->v[i];
		}
		if (!hit) {
			for (size_t i = 0; i < cfg->nlegacy; i++) {
				if (strcmp(cfg->legacy[i], norm) == 0) {
					known_ids(cfg, loaded, known, sizeof(known));
					return perfdb_err_set(err, PERFDB_EINVAL,
						"unsupported legacy model name '%s': use '%s' (known models: %s)",
						ids[k], cfg->legacy_hint[i], known);
				}
			}
		}
		for (size_t i = 0; i < cfg->nmodels && !hit; i++) {
			grid_normalize_name(cfg->models[i].id, other, sizeof(other));
			if (strcmp(other, norm) == 0)
				hit = &cfg->models[i];
		}
		if (!hit) {
			known_ids(cfg, loaded, known, sizeof(known));
			return perfdb_err_set(err, PERFDB_EINVAL,
					      "unknown model '%s' (known models: %s; add others with "
					      "--model-config)", ids[k], known);
		}
		PERFDB_TRY(models_add(out, hit, err));
	}
	return 0;
}

/* ---- GEMM pairs ------------------------------------------------------------------ */

static int cmp_pair(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int64_t max1(int64_t v)
{
	return v > 1 ? v : 1;
}

int perfdb_grid_nk_pairs(const struct perfdb_grid_models *ms, int64_t (**pairs)[2],
			 size_t *n, struct perfdb_err *err)
{
	size_t cap = 0;
	for (size_t i = 0; i < ms->n; i++)
		cap += ms->v[i].ntp * 6;
	int64_t(*p)[2] = malloc((cap ? cap : 1) * sizeof(*p));
	if (!p)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < ms->n; i++) {
		const struct perfdb_grid_model *m = &ms->v[i];
		int64_t h = m->hidden;
		for (size_t t = 0; t < m->ntp; t++) {
			int64_t tp = m->tp[t], ht = max1(h / tp);
			if (!grid_model_is_mla(m)) {
				p[k][0] = ht, p[k++][1] = h;
				p[k][0] = h, p[k++][1] = ht;
			} else {
				int64_t q_up = max1(m->heads * m->head_dim / tp);
				/* No GEMM with a zero side: without a q LoRA rank q
				 * is projected from h in one GEMM, and without a kv
				 * LoRA rank there is no up-projection from it. */
				if (m->q_lora > 0) {
					p[k][0] = m->q_lora, p[k++][1] = h;
					p[k][0] = q_up, p[k++][1] = m->q_lora;
				} else {
					p[k][0] = q_up, p[k++][1] = h;
				}
				p[k][0] = m->kv_lora + m->rope, p[k++][1] = h;
				if (m->kv_lora > 0)
					p[k][0] = q_up, p[k++][1] = m->kv_lora;
			}
			if (m->inter > 0) {
				int64_t g = max1(m->inter / tp);
				p[k][0] = g, p[k++][1] = h;
				p[k][0] = h, p[k++][1] = g;
			}
		}
	}
	qsort(p, k, sizeof(*p), cmp_pair);
	size_t w = 0;
	for (size_t i = 0; i < k; i++)
		if (w == 0 || cmp_pair(p[w - 1], p[i]) != 0) {
			p[w][0] = p[i][0];
			p[w][1] = p[i][1];
			w++;
		}
	*pairs = p;
	*n = w;
	return 0;
}
