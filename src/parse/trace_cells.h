/*
 * The input cells of a cpu_op (src/parse/, not public API; conventions in
 * src/parse/chrome_trace.h and docs/chrome_trace.md "Input cells").
 */
#ifndef PERFDB_PARSE_TRACE_CELLS_H
#define PERFDB_PARSE_TRACE_CELLS_H

#include <stddef.h>

#include "perfdb/dtype.h"
#include "perfdb/strbuf.h"

struct perfdb_tcells {
	struct perfdb_strbuf shapes, dtypes, formats;
	size_t nslots;
	int unshaped_list;   /* a TensorList slot recorded as [] (older Kineto): its shapes are not here */
};

void perfdb_tcells_init(struct perfdb_tcells *c);
void perfdb_tcells_release(struct perfdb_tcells *c);

/*
 * Build the cells from "Input Dims" as compact JSON of integers (the
 * stream's form, "[[8,64],[]]") and "Input type" entries each ended by
 * '\x1e'.  Returns 0, 1 when the dims are not a list of integer lists (or
 * of lists of them: tensor lists), or -PERFDB_ENOMEM.
 */
int perfdb_tcells_build(struct perfdb_tcells *c, const char *dims, size_t dlen,
			const char *types, size_t tlen);

/*
 * The Input Strides cell of a call (docs/chrome_trace.md "Input strides"):
 * "Input Dims" and "Input Strides" in the stream's compact JSON, slot by
 * slot (each innermost list is a slot, tensor lists flattened as the shape
 * cell flattens them).  out gets the strides in the shape cell's form,
 * '"'-quoted, ';' between slots, when some slot's strides are not the
 * contiguous ones for its dims (a dim of size 1 has any stride); else out
 * is left empty, as when the two do not have the same slots or a stride is
 * not an integer >= 0.  Returns 0
 * or -PERFDB_ENOMEM.
 */
int perfdb_tcells_strides(const char *dims, size_t dlen, const char *strides, size_t slen,
			  struct perfdb_strbuf *out);

/* A dtype as torch records it: "Input type" spellings ("float",
 * "c10::BFloat16", "long int") and c10::ScalarType names ("Float",
 * "BFloat16", "Long"); PERFDB_DTYPE_UNKNOWN for anything else. */
enum perfdb_dtype perfdb_tcells_dtype(struct perfdb_span s);

#endif
