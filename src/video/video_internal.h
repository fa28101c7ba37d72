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
    double upload_ms;       /**< pixels, seeds (and tables when they changed) to the device */
    double build_ms;        /**< the capacities computed on the device */
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
/** Solve one frame exactly: the capacities are gcut__seg_fill_grid(pixels, seeds, tables)'s
 *  (pixels width * height * 3 bytes of 8-bit RGB, seeds one GCUT_SEED_* code a pixel), built
 *  on the device. labels (width * height host bytes) gets GCUT_SOURCE / GCUT_SINK per pixel,
 *  *flow the maximum flow. With warm on, a frame whose tables equal the last frame's and whose
 *  pixels and seeds differ in at most 10% of the pixels is re-solved warm (a second context
 *  kept for that); every other frame cold. */
gcut_status gcut__video_gpu_solve(gcut__video_gpu *gpu, const uint8_t *pixels, const uint8_t *seeds,
                                  const gcut__seg_tables *tables, uint8_t *labels, int64_t *flow,
                                  gcut_stats *stats, gcut__video_gpu_report *report);

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
