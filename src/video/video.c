/* video.c - online video segmentation, one frame at a time (Garrett & Saito 2009, 3-4: the
 * previous silhouette as the next frame's mask and model; Lattari 2010 ch. 6's reuse of the
 * previous segmentation): colour histograms carried over with a forgetting factor, hard seeds
 * deeper than a motion-sized band, and the cut on the whole frame or on the band alone. */
#include "internal.h"
#include "seg_internal.h"
#include "video_internal.h"
#include "video_kernels.h"

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define CHAMFER_AXIS 3 /* 3-4 chamfer distance: 3 per axis step, 4 per diagonal step */
#define CHAMFER_DIAG 4
#define DIST_INF INT32_MAX / 2

void gcut_video_params_init(gcut_video_params *params) {
    if (params == NULL)
        return;
    memset(params, 0, sizeof *params);
    gcut_seg_params_init(&params->seg);
    params->seg.model = GCUT_MODEL_HISTOGRAM;
    params->forget = 0.5;
    params->band_min = 3.0;
    params->band_motion = 1.0;
    params->band_max = 64.0;
    params->restrict_band = 1;
    params->check_colour = 1;
    params->colour_reach = 4.0;
}

struct gcut_video {
    int64_t width, height, n;
    gcut_video_params params;
    gcut_options options;
    int connectivity;
    int64_t frames;
    gcut__seg_tables *tables;
    gcut_grid *grid;        /* the whole frame (restrict_band 0, and the first frame) */
    gcut_graph *band;       /* the band's graph: n nodes, only band nodes used */
    gcut_graph *warm_graph; /* params.warm: the whole frame's graph, kept across frames */
    uint8_t *work;          /* working image of the current frame (8-bit, 3 channels) */
    uint8_t *prev_work;     /* ... of the previous frame */
    uint8_t *mask;          /* current mask, 1/0 */
    uint8_t *prev_mask;     /* the one before (motion estimate) */
    uint8_t *seeds;         /* seed codes of the current frame */
    uint8_t *labels;        /* solver output */
    int32_t *dist;          /* chamfer distance to the mask's boundary */
    int32_t *dist_scratch;  /* per-part windows of the distance in strips (or NULL) */
    int64_t scratch_rows;   /* rows of each part's window */
    int64_t halo_max;       /* the most rows a window may reach past its strip */
    int64_t *band_nodes;    /* pixels of the band, in scan order */
    double *model;          /* [0, cells) foreground, [cells, 2 cells) background: normalised
                               cell masses of the running colour model */
    double *fresh;          /* this frame's counts, same layout */
    int lut[64];            /* histogram bin of each 6-bit channel level */
    int32_t *cell_lut;      /* histogram cell of each quantised colour (num_colors) */
    int32_t *cell;          /* histogram cell of every pixel of the current frame ... */
    int32_t *prev_cell;     /* ... and of the previous one (its colour model) */
    uint32_t *counts;       /* per-thread cell counts: threads x 2 cells */
    int32_t *cell_cap;      /* per cell: source capacity [0, cells), sink [cells, 2 cells) */
    int threads;            /* CPU threads of the model stage (parts of every pool run) */
    gcut__pool *pool;       /* their workers */
    int64_t *chunk_count;   /* per-thread band sizes of the seeds pass */
    int32_t *node_of;       /* band graph node of each band pixel */
    double *cells;          /* histogram cells (bins^3), and a second array for the blur */
    double *cells_tmp;
    double pair_sigma, pair_scale; /* the pairwise tables' parameters (refilled on change) */
    int64_t boundary;              /* boundary pixels of the last mask */
    int64_t box[4];                /* their box: x min, x max, y min, y max */
    int64_t changed;               /* pixels whose label differs between the last two masks */
    double motion;        /* mean boundary displacement of the last frame, pixels; < 0 unknown */
    gcut__video_gpu *gpu; /* the GPU path (cuda-grid on the whole frame), or NULL */
    int32_t *row_dist;    /* gcut__video_emulate_gpu(): row distances of the GPU's rule */
    int last_warm;        /* the GPU path's last solve started warm */
};

/* Frame buffers come from pinned memory on the GPU path (fast uploads), else the heap. */
static void *frame_alloc(gcut_video *v, size_t bytes, const char *what) {
    if (v->gpu != NULL)
        return gcut__video_gpu_host_alloc(v->gpu, bytes, what);
    return gcut__malloc(bytes, what);
}

static void frame_free(gcut_video *v, void *p) {
    if (v->gpu != NULL)
        gcut__video_gpu_host_free(p);
    else
        gcut__free(p);
}

void gcut_video_free(gcut_video *v) {
    if (v == NULL)
        return;
    gcut__seg_tables_free(v->tables);
    gcut_grid_free(v->grid);
    gcut_graph_free(v->band);
    gcut_graph_free(v->warm_graph);
    frame_free(v, v->work);
    frame_free(v, v->prev_work);
    frame_free(v, v->seeds);
    gcut__free(v->mask);
    gcut__free(v->prev_mask);
    frame_free(v, v->labels);
    gcut__free(v->dist);
    gcut__free(v->dist_scratch);
    gcut__free(v->row_dist);
    gcut__free(v->band_nodes);
    gcut__free(v->model);
    gcut__free(v->fresh);
    gcut__free(v->cell_lut);
    gcut__free(v->cell);
    gcut__free(v->prev_cell);
    gcut__free(v->counts);
    gcut__free(v->cell_cap);
    gcut__free(v->chunk_count);
    gcut__free(v->node_of);
    gcut__free(v->cells);
    gcut__free(v->cells_tmp);
    gcut__video_gpu_free(v->gpu);
    gcut__pool_free(v->pool);
    gcut__free(v);
}

/* The GPU path is taken for cuda-grid, and for "auto" (or no solver named) when a device is
 * present and auto would pick cuda-grid for a frame's grid: the whole frame is solved there
 * (the band graph is a general graph, which cuda-grid does not take). */
static bool wants_gpu(const gcut_options *o, int64_t n) {
    const char *name = o->solver;
    if (name != NULL && strcmp(name, "cuda-grid") == 0)
        return true;
    if (name != NULL && strcmp(name, "auto") != 0)
        return false;
    gcut_status st;
    const gcut__solver *s = gcut__solver_pick(o, true, n, &st);
    return s != NULL && strcmp(s->name, "cuda-grid") == 0;
}

gcut_status gcut_video_create(int64_t width, int64_t height, const gcut_video_params *params,
                              const gcut_options *options, gcut_video **out) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_create: out is NULL");
    *out = NULL;
    if (width < 2 || height < 2 || width > (1 << 16) || height > (1 << 16) ||
        width * height >= ((int64_t)1 << 32))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_video_create: frame size %" PRId64 "x%" PRId64
                          " not supported (2 to 65536 per side, fewer than 2^32 pixels)",
                          width, height);
    gcut_video_params p;
    if (params != NULL)
        p = *params;
    else
        gcut_video_params_init(&p);
    if (!(p.forget >= 0.0 && p.forget < 1.0))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video: forget %g must be in [0, 1)", p.forget);
    if (!(p.band_min >= 1.0) || !(p.band_max >= p.band_min) || !(p.band_max <= 1e6) ||
        !(p.band_motion >= 0.0) || !isfinite(p.band_motion))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "video: band_min %g, band_max %g, band_motion %g (need 1 <= band_min "
                          "<= band_max, band_motion >= 0)",
                          p.band_min, p.band_max, p.band_motion);
    if (!(p.colour_reach >= 0.0) || !isfinite(p.colour_reach))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video: colour_reach %g must be >= 0",
                          p.colour_reach);
    if (!(p.seg.lambda >= 0.0) || !isfinite(p.seg.lambda))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video: lambda %g must be >= 0", p.seg.lambda);
    if (isnan(p.seg.sigma) || isinf(p.seg.sigma) || isnan(p.seg.scale) || isinf(p.seg.scale))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video: sigma and scale must be finite");
    const int conn = p.seg.connectivity == 0 ? 8 : p.seg.connectivity;
    if (conn != 4 && conn != 8)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video: connectivity %d is not 4 or 8", conn);
    if (p.seg.histogram_bins < 2 || p.seg.histogram_bins > 64)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video: histogram_bins %d must be in 2..64",
                          p.seg.histogram_bins);
    gcut_video *v = gcut__calloc(1, sizeof *v, "video segmenter");
    if (v == NULL)
        return GCUT_ERR_NOMEM;
    v->width = width;
    v->height = height;
    v->n = width * height;
    v->params = p;
    v->connectivity = conn;
    v->motion = -1.0;
    if (options != NULL)
        v->options = *options;
    else
        gcut_options_init(&v->options);
    /* Threads: as options say (0 = the online cores), at most one per 2^16 pixels (below that
     * waking them costs more than they save) and 64. */
    int64_t threads = v->options.threads > 0 ? v->options.threads : gcut__online_cores();
    if (threads > v->n / 65536)
        threads = v->n / 65536;
    v->threads = threads < 1 ? 1 : threads > 64 ? 64 : (int)threads;
    const size_t n = (size_t)v->n;
    gcut_status st = gcut__seg_tables_alloc(3, conn, &v->tables);
    if (st == GCUT_OK)
        st = gcut__pool_create(v->threads, &v->pool);
    if (st != GCUT_OK) {
        gcut_video_free(v);
        return st;
    }
    if (wants_gpu(&v->options, v->n)) {
        /* The whole frame on the GPU: a cuda-grid context for the video's life. */
        gcut_options go = v->options; /* options.warm: warm frames allowed (default on) */
        const bool asked = v->options.solver != NULL && strcmp(v->options.solver, "cuda-grid") == 0;
        if ((st = gcut__video_gpu_create(width, height, conn, &go, &v->gpu)) != GCUT_OK) {
            if (asked) {
                gcut_video_free(v);
                return st;
            }
            /* "auto": a device that cannot take the video leaves it to the CPU path (bk). */
            v->gpu = NULL;
            v->options.solver = "bk";
            gcut__clear_error();
        } else {
            v->params.restrict_band = 0;
            v->params.warm = 0; /* the warm choice is the GPU path's own (docs/VIDEO.md) */
        }
    }
    if (v->gpu == NULL && (v->options.solver == NULL || strcmp(v->options.solver, "auto") == 0)) {
        /* The CPU path cuts a band graph per frame. auto's rule for general graphs was measured
         * on single solves (it sends non-lattice graphs of 32768+ nodes to cuda-general where a
         * device is present), not on a band a frame; the video's measurements are bk's. */
        v->options.solver = "bk";
    }
    const size_t nc = (size_t)v->tables->num_colors;
    const int64_t shape[2] = {height, width};
    if ((st = gcut_grid_create(2, shape, conn, &v->grid)) != GCUT_OK ||
        (st = gcut_graph_create(v->n, v->n, &v->band)) != GCUT_OK) {
        gcut_video_free(v);
        return st;
    }
    v->work = frame_alloc(v, n * 3, "video working frame");
    v->prev_work = frame_alloc(v, n * 3, "video previous frame");
    v->seeds = frame_alloc(v, n, "video seeds");
    if (v->seeds != NULL)
        memset(v->seeds, 0, n);
    v->mask = gcut__calloc(n, 1, "video mask");
    v->prev_mask = gcut__calloc(n, 1, "video previous mask");
    v->labels = frame_alloc(v, n, "video labels"); /* pinned on the GPU path: fast downloads */
    if (v->labels != NULL)
        memset(v->labels, 0, n);
    v->dist = gcut__malloc(n * sizeof(int32_t), "video boundary distance");
    v->band_nodes = gcut__malloc(n * sizeof(int64_t), "video band");
    const size_t bins = (size_t)p.seg.histogram_bins, cells = bins * bins * bins;
    for (int l = 0; l < 64; l++)
        v->lut[l] = l * p.seg.histogram_bins / 64;
    v->model = gcut__calloc(2 * cells, sizeof(double), "video colour model");
    v->fresh = gcut__calloc(2 * cells, sizeof(double), "video colour counts");
    v->cell_lut = gcut__malloc(nc * sizeof(int32_t), "video colour cells");
    v->cell = gcut__malloc(n * sizeof(int32_t), "video pixel cells");
    v->prev_cell = gcut__malloc(n * sizeof(int32_t), "video pixel cells");
    v->counts = gcut__malloc((size_t)v->threads * 2 * cells * sizeof(uint32_t),
                             "video per-thread colour counts");
    v->cell_cap = gcut__malloc(2 * cells * sizeof(int32_t), "video cell capacities");
    v->chunk_count = gcut__malloc((size_t)v->threads * sizeof(int64_t), "video band chunks");
    v->node_of = gcut__malloc(n * sizeof(int32_t), "video band nodes");
    v->cells = gcut__calloc(2 * cells, sizeof(double), "video histogram");
    v->cells_tmp = gcut__calloc(2 * cells, sizeof(double), "video histogram");
    if (v->work == NULL || v->prev_work == NULL || v->mask == NULL || v->prev_mask == NULL ||
        v->seeds == NULL || v->labels == NULL || v->dist == NULL || v->band_nodes == NULL ||
        v->model == NULL || v->fresh == NULL || v->cell_lut == NULL || v->cell == NULL ||
        v->prev_cell == NULL || v->counts == NULL || v->cell_cap == NULL ||
        v->chunk_count == NULL || v->cells == NULL || v->cells_tmp == NULL || v->node_of == NULL) {
        gcut_video_free(v);
        return GCUT_ERR_NOMEM;
    }
    /* Windows for the distance in strips: each part's strip and the rows the seeds' widest
     * threshold can reach on both sides (not when the colour check reaches the whole frame,
     * or when they would hold more than 32 distance maps: 16 threads at 1920x1080 with the
     * default colour reach of 4 x the widest band, 64, need 8.7). */
    const double widest_px =
        p.check_colour ? (p.colour_reach > 0 ? p.colour_reach * p.band_max : -1) : p.band_max;
    if (v->threads > 1 && widest_px >= 0) {
        v->halo_max = (int64_t)ceil(widest_px) + 2;
        const int64_t rows = (height + v->threads - 1) / v->threads + 2 * v->halo_max;
        v->scratch_rows = rows < height ? rows : height;
        const int64_t cells_needed = (int64_t)v->threads * v->scratch_rows * width;
        if (cells_needed <= 32 * v->n)
            v->dist_scratch =
                gcut__malloc((size_t)cells_needed * sizeof(int32_t), "video distance windows");
        /* (NULL: the distance runs in one pass) */
    }
    const int64_t b = p.seg.histogram_bins;
    for (int64_t c = 0; c < (int64_t)nc; c++)
        v->cell_lut[c] =
            (int32_t)(((int64_t)v->lut[c >> 12] * b + v->lut[(c >> 6) & 63]) * b + v->lut[c & 63]);
    /* The GPU path keeps the colour cells and the masks on the device (docs/VIDEO.md, "GPU"). */
    if (v->gpu != NULL &&
        (st = gcut__video_gpu_model_init(v->gpu, v->cell_lut, b * b * b)) != GCUT_OK) {
        gcut_video_free(v);
        return st;
    }
    *out = v;
    return GCUT_OK;
}

int64_t gcut_video_frames(const gcut_video *v) {
    return v == NULL ? 0 : v->frames;
}

const char *gcut_video_solver(const gcut_video *v) {
    if (v == NULL)
        return "none";
    if (v->gpu != NULL)
        return "cuda-grid";
    return v->options.solver != NULL ? v->options.solver : "auto";
}

gcut_status gcut_video_get_mask(const gcut_video *v, uint8_t *mask) {
    if (v == NULL || mask == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_get_mask: video or mask is NULL");
    if (v->frames == 0)
        return gcut__fail(GCUT_ERR_STATE, "gcut_video_get_mask: no frame segmented yet");
    memcpy(mask, v->mask, (size_t)v->n);
    return GCUT_OK;
}

/* Part part of parts of [0, n). */
static void part_range(int64_t n, int part, int parts, int64_t *lo, int64_t *hi) {
    *lo = n * part / parts;
    *hi = n * (part + 1) / parts;
}

typedef struct load_job {
    gcut_video *v;
    const gcut_image *f;
    bool cells; /* also each pixel's histogram cell (not on the GPU path, which counts there) */
} load_job;

static void load_part(void *arg, int part, int parts) {
    const load_job *job = arg;
    const gcut_image *f = job->f;
    const int ch = f->channels;
    const bool rgb8 = f->bit_depth == 8 && ch == 3;
    uint8_t *work = job->v->work;
    int32_t *cell = job->v->cell;
    const int32_t *lut = job->v->cell_lut;
    int64_t lo, hi;
    part_range(job->v->n, part, parts, &lo, &hi);
    if (rgb8)
        memcpy(work + lo * 3, (const uint8_t *)f->pixels + lo * 3, (size_t)(hi - lo) * 3);
    if (rgb8 && !job->cells)
        return;
    for (int64_t i = lo; i < hi; i++) {
        uint8_t *px = work + i * 3;
        if (!rgb8)
            for (int c = 0; c < 3; c++) {
                const int src = ch >= 3 ? c : 0;
                px[c] = f->bit_depth == 8
                            ? ((const uint8_t *)f->pixels)[i * ch + src]
                            : (uint8_t)(((const uint16_t *)f->pixels)[i * ch + src] >> 8);
            }
        if (job->cells)
            cell[i] = lut[gcut__seg_color_index(px, 3)];
    }
}

/* The frame as 8-bit RGB into v->work and (cells) each pixel's histogram cell into v->cell (the
 * GPU path's propagated frames need none: the device counts the cells): gray is
 * replicated, alpha dropped, 16-bit samples give their high byte (a fixed map, so that colours
 * mean the same in every frame). One pass, in parallel. */
static gcut_status load_frame(gcut_video *v, const gcut_image *f, bool cells) {
    if (f == NULL || f->pixels == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video: frame or its pixels is NULL");
    if (f->width != v->width || f->height != v->height || f->depth != 1)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "video: frame %" PRId64 " is %" PRId64 "x%" PRId64
                          " but the video is %" PRId64 "x%" PRId64,
                          v->frames, f->width, f->height, v->width, v->height);
    if (f->channels < 1 || f->channels > 4 || (f->bit_depth != 8 && f->bit_depth != 16))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "video: frame %" PRId64 " has %d channels of %d bits", v->frames,
                          f->channels, f->bit_depth);
    load_job job = {v, f, cells};
    gcut__pool_run(v->pool, load_part, &job);
    return GCUT_OK;
}

/* Chamfer (3-4) distance to the mask's boundary (pixels with a 4-neighbour of the other label
 * are at 0), in units of a third of a pixel, of the rows [y0, y1) of the frame computed as if
 * the frame ended there, and of its columns [x0, x1) likewise (the window's own distances; d
 * holds its rows, w wide, of which only those columns are written). The two raster passes
 * of the classic algorithm, each row split in two: the terms from the row above (below) first,
 * with no dependency between pixels, then the chain along the row; the same distances as the
 * one-step passes, without their long dependency chain. Where the window is the whole frame
 * these are the frame's distances. A pixel whose distance is at most 3 * R, R rows inside the
 * window's edges, gets the frame's distance too: every step of a chamfer path crosses at most
 * one row and costs at least 3, so its shortest path to the boundary stays in the window. */
static void window_distance(const uint8_t *mask, int64_t w, int64_t h, int64_t y0, int64_t y1,
                            int64_t x0, int64_t x1, int32_t *d) {
    for (int64_t y = y0; y < y1; y++) {
        const uint8_t *m = mask + y * w;
        const uint8_t *mu = y > 0 ? m - w : m, *md = y + 1 < h ? m + w : m;
        int32_t *row = d + (y - y0) * w;
        const int32_t *up = y > y0 ? row - w : row;
        for (int64_t x = x0; x < x1; x++) {
            const uint8_t c = m[x];
            const uint8_t l = x > 0 ? m[x - 1] : c, r = x + 1 < w ? m[x + 1] : c;
            const bool edge = (l != c) | (r != c) | (mu[x] != c) | (md[x] != c);
            int32_t best = DIST_INF;
            if (y > y0) {
                const int32_t a = up[x] + CHAMFER_AXIS;
                const int32_t b = x > x0 ? up[x - 1] + CHAMFER_DIAG : DIST_INF;
                const int32_t e = x + 1 < x1 ? up[x + 1] + CHAMFER_DIAG : DIST_INF;
                best = a < best ? a : best;
                best = b < best ? b : best;
                best = e < best ? e : best;
            }
            row[x] = edge ? 0 : best;
        }
        for (int64_t x = x0 + 1; x < x1; x++) {
            const int32_t a = row[x - 1] + CHAMFER_AXIS;
            row[x] = a < row[x] ? a : row[x];
        }
    }
    { /* the last row's backward chain (no row below it) */
        int32_t *row = d + (y1 - 1 - y0) * w;
        for (int64_t x = x1 - 2; x >= x0; x--) {
            const int32_t a = row[x + 1] + CHAMFER_AXIS;
            row[x] = a < row[x] ? a : row[x];
        }
    }
    for (int64_t y = y1 - 2; y >= y0; y--) {
        int32_t *row = d + (y - y0) * w;
        const int32_t *down = row + w;
        for (int64_t x = x0; x < x1; x++) {
            int32_t best = row[x];
            const int32_t a = down[x] + CHAMFER_AXIS;
            const int32_t b = x > x0 ? down[x - 1] + CHAMFER_DIAG : DIST_INF;
            const int32_t e = x + 1 < x1 ? down[x + 1] + CHAMFER_DIAG : DIST_INF;
            best = a < best ? a : best;
            best = b < best ? b : best;
            best = e < best ? e : best;
            row[x] = best;
        }
        for (int64_t x = x1 - 2; x >= x0; x--) {
            const int32_t a = row[x + 1] + CHAMFER_AXIS;
            row[x] = a < row[x] ? a : row[x];
        }
    }
}

/* The distance map v->dist, exact wherever it is at most 3 * reach_rows (all that the seeds
 * read; reach_rows < 0: everywhere). Only the box of the boundary pixels (found by the count
 * pass) widened by reach_rows + 1 on each side is computed: a pixel outside it is more than
 * reach_rows pixels from every boundary pixel along some axis, so more than 3 * reach_rows in
 * chamfer units (DIST_INF is written), and a pixel inside has its nearest boundary pixel's
 * straight chamfer path inside it too. With several threads the box's rows go in strips, each
 * computed in a window reach_rows + 1 rows taller on both sides (window_distance()) in the
 * part's scratch rows, its own rows copied out. Beyond 3 * reach_rows a strip's distance can
 * exceed the frame's; both are then above every threshold the seeds compare. */
typedef struct dist_job {
    gcut_video *v;
    int64_t halo, x0, x1, y0, y1; /* the box */
} dist_job;

/* DIST_INF outside the box, rows split over the parts. */
static void far_part(void *arg, int part, int parts) {
    const dist_job *job = arg;
    gcut_video *v = job->v;
    const int64_t w = v->width;
    int64_t lo, hi;
    part_range(v->height, part, parts, &lo, &hi);
    for (int64_t y = lo; y < hi; y++) {
        int32_t *row = v->dist + y * w;
        const bool inside = y >= job->y0 && y < job->y1;
        const int64_t a = inside ? job->x0 : w, b = inside ? job->x1 : w;
        for (int64_t x = 0; x < a; x++)
            row[x] = DIST_INF;
        for (int64_t x = b; x < w; x++)
            row[x] = DIST_INF;
    }
}

static void dist_part(void *arg, int part, int parts) {
    const dist_job *job = arg;
    gcut_video *v = job->v;
    const int64_t w = v->width, h = v->height;
    int64_t lo, hi;
    part_range(job->y1 - job->y0, part, parts, &lo, &hi);
    lo += job->y0;
    hi += job->y0;
    if (lo >= hi)
        return;
    const int64_t y0 = lo - job->halo > job->y0 ? lo - job->halo : job->y0;
    const int64_t y1 = hi + job->halo < job->y1 ? hi + job->halo : job->y1;
    int32_t *scratch = v->dist_scratch + (size_t)part * (size_t)v->scratch_rows * (size_t)w;
    window_distance(v->mask, w, h, y0, y1, job->x0, job->x1, scratch);
    for (int64_t y = lo; y < hi; y++)
        memcpy(v->dist + y * w + job->x0, scratch + (y - y0) * w + job->x0,
               (size_t)(job->x1 - job->x0) * sizeof(int32_t));
}

static void boundary_distance(gcut_video *v, int64_t reach_rows) {
    const int parts = gcut__pool_threads(v->pool);
    const int64_t w = v->width, h = v->height, halo = reach_rows + 1;
    dist_job job = {v, halo, 0, w, 0, h};
    if (v->boundary == 0) { /* one label everywhere: no boundary, every pixel far */
        job.y0 = job.y1 = h;
        gcut__pool_run(v->pool, far_part, &job);
        return;
    }
    if (reach_rows >= 0) {
        job.x0 = v->box[0] - halo > 0 ? v->box[0] - halo : 0;
        job.x1 = v->box[1] + 1 + halo < w ? v->box[1] + 1 + halo : w;
        job.y0 = v->box[2] - halo > 0 ? v->box[2] - halo : 0;
        job.y1 = v->box[3] + 1 + halo < h ? v->box[3] + 1 + halo : h;
    }
    gcut__pool_run(v->pool, far_part, &job);
    if (parts == 1 || reach_rows < 0 || v->dist_scratch == NULL || halo > v->halo_max ||
        2 * halo >= job.y1 - job.y0) {
        window_distance(v->mask, w, h, job.y0, job.y1, job.x0, job.x1, v->dist + job.y0 * w);
        return;
    }
    gcut__pool_run(v->pool, dist_part, &job);
}

/* The GPU path's distance rule (video_kernels.h): the window of the last boundary widened by
 * the rows the seeds' widest threshold reaches, as boundary_distance() takes it, and the rows
 * a column scan may reach; the whole frame when the colour check reaches everywhere, nothing
 * when the mask has no boundary (every distance then GCUT__VK_INF, as far_part() writes). */
static void seed_rule(const gcut_video *v, int32_t limit, int32_t reach,
                      gcut__video_gpu_seeds *rule) {
    const int64_t w = v->width, h = v->height;
    const int32_t widest = v->params.check_colour ? reach : limit;
    rule->limit = limit;
    rule->reach = reach;
    rule->check = v->params.check_colour != 0;
    if (v->boundary == 0) {
        rule->box[0] = rule->box[1] = rule->box[2] = rule->box[3] = 0;
        rule->max_rows = 0;
    } else if (widest >= DIST_INF) {
        rule->box[0] = 0, rule->box[1] = w, rule->box[2] = 0, rule->box[3] = h;
        rule->max_rows = h;
    } else {
        const int64_t reach_rows = (widest + CHAMFER_AXIS - 1) / CHAMFER_AXIS,
                      halo = reach_rows + 1;
        rule->box[0] = v->box[0] - halo > 0 ? v->box[0] - halo : 0;
        rule->box[1] = v->box[1] + 1 + halo < w ? v->box[1] + 1 + halo : w;
        rule->box[2] = v->box[2] - halo > 0 ? v->box[2] - halo : 0;
        rule->box[3] = v->box[3] + 1 + halo < h ? v->box[3] + 1 + halo : h;
        rule->max_rows = reach_rows;
    }
}

/* gcut__video_emulate_gpu(): v->dist by the GPU's rule on the host (row distances, then the
 * column scan), so that the CPU tests check the rule the kernels run against the two-pass
 * chamfer map's seeds. */
typedef struct rows_job {
    gcut_video *v;
    gcut__video_gpu_seeds rule;
    bool scan;
} rows_job;

static void rows_part(void *arg, int part, int parts) {
    const rows_job *job = arg;
    gcut_video *v = job->v;
    const int64_t w = v->width, h = v->height, *b = job->rule.box;
    int64_t lo, hi;
    part_range(h, part, parts, &lo, &hi);
    for (int64_t y = lo; y < hi; y++) {
        const bool in = y >= b[2] && y < b[3] && b[1] > b[0];
        if (!job->scan) {
            if (in)
                gcut__vk_row_distance(v->mask, w, h, y, b[0], b[1], v->row_dist + y * w);
            continue;
        }
        for (int64_t x = 0; x < w; x++)
            v->dist[y * w + x] =
                in && x >= b[0] && x < b[1]
                    ? gcut__vk_column_scan(v->row_dist, w, b[2], b[3], x, y, job->rule.max_rows)
                    : GCUT__VK_INF;
    }
}

static void rows_distance(gcut_video *v, int32_t limit, int32_t reach) {
    rows_job job;
    job.v = v;
    seed_rule(v, limit, reach, &job.rule);
    job.scan = false;
    gcut__pool_run(v->pool, rows_part, &job);
    job.scan = true;
    gcut__pool_run(v->pool, rows_part, &job);
}

gcut_status gcut__video_emulate_gpu(gcut_video *v, int on) {
    if (on && v->row_dist == NULL &&
        (v->row_dist = gcut__malloc((size_t)v->n * sizeof(int32_t), "video row distances")) == NULL)
        return GCUT_ERR_NOMEM;
    if (!on) {
        gcut__free(v->row_dist);
        v->row_dist = NULL;
    }
    return GCUT_OK;
}

/* The previous frame's cell counts under its mask (v->prev_cell, v->mask) into v->fresh (and
 * the pixels whose label changed between the last two masks into v->changed), with per-part
 * integer counts over chunks that the parts take in turn; with distance, part 0 first
 * computes the boundary distance of v->mask (it reads only the mask) while the others count. */
typedef struct count_job {
    gcut_video *v;
    int64_t cells;
    _Atomic int64_t next; /* next chunk to take */
    int64_t changed[64], boundary[64];
    int64_t box[64][4]; /* per part: x min, x max, y min, y max of the boundary pixels */
} count_job;

enum { COUNT_CHUNK = 16384 }; /* pixels a part takes at a time (whole rows) */

static void count_part(void *arg, int part, int parts) {
    (void)parts;
    count_job *job = arg;
    gcut_video *v = job->v;
    const int64_t n = v->n, cells = job->cells, w = v->width;
    const uint8_t *mask = v->mask, *prev = v->prev_mask;
    const int32_t *cell = v->prev_cell;
    uint32_t *fg = v->counts + (size_t)part * 2 * (size_t)cells, *bg = fg + cells;
    memset(fg, 0, 2 * (size_t)cells * sizeof(uint32_t));
    int64_t changed = 0, boundary = 0;
    const int64_t h = n / w, chunk_rows = (COUNT_CHUNK + w - 1) / w;
    int64_t *box = job->box[part];
    box[0] = w, box[1] = -1, box[2] = h, box[3] = -1;
    for (;;) {
        const int64_t y0 = atomic_fetch_add(&job->next, chunk_rows);
        if (y0 >= h)
            break;
        const int64_t y1 = y0 + chunk_rows < h ? y0 + chunk_rows : h;
        for (int64_t y = y0; y < y1; y++) {
            const uint8_t *m = mask + y * w, *mu = y > 0 ? m - w : m, *md = y + 1 < h ? m + w : m;
            const uint8_t *pm = prev + y * w;
            const int32_t *cl = cell + y * w;
            int64_t first = w, last = -1;
            for (int64_t x = 0; x < w; x++) {
                const uint8_t c = m[x];
                (c ? fg : bg)[cl[x]]++;
                changed += c != pm[x];
                /* Boundary pixels: a 4-neighbour of the other label (the distance map's 0s). */
                const uint8_t l = x > 0 ? m[x - 1] : c, r = x + 1 < w ? m[x + 1] : c;
                const int e = (l != c) | (r != c) | (mu[x] != c) | (md[x] != c);
                boundary += e;
                if (e) {
                    first = x < first ? x : first;
                    last = x;
                }
            }
            if (last >= 0) {
                box[0] = first < box[0] ? first : box[0];
                box[1] = last > box[1] ? last : box[1];
                box[2] = y < box[2] ? y : box[2];
                box[3] = y > box[3] ? y : box[3];
            }
        }
    }
    job->changed[part] = changed;
    job->boundary[part] = boundary;
}

static void sum_counts_part(void *arg, int part, int parts) {
    count_job *job = arg;
    gcut_video *v = job->v;
    const int64_t cells = job->cells;
    int64_t lo, hi;
    part_range(2 * cells, part, parts, &lo, &hi);
    for (int64_t c = lo; c < hi; c++) {
        uint64_t sum = 0;
        for (int k = 0; k < parts; k++)
            sum += v->counts[(size_t)k * 2 * (size_t)cells + (size_t)c];
        v->fresh[c] = (double)sum;
    }
}

static void count_cells(gcut_video *v) {
    count_job job;
    memset(&job, 0, sizeof job);
    job.v = v;
    job.cells = (int64_t)v->params.seg.histogram_bins * v->params.seg.histogram_bins *
                v->params.seg.histogram_bins;
    atomic_init(&job.next, 0);
    gcut__pool_run(v->pool, count_part, &job);
    gcut__pool_run(v->pool, sum_counts_part, &job);
    v->changed = 0;
    v->boundary = 0;
    v->box[0] = v->width, v->box[1] = -1, v->box[2] = v->height, v->box[3] = -1;
    for (int k = 0; k < v->threads; k++) {
        v->changed += job.changed[k];
        v->boundary += job.boundary[k];
        const int64_t *b = job.box[k];
        v->box[0] = b[0] < v->box[0] ? b[0] : v->box[0];
        v->box[1] = b[1] > v->box[1] ? b[1] : v->box[1];
        v->box[2] = b[2] < v->box[2] ? b[2] : v->box[2];
        v->box[3] = b[3] > v->box[3] ? b[3] : v->box[3];
    }
}

/* The colour model and its costs, both classes at once, split over the parts: the previous
 * frame's counts (v->fresh) mixed into the running model by the forgetting factor, then
 * -ln P(cell | class) as gcut_segment's histogram model computes it (src/seg/seg_model.c:
 * colours summed into bins^3 cells, blurred by [1 2 1]/4 along each axis, a prior of 1% of the
 * mean cell mass added), kept at cell resolution: one logarithm per cell. Every step is
 * element by element (the two totals are summed in one thread), so the costs are the same for
 * any number of parts. */
typedef struct model_job {
    gcut_video *v;
    int64_t cells;
    int bins;
    double keep[2], add[2]; /* mixing weights per class */
    double prior[2], norm[2];
    int64_t stride; /* blur axis */
    double *from, *to;
} model_job;

static void mix_part(void *arg, int part, int parts) {
    const model_job *job = arg;
    gcut_video *v = job->v;
    const int64_t cells = job->cells;
    int64_t lo, hi;
    part_range(2 * cells, part, parts, &lo, &hi);
    for (int64_t c = lo; c < hi; c++) {
        const int side = c >= cells;
        v->model[c] = job->keep[side] * v->model[c] + job->add[side] * v->fresh[c];
    }
}

static void blur_part(void *arg, int part, int parts) {
    const model_job *job = arg;
    const int64_t cells = job->cells, stride = job->stride, bins = job->bins;
    const int64_t lines = 2 * cells / bins; /* lines along the axis, both classes */
    const double *h = job->from;
    double *t = job->to;
    int64_t lo, hi;
    part_range(lines, part, parts, &lo, &hi);
    for (int64_t line = lo; line < hi; line++) {
        const int64_t o = line / stride, in = line % stride;
        const int64_t base = o * stride * bins + in;
        for (int64_t k = 0; k < bins; k++) {
            const int64_t cell = base + k * stride;
            const double l = k > 0 ? h[cell - stride] : h[cell];
            const double r = k < bins - 1 ? h[cell + stride] : h[cell];
            t[cell] = (2 * h[cell] + l + r) / 4;
        }
    }
}

static void cost_part(void *arg, int part, int parts) {
    const model_job *job = arg;
    const int64_t cells = job->cells;
    int64_t lo, hi;
    part_range(2 * cells, part, parts, &lo, &hi);
    for (int64_t c = lo; c < hi; c++) {
        const int side = c >= cells;
        job->to[c] = -log((job->from[c] + job->prior[side]) / job->norm[side]);
    }
}

/* The model from the previous frame's counts (v->fresh, count_cells()), the first time taken as
 * they are, and its costs per cell into cost (2 cells: foreground, background). */
static void update_model(gcut_video *v, bool first, double *cost) {
    model_job job;
    memset(&job, 0, sizeof job);
    job.v = v;
    job.bins = v->params.seg.histogram_bins;
    const int64_t cells = (int64_t)job.bins * job.bins * job.bins;
    job.cells = cells;
    double count_fg_d = 0;
    for (int64_t c = 0; c < cells; c++)
        count_fg_d += v->fresh[c];
    const int64_t count[2] = {(int64_t)count_fg_d, v->n - (int64_t)count_fg_d};
    const double keep = first ? 0.0 : v->params.forget;
    for (int side = 0; side < 2; side++) {
        /* A class absent from the previous mask keeps its old model. */
        job.add[side] = count[side] > 0 ? (1.0 - keep) / (double)count[side] : 0.0;
        job.keep[side] = count[side] > 0 ? keep : 1.0;
    }
    gcut__pool_run(v->pool, mix_part, &job);
    for (int side = 0; side < 2; side++) {
        double total = 0;
        for (int64_t c = 0; c < cells; c++)
            total += v->model[side * cells + c];
        /* The blur keeps the total mass. */
        job.prior[side] = 0.01 * total / (double)cells + 1e-9;
        job.norm[side] = total + job.prior[side] * (double)cells;
    }
    /* Blur along each axis: cells in C order (r, g, b), stride of the axis. */
    const double *from = v->model;
    double *bufs[2] = {v->cells, v->cells_tmp};
    job.stride = 1;
    for (int axis = 0; axis < 3; axis++, job.stride *= job.bins) {
        job.from = (double *)from;
        job.to = bufs[axis & 1];
        gcut__pool_run(v->pool, blur_part, &job);
        from = job.to;
    }
    job.from = (double *)from;
    job.to = cost;
    gcut__pool_run(v->pool, cost_part, &job);
}

/* As gcut__seg_tables_fill() (src/seg/seg_tables.c) for regional costs that are constant over
 * each histogram cell: the same reduction (the smaller cost subtracted, the rest clamped at
 * GCUT__SEG_UNARY_MAX_NATS), scale rule, rounding and K, computed once per cell (v->cell_cap)
 * and spread over the 2^18 colours through the cell of each; the pairwise rows are refilled
 * only when sigma or the scale change. */
static double reduce_nats(double c, double m) {
    const double r = isfinite(c) ? c - m : GCUT__SEG_UNARY_MAX_NATS;
    return r > GCUT__SEG_UNARY_MAX_NATS ? GCUT__SEG_UNARY_MAX_NATS : r;
}

static int32_t quantise(double scale, double energy) {
    return (int32_t)floor(scale * energy + 0.5);
}

typedef struct expand_job {
    gcut_video *v;
    int64_t cells;
} expand_job;

/* The unary tables of every quantised colour from its cell's capacities. */
static void expand_part(void *arg, int part, int parts) {
    const expand_job *job = arg;
    gcut__seg_tables *t = job->v->tables;
    const int32_t *lut = job->v->cell_lut, *src = job->v->cell_cap,
                  *snk = job->v->cell_cap + job->cells;
    int64_t lo, hi;
    part_range(t->num_colors, part, parts, &lo, &hi);
    for (int64_t c = lo; c < hi; c++) {
        t->unary_source[c] = src[lut[c]];
        t->unary_sink[c] = snk[lut[c]];
    }
}

/* The pairwise rows [class][squared difference], as gcut__seg_tables_fill() computes them
 * (quantise(scale, lambda / sqrt(class + 1) * exp(-d2 / (2 sigma^2))), d2 = 0 exactly the
 * weight), split over the parts; entries from end[class] on are zero. */
typedef struct pair_job {
    gcut__seg_tables *t;
    double lambda, scale, inv_two_sigma2;
    int32_t end[GCUT__SEG_CLASSES];
} pair_job;

static void pair_part(void *arg, int part, int parts) {
    const pair_job *job = arg;
    gcut__seg_tables *t = job->t;
    const int64_t len = (int64_t)t->max_sqdiff + 1;
    for (int k = 0; k < t->num_classes; k++) {
        const double weight = job->lambda / sqrt((double)(k + 1));
        int32_t *row = t->pairwise[k];
        int64_t lo, hi;
        part_range(len, part, parts, &lo, &hi);
        for (int64_t d2 = lo; d2 < hi; d2++)
            row[d2] =
                d2 >= job->end[k]
                    ? 0
                    : quantise(job->scale,
                               d2 == 0 ? weight : weight * exp(-(double)d2 * job->inv_two_sigma2));
    }
}

static gcut_status fill_tables(gcut_video *v, double *cost, double sigma) {
    gcut__seg_tables *t = v->tables;
    const double lambda = v->params.seg.lambda;
    if (!(sigma > 0.0) || !isfinite(sigma))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video: sigma %g must be > 0", sigma);
    const int bins = v->params.seg.histogram_bins;
    const int64_t cells = (int64_t)bins * bins * bins;
    double *fgc = cost, *bgc = cost + cells;
    double unary_max = 0.0;
    for (int64_t c = 0; c < cells; c++) {
        double f = fgc[c], b = bgc[c];
        if (!isfinite(f) && !isfinite(b))
            f = b = 0.0;
        const double m = f < b ? f : b;
        fgc[c] = reduce_nats(f, m);
        bgc[c] = reduce_nats(b, m);
        if (fgc[c] > unary_max)
            unary_max = fgc[c];
        if (bgc[c] > unary_max)
            unary_max = bgc[c];
    }
    double largest = unary_max > lambda ? unary_max : lambda;
    if (largest <= 0.0)
        largest = 1.0;
    double scale = v->params.seg.scale;
    if (!(scale > 0.0)) {
        scale = GCUT__SEG_CAP_BOUND / largest;
    } else if (scale * largest > GCUT__SEG_CAP_BOUND) {
        return gcut__fail(GCUT_ERR_OVERFLOW,
                          "video: scale %g times the largest energy term %g exceeds the capacity "
                          "bound %d (use a scale <= %g, or 0 to choose one)",
                          scale, largest, GCUT__SEG_CAP_BOUND, GCUT__SEG_CAP_BOUND / largest);
    }
    int32_t *src = v->cell_cap, *snk = v->cell_cap + cells;
    for (int64_t c = 0; c < cells; c++) {
        src[c] = quantise(scale, bgc[c]); /* cut when the pixel goes to background */
        snk[c] = quantise(scale, fgc[c]); /* cut when it stays foreground */
    }
    /* (The unary tables of every colour are spread from the cells only where a whole frame's
     * grid is filled: expand_tables(). The band graph reads the cells directly.) */
    if (sigma != v->pair_sigma || scale != v->pair_scale || lambda != t->lambda) {
        pair_job pj = {t, lambda, scale, 1.0 / (2.0 * sigma * sigma), {0, 0, 0}};
        for (int k = 0; k < t->num_classes; k++) {
            /* quantise() is 0 from where weight * scale * exp(-d2 / (2 sigma^2)) < 1/2: past
             * this bound (2 entries of margin for rounding), as gcut__seg_tables_fill's early
             * stop leaves them. */
            const double weight = lambda / sqrt((double)(k + 1));
            const double top = weight * scale * 2.0;
            const double bound = top > 1.0 ? log(top) / pj.inv_two_sigma2 + 2.0 : 0.0;
            pj.end[k] = bound >= (double)t->max_sqdiff ? t->max_sqdiff + 1 : (int32_t)bound + 1;
        }
        gcut__pool_run(v->pool, pair_part, &pj);
        v->pair_sigma = sigma;
        v->pair_scale = scale;
    }
    t->hard = 1 + v->connectivity * t->pairwise[0][0];
    t->scale = scale;
    t->lambda = lambda;
    t->sigma = sigma;
    t->unary_max = unary_max;
    return GCUT_OK;
}

/* gcut__seg_estimate_sigma()'s value (RMS colour difference of axis neighbours, at least 1)
 * with integer sums per part: the same number for any thread count. */
typedef struct sigma_job {
    const gcut_video *v;
    int64_t sum[64];
} sigma_job;

static void sigma_part(void *arg, int part, int parts) {
    sigma_job *job = arg;
    const int64_t w = job->v->width, h = job->v->height;
    const uint8_t *px = job->v->work;
    int64_t lo, hi, sum = 0;
    part_range(h, part, parts, &lo, &hi);
    for (int64_t y = lo; y < hi; y++) {
        const uint8_t *row = px + y * w * 3;
        for (int64_t x = 0; x + 1 < w; x++)
            sum += gcut__seg_sqdiff(row + x * 3, row + (x + 1) * 3, 3);
        if (y + 1 < h)
            for (int64_t x = 0; x < w; x++)
                sum += gcut__seg_sqdiff(row + x * 3, row + (x + w) * 3, 3);
    }
    job->sum[part] = sum;
}

static double sigma_of_sum(const gcut_video *v, int64_t sum) {
    const int64_t w = v->width, h = v->height;
    const int64_t pairs = (w - 1) * h + w * (h - 1);
    const double sigma = pairs > 0 ? sqrt((double)sum / (double)pairs) : 0.0;
    return sigma < 1.0 ? 1.0 : sigma;
}

static double frame_sigma(gcut_video *v) {
    sigma_job job;
    job.v = v;
    gcut__pool_run(v->pool, sigma_part, &job);
    int64_t sum = 0;
    for (int k = 0; k < v->threads; k++)
        sum += job.sum[k];
    return sigma_of_sum(v, sum);
}

/* The band graph's nodes [lo, hi) of part of parts: terminal capacities (each arc to a fixed
 * neighbour folded in), and with write the arcs between band pixels at their place in the
 * edge arrays (from edge_at[part]); without, only how many there are. */
typedef struct band_job {
    gcut_video *v;
    int64_t nb;
    bool write;
    int64_t edges[64], fixed[64]; /* per part: arcs (then their first slot), fixed flow */
} band_job;

static void band_part(void *arg, int part, int parts) {
    band_job *job = arg;
    gcut_video *v = job->v;
    gcut_graph *g = v->band;
    const gcut__seg_tables *t = v->tables;
    const gcut_grid *grid = v->grid;
    const int64_t w = v->width, h = v->height;
    const int64_t bins = v->params.seg.histogram_bins;
    const int32_t *cell_src = v->cell_cap, *cell_snk = v->cell_cap + bins * bins * bins;
    int64_t lo, hi;
    part_range(job->nb, part, parts, &lo, &hi);
    if (!job->write) { /* node ids, and the arcs each part will write */
        int64_t count = 0;
        for (int64_t k = lo; k < hi; k++) {
            const int64_t i = v->band_nodes[k], x = i % w, y = i / w;
            v->node_of[i] = (int32_t)k;
            for (int d = 0; d < grid->num_dirs; d += 2) {
                const int64_t xn = x + grid->offset[d][2], yn = y + grid->offset[d][1];
                count += xn >= 0 && xn < w && yn >= 0 && yn < h &&
                         v->seeds[yn * w + xn] == GCUT_SEED_UNKNOWN;
            }
        }
        job->edges[part] = count;
        return;
    }
    int64_t e = job->edges[part], fixed_flow = 0;
    for (int64_t k = lo; k < hi; k++) {
        const int64_t i = v->band_nodes[k], x = i % w, y = i / w;
        const uint8_t *p = v->work + i * 3;
        const int32_t c = v->cell[i]; /* the unary tables' entry of its colour, by its cell */
        int64_t src = cell_src[c], snk = cell_snk[c];
        for (int d = 0; d < grid->num_dirs; d++) {
            const int64_t xn = x + grid->offset[d][2], yn = y + grid->offset[d][1];
            if (xn < 0 || xn >= w || yn < 0 || yn >= h)
                continue;
            const int64_t j = yn * w + xn;
            const int32_t cap = t->pairwise[gcut__seg_offset_class(grid->offset[d])]
                                           [gcut__seg_sqdiff(p, v->work + j * 3, 3)];
            const uint8_t sj = v->seeds[j];
            if (sj == GCUT_SEED_UNKNOWN) {
                if ((d & 1) == 0) { /* each pair once, from its even direction */
                    if (e < g->edge_room) {
                        if (g->ids32) {
                            g->edge_u32[e] = (uint32_t)k;
                            g->edge_v32[e] = (uint32_t)v->node_of[j];
                        } else {
                            g->edge_u64[e] = k;
                            g->edge_v64[e] = v->node_of[j];
                        }
                        g->edge_cap[e] = cap;
                        g->edge_rev[e] = cap;
                    }
                    e++;
                }
            } else if (sj == GCUT_SEED_FOREGROUND) {
                src += cap;
            } else {
                snk += cap;
            }
        }
        /* Keep terminal capacities small: the common part is flow that always passes. */
        const int64_t common = src < snk ? src : snk;
        fixed_flow += common;
        g->tw_source[k] = src - common;
        g->tw_sink[k] = snk - common;
    }
    job->edges[part] = e - job->edges[part];
    job->fixed[part] = fixed_flow;
}

/* Solve the band only: a graph over the band's pixels (node k is band pixel k in scan order),
 * each arc to a fixed neighbour folded into the band pixel's terminal capacity: a
 * fixed-foreground neighbour q makes calling p background cost w(q,p) (source side), a
 * fixed-background one makes calling p foreground cost w(p,q). Built in parallel: node ids
 * first, then every part fills its nodes' terminals and writes its arcs from its offset, in
 * the order one pass would add them (the same graph for any thread count); a band with more
 * arcs than the graph has room for is counted first and the room grown once. */
static gcut_status solve_band(gcut_video *v, int64_t nb, int64_t *flow, gcut_stats *stats,
                              double *build_ms) {
    const double t0 = gcut__now_ms();
    gcut_graph *g = v->band;
    gcut__graph_drop_state(g);
    /* Nodes 0..nb-1 are the band's pixels in scan order: the graph's arrays were made for the
     * whole frame, and only the first nb are in use. */
    g->num_nodes = nb;
    g->num_edges = 0;
    g->structure_changed = true;
    g->flow_offset = 0;
    band_job job;
    memset(&job, 0, sizeof job);
    job.v = v;
    job.nb = nb;
    gcut__pool_run(v->pool, band_part, &job); /* node ids and arc counts */
    int64_t total = 0;
    for (int k = 0; k < v->threads; k++) {
        const int64_t c = job.edges[k];
        job.edges[k] = total; /* the part's first arc */
        total += c;
    }
    gcut_status st = GCUT_OK;
    if (total > g->edge_room) {
        /* Grow the room once (as gcut_graph_add_edge() does), kept for later frames. */
        g->num_edges = g->edge_room;
        while (st == GCUT_OK && g->num_edges < total)
            st = gcut_graph_add_edge(g, 0, 0, 0, 0);
        g->num_edges = 0;
    }
    if (st == GCUT_OK) {
        job.write = true;
        gcut__pool_run(v->pool, band_part, &job);
        g->num_edges = total;
    }
    int64_t fixed_flow = 0;
    for (int k = 0; k < v->threads; k++)
        fixed_flow += job.fixed[k];
    gcut__graph_clear_changes(g);
    *build_ms = gcut__now_ms() - t0;
    if (st != GCUT_OK)
        return st;
    gcut_options o = v->options;
    o.warm = 0;
    /* The band graph is a general graph: solvers that take only grids cannot run it. */
    if (o.solver != NULL && strcmp(o.solver, "auto") != 0) {
        gcut_solver_info info;
        if (gcut_solver_find(o.solver, &info) == GCUT_OK && !(info.flags & GCUT_TAKES_GRAPH))
            o.solver = "bk";
    }
    int64_t value = 0;
    st = gcut_graph_solve(g, &o, &value, v->labels, stats);
    if (st == GCUT_OK && v->params.verify)
        st = gcut_graph_verify(g, v->labels, value, NULL);
    *flow = value + fixed_flow;
    return st;
}

/* params.warm: the whole frame as one general graph kept across frames, its capacities changed
 * in place (only those that differ from the last frame's) and re-solved warm by bk (Kohli-Torr:
 * the last frame's search trees and flow, changed nodes marked). Edges are numbered as
 * gcut_grid_to_graph() numbers them: pixels in scan order, even directions in order. */
static gcut_status solve_warm(gcut_video *v, int64_t *flow, gcut_stats *stats) {
    const gcut_grid *grid = v->grid;
    gcut_status st;
    if (v->warm_graph == NULL) {
        if ((st = gcut_grid_to_graph(grid, &v->warm_graph)) != GCUT_OK)
            return st;
    } else {
        gcut_graph *g = v->warm_graph;
        const int32_t *src = grid->terminal[GCUT_SOURCE], *snk = grid->terminal[GCUT_SINK];
        for (int64_t i = 0; i < v->n; i++)
            if ((g->tw_source[i] != src[i] || g->tw_sink[i] != snk[i]) &&
                (st = gcut_graph_set_tweights(g, i, src[i], snk[i])) != GCUT_OK)
                return st;
        int64_t e = 0;
        const int64_t w = v->width, h = v->height;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                const int64_t i = y * w + x;
                for (int d = 0; d < grid->num_dirs; d += 2) {
                    const int64_t yn = y + grid->offset[d][1], xn = x + grid->offset[d][2];
                    if (yn < 0 || yn >= h || xn < 0 || xn >= w)
                        continue;
                    const int32_t a = grid->cap[d][i], b = grid->cap[d + 1][i + grid->step[d]];
                    if ((g->edge_cap[e] != a || g->edge_rev[e] != b) &&
                        (st = gcut_graph_set_edge(g, e, a, b)) != GCUT_OK)
                        return st;
                    e++;
                }
            }
    }
    gcut_options o = v->options;
    o.warm = 1;
    o.solver = "bk";
    st = gcut_graph_solve(v->warm_graph, &o, flow, v->labels, stats);
    if (st == GCUT_OK && v->params.verify)
        st = gcut_graph_verify(v->warm_graph, v->labels, *flow, NULL);
    return st;
}

/* Segment v->work with v->seeds on the whole frame (grid): on the GPU path the capacities are
 * built on the device from the same tables (gcut__seg_fill_grid()'s, bit for bit) and solved
 * by the video's cuda-grid context; --verify then fills the host grid too and checks the
 * certificate there. */
static void expand_tables(gcut_video *v) {
    const int64_t bins = v->params.seg.histogram_bins;
    expand_job job = {v, bins * bins * bins};
    gcut__pool_run(v->pool, expand_part, &job);
}

static gcut_status solve_grid(gcut_video *v, int32_t limit, int32_t reach, int64_t *flow,
                              gcut_stats *stats, double *build_ms) {
    if (v->gpu != NULL) {
        /* Distances, seeds and capacities on the device from the per-cell capacities. */
        gcut__video_gpu_seeds rule;
        seed_rule(v, limit, reach, &rule);
        gcut__video_gpu_report gr;
        gcut_status st =
            gcut__video_gpu_solve(v->gpu, v->cell_cap, v->tables, &rule, v->labels,
                                  v->params.verify ? v->seeds : NULL, flow, stats, &gr);
        if (st != GCUT_OK)
            return st;
        *build_ms = gr.upload_ms + gr.build_ms;
        stats->build_ms = 0;
        v->last_warm = gr.warm;
        if (v->params.verify) {
            /* The host's grid from the seeds the device used and the host's tables. */
            expand_tables(v);
            gcut__seg_fill_grid(v->work, v->seeds, v->tables, v->grid);
            st = gcut_grid_verify(v->grid, v->labels, *flow, NULL);
        }
        if (st == GCUT_OK && v->params.verify >= 2) {
            /* An independent solve of the host's copy of the same grid. */
            gcut_options o = v->options;
            o.solver = "bk";
            int64_t bk_flow = 0;
            if ((st = gcut_grid_solve(v->grid, &o, &bk_flow, NULL, NULL)) == GCUT_OK &&
                bk_flow != *flow)
                st = gcut__fail(GCUT_ERR_VERIFY,
                                "video: frame %" PRId64 ": cuda-grid's flow %" PRId64
                                " differs from bk's %" PRId64 " on the same grid",
                                v->frames, *flow, bk_flow);
        }
        return st;
    }
    const double t_expand = gcut__now_ms();
    expand_tables(v);
    const double expand_ms = gcut__now_ms() - t_expand;
    const double t0 = gcut__now_ms();
    gcut__seg_fill_grid(v->work, v->seeds, v->tables, v->grid);
    *build_ms = expand_ms + gcut__now_ms() - t0;
    if (v->params.warm)
        return solve_warm(v, flow, stats);
    gcut_status st = gcut_grid_solve(v->grid, &v->options, flow, v->labels, stats);
    if (st == GCUT_OK && v->params.verify)
        st = gcut_grid_verify(v->grid, v->labels, *flow, NULL);
    return st;
}

/* First frame from seeds: gcut_segment's energy (models learnt from the seeds) on the frame. */
static gcut_status first_from_seeds(gcut_video *v, const uint8_t *seeds, gcut_video_report *r) {
    gcut_image img = {v->width, v->height, 1, 3, 8, v->work};
    gcut_seg_params sp = v->params.seg;
    sp.connectivity = v->connectivity;
    gcut_seg_report sr;
    gcut_status st = gcut_segment(&img, seeds, &sp, &v->options, v->mask, &sr);
    if (st != GCUT_OK)
        return st;
    r->model_ms = sr.model_ms;
    r->build_ms = sr.build_ms;
    r->solve_ms = sr.solve_ms;
    r->flow = sr.stats.flow;
    r->graph_nodes = v->n;
    snprintf(r->solver, sizeof r->solver, "%s", sr.stats.solver);
    return GCUT_OK;
}

/* Hard seeds beyond the band (and, with check_colour, not where the colour now favours the
 * other label within reach), unknown inside; with list, the unknown pixels into
 * v->band_nodes in scan order (per-part counts, then each part writes from its offset).
 * @return the number of unknown pixels. */
typedef struct seeds_job {
    gcut_video *v;
    int32_t limit, reach;
    int64_t cells;
} seeds_job;

static void seeds_part(void *arg, int part, int parts) {
    const seeds_job *job = arg;
    gcut_video *v = job->v;
    const bool check = v->params.check_colour != 0;
    const int32_t *src = v->cell_cap, *snk = v->cell_cap + job->cells;
    const int32_t *dist = v->dist, *cell = v->cell;
    const uint8_t *mask = v->mask;
    uint8_t *seeds = v->seeds;
    const int32_t limit = job->limit, reach = job->reach;
    int64_t lo, hi, c = 0;
    part_range(v->n, part, parts, &lo, &hi);
    for (int64_t i = lo; i < hi; i++) {
        /* The cell's capacities are read only where the rule compares them (as before the rule
         * was shared with the GPU: no pass over every pixel's cell). */
        const int32_t d = dist[i];
        int32_t cs = 0, ck = 0;
        if (check && d > limit && d <= reach) {
            const int32_t q = cell[i];
            cs = src[q];
            ck = snk[q];
        }
        seeds[i] = gcut__vk_seed(d, limit, reach, check, mask[i], cs, ck);
        c += seeds[i] == GCUT_SEED_UNKNOWN;
    }
    v->chunk_count[part] = c;
}

static void list_part(void *arg, int part, int parts) {
    const seeds_job *job = arg;
    gcut_video *v = job->v;
    int64_t lo, hi, k = v->chunk_count[part];
    part_range(v->n, part, parts, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
        if (v->seeds[i] == GCUT_SEED_UNKNOWN)
            v->band_nodes[k++] = i;
}

static int64_t make_seeds(gcut_video *v, int32_t limit, int32_t reach, bool list) {
    seeds_job job = {v, limit, reach,
                     (int64_t)v->params.seg.histogram_bins * v->params.seg.histogram_bins *
                         v->params.seg.histogram_bins};
    gcut__pool_run(v->pool, seeds_part, &job);
    int64_t total = 0;
    for (int k = 0; k < v->threads; k++) {
        const int64_t c = v->chunk_count[k];
        v->chunk_count[k] = total;
        total += c;
    }
    if (list)
        gcut__pool_run(v->pool, list_part, &job);
    return total;
}

/* The new mask from the solve's labels (band pixels) and the seeds (the rest), and its
 * foreground count. */
typedef struct mask_job {
    gcut_video *v;
    bool band;
    int64_t fg[64];
} mask_job;

static void mask_part(void *arg, int part, int parts) {
    mask_job *job = arg;
    gcut_video *v = job->v;
    int64_t lo, hi, fg = 0;
    part_range(v->n, part, parts, &lo, &hi);
    uint8_t *mask = v->mask;
    const uint8_t *seeds = v->seeds, *labels = v->labels;
    if (job->band)
        for (int64_t i = lo; i < hi; i++)
            mask[i] = seeds[i] == GCUT_SEED_FOREGROUND;
    else
        for (int64_t i = lo; i < hi; i++)
            mask[i] = labels[i] == GCUT_SOURCE;
    for (int64_t i = lo; i < hi; i++)
        fg += mask[i];
    job->fg[part] = fg;
}

gcut_status gcut_video_push_frame(gcut_video *v, const gcut_image *frame, const uint8_t *init,
                                  gcut_video_init init_kind, gcut_video_report *report) {
    if (v == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_push_frame: video is NULL");
    gcut_video_report local;
    gcut_video_report *r = report != NULL ? report : &local;
    memset(r, 0, sizeof *r);
    r->frame = v->frames;
    if (v->frames == 0 && init == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "video: the first frame needs an initial mask or seeds");
    if (init != NULL && init_kind != GCUT_VIDEO_INIT_MASK && init_kind != GCUT_VIDEO_INIT_SEEDS)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video: unknown init kind %d", (int)init_kind);
    /* The previous frame's pixels and cells are kept for its colour model. */
    uint8_t *swap = v->prev_work;
    int32_t *swap_cell = v->prev_cell;
    v->prev_work = v->work;
    v->work = swap;
    v->prev_cell = v->cell;
    v->cell = swap_cell;
    gcut_status st = load_frame(v, frame, v->gpu == NULL || init != NULL);
    if (st != GCUT_OK) {
        v->work = v->prev_work;
        v->prev_work = swap;
        v->cell = v->prev_cell;
        v->prev_cell = swap_cell;
        return st;
    }
    const int64_t n = v->n;
    int64_t fg = -1; /* foreground pixels of the new mask, once known */
    if (init != NULL) {
        /* A restart: the given mask (or the seeded segmentation) is this frame's result, and
         * the colour model starts again from it. */
        memcpy(v->prev_mask, v->mask, (size_t)n);
        if (init_kind == GCUT_VIDEO_INIT_MASK) {
            for (int64_t i = 0; i < n; i++)
                v->mask[i] = init[i] != 0;
            snprintf(r->solver, sizeof r->solver, "given");
        } else if ((st = first_from_seeds(v, init, r)) != GCUT_OK) {
            return st;
        }
        const double t0 = gcut__now_ms();
        /* This frame is the model's source: its cells stand in for the previous frame's. */
        memcpy(v->prev_work, v->work, (size_t)n * 3);
        memcpy(v->prev_cell, v->cell, (size_t)n * sizeof(int32_t));
        count_cells(v);
        update_model(v, true, v->fresh);
        /* The GPU path: this frame and its mask are the next frame's previous ones. */
        if (v->gpu != NULL &&
            ((st = gcut__video_gpu_put_frame(v->gpu, v->work)) != GCUT_OK ||
             (st = gcut__video_gpu_put_masks(v->gpu, v->mask, v->prev_mask)) != GCUT_OK))
            return st;
        r->model_ms += gcut__now_ms() - t0;
        v->motion = -1.0;
    } else {
        const double t0 = gcut__now_ms();
        /* Model from the previous frame under its mask, for this frame's colours: counted on
         * the device on the GPU path (the frame goes up first), else on the host. */
        int64_t sigma_sum = -1;
        if (v->gpu != NULL) {
            gcut__video_gpu_stats gs;
            if ((st = gcut__video_gpu_put_frame(v->gpu, v->work)) != GCUT_OK ||
                (st = gcut__video_gpu_frame_stats(v->gpu, &gs)) != GCUT_OK)
                return st;
            const int64_t bins = v->params.seg.histogram_bins, cells = bins * bins * bins;
            for (int64_t c = 0; c < 2 * cells; c++)
                v->fresh[c] = (double)gs.counts[c];
            v->changed = gs.changed;
            v->boundary = gs.boundary;
            memcpy(v->box, gs.box, sizeof v->box);
            sigma_sum = gs.sigma_sum;
        } else {
            count_cells(v);
        }
        update_model(v, false, v->fresh);
        if (v->frames >= 2 && v->motion >= 0.0)
            v->motion = v->boundary > 0 ? (double)v->changed / ((double)v->boundary / 2.0) : 0.0;
        const gcut_video_params *p = &v->params;
        double band = v->motion < 0.0 ? 0.5 * (p->band_min + p->band_max)
                                      : p->band_min + p->band_motion * v->motion;
        band = band < p->band_min ? p->band_min : band > p->band_max ? p->band_max : band;
        r->band = band;
        const double sigma = p->seg.sigma > 0 ? p->seg.sigma
                             : sigma_sum >= 0 ? sigma_of_sum(v, sigma_sum)
                                              : frame_sigma(v);
        if ((st = fill_tables(v, v->fresh, sigma)) != GCUT_OK)
            return st;
        /* Beyond the band a pixel keeps its previous label as a hard seed, unless (check_colour)
         * its colour now favours the other label: then it joins the graph, so that what an
         * occluder uncovers, or a part that grows faster than the band, can come back. */
        const int32_t limit = (int32_t)ceil(band * CHAMFER_AXIS);
        const double reach_px = p->colour_reach > 0 ? p->colour_reach * band : 1e9;
        const int32_t reach = reach_px * CHAMFER_AXIS > (double)DIST_INF
                                  ? DIST_INF
                                  : (int32_t)ceil(reach_px * CHAMFER_AXIS);
        /* The distance map, exact up to the largest threshold the seeds compare, and the seeds
         * (on the GPU path both are computed on the device, in solve_grid()). */
        const int32_t widest = p->check_colour ? reach : limit;
        int64_t nb = 0;
        if (v->gpu == NULL) {
            if (v->row_dist != NULL)
                rows_distance(v, limit, reach);
            else
                boundary_distance(
                    v, widest >= DIST_INF ? -1 : (widest + CHAMFER_AXIS - 1) / CHAMFER_AXIS);
            nb = make_seeds(v, limit, reach, p->restrict_band != 0);
        }
        r->model_ms = gcut__now_ms() - t0;
        gcut_stats stats;
        memset(&stats, 0, sizeof stats);
        int64_t flow = 0;
        const double t1 = gcut__now_ms();
        double build_ms = 0;
        if (p->restrict_band) {
            st = solve_band(v, nb, &flow, &stats, &build_ms);
            r->graph_nodes = nb;
        } else {
            st = solve_grid(v, limit, reach, &flow, &stats, &build_ms);
            r->graph_nodes = n;
        }
        if (st != GCUT_OK)
            return st;
        r->build_ms = build_ms + stats.build_ms;
        r->solve_ms = gcut__now_ms() - t1 - build_ms - stats.build_ms;
        r->flow = flow;
        r->warm = v->gpu != NULL ? v->last_warm : p->warm;
        snprintf(r->solver, sizeof r->solver, "%s", stats.solver);
        /* The last mask becomes the one before; the new one is written whole below. */
        uint8_t *older = v->prev_mask;
        v->prev_mask = v->mask;
        v->mask = older;
        mask_job job;
        job.v = v;
        job.band = p->restrict_band != 0;
        gcut__pool_run(v->pool, mask_part, &job);
        fg = 0;
        for (int k = 0; k < v->threads; k++)
            fg += job.fg[k];
        if (p->restrict_band)
            for (int64_t k = 0; k < nb; k++) {
                const bool in = v->labels[k] == GCUT_SOURCE;
                v->mask[v->band_nodes[k]] = in;
                fg += in; /* band pixels are unknown, not counted by mask_part */
            }
        if (v->motion < 0.0)
            v->motion = 0.0; /* from the next frame on, measured */
    }
    if (fg < 0) {
        fg = 0;
        for (int64_t i = 0; i < n; i++)
            fg += v->mask[i];
    }
    r->foreground_pixels = fg;
    v->frames++;
    return GCUT_OK;
}
