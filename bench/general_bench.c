/* general_bench.c - cuda-general against bk (and cuda-grid on grids) on general graphs made in
 * memory (bench/general_gen.h: GENRMF, Washington RLG, random) and synthetic segmentation grids
 * written as general graphs; solvers rotate order every repeat, flows must agree, every first
 * cut is checked by the certificate; medians of build (upload + device CSR) and solve. */
#define _POSIX_C_SOURCE 200809L

#include "general_gen.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SOLVERS 8
#define MAX_REPEATS 31

static int mismatches;

/* src/core/registry.c (internal): the layout of this thread's last cuda-general build (0: CSR;
 * K > 0: padded to degree K). */
int gcut__cudageneral_last_layout(void);

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct row {
    const char *solver;
    int ran, runs;
    double build[MAX_REPEATS], solve[MAX_REPEATS];
    int64_t flow, sweeps, relabels;
    char note[200];
    int cut_ok;
    int layout; /* cuda-general: the layout of its first run (-1: not cuda-general) */
} row;

/* Build instance `spec`: random:N:M, hub:N:M:D (random:N:M and node 0 joined to D more random
 * nodes, capacities in [1, 100] both ways), genrmf:A:B, rlg:ROWS:LEVELS,
 * grid:WxH[xD]:easy|hard. */
static gcut_status make_instance(const char *spec, uint64_t seed, gcut_graph **graph,
                                 gcut_grid **grid) {
    *graph = NULL;
    *grid = NULL;
    long long a = 0, b = 0, c = 1;
    char level[16] = "hard";
    if (sscanf(spec, "hub:%lld:%lld:%lld", &a, &b, &c) == 3) {
        gcut_status st = gen_random(a, b, seed, graph);
        uint64_t s = seed ^ 0x5bd1e995u;
        for (long long k = 0; k < c && st == GCUT_OK; k++)
            st =
                gcut_graph_add_edge(*graph, 0, gen_range(&s, 1, a - 1),
                                    (int32_t)gen_range(&s, 1, 100), (int32_t)gen_range(&s, 1, 100));
        return st;
    }
    if (sscanf(spec, "random:%lld:%lld", &a, &b) == 2)
        return gen_random(a, b, seed, graph);
    if (sscanf(spec, "genrmf:%lld:%lld", &a, &b) == 2)
        return gen_genrmf(a, b, 1,
                          10000 > INT32_MAX / (a * a) ? (int32_t)(INT32_MAX / (a * a)) : 10000,
                          seed, graph);
    if (sscanf(spec, "rlg:%lld:%lld", &a, &b) == 2)
        return gen_washington_rlg(a, b, 10000, seed, graph);
    int got = sscanf(spec, "grid:%lldx%lldx%lld:%15s", &a, &b, &c, level);
    if (got < 4) {
        c = 1;
        got = sscanf(spec, "grid:%lldx%lld:%15s", &a, &b, level);
        if (got < 2)
            return GCUT_ERR_INVALID_ARG;
    }
    gcut_status st = gcut_synth_grid(
        a, b, c, seed, strcmp(level, "easy") == 0 ? GCUT_SYNTH_EASY : GCUT_SYNTH_HARD, 0, grid);
    if (st == GCUT_OK)
        st = gcut_grid_to_graph(*grid, graph);
    return st;
}

/* A solver spec is NAME or NAME+VAR=VALUE+...: the variables (the solvers' knobs, e.g.
 * cuda-general+GCUT_CUDAGENERAL_HYBRID=0) are set for this solver's runs only, so that two
 * settings of one solver can be timed in the same run. Returns the number set. */
static int spec_env(const char *spec, char *name, size_t name_size, char vars[][128], int max) {
    snprintf(name, name_size, "%s", spec);
    char *plus = strchr(name, '+');
    int count = 0;
    while (plus != NULL && count < max) {
        *plus = '\0';
        char *next = strchr(plus + 1, '+');
        if (next)
            *next = '\0';
        snprintf(vars[count], 128, "%s", plus + 1);
        char *eq = strchr(vars[count], '=');
        if (eq) {
            *eq = '\0';
            setenv(vars[count], eq + 1, 1);
            count++;
        }
        if (next)
            *next = '+';
        plus = next;
    }
    return count;
}

static const char *layout_name(int layout) {
    static char buf[32];
    snprintf(buf, sizeof buf, ", padded %d", layout);
    return buf;
}

static void run_once(row *r, gcut_graph *graph, gcut_grid *grid, uint8_t *labels, int first,
                     int64_t *reference, int verbose) {
    char name[256], vars[8][128];
    const int num_vars = spec_env(r->solver, name, sizeof name, vars, 8);
    gcut_options options;
    gcut_options_init(&options);
    options.solver = name;
    options.warm = 0;
    options.verbose = verbose || getenv("GCUT_BENCH_VERBOSE") != NULL;
    gcut_stats stats;
    memset(&stats, 0, sizeof stats);
    int64_t flow = -1;
    const int on_grid = strcmp(name, "cuda-grid") == 0;
    gcut_status st = on_grid ? gcut_grid_solve(grid, &options, &flow, labels, &stats)
                             : gcut_graph_solve(graph, &options, &flow, labels, &stats);
    for (int i = 0; i < num_vars; i++)
        unsetenv(vars[i]);
    if (st != GCUT_OK) {
        snprintf(r->note, sizeof r->note, "%s: %s", gcut_status_name(st), gcut_last_error());
        r->ran = -1;
        if (st != GCUT_ERR_NO_DEVICE)
            mismatches++;
        return;
    }
    if (first) {
        r->layout = strcmp(name, "cuda-general") == 0 ? gcut__cudageneral_last_layout() : -1;
        r->flow = flow;
        r->sweeps = stats.sweeps;
        r->relabels = stats.global_relabels;
        st = on_grid ? gcut_grid_verify(grid, labels, flow, NULL)
                     : gcut_graph_verify(graph, labels, flow, NULL);
        r->cut_ok = st == GCUT_OK;
        if (!r->cut_ok) {
            fprintf(stderr, "general_bench: MISMATCH: %s's cut fails its certificate: %s\n",
                    r->solver, gcut_last_error());
            mismatches++;
        }
    }
    if (*reference < 0)
        *reference = flow;
    if (flow != *reference) {
        fprintf(stderr, "general_bench: MISMATCH: %s flow %" PRId64 ", expected %" PRId64 "\n",
                r->solver, flow, *reference);
        mismatches++;
    }
    r->build[r->runs] = stats.build_ms;
    r->solve[r->runs] = stats.solve_ms;
    r->runs++;
    r->ran = 1;
}

int main(int argc, char **argv) {
    int repeats = 5, verbose = 0;
    double max_ms = 60000;
    uint64_t seed = 1;
    const char *solvers_arg = "bk,cuda-general,cuda-grid";
    int first_instance = argc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--solvers") == 0 && i + 1 < argc)
            solvers_arg = argv[++i];
        else if (strcmp(argv[i], "--max-ms") == 0 && i + 1 < argc)
            max_ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
        else if (argv[i][0] == '-') {
            fprintf(stderr,
                    "usage: general_bench [--repeats 5] [--seed 1] [--solvers bk,cuda-general,"
                    "cuda-grid] [--max-ms 60000] [--verbose] INSTANCE...\n"
                    "  a solver may carry settings for its runs only: NAME+VAR=VALUE+... (e.g. "
                    "cuda-general+GCUT_CUDAGENERAL_HYBRID=0; GCUT_BENCH_VERBOSE=1: its trace)\n"
                    "  INSTANCE: random:NODES:EDGES hub:NODES:EDGES:HUB_DEGREE genrmf:A:B "
                    "rlg:ROWS:LEVELS grid:WxH[xD]:easy|hard\n"
                    "  a solver whose first run passes --max-ms is not repeated\n");
            return 2;
        } else {
            first_instance = i;
            break;
        }
    }
    if (repeats < 1 || repeats > MAX_REPEATS)
        repeats = repeats < 1 ? 1 : MAX_REPEATS;
    char solver_buf[1024];
    snprintf(solver_buf, sizeof solver_buf, "%s", solvers_arg);
    const char *solvers[MAX_SOLVERS];
    int num_solvers = 0;
    for (char *tok = strtok(solver_buf, ","); tok && num_solvers < MAX_SOLVERS;
         tok = strtok(NULL, ","))
        solvers[num_solvers++] = tok;

    /* CUDA start-up outside every timing: one small solve first. */
    {
        gcut_graph *warm = NULL;
        if (gen_random(1000, 4000, 7, &warm) == GCUT_OK) {
            gcut_options o;
            gcut_options_init(&o);
            o.solver = "cuda-general";
            int64_t f;
            gcut_graph_solve(warm, &o, &f, NULL, NULL);
        }
        gcut_graph_free(warm);
    }
    printf("| instance | nodes | arcs | solver | build ms | solve ms | x bk solve | x bk total | "
           "flow | sweeps | relabels | cut |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int k = first_instance; k < argc; k++) {
        gcut_graph *graph = NULL;
        gcut_grid *grid = NULL;
        gcut_status st = make_instance(argv[k], seed, &graph, &grid);
        if (st != GCUT_OK) {
            fprintf(stderr, "general_bench: instance %s: %s: %s\n", argv[k], gcut_status_name(st),
                    gcut_last_error());
            mismatches++;
            continue;
        }
        const int64_t n = gcut_graph_num_nodes(graph);
        uint8_t *labels = malloc((size_t)n + 1);
        row rows[MAX_SOLVERS];
        memset(rows, 0, sizeof rows);
        for (int s = 0; s < num_solvers; s++)
            rows[s].solver = solvers[s];
        int64_t reference = -1;
        for (int r = 0; r < repeats; r++)
            for (int j = 0; j < num_solvers; j++) {
                row *w = &rows[(j + r) % num_solvers];
                if (w->ran < 0 || (strcmp(w->solver, "cuda-grid") == 0 && grid == NULL))
                    continue;
                if (w->runs > 0 && w->build[0] + w->solve[0] > max_ms)
                    continue;
                run_once(w, graph, grid, labels, w->runs == 0, &reference, verbose);
            }
        double bk_solve = 0, bk_total = 0;
        for (int s = 0; s < num_solvers; s++)
            if (strcmp(rows[s].solver, "bk") == 0 && rows[s].runs > 0) {
                double b[MAX_REPEATS], v[MAX_REPEATS], t[MAX_REPEATS];
                for (int i = 0; i < rows[s].runs; i++)
                    b[i] = rows[s].build[i], v[i] = rows[s].solve[i],
                    t[i] = rows[s].build[i] + rows[s].solve[i];
                bk_solve = median(v, rows[s].runs);
                bk_total = median(t, rows[s].runs);
                (void)b;
            }
        for (int s = 0; s < num_solvers; s++) {
            row *w = &rows[s];
            if (w->runs == 0) {
                if (w->ran < 0)
                    printf("| %s | %" PRId64 " | %" PRId64
                           " | %s | - | - | - | - | - | - | - | %s |\n",
                           argv[k], n, 2 * gcut_graph_num_edges(graph), w->solver, w->note);
                continue;
            }
            double t[MAX_REPEATS];
            for (int i = 0; i < w->runs; i++)
                t[i] = w->build[i] + w->solve[i];
            double total = median(t, w->runs);
            double build = median(w->build, w->runs), solve = median(w->solve, w->runs);
            printf("| %s | %" PRId64 " | %" PRId64 " | %s | %.1f | %.2f | %.2f | %.2f | %" PRId64
                   " | %" PRId64 " | %" PRId64 " | %s (%d runs%s) |\n",
                   argv[k], n, 2 * gcut_graph_num_edges(graph), w->solver, build, solve,
                   bk_solve > 0 ? bk_solve / solve : 0.0, bk_total > 0 ? bk_total / total : 0.0,
                   w->flow, w->sweeps, w->relabels, w->cut_ok ? "ok" : "FAILED", w->runs,
                   w->layout < 0    ? ""
                   : w->layout == 0 ? ", csr"
                                    : layout_name(w->layout));
        }
        fflush(stdout);
        free(labels);
        gcut_graph_free(graph);
        gcut_grid_free(grid);
    }
    if (mismatches)
        fprintf(stderr, "general_bench: %d mismatches or failures\n", mismatches);
    return mismatches ? 1 : 0;
}
