/* grid.c - N-d grid graphs (2D 4/8-connected, 3D 6/26-connected) stored struct-of-arrays:
 * two terminal arrays and one int32 capacity array per direction (Lattari 2010, 5.2; the
 * Intel CM kernels). Creation, validation, the cut certificate, the explicit conversion to a
 * general graph, and grid contexts (many solves of one shape, warm re-solves as in Kohli &
 * Torr 2005, sec. 4) with their graph-solver (bk) path. */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int make_offsets(int ndim, int connectivity, int offset[GCUT__MAX_DIRS][3]) {
    int count = 0;
    if (ndim == 2) {
        static const int d4[4][2] = {{0, 1}, {0, -1}, {1, 0}, {-1, 0}};
        static const int d8[4][2] = {{1, 1}, {-1, -1}, {1, -1}, {-1, 1}};
        for (int k = 0; k < 4; k++, count++) {
            offset[count][0] = 0;
            offset[count][1] = d4[k][0];
            offset[count][2] = d4[k][1];
        }
        if (connectivity == 8)
            for (int k = 0; k < 4; k++, count++) {
                offset[count][0] = 0;
                offset[count][1] = d8[k][0];
                offset[count][2] = d8[k][1];
            }
        return count;
    }
    static const int d6[6][3] = {{0, 0, 1},  {0, 0, -1}, {0, 1, 0},
                                 {0, -1, 0}, {1, 0, 0},  {-1, 0, 0}};
    for (int k = 0; k < 6; k++, count++)
        memcpy(offset[count], d6[k], sizeof d6[k]);
    if (connectivity == 26) {
        /* The 20 others, each canonical offset (first non-zero component positive, at least
         * two non-zero components) followed by its reverse, in lexicographic order. */
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int nonzero = (dz != 0) + (dy != 0) + (dx != 0);
                    int first = dz != 0 ? dz : dy != 0 ? dy : dx;
                    if (nonzero < 2 || first < 0)
                        continue;
                    offset[count][0] = dz;
                    offset[count][1] = dy;
                    offset[count][2] = dx;
                    count++;
                    offset[count][0] = -dz;
                    offset[count][1] = -dy;
                    offset[count][2] = -dx;
                    count++;
                }
    }
    return count;
}

/* gcut_grid_create, with the arrays zeroed or not (gcut__grid_create_unset). */
static gcut_status grid_create(int ndim, const int64_t *shape, int connectivity, bool zero,
                               gcut_grid **out) {
    if (out == NULL || shape == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_create: shape or out is NULL");
    *out = NULL;
    if (ndim != 2 && ndim != 3)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_create: ndim %d is not 2 or 3", ndim);
    if ((ndim == 2 && connectivity != 4 && connectivity != 8) ||
        (ndim == 3 && connectivity != 6 && connectivity != 26))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_grid_create: connectivity %d not valid in %dD (2D: 4 or 8; 3D: "
                          "6 or 26)",
                          connectivity, ndim);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "gcut_grid_create: shape[%d] = %" PRId64 " must be >= 1", i,
                              shape[i]);
        if (n > INT64_MAX / 64 / shape[i])
            return gcut__fail(GCUT_ERR_OVERFLOW, "gcut_grid_create: grid too large");
        n *= shape[i];
    }
    gcut_grid *grid = gcut__calloc(1, sizeof *grid, "grid");
    if (grid == NULL)
        return GCUT_ERR_NOMEM;
    grid->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        grid->shape[i] = shape[i];
    grid->depth = ndim == 3 ? shape[0] : 1;
    grid->height = shape[ndim - 2];
    grid->width = shape[ndim - 1];
    grid->connectivity = connectivity;
    grid->num_nodes = n;
    grid->num_dirs = make_offsets(ndim, connectivity, grid->offset);
    for (int d = 0; d < grid->num_dirs; d++)
        grid->step[d] =
            ((int64_t)grid->offset[d][0] * grid->height + grid->offset[d][1]) * grid->width +
            grid->offset[d][2];
    /* Check the whole footprint first, so that a grid too large fails before any array is
     * touched and the message names the total. */
    uint64_t total = (uint64_t)(2 + grid->num_dirs) * (uint64_t)n * sizeof(int32_t);
    if (gcut__reserve(total, "grid capacity arrays") != 0) {
        gcut__free(grid);
        return GCUT_ERR_NOMEM;
    }
    gcut__unreserve(total);
    for (int t = 0; t < 2; t++)
        if ((grid->terminal[t] =
                 zero ? gcut__calloc((size_t)n, sizeof(int32_t), "grid terminals")
                      : gcut__malloc((size_t)n * sizeof(int32_t), "grid terminals")) == NULL) {
            gcut_grid_free(grid);
            return GCUT_ERR_NOMEM;
        }
    for (int d = 0; d < grid->num_dirs; d++)
        if ((grid->cap[d] = zero ? gcut__calloc((size_t)n, sizeof(int32_t), "grid capacities")
                                 : gcut__malloc((size_t)n * sizeof(int32_t), "grid capacities")) ==
            NULL) {
            gcut_grid_free(grid);
            return GCUT_ERR_NOMEM;
        }
    *out = grid;
    return GCUT_OK;
}

gcut_status gcut_grid_create(int ndim, const int64_t *shape, int connectivity, gcut_grid **out) {
    return grid_create(ndim, shape, connectivity, true, out);
}

gcut_status gcut__grid_create_unset(int ndim, const int64_t *shape, int connectivity,
                                    gcut_grid **out) {
    return grid_create(ndim, shape, connectivity, false, out);
}

void gcut_grid_free(gcut_grid *grid) {
    if (grid == NULL || grid->context_owned)
        return;
    for (int t = 0; t < 2 && !grid->borrowed; t++)
        gcut__free(grid->terminal[t]);
    for (int d = 0; d < grid->num_dirs && !grid->borrowed; d++)
        gcut__free(grid->cap[d]);
    gcut__free(grid);
}

int gcut_grid_ndim(const gcut_grid *grid) {
    return grid ? grid->ndim : 0;
}

void gcut_grid_shape(const gcut_grid *grid, int64_t *shape) {
    if (grid == NULL || shape == NULL)
        return;
    for (int i = 0; i < grid->ndim; i++)
        shape[i] = grid->shape[i];
}

int gcut_grid_connectivity(const gcut_grid *grid) {
    return grid ? grid->connectivity : 0;
}

int gcut_grid_num_dirs(const gcut_grid *grid) {
    return grid ? grid->num_dirs : 0;
}

int64_t gcut_grid_num_nodes(const gcut_grid *grid) {
    return grid ? grid->num_nodes : 0;
}

gcut_status gcut_grid_offset(const gcut_grid *grid, int dir, int *offset) {
    if (grid == NULL || offset == NULL || dir < 0 || dir >= grid->num_dirs)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_offset: direction %d out of range", dir);
    for (int i = 0; i < grid->ndim; i++)
        offset[i] = grid->offset[dir][3 - grid->ndim + i];
    return GCUT_OK;
}

int32_t *gcut_grid_terminal_data(gcut_grid *grid, int which) {
    if (grid == NULL || (which != GCUT_SOURCE && which != GCUT_SINK))
        return NULL;
    return grid->terminal[which];
}

int32_t *gcut_grid_dir_data(gcut_grid *grid, int dir) {
    if (grid == NULL || dir < 0 || dir >= grid->num_dirs)
        return NULL;
    return grid->cap[dir];
}

const int32_t *gcut_grid_terminal_cdata(const gcut_grid *grid, int which) {
    return gcut_grid_terminal_data((gcut_grid *)grid, which);
}

const int32_t *gcut_grid_dir_cdata(const gcut_grid *grid, int dir) {
    return gcut_grid_dir_data((gcut_grid *)grid, dir);
}

static gcut_status check_nonnegative(const int32_t *values, int64_t n, const char *fn,
                                     const char *what) {
    for (int64_t i = 0; i < n; i++)
        if (values[i] < 0)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "%s: %s capacity at index %" PRId64 " is negative (%d)", fn, what, i,
                              (int)values[i]);
    return GCUT_OK;
}

gcut_status gcut_grid_set_terminals(gcut_grid *grid, const int32_t *source, const int32_t *sink) {
    if (grid == NULL || source == NULL || sink == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_set_terminals: NULL argument");
    gcut_status st =
        check_nonnegative(source, grid->num_nodes, "gcut_grid_set_terminals", "source");
    if (st == GCUT_OK)
        st = check_nonnegative(sink, grid->num_nodes, "gcut_grid_set_terminals", "sink");
    if (st != GCUT_OK)
        return st;
    memcpy(grid->terminal[GCUT_SOURCE], source, (size_t)grid->num_nodes * sizeof(int32_t));
    memcpy(grid->terminal[GCUT_SINK], sink, (size_t)grid->num_nodes * sizeof(int32_t));
    return GCUT_OK;
}

gcut_status gcut_grid_set_dir(gcut_grid *grid, int dir, const int32_t *cap) {
    if (grid == NULL || cap == NULL || dir < 0 || dir >= grid->num_dirs)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_grid_set_dir: NULL argument or direction %d out of range", dir);
    char what[32];
    snprintf(what, sizeof what, "direction %d", dir);
    gcut_status st = check_nonnegative(cap, grid->num_nodes, "gcut_grid_set_dir", what);
    if (st != GCUT_OK)
        return st;
    memcpy(grid->cap[dir], cap, (size_t)grid->num_nodes * sizeof(int32_t));
    return GCUT_OK;
}

gcut_status gcut_grid_validate(const gcut_grid *grid) {
    if (grid == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_validate: grid is NULL");
    gcut_status st = check_nonnegative(grid->terminal[GCUT_SOURCE], grid->num_nodes,
                                       "gcut_grid_validate", "source");
    if (st == GCUT_OK)
        st = check_nonnegative(grid->terminal[GCUT_SINK], grid->num_nodes, "gcut_grid_validate",
                               "sink");
    for (int d = 0; d < grid->num_dirs && st == GCUT_OK; d++) {
        char what[32];
        snprintf(what, sizeof what, "direction %d", d);
        st = check_nonnegative(grid->cap[d], grid->num_nodes, "gcut_grid_validate", what);
    }
    return st;
}

bool gcut__grid_has_neighbor(const gcut_grid *grid, int64_t i, int dir) {
    int64_t x = i % grid->width;
    int64_t y = (i / grid->width) % grid->height;
    int64_t z = i / (grid->width * grid->height);
    int64_t nx = x + grid->offset[dir][2], ny = y + grid->offset[dir][1],
            nz = z + grid->offset[dir][0];
    return nx >= 0 && nx < grid->width && ny >= 0 && ny < grid->height && nz >= 0 &&
           nz < grid->depth;
}

gcut_status gcut_grid_to_graph(const gcut_grid *grid, gcut_graph **out) {
    if (grid == NULL || out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_to_graph: NULL argument");
    *out = NULL;
    gcut_status st = gcut_grid_validate(grid);
    if (st != GCUT_OK)
        return st;
    /* Count the neighbour pairs exactly, so that the edge arrays are allocated once. */
    int64_t pairs = 0;
    for (int d = 0; d < grid->num_dirs; d += 2) {
        int64_t cz = grid->depth - (grid->offset[d][0] != 0);
        int64_t cy = grid->height - (grid->offset[d][1] != 0);
        int64_t cx = grid->width - (grid->offset[d][2] != 0);
        if (cz > 0 && cy > 0 && cx > 0)
            pairs += cz * cy * cx;
    }
    gcut_graph *g = NULL;
    st = gcut_graph_create(grid->num_nodes, pairs, &g);
    if (st != GCUT_OK)
        return st;
    const int64_t n = grid->num_nodes;
    for (int64_t i = 0; i < n; i++) {
        g->tw_source[i] = grid->terminal[GCUT_SOURCE][i];
        g->tw_sink[i] = grid->terminal[GCUT_SINK][i];
    }
    int64_t e = 0;
    for (int64_t z = 0; z < grid->depth; z++)
        for (int64_t y = 0; y < grid->height; y++)
            for (int64_t x = 0; x < grid->width; x++) {
                int64_t i = (z * grid->height + y) * grid->width + x;
                for (int d = 0; d < grid->num_dirs; d += 2) {
                    int64_t nz = z + grid->offset[d][0], ny = y + grid->offset[d][1],
                            nx = x + grid->offset[d][2];
                    if (nz < 0 || nz >= grid->depth || ny < 0 || ny >= grid->height || nx < 0 ||
                        nx >= grid->width)
                        continue;
                    int64_t j = i + grid->step[d];
                    if (g->ids32) {
                        g->edge_u32[e] = (uint32_t)i;
                        g->edge_v32[e] = (uint32_t)j;
                    } else {
                        g->edge_u64[e] = i;
                        g->edge_v64[e] = j;
                    }
                    g->edge_cap[e] = grid->cap[d][i];
                    g->edge_rev[e] = grid->cap[d ^ 1][j];
                    e++;
                }
            }
    g->num_edges = e;
    *out = g;
    return GCUT_OK;
}

gcut_status gcut_grid_verify(const gcut_grid *grid, const uint8_t *labels, int64_t flow,
                             int64_t *cut_value) {
    if (grid == NULL || labels == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_verify: grid or labels is NULL");
    int64_t cut = 0;
    for (int64_t z = 0; z < grid->depth; z++)
        for (int64_t y = 0; y < grid->height; y++)
            for (int64_t x = 0; x < grid->width; x++) {
                int64_t i = (z * grid->height + y) * grid->width + x;
                if (labels[i] > 1)
                    return gcut__fail(GCUT_ERR_INVALID_ARG,
                                      "gcut_grid_verify: label %d of node %" PRId64
                                      " is not 0 or 1",
                                      labels[i], i);
                if (labels[i] == GCUT_SINK) {
                    cut += grid->terminal[GCUT_SOURCE][i];
                    continue;
                }
                cut += grid->terminal[GCUT_SINK][i];
                for (int d = 0; d < grid->num_dirs; d++) {
                    int64_t nz = z + grid->offset[d][0], ny = y + grid->offset[d][1],
                            nx = x + grid->offset[d][2];
                    if (nz < 0 || nz >= grid->depth || ny < 0 || ny >= grid->height || nx < 0 ||
                        nx >= grid->width)
                        continue;
                    if (labels[i + grid->step[d]] == GCUT_SINK)
                        cut += grid->cap[d][i];
                }
            }
    if (cut_value)
        *cut_value = cut;
    if (cut != flow)
        return gcut__fail(GCUT_ERR_VERIFY,
                          "cut certificate failed: cut capacity %" PRId64
                          " differs from flow value %" PRId64,
                          cut, flow);
    return GCUT_OK;
}

/* ------------------------------------------------------------------------------------------
 * Grid contexts
 * ---------------------------------------------------------------------------------------- */

typedef enum { CTX_CPUPR, CTX_CUDA, CTX_GRAPH, CTX_GRIDBK } ctx_kind;

struct gcut_grid_context {
    gcut_grid *grid;
    gcut_options options;
    char solver_name[32];
    ctx_kind kind;
    const gcut__solver *solver;
    void *state; /* cpu-pr / cuda-grid state */
    /* The changes promised since the last solve (gcut_grid_context_mark_*). */
    int64_t *marks;
    int64_t num_marks, mark_room;
    int64_t num_whole; /* marks of whole nodes (the rest promise terminal changes only) */
    /* Per node: mark_gen << 1 | whole while listed since the last solve (older values: not
     * listed), so clearing the marks after a solve is a new generation, not ~count scattered
     * writes (a memset of n bytes once per 127 generations). */
    uint8_t *mark_seen;
    uint8_t mark_gen;
    bool marks_given;
    /* Graph solvers: the graph of the last solve and the first edge number of each node (the
     * edges of node i are its even directions that stay inside the grid, in order). */
    gcut_graph *graph;
    int64_t *edge_start;
    bool solved;
    gcut_grid_context_info info;
    uint8_t *view_labels; /* gcut_grid_context_solve_view()'s labels for solvers that keep none */
};

gcut_status gcut_grid_context_create(int ndim, const int64_t *shape, int connectivity,
                                     const gcut_options *options, gcut_grid_context **out) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_context_create: out is NULL");
    *out = NULL;
    gcut_options defaults;
    if (options == NULL) {
        gcut_options_init(&defaults);
        options = &defaults;
    }
    gcut_grid *grid = NULL;
    gcut_status st = gcut_grid_create(ndim, shape, connectivity, &grid);
    if (st != GCUT_OK)
        return st;
    st = GCUT_OK;
    const gcut__solver *solver = gcut__solver_pick(options, true, grid->num_nodes, &st);
    if (solver == NULL) {
        gcut_grid_free(grid);
        return st;
    }
    gcut_grid_context *ctx = gcut__calloc(1, sizeof *ctx, "grid context");
    if (ctx == NULL) {
        gcut_grid_free(grid);
        return GCUT_ERR_NOMEM;
    }
    ctx->grid = grid;
    ctx->options = *options;
    ctx->options.solver = solver->name;
    ctx->solver = solver;
    snprintf(ctx->solver_name, sizeof ctx->solver_name, "%s", solver->name);
    snprintf(ctx->info.solver, sizeof ctx->info.solver, "%s", solver->name);
    grid->context_owned = true;
    if (strcmp(solver->name, "cpu-pr") == 0) {
        ctx->kind = CTX_CPUPR;
        st = gcut__cpupr_ctx_create(grid, &ctx->options, &ctx->state);
    } else if (strcmp(solver->name, "grid-bk") == 0) {
        ctx->kind = CTX_GRIDBK;
        st = gcut__gridbk_ctx_create(grid, &ctx->options, &ctx->state);
#ifdef GCUT_HAVE_CUDA
    } else if (strcmp(solver->name, "cuda-grid") == 0) {
        ctx->kind = CTX_CUDA;
        st = gcut__cudagrid_ctx_create(grid, &ctx->options, &ctx->state);
#endif
    } else if (solver->solve_graph != NULL) {
        ctx->kind = CTX_GRAPH;
    } else {
        st = gcut__fail(GCUT_ERR_UNSUPPORTED,
                        "gcut_grid_context_create: solver '%s' has no "
                        "context",
                        solver->name);
    }
    if (st != GCUT_OK) {
        gcut_grid_context_free(ctx);
        return st;
    }
    *out = ctx;
    return GCUT_OK;
}

void gcut_grid_context_free(gcut_grid_context *ctx) {
    if (ctx == NULL)
        return;
    if (ctx->state != NULL) {
        if (ctx->kind == CTX_CPUPR)
            gcut__cpupr_ctx_free(ctx->state);
        else if (ctx->kind == CTX_GRIDBK)
            gcut__gridbk_ctx_free(ctx->state);
#ifdef GCUT_HAVE_CUDA
        else if (ctx->kind == CTX_CUDA)
            gcut__cudagrid_ctx_free(ctx->state, ctx->grid);
#endif
    }
    gcut_graph_free(ctx->graph);
    gcut__free(ctx->edge_start);
    gcut__free(ctx->marks);
    gcut__free(ctx->mark_seen);
    gcut__free(ctx->view_labels);
    if (ctx->grid != NULL) {
        ctx->grid->context_owned = false;
        gcut_grid_free(ctx->grid);
    }
    gcut__free(ctx);
}

gcut_grid *gcut_grid_context_grid(gcut_grid_context *ctx) {
    return ctx ? ctx->grid : NULL;
}

/* What a mark promises: the whole node changed, or its terminals only. */
enum { MARK_WHOLE = 1, MARK_TERMINALS = 2 };
enum { MARK_GEN_LAST = 127 }; /* mark_gen runs 1..MARK_GEN_LAST */

static gcut_status mark_one(gcut_grid_context *ctx, int64_t node, int64_t entry, int kind,
                            const char *fn) {
    if (node < 0 || node >= ctx->grid->num_nodes)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "%s: entry %" PRId64 " is node %" PRId64 ", not in [0, %" PRId64 ")", fn,
                          entry, node, ctx->grid->num_nodes);
    if (ctx->mark_seen == NULL) {
        if ((ctx->mark_seen = gcut__calloc((size_t)ctx->grid->num_nodes, 1, "context marks")) ==
            NULL)
            return GCUT_ERR_NOMEM;
        ctx->mark_gen = 1;
    }
    const uint8_t seen = ctx->mark_seen[node];
    if (seen >> 1 == ctx->mark_gen) {
        if (kind == MARK_WHOLE && !(seen & 1)) {
            ctx->mark_seen[node] = (uint8_t)(seen | 1); /* listed both ways: the whole node */
            ctx->num_whole++;
        }
        return GCUT_OK;
    }
    if (ctx->num_marks == ctx->mark_room) {
        int64_t room = ctx->mark_room ? 2 * ctx->mark_room : 1024;
        int64_t *grown = gcut__realloc(ctx->marks, gcut__mul_size((size_t)room, sizeof(int64_t)),
                                       "context mark list");
        if (grown == NULL)
            return GCUT_ERR_NOMEM;
        ctx->marks = grown;
        ctx->mark_room = room;
    }
    ctx->mark_seen[node] = (uint8_t)(ctx->mark_gen << 1 | (kind == MARK_WHOLE));
    ctx->num_whole += kind == MARK_WHOLE;
    ctx->marks[ctx->num_marks++] = node;
    return GCUT_OK;
}

static gcut_status mark_list(gcut_grid_context *ctx, const int64_t *nodes, int64_t count, int kind,
                             const char *fn) {
    if (ctx == NULL || (nodes == NULL && count > 0) || count < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "%s: NULL context or nodes, or count < 0", fn);
    /* Check every entry first, so that a bad list leaves the marks as they were. */
    for (int64_t k = 0; k < count; k++)
        if (nodes[k] < 0 || nodes[k] >= ctx->grid->num_nodes)
            return mark_one(ctx, nodes[k], k, kind, fn);
    ctx->marks_given = true;
    for (int64_t k = 0; k < count; k++) {
        gcut_status st = mark_one(ctx, nodes[k], k, kind, fn);
        if (st != GCUT_OK)
            return st;
    }
    return GCUT_OK;
}

gcut_status gcut_grid_context_mark_nodes(gcut_grid_context *ctx, const int64_t *nodes,
                                         int64_t count) {
    return mark_list(ctx, nodes, count, MARK_WHOLE, "gcut_grid_context_mark_nodes");
}

gcut_status gcut_grid_context_mark_terminals(gcut_grid_context *ctx, const int64_t *nodes,
                                             int64_t count) {
    return mark_list(ctx, nodes, count, MARK_TERMINALS, "gcut_grid_context_mark_terminals");
}

gcut_status gcut_grid_context_mark_mask(gcut_grid_context *ctx, const uint8_t *mask) {
    if (ctx == NULL || mask == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_context_mark_mask: NULL argument");
    ctx->marks_given = true;
    for (int64_t i = 0; i < ctx->grid->num_nodes; i++)
        if (mask[i]) {
            gcut_status st = mark_one(ctx, i, i, MARK_WHOLE, "gcut_grid_context_mark_mask");
            if (st != GCUT_OK)
                return st;
        }
    return GCUT_OK;
}

static void clear_marks(gcut_grid_context *ctx) {
    if (ctx->mark_seen != NULL && ctx->num_marks > 0 && ++ctx->mark_gen > MARK_GEN_LAST) {
        memset(ctx->mark_seen, 0, (size_t)ctx->grid->num_nodes);
        ctx->mark_gen = 1;
    }
    ctx->num_marks = 0;
    ctx->num_whole = 0;
    ctx->marks_given = false;
}

/* Negative capacities on the nodes a solve will read (all, or the marked ones; their terminals
 * alone after terminal marks alone, which promise the arcs did not change). */
static gcut_status check_marked(const gcut_grid *grid, const int64_t *nodes, int64_t count,
                                bool terminals_only) {
    for (int64_t k = 0; k < count; k++) {
        int64_t i = nodes[k];
        for (int t = 0; t < 2; t++)
            if (grid->terminal[t][i] < 0)
                return gcut__fail(
                    GCUT_ERR_INVALID_ARG,
                    "gcut_grid_context_solve: %s capacity at index %" PRId64 " is negative (%d)",
                    t == GCUT_SOURCE ? "source" : "sink", i, (int)grid->terminal[t][i]);
        for (int d = 0; d < (terminals_only ? 0 : grid->num_dirs); d++)
            if (grid->cap[d][i] < 0)
                return gcut__fail(GCUT_ERR_INVALID_ARG,
                                  "gcut_grid_context_solve: direction %d capacity at index "
                                  "%" PRId64 " is negative (%d)",
                                  d, i, (int)grid->cap[d][i]);
    }
    return GCUT_OK;
}

/* Edge number of the pair that holds arc (i, d), or -1 if the arc leaves the grid. */
static int64_t pair_edge(const gcut_grid_context *ctx, int64_t i, int d) {
    const gcut_grid *grid = ctx->grid;
    if (!gcut__grid_has_neighbor(grid, i, d))
        return -1;
    int64_t owner = i;
    int even = d;
    if (d & 1) {
        owner = i + grid->step[d];
        even = d ^ 1;
    }
    int64_t e = ctx->edge_start[owner];
    for (int k = 0; k < even; k += 2)
        if (gcut__grid_has_neighbor(grid, owner, k))
            e++;
    return e;
}

/* Bring the graph's capacities up to the grid's for node i (terminals, and unless
 * terminals_only every arc pair touching i); counts i in *changed if anything differed. */
static gcut_status graph_update_node(gcut_grid_context *ctx, int64_t i, bool terminals_only,
                                     int64_t *changed) {
    const gcut_grid *grid = ctx->grid;
    gcut_graph *g = ctx->graph;
    bool any = false;
    const int64_t src = grid->terminal[GCUT_SOURCE][i], snk = grid->terminal[GCUT_SINK][i];
    gcut_status st = GCUT_OK;
    if (g->tw_source[i] != src || g->tw_sink[i] != snk) {
        any = true;
        if ((st = gcut_graph_set_tweights(g, i, src, snk)) != GCUT_OK)
            return st;
    }
    for (int d = 0; d < (terminals_only ? 0 : grid->num_dirs); d++) {
        int64_t e = pair_edge(ctx, i, d);
        if (e < 0)
            continue;
        int64_t u = (d & 1) ? i + grid->step[d] : i;
        int even = (d & 1) ? d ^ 1 : d;
        int32_t cap = grid->cap[even][u], rev = grid->cap[even ^ 1][u + grid->step[even]];
        if (g->edge_cap[e] != cap || g->edge_rev[e] != rev) {
            any = true;
            if ((st = gcut_graph_set_edge(g, e, cap, rev)) != GCUT_OK)
                return st;
        }
    }
    *changed += any;
    return GCUT_OK;
}

/* terminals_only: every mark is a terminal mark (the arcs of the marked nodes are not read). */
static gcut_status graph_solve(gcut_grid_context *ctx, bool warm, bool terminals_only,
                               int64_t *flow, uint8_t *labels, gcut_stats *stats,
                               gcut__ctx_report *report) {
    const gcut_grid *grid = ctx->grid;
    double t0 = gcut__now_ms();
    gcut_status st = GCUT_OK;
    int64_t changed = 0;
    if (!warm || ctx->graph == NULL) {
        gcut_graph_free(ctx->graph);
        ctx->graph = NULL;
        if ((st = gcut_grid_to_graph(grid, &ctx->graph)) != GCUT_OK)
            return st;
        if (ctx->edge_start == NULL &&
            (ctx->edge_start =
                 gcut__malloc(gcut__mul_size((size_t)grid->num_nodes, sizeof(int64_t)),
                              "context edge map")) == NULL)
            return GCUT_ERR_NOMEM;
        int64_t e = 0;
        for (int64_t i = 0; i < grid->num_nodes; i++) {
            ctx->edge_start[i] = e;
            for (int d = 0; d < grid->num_dirs; d += 2)
                e += gcut__grid_has_neighbor(grid, i, d);
        }
        warm = false;
    } else if (ctx->marks_given) {
        for (int64_t k = 0; k < ctx->num_marks && st == GCUT_OK; k++)
            st = graph_update_node(ctx, ctx->marks[k], terminals_only, &changed);
    } else {
        for (int64_t i = 0; i < grid->num_nodes && st == GCUT_OK; i++)
            st = graph_update_node(ctx, i, false, &changed);
    }
    if (st != GCUT_OK) {
        gcut_graph_free(ctx->graph); /* half-updated: the next solve starts cold */
        ctx->graph = NULL;
        return st;
    }
    /* Conversion or update time counts as build, as in gcut_grid_solve(). */
    double update_ms = gcut__now_ms() - t0;
    gcut_options options = ctx->options;
    options.warm = ctx->options.warm ? 1 : 0;
    st = gcut_graph_solve(ctx->graph, &options, flow, labels, stats);
    if (st != GCUT_OK) {
        gcut_graph_free(ctx->graph);
        ctx->graph = NULL;
        return st;
    }
    stats->build_ms += update_ms;
    report->warm = warm;
    report->changed_nodes = changed;
    return GCUT_OK;
}

/* gcut_grid_context_solve(), and with view gcut_grid_context_solve_view(): *view gets the
 * solver's own copy of the labels (cuda-grid's pinned array), or ctx->view_labels filled by
 * the solve. */
static gcut_status context_solve(gcut_grid_context *ctx, int64_t *flow, uint8_t *labels,
                                 const uint8_t **view, gcut_stats *stats) {
    const gcut_grid *grid = ctx->grid;
    if (view != NULL && ctx->kind != CTX_CUDA) {
        if (ctx->view_labels == NULL &&
            (ctx->view_labels = gcut__malloc((size_t)grid->num_nodes, "context labels")) == NULL)
            return GCUT_ERR_NOMEM;
        labels = ctx->view_labels;
    }
    const bool warm = ctx->options.warm && ctx->solved;
    /* Terminal marks alone: no solver reads the marked nodes' arcs (the marks' promise). */
    const bool terminals_only = ctx->marks_given && ctx->num_whole == 0;
    /* cuda-grid checks a full upload on the device, and the marked nodes while it gathers
     * them (one pass over scattered host memory instead of two): faster than here. */
    gcut_status st = ctx->kind == CTX_CUDA ? GCUT_OK
                     : warm && ctx->marks_given
                         ? check_marked(grid, ctx->marks, ctx->num_marks, terminals_only)
                         : gcut_grid_validate(grid);
    if (st != GCUT_OK)
        return st;
    gcut_stats local;
    gcut_stats *s = stats ? stats : &local;
    memset(s, 0, sizeof *s);
    gcut__ctx_report report = {0, 0, 0, 0, 0, NULL, 0, 0};
    int64_t value = 0;
    gcut__ctx_changes changes = {NULL, 0, warm, 0, view != NULL};
    if (ctx->marks_given) {
        changes.nodes = ctx->marks;
        changes.count = ctx->num_marks;
        changes.terminals_only = terminals_only;
    }
    if (ctx->kind == CTX_CPUPR)
        st = gcut__cpupr_ctx_solve(ctx->state, grid, &changes, &value, labels, s, &report);
    else if (ctx->kind == CTX_GRIDBK)
        st = gcut__gridbk_ctx_solve(ctx->state, grid, &changes, &value, labels, s, &report);
#ifdef GCUT_HAVE_CUDA
    else if (ctx->kind == CTX_CUDA)
        st = gcut__cudagrid_ctx_solve(ctx->state, grid, &changes, &value, labels, s, &report);
#endif
    else
        st = graph_solve(ctx, warm, terminals_only, &value, labels, s, &report);
    if (st != GCUT_OK) {
        ctx->solved = false; /* the next solve starts cold */
        return st;
    }
    clear_marks(ctx);
    ctx->solved = true;
    ctx->info.solves++;
    ctx->info.warm_solves += report.warm;
    ctx->info.cold_fallbacks += report.cold_fallback;
    ctx->info.changed_nodes = report.changed_nodes;
    ctx->info.device_bytes = report.device_bytes;
    ctx->info.incremental += report.incremental == 1;
    ctx->info.sparse_stops += report.sparse == 1;
    ctx->info.certified_stops += report.certified == 1;
    snprintf(s->solver, sizeof s->solver, "%s", ctx->solver_name);
    s->flow = value;
    if (flow)
        *flow = value;
    if (view != NULL)
        *view = report.labels_view != NULL ? report.labels_view : ctx->view_labels;
    return GCUT_OK;
}

gcut_status gcut_grid_context_solve(gcut_grid_context *ctx, int64_t *flow, uint8_t *labels,
                                    gcut_stats *stats) {
    if (ctx == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_context_solve: context is NULL");
    return context_solve(ctx, flow, labels, NULL, stats);
}

gcut_status gcut_grid_context_solve_view(gcut_grid_context *ctx, int64_t *flow,
                                         const uint8_t **labels, gcut_stats *stats) {
    if (ctx == NULL || labels == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_grid_context_solve_view: context or labels is NULL");
    *labels = NULL;
    return context_solve(ctx, flow, NULL, labels, stats);
}

gcut_status gcut_grid_context_solve_device(gcut_grid_context *ctx, const int32_t *source,
                                           const int32_t *sink, const int32_t *const *dirs,
                                           uint8_t *labels, void *stream, int64_t *flow,
                                           gcut_stats *stats) {
    if (ctx == NULL || source == NULL || sink == NULL || dirs == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_grid_context_solve_device: context, source, sink or dirs is NULL");
    for (int d = 0; d < ctx->grid->num_dirs; d++)
        if (dirs[d] == NULL)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "gcut_grid_context_solve_device: dirs[%d] is NULL", d);
#ifdef GCUT_HAVE_CUDA
    if (ctx->kind == CTX_CUDA) {
        gcut_stats local;
        gcut_stats *s = stats ? stats : &local;
        memset(s, 0, sizeof *s);
        gcut__ctx_report report = {0, 0, 0, 0, 0, NULL, 0, 0};
        int64_t value = 0;
        gcut_status st =
            gcut__cudagrid_ctx_solve_device(ctx->state, source, sink, dirs, labels, stream,
                                            ctx->options.warm && ctx->solved, &value, s, &report);
        if (st != GCUT_OK) {
            ctx->solved = false;
            return st;
        }
        clear_marks(ctx);
        ctx->solved = true;
        ctx->info.solves++;
        ctx->info.warm_solves += report.warm;
        ctx->info.cold_fallbacks += report.cold_fallback;
        ctx->info.changed_nodes = report.changed_nodes;
        ctx->info.device_bytes = report.device_bytes;
        snprintf(s->solver, sizeof s->solver, "%s", ctx->solver_name);
        s->flow = value;
        if (flow)
            *flow = value;
        return GCUT_OK;
    }
#else
    (void)labels;
    (void)stream;
    (void)flow;
    (void)stats;
#endif
    return gcut__fail(GCUT_ERR_UNSUPPORTED,
                      "gcut_grid_context_solve_device: the context's solver '%s' takes host "
                      "arrays only (device arrays need cuda-grid)",
                      ctx->solver_name);
}

gcut_status gcut_grid_context_get_info(const gcut_grid_context *ctx, gcut_grid_context_info *info) {
    if (ctx == NULL || info == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_context_get_info: NULL argument");
    *info = ctx->info;
    return GCUT_OK;
}

gcut_status gcut_device_init(int device) {
#ifdef GCUT_HAVE_CUDA
    return gcut__cuda_device_init(device);
#else
    (void)device;
    return gcut__fail(GCUT_ERR_UNSUPPORTED,
                      "gcut_device_init: this build has no CUDA (configure with -DGCUT_CUDA=ON)");
#endif
}

void gcut_device_release_cache(void) {
#ifdef GCUT_HAVE_CUDA
    gcut__band_device_release();
    gcut__cuda_release_cache();
#endif
}
