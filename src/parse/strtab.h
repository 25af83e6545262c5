/*
 * Interned byte strings with dense ids (src/parse/, not public API): the
 * trace reader names threads, kernels and op keys by number so that its
 * sort records stay small.  Memory grows with distinct strings.
 */
#ifndef PERFDB_PARSE_STRTAB_H
#define PERFDB_PARSE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct perfdb_strtab {
	char **s;
	size_t *len;
	uint32_t n, cap;
	uint32_t *tab;      /* id + 1, 0 = empty */
	size_t tabcap;      /* power of two */
};

void perfdb_strtab_init(struct perfdb_strtab *t);
void perfdb_strtab_release(struct perfdb_strtab *t);
/* The id of p[0..len), added if new: >= 0, or -PERFDB_ENOMEM. */
int64_t perfdb_strtab_intern(struct perfdb_strtab *t, const char *p, size_t len);

static inline const char *perfdb_strtab_get(const struct perfdb_strtab *t, uint32_t id,
					    size_t *len)
{
	if (len)
		*len = t->len[id];
	return t->s[id];
}

#endif
