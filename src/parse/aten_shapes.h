/*
 * The output cells of a PyTorch op call, from its input cells (src/parse/,
 * docs/chrome_trace.md "Output cells").  Kineto records inputs only;
 * TensorCast's consumer matches elementwise ops on the output shape, so the
 * ops whose output the inputs alone fix get it written.
 */
#ifndef PERFDB_PARSE_ATEN_SHAPES_H
#define PERFDB_PARSE_ATEN_SHAPES_H

#include <stddef.h>

#include "perfdb/strbuf.h"

/*
 * table: the op's table name (`aten.mm`, `aten.add_`: perfdb_parse_op_table_name);
 * shapes/dtypes: the input cells as the trace reader builds them
 * (`"8,64;64,64;"`, `DT_BF16;DT_BF16;`).  On 1 the three out buffers
 * (reset first) hold the first output's cells (`"8,64"`, `DT_BF16`, `ND`);
 * 0: not an op whose output the inputs fix (the dim of a reduction or a
 * concatenation, a target dtype: scalars the trace drops), or shapes that
 * do not fit the op; -PERFDB_ENOMEM.
 */
int perfdb_aten_output(const char *table, size_t tlen, const char *shapes, size_t slen,
		       const char *dtypes, size_t dlen, struct perfdb_strbuf *out_shapes,
		       struct perfdb_strbuf *out_dtypes, struct perfdb_strbuf *out_formats);

#endif
