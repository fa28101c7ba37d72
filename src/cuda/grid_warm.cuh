/* grid_warm.cuh - cuda-grid's incremental warm re-solve (docs/CUDA-GRID.md, "Incremental warm
 * re-solves"): a relabel seeded from the changed nodes (Goldberg & Tarjan 1988, sec. 3: a valid
 * labelling bounds the distances from below), a closure certificate as the stop, flipped labels.
 * Included by cuda_grid.cu inside its anonymous namespace, after the kernels it uses. */

/* Words of a context's warm counters (CudaContext::wc). */
enum {
    kWarmBad = 0,   /* nodes that break the stop certificate (closure or an active node) */
    kWarmLoose = 1, /* finite heights that break validity (h(v) > 1 + h(w), or > 1 at the sink) */
    kWarmFlips = 2, /* labels that changed since the labels the host holds */
    kWarmHits = 3,  /* closure search: reached nodes with a residual sink arc */
    kWarmWords = 4
};

/* The incremental relabels run relax_async_kernel on a copy of the Problem whose first pass is
 * empty (queue_view: live set, with no tile in it, so first_count is 0; live_flag stays NULL, so
 * every tile may be queued): its seeds go straight onto the device queue, and a relabel that
 * touches a few hundred tiles does not pay the first pass's one atomic per tile of the grid
 * (~8100 at 1920x1080, measured ~0.2 ms with 377 tiles relaxed). */
inline Problem queue_view(const Problem &P) {
    Problem Q = P;
    Q.live = P.qflag; /* any non-NULL pointer: first_tile() is never asked for a position */
    Q.num_live = 0;
    return Q;
}

/* Before a queue_view relabel: head and tail at 0, a new epoch for the queue entries. */
__global__ void queue_start_kernel(const Problem Q) {
    Q.rctl[kHead] = 0;
    Q.rctl[kTail] = 0;
    Q.rctl[kEpoch] += 1;
}

/* Queue tile t (queue_neighbor_tile's steps, for a tile given directly). */
__device__ void warm_queue_tile(const Problem &Q, int t, unsigned epoch) {
    if (__ldcg(&Q.qflag[t]) != 0 || atomicCAS(&Q.qflag[t], 0, kQueued) != 0)
        return;
    atomicAdd(&Q.rctl[kPending], 1);
    const int p = atomicAdd(&Q.rctl[kTail], 1) - first_count(Q);
    if (p >= Q.queue_cap) {
        atomicExch(&Q.rctl[kQOverflow], 1);
        atomicSub(&Q.rctl[kPending], 1);
    } else {
        atomicExch(&Q.queue[p], ((unsigned long long)epoch << 32) | (unsigned)t);
    }
}

/* Queue the tile of node i and the tiles of its neighbours (mark_first_pass's set). */
template <int CONN> __device__ void warm_queue_node(const Problem &Q, long long i, unsigned epoch) {
    const int x = (int)(i % Q.width), y = (int)(i / Q.width % Q.height),
              z = (int)(i / ((long long)Q.width * Q.height));
    const int own = tile_of<CONN>(Q, x, y, z);
    warm_queue_tile(Q, own, epoch);
#pragma unroll
    for (int d = 0; d < CONN; d++) {
        const int nx = x + dir_dx(CONN, d), ny = y + dir_dy(CONN, d), nz = z + dir_dz(CONN, d);
        if (nx < 0 || nx >= Q.width || ny < 0 || ny >= Q.height || nz < 0 || nz >= Q.depth)
            continue;
        const int t = tile_of<CONN>(Q, nx, ny, nz);
        if (t != own)
            warm_queue_tile(Q, t, epoch);
    }
}

/* Seed of the incremental relabel (P a queue_view): for node i = list[k] (every node when list
 * is NULL) the lowest height the labelling's constraints allow, min(1 if the sink arc is
 * residual, 1 + h(w) over residual arcs i -> w in arc_mask); if that is below h(i), h(i) falls
 * to it and the tile of i and its neighbours' tiles are queued. Every constraint held before
 * except at the nodes checked here, so a tile left unqueued is at its fixed point (a fall next
 * to it queues it). The host zeroes qflag and rctl[kHead..kQOverflow] and runs
 * queue_start_kernel first. */
template <int CONN>
__global__ void warm_seed_kernel(const Problem P, const unsigned *list, long long count) {
    const unsigned epoch = (unsigned)P.rctl[kEpoch];
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
         k += (long long)gridDim.x * blockDim.x) {
        const long long i = list != nullptr ? (long long)list[k] : k;
        const int h = P.dist[i];
        if (h <= 1)
            continue;
        int target = P.sink_residual[i] > 0 ? 1 : kInf;
        const unsigned mask = P.arc_mask[i];
#pragma unroll
        for (int d = 0; d < CONN; d++)
            if (mask & (1u << d)) {
                const int hn = __ldcg(&P.dist[i + P.step[d]]);
                if (hn < kInf && hn + 1 < target)
                    target = hn + 1;
            }
        if (target < h) {
            atomicMin(&P.dist[i], target);
            warm_queue_node<CONN>(P, i, epoch);
        }
    }
}

/* The closure search (after a sweep batch left active tiles): which finite nodes the excess
 * can reach. Q is the solve's Problem with dist = the search's distances (aux) and arc_mask = the
 * reversed arcs (rmask): bit d of node x is set when x and its neighbour y = x + step[d] are both
 * finite and the arc y -> x is residual, so relax_async_kernel over Q gives aux(x) = the length of
 * the shortest residual path from a node with excess to x through finite nodes (INF: none). Nodes
 * at INF in P take no part (their set is closed: nothing leaves it). Seeds (aux 0, their tiles
 * queued): finite nodes with excess. Q is a queue_view, prepared as for warm_seed_kernel. */
template <int CONN> __global__ void closure_init_kernel(const Problem P, const Problem Q) {
    const unsigned epoch = (unsigned)P.rctl[kEpoch];
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x) {
        const int h = P.dist[i];
        unsigned rmask = 0;
        int a = kInf;
        if (h != kInf) {
            const NodeXYZ c(P, i);
#pragma unroll
            for (int d = 0; d < CONN; d++) {
                if (!c.has<CONN>(P, d))
                    continue;
                const long long j = i + P.step[d];
                if (P.dist[j] != kInf && P.residual[(d ^ 1) * P.n + j] > 0)
                    rmask |= 1u << d;
            }
            if (P.excess[i] > 0)
                a = 0;
        }
        Q.arc_mask[i] = rmask;
        Q.dist[i] = a;
        if (a == 0)
            warm_queue_node<CONN>(Q, i, epoch);
    }
}

/* The closure search's verdict: wc[kWarmHits] counts reached nodes (aux < INF) with a residual
 * sink arc; then the excess may still reach the sink and nothing is applied. */
__global__ void closure_hits_kernel(const Problem P, const int *aux, unsigned long long *wc) {
    unsigned long long hits = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x)
        hits += aux[i] < kInf && P.sink_residual[i] > 0;
    block_add(hits, &wc[kWarmHits]);
}

/* The stop certificate and the next warm start's snapshot, one thread per node: arc_mask is
 * rewritten from the residuals; wc[kWarmBad] counts nodes with excess at a finite height, and
 * nodes at INF with a residual sink arc or a residual arc to a finite height (U = {h = INF} not
 * closed); wc[kWarmLoose] counts finite heights that break h(v) <= 1 + h(w) on a residual arc
 * or h(v) <= 1 on a residual sink arc. wc[kWarmBad] == 0 proves the preflow maximum: every
 * node with excess is in U, and no residual path leaves U. With aux (a closure search ran), when
 * it hit no sink arc and its queue did not overflow, the nodes it reached are set to INF first
 * (heights read through eff(), so that the whole pass sees them so); the certificate alone
 * decides whether that was right. */
template <int CONN>
__global__ void warm_check_kernel(const Problem P, unsigned long long *wc, const int *aux,
                                  const unsigned *gate, const int *gap) {
    /* gate (the sparse phase, grid_sparse.cuh): a non-zero count of nodes still listed as active
     * fails the certificate at once (one of them holds excess at a finite height, or did when
     * listed), without the pass; arc_mask is then left as it was (a global relabel follows). */
    if (gate != nullptr && *gate != 0) {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            atomicAdd(&wc[kWarmBad], 1ull);
        return;
    }
    const bool apply = aux != nullptr && wc[kWarmHits] == 0 && P.rctl[kQOverflow] == 0;
    /* gap (the sparse phase's gap rule): heights above that empty level count as INF, and are
     * set so. */
    const int above = gap != nullptr ? *gap : kInf;
    auto eff = [&](long long j) {
        const int hj = P.dist[j];
        return (apply && aux[j] < kInf) || (hj != kInf && hj > above) ? kInf : hj;
    };
    unsigned long long bad = 0, loose = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned mask = residual_mask<CONN>(P, i);
        P.arc_mask[i] = mask;
        int h = P.dist[i];
        if ((apply && h != kInf && aux[i] < kInf) || (h != kInf && h > above)) {
            h = kInf;
            P.dist[i] = kInf;
        }
        const int rt = P.sink_residual[i];
        bool b = false, l = false;
        if (h == kInf) {
            b = rt > 0;
#pragma unroll
            for (int d = 0; d < CONN; d++)
                if ((mask & (1u << d)) && eff(i + P.step[d]) != kInf)
                    b = true;
        } else {
            b = P.excess[i] > 0;
            l = rt > 0 && h > 1;
#pragma unroll
            for (int d = 0; d < CONN; d++)
                if (mask & (1u << d)) {
                    const int hn = eff(i + P.step[d]);
                    if (hn < kInf && h > hn + 1)
                        l = true;
                }
        }
        bad += b;
        loose += l;
    }
    block_add(bad, &wc[kWarmBad]);
    __syncthreads();
    block_add(loose, &wc[kWarmLoose]);
}

/* Labels that differ between dnew and dlab: dlab takes the new label and the node goes to
 * flips as i | (label << 31) (the first cap of them; wc[kWarmFlips] counts all). One atomic
 * per warp that has a flip. */
__global__ void flips_kernel(long long n, const unsigned char *dnew, unsigned char *dlab,
                             unsigned *flips, long long cap, unsigned long long *wc) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long start = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    /* Whole warps run every iteration (the bound is rounded up), so the ballots are full. */
    const long long end = (n + 31) / 32 * 32;
    for (long long i = start; i < end; i += stride) {
        const bool in = i < n;
        const unsigned char a = in ? dnew[i] : 0;
        const bool flip = in && a != dlab[i];
        const unsigned ballot = __ballot_sync(0xffffffffu, flip);
        if (ballot == 0)
            continue;
        unsigned long long base = 0;
        const int leader = __ffs(ballot) - 1;
        if (lane == leader)
            base = atomicAdd(&wc[kWarmFlips], (unsigned long long)__popc(ballot));
        base = __shfl_sync(0xffffffffu, base, leader);
        if (flip) {
            dlab[i] = a;
            const long long pos = (long long)base + __popc(ballot & ((1u << lane) - 1u));
            if (pos < cap)
                flips[pos] = (unsigned)i | (a == GCUT_SINK ? 0x80000000u : 0u);
        }
    }
}
