/* grabcut.c - GrabCut (Rother, Kolmogorov & Blake, SIGGRAPH 2004, sec. 3): a box or seeds in,
 * then rounds of "fit the two colour models to the current labels, cut exactly" until the labels
 * stop changing, on the Boykov-Jolly energy of segment.c (Lattari 2010 ch. 3.4); each round
 * re-solves warm from the previous one (Kohli & Torr 2005): bk on the graph of unknown pixels, or
 * a grid-bk context on a box's crop. */
#include "internal.h"
#include "seg_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Assign-and-learn steps of a re-fit (from the previous round's mixture): one, as in Rother et
 * al. 2004 and OpenCV; hard assignment measured better than soft EM on the photographs of
 * docs/SEGMENT.md (mean error inside the box 6.9% against 8.0% at lambda 50). */
#define WARM_EM_ROUNDS 1
/* Without a box, the unknown pixels enter the first background model with this weight: the
 * colours no seed covers are then explained by the background (as OpenCV's GC_PR_BGD does)
 * without outweighing the seeds, whose share the unknown pixels' total weight never passes
 * UNKNOWN_SHARE of. Measured on the photographs of docs/GRABCUT.md (5 rounds): sparse strokes
 * 28.7% -> 15.0% error among unknown pixels, lasso trimaps 2.24% either way; without the
 * share cap strokes reached 11.4% but the synthetic pictures of golden_segment.sh, seeded by
 * two 32-pixel patches, fell from under 5% to 24% wrong. */
#define UNKNOWN_WEIGHT 0.05
/* A half-size copy is itself halved for its first rounds when it has this many unknown pixels
 * (the full-size image from GCUT_SEG_COARSE_MIN): measured on the photographs of
 * docs/GRABCUT.md, halving down to 16384 unknown pixels at every level made the box's error
 * 11.3% (the smallest copies are too coarse to learn from), down to 32768 8.7%, down to 65536
 * 7.4%. */
#define PYRAMID_MIN 65536
#define UNKNOWN_SHARE 0.25
/* A lone cold cut goes to grid-bk (under "auto") when the unknown pixels fill at least this
 * share of their bounding box (docs/GRABCUT.md, "Speed"): a box's crop is all unknown, a lasso
 * trimap's mostly fixed (its band is a few percent of the picture). */
#define GRID_CROP_UNKNOWN 0.75

/* Everything a run keeps between rounds. */
typedef struct gc_run {
    int64_t n, nc;            /* pixels; entries of the colour tables */
    int ch;                   /* working channels, 1 or 3 */
    gcut_seg_params p;        /* resolved */
    const uint8_t *pixels;    /* working image */
    uint8_t *owned;           /* its buffer when converted */
    int32_t *q;               /* per pixel: its colour's place in colors (dense index) */
    int32_t *colors;          /* the quantised colours present, ascending */
    int64_t np;               /* their number; the per-colour arrays below have np entries */
    uint8_t *hard;            /* per pixel: GCUT_SEED_* after the box */
    uint8_t *label;           /* per pixel: 1 foreground (current cut) */
    double *counts;           /* [0, np) foreground, [np, 2 np) background: pixels per colour */
    double *cost;             /* same layout: -ln P(colour | class) */
    double *cost_saved;       /* the previous round's, while a re-fit is judged */
    double *offset;           /* per colour: scale * min(cost_fg, cost_bg), the reduced part */
    int32_t *u_source;        /* per colour: the tables' unary_source entry (dense copy) */
    int32_t *u_sink;          /* per colour: the tables' unary_sink entry */
    double *hist;             /* histogram model only: counts and costs by quantised colour */
    uint8_t *best;            /* gmm: [side * np + k] colour k's most likely component */
    uint8_t *best_saved;      /* the previous round's, while a re-fit is judged */
    bool best_valid;          /* best holds the current mixtures' picks */
    bool start_from_gmm;      /* gmm holds a smaller copy's last mixtures: start from them */
    bool pairwise_ready;      /* tables' pairwise part and K filled (they never change) */
    gcut__seg_tables *tables; /* the current round's energy */
    gcut__gmm gmm[2];         /* foreground, background */
    double model_ms;
    /* The cut is solved on the box around the unknown pixels only (everything outside it is
     * fixed); its boundary terms with the fixed pixels outside are folded into the terminal
     * capacities of the pixels inside (fold_source / fold_sink), an exact reduction. */
    int64_t lo[3], hi[3]; /* the crop: [lo, hi) per (z, y, x) */
    int64_t cn;           /* its pixels */
    uint8_t *crop_pixels; /* working image of the crop (NULL: the whole image is the crop) */
    uint8_t *crop_hard;   /* hard codes of the crop */
    int32_t *fold_source, *fold_sink;
    int64_t *crop_index;            /* crop pixel (or graph node) -> image pixel */
    int32_t *cur_source, *cur_sink; /* graph path: the terminal capacities in the graph */
    int64_t *pushed;                /* grid path: each crop pixel's pushed net outflow */
} gc_run;

static void run_free(gc_run *r) {
    if (r->owned != NULL)
        gcut__free(r->owned);
    gcut__free(r->q);
    gcut__free(r->colors);
    gcut__free(r->hard);
    gcut__free(r->label);
    gcut__free(r->counts);
    gcut__free(r->cost);
    gcut__free(r->cost_saved);
    gcut__free(r->offset);
    gcut__free(r->u_source);
    gcut__free(r->u_sink);
    gcut__free(r->hist);
    gcut__free(r->best);
    gcut__free(r->best_saved);
    gcut__seg_tables_free(r->tables);
    gcut__free(r->crop_pixels);
    gcut__free(r->crop_hard);
    gcut__free(r->fold_source);
    gcut__free(r->fold_sink);
    gcut__free(r->crop_index);
    gcut__free(r->cur_source);
    gcut__free(r->cur_sink);
    gcut__free(r->pushed);
}

static void terminals(const gc_run *r, int64_t j, int32_t *s, int32_t *t);

/* Neighbour offsets (dz, dy, dx) of a connectivity, the forward half only (each pair once). */
static int forward_offsets(int connectivity, int off[13][3]) {
    int count = 0;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                const int nz = (dz != 0) + (dy != 0) + (dx != 0);
                const bool forward = dz > 0 || (dz == 0 && (dy > 0 || (dy == 0 && dx > 0)));
                if (nz == 0 || !forward)
                    continue;
                if ((connectivity == 4 || connectivity == 6) && nz != 1)
                    continue;
                if ((connectivity == 4 || connectivity == 8) && dz != 0)
                    continue;
                off[count][0] = dz, off[count][1] = dy, off[count][2] = dx;
                count++;
            }
    return count;
}

/* bk's problem: a graph of the unknown pixels only (nodes in image order), every boundary term
 * with a fixed pixel folded into the unknown pixel's terminal capacities (exact: the fixed
 * pixel's label is known, so the term is a cost of the unknown pixel's label alone). */
static gcut_status make_graph(gc_run *r, const gcut_image *image, gcut_graph **out) {
    *out = NULL;
    const int64_t w = image->width, h = image->height, d = image->depth, plane = w * h;
    int64_t *node_of = gcut__malloc(gcut__mul_size((size_t)r->n, sizeof(int64_t)), "node map");
    if (node_of == NULL)
        return GCUT_ERR_NOMEM;
    r->cn = 0;
    for (int64_t i = 0; i < r->n; i++)
        node_of[i] = r->hard[i] == GCUT_SEED_UNKNOWN ? r->cn++ : -1;
    r->crop_index = gcut__malloc(gcut__mul_size((size_t)r->cn + 1, sizeof(int64_t)), "nodes");
    r->fold_source = gcut__calloc((size_t)r->cn + 1, sizeof(int32_t), "node folds");
    r->fold_sink = gcut__calloc((size_t)r->cn + 1, sizeof(int32_t), "node folds");
    r->cur_source = gcut__calloc((size_t)r->cn + 1, sizeof(int32_t), "node terminals");
    r->cur_sink = gcut__calloc((size_t)r->cn + 1, sizeof(int32_t), "node terminals");
    gcut_status st = GCUT_OK;
    if (r->crop_index == NULL || r->fold_source == NULL || r->fold_sink == NULL ||
        r->cur_source == NULL || r->cur_sink == NULL) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    int off[13][3];
    const int half = forward_offsets(r->p.connectivity, off);
    gcut_graph *g = NULL;
    if ((st = gcut_graph_create(r->cn, r->cn * half, &g)) != GCUT_OK)
        goto done;
    /* Per offset: its pairwise row and its step in the image. */
    const int32_t *row_of[13];
    int64_t step[13];
    for (int e = 0; e < half; e++) {
        row_of[e] = r->tables->pairwise[gcut__seg_offset_class(off[e])];
        step[e] = (off[e][0] * h + off[e][1]) * w + off[e][2];
    }
    const int ch = r->ch;
    int64_t j = 0;
    for (int64_t z = 0; z < d; z++)
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                const int64_t i = z * plane + y * w + x;
                if (node_of[i] < 0)
                    continue;
                r->crop_index[j] = i;
                const uint8_t *pi = r->pixels + i * ch;
                for (int e = 0; e < half; e++)
                    for (int sign = 1; sign >= -1; sign -= 2) {
                        const int64_t nz = z + sign * off[e][0], ny = y + sign * off[e][1];
                        const int64_t nx = x + sign * off[e][2];
                        if (nz < 0 || nz >= d || ny < 0 || ny >= h || nx < 0 || nx >= w)
                            continue;
                        const int64_t k = i + sign * step[e];
                        /* The codes (a byte a pixel) say fixed or not; an unknown neighbour's
                         * edge is added once, from its forward side. */
                        const uint8_t code = r->hard[k];
                        if (code == GCUT_SEED_UNKNOWN && sign < 0)
                            continue;
                        const int32_t cap = row_of[e][gcut__seg_sqdiff(pi, r->pixels + k * ch, ch)];
                        if (code != GCUT_SEED_UNKNOWN) {
                            /* A fixed neighbour: background costs cap if this pixel is
                             * foreground. */
                            if (code == GCUT_SEED_BACKGROUND)
                                r->fold_sink[j] += cap;
                            else
                                r->fold_source[j] += cap;
                        } else if ((st = gcut_graph_add_edge(g, j, node_of[k], cap, cap)) !=
                                   GCUT_OK) {
                            gcut_graph_free(g);
                            goto done;
                        }
                    }
                j++;
            }
    for (int64_t u = 0; u < r->cn; u++) {
        int32_t s, t;
        terminals(r, u, &s, &t);
        r->cur_source[u] = s, r->cur_sink[u] = t;
        if ((st = gcut_graph_add_tweights(g, u, s, t)) != GCUT_OK) {
            gcut_graph_free(g);
            goto done;
        }
    }
    *out = g;
done:
    gcut__free(node_of);
    return st;
}

/* The crop: the bounding box of the unknown pixels (the whole image for the GPU, which
 * builds its own capacities from the image), its pixels, hard codes and index map. */
static gcut_status make_crop(gc_run *r, const gcut_image *image, bool whole) {
    const int64_t dims[3] = {image->depth, image->height, image->width};
    for (int a = 0; a < 3; a++)
        r->lo[a] = dims[a], r->hi[a] = 0;
    for (int64_t z = 0, i = 0; z < dims[0] && !whole; z++)
        for (int64_t y = 0; y < dims[1]; y++)
            for (int64_t x = 0; x < dims[2]; x++, i++) {
                if (r->hard[i] != GCUT_SEED_UNKNOWN)
                    continue;
                const int64_t c[3] = {z, y, x};
                for (int a = 0; a < 3; a++) {
                    r->lo[a] = c[a] < r->lo[a] ? c[a] : r->lo[a];
                    r->hi[a] = c[a] + 1 > r->hi[a] ? c[a] + 1 : r->hi[a];
                }
            }
    if (whole || r->hi[0] == 0) /* no unknown pixel: keep the whole image */
        for (int a = 0; a < 3; a++)
            r->lo[a] = 0, r->hi[a] = dims[a];
    r->cn = (r->hi[0] - r->lo[0]) * (r->hi[1] - r->lo[1]) * (r->hi[2] - r->lo[2]);
    r->crop_index = gcut__malloc(gcut__mul_size((size_t)r->cn, sizeof(int64_t)), "crop index");
    r->fold_source = gcut__calloc((size_t)r->cn, sizeof(int32_t), "crop folds");
    r->fold_sink = gcut__calloc((size_t)r->cn, sizeof(int32_t), "crop folds");
    if (r->crop_index == NULL || r->fold_source == NULL || r->fold_sink == NULL)
        return GCUT_ERR_NOMEM;
    int64_t j = 0;
    for (int64_t z = r->lo[0]; z < r->hi[0]; z++)
        for (int64_t y = r->lo[1]; y < r->hi[1]; y++)
            for (int64_t x = r->lo[2]; x < r->hi[2]; x++)
                r->crop_index[j++] = (z * image->height + y) * image->width + x;
    if (r->cn == r->n)
        return GCUT_OK; /* pixels and codes are the image's own */
    r->crop_pixels = gcut__malloc(gcut__mul_size((size_t)r->cn, (size_t)r->ch), "crop pixels");
    r->crop_hard = gcut__malloc((size_t)r->cn, "crop hard constraints");
    if (r->crop_pixels == NULL || r->crop_hard == NULL)
        return GCUT_ERR_NOMEM;
    for (j = 0; j < r->cn; j++) {
        const int64_t i = r->crop_index[j];
        memcpy(r->crop_pixels + j * r->ch, r->pixels + i * r->ch, (size_t)r->ch);
        r->crop_hard[j] = r->hard[i];
    }
    return GCUT_OK;
}

/* Fold the boundary terms between the crop's unknown pixels and the fixed pixels just outside
 * it into fold_source / fold_sink (the pairwise tables never change between rounds). */
static void fold_boundary(gc_run *r, const gcut_image *image, const gcut_grid *grid) {
    if (r->crop_pixels == NULL)
        return;
    const int64_t dims[3] = {image->depth, image->height, image->width};
    const int64_t cw = r->hi[2] - r->lo[2], chh = r->hi[1] - r->lo[1];
    for (int64_t z = r->lo[0]; z < r->hi[0]; z++)
        for (int64_t y = r->lo[1]; y < r->hi[1]; y++) {
            /* Only the crop's outer layer has neighbours outside it: in the other rows only the
             * first and last pixel are visited (2D images have no neighbours in z). */
            const bool edge_row = (dims[0] > 1 && (z == r->lo[0] || z == r->hi[0] - 1)) ||
                                  y == r->lo[1] || y == r->hi[1] - 1;
            const int64_t row = ((z - r->lo[0]) * chh + (y - r->lo[1])) * cw;
            for (int64_t x = r->lo[2]; x < r->hi[2];
                 x = !edge_row && x == r->lo[2] && r->hi[2] - 1 > x ? r->hi[2] - 1 : x + 1) {
                const int64_t j = row + (x - r->lo[2]);
                if (r->crop_hard[j] != GCUT_SEED_UNKNOWN)
                    continue;
                const int64_t c[3] = {z, y, x};
                const int64_t i = r->crop_index[j];
                for (int d = 0; d < grid->num_dirs; d++) {
                    const int *off = grid->offset[d];
                    bool inside_crop = true, inside_image = true;
                    int64_t nb[3];
                    for (int a = 0; a < 3; a++) {
                        nb[a] = c[a] + off[a];
                        inside_image = inside_image && nb[a] >= 0 && nb[a] < dims[a];
                        inside_crop = inside_crop && nb[a] >= r->lo[a] && nb[a] < r->hi[a];
                    }
                    if (inside_crop || !inside_image)
                        continue;
                    const int64_t k = (nb[0] * dims[1] + nb[1]) * dims[2] + nb[2];
                    const int32_t w =
                        r->tables->pairwise[gcut__seg_offset_class(off)][gcut__seg_sqdiff(
                            r->pixels + i * r->ch, r->pixels + k * r->ch, r->ch)];
                    /* Outside the crop every pixel is fixed: a background neighbour costs w if
                     * this pixel is foreground (sink side), a foreground one w if it is
                     * background. */
                    if (r->hard[k] == GCUT_SEED_BACKGROUND)
                        r->fold_sink[j] += w;
                    else if (r->hard[k] == GCUT_SEED_FOREGROUND)
                        r->fold_source[j] += w;
                }
            }
        }
    int32_t *src = gcut_grid_terminal_data((gcut_grid *)grid, GCUT_SOURCE);
    int32_t *snk = gcut_grid_terminal_data((gcut_grid *)grid, GCUT_SINK);
    for (int64_t j = 0; j < r->cn; j++)
        src[j] += r->fold_source[j], snk[j] += r->fold_sink[j];
}

/* Terminal capacities (s, t) of an unknown pixel whose arcs carry a pushed net outflow out
 * (prepush()): pushing f along an arc u -> v adds f to u's cost of the source side and takes f
 * from v's (Kohli & Torr 2005 sec. 4), so the pixel's pair becomes (s, t + out), less its
 * common part, which *constant gets. */
static inline void pushed_terminals(int64_t s, int64_t t, int64_t out, int32_t *src, int32_t *snk,
                                    int64_t *constant) {
    const int64_t b = t + out, m = s < b ? s : b;
    *src = (int32_t)(s - m), *snk = (int32_t)(b - m);
    *constant += m;
}

/* Push flow along the paths source -> u -> v -> sink of the crop's grid, u and v unknown
 * neighbours, u with source capacity and v with sink capacity (each pixel's common terminal
 * part cancelled first), greedily, each push the least of the three residuals; r->pushed gets
 * each pixel's net pushed outflow. The arcs keep what was pushed for every later round (the
 * pairwise terms never change); each round's terminals are written by pushed_terminals(), and
 * the grid's maximum flow plus the returned constant is the round's. The nodes a solver finds
 * reachable from the source (bk's and grid-bk's labels) are those of the unpushed grid: the
 * final residual graph is that of a maximum flow of it either way (docs/GRABCUT.md, "Third
 * pass"). @return the constant of the first round. */
static int64_t prepush(gc_run *r, gcut_grid *grid) {
    int32_t *src = grid->terminal[GCUT_SOURCE], *snk = grid->terminal[GCUT_SINK];
    const uint8_t *hard = r->crop_hard != NULL ? r->crop_hard : r->hard;
    int64_t *out = r->pushed;
    int opposite[GCUT__MAX_DIRS];
    for (int d = 0; d < grid->num_dirs; d++)
        for (int e = 0; e < grid->num_dirs; e++)
            if (grid->offset[e][0] == -grid->offset[d][0] &&
                grid->offset[e][1] == -grid->offset[d][1] &&
                grid->offset[e][2] == -grid->offset[d][2])
                opposite[d] = e;
    int64_t constant = 0;
    for (int64_t u = 0; u < grid->num_nodes; u++) {
        out[u] = 0;
        if (hard[u] == GCUT_SEED_UNKNOWN)
            pushed_terminals(src[u], snk[u], 0, &src[u], &snk[u], &constant);
    }
    for (int64_t u = 0; u < grid->num_nodes; u++) {
        if (hard[u] != GCUT_SEED_UNKNOWN)
            continue;
        for (int d = 0; d < grid->num_dirs && src[u] > 0; d++) {
            const int32_t c = grid->cap[d][u];
            if (c == 0) /* no arc, or one leaving the grid (those are 0) */
                continue;
            const int64_t v = u + grid->step[d];
            if (snk[v] == 0 || hard[v] != GCUT_SEED_UNKNOWN)
                continue;
            int32_t f = src[u] < snk[v] ? src[u] : snk[v];
            f = f < c ? f : c;
            if ((int64_t)grid->cap[opposite[d]][v] + f > INT32_MAX)
                continue;
            src[u] -= f, snk[v] -= f;
            grid->cap[d][u] = c - f;
            grid->cap[opposite[d]][v] += f;
            out[u] += f, out[v] -= f;
            constant += f;
        }
    }
    return constant;
}

/* prepush() on the graph of unknown pixels: each edge's two ends with source and sink
 * capacity (after the common parts are cancelled) carry what the edge allows; the flow goes to
 * the graph's flow offset, which every solver's flow includes. */
static void prepush_graph(gcut_graph *g) {
    int64_t pushed = 0;
    for (int64_t u = 0; u < g->num_nodes; u++) {
        const int64_t m = g->tw_source[u] < g->tw_sink[u] ? g->tw_source[u] : g->tw_sink[u];
        g->tw_source[u] -= m, g->tw_sink[u] -= m;
        pushed += m;
    }
    for (int64_t e = 0; e < g->num_edges; e++) {
        int64_t u = gcut__edge_u(g, e), v = gcut__edge_v(g, e);
        int32_t *fwd = &g->edge_cap[e], *bwd = &g->edge_rev[e];
        if (g->tw_source[u] == 0 || g->tw_sink[v] == 0) { /* try v -> u */
            const int64_t t = u;
            u = v, v = t;
            int32_t *p = fwd;
            fwd = bwd, bwd = p;
        }
        int64_t f = g->tw_source[u] < g->tw_sink[v] ? g->tw_source[u] : g->tw_sink[v];
        f = f < *fwd ? f : *fwd;
        if (f <= 0 || (int64_t)*bwd + f > INT32_MAX)
            continue;
        g->tw_source[u] -= f, g->tw_sink[v] -= f;
        *fwd -= (int32_t)f, *bwd += (int32_t)f;
        pushed += f;
    }
    gcut__graph_add_flow_offset(g, pushed);
}

/* Whether the bounding box of the unknown pixels holds at least GRID_CROP_UNKNOWN of them (its
 * other pixels are fixed: nodes a grid solver carries for nothing). */
static bool mostly_unknown(const gc_run *r, const gcut_image *image, int64_t unknown) {
    if (unknown <= 0)
        return false;
    const int64_t w = image->width, h = image->height * image->depth;
    int64_t x0 = w, x1 = -1, y0 = h, y1 = -1;
    for (int64_t y = 0; y < h; y++) {
        const uint8_t *row = r->hard + y * w;
        int64_t first = -1, last = -1;
        for (int64_t x = 0; x < w; x++)
            if (row[x] == GCUT_SEED_UNKNOWN) {
                first = first < 0 ? x : first;
                last = x;
            }
        if (first < 0)
            continue;
        y0 = y < y0 ? y : y0, y1 = y;
        x0 = first < x0 ? first : x0, x1 = last > x1 ? last : x1;
    }
    const double area = (double)(x1 - x0 + 1) * (double)(y1 - y0 + 1);
    return (double)unknown >= GRID_CROP_UNKNOWN * area;
}

/* Merge box and seeds into hard codes; the box's inside (less background seeds) is the first
 * foreground. */
static gcut_status hard_constraints(const gcut_image *image, const gcut_rect *rect,
                                    const uint8_t *seeds, bool boxed, gc_run *r, int64_t *count_fg,
                                    int64_t *count_bg) {
    const int64_t w = image->width, h = image->height, n = r->n;
    int64_t x0 = 0, y0 = 0, x1 = w, y1 = h;
    if (rect != NULL) {
        if (image->depth != 1)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "grabcut: a box is for 2D images (depth is %" PRId64 ")",
                              image->depth);
        if (rect->width <= 0 || rect->height <= 0)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "grabcut: the box %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                              " is empty (width and height must be >= 1)",
                              rect->x, rect->y, rect->width, rect->height);
        x0 = rect->x, y0 = rect->y;
        x1 = x0 > 0 && rect->width > INT64_MAX - x0 ? INT64_MAX : x0 + rect->width;
        y1 = y0 > 0 && rect->height > INT64_MAX - y0 ? INT64_MAX : y0 + rect->height;
        if (x1 <= 0 || y1 <= 0 || x0 >= w || y0 >= h)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "grabcut: the box %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                              " (x,y,w,h) lies outside the %" PRId64 "x%" PRId64 " image",
                              rect->x, rect->y, rect->width, rect->height, w, h);
        /* Clipped to the image, as a box dragged past the edge means. */
        x0 = x0 < 0 ? 0 : x0, y0 = y0 < 0 ? 0 : y0;
        x1 = x1 > w ? w : x1, y1 = y1 > h ? h : y1;
    }
    *count_fg = *count_bg = 0;
    int64_t inside = 0;
    for (int64_t i = 0, x = 0, y = 0; i < n; i++) {
        uint8_t code = seeds != NULL ? seeds[i] : GCUT_SEED_UNKNOWN;
        if (code > GCUT_SEED_BACKGROUND) {
            char where[96];
            gcut__seg_pixel_name(image, i, where, sizeof where);
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "seeds: pixel %s has code %u (0 unknown, 1 foreground, 2 "
                              "background)",
                              where, code);
        }
        if (rect != NULL && code == GCUT_SEED_UNKNOWN) {
            if (x < x0 || x >= x1 || y < y0 || y >= y1)
                code = GCUT_SEED_BACKGROUND;
            else
                inside++;
        }
        if (++x == w) /* (x, y) = (i % w, (i / w) % h) without dividing */
            x = 0, y = y + 1 == h ? 0 : y + 1;
        r->hard[i] = code;
        *count_fg += code == GCUT_SEED_FOREGROUND;
        *count_bg += code == GCUT_SEED_BACKGROUND;
    }
    if (rect == NULL && boxed) {
        /* A half-size copy of a boxed run (coarse_start): the box is in the seeds already. */
        if (*count_bg == 0 || *count_fg + *count_bg == n)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "grabcut: the half-size copy has %s (its blocks mix the classes)",
                              *count_bg == 0 ? "no background" : "no unknown pixel");
    } else if (rect != NULL) {
        if (*count_bg == 0)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "grabcut: the box %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                              " covers the whole %" PRId64 "x%" PRId64
                              " image, so nothing is known to be background: draw a smaller "
                              "box or give at least one background seed",
                              rect->x, rect->y, rect->width, rect->height, w, h);
        if (*count_fg == 0 && inside == 0)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "grabcut: every pixel of the box %" PRId64 ",%" PRId64 ",%" PRId64
                              ",%" PRId64 " is a background seed: nothing can be foreground",
                              rect->x, rect->y, rect->width, rect->height);
    } else if (*count_fg == 0 || *count_bg == 0) {
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "seeds: no %s seeds (%" PRId64 " foreground, %" PRId64
                          " background); mark some pixels of %s, or give a box",
                          *count_fg == 0 && *count_bg == 0 ? "foreground or background"
                          : *count_fg == 0                 ? "foreground"
                                                           : "background",
                          *count_fg, *count_bg,
                          *count_fg == 0 && *count_bg == 0 ? "each"
                          : *count_fg == 0                 ? "the object"
                                                           : "the rest");
    }
    /* First labels: the box's unknown pixels are foreground (GrabCut's T_U), seeds as given.
     * Without a box the first models see the seeds only. */
    for (int64_t i = 0; i < n; i++)
        r->label[i] =
            r->hard[i] == GCUT_SEED_FOREGROUND || (boxed && r->hard[i] == GCUT_SEED_UNKNOWN);
    return GCUT_OK;
}

/* Pixels per colour and class: all pixels by their label, or (seeds_only) the hard ones and
 * the unknown ones with weight unknown_weight as background. */
static void count_colours(gc_run *r, bool seeds_only, double unknown_weight) {
    memset(r->counts, 0, (size_t)r->np * 2 * sizeof(double));
    for (int64_t i = 0; i < r->n; i++) {
        if (seeds_only && r->hard[i] == GCUT_SEED_UNKNOWN) {
            r->counts[r->np + r->q[i]] += unknown_weight;
            continue;
        }
        r->counts[(r->label[i] ? 0 : r->np) + r->q[i]] += 1.0;
    }
}

/* Fit both models to the counts (warm: EM from the previous mixtures) into r->cost. */
static gcut_status fit_models(gc_run *r, bool warm) {
    const double t0 = gcut__now_ms();
    gcut_status st;
    for (int side = 0; side < 2; side++) {
        const double *counts = r->counts + side * r->np;
        double *cost = r->cost + side * r->np;
        if (r->p.model == GCUT_MODEL_GMM) {
            uint8_t *best = r->best + side * r->np; /* of the mixture being re-fitted */
            st = gcut__gmm_fit_list(
                &r->gmm[side], r->colors, counts, warm && r->best_valid ? best : NULL, r->np, r->ch,
                r->p.gmm_components, r->p.seed + (uint64_t)side, warm ? WARM_EM_ROUNDS : 0, true);
            if (st != GCUT_OK)
                return st;
            gcut__gmm_costs_list(&r->gmm[side], r->colors, r->np, cost, best);
            r->best_valid = side == 1;
        } else {
            /* The histogram works on every quantised colour: scatter, fit, gather. */
            double *hc = r->hist, *hcost = r->hist + r->nc;
            memset(hc, 0, (size_t)r->nc * sizeof(double));
            for (int64_t k = 0; k < r->np; k++)
                hc[r->colors[k]] = counts[k];
            st = gcut__seg_model_costs(hc, NULL, r->nc, r->ch, GCUT_MODEL_HISTOGRAM, 0,
                                       r->p.histogram_bins, 0, hcost);
            if (st != GCUT_OK)
                return st;
            for (int64_t k = 0; k < r->np; k++)
                cost[k] = hcost[r->colors[k]];
        }
    }
    r->model_ms += gcut__now_ms() - t0;
    return GCUT_OK;
}

/* Regional costs less the colour's min(cost_fg, cost_bg), clamped: seg_tables.c's rule, on
 * which gcut__seg_tables_fill() and so every other path's energy rests (kept in step). */
static void reduce_pair(double cost_fg, double cost_bg, double *fg, double *bg) {
    if (!isfinite(cost_fg) && !isfinite(cost_bg))
        cost_fg = cost_bg = 0.0;
    const double m = cost_fg < cost_bg ? cost_fg : cost_bg;
    *fg = isfinite(cost_fg) ? cost_fg - m : GCUT__SEG_UNARY_MAX_NATS;
    *bg = isfinite(cost_bg) ? cost_bg - m : GCUT__SEG_UNARY_MAX_NATS;
    *fg = *fg > GCUT__SEG_UNARY_MAX_NATS ? GCUT__SEG_UNARY_MAX_NATS : *fg;
    *bg = *bg > GCUT__SEG_UNARY_MAX_NATS ? GCUT__SEG_UNARY_MAX_NATS : *bg;
}

/* The tables (and the per-colour offsets) of the costs in r->cost. The pairwise part and K
 * depend on lambda, sigma and the scale alone, fixed for the run: filled once. The unary
 * entries are written for the colours present only (no pixel reads another). */
static gcut_status apply_costs(gc_run *r, double sigma, double scale) {
    gcut__seg_tables *t = r->tables;
    if (!r->pairwise_ready) {
        const int64_t nc = t->num_colors;
        t->num_colors = 0; /* the unary loops of the fill see no colour */
        gcut_status st =
            gcut__seg_tables_fill(t, NULL, NULL, r->p.lambda, sigma, scale, r->p.connectivity);
        t->num_colors = nc;
        if (st != GCUT_OK)
            return st;
        r->pairwise_ready = true;
    }
    const double *cf = r->cost, *cb = r->cost + r->np;
    double unary_max = 0;
    for (int64_t k = 0; k < r->np; k++) {
        double fg, bg;
        reduce_pair(cf[k], cb[k], &fg, &bg);
        unary_max = fg > unary_max ? fg : unary_max;
        unary_max = bg > unary_max ? bg : unary_max;
        /* Cut when the pixel goes to background / when it stays foreground. */
        r->u_source[k] = t->unary_source[r->colors[k]] = (int32_t)floor(scale * bg + 0.5);
        r->u_sink[k] = t->unary_sink[r->colors[k]] = (int32_t)floor(scale * fg + 0.5);
        const double m = cf[k] < cb[k] ? cf[k] : cb[k];
        r->offset[k] = isfinite(m) ? t->scale * m : 0.0;
    }
    if (scale * unary_max > GCUT__SEG_CAP_BOUND)
        return gcut__fail(GCUT_ERR_OVERFLOW,
                          "segmentation: scale %g times the largest energy term %g exceeds the "
                          "capacity bound %d (use a scale <= %g, or 0 to choose one)",
                          scale, unary_max, GCUT__SEG_CAP_BOUND, GCUT__SEG_CAP_BOUND / unary_max);
    t->unary_max = unary_max;
    return GCUT_OK;
}

/* The regional part of the energy (capacity units) of the labels the counts hold, with every
 * pixel's own colour cost, hard pixels included: sum offset + T(label). */
static double regional_energy(const gc_run *r) {
    const double *cf = r->counts, *cb = r->counts + r->np;
    double e = 0;
    for (int64_t k = 0; k < r->np; k++)
        e += cf[k] * (r->offset[k] + r->u_sink[k]) + cb[k] * (r->offset[k] + r->u_source[k]);
    return e;
}

/* Terminal capacities of crop pixel j under the current tables, folds included. */
static void terminals(const gc_run *r, int64_t j, int32_t *s, int32_t *t) {
    const int64_t i = r->crop_index[j];
    if (r->hard[i] == GCUT_SEED_FOREGROUND) {
        *s = r->tables->hard, *t = 0;
    } else if (r->hard[i] == GCUT_SEED_BACKGROUND) {
        *s = 0, *t = r->tables->hard;
    } else {
        *s = r->u_source[r->q[i]] + r->fold_source[j];
        *t = r->u_sink[r->q[i]] + r->fold_sink[j];
    }
}

static gcut_status coarse_start(gc_run *r, const gcut_image *image, bool boxed, int coarse,
                                const gcut_options *options, gcut_seg_report *rep,
                                double *coarse_solve_ms);
static gcut_status grabcut_rounds(const gcut_image *image, const gcut_rect *rect,
                                  const uint8_t *seeds, bool boxed, const gcut_seg_params *params,
                                  const gcut_options *options, uint8_t *mask,
                                  gcut_seg_report *report, gcut_grid **final_grid, const char *tag,
                                  gcut__gmm *gmm_out);

/* The rounds: boxed says the unknown pixels start as foreground (a box given here, or the
 * box of the full-size run this half-size copy stands for, then in seeds); tag names the run
 * in --verbose lines. */
static gcut_status grabcut_run(const gcut_image *image, const gcut_rect *rect, const uint8_t *seeds,
                               bool boxed, const gcut_seg_params *params,
                               const gcut_options *options, uint8_t *mask, gcut_seg_report *report,
                               gcut_grid **final_grid, const char *tag) {
    return grabcut_rounds(image, rect, seeds, boxed, params, options, mask, report, final_grid, tag,
                          NULL);
}

/* grabcut_run(), and gmm_out (may be NULL) gets the last round's mixtures. */
static gcut_status grabcut_rounds(const gcut_image *image, const gcut_rect *rect,
                                  const uint8_t *seeds, bool boxed, const gcut_seg_params *params,
                                  const gcut_options *options, uint8_t *mask,
                                  gcut_seg_report *report, gcut_grid **final_grid, const char *tag,
                                  gcut__gmm *gmm_out) {
    if (final_grid != NULL)
        *final_grid = NULL;
    if (mask == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grabcut: mask is NULL");
    gcut_status st = gcut__seg_check_image("grabcut", image);
    if (st != GCUT_OK)
        return st;
    if (rect == NULL && seeds == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grabcut: give a box, seeds, or both");
    if (params != NULL &&
        (params->coarse_rounds < -1 || params->coarse_rounds > GCUT_SEG_MAX_ITERATIONS))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "grabcut: coarse_rounds %d must be -1 (none), 0 (automatic) or 1..%d",
                          params->coarse_rounds, GCUT_SEG_MAX_ITERATIONS);
    gcut_options defaults;
    if (options == NULL) {
        gcut_options_init(&defaults);
        options = &defaults;
    }
    gc_run run;
    memset(&run, 0, sizeof run);
    gc_run *r = &run;
    const bool three_d = image->depth > 1, colour = image->channels >= 3;
    if ((st = gcut__seg_resolve_params(params, three_d, colour, &r->p)) != GCUT_OK)
        return st;
    if (rect != NULL && !three_d && (params == NULL || params->connectivity == 0) &&
        r->p.connectivity == 8) {
        /* A box with the connectivity left to gcut: every round 4-connected at twice lambda
         * (about the same smoothness per pixel: 8 neighbours at 1 and 1/sqrt 2 weigh 6.8, 4 at
         * 2 weigh 8), half the arcs of 8-connected. Measured on three photo sets of
         * docs/GRABCUT.md ("Third pass"): the box's errors within 0.15 point of 8-connected at
         * lambda 50 and below OpenCV's, 9-27% less CPU. Seeds alone keep 8 (lasso trimaps
         * lost 0.4 points at 4). */
        r->p.connectivity = 4;
        r->p.lambda *= 2;
    }
    if (r->p.levels != 0)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "grabcut: a banded cut (levels %d) is not made with re-fitting rounds; "
                          "use levels 0, or iterations 1 without a box",
                          r->p.levels);
    int rounds = r->p.iterations > 0 ? r->p.iterations : boxed ? 5 : GCUT_SEG_SEED_ITERATIONS;
    gcut_seg_report local;
    gcut_seg_report *rep = report != NULL ? report : &local;
    memset(rep, 0, sizeof *rep);
    const double t_start = gcut__now_ms();
    r->n = image->width * image->height * image->depth;
    gcut_grid *grid = NULL;
    gcut_grid_context *ctx = NULL; /* a box's rounds on grid-bk, warm (grid is its grid) */
    int64_t *marks = NULL;         /* crop pixels whose terminals a re-fit changed */
    int64_t prepushed = 0;         /* the round's constant of the pushed arcs (prepush()) */
    gcut_graph *graph = NULL;
    uint8_t *labels = mask; /* the solver's GCUT_SOURCE / GCUT_SINK land in mask (whole image) */
    uint8_t *crop_labels = NULL; /* or here, for a crop */
    r->hard = gcut__malloc((size_t)r->n, "grabcut hard constraints");
    r->label = gcut__malloc((size_t)r->n, "grabcut labels");
    if (r->hard == NULL || r->label == NULL) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    int64_t count_fg = 0, count_bg = 0;
    if ((st = hard_constraints(image, rect, seeds, boxed, r, &count_fg, &count_bg)) != GCUT_OK)
        goto done;
    if ((st = gcut__seg_working_image(image, &r->pixels, &r->owned, &r->ch)) != GCUT_OK)
        goto done;
    if ((st = gcut__seg_tables_alloc(r->ch, r->p.connectivity, &r->tables)) != GCUT_OK)
        goto done;
    r->nc = r->tables->num_colors;
    r->q = gcut__malloc(gcut__mul_size((size_t)r->n, sizeof(int32_t)), "grabcut colours");
    if (r->q == NULL) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    {
        /* Colour index per pixel, the list of colours present (only they are modelled), and
         * each pixel's place in that list. */
        int32_t *place = gcut__malloc(gcut__mul_size((size_t)r->nc, sizeof(int32_t)), "places");
        uint8_t *present = gcut__calloc((size_t)r->nc, 1, "grabcut colours present");
        if (place == NULL || present == NULL) {
            gcut__free(place);
            gcut__free(present);
            st = GCUT_ERR_NOMEM;
            goto done;
        }
        for (int64_t i = 0; i < r->n; i++) {
            r->q[i] = (int32_t)gcut__seg_color_index(r->pixels + i * r->ch, r->ch);
            present[r->q[i]] = 1;
        }
        for (int64_t c = 0; c < r->nc; c++)
            r->np += present[c];
        r->colors = gcut__malloc(gcut__mul_size((size_t)r->np, sizeof(int32_t)), "colour list");
        if (r->colors != NULL) {
            for (int64_t c = 0, k = 0; c < r->nc; c++)
                if (present[c]) {
                    place[c] = (int32_t)k;
                    r->colors[k++] = (int32_t)c;
                }
            for (int64_t i = 0; i < r->n; i++)
                r->q[i] = place[r->q[i]];
        }
        gcut__free(place);
        gcut__free(present);
    }
    r->counts = gcut__calloc((size_t)r->np * 2, sizeof(double), "grabcut colour counts");
    r->cost = gcut__calloc((size_t)r->np * 2, sizeof(double), "grabcut colour costs");
    r->cost_saved = gcut__calloc((size_t)r->np * 2, sizeof(double), "grabcut colour costs");
    r->offset = gcut__calloc((size_t)r->np, sizeof(double), "grabcut colour offsets");
    r->u_source = gcut__calloc((size_t)r->np, sizeof(int32_t), "grabcut unary entries");
    r->u_sink = gcut__calloc((size_t)r->np, sizeof(int32_t), "grabcut unary entries");
    if (r->p.model != GCUT_MODEL_GMM)
        r->hist = gcut__calloc((size_t)r->nc * 2, sizeof(double), "grabcut histogram");
    r->best = gcut__calloc((size_t)r->np * 2, 1, "grabcut components");
    r->best_saved = gcut__calloc((size_t)r->np * 2, 1, "grabcut components");
    if (r->colors == NULL || r->counts == NULL || r->cost == NULL || r->cost_saved == NULL ||
        r->offset == NULL || r->u_source == NULL || r->u_sink == NULL || r->best == NULL ||
        r->best_saved == NULL || (r->p.model != GCUT_MODEL_GMM && r->hist == NULL)) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    const double sigma = r->p.sigma > 0 ? r->p.sigma
                                        : gcut__seg_estimate_sigma(r->pixels, r->ch, image->width,
                                                                   image->height, image->depth);
    /* One scale for every round, so that the pairwise capacities (and K) never change and only
     * the terminal ones do: regional costs are clamped at GCUT__SEG_UNARY_MAX_NATS, so this
     * bounds every round's largest term. */
    double scale = r->p.scale;
    if (!(scale > 0)) {
        const double largest =
            r->p.lambda > GCUT__SEG_UNARY_MAX_NATS ? r->p.lambda : GCUT__SEG_UNARY_MAX_NATS;
        scale = GCUT__SEG_CAP_BOUND / largest;
    }
    double coarse_solve_ms = 0;
    {
        /* The first rounds at half size where they pay (params.coarse_rounds). */
        const int64_t unknown = r->n - count_fg - count_bg;
        int coarse = r->p.coarse_rounds;
        if (coarse == 0)
            coarse = unknown >= GCUT_SEG_COARSE_MIN ? rounds - 1 : 0;
        coarse = coarse > rounds - 1 ? rounds - 1 : coarse;
        if (coarse > 0 && image->depth == 1 && image->width >= 2 && image->height >= 2) {
            if ((st = coarse_start(r, image, boxed, coarse, options, rep, &coarse_solve_ms)) !=
                GCUT_OK)
                goto done;
            if (rep->coarse_iterations > 0)
                rounds -= coarse;
        }
    }
    if (rep->coarse_iterations > 0) {
        count_colours(r, false, 0); /* the half-size cut, upsampled, on the full-size pixels */
    } else {
        /* The unknown pixels' total weight at most UNKNOWN_SHARE of the background seeds'. */
        int64_t unknown = r->n - count_fg - count_bg;
        double weight = UNKNOWN_WEIGHT;
        if (unknown > 0 && UNKNOWN_SHARE * (double)count_bg / (double)unknown < weight)
            weight = UNKNOWN_SHARE * (double)count_bg / (double)unknown;
        count_colours(r, !boxed, weight);
    }
    /* From a smaller copy's mixtures: one assign-and-learn step on this image's colours (as a
     * round's re-fit); else fresh mixtures. */
    if ((st = fit_models(r, r->start_from_gmm)) != GCUT_OK ||
        (st = apply_costs(r, sigma, scale)) != GCUT_OK)
        goto done;
    rep->build_ms = gcut__now_ms() - t_start - r->model_ms - coarse_solve_ms;
    rep->solve_ms = coarse_solve_ms;
    /* The solver: bk warm through a graph kept across rounds; cuda-grid builds on the device;
     * anything else (or warm off) solves the grid afresh each round. */
    const gcut__solver *solver = gcut__solver_pick(options, true, r->n, &st);
    if (solver == NULL)
        goto done;
    /* "auto" on the CPU picks grid-bk for grids. A crop mostly unknown (a box) is cut on its
     * grid by grid-bk: a lone cut (the half-size rounds made the others) as a plain grid solve,
     * several rounds through a grid-bk context that re-solves warm (docs/GRABCUT.md, "Third
     * pass"). Otherwise (a lasso trimap's band) bk, warm through the graph of unknown pixels.
     * All of them label the nodes reachable from the source in the residual graph: the same
     * masks. */
    bool use_ctx = false;
    if (strcmp(solver->name, "grid-bk") == 0 &&
        (options->solver == NULL || strcmp(options->solver, "auto") == 0)) {
        if (!mostly_unknown(r, image, r->n - count_fg - count_bg)) {
            gcut_options serial = *options;
            serial.solver = "bk";
            solver = gcut__solver_pick(&serial, true, r->n, &st);
        } else {
            use_ctx = rounds > 1;
        }
    }
    const bool on_gpu = strcmp(solver->name, "cuda-grid") == 0;
    const bool use_graph = strcmp(solver->name, "bk") == 0;
    /* A lone cut on the graph under "auto" (a lasso trimap's full-size cut): ibfs, gcut's pick
     * for one-off graph solves, with the same labels as bk (the nodes the source reaches in
     * the residual graph); measured 1-13 ms less CPU on the photos' trimaps (docs/GRABCUT.md,
     * "Third pass"). Rounds that re-solve keep bk, warm. */
    const char *graph_solver = solver->name;
    if (use_graph && rounds == 1 && r->cn < (int64_t)INT32_MAX - 8 &&
        (options->solver == NULL || strcmp(options->solver, "auto") == 0))
        graph_solver = "ibfs";
    if (use_graph) {
        const double t0 = gcut__now_ms();
        if ((st = make_graph(r, image, &graph)) != GCUT_OK)
            goto done;
        if (rounds == 1) /* a lone cut: no later round re-solves this graph */
            prepush_graph(graph);
        if ((crop_labels = gcut__malloc((size_t)r->cn + 1, "node labels")) == NULL) {
            st = GCUT_ERR_NOMEM;
            goto done;
        }
        labels = crop_labels;
        rep->build_ms += gcut__now_ms() - t0;
    } else {
        const double t0 = gcut__now_ms();
        if ((st = make_crop(r, image, on_gpu)) != GCUT_OK)
            goto done;
        int64_t shape[3] = {r->hi[0] - r->lo[0], r->hi[1] - r->lo[1], r->hi[2] - r->lo[2]};
        if (use_ctx) {
            gcut_options co = *options;
            co.solver = solver->name;
            st = gcut_grid_context_create(three_d ? 3 : 2, three_d ? shape : shape + 1,
                                          r->p.connectivity, &co, &ctx);
            grid = ctx != NULL ? gcut_grid_context_grid(ctx) : NULL;
            marks = gcut__malloc(gcut__mul_size((size_t)r->cn, sizeof(int64_t)), "marks");
            if (st == GCUT_OK && marks == NULL)
                st = GCUT_ERR_NOMEM;
        } else {
            st = gcut_grid_create(three_d ? 3 : 2, three_d ? shape : shape + 1, r->p.connectivity,
                                  &grid);
        }
        if (st != GCUT_OK)
            goto done;
        if (!on_gpu) {
            gcut__seg_fill_grid(r->crop_pixels ? r->crop_pixels : r->pixels,
                                r->crop_hard ? r->crop_hard : r->hard, r->tables, grid);
            fold_boundary(r, image, grid);
            /* The shortest paths pushed before the first solve; the solver finishes from their
             * residual graph (same minimum cut, flow added back). */
            r->pushed = gcut__malloc(gcut__mul_size((size_t)r->cn, sizeof(int64_t)), "pushed");
            if (r->pushed == NULL) {
                st = GCUT_ERR_NOMEM;
                goto done;
            }
            prepushed = prepush(r, grid);
        }
        if (r->cn != r->n && (crop_labels = gcut__malloc((size_t)r->cn, "crop labels")) == NULL) {
            st = GCUT_ERR_NOMEM;
            goto done;
        }
        if (crop_labels != NULL)
            labels = crop_labels;
        rep->build_ms += gcut__now_ms() - t0;
    }
    gcut_options opts = *options;
    opts.solver = use_graph ? graph_solver : solver->name;
    double energy_prev = 0; /* E(labels_t, models_t), capacity units */
    double pairwise_prev = 0;
    int t = 0;
    for (;; t++) {
        /* ---- cut with the current models ---- */
        int64_t flow = 0;
        gcut_stats stats;
        memset(&stats, 0, sizeof stats);
        const double t0 = gcut__now_ms();
        if (on_gpu) {
#ifdef GCUT_HAVE_CUDA
            double construct_ms = 0;
            const int64_t shape[3] = {image->depth, image->height, image->width};
            st = gcut__cudagrid_solve_image(r->pixels, r->hard, r->tables, three_d ? 3 : 2,
                                            three_d ? shape : shape + 1, r->p.connectivity, &opts,
                                            &flow, labels, &stats, &construct_ms, NULL);
            snprintf(stats.solver, sizeof stats.solver, "cuda-grid");
            rep->build_ms += construct_ms;
            stats.build_ms -= construct_ms;
#else
            st = gcut__fail(GCUT_ERR_INTERNAL, "grabcut: cuda-grid picked in a build without it");
#endif
        } else if (use_graph) {
            st = gcut_graph_solve(graph, &opts, &flow, labels, &stats);
        } else if (ctx != NULL) {
            st = gcut_grid_context_solve(ctx, &flow, labels, &stats);
        } else {
            st = gcut_grid_solve(grid, &opts, &flow, labels, &stats);
        }
        if (st != GCUT_OK)
            goto done;
        flow += prepushed;
        rep->solve_ms += gcut__now_ms() - t0;
        rep->stats.build_ms += stats.build_ms;
        rep->stats.solve_ms += stats.solve_ms;
        rep->stats.augmentations += stats.augmentations;
        rep->stats.sweeps += stats.sweeps;
        rep->stats.global_relabels += stats.global_relabels;
        rep->stats.pushes += stats.pushes;
        rep->stats.device_bytes = stats.device_bytes;
        snprintf(rep->stats.solver, sizeof rep->stats.solver, "%s", stats.solver);
        rep->stats.flow = flow;
        /* ---- the new labels and this round's energy ---- */
        int64_t changed = 0;
        double unknown_terms = 0; /* regional capacities of the unknown pixels, in the flow */
        const int32_t *t_fg = r->u_sink, *t_bg = r->u_source;
        for (int64_t j = 0; j < r->cn; j++) {
            const int64_t i = r->crop_index[j];
            const uint8_t fg = labels[j] == GCUT_SOURCE;
            changed += fg != r->label[i];
            r->label[i] = fg;
            if (r->hard[i] == GCUT_SEED_UNKNOWN)
                unknown_terms += fg ? t_fg[r->q[i]] : t_bg[r->q[i]];
        }
        if (t == 0 && r->cn != r->n)
            for (int64_t i = 0; i < r->n; i++) /* outside the crop: as fixed */
                if (r->hard[i] != GCUT_SEED_UNKNOWN && r->label[i] != (r->hard[i] == 1)) {
                    r->label[i] = r->hard[i] == GCUT_SEED_FOREGROUND;
                    changed++;
                }
        count_colours(r, false, 0);
        pairwise_prev = (double)flow - unknown_terms;
        energy_prev = regional_energy(r) + pairwise_prev;
        rep->round_energy[t] = energy_prev / r->tables->scale;
        rep->round_changed[t] = changed;
        rep->iterations = t + 1;
        if (options->verbose)
            fprintf(stderr, "grabcut%s: round %d: energy %.6g, %" PRId64 " labels changed\n", tag,
                    t + 1, rep->round_energy[t], changed);
        if (t > 0 && changed == 0) {
            rep->converged = 1;
            rep->stopped_by = GCUT_SEG_STOP_UNCHANGED;
            break;
        }
        if (t + 1 >= rounds)
            break;
        {
            /* A class the cut left empty has nothing to re-fit to: the cut stands. */
            int64_t fg = 0;
            for (int64_t i = 0; i < r->n; i++)
                fg += r->label[i];
            if (fg == 0 || fg == r->n) {
                rep->converged = 1;
                rep->stopped_by = GCUT_SEG_STOP_EMPTY_CLASS;
                break;
            }
        }
        /* ---- re-fit the models to the cut; keep them only if they lower its energy ---- */
        gcut__gmm saved[2];
        memcpy(saved, r->gmm, sizeof saved);
        memcpy(r->cost_saved, r->cost, (size_t)r->np * 2 * sizeof(double));
        memcpy(r->best_saved, r->best, (size_t)r->np * 2);
        if ((st = fit_models(r, true)) != GCUT_OK || (st = apply_costs(r, sigma, scale)) != GCUT_OK)
            goto done;
        const double refit = regional_energy(r) + pairwise_prev;
        if (options->verbose)
            fprintf(stderr, "grabcut%s: round %d: re-fitted models give the cut energy %.6g\n", tag,
                    t + 1, refit / r->tables->scale);
        if (refit > energy_prev) {
            /* Cannot happen with exact EM; with the covariance floor and the clamp it could:
             * the previous models and their cut stand (the tables must match the mask). */
            memcpy(r->gmm, saved, sizeof saved);
            memcpy(r->cost, r->cost_saved, (size_t)r->np * 2 * sizeof(double));
            memcpy(r->best, r->best_saved, (size_t)r->np * 2);
            if ((st = apply_costs(r, sigma, scale)) != GCUT_OK)
                goto done;
            rep->converged = 1;
            rep->stopped_by = GCUT_SEG_STOP_REFIT;
            break;
        }
        const double tb = gcut__now_ms();
        if (use_graph) {
            for (int64_t j = 0; j < r->cn; j++) {
                int32_t s, u;
                terminals(r, j, &s, &u);
                if (s == r->cur_source[j] && u == r->cur_sink[j])
                    continue;
                r->cur_source[j] = s, r->cur_sink[j] = u;
                if ((st = gcut_graph_set_tweights(graph, j, s, u)) != GCUT_OK)
                    goto done;
            }
        } else if (!on_gpu) {
            int32_t *src = gcut_grid_terminal_data(grid, GCUT_SOURCE);
            int32_t *snk = gcut_grid_terminal_data(grid, GCUT_SINK);
            int64_t num_marks = 0;
            prepushed = 0;
            for (int64_t j = 0; j < r->cn; j++) {
                if (r->hard[r->crop_index[j]] != GCUT_SEED_UNKNOWN)
                    continue;
                int32_t s, u;
                terminals(r, j, &s, &u);
                if (r->pushed != NULL)
                    pushed_terminals(s, u, r->pushed[j], &s, &u, &prepushed);
                if (s == src[j] && u == snk[j])
                    continue;
                src[j] = s, snk[j] = u;
                if (marks != NULL)
                    marks[num_marks++] = j;
            }
            /* Only terminals changed (the arcs are the image's, set once): the context's warm
             * re-solve reads the marked nodes' terminals alone. */
            if (ctx != NULL &&
                (st = gcut_grid_context_mark_terminals(ctx, marks, num_marks)) != GCUT_OK)
                goto done;
        }
        rep->build_ms += gcut__now_ms() - tb;
    }
    if (final_grid != NULL) {
        /* The last round's energy on the whole image, for certificates. */
        int64_t shape[3] = {image->depth, image->height, image->width};
        if ((st = gcut_grid_create(three_d ? 3 : 2, three_d ? shape : shape + 1, r->p.connectivity,
                                   final_grid)) != GCUT_OK)
            goto done;
        gcut__seg_fill_grid(r->pixels, r->hard, r->tables, *final_grid);
    }
    int64_t fg = 0;
    for (int64_t i = 0; i < r->n; i++) {
        mask[i] = r->label[i];
        fg += r->label[i];
    }
    rep->scale = r->tables->scale;
    rep->sigma = sigma;
    rep->lambda = r->p.lambda;
    rep->connectivity = r->p.connectivity;
    rep->model = r->p.model;
    rep->seeds_foreground = count_fg;
    rep->seeds_background = count_bg;
    rep->model_ms = r->model_ms;
    rep->foreground_pixels = fg;
    rep->energy = rep->stats.flow; /* the last cut's capacity (unknown pixels' graph) */
    if (gmm_out != NULL)
        memcpy(gmm_out, r->gmm, sizeof r->gmm);
done:
    gcut__free(crop_labels);
    gcut__free(marks);
    gcut_graph_free(graph);
    if (ctx != NULL)
        gcut_grid_context_free(ctx); /* and its grid */
    else
        gcut_grid_free(grid);
    run_free(r);
    return st;
}

/* Halve the run's working image and hard codes (2x2 blocks, clipped at the far edges: the
 * rounded mean colour; background if a pixel of the block is background and none foreground,
 * foreground likewise, unknown otherwise), make `coarse` rounds on it, and take its last cut,
 * upsampled, as the first labels of the unknown pixels here. Exactness is untouched: each
 * half-size round is an exact cut of its own energy, and only the models the full-size rounds
 * start from come from it. A copy that cannot be cut (a class lost in mixed blocks) is
 * skipped: the full-size rounds then start as without it. */
static gcut_status coarse_start(gc_run *r, const gcut_image *image, bool boxed, int coarse,
                                const gcut_options *options, gcut_seg_report *rep,
                                double *coarse_solve_ms) {
    const int64_t w = image->width, h = image->height, cw = (w + 1) / 2, chh = (h + 1) / 2;
    const int64_t cn = cw * chh;
    const int ch = r->ch;
    uint8_t *px = gcut__malloc(gcut__mul_size((size_t)cn, (size_t)ch), "half-size image");
    uint8_t *codes = gcut__malloc((size_t)cn, "half-size seeds");
    uint8_t *cmask = gcut__malloc((size_t)cn, "half-size mask");
    gcut_seg_report *crep = gcut__malloc(sizeof *crep, "half-size report");
    gcut_status st = GCUT_OK;
    if (px == NULL || codes == NULL || cmask == NULL || crep == NULL) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    for (int64_t cy = 0; cy < chh; cy++)
        for (int64_t cx = 0; cx < cw; cx++) {
            unsigned sum[3] = {0, 0, 0}, count = 0, fg = 0, bg = 0;
            for (int64_t y = 2 * cy; y < 2 * cy + 2 && y < h; y++)
                for (int64_t x = 2 * cx; x < 2 * cx + 2 && x < w; x++) {
                    const int64_t i = y * w + x;
                    for (int c = 0; c < ch; c++)
                        sum[c] += r->pixels[i * ch + c];
                    count++;
                    fg |= r->hard[i] == GCUT_SEED_FOREGROUND;
                    bg |= r->hard[i] == GCUT_SEED_BACKGROUND;
                }
            const int64_t j = cy * cw + cx;
            for (int c = 0; c < ch; c++)
                px[j * ch + c] = (uint8_t)((sum[c] + count / 2) / count);
            codes[j] = bg && !fg   ? GCUT_SEED_BACKGROUND
                       : fg && !bg ? GCUT_SEED_FOREGROUND
                                   : GCUT_SEED_UNKNOWN;
        }
    gcut_image half = {cw, chh, 1, ch, 8, px};
    gcut_seg_params cp = r->p;
    cp.iterations = coarse;
    if (boxed && cp.connectivity == 8) {
        /* With a box the copies' rounds are 4-connected at twice lambda (about the same
         * smoothness per pixel: 8 neighbours at 1 and 1/sqrt 2 weigh 6.8, 4 at 2 weigh 8): half
         * the arcs, and on the two photo sets of docs/GRABCUT.md the box's errors unchanged
         * (7.33% / 2.57% against 7.37% / 2.59%); the full-size cut stays 8-connected. Seeds
         * keep 8 (lasso trimaps lost 0.3 points on the composites). */
        cp.connectivity = 4;
        cp.lambda *= 2;
    }
    /* A pyramid while the copy is large: halved again (all but its last round) when it has
     * PYRAMID_MIN unknown pixels. */
    int64_t unknown = 0;
    for (int64_t j = 0; j < cn; j++)
        unknown += codes[j] == GCUT_SEED_UNKNOWN;
    cp.coarse_rounds = unknown >= PYRAMID_MIN && coarse > 1 ? coarse - 1 : -1;
    gcut__gmm gmm[2];
    st = grabcut_rounds(&half, NULL, codes, boxed, &cp, options, cmask, crep, NULL, " (half size)",
                        gmm);
    if (st == GCUT_ERR_INVALID_ARG) {
        if (options->verbose)
            fprintf(stderr, "grabcut: no half-size rounds: %s\n", gcut_last_error());
        st = GCUT_OK;
        goto done;
    }
    if (st != GCUT_OK)
        goto done;
    r->model_ms += crep->model_ms;
    *coarse_solve_ms = crep->solve_ms;
    {
        /* The half-size cut, upsampled; one that leaves a class empty has no models to give
         * (nothing to fit one of them to): the full-size rounds then start as without it. */
        int64_t fg = 0;
        for (int64_t y = 0, i = 0; y < h; y++) /* row by row: no division per pixel */
            for (int64_t x = 0; x < w; x++, i++) {
                if (r->hard[i] == GCUT_SEED_UNKNOWN)
                    r->label[i] = cmask[(y / 2) * cw + x / 2];
                fg += r->label[i];
            }
        if (fg == 0 || fg == r->n) {
            for (int64_t i = 0; i < r->n; i++)
                r->label[i] = r->hard[i] == GCUT_SEED_FOREGROUND ||
                              (boxed && r->hard[i] == GCUT_SEED_UNKNOWN);
            if (options->verbose)
                fprintf(stderr, "grabcut: the half-size cut left a class empty: not used\n");
            goto done;
        }
    }
    if (r->p.model == GCUT_MODEL_GMM && gmm[0].k > 0 && gmm[1].k > 0) {
        memcpy(r->gmm, gmm, sizeof gmm);
        r->start_from_gmm = true;
    }
    /* Its rounds, and those of any smaller copy it made first, smallest first. */
    rep->coarse_iterations = crep->coarse_iterations + crep->iterations;
    memcpy(rep->coarse_energy, crep->coarse_energy,
           (size_t)crep->coarse_iterations * sizeof(double));
    memcpy(rep->coarse_energy + crep->coarse_iterations, crep->round_energy,
           (size_t)crep->iterations * sizeof(double));
    rep->stats.augmentations += crep->stats.augmentations;
    rep->stats.sweeps += crep->stats.sweeps;
    rep->stats.global_relabels += crep->stats.global_relabels;
    rep->stats.pushes += crep->stats.pushes;
    rep->stats.build_ms += crep->stats.build_ms;
    rep->stats.solve_ms += crep->stats.solve_ms;
done:
    gcut__free(px);
    gcut__free(codes);
    gcut__free(cmask);
    gcut__free(crep);
    return st;
}

gcut_status gcut__grabcut(const gcut_image *image, const gcut_rect *rect, const uint8_t *seeds,
                          const gcut_seg_params *params, const gcut_options *options, uint8_t *mask,
                          gcut_seg_report *report, gcut_grid **final_grid) {
    return grabcut_run(image, rect, seeds, rect != NULL, params, options, mask, report, final_grid,
                       "");
}

gcut_status gcut_grabcut(const gcut_image *image, const gcut_rect *rect, const uint8_t *seeds,
                         const gcut_seg_params *params, const gcut_options *options, uint8_t *mask,
                         gcut_seg_report *report) {
    return gcut__grabcut(image, rect, seeds, params, options, mask, report, NULL);
}
