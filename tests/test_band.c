/* test_band.c - multilevel narrow-banded segmentation (Lombaert 2005; Lattari 2010 3.5, 5.4):
 * a coarse level's energy is the image's energy of the projected labelling, seeds coarsened
 * and labels projected at odd sizes and on 1-pixel-wide images, banded == full where the band
 * provably holds the cut, honest energies (the result's energy is its cut capacity in the full
 * grid, never below the exact minimum) where the band misses thin detail, lost seeds restored,
 * empty bands, volumes, and clean errors. Randomized parts print their seed. */
#include "internal.h"
#include "../src/seg/seg_internal.h"
#include "../src/seg/band_node.h"
#include "../src/cuda/staging.h"
#include "util_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
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

/* Energy of a labelling of level k from unscaled gcut__band_node capacities. */
static int64_t level_energy(const gcut__band_image *base, const gcut__seg_tables *t, int conn,
                            int k, const int64_t dims[3], const uint8_t *labels) {
    int64_t e = 0;
    for (int64_t z = 0; z < dims[0]; z++)
        for (int64_t y = 0; y < dims[1]; y++)
            for (int64_t x = 0; x < dims[2]; x++) {
                int64_t s, snk, w[27];
                gcut__band_node(base, t, conn, k, NULL, dims, z, y, x, &s, &snk, w);
                const int l = labels[(z * dims[1] + y) * dims[2] + x] & 1;
                e += l ? snk : s;
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            const int64_t c = w[(dz + 1) * 9 + (dy + 1) * 3 + dx + 1];
                            const bool forward =
                                dz > 0 || (dz == 0 && (dy > 0 || (dy == 0 && dx > 0)));
                            if (c == 0 || !forward)
                                continue;
                            const int64_t j = ((z + dz) * dims[1] + y + dy) * dims[2] + x + dx;
                            if ((labels[j] & 1) != l)
                                e += c;
                        }
            }
    return e;
}

/* Random image, seeds and tables of the given size (channels 1 or 3). */
typedef struct problem {
    gcut__band_image base;
    uint8_t *pixels, *seeds;
    gcut__seg_tables *tables;
} problem;

static void problem_free(problem *p) {
    free(p->pixels);
    free(p->seeds);
    gcut__seg_tables_free(p->tables);
}

static bool problem_make(test_rng *rng, const int64_t dims[3], int channels, int conn, problem *p) {
    memset(p, 0, sizeof *p);
    const int64_t n = dims[0] * dims[1] * dims[2];
    p->pixels = malloc((size_t)(n * channels));
    p->seeds = malloc((size_t)n);
    if (p->pixels == NULL || p->seeds == NULL ||
        gcut__seg_tables_alloc(channels, conn, &p->tables) != GCUT_OK)
        return false;
    for (int64_t i = 0; i < n * channels; i++)
        p->pixels[i] = (uint8_t)test_rng_range(rng, 0, 255);
    for (int64_t i = 0; i < n; i++) {
        const int64_t r = test_rng_range(rng, 0, 9);
        p->seeds[i] = r == 0 ? GCUT_SEED_FOREGROUND : r == 1 ? GCUT_SEED_BACKGROUND : 0;
    }
    const int64_t nc = p->tables->num_colors;
    double *cost = malloc((size_t)(2 * nc) * sizeof(double));
    if (cost == NULL)
        return false;
    for (int64_t c = 0; c < 2 * nc; c++)
        cost[c] = (double)test_rng_range(rng, 0, 1000) / 100.0;
    gcut_status st = gcut__seg_tables_fill(p->tables, cost, cost + nc, 5.0, 30.0, 0.0, conn);
    free(cost);
    p->base.dims[0] = dims[0], p->base.dims[1] = dims[1], p->base.dims[2] = dims[2];
    p->base.channels = channels;
    p->base.pixels = p->pixels;
    p->base.seeds = p->seeds;
    return st == GCUT_OK;
}

/* The coarse energy is exact: for random labellings of level k, the unscaled level energy
 * equals gcut__band_energy of the projection onto the image (odd sizes, 1-wide, 2D and 3D,
 * every connectivity). Level 0 equals gcut__band_energy directly. */
static void test_aggregation(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0xA66u);
    static const int64_t shapes[][3] = {{1, 7, 5}, {1, 1, 9}, {1, 11, 1}, {1, 6, 8},
                                        {3, 5, 7}, {1, 1, 1}, {5, 1, 4},  {2, 3, 3}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const bool three_d = shapes[s][0] > 1;
        for (int ci = 0; ci < 2; ci++) {
            const int conn = three_d ? (ci ? 26 : 6) : (ci ? 8 : 4);
            problem p;
            if (!problem_make(&rng, shapes[s], three_d ? 1 : 3, conn, &p)) {
                CHECK(false);
                problem_free(&p);
                return;
            }
            int64_t dims[4][3];
            memcpy(dims[0], shapes[s], sizeof dims[0]);
            uint8_t *lab[4], *fine[4];
            for (int k = 1; k < 4; k++)
                for (int a = 0; a < 3; a++)
                    dims[k][a] = (dims[k - 1][a] + 1) / 2;
            const int64_t n0 = dims[0][0] * dims[0][1] * dims[0][2];
            for (int k = 0; k < 4; k++) {
                const int64_t n = dims[k][0] * dims[k][1] * dims[k][2];
                lab[k] = malloc((size_t)n);
                fine[k] = malloc((size_t)n0);
                for (int64_t i = 0; i < n; i++)
                    lab[k][i] = (uint8_t)test_rng_range(&rng, 0, 1);
            }
            for (int k = 0; k < 4; k++) {
                /* project level k down to level 0 one level at a time */
                int64_t cur = k;
                uint8_t *src = lab[k];
                uint8_t *tmp = malloc((size_t)n0);
                while (cur > 0) {
                    uint8_t *dst = cur - 1 == 0 ? fine[k] : malloc((size_t)n0);
                    gcut__band_project(src, dims[cur], dst, dims[cur - 1], (int)(1 + cur % 3));
                    if (src != lab[k])
                        free(src);
                    src = dst;
                    cur--;
                }
                if (k == 0)
                    memcpy(fine[0], lab[0], (size_t)n0);
                free(tmp);
                const int64_t want = gcut__band_energy(&p.base, p.tables, conn, fine[k], 1);
                /* the threaded pass sums the same rows */
                PASS_IF(gcut__band_energy(&p.base, p.tables, conn, fine[k], 2 + k) == want);
                const int64_t got = level_energy(&p.base, p.tables, conn, k, dims[k], lab[k]);
                if (got != want)
                    printf("aggregation: shape %lldx%lldx%lld conn %d level %d: %lld != %lld\n",
                           (long long)shapes[s][0], (long long)shapes[s][1],
                           (long long)shapes[s][2], conn, k, (long long)got, (long long)want);
                PASS_IF(got == want);
            }
            for (int k = 0; k < 4; k++)
                free(lab[k]), free(fine[k]);
            problem_free(&p);
        }
    }
}

/* The coarsest level's grid, filled in one pass, holds what gcut__band_node gives node by node
 * (the capacities the band solves of the same level use), at odd sizes, 2D and 3D. */
static void test_coarse_grid(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0x6121u);
    static const int64_t shapes[][3] = {{1, 13, 11}, {1, 1, 9}, {1, 10, 1}, {5, 7, 6}, {3, 9, 9}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const bool three_d = shapes[s][0] > 1;
        for (int ci = 0; ci < 2; ci++) {
            const int conn = three_d ? (ci ? 26 : 6) : (ci ? 8 : 4);
            problem p;
            if (!problem_make(&rng, shapes[s], three_d ? 1 : 3, conn, &p)) {
                CHECK(false);
                problem_free(&p);
                return;
            }
            int64_t dims[3];
            memcpy(dims, shapes[s], sizeof dims);
            uint8_t *pix[4] = {p.pixels, NULL, NULL, NULL};
            for (int k = 1; k <= 3; k++) {
                int64_t c[3];
                for (int a = 0; a < 3; a++)
                    c[a] = (dims[a] + 1) / 2;
                pix[k] = malloc((size_t)(c[0] * c[1] * c[2] * p.base.channels));
                gcut__band_coarsen_pixels(pix[k - 1], dims, p.base.channels, pix[k], 3);
                memcpy(dims, c, sizeof dims);
                gcut_grid *g = NULL;
                CHECK_OK(gcut_grid_create(three_d ? 3 : 2, three_d ? dims : dims + 1, conn, &g));
                if (g == NULL)
                    break;
                CHECK_OK(gcut__band_coarse_grid(&p.base, p.tables, conn, k, pix[k], g, 1 + k));
                bool same = true;
                for (int64_t z = 0; z < dims[0]; z++)
                    for (int64_t y = 0; y < dims[1]; y++)
                        for (int64_t x = 0; x < dims[2]; x++) {
                            const int64_t i = (z * dims[1] + y) * dims[2] + x;
                            int64_t src, snk, w[27];
                            gcut__band_node(&p.base, p.tables, conn, k, pix[k], dims, z, y, x, &src,
                                            &snk, w);
                            same &= g->terminal[GCUT_SOURCE][i] == src &&
                                    g->terminal[GCUT_SINK][i] == snk;
                            for (int d = 0; d < g->num_dirs; d++) {
                                const int *o = g->offset[d];
                                const int64_t nz = z + o[0], ny = y + o[1], nx = x + o[2];
                                const bool inside = nz >= 0 && nz < dims[0] && ny >= 0 &&
                                                    ny < dims[1] && nx >= 0 && nx < dims[2];
                                same &=
                                    !inside ||
                                    g->cap[d][i] == w[(o[0] + 1) * 9 + (o[1] + 1) * 3 + o[2] + 1];
                            }
                        }
                if (!same)
                    printf("coarse grid: shape %lldx%lldx%lld conn %d level %d differs\n",
                           (long long)shapes[s][0], (long long)shapes[s][1],
                           (long long)shapes[s][2], conn, k);
                PASS_IF(same);
                gcut_grid_free(g);
            }
            for (int k = 1; k <= 3; k++)
                free(pix[k]);
            problem_free(&p);
        }
    }
}

/* Seeds coarsen as bits (a block with both kinds keeps both) and labels project to every
 * child, at odd sizes, 1-pixel-wide and 3D; checked pixel by pixel against the definitions. */
static void test_coarsen_project(void) {
    static const int64_t shapes[][3] = {{1, 5, 3}, {1, 1, 7}, {1, 9, 1}, {3, 5, 7}, {1, 1, 1}};
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0xC0A5u);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t *f = shapes[s];
        const int64_t n = f[0] * f[1] * f[2];
        int64_t c[3];
        uint8_t *seeds = malloc((size_t)n), *coarse = malloc((size_t)n), *fine = malloc((size_t)n);
        uint8_t *px = malloc((size_t)n * 3), *cpx = malloc((size_t)n * 3);
        for (int64_t i = 0; i < n; i++)
            seeds[i] = (uint8_t)test_rng_range(&rng, 0, 2);
        for (int64_t i = 0; i < n * 3; i++)
            px[i] = (uint8_t)test_rng_range(&rng, 0, 255);
        gcut__band_coarsen_seeds(seeds, f, coarse, c, 3);
        PASS_IF(c[0] == (f[0] + 1) / 2 && c[1] == (f[1] + 1) / 2 && c[2] == (f[2] + 1) / 2);
        gcut__band_coarsen_pixels(px, f, 3, cpx, 2);
        bool seeds_ok = true, px_ok = true;
        for (int64_t z = 0; z < c[0]; z++)
            for (int64_t y = 0; y < c[1]; y++)
                for (int64_t x = 0; x < c[2]; x++) {
                    uint8_t want = 0;
                    unsigned sum[3] = {0, 0, 0}, count = 0;
                    for (int64_t i = 0; i < n; i++) {
                        const int64_t fx = i % f[2], fy = (i / f[2]) % f[1], fz = i / (f[2] * f[1]);
                        if (fx / 2 == x && fy / 2 == y && fz / 2 == z) {
                            want |= seeds[i];
                            for (int k = 0; k < 3; k++)
                                sum[k] += px[i * 3 + k];
                            count++;
                        }
                    }
                    const int64_t j = (z * c[1] + y) * c[2] + x;
                    seeds_ok &= coarse[j] == want;
                    for (int k = 0; k < 3; k++)
                        px_ok &= cpx[j * 3 + k] == (sum[k] + count / 2) / count;
                }
        PASS_IF(seeds_ok);
        PASS_IF(px_ok);
        for (int64_t i = 0; i < c[0] * c[1] * c[2]; i++)
            coarse[i] = (uint8_t)(test_rng_range(&rng, 0, 1) | 0xF0); /* high bits must go */
        gcut__band_project(coarse, c, fine, f, 3);
        bool proj_ok = true;
        for (int64_t i = 0; i < n; i++) {
            const int64_t fx = i % f[2], fy = (i / f[2]) % f[1], fz = i / (f[2] * f[1]);
            proj_ok &= fine[i] == (coarse[((fz / 2) * c[1] + fy / 2) * c[2] + fx / 2] & 1);
        }
        PASS_IF(proj_ok);
        free(seeds), free(coarse), free(fine), free(px), free(cpx);
    }
}

/* The band against brute force: every pixel within Chebyshev distance d of a pixel with an
 * axis neighbour of the other label, or of a seed its label contradicts; empty for a constant
 * labelling whose seeds agree. */
static void test_band_select(void) {
    static const int64_t shapes[][3] = {{1, 9, 7}, {1, 1, 13},  {1, 11, 1}, {4, 5, 6},
                                        {1, 1, 1}, {3, 7, 131}, {1, 5, 70}}; /* > 64: strips */
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0xBA4Du);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t *f = shapes[s];
        const int64_t n = f[0] * f[1] * f[2];
        uint8_t *lab = malloc((size_t)n), *state = malloc((size_t)n), *seeds = malloc((size_t)n);
        uint8_t *core = malloc((size_t)n);
        for (int trial = 0; trial < 6; trial++) {
            const int64_t d = trial % 3;
            /* a few boxes of foreground, sparse seeds */
            memset(lab, 0, (size_t)n);
            for (int64_t i = 0; i < n; i++) {
                const int64_t x = i % f[2], y = (i / f[2]) % f[1];
                lab[i] = trial < 5 && x >= f[2] / 3 && y >= f[1] / 3 && x <= f[2] / 2 + trial % 2;
                const int64_t r = test_rng_range(&rng, 0, 19);
                seeds[i] = trial >= 4 ? 0 : r == 0 ? 1 : r == 1 ? 2 : 0;
            }
            int64_t want_count = 0;
            for (int64_t i = 0; i < n; i++) {
                const int64_t x = i % f[2], y = (i / f[2]) % f[1], z = i / (f[2] * f[1]);
                bool c = (seeds[i] == 1 && !lab[i]) || (seeds[i] == 2 && lab[i]);
                c |= x + 1 < f[2] && lab[i + 1] != lab[i];
                c |= x > 0 && lab[i - 1] != lab[i];
                c |= y + 1 < f[1] && lab[i + f[2]] != lab[i];
                c |= y > 0 && lab[i - f[2]] != lab[i];
                c |= z + 1 < f[0] && lab[i + f[2] * f[1]] != lab[i];
                c |= z > 0 && lab[i - f[2] * f[1]] != lab[i];
                core[i] = c;
            }
            bool ok = true;
            for (int64_t i = 0; i < n; i++)
                state[i] = (uint8_t)(lab[i] | 0xF8);
            /* one thread (the serial passes) or 5-9 (parity units, separable dilation); each
             * band width d in 0..2 with both */
            const int64_t got = gcut__band_select(state, seeds, f, d, trial % 2 ? 4 + trial : 1);
            for (int64_t i = 0; i < n; i++) {
                const int64_t x = i % f[2], y = (i / f[2]) % f[1], z = i / (f[2] * f[1]);
                bool in = false;
                for (int64_t j = 0; j < n && !in; j++) {
                    const int64_t jx = j % f[2], jy = (j / f[2]) % f[1], jz = j / (f[2] * f[1]);
                    in = core[j] && llabs(jx - x) <= d && llabs(jy - y) <= d && llabs(jz - z) <= d;
                }
                want_count += in;
                ok &= ((state[i] & 2) != 0) == in && (state[i] & 1) == lab[i] && state[i] < 4;
            }
            PASS_IF(ok && got == want_count);
            if (trial == 5)
                PASS_IF(got == 0); /* constant labels, no seeds: the empty band */
        }
        free(lab), free(state), free(seeds), free(core);
    }
}

/* The certificate of a banded result: its reported energy is the capacity of its cut in the
 * full grid (built independently by gcut_seg_build_grid), never below the exact minimum (the
 * full solve's flow), and every seed keeps its label. @return the gap (energy - minimum), or -1
 * on failure; *differ gets the pixels that differ from the full solve's mask. */
static int64_t banded_vs_full(const gcut_image *img, const uint8_t *seeds, gcut_seg_params p,
                              int64_t *differ, gcut_seg_report *out) {
    const int64_t n = img->width * img->height * img->depth;
    uint8_t *mask = malloc((size_t)n), *full = malloc((size_t)n), *labels = malloc((size_t)n);
    gcut_seg_report rb, rf;
    gcut_options o;
    gcut_options_init(&o);
    o.solver = "bk";
    int64_t gap = -1;
    gcut_status st = gcut_segment(img, seeds, &p, &o, mask, &rb);
    CHECK_OK(st);
    gcut_seg_params pf = p;
    pf.levels = 0;
    CHECK_OK(gcut_segment(img, seeds, &pf, &o, full, &rf));
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_seg_build_grid(img, seeds, &pf, &grid, NULL));
    if (st == GCUT_OK && grid != NULL) {
        for (int64_t i = 0; i < n; i++)
            labels[i] = mask[i] ? GCUT_SOURCE : GCUT_SINK;
        int64_t cut = -1;
        gcut_grid_verify(grid, labels, rb.energy, &cut);
        PASS_IF(cut == rb.energy);
        PASS_IF(rf.energy == rf.stats.flow && rb.energy >= rf.stats.flow);
        bool seeds_kept = true;
        *differ = 0;
        for (int64_t i = 0; i < n; i++) {
            seeds_kept &= seeds[i] == 0 || (seeds[i] == 1) == (mask[i] == 1);
            *differ += mask[i] != full[i];
        }
        PASS_IF(seeds_kept);
        PASS_IF(*differ > 0 || rb.energy == rf.stats.flow);
        PASS_IF(strcmp(rb.level[0].solver, "bk") == 0); /* the options' graph solver */
        gap = rb.energy - rf.stats.flow;
        if (out != NULL)
            *out = rb;
    }
    gcut_grid_free(grid);
    free(mask), free(full), free(labels);
    return gap;
}

/* A band as wide as the image is the full problem: same minimum, exactly, at every level count
 * (random synthetic images, 2D and 3D, both connectivities, odd sizes). */
static void test_band_covers_all(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0xF011u);
    static const int64_t sizes[][3] = {{45, 37, 1}, {64, 48, 1}, {23, 19, 13}, {1, 40, 1}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        gcut_image img;
        const int64_t w = sizes[s][0], h = sizes[s][1], d = sizes[s][2];
        CHECK_OK(gcut_synth_image(w, h, d, test_rng_next(&rng), GCUT_SYNTH_HARD, &img, NULL));
        uint8_t *seeds = malloc((size_t)(w * h * d));
        CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
        for (int levels = 1; levels <= 3; levels++) {
            gcut_seg_params p;
            gcut_seg_params_init(&p);
            p.levels = levels;
            p.band = 64;
            p.connectivity = d > 1 ? (levels == 2 ? 26 : 6) : (levels == 2 ? 4 : 8);
            int64_t differ = -1;
            gcut_seg_report r;
            PASS_IF(banded_vs_full(&img, seeds, p, &differ, &r) == 0);
            PASS_IF(r.levels == levels && r.level[0].nodes == w * h * d);
        }
        free(seeds);
        gcut_image_free(&img);
    }
}

/* Constructed so that the band provably holds the minimum cut: the regional term dominates
 * (lambda tiny), so the minimum labels each pixel by its colour alone, and the foreground is
 * a union of blocks aligned to 2^L pixels, so every coarse level sees pure blocks and labels
 * them as the finest minimum does; the finest band contains every boundary pixel. The banded
 * result must equal the full solve, pixel for pixel. */
static void test_band_provable(void) {
    const int64_t w = 67, h = 41; /* odd: the last blocks are clipped */
    uint8_t *px = malloc((size_t)(w * h)), *seeds = calloc((size_t)(w * h), 1);
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            const bool fg =
                (x >= 8 && x < 32 && y >= 8 && y < 24) || (x >= 40 && y >= 16 && y < 40);
            px[y * w + x] = fg ? 200 : 40;
        }
    seeds[12 * w + 12] = GCUT_SEED_FOREGROUND;
    seeds[2 * w + 2] = GCUT_SEED_BACKGROUND;
    gcut_image img = {w, h, 1, 1, 8, px};
    for (int levels = 1; levels <= 3; levels++)
        for (int band = 0; band <= 2; band++) {
            gcut_seg_params p;
            gcut_seg_params_init(&p);
            p.model = GCUT_MODEL_HISTOGRAM;
            p.lambda = 0.01;
            p.levels = levels;
            p.band = band;
            int64_t differ = -1;
            PASS_IF(banded_vs_full(&img, seeds, p, &differ, NULL) == 0 && differ == 0);
        }
    free(px), free(seeds);
}

/* Thin structures the coarse levels cannot see: a one-pixel foreground line far from the
 * object. The full solve keeps it (strong colour, weak smoothness, high contrast), a banded
 * solve with a narrow band does not, and says so: its energy is above the minimum by what the
 * line costs, its cut certificate holds, and --band-grow does not pretend to fix it. */
static void test_thin_structures(void) {
    const int64_t w = 96, h = 64;
    uint8_t *px = malloc((size_t)(w * h)), *seeds = calloc((size_t)(w * h), 1);
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            const bool disk = (x - 24) * (x - 24) + (y - 32) * (y - 32) < 144;
            const bool line = x == 70 && y >= 10 && y < 54;
            px[y * w + x] = disk || line ? 220 : 30;
        }
    for (int64_t y = 28; y < 36; y++)
        for (int64_t x = 20; x < 28; x++)
            seeds[y * w + x] = GCUT_SEED_FOREGROUND;
    for (int64_t y = 0; y < 4; y++)
        for (int64_t x = 0; x < w; x++)
            seeds[y * w + x] = GCUT_SEED_BACKGROUND;
    gcut_image img = {w, h, 1, 1, 8, px};
    for (int grow = 0; grow <= 1; grow++) {
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.model = GCUT_MODEL_HISTOGRAM;
        p.connectivity = 4;
        p.lambda = 1.0;
        p.sigma = 10.0;
        p.levels = 3;
        p.band = 1;
        p.band_grow = grow;
        int64_t differ = -1;
        const int64_t gap = banded_vs_full(&img, seeds, p, &differ, NULL);
        printf("thin line, band_grow %d: %lld pixels differ, energy gap %lld\n", grow,
               (long long)differ, (long long)gap);
        PASS_IF(differ >= 40 && gap > 0); /* the line (44 pixels) lost, and reported */
    }
    free(px), free(seeds);
}

/* Seeds lost by coarsening: a foreground and a background seed in one 2x2 block (the coarse
 * pixel gets both bits, so no hard constraint), and isolated seeds deep in the other side's
 * region. Every seed keeps its label in the result (the finest level restores them), on 2D,
 * 1-pixel-wide and 3D inputs. */
static void test_lost_seeds(void) {
    static const int64_t sizes[][3] = {{40, 30, 1}, {1, 50, 1}, {50, 1, 1}, {18, 14, 10}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int64_t w = sizes[s][0], h = sizes[s][1], d = sizes[s][2], n = w * h * d;
        uint8_t *px = malloc((size_t)n), *seeds = calloc((size_t)n, 1);
        for (int64_t i = 0; i < n; i++)
            px[i] = (uint8_t)(i % w < w / 2 && (i / w) % h < h / 2 + 1 ? 200 : 50);
        if (w == 1)
            for (int64_t i = 0; i < n; i++)
                px[i] = (uint8_t)(i < n / 2 ? 200 : 50);
        seeds[0] = GCUT_SEED_FOREGROUND;     /* one block: fg and bg seeds side by side */
        seeds[1] = GCUT_SEED_BACKGROUND;     /* (x+1 in rows, y+1 in 1-wide columns) */
        seeds[n - 1] = GCUT_SEED_FOREGROUND; /* deep in the background region */
        seeds[n / 2 + 3] = GCUT_SEED_BACKGROUND;
        seeds[n - 5] = GCUT_SEED_BACKGROUND;
        gcut_image img = {w, h, d, 1, 8, px};
        for (int levels = 1; levels <= 4; levels++) {
            gcut_seg_params p;
            gcut_seg_params_init(&p);
            p.model = GCUT_MODEL_HISTOGRAM;
            p.levels = levels;
            p.band = 1;
            int64_t differ = -1;
            PASS_IF(banded_vs_full(&img, seeds, p, &differ, NULL) >= 0);
        }
        free(px), free(seeds);
    }
}

/* Real synthetic images at several sizes, levels and band widths (with and without growing):
 * every result certified (energy = cut capacity >= minimum, seeds kept). Prints the gaps. */
static void test_random_certified(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0x5EEDu);
    for (int trial = 0; trial < 6; trial++) {
        const int64_t w = test_rng_range(&rng, 40, 130), h = test_rng_range(&rng, 30, 100);
        const int64_t d = trial >= 4 ? test_rng_range(&rng, 12, 30) : 1;
        gcut_image img;
        CHECK_OK(gcut_synth_image(w, h, d, test_rng_next(&rng),
                                  trial % 2 ? GCUT_SYNTH_HARD : GCUT_SYNTH_EASY, &img, NULL));
        uint8_t *seeds = malloc((size_t)(w * h * d));
        CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.levels = (int)test_rng_range(&rng, 1, 3);
        p.band = (int)test_rng_range(&rng, 0, 3);
        p.band_grow = (int)test_rng_range(&rng, 0, 1);
        int64_t differ = -1;
        gcut_seg_report r;
        const int64_t gap = banded_vs_full(&img, seeds, p, &differ, &r);
        printf("synth %lldx%lldx%lld levels %d band %d grow %d: band %lld of %lld, %lld differ, "
               "gap %lld\n",
               (long long)w, (long long)h, (long long)d, p.levels, p.band, p.band_grow,
               (long long)r.level[0].nodes, (long long)(w * h * d), (long long)differ,
               (long long)gap);
        PASS_IF(gap >= 0);
        free(seeds);
        gcut_image_free(&img);
    }
}

/* Out of memory at every stage: with the memory cap lowered step by step below what a banded
 * solve holds, each call either succeeds or fails with GCUT_ERR_NOMEM, and gives every byte
 * back (gcut_memory_in_use() returns to where it was; ASan checks the rest). */
static void test_out_of_memory(void) {
    gcut_image img;
    CHECK_OK(gcut_synth_image(160, 120, 1, 5, GCUT_SYNTH_EASY, &img, NULL));
    uint8_t *seeds = malloc(160 * 120), *mask = malloc(160 * 120);
    CHECK_OK(gcut_synth_seeds(160, 120, 1, seeds));
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.levels = 2;
    p.band_grow = 1;
    gcut_options o;
    gcut_options_init(&o);
    o.solver = "bk";
    const uint64_t base = gcut_memory_in_use(), old_limit = gcut_memory_limit();
    int ok = 0, nomem = 0, other = 0;
    for (uint64_t cap = 4u * 1024 * 1024; cap <= 48u * 1024 * 1024; cap += cap / 8) {
        gcut_set_memory_limit(base + cap);
        const gcut_status st = gcut_segment(&img, seeds, &p, &o, mask, NULL);
        ok += st == GCUT_OK;
        nomem += st == GCUT_ERR_NOMEM;
        other += st != GCUT_OK && st != GCUT_ERR_NOMEM;
        if (gcut_memory_in_use() != base)
            other++;
    }
    gcut_set_memory_limit(old_limit);
    printf("memory caps: %d solved, %d out of memory, %d other\n", ok, nomem, other);
    PASS_IF(ok > 0 && nomem > 0 && other == 0);
    free(seeds), free(mask);
    gcut_image_free(&img);
}

/* An allocator that refuses its fail_at-th request (1-based; 0 = none) and counts. Atomic:
 * gcut_segment fits its two colour models on two threads, which allocate at the same time (on
 * the 16-core device host a plain counter lost a count and reported a leak that was not). */
typedef struct failing_alloc {
    atomic_llong requests, live;
    int64_t fail_at;
} failing_alloc;

static void *failing_alloc_fn(void *ctx, size_t bytes) {
    failing_alloc *f = ctx;
    if (atomic_fetch_add(&f->requests, 1) + 1 == f->fail_at)
        return NULL;
    void *p = malloc(bytes ? bytes : 1);
    if (p != NULL)
        atomic_fetch_add(&f->live, 1);
    return p;
}

static void failing_free_fn(void *ctx, void *ptr) {
    failing_alloc *f = ctx;
    if (ptr != NULL)
        atomic_fetch_sub(&f->live, 1);
    free(ptr);
}

/* Every allocation of a banded solve refused in turn (2D and 3D, with band growing): each run
 * fails with GCUT_ERR_NOMEM and frees all it took, or succeeds (a refusal some path survives). */
static void test_every_allocation_fails(void) {
    static const int64_t sizes[][3] = {{64, 48, 1}, {20, 18, 14}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int64_t w = sizes[s][0], h = sizes[s][1], d = sizes[s][2];
        gcut_image img;
        CHECK_OK(gcut_synth_image(w, h, d, 9, GCUT_SYNTH_HARD, &img, NULL));
        uint8_t *seeds = malloc((size_t)(w * h * d)), *mask = malloc((size_t)(w * h * d));
        CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.levels = 2;
        p.band = 1;
        p.band_grow = 1;
        gcut_options o;
        gcut_options_init(&o);
        o.solver = "bk";
        static failing_alloc f;
        atomic_init(&f.requests, 0);
        atomic_init(&f.live, 0);
        f.fail_at = 0;
        gcut_allocator a = {failing_alloc_fn, failing_free_fn, &f};
        gcut_set_allocator(&a);
        const gcut_status first = gcut_segment(&img, seeds, &p, &o, mask, NULL);
        const int64_t total = (int64_t)atomic_load(&f.requests);
        int nomem = 0, bad = 0;
        for (int64_t n = 1; n <= total; n++) {
            atomic_store(&f.requests, 0);
            atomic_store(&f.live, 0);
            f.fail_at = n;
            const gcut_status st = gcut_segment(&img, seeds, &p, &o, mask, NULL);
            nomem += st == GCUT_ERR_NOMEM;
            bad += (st != GCUT_OK && st != GCUT_ERR_NOMEM) || atomic_load(&f.live) != 0;
        }
        gcut_set_allocator(NULL);
        printf("%lldx%lldx%lld: %lld allocations refused one by one: %d out of memory, %d bad\n",
               (long long)w, (long long)h, (long long)d, (long long)total, nomem, bad);
        PASS_IF(first == GCUT_OK && total > 10 && nomem > 0 && bad == 0);
        free(seeds), free(mask);
        gcut_image_free(&img);
    }
}

/* Bad parameters are named, not crashed on. */
static void test_errors(void) {
    uint8_t px[4] = {10, 200, 10, 200}, seeds[4] = {1, 2, 0, 0}, mask[4];
    gcut_image img = {2, 2, 1, 1, 8, px};
    gcut_seg_params p;
    static const int bad[][2] = {{9, 2}, {-2, 2}, {1, -1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gcut_seg_params_init(&p);
        p.levels = bad[i][0];
        p.band = bad[i][1];
        PASS_IF(gcut_segment(&img, seeds, &p, NULL, mask, NULL) == GCUT_ERR_INVALID_ARG &&
                strstr(gcut_last_error(), p.band < 0 ? "band" : "levels") != NULL);
    }
    gcut_seg_params_init(&p);
    p.levels = 2;
    p.band_grow = 3;
    PASS_IF(gcut_segment(&img, seeds, &p, NULL, mask, NULL) == GCUT_ERR_INVALID_ARG);
    p.band_grow = 0;
    PASS_IF(gcut_segment(&img, NULL, &p, NULL, mask, NULL) == GCUT_ERR_INVALID_ARG);
    p.band_solver = "no-such-solver";
    PASS_IF(gcut_segment(&img, seeds, &p, NULL, mask, NULL) == GCUT_ERR_NOT_FOUND &&
            strstr(gcut_last_error(), "no-such-solver") != NULL);
    p.band_solver = "grid-bk"; /* grids only: a band is a general graph */
    PASS_IF(gcut_segment(&img, seeds, &p, NULL, mask, NULL) == GCUT_ERR_UNSUPPORTED &&
            strstr(gcut_last_error(), "band_solver") != NULL);
    p.band_solver = NULL;
    /* the device route without a usable GPU (or without CUDA): a clear error, not a crash */
    gcut_solver_info info;
    if (gcut_solver_find("cuda-grid", &info) != GCUT_OK || !info.available) {
        gcut_status st =
            gcut__band_segment_route(&img, seeds, &p, NULL, mask, NULL, GCUT__BAND_DEVICE);
        PASS_IF(st == GCUT_ERR_NO_DEVICE && strstr(gcut_last_error(), "CUDA") != NULL);
    }
    p.levels = GCUT_SEG_LEVELS_AUTO; /* small: auto is the full solve */
    gcut_seg_report r;
    PASS_IF(gcut_segment(&img, seeds, &p, NULL, mask, &r) == GCUT_OK && r.levels == 0 &&
            r.energy == r.stats.flow && mask[0] == 1 && mask[1] == 0);
}

/* The masked grid of a band problem (band_node.h; the device pipeline's construction) against
 * brute force: random tiny images of every connectivity, random projected labels and a random
 * band of at most 12 pixels at level 0; the grid's minimum cut on the band, with every other
 * pixel at its projected label, has the smallest image energy over all 2^band labellings that
 * agree with the projection outside the band (gcut__band_energy, independent of the grid), and
 * the cut capacity of the grid equals the flow. */
static void test_masked_grid_brute(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0x3A5Cu);
    static const int64_t shapes[][3] = {{1, 5, 7}, {1, 1, 9}, {1, 6, 1}, {3, 4, 5}, {2, 3, 3}};
    static const int conns2[2] = {4, 8}, conns3[2] = {6, 26};
    for (int trial = 0; trial < 20; trial++) {
        const int64_t *dims = shapes[trial % 5];
        const bool three_d = dims[0] > 1;
        const int conn = three_d ? conns3[trial / 5 % 2] : conns2[trial / 5 % 2];
        const int ch = three_d ? 1 : (trial % 2 ? 3 : 1);
        problem pr;
        if (!problem_make(&rng, dims, ch, conn, &pr)) {
            PASS_IF(false);
            problem_free(&pr);
            continue;
        }
        const int64_t n = dims[0] * dims[1] * dims[2];
        uint8_t *state = malloc((size_t)n), *labels = malloc((size_t)n),
                *trial_labels = malloc((size_t)n);
        int64_t band[12], nb = 0;
        for (int64_t i = 0; i < n; i++) {
            state[i] = (uint8_t)test_rng_range(&rng, 0, 1);
            if (nb < 12 && test_rng_range(&rng, 0, 2) == 0) {
                state[i] |= 2;
                band[nb++] = i;
            }
        }
        gcut_grid *grid = NULL;
        CHECK_OK(gcut_grid_create(three_d ? 3 : 2, three_d ? dims : dims + 1, conn, &grid));
        int64_t flow = -1, cut = -2;
        if (grid != NULL) {
            CHECK_OK(gcut__band_masked_grid(&pr.base, pr.tables, conn, 0, NULL, state, grid, 1));
            gcut_options o;
            gcut_options_init(&o);
            o.solver = "bk";
            CHECK_OK(gcut_grid_solve(grid, &o, &flow, labels, NULL));
            gcut_grid_verify(grid, labels, flow, &cut);
        }
        PASS_IF(cut == flow);
        /* nodes outside the band are isolated: no capacity at all */
        bool isolated = true;
        for (int64_t i = 0; grid != NULL && i < n; i++)
            if (!(state[i] & 2)) {
                isolated &= grid->terminal[0][i] == 0 && grid->terminal[1][i] == 0;
                for (int d = 0; d < grid->num_dirs; d++)
                    isolated &= grid->cap[d][i] == 0;
            }
        PASS_IF(isolated);
        for (int64_t i = 0; i < n; i++)
            trial_labels[i] = (state[i] & 2) ? (labels[i] == GCUT_SOURCE) : (state[i] & 1);
        const int64_t got = gcut__band_energy(&pr.base, pr.tables, conn, trial_labels, 1);
        int64_t best = INT64_MAX;
        for (int64_t m = 0; m < ((int64_t)1 << nb); m++) {
            for (int64_t i = 0; i < n; i++)
                trial_labels[i] = state[i] & 1;
            for (int64_t b = 0; b < nb; b++)
                trial_labels[band[b]] = (uint8_t)((m >> b) & 1);
            const int64_t e = gcut__band_energy(&pr.base, pr.tables, conn, trial_labels, 1);
            best = e < best ? e : best;
        }
        PASS_IF(got == best);
        gcut_grid_free(grid);
        free(state), free(labels), free(trial_labels);
        problem_free(&pr);
    }
}

/* The CPU twin of the device pipeline: every band solved as a masked grid (GCUT__BAND_MASKED,
 * bk on the grid) against the band graphs (GCUT__BAND_GRAPH, bk on the graph). The same band
 * problems, and bk takes the same minimum cut of each (the source side its search reaches), so
 * the masks must be identical, and every level's band and flow equal (random synthetic images,
 * 2D and 3D, every connectivity, odd sizes, a 1-pixel-wide image, 1-3 levels, bands 0-3). */
static void test_masked_twin(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0x7A1Bu);
    static const int64_t sizes[][3] = {{97, 61, 1},  {64, 48, 1}, {1, 70, 1},
                                       {23, 19, 13}, {31, 17, 9}, {130, 90, 1}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int64_t w = sizes[s][0], h = sizes[s][1], d = sizes[s][2], n = w * h * d;
        gcut_image img;
        CHECK_OK(gcut_synth_image(w, h, d, test_rng_next(&rng),
                                  s % 2 ? GCUT_SYNTH_EASY : GCUT_SYNTH_HARD, &img, NULL));
        uint8_t *seeds = malloc((size_t)n), *a = malloc((size_t)n), *b = malloc((size_t)n);
        CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
        gcut_seg_params p;
        gcut_seg_params_init(&p);
        p.levels = (int)test_rng_range(&rng, 1, 3);
        p.band = (int)test_rng_range(&rng, 0, 3);
        p.connectivity = d > 1 ? (s % 2 ? 26 : 6) : (s % 2 ? 4 : 8);
        p.band_solver = "bk";
        gcut_options o;
        gcut_options_init(&o);
        o.solver = "bk";
        o.threads = (int)test_rng_range(&rng, 1, 3);
        gcut_seg_report ra, rb;
        CHECK_OK(gcut__band_segment_route(&img, seeds, &p, &o, a, &ra, GCUT__BAND_GRAPH));
        CHECK_OK(gcut__band_segment_route(&img, seeds, &p, &o, b, &rb, GCUT__BAND_MASKED));
        int64_t differ = 0;
        for (int64_t i = 0; i < n; i++)
            differ += a[i] != b[i];
        bool levels_equal = ra.levels == rb.levels;
        for (int k = 0; k <= ra.levels && levels_equal; k++)
            levels_equal = ra.level[k].nodes == rb.level[k].nodes &&
                           ra.level[k].flow == rb.level[k].flow &&
                           ra.level[k].edges == rb.level[k].edges;
        printf("masked twin %lldx%lldx%lld conn %d levels %d band %d: finest band %lld nodes, flow "
               "%lld (graph) %lld (masked grid), %lld pixels differ, energy %lld %lld\n",
               (long long)w, (long long)h, (long long)d, p.connectivity, p.levels, p.band,
               (long long)ra.level[0].nodes, (long long)ra.level[0].flow,
               (long long)rb.level[0].flow, (long long)differ, (long long)ra.energy,
               (long long)rb.energy);
        PASS_IF(differ == 0 && levels_equal && ra.energy == rb.energy);
        PASS_IF(p.levels < 1 || strstr(rb.level[0].solver, "(masked)") != NULL);
        free(seeds), free(a), free(b);
        gcut_image_free(&img);
    }
}

/* The colour tables filled in parts on several threads (gcut__seg_tables_fill_parts, which
 * gcut__seg_tables_fill runs on the online cores) equal the one-part fill entry for entry, and
 * sampled entries equal their formula computed here (gray and colour, every connectivity, a
 * small and a large sigma, costs with infinities). */
static void test_table_parts(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0x7AB1u);
    static const int conns[] = {4, 8, 6, 26};
    static const double sigmas[] = {2.5, 150.0};
    for (int ch = 1; ch <= 3; ch += 2)
        for (int ci = 0; ci < 4; ci++)
            for (int si = 0; si < 2; si++) {
                gcut__seg_tables *one = NULL, *many = NULL;
                CHECK_OK(gcut__seg_tables_alloc(ch, conns[ci], &one));
                CHECK_OK(gcut__seg_tables_alloc(ch, conns[ci], &many));
                if (one == NULL || many == NULL) {
                    gcut__seg_tables_free(one);
                    gcut__seg_tables_free(many);
                    continue;
                }
                const int64_t nc = one->num_colors;
                double *cost = malloc((size_t)(2 * nc) * sizeof(double));
                if (cost == NULL)
                    break;
                for (int64_t c = 0; c < 2 * nc; c++)
                    cost[c] = test_rng_range(&rng, 0, 50) == 0
                                  ? INFINITY
                                  : (double)test_rng_range(&rng, 0, 3000) / 100.0;
                const int parts = (int)test_rng_range(&rng, 2, 70);
                CHECK_OK(gcut__seg_tables_fill_parts(one, cost, cost + nc, 7.5, sigmas[si], 0.0,
                                                     conns[ci], 1));
                CHECK_OK(gcut__seg_tables_fill_parts(many, cost, cost + nc, 7.5, sigmas[si], 0.0,
                                                     conns[ci], parts));
                bool same = one->hard == many->hard && one->scale == many->scale &&
                            one->unary_max == many->unary_max;
                for (int64_t c = 0; c < nc; c++)
                    same &= one->unary_source[c] == many->unary_source[c] &&
                            one->unary_sink[c] == many->unary_sink[c];
                bool formula = true;
                for (int k = 0; k < one->num_classes; k++)
                    for (int64_t d2 = 0; d2 <= one->max_sqdiff; d2++) {
                        same &= one->pairwise[k][d2] == many->pairwise[k][d2];
                        if (d2 % 997 == 0) {
                            const double w = 7.5 / sqrt((double)(k + 1));
                            const double e =
                                d2 == 0 ? w
                                        : w * exp(-(double)d2 / (2.0 * sigmas[si] * sigmas[si]));
                            formula &= one->pairwise[k][d2] == (int32_t)floor(one->scale * e + 0.5);
                        }
                    }
                PASS_IF(same && formula);
                free(cost);
                gcut__seg_tables_free(one);
                gcut__seg_tables_free(many);
            }
}

/* gcut__band_block_add (the coarsest level's block sums as the device runs them, every slot
 * index a constant) against gcut__band_pixel_add: the same sums for every block of every level,
 * odd sizes, 1-wide, 2D and 3D, gray and colour, every connectivity, seeds included. */
static void test_block_add(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0xB10Cu);
    static const int64_t shapes[][3] = {{1, 37, 45}, {1, 1, 77}, {1, 50, 1}, {1, 9, 8},
                                        {13, 11, 9}, {9, 17, 5}, {3, 3, 3},  {6, 1, 7}};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (int ci = 0; ci < 2; ci++) {
            const bool three_d = shapes[sh][0] > 1;
            const int conn = three_d ? (ci ? 26 : 6) : (ci ? 8 : 4);
            problem p;
            if (!problem_make(&rng, shapes[sh], ci ? 3 : 1, conn, &p)) {
                CHECK(false);
                problem_free(&p);
                continue;
            }
            const int64_t D = shapes[sh][0], H = shapes[sh][1], W = shapes[sh][2];
            int64_t differ = 0, blocks = 0;
            for (int k = 1; k <= 3; k++) {
                const int64_t side = (int64_t)1 << k;
                for (int64_t z0 = 0; z0 < D; z0 += side)
                    for (int64_t y0 = 0; y0 < H; y0 += side)
                        for (int64_t x0 = 0; x0 < W; x0 += side) {
                            const int64_t box[6] = {z0, z0 + side < D ? z0 + side : D,
                                                    y0, y0 + side < H ? y0 + side : H,
                                                    x0, x0 + side < W ? x0 + side : W};
                            int64_t s1 = 0, t1 = 0, s2 = 0, t2 = 0, w1[27] = {0}, w2[27] = {0};
                            for (int64_t z = box[0]; z < box[1]; z++)
                                for (int64_t y = box[2]; y < box[3]; y++)
                                    for (int64_t x = box[4]; x < box[5]; x++) {
                                        gcut__band_pixel_add(&p.base, p.tables, conn, k, box, z, y,
                                                             x, &s1, &t1, w1);
                                        gcut__band_block_add(&p.base, p.tables, conn, box, z, y, x,
                                                             &s2, &t2, w2);
                                    }
                            differ += s1 != s2 || t1 != t2 || memcmp(w1, w2, sizeof w1) != 0;
                            blocks++;
                        }
            }
            PASS_IF(differ == 0 && blocks > 0);
            problem_free(&p);
        }
}

/* The staged copies' packing (src/cuda/staging.h, host side): seeds to 2-bit codes and bits to
 * bytes, against the definition bit by bit, at every length 0..70 (not multiples of 4 or 8,
 * shorter than one 8-byte word), a few long odd ones, and at odd source offsets (a chunk's
 * start inside a buffer); the bytes past the output are never written. */
static void test_stage_packing(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0x57A6u);
    const size_t longest = 100003;
    uint8_t *codes = malloc(longest + 8), *packed = malloc(longest / 4 + 16);
    uint8_t *bytes = malloc(longest + 16);
    if (codes == NULL || packed == NULL || bytes == NULL) {
        test_failures++;
        free(codes), free(packed), free(bytes);
        return;
    }
    for (size_t i = 0; i < longest + 8; i++)
        codes[i] = (uint8_t)test_rng_range(&rng, 0, 3);
    const size_t lengths[] = {4093, 4096, 65537, 100003};
    bool seeds_ok = true, bits_ok = true, untouched = true;
    for (size_t t = 0; t < 71 + sizeof lengths / sizeof lengths[0]; t++) {
        const size_t n = t < 71 ? t : lengths[t - 71], off = t % 5; /* odd starts */
        const size_t pn = (n + 3) / 4, bn = (n + 7) / 8;
        memset(packed, 0xEE, pn + 8);
        gcut__stage_pack_seeds(codes + off, n, packed);
        for (size_t i = 0; i < n; i++)
            seeds_ok &= ((packed[i / 4] >> (2 * (i % 4))) & 3u) == codes[off + i];
        for (size_t i = n; i < 4 * pn; i++) /* the last byte's unused codes are 0 */
            seeds_ok &= ((packed[i / 4] >> (2 * (i % 4))) & 3u) == 0;
        untouched &= packed[pn] == 0xEE;
        /* bits: random bytes as the packed source, unpacked to 0 / 1 */
        for (size_t j = 0; j < bn; j++)
            packed[j] = (uint8_t)test_rng_range(&rng, 0, 255);
        memset(bytes, 0xEE, n + 8);
        gcut__stage_unpack_bits(packed, n, bytes + off);
        for (size_t i = 0; i < n; i++)
            bits_ok &= bytes[off + i] == ((packed[i / 8] >> (i % 8)) & 1u);
        untouched &= bytes[off + n] == 0xEE && (off == 0 || bytes[off - 1] == 0xEE);
    }
    PASS_IF(seeds_ok);
    PASS_IF(bits_ok);
    PASS_IF(untouched);
    free(codes), free(packed), free(bytes);
}

/* The tables' fill from several threads at once (the seventh pass keeps the fill's threads
 * waiting between fills: one fill holds them, a concurrent one starts its own): every result
 * equal to a one-part fill of the same model (the ThreadSanitizer run of `threads` sees it). */
typedef struct concurrent_fill {
    const double *cost;
    int64_t nc;
    int id, same, runs;
} concurrent_fill;

static void *concurrent_fill_run(void *arg) {
    concurrent_fill *job = arg;
    for (int r = 0; r < 4; r++) {
        gcut__seg_tables *t = NULL, *u = NULL;
        if (gcut__seg_tables_alloc(3, 8, &t) == GCUT_OK &&
            gcut__seg_tables_alloc(3, 8, &u) == GCUT_OK) {
            const double sigma = 20.0 + 7.0 * job->id + r;
            const gcut_status a = gcut__seg_tables_fill_parts(
                t, job->cost, job->cost + job->nc, 9.0, sigma, 0.0, 8, 2 + (job->id + 3 * r) % 15);
            const gcut_status b = gcut__seg_tables_fill_parts(u, job->cost, job->cost + job->nc,
                                                              9.0, sigma, 0.0, 8, 1);
            size_t n = 0, m = 0;
            const int32_t *x = gcut__seg_tables_block(t, &n), *y = gcut__seg_tables_block(u, &m);
            job->same += a == GCUT_OK && b == GCUT_OK && n == m &&
                         memcmp(x, y, n * sizeof(int32_t)) == 0 && t->hard == u->hard &&
                         t->scale == u->scale;
            job->runs++;
        }
        gcut__seg_tables_free(t);
        gcut__seg_tables_free(u);
    }
    return NULL;
}

static void test_tables_concurrent(void) {
    const int64_t nc = (int64_t)1 << 18;
    double *cost = malloc((size_t)(2 * nc) * sizeof(double));
    if (cost == NULL)
        return;
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0xC0C0u);
    for (int64_t c = 0; c < 2 * nc; c++)
        cost[c] = test_rng_range(&rng, 0, 40) == 0 ? INFINITY
                                                   : (double)test_rng_range(&rng, 0, 4000) / 100.0;
    concurrent_fill jobs[3];
    pthread_t ids[3];
    bool started[3];
    for (int i = 0; i < 3; i++) {
        jobs[i] = (concurrent_fill){cost, nc, i, 0, 0};
        started[i] = pthread_create(&ids[i], NULL, concurrent_fill_run, &jobs[i]) == 0;
        if (!started[i])
            concurrent_fill_run(&jobs[i]);
    }
    int same = 0, runs = 0;
    for (int i = 0; i < 3; i++) {
        if (started[i])
            pthread_join(ids[i], NULL);
        same += jobs[i].same;
        runs += jobs[i].runs;
    }
    printf("tables filled from 3 threads at once: %d of %d equal to one-part fills\n", same, runs);
    PASS_IF(runs == 12 && same == runs);
    free(cost);
}

int main(void) {
    PASS_IF(gcut__band_offsets_check() == 0);
    test_stage_packing();
    test_table_parts();
    test_tables_concurrent();
    test_block_add();
    test_aggregation();
    test_coarse_grid();
    test_coarsen_project();
    test_band_select();
    test_band_covers_all();
    test_band_provable();
    test_thin_structures();
    test_lost_seeds();
    test_random_certified();
    test_masked_grid_brute();
    test_masked_twin();
    test_out_of_memory();
    test_every_allocation_fails();
    test_errors();
    return test_finish("test_band", passed);
}
