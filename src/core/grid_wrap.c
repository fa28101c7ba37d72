/* grid_wrap.c - a gcut_grid over arrays the caller owns (the struct-of-arrays layout of grid.c,
 * Lattari 2010, 5.2, without the copy): for bindings that hold the capacities already, such
 * as the Python package's numpy arrays. Solvers only read a grid's arrays, so none is copied. */
#include "internal.h"

#include <inttypes.h>
#include <string.h>

gcut_status gcut_grid_wrap(int ndim, const int64_t *shape, int connectivity, const int32_t *source,
                           const int32_t *sink, const int32_t *const *dirs, gcut_grid **out) {
    if (out == NULL || shape == NULL || source == NULL || sink == NULL || dirs == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_wrap: NULL argument");
    *out = NULL;
    if (ndim != 2 && ndim != 3)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_wrap: ndim %d is not 2 or 3", ndim);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "gcut_grid_wrap: shape[%d] = %" PRId64 " must be >= 1", i, shape[i]);
        if (n > INT64_MAX / 64 / shape[i])
            return gcut__fail(GCUT_ERR_OVERFLOW, "gcut_grid_wrap: grid too large");
        n *= shape[i];
    }
    /* A one-node grid of the same ndim and connectivity gives the direction table (and
     * checks the connectivity); it then takes the real shape and the caller's arrays. */
    const int64_t one[3] = {1, 1, 1};
    gcut_grid *grid = NULL;
    gcut_status st = gcut_grid_create(ndim, one, connectivity, &grid);
    if (st != GCUT_OK)
        return st;
    for (int d = 0; d < grid->num_dirs; d++)
        if (dirs[d] == NULL) {
            gcut_grid_free(grid);
            return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_wrap: dirs[%d] is NULL", d);
        }
    for (int t = 0; t < 2; t++)
        gcut__free(grid->terminal[t]);
    for (int d = 0; d < grid->num_dirs; d++)
        gcut__free(grid->cap[d]);
    grid->borrowed = true;
    for (int i = 0; i < ndim; i++)
        grid->shape[i] = shape[i];
    grid->depth = ndim == 3 ? shape[0] : 1;
    grid->height = shape[ndim - 2];
    grid->width = shape[ndim - 1];
    grid->num_nodes = n;
    for (int d = 0; d < grid->num_dirs; d++)
        grid->step[d] =
            ((int64_t)grid->offset[d][0] * grid->height + grid->offset[d][1]) * grid->width +
            grid->offset[d][2];
    /* The caller's arrays are only read (solvers work on their own residual copies); the
     * writable accessors of a wrapped grid write the caller's memory, as documented. */
    grid->terminal[GCUT_SOURCE] = (int32_t *)(uintptr_t)source;
    grid->terminal[GCUT_SINK] = (int32_t *)(uintptr_t)sink;
    for (int d = 0; d < grid->num_dirs; d++)
        grid->cap[d] = (int32_t *)(uintptr_t)dirs[d];
    *out = grid;
    return GCUT_OK;
}
