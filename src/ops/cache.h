/*
 * The paged KV-cache family's plan (docs/ops.md "RoPE and KV cache"):
 * what a backend's prepare and run read after the definition's check
 * (rules_cache.c) passed.
 */
#ifndef PERFDB_REPLAY_OPDEF_CACHE_H
#define PERFDB_REPLAY_OPDEF_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ops/op_case.h"

/* The number of row-sized slots of a cache (numel / row), or -1 when row does not divide it. */
static inline int64_t perfdb_cache_slots(const struct perfdb_tensor *cache, int64_t row)
{
	return row > 0 && cache->numel % row == 0 ? cache->numel / row : -1;
}

/* KvRmsNormRopeCache's sizes: t tokens, dv gamma's size (the normalised part), dk the rope dim (cos's last). */
struct perfdb_kv_plan { size_t t, dv, dk; };
void perfdb_kv_plan(const struct perfdb_op_case *c, struct perfdb_kv_plan *k);

#endif
