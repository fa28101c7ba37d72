/* video_internal.h - the GPU path of gcut_video (src/video/video_cuda.cu; Garrett & Saito
 * 2009, 3-4: the graph built on the GPU where the cut runs, one solver kept across frames):
 * a cuda-grid context made once per video, the frame's energy built on the device from its
 * pixels, seeds and the host's integer tables, the labels copied back. */
#ifndef GCUT_VIDEO_INTERNAL_H
#define GCUT_VIDEO_INTERNAL_H

#include "gcut.h"
#include "seg_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/** GPU state of one video: the cuda-grid context(s), device buffers, pinned host buffers and
 *  a stream, all made by gcut__video_gpu_create(). */
typedef struct gcut__video_gpu gcut__video_gpu;

/** What the GPU path did for one frame. */
typedef struct gcut__video_gpu_report {
    double upload_ms;       /**< the cell capacities (and pairwise rows when they changed) up */
    double build_ms;        /**< distances, seeds and capacities computed on the device */
    double solve_ms;        /**< the context's solve and the labels back */
    int warm;               /**< 1: solved warm from the previous frame's flow and heights */
    int64_t changed_pixels; /**< pixels whose colour or seed differ from the last frame
                                 (counted only when the tables were unchanged; else -1) */
} gcut__video_gpu_report;

/** Make the GPU state for frames of width x height, connectivity 4 or 8 (options: device,
 *  warm; warm 1 lets frames whose capacities mostly repeat re-solve warm). @return
 *  GCUT_ERR_NO_DEVICE / GCUT_ERR_UNSUPPORTED (no CUDA in this build) / GCUT_ERR_NOMEM. */
gcut_status gcut__video_gpu_create(int64_t width, int64_t height, int connectivity,
                                   const gcut_options *options, gcut__video_gpu **out);
/** Free everything. NULL is accepted. */
void gcut__video_gpu_free(gcut__video_gpu *gpu);
/** Pinned host memory (fast uploads) for the frame buffers the caller passes to
 *  gcut__video_gpu_solve(); NULL on failure. Free with gcut__video_gpu_host_free(). */
void *gcut__video_gpu_host_alloc(gcut__video_gpu *gpu, size_t bytes, const char *what);
void gcut__video_gpu_host_free(void *ptr);
/** What the GPU counts of the last frame for the next frame's model
 *  (gcut__video_gpu_frame_stats()). */
typedef struct gcut__video_gpu_stats {
    const uint32_t *counts; /**< 2 cells (pinned, valid until the next call): the previous
                                 frame's histogram cells under the last mask (foreground, then
                                 background) */
    int64_t sigma_sum;      /**< the current frame's sum of squared colour differences of
                                 axis neighbours (gcut__seg_estimate_sigma()'s sum) */
    int64_t changed;        /**< pixels whose label differs between the last two masks */
    int64_t boundary;       /**< boundary pixels of the last mask */
    int64_t box[4];         /**< their box: x min, x max, y min, y max (x min = width if none) */
} gcut__video_gpu_stats;

/** The seed rule and the distance reach of one frame (gcut__video_gpu_solve()). */
typedef struct gcut__video_gpu_seeds {
    int32_t limit, reach; /**< chamfer units: unknown band, colour check's reach */
    int check;            /**< the colour check on */
    int64_t box[4];       /**< distance window: x0, x1, y0, y1 (half-open, holds the boundary) */
    int64_t max_rows;     /**< rows the column scan may reach (distances exact up to 3x this) */
} gcut__video_gpu_seeds;

/** Keep the histogram layout on the device: cell_lut (2^18 entries: the cell of each quantised
 *  colour) and the number of cells; made once per video. */
gcut_status gcut__video_gpu_model_init(gcut__video_gpu *gpu, const int32_t *cell_lut,
                                       int64_t cells);
/** Upload the next frame (width * height * 3 bytes of 8-bit RGB, pinned): it becomes the
 *  current frame and the last one the previous frame. */
gcut_status gcut__video_gpu_put_frame(gcut__video_gpu *gpu, const uint8_t *pixels);
/** Upload the last mask and the one before it (0/1 bytes; after a restart from a given mask). */
gcut_status gcut__video_gpu_put_masks(gcut__video_gpu *gpu, const uint8_t *mask,
                                      const uint8_t *prev_mask);
/** Count, on the device, what the next model needs (see gcut__video_gpu_stats): the same
 *  integers as the host's count pass. */
gcut_status gcut__video_gpu_frame_stats(gcut__video_gpu *gpu, gcut__video_gpu_stats *out);
/** Solve the current frame exactly: the seeds from the last mask (chamfer distance as row
 *  distances and a column scan, video_kernels.h, then the seed rule with cell_cap's per-cell
 *  capacities: 2 cells, source then sink), the capacities as gcut__seg_fill_grid() would fill
 *  them from the frame, those seeds and the unary tables expanded from cell_cap (the pairwise
 *  rows and K from tables), the cut by the video's context; the new mask stays on the device
 *  for the next frame, labels (width * height host bytes, pinned) get GCUT_SOURCE / GCUT_SINK,
 *  seeds (NULL, or width * height host bytes) the seeds used. With warm on, a frame whose
 *  capacities' tables equal the last frame's and whose pixels and seeds differ in at most 10%
 *  of the pixels is re-solved warm (a second context kept for that); every other frame cold. */
gcut_status gcut__video_gpu_solve(gcut__video_gpu *gpu, const int32_t *cell_cap,
                                  const gcut__seg_tables *tables, const gcut__video_gpu_seeds *rule,
                                  uint8_t *labels, uint8_t *seeds, int64_t *flow, gcut_stats *stats,
                                  gcut__video_gpu_report *report);

/** Tests: 1 makes the CPU path compute its distance map by the GPU path's rule (row
 *  distances and a column scan, video_kernels.h) instead of the two-pass chamfer transform, so
 *  that tests without a GPU check that rule's seeds against the transform's; 0 undoes it. */
gcut_status gcut__video_emulate_gpu(gcut_video *video, int on);

/* ---- a blocking thread pool for the model stage (src/video/pool.c) ---- */

typedef struct gcut__pool gcut__pool;
/** Work of one run: part in [0, parts), every part called once, part 0 by the caller. */
typedef void (*gcut__pool_fn)(void *ctx, int part, int parts);
/** Start threads - 1 workers (threads < 1 counts as 1). */
gcut_status gcut__pool_create(int threads, gcut__pool **out);
/** Stop and join the workers. NULL is accepted. */
void gcut__pool_free(gcut__pool *pool);
/** @return the parts of every run. */
int gcut__pool_threads(const gcut__pool *pool);
/** Run fn over every part and return when all are done. */
void gcut__pool_run(gcut__pool *pool, gcut__pool_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* GCUT_VIDEO_INTERNAL_H */
