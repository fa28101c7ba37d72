/* par_prepass.c - parallel-bk's pre-pass on 2D grids: flow found inside tiles that straddle the
 * block interfaces of Liu & Sun's merge tree (CVPR 2010, section 3), so that less is left to the
 * merges. Every tile is solved alone, by cpu-pr (a maximum preflow; each node's excess becomes its
 * source capacity) or grid-bk: a flow inside one tile is one of the grid, so the residual grid
 * has the same minimum cuts. docs/CPU-PARALLEL.md, "Seventh pass". A round's tail (one tile far
 * harder than the rest, solved while the other threads wait): once GCUT_PBK_PREPASS_STOP threads
 * (default 1) have found no tile left, the tiles still running stop at their next sweep and keep
 * the preflow found so far (any preflow is a flow of the grid with the excesses as source
 * capacities: the same cuts); parallel-bk's blocks finish them. docs/CPU-PARALLEL.md, "Eighth
 * pass". */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct prepass_job {
    const gcut_grid *grid;
    gcut_grid *out;
    const int64_t *ycut, *xcut; /* tile boundaries: ky + 1 (kx + 1) tiles along y (x) */
    int64_t ty, tx;             /* tiles along y, x */
    bool pr;                    /* cpu-pr on each tile, else grid-bk */
    int *next;                  /* the next tile to take (shared) */
    int *idle;                  /* threads that found no tile left (shared) */
    int *stop;                  /* set: running tiles stop at their next sweep (shared) */
    int stop_idle;              /* idle threads that set *stop (0: never) */
    int stopped;                /* tiles of this thread that ended early (for the profile) */
    bool legacy;                /* GCUT_PBK_PREPASS_COPY_LEGACY=1: the tile copies as before */
    int64_t flow, augmentations;
    gcut_status st;
    double busy_ms, max_tile_ms; /* for GCUT_PBK_PROFILE */
} prepass_job;

/* The largest capacity in c[0..count) (capacities are >= 0): one pass the compiler vectorises. */
static int32_t row_max(const int32_t *c, int64_t count) {
    int32_t m = 0;
    for (int64_t x = 0; x < count; x++)
        m = c[x] > m ? c[x] : m;
    return m;
}

/* One tile: copy it out, solve it in place, write every capacity of its nodes into out (the
 * residuals inside, the grid's own on arcs that leave the tile). Row copies and max-reductions
 * (GCUT_PBK_PREPASS_COPY_LEGACY=1: the element-by-element loops as before, for timings; the
 * tile plumbing was ~15% of the pre-pass's time on the build machine, docs/CPU-PARALLEL.md,
 * "Tenth pass"). */
static gcut_status prepass_tile(prepass_job *j, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
    const gcut_grid *g = j->grid;
    gcut_grid *o = j->out;
    const int64_t W = g->width, h = y1 - y0, w = x1 - x0, shape[2] = {h, w};
    const int D = g->num_dirs;
    if (h < 1 || w < 1) /* shifted tiles of a grid narrower than 2 K: some are empty */
        return GCUT_OK;
    gcut_grid *t = NULL;
    /* Every entry of the tile is written below: its arrays need no clearing. */
    gcut_status st =
        (j->legacy ? gcut_grid_create : gcut__grid_create_unset)(2, shape, g->connectivity, &t);
    if (st != GCUT_OK)
        return st;
    bool fits = true; /* residuals stay within int32 when every capacity is at most half */
    for (int64_t y = 0; y < h; y++) {
        const int64_t row = (y0 + y) * W + x0, trow = y * w;
        for (int a = 0; a < 2; a++)
            memcpy(t->terminal[a] + trow, g->terminal[a] + row, (size_t)w * sizeof(int32_t));
        for (int d = 0; d < D; d++) {
            memcpy(t->cap[d] + trow, g->cap[d] + row, (size_t)w * sizeof(int32_t));
            if (!j->legacy)
                fits = fits && row_max(g->cap[d] + row, w) <= INT32_MAX / 2;
            else
                for (int64_t x = 0; x < w; x++)
                    fits = fits && g->cap[d][row + x] <= INT32_MAX / 2;
        }
    }
    int64_t flow = 0, aug = 0;
    /* cpu-pr leaves the tile untouched when a residual would not fit: grid-bk then. */
    const bool early = __atomic_load_n(j->stop, __ATOMIC_RELAXED) != 0;
    if (fits && (!j->pr || gcut__cpupr_solve_in_place(t, j->stop, &flow) != GCUT_OK) &&
        (st = gcut__gridbk_solve_in_place(t, &flow, &aug)) != GCUT_OK) {
        gcut_grid_free(t);
        return st;
    }
    j->flow += flow;
    j->augmentations += aug;
    j->stopped += j->pr && !early && __atomic_load_n(j->stop, __ATOMIC_RELAXED) != 0;
    for (int64_t y = 0; y < h; y++) {
        const int64_t row = (y0 + y) * W + x0, trow = y * w;
        for (int a = 0; a < 2; a++)
            memcpy(o->terminal[a] + row, t->terminal[a] + trow, (size_t)w * sizeof(int32_t));
        for (int d = 0; d < D; d++) {
            const int dy = g->offset[d][1], dx = g->offset[d][2];
            const bool row_in = y + dy >= 0 && y + dy < h;
            if (!j->legacy) {
                /* Inside the tile: the residuals; the arcs that leave it (a whole row, or the
                 * one column at an end that dx points out of) keep the grid's capacities. */
                if (!row_in) {
                    if (o != g)
                        memcpy(o->cap[d] + row, g->cap[d] + row, (size_t)w * sizeof(int32_t));
                    continue;
                }
                const int64_t lo = dx < 0 ? 1 : 0, hi = dx > 0 ? w - 1 : w; /* |dx| <= 1 */
                if (hi > lo)
                    memcpy(o->cap[d] + row + lo, t->cap[d] + trow + lo,
                           (size_t)(hi - lo) * sizeof(int32_t));
                if (o != g && lo > 0)
                    o->cap[d][row] = g->cap[d][row];
                if (o != g && hi < w)
                    o->cap[d][row + w - 1] = g->cap[d][row + w - 1];
                continue;
            }
            for (int64_t x = 0; x < w; x++) {
                const bool in = row_in && x + dx >= 0 && x + dx < w;
                o->cap[d][row + x] = in ? t->cap[d][trow + x] : g->cap[d][row + x];
            }
        }
    }
    gcut_grid_free(t);
    return GCUT_OK;
}

static void *prepass_run(void *arg) {
    prepass_job *j = arg;
    const int total = (int)(j->ty * j->tx);
    for (;;) {
        const int k = __atomic_fetch_add(j->next, 1, __ATOMIC_RELAXED);
        if (k >= total) {
            if (j->stop_idle > 0 &&
                __atomic_add_fetch(j->idle, 1, __ATOMIC_RELAXED) >= j->stop_idle)
                __atomic_store_n(j->stop, 1, __ATOMIC_RELAXED);
            break;
        }
        const int64_t a = k / j->tx, b = k % j->tx;
        const double t0 = gcut__now_ms();
        const gcut_status st =
            prepass_tile(j, j->ycut[a], j->ycut[a + 1], j->xcut[b], j->xcut[b + 1]);
        const double ms = gcut__now_ms() - t0;
        j->busy_ms += ms;
        if (ms > j->max_tile_ms)
            j->max_tile_ms = ms;
        if (st != GCUT_OK && j->st == GCUT_OK)
            j->st = st;
    }
    return NULL;
}

gcut_status gcut__pbk_prepass(const gcut_grid *grid, gcut_grid *into, int64_t ky, int64_t kx,
                              bool shifted, bool pr, int threads, gcut_grid **out, int64_t *flow,
                              int64_t *augmentations) {
    *out = NULL;
    *flow = *augmentations = 0;
    if (grid->ndim != 2 || ky < 1 || kx < 1)
        return GCUT_OK;
    const int64_t H = grid->height, W = grid->width;
    ky = ky < H ? ky : H, kx = kx < W ? kx : W;
    const int64_t ty = shifted ? ky + 1 : ky, tx = shifted ? kx + 1 : kx;
    int64_t *ycut = gcut__malloc((size_t)(ky + 2) * sizeof *ycut, "pre-pass tiles");
    int64_t *xcut = gcut__malloc((size_t)(kx + 2) * sizeof *xcut, "pre-pass tiles");
    prepass_job *jobs =
        gcut__calloc((size_t)(threads > 0 ? threads : 1), sizeof *jobs, "pre-pass threads");
    gcut_grid *res = NULL;
    gcut_status st = GCUT_ERR_NOMEM;
    if (ycut == NULL || xcut == NULL || jobs == NULL)
        goto done;
    /* A ky x kx tiling's boundaries (parallel-bk's rule, src/cpu/par_grid_impl.h), or ones half
     * a tile off them: then the first and last tiles are half ones. */
    ycut[0] = 0, ycut[ty] = H;
    xcut[0] = 0, xcut[tx] = W;
    for (int64_t i = 1; i < ty; i++)
        ycut[i] = shifted ? (2 * i - 1) * H / (2 * ky) : i * H / ky;
    for (int64_t i = 1; i < tx; i++)
        xcut[i] = shifted ? (2 * i - 1) * W / (2 * kx) : i * W / kx;
    /* A tile reads and writes only its own nodes' entries: into may be grid itself. The tiles
     * cover the grid and write every entry of their nodes, so a new grid need not be zeroed
     * first (GCUT_SEG_GRID_ZERO=1 zeroes it, for before/after timings). */
    if (into == NULL &&
        (st = (gcut__env_int("GCUT_SEG_GRID_ZERO", 0, 0, 1)
                   ? gcut_grid_create
                   : gcut__grid_create_unset)(2, grid->shape, grid->connectivity, &res)) != GCUT_OK)
        goto done;
    st = GCUT_OK;
    gcut_grid *target = into != NULL ? into : res;
    int next = 0, idle = 0, stop = 0;
    const int n = threads > 0 ? threads : 1;
    /* The early stop's threshold: GCUT_PBK_PREPASS_STOP idle threads (0: never; default 1,
     * the first thread to find the queue empty stops the running tiles: on the 16-core host
     * the photo's cut 219 -> 184 ms, against 185 for 8 and 212 for 15; docs/CPU-PARALLEL.md,
     * "Eighth pass"); one thread never stops its own tiles. */
    const int stop_idle = n > 1 ? gcut__env_int("GCUT_PBK_PREPASS_STOP", 1, 0, 1 << 20) : 0;
    const bool legacy = gcut__env_int("GCUT_PBK_PREPASS_COPY_LEGACY", 0, 0, 1) != 0;
    for (int t = 0; t < n; t++)
        jobs[t] = (prepass_job){.grid = grid,
                                .out = target,
                                .ycut = ycut,
                                .xcut = xcut,
                                .ty = ty,
                                .tx = tx,
                                .pr = pr,
                                .next = &next,
                                .idle = &idle,
                                .stop = &stop,
                                .stop_idle = stop_idle < n ? stop_idle : n - 1,
                                .legacy = legacy,
                                .st = GCUT_OK};
    gcut__run_jobs(prepass_run, jobs, sizeof *jobs, n);
    double busy = 0, slowest = 0;
    int stopped = 0;
    for (int t = 0; t < n; t++) {
        stopped += jobs[t].stopped;
        busy += jobs[t].busy_ms;
        slowest = jobs[t].max_tile_ms > slowest ? jobs[t].max_tile_ms : slowest;
        if (jobs[t].st != GCUT_OK && st == GCUT_OK)
            st = jobs[t].st;
        *flow += jobs[t].flow;
        *augmentations += jobs[t].augmentations;
    }
    if (getenv("GCUT_PBK_PROFILE") != NULL)
        fprintf(stderr,
                "pbk prepass: %" PRId64 " x %" PRId64 " tiles, busy %.1f ms in all, slowest "
                "tile %.1f ms, flow %" PRId64 ", %d tiles running at the early stop\n",
                ty, tx, busy, slowest, *flow, stopped);
    if (st == GCUT_OK) {
        *out = target;
        res = NULL;
    }
done:
    gcut_grid_free(res);
    gcut__free(ycut);
    gcut__free(xcut);
    gcut__free(jobs);
    return st;
}
