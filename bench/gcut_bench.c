/* gcut_bench.c - the benchmark driver (bench/README.md): solvers on the synthetic segmentation
 * grids of Hussein et al. 2007 (VII), 3D volumes and general graphs; checks that all flows agree
 * and every cut certifies its flow; prints medians as markdown and/or CSV. */
#define _POSIX_C_SOURCE 200809L

#include "gcut.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_INSTANCES 64
#define MAX_SOLVERS 8
#define MAX_REPEATS 101

/* The 2D sizes, ordered by pixel count. */
static const int64_t standard_sizes[][2] = {{320, 240},   {512, 512},   {640, 480},
                                            {1024, 1024}, {1280, 720},  {1920, 1080},
                                            {2048, 2048}, {2560, 1440}, {3840, 2160}};
static const int64_t standard_volumes[] = {128, 256, 512};

typedef enum { KIND_SYNTH, KIND_RANDOM, KIND_LAYERED } instance_kind;

typedef struct instance {
    instance_kind kind;
    gcut_synth_level level;
    int64_t width, height, depth; /* synth grids; general graphs use width only (nodes) */
    char name[64];
} instance;

typedef struct config {
    instance instances[MAX_INSTANCES];
    int num_instances;
    const char *solvers[MAX_SOLVERS];
    int num_solvers;
    const char *baseline;
    int repeats;
    int threads;
    int connectivity2d; /* 0 = gcut_synth_grid's default (4) */
    int connectivity3d; /* 0 = 6 */
    uint64_t seed;
    const char *dump_dir;
    const char *csv_path;
    int timeout_s;  /* per solver and instance, all repeats; 0 = none */
    int in_process; /* no child processes (for profilers and debuggers); no timeout then */
    int markdown;
    int verbose;
} config;

/* One solver's medians on one instance. */
typedef struct result {
    const char *solver;
    int ran;            /* 0: skipped or failed, see status/note */
    gcut_status status; /* of the first failing call */
    char note[160];     /* why it was skipped or failed */
    int repeats;        /* repeats that ran */
    double build_ms;    /* medians */
    double solve_ms;
    int64_t flow;
    int flow_stable;    /* all repeats agreed */
    gcut_status verify; /* gcut_grid_verify / gcut_graph_verify on the first repeat's labels */
    gcut_stats stats;   /* of the first repeat (counters) */
} result;

static int mismatches; /* flows that disagree, cuts that fail their certificate */
static int failures;   /* solver errors other than "cannot run here" */
static int idle;       /* instances on which no solver ran */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int count) {
    if (count == 0)
        return 0.0;
    qsort(values, (size_t)count, sizeof *values, cmp_double);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t rng_below(uint64_t *state, int64_t bound) {
    return (int64_t)(splitmix64(state) % (uint64_t)bound);
}

/* ---- general graphs ---------------------------------------------------------------------- */

/* Random sparse graph: every node gets `degree` edges to uniformly random other nodes with
 * capacities in [1, 100] each way, and a random terminal link to s or t on a quarter of the
 * nodes, so that many augmenting paths are long and cross the whole graph. */
static gcut_status make_random_graph(int64_t nodes, uint64_t seed, gcut_graph **out) {
    const int degree = 3;
    gcut_status st = gcut_graph_create(nodes, nodes * degree, out);
    if (st != GCUT_OK)
        return st;
    uint64_t rng = seed ^ 0x72616e646f6dull;
    for (int64_t u = 0; u < nodes && st == GCUT_OK; u++) {
        for (int k = 0; k < degree && st == GCUT_OK; k++) {
            int64_t v = rng_below(&rng, nodes);
            if (v == u)
                continue;
            st = gcut_graph_add_edge(*out, u, v, (int32_t)(1 + rng_below(&rng, 100)),
                                     (int32_t)(1 + rng_below(&rng, 100)));
        }
        int64_t roll = rng_below(&rng, 8);
        if (st == GCUT_OK && roll == 0)
            st = gcut_graph_add_tweights(*out, u, (int32_t)(1 + rng_below(&rng, 1000)), 0);
        else if (st == GCUT_OK && roll == 1)
            st = gcut_graph_add_tweights(*out, u, 0, (int32_t)(1 + rng_below(&rng, 1000)));
    }
    if (st != GCUT_OK) {
        gcut_graph_free(*out);
        *out = NULL;
    }
    return st;
}

/* Layered graph (the DIMACS "washington line" family): layers of `width` nodes, the source
 * feeds the first layer, the last layer drains to the sink, and each node sends three arcs to
 * random nodes of the next layer. Paths are long (one step per layer) and bottlenecks move
 * from layer to layer, which is hard for augmenting paths and for push-relabel alike. */
static gcut_status make_layered_graph(int64_t nodes, uint64_t seed, gcut_graph **out) {
    int64_t width = 1;
    while (width * width < nodes)
        width++;
    int64_t layers = nodes / width;
    if (layers < 2)
        layers = 2;
    int64_t total = layers * width;
    gcut_status st = gcut_graph_create(total, total * 3, out);
    if (st != GCUT_OK)
        return st;
    uint64_t rng = seed ^ 0x6c6179657265ull;
    for (int64_t x = 0; x < width && st == GCUT_OK; x++) {
        st = gcut_graph_add_tweights(*out, x, (int32_t)(1 + rng_below(&rng, 1000)), 0);
        if (st == GCUT_OK)
            st = gcut_graph_add_tweights(*out, (layers - 1) * width + x, 0,
                                         (int32_t)(1 + rng_below(&rng, 1000)));
    }
    for (int64_t layer = 0; layer + 1 < layers && st == GCUT_OK; layer++)
        for (int64_t x = 0; x < width && st == GCUT_OK; x++)
            for (int k = 0; k < 3 && st == GCUT_OK; k++) {
                int64_t u = layer * width + x;
                int64_t v = (layer + 1) * width + rng_below(&rng, width);
                st = gcut_graph_add_edge(*out, u, v, (int32_t)(1 + rng_below(&rng, 100)), 0);
            }
    if (st != GCUT_OK) {
        gcut_graph_free(*out);
        *out = NULL;
    }
    return st;
}

/* ---- dumping instances for outside solvers ------------------------------------------------ */

static int make_dir(const char *path) {
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return 0;
    fprintf(stderr, "gcut_bench: cannot create directory %s: %s\n", path, strerror(errno));
    return -1;
}

/* Write count int32 values as a NumPy .npy file (format 1.0, little-endian, C order) of the
 * given shape, so that Python reads the instance with numpy.load and no gcut code. */
static int write_npy(const char *path, const int32_t *values, int ndim, const int64_t *shape) {
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe != 1) {
        fprintf(stderr, "gcut_bench: --dump-dir needs a little-endian host\n");
        return -1;
    }
    char header[128];
    int len =
        snprintf(header, sizeof header, "{'descr': '<i4', 'fortran_order': False, 'shape': (");
    int64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        len += snprintf(header + len, sizeof header - (size_t)len, "%" PRId64 ", ", shape[i]);
        count *= shape[i];
    }
    len += snprintf(header + len, sizeof header - (size_t)len, "), }");
    /* The preamble (10 bytes) plus the header, padded with spaces and ended by '\n', must be a
     * multiple of 64 bytes. */
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    FILE *file = fopen(path, "wb");
    if (file == NULL) {
        fprintf(stderr, "gcut_bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint16_t header_len = (uint16_t)(len + pad + 1);
    unsigned char preamble[10] = {0x93,
                                  'N',
                                  'U',
                                  'M',
                                  'P',
                                  'Y',
                                  1,
                                  0,
                                  (unsigned char)(header_len & 0xff),
                                  (unsigned char)(header_len >> 8)};
    int ok = fwrite(preamble, 1, sizeof preamble, file) == sizeof preamble &&
             fwrite(header, 1, (size_t)len, file) == (size_t)len;
    for (int i = 0; ok && i < pad; i++)
        ok = fputc(' ', file) != EOF;
    ok = ok && fputc('\n', file) != EOF &&
         fwrite(values, sizeof *values, (size_t)count, file) == (size_t)count;
    ok = (fclose(file) == 0) && ok;
    if (!ok)
        fprintf(stderr, "gcut_bench: error writing %s: %s\n", path, strerror(errno));
    return ok ? 0 : -1;
}

/* DIR/NAME/{source,sink,dir<d>}.npy and meta.json (shape, connectivity, offsets, node and edge
 * counts, each solver's flow), plus DIR/NAME/problem.grid in the gcut grid format where this
 * build writes it. */
static int dump_grid(const config *cfg, const instance *inst, gcut_grid *grid,
                     const result *results, int num_results) {
    char dir[1024], path[1100];
    snprintf(dir, sizeof dir, "%s/%s", cfg->dump_dir, inst->name);
    if (make_dir(cfg->dump_dir) != 0 || make_dir(dir) != 0)
        return -1;
    int ndim = gcut_grid_ndim(grid);
    int64_t shape[3];
    gcut_grid_shape(grid, shape);
    static const char *const terminal_names[2] = {"source", "sink"};
    for (int t = 0; t < 2; t++) {
        snprintf(path, sizeof path, "%s/%s.npy", dir, terminal_names[t]);
        if (write_npy(path, gcut_grid_terminal_cdata(grid, t), ndim, shape) != 0)
            return -1;
    }
    int dirs = gcut_grid_num_dirs(grid);
    for (int d = 0; d < dirs; d++) {
        snprintf(path, sizeof path, "%s/dir%d.npy", dir, d);
        if (write_npy(path, gcut_grid_dir_cdata(grid, d), ndim, shape) != 0)
            return -1;
    }
    /* Edge count as gcut's conversion makes it: one edge per in-grid neighbour pair. */
    int64_t edges = 0;
    for (int d = 0; d < dirs; d += 2) {
        int offset[3];
        gcut_grid_offset(grid, d, offset);
        int64_t pairs = 1;
        for (int k = 0; k < ndim; k++)
            pairs *= shape[k] - (offset[k] != 0);
        edges += pairs > 0 ? pairs : 0;
    }
    snprintf(path, sizeof path, "%s/meta.json", dir);
    FILE *meta = fopen(path, "w");
    if (meta == NULL) {
        fprintf(stderr, "gcut_bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(meta, "{\n  \"name\": \"%s\",\n  \"level\": \"%s\",\n  \"seed\": %" PRIu64 ",\n",
            inst->name, inst->level == GCUT_SYNTH_HARD ? "hard" : "easy", cfg->seed);
    fprintf(meta, "  \"shape\": [");
    for (int k = 0; k < ndim; k++)
        fprintf(meta, "%s%" PRId64, k ? ", " : "", shape[k]);
    fprintf(meta, "],\n  \"connectivity\": %d,\n  \"offsets\": [", gcut_grid_connectivity(grid));
    for (int d = 0; d < dirs; d++) {
        int offset[3];
        gcut_grid_offset(grid, d, offset);
        fprintf(meta, "%s[", d ? ", " : "");
        for (int k = 0; k < ndim; k++)
            fprintf(meta, "%s%d", k ? ", " : "", offset[k]);
        fprintf(meta, "]");
    }
    fprintf(meta, "],\n  \"nodes\": %" PRId64 ",\n  \"edges\": %" PRId64 ",\n  \"flows\": {",
            gcut_grid_num_nodes(grid), edges);
    int first = 1;
    for (int s = 0; s < num_results; s++) {
        if (!results[s].ran)
            continue;
        fprintf(meta, "%s\"%s\": %" PRId64, first ? "" : ", ", results[s].solver, results[s].flow);
        first = 0;
    }
    fprintf(meta, "}\n}\n");
    if (fclose(meta) != 0) {
        fprintf(stderr, "gcut_bench: error writing %s\n", path);
        return -1;
    }
    snprintf(path, sizeof path, "%s/problem.grid", dir);
    gcut_status st = gcut_grid_write(grid, path);
    if (st != GCUT_OK && st != GCUT_ERR_UNSUPPORTED) {
        fprintf(stderr, "gcut_bench: gcut_grid_write %s: %s\n", path, gcut_last_error());
        return -1;
    }
    return 0;
}

/* General graphs go out as DIMACS (DIR/NAME.max), readable by `gcut maxflow` and most max-flow
 * codes. */
static int dump_graph(const config *cfg, const instance *inst, const gcut_graph *graph) {
    char path[1100];
    if (make_dir(cfg->dump_dir) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/%s.max", cfg->dump_dir, inst->name);
    gcut_status st = gcut_dimacs_write(graph, path);
    if (st != GCUT_OK) {
        fprintf(stderr, "gcut_bench: gcut_dimacs_write %s: %s\n", path, gcut_last_error());
        return -1;
    }
    return 0;
}

/* ---- running solvers --------------------------------------------------------------------- */

/* Run one solver `repeats` times on a grid (graph == NULL) or a general graph, from scratch
 * each time, and keep the medians. The first repeat's cut is checked with the certificate. */
static void run_solver(const config *cfg, gcut_grid *grid, gcut_graph *graph, result *res) {
    gcut_solver_info info;
    if (gcut_solver_find(res->solver, &info) != GCUT_OK) {
        snprintf(res->note, sizeof res->note, "not in this build");
        return;
    }
    if (!info.available) {
        snprintf(res->note, sizeof res->note, "not available here (no GPU)");
        return;
    }
    if (graph != NULL && !(info.flags & GCUT_TAKES_GRAPH)) {
        snprintf(res->note, sizeof res->note, "grids only");
        return;
    }
    int64_t nodes = grid ? gcut_grid_num_nodes(grid) : gcut_graph_num_nodes(graph);
    uint8_t *labels = malloc((size_t)(nodes > 0 ? nodes : 1));
    if (labels == NULL) {
        res->status = GCUT_ERR_NOMEM;
        snprintf(res->note, sizeof res->note, "no memory for %" PRId64 " labels", nodes);
        failures++;
        return;
    }
    gcut_options options;
    gcut_options_init(&options);
    options.solver = res->solver;
    options.threads = cfg->threads;
    options.warm = 0;
    options.verbose = cfg->verbose;
    double build[MAX_REPEATS], solve[MAX_REPEATS];
    res->flow_stable = 1;
    for (int r = 0; r < cfg->repeats; r++) {
        gcut_stats stats;
        memset(&stats, 0, sizeof stats);
        int64_t flow = 0;
        gcut_status st = grid ? gcut_grid_solve(grid, &options, &flow, labels, &stats)
                              : gcut_graph_solve(graph, &options, &flow, labels, &stats);
        if (st != GCUT_OK) {
            res->status = st;
            snprintf(res->note, sizeof res->note, "%s: %s", gcut_status_name(st),
                     gcut_last_error());
            if (st != GCUT_ERR_NO_DEVICE && st != GCUT_ERR_UNSUPPORTED)
                failures++;
            break;
        }
        build[r] = stats.build_ms;
        solve[r] = stats.solve_ms;
        if (r == 0) {
            res->flow = flow;
            res->stats = stats;
            res->verify = grid ? gcut_grid_verify(grid, labels, flow, NULL)
                               : gcut_graph_verify(graph, labels, flow, NULL);
            if (res->verify != GCUT_OK) {
                fprintf(stderr, "gcut_bench: MISMATCH: %s's cut fails its certificate: %s\n",
                        res->solver, gcut_last_error());
                mismatches++;
            }
        } else if (flow != res->flow) {
            fprintf(stderr,
                    "gcut_bench: MISMATCH: %s gave flow %" PRId64 " on repeat %d, %" PRId64
                    " on the first\n",
                    res->solver, flow, r + 1, res->flow);
            res->flow_stable = 0;
            mismatches++;
        }
        res->repeats = r + 1;
    }
    free(labels);
    if (res->repeats == cfg->repeats) {
        res->ran = 1;
        res->build_ms = median(build, res->repeats);
        res->solve_ms = median(solve, res->repeats);
    }
}

/* What a child process sends back: its result and what it added to the global counters. */
typedef struct child_report {
    result res;
    int mismatches;
    int failures;
} child_report;

/* Run the solver in a forked child, so that a solver which hangs or crashes (a deadlock in a
 * parallel region, a segfault) costs one table row instead of the whole run; the instance is
 * shared copy-on-write. The parent never starts solver threads nor touches the GPU (even the
 * availability check runs in the child), so each child's OpenMP and CUDA runtimes start clean:
 * CUDA cannot be used in a child forked after the parent initialised it. */
static void run_solver_isolated(const config *cfg, gcut_grid *grid, gcut_graph *graph,
                                result *res) {
    int fds[2];
    if (cfg->in_process) {
        run_solver(cfg, grid, graph, res);
        return;
    }
    if (pipe(fds) != 0) {
        fprintf(stderr, "gcut_bench: pipe failed (%s); running %s in-process\n", strerror(errno),
                res->solver);
        run_solver(cfg, grid, graph, res);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        fprintf(stderr, "gcut_bench: fork failed (%s); running %s in-process\n", strerror(errno),
                res->solver);
        run_solver(cfg, grid, graph, res);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        child_report report;
        memset(&report, 0, sizeof report);
        run_solver(cfg, grid, graph, res);
        report.res = *res;
        report.mismatches = mismatches;
        report.failures = failures;
        const char *bytes = (const char *)&report;
        size_t sent = 0;
        while (sent < sizeof report) {
            ssize_t n = write(fds[1], bytes + sent, sizeof report - sent);
            if (n <= 0 && errno != EINTR)
                _exit(1);
            sent += n > 0 ? (size_t)n : 0;
        }
        _exit(0);
    }
    close(fds[1]);
    child_report report;
    char *bytes = (char *)&report;
    size_t got = 0;
    int timed_out = 0;
    double deadline = now_ms() + cfg->timeout_s * 1e3;
    while (got < sizeof report) {
        int wait_ms = -1;
        if (cfg->timeout_s > 0) {
            double left = deadline - now_ms();
            if (left <= 0) {
                timed_out = 1;
                break;
            }
            wait_ms = left > 1e9 ? 1000000000 : (int)left + 1;
        }
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int ready = poll(&pfd, 1, wait_ms);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            continue; /* the deadline check above ends the wait */
        ssize_t n = read(fds[0], bytes + got, sizeof report - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* the child ended without a full report */
        got += (size_t)n;
    }
    close(fds[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    const char *solver = res->solver;
    if (got == sizeof report) {
        *res = report.res;
        res->solver = solver;
        /* The child started from this process's counters. */
        mismatches = report.mismatches;
        failures = report.failures;
        return;
    }
    failures++;
    res->ran = 0;
    if (timed_out)
        snprintf(res->note, sizeof res->note, "TIMEOUT: killed after %d s (--timeout)",
                 cfg->timeout_s);
    else if (WIFSIGNALED(status))
        snprintf(res->note, sizeof res->note, "CRASHED: signal %d", WTERMSIG(status));
    else
        snprintf(res->note, sizeof res->note, "CRASHED: exit status %d", WEXITSTATUS(status));
    fprintf(stderr, "gcut_bench: %s: %s\n", res->solver, res->note);
}

/* ---- output ------------------------------------------------------------------------------ */

static void format_ratio(char *out, size_t size, double baseline_ms, double ms) {
    if (baseline_ms > 0 && ms > 0)
        snprintf(out, size, "%.2f", baseline_ms / ms);
    else
        snprintf(out, size, "-");
}

static void print_markdown_header(void) {
    printf("| instance | nodes | construct ms | solver | build ms | solve ms | flow | x bk solve | "
           "x bk total | sweeps | global relabels | MB/sweep | augmentations | cut |\n");
    printf("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
}

static void emit_rows(const config *cfg, FILE *csv, const instance *inst, int64_t nodes,
                      double construct_ms, const result *results, int num_results) {
    const result *base = NULL;
    for (int s = 0; s < num_results; s++)
        if (results[s].ran && strcmp(results[s].solver, cfg->baseline) == 0)
            base = &results[s];
    for (int s = 0; s < num_results; s++) {
        const result *res = &results[s];
        char solve_ratio[32], total_ratio[32];
        format_ratio(solve_ratio, sizeof solve_ratio, base && res->ran ? base->solve_ms : 0,
                     res->solve_ms);
        format_ratio(total_ratio, sizeof total_ratio,
                     base && res->ran ? base->build_ms + base->solve_ms : 0,
                     res->build_ms + res->solve_ms);
        /* Device bytes per sweep, for solvers that report it (cuda-grid). */
        char mb_per_sweep[32] = "-";
        if (res->ran && res->stats.bytes_per_sweep > 0)
            snprintf(mb_per_sweep, sizeof mb_per_sweep, "%.1f", res->stats.bytes_per_sweep / 1e6);
        const char *cut = !res->ran                ? "-"
                          : res->verify != GCUT_OK ? "FAIL"
                          : !res->flow_stable      ? "UNSTABLE"
                                                   : "ok";
        if (cfg->markdown) {
            if (res->ran)
                printf("| %s | %" PRId64 " | %.1f | %s | %.1f | %.1f | %" PRId64
                       " | %s | %s | %" PRId64 " | %" PRId64 " | %s | %" PRId64 " | %s |\n",
                       inst->name, nodes, construct_ms, res->solver, res->build_ms, res->solve_ms,
                       res->flow, solve_ratio, total_ratio, res->stats.sweeps,
                       res->stats.global_relabels, mb_per_sweep, res->stats.augmentations, cut);
            else
                printf("| %s | %" PRId64 " | %.1f | %s | %s | | | | | | | | | - |\n", inst->name,
                       nodes, construct_ms, res->solver, res->note);
        }
        if (csv) {
            /* Notes can hold commas and quotes: keep the CSV one field per column. */
            char note[sizeof res->note];
            snprintf(note, sizeof note, "%s", res->note);
            for (char *c = note; *c; c++)
                if (*c == ',' || *c == '"' || *c == '\n')
                    *c = ';';
            fprintf(csv,
                    "%s,%s,%s,%" PRId64 ",%.3f,%s,%s,%d,%.3f,%.3f,%" PRId64 ",%s,%s,%" PRId64
                    ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%.0f,%s,%s\n",
                    inst->name,
                    inst->kind == KIND_SYNTH    ? (inst->depth > 1 ? "volume" : "image")
                    : inst->kind == KIND_RANDOM ? "random"
                                                : "layered",
                    inst->kind == KIND_SYNTH ? (inst->level == GCUT_SYNTH_HARD ? "hard" : "easy")
                                             : "-",
                    nodes, construct_ms, res->solver, res->ran ? "ok" : "skipped", res->repeats,
                    res->build_ms, res->solve_ms, res->flow, solve_ratio, total_ratio,
                    res->stats.sweeps, res->stats.global_relabels, res->stats.augmentations,
                    res->stats.pushes, res->stats.bytes_per_sweep, cut, note);
            fflush(csv);
        }
    }
    fflush(stdout);
}

/* Every solver that ran must agree with the first one that ran. */
static void check_flows(const instance *inst, const result *results, int num_results) {
    const result *ref = NULL;
    for (int s = 0; s < num_results; s++) {
        if (!results[s].ran)
            continue;
        if (ref == NULL) {
            ref = &results[s];
        } else if (results[s].flow != ref->flow) {
            fprintf(stderr,
                    "gcut_bench: MISMATCH on %s: %s flow %" PRId64 " but %s flow %" PRId64 "\n",
                    inst->name, results[s].solver, results[s].flow, ref->solver, ref->flow);
            mismatches++;
        }
    }
}

static void run_instance(const config *cfg, FILE *csv, const instance *inst) {
    result results[MAX_SOLVERS];
    memset(results, 0, sizeof results);
    for (int s = 0; s < cfg->num_solvers; s++)
        results[s].solver = cfg->solvers[s];
    gcut_grid *grid = NULL;
    gcut_graph *graph = NULL;
    gcut_status st;
    fprintf(stderr, "gcut_bench: %s: building\n", inst->name);
    double t0 = now_ms();
    int connectivity = inst->depth > 1 ? cfg->connectivity3d : cfg->connectivity2d;
    if (inst->kind == KIND_SYNTH)
        st = gcut_synth_grid(inst->width, inst->height, inst->depth, cfg->seed, inst->level,
                             connectivity, &grid);
    else if (inst->kind == KIND_RANDOM)
        st = make_random_graph(inst->width, cfg->seed, &graph);
    else
        st = make_layered_graph(inst->width, cfg->seed, &graph);
    double construct_ms = now_ms() - t0;
    if (st != GCUT_OK) {
        fprintf(stderr, "gcut_bench: %s: cannot build the instance: %s: %s\n", inst->name,
                gcut_status_name(st), gcut_last_error());
        for (int s = 0; s < cfg->num_solvers; s++)
            snprintf(results[s].note, sizeof results[s].note, "instance not built: %s",
                     gcut_status_name(st));
        failures++;
        emit_rows(cfg, csv, inst, 0, construct_ms, results, cfg->num_solvers);
        return;
    }
    int64_t nodes = grid ? gcut_grid_num_nodes(grid) : gcut_graph_num_nodes(graph);
    for (int s = 0; s < cfg->num_solvers; s++) {
        fprintf(stderr, "gcut_bench: %s: %s x%d\n", inst->name, cfg->solvers[s], cfg->repeats);
        run_solver_isolated(cfg, grid, graph, &results[s]);
        if (!results[s].ran)
            fprintf(stderr, "gcut_bench: %s: %s skipped: %s\n", inst->name, cfg->solvers[s],
                    results[s].note);
    }
    int ran = 0;
    for (int s = 0; s < cfg->num_solvers; s++)
        ran += results[s].ran;
    if (ran == 0)
        idle++;
    check_flows(inst, results, cfg->num_solvers);
    emit_rows(cfg, csv, inst, nodes, construct_ms, results, cfg->num_solvers);
    if (cfg->dump_dir && grid && dump_grid(cfg, inst, grid, results, cfg->num_solvers) != 0)
        failures++;
    if (cfg->dump_dir && graph && dump_graph(cfg, inst, graph) != 0)
        failures++;
    gcut_grid_free(grid);
    gcut_graph_free(graph);
}

/* ---- command line ------------------------------------------------------------------------ */

static void usage(FILE *out) {
    fprintf(out,
            "usage: gcut_bench [options]\n"
            "  --sizes LIST        2D synthetic images: all | none | WxH,WxH,... (default all:\n"
            "                      320x240 512x512 640x480 1024x1024 1280x720 1920x1080\n"
            "                      2048x2048 2560x1440 3840x2160)\n"
            "  --volumes LIST      3D synthetic volumes N^3: all (128,256,512) | none | N,N,...\n"
            "                      (default none)\n"
            "  --levels LIST       easy,hard (default both)\n"
            "  --graphs LIST       general graphs: random:NODES,layered:NODES (default none)\n"
            "  --solvers LIST      solver names (default bk,cpu-pr,cuda-grid); unavailable ones\n"
            "                      are reported as skipped\n"
            "  --baseline NAME     speed-ups are against this solver (default bk)\n"
            "  --repeats N         solves per solver and instance; medians reported (default 5)\n"
            "  --threads N         CPU threads for parallel solvers (default 0 = all cores)\n"
            "  --timeout S         seconds for all repeats of one solver on one instance; a\n"
            "                      solver that runs longer (or crashes) is killed and reported,\n"
            "                      and the run goes on (default 900; 0 = no limit)\n"
            "  --in-process        run solvers in this process, not in a child each (for\n"
            "                      profilers and debuggers); no --timeout then\n"
            "  --connectivity LIST 4 or 8 for images, 6 or 26 for volumes, e.g. 8,26\n"
            "                      (default 4,6)\n"
            "  --seed S            instance seed (default 1; other seeds add -sS to names)\n"
            "  --dump-dir DIR      write each grid instance as DIR/NAME/*.npy + meta.json\n"
            "  --csv FILE          also write the rows as CSV ('-' = stdout, no markdown then)\n"
            "  --no-markdown       do not print the markdown table\n"
            "  --verbose           solver progress on stderr\n"
            "Exit status: 0 all good; 1 a solver or instance failed, or no solver ran on an\n"
            "instance; 2 MISMATCH (flows differ\n"
            "or a cut fails its certificate); 64 bad usage.\n");
}

static int parse_int64(const char *text, int64_t *value) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 0)
        return -1;
    *value = (int64_t)v;
    return 0;
}

static int add_instance(config *cfg, instance inst) {
    if (cfg->num_instances == MAX_INSTANCES) {
        fprintf(stderr, "gcut_bench: more than %d instances\n", MAX_INSTANCES);
        return -1;
    }
    cfg->instances[cfg->num_instances++] = inst;
    return 0;
}

/* Split a comma list in place; calls item(cfg, token) for each. */
static int for_each_item(config *cfg, char *list, int (*item)(config *, char *)) {
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save))
        if (item(cfg, tok) != 0)
            return -1;
    return 0;
}

static int64_t parsed_sizes[MAX_INSTANCES][3];
static int num_parsed_sizes;

static int add_size(config *cfg, char *tok) {
    (void)cfg;
    int64_t w, h;
    char *x = strchr(tok, 'x');
    if (num_parsed_sizes == MAX_INSTANCES || x == NULL)
        goto bad;
    *x = '\0';
    if (parse_int64(tok, &w) != 0 || parse_int64(x + 1, &h) != 0 || w < 1 || h < 1)
        goto bad;
    parsed_sizes[num_parsed_sizes][0] = w;
    parsed_sizes[num_parsed_sizes][1] = h;
    parsed_sizes[num_parsed_sizes][2] = 1;
    num_parsed_sizes++;
    return 0;
bad:
    fprintf(stderr, "gcut_bench: --sizes: '%s' is not WxH\n", tok);
    return -1;
}

static int add_volume(config *cfg, char *tok) {
    (void)cfg;
    int64_t n;
    if (num_parsed_sizes == MAX_INSTANCES || parse_int64(tok, &n) != 0 || n < 1) {
        fprintf(stderr, "gcut_bench: --volumes: '%s' is not a side length\n", tok);
        return -1;
    }
    parsed_sizes[num_parsed_sizes][0] = n;
    parsed_sizes[num_parsed_sizes][1] = n;
    parsed_sizes[num_parsed_sizes][2] = n;
    num_parsed_sizes++;
    return 0;
}

static int add_graph(config *cfg, char *tok) {
    instance inst = {0};
    char *colon = strchr(tok, ':');
    if (colon == NULL)
        goto bad;
    *colon = '\0';
    if (strcmp(tok, "random") == 0)
        inst.kind = KIND_RANDOM;
    else if (strcmp(tok, "layered") == 0)
        inst.kind = KIND_LAYERED;
    else
        goto bad;
    if (parse_int64(colon + 1, &inst.width) != 0 || inst.width < 4)
        goto bad;
    snprintf(inst.name, sizeof inst.name, "%s-%" PRId64, tok, inst.width);
    return add_instance(cfg, inst);
bad:
    fprintf(stderr, "gcut_bench: --graphs: '%s' is not random:NODES or layered:NODES (>= 4)\n",
            tok);
    return -1;
}

static int add_solver(config *cfg, char *tok) {
    if (cfg->num_solvers == MAX_SOLVERS) {
        fprintf(stderr, "gcut_bench: more than %d solvers\n", MAX_SOLVERS);
        return -1;
    }
    cfg->solvers[cfg->num_solvers++] = tok;
    return 0;
}

static int add_connectivity(config *cfg, char *tok) {
    int64_t c;
    if (parse_int64(tok, &c) == 0 && (c == 4 || c == 8))
        cfg->connectivity2d = (int)c;
    else if (parse_int64(tok, &c) == 0 && (c == 6 || c == 26))
        cfg->connectivity3d = (int)c;
    else {
        fprintf(stderr, "gcut_bench: --connectivity: '%s' is not 4, 8, 6 or 26\n", tok);
        return -1;
    }
    return 0;
}

static int level_mask;

static int add_level(config *cfg, char *tok) {
    (void)cfg;
    if (strcmp(tok, "easy") == 0)
        level_mask |= 1;
    else if (strcmp(tok, "hard") == 0)
        level_mask |= 2;
    else {
        fprintf(stderr, "gcut_bench: --levels: '%s' is not easy or hard\n", tok);
        return -1;
    }
    return 0;
}

/* Images and volumes in the order given, each at every chosen level. */
static int add_synth_instances(config *cfg) {
    for (int i = 0; i < num_parsed_sizes; i++)
        for (int level = 0; level < 2; level++) {
            if (!(level_mask & (1 << level)))
                continue;
            instance inst = {0};
            inst.kind = KIND_SYNTH;
            inst.level = level ? GCUT_SYNTH_HARD : GCUT_SYNTH_EASY;
            inst.width = parsed_sizes[i][0];
            inst.height = parsed_sizes[i][1];
            inst.depth = parsed_sizes[i][2];
            if (inst.depth > 1)
                snprintf(inst.name, sizeof inst.name, "%s-%" PRId64 "x%" PRId64 "x%" PRId64,
                         level ? "hard" : "easy", inst.width, inst.height, inst.depth);
            else
                snprintf(inst.name, sizeof inst.name, "%s-%" PRId64 "x%" PRId64,
                         level ? "hard" : "easy", inst.width, inst.height);
            if (add_instance(cfg, inst) != 0)
                return -1;
        }
    return 0;
}

static void print_machine(const config *cfg) {
    char model[256] = "unknown CPU";
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (cpuinfo) {
        char line[512];
        while (fgets(line, sizeof line, cpuinfo))
            if (strncmp(line, "model name", 10) == 0) {
                char *colon = strchr(line, ':');
                if (colon) {
                    snprintf(model, sizeof model, "%s", colon + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        fclose(cpuinfo);
    }
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("gcut_bench %s: %s, %ld cores, %s; median of %d solves per solver; threads %d; "
           "seed %" PRIu64 "\n\n",
           gcut_version_string(), model, sysconf(_SC_NPROCESSORS_ONLN), date, cfg->repeats,
           cfg->threads, cfg->seed);
}

int main(int argc, char **argv) {
    static config cfg;
    cfg.baseline = "bk";
    cfg.repeats = 5;
    cfg.timeout_s = 900;
    cfg.seed = 1;
    cfg.markdown = 1;
    char default_solvers[] = "bk,cpu-pr,cuda-grid";
    char *connectivity = NULL;
    char *sizes = NULL, *volumes = NULL, *levels = NULL, *graphs = NULL, *solvers = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t number;
        int takes_value = 1;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(arg, "--no-markdown") == 0) {
            cfg.markdown = 0, takes_value = 0;
        } else if (strcmp(arg, "--in-process") == 0) {
            cfg.in_process = 1, takes_value = 0;
        } else if (strcmp(arg, "--verbose") == 0) {
            cfg.verbose = 1, takes_value = 0;
        } else if (value == NULL) {
            fprintf(stderr, "gcut_bench: %s needs a value (or is unknown; see --help)\n", arg);
            return 64;
        } else if (strcmp(arg, "--sizes") == 0) {
            sizes = argv[i + 1];
        } else if (strcmp(arg, "--volumes") == 0) {
            volumes = argv[i + 1];
        } else if (strcmp(arg, "--levels") == 0) {
            levels = argv[i + 1];
        } else if (strcmp(arg, "--graphs") == 0) {
            graphs = argv[i + 1];
        } else if (strcmp(arg, "--solvers") == 0) {
            solvers = argv[i + 1];
        } else if (strcmp(arg, "--connectivity") == 0) {
            connectivity = argv[i + 1];
        } else if (strcmp(arg, "--baseline") == 0) {
            cfg.baseline = value;
        } else if (strcmp(arg, "--dump-dir") == 0) {
            cfg.dump_dir = value;
        } else if (strcmp(arg, "--csv") == 0) {
            cfg.csv_path = value;
        } else if (strcmp(arg, "--repeats") == 0 || strcmp(arg, "--threads") == 0 ||
                   strcmp(arg, "--seed") == 0 || strcmp(arg, "--timeout") == 0) {
            if (parse_int64(value, &number) != 0) {
                fprintf(stderr, "gcut_bench: %s: '%s' is not a non-negative integer\n", arg, value);
                return 64;
            }
            if (strcmp(arg, "--repeats") == 0) {
                if (number < 1 || number > MAX_REPEATS) {
                    fprintf(stderr, "gcut_bench: --repeats must be 1..%d\n", MAX_REPEATS);
                    return 64;
                }
                cfg.repeats = (int)number;
            } else if (strcmp(arg, "--threads") == 0) {
                cfg.threads = (int)number;
            } else if (strcmp(arg, "--timeout") == 0) {
                cfg.timeout_s = number > 86400 ? 86400 : (int)number;
            } else {
                cfg.seed = (uint64_t)number;
            }
        } else {
            fprintf(stderr, "gcut_bench: unknown option %s (see --help)\n", arg);
            return 64;
        }
        i += takes_value;
    }

    if (connectivity != NULL && for_each_item(&cfg, connectivity, add_connectivity) != 0)
        return 64;
    char all_levels[] = "easy,hard";
    if (for_each_item(&cfg, levels ? levels : all_levels, add_level) != 0)
        return 64;
    if (sizes == NULL || strcmp(sizes, "all") == 0) {
        for (size_t k = 0; k < sizeof standard_sizes / sizeof standard_sizes[0]; k++) {
            parsed_sizes[num_parsed_sizes][0] = standard_sizes[k][0];
            parsed_sizes[num_parsed_sizes][1] = standard_sizes[k][1];
            parsed_sizes[num_parsed_sizes][2] = 1;
            num_parsed_sizes++;
        }
    } else if (strcmp(sizes, "none") != 0 && for_each_item(&cfg, sizes, add_size) != 0) {
        return 64;
    }
    if (volumes != NULL && strcmp(volumes, "all") == 0) {
        for (size_t k = 0; k < sizeof standard_volumes / sizeof standard_volumes[0]; k++) {
            int64_t n = standard_volumes[k];
            parsed_sizes[num_parsed_sizes][0] = n;
            parsed_sizes[num_parsed_sizes][1] = n;
            parsed_sizes[num_parsed_sizes][2] = n;
            num_parsed_sizes++;
        }
    } else if (volumes != NULL && strcmp(volumes, "none") != 0 &&
               for_each_item(&cfg, volumes, add_volume) != 0) {
        return 64;
    }
    if (add_synth_instances(&cfg) != 0)
        return 64;
    if (graphs != NULL && strcmp(graphs, "none") != 0 &&
        for_each_item(&cfg, graphs, add_graph) != 0)
        return 64;
    if (for_each_item(&cfg, solvers ? solvers : default_solvers, add_solver) != 0)
        return 64;
    if (cfg.num_instances == 0) {
        fprintf(stderr, "gcut_bench: no instances chosen\n");
        return 64;
    }
    /* Another seed is another instance: say so in its name, so that dumps and tables of
     * several seeds do not collide. */
    for (int i = 0; cfg.seed != 1 && i < cfg.num_instances; i++) {
        size_t len = strlen(cfg.instances[i].name);
        snprintf(cfg.instances[i].name + len, sizeof cfg.instances[i].name - len, "-s%" PRIu64,
                 cfg.seed);
    }

    FILE *csv = NULL;
    if (cfg.csv_path != NULL) {
        if (strcmp(cfg.csv_path, "-") == 0) {
            csv = stdout;
            cfg.markdown = 0;
        } else if ((csv = fopen(cfg.csv_path, "w")) == NULL) {
            fprintf(stderr, "gcut_bench: cannot write %s: %s\n", cfg.csv_path, strerror(errno));
            return 1;
        }
        fprintf(csv, "instance,kind,level,nodes,construct_ms,solver,status,repeats,build_ms,"
                     "solve_ms,flow,speedup_solve,speedup_total,sweeps,global_relabels,"
                     "augmentations,pushes,bytes_per_sweep,cut,note\n");
    }
    if (cfg.markdown) {
        print_machine(&cfg);
        print_markdown_header();
    }
    for (int i = 0; i < cfg.num_instances; i++)
        run_instance(&cfg, csv, &cfg.instances[i]);
    if (csv != NULL && csv != stdout)
        fclose(csv);
    if (mismatches > 0) {
        fprintf(stderr,
                "gcut_bench: *** MISMATCH: %d flow disagreement(s) or failed cut "
                "certificate(s); see above ***\n",
                mismatches);
        return 2;
    }
    if (idle > 0)
        fprintf(stderr, "gcut_bench: no solver ran on %d instance(s)\n", idle);
    return failures > 0 || idle > 0 ? 1 : 0;
}
