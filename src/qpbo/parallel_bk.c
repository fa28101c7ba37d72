/* parallel_bk.c - `parallel-bk`: Liu & Sun's parallel max-flow (CVPR 2010: blocks solved at
 * once by bk, merged bottom-up on threads), which is Jeppesen et al.'s P-QPBO (2021, section 3)
 * with only submodular terms: the same core (pqpbo.c) on bk's own layout of a graph or grid.
 * Flows and cuts are the same for any thread count and split (the cut returned is the minimal
 * one, as bk's). */
#include "qpbo_internal.h"

#include <string.h>

static gcut_status run(const gcut_graph *g, const gcut_grid *grid, const gcut_options *options,
                       int64_t *flow, uint8_t *labels, gcut_stats *stats) {
    int threads = options->threads > 0 ? options->threads : gcut__online_cores();
    int32_t blocks = (int32_t)gcut__env_int("GCUT_QPBO_BLOCKS", 4 * threads, 1, 1 << 20);
    gcut__qp_output out;
    memset(&out, 0, sizeof out);
    out.cut = labels;
    int64_t base = 0;
    gcut_status st =
        gcut__qp_solve_bk(g, grid, blocks, threads, options->verbose != 0, &base, &out);
    if (st != GCUT_OK)
        return st;
    if (__builtin_add_overflow(out.flow, base, flow))
        return gcut__fail(GCUT_ERR_OVERFLOW, "parallel-bk: the maximum flow passes INT64_MAX");
    stats->build_ms += out.build_ms;
    stats->solve_ms += out.solve_ms + out.label_ms;
    stats->augmentations += out.augmentations;
    return GCUT_OK;
}

gcut_status gcut__pbk_solve_graph(gcut_graph *g, const gcut_options *options, int64_t *flow,
                                  uint8_t *labels, gcut_stats *stats) {
    return run(g, NULL, options, flow, labels, stats);
}

gcut_status gcut__pbk_solve_grid(const gcut_grid *grid, const gcut_options *options, int64_t *flow,
                                 uint8_t *labels, gcut_stats *stats) {
    return run(NULL, grid, options, flow, labels, stats);
}
