/* cli.h - the `gcut` command's subcommands. Each lives in its own cli/cmd_*.c and uses only
 * the public header. A subcommand returns the process exit code: 0 success, 1 a failed
 * solve or bad input, 2 a usage error. */
#ifndef GCUT_CLI_H
#define GCUT_CLI_H

#include "gcut.h"

#include <stdbool.h>
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
int cli_cmd_qpbo(int argc, char **argv);
int cli_cmd_video(int argc, char **argv);

/** gcut_alloc() as an expression (cli/gcut.c): the block (free with gcut_free), or NULL with
 *  the reason in gcut_last_error(). The command's own buffers go through gcut's memory cap. */
void *cli_alloc(size_t bytes, const char *what);

/** Print "gcut CMD: " + message (+ gcut_last_error() when status is an error) to stderr. */
void cli_error(const char *cmd, gcut_status status, const char *fmt, ...);

/* ---- cli_out.c: outputs that never clobber, standard output checked, numbers checked ----
 * A command writes each output file through cli_out_path() (for writers taking a path) or
 * cli_out_open() / cli_out_close() (for streams): the bytes go to a temporary file beside
 * the destination, and main() renames them all over their destinations only when the
 * command returned 0 and standard output took every byte (cli_finish); otherwise they are
 * deleted, so a failure anywhere leaves no partial file and an old file untouched. */

/** The path to write for the output `path`: "-" and non-regular files (/dev/null, FIFOs) as
 *  they are, else a new temporary file DIR/.NAME.XXXXXX.EXT renamed to path at commit.
 *  @return NULL after printing why (folder not writable, ...). */
const char *cli_out_path(const char *cmd, const char *path);
/** fopen(cli_out_path(path), "wb"), or stdout for "-". @return NULL after a message. */
FILE *cli_out_open(const char *cmd, const char *path);
/** Close a stream of cli_out_open (flush only for stdout), reporting any write error.
 *  @return 0, or 1 after a message naming path. */
int cli_out_close(const char *cmd, FILE *file, const char *path);
/** Rename one pending output (temp, as cli_out_path returned it) over its destination now,
 *  for commands whose parts succeed or fail apart (gcut segment --batch); thread-safe.
 *  @return 0, or 1 after a message. */
int cli_out_commit_one(const char *cmd, const char *temp);
/** Rename every pending output over its destination. @return 0, or 1 after a message. */
int cli_out_commit(const char *cmd);
/** Delete every pending output's temporary file. */
void cli_out_discard(void);

/** A named path for cli_check_paths: what is "-o", "--overlay", "image", ... */
typedef struct cli_path {
    const char *what;
    const char *path; /* NULL = not given */
} cli_path;

/** @return true when a and b name the same file (same device and inode when both exist,
 *  the same resolved name when neither does); "-" is never the same as anything. */
bool cli_same_file(const char *a, const char *b);
/** Refuse, before anything is written, an output that names an input or another output.
 *  @return 0, or 2 (a usage error) after a message naming both. */
int cli_check_paths(const char *cmd, const cli_path *inputs, int num_inputs,
                    const cli_path *outputs, int num_outputs);
/** Called first by main(): standard input / error closed get /dev/null (so no output file
 *  lands on descriptor 0 or 2); a closed standard output is an error. @return 0 or 1. */
int cli_check_std_streams(void);
/** Called by main() with a command's exit code: checks that standard output took every
 *  byte, then commits (code 0) or discards the pending outputs. @return the final code. */
int cli_finish(const char *cmd, int rc);

/** Parse a whole decimal integer in [lo, hi]; else print a message naming `name` (an option
 *  such as "--threads") and the range, and return false. */
bool cli_parse_int64(const char *cmd, const char *name, const char *text, int64_t lo, int64_t hi,
                     int64_t *value);
/** cli_parse_int64 for an int. */
bool cli_parse_int(const char *cmd, const char *name, const char *text, int lo, int hi, int *value);
/** Parse a finite number in [lo, hi] (or exactly 0 when zero_ok); else a message naming it. */
bool cli_parse_double(const char *cmd, const char *name, const char *text, double lo, double hi,
                      bool zero_ok, double *value);
/** Parse sizes "AxB[xC...]": min_dims to max_dims of them, each 1..max_side, their product at
 *  most max_product (checked without overflow); else a message naming `name`. */
bool cli_parse_dims(const char *cmd, const char *name, const char *text, int min_dims, int max_dims,
                    int64_t max_side, int64_t max_product, int64_t *dims, int *num_dims);

/* ---- gcut.c: the process's timeline (GCUT_TIMELINE=1) ---- */

/** With GCUT_TIMELINE=1 in the environment, print "timeline <ms> <thread> <event>" to
 *  standard error at once (one write), the time counted from the process's start: the
 *  GCUT_T0_NS that bench/walltime passes (CLOCK_MONOTONIC just before its fork), else the
 *  start time in /proc/self/stat (10 ms ticks). Thread-safe; costs nothing when off. */
void cli_timeline(const char *thread, const char *event);

#endif /* GCUT_CLI_H */
