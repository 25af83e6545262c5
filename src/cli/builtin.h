/*
 * The command table (git's builtin.h recipe).  To add a command:
 *   1. write src/cli/cmd_<name>.c with `int cmd_<name>(int argc, char **argv)`
 *      (argv[0] is the command name; return the exit code 0/1/2) and its
 *      option table + struct cmd_help;
 *   2. add one row to commands[] in src/cli/perfdb.c;
 *   3. add tests under tests/cli/<name>/ and a section in docs/cli.md
 *      (docs.help_matches fails until the help text is documented).
 */
#ifndef PERFDB_CLI_BUILTIN_H
#define PERFDB_CLI_BUILTIN_H

#include "opt.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const struct cmd_help *help;
};

int cmd_check(int argc, char **argv);
int cmd_comm(int argc, char **argv);
int cmd_comm_suite(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_grid(int argc, char **argv);
int cmd_microbench(int argc, char **argv);
int cmd_parse(int argc, char **argv);
int cmd_path(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_trace_to_csv(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_writeback(int argc, char **argv);

extern const struct cmd_help cmd_check_help;
extern const struct cmd_help cmd_comm_help;
extern const struct cmd_help cmd_comm_suite_help;
extern const struct cmd_help cmd_devices_help;
extern const struct cmd_help cmd_grid_help;
extern const struct cmd_help cmd_microbench_help;
extern const struct cmd_help cmd_parse_help;
extern const struct cmd_help cmd_path_help;
extern const struct cmd_help cmd_report_help;
extern const struct cmd_help cmd_trace_to_csv_help;
extern const struct cmd_help cmd_validate_help;
extern const struct cmd_help cmd_writeback_help;

#endif
