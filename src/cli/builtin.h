/*
 * The command table (git's builtin.h recipe).  To add a command:
 *   1. write src/cli/cmd_<name>.c with
 *      `int cmd_<name>(int argc, char **argv, struct cmd_db *db)` (argv[0] is
 *      the command name; return the exit code 0/1/2) and its option table +
 *      struct cmd_help;
 *   2. add one row to commands[] in src/cli/perfdb.c, with CMD_DB when the
 *      command takes the database-location flags: the dispatcher then owns
 *      db (options and device registry) for the command's whole run; the
 *      command puts DB_OPTIONS(&db->o) in its table and calls
 *      db_opts_finish(db, help) where its checks come to it (without CMD_DB,
 *      db is NULL);
 *   3. add tests under tests/cli/<name>/ and a section in docs/cli.md
 *      (docs.help_matches fails until the help text is documented).
 */
#ifndef PERFDB_CLI_BUILTIN_H
#define PERFDB_CLI_BUILTIN_H

#include "dbopts.h"
#include "opt.h"

/* commands[] flags */
#define CMD_DB (1u << 0)   /* the dispatcher provides struct cmd_db (see above) */

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv, struct cmd_db *db);
	const struct cmd_help *help;
	unsigned flags;
};

int cmd_check(int argc, char **argv, struct cmd_db *db);
int cmd_comm(int argc, char **argv, struct cmd_db *db);
int cmd_comm_suite(int argc, char **argv, struct cmd_db *db);
int cmd_devices(int argc, char **argv, struct cmd_db *db);
int cmd_grid(int argc, char **argv, struct cmd_db *db);
int cmd_microbench(int argc, char **argv, struct cmd_db *db);
int cmd_parse(int argc, char **argv, struct cmd_db *db);
int cmd_path(int argc, char **argv, struct cmd_db *db);
int cmd_predict(int argc, char **argv, struct cmd_db *db);
int cmd_report(int argc, char **argv, struct cmd_db *db);
int cmd_trace_to_csv(int argc, char **argv, struct cmd_db *db);
int cmd_validate(int argc, char **argv, struct cmd_db *db);
int cmd_writeback(int argc, char **argv, struct cmd_db *db);

extern const struct cmd_help cmd_check_help;
extern const struct cmd_help cmd_comm_help;
extern const struct cmd_help cmd_comm_suite_help;
extern const struct cmd_help cmd_devices_help;
extern const struct cmd_help cmd_grid_help;
extern const struct cmd_help cmd_microbench_help;
extern const struct cmd_help cmd_parse_help;
extern const struct cmd_help cmd_path_help;
extern const struct cmd_help cmd_predict_help;
extern const struct cmd_help cmd_report_help;
extern const struct cmd_help cmd_trace_to_csv_help;
extern const struct cmd_help cmd_validate_help;
extern const struct cmd_help cmd_writeback_help;

#endif
