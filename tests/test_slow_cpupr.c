/* test_slow_cpupr.c - cpu-pr on the benchmark's own problems (Hussein et al. 2007, VII:
 * synthetic segmentation grids, 2D 4/8-connected and 3D 6/26-connected, easy and hard) at
 * sizes where tiles, colours and the shared BFS all matter, checked against bk. */
#include "util_common.h"

#include <inttypes.h>
#include <string.h>

static int checks_passed = 0;

static void check_synth(int64_t width, int64_t height, int64_t depth, gcut_synth_level level,
                        int connectivity, uint64_t seed) {
    char what[96];
    snprintf(what, sizeof what, "synth %" PRId64 "x%" PRId64 "x%" PRId64 " %s conn %d", width,
             height, depth, level == GCUT_SYNTH_HARD ? "hard" : "easy", connectivity);
    gcut_grid *grid = NULL;
    gcut_status st = gcut_synth_grid(width, height, depth, seed, level, connectivity, &grid);
    CHECK_OK(st);
    if (st != GCUT_OK)
        return;
    const int64_t n = gcut_grid_num_nodes(grid);
    uint8_t *labels = malloc((size_t)n);
    uint8_t *first = malloc((size_t)n);
    int ok = labels != NULL && first != NULL;

    gcut_options options;
    gcut_options_init(&options);
    options.solver = "bk";
    int64_t expected = -1;
    st = gcut_grid_solve(grid, &options, &expected, NULL, NULL);
    CHECK_OK(st);
    ok = ok && st == GCUT_OK;

    gcut_stats first_stats;
    memset(&first_stats, 0, sizeof first_stats);
    for (int threads = 1; threads <= 2 && ok; threads++) {
        options.solver = "cpu-pr";
        options.threads = threads;
        gcut_stats stats;
        int64_t flow = -1;
        st = gcut_grid_solve(grid, &options, &flow, labels, &stats);
        if (st != GCUT_OK || flow != expected ||
            gcut_grid_verify(grid, labels, flow, NULL) != GCUT_OK) {
            fprintf(stderr, "%s, %d threads: %s, flow %" PRId64 " (bk %" PRId64 "): %s\n", what,
                    threads, gcut_status_name(st), flow, expected, gcut_last_error());
            ok = 0;
            break;
        }
        if (threads == 1) {
            memcpy(first, labels, (size_t)n);
            first_stats = stats;
        } else if (memcmp(first, labels, (size_t)n) != 0 || stats.pushes != first_stats.pushes ||
                   stats.sweeps != first_stats.sweeps) {
            fprintf(stderr, "%s: 2 threads differ from 1 (labels or counts)\n", what);
            ok = 0;
        }
        printf("%s, %d threads: flow %" PRId64 ", %" PRId64 " sweeps, %" PRId64
               " global relabels\n",
               what, threads, flow, stats.sweeps, stats.global_relabels);
    }
    free(labels);
    free(first);
    gcut_grid_free(grid);
    if (ok)
        checks_passed++;
    else
        test_failures++;
}

int main(void) {
    uint64_t seed = test_seed();
    check_synth(640, 480, 1, GCUT_SYNTH_EASY, 4, seed);
    check_synth(640, 480, 1, GCUT_SYNTH_HARD, 4, seed + 1);
    check_synth(511, 389, 1, GCUT_SYNTH_HARD, 8, seed + 2);
    check_synth(1024, 1024, 1, GCUT_SYNTH_HARD, 4, seed + 3);
    check_synth(64, 64, 64, GCUT_SYNTH_HARD, 6, seed + 4);
    check_synth(45, 37, 29, GCUT_SYNTH_EASY, 26, seed + 5);
    return test_finish("test_slow_cpupr", checks_passed);
}
