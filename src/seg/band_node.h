/* band_node.h - the capacities of one node of a level of a multilevel narrow-banded segmentation
 * (Lombaert et al. 2005; Lattari 2010 3.5 and 5.4), host and device: the block sums of
 * gcut__band_node, and the masked-grid node of a band problem (docs/BAND.md, "GPU"). One copy of
 * the arithmetic for band.c and src/cuda/band_gpu.cu, so that both build the same capacities. */
#ifndef GCUT_BAND_NODE_H
#define GCUT_BAND_NODE_H

#include "seg_internal.h"

#include <stdbool.h>
#include <stdint.h>

/* Bits of a level's state byte: the label (1 = foreground), the band. */
enum { GCUT__BAND_LABEL = 1, GCUT__BAND_IN = 2 };

/* Largest terminal capacity of a coarse node: far above any node's neighbour capacities, so
 * that a block holding seeds of one kind only is still held on that side. */
#define GCUT__BAND_TERMINAL_MAX ((int64_t)1 << 28)

/** Slot of an offset (dz, dy, dx), each in -1..1, in a 27-entry array. */
static inline GCUT__SEG_HD int gcut__band_slot(int dz, int dy, int dx) {
    return (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1);
}

/** Whether pixel i = (z, y, x) of a level of dims {D, H, W} is on the projected boundary (an
 *  axis neighbour has the other label in `state`) or is a seed its projected label contradicts:
 *  the pixels the band grows from (band.c's passes and the device's mark_kernel). */
static inline GCUT__SEG_HD bool gcut__band_boundary(const uint8_t *state, const uint8_t *seeds,
                                                    int64_t i, int64_t z, int64_t y, int64_t x,
                                                    const int64_t dims[3]) {
    const int64_t D = dims[0], H = dims[1], W = dims[2];
    const uint8_t l = state[i] & GCUT__BAND_LABEL;
    bool m = ((seeds[i] & GCUT_SEED_FOREGROUND) && !l) || ((seeds[i] & GCUT_SEED_BACKGROUND) && l);
    m |= x > 0 && (state[i - 1] & GCUT__BAND_LABEL) != l;
    m |= x + 1 < W && (state[i + 1] & GCUT__BAND_LABEL) != l;
    m |= y > 0 && (state[i - W] & GCUT__BAND_LABEL) != l;
    m |= y + 1 < H && (state[i + W] & GCUT__BAND_LABEL) != l;
    m |= z > 0 && (state[i - W * H] & GCUT__BAND_LABEL) != l;
    m |= z + 1 < D && (state[i + W * H] & GCUT__BAND_LABEL) != l;
    return m;
}

/** Whether offset (dz, dy, dx) is a neighbour under connectivity 4, 8, 6 or 26. */
static inline GCUT__SEG_HD bool gcut__band_conn_has(int conn, int dz, int dy, int dx) {
    const int nz = (dz != 0) + (dy != 0) + (dx != 0);
    if (nz == 0)
        return false;
    if ((conn == 4 || conn == 6) && nz != 1)
        return false;
    if ((conn == 4 || conn == 8) && dz != 0)
        return false;
    return true;
}

/** Unary capacities (source, sink) of finest pixel i: K on a seed's side, else the tables'. */
static inline GCUT__SEG_HD void gcut__band_unary(const gcut__band_image *lv,
                                                 const gcut__seg_tables *t, int64_t i, int32_t *s,
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

/** Pair capacity between finest pixels i and j = i + (dz, dy, dx). */
static inline GCUT__SEG_HD int32_t gcut__band_pair(const gcut__band_image *lv,
                                                   const gcut__seg_tables *t, int dz, int dy,
                                                   int dx, int64_t i, int64_t j) {
    const int ch = t->channels;
    const int cls = (dz != 0) + (dy != 0) + (dx != 0) - 1;
    return t->pairwise[cls][gcut__seg_sqdiff(lv->pixels + i * ch, lv->pixels + j * ch, ch)];
}

/** What the solves use at coarse levels (k >= 1), from the block sums s, t, w: the boundary
 *  term half the smaller of the pair sum and the downsampled contrast, per face pixel; the
 *  terminals less their common part, per face pixel, capped (docs/BAND.md, step 2). */
static inline GCUT__SEG_HD void gcut__band_finish(const gcut__seg_tables *tables, int conn, int k,
                                                  bool three_d, const uint8_t *coarse,
                                                  const int64_t coarse_dims[3], int64_t cz,
                                                  int64_t cy, int64_t cx, int64_t *sp, int64_t *tp,
                                                  int64_t w[27]) {
    int64_t s = *sp, t = *tp;
    const int shift = k * (three_d ? 2 : 1);
    const int64_t half = ((int64_t)1 << shift) / 2, m = s < t ? s : t;
    s = (s - m + half) >> shift, t = (t - m + half) >> shift;
    s = s < GCUT__BAND_TERMINAL_MAX ? s : GCUT__BAND_TERMINAL_MAX;
    t = t < GCUT__BAND_TERMINAL_MAX ? t : GCUT__BAND_TERMINAL_MAX;
    const int64_t cD = coarse_dims[0], cH = coarse_dims[1], cW = coarse_dims[2];
    const int ch = tables->channels;
    const uint8_t *pc = coarse + ((cz * cH + cy) * cW + cx) * ch;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if (!gcut__band_conn_has(conn, dz, dy, dx))
                    continue;
                const int64_t nz = cz + dz, ny = cy + dy, nx = cx + dx;
                if (nz < 0 || nz >= cD || ny < 0 || ny >= cH || nx < 0 || nx >= cW)
                    continue;
                const uint8_t *qc = coarse + ((nz * cH + ny) * cW + nx) * ch;
                const int cls = (dz != 0) + (dy != 0) + (dx != 0) - 1;
                const int64_t c = tables->pairwise[cls][gcut__seg_sqdiff(pc, qc, ch)];
                const int sl = gcut__band_slot(dz, dy, dx);
                const int64_t a = (w[sl] + half) >> shift;
                w[sl] = (a < c ? a : c) / 2;
            }
    *sp = s, *tp = t;
}

/** Add finest pixel (z, y, x) of the block box = {z0, z1, y0, y1, x0, x1} of level k's node
 *  (box[0] >> k, box[2] >> k, box[4] >> k) to its sums: its terminal capacities to *s and *t,
 *  and each pair that leaves the block to w at the slot of the neighbouring block. */
static inline GCUT__SEG_HD void gcut__band_pixel_add(const gcut__band_image *lv,
                                                     const gcut__seg_tables *tables, int conn,
                                                     int k, const int64_t box[6], int64_t z,
                                                     int64_t y, int64_t x, int64_t *s, int64_t *t,
                                                     int64_t w[27]) {
    const int64_t D = lv->dims[0], H = lv->dims[1], W = lv->dims[2];
    const int64_t i = (z * H + y) * W + x;
    int32_t us, ut;
    gcut__band_unary(lv, tables, i, &us, &ut);
    *s += us, *t += ut;
    /* Only pairs that leave the block: those inside it are never cut at level k. */
    if ((D == 1 || (z > box[0] && z + 1 < box[1])) && y > box[2] && y + 1 < box[3] && x > box[4] &&
        x + 1 < box[5])
        return;
    const int64_t cz = box[0] >> k, cy = box[2] >> k, cx = box[4] >> k;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if (!gcut__band_conn_has(conn, dz, dy, dx))
                    continue;
                const int64_t nz = z + dz, ny = y + dy, nx = x + dx;
                if (nz < 0 || nz >= D || ny < 0 || ny >= H || nx < 0 || nx >= W)
                    continue;
                const int bz = (int)((nz >> k) - cz), by = (int)((ny >> k) - cy);
                const int bx = (int)((nx >> k) - cx);
                if (bz == 0 && by == 0 && bx == 0)
                    continue;
                w[gcut__band_slot(bz, by, bx)] +=
                    gcut__band_pair(lv, tables, dz, dy, dx, i, (nz * H + ny) * W + nx);
            }
}

/* A loop the device compiler unrolls (the host compiler is left to itself). */
#ifdef __CUDA_ARCH__
#define GCUT__BAND_UNROLL _Pragma("unroll")
#else
#define GCUT__BAND_UNROLL
#endif

/** gcut__band_pixel_add's sums, written so that with conn a compile-time constant (band_gpu.cu's
 *  coarse_caps_kernel<CONN>) every index into w is one too and w stays in registers: the block a
 *  pair reaches is one of the subsets of its offset's nonzero axes (those along which the pixel
 *  sits on the block's face), each tested in turn. The same sums (test_band: test_block_add). */
static inline GCUT__SEG_HD void gcut__band_block_add(const gcut__band_image *lv,
                                                     const gcut__seg_tables *tables, int conn,
                                                     const int64_t box[6], int64_t z, int64_t y,
                                                     int64_t x, int64_t *s, int64_t *t,
                                                     int64_t w[27]) {
    const int64_t D = lv->dims[0], H = lv->dims[1], W = lv->dims[2];
    const int64_t i = (z * H + y) * W + x;
    int32_t us, ut;
    gcut__band_unary(lv, tables, i, &us, &ut);
    *s += us, *t += ut;
    const bool lz = z == box[0], ly = y == box[2], lx = x == box[4];
    const bool hz = z + 1 == box[1], hy = y + 1 == box[3], hx = x + 1 == box[5];
    if (!lz && !ly && !lx && !hz && !hy && !hx)
        return; /* every pair inside the block: never cut at this level */
    GCUT__BAND_UNROLL
    for (int dz = -1; dz <= 1; dz++) {
        GCUT__BAND_UNROLL
        for (int dy = -1; dy <= 1; dy++) {
            GCUT__BAND_UNROLL
            for (int dx = -1; dx <= 1; dx++) {
                if (!gcut__band_conn_has(conn, dz, dy, dx))
                    continue;
                const int64_t nz = z + dz, ny = y + dy, nx = x + dx;
                if (nz < 0 || nz >= D || ny < 0 || ny >= H || nx < 0 || nx >= W)
                    continue;
                const bool cz = dz < 0 ? lz : dz > 0 && hz, cy = dy < 0 ? ly : dy > 0 && hy;
                const bool cx = dx < 0 ? lx : dx > 0 && hx;
                if (!cz && !cy && !cx)
                    continue;
                const int64_t v =
                    gcut__band_pair(lv, tables, dz, dy, dx, i, (nz * H + ny) * W + nx);
                GCUT__BAND_UNROLL
                for (int m = 1; m < 8; m++) { /* bit 2: crosses along z, bit 1: y, bit 0: x */
                    if (((m & 4) && dz == 0) || ((m & 2) && dy == 0) || ((m & 1) && dx == 0))
                        continue;
                    if (cz == ((m & 4) != 0) && cy == ((m & 2) != 0) && cx == ((m & 1) != 0))
                        w[gcut__band_slot((m & 4) ? dz : 0, (m & 2) ? dy : 0, (m & 1) ? dx : 0)] +=
                            v;
                }
            }
        }
    }
}

/** gcut__band_node (seg_internal.h): the block sums of node (cz, cy, cx) of level k, finished
 *  for the solves when coarse != NULL and k > 0. */
static inline GCUT__SEG_HD void
gcut__band_node_sums(const gcut__band_image *lv, const gcut__seg_tables *tables, int conn, int k,
                     const uint8_t *coarse, const int64_t coarse_dims[3], int64_t cz, int64_t cy,
                     int64_t cx, int64_t *source, int64_t *sink, int64_t w[27]) {
    const int64_t D = lv->dims[0], H = lv->dims[1], W = lv->dims[2];
    const int64_t z0 = cz << k, y0 = cy << k, x0 = cx << k;
    const int64_t z1 = (z0 + ((int64_t)1 << k) < D ? z0 + ((int64_t)1 << k) : D);
    const int64_t y1 = (y0 + ((int64_t)1 << k) < H ? y0 + ((int64_t)1 << k) : H);
    const int64_t x1 = (x0 + ((int64_t)1 << k) < W ? x0 + ((int64_t)1 << k) : W);
    int64_t s = 0, t = 0;
    for (int a = 0; a < 27; a++)
        w[a] = 0;
    const int64_t box[6] = {z0, z1, y0, y1, x0, x1};
    for (int64_t z = z0; z < z1; z++)
        for (int64_t y = y0; y < y1; y++)
            for (int64_t x = x0; x < x1; x++)
                gcut__band_pixel_add(lv, tables, conn, k, box, z, y, x, &s, &t, w);
    if (k > 0 && coarse != NULL)
        gcut__band_finish(tables, conn, k, D > 1, coarse, coarse_dims, cz, cy, cx, &s, &t, w);
    *source = s, *sink = t;
}

/** Node (z, y, x) of level k (dims; coarse its downsampled image, unused at k = 0) as a node of
 *  the MASKED GRID of the band problem: state (bit GCUT__BAND_IN the band, GCUT__BAND_LABEL the
 *  projected label; NULL = every node is in the band, the coarsest level's full solve). A band
 *  node gets its level's capacities, its n-links to band neighbours in w, and each n-link to a
 *  neighbour outside the band (whose label is fixed to its projection) folded into its source
 *  capacity (neighbour foreground) or sink capacity (background), that n-link zeroed; a node
 *  outside the band gets nothing (isolated). The minimum cut of this grid restricted to the band
 *  is the band problem's minimum, and its flow the band graph's (band.c's solve_band). */
static inline GCUT__SEG_HD void
gcut__band_masked_node(const gcut__band_image *lv, const gcut__seg_tables *tables, int conn, int k,
                       const uint8_t *coarse, const int64_t dims[3], const uint8_t *state,
                       int64_t z, int64_t y, int64_t x, int64_t *source, int64_t *sink,
                       int64_t w[27]) {
    const int64_t H = dims[1], W = dims[2];
    if (state != NULL && !(state[(z * H + y) * W + x] & GCUT__BAND_IN)) {
        for (int a = 0; a < 27; a++)
            w[a] = 0;
        *source = 0, *sink = 0;
        return;
    }
    int64_t s, t;
    gcut__band_node_sums(lv, tables, conn, k, coarse, dims, z, y, x, &s, &t, w);
    if (state != NULL)
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    const int sl = gcut__band_slot(dz, dy, dx);
                    const int64_t c = w[sl];
                    if (c == 0)
                        continue; /* also every neighbour outside the level */
                    const uint8_t q = state[((z + dz) * H + (y + dy)) * W + (x + dx)];
                    if (q & GCUT__BAND_IN)
                        continue;
                    if (q & GCUT__BAND_LABEL)
                        s += c;
                    else
                        t += c;
                    w[sl] = 0;
                }
    *source = s, *sink = t;
}

#endif /* GCUT_BAND_NODE_H */
