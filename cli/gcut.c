/* gcut.c - entry point of the `gcut` command: dispatch to subcommands, --help, --version,
 * and `gcut solvers` (the solver table of this build). Uses only the public API. */
#define _GNU_SOURCE 1 /* CLOCK_BOOTTIME */
#include "cli.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const cli_command commands[] = {
    {"maxflow", "solve a DIMACS max-flow or gcut grid problem exactly", cli_cmd_maxflow},
    {"segment", "seeded image segmentation: writes a mask and an overlay", cli_cmd_segment},
    {"qpbo", "minimise a binary energy with non-submodular terms (QPBO)", cli_cmd_qpbo},
    {"video", "online video segmentation: frames in, a mask per frame out", cli_cmd_video},
    {"gen", "generate synthetic benchmark images and problems", cli_cmd_gen},
    {"solvers", "list the solvers of this build and whether they can run here", cli_cmd_solvers},
};

static void usage(FILE *out) {
    fprintf(out, "usage: gcut [--help] [--version] COMMAND [ARGS]\n\n"
                 "Exact s-t min-cut / max-flow (graph cuts) on CPUs and GPUs.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n`gcut COMMAND --help` describes one command.\n");
}

void *cli_alloc(size_t bytes, const char *what) {
    void *block = NULL;
    if (gcut_alloc(bytes, what, &block) != GCUT_OK)
        return NULL;
    return block;
}

void cli_error(const char *cmd, gcut_status status, const char *fmt, ...) {
    va_list ap;
    if (cmd != NULL)
        fprintf(stderr, "gcut %s: ", cmd);
    else
        fputs("gcut: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (status != GCUT_OK) {
        const char *detail = gcut_last_error();
        fprintf(stderr, ": %s", gcut_strerror(status));
        if (detail != NULL && *detail != '\0')
            fprintf(stderr, " (%s)", detail);
    }
    fputc('\n', stderr);
}

int cli_cmd_solvers(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: gcut solvers\n\nList the solvers compiled into this build, what they "
               "take (graph, grid), and whether each can run on this machine.\n");
        return 0;
    }
    if (argc > 1) {
        cli_error("solvers", GCUT_OK, "unexpected argument '%s'", argv[1]);
        return 2;
    }
    printf("%-12s %-11s %-9s %s\n", "name", "takes", "runs here", "description");
    for (int i = 0; i < gcut_solver_count(); i++) {
        gcut_solver_info info;
        if (gcut_solver_get(i, &info) != GCUT_OK)
            continue;
        char takes[32] = "";
        if (info.flags & GCUT_TAKES_GRAPH)
            strcat(takes, "graph");
        if (info.flags & GCUT_TAKES_GRID)
            strcat(takes, (info.flags & GCUT_TAKES_GRAPH) ? ",grid" : "grid");
        printf("%-12s %-11s %-9s %s\n", info.name, takes, info.available ? "yes" : "no (GPU)",
               info.description);
    }
    printf("(graph-only solvers also take grids through an explicit conversion)\n");
    return 0;
}

/* ---- the timeline (cli.h) ---- */

static bool timeline_on;
static int64_t timeline_origin_ns;

static int64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The process's start on CLOCK_MONOTONIC: bench/walltime's GCUT_T0_NS (its fork), else
 * /proc/self/stat's start time (field 22, clock ticks since boot, on CLOCK_BOOTTIME). */
static int64_t process_start_ns(const char **what) {
    const char *t0 = getenv("GCUT_T0_NS");
    if (t0 != NULL && *t0 != '\0') {
        *what = "fork (GCUT_T0_NS)";
        return strtoll(t0, NULL, 10);
    }
    *what = "main (no start time found)";
    const int64_t now = clock_ns(CLOCK_MONOTONIC);
#ifdef CLOCK_BOOTTIME
    char text[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    size_t got = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    text[got] = '\0';
    const char *p = strrchr(text, ')'); /* the command name may hold spaces */
    for (int field = 2; p != NULL && field < 22; field++)
        p = strchr(p + 1, ' ');
    const long ticks = sysconf(_SC_CLK_TCK);
    if (p != NULL && ticks > 0) {
        const int64_t start = strtoll(p + 1, NULL, 10) * (1000000000 / ticks);
        *what = "process start (/proc/self/stat, 10 ms ticks)";
        return now - (clock_ns(CLOCK_BOOTTIME) - start);
    }
#endif
    return now;
}

void cli_timeline(const char *thread, const char *event) {
    if (!timeline_on)
        return;
    char line[256];
    const double ms = (double)(clock_ns(CLOCK_MONOTONIC) - timeline_origin_ns) / 1e6;
    int len = snprintf(line, sizeof line, "timeline %8.2f ms  %-7s %s\n", ms, thread, event);
    if (len > 0)
        (void)!write(2, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
}

/* Registered first, so run last: after CUDA's own handler (registered at its start-up). */
static void timeline_at_exit(void) {
    cli_timeline("main", "last atexit handler done (CUDA's tear-down included)");
}

static void timeline_start(void) {
    const char *env = getenv("GCUT_TIMELINE");
    timeline_on = env != NULL && strcmp(env, "1") == 0;
    if (!timeline_on)
        return;
    const char *origin = NULL;
    timeline_origin_ns = process_start_ns(&origin);
    atexit(timeline_at_exit);
    char event[128];
    snprintf(event, sizeof event, "main entered (times from the %s)", origin);
    cli_timeline("main", event);
}

/* A command's end: outputs committed (cli_finish), marked on the timeline. Ending with _exit
 * here instead (skipping the exit handlers and the CUDA driver's destructors) was measured on
 * the H100 host and dropped: within the noise (docs/CUDA-GRID.md, "Segmentation process time
 * (fourth pass)"); what the kernel does for a process that made a CUDA context stays either
 * way. */
static int finish(const char *name, int rc) {
    cli_timeline("main", "command returned (its buffers freed)");
    rc = cli_finish(name, rc);
    cli_timeline("main", "outputs committed, main returns");
    return rc;
}

int main(int argc, char **argv) {
    timeline_start();
    if (cli_check_std_streams() != 0)
        return 1;
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return cli_finish(NULL, 0);
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("gcut %s\n", gcut_version_string());
        return cli_finish(NULL, 0);
    }
    /* Every command ends in cli_finish: standard output checked, outputs committed. */
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return finish(commands[i].name, commands[i].run(argc - 1, argv + 1));
    fprintf(stderr, "gcut: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
