/* Shared database-location options (src/cli/dbopts.h). */
#include "dbopts.h"

#include <stdio.h>
#include <string.h>

int db_opts_check_version(const char *v, struct perfdb_err *err)
{
	return perfdb_db_check_version(v, err);
}

void cmd_db_init(struct cmd_db *db)
{
	memset(&db->o, 0, sizeof(db->o));
	perfdb_device_registry_init(&db->reg);
}

void cmd_db_release(struct cmd_db *db)
{
	perfdb_device_registry_release(&db->reg);
}

int db_opts_finish(struct cmd_db *db, const struct cmd_help *h)
{
	struct perfdb_db_opts *o = &db->o;
	struct perfdb_device_registry *reg = &db->reg;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	if (perfdb_device_registry_load(reg, &err) < 0 || perfdb_device_met_load_flags(reg, o, &err) < 0)
		return cli_error(h->name, &err);
	o->device_given = o->device != NULL;
	/* --database-path without --device: the device its path names (<root>/<device>/...) */
	const struct perfdb_device *named = !o->device && o->database_path
					    ? perfdb_device_of_dir(reg, o->database_path) : NULL;
	if (named)
		o->device = named->name;
	if (!o->device)
		o->device = reg->default_name ? reg->default_name : PERFDB_DEFAULT_DEVICE;
	size_t nlisted = reg->n;
	const struct perfdb_device *d = perfdb_device_find(reg, o->device);
	if (!d) {
		/* this machine's CPU is a device too (docs/devices.md): --device may name it */
		const char *host;
		if (perfdb_device_detect_host_cpu(reg, &host, &err) < 0)
			return cli_error(h->name, &err);
		d = perfdb_device_find(reg, o->device);
	}
	if (!d) {
		fprintf(stderr, "usage: %s\n", h->usage);
		fprintf(stderr, "perfdb %s: error: argument --device: invalid choice: '%s' (choose from ",
			h->name, o->device);
		for (size_t i = 0; i < nlisted; i++)
			fprintf(stderr, "%s'%s'", i ? ", " : "", reg->v[i].name);
		fprintf(stderr, ")\n");
		return 2;
	}
	o->native = strcmp(d->kind, "cpu") == 0 || strcmp(d->kind, "gpu") == 0;
	return 0;
}
