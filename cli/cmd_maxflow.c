/* cmd_maxflow.c - `gcut maxflow`: read a DIMACS max-flow file or a gcut grid file (told apart
 * by content), solve it with any solver, print the exact value as the DIMACS solution line
 * "s VALUE", and optionally check the cut certificate and write the source side. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void usage(FILE *out) {
    fprintf(
        out,
        "usage: gcut maxflow [--solver NAME] [--threads N] [--verify] [--cut FILE] [--quiet] "
        "FILE\n\n"
        "Solve the s-t maximum flow / minimum cut of FILE exactly. FILE is a DIMACS max-flow\n"
        "problem (p max N M, n ID s|t, a U V CAP) or a gcut grid file (docs/FORMATS.md),\n"
        "recognised by its content; '-' reads standard input.\n\n"
        "Prints 'c' lines (solver, size, read/build/solve times in ms) and the solution line\n"
        "'s VALUE' with the exact maximum flow.\n\n"
        "options:\n"
        "  --solver NAME  solver from `gcut solvers`, or auto (default); --opt=VALUE works too\n"
        "  --threads N    CPU threads for parallel solvers (0 = all cores, the default)\n"
        "  --verify       check the cut certificate: the cut's capacity equals the flow\n"
        "  --cut FILE     write the source side of the minimum cut, one id per line: DIMACS\n"
        "                 ids (the source's own id included), or 0-based linear indices\n"
        "                 (z*H + y)*W + x for grids; '-' = standard output\n"
        "  --quiet        print only the 's' line\n"
        "  --help         this text\n\n"
        "exit status: 0 solved, 1 bad input or failed solve, 2 usage error\n");
}

static double now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

typedef struct maxflow_args {
    const char *solver;
    int threads;
    int verify;
    int quiet;
    const char *cut_path;
    const char *input;
    const char *reader_path; /* what the reader opens: input, or "-" once reopened as stdin */
} maxflow_args;

static void list_solvers(FILE *out) {
    fprintf(out, "available solvers: auto");
    for (int i = 0; i < gcut_solver_count(); i++) {
        gcut_solver_info info;
        if (gcut_solver_get(i, &info) == GCUT_OK)
            fprintf(out, ", %s%s", info.name, info.available ? "" : " (needs a GPU)");
    }
    fputc('\n', out);
}

/* @return -1 on success (run the command), else the exit code to return now. */
static int parse_args(int argc, char **argv, maxflow_args *args) {
    memset(args, 0, sizeof *args);
    args->solver = "auto";
    for (int i = 1; i < argc; i++) {
        /* "--solver NAME" and "--solver=NAME" are the same. */
        char option[16];
        const char *arg = argv[i], *value = NULL, *equals = strchr(arg, '=');
        if (strncmp(arg, "--", 2) == 0 && equals != NULL &&
            (size_t)(equals - arg) < sizeof option) {
            memcpy(option, arg, (size_t)(equals - arg));
            option[equals - arg] = '\0';
            arg = option;
            value = equals + 1;
        }
        bool takes_value = strcmp(arg, "--solver") == 0 || strcmp(arg, "--threads") == 0 ||
                           strcmp(arg, "--cut") == 0;
        if (takes_value && value == NULL) {
            if (i + 1 >= argc) {
                cli_error("maxflow", GCUT_OK, "%s needs a value (see gcut maxflow --help)", arg);
                return 2;
            }
            value = argv[++i];
        }
        if (!takes_value && value != NULL) {
            cli_error("maxflow", GCUT_OK, "option '%s' takes no value", argv[i]);
            return 2;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(arg, "--solver") == 0) {
            args->solver = value;
        } else if (strcmp(arg, "--threads") == 0) {
            if (!cli_parse_int("maxflow", "--threads", value, 0, 65536, &args->threads))
                return 2;
        } else if (strcmp(arg, "--cut") == 0) {
            args->cut_path = value;
        } else if (strcmp(arg, "--verify") == 0) {
            args->verify = 1;
        } else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
            args->quiet = 1;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            cli_error("maxflow", GCUT_OK, "unknown option '%s' (see gcut maxflow --help)", arg);
            return 2;
        } else if (args->input != NULL) {
            cli_error("maxflow", GCUT_OK, "more than one input file ('%s' and '%s')", args->input,
                      arg);
            return 2;
        } else {
            args->input = arg;
        }
    }
    if (args->input == NULL) {
        cli_error("maxflow", GCUT_OK, "no input file (see gcut maxflow --help)");
        return 2;
    }
    if (strcmp(args->solver, "auto") != 0 && gcut_solver_find(args->solver, NULL) != GCUT_OK) {
        cli_error("maxflow", GCUT_OK, "no solver named '%s' in this build", args->solver);
        list_solvers(stderr);
        return 2;
    }
    if (args->cut_path != NULL) {
        const cli_path input = {"problem file", args->input}, output = {"--cut", args->cut_path};
        int code = cli_check_paths("maxflow", &input, 1, &output, 1);
        if (code != 0)
            return code;
    }
    return -1;
}

/* Decide the format by content and set args->reader_path. A grid file starts with
 * "gcut-grid "; no DIMACS line starts with 'g', so one byte of look-ahead is enough where the
 * input can be read only once: standard input, and pipes or FIFOs (`<(zcat f.max.gz)`), which
 * are reopened as standard input so that the byte can be pushed back (C guarantees one). */
static int prepare_input(maxflow_args *args, int *is_grid) {
    static const char magic[] = "gcut-grid ";
    const char *path = args->input;
    struct stat info;
    bool regular = strcmp(path, "-") != 0 && stat(path, &info) == 0 && S_ISREG(info.st_mode);
    *is_grid = 0;
    args->reader_path = path;
    if (regular) {
        FILE *file = fopen(path, "rb");
        if (file == NULL)
            return 0; /* the reader reports it with the system's reason */
        char head[sizeof magic - 1];
        size_t got = fread(head, 1, sizeof head, file);
        fclose(file);
        *is_grid = got == sizeof head && memcmp(head, magic, sizeof head) == 0;
        return 0;
    }
    if (strcmp(path, "-") != 0 && stat(path, &info) == 0) {
        if (S_ISDIR(info.st_mode)) {
            cli_error("maxflow", GCUT_OK, "%s is a directory, not a problem file", path);
            return 1;
        }
        if (freopen(path, "rb", stdin) == NULL) {
            cli_error("maxflow", GCUT_OK, "%s: cannot open", path);
            return 1;
        }
        args->reader_path = "-";
    }
    int ch = getc(stdin);
    *is_grid = ch == 'g';
    if (ch != EOF)
        ungetc(ch, stdin);
    return 0;
}

static int write_graph_cut(const char *path, const uint8_t *labels, int64_t num_nodes,
                           const int64_t *node_ids, int64_t source_id) {
    FILE *out = cli_out_open("maxflow", path);
    if (out == NULL)
        return 1;
    bool source_written = false;
    for (int64_t i = 0; i < num_nodes; i++) {
        if (!source_written && node_ids[i] > source_id) {
            fprintf(out, "%" PRId64 "\n", source_id);
            source_written = true;
        }
        if (labels[i] == GCUT_SOURCE)
            fprintf(out, "%" PRId64 "\n", node_ids[i]);
    }
    if (!source_written)
        fprintf(out, "%" PRId64 "\n", source_id);
    return cli_out_close("maxflow", out, path);
}

static int write_grid_cut(const char *path, const uint8_t *labels, int64_t num_nodes) {
    FILE *out = cli_out_open("maxflow", path);
    if (out == NULL)
        return 1;
    for (int64_t i = 0; i < num_nodes; i++)
        if (labels[i] == GCUT_SOURCE)
            fprintf(out, "%" PRId64 "\n", i);
    return cli_out_close("maxflow", out, path);
}

static void print_stats(const maxflow_args *args, const gcut_stats *stats, double read_ms) {
    if (args->quiet)
        return;
    printf("c solver %s\n", stats->solver);
    printf("c read_ms %.3f\n", read_ms);
    printf("c build_ms %.3f\n", stats->build_ms);
    printf("c solve_ms %.3f\n", stats->solve_ms);
    /* The solver's own counters, where it keeps them. */
    const struct {
        const char *name;
        int64_t value;
    } counters[] = {{"augmentations", stats->augmentations},
                    {"sweeps", stats->sweeps},
                    {"global_relabels", stats->global_relabels},
                    {"pushes", stats->pushes},
                    {"device_bytes", stats->device_bytes}};
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        if (counters[i].value != 0)
            printf("c %s %" PRId64 "\n", counters[i].name, counters[i].value);
}

static int run_graph(const maxflow_args *args, gcut_options *options) {
    gcut_graph *graph = NULL;
    int64_t *node_ids = NULL;
    double t0 = now_ms();
    gcut_status st = gcut_dimacs_read(args->reader_path, &graph, &node_ids);
    double read_ms = now_ms() - t0;
    if (st != GCUT_OK) {
        cli_error("maxflow", st, "cannot read %s", args->input);
        return 1;
    }
    int64_t n = gcut_graph_num_nodes(graph);
    if (!args->quiet)
        printf("c input %s (DIMACS)\nc nodes %" PRId64 " (+ source and sink)\nc edges %" PRId64
               "\n",
               args->input, n, gcut_graph_num_edges(graph));
    int code = 1;
    uint8_t *labels = cli_alloc(n > 0 ? (size_t)n : 1, "labels");
    int64_t flow = 0;
    gcut_stats stats;
    if (labels == NULL) {
        cli_error("maxflow", GCUT_ERR_NOMEM, "%" PRId64 " labels", n);
        goto done;
    }
    st = gcut_graph_solve(graph, options, &flow, labels, &stats);
    if (st != GCUT_OK) {
        cli_error("maxflow", st, "solve of %s failed", args->input);
        goto done;
    }
    print_stats(args, &stats, read_ms);
    if (args->verify) {
        int64_t cut = 0;
        st = gcut_graph_verify(graph, labels, flow, &cut);
        if (st != GCUT_OK) {
            cli_error("maxflow", st, "%s", args->input);
            goto done;
        }
        if (!args->quiet)
            printf("c verify: ok (cut capacity %" PRId64 ")\n", cut);
    }
    printf("s %" PRId64 "\n", flow);
    fflush(stdout);
    code = 0;
    if (args->cut_path != NULL) {
        code = write_graph_cut(args->cut_path, labels, n, node_ids, node_ids[n]);
    }
done:
    gcut_free(labels);
    gcut_free(node_ids);
    gcut_graph_free(graph);
    return code;
}

static int run_grid(const maxflow_args *args, gcut_options *options) {
    gcut_grid *grid = NULL;
    double t0 = now_ms();
    gcut_status st = gcut_grid_read(args->reader_path, &grid);
    double read_ms = now_ms() - t0;
    if (st != GCUT_OK) {
        cli_error("maxflow", st, "cannot read %s", args->input);
        return 1;
    }
    int64_t n = gcut_grid_num_nodes(grid);
    if (!args->quiet) {
        int64_t shape[3];
        int ndim = gcut_grid_ndim(grid);
        gcut_grid_shape(grid, shape);
        printf("c input %s (gcut grid)\nc grid ", args->input);
        for (int i = 0; i < ndim; i++)
            printf(i ? "x%" PRId64 : "%" PRId64, shape[i]);
        printf(" conn %d\nc nodes %" PRId64 " (+ source and sink)\n", gcut_grid_connectivity(grid),
               n);
    }
    int code = 1;
    uint8_t *labels = cli_alloc((size_t)n, "labels");
    int64_t flow = 0;
    gcut_stats stats;
    if (labels == NULL) {
        cli_error("maxflow", GCUT_ERR_NOMEM, "%" PRId64 " labels", n);
        goto done;
    }
    st = gcut_grid_solve(grid, options, &flow, labels, &stats);
    if (st != GCUT_OK) {
        cli_error("maxflow", st, "solve of %s failed", args->input);
        goto done;
    }
    print_stats(args, &stats, read_ms);
    if (args->verify) {
        int64_t cut = 0;
        st = gcut_grid_verify(grid, labels, flow, &cut);
        if (st != GCUT_OK) {
            cli_error("maxflow", st, "%s", args->input);
            goto done;
        }
        if (!args->quiet)
            printf("c verify: ok (cut capacity %" PRId64 ")\n", cut);
    }
    printf("s %" PRId64 "\n", flow);
    fflush(stdout);
    code = args->cut_path != NULL ? write_grid_cut(args->cut_path, labels, n) : 0;
done:
    gcut_free(labels);
    gcut_grid_free(grid);
    return code;
}

int cli_cmd_maxflow(int argc, char **argv) {
    maxflow_args args;
    int code = parse_args(argc, argv, &args);
    if (code >= 0)
        return code;
    gcut_options options;
    gcut_options_init(&options);
    options.solver = args.solver;
    options.threads = args.threads;
    int is_grid = 0;
    if (prepare_input(&args, &is_grid) != 0)
        return 1;
    return is_grid ? run_grid(&args, &options) : run_graph(&args, &options);
}
