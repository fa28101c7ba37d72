/* video_cuda.cu - the GPU path of gcut_video (Garrett & Saito 2009, 3-4: each frame's graph
 * built on the GPU as it arrives and cut there, the last silhouette kept there as the next
 * frame's mask; one solver kept for the whole video): a cuda-grid context made once; per frame
 * the pixels go up, the model's counts come back, and the distance to the last boundary, the
 * seeds, the capacities (from the host's per-cell integer costs) and the new mask are computed
 * on the device; the labels come back. Warm re-solves (Kohli & Torr 2005) only for frames
 * whose capacities mostly repeat the last frame's. docs/VIDEO.md, "GPU". */
#include "internal.h"
#include "video_internal.h"
#include "video_kernels.h"
#include "../cuda/cuda_check.h"

#include <cuda_runtime.h>

#include <string.h>

namespace {

/* A frame whose tables equal the last frame's and whose pixels and seeds differ in at most
 * this fraction of the pixels is re-solved warm (docs/VIDEO.md: below about 10% changed nodes
 * the context's warm repair beats a cold solve; with camera noise nearly every pixel changes
 * and frames are solved cold). */
constexpr double kWarmShare = 0.10;

constexpr int kMaxDirs = 8;

struct Dirs {
    int dx[kMaxDirs], dy[kMaxDirs], cls[kMaxDirs];
};

/* The previous frame's statistics for the next model, one thread a pixel: its histogram cell
 * counted under the last mask (threads of a warp with the same cell and label add once), the
 * pixels whose label changed between the last two masks, the last mask's boundary pixels and
 * their box, and the current frame's squared colour differences of axis neighbours. */
__global__ void stats_kernel(long long n, int width, int height, const unsigned char *prev_px,
                             const unsigned char *cur_px, const unsigned char *mask,
                             const unsigned char *prev_mask, const int *cell_lut, int cells,
                             unsigned *counts, unsigned long long *sums, int *box) {
    unsigned long long sigma = 0, changed = 0, boundary = 0;
    int bx0 = width, bx1 = -1, by0 = height, by1 = -1;
    const long long stride = (long long)gridDim.x * blockDim.x;
    /* Every thread of a warp runs the same number of rounds (the shuffles need them all). */
    const long long rounds = (n + stride - 1) / stride;
    for (long long r = 0; r < rounds; r++) {
        const long long i = r * stride + blockIdx.x * (long long)blockDim.x + threadIdx.x;
        const bool in = i < n;
        int key = -1;
        if (in) {
            const int x = (int)(i % width), y = (int)(i / width);
            const unsigned char m = mask[i];
            const int c = cell_lut[gcut__seg_color_index(prev_px + i * 3, 3)];
            key = m ? c : cells + c;
            changed += m != prev_mask[i];
            if (gcut__vk_edge(mask, width, height, x, y)) {
                boundary++;
                bx0 = x < bx0 ? x : bx0;
                bx1 = x > bx1 ? x : bx1;
                by0 = y < by0 ? y : by0;
                by1 = y > by1 ? y : by1;
            }
            const unsigned char *p = cur_px + i * 3;
            if (x + 1 < width)
                sigma += (unsigned long long)gcut__seg_sqdiff(p, p + 3, 3);
            if (y + 1 < height)
                sigma += (unsigned long long)gcut__seg_sqdiff(p, p + (long long)width * 3, 3);
        }
        const unsigned peers = __match_any_sync(0xffffffffu, key);
        if (in && (threadIdx.x & 31) == (unsigned)(__ffs(peers) - 1))
            atomicAdd(counts + key, (unsigned)__popc(peers));
    }
    for (int o = 16; o > 0; o >>= 1) {
        sigma += __shfl_down_sync(0xffffffffu, sigma, o);
        changed += __shfl_down_sync(0xffffffffu, changed, o);
        boundary += __shfl_down_sync(0xffffffffu, boundary, o);
        bx0 = min(bx0, __shfl_down_sync(0xffffffffu, bx0, o));
        bx1 = max(bx1, __shfl_down_sync(0xffffffffu, bx1, o));
        by0 = min(by0, __shfl_down_sync(0xffffffffu, by0, o));
        by1 = max(by1, __shfl_down_sync(0xffffffffu, by1, o));
    }
    if ((threadIdx.x & 31) == 0) {
        if (sigma)
            atomicAdd(sums + 0, sigma);
        if (changed)
            atomicAdd(sums + 1, changed);
        if (boundary) {
            atomicAdd(sums + 2, boundary);
            atomicMin(box + 0, bx0);
            atomicMax(box + 1, bx1);
            atomicMin(box + 2, by0);
            atomicMax(box + 3, by1);
        }
    }
}

/* Row distances to the last mask's boundary in the window, one thread a row. */
__global__ void row_kernel(int width, int height, const unsigned char *mask, long long x0,
                           long long x1, long long y0, long long y1, int *hd) {
    const long long y = y0 + blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (y < y1)
        gcut__vk_row_distance(mask, width, height, y, x0, x1, hd + y * (long long)width);
}

/* gcut__seg_fill_grid()'s capacities (src/seg/seg_tables.c) for a 2D RGB frame, one thread a
 * pixel, with the seed computed first (video_kernels.h: the distance to the last boundary from
 * the row distances, then the seed rule): terminal capacities from the unary tables of the
 * pixel's quantised colour, read as the per-cell capacities of its histogram cell (the host's
 * tables are those, spread over the colours), K on a seed's side and 0 on the other; neighbour
 * arcs from the pairwise table of the pair's squared colour difference (0 where the neighbour
 * is outside the frame). Bit for bit the host's. */
template <int CONN>
__global__ void build_kernel(long long n, int width, int height, const unsigned char *pixels,
                             const unsigned char *mask, const int *hd, gcut__video_gpu_seeds rule,
                             const int *cell_lut, const int *cell_cap, int cells,
                             const int *pairwise, int pair_stride, int hard, Dirs dirs,
                             unsigned char *seeds, int *caps) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned char *px = pixels + i * 3;
        const int x = (int)(i % width), y = (int)(i / width);
        const int c = cell_lut[gcut__seg_color_index(px, 3)];
        int source = cell_cap[c], sink = cell_cap[cells + c];
        int d = GCUT__VK_INF;
        if (x >= rule.box[0] && x < rule.box[1] && y >= rule.box[2] && y < rule.box[3])
            d = gcut__vk_column_scan(hd, width, rule.box[2], rule.box[3], x, y, rule.max_rows);
        const unsigned char s =
            gcut__vk_seed(d, rule.limit, rule.reach, rule.check, mask[i], source, sink);
        seeds[i] = s;
        if (s == GCUT_SEED_FOREGROUND)
            source = hard, sink = 0;
        else if (s == GCUT_SEED_BACKGROUND)
            source = 0, sink = hard;
        caps[i] = source;
        caps[n + i] = sink;
#pragma unroll
        for (int k = 0; k < CONN; k++) {
            const int nx = x + dirs.dx[k], ny = y + dirs.dy[k];
            int cap = 0;
            if (nx >= 0 && nx < width && ny >= 0 && ny < height) {
                const unsigned char *pq = pixels + ((long long)ny * width + nx) * 3;
                cap = pairwise[dirs.cls[k] * pair_stride + gcut__seg_sqdiff(px, pq, 3)];
            }
            caps[(2 + k) * n + i] = cap;
        }
    }
}

/* The new mask from the labels: foreground where the pixel is on the source side. */
__global__ void mask_kernel(long long n, const unsigned char *labels, unsigned char *mask) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        mask[i] = labels[i] == GCUT_SOURCE;
}

/* Pixels whose colour or seed differ between two frames. */
__global__ void changed_kernel(long long n, const unsigned char *a, const unsigned char *b,
                               const unsigned char *sa, const unsigned char *sb,
                               unsigned long long *count) {
    unsigned long long c = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        c += a[3 * i] != b[3 * i] || a[3 * i + 1] != b[3 * i + 1] || a[3 * i + 2] != b[3 * i + 2] ||
             sa[i] != sb[i];
    if (c != 0)
        atomicAdd(count, c);
}

gcut_status cuda_fail(cudaError_t err, const char *what) {
    return gcut__cuda_fail("video (cuda-grid)", err, what);
}

/* Pinned blocks carry their size in front, for the memory cap's accounting. */
constexpr size_t kHeader = 64;

} // namespace

struct gcut__video_gpu {
    int64_t width, height, n;
    int conn;
    gcut_options options;
    bool warm_allowed;
    gcut_grid_context *cold, *warm; /* warm made on first use */
    cudaStream_t stream;
    unsigned char *d_pixels[2], *d_seeds[2]; /* this frame's and the last, alternating */
    int cur;                                 /* index of the current frame's pixels and seeds */
    unsigned char *d_mask[2];                /* the last mask and the one before */
    int mask_cur;                            /* index of the last mask */
    bool prev_seeds;                         /* d_seeds[1 - cur] hold the last frame's seeds */
    int *d_cell_lut;                         /* cell of each quantised colour (2^18) */
    int *d_cell_cap;                     /* per cell: source [0, cells), sink [cells, 2 cells) */
    int *d_hd;                           /* row distances, one a pixel */
    unsigned *d_counts, *h_counts;       /* 2 cells: the model's counts */
    unsigned long long *d_sums, *h_sums; /* sigma sum, changed, boundary */
    int *d_box, *h_box;
    int64_t cells;
    int *d_pair; /* classes rows of pair_stride */
    int *d_caps; /* source, sink, then one array a direction */
    unsigned char *d_labels;
    unsigned long long *d_count, *h_count;
    int *h_cell_cap;    /* pinned staging of the cell capacities */
    int *h_pair;        /* pinned staging of the pairwise rows */
    int pair_extent[3]; /* uploaded non-zero prefix of each pairwise row */
    int last_hard;
    bool have_tables;
    int pair_stride, classes;
    Dirs dirs;
};

extern "C" void *gcut__video_gpu_host_alloc(gcut__video_gpu *gpu, size_t bytes, const char *what) {
    (void)gpu;
    if (gcut__reserve(bytes + kHeader, what) != 0)
        return NULL;
    void *p = NULL;
    if (cudaMallocHost(&p, bytes + kHeader) != cudaSuccess) {
        cudaGetLastError();
        gcut__unreserve(bytes + kHeader);
        gcut__fail(GCUT_ERR_NOMEM, "video (cuda-grid): %s: cannot pin %zu bytes", what, bytes);
        return NULL;
    }
    *(size_t *)p = bytes + kHeader;
    return (char *)p + kHeader;
}

extern "C" void gcut__video_gpu_host_free(void *ptr) {
    if (ptr == NULL)
        return;
    char *base = (char *)ptr - kHeader;
    gcut__unreserve(*(size_t *)base);
    cudaFreeHost(base);
}

extern "C" void gcut__video_gpu_free(gcut__video_gpu *g) {
    if (g == NULL)
        return;
    gcut_grid_context_free(g->cold);
    gcut_grid_context_free(g->warm);
    for (int k = 0; k < 2; k++) {
        cudaFree(g->d_pixels[k]);
        cudaFree(g->d_seeds[k]);
        cudaFree(g->d_mask[k]);
    }
    cudaFree(g->d_cell_lut);
    cudaFree(g->d_cell_cap);
    cudaFree(g->d_hd);
    cudaFree(g->d_counts);
    cudaFree(g->d_sums);
    cudaFree(g->d_box);
    cudaFree(g->d_pair);
    cudaFree(g->d_caps);
    cudaFree(g->d_labels);
    cudaFree(g->d_count);
    if (g->h_count)
        cudaFreeHost(g->h_count);
    if (g->h_counts)
        cudaFreeHost(g->h_counts);
    if (g->h_sums)
        cudaFreeHost(g->h_sums);
    if (g->h_box)
        cudaFreeHost(g->h_box);
    if (g->h_cell_cap)
        cudaFreeHost(g->h_cell_cap);
    if (g->h_pair)
        cudaFreeHost(g->h_pair);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    gcut__free(g);
}

static gcut_status make_context(gcut__video_gpu *g, int warm, gcut_grid_context **out) {
    gcut_options o = g->options;
    o.solver = "cuda-grid";
    o.warm = warm;
    const int64_t shape[2] = {g->height, g->width};
    return gcut_grid_context_create(2, shape, g->conn, &o, out);
}

static gcut_status setup(gcut__video_gpu *g) {
    const size_t n = (size_t)g->n;
    gcut_status st = make_context(g, 0, &g->cold);
    if (st != GCUT_OK)
        return st;
    gcut_grid *grid = gcut_grid_context_grid(g->cold);
    for (int d = 0; d < g->conn; d++) {
        int off[2];
        gcut_grid_offset(grid, d, off);
        g->dirs.dy[d] = off[0];
        g->dirs.dx[d] = off[1];
        g->dirs.cls[d] = (off[0] != 0) + (off[1] != 0) - 1;
    }
    g->classes = g->conn == 8 ? 2 : 1;
    g->pair_stride = 255 * 255 * 3 + 1;
    GCUT__CUDA_TRY(cudaSetDevice(g->options.device), "cudaSetDevice");
    GCUT__CUDA_TRY(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking), "stream");
    for (int k = 0; k < 2; k++) {
        GCUT__CUDA_TRY(cudaMalloc(&g->d_pixels[k], n * 3), "frame pixels");
        GCUT__CUDA_TRY(cudaMalloc(&g->d_seeds[k], n), "frame seeds");
        GCUT__CUDA_TRY(cudaMemset(g->d_seeds[k], 0, n), "frame seeds");
        GCUT__CUDA_TRY(cudaMalloc(&g->d_mask[k], n), "masks");
        GCUT__CUDA_TRY(cudaMemset(g->d_mask[k], 0, n), "masks");
    }
    GCUT__CUDA_TRY(cudaMalloc(&g->d_hd, n * sizeof(int)), "row distances");
    GCUT__CUDA_TRY(cudaMalloc(&g->d_sums, 3 * sizeof(unsigned long long)), "frame sums");
    GCUT__CUDA_TRY(cudaMallocHost(&g->h_sums, 3 * sizeof(unsigned long long)), "frame sums");
    GCUT__CUDA_TRY(cudaMalloc(&g->d_box, 4 * sizeof(int)), "boundary box");
    GCUT__CUDA_TRY(cudaMallocHost(&g->h_box, 4 * sizeof(int)), "boundary box");
    GCUT__CUDA_TRY(cudaMalloc(&g->d_pair, (size_t)g->classes * g->pair_stride * sizeof(int)),
                   "pairwise tables");
    GCUT__CUDA_TRY(cudaMemset(g->d_pair, 0, (size_t)g->classes * g->pair_stride * sizeof(int)),
                   "pairwise tables");
    GCUT__CUDA_TRY(cudaMallocHost(&g->h_pair, (size_t)g->classes * g->pair_stride * sizeof(int)),
                   "pairwise staging");
    GCUT__CUDA_TRY(cudaMalloc(&g->d_caps, (size_t)(2 + g->conn) * n * sizeof(int)), "capacities");
    GCUT__CUDA_TRY(cudaMalloc(&g->d_labels, n), "labels");
    GCUT__CUDA_TRY(cudaMalloc(&g->d_count, sizeof(unsigned long long)), "counter");
    GCUT__CUDA_TRY(cudaMallocHost(&g->h_count, sizeof(unsigned long long)), "counter");
    return GCUT_OK;
}

extern "C" gcut_status gcut__video_gpu_create(int64_t width, int64_t height, int connectivity,
                                              const gcut_options *options, gcut__video_gpu **out) {
    *out = NULL;
    if (connectivity != 4 && connectivity != 8)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video (cuda-grid): connectivity %d", connectivity);
    if (!gcut__cuda_available())
        return gcut__fail(GCUT_ERR_NO_DEVICE, "video: cuda-grid asked for, but no CUDA device "
                                              "is available");
    gcut__video_gpu *g = (gcut__video_gpu *)gcut__calloc(1, sizeof *g, "video GPU state");
    if (g == NULL)
        return GCUT_ERR_NOMEM;
    g->width = width;
    g->height = height;
    g->n = width * height;
    g->conn = connectivity;
    if (options != NULL)
        g->options = *options;
    else
        gcut_options_init(&g->options);
    g->warm_allowed = g->options.warm != 0;
    gcut_status st = setup(g);
    if (st != GCUT_OK) {
        gcut__video_gpu_free(g);
        return st;
    }
    *out = g;
    return GCUT_OK;
}

extern "C" gcut_status gcut__video_gpu_model_init(gcut__video_gpu *g, const int32_t *cell_lut,
                                                  int64_t cells) {
    const size_t colours = (size_t)1 << 18;
    g->cells = cells;
    GCUT__CUDA_TRY(cudaSetDevice(g->options.device), "cudaSetDevice");
    GCUT__CUDA_TRY(cudaMalloc(&g->d_cell_lut, colours * sizeof(int)), "colour cells");
    GCUT__CUDA_TRY(
        cudaMemcpy(g->d_cell_lut, cell_lut, colours * sizeof(int), cudaMemcpyHostToDevice),
        "colour cells");
    GCUT__CUDA_TRY(cudaMalloc(&g->d_cell_cap, 2 * (size_t)cells * sizeof(int)), "cell capacities");
    GCUT__CUDA_TRY(cudaMallocHost(&g->h_cell_cap, 2 * (size_t)cells * sizeof(int)),
                   "cell capacities");
    GCUT__CUDA_TRY(cudaMalloc(&g->d_counts, 2 * (size_t)cells * sizeof(unsigned)), "cell counts");
    GCUT__CUDA_TRY(cudaMallocHost(&g->h_counts, 2 * (size_t)cells * sizeof(unsigned)),
                   "cell counts");
    return GCUT_OK;
}

static int blocks_for(int64_t n, int threads) {
    const int64_t b = (n + threads - 1) / threads;
    return (int)(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

extern "C" gcut_status gcut__video_gpu_put_frame(gcut__video_gpu *g, const uint8_t *pixels) {
    GCUT__CUDA_TRY(cudaSetDevice(g->options.device), "cudaSetDevice");
    g->cur = 1 - g->cur;
    GCUT__CUDA_TRY(cudaMemcpyAsync(g->d_pixels[g->cur], pixels, (size_t)g->n * 3,
                                   cudaMemcpyHostToDevice, g->stream),
                   "frame upload");
    return GCUT_OK;
}

extern "C" gcut_status gcut__video_gpu_put_masks(gcut__video_gpu *g, const uint8_t *mask,
                                                 const uint8_t *prev_mask) {
    GCUT__CUDA_TRY(cudaSetDevice(g->options.device), "cudaSetDevice");
    GCUT__CUDA_TRY(cudaMemcpyAsync(g->d_mask[g->mask_cur], mask, (size_t)g->n,
                                   cudaMemcpyHostToDevice, g->stream),
                   "mask upload");
    GCUT__CUDA_TRY(cudaMemcpyAsync(g->d_mask[1 - g->mask_cur], prev_mask, (size_t)g->n,
                                   cudaMemcpyHostToDevice, g->stream),
                   "mask upload");
    /* (Host buffers need not outlive the call: wait for the copies.) */
    GCUT__CUDA_TRY(cudaStreamSynchronize(g->stream), "mask upload");
    g->prev_seeds = false;
    return GCUT_OK;
}

extern "C" gcut_status gcut__video_gpu_frame_stats(gcut__video_gpu *g, gcut__video_gpu_stats *out) {
    GCUT__CUDA_TRY(cudaSetDevice(g->options.device), "cudaSetDevice");
    const size_t cbytes = 2 * (size_t)g->cells * sizeof(unsigned);
    GCUT__CUDA_TRY(cudaMemsetAsync(g->d_counts, 0, cbytes, g->stream), "cell counts");
    GCUT__CUDA_TRY(cudaMemsetAsync(g->d_sums, 0, 3 * sizeof(unsigned long long), g->stream),
                   "frame sums");
    const int box0[4] = {(int)g->width, -1, (int)g->height, -1};
    memcpy(g->h_box, box0, sizeof box0);
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(g->d_box, g->h_box, 4 * sizeof(int), cudaMemcpyHostToDevice, g->stream),
        "boundary box");
    const int threads = 256;
    stats_kernel<<<blocks_for(g->n, threads) < 2048 ? blocks_for(g->n, threads) : 2048, threads, 0,
                   g->stream>>>((long long)g->n, (int)g->width, (int)g->height,
                                g->d_pixels[1 - g->cur], g->d_pixels[g->cur],
                                g->d_mask[g->mask_cur], g->d_mask[1 - g->mask_cur], g->d_cell_lut,
                                (int)g->cells, g->d_counts, g->d_sums, g->d_box);
    GCUT__CUDA_TRY(cudaGetLastError(), "frame statistics");
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(g->h_counts, g->d_counts, cbytes, cudaMemcpyDeviceToHost, g->stream),
        "cell counts");
    GCUT__CUDA_TRY(cudaMemcpyAsync(g->h_sums, g->d_sums, 3 * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost, g->stream),
                   "frame sums");
    GCUT__CUDA_TRY(
        cudaMemcpyAsync(g->h_box, g->d_box, 4 * sizeof(int), cudaMemcpyDeviceToHost, g->stream),
        "boundary box");
    GCUT__CUDA_TRY(cudaStreamSynchronize(g->stream), "frame statistics");
    out->counts = g->h_counts;
    out->sigma_sum = (int64_t)g->h_sums[0];
    out->changed = (int64_t)g->h_sums[1];
    out->boundary = (int64_t)g->h_sums[2];
    for (int k = 0; k < 4; k++)
        out->box[k] = g->h_box[k];
    return GCUT_OK;
}

/* Stage the cell capacities and pairwise rows and upload what changed; @return whether they
 * equal the last frame's. */
static gcut_status upload_tables(gcut__video_gpu *g, const int32_t *cell_cap,
                                 const gcut__seg_tables *t, bool *same) {
    const size_t cc = 2 * (size_t)g->cells;
    bool equal = g->have_tables && t->hard == g->last_hard &&
                 memcmp(g->h_cell_cap, cell_cap, cc * sizeof(int)) == 0;
    int extent[3] = {0, 0, 0};
    for (int k = 0; k < g->classes; k++) {
        const int32_t *row = t->pairwise[k];
        int e = 0;
        while (e <= t->max_sqdiff && row[e] != 0)
            e++;
        extent[k] = e;
        if (equal && (e != g->pair_extent[k] || memcmp(g->h_pair + (size_t)k * g->pair_stride, row,
                                                       (size_t)e * sizeof(int)) != 0))
            equal = false;
    }
    *same = equal;
    if (equal)
        return GCUT_OK;
    memcpy(g->h_cell_cap, cell_cap, cc * sizeof(int));
    GCUT__CUDA_TRY(cudaMemcpyAsync(g->d_cell_cap, g->h_cell_cap, cc * sizeof(int),
                                   cudaMemcpyHostToDevice, g->stream),
                   "cell capacities upload");
    for (int k = 0; k < g->classes; k++) {
        /* The row's non-zero prefix, and zeros over what the last row had beyond it. */
        const int up = extent[k] > g->pair_extent[k] ? extent[k] : g->pair_extent[k];
        int *row = g->h_pair + (size_t)k * g->pair_stride;
        if (memcmp(row, t->pairwise[k], (size_t)extent[k] * sizeof(int)) != 0 || up > extent[k]) {
            memcpy(row, t->pairwise[k], (size_t)extent[k] * sizeof(int));
            memset(row + extent[k], 0, (size_t)(up - extent[k]) * sizeof(int));
            if (up > 0)
                GCUT__CUDA_TRY(cudaMemcpyAsync(g->d_pair + (size_t)k * g->pair_stride, row,
                                               (size_t)up * sizeof(int), cudaMemcpyHostToDevice,
                                               g->stream),
                               "pairwise tables upload");
        }
        g->pair_extent[k] = extent[k];
    }
    g->last_hard = t->hard;
    g->have_tables = true;
    return GCUT_OK;
}

extern "C" gcut_status gcut__video_gpu_solve(gcut__video_gpu *g, const int32_t *cell_cap,
                                             const gcut__seg_tables *t,
                                             const gcut__video_gpu_seeds *rule, uint8_t *labels,
                                             uint8_t *seeds, int64_t *flow, gcut_stats *stats,
                                             gcut__video_gpu_report *report) {
    memset(report, 0, sizeof *report);
    report->changed_pixels = -1;
    if (t->channels != 3 || t->num_classes > g->classes || g->d_cell_cap == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video (cuda-grid): tables of another kind");
    const size_t n = (size_t)g->n;
    const double t0 = gcut__now_ms();
    GCUT__CUDA_TRY(cudaSetDevice(g->options.device), "cudaSetDevice");
    const int cur = g->cur, prev = 1 - cur;
    bool same = false;
    gcut_status st = upload_tables(g, cell_cap, t, &same);
    if (st != GCUT_OK)
        return st;
    const double t1 = gcut__now_ms();
    const int threads = 256;
    const int blocks = blocks_for(g->n, threads);
    const int64_t rows = rule->box[3] - rule->box[2];
    if (rows > 0 && rule->box[1] > rule->box[0]) {
        row_kernel<<<(int)((rows + 127) / 128), 128, 0, g->stream>>>(
            (int)g->width, (int)g->height, g->d_mask[g->mask_cur], rule->box[0], rule->box[1],
            rule->box[2], rule->box[3], g->d_hd);
        GCUT__CUDA_TRY(cudaGetLastError(), "row distances");
    }
    const unsigned char *mask = g->d_mask[g->mask_cur];
    if (g->conn == 8)
        build_kernel<8><<<blocks, threads, 0, g->stream>>>(
            (long long)n, (int)g->width, (int)g->height, g->d_pixels[cur], mask, g->d_hd, *rule,
            g->d_cell_lut, g->d_cell_cap, (int)g->cells, g->d_pair, g->pair_stride, t->hard,
            g->dirs, g->d_seeds[cur], g->d_caps);
    else
        build_kernel<4><<<blocks, threads, 0, g->stream>>>(
            (long long)n, (int)g->width, (int)g->height, g->d_pixels[cur], mask, g->d_hd, *rule,
            g->d_cell_lut, g->d_cell_cap, (int)g->cells, g->d_pair, g->pair_stride, t->hard,
            g->dirs, g->d_seeds[cur], g->d_caps);
    GCUT__CUDA_TRY(cudaGetLastError(), "capacity build");
    bool warm = false;
    if (g->warm_allowed && same && g->prev_seeds) {
        GCUT__CUDA_TRY(cudaMemsetAsync(g->d_count, 0, sizeof(unsigned long long), g->stream),
                       "counter");
        changed_kernel<<<blocks, threads, 0, g->stream>>>((long long)n, g->d_pixels[cur],
                                                          g->d_pixels[prev], g->d_seeds[cur],
                                                          g->d_seeds[prev], g->d_count);
        GCUT__CUDA_TRY(cudaGetLastError(), "change count");
        GCUT__CUDA_TRY(cudaMemcpyAsync(g->h_count, g->d_count, sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, g->stream),
                       "change count");
        GCUT__CUDA_TRY(cudaStreamSynchronize(g->stream), "change count");
        report->changed_pixels = (int64_t)*g->h_count;
        warm = (double)*g->h_count <= kWarmShare * (double)n;
    }
    if (seeds != NULL)
        GCUT__CUDA_TRY(
            cudaMemcpyAsync(seeds, g->d_seeds[cur], n, cudaMemcpyDeviceToHost, g->stream),
            "seeds download");
    GCUT__CUDA_TRY(cudaStreamSynchronize(g->stream), "upload and build");
    const double t2 = gcut__now_ms();
    report->upload_ms = t1 - t0;
    report->build_ms = t2 - t1;
    if (warm && g->warm == NULL && (st = make_context(g, 1, &g->warm)) != GCUT_OK)
        return st;
    gcut_grid_context *ctx = warm ? g->warm : g->cold;
    const int32_t *dirs[kMaxDirs];
    for (int d = 0; d < g->conn; d++)
        dirs[d] = g->d_caps + (size_t)(2 + d) * n;
    gcut_grid_context_info before;
    gcut_grid_context_get_info(ctx, &before);
    st = gcut_grid_context_solve_device(ctx, g->d_caps, g->d_caps + n, dirs, g->d_labels, g->stream,
                                        flow, stats);
    if (st != GCUT_OK)
        return st;
    /* The new mask replaces the one before the last, and becomes the last. */
    mask_kernel<<<blocks, threads, 0, g->stream>>>((long long)n, g->d_labels,
                                                   g->d_mask[1 - g->mask_cur]);
    GCUT__CUDA_TRY(cudaGetLastError(), "mask");
    GCUT__CUDA_TRY(cudaMemcpyAsync(labels, g->d_labels, n, cudaMemcpyDeviceToHost, g->stream),
                   "labels download");
    GCUT__CUDA_TRY(cudaStreamSynchronize(g->stream), "labels download");
    g->mask_cur = 1 - g->mask_cur;
    g->prev_seeds = true;
    gcut_grid_context_info after;
    gcut_grid_context_get_info(ctx, &after);
    report->warm = after.warm_solves > before.warm_solves;
    report->solve_ms = gcut__now_ms() - t2;
    return GCUT_OK;
}
