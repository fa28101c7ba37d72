/* synth.c - the synthetic segmentation benchmark of Hussein et al. 2007, section VII: random
 * ellipses (ellipsoids in 3D) whose pixels come from a 3-component Gaussian mixture, on a
 * background from another, seeds in the central and top-left patches, and the energy whose
 * regional term uses the two known generating mixtures. Deterministic per seed (own PRNG). */
#include "internal.h"
#include "seg_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#define PI 3.14159265358979323846

/* ---- parameters of the two levels (docs/SEGMENT.md lists them) ---- */

typedef struct mixture {
    double mean[3][3]; /* [component][channel] */
    double sd[3];      /* isotropic per component */
    double weight[3];
} mixture;

typedef struct level_params {
    mixture fg, bg;
    double lambda, sigma;
} level_params;

/* [level][0 = RGB (2D), 1 = gray (3D)]. Easy: well separated colours, little noise, a weak
 * boundary term. Hard: nearby means, about twice the noise, and a boundary term strong enough
 * to clean it up - which makes bk's trees grow through much more of the image (2048^2: 75 ms
 * easy, 340 ms hard; 128^3: 115 ms easy, 230 ms hard). The 3D hard boundary term is weaker than
 * the 2D one because a voxel has 6 neighbours and ellipsoids more surface for their size. */
static const level_params levels[2][2] = {
    {{{{{200, 70, 60}, {230, 150, 50}, {170, 60, 140}}, {18, 18, 18}, {0.4, 0.3, 0.3}},
      {{{40, 90, 170}, {60, 160, 90}, {100, 100, 110}}, {18, 18, 18}, {0.4, 0.3, 0.3}},
      10.0,
      30.0},
     {{{{180, 0, 0}, {210, 0, 0}, {235, 0, 0}}, {12, 12, 12}, {0.4, 0.3, 0.3}},
      {{{40, 0, 0}, {75, 0, 0}, {110, 0, 0}}, {12, 12, 12}, {0.4, 0.3, 0.3}},
      10.0,
      20.0}},
    {{{{{170, 100, 90}, {190, 140, 70}, {150, 90, 140}}, {40, 40, 40}, {0.4, 0.3, 0.3}},
      {{{100, 120, 160}, {90, 160, 110}, {120, 110, 170}}, {40, 40, 40}, {0.4, 0.3, 0.3}},
      25.0,
      60.0},
     {{{{150, 0, 0}, {175, 0, 0}, {200, 0, 0}}, {25, 25, 25}, {0.4, 0.3, 0.3}},
      {{{70, 0, 0}, {95, 0, 0}, {120, 0, 0}}, {25, 25, 25}, {0.4, 0.3, 0.3}},
      10.0,
      40.0}}};

/* ---- PRNG: splitmix64, so that images are the same on every platform ---- */

static uint64_t next_u64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double next_unit(uint64_t *state) {
    return (double)(next_u64(state) >> 11) * (1.0 / 9007199254740992.0);
}

static double next_range(uint64_t *state, double lo, double hi) {
    return lo + (hi - lo) * next_unit(state);
}

/* An approximately standard normal value from one draw: the sum of four 16-bit uniforms
 * (Irwin-Hall), integer arithmetic, so bit-identical everywhere; its standard deviation is
 * sqrt(4 * (65536^2 - 1) / 12) = 37837.2. */
static double next_normal(uint64_t *state) {
    uint64_t r = next_u64(state);
    int64_t s = (int64_t)(r & 0xFFFF) + (int64_t)((r >> 16) & 0xFFFF) +
                (int64_t)((r >> 32) & 0xFFFF) + (int64_t)(r >> 48) - 131070;
    return (double)s / 37837.2;
}

/* ---- shapes ---- */

typedef struct ellipsoid {
    double centre[3]; /* (z, y, x) in pixels */
    double axis[3];   /* semi-axes in pixels */
    double rot[3][3]; /* rows: the unit axis directions in (z, y, x) */
} ellipsoid;

static void patch_size(const int64_t dims[3], int64_t patch[3]) {
    for (int k = 0; k < 3; k++) {
        int64_t p = dims[k] / 4;
        patch[k] = p < 1 ? 1 : p > 32 ? 32 : p;
    }
}

static void random_rotation(uint64_t *state, bool three_d, double rot[3][3]) {
    memset(rot, 0, 9 * sizeof(double));
    if (!three_d) {
        double u, v, r2;
        do {
            u = next_range(state, -1, 1);
            v = next_range(state, -1, 1);
            r2 = u * u + v * v;
        } while (r2 > 1.0 || r2 < 0.01);
        double r = sqrt(r2), c = u / r, s = v / r;
        rot[0][0] = 1;
        rot[1][1] = c, rot[1][2] = s;
        rot[2][1] = -s, rot[2][2] = c;
        return;
    }
    double q[4], n2;
    do {
        n2 = 0;
        for (int k = 0; k < 4; k++) {
            q[k] = next_range(state, -1, 1);
            n2 += q[k] * q[k];
        }
    } while (n2 > 1.0 || n2 < 0.01);
    double n = sqrt(n2), w = q[0] / n, a = q[1] / n, b = q[2] / n, c = q[3] / n;
    rot[0][0] = 1 - 2 * (b * b + c * c), rot[0][1] = 2 * (a * b - c * w);
    rot[0][2] = 2 * (a * c + b * w);
    rot[1][0] = 2 * (a * b + c * w), rot[1][1] = 1 - 2 * (a * a + c * c);
    rot[1][2] = 2 * (b * c - a * w);
    rot[2][0] = 2 * (a * c - b * w), rot[2][1] = 2 * (b * c + a * w);
    rot[2][2] = 1 - 2 * (a * a + b * b);
}

/* Half the bounding box of e along each axis. */
static void half_extent(const ellipsoid *e, double ext[3]) {
    for (int i = 0; i < 3; i++) {
        double s = 0;
        for (int j = 0; j < 3; j++)
            s += e->rot[j][i] * e->axis[j] * e->rot[j][i] * e->axis[j];
        ext[i] = sqrt(s);
    }
}

static void draw(const ellipsoid *e, const int64_t dims[3], uint8_t *truth) {
    double ext[3];
    half_extent(e, ext);
    int64_t lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = (int64_t)floor(e->centre[k] - ext[k]);
        hi[k] = (int64_t)ceil(e->centre[k] + ext[k]);
        lo[k] = lo[k] < 0 ? 0 : lo[k];
        hi[k] = hi[k] > dims[k] - 1 ? dims[k] - 1 : hi[k];
    }
    for (int64_t z = lo[0]; z <= hi[0]; z++)
        for (int64_t y = lo[1]; y <= hi[1]; y++)
            for (int64_t x = lo[2]; x <= hi[2]; x++) {
                double p[3] = {(double)z - e->centre[0], (double)y - e->centre[1],
                               (double)x - e->centre[2]};
                double r = 0;
                for (int j = 0; j < 3; j++) {
                    double l = (e->rot[j][0] * p[0] + e->rot[j][1] * p[1] + e->rot[j][2] * p[2]) /
                               e->axis[j];
                    r += l * l;
                }
                if (r <= 1.0)
                    truth[(z * dims[1] + y) * dims[2] + x] = 1;
            }
}

/* The foreground: one ellipse over the central seed patch, then 5-10 more at random places,
 * none touching the top-left (background) seed patch. Sizes are relative to the shortest side,
 * so one seed gives the same picture at every resolution. */
static void make_truth(const int64_t dims[3], uint64_t seed, uint8_t *truth) {
    const bool three_d = dims[0] > 1;
    const int first = three_d ? 0 : 1;
    int64_t patch[3];
    patch_size(dims, patch);
    double m = (double)dims[first];
    for (int k = first + 1; k < 3; k++)
        m = (double)dims[k] < m ? (double)dims[k] : m;
    uint64_t state = seed ^ 0x5EED0F5EC5A11ull;
    memset(truth, 0, (size_t)(dims[0] * dims[1] * dims[2]));
    ellipsoid e;
    /* The central patch's half diagonal, so the first ellipse always covers it. */
    double reach = 0;
    for (int k = first; k < 3; k++)
        reach += 0.25 * (double)(patch[k] * patch[k]);
    reach = sqrt(reach) + 1.5;
    for (int k = 0; k < 3; k++) {
        e.centre[k] = (double)(dims[k] - 1) / 2.0;
        e.axis[k] = k < first ? 0.5 : next_range(&state, 0.15, 0.25) * m;
        if (k >= first && e.axis[k] < reach)
            e.axis[k] = reach;
    }
    random_rotation(&state, three_d, e.rot);
    draw(&e, dims, truth);
    int extra = 5 + (int)(next_u64(&state) % 6);
    for (int i = 0; i < extra; i++) {
        for (int k = 0; k < 3; k++)
            e.axis[k] = k < first ? 0.5 : next_range(&state, 0.05, 0.22) * m;
        random_rotation(&state, three_d, e.rot);
        double ext[3];
        half_extent(&e, ext);
        bool placed = false;
        for (int attempt = 0; attempt < 16 && !placed; attempt++) {
            bool clear = false;
            for (int k = 0; k < 3; k++) {
                e.centre[k] =
                    k < first ? 0.0 : next_range(&state, 0.1, 0.9) * (double)(dims[k] - 1);
                /* Clear of the top-left patch (with a 2-pixel margin) along some axis. */
                if (k >= first && e.centre[k] - ext[k] > (double)patch[k] + 2.0)
                    clear = true;
            }
            placed = clear;
        }
        if (placed)
            draw(&e, dims, truth);
    }
    /* On tiny images the first ellipse can reach the corner: the seeds must agree with the
     * truth whatever the size. */
    int64_t start[3];
    for (int k = 0; k < 3; k++)
        start[k] = (dims[k] - patch[k]) / 2;
    for (int64_t z = 0; z < patch[0]; z++)
        for (int64_t y = 0; y < patch[1]; y++) {
            memset(truth + (z * dims[1] + y) * dims[2], 0, (size_t)patch[2]);
            memset(truth + ((start[0] + z) * dims[1] + start[1] + y) * dims[2] + start[2], 1,
                   (size_t)patch[2]);
        }
}

/* ---- pixels ---- */

gcut_status gcut__synth_pixels(int64_t width, int64_t height, int64_t depth, uint64_t seed,
                               gcut_synth_level level, uint8_t *pixels, uint8_t *truth) {
    const int64_t dims[3] = {depth, height, width};
    const int64_t n = width * height * depth;
    const bool three_d = depth > 1;
    const int ch = three_d ? 1 : 3;
    uint8_t *shape = truth;
    if (shape == NULL && (shape = gcut__malloc((size_t)n, "synthetic truth")) == NULL)
        return GCUT_ERR_NOMEM;
    make_truth(dims, seed, shape);
    const level_params *lp = &levels[level][three_d ? 1 : 0];
    uint32_t cumulative[2][3];
    for (int side = 0; side < 2; side++) {
        const mixture *mx = side ? &lp->fg : &lp->bg;
        double acc = 0;
        for (int k = 0; k < 3; k++) {
            acc += mx->weight[k];
            cumulative[side][k] = k == 2 ? UINT32_MAX : (uint32_t)(acc * 4294967296.0);
        }
    }
    uint64_t state = seed ^ 0xC010125EEDull;
    for (int64_t i = 0; i < n; i++) {
        const int side = shape[i] ? 1 : 0;
        const mixture *mx = side ? &lp->fg : &lp->bg;
        uint32_t r = (uint32_t)(next_u64(&state) >> 32);
        int k = r < cumulative[side][0] ? 0 : r < cumulative[side][1] ? 1 : 2;
        for (int c = 0; c < ch; c++) {
            double v = floor(mx->mean[k][c] + mx->sd[k] * next_normal(&state) + 0.5);
            pixels[i * ch + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    if (truth == NULL)
        gcut__free(shape);
    return GCUT_OK;
}

static gcut_status check_size(const char *fn, int64_t width, int64_t height, int64_t depth) {
    if (width < 1 || height < 1 || depth < 1)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "%s: size %" PRId64 "x%" PRId64 "x%" PRId64 " must be at least 1x1x1", fn,
                          width, height, depth);
    if (width > ((int64_t)1 << 20) || height > ((int64_t)1 << 20) || depth > ((int64_t)1 << 20) ||
        width * height > ((int64_t)1 << 36) / depth)
        return gcut__fail(GCUT_ERR_OVERFLOW,
                          "%s: size %" PRId64 "x%" PRId64 "x%" PRId64 " is too large", fn, width,
                          height, depth);
    return GCUT_OK;
}

static gcut_status check_level(const char *fn, gcut_synth_level level) {
    if (level != GCUT_SYNTH_EASY && level != GCUT_SYNTH_HARD)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "%s: level %d is not GCUT_SYNTH_EASY or _HARD", fn,
                          (int)level);
    return GCUT_OK;
}

gcut_status gcut_synth_image(int64_t width, int64_t height, int64_t depth, uint64_t seed,
                             gcut_synth_level level, gcut_image *image, uint8_t *truth) {
    gcut_status st = check_size("gcut_synth_image", width, height, depth);
    if (st == GCUT_OK)
        st = check_level("gcut_synth_image", level);
    if (st != GCUT_OK)
        return st;
    if (image == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_synth_image: image is NULL");
    st = gcut_image_alloc(image, width, height, depth, depth > 1 ? 1 : 3, 8);
    if (st != GCUT_OK)
        return st;
    st = gcut__synth_pixels(width, height, depth, seed, level, image->pixels, truth);
    if (st != GCUT_OK)
        gcut_image_free(image);
    return st;
}

gcut_status gcut_synth_seeds(int64_t width, int64_t height, int64_t depth, uint8_t *seeds) {
    gcut_status st = check_size("gcut_synth_seeds", width, height, depth);
    if (st != GCUT_OK)
        return st;
    if (seeds == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_synth_seeds: seeds is NULL");
    const int64_t dims[3] = {depth, height, width};
    int64_t patch[3], start[3];
    patch_size(dims, patch);
    for (int k = 0; k < 3; k++)
        start[k] = (dims[k] - patch[k]) / 2;
    memset(seeds, GCUT_SEED_UNKNOWN, (size_t)(width * height * depth));
    for (int64_t z = 0; z < patch[0]; z++)
        for (int64_t y = 0; y < patch[1]; y++) {
            memset(seeds + (z * height + y) * width, GCUT_SEED_BACKGROUND, (size_t)patch[2]);
            memset(seeds + ((start[0] + z) * height + start[1] + y) * width + start[2],
                   GCUT_SEED_FOREGROUND, (size_t)patch[2]);
        }
    return GCUT_OK;
}

/* ---- the benchmark energy ---- */

/* -ln of the mixture density at colour v (channels ch), by log-sum-exp. */
static double mixture_cost(const mixture *mx, const double *v, int ch) {
    double term[3], best = -INFINITY;
    for (int k = 0; k < 3; k++) {
        double d2 = 0;
        for (int c = 0; c < ch; c++)
            d2 += (v[c] - mx->mean[k][c]) * (v[c] - mx->mean[k][c]);
        double var = mx->sd[k] * mx->sd[k];
        term[k] = log(mx->weight[k]) - 0.5 * d2 / var - 0.5 * ch * log(2 * PI * var);
        best = term[k] > best ? term[k] : best;
    }
    double sum = 0;
    for (int k = 0; k < 3; k++)
        sum += exp(term[k] - best);
    return -(best + log(sum));
}

static gcut_status build_synth_tables(gcut_synth_level level, int connectivity,
                                      gcut__seg_tables **out) {
    const bool three_d = connectivity == 6 || connectivity == 26;
    const level_params *lp = &levels[level][three_d ? 1 : 0];
    gcut__seg_tables *t;
    gcut_status st = gcut__seg_tables_alloc(three_d ? 1 : 3, connectivity, &t);
    if (st != GCUT_OK)
        return st;
    double *cost = gcut__malloc(gcut__mul_size((size_t)t->num_colors, 2 * sizeof(double)),
                                "synthetic regional costs");
    if (cost == NULL) {
        gcut__seg_tables_free(t);
        return GCUT_ERR_NOMEM;
    }
    for (int64_t c = 0; c < t->num_colors; c++) {
        /* The centre of the quantisation bin. */
        double v[3];
        if (t->channels == 1) {
            v[0] = (double)c;
        } else {
            v[0] = (double)((c >> 12) << 2) + 1.5;
            v[1] = (double)(((c >> 6) & 63) << 2) + 1.5;
            v[2] = (double)((c & 63) << 2) + 1.5;
        }
        cost[c] = mixture_cost(&lp->fg, v, t->channels);
        cost[t->num_colors + c] = mixture_cost(&lp->bg, v, t->channels);
    }
    st = gcut__seg_tables_fill(t, cost, cost + t->num_colors, lp->lambda, lp->sigma, 0.0,
                               connectivity);
    gcut__free(cost);
    if (st != GCUT_OK) {
        gcut__seg_tables_free(t);
        return st;
    }
    *out = t;
    return GCUT_OK;
}

static int connectivity_slot(int connectivity) {
    switch (connectivity) {
    case 4:
        return 0;
    case 8:
        return 1;
    case 6:
        return 2;
    case 26:
        return 3;
    default:
        return -1;
    }
}

/* Built on first use and then kept: a lost race frees the loser's copy. */
static _Atomic(gcut__seg_tables *) table_cache[2][4];

gcut_status gcut__synth_tables(gcut_synth_level level, int connectivity,
                               const gcut__seg_tables **out) {
    gcut_status st = check_level("synthetic tables", level);
    if (st != GCUT_OK)
        return st;
    int slot = connectivity_slot(connectivity);
    if (slot < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "synthetic tables: connectivity %d is not 4, 8, 6 or 26", connectivity);
    gcut__seg_tables *t = atomic_load(&table_cache[level][slot]);
    if (t == NULL) {
        gcut__seg_tables *made;
        if ((st = build_synth_tables(level, connectivity, &made)) != GCUT_OK)
            return st;
        gcut__seg_tables *expected = NULL;
        if (atomic_compare_exchange_strong(&table_cache[level][slot], &expected, made)) {
            t = made;
        } else {
            gcut__seg_tables_free(made);
            t = expected;
        }
    }
    *out = t;
    return GCUT_OK;
}

gcut_status gcut_synth_grid(int64_t width, int64_t height, int64_t depth, uint64_t seed,
                            gcut_synth_level level, int connectivity, gcut_grid **out) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_synth_grid: out is NULL");
    *out = NULL;
    gcut_status st = check_size("gcut_synth_grid", width, height, depth);
    if (st == GCUT_OK)
        st = check_level("gcut_synth_grid", level);
    if (st != GCUT_OK)
        return st;
    const bool three_d = depth > 1;
    if (connectivity == 0)
        connectivity = three_d ? 6 : 4;
    if ((!three_d && connectivity != 4 && connectivity != 8) ||
        (three_d && connectivity != 6 && connectivity != 26))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_synth_grid: connectivity %d not valid in %s (2D: 4 or 8; 3D: 6 or "
                          "26)",
                          connectivity, three_d ? "3D" : "2D");
    const gcut__seg_tables *tables;
    if ((st = gcut__synth_tables(level, connectivity, &tables)) != GCUT_OK)
        return st;
    const int64_t n = width * height * depth;
    const int ch = three_d ? 1 : 3;
    uint8_t *pixels = gcut__malloc(gcut__mul_size((size_t)n, (size_t)ch), "synthetic image");
    uint8_t *seeds = gcut__malloc((size_t)n, "synthetic seeds");
    gcut_grid *grid = NULL;
    if (pixels == NULL || seeds == NULL) {
        st = GCUT_ERR_NOMEM;
    } else {
        int64_t shape[3] = {depth, height, width};
        st = gcut__synth_pixels(width, height, depth, seed, level, pixels, NULL);
        if (st == GCUT_OK)
            st = gcut_synth_seeds(width, height, depth, seeds);
        if (st == GCUT_OK)
            st =
                gcut_grid_create(three_d ? 3 : 2, three_d ? shape : shape + 1, connectivity, &grid);
        if (st == GCUT_OK)
            gcut__seg_fill_grid(pixels, seeds, tables, grid);
    }
    gcut__free(pixels);
    gcut__free(seeds);
    if (st == GCUT_OK)
        *out = grid;
    return st;
}
