/* test_cuda_seg.c - segmentation capacities built on the GPU (gcut__cudagrid_solve_image in
 * src/cuda/cuda_grid.cu) against the host builder gcut__seg_fill_grid (src/seg): every
 * capacity bit-identical, and the GPU solve's flow equal to bk's on the host-built grid, with
 * the labels certified on it; the public gcut_segment() on cuda-grid and auto against bk; device
 * sessions pooled between image solves (also from threads) against bk, with the device memory
 * back after gcut_device_release_cache(). Skips (exit 77) where no GPU can be used. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "internal.h"
#include "../seg/seg_internal.h"
#include "util_common.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GCUT_HAVE_CUDA
int main(void) {
    printf("test_cuda_seg: built without CUDA: skipped\n");
    return TEST_SKIP;
}
#else
#include <cuda_runtime_api.h>

static int checks;

/* Count of entries where a and b differ; prints the first. */
static int64_t compare(const int32_t *a, const int32_t *b, int64_t n, const char *what,
                       const char *array) {
    int64_t diffs = 0;
    for (int64_t i = 0; i < n; i++)
        if (a[i] != b[i] && diffs++ == 0)
            fprintf(stderr, "%s: %s[%lld] host %d, device %d\n", what, array, (long long)i, a[i],
                    b[i]);
    return diffs;
}

/* Host build, device build + solve, compare. */
static void check_case(const uint8_t *pixels, const uint8_t *seeds, const gcut__seg_tables *tables,
                       int ndim, const int64_t *shape, int conn, const char *what) {
    gcut_grid *host = NULL, *captured = NULL;
    CHECK_OK(gcut_grid_create(ndim, shape, conn, &host));
    CHECK_OK(gcut_grid_create(ndim, shape, conn, &captured));
    if (host == NULL || captured == NULL) {
        gcut_grid_free(host);
        gcut_grid_free(captured);
        return;
    }
    /* Poison the capture so that an array the device never wrote cannot pass as zeros. */
    int64_t n = gcut_grid_num_nodes(host);
    for (int d = 0; d < conn; d++)
        memset(gcut_grid_dir_data(captured, d), 0xA5, (size_t)n * 4);
    for (int t = 0; t < 2; t++)
        memset(gcut_grid_terminal_data(captured, t), 0xA5, (size_t)n * 4);
    gcut__seg_fill_grid(pixels, seeds, tables, host);

    uint8_t *labels = malloc((size_t)n);
    gcut_options options;
    gcut_options_init(&options);
    gcut_stats stats;
    memset(&stats, 0, sizeof stats);
    int64_t flow = -1;
    double construct_ms = -1;
    CHECK_OK(gcut__cudagrid_solve_image(pixels, seeds, tables, ndim, shape, conn, &options, &flow,
                                        labels, &stats, &construct_ms, captured));
    CHECK(construct_ms >= 0);
    int64_t diffs = 0;
    diffs += compare(gcut_grid_terminal_cdata(host, GCUT_SOURCE),
                     gcut_grid_terminal_cdata(captured, GCUT_SOURCE), n, what, "source");
    diffs += compare(gcut_grid_terminal_cdata(host, GCUT_SINK),
                     gcut_grid_terminal_cdata(captured, GCUT_SINK), n, what, "sink");
    for (int d = 0; d < conn; d++) {
        char array[16];
        snprintf(array, sizeof array, "cap[%d]", d);
        diffs +=
            compare(gcut_grid_dir_cdata(host, d), gcut_grid_dir_cdata(captured, d), n, what, array);
    }
    CHECK_EQ_I64(diffs, 0);

    gcut_options bk;
    gcut_options_init(&bk);
    bk.solver = "bk";
    int64_t expected = -1;
    gcut_status st = gcut_grid_solve(host, &bk, &expected, NULL, NULL);
    if (st != GCUT_OK) {
        /* bk not built yet: cuda-grid on the host-built grid is the reference instead. */
        bk.solver = "cuda-grid";
        CHECK_OK(gcut_grid_solve(host, &bk, &expected, NULL, NULL));
    }
    CHECK_EQ_I64(flow, expected);
    int64_t cut = -1;
    CHECK_OK(gcut_grid_verify(host, labels, expected, &cut));
    printf("%s: flow %lld, construction %.3f ms on the device\n", what, (long long)flow,
           construct_ms);
    free(labels);
    gcut_grid_free(host);
    gcut_grid_free(captured);
    checks++;
}

/* The synthetic benchmark's energy: its own image, seeds and cached tables. */
static void synthetic(void) {
    struct {
        int64_t w, h, d;
        int conn;
        gcut_synth_level level;
    } cases[] = {{320, 240, 1, 4, GCUT_SYNTH_HARD},
                 {251, 199, 1, 8, GCUT_SYNTH_EASY},
                 {37, 41, 29, 6, GCUT_SYNTH_HARD},
                 {24, 25, 26, 26, GCUT_SYNTH_EASY}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const gcut__seg_tables *tables = NULL;
        gcut_status st = gcut__synth_tables(cases[k].level, cases[k].conn, &tables);
        if (st != GCUT_OK) {
            printf("note: synthetic tables: %s: %s; synthetic cases skipped\n",
                   gcut_status_name(st), gcut_last_error());
            return;
        }
        int64_t n = cases[k].w * cases[k].h * cases[k].d;
        uint8_t *pixels = malloc((size_t)(n * tables->channels));
        uint8_t *seeds = malloc((size_t)n);
        CHECK_OK(gcut__synth_pixels(cases[k].w, cases[k].h, cases[k].d, test_seed() + k,
                                    cases[k].level, pixels, NULL));
        CHECK_OK(gcut_synth_seeds(cases[k].w, cases[k].h, cases[k].d, seeds));
        int64_t shape[3] = {cases[k].d, cases[k].h, cases[k].w};
        int three_d = cases[k].d > 1;
        char what[96];
        snprintf(what, sizeof what, "synth %lldx%lldx%lld conn %d", (long long)cases[k].w,
                 (long long)cases[k].h, (long long)cases[k].d, cases[k].conn);
        check_case(pixels, seeds, tables, three_d ? 3 : 2, three_d ? shape : shape + 1,
                   cases[k].conn, what);
        free(pixels);
        free(seeds);
    }
}

/* Random images, seeds and regional costs through gcut__seg_tables_fill: gray and RGB, every
 * connectivity, with and without seeds. */
static void random_tables(test_rng *rng) {
    struct {
        int channels, ndim, conn;
        int64_t shape[3];
        int with_seeds;
    } cases[] = {{3, 2, 8, {67, 130, 0}, 1},
                 {3, 2, 4, {1, 300, 0}, 0},
                 {1, 2, 8, {90, 33, 0}, 1},
                 {1, 3, 26, {13, 18, 21}, 1},
                 {1, 3, 6, {20, 1, 35}, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        gcut__seg_tables *tables = NULL;
        CHECK_OK(gcut__seg_tables_alloc(cases[k].channels, cases[k].conn, &tables));
        if (tables == NULL)
            return;
        int64_t colors = tables->num_colors;
        double *cost_fg = malloc((size_t)colors * sizeof(double));
        double *cost_bg = malloc((size_t)colors * sizeof(double));
        for (int64_t c = 0; c < colors; c++) {
            cost_fg[c] = (double)test_rng_range(rng, 0, 100000) / 5000.0;
            cost_bg[c] = (double)test_rng_range(rng, 0, 100000) / 5000.0;
        }
        CHECK_OK(gcut__seg_tables_fill(tables, cost_fg, cost_bg, 40.0, 12.0, 0.0, cases[k].conn));
        int64_t n = 1;
        for (int i = 0; i < cases[k].ndim; i++)
            n *= cases[k].shape[i];
        uint8_t *pixels = malloc((size_t)(n * cases[k].channels));
        uint8_t *seeds = malloc((size_t)n);
        /* Smooth ramps plus noise, so that both small and large colour differences occur. */
        for (int64_t i = 0; i < n * cases[k].channels; i++)
            pixels[i] = (uint8_t)((i / 7) % 200 + test_rng_range(rng, 0, 55));
        for (int64_t i = 0; i < n; i++) {
            int64_t r = test_rng_range(rng, 0, 99);
            seeds[i] = r < 3   ? GCUT_SEED_FOREGROUND
                       : r < 6 ? GCUT_SEED_BACKGROUND
                               : GCUT_SEED_UNKNOWN;
        }
        char what[96];
        snprintf(what, sizeof what, "random %s %dD conn %d%s",
                 cases[k].channels == 3 ? "RGB" : "gray", cases[k].ndim, cases[k].conn,
                 cases[k].with_seeds ? " seeded" : "");
        check_case(pixels, cases[k].with_seeds ? seeds : NULL, tables, cases[k].ndim,
                   cases[k].shape, cases[k].conn, what);
        if (k == 0) {
            /* Tables without the diagonal class cannot serve an 8-connected grid. */
            gcut__seg_tables *four = NULL;
            CHECK_OK(gcut__seg_tables_alloc(3, 4, &four));
            int64_t flow = 0;
            gcut_stats stats;
            gcut_status st = gcut__cudagrid_solve_image(pixels, NULL, four, 2, cases[k].shape, 8,
                                                        NULL, &flow, NULL, &stats, NULL, NULL);
            CHECK_EQ_I64(st, GCUT_ERR_INVALID_ARG);
            gcut__seg_tables_free(four);
            checks++;
        }
        free(pixels);
        free(seeds);
        free(cost_fg);
        free(cost_bg);
        gcut__seg_tables_free(tables);
    }
}

/* The public one-call gcut_segment(): through cuda-grid (energy built on the GPU) and through
 * "auto" (which picks cuda-grid for these sizes when a GPU is present) the mask, the flow and
 * the seed counts equal bk's (host-built grid). Synthetic colour pictures, 2D and 3D. */
static void public_segment(void) {
    struct {
        int64_t w, h, d;
        int conn;
        gcut_model_kind model;
    } cases[] = {{320, 240, 1, 4, GCUT_MODEL_AUTO},
                 {301, 257, 1, 8, GCUT_MODEL_GMM},
                 {300, 260, 1, 4, GCUT_MODEL_HISTOGRAM},
                 {48, 44, 40, 6, GCUT_MODEL_AUTO}};
    /* GCUT_TEST_QUICK (the sanitizers): one small picture, cuda-grid named. */
    const bool quick = getenv("GCUT_TEST_QUICK") != NULL;
    if (quick)
        cases[0].w = 40, cases[0].h = 30;
    const size_t count = quick ? 1 : sizeof cases / sizeof cases[0];
    for (size_t k = 0; k < count; k++) {
        gcut_image img;
        const int64_t n = cases[k].w * cases[k].h * cases[k].d;
        uint8_t *seeds = malloc((size_t)n), *want = malloc((size_t)n), *got = malloc((size_t)n);
        CHECK(seeds != NULL && want != NULL && got != NULL);
        CHECK_OK(gcut_synth_image(cases[k].w, cases[k].h, cases[k].d, test_seed() + 7 * k,
                                  GCUT_SYNTH_HARD, &img, NULL));
        CHECK_OK(gcut_synth_seeds(cases[k].w, cases[k].h, cases[k].d, seeds));
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.connectivity = cases[k].conn;
        p.model = cases[k].model;
        gcut_options opt;
        gcut_options_init(&opt);
        opt.solver = "bk";
        gcut_seg_report ref, r;
        CHECK_OK(gcut_segment(&img, seeds, &p, &opt, want, &ref));
        const char *names[] = {"cuda-grid", "auto"};
        for (int s = 0; s < (quick ? 1 : 2); s++) {
            opt.solver = names[s];
            memset(got, 0xee, (size_t)n);
            CHECK_OK(gcut_segment(&img, seeds, &p, &opt, got, &r));
            if (memcmp(want, got, (size_t)n) != 0 || r.stats.flow != ref.stats.flow ||
                r.foreground_pixels != ref.foreground_pixels ||
                strcmp(r.stats.solver, "cuda-grid") != 0 || r.scale != ref.scale) {
                fprintf(stderr,
                        "gcut_segment %lldx%lldx%lld conn %d via %s: flow %lld (bk %lld), "
                        "foreground %lld (bk %lld), solver %s\n",
                        (long long)cases[k].w, (long long)cases[k].h, (long long)cases[k].d,
                        cases[k].conn, names[s], (long long)r.stats.flow, (long long)ref.stats.flow,
                        (long long)r.foreground_pixels, (long long)ref.foreground_pixels,
                        r.stats.solver);
                test_failures++;
            } else {
                checks++;
            }
        }
        gcut_image_free(&img);
        free(seeds);
        free(want);
        free(got);
    }
}

/* One picture for the pooled-session tests: its bk answer and a cuda-grid solve. */
typedef struct pool_case {
    int64_t w, h;
    int conn;
    double lambda;
    gcut_image img;
    uint8_t *seeds, *want, *got;
    int64_t want_flow, got_flow;
    gcut_status status;
} pool_case;

static void pool_case_make(pool_case *c, uint64_t seed) {
    const int64_t n = c->w * c->h;
    c->seeds = malloc((size_t)n);
    c->want = malloc((size_t)n);
    c->got = malloc((size_t)n);
    CHECK(c->seeds != NULL && c->want != NULL && c->got != NULL);
    CHECK_OK(gcut_synth_image(c->w, c->h, 1, seed, GCUT_SYNTH_HARD, &c->img, NULL));
    CHECK_OK(gcut_synth_seeds(c->w, c->h, 1, c->seeds));
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.connectivity = c->conn;
    p.lambda = c->lambda;
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "bk";
    gcut_seg_report r;
    CHECK_OK(gcut_segment(&c->img, c->seeds, &p, &opt, c->want, &r));
    c->want_flow = r.stats.flow;
}

static void *pool_case_solve(void *arg) {
    pool_case *c = arg;
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.connectivity = c->conn;
    p.lambda = c->lambda;
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "cuda-grid";
    gcut_seg_report r;
    memset(c->got, 0xee, (size_t)(c->w * c->h));
    c->status = gcut_segment(&c->img, c->seeds, &p, &opt, c->got, &r);
    c->got_flow = r.stats.flow;
    return NULL;
}

static void pool_case_check(pool_case *c, const char *what) {
    if (c->status != GCUT_OK || c->got_flow != c->want_flow ||
        memcmp(c->got, c->want, (size_t)(c->w * c->h)) != 0) {
        fprintf(stderr, "%s: %lldx%lld conn %d lambda %g: status %s, flow %lld (bk %lld)\n", what,
                (long long)c->w, (long long)c->h, c->conn, c->lambda, gcut_status_name(c->status),
                (long long)c->got_flow, (long long)c->want_flow);
        test_failures++;
    } else {
        checks++;
    }
}

/* gcut_device_init, and the sessions that image solves keep between calls (cuda_grid.cu,
 * "pooled sessions"): a pooled session must solve exactly as a new one, whatever solved in it
 * before (another energy of the same size: other tables, another flow; other sizes and
 * connectivities between), also with several threads taking sessions at once; the pool off
 * gives the same answers; gcut_device_release_cache() gives every byte of device memory back. */
static void pooled_sessions(void) {
    CHECK_OK(gcut_device_init(0));
    CHECK_OK(gcut_device_init(0)); /* again: returns at once */
    CHECK(gcut_device_init(999) == GCUT_ERR_NO_DEVICE && strstr(gcut_last_error(), "999"));
    CHECK(gcut_device_init(-1) == GCUT_ERR_NO_DEVICE);
    checks++;
    const bool quick = getenv("GCUT_TEST_QUICK") != NULL;
    pool_case cases[] = {
        {64, 48, 8, 50, {0}, 0, 0, 0, 0, 0, 0},  {64, 48, 8, 5, {0}, 0, 0, 0, 0, 0, 0},
        {64, 48, 4, 50, {0}, 0, 0, 0, 0, 0, 0},  {150, 97, 8, 120, {0}, 0, 0, 0, 0, 0, 0},
        {150, 97, 8, 20, {0}, 0, 0, 0, 0, 0, 0}, {33, 200, 4, 50, {0}, 0, 0, 0, 0, 0, 0}};
    const int count = (int)(sizeof cases / sizeof cases[0]);
    for (int k = 0; k < count; k++)
        pool_case_make(&cases[k], test_seed() + 31 * (uint64_t)k + (k == 1 || k == 4));
    /* Pass 0 warms up (CUDA loads kernels lazily and may keep per-thread resources: the first
     * loads allocate); the device memory is noted after it, with an empty pool, and must be
     * back to that value after pass 1 and a release. */
    size_t free_before = 0, free_after = 0, total = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            gcut_device_release_cache();
            CHECK(cudaMemGetInfo(&free_before, &total) == cudaSuccess);
        }
        /* In turn, twice over, so every size meets a session used before by another energy. */
        for (int again = 0; again < 2; again++)
            for (int k = 0; k < count; k++) {
                pool_case_solve(&cases[k]);
                pool_case_check(&cases[k], "pooled session, in turn");
            }
        if (quick)
            continue;
        /* All at once from threads: sessions of one size taken by several solves together. */
        pthread_t threads[6];
        for (int round = 0; round < 2; round++) {
            bool started[6];
            for (int k = 0; k < count; k++)
                started[k] = pthread_create(&threads[k], NULL, pool_case_solve, &cases[k]) == 0;
            for (int k = 0; k < count; k++) {
                if (started[k])
                    pthread_join(threads[k], NULL);
                else
                    pool_case_solve(&cases[k]);
                pool_case_check(&cases[k], "pooled session, threads");
            }
        }
        /* The pool off: a new session per solve, the same answers. */
        setenv("GCUT_CUDAGRID_POOL", "0", 1);
        for (int k = 0; k < count; k++) {
            pool_case_solve(&cases[k]);
            pool_case_check(&cases[k], "pool off");
        }
        unsetenv("GCUT_CUDAGRID_POOL");
    }
    gcut_device_release_cache();
    CHECK(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
    if (free_after != free_before)
        fprintf(stderr, "device memory free %zu before the pooled solves, %zu after release\n",
                free_before, free_after);
    CHECK(free_after == free_before);
    checks++;
    for (int k = 0; k < count; k++) {
        gcut_image_free(&cases[k].img);
        free(cases[k].seeds);
        free(cases[k].want);
        free(cases[k].got);
    }
}

int main(void) {
    if (!gcut__cuda_available()) {
        printf("test_cuda_seg: no usable CUDA device: skipped\n");
        return TEST_SKIP;
    }
    test_rng rng;
    test_rng_init(&rng, test_seed());
    synthetic();
    random_tables(&rng);
    public_segment();
    pooled_sessions();
    return test_finish("test_cuda_seg", checks);
}
#endif
