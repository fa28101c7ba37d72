/* video_kernels.h - per-pixel steps of the propagation (Garrett & Saito 2009, 3-4: the mask of
 * the last frame gives the next one's seeds) written once for the host and the GPU: the
 * boundary test, the chamfer (3-4) distance as row distances then a column scan, and the seed
 * rule. video.c's host path and video_cuda.cu's kernels call the same functions. */
#ifndef GCUT_VIDEO_KERNELS_H
#define GCUT_VIDEO_KERNELS_H

#include "gcut.h"

#include <stdint.h>

#ifdef __CUDACC__
#define GCUT__VK_HD __host__ __device__
#else
#define GCUT__VK_HD
#endif

#define GCUT__VK_AXIS 3 /* 3-4 chamfer distance: 3 per axis step, 4 per diagonal step */
#define GCUT__VK_DIAG 4
#define GCUT__VK_INF (INT32_MAX / 2) /* "farther than anything compared" */
/* A row distance meaning "no boundary pixel in this row's searched span". */
#define GCUT__VK_NONE (1 << 24)

/** 1 when the pixel (x, y) of mask (w x h, 0/1) is on the boundary: a 4-neighbour inside the
 *  frame has the other label (the distance map's zeros). */
static inline GCUT__VK_HD int gcut__vk_edge(const uint8_t *mask, int64_t w, int64_t h, int64_t x,
                                            int64_t y) {
    const uint8_t *m = mask + y * w;
    const uint8_t c = m[x];
    const uint8_t l = x > 0 ? m[x - 1] : c, r = x + 1 < w ? m[x + 1] : c;
    const uint8_t u = y > 0 ? m[x - w] : c, d = y + 1 < h ? m[x + w] : c;
    return (l != c) | (r != c) | (u != c) | (d != c);
}

/** The 3-4 chamfer distance of an offset (a, b), a, b >= 0: min(a, b) diagonal steps and
 *  |a - b| axis steps, 3 max + min (the cheapest path of the 3x3 mask; the two-pass chamfer
 *  transform computes the minimum of this over the boundary pixels). */
static inline GCUT__VK_HD int32_t gcut__vk_chamfer(int32_t a, int32_t b) {
    return a > b ? GCUT__VK_AXIS * a + (GCUT__VK_DIAG - GCUT__VK_AXIS) * b
                 : GCUT__VK_AXIS * b + (GCUT__VK_DIAG - GCUT__VK_AXIS) * a;
}

/** Row y's distances hd[x] (x in [x0, x1)) to its nearest boundary pixel within those
 *  columns, GCUT__VK_NONE where the span has none: a sweep from each side. */
static inline GCUT__VK_HD void gcut__vk_row_distance(const uint8_t *mask, int64_t w, int64_t h,
                                                     int64_t y, int64_t x0, int64_t x1,
                                                     int32_t *hd) {
    int32_t run = GCUT__VK_NONE;
    for (int64_t x = x0; x < x1; x++) {
        run = gcut__vk_edge(mask, w, h, x, y) ? 0 : run == GCUT__VK_NONE ? run : run + 1;
        hd[x] = run;
    }
    run = GCUT__VK_NONE;
    for (int64_t x = x1 - 1; x >= x0; x--) {
        run = hd[x] == 0 ? 0 : run == GCUT__VK_NONE ? run : run + 1;
        hd[x] = run < hd[x] ? run : hd[x];
    }
}

/** The chamfer distance of pixel (x, y) to the nearest boundary pixel, from row distances:
 *  hd[r * w + x] is the pixel distance |dx| from (x, r) to the nearest boundary pixel of row r
 *  (GCUT__VK_NONE where there is none), given for rows [y0, y1), which hold every boundary
 *  pixel. For a fixed row the chamfer distance grows with |dx|, so the row's nearest boundary
 *  pixel is its best; rows are scanned outwards from y and the scan stops once 3 |dy| exceeds
 *  the best found, or past max_rows rows. @return the distance when it is at most
 *  3 * max_rows, else a value above 3 * max_rows (GCUT__VK_INF when no row within max_rows
 *  has a boundary pixel). */
static inline GCUT__VK_HD int32_t gcut__vk_column_scan(const int32_t *hd, int64_t w, int64_t y0,
                                                       int64_t y1, int64_t x, int64_t y,
                                                       int64_t max_rows) {
    int32_t best = GCUT__VK_INF;
    for (int64_t k = 0; k <= max_rows; k++) {
        if ((int64_t)GCUT__VK_AXIS * k > best)
            break;
        const int64_t up = y - k, down = y + k;
        if (up < y0 && down >= y1)
            break;
        if (up >= y0 && up < y1) {
            const int32_t a = hd[up * w + x];
            if (a != GCUT__VK_NONE) {
                const int32_t d = gcut__vk_chamfer(a, (int32_t)k);
                best = d < best ? d : best;
            }
        }
        if (k > 0 && down >= y0 && down < y1) {
            const int32_t a = hd[down * w + x];
            if (a != GCUT__VK_NONE) {
                const int32_t d = gcut__vk_chamfer(a, (int32_t)k);
                best = d < best ? d : best;
            }
        }
    }
    return best;
}

/** The seed of a pixel from its distance d to the last boundary, its label in the last mask
 *  and its colour's cell capacities (source = cost of calling it background, sink = of calling
 *  it foreground): unknown inside the band (d <= limit) and, with check, within reach where its
 *  colour now favours the other label; elsewhere its last label as a hard seed. */
static inline GCUT__VK_HD uint8_t gcut__vk_seed(int32_t d, int32_t limit, int32_t reach, int check,
                                                uint8_t in_mask, int32_t src, int32_t snk) {
    int unknown = d <= limit;
    if (!unknown && check && d <= reach)
        unknown = in_mask ? src < snk : snk < src;
    return unknown   ? (uint8_t)GCUT_SEED_UNKNOWN
           : in_mask ? (uint8_t)GCUT_SEED_FOREGROUND
                     : (uint8_t)GCUT_SEED_BACKGROUND;
}

#endif /* GCUT_VIDEO_KERNELS_H */
