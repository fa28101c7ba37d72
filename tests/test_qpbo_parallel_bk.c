/* test_qpbo_parallel_bk.c - `parallel-bk` (Liu & Sun's parallel max-flow on the P-QPBO core)
 * against independent oracles: brute force on tiny graphs, Dinic on random, layered and grid
 * graphs and on grids (huge capacities included), the cut certificate on every result, and
 * the same flow and the same (minimal) cut as bk for every thread count and block split. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "util_common.h"
#include "util_oracle.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0;

#define count(ok) CHECK_COUNT(passed, ok)

/* A random block count; one time in three, merges put their pairs into play on helper
 * threads a few records each (GCUT_QPBO_ADD_SLICE), which real sizes do past 64 Ki records. */
static void set_split(test_rng *rng) {
    char text[16];
    snprintf(text, sizeof text, "%d", (int)test_rng_range(rng, 1, 40));
    setenv("GCUT_QPBO_BLOCKS", text, 1);
    if (test_rng_range(rng, 0, 2) == 0) {
        snprintf(text, sizeof text, "%d", (int)test_rng_range(rng, 1, 8));
        setenv("GCUT_QPBO_ADD_SLICE", text, 1);
    } else {
        unsetenv("GCUT_QPBO_ADD_SLICE");
    }
}

/* parallel-bk with threads and a random split: flow, certificate, and bk's minimal cut. */
static bool check_graph(test_rng *rng, gcut_graph *g, int64_t expected, const char *what) {
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "bk";
    opt.warm = 0;
    int64_t n = gcut_graph_num_nodes(g), bk_flow = 0, flow = 0;
    uint8_t *ref = malloc((size_t)n + 1), *got = malloc((size_t)n + 1);
    bool ok = gcut_graph_solve(g, &opt, &bk_flow, ref, NULL) == GCUT_OK;
    opt.solver = "parallel-bk";
    opt.threads = (int)test_rng_range(rng, 1, 4);
    set_split(rng);
    ok = ok && oracle_check_graph(g, "parallel-bk", 0, expected, what);
    ok = ok && gcut_graph_solve(g, &opt, &flow, got, NULL) == GCUT_OK && flow == expected &&
         memcmp(ref, got, (size_t)n) == 0;
    unsetenv("GCUT_QPBO_BLOCKS");
    if (!ok)
        fprintf(stderr, "%s: parallel-bk flow %lld, expected %lld (%d threads)\n", what,
                (long long)flow, (long long)expected, opt.threads);
    free(ref);
    free(got);
    return ok;
}

static void test_graphs(test_rng *rng) {
    int bad = 0;
    for (int round = 0; round < 600 && bad < 5; round++) {
        oracle_caps caps = oracle_caps_default();
        caps.max_cap = (int32_t)test_rng_range(rng, 1, 30);
        caps.terminal_density = (int)test_rng_range(rng, 0, 100);
        caps.zero_percent = (int)test_rng_range(rng, 0, 40);
        caps.one_way_percent = (int)test_rng_range(rng, 0, 60);
        caps.parallel_percent = (int)test_rng_range(rng, 0, 30);
        caps.self_loop_percent = (int)test_rng_range(rng, 0, 10);
        caps.huge = round % 9 == 0;
        gcut_graph *g = NULL;
        int64_t n = test_rng_range(rng, 1, 12);
        CHECK_OK(oracle_make_random(rng, n, test_rng_range(rng, 0, 4 * n), &caps, &g));
        if (g == NULL)
            return;
        if (!check_graph(rng, g, oracle_brute_force(g), "tiny random graph"))
            bad++;
        gcut_graph_free(g);
    }
    for (int round = 0; round < 30 && bad < 5; round++) {
        oracle_caps caps = oracle_caps_default();
        caps.huge = round % 5 == 0;
        gcut_graph *g = NULL;
        const char *what;
        if (round % 3 == 0) {
            what = "random graph";
            int64_t n = test_rng_range(rng, 20, 400);
            CHECK_OK(oracle_make_random(rng, n, test_rng_range(rng, n, 5 * n), &caps, &g));
        } else if (round % 3 == 1) {
            what = "layered graph";
            CHECK_OK(oracle_make_layered(rng, test_rng_range(rng, 2, 30),
                                         test_rng_range(rng, 2, 30), (int)test_rng_range(rng, 1, 4),
                                         &caps, &g));
        } else {
            what = "grid graph";
            CHECK_OK(oracle_make_grid_graph(rng, test_rng_range(rng, 2, 60),
                                            test_rng_range(rng, 2, 60), round % 2 ? 4 : 8, &caps,
                                            &g));
        }
        if (g == NULL)
            return;
        if (!check_graph(rng, g, oracle_dinic(g), what))
            bad++;
        gcut_graph_free(g);
    }
    test_failures += bad;
    count(bad == 0);
}

static void test_grids(test_rng *rng) {
    int bad = 0;
    for (int round = 0; round < 24 && bad < 5; round++) {
        oracle_caps caps = oracle_caps_default();
        caps.huge = round % 6 == 0;
        int ndim = round % 2 ? 3 : 2;
        int conns2[2] = {4, 8}, conns3[2] = {6, 26};
        int conn = ndim == 2 ? conns2[round / 2 % 2] : conns3[round / 2 % 2];
        int64_t shape[3];
        for (int a = 0; a < ndim; a++)
            shape[a] = test_rng_range(rng, 1, ndim == 2 ? 70 : 14);
        gcut_grid *grid = NULL;
        CHECK_OK(oracle_make_grid(rng, ndim, shape, conn, &caps, &grid));
        if (grid == NULL)
            return;
        int64_t n = gcut_grid_num_nodes(grid), expected = oracle_dinic_grid(grid), flow = -1;
        set_split(rng);
        bool ok = oracle_check_grid(grid, "parallel-bk", expected, "grid");
        uint8_t *ref = malloc((size_t)n), *got = malloc((size_t)n);
        gcut_options opt;
        gcut_options_init(&opt);
        opt.solver = "bk";
        ok = ok && gcut_grid_solve(grid, &opt, NULL, ref, NULL) == GCUT_OK;
        opt.solver = "parallel-bk";
        opt.threads = (int)test_rng_range(rng, 1, 4);
        ok = ok && gcut_grid_solve(grid, &opt, &flow, got, NULL) == GCUT_OK && flow == expected &&
             memcmp(ref, got, (size_t)n) == 0;
        unsetenv("GCUT_QPBO_BLOCKS");
        if (!ok) {
            bad++;
            fprintf(stderr, "grid %dD conn %d: parallel-bk %lld, Dinic %lld\n", ndim, conn,
                    (long long)flow, (long long)expected);
        }
        free(ref);
        free(got);
        gcut_grid_free(grid);
    }
    test_failures += bad;
    count(bad == 0);
}

int main(void) {
    /* Every solve also checks that the source tree is the set reachable from the source. */
    setenv("GCUT_QPBO_CHECK_REACH", "1", 1);
    uint64_t seed = test_seed();
    test_rng rng;
    test_rng_init(&rng, seed);
    test_graphs(&rng);
    test_grids(&rng);
    return test_finish("test_qpbo_parallel_bk", passed);
}
