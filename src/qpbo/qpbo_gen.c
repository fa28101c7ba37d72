/* qpbo_gen.c - QPBO benchmark energies: random grid energies with a chosen share of non-
 * submodular terms, and multi-object segmentation energies with one layer of nodes per object
 * and exclusion terms between layers (Jeppesen et al. 2021, section 4). */
#include "qpbo_internal.h"

#include <math.h>
#include <stdlib.h>

static uint64_t gen_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int32_t gen_range(uint64_t *state, int32_t lo, int32_t hi) {
    return lo + (int32_t)(gen_next(state) % (uint64_t)((int64_t)hi - lo + 1));
}

static double gen_uniform(uint64_t *state) {
    return (double)(gen_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* A standard normal sample (Box-Muller). */
static double gen_normal(uint64_t *state) {
    double u = gen_uniform(state), v = gen_uniform(state);
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

gcut_status gcut_qpbo_random(int64_t width, int64_t height, int nonsub_percent, int32_t range,
                             uint64_t seed, gcut_qpbo **out) {
    if (out == NULL || width < 1 || height < 1 || width > (1 << 30) || height > (1 << 30) ||
        nonsub_percent < 0 || nonsub_percent > 100 || range < 0 || range > (1 << 28))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_qpbo_random: width and height in [1, 2^30], nonsub_percent in "
                          "[0, 100], range in [0, 2^28] (got %lld, %lld, %d, %d)",
                          (long long)width, (long long)height, nonsub_percent, range);
    *out = NULL;
    const int64_t n = width * height;
    gcut_qpbo *q = NULL;
    gcut_status st = gcut_qpbo_create(n, 2 * n, &q);
    if (st != GCUT_OK)
        return st;
    uint64_t state = seed;
    for (int64_t p = 0; p < n && st == GCUT_OK; p++)
        st = gcut_qpbo_add_unary(q, p, gen_range(&state, -range, range),
                                 gen_range(&state, -range, range));
    for (int64_t y = 0; y < height && st == GCUT_OK; y++)
        for (int64_t x = 0; x < width && st == GCUT_OK; x++)
            for (int dir = 0; dir < 2 && st == GCUT_OK; dir++) {
                if ((dir == 0 && x + 1 == width) || (dir == 1 && y + 1 == height))
                    continue;
                int64_t p = y * width + x, r = dir == 0 ? p + 1 : p + width;
                bool nonsub = (int)(gen_next(&state) % 100) < nonsub_percent;
                int32_t e[4];
                for (;;) {
                    for (int k = 0; k < 4; k++)
                        e[k] = gen_range(&state, -range, range);
                    int64_t w = (int64_t)e[1] + e[2] - e[0] - e[3];
                    if (nonsub ? w < 0 : w >= 0)
                        break;
                }
                st = gcut_qpbo_add_pairwise(q, p, r, e[0], e[1], e[2], e[3], NULL);
            }
    if (st != GCUT_OK) {
        gcut_qpbo_free(q);
        return st;
    }
    *out = q;
    return GCUT_OK;
}

typedef struct gen_object {
    double center[3], radius, brightness;
    int64_t lo[3], hi[3]; /* region of interest, inclusive, (z, y, x) */
    int64_t first;        /* first node of its layer */
} gen_object;

static int64_t roi_size(const gen_object *o) {
    return (o->hi[0] - o->lo[0] + 1) * (o->hi[1] - o->lo[1] + 1) * (o->hi[2] - o->lo[2] + 1);
}

static int64_t roi_node(const gen_object *o, int64_t z, int64_t y, int64_t x) {
    return o->first +
           ((z - o->lo[0]) * (o->hi[1] - o->lo[1] + 1) + (y - o->lo[1])) *
               (o->hi[2] - o->lo[2] + 1) +
           (x - o->lo[2]);
}

static bool in_roi(const gen_object *o, int64_t z, int64_t y, int64_t x) {
    return z >= o->lo[0] && z <= o->hi[0] && y >= o->lo[1] && y <= o->hi[1] && x >= o->lo[2] &&
           x <= o->hi[2];
}

/* Energies in units of 1/10000 of squared brightness. */
#define GEN_SCALE 10000.0
#define GEN_SMOOTH 40
#define GEN_EXCLUDE 2000

gcut_status gcut_qpbo_objects(int64_t width, int64_t height, int64_t depth, int objects,
                              uint64_t seed, gcut_qpbo **out) {
    if (out == NULL || width < 2 || height < 2 || depth < 1 || objects < 1 || objects > 100000 ||
        width > (1 << 20) || height > (1 << 20) || depth > (1 << 20))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_qpbo_objects: sizes in [2, 2^20] (depth >= 1) and objects in "
                          "[1, 100000] (got %lldx%lldx%lld, %d)",
                          (long long)width, (long long)height, (long long)depth, objects);
    *out = NULL;
    const int64_t size[3] = {depth, height, width};
    const int64_t pixels = width * height * depth;
    const bool volume = depth > 1;
    gen_object *obj = gcut__calloc((size_t)objects, sizeof *obj, "qpbo objects");
    float *image = gcut__malloc(gcut__mul_size((size_t)pixels, sizeof(float)), "qpbo image");
    if (obj == NULL || image == NULL) {
        gcut__free(obj);
        gcut__free(image);
        return GCUT_ERR_NOMEM;
    }
    uint64_t state = seed;
    /* Radii so that the discs cover about half the image. */
    double side = volume ? cbrt((double)pixels / objects) : sqrt((double)pixels / objects);
    double radius = 0.4 * side;
    if (radius < 2)
        radius = 2;
    int64_t nodes = 0;
    for (int k = 0; k < objects; k++) {
        gen_object *o = &obj[k];
        o->radius = radius * (0.6 + 0.4 * gen_uniform(&state));
        o->brightness = 0.35 + 0.6 * (k % 8 + 0.5) / 8.0;
        for (int a = 0; a < 3; a++) {
            o->center[a] = (a == 0 && !volume) ? 0 : gen_uniform(&state) * (double)size[a];
            int64_t grow = (a == 0 && !volume) ? 0 : (int64_t)ceil(2 * o->radius);
            o->lo[a] = (int64_t)floor(o->center[a]) - grow;
            o->hi[a] = (int64_t)floor(o->center[a]) + grow;
            if (o->lo[a] < 0)
                o->lo[a] = 0;
            if (o->hi[a] > size[a] - 1)
                o->hi[a] = size[a] - 1;
        }
        o->first = nodes;
        nodes += roi_size(o);
    }
    for (int64_t i = 0; i < pixels; i++)
        image[i] = (float)(0.1 + 0.06 * gen_normal(&state));
    for (int k = 0; k < objects; k++) {
        const gen_object *o = &obj[k];
        for (int64_t z = o->lo[0]; z <= o->hi[0]; z++)
            for (int64_t y = o->lo[1]; y <= o->hi[1]; y++)
                for (int64_t x = o->lo[2]; x <= o->hi[2]; x++) {
                    double dz = volume ? z + 0.5 - o->center[0] : 0, dy = y + 0.5 - o->center[1],
                           dx = x + 0.5 - o->center[2];
                    if (dz * dz + dy * dy + dx * dx <= o->radius * o->radius)
                        image[(z * height + y) * width + x] =
                            (float)(o->brightness + 0.06 * gen_normal(&state));
                }
    }
    gcut_qpbo *q = NULL;
    int32_t *block =
        gcut__malloc(gcut__mul_size((size_t)nodes + 1, sizeof(int32_t)), "qpbo object blocks");
    gcut_status st = block == NULL ? GCUT_ERR_NOMEM : gcut_qpbo_create(nodes, 4 * nodes, &q);
    /* Data term: label 1 costs the squared distance to the object's brightness, label 0 the
     * squared half-step between brightness levels (the level where the pixel is as likely
     * another's); smoothness: Potts between neighbours of a layer. */
    const double half_step = 0.6 / 16.0;
    for (int k = 0; k < objects && st == GCUT_OK; k++) {
        const gen_object *o = &obj[k];
        for (int64_t z = o->lo[0]; z <= o->hi[0] && st == GCUT_OK; z++)
            for (int64_t y = o->lo[1]; y <= o->hi[1] && st == GCUT_OK; y++)
                for (int64_t x = o->lo[2]; x <= o->hi[2] && st == GCUT_OK; x++) {
                    int64_t p = roi_node(o, z, y, x);
                    block[p] = k;
                    double v = image[(z * height + y) * width + x] - o->brightness;
                    st = gcut_qpbo_add_unary(q, p,
                                             (int32_t)lround(GEN_SCALE * half_step * half_step),
                                             (int32_t)lround(GEN_SCALE * v * v));
                    if (x < o->hi[2] && st == GCUT_OK)
                        st = gcut_qpbo_add_pairwise(q, p, roi_node(o, z, y, x + 1), 0, GEN_SMOOTH,
                                                    GEN_SMOOTH, 0, NULL);
                    if (y < o->hi[1] && st == GCUT_OK)
                        st = gcut_qpbo_add_pairwise(q, p, roi_node(o, z, y + 1, x), 0, GEN_SMOOTH,
                                                    GEN_SMOOTH, 0, NULL);
                    if (z < o->hi[0] && st == GCUT_OK)
                        st = gcut_qpbo_add_pairwise(q, p, roi_node(o, z + 1, y, x), 0, GEN_SMOOTH,
                                                    GEN_SMOOTH, 0, NULL);
                    /* Exclusion with every earlier object whose region holds this pixel. */
                    for (int l = 0; l < k && st == GCUT_OK; l++)
                        if (in_roi(&obj[l], z, y, x))
                            st = gcut_qpbo_add_pairwise(q, roi_node(&obj[l], z, y, x), p, 0, 0, 0,
                                                        GEN_EXCLUDE, NULL);
                }
    }
    if (st == GCUT_OK)
        st = gcut_qpbo_set_blocks(q, block, objects);
    gcut__free(block);
    gcut__free(obj);
    gcut__free(image);
    if (st != GCUT_OK) {
        gcut_qpbo_free(q);
        return st;
    }
    *out = q;
    return GCUT_OK;
}
