/*
 * The database-location option group shared by every stage command
 * (docs/design.md flags; docs/spec/parse.md §4 and Decision 9).  A command
 * flagged CMD_DB in commands[] gets a struct cmd_db from the dispatcher: it
 * adds DB_OPTIONS(&db->o) to its option table, then calls db_opts_finish
 * after parsing and its own checks.
 */
#ifndef PERFDB_CLI_DBOPTS_H
#define PERFDB_CLI_DBOPTS_H

#include "opt.h"
#include "perfdb/dbpath.h"
#include "perfdb/device.h"

int db_opts_check_version(const char *v, struct perfdb_err *err);

/* What the dispatcher keeps for a CMD_DB command: zeroed, registry initialised, released after. */
struct cmd_db {
	struct perfdb_db_opts o;
	struct perfdb_device_registry reg;
};

/* The dispatcher's side: before the command runs, and after it returned. */
void cmd_db_init(struct cmd_db *db);
void cmd_db_release(struct cmd_db *db);

#define DB_OPTIONS(o)                                                          \
	{ .type = OPT_GROUP, .name = "database location" },                     \
	{ .type = OPT_STRING, .name = "database-path", .dest = &(o)->database_path, \
	  .metavar = "PATH",                                                   \
	  .help = "database directory, used verbatim (device and version flags are then ignored)" }, \
	{ .type = OPT_STRING, .name = "database-root", .dest = &(o)->database_root, \
	  .metavar = "DIR",                                                    \
	  .help = "root holding <device>/vllm_ascend/<versions>/ (default: $PERFDB_DATA_ROOT, the nearest " \
		  "tensor_cast/performance_model/profiling_database/data above the current directory, " \
		  "else ./profiling_database/data)" },                         \
	{ .type = OPT_STRING, .name = "device", .dest = &(o)->device,           \
	  .metavar = "DEVICE",                                                 \
	  .help = "device directory name from the registry (default: ATLAS_800_A3_752T_128G_DIE; " \
		  "see 'perfdb devices')" },                                   \
	{ .type = OPT_STRING, .name = "vllm-version", .dest = &(o)->vllm_version, \
	  .metavar = "VERSION", .check = db_opts_check_version,                \
	  .help = "vLLM-Ascend version (e.g. 0.9.2), or a whole vllm<V>_torch<T>_cann<C> directory name" }, \
	{ .type = OPT_STRING, .name = "torch-version", .dest = &(o)->torch_version, \
	  .metavar = "VERSION", .check = db_opts_check_version,                \
	  .help = "PyTorch version (e.g. 2.9.0; anything from '+' is dropped)" }, \
	{ .type = OPT_STRING, .name = "cann-version", .dest = &(o)->cann_version, \
	  .metavar = "VERSION", .check = db_opts_check_version,                \
	  .help = "CANN version (e.g. 8.5; default: read from $ASCEND_HOME_PATH/**/version.info)" }

/*
 * After parsing: load the device registry into db->reg, check --device
 * against it (argparse-style "invalid choice" on failure), default it.
 * Returns 0, or the exit code to return (1 runtime error, 2 usage error),
 * having printed why.
 */
int db_opts_finish(struct cmd_db *db, const struct cmd_help *h);

#endif
