/* grid_sparse.cuh - cuda-grid's sparse phase of a warm re-solve after terminal marks
 * (docs/CUDA-GRID.md, "A sparse phase for warm re-solves"): push-relabel on a list of active
 * nodes (Goldberg & Tarjan 1988, sec. 3; one thread per node, Hong's lock-free rule), the stop
 * proven by a global relabel or by the closure certificate of grid_warm.cuh. Included by
 * cuda_grid.cu inside its anonymous namespace, after CudaContext. */

/* Control words of the sparse lists (CudaContext::sp_ctl, device): entries appended to each of
 * the three rotating lists (counted past the room too: a full list drops entries, never
 * overwrites), then the discharges and pushes done (for --verbose). */
enum {
    kSpDropped = 3,
    kSpDischarges = 4,
    kSpPushes = 5,
    kSpGapped = 6,
    kSpOpen = 7, /* listed nodes that the local closure did not close */
    kSpWords = 8
};

/* The local closure: at most kClosureBlocks nodes left listed are searched, each by one block,
 * over at most kClosureRoom nodes. */
constexpr int kClosureBlocks = 64;
constexpr int kClosureRoom = 1024;

/* Height levels counted for the gap rule (heights 1 .. kSpLevels - 1; higher ones are not
 * counted, so no gap is found above them). */
constexpr int kSpLevels = 1024;

/* The three node lists of the sparse phase, each `cap` entries; flag[i] is the stamp of the
 * last round whose output list took node i (one entry per node and round). */
struct SparseLists {
    unsigned *list[3];
    unsigned *ctl;
    unsigned *flag;
    long long cap;
    /* The gap rule (after a global relabel only; gap NULL: off): hist[h] counts the nodes at
     * finite height h < kSpLevels, *gap is an empty level (kInf: none known). */
    int *hist;
    int *gap;
};

/* The gap rule (Cherkassky & Goldberg 1997, sec. 3; valid heights): while no node is at level
 * g, no node above g can reach the sink, so a node whose height is or would become greater than
 * g goes to INF. Node i's relabel from h to nh keeps the counts; a level it empties becomes the
 * gap (the lowest such), one it fills again stops being it. @return nh, or kInf above the gap.
 * Heights raced by concurrent threads may be invalid; then a node can go to INF that still
 * reaches the sink, which the certificate after the phase finds (it fails, and a global relabel
 * follows): exact either way. */
__device__ int sparse_gap_relabel(const SparseLists &L, int h, int nh) {
    if (h < kSpLevels && atomicSub(&L.hist[h], 1) == 1)
        atomicMin(L.gap, h);
    const int g = __ldcg(L.gap);
    if (nh > g)
        return kInf;
    if (nh == g)
        atomicCAS(L.gap, g, kInf); /* level g is not empty any more */
    if (nh < kSpLevels)
        atomicAdd(&L.hist[nh], 1);
    return nh;
}

/* After a global relabel (exact distances): hist[h] = nodes at height h (1 <= h < kSpLevels),
 * from a block histogram in shared memory. hist is zeroed before. */
__global__ void sparse_hist_kernel(const Problem P, int *hist) {
    __shared__ int sh[kSpLevels];
    for (int t = threadIdx.x; t < kSpLevels; t += blockDim.x)
        sh[t] = 0;
    __syncthreads();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < P.n;
         i += (long long)gridDim.x * blockDim.x) {
        const int h = P.dist[i];
        if (h < kSpLevels)
            atomicAdd(&sh[h], 1);
    }
    __syncthreads();
    for (int t = threadIdx.x; t < kSpLevels; t += blockDim.x)
        if (sh[t] != 0)
            atomicAdd(&hist[t], sh[t]);
}

/* The lowest empty level of hist above 0 (exact distances fill every level up to the largest
 * finite one, so this is one above it), or kInf. One block. */
__global__ void sparse_gap_kernel(const int *hist, int *gap) {
    __shared__ int low;
    if (threadIdx.x == 0)
        low = kInf;
    __syncthreads();
    for (int t = 1 + threadIdx.x; t < kSpLevels; t += blockDim.x)
        if (hist[t] == 0)
            atomicMin(&low, t);
    __syncthreads();
    if (threadIdx.x == 0)
        *gap = low;
}

/* Put node j on list `out` for the next round, once per round (stamp). A full list drops it
 * and counts the drop: the node keeps its excess, and the global relabel or the certificate
 * that ends the phase finds it (exact either way). */
__device__ void sparse_append(const SparseLists &L, int out, long long j, unsigned stamp) {
    if (__ldcg(&L.flag[j]) == stamp || atomicExch(&L.flag[j], stamp) == stamp)
        return;
    const unsigned pos = atomicAdd(&L.ctl[out], 1u);
    if (pos < (unsigned long long)L.cap)
        L.list[out][pos] = (unsigned)j;
    else
        atomicAdd(&L.ctl[kSpDropped], 1u);
}

/* Take up to `want` of node u's excess, never more than it holds (a compare-and-swap loop: the
 * excess of a node at INF may be taken by its own thread and by its neighbours' pulls at once).
 * @return what was taken. */
__device__ long long sparse_claim(long long *excess, long long want) {
    unsigned long long *word = (unsigned long long *)excess;
    long long cur = (long long)__ldcg(word);
    while (cur > 0 && want > 0) {
        const long long take = cur < want ? cur : want;
        const long long seen =
            (long long)atomicCAS(word, (unsigned long long)cur, (unsigned long long)(cur - take));
        if (seen == cur)
            return take;
        cur = seen;
    }
    return 0;
}

/* One round of the sparse phase: a thread per listed node i (seeds when given, else list
 * `in`) discharges it in up to `steps` steps: to the sink while its sink arc is residual, then
 * to its lowest residual neighbour if that is lower, else it relabels to 1 + that neighbour's
 * height (INF when none is finite). A push appends its head to list `out`, and i goes there
 * too while it keeps excess at a finite height; list `clear` (read two rounds ago) is emptied
 * for the round after. Exact because only a global relabel with no active tile, or the closure
 * certificate, ends a solve: every push keeps a preflow, and heights are used only to choose
 * pushes. A node at finite height: its thread alone lowers its excess, sink residual and arc
 * residuals, by at most what it read, while other threads only raise them (atomics), and
 * before its height goes to INF its excess is settled (a fence orders the two). A node at INF
 * (source side): it pushes to the sink only, and with `pull`, when its sink arc stays residual
 * (a new sink capacity, or a repaired deficit), it pulls excess from neighbours at INF over
 * their residual arcs into it and on to the sink (u -> i -> sink: the arc u -> i is lowered
 * only by i's thread, and excess at INF is taken by sparse_claim). */
template <int CONN>
__global__ void sparse_round_kernel(const Problem P, const SparseLists L, int in, int out,
                                    int clear, unsigned stamp, const unsigned *seeds,
                                    long long seed_count, int steps, int pull) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
        L.ctl[clear] = 0;
    long long count = seeds != nullptr ? seed_count : (long long)L.ctl[in];
    if (count > L.cap && seeds == nullptr)
        count = L.cap;
    const unsigned *items = seeds != nullptr ? seeds : L.list[in];
    unsigned long long discharges = 0, pushes = 0;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
         k += (long long)gridDim.x * blockDim.x) {
        const long long i = items[k];
        long long e = (long long)__ldcg((const unsigned long long *)&P.excess[i]);
        int h = P.dist[i];
        int rt = P.sink_residual[i];
        if (h == kInf) {
            if (rt <= 0)
                continue;
            /* Source side with a residual sink arc: its own excess, then pulls. */
            discharges++;
            long long need = rt;
            need -= sparse_claim(&P.excess[i], need);
            if (pull && need > 0) {
                const NodeXYZ c3(P, i);
#pragma unroll
                for (int d = 0; d < CONN; d++) {
                    if (need == 0 || !c3.has<CONN>(P, d))
                        continue;
                    const long long u = i + P.step[d];
                    if (__ldcg(&P.dist[u]) != kInf)
                        continue;
                    __threadfence(); /* u's excess as settled before it went to INF */
                    const unsigned r = __ldcg(&P.residual[(d ^ 1) * P.n + u]);
                    if (r == 0)
                        continue;
                    const long long got =
                        sparse_claim(&P.excess[u], need < (long long)r ? need : (long long)r);
                    if (got > 0) {
                        atomicSub(&P.residual[(d ^ 1) * P.n + u], (unsigned)got);
                        atomicAdd(&P.residual[d * P.n + i], (unsigned)got);
                        need -= got;
                        pushes++;
                    }
                }
            }
            P.sink_residual[i] = (int)need;
            continue;
        }
        if (e <= 0)
            continue;
        discharges++;
        if (L.gap != nullptr && h > __ldcg(L.gap)) {
            P.dist[i] = kInf; /* above the gap: cut off from the sink (it keeps its excess) */
            atomicAdd(&L.ctl[kSpGapped], 1u);
            continue;
        }
        long long moved = 0;
        if (rt > 0) {
            const int a = e < rt ? (int)e : rt;
            rt -= a;
            P.sink_residual[i] = rt;
            e -= a;
            moved += a;
        }
        for (int s = 0; s < steps && e > 0 && h < kInf; s++) {
            int hmin = kInf, best = -1;
            unsigned rbest = 0;
#pragma unroll
            for (int d = 0; d < CONN; d++) {
                const unsigned r = __ldcg(&P.residual[d * P.n + i]);
                if (r > 0) {
                    const int hn = __ldcg(&P.dist[i + P.step[d]]);
                    if (hn < hmin) {
                        hmin = hn;
                        best = d;
                        rbest = r;
                    }
                }
            }
            if (best >= 0 && hmin < h) {
                const unsigned amount = e < (long long)rbest ? (unsigned)e : rbest;
                const long long j = i + P.step[best];
                atomicSub(&P.residual[best * P.n + i], amount);
                atomicAdd(&P.residual[(best ^ 1) * P.n + j], amount);
                atomicAdd((unsigned long long *)&P.excess[j], (unsigned long long)amount);
                e -= amount;
                moved += amount;
                pushes++;
                sparse_append(L, out, j, stamp);
            } else {
                int nh = hmin >= kInf - 1 ? kInf : hmin + 1;
                if (L.gap != nullptr) {
                    const int before = nh;
                    nh = sparse_gap_relabel(L, h, nh);
                    if (nh != before)
                        atomicAdd(&L.ctl[kSpGapped], 1u);
                }
                if (nh == kInf && moved != 0) {
                    /* Settle the excess before the height says INF (pulls read it then). */
                    atomicAdd((unsigned long long *)&P.excess[i], (unsigned long long)(-moved));
                    moved = 0;
                    __threadfence();
                }
                h = nh;
                P.dist[i] = h;
            }
        }
        if (moved != 0)
            atomicAdd((unsigned long long *)&P.excess[i], (unsigned long long)(-moved));
        if (e > 0 && h < kInf)
            sparse_append(L, out, i, stamp);
    }
    if (discharges != 0)
        atomicAdd(&L.ctl[kSpDischarges], (unsigned)discharges);
    if (pushes != 0)
        atomicAdd(&L.ctl[kSpPushes], (unsigned)pushes);
}

/* The nodes of the active tiles a global relabel listed (list `tiles` of P) that hold excess at
 * a finite height, onto sparse list `out` (each node once: one thread per node). */
template <int CONN>
__global__ void sparse_from_tiles_kernel(const Problem P, const SparseLists L, int tiles, int out) {
    using G = Geo<CONN>;
    const int lx = threadIdx.x % G::TX, ly = threadIdx.x / G::TX % G::TY,
              lz = threadIdx.x / (G::TX * G::TY);
    const int tile = P.list[tiles][blockIdx.x];
    TilePos<CONN> pos(P, tile, lx, ly, lz);
    if (pos.valid && P.excess[pos.g] > 0 && P.dist[pos.g] < kInf) {
        const unsigned at = atomicAdd(&L.ctl[out], 1u);
        if (at < (unsigned long long)L.cap)
            L.list[out][at] = (unsigned)pos.g;
        else
            atomicAdd(&L.ctl[kSpDropped], 1u);
    }
}

/* The local closure of the nodes still listed after the rounds (few: at most gridDim.x, else
 * nothing is tried): block b searches from listed node s = list[b] over residual arcs between
 * nodes at finite heights (a level-synchronous search, the nodes found in shared memory). When
 * it finds no node with a residual sink arc within kClosureRoom nodes, s's excess cannot reach
 * the sink (every residual path out of the set found leads to INF), so the set goes to INF; else
 * (or when the room runs out) s stays open (ctl[kSpOpen]). The rounds have ended, so the
 * residual graph does not change meanwhile; two blocks may set the same node to INF (the same
 * value). stamp_base + b marks block b's nodes in L.flag. Exact because the certificate after it
 * checks the INF set whatever the search did. */
__global__ void sparse_closure_kernel(const Problem P, const SparseLists L, int list,
                                      unsigned stamp_base, int conn) {
    __shared__ unsigned q[kClosureRoom];
    __shared__ int qn, fail;
    const long long count = L.ctl[list];
    if (count > (long long)gridDim.x || count > L.cap) {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            atomicAdd(&L.ctl[kSpOpen], 1u);
        return;
    }
    if ((long long)blockIdx.x >= count)
        return;
    const long long s = L.list[list][blockIdx.x];
    if (P.dist[s] == kInf || P.excess[s] <= 0)
        return; /* nothing at a finite height to close */
    const unsigned stamp = stamp_base + blockIdx.x;
    if (threadIdx.x == 0) {
        q[0] = (unsigned)s;
        L.flag[s] = stamp;
        qn = 1;
        fail = 0;
    }
    __syncthreads();
    int lo = 0, hi = 1;
    while (lo < hi) {
        for (int t = lo + threadIdx.x; t < hi; t += blockDim.x) {
            const long long v = q[t];
            if (P.sink_residual[v] > 0)
                fail = 1;
            for (int d = 0; d < conn; d++) {
                if (P.residual[d * P.n + v] == 0)
                    continue;
                const long long w = v + P.step[d];
                if (P.dist[w] == kInf || atomicExch(&L.flag[w], stamp) == stamp)
                    continue;
                const int pos = atomicAdd(&qn, 1);
                if (pos < kClosureRoom)
                    q[pos] = (unsigned)w;
                else
                    fail = 1;
            }
        }
        __syncthreads();
        if (fail)
            break;
        lo = hi;
        hi = qn < kClosureRoom ? qn : kClosureRoom;
        __syncthreads();
    }
    if (fail) {
        if (threadIdx.x == 0)
            atomicAdd(&L.ctl[kSpOpen], 1u);
        return;
    }
    for (int t = threadIdx.x; t < hi; t += blockDim.x)
        P.dist[q[t]] = kInf;
}

/* iterate()'s SparseHook for one warm solve of context C. */
template <int CONN> struct SparseRun final : SparseHook {
    CudaContext &C;
    bool proven = false;
    explicit SparseRun(CudaContext &context) : C(context) {}

    /* with_gap: the gap rule on (valid heights: after a global relabel). */
    SparseLists lists(bool with_gap) const {
        SparseLists L;
        for (int k = 0; k < 3; k++)
            L.list[k] = C.sp_lists + (size_t)k * (size_t)C.sp_cap;
        L.ctl = C.sp_ctl;
        L.flag = C.sp_flag;
        L.cap = C.sp_cap;
        L.hist = C.sp_hist;
        L.gap = with_gap && C.sp_gap ? C.sp_hist + kSpLevels : nullptr;
        return L;
    }

    /* `rounds` rounds, round r reading list r % 3 (the seeds instead when given, in round 0);
     * *last gets the list the last round filled. Stamps go on from the context's last one, and
     * the stamps restart from 1 (after a reset of every node's) before they would wrap. */
    gcut_status run_rounds(const SparseLists &L, const unsigned *seeds, long long seed_count,
                           long long expect, int rounds, int *last) {
        Session &S = C.S;
        cudaStream_t stream = S.stream;
        if (C.sp_stamp > 0xffffffffu - (unsigned)rounds - 1u) {
            GCUT__CUDA_TRY(cudaMemsetAsync(C.sp_flag, 0, (size_t)C.n * 4, stream), "memset");
            C.sp_stamp = 0;
        }
        const int blocks = item_blocks(S, expect > 2048 ? expect : 2048);
        for (int r = 0; r < rounds; r++)
            sparse_round_kernel<CONN><<<blocks, 256, 0, stream>>>(
                S.P, L, r % 3, (r + 1) % 3, (r + 2) % 3, ++C.sp_stamp, r == 0 ? seeds : nullptr,
                seed_count, C.sp_steps, C.sp_pull ? 1 : 0);
        GCUT__CUDA_TRY(cudaGetLastError(), "sparse round kernel launch");
        *last = rounds % 3;
        return GCUT_OK;
    }

    /* --verbose: the control words (a host wait; verbose runs only). */
    void report(const char *when, int last) {
        if (!C.verbose)
            return;
        unsigned w[kSpWords] = {};
        if (cudaMemcpyAsync(w, C.sp_ctl, sizeof w, cudaMemcpyDeviceToHost, C.S.stream) !=
                cudaSuccess ||
            cudaStreamSynchronize(C.S.stream) != cudaSuccess) {
            cudaGetLastError();
            return;
        }
        fprintf(stderr,
                "cuda-grid: sparse phase, %s: %u discharges, %u pushes, %u nodes dropped from "
                "full lists, %u nodes to INF by the gap rule, %u nodes still listed\n",
                when, w[kSpDischarges], w[kSpPushes], w[kSpDropped], w[kSpGapped], w[last]);
    }

    /* The certificate (warm_check_kernel), gated on the count of list `last` (nodes still
     * listed fail it at once), then read: one host wait. */
    gcut_status certify(int last, const int *gap, bool *ok) {
        Session &S = C.S;
        cudaStream_t stream = S.stream;
        GCUT__CUDA_TRY(cudaMemsetAsync(C.wc, 0, kWarmWords * 8, stream), "memset");
        warm_check_kernel<CONN>
            <<<S.node_blocks, 256, 0, stream>>>(S.P, C.wc, nullptr, C.sp_ctl + last, gap);
        GCUT__CUDA_TRY(cudaGetLastError(), "warm check kernel launch");
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(C.host_wc, C.wc, kWarmWords * 8, cudaMemcpyDeviceToHost, stream),
            "read warm counters");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "sparse certificate");
        *ok = C.host_wc[kWarmBad] == 0;
        return GCUT_OK;
    }

    gcut_status start(const unsigned *nodes, long long count, bool *ok) override {
        Session &S = C.S;
        *ok = false;
        GCUT__CUDA_TRY(cudaMemsetAsync(C.sp_ctl, 0, kSpWords * 4, S.stream), "memset");
        int last = 0;
        gcut_status st =
            count > 0 ? run_rounds(lists(false), nodes, count, count, C.sp_rounds, &last) : GCUT_OK;
        if (st != GCUT_OK)
            return st;
        report("on the kept heights", last);
        if (!C.sp_check)
            return GCUT_OK;
        int gate = last;
        if (C.sp_closure) {
            /* Nodes left listed: close the small pockets of excess that cannot reach the
             * sink; the certificate is then gated on the ones left open. */
            if (C.sp_stamp > 0xffffffffu - (unsigned)kClosureBlocks - 1u) {
                GCUT__CUDA_TRY(cudaMemsetAsync(C.sp_flag, 0, (size_t)C.n * 4, S.stream), "memset");
                C.sp_stamp = 0;
            }
            sparse_closure_kernel<<<kClosureBlocks, 256, 0, S.stream>>>(S.P, lists(false), last,
                                                                        C.sp_stamp + 1, CONN);
            GCUT__CUDA_TRY(cudaGetLastError(), "sparse closure kernel launch");
            C.sp_stamp += kClosureBlocks;
            gate = kSpOpen;
        }
        if ((st = certify(gate, nullptr, ok)) != GCUT_OK)
            return st;
        if (C.verbose)
            fprintf(stderr,
                    "cuda-grid: sparse phase on the kept heights: certificate %s (%llu nodes "
                    "against it)\n",
                    *ok ? "holds, no global relabel" : "fails, a global relabel follows",
                    C.host_wc[kWarmBad]);
        proven = *ok;
        return GCUT_OK;
    }

    gcut_status settle(int list, int tiles, bool *ok, bool *ran) override {
        using G = Geo<CONN>;
        Session &S = C.S;
        cudaStream_t stream = S.stream;
        *ok = false;
        *ran = false;
        if (C.sp_settle == 0)
            return GCUT_OK;
        *ran = true;
        GCUT__CUDA_TRY(cudaMemsetAsync(C.sp_ctl, 0, kSpWords * 4, stream), "memset");
        const SparseLists L = lists(true);
        if (L.gap != nullptr) {
            /* The heights are the relabel's distances: count them, and the gap is one above
             * the largest. */
            GCUT__CUDA_TRY(cudaMemsetAsync(C.sp_hist, 0, kSpLevels * 4, stream), "memset");
            sparse_hist_kernel<<<S.node_blocks, 256, 0, stream>>>(S.P, C.sp_hist);
            sparse_gap_kernel<<<1, 1024, 0, stream>>>(C.sp_hist, L.gap);
            GCUT__CUDA_TRY(cudaGetLastError(), "sparse gap kernel launch");
        }
        sparse_from_tiles_kernel<CONN><<<tiles, G::T, 0, stream>>>(S.P, L, list, 0);
        GCUT__CUDA_TRY(cudaGetLastError(), "sparse tiles kernel launch");
        int last = 0;
        gcut_status st = run_rounds(L, nullptr, 0, (long long)tiles * 32, C.sp_settle, &last);
        if (st != GCUT_OK || (st = certify(last, L.gap, ok)) != GCUT_OK)
            return st;
        report("after the first global relabel", last);
        if (C.verbose)
            fprintf(stderr,
                    "cuda-grid: sparse phase from %d active tiles: certificate %s (%llu nodes "
                    "against it)\n",
                    tiles, *ok ? "holds, no second relabel" : "fails", C.host_wc[kWarmBad]);
        proven = *ok;
        return GCUT_OK;
    }
};
