/* video_cuda.cu - the GPU path of gcut_video (Garrett & Saito 2009, 3-4: each frame's graph
 * built on the GPU as it arrives and cut there; one solver kept for the whole video): a
 * cuda-grid context made once, the capacities computed on the device from the frame, its seeds
 * and the host's integer tables, the labels copied back; warm re-solves (Kohli & Torr 2005)
 * only for frames whose capacities mostly repeat the last frame's. docs/VIDEO.md, "GPU". */
#include "internal.h"
#include "video_internal.h"

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

/* gcut__seg_fill_grid()'s capacities (src/seg/seg_tables.c) for a 2D RGB frame, one thread a
 * pixel: terminal capacities from the unary tables of the pixel's quantised colour (K on a
 * seed's side, 0 on the other), neighbour arcs from the pairwise table of the pair's squared
 * colour difference (0 where the neighbour is outside the frame). Bit for bit the host's. */
template <int CONN>
__global__ void build_kernel(long long n, int width, int height, const unsigned char *pixels,
                             const unsigned char *seeds, const int *unary_source,
                             const int *unary_sink, const int *pairwise, int pair_stride, int hard,
                             Dirs dirs, int *caps) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned char *px = pixels + i * 3;
        const long long q = gcut__seg_color_index(px, 3);
        int source = unary_source[q], sink = unary_sink[q];
        const unsigned char s = seeds[i];
        if (s == GCUT_SEED_FOREGROUND)
            source = hard, sink = 0;
        else if (s == GCUT_SEED_BACKGROUND)
            source = 0, sink = hard;
        caps[i] = source;
        caps[n + i] = sink;
        const int x = (int)(i % width), y = (int)(i / width);
#pragma unroll
        for (int d = 0; d < CONN; d++) {
            const int nx = x + dirs.dx[d], ny = y + dirs.dy[d];
            int cap = 0;
            if (nx >= 0 && nx < width && ny >= 0 && ny < height) {
                const unsigned char *pq = pixels + ((long long)ny * width + nx) * 3;
                cap = pairwise[dirs.cls[d] * pair_stride + gcut__seg_sqdiff(px, pq, 3)];
            }
            caps[(2 + d) * n + i] = cap;
        }
    }
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
    cudaGetLastError();
    if (err == cudaErrorMemoryAllocation)
        return gcut__fail(GCUT_ERR_NOMEM, "video (cuda-grid): %s: %s", what,
                          cudaGetErrorString(err));
    return gcut__fail(GCUT_ERR_DEVICE, "video (cuda-grid): %s: %s", what, cudaGetErrorString(err));
}

#define VTRY(call, what)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            return cuda_fail(err_, what);                                                          \
    } while (0)

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
    int cur;
    int frames;
    int *d_unary; /* [0, nc) source, [nc, 2 nc) sink */
    int *d_pair;  /* classes rows of pair_stride */
    int *d_caps;  /* source, sink, then one array a direction */
    unsigned char *d_labels;
    unsigned long long *d_count, *h_count;
    int *h_tables;      /* pinned staging: unary (2 nc), then the pairwise rows */
    int pair_extent[3]; /* uploaded non-zero prefix of each pairwise row */
    int last_hard;
    bool have_tables;
    long long nc;
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
    }
    cudaFree(g->d_unary);
    cudaFree(g->d_pair);
    cudaFree(g->d_caps);
    cudaFree(g->d_labels);
    cudaFree(g->d_count);
    if (g->h_count)
        cudaFreeHost(g->h_count);
    if (g->h_tables)
        cudaFreeHost(g->h_tables);
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
    g->nc = 1 << 18;
    g->classes = g->conn == 8 ? 2 : 1;
    g->pair_stride = 255 * 255 * 3 + 1;
    VTRY(cudaSetDevice(g->options.device), "cudaSetDevice");
    VTRY(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking), "stream");
    for (int k = 0; k < 2; k++) {
        VTRY(cudaMalloc(&g->d_pixels[k], n * 3), "frame pixels");
        VTRY(cudaMalloc(&g->d_seeds[k], n), "frame seeds");
    }
    VTRY(cudaMalloc(&g->d_unary, 2 * (size_t)g->nc * sizeof(int)), "unary tables");
    VTRY(cudaMalloc(&g->d_pair, (size_t)g->classes * g->pair_stride * sizeof(int)),
         "pairwise tables");
    VTRY(cudaMemset(g->d_pair, 0, (size_t)g->classes * g->pair_stride * sizeof(int)),
         "pairwise tables");
    VTRY(cudaMalloc(&g->d_caps, (size_t)(2 + g->conn) * n * sizeof(int)), "capacities");
    VTRY(cudaMalloc(&g->d_labels, n), "labels");
    VTRY(cudaMalloc(&g->d_count, sizeof(unsigned long long)), "counter");
    VTRY(cudaMallocHost(&g->h_count, sizeof(unsigned long long)), "counter");
    VTRY(cudaMallocHost(&g->h_tables,
                        (2 * (size_t)g->nc + (size_t)g->classes * g->pair_stride) * sizeof(int)),
         "table staging");
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

/* Stage the tables and upload what changed; @return whether they equal the last frame's. */
static gcut_status upload_tables(gcut__video_gpu *g, const gcut__seg_tables *t, bool *same) {
    const size_t nc = (size_t)g->nc;
    int *hu = g->h_tables, *hp = g->h_tables + 2 * nc;
    bool equal = g->have_tables && t->hard == g->last_hard &&
                 memcmp(hu, t->unary_source, nc * sizeof(int)) == 0 &&
                 memcmp(hu + nc, t->unary_sink, nc * sizeof(int)) == 0;
    int extent[3] = {0, 0, 0};
    for (int k = 0; k < g->classes; k++) {
        const int32_t *row = t->pairwise[k];
        int e = 0;
        while (e <= t->max_sqdiff && row[e] != 0)
            e++;
        extent[k] = e;
        if (equal && (e != g->pair_extent[k] ||
                      memcmp(hp + (size_t)k * g->pair_stride, row, (size_t)e * sizeof(int)) != 0))
            equal = false;
    }
    *same = equal;
    if (equal)
        return GCUT_OK;
    memcpy(hu, t->unary_source, nc * sizeof(int));
    memcpy(hu + nc, t->unary_sink, nc * sizeof(int));
    VTRY(cudaMemcpyAsync(g->d_unary, hu, 2 * nc * sizeof(int), cudaMemcpyHostToDevice, g->stream),
         "unary tables upload");
    for (int k = 0; k < g->classes; k++) {
        /* The row's non-zero prefix, and zeros over what the last row had beyond it. */
        const int up = extent[k] > g->pair_extent[k] ? extent[k] : g->pair_extent[k];
        int *row = hp + (size_t)k * g->pair_stride;
        memcpy(row, t->pairwise[k], (size_t)extent[k] * sizeof(int));
        memset(row + extent[k], 0, (size_t)(up - extent[k]) * sizeof(int));
        if (up > 0)
            VTRY(cudaMemcpyAsync(g->d_pair + (size_t)k * g->pair_stride, row,
                                 (size_t)up * sizeof(int), cudaMemcpyHostToDevice, g->stream),
                 "pairwise tables upload");
        g->pair_extent[k] = extent[k];
    }
    g->last_hard = t->hard;
    g->have_tables = true;
    return GCUT_OK;
}

extern "C" gcut_status gcut__video_gpu_solve(gcut__video_gpu *g, const uint8_t *pixels,
                                             const uint8_t *seeds, const gcut__seg_tables *t,
                                             uint8_t *labels, int64_t *flow, gcut_stats *stats,
                                             gcut__video_gpu_report *report) {
    memset(report, 0, sizeof *report);
    report->changed_pixels = -1;
    if (t->channels != 3 || t->num_colors != g->nc || t->num_classes > g->classes)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video (cuda-grid): tables of another kind");
    const size_t n = (size_t)g->n;
    const double t0 = gcut__now_ms();
    VTRY(cudaSetDevice(g->options.device), "cudaSetDevice");
    const int cur = g->cur, prev = 1 - cur;
    VTRY(cudaMemcpyAsync(g->d_pixels[cur], pixels, n * 3, cudaMemcpyHostToDevice, g->stream),
         "frame upload");
    VTRY(cudaMemcpyAsync(g->d_seeds[cur], seeds, n, cudaMemcpyHostToDevice, g->stream),
         "seeds upload");
    bool same = false;
    gcut_status st = upload_tables(g, t, &same);
    if (st != GCUT_OK)
        return st;
    const int threads = 256;
    const int blocks =
        (int)((n + threads - 1) / threads < 65536 ? (n + threads - 1) / threads : 65536);
    bool warm = false;
    if (g->warm_allowed && same && g->frames > 0) {
        VTRY(cudaMemsetAsync(g->d_count, 0, sizeof(unsigned long long), g->stream), "counter");
        changed_kernel<<<blocks, threads, 0, g->stream>>>((long long)n, g->d_pixels[cur],
                                                          g->d_pixels[prev], g->d_seeds[cur],
                                                          g->d_seeds[prev], g->d_count);
        VTRY(cudaGetLastError(), "change count");
        VTRY(cudaMemcpyAsync(g->h_count, g->d_count, sizeof(unsigned long long),
                             cudaMemcpyDeviceToHost, g->stream),
             "change count");
        VTRY(cudaStreamSynchronize(g->stream), "change count");
        report->changed_pixels = (int64_t)*g->h_count;
        warm = (double)*g->h_count <= kWarmShare * (double)n;
    }
    const double t1 = gcut__now_ms();
    if (g->conn == 8)
        build_kernel<8><<<blocks, threads, 0, g->stream>>>(
            (long long)n, (int)g->width, (int)g->height, g->d_pixels[cur], g->d_seeds[cur],
            g->d_unary, g->d_unary + g->nc, g->d_pair, g->pair_stride, t->hard, g->dirs, g->d_caps);
    else
        build_kernel<4><<<blocks, threads, 0, g->stream>>>(
            (long long)n, (int)g->width, (int)g->height, g->d_pixels[cur], g->d_seeds[cur],
            g->d_unary, g->d_unary + g->nc, g->d_pair, g->pair_stride, t->hard, g->dirs, g->d_caps);
    VTRY(cudaGetLastError(), "capacity build");
    VTRY(cudaStreamSynchronize(g->stream), "upload and build");
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
    VTRY(cudaMemcpyAsync(labels, g->d_labels, n, cudaMemcpyDeviceToHost, g->stream),
         "labels download");
    VTRY(cudaStreamSynchronize(g->stream), "labels download");
    gcut_grid_context_info after;
    gcut_grid_context_get_info(ctx, &after);
    report->warm = after.warm_solves > before.warm_solves;
    report->solve_ms = gcut__now_ms() - t2;
    g->cur = prev;
    g->frames++;
    return GCUT_OK;
}
