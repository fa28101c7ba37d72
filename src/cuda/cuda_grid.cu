/* cuda_grid.cu - cuda-grid: exact GPU push-relabel on 2D/3D grids (Hussein et al. 2007, VI-B
 * tiles; Lattari 2010, 5.3 active tiles and GPU global relabel; JF-Cut tile-local fixed points),
 * segmentation capacities built on the device from src/seg's tables, and contexts kept across
 * solves with warm repair on the device (Kohli & Torr 2005, sec. 4). docs/CUDA-GRID.md. */
#include "internal.h"
#include "cuda_check.h"
#include "../seg/seg_internal.h"
#include "staging.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <climits>
#include <type_traits>
#include <mutex>
#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace cg = cooperative_groups;

namespace {

/* Calls f with the connectivity as a compile-time constant (a std::integral_constant<int, CONN>,
 * read as decltype(c)::value): the one switch from a grid's run-time connectivity to the
 * kernels' template argument. */
template <typename F> auto by_conn(int conn, F &&f) {
    switch (conn) {
    case 4:
        return f(std::integral_constant<int, 4>{});
    case 8:
        return f(std::integral_constant<int, 8>{});
    case 6:
        return f(std::integral_constant<int, 6>{});
    default:
        return f(std::integral_constant<int, 26>{});
    }
}

/* Height of a node that cannot reach the sink; above every BFS distance since n < kInf. */
constexpr int kInf = 0x7fffffff;

/* Direction d's offset packed as (dz+1)*9 + (dy+1)*3 + (dx+1), in gcut_grid_create()'s order
 * (checked against grid->offset at solve time). A switch, so that unrolled loops fold it. */
__host__ __device__ constexpr int dir_code(int conn, int d) {
    if (conn == 8 && d >= 4)
        return d == 4 ? 17 : d == 5 ? 9 : d == 6 ? 15 : 11;
    switch (d) {
    case 0:
        return 14;
    case 1:
        return 12;
    case 2:
        return 16;
    case 3:
        return 10;
    case 4:
        return 22;
    case 5:
        return 4;
    case 6:
        return 15;
    case 7:
        return 11;
    case 8:
        return 17;
    case 9:
        return 9;
    case 10:
        return 18;
    case 11:
        return 8;
    case 12:
        return 19;
    case 13:
        return 7;
    case 14:
        return 20;
    case 15:
        return 6;
    case 16:
        return 21;
    case 17:
        return 5;
    case 18:
        return 23;
    case 19:
        return 3;
    case 20:
        return 24;
    case 21:
        return 2;
    case 22:
        return 25;
    case 23:
        return 1;
    case 24:
        return 26;
    default:
        return 0;
    }
}
__host__ __device__ constexpr int dir_dz(int conn, int d) {
    return dir_code(conn, d) / 9 - 1;
}
__host__ __device__ constexpr int dir_dy(int conn, int d) {
    return dir_code(conn, d) / 3 % 3 - 1;
}
__host__ __device__ constexpr int dir_dx(int conn, int d) {
    return dir_code(conn, d) % 3 - 1;
}

/* Width of a 2D tile, at build time: GCUT_CUDAGRID_TILE8 for 8-connected grids, TILE4 for
 * 4-connected ones; 16 for 16x16 tiles (the default since the sixth session's second cold pass), 32
 * for 32x8 (docs/CUDA-GRID.md, "Square 2D tiles"). A squarer tile has fewer edge nodes (60 of 256
 * against 76) and halo heights (68 against 84); on the H100 hard 1920x1080 8-connected relaxed
 * 13-16% fewer tiles per solve and took 4-9% less time, 4-connected 3-6% less. */
#ifndef GCUT_CUDAGRID_TILE8
#define GCUT_CUDAGRID_TILE8 16
#endif
#ifndef GCUT_CUDAGRID_TILE4
#define GCUT_CUDAGRID_TILE4 16 /* the same for 4-connected grids */
#endif
static_assert(GCUT_CUDAGRID_TILE8 == 32 || GCUT_CUDAGRID_TILE8 == 16,
              "GCUT_CUDAGRID_TILE8 must be 32 (32x8 tiles) or 16 (16x16 tiles)");
static_assert(GCUT_CUDAGRID_TILE4 == 32 || GCUT_CUDAGRID_TILE4 == 16,
              "GCUT_CUDAGRID_TILE4 must be 32 (32x8 tiles) or 16 (16x16 tiles)");

/* Tile shape per connectivity: 2D 16x16 (32x8, rows of 128 bytes per array, when built with
 * GCUT_CUDAGRID_TILE4 / GCUT_CUDAGRID_TILE8 = 32), 3D 16x4x4. 256 nodes, one thread each. The box
 * is the tile plus a one-node halo (no z halo in 2D). */
template <int CONN> struct Geo {
    static constexpr int NDIM = (CONN == 4 || CONN == 8) ? 2 : 3;
    static constexpr int TX =
        NDIM == 2 ? (CONN == 8 ? GCUT_CUDAGRID_TILE8 : GCUT_CUDAGRID_TILE4) : 16;
    static constexpr int TY = NDIM == 2 ? 256 / TX : 4;
    static constexpr int TZ = NDIM == 2 ? 1 : 4;
    static constexpr int T = TX * TY * TZ;
    static constexpr int HZ = NDIM == 2 ? 0 : 1;
    static constexpr int BX = TX + 2, BY = TY + 2, BZ = TZ + 2 * HZ;
    static constexpr int BOX = BX * BY * BZ;
    __host__ __device__ static constexpr int box_step(int d) {
        return (dir_dz(CONN, d) * BY + dir_dy(CONN, d)) * BX + dir_dx(CONN, d);
    }
    __host__ __device__ static constexpr int tid_step(int d) {
        return (dir_dz(CONN, d) * TY + dir_dy(CONN, d)) * TX + dir_dx(CONN, d);
    }
};

/* Device-side state of one solve, passed to every kernel by value. */
struct Problem {
    int width, height, depth;
    long long n;
    int tiles_x, tiles_y, tiles_z, num_tiles;
    long long step[GCUT__MAX_DIRS]; /* index offset per direction */
    unsigned *residual;             /* [d * n + i]: residual of arc i -> i + step[d]; a pair's
                                       two residuals sum to at most 2 * INT32_MAX, so unsigned
                                       never overflows */
    int *sink_residual;             /* residual of i -> sink */
    long long *excess;
    int *dist;          /* heights: BFS distance to the sink after a global relabel */
    unsigned *arc_mask; /* bit d: residual[d][i] > 0 (snapshot for the global relabel) */
    int *list[3];       /* tile work lists, rotated per launch */
    int *count;         /* [4] entries in each list ([kAllTiles] unused) */
    int *next;          /* [4] work-stealing cursor into each list, [kAllTiles] for a pass
                           over every tile */
    unsigned *mark;     /* per tile: stamp of the last list it was put on (no duplicates) */
    unsigned long long *counters; /* kSumSink, kSumSinkResidual, kVisits, kPushes */
    /* The global relabel in one launch (relax_async_kernel): a device work queue of tiles. */
    int *rctl;                 /* [kRctlWords] head, tail, pending, overflow, visits */
    int *qflag;                /* per tile: 1 while the tile waits on the queue */
    unsigned long long *queue; /* [queue_cap]: (epoch << 32) | tile, written once per relabel */
    int queue_cap;
    /* Live tiles of a masked solve (gcut__cudagrid_ctx_solve_masked): when live is set, only the
     * num_live tiles it lists take part (live_flag[t] = 1 for them); every node of every other
     * tile is isolated (no capacity), so no kernel reads or writes it. NULL: every tile. */
    const int *live;
    const unsigned char *live_flag;
    int num_live;
};

enum { kAllTiles = 3 };

/* qflag values of the one-launch relabel: kQueued while the tile waits on the queue,
 * kFirstPass while it waits for its position in the first pass (relabel_init_kernel). A tile
 * is queued only from 0 (atomicCAS), so a waiting tile is never queued twice. */
enum { kQueued = 1, kFirstPass = 2 };

/* Control words of the one-launch relabel: kHead/kTail are queue positions (position p <
 * num_tiles is tile p, the first pass over every tile; later positions are queue[p -
 * num_tiles]), kPending counts tiles queued or being relaxed (0 = the fixed point is reached),
 * kQOverflow is set when the queue ran out of room (the host then relabels with passes),
 * kRelaxVisits counts tile relaxations (for --verbose), kEpoch tags the queue entries of the
 * current relabel (kept across solves: the queue is never cleared, only outgrown). */
enum {
    kHead = 0,
    kTail = 1,
    kPending = 2,
    kQOverflow = 3,
    kRelaxVisits = 4,
    kEpoch = 7,
    kRctlWords = 8
};

/* kChanged: nodes a warm repair found changed; kBadIndex: smallest (node * arrays + array) of a
 * negative device capacity (all ones = none); kOverflow: a repaired sink residual passed
 * INT32_MAX (the context then starts cold). */
enum {
    kSumSink = 0,
    kSumSinkResidual = 1,
    kVisits = 2,
    kPushes = 3,
    kChanged = 4,
    kBadIndex = 5,
    kOverflow = 6,
    kRelaxCycles = 7,  /* one-launch relabel, summed over blocks (clock64 of thread 0): relaxing */
    kTakeCycles = 8,   /* taking a tile (queue positions, waits for entries) */
    kFinishCycles = 9, /* waiting for the fixed point, then collecting the active tiles */
    kNumCounters = 10
};

__device__ void list_append(const Problem &P, int list, int tile, unsigned stamp) {
    if (atomicExch(&P.mark[tile], stamp) != stamp) {
        int pos = atomicAdd(&P.count[list], 1);
        P.list[list][pos] = tile;
    }
}

/* A node's coordinates, and its neighbour along direction d when that is in the grid. */
struct NodeXYZ {
    int x, y, z;
    __device__ NodeXYZ(const Problem &P, long long i)
        : x((int)(i % P.width)), y((int)(i / P.width % P.height)),
          z((int)(i / ((long long)P.width * P.height))) {}
    template <int CONN> __device__ bool has(const Problem &P, int d) const {
        const int nx = x + dir_dx(CONN, d), ny = y + dir_dy(CONN, d), nz = z + dir_dz(CONN, d);
        return nx >= 0 && nx < P.width && ny >= 0 && ny < P.height && nz >= 0 && nz < P.depth;
    }
};

/* Sum v over the block into *target with one atomic per block. */
__device__ void block_add(unsigned long long v, unsigned long long *target) {
    __shared__ unsigned long long warp_sums[32];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int warps = (blockDim.x + 31) >> 5;
        v = lane < warps ? warp_sums[lane] : 0;
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0 && v != 0)
            atomicAdd(target, v);
    }
}

/* Preprocess (shared decision 2): source caps arrive in dist, sink caps in sink_residual.
 * c = min(source, sink) goes straight through; excess = source - c, rt = sink - c; arcs that
 * leave the grid get residual 0. Also sums the sink caps (flow = that sum - final rt sum). */
template <int CONN> __global__ void init_kernel(const Problem P) {
    unsigned long long sink_sum = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x) {
        int source = P.dist[i], sink = P.sink_residual[i];
        int c = source < sink ? source : sink;
        P.excess[i] = source - c;
        P.sink_residual[i] = sink - c;
        sink_sum += (unsigned long long)sink;
        const NodeXYZ c3(P, i);
#pragma unroll
        for (int d = 0; d < CONN; d++)
            if (!c3.has<CONN>(P, d))
                P.residual[d * P.n + i] = 0;
    }
    block_add(sink_sum, &P.counters[kSumSink]);
}

/* Tile holding node (x, y, z). */
template <int CONN> __device__ int tile_of(const Problem &P, int x, int y, int z) {
    using G = Geo<CONN>;
    return (z / G::TZ * P.tiles_y + y / G::TY) * P.tiles_x + x / G::TX;
}

/* The tiles a pass over every tile visits: all of them, or the live ones of a masked solve
 * (position p < first_count is tile first_tile(p)). */
__host__ __device__ inline int first_count(const Problem &P) {
    return P.live != nullptr ? P.num_live : P.num_tiles;
}
__device__ inline int first_tile(const Problem &P, int p) {
    return P.live != nullptr ? P.live[p] : p;
}
/* False for a tile outside a masked solve's live set: never listed, queued or relaxed. */
__device__ inline bool tile_live(const Problem &P, int t) {
    return P.live_flag == nullptr || P.live_flag[t] != 0;
}

/* Node-by-node kernels visit positions k < node_positions(P): every node (k itself), or the
 * nodes of the live tiles, T positions per tile; node_at is -1 for a position past the grid. */
/* Bit d set when node i's arc in direction d has residual capacity: the arc mask every global
 * relabel starts from. */
template <int CONN>
__device__ __forceinline__ unsigned residual_mask(const Problem &P, long long i) {
    unsigned mask = 0;
#pragma unroll
    for (int d = 0; d < CONN; d++)
        if (P.residual[d * P.n + i] > 0)
            mask |= 1u << d;
    return mask;
}

template <int CONN> __device__ long long node_positions(const Problem &P) {
    return P.live != nullptr ? (long long)P.num_live * Geo<CONN>::T : P.n;
}
template <int CONN> __device__ long long node_at(const Problem &P, long long k) {
    using G = Geo<CONN>;
    if (P.live == nullptr)
        return k;
    const int tile = P.live[k / G::T], t = (int)(k % G::T);
    const int x = tile % P.tiles_x * G::TX + t % G::TX,
              y = tile / P.tiles_x % P.tiles_y * G::TY + t / G::TX % G::TY,
              z = tile / (P.tiles_x * P.tiles_y) * G::TZ + t / (G::TX * G::TY);
    if (x >= P.width || y >= P.height || z >= P.depth)
        return -1;
    return ((long long)z * P.height + y) * P.width + x;
}

/* Put the tile of node i and the tiles of its neighbours on the one-launch relabel's first
 * pass (qflag 0 -> kFirstPass, counted in kPending once per tile). */
template <int CONN> __device__ void mark_first_pass(const Problem &P, long long i) {
    const int x = (int)(i % P.width), y = (int)(i / P.width % P.height),
              z = (int)(i / ((long long)P.width * P.height));
    const int own = tile_of<CONN>(P, x, y, z);
    if (__ldcg(&P.qflag[own]) == 0 && atomicCAS(&P.qflag[own], 0, kFirstPass) == 0)
        atomicAdd(&P.rctl[kPending], 1);
#pragma unroll
    for (int d = 0; d < CONN; d++) {
        const int nx = x + dir_dx(CONN, d), ny = y + dir_dy(CONN, d), nz = z + dir_dz(CONN, d);
        if (nx < 0 || nx >= P.width || ny < 0 || ny >= P.height || nz < 0 || nz >= P.depth)
            continue;
        const int t = tile_of<CONN>(P, nx, ny, nz);
        if (t != own && tile_live(P, t) && __ldcg(&P.qflag[t]) == 0 &&
            atomicCAS(&P.qflag[t], 0, kFirstPass) == 0)
            atomicAdd(&P.rctl[kPending], 1);
    }
}

/* Global relabel, step 1: heights 1 next to the sink, INF elsewhere; residual arc masks.
 * levels 2: also height 2 for a node with a residual arc into a node next to the sink (the
 * length of a residual path to the sink, so a valid start for the relaxation from above,
 * which lowers heights only; on hard 1920x1080 89% of the nodes are then at their distance
 * before any tile is relaxed, and fewer tile edges fall).
 * async 1: also every tile queued for relax_async_kernel's first pass (qflag kFirstPass);
 * async 2 ("seeded"), with mark: only the tiles that hold a node of finite height or a
 * neighbour of one, the only tiles whose relaxation can lower a height before a neighbouring
 * tile's height falls (every other tile and its halo are all INF; a fall queues it); without
 * mark, jacobi_kernel's last step seeds the first pass instead. For async 2 the host
 * zeroes qflag and rctl[kHead .. kQOverflow] before the launch; kPending counts the seeded
 * tiles. */
template <int CONN>
__global__ void relabel_init_kernel(const Problem P, int async, int levels, int mark) {
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
         k < node_positions<CONN>(P); k += (long long)gridDim.x * blockDim.x) {
        const long long i = node_at<CONN>(P, k);
        if (i < 0)
            continue;
        const unsigned mask = residual_mask<CONN>(P, i);
        P.arc_mask[i] = mask;
        int h = P.sink_residual[i] > 0 ? 1 : kInf;
        if (h == kInf && levels >= 2) {
#pragma unroll
            for (int d = 0; d < CONN; d++) /* arcs out of the grid have residual 0 */
                if ((mask & (1u << d)) && P.sink_residual[i + P.step[d]] > 0)
                    h = 2;
        }
        P.dist[i] = h;
        if (async == 2 && mark && h < kInf)
            mark_first_pass<CONN>(P, i);
    }
    if (async) {
        if (async == 1)
            for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < first_count(P);
                 t += gridDim.x * blockDim.x)
                P.qflag[first_tile(P, t)] = kFirstPass;
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            P.rctl[kHead] = 0;
            P.rctl[kTail] = first_count(P);
            if (async == 1) {
                P.rctl[kPending] = first_count(P);
                P.rctl[kQOverflow] = 0;
            }
            P.rctl[kEpoch] += 1;
            for (int l = 0; l < 4; l++) {
                P.count[l] = 0;
                P.next[l] = 0;
            }
        }
    }
}

/* Global relabel, between steps 1 and 2 (GCUT_CUDAGRID_JACOBI steps): one step of
 * h(v) = min(h(v), 1 + h(w) over residual arcs v->w) node by node over the whole grid, in place
 * (every height read or written is the length of a residual path to the sink, so heights stay
 * valid starts for the relaxation from above). With mark, the last step puts every node whose
 * height fell, and its neighbours' tiles, on the seeded first pass: every other tile is then
 * at its fixed point with the heights as they are (a neighbour that fell during this step
 * marked it), so only a fall seen later, which queues it, can lower a height in it. */
template <int CONN> __global__ void jacobi_kernel(const Problem P, int mark) {
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
         k < node_positions<CONN>(P); k += (long long)gridDim.x * blockDim.x) {
        const long long i = node_at<CONN>(P, k);
        bool fell = false;
        if (i >= 0) {
            const int h = P.dist[i];
            if (h > 1) {
                const unsigned mask = P.arc_mask[i];
                int best = h;
#pragma unroll
                for (int d = 0; d < CONN; d++)
                    if (mask & (1u << d)) {
                        const int hn = __ldcg(&P.dist[i + P.step[d]]);
                        if (hn < kInf && hn + 1 < best)
                            best = hn + 1;
                    }
                if (best < h) {
                    P.dist[i] = best;
                    fell = true;
                }
            }
        }
        if (mark && fell)
            mark_first_pass<CONN>(P, i);
    }
}

/* Where thread tid of tile `tile` sits. */
template <int CONN> struct TilePos {
    int x0, y0, z0, gx, gy, gz;
    bool valid;
    long long g;
    __device__ TilePos(const Problem &P, int tile, int lx, int ly, int lz) {
        using G = Geo<CONN>;
        int tx = tile % P.tiles_x, ty = tile / P.tiles_x % P.tiles_y,
            tz = tile / (P.tiles_x * P.tiles_y);
        x0 = tx * G::TX, y0 = ty * G::TY, z0 = tz * G::TZ;
        gx = x0 + lx, gy = y0 + ly, gz = z0 + lz;
        valid = gx < P.width && gy < P.height && gz < P.depth;
        g = valid ? ((long long)gz * P.height + gy) * P.width + gx : 0;
    }
};

/* Load the heights of the tile and its halo into hs (INF outside the grid). */
template <int CONN> __device__ void load_box(const Problem &P, int *hs, int x0, int y0, int z0) {
    using G = Geo<CONN>;
    for (int b = threadIdx.x; b < G::BOX; b += G::T) {
        int bx = b % G::BX, by = b / G::BX % G::BY, bz = b / (G::BX * G::BY);
        int gx = x0 + bx - 1, gy = y0 + by - 1, gz = z0 + bz - G::HZ;
        bool inside =
            gx >= 0 && gx < P.width && gy >= 0 && gy < P.height && gz >= 0 && gz < P.depth;
        hs[b] = inside ? __ldcg(&P.dist[((long long)gz * P.height + gy) * P.width + gx]) : kInf;
    }
}

/* Put the tiles adjacent to `tile` (by the connectivity's tile-level neighbourhood) for which
 * flag(offset code) holds on list `list`. */
template <int CONN, typename Flag>
__device__ void append_neighbor_tiles(const Problem &P, int tile, int list, unsigned stamp,
                                      Flag flag) {
    int tx = tile % P.tiles_x, ty = tile / P.tiles_x % P.tiles_y,
        tz = tile / (P.tiles_x * P.tiles_y);
    for (int code = 0; code < 27; code++) {
        int dz = code / 9 - 1, dy = code / 3 % 3 - 1, dx = code % 3 - 1;
        int nonzero = (dz != 0) + (dy != 0) + (dx != 0);
        if (nonzero == 0 || ((CONN == 4 || CONN == 6) && nonzero > 1) || !flag(code))
            continue;
        int nx = tx + dx, ny = ty + dy, nz = tz + dz;
        if (nx < 0 || nx >= P.tiles_x || ny < 0 || ny >= P.tiles_y || nz < 0 || nz >= P.tiles_z)
            continue;
        const int t = (nz * P.tiles_y + ny) * P.tiles_x + nx;
        if (tile_live(P, t))
            list_append(P, list, t, stamp);
    }
}

/* True when every neighbour of local position (lx, ly, lz) lies inside the tile, so that no
 * other block can touch the node's excess or residuals while this one holds them. */
template <int CONN> __device__ bool tile_interior(int lx, int ly, int lz) {
    using G = Geo<CONN>;
    return lx > 0 && lx < G::TX - 1 && ly > 0 && ly < G::TY - 1 &&
           (G::NDIM == 2 || (lz > 0 && lz < G::TZ - 1));
}

template <int CONN> __device__ bool in_tile(int lx, int ly, int lz) {
    using G = Geo<CONN>;
    return lx >= 0 && lx < G::TX && ly >= 0 && ly < G::TY && lz >= 0 && lz < G::TZ;
}

/* Phase B of a tile round (the sweep's and the pull's), after phase A: node tid takes its
 * relabel (into h and its shared slot h_slot) and the pushes its neighbours inside the tile
 * recorded towards it (pdir: the direction pushed, pamt: the amount), into its excess and the
 * reverse residuals; with MARK, bit d ^ 1 of dirty for each arc so raised. Both barriers are
 * here: every thread of the block calls it. */
template <int CONN, bool MARK>
__device__ __forceinline__ void end_tile_round(int lx, int ly, int lz, int tid, int relabel_to,
                                               int &h, int *h_slot, signed char *pdir,
                                               const unsigned *pamt, long long &e,
                                               unsigned (&r)[CONN], unsigned &dirty) {
    using G = Geo<CONN>;
    __syncthreads();
    if (relabel_to != h) {
        h = relabel_to;
        *h_slot = h;
    }
#pragma unroll
    for (int d = 0; d < CONN; d++) {
        const int dx = dir_dx(CONN, d), dy = dir_dy(CONN, d), dz = dir_dz(CONN, d);
        if (in_tile<CONN>(lx - dx, ly - dy, lz - dz) && pdir[tid - G::tid_step(d)] == d) {
            const unsigned amount = pamt[tid - G::tid_step(d)];
            e += amount;
            r[d ^ 1] += amount;
            if (MARK)
                dirty |= 1u << (d ^ 1);
        }
    }
    __syncthreads();
    pdir[tid] = -1;
}

/* The block's next tile from list list_in (every tile in turn for kAllTiles), or -1. */
__device__ int next_tile(const Problem &P, int list_in, int *slot_s) {
    if (threadIdx.x == 0) {
        int slot = atomicAdd(&P.next[list_in], 1);
        int total = list_in == kAllTiles ? first_count(P) : __ldcg(&P.count[list_in]);
        *slot_s = slot >= total          ? -1
                  : list_in == kAllTiles ? first_tile(P, slot)
                                         : __ldcg(&P.list[list_in][slot]);
    }
    __syncthreads();
    int tile = *slot_s;
    __syncthreads();
    return tile;
}

/* Lists rotate over launches: launch q reads list q % 3, appends to (q + 1) % 3 and empties
 * (q + 2) % 3, which launch q - 1 read and launch q + 1 will fill. */
__device__ void clear_list(const Problem &P, int list_clear) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        P.count[list_clear] = 0;
        P.next[list_clear] = 0;
    }
}

/* Min-plus scans along a tile row (a warp, or half of one in 3D), by doubling: afterwards
 * best(x) is also bounded by best(x + k) + k along every run of residual +x arcs inside the
 * row, and by best(x - k) + k along runs of -x arcs (directions 0 and 1 in every
 * connectivity). A distance then crosses a whole row per relaxation step, not one node.
 * conn = the arcs x -> x+1 -> ... -> x+s are all residual and inside the tile. */
template <int TX> __device__ int row_scan(int best, unsigned mask, int lx) {
    bool conn = (mask & 1u) && lx + 1 < TX;
#pragma unroll
    for (int s = 1; s < TX; s <<= 1) {
        int far = __shfl_down_sync(0xffffffffu, best, s, TX);
        int far_conn = __shfl_down_sync(0xffffffffu, (int)conn, s, TX);
        if (conn && far < kInf && far + s < best)
            best = far + s;
        conn = conn && lx + s < TX && far_conn;
    }
    conn = (mask & 2u) && lx >= 1;
#pragma unroll
    for (int s = 1; s < TX; s <<= 1) {
        int far = __shfl_up_sync(0xffffffffu, best, s, TX);
        int far_conn = __shfl_up_sync(0xffffffffu, (int)conn, s, TX);
        if (conn && far < kInf && far + s < best)
            best = far + s;
        conn = conn && lx >= s && far_conn;
    }
    return best;
}

/* The local fixed point of a tile loaded into hs (the box with its halo): Jacobi steps of
 * h(v) = min(h(v), 1 + h(w) over residual arcs v->w inside the box, plus row scans, until no
 * height in the block falls. Called by every thread of the block; returns this thread's height. */
template <int CONN> __device__ int relax_box(int *hs, int me, unsigned mask, int lx) {
    using G = Geo<CONN>;
    int h = hs[me];
    for (;;) {
        int best = h;
#pragma unroll
        for (int d = 0; d < CONN; d++)
            if (mask & (1u << d)) {
                int hn = hs[me + G::box_step(d)];
                if (hn < kInf && hn + 1 < best)
                    best = hn + 1;
            }
        best = row_scan<G::TX>(best, mask, lx);
        __syncthreads();
        bool changed = best < h;
        if (changed) {
            h = best;
            hs[me] = h;
        }
        if (!__syncthreads_or(changed))
            return h;
    }
}

/* Relax one tile to its local fixed point (see relax_kernel). Heights and masks of other tiles
 * are read through L2 (__ldcg), since in the cooperative relabel other blocks write them within
 * the same launch and L1 is not coherent. */
template <int CONN>
__device__ void relax_tile(const Problem &P, int tile, int *hs, int list_out, unsigned stamp) {
    using G = Geo<CONN>;
    const int lx = threadIdx.x % G::TX, ly = threadIdx.x / G::TX % G::TY,
              lz = threadIdx.x / (G::TX * G::TY);
    const int me = ((lz + G::HZ) * G::BY + ly + 1) * G::BX + lx + 1;
    TilePos<CONN> pos(P, tile, lx, ly, lz);
    load_box<CONN>(P, hs, pos.x0, pos.y0, pos.z0);
    const unsigned mask = pos.valid ? __ldcg(&P.arc_mask[pos.g]) : 0u;
    __syncthreads();
    const int h0 = hs[me];
    const int h = relax_box<CONN>(hs, me, mask, lx);
    if (pos.valid && h != h0)
        P.dist[pos.g] = h;
    bool edge_fell = h != h0 && !tile_interior<CONN>(lx, ly, lz);
    if (__syncthreads_or(edge_fell) && threadIdx.x == 0)
        append_neighbor_tiles<CONN>(P, tile, list_out, stamp, [](int) { return true; });
}

/* Global relabel, step 2: one pass over the listed tiles. Each tile iterates
 * h(v) = min(h(v), 1 + h(w) over residual arcs v->w) in shared memory until it is stable
 * (Jacobi steps, so every read sees the previous step, plus row scans), writes back, and lists
 * its neighbours if a height on its edge fell. A fixed point of these passes (an empty list)
 * is the exact BFS distance to the sink, INF for nodes that cannot reach it. */
template <int CONN>
__global__ void __launch_bounds__(Geo<CONN>::T)
    relax_kernel(const Problem P, int list_in, int list_out, int list_clear, unsigned stamp) {
    __shared__ int hs[Geo<CONN>::BOX];
    __shared__ int slot_s;
    clear_list(P, list_clear);
    for (int tile; (tile = next_tile(P, list_in, &slot_s)) >= 0;)
        relax_tile<CONN>(P, tile, hs, list_out, stamp);
}

/* Queue the tile at offset code (dz, dy, dx each -1..1 as code / 9, code / 3 % 3, code % 3)
 * from `tile` for the one-launch relabel, unless it is outside the grid or already waiting. */
__device__ void queue_neighbor_tile(const Problem &P, int tile, int code, unsigned epoch) {
    const int tx = tile % P.tiles_x, ty = tile / P.tiles_x % P.tiles_y,
              tz = tile / (P.tiles_x * P.tiles_y);
    const int nx = tx + code % 3 - 1, ny = ty + code / 3 % 3 - 1, nz = tz + code / 9 - 1;
    if (nx < 0 || nx >= P.tiles_x || ny < 0 || ny >= P.tiles_y || nz < 0 || nz >= P.tiles_z)
        return;
    const int t = (nz * P.tiles_y + ny) * P.tiles_x + nx;
    if (!tile_live(P, t))
        return; /* isolated nodes only: no height there can fall */
    if (atomicCAS(&P.qflag[t], 0, kQueued) != 0)
        return; /* still waiting (queue or first pass): it will read the new heights */
    atomicAdd(&P.rctl[kPending], 1);
    const int p = atomicAdd(&P.rctl[kTail], 1) - first_count(P);
    if (p >= P.queue_cap) {
        atomicExch(&P.rctl[kQOverflow], 1);
        atomicSub(&P.rctl[kPending], 1);
    } else {
        atomicExch(&P.queue[p], ((unsigned long long)epoch << 32) | (unsigned)t);
    }
}

/* Relax one tile of the one-launch relabel: relax_tile's local fixed point, but heights are
 * lowered with atomicMin (a tile re-queued while a block still relaxes it may be relaxed by two
 * blocks at once; both write upper bounds that are lengths of residual paths, and the smaller
 * wins), and only the tiles holding a neighbour of a node whose height fell are queued. */
template <int CONN>
__device__ void relax_tile_async(const Problem &P, int tile, int *hs, int *nb, unsigned epoch,
                                 bool parallel_queue) {
    using G = Geo<CONN>;
    const int lx = threadIdx.x % G::TX, ly = threadIdx.x / G::TX % G::TY,
              lz = threadIdx.x / (G::TX * G::TY);
    const int me = ((lz + G::HZ) * G::BY + ly + 1) * G::BX + lx + 1;
    TilePos<CONN> pos(P, tile, lx, ly, lz);
    if (threadIdx.x < 27)
        nb[threadIdx.x] = 0;
    load_box<CONN>(P, hs, pos.x0, pos.y0, pos.z0);
    const unsigned mask = pos.valid ? __ldcg(&P.arc_mask[pos.g]) : 0u;
    __syncthreads();
    const int h0 = hs[me];
    const int h = relax_box<CONN>(hs, me, mask, lx);
    if (pos.valid && h != h0 && h < atomicMin(&P.dist[pos.g], h) &&
        !tile_interior<CONN>(lx, ly, lz)) {
        /* Every neighbour of this node outside the tile reads its height: flag its tile. */
#pragma unroll
        for (int d = 0; d < CONN; d++) {
            const int nx = lx + dir_dx(CONN, d), ny = ly + dir_dy(CONN, d),
                      nz = lz + dir_dz(CONN, d);
            if (!in_tile<CONN>(nx, ny, nz)) {
                const int tdx = nx < 0 ? -1 : nx >= G::TX ? 1 : 0;
                const int tdy = ny < 0 ? -1 : ny >= G::TY ? 1 : 0;
                const int tdz = nz < 0 ? -1 : nz >= G::TZ ? 1 : 0;
                nb[(tdz + 1) * 9 + (tdy + 1) * 3 + tdx + 1] = 1;
            }
        }
    }
    __threadfence(); /* the heights before the queue entries that announce them */
    __syncthreads();
    if (parallel_queue) {
        /* Thread c queues the neighbour at offset code c, so the atomics of up to 26
         * neighbours overlap instead of following one another in thread 0. */
        if (threadIdx.x < 27 && nb[threadIdx.x]) {
            queue_neighbor_tile(P, tile, threadIdx.x, epoch);
            __threadfence();
        }
        __syncthreads(); /* every neighbour counted in kPending before this tile leaves it */
        if (threadIdx.x == 0) {
            __threadfence();
            atomicSub(&P.rctl[kPending], 1); /* this tile's relaxation is done */
        }
        return;
    }
    if (threadIdx.x == 0) {
        for (int code = 0; code < 27; code++)
            if (nb[code])
                queue_neighbor_tile(P, tile, code, epoch);
        __threadfence();
        atomicSub(&P.rctl[kPending], 1); /* this tile's relaxation is done */
    }
}

/* The global relabel's steps 2 and 3 in one launch, with no barrier between passes and no host
 * read: blocks take tiles from a device queue (first every tile, then the tiles a relaxation
 * queued) until kPending is 0, i.e. no tile is queued or being relaxed: the heights are then
 * the fixed point of h(v) = min(h(v), 1 + h(w)), the exact BFS distances (every tile not queued
 * satisfies its equations, since a tile is queued whenever a neighbour's height falls after
 * the tile was taken off the queue). Then every block collects its share of the tiles holding an
 * active node into list_out (an empty list is the exact stop). If the queue runs out of room
 * (kQOverflow), blocks leave and the host relabels with passes instead. epoch tags this
 * relabel's queue entries, so the queue need not be cleared between relabels. */
template <int CONN>
__global__ void __launch_bounds__(Geo<CONN>::T)
    relax_async_kernel(const Problem P, int list_out, unsigned stamp, int parallel_queue) {
    using G = Geo<CONN>;
    __shared__ int hs[G::BOX];
    __shared__ int nb[27];
    __shared__ int slot_s;
    volatile int *rctl = P.rctl;
    const unsigned epoch = (unsigned)rctl[kEpoch];
    int visits = 0;
    long long take_cycles = 0, relax_cycles = 0, t_mark = clock64();
    for (;;) {
        if (threadIdx.x == 0) {
            int tile = -1, p;
            /* First-pass positions of tiles that are not waiting for them (not seeded, or
             * queued meanwhile: their queue entry relaxes them) are skipped. */
            const int first = first_count(P);
            while ((p = atomicAdd(&P.rctl[kHead], 1)) < first &&
                   atomicCAS(&P.qflag[first_tile(P, p)], kFirstPass, 0) != kFirstPass) {
            }
            if (p < first) {
                tile = first_tile(P, p);
            } else if (p - first < P.queue_cap) {
                volatile unsigned long long *slot = P.queue + (p - first);
                for (;;) {
                    const unsigned long long v = *slot;
                    if ((unsigned)(v >> 32) == epoch) {
                        tile = (int)(unsigned)(v & 0xffffffffu);
                        break;
                    }
                    if (rctl[kPending] == 0 || rctl[kQOverflow] != 0)
                        break;
                    __nanosleep(64);
                }
            }
            if (tile >= 0) {
                /* A neighbour that falls from now on re-queues it (the first pass cleared its
                 * flag above). */
                if (p >= first)
                    atomicExch(&P.qflag[tile], 0);
                __threadfence();
            }
            slot_s = tile;
        }
        __syncthreads();
        const int tile = slot_s;
        __syncthreads();
        long long t = clock64();
        take_cycles += t - t_mark;
        t_mark = t;
        if (tile < 0)
            break;
        visits++;
        relax_tile_async<CONN>(P, tile, hs, nb, epoch, parallel_queue != 0);
        t = clock64();
        relax_cycles += t - t_mark;
        t_mark = t;
    }
    if (threadIdx.x == 0) {
        if (visits != 0)
            atomicAdd(&P.rctl[kRelaxVisits], visits);
        atomicAdd(&P.counters[kTakeCycles], (unsigned long long)take_cycles);
        atomicAdd(&P.counters[kRelaxCycles], (unsigned long long)relax_cycles);
        while (rctl[kPending] != 0 && rctl[kQOverflow] == 0)
            __nanosleep(64);
        __threadfence();
        slot_s = rctl[kQOverflow];
    }
    __syncthreads();
    if (slot_s != 0)
        return;
    const int lx = threadIdx.x % G::TX, ly = threadIdx.x / G::TX % G::TY,
              lz = threadIdx.x / (G::TX * G::TY);
    for (int p = blockIdx.x; p < first_count(P); p += gridDim.x) {
        const int tile = first_tile(P, p);
        TilePos<CONN> pos(P, tile, lx, ly, lz);
        bool active = pos.valid && __ldcg(&P.excess[pos.g]) > 0 && __ldcg(&P.dist[pos.g]) < kInf;
        if (__syncthreads_or(active) && threadIdx.x == 0)
            list_append(P, list_out, tile, stamp);
    }
    if (threadIdx.x == 0)
        atomicAdd(&P.counters[kFinishCycles], (unsigned long long)(clock64() - t_mark));
}

/* The whole global relabel in one cooperative launch (grid-wide barriers between passes, no
 * host round trip): step 1 over all nodes, relax passes until a pass lists no tile (passes
 * q0, q0+1, ... rotate the lists as separate launches would, stamps stamp0 + pass), then step
 * 3 into list q % 3. The number of passes goes to count[kAllTiles] for the host. */
template <int CONN>
__global__ void __launch_bounds__(Geo<CONN>::T)
    relabel_coop_kernel(const Problem P, int q0, unsigned stamp0) {
    using G = Geo<CONN>;
    __shared__ int hs[G::BOX];
    __shared__ int slot_s;
    cg::grid_group grid = cg::this_grid();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned mask = residual_mask<CONN>(P, i);
        P.arc_mask[i] = mask;
        P.dist[i] = P.sink_residual[i] > 0 ? 1 : kInf;
    }
    grid.sync();
    int q = q0, passes = 0, list_in = kAllTiles;
    for (;;) {
        clear_list(P, (q + 2) % 3);
        for (int tile; (tile = next_tile(P, list_in, &slot_s)) >= 0;)
            relax_tile<CONN>(P, tile, hs, (q + 1) % 3, stamp0 + passes);
        passes++;
        q++;
        grid.sync();
        if (__ldcg(&P.count[q % 3]) == 0)
            break;
        list_in = q % 3;
    }
    const int lx = threadIdx.x % G::TX, ly = threadIdx.x / G::TX % G::TY,
              lz = threadIdx.x / (G::TX * G::TY);
    for (int tile = blockIdx.x; tile < P.num_tiles; tile += gridDim.x) {
        TilePos<CONN> pos(P, tile, lx, ly, lz);
        bool active = pos.valid && P.excess[pos.g] > 0 && __ldcg(&P.dist[pos.g]) < kInf;
        if (__syncthreads_or(active) && threadIdx.x == 0)
            list_append(P, q % 3, tile, stamp0 + passes);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        P.count[kAllTiles] = passes;
}

/* Global relabel, step 3: list the tiles holding an active node (excess > 0, height < INF);
 * one block per tile. An empty list here is the exact stop (shared decision 5). */
template <int CONN> __global__ void collect_kernel(const Problem P, int list_out, unsigned stamp) {
    using G = Geo<CONN>;
    const int lx = threadIdx.x % G::TX, ly = threadIdx.x / G::TX % G::TY,
              lz = threadIdx.x / (G::TX * G::TY);
    const int tile = first_tile(P, blockIdx.x);
    TilePos<CONN> pos(P, tile, lx, ly, lz);
    bool active = pos.valid && P.excess[pos.g] > 0 && P.dist[pos.g] < kInf;
    if (__syncthreads_or(active) && threadIdx.x == 0)
        list_append(P, list_out, tile, stamp);
}

/* A warm start after terminal marks: only the listed nodes can hold excess at a finite height
 * (the last solve stopped with none anywhere, and only their excess changed), so their tiles
 * are listed instead of collect_kernel's pass over every tile. */
template <int CONN>
__global__ void collect_listed_kernel(const Problem P, int list_out, unsigned stamp,
                                      const unsigned *nodes, long long count) {
    /* A repair refused (contexts' warm host path: not read yet): no tile, no sweep work. */
    if (P.counters[kBadIndex] != ~0ull || P.counters[kOverflow] != 0)
        return;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
         k += (long long)gridDim.x * blockDim.x) {
        const long long i = nodes[k];
        if (P.excess[i] > 0 && P.dist[i] < kInf)
            list_append(P, list_out,
                        tile_of<CONN>(P, (int)(i % P.width), (int)(i / P.width % P.height),
                                      (int)(i / ((long long)P.width * P.height))),
                        stamp);
    }
}

/* One sweep: every listed tile is loaded into registers (its excess, sink residual and arc
 * residuals, one node per thread) and shared memory (heights with a halo), then runs up to
 * `rounds` synchronous push/relabel rounds:
 *   A: an active node pushes to the sink, then to its lowest residual neighbour if that is
 *      lower (shared decision 4), else computes its relabel; pushes inside the tile are
 *      recorded in pdir/pamt, pushes across the tile edge go to global memory atomically;
 *   B: heights are updated and every node pulls the pushes recorded towards it.
 * Write-back stores what only this block can touch and adds deltas atomically where a
 * neighbouring tile may have pushed in meanwhile (Hong's rule: increases from others are
 * atomic, decreases only by the owner). Tiles still active, or pushed into, are listed.
 * LEAN (GCUT_CUDAGRID_LEAN_SWEEP, default 1 for 8-connected grids, 0 otherwise; sixth
 * session, second cold pass): no copy of the loaded residuals is kept for the write-back: a push
 * across the tile edge lowers the arc's global residual at once (atomicSub: the owner's copy is
 * never above it, since others only raise it, so it cannot wrap), and an arc inside the tile is
 * stored when a bit of `dirty` says it changed; at least LeanSweep::kMinBlocks blocks per SM
 * (8-connected 16x16: 80 registers and 3 blocks per SM, no spill, against 88 and 2). */
template <int CONN> struct LeanSweep {
    static constexpr int kMinBlocks = CONN == 8 ? 3 : CONN == 26 ? 2 : 4;
    /* GCUT_CUDAGRID_SWEEP_OCC=1 (seventh session): one block per SM more than the default
     * sweep gets (ptxas, sm_90, 16x16: 4-connected 58 registers and 4 blocks -> 47 and 5, no
     * spill; 8-connected lean 80 and 3 -> 64 and 4, 4 bytes spilled, not lean 88 and 2 -> 63 and
     * 4; 6-connected 48 and 5 -> 40 and 6, 16 bytes spilled). */
    static constexpr int kMoreBlocks = CONN == 4 ? 5 : CONN == 8 ? 4 : CONN == 6 ? 6 : 3;
};
/* MORE: launch bounds of LeanSweep::kMoreBlocks blocks per SM (GCUT_CUDAGRID_SWEEP_OCC). */
template <int CONN, bool LEAN = false, bool MORE = false>
__global__ void __launch_bounds__(Geo<CONN>::T, MORE   ? LeanSweep<CONN>::kMoreBlocks
                                                : LEAN ? LeanSweep<CONN>::kMinBlocks
                                                       : 0)
    sweep_kernel(const Problem P, int list_in, int list_out, int list_clear, unsigned stamp,
                 int rounds) {
    using G = Geo<CONN>;
    __shared__ int hs[G::BOX];
    __shared__ signed char pdir[G::T];
    __shared__ unsigned pamt[G::T];
    __shared__ int pushed_into[27];
    __shared__ int slot_s;
    __shared__ unsigned long long block_pushes;
    const int tid = threadIdx.x;
    const int lx = tid % G::TX, ly = tid / G::TX % G::TY, lz = tid / (G::TX * G::TY);
    const int me = ((lz + G::HZ) * G::BY + ly + 1) * G::BX + lx + 1;
    const bool interior = tile_interior<CONN>(lx, ly, lz);
    clear_list(P, list_clear);
    if (tid == 0)
        block_pushes = 0;
    unsigned long long pushes = 0;
    int visits = 0;
    for (int tile; (tile = next_tile(P, list_in, &slot_s)) >= 0;) {
        visits++;
        TilePos<CONN> pos(P, tile, lx, ly, lz);
        load_box<CONN>(P, hs, pos.x0, pos.y0, pos.z0);
        unsigned r[CONN], r0[LEAN ? 1 : CONN];
        unsigned dirty = 0; /* LEAN: bit d, r[d] of an arc inside the tile changed */
        long long e = 0;
        int rt = 0;
        if (pos.valid) {
            e = P.excess[pos.g];
            rt = P.sink_residual[pos.g];
        }
#pragma unroll
        for (int d = 0; d < CONN; d++) {
            r[d] = pos.valid ? P.residual[d * P.n + pos.g] : 0u;
            if (!LEAN)
                r0[d] = r[d];
        }
        const long long e0 = e;
        const int rt0 = rt;
        pdir[tid] = -1;
        if (tid < 27)
            pushed_into[tid] = 0;
        __syncthreads();
        const int h0 = hs[me];
        int h = h0;
        bool active = pos.valid && e > 0 && h < kInf;
        for (int round = 0; round < rounds && __syncthreads_or(active); round++) {
            int relabel_to = h;
            if (active) {
                if (rt > 0) {
                    int amount = e < rt ? (int)e : rt;
                    rt -= amount;
                    e -= amount;
                }
                if (e > 0) {
                    int hmin = kInf, best = -1;
#pragma unroll
                    for (int d = 0; d < CONN; d++)
                        if (r[d] > 0) {
                            int hn = hs[me + G::box_step(d)];
                            if (hn < hmin) {
                                hmin = hn;
                                best = d;
                            }
                        }
                    if (best >= 0 && hmin < h) {
#pragma unroll
                        for (int d = 0; d < CONN; d++)
                            if (d == best) {
                                unsigned amount = e < (long long)r[d] ? (unsigned)e : r[d];
                                r[d] -= amount;
                                e -= amount;
                                pushes++;
                                const int dx = dir_dx(CONN, d), dy = dir_dy(CONN, d),
                                          dz = dir_dz(CONN, d);
                                if (in_tile<CONN>(lx + dx, ly + dy, lz + dz)) {
                                    pdir[tid] = (signed char)d;
                                    pamt[tid] = amount;
                                    if (LEAN)
                                        dirty |= 1u << d;
                                } else {
                                    long long w = pos.g + P.step[d];
                                    if (LEAN)
                                        atomicSub(&P.residual[d * P.n + pos.g], amount);
                                    atomicAdd((unsigned long long *)&P.excess[w],
                                              (unsigned long long)amount);
                                    atomicAdd(&P.residual[(d ^ 1) * P.n + w], amount);
                                    int tdx = lx + dx < 0 ? -1 : lx + dx >= G::TX ? 1 : 0;
                                    int tdy = ly + dy < 0 ? -1 : ly + dy >= G::TY ? 1 : 0;
                                    int tdz = lz + dz < 0 ? -1 : lz + dz >= G::TZ ? 1 : 0;
                                    atomicOr(&pushed_into[(tdz + 1) * 9 + (tdy + 1) * 3 + tdx + 1],
                                             1);
                                }
                            }
                    } else {
                        relabel_to = hmin >= kInf - 1 ? kInf : hmin + 1;
                    }
                }
            }
            end_tile_round<CONN, LEAN>(lx, ly, lz, tid, relabel_to, h, &hs[me], pdir, pamt, e, r,
                                       dirty);
            active = pos.valid && e > 0 && h < kInf;
        }
        if (pos.valid) {
            if (h != h0)
                P.dist[pos.g] = h;
            if (rt != rt0)
                P.sink_residual[pos.g] = rt;
            if (e != e0) {
                if (interior)
                    P.excess[pos.g] = e;
                else
                    atomicAdd((unsigned long long *)&P.excess[pos.g], (unsigned long long)(e - e0));
            }
#pragma unroll
            for (int d = 0; d < CONN; d++)
                if (LEAN) {
                    if (dirty & (1u << d)) /* only arcs inside the tile */
                        P.residual[d * P.n + pos.g] = r[d];
                } else if (r[d] != r0[LEAN ? 0 : d]) {
                    if (in_tile<CONN>(lx + dir_dx(CONN, d), ly + dir_dy(CONN, d),
                                      lz + dir_dz(CONN, d)))
                        P.residual[d * P.n + pos.g] = r[d];
                    else
                        atomicAdd(&P.residual[d * P.n + pos.g], r[d] - r0[LEAN ? 0 : d]);
                }
        }
        if (__syncthreads_or(active) && tid == 0)
            list_append(P, list_out, tile, stamp);
        if (tid == 0)
            append_neighbor_tiles<CONN>(P, tile, list_out, stamp,
                                        [&](int code) { return pushed_into[code] != 0; });
    }
    if (pushes != 0)
        atomicAdd(&block_pushes, pushes);
    __syncthreads();
    if (tid == 0) {
        if (block_pushes != 0)
            atomicAdd(&P.counters[kPushes], block_pushes);
        if (visits != 0)
            atomicAdd(&P.counters[kVisits], (unsigned long long)visits);
    }
}

/* Device tables of a segmentation energy (src/seg/seg_internal.h). */
struct SegTables {
    const unsigned char *pixels; /* channels per node, interleaved */
    const unsigned char *seeds;  /* GCUT_SEED_* per node, or NULL */
    const int *unary_source, *unary_sink;
    const int *pairwise[GCUT__SEG_CLASSES];
    int hard;
};

/* The capacities of a segmentation energy, computed where the solver runs: a line-by-line
 * mirror of gcut__seg_fill_grid() with the same tables, so the grid is bit-identical to the
 * host's. Source caps land in dist and sink caps in sink_residual, as an upload would. */
template <int CONN, int CH> __global__ void build_kernel(const Problem P, const SegTables T) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned char *px = T.pixels + i * CH;
        long long q = gcut__seg_color_index(px, CH);
        int source = T.unary_source[q], sink = T.unary_sink[q];
        if (T.seeds != NULL) {
            if (T.seeds[i] == GCUT_SEED_FOREGROUND)
                source = T.hard, sink = 0;
            else if (T.seeds[i] == GCUT_SEED_BACKGROUND)
                source = 0, sink = T.hard;
        }
        P.dist[i] = source;
        P.sink_residual[i] = sink;
        int x = (int)(i % P.width);
        int y = (int)(i / P.width % P.height);
        int z = (int)(i / ((long long)P.width * P.height));
#pragma unroll
        for (int d = 0; d < CONN; d++) {
            const int dx = dir_dx(CONN, d), dy = dir_dy(CONN, d), dz = dir_dz(CONN, d);
            int nx = x + dx, ny = y + dy, nz = z + dz;
            unsigned cap = 0;
            if (nx >= 0 && nx < P.width && ny >= 0 && ny < P.height && nz >= 0 && nz < P.depth) {
                const int cls = (dx != 0) + (dy != 0) + (dz != 0) - 1;
                cap = (unsigned)T.pairwise[cls][gcut__seg_sqdiff(px, px + P.step[d] * CH, CH)];
            }
            P.residual[d * P.n + i] = cap;
        }
    }
}

/* Result (shared decision 6): label = sink side iff the final BFS reached the node; sums the
 * final sink residuals for the flow value. */
template <int CONN> __global__ void finish_kernel(const Problem P, unsigned char *labels) {
    unsigned long long residual_sum = 0;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
         k < node_positions<CONN>(P); k += (long long)gridDim.x * blockDim.x) {
        const long long i = node_at<CONN>(P, k);
        if (i < 0)
            continue;
        labels[i] = P.dist[i] < kInf ? GCUT_SINK : GCUT_SOURCE;
        residual_sum += (unsigned long long)P.sink_residual[i];
    }
    block_add(residual_sum, &P.counters[kSumSinkResidual]);
}

} // namespace

namespace {

/* GCUT_CUDAGRID_LABEL_PREFILL (contexts, labels into a caller's buffer; docs/CUDA-GRID.md
 * "Labels into a caller's buffer from the last ones"): host_work() runs on the host while the
 * GPU solves, before the solve's first wait (it copies the last labels into the caller's
 * buffer); after_finish() is queued behind the finish kernel, before the last read (it lists the
 * labels that changed). Both run at most once per solve. */
struct LabelHook {
    virtual void host_work() = 0;
    virtual gcut_status after_finish(const unsigned char *labels_dev) = 0;

  protected:
    ~LabelHook() = default;
};

/* Pinned host memory of a solve: host_count and host_counters below. */
constexpr uint64_t kPinnedBytes =
    (4 + kRctlWords) * sizeof(int) + kNumCounters * sizeof(unsigned long long);

/* Device allocations and the stream of one solve, released on every path out. */
struct Session {
    Problem P{};
    cudaStream_t stream = nullptr;
    int *host_count = nullptr; /* pinned [4 + kRctlWords]: list sizes, then P.rctl */
    unsigned long long *host_counters = nullptr;
    cudaEvent_t events[9] = {}; /* 0-2, 5-8: verbose phase times, 3-4: construction */
    void *blocks[32] = {};
    int num_blocks = 0;
    size_t device_bytes = 0;
    bool pinned_reserved = false;
    /* Launch shapes and knobs, fixed at setup. */
    int device = 0, node_blocks = 1, sweep_blocks = 1, relax_blocks = 1, coop = 0, coop_blocks = 1,
        sweeps_per_relabel = 1, rounds = 1, warm_sweeps = 1, relax_async = 1, async_blocks = 1,
        init_levels = 1, parallel_queue = 1, jacobi = 0, lean_sweep = 0, sweep_occ = 0,
        trim_memsets = 0, tail_sweeps = 0, tail_div = 1;
    /* One-launch relabels since the queue was last cleared (their epochs tag its entries). */
    long long epochs = 0;
    /* A context's warm host path (GCUT_CUDAGRID_WARM_HOST, docs/CUDA-GRID.md "The warm path's
     * host side"), each set for one iterate() only: words_prepped, warm_prep_kernel already
     * cleared what reset_solve_words, the warm start's list words and the first one-launch
     * relabel's memsets clear; repair_check, the repair's counters were not read yet: the first
     * global relabel's read brings them, and a refused repair (a negative value, an overflow)
     * stops the solve there with repair_refused set; labels_also, pinned host memory the device
     * labels are also downloaded into before the solve's last wait. */
    bool words_prepped = false, repair_check = false, repair_refused = false;
    unsigned char *labels_also = nullptr;
    /* A context solve's labels for a caller's buffer through the last ones (LabelHook, set for
     * one solve): host work done before the solve's first wait, device work after the finish. */
    struct LabelHook *label_hook = nullptr;
    /* GCUT_CUDAGRID_TRACE=1 (contexts): a timeline of one solve, printed after its last wait.
     * Each mark is the host's clock when it was queued and an event recorded on the stream
     * there (no wait added), so a device time close behind the host's shows the GPU waiting for
     * launches, a host time far behind the device's the host waiting for the GPU. */
    static constexpr int kTraceMarks = 48;
    bool trace = false;
    int trace_n = 0;
    cudaEvent_t trace_ev[kTraceMarks] = {};
    double trace_host[kTraceMarks] = {};
    const char *trace_name[kTraceMarks] = {};
    ~Session() {
        if (pinned_reserved)
            gcut__unreserve(kPinnedBytes);
        for (int i = 0; i < num_blocks; i++)
            cudaFree(blocks[i]);
        if (host_count)
            cudaFreeHost(host_count);
        if (host_counters)
            cudaFreeHost(host_counters);
        for (cudaEvent_t e : events)
            if (e)
                cudaEventDestroy(e);
        for (cudaEvent_t e : trace_ev)
            if (e)
                cudaEventDestroy(e);
        if (stream)
            cudaStreamDestroy(stream);
    }
};

gcut_status cuda_fail(cudaError_t err, const char *what) {
    return gcut__cuda_fail("cuda-grid", err, what);
}

/* A mark of GCUT_CUDAGRID_TRACE (Session::trace); errors only end the trace. */
void trace_mark(Session &S, const char *name) {
    if (!S.trace || S.trace_n >= Session::kTraceMarks)
        return;
    cudaEvent_t &e = S.trace_ev[S.trace_n];
    if ((e == nullptr && cudaEventCreate(&e) != cudaSuccess) ||
        cudaEventRecord(e, S.stream) != cudaSuccess) {
        S.trace = false;
        return;
    }
    S.trace_host[S.trace_n] = gcut__now_ms();
    S.trace_name[S.trace_n++] = name;
}

/* After the solve's last wait: one line per mark, host and device ms since the first. */
void trace_report(Session &S, const char *what) {
    if (!S.trace || S.trace_n == 0)
        return;
    fprintf(stderr, "cuda-grid trace (%s): mark, host ms, device ms, since the first mark\n", what);
    for (int k = 0; k < S.trace_n; k++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, S.trace_ev[0], S.trace_ev[k]) != cudaSuccess)
            ms = -1;
        fprintf(stderr, "  %-28s host %7.3f  device %7.3f\n", S.trace_name[k],
                S.trace_host[k] - S.trace_host[0], ms);
    }
    S.trace_n = 0;
}

template <typename T>
gcut_status device_alloc(Session &S, T **ptr, size_t count, const char *what) {
    void *p = nullptr;
    size_t bytes = count * sizeof(T);
    cudaError_t err = cudaMalloc(&p, bytes > 0 ? bytes : 1);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return gcut__fail(GCUT_ERR_NOMEM, "cuda-grid: cudaMalloc of %zu bytes for %s failed: %s",
                          bytes, what, cudaGetErrorString(err));
    }
    S.blocks[S.num_blocks++] = p;
    S.device_bytes += bytes;
    *ptr = static_cast<T *>(p);
    return GCUT_OK;
}

/* Sweeps between global relabels and push/relabel rounds per tile visit, measured on an H100
 * over K = 1..4, R = 8..64 (docs/CUDA-GRID.md): 2D hard 1920x1080 is fastest at K 2, R 16;
 * 3D hard volumes at K 4 (their relabels cost more: longer BFS in tile hops). */
constexpr int kDefaultSweepsPerRelabel2D = 2;
constexpr int kDefaultSweepsPerRelabel3D = 4;
constexpr int kDefaultRounds = 16;
/* Relax passes launched between two reads of the work-list size. */
constexpr int kRelaxBatch = 8;

/* Where the capacities come from: a host grid (uploaded), or an 8-bit image with the
 * segmentation tables (built on the device; capture, if set, receives a copy for tests). */
struct Input {
    const gcut_grid *grid;
    int width, height, depth;
    long long step[GCUT__MAX_DIRS];
    const uint8_t *pixels, *seeds;
    const gcut__seg_tables *tables;
    gcut_grid *capture;
    double *construct_ms;
};

/* Device buffers of an image solve's inputs (image, seeds, tables); made by the first
 * build_on_device of a session and reused by the next ones (pooled sessions, below). */
struct ImageBuffers {
    unsigned char *pixels = nullptr, *seeds = nullptr;
    int *unary = nullptr, *pairwise = nullptr;
    /* Staged copies (staging.h): the seeds' 2-bit codes on the way up, the labels' bits on the
     * way down ((nodes + 3) / 4 bytes, made by the first staged solve of a session). */
    unsigned char *packed = nullptr;
};

template <int CONN> gcut_status build_on_device(Session &S, const Input &in, ImageBuffers &B);
gcut_status labels_download_staged(Session &S, ImageBuffers &B, uint8_t *labels);

/* Everything a solve of this shape needs made once: dimensions, the device memory check,
 * stream, pinned words, device arrays, launch shapes. extra_bytes: what the caller will
 * allocate besides (a context's capacity copies). */
template <int CONN> gcut_status setup(Session &S, const Input &in, int device, size_t extra_bytes) {
    using G = Geo<CONN>;
    Problem &P = S.P;
    const long long n = (long long)in.width * in.height * in.depth;
    P.width = in.width;
    P.height = in.height;
    P.depth = in.depth;
    P.n = n;
    P.tiles_x = (P.width + G::TX - 1) / G::TX;
    P.tiles_y = (P.height + G::TY - 1) / G::TY;
    P.tiles_z = (P.depth + G::TZ - 1) / G::TZ;
    P.num_tiles = P.tiles_x * P.tiles_y * P.tiles_z;
    for (int d = 0; d < CONN; d++)
        P.step[d] = in.step[d];

    const size_t nodes = (size_t)n, tiles = (size_t)P.num_tiles;
    /* Room for tiles queued again within one relabel: GCUT_CUDAGRID_QUEUE_PER_TILE per tile
     * (default 16) plus 4096 (more makes the relabel fall back to passes, exact either way);
     * GCUT_CUDAGRID_QUEUE sets the room itself (tests force the fallback with 1). With 4 per
     * tile (the default before the sixth session) the first relabels of hard 1920x1080
     * 8-connected ran out of room and fell back to passes (docs/CUDA-GRID.md, "Queue room"). */
    const int per_tile = gcut__env_int("GCUT_CUDAGRID_QUEUE_PER_TILE", 16, 1, 64);
    const size_t queue_cap = (size_t)gcut__env_int(
        "GCUT_CUDAGRID_QUEUE",
        (int)(tiles < (1u << 24) ? (size_t)per_tile * tiles + 4096 : (size_t)1 << 30), 1, 1 << 30);
    size_t need = nodes * (4u * CONN + 4 + 8 + 4 + 4) + tiles * 4 * 5 + queue_cap * 8 +
                  kNumCounters * 8 + (8 + kRctlWords) * sizeof(int);
    if (in.grid == NULL && in.tables != NULL) {
        const gcut__seg_tables *t = in.tables;
        need += nodes * ((size_t)t->channels + (in.seeds ? 1 : 0)) + (size_t)t->num_colors * 8 +
                (size_t)t->num_classes * ((size_t)t->max_sqdiff + 1) * 4;
    }
    need += extra_bytes;
    size_t free_bytes = 0, total_bytes = 0;
    GCUT__CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (need > free_bytes)
        return gcut__fail(GCUT_ERR_NOMEM,
                          "cuda-grid: the %lld-node grid needs %zu bytes of device memory; device "
                          "%d has %zu free of %zu",
                          n, need, device, free_bytes, total_bytes);

    GCUT__CUDA_TRY(cudaStreamCreateWithFlags(&S.stream, cudaStreamNonBlocking), "stream");
    /* The pinned host words count against gcut's memory cap like every host allocation. */
    if (gcut__reserve(kPinnedBytes, "cuda-grid pinned list sizes and counters") != 0)
        return GCUT_ERR_NOMEM;
    S.pinned_reserved = true;
    GCUT__CUDA_TRY(cudaMallocHost(&S.host_count, (4 + kRctlWords) * sizeof(int)), "cudaMallocHost");
    GCUT__CUDA_TRY(cudaMallocHost(&S.host_counters, kNumCounters * sizeof(unsigned long long)),
                   "cudaMallocHost");
    gcut_status st;
    if ((st = device_alloc(S, &P.residual, nodes * CONN, "residuals")) != GCUT_OK ||
        (st = device_alloc(S, &P.sink_residual, nodes, "sink residuals")) != GCUT_OK ||
        (st = device_alloc(S, &P.excess, nodes, "excess")) != GCUT_OK ||
        (st = device_alloc(S, &P.dist, nodes, "heights")) != GCUT_OK ||
        (st = device_alloc(S, &P.arc_mask, nodes, "arc masks")) != GCUT_OK ||
        (st = device_alloc(S, &P.list[0], tiles, "tile lists")) != GCUT_OK ||
        (st = device_alloc(S, &P.list[1], tiles, "tile lists")) != GCUT_OK ||
        (st = device_alloc(S, &P.list[2], tiles, "tile lists")) != GCUT_OK ||
        (st = device_alloc(S, &P.mark, tiles, "tile marks")) != GCUT_OK ||
        (st = device_alloc(S, &P.count, 4, "list counters")) != GCUT_OK ||
        (st = device_alloc(S, &P.next, 4, "list cursors")) != GCUT_OK ||
        (st = device_alloc(S, &P.counters, kNumCounters, "counters")) != GCUT_OK ||
        (st = device_alloc(S, &P.rctl, kRctlWords, "relabel queue words")) != GCUT_OK ||
        (st = device_alloc(S, &P.qflag, tiles, "relabel queue flags")) != GCUT_OK ||
        (st = device_alloc(S, &P.queue, queue_cap, "relabel queue")) != GCUT_OK)
        return st;
    P.queue_cap = (int)queue_cap;
    /* Entries carry the epoch of their relabel, from 1 up: zeros match none. */
    GCUT__CUDA_TRY(cudaMemsetAsync(P.queue, 0, queue_cap * 8, S.stream), "memset");
    GCUT__CUDA_TRY(cudaMemsetAsync(P.rctl, 0, kRctlWords * sizeof(int), S.stream), "memset");
    S.epochs = 0;

    int sms = 1, sweep_per_sm = 1, relax_per_sm = 1;
    GCUT__CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                   "cudaDeviceGetAttribute");
    /* GCUT_CUDAGRID_LEAN_SWEEP: 1 (default 8-connected) the sweep without a copy of the loaded
     * residuals (cross-edge pushes lowered at once), at least LeanSweep::kMinBlocks blocks per
     * SM; 0 (default otherwise) the sweep before it (docs/CUDA-GRID.md, "Square 2D tiles":
     * 8-connected at 16x16 it needs 88 registers, 2 blocks per SM). */
    S.lean_sweep = gcut__env_int("GCUT_CUDAGRID_LEAN_SWEEP", CONN == 8 ? 1 : 0, 0, 1);
    /* GCUT_CUDAGRID_SWEEP_OCC: 1 the sweep built for LeanSweep::kMoreBlocks blocks per SM
     * (seventh session, docs/CUDA-GRID.md "Seventh pass"); 0 (default) as before. */
    S.sweep_occ = gcut__env_int("GCUT_CUDAGRID_SWEEP_OCC", 0, 0, 1);
    GCUT__CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                       &sweep_per_sm,
                       S.sweep_occ    ? (S.lean_sweep ? sweep_kernel<CONN, true, true>
                                                      : sweep_kernel<CONN, false, true>)
                       : S.lean_sweep ? sweep_kernel<CONN, true>
                                      : sweep_kernel<CONN, false>,
                       G::T, 0),
                   "occupancy");
    GCUT__CUDA_TRY(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&relax_per_sm, relax_kernel<CONN>, G::T, 0),
        "occupancy");
    S.node_blocks =
        (int)((nodes + 255) / 256 < (size_t)sms * 16 ? (nodes + 255) / 256 : (size_t)sms * 16);
    S.sweep_blocks = sweep_per_sm * sms < P.num_tiles ? sweep_per_sm * sms : P.num_tiles;
    S.relax_blocks = relax_per_sm * sms < P.num_tiles ? relax_per_sm * sms : P.num_tiles;
    /* GCUT_CUDAGRID_RELAX: 2 (default) the global relabel's relaxation and collection in one
     * launch over a device queue (relax_async_kernel), whose first pass takes only the tiles
     * that the last Jacobi step (or, with none, a finite height) marks; 1 the same with every
     * tile in the first pass;
     * 0 as passes, one launch each, with a host read of the list size every kRelaxBatch
     * passes (hard 1920x1080 on the H100: one launch 2.9 against 3.3-3.9 ms per solve,
     * docs/CUDA-GRID.md). */
    int async_per_sm = 1;
    GCUT__CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&async_per_sm,
                                                                 relax_async_kernel<CONN>, G::T, 0),
                   "occupancy");
    S.async_blocks = async_per_sm * sms < P.num_tiles ? async_per_sm * sms : P.num_tiles;
    S.relax_async = gcut__env_int("GCUT_CUDAGRID_RELAX", 2, 0, 2);
    /* GCUT_CUDAGRID_INIT_LEVELS: 2 (default) a global relabel starts with heights 1 and 2
     * set node by node (relabel_init_kernel); 1 with heights 1 only. */
    S.init_levels = gcut__env_int("GCUT_CUDAGRID_INIT_LEVELS", 2, 1, 2);
    /* GCUT_CUDAGRID_QPAR: 1 (default) a relaxed tile queues its neighbours from one thread per
     * neighbour; 0 from thread 0, one after the other. */
    S.parallel_queue = gcut__env_int("GCUT_CUDAGRID_QPAR", 1, 0, 1);
    /* GCUT_CUDAGRID_JACOBI: node-by-node relaxation steps over the whole grid before the tile
     * relaxation (jacobi_kernel; the last one seeds the first pass with RELAX=2), default 2
     * (hard 1920x1080 on the H100: 2.20 / 2.33 ms per solve against 2.87 / 2.57 with none and
     * 2.74 / 2.51 before this session's relabel changes, docs/CUDA-GRID.md); 0 none. */
    S.jacobi = gcut__env_int("GCUT_CUDAGRID_JACOBI", 2, 0, 64);
    S.sweeps_per_relabel = gcut__env_int(
        "GCUT_CUDAGRID_SWEEPS",
        G::NDIM == 2 ? kDefaultSweepsPerRelabel2D : kDefaultSweepsPerRelabel3D, 1, 1 << 20);
    S.rounds = gcut__env_int("GCUT_CUDAGRID_ROUNDS", kDefaultRounds, 1, 1 << 20);
    /* GCUT_CUDAGRID_TRIM: 1 the one-launch relabel's host memsets only where needed (the init
     * kernel clears the list words; a relabel that ended at its fixed point leaves every queue
     * flag and the pending and overflow words at 0); 0 (default) all four per relabel. */
    S.trim_memsets = gcut__env_int("GCUT_CUDAGRID_TRIM", 0, 0, 1);
    S.warm_sweeps = gcut__env_int("GCUT_CUDAGRID_WARM_SWEEPS", S.sweeps_per_relabel, 1, 1 << 20);
    /* GCUT_CUDAGRID_TAIL_SWEEPS / GCUT_CUDAGRID_TAIL_DIV (ninth session, docs/CUDA-GRID.md "The
     * tail of a solve; idle nodes raised in the sweep"): after a global relabel that left at most
     * 1/TAIL_DIV of the tiles active, TAIL_SWEEPS sweeps (when more than K) before the next relabel
     * of a cold solve; default 8 (H100, medians of three rounds: hard 1920x1080 4-connected 2.09
     * against 2.20 ms, 8-connected 3.70 against 3.80, 2048^2 3.79 against 3.83, 192^3 4.89
     * against 4.91); TAIL_SWEEPS 0: K always, as before. */
    S.tail_sweeps = gcut__env_int("GCUT_CUDAGRID_TAIL_SWEEPS", 8, 0, 1 << 20);
    S.tail_div = gcut__env_int("GCUT_CUDAGRID_TAIL_DIV", 32, 1, 1 << 20);
    /* The global relabel as a chain of launches with a list-size read per batch; as one
     * cooperative launch only on request (GCUT_CUDAGRID_COOP=1): on the H100 it was no faster
     * in 2D (hard 1920x1080: 3.19 vs 3.03 ms) and 8% faster on hard 256^3, and racecheck
     * cannot run it (docs/CUDA-GRID.md). */
    int coop_support = 0, coop_per_sm = 0;
    GCUT__CUDA_TRY(cudaDeviceGetAttribute(&coop_support, cudaDevAttrCooperativeLaunch, device),
                   "cudaDeviceGetAttribute");
    GCUT__CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                       &coop_per_sm, relabel_coop_kernel<CONN>, G::T, 0),
                   "occupancy");
    S.coop = coop_support && coop_per_sm > 0 && gcut__env_int("GCUT_CUDAGRID_COOP", 0, 0, 1);
    S.coop_blocks = coop_per_sm * sms < P.num_tiles ? coop_per_sm * sms : P.num_tiles;

    S.device = device;
    return GCUT_OK;
}

/* The sparse phase of a warm re-solve after terminal marks (grid_sparse.cuh, docs/CUDA-GRID.md
 * "A sparse phase for warm re-solves", seventh session): iterate() runs start() instead of its
 * warm start's sweeps; if start's certificate holds (*proven) the solve ends there, with no
 * global relabel; else the global relabel follows, and when it leaves active tiles, settle()
 * (off by default: slower, measured) instead of sweeps and a second relabel. Only a global
 * relabel with no active tile, or a certificate that holds, ends a solve. */
struct SparseHook {
    /* Rounds from the count listed nodes (device) on the kept heights, then (when on) the stop
     * certificate, read by the host: *proven when it holds. */
    virtual gcut_status start(const unsigned *nodes, long long count, bool *proven) = 0;
    /* Rounds from the nodes of the `tiles` active tiles on tile list `list`, then the stop
     * certificate; *ran when it ran (the tile list is stale then), *proven when it holds. */
    virtual gcut_status settle(int list, int tiles, bool *proven, bool *ran) = 0;

  protected:
    ~SparseHook() = default;
};

/* The certified warm stop after terminal marks (grid_pull.cuh; ninth session). */
struct CertHook {
    /* Queued after the warm start's collection: pulls from the count listed nodes (device). */
    virtual gcut_status start(const unsigned *nodes, long long count) = 0;
    /* After the first sweep batch (its active tiles on tile list `list`): stuck excess closed and
     * the certificate checked, with a wait; *proven when it holds. Also brings the repair's
     * counters when S.repair_check is set. */
    virtual gcut_status check(int list, bool *proven) = 0;
    /* Sweep batches, each with a check, before a global relabel. */
    virtual int checks() const = 0;
    /* Sweep batches, each with a check, after a global relabel that left active tiles (the
     * certificate proves a stop whatever the heights are, and is cheaper than the relabel). */
    virtual int checks_after() const = 0;

  protected:
    ~CertHook() = default;
};

template <int CONN>
gcut_status iterate(Session &S, int verbose, int64_t *flow, uint8_t *labels, bool labels_on_device,
                    gcut_stats *stats, double t_solve, bool keep_heights = false,
                    const unsigned *warm_nodes = nullptr, long long warm_count = 0,
                    SparseHook *sparse = nullptr, CertHook *cert = nullptr);

/* One cold solve of a grid or an image energy. */
template <int CONN>
gcut_status solve(Session &S, ImageBuffers &B, const Input &in, int device, int verbose,
                  int64_t *flow, uint8_t *labels, gcut_stats *stats, double t_start) {
    Problem &P = S.P;
    gcut_status st = GCUT_OK;
    /* A pooled session arrives set up for this shape (its stream exists). */
    if (S.stream == nullptr && (st = setup<CONN>(S, in, device, 0)) != GCUT_OK)
        return st;
    const size_t nodes = (size_t)P.n;
    cudaStream_t stream = S.stream;
    if (in.grid != NULL) {
        const gcut_grid *grid = in.grid;
        for (int d = 0; d < CONN; d++)
            GCUT__CUDA_TRY(cudaMemcpyAsync(P.residual + (size_t)d * nodes, grid->cap[d], nodes * 4,
                                           cudaMemcpyHostToDevice, stream),
                           "upload capacities");
        GCUT__CUDA_TRY(cudaMemcpyAsync(P.dist, grid->terminal[GCUT_SOURCE], nodes * 4,
                                       cudaMemcpyHostToDevice, stream),
                       "upload source capacities");
        GCUT__CUDA_TRY(cudaMemcpyAsync(P.sink_residual, grid->terminal[GCUT_SINK], nodes * 4,
                                       cudaMemcpyHostToDevice, stream),
                       "upload sink capacities");
    } else if ((st = build_on_device<CONN>(S, in, B)) != GCUT_OK) {
        return st;
    }
    GCUT__CUDA_TRY(cudaMemsetAsync(P.counters, 0, kNumCounters * 8, stream), "memset");
    init_kernel<CONN><<<S.node_blocks, 256, 0, stream>>>(P);
    GCUT__CUDA_TRY(cudaGetLastError(), "init kernel launch");
    GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "init");
    const double t_solve = gcut__now_ms();
    stats->build_ms = t_solve - t_start;
    if (in.grid == NULL && labels != NULL && gcut__staging_on()) {
        /* An image solve: the labels left on the device (P.arc_mask), then staged down. */
        if ((st = iterate<CONN>(S, verbose, flow, nullptr, false, stats, t_solve)) != GCUT_OK ||
            (st = labels_download_staged(S, B, labels)) != GCUT_OK)
            return st;
        stats->solve_ms = gcut__now_ms() - t_solve;
        return GCUT_OK;
    }
    return iterate<CONN>(S, verbose, flow, labels, false, stats, t_solve);
}

/* From a loaded (or warm-repaired) state: global relabels and sweeps to the exact stop, then
 * labels (to the host, or to a device buffer) and the flow. Marks and per-solve counters are
 * reset here, so a context can run it again and again. */
/* The words every solve starts from, iterate() and the contexts' incremental warm start alike:
 * tile marks, the per-solve counters, and the queue words and visits from 0; the epoch goes
 * on, unless two billion relabels ran since the queue was cleared (then clear it, so that no
 * old tag can match). */
gcut_status reset_solve_words(Session &S) {
    Problem &P = S.P;
    cudaStream_t stream = S.stream;
    GCUT__CUDA_TRY(cudaMemsetAsync(P.mark, 0, (size_t)P.num_tiles * 4, stream), "memset");
    GCUT__CUDA_TRY(cudaMemsetAsync(P.counters + kSumSinkResidual, 0, 3 * 8, stream), "memset");
    GCUT__CUDA_TRY(cudaMemsetAsync(P.counters + kRelaxCycles, 0, 3 * 8, stream), "memset");
    if (S.epochs > (1ll << 31)) {
        GCUT__CUDA_TRY(cudaMemsetAsync(P.queue, 0, (size_t)P.queue_cap * 8, stream), "memset");
        GCUT__CUDA_TRY(cudaMemsetAsync(P.rctl + kEpoch, 0, sizeof(int), stream), "memset");
        S.epochs = 0;
    }
    GCUT__CUDA_TRY(cudaMemsetAsync(P.rctl, 0, kEpoch * sizeof(int), stream), "memset");
    return GCUT_OK;
}

template <int CONN>
gcut_status iterate(Session &S, int verbose, int64_t *flow, uint8_t *labels, bool labels_on_device,
                    gcut_stats *stats, double t_solve, bool keep_heights,
                    const unsigned *warm_nodes, long long warm_count, SparseHook *sparse,
                    CertHook *cert) {
    using G = Geo<CONN>;
    Problem &P = S.P;
    cudaStream_t stream = S.stream;
    const size_t nodes = (size_t)P.n, tiles = (size_t)P.num_tiles;
    const int node_blocks = S.node_blocks, sweep_blocks = S.sweep_blocks,
              relax_blocks = S.relax_blocks, coop = S.coop && P.live == nullptr,
              coop_blocks = S.coop_blocks, sweeps_per_relabel = S.sweeps_per_relabel,
              rounds = S.rounds;
    const bool prepped = S.words_prepped;
    S.words_prepped = false;
    gcut_status st = prepped ? GCUT_OK : reset_solve_words(S);
    if (st != GCUT_OK)
        return st;
    unsigned stamp = 0;
    int q = 0; /* rotation index of the next launch */
    int64_t sweeps = 0, relabels = 0, relax_passes = 0, relax_visits = 0, queue_overflows = 0;
    auto read_count = [&](int list, int *out) -> gcut_status {
        GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_count, P.count + list, sizeof(int),
                                       cudaMemcpyDeviceToHost, stream),
                       "read list size");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "solve");
        *out = *S.host_count;
        return GCUT_OK;
    };
    /* --verbose: of the one-launch relabels (steps_ms: the node steps, part of init_ms) */
    float init_ms = 0, relax_kernel_ms = 0, steps_ms = 0;
    /* Exact heights, then the active tiles; 0 active tiles means the preflow is maximum. */
    /* GCUT_CUDAGRID_TRIM: the queue flags and words are cleared by memsets before the first
     * one-launch relabel of a solve and after one that ran out of room; any other relabel
     * starts from the state the last one ended in (every flag 0: each queued or first-pass tile
     * clears its flag when a block takes it, and kPending reached 0 only after every one was
     * taken; kPending and kQOverflow 0), and relabel_init_kernel clears the list words. */
    bool queue_words_clean = prepped;
    auto global_relabel = [&](int *active_tiles) -> gcut_status {
        relabels++;
        /* A context's warm host path: the repair's counters come back with this relabel's read. */
        if (S.repair_check)
            GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_counters + kChanged, P.counters + kChanged,
                                           3 * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                           stream),
                           "read repair counters");
        const bool trim = S.trim_memsets && S.relax_async && !coop;
        if (!trim) {
            GCUT__CUDA_TRY(cudaMemsetAsync(P.count, 0, 4 * sizeof(int), stream), "memset");
            GCUT__CUDA_TRY(cudaMemsetAsync(P.next, 0, 4 * sizeof(int), stream), "memset");
        }
        if (coop) {
            unsigned stamp0 = stamp + 1;
            void *args[] = {&P, &q, &stamp0};
            GCUT__CUDA_TRY(cudaLaunchCooperativeKernel((const void *)relabel_coop_kernel<CONN>,
                                                       coop_blocks, G::T, args, 0, stream),
                           "cooperative relabel launch");
            GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_count, P.count, 4 * sizeof(int),
                                           cudaMemcpyDeviceToHost, stream),
                           "read list sizes");
            GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "global relabel");
            const int passes = S.host_count[kAllTiles];
            q += passes;
            stamp += (unsigned)passes + 1;
            relax_passes += passes;
            *active_tiles = S.host_count[q % 3];
            return GCUT_OK;
        }
        if (S.relax_async) {
            S.epochs++;
            if (verbose)
                GCUT__CUDA_TRY(cudaEventRecord(S.events[5], stream), "cudaEventRecord");
            if (S.relax_async == 2 && !(trim && queue_words_clean)) {
                GCUT__CUDA_TRY(cudaMemsetAsync(P.qflag, 0, tiles * sizeof(int), stream), "memset");
                GCUT__CUDA_TRY(cudaMemsetAsync(P.rctl, 0, (kQOverflow + 1) * sizeof(int), stream),
                               "memset");
            }
            queue_words_clean = false;
            relabel_init_kernel<CONN>
                <<<node_blocks, 256, 0, stream>>>(P, S.relax_async, S.init_levels, S.jacobi == 0);
            if (verbose)
                GCUT__CUDA_TRY(cudaEventRecord(S.events[8], stream), "cudaEventRecord");
            for (int k = 0; k < S.jacobi; k++)
                jacobi_kernel<CONN>
                    <<<node_blocks, 256, 0, stream>>>(P, S.relax_async == 2 && k == S.jacobi - 1);
            if (verbose)
                GCUT__CUDA_TRY(cudaEventRecord(S.events[6], stream), "cudaEventRecord");
            relax_async_kernel<CONN>
                <<<S.async_blocks, G::T, 0, stream>>>(P, q % 3, ++stamp, S.parallel_queue);
            GCUT__CUDA_TRY(cudaGetLastError(), "relax kernel launch");
            if (verbose)
                GCUT__CUDA_TRY(cudaEventRecord(S.events[7], stream), "cudaEventRecord");
            GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_count, P.count, 4 * sizeof(int),
                                           cudaMemcpyDeviceToHost, stream),
                           "read list sizes");
            GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_count + 4, P.rctl, kRctlWords * sizeof(int),
                                           cudaMemcpyDeviceToHost, stream),
                           "read list sizes");
            GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "global relabel");
            trace_mark(S, "relabel read");
            if (verbose) {
                float a = 0, b = 0, c = 0;
                GCUT__CUDA_TRY(cudaEventElapsedTime(&a, S.events[5], S.events[6]), "event time");
                GCUT__CUDA_TRY(cudaEventElapsedTime(&b, S.events[6], S.events[7]), "event time");
                GCUT__CUDA_TRY(cudaEventElapsedTime(&c, S.events[8], S.events[6]), "event time");
                init_ms += a;
                steps_ms += c;
                relax_kernel_ms += b;
            }
            relax_visits = S.host_count[4 + kRelaxVisits]; /* since the solve began */
            if (S.host_count[4 + kQOverflow] == 0) {
                queue_words_clean = true;
                *active_tiles = S.host_count[q % 3];
                return GCUT_OK;
            }
            /* The queue ran out of room: relabel again with passes (exact from any state). */
            queue_overflows++;
            GCUT__CUDA_TRY(cudaMemsetAsync(P.count, 0, 4 * sizeof(int), stream), "memset");
            GCUT__CUDA_TRY(cudaMemsetAsync(P.next, 0, 4 * sizeof(int), stream), "memset");
        }
        relabel_init_kernel<CONN><<<node_blocks, 256, 0, stream>>>(P, 0, S.init_levels, 0);
        for (int k = 0; k < S.jacobi; k++)
            jacobi_kernel<CONN><<<node_blocks, 256, 0, stream>>>(P, 0);
        relax_kernel<CONN>
            <<<relax_blocks, G::T, 0, stream>>>(P, kAllTiles, (q + 1) % 3, (q + 2) % 3, ++stamp);
        q++;
        relax_passes++;
        GCUT__CUDA_TRY(cudaGetLastError(), "relax kernel launch");
        for (;;) {
            for (int b = 0; b < kRelaxBatch; b++, q++, relax_passes++)
                relax_kernel<CONN><<<relax_blocks, G::T, 0, stream>>>(P, q % 3, (q + 1) % 3,
                                                                      (q + 2) % 3, ++stamp);
            GCUT__CUDA_TRY(cudaGetLastError(), "relax kernel launch");
            int pending = 0;
            gcut_status s2 = read_count(q % 3, &pending);
            if (s2 != GCUT_OK)
                return s2;
            if (pending == 0)
                break;
        }
        GCUT__CUDA_TRY(cudaMemsetAsync(P.count, 0, 4 * sizeof(int), stream), "memset");
        GCUT__CUDA_TRY(cudaMemsetAsync(P.next, 0, 4 * sizeof(int), stream), "memset");
        collect_kernel<CONN><<<first_count(P), G::T, 0, stream>>>(P, q % 3, ++stamp);
        GCUT__CUDA_TRY(cudaGetLastError(), "collect kernel launch");
        return read_count(q % 3, active_tiles);
    };

    /* With verbose, device time of sweeps and of global relabels (host waits included). */
    float sweep_ms = 0, relabel_ms = 0, start_ms = 0, finish_ms = 0;
    auto lap = [&](int from, int to, float *total) -> gcut_status {
        GCUT__CUDA_TRY(cudaEventRecord(S.events[to], stream), "cudaEventRecord");
        GCUT__CUDA_TRY(cudaEventSynchronize(S.events[to]), "cudaEventSynchronize");
        float ms = 0;
        GCUT__CUDA_TRY(cudaEventElapsedTime(&ms, S.events[from], S.events[to]), "event time");
        *total += ms;
        return GCUT_OK;
    };
    if (verbose) {
        for (int k = 0; k < 9; k++)
            if (S.events[k] == nullptr)
                GCUT__CUDA_TRY(cudaEventCreate(&S.events[k]), "cudaEventCreate");
        GCUT__CUDA_TRY(cudaEventRecord(S.events[0], stream), "cudaEventRecord");
    }
    /* The repair ran unread before the sweeps (which found no tile when it was refused:
     * collect_listed_kernel); its counters came back with the first read after them (a relabel's
     * or the certificate's). Refused, the caller decides what follows. */
    auto repair_refused = [&S]() {
        if (!S.repair_check)
            return false;
        S.repair_check = false;
        S.repair_refused = S.host_counters[kBadIndex] != ~0ull || S.host_counters[kOverflow] != 0;
        return S.repair_refused;
    };
    int active_tiles = 0;
    int cert_checks = 0; /* batches left that end with the certified stop's check */
    if (keep_heights && sparse != nullptr && warm_nodes != nullptr) {
        /* Warm start after terminal marks with the sparse phase (seventh session): its rounds
         * from the listed nodes instead of the first sweeps, then the global relabel; if that
         * leaves active tiles, rounds from their nodes and the certificate instead of sweeps
         * and a second relabel. A certificate that fails costs a global relabel, after which
         * the loop below goes on exactly as before. */
        bool proven = false, ran = false;
        if ((st = sparse->start(warm_nodes, warm_count, &proven)) != GCUT_OK ||
            (verbose && (st = lap(0, 1, &start_ms)) != GCUT_OK))
            return st;
        if (!proven && ((st = global_relabel(&active_tiles)) != GCUT_OK ||
                        (verbose && (st = lap(1, 2, &relabel_ms)) != GCUT_OK)))
            return st;
        if (!proven && active_tiles != 0 &&
            (st = sparse->settle(q % 3, active_tiles, &proven, &ran)) != GCUT_OK)
            return st;
        if (proven)
            active_tiles = 0;
        else if (ran && active_tiles != 0 && (st = global_relabel(&active_tiles)) != GCUT_OK)
            return st;
    } else if (keep_heights) {
        /* Warm start: sweep first on the previous solve's heights (exact distances before the
         * changes; stale ones cost work, never exactness: pushes keep the preflow, and only a
         * global relabel can stop the solve), on the tiles with an active node. The sweeps read
         * the list's size on the device, so the host does not wait for it (-1: not known; an
         * empty list makes the sweeps return at once, and the relabel after them decides). */
        if (!prepped) {
            GCUT__CUDA_TRY(cudaMemsetAsync(P.count, 0, 4 * sizeof(int), stream), "memset");
            GCUT__CUDA_TRY(cudaMemsetAsync(P.next, 0, 4 * sizeof(int), stream), "memset");
        }
        /* warm_nodes: the only nodes that can be active (terminal marks). */
        if (warm_nodes != nullptr) {
            if (warm_count > 0)
                collect_listed_kernel<CONN>
                    <<<(int)((warm_count + 255) / 256 < S.node_blocks ? (warm_count + 255) / 256
                                                                      : S.node_blocks),
                       256, 0, stream>>>(P, q % 3, ++stamp, warm_nodes, warm_count);
            else
                ++stamp;
        } else {
            collect_kernel<CONN><<<first_count(P), G::T, 0, stream>>>(P, q % 3, ++stamp);
        }
        GCUT__CUDA_TRY(cudaGetLastError(), "collect kernel launch");
        active_tiles = -1;
        /* The certified warm stop (grid_pull.cuh): pulls before the first sweeps. */
        if (cert != nullptr && (warm_nodes == nullptr || warm_count <= 0))
            cert = nullptr;
        trace_mark(S, "warm start listed");
        if (cert != nullptr && (st = cert->start(warm_nodes, warm_count)) != GCUT_OK)
            return st;
        trace_mark(S, "pull queued");
        cert_checks = cert != nullptr ? cert->checks() : 0;
        if (verbose && (st = lap(0, 1, &start_ms)) != GCUT_OK)
            return st;
    } else if ((st = global_relabel(&active_tiles)) != GCUT_OK ||
               (verbose && (st = lap(0, 1, &relabel_ms)) != GCUT_OK)) {
        return st;
    }
    if (verbose && !keep_heights)
        fprintf(stderr,
                "cuda-grid: first relabel %.3f ms, %d active tiles, %lld tile relaxations\n",
                relabel_ms, active_tiles, (long long)relax_visits);
    /* The first batch of a warm start may be longer (GCUT_CUDAGRID_WARM_SWEEPS). */
    int batch = keep_heights ? S.warm_sweeps : sweeps_per_relabel;
    float cycle_sweep_ms = sweep_ms, cycle_relabel_ms = relabel_ms;
    int64_t cycle_visits = relax_visits;
    while (active_tiles != 0) {
        if (verbose)
            GCUT__CUDA_TRY(cudaEventRecord(S.events[0], stream), "cudaEventRecord");
        int this_batch = batch;
        batch = sweeps_per_relabel;
        /* The tail: few active tiles left (their excess often needs more tile crossings than K
         * sweeps allow, a cycle per K crossings), so more sweeps, each of a short list, before
         * the next relabel, which costs as much as the first ones. Only the number of sweeps
         * changes; the stop is still a relabel's empty collection. Cold solves only (a warm
         * start, keep_heights, keeps its batches: GCUT_CUDAGRID_WARM_SWEEPS). */
        if (S.tail_sweeps > this_batch && !keep_heights && active_tiles > 0 &&
            (long long)active_tiles * S.tail_div <= (long long)first_count(P))
            this_batch = S.tail_sweeps;
        for (int k = 0; k < this_batch; k++, q++, sweeps++) {
            const int a = q % 3, b = (q + 1) % 3, c = (q + 2) % 3;
            ++stamp;
            if (S.sweep_occ && S.lean_sweep)
                sweep_kernel<CONN, true, true>
                    <<<sweep_blocks, G::T, 0, stream>>>(P, a, b, c, stamp, rounds);
            else if (S.sweep_occ)
                sweep_kernel<CONN, false, true>
                    <<<sweep_blocks, G::T, 0, stream>>>(P, a, b, c, stamp, rounds);
            else if (S.lean_sweep)
                sweep_kernel<CONN, true>
                    <<<sweep_blocks, G::T, 0, stream>>>(P, a, b, c, stamp, rounds);
            else
                sweep_kernel<CONN><<<sweep_blocks, G::T, 0, stream>>>(P, a, b, c, stamp, rounds);
        }
        GCUT__CUDA_TRY(cudaGetLastError(), "sweep kernel launch");
        trace_mark(S, "sweeps queued");
        if (verbose && (st = lap(0, 1, &sweep_ms)) != GCUT_OK)
            return st;
        if (cert_checks > 0) {
            /* After the first batches: the certificate instead of the global relabel; when the
             * last one fails, the relabel follows and the loop goes on as before. */
            bool proven = false;
            if ((st = cert->check(q % 3, &proven)) != GCUT_OK)
                return st;
            if (repair_refused())
                return GCUT_OK;
            if (proven) {
                active_tiles = 0;
                break;
            }
            if (--cert_checks > 0)
                continue;
        }
        if ((st = global_relabel(&active_tiles)) != GCUT_OK ||
            (verbose && (st = lap(1, 2, &relabel_ms)) != GCUT_OK))
            return st;
        /* The certified stop's path: the batches after this relabel end with checks too. */
        if (cert != nullptr && active_tiles != 0)
            cert_checks = cert->checks_after();
        if (repair_refused())
            return GCUT_OK;
        if (verbose) {
            /* This cycle's share: its sweeps' and relabel's device ms, tile relaxations. */
            fprintf(stderr,
                    "cuda-grid: %lld sweeps, %lld global relabels, %d active tiles; cycle: "
                    "sweeps %.3f ms, relabel %.3f ms, %lld tile relaxations\n",
                    (long long)sweeps, (long long)relabels, active_tiles, sweep_ms - cycle_sweep_ms,
                    relabel_ms - cycle_relabel_ms, (long long)(relax_visits - cycle_visits));
            cycle_sweep_ms = sweep_ms;
            cycle_relabel_ms = relabel_ms;
            cycle_visits = relax_visits;
        }
    }

    if (verbose)
        GCUT__CUDA_TRY(cudaEventRecord(S.events[0], stream), "cudaEventRecord");
    unsigned char *labels_dev =
        labels_on_device && labels != NULL ? labels : reinterpret_cast<unsigned char *>(P.arc_mask);
    finish_kernel<CONN><<<node_blocks, 256, 0, stream>>>(P, labels_dev);
    GCUT__CUDA_TRY(cudaGetLastError(), "finish kernel launch");
    GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_counters, P.counters,
                                   kNumCounters * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost, stream),
                   "read counters");
    if (labels != NULL && !labels_on_device)
        GCUT__CUDA_TRY(cudaMemcpyAsync(labels, labels_dev, nodes, cudaMemcpyDeviceToHost, stream),
                       "download labels");
    if (S.labels_also != nullptr)
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(S.labels_also, labels_dev, nodes, cudaMemcpyDeviceToHost, stream),
            "download labels");
    if (S.label_hook != nullptr && (st = S.label_hook->after_finish(labels_dev)) != GCUT_OK)
        return st;
    if (verbose && (st = lap(0, 1, &finish_ms)) != GCUT_OK)
        return st;
    trace_mark(S, "finish queued");
    if (S.label_hook != nullptr)
        S.label_hook->host_work();
    GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "solve");
    trace_mark(S, "finish read");

    const unsigned long long *c = S.host_counters;
    *flow = (int64_t)(c[kSumSink] - c[kSumSinkResidual]);
    stats->solve_ms = gcut__now_ms() - t_solve;
    stats->sweeps = sweeps;
    stats->global_relabels = relabels;
    stats->pushes = (int64_t)c[kPushes];
    stats->device_bytes = (int64_t)S.device_bytes;
    /* Per node visit: excess, sink residual, height and every arc residual read and (at most)
     * written once, plus the halo heights. An upper bound: unchanged values are not written. */
    const double node_visit_bytes = 2.0 * (8 + 4 + 4 + 4.0 * CONN) + 4.0 * (G::BOX - G::T) / G::T;
    stats->bytes_per_sweep =
        sweeps > 0 ? (double)c[kVisits] * G::T * node_visit_bytes / (double)sweeps : 0.0;
    if (verbose)
        fprintf(stderr,
                "cuda-grid: flow %lld, %lld sweeps, %lld global relabels (%lld relax passes, "
                "%lld one-launch tile relaxations, %lld queue overflows), %llu tile visits, %.0f "
                "bytes/sweep; device ms: sweeps %.3f, global relabels %.3f, warm start's "
                "collection %.3f, labels and download %.3f\n",
                (long long)*flow, (long long)sweeps, (long long)relabels, (long long)relax_passes,
                (long long)relax_visits, (long long)queue_overflows, c[kVisits],
                stats->bytes_per_sweep, sweep_ms, relabel_ms, start_ms, finish_ms);
    if (verbose && relax_visits > 0) {
        const double rc = (double)c[kRelaxCycles], tc = (double)c[kTakeCycles],
                     fc = (double)c[kFinishCycles], all = rc + tc + fc > 0 ? rc + tc + fc : 1;
        fprintf(stderr,
                "cuda-grid: one-launch relabel, block time (thread 0's clock): relaxing %.0f%%, "
                "taking and waiting for tiles %.0f%%, waiting for the end and collecting %.0f%%; "
                "%.1f kcycles per tile relaxation, %d blocks; device ms: init kernels %.3f (of "
                "them node steps %.3f), relax kernels %.3f (of the global relabels' %.3f)\n",
                100 * rc / all, 100 * tc / all, 100 * fc / all, rc / 1e3 / (double)relax_visits,
                S.async_blocks, init_ms, steps_ms, relax_kernel_ms, relabel_ms);
    }
    return GCUT_OK;
}

/* The image and the seeds of an image solve through the pinned ring (staging.h): the image as it
 * is, the seeds as 2-bit codes unpacked on the device. */
gcut_status image_upload_staged(Session &S, const Input &in, ImageBuffers &B, size_t nodes,
                                int ch) {
    gcut_status st;
    if (in.seeds && B.packed == nullptr &&
        (st = device_alloc(S, &B.packed, (nodes + 3) / 4 + 16, "packed seeds and labels")) !=
            GCUT_OK)
        return st;
    if ((st = gcut__stage_upload(B.pixels, in.pixels, nodes * ch, GCUT__STAGE_COPY, S.device,
                                 S.stream, "cuda-grid: image upload")) != GCUT_OK)
        return st;
    if (in.seeds &&
        ((st = gcut__stage_upload(B.packed, in.seeds, nodes, GCUT__STAGE_SEEDS, S.device, S.stream,
                                  "cuda-grid: seeds upload")) != GCUT_OK ||
         (st = gcut__stage_unpack_seeds_device(B.seeds, B.packed, nodes, S.stream,
                                               "cuda-grid: seeds upload")) != GCUT_OK))
        return st;
    return GCUT_OK;
}

/* The labels of an image solve (on the device in P.arc_mask) to the host through the pinned
 * ring, as bits packed on the device and unpacked by the ring's threads (staging.h). */
gcut_status labels_download_staged(Session &S, ImageBuffers &B, uint8_t *labels) {
    const size_t nodes = (size_t)S.P.n;
    gcut_status st;
    if (B.packed == nullptr && (st = device_alloc(S, &B.packed, (nodes + 3) / 4 + 16,
                                                  "packed seeds and labels")) != GCUT_OK)
        return st;
    if ((st = gcut__stage_pack_bits_device(B.packed,
                                           reinterpret_cast<const uint8_t *>(S.P.arc_mask), nodes,
                                           S.stream, "cuda-grid: labels download")) != GCUT_OK)
        return st;
    return gcut__stage_download(labels, B.packed, nodes, GCUT__STAGE_BITS, S.device, S.stream,
                                "cuda-grid: labels download");
}

template <int CONN> gcut_status build_on_device(Session &S, const Input &in, ImageBuffers &B) {
    Problem &P = S.P;
    const gcut__seg_tables *t = in.tables;
    const size_t nodes = (size_t)P.n, colors = (size_t)t->num_colors;
    const size_t table_len = (size_t)t->max_sqdiff + 1;
    const int ch = t->channels;
    gcut_status st;
    if (B.pixels == nullptr &&
        ((st = device_alloc(S, &B.pixels, nodes * ch, "image")) != GCUT_OK ||
         (in.seeds && (st = device_alloc(S, &B.seeds, nodes, "seeds")) != GCUT_OK) ||
         (st = device_alloc(S, &B.unary, colors * 2 + table_len * t->num_classes, "tables")) !=
             GCUT_OK))
        return st;
    /* the tables in one array, in gcut__seg_tables_block's layout: unary, then pairwise rows */
    B.pairwise = B.unary + colors * 2;
    unsigned char *pixels = B.pixels, *seeds = in.seeds ? B.seeds : nullptr;
    int *unary = B.unary, *pairwise = B.pairwise;
    cudaStream_t stream = S.stream;
    if (gcut__staging_on()) {
        /* Through the pinned ring (staging.h), the seeds as 2-bit codes unpacked here. */
        if ((st = image_upload_staged(S, in, B, nodes, ch)) != GCUT_OK)
            return st;
    } else {
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(pixels, in.pixels, nodes * ch, cudaMemcpyHostToDevice, stream),
            "upload image");
        if (in.seeds)
            GCUT__CUDA_TRY(cudaMemcpyAsync(seeds, in.seeds, nodes, cudaMemcpyHostToDevice, stream),
                           "upload seeds");
    }
    /* the tables (through the ring when staged: a colour image's are 3.6 MB) */
    const bool staged = gcut__staging_on() != 0;
    auto table_up = [&](int *dst, const int32_t *src, size_t count) -> gcut_status {
        if (staged)
            return gcut__stage_upload(dst, reinterpret_cast<const uint8_t *>(src), count * 4,
                                      GCUT__STAGE_COPY, S.device, stream,
                                      "cuda-grid: tables upload");
        GCUT__CUDA_TRY(cudaMemcpyAsync(dst, src, count * 4, cudaMemcpyHostToDevice, stream),
                       "upload tables");
        return GCUT_OK;
    };
    /* One copy of the tables' block, or one per table (GCUT_SEG_TABLES_LEGACY=1, as before). */
    size_t block_count = 0;
    const int32_t *block = gcut__seg_tables_block(t, &block_count);
    const bool one_copy = !gcut__seg_tables_legacy() &&
                          block_count == colors * 2 + table_len * (size_t)t->num_classes;
    if (one_copy && (st = table_up(unary, block, block_count)) != GCUT_OK)
        return st;
    if (!one_copy && ((st = table_up(unary, t->unary_source, colors)) != GCUT_OK ||
                      (st = table_up(unary + colors, t->unary_sink, colors)) != GCUT_OK))
        return st;
    SegTables T{};
    T.pixels = pixels;
    T.seeds = seeds;
    T.unary_source = unary;
    T.unary_sink = unary + colors;
    T.hard = t->hard;
    for (int k = 0; k < t->num_classes; k++) {
        if (!one_copy &&
            (st = table_up(pairwise + k * table_len, t->pairwise[k], table_len)) != GCUT_OK)
            return st;
        T.pairwise[k] = pairwise + k * table_len;
    }
    int dev = 0, sms = 1;
    GCUT__CUDA_TRY(cudaGetDevice(&dev), "cudaGetDevice");
    GCUT__CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                   "cudaDeviceGetAttribute");
    const int blocks =
        (int)((nodes + 255) / 256 < (size_t)sms * 16 ? (nodes + 255) / 256 : (size_t)sms * 16);
    for (int k = 3; k < 5; k++)
        if (S.events[k] == nullptr)
            GCUT__CUDA_TRY(cudaEventCreate(&S.events[k]), "cudaEventCreate");
    GCUT__CUDA_TRY(cudaEventRecord(S.events[3], stream), "cudaEventRecord");
    if (ch == 1)
        build_kernel<CONN, 1><<<blocks, 256, 0, stream>>>(P, T);
    else
        build_kernel<CONN, 3><<<blocks, 256, 0, stream>>>(P, T);
    GCUT__CUDA_TRY(cudaGetLastError(), "build kernel launch");
    GCUT__CUDA_TRY(cudaEventRecord(S.events[4], stream), "cudaEventRecord");
    GCUT__CUDA_TRY(cudaEventSynchronize(S.events[4]), "build");
    if (in.construct_ms) {
        float ms = 0;
        GCUT__CUDA_TRY(cudaEventElapsedTime(&ms, S.events[3], S.events[4]), "event time");
        *in.construct_ms = ms;
    }
    if (in.capture) {
        gcut_grid *c = in.capture;
        for (int d = 0; d < CONN; d++)
            GCUT__CUDA_TRY(cudaMemcpyAsync(c->cap[d], P.residual + (size_t)d * nodes, nodes * 4,
                                           cudaMemcpyDeviceToHost, stream),
                           "download capacities");
        GCUT__CUDA_TRY(cudaMemcpyAsync(c->terminal[GCUT_SOURCE], P.dist, nodes * 4,
                                       cudaMemcpyDeviceToHost, stream),
                       "download capacities");
        GCUT__CUDA_TRY(cudaMemcpyAsync(c->terminal[GCUT_SINK], P.sink_residual, nodes * 4,
                                       cudaMemcpyDeviceToHost, stream),
                       "download capacities");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "download capacities");
    }
    return GCUT_OK;
}

gcut_status solve_conn(Session &S, ImageBuffers &B, const Input &in, int conn, int device,
                       int verbose, int64_t *flow, uint8_t *labels, gcut_stats *stats,
                       double t_start) {
    return by_conn(conn, [&](auto c) {
        return solve<decltype(c)::value>(S, B, in, device, verbose, flow, labels, stats, t_start);
    });
}

/* Sessions of image solves kept between calls: GrabCut's rounds, `gcut segment --batch` and a
 * program segmenting many pictures of one size skip the allocation of device arrays, stream
 * and pinned words (and the occupancy queries) after the first solve of a shape. Everything a
 * solve reads is written again by the next one (uploads, construction, init, the marks and
 * counters reset in iterate), so a pooled session solves exactly as a new one. At most
 * kPoolMax idle sessions are kept (the least recently used one goes first);
 * gcut_device_release_cache() frees them; GCUT_CUDAGRID_POOL=0 turns the pool off. */
struct PoolKey {
    int device, conn, width, height, depth, channels, seeds, classes;
    long long colors, table_len;
    bool operator==(const PoolKey &o) const {
        return device == o.device && conn == o.conn && width == o.width && height == o.height &&
               depth == o.depth && channels == o.channels && seeds == o.seeds &&
               classes == o.classes && colors == o.colors && table_len == o.table_len;
    }
};

struct PooledSession {
    Session S;
    ImageBuffers B;
    PoolKey key{};
    PooledSession *next = nullptr;
};

constexpr int kPoolMax = 16;
std::mutex pool_mutex;
PooledSession *pool_head = nullptr; /* most recently given back first */

bool pool_enabled() {
    return gcut__env_int("GCUT_CUDAGRID_POOL", 1, 0, 1) != 0;
}

PoolKey pool_key(const Input &in, int conn, int device) {
    const gcut__seg_tables *t = in.tables;
    return PoolKey{device,
                   conn,
                   in.width,
                   in.height,
                   in.depth,
                   t->channels,
                   in.seeds != nullptr,
                   t->num_classes,
                   (long long)t->num_colors,
                   (long long)t->max_sqdiff + 1};
}

PooledSession *pool_take(const PoolKey &key) {
    std::lock_guard<std::mutex> lock(pool_mutex);
    for (PooledSession **p = &pool_head; *p != nullptr; p = &(*p)->next)
        if ((*p)->key == key) {
            PooledSession *found = *p;
            *p = found->next;
            found->next = nullptr;
            return found;
        }
    return nullptr;
}

void pool_give(PooledSession *ps) {
    PooledSession *evicted = nullptr;
    {
        std::lock_guard<std::mutex> lock(pool_mutex);
        ps->next = pool_head;
        pool_head = ps;
        int count = 0;
        for (PooledSession **p = &pool_head; *p != nullptr; p = &(*p)->next)
            if (++count == kPoolMax) {
                evicted = (*p)->next;
                (*p)->next = nullptr;
                break;
            }
    }
    while (evicted != nullptr) {
        PooledSession *next = evicted->next;
        delete evicted;
        evicted = next;
    }
}

/* Checks shared by both entry points, then the solve for the connectivity. */
gcut_status run(Input &in, int conn, const gcut_options *options, int64_t *flow, uint8_t *labels,
                gcut_stats *stats, double t_start) {
    if (!gcut__cuda_available())
        return gcut__fail(GCUT_ERR_NO_DEVICE, "cuda-grid: no CUDA device is usable here");
    if (conn != 4 && conn != 8 && conn != 6 && conn != 26)
        return gcut__fail(GCUT_ERR_UNSUPPORTED, "cuda-grid: connectivity %d is not supported",
                          conn);
    const long long n = (long long)in.width * in.height * in.depth;
    if (n >= kInf)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "cuda-grid: %lld nodes; this solver indexes heights with int32 and "
                          "takes fewer than %d",
                          n, kInf);
    const int device = options ? options->device : 0;
    int count = 0;
    cudaGetDeviceCount(&count);
    if (device < 0 || device >= count)
        return gcut__fail(GCUT_ERR_NO_DEVICE, "cuda-grid: options.device %d not in [0, %d)", device,
                          count);
    GCUT__CUDA_TRY(cudaSetDevice(device), "cudaSetDevice");
    const int verbose = options ? options->verbose : 0;
    if (in.grid == NULL && in.capture == NULL && pool_enabled()) {
        /* An image solve: through a pooled session of its shape (none = a new one), given
         * back to the pool when the solve succeeded, freed when it failed. */
        const PoolKey key = pool_key(in, conn, device);
        PooledSession *ps = pool_take(key);
        if (ps == nullptr) {
            ps = new (std::nothrow) PooledSession();
            if (ps == nullptr)
                return gcut__fail(GCUT_ERR_NOMEM, "cuda-grid: no host memory for a session");
            ps->key = key;
        }
        const gcut_status st =
            solve_conn(ps->S, ps->B, in, conn, device, verbose, flow, labels, stats, t_start);
        if (st == GCUT_OK)
            pool_give(ps);
        else
            delete ps;
        return st;
    }
    Session S;
    ImageBuffers B;
    return solve_conn(S, B, in, conn, device, verbose, flow, labels, stats, t_start);
}

} // namespace

extern "C" int gcut__cuda_available(void) {
    /* Atomic: gcut_device_init() may ask from another thread at the same time. */
    static int cached = -1;
    int value = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (value < 0) {
        int count = 0;
        value = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
        cudaGetLastError();
        __atomic_store_n(&cached, value, __ATOMIC_RELEASE);
    }
    return value;
}

namespace {
/* CUDA loads kernels lazily, at their first launch or attribute query: load those of a 2D
 * solve here, so that a start-up on another thread also takes that cost off the first solve. */
template <int CONN> void preload_kernels() {
    cudaFuncAttributes a;
    cudaFuncGetAttributes(&a, init_kernel<CONN>);
    cudaFuncGetAttributes(&a, relabel_init_kernel<CONN>);
    cudaFuncGetAttributes(&a, relax_kernel<CONN>);
    cudaFuncGetAttributes(&a, relax_async_kernel<CONN>);
    cudaFuncGetAttributes(&a, jacobi_kernel<CONN>);
    cudaFuncGetAttributes(&a, relabel_coop_kernel<CONN>);
    cudaFuncGetAttributes(&a, collect_kernel<CONN>);
    cudaFuncGetAttributes(&a, sweep_kernel<CONN>);
    cudaFuncGetAttributes(&a, sweep_kernel<CONN, true>);
    cudaFuncGetAttributes(&a, build_kernel<CONN, 1>);
    cudaFuncGetAttributes(&a, build_kernel<CONN, 3>);
    cudaFuncGetAttributes(&a, finish_kernel<CONN>);
}
} // namespace

extern "C" void gcut__cuda_release_cache(void) {
    PooledSession *list;
    {
        std::lock_guard<std::mutex> lock(pool_mutex);
        list = pool_head;
        pool_head = nullptr;
    }
    while (list != nullptr) {
        PooledSession *next = list->next;
        delete list;
        list = next;
    }
}

extern "C" gcut_status gcut__cuda_device_init(int device) {
    /* GCUT_DEVICE_INIT_VERBOSE=1: the split of the start-up on stderr (driver start-up through
     * the first runtime call, the device's context, kernel loads). */
    const bool verbose = gcut__env_int("GCUT_DEVICE_INIT_VERBOSE", 0, 0, 1) != 0;
    const double t0 = gcut__now_ms();
    if (!gcut__cuda_available())
        return gcut__fail(GCUT_ERR_NO_DEVICE, "gcut_device_init: no CUDA device is usable here");
    const double t1 = gcut__now_ms();
    int count = 0;
    cudaGetDeviceCount(&count);
    if (device < 0 || device >= count)
        return gcut__fail(GCUT_ERR_NO_DEVICE, "gcut_device_init: device %d not in [0, %d)", device,
                          count);
    cudaError_t err = cudaSetDevice(device);
    if (err == cudaSuccess)
        err = cudaFree(nullptr); /* creates the device's primary context if not yet there */
    if (err != cudaSuccess) {
        cudaGetLastError();
        return gcut__fail(GCUT_ERR_NO_DEVICE, "gcut_device_init: device %d: %s (%s)", device,
                          cudaGetErrorString(err), cudaGetErrorName(err));
    }
    const double t2 = gcut__now_ms();
    /* GCUT_DEVICE_PRELOAD: 0 none, 1 the 8-connected 2D kernels (the default of `gcut
     * segment`), 2 also the 4-connected ones. Each load costs a few ms, paid here or at the
     * kernel's first launch. */
    const int preload = gcut__env_int("GCUT_DEVICE_PRELOAD", 1, 0, 2);
    if (preload >= 1) {
        preload_kernels<8>();
    }
    if (preload >= 2)
        preload_kernels<4>();
    cudaGetLastError();
    if (verbose)
        fprintf(stderr,
                "gcut_device_init: device count (driver start-up) %.1f ms, context %.1f ms, "
                "kernel loads %.1f ms\n",
                t1 - t0, t2 - t1, gcut__now_ms() - t2);
    return GCUT_OK;
}

extern "C" gcut_status gcut__cudagrid_solve_grid(const gcut_grid *grid, const gcut_options *options,
                                                 int64_t *flow, uint8_t *labels,
                                                 gcut_stats *stats) {
    const double t_start = gcut__now_ms();
    if (grid == NULL || flow == NULL || stats == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "cuda-grid: grid, flow or stats is NULL");
    /* Sides and their product in 64 bits before anything is narrowed to int: a 1 x (2^32+5)
     * grid must not become a 5-node problem (issue #10). */
    if (grid->width < 1 || grid->height < 1 || grid->depth < 1 || grid->width >= kInf ||
        grid->height >= kInf || grid->depth >= kInf || grid->num_nodes >= kInf)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "cuda-grid: a grid of %lld x %lld x %lld nodes; this solver indexes "
                          "nodes and heights with int32 and takes fewer than %d",
                          (long long)grid->depth, (long long)grid->height, (long long)grid->width,
                          kInf);
    const int conn = grid->connectivity;
    for (int d = 0; d < grid->num_dirs; d++)
        if (grid->offset[d][0] != dir_dz(conn, d) || grid->offset[d][1] != dir_dy(conn, d) ||
            grid->offset[d][2] != dir_dx(conn, d))
            return gcut__fail(GCUT_ERR_INTERNAL,
                              "cuda-grid: direction %d of the %d-connected grid is not the "
                              "order this solver was built for",
                              d, conn);
    Input in{};
    in.grid = grid;
    in.width = (int)grid->width;
    in.height = (int)grid->height;
    in.depth = (int)grid->depth;
    for (int d = 0; d < grid->num_dirs; d++)
        in.step[d] = grid->step[d];
    return run(in, conn, options, flow, labels, stats, t_start);
}

extern "C" gcut_status gcut__cudagrid_solve_image(const uint8_t *pixels, const uint8_t *seeds,
                                                  const gcut__seg_tables *tables, int ndim,
                                                  const int64_t *shape, int connectivity,
                                                  const gcut_options *options, int64_t *flow,
                                                  uint8_t *labels, gcut_stats *stats,
                                                  double *construct_ms, gcut_grid *capture) {
    const double t_start = gcut__now_ms();
    if (pixels == NULL || tables == NULL || shape == NULL || flow == NULL || stats == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "cuda-grid image solve: pixels, tables, shape, flow or stats is NULL");
    const int conn = connectivity;
    if ((ndim != 2 && ndim != 3) || (ndim == 2 && conn != 4 && conn != 8) ||
        (ndim == 3 && conn != 6 && conn != 26))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "cuda-grid image solve: ndim %d with connectivity %d (2D: 4 or 8; 3D: "
                          "6 or 26)",
                          ndim, conn);
    const int classes = conn == 26 ? 3 : conn == 8 ? 2 : 1;
    if ((tables->channels != 1 && tables->channels != 3) || tables->num_classes < classes)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "cuda-grid image solve: tables have %d channels and %d distance "
                          "classes; connectivity %d needs 1 or 3 channels and %d classes",
                          tables->channels, tables->num_classes, conn, classes);
    for (int k = 0; k < ndim; k++)
        if (shape[k] < 1 || shape[k] >= kInf)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "cuda-grid image solve: shape[%d] = %lld out of range", k,
                              (long long)shape[k]);
    Input in{};
    in.depth = ndim == 3 ? (int)shape[0] : 1;
    in.height = (int)shape[ndim - 2];
    in.width = (int)shape[ndim - 1];
    if (capture != NULL && (capture->connectivity != conn || capture->width != in.width ||
                            capture->height != in.height || capture->depth != in.depth))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "cuda-grid image solve: capture grid's shape or connectivity differs");
    for (int d = 0; d < conn; d++)
        in.step[d] =
            ((long long)dir_dz(conn, d) * in.height + dir_dy(conn, d)) * in.width + dir_dx(conn, d);
    in.pixels = pixels;
    in.seeds = seeds;
    in.tables = tables;
    in.capture = capture;
    in.construct_ms = construct_ms;
    return run(in, conn, options, flow, labels, stats, t_start);
}

/* ------------------------------------------------------------------------------------------
 * Contexts: one Session kept across solves, the capacities of the last solve on the device
 * (cur) beside the new ones (nw), warm repair on the device (docs/CUDA-GRID.md, "Contexts").
 * Capacity arrays are A = 2 + CONN arrays of n int32 in one block: source, sink, directions.
 * ---------------------------------------------------------------------------------------- */

namespace {

/* Smallest (node * A + array) holding a negative capacity, into counters[kBadIndex]. */
__global__ void check_kernel(const Problem P, const int *caps, int arrays) {
    unsigned long long bad = ~0ull;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x)
        for (int a = 0; a < arrays; a++)
            if (caps[a * P.n + i] < 0) {
                unsigned long long at = (unsigned long long)i * arrays + a;
                bad = at < bad ? at : bad;
            }
    if (bad != ~0ull)
        atomicMin(&P.counters[kBadIndex], bad);
}

__device__ void add_excess(const Problem &P, long long i, long long amount) {
    if (amount != 0)
        atomicAdd((unsigned long long *)&P.excess[i], (unsigned long long)amount);
}

/* Warm repair, the device twin of cpu_pr.c's warm_repair(): for node i = list[k] (or k when
 * list is NULL: every node) the terminals take their new values (a source change moves the
 * excess, a sink residual below zero returns its flow as excess) and every arc pair at i keeps
 * its flow g clamped to [-new reverse cap, new cap], the rest returning from head to tail
 * (Kohli & Torr 2005, sec. 4). A pair is repaired by one thread: from its even end, or from
 * the listed end when only one end is listed, so residual writes never race; excess changes
 * are atomic. Unchanged pairs are not written. changed: per node, 1 if listed (list mode). */
template <int CONN>
__global__ void repair_kernel(const Problem P, const int *cur, const int *nw,
                              const unsigned char *changed, const unsigned *list, long long count,
                              bool terminals_only) {
    const long long n = P.n;
    if (P.counters[kBadIndex] != ~0ull)
        return; /* the gather found a negative value: refused, nothing kept changes */
    unsigned long long sink_delta = 0, changed_nodes = 0;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
         k += (long long)gridDim.x * blockDim.x) {
        const long long i = list != nullptr ? (long long)list[k] : k;
        const int s_old = cur[i], s_new = nw[i], t_old = cur[n + i], t_new = nw[n + i];
        bool any = s_old != s_new || t_old != t_new;
        long long rt = (long long)P.sink_residual[i] + t_new - t_old;
        long long gained = (long long)s_new - s_old;
        if (rt < 0) {
            gained += -rt;
            rt = 0;
        }
        if (rt > INT_MAX)
            P.counters[kOverflow] = 1;
        else
            P.sink_residual[i] = (int)rt;
        add_excess(P, i, gained);
        sink_delta += (unsigned long long)((long long)t_new - t_old);
        if (terminals_only) {
            /* The arcs did not change (nw holds no copy of them), so this thread alone moves
             * node i's excess: its deficit, if any, is settled here (deficit_kernel's rule)
             * instead of by a pass over the grid. */
            const long long e = P.excess[i];
            if (e < 0) {
                const long long rt2 = (long long)P.sink_residual[i] - e;
                if (rt2 > INT_MAX) {
                    P.counters[kOverflow] = 1;
                } else {
                    P.sink_residual[i] = (int)rt2;
                    P.excess[i] = 0;
                }
            }
            changed_nodes += 1;
            continue;
        }
        const NodeXYZ c3(P, i);
#pragma unroll
        for (int d = 0; d < CONN; d++) {
            const long long a = (long long)(2 + d) * n, ar = (long long)(2 + (d ^ 1)) * n;
            any = any || cur[a + i] != nw[a + i];
            if (!c3.has<CONN>(P, d))
                continue;
            const long long j = i + P.step[d];
            const bool j_listed = list == nullptr || changed[j] != 0;
            if ((d & 1) != 0 && j_listed)
                continue;
            const long long old_cap = cur[a + i], new_cap = nw[a + i];
            const long long old_rev = cur[ar + j], new_rev = j_listed ? nw[ar + j] : old_rev;
            if (old_cap == new_cap && old_rev == new_rev)
                continue;
            const long long g = old_cap - (long long)P.residual[d * n + i];
            const long long kept = g > new_cap ? new_cap : g < -new_rev ? -new_rev : g;
            P.residual[d * n + i] = (unsigned)(new_cap - kept);
            P.residual[(d ^ 1) * n + j] = (unsigned)(new_rev + kept);
            add_excess(P, i, g - kept);
            add_excess(P, j, kept - g);
        }
        changed_nodes += list != nullptr ? 1 : any;
    }
    block_add(sink_delta, &P.counters[kSumSink]);
    __syncthreads();
    block_add(changed_nodes, &P.counters[kChanged]);
}

/* A node left with a deficit gets it added to both terminal arcs (every cut rises by the same
 * amount): the deficit becomes flow already at the sink, and sum(sink caps) - sum(sink
 * residuals) stays the flow value. */
__global__ void deficit_kernel(const Problem P) {
    if (P.counters[kBadIndex] != ~0ull)
        return;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long e = P.excess[i];
        if (e >= 0)
            continue;
        const long long rt = (long long)P.sink_residual[i] - e;
        if (rt > INT_MAX) {
            P.counters[kOverflow] = 1;
            continue;
        }
        P.sink_residual[i] = (int)rt;
        P.excess[i] = 0;
    }
}

/* List mode: the listed nodes' new values into nw, and their marks. */
__global__ void scatter_kernel(long long n, int arrays, const unsigned *list, const int *vals,
                               long long count, int *nw, unsigned char *changed) {
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
         k += (long long)gridDim.x * blockDim.x) {
        const long long i = list[k];
        for (int a = 0; a < arrays; a++)
            nw[a * n + i] = vals[k * arrays + a];
        changed[i] = 1;
    }
}

/* List mode, the gather on the device: thread t reads array t % arrays of listed node
 * list[t / arrays] straight from the context's pinned grid (host memory the GPU reads over the
 * bus; 4 bytes of each array per listed node instead of a host loop over scattered cache
 * lines), stores it in nw and marks the node; a negative value goes to counters[kBadIndex]
 * as in check_kernel. */
__global__ void gather_kernel(const Problem P, int arrays, int all_arrays, const unsigned *list,
                              long long count, const int *pinned, int *nw, unsigned char *changed) {
    const long long items = count * arrays;
    unsigned long long bad = ~0ull;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < items;
         t += (long long)gridDim.x * blockDim.x) {
        const long long i = list[t / arrays];
        const int a = (int)(t % arrays);
        const int v = pinned[a * P.n + i];
        nw[a * P.n + i] = v;
        if (a == 0)
            changed[i] = 1;
        if (v < 0) {
            const unsigned long long at = (unsigned long long)i * all_arrays + a;
            bad = at < bad ? at : bad;
        }
    }
    if (bad != ~0ull)
        atomicMin(&P.counters[kBadIndex], bad);
}

/* List mode, after the repair: the listed nodes' values become the current ones. */
__global__ void commit_kernel(long long n, int arrays, const unsigned *list, long long count,
                              int *cur, const int *nw, unsigned char *changed,
                              const unsigned long long *counters) {
    if (counters[kBadIndex] != ~0ull)
        return; /* a negative value: refused, nothing kept changes */
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
         k += (long long)gridDim.x * blockDim.x) {
        const long long i = list[k];
        for (int a = 0; a < arrays; a++)
            cur[a * n + i] = nw[a * n + i];
        changed[i] = 0;
    }
}

/* The contexts' warm host path (GCUT_CUDAGRID_WARM_HOST): in one launch, before the gather,
 * every word the old path cleared with eleven memsets: the repair's counters (kBadIndex all
 * ones, kChanged and kOverflow 0), the per-solve counters and words of reset_solve_words (tile
 * marks, kSumSinkResidual .. kPushes, kRelaxCycles .. kFinishCycles, rctl below kEpoch), the
 * lists' sizes and cursors of the warm start, and the first one-launch relabel's queue flags. */
__global__ void warm_prep_kernel(const Problem P) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < P.num_tiles;
         t += (long long)gridDim.x * blockDim.x) {
        P.mark[t] = 0;
        P.qflag[t] = 0;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        P.counters[kBadIndex] = ~0ull;
        P.counters[kChanged] = 0;
        P.counters[kOverflow] = 0;
        for (int k = kSumSinkResidual; k < kSumSinkResidual + 3; k++)
            P.counters[k] = 0;
        for (int k = kRelaxCycles; k < kRelaxCycles + 3; k++)
            P.counters[k] = 0;
        for (int k = 0; k < kEpoch; k++)
            P.rctl[k] = 0;
        for (int k = 0; k < 4; k++) {
            P.count[k] = 0;
            P.next[k] = 0;
        }
    }
}

#include "grid_warm.cuh"

struct CudaContext {
    Session S;
    int conn = 0, arrays = 0, verbose = 0;
    long long n = 0;
    bool loaded = false;
    /* Warm solves sweep on the kept heights before their first global relabel;
     * GCUT_CUDAGRID_WARM_RELABEL=1 relabels first instead (for benchmarks). */
    bool keep_heights = true;
    /* GCUT_CUDAGRID_WARM_HOST (default 1; eighth session): warm solves after terminal marks
     * start with no host wait (warm_prestart); 0: the path before it. */
    bool warm_host = true;
    bool gather_on_device = true;      /* list mode: gather_kernel (GCUT_CUDAGRID_GATHER) */
    int *cur = nullptr, *nw = nullptr; /* device, arrays * n each (in S.blocks) */
    unsigned char *changed = nullptr;  /* device, n */
    int32_t *pinned_grid = nullptr;    /* the grid's arrays, pinned */
    uint64_t pinned_grid_bytes = 0;
    /* List mode: pinned staging and device copies, grown on demand. */
    unsigned *stage_idx = nullptr, *dev_idx = nullptr;
    int *stage_vals = nullptr, *dev_vals = nullptr;
    long long room = 0;
    uint64_t stage_bytes = 0;
    cudaEvent_t ev_in = nullptr, ev_out = nullptr;
    /* Masked solves (gcut__cudagrid_ctx_solve_masked): the live tiles' list and flags (device,
     * in S.blocks, made by the first such solve) and their count. masked_only: made by
     * gcut__cudagrid_masked_create, without cur, nw or a pinned grid (no other solve). */
    int *live_list = nullptr, *live_count = nullptr;
    unsigned char *live_flag = nullptr;
    bool masked_only = false;
    /* Incremental warm re-solves (grid_warm.cuh, docs/CUDA-GRID.md "Incremental warm
     * re-solves"). ready: the kept heights are a valid labelling of the kept residual graph and
     * arc_mask is that graph's arcs (set at the end of a solve whose labels went to dnew, so
     * arc_mask was not overwritten); seed_all: valid except where the stop certificate counted
     * loose heights, so the next seed pass checks every node. */
    bool inc = false;         /* GCUT_CUDAGRID_WARM_INC (off by default: slower, measured) */
    bool flip_labels = false; /* GCUT_CUDAGRID_LABEL_FLIPS (off: no gain measured) */
    bool prefill = true;      /* GCUT_CUDAGRID_LABEL_PREFILL (PrefillRun, a caller's buffer) */
    bool view_flips = true;   /* GCUT_CUDAGRID_VIEW_FLIPS (PrefillRun, the view) */
    bool keep_last = false;   /* GCUT_CUDAGRID_KEEP_LAST (KeepRun: solves without last labels) */
    int max_batches = 1;      /* GCUT_CUDAGRID_WARM_BATCHES: sweep batches before a full relabel */
    bool closure = true;      /* GCUT_CUDAGRID_WARM_CLOSURE: the closure search before that */
    bool ready = false, seed_all = false;
    /* Labels: dnew the solve's, dlab those the host holds in hlab (pinned), flips the nodes
     * whose label changed (device, flip_cap entries; host_flips their pinned copy). */
    unsigned char *dnew = nullptr, *dlab = nullptr;
    unsigned *flips = nullptr;
    long long flip_cap = 0;
    /* Flips read with a prefilled solve's last read (GCUT_CUDAGRID_FLIP_PREFIX; tests set it and
     * GCUT_CUDAGRID_FLIP_CAP low to take every branch of PrefillRun::finish). */
    long long flip_prefix = 16384;
    unsigned long long *wc = nullptr; /* device [kWarmWords] */
    unsigned char *hlab = nullptr;
    unsigned *host_flips = nullptr;
    unsigned long long *host_wc = nullptr;
    uint64_t warm_pinned_bytes = 0;
    bool synced = false; /* dlab == hlab, both valid labels of some solve */
    cudaEvent_t tev[4] = {};
    /* The sparse phase of warm re-solves after terminal marks (grid_sparse.cuh; seventh
     * session): GCUT_CUDAGRID_WARM_SPARSE, its rounds before the first global relabel
     * (GCUT_CUDAGRID_SPARSE_ROUNDS) and after it (GCUT_CUDAGRID_SPARSE_SETTLE, 0: a second
     * relabel as before), push/relabel steps per node and round (GCUT_CUDAGRID_SPARSE_STEPS), and
     * the room of each node list (GCUT_CUDAGRID_SPARSE_CAP; a full list drops nodes, which the
     * relabel or the certificate then finds). Device: three lists of sp_cap entries, the control
     * words, and a stamp per node (sp_stamp: the last one used). */
    bool sparse = false;
    int sp_rounds = 0, sp_settle = 0, sp_steps = 0;
    long long sp_cap = 0;
    unsigned *sp_lists = nullptr, *sp_ctl = nullptr, *sp_flag = nullptr;
    int *sp_hist = nullptr;  /* [kSpLevels + 1]: the height counts, then the gap level */
    bool sp_gap = false;     /* GCUT_CUDAGRID_SPARSE_GAP: the gap rule after the relabel */
    bool sp_pull = false;    /* GCUT_CUDAGRID_SPARSE_PULL: source-side nodes pull excess */
    bool sp_check = false;   /* GCUT_CUDAGRID_SPARSE_CHECK: the certificate after the start */
    bool sp_closure = false; /* GCUT_CUDAGRID_SPARSE_CLOSURE: close stuck pockets before it */
    unsigned sp_stamp = 0;
    /* The certified warm stop after terminal marks (grid_pull.cuh; ninth session):
     * GCUT_CUDAGRID_WARM_PULL, the pull passes' rounds (GCUT_CUDAGRID_PULL_ROUNDS), the second
     * pass on the shifted tiles (GCUT_CUDAGRID_PULL_SHIFT), the stuck closure
     * (GCUT_CUDAGRID_PULL_CLOSE), the sweep batches that end with a check before a global
     * relabel (GCUT_CUDAGRID_PULL_CHECKS) and after one that left active tiles
     * (GCUT_CUDAGRID_PULL_AFTER), the certificate without arc masks and loose heights
     * (GCUT_CUDAGRID_PULL_LEAN_CHECK), the far pull for the arcs both passes left open
     * (GCUT_CUDAGRID_PULL_FAR), the far drain and pull of the nodes against a failed
     * certificate, then the certificate again (GCUT_CUDAGRID_PULL_FIX), the fix queued behind
     * the certificate with a recheck of the nodes it touched (GCUT_CUDAGRID_PULL_CHAIN: one
     * wait for a failed certificate and its fix). Device: two
     * virtual-tile lists and flags, the
     * counters; host: the counters' pinned copy. */
    bool pull = false, pl_shift = true, pl_close = true, pl_lean_check = true, pl_far = true,
         pl_fix = true, pl_chain = true;
    long long *pl_touched = nullptr; /* the chained fix's searched nodes (kFarTouched) */
    int pl_rounds = 0, pl_checks = 3, pl_after = 0;
    int *pl_list[2] = {}, *pl_flag[2] = {};
    int pl_vt[2][3] = {};
    unsigned long long *pl_ctl = nullptr, *host_pl = nullptr;
    ~CudaContext() {
        if (host_pl)
            cudaFreeHost(host_pl);
        if (hlab)
            cudaFreeHost(hlab);
        if (host_flips)
            cudaFreeHost(host_flips);
        if (host_wc)
            cudaFreeHost(host_wc);
        if (warm_pinned_bytes)
            gcut__unreserve(warm_pinned_bytes);
        for (cudaEvent_t e : tev)
            if (e)
                cudaEventDestroy(e);
        if (stage_idx)
            cudaFreeHost(stage_idx);
        if (stage_vals)
            cudaFreeHost(stage_vals);
        if (stage_bytes)
            gcut__unreserve(stage_bytes);
        if (dev_idx)
            cudaFree(dev_idx);
        if (dev_vals)
            cudaFree(dev_vals);
        if (ev_in)
            cudaEventDestroy(ev_in);
        if (ev_out)
            cudaEventDestroy(ev_out);
    }
};

const char *array_name(int a, char *buf, size_t size) {
    if (a < 2)
        return a == 0 ? "source" : "sink";
    snprintf(buf, size, "direction %d", a - 2);
    return buf;
}

/* Fail naming the first negative capacity if check_kernel or gather_kernel found one. */
gcut_status bad_value(const CudaContext &C, unsigned long long bad, const char *fn) {
    if (bad == ~0ull)
        return GCUT_OK;
    char buf[32];
    return gcut__fail(GCUT_ERR_INVALID_ARG, "%s: %s capacity at index %lld is negative", fn,
                      array_name((int)(bad % C.arrays), buf, sizeof buf),
                      (long long)(bad / C.arrays));
}

/* Read the counters; fail naming the first negative capacity if check_kernel found one. */
gcut_status read_counters(CudaContext &C, const char *fn) {
    Session &S = C.S;
    GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_counters, S.P.counters,
                                   kNumCounters * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost, S.stream),
                   "read counters");
    GCUT__CUDA_TRY(cudaStreamSynchronize(S.stream), "context repair");
    return bad_value(C, S.host_counters[kBadIndex], fn);
}

gcut_status reset_check(CudaContext &C) {
    GCUT__CUDA_TRY(cudaMemsetAsync(C.S.P.counters + kBadIndex, 0xff, 8, C.S.stream), "memset");
    return GCUT_OK;
}

/* Cold start from cur: the capacities into the solver's arrays, then the preprocess. */
template <int CONN> gcut_status cold_init(CudaContext &C) {
    Session &S = C.S;
    Problem &P = S.P;
    const size_t n = (size_t)C.n;
    cudaStream_t stream = S.stream;
    GCUT__CUDA_TRY(cudaMemcpyAsync(P.residual, C.cur + 2 * n, (size_t)CONN * n * 4,
                                   cudaMemcpyDeviceToDevice, stream),
                   "copy capacities");
    GCUT__CUDA_TRY(cudaMemcpyAsync(P.dist, C.cur, n * 4, cudaMemcpyDeviceToDevice, stream),
                   "copy capacities");
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(P.sink_residual, C.cur + n, n * 4, cudaMemcpyDeviceToDevice, stream),
        "copy capacities");
    GCUT__CUDA_TRY(cudaMemsetAsync(P.counters, 0, kNumCounters * 8, stream), "memset");
    /* No change marks survive a cold start (a list repair cut short by an error leaves some). */
    GCUT__CUDA_TRY(cudaMemsetAsync(C.changed, 0, n, stream), "memset");
    init_kernel<CONN><<<S.node_blocks, 256, 0, stream>>>(P);
    GCUT__CUDA_TRY(cudaGetLastError(), "init kernel launch");
    C.loaded = true;
    return GCUT_OK;
}

/* Warm repair with the new capacities in nw (all nodes) or the listed ones (list mode, count
 * nodes in C.dev_idx, already scattered). Leaves cur = the new capacities. @return with
 * *fallback set when a repaired residual would overflow and the state was rebuilt cold. */
template <int CONN>
gcut_status warm_repair(CudaContext &C, bool listed, long long count, bool *fallback,
                        int64_t *changed_nodes, bool checked_on_device = false,
                        bool terminals_only = false) {
    Session &S = C.S;
    Problem &P = S.P;
    cudaStream_t stream = S.stream;
    /* After device_gather, counters[kBadIndex] holds its check (read below, once). */
    gcut_status st = checked_on_device ? GCUT_OK : reset_check(C);
    if (st != GCUT_OK)
        return st;
    GCUT__CUDA_TRY(cudaMemsetAsync(P.counters + kChanged, 0, 8, stream), "memset");
    GCUT__CUDA_TRY(cudaMemsetAsync(P.counters + kOverflow, 0, 8, stream), "memset");
    const long long items = listed ? count : C.n;
    if (items > 0) {
        const int blocks =
            (int)((items + 255) / 256 < S.node_blocks ? (items + 255) / 256 : S.node_blocks);
        repair_kernel<CONN><<<blocks, 256, 0, stream>>>(
            P, C.cur, C.nw, C.changed, listed ? C.dev_idx : nullptr, items, terminals_only);
        GCUT__CUDA_TRY(cudaGetLastError(), "repair kernel launch");
    }
    if (!terminals_only) {
        deficit_kernel<<<S.node_blocks, 256, 0, stream>>>(P);
        GCUT__CUDA_TRY(cudaGetLastError(), "deficit kernel launch");
    }
    if (listed) {
        if (count > 0)
            commit_kernel<<<(int)((count + 255) / 256 < S.node_blocks ? (count + 255) / 256
                                                                      : S.node_blocks),
                            256, 0, stream>>>(C.n, terminals_only ? 2 : C.arrays, C.dev_idx, count,
                                              C.cur, C.nw, C.changed, P.counters);
        GCUT__CUDA_TRY(cudaGetLastError(), "commit kernel launch");
    } else {
        int *t = C.cur;
        C.cur = C.nw;
        C.nw = t;
    }
    if ((st = read_counters(C, "gcut_grid_context_solve")) != GCUT_OK)
        return st;
    *changed_nodes = (int64_t)S.host_counters[kChanged];
    *fallback = S.host_counters[kOverflow] != 0;
    if (*fallback)
        return cold_init<CONN>(C);
    return GCUT_OK;
}

gcut_status grow_lists(CudaContext &C, long long count) {
    if (count <= C.room)
        return GCUT_OK;
    long long room = C.room ? C.room : 1024;
    while (room < count)
        room *= 2;
    if (room > C.n)
        room = C.n;
    if (C.stage_idx)
        cudaFreeHost(C.stage_idx);
    if (C.stage_vals)
        cudaFreeHost(C.stage_vals);
    if (C.dev_idx)
        cudaFree(C.dev_idx);
    if (C.dev_vals)
        cudaFree(C.dev_vals);
    C.stage_idx = nullptr;
    C.stage_vals = nullptr;
    C.dev_idx = nullptr;
    C.dev_vals = nullptr;
    C.room = 0;
    gcut__unreserve(C.stage_bytes);
    C.stage_bytes = 0;
    const uint64_t bytes = (uint64_t)room * 4 * (1 + C.arrays);
    if (gcut__reserve(bytes, "cuda-grid context change staging") != 0)
        return GCUT_ERR_NOMEM;
    C.stage_bytes = bytes;
    GCUT__CUDA_TRY(cudaMallocHost(&C.stage_idx, (size_t)room * 4), "cudaMallocHost");
    GCUT__CUDA_TRY(cudaMallocHost(&C.stage_vals, (size_t)room * 4 * C.arrays), "cudaMallocHost");
    GCUT__CUDA_TRY(cudaMalloc(&C.dev_idx, (size_t)room * 4), "cudaMalloc change list");
    GCUT__CUDA_TRY(cudaMalloc(&C.dev_vals, (size_t)room * 4 * C.arrays), "cudaMalloc change list");
    C.room = room;
    return GCUT_OK;
}

/* List mode, the gather on the host: the listed nodes' values into pinned staging (checked for
 * negative values on the way), uploaded and scattered into nw. */
template <int CONN>
gcut_status host_gather(CudaContext &C, const gcut_grid *grid, const gcut__ctx_changes *changes,
                        long long count) {
    Session &S = C.S;
    cudaStream_t stream = S.stream;
    for (long long k = 0; k < count; k++) {
        const int64_t i = changes->nodes[k];
        C.stage_idx[k] = (unsigned)i;
        int *v = C.stage_vals + k * C.arrays;
        v[0] = grid->terminal[GCUT_SOURCE][i];
        v[1] = grid->terminal[GCUT_SINK][i];
        int negative = (v[0] < 0) | (v[1] < 0);
        for (int d = 0; d < CONN; d++) {
            v[2 + d] = grid->cap[d][i];
            negative |= v[2 + d] < 0;
        }
        if (negative) {
            char buf[32];
            int a = 0;
            while (v[a] >= 0)
                a++;
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "gcut_grid_context_solve: %s capacity at index %lld is "
                              "negative (%d)",
                              array_name(a, buf, sizeof buf), (long long)i, v[a]);
        }
    }
    if (count > 0) {
        GCUT__CUDA_TRY(cudaMemcpyAsync(C.dev_idx, C.stage_idx, (size_t)count * 4,
                                       cudaMemcpyHostToDevice, stream),
                       "upload change list");
        GCUT__CUDA_TRY(cudaMemcpyAsync(C.dev_vals, C.stage_vals, (size_t)count * 4 * C.arrays,
                                       cudaMemcpyHostToDevice, stream),
                       "upload change list");
        scatter_kernel<<<(int)((count + 255) / 256 < S.node_blocks ? (count + 255) / 256
                                                                   : S.node_blocks),
                         256, 0, stream>>>(C.n, C.arrays, C.dev_idx, C.dev_vals, count, C.nw,
                                           C.changed);
        GCUT__CUDA_TRY(cudaGetLastError(), "scatter kernel launch");
    }
    return GCUT_OK;
}

/* List mode, the gather on the device (gather_kernel), then the check for negative values:
 * refused before any state changes (nw and the marks are rewritten by the next solve). */
gcut_status device_gather(CudaContext &C, const gcut__ctx_changes *changes, long long count,
                          bool terminals_only) {
    Session &S = C.S;
    cudaStream_t stream = S.stream;
    if (count == 0)
        return GCUT_OK;
    for (long long k = 0; k < count; k++)
        C.stage_idx[k] = (unsigned)changes->nodes[k];
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(C.dev_idx, C.stage_idx, (size_t)count * 4, cudaMemcpyHostToDevice, stream),
        "upload change list");
    gcut_status st = reset_check(C);
    if (st != GCUT_OK)
        return st;
    /* Terminal marks: the two terminal arrays only (a third of the bus reads in 2D 4-conn). */
    const int arrays = terminals_only ? 2 : C.arrays;
    const long long items = count * arrays;
    gather_kernel<<<(int)((items + 255) / 256 < S.node_blocks ? (items + 255) / 256
                                                              : S.node_blocks),
                    256, 0, stream>>>(S.P, arrays, C.arrays, C.dev_idx, count, C.pinned_grid, C.nw,
                                      C.changed);
    GCUT__CUDA_TRY(cudaGetLastError(), "gather kernel launch");
    /* No host read here: the repair kernels that follow leave every kept array alone when the
     * gather found a negative value, and warm_repair's one read of the counters names it. */
    return GCUT_OK;
}

/* Blocks for a node-by-node kernel over `items` entries. */
int item_blocks(const Session &S, long long items) {
    const long long b = (items + 255) / 256;
    return b < 1 ? 1 : b < S.node_blocks ? (int)b : S.node_blocks;
}

/* Device ms between two of the context's timing events (verbose only). */
float ctx_lap(CudaContext &C, int from, int to) {
    float ms = 0;
    if (cudaEventSynchronize(C.tev[to]) != cudaSuccess ||
        cudaEventElapsedTime(&ms, C.tev[from], C.tev[to]) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return ms;
}

#include "grid_sparse.cuh"
#include "grid_pull.cuh"

/* The incremental warm re-solve after terminal marks (docs/CUDA-GRID.md, "Incremental warm
 * re-solves"), on a context whose kept heights are a valid labelling of the kept residual graph
 * and whose arc_mask is that graph's arcs (C.ready). Terminal changes leave every arc alone, so
 * the labelling can break only at the listed nodes (a sink arc that became residual under a
 * height above 1): warm_seed_kernel lowers those and relax_async_kernel lowers the heights
 * behind them to the fixed point, a valid labelling again (heights only fall; nodes that lost
 * their path keep a height that is still a lower bound), and collects the active tiles. Sweeps
 * follow; when a batch leaves no active tile, warm_check_kernel's certificate (no excess at a
 * finite height, no residual arc out of the INF set) proves the preflow maximum, and the labels
 * (finite = sink side) are a minimum cut. *done stays false, with the preflow kept, whenever
 * that is not reached within C.max_batches batches, the relabel queue overflows or the
 * certificate fails: the caller then finishes with iterate() and full relabels (exact from any
 * preflow). *sweeps_out and *relabels_out get the work done here. */
template <int CONN>
gcut_status warm_incremental(CudaContext &C, long long count, int64_t *flow, gcut_stats *stats,
                             bool *done, int64_t *sweeps_out, int64_t *relabels_out) {
    using G = Geo<CONN>;
    Session &S = C.S;
    Problem &P = S.P;
    cudaStream_t stream = S.stream;
    const size_t tiles = (size_t)P.num_tiles;
    const bool verbose = C.verbose != 0;
    *done = false;
    *sweeps_out = 0;
    *relabels_out = 0;
    if (verbose)
        for (cudaEvent_t &e : C.tev)
            if (e == nullptr)
                GCUT__CUDA_TRY(cudaEventCreate(&e), "cudaEventCreate");
    if (verbose)
        GCUT__CUDA_TRY(cudaEventRecord(C.tev[0], stream), "cudaEventRecord");
    /* Per-solve words, as iterate() resets them. */
    gcut_status rst = reset_solve_words(S);
    if (rst != GCUT_OK)
        return rst;
    GCUT__CUDA_TRY(cudaMemsetAsync(P.qflag, 0, tiles * sizeof(int), stream), "memset");
    GCUT__CUDA_TRY(cudaMemsetAsync(P.count, 0, 4 * sizeof(int), stream), "memset");
    GCUT__CUDA_TRY(cudaMemsetAsync(P.next, 0, 4 * sizeof(int), stream), "memset");
    GCUT__CUDA_TRY(cudaMemsetAsync(C.wc, 0, kWarmWords * 8, stream), "memset");
    const long long items = C.seed_all ? C.n : count;
    const Problem Qv = queue_view(P); /* seeds straight onto the queue: no first pass */
    queue_start_kernel<<<1, 1, 0, stream>>>(Qv);
    warm_seed_kernel<CONN>
        <<<item_blocks(S, items), 256, 0, stream>>>(Qv, C.seed_all ? nullptr : C.dev_idx, items);
    GCUT__CUDA_TRY(cudaGetLastError(), "warm seed kernel launch");
    S.epochs++;
    unsigned stamp = 0;
    int q = 0;
    relax_async_kernel<CONN>
        <<<S.async_blocks, G::T, 0, stream>>>(Qv, q % 3, ++stamp, S.parallel_queue);
    GCUT__CUDA_TRY(cudaGetLastError(), "relax kernel launch");
    /* The queue view collects nothing (no first-pass tiles): list the active tiles here. */
    collect_kernel<CONN><<<first_count(P), G::T, 0, stream>>>(P, q % 3, ++stamp);
    GCUT__CUDA_TRY(cudaGetLastError(), "collect kernel launch");
    *relabels_out = 1;
    if (verbose)
        GCUT__CUDA_TRY(cudaEventRecord(C.tev[1], stream), "cudaEventRecord");
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(S.host_count, P.count, 4 * sizeof(int), cudaMemcpyDeviceToHost, stream),
        "read list sizes");
    GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_count + 4, P.rctl, kRctlWords * sizeof(int),
                                   cudaMemcpyDeviceToHost, stream),
                   "read list sizes");
    GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "warm relabel");
    const long long relax_visits = S.host_count[4 + kRelaxVisits];
    const int seeded_tiles_active = S.host_count[q % 3];
    int active = S.host_count[q % 3], batches = 0;
    int64_t sweeps = 0;
    /* --verbose: where the incremental start ended, and why. */
    auto report_verbose = [&](const char *outcome) {
        if (verbose)
            fprintf(stderr,
                    "cuda-grid: incremental warm start: %lld seeded tile relaxations (device "
                    "%.3f ms with the seeds), %d active tiles after them, %lld sweeps in %d "
                    "batches (device %.3f ms), %d active tiles left: %s\n",
                    relax_visits, ctx_lap(C, 0, 1), seeded_tiles_active, (long long)sweeps, batches,
                    batches > 0 ? ctx_lap(C, 1, 2) : 0.0f, active, outcome);
    };
    if (S.host_count[4 + kQOverflow] != 0) {
        report_verbose("relabel queue overflow, full relabels follow");
        return GCUT_OK; /* the queue ran out of room: full relabels from here */
    }
    bool closure = false;
    while (active != 0) {
        if (batches == C.max_batches) {
            *sweeps_out = sweeps;
            if (C.closure) {
                closure = true; /* search what the excess can reach (below) */
                break;
            }
            if (verbose)
                GCUT__CUDA_TRY(cudaEventRecord(C.tev[2], stream), "cudaEventRecord");
            report_verbose("active tiles left, a full relabel follows");
            return GCUT_OK;
        }
        for (int k = 0; k < S.sweeps_per_relabel; k++, q++, sweeps++)
            sweep_kernel<CONN><<<S.sweep_blocks, G::T, 0, stream>>>(P, q % 3, (q + 1) % 3,
                                                                    (q + 2) % 3, ++stamp, S.rounds);
        GCUT__CUDA_TRY(cudaGetLastError(), "sweep kernel launch");
        GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_count, P.count + q % 3, sizeof(int),
                                       cudaMemcpyDeviceToHost, stream),
                       "read list size");
        if (verbose)
            GCUT__CUDA_TRY(cudaEventRecord(C.tev[2], stream), "cudaEventRecord");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "warm sweeps");
        active = S.host_count[0];
        batches++;
    }
    *sweeps_out = sweeps;
    if (verbose && batches == 0)
        GCUT__CUDA_TRY(cudaEventRecord(C.tev[2], stream), "cudaEventRecord");
    /* Active tiles left: if the excess that is left can reach no residual sink arc, the nodes it
     * reaches join the INF set (which stays closed) and the certificate below holds without a
     * full relabel. The search runs on the reversed arcs in C.nw (scratch once the repair has
     * committed: the next gather rewrites what it reads), with the relabel's queue. */
    const int *aux = nullptr;
    if (closure) {
        Problem Q = queue_view(P);
        Q.dist = C.nw;
        Q.arc_mask = reinterpret_cast<unsigned *>(C.nw + C.n);
        GCUT__CUDA_TRY(cudaMemsetAsync(P.rctl, 0, (kQOverflow + 1) * sizeof(int), stream),
                       "memset");
        GCUT__CUDA_TRY(cudaMemsetAsync(P.qflag, 0, tiles * sizeof(int), stream), "memset");
        /* The relax kernel's collection below finds no tile (queue view); zeroed lists anyway. */
        GCUT__CUDA_TRY(cudaMemsetAsync(P.count, 0, 4 * sizeof(int), stream), "memset");
        GCUT__CUDA_TRY(cudaMemsetAsync(P.next, 0, 4 * sizeof(int), stream), "memset");
        queue_start_kernel<<<1, 1, 0, stream>>>(Q);
        closure_init_kernel<CONN><<<S.node_blocks, 256, 0, stream>>>(P, Q);
        GCUT__CUDA_TRY(cudaGetLastError(), "closure init kernel launch");
        S.epochs++;
        relax_async_kernel<CONN>
            <<<S.async_blocks, G::T, 0, stream>>>(Q, (q + 2) % 3, ++stamp, S.parallel_queue);
        GCUT__CUDA_TRY(cudaGetLastError(), "relax kernel launch");
        closure_hits_kernel<<<S.node_blocks, 256, 0, stream>>>(P, Q.dist, C.wc);
        GCUT__CUDA_TRY(cudaGetLastError(), "closure kernel launch");
        aux = Q.dist;
    }
    warm_check_kernel<CONN><<<S.node_blocks, 256, 0, stream>>>(P, C.wc, aux, nullptr, nullptr);
    GCUT__CUDA_TRY(cudaGetLastError(), "warm check kernel launch");
    finish_kernel<CONN><<<S.node_blocks, 256, 0, stream>>>(P, C.dnew);
    GCUT__CUDA_TRY(cudaGetLastError(), "finish kernel launch");
    if (verbose)
        GCUT__CUDA_TRY(cudaEventRecord(C.tev[3], stream), "cudaEventRecord");
    GCUT__CUDA_TRY(cudaMemcpyAsync(C.host_wc, C.wc, kWarmWords * 8, cudaMemcpyDeviceToHost, stream),
                   "read warm counters");
    GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_counters, P.counters,
                                   kNumCounters * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost, stream),
                   "read counters");
    GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "warm check");
    if (verbose) {
        char outcome[160];
        snprintf(outcome, sizeof outcome,
                 "%scertificate %s (%llu nodes against it, %llu loose heights; %scheck and "
                 "labels device %.3f ms)",
                 !closure                    ? ""
                 : C.host_wc[kWarmHits] == 0 ? "closure search reached no sink arc, "
                                             : "closure search reached a sink arc, ",
                 C.host_wc[kWarmBad] == 0 ? "holds" : "fails, full relabels follow",
                 C.host_wc[kWarmBad], C.host_wc[kWarmLoose], closure ? "search, " : "",
                 ctx_lap(C, 2, 3));
        report_verbose(outcome);
    }
    if (C.host_wc[kWarmBad] != 0)
        return GCUT_OK;
    C.seed_all = C.host_wc[kWarmLoose] != 0;
    const unsigned long long *c = S.host_counters;
    *flow = (int64_t)(c[kSumSink] - c[kSumSinkResidual]);
    stats->sweeps = sweeps;
    stats->global_relabels = 1;
    stats->pushes = (int64_t)c[kPushes];
    stats->device_bytes = (int64_t)S.device_bytes;
    const double node_visit_bytes = 2.0 * (8 + 4 + 4 + 4.0 * CONN) + 4.0 * (G::BOX - G::T) / G::T;
    stats->bytes_per_sweep =
        sweeps > 0 ? (double)c[kVisits] * G::T * node_visit_bytes / (double)sweeps : 0.0;
    *done = true;
    return GCUT_OK;
}

/* The labels that changed between labels_dev and C.dlab, queued on the stream (no wait):
 * flips_kernel lists them (dlab takes the new labels), their count is read into host_wc and the
 * first `first` entries (at most flip_cap) into host_flips. take_flips() ends it after a wait. */
gcut_status queue_flips(CudaContext &C, const unsigned char *labels_dev, long long first) {
    Session &S = C.S;
    cudaStream_t stream = S.stream;
    GCUT__CUDA_TRY(cudaMemsetAsync(C.wc + kWarmFlips, 0, 8, stream), "memset");
    flips_kernel<<<S.node_blocks, 256, 0, stream>>>(C.n, labels_dev, C.dlab, C.flips, C.flip_cap,
                                                    C.wc);
    GCUT__CUDA_TRY(cudaGetLastError(), "flips kernel launch");
    GCUT__CUDA_TRY(cudaMemcpyAsync(C.host_wc + kWarmFlips, C.wc + kWarmFlips, 8,
                                   cudaMemcpyDeviceToHost, stream),
                   "read flip count");
    if (first > 0)
        GCUT__CUDA_TRY(cudaMemcpyAsync(C.host_flips, C.flips, (size_t)first * 4,
                                       cudaMemcpyDeviceToHost, stream),
                       "download label flips");
    return GCUT_OK;
}

/* After a wait that brought queue_flips()' count and first entries: C.hlab, and `also` when
 * not null, take the new labels: the flips (the entries past `first` read now), or more than
 * flip_cap of them, the labels whole from dlab. *flips_out: the count. */
gcut_status take_flips(CudaContext &C, long long first, uint8_t *also, long long *flips_out) {
    cudaStream_t stream = C.S.stream;
    const size_t n = (size_t)C.n;
    const long long flips = (long long)C.host_wc[kWarmFlips];
    *flips_out = flips;
    if (flips > C.flip_cap) {
        GCUT__CUDA_TRY(cudaMemcpyAsync(C.hlab, C.dlab, n, cudaMemcpyDeviceToHost, stream),
                       "download labels");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "download labels");
        if (also != nullptr)
            memcpy(also, C.hlab, n);
        return GCUT_OK;
    }
    if (flips > first) {
        GCUT__CUDA_TRY(cudaMemcpyAsync(C.host_flips + first, C.flips + first,
                                       (size_t)(flips - first) * 4, cudaMemcpyDeviceToHost, stream),
                       "download label flips");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "download label flips");
    }
    for (long long k = 0; k < flips; k++) {
        const unsigned f = C.host_flips[k];
        const uint8_t v = (f >> 31) ? GCUT_SINK : GCUT_SOURCE;
        if (also != nullptr)
            also[f & 0x7fffffffu] = v;
        C.hlab[f & 0x7fffffffu] = v;
    }
    return GCUT_OK;
}

/* GCUT_CUDAGRID_KEEP_LAST (off by default, not yet measured on a device; docs/CUDA-GRID.md
 * "Last labels kept by solves without them"): a solve whose labels do not come from the last
 * ones (a cold solve, the first warm one, any solve PrefillRun does not take) leaves C.synced
 * false, so the next warm solve after terminal marks downloads its labels whole (0.9-1.5 ms
 * into a caller's buffer on the H100 against ~0.55 for the steps after it). With it on, such a
 * solve also copies its labels into dlab on the device and into hlab (pinned; the view already
 * is hlab) with its last read, so the next solve finds last labels. Only where PrefillRun can
 * use them (not with the incremental start; flips are 31-bit node indices). */
bool keeps_last(const CudaContext &C) {
    return C.keep_last && !C.inc && (C.prefill || C.view_flips) && C.n <= 0x7fffffffll;
}

/* The copy into dlab, queued behind the finish kernel (labels_also brings hlab's copy). */
struct KeepRun final : LabelHook {
    CudaContext &C;
    explicit KeepRun(CudaContext &context) : C(context) {}
    void host_work() override {}
    gcut_status after_finish(const unsigned char *labels_dev) override {
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(C.dlab, labels_dev, (size_t)C.n, cudaMemcpyDeviceToDevice, C.S.stream),
            "copy labels");
        return GCUT_OK;
    }
};

/* The labels in C.dnew to the caller: into labels (a caller's buffer: one download straight
 * into it, which on the H100 host beat a pinned download and a copy) or, with view, into the
 * context's pinned copy C.hlab (*view_out). With flip_labels and labels the host already holds
 * (C.synced), only the nodes whose label changed cross the bus (flips_kernel) and are written
 * into C.hlab; more than flip_cap of them, or no earlier labels: the whole array. *flips_out
 * gets the number of flips (-1: whole download). */
gcut_status labels_out(CudaContext &C, uint8_t *labels, bool view, const uint8_t **view_out,
                       long long *flips_out) {
    *flips_out = -1;
    if (labels == nullptr && !view)
        return GCUT_OK;
    Session &S = C.S;
    cudaStream_t stream = S.stream;
    const size_t n = (size_t)C.n;
    if (!view) {
        GCUT__CUDA_TRY(cudaMemcpyAsync(labels, C.dnew, n, cudaMemcpyDeviceToHost, stream),
                       "download labels");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "download labels");
        return GCUT_OK; /* dlab and hlab stay as they were: still each other's copy */
    }
    /* KEEP_LAST: with dlab too, the next solve has last labels. */
    const bool keep = keeps_last(C);
    if (!C.flip_labels || !C.synced) {
        C.synced = false;
        if (C.flip_labels || keep)
            GCUT__CUDA_TRY(cudaMemcpyAsync(C.dlab, C.dnew, n, cudaMemcpyDeviceToDevice, stream),
                           "copy labels");
        GCUT__CUDA_TRY(cudaMemcpyAsync(C.hlab, C.dnew, n, cudaMemcpyDeviceToHost, stream),
                       "download labels");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "download labels");
        C.synced = C.flip_labels || keep;
    } else {
        /* dlab takes the new labels; until hlab does too, they are not in sync. */
        C.synced = false;
        gcut_status st = queue_flips(C, C.dnew, 0);
        if (st != GCUT_OK)
            return st;
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "label flips");
        if ((st = take_flips(C, 0, nullptr, flips_out)) != GCUT_OK)
            return st;
        C.synced = true;
    }
    *view_out = C.hlab;
    return GCUT_OK;
}

/* The warm host path after terminal marks (GCUT_CUDAGRID_WARM_HOST): the listed nodes up,
 * warm_prep_kernel, then the gather, the repair and the commit as device_gather and warm_repair
 * queue them, with no read and no wait: the first global relabel's read brings the repair's
 * counters (iterate(), S.repair_check), and collect_listed_kernel lists no tile when the repair
 * was refused, so nothing is swept on a state the host has not accepted. */
template <int CONN>
gcut_status warm_prestart(CudaContext &C, const gcut__ctx_changes *changes, long long count) {
    Session &S = C.S;
    cudaStream_t stream = S.stream;
    for (long long k = 0; k < count; k++)
        C.stage_idx[k] = (unsigned)changes->nodes[k];
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(C.dev_idx, C.stage_idx, (size_t)count * 4, cudaMemcpyHostToDevice, stream),
        "upload change list");
    trace_mark(S, "change list up");
    warm_prep_kernel<<<item_blocks(S, S.P.num_tiles), 256, 0, stream>>>(S.P);
    GCUT__CUDA_TRY(cudaGetLastError(), "warm prep kernel launch");
    gather_kernel<<<item_blocks(S, count * 2), 256, 0, stream>>>(S.P, 2, C.arrays, C.dev_idx, count,
                                                                 C.pinned_grid, C.nw, C.changed);
    GCUT__CUDA_TRY(cudaGetLastError(), "gather kernel launch");
    trace_mark(S, "gathered");
    repair_kernel<CONN><<<item_blocks(S, count), 256, 0, stream>>>(S.P, C.cur, C.nw, C.changed,
                                                                   C.dev_idx, count, true);
    GCUT__CUDA_TRY(cudaGetLastError(), "repair kernel launch");
    commit_kernel<<<item_blocks(S, count), 256, 0, stream>>>(C.n, 2, C.dev_idx, count, C.cur, C.nw,
                                                             C.changed, S.P.counters);
    GCUT__CUDA_TRY(cudaGetLastError(), "commit kernel launch");
    S.words_prepped = true;
    S.repair_check = true;
    S.repair_refused = false;
    return GCUT_OK;
}

/* Labels from the last ones, into a caller's buffer (GCUT_CUDAGRID_LABEL_PREFILL) or the view
 * (GCUT_CUDAGRID_VIEW_FLIPS: no buffer, only hlab; both on by default; docs/CUDA-GRID.md
 * "Labels into a caller's buffer from the last ones"). A warm solve after
 * terminal marks changes few labels, and the host waits idle while the GPU solves. So with
 * last labels the host holds (C.synced: hlab == dlab), the host copies hlab into the caller's
 * buffer before the solve's first wait, flips_kernel lists the labels that changed (dnew
 * against dlab, which it updates) behind the finish, and the last read brings their count and
 * the first flip_prefix of them; the host writes them into the buffer and hlab. More flips than
 * that: the rest in a second read; more than flip_cap: hlab whole, then a copy. Without last
 * labels the solve's last read downloads them into hlab (pinned) and dlab gets a device copy,
 * then the host copies hlab into the buffer; the next solve has last labels. */
struct PrefillRun final : LabelHook {
    CudaContext &C;
    uint8_t *labels;
    const bool had_last; /* C.synced when the solve began */
    bool copied = false;
    explicit PrefillRun(CudaContext &context, uint8_t *buffer)
        : C(context), labels(buffer), had_last(context.synced) {}

    void host_work() override {
        if (copied || !had_last || labels == nullptr)
            return;
        memcpy(labels, C.hlab, (size_t)C.n);
        copied = true;
    }

    /* The flips read with the solve's last read. */
    long long first() const {
        return C.flip_prefix < C.flip_cap ? C.flip_prefix : C.flip_cap;
    }

    gcut_status after_finish(const unsigned char *labels_dev) override {
        if (!had_last) {
            GCUT__CUDA_TRY(cudaMemcpyAsync(C.dlab, labels_dev, (size_t)C.n,
                                           cudaMemcpyDeviceToDevice, C.S.stream),
                           "copy labels");
            return GCUT_OK;
        }
        return queue_flips(C, labels_dev, first());
    }

    /* After the solve's last read: the buffer and hlab hold the new labels. *flips_out: the
     * labels that changed (-1: whole copy without last labels). */
    gcut_status finish(long long *flips_out) {
        *flips_out = -1;
        if (!had_last) {
            if (labels != nullptr)
                memcpy(labels, C.hlab, (size_t)C.n); /* the last read brought them (labels_also) */
        } else {
            host_work();
            gcut_status st = take_flips(C, first(), labels, flips_out);
            if (st != GCUT_OK)
                return st;
        }
        C.synced = true;
        return GCUT_OK;
    }
};

template <int CONN>
gcut_status ctx_solve(CudaContext &C, const gcut_grid *grid, const gcut__ctx_changes *changes,
                      int64_t *flow, uint8_t *labels, gcut_stats *stats, gcut__ctx_report *report) {
    const double t0 = gcut__now_ms();
    Session &S = C.S;
    cudaStream_t stream = S.stream;
    const size_t n = (size_t)C.n, bytes = n * 4 * (size_t)C.arrays;
    GCUT__CUDA_TRY(cudaSetDevice(S.device), "cudaSetDevice");
    S.trace_n = 0;
    trace_mark(S, "solve called");
    const bool warm = changes->warm && C.loaded;
    /* Set again only where this solve ends exactly with its labels in dnew. */
    const bool was_ready = C.ready;
    C.ready = false;
    gcut_status st = GCUT_OK;
    bool fallback = false;
    int64_t changed = 0;
    bool terminals_only = false, unread = false;
    if (!warm || changes->nodes == NULL) {
        /* The grid's arrays are one pinned block: one upload at full bus speed. */
        int *target = warm ? C.nw : C.cur;
        GCUT__CUDA_TRY(cudaMemcpyAsync(target, grid->terminal[GCUT_SOURCE], bytes,
                                       cudaMemcpyHostToDevice, stream),
                       "upload capacities");
        if ((st = reset_check(C)) != GCUT_OK)
            return st;
        check_kernel<<<S.node_blocks, 256, 0, stream>>>(S.P, target, C.arrays);
        GCUT__CUDA_TRY(cudaGetLastError(), "check kernel launch");
        if ((st = read_counters(C, "gcut_grid_context_solve")) != GCUT_OK) {
            C.loaded = false;
            return st;
        }
        st = warm ? warm_repair<CONN>(C, false, 0, &fallback, &changed) : cold_init<CONN>(C);
    } else {
        const long long count = changes->count;
        if ((st = grow_lists(C, count)) != GCUT_OK)
            return st;
        /* GCUT_CUDAGRID_GATHER: 1 (default) the device reads the listed nodes' values from
         * the pinned grid; 0 the host gathers them into pinned staging and uploads them. */
        const bool on_device = C.gather_on_device && grid->terminal[GCUT_SOURCE] == C.pinned_grid;
        /* Terminal marks skip the arcs in the gather, the repair and the commit (the host
         * gather reads every array: a superset, exact either way). */
        terminals_only = on_device && changes->terminals_only != 0;
        /* The warm host path: the default warm start after terminal marks (not with the
         * incremental start or the sparse phase, which read the repair first). */
        unread = C.warm_host && terminals_only && count > 0 && C.keep_heights && !C.inc &&
                 !C.sparse && S.epochs <= (1ll << 31);
        if (unread) {
            st = warm_prestart<CONN>(C, changes, count);
            changed = count; /* the repair counts every listed node (read with the relabel) */
        } else if (on_device) {
            st = device_gather(C, changes, count, terminals_only);
        } else {
            st = host_gather<CONN>(C, grid, changes, count);
        }
        if (st == GCUT_OK && !unread)
            st = warm_repair<CONN>(C, true, count, &fallback, &changed, on_device && count > 0,
                                   terminals_only);
    }
    if (st != GCUT_OK) {
        C.loaded = false;
        return st;
    }
    if (!unread)
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "context load");
    trace_mark(S, "build queued");
    report->warm = warm && !fallback;
    report->cold_fallback = fallback;
    report->changed_nodes = changed;
    report->device_bytes = (int64_t)S.device_bytes;
    const double t_solve = gcut__now_ms();
    stats->build_ms = t_solve - t0;
    /* Terminal marks: only the listed nodes can be active at the warm start (their tiles are
     * listed from them); a cold fallback starts from scratch. */
    const bool listed_start = terminals_only && report->warm;
    /* Labels through C.dnew (arc_mask is left alone, so the kept state can seed the next
     * incremental warm start) when that start is on, the labels are wanted in the view, or they
     * come from the last ones (PrefillRun: warm solves after terminal marks, into a caller's
     * buffer with GCUT_CUDAGRID_LABEL_PREFILL, the view with GCUT_CUDAGRID_VIEW_FLIPS); else
     * straight to the caller from the solve, as before. */
    const bool prefill =
        unread && !C.inc && C.n <= 0x7fffffffll &&
        (changes->want_view ? C.view_flips && !C.flip_labels : C.prefill && labels != nullptr);
    const bool via_dnew = C.inc || changes->want_view || prefill;
    PrefillRun pre(C, changes->want_view ? nullptr : labels);
    if (prefill)
        C.synced = false; /* until pre.finish(): dlab changes on the device */
    KeepRun keep(C);
    bool kept = false; /* KeepRun's copies queued: hlab and dlab hold this solve's labels */
    bool done = false;
    int64_t inc_sweeps = 0, inc_relabels = 0;
    if (C.inc && was_ready && listed_start && C.keep_heights) {
        st = warm_incremental<CONN>(C, changes->count, flow, stats, &done, &inc_sweeps,
                                    &inc_relabels);
        report->incremental = done ? 1 : 2;
    }
    if (st == GCUT_OK && !done) {
        /* After an incremental start that did not finish, the solve goes on from its preflow
         * with a global relabel first. */
        const bool tried = report->incremental != 0;
        /* The sparse phase after terminal marks (grid_sparse.cuh), unless the incremental start
         * ran (its preflow needs a global relabel first). */
        SparseRun<CONN> sparse(C);
        const bool use_sparse = C.sparse && listed_start && C.keep_heights && !tried;
        /* The certified warm stop (grid_pull.cuh), on the same warm starts. */
        PullRun<CONN> pull(C);
        const bool use_pull = C.pull && listed_start && C.keep_heights && !tried && !use_sparse;
        /* The view's labels go down with the solve's last read (no second wait). */
        const bool labels_along = unread && changes->want_view && !C.flip_labels && !prefill;
        S.labels_also = labels_along || (prefill && !pre.had_last) ? C.hlab : nullptr;
        S.label_hook = prefill ? &pre : nullptr;
        /* Labels straight from the solve (to the caller's buffer or along to the view) keep a
         * copy as the last ones (GCUT_CUDAGRID_KEEP_LAST). */
        if (!prefill && keeps_last(C) && (labels_along || (!via_dnew && labels != nullptr))) {
            C.synced = false; /* until the solve's last read: dlab changes on the device */
            S.labels_also = C.hlab;
            S.label_hook = &keep;
            kept = true;
        }
        st = iterate<CONN>(S, C.verbose, flow, via_dnew ? C.dnew : labels, via_dnew, stats, t_solve,
                           report->warm && C.keep_heights && !tried,
                           listed_start && !tried ? C.dev_idx : nullptr,
                           listed_start && !tried ? changes->count : 0,
                           use_sparse ? &sparse : nullptr, use_pull ? &pull : nullptr);
        const bool refused = S.repair_refused;
        S.repair_check = S.repair_refused = S.words_prepped = false;
        if (st == GCUT_OK && refused) {
            /* The unread repair was refused (warm_prestart): a negative value names itself, as
             * warm_repair's read would have; an overflow rebuilds the state cold and solves
             * from it. */
            const unsigned long long bad = S.host_counters[kBadIndex];
            if (bad != ~0ull) {
                S.labels_also = nullptr;
                S.label_hook = nullptr;
                C.loaded = false;
                return bad_value(C, bad, "gcut_grid_context_solve");
            }
            report->warm = false;
            report->cold_fallback = true;
            st = cold_init<CONN>(C);
            if (st == GCUT_OK)
                st = iterate<CONN>(S, C.verbose, flow, via_dnew ? C.dnew : labels, via_dnew, stats,
                                   t_solve, false);
        }
        S.labels_also = nullptr;
        S.label_hook = nullptr;
        if (st == GCUT_OK && labels_along) {
            report->labels_view = C.hlab;
            C.synced = kept; /* else as labels_out's whole download without flips */
        } else if (st == GCUT_OK && kept)
            C.synced = true;
        report->sparse = use_sparse ? (sparse.proven ? 1 : 2) : 0;
        report->certified = use_pull && pull.proven && !refused ? 1 : 0;
        stats->sweeps += inc_sweeps;
        stats->global_relabels += inc_relabels;
        C.seed_all = false;
    }
    const double t_labels = gcut__now_ms();
    long long flips = -1;
    if (st == GCUT_OK && prefill) {
        st = pre.finish(&flips);
        if (st == GCUT_OK && changes->want_view)
            report->labels_view = C.hlab;
    } else if (st == GCUT_OK && via_dnew && report->labels_view == nullptr)
        st = labels_out(C, labels, changes->want_view != 0, &report->labels_view, &flips);
    if (C.verbose && st == GCUT_OK && via_dnew)
        fprintf(stderr, "cuda-grid: labels out (%s%s): %.3f ms wall, %lld flips listed\n",
                changes->want_view ? "context's view" : "caller's buffer",
                prefill ? (pre.had_last ? ", flips on the last ones" : ", last ones kept") : "",
                gcut__now_ms() - t_labels, flips);
    if (st != GCUT_OK) {
        C.loaded = false;
        return st;
    }
    stats->solve_ms = gcut__now_ms() - t_solve;
    /* A stop proven by the sparse phase's certificate leaves heights that are no valid
     * labelling; the incremental start (never on with it) must not seed from them. */
    C.ready = via_dnew && report->sparse != 1 && report->certified != 1;
    trace_mark(S, "solve returns");
    trace_report(S, !report->warm        ? "cold"
                    : changes->want_view ? "warm, view"
                    : labels != nullptr  ? "warm, caller's buffer"
                                         : "warm, no labels");
    return GCUT_OK;
}

template <int CONN>
gcut_status ctx_solve_device(CudaContext &C, const int32_t *source, const int32_t *sink,
                             const int32_t *const *dirs, uint8_t *labels, void *user_stream,
                             int warm_wanted, int64_t *flow, gcut_stats *stats,
                             gcut__ctx_report *report) {
    const double t0 = gcut__now_ms();
    Session &S = C.S;
    cudaStream_t stream = S.stream, theirs = static_cast<cudaStream_t>(user_stream);
    const size_t n = (size_t)C.n;
    GCUT__CUDA_TRY(cudaSetDevice(S.device), "cudaSetDevice");
    /* Start after the work the caller queued so far. */
    GCUT__CUDA_TRY(cudaEventRecord(C.ev_in, theirs), "cudaEventRecord on the caller's stream");
    GCUT__CUDA_TRY(cudaStreamWaitEvent(stream, C.ev_in, 0), "cudaStreamWaitEvent");
    const bool warm = warm_wanted && C.loaded;
    C.ready = false; /* labels NULL land in arc_mask below; no incremental start follows */
    int *target = warm ? C.nw : C.cur;
    const int32_t *from[2 + GCUT__MAX_DIRS];
    from[0] = source;
    from[1] = sink;
    for (int d = 0; d < CONN; d++)
        from[2 + d] = dirs[d];
    for (int a = 0; a < C.arrays; a++)
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(target + a * n, from[a], n * 4, cudaMemcpyDeviceToDevice, stream),
            "copy device capacities (are they device pointers of num_nodes int32?)");
    gcut_status st = reset_check(C);
    if (st != GCUT_OK)
        return st;
    check_kernel<<<S.node_blocks, 256, 0, stream>>>(S.P, target, C.arrays);
    GCUT__CUDA_TRY(cudaGetLastError(), "check kernel launch");
    if ((st = read_counters(C, "gcut_grid_context_solve_device")) != GCUT_OK) {
        C.loaded = false;
        return st;
    }
    bool fallback = false;
    int64_t changed = 0;
    st = warm ? warm_repair<CONN>(C, false, 0, &fallback, &changed) : cold_init<CONN>(C);
    if (st != GCUT_OK) {
        C.loaded = false;
        return st;
    }
    GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "context load");
    report->warm = warm && !fallback;
    report->cold_fallback = fallback;
    report->changed_nodes = changed;
    report->device_bytes = (int64_t)S.device_bytes;
    const double t_solve = gcut__now_ms();
    stats->build_ms = t_solve - t0;
    st = iterate<CONN>(S, C.verbose, flow, labels, true, stats, t_solve,
                       report->warm && C.keep_heights);
    if (st != GCUT_OK) {
        C.loaded = false;
        return st;
    }
    /* Work the caller queues next sees the labels. */
    GCUT__CUDA_TRY(cudaEventRecord(C.ev_out, stream), "cudaEventRecord");
    GCUT__CUDA_TRY(cudaStreamWaitEvent(theirs, C.ev_out, 0),
                   "cudaStreamWaitEvent on the caller's stream");
    return GCUT_OK;
}

/* The context's two events (ev_in, ev_out), made once by either kind of context. */
gcut_status ctx_events(CudaContext &C) {
    cudaError_t err = cudaEventCreateWithFlags(&C.ev_in, cudaEventDisableTiming);
    if (err == cudaSuccess)
        err = cudaEventCreateWithFlags(&C.ev_out, cudaEventDisableTiming);
    return err == cudaSuccess ? GCUT_OK : cuda_fail(err, "cudaEventCreate");
}

template <int CONN> gcut_status ctx_setup(CudaContext &C, const gcut_grid *grid, int device) {
    Input in{};
    in.grid = grid;
    in.width = (int)grid->width;
    in.height = (int)grid->height;
    in.depth = (int)grid->depth;
    for (int d = 0; d < grid->num_dirs; d++)
        in.step[d] = grid->step[d];
    const size_t n = (size_t)grid->num_nodes;
    /* Room for the flipped labels a solve lists (more: the labels are downloaded whole). */
    C.flip_cap = (long long)(n / 8 + 1024);
    if (C.flip_cap < INT_MAX) /* a lower cap for tests only */
        C.flip_cap = gcut__env_int("GCUT_CUDAGRID_FLIP_CAP", (int)C.flip_cap, 1, (int)C.flip_cap);
    C.flip_prefix = gcut__env_int("GCUT_CUDAGRID_FLIP_PREFIX", 16384, 1, 1 << 20);
    const size_t labels_bytes = 2 * n + (size_t)C.flip_cap * 4 + kWarmWords * 8;
    const size_t sparse_bytes =
        C.sparse ? ((size_t)C.sp_cap * 3 + kSpWords + n + kSpLevels + 1) * 4 : 0;
    /* The pull passes' virtual tiles: pass 1's grid is shifted by half a tile, one more per
     * tiled axis. */
    size_t pull_tiles[2] = {0, 0};
    if (C.pull) {
        using G = Geo<CONN>;
        const int t[3] = {G::TX, G::TY, G::TZ}, len[3] = {in.width, in.height, in.depth};
        for (int p = 0; p < 2; p++) {
            pull_tiles[p] = 1;
            for (int a = 0; a < 3; a++) {
                const int shift = p == 0 ? 0 : (a < 2 || G::NDIM == 3 ? t[a] / 2 : 0);
                C.pl_vt[p][a] = (len[a] + shift + t[a] - 1) / t[a];
                pull_tiles[p] *= (size_t)C.pl_vt[p][a];
            }
        }
    }
    const size_t pull_bytes = (pull_tiles[0] + pull_tiles[1]) * 8 + kPlWords * 8;
    gcut_status st = setup<CONN>(C.S, in, device,
                                 2 * n * 4 * (size_t)C.arrays + n + labels_bytes + sparse_bytes +
                                     (C.pull ? pull_bytes : 0));
    if (st != GCUT_OK)
        return st;
    if (C.pull) {
        for (int p = 0; p < 2; p++)
            if ((st = device_alloc(C.S, &C.pl_list[p], pull_tiles[p], "pull tile list")) !=
                    GCUT_OK ||
                (st = device_alloc(C.S, &C.pl_flag[p], pull_tiles[p], "pull tile flags")) !=
                    GCUT_OK)
                return st;
        if ((st = device_alloc(C.S, &C.pl_ctl, kPlWords, "pull counters")) != GCUT_OK ||
            (st = device_alloc(C.S, &C.pl_touched, kFarTouched, "fix search list")) != GCUT_OK)
            return st;
        for (int p = 0; p < 2; p++)
            GCUT__CUDA_TRY(cudaMemsetAsync(C.pl_flag[p], 0, pull_tiles[p] * 4, C.S.stream),
                           "memset");
        GCUT__CUDA_TRY(cudaMallocHost(&C.host_pl, kPlWords * 8), "cudaMallocHost");
    }
    if (C.sparse) {
        if ((st = device_alloc(C.S, &C.sp_lists, (size_t)C.sp_cap * 3, "sparse node lists")) !=
                GCUT_OK ||
            (st = device_alloc(C.S, &C.sp_ctl, kSpWords, "sparse list words")) != GCUT_OK ||
            (st = device_alloc(C.S, &C.sp_flag, n, "sparse node stamps")) != GCUT_OK ||
            (st = device_alloc(C.S, &C.sp_hist, kSpLevels + 1, "sparse height counts")) != GCUT_OK)
            return st;
        GCUT__CUDA_TRY(cudaMemsetAsync(C.sp_flag, 0, n * 4, C.S.stream), "memset");
        C.sp_stamp = 0;
    }
    if ((st = device_alloc(C.S, &C.cur, n * C.arrays, "context capacities")) != GCUT_OK ||
        (st = device_alloc(C.S, &C.nw, n * C.arrays, "context capacities")) != GCUT_OK ||
        (st = device_alloc(C.S, &C.changed, n, "context change marks")) != GCUT_OK ||
        (st = device_alloc(C.S, &C.dnew, n, "context labels")) != GCUT_OK ||
        (st = device_alloc(C.S, &C.dlab, n, "context labels")) != GCUT_OK ||
        (st = device_alloc(C.S, &C.flips, (size_t)C.flip_cap, "context label flips")) != GCUT_OK ||
        (st = device_alloc(C.S, &C.wc, kWarmWords, "context warm counters")) != GCUT_OK)
        return st;
    const uint64_t pinned = n + (uint64_t)C.flip_cap * 4 + kWarmWords * 8;
    if (gcut__reserve(pinned, "cuda-grid context labels") != 0)
        return GCUT_ERR_NOMEM;
    C.warm_pinned_bytes = pinned;
    GCUT__CUDA_TRY(cudaMallocHost(&C.hlab, n), "cudaMallocHost of the context's labels");
    GCUT__CUDA_TRY(cudaMallocHost(&C.host_flips, (size_t)C.flip_cap * 4), "cudaMallocHost");
    GCUT__CUDA_TRY(cudaMallocHost(&C.host_wc, kWarmWords * 8), "cudaMallocHost");
    /* The change lists' staging for up to ~3% of the nodes (at most 2^20) made now: grown on
     * the first warm solve, its pinned and device allocations cost that solve 1.0-1.6 ms at
     * 1080p (tenth session's `gpu_context --steps`, step 0). */
    const long long stage = (long long)n / 32 < (1ll << 20) ? (long long)n / 32 : (1ll << 20);
    if ((st = grow_lists(C, stage > 1024 ? stage : 1024)) != GCUT_OK)
        return st;
    GCUT__CUDA_TRY(cudaMemsetAsync(C.changed, 0, n, C.S.stream), "memset");
    GCUT__CUDA_TRY(cudaStreamSynchronize(C.S.stream), "context setup");
    return GCUT_OK;
}

} // namespace

extern "C" void gcut__cudagrid_ctx_free(void *state, gcut_grid *grid) {
    CudaContext *C = static_cast<CudaContext *>(state);
    if (C == nullptr)
        return;
    if (C->pinned_grid != nullptr) {
        if (grid != NULL) {
            for (int t = 0; t < 2; t++)
                grid->terminal[t] = NULL;
            for (int d = 0; d < grid->num_dirs; d++)
                grid->cap[d] = NULL;
        }
        cudaFreeHost(C->pinned_grid);
        gcut__unreserve(C->pinned_grid_bytes);
    }
    C->~CudaContext();
    gcut__free(C);
}

extern "C" gcut_status gcut__cudagrid_ctx_create(gcut_grid *grid, const gcut_options *options,
                                                 void **state) {
    *state = NULL;
    const int conn = grid->connectivity;
    if (!gcut__cuda_available())
        return gcut__fail(GCUT_ERR_NO_DEVICE, "cuda-grid: no CUDA device is usable here");
    for (int d = 0; d < grid->num_dirs; d++)
        if (grid->offset[d][0] != dir_dz(conn, d) || grid->offset[d][1] != dir_dy(conn, d) ||
            grid->offset[d][2] != dir_dx(conn, d))
            return gcut__fail(GCUT_ERR_INTERNAL,
                              "cuda-grid: direction %d of the %d-connected grid is not the "
                              "order this solver was built for",
                              d, conn);
    if (grid->num_nodes >= kInf)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "cuda-grid: %lld nodes; this solver indexes heights with int32 and "
                          "takes fewer than %d",
                          (long long)grid->num_nodes, kInf);
    const int device = options ? options->device : 0;
    int count = 0;
    cudaGetDeviceCount(&count);
    if (device < 0 || device >= count)
        return gcut__fail(GCUT_ERR_NO_DEVICE, "cuda-grid: options.device %d not in [0, %d)", device,
                          count);
    GCUT__CUDA_TRY(cudaSetDevice(device), "cudaSetDevice");
    void *mem = gcut__malloc(sizeof(CudaContext), "cuda-grid context");
    if (mem == NULL)
        return GCUT_ERR_NOMEM;
    CudaContext *C = new (mem) CudaContext();
    C->conn = conn;
    C->arrays = 2 + grid->num_dirs;
    C->n = grid->num_nodes;
    C->verbose = options ? options->verbose : 0;
    C->keep_heights = gcut__env_int("GCUT_CUDAGRID_WARM_RELABEL", 0, 0, 1) == 0;
    C->gather_on_device = gcut__env_int("GCUT_CUDAGRID_GATHER", 1, 0, 1) != 0;
    C->S.trace = gcut__env_int("GCUT_CUDAGRID_TRACE", 0, 0, 1) != 0;
    C->warm_host = gcut__env_int("GCUT_CUDAGRID_WARM_HOST", 1, 0, 1) != 0;
    /* GCUT_CUDAGRID_WARM_INC=1: the incremental warm start after terminal marks (off by
     * default: on hard 1920x1080 with 1% of the terminals changed it was slower than the two full
     * relabels it replaces, and no faster with the changes in one box, docs/CUDA-GRID.md
     * "Incremental warm re-solves"); GCUT_CUDAGRID_LABEL_FLIPS=1: gcut_grid_context_solve_view()
     * downloads only the labels that flipped (off by default: no gain over the whole array into
     * pinned memory was measured). */
    C->inc = gcut__env_int("GCUT_CUDAGRID_WARM_INC", 0, 0, 1) != 0;
    C->flip_labels = gcut__env_int("GCUT_CUDAGRID_LABEL_FLIPS", 0, 0, 1) != 0;
    C->prefill = gcut__env_int("GCUT_CUDAGRID_LABEL_PREFILL", 1, 0, 1) != 0;
    C->view_flips = gcut__env_int("GCUT_CUDAGRID_VIEW_FLIPS", 1, 0, 1) != 0;
    C->keep_last = gcut__env_int("GCUT_CUDAGRID_KEEP_LAST", 0, 0, 1) != 0;
    C->max_batches = gcut__env_int("GCUT_CUDAGRID_WARM_BATCHES", 1, 0, 1 << 20);
    C->closure = gcut__env_int("GCUT_CUDAGRID_WARM_CLOSURE", 1, 0, 1) != 0;
    /* GCUT_CUDAGRID_WARM_SPARSE=1: the sparse phase (grid_sparse.cuh, docs/CUDA-GRID.md "A
     * sparse phase for warm re-solves"); off by default: on hard 1920x1080 with 1% of the
     * terminals changed its certificate never held (194-507 nodes against it) and the warm
     * solve was 0-0.2 ms slower (two H100 calls, seventh session). Not with the incremental
     * start, which keeps its own invariant. */
    C->sparse = gcut__env_int("GCUT_CUDAGRID_WARM_SPARSE", 0, 0, 1) != 0 && !C->inc;
    C->sp_rounds = gcut__env_int("GCUT_CUDAGRID_SPARSE_ROUNDS", 12, 1, 1 << 16);
    C->sp_settle = gcut__env_int("GCUT_CUDAGRID_SPARSE_SETTLE", 0, 0, 1 << 16);
    C->sp_steps = gcut__env_int("GCUT_CUDAGRID_SPARSE_STEPS", 4, 1, 64);
    C->sp_gap = gcut__env_int("GCUT_CUDAGRID_SPARSE_GAP", 1, 0, 1) != 0;
    C->sp_pull = gcut__env_int("GCUT_CUDAGRID_SPARSE_PULL", 1, 0, 1) != 0;
    C->sp_check = gcut__env_int("GCUT_CUDAGRID_SPARSE_CHECK", 1, 0, 1) != 0;
    C->sp_closure = gcut__env_int("GCUT_CUDAGRID_SPARSE_CLOSURE", 1, 0, 1) != 0;
    /* GCUT_CUDAGRID_WARM_PULL (1, the default since the tenth session; 0 off): the certified
     * warm stop after terminal marks (grid_pull.cuh, docs/CUDA-GRID.md "A certified warm
     * stop"); not with the incremental start or the sparse phase, which keep their own. */
    C->pull = gcut__env_int("GCUT_CUDAGRID_WARM_PULL", 1, 0, 1) != 0 && !C->inc && !C->sparse;
    C->pl_rounds = gcut__env_int("GCUT_CUDAGRID_PULL_ROUNDS", 64, 0, 1 << 16);
    C->pl_shift = gcut__env_int("GCUT_CUDAGRID_PULL_SHIFT", 1, 0, 1) != 0;
    C->pl_close = gcut__env_int("GCUT_CUDAGRID_PULL_CLOSE", 1, 0, 1) != 0;
    C->pl_checks = gcut__env_int("GCUT_CUDAGRID_PULL_CHECKS", 3, 1, 64);
    C->pl_after = gcut__env_int("GCUT_CUDAGRID_PULL_AFTER", 0, 0, 64);
    C->pl_far = gcut__env_int("GCUT_CUDAGRID_PULL_FAR", 1, 0, 1) != 0;
    C->pl_fix = gcut__env_int("GCUT_CUDAGRID_PULL_FIX", 1, 0, 1) != 0;
    C->pl_chain = gcut__env_int("GCUT_CUDAGRID_PULL_CHAIN", 1, 0, 1) != 0;
    C->pl_lean_check = gcut__env_int("GCUT_CUDAGRID_PULL_LEAN_CHECK", 1, 0, 1) != 0;
    C->sp_cap =
        gcut__env_int("GCUT_CUDAGRID_SPARSE_CAP",
                      (int)(C->n / 8 + 1024 < (1 << 30) ? C->n / 8 + 1024 : (1 << 30)), 1, 1 << 30);
    gcut_status st =
        by_conn(conn, [&](auto c) { return ctx_setup<decltype(c)::value>(*C, grid, device); });
    if (st == GCUT_OK)
        st = ctx_events(*C);
    cudaError_t err = cudaSuccess;
    /* The grid's arrays move to one pinned block (uploads at full bus speed, in one copy). */
    const uint64_t bytes = (uint64_t)C->n * 4 * C->arrays;
    if (st == GCUT_OK) {
        if (gcut__reserve(bytes, "cuda-grid context pinned grid") != 0) {
            st = GCUT_ERR_NOMEM;
        } else if ((err = cudaMallocHost(&C->pinned_grid, bytes)) != cudaSuccess) {
            gcut__unreserve(bytes);
            C->pinned_grid = nullptr;
            st = cuda_fail(err, "cudaMallocHost of the context's grid");
        } else {
            C->pinned_grid_bytes = bytes;
            memset(C->pinned_grid, 0, bytes);
            for (int a = 0; a < C->arrays; a++) {
                int32_t **slot = a < 2 ? &grid->terminal[a] : &grid->cap[a - 2];
                gcut__free(*slot);
                *slot = C->pinned_grid + (size_t)a * C->n;
            }
        }
    }
    if (st != GCUT_OK) {
        gcut__cudagrid_ctx_free(C, grid);
        return st;
    }
    *state = C;
    return GCUT_OK;
}

extern "C" gcut_status gcut__cudagrid_ctx_solve(void *state, const gcut_grid *grid,
                                                const gcut__ctx_changes *changes, int64_t *flow,
                                                uint8_t *labels, gcut_stats *stats,
                                                gcut__ctx_report *report) {
    CudaContext &C = *static_cast<CudaContext *>(state);
    if (C.masked_only)
        return gcut__fail(GCUT_ERR_INTERNAL, "cuda-grid: a masked-solve context takes masked "
                                             "solves only");
    return by_conn(C.conn, [&](auto c) {
        return ctx_solve<decltype(c)::value>(C, grid, changes, flow, labels, stats, report);
    });
}

extern "C" gcut_status
gcut__cudagrid_ctx_solve_device(void *state, const int32_t *source, const int32_t *sink,
                                const int32_t *const *dirs, uint8_t *labels, void *stream, int warm,
                                int64_t *flow, gcut_stats *stats, gcut__ctx_report *report) {
    CudaContext &C = *static_cast<CudaContext *>(state);
    if (C.masked_only)
        return gcut__fail(GCUT_ERR_INTERNAL, "cuda-grid: a masked-solve context takes masked "
                                             "solves only");
    return by_conn(C.conn, [&](auto c) {
        return ctx_solve_device<decltype(c)::value>(C, source, sink, dirs, labels, stream, warm,
                                                    flow, stats, report);
    });
}

/* ------------------------------------------------------------------------------------------
 * Masked solves (the narrow band's levels, docs/BAND.md "GPU"): capacities in the caller's
 * device arrays; only the nodes a device mask marks take part, every other node is isolated
 * (no terminal capacity, no arc in either direction). With live tiles, only the tiles holding
 * a marked node are visited: by the start, the global relabel's node passes, first pass and
 * collection, and the labels (docs/BAND.md, "Live tiles", says why skipping the rest is
 * exact). No copy of the capacities is kept (no warm repair follows a masked solve).
 * ---------------------------------------------------------------------------------------- */

namespace {

struct MaskedCaps {
    const int *source, *sink;
    const int *dir[GCUT__MAX_DIRS];
};

/* flag[t] = 1 for every tile t holding a node i with mask[i] & bit. */
template <int CONN>
__global__ void live_mark_kernel(const Problem P, const unsigned char *mask, unsigned char bit,
                                 unsigned char *flag) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x)
        if (mask[i] & bit) {
            const int x = (int)(i % P.width), y = (int)(i / P.width % P.height),
                      z = (int)(i / ((long long)P.width * P.height));
            const int t = tile_of<CONN>(P, x, y, z);
            if (flag[t] == 0)
                flag[t] = 1;
        }
}

/* The flagged tiles into list, *count of them (one atomic per warp: a warp's tiles keep their
 * order). Every thread of a block runs the same iterations (the ballots are full-warp). */
__global__ void live_list_kernel(int num_tiles, const unsigned char *flag, int *list, int *count) {
    const int lane = threadIdx.x & 31;
    for (int base = blockIdx.x * blockDim.x; base < num_tiles; base += gridDim.x * blockDim.x) {
        const int t = base + threadIdx.x;
        const bool on = t < num_tiles && flag[t] != 0;
        const unsigned ballot = __ballot_sync(0xffffffffu, on);
        int start = 0;
        if (lane == 0 && ballot != 0)
            start = atomicAdd(count, __popc(ballot));
        start = __shfl_sync(0xffffffffu, start, 0);
        if (on)
            list[start + __popc(ballot & ((1u << lane) - 1u))] = t;
    }
}

/* The masked solve's start over the visited nodes: a marked node (every node when mask is
 * NULL) takes its terminal capacities and the capacity of every arc to a marked node inside
 * the grid from the caller's arrays; every other arc and node gets none. Then init_kernel's
 * preprocess (excess = source - min, sink residual = sink - min) and the sum of the sink caps.
 * A negative value read goes to counters[kBadIndex] as in check_kernel. */
template <int CONN>
__global__ void masked_init_kernel(const Problem P, const MaskedCaps caps,
                                   const unsigned char *mask, unsigned char bit) {
    unsigned long long sink_sum = 0, bad = ~0ull;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
         k < node_positions<CONN>(P); k += (long long)gridDim.x * blockDim.x) {
        const long long i = node_at<CONN>(P, k);
        if (i < 0)
            continue;
        const bool in = mask == nullptr || (mask[i] & bit) != 0;
        int source = in ? caps.source[i] : 0, sink = in ? caps.sink[i] : 0;
        if (source < 0 || sink < 0) {
            const unsigned long long at = (unsigned long long)i * (2 + CONN) + (source < 0 ? 0 : 1);
            bad = at < bad ? at : bad;
            source = sink = 0;
        }
        const NodeXYZ c3(P, i);
#pragma unroll
        for (int d = 0; d < CONN; d++) {
            int cap = 0;
            if (in && c3.has<CONN>(P, d) && (mask == nullptr || (mask[i + P.step[d]] & bit) != 0)) {
                cap = caps.dir[d][i];
                if (cap < 0) {
                    const unsigned long long at = (unsigned long long)i * (2 + CONN) + 2 + d;
                    bad = at < bad ? at : bad;
                    cap = 0;
                }
            }
            P.residual[d * P.n + i] = (unsigned)cap;
        }
        const int c = source < sink ? source : sink;
        P.excess[i] = source - c;
        P.sink_residual[i] = sink - c;
        sink_sum += (unsigned long long)sink;
    }
    block_add(sink_sum, &P.counters[kSumSink]);
    if (bad != ~0ull)
        atomicMin(&P.counters[kBadIndex], bad);
}

/* The live tiles of mask & bit into C.live_list; *num_live their count. */
template <int CONN>
gcut_status find_live_tiles(CudaContext &C, const uint8_t *mask, uint8_t bit, int *num_live) {
    Session &S = C.S;
    Problem &P = S.P;
    cudaStream_t stream = S.stream;
    const size_t tiles = (size_t)P.num_tiles;
    gcut_status st;
    if (C.live_list == nullptr &&
        ((st = device_alloc(S, &C.live_list, tiles, "live tile list")) != GCUT_OK ||
         (st = device_alloc(S, &C.live_flag, tiles, "live tile flags")) != GCUT_OK ||
         (st = device_alloc(S, &C.live_count, 1, "live tile count")) != GCUT_OK))
        return st;
    GCUT__CUDA_TRY(cudaMemsetAsync(C.live_flag, 0, tiles, stream), "memset");
    GCUT__CUDA_TRY(cudaMemsetAsync(C.live_count, 0, sizeof(int), stream), "memset");
    live_mark_kernel<CONN><<<S.node_blocks, 256, 0, stream>>>(P, mask, bit, C.live_flag);
    const int blocks = (int)((tiles + 255) / 256 < 4096 ? (tiles + 255) / 256 : 4096);
    live_list_kernel<<<blocks, 256, 0, stream>>>(P.num_tiles, C.live_flag, C.live_list,
                                                 C.live_count);
    GCUT__CUDA_TRY(cudaGetLastError(), "live tile kernels");
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(S.host_count, C.live_count, sizeof(int), cudaMemcpyDeviceToHost, stream),
        "read live tile count");
    GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "live tiles");
    *num_live = *S.host_count;
    return GCUT_OK;
}

template <int CONN>
gcut_status ctx_solve_masked(CudaContext &C, const MaskedCaps &caps, const uint8_t *mask,
                             uint8_t bit, bool live_tiles, uint8_t *labels, void *user_stream,
                             int64_t *flow, gcut_stats *stats, gcut__ctx_report *report,
                             int64_t *live_out) {
    const double t0 = gcut__now_ms();
    Session &S = C.S;
    Problem &P = S.P;
    cudaStream_t stream = S.stream, theirs = static_cast<cudaStream_t>(user_stream);
    GCUT__CUDA_TRY(cudaSetDevice(S.device), "cudaSetDevice");
    GCUT__CUDA_TRY(cudaEventRecord(C.ev_in, theirs), "cudaEventRecord on the caller's stream");
    GCUT__CUDA_TRY(cudaStreamWaitEvent(stream, C.ev_in, 0), "cudaStreamWaitEvent");
    C.loaded = false; /* cur does not hold these capacities: a warm solve after starts cold */
    memset(report, 0, sizeof *report);
    report->device_bytes = (int64_t)S.device_bytes;
    int num_live = P.num_tiles;
    gcut_status st;
    if (live_tiles && mask != nullptr &&
        (st = find_live_tiles<CONN>(C, mask, bit, &num_live)) != GCUT_OK)
        return st;
    *live_out = num_live;
    if (num_live == 0) { /* nothing marked: no flow, no label written */
        memset(stats, 0, sizeof *stats);
        *flow = 0;
        stats->build_ms = gcut__now_ms() - t0;
    } else {
        if (live_tiles && mask != nullptr) {
            P.live = C.live_list;
            P.live_flag = C.live_flag;
            P.num_live = num_live;
        }
        GCUT__CUDA_TRY(cudaMemsetAsync(P.counters, 0, kNumCounters * 8, stream), "memset");
        if ((st = reset_check(C)) == GCUT_OK) {
            masked_init_kernel<CONN><<<S.node_blocks, 256, 0, stream>>>(P, caps, mask, bit);
            st = cudaGetLastError() == cudaSuccess
                     ? read_counters(C, "gcut__cudagrid_ctx_solve_masked")
                     : gcut__fail(GCUT_ERR_DEVICE, "cuda-grid: masked init kernel launch failed");
        }
        if (st == GCUT_OK) {
            const double t_solve = gcut__now_ms();
            stats->build_ms = t_solve - t0;
            st = iterate<CONN>(S, C.verbose, flow, labels, true, stats, t_solve, false);
        }
        P.live = nullptr;
        P.live_flag = nullptr;
        P.num_live = 0;
        if (st != GCUT_OK)
            return st;
    }
    GCUT__CUDA_TRY(cudaEventRecord(C.ev_out, stream), "cudaEventRecord");
    GCUT__CUDA_TRY(cudaStreamWaitEvent(theirs, C.ev_out, 0),
                   "cudaStreamWaitEvent on the caller's stream");
    return GCUT_OK;
}

template <int CONN> gcut_status masked_setup(CudaContext &C, const int64_t dims[3], int device) {
    Input in{};
    in.depth = (int)dims[0];
    in.height = (int)dims[1];
    in.width = (int)dims[2];
    for (int d = 0; d < CONN; d++)
        in.step[d] =
            ((long long)dir_dz(CONN, d) * in.height + dir_dy(CONN, d)) * in.width + dir_dx(CONN, d);
    return setup<CONN>(C.S, in, device, 0);
}

} // namespace

extern "C" void gcut__cudagrid_direction(int conn, int d, int offset[3]) {
    offset[0] = dir_dz(conn, d);
    offset[1] = dir_dy(conn, d);
    offset[2] = dir_dx(conn, d);
}

extern "C" gcut_status gcut__cudagrid_masked_create(const int64_t dims[3], int conn,
                                                    const gcut_options *options, void **state) {
    *state = NULL;
    if (!gcut__cuda_available())
        return gcut__fail(GCUT_ERR_NO_DEVICE, "cuda-grid: no CUDA device is usable here");
    const bool two_d = conn == 4 || conn == 8;
    if ((!two_d && conn != 6 && conn != 26) || dims[0] < 1 || dims[1] < 1 || dims[2] < 1 ||
        (two_d && dims[0] != 1) || dims[0] > INT_MAX || dims[1] > INT_MAX || dims[2] > INT_MAX)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "cuda-grid: masked context of %lldx%lldx%lld nodes, connectivity %d "
                          "(2D: 4 or 8 with depth 1; 3D: 6 or 26)",
                          (long long)dims[0], (long long)dims[1], (long long)dims[2], conn);
    const int64_t n = dims[0] * dims[1] * dims[2];
    if (n >= kInf)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "cuda-grid: %lld nodes; this solver indexes heights with int32 and "
                          "takes fewer than %d",
                          (long long)n, kInf);
    const int device = options ? options->device : 0;
    int count = 0;
    cudaGetDeviceCount(&count);
    if (device < 0 || device >= count)
        return gcut__fail(GCUT_ERR_NO_DEVICE, "cuda-grid: options.device %d not in [0, %d)", device,
                          count);
    GCUT__CUDA_TRY(cudaSetDevice(device), "cudaSetDevice");
    void *mem = gcut__malloc(sizeof(CudaContext), "cuda-grid context");
    if (mem == NULL)
        return GCUT_ERR_NOMEM;
    CudaContext *C = new (mem) CudaContext();
    C->conn = conn;
    C->arrays = 2 + conn;
    C->n = n;
    C->verbose = options ? options->verbose : 0;
    C->masked_only = true;
    gcut_status st =
        by_conn(conn, [&](auto c) { return masked_setup<decltype(c)::value>(*C, dims, device); });
    if (st == GCUT_OK)
        st = ctx_events(*C);
    if (st != GCUT_OK) {
        gcut__cudagrid_ctx_free(C, NULL);
        return st;
    }
    *state = C;
    return GCUT_OK;
}

extern "C" gcut_status
gcut__cudagrid_ctx_solve_masked(void *state, const int32_t *source, const int32_t *sink,
                                const int32_t *const *dirs, const uint8_t *mask, uint8_t bit,
                                int live_tiles, uint8_t *labels, void *stream, int64_t *flow,
                                gcut_stats *stats, gcut__ctx_report *report, int64_t *live_count) {
    CudaContext &C = *static_cast<CudaContext *>(state);
    MaskedCaps caps{};
    caps.source = source;
    caps.sink = sink;
    for (int d = 0; d < C.conn; d++)
        caps.dir[d] = dirs[d];
    int64_t live = 0;
    const gcut_status st = by_conn(C.conn, [&](auto c) {
        return ctx_solve_masked<decltype(c)::value>(C, caps, mask, bit, live_tiles != 0, labels,
                                                    stream, flow, stats, report, &live);
    });
    if (live_count != NULL)
        *live_count = live;
    return st;
}
