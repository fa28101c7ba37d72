/* test_grabcut.c - GrabCut (Rother, Kolmogorov & Blake 2004) in gcut_grabcut(): every round's
 * mask a minimum cut of that round's energy (brute force on tiny images, the cut certificate
 * against fresh bk and cpu-pr solves on larger ones), box and seeds together, the energy never
 * rising, warm and cold rounds giving the same masks and energies round by round (each round
 * certified), the early stop only on a round that changed no label, the half-size first rounds
 * (forced and automatic; certified, warm = cold; the lone full-size cut on grid-bk equal to
 * bk's), bad boxes rejected by name, and a picture of
 * one colour. Randomised cases print their seed (GCUT_TEST_SEED replays). */
#include "internal.h"
#include "util_common.h"

#include "../src/seg/seg_internal.h"

#include <math.h>
#include <string.h>

static int passed = 0;

#define PASS_IF(cond)                                                                              \
    do {                                                                                           \
        int before_ = test_failures;                                                               \
        CHECK(cond);                                                                               \
        if (test_failures == before_)                                                              \
            passed++;                                                                              \
    } while (0)

/* The mask as labels (1 -> GCUT_SOURCE) and its cut value on grid. */
static int64_t cut_of(const gcut_grid *grid, const uint8_t *mask, int64_t n) {
    uint8_t *labels = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++)
        labels[i] = mask[i] ? GCUT_SOURCE : GCUT_SINK;
    int64_t cut = -1;
    gcut_grid_verify(grid, labels, 0, &cut);
    free(labels);
    return cut;
}

/* The oracle: grid's maximum flow by a fresh solve of solver. */
static int64_t flow_of(gcut_grid *grid, const char *solver) {
    gcut_options o;
    gcut_options_init(&o);
    o.solver = solver;
    o.warm = 0;
    int64_t flow = -1;
    uint8_t *labels = malloc((size_t)gcut_grid_num_nodes(grid));
    CHECK_OK(gcut_grid_solve(grid, &o, &flow, labels, NULL));
    free(labels);
    return flow;
}

/* Certificate: the mask cuts the final energy at its maximum flow (bk and cpu-pr agree). */
static void check_min_cut(gcut_grid *grid, const uint8_t *mask, int64_t n) {
    const int64_t cut = cut_of(grid, mask, n);
    PASS_IF(cut == flow_of(grid, "bk"));
    PASS_IF(cut == flow_of(grid, "cpu-pr"));
}

static void random_image(test_rng *rng, int64_t w, int64_t h, uint8_t *px) {
    /* Two colour populations, a blob of one in the other, so the models have something. */
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            const int64_t dx = 2 * x - w, dy = 2 * y - h;
            const bool in = dx * dx + dy * dy < (w * w + h * h) / 6;
            for (int c = 0; c < 3; c++)
                px[(y * w + x) * 3 + c] =
                    (uint8_t)((in ? 150 + 40 * c : 60 + 20 * c) + test_rng_range(rng, -50, 50));
        }
}

/* Tiny images: the mask is the cheapest of all 2^unknown labellings of the final energy, and
 * the reported flow its cost. */
static void test_brute_force(uint64_t seed) {
    test_rng rng;
    test_rng_init(&rng, seed);
    for (int trial = 0; trial < 12; trial++) {
        const int64_t w = test_rng_range(&rng, 3, 5), h = test_rng_range(&rng, 3, 4), n = w * h;
        uint8_t px[60], mask[20], labels[20];
        random_image(&rng, w, h, px);
        gcut_image img = {w, h, 1, 3, 8, px};
        gcut_rect box = {1, 1, w - 2 > 0 ? w - 2 : 1, h - 1};
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.gmm_components = (int)test_rng_range(&rng, 1, 3);
        p.lambda = (double)test_rng_range(&rng, 1, 60);
        p.connectivity = trial % 2 ? 8 : 4;
        p.iterations = (int)test_rng_range(&rng, 1, 4);
        p.coarse_rounds = trial % 3 == 0 ? 1 : 0; /* half-size first round where it can be */
        gcut_grid *grid = NULL;
        gcut_seg_report rep;
        CHECK_OK(gcut__grabcut(&img, &box, NULL, &p, NULL, mask, &rep, &grid));
        if (grid == NULL)
            continue;
        const int64_t mine = cut_of(grid, mask, n);
        int64_t best = INT64_MAX;
        for (uint32_t bits = 0; bits < (1u << n); bits++) {
            bool ok = true;
            for (int64_t i = 0; i < n && ok; i++) {
                const int64_t x = i % w, y = i / w;
                const bool inside =
                    x >= box.x && x < box.x + box.width && y >= box.y && y < box.y + box.height;
                labels[i] = (bits >> i) & 1;
                ok = inside || !labels[i]; /* outside the box: background */
            }
            if (!ok)
                continue;
            const int64_t c = cut_of(grid, labels, n);
            best = c < best ? c : best;
        }
        PASS_IF(mine == best);
        /* The reported flow is the last cut's maximum flow: the minimum (a lone cut's flow is
         * partly pushed before the solver starts, prepush(); added back). */
        PASS_IF(rep.stats.flow == best);
        /* bk named: the graph of unknown pixels (its lone cut pre-pushed too): the same. */
        gcut_options o;
        gcut_options_init(&o);
        o.solver = "bk";
        uint8_t mask_bk[20];
        gcut_seg_report rep_bk;
        CHECK_OK(gcut_grabcut(&img, &box, NULL, &p, &o, mask_bk, &rep_bk));
        PASS_IF(memcmp(mask, mask_bk, (size_t)n) == 0 && rep_bk.stats.flow == best);
        gcut_grid_free(grid);
    }
}

/* A blob of one colour population on another, with truth; box and seeds together; energy never
 * rising; the mask a minimum cut; warm and cold rounds identical. */
static void test_synthetic(uint64_t seed) {
    const int64_t w = 96, h = 72, n = w * h;
    uint8_t *truth = malloc((size_t)n), *seeds = calloc((size_t)n, 1);
    uint8_t *warm = malloc((size_t)n), *cold = malloc((size_t)n);
    uint8_t *px = malloc((size_t)n * 3);
    test_rng rng;
    test_rng_init(&rng, seed);
    random_image(&rng, w, h, px);
    gcut_image img = {w, h, 1, 3, 8, px};
    for (int64_t i = 0; i < n; i++) {
        const int64_t dx = 2 * (i % w) - w, dy = 2 * (i / w) - h;
        truth[i] = dx * dx + dy * dy < (w * w + h * h) / 6;
    }
    /* The box: the truth's bounding box grown by 3 pixels (clipped); seeds: a foreground one at
     * the centre (kept by the synthetic picture), a background one inside the box. */
    int64_t x0 = w, y0 = h, x1 = 0, y1 = 0;
    for (int64_t i = 0; i < n; i++)
        if (truth[i]) {
            const int64_t x = i % w, y = i / w;
            x0 = x < x0 ? x : x0, y0 = y < y0 ? y : y0;
            x1 = x > x1 ? x : x1, y1 = y > y1 ? y : y1;
        }
    gcut_rect box = {x0 - 3, y0 - 3, x1 - x0 + 7, y1 - y0 + 7};
    seeds[(h / 2) * w + w / 2] = GCUT_SEED_FOREGROUND;
    int64_t bg_seed = -1;
    for (int64_t i = 0; i < n && bg_seed < 0; i++) {
        const int64_t x = i % w, y = i / w;
        if (!truth[i] && x > box.x && x < box.x + box.width - 1 && y > box.y &&
            y < box.y + box.height - 1)
            bg_seed = i;
    }
    if (bg_seed >= 0)
        seeds[bg_seed] = GCUT_SEED_BACKGROUND;
    for (int connectivity = 4; connectivity <= 8; connectivity += 4) {
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.connectivity = connectivity;
        p.iterations = 8;
        p.seed = seed;
        gcut_options o;
        gcut_options_init(&o);
        o.solver = "bk";
        gcut_seg_report rw, rc;
        gcut_grid *grid = NULL;
        CHECK_OK(gcut__grabcut(&img, &box, seeds, &p, &o, warm, &rw, &grid));
        o.warm = 0;
        CHECK_OK(gcut_grabcut(&img, &box, seeds, &p, &o, cold, &rc));
        PASS_IF(memcmp(warm, cold, (size_t)n) == 0);
        PASS_IF(rw.iterations == rc.iterations && rw.iterations >= 2);
        bool same = true, falling = true;
        for (int t = 0; t < rw.iterations; t++) {
            same = same && rw.round_energy[t] == rc.round_energy[t];
            if (t > 0 && rw.round_energy[t] > rw.round_energy[t - 1])
                falling = false, printf("round %d: energy %.9g after %.9g\n", t + 1,
                                        rw.round_energy[t], rw.round_energy[t - 1]);
        }
        PASS_IF(same);
        PASS_IF(falling);
        /* Hard constraints kept, box respected. */
        bool kept = warm[(h / 2) * w + w / 2] == 1 && (bg_seed < 0 || warm[bg_seed] == 0);
        int64_t wrong = 0;
        for (int64_t i = 0; i < n; i++) {
            const int64_t x = i % w, y = i / w;
            if ((x < box.x || x >= box.x + box.width || y < box.y || y >= box.y + box.height) &&
                warm[i])
                kept = false;
            wrong += warm[i] != (truth[i] != 0);
        }
        PASS_IF(kept);
        printf("blob %dx%d, %d-connected: %d rounds, %.2f%% wrong\n", (int)w, (int)h, connectivity,
               rw.iterations, 100.0 * (double)wrong / (double)n);
        PASS_IF(wrong < n / 50);
        if (grid != NULL)
            check_min_cut(grid, warm, n);
        gcut_grid_free(grid);
    }
    /* The same seeds alone, re-fitted (no box): also rounds, also a minimum cut. */
    {
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.iterations = 3;
        gcut_grid *grid = NULL;
        gcut_seg_report r;
        uint8_t *s2 = calloc((size_t)n, 1);
        for (int64_t i = 0; i < n; i++)
            if (i % 97 == 0)
                s2[i] = truth[i] ? GCUT_SEED_FOREGROUND : GCUT_SEED_BACKGROUND;
        CHECK_OK(gcut__grabcut(&img, NULL, s2, &p, NULL, warm, &r, &grid));
        if (grid != NULL)
            check_min_cut(grid, warm, n);
        gcut_grid_free(grid);
        /* gcut_segment with iterations > 1 is this same call. */
        CHECK_OK(gcut_segment(&img, s2, &p, NULL, cold, NULL));
        PASS_IF(memcmp(warm, cold, (size_t)n) == 0);
        free(s2);
    }
    free(px), free(truth), free(seeds), free(warm), free(cold);
}

/* Each bad box fails with GCUT_ERR_INVALID_ARG and a message naming what is wrong. */
static void expect_box_error(const gcut_image *img, gcut_rect box, const uint8_t *seeds,
                             const char *words) {
    uint8_t *mask = malloc((size_t)(img->width * img->height * img->depth));
    gcut_status st = gcut_grabcut(img, &box, seeds, NULL, NULL, mask, NULL);
    PASS_IF(st == GCUT_ERR_INVALID_ARG && strstr(gcut_last_error(), words) != NULL);
    if (st != GCUT_ERR_INVALID_ARG || strstr(gcut_last_error(), words) == NULL)
        printf("box %lld,%lld,%lld,%lld: %s '%s' (wanted '%s')\n", (long long)box.x,
               (long long)box.y, (long long)box.width, (long long)box.height, gcut_status_name(st),
               gcut_last_error(), words);
    free(mask);
}

static void test_bad_boxes(void) {
    uint8_t px[20 * 10 * 3];
    for (int i = 0; i < 600; i++)
        px[i] = (uint8_t)(i * 37);
    gcut_image img = {20, 10, 1, 3, 8, px};
    uint8_t seeds[200] = {0}, mask[200];
    expect_box_error(&img, (gcut_rect){2, 2, 0, 5}, NULL, "empty");
    expect_box_error(&img, (gcut_rect){2, 2, 5, -1}, NULL, "empty");
    expect_box_error(&img, (gcut_rect){20, 0, 5, 5}, NULL, "outside");
    expect_box_error(&img, (gcut_rect){-10, 0, 10, 5}, NULL, "outside");
    expect_box_error(&img, (gcut_rect){0, 10, 5, 5}, NULL, "outside");
    expect_box_error(&img, (gcut_rect){0, 0, 20, 10}, NULL, "whole");
    expect_box_error(&img, (gcut_rect){-5, -5, 40, 40}, NULL, "whole");
    /* The whole image with a background seed is fine; so is a box past one edge (clipped). */
    seeds[0] = GCUT_SEED_BACKGROUND;
    PASS_IF(gcut_grabcut(&img, &(gcut_rect){0, 0, 20, 10}, seeds, NULL, NULL, mask, NULL) ==
            GCUT_OK);
    PASS_IF(mask[0] == 0);
    gcut_seg_report r;
    PASS_IF(gcut_grabcut(&img, &(gcut_rect){15, 5, 10, 10}, NULL, NULL, NULL, mask, &r) == GCUT_OK);
    bool outside_bg = true;
    for (int i = 0; i < 200; i++)
        if (mask[i] && (i % 20 < 15 || i / 20 < 5))
            outside_bg = false;
    PASS_IF(outside_bg);
    /* A box that touches the border (left and top) is a normal box. */
    PASS_IF(gcut_grabcut(&img, &(gcut_rect){0, 0, 10, 5}, NULL, NULL, NULL, mask, NULL) == GCUT_OK);
    /* Every box pixel a background seed: nothing may be foreground. */
    uint8_t all_bg[200];
    memset(all_bg, GCUT_SEED_BACKGROUND, sizeof all_bg);
    expect_box_error(&img, (gcut_rect){2, 2, 3, 3}, all_bg, "background seed");
    /* Neither box nor seeds; bad seed codes; iterations out of range. */
    PASS_IF(gcut_grabcut(&img, NULL, NULL, NULL, NULL, mask, NULL) == GCUT_ERR_INVALID_ARG);
    seeds[5] = 7;
    PASS_IF(gcut_grabcut(&img, &(gcut_rect){2, 2, 5, 5}, seeds, NULL, NULL, mask, NULL) ==
                GCUT_ERR_INVALID_ARG &&
            strstr(gcut_last_error(), "code 7") != NULL);
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.iterations = GCUT_SEG_MAX_ITERATIONS + 1;
    PASS_IF(gcut_grabcut(&img, &(gcut_rect){2, 2, 5, 5}, NULL, &p, NULL, mask, NULL) ==
            GCUT_ERR_INVALID_ARG);
    /* A box on a volume. */
    gcut_image vol = {5, 4, 10, 1, 8, px};
    uint8_t vmask[200];
    PASS_IF(gcut_grabcut(&vol, &(gcut_rect){1, 1, 2, 2}, NULL, NULL, NULL, vmask, NULL) ==
            GCUT_ERR_INVALID_ARG);
}

/* A volume with seeds (no box: 3D), gray (histogram model): auto (a grid-bk context on the
 * 6-connected crop, its arcs pre-pushed), bk named (the graph of unknown voxels) and cold runs
 * give the same masks and round energies (bk's graph up to a constant), and the mask cuts the
 * final energy at its maximum flow (certificate). */
static void test_volume(uint64_t seed) {
    const int64_t w = 14, h = 11, d = 7, n = w * h * d;
    uint8_t *px = malloc((size_t)n), *seeds = calloc((size_t)n, 1);
    uint8_t *a = malloc((size_t)n), *b = malloc((size_t)n), *c = malloc((size_t)n);
    test_rng rng;
    test_rng_init(&rng, seed ^ 0x3D3D);
    for (int64_t i = 0; i < n; i++) {
        const int64_t x = i % w, y = (i / w) % h, z = i / (w * h);
        const int64_t dx = 2 * x - w, dy = 2 * y - h, dz = 2 * z - d;
        const bool inside = dx * dx + dy * dy + 2 * dz * dz < (w * w) / 3;
        px[i] = (uint8_t)((inside ? 170 : 80) + test_rng_range(&rng, 0, 60) - 30);
        if (test_rng_range(&rng, 0, 40) == 0)
            seeds[i] = inside ? GCUT_SEED_FOREGROUND : GCUT_SEED_BACKGROUND;
    }
    seeds[(d / 2 * h + h / 2) * w + w / 2] = GCUT_SEED_FOREGROUND;
    seeds[0] = GCUT_SEED_BACKGROUND;
    gcut_image img = {w, h, d, 1, 8, px};
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.iterations = 4;
    gcut_options o;
    gcut_options_init(&o);
    gcut_seg_report ra, rb, rc;
    gcut_grid *grid = NULL;
    CHECK_OK(gcut__grabcut(&img, NULL, seeds, &p, &o, a, &ra, &grid));
    o.solver = "bk";
    CHECK_OK(gcut_grabcut(&img, NULL, seeds, &p, &o, b, &rb));
    o.solver = "auto";
    o.warm = 0;
    CHECK_OK(gcut_grabcut(&img, NULL, seeds, &p, &o, c, &rc));
    PASS_IF(memcmp(a, b, (size_t)n) == 0 && memcmp(a, c, (size_t)n) == 0);
    /* Warm and cold on the crop: the same flows and energies. bk's graph leaves out the boundary
     * terms between two seeds (a constant: random seeds of both classes may touch), so its
     * energies sit below by the same amount every round. */
    bool same = ra.iterations == rb.iterations && ra.iterations == rc.iterations &&
                ra.stats.flow == rc.stats.flow && ra.stats.flow >= rb.stats.flow;
    const double gap = ra.round_energy[0] - rb.round_energy[0];
    for (int t = 0; same && t < ra.iterations; t++)
        same = ra.round_energy[t] == rc.round_energy[t] &&
               fabs(ra.round_energy[t] - rb.round_energy[t] - gap) < 1e-6 && gap >= 0;
    PASS_IF(same);
    if (!same)
        printf("volume: iterations %d %d %d, flows %lld %lld %lld\n", ra.iterations, rb.iterations,
               rc.iterations, (long long)ra.stats.flow, (long long)rb.stats.flow,
               (long long)rc.stats.flow);
    PASS_IF(strcmp(ra.stats.solver, "grid-bk") == 0 && strcmp(rb.stats.solver, "bk") == 0);
    if (grid != NULL)
        check_min_cut(grid, a, n);
    gcut_grid_free(grid);
    free(px), free(seeds), free(a), free(b), free(c);
}

/* A photo of one colour: no evidence either way, so the cheapest cut has no boundary: all
 * background (nothing forces foreground), or with a foreground seed the seed... whatever it
 * is, it must be a minimum cut, in one round more than the first at most. */
static void test_one_colour(void) {
    const int64_t w = 40, h = 30, n = w * h;
    uint8_t *px = malloc((size_t)n * 3), *mask = malloc((size_t)n), *seeds = calloc((size_t)n, 1);
    memset(px, 128, (size_t)n * 3);
    gcut_image img = {w, h, 1, 3, 8, px};
    gcut_seg_report r;
    gcut_grid *grid = NULL;
    CHECK_OK(gcut__grabcut(&img, &(gcut_rect){5, 5, 20, 15}, NULL, NULL, NULL, mask, &r, &grid));
    int64_t fg = 0;
    for (int64_t i = 0; i < n; i++)
        fg += mask[i];
    PASS_IF(fg == 0 && r.foreground_pixels == 0);
    PASS_IF(r.iterations <= 2);
    if (grid != NULL)
        check_min_cut(grid, mask, n);
    gcut_grid_free(grid);
    grid = NULL;
    seeds[10 * w + 10] = GCUT_SEED_FOREGROUND;
    CHECK_OK(gcut__grabcut(&img, &(gcut_rect){5, 5, 20, 15}, seeds, NULL, NULL, mask, &r, &grid));
    PASS_IF(mask[10 * w + 10] == 1);
    if (grid != NULL)
        check_min_cut(grid, mask, n);
    gcut_grid_free(grid);
    /* Gray (histogram model), one level. */
    gcut_image gray = {w, h, 1, 1, 8, px};
    CHECK_OK(gcut_grabcut(&gray, &(gcut_rect){5, 5, 20, 15}, NULL, NULL, NULL, mask, &r));
    PASS_IF(r.model == GCUT_MODEL_HISTOGRAM && r.foreground_pixels == 0);
    free(px), free(mask), free(seeds);
}

/* The blob picture of test_synthetic with its truth and the box around the truth grown by 3. */
static void blob(test_rng *rng, int64_t w, int64_t h, uint8_t *px, uint8_t *truth, gcut_rect *box) {
    random_image(rng, w, h, px);
    int64_t x0 = w, y0 = h, x1 = 0, y1 = 0;
    for (int64_t i = 0; i < w * h; i++) {
        const int64_t dx = 2 * (i % w) - w, dy = 2 * (i / w) - h, x = i % w, y = i / w;
        truth[i] = dx * dx + dy * dy < (w * w + h * h) / 6;
        if (truth[i]) {
            x0 = x < x0 ? x : x0, y0 = y < y0 ? y : y0;
            x1 = x > x1 ? x : x1, y1 = y > y1 ? y : y1;
        }
    }
    *box = (gcut_rect){x0 - 3, y0 - 3, x1 - x0 + 7, y1 - y0 + 7};
}

/* Every round's cut exact, warm or cold: the run with limit t ends on round t of the run with
 * a higher limit (the rounds are deterministic), so its final energy's grid certifies round t's
 * mask (bk and cpu-pr flows equal its cut), and the warm and cold runs agree on every round's
 * mask and energy. With half-size first rounds too (coarse_rounds 2: rounds 3.. at full size). */
static void test_each_round(uint64_t seed) {
    const int64_t w = 64, h = 48, n = w * h;
    uint8_t *px = malloc((size_t)n * 3), *truth = malloc((size_t)n);
    uint8_t *warm = malloc((size_t)n), *cold = malloc((size_t)n);
    test_rng rng;
    test_rng_init(&rng, seed ^ 0xEAC4);
    gcut_rect box;
    blob(&rng, w, h, px, truth, &box);
    gcut_image img = {w, h, 1, 3, 8, px};
    for (int coarse = -1; coarse <= 2; coarse += 3) {
        gcut_seg_report longest;
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.seed = seed;
        p.coarse_rounds = coarse;
        p.iterations = 6;
        CHECK_OK(gcut_grabcut(&img, &box, NULL, &p, NULL, warm, &longest));
        for (int t = coarse > 0 ? coarse + 1 : 1, sv = 0; t <= 6; sv = !sv, t += !sv) {
            /* bk named (warm through the graph of unknown pixels), then auto (grid-bk: a lone
             * cut as a plain grid solve, several rounds through a warm grid-bk context). */
            p.iterations = t;
            gcut_options o;
            gcut_options_init(&o);
            o.solver = sv ? "auto" : "bk";
            gcut_seg_report rw, rc;
            gcut_grid *grid = NULL;
            CHECK_OK(gcut__grabcut(&img, &box, NULL, &p, &o, warm, &rw, &grid));
            o.warm = 0;
            CHECK_OK(gcut_grabcut(&img, &box, NULL, &p, &o, cold, &rc));
            PASS_IF(memcmp(warm, cold, (size_t)n) == 0);
            bool same = rw.iterations == rc.iterations &&
                        rw.coarse_iterations == rc.coarse_iterations &&
                        rw.coarse_iterations == (coarse > 0 ? coarse : 0);
            for (int k = 0; same && k < rw.iterations; k++)
                same = rw.round_energy[k] == rc.round_energy[k] &&
                       rw.round_energy[k] == longest.round_energy[k];
            for (int k = 0; same && k < rw.coarse_iterations; k++)
                same = rw.coarse_energy[k] == rc.coarse_energy[k];
            PASS_IF(same);
            if (!same)
                printf("round %d (coarse %d, %s): warm, cold and the longer run differ\n", t,
                       coarse, o.solver);
            PASS_IF(strcmp(rw.stats.solver, sv ? "grid-bk" : "bk") == 0 &&
                    strcmp(rc.stats.solver, rw.stats.solver) == 0);
            if (grid != NULL)
                check_min_cut(grid, warm, n);
            gcut_grid_free(grid);
            if (rw.stopped_by != GCUT_SEG_STOP_LIMIT && sv)
                break; /* the rounds ended before t: later limits repeat this run */
        }
    }
    free(px), free(truth), free(warm), free(cold);
}

/* The early stop is a stop of the re-fitting loop, taken only on a round that changed no label
 * (after the first): never earlier, never skipped, and the rounds before it are those of a run
 * without it (the same energies as a run limited to its length). */
static void test_early_stop(uint64_t seed) {
    const int64_t w = 48, h = 40, n = w * h;
    uint8_t *px = malloc((size_t)n * 3), *truth = malloc((size_t)n);
    uint8_t *mask = malloc((size_t)n), *again = malloc((size_t)n);
    int unchanged_stops = 0;
    for (int trial = 0; trial < 8; trial++) {
        test_rng rng;
        test_rng_init(&rng, seed + 977u * (uint64_t)trial);
        gcut_rect box;
        blob(&rng, w, h, px, truth, &box);
        gcut_image img = {w, h, 1, 3, 8, px};
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.seed = seed + (uint64_t)trial;
        p.iterations = 16;
        p.lambda = (double)test_rng_range(&rng, 5, 80);
        gcut_seg_report r;
        CHECK_OK(gcut_grabcut(&img, &box, NULL, &p, NULL, mask, &r));
        const int last = r.iterations - 1;
        bool ok = true;
        for (int t = 1; t < last; t++)
            ok = ok && r.round_changed[t] != 0; /* an unchanged round before the end */
        if (r.stopped_by == GCUT_SEG_STOP_UNCHANGED) {
            ok = ok && last > 0 && r.round_changed[last] == 0 && r.converged;
            unchanged_stops++;
        } else if (r.stopped_by == GCUT_SEG_STOP_LIMIT) {
            ok = ok && r.iterations == p.iterations && !r.converged;
        } else {
            ok = ok && r.converged;
        }
        PASS_IF(ok);
        if (!ok)
            printf("trial %d: stopped by %d after %d rounds, last changed %lld\n", trial,
                   r.stopped_by, r.iterations, (long long)r.round_changed[last]);
        /* A run limited to the rounds made gives the same mask and energies. */
        p.iterations = r.iterations;
        gcut_seg_report r2;
        CHECK_OK(gcut_grabcut(&img, &box, NULL, &p, NULL, again, &r2));
        bool same = memcmp(mask, again, (size_t)n) == 0 && r2.iterations == r.iterations;
        for (int t = 0; same && t < r.iterations; t++)
            same = r.round_energy[t] == r2.round_energy[t];
        PASS_IF(same);
    }
    printf("early stop: %d of 8 runs stopped on an unchanged round\n", unchanged_stops);
    PASS_IF(unchanged_stops > 0); /* the stop was exercised */
    free(px), free(truth), free(mask), free(again);
}

/* The half-size first rounds: forced on a small picture (1-3 of 5 rounds) and automatic on
 * one with 65536+ unknown pixels; each a minimum cut of the final energy (certificate), the
 * same warm as cold, near the truth; none below the threshold or with -1; bad values refused. */
static void test_coarse(uint64_t seed) {
    int64_t w = 96, h = 72, n = w * h;
    uint8_t *px = malloc((size_t)320 * 240 * 3), *truth = malloc((size_t)320 * 240);
    uint8_t *warm = malloc((size_t)320 * 240), *cold = malloc((size_t)320 * 240);
    test_rng rng;
    test_rng_init(&rng, seed ^ 0xC0A5);
    gcut_rect box;
    blob(&rng, w, h, px, truth, &box);
    gcut_image img = {w, h, 1, 3, 8, px};
    for (int c = -1; c <= 3; c++) {
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.seed = seed;
        p.coarse_rounds = c;
        gcut_options o;
        gcut_options_init(&o);
        o.solver = "bk";
        gcut_seg_report rw, rc;
        gcut_grid *grid = NULL;
        CHECK_OK(gcut__grabcut(&img, &box, NULL, &p, &o, warm, &rw, &grid));
        o.warm = 0;
        CHECK_OK(gcut_grabcut(&img, &box, NULL, &p, &o, cold, &rc));
        PASS_IF(memcmp(warm, cold, (size_t)n) == 0 && rw.coarse_iterations == rc.coarse_iterations);
        /* 96x72 has fewer than GCUT_SEG_COARSE_MIN unknown pixels: automatic is none. */
        PASS_IF(c <= 0 ? rw.coarse_iterations == 0
                       : rw.coarse_iterations >= 1 && rw.coarse_iterations <= c &&
                             rw.iterations <= 5 - c);
        int64_t wrong = 0;
        for (int64_t i = 0; i < n; i++)
            wrong += warm[i] != truth[i];
        printf("blob %dx%d, coarse_rounds %d: %d half-size + %d full-size rounds, %.2f%% wrong\n",
               (int)w, (int)h, c, rw.coarse_iterations, rw.iterations,
               100.0 * (double)wrong / (double)n);
        PASS_IF(wrong < n / 50);
        if (grid != NULL)
            check_min_cut(grid, warm, n);
        gcut_grid_free(grid);
    }
    /* Seeds alone, forced. */
    {
        uint8_t *s2 = calloc((size_t)n, 1);
        for (int64_t i = 0; i < n; i++)
            if (i % 53 == 0)
                s2[i] = truth[i] ? GCUT_SEED_FOREGROUND : GCUT_SEED_BACKGROUND;
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.coarse_rounds = 2;
        gcut_seg_report r;
        gcut_grid *grid = NULL;
        CHECK_OK(gcut__grabcut(&img, NULL, s2, &p, NULL, warm, &r, &grid));
        PASS_IF(r.coarse_iterations >= 1);
        if (grid != NULL)
            check_min_cut(grid, warm, n);
        gcut_grid_free(grid);
        free(s2);
    }
    /* Bad values. */
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    for (int bad = 0; bad < 2; bad++) {
        p.coarse_rounds = bad ? GCUT_SEG_MAX_ITERATIONS + 1 : -2;
        PASS_IF(gcut_grabcut(&img, &box, NULL, &p, NULL, warm, NULL) == GCUT_ERR_INVALID_ARG &&
                strstr(gcut_last_error(), "coarse_rounds") != NULL);
    }
    /* Automatic on 320x240 with a box of 300x230 (69000 unknown pixels): a pyramid. */
    w = 320, h = 240, n = w * h;
    blob(&rng, w, h, px, truth, &box);
    img = (gcut_image){w, h, 1, 3, 8, px};
    box = (gcut_rect){10, 5, 300, 230};
    gcut_seg_params_init(&p);
    gcut_seg_report r;
    gcut_grid *grid = NULL;
    CHECK_OK(gcut__grabcut(&img, &box, NULL, &p, NULL, warm, &r, &grid));
    PASS_IF(r.coarse_iterations >= 1 && r.coarse_iterations <= 4 && r.iterations == 1);
    /* A box with the connectivity left to gcut: 4-connected at twice lambda; 8 when asked. */
    PASS_IF(r.connectivity == 4 && r.lambda == 2 * p.lambda);
    {
        gcut_seg_params p8 = p;
        p8.connectivity = 8;
        gcut_seg_report r8;
        CHECK_OK(gcut_grabcut(&img, &box, NULL, &p8, NULL, cold, &r8));
        PASS_IF(r8.connectivity == 8 && r8.lambda == p.lambda);
    }
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++)
        wrong += warm[i] != truth[i];
    printf("blob %dx%d, automatic: %d half-size + %d full-size rounds, %.2f%% wrong\n", (int)w,
           (int)h, r.coarse_iterations, r.iterations, 100.0 * (double)wrong / (double)n);
    PASS_IF(wrong < n / 50);
    if (grid != NULL)
        check_min_cut(grid, warm, n);
    gcut_grid_free(grid);
    /* That lone full-size cut of a box goes to grid-bk under "auto"; bk named makes it on the
     * graph of unknown pixels: the same mask, flow and energies. */
    {
        gcut_options o;
        gcut_options_init(&o);
        o.solver = "bk";
        gcut_seg_report rb;
        CHECK_OK(gcut_grabcut(&img, &box, NULL, &p, &o, cold, &rb));
        PASS_IF(strcmp(r.stats.solver, "grid-bk") == 0 && strcmp(rb.stats.solver, "bk") == 0);
        PASS_IF(memcmp(warm, cold, (size_t)n) == 0 && r.stats.flow == rb.stats.flow &&
                r.iterations == rb.iterations &&
                r.round_energy[r.iterations - 1] == rb.round_energy[rb.iterations - 1]);
    }
    free(px), free(truth), free(warm), free(cold);
}

int main(void) {
    const uint64_t seed = test_seed();
    test_brute_force(seed);
    test_synthetic(seed);
    test_each_round(seed);
    test_early_stop(seed);
    test_coarse(seed);
    test_volume(seed);
    test_bad_boxes();
    test_one_colour();
    return test_finish("test_grabcut", passed);
}
