/* grid_pull.cuh - cuda-grid's certified warm stop after terminal marks (docs/CUDA-GRID.md, "A
 * certified warm stop (issue #17, ninth session)"): tile-local pulls that refill the sink arcs
 * the changes opened on the source side, tile-local closures of stuck excess, and the closure
 * certificate of grid_warm.cuh after the first sweep batch, so that a warm solve whose changes
 * settle locally ends with no global relabel. Every step moves flow by valid pushes only or
 * changes heights only, so none of them can make a solve inexact: the stop is still proven, by
 * warm_check_kernel's certificate or (when it fails) by a global relabel. Included by
 * cuda_grid.cu inside its anonymous namespace, after grid_warm.cuh. */

/* Words of a context's pull counters (CudaContext::pl_ctl, device; host_pl, pinned). */
enum {
    kPlCount0 = 0,   /* tiles on the pull list of pass 0 (the tile grid) */
    kPlCount1 = 1,   /* tiles on the pull list of pass 1 (the grid shifted by half a tile) */
    kPlOpen = 2,     /* source-side nodes whose sink arc is still residual after both passes */
    kPlFlipped = 3,  /* source-side nodes moved to the sink side (finite heights) by a pass */
    kPlClosed = 4,   /* sink-side nodes moved to the source side (INF) by a stuck closure */
    kPlPulls = 5,    /* pushes made by the pull passes */
    kPlFarPaths = 6, /* augmenting paths the far pull pushed along */
    kPlFarLeft = 7,  /* sink arcs still open after the far pull */
    kPlOpenList = 8, /* the nodes counted by kPlOpen, the first kPlOpenCap of them */
    kPlOpenCap = 56,
    kPlFixPaths = 64, /* augmenting paths of the fixes after failed certificates */
    kPlFixMoved = 65, /* nodes the fixes moved (R to the sink side, S to INF) */
    kPlFixLeft = 66,  /* nodes against a certificate that a fix could not settle */
    kPlBadCount = 67, /* nodes against the last certificate (pull_check_kernel) */
    kPlBadList = 68,  /* the first kPlBadCap of them */
    kPlBadCap = 28,
    /* The chained fix (GCUT_CUDAGRID_PULL_CHAIN): 1 when it ran and rechecked what it touched,
     * and the nodes against the certificate it found there. */
    kPlRechecked = kPlBadList + kPlBadCap,
    kPlRecheckBad,
    kPlWords
};

/* The far pull's block: threads, BFS queue and hash slots (shared memory), augmenting paths per
 * arc and BFS nodes per launch before it gives up (the arcs left stay open: the certificate
 * fails and a global relabel follows, exact as ever). */
constexpr int kFarThreads = 256, kFarQueue = 1024, kFarHash = 2048, kFarPaths = 16,
              kFarBudget = 16384;
/* The chained fix's list of the nodes its searches held (CudaContext::pl_touched): a launch's
 * searches stop once they held kFarBudget nodes, each at most kFarQueue. */
constexpr int kFarTouched = kFarBudget + kFarQueue;

/* The pull passes' tile lists: pass p lists virtual tiles of the tile grid shifted by
 * (p ? half a tile : 0) in every tiled axis; flag[p][t] is 1 while t waits on list p (set by
 * the appender, cleared by the block that takes it). vt[p][0..2]: virtual tiles per axis. */
struct PullLists {
    int *list[2];
    int *flag[2];
    unsigned long long *ctl;
    int vt[2][3];
};

template <int CONN> __device__ int pull_shift(int pass, int axis) {
    using G = Geo<CONN>;
    if (pass == 0)
        return 0;
    return axis == 0 ? G::TX / 2 : axis == 1 ? G::TY / 2 : (G::NDIM == 3 ? G::TZ / 2 : 0);
}

/* Virtual tile of pass `pass` holding node (x, y, z). */
template <int CONN> __device__ int pull_tile_of(const PullLists &L, int pass, int x, int y, int z) {
    using G = Geo<CONN>;
    const int vx = (x + pull_shift<CONN>(pass, 0)) / G::TX,
              vy = (y + pull_shift<CONN>(pass, 1)) / G::TY,
              vz = (z + pull_shift<CONN>(pass, 2)) / G::TZ;
    return (vz * L.vt[pass][1] + vy) * L.vt[pass][0] + vx;
}

__device__ void pull_append(const PullLists &L, int pass, int vt) {
    if (__ldcg(&L.flag[pass][vt]) != 0 || atomicCAS(&L.flag[pass][vt], 0, 1) != 0)
        return;
    const unsigned long long pos = atomicAdd(&L.ctl[kPlCount0 + pass], 1ull);
    L.list[pass][pos] = vt;
}

/* List the tiles (pass 0) of the listed nodes that are on the source side (INF) with a residual
 * sink arc: terminal changes that opened a sink arc in the closed INF set (a new sink capacity,
 * or a deficit the repair added to both terminals). Nothing when the repair was refused. */
template <int CONN>
__global__ void pull_open_kernel(const Problem P, const PullLists L, const unsigned *nodes,
                                 long long count) {
    if (P.counters[kBadIndex] != ~0ull || P.counters[kOverflow] != 0)
        return;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
         k += (long long)gridDim.x * blockDim.x) {
        const long long i = nodes[k];
        if (P.dist[i] == kInf && P.sink_residual[i] > 0)
            pull_append(L, 0,
                        pull_tile_of<CONN>(L, 0, (int)(i % P.width), (int)(i / P.width % P.height),
                                           (int)(i / ((long long)P.width * P.height))));
    }
}

/* One pull pass over the virtual tiles on list `pass`, one block per tile. Inside the tile, among
 * the source-side nodes (U, height INF) and the arcs between them only:
 *  1. local heights hd = the BFS distance to a node of the tile with a residual sink arc;
 *  2. up to `rounds` synchronous push/relabel rounds on hd (the sweep's rounds, restricted to
 *     U's arcs inside the tile), until no open sink arc is left: excess of U flows into them;
 *  3. hd again on the final residuals: R = the nodes that can still reach an open sink arc. If R
 *     holds no excess and no U node outside the tile has a residual arc into R, R moves to the
 *     sink side (dist = hd, a valid labelling of R's arcs): U without R is then closed again;
 *     else R stays in U and its open nodes go on pass 1's list (pass 0, unless `last`) or are
 *     counted (the last pass).
 * Only arcs with both ends in the tile change, so no other block touches a value this one
 * writes, and plain stores suffice; heights of U stay INF unless R moves. The kernels around it
 * (no sweep runs meanwhile) see a valid preflow at every launch boundary. */
template <int CONN>
__global__ void __launch_bounds__(Geo<CONN>::T)
    pull_kernel(const Problem P, const PullLists L, int pass, int rounds, bool last) {
    using G = Geo<CONN>;
    __shared__ int hd[G::T];
    __shared__ unsigned char inu[G::T];
    __shared__ signed char pdir[G::T];
    __shared__ unsigned pamt[G::T];
    const int tid = threadIdx.x;
    const int lx = tid % G::TX, ly = tid / G::TX % G::TY, lz = tid / (G::TX * G::TY);
    const long long count = (long long)L.ctl[kPlCount0 + pass];
    unsigned long long pulls = 0, flipped = 0;
    for (long long k = blockIdx.x; k < count; k += gridDim.x) {
        const int vt = L.list[pass][k];
        const int vx = vt % L.vt[pass][0], vy = vt / L.vt[pass][0] % L.vt[pass][1],
                  vz = vt / (L.vt[pass][0] * L.vt[pass][1]);
        const int gx = vx * G::TX - pull_shift<CONN>(pass, 0) + lx,
                  gy = vy * G::TY - pull_shift<CONN>(pass, 1) + ly,
                  gz = vz * G::TZ - pull_shift<CONN>(pass, 2) + lz;
        const bool valid =
            gx >= 0 && gx < P.width && gy >= 0 && gy < P.height && gz >= 0 && gz < P.depth;
        const long long g = valid ? ((long long)gz * P.height + gy) * P.width + gx : 0;
        const bool u = valid && P.dist[g] == kInf;
        if (tid == 0)
            L.flag[pass][vt] = 0;
        inu[tid] = u;
        pdir[tid] = -1;
        long long e = u ? P.excess[g] : 0;
        int rt = u ? P.sink_residual[g] : 0;
        const long long e0 = e;
        const int rt0 = rt;
        __syncthreads();
        /* m: bit d when the arc's head is in this tile and in U (and so is this node). */
        unsigned m = 0, dirty = 0, r[CONN];
#pragma unroll
        for (int d = 0; d < CONN; d++) {
            const bool inside = u && in_tile<CONN>(lx + dir_dx(CONN, d), ly + dir_dy(CONN, d),
                                                   lz + dir_dz(CONN, d));
            if (inside && inu[tid + G::tid_step(d)])
                m |= 1u << d;
            r[d] = (m & (1u << d)) ? P.residual[d * P.n + g] : 0u;
        }
        /* The BFS distance (over residual arcs of U inside the tile) to an open sink arc. */
        auto local_bfs = [&]() {
            int h = u && rt > 0 ? 1 : kInf;
            hd[tid] = h;
            __syncthreads();
            for (;;) {
                int best = h;
#pragma unroll
                for (int d = 0; d < CONN; d++)
                    if (r[d] > 0) { /* r[d] > 0 only on arcs of m */
                        const int hn = hd[tid + G::tid_step(d)];
                        if (hn < kInf && hn + 1 < best)
                            best = hn + 1;
                    }
                __syncthreads();
                const bool fell = best < h;
                if (fell) {
                    h = best;
                    hd[tid] = h;
                }
                if (!__syncthreads_or(fell))
                    return h;
            }
        };
        int h = local_bfs();
        bool active = e > 0 && h < kInf;
        for (int round = 0; round < rounds; round++) {
            /* Done when nothing is active, or when no open sink arc is left in the tile: the
             * excess left in U then has nowhere to go (first device call: without this stop the
             * rounds went on to the cap, 2.6M pushes and 0.27 ms for 1200 tiles). */
            if (!__syncthreads_or(active) || !__syncthreads_or(u && rt > 0))
                break;
            int relabel_to = h;
            if (active) {
                if (rt > 0) {
                    const int amount = e < rt ? (int)e : rt;
                    rt -= amount;
                    e -= amount;
                }
                if (e > 0) {
                    int hmin = kInf, best = -1;
#pragma unroll
                    for (int d = 0; d < CONN; d++)
                        if (r[d] > 0) {
                            const int hn = hd[tid + G::tid_step(d)];
                            if (hn < hmin) {
                                hmin = hn;
                                best = d;
                            }
                        }
                    if (best >= 0 && hmin < h) {
#pragma unroll
                        for (int d = 0; d < CONN; d++)
                            if (d == best) {
                                const unsigned amount = e < (long long)r[d] ? (unsigned)e : r[d];
                                r[d] -= amount;
                                e -= amount;
                                dirty |= 1u << d;
                                pdir[tid] = (signed char)d;
                                pamt[tid] = amount;
                                pulls++;
                            }
                    } else {
                        relabel_to = hmin >= kInf - 1 ? kInf : hmin + 1;
                    }
                }
            }
            end_tile_round<CONN, true>(lx, ly, lz, tid, relabel_to, h, &hd[tid], pdir, pamt, e, r,
                                       dirty);
            active = e > 0 && h < kInf;
        }
        /* R: what can still reach an open sink arc; it moves to the sink side when nothing of U
         * outside it can reach it and it holds no excess. */
        h = local_bfs();
        const bool in_r = h < kInf;
        bool blocks = in_r && e > 0;
        if (in_r && !blocks) {
#pragma unroll
            for (int d = 0; d < CONN; d++) {
                const int dx = dir_dx(CONN, d), dy = dir_dy(CONN, d), dz = dir_dz(CONN, d);
                if (in_tile<CONN>(lx + dx, ly + dy, lz + dz) || gx + dx < 0 || gx + dx >= P.width ||
                    gy + dy < 0 || gy + dy >= P.height || gz + dz < 0 || gz + dz >= P.depth)
                    continue;
                const long long x = g + P.step[d];
                if (__ldcg(&P.dist[x]) == kInf && __ldcg(&P.residual[(d ^ 1) * P.n + x]) > 0)
                    blocks = true;
            }
        }
        const bool any_r = __syncthreads_or(in_r);
        const bool move = any_r && !__syncthreads_or(blocks);
        if (u) {
            if (e != e0)
                P.excess[g] = e;
            if (rt != rt0)
                P.sink_residual[g] = rt;
#pragma unroll
            for (int d = 0; d < CONN; d++)
                if (dirty & (1u << d))
                    P.residual[d * P.n + g] = r[d];
            if (move && in_r) {
                P.dist[g] = h;
                flipped++;
            } else if (rt > 0) {
                if (!last) {
                    pull_append(L, 1, pull_tile_of<CONN>(L, 1, gx, gy, gz));
                } else { /* listed for the far pull */
                    const unsigned long long pos = atomicAdd(&L.ctl[kPlOpen], 1ull);
                    if (pos < kPlOpenCap)
                        L.ctl[kPlOpenList + pos] = (unsigned long long)g;
                }
            }
        }
        __syncthreads(); /* the shared arrays are the next tile's */
    }
    block_add(pulls, &L.ctl[kPlPulls]);
    __syncthreads();
    block_add(flipped, &L.ctl[kPlFlipped]);
}

/* The far pull and the far drain (tenth session): one block, a BFS over residual arcs from one
 * node, level by level, with its queue and a visited hash in shared memory, then augmenting
 * paths along it. Two directions:
 *  - the far pull (FWD false; GCUT_CUDAGRID_PULL_FAR): from a source-side node `a` (INF) whose
 *    sink arc is open, backwards over U's residual arcs (v -> w, both at INF) to the nearest
 *    node with excess, then a push from it along the path into a's sink arc. If the BFS runs out
 *    first, its queue is R, every U node that reaches a, and R holds no excess: R moves to the
 *    sink side (height = BFS depth + 1) and U without R stays closed (a U node with a residual
 *    arc into R would be in R). A sink arc stays open there when the U region behind it crosses
 *    both tilings: in bench/warm_pull_emu on hard 1080p such an arc had excess 3-10 BFS levels
 *    away, past the tile's edge, and one to three paths filled it;
 *  - the far drain (FWD true; GCUT_CUDAGRID_PULL_FIX): from a node `e` at a finite height that
 *    still holds excess, forwards over residual arcs among finite nodes to the nearest node with
 *    a residual sink arc, then a push from e along the path into it. If the BFS runs out first,
 *    S, every finite node e reaches, has no way to the sink: S goes to INF (U with S is closed:
 *    S's residual arcs end in S or in U). In the emulator this is the excess that the sweeps
 *    and the tile closure left, 2-29 nodes from a sink arc or closed in 2-16.
 * Pushes follow residual arcs and respect the capacities; heights change only for R or S. So
 * the preflow stays a preflow, and a stop is still proven by the certificate after it. A BFS
 * that outgrows its queue, its hash or the launch's budget gives up and leaves the node as it
 * was. One block runs with nothing else beside it, so plain loads and stores suffice. */
struct FarShared {
    long long *qn;      /* the BFS queue: nodes */
    short *qp;          /* the parent's queue index (-1: the start) */
    signed char *qd;    /* the arc's direction: v -> parent (pull), parent -> v (drain) */
    unsigned short *ql; /* BFS depth */
    unsigned long long *hk;
    int *tail, *found, *fail;
    /* The chained fix: every search's nodes appended to touched (nullptr: not kept), *tcount
     * of them (the block's). */
    long long *touched;
    int *tcount;
};

/* Node v into the BFS's visited hash (open addressing): 1 new, 0 seen before, -1 full. */
__device__ int far_insert(unsigned long long *hk, long long v) {
    unsigned slot = (unsigned)(((unsigned long long)v * 0x9E3779B97F4A7C15ull) >> 53);
    for (int probe = 0; probe < kFarHash; probe++, slot = (slot + 1) & (kFarHash - 1)) {
        const unsigned long long old = atomicCAS(&hk[slot], ~0ull, (unsigned long long)v);
        if (old == ~0ull)
            return 1;
        if (old == (unsigned long long)v)
            return 0;
    }
    return -1;
}

/* One BFS from `start`, by every thread of the block: the queue index of the nearest target (a
 * node with excess for the pull, with a residual sink arc for the drain), kFarQueue when the
 * search ran out (its nodes are sh.qn[0, *sh.tail)), -1 when it gave up. */
template <int CONN, bool FWD>
__device__ int far_bfs(const Problem &P, const FarShared &sh, long long start) {
    const int tid = threadIdx.x;
    for (int i = tid; i < kFarHash; i += kFarThreads)
        sh.hk[i] = ~0ull;
    __syncthreads();
    if (tid == 0) {
        far_insert(sh.hk, start);
        sh.qn[0] = start;
        sh.qp[0] = -1;
        sh.qd[0] = -1;
        sh.ql[0] = 0;
        *sh.tail = 1;
        *sh.found = (FWD ? P.sink_residual[start] > 0 : P.excess[start] > 0) ? 0 : kFarQueue;
        *sh.fail = 0;
    }
    __syncthreads();
    int head = 0;
    while (*sh.found == kFarQueue && !*sh.fail) {
        const int end = *sh.tail;
        __syncthreads(); /* every thread read end before any appends */
        if (head == end)
            break; /* the search ran out */
        for (int q = head + tid; q < end; q += kFarThreads) {
            const long long w = sh.qn[q];
            const NodeXYZ c(P, w);
#pragma unroll
            for (int d = 0; d < CONN; d++) {
                if (!c.has<CONN>(P, d))
                    continue;
                const long long v = w + P.step[d];
                /* pull: U's arc v -> w (v's arc d ^ 1); drain: the finite arc w -> v (w's d) */
                if (FWD ? (P.dist[v] == kInf || P.residual[d * P.n + w] == 0)
                        : (P.dist[v] != kInf || P.residual[(d ^ 1) * P.n + v] == 0))
                    continue;
                const int fresh = far_insert(sh.hk, v);
                if (fresh <= 0) {
                    if (fresh < 0)
                        *sh.fail = 1;
                    continue;
                }
                const int pos = atomicAdd(sh.tail, 1);
                if (pos >= kFarQueue) {
                    *sh.fail = 1;
                    continue;
                }
                sh.qn[pos] = v;
                sh.qp[pos] = (short)q;
                sh.qd[pos] = (signed char)(FWD ? d : d ^ 1);
                sh.ql[pos] = (unsigned short)(sh.ql[q] + 1);
                if (FWD ? P.sink_residual[v] > 0 : P.excess[v] > 0)
                    atomicMin(sh.found, pos);
            }
        }
        head = end;
        __syncthreads();
    }
    const int found = *sh.found, failed = *sh.fail;
    __syncthreads(); /* every thread read the verdict before the next search resets it */
    return failed ? -1 : found;
}

/* The far pull (FWD false) or drain (FWD true) of one node, by every thread of the block: BFS
 * and augmenting paths until the node needs none (the pull: its sink arc full or the node moved
 * to the sink side; the drain: no excess or the node at INF), at most kFarPaths paths and
 * `budget` BFS nodes (shared by the launch). Counts the paths and the nodes moved (thread 0's);
 * returns true when the node needs nothing more. */
template <int CONN, bool FWD>
__device__ bool far_fix(const Problem &P, const FarShared &sh, long long start, long long &budget,
                        unsigned long long *paths, unsigned long long *moved) {
    const int tid = threadIdx.x;
    auto settled = [&]() {
        return FWD ? (P.dist[start] == kInf || P.excess[start] <= 0)
                   : (P.dist[start] != kInf || P.sink_residual[start] <= 0);
    };
    for (int path = 0; path < kFarPaths && budget > 0; path++) {
        if (settled())
            return true;
        const int found = far_bfs<CONN, FWD>(P, sh, start);
        const int tail = *sh.tail < kFarQueue ? *sh.tail : kFarQueue;
        budget -= tail;
        if (sh.touched != nullptr) { /* every node this search held, changed or not */
            const int base = *sh.tcount;
            for (int q = tid; q < tail && base + q < kFarTouched; q += kFarThreads)
                sh.touched[base + q] = sh.qn[q];
            __syncthreads(); /* every thread read *sh.tcount */
            if (tid == 0)
                *sh.tcount = base + tail;
            __syncthreads();
        }
        if (found < 0)
            break;
        if (found == kFarQueue) { /* nothing to reach: R to the sink side, or S to INF */
            for (int q = tid; q < tail; q += kFarThreads)
                P.dist[sh.qn[q]] = FWD ? kInf : sh.ql[q] + 1;
            *moved += tail;
            __syncthreads();
            return true;
        }
        if (tid == 0) {
            /* flow goes from the node with excess to the node with the sink arc */
            const long long from = FWD ? start : sh.qn[found], to = FWD ? sh.qn[found] : start;
            long long b = P.excess[from];
            if (b > P.sink_residual[to])
                b = P.sink_residual[to];
            for (int q = found; q > 0; q = sh.qp[q]) {
                const long long tail_node = FWD ? sh.qn[sh.qp[q]] : sh.qn[q];
                const unsigned r = P.residual[sh.qd[q] * P.n + tail_node];
                if (b > (long long)r)
                    b = r;
            }
            for (int q = found; q > 0; q = sh.qp[q]) {
                const long long tail_node = FWD ? sh.qn[sh.qp[q]] : sh.qn[q],
                                head_node = FWD ? sh.qn[q] : sh.qn[sh.qp[q]];
                P.residual[sh.qd[q] * P.n + tail_node] -= (unsigned)b;
                P.residual[(sh.qd[q] ^ 1) * P.n + head_node] += (unsigned)b;
            }
            P.excess[from] -= b;
            P.sink_residual[to] -= (int)b;
            (*paths)++;
        }
        __syncthreads();
    }
    const bool done = settled();
    __syncthreads();
    return done;
}

#define GCUT__FAR_SHARED(sh)                                                                       \
    __shared__ long long far_qn[kFarQueue];                                                        \
    __shared__ short far_qp[kFarQueue];                                                            \
    __shared__ signed char far_qd[kFarQueue];                                                      \
    __shared__ unsigned short far_ql[kFarQueue];                                                   \
    __shared__ unsigned long long far_hk[kFarHash];                                                \
    __shared__ int far_tail, far_found, far_fail, far_tcount;                                      \
    const FarShared sh = {far_qn,    far_qp,     far_qd,    far_ql,   far_hk,                      \
                          &far_tail, &far_found, &far_fail, touched_, &far_tcount}

/* The far pull after the last pull pass, on the sink arcs it left open (the first kPlOpenCap). */
template <int CONN>
__global__ void __launch_bounds__(kFarThreads)
    pull_far_kernel(const Problem P, unsigned long long *ctl) {
    long long *const touched_ = nullptr;
    GCUT__FAR_SHARED(sh);
    const unsigned long long listed = ctl[kPlOpen];
    const int open = (int)(listed < kPlOpenCap ? listed : kPlOpenCap);
    unsigned long long paths = 0, moved = 0, left = listed - (unsigned long long)open;
    long long budget = kFarBudget;
    for (int k = 0; k < open; k++)
        if (!far_fix<CONN, false>(P, sh, (long long)ctl[kPlOpenList + k], budget, &paths, &moved))
            left++;
    if (threadIdx.x == 0) {
        ctl[kPlFarPaths] = paths;
        ctl[kPlFarLeft] = left;
        ctl[kPlFlipped] += moved;
    }
}

/* The closure certificate at node i (pull_check_kernel's test): a node at a finite height holding
 * excess, or a node of U (INF) with a residual sink arc or a residual arc to a finite node. */
template <int CONN> __device__ bool cert_against(const Problem &P, long long i) {
    if (P.dist[i] != kInf)
        return P.excess[i] > 0;
    if (P.sink_residual[i] > 0)
        return true;
#pragma unroll
    for (int d = 0; d < CONN; d++) /* arcs out of the grid have residual 0 */
        if (P.residual[d * P.n + i] > 0 && P.dist[i + P.step[d]] != kInf)
            return true;
    return false;
}

/* After a failed certificate that listed every node against it (at most kPlBadCap): the far
 * drain of each finite node with excess, the far pull of each U node with an open sink arc. A U
 * node with a residual arc to a finite node is left (none of the two applies); so are nodes
 * an earlier fix already settled. The certificate runs again after it. */
template <int CONN>
__global__ void __launch_bounds__(kFarThreads)
    pull_fix_kernel(const Problem P, unsigned long long *ctl, long long *touched) {
    long long *const touched_ = touched;
    GCUT__FAR_SHARED(sh);
    __shared__ unsigned long long recheck_bad;
    const unsigned long long listed = ctl[kPlBadCount];
    unsigned long long paths = 0, moved = 0, left = 0;
    long long budget = kFarBudget;
    if (touched != nullptr) {
        /* Chained behind the certificate (its verdict unread): nothing to do when it held or
         * did not list every node against it; kPlRechecked stays 0. */
        if (threadIdx.x == 0)
            ctl[kPlRechecked] = ctl[kPlRecheckBad] = 0;
        if (listed == 0 || listed > kPlBadCap)
            return;
        if (threadIdx.x == 0)
            far_tcount = 0, recheck_bad = 0;
        __syncthreads();
    }
    if (listed <= kPlBadCap)
        for (int k = 0; k < (int)listed; k++) {
            const long long i = (long long)ctl[kPlBadList + k];
            bool done = true;
            if (P.dist[i] != kInf) {
                if (P.excess[i] > 0)
                    done = far_fix<CONN, true>(P, sh, i, budget, &paths, &moved);
            } else if (P.sink_residual[i] > 0) {
                done = far_fix<CONN, false>(P, sh, i, budget, &paths, &moved);
            } else {
                done = false;
            }
            left += !done;
        }
    if (threadIdx.x == 0) {
        ctl[kPlFixPaths] += paths;
        ctl[kPlFixMoved] += moved;
        ctl[kPlFixLeft] += left;
    }
    if (touched == nullptr)
        return;
    /* The certificate again where the fix can have changed it. The fix writes heights, excess,
     * sink and arc residuals of the nodes its searches held only, and a node's test reads its
     * own values and its neighbours' heights: outside the listed nodes, the held ones and
     * their neighbours, every node passes as it did in the full check before. */
    __syncthreads(); /* the fixes' writes seen by the whole block */
    const int held = far_tcount < kFarTouched ? far_tcount : kFarTouched;
    const long long items = (long long)listed + (long long)held * (1 + CONN);
    unsigned long long bad = 0;
    for (long long it = threadIdx.x; it < items; it += kFarThreads) {
        long long i;
        if (it < (long long)listed) {
            i = (long long)ctl[kPlBadList + it];
        } else {
            const long long j = it - (long long)listed, t = touched[j / (1 + CONN)];
            const int k = (int)(j % (1 + CONN));
            if (k == 0) {
                i = t;
            } else {
                if (!NodeXYZ(P, t).has<CONN>(P, k - 1))
                    continue;
                i = t + P.step[k - 1];
            }
        }
        bad += cert_against<CONN>(P, i);
    }
    if (bad > 0)
        atomicAdd(&recheck_bad, bad);
    __syncthreads();
    if (threadIdx.x == 0) {
        /* a list that overflowed cannot vouch for what it missed */
        ctl[kPlRecheckBad] = far_tcount <= kFarTouched ? recheck_bad : 1 + recheck_bad;
        ctl[kPlRechecked] = 1;
    }
}

/* After the first sweep batch, over the tiles still listed active (tile list `list`): excess
 * that is stuck inside one tile joins the source side. Per tile, S = the finite nodes that a
 * finite node with excess reaches over residual arcs inside the tile (arcs into U are ignored:
 * U is closed and may take anything). If no node of S has a residual sink arc or a residual
 * arc to a finite node outside the tile, no excess of S can reach the sink and U with S is
 * closed: S goes to INF. All or nothing per tile. A neighbouring tile closing at the same time
 * can only make this one more careful (it reads a node as finite), and the certificate after it
 * is the judge either way. */
template <int CONN>
__global__ void __launch_bounds__(Geo<CONN>::T)
    stuck_close_kernel(const Problem P, int list, unsigned long long *ctl) {
    using G = Geo<CONN>;
    __shared__ unsigned char reach_s[G::T];
    __shared__ unsigned mask_s[G::T];
    const int tid = threadIdx.x;
    const int lx = tid % G::TX, ly = tid / G::TX % G::TY, lz = tid / (G::TX * G::TY);
    const int count = __ldcg(&P.count[list]);
    unsigned long long closed = 0;
    for (int k = blockIdx.x; k < count; k += gridDim.x) {
        const int tile = __ldcg(&P.list[list][k]);
        TilePos<CONN> pos(P, tile, lx, ly, lz);
        const bool fin = pos.valid && P.dist[pos.g] < kInf;
        unsigned m = 0;
        bool leaves = false;
        if (fin) {
#pragma unroll
            for (int d = 0; d < CONN; d++) {
                const int dx = dir_dx(CONN, d), dy = dir_dy(CONN, d), dz = dir_dz(CONN, d);
                if (pos.gx + dx < 0 || pos.gx + dx >= P.width || pos.gy + dy < 0 ||
                    pos.gy + dy >= P.height || pos.gz + dz < 0 || pos.gz + dz >= P.depth ||
                    P.residual[d * P.n + pos.g] == 0)
                    continue;
                if (in_tile<CONN>(lx + dx, ly + dy, lz + dz))
                    m |= 1u << d;
                else if (__ldcg(&P.dist[pos.g + P.step[d]]) < kInf)
                    leaves = true;
            }
        }
        bool reach = fin && P.excess[pos.g] > 0;
        mask_s[tid] = m;
        reach_s[tid] = reach;
        __syncthreads();
        for (;;) {
            bool now = reach;
            if (fin && !reach) {
#pragma unroll
                for (int d = 0; d < CONN; d++) {
                    /* the in-tile neighbour v + d reaches this node over its arc d ^ 1 */
                    if (!in_tile<CONN>(lx + dir_dx(CONN, d), ly + dir_dy(CONN, d),
                                       lz + dir_dz(CONN, d)))
                        continue;
                    const int v = tid + G::tid_step(d);
                    if (reach_s[v] && (mask_s[v] & (1u << (d ^ 1))))
                        now = true;
                }
            }
            __syncthreads();
            const bool grew = now && !reach;
            if (grew) {
                reach = true;
                reach_s[tid] = 1;
            }
            if (!__syncthreads_or(grew))
                break;
        }
        const bool bad = reach && (leaves || P.sink_residual[pos.g] > 0);
        const bool any = __syncthreads_or(reach);
        if (any && !__syncthreads_or(bad) && reach) {
            P.dist[pos.g] = kInf;
            closed++;
        }
        __syncthreads();
    }
    block_add(closed, &ctl[kPlClosed]);
}

/* The closure certificate alone (warm_check_kernel's verdict, kWarmBad, without its arc masks
 * and its count of loose heights, which only the incremental start and the sparse phase read):
 * a node at a finite height holds no excess; a node of U (INF) has no residual sink arc and no
 * residual arc to a finite node. A finite node reads its height and excess only, a node of U its
 * sink residual and then its arcs; nothing is written but the count and, with `ctl`, the nodes
 * against it (kPlBadCount, the first kPlBadCap in kPlBadList). */
template <int CONN>
__global__ void pull_check_kernel(const Problem P, unsigned long long *wc,
                                  unsigned long long *ctl) {
    unsigned long long bad = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x) {
        const bool b = cert_against<CONN>(P, i);
        if (b && ctl != nullptr) { /* the nodes against it, for pull_fix_kernel */
            const unsigned long long pos = atomicAdd(&ctl[kPlBadCount], 1ull);
            if (pos < kPlBadCap)
                ctl[kPlBadList + pos] = (unsigned long long)i;
        }
        bad += b;
    }
    block_add(bad, &wc[kWarmBad]);
}

/* The host side: the CertHook iterate() calls on a warm start after terminal marks (the
 * default warm path's sweeps on the kept heights), for a context made with
 * GCUT_CUDAGRID_WARM_PULL=1. start() queues the pull passes from the listed nodes (no wait);
 * check() queues the stuck closure over the first batch's active tiles and the certificate, and
 * waits for its verdict (with the repair's counters when they are still unread). */
template <int CONN> struct PullRun final : CertHook {
    CudaContext &C;
    bool proven = false;
    explicit PullRun(CudaContext &context) : C(context) {}

    PullLists lists() const {
        PullLists L;
        for (int p = 0; p < 2; p++) {
            L.list[p] = C.pl_list[p];
            L.flag[p] = C.pl_flag[p];
            for (int a = 0; a < 3; a++)
                L.vt[p][a] = C.pl_vt[p][a];
        }
        L.ctl = C.pl_ctl;
        return L;
    }

    gcut_status start(const unsigned *nodes, long long count) override {
        using G = Geo<CONN>;
        Session &S = C.S;
        cudaStream_t stream = S.stream;
        if (C.verbose) {
            for (cudaEvent_t &e : C.tev)
                if (e == nullptr)
                    GCUT__CUDA_TRY(cudaEventCreate(&e), "cudaEventCreate");
            GCUT__CUDA_TRY(cudaEventRecord(C.tev[0], stream), "cudaEventRecord");
        }
        const PullLists L = lists();
        GCUT__CUDA_TRY(cudaMemsetAsync(C.pl_ctl, 0, kPlWords * 8, stream), "memset");
        pull_open_kernel<CONN><<<item_blocks(S, count), 256, 0, stream>>>(S.P, L, nodes, count);
        GCUT__CUDA_TRY(cudaGetLastError(), "pull open kernel launch");
        trace_mark(S, "pull lists opened");
        const int passes = C.pl_shift ? 2 : 1;
        for (int p = 0; p < passes; p++)
            pull_kernel<CONN>
                <<<S.sweep_blocks, G::T, 0, stream>>>(S.P, L, p, C.pl_rounds, p == passes - 1);
        GCUT__CUDA_TRY(cudaGetLastError(), "pull kernel launch");
        trace_mark(S, "pull passes queued");
        if (C.pl_far) {
            pull_far_kernel<CONN><<<1, kFarThreads, 0, stream>>>(S.P, C.pl_ctl);
            GCUT__CUDA_TRY(cudaGetLastError(), "far pull kernel launch");
        }
        if (C.verbose)
            GCUT__CUDA_TRY(cudaEventRecord(C.tev[1], stream), "cudaEventRecord");
        return GCUT_OK;
    }

    /* The certificate and its read (with the repair's counters while unread): sets `proven`.
     * `again`: the second one, after a fix (no verbose event). `chain`: the fix queued right
     * behind the certificate, before the read (pull_fix_kernel with pl_touched: it runs only
     * when the certificate failed and listed every node against it, then rechecks the nodes it
     * can have changed), so that a failed certificate and its fix cost one wait. */
    gcut_status certify(bool again, bool chain = false) {
        Session &S = C.S;
        cudaStream_t stream = S.stream;
        GCUT__CUDA_TRY(cudaMemsetAsync(C.wc, 0, kWarmWords * 8, stream), "memset");
        GCUT__CUDA_TRY(cudaMemsetAsync(C.pl_ctl + kPlBadCount, 0, 8, stream), "memset");
        if (C.pl_lean_check)
            pull_check_kernel<CONN><<<S.node_blocks, 256, 0, stream>>>(S.P, C.wc, C.pl_ctl);
        else
            warm_check_kernel<CONN>
                <<<S.node_blocks, 256, 0, stream>>>(S.P, C.wc, nullptr, nullptr, nullptr);
        GCUT__CUDA_TRY(cudaGetLastError(), "warm check kernel launch");
        trace_mark(S, "certificate queued");
        if (C.verbose && !again)
            GCUT__CUDA_TRY(cudaEventRecord(C.tev[3], stream), "cudaEventRecord");
        if (chain) {
            pull_fix_kernel<CONN><<<1, kFarThreads, 0, stream>>>(S.P, C.pl_ctl, C.pl_touched);
            GCUT__CUDA_TRY(cudaGetLastError(), "pull fix kernel launch");
        }
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(C.host_wc, C.wc, kWarmWords * 8, cudaMemcpyDeviceToHost, stream),
            "read warm counters");
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(C.host_pl, C.pl_ctl, kPlWords * 8, cudaMemcpyDeviceToHost, stream),
            "read pull counters");
        if (S.repair_check)
            GCUT__CUDA_TRY(cudaMemcpyAsync(S.host_counters + kChanged, S.P.counters + kChanged,
                                           3 * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                           stream),
                           "read repair counters");
        trace_mark(S, again ? "check after fix queued" : "check queued");
        if (S.label_hook != nullptr) {
            S.label_hook->host_work();
            trace_mark(S, "host work done");
        }
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "warm certificate");
        trace_mark(S, "check read");
        proven = C.host_wc[kWarmBad] == 0 ||
                 (chain && C.host_pl[kPlRechecked] == 1 && C.host_pl[kPlRecheckBad] == 0);
        return GCUT_OK;
    }

    gcut_status check(int list, bool *proven_out) override {
        using G = Geo<CONN>;
        Session &S = C.S;
        cudaStream_t stream = S.stream;
        *proven_out = false;
        if (C.verbose)
            GCUT__CUDA_TRY(cudaEventRecord(C.tev[2], stream), "cudaEventRecord");
        if (C.pl_close)
            stuck_close_kernel<CONN><<<S.sweep_blocks, G::T, 0, stream>>>(S.P, list, C.pl_ctl);
        trace_mark(S, "stuck closure queued");
        /* The fix: every node against it listed, few enough; then the certificate again, or
         * (chained) the recheck of what the fix touched, with the same wait. */
        const bool chain = C.pl_fix && C.pl_lean_check && C.pl_chain;
        gcut_status st = certify(false, chain);
        if (st != GCUT_OK)
            return st;
        const bool fix = C.host_wc[kWarmBad] != 0 && C.pl_fix && C.pl_lean_check &&
                         C.host_pl[kPlBadCount] <= kPlBadCap;
        const unsigned long long bad_before = C.host_wc[kWarmBad];
        if (fix && !chain) {
            pull_fix_kernel<CONN><<<1, kFarThreads, 0, stream>>>(S.P, C.pl_ctl, nullptr);
            GCUT__CUDA_TRY(cudaGetLastError(), "pull fix kernel launch");
            if ((st = certify(true)) != GCUT_OK)
                return st;
        }
        *proven_out = proven;
        if (C.verbose && fix)
            fprintf(stderr,
                    "cuda-grid: warm pull: certificate failed (%llu nodes against it); fix%s: %llu "
                    "paths, %llu nodes moved, %llu nodes not settled; certificate %s (%llu "
                    "nodes against it%s)\n",
                    bad_before, chain ? " (chained)" : "", C.host_pl[kPlFixPaths],
                    C.host_pl[kPlFixMoved], C.host_pl[kPlFixLeft], proven ? "holds" : "fails",
                    chain ? C.host_pl[kPlRecheckBad] : C.host_wc[kWarmBad],
                    chain ? ", rechecked where the fix searched" : "");
        if (C.verbose) {
            const unsigned long long *w = C.host_pl;
            fprintf(stderr,
                    "cuda-grid: warm pull: %llu + %llu tiles pulled (%llu pushes, %llu nodes to "
                    "the sink side, %llu sink arcs left open; far pull %llu paths, %llu still "
                    "open), device %.3f ms; stuck closure %llu nodes to INF; certificate %s (%llu "
                    "nodes against it), device %.3f ms\n",
                    w[kPlCount0], w[kPlCount1], w[kPlPulls], w[kPlFlipped], w[kPlOpen],
                    w[kPlFarPaths], C.pl_far ? w[kPlFarLeft] : w[kPlOpen], ctx_lap(C, 0, 1),
                    w[kPlClosed], proven ? "holds" : "fails", C.host_wc[kWarmBad],
                    ctx_lap(C, 2, 3));
        }
        return GCUT_OK;
    }

    int checks() const override {
        return C.pl_checks;
    }

    int checks_after() const override {
        return C.pl_after;
    }
};
