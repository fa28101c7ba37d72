/* test_seg.c - segmentation energies of real images (Boykov-Jolly; Lattari 2010 ch. 3.4):
 * capacities of tiny images against hand-computed values, seed masks in every encoding, 8/16
 * bit and alpha handled alike, learnt models segmenting synthetic images against their truth,
 * seeds kept and the same cut value from every solver, the host path's fill of a grid that is
 * not zeroed first, the overlay, and clean errors. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "internal.h"
#include "../src/seg/seg_internal.h"
#include "util_common.h"
#include "../src/seg/seg_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0;

#define PASS_IF(cond)                                                                              \
    do {                                                                                           \
        int before_ = test_failures;                                                               \
        CHECK(cond);                                                                               \
        if (test_failures == before_)                                                              \
            passed++;                                                                              \
    } while (0)

static int32_t cap_at(gcut_grid *g, int dir, int64_t i) {
    return gcut_grid_dir_cdata(g, dir)[i];
}

/* Direction index of offset (dy, dx) in a 2D grid. */
static int dir_of(const gcut_grid *g, int dy, int dx) {
    for (int d = 0; d < gcut_grid_num_dirs(g); d++) {
        int off[2];
        if (gcut_grid_offset(g, d, off) == GCUT_OK && off[0] == dy && off[1] == dx)
            return d;
    }
    return -1;
}

static void test_defaults(void) {
    gcut_seg_params p;
    memset(&p, 0x55, sizeof p);
    gcut_seg_params_init(&p);
    PASS_IF(p.lambda == 50.0 && p.sigma <= 0 && p.connectivity == 0 && p.model == GCUT_MODEL_AUTO &&
            p.gmm_components == 5 && p.histogram_bins == 32 && p.scale <= 0);
}

/* 3x1 gray [200, 100, 50], seeds [fg, -, bg], histogram of 2 bins, lambda 2, sigma 100,
 * scale 1000, 4-connected. By hand (docs/SEGMENT.md):
 *   fg histogram [0, 1] blurred [1 2 1]/4 -> [0.25, 0.75]; bg [1, 0] -> [0.75, 0.25];
 *   prior mass pr = 0.01 * 1 / 2 (+1e-9). Pixel 1 (100, bin 0): cost_fg = -ln(0.25 + pr),
 *   cost_bg = -ln(0.75 + pr) (same denominators): sink = round(1000 ln((0.75+pr)/(0.25+pr)))
 *   = 1085, source 0.
 *   pairs: |200-100|^2 = 10000 -> 1000 * 2 exp(-10000 / 20000) = 1213.06 -> 1213;
 *          |100-50|^2 = 2500 -> 1000 * 2 exp(-0.125) = 1764.99 -> 1765.
 *   K = 1 + 4 * round(1000 * 2) = 8001. Minimum cut: pixel 1 background (cuts 1213, against
 *   1085 + 1765 for foreground), flow 1213. */
static void test_hand_3x1(void) {
    uint8_t px[3] = {200, 100, 50}, seeds[3] = {1, 0, 2}, mask[3] = {9, 9, 9};
    gcut_image img = {3, 1, 1, 1, 8, px};
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.model = GCUT_MODEL_HISTOGRAM;
    p.histogram_bins = 2;
    p.lambda = 2;
    p.sigma = 100;
    p.scale = 1000;
    p.connectivity = 4;
    gcut_grid *g = NULL;
    gcut_seg_report r;
    CHECK_OK(gcut_seg_build_grid(&img, seeds, &p, &g, &r));
    if (g == NULL)
        return;
    const double pr = 0.005 + 1e-9;
    const int32_t unary = (int32_t)floor(1000 * log((0.75 + pr) / (0.25 + pr)) + 0.5);
    PASS_IF(unary == 1085);
    const int32_t *src = gcut_grid_terminal_cdata(g, GCUT_SOURCE);
    const int32_t *snk = gcut_grid_terminal_cdata(g, GCUT_SINK);
    PASS_IF(src[0] == 8001 && snk[0] == 0);
    PASS_IF(src[1] == 0 && snk[1] == unary);
    PASS_IF(src[2] == 0 && snk[2] == 8001);
    int right = dir_of(g, 0, 1), left = dir_of(g, 0, -1), down = dir_of(g, 1, 0);
    PASS_IF(cap_at(g, right, 0) == 1213 && cap_at(g, left, 1) == 1213);
    PASS_IF(cap_at(g, right, 1) == 1765 && cap_at(g, left, 2) == 1765);
    PASS_IF(cap_at(g, right, 2) == 0 && cap_at(g, left, 0) == 0 && cap_at(g, down, 1) == 0);
    PASS_IF(r.scale == 1000 && r.sigma == 100 && r.lambda == 2 && r.connectivity == 4 &&
            r.model == GCUT_MODEL_HISTOGRAM && r.seeds_foreground == 1 && r.seeds_background == 1);
    gcut_grid_free(g);
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "bk";
    CHECK_OK(gcut_segment(&img, seeds, &p, &opt, mask, &r));
    PASS_IF(mask[0] == 1 && mask[1] == 0 && mask[2] == 0);
    PASS_IF(r.stats.flow == 1213 && r.foreground_pixels == 1);
}

/* 2x2 gray [[10, 20], [30, 40]], seeds [[fg, -], [-, bg]], 8-connected, lambda 1, sigma 10,
 * scale 1000; both histograms put everything in bin 0, so the unseeded pixels have no regional
 * cost. Pairs: right/left d^2 = 100 -> round(1000 exp(-0.5)) = 607; down d^2 = 400 -> 135;
 * (+1,+1) from (0,0) d^2 = 900 -> round(1000 exp(-4.5) / sqrt 2) = 8; (+1,-1) from (0,1)
 * d^2 = 100 -> round(1000 exp(-0.5) / sqrt 2) = 429. K = 1 + 8 * 1000. */
static void test_hand_2x2(void) {
    uint8_t px[4] = {10, 20, 30, 40}, seeds[4] = {1, 0, 0, 2};
    gcut_image img = {2, 2, 1, 1, 8, px};
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.model = GCUT_MODEL_HISTOGRAM;
    p.histogram_bins = 2;
    p.lambda = 1;
    p.sigma = 10;
    p.scale = 1000;
    p.connectivity = 8;
    gcut_grid *g = NULL;
    CHECK_OK(gcut_seg_build_grid(&img, seeds, &p, &g, NULL));
    if (g == NULL)
        return;
    const int32_t *src = gcut_grid_terminal_cdata(g, GCUT_SOURCE);
    const int32_t *snk = gcut_grid_terminal_cdata(g, GCUT_SINK);
    PASS_IF(src[0] == 8001 && snk[0] == 0 && src[3] == 0 && snk[3] == 8001);
    PASS_IF(src[1] == 0 && snk[1] == 0 && src[2] == 0 && snk[2] == 0);
    PASS_IF(cap_at(g, dir_of(g, 0, 1), 0) == 607 && cap_at(g, dir_of(g, 0, -1), 1) == 607);
    PASS_IF(cap_at(g, dir_of(g, 1, 0), 0) == 135 && cap_at(g, dir_of(g, -1, 0), 2) == 135);
    PASS_IF(cap_at(g, dir_of(g, 1, 1), 0) == 8 && cap_at(g, dir_of(g, -1, -1), 3) == 8);
    PASS_IF(cap_at(g, dir_of(g, 1, -1), 1) == 429 && cap_at(g, dir_of(g, -1, 1), 2) == 429);
    PASS_IF(cap_at(g, dir_of(g, 1, 1), 1) == 0 && cap_at(g, dir_of(g, 0, 1), 1) == 0);
    gcut_grid_free(g);
    /* The default scale: the capacity bound over the largest energy term (here lambda). */
    gcut_seg_report r;
    p.scale = 0;
    CHECK_OK(gcut_seg_build_grid(&img, seeds, &p, &g, &r));
    PASS_IF(r.scale == (double)(1 << 20));
    gcut_grid_free(g);
    /* A scale that would pass the bound is refused, not wrapped. */
    p.scale = 1e7;
    g = NULL;
    PASS_IF(gcut_seg_build_grid(&img, seeds, &p, &g, NULL) == GCUT_ERR_OVERFLOW && g == NULL);
    PASS_IF(strstr(gcut_last_error(), "scale") != NULL);
}

static void test_seed_masks(void) {
    uint8_t seeds[6];
    /* gcut codes */
    uint8_t g8[6] = {0, 1, 2, 0, 2, 1};
    gcut_image m = {3, 2, 1, 1, 8, g8};
    CHECK_OK(gcut_seeds_from_mask(&m, GCUT_SEEDS_GCUT, seeds));
    PASS_IF(memcmp(seeds, g8, 6) == 0);
    g8[4] = 3;
    PASS_IF(gcut_seeds_from_mask(&m, GCUT_SEEDS_GCUT, seeds) == GCUT_ERR_INVALID_ARG);
    PASS_IF(strstr(gcut_last_error(), "(x 1, y 1)") != NULL &&
            strstr(gcut_last_error(), "value 3") != NULL);
    /* grabcut: 0 BGD, 1 FGD, 2 PR_BGD, 3 PR_FGD */
    uint8_t gc[6] = {0, 1, 2, 3, 1, 0};
    m.pixels = gc;
    CHECK_OK(gcut_seeds_from_mask(&m, GCUT_SEEDS_GRABCUT, seeds));
    PASS_IF(seeds[0] == 2 && seeds[1] == 1 && seeds[2] == 0 && seeds[3] == 0 && seeds[4] == 1 &&
            seeds[5] == 2);
    gc[5] = 4;
    PASS_IF(gcut_seeds_from_mask(&m, GCUT_SEEDS_GRABCUT, seeds) == GCUT_ERR_INVALID_ARG &&
            strstr(gcut_last_error(), "(x 2, y 1)") != NULL);
    /* 16-bit gcut codes */
    uint16_t g16[6] = {2, 0, 1, 1, 0, 2};
    gcut_image m16 = {3, 2, 1, 1, 16, g16};
    CHECK_OK(gcut_seeds_from_mask(&m16, GCUT_SEEDS_GCUT, seeds));
    PASS_IF(seeds[0] == 2 && seeds[2] == 1 && seeds[4] == 0);
    g16[1] = 256;
    PASS_IF(gcut_seeds_from_mask(&m16, GCUT_SEEDS_GCUT, seeds) == GCUT_ERR_INVALID_ARG);
    /* colour scribbles: red fg, blue bg, anything else unknown; transparent unknown */
    uint8_t rgba[6 * 4] = {255, 0, 0, 255, 0,   0, 255, 255, 255, 255, 255, 255,
                           0,   0, 0, 255, 250, 8, 3,   255, 255, 0,   0,   0};
    gcut_image c4 = {3, 2, 1, 4, 8, rgba};
    CHECK_OK(gcut_seeds_from_mask(&c4, GCUT_SEEDS_COLOR, seeds));
    PASS_IF(seeds[0] == 1 && seeds[1] == 2 && seeds[2] == 0 && seeds[3] == 0 && seeds[4] == 1 &&
            seeds[5] == 0);
    /* gray masks in the colour encoding are trimaps: 255 fg, 0 bg, other unknown */
    uint8_t tri[6] = {255, 0, 128, 0, 255, 17};
    gcut_image t1 = {3, 2, 1, 1, 8, tri};
    CHECK_OK(gcut_seeds_from_mask(&t1, GCUT_SEEDS_COLOR, seeds));
    PASS_IF(seeds[0] == 1 && seeds[1] == 2 && seeds[2] == 0 && seeds[3] == 2 && seeds[5] == 0);
    /* a coloured mask read with the gcut encoding names the pixel */
    uint8_t rgb[6 * 3] = {0};
    rgb[3 * 3 + 0] = 255;
    gcut_image c3 = {3, 2, 1, 3, 8, rgb};
    PASS_IF(gcut_seeds_from_mask(&c3, GCUT_SEEDS_GCUT, seeds) == GCUT_ERR_INVALID_ARG &&
            strstr(gcut_last_error(), "(x 0, y 1)") != NULL);
    /* gray RGB masks are fine with the gcut encoding */
    memset(rgb, 1, sizeof rgb);
    CHECK_OK(gcut_seeds_from_mask(&c3, GCUT_SEEDS_GCUT, seeds));
    PASS_IF(seeds[0] == 1 && seeds[5] == 1);
    PASS_IF(gcut_seeds_from_mask(NULL, GCUT_SEEDS_GCUT, seeds) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_seeds_from_mask(&c3, (gcut_seed_encoding)9, seeds) == GCUT_ERR_INVALID_ARG);
    gcut_image bad = {3, 2, 1, 5, 8, rgb};
    PASS_IF(gcut_seeds_from_mask(&bad, GCUT_SEEDS_GCUT, seeds) == GCUT_ERR_INVALID_ARG);
}

static bool grids_equal(gcut_grid *a, gcut_grid *b) {
    if (a == NULL || b == NULL || gcut_grid_num_nodes(a) != gcut_grid_num_nodes(b) ||
        gcut_grid_num_dirs(a) != gcut_grid_num_dirs(b))
        return false;
    size_t bytes = (size_t)gcut_grid_num_nodes(a) * sizeof(int32_t);
    for (int t = 0; t < 2; t++)
        if (memcmp(gcut_grid_terminal_cdata(a, t), gcut_grid_terminal_cdata(b, t), bytes) != 0)
            return false;
    for (int d = 0; d < gcut_grid_num_dirs(a); d++)
        if (memcmp(gcut_grid_dir_cdata(a, d), gcut_grid_dir_cdata(b, d), bytes) != 0)
            return false;
    return true;
}

/* 16-bit data spanning 0..65535 in steps of 257, RGBA with opaque alpha, and gray+alpha all
 * give exactly the grid of the plain 8-bit image; the build is deterministic. */
static void test_formats(uint64_t seed) {
    const int64_t w = 61, h = 47, n = w * h;
    gcut_image rgb = {0};
    CHECK_OK(gcut_synth_image(w, h, 1, seed, GCUT_SYNTH_EASY, &rgb, NULL));
    if (rgb.pixels == NULL)
        return;
    uint8_t *p8 = rgb.pixels, *seeds = malloc((size_t)n);
    p8[0] = 0, p8[1] = 255; /* so that the 16-bit range is the full one */
    CHECK_OK(gcut_synth_seeds(w, h, 1, seeds));
    uint16_t *p16 = malloc((size_t)n * 3 * 2);
    uint8_t *p4 = malloc((size_t)n * 4), *gray = malloc((size_t)n), *ga = malloc((size_t)n * 2);
    for (int64_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) {
            p16[i * 3 + c] = (uint16_t)(p8[i * 3 + c] * 257);
            p4[i * 4 + c] = p8[i * 3 + c];
        }
        p4[i * 4 + 3] = 255;
        gray[i] = p8[i * 3 + 1];
        ga[i * 2] = gray[i], ga[i * 2 + 1] = 200;
    }
    gray[0] = 0, gray[1] = 255;
    ga[0] = 0, ga[2] = 255;
    gcut_image i16 = {w, h, 1, 3, 16, p16}, i4 = {w, h, 1, 4, 8, p4};
    gcut_image ig = {w, h, 1, 1, 8, gray}, iga = {w, h, 1, 2, 8, ga};
    uint16_t *g16 = malloc((size_t)n * 2);
    for (int64_t i = 0; i < n; i++)
        g16[i] = (uint16_t)(gray[i] * 257);
    gcut_image ig16 = {w, h, 1, 1, 16, g16};
    gcut_grid *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    CHECK_OK(gcut_seg_build_grid(&rgb, seeds, NULL, &a, NULL));
    CHECK_OK(gcut_seg_build_grid(&rgb, seeds, NULL, &b, NULL));
    PASS_IF(grids_equal(a, b));
    gcut_grid_free(b), b = NULL;
    CHECK_OK(gcut_seg_build_grid(&i16, seeds, NULL, &b, NULL));
    PASS_IF(grids_equal(a, b));
    CHECK_OK(gcut_seg_build_grid(&i4, seeds, NULL, &c, NULL));
    PASS_IF(grids_equal(a, c));
    gcut_grid_free(a), gcut_grid_free(b), gcut_grid_free(c);
    a = b = c = NULL;
    CHECK_OK(gcut_seg_build_grid(&ig, seeds, NULL, &a, NULL));
    CHECK_OK(gcut_seg_build_grid(&iga, seeds, NULL, &b, NULL));
    CHECK_OK(gcut_seg_build_grid(&ig16, seeds, NULL, &d, NULL));
    PASS_IF(grids_equal(a, b) && grids_equal(a, d));
    /* A different seed of the GMM must still give a valid (if different) energy. */
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.seed = 12345;
    CHECK_OK(gcut_seg_build_grid(&rgb, seeds, &p, &c, NULL));
    gcut_grid_free(a), gcut_grid_free(b), gcut_grid_free(c), gcut_grid_free(d);
    gcut_image_free(&rgb);
    free(seeds), free(p16), free(p4), free(gray), free(ga), free(g16);
}

/* The energy built in parts (the grid's rows on several threads, the colour costs in colour
 * ranges: GCUT_SEG_FILL_THREADS, GCUT_SEG_COST_THREADS) equals the one-thread build bit for
 * bit: every part writes its own entries. A photo-sized 2D picture (8 fill parts of 2^17
 * pixels), a volume split across its slices (26-connected, so parts meet on diagonal arcs), and
 * odd part counts so that no split falls on a boundary by luck. */
static bool build_with(const gcut_image *img, const uint8_t *seeds, const gcut_seg_params *p,
                       const char *fill, const char *cost, gcut_grid **out) {
    setenv("GCUT_SEG_FILL_THREADS", fill, 1);
    setenv("GCUT_SEG_COST_THREADS", cost, 1);
    const gcut_status st = gcut_seg_build_grid(img, seeds, p, out, NULL);
    unsetenv("GCUT_SEG_FILL_THREADS");
    unsetenv("GCUT_SEG_COST_THREADS");
    CHECK_OK(st);
    return st == GCUT_OK;
}

static void test_parts(uint64_t seed) {
    static const int64_t sizes[2][3] = {{1031, 1021, 1}, {97, 89, 131}};
    for (int k = 0; k < 2; k++) {
        const int64_t w = sizes[k][0], h = sizes[k][1], d = sizes[k][2], n = w * h * d;
        gcut_image img = {0};
        uint8_t *seeds = malloc((size_t)n);
        CHECK_OK(gcut_synth_image(w, h, d, seed + (uint64_t)k, GCUT_SYNTH_HARD, &img, NULL));
        CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.connectivity = d > 1 ? 26 : 8;
        gcut_grid *one = NULL, *split = NULL, *odd = NULL;
        if (img.pixels != NULL && build_with(&img, seeds, &p, "1", "1", &one) &&
            build_with(&img, seeds, &p, "7", "5", &split) &&
            build_with(&img, seeds, &p, "3", "13", &odd)) {
            PASS_IF(grids_equal(one, split));
            PASS_IF(grids_equal(one, odd));
        }
        /* `gcut segment`'s CPU route (parallel-bk on 4 threads) against bk on the photo: the
         * same flow, bk's mask, and the certificate of its cut on the built grid. */
        if (d == 1 && one != NULL) {
            uint8_t *m_bk = malloc((size_t)n), *m_pbk = malloc((size_t)n);
            uint8_t *labels = malloc((size_t)n);
            gcut_options o;
            gcut_options_init(&o);
            o.solver = "bk";
            gcut_seg_report r_bk, r_pbk;
            CHECK_OK(gcut_segment(&img, seeds, &p, &o, m_bk, &r_bk));
            o.solver = "parallel-bk";
            o.threads = 4;
            CHECK_OK(gcut_segment(&img, seeds, &p, &o, m_pbk, &r_pbk));
            PASS_IF(r_bk.stats.flow == r_pbk.stats.flow && r_bk.stats.flow > 0);
            PASS_IF(memcmp(m_bk, m_pbk, (size_t)n) == 0);
            for (int64_t i = 0; i < n; i++)
                labels[i] = m_pbk[i] ? GCUT_SOURCE : GCUT_SINK;
            int64_t cut = -1;
            PASS_IF(gcut_grid_verify(one, labels, r_pbk.stats.flow, &cut) == GCUT_OK &&
                    cut == r_pbk.stats.flow);
            /* The route's pre-pass (16,8 by cpu-pr unless GCUT_PBK_PREPASS says otherwise):
             * other rounds, grid-bk on the tiles, 3 and 16 threads, and none at all; then the
             * default rounds as before the tenth pass (a new residual grid instead of the
             * energy's own, the tiles copied element by element, cpu-pr's relabel masks node
             * by node, 4 blocks per thread after the pre-pass instead of ~8,100 nodes each). */
            static const char *rounds[4][2] = {
                {"pbk,8", "bk"}, {"none", "pr"}, {NULL, NULL}, {NULL, NULL}};
            static const int threads[4] = {3, 2, 16, 2};
            for (int v = 0; v < 4; v++) {
                if (rounds[v][0] != NULL) {
                    setenv("GCUT_PBK_PREPASS", rounds[v][0], 1);
                    setenv("GCUT_PBK_PREPASS_SOLVER", rounds[v][1], 1);
                }
                if (v == 3) {
                    setenv("GCUT_PBK_PREPASS_IN_PLACE", "0", 1);
                    setenv("GCUT_PBK_PREPASS_COPY_LEGACY", "1", 1);
                    setenv("GCUT_CPUPR_RELABEL_LEGACY", "1", 1);
                    setenv("GCUT_PBK_PREPASS_BLOCK_PIXELS", "0", 1);
                }
                o.threads = threads[v];
                memset(m_pbk, 0xaa, (size_t)n);
                r_pbk.stats.flow = -1;
                CHECK_OK(gcut_segment(&img, seeds, &p, &o, m_pbk, &r_pbk));
                PASS_IF(r_bk.stats.flow == r_pbk.stats.flow);
                PASS_IF(memcmp(m_bk, m_pbk, (size_t)n) == 0);
                unsetenv("GCUT_PBK_PREPASS");
                unsetenv("GCUT_PBK_PREPASS_SOLVER");
                unsetenv("GCUT_PBK_PREPASS_IN_PLACE");
                unsetenv("GCUT_PBK_PREPASS_COPY_LEGACY");
                unsetenv("GCUT_CPUPR_RELABEL_LEGACY");
                unsetenv("GCUT_PBK_PREPASS_BLOCK_PIXELS");
            }
            free(m_bk), free(m_pbk), free(labels);
        }
        gcut_grid_free(one), gcut_grid_free(split), gcut_grid_free(odd);
        gcut_image_free(&img);
        free(seeds);
    }
}

/* The tables' fill (seg_tables.c) against the legacy fill (GCUT_SEG_TABLES_LEGACY=1: two
 * fork-joins, an exp per entry, floor) and against the definition evaluated here, entry by entry,
 * over random models: costs with infinities and huge values, lambdas from 0 to 1000, sigmas from
 * 1e-3 to 1e4 (rows that vanish after a few entries and rows that never do), scales given and
 * picked, every connectivity, gray and colour, 1 to 17 parts; a given scale too large fails the
 * same way in both. */
static void test_tables_legacy(uint64_t seed) {
    test_rng rng;
    test_rng_init(&rng, seed ^ 0x7ab1e5u);
    static const int conns[4] = {4, 8, 6, 26};
    int same = 0, models = 0;
    for (int m = 0; m < 48; m++) {
        const int ch = m % 2 ? 3 : 1, conn = conns[(m / 2) % 4];
        const int parts = 1 + (int)test_rng_range(&rng, 0, 16);
        gcut__seg_tables *a = NULL, *b = NULL;
        CHECK_OK(gcut__seg_tables_alloc(ch, conn, &a));
        CHECK_OK(gcut__seg_tables_alloc(ch, conn, &b));
        if (a == NULL || b == NULL) {
            gcut__seg_tables_free(a), gcut__seg_tables_free(b);
            continue;
        }
        const int64_t nc = a->num_colors;
        double *cost = malloc(sizeof(double) * 2 * (size_t)nc);
        for (int64_t c = 0; c < 2 * nc; c++) {
            const int64_t r = test_rng_range(&rng, 0, 99);
            cost[c] = r < 5    ? INFINITY
                      : r < 8  ? 1e300
                      : r < 60 ? (double)test_rng_range(&rng, 0, 1000000) / 1e5
                               : (double)test_rng_range(&rng, 0, 1000) / 7.0;
        }
        static const double sigmas[6] = {1e-3, 0.7, 5.0, 30.0, 89.26, 1e4};
        const double sigma = sigmas[m % 6] * (1.0 + (double)test_rng_range(&rng, 0, 100) / 300.0);
        const double lambda = m % 7 == 3 ? 0.0 : (double)test_rng_range(&rng, 1, 100000) / 100.0;
        double scale = m % 3 == 0 ? (double)test_rng_range(&rng, 1, 4000) : 0.0;
        if (m % 12 == 6)
            scale = 1e9; /* too large: GCUT_ERR_OVERFLOW both ways */
        setenv("GCUT_SEG_TABLES_LEGACY", "1", 1);
        const gcut_status sa =
            gcut__seg_tables_fill_parts(a, cost, cost + nc, lambda, sigma, scale, conn, parts);
        unsetenv("GCUT_SEG_TABLES_LEGACY");
        const gcut_status sb = gcut__seg_tables_fill_parts(b, cost, cost + nc, lambda, sigma, scale,
                                                           conn, 1 + (parts * 5) % 17);
        CHECK(sa == sb);
        if (m % 12 == 6)
            PASS_IF(sa == GCUT_ERR_OVERFLOW && sb == GCUT_ERR_OVERFLOW);
        if (sa == GCUT_OK && sb == GCUT_OK) {
            size_t count = 0, count_b = 0;
            const int32_t *ta = gcut__seg_tables_block(a, &count);
            const int32_t *tb = gcut__seg_tables_block(b, &count_b);
            bool eq = count == count_b && memcmp(ta, tb, count * sizeof(int32_t)) == 0 &&
                      a->hard == b->hard && a->scale == b->scale && a->unary_max == b->unary_max;

            /* the definition, here: the fill's documented rule */
            const double sc = b->scale, inv = 1.0 / (2.0 * sigma * sigma);
            for (int64_t c = 0; c < nc && eq; c++) {
                double f = cost[c], g = cost[nc + c];
                if (!isfinite(f) && !isfinite(g))
                    f = g = 0.0;
                const double lo = f < g ? f : g;
                double rf = isfinite(f) ? f - lo : 20.0, rg = isfinite(g) ? g - lo : 20.0;
                rf = rf > 20.0 ? 20.0 : rf;
                rg = rg > 20.0 ? 20.0 : rg;
                eq = b->unary_source[c] == (int32_t)floor(sc * rg + 0.5) &&
                     b->unary_sink[c] == (int32_t)floor(sc * rf + 0.5);
            }
            for (int k = 0; k < b->num_classes && eq; k++) {
                const double w = lambda / sqrt((double)(k + 1));
                for (int64_t d2 = 0; d2 <= b->max_sqdiff && eq; d2++)
                    eq = b->pairwise[k][d2] ==
                         (int32_t)floor(sc * (d2 == 0 ? w : w * exp(-(double)d2 * inv)) + 0.5);
            }
            /* and one copy holds them all: the block's layout */
            eq = eq && tb == b->unary_source && b->unary_sink == tb + nc &&
                 b->pairwise[b->num_classes - 1] ==
                     tb + 2 * nc + (size_t)(b->num_classes - 1) * (size_t)(b->max_sqdiff + 1) &&
                 count == 2 * (size_t)nc + (size_t)b->num_classes * (size_t)(b->max_sqdiff + 1);
            CHECK(eq);
            same += eq;
            models++;
        }
        free(cost);
        gcut__seg_tables_free(a), gcut__seg_tables_free(b);
    }
    PASS_IF(models >= 40 && same == models);
    printf("test_tables_legacy: %d of %d models' tables identical to the legacy fill and the "
           "definition\n",
           same, models);
}

/* Learnt models on the synthetic benchmark: the seeds are only the two 32x32 patches, so the
 * models see a sample of each mixture. At the easy level the learnt GMM is close to the truth
 * and the cut mislabels well under 1% (measured about 0.01-0.1%); the bound of 2% leaves room
 * for the histogram model, and a wrong sign or swapped terminals give 20-80%. Every solver
 * must reach the same flow, keep every seed, and give a mask whose cut value is that flow. */
static void test_learnt(uint64_t seed, int64_t w, int64_t h, int64_t d, gcut_model_kind model) {
    const int64_t n = w * h * d;
    gcut_image img = {0};
    uint8_t *truth = malloc((size_t)n), *seeds = malloc((size_t)n), *mask = malloc((size_t)n);
    uint8_t *labels = malloc((size_t)n);
    CHECK_OK(gcut_synth_image(w, h, d, seed, GCUT_SYNTH_EASY, &img, truth));
    CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.model = model;
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_seg_build_grid(&img, seeds, &p, &grid, NULL));
    int64_t flow0 = -1;
    for (int s = 0; s < gcut_solver_count() && grid != NULL; s++) {
        gcut_solver_info info;
        if (gcut_solver_get(s, &info) != GCUT_OK || !info.available)
            continue;
        gcut_options opt;
        gcut_options_init(&opt);
        opt.solver = info.name;
        gcut_seg_report r;
        gcut_status st = gcut_segment(&img, seeds, &p, &opt, mask, &r);
        CHECK_OK(st);
        if (st != GCUT_OK)
            continue;
        int64_t errors = 0, broken = 0, fg = 0, cut = -1;
        for (int64_t i = 0; i < n; i++) {
            errors += mask[i] != truth[i];
            broken += (seeds[i] == GCUT_SEED_FOREGROUND && mask[i] != 1) ||
                      (seeds[i] == GCUT_SEED_BACKGROUND && mask[i] != 0);
            fg += mask[i];
            labels[i] = mask[i] ? GCUT_SOURCE : GCUT_SINK;
        }
        double rate = 100.0 * (double)errors / (double)n;
        printf("  %s %lldx%lldx%lld %s: %.3f%% mislabelled, flow %lld, scale %.2f\n", info.name,
               (long long)w, (long long)h, (long long)d, model == GCUT_MODEL_GMM ? "gmm" : "hist",
               rate, (long long)r.stats.flow, r.scale);
        PASS_IF(rate < 2.0);
        PASS_IF(broken == 0 && fg == r.foreground_pixels);
        PASS_IF(strcmp(r.stats.solver, info.name) == 0);
        PASS_IF(gcut_grid_verify(grid, labels, r.stats.flow, &cut) == GCUT_OK &&
                cut == r.stats.flow);
        if (flow0 < 0)
            flow0 = r.stats.flow;
        PASS_IF(r.stats.flow == flow0);
        PASS_IF(r.model_ms >= 0 && r.build_ms >= 0 && r.solve_ms >= 0);
    }
    gcut_grid_free(grid);
    gcut_image_free(&img);
    free(truth), free(seeds), free(mask), free(labels);
}

static void test_overlay(uint64_t seed) {
    const int64_t w = 40, h = 30, n = w * h;
    gcut_image img = {0}, out = {0};
    uint8_t *truth = malloc((size_t)n);
    CHECK_OK(gcut_synth_image(w, h, 1, seed, GCUT_SYNTH_EASY, &img, truth));
    if (img.pixels == NULL)
        return;
    CHECK_OK(gcut_overlay(&img, truth, &out));
    if (out.pixels != NULL) {
        PASS_IF(out.width == w && out.height == h && out.channels == 3 && out.bit_depth == 8);
        const uint8_t *in = img.pixels, *o = out.pixels;
        int64_t line = 0, bg_same = 0, bg = 0, fg_changed = 0, fg = 0;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                int64_t i = y * w + x;
                bool edge = (x > 0 && truth[i - 1] != truth[i]) ||
                            (x + 1 < w && truth[i + 1] != truth[i]) ||
                            (y > 0 && truth[i - w] != truth[i]) ||
                            (y + 1 < h && truth[i + w] != truth[i]);
                if (edge) {
                    line += o[i * 3] == 255 && o[i * 3 + 1] == 230 && o[i * 3 + 2] == 0;
                } else if (truth[i]) {
                    fg++;
                    fg_changed += memcmp(o + i * 3, in + i * 3, 3) != 0;
                } else {
                    bg++;
                    bg_same += memcmp(o + i * 3, in + i * 3, 3) == 0;
                }
            }
        PASS_IF(line > 0 && bg_same == bg && fg_changed > fg / 2);
    }
    gcut_image_free(&out);
    gcut_image_free(&img);
    gcut_image vol = {4, 4, 4, 1, 8, truth};
    PASS_IF(gcut_overlay(&vol, truth, &out) != GCUT_OK);
    PASS_IF(gcut_overlay(NULL, truth, &out) == GCUT_ERR_INVALID_ARG);
    free(truth);
}

static void test_errors(void) {
    uint8_t px[12] = {0}, seeds[4] = {1, 0, 0, 1}, mask[4];
    gcut_image img = {2, 2, 1, 3, 8, px};
    gcut_grid *g = NULL;
    PASS_IF(gcut_seg_build_grid(&img, seeds, NULL, &g, NULL) == GCUT_ERR_INVALID_ARG && g == NULL);
    PASS_IF(strstr(gcut_last_error(), "no background seeds") != NULL);
    seeds[0] = seeds[3] = 2;
    PASS_IF(gcut_segment(&img, seeds, NULL, NULL, mask, NULL) == GCUT_ERR_INVALID_ARG);
    PASS_IF(strstr(gcut_last_error(), "no foreground seeds") != NULL);
    seeds[0] = 1, seeds[2] = 7;
    PASS_IF(gcut_seg_build_grid(&img, seeds, NULL, &g, NULL) == GCUT_ERR_INVALID_ARG);
    PASS_IF(strstr(gcut_last_error(), "(x 0, y 1)") != NULL);
    seeds[2] = 0;
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.connectivity = 6;
    PASS_IF(gcut_seg_build_grid(&img, seeds, &p, &g, NULL) == GCUT_ERR_INVALID_ARG);
    gcut_seg_params_init(&p);
    p.lambda = -1;
    PASS_IF(gcut_seg_build_grid(&img, seeds, &p, &g, NULL) == GCUT_ERR_INVALID_ARG);
    gcut_seg_params_init(&p);
    p.gmm_components = 0;
    PASS_IF(gcut_seg_build_grid(&img, seeds, &p, &g, NULL) == GCUT_ERR_INVALID_ARG);
    gcut_seg_params_init(&p);
    p.model = GCUT_MODEL_HISTOGRAM;
    p.histogram_bins = 100; /* colour histograms have at most 64 bins per channel */
    PASS_IF(gcut_seg_build_grid(&img, seeds, &p, &g, NULL) == GCUT_ERR_INVALID_ARG);
    img.channels = 5;
    PASS_IF(gcut_seg_build_grid(&img, seeds, NULL, &g, NULL) == GCUT_ERR_INVALID_ARG);
    img.channels = 3, img.bit_depth = 12;
    PASS_IF(gcut_seg_build_grid(&img, seeds, NULL, &g, NULL) == GCUT_ERR_INVALID_ARG);
    img.bit_depth = 8, img.width = 0;
    PASS_IF(gcut_seg_build_grid(&img, seeds, NULL, &g, NULL) == GCUT_ERR_INVALID_ARG);
    img.width = 2;
    PASS_IF(gcut_seg_build_grid(&img, NULL, NULL, &g, NULL) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_segment(&img, seeds, NULL, NULL, NULL, NULL) == GCUT_ERR_INVALID_ARG);
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "no-such-solver";
    PASS_IF(gcut_segment(&img, seeds, NULL, &opt, mask, NULL) == GCUT_ERR_NOT_FOUND);
    /* A flat image: sigma falls back to 1 instead of dividing by zero. */
    gcut_seg_report r;
    CHECK_OK(gcut_segment(&img, seeds, NULL, NULL, mask, &r));
    PASS_IF(r.sigma == 1.0 && mask[0] == 1 && mask[3] == 0);
}

/* The host path's grid is not zeroed before the fill (gcut__grid_create_unset in
 * src/seg/segment.c): gcut__seg_fill_grid must write every entry of every array. Random images
 * (1-wide, odd sizes, 2D and 3D, every connectivity, 1 and 3 channels) filled into a grid whose
 * arrays hold garbage must equal gcut_seg_build_grid's (zeroed) grid entry for entry. */
static void test_unset_fill(uint64_t seed) {
    test_rng rng;
    test_rng_init(&rng, seed ^ 0x5eedf111u);
    int bad = 0;
    for (int round = 0; round < 16; round++) {
        const bool three_d = round % 4 == 3;
        int64_t w = test_rng_range(&rng, 1, 70), h = test_rng_range(&rng, 1, 50);
        const int64_t d = three_d ? test_rng_range(&rng, 2, 6) : 1;
        if (round % 5 == 1)
            w = 1;
        if (round % 7 == 2)
            h = 1;
        if (w * h * d < 2) /* room for a seed of each kind */
            w = 2;
        const int64_t nn = w * h * d;
        const int ch = round % 2 ? 3 : 1;
        uint8_t *px = malloc((size_t)(nn * ch)), *seeds = malloc((size_t)nn);
        if (px == NULL || seeds == NULL) {
            free(px), free(seeds);
            CHECK(false);
            return;
        }
        for (int64_t i = 0; i < nn * ch; i++)
            px[i] = (uint8_t)test_rng_range(&rng, 0, 255);
        for (int64_t i = 0; i < nn; i++)
            seeds[i] = (uint8_t)test_rng_range(&rng, 0, 2);
        seeds[0] = GCUT_SEED_FOREGROUND, seeds[nn - 1] = GCUT_SEED_BACKGROUND;
        gcut_image img = {w, h, d, ch, 8, px};
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.connectivity = three_d ? (round % 8 == 3 ? 6 : 26) : (round % 3 ? 8 : 4);
        gcut_grid *ref = NULL, *got = NULL;
        gcut__seg_tables *tables = NULL;
        const uint8_t *pixels = NULL;
        uint8_t *owned = NULL;
        const int64_t shape[3] = {d, h, w};
        bool ok = gcut_seg_build_grid(&img, seeds, &p, &ref, NULL) == GCUT_OK &&
                  gcut__seg_prepare(&img, seeds, &p, &tables, &pixels, &owned, NULL) == GCUT_OK &&
                  gcut__grid_create_unset(three_d ? 3 : 2, three_d ? shape : shape + 1,
                                          p.connectivity, &got) == GCUT_OK;
        if (ok) {
            for (int a = 0; a < 2; a++) /* garbage where the fill must write */
                memset(gcut_grid_terminal_data(got, a), 0x5a, (size_t)nn * sizeof(int32_t));
            for (int dir = 0; dir < gcut_grid_num_dirs(got); dir++)
                memset(gcut_grid_dir_data(got, dir), 0x5a, (size_t)nn * sizeof(int32_t));
            gcut__seg_fill_grid(pixels, seeds, tables, got);
            for (int a = 0; a < 2 && ok; a++)
                ok = memcmp(gcut_grid_terminal_data(got, a), gcut_grid_terminal_data(ref, a),
                            (size_t)nn * sizeof(int32_t)) == 0;
            for (int dir = 0; dir < gcut_grid_num_dirs(got) && ok; dir++)
                ok = memcmp(gcut_grid_dir_data(got, dir), gcut_grid_dir_data(ref, dir),
                            (size_t)nn * sizeof(int32_t)) == 0;
        }
        if (!ok)
            fprintf(stderr,
                    "unset fill: %lldx%lldx%lld, %d channels, %d-connected differs (seed %llu)\n",
                    (long long)w, (long long)h, (long long)d, ch, p.connectivity,
                    (unsigned long long)seed);
        bad += !ok;
        gcut__seg_tables_free(tables);
        gcut__free(owned);
        gcut_grid_free(ref);
        gcut_grid_free(got);
        free(px), free(seeds);
    }
    test_failures += bad;
    PASS_IF(bad == 0);
}

int main(void) {
    uint64_t seed = test_seed();
    test_defaults();
    test_hand_3x1();
    test_hand_2x2();
    test_seed_masks();
    test_formats(seed);
    test_parts(seed);
    test_tables_legacy(seed);
    test_learnt(seed, 160, 120, 1, GCUT_MODEL_GMM);
    test_learnt(seed + 1, 200, 100, 1, GCUT_MODEL_HISTOGRAM);
    test_learnt(seed + 2, 40, 36, 32, GCUT_MODEL_AUTO);
    test_overlay(seed);
    test_unset_fill(seed);
    test_errors();
    return test_finish("test_seg", passed);
}
