/* test_grid_bk.c - grid-bk (src/cpu/grid_bk.c, bk on the implicit grid) against independent
 * oracles: brute force on tiny grids of every connectivity, Dinic and bk on random grids of odd
 * shapes (1xN, Nx1, 1x1xN, zero and one-way capacities, int32 extremes, flows past 2^31), the
 * cut certificate on every result, and warm re-solves in grid contexts against cold solves; and
 * grid-ibfs's fourth-pass paths against the same oracles (grid_ibfs_modes). */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include "test_context_cases.h"

#include <stdlib.h>
#include <string.h>

#define count(ok) CHECK_COUNT(checks, ok)

static const struct { int ndim, connectivity; } kinds[] = {{2, 4}, {2, 8}, {3, 6}, {3, 26}};

/* Tiny grids (at most 16 nodes) of every connectivity and shape against brute force over all
 * labelings of the grid's own graph. */
static void tiny_brute_force(test_rng *rng, int rounds, const char *solver) {
    int ok = 1;
    for (int round = 0; round < rounds && ok; round++) {
        const int k = round % 4;
        int64_t shape[3] = {1, 1, 1};
        int64_t n = 1;
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
            snprintf(what, sizeof what, "tiny round %d (%dD %d-conn, %lld nodes)", round,
                     kinds[k].ndim, kinds[k].connectivity, (long long)n);
            ok = oracle_check_grid(grid, solver, oracle_brute_force(g), what);
        }
        gcut_graph_free(g);
        gcut_grid_free(grid);
    }
    count(ok);
}

/* Random grids of every connectivity and odd shapes against Dinic (small) and bk (larger). */
static void random_grids(test_rng *rng, const char *solver) {
    static const struct {
        int ndim, connectivity;
        int64_t shape[3];
    } cases[] = {
        {2, 4, {40, 50, 0}},   {2, 8, {30, 33, 0}},   {3, 6, {9, 10, 11}},  {3, 26, {6, 7, 8}},
        {2, 4, {1, 200, 0}},   {2, 4, {200, 1, 0}},   {2, 8, {1, 1, 0}},    {2, 8, {1, 77, 0}},
        {2, 8, {2, 91, 0}},    {3, 6, {1, 1, 300}},   {3, 6, {300, 1, 1}},  {3, 26, {1, 1, 50}},
        {3, 26, {2, 3, 40}},   {3, 26, {13, 1, 9}},   {2, 4, {3, 2, 0}},    {3, 6, {2, 2, 2}},
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
            const int64_t n = gcut_grid_num_nodes(grid);
            int64_t expected = n <= 20000 ? oracle_dinic_grid(grid) : cold_reference(grid);
            char what[96];
            snprintf(what, sizeof what, "grid case %zu rep %d (%dD, %d-conn, huge %d)", c, rep,
                     cases[c].ndim, cases[c].connectivity, caps.huge);
            count(oracle_check_grid(grid, solver, expected, what));
            gcut_grid_free(grid);
        }
}

/* Segmentation energies (the benchmark's synthetic pictures, easy and hard, every
 * connectivity) against bk: the same maximum flow. */
static void synth_against_bk(const char *solver) {
    static const struct {
        int64_t w, h, d;
        int conn;
    } cases[] = {{160, 120, 1, 4}, {150, 110, 1, 8}, {24, 20, 18, 6}, {14, 12, 10, 26}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int level = 0; level < 2; level++) {
            gcut_grid *grid = NULL;
            CHECK_OK(gcut_synth_grid(cases[c].w, cases[c].h, cases[c].d, 3 + c,
                                     level ? GCUT_SYNTH_HARD : GCUT_SYNTH_EASY, cases[c].conn,
                                     &grid));
            if (grid == NULL)
                continue;
            char what[64];
            snprintf(what, sizeof what, "synth case %zu level %d", c, level);
            count(oracle_check_grid(grid, solver, cold_reference(grid), what));
            gcut_grid_free(grid);
        }
}

/* int32 extremes: every capacity INT32_MAX (flow far past 2^31 through one node's
 * terminals), all zero, and a chain whose answer is known. */
static void extremes(void) {
    for (size_t k = 0; k < 4; k++) {
        const int64_t shape[3] = {3, 4, 5};
        gcut_grid *grid = NULL;
        CHECK_OK(gcut_grid_create(kinds[k].ndim, kinds[k].ndim == 2 ? shape + 1 : shape,
                                  kinds[k].connectivity, &grid));
        if (grid == NULL)
            continue;
        const int64_t n = gcut_grid_num_nodes(grid);
        for (int fill = 0; fill < 2; fill++) {
            int32_t v = fill ? INT32_MAX : 0;
            for (int t = 0; t < 2; t++)
                for (int64_t i = 0; i < n; i++)
                    gcut_grid_terminal_data(grid, t)[i] = v;
            for (int d = 0; d < gcut_grid_num_dirs(grid); d++)
                for (int64_t i = 0; i < n; i++)
                    gcut_grid_dir_data(grid, d)[i] = v;
            /* Every node cancels its own terminals: n * v exactly. */
            char what[64];
            snprintf(what, sizeof what, "extreme fill %d, %d-conn", fill, kinds[k].connectivity);
            count(oracle_check_grid(grid, "grid-bk", n * (int64_t)v, what));
            count(oracle_dinic_grid(grid) == n * (int64_t)v);
        }
        /* Source INT32_MAX at node 0 only, sink INT32_MAX at the last only: the answer is the
         * min cut around either end, as Dinic finds it; past 2^31 in 26-conn. */
        for (int t = 0; t < 2; t++)
            memset(gcut_grid_terminal_data(grid, t), 0, (size_t)n * sizeof(int32_t));
        gcut_grid_terminal_data(grid, GCUT_SOURCE)[0] = INT32_MAX;
        gcut_grid_terminal_data(grid, GCUT_SINK)[n - 1] = INT32_MAX;
        char what[64];
        snprintf(what, sizeof what, "corner to corner, %d-conn", kinds[k].connectivity);
        count(oracle_check_grid(grid, "grid-bk", oracle_dinic_grid(grid), what));
        gcut_grid_free(grid);
    }
    /* 1 x 5 chain: bottleneck 3 in the middle. */
    const int64_t shape[2] = {1, 5};
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_grid_create(2, shape, 4, &grid));
    if (grid == NULL)
        return;
    gcut_grid_terminal_data(grid, GCUT_SOURCE)[0] = 10;
    gcut_grid_terminal_data(grid, GCUT_SINK)[4] = 10;
    int32_t *right = gcut_grid_dir_data(grid, 0); /* direction 0 is (0, +1) */
    int32_t caps[4] = {8, 9, 3, 8};
    memcpy(right, caps, sizeof caps);
    uint8_t labels[5];
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "grid-bk";
    int64_t flow = -1;
    gcut_stats stats;
    CHECK_OK(gcut_grid_solve(grid, &options, &flow, labels, &stats));
    count(flow == 3 && labels[2] == GCUT_SOURCE && labels[3] == GCUT_SINK &&
          stats.augmentations == 1 && strcmp(stats.solver, "grid-bk") == 0);
    gcut_grid_free(grid);
}

/* Bad input is refused with a message naming it; the memory cap fails cleanly. */
static void errors(void) {
    const int64_t shape[2] = {20, 30};
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_grid_create(2, shape, 8, &grid));
    if (grid == NULL)
        return;
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "grid-bk";
    int64_t flow = -1;
    gcut_grid_dir_data(grid, 3)[17] = -5;
    count(gcut_grid_solve(grid, &options, &flow, NULL, NULL) == GCUT_ERR_INVALID_ARG &&
          strstr(gcut_last_error(), "negative") != NULL);
    gcut_grid_dir_data(grid, 3)[17] = 5;
    const uint64_t held = gcut_memory_in_use();
    gcut_set_memory_limit(held + 1000);
    count(gcut_grid_solve(grid, &options, &flow, NULL, NULL) == GCUT_ERR_NOMEM &&
          strstr(gcut_last_error(), "grid-bk") != NULL);
    count(gcut_memory_in_use() == held);
    gcut_set_memory_limit(0);
    count(oracle_check_grid(grid, "grid-bk", 0, "after the memory cap"));
    /* A general graph is not a grid-bk problem. */
    gcut_graph *g = NULL;
    CHECK_OK(gcut_graph_create(2, 1, &g));
    count(gcut_graph_solve(g, &options, &flow, NULL, NULL) == GCUT_ERR_UNSUPPORTED &&
          strstr(gcut_last_error(), "grid-bk") != NULL);
    gcut_graph_free(g);
    gcut_grid_free(grid);
}

/* "auto" solves one-off CPU grids with grid-ibfs (docs/CPU-SERIAL.md, "Fifth pass") unless a GPU
 * takes them; grid contexts keep grid-bk for its warm re-solves. */
static void auto_pick(void) {
    const int64_t shape[2] = {8, 9};
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_grid_create(2, shape, 4, &grid));
    if (grid == NULL)
        return;
    gcut_stats stats;
    int64_t flow = -1;
    CHECK_OK(gcut_grid_solve(grid, NULL, &flow, NULL, &stats));
    count(strcmp(stats.solver, "grid-ibfs") == 0 || strcmp(stats.solver, "cuda-grid") == 0);
    gcut_grid_free(grid);
    gcut_grid_context *ctx = NULL;
    CHECK_OK(gcut_grid_context_create(2, shape, 4, NULL, &ctx));
    gcut_grid_context_info info;
    if (ctx != NULL && gcut_grid_context_get_info(ctx, &info) == GCUT_OK)
        count(strcmp(info.solver, "grid-bk") == 0 || strcmp(info.solver, "cuda-grid") == 0);
    gcut_grid_context_free(ctx);
}

/* grid-ibfs's fourth-pass paths (src/cpu/grid_bk.c): the one-arc pushes before the trees
 * (GCUT_GIB_PAIRS: 0 never, 2 always) and a first pass run from the other side (GCUT_GIB_OUTSIDE: 0
 * never, 1 when the tree holds most nodes, the default, 2 always), each combination against brute
 * force, Dinic and bk as grid-bk is, and the same labels as grid-bk's (both report the smallest
 * minimum cut's source side) on random and synthetic grids of every connectivity. */
static int same_labels(gcut_grid *grid, const char *what) {
    const int64_t n = gcut_grid_num_nodes(grid);
    uint8_t *a = malloc((size_t)n), *b = malloc((size_t)n);
    int64_t fa = -1, fb = -2;
    gcut_options options;
    gcut_options_init(&options);
    gcut_stats stats;
    int ok = a != NULL && b != NULL;
    options.solver = "grid-bk";
    ok = ok && gcut_grid_solve(grid, &options, &fa, a, &stats) == GCUT_OK;
    options.solver = "grid-ibfs";
    ok = ok && gcut_grid_solve(grid, &options, &fb, b, &stats) == GCUT_OK;
    ok = ok && fa == fb && memcmp(a, b, (size_t)n) == 0;
    if (!ok)
        fprintf(stderr, "%s: grid-ibfs flow %lld, grid-bk %lld, or labels differ\n", what,
                (long long)fb, (long long)fa);
    free(a);
    free(b);
    return ok;
}

static void grid_ibfs_modes(test_rng *rng) {
    static const char *const modes[][2] = {{"0", "0"}, {"2", "0"}, {"0", "1"},
                                           {"2", "1"}, {"0", "2"}, {"2", "2"}};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        setenv("GCUT_GIB_PAIRS", modes[m][0], 1);
        setenv("GCUT_GIB_OUTSIDE", modes[m][1], 1);
        tiny_brute_force(rng, 250, "grid-ibfs");
        if (m % 2 == 1) /* the random grids with the pushes forced, each outside setting */
            random_grids(rng, "grid-ibfs");
        synth_against_bk("grid-ibfs");
        for (int k = 0; k < 4; k++) {
            int64_t shape[3] = {kinds[k].ndim == 2 ? 61 : 13, kinds[k].ndim == 2 ? 47 : 11, 9};
            oracle_caps caps = oracle_caps_default();
            caps.terminal_density = (int)test_rng_range(rng, 30, 100);
            caps.zero_percent = (int)test_rng_range(rng, 0, 30);
            gcut_grid *grid = NULL;
            CHECK_OK(
                oracle_make_grid(rng, kinds[k].ndim, shape, kinds[k].connectivity, &caps, &grid));
            if (grid == NULL)
                continue;
            char what[96];
            snprintf(what, sizeof what, "grid-ibfs labels, pairs %s outside %s, %d-conn",
                     modes[m][0], modes[m][1], kinds[k].connectivity);
            count(same_labels(grid, what));
            gcut_grid_free(grid);
        }
        for (int level = 0; level < 2; level++) {
            gcut_grid *grid = NULL;
            CHECK_OK(gcut_synth_grid(12, 11, 10, 7, level ? GCUT_SYNTH_HARD : GCUT_SYNTH_EASY, 26,
                                     &grid));
            if (grid != NULL)
                count(same_labels(grid, "grid-ibfs labels, synthetic 26-conn"));
            gcut_grid_free(grid);
        }
    }
    unsetenv("GCUT_GIB_PAIRS");
    unsetenv("GCUT_GIB_OUTSIDE");
}

int main(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed());
    errors();
    extremes();
    auto_pick();
    tiny_brute_force(&rng, 3000, "grid-bk");
    random_grids(&rng, "grid-bk");
    synth_against_bk("grid-bk");
    grid_ibfs_modes(&rng);
    /* Warm re-solves in contexts: random change sequences of every kind, every solve against a
     * cold one (Dinic or bk) and certified. */
    run_all_sequences(&rng, "grid-bk", 6, 1);
    return test_finish("test_grid_bk", checks);
}
