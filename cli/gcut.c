/* gcut.c - entry point of the `gcut` command: dispatch to subcommands, --help, --version,
 * and `gcut solvers` (the solver table of this build). Uses only the public API. */
#include "cli.h"

#include <stdarg.h>
#include <string.h>

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

int main(int argc, char **argv) {
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
            return cli_finish(commands[i].name, commands[i].run(argc - 1, argv + 1));
    fprintf(stderr, "gcut: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
