/*
 * Row signatures: the identity used to match a measurement to a database
 * row (docs/spec/replay.md §1b, reference signature_utils.get_sig, plus
 * Decision 5: dtype spellings are normalised).
 *
 * The signature string is the five fields (in shapes, in dtypes, in
 * formats, out shapes, out dtypes), plus `EP Size` for DispatchFFNCombine,
 * joined with '|'.  It is both the hash key and the printable form.
 */
#ifndef PERFDB_SIGNATURE_H
#define PERFDB_SIGNATURE_H

#include <stdbool.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

/* The cells a signature reads; NULL means the column is absent (= ""). */
struct perfdb_sig_row {
	const char *in_shapes;
	const char *in_dtypes;
	const char *in_formats;
	const char *out_shapes;
	const char *out_dtypes;
	const char *ep_size;
};

/* MatMulV2, MatMulV3 and MatMulCommon alias each other (docs/spec/replay.md §1b). */
bool perfdb_sig_is_matmul_family(const char *op);

/*
 * Normalise an --ops entry: trim, strip one trailing `_run.py`, `_run` or
 * `.csv`.  Writes into out (reset first).
 */
int perfdb_sig_normalize_op(const char *name, struct perfdb_strbuf *out);

/*
 * Compute the signature of a row for operator op (the file stem / OP Type).
 * out is reset first.  Returns 0 or -PERFDB_ENOMEM; malformed shapes never
 * fail: they fall through to the generic rule as in the reference.
 */
int perfdb_sig_compute(const char *op, const struct perfdb_sig_row *row,
		       struct perfdb_strbuf *out);

/* Report form: `<raw Input Shapes|N/A> -> <raw Output Shapes|N/A>`. */
int perfdb_sig_report_form(const struct perfdb_sig_row *row,
			   struct perfdb_strbuf *out);

#endif
