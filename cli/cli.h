/* cli.h - the `gcut` command's subcommands. Each lives in its own cli/cmd_*.c and uses only
 * the public header. A subcommand returns the process exit code: 0 success, 1 a failed
 * solve or bad input, 2 a usage error. */
#ifndef GCUT_CLI_H
#define GCUT_CLI_H

#include "gcut.h"

#include <stdio.h>

typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
} cli_command;

int cli_cmd_maxflow(int argc, char **argv);
int cli_cmd_solvers(int argc, char **argv);
int cli_cmd_segment(int argc, char **argv);
int cli_cmd_gen(int argc, char **argv);
int cli_cmd_video(int argc, char **argv);

/** Print "gcut CMD: " + message (+ gcut_last_error() when status is an error) to stderr. */
void cli_error(const char *cmd, gcut_status status, const char *fmt, ...);

#endif /* GCUT_CLI_H */
