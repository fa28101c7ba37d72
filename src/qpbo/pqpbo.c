/* pqpbo.c - the QPBO solver core (Jeppesen et al. 2021, sections 2-3: two stages, blocks solved
 * at once and merged bottom-up on threads), built from pqpbo_impl.h for 32-bit indices (the
 * usual case) and 64-bit ones (2^31 nodes or arcs of the doubled graph, or more). */
#include "qpbo_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QP_IDX uint32_t
#define QP_FN(name) qp32_##name
#include "pqpbo_impl.h"
#include "../cpu/par_grid_impl.h"
#undef QP_IDX
#undef QP_FN

#define QP_IDX uint64_t
#define QP_FN(name) qp64_##name
#include "pqpbo_impl.h"
#include "../cpu/par_grid_impl.h"
#undef QP_IDX
#undef QP_FN

void gcut__pbk_grid_tiles(const gcut_grid *grid, int64_t blocks, int64_t count[3]) {
    const int64_t len[3] = {grid->depth, grid->height, grid->width};
    qp32_pick_tiles(len, blocks, count);
}

/* 32-bit indices need the doubled graph's nodes and arcs below the reserved values. Arcs are
 * at most two per edge and half; GCUT_QPBO_INDEX_BITS=64 forces the wide layout (tests). */
gcut_status gcut__qp_solve(const gcut__qp_input *in, gcut__qp_output *out) {
    const char *force = getenv("GCUT_QPBO_INDEX_BITS");
    int64_t nodes = 2 * in->num_nodes + 2;
    int64_t arcs = in->num_edges > INT64_MAX / 8 ? INT64_MAX : 4 * in->num_edges + 8;
    bool wide = (force != NULL && strcmp(force, "64") == 0) || nodes >= (int64_t)UINT32_MAX - 8 ||
                arcs >= (int64_t)UINT32_MAX - 8;
    gcut_status st = wide ? qp64_solve(in, out) : qp32_solve(in, out);
    if (st == GCUT_OK && in->verbose)
        fprintf(stderr,
                "qpbo: %" PRId64 " nodes, %" PRId64 " edges (%d-bit ids), %d blocks, %d threads, "
                "%" PRId64 " merges, stage 2 %s, flow %" PRId64 ", build %.1f ms, solve %.1f ms, "
                "labels %.1f ms\n",
                in->num_nodes, in->num_edges, wide ? 64 : 32, (int)out->blocks, out->threads,
                out->merges, out->stage2 ? "yes" : "no", out->flow, out->build_ms, out->solve_ms,
                out->label_ms);
    return st;
}

gcut_status gcut__qp_solve_bk(const gcut_graph *g, const gcut_grid *grid, int32_t blocks,
                              int threads, bool verbose, int64_t *base_flow, gcut__qp_output *out) {
    /* bk's own rule: every node and arc id below the reserved values. */
    int64_t nodes = grid != NULL ? grid->num_nodes : g->num_nodes;
    int64_t arcs = grid != NULL
                       ? (nodes > INT64_MAX / GCUT__MAX_DIRS ? INT64_MAX : nodes * grid->num_dirs)
                       : (g->num_edges > INT64_MAX / 2 ? INT64_MAX : 2 * g->num_edges);
    const char *force = getenv("GCUT_QPBO_INDEX_BITS");
    bool wide = (force != NULL && strcmp(force, "64") == 0) || nodes >= (int64_t)UINT32_MAX - 4 ||
                arcs >= (int64_t)UINT32_MAX - 8;
    /* Grids are cut into spatial tiles and built on the threads (src/cpu/par_grid_impl.h);
     * GCUT_PBK_TILES=0 keeps the contiguous index ranges of bk's own layout (comparisons). */
    const char *tiles = getenv("GCUT_PBK_TILES");
    bool tiled = grid != NULL && !(tiles != NULL && strcmp(tiles, "0") == 0);
    gcut_status st;
    if (tiled)
        st = wide ? qp64_solve_grid_tiles(grid, blocks, threads, base_flow, out)
                  : qp32_solve_grid_tiles(grid, blocks, threads, base_flow, out);
    else
        st = wide ? qp64_solve_bk(g, grid, blocks, threads, base_flow, out)
                  : qp32_solve_bk(g, grid, blocks, threads, base_flow, out);
    if (st == GCUT_OK && verbose)
        fprintf(stderr,
                "parallel-bk: %" PRId64 " nodes (%d-bit ids), %d blocks, %d threads, %" PRId64
                " merges, build %.1f ms, solve %.1f ms, labels %.1f ms\n",
                nodes, wide ? 64 : 32, (int)out->blocks, out->threads, out->merges, out->build_ms,
                out->solve_ms, out->label_ms);
    return st;
}
