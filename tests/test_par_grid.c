/* test_par_grid.c - `parallel-bk` on grids cut into spatial tiles (src/cpu/par_grid_impl.h,
 * Liu & Sun 2010 merging; docs/CPU-PARALLEL.md) against independent oracles: brute force on
 * tiny grids, Dinic on larger ones, the cut certificate on every result; for thread counts
 * 1..6 and many tile counts the same flow and the same (minimal) cut as bk, and the same result
 * again with the old contiguous-range blocks, row tiles, both schedules, both merge orders,
 * 64-bit indices and the pre-pass of tiles solved alone (GCUT_PBK_PREPASS, src/cpu/par_prepass.c;
 * its tiles also stopped early, GCUT_PBK_PREPASS_STOP / GCUT_CPUPR_MAX_SWEEPS)
 * on random grids and on segmentation-like ones (strong neighbour arcs, small terminal excess). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "internal.h"
#include "util_common.h"
#include "util_oracle.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0;

#define count(ok) CHECK_COUNT(passed, ok)

static void set_int(const char *name, int64_t value) {
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)value);
    setenv(name, text, 1);
}

/* A random pre-pass: one to three rounds, each a shifted K x K tiling (K 1..9) or parallel-bk's
 * own tiles, by cpu-pr or grid-bk. */
static void set_prepass(test_rng *rng) {
    char text[64] = "";
    const int rounds = (int)test_rng_range(rng, 1, 3);
    for (int r = 0; r < rounds; r++) {
        char one[16];
        if (test_rng_range(rng, 0, 3) == 0)
            snprintf(one, sizeof one, "%spbk", r ? "," : "");
        else
            snprintf(one, sizeof one, "%s%d", r ? "," : "", (int)test_rng_range(rng, 1, 9));
        strncat(text, one, sizeof text - strlen(text) - 1);
    }
    setenv("GCUT_PBK_PREPASS", text, 1);
    setenv("GCUT_PBK_PREPASS_SOLVER", test_rng_range(rng, 0, 2) == 0 ? "bk" : "pr", 1);
}

/* parallel-bk on `grid` for threads 1..max_threads, each with a tile count drawn from rng:
 * flow == expected, cut == bk's, certificate (oracle_check_grid) once per grid. */
static bool check_grid(test_rng *rng, gcut_grid *grid, int64_t expected, int max_threads,
                       const char *what) {
    int64_t n = gcut_grid_num_nodes(grid);
    uint8_t *ref = malloc((size_t)n + 1), *got = malloc((size_t)n + 1);
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "bk";
    int64_t flow = -1;
    bool ok =
        ref && got && gcut_grid_solve(grid, &opt, &flow, ref, NULL) == GCUT_OK && flow == expected;
    set_int("GCUT_QPBO_BLOCKS", test_rng_range(rng, 1, 70));
    ok = ok && oracle_check_grid(grid, "parallel-bk", expected, what);
    opt.solver = "parallel-bk";
    for (int threads = 1; threads <= max_threads && ok; threads++) {
        opt.threads = threads;
        int64_t blocks = test_rng_range(rng, 1, 70);
        set_int("GCUT_QPBO_BLOCKS", blocks);
        /* Mostly tiles; now and then bk's contiguous ranges or 64-bit ids, same answer. */
        int variant = (int)test_rng_range(rng, 0, 9);
        if (variant == 0)
            setenv("GCUT_PBK_TILES", "0", 1);
        if (variant == 1)
            setenv("GCUT_QPBO_INDEX_BITS", "64", 1);
        /* The other schedules and tile shapes of docs/CPU-PARALLEL.md's switches. */
        if (variant == 2)
            setenv("GCUT_PBK_OVERLAP", "0", 1);
        if (variant == 3)
            setenv("GCUT_PBK_ORDER", "size", 1);
        if (variant == 4)
            setenv("GCUT_PBK_TILES", "rows", 1);
        /* Half the solves also check that the source tree is the set reachable from the
         * source (the labelling's slow path); the others take the parallel cut. */
        if (variant >= 5)
            setenv("GCUT_QPBO_CHECK_REACH", "1", 1);
        /* A third of the solves start with the pre-pass (2D; 3D grids ignore it). */
        if (test_rng_range(rng, 0, 2) == 0)
            set_prepass(rng);
        flow = -1;
        memset(got, 0xaa, (size_t)n);
        ok = gcut_grid_solve(grid, &opt, &flow, got, NULL) == GCUT_OK && flow == expected &&
             memcmp(ref, got, (size_t)n) == 0;
        if (!ok)
            fprintf(stderr,
                    "%s: parallel-bk flow %lld, expected %lld (%d threads, %lld blocks, "
                    "variant %d, pre-pass %s by %s)\n",
                    what, (long long)flow, (long long)expected, threads, (long long)blocks, variant,
                    getenv("GCUT_PBK_PREPASS") ? getenv("GCUT_PBK_PREPASS") : "none",
                    getenv("GCUT_PBK_PREPASS_SOLVER") ? getenv("GCUT_PBK_PREPASS_SOLVER") : "-");
        unsetenv("GCUT_PBK_TILES");
        unsetenv("GCUT_QPBO_INDEX_BITS");
        unsetenv("GCUT_QPBO_CHECK_REACH");
        unsetenv("GCUT_PBK_OVERLAP");
        unsetenv("GCUT_PBK_ORDER");
        unsetenv("GCUT_PBK_PREPASS");
        unsetenv("GCUT_PBK_PREPASS_SOLVER");
    }
    unsetenv("GCUT_QPBO_BLOCKS");
    free(ref);
    free(got);
    return ok;
}

static void random_shape(test_rng *rng, int ndim, int64_t max_nodes, int64_t *shape) {
    for (;;) {
        int64_t nodes = 1;
        for (int a = 0; a < ndim; a++) {
            /* Thin shapes (one row, one column, one slice) now and then. */
            shape[a] = test_rng_range(rng, 0, 5) == 0 ? 1 : test_rng_range(rng, 1, max_nodes);
            nodes *= shape[a];
        }
        if (nodes <= max_nodes)
            return;
    }
}

/* Tiny grids: brute force over every cut of the grid's graph. */
static void test_tiny(test_rng *rng) {
    int bad = 0;
    for (int round = 0; round < 100 && bad < 5; round++) {
        oracle_caps caps = oracle_caps_default();
        caps.max_cap = (int32_t)test_rng_range(rng, 1, 20);
        caps.huge = round % 11 == 0;
        int ndim = round % 2 ? 3 : 2;
        int conn = ndim == 2 ? (round / 2 % 2 ? 8 : 4) : (round / 2 % 2 ? 26 : 6);
        int64_t shape[3];
        random_shape(rng, ndim, 14, shape);
        gcut_grid *grid = NULL;
        gcut_graph *g = NULL;
        CHECK_OK(oracle_make_grid(rng, ndim, shape, conn, &caps, &grid));
        if (grid == NULL)
            return;
        CHECK_OK(gcut_grid_to_graph(grid, &g));
        if (g != NULL && !check_grid(rng, grid, oracle_brute_force(g), 4, "tiny grid"))
            bad++;
        gcut_graph_free(g);
        gcut_grid_free(grid);
    }
    test_failures += bad;
    count(bad == 0);
}

/* Larger grids of every connectivity: Dinic. */
static void test_grids(test_rng *rng) {
    int bad = 0;
    for (int round = 0; round < 16 && bad < 5; round++) {
        oracle_caps caps = oracle_caps_default();
        caps.huge = round % 7 == 0;
        caps.terminal_density = (int)test_rng_range(rng, 5, 100);
        int ndim = round % 2 ? 3 : 2;
        int conn = ndim == 2 ? (round / 2 % 2 ? 8 : 4) : (round / 2 % 2 ? 26 : 6);
        int64_t shape[3];
        random_shape(rng, ndim, ndim == 2 ? 6000 : 3000, shape);
        if (ndim == 3)
            for (int a = 0; a < 3; a++)
                shape[a] = shape[a] > 24 ? 24 : shape[a];
        else
            for (int a = 0; a < 2; a++)
                shape[a] = shape[a] > 160 ? 160 : shape[a];
        gcut_grid *grid = NULL;
        CHECK_OK(oracle_make_grid(rng, ndim, shape, conn, &caps, &grid));
        if (grid == NULL)
            return;
        char what[64];
        snprintf(what, sizeof what, "grid %lldx%lldx%lld conn %d",
                 (long long)(ndim == 3 ? shape[0] : 1), (long long)shape[ndim - 2],
                 (long long)shape[ndim - 1], conn);
        if (!check_grid(rng, grid, oracle_dinic_grid(grid), 6, what))
            bad++;
        gcut_grid_free(grid);
    }
    test_failures += bad;
    count(bad == 0);
}

/* Segmentation-like 2D grids (the energy of issue #17's photo: neighbour arcs ~20x the
 * terminals' excess, which is what the pre-pass is for), odd sizes and 1-wide ones, now and
 * then capacities near INT32_MAX (the tiles then fall back: cpu-pr to grid-bk, grid-bk to
 * leaving the tile as it is): parallel-bk with every pre-pass shape against Dinic's flow and
 * bk's cut, for 1, 2, 3 and 16 threads. */
static void test_prepass(test_rng *rng) {
    int bad = 0;
    static const char *specs[] = {"1", "2", "3,2", "pbk", "pbk,4", "8,4", "5,pbk,2", "16,8"};
    static const int thread_counts[] = {1, 2, 3, 16};
    for (int round = 0; round < 12 && bad < 5; round++) {
        int64_t shape[2] = {test_rng_range(rng, 1, 90), test_rng_range(rng, 1, 120)};
        if (round % 5 == 1)
            shape[test_rng_range(rng, 0, 1)] = 1;
        const int conn = round % 3 == 0 ? 4 : 8;
        const bool huge = round % 4 == 3;
        gcut_grid *grid = NULL;
        CHECK_OK(gcut_grid_create(2, shape, conn, &grid));
        if (grid == NULL)
            return;
        const int64_t n = shape[0] * shape[1];
        int32_t *src = gcut_grid_terminal_data(grid, GCUT_SOURCE);
        int32_t *snk = gcut_grid_terminal_data(grid, GCUT_SINK);
        for (int64_t i = 0; i < n; i++) {
            /* Blobs of source-leaning pixels in sink-leaning ones, with noise both ways. */
            const int64_t y = i / shape[1], x = i % shape[1];
            const bool fg = ((y / 13 + x / 17) % 3 == 0) != (test_rng_range(rng, 0, 9) == 0);
            const int32_t e = huge ? (int32_t)test_rng_range(rng, INT32_MAX / 2, INT32_MAX)
                                   : (int32_t)test_rng_range(rng, 0, 2000);
            src[i] = fg ? e : (int32_t)test_rng_range(rng, 0, 300);
            snk[i] = fg ? (int32_t)test_rng_range(rng, 0, 300) : e;
        }
        for (int d = 0; d < gcut_grid_num_dirs(grid); d++) {
            int32_t *cap = gcut_grid_dir_data(grid, d);
            for (int64_t i = 0; i < n; i++)
                cap[i] = huge ? (int32_t)test_rng_range(rng, INT32_MAX / 4, INT32_MAX)
                              : (int32_t)test_rng_range(rng, 5000, 40000);
        }
        const int64_t expected = oracle_dinic_grid(grid);
        uint8_t *ref = malloc((size_t)n), *got = malloc((size_t)n);
        gcut_options opt;
        gcut_options_init(&opt);
        opt.solver = "bk";
        int64_t flow = -1;
        bool ok = ref && got && gcut_grid_solve(grid, &opt, &flow, ref, NULL) == GCUT_OK &&
                  flow == expected;
        setenv("GCUT_PBK_PREPASS", specs[round % 8], 1);
        ok = ok && oracle_check_grid(grid, "parallel-bk", expected, "pre-pass grid");
        opt.solver = "parallel-bk";
        for (int k = 0; k < 8 && ok; k++) {
            opt.threads = thread_counts[k % 4];
            setenv("GCUT_PBK_PREPASS", specs[(round + k) % 8], 1);
            setenv("GCUT_PBK_PREPASS_SOLVER", k < 4 ? "pr" : "bk", 1);
            set_int("GCUT_QPBO_BLOCKS", test_rng_range(rng, 1, 70));
            /* Now and then the blocks after a pre-pass by their size (4 to 16 per thread; the
             * rule gcut_segment's route takes, src/qpbo/parallel_bk.c), sizes small enough to
             * pass 4 per thread on these grids. */
            if (k % 4 == 2) {
                unsetenv("GCUT_QPBO_BLOCKS");
                set_int("GCUT_PBK_PREPASS_BLOCK_PIXELS", test_rng_range(rng, 20, 400));
            }
            /* cpu-pr's tiles stopped early: by idle threads (1..3; 0 never) and, half the time,
             * after 1..4 sweeps whatever their state (the residual grid of a preflow that is
             * not maximum). */
            set_int("GCUT_PBK_PREPASS_STOP", test_rng_range(rng, 0, 3));
            set_int("GCUT_CPUPR_MAX_SWEEPS", (k & 1) ? test_rng_range(rng, 1, 4) : 0);
            flow = -1;
            memset(got, 0xaa, (size_t)n);
            ok = gcut_grid_solve(grid, &opt, &flow, got, NULL) == GCUT_OK && flow == expected &&
                 memcmp(ref, got, (size_t)n) == 0;
            if (!ok)
                fprintf(stderr,
                        "pre-pass grid %lldx%lld conn %d%s: flow %lld, expected %lld (%d "
                        "threads, pre-pass %s by %s, stop %s, sweeps %s)\n",
                        (long long)shape[0], (long long)shape[1], conn, huge ? " huge" : "",
                        (long long)flow, (long long)expected, opt.threads,
                        getenv("GCUT_PBK_PREPASS"), getenv("GCUT_PBK_PREPASS_SOLVER"),
                        getenv("GCUT_PBK_PREPASS_STOP"), getenv("GCUT_CPUPR_MAX_SWEEPS"));
        }
        unsetenv("GCUT_PBK_PREPASS_STOP");
        unsetenv("GCUT_CPUPR_MAX_SWEEPS");
        unsetenv("GCUT_PBK_PREPASS_BLOCK_PIXELS");
        unsetenv("GCUT_PBK_PREPASS");
        unsetenv("GCUT_PBK_PREPASS_SOLVER");
        unsetenv("GCUT_QPBO_BLOCKS");
        bad += !ok;
        free(ref);
        free(got);
        gcut_grid_free(grid);
    }
    test_failures += bad;
    count(bad == 0);
}

/* Every array of two grids equal entry for entry (the arcs that leave the grid too). */
static bool same_grid(const gcut_grid *a, const gcut_grid *b) {
    const size_t bytes = (size_t)gcut_grid_num_nodes(a) * sizeof(int32_t);
    bool same = gcut_grid_num_nodes(a) == gcut_grid_num_nodes(b);
    for (int t = 0; t < 2 && same; t++)
        same = memcmp(gcut_grid_terminal_cdata(a, t), gcut_grid_terminal_cdata(b, t), bytes) == 0;
    for (int d = 0; d < gcut_grid_num_dirs(a) && same; d++)
        same = memcmp(gcut_grid_dir_cdata(a, d), gcut_grid_dir_cdata(b, d), bytes) == 0;
    return same;
}

/* The pre-pass's tile copies (src/cpu/par_prepass.c: row copies and max-reductions, and cpu-pr's
 * write-back) against the element-by-element ones they replaced (GCUT_PBK_PREPASS_COPY_LEGACY=1),
 * and a round written into the grid itself (`into` = grid, as gcut_segment's first round now)
 * against one written into a new grid: on one thread the tiles run in one order, so the three
 * residual grids and flows must be equal entry for entry. Random shapes (1-wide, odd), 4 and 8
 * neighbours, shifted and plain tilings finer and coarser than the grid, tiles stopped after a
 * few sweeps (preflows far from maximum), capacities past INT32_MAX / 2 (tiles left as they are
 * or solved by grid-bk), arcs that leave the grid holding garbage (they must come back as they
 * were). */
static void test_prepass_copies(test_rng *rng) {
    int bad = 0;
    for (int round = 0; round < 40 && bad < 3; round++) {
        int64_t shape[2] = {test_rng_range(rng, 1, 70), test_rng_range(rng, 1, 90)};
        if (round % 7 == 3)
            shape[test_rng_range(rng, 0, 1)] = 1;
        const int conn = round % 2 == 0 ? 8 : 4;
        gcut_grid *grid = NULL, *legacy = NULL, *fresh = NULL, *self = NULL;
        CHECK_OK(gcut_grid_create(2, shape, conn, &grid));
        CHECK_OK(gcut_grid_create(2, shape, conn, &self));
        if (grid == NULL || self == NULL) {
            gcut_grid_free(grid);
            gcut_grid_free(self);
            return;
        }
        const int64_t n = shape[0] * shape[1];
        const bool huge = round % 5 == 4;
        for (int t = 0; t < 2; t++) {
            int32_t *c = gcut_grid_terminal_data(grid, t);
            for (int64_t i = 0; i < n; i++)
                c[i] = (int32_t)test_rng_range(rng, 0, 3000);
        }
        for (int d = 0; d < gcut_grid_num_dirs(grid); d++) {
            int32_t *c = gcut_grid_dir_data(grid, d);
            for (int64_t i = 0; i < n; i++)
                c[i] = huge && test_rng_range(rng, 0, 50) == 0
                           ? (int32_t)test_rng_range(rng, INT32_MAX / 2, INT32_MAX)
                           : (int32_t)test_rng_range(rng, 1000, 40000);
        }
        for (int t = 0; t < 2; t++)
            memcpy(gcut_grid_terminal_data(self, t), gcut_grid_terminal_cdata(grid, t),
                   (size_t)n * sizeof(int32_t));
        for (int d = 0; d < gcut_grid_num_dirs(grid); d++)
            memcpy(gcut_grid_dir_data(self, d), gcut_grid_dir_cdata(grid, d),
                   (size_t)n * sizeof(int32_t));
        const int64_t ky = test_rng_range(rng, 1, 12), kx = test_rng_range(rng, 1, 12);
        const bool shifted = test_rng_range(rng, 0, 3) != 0, pr = test_rng_range(rng, 0, 4) != 0;
        set_int("GCUT_CPUPR_MAX_SWEEPS", round % 3 == 1 ? test_rng_range(rng, 1, 3) : 0);
        int64_t f[3] = {-1, -2, -3}, a[3] = {0, 0, 0};
        gcut_grid *out = NULL;
        setenv("GCUT_PBK_PREPASS_COPY_LEGACY", "1", 1);
        bool ok =
            gcut__pbk_prepass(grid, NULL, ky, kx, shifted, pr, 1, &legacy, &f[0], &a[0]) == GCUT_OK;
        setenv("GCUT_PBK_PREPASS_COPY_LEGACY", "0", 1);
        ok = ok &&
             gcut__pbk_prepass(grid, NULL, ky, kx, shifted, pr, 1, &fresh, &f[1], &a[1]) == GCUT_OK;
        ok = ok &&
             gcut__pbk_prepass(self, self, ky, kx, shifted, pr, 1, &out, &f[2], &a[2]) == GCUT_OK;
        ok = ok && legacy != NULL && fresh != NULL && out == self && f[0] == f[1] && f[1] == f[2] &&
             a[0] == a[1] && a[1] == a[2] && same_grid(legacy, fresh) && same_grid(fresh, self);
        /* The residual grid of any preflow (tiles stopped early too) carries the rest. */
        if (ok) {
            const int64_t whole = oracle_dinic_grid(grid), rest = oracle_dinic_grid(self);
            ok = whole >= 0 && rest >= 0 && f[2] + rest == whole;
        }
        if (!ok)
            fprintf(stderr,
                    "pre-pass copies %lldx%lld conn %d%s: %lld x %lld%s by %s: flows %lld / %lld "
                    "/ %lld, residual grids %s\n",
                    (long long)shape[0], (long long)shape[1], conn, huge ? " huge" : "",
                    (long long)ky, (long long)kx, shifted ? " shifted" : "", pr ? "cpu-pr" : "bk",
                    (long long)f[0], (long long)f[1], (long long)f[2],
                    legacy && fresh && same_grid(legacy, fresh) && same_grid(fresh, self)
                        ? "equal"
                        : "DIFFER");
        unsetenv("GCUT_PBK_PREPASS_COPY_LEGACY");
        unsetenv("GCUT_CPUPR_MAX_SWEEPS");
        bad += !ok;
        gcut_grid_free(grid);
        gcut_grid_free(legacy);
        gcut_grid_free(fresh);
        gcut_grid_free(self);
    }
    test_failures += bad;
    count(bad == 0);
}

/* "auto" with threads > 1 on a grid of 65536 nodes or more takes parallel-bk (unless a GPU
 * takes it), and gives bk's flow and cut; one thread, or a smaller grid, stays on the serial
 * pick (grid-ibfs). */
static void test_auto(test_rng *rng) {
    gcut_solver_info gpu;
    bool has_gpu = gcut_solver_find("cuda-grid", &gpu) == GCUT_OK && gpu.available;
    const int64_t shapes[2][2] = {{300, 260}, {100, 90}};
    for (int k = 0; k < 2; k++) {
        oracle_caps caps = oracle_caps_default();
        gcut_grid *grid = NULL;
        CHECK_OK(oracle_make_grid(rng, 2, shapes[k], 4, &caps, &grid));
        if (grid == NULL)
            return;
        /* Selection is the point here (correctness is above): bk's flow and the certificate of
         * each cut, instead of a slow Dinic on 78,000 nodes. */
        gcut_options ref;
        gcut_options_init(&ref);
        ref.solver = "bk";
        int64_t n = gcut_grid_num_nodes(grid), expected = -1;
        CHECK_OK(gcut_grid_solve(grid, &ref, &expected, NULL, NULL));
        for (int threads = 1; threads <= 3; threads++) {
            gcut_options opt;
            gcut_options_init(&opt);
            opt.threads = threads;
            gcut_stats stats;
            int64_t flow = -1;
            uint8_t *labels = malloc((size_t)n);
            CHECK_OK(gcut_grid_solve(grid, &opt, &flow, labels, &stats));
            count(flow == expected);
            int64_t cut = -1;
            count(labels != NULL && gcut_grid_verify(grid, labels, flow, &cut) == GCUT_OK &&
                  cut == flow);
            free(labels);
            const char *want = has_gpu && n >= 65536       ? "cuda-grid"
                               : threads > 1 && n >= 65536 ? "parallel-bk"
                                                           : "grid-ibfs";
            count(strcmp(stats.solver, want) == 0);
            if (strcmp(stats.solver, want) != 0)
                fprintf(stderr, "auto, %lld nodes, %d threads: %s, expected %s\n", (long long)n,
                        threads, stats.solver, want);
        }
        gcut_grid_free(grid);
    }
}

int main(void) {
    uint64_t seed = test_seed();
    test_rng rng;
    test_rng_init(&rng, seed);
    test_tiny(&rng);
    test_grids(&rng);
    test_prepass(&rng);
    test_prepass_copies(&rng);
    test_auto(&rng);
    return test_finish("test_par_grid", passed);
}
