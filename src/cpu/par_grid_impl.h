/* par_grid_impl.h - `parallel-bk` on a grid without a general graph in between (Liu & Sun,
 * CVPR 2010, section 3: blocks solved at once, merged bottom-up; docs/CPU-PARALLEL.md): the grid
 * cut into spatial tiles, every tile's nodes numbered contiguously, the residual graph built
 * tile by tile on all threads. Included by src/qpbo/pqpbo.c after pqpbo_impl.h (its core). */

/* Tiles: counts along z, y, x and, per axis coordinate, the tile it falls in and its offset
 * there. A tile's nodes are numbered row-major inside the tile; tiles follow each other in
 * (z, y, x) tile order. */
typedef struct QP_FN(tiling) {
    int64_t count[3];  /* tiles along z, y, x */
    int64_t *cut[3];   /* count[a] + 1 boundaries along axis a */
    int32_t *tile[3];  /* per coordinate: tile index along the axis */
    int64_t *local[3]; /* per coordinate: offset inside its tile along the axis */
    int64_t len[3];    /* grid extent: depth, height, width */
} QP_FN(tiling);

static void QP_FN(tiling_free)(QP_FN(tiling) * t) {
    for (int a = 0; a < 3; a++) {
        gcut__free(t->cut[a]);
        gcut__free(t->tile[a]);
        gcut__free(t->local[a]);
    }
}

/* Tile counts whose product is at least `want` (and at most a quarter more) that cut the least
 * area: the interfaces merged in Phase B are where the work after Phase A lies. */
static void QP_FN(pick_tiles)(const int64_t len[3], int64_t want, int64_t count[3]) {
    count[0] = count[1] = count[2] = 1;
    if (want <= 1)
        return;
    /* GCUT_PBK_TILES=rows: whole rows (2D) or slices (3D), the old blocks' shape, built the
     * tiled way (for comparisons). */
    const char *shape = getenv("GCUT_PBK_TILES");
    if (shape != NULL && strcmp(shape, "rows") == 0) {
        int a = len[0] > 1 ? 0 : 1;
        count[a] = want < len[a] ? want : len[a];
        return;
    }
    double best = -1;
    for (int64_t z = 1; z <= len[0] && z <= want; z++)
        for (int64_t y = 1; y <= len[1] && z * y <= want; y++) {
            int64_t x = (want + z * y - 1) / (z * y);
            if (x > len[2] || z * y * x > want + want / 4)
                continue;
            double area = (double)(z - 1) * (double)(len[1] * len[2]) +
                          (double)(y - 1) * (double)(len[0] * len[2]) +
                          (double)(x - 1) * (double)(len[0] * len[1]);
            if (best < 0 || area < best) {
                best = area;
                count[0] = z;
                count[1] = y;
                count[2] = x;
            }
        }
}

static bool QP_FN(tiling_make)(QP_FN(tiling) * t, const gcut_grid *grid, int64_t want) {
    memset(t, 0, sizeof *t);
    t->len[0] = grid->depth;
    t->len[1] = grid->height;
    t->len[2] = grid->width;
    QP_FN(pick_tiles)(t->len, want, t->count);
    for (int a = 0; a < 3; a++) {
        const int64_t n = t->len[a], k = t->count[a];
        t->cut[a] = gcut__malloc(gcut__mul_size((size_t)k + 1, sizeof(int64_t)), "tile bounds");
        t->tile[a] = gcut__malloc(gcut__mul_size((size_t)n, sizeof(int32_t)), "tile bounds");
        t->local[a] = gcut__malloc(gcut__mul_size((size_t)n, sizeof(int64_t)), "tile bounds");
        if (!t->cut[a] || !t->tile[a] || !t->local[a])
            return false;
        for (int64_t i = 0; i <= k; i++)
            t->cut[a][i] = i * n / k;
        for (int64_t i = 0; i < k; i++)
            for (int64_t c = t->cut[a][i]; c < t->cut[a][i + 1]; c++) {
                t->tile[a][c] = (int32_t)i;
                t->local[a][c] = c - t->cut[a][i];
            }
    }
    return true;
}

/* One build thread: tiles index, index + jobs, ... (a fixed share, so the layout and the
 * held-back records do not depend on the threads' timing). */
typedef struct QP_FN(tile_job) {
    QP_FN(core) * c;
    const gcut_grid *grid;
    const QP_FN(tiling) * t;
    int pass;
    int index, jobs;
    uint32_t *mask;        /* per internal node: directions whose pair can carry flow */
    QP_IDX *tile_arcs;     /* per tile: arcs (pass 1), then first arc (pass 2) */
    int64_t *tile_pending; /* per tile: records held back (pass 1), then first one */
    QP_FN(pending) * pending;
    const int *order, *rank;
    const uint32_t *below;
    int64_t base_flow;
} QP_FN(tile_job);

static inline QP_IDX QP_FN(tile_node)(const QP_FN(core) * c, const QP_FN(tiling) * t, int64_t z,
                                      int64_t y, int64_t x, int32_t *tile) {
    const int32_t tz = t->tile[0][z], ty = t->tile[1][y], tx = t->tile[2][x];
    const int32_t b = (int32_t)((tz * t->count[1] + ty) * t->count[2] + tx);
    const int64_t th = t->cut[1][ty + 1] - t->cut[1][ty], tw = t->cut[2][tx + 1] - t->cut[2][tx];
    *tile = b;
    return c->block_start[b] +
           (QP_IDX)((t->local[0][z] * th + t->local[1][y]) * tw + t->local[2][x]);
}

static inline int QP_FN(popcount)(uint32_t m) {
    m = m - ((m >> 1) & 0x55555555u);
    m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
    return (int)((((m + (m >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24);
}

/* Pass 1 over one row of a tile: the masks (direction by direction over the row, as bk's
 * grid build) and the pairs to higher tiles held back. @return the row's arcs. */
static QP_IDX QP_FN(tile_row_masks)(const QP_FN(tile_job) * j, int32_t b, const int64_t box[6],
                                    int64_t z, int64_t y, QP_IDX v, int64_t *held) {
    const QP_FN(core) *c = j->c;
    const gcut_grid *grid = j->grid;
    const int64_t W = grid->width, H = grid->height, D = grid->depth;
    const int64_t z0 = box[0], z1 = box[1], y0 = box[2], y1 = box[3], x0 = box[4], x1 = box[5];
    const int64_t row = (z * H + y) * W;
    uint32_t *mask = j->mask + v;
    memset(mask, 0, (size_t)(x1 - x0) * sizeof *mask);
    for (int d = 0; d < grid->num_dirs; d++) {
        const int *o = grid->offset[d];
        const int64_t nz = z + o[0], ny = y + o[1];
        if (nz < 0 || nz >= D || ny < 0 || ny >= H)
            continue;
        const int32_t *cap = grid->cap[d], *rev = grid->cap[d ^ 1];
        const int64_t step = grid->step[d];
        const int64_t xa = x0 > -o[2] ? x0 : -o[2], xb = x1 < W - o[2] ? x1 : W - o[2];
        const uint32_t bit = 1u << j->rank[d];
        for (int64_t x = xa; x < xb; x++)
            if ((cap[row + x] | rev[row + x + step]) != 0)
                mask[x - x0] |= bit;
        /* Pairs leaving the tile: the whole row (another tile row or slice), else one end. */
        bool row_leaves = nz < z0 || nz >= z1 || ny < y0 || ny >= y1;
        int64_t ca = xa, cb = xb;
        if (!row_leaves) {
            if (o[2] == 0)
                continue;
            ca = o[2] > 0 ? x1 - o[2] : x0;
            cb = o[2] > 0 ? x1 : x0 - o[2];
            ca = ca < xa ? xa : ca;
            cb = cb > xb ? xb : cb;
        }
        for (int64_t x = ca; x < cb; x++) {
            if (!(mask[x - x0] & bit))
                continue;
            int32_t other;
            (void)QP_FN(tile_node)(c, j->t, nz, ny, x + o[2], &other);
            *held += other > b;
        }
    }
    QP_IDX arcs = 0;
    for (int64_t x = x0; x < x1; x++)
        arcs += (QP_IDX)QP_FN(popcount)(mask[x - x0]);
    return arcs;
}

static void *QP_FN(tile_pass)(void *arg) {
    QP_FN(tile_job) *j = arg;
    QP_FN(core) *c = j->c;
    const gcut_grid *grid = j->grid;
    const QP_FN(tiling) *t = j->t;
    const int dirs = grid->num_dirs;
    const int32_t *source = grid->terminal[GCUT_SOURCE], *sink = grid->terminal[GCUT_SINK];
    const int64_t W = grid->width, H = grid->height;
    const int32_t *cap[GCUT__MAX_DIRS], *rev[GCUT__MAX_DIRS];
    int64_t step[GCUT__MAX_DIRS];
    int off[GCUT__MAX_DIRS][3];
    for (int d = 0; d < dirs; d++) {
        cap[d] = grid->cap[d];
        rev[d] = grid->cap[d ^ 1];
        step[d] = grid->step[d];
        for (int a = 0; a < 3; a++)
            off[d][a] = grid->offset[d][a];
    }
    QP_FN(bk_arc) *arcs_out = c->arcs;
    QP_IDX *sister = c->sister;
    const QP_IDX *first = c->first;
    const uint32_t *mask = j->mask;
    for (int32_t b = j->index; b < c->B; b += j->jobs) {
        const int64_t kz = b / (t->count[1] * t->count[2]);
        const int64_t ky = (b / t->count[2]) % t->count[1], kx = b % t->count[2];
        const int64_t box[6] = {t->cut[0][kz],     t->cut[0][kz + 1], t->cut[1][ky],
                                t->cut[1][ky + 1], t->cut[2][kx],     t->cut[2][kx + 1]};
        const int64_t z0 = box[0], z1 = box[1], y0 = box[2], y1 = box[3], x0 = box[4], x1 = box[5];
        const bool flat = grid->depth == 1;
        int64_t inside[GCUT__MAX_DIRS]; /* index step to a neighbour in the same tile */
        for (int d = 0; d < dirs; d++)
            inside[d] = ((int64_t)off[d][0] * (y1 - y0) + off[d][1]) * (x1 - x0) + off[d][2];
        QP_IDX v = c->block_start[b];
        QP_IDX arcs = j->pass == 2 ? j->tile_arcs[b] : 0;
        int64_t held = j->pass == 3 ? j->tile_pending[b] : 0;
        for (int64_t z = z0; z < z1; z++)
            for (int64_t y = y0; y < y1; y++) {
                const int64_t row = (z * H + y) * W;
                if (j->pass == 1) {
                    arcs += QP_FN(tile_row_masks)(j, b, box, z, y, v, &held);
                    v += (QP_IDX)(x1 - x0);
                    continue;
                }
                if (j->pass == 2) {
                    for (int64_t x = x0; x < x1; x++, v++) {
                        const int64_t i = row + x;
                        c->first[v] = arcs;
                        arcs += (QP_IDX)QP_FN(popcount)(mask[v]);
                        int64_t s = source[i], k = sink[i];
                        j->base_flow += s < k ? s : k;
                        c->tr[v] = s - k;
                        c->nodes[v] = (QP_FN(bk_node)){(QP_IDX)-1, (QP_IDX)-1, 0, 0};
                        c->orig[v] = (QP_IDX)i;
                    }
                    continue;
                }
                const bool row_inside = y > y0 && y < y1 - 1 && (flat || (z > z0 && z < z1 - 1));
                for (int64_t x = x0; x < x1; x++, v++) {
                    const int64_t i = row + x;
                    QP_IDX a = first[v];
                    if (row_inside && x > x0 && x < x1 - 1) {
                        /* Every neighbour in this tile: no held-back pair. */
                        for (uint32_t m = mask[v]; m != 0; m &= m - 1, a++) {
                            const int d = j->order[__builtin_ctz(m)];
                            const QP_IDX w = (QP_IDX)((int64_t)v + inside[d]);
                            arcs_out[a].head = w;
                            arcs_out[a].residual = (uint32_t)cap[d][i];
                            sister[a] = first[w] + (QP_IDX)QP_FN(popcount)(mask[w] & j->below[d]);
                        }
                        continue;
                    }
                    for (uint32_t m = mask[v]; m != 0; m &= m - 1, a++) {
                        const int d = j->order[__builtin_ctz(m)];
                        const int *o = off[d];
                        int32_t other = b;
                        QP_IDX w;
                        if (z + o[0] < z0 || z + o[0] >= z1 || y + o[1] < y0 || y + o[1] >= y1 ||
                            x + o[2] < x0 || x + o[2] >= x1)
                            w = QP_FN(tile_node)(c, t, z + o[0], y + o[1], x + o[2], &other);
                        else
                            w = (QP_IDX)((int64_t)v + inside[d]);
                        const uint32_t cd = (uint32_t)cap[d][i];
                        arcs_out[a].head = w;
                        arcs_out[a].residual = other == b ? cd : 0;
                        sister[a] = first[w] + (QP_IDX)QP_FN(popcount)(mask[w] & j->below[d]);
                        if (other > b) {
                            QP_FN(pending) *p = &j->pending[held++];
                            p->a = b;
                            p->b = other;
                            p->rec.arc = a;
                            p->rec.cap = cd;
                            p->rec.rev = (uint32_t)rev[d][i + step[d]];
                        }
                    }
                }
            }
        if (j->pass == 1) {
            j->tile_arcs[b] = arcs;
            j->tile_pending[b] = held;
        }
    }
    return NULL;
}

static void QP_FN(tile_run)(QP_FN(tile_job) * job, int jobs, int pass) {
    for (int t = 0; t < jobs; t++)
        job[t].pass = pass;
    gcut__run_jobs(QP_FN(tile_pass), job, sizeof *job, jobs);
}

/* The residual graph of the grid in tiles: nodes and arcs of each tile written by one thread,
 * arc pairs between tiles held back (residual 0 both ways) as the interfaces' records.
 * GCUT_PBK_PROFILE=1 prints each step's time (`pbk phase setup ...`); where the time goes at
 * 1080p on 16 threads: docs/CPU-PARALLEL.md, "Ninth pass". */
static gcut_status QP_FN(from_grid)(QP_FN(core) * c, const gcut_grid *grid, int64_t want,
                                    int threads, int64_t *base_flow) {
    const bool profile = QP_FN(profiling)();
    double since = gcut__now_ms();
    QP_FN(tiling) t;
    if (!QP_FN(tiling_make)(&t, grid, want)) {
        QP_FN(tiling_free)(&t);
        return GCUT_ERR_NOMEM;
    }
    const int64_t n = grid->num_nodes;
    const int32_t B = (int32_t)(t.count[0] * t.count[1] * t.count[2]);
    c->n = (QP_IDX)n;
    c->mirror = false;
    c->B = B;
    gcut_status st = GCUT_OK;
    uint32_t *mask = NULL;
    QP_IDX *tile_arcs = NULL;
    int64_t *tile_pending = NULL;
    QP_FN(pending) *pending = NULL;
    c->block_start = gcut__calloc((size_t)B + 1, sizeof(QP_IDX), "tile starts");
    c->inner_begin = gcut__calloc((size_t)B + 1, sizeof(int64_t), "tile records");
    c->inner = gcut__malloc(sizeof(QP_FN(rec)), "tile records");
    c->first = gcut__malloc(gcut__mul_size((size_t)n + 1, sizeof(QP_IDX)), "grid arc offsets");
    c->tr = gcut__malloc(gcut__mul_size((size_t)n + 1, sizeof(int64_t)), "terminal residuals");
    c->nodes = gcut__malloc(gcut__mul_size((size_t)n + 1, sizeof(QP_FN(bk_node))), "grid nodes");
    c->orig = gcut__malloc(gcut__mul_size((size_t)n + 1, sizeof(QP_IDX)), "tile numbering");
    mask = gcut__malloc(gcut__mul_size((size_t)n + 1, sizeof(uint32_t)), "grid arc masks");
    tile_arcs = gcut__malloc(gcut__mul_size((size_t)B + 1, sizeof(QP_IDX)), "tile arcs");
    tile_pending = gcut__malloc(gcut__mul_size((size_t)B + 1, sizeof(int64_t)), "tile records");
    if (!c->block_start || !c->inner_begin || !c->inner || !c->first || !c->tr || !c->nodes ||
        !c->orig || !mask || !tile_arcs || !tile_pending) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    for (int32_t b = 0; b < B; b++) {
        const int64_t kz = b / (t.count[1] * t.count[2]);
        const int64_t ky = (b / t.count[2]) % t.count[1], kx = b % t.count[2];
        const int64_t size = (t.cut[0][kz + 1] - t.cut[0][kz]) * (t.cut[1][ky + 1] - t.cut[1][ky]) *
                             (t.cut[2][kx + 1] - t.cut[2][kx]);
        c->block_start[b + 1] = c->block_start[b] + (QP_IDX)size;
    }
    /* bk's direction order inside a node's arcs (see bk_impl.h's build_grid). */
    const int dirs = grid->num_dirs;
    int order[GCUT__MAX_DIRS], rank[GCUT__MAX_DIRS], k = 0;
    for (int d = dirs - 2; d >= 0; d -= 2) {
        int lo = grid->step[d] > 0 ? d : d ^ 1;
        order[k++] = lo;
        order[k++] = lo ^ 1;
    }
    for (k = 0; k < dirs; k++)
        rank[order[k]] = k;
    uint32_t below[GCUT__MAX_DIRS];
    for (int d = 0; d < dirs; d++)
        below[d] = (1u << rank[d ^ 1]) - 1;

    QP_FN(tile_job) job[QP_BUILD_THREADS];
    int jobs = threads < 1 ? 1 : threads > QP_BUILD_THREADS ? QP_BUILD_THREADS : threads;
    if (jobs > B)
        jobs = B;
    for (int i = 0; i < jobs; i++) {
        memset(&job[i], 0, sizeof job[i]);
        job[i].c = c;
        job[i].grid = grid;
        job[i].t = &t;
        job[i].index = i;
        job[i].jobs = jobs;
        job[i].mask = mask;
        job[i].tile_arcs = tile_arcs;
        job[i].tile_pending = tile_pending;
        job[i].order = order;
        job[i].rank = rank;
        job[i].below = below;
    }
    QP_FN(phase)(profile, "setup tiling and node arrays", &since);
    QP_FN(tile_run)(job, jobs, 1);
    QP_FN(phase)(profile, "setup pass 1 (masks)", &since);
    QP_IDX arcs = 0;
    int64_t np = 0;
    for (int32_t b = 0; b < B; b++) {
        QP_IDX a = tile_arcs[b];
        int64_t p = tile_pending[b];
        tile_arcs[b] = arcs;
        tile_pending[b] = np;
        arcs += a;
        np += p;
    }
    c->M = arcs;
    c->first[n] = arcs;
    c->arcs = gcut__malloc(gcut__mul_size((size_t)arcs + 1, sizeof(QP_FN(bk_arc))), "grid arcs");
    c->sister = gcut__malloc(gcut__mul_size((size_t)arcs + 1, sizeof(QP_IDX)), "grid arcs");
    pending = gcut__malloc(gcut__mul_size((size_t)np + 1, sizeof(QP_FN(pending))), "tile records");
    if (!c->arcs || !c->sister || !pending) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < jobs; i++)
        job[i].pending = pending;
    QP_FN(phase)(profile, "setup arc arrays", &since);
    QP_FN(tile_run)(job, jobs, 2);
    QP_FN(phase)(profile, "setup pass 2 (nodes)", &since);
    QP_FN(tile_run)(job, jobs, 3);
    QP_FN(phase)(profile, "setup pass 3 (arcs)", &since);
    int64_t flow = 0;
    for (int i = 0; i < jobs; i++)
        flow += job[i].base_flow; /* each node adds at most INT32_MAX: no overflow below 2^32 */
    *base_flow = flow;
    gcut__free(mask);
    mask = NULL;
    st = QP_FN(finish)(c, pending, np, jobs);
    pending = NULL;
    QP_FN(phase)(profile, "setup interfaces", &since);
done:
    gcut__free(mask);
    gcut__free(tile_arcs);
    gcut__free(tile_pending);
    gcut__free(pending);
    QP_FN(tiling_free)(&t);
    return st;
}

/* parallel-bk on a grid's tiles: `want` tiles or a few more, built and solved on `threads`. */
static gcut_status QP_FN(solve_grid_tiles)(const gcut_grid *grid, int64_t want, int threads,
                                           int64_t *base_flow, gcut__qp_output *out) {
    QP_FN(core) core;
    memset(&core, 0, sizeof core);
    uint64_t before = gcut_memory_in_use();
    double t0 = gcut__now_ms();
    gcut_status st = QP_FN(from_grid)(&core, grid, want, threads, base_flow);
    if (st != GCUT_OK) {
        QP_FN(core_free)(&core);
        return st;
    }
    out->bytes = gcut_memory_in_use() - before;
    out->build_ms = gcut__now_ms() - t0;
    return QP_FN(run_core)(&core, threads, out);
}
