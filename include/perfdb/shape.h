/*
 * Shape cells, slots and dims (docs/spec/parse.md §2, docs/spec/replay.md §4).
 *
 * A shape cell such as `"4,8;8,16"` (literal quotes included, as Ascend
 * profilers write it) holds tensor slots separated by ';' and dims by ','.
 * Empty slots are meaningful (FIA has 31 input slots) and are always kept.
 * Views (struct perfdb_span) point into the caller's string; nothing here
 * allocates except perfdb_slots, which owns only its array of views.
 */
#ifndef PERFDB_SHAPE_H
#define PERFDB_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"

/* A non-owning view of bytes. */
struct perfdb_span {
	const char *p;
	size_t len;
};

#define PERFDB_SHAPE_MAX_DIMS 16

/* Trim ASCII whitespace on both ends. */
struct perfdb_span perfdb_span_trim(struct perfdb_span s);

/*
 * Strip whitespace, then repeatedly a balanced pair of outer '"' (with the
 * whitespace inside it): `"""4,8"""` -> `4,8`, `"a"` -> `a`, `"a` -> `"a`.
 */
struct perfdb_span perfdb_shape_unquote(struct perfdb_span s);

/* Growable list of slot views.  Owns only its array. */
struct perfdb_slots {
	struct perfdb_span *v;
	size_t n;
	size_t cap;
};

void perfdb_slots_init(struct perfdb_slots *s);
void perfdb_slots_release(struct perfdb_slots *s);

/*
 * Split a cell into slots: unquote (perfdb_shape_unquote), then split on
 * ';' keeping empty slots; each slot is trimmed and has its own outer
 * quotes stripped.  An empty cell gives zero slots.
 * `"1,2; ;3,4"` -> [`1,2`, ``, `3,4`].
 * Returns 0 or -PERFDB_ENOMEM.
 */
int perfdb_shape_split_slots(struct perfdb_span cell, struct perfdb_slots *out);

/* True when a slot means "no tensor": ``, `()`, `N/A` (any case), `NA`,
 * `NULL`, `None`, `none`. */
bool perfdb_shape_slot_is_null(struct perfdb_span slot);

/*
 * The dims text of a slot, cut as the reference's _normalize_shape_slot
 * cuts it (the one tokenizer for shapes and signatures): whitespace and
 * every surrounding quote trimmed, a null spelling (`()`, `N/A` in any case
 * when na_any_case, else only `N/A`, `NA`, `NULL`, `None`, `none`, empty)
 * giving 0, one pair of parens dropped; 1 with body set.  Then
 * perfdb_shape_next_dim hands out its dims one by one: runs of bytes other
 * than ',' and whitespace (1 with tok, 0 at the end; rest advances).
 */
int perfdb_shape_slot_body(struct perfdb_span slot, int na_any_case, struct perfdb_span *body);
int perfdb_shape_next_dim(struct perfdb_span *rest, struct perfdb_span *tok);

/*
 * Parse one slot into dims.  Accepts optional surrounding parentheses and
 * dims separated by ',' and/or whitespace: `1, 2,3` and `(1 2 3)` give
 * (1,2,3).  A null slot (see above) gives *ndims = 0 and returns 0.
 * Errors (-PERFDB_EPARSE, message names the slot): a non-integer dim, a
 * negative dim, a dim above INT64_MAX, more than max dims.
 */
int perfdb_shape_parse_dims(struct perfdb_span slot, int64_t *dims, size_t max,
			    size_t *ndims, struct perfdb_err *err);

/* Product of dims; 0 dims -> 1 (a scalar).  Returns -1 on int64 overflow. */
int64_t perfdb_shape_numel(const int64_t *dims, size_t ndims);

/*
 * FRACTAL_NZ storage shape to the logical 2-D shape used to build the
 * tensor (docs/spec/replay.md §4): (a,b,c,d) -> (b*c, a*d), e.g. (2,3,4,5) ->
 * (12,10).  Other ranks are returned unchanged.  Returns 0 or
 * -PERFDB_EINVAL on overflow.
 */
int perfdb_shape_nz_to_nd(const int64_t *dims, size_t ndims, int64_t *out,
			  size_t *out_ndims);

#endif
