/* test_cuda_grid.c - the cuda-grid solver (src/cuda/cuda_grid.cu) against independent answers:
 * Dinic on the same grid (tests/util_oracle.h) on small grids, bk and cpu-pr on larger ones,
 * and the cut certificate on every result. Skips (exit 77) where no GPU can be used. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "util_common.h"
#include "util_oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks;

/* Flow of grid by solver through the public API, or -1 if that solver cannot run here (not
 * built yet, no device): the comparison is then skipped and said so. */
static int64_t reference_flow(gcut_grid *grid, const char *solver) {
    gcut_options options;
    gcut_options_init(&options);
    options.solver = solver;
    int64_t flow = -1;
    gcut_status st = gcut_grid_solve(grid, &options, &flow, NULL, NULL);
    if (st != GCUT_OK) {
        static int said[2];
        int k = strcmp(solver, "bk") == 0;
        if (!said[k]++)
            printf("note: %s cannot run (%s: %s); comparisons with it skipped\n", solver,
                   gcut_status_name(st), gcut_last_error());
        return -1;
    }
    return flow;
}

/* cuda-grid on grid against expected (flow, stats and certificate), twice: a second solve of
 * the same grid must not depend on the first. */
static void check_cuda(gcut_grid *grid, int64_t expected, const char *what) {
    checks += oracle_check_grid(grid, "cuda-grid", expected, what);
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "cuda-grid";
    gcut_stats stats;
    int64_t flow = -1;
    CHECK_OK(gcut_grid_solve(grid, &options, &flow, NULL, &stats));
    CHECK_EQ_I64(flow, expected);
    CHECK(stats.global_relabels >= 1);
    CHECK(stats.device_bytes > 0);
    CHECK(strcmp(stats.solver, "cuda-grid") == 0);
    checks++;
}

/* Small random grids of many shapes (odd sizes, 1xN, Nx1, tiles cut by the border, one node)
 * and capacity mixes, against Dinic. */
/* race: only the shapes that fill more than one tile in each direction (and the 3D ones of
 * more than one tile), for racecheck, which takes seconds per solve. */
static void random_small(test_rng *rng, int mixes, int race) {
    static const int64_t shapes2[][2] = {{1, 1},  {1, 77},  {77, 1},  {8, 32},  {9, 33},
                                         {7, 65}, {31, 47}, {16, 96}, {40, 40}, {3, 200}};
    static const int64_t shapes3[][3] = {{1, 1, 1}, {1, 6, 9}, {4, 4, 16},  {5, 9, 17},
                                         {9, 5, 3}, {8, 8, 8}, {3, 17, 20}, {12, 10, 18}};
    for (int mix = 0; mix < mixes; mix++) {
        oracle_caps caps = oracle_caps_default();
        const char *mix_name = "default";
        if (mix == 1) {
            caps.zero_percent = 40, caps.one_way_percent = 30, caps.terminal_density = 10;
            mix_name = "sparse";
        } else if (mix == 2) {
            caps.huge = 1, caps.terminal_density = 50;
            mix_name = "huge";
        } else if (mix == 3) {
            caps.max_cap = 3, caps.max_terminal = 1000, caps.terminal_density = 100;
            mix_name = "terminal-heavy";
        } else if (mix == 4) {
            caps.max_cap = 1000, caps.max_terminal = 5, caps.terminal_density = 5;
            mix_name = "edge-heavy";
        }
        for (size_t s = 0; s < sizeof shapes2 / sizeof shapes2[0]; s++)
            for (int conn = 4; conn <= 8; conn += 4) {
                if (race && (shapes2[s][0] < 31 || shapes2[s][1] < 33))
                    continue;
                gcut_grid *grid = NULL;
                CHECK_OK(oracle_make_grid(rng, 2, shapes2[s], conn, &caps, &grid));
                if (grid == NULL)
                    continue;
                char what[128];
                snprintf(what, sizeof what, "2D %lldx%lld conn %d %s", (long long)shapes2[s][0],
                         (long long)shapes2[s][1], conn, mix_name);
                check_cuda(grid, oracle_dinic_grid(grid), what);
                gcut_grid_free(grid);
            }
        for (size_t s = 0; s < sizeof shapes3 / sizeof shapes3[0]; s++)
            for (int conn = 6; conn <= 26; conn += 20) {
                if (race && shapes3[s][0] * shapes3[s][1] * shapes3[s][2] < 1000)
                    continue;
                gcut_grid *grid = NULL;
                CHECK_OK(oracle_make_grid(rng, 3, shapes3[s], conn, &caps, &grid));
                if (grid == NULL)
                    continue;
                char what[128];
                snprintf(what, sizeof what, "3D %lldx%lldx%lld conn %d %s",
                         (long long)shapes3[s][0], (long long)shapes3[s][1],
                         (long long)shapes3[s][2], conn, mix_name);
                check_cuda(grid, oracle_dinic_grid(grid), what);
                gcut_grid_free(grid);
            }
    }
}

/* Grids whose answer is known by construction: all-source, all-sink, no capacity at all. */
static void uniform_cases(void) {
    const int64_t shape[2] = {37, 70};
    for (int which = 0; which < 3; which++) {
        gcut_grid *grid = NULL;
        CHECK_OK(gcut_grid_create(2, shape, 8, &grid));
        if (grid == NULL)
            return;
        int64_t n = gcut_grid_num_nodes(grid);
        int32_t *source = gcut_grid_terminal_data(grid, GCUT_SOURCE);
        int32_t *sink = gcut_grid_terminal_data(grid, GCUT_SINK);
        for (int d = 0; d < gcut_grid_num_dirs(grid); d++) {
            int32_t *cap = gcut_grid_dir_data(grid, d);
            for (int64_t i = 0; i < n; i++)
                cap[i] = which == 2 ? 0 : 7;
        }
        for (int64_t i = 0; i < n; i++) {
            source[i] = which == 0 ? 5 : 0;
            sink[i] = which == 1 ? 5 : 0;
        }
        uint8_t *labels = malloc((size_t)n);
        gcut_options options;
        gcut_options_init(&options);
        options.solver = "cuda-grid";
        int64_t flow = -1;
        CHECK_OK(gcut_grid_solve(grid, &options, &flow, labels, NULL));
        CHECK_EQ_I64(flow, 0);
        /* All-source: nothing reaches the sink, every node is on the source side; all-sink:
         * every node reaches it; no capacity: only direct sink arcs count, and there are none. */
        int64_t sink_side = 0;
        for (int64_t i = 0; labels && i < n; i++)
            sink_side += labels[i] == GCUT_SINK;
        CHECK_EQ_I64(sink_side, which == 1 ? n : 0);
        free(labels);
        gcut_grid_free(grid);
        checks++;
    }
}

/* One serpentine path through a 2D grid (every other row, joined at alternating ends): the
 * only route from the source node to the sink node is n/2 arcs long, so flow must travel
 * through many tiles and many global relabels. Flow = the path's smallest capacity. */
static void snake_case(int64_t height, int64_t width) {
    const int64_t shape[2] = {height, width};
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_grid_create(2, shape, 4, &grid));
    if (grid == NULL)
        return;
    int32_t *right = gcut_grid_dir_data(grid, 0), *left = gcut_grid_dir_data(grid, 1);
    int32_t *down = gcut_grid_dir_data(grid, 2);
    int64_t last = 0;
    for (int64_t y = 0; y < height; y += 2) {
        int forward = (y / 2) % 2 == 0;
        for (int64_t x = 0; x + 1 < width; x++) {
            int64_t i = y * width + x;
            if (forward)
                right[i] = 9;
            else
                left[i + 1] = 9;
        }
        int64_t end = y * width + (forward ? width - 1 : 0);
        last = end;
        if (y + 2 < height) {
            down[end] = 9;
            down[end + width] = 9;
            last = end + 2 * width;
        }
    }
    right[width / 2] = 6; /* the bottleneck, in the first row */
    gcut_grid_terminal_data(grid, GCUT_SOURCE)[0] = 100;
    gcut_grid_terminal_data(grid, GCUT_SINK)[last] = 100;
    char what[64];
    snprintf(what, sizeof what, "snake %lldx%lld", (long long)height, (long long)width);
    int64_t expected = oracle_dinic_grid(grid);
    CHECK_EQ_I64(expected, 6);
    check_cuda(grid, expected, what);
    gcut_grid_free(grid);
}

/* Random grids whose sink capacities sit only in a few nodes of one corner: the first global
 * relabel seeds only the tiles around them (GCUT_CUDAGRID_RELAX=2, the default), and every
 * other tile is reached only when a neighbouring tile's height falls, across the whole grid;
 * also with no sink capacity at all (nothing seeded: flow 0, every label the source's).
 * Against Dinic, with the certificate. */
static void sparse_sink_cases(test_rng *rng) {
    static const struct {
        int ndim;
        int64_t shape[3];
        int conn;
    } cases[] = {
        {2, {40, 150, 1}, 4}, {2, {70, 33, 1}, 8}, {3, {9, 21, 30}, 6}, {3, {10, 8, 19}, 26}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int sinks = 0; sinks <= 3; sinks += 3) {
            oracle_caps caps = oracle_caps_default();
            caps.terminal_density = 40;
            gcut_grid *grid = NULL;
            CHECK_OK(
                oracle_make_grid(rng, cases[k].ndim, cases[k].shape, cases[k].conn, &caps, &grid));
            if (grid == NULL)
                return;
            const int64_t n = gcut_grid_num_nodes(grid);
            int32_t *sink = gcut_grid_terminal_data(grid, GCUT_SINK);
            memset(sink, 0, (size_t)n * sizeof *sink);
            for (int s = 0; s < sinks; s++) /* the last nodes: the far corner */
                sink[n - 1 - test_rng_range(rng, 0, 40)] = (int32_t)test_rng_range(rng, 50, 500);
            char what[96];
            snprintf(what, sizeof what, "sparse sink (%d nodes) %lldx%lldx%lld conn %d", sinks,
                     (long long)cases[k].shape[0], (long long)cases[k].shape[1],
                     (long long)cases[k].shape[2], cases[k].conn);
            const int64_t expected = oracle_dinic_grid(grid);
            if (sinks == 0)
                CHECK_EQ_I64(expected, 0);
            check_cuda(grid, expected, what);
            gcut_grid_free(grid);
        }
}

/* Synthetic segmentation grids (the benchmark's energy) and larger random grids: against bk
 * and cpu-pr where they run, else Dinic. */
static void larger_cases(test_rng *rng) {
    struct {
        int64_t w, h, d;
        int conn;
        gcut_synth_level level;
    } synth[] = {{320, 240, 1, 4, GCUT_SYNTH_HARD},
                 {333, 201, 1, 8, GCUT_SYNTH_EASY},
                 {200, 150, 1, 8, GCUT_SYNTH_HARD},
                 {40, 36, 33, 6, GCUT_SYNTH_HARD},
                 {24, 24, 24, 26, GCUT_SYNTH_EASY}};
    for (size_t k = 0; k < sizeof synth / sizeof synth[0]; k++) {
        gcut_grid *grid = NULL;
        gcut_status st = gcut_synth_grid(synth[k].w, synth[k].h, synth[k].d, test_seed() + k,
                                         synth[k].level, synth[k].conn, &grid);
        if (st != GCUT_OK) {
            printf("note: gcut_synth_grid: %s: %s; synthetic cases skipped\n", gcut_status_name(st),
                   gcut_last_error());
            break;
        }
        int64_t expected = reference_flow(grid, "bk");
        if (expected < 0)
            expected = oracle_dinic_grid(grid);
        int64_t cpupr = reference_flow(grid, "cpu-pr");
        if (cpupr >= 0)
            CHECK_EQ_I64(cpupr, expected);
        char what[96];
        snprintf(what, sizeof what, "synth %lldx%lldx%lld conn %d %s", (long long)synth[k].w,
                 (long long)synth[k].h, (long long)synth[k].d, synth[k].conn,
                 synth[k].level == GCUT_SYNTH_HARD ? "hard" : "easy");
        check_cuda(grid, expected, what);
        gcut_grid_free(grid);
    }
    const int64_t big2[2] = {300, 257}, big3[3] = {30, 33, 35};
    for (int conn = 4; conn <= 8; conn += 4) {
        oracle_caps caps = oracle_caps_default();
        gcut_grid *grid = NULL;
        CHECK_OK(oracle_make_grid(rng, 2, big2, conn, &caps, &grid));
        if (grid == NULL)
            continue;
        int64_t expected = reference_flow(grid, "bk");
        if (expected < 0)
            expected = oracle_dinic_grid(grid);
        check_cuda(grid, expected, conn == 4 ? "random 300x257 conn 4" : "random 300x257 conn 8");
        gcut_grid_free(grid);
    }
    for (int conn = 6; conn <= 26; conn += 20) {
        oracle_caps caps = oracle_caps_default();
        caps.huge = conn == 26;
        gcut_grid *grid = NULL;
        CHECK_OK(oracle_make_grid(rng, 3, big3, conn, &caps, &grid));
        if (grid == NULL)
            continue;
        int64_t expected = reference_flow(grid, "bk");
        if (expected < 0)
            expected = oracle_dinic_grid(grid);
        check_cuda(grid, expected, conn == 6 ? "random 30x33x35 conn 6" : "huge 30x33x35 conn 26");
        gcut_grid_free(grid);
    }
}

/* The global relabel's other paths, each read when a solve sets up: passes with host reads
 * (GCUT_CUDAGRID_RELAX=0), the one-launch relabel with every tile in its first pass
 * (GCUT_CUDAGRID_RELAX=1), a relabel queue of one entry, so that one-launch relabels run
 * out of room and fall back to passes (GCUT_CUDAGRID_QUEUE=1), heights 1 only set before the
 * relaxation (GCUT_CUDAGRID_INIT_LEVELS=1), and neighbours queued by thread 0 alone
 * (GCUT_CUDAGRID_QPAR=0), and no node-by-node steps before the tiles, so that the first pass
 * is seeded by every node of finite height (GCUT_CUDAGRID_JACOBI=0; the default, 2 steps, is
 * what every other case runs), and the queue room of the fifth session (4 re-queues per tile,
 * GCUT_CUDAGRID_QUEUE_PER_TILE=4; default 16), the lean sweep (cross-edge pushes lowered at
 * once, no copy of the loaded residuals: GCUT_CUDAGRID_LEAN_SWEEP=1; 0 for 8-connected grids,
 * where it is the default). The same small, sparse-sink and synthetic grids as above, against
 * Dinic or bk, with the certificate. The tile shape of 2D grids is a build switch
 * (GCUT_CUDAGRID_TILE4 / TILE8: 16 default, 32 for 32x8), so a build with 32 runs them all
 * with 32x8 tiles (bench/gpu_shape.sh builds both). */
static void relabel_paths(test_rng *rng, int full) {
    /* One switch, or two (the second pair empty when not used). Seventh session (both off by
     * default): the one-launch relabel's memsets trimmed (TRIM 1; with QUEUE 1 every relabel
     * overflows, so the trimmed path clears the flags again after each) and the sweep built for
     * one more block per SM (both sweeps). Ninth session: the tail's longer sweep batches (8
     * sweeps after any relabel, TAIL_DIV 1; 16 once a quarter of the tiles or fewer are
     * active) and none (TAIL_SWEEPS 0, the path before; the default is 8 sweeps once 1/32 of
     * the tiles or fewer are active, which every other case runs). */
    static const char *const variants[][4] = {
        {"GCUT_CUDAGRID_RELAX", "0", "", ""},
        {"GCUT_CUDAGRID_RELAX", "1", "", ""},
        {"GCUT_CUDAGRID_QUEUE", "1", "", ""},
        {"GCUT_CUDAGRID_INIT_LEVELS", "1", "", ""},
        {"GCUT_CUDAGRID_QPAR", "0", "", ""},
        {"GCUT_CUDAGRID_JACOBI", "0", "", ""},
        {"GCUT_CUDAGRID_QUEUE_PER_TILE", "4", "", ""},
        {"GCUT_CUDAGRID_LEAN_SWEEP", "1", "", ""},
        {"GCUT_CUDAGRID_LEAN_SWEEP", "0", "", ""},
        {"GCUT_CUDAGRID_TRIM", "1", "", ""},
        {"GCUT_CUDAGRID_TRIM", "1", "GCUT_CUDAGRID_QUEUE", "1"},
        {"GCUT_CUDAGRID_SWEEP_OCC", "1", "GCUT_CUDAGRID_LEAN_SWEEP", "0"},
        {"GCUT_CUDAGRID_SWEEP_OCC", "1", "GCUT_CUDAGRID_LEAN_SWEEP", "1"},
        {"GCUT_CUDAGRID_TAIL_SWEEPS", "8", "GCUT_CUDAGRID_TAIL_DIV", "1"},
        {"GCUT_CUDAGRID_TAIL_SWEEPS", "16", "GCUT_CUDAGRID_TAIL_DIV", "4"},
        {"GCUT_CUDAGRID_TAIL_SWEEPS", "0", "", ""}};
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        setenv(variants[v][0], variants[v][1], 1);
        if (variants[v][2][0] != '\0')
            setenv(variants[v][2], variants[v][3], 1);
        random_small(rng, 1, 0);
        snake_case(9, 40);
        sparse_sink_cases(rng);
        if (full) {
            const struct {
                int64_t w, h, d;
                int conn;
            } synth[] = {{320, 240, 1, 4}, {200, 150, 1, 8}, {24, 20, 28, 6}, {16, 18, 20, 26}};
            for (size_t k = 0; k < sizeof synth / sizeof synth[0]; k++) {
                gcut_grid *grid = NULL;
                if (gcut_synth_grid(synth[k].w, synth[k].h, synth[k].d, test_seed() + 7 * k,
                                    GCUT_SYNTH_HARD, synth[k].conn, &grid) != GCUT_OK)
                    break;
                int64_t expected = reference_flow(grid, "bk");
                if (expected < 0)
                    expected = oracle_dinic_grid(grid);
                char what[192];
                snprintf(what, sizeof what, "%s=%s %s=%s synth hard %lldx%lldx%lld conn %d",
                         variants[v][0], variants[v][1], variants[v][2], variants[v][3],
                         (long long)synth[k].w, (long long)synth[k].h, (long long)synth[k].d,
                         synth[k].conn);
                check_cuda(grid, expected, what);
                gcut_grid_free(grid);
            }
        }
        unsetenv(variants[v][0]);
        if (variants[v][2][0] != '\0')
            unsetenv(variants[v][2]);
    }
}

/* A device ordinal that does not exist is an error with a message, not a crash. */
static void bad_device(void) {
    const int64_t shape[2] = {4, 4};
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_grid_create(2, shape, 4, &grid));
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "cuda-grid";
    options.device = 4096;
    int64_t flow = 0;
    gcut_status st = gcut_grid_solve(grid, &options, &flow, NULL, NULL);
    CHECK_EQ_I64(st, GCUT_ERR_NO_DEVICE);
    CHECK(strstr(gcut_last_error(), "4096") != NULL);
    gcut_grid_free(grid);
    checks++;
}

int main(void) {
    /* The registry says whether cuda-grid is built in and a device is usable (a build without
     * CUDA has no such solver): otherwise skip. */
    gcut_solver_info info;
    if (gcut_solver_find("cuda-grid", &info) != GCUT_OK || !info.available) {
        printf("test_cuda_grid: cuda-grid not built or no usable CUDA device: skipped\n");
        return TEST_SKIP;
    }
    test_rng rng;
    test_rng_init(&rng, test_seed());
    /* GCUT_TEST_QUICK=1: the small cases only, for memcheck; 2: the small grids of more than
     * one tile each way with the default settings, one capacity mix, for racecheck. */
    const char *quick = getenv("GCUT_TEST_QUICK");
    int full = quick == NULL || *quick == '\0' || strcmp(quick, "0") == 0;
    if (quick != NULL && strcmp(quick, "2") == 0) {
        random_small(&rng, 1, 1);
        snake_case(9, 40);
        return test_finish("test_cuda_grid", checks);
    }
    random_small(&rng, full ? 5 : 2, 0);
    uniform_cases();
    snake_case(9, 40);
    sparse_sink_cases(&rng);
    if (full) {
        snake_case(64, 97);
        larger_cases(&rng);
    }
    relabel_paths(&rng, full);
    bad_device();
    return test_finish("test_cuda_grid", checks);
}
