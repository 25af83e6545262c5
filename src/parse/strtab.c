/* Interned strings (src/parse/strtab.h): open addressing, FNV-1a (perfdb/hash.h). */
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

#include "perfdb/err.h"
#include "perfdb/hash.h"

void perfdb_strtab_init(struct perfdb_strtab *t)
{
	memset(t, 0, sizeof(*t));
}

void perfdb_strtab_release(struct perfdb_strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->len);
	free(t->tab);
	memset(t, 0, sizeof(*t));
}

static int rehash(struct perfdb_strtab *t)
{
	size_t cap = t->tabcap ? t->tabcap * 2 : 256;
	uint32_t *nt = calloc(cap, sizeof(*nt));
	if (!nt)
		return -PERFDB_ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		size_t j = perfdb_fnv1a64(t->s[i], t->len[i]) & (cap - 1);
		while (nt[j])
			j = (j + 1) & (cap - 1);
		nt[j] = i + 1;
	}
	free(t->tab);
	t->tab = nt;
	t->tabcap = cap;
	return 0;
}

int64_t perfdb_strtab_intern(struct perfdb_strtab *t, const char *p, size_t len)
{
	if (2 * ((size_t)t->n + 1) > t->tabcap && rehash(t) < 0)
		return -PERFDB_ENOMEM;
	size_t j = perfdb_fnv1a64(p, len) & (t->tabcap - 1);
	while (t->tab[j]) {
		uint32_t id = t->tab[j] - 1;
		if (t->len[id] == len && memcmp(t->s[id], p, len) == 0)
			return id;
		j = (j + 1) & (t->tabcap - 1);
	}
	if (t->n == UINT32_MAX - 1)
		return -PERFDB_ENOMEM;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		char **ns = realloc(t->s, cap * sizeof(*ns));
		if (!ns)
			return -PERFDB_ENOMEM;
		t->s = ns;
		size_t *nl = realloc(t->len, cap * sizeof(*nl));
		if (!nl)
			return -PERFDB_ENOMEM;
		t->len = nl;
		t->cap = cap;
	}
	char *c = malloc(len + 1);
	if (!c)
		return -PERFDB_ENOMEM;
	memcpy(c, p, len);
	c[len] = '\0';
	t->s[t->n] = c;
	t->len[t->n] = len;
	t->tab[j] = t->n + 1;
	return t->n++;
}
