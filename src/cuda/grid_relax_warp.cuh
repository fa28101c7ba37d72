/* grid_relax_warp.cuh - cuda-grid's one-launch global relabel with a warp per 2D tile (Hussein
 * et al. 2007, VI-C BFS global relabel; JF-Cut, tile-local fixed points): each lane holds one
 * column of the 32x8 tile in registers, so heights cross columns in registers and rows by
 * shuffles with no block barrier. Included by cuda_grid.cu inside its namespace;
 * docs/CUDA-GRID.md, "A warp per relabel tile". */

/* The lowest of this lane's column of the tile, the tile rows above and below (halo) and the
 * columns left and right of the tile: HX[k] is the height at row k - 1 of this lane's column
 * (k = 0 and 9 the halo rows), RX[k] / LX[k] the same of the column to the right / left. */
template <int CONN>
__device__ void relax_warp_neighbours(const int (&HX)[10], int (&RX)[10], int (&LX)[10],
                                      const int *halo_l, const int *halo_r, int lane) {
    constexpr bool DIAG = CONN == 8;
#pragma unroll
    for (int k = DIAG ? 0 : 1; k < (DIAG ? 10 : 9); k++) {
        const int right = __shfl_down_sync(0xffffffffu, HX[k], 1);
        const int left = __shfl_up_sync(0xffffffffu, HX[k], 1);
        RX[k] = lane == 31 ? halo_r[k] : right;
        LX[k] = lane == 0 ? halo_l[k] : left;
    }
}

/* The local fixed point of h(v) = min(h(v), 1 + h(w) over residual arcs v->w) over a 2D tile
 * held by one warp (h[j], mask m[j] of row j for this lane's column; top / bot the halo rows;
 * halo_l / halo_r the halo columns, rows -1..8, in shared memory), returning in fell bit j
 * whether row j's height fell. Each step: every arc once from the heights at its start, then
 * min-plus scans along each row (row_scan) and both ways along the column in registers, so a
 * distance crosses a whole row and a whole column per step. Every height written is the length
 * of a residual path to the sink (or INF), as in relax_box. */
template <int CONN>
__device__ unsigned relax_warp_fixed_point(int (&h)[8], const unsigned (&m)[8], int top, int bot,
                                           const int *halo_l, const int *halo_r, int lane) {
    int HX[10], RX[10], LX[10];
    HX[0] = top;
    HX[9] = bot;
    unsigned fell = 0;
    for (;;) {
#pragma unroll
        for (int j = 0; j < 8; j++)
            HX[j + 1] = h[j];
        relax_warp_neighbours<CONN>(HX, RX, LX, halo_l, halo_r, lane);
        int best[8];
#pragma unroll
        for (int j = 0; j < 8; j++) {
            int b = h[j];
#pragma unroll
            for (int d = 0; d < CONN; d++)
                if (m[j] & (1u << d)) {
                    const int dx = dir_dx(CONN, d), dy = dir_dy(CONN, d);
                    const int k = j + 1 + dy;
                    const int hn = dx == 0 ? HX[k] : dx > 0 ? RX[k] : LX[k];
                    if (hn < kInf && hn + 1 < b)
                        b = hn + 1;
                }
            best[j] = row_scan<32>(b, m[j], lane);
        }
        /* Along the column: +y arcs carry a distance up from row j + 1 to row j, -y arcs down
         * from row j - 1 (directions 2 and 3 in both 2D connectivities). */
#pragma unroll
        for (int j = 6; j >= 0; j--)
            if ((m[j] & 4u) && best[j + 1] < kInf && best[j + 1] + 1 < best[j])
                best[j] = best[j + 1] + 1;
#pragma unroll
        for (int j = 1; j < 8; j++)
            if ((m[j] & 8u) && best[j - 1] < kInf && best[j - 1] + 1 < best[j])
                best[j] = best[j - 1] + 1;
        bool changed = false;
#pragma unroll
        for (int j = 0; j < 8; j++)
            if (best[j] < h[j]) {
                h[j] = best[j];
                fell |= 1u << j;
                changed = true;
            }
        if (!__any_sync(0xffffffffu, changed))
            return fell;
    }
}

/* relax_async_kernel for 2D grids (CONN 4 or 8) with a warp per tile: the warps of a block take
 * tiles from the same device queue independently (take_relax_tile), each relaxes its tile to the
 * local fixed point in registers (relax_warp_fixed_point), lowers the heights that fell with
 * atomicMin, fences them, and queues the tiles across each edge where a height fell (lanes 0-8,
 * one tile offset each), before it leaves kPending. The same exact fixed point and the same
 * collection of active tiles as relax_async_kernel (see there), with no block barrier. */
template <int CONN>
__global__ void __launch_bounds__(256)
    relax_warp_kernel(const Problem P, int list_out, unsigned stamp) {
    static_assert(CONN == 4 || CONN == 8, "2D only");
    using G = Geo<CONN>;
    static_assert(G::TX == 32 && G::TY == 8, "a lane per column of a 32x8 tile");
    __shared__ int halo[8][2][10]; /* per warp: left and right halo columns, rows -1..8 */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int *halo_l = halo[warp][0], *halo_r = halo[warp][1];
    const unsigned epoch = (unsigned)((volatile int *)P.rctl)[kEpoch];
    int visits = 0;
    long long take_cycles = 0, relax_cycles = 0, t_mark = clock64();
    for (;;) {
        int tile = 0;
        if (lane == 0)
            tile = take_relax_tile(P, epoch);
        tile = __shfl_sync(0xffffffffu, tile, 0);
        long long t = clock64();
        take_cycles += t - t_mark;
        t_mark = t;
        if (tile < 0)
            break;
        visits++;
        const int x0 = tile % P.tiles_x * 32, y0 = tile / P.tiles_x * 8;
        const int gx = x0 + lane;
        const bool col = gx < P.width;
        int h[8];
        unsigned m[8];
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const bool valid = col && y0 + j < P.height;
            const long long g = (long long)(y0 + j) * P.width + gx;
            h[j] = valid ? __ldcg(&P.dist[g]) : kInf;
            m[j] = valid ? __ldg(&P.arc_mask[g]) : 0u;
        }
        const int top = col && y0 > 0 ? __ldcg(&P.dist[(long long)(y0 - 1) * P.width + gx]) : kInf;
        const int bot =
            col && y0 + 8 < P.height ? __ldcg(&P.dist[(long long)(y0 + 8) * P.width + gx]) : kInf;
        if (lane < 20) {
            /* lanes 0-9: the column left of the tile, lanes 10-19: right of it; rows -1..8 */
            const int side = lane / 10, k = lane % 10;
            const int x = side == 0 ? x0 - 1 : x0 + 32, y = y0 + k - 1;
            halo[warp][side][k] = x >= 0 && x < P.width && y >= 0 && y < P.height
                                      ? __ldcg(&P.dist[(long long)y * P.width + x])
                                      : kInf;
        }
        __syncwarp();
        const unsigned fell = relax_warp_fixed_point<CONN>(h, m, top, bot, halo_l, halo_r, lane);
        /* Lower what fell, then flag the tiles across each edge where a height fell (every
         * neighbour of such a node outside the tile reads it). */
        unsigned offsets = 0; /* bit (tdy + 1) * 3 + tdx + 1 */
#pragma unroll
        for (int j = 0; j < 8; j++)
            if (fell & (1u << j)) {
                atomicMin(&P.dist[(long long)(y0 + j) * P.width + gx], h[j]);
#pragma unroll
                for (int d = 0; d < CONN; d++) {
                    const int nx = lane + dir_dx(CONN, d), ny = j + dir_dy(CONN, d);
                    if (nx < 0 || nx >= 32 || ny < 0 || ny >= 8) {
                        const int tdx = nx < 0 ? -1 : nx >= 32 ? 1 : 0;
                        const int tdy = ny < 0 ? -1 : ny >= 8 ? 1 : 0;
                        offsets |= 1u << ((tdy + 1) * 3 + tdx + 1);
                    }
                }
            }
        __threadfence(); /* the heights before the queue entries that announce them */
        __syncwarp();
        offsets = __reduce_or_sync(0xffffffffu, offsets);
        if (lane < 9 && (offsets & (1u << lane))) {
            queue_neighbor_tile(P, tile, 9 + lane, epoch); /* code (dz 0, dy, dx) */
            __threadfence();
        }
        __syncwarp(); /* every neighbour counted in kPending before this tile leaves it */
        if (lane == 0) {
            __threadfence();
            atomicSub(&P.rctl[kPending], 1);
        }
        t = clock64();
        relax_cycles += t - t_mark;
        t_mark = t;
    }
    int overflow = 0;
    if (lane == 0) {
        if (visits != 0)
            atomicAdd(&P.rctl[kRelaxVisits], visits);
        atomicAdd(&P.counters[kTakeCycles], (unsigned long long)take_cycles);
        atomicAdd(&P.counters[kRelaxCycles], (unsigned long long)relax_cycles);
        overflow = wait_relax_end(P);
    }
    if (__shfl_sync(0xffffffffu, overflow, 0) != 0)
        return;
    /* Collect the tiles holding an active node, a warp per tile. */
    const int warps = gridDim.x * (blockDim.x >> 5);
    for (int p = blockIdx.x * (blockDim.x >> 5) + warp; p < first_count(P); p += warps) {
        const int tile = first_tile(P, p);
        const int gx = tile % P.tiles_x * 32 + lane, y0 = tile / P.tiles_x * 8;
        bool active = false;
        if (gx < P.width)
#pragma unroll
            for (int j = 0; j < 8; j++)
                if (y0 + j < P.height) {
                    const long long g = (long long)(y0 + j) * P.width + gx;
                    active |= __ldcg(&P.excess[g]) > 0 && __ldcg(&P.dist[g]) < kInf;
                }
        if (__any_sync(0xffffffffu, active) && lane == 0)
            list_append(P, list_out, tile, stamp);
    }
    if (lane == 0)
        atomicAdd(&P.counters[kFinishCycles], (unsigned long long)(clock64() - t_mark));
}
