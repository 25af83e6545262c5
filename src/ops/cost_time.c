/*
 * A row's time on a device by its roofline (docs/ops.md "Costs"): the
 * slower of its FLOPs at the unit's peak for its dtype and its bytes at the
 * memory bandwidth.  What grid uses to leave out rows the device cannot
 * replay within a budget, from the device's registry figures.
 */
#include "ops/opdef.h"
#include "perfdb/device.h"

double perfdb_op_cost_seconds(const struct perfdb_op_cost *w, const struct perfdb_device *dev)
{
	if (!dev)
		return -1;
	double t = 0;
	if (w->flops > 0) {
		double peak = perfdb_device_peak_flops(dev, w->unit == PERFDB_OP_UNIT_MATRIX, (int)w->dtype);
		if (!(peak > 0))
			return -1;
		t = w->flops / peak;
	}
	if (w->bytes > 0) {
		if (!(dev->memory_bandwidth > 0))
			return -1;
		if (w->bytes / dev->memory_bandwidth > t)
			t = w->bytes / dev->memory_bandwidth;
	}
	return t;
}
