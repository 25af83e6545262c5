/*
 * Fuzz target: shape cells, slots, dims and row signatures
 * (src/core/shape.c, src/core/signature.c, src/core/dtype.c).
 *
 * The input is split on '\n' into up to six cells (in shapes, in dtypes,
 * in formats, out shapes, out dtypes, EP size) and an operator name taken
 * from the first byte.  Invariants checked: slot views lie inside the cell;
 * a cell with k top-level ';' has k+1 slots; parsed dims are non-negative;
 * a signature is deterministic.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/dtype.h"
#include "perfdb/shape.h"
#include "perfdb/signature.h"

#include "fuzz_cells.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const ops[] = {
	"MatMulV2", "MatMulV3", "MatMulCommon", "Index", "Slice", "Transpose",
	"DispatchFFNCombine", "Add", "FusedInferAttentionScore",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *op = ops[data[0] % (sizeof(ops) / sizeof(ops[0]))];
	char *text, *cells[6];
	if (fuzz_cells(data, size, &text, cells) < 0)
		return 0;

	struct perfdb_slots slots;
	perfdb_slots_init(&slots);
	for (int c = 0; c < 6; c++) {
		struct perfdb_span cell = { cells[c], strlen(cells[c]) };
		if (perfdb_shape_split_slots(cell, &slots) < 0)
			abort();
		for (size_t s = 0; s < slots.n; s++) {
			struct perfdb_span v = slots.v[s];
			if (v.len && (v.p < cell.p || v.p + v.len > cell.p + cell.len))
				abort();
			int64_t dims[PERFDB_SHAPE_MAX_DIMS];
			size_t nd = 0;
			struct perfdb_err err;
			if (perfdb_shape_parse_dims(v, dims, PERFDB_SHAPE_MAX_DIMS, &nd, &err) == 0) {
				if (nd > PERFDB_SHAPE_MAX_DIMS)
					abort();
				for (size_t d = 0; d < nd; d++)
					if (dims[d] < 0)
						abort();
				(void)perfdb_shape_numel(dims, nd);
				int64_t out[PERFDB_SHAPE_MAX_DIMS];
				size_t ond;
				(void)perfdb_shape_nz_to_nd(dims, nd, out, &ond);
			}
			(void)perfdb_dtype_parse(v);
			(void)perfdb_format_parse(v);
		}
	}
	perfdb_slots_release(&slots);

	struct perfdb_sig_row row = { cells[0], cells[1], cells[2], cells[3], cells[4], cells[5] };
	struct perfdb_strbuf a = PERFDB_STRBUF_INIT, b = PERFDB_STRBUF_INIT;
	if (perfdb_sig_compute(op, &row, &a) < 0 || perfdb_sig_compute(op, &row, &b) < 0)
		abort();
	if (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)
		abort();
	perfdb_sig_report_form(&row, &a);
	perfdb_strbuf_release(&a);
	perfdb_strbuf_release(&b);
	free(text);
	return 0;
}
