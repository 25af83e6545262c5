/*
 * FNV-1a, 64 bits: the one string hash perfdb uses, for its open-addressing
 * tables (interned trace strings, signatures, the journal) and for the
 * short digests it writes (long table names, op_mapping.yaml's marker).
 * Short keys, no adversary.  Inline: the trace reader hashes every string.
 */
#ifndef PERFDB_HASH_H
#define PERFDB_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t perfdb_fnv1a64(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ull;
	}
	return h;
}

#endif
