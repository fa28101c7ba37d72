/* test_cuda_video.c - the GPU path of gcut_video (src/video/video_cuda.cu; Garrett & Saito
 * 2009): synthetic videos cut on the whole frame by cuda-grid with the model's counts, the
 * distance map, the seeds and the energy computed on the device (a restart mid-video, the
 * colour check reaching everywhere and off too), every frame's cut certified on the host's copy of
 * its grid and its flow equal to bk's on that grid (params.verify 2); the same video cut by bk on
 * the CPU gives the same flows and masks frame by frame; a still video is re-solved warm once its
 * tables settle. Skips (exit 77) without a GPU. */
#include "util_common.h"

#include <stdbool.h>
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

/* One synthetic video through the GPU path and through bk on the whole frame (the same energy
 * when the masks so far are the same): flows equal while the masks agree, every GPU frame
 * certified and checked against bk on its own grid. */
static void gpu_against_bk(uint64_t seed, int64_t w, int64_t h, int conn, gcut_synth_level level,
                           int frames, int restart, double colour_reach, int check_colour) {
    const int64_t n = w * h;
    uint8_t *truth = malloc((size_t)n), *mask_gpu = malloc((size_t)n);
    uint8_t *mask_cpu = malloc((size_t)n);
    gcut_video_params p;
    gcut_video_params_init(&p);
    p.seg.connectivity = conn;
    p.restrict_band = 0;
    p.colour_reach = colour_reach;
    p.check_colour = check_colour;
    p.verify = 2;
    gcut_options og, oc;
    gcut_options_init(&og);
    og.solver = "cuda-grid";
    gcut_options_init(&oc);
    oc.solver = "bk";
    gcut_video *gpu = NULL, *cpu = NULL;
    CHECK_OK(gcut_video_create(w, h, &p, &og, &gpu));
    CHECK(gpu != NULL && strcmp(gcut_video_solver(gpu), "cuda-grid") == 0);
    p.verify = 1;
    CHECK_OK(gcut_video_create(w, h, &p, &oc, &cpu));
    int same_frames = 0, certified = 0;
    bool diverged = false;
    for (int k = 0; k < frames && gpu != NULL && cpu != NULL && truth != NULL; k++) {
        gcut_image img = {0};
        CHECK_OK(gcut_video_synth_frame(w, h, seed, k, level, &img, truth));
        gcut_video_report rg, rc;
        /* restart > 0: that frame restarts both from its truth (a new mask mid-video). */
        const uint8_t *init = k == 0 || k == restart ? truth : NULL;
        gcut_status sg = gcut_video_push_frame(gpu, &img, init, GCUT_VIDEO_INIT_MASK, &rg);
        gcut_status sc = gcut_video_push_frame(cpu, &img, init, GCUT_VIDEO_INIT_MASK, &rc);
        gcut_image_free(&img);
        CHECK_OK(sg);
        CHECK_OK(sc);
        if (sg != GCUT_OK || sc != GCUT_OK)
            break;
        if (init == NULL) {
            certified += strcmp(rg.solver, "cuda-grid") == 0;
            CHECK(strcmp(rg.solver, "cuda-grid") == 0);
        }
        CHECK_OK(gcut_video_get_mask(gpu, mask_gpu));
        CHECK_OK(gcut_video_get_mask(cpu, mask_cpu));
        int64_t differ = 0;
        for (int64_t i = 0; i < n; i++)
            differ += mask_gpu[i] != mask_cpu[i];
        if (!diverged) {
            /* Same previous masks: the same energy, so the same minimum cut value. */
            if (rg.flow != rc.flow)
                printf("  frame %d: cuda-grid flow %lld, bk %lld\n", k, (long long)rg.flow,
                       (long long)rc.flow);
            CHECK(rg.flow == rc.flow);
            if (differ == 0)
                same_frames++;
            else
                diverged = true; /* a tie cut differently: later energies may differ */
        }
    }
    printf("%lldx%lld %d-conn %s (restart at %d, colour reach %g, check %d): %d frames, %d cut on "
           "the GPU and certified (flow == bk's on the same grid), masks equal to bk's for the "
           "first %d\n",
           (long long)w, (long long)h, conn, level == GCUT_SYNTH_HARD ? "hard" : "easy", restart,
           colour_reach, check_colour, frames, certified, same_frames);
    PASS_IF(certified == frames - 1 - (restart > 0 && restart < frames));
    /* Ties between minimum cuts are rare on these noisy frames: a GPU path whose masks leave
     * bk's from the start would be building another energy. */
    PASS_IF(same_frames >= frames / 2);
    gcut_video_free(gpu);
    gcut_video_free(cpu);
    free(truth);
    free(mask_gpu);
    free(mask_cpu);
}

/* A still video (one frame repeated): the colour model converges, the tables stop changing,
 * and from then on every frame is re-solved warm (same pixels, same seeds); the flows and
 * masks stay those of a cold context (warm off), every cut certified. */
static void still_video_warm(uint64_t seed) {
    const int64_t w = 320, h = 240, n = w * h;
    const int frames = 80;
    uint8_t *truth = malloc((size_t)n), *m_warm = malloc((size_t)n), *m_cold = malloc((size_t)n);
    gcut_image img = {0};
    CHECK_OK(gcut_video_synth_frame(w, h, seed, 5, GCUT_SYNTH_EASY, &img, truth));
    gcut_video_params p;
    gcut_video_params_init(&p);
    p.verify = 2;
    gcut_options ow, oc;
    gcut_options_init(&ow);
    ow.solver = "cuda-grid";
    ow.warm = 1;
    oc = ow;
    oc.warm = 0;
    gcut_video *warm = NULL, *cold = NULL;
    CHECK_OK(gcut_video_create(w, h, &p, &ow, &warm));
    CHECK_OK(gcut_video_create(w, h, &p, &oc, &cold));
    int warm_frames = 0, cold_warm = 0, equal = 0;
    for (int k = 0; k < frames && warm != NULL && cold != NULL; k++) {
        gcut_video_report rw, rc;
        const uint8_t *init = k == 0 ? truth : NULL;
        CHECK_OK(gcut_video_push_frame(warm, &img, init, GCUT_VIDEO_INIT_MASK, &rw));
        CHECK_OK(gcut_video_push_frame(cold, &img, init, GCUT_VIDEO_INIT_MASK, &rc));
        warm_frames += rw.warm;
        cold_warm += rc.warm;
        CHECK(rw.flow == rc.flow);
        CHECK_OK(gcut_video_get_mask(warm, m_warm));
        CHECK_OK(gcut_video_get_mask(cold, m_cold));
        equal += memcmp(m_warm, m_cold, (size_t)n) == 0;
    }
    printf("still video: %d of %d frames re-solved warm (cold context: %d), masks equal in %d\n",
           warm_frames, frames, cold_warm, equal);
    PASS_IF(warm_frames >= frames / 4);
    PASS_IF(cold_warm == 0);
    PASS_IF(equal == frames);
    gcut_video_free(warm);
    gcut_video_free(cold);
    gcut_image_free(&img);
    free(truth);
    free(m_warm);
    free(m_cold);
}

int main(void) {
    gcut_solver_info info;
    if (gcut_solver_find("cuda-grid", &info) != GCUT_OK || !info.available) {
        printf("test_cuda_video: skipped (no CUDA device or a build without CUDA)\n");
        return TEST_SKIP;
    }
    const uint64_t seed = test_seed();
    const uint64_t start = gcut_memory_in_use();
    if (getenv("GCUT_TEST_QUICK") != NULL) { /* compute-sanitizer: one small video */
        gpu_against_bk(seed, 64, 48, 8, GCUT_SYNTH_EASY, 5, 3, 4.0, 1);
        PASS_IF(gcut_memory_in_use() == start);
        return test_finish("test_cuda_video", passed);
    }
    gpu_against_bk(seed, 320, 240, 8, GCUT_SYNTH_EASY, 24, 0, 4.0, 1);
    gpu_against_bk(seed + 1, 256, 192, 4, GCUT_SYNTH_HARD, 24, 0, 4.0, 1);
    gpu_against_bk(seed + 2, 640, 480, 8, GCUT_SYNTH_HARD, 12, 0, 4.0, 1);
    gpu_against_bk(seed + 3, 320, 240, 8, GCUT_SYNTH_HARD, 16, 9, 4.0, 1);
    gpu_against_bk(seed + 4, 320, 240, 8, GCUT_SYNTH_HARD, 12, 0, 0.0, 1);
    gpu_against_bk(seed + 5, 320, 240, 8, GCUT_SYNTH_EASY, 12, 0, 4.0, 0);
    still_video_warm(seed + 3);
    PASS_IF(gcut_memory_in_use() == start);
    return test_finish("test_cuda_video", passed);
}
