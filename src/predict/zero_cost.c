/*
 * Ops that compute nothing (docs/predict.md "Zero-cost ops").
 *
 * A view shares its input's storage, a shape query reads metadata, an
 * alias or detach only makes a new tensor object.  Their time in a trace is
 * the dispatcher's; the database has nothing to say about them, so they are
 * not "missing": they cost 0.  The ops that may copy (reshape of a
 * non-contiguous tensor, contiguous, to, flatten) are here too: when they
 * do copy, the copy is a child call (aten::clone, aten::_to_copy) and the
 * op is predicted from its children instead.
 */
#include <string.h>

#include "predict/predict_internal.h"

static const char *const zero_cost[] = {
	/* views */
	"aten.view", "aten._unsafe_view", "aten.reshape", "aten._reshape_alias", "aten.as_strided",
	"aten.t", "aten.transpose", "aten.permute", "aten.expand", "aten.expand_as",
	"aten.unsqueeze", "aten.squeeze", "aten.select", "aten.slice", "aten.narrow",
	"aten.split", "aten.split_with_sizes", "aten.chunk", "aten.unbind", "aten.view_as",
	"aten.flatten", "aten.unflatten", "aten.diagonal", "aten.movedim", "aten.swapaxes",
	"aten.unfold", "aten.view_as_real", "aten.view_as_complex", "aten.numpy_T",
	/* aliases and new tensor objects over the same storage */
	"aten.alias", "aten.detach", "aten.detach_", "aten.lift_fresh", "aten.resolve_conj",
	"aten.resolve_neg", "aten.contiguous", "aten.to", "aten.type_as",
	/* allocation without initialisation, and metadata */
	"aten.empty", "aten.empty_like", "aten.empty_strided", "aten.resize_",
	"aten.size", "aten.stride", "aten.numel", "aten.dim", "aten.is_nonzero",
	"aten.result_type", "aten.set_", "aten._has_compatible_shallow_copy_type",
};

int pred_zero_cost(const char *table, size_t len)
{
	for (size_t i = 0; i < sizeof(zero_cost) / sizeof(*zero_cost); i++)
		if (strlen(zero_cost[i]) == len && memcmp(zero_cost[i], table, len) == 0)
			return 1;
	return 0;
}
