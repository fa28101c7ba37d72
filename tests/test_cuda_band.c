/* test_cuda_band.c - multilevel narrow-banded segmentation (docs/BAND.md) on the GPU: the device
 * pipeline (every level a masked grid on cuda-grid) against the host pipelines (device_case),
 * and the host pipeline's coarsest level on cuda-grid with bands on bk or on cuda-general
 * (gcut_seg_params.band_solver). Oracles: the coarsest flow equal to bk's on the same coarse
 * grid; the first band's flow on cuda-general equal to bk's on the same band problem (the same
 * projection: cuda-grid's cut is the same in both runs); every result certified on the full
 * grid (its energy is its cut capacity there, never below the exact minimum; seeds kept); and a
 * constructed case where the band provably holds the minimum cut equal pixel for pixel to the
 * full exact solve. Skips (exit 77) where no GPU can be used. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "internal.h"
#include "../src/seg/seg_internal.h"
#include "../src/seg/band_node.h"
#include "../src/cuda/staging.h"
#include "util_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GCUT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

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
    /* The live-tile restriction off (GCUT_BAND_LIVE=0: every tile of each masked level
     * visited): the same masks, bands and flows. */
    setenv("GCUT_BAND_LIVE", "0", 1);
    gcut_seg_report ra;
    CHECK_OK(gcut__band_segment_route(&img, seeds, &p, &o, twin, &ra, GCUT__BAND_DEVICE));
    unsetenv("GCUT_BAND_LIVE");
    int64_t differ_all = 0;
    for (int64_t i = 0; i < n; i++)
        differ_all += dev[i] != twin[i];
    bool same_all = ra.levels == levels;
    for (int k = 0; k <= levels; k++)
        same_all &= rd.level[k].nodes == ra.level[k].nodes && rd.level[k].flow == ra.level[k].flow;
    PASS_IF(same_all && differ_all == 0 && rd.energy == ra.energy);
    /* The fourth pass's selection kernels (GCUT_BAND_FUSED=0: projection, marks and the three
     * dilations as separate full-level passes, labels assembled over the whole level) against
     * the fused ones: the same masks, bands and flows. */
    setenv("GCUT_BAND_FUSED", "0", 1);
    CHECK_OK(gcut__band_segment_route(&img, seeds, &p, &o, twin, &ra, GCUT__BAND_DEVICE));
    unsetenv("GCUT_BAND_FUSED");
    differ_all = 0;
    for (int64_t i = 0; i < n; i++)
        differ_all += dev[i] != twin[i];
    same_all = ra.levels == levels;
    for (int k = 0; k <= levels; k++)
        same_all &= rd.level[k].nodes == ra.level[k].nodes && rd.level[k].flow == ra.level[k].flow;
    PASS_IF(same_all && differ_all == 0 && rd.energy == ra.energy);
    /* The seventh pass's switches: the sixth session's pipeline (GCUT_BAND_LEAN=0: waits after
     * each level, the coarsest capacities a warp per node instead of a group of lanes), the
     * legacy tables (GCUT_SEG_TABLES_LEGACY=1: the old fill, four uploads) and groups of two
     * lanes (GCUT_BAND_COARSE_GLOG=1) against the default: the same masks, bands, flows and
     * energies. */
    for (int sw = 0; sw < 3; sw++) { /* and the coarsest capacities by 2 lanes a node */
        const char *name = sw == 2   ? "GCUT_BAND_COARSE_GLOG"
                           : sw == 1 ? "GCUT_SEG_TABLES_LEGACY"
                                     : "GCUT_BAND_LEAN";
        setenv(name, sw ? "1" : "0", 1);
        CHECK_OK(gcut__band_segment_route(&img, seeds, &p, &o, twin, &ra, GCUT__BAND_DEVICE));
        unsetenv(name);
        differ_all = 0;
        for (int64_t i = 0; i < n; i++)
            differ_all += dev[i] != twin[i];
        same_all = ra.levels == levels;
        for (int k = 0; k <= levels; k++)
            same_all &=
                rd.level[k].nodes == ra.level[k].nodes && rd.level[k].flow == ra.level[k].flow;
        PASS_IF(same_all && differ_all == 0 && rd.energy == ra.energy && rd.sigma == ra.sigma);
    }
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

/* The masked-solve hook (gcut__cudagrid_ctx_solve_masked) on random grids and masks of every
 * kind: empty, full, band-like shells touching the border or not, a border frame, scattered
 * single nodes, one node. The arrays hold random capacities for every node, including garbage
 * (negative, large) outside the mask and on arcs that leave it, which the solve must ignore.
 * Oracles: bk's flow and cuda-grid's full solve (its labels: the same cut rule) on the host-built
 * grid where every unmarked node is isolated; the cut certificate on that grid; the solve with
 * every tile visited (live_tiles 0) equal to the live-tile solve, masks and flows; one context
 * reused across all masks in a random order (stale state in tiles no longer live). */
enum { MASK_EMPTY, MASK_ALL, MASK_SHELLS, MASK_FRAME, MASK_SCATTER, MASK_ONE, MASK_KINDS };

static void make_mask(test_rng *rng, int kind, const int64_t dims[3], uint8_t *mask) {
    const int64_t D = dims[0], H = dims[1], W = dims[2], n = D * H * W;
    const int64_t cz = test_rng_range(rng, 0, D - 1), cy = test_rng_range(rng, 0, H - 1),
                  cx = test_rng_range(rng, 0, W - 1);
    const int64_t r = test_rng_range(rng, 2, 12), thick = test_rng_range(rng, 1, 3);
    for (int64_t i = 0; i < n; i++) {
        const int64_t x = i % W, y = i / W % H, z = i / (W * H);
        const int64_t dz = z - cz, dy = y - cy, dx = x - cx, d2 = dz * dz + dy * dy + dx * dx;
        const int64_t edge = x < y ? x : y;
        int64_t border = edge < W - 1 - x ? edge : W - 1 - x;
        border = border < H - 1 - y ? border : H - 1 - y;
        if (D > 1) {
            border = border < z ? border : z;
            border = border < D - 1 - z ? border : D - 1 - z;
        }
        bool on = false;
        switch (kind) {
        case MASK_ALL:
            on = true;
            break;
        case MASK_SHELLS: /* a shell around a random centre, clipped by the border */
            on = d2 >= (r - thick) * (r - thick) && d2 <= r * r;
            break;
        case MASK_FRAME:
            on = border < 2;
            break;
        case MASK_SCATTER:
            on = test_rng_range(rng, 0, 99) < 3;
            break;
        case MASK_ONE:
            on = dz == 0 && dy == 0 && dx == 0;
            break;
        default:
            break;
        }
        mask[i] = on ? (uint8_t)(4 | GCUT__BAND_IN) : 4; /* other bits set too: only bit counts */
    }
}

/* cuda-grid's relabel variants a context takes at creation (the environment is read then):
 * mode 0 the defaults; 1 every live tile in the one-launch relabel's first pass, and the
 * cooperative relabel for the every-tile solves (a live-tile solve never runs it); 2 the relabel
 * as passes (relax_kernel over the live tiles, collect_kernel); 3 a queue of one entry (the
 * one-launch relabel runs out of room and falls back to passes) with no Jacobi steps (the first
 * pass seeded by relabel_init_kernel). */
static const char *const hook_env[4][2][2] = {
    {{NULL, NULL}, {NULL, NULL}},
    {{"GCUT_CUDAGRID_RELAX", "1"}, {"GCUT_CUDAGRID_COOP", "1"}},
    {{"GCUT_CUDAGRID_RELAX", "0"}, {NULL, NULL}},
    {{"GCUT_CUDAGRID_QUEUE", "1"}, {"GCUT_CUDAGRID_JACOBI", "0"}}};

static void masked_hook_case(test_rng *rng, const int64_t dims[3], int conn, int mode) {
    const int64_t n = dims[0] * dims[1] * dims[2];
    const int arrays = 2 + conn;
    const bool three_d = dims[0] > 1 || conn == 6 || conn == 26;
    int32_t *caps = malloc((size_t)n * arrays * sizeof *caps);
    uint8_t *mask = malloc((size_t)n), *lab_live = malloc((size_t)n), *lab_all = malloc((size_t)n);
    uint8_t *lab_ref = malloc((size_t)n), *lab_cut = malloc((size_t)n);
    int32_t *dcaps = NULL;
    uint8_t *dmask = NULL, *dlabels = NULL;
    void *ctx = NULL;
    gcut_options o;
    gcut_options_init(&o);
    CHECK(cudaMalloc((void **)&dcaps, (size_t)n * arrays * sizeof *dcaps) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dmask, (size_t)n) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dlabels, (size_t)n) == cudaSuccess);
    for (int e = 0; e < 2; e++)
        if (hook_env[mode][e][0] != NULL)
            setenv(hook_env[mode][e][0], hook_env[mode][e][1], 1);
    CHECK_OK(gcut__cudagrid_masked_create(dims, conn, &o, &ctx));
    for (int e = 0; e < 2; e++)
        if (hook_env[mode][e][0] != NULL)
            unsetenv(hook_env[mode][e][0]);
    if (caps == NULL || mask == NULL || lab_live == NULL || lab_all == NULL || lab_ref == NULL ||
        lab_cut == NULL || dcaps == NULL || dmask == NULL || dlabels == NULL || ctx == NULL) {
        test_failures++;
        goto done;
    }
    const int32_t *dirs[26];
    for (int d = 0; d < conn; d++)
        dirs[d] = dcaps + (size_t)(2 + d) * n;
    int order[2 * MASK_KINDS];
    for (int k = 0; k < 2 * MASK_KINDS; k++)
        order[k] = k % MASK_KINDS;
    for (int k = 2 * MASK_KINDS - 1; k > 0; k--) {
        const int j = (int)test_rng_range(rng, 0, k), t = order[k];
        order[k] = order[j], order[j] = t;
    }
    for (int step = 0; step < 2 * MASK_KINDS; step++) {
        const int kind = order[step];
        make_mask(rng, kind, dims, mask);
        int64_t marked = 0;
        for (int64_t i = 0; i < n; i++) {
            const bool in = (mask[i] & GCUT__BAND_IN) != 0;
            marked += in;
            for (int a = 0; a < arrays; a++) /* garbage outside the mask, some of it negative */
                caps[(size_t)a * n + i] = in ? (int32_t)test_rng_range(rng, 0, a < 2 ? 40 : 30)
                                             : (int32_t)test_rng_range(rng, -50, 1 << 20);
        }
        gcut_grid *grid = NULL;
        CHECK_OK(gcut_grid_create(three_d ? 3 : 2, three_d ? dims : dims + 1, conn, &grid));
        if (grid == NULL)
            break;
        for (int64_t i = 0; i < n; i++) {
            const bool in = (mask[i] & GCUT__BAND_IN) != 0;
            grid->terminal[0][i] = in ? caps[i] : 0;
            grid->terminal[1][i] = in ? caps[n + i] : 0;
            const int64_t x = i % dims[2], y = i / dims[2] % dims[1], z = i / (dims[2] * dims[1]);
            for (int d = 0; d < conn; d++) {
                const int64_t nz = z + grid->offset[d][0], ny = y + grid->offset[d][1],
                              nx = x + grid->offset[d][2];
                const bool inside =
                    nz >= 0 && nz < dims[0] && ny >= 0 && ny < dims[1] && nx >= 0 && nx < dims[2];
                grid->cap[d][i] =
                    in && inside && (mask[(nz * dims[1] + ny) * dims[2] + nx] & GCUT__BAND_IN)
                        ? caps[(size_t)(2 + d) * n + i]
                        : 0;
            }
        }
        int64_t flow_bk = -1, flow_ref = -2, flow_live = -3, flow_all = -4;
        int64_t live = -1, all = -1;
        o.solver = "bk";
        CHECK_OK(gcut_grid_solve(grid, &o, &flow_bk, NULL, NULL));
        o.solver = "cuda-grid";
        CHECK_OK(gcut_grid_solve(grid, &o, &flow_ref, lab_ref, NULL));
        CHECK(cudaMemcpy(dcaps, caps, (size_t)n * arrays * sizeof *caps, cudaMemcpyHostToDevice) ==
              cudaSuccess);
        CHECK(cudaMemcpy(dmask, mask, (size_t)n, cudaMemcpyHostToDevice) == cudaSuccess);
        gcut_stats stats;
        gcut__ctx_report report;
        uint8_t *out[2] = {lab_live, lab_all};
        int64_t *flows[2] = {&flow_live, &flow_all}, *counts[2] = {&live, &all};
        for (int v = 0; v < 2; v++) {
            CHECK(cudaMemset(dlabels, 0xab, (size_t)n) == cudaSuccess); /* poison */
            CHECK_OK(gcut__cudagrid_ctx_solve_masked(ctx, dcaps, dcaps + n, dirs, dmask,
                                                     GCUT__BAND_IN, v == 0, dlabels, NULL, flows[v],
                                                     &stats, &report, counts[v]));
            CHECK(cudaMemcpy(out[v], dlabels, (size_t)n, cudaMemcpyDeviceToHost) == cudaSuccess);
        }
        int64_t differ = 0, unwritten = 0, written_outside = 0;
        for (int64_t i = 0; i < n; i++) {
            const bool in = (mask[i] & GCUT__BAND_IN) != 0;
            if (in) {
                differ += lab_live[i] != lab_ref[i] || lab_all[i] != lab_ref[i];
                unwritten += lab_live[i] > 1 || lab_all[i] > 1;
            }
            written_outside += kind == MASK_EMPTY && lab_live[i] != 0xab; /* no tile visited */
            lab_cut[i] = in ? lab_live[i] : GCUT_SOURCE; /* an isolated node's side is free */
        }
        int64_t cut = -1;
        CHECK_OK(gcut_grid_verify(grid, lab_cut, flow_live, &cut));
        const int64_t tiles = all;
        printf("masked hook %lldx%lldx%lld conn %d, relabel mode %d, mask kind %d: %lld marked, "
               "%lld of %lld tiles live, flow %lld (bk %lld, full cuda-grid %lld, every tile "
               "%lld), %lld labels differ\n",
               (long long)dims[0], (long long)dims[1], (long long)dims[2], conn, mode, kind,
               (long long)marked, (long long)live, (long long)tiles, (long long)flow_live,
               (long long)flow_bk, (long long)flow_ref, (long long)flow_all, (long long)differ);
        PASS_IF(flow_live == flow_bk && flow_ref == flow_bk && flow_all == flow_bk &&
                cut == flow_live);
        PASS_IF(differ == 0 && unwritten == 0 && written_outside == 0);
        PASS_IF(live <= tiles && (kind != MASK_EMPTY || live == 0) &&
                (kind != MASK_ALL || live == tiles) && (marked == 0) == (live == 0));
        if (step == 2 * MASK_KINDS - 1 && marked > 0) {
            /* A negative capacity of a marked node is refused and named. */
            int64_t at = 0;
            while (!(mask[at] & GCUT__BAND_IN))
                at++;
            const int32_t minus = -7;
            CHECK(cudaMemcpy(dcaps + n + at, &minus, 4, cudaMemcpyHostToDevice) == cudaSuccess);
            const gcut_status st = gcut__cudagrid_ctx_solve_masked(
                ctx, dcaps, dcaps + n, dirs, dmask, GCUT__BAND_IN, 1, dlabels, NULL, &flow_live,
                &stats, &report, NULL);
            PASS_IF(st == GCUT_ERR_INVALID_ARG && strstr(gcut_last_error(), "sink") != NULL);
        }
        gcut_grid_free(grid);
    }
done:
    if (ctx != NULL)
        gcut__cudagrid_ctx_free(ctx, NULL);
    cudaFree(dcaps), cudaFree(dmask), cudaFree(dlabels);
    free(caps), free(mask), free(lab_live), free(lab_all), free(lab_ref), free(lab_cut);
}

/* Staged copies (src/cuda/staging.h) on their own: random bytes up and down as they are, seeds
 * up as 2-bit codes unpacked on the device, labels packed to bits on the device and unpacked on
 * the host, against the plain copies; at lengths around the chunk (smaller than one chunk, one
 * chunk exactly, one byte past it, odd multi-chunk lengths, lengths not multiples of 4 or 8),
 * with 1 to 16 ring threads (the ring's threads kept between copies, and made again after
 * gcut__staging_release), and destinations poisoned before each copy (every byte written, none
 * past the end). */
static void staging_case(test_rng *rng) {
    const size_t longest = 9 * 1000003, chunk_sizes[] = {64, 4096, 0}; /* 0: the default 2 MiB */
    uint8_t *host = malloc(longest + 64), *back = malloc(longest + 64);
    uint8_t *ref = malloc(longest + 64);
    uint8_t *dev = NULL, *dev2 = NULL;
    CHECK(cudaMalloc((void **)&dev, longest + 64) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dev2, longest + 64) == cudaSuccess);
    if (host == NULL || back == NULL || ref == NULL || dev == NULL || dev2 == NULL) {
        test_failures++;
        goto done;
    }
    for (size_t c = 0; c < sizeof chunk_sizes / sizeof chunk_sizes[0]; c++) {
        const size_t chunk = chunk_sizes[c], unit = chunk ? chunk : (size_t)2 << 20;
        const size_t lengths[] = {
            1, 3, 5, unit - 1, unit, unit + 1, 3 * unit + 7, c == 2 ? longest : 37 * unit + 5};
        gcut__staging_set_chunk(chunk);
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            const size_t n = lengths[l];
            char threads[8];
            snprintf(threads, sizeof threads, "%d", (int)test_rng_range(rng, 1, 16));
            setenv("GCUT_STAGING_THREADS", threads, 1);
            bool copy_ok = true, seeds_ok = true, bits_ok = true;
            /* as they are, up and down */
            for (size_t i = 0; i < n; i++)
                host[i] = (uint8_t)test_rng_range(rng, 0, 255);
            CHECK(cudaMemset(dev, 0xCD, n + 64) == cudaSuccess);
            CHECK_OK(gcut__stage_upload(dev, host, n, GCUT__STAGE_COPY, 0, NULL, "test"));
            CHECK(cudaMemcpy(ref, dev, n + 64, cudaMemcpyDeviceToHost) == cudaSuccess);
            copy_ok &= memcmp(ref, host, n) == 0 && ref[n] == 0xCD && ref[n + 63] == 0xCD;
            memset(back, 0xCD, n + 64);
            CHECK_OK(gcut__stage_download(back, dev, n, GCUT__STAGE_COPY, 0, NULL, "test"));
            copy_ok &= memcmp(back, host, n) == 0 && back[n] == 0xCD;
            /* seeds: codes 0..2 up as 2 bits, unpacked into dev2 */
            for (size_t i = 0; i < n; i++)
                host[i] = (uint8_t)test_rng_range(rng, 0, 2);
            CHECK(cudaMemset(dev2, 0xCD, n + 64) == cudaSuccess);
            CHECK_OK(gcut__stage_upload(dev, host, n, GCUT__STAGE_SEEDS, 0, NULL, "test"));
            CHECK_OK(gcut__stage_unpack_seeds_device(dev2, dev, n, NULL, "test"));
            CHECK(cudaMemcpy(ref, dev2, n + 64, cudaMemcpyDeviceToHost) == cudaSuccess);
            seeds_ok &= memcmp(ref, host, n) == 0 && ref[n] == 0xCD;
            /* bits: bytes with random low bits (other bits set too) packed on the device */
            for (size_t i = 0; i < n; i++)
                host[i] = (uint8_t)(test_rng_range(rng, 0, 1) | 0x10);
            CHECK(cudaMemcpy(dev2, host, n, cudaMemcpyHostToDevice) == cudaSuccess);
            CHECK_OK(gcut__stage_pack_bits_device(dev, dev2, n, NULL, "test"));
            memset(back, 0xCD, n + 64);
            CHECK_OK(gcut__stage_download(back, dev, n, GCUT__STAGE_BITS, 0, NULL, "test"));
            for (size_t i = 0; i < n; i++)
                bits_ok &= back[i] == (host[i] & 1u);
            bits_ok &= back[n] == 0xCD;
            if (!copy_ok || !seeds_ok || !bits_ok)
                printf("staging: chunk %zu, %zu bytes, %s threads: copy %d seeds %d bits %d\n",
                       unit, n, threads, copy_ok, seeds_ok, bits_ok);
            PASS_IF(copy_ok && seeds_ok && bits_ok);
        }
        printf("staging: chunk %zu bytes: copies, seeds and bits at 8 lengths equal to the "
               "plain copies\n",
               unit);
    }
    /* the ring and its threads freed, then made again by the next copy */
    gcut__staging_release();
    gcut__staging_set_chunk(4096);
    setenv("GCUT_STAGING_THREADS", "16", 1);
    for (size_t i = 0; i < 99999; i++)
        host[i] = (uint8_t)test_rng_range(rng, 0, 255);
    memset(back, 0xCD, 99999 + 64);
    CHECK_OK(gcut__stage_upload(dev, host, 99999, GCUT__STAGE_COPY, 0, NULL, "test"));
    CHECK_OK(gcut__stage_download(back, dev, 99999, GCUT__STAGE_COPY, 0, NULL, "test"));
    PASS_IF(memcmp(back, host, 99999) == 0 && back[99999] == 0xCD);
    unsetenv("GCUT_STAGING_THREADS");
    gcut__staging_set_chunk(0);
done:
    cudaFree(dev), cudaFree(dev2);
    free(host), free(back), free(ref);
}

/* The full solve's image entry and the device pipeline with the staged copies off
 * (GCUT_STAGING=0: pageable copies) and with small chunks (many chunk boundaries, odd sizes):
 * masks, flows, bands and energies identical to the default's. */
static void staged_pipeline_case(int64_t w, int64_t h, int64_t d, int levels, int conn,
                                 size_t chunk) {
    gcut_image img;
    CHECK_OK(gcut_synth_image(w, h, d, 5, GCUT_SYNTH_HARD, &img, NULL));
    const int64_t n = w * h * d;
    uint8_t *seeds = malloc((size_t)n), *m[3][2];
    for (int v = 0; v < 3; v++)
        for (int b = 0; b < 2; b++)
            m[v][b] = malloc((size_t)n);
    CHECK_OK(gcut_synth_seeds(w, h, d, seeds));
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.connectivity = conn;
    gcut_options o;
    gcut_options_init(&o);
    o.solver = "cuda-grid";
    gcut_seg_report r[3][2];
    for (int v = 0; v < 3; v++) { /* default, staging off (and the legacy tables), small chunks */
        if (v == 1) {
            setenv("GCUT_STAGING", "0", 1);
            setenv("GCUT_SEG_TABLES_LEGACY", "1", 1);
        }
        if (v == 2)
            gcut__staging_set_chunk(chunk);
        for (int b = 0; b < 2; b++) { /* full, banded on the device */
            p.levels = b ? levels : 0;
            memset(m[v][b], 0xCD, (size_t)n);
            CHECK_OK(b ? gcut__band_segment_route(&img, seeds, &p, &o, m[v][b], &r[v][b],
                                                  GCUT__BAND_DEVICE)
                       : gcut_segment(&img, seeds, &p, &o, m[v][b], &r[v][b]));
        }
        unsetenv("GCUT_STAGING");
        unsetenv("GCUT_SEG_TABLES_LEGACY");
        gcut__staging_set_chunk(0);
    }
    bool same = true;
    for (int v = 1; v < 3; v++)
        for (int b = 0; b < 2; b++) {
            same &= memcmp(m[v][b], m[0][b], (size_t)n) == 0 &&
                    r[v][b].stats.flow == r[0][b].stats.flow && r[v][b].energy == r[0][b].energy &&
                    r[v][b].foreground_pixels == r[0][b].foreground_pixels;
            for (int k = 0; b && k <= levels; k++)
                same &= r[v][b].level[k].nodes == r[0][b].level[k].nodes &&
                        r[v][b].level[k].flow == r[0][b].level[k].flow;
        }
    int64_t fg = 0, bad = 0;
    for (int64_t i = 0; i < n; i++) {
        fg += m[0][1][i] == 1;
        bad += m[0][0][i] > 1 || m[0][1][i] > 1;
    }
    /* the full flow against bk's on the same energy */
    gcut_options ob;
    gcut_options_init(&ob);
    ob.solver = "bk";
    gcut_seg_params pf = p;
    pf.levels = 0;
    gcut_seg_report rb;
    CHECK_OK(gcut_segment(&img, seeds, &pf, &ob, m[1][0], &rb));
    printf("staged %lldx%lldx%lld conn %d, %d levels, chunk %zu: full flow %lld (bk %lld), banded "
           "energy %lld, %lld foreground; staging off and small chunks %s\n",
           (long long)w, (long long)h, (long long)d, conn, levels, chunk,
           (long long)r[0][0].stats.flow, (long long)rb.stats.flow, (long long)r[0][1].energy,
           (long long)fg, same ? "identical" : "DIFFER");
    PASS_IF(same && bad == 0 && fg == r[0][1].foreground_pixels);
    PASS_IF(r[0][0].stats.flow == rb.stats.flow && memcmp(m[1][0], m[0][0], (size_t)n) == 0);
    for (int v = 0; v < 3; v++)
        for (int b = 0; b < 2; b++)
            free(m[v][b]);
    free(seeds);
    gcut_image_free(&img);
}

int main(void) {
    if (!gcut__cuda_available()) {
        printf("test_cuda_band: no usable CUDA device: skipped\n");
        return TEST_SKIP;
    }
    const uint64_t seed = test_seed();
    test_rng rng;
    test_rng_init(&rng, seed);
    const int64_t shapes[][4] = {{1, 67, 45, 4},  {1, 45, 67, 8},  {1, 1, 130, 8}, {1, 130, 1, 4},
                                 {19, 13, 11, 6}, {9, 33, 17, 26}, {1, 1, 1, 4},   {2, 3, 5, 6}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
        masked_hook_case(&rng, shapes[c], (int)shapes[c][3], (int)(c % 4));
    staging_case(&rng);
    staged_pipeline_case(1025, 767, 1, 2, 8, 4096 + 64);
    staged_pipeline_case(1, 3001, 1, 2, 4, 64);
    staged_pipeline_case(3001, 1, 1, 2, 8, 192);
    staged_pipeline_case(57, 43, 37, 2, 6, 1024);
    staged_pipeline_case(33, 29, 21, 1, 26, 64);
    staged_pipeline_case(7, 5, 1, 1, 4, 64); /* smaller than one chunk */
    one_case(1024, 768, 1, GCUT_SYNTH_HARD, 1);
    one_case(1025, 767, 1, GCUT_SYNTH_EASY, 2);
    one_case(130, 120, 110, GCUT_SYNTH_EASY, 1);
    one_case(96, 80, 70, GCUT_SYNTH_HARD, 2);
    device_case(1025, 767, 1, GCUT_SYNTH_HARD, 2, 2, 8);
    device_case(640, 481, 1, GCUT_SYNTH_EASY, 3, 1, 4);
    device_case(1, 3000, 1, GCUT_SYNTH_HARD, 2, 2, 8);
    device_case(97, 81, 67, GCUT_SYNTH_HARD, 2, 2, 6);
    device_case(60, 50, 40, GCUT_SYNTH_EASY, 1, 0, 26);
    device_case(700, 301, 1, GCUT_SYNTH_HARD, 2, 32, 4); /* the fused x-dilation's widest halo */
    device_case(45, 300, 37, GCUT_SYNTH_HARD, 2, 3, 6);  /* rows of one segment, odd depth */
    /* the coarsest capacities by groups of 1 to 32 lanes: 3D at 3 levels (512-voxel blocks, a
     * warp per node), a 1-pixel-wide image at 3 levels (blocks of 8 pixels, a lane per node) */
    device_case(71, 66, 53, GCUT_SYNTH_EASY, 3, 1, 6);
    device_case(1, 2999, 1, GCUT_SYNTH_HARD, 3, 2, 8);
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
