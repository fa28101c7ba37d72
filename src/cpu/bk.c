/* bk.c - the serial Boykov-Kolmogorov solver ("bk"; Boykov & Kolmogorov, PAMI 2004) with warm
 * re-solves by tree reuse and marked nodes (Kohli & Torr 2005), on general graphs and natively
 * on grids. The algorithm is in bk_impl.h, built here for 32-bit indices (the usual case) and
 * 64-bit ones (2^32 arcs or more). */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BK_IDX uint32_t
#define BK_FN(name) bk32_##name
#include "bk_impl.h"
#undef BK_IDX
#undef BK_FN

#define BK_IDX uint64_t
#define BK_FN(name) bk64_##name
#include "bk_impl.h"
#undef BK_IDX
#undef BK_FN

/* 32-bit indices need every node and arc id below the four reserved values. The environment
 * variable GCUT_BK_INDEX_BITS=64 forces the wide layout, so tests can run it on small graphs. */
static bool use_wide_indices(int64_t num_nodes, int64_t max_arcs) {
    const char *force = getenv("GCUT_BK_INDEX_BITS");
    if (force != NULL && strcmp(force, "64") == 0)
        return true;
    return num_nodes >= (int64_t)UINT32_MAX - 4 || max_arcs >= (int64_t)UINT32_MAX - 8;
}

gcut_status gcut__bk_solve_graph(gcut_graph *graph, const gcut_options *options, int64_t *flow,
                                 uint8_t *labels, gcut_stats *stats) {
    bool wide = use_wide_indices(
        graph->num_nodes, graph->num_edges > INT64_MAX / 2 ? INT64_MAX : 2 * graph->num_edges);
    /* State made by the other width (the environment changed between solves) is not reused. */
    if (graph->state.data != NULL && graph->state.free_fn != (wide ? bk64_free : bk32_free))
        gcut__graph_drop_state(graph);
    return wide ? bk64_solve(graph, options, flow, labels, stats)
                : bk32_solve(graph, options, flow, labels, stats);
}

gcut_status gcut__bk_solve_grid(const gcut_grid *grid, const gcut_options *options, int64_t *flow,
                                uint8_t *labels, gcut_stats *stats) {
    /* At most one arc per node and direction. */
    int64_t max_arcs =
        grid->num_nodes > INT64_MAX / GCUT__MAX_DIRS ? INT64_MAX : grid->num_nodes * grid->num_dirs;
    return use_wide_indices(grid->num_nodes, max_arcs)
               ? bk64_solve_grid(grid, options, flow, labels, stats)
               : bk32_solve_grid(grid, options, flow, labels, stats);
}
