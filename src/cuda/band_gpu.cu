/* band_gpu.cu - the device pipeline of multilevel narrow-banded cuts (Lombaert et al. 2005;
 * Lattari 2010 3.5 and 5.4, Algorithm 15): coarsening, every level's capacities, projection, band
 * selection and labels on the GPU, each level solved by cuda-grid as a MASKED GRID (docs/BAND.md,
 * "GPU": nodes outside the band isolated, their n-links folded into the band's terminals). */
#include "internal.h"
#include "cuda_check.h"
#include "../seg/band_node.h"
#include "../seg/seg_internal.h"
#include "staging.h"

#include <cuda_runtime.h>

#include <math.h>
#include <mutex>
#include <new>
#include <stdio.h>
#include <string.h>

namespace {

gcut_status cuda_fail(cudaError_t err, const char *what) {
    return gcut__cuda_fail("banded segmentation (device)", err, what);
}

constexpr int kThreads = 256;

inline unsigned blocks_for(long long n) {
    long long b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < 1 ? 1 : b > 65535LL * 16 ? 65535LL * 16 : b);
}

/* Direction offsets of a level's grid (gcut_grid's order, which cuda-grid takes). */
struct Dirs {
    int num;
    signed char off[26][3];
    signed char of_slot[27]; /* the direction of each slot (gcut__band_slot), -1 for none */
};

/* Each coarse pixel: the rounded mean of its 1-8 children, and the OR of their seed bits
 * (gcut__band_coarsen_pixels / gcut__band_coarsen_seeds). */
__global__ void coarsen_kernel(const uint8_t *fine, const uint8_t *fseeds, long long D, long long H,
                               long long W, int ch, uint8_t *coarse, uint8_t *cseeds) {
    const long long cD = (D + 1) / 2, cH = (H + 1) / 2, cW = (W + 1) / 2, cn = cD * cH * cW;
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < cn;
         p += (long long)gridDim.x * blockDim.x) {
        const long long x = p % cW, y = (p / cW) % cH, z = p / (cW * cH);
        unsigned sum[3] = {0, 0, 0}, count = 0;
        uint8_t bits = 0;
        for (long long fz = 2 * z; fz < 2 * z + 2 && fz < D; fz++)
            for (long long fy = 2 * y; fy < 2 * y + 2 && fy < H; fy++)
                for (long long fx = 2 * x; fx < 2 * x + 2 && fx < W; fx++) {
                    const long long i = (fz * H + fy) * W + fx;
                    for (int c = 0; c < ch; c++)
                        sum[c] += fine[i * ch + c];
                    bits |= fseeds[i] & (GCUT_SEED_FOREGROUND | GCUT_SEED_BACKGROUND);
                    count++;
                }
        for (int c = 0; c < ch; c++)
            coarse[p * ch + c] = (uint8_t)((sum[c] + count / 2) / count);
        cseeds[p] = bits;
    }
}

/* The masked grid of level k (band_node.h) at the band nodes listed (list_kernel), a thread per
 * band node, so that warps do not idle on the nodes outside the band; the masked solve reads no
 * other node's capacities (gcut__cudagrid_ctx_solve_masked isolates every node outside the mask).
 * CONN is the connectivity as a compile-time constant (band_node.h's loops over the 26 offsets then
 * fold to its neighbours). */
template <int CONN>
__global__ void band_caps_kernel(gcut__band_image base, gcut__seg_tables tables, int k,
                                 const uint8_t *coarse, long long D, long long H, long long W,
                                 const uint8_t *state, const unsigned *list, long long count,
                                 Dirs dirs, int32_t *caps) {
    const long long n = D * H * W;
    const int64_t dims[3] = {D, H, W};
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < count;
         j += (long long)gridDim.x * blockDim.x) {
        const long long i = list[j];
        const long long x = i % W, y = (i / W) % H, z = i / (W * H);
        int64_t s, t, w[27];
        gcut__band_masked_node(&base, &tables, CONN, k, coarse, dims, state, z, y, x, &s, &t, w);
        caps[i] = (int32_t)s;
        caps[n + i] = (int32_t)t;
        for (int d = 0; d < dirs.num; d++)
            caps[(2 + d) * n + i] =
                (int32_t)w[gcut__band_slot(dirs.off[d][0], dirs.off[d][1], dirs.off[d][2])];
    }
}

/* The coarsest level's full grid, a group of 2^glog lanes of a warp per node: its lanes share the
 * block's 2^k x 2^k (x 2^k) pixels (gcut__band_block_add: gcut__band_pixel_add's sums, which the
 * host's pass adds), the sums are reduced over the group (integers: the same sums in any order),
 * the group's first lane finishes and writes. A thread per node does 64 (2D) to 512 (3D) pixels
 * at 3 levels, with a few hundred thousand threads in all: too few for the device. Until the
 * seventh pass a whole warp took each node (glog 5, GCUT_BAND_LEAN=0): at 3840x2160's coarsest
 * level (8x8 blocks) two pixels a lane, and the 10 sums' five-step reductions, done by every
 * warp for one node, and lane 0's finish, cost more than the pixels; now fewer lanes a node
 * (coarse_group_log), the reductions shared by 32 / 2^glog nodes. */
template <int CONN>
__global__ void __launch_bounds__(kThreads, 2)
    coarse_caps_kernel(gcut__band_image base, gcut__seg_tables tables, int k, const uint8_t *coarse,
                       long long D, long long H, long long W, Dirs dirs, int32_t *caps, int glog) {
    const long long n = D * H * W;
    const int lane = threadIdx.x & 31, group = 1 << glog, sub = lane & (group - 1);
    const int per_warp = 32 >> glog;
    const long long warps = (long long)gridDim.x * (blockDim.x / 32);
    const int64_t dims[3] = {D, H, W};
    /* warp-uniform trip count: every lane takes part in the shuffles and votes */
    for (long long first = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32 * per_warp;
         first < n; first += warps * per_warp) {
        const long long i = first + (lane >> glog);
        const bool active = i < n;
        const long long cx = i % W, cy = (i / W) % H, cz = i / (W * H);
        const int64_t FD = base.dims[0], FH = base.dims[1], FW = base.dims[2];
        const int64_t z0 = cz << k, y0 = cy << k, x0 = cx << k, side = (int64_t)1 << k;
        const int64_t box[6] = {z0, z0 + side < FD ? z0 + side : FD,
                                y0, y0 + side < FH ? y0 + side : FH,
                                x0, x0 + side < FW ? x0 + side : FW};
        int64_t s = 0, t = 0, w[27];
#pragma unroll
        for (int a = 0; a < 27; a++)
            w[a] = 0;
        /* the block's 2^k-sided cube by shifts (no division per pixel; 64-bit divisions were
         * a good part of this kernel), pixels past a clipped block's edge skipped */
        const int kz = FD > 1 ? k : 0, cube = active ? 1 << (2 * k + kz) : 0;
        const int mask = (int)side - 1;
        for (int v = sub; v < cube; v += group) {
            const int64_t px = x0 + (v & mask), py = y0 + ((v >> k) & mask),
                          pz = z0 + (v >> (2 * k));
            if (px < box[5] && py < box[3] && pz < box[1])
                gcut__band_block_add(&base, &tables, CONN, box, pz, py, px, &s, &t, w);
        }
        for (int o = group / 2; o > 0; o /= 2) {
            s += __shfl_down_sync(0xffffffffu, s, o);
            t += __shfl_down_sync(0xffffffffu, t, o);
        }
        /* Only the slots some lane filled are reduced (a vote per slot: the connectivity fills
         * 6 to 26 of the 27, and a slot no lane filled sums to 0 in every group's first lane
         * already). A group's first lane sums its group's lanes only (offsets below the
         * group's size, groups aligned to it). */
#pragma unroll
        for (int a = 0; a < 27; a++)
            if (__any_sync(0xffffffffu, w[a] != 0))
                for (int o = group / 2; o > 0; o /= 2)
                    w[a] += __shfl_down_sync(0xffffffffu, w[a], o);
        if (active && sub == 0) {
            gcut__band_finish(&tables, CONN, k, FD > 1, coarse, dims, cz, cy, cx, &s, &t, w);
            caps[i] = (int32_t)s;
            caps[n + i] = (int32_t)t;
#pragma unroll
            for (int a = 0; a < 27; a++) /* slot by slot: w indexed by constants only */
                if (dirs.of_slot[a] >= 0)
                    caps[(2 + dirs.of_slot[a]) * n + i] = (int32_t)w[a];
        }
    }
}

/* The lanes per node of coarse_caps_kernel at level k, as log2 (lean; a warp per node as before
 * the seventh pass otherwise); GCUT_BAND_COARSE_GLOG=0..5 sets it (for tuning runs; the results
 * do not depend on it). */
int coarse_group_log(int k, bool three_d, bool lean) {
    if (!lean)
        return 5;
    const int forced = gcut__env_int("GCUT_BAND_COARSE_GLOG", -1, -1, 5); /* for tuning runs */
    if (forced >= 0)
        return forced;
    /* 2D: about 32 pixels a lane (H100, 3840x2160's coarsest level of 8x8 blocks, the sweep of
     * GCUT_BAND_COARSE_GLOG after call 2: 2 lanes a node 0.25 ms, 4 0.31, 8 0.44, 16 0.57, a warp
     * 0.79); 3D: about 8 (512^3's 8x8x8 blocks take a warp, as before; not swept) */
    const int cube_log = 2 * k + (three_d ? k : 0);
    int g = cube_log - (three_d ? 3 : 5);
    if (!three_d && cube_log >= 4 && g < 1)
        g = 1; /* 16-pixel blocks: 2 lanes of 8, as call 2 ran them (a lane of 16 untested) */
    return g < 0 ? 0 : g > 5 ? 5 : g;
}

/* The instance of a kernel template for the pipeline's connectivity. */
template <typename Kernel> Kernel pick(int conn, Kernel k4, Kernel k8, Kernel k6, Kernel k26) {
    return conn == 4 ? k4 : conn == 8 ? k8 : conn == 6 ? k6 : k26;
}

/* Every fine pixel takes its parent's label (gcut__band_project). */
__global__ void project_kernel(const uint8_t *coarse, long long D, long long H, long long W,
                               uint8_t *fine) {
    const long long n = D * H * W, cH = (H + 1) / 2, cW = (W + 1) / 2;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long x = i % W, y = (i / W) % H, z = i / (W * H);
        fine[i] = coarse[((z / 2) * cH + y / 2) * cW + x / 2] & GCUT__BAND_LABEL;
    }
}

/* The projected boundary (a pixel with an axis neighbour of the other label) and the seeds the
 * projection contradicts (gcut__band_boundary, as band.c's passes). */
__global__ void mark_kernel(const uint8_t *state, const uint8_t *seeds, long long D, long long H,
                            long long W, uint8_t *mark) {
    const long long n = D * H * W;
    const int64_t dims[3] = {D, H, W};
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long x = i % W, y = (i / W) % H, z = i / (W * H);
        mark[i] = gcut__band_boundary(state, seeds, i, z, y, x, dims);
    }
}

/* One axis of the Chebyshev dilation: out[i] = any in[] within d along the axis (stride step,
 * coordinate c of length len). */
__global__ void dilate_kernel(const uint8_t *in, long long n, long long step, long long len,
                              long long d, uint8_t *out) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long c = (i / step) % len;
        const long long lo = c - d < 0 ? 0 : c - d, hi = c + d >= len ? len - 1 : c + d;
        uint8_t any = 0;
        for (long long a = lo; a <= hi && !any; a++)
            any = in[i + (a - c) * step];
        out[i] = any;
    }
}

/* Warp-aggregated count into *counter. */
__device__ void count_add(bool v, unsigned long long *counter) {
    const unsigned active = __activemask();
    const unsigned ballot = __ballot_sync(active, v);
    if ((threadIdx.x & 31) == (unsigned)(__ffs(active) - 1) && ballot != 0)
        atomicAdd(counter, (unsigned long long)__popc(ballot));
}

/* The fused band selection (fifth pass; GCUT_BAND_FUSED=0: the kernels above, for before /
 * after): a level's rows (z, y) in segments of kThreads pixels along x, over a 3D grid
 * (segments, rows, planes) that each block walks with the grid's strides, so that no thread
 * divides an index (the kernels above spend most of their time in 64-bit divisions); the
 * projection, the boundary marks and the dilation along x in one pass. Bands wider than kHalo
 * take the kernels above. */
constexpr int kHalo = 32;

/* Sum v over the block into *target, one atomic per block (none when the sum is 0). */
__device__ void block_sum_add(unsigned long long v, unsigned long long *target) {
    __shared__ unsigned long long warp_sums[kThreads / 32];
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_down_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < kThreads / 32 ? warp_sums[lane] : 0;
        for (int o = 16; o > 0; o /= 2)
            v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0 && v != 0)
            atomicAdd(target, v);
    }
}

/* The walk of a by-rows kernel: z, y, x and the pixel index i; the body may use __syncthreads
 * (every thread of a block runs the same iterations). */
#define GCUT__ROWS(D, H, W)                                                                        \
    for (int z = blockIdx.z; z < (D); z += gridDim.z)                                              \
        for (int y = blockIdx.y; y < (H); y += gridDim.y)                                          \
            for (int x0 = blockIdx.x * kThreads; x0 < (W); x0 += gridDim.x * kThreads)

/* The projected label of fine pixel (z, y, x): its parent's (gcut__band_project). */
__device__ inline uint8_t parent_label(const uint8_t *coarse, int z, int y, int x, long long cH,
                                       long long cW) {
    return coarse[((z >> 1) * cH + (y >> 1)) * cW + (x >> 1)] & GCUT__BAND_LABEL;
}

/* Projection, boundary marks (gcut__band_boundary's rule on the projected labels, read from the
 * coarse level: a fine pixel's neighbours have their parents' labels) and their dilation by d
 * along x (d <= kHalo) through shared memory: state gets the labels, out the x-dilated marks. */
__global__ void project_mark_kernel(const uint8_t *coarse, const uint8_t *seeds, int D, int H,
                                    int W, int d, uint8_t *state, uint8_t *out) {
    __shared__ uint8_t m[kThreads + 2 * kHalo];
    const long long cH = (H + 1) / 2, cW = (W + 1) / 2;
    GCUT__ROWS(D, H, W) {
        const long long row = ((long long)z * H + y) * W;
        for (int t = threadIdx.x; t < kThreads + 2 * d; t += blockDim.x) {
            const int x = x0 - d + t;
            uint8_t mk = 0;
            if (x >= 0 && x < W) {
                const long long i = row + x;
                const uint8_t l = parent_label(coarse, z, y, x, cH, cW), sd = seeds[i];
                bool b = ((sd & GCUT_SEED_FOREGROUND) && !l) || ((sd & GCUT_SEED_BACKGROUND) && l);
                b |= x > 0 && parent_label(coarse, z, y, x - 1, cH, cW) != l;
                b |= x + 1 < W && parent_label(coarse, z, y, x + 1, cH, cW) != l;
                b |= y > 0 && parent_label(coarse, z, y - 1, x, cH, cW) != l;
                b |= y + 1 < H && parent_label(coarse, z, y + 1, x, cH, cW) != l;
                b |= z > 0 && parent_label(coarse, z - 1, y, x, cH, cW) != l;
                b |= z + 1 < D && parent_label(coarse, z + 1, y, x, cH, cW) != l;
                mk = b;
                if (t >= d && t < d + kThreads)
                    state[i] = l;
            }
            m[t] = mk;
        }
        __syncthreads();
        const int x = x0 + (int)threadIdx.x;
        if (x < W) {
            uint8_t any = 0;
            for (int a = 0; a <= 2 * d; a++)
                any |= m[threadIdx.x + a];
            out[row + x] = any;
        }
        __syncthreads();
    }
}

/* The dilation by d along y (axis 1) or z (axis 2); the last one (last) sets the band bit in
 * state instead of writing out, and counts the band into *count; with list (seventh pass) it
 * also appends the band's nodes to it (one atomic on *listed per warp, entries past cap
 * dropped: the caller compares *listed with cap), so that the masked level needs no pass of
 * list_kernel over the whole level. */
__global__ void dilate_rows_kernel(const uint8_t *in, int D, int H, int W, int axis, int d,
                                   bool last, uint8_t *out, uint8_t *state,
                                   unsigned long long *count, unsigned *list,
                                   unsigned long long cap, unsigned long long *listed) {
    const long long step = axis == 1 ? W : (long long)W * H;
    const int len = axis == 1 ? H : D;
    const int lane = threadIdx.x & 31;
    unsigned long long band = 0;
    GCUT__ROWS(D, H, W) { /* block-uniform: every lane of a warp takes each step */
        const int x = x0 + (int)threadIdx.x, c = axis == 1 ? y : z;
        const long long i = ((long long)z * H + y) * W + x;
        bool any = false;
        if (x < W) {
            const int lo = c - d < 0 ? 0 : c - d, hi = c + d >= len ? len - 1 : c + d;
            for (int a = lo; a <= hi && !any; a++)
                any = in[i + (a - c) * step] != 0;
            if (!last) {
                out[i] = any;
            } else if (any) {
                state[i] |= GCUT__BAND_IN;
                band++;
            }
        }
        if (list != nullptr) {
            const unsigned ballot = __ballot_sync(0xffffffffu, any);
            unsigned long long start = 0;
            if (lane == 0 && ballot != 0)
                start = atomicAdd(listed, (unsigned long long)__popc(ballot));
            start = __shfl_sync(0xffffffffu, start, 0);
            const unsigned long long at = start + __popc(ballot & ((1u << lane) - 1u));
            if (any && at < cap)
                list[at] = (unsigned)i;
        }
    }
    if (last)
        block_sum_add(band, count);
}

/* Set the band bit from the dilated marks and count the band. */
__global__ void band_kernel(uint8_t *state, const uint8_t *band, long long n,
                            unsigned long long *count) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const bool in = band[i] != 0;
        if (in)
            state[i] |= GCUT__BAND_IN;
        count_add(in, count);
    }
}

/* The band's nodes into list (one atomic per warp; the order does not matter: each node's
 * capacities are its own). */
__global__ void list_kernel(const uint8_t *state, long long n, unsigned *list,
                            unsigned long long *count) {
    const int lane = threadIdx.x & 31;
    for (long long base = blockIdx.x * (long long)blockDim.x; base < n;
         base += (long long)gridDim.x * blockDim.x) {
        const long long i = base + threadIdx.x;
        const bool in = i < n && (state[i] & GCUT__BAND_IN) != 0;
        const unsigned ballot = __ballot_sync(0xffffffffu, in);
        unsigned long long start = 0;
        if (lane == 0 && ballot != 0)
            start = atomicAdd(count, (unsigned long long)__popc(ballot));
        start = __shfl_sync(0xffffffffu, start, 0);
        if (in)
            list[start + __popc(ballot & ((1u << lane) - 1u))] = (unsigned)i;
    }
}

/* The solve's labels into the band's pixels, from the band node list (fused route). */
__global__ void assemble_list_kernel(uint8_t *state, const uint8_t *labels, const unsigned *list,
                                     long long count) {
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < count;
         j += (long long)gridDim.x * blockDim.x) {
        const unsigned i = list[j];
        state[i] = (uint8_t)((state[i] & ~GCUT__BAND_LABEL) |
                             (labels[i] == GCUT_SOURCE ? GCUT__BAND_LABEL : 0));
    }
}

/* The solve's labels (GCUT_SOURCE = foreground) into the band's pixels (all when all). */
__global__ void assemble_kernel(uint8_t *state, const uint8_t *labels, long long n, int all) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        if (all || (state[i] & GCUT__BAND_IN))
            state[i] = (uint8_t)((all ? 0 : state[i] & ~GCUT__BAND_LABEL) |
                                 (labels[i] == GCUT_SOURCE ? GCUT__BAND_LABEL : 0));
}

/* The caller's mask (1 = foreground) from the finest state, and the foreground count. */
__global__ void mask_kernel(const uint8_t *state, long long n, uint8_t *mask,
                            unsigned long long *count) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const uint8_t l = state[i] & GCUT__BAND_LABEL;
        mask[i] = l;
        count_add(l != 0, count);
    }
}

/* The caller's mask as bits (bit k of byte j: pixel 8j + k is foreground, staging.h's layout)
 * from the finest state, and the foreground count: a thread per byte. */
__global__ void mask_bits_kernel(const uint8_t *state, long long n, uint8_t *bits,
                                 unsigned long long *count) {
    const long long bytes = (n + 7) / 8;
    unsigned long long fg = 0;
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < bytes;
         j += (long long)gridDim.x * blockDim.x) {
        unsigned b = 0;
        if (8 * j + 8 <= n) { /* state is cudaMalloc'd: 8 bytes at 8j are aligned */
            const uint2 v = reinterpret_cast<const uint2 *>(state)[j];
#pragma unroll
            for (int k = 0; k < 4; k++)
                b |= ((v.x >> (8 * k)) & GCUT__BAND_LABEL) << k |
                     ((v.y >> (8 * k)) & GCUT__BAND_LABEL) << (k + 4);
        } else {
            for (long long k = 0; 8 * j + k < n; k++)
                b |= (state[8 * j + k] & GCUT__BAND_LABEL ? 1u : 0u) << k;
        }
        bits[j] = (uint8_t)b;
        fg += (unsigned)__popc(b);
    }
    block_sum_add(fg, count);
}

/* The image's energy of the finest labels (gcut__band_energy) into *sum. */
__global__ void energy_kernel(gcut__band_image base, gcut__seg_tables tables, int conn,
                              const uint8_t *state, unsigned long long *sum) {
    const long long D = base.dims[0], H = base.dims[1], W = base.dims[2], n = D * H * W;
    unsigned long long e = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long x = i % W, y = (i / W) % H, z = i / (W * H);
        const uint8_t l = state[i] & GCUT__BAND_LABEL;
        int32_t s, t;
        gcut__band_unary(&base, &tables, i, &s, &t);
        e += (unsigned long long)(l ? t : s);
        for (int dz = 0; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    const bool forward = dz > 0 || (dz == 0 && (dy > 0 || (dy == 0 && dx > 0)));
                    if (!forward || !gcut__band_conn_has(conn, dz, dy, dx))
                        continue;
                    const long long nz = z + dz, ny = y + dy, nx = x + dx;
                    if (nz >= D || ny < 0 || ny >= H || nx < 0 || nx >= W)
                        continue;
                    const long long j = (nz * H + ny) * W + nx;
                    if ((state[j] & GCUT__BAND_LABEL) != l)
                        e += (unsigned long long)gcut__band_pair(&base, &tables, dz, dy, dx, i, j);
                }
    }
    for (int o = 16; o > 0; o /= 2)
        e += __shfl_down_sync(0xffffffffu, e, o);
    if ((threadIdx.x & 31) == 0 && e != 0)
        atomicAdd(sum, e);
}

/* The sum of the squared colour differences of every axis pair (gcut__seg_estimate_sigma's sum,
 * exactly: integers below 2^53) into *sum. */
__global__ void sigma_kernel(const uint8_t *px, int ch, long long D, long long H, long long W,
                             unsigned long long *sum) {
    const long long n = D * H * W;
    unsigned long long e = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long x = i % W, y = (i / W) % H, z = i / (W * H);
        if (x + 1 < W)
            e += (unsigned long long)gcut__seg_sqdiff(px + i * ch, px + (i + 1) * ch, ch);
        if (y + 1 < H)
            e += (unsigned long long)gcut__seg_sqdiff(px + i * ch, px + (i + W) * ch, ch);
        if (z + 1 < D)
            e += (unsigned long long)gcut__seg_sqdiff(px + i * ch, px + (i + W * H) * ch, ch);
    }
    for (int o = 16; o > 0; o /= 2)
        e += __shfl_down_sync(0xffffffffu, e, o);
    if ((threadIdx.x & 31) == 0 && e != 0)
        atomicAdd(sum, e);
}

/* sigma_kernel by rows (fused route): no division per pixel, one atomic per block. */
__global__ void sigma_rows_kernel(const uint8_t *px, int ch, int D, int H, int W,
                                  unsigned long long *sum) {
    const long long plane = (long long)W * H;
    unsigned long long e = 0;
    GCUT__ROWS(D, H, W) {
        const int x = x0 + (int)threadIdx.x;
        if (x >= W)
            continue;
        const long long i = ((long long)z * H + y) * W + x;
        if (x + 1 < W)
            e += (unsigned long long)gcut__seg_sqdiff(px + i * ch, px + (i + 1) * ch, ch);
        if (y + 1 < H)
            e += (unsigned long long)gcut__seg_sqdiff(px + i * ch, px + (i + W) * ch, ch);
        if (z + 1 < D)
            e += (unsigned long long)gcut__seg_sqdiff(px + i * ch, px + (i + plane) * ch, ch);
    }
    block_sum_add(e, sum);
}

/* coarsen_kernel by rows of the coarse level (fused route). */
__global__ void coarsen_rows_kernel(const uint8_t *fine, const uint8_t *fseeds, int D, int H, int W,
                                    int ch, uint8_t *coarse, uint8_t *cseeds) {
    const int cD = (D + 1) / 2, cH = (H + 1) / 2, cW = (W + 1) / 2;
    GCUT__ROWS(cD, cH, cW) {
        const int x = x0 + (int)threadIdx.x;
        if (x >= cW)
            continue;
        unsigned sum[3] = {0, 0, 0}, count = 0;
        uint8_t bits = 0;
        for (int fz = 2 * z; fz < 2 * z + 2 && fz < D; fz++)
            for (int fy = 2 * y; fy < 2 * y + 2 && fy < H; fy++)
                for (int fx = 2 * x; fx < 2 * x + 2 && fx < W; fx++) {
                    const long long i = ((long long)fz * H + fy) * W + fx;
                    for (int c = 0; c < ch; c++)
                        sum[c] += fine[i * ch + c];
                    bits |= fseeds[i] & (GCUT_SEED_FOREGROUND | GCUT_SEED_BACKGROUND);
                    count++;
                }
        const long long p = ((long long)z * cH + y) * cW + x;
        for (int c = 0; c < ch; c++)
            coarse[p * ch + c] = (uint8_t)((sum[c] + count / 2) / count);
        cseeds[p] = bits;
    }
}

/* The grid of a by-rows kernel over a level of dims {D, H, W}: (segments, rows, planes), at
 * most max_blocks blocks (the planes, then the rows folded onto fewer blocks). */
inline dim3 row_grid(long long D, long long H, long long W, long long max_blocks) {
    const long long segs = (W + kThreads - 1) / kThreads;
    const long long gx = segs < max_blocks ? segs : max_blocks;
    long long gy = H < 65535 ? H : 65535;
    if (gy > max_blocks / gx)
        gy = max_blocks / gx < 1 ? 1 : max_blocks / gx;
    long long gz = D < 65535 ? D : 65535;
    if (gz > max_blocks / (gx * gy))
        gz = max_blocks / (gx * gy) < 1 ? 1 : max_blocks / (gx * gy);
    return dim3((unsigned)gx, (unsigned)gy, (unsigned)gz);
}

/* One level's device arrays and cuda-grid context. */
struct Level {
    int64_t dims[3] = {1, 1, 1};
    long long n = 0;
    uint8_t *pixels = nullptr; /* the level's (downsampled) image; level 0: the upload */
    uint8_t *seeds = nullptr;  /* level 0: the upload (codes); coarser: seed bits */
    uint8_t *state = nullptr;  /* LABEL, BAND */
    int32_t *caps = nullptr;   /* (2 + conn) x n: source, sink, directions */
    void *ctx = nullptr;       /* cuda-grid's masked-solve context (gcut__cudagrid_masked_create) */
    bool listed = false;       /* the band node list made by the selection (this run) */
    Dirs dirs{};
};

/* The pipeline of one image shape, kept between calls (as cuda-grid keeps its sessions). */
struct Pipe {
    int64_t dims[3] = {0, 0, 0};
    int channels = 0, conn = 0, levels = 0, device = 0;
    long long max_blocks = 2048; /* of the by-rows kernels: 16 per multiprocessor */
    Level level[GCUT_SEG_MAX_LEVELS + 1];
    uint8_t *tmp[2] = {nullptr, nullptr}; /* the band's marks, level 0's size */
    uint8_t *labels = nullptr;            /* the solve's labels, level 0's size */
    uint8_t *packed = nullptr; /* staged copies: the seeds' 2-bit codes, the mask's bits */
    int32_t *tab = nullptr;    /* unary and pairwise tables */
    size_t tab_count = 0;
    unsigned long long *sums = nullptr; /* counters: band / energy, foreground, list, sigma's sum */
    unsigned *band_list = nullptr;      /* a masked level's band nodes (list_kernel) */
    size_t band_list_cap = 0;
    bool image_loaded = false; /* level 0's pixels uploaded by gcut__band_device_begin */
    cudaStream_t stream = nullptr;
    ~Pipe() {
        for (Level &L : level) {
            if (L.ctx != nullptr)
                gcut__cudagrid_ctx_free(L.ctx, NULL);
            cudaFree(L.pixels);
            cudaFree(L.seeds);
            cudaFree(L.state);
            cudaFree(L.caps);
        }
        cudaFree(tmp[0]);
        cudaFree(tmp[1]);
        cudaFree(band_list);
        cudaFree(labels);
        cudaFree(packed);
        cudaFree(tab);
        cudaFree(sums);
        if (stream != nullptr)
            cudaStreamDestroy(stream);
    }
};

std::mutex pipe_mutex;
Pipe *pipe_cached = nullptr;

int64_t half_up(int64_t s) {
    return (s + 1) / 2;
}

template <typename T> gcut_status dalloc(T **p, size_t count, const char *what) {
    GCUT__CUDA_TRY(cudaMalloc(reinterpret_cast<void **>(p), count * sizeof(T) + 16), what);
    return GCUT_OK;
}

gcut_status pipe_create(const int64_t dims[3], int channels, int conn, int levels, int device,
                        const gcut_options *options, Pipe **out) {
    *out = nullptr;
    void *mem = gcut__malloc(sizeof(Pipe), "banded segmentation device pipeline");
    if (mem == nullptr)
        return GCUT_ERR_NOMEM;
    Pipe *P = new (mem) Pipe();
    auto fail = [&](gcut_status st) {
        P->~Pipe();
        gcut__free(P);
        return st;
    };
    memcpy(P->dims, dims, sizeof P->dims);
    P->channels = channels, P->conn = conn, P->levels = levels, P->device = device;
    cudaError_t err = cudaStreamCreateWithFlags(&P->stream, cudaStreamNonBlocking);
    if (err != cudaSuccess)
        return fail(cuda_fail(err, "cudaStreamCreate"));
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
        sms > 0)
        P->max_blocks = 16LL * sms;
    cudaGetLastError();
    gcut_options o;
    gcut_options_init(&o);
    if (options != NULL)
        o = *options;
    o.verbose = 0;
    gcut_status st;
    for (int k = 0; k <= levels; k++) {
        Level &L = P->level[k];
        for (int a = 0; a < 3; a++)
            L.dims[a] = k == 0 ? dims[a] : half_up(P->level[k - 1].dims[a]);
        L.n = L.dims[0] * L.dims[1] * L.dims[2];
        L.dirs.num = conn;
        memset(L.dirs.of_slot, -1, sizeof L.dirs.of_slot);
        for (int d = 0; d < conn; d++) {
            int off[3];
            gcut__cudagrid_direction(conn, d, off);
            for (int a = 0; a < 3; a++)
                L.dirs.off[d][a] = (signed char)off[a];
            L.dirs.of_slot[gcut__band_slot(off[0], off[1], off[2])] = (signed char)d;
        }
        if ((st = gcut__cudagrid_masked_create(L.dims, conn, &o, &L.ctx)) != GCUT_OK)
            return fail(st);
        if ((st = dalloc(&L.pixels, (size_t)L.n * channels, "level pixels")) != GCUT_OK ||
            (st = dalloc(&L.seeds, (size_t)L.n, "level seeds")) != GCUT_OK ||
            (st = dalloc(&L.state, (size_t)L.n, "level state")) != GCUT_OK ||
            (st = dalloc(&L.caps, (size_t)L.n * (2 + conn), "level capacities")) != GCUT_OK)
            return fail(st);
    }
    const size_t n0 = (size_t)P->level[0].n;
    if ((st = dalloc(&P->tmp[0], n0, "band marks")) != GCUT_OK ||
        (st = dalloc(&P->tmp[1], n0, "band marks")) != GCUT_OK ||
        (st = dalloc(&P->labels, n0, "labels")) != GCUT_OK ||
        (st = dalloc(&P->packed, (n0 + 3) / 4, "packed seeds and mask")) != GCUT_OK ||
        (st = dalloc(&P->sums, 4, "counters")) != GCUT_OK)
        return fail(st);
    *out = P;
    return GCUT_OK;
}

void pipe_destroy(Pipe *P) {
    if (P == nullptr)
        return;
    P->~Pipe();
    gcut__free(P);
}

/* The cached pipeline of this shape, or a new one (the cached one of another shape freed). */
gcut_status pipe_take(const int64_t dims[3], int channels, int conn, int levels,
                      const gcut_options *options, Pipe **out) {
    const int device = options != NULL ? options->device : 0;
    Pipe *old;
    {
        std::lock_guard<std::mutex> lock(pipe_mutex);
        old = pipe_cached;
        pipe_cached = nullptr;
    }
    if (old != nullptr && memcmp(old->dims, dims, sizeof old->dims) == 0 &&
        old->channels == channels && old->conn == conn && old->levels == levels &&
        old->device == device) {
        *out = old;
        return GCUT_OK;
    }
    pipe_destroy(old);
    return pipe_create(dims, channels, conn, levels, device, options, out);
}

void pipe_give(Pipe *P) {
    Pipe *old;
    {
        std::lock_guard<std::mutex> lock(pipe_mutex);
        old = pipe_cached;
        pipe_cached = P;
    }
    pipe_destroy(old);
}

/* The fused selection: projection from the coarse level C, marks and x-dilation in one pass,
 * then y (and z) by rows, the last setting the band bit and counting; *count the band. */
gcut_status select_band_fused(Pipe &P, Level &L, const Level &C, int d, bool lean,
                              long long *count) {
    const int D = (int)L.dims[0], H = (int)L.dims[1], W = (int)L.dims[2];
    cudaStream_t s = P.stream;
    /* the band node list made by the last pass (lean), into the list as large as it is now */
    unsigned *list = lean && P.band_list != nullptr ? P.band_list : nullptr;
    const unsigned long long cap = list != nullptr ? P.band_list_cap : 0;
    L.listed = false;
    const dim3 b = row_grid(D, H, W, P.max_blocks);
    GCUT__CUDA_TRY(cudaMemsetAsync(P.sums, 0, 4 * sizeof(unsigned long long), s), "memset");
    project_mark_kernel<<<b, kThreads, 0, s>>>(C.state, L.seeds, D, H, W, d, L.state, P.tmp[0]);
    if (D > 1) {
        dilate_rows_kernel<<<b, kThreads, 0, s>>>(P.tmp[0], D, H, W, 1, d, false, P.tmp[1], nullptr,
                                                  nullptr, nullptr, 0, nullptr);
        dilate_rows_kernel<<<b, kThreads, 0, s>>>(P.tmp[1], D, H, W, 2, d, true, nullptr, L.state,
                                                  P.sums, list, cap, P.sums + 2);
    } else {
        dilate_rows_kernel<<<b, kThreads, 0, s>>>(P.tmp[0], D, H, W, 1, d, true, nullptr, L.state,
                                                  P.sums, list, cap, P.sums + 2);
    }
    GCUT__CUDA_TRY(cudaGetLastError(), "band selection kernels");
    unsigned long long c[3] = {0, 0, 0}; /* the band, -, the nodes listed */
    GCUT__CUDA_TRY(cudaMemcpyAsync(c, P.sums, sizeof c, cudaMemcpyDeviceToHost, s), "band count");
    GCUT__CUDA_TRY(cudaStreamSynchronize(s), "band selection");
    *count = (long long)c[0];
    L.listed = list != nullptr && c[2] == c[0] && c[0] <= cap; /* else list_kernel makes it */
    return GCUT_OK;
}

/* The three Chebyshev passes of a level's marks (tmp[0]) into its band bit; *count the band. */
gcut_status select_band(Pipe &P, Level &L, long long d, long long *count) {
    const long long D = L.dims[0], H = L.dims[1], W = L.dims[2], n = L.n;
    cudaStream_t s = P.stream;
    const unsigned b = blocks_for(n);
    mark_kernel<<<b, kThreads, 0, s>>>(L.state, L.seeds, D, H, W, P.tmp[0]);
    dilate_kernel<<<b, kThreads, 0, s>>>(P.tmp[0], n, 1, W, d, P.tmp[1]);
    dilate_kernel<<<b, kThreads, 0, s>>>(P.tmp[1], n, W, H, d, P.tmp[0]);
    int last = 0;
    if (D > 1) {
        dilate_kernel<<<b, kThreads, 0, s>>>(P.tmp[0], n, W * H, D, d, P.tmp[1]);
        last = 1;
    }
    GCUT__CUDA_TRY(cudaMemsetAsync(P.sums, 0, 4 * sizeof(unsigned long long), s), "memset");
    band_kernel<<<b, kThreads, 0, s>>>(L.state, P.tmp[last], n, P.sums);
    GCUT__CUDA_TRY(cudaGetLastError(), "band selection kernels");
    unsigned long long c = 0;
    GCUT__CUDA_TRY(cudaMemcpyAsync(&c, P.sums, sizeof c, cudaMemcpyDeviceToHost, s), "band count");
    GCUT__CUDA_TRY(cudaStreamSynchronize(s), "band selection");
    *count = (long long)c;
    return GCUT_OK;
}

/* GCUT_BAND_PROFILE=1: every stage of the pipeline synchronised and its wall time printed to
 * stderr (for finding where the time goes; the syncs cost a little, so the report's figures
 * are a few per cent higher). Off: no sync, no print. */
struct Profile {
    bool on = false;
    double mark = 0;
    cudaStream_t stream = nullptr;
    gcut_status lap(const char *what, int k = -1) {
        if (!on)
            return GCUT_OK;
        GCUT__CUDA_TRY(cudaStreamSynchronize(stream), "profile");
        const double now = gcut__now_ms();
        if (k >= 0)
            fprintf(stderr, "band profile: L%d %s %.3f ms\n", k, what, now - mark);
        else
            fprintf(stderr, "band profile: %s %.3f ms\n", what, now - mark);
        mark = gcut__now_ms();
        return GCUT_OK;
    }
};

/* Level k's (masked when state) grid built and solved; labels assembled into its state.
 * live: the masked solve visits only the tiles holding band nodes (GCUT_BAND_LIVE=0: all). */
gcut_status solve_level(Pipe &P, const gcut__band_image &dbase, const gcut__seg_tables &dtab, int k,
                        bool masked, bool live, bool fused, bool lean, Profile &prof,
                        gcut_seg_level *rep, gcut_stats *stats_out) {
    Level &L = P.level[k];
    cudaStream_t s = P.stream;
    const double t0 = gcut__now_ms();
    const long long count = masked ? (long long)rep->nodes : 0;
    if (masked && P.band_list_cap < (size_t)count) { /* grown, kept for the next runs */
        cudaFree(P.band_list);
        P.band_list = nullptr;
        P.band_list_cap = 0;
        const size_t cap = (size_t)count + (size_t)count / 4 + 1024;
        gcut_status st = dalloc(&P.band_list, cap, "band node list");
        if (st != GCUT_OK)
            return st;
        P.band_list_cap = cap;
    }
    if (!masked) { /* the coarsest level (k >= 1) in full: a group of lanes per node */
        const int glog = coarse_group_log(k, P.dims[0] > 1, lean);
        const long long per_warp = 32 >> glog;
        pick(P.conn, coarse_caps_kernel<4>, coarse_caps_kernel<8>, coarse_caps_kernel<6>,
             coarse_caps_kernel<
                 26>)<<<blocks_for(32 * ((L.n + per_warp - 1) / per_warp)), kThreads, 0, s>>>(
            dbase, dtab, k, L.pixels, L.dims[0], L.dims[1], L.dims[2], L.dirs, L.caps, glog);
    } else { /* the band's nodes listed (unless the selection did), a thread per band node */
        if (!L.listed) {
            GCUT__CUDA_TRY(cudaMemsetAsync(P.sums + 2, 0, sizeof(unsigned long long), s), "memset");
            list_kernel<<<blocks_for(L.n), kThreads, 0, s>>>(L.state, L.n, P.band_list, P.sums + 2);
        }
        pick(P.conn, band_caps_kernel<4>, band_caps_kernel<8>, band_caps_kernel<6>,
             band_caps_kernel<26>)<<<blocks_for(count), kThreads, 0, s>>>(
            dbase, dtab, k, k > 0 ? L.pixels : nullptr, L.dims[0], L.dims[1], L.dims[2], L.state,
            P.band_list, count, L.dirs, L.caps);
    }
    GCUT__CUDA_TRY(cudaGetLastError(), "capacity kernel");
    /* No wait here unless profiling (seventh pass; GCUT_BAND_LEAN=0 waits, as before): the
     * masked solve is ordered after the kernel on the device (an event), so the level's
     * build_ms is the launches' and its solve_ms has the kernel; their sum is the same time. */
    if (!lean)
        GCUT__CUDA_TRY(cudaStreamSynchronize(s), "capacity kernel");
    gcut_status st = prof.lap("capacities", k);
    if (st != GCUT_OK)
        return st;
    const double t1 = gcut__now_ms();
    rep->build_ms += t1 - t0;
    const int32_t *dirs[26];
    for (int d = 0; d < L.dirs.num; d++)
        dirs[d] = L.caps + (size_t)(2 + d) * L.n;
    gcut_stats stats;
    memset(&stats, 0, sizeof stats);
    gcut__ctx_report report;
    memset(&report, 0, sizeof report);
    int64_t live_tiles = 0;
    st = gcut__cudagrid_ctx_solve_masked(L.ctx, L.caps, L.caps + L.n, dirs,
                                         masked ? L.state : nullptr, GCUT__BAND_IN, live ? 1 : 0,
                                         P.labels, s, &rep->flow, &stats, &report, &live_tiles);
    if (st != GCUT_OK)
        return st;
    if (prof.on) {
        char what[160];
        snprintf(what, sizeof what,
                 "solve (%lld tiles visited, %lld sweeps, %lld global relabels, flow %lld)",
                 (long long)live_tiles, (long long)stats.sweeps, (long long)stats.global_relabels,
                 (long long)rep->flow);
        if ((st = prof.lap(what, k)) != GCUT_OK)
            return st;
    }
    if (masked && fused) /* the band's nodes only, from their list */
        assemble_list_kernel<<<blocks_for(count), kThreads, 0, s>>>(L.state, P.labels, P.band_list,
                                                                    count);
    else
        assemble_kernel<<<blocks_for(L.n), kThreads, 0, s>>>(L.state, P.labels, L.n,
                                                             masked ? 0 : 1);
    GCUT__CUDA_TRY(cudaGetLastError(), "assemble kernel");
    /* not waited for either: the next level's selection (or the mask) is behind it on the
     * stream, and waits for its own result */
    if (!lean)
        GCUT__CUDA_TRY(cudaStreamSynchronize(s), "assemble");
    rep->solve_ms += gcut__now_ms() - t1;
    if ((st = prof.lap("labels into the level", k)) != GCUT_OK)
        return st;
    rep->rounds++;
    snprintf(rep->solver, sizeof rep->solver, masked ? "cuda-grid (masked)" : "cuda-grid");
    if (stats_out != NULL)
        *stats_out = stats;
    return GCUT_OK;
}

gcut_status run_pipe(Pipe &P, const gcut__band_image *base, const gcut__seg_tables *tables,
                     int64_t band, uint8_t *mask, gcut_seg_report *r) {
    const int levels = P.levels, ch = P.channels, conn = P.conn;
    cudaStream_t s = P.stream;
    /* The image is on the device already when gcut__band_device_begin put it there (for the
     * sigma); this run consumes that (a later run uploads again unless begun anew). */
    const bool image_there = P.image_loaded;
    P.image_loaded = false;
    const bool live = gcut__env_int("GCUT_BAND_LIVE", 1, 0, 1) != 0;
    /* GCUT_BAND_FUSED=0: the fourth pass's selection kernels (before / after) */
    const bool fused = gcut__env_int("GCUT_BAND_FUSED", 1, 0, 1) != 0 && band <= kHalo;
    /* GCUT_BAND_LEAN=0: the sixth session's pipeline (a wait after every level's capacities and
     * labels, the coarsest level's capacities a warp per node) for before / after */
    const bool lean = gcut__env_int("GCUT_BAND_LEAN", 1, 0, 1) != 0;
    Profile prof;
    prof.on = gcut__env_int("GCUT_BAND_PROFILE", 0, 0, 1) != 0;
    prof.stream = s;
    GCUT__CUDA_TRY(cudaSetDevice(P.device), "cudaSetDevice");
    /* Uploads: the image (unless there), the seeds, the tables. */
    double t0 = gcut__now_ms();
    prof.mark = t0;
    Level &L0 = P.level[0];
    /* GCUT_STAGING=0: the copies from pageable memory of the fourth pass (before / after). */
    const bool staged = gcut__staging_on() != 0;
    gcut_status st = GCUT_OK;
    if (!image_there) {
        if (staged)
            st = gcut__stage_upload(L0.pixels, base->pixels, (size_t)L0.n * ch, GCUT__STAGE_COPY,
                                    P.device, s, "banded segmentation (device): image upload");
        else
            GCUT__CUDA_TRY(cudaMemcpyAsync(L0.pixels, base->pixels, (size_t)L0.n * ch,
                                           cudaMemcpyHostToDevice, s),
                           "image upload");
    }
    if (st != GCUT_OK || (st = prof.lap(image_there ? "image upload (there from the sigma pass)"
                                                    : "image upload")) != GCUT_OK)
        return st;
    if (staged) { /* as 2-bit codes, unpacked on the device */
        st = gcut__stage_upload(P.packed, base->seeds, (size_t)L0.n, GCUT__STAGE_SEEDS, P.device, s,
                                "banded segmentation (device): seeds upload");
        if (st == GCUT_OK)
            st = gcut__stage_unpack_seeds_device(L0.seeds, P.packed, (size_t)L0.n, s,
                                                 "banded segmentation (device): seeds upload");
        if (st != GCUT_OK)
            return st;
    } else {
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(L0.seeds, base->seeds, (size_t)L0.n, cudaMemcpyHostToDevice, s),
            "seeds upload");
    }
    if ((st = prof.lap("seeds upload")) != GCUT_OK)
        return st;
    const size_t nc = (size_t)tables->num_colors, np = (size_t)tables->max_sqdiff + 1;
    const size_t need = 2 * nc + (size_t)tables->num_classes * np;
    if (P.tab_count < need) {
        cudaFree(P.tab);
        P.tab = nullptr;
        P.tab_count = 0;
        st = dalloc(&P.tab, need, "tables");
        if (st != GCUT_OK)
            return st;
        P.tab_count = need;
    }
    /* the tables (through the ring when staged: a colour image's are 3.6 MB) */
    auto table_up = [&](int32_t *dst, const int32_t *src, size_t count) -> gcut_status {
        if (staged)
            return gcut__stage_upload(dst, reinterpret_cast<const uint8_t *>(src), count * 4,
                                      GCUT__STAGE_COPY, P.device, s,
                                      "banded segmentation (device): tables upload");
        GCUT__CUDA_TRY(cudaMemcpyAsync(dst, src, count * 4, cudaMemcpyHostToDevice, s),
                       "tables upload");
        return GCUT_OK;
    };
    /* One copy of the tables' block (gcut__seg_tables_block: the device layout below), or one
     * per table (GCUT_SEG_TABLES_LEGACY=1, as before the seventh pass). */
    size_t block_count = 0;
    const int32_t *block = gcut__seg_tables_block(tables, &block_count);
    const bool one_copy = !gcut__seg_tables_legacy() && block_count == need;
    if (one_copy && (st = table_up(P.tab, block, need)) != GCUT_OK)
        return st;
    if (!one_copy && ((st = table_up(P.tab, tables->unary_source, nc)) != GCUT_OK ||
                      (st = table_up(P.tab + nc, tables->unary_sink, nc)) != GCUT_OK))
        return st;
    gcut__seg_tables dtab = *tables;
    dtab.unary_source = P.tab;
    dtab.unary_sink = P.tab + nc;
    for (int c = 0; c < GCUT__SEG_CLASSES; c++) {
        if (c < tables->num_classes) {
            dtab.pairwise[c] = P.tab + 2 * nc + (size_t)c * np;
            if (!one_copy && (st = table_up(P.tab + 2 * nc + (size_t)c * np, tables->pairwise[c],
                                            np)) != GCUT_OK)
                return st;
        } else {
            dtab.pairwise[c] = nullptr;
        }
    }
    if ((st = prof.lap("tables upload")) != GCUT_OK)
        return st;
    gcut__band_image dbase = *base;
    dbase.pixels = L0.pixels;
    dbase.seeds = L0.seeds;
    /* Coarsening: pixels and seed bits, level by level. */
    for (int k = 1; k <= levels; k++) {
        const Level &F = P.level[k - 1];
        Level &C = P.level[k];
        if (fused)
            coarsen_rows_kernel<<<row_grid(C.dims[0], C.dims[1], C.dims[2], P.max_blocks), kThreads,
                                  0, s>>>(F.pixels, F.seeds, (int)F.dims[0], (int)F.dims[1],
                                          (int)F.dims[2], ch, C.pixels, C.seeds);
        else
            coarsen_kernel<<<blocks_for(C.n), kThreads, 0, s>>>(
                F.pixels, F.seeds, F.dims[0], F.dims[1], F.dims[2], ch, C.pixels, C.seeds);
    }
    GCUT__CUDA_TRY(cudaGetLastError(), "coarsening kernel");
    GCUT__CUDA_TRY(cudaStreamSynchronize(s), "uploads and coarsening");
    if ((st = prof.lap("coarsening")) != GCUT_OK)
        return st;
    const double upload_ms = gcut__now_ms() - t0;
    for (int k = 0; k <= levels; k++) {
        gcut_seg_level *rep = &r->level[k];
        rep->depth = P.level[k].dims[0], rep->height = P.level[k].dims[1];
        rep->width = P.level[k].dims[2];
    }
    r->level[levels].build_ms += upload_ms; /* the coarsest level's share: its inputs */
    /* The coarsest level in full. */
    st = solve_level(P, dbase, dtab, levels, false, live, fused, lean, prof, &r->level[levels],
                     &r->stats);
    if (st != GCUT_OK)
        return st;
    r->level[levels].nodes = P.level[levels].n;
    /* Uncoarsening: project, band, solve the band as a masked grid. */
    for (int k = levels - 1; k >= 0; k--) {
        Level &L = P.level[k];
        const Level &C = P.level[k + 1];
        gcut_seg_level *rep = &r->level[k];
        t0 = gcut__now_ms();
        long long count = 0;
        /* the list of this level's band is made by this selection or by list_kernel, never
         * taken from an earlier run (call 1 of the seventh pass: the unfused route left the
         * flag of a run before, and a finer level's list was read at a coarser one) */
        L.listed = false;
        if (fused) {
            if ((st = select_band_fused(P, L, C, (int)band, lean, &count)) != GCUT_OK)
                return st;
        } else {
            project_kernel<<<blocks_for(L.n), kThreads, 0, s>>>(C.state, L.dims[0], L.dims[1],
                                                                L.dims[2], L.state);
            GCUT__CUDA_TRY(cudaGetLastError(), "projection kernel");
            if ((st = prof.lap("projection", k)) != GCUT_OK)
                return st;
            if ((st = select_band(P, L, (long long)band, &count)) != GCUT_OK)
                return st;
        }
        rep->build_ms += gcut__now_ms() - t0;
        rep->nodes = count;
        rep->edges = 0;
        rep->flow = 0;
        if ((st = prof.lap("band selection", k)) != GCUT_OK)
            return st;
        if (count == 0)
            continue; /* an empty band: the projection stands */
        if ((st = solve_level(P, dbase, dtab, k, true, live, fused, lean, prof, rep, NULL)) !=
            GCUT_OK)
            return st;
    }
    /* The mask and the foreground count on the device; one copy back (level 0's solve time,
     * as a full solve's labels are its). */
    t0 = gcut__now_ms();
    GCUT__CUDA_TRY(cudaMemsetAsync(P.sums, 0, 4 * sizeof(unsigned long long), s), "memset");
    unsigned long long sums[2] = {0, 0};
    if (staged) { /* as bits, unpacked by the ring's threads */
        mask_bits_kernel<<<(unsigned)((L0.n + 7) / 8 / kThreads + 1 < P.max_blocks
                                          ? (L0.n + 7) / 8 / kThreads + 1
                                          : P.max_blocks),
                           kThreads, 0, s>>>(L0.state, L0.n, P.packed, P.sums + 1);
        GCUT__CUDA_TRY(cudaGetLastError(), "mask kernel");
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(&sums[1], P.sums + 1, sizeof sums[1], cudaMemcpyDeviceToHost, s),
            "foreground count");
        if ((st = gcut__stage_download(mask, P.packed, (size_t)L0.n, GCUT__STAGE_BITS, P.device, s,
                                       "banded segmentation (device): mask download")) != GCUT_OK)
            return st;
    } else {
        mask_kernel<<<blocks_for(L0.n), kThreads, 0, s>>>(L0.state, L0.n, P.labels, P.sums + 1);
        GCUT__CUDA_TRY(cudaGetLastError(), "mask kernel");
        GCUT__CUDA_TRY(cudaMemcpyAsync(mask, P.labels, (size_t)L0.n, cudaMemcpyDeviceToHost, s),
                       "mask download");
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(&sums[1], P.sums + 1, sizeof sums[1], cudaMemcpyDeviceToHost, s),
            "foreground count");
    }
    GCUT__CUDA_TRY(cudaStreamSynchronize(s), "mask");
    r->level[0].solve_ms += gcut__now_ms() - t0;
    if ((st = prof.lap("mask download")) != GCUT_OK)
        return st;
    /* The energy of the result (untimed in the report's build and solve, as on the host). */
    t0 = gcut__now_ms();
    energy_kernel<<<blocks_for(L0.n), kThreads, 0, s>>>(dbase, dtab, conn, L0.state, P.sums);
    GCUT__CUDA_TRY(cudaGetLastError(), "energy kernel");
    GCUT__CUDA_TRY(cudaMemcpyAsync(&sums[0], P.sums, sizeof sums[0], cudaMemcpyDeviceToHost, s),
                   "energy");
    GCUT__CUDA_TRY(cudaStreamSynchronize(s), "energy");
    r->energy = (int64_t)sums[0];
    r->foreground_pixels = (int64_t)sums[1];
    r->energy_ms = gcut__now_ms() - t0;
    r->levels = levels;
    r->build_ms = 0;
    r->solve_ms = 0;
    for (int k = 0; k <= levels; k++) {
        r->build_ms += r->level[k].build_ms;
        r->solve_ms += r->level[k].solve_ms;
    }
    r->stats.flow = r->level[0].flow;
    snprintf(r->stats.solver, sizeof r->stats.solver, "cuda-grid");
    return GCUT_OK;
}

/* Device bytes of the pipeline: per level its pixels, seeds, state, capacities ((2 + conn) int32)
 * and cuda-grid's masked-solve context (residuals, sink residual, excess, height, arc mask:
 * 4 conn + 20 bytes a node, and a few bytes a node of tile lists and the relabel queue); the
 * marks, labels and band node list at the finest size. */
uint64_t pipe_bytes(const int64_t dims[3], int channels, int conn, int levels) {
    uint64_t bytes = 0;
    int64_t d[3] = {dims[0], dims[1], dims[2]};
    for (int k = 0; k <= levels; k++) {
        const uint64_t n = (uint64_t)(d[0] * d[1] * d[2]);
        bytes +=
            n * ((uint64_t)channels + 2 + 4 * (2 + (uint64_t)conn) + 4 * (uint64_t)conn + 20 + 2);
        if (k == 0) /* marks, labels, packed seeds; the band node list at its largest */
            bytes += 3 * n + n / 4 + 1 + 4 * n;
        for (int a = 0; a < 3; a++)
            d[a] = half_up(d[a]);
    }
    return bytes;
}

} // namespace

extern "C" bool gcut__band_device_fits(const int64_t dims[3], int channels, int connectivity,
                                       int levels, const gcut_options *options) {
    if (!gcut__cuda_available())
        return false;
    const int64_t n = dims[0] * dims[1] * dims[2];
    if (n >= (int64_t)1 << 31)
        return false;    /* cuda-grid's int32 node indices */
    uint64_t cached = 0; /* a cached pipeline of another shape is freed before a new one */
    {
        std::lock_guard<std::mutex> lock(pipe_mutex);
        const Pipe *P = pipe_cached;
        const int device = options != NULL ? options->device : 0;
        if (P != nullptr && memcmp(P->dims, dims, sizeof P->dims) == 0 && P->channels == channels &&
            P->conn == connectivity && P->levels == levels && P->device == device)
            return true; /* already there */
        if (P != nullptr && P->device == device)
            cached = pipe_bytes(P->dims, P->channels, P->conn, P->levels);
    }
    size_t free_bytes = 0, total = 0;
    if (cudaSetDevice(options != NULL ? options->device : 0) != cudaSuccess ||
        cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return pipe_bytes(dims, channels, connectivity, levels) <
           (uint64_t)(0.85 * (double)(free_bytes + cached));
}

extern "C" void gcut__band_device_release(void) {
    Pipe *old;
    {
        std::lock_guard<std::mutex> lock(pipe_mutex);
        old = pipe_cached;
        pipe_cached = nullptr;
    }
    pipe_destroy(old);
    gcut__staging_release(); /* the pinned ring of staged copies (cuda-grid's too) */
}

extern "C" gcut_status gcut__band_device_begin(const uint8_t *pixels, int channels,
                                               const int64_t dims[3], int connectivity, int levels,
                                               const gcut_options *options, void **handle,
                                               double *sigma) {
    *handle = nullptr;
    if (!gcut__cuda_available())
        return gcut__fail(GCUT_ERR_NO_DEVICE, "banded segmentation: no CUDA device is usable here");
    const int64_t n = dims[0] * dims[1] * dims[2];
    if (levels < 1 || levels > GCUT_SEG_MAX_LEVELS || n >= (int64_t)1 << 31)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "banded segmentation (device): levels %d not in 1..%d or %lld pixels "
                          "(fewer than 2^31)",
                          levels, GCUT_SEG_MAX_LEVELS, (long long)n);
    Pipe *P = nullptr;
    gcut_status st = pipe_take(dims, channels, connectivity, levels, options, &P);
    if (st != GCUT_OK)
        return st;
    cudaStream_t s = P->stream;
    const Level &L0 = P->level[0];
    unsigned long long sum = 0;
    cudaError_t err = cudaSetDevice(P->device);
    if (err == cudaSuccess && gcut__staging_on()) { /* through the pinned ring */
        st = gcut__stage_upload(L0.pixels, pixels, (size_t)n * channels, GCUT__STAGE_COPY,
                                P->device, s, "banded segmentation (device): image upload");
        if (st != GCUT_OK) {
            pipe_destroy(P);
            return st;
        }
    } else if (err == cudaSuccess) {
        err = cudaMemcpyAsync(L0.pixels, pixels, (size_t)n * channels, cudaMemcpyHostToDevice, s);
    }
    if (err == cudaSuccess)
        err = cudaMemsetAsync(P->sums + 3, 0, sizeof(unsigned long long), s);
    if (err == cudaSuccess) {
        if (gcut__env_int("GCUT_BAND_FUSED", 1, 0, 1) != 0)
            sigma_rows_kernel<<<row_grid(dims[0], dims[1], dims[2], P->max_blocks), kThreads, 0,
                                s>>>(L0.pixels, channels, (int)dims[0], (int)dims[1], (int)dims[2],
                                     P->sums + 3);
        else
            sigma_kernel<<<blocks_for(n), kThreads, 0, s>>>(L0.pixels, channels, dims[0], dims[1],
                                                            dims[2], P->sums + 3);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(&sum, P->sums + 3, sizeof sum, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    if (err != cudaSuccess) {
        pipe_destroy(P);
        return cuda_fail(err, "image upload and sigma");
    }
    const int64_t D = dims[0], H = dims[1], W = dims[2];
    const int64_t pairs = D * H * (W - 1) + D * (H - 1) * W + (D - 1) * H * W;
    const double v = pairs > 0 ? sqrt((double)sum / (double)pairs) : 0.0;
    *sigma = v < 1.0 ? 1.0 : v;
    P->image_loaded = true;
    *handle = P;
    return GCUT_OK;
}

extern "C" void gcut__band_device_end(void *handle) {
    Pipe *P = static_cast<Pipe *>(handle);
    if (P != nullptr) {
        P->image_loaded = false;
        pipe_give(P);
    }
}

extern "C" gcut_status gcut__band_device_segment(void *handle, const gcut__band_image *base,
                                                 const gcut__seg_tables *tables, int connectivity,
                                                 int levels, int64_t band,
                                                 const gcut_options *options, uint8_t *mask,
                                                 gcut_seg_report *r) {
    Pipe *P = static_cast<Pipe *>(handle);
    if (P != nullptr &&
        (memcmp(P->dims, base->dims, sizeof P->dims) != 0 || P->channels != tables->channels ||
         P->conn != connectivity || P->levels != levels)) {
        gcut__band_device_end(P);
        return gcut__fail(GCUT_ERR_INTERNAL,
                          "banded segmentation (device): the pipeline begun is of another shape");
    }
    if (P == nullptr) {
        if (!gcut__cuda_available())
            return gcut__fail(GCUT_ERR_NO_DEVICE,
                              "banded segmentation: no CUDA device is usable here");
        if (levels < 1 || levels > GCUT_SEG_MAX_LEVELS)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "banded segmentation (device): levels %d not in 1..%d", levels,
                              GCUT_SEG_MAX_LEVELS);
        if (base->dims[0] * base->dims[1] * base->dims[2] >= (int64_t)1 << 31)
            return gcut__fail(GCUT_ERR_UNSUPPORTED,
                              "banded segmentation (device): %lld pixels; the device pipeline "
                              "takes fewer than 2^31",
                              (long long)(base->dims[0] * base->dims[1] * base->dims[2]));
        gcut_status st = pipe_take(base->dims, tables->channels, connectivity, levels, options, &P);
        if (st != GCUT_OK)
            return st;
    }
    gcut_status st = run_pipe(*P, base, tables, band, mask, r);
    if (st == GCUT_OK)
        pipe_give(P);
    else
        pipe_destroy(P);
    return st;
}
