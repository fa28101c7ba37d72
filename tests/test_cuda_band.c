/* test_cuda_band.c - multilevel narrow-banded segmentation (docs/BAND.md) on the GPU: the device
 * pipeline (every level a masked grid on cuda-grid) against the host pipelines (device_case),
 * and the host pipeline's coarsest level on cuda-grid with bands on bk or on cuda-general
 * (gcut_seg_params.band_solver). Oracles: the coarsest flow equal to bk's on the same coarse
 * grid; the first band's flow on cuda-general equal to bk's on the same band problem (the same
 * projection: cuda-grid's cut is the same in both runs); every result certified on the full
 * grid (its energy is its cut capacity there, never below the exact minimum; seeds kept); and a
 * constructed case where the band provably holds the minimum cut equal pixel for pixel to the
 * full exact solve. Skips (exit 77) where no GPU can be used. */
#include "internal.h"
#include "../src/seg/seg_internal.h"
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
    gcut_seg_report rg, rc, rf, rx;
    p.band_solver = "cuda-general";
    CHECK_OK(gcut_segment(&img, seeds, &p, &og, gpu, &rg));
    p.band_solver = "bk";
    CHECK_OK(gcut_segment(&img, seeds, &p, &og, cpu, &rx)); /* coarsest on cuda-grid, bands bk */
    PASS_IF(strcmp(rg.stats.solver, "cuda-grid") == 0 &&
            strcmp(rg.level[levels - 1].solver, "cuda-general") == 0 &&
            strcmp(rx.level[levels - 1].solver, "bk") == 0);
    /* the same first band problem (cuda-grid's cut does not depend on the run): same minimum */
    PASS_IF(rg.level[levels].flow == rx.level[levels].flow &&
            rg.level[levels - 1].nodes == rx.level[levels - 1].nodes &&
            rg.level[levels - 1].flow == rx.level[levels - 1].flow);
    CHECK_OK(gcut_segment(&img, seeds, &p, &oc, cpu, &rc));
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
        printf("%lldx%lldx%lld %s, %d levels: coarsest flow %lld on both, first band %lld nodes "
               "flow %lld on both; energy gap to the exact minimum: cuda-general bands %lld, bk "
               "bands %lld, all bk %lld\n",
               (long long)w, (long long)h, (long long)d, level ? "hard" : "easy", levels,
               (long long)rg.level[levels].flow, (long long)rg.level[levels - 1].nodes,
               (long long)rg.level[levels - 1].flow, (long long)(rg.energy - rf.stats.flow),
               (long long)(rx.energy - rf.stats.flow), (long long)(rc.energy - rf.stats.flow));
        PASS_IF(rx.energy >= rf.stats.flow && rc.energy >= rf.stats.flow);
    }
    gcut_grid_free(grid);
    free(seeds), free(gpu), free(cpu), free(labels);
    gcut_image_free(&img);
}

/* The regional term dominates and the foreground is a union of blocks aligned to 2^L: every
 * level sees pure blocks, so the band holds the minimum cut (docs/BAND.md); the all-GPU banded
 * mask equals the full exact solve's, pixel for pixel, at odd sizes, 2D and 3D. */
static void provable_case(int64_t w, int64_t h, int64_t d, int levels) {
    const int64_t n = w * h * d, a = (int64_t)1 << levels;
    uint8_t *px = malloc((size_t)n), *seeds = calloc((size_t)n, 1);
    uint8_t *banded = malloc((size_t)n), *full = malloc((size_t)n);
    int64_t fgseed = -1;
    for (int64_t z = 0; z < d; z++)
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                const int64_t bx = x / a, by = y / a, bz = z / a;
                const bool fg = ((bx + 2 * by + 3 * bz) % 5 == 1) || (bx >= 3 && bx < 7 && by >= 2);
                px[(z * h + y) * w + x] = fg ? 200 : 40;
                if (fg && fgseed < 0)
                    fgseed = (z * h + y) * w + x;
            }
    seeds[fgseed] = GCUT_SEED_FOREGROUND;
    for (int64_t i = 0; i < n; i++)
        if (px[i] == 40) {
            seeds[i] = GCUT_SEED_BACKGROUND;
            break;
        }
    gcut_image img = {w, h, d, 1, 8, px};
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.model = GCUT_MODEL_HISTOGRAM;
    p.lambda = 0.01;
    p.levels = levels;
    p.band = 1;
    p.band_solver = NULL; /* auto: the device pipeline (docs/BAND.md, "GPU") */
    gcut_options o;
    gcut_options_init(&o);
    o.solver = "cuda-grid";
    gcut_seg_report rb, rf;
    CHECK_OK(gcut_segment(&img, seeds, &p, &o, banded, &rb));
    p.levels = 0;
    CHECK_OK(gcut_segment(&img, seeds, &p, &o, full, &rf));
    int64_t differ = 0;
    for (int64_t i = 0; i < n; i++)
        differ += banded[i] != full[i];
    printf("provable %lldx%lldx%lld, %d levels: %lld pixels differ, energies %lld / %lld\n",
           (long long)w, (long long)h, (long long)d, levels, (long long)differ,
           (long long)rb.energy, (long long)rf.stats.flow);
    PASS_IF(differ == 0 && rb.energy == rf.stats.flow);
    /* auto: the device pipeline, every band a masked grid on cuda-grid */
    PASS_IF(strcmp(rb.level[levels].solver, "cuda-grid") == 0 &&
            strcmp(rb.level[0].solver, "cuda-grid (masked)") == 0);
    free(px), free(seeds), free(banded), free(full);
}

/* The device pipeline (GCUT__BAND_DEVICE: every level built, selected and solved on the GPU as
 * a masked grid) against the host pipelines on the same image: (1) the CPU-built masked grids
 * solved by cuda-grid through gcut_grid_solve (GCUT__BAND_MASKED): the same grids, so the same
 * masks, bands and flows exactly; (2) the band graphs on cuda-general (GCUT__BAND_GRAPH), which
 * takes the same cut of each band problem (the sink side: what reaches the sink), so again the
 * same masks, and the same flows; (3) the certificate on the full grid (energy = its cut
 * capacity there, computed independently, >= the exact minimum; seeds kept; the host's
 * gcut__band_energy of the mask equal to the device's). */
static void device_case(int64_t w, int64_t h, int64_t d, gcut_synth_level level, int levels,
                        int band, int conn) {
    gcut_image img;
    CHECK_OK(gcut_synth_image(w, h, d, 11, level, &img, NULL));
    const int64_t n = w * h * d;
    uint8_t *seeds = malloc((size_t)n), *dev = malloc((size_t)n), *twin = malloc((size_t)n);
    uint8_t *graph = malloc((size_t)n), *labels = malloc((size_t)n);
    CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.levels = levels;
    p.band = band;
    p.connectivity = conn;
    gcut_options o;
    gcut_options_init(&o);
    o.solver = "cuda-grid";
    gcut_seg_report rd, rt, rg, rf;
    CHECK_OK(gcut__band_segment_route(&img, seeds, &p, &o, dev, &rd, GCUT__BAND_DEVICE));
    CHECK_OK(gcut__band_segment_route(&img, seeds, &p, &o, twin, &rt, GCUT__BAND_MASKED));
    p.band_solver = "cuda-general";
    CHECK_OK(gcut__band_segment_route(&img, seeds, &p, &o, graph, &rg, GCUT__BAND_GRAPH));
    int64_t differ_twin = 0, differ_graph = 0;
    for (int64_t i = 0; i < n; i++) {
        differ_twin += dev[i] != twin[i];
        differ_graph += dev[i] != graph[i];
    }
    bool same_twin = rd.levels == levels && rt.levels == levels, same_graph = rg.levels == levels;
    for (int k = 0; k <= levels; k++) {
        same_twin &= rd.level[k].nodes == rt.level[k].nodes && rd.level[k].flow == rt.level[k].flow;
        same_graph &=
            rd.level[k].nodes == rg.level[k].nodes && rd.level[k].flow == rg.level[k].flow;
    }
    /* sigma estimated on the device (device route) and on the host (twin): the same value */
    PASS_IF(rd.sigma == rt.sigma);
    PASS_IF(same_twin && differ_twin == 0 && rd.energy == rt.energy);
    PASS_IF(same_graph && differ_graph == 0 && rd.energy == rg.energy);
    PASS_IF(strcmp(rd.level[0].solver, "cuda-grid (masked)") == 0);
    gcut_seg_params pf = p;
    pf.levels = 0;
    pf.band_solver = NULL;
    CHECK_OK(gcut_segment(&img, seeds, &pf, &o, graph, &rf)); /* graph reused: the full mask */
    gcut_grid *grid = NULL;
    CHECK_OK(gcut_seg_build_grid(&img, seeds, &pf, &grid, NULL));
    int64_t cut = -1, differ_full = 0;
    bool kept = true;
    if (grid != NULL) {
        for (int64_t i = 0; i < n; i++) {
            labels[i] = dev[i] ? GCUT_SOURCE : GCUT_SINK;
            kept &= seeds[i] == 0 || (seeds[i] == GCUT_SEED_FOREGROUND) == (dev[i] == 1);
            differ_full += dev[i] != graph[i];
        }
        gcut_grid_verify(grid, labels, rd.energy, &cut);
    }
    PASS_IF(cut == rd.energy && rd.energy >= rf.stats.flow && kept);
    int64_t fg = 0;
    for (int64_t i = 0; i < n; i++)
        fg += dev[i];
    PASS_IF(fg == rd.foreground_pixels);
    printf("device %lldx%lldx%lld %s conn %d, %d levels, band %d: finest band %lld nodes flow "
           "%lld; masked twin: %lld differ, band graphs on cuda-general: %lld differ; %lld "
           "differ from the exact cut, energy gap %lld; device %.1f ms, twin %.1f ms, graphs "
           "%.1f ms (build + solve)\n",
           (long long)w, (long long)h, (long long)d, level ? "hard" : "easy", conn, levels, band,
           (long long)rd.level[0].nodes, (long long)rd.level[0].flow, (long long)differ_twin,
           (long long)differ_graph, (long long)differ_full, (long long)(rd.energy - rf.stats.flow),
           rd.build_ms + rd.solve_ms, rt.build_ms + rt.solve_ms, rg.build_ms + rg.solve_ms);
    gcut_grid_free(grid);
    free(seeds), free(dev), free(twin), free(graph), free(labels);
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
    one_case(96, 80, 70, GCUT_SYNTH_HARD, 2);
    device_case(1025, 767, 1, GCUT_SYNTH_HARD, 2, 2, 8);
    device_case(640, 481, 1, GCUT_SYNTH_EASY, 3, 1, 4);
    device_case(1, 3000, 1, GCUT_SYNTH_HARD, 2, 2, 8);
    device_case(97, 81, 67, GCUT_SYNTH_HARD, 2, 2, 6);
    device_case(60, 50, 40, GCUT_SYNTH_EASY, 1, 0, 26);
    /* gcut_device_release_cache() frees the kept pipeline (and cuda-grid's sessions); the same
     * shape again builds a fresh one (memcheck runs see any use after the release). */
    gcut_device_release_cache();
    device_case(60, 50, 40, GCUT_SYNTH_EASY, 1, 0, 26);
    gcut_device_release_cache();
    provable_case(301, 203, 1, 2);
    provable_case(67, 41, 1, 3);
    provable_case(45, 37, 29, 2);
    return test_finish("test_cuda_band", checks);
}
#endif
