/* parallel_bk.c - `parallel-bk`: Liu & Sun's parallel max-flow (CVPR 2010: blocks solved at
 * once by bk, merged bottom-up on threads), which is Jeppesen et al.'s P-QPBO (2021, section 3)
 * with only submodular terms: the same core (pqpbo.c) on a graph or grid. Flows and cuts are
 * the same for any thread count and split (the cut returned is the minimal one, as bk's). */
#include "qpbo_internal.h"

#include <string.h>

static void graph_edge(void *ctx, int64_t k, gcut__qp_edge *e) {
    const gcut_graph *g = ctx;
    e->u = gcut__edge_u(g, k);
    e->v = gcut__edge_v(g, k);
    e->cap_uv = g->edge_cap[k];
    e->cap_vu = g->edge_rev[k];
    e->nonsub = 0;
}

typedef struct grid_ctx {
    const gcut_grid *grid;
    int pairs; /* directions with a positive step: one per neighbour pair */
    int dirs[GCUT__MAX_DIRS / 2];
    /* The core asks for edges in order, so node i's coordinates are kept and stepped rather
     * than divided out on every call. */
    int64_t node, x, y, z;
} grid_ctx;

static void grid_edge(void *ctx, int64_t k, gcut__qp_edge *e) {
    grid_ctx *c = ctx;
    const gcut_grid *g = c->grid;
    int64_t i = k / c->pairs;
    if (i == c->node + 1) {
        if (++c->x == g->width) {
            c->x = 0;
            if (++c->y == g->height) {
                c->y = 0;
                c->z++;
            }
        }
        c->node = i;
    } else if (i != c->node) {
        c->x = i % g->width;
        c->y = i / g->width % g->height;
        c->z = i / g->width / g->height;
        c->node = i;
    }
    int d = c->dirs[k % c->pairs];
    const int *o = g->offset[d];
    e->nonsub = 0;
    e->u = e->v = i; /* skipped unless the neighbour exists */
    e->cap_uv = e->cap_vu = 0;
    if (c->z + o[0] < 0 || c->z + o[0] >= g->depth || c->y + o[1] < 0 || c->y + o[1] >= g->height ||
        c->x + o[2] < 0 || c->x + o[2] >= g->width)
        return;
    int64_t j = i + g->step[d];
    e->v = j;
    e->cap_uv = g->cap[d][i];
    e->cap_vu = g->cap[d ^ 1][j];
}

static gcut_status run(gcut__qp_input *in, const gcut_options *options, int64_t base, int64_t *flow,
                       uint8_t *labels, gcut_stats *stats) {
    in->threads = options->threads > 0 ? options->threads : gcut__qp_cores();
    int64_t b = gcut__env_int("GCUT_QPBO_BLOCKS", 4 * in->threads, 1, 1 << 20);
    in->num_blocks = (int32_t)(b > in->num_nodes ? (in->num_nodes > 0 ? in->num_nodes : 1) : b);
    in->verbose = options->verbose != 0;
    gcut__qp_output out;
    memset(&out, 0, sizeof out);
    out.cut = labels;
    gcut_status st = gcut__qp_solve(in, &out);
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
    const int64_t n = g->num_nodes;
    int64_t *tr =
        gcut__malloc(gcut__mul_size((size_t)n + 1, sizeof(int64_t)), "parallel-bk terminals");
    if (tr == NULL)
        return GCUT_ERR_NOMEM;
    int64_t base = 0;
    bool overflow = false;
    for (int64_t i = 0; i < n; i++) {
        int64_t s = g->tw_source[i], t = g->tw_sink[i];
        tr[i] = s - t;
        overflow = overflow || __builtin_add_overflow(base, s < t ? s : t, &base);
    }
    gcut__qp_input in;
    memset(&in, 0, sizeof in);
    in.num_nodes = n;
    in.tr = tr;
    in.num_edges = g->num_edges;
    in.ctx = g;
    in.edge = graph_edge;
    gcut_status st = overflow ? gcut__fail(GCUT_ERR_OVERFLOW,
                                           "parallel-bk: the terminal capacities pass INT64_MAX")
                              : run(&in, options, base, flow, labels, stats);
    gcut__free(tr);
    return st;
}

gcut_status gcut__pbk_solve_grid(const gcut_grid *grid, const gcut_options *options, int64_t *flow,
                                 uint8_t *labels, gcut_stats *stats) {
    const int64_t n = grid->num_nodes;
    int64_t *tr =
        gcut__malloc(gcut__mul_size((size_t)n + 1, sizeof(int64_t)), "parallel-bk terminals");
    if (tr == NULL)
        return GCUT_ERR_NOMEM;
    int64_t base = 0;
    const int32_t *source = grid->terminal[GCUT_SOURCE], *sink = grid->terminal[GCUT_SINK];
    for (int64_t i = 0; i < n; i++) {
        tr[i] = (int64_t)source[i] - sink[i];
        base += source[i] < sink[i] ? source[i] : sink[i];
    }
    grid_ctx ctx;
    ctx.grid = grid;
    ctx.pairs = 0;
    ctx.node = -2;
    for (int d = 0; d < grid->num_dirs; d++)
        if (grid->step[d] > 0)
            ctx.dirs[ctx.pairs++] = d;
    gcut__qp_input in;
    memset(&in, 0, sizeof in);
    in.num_nodes = n;
    in.tr = tr;
    in.num_edges = n * ctx.pairs;
    in.ctx = &ctx;
    in.edge = grid_edge;
    gcut_status st = run(&in, options, base, flow, labels, stats);
    gcut__free(tr);
    return st;
}
