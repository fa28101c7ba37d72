/* test_cuda_general.c - the cuda-general solver (src/cuda/cuda_general.cu) against independent
 * answers: brute force on tiny graphs, Dinic (tests/util_oracle.h) and bk on larger ones,
 * cuda-grid on grids, and the cut certificate on every result. Skips (exit 77) without a GPU. */
#define _POSIX_C_SOURCE 200809L

#include "internal.h"
#include "util_common.h"
#include "util_oracle.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks;
static int quick;

/* Solve with bk for a second opinion; -1 if it fails (reported). */
static int64_t bk_flow(gcut_graph *g) {
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "bk";
    options.warm = 0;
    int64_t flow = -1;
    gcut_status st = gcut_graph_solve(g, &options, &flow, NULL, NULL);
    if (st != GCUT_OK) {
        fprintf(stderr, "bk failed: %s: %s\n", gcut_status_name(st), gcut_last_error());
        test_failures++;
        return -1;
    }
    return flow;
}

/* Settings that every case also runs under: push phases of about the BFS depth (the first
 * version's rule, GCUT_CUDAGENERAL_BALANCE=0); the hybrid finish (bk on the residual problem,
 * docs/CUDA-GENERAL.md, off by default): bk from the first global relabel (the whole problem
 * cut out before any push); bk after one phase of 2 sweeps (a preflow in mid-flight,
 * residuals past INT32_MAX split); the sub refused (a limit of 1 node: the forward search
 * runs, the GPU carries on). And the 64-bit paired-arc path (taken past 2^32 arcs) forced on,
 * with and without the hybrid. Third pass: the second pass's kernels (one launch per step,
 * one atomic per list append, a light BFS node's arcs in turn, a light vertex's arcs loaded one
 * by one: GCUT_CUDAGENERAL_PERSIST=0, _AGGREGATE=0, _BFS_SPREAD=0, _PREFETCH=0) with the hybrid's
 * forward search; the grid kernels (the default: one cooperative launch per BFS and per push phase)
 * with every step grid-wide, phases cut by the device clock after their first 4 sweeps,
 * bottom-up BFS levels past a frontier of 1% of the nodes and dense sweeps past 1% active; with
 * block 0 running every step alone, phases cut from their first sweep; list sweeps only
 * (GCUT_CUDAGENERAL_DENSE=0) on the 64-bit path. Fourth pass: the padded (slot-major) layout
 * forced on (GCUT_CUDAGENERAL_LAYOUT=padded; graphs of degree past 32 must stay on the CSR) with
 * the default kernels, with the launch-per-step kernels and the hybrid after 2 sweeps, and with
 * every step grid-wide, bottom-up BFS levels and dense sweeps; the CSR built in edge order
 * (GCUT_CUDAGENERAL_SORTED=1); the cooperative launch refused at the first launch and, on the
 * padded layout, at the third (mid-solve: GCUT_CUDAGENERAL_COOP_REFUSE, the launch-per-step
 * kernels take over). */
#define MAX_ALL "2147483647"
static const struct hybrid_mode {
    const char *name;
    const char *vars[8][2];
} hybrid_modes[] = {
    {"phases of about the BFS depth", {{"GCUT_CUDAGENERAL_BALANCE", "0"}}},
    {"bk from the first relabel",
     {{"GCUT_CUDAGENERAL_HYBRID", "1"},
      {"GCUT_CUDAGENERAL_HYBRID_AFTER", "1"},
      {"GCUT_CUDAGENERAL_HYBRID_ACTIVE", MAX_ALL},
      {"GCUT_CUDAGENERAL_HYBRID_NODES", MAX_ALL}}},
    {"bk after 2 sweeps",
     {{"GCUT_CUDAGENERAL_HYBRID", "1"},
      {"GCUT_CUDAGENERAL_SWEEPS", "2"},
      {"GCUT_CUDAGENERAL_HYBRID_AFTER", "2"},
      {"GCUT_CUDAGENERAL_HYBRID_ACTIVE", MAX_ALL},
      {"GCUT_CUDAGENERAL_HYBRID_NODES", MAX_ALL}}},
    {"sub refused",
     {{"GCUT_CUDAGENERAL_HYBRID", "1"},
      {"GCUT_CUDAGENERAL_HYBRID_AFTER", "1"},
      {"GCUT_CUDAGENERAL_HYBRID_ACTIVE", MAX_ALL},
      {"GCUT_CUDAGENERAL_HYBRID_NODES", "1"}}},
    {"64-bit arc indices, bk after 2 sweeps",
     {{"GCUT_CUDAGENERAL_WIDE_ARCS", "1"},
      {"GCUT_CUDAGENERAL_HYBRID", "1"},
      {"GCUT_CUDAGENERAL_SWEEPS", "2"},
      {"GCUT_CUDAGENERAL_HYBRID_ACTIVE", MAX_ALL},
      {"GCUT_CUDAGENERAL_HYBRID_NODES", MAX_ALL}}},
    {"64-bit arc indices, GPU only, list sweeps",
     {{"GCUT_CUDAGENERAL_WIDE_ARCS", "1"}, {"GCUT_CUDAGENERAL_DENSE", "0"}}},
    {"launch per step, one atomic per append, BFS arcs in turn, sub refused",
     {{"GCUT_CUDAGENERAL_PERSIST", "0"},
      {"GCUT_CUDAGENERAL_AGGREGATE", "0"},
      {"GCUT_CUDAGENERAL_BFS_SPREAD", "0"},
      {"GCUT_CUDAGENERAL_PREFETCH", "0"},
      {"GCUT_CUDAGENERAL_HYBRID", "1"},
      {"GCUT_CUDAGENERAL_HYBRID_AFTER", "1"},
      {"GCUT_CUDAGENERAL_HYBRID_ACTIVE", MAX_ALL},
      {"GCUT_CUDAGENERAL_HYBRID_NODES", "1"}}},
    {"grid kernels, every step grid-wide, 1% phases, bottom-up BFS, dense sweeps",
     {{"GCUT_CUDAGENERAL_GRID_SMALL", "0"},
      {"GCUT_CUDAGENERAL_BALANCE", "1"},
      {"GCUT_CUDAGENERAL_BOTTOM_UP", "1"},
      {"GCUT_CUDAGENERAL_DENSE", "1"}}},
    {"grid kernels, block 0 alone, 1 cycle, phases cut from their first sweep",
     {{"GCUT_CUDAGENERAL_GRID_SMALL", "16777216"},
      {"GCUT_CUDAGENERAL_CYCLES", "1"},
      {"GCUT_CUDAGENERAL_BALANCE", "1"},
      {"GCUT_CUDAGENERAL_MIN_SWEEPS", "1"}}},
    {"padded layout", {{"GCUT_CUDAGENERAL_LAYOUT", "padded"}}},
    {"padded layout, launch per step, arcs in turn, bk after 2 sweeps",
     {{"GCUT_CUDAGENERAL_LAYOUT", "padded"},
      {"GCUT_CUDAGENERAL_PERSIST", "0"},
      {"GCUT_CUDAGENERAL_BFS_SPREAD", "0"},
      {"GCUT_CUDAGENERAL_PREFETCH", "0"},
      {"GCUT_CUDAGENERAL_HYBRID", "1"},
      {"GCUT_CUDAGENERAL_SWEEPS", "2"},
      {"GCUT_CUDAGENERAL_HYBRID_ACTIVE", MAX_ALL},
      {"GCUT_CUDAGENERAL_HYBRID_NODES", MAX_ALL}}},
    {"padded layout, own edges first, every step grid-wide, 1% phases, bottom-up BFS, dense sweeps",
     {{"GCUT_CUDAGENERAL_LAYOUT", "padded"},
      {"GCUT_CUDAGENERAL_ORDER", "1"},
      {"GCUT_CUDAGENERAL_GRID_SMALL", "0"},
      {"GCUT_CUDAGENERAL_BALANCE", "1"},
      {"GCUT_CUDAGENERAL_BOTTOM_UP", "1"},
      {"GCUT_CUDAGENERAL_DENSE", "1"}}},
    {"CSR sorted (hashed order)",
     {{"GCUT_CUDAGENERAL_SORTED", "1"}, {"GCUT_CUDAGENERAL_LAYOUT", "csr"}}},
    {"cooperative launch refused at the first", {{"GCUT_CUDAGENERAL_COOP_REFUSE", "1"}}},
    {"padded layout in edge order, cooperative launch refused at the third",
     {{"GCUT_CUDAGENERAL_LAYOUT", "padded"},
      {"GCUT_CUDAGENERAL_ORDER", "0"},
      {"GCUT_CUDAGENERAL_COOP_REFUSE", "3"}}},
};
enum { num_hybrid_modes = (int)(sizeof hybrid_modes / sizeof hybrid_modes[0]) };

/* The padded layout's degree that cuda-general must pick for g when the layout is forced
 * (written here from the rule in docs/CUDA-GENERAL.md, not from the solver's code): the largest
 * number of arcs at one node, self-loops dropped, raised to 4, 6 or 8, or to 26 from 23; 0 (the
 * CSR) past 32. */
static int expected_pad_degree(const gcut_graph *g) {
    const int64_t n = gcut_graph_num_nodes(g), m = gcut_graph_num_edges(g);
    int64_t *deg = calloc((size_t)n + 1, sizeof *deg);
    if (deg == NULL)
        return -1;
    int64_t max = 0;
    for (int64_t e = 0; e < m; e++) {
        const int64_t u = gcut__edge_u(g, e), v = gcut__edge_v(g, e);
        if (u == v)
            continue;
        if (++deg[u] > max)
            max = deg[u];
        if (++deg[v] > max)
            max = deg[v];
    }
    free(deg);
    if (max > 32)
        return 0;
    if (max <= 4)
        return 4;
    if (max <= 6)
        return 6;
    if (max <= 8)
        return 8;
    return max >= 23 && max <= 26 ? 26 : (int)max;
}

/* cuda-general on g under hybrid mode `mode`, flow against `expected`, cut certified; under a
 * forced padded layout, the layout built is checked too. */
static void check_mode(gcut_graph *g, int mode, int64_t expected, const char *what) {
    const struct hybrid_mode *h = &hybrid_modes[mode];
    int padded = 0;
    for (int i = 0; i < 8 && h->vars[i][0]; i++) {
        setenv(h->vars[i][0], h->vars[i][1], 1);
        padded |= strcmp(h->vars[i][1], "padded") == 0;
    }
    char label[256];
    snprintf(label, sizeof label, "%s [%s]", what, h->name);
    checks += oracle_check_graph(g, "cuda-general", 0, expected, label);
    if (padded && gcut_graph_num_nodes(g) > 0) {
        const int want = expected_pad_degree(g), got = gcut__cudageneral_last_layout();
        if (got != want) {
            fprintf(stderr, "%s: layout %d built, expected %d (0: CSR)\n", label, got, want);
            test_failures++;
        }
        checks++;
    }
    for (int i = 0; i < 8 && h->vars[i][0]; i++)
        unsetenv(h->vars[i][0]);
}

/* cuda-general on g against Dinic (and bk, which must agree with Dinic), certificate
 * included; twice, so that a second solve cannot depend on the first. */
static void check_graph(gcut_graph *g, const char *what) {
    if (g == NULL)
        return;
    int64_t expected = oracle_dinic(g);
    CHECK(expected >= 0);
    int64_t bk = bk_flow(g);
    if (bk != expected) {
        fprintf(stderr, "%s: bk %lld and Dinic %lld disagree\n", what, (long long)bk,
                (long long)expected);
        test_failures++;
    }
    checks += oracle_check_graph(g, "cuda-general", 0, expected, what);
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "cuda-general";
    gcut_stats stats;
    int64_t flow = -1;
    CHECK_OK(gcut_graph_solve(g, &options, &flow, NULL, &stats));
    CHECK_EQ_I64(flow, expected);
    CHECK(stats.global_relabels >= 1);
    CHECK(stats.device_bytes > 0);
    CHECK(strcmp(stats.solver, "cuda-general") == 0);
    checks++;
    /* Past 50000 nodes (the hub, the path) five settings: the depth rule, bk after 2 sweeps,
     * the launch-per-step path, the padded layout, the refused cooperative launch. */
    const int big = gcut_graph_num_nodes(g) > 50000;
    for (int mode = 0; mode < num_hybrid_modes; mode++)
        if (!big || mode == 0 || mode == 2 || mode == 6 || mode == 9 || mode == 13)
            check_mode(g, mode, expected, what);
}

/* Tiny graphs: brute force over every labeling is the oracle. */
static void tiny(test_rng *rng, int count) {
    for (int k = 0; k < count; k++) {
        oracle_caps caps = oracle_caps_default();
        caps.terminal_density = 60;
        caps.parallel_percent = k % 3 == 0 ? 20 : 0;
        caps.self_loop_percent = k % 4 == 0 ? 20 : 0;
        caps.one_way_percent = k % 2 ? 30 : 0;
        int64_t n = test_rng_range(rng, 1, ORACLE_BRUTE_MAX_NODES);
        int64_t m = test_rng_range(rng, 0, n * 3);
        gcut_graph *g = NULL;
        CHECK_OK(oracle_make_random(rng, n, m, &caps, &g));
        if (g == NULL)
            continue;
        int64_t expected = oracle_brute_force(g);
        char what[96];
        snprintf(what, sizeof what, "tiny #%d (%lld nodes, %lld edges)", k, (long long)n,
                 (long long)m);
        checks += oracle_check_graph(g, "cuda-general", 0, expected, what);
        check_mode(g, 1 + k % (num_hybrid_modes - 1), expected, what);
        gcut_graph_free(g);
    }
}

static void random_graphs(test_rng *rng) {
    static const int64_t sizes[][2] = {{50, 100},    {200, 2000},   {1000, 3000},
                                       {300, 20000}, {5000, 20000}, {20000, 100000}};
    const int count = quick > 1 ? 1 : quick ? 3 : (int)(sizeof sizes / sizeof sizes[0]);
    for (int s = 0; s < count; s++)
        for (int mix = 0; mix < 4; mix++) {
            oracle_caps caps = oracle_caps_default();
            const char *name = "default";
            if (mix == 1)
                caps.zero_percent = 40, caps.one_way_percent = 40, name = "sparse caps";
            else if (mix == 2)
                caps.huge = 1, caps.terminal_density = 50, name = "int32 extremes";
            else if (mix == 3)
                caps.parallel_percent = 20, caps.self_loop_percent = 10,
                name = "parallel arcs and self-loops";
            gcut_graph *g = NULL;
            CHECK_OK(oracle_make_random(rng, sizes[s][0], sizes[s][1], &caps, &g));
            char what[128];
            snprintf(what, sizeof what, "random %lld nodes %lld edges, %s", (long long)sizes[s][0],
                     (long long)sizes[s][1], name);
            check_graph(g, what);
            gcut_graph_free(g);
        }
}

static void layered(test_rng *rng) {
    static const int sizes[][3] = {{4, 10, 3}, {30, 40, 4}, {200, 20, 3}, {50, 400, 8}};
    const int count = quick ? 2 : (int)(sizeof sizes / sizeof sizes[0]);
    for (int s = 0; s < count; s++) {
        oracle_caps caps = oracle_caps_default();
        gcut_graph *g = NULL;
        CHECK_OK(oracle_make_layered(rng, sizes[s][0], sizes[s][1], sizes[s][2], &caps, &g));
        char what[96];
        snprintf(what, sizeof what, "layered %d x %d degree %d", sizes[s][0], sizes[s][1],
                 sizes[s][2]);
        check_graph(g, what);
        gcut_graph_free(g);
    }
}

/* Grids written as general graphs, and gcut_grid problems through the explicit conversion
 * (gcut_grid_solve with cuda-general) against Dinic and cuda-grid on the same grid. */
static void grids(test_rng *rng) {
    static const int64_t sizes[][2] = {{1, 1}, {1, 50}, {9, 33}, {64, 64}, {120, 200}};
    const int count = quick ? 3 : (int)(sizeof sizes / sizeof sizes[0]);
    for (int s = 0; s < count; s++)
        for (int conn = 4; conn <= 8; conn += 4) {
            oracle_caps caps = oracle_caps_default();
            gcut_graph *g = NULL;
            CHECK_OK(oracle_make_grid_graph(rng, sizes[s][0], sizes[s][1], conn, &caps, &g));
            char what[96];
            snprintf(what, sizeof what, "grid graph %lldx%lld conn %d", (long long)sizes[s][0],
                     (long long)sizes[s][1], conn);
            check_graph(g, what);
            gcut_graph_free(g);
        }
    static const int64_t shapes3[][3] = {{3, 5, 7}, {16, 16, 16}};
    for (int s = 0; s < (quick ? 1 : 2); s++)
        for (int conn = 6; conn <= 26; conn += 20) {
            oracle_caps caps = oracle_caps_default();
            gcut_grid *grid = NULL;
            CHECK_OK(oracle_make_grid(rng, 3, shapes3[s], conn, &caps, &grid));
            if (grid == NULL)
                continue;
            int64_t expected = oracle_dinic_grid(grid);
            char what[96];
            snprintf(what, sizeof what, "grid %lldx%lldx%lld conn %d via conversion",
                     (long long)shapes3[s][0], (long long)shapes3[s][1], (long long)shapes3[s][2],
                     conn);
            checks += oracle_check_grid(grid, "cuda-general", expected, what);
            gcut_options options;
            gcut_options_init(&options);
            options.solver = "cuda-grid";
            int64_t flow = -1;
            if (gcut_grid_solve(grid, &options, &flow, NULL, NULL) == GCUT_OK)
                CHECK_EQ_I64(flow, expected);
            gcut_grid_free(grid);
        }
}

/* Isolated vertices: most nodes have no edge at all, some only terminals. */
static void isolated(test_rng *rng) {
    const int64_t n = 10000;
    gcut_graph *g = NULL;
    CHECK_OK(gcut_graph_create(n, 0, &g));
    if (g == NULL)
        return;
    for (int k = 0; k < 300; k++) {
        int64_t u = test_rng_range(rng, 0, n - 1), v = test_rng_range(rng, 0, n - 1);
        CHECK_OK(gcut_graph_add_edge(g, u, v, (int32_t)test_rng_range(rng, 0, 50),
                                     (int32_t)test_rng_range(rng, 0, 50)));
    }
    for (int k = 0; k < 500; k++)
        CHECK_OK(gcut_graph_add_tweights(g, test_rng_range(rng, 0, n - 1),
                                         (int32_t)test_rng_range(rng, 0, 80),
                                         (int32_t)test_rng_range(rng, 0, 80)));
    check_graph(g, "isolated vertices");
    gcut_graph_free(g);
    /* No edges at all; and a graph of one node. */
    CHECK_OK(gcut_graph_create(5, 0, &g));
    CHECK_OK(gcut_graph_add_tweights(g, 2, 7, 3));
    CHECK_OK(gcut_graph_add_tweights(g, 4, 0, 9));
    check_graph(g, "no edges");
    gcut_graph_free(g);
}

/* A hub with `leaves` arcs (the warp-cooperative path): source -> hub -> leaves -> sink, and
 * the mirror, leaves fed by the source draining through the hub. */
static void hub(test_rng *rng, int64_t leaves) {
    for (int mirror = 0; mirror < 2; mirror++) {
        gcut_graph *g = NULL;
        CHECK_OK(gcut_graph_create(leaves + 1, leaves, &g));
        if (g == NULL)
            return;
        for (int64_t i = 1; i <= leaves; i++) {
            int32_t c = (int32_t)test_rng_range(rng, 0, 1000);
            CHECK_OK(mirror ? gcut_graph_add_edge(g, i, 0, c, 0)
                            : gcut_graph_add_edge(g, 0, i, c, 0));
            int32_t t = (int32_t)test_rng_range(rng, 0, 1000);
            CHECK_OK(mirror ? gcut_graph_add_tweights(g, i, t, 0)
                            : gcut_graph_add_tweights(g, i, 0, t));
        }
        for (int k = 0; k < 20000; k++) /* hub terminal past int32: many calls add up */
            CHECK_OK(mirror ? gcut_graph_add_tweights(g, 0, 0, INT32_MAX / 4)
                            : gcut_graph_add_tweights(g, 0, INT32_MAX / 4, 0));
        char what[64];
        snprintf(what, sizeof what, "hub of %lld arcs%s", (long long)leaves,
                 mirror ? " (into the hub)" : "");
        check_graph(g, what);
        gcut_graph_free(g);
    }
}

/* A path of n vertices: flow crosses n arcs (long augmenting paths, a deep BFS). */
static void path(test_rng *rng, int64_t n) {
    gcut_graph *g = NULL;
    CHECK_OK(gcut_graph_create(n, n, &g));
    if (g == NULL)
        return;
    for (int64_t i = 0; i + 1 < n; i++)
        CHECK_OK(gcut_graph_add_edge(g, i, i + 1, (int32_t)test_rng_range(rng, 1000, 2000),
                                     (int32_t)test_rng_range(rng, 0, 3)));
    CHECK_OK(gcut_graph_add_tweights(g, 0, 5000, 0));
    CHECK_OK(gcut_graph_add_tweights(g, n - 1, 0, 5000));
    CHECK_OK(gcut_graph_add_tweights(g, n / 2, 0, 10)); /* a side exit halfway */
    char what[64];
    snprintf(what, sizeof what, "path of %lld vertices", (long long)n);
    check_graph(g, what);
    gcut_graph_free(g);
}

/* Flows past 2^31: many parallel paths of INT32_MAX capacity. */
static void big_flow(void) {
    const int64_t paths = 64;
    gcut_graph *g = NULL;
    CHECK_OK(gcut_graph_create(2 * paths, 2 * paths, &g));
    if (g == NULL)
        return;
    for (int64_t p = 0; p < paths; p++) {
        CHECK_OK(gcut_graph_add_edge(g, 2 * p, 2 * p + 1, INT32_MAX, INT32_MAX));
        CHECK_OK(gcut_graph_add_edge(g, 2 * p, 2 * p + 1, INT32_MAX - 1, 0)); /* parallel */
        CHECK_OK(gcut_graph_add_edge(g, 2 * p + 1, 2 * ((p + 1) % paths), INT32_MAX, INT32_MAX));
        for (int k = 0; k < 3; k++) {
            CHECK_OK(gcut_graph_add_tweights(g, 2 * p, INT32_MAX, 0));
            CHECK_OK(gcut_graph_add_tweights(g, 2 * p + 1, 0, INT32_MAX));
        }
    }
    int64_t expected = oracle_dinic(g);
    CHECK(expected > ((int64_t)1 << 31));
    check_graph(g, "flow past 2^31");
    gcut_graph_free(g);
}

/* Bad requests: clear errors, no crash. */
static void errors(test_rng *rng) {
    oracle_caps caps = oracle_caps_default();
    gcut_graph *g = NULL;
    CHECK_OK(oracle_make_random(rng, 1000, 5000, &caps, &g));
    if (g == NULL)
        return;
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "cuda-general";
    int64_t flow = -1;
    /* The device cap: too small for the graph gives GCUT_ERR_NOMEM naming the bytes. */
    setenv("GCUT_DEVICE_MEMORY_LIMIT", "4096", 1);
    gcut_status st = gcut_graph_solve(g, &options, &flow, NULL, NULL);
    CHECK_EQ_I64(st, GCUT_ERR_NOMEM);
    CHECK(strstr(gcut_last_error(), "bytes") != NULL);
    printf("device cap message: %s\n", gcut_last_error());
    unsetenv("GCUT_DEVICE_MEMORY_LIMIT");
    options.device = 999;
    CHECK_EQ_I64(gcut_graph_solve(g, &options, &flow, NULL, NULL), GCUT_ERR_NO_DEVICE);
    options.device = 0;
    /* After the failures the solver works again. */
    check_graph(g, "after errors");
    gcut_graph_free(g);
    checks++;
}

/* "auto" (registry.c, from the measured table): cuda-general for graphs that are not lattices
 * from 32768 nodes, for lattices (grids written as graphs) from 2,000,000 nodes; the CPU pick
 * (ibfs) below. */
static void auto_pick(gcut_graph *g, const char *expected, int64_t flow_expected) {
    gcut_stats stats;
    int64_t flow = -1;
    CHECK_OK(gcut_graph_solve(g, NULL, &flow, NULL, &stats));
    CHECK_EQ_I64(flow, flow_expected);
    if (strcmp(stats.solver, expected) != 0) {
        fprintf(stderr, "auto on %lld nodes picked %s, expected %s\n",
                (long long)gcut_graph_num_nodes(g), stats.solver, expected);
        test_failures++;
    }
    checks++;
}

static void auto_rule(test_rng *rng) {
    const int64_t sizes[2] = {1000, 2000000};
    for (int k = 0; k < 2; k++) {
        gcut_graph *g = NULL;
        CHECK_OK(gcut_graph_create(sizes[k], 0, &g));
        if (g == NULL)
            return;
        CHECK_OK(gcut_graph_add_tweights(g, 0, 5, 3));
        CHECK_OK(gcut_graph_add_tweights(g, sizes[k] - 1, 2, 9));
        auto_pick(g, k == 0 ? "ibfs" : "cuda-general", 5);
        gcut_graph_free(g);
    }
    /* 40000 nodes: a random graph goes to the GPU, a 200 x 200 grid graph stays on the CPU. */
    oracle_caps caps = oracle_caps_default();
    gcut_graph *g = NULL;
    CHECK_OK(oracle_make_random(rng, 40000, 120000, &caps, &g));
    if (g != NULL)
        auto_pick(g, "cuda-general", oracle_dinic(g));
    gcut_graph_free(g);
    g = NULL;
    CHECK_OK(oracle_make_grid_graph(rng, 200, 200, 4, &caps, &g));
    if (g != NULL)
        auto_pick(g, "ibfs", oracle_dinic(g));
    gcut_graph_free(g);
}

/* auto's shape test (registry.c, no GPU needed): grids written as graphs are lattices (share
 * 1), random graphs are not (near 0), a GENRMF-like graph (frames of 4-connected lattices joined
 * by random arcs between frames) is not (about 2/3). */
static void lattice_share(test_rng *rng) {
    oracle_caps caps = oracle_caps_default();
    for (int conn = 4; conn <= 8; conn += 4) {
        gcut_graph *g = NULL;
        CHECK_OK(oracle_make_grid_graph(rng, 150, 201, conn, &caps, &g));
        if (g != NULL)
            CHECK(gcut__graph_lattice_share(g) == 1.0);
        gcut_graph_free(g);
    }
    gcut_grid *grid = NULL;
    gcut_graph *g = NULL;
    CHECK_OK(gcut_synth_grid(40, 30, 20, 3, GCUT_SYNTH_HARD, 0, &grid));
    CHECK_OK(gcut_grid_to_graph(grid, &g));
    if (g != NULL)
        CHECK(gcut__graph_lattice_share(g) == 1.0);
    gcut_graph_free(g);
    gcut_grid_free(grid);
    g = NULL;
    CHECK_OK(oracle_make_random(rng, 100000, 300000, &caps, &g));
    if (g != NULL) {
        double share = gcut__graph_lattice_share(g);
        printf("lattice share of a random graph: %.4f\n", share);
        CHECK(share < 0.05);
    }
    gcut_graph_free(g);
    const int64_t a = 32, frames = 16, n = a * a * frames;
    CHECK_OK(gcut_graph_create(n, 3 * n, &g));
    if (g == NULL)
        return;
    for (int64_t f = 0; f < frames; f++)
        for (int64_t i = 0; i < a * a; i++) {
            const int64_t u = f * a * a + i;
            if (i % a + 1 < a)
                CHECK_OK(gcut_graph_add_edge(g, u, u + 1, 10, 10));
            if (i + a < a * a)
                CHECK_OK(gcut_graph_add_edge(g, u, u + a, 10, 10));
            if (f + 1 < frames)
                CHECK_OK(gcut_graph_add_edge(
                    g, u, (f + 1) * a * a + test_rng_range(rng, 0, a * a - 1), 5, 0));
        }
    double share = gcut__graph_lattice_share(g);
    printf("lattice share of a GENRMF-like graph: %.4f\n", share);
    CHECK(share > 0.5 && share < 0.8);
    gcut_graph_free(g);
    checks += 5;
}

/* The padded layout's rule under auto (registry.c, no GPU needed): padded where the padding adds
 * at most 25% to the arcs and no vertex has more than 32 arcs; the CSR for hubs, for graphs
 * whose degrees vary (random, RLG) and for graphs without arcs. */
static void layout_rule(void) {
    /* 4-connected 3840 x 2160 grid: 4 * n slots against 2 * (2n - W - H) arcs. */
    const int64_t w = 3840, h = 2160, n = w * h, pitch = (n + 31) / 32 * 32;
    const int64_t grid_arcs = 2 * (2 * n - w - h);
    CHECK(gcut__cudageneral_layout_rule(n, grid_arcs, 4, 4 * pitch) == 1);
    /* 256^3, 6-connected. */
    const int64_t s = 256, n3 = s * s * s, arcs3 = 2 * 3 * s * s * (s - 1);
    CHECK(gcut__cudageneral_layout_rule(n3, arcs3, 6, 6 * n3) == 1);
    /* A hub of 10^5 arcs among leaves of degree 1: never padded, whatever the slots. */
    CHECK(gcut__cudageneral_layout_rule(100001, 200000, 100000, 0) == 0);
    CHECK(gcut__cudageneral_layout_rule(1000, 31000, 33, 33 * 1024) == 0);
    /* A random graph of mean degree 10 and maximum 25: 2.5x the slots. */
    CHECK(gcut__cudageneral_layout_rule(1000000, 10000000, 25, 26000000) == 0);
    /* The bound itself: 125% of the arcs passes, one slot more does not. */
    CHECK(gcut__cudageneral_layout_rule(1000, 800, 5, 1000) == 1);
    CHECK(gcut__cudageneral_layout_rule(1000, 800, 5, 1001) == 0);
    /* No arcs, no nodes. */
    CHECK(gcut__cudageneral_layout_rule(1000, 0, 0, 4096) == 0);
    CHECK(gcut__cudageneral_layout_rule(0, 0, 0, 0) == 0);
    checks += 9;
}

/* On the device: auto builds the padded layout for grids written as graphs (4- and
 * 8-connected), the CSR for a random graph and for the hub; GCUT_CUDAGENERAL_LAYOUT=csr keeps
 * the CSR on a grid; a bad value is GCUT_ERR_INVALID_ARG naming it. */
static void layout_auto(test_rng *rng) {
    oracle_caps caps = oracle_caps_default();
    for (int conn = 4; conn <= 8; conn += 4) {
        gcut_graph *g = NULL;
        CHECK_OK(oracle_make_grid_graph(rng, 64, 64, conn, &caps, &g));
        if (g == NULL)
            return;
        int64_t expected = oracle_dinic(g);
        checks += oracle_check_graph(g, "cuda-general", 0, expected, "grid graph, auto layout");
        CHECK_EQ_I64(gcut__cudageneral_last_layout(), conn);
        setenv("GCUT_CUDAGENERAL_LAYOUT", "csr", 1);
        checks += oracle_check_graph(g, "cuda-general", 0, expected, "grid graph, csr layout");
        CHECK_EQ_I64(gcut__cudageneral_last_layout(), 0);
        setenv("GCUT_CUDAGENERAL_LAYOUT", "ell", 1);
        gcut_options options;
        gcut_options_init(&options);
        options.solver = "cuda-general";
        int64_t flow = -1;
        CHECK_EQ_I64(gcut_graph_solve(g, &options, &flow, NULL, NULL), GCUT_ERR_INVALID_ARG);
        CHECK(strstr(gcut_last_error(), "GCUT_CUDAGENERAL_LAYOUT=ell") != NULL);
        unsetenv("GCUT_CUDAGENERAL_LAYOUT");
        gcut_graph_free(g);
        checks += 3;
    }
    gcut_graph *g = NULL;
    CHECK_OK(oracle_make_random(rng, 5000, 20000, &caps, &g));
    if (g != NULL) {
        checks += oracle_check_graph(g, "cuda-general", 0, oracle_dinic(g), "random, auto layout");
        CHECK_EQ_I64(gcut__cudageneral_last_layout(), 0);
    }
    gcut_graph_free(g);
    g = NULL;
    const int64_t leaves = 2000;
    CHECK_OK(gcut_graph_create(leaves + 1, leaves, &g));
    if (g == NULL)
        return;
    for (int64_t i = 1; i <= leaves; i++) {
        CHECK_OK(gcut_graph_add_edge(g, 0, i, (int32_t)test_rng_range(rng, 0, 100), 0));
        CHECK_OK(gcut_graph_add_tweights(g, i, 0, (int32_t)test_rng_range(rng, 0, 100)));
    }
    CHECK_OK(gcut_graph_add_tweights(g, 0, 100000, 0));
    for (int forced = 0; forced < 2; forced++) {
        if (forced)
            setenv("GCUT_CUDAGENERAL_LAYOUT", "padded", 1);
        checks += oracle_check_graph(g, "cuda-general", 0, oracle_dinic(g),
                                     forced ? "hub, padded asked" : "hub, auto layout");
        CHECK_EQ_I64(gcut__cudageneral_last_layout(), 0);
        unsetenv("GCUT_CUDAGENERAL_LAYOUT");
    }
    gcut_graph_free(g);
    checks += 3;
}

int main(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed());
    lattice_share(&rng);
    layout_rule();
    if (test_failures)
        return test_finish("test_cuda_general", checks);
    gcut_solver_info info;
    if (gcut_solver_find("cuda-general", &info) != GCUT_OK || !info.available) {
        printf("test_cuda_general: skipped (cuda-general not built or no usable GPU)\n");
        return TEST_SKIP;
    }
    /* GCUT_TEST_QUICK=1: the small cases only, for memcheck; 2: fewer still, for racecheck
     * (which did not finish the first set in 90 s on the H100). */
    const char *q = getenv("GCUT_TEST_QUICK");
    quick = q != NULL && *q != '\0' && *q != '0' ? (*q == '2' ? 2 : 1) : 0;
    tiny(&rng, quick > 1 ? 10 : quick ? 40 : 300);
    random_graphs(&rng);
    layered(&rng);
    grids(&rng);
    isolated(&rng);
    hub(&rng, quick > 1 ? 100 : quick ? 2000 : 100000);
    path(&rng, quick > 1 ? 200 : quick ? 3000 : 100000);
    big_flow();
    errors(&rng);
    layout_auto(&rng);
    if (quick < 2)
        auto_rule(&rng);
    return test_finish("test_cuda_general", checks);
}
