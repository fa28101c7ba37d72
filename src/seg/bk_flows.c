/* bk_flows.c - the arc flows of a graph that bk has solved (its kept warm state: residual arcs
 * and the edge -> arc map of Kohli & Torr 2005, sec. 4), read for GrabCut's warm start of the
 * full-size cut from the half-size one (docs/GRABCUT.md, "Third pass"). Reads src/cpu's state
 * through the same header bk.c builds it from; does not change it. */
#include "internal.h"
#include "seg_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The solver's layout, from the header bk.c is built from (32-bit indices: the only width read
 * here). Its functions are not used in this file. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#define BK_IDX uint32_t
#define BK_FN(name) segflow32_##name
#include "../cpu/bk_impl.h"
#undef BK_IDX
#undef BK_FN
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

gcut_status gcut__bk_edge_flows(const gcut_graph *g, int64_t *flows) {
    if (g == NULL || flows == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "bk edge flows: graph or output is NULL");
    /* bk.c takes 64-bit indices for huge graphs or when GCUT_BK_INDEX_BITS=64 asks: not read. */
    const char *force = getenv("GCUT_BK_INDEX_BITS");
    const bool wide = (force != NULL && strcmp(force, "64") == 0) ||
                      g->num_nodes >= (int64_t)UINT32_MAX - 4 ||
                      g->num_edges >= ((int64_t)UINT32_MAX - 8) / 2;
    if (wide || g->state.data == NULL || g->state.owner == NULL ||
        strcmp(g->state.owner, "bk") != 0 || g->structure_changed || g->num_changes != 0)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "bk edge flows: the graph holds no current 32-bit bk state");
    const segflow32_solver *bk = g->state.data;
    int64_t arcs = 0;
    for (int64_t e = 0; e < g->num_edges; e++)
        arcs += gcut__edge_u(g, e) != gcut__edge_v(g, e) ? 2 : 0;
    if ((int64_t)bk->num_nodes != g->num_nodes || (int64_t)bk->num_arcs != arcs ||
        bk->edge_arc == NULL)
        return gcut__fail(GCUT_ERR_UNSUPPORTED, "bk edge flows: the bk state keeps no edge map");
    for (int64_t e = 0; e < g->num_edges; e++) {
        const uint32_t a = bk->edge_arc[e];
        /* Flow u -> v: the capacity less the residual (negative: flow v -> u). */
        flows[e] = a == (uint32_t)-1 ? 0 : (int64_t)g->edge_cap[e] - (int64_t)bk->arcs[a].residual;
    }
    return GCUT_OK;
}
