/* grid_warm.cuh - cuda-grid's incremental warm re-solve (docs/CUDA-GRID.md, "Incremental warm
 * re-solves"): a relabel seeded from the changed nodes (Goldberg & Tarjan 1988, sec. 3: a valid
 * labelling bounds the distances from below), a closure certificate as the stop, flipped labels.
 * Included by cuda_grid.cu inside its anonymous namespace, after the kernels it uses. */

/* Words of a context's warm counters (CudaContext::wc). */
enum {
    kWarmBad = 0,   /* nodes that break the stop certificate (closure or an active node) */
    kWarmLoose = 1, /* finite heights that break validity (h(v) > 1 + h(w), or > 1 at the sink) */
    kWarmFlips = 2, /* labels that changed since the labels the host holds */
    kWarmWords = 4
};

/* Seed of the incremental relabel: for node i = list[k] (every node when list is NULL) the
 * lowest height the labelling's constraints allow, min(1 if the sink arc is residual, 1 + h(w)
 * over residual arcs i -> w in arc_mask); if that is below h(i), h(i) falls to it and the tile
 * of i and its neighbours' tiles go on relax_async_kernel's first pass (mark_first_pass). Every
 * constraint held before except at the nodes checked here, so a tile left unmarked is at its
 * fixed point (a fall next to it marks it). The host zeroes qflag and rctl[kHead..kQOverflow]
 * first; block 0 sets the queue's head, tail and epoch as relabel_init_kernel does. */
template <int CONN>
__global__ void warm_seed_kernel(const Problem P, const unsigned *list, long long count) {
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
            mark_first_pass<CONN>(P, i);
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        P.rctl[kHead] = 0;
        P.rctl[kTail] = first_count(P);
        P.rctl[kEpoch] += 1;
    }
}

/* The stop certificate and the next warm start's snapshot, one thread per node: arc_mask is
 * rewritten from the residuals; wc[kWarmBad] counts nodes with excess at a finite height, and
 * nodes at INF with a residual sink arc or a residual arc to a finite height (U = {h = INF} not
 * closed); wc[kWarmLoose] counts finite heights that break h(v) <= 1 + h(w) on a residual arc
 * or h(v) <= 1 on a residual sink arc. wc[kWarmBad] == 0 proves the preflow maximum: every
 * node with excess is in U, and no residual path leaves U. */
template <int CONN> __global__ void warm_check_kernel(const Problem P, unsigned long long *wc) {
    unsigned long long bad = 0, loose = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned mask = 0;
#pragma unroll
        for (int d = 0; d < CONN; d++)
            if (P.residual[d * P.n + i] > 0)
                mask |= 1u << d;
        P.arc_mask[i] = mask;
        const int h = P.dist[i];
        const int rt = P.sink_residual[i];
        bool b = false, l = false;
        if (h == kInf) {
            b = rt > 0;
#pragma unroll
            for (int d = 0; d < CONN; d++)
                if ((mask & (1u << d)) && P.dist[i + P.step[d]] != kInf)
                    b = true;
        } else {
            b = P.excess[i] > 0;
            l = rt > 0 && h > 1;
#pragma unroll
            for (int d = 0; d < CONN; d++)
                if (mask & (1u << d)) {
                    const int hn = P.dist[i + P.step[d]];
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
