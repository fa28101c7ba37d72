/* grid.c - N-d grid graphs (2D 4/8-connected, 3D 6/26-connected) stored struct-of-arrays:
 * two terminal arrays and one int32 capacity array per direction (Lattari 2010, 5.2; the
 * Intel CM kernels). Creation, validation, the cut certificate and the explicit conversion
 * to a general graph. */
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

gcut_status gcut_grid_create(int ndim, const int64_t *shape, int connectivity, gcut_grid **out) {
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
        if ((grid->terminal[t] = gcut__calloc((size_t)n, sizeof(int32_t), "grid terminals")) ==
            NULL) {
            gcut_grid_free(grid);
            return GCUT_ERR_NOMEM;
        }
    for (int d = 0; d < grid->num_dirs; d++)
        if ((grid->cap[d] = gcut__calloc((size_t)n, sizeof(int32_t), "grid capacities")) == NULL) {
            gcut_grid_free(grid);
            return GCUT_ERR_NOMEM;
        }
    *out = grid;
    return GCUT_OK;
}

void gcut_grid_free(gcut_grid *grid) {
    if (grid == NULL)
        return;
    for (int t = 0; t < 2; t++)
        gcut__free(grid->terminal[t]);
    for (int d = 0; d < grid->num_dirs; d++)
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
