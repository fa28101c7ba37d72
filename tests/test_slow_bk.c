/* test_slow_bk.c - bk on larger problems than the unit test affords (label slow): synthetic
 * segmentation grids (Hussein et al. 2007, VII), big random and layered graphs with huge
 * capacities, and long runs of warm re-solves, each against the Dinic oracle. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "util_common.h"
#include "util_oracle.h"

#include <stdlib.h>

static int passed = 0;

static void check_dinic(gcut_graph *g, int warm, const char *what) {
    if (g != NULL)
        passed += oracle_check_graph(g, "bk", warm, oracle_dinic(g), what);
}

static void test_synthetic(void) {
    for (int level = GCUT_SYNTH_EASY; level <= GCUT_SYNTH_HARD; level++) {
        gcut_grid *grid = NULL;
        gcut_status st = gcut_synth_grid(512, 384, 1, 3, (gcut_synth_level)level, 4, &grid);
        if (st == GCUT_ERR_UNSUPPORTED) {
            printf("synthetic grids not in this build: skipped\n");
            return;
        }
        CHECK_OK(st);
        if (grid == NULL)
            return;
        passed += oracle_check_grid(grid, "bk", oracle_dinic_grid(grid),
                                    level ? "synthetic hard 512x384" : "synthetic easy 512x384");
        gcut_grid_free(grid);
    }
}

static void test_big_graphs(test_rng *rng) {
    oracle_caps caps = oracle_caps_default();
    caps.huge = 1;
    caps.zero_percent = 20;
    caps.parallel_percent = 5;
    caps.self_loop_percent = 1;
    gcut_graph *g = NULL;
    CHECK_OK(oracle_make_random(rng, 100000, 400000, &caps, &g));
    check_dinic(g, 0, "random 1e5 nodes, huge capacities");
    gcut_graph_free(g);

    caps = oracle_caps_default();
    caps.max_cap = 1000;
    CHECK_OK(oracle_make_layered(rng, 300, 300, 4, &caps, &g));
    check_dinic(g, 0, "layered 300x300");
    gcut_graph_free(g);

    caps.max_cap = 20;
    caps.terminal_density = 100;
    CHECK_OK(oracle_make_grid_graph(rng, 500, 500, 8, &caps, &g));
    check_dinic(g, 0, "grid 500x500 8-connected");
    gcut_graph_free(g);
}

/* Hundreds of warm rounds on one grid, small and large batches of changes mixed. */
static void test_warm_long(test_rng *rng) {
    oracle_caps caps = oracle_caps_default();
    caps.max_cap = 30;
    caps.max_terminal = 60;
    caps.terminal_density = 80;
    gcut_graph *g = NULL;
    CHECK_OK(oracle_make_grid_graph(rng, 150, 200, 4, &caps, &g));
    if (g == NULL)
        return;
    int64_t n = gcut_graph_num_nodes(g), m = gcut_graph_num_edges(g);
    int ok = 1;
    for (int round = 0; round < 200 && ok; round++) {
        char what[48];
        snprintf(what, sizeof what, "warm round %d", round);
        ok = oracle_check_graph(g, "bk", 1, oracle_dinic(g), what);
        int changes = round % 10 == 9 ? 3000 : (int)test_rng_range(rng, 1, 50);
        for (int c = 0; c < changes; c++) {
            if (test_rng_range(rng, 0, 1)) {
                int64_t e = test_rng_range(rng, 0, m - 1);
                CHECK_OK(gcut_graph_set_edge(g, e, (int32_t)test_rng_range(rng, 0, 30),
                                             (int32_t)test_rng_range(rng, 0, 30)));
            } else {
                int64_t i = test_rng_range(rng, 0, n - 1);
                CHECK_OK(gcut_graph_set_tweights(g, i, test_rng_range(rng, 0, 60),
                                                 test_rng_range(rng, 0, 60)));
            }
        }
    }
    passed += ok;
    gcut_graph_free(g);
}

int main(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed());
    test_synthetic();
    test_big_graphs(&rng);
    test_warm_long(&rng);
    setenv("GCUT_BK_INDEX_BITS", "64", 1);
    test_big_graphs(&rng);
    test_warm_long(&rng);
    unsetenv("GCUT_BK_INDEX_BITS");
    return test_finish("test_slow_bk", passed);
}
