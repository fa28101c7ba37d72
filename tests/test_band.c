/* test_band.c - multilevel narrow-banded segmentation (Lombaert 2005; Lattari 2010 3.5, 5.4):
 * a coarse level's energy is the image's energy of the projected labelling, seeds coarsened
 * and labels projected at odd sizes and on 1-pixel-wide images, banded == full where the band
 * provably holds the cut, honest energies (the result's energy is its cut capacity in the full
 * grid, never below the exact minimum) where the band misses thin detail, lost seeds restored,
 * empty bands, volumes, and clean errors. Randomized parts print their seed. */
#include "internal.h"
#include "../src/seg/seg_internal.h"
#include "util_common.h"

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
                    gcut__band_project(src, dims[cur], dst, dims[cur - 1]);
                    if (src != lab[k])
                        free(src);
                    src = dst;
                    cur--;
                }
                if (k == 0)
                    memcpy(fine[0], lab[0], (size_t)n0);
                free(tmp);
                const int64_t want = gcut__band_energy(&p.base, p.tables, conn, fine[k]);
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

int main(void) {
    test_aggregation();
    return test_finish("test_band", passed);
}
