/* grid_sweep.cuh - cuda-grid's sweep with one block barrier per push/relabel round (Hussein et
 * al. 2007, VI-B tiles; the rounds of sweep_kernel with double-buffered shared state).
 * Included by cuda_grid.cu inside its namespace; docs/CUDA-GRID.md, "One barrier per round". */

/* sweep_kernel's rounds with one barrier each instead of three. Round k reads the heights of
 * buffer k % 2 and writes every node's new height into buffer (k + 1) % 2, and records its
 * pushes inside the tile in pdir/pamt[k % 2]; round k + 1 first pulls the pushes recorded in
 * round k, then pushes or relabels. Every node writes its slot of both arrays in every round,
 * so no array is reset, and the only ordering needed is the barrier at the end of each round:
 * a buffer written in round k was last read in round k - 1 (before that round's barrier), and
 * is read in round k + 1 (after this one's). The pushes, relabels and their order are those of
 * sweep_kernel (a node decides on its neighbours' heights of the previous round and its excess
 * after the previous round's pulls), so the visit computes the same state.
 * LEAN 1: a push across the tile edge also lowers its residual in global memory at once
 * (atomicSub; only the owner lowers it, others raise it atomically), and in-tile arcs that
 * changed are kept as a bit mask, so the loaded residuals need no second copy in registers
 * (8-connected: 80 -> fewer registers, more blocks per SM). MINB: __launch_bounds__'s
 * minimum blocks per SM (0: none). */
template <int CONN, int LEAN, int MINB>
__global__ void __launch_bounds__(Geo<CONN>::T, MINB > 0 ? MINB : 1)
    sweep1_kernel(const Problem P, int list_in, int list_out, int list_clear, unsigned stamp,
                  int rounds) {
    using G = Geo<CONN>;
    __shared__ int hs[2][G::BOX];
    __shared__ signed char pdir[2][G::T];
    __shared__ unsigned pamt[2][G::T];
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
        for (int b = tid; b < G::BOX; b += G::T) {
            const int bx = b % G::BX, by = b / G::BX % G::BY, bz = b / (G::BX * G::BY);
            const int gx = pos.x0 + bx - 1, gy = pos.y0 + by - 1, gz = pos.z0 + bz - G::HZ;
            const bool inside =
                gx >= 0 && gx < P.width && gy >= 0 && gy < P.height && gz >= 0 && gz < P.depth;
            const int v =
                inside ? __ldcg(&P.dist[((long long)gz * P.height + gy) * P.width + gx]) : kInf;
            hs[0][b] = v;
            hs[1][b] = v; /* the halo is read from both buffers */
        }
        unsigned r[CONN], r0[CONN];
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
        unsigned dirty = 0; /* LEAN: in-tile arcs whose residual changed */
        if (tid < 27)
            pushed_into[tid] = 0;
        __syncthreads();
        const int h0 = hs[0][me];
        int h = h0, cur = 0;
        bool pull = false; /* the last round's pushes are still to be pulled */
        /* Round `round` first pulls the pushes of the round before; the last pass only pulls. */
        for (int round = 0;; round++) {
            if (pull) {
#pragma unroll
                for (int d = 0; d < CONN; d++) {
                    const int dx = dir_dx(CONN, d), dy = dir_dy(CONN, d), dz = dir_dz(CONN, d);
                    if (in_tile<CONN>(lx - dx, ly - dy, lz - dz) &&
                        pdir[cur ^ 1][tid - G::tid_step(d)] == d) {
                        const unsigned amount = pamt[cur ^ 1][tid - G::tid_step(d)];
                        e += amount;
                        r[d ^ 1] += amount;
                        dirty |= 1u << (d ^ 1);
                    }
                }
            }
            if (round == rounds)
                break;
            const bool active = pos.valid && e > 0 && h < kInf;
            int dir = -1;
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
                            int hn = hs[cur][me + G::box_step(d)];
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
                                    dir = d;
                                    pamt[cur][tid] = amount;
                                    dirty |= 1u << d;
                                } else {
                                    long long w = pos.g + P.step[d];
                                    atomicAdd((unsigned long long *)&P.excess[w],
                                              (unsigned long long)amount);
                                    atomicAdd(&P.residual[(d ^ 1) * P.n + w], amount);
                                    if (LEAN)
                                        atomicSub(&P.residual[d * P.n + pos.g], amount);
                                    int tdx = lx + dx < 0 ? -1 : lx + dx >= G::TX ? 1 : 0;
                                    int tdy = ly + dy < 0 ? -1 : ly + dy >= G::TY ? 1 : 0;
                                    int tdz = lz + dz < 0 ? -1 : lz + dz >= G::TZ ? 1 : 0;
                                    atomicOr(&pushed_into[(tdz + 1) * 9 + (tdy + 1) * 3 + tdx + 1],
                                             1);
                                }
                            }
                    } else {
                        h = hmin >= kInf - 1 ? kInf : hmin + 1;
                    }
                }
            }
            pdir[cur][tid] = (signed char)dir;
            hs[cur ^ 1][me] = h;
            pull = __syncthreads_or(active) != 0;
            cur ^= 1;
            if (!pull)
                break; /* nobody was active: no push to pull, nothing changes any more */
        }
        const bool active = pos.valid && e > 0 && h < kInf;
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
            for (int d = 0; d < CONN; d++) {
                const bool inside =
                    in_tile<CONN>(lx + dir_dx(CONN, d), ly + dir_dy(CONN, d), lz + dir_dz(CONN, d));
                if (LEAN) {
                    if (inside && (dirty & (1u << d)))
                        P.residual[d * P.n + pos.g] = r[d];
                } else if (r[d] != r0[d]) {
                    if (inside)
                        P.residual[d * P.n + pos.g] = r[d];
                    else
                        atomicAdd(&P.residual[d * P.n + pos.g], r[d] - r0[d]);
                }
            }
        }
        /* The next tile's loads overwrite hs, pdir and pushed_into: every thread is past its
         * last read of them at the barrier below. */
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
