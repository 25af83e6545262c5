/*
 * The op sequence's storage (perfdb/opseq.h).
 */
#include <stdlib.h>
#include <string.h>

#include "perfdb/err.h"
#include "perfdb/opseq.h"

int perfdb_opseq_add(struct perfdb_opseq *s, const char *table, size_t len, size_t line)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct perfdb_opseq_step *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -PERFDB_ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	char *t = strndup(table, len);
	if (!t)
		return -PERFDB_ENOMEM;
	s->v[s->n].table = t;
	s->v[s->n].line = line;
	s->n++;
	return 0;
}

void perfdb_opseq_release(struct perfdb_opseq *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].table);
	free(s->v);
	memset(s, 0, sizeof(*s));
}
