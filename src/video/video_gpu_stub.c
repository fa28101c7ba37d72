/* video_gpu_stub.c - the GPU path of gcut_video (src/video/video_cuda.cu) in builds without
 * CUDA: creating it fails with a message saying so, so that `--solver cuda-grid` is refused
 * clearly (Garrett & Saito 2009's GPU pipeline needs a CUDA build). */
#include "internal.h"
#include "video_internal.h"

#ifndef GCUT_HAVE_CUDA

gcut_status gcut__video_gpu_create(int64_t width, int64_t height, int connectivity,
                                   const gcut_options *options, gcut__video_gpu **out) {
    (void)width;
    (void)height;
    (void)connectivity;
    (void)options;
    *out = NULL;
    return gcut__fail(GCUT_ERR_UNSUPPORTED,
                      "video: cuda-grid needs a build with CUDA (this one has none)");
}

void gcut__video_gpu_free(gcut__video_gpu *gpu) {
    (void)gpu;
}

void *gcut__video_gpu_host_alloc(gcut__video_gpu *gpu, size_t bytes, const char *what) {
    (void)gpu;
    return gcut__malloc(bytes, what);
}

void gcut__video_gpu_host_free(void *ptr) {
    gcut__free(ptr);
}

gcut_status gcut__video_gpu_model_init(gcut__video_gpu *gpu, const int32_t *cell_lut,
                                       int64_t cells) {
    (void)gpu, (void)cell_lut, (void)cells;
    return gcut__fail(GCUT_ERR_UNSUPPORTED, "video: no CUDA in this build");
}

gcut_status gcut__video_gpu_put_frame(gcut__video_gpu *gpu, const uint8_t *pixels) {
    (void)gpu, (void)pixels;
    return gcut__fail(GCUT_ERR_UNSUPPORTED, "video: no CUDA in this build");
}

gcut_status gcut__video_gpu_put_masks(gcut__video_gpu *gpu, const uint8_t *mask,
                                      const uint8_t *prev_mask) {
    (void)gpu, (void)mask, (void)prev_mask;
    return gcut__fail(GCUT_ERR_UNSUPPORTED, "video: no CUDA in this build");
}

gcut_status gcut__video_gpu_frame_stats(gcut__video_gpu *gpu, gcut__video_gpu_stats *out) {
    (void)gpu, (void)out;
    return gcut__fail(GCUT_ERR_UNSUPPORTED, "video: no CUDA in this build");
}

gcut_status gcut__video_gpu_solve(gcut__video_gpu *gpu, const int32_t *cell_cap,
                                  const gcut__seg_tables *tables, const gcut__video_gpu_seeds *rule,
                                  uint8_t *labels, uint8_t *seeds, int64_t *flow, gcut_stats *stats,
                                  gcut__video_gpu_report *report) {
    (void)gpu, (void)cell_cap, (void)tables, (void)rule, (void)labels, (void)seeds, (void)flow,
        (void)stats, (void)report;
    return gcut__fail(GCUT_ERR_UNSUPPORTED, "video: no CUDA in this build");
}

#else
typedef int gcut__video_gpu_stub_unused; /* ISO C forbids an empty translation unit */
#endif
