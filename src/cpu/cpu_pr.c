/* cpu_pr.c - the cpu-pr solver: exact push-relabel on grid graphs, OpenMP threads over
 * coloured tiles, global relabel by parallel level-synchronous BFS from the sink, exact stop;
 * and its context with warm re-solves (Kohli & Torr 2005, sec. 4), the CPU twin of cuda-grid's.
 * Hussein et al. 2007 ("our CPU implementation", V-VI), Lattari 2010 5.3; see docs/GRID-PR.md. */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#ifdef GCUT_HAVE_OPENMP
#include <omp.h>
#else
/* Without OpenMP the pragmas below are skipped and the solver runs on one thread. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#endif

/* Tile edge lengths as log2 (z, y, x): 64 x 16 in 2D, 16 x 8 x 8 in 3D, x fastest. 32 x 32,
 * 128 x 8 and 32 x 16 did as well within the noise of the 2-core machine (docs/GRID-PR.md);
 * at most 1024 nodes keep a tile's state in L1/L2 while it is visited. */
static const int tile_log_2d[3] = {0, 4, 6};
static const int tile_log_3d[3] = {3, 3, 4};

/* Push/relabel rounds over a tile per visit before moving on (cache emulation);
 * GCUT_CPUPR_ROUNDS overrides it for benchmarks. 8 with TAIL_SWEEPS 32 measured best on the
 * 16-core device over rounds 4/8/16 x tail 0/8/32/128 (docs/GRID-PR.md): hard 4096x4096
 * 878 -> 678 ms, hard 1920x1080 107 -> 81 ms; 4 was best on the 2-core build machine. */
#define LOCAL_ROUNDS 8
/* A global relabel is due once the push/relabel work since the last one (node and arc visits)
 * passes this multiple of that relabel's own cost (n + arcs scanned): amortised relabels.
 * GCUT_CPUPR_RELABEL_PCT overrides it (in percent). */
#define RELABEL_WORK_FACTOR 0.5
/* ...or once this many sweeps ran since the last one (0 = no such bound; GCUT_CPUPR_TAIL).
 * A few active tiles can pass excess back and forth for hundreds of cheap sweeps, one height
 * step at a time, before their work adds up to a relabel's cost (864 sweeps after the last
 * but one relabel on hard 4096x4096, 1159 on hard 256^3). */
#define TAIL_SWEEPS 32
/* BFS discoveries a thread collects before reserving room in the shared queue. */
#define QUEUE_CHUNK 1024
/* Passes over all nodes (load, global relabel, results) use one thread below this size. */
#define PARALLEL_MIN_NODES (1 << 15)
/* BFS levels at least this wide are shared by all threads; narrower ones run on one. */
#define BFS_WIDE_LEVEL 4096

typedef struct pr_counts {
    int64_t pushes;
    int64_t relabels;
    int64_t work; /* node visits: tile scans, arc scans of discharges */
} pr_counts;

typedef struct pr_state {
    int64_t n, size_x, size_y, size_z; /* grid width, height, depth */
    int num_dirs;
    int64_t step[GCUT__MAX_DIRS];
    int offset[GCUT__MAX_DIRS][3];
    /* Residuals are uint32: r[d][v] + r[d^1][w] stays cap[d][v] + cap[d^1][w] <= 2^32 - 2,
     * which int32 cannot hold once flow crosses an arc with both capacities near INT32_MAX. */
    uint32_t *residual[GCUT__MAX_DIRS];
    int32_t *sink_residual;
    int64_t *excess;
    int32_t *height;
    int32_t inf; /* n + 1: every finite height (a distance to the sink) is at most n */
    uint32_t *queue;
    uint32_t *inflow;   /* bit d: the neighbour in direction d has a residual arc into this node */
    uint64_t *labelled; /* BFS: one bit per node, so that the visited test stays in cache */
    int64_t queue_tail;
    int tile_log[3];
    int64_t tiles_z, tiles_y, tiles_x, num_tiles;
    int num_colors;
    int64_t *tiles_by_color; /* tile ids grouped by colour */
    int64_t color_start[9];
    int64_t *tile_list;
    uint8_t *tile_active;
    int local_rounds; /* LOCAL_ROUNDS unless overridden */
    int threads;      /* for the tile phases */
    int node_threads; /* for passes over all nodes: 1 on grids too small to pay for a team */
    /* An early stop (parallel-bk's pre-pass only): *stop set by another thread, or max_sweeps
     * sweeps done (a test hook). Checked between sweeps, where the state is a preflow. */
    const int *stop;
    int64_t max_sweeps;
    bool relabel_legacy; /* GCUT_CPUPR_RELABEL_LEGACY=1: the relabel's arc masks node by node */
} pr_state;

typedef struct tile_box {
    int64_t x0, x1, y0, y1, z0, z1;
} tile_box;

static tile_box box_of(const pr_state *s, int64_t tile) {
    int64_t tx = tile % s->tiles_x, ty = (tile / s->tiles_x) % s->tiles_y;
    int64_t tz = tile / (s->tiles_x * s->tiles_y);
    tile_box b;
    b.x0 = tx << s->tile_log[2];
    b.y0 = ty << s->tile_log[1];
    b.z0 = tz << s->tile_log[0];
    b.x1 = b.x0 + ((int64_t)1 << s->tile_log[2]);
    b.y1 = b.y0 + ((int64_t)1 << s->tile_log[1]);
    b.z1 = b.z0 + ((int64_t)1 << s->tile_log[0]);
    if (b.x1 > s->size_x)
        b.x1 = s->size_x;
    if (b.y1 > s->size_y)
        b.y1 = s->size_y;
    if (b.z1 > s->size_z)
        b.z1 = s->size_z;
    return b;
}

static int64_t tile_of_coords(const pr_state *s, int64_t x, int64_t y, int64_t z) {
    return ((z >> s->tile_log[0]) * s->tiles_y + (y >> s->tile_log[1])) * s->tiles_x +
           (x >> s->tile_log[2]);
}

static void mark_tile(pr_state *s, int64_t tile) {
    __atomic_store_n(&s->tile_active[tile], 1, __ATOMIC_RELAXED);
}

static void state_free(pr_state *s) {
    for (int d = 0; d < s->num_dirs; d++)
        gcut__free(s->residual[d]);
    gcut__free(s->sink_residual);
    gcut__free(s->excess);
    gcut__free(s->height);
    gcut__free(s->queue);
    gcut__free(s->inflow);
    gcut__free(s->labelled);
    gcut__free(s->tiles_by_color);
    gcut__free(s->tile_list);
    gcut__free(s->tile_active);
}

/* No arc joins two tiles of one colour, so while one colour runs, a node's own state is
 * touched only by its tile's thread (Hussein V-B's problem of concurrent receives, solved by
 * colouring instead of push/pull reservoirs). With 4/6 neighbours same-coloured tiles may
 * share a corner or an edge but never a face (parity of tx+ty+tz); diagonal arcs need the
 * parity of each axis (4 colours in 2D, 8 in 3D). */
static int color_of(const pr_state *s, int connectivity, int64_t tile) {
    int64_t tx = tile % s->tiles_x, ty = (tile / s->tiles_x) % s->tiles_y;
    int64_t tz = tile / (s->tiles_x * s->tiles_y);
    if (connectivity == 4 || connectivity == 6)
        return (int)((tx + ty + tz) & 1);
    return (int)((tx & 1) | ((ty & 1) << 1) | ((tz & 1) << 2));
}

static gcut_status state_init(pr_state *s, const gcut_grid *grid, int threads) {
    memset(s, 0, sizeof *s);
    s->n = grid->num_nodes;
    s->size_x = grid->width;
    s->size_y = grid->height;
    s->size_z = grid->depth;
    s->num_dirs = grid->num_dirs;
    s->threads = threads;
    s->relabel_legacy = gcut__env_int("GCUT_CPUPR_RELABEL_LEGACY", 0, 0, 1) != 0;
    for (int d = 0; d < s->num_dirs; d++) {
        s->step[d] = grid->step[d];
        memcpy(s->offset[d], grid->offset[d], sizeof s->offset[d]);
    }
    if (s->n > (int64_t)INT32_MAX - 1)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "cpu-pr: grid of %" PRId64 " nodes; heights and queue entries are "
                          "32-bit, so at most %d nodes",
                          s->n, INT32_MAX - 1);
    s->inf = (int32_t)(s->n + 1);
    const size_t n = (size_t)s->n;
    for (int d = 0; d < s->num_dirs; d++)
        if ((s->residual[d] =
                 gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)), "cpu-pr residuals")) == NULL)
            return GCUT_ERR_NOMEM;
    if ((s->sink_residual =
             gcut__malloc(gcut__mul_size(n, sizeof(int32_t)), "cpu-pr sink residuals")) == NULL ||
        (s->excess = gcut__malloc(gcut__mul_size(n, sizeof(int64_t)), "cpu-pr excess")) == NULL ||
        (s->height = gcut__malloc(gcut__mul_size(n, sizeof(int32_t)), "cpu-pr heights")) == NULL ||
        (s->queue = gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)), "cpu-pr BFS queue")) ==
            NULL ||
        (s->inflow = gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)), "cpu-pr BFS arc masks")) ==
            NULL ||
        (s->labelled = gcut__malloc(gcut__mul_size(n / 64 + 1, sizeof(uint64_t)),
                                    "cpu-pr BFS bitmap")) == NULL)
        return GCUT_ERR_NOMEM;

    memcpy(s->tile_log, grid->ndim == 3 ? tile_log_3d : tile_log_2d, sizeof s->tile_log);
    s->tiles_z = ((s->size_z - 1) >> s->tile_log[0]) + 1;
    s->tiles_y = ((s->size_y - 1) >> s->tile_log[1]) + 1;
    s->tiles_x = ((s->size_x - 1) >> s->tile_log[2]) + 1;
    s->num_tiles = s->tiles_z * s->tiles_y * s->tiles_x;
    int connectivity = grid->connectivity;
    s->num_colors = connectivity == 4 || connectivity == 6 ? 2 : connectivity == 8 ? 4 : 8;
    /* More threads than tiles per colour would only wait at barriers. */
    const int64_t per_color = s->num_tiles / s->num_colors;
    if (per_color < s->threads)
        s->threads = per_color > 1 ? (int)per_color : 1;
    s->node_threads = s->n >= PARALLEL_MIN_NODES ? s->threads : 1;
    const size_t tiles = (size_t)s->num_tiles;
    if ((s->tiles_by_color =
             gcut__malloc(gcut__mul_size(tiles, sizeof(int64_t)), "cpu-pr tile lists")) == NULL ||
        (s->tile_list =
             gcut__malloc(gcut__mul_size(tiles, sizeof(int64_t)), "cpu-pr tile lists")) == NULL ||
        (s->tile_active = gcut__calloc(tiles, 1, "cpu-pr tile flags")) == NULL)
        return GCUT_ERR_NOMEM;
    int64_t count[8] = {0};
    for (int64_t t = 0; t < s->num_tiles; t++)
        count[color_of(s, connectivity, t)]++;
    s->color_start[0] = 0;
    for (int c = 0; c < 8; c++)
        s->color_start[c + 1] = s->color_start[c] + count[c];
    int64_t fill[8];
    memcpy(fill, s->color_start, sizeof fill);
    for (int64_t t = 0; t < s->num_tiles; t++)
        s->tiles_by_color[fill[color_of(s, connectivity, t)]++] = t;
    return GCUT_OK;
}

/* Preprocess (shared decision 2): cancel min(source, sink) per node into the flow, keep the
 * rest as excess or sink residual; arcs leaving the grid get residual 0, so that the solver
 * never needs a bounds check before it reads a neighbour behind a positive residual. */
static void load_problem(pr_state *s, const gcut_grid *grid) {
    const int64_t rows = s->size_z * s->size_y, w = s->size_x;
    const int32_t *source = grid->terminal[GCUT_SOURCE], *sink = grid->terminal[GCUT_SINK];
#pragma omp parallel for num_threads(s->node_threads) schedule(static)
    for (int64_t row = 0; row < rows; row++) {
        const int64_t y = row % s->size_y, z = row / s->size_y, base = row * w;
        for (int64_t x = 0; x < w; x++) {
            int64_t v = base + x;
            int32_t c = source[v] < sink[v] ? source[v] : sink[v];
            s->excess[v] = source[v] - c;
            s->sink_residual[v] = sink[v] - c;
            /* First touch here, by the thread that will mostly use them (NUMA placement), and
             * so that page faults are not charged to the first global relabel. */
            s->height[v] = 0;
            s->queue[v] = 0;
            s->inflow[v] = 0;
        }
        for (int d = 0; d < s->num_dirs; d++) {
            uint32_t *r = s->residual[d] + base;
            int64_t ny = y + s->offset[d][1], nz = z + s->offset[d][0];
            if (ny < 0 || ny >= s->size_y || nz < 0 || nz >= s->size_z) {
                memset(r, 0, (size_t)w * sizeof *r);
                continue;
            }
            const int32_t *cap = grid->cap[d] + base;
            for (int64_t x = 0; x < w; x++)
                r[x] = (uint32_t)cap[x];
            if (s->offset[d][2] > 0)
                r[w - 1] = 0;
            else if (s->offset[d][2] < 0)
                r[0] = 0;
        }
    }
}

/* Append v to the thread's chunk; a full chunk reserves room in the shared queue at once. */
static void queue_push(pr_state *s, uint32_t *chunk, int *fill, int64_t v) {
    chunk[(*fill)++] = (uint32_t)v;
    if (*fill == QUEUE_CHUNK) {
        int64_t at = __atomic_fetch_add(&s->queue_tail, (int64_t)*fill, __ATOMIC_RELAXED);
        memcpy(s->queue + at, chunk, (size_t)*fill * sizeof *chunk);
        *fill = 0;
    }
}

static void queue_flush(pr_state *s, uint32_t *chunk, int *fill) {
    if (*fill == 0)
        return;
    int64_t at = __atomic_fetch_add(&s->queue_tail, (int64_t)*fill, __ATOMIC_RELAXED);
    memcpy(s->queue + at, chunk, (size_t)*fill * sizeof *chunk);
    *fill = 0;
}

static int tile_has_active(const pr_state *s, const tile_box *b) {
    for (int64_t z = b->z0; z < b->z1; z++)
        for (int64_t y = b->y0; y < b->y1; y++) {
            const int64_t base = (z * s->size_y + y) * s->size_x;
            for (int64_t x = b->x0; x < b->x1; x++)
                if (s->excess[base + x] > 0 && s->height[base + x] < s->inf)
                    return 1;
        }
    return 0;
}

/* Tile flags from a scan of every tile: streaming reads, cheaper than finding the tile of
 * each active node the BFS meets. */
static int64_t mark_active_tiles(pr_state *s) {
    int64_t active = 0;
#pragma omp parallel for num_threads(s->node_threads) schedule(dynamic, 16) reduction(+ : active)
    for (int64_t t = 0; t < s->num_tiles; t++) {
        const tile_box b = box_of(s, t);
        s->tile_active[t] = (uint8_t)tile_has_active(s, &b);
        active += s->tile_active[t];
    }
    return active;
}

/* BFS step from v: claim each unlabelled node w with a residual arc w -> v at height
 * next_height. With several threads claiming at once the claim is an atomic fetch-or on the
 * bitmap word, so that exactly one thread queues w. */
static void bfs_visit(pr_state *s, int64_t v, int32_t next_height, int shared_claims,
                      uint32_t *chunk, int *fill) {
    for (uint32_t in = s->inflow[v]; in != 0; in &= in - 1) {
        const int64_t w = v + s->step[__builtin_ctz(in)];
        uint64_t *word = &s->labelled[w >> 6];
        const uint64_t bit = (uint64_t)1 << (w & 63);
        if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit)
            continue;
        if (shared_claims) {
            if (__atomic_fetch_or(word, bit, __ATOMIC_RELAXED) & bit)
                continue;
        } else {
            *word |= bit;
        }
        s->height[w] = next_height;
        queue_push(s, chunk, fill, w);
    }
}

/* Global relabel (shared decision 3): exact distances to the sink by BFS over reverse
 * residual arcs, level by level (Hussein V-B-1, the only source of exact labels); unreachable
 * nodes get inf, for good. Wide levels are shared by all threads; runs of narrow levels
 * (thin frontiers late in a solve) go to one thread, since two barriers per level would cost
 * more than the level. Then marks the tiles that hold an active node and returns how many
 * there are. */
static int64_t global_relabel(pr_state *s) {
    s->queue_tail = 0;
    const int64_t n = s->n;
    const int32_t inf = s->inf;
    const int64_t wide = s->node_threads > 1 ? BFS_WIDE_LEVEL : INT64_MAX;
    int64_t begin = 0, end = 0; /* the current level, queue[begin, end) */
    int32_t level = 1;
#pragma omp parallel num_threads(s->node_threads)
    {
        uint32_t chunk[QUEUE_CHUNK];
        int fill = 0;
        /* By words of the bitmap, so that each word has one writer. */
#pragma omp for schedule(static) nowait
        for (int64_t word = 0; word <= (n - 1) >> 6; word++) {
            uint64_t bits = 0;
            const int64_t first = word << 6, last = first + 64 < n ? first + 64 : n;
            /* The arcs into the word's 64 nodes, gathered in one streaming pass over the
             * residual arrays, so that the BFS reads one word per visited node instead of one
             * line per arc. An index that wrapped across a row or slice lands on a node whose
             * arc back (d ^ 1) leaves the grid, and those residuals are 0. Direction by
             * direction over the word (a loop the compiler vectorises: cpu-pr's time on the
             * pre-pass's first-round tiles -18% on the build machine, docs/CPU-PARALLEL.md
             * "Tenth pass"), or node by node as before (GCUT_CPUPR_RELABEL_LEGACY=1). */
            uint32_t gathered[64];
            if (!s->relabel_legacy) {
                memset(gathered, 0, sizeof gathered);
                for (int d = 0; d < s->num_dirs; d++) {
                    const int64_t step = s->step[d];
                    const uint32_t *r = s->residual[d ^ 1];
                    const int64_t a = first > -step ? first : -step;
                    const int64_t b = last < n - step ? last : n - step;
                    for (int64_t v = a; v < b; v++)
                        gathered[v - first] |= (uint32_t)(r[v + step] != 0) << d;
                }
            }
            for (int64_t v = first; v < last; v++) {
                /* inf is final (shared decision 5): such nodes need no arcs and no label. */
                if (s->height[v] == inf) {
                    s->inflow[v] = 0;
                    continue;
                }
                uint32_t in = 0;
                if (!s->relabel_legacy)
                    in = gathered[v - first];
                else {
                    for (int d = 0; d < s->num_dirs; d++) {
                        const int64_t w = v + s->step[d];
                        if (w >= 0 && w < n && s->residual[d ^ 1][w] > 0)
                            in |= (uint32_t)1 << d;
                    }
                }
                s->inflow[v] = in;
                if (s->sink_residual[v] > 0) {
                    s->height[v] = 1;
                    bits |= (uint64_t)1 << (v & 63);
                    queue_push(s, chunk, &fill, v);
                } else {
                    s->height[v] = inf;
                }
            }
            s->labelled[word] = bits;
        }
        queue_flush(s, chunk, &fill);
#pragma omp barrier
#pragma omp single
        end = s->queue_tail;
        /* begin, end and level change only inside `single` blocks, each entered after a
         * barrier, so every thread sees the same values and takes the same branches. */
        while (begin < end) {
            if (end - begin >= wide) {
#pragma omp for schedule(dynamic, 256) nowait
                for (int64_t i = begin; i < end; i++)
                    bfs_visit(s, s->queue[i], level + 1, 1, chunk, &fill);
                queue_flush(s, chunk, &fill);
#pragma omp barrier
#pragma omp single
                {
                    begin = end;
                    end = s->queue_tail;
                    level++;
                }
            } else {
#pragma omp barrier
#pragma omp single
                while (begin < end && end - begin < wide) {
                    for (int64_t i = begin; i < end; i++)
                        bfs_visit(s, s->queue[i], level + 1, 0, chunk, &fill);
                    queue_flush(s, chunk, &fill);
                    begin = end;
                    end = s->queue_tail;
                    level++;
                }
            }
        }
    }
    return mark_active_tiles(s);
}

/* Discharge v (shared decision 4): to the sink first, then down admissible arcs, relabel
 * when stuck, until the excess is gone or v is known not to reach the sink. Neighbours in
 * other tiles belong to tiles of other colours, idle now: their heights are stable, and their
 * excess is added to atomically because several tiles of this colour may push into one. */
static void discharge(pr_state *s, int64_t v, int64_t x, int64_t y, int64_t z, const tile_box *b,
                      pr_counts *counts) {
    int64_t e = s->excess[v];
    int32_t h = s->height[v];
    const int interior = x > b->x0 && x < b->x1 - 1 && y > b->y0 && y < b->y1 - 1 &&
                         (s->size_z == 1 || (z > b->z0 && z < b->z1 - 1));
    for (;;) {
        int32_t rt = s->sink_residual[v];
        if (rt > 0) {
            int64_t amount = e < rt ? e : rt;
            s->sink_residual[v] = rt - (int32_t)amount;
            e -= amount;
            counts->pushes++;
            if (e == 0)
                break;
        }
        int64_t lowest = s->inf;
        counts->work += s->num_dirs;
        for (int d = 0; d < s->num_dirs && e > 0; d++) {
            uint32_t r = s->residual[d][v];
            if (r == 0)
                continue;
            const int64_t w = v + s->step[d];
            const int32_t hw = s->height[w];
            if (hw != h - 1) {
                if (hw < lowest)
                    lowest = hw;
                continue;
            }
            int64_t amount = e < (int64_t)r ? e : (int64_t)r;
            s->residual[d][v] = r - (uint32_t)amount;
            s->residual[d ^ 1][w] += (uint32_t)amount;
            e -= amount;
            counts->pushes++;
            int local = interior;
            if (!local) {
                int64_t nx = x + s->offset[d][2], ny = y + s->offset[d][1],
                        nz = z + s->offset[d][0];
                local = nx >= b->x0 && nx < b->x1 && ny >= b->y0 && ny < b->y1 && nz >= b->z0 &&
                        nz < b->z1;
                if (!local) {
                    __atomic_fetch_add(&s->excess[w], amount, __ATOMIC_RELAXED);
                    mark_tile(s, tile_of_coords(s, nx, ny, nz));
                }
            }
            if (local)
                s->excess[w] += amount;
            if ((int64_t)r > amount && hw < lowest)
                lowest = hw;
        }
        if (e == 0)
            break;
        /* Stuck: every residual arc leads to a height >= h. Relabel to one above the lowest;
         * a height past n means no path to the sink is left (heights bound distances). */
        counts->relabels++;
        h = lowest + 1 > s->n ? s->inf : (int32_t)(lowest + 1);
        if (h == s->inf)
            break;
    }
    s->excess[v] = e;
    s->height[v] = h;
}

/* Up to s->local_rounds passes over the tile's active nodes, alternating the row direction so
 * that flow moves both ways along a row within one visit; stops early once a pass finds
 * nothing to do. */
static void process_tile(pr_state *s, int64_t tile, pr_counts *counts) {
    const tile_box b = box_of(s, tile);
    for (int round = 0; round < s->local_rounds; round++) {
        int64_t visited = 0;
        for (int64_t z = b.z0; z < b.z1; z++)
            for (int64_t y = b.y0; y < b.y1; y++) {
                const int64_t base = (z * s->size_y + y) * s->size_x;
                for (int64_t k = 0; k < b.x1 - b.x0; k++) {
                    const int64_t x = round & 1 ? b.x1 - 1 - k : b.x0 + k;
                    const int64_t v = base + x;
                    if (s->excess[v] > 0 && s->height[v] < s->inf) {
                        discharge(s, v, x, y, z, &b, counts);
                        visited++;
                    }
                }
            }
        counts->work += (b.x1 - b.x0) * (b.y1 - b.y0) * (b.z1 - b.z0);
        if (visited == 0) {
            __atomic_store_n(&s->tile_active[tile], 0, __ATOMIC_RELAXED);
            return;
        }
    }
    __atomic_store_n(&s->tile_active[tile], (uint8_t)tile_has_active(s, &b), __ATOMIC_RELAXED);
}

/* One sweep: each colour in turn, its active tiles in parallel. Tiles that the previous
 * colours pushed into are picked up by their own colour later in the same sweep. */
static void sweep(pr_state *s, pr_counts *total) {
    for (int c = 0; c < s->num_colors; c++) {
        int64_t count = 0;
        for (int64_t i = s->color_start[c]; i < s->color_start[c + 1]; i++) {
            int64_t t = s->tiles_by_color[i];
            if (s->tile_active[t])
                s->tile_list[count++] = t;
        }
        /* The scan for active tiles is work too: it is what a long tail of nearly idle
         * sweeps costs, and it makes such a tail end in a global relabel sooner. */
        total->work += s->color_start[c + 1] - s->color_start[c];
        if (count == 0)
            continue;
        int64_t pushes = 0, relabels = 0, work = 0;
#pragma omp parallel for num_threads(s->threads) if (count > 1) schedule(dynamic, 1) \
    reduction(+ : pushes, relabels, work)
        for (int64_t i = 0; i < count; i++) {
            pr_counts local = {0, 0, 0};
            process_tile(s, s->tile_list[i], &local);
            pushes += local.pushes;
            relabels += local.relabels;
            work += local.work;
        }
        total->pushes += pushes;
        total->relabels += relabels;
        total->work += work;
    }
}

static int any_tile_active(const pr_state *s) {
    for (int64_t t = 0; t < s->num_tiles; t++)
        if (s->tile_active[t])
            return 1;
    return 0;
}

static gcut_status resolve_threads(const gcut_options *options, int *out) {
    int threads = options ? options->threads : 0;
    if (threads < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "cpu-pr: options.threads is %d; use 0 for all cores or a count >= 1",
                          threads);
#ifdef GCUT_HAVE_OPENMP
    if (threads == 0)
        threads = omp_get_max_threads();
    /* A team far beyond the processors cannot help, and asking the runtime for an absurd one
     * (threads = 1000000) would end the process when thread creation fails. */
    if (threads > 4 * omp_get_num_procs())
        threads = 4 * omp_get_num_procs();
#else
    threads = 1;
#endif
    *out = threads;
    return GCUT_OK;
}

/* An early stop asked for (never by the solvers, whose stop is the exact one below). */
static bool stop_asked(const pr_state *s, int64_t sweeps) {
    return (s->stop != NULL && __atomic_load_n(s->stop, __ATOMIC_RELAXED) != 0) ||
           (s->max_sweeps > 0 && sweeps >= s->max_sweeps);
}

/* Push-relabel from the loaded (or warm-repaired) state until the exact stop (or an early one,
 * stop_asked), then the flow (sum of the sink capacities of grid minus the sink residuals left)
 * and the labels. */
static void run_to_stop(pr_state *s, const gcut_grid *grid, int verbose, int64_t *flow,
                        uint8_t *labels, gcut_stats *stats) {
    s->local_rounds = gcut__env_int("GCUT_CPUPR_ROUNDS", LOCAL_ROUNDS, 1, 1 << 20);
    const double relabel_factor =
        gcut__env_int("GCUT_CPUPR_RELABEL_PCT", (int)(RELABEL_WORK_FACTOR * 100), 1, 1 << 20) /
        100.0;
    const int64_t tail_sweeps = gcut__env_int("GCUT_CPUPR_TAIL", TAIL_SWEEPS, 0, 1 << 30);
    double t1 = gcut__now_ms();

    pr_counts total = {0, 0, 0};
    int64_t sweeps = 0, relabel_passes = 0, work_at_last = 0, sweeps_at_last = 0;

    double relabel_ms = 0, gr_work = 0;
    for (;;) {
        double r0 = gcut__now_ms();
        int64_t active = global_relabel(s);
        relabel_ms += gcut__now_ms() - r0;
        relabel_passes++;
        const double gr_cost = (double)s->n + (double)s->queue_tail * s->num_dirs;
        gr_work += gr_cost;
        work_at_last = total.work;
        sweeps_at_last = sweeps;
        if (verbose)
            fprintf(stderr,
                    "cpu-pr: global relabel %" PRId64 ": %" PRId64 " active tiles after %" PRId64
                    " sweeps, %" PRId64 " pushes, %" PRId64 " relabels, %" PRId64
                    " reachable; %.1f ms in global relabels, %.1f ms in all\n",
                    relabel_passes, active, sweeps, total.pushes, total.relabels, s->queue_tail,
                    relabel_ms, gcut__now_ms() - t1);
        /* Exact stop (shared decision 5): the labels are exact now, and no node with excess can
         * reach the sink, so the preflow is maximum. */
        if (active == 0)
            break;
        /* An early stop (the pre-pass's, stop_asked): the flow so far, a preflow, not maximum. */
        if (stop_asked(s, sweeps))
            break;
        do {
            sweep(s, &total);
            sweeps++;
        } while ((double)(total.work - work_at_last) < relabel_factor * gr_cost &&
                 (tail_sweeps == 0 || sweeps - sweeps_at_last < tail_sweeps) &&
                 any_tile_active(s) && !stop_asked(s, sweeps));
    }

    int64_t value = 0;
    const int32_t *sink = grid->terminal[GCUT_SINK];
#pragma omp parallel for num_threads(s->node_threads) schedule(static) reduction(+ : value)
    for (int64_t v = 0; v < s->n; v++)
        value += (int64_t)sink[v] - s->sink_residual[v];
    if (labels != NULL) {
#pragma omp parallel for num_threads(s->node_threads) schedule(static)
        for (int64_t v = 0; v < s->n; v++)
            labels[v] = s->height[v] < s->inf ? GCUT_SINK : GCUT_SOURCE;
    }
    *flow = value;
    if (verbose)
        fprintf(stderr, "cpu-pr: work %.0f = sweeps %" PRId64 " + relabels %.0f (%.2f per node)\n",
                (double)total.work + gr_work, total.work, gr_work,
                ((double)total.work + gr_work) / (double)s->n);
    if (stats != NULL) {
        stats->solve_ms = gcut__now_ms() - t1;
        stats->sweeps = sweeps;
        stats->global_relabels = relabel_passes;
        stats->pushes = total.pushes;
    }
}

gcut_status gcut__cpupr_solve_grid(const gcut_grid *grid, const gcut_options *options,
                                   int64_t *flow, uint8_t *labels, gcut_stats *stats) {
    double t0 = gcut__now_ms();
    int threads = 1;
    gcut_status st = resolve_threads(options, &threads);
    if (st != GCUT_OK)
        return st;
    const int verbose = options ? options->verbose : 0;
    pr_state s;
    st = state_init(&s, grid, threads);
    if (st != GCUT_OK) {
        state_free(&s);
        return st;
    }
    load_problem(&s, grid);
    if (stats != NULL)
        stats->build_ms = gcut__now_ms() - t0;
    run_to_stop(&s, grid, verbose, flow, labels, stats);
    state_free(&s);
    return GCUT_OK;
}

/* Solve grid in place on one thread (parallel-bk's pre-pass, src/cpu/par_prepass.c): a maximum
 * preflow (or, once *stop is set, the preflow found so far), its residuals written back, each
 * node's excess as its source capacity (every s-t cut then has the capacity it had less the flow
 * into the sink, so the minimum cuts are the same), *flow the flow into the sink.
 * GCUT_ERR_OVERFLOW, grid untouched, if an excess or a residual passes INT32_MAX (the caller then
 * solves the tile otherwise). */
gcut_status gcut__cpupr_solve_in_place(gcut_grid *grid, const int *stop, int64_t *flow) {
    pr_state s;
    gcut_status st = state_init(&s, grid, 1);
    if (st != GCUT_OK) {
        state_free(&s);
        return st;
    }
    s.stop = stop;
    s.max_sweeps = gcut__env_int("GCUT_CPUPR_MAX_SWEEPS", 0, 0, INT32_MAX);
    load_problem(&s, grid);
    run_to_stop(&s, grid, 0, flow, NULL, NULL);
    bool fits = true;
    /* GCUT_PBK_PREPASS_COPY_LEGACY=1: the node-by-node check and write-back as before (for
     * timings); else max-reductions and row copies the compiler vectorises. */
    if (gcut__env_int("GCUT_PBK_PREPASS_COPY_LEGACY", 0, 0, 1) != 0) {
        for (int64_t v = 0; v < s.n && fits; v++) {
            fits = s.excess[v] <= INT32_MAX;
            for (int d = 0; d < s.num_dirs; d++)
                fits = fits && s.residual[d][v] <= (uint32_t)INT32_MAX;
        }
    } else {
        int64_t most = 0;
        for (int64_t v = 0; v < s.n; v++)
            most = s.excess[v] > most ? s.excess[v] : most;
        uint32_t widest = 0;
        for (int d = 0; d < s.num_dirs; d++)
            for (int64_t v = 0; v < s.n; v++)
                widest = s.residual[d][v] > widest ? s.residual[d][v] : widest;
        fits = most <= INT32_MAX && widest <= (uint32_t)INT32_MAX;
        if (fits) {
            for (int64_t v = 0; v < s.n; v++)
                grid->terminal[GCUT_SOURCE][v] = (int32_t)s.excess[v];
            memcpy(grid->terminal[GCUT_SINK], s.sink_residual, (size_t)s.n * sizeof(int32_t));
            for (int d = 0; d < s.num_dirs; d++)
                memcpy(grid->cap[d], s.residual[d], (size_t)s.n * sizeof(int32_t));
        }
        state_free(&s);
        return fits ? GCUT_OK
                    : gcut__fail(GCUT_ERR_OVERFLOW, "cpu-pr in place: a residual passes INT32_MAX");
    }
    if (fits) {
        for (int64_t v = 0; v < s.n; v++) {
            grid->terminal[GCUT_SOURCE][v] = (int32_t)s.excess[v];
            grid->terminal[GCUT_SINK][v] = s.sink_residual[v];
            for (int d = 0; d < s.num_dirs; d++)
                grid->cap[d][v] = (int32_t)s.residual[d][v];
        }
    }
    state_free(&s);
    return fits ? GCUT_OK
                : gcut__fail(GCUT_ERR_OVERFLOW, "cpu-pr in place: a residual passes INT32_MAX");
}

/* ------------------------------------------------------------------------------------------
 * Context: the state kept between solves, warm re-solves (docs/CUDA-GRID.md, "Contexts").
 * ---------------------------------------------------------------------------------------- */

typedef struct pr_context {
    pr_state s;
    int num_arrays;                    /* 2 + num_dirs */
    int32_t *snap[2 + GCUT__MAX_DIRS]; /* capacities of the last solve: terminals, dirs */
    uint8_t *listed;                   /* per node: in the current change list */
    int verbose;
    bool loaded;
} pr_context;

static int32_t *grid_array(const gcut_grid *grid, int a) {
    return a < 2 ? grid->terminal[a] : grid->cap[a - 2];
}

gcut_status gcut__cpupr_ctx_create(const gcut_grid *grid, const gcut_options *options,
                                   void **state) {
    *state = NULL;
    int threads = 1;
    gcut_status st = resolve_threads(options, &threads);
    if (st != GCUT_OK)
        return st;
    pr_context *c = gcut__calloc(1, sizeof *c, "cpu-pr context");
    if (c == NULL)
        return GCUT_ERR_NOMEM;
    c->verbose = options ? options->verbose : 0;
    c->num_arrays = 2 + grid->num_dirs;
    st = state_init(&c->s, grid, threads);
    for (int a = 0; a < c->num_arrays && st == GCUT_OK; a++)
        if ((c->snap[a] = gcut__malloc(gcut__mul_size((size_t)grid->num_nodes, sizeof(int32_t)),
                                       "cpu-pr context capacities")) == NULL)
            st = GCUT_ERR_NOMEM;
    if (st == GCUT_OK &&
        (c->listed = gcut__calloc((size_t)grid->num_nodes, 1, "cpu-pr context marks")) == NULL)
        st = GCUT_ERR_NOMEM;
    if (st != GCUT_OK) {
        gcut__cpupr_ctx_free(c);
        return st;
    }
    *state = c;
    return GCUT_OK;
}

void gcut__cpupr_ctx_free(void *state) {
    pr_context *c = state;
    if (c == NULL)
        return;
    state_free(&c->s);
    for (int a = 0; a < c->num_arrays; a++)
        gcut__free(c->snap[a]);
    gcut__free(c->listed);
    gcut__free(c);
}

/* The arc pair (i, d) / (j, d ^ 1), j = i + step[d], brought to the new capacities while the
 * flow g on it (net, i -> j) is kept where it still fits; what no longer fits goes back:
 * g' = g clamped to [-new reverse cap, new cap], and g - g' returns from j to i (Kohli & Torr
 * 2005, sec. 4: the residuals take the capacity change; a flow above the new capacity leaves
 * an excess at its tail and a deficit at its head). */
static void repair_pair(pr_context *c, const gcut_grid *grid, int64_t i, int d) {
    pr_state *s = &c->s;
    const int64_t j = i + s->step[d];
    const int e = d ^ 1;
    const int64_t old_cap = c->snap[2 + d][i];
    const int64_t new_cap = grid->cap[d][i], new_rev = grid->cap[e][j];
    const int64_t g = old_cap - (int64_t)s->residual[d][i];
    int64_t kept = g > new_cap ? new_cap : g < -new_rev ? -new_rev : g;
    s->residual[d][i] = (uint32_t)(new_cap - kept);
    s->residual[e][j] = (uint32_t)(new_rev + kept);
    s->excess[i] += g - kept;
    s->excess[j] -= g - kept;
    c->snap[2 + d][i] = (int32_t)new_cap;
    c->snap[2 + e][j] = (int32_t)new_rev;
}

/* Terminals of node i to their new values: a source change moves the excess (the source arc
 * stays saturated), a sink residual below zero gives its flow back as excess. @return false
 * if the sink residual would pass INT32_MAX (the caller then starts cold). */
static bool repair_terminals(pr_context *c, const gcut_grid *grid, int64_t i) {
    pr_state *s = &c->s;
    const int64_t ds = (int64_t)grid->terminal[GCUT_SOURCE][i] - c->snap[GCUT_SOURCE][i];
    int64_t rt =
        (int64_t)s->sink_residual[i] + grid->terminal[GCUT_SINK][i] - c->snap[GCUT_SINK][i];
    s->excess[i] += ds;
    if (rt < 0) {
        s->excess[i] += -rt;
        rt = 0;
    }
    if (rt > INT32_MAX)
        return false;
    s->sink_residual[i] = (int32_t)rt;
    c->snap[GCUT_SOURCE][i] = grid->terminal[GCUT_SOURCE][i];
    c->snap[GCUT_SINK][i] = grid->terminal[GCUT_SINK][i];
    return true;
}

static bool node_differs(const pr_context *c, const gcut_grid *grid, int64_t i) {
    for (int a = 0; a < c->num_arrays; a++)
        if (grid_array(grid, a)[i] != c->snap[a][i])
            return true;
    return false;
}

/* Fold the changes into the kept state. @return false if a cold start is needed. */
static bool warm_repair(pr_context *c, const gcut_grid *grid, const gcut__ctx_changes *changes,
                        int64_t *changed) {
    pr_state *s = &c->s;
    const int64_t n = s->n;
    bool ok = true;
    *changed = 0;
    if (changes->nodes == NULL) {
        for (int64_t i = 0; i < n && ok; i++) {
            *changed += node_differs(c, grid, i);
            ok = repair_terminals(c, grid, i);
        }
        /* Every pair once, from its even end; an unchanged pair is left as it was. */
        for (int64_t i = 0; i < n; i++)
            for (int d = 0; d < s->num_dirs; d += 2)
                if (gcut__grid_has_neighbor(grid, i, d) &&
                    (grid->cap[d][i] != c->snap[2 + d][i] ||
                     grid->cap[d ^ 1][i + s->step[d]] != c->snap[2 + (d ^ 1)][i + s->step[d]]))
                    repair_pair(c, grid, i, d);
        /* The arcs that leave the grid too, so that they are not seen as changes again. */
        for (int a = 0; a < c->num_arrays; a++)
            memcpy(c->snap[a], grid_array(grid, a), (size_t)n * sizeof(int32_t));
    } else {
        /* Terminal marks alone promise the arcs did not change: only the terminals are read
         * (an arc changed anyway keeps its snapshot, so a later whole mark or comparison still
         * repairs it). */
        const int dirs = changes->terminals_only ? 0 : s->num_dirs;
        for (int64_t k = 0; k < changes->count && dirs > 0; k++)
            c->listed[changes->nodes[k]] = 1;
        for (int64_t k = 0; k < changes->count && ok; k++) {
            const int64_t i = changes->nodes[k];
            *changed += 1;
            ok = repair_terminals(c, grid, i);
            /* A pair with both ends listed is repaired once, from its even end. */
            for (int d = 0; d < dirs; d++)
                if (gcut__grid_has_neighbor(grid, i, d) &&
                    ((d & 1) == 0 || !c->listed[i + s->step[d]]))
                    repair_pair(c, grid, i, d);
        }
        for (int64_t k = 0; k < changes->count; k++) {
            const int64_t i = changes->nodes[k];
            if (dirs > 0)
                c->listed[i] = 0; /* set above only when the pairs were read */
            for (int a = 0; a < 2 + dirs; a++)
                c->snap[a][i] = grid_array(grid, a)[i];
        }
    }
    if (!ok)
        return false;
    /* Deficits (a node that lost more inflow than it had excess): add the deficit to both of
     * its terminal arcs, which raises every cut by the same amount (Kohli & Torr's
     * reparametrisation), so the deficit becomes flow that already went to the sink. The
     * flow value stays sum(sink caps) - sum(sink residuals). */
    for (int64_t i = 0; i < n; i++)
        if (s->excess[i] < 0) {
            int64_t rt = (int64_t)s->sink_residual[i] - s->excess[i];
            if (rt > INT32_MAX)
                return false;
            s->sink_residual[i] = (int32_t)rt;
            s->excess[i] = 0;
        }
    /* Heights from scratch: the global relabel recomputes every node, the dead ones too. */
    memset(s->height, 0, (size_t)n * sizeof *s->height);
    return true;
}

gcut_status gcut__cpupr_ctx_solve(void *state, const gcut_grid *grid,
                                  const gcut__ctx_changes *changes, int64_t *flow, uint8_t *labels,
                                  gcut_stats *stats, gcut__ctx_report *report) {
    pr_context *c = state;
    double t0 = gcut__now_ms();
    bool warm = changes->warm && c->loaded;
    int64_t changed = 0;
    if (warm && !warm_repair(c, grid, changes, &changed)) {
        warm = false;
        report->cold_fallback = 1;
    }
    if (!warm) {
        load_problem(&c->s, grid);
        for (int a = 0; a < c->num_arrays; a++)
            memcpy(c->snap[a], grid_array(grid, a), (size_t)c->s.n * sizeof(int32_t));
        c->loaded = true;
    }
    report->warm = warm;
    report->changed_nodes = changed;
    stats->build_ms = gcut__now_ms() - t0;
    run_to_stop(&c->s, grid, c->verbose, flow, labels, stats);
    return GCUT_OK;
}
