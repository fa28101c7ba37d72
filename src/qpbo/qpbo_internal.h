/* qpbo_internal.h - the solver core shared by `qpbo`, `pqpbo` and `parallel-bk`: a binary
 * energy already in normal form (terminal residuals, submodular arc pairs, non-submodular
 * couplings) solved by the two-stage, block-merging scheme of Jeppesen et al. 2021, section 3. */
#ifndef GCUT_QPBO_INTERNAL_H
#define GCUT_QPBO_INTERNAL_H

#include "internal.h"

#include <stdbool.h>
#include <stdint.h>

/* One edge of the normal form. Submodular: arcs u->v (cap_uv) and v->u (cap_vu). Non-
 * submodular (nonsub = 1): the energy cap_uv * [x_u = 1][x_v = 1], as the arcs v'->u and
 * u'->v of the doubled graph (x' the flipped copy), cap_vu unused. Caps in [0, INT32_MAX]. */
typedef struct gcut__qp_edge {
    int64_t u, v;
    int64_t cap_uv, cap_vu;
    int nonsub;
} gcut__qp_edge;

typedef struct gcut__qp_input {
    int64_t num_nodes;
    /* Per node: source capacity minus sink capacity (the cut pays max(tr, 0) with the node on
     * the sink side, max(-tr, 0) with it on the source side; label 0 = source side). */
    const int64_t *tr;
    int64_t num_edges;
    void *ctx;
    /* Edge k (0 <= k < num_edges); called twice per edge (count, then place). */
    void (*edge)(void *ctx, int64_t k, gcut__qp_edge *edge);
    bool has_nonsub; /* some edge is non-submodular: the flipped copy is allocated */
    /* Blocks: block[node] in [0, num_blocks), or NULL for num_blocks contiguous node ranges. */
    const int32_t *block;
    int32_t num_blocks;
    int threads; /* >= 1 */
    bool verbose;
} gcut__qp_input;

typedef struct gcut__qp_output {
    int8_t *labels; /* may be NULL: QPBO labels 0 / 1 / -1 per node */
    uint8_t *cut;   /* may be NULL: GCUT_SOURCE for nodes reachable from the source, else
                       GCUT_SINK (the minimal minimum cut, as bk returns) */
    int64_t flow;   /* max flow of the graph, of the doubled graph when stage2 */
    bool stage2;
    int64_t merges;
    int threads;
    int32_t blocks;
    int64_t augmentations;
    double build_ms, solve_ms, label_ms;
    uint64_t bytes; /* bytes held after building, plus the labelling's peak extra */
} gcut__qp_output;

/** Solve. @return GCUT_ERR_NOMEM, GCUT_ERR_OVERFLOW (flow past int64), GCUT_ERR_INTERNAL. */
gcut_status gcut__qp_solve(const gcut__qp_input *in, gcut__qp_output *out);

/** Term t's nodes and energies E00, E01, E10, E11 (the writer; qpbo.c owns the layout). */
void gcut__qpbo_term(const gcut_qpbo *q, int64_t t, int64_t *i, int64_t *j, int32_t *e);
/** The block ids set by gcut_qpbo_set_blocks, or NULL. */
const int32_t *gcut__qpbo_blocks(const gcut_qpbo *q);
/** Node p's unary sums. */
void gcut__qpbo_unary(const gcut_qpbo *q, int64_t p, int64_t *e0, int64_t *e1);

/** parallel-bk: the graph g (grid NULL) or the grid, laid out by bk's own build, cut into
 *  `blocks` contiguous node ranges, solved on `threads` threads. out->cut gets the minimal
 *  minimum cut; out->flow + *base_flow is the maximum flow (the graph's flow_offset not
 *  included). */
gcut_status gcut__qp_solve_bk(const gcut_graph *g, const gcut_grid *grid, int32_t blocks,
                              int threads, bool verbose, int64_t *base_flow, gcut__qp_output *out);

#endif /* GCUT_QPBO_INTERNAL_H */
