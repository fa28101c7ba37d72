/* test_synth.c - the synthetic benchmark (Hussein et al. 2007, VII): determinism, seeds that
 * agree with the truth, the lookup tables against their formulas, the grid kernel against a
 * naive recomputation, segmentation error against ground truth, and every solver on it. */
#include "internal.h"
#include "../src/seg/seg_internal.h"
#include "util_common.h"

#include <math.h>
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

static void test_determinism(uint64_t seed) {
    const int64_t w = 97, h = 61, n = w * h;
    uint8_t *a = malloc((size_t)n * 3), *b = malloc((size_t)n * 3);
    uint8_t *ta = malloc((size_t)n), *tb = malloc((size_t)n);
    CHECK_OK(gcut__synth_pixels(w, h, 1, seed, GCUT_SYNTH_EASY, a, ta));
    CHECK_OK(gcut__synth_pixels(w, h, 1, seed, GCUT_SYNTH_EASY, b, tb));
    PASS_IF(memcmp(a, b, (size_t)n * 3) == 0 && memcmp(ta, tb, (size_t)n) == 0);
    CHECK_OK(gcut__synth_pixels(w, h, 1, seed + 1, GCUT_SYNTH_EASY, b, tb));
    PASS_IF(memcmp(a, b, (size_t)n * 3) != 0);
    /* Same shapes, other colours at the hard level. */
    CHECK_OK(gcut__synth_pixels(w, h, 1, seed, GCUT_SYNTH_HARD, b, tb));
    PASS_IF(memcmp(ta, tb, (size_t)n) == 0 && memcmp(a, b, (size_t)n * 3) != 0);
    /* Foreground and background both present. */
    int64_t fg = 0;
    for (int64_t i = 0; i < n; i++)
        fg += ta[i];
    PASS_IF(fg > n / 50 && fg < n - n / 50);
    free(a), free(b), free(ta), free(tb);

    gcut_image img = {0};
    uint8_t *truth = malloc(20 * 30 * 40);
    CHECK_OK(gcut_synth_image(40, 30, 20, seed, GCUT_SYNTH_HARD, &img, truth));
    PASS_IF(img.width == 40 && img.height == 30 && img.depth == 20 && img.channels == 1 &&
            img.bit_depth == 8 && img.pixels != NULL);
    uint8_t *again = malloc(20 * 30 * 40), *truth2 = malloc(20 * 30 * 40);
    CHECK_OK(gcut__synth_pixels(40, 30, 20, seed, GCUT_SYNTH_HARD, again, truth2));
    PASS_IF(img.pixels && memcmp(img.pixels, again, 20 * 30 * 40) == 0 &&
            memcmp(truth, truth2, 20 * 30 * 40) == 0);
    gcut_image_free(&img);
    CHECK_OK(gcut_synth_image(64, 48, 1, seed, GCUT_SYNTH_EASY, &img, NULL));
    PASS_IF(img.channels == 3 && img.depth == 1);
    gcut_image_free(&img);
    free(truth), free(again), free(truth2);
}

/* Seeds: the patches where Hussein puts them, of the documented sizes, on the right side of
 * the truth at every size. */
static void test_seeds(uint64_t seed) {
    static const int64_t sizes[][3] = {{320, 240, 1}, {40, 20, 1},  {7, 5, 1},
                                       {1, 1, 1},     {48, 40, 36}, {9, 9, 9}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int64_t w = sizes[s][0], h = sizes[s][1], d = sizes[s][2], n = w * h * d;
        uint8_t *seeds = malloc((size_t)n), *truth = malloc((size_t)n);
        uint8_t *px = malloc((size_t)n * 3);
        CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
        CHECK_OK(gcut__synth_pixels(w, h, d, seed, GCUT_SYNTH_EASY, px, truth));
        int64_t pw = w / 4 < 1 ? 1 : w / 4 > 32 ? 32 : w / 4;
        int64_t ph = h / 4 < 1 ? 1 : h / 4 > 32 ? 32 : h / 4;
        int64_t pd = d / 4 < 1 ? 1 : d / 4 > 32 ? 32 : d / 4;
        int64_t fg = 0, bg = 0, disagree = 0;
        for (int64_t i = 0; i < n; i++) {
            fg += seeds[i] == GCUT_SEED_FOREGROUND;
            bg += seeds[i] == GCUT_SEED_BACKGROUND;
            disagree += (seeds[i] == GCUT_SEED_FOREGROUND && !truth[i]) ||
                        (seeds[i] == GCUT_SEED_BACKGROUND && truth[i]);
        }
        if (n > 1) {
            PASS_IF(fg == pw * ph * pd && bg == pw * ph * pd);
            PASS_IF(seeds[0] == GCUT_SEED_BACKGROUND);
            int64_t centre = ((d - pd) / 2 * h + (h - ph) / 2) * w + (w - pw) / 2;
            PASS_IF(seeds[centre] == GCUT_SEED_FOREGROUND);
        }
        PASS_IF(disagree == 0);
        free(seeds), free(truth), free(px);
    }
    uint8_t one;
    PASS_IF(gcut_synth_seeds(0, 5, 1, &one) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_synth_seeds(5, 5, 1, NULL) == GCUT_ERR_INVALID_ARG);
}

static int32_t round_cap(double x) {
    return (int32_t)floor(x + 0.5);
}

/* The tables against their documented formulas and bounds. */
static void test_tables(void) {
    static const int conns[] = {4, 8, 6, 26};
    for (int level = 0; level < 2; level++)
        for (int c = 0; c < 4; c++) {
            const gcut__seg_tables *t = NULL, *again = NULL;
            CHECK_OK(gcut__synth_tables((gcut_synth_level)level, conns[c], &t));
            CHECK_OK(gcut__synth_tables((gcut_synth_level)level, conns[c], &again));
            if (t == NULL)
                continue;
            PASS_IF(t == again); /* cached */
            PASS_IF(t->channels == (conns[c] == 6 || conns[c] == 26 ? 1 : 3));
            int32_t largest = 0;
            for (int64_t q = 0; q < t->num_colors; q++) {
                /* One of the two is zero after the per-colour constant is taken off. */
                if (t->unary_source[q] != 0 && t->unary_sink[q] != 0)
                    largest = INT32_MAX;
                largest = t->unary_source[q] > largest ? t->unary_source[q] : largest;
                largest = t->unary_sink[q] > largest ? t->unary_sink[q] : largest;
            }
            int monotone = 1;
            for (int k = 0; k < t->num_classes; k++) {
                double w = t->lambda / sqrt((double)(k + 1));
                for (int32_t d2 = 0; d2 <= t->max_sqdiff; d2 += 997)
                    if (t->pairwise[k][d2] !=
                        round_cap(t->scale * w * exp(-d2 / (2 * t->sigma * t->sigma))))
                        monotone = 0;
                for (int32_t d2 = 1; d2 <= t->max_sqdiff; d2++)
                    if (t->pairwise[k][d2] > t->pairwise[k][d2 - 1])
                        monotone = 0;
                largest = t->pairwise[k][0] > largest ? t->pairwise[k][0] : largest;
            }
            PASS_IF(monotone);
            PASS_IF(largest <= GCUT__SEG_CAP_BOUND);
            PASS_IF(t->hard == 1 + conns[c] * t->pairwise[0][0]);
            /* A node's capacities sum far below INT32_MAX. */
            PASS_IF((int64_t)t->hard + (int64_t)conns[c] * t->pairwise[0][0] < INT32_MAX / 8);
        }
    const gcut__seg_tables *t;
    PASS_IF(gcut__synth_tables(GCUT_SYNTH_EASY, 5, &t) == GCUT_ERR_INVALID_ARG);
}

/* gcut__seg_estimate_sigma against a naive pixel-by-pixel recomputation, on images small enough
 * for one part and large enough (2^19+ pixels) to be summed on several threads, 2D and 3D, one
 * and three channels, smooth (small differences) and random (large ones). */
static void test_sigma(uint64_t seed) {
    static const int64_t sizes[][4] = {
        {1, 1, 1, 3},      {7, 1, 1, 1},      {1, 9, 1, 3},    {33, 17, 1, 3},
        {1031, 611, 1, 3}, {2049, 517, 1, 1}, {97, 89, 83, 1}, {5, 4, 3, 3},
    };
    test_rng rng;
    test_rng_init(&rng, seed ^ 0x51a);
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++)
        for (int smooth = 0; smooth < 2; smooth++) {
            const int64_t w = sizes[c][0], h = sizes[c][1], d = sizes[c][2];
            const int ch = (int)sizes[c][3];
            const int64_t n = w * h * d;
            uint8_t *px = malloc((size_t)(n * ch));
            if (px == NULL) {
                CHECK(px != NULL);
                return;
            }
            for (int64_t i = 0; i < n * ch; i++)
                px[i] = smooth ? (uint8_t)(((i / ch) % w + (i / ch) / w + i % ch) & 255)
                               : (uint8_t)test_rng_next(&rng);
            double sum = 0;
            int64_t pairs = 0;
            const int64_t step[3] = {1, w, w * h};
            for (int64_t i = 0; i < n; i++) {
                const int64_t at[3] = {i % w, (i / w) % h, i / (w * h)}, dim[3] = {w, h, d};
                for (int a = 0; a < 3; a++) {
                    if (at[a] + 1 >= dim[a])
                        continue;
                    for (int k = 0; k < ch; k++) {
                        const double diff =
                            (double)px[i * ch + k] - (double)px[(i + step[a]) * ch + k];
                        sum += diff * diff;
                    }
                    pairs++;
                }
            }
            double want = pairs > 0 ? sqrt(sum / (double)pairs) : 0.0;
            want = want < 1.0 ? 1.0 : want;
            PASS_IF(gcut__seg_estimate_sigma(px, ch, w, h, d) == want);
            free(px);
        }
}

/* The kernel against a naive recomputation from the pixels: every terminal and every arc of a
 * small grid, borders included. */
static void test_kernel(uint64_t seed) {
    static const int64_t sizes[][4] = {
        {37, 23, 1, 4}, {37, 23, 1, 8}, {9, 7, 6, 6}, {9, 7, 6, 26}, {1, 5, 1, 8}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int64_t w = sizes[s][0], h = sizes[s][1], d = sizes[s][2], n = w * h * d;
        const int conn = (int)sizes[s][3], ch = d > 1 ? 1 : 3;
        gcut_grid *grid = NULL;
        CHECK_OK(gcut_synth_grid(w, h, d, seed, GCUT_SYNTH_HARD, conn, &grid));
        const gcut__seg_tables *t = NULL;
        CHECK_OK(gcut__synth_tables(GCUT_SYNTH_HARD, conn, &t));
        if (grid == NULL || t == NULL)
            continue;
        uint8_t *px = malloc((size_t)n * 3), *seeds = malloc((size_t)n);
        CHECK_OK(gcut__synth_pixels(w, h, d, seed, GCUT_SYNTH_HARD, px, NULL));
        CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
        int64_t bad = 0;
        const int32_t *src = gcut_grid_terminal_cdata(grid, GCUT_SOURCE);
        const int32_t *snk = gcut_grid_terminal_cdata(grid, GCUT_SINK);
        for (int64_t z = 0; z < d; z++)
            for (int64_t y = 0; y < h; y++)
                for (int64_t x = 0; x < w; x++) {
                    int64_t i = (z * h + y) * w + x;
                    const uint8_t *p = px + i * ch;
                    int64_t q = ch == 1 ? p[0] : (p[0] / 4) * 4096 + (p[1] / 4) * 64 + p[2] / 4;
                    int32_t es = t->unary_source[q], ek = t->unary_sink[q];
                    if (seeds[i] == GCUT_SEED_FOREGROUND)
                        es = t->hard, ek = 0;
                    if (seeds[i] == GCUT_SEED_BACKGROUND)
                        es = 0, ek = t->hard;
                    bad += src[i] != es || snk[i] != ek;
                    for (int dir = 0; dir < gcut_grid_num_dirs(grid); dir++) {
                        int off[3] = {0, 0, 0};
                        CHECK_OK(gcut_grid_offset(grid, dir, d > 1 ? off : off + 1));
                        int64_t zz = z + off[0], yy = y + off[1], xx = x + off[2];
                        int32_t expect = 0;
                        if (zz >= 0 && zz < d && yy >= 0 && yy < h && xx >= 0 && xx < w) {
                            const uint8_t *r = px + ((zz * h + yy) * w + xx) * ch;
                            int32_t d2 = 0;
                            for (int c = 0; c < ch; c++)
                                d2 += (p[c] - r[c]) * (p[c] - r[c]);
                            int cls = (off[0] != 0) + (off[1] != 0) + (off[2] != 0) - 1;
                            expect = t->pairwise[cls][d2];
                        }
                        bad += gcut_grid_dir_cdata(grid, dir)[i] != expect;
                    }
                }
        PASS_IF(bad == 0);
        free(px), free(seeds);
        gcut_grid_free(grid);
    }
    gcut_grid *g = NULL;
    PASS_IF(gcut_synth_grid(10, 10, 1, seed, GCUT_SYNTH_EASY, 6, &g) == GCUT_ERR_INVALID_ARG &&
            g == NULL);
    PASS_IF(gcut_synth_grid(10, 10, 3, seed, GCUT_SYNTH_EASY, 8, &g) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_synth_grid(10, 10, 1, seed, (gcut_synth_level)7, 0, &g) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_synth_grid(-1, 10, 1, seed, GCUT_SYNTH_EASY, 0, &g) == GCUT_ERR_INVALID_ARG);
}

/* Segmenting the benchmark: error against the truth, seeds kept, the certificate, and every
 * solver of this build on the same energy. Error bounds: at the easy level the colours alone
 * (the regional term) mislabel about 0.2% of pixels and the boundary term removes most of those
 * (measured 0.05-0.1%), so the cut must beat the colours alone and stay under 1%; at the hard
 * level the colours alone mislabel 11-15% and the cut must bring that under a third of it and
 * under 4% (measured 0.3-2.5%; small images lose more to their ellipses' borders). A wrong sign,
 * swapped terminals or a missing boundary term fail these by a wide margin. */
static void segment_case(int64_t w, int64_t h, int64_t d, uint64_t seed, gcut_synth_level level,
                         int conn) {
    const int64_t n = w * h * d;
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_synth_grid(w, h, d, seed, level, conn, &grid));
    if (grid == NULL)
        return;
    uint8_t *px = malloc((size_t)n * 3), *truth = malloc((size_t)n), *seeds = malloc((size_t)n);
    uint8_t *ref = malloc((size_t)n), *labels = malloc((size_t)n);
    CHECK_OK(gcut__synth_pixels(w, h, d, seed, level, px, truth));
    CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
    const int32_t *src = gcut_grid_terminal_cdata(grid, GCUT_SOURCE);
    const int32_t *snk = gcut_grid_terminal_cdata(grid, GCUT_SINK);
    int64_t colour_errors = 0;
    for (int64_t i = 0; i < n; i++)
        colour_errors += (src[i] > snk[i]) != (truth[i] != 0);
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "bk";
    int64_t flow = -1;
    gcut_status st = gcut_grid_solve(grid, &opt, &flow, ref, NULL);
    CHECK_OK(st);
    if (st == GCUT_OK) {
        int64_t cut = -1, errors = 0, seed_broken = 0;
        PASS_IF(gcut_grid_verify(grid, ref, flow, &cut) == GCUT_OK && cut == flow);
        for (int64_t i = 0; i < n; i++) {
            bool fg = ref[i] == GCUT_SOURCE;
            errors += fg != (truth[i] != 0);
            seed_broken += (seeds[i] == GCUT_SEED_FOREGROUND && !fg) ||
                           (seeds[i] == GCUT_SEED_BACKGROUND && fg);
        }
        double rate = 100.0 * (double)errors / (double)n;
        double colour_rate = 100.0 * (double)colour_errors / (double)n;
        printf("  %lldx%lldx%lld %s %d-conn: colours alone %.3f%%, cut %.3f%% mislabelled\n",
               (long long)w, (long long)h, (long long)d, level ? "hard" : "easy", conn, colour_rate,
               rate);
        PASS_IF(seed_broken == 0);
        PASS_IF(rate < (level == GCUT_SYNTH_EASY ? 1.0 : 4.0));
        PASS_IF(level == GCUT_SYNTH_EASY ? errors < colour_errors : 3 * errors < colour_errors);
    }
    for (int s = 0; s < gcut_solver_count(); s++) {
        gcut_solver_info info;
        if (gcut_solver_get(s, &info) != GCUT_OK || !info.available || strcmp(info.name, "bk") == 0)
            continue;
        opt.solver = info.name;
        int64_t f2 = -1, cut = -1, differ = 0;
        st = gcut_grid_solve(grid, &opt, &f2, labels, NULL);
        CHECK_OK(st);
        if (st != GCUT_OK)
            continue;
        PASS_IF(f2 == flow);
        /* Masks may differ only where several minimum cuts exist: each must be a minimum cut
         * of this energy (its own cut value equals the common flow). */
        PASS_IF(gcut_grid_verify(grid, labels, flow, &cut) == GCUT_OK && cut == flow);
        for (int64_t i = 0; i < n; i++)
            differ += labels[i] != ref[i];
        printf("  %s: flow %s bk's, mask differs from bk's in %lld pixels\n", info.name,
               f2 == flow ? "equals" : "DIFFERS FROM", (long long)differ);
    }
    free(px), free(truth), free(seeds), free(ref), free(labels);
    gcut_grid_free(grid);
}

int main(void) {
    uint64_t seed = test_seed();
    test_determinism(seed);
    test_seeds(seed);
    test_tables();
    test_sigma(seed);
    test_kernel(seed);
    segment_case(320, 240, 1, seed, GCUT_SYNTH_EASY, 4);
    segment_case(160, 120, 1, seed + 1, GCUT_SYNTH_EASY, 8);
    segment_case(200, 150, 1, seed + 2, GCUT_SYNTH_HARD, 4);
    segment_case(40, 40, 40, seed + 3, GCUT_SYNTH_EASY, 6);
    segment_case(40, 40, 40, seed + 4, GCUT_SYNTH_HARD, 6);
    segment_case(32, 32, 32, seed + 5, GCUT_SYNTH_EASY, 26);
    return test_finish("test_synth", passed);
}
