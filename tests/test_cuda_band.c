/* test_cuda_band.c - multilevel narrow-banded segmentation (docs/BAND.md) with the coarsest
 * level on the GPU (cuda-grid through gcut_grid_solve; bands on bk): the coarsest level's flow
 * equal to bk's on the same coarse grid, and the result certified on the full grid (its energy
 * is its cut capacity there, never below the exact minimum; seeds kept). Skips (exit 77) where
 * no GPU can be used. Written without a GPU at hand: not yet run on one. */
#include "internal.h"
#include "util_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GCUT_HAVE_CUDA
int main(void) {
    printf("test_cuda_band: built without CUDA: skipped\n");
    return TEST_SKIP;
}
#else
static int checks;

#define PASS_IF(cond)                                                                              \
    do {                                                                                           \
        int before_ = test_failures;                                                               \
        CHECK(cond);                                                                               \
        if (test_failures == before_)                                                              \
            checks++;                                                                              \
    } while (0)

static void one_case(int64_t w, int64_t h, int64_t d, gcut_synth_level level, int levels) {
    gcut_image img;
    CHECK_OK(gcut_synth_image(w, h, d, 7, level, &img, NULL));
    const int64_t n = w * h * d;
    uint8_t *seeds = malloc((size_t)n), *gpu = malloc((size_t)n), *cpu = malloc((size_t)n);
    uint8_t *labels = malloc((size_t)n);
    CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.levels = levels;
    gcut_options og, oc;
    gcut_options_init(&og);
    gcut_options_init(&oc);
    og.solver = "cuda-grid";
    oc.solver = "bk";
    gcut_seg_report rg, rc, rf;
    CHECK_OK(gcut_segment(&img, seeds, &p, &og, gpu, &rg));
    CHECK_OK(gcut_segment(&img, seeds, &p, &oc, cpu, &rc));
    PASS_IF(strcmp(rg.stats.solver, "cuda-grid") == 0);
    PASS_IF(rg.level[levels].flow == rc.level[levels].flow); /* the same coarse grid, exactly */
    gcut_seg_params pf = p;
    pf.levels = 0;
    uint8_t *full = cpu; /* reused: the full solve's mask */
    CHECK_OK(gcut_segment(&img, seeds, &pf, &oc, full, &rf));
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_seg_build_grid(&img, seeds, &pf, &grid, NULL));
    if (grid != NULL) {
        for (int64_t i = 0; i < n; i++)
            labels[i] = gpu[i] ? GCUT_SOURCE : GCUT_SINK;
        int64_t cut = -1;
        gcut_grid_verify(grid, labels, rg.energy, &cut);
        PASS_IF(cut == rg.energy && rg.energy >= rf.stats.flow);
        bool kept = true;
        for (int64_t i = 0; i < n; i++)
            kept &= seeds[i] == 0 || (seeds[i] == GCUT_SEED_FOREGROUND) == (gpu[i] == 1);
        PASS_IF(kept);
        printf("%lldx%lldx%lld %s, %d levels: coarsest flow %lld on both, energy gap %lld\n",
               (long long)w, (long long)h, (long long)d, level ? "hard" : "easy", levels,
               (long long)rg.level[levels].flow, (long long)(rg.energy - rf.stats.flow));
    }
    gcut_grid_free(grid);
    free(seeds), free(gpu), free(cpu), free(labels);
    gcut_image_free(&img);
}

int main(void) {
    if (!gcut__cuda_available()) {
        printf("test_cuda_band: no usable CUDA device: skipped\n");
        return TEST_SKIP;
    }
    one_case(1024, 768, 1, GCUT_SYNTH_HARD, 1);
    one_case(1025, 767, 1, GCUT_SYNTH_EASY, 2);
    one_case(130, 120, 110, GCUT_SYNTH_EASY, 1);
    return test_finish("test_cuda_band", checks);
}
#endif
