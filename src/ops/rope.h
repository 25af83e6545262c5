/*
 * The rotary-embedding family's plan (docs/ops.md "RoPE and KV cache"),
 * what a backend's prepare and run read after the definition's check
 * (rules_rope.c) passed.
 */
#ifndef PERFDB_REPLAY_OPDEF_ROPE_H
#define PERFDB_REPLAY_OPDEF_ROPE_H

#include <stddef.h>

#include "ops/op_case.h"

/*
 * split_qkv_rmsnorm_rope_kernel's sizes: t tokens, hd the head dim (the
 * weight's size), q and kv the widths of the q and k/v outputs.  Read
 * from the slots as they are; the check says whether they agree.
 */
struct perfdb_qkv_plan { size_t t, hd, q, kv; };
void perfdb_qkv_plan(const struct perfdb_op_case *c, struct perfdb_qkv_plan *p);

#endif
