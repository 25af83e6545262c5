/*
 * One `perfdb grid` run from its request (docs/grid.md): the grid
 * configuration, the HF configs given as models, the --target-models
 * list, their resolution, the op_mapping.yaml for routing (given, or the
 * database's own), the sampling seed (given, or drawn and reported), then
 * perfdb_grid_run.  What was loaded stays in the session, for the caller's
 * header and summary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "grid/grid.h"
#include "perfdb/device.h"
#include "perfdb/op_mapping.h"

void perfdb_grid_session_release(struct perfdb_grid_session *s)
{
	perfdb_grid_result_release(&s->res);
	for (size_t i = 0; i < s->nids; i++)
		free(s->ids[i]);
	free(s->ids);
	free(s->cfg_path);
	free(s->opmap_file);
	perfdb_grid_models_release(&s->loaded);
	perfdb_grid_models_release(&s->models);
	perfdb_opmap_free(s->opmap);
	perfdb_grid_config_free(s->cfg);
	memset(s, 0, sizeof(*s));
}

static uint64_t random_seed(void)
{
	uint64_t s = 0;
	if (getrandom(&s, sizeof(s), 0) != (ssize_t)sizeof(s)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
	}
	/* keep it short enough to retype */
	return s % 1000000000000ull;
}

/* --target-models: comma-separated, blanks around each id dropped, empty ids skipped. */
static int split_targets(struct perfdb_grid_session *s, const char *targets,
			 struct perfdb_err *err)
{
	char *copy = strdup(targets), *save = NULL;
	s->ids = calloc(strlen(targets) / 2 + 2, sizeof(char *));
	int rc = 0;
	if (!copy || !s->ids) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	} else {
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			while (*t == ' ' || *t == '\t')
				t++;
			size_t n = strlen(t);
			while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
				t[--n] = '\0';
			if (n && !(s->ids[s->nids++] = strdup(t)))
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		}
	}
	free(copy);
	return rc;
}

/* The op_mapping.yaml that routes: the given one, else the database's when present. */
static int load_opmap(struct perfdb_grid_session *s, const struct perfdb_grid_request *rq,
		      struct perfdb_err *err)
{
	if (rq->op_mapping) {
		s->opmap_file = strdup(rq->op_mapping);
		return perfdb_opmap_load(&s->opmap, rq->op_mapping, err);
	}
	size_t n = strlen(rq->db_dir) + 32;
	char *p = malloc(n);
	if (!p)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	snprintf(p, n, "%s/%s", rq->db_dir, PERFDB_OPMAP_FILE);
	if (access(p, F_OK) != 0) {
		free(p);
		return 0;
	}
	s->opmap_file = p;
	return perfdb_opmap_load(&s->opmap, p, err);
}

static int prepare(struct perfdb_grid_session *s, const struct perfdb_grid_request *rq,
		   struct perfdb_err *err)
{
	s->cfg_path = rq->grid_config ? strdup(rq->grid_config) : perfdb_data_path("grid.yaml");
	if (!s->cfg_path)
		return perfdb_err_set(err, PERFDB_ENOENT, "grid configuration 'grid.yaml' not found "
				      "(set PERFDB_DATA_DIR or pass --grid-config)");
	PERFDB_TRY(perfdb_grid_config_load(&s->cfg, s->cfg_path, err));
	for (size_t i = 0; i < rq->nmodel_configs; i++)
		PERFDB_TRY(perfdb_grid_models_load_hf(&s->loaded, rq->model_configs[i], s->cfg, err));
	if (rq->targets)
		PERFDB_TRY(split_targets(s, rq->targets, err));
	int rc = perfdb_grid_models_resolve(s->cfg, &s->loaded, (const char *const *)s->ids, s->nids,
					    &s->models, err);
	if (rc < 0) {
		s->bad_targets = rc == -PERFDB_EINVAL;
		return rc;
	}
	return load_opmap(s, rq, err);
}

int perfdb_grid_session_run(const struct perfdb_grid_request *rq, struct perfdb_grid_session *s,
			    struct perfdb_err *err)
{
	memset(s, 0, sizeof(*s));
	perfdb_grid_models_init(&s->loaded);
	perfdb_grid_models_init(&s->models);
	PERFDB_TRY(prepare(s, rq, err));
	s->go = rq->base;
	s->go.db_dir = rq->db_dir;
	s->go.cfg = s->cfg;
	s->go.opmap = s->opmap;
	s->go.models = &s->models;
	s->go.models_given = s->nids > 0 || s->loaded.n > 0;
	s->go.use_rng = s->go.rows > 0;
	if (s->go.use_rng && !rq->seed_given) {
		s->go.seed = random_seed();
		s->seed_chosen = true;
	}
	return perfdb_grid_run(&s->go, &s->res, err);
}
