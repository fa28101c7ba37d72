/* bk_tune.c - a quick timing driver for the bk solver alone (not the official benchmark, which
 * is gcut_bench): solve one 4-connected segmentation grid several times and print the median
 * build and solve times; optionally dump the graph so other BK codes can solve the same one.
 *
 *   bk_tune [WIDTH HEIGHT [easy|hard|blobs [RUNS [DUMP_FILE]]]]
 *
 * Then times a warm re-solve after changing 1% of the terminals against a fresh solve.
 * easy/hard: gcut_synth_grid (Hussein et al. 2007, VII); blobs: a noisy two-region image made
 * here with intensity unaries and contrast smoothness (for builds without the synthetic grids).
 * DUMP_FILE holds int64 n, m, then int32 arrays u[m], v[m], cap[m], rev[m], source[n], sink[n]
 * (little-endian, the machine's own order). */
#include "gcut.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Gaussian noise by the sum of four uniforms (close enough for a test image). */
static double noise(uint64_t *state) {
    double sum = 0;
    for (int k = 0; k < 4; k++)
        sum += (double)(rng_next(state) >> 11) / 9007199254740992.0;
    return (sum - 2.0) * 1.7320508;
}

/* A bright disc and a bright bar on a dark background, heavy noise; unary = squared distance
 * to each region's mean, smoothness = 60 exp(-d^2 / (2 sigma^2)) (Boykov-Jolly). */
static gcut_status make_blobs(int64_t width, int64_t height, gcut_grid **out) {
    int64_t shape[2] = {height, width};
    gcut_status st = gcut_grid_create(2, shape, 4, out);
    if (st != GCUT_OK)
        return st;
    int64_t n = width * height;
    double *image = malloc((size_t)n * sizeof *image);
    if (image == NULL)
        return GCUT_ERR_NOMEM;
    uint64_t state = 42;
    for (int64_t y = 0; y < height; y++)
        for (int64_t x = 0; x < width; x++) {
            double dx = (double)x / (double)width - 0.4, dy = (double)y / (double)height - 0.5;
            int inside = dx * dx + dy * dy < 0.06 ||
                         (x > width * 6 / 10 && x < width * 8 / 10 && y > height / 10);
            image[y * width + x] = (inside ? 160.0 : 90.0) + 45.0 * noise(&state);
        }
    int32_t *source = gcut_grid_terminal_data(*out, GCUT_SOURCE);
    int32_t *sink = gcut_grid_terminal_data(*out, GCUT_SINK);
    for (int64_t i = 0; i < n; i++) {
        double to_fg = (image[i] - 160.0) / 45.0, to_bg = (image[i] - 90.0) / 45.0;
        source[i] = (int32_t)(10.0 * to_bg * to_bg);
        sink[i] = (int32_t)(10.0 * to_fg * to_fg);
    }
    for (int d = 0; d < 4; d++) {
        int offset[2];
        gcut_grid_offset(*out, d, offset);
        int32_t *cap = gcut_grid_dir_data(*out, d);
        for (int64_t y = 0; y < height; y++)
            for (int64_t x = 0; x < width; x++) {
                int64_t ny = y + offset[0], nx = x + offset[1], i = y * width + x;
                if (ny < 0 || ny >= height || nx < 0 || nx >= width) {
                    cap[i] = 0;
                    continue;
                }
                double diff = image[i] - image[ny * width + nx];
                cap[i] = (int32_t)(60.0 * exp(-diff * diff / (2.0 * 45.0 * 45.0)));
            }
    }
    free(image);
    return GCUT_OK;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int dump(const gcut_graph *g, const char *path) {
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return 0;
    int64_t n = gcut_graph_num_nodes(g), m = gcut_graph_num_edges(g);
    int32_t *col = malloc((size_t)(n > m ? n : m) * 4 * sizeof *col);
    if (col == NULL) {
        fclose(f);
        return 0;
    }
    fwrite(&n, sizeof n, 1, f);
    fwrite(&m, sizeof m, 1, f);
    for (int64_t e = 0; e < m; e++) {
        int64_t u, v;
        gcut_graph_get_edge(g, e, &u, &v, &col[2 * m + e], &col[3 * m + e]);
        col[e] = (int32_t)u;
        col[m + e] = (int32_t)v;
    }
    fwrite(col, sizeof *col, (size_t)(4 * m), f);
    for (int64_t i = 0; i < n; i++) {
        int64_t s, t;
        gcut_graph_get_tweights(g, i, &s, &t);
        col[i] = (int32_t)s;
        col[n + i] = (int32_t)t;
    }
    fwrite(col, sizeof *col, (size_t)(2 * n), f);
    free(col);
    return fclose(f) == 0;
}

int main(int argc, char **argv) {
    int64_t width = argc > 2 ? atoll(argv[1]) : 1024, height = argc > 2 ? atoll(argv[2]) : 1024;
    const char *kind = argc > 3 ? argv[3] : "easy";
    int runs = argc > 4 ? atoi(argv[4]) : 5;
    if (width < 1 || height < 1 || runs < 1 || runs > 1000) {
        fprintf(stderr, "usage: bk_tune [WIDTH HEIGHT [easy|hard|blobs [RUNS [DUMP_FILE]]]]\n");
        return 2;
    }
    gcut_grid *grid = NULL;
    gcut_status st;
    if (strcmp(kind, "blobs") == 0)
        st = make_blobs(width, height, &grid);
    else
        st = gcut_synth_grid(width, height, 1, 1,
                             strcmp(kind, "hard") == 0 ? GCUT_SYNTH_HARD : GCUT_SYNTH_EASY, 4,
                             &grid);
    gcut_graph *g = NULL;
    if (st == GCUT_OK)
        st = gcut_grid_to_graph(grid, &g);
    if (st != GCUT_OK) {
        fprintf(stderr, "bk_tune: %s: %s\n", gcut_status_name(st), gcut_last_error());
        return 1;
    }
    if (argc > 5 && !dump(g, argv[5])) {
        fprintf(stderr, "bk_tune: cannot write %s\n", argv[5]);
        return 1;
    }
    double *solve = malloc((size_t)runs * sizeof *solve);
    double *build = malloc((size_t)runs * sizeof *build);
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "bk";
    options.warm = 0;
    gcut_stats stats;
    int64_t flow = 0;
    for (int r = 0; r < runs && solve && build; r++) {
        st = gcut_graph_solve(g, &options, &flow, NULL, &stats);
        if (st != GCUT_OK) {
            fprintf(stderr, "bk_tune: %s: %s\n", gcut_status_name(st), gcut_last_error());
            return 1;
        }
        solve[r] = stats.solve_ms;
        build[r] = stats.build_ms;
    }
    qsort(solve, (size_t)runs, sizeof *solve, cmp_double);
    qsort(build, (size_t)runs, sizeof *build, cmp_double);
    printf("%s %lldx%lld flow %lld augmentations %lld build %.1f ms solve %.1f ms (median of %d; "
           "solve min %.1f max %.1f)\n",
           kind, (long long)width, (long long)height, (long long)flow,
           (long long)stats.augmentations, build[runs / 2], solve[runs / 2], runs, solve[0],
           solve[runs - 1]);
    /* Warm re-solve (Kohli-Torr): change the terminals of 1% of the nodes, as when a user
     * adds scribbles or a video frame moves on, and compare with a fresh solve. */
    options.warm = 1;
    st = gcut_graph_solve(g, &options, &flow, NULL, &stats);
    uint64_t state = 7;
    int64_t n = gcut_graph_num_nodes(g);
    for (int64_t k = 0; k < n / 100 && st == GCUT_OK; k++) {
        int64_t i = (int64_t)(rng_next(&state) % (uint64_t)n), source, sink;
        gcut_graph_get_tweights(g, i, &source, &sink);
        st = gcut_graph_set_tweights(g, i, sink + (int64_t)(rng_next(&state) % 8), source);
    }
    gcut_stats warm_stats, fresh_stats;
    int64_t warm_flow = -1, fresh_flow = -2;
    if (st == GCUT_OK)
        st = gcut_graph_solve(g, &options, &warm_flow, NULL, &warm_stats);
    options.warm = 0;
    if (st == GCUT_OK)
        st = gcut_graph_solve(g, &options, &fresh_flow, NULL, &fresh_stats);
    if (st != GCUT_OK || warm_flow != fresh_flow) {
        fprintf(stderr, "bk_tune: warm re-solve: %s, flow %lld, fresh %lld\n", gcut_status_name(st),
                (long long)warm_flow, (long long)fresh_flow);
        return 1;
    }
    printf("warm re-solve after changing 1%% of the terminals: %.1f ms (%lld augmentations), "
           "fresh %.1f ms + build %.1f ms, flow %lld\n",
           warm_stats.solve_ms + warm_stats.build_ms, (long long)warm_stats.augmentations,
           fresh_stats.solve_ms, fresh_stats.build_ms, (long long)fresh_flow);
    free(solve);
    free(build);
    gcut_graph_free(g);
    gcut_grid_free(grid);
    return 0;
}
