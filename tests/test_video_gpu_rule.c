/* test_video_gpu_rule.c - the GPU video path's seed rule checked without a GPU (Garrett &
 * Saito 2009, 3-4: the last silhouette gives the next frame's seeds): the distance to the last
 * boundary as row distances and a column scan (src/video/video_kernels.h, what the kernels run)
 * against a brute-force chamfer distance and the classic two-pass transform on random masks,
 * and whole synthetic videos segmented with the host computing its distances by that rule
 * (gcut__video_emulate_gpu) against the default two-pass path: the same flows and masks on
 * every frame. */
#include "util_common.h"

#include "../src/video/video_kernels.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* src/video/video_internal.h (not on the tests' include path with its own includes). */
gcut_status gcut__video_emulate_gpu(gcut_video *video, int on);

static int passed = 0;

#define PASS_IF(cond)                                                                              \
    do {                                                                                           \
        int before_ = test_failures;                                                               \
        CHECK(cond);                                                                               \
        if (test_failures == before_)                                                              \
            passed++;                                                                              \
    } while (0)

static uint64_t rng_state;
static uint32_t rnd(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

/* A random mask: a few discs and rectangles, plus isolated flipped pixels. */
static void random_mask(uint8_t *m, int64_t w, int64_t h, int shapes, int specks) {
    memset(m, 0, (size_t)(w * h));
    for (int s = 0; s < shapes; s++) {
        const int64_t cx = rnd() % w, cy = rnd() % h, r = 1 + rnd() % (w / 3 + 1);
        const bool disc = rnd() & 1;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                const int64_t dx = x - cx, dy = y - cy;
                const bool in = disc ? dx * dx + dy * dy <= r * r
                                     : (dx < 0 ? -dx : dx) <= r && (dy < 0 ? -dy : dy) <= r / 2;
                if (in)
                    m[y * w + x] ^= 1;
            }
    }
    for (int s = 0; s < specks; s++)
        m[rnd() % (w * h)] ^= 1;
}

/* The classic two-pass 3-4 chamfer transform (one step per neighbour, no splitting): an
 * implementation independent of the library's. */
static void two_pass(const uint8_t *m, int64_t w, int64_t h, int32_t *d) {
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++)
            d[y * w + x] = gcut__vk_edge(m, w, h, x, y) ? 0 : GCUT__VK_INF;
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            int32_t b = d[y * w + x];
            if (x > 0 && d[y * w + x - 1] + 3 < b)
                b = d[y * w + x - 1] + 3;
            if (y > 0) {
                if (d[(y - 1) * w + x] + 3 < b)
                    b = d[(y - 1) * w + x] + 3;
                if (x > 0 && d[(y - 1) * w + x - 1] + 4 < b)
                    b = d[(y - 1) * w + x - 1] + 4;
                if (x + 1 < w && d[(y - 1) * w + x + 1] + 4 < b)
                    b = d[(y - 1) * w + x + 1] + 4;
            }
            d[y * w + x] = b;
        }
    for (int64_t y = h - 1; y >= 0; y--)
        for (int64_t x = w - 1; x >= 0; x--) {
            int32_t b = d[y * w + x];
            if (x + 1 < w && d[y * w + x + 1] + 3 < b)
                b = d[y * w + x + 1] + 3;
            if (y + 1 < h) {
                if (d[(y + 1) * w + x] + 3 < b)
                    b = d[(y + 1) * w + x] + 3;
                if (x + 1 < w && d[(y + 1) * w + x + 1] + 4 < b)
                    b = d[(y + 1) * w + x + 1] + 4;
                if (x > 0 && d[(y + 1) * w + x - 1] + 4 < b)
                    b = d[(y + 1) * w + x - 1] + 4;
            }
            d[y * w + x] = b;
        }
}

/* Row distances then the column scan over the whole frame (max_rows as given) against the
 * brute-force minimum of 3 max + min over the boundary pixels and the two-pass transform:
 * equal wherever the distance is at most 3 max_rows, above 3 max_rows elsewhere. */
static void distance_rule(uint64_t seed) {
    rng_state = seed;
    int64_t checked = 0, bad_brute = 0, bad_two = 0, bad_bound = 0;
    for (int trial = 0; trial < 40; trial++) {
        const int64_t w = 2 + rnd() % 48, h = 2 + rnd() % 36, n = w * h;
        uint8_t *m = malloc((size_t)n);
        int32_t *hd = malloc((size_t)n * sizeof(int32_t)),
                *two = malloc((size_t)n * sizeof(int32_t));
        random_mask(m, w, h, trial % 4, (int)(rnd() % 6));
        for (int64_t y = 0; y < h; y++)
            gcut__vk_row_distance(m, w, h, y, 0, w, hd + y * w);
        two_pass(m, w, h, two);
        const int64_t max_rows = trial % 2 ? h : 1 + rnd() % 6;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                int32_t brute = GCUT__VK_INF;
                for (int64_t by = 0; by < h; by++)
                    for (int64_t bx = 0; bx < w; bx++)
                        if (gcut__vk_edge(m, w, h, bx, by)) {
                            const int32_t d = gcut__vk_chamfer((int32_t)(bx > x ? bx - x : x - bx),
                                                               (int32_t)(by > y ? by - y : y - by));
                            brute = d < brute ? d : brute;
                        }
                const int32_t scan = gcut__vk_column_scan(hd, w, 0, h, x, y, max_rows);
                bad_two += two[y * w + x] != brute;
                if (brute <= 3 * max_rows)
                    bad_brute += scan != brute;
                else
                    bad_bound += scan <= 3 * max_rows;
                checked++;
            }
        free(m);
        free(hd);
        free(two);
    }
    printf("distance rule: %lld pixels of 40 random masks; column scan != brute force: %lld, "
           "below its bound where it should not be: %lld; two-pass != brute force: %lld\n",
           (long long)checked, (long long)bad_brute, (long long)bad_bound, (long long)bad_two);
    PASS_IF(checked > 0 && bad_brute == 0 && bad_bound == 0);
    PASS_IF(bad_two == 0);
}

/* A synthetic video through the default path and through the GPU's distance rule on the host:
 * flows and masks equal frame by frame. */
static void video_rule(uint64_t seed, int64_t w, int64_t h, gcut_synth_level level, int frames,
                       const char *what, void (*tweak)(gcut_video_params *)) {
    const int64_t n = w * h;
    uint8_t *truth = malloc((size_t)n), *ma = malloc((size_t)n), *mb = malloc((size_t)n);
    gcut_video_params p;
    gcut_video_params_init(&p);
    p.verify = 1;
    if (tweak)
        tweak(&p);
    gcut_options o;
    gcut_options_init(&o);
    o.solver = "bk";
    gcut_video *a = NULL, *b = NULL;
    CHECK_OK(gcut_video_create(w, h, &p, &o, &a));
    CHECK_OK(gcut_video_create(w, h, &p, &o, &b));
    if (b != NULL)
        CHECK_OK(gcut__video_emulate_gpu(b, 1));
    int same = 0;
    for (int k = 0; k < frames && a != NULL && b != NULL; k++) {
        gcut_image img = {0};
        CHECK_OK(gcut_video_synth_frame(w, h, seed, k, level, &img, truth));
        gcut_video_report ra, rb;
        const uint8_t *init = k == 0 ? truth : NULL;
        CHECK_OK(gcut_video_push_frame(a, &img, init, GCUT_VIDEO_INIT_MASK, &ra));
        CHECK_OK(gcut_video_push_frame(b, &img, init, GCUT_VIDEO_INIT_MASK, &rb));
        gcut_image_free(&img);
        CHECK_OK(gcut_video_get_mask(a, ma));
        CHECK_OK(gcut_video_get_mask(b, mb));
        const bool eq = ra.flow == rb.flow && ra.graph_nodes == rb.graph_nodes &&
                        memcmp(ma, mb, (size_t)n) == 0;
        if (!eq)
            printf("  %s frame %d: flow %lld / %lld, nodes %lld / %lld\n", what, k,
                   (long long)ra.flow, (long long)rb.flow, (long long)ra.graph_nodes,
                   (long long)rb.graph_nodes);
        same += eq;
    }
    printf("%s (%lldx%lld, %s): %d of %d frames with equal flows, band sizes and masks\n", what,
           (long long)w, (long long)h, level == GCUT_SYNTH_HARD ? "hard" : "easy", same, frames);
    PASS_IF(same == frames);
    gcut_video_free(a);
    gcut_video_free(b);
    free(truth);
    free(ma);
    free(mb);
}

static void no_check(gcut_video_params *p) {
    p->check_colour = 0;
}
static void reach_all(gcut_video_params *p) {
    p->colour_reach = 0;
}
static void wide(gcut_video_params *p) {
    p->band_min = 6;
    p->band_motion = 2;
}
static void full_frame(gcut_video_params *p) {
    p->restrict_band = 0;
    p->seg.connectivity = 4;
}

/* gcut_video_solver(): the path a video takes. Without a device every video is cut on the CPU,
 * by the solver the options name (bk when none or "auto"); with one, auto takes the GPU path
 * for frames of 65536 pixels or more. */
static void solver_name(void) {
    gcut_options o;
    gcut_options_init(&o);
    gcut_video *v = NULL;
    o.solver = "bk";
    CHECK_OK(gcut_video_create(64, 48, NULL, &o, &v));
    PASS_IF(v != NULL && strcmp(gcut_video_solver(v), "bk") == 0);
    gcut_video_free(v);
    v = NULL;
    gcut_solver_info info;
    const bool gpu = gcut_solver_find("cuda-grid", &info) == GCUT_OK && info.available;
    CHECK_OK(gcut_video_create(320, 240, NULL, NULL, &v));
    PASS_IF(v != NULL && strcmp(gcut_video_solver(v), gpu ? "cuda-grid" : "bk") == 0);
    gcut_video_free(v);
    PASS_IF(strcmp(gcut_video_solver(NULL), "none") == 0);
}

int main(void) {
    const uint64_t seed = test_seed();
    solver_name();
    distance_rule(seed);
    video_rule(seed, 160, 120, GCUT_SYNTH_EASY, 30, "defaults", NULL);
    video_rule(seed + 1, 160, 120, GCUT_SYNTH_HARD, 30, "defaults", NULL);
    video_rule(seed + 2, 128, 96, GCUT_SYNTH_HARD, 20, "no colour check", no_check);
    video_rule(seed + 3, 128, 96, GCUT_SYNTH_EASY, 20, "colour reach everywhere", reach_all);
    video_rule(seed + 4, 128, 96, GCUT_SYNTH_HARD, 20, "wide band", wide);
    video_rule(seed + 5, 96, 72, GCUT_SYNTH_HARD, 12, "whole frame, 4-connected", full_frame);
    return test_finish("test_video_gpu_rule", passed);
}
