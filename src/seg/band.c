/* band.c - multilevel narrow-banded segmentation (Lombaert et al. 2005; Lattari 2010 3.5 and
 * 5.4, Algorithm 15): coarsen image and seeds, solve the coarsest level in full, then at each
 * finer level re-solve only a band around the projected boundary, as a compact general graph
 * whose outer layer is folded into terminal capacities. docs/BAND.md states the guarantees. */
#include "internal.h"
#include "seg_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Bits of a level's state byte (the caller's mask at the finest level). */
enum { LABEL = 1, BAND = 2, MARK = 4 };

/* The canonical half of a neighbourhood: offsets (dz, dy, dx) whose first non-zero component
 * is positive; the other half are their negatives. @return their number. */
static int half_offsets(int connectivity, int off[13][3]) {
    int count = 0;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                const int nz = (dz != 0) + (dy != 0) + (dx != 0);
                const int first = dz != 0 ? dz : dy != 0 ? dy : dx;
                if (nz == 0 || first < 0)
                    continue;
                if ((connectivity == 4 || connectivity == 6) && nz != 1)
                    continue;
                if ((connectivity == 4 || connectivity == 8) && dz != 0)
                    continue;
                off[count][0] = dz, off[count][1] = dy, off[count][2] = dx;
                count++;
            }
    return count;
}

static int64_t half_up(int64_t side) {
    return (side + 1) / 2;
}

void gcut__band_coarsen(const gcut__band_image *fine, uint8_t *pixels, uint8_t *seeds,
                        int64_t coarse_dims[3]) {
    const int64_t D = fine->dims[0], H = fine->dims[1], W = fine->dims[2];
    const int ch = fine->channels;
    for (int k = 0; k < 3; k++)
        coarse_dims[k] = half_up(fine->dims[k]);
    const int64_t cd = coarse_dims[0], chh = coarse_dims[1], cw = coarse_dims[2];
    for (int64_t z = 0; z < cd; z++)
        for (int64_t y = 0; y < chh; y++)
            for (int64_t x = 0; x < cw; x++) {
                unsigned sum[3] = {0, 0, 0}, count = 0;
                bool fg = false, bg = false;
                for (int64_t fz = 2 * z; fz < 2 * z + 2 && fz < D; fz++)
                    for (int64_t fy = 2 * y; fy < 2 * y + 2 && fy < H; fy++)
                        for (int64_t fx = 2 * x; fx < 2 * x + 2 && fx < W; fx++) {
                            const int64_t i = (fz * H + fy) * W + fx;
                            for (int c = 0; c < ch; c++)
                                sum[c] += fine->pixels[i * ch + c];
                            count++;
                            fg |= fine->seeds[i] == GCUT_SEED_FOREGROUND;
                            bg |= fine->seeds[i] == GCUT_SEED_BACKGROUND;
                        }
                const int64_t j = (z * chh + y) * cw + x;
                for (int c = 0; c < ch; c++)
                    pixels[j * ch + c] = (uint8_t)((sum[c] + count / 2) / count);
                seeds[j] = fg && !bg   ? GCUT_SEED_FOREGROUND
                           : bg && !fg ? GCUT_SEED_BACKGROUND
                                       : GCUT_SEED_UNKNOWN;
            }
}

void gcut__band_project(const uint8_t *coarse, const int64_t coarse_dims[3], uint8_t *fine,
                        const int64_t fine_dims[3]) {
    const int64_t D = fine_dims[0], H = fine_dims[1], W = fine_dims[2];
    const int64_t ch = coarse_dims[1], cw = coarse_dims[2];
    for (int64_t z = 0; z < D; z++)
        for (int64_t y = 0; y < H; y++) {
            const uint8_t *src = coarse + ((z / 2) * ch + y / 2) * cw;
            uint8_t *dst = fine + (z * H + y) * W;
            for (int64_t x = 0; x < W; x++)
                dst[x] = src[x / 2] & LABEL;
        }
}

/* Unary capacities (source, sink) of pixel i. */
static void unary(const gcut__band_image *lv, const gcut__seg_tables *t, int64_t i, int32_t *s,
                  int32_t *k) {
    if (lv->seeds[i] == GCUT_SEED_FOREGROUND) {
        *s = t->hard, *k = 0;
    } else if (lv->seeds[i] == GCUT_SEED_BACKGROUND) {
        *s = 0, *k = t->hard;
    } else {
        const int64_t q = gcut__seg_color_index(lv->pixels + i * t->channels, t->channels);
        *s = t->unary_source[q], *k = t->unary_sink[q];
    }
}

static int32_t pairwise(const gcut__band_image *lv, const gcut__seg_tables *t, const int *off,
                        int64_t i, int64_t j) {
    const int ch = t->channels;
    return t->pairwise[gcut__seg_offset_class(off)]
                      [gcut__seg_sqdiff(lv->pixels + i * ch, lv->pixels + j * ch, ch)];
}

int64_t gcut__band_energy(const gcut__band_image *lv, const gcut__seg_tables *tables,
                          int connectivity, const uint8_t *labels) {
    int off[13][3];
    const int nh = half_offsets(connectivity, off);
    const int64_t D = lv->dims[0], H = lv->dims[1], W = lv->dims[2];
    int64_t energy = 0;
    for (int64_t z = 0; z < D; z++)
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++) {
                const int64_t i = (z * H + y) * W + x;
                const int fg = labels[i] & LABEL;
                int32_t s, k;
                unary(lv, tables, i, &s, &k);
                energy += fg ? k : s; /* foreground cuts pixel->sink, background source->pixel */
                for (int d = 0; d < nh; d++) {
                    const int64_t nz = z + off[d][0], ny = y + off[d][1], nx = x + off[d][2];
                    if (nz >= D || ny >= H || nx < 0 || nx >= W)
                        continue;
                    const int64_t j = (nz * H + ny) * W + nx;
                    if ((labels[j] & LABEL) != fg)
                        energy += pairwise(lv, tables, off[d], i, j);
                }
            }
    return energy;
}

/* Set BAND on every pixel within Chebyshev distance d of a MARK pixel, and clear MARK.
 * @return the number of MARK pixels found. */
static int64_t dilate_marks(uint8_t *state, const int64_t dims[3], int64_t d) {
    const int64_t D = dims[0], H = dims[1], W = dims[2];
    int64_t marks = 0;
    for (int64_t z = 0; z < D; z++)
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++) {
                uint8_t *p = &state[(z * H + y) * W + x];
                if (!(*p & MARK))
                    continue;
                *p &= (uint8_t)~MARK;
                marks++;
                const int64_t z0 = z - d < 0 ? 0 : z - d, z1 = z + d >= D ? D - 1 : z + d;
                const int64_t y0 = y - d < 0 ? 0 : y - d, y1 = y + d >= H ? H - 1 : y + d;
                const int64_t x0 = x - d < 0 ? 0 : x - d, x1 = x + d >= W ? W - 1 : x + d;
                for (int64_t zz = z0; zz <= z1; zz++)
                    for (int64_t yy = y0; yy <= y1; yy++) {
                        uint8_t *row = state + (zz * H + yy) * W;
                        for (int64_t xx = x0; xx <= x1; xx++)
                            row[xx] |= BAND; /* MARK of later pixels is left alone */
                    }
            }
    return marks;
}

/* MARK the pixels of the projected boundary (both sides of every axis pair with different
 * labels) and the seeds the projection contradicts. */
static void mark_boundary(uint8_t *state, const uint8_t *seeds, const int64_t dims[3]) {
    const int64_t D = dims[0], H = dims[1], W = dims[2];
    for (int64_t z = 0; z < D; z++)
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++) {
                const int64_t i = (z * H + y) * W + x;
                const uint8_t l = state[i] & LABEL;
                if ((seeds[i] == GCUT_SEED_FOREGROUND && !l) ||
                    (seeds[i] == GCUT_SEED_BACKGROUND && l))
                    state[i] |= MARK;
                if (x + 1 < W && (state[i + 1] & LABEL) != l)
                    state[i] |= MARK, state[i + 1] |= MARK;
                if (y + 1 < H && (state[i + W] & LABEL) != l)
                    state[i] |= MARK, state[i + W] |= MARK;
                if (z + 1 < D && (state[i + W * H] & LABEL) != l)
                    state[i] |= MARK, state[i + W * H] |= MARK;
            }
}

/* The band, numbered compactly in raster order: node k is at x = xs[k] in row r (= z * H + y)
 * for row_start[r] <= k < row_start[r + 1]. */
typedef struct band_index {
    int64_t rows;
    int64_t *row_start; /* rows + 1 */
    int32_t *xs;        /* one per band node */
    int64_t nodes;
} band_index;

static void band_index_free(band_index *b) {
    gcut__free(b->row_start);
    gcut__free(b->xs);
    memset(b, 0, sizeof *b);
}

static gcut_status band_index_build(const uint8_t *state, const int64_t dims[3], band_index *b) {
    memset(b, 0, sizeof *b);
    const int64_t W = dims[2];
    b->rows = dims[0] * dims[1];
    b->row_start = gcut__malloc(gcut__mul_size((size_t)b->rows + 1, sizeof(int64_t)), "band rows");
    if (b->row_start == NULL)
        return GCUT_ERR_NOMEM;
    int64_t count = 0;
    for (int64_t r = 0; r < b->rows; r++) {
        b->row_start[r] = count;
        const uint8_t *row = state + r * W;
        for (int64_t x = 0; x < W; x++)
            count += (row[x] & BAND) != 0;
    }
    b->row_start[b->rows] = count;
    b->nodes = count;
    b->xs = gcut__malloc(gcut__mul_size((size_t)count + 1, sizeof(int32_t)), "band nodes");
    if (b->xs == NULL) {
        band_index_free(b);
        return GCUT_ERR_NOMEM;
    }
    for (int64_t r = 0, k = 0; r < b->rows; r++) {
        const uint8_t *row = state + r * W;
        for (int64_t x = 0; x < W; x++)
            if (row[x] & BAND)
                b->xs[k++] = (int32_t)x;
    }
    return GCUT_OK;
}

/* The node of the band pixel at x in row r (known to be in the band). */
static int64_t band_find(const band_index *b, int64_t r, int64_t x) {
    int64_t lo = b->row_start[r], hi = b->row_start[r + 1] - 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (b->xs[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The graph solver for bands: the one asked for if it takes general graphs, else bk. */
static const char *band_solver(const gcut_options *options) {
    gcut_solver_info info;
    if (options != NULL && options->solver != NULL && strcmp(options->solver, "auto") != 0 &&
        gcut_solver_find(options->solver, &info) == GCUT_OK && (info.flags & GCUT_TAKES_GRAPH) &&
        info.available)
        return info.name;
    return "bk";
}

/* Build the band problem of a level and solve it; the band's labels go to bit 0 of state.
 * Band pixels are nodes; a neighbour outside the band (the outer layer) keeps its projected
 * label, so its pair becomes a terminal capacity of the band node (source if the neighbour is
 * foreground: cut when the node goes to background). */
static gcut_status solve_band(const gcut__band_image *lv, const gcut__seg_tables *tables,
                              int connectivity, const gcut_options *options, uint8_t *state,
                              const band_index *b, struct gcut_seg_level *rep) {
    int off[13][3];
    const int nh = half_offsets(connectivity, off);
    const int64_t D = lv->dims[0], H = lv->dims[1], W = lv->dims[2];
    const double t0 = gcut__now_ms();
    gcut_graph *g = NULL;
    uint8_t *labels = NULL;
    gcut_status st = gcut_graph_create(b->nodes, b->nodes * nh, &g);
    if (st != GCUT_OK)
        return st;
    for (int64_t r = 0; r < b->rows && st == GCUT_OK; r++) {
        const int64_t z = r / H, y = r % H;
        for (int64_t k = b->row_start[r]; k < b->row_start[r + 1] && st == GCUT_OK; k++) {
            const int64_t x = b->xs[k], i = r * W + x;
            int32_t s32, t32;
            unary(lv, tables, i, &s32, &t32);
            int64_t s = s32, t = t32;
            for (int h = 0; h < nh; h++)
                for (int sign = 1; sign >= -1; sign -= 2) {
                    const int64_t nz = z + sign * off[h][0], ny = y + sign * off[h][1];
                    const int64_t nx = x + sign * off[h][2];
                    if (nz < 0 || nz >= D || ny < 0 || ny >= H || nx < 0 || nx >= W)
                        continue;
                    const int64_t j = (nz * H + ny) * W + nx;
                    const int32_t w = pairwise(lv, tables, off[h], i, j);
                    if (state[j] & BAND) {
                        if (sign > 0 && w > 0) {
                            /* the next pixel of the row is the next node */
                            const int64_t node = off[h][0] == 0 && off[h][1] == 0
                                                     ? k + 1
                                                     : band_find(b, nz * H + ny, nx);
                            st = gcut_graph_add_edge(g, k, node, w, w);
                            rep->edges++;
                        }
                    } else if (state[j] & LABEL) {
                        s += w;
                    } else {
                        t += w;
                    }
                }
            if (st == GCUT_OK)
                st = gcut_graph_add_tweights(g, k, (int32_t)s, (int32_t)t);
        }
    }
    const double t1 = gcut__now_ms();
    rep->build_ms += t1 - t0;
    if (st == GCUT_OK) {
        labels = gcut__malloc((size_t)b->nodes + 1, "band labels");
        if (labels == NULL)
            st = GCUT_ERR_NOMEM;
    }
    if (st == GCUT_OK) {
        gcut_options o;
        gcut_options_init(&o);
        if (options != NULL)
            o = *options;
        o.solver = band_solver(options);
        o.verbose = 0;
        gcut_stats stats;
        st = gcut_graph_solve(g, &o, &rep->flow, labels, &stats);
    }
    gcut_graph_free(g);
    if (st == GCUT_OK)
        for (int64_t r = 0; r < b->rows; r++)
            for (int64_t k = b->row_start[r]; k < b->row_start[r + 1]; k++) {
                uint8_t *p = &state[r * W + b->xs[k]];
                *p = (uint8_t)((*p & ~LABEL) | (labels[k] == GCUT_SOURCE ? LABEL : 0));
            }
    gcut__free(labels);
    rep->solve_ms += gcut__now_ms() - t1;
    rep->rounds++;
    return st;
}

/* MARK the outer-layer pixels that the band's cut touches: neighbours outside the band whose
 * label differs from a band pixel's. @return whether any. */
static bool mark_touches(uint8_t *state, const int64_t dims[3], int connectivity,
                         const band_index *b) {
    int off[13][3];
    const int nh = half_offsets(connectivity, off);
    const int64_t D = dims[0], H = dims[1], W = dims[2];
    bool any = false;
    for (int64_t r = 0; r < b->rows; r++) {
        const int64_t z = r / H, y = r % H;
        for (int64_t k = b->row_start[r]; k < b->row_start[r + 1]; k++) {
            const int64_t x = b->xs[k];
            const uint8_t l = state[r * W + x] & LABEL;
            for (int h = 0; h < nh; h++)
                for (int sign = 1; sign >= -1; sign -= 2) {
                    const int64_t nz = z + sign * off[h][0], ny = y + sign * off[h][1];
                    const int64_t nx = x + sign * off[h][2];
                    if (nz < 0 || nz >= D || ny < 0 || ny >= H || nx < 0 || nx >= W)
                        continue;
                    uint8_t *q = &state[(nz * H + ny) * W + nx];
                    if (!(*q & BAND) && (*q & LABEL) != l) {
                        *q |= MARK;
                        any = true;
                    }
                }
        }
    }
    return any;
}

/* The tables of level k >= 1: a coarse pixel stands for 2^k x 2^k (x 2^k) pixels and a coarse
 * neighbour pair for 2^k (2^2k in 3D) pairs, so the regional term is weighed 2^k times more
 * against the boundary term than at the finest level (the same ratio as the area or volume to
 * the boundary length or surface). A shallow copy whose unary arrays are its own. */
static gcut_status level_tables(const gcut__seg_tables *base, int k, gcut__seg_tables *out) {
    *out = *base;
    out->unary_source = gcut__malloc(gcut__mul_size((size_t)base->num_colors, 4), "level tables");
    out->unary_sink = gcut__malloc(gcut__mul_size((size_t)base->num_colors, 4), "level tables");
    if (out->unary_source == NULL || out->unary_sink == NULL) {
        gcut__free(out->unary_source);
        gcut__free(out->unary_sink);
        out->unary_source = out->unary_sink = NULL;
        return GCUT_ERR_NOMEM;
    }
    const int64_t factor = (int64_t)1 << k, cap = (int64_t)1 << 28;
    for (int64_t c = 0; c < base->num_colors; c++) {
        const int64_t s = base->unary_source[c] * factor, t = base->unary_sink[c] * factor;
        out->unary_source[c] = (int32_t)(s < cap ? s : cap);
        out->unary_sink[c] = (int32_t)(t < cap ? t : cap);
    }
    return GCUT_OK;
}

/* Levels for GCUT_SEG_LEVELS_AUTO: none below 2^20 pixels; else halve until the coarsest
 * level has at most 2^18 pixels (2D) or 2^21 voxels (3D). */
static int auto_levels(const int64_t dims[3]) {
    int64_t n = dims[0] * dims[1] * dims[2];
    if (n < ((int64_t)1 << 20))
        return 0;
    const int64_t target = dims[0] > 1 ? (int64_t)1 << 21 : (int64_t)1 << 18;
    int levels = 0;
    int64_t d[3] = {dims[0], dims[1], dims[2]};
    while (n > target && levels < GCUT_SEG_MAX_LEVELS) {
        for (int k = 0; k < 3; k++)
            d[k] = half_up(d[k]);
        n = d[0] * d[1] * d[2];
        levels++;
    }
    return levels;
}

gcut_status gcut__band_segment(const gcut_image *image, const uint8_t *seeds,
                               const gcut_seg_params *params, const gcut_options *options,
                               uint8_t *mask, gcut_seg_report *r) {
    int levels = params->levels;
    if (levels == GCUT_SEG_LEVELS_AUTO && image != NULL && image->width > 0 && image->height > 0 &&
        image->depth > 0) {
        const int64_t dims[3] = {image->depth, image->height, image->width};
        if ((levels = auto_levels(dims)) == 0) {
            gcut_seg_params full = *params; /* small: the ordinary full solve */
            full.levels = 0;
            return gcut_segment(image, seeds, &full, options, mask, r);
        }
    }
    gcut__seg_tables *tables;
    const uint8_t *pixels;
    uint8_t *owned;
    gcut_status st = gcut__seg_prepare(image, seeds, params, &tables, &pixels, &owned, r);
    if (st != GCUT_OK)
        return st;
    const double tables_ms = r->build_ms;
    const int conn = r->connectivity;
    const bool verbose = options != NULL && options->verbose;
    gcut__band_image lv[GCUT_SEG_MAX_LEVELS + 1];
    uint8_t *state[GCUT_SEG_MAX_LEVELS + 1];
    uint8_t *own_pixels[GCUT_SEG_MAX_LEVELS + 1];
    gcut__seg_tables lt[GCUT_SEG_MAX_LEVELS + 1]; /* [0] unused: the finest uses tables */
    memset(lt, 0, sizeof lt);
    memset(lv, 0, sizeof lv);
    memset(state, 0, sizeof state);
    memset(own_pixels, 0, sizeof own_pixels);
    lv[0].dims[0] = image->depth, lv[0].dims[1] = image->height, lv[0].dims[2] = image->width;
    lv[0].channels = tables->channels;
    lv[0].pixels = pixels;
    lv[0].seeds = seeds;
    state[0] = mask;
    const int64_t d = params->band;
    r->levels = levels;
    int64_t flow = 0;
    for (int k = 0; k <= levels; k++) {
        struct gcut_seg_level *rep = &r->level[k];
        rep->depth = lv[k].dims[0], rep->height = lv[k].dims[1], rep->width = lv[k].dims[2];
    }
    /* Coarsening: pixels and seeds of each level in one block. */
    for (int k = 1; k <= levels; k++) {
        const double t0 = gcut__now_ms();
        int64_t cd[3];
        for (int a = 0; a < 3; a++)
            cd[a] = half_up(lv[k - 1].dims[a]);
        const int64_t n = cd[0] * cd[1] * cd[2];
        uint8_t *block =
            gcut__malloc(gcut__mul_size((size_t)n, (size_t)lv[0].channels + 2), "coarse level");
        if (block == NULL) {
            st = GCUT_ERR_NOMEM;
            goto done;
        }
        own_pixels[k] = block;
        if ((st = level_tables(tables, k, &lt[k])) != GCUT_OK)
            goto done;
        gcut__band_coarsen(&lv[k - 1], block, block + n * lv[0].channels, lv[k].dims);
        lv[k].channels = lv[0].channels;
        lv[k].pixels = block;
        lv[k].seeds = block + n * lv[0].channels;
        state[k] = block + n * (lv[0].channels + 1);
        struct gcut_seg_level *rep = &r->level[k];
        rep->depth = lv[k].dims[0], rep->height = lv[k].dims[1], rep->width = lv[k].dims[2];
        rep->build_ms += gcut__now_ms() - t0;
    }
    /* The coarsest level in full, with the solver asked for (cuda-grid included). */
    {
        struct gcut_seg_level *rep = &r->level[levels];
        const double t0 = gcut__now_ms();
        const bool three_d = image->depth > 1;
        gcut_grid *grid = NULL;
        st = gcut_grid_create(three_d ? 3 : 2, three_d ? lv[levels].dims : lv[levels].dims + 1,
                              conn, &grid);
        if (st != GCUT_OK)
            goto done;
        gcut__seg_fill_grid(lv[levels].pixels, lv[levels].seeds, &lt[levels], grid);
        rep->build_ms += gcut__now_ms() - t0;
        const double t1 = gcut__now_ms();
        st = gcut_grid_solve(grid, options, &rep->flow, state[levels], &r->stats);
        gcut_grid_free(grid);
        if (st != GCUT_OK)
            goto done;
        const int64_t n = lv[levels].dims[0] * lv[levels].dims[1] * lv[levels].dims[2];
        for (int64_t i = 0; i < n; i++)
            state[levels][i] = state[levels][i] == GCUT_SOURCE ? LABEL : 0;
        rep->nodes = n;
        rep->rounds = 1;
        rep->solve_ms = gcut__now_ms() - t1;
        flow = rep->flow;
        if (verbose)
            fprintf(stderr,
                    "gcut segment: level %d (%" PRId64 "x%" PRId64 "x%" PRId64
                    ") solved in full, %.1f ms\n",
                    levels, rep->width, rep->height, rep->depth, rep->build_ms + rep->solve_ms);
    }
    /* Uncoarsening: project, band, solve the band. */
    for (int k = levels - 1; k >= 0; k--) {
        struct gcut_seg_level *rep = &r->level[k];
        const double t0 = gcut__now_ms();
        gcut__band_project(state[k + 1], lv[k + 1].dims, state[k], lv[k].dims);
        mark_boundary(state[k], lv[k].seeds, lv[k].dims);
        dilate_marks(state[k], lv[k].dims, d);
        rep->build_ms += gcut__now_ms() - t0;
        for (int round = 0;; round++) {
            const double t1 = gcut__now_ms();
            band_index b;
            if ((st = band_index_build(state[k], lv[k].dims, &b)) != GCUT_OK)
                goto done;
            rep->build_ms += gcut__now_ms() - t1;
            rep->nodes = b.nodes;
            rep->edges = 0;
            if (b.nodes == 0) {
                rep->flow = 0;
                band_index_free(&b);
                break; /* an empty band: the projection stands */
            }
            st = solve_band(&lv[k], k > 0 ? &lt[k] : tables, conn, options, state[k], &b, rep);
            bool grow = false;
            if (st == GCUT_OK && params->band_grow && round < 31) {
                const double t2 = gcut__now_ms();
                grow = mark_touches(state[k], lv[k].dims, conn, &b);
                if (grow)
                    dilate_marks(state[k], lv[k].dims, d > 0 ? d : 1);
                rep->build_ms += gcut__now_ms() - t2;
            }
            band_index_free(&b);
            if (st != GCUT_OK)
                goto done;
            if (!grow)
                break;
        }
        flow = rep->flow;
        if (verbose) {
            const int64_t n = lv[k].dims[0] * lv[k].dims[1] * lv[k].dims[2];
            fprintf(stderr,
                    "gcut segment: level %d (%" PRId64 "x%" PRId64 "x%" PRId64 ") band %" PRId64
                    " nodes (%.2f%%), %d round%s, %.1f ms\n",
                    k, rep->width, rep->height, rep->depth, rep->nodes,
                    100.0 * (double)rep->nodes / (double)n, rep->rounds,
                    rep->rounds == 1 ? "" : "s", rep->build_ms + rep->solve_ms);
        }
        gcut__free(own_pixels[k + 1]); /* the coarser level is done with */
        own_pixels[k + 1] = NULL;
    }
    {
        const double t0 = gcut__now_ms();
        r->energy = gcut__band_energy(&lv[0], tables, conn, mask);
        r->energy_ms = gcut__now_ms() - t0;
    }
    {
        const int64_t n = image->width * image->height * image->depth;
        int64_t fg = 0;
        for (int64_t i = 0; i < n; i++) {
            mask[i] = mask[i] & LABEL;
            fg += mask[i];
        }
        r->foreground_pixels = fg;
    }
    r->build_ms = tables_ms;
    r->solve_ms = 0;
    for (int k = 0; k <= levels; k++) {
        r->build_ms += r->level[k].build_ms;
        r->solve_ms += r->level[k].solve_ms;
    }
    r->stats.flow = flow;
done:
    for (int k = 1; k <= GCUT_SEG_MAX_LEVELS; k++) {
        gcut__free(own_pixels[k]);
        gcut__free(lt[k].unary_source);
        gcut__free(lt[k].unary_sink);
    }
    gcut__seg_tables_free(tables);
    gcut__free(owned);
    return st;
}
