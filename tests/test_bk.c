/* test_bk.c - the serial Boykov-Kolmogorov solver against independent oracles: brute force on
 * thousands of tiny graphs, Dinic on medium random, layered and grid graphs (huge capacities
 * included), edge cases, and warm re-solves (Kohli-Torr) against the oracle after each round. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "internal.h"
#include "util_common.h"
#include "util_oracle.h"

#include <stdlib.h>
#include <string.h>

static int passed = 0;

#define count(ok) CHECK_COUNT(passed, ok)

/* The oracles agree with each other, so a disagreement below is bk's. */
static void test_oracles_agree(test_rng *rng) {
    int bad = 0;
    for (int round = 0; round < 300; round++) {
        oracle_caps caps = oracle_caps_default();
        caps.terminal_density = (int)test_rng_range(rng, 20, 100);
        caps.zero_percent = (int)test_rng_range(rng, 0, 30);
        caps.huge = round % 7 == 0;
        gcut_graph *g = NULL;
        int64_t n = test_rng_range(rng, 1, 12);
        CHECK_OK(oracle_make_random(rng, n, test_rng_range(rng, 0, 3 * n), &caps, &g));
        if (g == NULL)
            continue;
        int64_t brute = oracle_brute_force(g), dinic = oracle_dinic(g);
        if (brute != dinic) {
            fprintf(stderr, "oracles disagree on round %d: brute %lld, dinic %lld\n", round,
                    (long long)brute, (long long)dinic);
            bad++;
        }
        gcut_graph_free(g);
    }
    test_failures += bad;
    count(bad == 0);
}

/* Thousands of tiny graphs of every kind the makers produce, against brute force. */
static void test_tiny_brute_force(test_rng *rng, int rounds, const char *label) {
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
        caps.huge = round % 11 == 0;
        int64_t n = test_rng_range(rng, 0, 10);
        gcut_graph *g = NULL;
        gcut_status st = round % 5 == 4 && n >= 4
                             ? oracle_make_grid_graph(rng, 2, n / 2, round % 2 ? 8 : 4, &caps, &g)
                             : oracle_make_random(rng, n, test_rng_range(rng, 0, 3 * n), &caps, &g);
        CHECK_OK(st);
        if (g == NULL)
            return;
        char what[96];
        snprintf(what, sizeof what, "%s tiny round %d (n=%lld)", label, round,
                 (long long)gcut_graph_num_nodes(g));
        ok = oracle_check_graph(g, "bk", round % 2, oracle_brute_force(g), what);
        gcut_graph_free(g);
    }
    count(ok);
}

static void check_against_dinic(gcut_graph *g, const char *what) {
    if (g == NULL)
        return;
    count(oracle_check_graph(g, "bk", 0, oracle_dinic(g), what));
}

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
        check_against_dinic(g, what);
        gcut_graph_free(g);

        snprintf(what, sizeof what, "layered 40x100 (huge %d)", huge);
        CHECK_OK(oracle_make_layered(rng, 40, 100, 3, &caps, &g));
        check_against_dinic(g, what);
        gcut_graph_free(g);

        caps.max_cap = 50;
        caps.terminal_density = 60;
        snprintf(what, sizeof what, "grid 120x150 4-conn (huge %d)", huge);
        CHECK_OK(oracle_make_grid_graph(rng, 120, 150, 4, &caps, &g));
        check_against_dinic(g, what);
        gcut_graph_free(g);

        snprintf(what, sizeof what, "grid 80x90 8-conn (huge %d)", huge);
        CHECK_OK(oracle_make_grid_graph(rng, 80, 90, 8, &caps, &g));
        check_against_dinic(g, what);
        gcut_graph_free(g);
    }
    /* A segmentation-like grid of 10^5 nodes: strong smoothness, terminals everywhere, so
     * the trees grow large and orphans are many. */
    oracle_caps caps = oracle_caps_default();
    caps.max_cap = 30;
    caps.max_terminal = 60;
    caps.terminal_density = 100;
    gcut_graph *g = NULL;
    CHECK_OK(oracle_make_grid_graph(rng, 250, 400, 4, &caps, &g));
    check_against_dinic(g, "grid 250x400 dense terminals");
    gcut_graph_free(g);
}

/* Grids, which bk reads natively: every dimension and connectivity the library takes. */
static void test_grids(test_rng *rng) {
    static const struct {
        int ndim, connectivity;
        int64_t shape[3];
    } cases[] = {{2, 4, {40, 50, 0}}, {2, 8, {30, 33, 0}}, {3, 6, {9, 10, 11}}, {3, 26, {6, 7, 8}},
                 {2, 4, {1, 200, 0}}, {2, 8, {1, 1, 0}},   {3, 6, {1, 1, 300}}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        oracle_caps caps = oracle_caps_default();
        caps.terminal_density = 50;
        caps.one_way_percent = 20;
        caps.zero_percent = 30; /* some neighbour pairs have no capacity either way */
        caps.huge = c % 3 == 2;
        gcut_grid *grid = NULL;
        CHECK_OK(oracle_make_grid(rng, cases[c].ndim, cases[c].shape, cases[c].connectivity, &caps,
                                  &grid));
        if (grid == NULL)
            continue;
        char what[64];
        snprintf(what, sizeof what, "grid case %zu (%dD, %d-connected)", c, cases[c].ndim,
                 cases[c].connectivity);
        count(oracle_check_grid(grid, "bk", oracle_dinic_grid(grid), what));
        gcut_grid_free(grid);
    }
}

/* Sums far past 2^31 everywhere: terminal sums past INT32_MAX per node, and edges carrying
 * INT32_MAX both ways (a residual then reaches 2^32 - 2). */
static void test_huge_sums(void) {
    gcut_graph *g = NULL;
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
    int64_t expected = oracle_brute_force(g);
    CHECK_EQ_I64(expected, 2 * (int64_t)INT32_MAX);
    count(oracle_check_graph(g, "bk", 1, expected, "huge sums"));
    /* Warm: each edge 1->2 now carries INT32_MAX; turn one round completely. */
    CHECK_OK(gcut_graph_set_edge(g, 2, 0, INT32_MAX));
    count(oracle_check_graph(g, "bk", 1, oracle_brute_force(g), "huge sums, edge reversed"));
    CHECK_OK(gcut_graph_set_tweights(g, 0, (int64_t)1 << 40, 0));
    CHECK_OK(gcut_graph_set_edge(g, 2, INT32_MAX, INT32_MAX));
    count(oracle_check_graph(g, "bk", 1, oracle_brute_force(g), "huge sums, restored"));
    gcut_graph_free(g);
}

static void test_edge_cases(void) {
    gcut_graph *g = NULL;
    int64_t flow = -1;
    CHECK_OK(gcut_graph_create(0, 0, &g));
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "bk";
    gcut_stats stats;
    CHECK_OK(gcut_graph_solve(g, &options, &flow, NULL, &stats));
    count(flow == 0 && strcmp(stats.solver, "bk") == 0);
    gcut_graph_free(g);

    /* No edges: every node's flow is min(source, sink); labels follow the larger side. */
    CHECK_OK(gcut_graph_create(5, 0, &g));
    CHECK_OK(gcut_graph_add_tweights(g, 0, 7, 3));
    CHECK_OK(gcut_graph_add_tweights(g, 1, 2, 9));
    CHECK_OK(gcut_graph_add_tweights(g, 3, 4, 4));
    CHECK_OK(gcut_graph_add_tweights(g, 4, 0, 6));
    uint8_t labels[8];
    CHECK_OK(gcut_graph_solve(g, &options, &flow, labels, NULL));
    CHECK_EQ_I64(flow, 3 + 2 + 4);
    count(flow == 9 && labels[0] == GCUT_SOURCE && labels[1] == GCUT_SINK &&
          labels[4] == GCUT_SINK);
    count(oracle_check_graph(g, "bk", 1, 9, "no edges"));
    gcut_graph_free(g);

    /* Self-loops only, and edges with no terminals at all. */
    CHECK_OK(gcut_graph_create(3, 0, &g));
    CHECK_OK(gcut_graph_add_edge(g, 1, 1, 100, 100));
    CHECK_OK(gcut_graph_add_edge(g, 0, 2, 5, 5));
    count(oracle_check_graph(g, "bk", 0, 0, "no terminals"));
    CHECK_OK(gcut_graph_add_tweights(g, 1, 10, 10));
    count(oracle_check_graph(g, "bk", 0, 10, "self-loop with terminals"));
    gcut_graph_free(g);

    /* A maximum flow past INT64_MAX is refused, fresh and warm, and leaves no state behind. */
    int64_t big = INT64_MAX / 4;
    CHECK_OK(gcut_graph_create(6, 0, &g));
    for (int64_t i = 0; i < 3; i++)
        CHECK_OK(gcut_graph_set_tweights(g, i, big, big));
    count(gcut_graph_solve(g, &options, &flow, labels, NULL) == GCUT_OK && flow == 3 * big);
    CHECK_OK(gcut_graph_set_tweights(g, 3, big, big));
    CHECK_OK(gcut_graph_set_tweights(g, 4, big, big));
    count(gcut_graph_solve(g, &options, &flow, labels, NULL) == GCUT_ERR_OVERFLOW &&
          strstr(gcut_last_error(), "INT64_MAX") != NULL && g->state.data == NULL);
    options.warm = 0;
    count(gcut_graph_solve(g, &options, &flow, labels, NULL) == GCUT_ERR_OVERFLOW);
    options.warm = 1;
    CHECK_OK(gcut_graph_set_tweights(g, 3, big, 0));
    CHECK_OK(gcut_graph_set_tweights(g, 4, 0, big));
    count(gcut_graph_solve(g, &options, &flow, labels, NULL) == GCUT_OK && flow == 3 * big);
    CHECK_OK(gcut_graph_add_edge(g, 3, 4, INT32_MAX, 0));
    count(gcut_graph_solve(g, &options, &flow, labels, NULL) == GCUT_OK &&
          flow == 3 * big + INT32_MAX && gcut_graph_verify(g, labels, flow, NULL) == GCUT_OK);
    gcut_graph_free(g);

    /* A known answer: a chain whose bottleneck is in the middle. */
    CHECK_OK(gcut_graph_create(4, 3, &g));
    CHECK_OK(gcut_graph_add_tweights(g, 0, 10, 0));
    CHECK_OK(gcut_graph_add_edge(g, 0, 1, 8, 0));
    CHECK_OK(gcut_graph_add_edge(g, 1, 2, 3, 0));
    CHECK_OK(gcut_graph_add_edge(g, 2, 3, 8, 0));
    CHECK_OK(gcut_graph_add_tweights(g, 3, 0, 10));
    CHECK_OK(gcut_graph_solve(g, &options, &flow, labels, &stats));
    CHECK_EQ_I64(flow, 3);
    count(flow == 3 && labels[0] == GCUT_SOURCE && labels[1] == GCUT_SOURCE &&
          labels[2] == GCUT_SINK && labels[3] == GCUT_SINK && stats.augmentations == 1);
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
    options.solver = "bk";
    int64_t flow = -1;
    gcut_status st = gcut_graph_solve(g, &options, &flow, NULL, NULL);
    count(st == GCUT_ERR_NOMEM && strstr(gcut_last_error(), "bk") != NULL);
    count(gcut_memory_in_use() == held && g->state.data == NULL);
    gcut_set_memory_limit(0);
    count(oracle_check_graph(g, "bk", 1, oracle_dinic(g), "after the memory cap"));
    gcut_graph_free(g);
}

/* One round of random changes of every kind the API allows. */
static void random_changes(test_rng *rng, gcut_graph *g, int changes, int32_t max_cap) {
    int64_t n = gcut_graph_num_nodes(g), m = gcut_graph_num_edges(g);
    for (int c = 0; c < changes; c++) {
        int64_t kind = test_rng_range(rng, 0, 5);
        if (kind <= 2 && m > 0) {
            int64_t e = test_rng_range(rng, 0, m - 1);
            int64_t u, v;
            int32_t cap, rev;
            CHECK_OK(gcut_graph_get_edge(g, e, &u, &v, &cap, &rev));
            if (kind == 0) { /* decrease, often to zero */
                cap = test_rng_range(rng, 0, 1) ? 0 : (int32_t)test_rng_range(rng, 0, cap);
                rev = (int32_t)test_rng_range(rng, 0, rev);
            } else if (kind == 1) { /* increase */
                cap = (int32_t)test_rng_range(rng, cap, (int64_t)cap + max_cap);
                rev = (int32_t)test_rng_range(rng, rev, (int64_t)rev + max_cap);
            } else {
                cap = (int32_t)test_rng_range(rng, 0, max_cap);
                rev = (int32_t)test_rng_range(rng, 0, max_cap);
            }
            CHECK_OK(gcut_graph_set_edge(g, e, cap, rev));
        } else if (n > 0) {
            int64_t i = test_rng_range(rng, 0, n - 1);
            if (kind == 3) {
                CHECK_OK(gcut_graph_add_tweights(g, i, (int32_t)test_rng_range(rng, 0, max_cap),
                                                 (int32_t)test_rng_range(rng, 0, max_cap)));
            } else {
                int64_t source =
                    test_rng_range(rng, 0, 2) == 0 ? 0 : test_rng_range(rng, 0, max_cap);
                int64_t sink = test_rng_range(rng, 0, 2) == 0 ? 0 : test_rng_range(rng, 0, max_cap);
                CHECK_OK(gcut_graph_set_tweights(g, i, source, sink));
            }
        }
    }
}

/* Warm re-solves: after every round of changes the warm answer must equal the oracle's (flow
 * and a certified min cut), and the state must really have been reused. */
static void test_warm(test_rng *rng, int tiny_graphs, int medium_rounds) {
    int ok = 1;
    for (int t = 0; t < tiny_graphs && ok; t++) {
        oracle_caps caps = oracle_caps_default();
        caps.max_cap = 10;
        caps.max_terminal = 15;
        caps.terminal_density = 60;
        caps.parallel_percent = 10;
        caps.self_loop_percent = 5;
        int64_t n = test_rng_range(rng, 1, 9);
        gcut_graph *g = NULL;
        CHECK_OK(oracle_make_random(rng, n, test_rng_range(rng, 0, 3 * n), &caps, &g));
        if (g == NULL)
            return;
        for (int round = 0; round < 8 && ok; round++) {
            char what[80];
            snprintf(what, sizeof what, "warm tiny graph %d round %d", t, round);
            ok = oracle_check_graph(g, "bk", 1, oracle_brute_force(g), what);
            ok = ok && g->state.data != NULL && strcmp(g->state.owner, "bk") == 0;
            random_changes(rng, g, (int)test_rng_range(rng, 1, 4), 12);
        }
        gcut_graph_free(g);
    }
    count(ok);

    oracle_caps caps = oracle_caps_default();
    caps.max_cap = 40;
    caps.max_terminal = 80;
    caps.terminal_density = 70;
    gcut_graph *g = NULL;
    CHECK_OK(oracle_make_grid_graph(rng, 60, 70, 4, &caps, &g));
    if (g == NULL)
        return;
    ok = 1;
    int64_t fresh_augmentations = 0, warm_augmentations = 0;
    for (int round = 0; round < medium_rounds && ok; round++) {
        char what[64];
        snprintf(what, sizeof what, "warm grid round %d", round);
        gcut_options options;
        gcut_options_init(&options);
        options.solver = "bk";
        gcut_stats stats;
        int64_t flow = -1;
        uint8_t *labels = malloc((size_t)gcut_graph_num_nodes(g));
        CHECK_OK(gcut_graph_solve(g, &options, &flow, labels, &stats));
        int64_t expected = oracle_dinic(g);
        CHECK_EQ_I64(flow, expected);
        CHECK_OK(gcut_graph_verify(g, labels, expected, NULL));
        ok = flow == expected && labels != NULL &&
             gcut_graph_verify(g, labels, expected, NULL) == GCUT_OK;
        free(labels);
        if (round == 0)
            fresh_augmentations = stats.augmentations;
        else
            warm_augmentations += stats.augmentations;
        random_changes(rng, g, (int)test_rng_range(rng, 1, 30), 40);
    }
    count(ok);
    /* A few local changes need far fewer paths than the first solve. */
    CHECK(medium_rounds < 2 || warm_augmentations / (medium_rounds - 1) < fresh_augmentations);
    count(medium_rounds < 2 || warm_augmentations / (medium_rounds - 1) < fresh_augmentations);

    /* Adding an edge makes the state stale: it is dropped and the answer stays right. */
    CHECK_OK(gcut_graph_add_edge(g, 0, gcut_graph_num_nodes(g) - 1, 500, 500));
    CHECK(g->structure_changed);
    count(oracle_check_graph(g, "bk", 1, oracle_dinic(g), "after add_edge"));
    CHECK(!g->structure_changed && g->state.data != NULL);
    /* warm = 0 drops the state and keeps none. */
    random_changes(rng, g, 10, 40);
    count(oracle_check_graph(g, "bk", 0, oracle_dinic(g), "warm off"));
    CHECK(g->state.data == NULL);
    count(g->state.data == NULL);
    gcut_graph_free(g);
}

int main(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed());
    test_oracles_agree(&rng);
    test_edge_cases();
    test_huge_sums();
    test_tiny_brute_force(&rng, 10000, "32-bit");
    test_medium(&rng);
    test_grids(&rng);
    test_memory_cap(&rng);
    test_warm(&rng, 1500, 60);
    /* The wide (64-bit index) instantiation, on the same kinds of cases. */
    setenv("GCUT_BK_INDEX_BITS", "64", 1);
    test_edge_cases();
    test_huge_sums();
    test_tiny_brute_force(&rng, 1500, "64-bit");
    test_grids(&rng);
    test_warm(&rng, 200, 10);
    unsetenv("GCUT_BK_INDEX_BITS");
    return test_finish("test_bk", passed);
}
