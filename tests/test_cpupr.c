/* test_cpupr.c - the cpu-pr grid push-relabel solver against independent answers: brute force
 * over all labelings on tiny grids, Dinic (tests/util_oracle.c) and bk on larger ones, for all
 * four connectivities, awkward shapes, extreme capacities and 1, 2, 3 threads; and the same run
 * with the global relabel's arc masks gathered node by node (GCUT_CPUPR_RELABEL_LEGACY=1). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "util_common.h"
#include "util_oracle.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int checks_passed = 0;

/* Capacity of the cut that labels defines, from the public getters only (independent of
 * gcut_grid_verify and gcut_grid_to_graph). */
static int64_t cut_of(const gcut_grid *grid, const uint8_t *labels) {
    int64_t shape[3] = {1, 1, 1}, dims[3];
    int ndim = gcut_grid_ndim(grid);
    gcut_grid_shape(grid, dims);
    for (int i = 0; i < ndim; i++)
        shape[3 - ndim + i] = dims[i];
    const int32_t *source = gcut_grid_terminal_cdata(grid, GCUT_SOURCE);
    const int32_t *sink = gcut_grid_terminal_cdata(grid, GCUT_SINK);
    int64_t cut = 0;
    for (int64_t z = 0; z < shape[0]; z++)
        for (int64_t y = 0; y < shape[1]; y++)
            for (int64_t x = 0; x < shape[2]; x++) {
                int64_t i = (z * shape[1] + y) * shape[2] + x;
                if (labels[i] == GCUT_SINK) {
                    cut += source[i];
                    continue;
                }
                cut += sink[i];
                for (int d = 0; d < gcut_grid_num_dirs(grid); d++) {
                    int off[3] = {0, 0, 0}, o[3];
                    gcut_grid_offset(grid, d, o);
                    for (int k = 0; k < ndim; k++)
                        off[3 - ndim + k] = o[k];
                    int64_t nz = z + off[0], ny = y + off[1], nx = x + off[2];
                    if (nz < 0 || nz >= shape[0] || ny < 0 || ny >= shape[1] || nx < 0 ||
                        nx >= shape[2])
                        continue;
                    if (labels[(nz * shape[1] + ny) * shape[2] + nx] == GCUT_SINK)
                        cut += gcut_grid_dir_cdata(grid, d)[i];
                }
            }
    return cut;
}

/* Minimum cut by trying every labeling (n <= 16). */
static int64_t brute_force(const gcut_grid *grid) {
    int64_t n = gcut_grid_num_nodes(grid);
    uint8_t labels[16];
    int64_t best = INT64_MAX;
    for (uint32_t mask = 0; mask < (1u << n); mask++) {
        for (int64_t i = 0; i < n; i++)
            labels[i] = (mask >> i) & 1;
        int64_t cut = cut_of(grid, labels);
        if (cut < best)
            best = cut;
    }
    return best;
}

/* Solve with cpu-pr on 1, 2 and 3 threads: each flow must equal expected, each labeling must
 * be a cut of that capacity (by gcut_grid_verify and by cut_of), and the labelings must be
 * identical (the sink-reachable set of a maximum preflow is unique). Tiles of one colour never
 * touch the same node's own state, so the whole run is deterministic: the counts of sweeps,
 * relabels and pushes must not depend on the thread count either (a data race shows here). */
static void check_cpupr(gcut_grid *grid, int64_t expected, const char *what) {
    int64_t n = gcut_grid_num_nodes(grid);
    uint8_t *first = malloc((size_t)n);
    uint8_t *labels = malloc((size_t)n);
    int ok = first != NULL && labels != NULL;
    gcut_stats first_stats;
    memset(&first_stats, 0, sizeof first_stats);
    /* threads 1..3, then 2 again with the global relabel's arc masks gathered node by node as
     * before the tenth pass (GCUT_CPUPR_RELABEL_LEGACY=1): the same masks, so the same sweeps,
     * pushes, relabels and labels. */
    for (int run = 1; run <= 4 && ok; run++) {
        const int threads = run <= 3 ? run : 2;
        if (run == 4)
            setenv("GCUT_CPUPR_RELABEL_LEGACY", "1", 1);
        gcut_options options;
        gcut_options_init(&options);
        options.solver = "cpu-pr";
        options.threads = threads;
        gcut_stats stats;
        int64_t flow = -1;
        memset(labels, 7, (size_t)n);
        gcut_status st = gcut_grid_solve(grid, &options, &flow, labels, &stats);
        if (st != GCUT_OK) {
            fprintf(stderr, "%s, %d threads: cpu-pr returned %s: %s\n", what, threads,
                    gcut_status_name(st), gcut_last_error());
            ok = 0;
            break;
        }
        if (flow != expected || stats.flow != flow) {
            fprintf(stderr,
                    "%s, %d threads: flow %" PRId64 " (stats %" PRId64 "), expected %" PRId64 "\n",
                    what, threads, flow, stats.flow, expected);
            ok = 0;
        }
        if (strcmp(stats.solver, "cpu-pr") != 0 || stats.global_relabels < 1) {
            fprintf(stderr, "%s: stats name '%s', %" PRId64 " global relabels\n", what,
                    stats.solver, stats.global_relabels);
            ok = 0;
        }
        st = gcut_grid_verify(grid, labels, flow, NULL);
        if (st != GCUT_OK || cut_of(grid, labels) != flow) {
            fprintf(stderr, "%s, %d threads: certificate: %s (own cut %" PRId64 ")\n", what,
                    threads, gcut_last_error(), cut_of(grid, labels));
            ok = 0;
        }
        const char *how = run == 4 ? " (masks node by node)" : "";
        if (run == 1) {
            memcpy(first, labels, (size_t)n);
            first_stats = stats;
        } else if (memcmp(first, labels, (size_t)n) != 0) {
            fprintf(stderr, "%s: labels on %d threads%s differ from 1 thread\n", what, threads,
                    how);
            ok = 0;
        } else if (stats.sweeps != first_stats.sweeps || stats.pushes != first_stats.pushes ||
                   stats.global_relabels != first_stats.global_relabels) {
            fprintf(stderr,
                    "%s: %d threads%s ran %" PRId64 " sweeps, %" PRId64 " pushes, %" PRId64
                    " relabels; 1 thread %" PRId64 ", %" PRId64 ", %" PRId64 "\n",
                    what, threads, how, stats.sweeps, stats.pushes, stats.global_relabels,
                    first_stats.sweeps, first_stats.pushes, first_stats.global_relabels);
            ok = 0;
        }
    }
    unsetenv("GCUT_CPUPR_RELABEL_LEGACY");
    if (first == NULL || labels == NULL)
        fprintf(stderr, "%s: test ran out of memory\n", what);
    free(first);
    free(labels);
    if (ok)
        checks_passed++;
    else
        test_failures++;
}

/* bk on the same grid (through the graph conversion), when this build has it working. */
static void check_bk_agrees(gcut_grid *grid, int64_t expected, const char *what) {
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "bk";
    int64_t flow = -1;
    gcut_status st = gcut_grid_solve(grid, &options, &flow, NULL, NULL);
    if (st == GCUT_ERR_UNSUPPORTED)
        return;
    CHECK_OK(st);
    CHECK_EQ_I64(flow, expected);
    if (st == GCUT_OK && flow == expected)
        checks_passed++;
    else
        fprintf(stderr, "  (bk disagrees on %s)\n", what);
}

static int random_connectivity(test_rng *rng, int ndim) {
    int pick = (int)test_rng_range(rng, 0, 1);
    return ndim == 2 ? (pick ? 8 : 4) : (pick ? 26 : 6);
}

static oracle_caps random_caps(test_rng *rng) {
    oracle_caps caps = oracle_caps_default();
    caps.max_cap = (int32_t)test_rng_range(rng, 0, 2) == 0 ? 3 : 100;
    caps.max_terminal = (int32_t)test_rng_range(rng, 1, 150);
    caps.terminal_density = (int)test_rng_range(rng, 10, 100);
    caps.zero_percent = (int)test_rng_range(rng, 0, 2) * 25;
    caps.one_way_percent = (int)test_rng_range(rng, 0, 1) * 30;
    return caps;
}

/* Tiny grids of every shape up to 12 nodes against brute force. */
static void test_tiny(test_rng *rng) {
    for (int round = 0; round < 400; round++) {
        int ndim = (int)test_rng_range(rng, 2, 3);
        int64_t shape[3];
        int64_t n;
        do {
            n = 1;
            for (int i = 0; i < ndim; i++) {
                shape[i] = test_rng_range(rng, 1, 6);
                n *= shape[i];
            }
        } while (n > 12);
        int connectivity = random_connectivity(rng, ndim);
        oracle_caps caps = random_caps(rng);
        caps.huge = test_rng_range(rng, 0, 9) == 0;
        gcut_grid *grid = NULL;
        CHECK_OK(oracle_make_grid(rng, ndim, shape, connectivity, &caps, &grid));
        if (grid == NULL)
            continue;
        char what[96];
        snprintf(what, sizeof what, "tiny %dD %" PRId64 "x%" PRId64 "x%" PRId64 " conn %d%s", ndim,
                 shape[0], shape[1], ndim == 3 ? shape[2] : 1, connectivity,
                 caps.huge ? " huge" : "");
        check_cpupr(grid, brute_force(grid), what);
        gcut_grid_free(grid);
    }
}

/* Larger grids whose edges cut tiles (sizes off the tile multiples), 1xN, Nx1 and thin 3D
 * slabs, against Dinic and bk. */
static void test_against_dinic(test_rng *rng) {
    static const int64_t shapes2d[][2] = {{1, 1},   {1, 300},  {300, 1}, {17, 65}, {33, 97},
                                          {64, 64}, {70, 129}, {2, 200}, {131, 3}, {45, 45}};
    static const int64_t shapes3d[][3] = {{1, 30, 40}, {2, 17, 33}, {9, 9, 9},   {17, 5, 19},
                                          {1, 1, 70},  {40, 1, 1},  {8, 16, 16}, {3, 12, 50}};
    for (int round = 0; round < 2; round++) {
        for (size_t k = 0; k < sizeof shapes2d / sizeof shapes2d[0]; k++)
            for (int connectivity = 4; connectivity <= 8; connectivity += 4) {
                oracle_caps caps = random_caps(rng);
                caps.huge = round == 1 && k % 3 == 0;
                gcut_grid *grid = NULL;
                CHECK_OK(oracle_make_grid(rng, 2, shapes2d[k], connectivity, &caps, &grid));
                if (grid == NULL)
                    continue;
                char what[96];
                snprintf(what, sizeof what, "2D %" PRId64 "x%" PRId64 " conn %d%s", shapes2d[k][0],
                         shapes2d[k][1], connectivity, caps.huge ? " huge" : "");
                int64_t expected = oracle_dinic_grid(grid);
                CHECK(expected >= 0);
                check_cpupr(grid, expected, what);
                check_bk_agrees(grid, expected, what);
                gcut_grid_free(grid);
            }
        for (size_t k = 0; k < sizeof shapes3d / sizeof shapes3d[0]; k++)
            for (int connectivity = 6; connectivity <= 26; connectivity += 20) {
                oracle_caps caps = random_caps(rng);
                caps.huge = round == 1 && k % 3 == 1;
                gcut_grid *grid = NULL;
                CHECK_OK(oracle_make_grid(rng, 3, shapes3d[k], connectivity, &caps, &grid));
                if (grid == NULL)
                    continue;
                char what[96];
                snprintf(what, sizeof what, "3D %" PRId64 "x%" PRId64 "x%" PRId64 " conn %d%s",
                         shapes3d[k][0], shapes3d[k][1], shapes3d[k][2], connectivity,
                         caps.huge ? " huge" : "");
                int64_t expected = oracle_dinic_grid(grid);
                CHECK(expected >= 0);
                check_cpupr(grid, expected, what);
                check_bk_agrees(grid, expected, what);
                gcut_grid_free(grid);
            }
    }
}

/* A segmentation-like grid: a noisy disc of source preference in a sink background, smooth
 * edges; long BFS distances and many sweeps, the case the solver is built for. Two of the
 * shapes pass the solver's size for threaded node passes (2^15 nodes), so that the shared
 * BFS with compare-and-swap claims runs too. */
static void test_two_regions(test_rng *rng) {
    static const int64_t shapes[][3] = {{1, 200, 260}, {1, 97, 301}, {32, 40, 36}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int ndim = shapes[k][0] == 1 ? 2 : 3;
        const int64_t *shape = ndim == 2 ? shapes[k] + 1 : shapes[k];
        for (int variant = 0; variant < 2; variant++) {
            int connectivity = ndim == 2 ? (variant ? 8 : 4) : (variant ? 26 : 6);
            gcut_grid *grid = NULL;
            CHECK_OK(gcut_grid_create(ndim, shape, connectivity, &grid));
            if (grid == NULL)
                continue;
            int32_t *source = gcut_grid_terminal_data(grid, GCUT_SOURCE);
            int32_t *sink = gcut_grid_terminal_data(grid, GCUT_SINK);
            int64_t d = shapes[k][0], h = shapes[k][1], w = shapes[k][2];
            for (int64_t z = 0; z < d; z++)
                for (int64_t y = 0; y < h; y++)
                    for (int64_t x = 0; x < w; x++) {
                        int64_t i = (z * h + y) * w + x;
                        double dx = (double)x / (double)w - 0.5, dy = (double)y / (double)h - 0.5,
                               dz = d > 1 ? (double)z / (double)d - 0.5 : 0.0;
                        int inside = dx * dx + dy * dy + dz * dz < 0.09;
                        int32_t noise = (int32_t)test_rng_range(rng, 0, 60);
                        source[i] = inside ? 40 + noise : noise / 2;
                        sink[i] = inside ? noise / 2 : 40 + noise;
                    }
            for (int dir = 0; dir < gcut_grid_num_dirs(grid); dir++) {
                int32_t *cap = gcut_grid_dir_data(grid, dir);
                for (int64_t i = 0; i < gcut_grid_num_nodes(grid); i++)
                    cap[i] = (int32_t)test_rng_range(rng, 10, 30);
            }
            char what[96];
            snprintf(what, sizeof what, "two regions %" PRId64 "x%" PRId64 "x%" PRId64 " conn %d",
                     d, h, w, connectivity);
            int64_t expected = oracle_dinic_grid(grid);
            CHECK(expected >= 0);
            check_cpupr(grid, expected, what);
            check_bk_agrees(grid, expected, what);
            gcut_grid_free(grid);
        }
    }
}

/* Hand-made extremes whose answers are known without an oracle. */
static void test_extremes(void) {
    const int64_t shape[2] = {37, 81};
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_grid_create(2, shape, 8, &grid));
    if (grid == NULL)
        return;
    int64_t n = gcut_grid_num_nodes(grid);
    int32_t *source = gcut_grid_terminal_data(grid, GCUT_SOURCE);
    int32_t *sink = gcut_grid_terminal_data(grid, GCUT_SINK);
    for (int d = 0; d < 8; d++)
        for (int64_t i = 0; i < n; i++)
            gcut_grid_dir_data(grid, d)[i] = 5;

    /* Zero capacities everywhere: nothing flows. */
    check_cpupr(grid, 0, "all zero terminals");
    /* All-source: no sink capacity, flow 0. */
    for (int64_t i = 0; i < n; i++)
        source[i] = 9;
    check_cpupr(grid, 0, "all source");
    /* Source and sink on every node: each node sends min(source, sink) directly. */
    for (int64_t i = 0; i < n; i++)
        sink[i] = 4;
    check_cpupr(grid, 4 * n, "source and sink everywhere");
    /* All-sink. */
    for (int64_t i = 0; i < n; i++)
        source[i] = 0;
    check_cpupr(grid, 0, "all sink");

    /* Flow beyond 2^31 through arcs of INT32_MAX both ways: the top row feeds the bottom row
     * of a 2 x 4 grid, and the middle nodes of a 1 x 3 chain hold residuals of 2^32 - 2. */
    const int64_t two_by_four[2] = {2, 4};
    gcut_grid *big = NULL;
    CHECK_OK(gcut_grid_create(2, two_by_four, 4, &big));
    if (big != NULL) {
        for (int d = 0; d < 4; d++)
            for (int64_t i = 0; i < 8; i++)
                gcut_grid_dir_data(big, d)[i] = INT32_MAX;
        for (int64_t i = 0; i < 4; i++) {
            gcut_grid_terminal_data(big, GCUT_SOURCE)[i] = INT32_MAX;
            gcut_grid_terminal_data(big, GCUT_SINK)[4 + i] = INT32_MAX;
        }
        check_cpupr(big, 4 * (int64_t)INT32_MAX, "2x4 INT32_MAX");
        /* One sink only: every source's flow funnels into node 7, whose excess passes 2^32. */
        for (int64_t i = 4; i < 7; i++)
            gcut_grid_terminal_data(big, GCUT_SINK)[i] = 0;
        check_cpupr(big, INT32_MAX, "2x4 INT32_MAX into one sink");
        gcut_grid_free(big);
    }
    const int64_t chain[2] = {1, 3};
    CHECK_OK(gcut_grid_create(2, chain, 4, &big));
    if (big != NULL) {
        for (int d = 0; d < 4; d++)
            for (int64_t i = 0; i < 3; i++)
                gcut_grid_dir_data(big, d)[i] = INT32_MAX;
        gcut_grid_terminal_data(big, GCUT_SOURCE)[0] = INT32_MAX;
        gcut_grid_terminal_data(big, GCUT_SOURCE)[2] = INT32_MAX;
        gcut_grid_terminal_data(big, GCUT_SINK)[1] = INT32_MAX;
        check_cpupr(big, INT32_MAX, "1x3 INT32_MAX chain");
        gcut_grid_free(big);
    }
    gcut_grid_free(grid);
}

/* Bad options and a memory cap become statuses with messages, not crashes. */
static void test_errors(void) {
    const int64_t shape[2] = {64, 64};
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_grid_create(2, shape, 4, &grid));
    if (grid == NULL)
        return;
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "cpu-pr";
    options.threads = -2;
    int64_t flow = 0;
    CHECK_EQ_I64(gcut_grid_solve(grid, &options, &flow, NULL, NULL), GCUT_ERR_INVALID_ARG);
    CHECK(strstr(gcut_last_error(), "threads") != NULL);

    options.threads = 2;
    uint64_t old_limit = gcut_memory_limit();
    gcut_set_memory_limit(gcut_memory_in_use() + 20000);
    uint64_t in_use = gcut_memory_in_use();
    CHECK_EQ_I64(gcut_grid_solve(grid, &options, &flow, NULL, NULL), GCUT_ERR_NOMEM);
    CHECK(strstr(gcut_last_error(), "cpu-pr") != NULL);
    CHECK_EQ_I64(gcut_memory_in_use(), in_use);
    gcut_set_memory_limit(old_limit);

    /* An absurd thread count is clamped to what the machine can run, not a crash. */
    options.threads = 1000000;
    CHECK_OK(gcut_grid_solve(grid, &options, &flow, NULL, NULL));
    options.threads = 2;

    /* labels may be NULL; the flow still comes back. */
    gcut_grid_terminal_data(grid, GCUT_SOURCE)[0] = 3;
    gcut_grid_terminal_data(grid, GCUT_SINK)[1] = 2;
    gcut_grid_dir_data(grid, 0)[0] = 1;
    CHECK_OK(gcut_grid_solve(grid, &options, &flow, NULL, NULL));
    CHECK_EQ_I64(flow, 1);
    checks_passed++;
    gcut_grid_free(grid);
}

int main(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed());
    test_tiny(&rng);
    test_extremes();
    test_errors();
    test_against_dinic(&rng);
    test_two_regions(&rng);
    return test_finish("test_cpupr", checks_passed);
}
