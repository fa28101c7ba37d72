/* test_ibfs.c - the incremental-BFS solver (src/cpu/eibfs.c, "ibfs") against independent
 * oracles: brute force on thousands of tiny graphs (parallel edges, self-loops, one-way and zero
 * capacities), Dinic and bk on medium random, layered and grid-shaped graphs (int32 extremes,
 * flows past 2^31), grids through the conversion, edge cases; the cut certificate on every
 * result, and the labels equal to bk's (both give the source side of the smallest minimum cut). */
#define _POSIX_C_SOURCE 200809L   /* setenv */
#include "../bench/general_gen.h" /* the GENRMF and Washington RLG makers of bench/ */
#include "internal.h"
#include "util_common.h"
#include "util_oracle.h"

#include <stdlib.h>
#include <string.h>

static int passed = 0;

#define count(ok) CHECK_COUNT(passed, ok)

/* ibfs against expected (with the certificate, through oracle_check_graph), then the same labels
 * as bk's: the nodes the source reaches in the final residual graph. */
static int check(gcut_graph *g, int64_t expected, const char *what) {
    if (g == NULL)
        return 0;
    if (!oracle_check_graph(g, "ibfs", 0, expected, what))
        return 0;
    int64_t n = gcut_graph_num_nodes(g), f_ibfs = -1, f_bk = -2;
    uint8_t *a = malloc((size_t)n + 1), *b = malloc((size_t)n + 1);
    gcut_options options;
    gcut_options_init(&options);
    options.warm = 0;
    options.solver = "ibfs";
    int ok = a && b && gcut_graph_solve(g, &options, &f_ibfs, a, NULL) == GCUT_OK;
    options.solver = "bk";
    ok = ok && gcut_graph_solve(g, &options, &f_bk, b, NULL) == GCUT_OK;
    ok = ok && f_ibfs == f_bk && memcmp(a, b, (size_t)n) == 0;
    if (!ok)
        fprintf(stderr, "%s: ibfs flow %lld, bk %lld, or labels differ\n", what, (long long)f_ibfs,
                (long long)f_bk);
    free(a);
    free(b);
    return ok;
}

/* Tiny graphs of every kind the makers produce, against brute force. */
static void test_tiny_brute_force(test_rng *rng, int rounds) {
    int ok = 1;
    for (int round = 0; round < rounds && ok; round++) {
        oracle_caps caps = oracle_caps_default();
        caps.max_cap = (int32_t)test_rng_range(rng, 1, 20);
        caps.max_terminal = (int32_t)test_rng_range(rng, 1, 30);
        caps.terminal_density = (int)test_rng_range(rng, 0, 100);
        caps.zero_percent = (int)test_rng_range(rng, 0, 40);
        caps.one_way_percent = (int)test_rng_range(rng, 0, 60);
        caps.parallel_percent = (int)test_rng_range(rng, 0, 30);
        caps.self_loop_percent = (int)test_rng_range(rng, 0, 20);
        caps.huge = round % 13 == 0;
        gcut_graph *g = NULL;
        int64_t n = test_rng_range(rng, 1, ORACLE_BRUTE_MAX_NODES);
        CHECK_OK(round % 3 == 2 && n >= 2
                     ? oracle_make_grid_graph(rng, 2, n / 2, round % 2 ? 8 : 4, &caps, &g)
                     : oracle_make_random(rng, n, test_rng_range(rng, 0, 4 * n), &caps, &g));
        char what[64];
        snprintf(what, sizeof what, "tiny round %d (%lld nodes)", round, (long long)n);
        ok = check(g, oracle_brute_force(g), what);
        gcut_graph_free(g);
    }
    count(ok);
}

/* Medium random, layered (long paths: the case IBFS is for) and grid-shaped graphs against
 * Dinic. */
static void test_medium(test_rng *rng) {
    for (int huge = 0; huge <= 1; huge++) {
        oracle_caps caps = oracle_caps_default();
        caps.huge = huge;
        caps.zero_percent = 10;
        caps.parallel_percent = 5;
        caps.self_loop_percent = 2;
        gcut_graph *g = NULL;
        char what[64];

        snprintf(what, sizeof what, "random 3000 nodes (huge %d)", huge);
        CHECK_OK(oracle_make_random(rng, 3000, 12000, &caps, &g));
        count(check(g, oracle_dinic(g), what));
        gcut_graph_free(g);

        for (int degree = 1; degree <= 4; degree += 3) {
            snprintf(what, sizeof what, "layered 60x80 degree %d (huge %d)", degree, huge);
            CHECK_OK(oracle_make_layered(rng, 60, 80, degree, &caps, &g));
            count(check(g, oracle_dinic(g), what));
            gcut_graph_free(g);
        }

        caps.max_cap = 50;
        caps.terminal_density = 60;
        snprintf(what, sizeof what, "grid 120x150 4-conn (huge %d)", huge);
        CHECK_OK(oracle_make_grid_graph(rng, 120, 150, 4, &caps, &g));
        count(check(g, oracle_dinic(g), what));
        gcut_graph_free(g);

        snprintf(what, sizeof what, "grid 80x90 8-conn (huge %d)", huge);
        CHECK_OK(oracle_make_grid_graph(rng, 80, 90, 8, &caps, &g));
        count(check(g, oracle_dinic(g), what));
        gcut_graph_free(g);
    }
    /* Segmentation-like: strong smoothness and terminals everywhere, many orphans. */
    oracle_caps caps = oracle_caps_default();
    caps.max_cap = 30;
    caps.max_terminal = 60;
    caps.terminal_density = 100;
    gcut_graph *g = NULL;
    CHECK_OK(oracle_make_grid_graph(rng, 250, 400, 4, &caps, &g));
    count(check(g, oracle_dinic(g), "grid 250x400 dense terminals"));
    gcut_graph_free(g);
}

/* Grids of every connectivity through gcut_grid_solve's conversion, against Dinic. */
static void test_grids(test_rng *rng) {
    static const struct {
        int ndim, connectivity;
        int64_t shape[3];
    } cases[] = {{2, 4, {40, 50, 0}}, {2, 8, {30, 33, 0}}, {3, 6, {9, 10, 11}}, {3, 26, {6, 7, 8}},
                 {2, 4, {1, 200, 0}}, {2, 8, {1, 1, 0}},   {3, 26, {13, 11, 9}}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        oracle_caps caps = oracle_caps_default();
        caps.terminal_density = 50;
        caps.one_way_percent = 20;
        caps.zero_percent = 30;
        caps.huge = c % 3 == 2;
        gcut_grid *grid = NULL;
        CHECK_OK(oracle_make_grid(rng, cases[c].ndim, cases[c].shape, cases[c].connectivity, &caps,
                                  &grid));
        if (grid == NULL)
            continue;
        char what[64];
        snprintf(what, sizeof what, "grid case %zu (%dD, %d-connected)", c, cases[c].ndim,
                 cases[c].connectivity);
        count(oracle_check_grid(grid, "ibfs", oracle_dinic_grid(grid), what));
        gcut_grid_free(grid);
    }
}

static void test_edge_cases(void) {
    gcut_graph *g = NULL;
    int64_t flow = -1;
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "ibfs";
    gcut_stats stats;
    CHECK_OK(gcut_graph_create(0, 0, &g));
    CHECK_OK(gcut_graph_solve(g, &options, &flow, NULL, &stats));
    count(flow == 0 && strcmp(stats.solver, "ibfs") == 0);
    gcut_graph_free(g);

    /* No edges: every node's flow is min(source, sink). */
    CHECK_OK(gcut_graph_create(5, 0, &g));
    CHECK_OK(gcut_graph_add_tweights(g, 0, 7, 3));
    CHECK_OK(gcut_graph_add_tweights(g, 1, 2, 9));
    CHECK_OK(gcut_graph_add_tweights(g, 3, 4, 4));
    CHECK_OK(gcut_graph_add_tweights(g, 4, 0, 6));
    uint8_t labels[8];
    CHECK_OK(gcut_graph_solve(g, &options, &flow, labels, NULL));
    count(flow == 9 && labels[0] == GCUT_SOURCE && labels[1] == GCUT_SINK &&
          labels[3] == GCUT_SINK && labels[4] == GCUT_SINK);
    count(check(g, 9, "no edges"));
    gcut_graph_free(g);

    /* Self-loops and isolated nodes; edges with no terminals at all. */
    CHECK_OK(gcut_graph_create(4, 0, &g));
    CHECK_OK(gcut_graph_add_edge(g, 1, 1, 100, 100));
    CHECK_OK(gcut_graph_add_edge(g, 0, 2, 5, 5));
    count(check(g, 0, "no terminals"));
    CHECK_OK(gcut_graph_add_tweights(g, 1, 10, 10));
    count(check(g, 10, "self-loop with terminals"));
    gcut_graph_free(g);

    /* Parallel edges add up, both ways. */
    CHECK_OK(gcut_graph_create(2, 0, &g));
    CHECK_OK(gcut_graph_add_tweights(g, 0, 100, 0));
    CHECK_OK(gcut_graph_add_tweights(g, 1, 0, 100));
    CHECK_OK(gcut_graph_add_edge(g, 0, 1, 3, 0));
    CHECK_OK(gcut_graph_add_edge(g, 1, 0, 4, 0));
    CHECK_OK(gcut_graph_add_edge(g, 0, 1, 5, 7));
    count(check(g, 8, "parallel edges"));
    gcut_graph_free(g);

    /* A chain whose bottleneck is in the middle: one augmentation, the cut after node 1. */
    CHECK_OK(gcut_graph_create(4, 3, &g));
    CHECK_OK(gcut_graph_add_tweights(g, 0, 10, 0));
    CHECK_OK(gcut_graph_add_edge(g, 0, 1, 8, 0));
    CHECK_OK(gcut_graph_add_edge(g, 1, 2, 3, 0));
    CHECK_OK(gcut_graph_add_edge(g, 2, 3, 8, 0));
    CHECK_OK(gcut_graph_add_tweights(g, 3, 0, 10));
    CHECK_OK(gcut_graph_solve(g, &options, &flow, labels, &stats));
    count(flow == 3 && labels[0] == GCUT_SOURCE && labels[1] == GCUT_SOURCE &&
          labels[2] == GCUT_SINK && labels[3] == GCUT_SINK && stats.augmentations == 1);
    gcut_graph_free(g);

    /* Sums past 2^31: terminal sums past INT32_MAX and edges of INT32_MAX both ways. */
    CHECK_OK(gcut_graph_create(4, 4, &g));
    for (int k = 0; k < 3; k++)
        CHECK_OK(gcut_graph_add_tweights(g, 0, INT32_MAX, 0));
    CHECK_OK(gcut_graph_add_edge(g, 0, 1, INT32_MAX, INT32_MAX));
    CHECK_OK(gcut_graph_add_edge(g, 0, 1, INT32_MAX, INT32_MAX));
    CHECK_OK(gcut_graph_add_edge(g, 1, 2, INT32_MAX, INT32_MAX));
    CHECK_OK(gcut_graph_add_edge(g, 1, 2, INT32_MAX, INT32_MAX));
    CHECK_OK(gcut_graph_add_edge(g, 2, 3, INT32_MAX, 0));
    CHECK_OK(gcut_graph_add_tweights(g, 2, 0, INT32_MAX));
    CHECK_OK(gcut_graph_add_tweights(g, 3, 0, INT32_MAX));
    CHECK_OK(gcut_graph_add_tweights(g, 3, 0, INT32_MAX));
    count(check(g, oracle_brute_force(g), "huge sums"));
    gcut_graph_free(g);

    /* A maximum flow past INT64_MAX is refused with a message naming it. */
    int64_t big = INT64_MAX / 4;
    CHECK_OK(gcut_graph_create(6, 0, &g));
    for (int64_t i = 0; i < 5; i++)
        CHECK_OK(gcut_graph_set_tweights(g, i, big, big));
    count(gcut_graph_solve(g, &options, &flow, labels, NULL) == GCUT_ERR_OVERFLOW &&
          strstr(gcut_last_error(), "INT64_MAX") != NULL);
    gcut_graph_free(g);
}

/* Over the memory cap the solve fails cleanly, names what it could not allocate, and holds
 * nothing afterwards; the same graph then solves once the cap is lifted. */
static void test_memory_cap(test_rng *rng) {
    oracle_caps caps = oracle_caps_default();
    gcut_graph *g = NULL;
    CHECK_OK(oracle_make_grid_graph(rng, 200, 200, 4, &caps, &g));
    if (g == NULL)
        return;
    uint64_t held = gcut_memory_in_use();
    gcut_set_memory_limit(held + 100000);
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "ibfs";
    int64_t flow = -1;
    gcut_status st = gcut_graph_solve(g, &options, &flow, NULL, NULL);
    count(st == GCUT_ERR_NOMEM && strstr(gcut_last_error(), "ibfs") != NULL);
    count(gcut_memory_in_use() == held);
    gcut_set_memory_limit(0);
    count(check(g, oracle_dinic(g), "after the memory cap"));
    gcut_graph_free(g);
}

/* grid-ibfs against expected (with the certificate), then the same labels as grid-bk's. */
static int check_grid(gcut_grid *grid, int64_t expected, const char *what) {
    if (!oracle_check_grid(grid, "grid-ibfs", expected, what))
        return 0;
    int64_t n = gcut_grid_num_nodes(grid), f_ib = -1, f_bk = -2;
    uint8_t *a = malloc((size_t)n + 1), *b = malloc((size_t)n + 1);
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "grid-ibfs";
    int ok = a && b && gcut_grid_solve(grid, &options, &f_ib, a, NULL) == GCUT_OK;
    options.solver = "grid-bk";
    ok = ok && gcut_grid_solve(grid, &options, &f_bk, b, NULL) == GCUT_OK;
    ok = ok && f_ib == f_bk && memcmp(a, b, (size_t)n) == 0;
    if (!ok)
        fprintf(stderr, "%s: grid-ibfs flow %lld, grid-bk %lld, or labels differ\n", what,
                (long long)f_ib, (long long)f_bk);
    free(a);
    free(b);
    return ok;
}

static const struct { int ndim, connectivity; } kinds[] = {{2, 4}, {2, 8}, {3, 6}, {3, 26}};

/* grid-ibfs: tiny grids of every connectivity against brute force over the grid's graph. */
static void test_grid_ibfs_tiny(test_rng *rng, int rounds) {
    int ok = 1;
    for (int round = 0; round < rounds && ok; round++) {
        const int k = round % 4;
        int64_t shape[3] = {1, 1, 1}, n = 1;
        for (int a = 0; a < kinds[k].ndim; a++) {
            shape[a] = test_rng_range(rng, 1, kinds[k].ndim == 2 ? 4 : 3);
            if (n * shape[a] > ORACLE_BRUTE_MAX_NODES)
                shape[a] = 1;
            n *= shape[a];
        }
        oracle_caps caps = oracle_caps_default();
        caps.max_cap = (int32_t)test_rng_range(rng, 1, 20);
        caps.max_terminal = (int32_t)test_rng_range(rng, 1, 30);
        caps.terminal_density = (int)test_rng_range(rng, 0, 100);
        caps.zero_percent = (int)test_rng_range(rng, 0, 40);
        caps.one_way_percent = (int)test_rng_range(rng, 0, 60);
        caps.huge = round % 11 == 0;
        gcut_grid *grid = NULL;
        gcut_graph *g = NULL;
        CHECK_OK(oracle_make_grid(rng, kinds[k].ndim, shape, kinds[k].connectivity, &caps, &grid));
        if (grid == NULL)
            return;
        CHECK_OK(gcut_grid_to_graph(grid, &g));
        if (g != NULL) {
            char what[96];
            snprintf(what, sizeof what, "grid-ibfs tiny round %d (%dD %d-conn, %lld nodes)", round,
                     kinds[k].ndim, kinds[k].connectivity, (long long)n);
            ok = check_grid(grid, oracle_brute_force(g), what);
        }
        gcut_graph_free(g);
        gcut_grid_free(grid);
    }
    count(ok);
}

/* grid-ibfs: random grids of every connectivity and odd shapes against Dinic. */
static void test_grid_ibfs_random(test_rng *rng) {
    static const struct {
        int ndim, connectivity;
        int64_t shape[3];
    } cases[] = {
        {2, 4, {40, 50, 0}},   {2, 8, {30, 33, 0}},   {3, 6, {9, 10, 11}},  {3, 26, {6, 7, 8}},
        {2, 4, {1, 200, 0}},   {2, 4, {200, 1, 0}},   {2, 8, {1, 1, 0}},    {2, 8, {2, 91, 0}},
        {3, 6, {1, 1, 300}},   {3, 26, {1, 1, 50}},   {3, 26, {13, 1, 9}},  {2, 4, {3, 2, 0}},
        {2, 4, {257, 311, 0}}, {2, 8, {190, 173, 0}}, {3, 6, {31, 37, 29}}, {3, 26, {17, 19, 15}},
    };
    for (int rep = 0; rep < 2; rep++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            oracle_caps caps = oracle_caps_default();
            caps.terminal_density = (int)test_rng_range(rng, 5, 100);
            caps.one_way_percent = (int)test_rng_range(rng, 0, 40);
            caps.zero_percent = (int)test_rng_range(rng, 0, 50);
            caps.huge = (int)((c + (size_t)rep) % 3 == 2);
            gcut_grid *grid = NULL;
            CHECK_OK(oracle_make_grid(rng, cases[c].ndim, cases[c].shape, cases[c].connectivity,
                                      &caps, &grid));
            if (grid == NULL)
                continue;
            char what[80];
            snprintf(what, sizeof what, "grid-ibfs case %zu rep %d (%dD, %d-connected)", c, rep,
                     cases[c].ndim, cases[c].connectivity);
            count(check_grid(grid, oracle_dinic_grid(grid), what));
            gcut_grid_free(grid);
        }
}

/* "auto": ibfs for a small general graph, grid-ibfs for a small grid of every connectivity
 * (docs/CPU-SERIAL.md, "Fifth pass"); the GPU solvers take only larger problems. */
static void test_auto_pick(void) {
    gcut_graph *g = NULL;
    gcut_stats stats;
    int64_t flow = -1;
    CHECK_OK(gcut_graph_create(3, 2, &g));
    CHECK_OK(gcut_graph_add_tweights(g, 0, 5, 0));
    CHECK_OK(gcut_graph_add_edge(g, 0, 1, 3, 0));
    CHECK_OK(gcut_graph_add_tweights(g, 1, 0, 4));
    CHECK_OK(gcut_graph_solve(g, NULL, &flow, NULL, &stats));
    count(flow == 3 && strcmp(stats.solver, "ibfs") == 0);
    /* A re-solve after a capacity change goes to bk (warm from then on); with warm off, or
     * after an edge is added, it stays on ibfs. */
    CHECK_OK(gcut_graph_set_tweights(g, 1, 0, 2));
    CHECK_OK(gcut_graph_solve(g, NULL, &flow, NULL, &stats));
    count(flow == 2 && strcmp(stats.solver, "bk") == 0);
    CHECK_OK(gcut_graph_set_tweights(g, 1, 0, 1));
    CHECK_OK(gcut_graph_solve(g, NULL, &flow, NULL, &stats));
    count(flow == 1 && strcmp(stats.solver, "bk") == 0);
    gcut_options cold;
    gcut_options_init(&cold);
    cold.warm = 0;
    CHECK_OK(gcut_graph_solve(g, &cold, &flow, NULL, &stats));
    count(flow == 1 && strcmp(stats.solver, "ibfs") == 0);
    CHECK_OK(gcut_graph_add_edge(g, 1, 2, 1, 0));
    CHECK_OK(gcut_graph_solve(g, NULL, &flow, NULL, &stats));
    count(flow == 1 && strcmp(stats.solver, "ibfs") == 0);
    gcut_graph_free(g);
    static const struct {
        int ndim, connectivity;
        const char *want;
    } cases[] = {
        {2, 4, "grid-ibfs"}, {2, 8, "grid-ibfs"}, {3, 6, "grid-ibfs"}, {3, 26, "grid-ibfs"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t shape[3] = {5, 6, 7};
        gcut_grid *grid = NULL;
        CHECK_OK(gcut_grid_create(cases[c].ndim, shape, cases[c].connectivity, &grid));
        if (grid == NULL)
            continue;
        CHECK_OK(gcut_grid_solve(grid, NULL, &flow, NULL, &stats));
        count(flow == 0 && strcmp(stats.solver, cases[c].want) == 0);
        gcut_grid_free(grid);
    }
}

/* The excess mode is the one that runs: on long layered graphs it needs fewer augmentations
 * than the bottleneck rule (each pushes the connecting arc's whole residual), same flow. */
static void test_excess_used(test_rng *rng) {
    oracle_caps caps = oracle_caps_default();
    gcut_graph *g = NULL;
    CHECK_OK(oracle_make_layered(rng, 80, 60, 2, &caps, &g));
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "ibfs";
    int64_t flow[2] = {-1, -2}, aug[2] = {0, 0};
    for (int excess = 0; excess <= 1; excess++) {
        setenv("GCUT_IBFS_EXCESS", excess ? "1" : "0", 1);
        gcut_stats stats;
        CHECK_OK(gcut_graph_solve(g, &options, &flow[excess], NULL, &stats));
        aug[excess] = stats.augmentations;
    }
    unsetenv("GCUT_IBFS_EXCESS");
    count(flow[0] == flow[1] && flow[0] == oracle_dinic(g) && aug[1] > 0 && aug[1] < aug[0]);
    if (aug[1] >= aug[0])
        fprintf(stderr, "excess mode: %lld augmentations, without: %lld\n", (long long)aug[1],
                (long long)aug[0]);
    gcut_graph_free(g);
}

/* The long-path families the serial bar is measured on (GENRMF, Washington RLG long and wide,
 * small): paths of dozens to hundreds of arcs, so excess pushes (at 32 arcs by default) and
 * relabel cascades through the children lists both run; against Dinic, labels equal to bk's. */
static void test_long_paths(test_rng *rng) {
    for (int round = 0; round < 6; round++) {
        uint64_t seed = test_rng_next(rng);
        int64_t a = test_rng_range(rng, 2, 6), b = test_rng_range(rng, 8, 60);
        int32_t c2 = (int32_t)test_rng_range(rng, 2, 10000);
        gcut_graph *g = NULL;
        char what[96];
        CHECK_OK(gen_genrmf(a, b, 1, c2, seed, &g));
        snprintf(what, sizeof what, "genrmf a %lld b %lld c2 %ld", (long long)a, (long long)b,
                 (long)c2);
        count(check(g, oracle_dinic(g), what));
        gcut_graph_free(g);
        int64_t rows = test_rng_range(rng, 2, 40), levels = test_rng_range(rng, 20, 120);
        CHECK_OK(gen_washington_rlg(rows, levels, (int32_t)test_rng_range(rng, 1, 1000), seed, &g));
        snprintf(what, sizeof what, "washington rlg %lld x %lld", (long long)rows,
                 (long long)levels);
        count(check(g, oracle_dinic(g), what));
        gcut_graph_free(g);
    }
}

int main(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed());
    test_edge_cases();
    test_auto_pick();
    test_tiny_brute_force(&rng, 2000);
    test_medium(&rng);
    test_grids(&rng);
    test_memory_cap(&rng);
    test_grid_ibfs_tiny(&rng, 1000);
    test_grid_ibfs_random(&rng);
    /* The tree-growth rule each solver and shape does not use by default (GCUT_IBFS_GROW: 0 the
     * shorter frontier list, 1 turns): ibfs takes turns, grid-ibfs only on 26-connected grids. */
    setenv("GCUT_IBFS_GROW", "0", 1);
    test_tiny_brute_force(&rng, 1000);
    test_grid_ibfs_tiny(&rng, 500);
    setenv("GCUT_IBFS_GROW", "1", 1);
    test_grid_ibfs_tiny(&rng, 500);
    unsetenv("GCUT_IBFS_GROW");
    /* ibfs without excesses, and with them on every path (GCUT_IBFS_EXCESS_MIN=0; by default
     * only paths of 32 arcs or more, which tiny graphs do not have): the same oracles, labels
     * equal to bk's, the flow then the final cut's capacity. */
    test_excess_used(&rng);
    test_long_paths(&rng);
    for (int excess = 0; excess <= 1; excess++) {
        setenv("GCUT_IBFS_EXCESS", excess ? "1" : "0", 1);
        setenv("GCUT_IBFS_EXCESS_MIN", "0", 1);
        test_edge_cases();
        test_tiny_brute_force(&rng, 1000);
        test_medium(&rng);
        test_grids(&rng);
        test_long_paths(&rng);
    }
    unsetenv("GCUT_IBFS_EXCESS");
    unsetenv("GCUT_IBFS_EXCESS_MIN");
    return test_finish("test_ibfs", passed);
}
