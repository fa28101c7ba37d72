/* cuda_general.cu - cuda-general: exact GPU push-relabel on any graph (Garrett & Saito 2009,
 * sec. 3: vertex and arc arrays, asynchronous push-relabel; He & Hong 2010's lock-free atomics),
 * CSR built on the device, BFS global relabel from the sink and cuda-grid's exact stop.
 * docs/CUDA-GENERAL.md. */
#include "internal.h"
#include "cuda_check.h"

#include <cooperative_groups.h>
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

namespace cg = cooperative_groups;

/* Height of a node that cannot reach the sink; above every BFS distance since n < kInf. */
constexpr int kInf = 0x7fffffff;
/* Degree above which a whole warp works a vertex (discharge and BFS expansion), so that a hub
 * does not serialise one thread while its warp idles. */
constexpr int kHeavyDegree = 32;
constexpr int kBlock = 256;

/* Layouts (the kernels' template parameter K). kCsr: the degree-aware CSR, a vertex's arcs
 * offset[v] .. offset[v + 1] - 1, heavy vertices a warp each. K > 0: the padded (regularised,
 * Garrett & Saito sec. 3) layout, every vertex padded to degree K with null arcs (residual 0,
 * head the vertex itself, paired with itself) and the arcs stored slot-major as in ELL sparse
 * matrices: arc k of vertex v at k * pitch + v, so that a warp's 32 consecutive vertices read 32
 * consecutive words per slot; K is a compile-time constant (the loops unroll). K = 0: padded to
 * the run-time degree pad_deg (at most kPadMaxDegree). */
constexpr int kCsr = -1;
constexpr int kPadMaxDegree = kHeavyDegree;

enum {
    kSumSink = 0,      /* sum of the sink capacities (flow = this - final sink residuals) */
    kSumSinkRes = 1,   /* sum of the final sink residuals */
    kPushes = 2,       /* pushes, arcs and sink */
    kSumExcess = 3,    /* sum of the preprocessed excesses */
    kSumCaps = 4,      /* sum of cap + rev_cap over the non-loop edges */
    kSumSinkHi = 5,    /* sum of the sink capacities' high 32 bits (int64 overflow check) */
    kSumExcessHi = 6,  /* the same for the excesses */
    kBigResiduals = 7, /* hybrid finish: sub residuals past INT32_MAX */
    kNumCounters = 8
};

/* Device state of one solve, passed to every kernel by value. A: arc index type (uint32 while
 * the arcs fit, else 64-bit); arc offsets are 64-bit always. */
template <typename A> struct Dev {
    long long n;
    unsigned long long *offset; /* [n + 1] first arc of each node */
    unsigned *head;             /* [arcs] target node */
    unsigned *res;              /* [arcs] residual; a pair sums to cap + rev_cap <= 2^32 - 2 */
    A *rev;                     /* [arcs] the paired arc */
    long long *excess;          /* [n] */
    long long *sink_res;        /* [n] residual of node -> sink */
    int *height;                /* [n] */
    unsigned *list[3];          /* work lists (BFS frontiers, active vertices), rotated */
    unsigned *count;            /* [kNumCtl] list sizes and control words (below) */
    unsigned *mark;             /* [n] stamp of the last list a node was put on */
    unsigned long long *counters;
    unsigned *sub; /* [n] hybrid finish: stamp of the forward search that reached the node */
    int spread;    /* BFS: the light frontier nodes' arcs spread over the warp's lanes */
    int aggregate; /* list appends: one atomicAdd per group of lanes (list_add) */
    int prefetch;  /* thread discharge: arcs loaded before pushing up to degree kPrefetch */
    unsigned long long pitch; /* padded layout: arc k of v at k * pitch + v (pitch >= n) */
    int pad_deg;              /* padded layout: the degree every vertex is padded to */
};

/* The arcs of v: arc k (0 <= k < *deg) is beg + k * arc_stride<K>(D). */
template <int K, typename A>
__device__ __forceinline__ unsigned long long arc_stride(const Dev<A> &D) {
    return K == kCsr ? 1ull : D.pitch;
}
template <int K, typename A>
__device__ __forceinline__ void arcs_of(const Dev<A> &D, unsigned v, unsigned long long *beg,
                                        unsigned long long *deg) {
    if (K == kCsr) {
        *beg = D.offset[v];
        *deg = D.offset[v + 1] - *beg;
    } else {
        *beg = v;
        *deg = K > 0 ? (unsigned long long)K : (unsigned long long)D.pad_deg;
    }
}
/* Whether v (of degree deg) is worked by a whole warp: CSR only (padded degrees are at most
 * kPadMaxDegree). */
template <int K> __device__ __forceinline__ bool is_heavy(unsigned long long deg) {
    return K == kCsr && deg > (unsigned long long)kHeavyDegree;
}

/* Append v to a list once per stamp. aggregate: the lanes of a warp that append together take
 * their slots with one atomicAdd on the list size (a sweep appends up to millions of nodes, and
 * one atomic each on a single counter serialises in L2); the lanes that reach this point
 * together (__activemask) form the group, so divergent callers stay correct. */
__device__ __forceinline__ void list_add(unsigned *list, unsigned *count, unsigned v, bool need,
                                         bool aggregate) {
    if (!aggregate) {
        if (need)
            list[atomicAdd(count, 1u)] = v;
        return;
    }
    const unsigned want = __ballot_sync(__activemask(), need);
    if (!need)
        return;
    const unsigned lane = threadIdx.x & 31u;
    const int leader = __ffs(want) - 1;
    unsigned base = 0;
    if ((int)lane == leader)
        base = atomicAdd(count, (unsigned)__popc(want));
    base = __shfl_sync(want, base, leader);
    list[base + (unsigned)__popc(want & ((1u << lane) - 1u))] = v;
}

__device__ __forceinline__ void list_append(unsigned *list, unsigned *count, unsigned *mark,
                                            unsigned v, unsigned stamp, bool aggregate) {
    list_add(list, count, v, atomicExch(&mark[v], stamp) != stamp, aggregate);
}

__device__ __forceinline__ long long load_excess(const long long *p) {
    return (long long)__ldcg(reinterpret_cast<const unsigned long long *>(p));
}

__device__ __forceinline__ void add_excess(long long *p, long long d) {
    atomicAdd(reinterpret_cast<unsigned long long *>(p), (unsigned long long)d);
}

/* Sum v over the warp into *target with one atomic per warp (every lane must call). */
__device__ __forceinline__ void warp_add(unsigned long long v, unsigned long long *target) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0 && v != 0)
        atomicAdd(target, v);
}

/* ---- construction: count, scan, scatter ---- */

__global__ void count_kernel(long long m, const unsigned *eu, const unsigned *ev, const int *cap,
                             const int *rcap, unsigned long long *deg,
                             unsigned long long *counters) {
    unsigned long long caps = 0;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < m;
         e += (long long)gridDim.x * blockDim.x) {
        unsigned u = eu[e], v = ev[e];
        if (u == v)
            continue;
        atomicAdd(&deg[u], 1ull);
        atomicAdd(&deg[v], 1ull);
        caps += (unsigned long long)(unsigned)cap[e] + (unsigned)rcap[e];
    }
    warp_add(caps, &counters[kSumCaps]);
}

template <typename A>
__global__ void scatter_kernel(const Dev<A> D, long long m, const unsigned *eu, const unsigned *ev,
                               const int *cap, const int *rcap, unsigned long long *cursor) {
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < m;
         e += (long long)gridDim.x * blockDim.x) {
        unsigned u = eu[e], v = ev[e];
        if (u == v)
            continue;
        unsigned long long pu = atomicAdd(&cursor[u], 1ull);
        unsigned long long pv = atomicAdd(&cursor[v], 1ull);
        D.head[pu] = v;
        D.head[pv] = u;
        D.res[pu] = (unsigned)cap[e];
        D.res[pv] = (unsigned)rcap[e];
        D.rev[pu] = (A)pv;
        D.rev[pv] = (A)pu;
    }
}

/* Terminal arcs (cuda-grid's preprocess): tw_source arrives in excess, tw_sink in sink_res;
 * c = min of the two goes straight through. Sums for the flow value and the overflow check. */
template <typename A> __global__ void init_kernel(const Dev<A> D) {
    unsigned long long sink = 0, sink_hi = 0, ex = 0, ex_hi = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < D.n;
         i += (long long)gridDim.x * blockDim.x) {
        long long s = D.excess[i], t = D.sink_res[i];
        long long c = s < t ? s : t;
        D.excess[i] = s - c;
        D.sink_res[i] = t - c;
        sink += (unsigned long long)t & 0xffffffffull;
        sink_hi += (unsigned long long)t >> 32;
        ex += (unsigned long long)(s - c) & 0xffffffffull;
        ex_hi += (unsigned long long)(s - c) >> 32;
    }
    warp_add(sink, &D.counters[kSumSink]);
    warp_add(sink_hi, &D.counters[kSumSinkHi]);
    warp_add(ex, &D.counters[kSumExcess]);
    warp_add(ex_hi, &D.counters[kSumExcessHi]);
}

/* ---- control words (count[]): list sizes, then the rotation index q, the BFS level of list
 * q % 3, steps done and a block counter. Kernel step q reads list q % 3, appends to list
 * (q + 1) % 3 (empty when it starts) and empties list (q + 2) % 3 for step q + 1. Every kernel
 * reads q on the device, so the host launches steps without knowing how far the device got.
 * A push step's appends are stamped 4q + 3 (step q's output): a stamp is never reused. The
 * BFS, the collect pass and bfs_init list each node at most once by construction (a CAS on the
 * height, one thread per node) and write no stamps. ---- */
enum {
    kQ = 3,
    kLevel = 4,
    kSweeps = 5,
    kBfsLevels = 6,
    kDone = 7,
    kSlotQ = 8, /* grid kernels: q after block 0's run of small steps */
    kStop0 = 9, /* grid kernels: block 0's stop decision of round r in kStop0 + (r & 1) */
    kNumCtl = 11
};

/* Threads of a one-block kernel that runs many steps while a list is small. */
constexpr int kSmallBlock = 1024;
/* Largest list a one-block push kernel takes: one entry per thread. */
constexpr unsigned kSmallMax = kSmallBlock;
/* Largest frontier a one-block BFS kernel takes by default. GCUT_CUDAGENERAL_BFS_SMALL sets it
 * (its warps loop over a larger list): a level of a few thousand nodes may cost less in one
 * block than a grid-wide launch; not measured yet, so the default stays one entry per thread
 * (docs/CUDA-GENERAL.md). */
constexpr int kSmallBfsMax = (int)kSmallMax;

/* End of a multi-block step: the last block to finish advances q (and the level), and counts
 * the step if it had work. */
__device__ void finish_step(unsigned *ctl, unsigned q, int counter, bool worked) {
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(&ctl[kDone], 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        atomicExch(&ctl[kDone], 0u);
        atomicExch(&ctl[kQ], q + 1);
        atomicAdd(&ctl[kLevel], 1u);
        if (worked)
            atomicAdd(&ctl[counter], 1u);
    }
}

/* ---- global relabel: BFS from the sink over reverse residual arcs ---- */

/* Level 1: the nodes with a residual arc to the sink; INF elsewhere. List q % 3 gets level 1
 * (the host emptied the lists). */
template <typename A> __global__ void bfs_init_kernel(const Dev<A> D) {
    const unsigned q = __ldcg(&D.count[kQ]);
    const int in = q % 3;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < D.n;
         i += (long long)gridDim.x * blockDim.x) {
        bool first = D.sink_res[i] > 0;
        D.height[i] = first ? 1 : kInf;
        if (first)
            list_add(D.list[in], &D.count[in], (unsigned)i, true, D.aggregate);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        D.count[kLevel] = 1;
}

/* A node u of level `level`: w, at the other end of arc a = u -> w, is at level + 1 if w -> u
 * is residual and w has no level yet. */
template <typename A>
__device__ __forceinline__ void bfs_visit(const Dev<A> &D, unsigned long long a, int level, int out,
                                          unsigned stamp) {
    /* Two rounds of independent loads (head and rev, then height and res), not four in turn. */
    const unsigned w = D.head[a];
    const A r = D.rev[a];
    const int hw = __ldcg(&D.height[w]);
    const unsigned rr = D.res[r];
    if ((hw != kInf) | (rr == 0))
        return;
    /* The CAS lists w once; no list mark needed. */
    (void)stamp;
    if (atomicCAS(&D.height[w], kInf, level + 1) == kInf)
        list_add(D.list[out], &D.count[out], w, true, D.aggregate);
}

/* Forward search of the hybrid finish (below): w, at the head of a residual arc a = u -> w, is
 * reached if it can reach the sink (finite height) and was not reached yet in search `fs`. */
template <typename A>
__device__ __forceinline__ void fwd_visit(const Dev<A> &D, unsigned long long a, int out,
                                          unsigned fs) {
    const unsigned r = D.res[a];
    const unsigned w = D.head[a];
    if (r == 0 || D.height[w] >= kInf || __ldcg(&D.sub[w]) == fs)
        return;
    if (atomicExch(&D.sub[w], fs) != fs)
        list_add(D.list[out], &D.count[out], w, true, D.aggregate);
}

/* Expand `total` frontier nodes of list `in` (level `level`) into list `out`, warps
 * warp_id, warp_id + warps, ...: heavy nodes a warp each, the light nodes' arcs spread over the
 * warp's lanes (D.spread; else a thread per light node). Fwd: the hybrid's forward search
 * (stamp `fs`), else the global relabel's BFS towards the sink. */
template <bool Fwd, int K, typename A>
__device__ void bfs_body(const Dev<A> &D, unsigned total, int in, int out, int level,
                         unsigned stamp, unsigned warp_id, unsigned warps) {
    const int lane = threadIdx.x & 31;
    const unsigned long long stride = arc_stride<K>(D);
    for (unsigned base = warp_id * 32u; base < total; base += warps * 32u) {
        const unsigned i = base + lane;
        const bool has = i < total;
        unsigned long long beg = 0, ndeg = 0;
        if (has)
            arcs_of<K>(D, __ldcg(&D.list[in][i]), &beg, &ndeg);
        const bool heavy = has && is_heavy<K>(ndeg);
        unsigned mask = K == kCsr ? __ballot_sync(0xffffffffu, heavy) : 0u;
        while (mask) {
            int leader = __ffs(mask) - 1;
            mask &= mask - 1;
            unsigned long long b = __shfl_sync(0xffffffffu, beg, leader);
            unsigned long long e = b + __shfl_sync(0xffffffffu, ndeg, leader);
            for (unsigned long long a = b + lane; a < e; a += 32) {
                if (Fwd)
                    fwd_visit(D, a, out, stamp);
                else
                    bfs_visit(D, a, level, out, stamp);
            }
        }
        if (!D.spread) {
            if (has && !heavy)
                for (unsigned long long k = 0; k < ndeg; k++) {
                    const unsigned long long a = beg + k * stride;
                    if (Fwd)
                        fwd_visit(D, a, out, stamp);
                    else
                        bfs_visit(D, a, level, out, stamp);
                }
            continue;
        }
        /* The light nodes' arcs (at most 32 each) spread over the lanes, 32 arcs a round: a
         * warp scan of the degrees, and each lane finds the node of its arc by a binary search
         * over the scan; a level then waits on one arc's loads per lane, not a node's arcs in
         * turn. */
        const unsigned deg = has && !heavy ? (unsigned)ndeg : 0u;
        unsigned incl = deg;
        for (int o = 1; o < 32; o <<= 1) {
            const unsigned up = __shfl_up_sync(0xffffffffu, incl, o);
            if (lane >= o)
                incl += up;
        }
        const unsigned arcs = __shfl_sync(0xffffffffu, incl, 31);
        for (unsigned c = 0; c < arcs; c += 32) {
            const unsigned k = c + lane;
            int j = 0;
            for (int step = 16; step > 0; step >>= 1)
                if (__shfl_sync(0xffffffffu, incl, j + step - 1) <= k)
                    j += step;
            const unsigned excl_j = __shfl_sync(0xffffffffu, incl - deg, j & 31);
            const unsigned long long beg_j = __shfl_sync(0xffffffffu, beg, j & 31);
            if (k < arcs) {
                const unsigned long long a = beg_j + (k - excl_j) * stride;
                if (Fwd)
                    fwd_visit(D, a, out, stamp);
                else
                    bfs_visit(D, a, level, out, stamp);
            }
        }
    }
}

/* One BFS level over the whole GPU (fs: the forward search's stamp, unused otherwise). */
template <bool Fwd, int K, typename A>
__global__ void __launch_bounds__(kBlock) bfs_level_kernel(const Dev<A> D, unsigned fs) {
    const unsigned q = __ldcg(&D.count[kQ]);
    const int level = (int)__ldcg(&D.count[kLevel]);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        D.count[(q + 2) % 3] = 0;
    const unsigned total = __ldcg(&D.count[q % 3]);
    if (total > 0)
        bfs_body<Fwd, K>(D, total, q % 3, (q + 1) % 3, level, Fwd ? fs : 4 * q + 3,
                         blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5),
                         gridDim.x * (blockDim.x >> 5));
    finish_step(D.count, q, kBfsLevels, total > 0);
}

/* BFS levels run by the calling block alone while the frontier (list *q % 3) holds 1 to
 * small_max nodes; *q and *level advance by the levels run. total_s: a __shared__ word of the
 * caller. bfs_small_kernel's loop, and bfs_grid_kernel's block 0 on a small frontier. */
template <bool Fwd, int K, typename A>
__device__ void bfs_block_levels(const Dev<A> &D, unsigned fs, unsigned small_max, unsigned *q,
                                 int *level, unsigned *total_s) {
    for (;;) {
        if (threadIdx.x == 0) {
            *total_s = __ldcg(&D.count[*q % 3]);
            D.count[(*q + 2) % 3] = 0;
        }
        __syncthreads();
        const unsigned total = *total_s;
        if (total == 0 || total > small_max)
            break;
        bfs_body<Fwd, K>(D, total, *q % 3, (*q + 1) % 3, *level, Fwd ? fs : 4 * *q + 3,
                         threadIdx.x >> 5, blockDim.x >> 5);
        __threadfence_block();
        __syncthreads();
        ++*q;
        ++*level;
    }
}

/* Many BFS levels in one block while the frontier is small (long thin graphs: a path of 10^5
 * nodes would otherwise cost 10^5 launches); stops when it is empty or too large. */
template <bool Fwd, int K, typename A>
__global__ void __launch_bounds__(kSmallBlock)
    bfs_small_kernel(const Dev<A> D, unsigned fs, unsigned small_max) {
    __shared__ unsigned total_s;
    const unsigned q_start = __ldcg(&D.count[kQ]);
    unsigned q = q_start;
    int level = (int)__ldcg(&D.count[kLevel]);
    bfs_block_levels<Fwd, K>(D, fs, small_max, &q, &level, &total_s);
    const unsigned steps = q - q_start;
    if (threadIdx.x == 0 && steps > 0) {
        D.count[kQ] = q;
        D.count[kLevel] = (unsigned)level;
        D.count[kBfsLevels] += steps;
    }
}

/* After the BFS: the active nodes (excess, and a path to the sink) go on list q % 3 (the host
 * emptied the lists). */
template <typename A> __global__ void collect_kernel(const Dev<A> D) {
    const unsigned q = __ldcg(&D.count[kQ]);
    const int in = q % 3;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < D.n;
         i += (long long)gridDim.x * blockDim.x)
        if (D.excess[i] > 0 && D.height[i] < kInf)
            list_add(D.list[in], &D.count[in], (unsigned)i, true, D.aggregate);
}

/* ---- lock-free push-relabel (He & Hong): only v's worker lowers v's excess, v's outgoing
 * residuals and v's sink residual, and writes v's height; everything others do to v's state
 * only raises it (atomicAdd). So each read is a lower bound and no push can overdraw. ---- */

/* Push d along arc a of v to w (h(w) < h(v) when read): the four atomics of one push. */
template <typename A>
__device__ __forceinline__ void push_arc(const Dev<A> &D, unsigned long long a, unsigned w,
                                         long long d, int out, unsigned stamp) {
    atomicSub(&D.res[a], (unsigned)d);
    atomicAdd(&D.res[D.rev[a]], (unsigned)d);
    long long old = (long long)atomicAdd(reinterpret_cast<unsigned long long *>(&D.excess[w]),
                                         (unsigned long long)d);
    if (old == 0)
        list_append(D.list[out], &D.count[out], D.mark, w, stamp, D.aggregate);
}

/* New height of v from the lowest residual neighbour's: INF when none or past n. */
__device__ __forceinline__ int relabel_height(int minh, long long n) {
    return minh >= kInf - 1 || (long long)minh + 1 >= n + 1 ? kInf : minh + 1;
}

/* Degree up to which a thread discharge loads all of a vertex's arcs before pushing (grids:
 * 4, 6 or 8 arcs). */
constexpr int kPrefetch = 8;

/* One thread discharges v (arcs beg + k * stride, k < deg) for up to `cycles` push/relabel
 * rounds. On the padded layout of degree K <= kPrefetch the prefetch covers exactly the K
 * slots, unrolled. */
template <int K, typename A>
__device__ void discharge_thread(const Dev<A> &D, unsigned v, unsigned long long beg,
                                 unsigned long long deg, int cycles, int out, unsigned stamp,
                                 unsigned long long *pushes) {
    constexpr int P = K > 0 && K <= kPrefetch ? K : kPrefetch;
    const unsigned long long stride = arc_stride<K>(D);
    const bool pre = D.prefetch && deg <= (unsigned long long)P;
    int h = __ldcg(&D.height[v]);
    if (h >= kInf)
        return;
    long long e = load_excess(&D.excess[v]);
    for (int c = 0; c < cycles && e > 0; c++) {
        long long sr = D.sink_res[v];
        if (sr > 0) {
            long long d = e < sr ? e : sr;
            D.sink_res[v] = sr - d;
            add_excess(&D.excess[v], -d);
            e -= d;
            ++*pushes;
            if (e == 0)
                break;
        }
        int minh = kInf;
        long long pushed = 0;
        if (pre) {
            /* Every arc's residual and head, then every residual neighbour's height, loaded
             * before the first push (three rounds of loads in flight, not three per arc); the
             * values are lower bounds as in the loop below, read once per round as there. */
            const int dk = (int)deg;
            unsigned r[P], w[P];
            int hw[P];
#pragma unroll
            for (int k = 0; k < P; k++) {
                r[k] = k < dk ? __ldcg(&D.res[beg + k * stride]) : 0u;
                w[k] = k < dk ? D.head[beg + k * stride] : 0u;
            }
#pragma unroll
            for (int k = 0; k < P; k++)
                hw[k] = r[k] > 0 ? __ldcg(&D.height[w[k]]) : kInf;
#pragma unroll
            for (int k = 0; k < P; k++) {
                if (r[k] == 0)
                    continue;
                if (hw[k] < h && e > 0) {
                    long long d = e < (long long)r[k] ? e : (long long)r[k];
                    push_arc(D, beg + k * stride, w[k], d, out, stamp);
                    e -= d;
                    pushed += d;
                    ++*pushes;
                    if (d < (long long)r[k] && hw[k] < minh)
                        minh = hw[k];
                } else if (hw[k] < minh) {
                    minh = hw[k];
                }
            }
        }
        for (unsigned long long k = pre ? deg : 0; k < deg; k++) {
            const unsigned long long a = beg + k * stride;
            unsigned r = __ldcg(&D.res[a]);
            if (r == 0)
                continue;
            unsigned w = D.head[a];
            int hw = __ldcg(&D.height[w]);
            if (hw < h && e > 0) {
                long long d = e < (long long)r ? e : (long long)r;
                push_arc(D, a, w, d, out, stamp);
                e -= d;
                pushed += d;
                ++*pushes;
                if (d < (long long)r && hw < minh)
                    minh = hw;
            } else if (hw < minh) {
                minh = hw;
            }
        }
        if (pushed > 0)
            add_excess(&D.excess[v], -pushed);
        if (e > 0) {
            /* Every lower residual arc was saturated: minh >= h, the relabel raises h. */
            h = relabel_height(minh, D.n);
            __stcg(&D.height[v], h);
            if (h >= kInf)
                return;
        }
        e = load_excess(&D.excess[v]);
    }
    if (e > 0)
        list_append(D.list[out], &D.count[out], D.mark, v, stamp, D.aggregate);
}

/* The warp discharges heavy v together: per chunk of 32 arcs, a warp prefix sum over the
 * admissible residuals shares the excess out so that every lane pushes on its own arc. */
template <typename A>
__device__ void discharge_warp(const Dev<A> &D, unsigned v, unsigned long long beg,
                               unsigned long long end, int cycles, int out, unsigned stamp,
                               unsigned long long *pushes) {
    const int lane = threadIdx.x & 31;
    int h = __shfl_sync(0xffffffffu, lane == 0 ? __ldcg(&D.height[v]) : 0, 0);
    if (h >= kInf)
        return;
    long long e = __shfl_sync(0xffffffffu, lane == 0 ? load_excess(&D.excess[v]) : 0ll, 0);
    for (int c = 0; c < cycles && e > 0; c++) {
        if (lane == 0) {
            long long sr = D.sink_res[v];
            if (sr > 0) {
                long long d = e < sr ? e : sr;
                D.sink_res[v] = sr - d;
                add_excess(&D.excess[v], -d);
                e -= d;
                ++*pushes;
            }
        }
        e = __shfl_sync(0xffffffffu, e, 0);
        if (e == 0)
            break;
        int minh = kInf;
        long long pushed_total = 0;
        for (unsigned long long base = beg; base < end && e > 0; base += 32) {
            const unsigned long long a = base + lane;
            unsigned r = 0, w = 0;
            int hw = kInf;
            if (a < end) {
                r = __ldcg(&D.res[a]);
                if (r > 0) {
                    w = D.head[a];
                    hw = __ldcg(&D.height[w]);
                }
            }
            const bool adm = r > 0 && hw < h;
            long long want = adm ? (long long)r : 0, incl = want;
            for (int o = 1; o < 32; o <<= 1) {
                long long up = __shfl_up_sync(0xffffffffu, incl, o);
                if (lane >= o)
                    incl += up;
            }
            const long long excl = incl - want;
            long long d = 0;
            if (adm && e > excl)
                d = e - excl < (long long)r ? e - excl : (long long)r;
            if (d > 0) {
                push_arc(D, a, w, d, out, stamp);
                ++*pushes;
            }
            if (r > 0 && (long long)r > d && hw < minh)
                minh = hw;
            const long long sum = __shfl_sync(0xffffffffu, incl, 31);
            const long long taken = sum < e ? sum : e;
            e -= taken;
            pushed_total += taken;
        }
        for (int o = 16; o > 0; o >>= 1) {
            int other = __shfl_down_sync(0xffffffffu, minh, o);
            minh = other < minh ? other : minh;
        }
        minh = __shfl_sync(0xffffffffu, minh, 0);
        if (lane == 0 && pushed_total > 0)
            add_excess(&D.excess[v], -pushed_total);
        if (e > 0) {
            h = relabel_height(minh, D.n);
            if (lane == 0)
                __stcg(&D.height[v], h);
            if (h >= kInf)
                return;
        }
        __syncwarp();
        e = __shfl_sync(0xffffffffu, lane == 0 ? load_excess(&D.excess[v]) : 0ll, 0);
    }
    if (lane == 0 && e > 0)
        list_append(D.list[out], &D.count[out], D.mark, v, stamp, D.aggregate);
}

/* The warp's 32 vertices (lanes with has): heavy ones by the whole warp in turn, light ones a
 * thread each. Every lane must call. */
template <int K, typename A>
__device__ __forceinline__ void discharge_lanes(const Dev<A> &D, bool has, unsigned v,
                                                unsigned long long beg, unsigned long long deg,
                                                int cycles, int out, unsigned stamp,
                                                unsigned long long *pushes) {
    const bool heavy = has && is_heavy<K>(deg);
    unsigned mask = K == kCsr ? __ballot_sync(0xffffffffu, heavy) : 0u;
    while (mask) {
        int leader = __ffs(mask) - 1;
        mask &= mask - 1;
        unsigned lv = __shfl_sync(0xffffffffu, v, leader);
        unsigned long long b = __shfl_sync(0xffffffffu, beg, leader);
        unsigned long long e = b + __shfl_sync(0xffffffffu, deg, leader);
        discharge_warp(D, lv, b, e, cycles, out, stamp, pushes);
    }
    if (has && !heavy)
        discharge_thread<K>(D, v, beg, deg, cycles, out, stamp, pushes);
}

/* One sweep over `total` vertices of list `in`: each discharged for up to `cycles` rounds;
 * vertices that keep or gain excess go on `out`. */
template <int K, typename A>
__device__ void push_body(const Dev<A> &D, unsigned total, int in, int out, unsigned stamp,
                          int cycles, unsigned warp_id, unsigned warps,
                          unsigned long long *pushes) {
    const int lane = threadIdx.x & 31;
    for (unsigned base = warp_id * 32u; base < total; base += warps * 32u) {
        const unsigned i = base + lane;
        const bool has = i < total;
        unsigned v = 0;
        unsigned long long beg = 0, deg = 0;
        if (has) {
            v = __ldcg(&D.list[in][i]);
            arcs_of<K>(D, v, &beg, &deg);
        }
        discharge_lanes<K>(D, has, v, beg, deg, cycles, out, stamp, pushes);
    }
}

/* A dense sweep: every vertex with excess, in id order (warps take 32 consecutive ids), instead
 * of the list's order; for a large active set, whose list order scatters the accesses, while
 * id order keeps a vertex's arcs and (on a grid numbered row by row) its neighbours' heights
 * near the previous vertex's. The output list is built as by a list sweep: a vertex that keeps
 * excess appends itself, one that gains excess from zero is appended by its pusher, so every
 * vertex with excess is on `out` afterwards. */
template <int K, typename A>
__device__ void push_dense_body(const Dev<A> &D, int out, unsigned stamp, int cycles,
                                unsigned warp_id, unsigned warps, unsigned long long *pushes) {
    const int lane = threadIdx.x & 31;
    for (long long base = (long long)warp_id * 32; base < D.n; base += (long long)warps * 32) {
        const long long i = base + lane;
        bool has = false;
        unsigned long long beg = 0, deg = 0;
        if (i < D.n && load_excess(&D.excess[i]) > 0) {
            has = true;
            arcs_of<K>(D, (unsigned)i, &beg, &deg);
        }
        discharge_lanes<K>(D, has, (unsigned)i, beg, deg, cycles, out, stamp, pushes);
    }
}

/* One sweep over the whole GPU. */
template <int K, typename A>
__global__ void __launch_bounds__(kBlock) push_kernel(const Dev<A> D, int cycles) {
    const unsigned q = __ldcg(&D.count[kQ]);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        D.count[(q + 2) % 3] = 0;
    const unsigned total = __ldcg(&D.count[q % 3]);
    unsigned long long pushes = 0;
    if (total > 0)
        push_body<K>(D, total, q % 3, (q + 1) % 3, 4 * q + 3, cycles,
                     blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5),
                     gridDim.x * (blockDim.x >> 5), &pushes);
    warp_add(pushes, &D.counters[kPushes]);
    finish_step(D.count, q, kSweeps, total > 0);
}

/* Up to max_steps sweeps in one block while the active list is small (late phases, long
 * paths); stops when it is empty or too large. */
template <int K, typename A>
__global__ void __launch_bounds__(kSmallBlock)
    push_small_kernel(const Dev<A> D, int cycles, unsigned max_steps) {
    __shared__ unsigned total_s;
    unsigned q = __ldcg(&D.count[kQ]);
    unsigned steps = 0;
    unsigned long long pushes = 0;
    while (steps < max_steps) {
        if (threadIdx.x == 0) {
            total_s = __ldcg(&D.count[q % 3]);
            D.count[(q + 2) % 3] = 0;
        }
        __syncthreads();
        const unsigned total = total_s;
        if (total == 0 || total > kSmallMax)
            break;
        push_body<K>(D, total, q % 3, (q + 1) % 3, 4 * q + 3, cycles, threadIdx.x >> 5,
                     blockDim.x >> 5, &pushes);
        __threadfence_block();
        __syncthreads();
        q++;
        steps++;
    }
    warp_add(pushes, &D.counters[kPushes]);
    if (threadIdx.x == 0 && steps > 0) {
        D.count[kQ] = q;
        D.count[kSweeps] += steps;
    }
}

/* ---- persistent grid kernels (third pass): a whole BFS, or a whole push phase, in one
 * cooperative launch, a grid-wide barrier per step instead of two launches per step and a host
 * read every few steps. While a step's list has at most small_max entries, block 0 runs the
 * steps alone (a __syncthreads each) and the other blocks wait at the next grid barrier: long
 * thin graphs keep the one-block kernels' cost per step.
 *
 * Agreement: every block must take the same branch at every barrier, or the grid deadlocks.
 * The list size of step q, count[q % 3], is final at the barrier that ends step q - 1 and no
 * one writes it before the barrier that ends step q in the grid-wide branch; block 0's run of
 * small steps would zero it two steps on, hence one barrier before the run (every block has
 * read it by then). What only block 0 knows (q after its run, the clock) crosses a barrier in
 * a control word; a stop decision uses word kStop0 + (round & 1), so that block 0's write for
 * round r + 1 cannot overtake a slow block's read for round r. ---- */

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* A bottom-up BFS level (Beamer et al. 2012's direction-optimising BFS): every node w without a
 * level looks for an arc w -> u with residual capacity into the frontier (height `level`) and
 * takes level + 1; only w's thread writes w's height, and nodes given level + 1 in this step
 * cannot pass for the frontier. Cheaper than the top-down step when the frontier's arcs
 * outnumber the unreached nodes' (a frontier of a large share of the graph). */
template <int K, typename A> __device__ void bfs_bottom_up(const Dev<A> &D, int level, int out) {
    const unsigned long long stride = arc_stride<K>(D);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < D.n;
         i += (long long)gridDim.x * blockDim.x) {
        if (__ldcg(&D.height[i]) != kInf)
            continue;
        unsigned long long beg = 0, deg = 0;
        arcs_of<K>(D, (unsigned)i, &beg, &deg);
        for (unsigned long long k = 0; k < deg; k++) {
            const unsigned long long a = beg + k * stride;
            if (D.res[a] != 0 && __ldcg(&D.height[D.head[a]]) == level) {
                __stcg(&D.height[i], level + 1);
                list_add(D.list[out], &D.count[out], (unsigned)i, true, D.aggregate);
                break;
            }
        }
    }
}

/* Every BFS level until the frontier is empty (Fwd: the hybrid's forward search `fs`); a level
 * whose frontier has more than bottom_up nodes (0: never) runs bottom-up. */
template <bool Fwd, int K, typename A>
__global__ void __launch_bounds__(kBlock)
    bfs_grid_kernel(const Dev<A> D, unsigned fs, unsigned small_max, unsigned bottom_up) {
    cg::grid_group grid = cg::this_grid();
    __shared__ unsigned total_s;
    unsigned q = __ldcg(&D.count[kQ]);
    int level = (int)__ldcg(&D.count[kLevel]);
    const unsigned q_start = q;
    const unsigned warp_id = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned warps = gridDim.x * (blockDim.x >> 5);
    for (;;) {
        const unsigned total = __ldcg(&D.count[q % 3]);
        if (total == 0)
            break;
        if (total <= small_max) {
            grid.sync();
            if (blockIdx.x == 0) {
                bfs_block_levels<Fwd, K>(D, fs, small_max, &q, &level, &total_s);
                if (threadIdx.x == 0)
                    D.count[kSlotQ] = q;
            }
            grid.sync();
            if (blockIdx.x != 0) {
                const unsigned nq = __ldcg(&D.count[kSlotQ]);
                level += (int)(nq - q);
                q = nq;
            }
            continue;
        }
        if (blockIdx.x == 0 && threadIdx.x == 0)
            D.count[(q + 2) % 3] = 0;
        if (!Fwd && bottom_up > 0 && total > bottom_up)
            bfs_bottom_up<K>(D, level, (q + 1) % 3);
        else
            bfs_body<Fwd, K>(D, total, q % 3, (q + 1) % 3, level, Fwd ? fs : 4 * q + 3, warp_id,
                             warps);
        grid.sync();
        q++;
        level++;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        D.count[kQ] = q;
        D.count[kLevel] = (unsigned)level;
        D.count[kBfsLevels] += q - q_start;
    }
}

/* Sweeps a push phase runs before its clock is read (the launch-per-step path read it after
 * 4 launches of each push kernel); GCUT_CUDAGENERAL_MIN_SWEEPS sets it. */
constexpr int kMinPhaseSteps = 4;

/* One push phase: sweeps until the active list is empty, max_steps sweeps, or (limit_ns > 0)
 * limit_ns nanoseconds on the device clock, read by block 0 after each step from step
 * min_steps on. A step whose list has at least `dense` entries (0: never) is a dense sweep. */
template <int K, typename A>
__global__ void __launch_bounds__(kBlock)
    push_grid_kernel(const Dev<A> D, int cycles, unsigned max_steps, unsigned long long limit_ns,
                     unsigned small_max, unsigned min_steps, unsigned dense) {
    cg::grid_group grid = cg::this_grid();
    __shared__ unsigned total_s;
    __shared__ int stop_s;
    unsigned q = __ldcg(&D.count[kQ]);
    const unsigned q_start = q;
    const unsigned warp_id = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned warps = gridDim.x * (blockDim.x >> 5);
    const unsigned long long t0 = blockIdx.x == 0 && threadIdx.x == 0 ? global_ns() : 0;
    unsigned long long pushes = 0;
    for (unsigned round = 0; q - q_start < max_steps; round++) {
        const unsigned total = __ldcg(&D.count[q % 3]);
        if (total == 0)
            break;
        const bool small = total <= small_max;
        if (small) {
            grid.sync();
            if (blockIdx.x == 0) {
                for (;;) {
                    if (threadIdx.x == 0) {
                        total_s = __ldcg(&D.count[q % 3]);
                        D.count[(q + 2) % 3] = 0;
                        stop_s =
                            q - q_start >= max_steps || (limit_ns > 0 && q - q_start >= min_steps &&
                                                         global_ns() - t0 >= limit_ns);
                    }
                    __syncthreads();
                    const unsigned t = total_s;
                    if (t == 0 || t > small_max || stop_s)
                        break;
                    push_body<K>(D, t, q % 3, (q + 1) % 3, 4 * q + 3, cycles, threadIdx.x >> 5,
                                 blockDim.x >> 5, &pushes);
                    __threadfence_block();
                    __syncthreads();
                    q++;
                }
                if (threadIdx.x == 0)
                    D.count[kSlotQ] = q;
            }
        } else {
            if (blockIdx.x == 0 && threadIdx.x == 0)
                D.count[(q + 2) % 3] = 0;
            if (dense > 0 && total >= dense)
                push_dense_body<K>(D, (q + 1) % 3, 4 * q + 3, cycles, warp_id, warps, &pushes);
            else
                push_body<K>(D, total, q % 3, (q + 1) % 3, 4 * q + 3, cycles, warp_id, warps,
                             &pushes);
        }
        if (blockIdx.x == 0 && threadIdx.x == 0)
            D.count[kStop0 + (round & 1)] =
                limit_ns > 0 && q + !small - q_start >= min_steps && global_ns() - t0 >= limit_ns;
        grid.sync();
        if (small) {
            if (blockIdx.x != 0)
                q = __ldcg(&D.count[kSlotQ]);
        } else {
            q++;
        }
        if (__ldcg(&D.count[kStop0 + (round & 1)]) != 0)
            break;
    }
    warp_add(pushes, &D.counters[kPushes]);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        D.count[kQ] = q;
        D.count[kSweeps] += q - q_start;
    }
}

/* ---- hybrid finish (docs/CUDA-GENERAL.md, "Hybrid finish"): once few nodes are active, the
 * residual problem restricted to the nodes that the active ones reach and that reach the sink
 * (sub) is cut out on the device and solved exactly by bk on the host. ---- */

/* The active list (list q % 3, after collect) starts forward search `fs`. */
template <typename A> __global__ void fwd_init_kernel(const Dev<A> D, unsigned fs) {
    const unsigned q = __ldcg(&D.count[kQ]);
    const unsigned total = __ldcg(&D.count[q % 3]);
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x)
        D.sub[D.list[q % 3][i]] = fs;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        D.count[kLevel] = 0;
}

/* flag[v] = 1 iff forward search fs reached v (the scan of flag numbers the sub's nodes). */
template <typename A> __global__ void sub_flag_kernel(const Dev<A> D, unsigned fs, unsigned *flag) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < D.n;
         i += (long long)gridDim.x * blockDim.x)
        flag[i] = __ldcg(&D.sub[i]) == fs ? 1u : 0u;
}

/* The sub's arc a = v -> w is kept (as one edge, from its smaller end) iff w is in the sub and
 * either direction has residual capacity. */
template <typename A>
__device__ __forceinline__ bool sub_keeps(const Dev<A> &D, unsigned v, unsigned long long a,
                                          unsigned fs) {
    unsigned w = D.head[a];
    return v < w && D.sub[w] == fs && (D.res[a] | D.res[D.rev[a]]) != 0;
}

/* Node k of the sub (v = the k-th flagged node): its terminal capacities (excess from the new
 * source, the sink residual to the sink), its original id and its number of kept edges. */
template <int K, typename A>
__global__ void sub_nodes_kernel(const Dev<A> D, unsigned fs, const unsigned *id, long long *ts,
                                 long long *tt, unsigned *orig, unsigned long long *ecount) {
    const unsigned long long stride = arc_stride<K>(D);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < D.n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned v = (unsigned)i;
        if (D.sub[v] != fs)
            continue;
        const unsigned k = id[v];
        ts[k] = D.excess[v];
        tt[k] = D.sink_res[v];
        orig[k] = v;
        unsigned long long c = 0, beg = 0, deg = 0;
        arcs_of<K>(D, v, &beg, &deg);
        for (unsigned long long j = 0; j < deg; j++)
            c += sub_keeps(D, v, beg + j * stride, fs);
        ecount[k] = c;
    }
}

/* The kept edges, node by node in sub order (eoffset: the scan of ecount): endpoints in sub
 * ids, the residuals both ways; residuals past INT32_MAX are counted (the host splits them). */
template <int K, typename A>
__global__ void sub_edges_kernel(const Dev<A> D, unsigned fs, const unsigned *id,
                                 const unsigned long long *eoffset, unsigned *eu, unsigned *ev,
                                 unsigned *ecap, unsigned *erev) {
    const unsigned long long stride = arc_stride<K>(D);
    unsigned long long big = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < D.n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned v = (unsigned)i;
        if (D.sub[v] != fs)
            continue;
        const unsigned k = id[v];
        unsigned long long p = eoffset[k], beg = 0, deg = 0;
        arcs_of<K>(D, v, &beg, &deg);
        for (unsigned long long j = 0; j < deg; j++) {
            const unsigned long long a = beg + j * stride;
            if (!sub_keeps(D, v, a, fs))
                continue;
            const unsigned r = D.res[a], rr = D.res[D.rev[a]];
            eu[p] = k;
            ev[p] = id[D.head[a]];
            ecap[p] = r;
            erev[p] = rr;
            big += (r > 0x7fffffffu) + (rr > 0x7fffffffu);
            p++;
        }
    }
    warp_add(big, &D.counters[kBigResiduals]);
}

/* Result: sink side iff the final BFS reached the node; sums the final sink residuals. */
template <typename A> __global__ void finish_kernel(const Dev<A> D, unsigned char *labels) {
    unsigned long long sum = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < D.n;
         i += (long long)gridDim.x * blockDim.x) {
        labels[i] = D.height[i] < kInf ? GCUT_SINK : GCUT_SOURCE;
        sum += (unsigned long long)D.sink_res[i];
    }
    warp_add(sum, &D.counters[kSumSinkRes]);
}

/* ---- host side ---- */

/* Device allocations, pinned words and stream of one solve, released on every path out. */
struct Session {
    cudaStream_t stream = nullptr;
    unsigned long long *host = nullptr; /* pinned: counters, then list sizes */
    static constexpr int kMaxBlocks = 48;
    void *blocks[kMaxBlocks] = {};
    size_t sizes[kMaxBlocks] = {};
    int num_blocks = 0;
    size_t device_bytes = 0, peak_bytes = 0;
    bool pinned_reserved = false;
    ~Session() {
        if (pinned_reserved)
            gcut__unreserve(kPinnedBytes);
        for (int i = 0; i < num_blocks; i++)
            if (blocks[i])
                cudaFree(blocks[i]);
        if (host)
            cudaFreeHost(host);
        if (stream)
            cudaStreamDestroy(stream);
    }
    /* counters, control words, then kExtraWords words for the hybrid's sizes */
    static constexpr int kExtraWords = 4;
    static constexpr uint64_t kPinnedBytes =
        (kNumCounters + kNumCtl + kExtraWords) * sizeof(unsigned long long);
};

gcut_status cuda_fail(cudaError_t err, const char *what) {
    return gcut__cuda_fail("cuda-general", err, what);
}

/* The device cap: GCUT_DEVICE_MEMORY_LIMIT (bytes; K/M/G suffix) if set, else no cap beyond
 * what the device has free. */
uint64_t device_cap(void) {
    const char *s = getenv("GCUT_DEVICE_MEMORY_LIMIT");
    if (s == NULL || *s == '\0')
        return UINT64_MAX;
    char *endp = NULL;
    unsigned long long v = strtoull(s, &endp, 10);
    if (endp && (*endp == 'k' || *endp == 'K'))
        v <<= 10;
    else if (endp && (*endp == 'm' || *endp == 'M'))
        v <<= 20;
    else if (endp && (*endp == 'g' || *endp == 'G'))
        v <<= 30;
    return v;
}

template <typename T>
gcut_status device_alloc(Session &S, T **ptr, size_t count, const char *what) {
    void *p = nullptr;
    size_t bytes = count * sizeof(T);
    const uint64_t cap = device_cap();
    if (S.device_bytes + bytes > cap)
        return gcut__fail(GCUT_ERR_NOMEM,
                          "cuda-general: %zu bytes of device memory for %s would pass the device "
                          "cap GCUT_DEVICE_MEMORY_LIMIT=%llu (%zu held)",
                          bytes, what, (unsigned long long)cap, S.device_bytes);
    if (S.num_blocks >= Session::kMaxBlocks)
        return gcut__fail(GCUT_ERR_INTERNAL, "cuda-general: more than %d device allocations",
                          Session::kMaxBlocks);
    cudaError_t err = cudaMalloc(&p, bytes > 0 ? bytes : 1);
    if (err != cudaSuccess) {
        cudaGetLastError();
        size_t free_bytes = 0, total_bytes = 0;
        cudaMemGetInfo(&free_bytes, &total_bytes);
        cudaGetLastError();
        return gcut__fail(GCUT_ERR_NOMEM,
                          "cuda-general: cudaMalloc of %zu bytes for %s failed (%zu bytes free "
                          "of %zu): %s",
                          bytes, what, free_bytes, total_bytes, cudaGetErrorString(err));
    }
    S.blocks[S.num_blocks] = p;
    S.sizes[S.num_blocks++] = bytes;
    S.device_bytes += bytes;
    if (S.device_bytes > S.peak_bytes)
        S.peak_bytes = S.device_bytes;
    *ptr = static_cast<T *>(p);
    return GCUT_OK;
}

void device_release(Session &S, void *p) {
    for (int i = 0; i < S.num_blocks; i++)
        if (S.blocks[i] == p) {
            cudaFree(p);
            S.blocks[i] = nullptr;
            S.device_bytes -= S.sizes[i];
            return;
        }
}

/* Knobs (benchmarks): cycles per vertex per sweep, sweeps between global relabels (0 =
 * adaptive), blocks per SM. */
constexpr int kDefaultCycles = 4;
/* Percentage of active nodes above which a push step of the grid kernels sweeps all nodes in
 * id order (push_dense_body). */
constexpr int kDefaultDense = 5;
/* A push phase ends once it has run this percentage of the last global relabel's time (0: no
 * such limit, the phase runs about the BFS depth in sweeps). */
constexpr int kDefaultBalance = 50;
/* Hybrid finish defaults: switch to bk once at most n / kHybridActiveDiv + 64 nodes are active
 * and the residual problem has at most n / kHybridNodesDiv + 1024 nodes. */
constexpr long long kHybridActiveDiv = 64;
constexpr long long kHybridNodesDiv = 4;

/* The padded layout's degree for a graph of maximum degree max_deg: a compiled-in degree
 * (4, 6, 8, 26: grids of 4, 6 and 8 neighbours, 3D 26-connected) where the padding to it is
 * small, else 0 (the run-time degree max_deg, a loop); -1 past kPadMaxDegree. */
int pad_degree(unsigned long long max_deg) {
    if (max_deg <= 4)
        return 4;
    if (max_deg <= 6)
        return 6;
    if (max_deg <= 8)
        return 8;
    if (max_deg >= 23 && max_deg <= 26)
        return 26;
    return max_deg <= (unsigned long long)kPadMaxDegree ? 0 : -1;
}

/* Orders of a vertex's arcs in the sorted build (GCUT_CUDAGENERAL_ORDER): the edge order; the
 * arcs of the edges it starts first (u of edge (u, v)), then those it ends, each in edge order;
 * a hashed order (a deterministic shuffle). The sort key is tail << 32 | this word; the sort
 * looks at bits kOrderLowBit[order] .. 32 + bits(n) only. */
enum { kOrderEdge = 0, kOrderOwnFirst = 1, kOrderHashed = 2 };
constexpr int kOrderLowBit[3] = {32, 31, 24};
/* The sorted build's arc order (kOrder*, GCUT_CUDAGENERAL_ORDER): hashed, measured best of the
 * three on the padded layout (docs/CUDA-GENERAL.md, "Fourth pass": edge order and own edges
 * first cost 1.2-1.7x on hard 4K, 256^3 and GENRMF). */
constexpr int kDefaultOrder = kOrderHashed;

/* Sorted build (the padded layout; the CSR with GCUT_CUDAGENERAL_SORTED=1): arc x = 2e (u -> v
 * of edge e) or 2e + 1 (v -> u) keyed by its tail and its order word; self-loops have tail n
 * (sorted last, dropped). */
__global__ void arc_keys_kernel(long long m, unsigned n, const unsigned *eu, const unsigned *ev,
                                int order, unsigned long long *key, unsigned *val) {
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < 2 * m;
         x += (long long)gridDim.x * blockDim.x) {
        const long long e = x >> 1;
        const unsigned u = eu[e], v = ev[e];
        const unsigned tail = u == v ? n : (x & 1) ? v : u;
        unsigned word = 0;
        if (order == kOrderOwnFirst) {
            word = (unsigned)(x & 1) << 31;
        } else if (order == kOrderHashed) {
            unsigned h = (unsigned)x * 0x9e3779b1u;
            h ^= h >> 15;
            h *= 0x85ebca77u;
            h ^= h >> 13;
            word = h & 0xff000000u;
        }
        key[x] = (unsigned long long)tail << 32 | word;
        val[x] = (unsigned)x;
    }
}

/* After the stable sort, position p holds arc val[p], the (p - offset[u])-th arc of its tail u =
 * key[p] >> 32 in the chosen order: its place is offset[u] + that (CSR, pitch 0) or that * pitch
 * + u (padded, slot-major). */
__global__ void arc_pos_kernel(long long arcs, unsigned n, const unsigned long long *key,
                               const unsigned *val, const unsigned long long *offset,
                               unsigned long long pitch, unsigned *pos) {
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < arcs;
         p += (long long)gridDim.x * blockDim.x) {
        const unsigned u = (unsigned)(key[p] >> 32);
        if (u >= n)
            continue;
        const unsigned long long j = (unsigned long long)p - offset[u];
        pos[val[p]] = (unsigned)(pitch > 0 ? j * pitch + u : offset[u] + j);
    }
}

/* Padded layout: every slot a null arc (residual 0, head its own vertex, paired with itself)
 * before fill_kernel writes the real arcs. */
template <typename A> __global__ void pad_init_kernel(const Dev<A> D, unsigned long long slots) {
    for (unsigned long long s = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         s < slots; s += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned long long v = s % D.pitch;
        D.head[s] = v < (unsigned long long)D.n ? (unsigned)v : 0u;
        D.res[s] = 0;
        D.rev[s] = (A)s;
    }
}

/* Both arcs of every edge at their places from arc_pos_kernel (deterministic: no atomics). */
template <typename A>
__global__ void fill_kernel(const Dev<A> D, long long m, const unsigned *eu, const unsigned *ev,
                            const int *cap, const int *rcap, const unsigned *pos) {
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < m;
         e += (long long)gridDim.x * blockDim.x) {
        const unsigned u = eu[e], v = ev[e];
        if (u == v)
            continue;
        const unsigned pu = pos[2 * e], pv = pos[2 * e + 1];
        D.head[pu] = v;
        D.head[pv] = u;
        D.res[pu] = (unsigned)cap[e];
        D.res[pv] = (unsigned)rcap[e];
        D.rev[pu] = (A)pv;
        D.rev[pv] = (A)pu;
    }
}

/* Refused cooperative launches (a grid too large for the device, MPS or a device without it):
 * the solve goes on with the launch-per-step kernels. */
bool coop_refused(cudaError_t err) {
    return err == cudaErrorCooperativeLaunchTooLarge || err == cudaErrorNotSupported ||
           err == cudaErrorNotPermitted || err == cudaErrorLaunchOutOfResources ||
           err == cudaErrorInvalidConfiguration;
}

template <int K, typename A>
gcut_status run(Session &S, Dev<A> &D, int device, int verbose, int64_t *flow, uint8_t *labels,
                gcut_stats *stats, double t_solve);

/* The layout asked for by GCUT_CUDAGENERAL_LAYOUT=auto|csr|padded: *want -1 (auto, the
 * default), 0 or 1; anything else is GCUT_ERR_INVALID_ARG, before any device work. */
gcut_status layout_request(int *want) {
    const char *s = getenv("GCUT_CUDAGENERAL_LAYOUT");
    *want = -1;
    if (s == NULL || *s == '\0' || strcmp(s, "auto") == 0)
        return GCUT_OK;
    if (strcmp(s, "csr") == 0)
        *want = 0;
    else if (strcmp(s, "padded") == 0)
        *want = 1;
    else
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "cuda-general: GCUT_CUDAGENERAL_LAYOUT=%s; expected csr, padded or auto",
                          s);
    return GCUT_OK;
}

/* The layout that a graph of `arcs` arcs (self-loops dropped), n nodes and maximum degree
 * max_deg gets (docs/CUDA-GENERAL.md, "Fourth pass") when `want` was asked for (layout_request;
 * auto: gcut__cudageneral_layout_rule): the padded degree (0: the run-time one) or kCsr. */
int pick_layout(long long n, unsigned long long arcs, unsigned long long max_deg, int want) {
    const int k = pad_degree(max_deg);
    if (k < 0 || want == 0)
        return kCsr;
    const unsigned long long pitch = ((unsigned long long)n + 31) / 32 * 32;
    const unsigned long long slots = pitch * (unsigned long long)(k > 0 ? k : (int)max_deg);
    /* Slots are indexed by uint32 (the sort's places, paired-arc indices); the caller takes
     * the padded layout only while the arcs themselves fit uint32. */
    if (slots >= 0xffffffffull)
        return kCsr;
    if (want == 1 ||
        gcut__cudageneral_layout_rule(n, (int64_t)arcs, (int64_t)max_deg, (int64_t)slots) != 0)
        return k;
    return kCsr;
}

template <typename A>
gcut_status solve(Session &S, gcut_graph *g, int device, int verbose, int want_layout,
                  int64_t *flow, uint8_t *labels, gcut_stats *stats, double t_start) {
    Dev<A> D{};
    const long long n = g->num_nodes;
    const long long m = g->num_edges;
    const size_t nodes = (size_t)n, edges = (size_t)m, arcs = 2 * edges;
    D.n = n;
    /* GCUT_CUDAGENERAL_BFS_SPREAD=0: a light frontier node's arcs in turn by one thread (the
     * second pass's BFS), for comparison. */
    D.spread = gcut__env_int("GCUT_CUDAGENERAL_BFS_SPREAD", 1, 0, 1);
    /* GCUT_CUDAGENERAL_AGGREGATE=0: one atomicAdd on the list size per appended node (the
     * second pass's appends), for comparison. */
    D.aggregate = gcut__env_int("GCUT_CUDAGENERAL_AGGREGATE", 1, 0, 1);
    /* GCUT_CUDAGENERAL_PREFETCH=0: a thread discharge loads arc by arc (the second pass's). */
    D.prefetch = gcut__env_int("GCUT_CUDAGENERAL_PREFETCH", 1, 0, 1);
    /* GCUT_CUDAGENERAL_SORTED=1: the CSR built in edge order (the padded layout's sorted build)
     * instead of by the scatter's atomics, for comparison. */
    const int sorted_csr = gcut__env_int("GCUT_CUDAGENERAL_SORTED", 0, 0, 1);

    /* Peak of the CSR build: the edge upload and the CSR together (the upload is freed before
     * the solve). The padded layout's need is checked when it is chosen (below). */
    const size_t need =
        edges * 16 + arcs * (8 + sizeof(A)) + (nodes + 1) * 16 + nodes * 36 + kNumCounters * 8 + 64;
    size_t free_bytes = 0, total_bytes = 0;
    GCUT__CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (need > free_bytes)
        return gcut__fail(GCUT_ERR_NOMEM,
                          "cuda-general: the graph of %lld nodes and %lld edges needs %zu bytes "
                          "of device memory; device %d has %zu free of %zu",
                          n, m, need, device, free_bytes, total_bytes);
    if (need > device_cap())
        return gcut__fail(GCUT_ERR_NOMEM,
                          "cuda-general: the graph of %lld nodes and %lld edges needs %zu bytes "
                          "of device memory, over the device cap GCUT_DEVICE_MEMORY_LIMIT=%llu",
                          n, m, need, (unsigned long long)device_cap());

    GCUT__CUDA_TRY(cudaStreamCreateWithFlags(&S.stream, cudaStreamNonBlocking), "stream");
    if (gcut__reserve(Session::kPinnedBytes, "cuda-general pinned counters") != 0)
        return GCUT_ERR_NOMEM;
    S.pinned_reserved = true;
    GCUT__CUDA_TRY(cudaMallocHost(&S.host, Session::kPinnedBytes), "cudaMallocHost");
    cudaStream_t stream = S.stream;

    unsigned *eu = nullptr, *ev = nullptr;
    int *ecap = nullptr, *erev = nullptr;
    unsigned long long *deg = nullptr;
    gcut_status st;
    if ((st = device_alloc(S, &eu, edges, "edge sources")) != GCUT_OK ||
        (st = device_alloc(S, &ev, edges, "edge targets")) != GCUT_OK ||
        (st = device_alloc(S, &ecap, edges, "edge capacities")) != GCUT_OK ||
        (st = device_alloc(S, &erev, edges, "edge capacities")) != GCUT_OK ||
        (st = device_alloc(S, &D.offset, nodes + 1, "arc offsets")) != GCUT_OK ||
        (st = device_alloc(S, &deg, nodes + 1, "degrees")) != GCUT_OK ||
        (st = device_alloc(S, &D.excess, nodes, "excess")) != GCUT_OK ||
        (st = device_alloc(S, &D.sink_res, nodes, "sink residuals")) != GCUT_OK ||
        (st = device_alloc(S, &D.height, nodes, "heights")) != GCUT_OK ||
        (st = device_alloc(S, &D.list[0], nodes, "work lists")) != GCUT_OK ||
        (st = device_alloc(S, &D.list[1], nodes, "work lists")) != GCUT_OK ||
        (st = device_alloc(S, &D.list[2], nodes, "work lists")) != GCUT_OK ||
        (st = device_alloc(S, &D.mark, nodes, "list marks")) != GCUT_OK ||
        (st = device_alloc(S, &D.count, kNumCtl, "list sizes")) != GCUT_OK ||
        (st = device_alloc(S, &D.counters, kNumCounters, "counters")) != GCUT_OK)
        return st;

    int sms = 1;
    GCUT__CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                   "cudaDeviceGetAttribute");
    const size_t span = (nodes > arcs ? nodes : arcs) + 1;
    const int flat_blocks =
        (int)((span + kBlock - 1) / kBlock < (size_t)sms * 16 ? (span + kBlock - 1) / kBlock
                                                              : (size_t)sms * 16);
    const int node_blocks =
        (int)((nodes + kBlock) / kBlock < (size_t)sms * 16 ? (nodes + kBlock) / kBlock
                                                           : (size_t)sms * 16);

    /* ---- construction: upload, degrees, the layout, then its arcs on the device ---- */
    GCUT__CUDA_TRY(cudaMemcpyAsync(eu, g->edge_u32, edges * 4, cudaMemcpyHostToDevice, stream),
                   "upload edges");
    GCUT__CUDA_TRY(cudaMemcpyAsync(ev, g->edge_v32, edges * 4, cudaMemcpyHostToDevice, stream),
                   "upload edges");
    GCUT__CUDA_TRY(cudaMemcpyAsync(ecap, g->edge_cap, edges * 4, cudaMemcpyHostToDevice, stream),
                   "upload capacities");
    GCUT__CUDA_TRY(cudaMemcpyAsync(erev, g->edge_rev, edges * 4, cudaMemcpyHostToDevice, stream),
                   "upload capacities");
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(D.excess, g->tw_source, nodes * 8, cudaMemcpyHostToDevice, stream),
        "upload terminal capacities");
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(D.sink_res, g->tw_sink, nodes * 8, cudaMemcpyHostToDevice, stream),
        "upload terminal capacities");
    GCUT__CUDA_TRY(cudaMemsetAsync(deg, 0, (nodes + 1) * 8, stream), "memset");
    GCUT__CUDA_TRY(cudaMemsetAsync(D.counters, 0, kNumCounters * 8, stream), "memset");
    GCUT__CUDA_TRY(cudaMemsetAsync(D.mark, 0, nodes * 4, stream), "memset");
    count_kernel<<<flat_blocks, kBlock, 0, stream>>>(m, eu, ev, ecap, erev, deg, D.counters);
    GCUT__CUDA_TRY(cudaGetLastError(), "count kernel launch");
    size_t temp_bytes = 0, max_bytes = 0;
    GCUT__CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, deg, D.offset,
                                                 (long long)nodes + 1, stream),
                   "scan size");
    /* The maximum degree (the layout rule) goes to counter kBigResiduals, unused until the
     * hybrid's extraction. */
    GCUT__CUDA_TRY(cub::DeviceReduce::Max(nullptr, max_bytes, deg, D.counters + kBigResiduals,
                                          (long long)nodes, stream),
                   "max size");
    void *temp = nullptr;
    if ((st = device_alloc(S, reinterpret_cast<unsigned char **>(&temp),
                           temp_bytes > max_bytes ? temp_bytes : max_bytes, "scan scratch")) !=
        GCUT_OK)
        return st;
    GCUT__CUDA_TRY(cub::DeviceReduce::Max(temp, max_bytes, deg, D.counters + kBigResiduals,
                                          (long long)nodes, stream),
                   "max degree");
    GCUT__CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, deg, D.offset,
                                                 (long long)nodes + 1, stream),
                   "scan");
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(S.host, D.counters + kBigResiduals, 8, cudaMemcpyDeviceToHost, stream),
        "read the maximum degree");
    GCUT__CUDA_TRY(cudaMemcpyAsync(S.host + 1, D.offset + nodes, 8, cudaMemcpyDeviceToHost, stream),
                   "read the arc count");
    GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "degrees");
    device_release(S, temp);
    const unsigned long long max_deg = S.host[0], real_arcs = S.host[1];
    /* The padded layout only with uint32 arc indices (not on the 64-bit path). */
    int layout = sizeof(A) == 4 ? pick_layout(n, real_arcs, max_deg, want_layout) : kCsr;
    D.pitch = ((unsigned long long)n + 31) / 32 * 32;
    D.pad_deg = layout == kCsr ? 0 : layout == 0 ? (int)max_deg : layout;
    const unsigned long long pad_slots = D.pitch * (unsigned long long)D.pad_deg;
    bool sorted = layout != kCsr || (sorted_csr && sizeof(A) == 4);
    size_t sort_bytes = 0;
    cub::DoubleBuffer<unsigned long long> keys;
    cub::DoubleBuffer<unsigned> vals;
    int bits = 1; /* tails run to n */
    while (bits < 32 && ((unsigned long long)n >> bits) != 0)
        bits++;
    const int order = gcut__env_int("GCUT_CUDAGENERAL_ORDER", kDefaultOrder, 0, 2);
    const int low_bit = kOrderLowBit[order];
    if (sorted) {
        GCUT__CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys, vals,
                                                       (long long)arcs, low_bit, 32 + bits, stream),
                       "sort size");
        /* Sort buffers and the arc arrays while the upload is held: else the CSR. */
        const size_t slots = layout != kCsr ? (size_t)pad_slots : arcs;
        const size_t extra = arcs * 24 + sort_bytes + slots * (8 + sizeof(A)) + 256;
        GCUT__CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
        const uint64_t cap = device_cap();
        if (extra > free_bytes || (cap != UINT64_MAX && S.device_bytes + extra > cap)) {
            if (verbose)
                fprintf(stderr,
                        "cuda-general: the sorted build needs %zu more bytes (%zu free): the "
                        "CSR\n",
                        extra, free_bytes);
            layout = kCsr;
            sorted = false;
        }
    }
    gcut__cudageneral_note_layout(layout == kCsr ? 0 : D.pad_deg);
    const size_t slots = layout != kCsr ? (size_t)pad_slots : arcs;
    if ((st = device_alloc(S, &D.head, slots, "arc heads")) != GCUT_OK ||
        (st = device_alloc(S, &D.res, slots, "arc residuals")) != GCUT_OK ||
        (st = device_alloc(S, &D.rev, slots, "paired-arc indices")) != GCUT_OK)
        return st;
    if (!sorted) {
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(deg, D.offset, (nodes + 1) * 8, cudaMemcpyDeviceToDevice, stream),
            "copy offsets");
        scatter_kernel<A><<<flat_blocks, kBlock, 0, stream>>>(D, m, eu, ev, ecap, erev, deg);
        GCUT__CUDA_TRY(cudaGetLastError(), "scatter kernel launch");
    } else {
        unsigned long long *kk[2] = {};
        unsigned *kv[2] = {};
        for (int i = 0; i < 2; i++)
            if ((st = device_alloc(S, &kk[i], arcs, "sort keys")) != GCUT_OK ||
                (st = device_alloc(S, &kv[i], arcs, "sort values")) != GCUT_OK)
                return st;
        if ((st = device_alloc(S, reinterpret_cast<unsigned char **>(&temp), sort_bytes,
                               "sort scratch")) != GCUT_OK)
            return st;
        keys = cub::DoubleBuffer<unsigned long long>(kk[0], kk[1]);
        vals = cub::DoubleBuffer<unsigned>(kv[0], kv[1]);
        arc_keys_kernel<<<flat_blocks, kBlock, 0, stream>>>(m, (unsigned)n, eu, ev, order, kk[0],
                                                            kv[0]);
        GCUT__CUDA_TRY(cudaGetLastError(), "arc keys launch");
        GCUT__CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp, sort_bytes, keys, vals,
                                                       (long long)arcs, low_bit, 32 + bits, stream),
                       "sort arcs by tail");
        /* The places go where the other key buffer was (8 bytes an arc, 4 needed). */
        unsigned *pos = reinterpret_cast<unsigned *>(keys.Alternate());
        arc_pos_kernel<<<flat_blocks, kBlock, 0, stream>>>((long long)arcs, (unsigned)n,
                                                           keys.Current(), vals.Current(), D.offset,
                                                           layout != kCsr ? D.pitch : 0ull, pos);
        GCUT__CUDA_TRY(cudaGetLastError(), "arc places launch");
        if (layout != kCsr) {
            pad_init_kernel<A><<<flat_blocks, kBlock, 0, stream>>>(D, pad_slots);
            GCUT__CUDA_TRY(cudaGetLastError(), "padding launch");
        }
        fill_kernel<A><<<flat_blocks, kBlock, 0, stream>>>(D, m, eu, ev, ecap, erev, pos);
        GCUT__CUDA_TRY(cudaGetLastError(), "fill launch");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "sorted build");
        device_release(S, temp);
        for (int i = 0; i < 2; i++) {
            device_release(S, kk[i]);
            device_release(S, kv[i]);
        }
    }
    init_kernel<A><<<node_blocks, kBlock, 0, stream>>>(D);
    GCUT__CUDA_TRY(cudaGetLastError(), "init kernel launch");
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(S.host, D.counters, kNumCounters * 8, cudaMemcpyDeviceToHost, stream),
        "read counters");
    GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "construction");
    device_release(S, eu);
    device_release(S, ev);
    device_release(S, ecap);
    device_release(S, erev);
    device_release(S, deg);
    if (layout != kCsr) {
        device_release(S, D.offset);
        D.offset = nullptr;
    }
    {
        /* Excess is int64: every node's excess stays below the preprocessed excess total plus
         * every arc capacity; the flow value below the sink capacities' total. */
        const unsigned long long *c = S.host;
        unsigned __int128 sink = ((unsigned __int128)c[kSumSinkHi] << 32) + c[kSumSink];
        unsigned __int128 bound =
            ((unsigned __int128)c[kSumExcessHi] << 32) + c[kSumExcess] + c[kSumCaps];
        const unsigned __int128 limit = (unsigned __int128)INT64_MAX;
        if (sink > limit || bound > limit)
            return gcut__fail(GCUT_ERR_OVERFLOW,
                              "cuda-general: capacity sums pass int64 (the sink capacities' "
                              "total, or the source excess plus every arc capacity)");
    }
    const double t_solve = gcut__now_ms();
    stats->build_ms = t_solve - t_start;
    if (verbose)
        fprintf(stderr,
                "cuda-general: layout %s (degree %d), maximum degree %llu, %llu arcs, %s build "
                "(order %d) %.3f ms\n",
                layout == kCsr ? "csr" : "padded", layout == kCsr ? 0 : D.pad_deg, max_deg,
                real_arcs, sorted ? "sorted" : "atomic", sorted ? order : -1, stats->build_ms);
    if constexpr (sizeof(A) == 4) {
        switch (layout) {
        case 4:
            return run<4, A>(S, D, device, verbose, flow, labels, stats, t_solve);
        case 6:
            return run<6, A>(S, D, device, verbose, flow, labels, stats, t_solve);
        case 8:
            return run<8, A>(S, D, device, verbose, flow, labels, stats, t_solve);
        case 26:
            return run<26, A>(S, D, device, verbose, flow, labels, stats, t_solve);
        case 0:
            return run<0, A>(S, D, device, verbose, flow, labels, stats, t_solve);
        default:
            break;
        }
    }
    return run<kCsr, A>(S, D, device, verbose, flow, labels, stats, t_solve);
}

/* The solve on the built layout K: sweeps, global relabels, exact stop. */
template <int K, typename A>
gcut_status run(Session &S, Dev<A> &D, int device, int verbose, int64_t *flow, uint8_t *labels,
                gcut_stats *stats, double t_solve) {
    const long long n = D.n;
    const size_t nodes = (size_t)n;
    cudaStream_t stream = S.stream;
    gcut_status st;
    int sms = 1, per_sm = 1;
    GCUT__CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                   "cudaDeviceGetAttribute");
    GCUT__CUDA_TRY(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, push_kernel<K, A>, kBlock, 0),
        "occupancy");
    per_sm = gcut__env_int("GCUT_CUDAGENERAL_BLOCKS_PER_SM", per_sm, 1, 64);
    const int node_blocks =
        (int)((nodes + kBlock) / kBlock < (size_t)sms * 16 ? (nodes + kBlock) / kBlock
                                                           : (size_t)sms * 16);
    const int work_blocks = sms * per_sm;
    const int cycles = gcut__env_int("GCUT_CUDAGENERAL_CYCLES", kDefaultCycles, 1, 1 << 20);
    const int fixed_sweeps = gcut__env_int("GCUT_CUDAGENERAL_SWEEPS", 0, 0, 1 << 20);
    const int balance = gcut__env_int("GCUT_CUDAGENERAL_BALANCE", kDefaultBalance, 0, 1 << 20);
    const unsigned bfs_small =
        (unsigned)gcut__env_int("GCUT_CUDAGENERAL_BFS_SMALL", kSmallBfsMax, 0, 1 << 24);
    /* Persistent grid kernels (a BFS or a push phase per cooperative launch) where the device
     * has cooperative launch; GCUT_CUDAGENERAL_PERSIST=0 keeps the launch-per-step path (the
     * second pass's). GCUT_CUDAGENERAL_GRID_SMALL: list size up to which block 0 runs the steps
     * alone. A refused cooperative launch (coop_refused) also switches to the launch-per-step
     * path, for the rest of the solve; GCUT_CUDAGENERAL_COOP_REFUSE=N (tests) pretends that the
     * N-th cooperative launch was refused. */
    int coop_support = 0, push_per_sm = 0, bfs_per_sm = 0, fwd_per_sm = 0;
    GCUT__CUDA_TRY(cudaDeviceGetAttribute(&coop_support, cudaDevAttrCooperativeLaunch, device),
                   "cudaDeviceGetAttribute");
    GCUT__CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&push_per_sm,
                                                                 push_grid_kernel<K, A>, kBlock, 0),
                   "occupancy");
    GCUT__CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                       &bfs_per_sm, bfs_grid_kernel<false, K, A>, kBlock, 0),
                   "occupancy");
    GCUT__CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                       &fwd_per_sm, bfs_grid_kernel<true, K, A>, kBlock, 0),
                   "occupancy");
    int grid_per_sm = push_per_sm < bfs_per_sm ? push_per_sm : bfs_per_sm;
    grid_per_sm = fwd_per_sm < grid_per_sm ? fwd_per_sm : grid_per_sm;
    grid_per_sm = gcut__env_int("GCUT_CUDAGENERAL_GRID_BLOCKS_PER_SM", grid_per_sm, 1,
                                grid_per_sm > 0 ? grid_per_sm : 1);
    bool persist = coop_support != 0 && grid_per_sm > 0 &&
                   gcut__env_int("GCUT_CUDAGENERAL_PERSIST", 1, 0, 1) != 0;
    const int grid_blocks = sms * grid_per_sm;
    const int refuse_at = gcut__env_int("GCUT_CUDAGENERAL_COOP_REFUSE", 0, 0, INT32_MAX);
    int coop_launches = 0;
    auto coop_launch = [&](const void *fn, void **args, const char *what) -> gcut_status {
        ++coop_launches;
        cudaError_t err =
            refuse_at > 0 && coop_launches == refuse_at
                ? cudaErrorCooperativeLaunchTooLarge
                : cudaLaunchCooperativeKernel(fn, grid_blocks, kBlock, args, 0, stream);
        if (err == cudaSuccess)
            return GCUT_OK;
        if (!coop_refused(err))
            return cuda_fail(err, what);
        cudaGetLastError();
        persist = false;
        if (verbose)
            fprintf(stderr,
                    "cuda-general: %s refused (%s, %d blocks of %d): the launch-per-step "
                    "kernels from here on\n",
                    what, cudaGetErrorName(err), grid_blocks, kBlock);
        return GCUT_OK;
    };
    unsigned grid_small =
        (unsigned)gcut__env_int("GCUT_CUDAGENERAL_GRID_SMALL", kBlock, 0, 1 << 24);
    /* Sweeps a push phase runs before its clock is read. */
    unsigned min_sweeps =
        (unsigned)gcut__env_int("GCUT_CUDAGENERAL_MIN_SWEEPS", kMinPhaseSteps, 1, 1 << 20);
    /* Dense sweeps (grid kernels only) while more than this percentage of the nodes are
     * active (1 on a graph of under 100 nodes: every grid-wide step); 0 = list sweeps always. */
    const int dense_pct = gcut__env_int("GCUT_CUDAGENERAL_DENSE", kDefaultDense, 0, 100);
    unsigned dense = dense_pct > 0 ? (unsigned)((long long)n * dense_pct / 100 + 1) : 0u;
    /* Bottom-up BFS levels (grid kernels only) when the frontier passes this percentage of the
     * nodes; 0 = top-down always. */
    const int bottom_up_pct = gcut__env_int("GCUT_CUDAGENERAL_BOTTOM_UP", 0, 0, 100);
    unsigned bottom_up =
        bottom_up_pct > 0 ? (unsigned)((long long)n * bottom_up_pct / 100 + 1) : 0u;
    /* Hybrid finish (docs/CUDA-GENERAL.md; off unless GCUT_CUDAGENERAL_HYBRID=1: measured slower
     * than the GPU alone on the vision graphs once phases are balanced): on, at most `hyb_active`
     * active nodes after a global relabel, at most `hyb_nodes` nodes in the residual problem handed
     * to bk, and not before global relabel number `hyb_after` (0 for the knobs: the defaults). */
    const int hybrid = gcut__env_int("GCUT_CUDAGENERAL_HYBRID", 0, 0, 1);
    long long hyb_active = gcut__env_int("GCUT_CUDAGENERAL_HYBRID_ACTIVE", 0, 0, INT32_MAX);
    long long hyb_nodes = gcut__env_int("GCUT_CUDAGENERAL_HYBRID_NODES", 0, 0, INT32_MAX);
    const int hyb_after = gcut__env_int("GCUT_CUDAGENERAL_HYBRID_AFTER", 2, 1, 1 << 20);
    if (hyb_active == 0)
        hyb_active = n / kHybridActiveDiv + 64;
    if (hyb_nodes == 0)
        hyb_nodes = n / kHybridNodesDiv + 1024;
    if (hybrid && (st = device_alloc(S, &D.sub, nodes, "hybrid search stamps")) != GCUT_OK)
        return st;
    if (hybrid)
        GCUT__CUDA_TRY(cudaMemsetAsync(D.sub, 0, nodes * 4, S.stream), "memset");

    /* ---- the solve: sweeps, global relabels, exact stop ---- */
    int64_t relabels = 0;
    unsigned *ctl = reinterpret_cast<unsigned *>(S.host + kNumCounters);
    auto read_ctl = [&]() -> gcut_status {
        GCUT__CUDA_TRY(cudaMemcpyAsync(ctl, D.count, kNumCtl * sizeof(unsigned),
                                       cudaMemcpyDeviceToHost, stream),
                       "read control words");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "solve");
        return GCUT_OK;
    };
    /* The active list from the heights (list q % 3); *active: its size. */
    auto collect = [&](unsigned *active) -> gcut_status {
        GCUT__CUDA_TRY(cudaMemsetAsync(D.count, 0, 3 * sizeof(unsigned), stream), "memset");
        collect_kernel<A><<<node_blocks, kBlock, 0, stream>>>(D);
        GCUT__CUDA_TRY(cudaGetLastError(), "collect launch");
        gcut_status rs = read_ctl();
        *active = ctl[ctl[kQ] % 3];
        return rs;
    };
    /* Exact BFS distances to the sink, then the active list. *active: the number of active
     * nodes (0: the preflow is maximum); *depth: the BFS depth. */
    auto global_relabel = [&](unsigned *active, unsigned *depth) -> gcut_status {
        relabels++;
        if (ctl[kQ] >= (1u << 29)) {
            /* Stamps are 4q + k in 32 bits: long before they wrap (a repeated stamp could hide
             * an active node from the list), start the rotation and the stamps again. */
            GCUT__CUDA_TRY(cudaMemsetAsync(D.mark, 0, nodes * sizeof(unsigned), stream), "memset");
            GCUT__CUDA_TRY(cudaMemsetAsync(D.count + kQ, 0, sizeof(unsigned), stream), "memset");
        }
        GCUT__CUDA_TRY(cudaMemsetAsync(D.count, 0, 3 * sizeof(unsigned), stream), "memset");
        bfs_init_kernel<A><<<node_blocks, kBlock, 0, stream>>>(D);
        GCUT__CUDA_TRY(cudaGetLastError(), "bfs init launch");
        if (persist) {
            unsigned no_fs = 0;
            void *args[] = {&D, &no_fs, &grid_small, &bottom_up};
            gcut_status rs = coop_launch((const void *)bfs_grid_kernel<false, K, A>, args,
                                         "cooperative bfs launch");
            if (rs != GCUT_OK)
                return rs;
            if (persist) {
                rs = collect(active);
                *depth = ctl[kLevel];
                return rs;
            }
        }
        for (int batch = 2;; batch = batch < 16 ? batch * 2 : 16) {
            for (int b = 0; b < batch; b++) {
                bfs_small_kernel<false, K, A><<<1, kSmallBlock, 0, stream>>>(D, 0u, bfs_small);
                bfs_level_kernel<false, K, A><<<work_blocks, kBlock, 0, stream>>>(D, 0u);
            }
            GCUT__CUDA_TRY(cudaGetLastError(), "bfs level launch");
            gcut_status rs = read_ctl();
            if (rs != GCUT_OK)
                return rs;
            if (ctl[ctl[kQ] % 3] == 0)
                break;
        }
        *depth = ctl[kLevel];
        return collect(active);
    };

    /* Hybrid finish, part 1 (device): forward search from the active nodes through residual
     * arcs, inside the nodes that reach the sink; if it reaches at most hyb_nodes nodes, that
     * residual problem (the sub) is cut out and downloaded into *subg (sub node i is node
     * orig[i]); else *subg stays NULL and the active list must be collected again. */
    unsigned fs = 0;
    auto extract_sub = [&](unsigned active, gcut_graph **subg, unsigned **orig,
                           bool *nomem) -> gcut_status {
        *subg = nullptr;
        *orig = nullptr;
        *nomem = false;
        const double t0 = gcut__now_ms();
        fs++;
        fwd_init_kernel<A><<<node_blocks, kBlock, 0, stream>>>(D, fs);
        GCUT__CUDA_TRY(cudaGetLastError(), "hybrid search launch");
        if (persist) {
            unsigned no_bottom_up = 0;
            void *args[] = {&D, &fs, &grid_small, &no_bottom_up};
            gcut_status rs = coop_launch((const void *)bfs_grid_kernel<true, K, A>, args,
                                         "cooperative forward search launch");
            if (rs != GCUT_OK)
                return rs;
        }
        for (int batch = 2; !persist; batch = batch < 16 ? batch * 2 : 16) {
            for (int b = 0; b < batch; b++) {
                bfs_small_kernel<true, K, A><<<1, kSmallBlock, 0, stream>>>(D, fs, bfs_small);
                bfs_level_kernel<true, K, A><<<work_blocks, kBlock, 0, stream>>>(D, fs);
            }
            GCUT__CUDA_TRY(cudaGetLastError(), "hybrid search launch");
            gcut_status rs = read_ctl();
            if (rs != GCUT_OK)
                return rs;
            if (ctl[ctl[kQ] % 3] == 0)
                break;
        }
        /* Number the sub's nodes in id order: flags in list 0, their exclusive scan in list 1. */
        unsigned *flag = D.list[0], *id = D.list[1];
        sub_flag_kernel<A><<<node_blocks, kBlock, 0, stream>>>(D, fs, flag);
        GCUT__CUDA_TRY(cudaGetLastError(), "hybrid flag launch");
        size_t tb = 0;
        GCUT__CUDA_TRY(
            cub::DeviceScan::ExclusiveSum(nullptr, tb, flag, id, (long long)nodes, stream),
            "scan size");
        void *tmp = nullptr;
        gcut_status as =
            device_alloc(S, reinterpret_cast<unsigned char **>(&tmp), tb, "hybrid scan scratch");
        if (as != GCUT_OK) {
            *nomem = as == GCUT_ERR_NOMEM;
            return *nomem ? GCUT_OK : as;
        }
        GCUT__CUDA_TRY(cub::DeviceScan::ExclusiveSum(tmp, tb, flag, id, (long long)nodes, stream),
                       "scan");
        unsigned *words = reinterpret_cast<unsigned *>(S.host + kNumCounters + kNumCtl);
        GCUT__CUDA_TRY(cudaMemcpyAsync(words, flag + nodes - 1, 4, cudaMemcpyDeviceToHost, stream),
                       "read sub size");
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(words + 1, id + nodes - 1, 4, cudaMemcpyDeviceToHost, stream),
            "read sub size");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "hybrid search");
        device_release(S, tmp);
        const size_t k = (size_t)words[0] + words[1];
        const double t1 = gcut__now_ms();
        if (verbose)
            fprintf(stderr,
                    "cuda-general: hybrid: %u active reach %zu nodes that reach the sink "
                    "(limit %lld), forward search %.3f ms\n",
                    active, k, hyb_nodes, t1 - t0);
        if ((long long)k > hyb_nodes)
            return GCUT_OK;

        long long *ts = nullptr, *tt = nullptr;
        unsigned *dorig = nullptr;
        unsigned long long *ecount = nullptr, *eoff = nullptr;
        if ((as = device_alloc(S, &ts, k, "hybrid terminals")) != GCUT_OK ||
            (as = device_alloc(S, &tt, k, "hybrid terminals")) != GCUT_OK ||
            (as = device_alloc(S, &dorig, k, "hybrid node ids")) != GCUT_OK ||
            (as = device_alloc(S, &ecount, k + 1, "hybrid edge counts")) != GCUT_OK ||
            (as = device_alloc(S, &eoff, k + 1, "hybrid edge offsets")) != GCUT_OK) {
            *nomem = as == GCUT_ERR_NOMEM;
            return *nomem ? GCUT_OK : as;
        }
        GCUT__CUDA_TRY(cudaMemsetAsync(ecount, 0, (k + 1) * 8, stream), "memset");
        sub_nodes_kernel<K, A>
            <<<node_blocks, kBlock, 0, stream>>>(D, fs, id, ts, tt, dorig, ecount);
        GCUT__CUDA_TRY(cudaGetLastError(), "hybrid nodes launch");
        tb = 0;
        GCUT__CUDA_TRY(
            cub::DeviceScan::ExclusiveSum(nullptr, tb, ecount, eoff, (long long)k + 1, stream),
            "scan size");
        if ((as = device_alloc(S, reinterpret_cast<unsigned char **>(&tmp), tb,
                               "hybrid scan scratch")) != GCUT_OK) {
            *nomem = as == GCUT_ERR_NOMEM;
            return *nomem ? GCUT_OK : as;
        }
        GCUT__CUDA_TRY(
            cub::DeviceScan::ExclusiveSum(tmp, tb, ecount, eoff, (long long)k + 1, stream), "scan");
        unsigned long long *ewords = S.host + kNumCounters + kNumCtl + 1;
        GCUT__CUDA_TRY(cudaMemcpyAsync(ewords, eoff + k, 8, cudaMemcpyDeviceToHost, stream),
                       "read sub edges");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "hybrid nodes");
        device_release(S, tmp);
        const size_t e = (size_t)*ewords;
        unsigned *eu = nullptr, *ev = nullptr, *ecap = nullptr, *erev = nullptr;
        if ((as = device_alloc(S, &eu, e, "hybrid edges")) != GCUT_OK ||
            (as = device_alloc(S, &ev, e, "hybrid edges")) != GCUT_OK ||
            (as = device_alloc(S, &ecap, e, "hybrid residuals")) != GCUT_OK ||
            (as = device_alloc(S, &erev, e, "hybrid residuals")) != GCUT_OK) {
            *nomem = as == GCUT_ERR_NOMEM;
            return *nomem ? GCUT_OK : as;
        }
        GCUT__CUDA_TRY(cudaMemsetAsync(D.counters + kBigResiduals, 0, 8, stream), "memset");
        sub_edges_kernel<K, A>
            <<<node_blocks, kBlock, 0, stream>>>(D, fs, id, eoff, eu, ev, ecap, erev);
        GCUT__CUDA_TRY(cudaGetLastError(), "hybrid edges launch");

        /* Download straight into a host graph: bk solves it as it is. */
        gcut_graph *h = nullptr;
        gcut_status hs = gcut_graph_create((int64_t)k, (int64_t)e, &h);
        if (hs != GCUT_OK)
            return hs;
        unsigned *horig = static_cast<unsigned *>(gcut__malloc(k * 4 + 4, "hybrid node ids"));
        if (horig == nullptr) {
            gcut_graph_free(h);
            return GCUT_ERR_NOMEM;
        }
        *subg = h;
        *orig = horig;
        h->num_edges = (int64_t)e;
        if (e > 0) {
            GCUT__CUDA_TRY(cudaMemcpyAsync(h->edge_u32, eu, e * 4, cudaMemcpyDeviceToHost, stream),
                           "download sub edges");
            GCUT__CUDA_TRY(cudaMemcpyAsync(h->edge_v32, ev, e * 4, cudaMemcpyDeviceToHost, stream),
                           "download sub edges");
            GCUT__CUDA_TRY(
                cudaMemcpyAsync(h->edge_cap, ecap, e * 4, cudaMemcpyDeviceToHost, stream),
                "download sub residuals");
            GCUT__CUDA_TRY(
                cudaMemcpyAsync(h->edge_rev, erev, e * 4, cudaMemcpyDeviceToHost, stream),
                "download sub residuals");
        }
        GCUT__CUDA_TRY(cudaMemcpyAsync(h->tw_source, ts, k * 8, cudaMemcpyDeviceToHost, stream),
                       "download sub terminals");
        GCUT__CUDA_TRY(cudaMemcpyAsync(h->tw_sink, tt, k * 8, cudaMemcpyDeviceToHost, stream),
                       "download sub terminals");
        GCUT__CUDA_TRY(cudaMemcpyAsync(horig, dorig, k * 4, cudaMemcpyDeviceToHost, stream),
                       "download sub ids");
        GCUT__CUDA_TRY(cudaMemcpyAsync(S.host + kBigResiduals, D.counters + kBigResiduals, 8,
                                       cudaMemcpyDeviceToHost, stream),
                       "read counters");
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "hybrid download");
        /* Residuals run to 2^32 - 2; gcut_graph edges take int32 each way: a residual past
         * INT32_MAX keeps INT32_MAX and the rest goes on a parallel edge. */
        if (S.host[kBigResiduals] > 0) {
            for (size_t i = 0; i < e; i++) {
                const uint32_t c = (uint32_t)h->edge_cap[i], r = (uint32_t)h->edge_rev[i];
                if (c <= (uint32_t)INT32_MAX && r <= (uint32_t)INT32_MAX)
                    continue;
                const uint32_t c1 = c > (uint32_t)INT32_MAX ? (uint32_t)INT32_MAX : c;
                const uint32_t r1 = r > (uint32_t)INT32_MAX ? (uint32_t)INT32_MAX : r;
                h->edge_cap[i] = (int32_t)c1;
                h->edge_rev[i] = (int32_t)r1;
                if ((hs = gcut_graph_add_edge(h, h->edge_u32[i], h->edge_v32[i], (int32_t)(c - c1),
                                              (int32_t)(r - r1))) != GCUT_OK)
                    return hs;
            }
        }
        for (void *p : {(void *)ts, (void *)tt, (void *)dorig, (void *)ecount, (void *)eoff,
                        (void *)eu, (void *)ev, (void *)ecap, (void *)erev})
            device_release(S, p);
        if (verbose)
            fprintf(stderr,
                    "cuda-general: hybrid: residual problem of %zu nodes and %zu edges (%llu "
                    "residuals split) cut out and downloaded in %.3f ms\n",
                    k, e, S.host[kBigResiduals], gcut__now_ms() - t1);
        return GCUT_OK;
    };

    unsigned active = 0, depth = 0;
    int64_t sweeps = 0;
    memset(ctl, 0, kNumCtl * sizeof(unsigned));
    GCUT__CUDA_TRY(cudaMemsetAsync(D.count, 0, kNumCtl * sizeof(unsigned), stream), "memset");
    double relabel_ms = gcut__now_ms();
    if ((st = global_relabel(&active, &depth)) != GCUT_OK)
        return st;
    relabel_ms = gcut__now_ms() - relabel_ms;
    /* A safety net, never a result: past this many sweeps the solve reports an error rather
     * than loop on (push-relabel does O(n^2) relabels, each sweep at least one per vertex that
     * cannot push). */
    const double sweep_limit = 4.0 * (double)n * (double)n + 1e6;
    struct HostSub {
        gcut_graph *g = nullptr;
        unsigned *orig = nullptr;
        ~HostSub() {
            gcut_graph_free(g);
            gcut__free(orig);
        }
    } sub;
    bool hybrid_on = hybrid != 0;
    unsigned rejected = 0; /* active count of the last refused try (0: none) */
    while (active > 0) {
        if (hybrid_on && (long long)active <= hyb_active && relabels >= hyb_after &&
            (rejected == 0 || active <= rejected / 2)) {
            bool nomem = false;
            if ((st = extract_sub(active, &sub.g, &sub.orig, &nomem)) != GCUT_OK)
                return st;
            if (sub.g != nullptr)
                break;
            if (nomem) /* no room on the device for the sub: carry on there, without it */
                hybrid_on = false;
            rejected = active;
            if ((st = collect(&active)) != GCUT_OK)
                return st;
        }
        /* Sweeps before the next global relabel: at most about the BFS depth (the hops the
         * excess must travel), and (balance) no longer than `balance` percent of the last
         * global relabel's time, so that the BFS and the sweeps cost about alike (Goldberg's
         * rule, relabel after work of the order of the relabel's own, in time); read back
         * every few launches. */
        const unsigned budget = fixed_sweeps > 0 ? (unsigned)fixed_sweeps
                                : depth < 16     ? 16u
                                                 : depth;
        const unsigned start = ctl[kSweeps];
        const double phase_start = gcut__now_ms();
        if (persist) {
            unsigned max_steps = budget;
            unsigned long long limit_ns = 0;
            if (fixed_sweeps == 0 && balance > 0) {
                const double ns = balance * 0.01 * relabel_ms * 1e6;
                limit_ns = ns < 1.0 ? 1ull : (unsigned long long)ns;
            }
            int cyc = cycles;
            void *args[] = {&D, &cyc, &max_steps, &limit_ns, &grid_small, &min_sweeps, &dense};
            if ((st = coop_launch((const void *)push_grid_kernel<K, A>, args,
                                  "cooperative push launch")) != GCUT_OK)
                return st;
            if (persist && (st = read_ctl()) != GCUT_OK)
                return st;
        }
        for (; !persist;) {
            for (int b = 0; b < 4; b++) {
                push_small_kernel<K, A><<<1, kSmallBlock, 0, stream>>>(D, cycles, budget);
                push_kernel<K, A><<<work_blocks, kBlock, 0, stream>>>(D, cycles);
            }
            GCUT__CUDA_TRY(cudaGetLastError(), "push kernel launch");
            if ((st = read_ctl()) != GCUT_OK)
                return st;
            if (ctl[ctl[kQ] % 3] == 0 || ctl[kSweeps] - start >= budget)
                break;
            if (fixed_sweeps == 0 && balance > 0 &&
                gcut__now_ms() - phase_start >= balance * 0.01 * relabel_ms)
                break;
        }
        sweeps += (unsigned)(ctl[kSweeps] - start); /* 32-bit counter on the device */
        const double relabel_start = gcut__now_ms();
        if ((st = global_relabel(&active, &depth)) != GCUT_OK)
            return st;
        relabel_ms = gcut__now_ms() - relabel_start;
        if (verbose)
            fprintf(stderr,
                    "cuda-general: %lld sweeps, %lld global relabels, %u active, depth %u, "
                    "last relabel %.3f ms, %.3f ms\n",
                    (long long)sweeps, (long long)relabels, active, depth, relabel_ms,
                    gcut__now_ms() - t_solve);
        if ((double)sweeps > sweep_limit)
            return gcut__fail(GCUT_ERR_INTERNAL,
                              "cuda-general: no maximum preflow after %lld sweeps on %lld nodes "
                              "(%u still active); please report this graph",
                              (long long)sweeps, n, active);
    }
    const int64_t levels_total = ctl[kBfsLevels];

    /* Labels: sink side iff the last BFS reached the node (the sub's nodes are overwritten
     * below); the flow that reached the sink on the device. */
    unsigned char *labels_dev = reinterpret_cast<unsigned char *>(D.mark);
    finish_kernel<A><<<node_blocks, kBlock, 0, stream>>>(D, labels_dev);
    GCUT__CUDA_TRY(cudaGetLastError(), "finish kernel launch");
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(S.host, D.counters, kNumCounters * 8, cudaMemcpyDeviceToHost, stream),
        "read counters");
    if (labels != NULL)
        GCUT__CUDA_TRY(cudaMemcpyAsync(labels, labels_dev, nodes, cudaMemcpyDeviceToHost, stream),
                       "download labels");
    GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "solve");
    const unsigned long long *c = S.host;
    const unsigned long long sink_total = (c[kSumSinkHi] << 32) + c[kSumSink];
    *flow = (int64_t)(sink_total - c[kSumSinkRes]);
    const unsigned long long pushes = c[kPushes];

    /* Hybrid finish, part 2 (host): bk on the residual problem. Its flow adds to the device's;
     * its cut (source side: what its source still reaches) replaces the sub's labels. The rest
     * keeps the device's labels: outside the sub, a node that reaches the sink is not reached
     * from any excess and stays on the sink side, one that does not stays on the source side. */
    int64_t bk_augmentations = 0;
    if (sub.g != nullptr) {
        const double t0 = gcut__now_ms();
        const size_t k = (size_t)sub.g->num_nodes;
        uint8_t *sub_labels = nullptr;
        if (labels != NULL &&
            (sub_labels = static_cast<uint8_t *>(gcut__malloc(k + 1, "hybrid labels"))) == nullptr)
            return GCUT_ERR_NOMEM;
        gcut_options bo;
        gcut_options_init(&bo);
        bo.solver = "bk";
        bo.warm = 0;
        gcut_stats bs;
        int64_t sub_flow = 0;
        st = gcut_graph_solve(sub.g, &bo, &sub_flow, sub_labels, &bs);
        if (st == GCUT_OK && labels != NULL)
            for (size_t i = 0; i < k; i++)
                labels[sub.orig[i]] = sub_labels[i];
        gcut__free(sub_labels);
        if (st != GCUT_OK)
            return st;
        *flow += sub_flow;
        bk_augmentations = bs.augmentations;
        if (verbose)
            fprintf(stderr,
                    "cuda-general: hybrid: bk on the residual problem: flow %lld, %lld "
                    "augmentations, %.3f ms\n",
                    (long long)sub_flow, (long long)bs.augmentations, gcut__now_ms() - t0);
    }
    stats->solve_ms = gcut__now_ms() - t_solve;
    stats->sweeps = sweeps;
    stats->global_relabels = relabels;
    stats->pushes = (int64_t)pushes;
    stats->augmentations = bk_augmentations;
    stats->device_bytes = (int64_t)S.peak_bytes;
    if (verbose)
        fprintf(stderr,
                "cuda-general: flow %lld, %lld sweeps, %lld global relabels (%lld BFS levels), "
                "%llu pushes, %s, build %.3f ms, solve %.3f ms, %zu device bytes at peak\n",
                (long long)*flow, (long long)sweeps, (long long)relabels, (long long)levels_total,
                pushes, sub.g != nullptr ? "finished by bk on the host" : "finished on the GPU",
                stats->build_ms, stats->solve_ms, S.peak_bytes);
    return GCUT_OK;
}

} // namespace

extern "C" gcut_status gcut__cudageneral_solve_graph(gcut_graph *g, const gcut_options *options,
                                                     int64_t *flow, uint8_t *labels,
                                                     gcut_stats *stats) {
    const double t_start = gcut__now_ms();
    if (g == NULL || flow == NULL || stats == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "cuda-general: graph, flow or stats is NULL");
    if (!gcut__cuda_available())
        return gcut__fail(GCUT_ERR_NO_DEVICE, "cuda-general: no CUDA device is usable here");
    if (g->num_nodes >= kInf || !g->ids32)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "cuda-general: %lld nodes; this solver indexes nodes and heights with "
                          "int32 and takes fewer than %d",
                          (long long)g->num_nodes, kInf);
    *flow = 0;
    if (g->num_nodes == 0)
        return GCUT_OK;
    const int device = options ? options->device : 0;
    int count = 0;
    cudaGetDeviceCount(&count);
    cudaGetLastError();
    if (device < 0 || device >= count)
        return gcut__fail(GCUT_ERR_NO_DEVICE, "cuda-general: options.device %d not in [0, %d)",
                          device, count);
    GCUT__CUDA_TRY(cudaSetDevice(device), "cudaSetDevice");
    const int verbose = options ? options->verbose : 0;
    int want_layout = -1;
    gcut_status st = layout_request(&want_layout);
    if (st != GCUT_OK)
        return st;
    Session S;
    /* Paired-arc indices are uint32 while the arcs fit, 64-bit past it;
     * GCUT_CUDAGENERAL_WIDE_ARCS=1 takes the 64-bit path on any graph (tests: that path on graphs
     * that fit a small GPU). */
    if ((unsigned long long)g->num_edges * 2 < 0xffffffffull &&
        gcut__env_int("GCUT_CUDAGENERAL_WIDE_ARCS", 0, 0, 1) == 0)
        return solve<unsigned>(S, g, device, verbose, want_layout, flow, labels, stats, t_start);
    return solve<unsigned long long>(S, g, device, verbose, want_layout, flow, labels, stats,
                                     t_start);
}
