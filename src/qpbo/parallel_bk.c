/* parallel_bk.c - `parallel-bk`: Liu & Sun's parallel max-flow (CVPR 2010: blocks solved at
 * once by bk, merged bottom-up on threads), which is Jeppesen et al.'s P-QPBO (2021, section 3)
 * with only submodular terms: the same core (pqpbo.c) on bk's own layout of a graph or grid.
 * Flows and cuts are the same for any thread count and split (the cut returned is the minimal
 * one, as bk's). */
#include "qpbo_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nodes per block after a pre-pass (see run): 1080p's 2,073,600 in 256 blocks. */
#define PREPASS_BLOCK_PIXELS 8100

static gcut_status run(const gcut_graph *g, const gcut_grid *grid, gcut_grid *writable,
                       const gcut_options *options, const char *prepass, int64_t *flow,
                       uint8_t *labels, gcut_stats *stats) {
    int threads = options->threads > 0 ? options->threads : gcut__online_cores();
    gcut__qp_output out;
    memset(&out, 0, sizeof out);
    out.cut = labels;
    int64_t base = 0;
    /* The pre-pass (src/cpu/par_prepass.c): rounds of tiles solved alone, then the blocks and
     * merges on the residual grid: the same maximum flow and minimal cut. GCUT_PBK_PREPASS
     * overrides the caller's rounds ("none": no pre-pass). */
    const char *env = getenv("GCUT_PBK_PREPASS");
    const char *rounds = grid == NULL ? NULL : env != NULL ? env : prepass;
    /* Blocks: 4 per thread; after a pre-pass, blocks of about PREPASS_BLOCK_PIXELS nodes
     * (4 to 16 per thread). What the pre-pass leaves is the remainder of its stopped tiles,
     * inside a few blocks: at 1080p one of parallel-bk's 64 blocks held 40 of Phase A's 150 ms
     * of work (build machine) and ended it; in 256 blocks the largest holds 3 ms. On the H100
     * host the photo's cut took 149.7 ms against 171.2 and `gcut segment` 252.1 against 266.2
     * ms (medians of 7 and 12; docs/CPU-PARALLEL.md, "Tenth pass"). The size is the one
     * measured, not tuned; GCUT_PBK_PREPASS_BLOCK_PIXELS=N sets it (0: 4 blocks per thread as
     * before), GCUT_QPBO_BLOCKS overrides both. */
    int64_t want = 4 * (int64_t)threads;
    const int block_pixels =
        gcut__env_int("GCUT_PBK_PREPASS_BLOCK_PIXELS", PREPASS_BLOCK_PIXELS, 0, 1 << 30);
    if (rounds != NULL && *rounds != '\0' && strcmp(rounds, "none") != 0 && grid->ndim == 2 &&
        block_pixels > 0) {
        const int64_t by_size = grid->num_nodes / block_pixels, most = 16 * (int64_t)threads;
        want = by_size > most ? most : by_size > want ? by_size : want;
    }
    int32_t blocks = (int32_t)gcut__env_int("GCUT_QPBO_BLOCKS",
                                            want < (1 << 20) ? (int)want : 1 << 20, 1, 1 << 20);
    const char *how = getenv("GCUT_PBK_PREPASS_SOLVER");
    const bool pr = how == NULL || strcmp(how, "bk") != 0;
    gcut_grid *residual = NULL;
    int64_t pre_flow = 0, pre_aug = 0;
    double pre_ms = 0;
    /* "K1,K2,...": rounds, K a K x K tiling shifted half a tile, "pbk" the blocks' own tiles. */
    for (const char *p = rounds; p != NULL && *p != '\0';) {
        int64_t count[3] = {1, 1, 1};
        bool shifted = true;
        if (strncmp(p, "pbk", 3) == 0) {
            gcut__pbk_grid_tiles(grid, blocks, count);
            shifted = false;
            p += 3;
        } else {
            char *end;
            const long k = strtol(p, &end, 10);
            count[1] = count[2] = k >= 1 && k <= 4096 ? k : 0; /* else no round */
            p = end;
        }
        p = *p == ',' ? p + 1 : "";
        const double t0 = gcut__now_ms();
        gcut_grid *next = NULL;
        int64_t f = 0, a = 0;
        /* The first round writes a new grid (or the caller's own, writable), later ones that
         * one in place. */
        gcut_status st = gcut__pbk_prepass(grid, residual != NULL ? residual : writable, count[1],
                                           count[2], shifted, pr, threads, &next, &f, &a);
        if (st != GCUT_OK) {
            gcut_grid_free(residual);
            return st;
        }
        pre_ms += gcut__now_ms() - t0;
        pre_flow += f;
        pre_aug += a;
        if (next != NULL && next == writable)
            grid = writable; /* the caller frees it */
        else if (next != NULL)
            grid = residual = next;
        if (getenv("GCUT_PBK_PROFILE") != NULL)
            fprintf(stderr, "pbk prepass: round of %" PRId64 " x %" PRId64 "%s, %.2f ms so far\n",
                    count[1], count[2], shifted ? " shifted" : "", pre_ms);
    }
    gcut_status st =
        gcut__qp_solve_bk(g, grid, blocks, threads, options->verbose != 0, &base, &out);
    gcut_grid_free(residual);
    if (st != GCUT_OK)
        return st;
    if (__builtin_add_overflow(out.flow, base, flow) ||
        __builtin_add_overflow(*flow, pre_flow, flow))
        return gcut__fail(GCUT_ERR_OVERFLOW, "parallel-bk: the maximum flow passes INT64_MAX");
    stats->build_ms += out.build_ms;
    stats->solve_ms += pre_ms + out.solve_ms + out.label_ms;
    stats->augmentations += out.augmentations + pre_aug;
    return GCUT_OK;
}

gcut_status gcut__pbk_solve_graph(gcut_graph *g, const gcut_options *options, int64_t *flow,
                                  uint8_t *labels, gcut_stats *stats) {
    return run(g, NULL, NULL, options, NULL, flow, labels, stats);
}

gcut_status gcut__pbk_solve_grid(const gcut_grid *grid, const gcut_options *options, int64_t *flow,
                                 uint8_t *labels, gcut_stats *stats) {
    return run(NULL, grid, NULL, options, NULL, flow, labels, stats);
}

gcut_status gcut__pbk_solve_grid_prepass(gcut_grid *grid, bool overwrite,
                                         const gcut_options *options, const char *prepass,
                                         int64_t *flow, uint8_t *labels, gcut_stats *stats) {
    gcut_status st = gcut_grid_validate(grid);
    if (st != GCUT_OK)
        return st;
    memset(stats, 0, sizeof *stats);
    int64_t value = 0;
    /* Writing the first round's residuals into the caller's grid saves a second grid (83 MB
     * at 1080p, faulted in by the round and unmapped at exit; docs/CPU-PARALLEL.md, "Tenth
     * pass"). GCUT_PBK_PREPASS_IN_PLACE=0: a new grid as before. */
    gcut_grid *writable =
        overwrite && gcut__env_int("GCUT_PBK_PREPASS_IN_PLACE", 1, 0, 1) != 0 ? grid : NULL;
    if ((st = run(NULL, grid, writable, options, prepass, &value, labels, stats)) != GCUT_OK)
        return st;
    snprintf(stats->solver, sizeof stats->solver, "parallel-bk");
    stats->flow = value;
    *flow = value;
    return GCUT_OK;
}
