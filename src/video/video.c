/* video.c - online video segmentation, one frame at a time (Garrett & Saito 2009, 3-4: the
 * previous silhouette as the next frame's mask and model; Lattari 2010 ch. 6's reuse of the
 * previous segmentation): colour histograms carried over with a forgetting factor, hard seeds
 * deeper than a motion-sized band, and the cut on the whole frame or on the band alone. */
#include "internal.h"
#include "seg_internal.h"

#include <inttypes.h>
#include <math.h>
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
    int64_t *band_nodes;    /* pixels of the band, in scan order */
    double *model;          /* [0, nc) foreground, [nc, 2nc) background: normalised counts */
    double *fresh;          /* this frame's counts, same layout */
    double *cost;           /* regional costs, same layout */
    uint8_t *present;       /* colours of the current frame: marks ... */
    int32_t *present_list;  /* ... and the list of them */
    int64_t num_present;
    int lut[64];      /* histogram bin of each 6-bit channel level */
    int32_t *node_of; /* band graph node of each band pixel */
    double *cells;    /* histogram cells (bins^3), and a second array for the blur */
    double *cells_tmp;
    double motion; /* mean boundary displacement of the last frame, pixels; < 0 unknown */
};

void gcut_video_free(gcut_video *v) {
    if (v == NULL)
        return;
    gcut__seg_tables_free(v->tables);
    gcut_grid_free(v->grid);
    gcut_graph_free(v->band);
    gcut_graph_free(v->warm_graph);
    gcut__free(v->work);
    gcut__free(v->prev_work);
    gcut__free(v->mask);
    gcut__free(v->prev_mask);
    gcut__free(v->seeds);
    gcut__free(v->labels);
    gcut__free(v->dist);
    gcut__free(v->band_nodes);
    gcut__free(v->model);
    gcut__free(v->fresh);
    gcut__free(v->cost);
    gcut__free(v->present);
    gcut__free(v->present_list);
    gcut__free(v->node_of);
    gcut__free(v->cells);
    gcut__free(v->cells_tmp);
    gcut__free(v);
}

gcut_status gcut_video_create(int64_t width, int64_t height, const gcut_video_params *params,
                              const gcut_options *options, gcut_video **out) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_create: out is NULL");
    *out = NULL;
    if (width < 2 || height < 2 || width > (1 << 16) || height > (1 << 16))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_video_create: frame size %" PRId64 "x%" PRId64
                          " not supported (2 to 65536 per side)",
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
    const size_t n = (size_t)v->n;
    gcut_status st = gcut__seg_tables_alloc(3, conn, &v->tables);
    if (st != GCUT_OK) {
        gcut_video_free(v);
        return st;
    }
    const size_t nc = (size_t)v->tables->num_colors;
    const int64_t shape[2] = {height, width};
    if ((st = gcut_grid_create(2, shape, conn, &v->grid)) != GCUT_OK ||
        (st = gcut_graph_create(v->n, v->n, &v->band)) != GCUT_OK) {
        gcut_video_free(v);
        return st;
    }
    v->work = gcut__malloc(n * 3, "video working frame");
    v->prev_work = gcut__malloc(n * 3, "video previous frame");
    v->mask = gcut__calloc(n, 1, "video mask");
    v->prev_mask = gcut__calloc(n, 1, "video previous mask");
    v->seeds = gcut__calloc(n, 1, "video seeds");
    v->labels = gcut__calloc(n, 1, "video labels");
    v->dist = gcut__malloc(n * sizeof(int32_t), "video boundary distance");
    v->band_nodes = gcut__malloc(n * sizeof(int64_t), "video band");
    const size_t bins = (size_t)p.seg.histogram_bins, cells = bins * bins * bins;
    for (int l = 0; l < 64; l++)
        v->lut[l] = l * p.seg.histogram_bins / 64;
    v->model = gcut__calloc(2 * cells, sizeof(double), "video colour model");
    v->fresh = gcut__calloc(2 * cells, sizeof(double), "video colour counts");
    v->cost = gcut__calloc(2 * nc, sizeof(double), "video regional costs");
    v->present = gcut__calloc(nc, 1, "video colours present");
    v->present_list = gcut__malloc((n < nc ? n : nc) * sizeof(int32_t), "video colour list");
    v->node_of = gcut__malloc(n * sizeof(int32_t), "video band nodes");
    v->cells = gcut__calloc(cells, sizeof(double), "video histogram");
    v->cells_tmp = gcut__calloc(cells, sizeof(double), "video histogram");
    if (v->work == NULL || v->prev_work == NULL || v->mask == NULL || v->prev_mask == NULL ||
        v->seeds == NULL || v->labels == NULL || v->dist == NULL || v->band_nodes == NULL ||
        v->model == NULL || v->fresh == NULL || v->cost == NULL || v->present == NULL ||
        v->cells == NULL || v->cells_tmp == NULL || v->present_list == NULL || v->node_of == NULL) {
        gcut_video_free(v);
        return GCUT_ERR_NOMEM;
    }
    *out = v;
    return GCUT_OK;
}

int64_t gcut_video_frames(const gcut_video *v) {
    return v == NULL ? 0 : v->frames;
}

gcut_status gcut_video_get_mask(const gcut_video *v, uint8_t *mask) {
    if (v == NULL || mask == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_get_mask: video or mask is NULL");
    if (v->frames == 0)
        return gcut__fail(GCUT_ERR_STATE, "gcut_video_get_mask: no frame segmented yet");
    memcpy(mask, v->mask, (size_t)v->n);
    return GCUT_OK;
}

/* The frame as 8-bit RGB into v->work: gray is replicated, alpha dropped, 16-bit samples give
 * their high byte (a fixed map, so that colours mean the same in every frame). */
static gcut_status load_frame(gcut_video *v, const gcut_image *f) {
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
    const int ch = f->channels;
    const int64_t n = v->n;
    if (f->bit_depth == 8 && ch == 3) {
        memcpy(v->work, f->pixels, (size_t)n * 3);
        return GCUT_OK;
    }
    for (int64_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            const int src = ch >= 3 ? c : 0;
            v->work[i * 3 + c] = f->bit_depth == 8
                                     ? ((const uint8_t *)f->pixels)[i * ch + src]
                                     : (uint8_t)(((const uint16_t *)f->pixels)[i * ch + src] >> 8);
        }
    return GCUT_OK;
}

/* Chamfer (3-4) distance of every pixel to the mask's boundary (pixels with a 4-neighbour of
 * the other label are at 0), in units of a third of a pixel. Two raster passes. */
static void boundary_distance(const uint8_t *mask, int64_t w, int64_t h, int32_t *d) {
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            const int64_t i = y * w + x;
            const uint8_t m = mask[i];
            const bool edge = (x > 0 && mask[i - 1] != m) || (x + 1 < w && mask[i + 1] != m) ||
                              (y > 0 && mask[i - w] != m) || (y + 1 < h && mask[i + w] != m);
            d[i] = edge ? 0 : DIST_INF;
        }
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            const int64_t i = y * w + x;
            int32_t best = d[i];
            if (x > 0 && d[i - 1] + CHAMFER_AXIS < best)
                best = d[i - 1] + CHAMFER_AXIS;
            if (y > 0) {
                if (d[i - w] + CHAMFER_AXIS < best)
                    best = d[i - w] + CHAMFER_AXIS;
                if (x > 0 && d[i - w - 1] + CHAMFER_DIAG < best)
                    best = d[i - w - 1] + CHAMFER_DIAG;
                if (x + 1 < w && d[i - w + 1] + CHAMFER_DIAG < best)
                    best = d[i - w + 1] + CHAMFER_DIAG;
            }
            d[i] = best;
        }
    for (int64_t y = h - 1; y >= 0; y--)
        for (int64_t x = w - 1; x >= 0; x--) {
            const int64_t i = y * w + x;
            int32_t best = d[i];
            if (x + 1 < w && d[i + 1] + CHAMFER_AXIS < best)
                best = d[i + 1] + CHAMFER_AXIS;
            if (y + 1 < h) {
                if (d[i + w] + CHAMFER_AXIS < best)
                    best = d[i + w] + CHAMFER_AXIS;
                if (x + 1 < w && d[i + w + 1] + CHAMFER_DIAG < best)
                    best = d[i + w + 1] + CHAMFER_DIAG;
                if (x > 0 && d[i + w - 1] + CHAMFER_DIAG < best)
                    best = d[i + w - 1] + CHAMFER_DIAG;
            }
            d[i] = best;
        }
}

/* Histogram cell of quantised colour c (6 bits per channel) for bins per channel. */
static inline int64_t cell_of(const gcut_video *v, int64_t c) {
    const int64_t b = v->params.seg.histogram_bins;
    return ((int64_t)v->lut[c >> 12] * b + v->lut[(c >> 6) & 63]) * b + v->lut[c & 63];
}

/* -ln P(colour | class) from a histogram of cell masses, as gcut_segment's histogram model
 * computes it (src/seg/seg_model.c: colours summed into bins^3 cells, blurred by [1 2 1]/4 along
 * each axis, a prior of 1% of the mean cell mass added), but kept at cell resolution from the
 * start, the logarithm taken once per cell and only for the colours the frame has. */
static void histogram_costs(gcut_video *v, const double *mass, double *cost) {
    const int bins = v->params.seg.histogram_bins;
    const int64_t cells = (int64_t)bins * bins * bins;
    double *h = v->cells, *tmp = v->cells_tmp;
    memcpy(h, mass, (size_t)cells * sizeof(double));
    double total = 0;
    for (int64_t cell = 0; cell < cells; cell++)
        total += h[cell];
    /* Blur along each axis: cells in C order (r, g, b), stride of the axis. */
    int64_t stride = 1;
    for (int axis = 0; axis < 3; axis++, stride *= bins) {
        const int64_t outer = cells / (stride * bins);
        for (int64_t o = 0; o < outer; o++)
            for (int64_t in = 0; in < stride; in++) {
                const int64_t base = o * stride * bins + in;
                for (int k = 0; k < bins; k++) {
                    const int64_t cell = base + k * stride;
                    const double lo = k > 0 ? h[cell - stride] : h[cell];
                    const double hi = k < bins - 1 ? h[cell + stride] : h[cell];
                    tmp[cell] = (2 * h[cell] + lo + hi) / 4;
                }
            }
        double *swap = h;
        h = tmp;
        tmp = swap;
    }
    /* The blur keeps the total mass. */
    const double prior = 0.01 * total / (double)cells + 1e-9;
    const double norm = total + prior * (double)cells;
    for (int64_t cell = 0; cell < cells; cell++)
        tmp[cell] = -1.0; /* cost not computed yet */
    for (int64_t k = 0; k < v->num_present; k++) {
        const int64_t c = v->present_list[k], cell = cell_of(v, c);
        if (tmp[cell] < 0)
            tmp[cell] = -log((h[cell] + prior) / norm);
        cost[c] = tmp[cell];
    }
}

/* The colour model from the previous frame (v->prev_work) and its mask (v->mask, not yet
 * replaced): this frame's normalised cell masses mixed into the running model by the
 * forgetting factor (the first time taken as they are), then histogram costs for the colours
 * present in the current frame (v->work). */
static gcut_status update_model(gcut_video *v, bool first) {
    const int64_t n = v->n, nc = v->tables->num_colors;
    const int bins = v->params.seg.histogram_bins;
    const int64_t cells = (int64_t)bins * bins * bins;
    double *fg = v->fresh, *bg = v->fresh + cells;
    memset(v->fresh, 0, (size_t)(2 * cells) * sizeof(double));
    int64_t count_fg = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t cell = cell_of(v, gcut__seg_color_index(v->prev_work + i * 3, 3));
        if (v->mask[i]) {
            fg[cell] += 1.0;
            count_fg++;
        } else {
            bg[cell] += 1.0;
        }
    }
    const int64_t count_bg = n - count_fg;
    const double keep = first ? 0.0 : v->params.forget;
    /* A class absent from the previous mask keeps its old model. */
    const double add_fg = count_fg > 0 ? (1.0 - keep) / (double)count_fg : 0.0;
    const double add_bg = count_bg > 0 ? (1.0 - keep) / (double)count_bg : 0.0;
    const double keep_fg = count_fg > 0 ? keep : 1.0, keep_bg = count_bg > 0 ? keep : 1.0;
    for (int64_t c = 0; c < cells; c++) {
        v->model[c] = keep_fg * v->model[c] + add_fg * fg[c];
        v->model[cells + c] = keep_bg * v->model[cells + c] + add_bg * bg[c];
    }
    /* The colours of this frame, as a list (the last frame's list clears the marks). */
    for (int64_t k = 0; k < v->num_present; k++)
        v->present[v->present_list[k]] = 0;
    v->num_present = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t c = gcut__seg_color_index(v->work + i * 3, 3);
        if (!v->present[c]) {
            v->present[c] = 1;
            v->present_list[v->num_present++] = (int32_t)c;
        }
    }
    for (int side = 0; side < 2; side++)
        histogram_costs(v, v->model + side * cells, v->cost + side * nc);
    return GCUT_OK;
}

/* Mean normal displacement of the boundary between two masks: |symmetric difference| divided
 * by the boundary's length (pixels with a 4-neighbour of the other label). */
static double boundary_motion(const uint8_t *a, const uint8_t *b, const int32_t *dist_b,
                              int64_t n) {
    int64_t changed = 0, boundary = 0;
    for (int64_t i = 0; i < n; i++) {
        changed += a[i] != b[i];
        boundary += dist_b[i] == 0;
    }
    /* Boundary pixels on both sides are counted: half of them make the line's length. */
    return boundary > 0 ? (double)changed / ((double)boundary / 2.0) : 0.0;
}

/* Solve the band only: a graph over the band's pixels (ids are pixel indices; the rest of the
 * graph's nodes stay isolated at zero capacity), each arc to a fixed neighbour folded into the
 * band pixel's terminal capacity: a fixed-foreground neighbour q makes calling p background
 * cost w(q,p) (source side), a fixed-background one makes calling p foreground cost w(p,q). */
static gcut_status solve_band(gcut_video *v, int64_t nb, int64_t *flow, gcut_stats *stats,
                              double *build_ms) {
    const double t0 = gcut__now_ms();
    gcut_graph *g = v->band;
    gcut__graph_drop_state(g);
    /* Nodes 0..nb-1 are the band's pixels in scan order: the graph's arrays were made for the
     * whole frame, and only the first nb are in use. */
    g->num_nodes = nb;
    for (int64_t k = 0; k < nb; k++)
        v->node_of[v->band_nodes[k]] = (int32_t)k;
    g->num_edges = 0;
    g->structure_changed = true;
    g->flow_offset = 0;
    const gcut__seg_tables *t = v->tables;
    const gcut_grid *grid = v->grid;
    const int64_t w = v->width, h = v->height;
    int64_t fixed_flow = 0;
    gcut_status st = GCUT_OK;
    for (int64_t k = 0; k < nb && st == GCUT_OK; k++) {
        const int64_t i = v->band_nodes[k], x = i % w, y = i / w;
        const uint8_t *p = v->work + i * 3;
        const int64_t q = gcut__seg_color_index(p, 3);
        int64_t src = t->unary_source[q], snk = t->unary_sink[q];
        for (int d = 0; d < grid->num_dirs; d++) {
            const int64_t xn = x + grid->offset[d][2], yn = y + grid->offset[d][1];
            if (xn < 0 || xn >= w || yn < 0 || yn >= h)
                continue;
            const int64_t j = yn * w + xn;
            const int32_t cap = t->pairwise[gcut__seg_offset_class(grid->offset[d])]
                                           [gcut__seg_sqdiff(p, v->work + j * 3, 3)];
            const uint8_t sj = v->seeds[j];
            if (sj == GCUT_SEED_UNKNOWN) {
                if ((d & 1) == 0) /* each pair once, from its even direction */
                    st = gcut_graph_add_edge(g, k, v->node_of[j], cap, cap);
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

/* Segment v->work with v->seeds on the whole frame (grid). */
static gcut_status solve_grid(gcut_video *v, int64_t *flow, gcut_stats *stats, double *build_ms) {
    const double t0 = gcut__now_ms();
    gcut__seg_fill_grid(v->work, v->seeds, v->tables, v->grid);
    *build_ms = gcut__now_ms() - t0;
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
    /* The previous frame's pixels are kept for its colour model. */
    uint8_t *swap = v->prev_work;
    v->prev_work = v->work;
    v->work = swap;
    gcut_status st = load_frame(v, frame);
    if (st != GCUT_OK) {
        v->work = v->prev_work;
        v->prev_work = swap;
        return st;
    }
    const int64_t n = v->n;
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
        memcpy(v->prev_work, v->work, (size_t)n * 3);
        if ((st = update_model(v, true)) != GCUT_OK)
            return st;
        r->model_ms += gcut__now_ms() - t0;
        v->motion = -1.0;
    } else {
        const double t0 = gcut__now_ms();
        /* Model from the previous frame under its mask, for this frame's colours. */
        if ((st = update_model(v, false)) != GCUT_OK)
            return st;
        boundary_distance(v->mask, v->width, v->height, v->dist);
        if (v->frames >= 2 && v->motion >= 0.0)
            v->motion = boundary_motion(v->mask, v->prev_mask, v->dist, n);
        const gcut_video_params *p = &v->params;
        double band = v->motion < 0.0 ? 0.5 * (p->band_min + p->band_max)
                                      : p->band_min + p->band_motion * v->motion;
        band = band < p->band_min ? p->band_min : band > p->band_max ? p->band_max : band;
        r->band = band;
        const double sigma = p->seg.sigma > 0
                                 ? p->seg.sigma
                                 : gcut__seg_estimate_sigma(v->work, 3, v->width, v->height, 1);
        if ((st = gcut__seg_tables_fill(v->tables, v->cost, v->cost + v->tables->num_colors,
                                        p->seg.lambda, sigma, p->seg.scale, v->connectivity)) !=
            GCUT_OK)
            return st;
        /* Beyond the band a pixel keeps its previous label as a hard seed, unless (check_colour)
         * its colour now favours the other label: then it joins the graph, so that what an
         * occluder uncovers, or a part that grows faster than the band, can come back. */
        const int32_t limit = (int32_t)ceil(band * CHAMFER_AXIS);
        const double reach_px = p->colour_reach > 0 ? p->colour_reach * band : 1e9;
        const int32_t reach = reach_px * CHAMFER_AXIS > (double)DIST_INF
                                  ? DIST_INF
                                  : (int32_t)ceil(reach_px * CHAMFER_AXIS);
        const int32_t *us = v->tables->unary_source, *ut = v->tables->unary_sink;
        int64_t nb = 0;
        for (int64_t i = 0; i < n; i++) {
            bool unknown = v->dist[i] <= limit;
            if (!unknown && p->check_colour && v->dist[i] <= reach) {
                const int64_t q = gcut__seg_color_index(v->work + i * 3, 3);
                unknown = v->mask[i] ? us[q] < ut[q] : ut[q] < us[q];
            }
            if (unknown) {
                v->seeds[i] = GCUT_SEED_UNKNOWN;
                v->band_nodes[nb++] = i;
            } else {
                v->seeds[i] = v->mask[i] ? GCUT_SEED_FOREGROUND : GCUT_SEED_BACKGROUND;
            }
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
            st = solve_grid(v, &flow, &stats, &build_ms);
            r->graph_nodes = n;
        }
        if (st != GCUT_OK)
            return st;
        r->build_ms = build_ms + stats.build_ms;
        r->solve_ms = gcut__now_ms() - t1 - build_ms - stats.build_ms;
        r->flow = flow;
        snprintf(r->solver, sizeof r->solver, "%s", stats.solver);
        memcpy(v->prev_mask, v->mask, (size_t)n);
        if (p->restrict_band) {
            for (int64_t i = 0; i < n; i++)
                v->mask[i] = v->seeds[i] == GCUT_SEED_FOREGROUND;
            for (int64_t k = 0; k < nb; k++)
                v->mask[v->band_nodes[k]] = v->labels[k] == GCUT_SOURCE;
        } else {
            for (int64_t i = 0; i < n; i++)
                v->mask[i] = v->labels[i] == GCUT_SOURCE;
        }
        if (v->motion < 0.0)
            v->motion = 0.0; /* from the next frame on, measured */
    }
    int64_t fg = 0;
    for (int64_t i = 0; i < n; i++)
        fg += v->mask[i];
    r->foreground_pixels = fg;
    v->frames++;
    return GCUT_OK;
}
