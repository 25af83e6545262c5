/*
 * Where a PyTorch trace's tables go (docs/database.md "Layout"): traces
 * describe the machine they were recorded on, not an Ascend stack, so
 * their tables live in the device's native home <root>/<device>/torch/
 * torch<T>/.  The device is the trace's GPU (Kineto's deviceProperties
 * name, as a directory name) or, for a CPU-only trace, this host's CPU.
 */
#include <stdbool.h>
#include <stdio.h>

#include "parse/parse.h"
#include "perfdb/device.h"

int perfdb_parse_trace_device(const struct perfdb_parse_db *db,
			      struct perfdb_device_registry *reg, char *dev, size_t cap,
			      struct perfdb_err *err)
{
	if (db->gpu && !db->device[0]) {
		/* no deviceProperties block (older Kineto): docs/chrome_trace.md */
		snprintf(dev, cap, "UNKNOWN_GPU");
	} else if (db->gpu) {
		/* upper case, runs of anything else one '_', none at the ends */
		size_t w = 0;
		int us = 1;
		for (const char *p = db->device; *p && w + 1 < cap; p++) {
			unsigned char ch = (unsigned char)*p;
			if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) {
				dev[w++] = (char)(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
				us = 0;
			} else if (!us) {
				dev[w++] = '_';
				us = 1;
			}
		}
		while (w && dev[w - 1] == '_')
			w--;
		dev[w] = '\0';
		/* a name of punctuation only ("..", "/", "-") names no directory */
		if (!w)
			snprintf(dev, cap, "UNKNOWN_GPU");
	} else {
		const char *name;
		PERFDB_TRY(perfdb_device_detect_host_cpu(reg, &name, err));
		snprintf(dev, cap, "%s", name);
	}
	return 0;
}

bool perfdb_parse_trace_device_named(const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
			return true;
	return false;
}

int perfdb_parse_trace_kind(const char *path)
{
	struct perfdb_inputs in;
	struct perfdb_err e;
	perfdb_inputs_init(&in);
	size_t traces = 0;
	if (perfdb_parse_find_inputs(path, &in, &e) == 0)
		for (size_t i = 0; i < in.n; i++)
			traces += in.v[i].kind == PERFDB_INPUT_CHROME_TRACE;
	int kind = !traces ? 0 : traces == in.n ? 1 : 2;
	perfdb_inputs_release(&in);
	return kind;
}
