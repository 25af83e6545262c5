/*
 * This machine's quiet figures (perfdb/preflight.h): a small JSON file per
 * host in the user's state directory, {"host": …, "preflight_gbs": […],
 * "row_gbs": […], "torch_gbs": […]}, the last PERFDB_QUIET_KEEP readings
 * of each kind.  It
 * is state, not data: a file that cannot be read is no figure, and one
 * that cannot be written keeps none, without failing a run.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "perfdb/preflight.h"
#include "perfdb/probe.h"

/* The state directory: $PERFDB_STATE_DIR, $XDG_STATE_HOME/perfdb, ~/.local/state/perfdb. */
static int state_dir(struct perfdb_strbuf *out)
{
	const char *d = getenv("PERFDB_STATE_DIR"), *x = getenv("XDG_STATE_HOME"), *h = getenv("HOME");
	if (d && *d)
		return perfdb_strbuf_addstr(out, d);
	if (x && *x)
		return perfdb_strbuf_addf(out, "%s/perfdb", x);
	if (h && *h)
		return perfdb_strbuf_addf(out, "%s/.local/state/perfdb", h);
	return -PERFDB_ENOENT;
}

int perfdb_quiet_path(struct perfdb_strbuf *out)
{
	char host[256] = "localhost";
	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		snprintf(host, sizeof(host), "localhost");
	for (char *p = host; *p; p++)
		if (*p == '/')
			*p = '_';   /* a name, never a path */
	PERFDB_TRY(state_dir(out));
	return perfdb_strbuf_addf(out, "/quiet-%s.json", host);
}

/* Up to PERFDB_QUIET_KEEP positive readings of array a (the newest last). */
static int readings(const json_t *a, double *v, size_t *n)
{
	*n = 0;
	if (!a)
		return 0;
	if (!json_is_array(a))
		return -PERFDB_EPARSE;
	size_t len = json_array_size(a), from = len > PERFDB_QUIET_KEEP ? len - PERFDB_QUIET_KEEP : 0;
	for (size_t i = from; i < len; i++) {
		const json_t *x = json_array_get(a, i);
		if (!json_is_number(x) || !(json_number_value(x) > 0) || json_number_value(x) > 1e6)
			return -PERFDB_EPARSE;
		v[(*n)++] = json_number_value(x);
	}
	return 0;
}

int perfdb_quiet_parse(const char *text, size_t len, struct perfdb_quiet *q)
{
	memset(q, 0, sizeof(*q));
	json_error_t je;
	json_t *root = json_loadb(text, len, 0, &je);
	int rc = json_is_object(root) ? 0 : -PERFDB_EPARSE;
	if (rc == 0)
		rc = readings(json_object_get(root, "preflight_gbs"), q->preflight_gbs, &q->npreflight);
	if (rc == 0)
		rc = readings(json_object_get(root, "row_gbs"), q->row_gbs, &q->nrow);
	if (rc == 0)
		rc = readings(json_object_get(root, "torch_gbs"), q->torch_gbs, &q->ntorch);
	json_decref(root);
	if (rc < 0)
		memset(q, 0, sizeof(*q));
	return rc;
}

int perfdb_quiet_load(struct perfdb_quiet *q)
{
	memset(q, 0, sizeof(*q));
	struct perfdb_strbuf p = PERFDB_STRBUF_INIT, text = PERFDB_STRBUF_INIT;
	struct perfdb_err ignored;
	if (perfdb_quiet_path(&p) == 0 && perfdb_file_read_all(p.buf, &text, &ignored) == 0)
		(void)perfdb_quiet_parse(text.buf ? text.buf : "", text.len, q);
	perfdb_strbuf_release(&p);
	perfdb_strbuf_release(&text);
	return 0;
}

double perfdb_quiet_figure(const double *v, size_t n)
{
	double c[PERFDB_QUIET_KEEP];
	if (n == 0)
		return 0;
	if (n > PERFDB_QUIET_KEEP)
		n = PERFDB_QUIET_KEEP;
	memcpy(c, v, n * sizeof(double));
	return perfdb_probe_median(c, n);
}

static json_t *array_of(const double *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

int perfdb_quiet_note(enum perfdb_quiet_kind kind, double gbs, struct perfdb_err *err)
{
	if (!(gbs > 0))
		return 0;
	struct perfdb_quiet q;
	perfdb_quiet_load(&q);
	double *v = kind == PERFDB_QUIET_ROW ? q.row_gbs : kind == PERFDB_QUIET_TORCH ? q.torch_gbs : q.preflight_gbs;
	size_t *n = kind == PERFDB_QUIET_ROW ? &q.nrow : kind == PERFDB_QUIET_TORCH ? &q.ntorch : &q.npreflight;
	if (*n == PERFDB_QUIET_KEEP) {
		memmove(v, v + 1, (PERFDB_QUIET_KEEP - 1) * sizeof(double));
		(*n)--;
	}
	v[(*n)++] = gbs;
	struct perfdb_strbuf p = PERFDB_STRBUF_INIT, dir = PERFDB_STRBUF_INIT;
	int rc = perfdb_quiet_path(&p) == 0 && state_dir(&dir) == 0 ? 0 : perfdb_err_set(err, PERFDB_ENOENT,
		"no state directory (set PERFDB_STATE_DIR, XDG_STATE_HOME or HOME)");
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	json_t *root = json_pack("{s:s, s:o, s:o, s:o}", "host", host,
				 "preflight_gbs", array_of(q.preflight_gbs, q.npreflight),
				 "row_gbs", array_of(q.row_gbs, q.nrow), "torch_gbs", array_of(q.torch_gbs, q.ntorch));
	char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(root);
	if (rc == 0 && !text)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0)
		rc = perfdb_mkdir_p(dir.buf, err);
	if (rc == 0)
		rc = perfdb_file_write_atomic(p.buf, text, strlen(text), err);
	free(text);
	perfdb_strbuf_release(&p);
	perfdb_strbuf_release(&dir);
	return rc;
}
