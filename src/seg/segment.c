/* segment.c - seeded segmentation of real images (Boykov-Jolly; Lattari 2010 ch. 3.4):
 * parameters, the energy built from seeds and learnt colour models into a grid, the one-call
 * gcut_segment(), and the overlay a person looks at. */
#include "internal.h"
#include "seg_internal.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gcut_seg_params_init(gcut_seg_params *params) {
    if (params == NULL)
        return;
    memset(params, 0, sizeof *params);
    params->lambda = 50.0;
    params->sigma = 0.0;
    params->connectivity = 0;
    params->model = GCUT_MODEL_AUTO;
    params->gmm_components = 5;
    params->histogram_bins = 32;
    params->scale = 0.0;
    params->seed = 1;
    params->levels = 0;
    params->band = 2;
    params->band_grow = 0;
    params->band_solver = NULL;
}

gcut_status gcut__seg_check_image(const char *fn, const gcut_image *image) {
    if (image == NULL || image->pixels == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "%s: image or its pixels is NULL", fn);
    if (image->width < 1 || image->height < 1 || image->depth < 1)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "%s: image size %" PRId64 "x%" PRId64 "x%" PRId64 " is not valid", fn,
                          image->width, image->height, image->depth);
    if (image->channels < 1 || image->channels > 4)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "%s: image has %d channels (1 to 4 supported)", fn,
                          image->channels);
    if (image->bit_depth != 8 && image->bit_depth != 16)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "%s: image bit depth %d is not 8 or 16", fn,
                          image->bit_depth);
    if (image->width > INT64_MAX / image->height / image->depth / 64)
        return gcut__fail(GCUT_ERR_OVERFLOW, "%s: image too large", fn);
    return GCUT_OK;
}

/* Resolve defaults (connectivity 0, model AUTO) into *p and check every field. */
gcut_status gcut__seg_resolve_params(const gcut_seg_params *given, bool three_d, bool colour,
                                     gcut_seg_params *p) {
    if (given == NULL)
        gcut_seg_params_init(p);
    else
        *p = *given;
    if (!(p->lambda >= 0.0) || !isfinite(p->lambda))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "segmentation: lambda %g must be >= 0", p->lambda);
    if (isnan(p->sigma) || isinf(p->sigma))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "segmentation: sigma %g is not finite", p->sigma);
    if (p->connectivity == 0)
        p->connectivity = three_d ? 6 : 8;
    if ((!three_d && p->connectivity != 4 && p->connectivity != 8) ||
        (three_d && p->connectivity != 6 && p->connectivity != 26))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "segmentation: connectivity %d not valid for a %s image (2D: 4 or 8; "
                          "3D: 6 or 26)",
                          p->connectivity, three_d ? "3D" : "2D");
    if (p->model == GCUT_MODEL_AUTO)
        p->model = colour ? GCUT_MODEL_GMM : GCUT_MODEL_HISTOGRAM;
    if (p->model != GCUT_MODEL_HISTOGRAM && p->model != GCUT_MODEL_GMM)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "segmentation: unknown model %d", (int)p->model);
    if (p->model == GCUT_MODEL_GMM && (p->gmm_components < 1 || p->gmm_components > 32))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "segmentation: gmm_components %d must be in 1..32",
                          p->gmm_components);
    if (p->model == GCUT_MODEL_HISTOGRAM &&
        (p->histogram_bins < 2 || p->histogram_bins > (colour ? 64 : 256)))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "segmentation: histogram_bins %d must be in 2..%d for a %s image",
                          p->histogram_bins, colour ? 64 : 256, colour ? "colour" : "gray");
    if (isnan(p->scale) || isinf(p->scale))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "segmentation: scale %g is not finite", p->scale);
    if (p->levels != GCUT_SEG_LEVELS_AUTO && (p->levels < 0 || p->levels > GCUT_SEG_MAX_LEVELS))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "segmentation: levels %d must be 0 (full solve), 1..%d or "
                          "GCUT_SEG_LEVELS_AUTO (-1)",
                          p->levels, GCUT_SEG_MAX_LEVELS);
    if (p->band < 0 || p->band > 1000000)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "segmentation: band width %d must be in 0..1000000",
                          p->band);
    if (p->band_grow != 0 && p->band_grow != 1)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "segmentation: band_grow %d must be 0 or 1",
                          p->band_grow);
    if (p->band_solver != NULL && strcmp(p->band_solver, "auto") != 0) {
        gcut_solver_info info;
        if (gcut_solver_find(p->band_solver, &info) != GCUT_OK)
            return gcut__fail(GCUT_ERR_NOT_FOUND,
                              "segmentation: band_solver '%s': no such solver in this build "
                              "(see `gcut solvers`)",
                              p->band_solver);
        if (!(info.flags & GCUT_TAKES_GRAPH))
            return gcut__fail(GCUT_ERR_UNSUPPORTED,
                              "segmentation: band_solver '%s' takes grids only; bands are "
                              "general graphs (bk, cuda-general, ...)",
                              p->band_solver);
        if (!info.available)
            return gcut__fail(GCUT_ERR_NO_DEVICE,
                              "segmentation: band_solver '%s' needs a CUDA GPU and none is "
                              "usable here",
                              p->band_solver);
    }
    if (p->iterations < 0 || p->iterations > GCUT_SEG_MAX_ITERATIONS)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "segmentation: iterations %d must be in 1..%d (0 = default)",
                          p->iterations, GCUT_SEG_MAX_ITERATIONS);
    return GCUT_OK;
}

/* One side's colour model (foreground 0, background 1): fit, then a cost per colour. */
typedef struct side_model {
    const double *counts;
    const uint8_t *present;
    int64_t num_colors;
    int channels, side;
    const gcut_seg_params *p;
    double *cost;
    gcut_status status;
    char message[256];
} side_model;

static void *side_model_run(void *arg) {
    side_model *m = arg;
    const gcut_seg_params *p = m->p;
    m->status =
        gcut__seg_model_costs(m->counts + m->side * m->num_colors, m->present, m->num_colors,
                              m->channels, p->model, p->gmm_components, p->histogram_bins,
                              p->seed + (uint64_t)m->side, m->cost + m->side * m->num_colors);
    if (m->status != GCUT_OK) /* gcut_last_error() is per thread: keep the message */
        snprintf(m->message, sizeof m->message, "%s", gcut_last_error());
    return NULL;
}

/* Both models, the background one on a second thread (each is independent and deterministic
 * for its seed, so the costs are the same as one after the other; the fit is most of the
 * model time of `gcut segment`). Falls back to one thread if none can be started. */
static gcut_status model_costs_both(const double *counts, const uint8_t *present, int64_t nc,
                                    int ch, const gcut_seg_params *p, double *cost) {
    side_model m[2];
    for (int side = 0; side < 2; side++)
        m[side] = (side_model){counts, present, nc, ch, side, p, cost, GCUT_OK, ""};
    pthread_t thread;
    /* GCUT_SEG_MODEL_THREADS=1: one after the other (for before/after timings). */
    const bool threaded = gcut__env_int("GCUT_SEG_MODEL_THREADS", 2, 1, 2) == 2 &&
                          pthread_create(&thread, NULL, side_model_run, &m[1]) == 0;
    side_model_run(&m[0]);
    if (threaded)
        pthread_join(thread, NULL);
    else
        side_model_run(&m[1]);
    for (int side = 0; side < 2; side++)
        if (m[side].status != GCUT_OK)
            return gcut__fail(m[side].status, "%s", m[side].message);
    return GCUT_OK;
}

/* One part of gcut__seg_prepare's scan of the pixels: [i0, i1) checked for seed codes past
 * background (bad: the first, or -1), seeds counted, colours present set in bits. */
typedef struct scan_part {
    const uint8_t *pixels, *seeds;
    int ch;
    int64_t i0, i1, fg, bg, bad;
    uint64_t *bits;
} scan_part;

static void *scan_part_run(void *arg) {
    scan_part *job = arg;
    const uint8_t *pixels = job->pixels, *seeds = job->seeds;
    const int ch = job->ch;
    int64_t fg = 0, bg = 0;
    for (int64_t i = job->i0; i < job->i1; i++) {
        const uint8_t code = seeds[i];
        if (code > GCUT_SEED_BACKGROUND) {
            job->bad = i;
            break;
        }
        fg += code == GCUT_SEED_FOREGROUND;
        bg += code == GCUT_SEED_BACKGROUND;
        const int64_t q = gcut__seg_color_index(pixels + i * ch, ch);
        job->bits[q >> 6] |= (uint64_t)1 << (q & 63);
    }
    job->fg = fg;
    job->bg = bg;
    return NULL;
}

/* Parts of the scan: one per 2^17 pixels, at most the online cores. */
static int scan_parts(int64_t n) {
    int64_t parts = n >> 17;
    const int cores = gcut__online_cores();
    parts = parts < 1 ? 1 : parts > cores ? cores : parts;
    return (int)(parts > GCUT__MAX_JOBS ? GCUT__MAX_JOBS : parts);
}

/* GCUT_SEG_PROFILE=1: each step of the models and the energy on stderr (for docs/SEGMENT.md's
 * phase table; the printed phases lump them together). */
static void seg_profile(const char *step, double *since) {
    const double now = gcut__now_ms();
    if (getenv("GCUT_SEG_PROFILE") != NULL)
        fprintf(stderr, "seg profile: %-34s %7.2f ms\n", step, now - *since);
    *since = now;
}

gcut_status gcut__seg_prepare(const gcut_image *image, const uint8_t *seeds,
                              const gcut_seg_params *params, gcut__seg_tables **tables_out,
                              const uint8_t **pixels_out, uint8_t **owned_out,
                              gcut_seg_report *report) {
    *tables_out = NULL;
    *pixels_out = NULL;
    *owned_out = NULL;
    gcut_status st = gcut__seg_check_image("segmentation", image);
    if (st != GCUT_OK)
        return st;
    if (seeds == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "segmentation: seeds is NULL");
    const bool three_d = image->depth > 1, colour = image->channels >= 3;
    gcut_seg_params p;
    if ((st = gcut__seg_resolve_params(params, three_d, colour, &p)) != GCUT_OK)
        return st;
    const double t0 = gcut__now_ms();
    double step = t0;
    const int64_t n = image->width * image->height * image->depth;
    const uint8_t *pixels;
    uint8_t *owned = NULL;
    int ch;
    if ((st = gcut__seg_working_image(image, &pixels, &owned, &ch)) != GCUT_OK)
        return st;
    seg_profile("working image", &step);
    gcut__seg_tables *tables = NULL;
    double *counts = NULL;
    uint8_t *present = NULL;
    uint64_t *bits = NULL;
    if ((st = gcut__seg_tables_alloc(ch, p.connectivity, &tables)) != GCUT_OK)
        goto done;
    const int64_t nc = tables->num_colors;
    /* counts[0..nc) foreground, [nc..2nc) background; then costs in the same layout. */
    counts = gcut__calloc((size_t)nc * 4, sizeof(double), "seed colour counts");
    /* Only the colours the image has are evaluated: a photo uses a few ten thousand of the
     * 2^18 quantised colours, and each costs two mixture evaluations. */
    present = gcut__calloc((size_t)nc, 1, "colours present");
    scan_part parts[GCUT__MAX_JOBS];
    const int num_parts = scan_parts(n);
    const int64_t words = (nc + 63) / 64;
    bits = gcut__calloc((size_t)num_parts * (size_t)words, sizeof(uint64_t), "colours present");
    if (counts == NULL || present == NULL || bits == NULL) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    for (int t = 0; t < num_parts; t++)
        parts[t] = (scan_part){pixels,
                               seeds,
                               ch,
                               n * t / num_parts,
                               n * (t + 1) / num_parts,
                               0,
                               0,
                               -1,
                               bits + (size_t)t * (size_t)words};
    seg_profile("tables and buffers allocated", &step);
    gcut__run_jobs(scan_part_run, parts, sizeof parts[0], num_parts);
    seg_profile("pixel scan (threads)", &step);
    int64_t count_fg = 0, count_bg = 0;
    for (int t = 0; t < num_parts; t++) {
        if (parts[t].bad >= 0) { /* the first part with one holds the first */
            char where[96];
            gcut__seg_pixel_name(image, parts[t].bad, where, sizeof where);
            st = gcut__fail(GCUT_ERR_INVALID_ARG,
                            "seeds: pixel %s has code %u (0 unknown, 1 foreground, 2 "
                            "background)",
                            where, seeds[parts[t].bad]);
            goto done;
        }
        count_fg += parts[t].fg;
        count_bg += parts[t].bg;
    }
    if (count_fg == 0 || count_bg == 0) {
        st = gcut__fail(GCUT_ERR_INVALID_ARG,
                        "seeds: no %s seeds (%" PRId64 " foreground, %" PRId64
                        " background); mark some pixels of %s",
                        count_fg == 0 && count_bg == 0 ? "foreground or background"
                        : count_fg == 0                ? "foreground"
                                                       : "background",
                        count_fg, count_bg,
                        count_fg == 0 && count_bg == 0 ? "each"
                        : count_fg == 0                ? "the object"
                                                       : "the rest");
        goto done;
    }
    for (int64_t w = 0; w < words; w++) {
        uint64_t word = 0;
        for (int t = 0; t < num_parts; t++)
            word |= parts[t].bits[w];
        for (; word != 0; word &= word - 1)
            present[w * 64 + __builtin_ctzll(word)] = 1;
    }
    /* The seeds' colours (integer counts: the same sums in any order), skipping unseeded
     * pixels eight at a time. */
    for (int64_t i = 0; i < n;) {
        if (i + 8 <= n) {
            uint64_t eight;
            memcpy(&eight, seeds + i, 8);
            if (eight == 0) {
                i += 8;
                continue;
            }
        }
        if (seeds[i] != GCUT_SEED_UNKNOWN)
            counts[(seeds[i] == GCUT_SEED_BACKGROUND ? nc : 0) +
                   gcut__seg_color_index(pixels + i * ch, ch)] += 1.0;
        i++;
    }
    double *cost = counts + 2 * nc;
    seg_profile("present colours, seed counts", &step);
    if ((st = model_costs_both(counts, present, nc, ch, &p, cost)) != GCUT_OK)
        goto done;
    seg_profile("models and colour costs (both sides)", &step);
    const double t1 = gcut__now_ms();
    double sigma = p.sigma > 0 ? p.sigma
                               : gcut__seg_estimate_sigma(pixels, ch, image->width, image->height,
                                                          image->depth);
    seg_profile("sigma", &step);
    if ((st = gcut__seg_tables_fill(tables, cost, cost + nc, p.lambda, sigma, p.scale,
                                    p.connectivity)) != GCUT_OK)
        goto done;
    seg_profile("tables filled (seg_tables.c)", &step);
    if (report != NULL) {
        memset(report, 0, sizeof *report);
        report->scale = tables->scale;
        report->sigma = sigma;
        report->lambda = p.lambda;
        report->connectivity = p.connectivity;
        report->model = p.model;
        report->seeds_foreground = count_fg;
        report->seeds_background = count_bg;
        report->model_ms = t1 - t0;
        report->build_ms = gcut__now_ms() - t1;
    }
    *tables_out = tables;
    *pixels_out = pixels;
    *owned_out = owned;
    tables = NULL;
    owned = NULL;
done:
    gcut__free(counts);
    gcut__free(present);
    gcut__free(bits);
    gcut__seg_tables_free(tables);
    gcut__free(owned);
    return st;
}

gcut_status gcut_seg_build_grid(const gcut_image *image, const uint8_t *seeds,
                                const gcut_seg_params *params, gcut_grid **out,
                                gcut_seg_report *report) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_seg_build_grid: out is NULL");
    *out = NULL;
    gcut__seg_tables *tables;
    const uint8_t *pixels;
    uint8_t *owned;
    gcut_seg_report local;
    gcut_seg_report *r = report != NULL ? report : &local;
    gcut_status st = gcut__seg_prepare(image, seeds, params, &tables, &pixels, &owned, r);
    if (st != GCUT_OK)
        return st;
    const double t0 = gcut__now_ms();
    const bool three_d = image->depth > 1;
    int64_t shape[3] = {image->depth, image->height, image->width};
    gcut_grid *grid = NULL;
    st = gcut_grid_create(three_d ? 3 : 2, three_d ? shape : shape + 1, r->connectivity, &grid);
    if (st == GCUT_OK) {
        gcut__seg_fill_grid(pixels, seeds, tables, grid);
        r->build_ms += gcut__now_ms() - t0;
        *out = grid;
    }
    gcut__seg_tables_free(tables);
    gcut__free(owned);
    return st;
}

#ifdef GCUT_HAVE_CUDA
/* gcut_segment through cuda-grid with the energy built on the GPU (gcut__cudagrid_solve_image):
 * the same tables, so the same capacities bit for bit as gcut__seg_fill_grid. The report's
 * build_ms gains the construction kernel; solve_ms is the rest of the device work (upload of
 * the image, preprocessing, solve, labels back). */
static gcut_status segment_on_gpu(const gcut_image *image, const uint8_t *pixels,
                                  const uint8_t *seeds, const gcut__seg_tables *tables,
                                  const gcut_options *options, uint8_t *mask, int64_t *flow,
                                  gcut_seg_report *r) {
    const bool three_d = image->depth > 1;
    const int64_t shape[3] = {image->depth, image->height, image->width};
    double construct_ms = 0;
    memset(&r->stats, 0, sizeof r->stats);
    gcut_status st = gcut__cudagrid_solve_image(
        pixels, seeds, tables, three_d ? 3 : 2, three_d ? shape : shape + 1, r->connectivity,
        options, flow, mask, &r->stats, &construct_ms, NULL);
    if (st != GCUT_OK)
        return st;
    snprintf(r->stats.solver, sizeof r->stats.solver, "cuda-grid");
    r->build_ms += construct_ms;
    r->solve_ms = r->stats.solve_ms + r->stats.build_ms - construct_ms;
    return GCUT_OK;
}
#endif

/* parallel-bk's pre-pass rounds for a picture's energy (src/cpu/par_prepass.c;
 * docs/CPU-PARALLEL.md, "Seventh pass"): tiles solved alone by cpu-pr, first a 16 x 16 tiling,
 * then an 8 x 8 one, both shifted half a tile, before the blocks and merges. Smoothness ~20x the
 * data term leaves long paths that bk's blocks find slowly and that cross the blocks' borders.
 * On the 16-core host (docs/PERFORMANCE.md, "One process, sixth pass"), hard photos, printed
 * solve without -> with it: 640x480 220 -> 112 ms, 1024x768 251 -> 165, 1280x720 263 -> 176,
 * 1600x900 280 -> 202, 1920x1080 300 -> 226; but 248 -> 296 ms at 2560x1440 and 340 -> 645 at
 * 3840x2160 (the 8 x 8 tiles grow too large for cpu-pr), and 22 -> 125 ms on the bench's
 * synthetic 1080p grid (an easy energy: every other use of parallel-bk keeps no pre-pass). So
 * pictures of SEG_PBK_PREPASS_MIN_PIXELS to SEG_PBK_PREPASS_MAX_PIXELS take it: the sizes
 * measured to win, rounded to powers of two. */
#define SEG_PBK_PREPASS "16,8"
#define SEG_PBK_PREPASS_MIN_PIXELS ((int64_t)1 << 18)
#define SEG_PBK_PREPASS_MAX_PIXELS ((int64_t)1 << 21)

/* The host path: the grid filled from the tables, then gcut_grid_solve. */
static gcut_status segment_on_host(const gcut_image *image, const uint8_t *pixels,
                                   const uint8_t *seeds, const gcut__seg_tables *tables,
                                   const gcut_options *options, uint8_t *mask, int64_t *flow,
                                   gcut_seg_report *r) {
    const double t0 = gcut__now_ms();
    double step = t0;
    const bool three_d = image->depth > 1;
    int64_t shape[3] = {image->depth, image->height, image->width};
    gcut_grid *grid = NULL;
    /* Not zeroed: gcut__seg_fill_grid writes every entry (on all threads), where zeroing 83 MB
     * at 1080p took one thread 13 ms first on the H100 host (docs/CPU-PARALLEL.md, "Eighth pass").
     * GCUT_SEG_GRID_ZERO=1 zeroes it as before (for before/after timings). */
    gcut_status st =
        (gcut__env_int("GCUT_SEG_GRID_ZERO", 0, 0, 1) ? gcut_grid_create : gcut__grid_create_unset)(
            three_d ? 3 : 2, three_d ? shape : shape + 1, r->connectivity, &grid);
    if (st != GCUT_OK)
        return st;
    seg_profile("grid created", &step);
    gcut__seg_fill_grid(pixels, seeds, tables, grid);
    seg_profile("grid filled (threads)", &step);
    r->build_ms += gcut__now_ms() - t0;
    /* The labels land in mask and are turned into 1 = foreground in place. parallel-bk on a
     * picture of 640x480 to 1080p starts with its pre-pass (SEG_PBK_PREPASS). */
    const int64_t area = image->width * image->height;
    if (options != NULL && options->solver != NULL && strcmp(options->solver, "parallel-bk") == 0 &&
        !three_d && area >= SEG_PBK_PREPASS_MIN_PIXELS && area <= SEG_PBK_PREPASS_MAX_PIXELS)
        st = gcut__pbk_solve_grid_prepass(grid, true, options, SEG_PBK_PREPASS, flow, mask,
                                          &r->stats);
    else
        st = gcut_grid_solve(grid, options, flow, mask, &r->stats);
    gcut_grid_free(grid);
    if (st != GCUT_OK)
        return st;
    r->solve_ms = r->stats.solve_ms + r->stats.build_ms;
    return GCUT_OK;
}

gcut_status gcut_segment(const gcut_image *image, const uint8_t *seeds,
                         const gcut_seg_params *params, const gcut_options *options, uint8_t *mask,
                         gcut_seg_report *report) {
    if (mask == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_segment: mask is NULL");
    if (params != NULL && params->iterations > 1 && params->levels != 0)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "segmentation: GrabCut rounds (iterations %d) and multilevel bands "
                          "(levels %d) cannot be combined",
                          params->iterations, params->levels);
    /* Re-fitted models (GrabCut rounds) are asked for: the iterative path. */
    if (params != NULL && params->iterations > 1)
        return gcut_grabcut(image, NULL, seeds, params, options, mask, report);
    gcut_seg_report local;
    gcut_seg_report *r = report != NULL ? report : &local;
    int64_t flow = 0;
    gcut_status st;
    if (params != NULL && params->levels != 0) /* multilevel banded: src/seg/band.c */
        return gcut__band_segment(image, seeds, params, options, mask, r);
    /* The models first, the solver after: picking cuda-grid waits for CUDA's start-up, which
     * gcut_device_init() may be running on another thread meanwhile. */
    gcut__seg_tables *tables;
    const uint8_t *pixels;
    uint8_t *owned;
    if ((st = gcut__seg_prepare(image, seeds, params, &tables, &pixels, &owned, r)) != GCUT_OK)
        return st;
    const gcut__solver *solver =
        gcut__solver_pick(options, true, image->width * image->height * image->depth, &st);
    if (solver != NULL) { /* else st holds the pick's failure */
#ifdef GCUT_HAVE_CUDA
        /* cuda-grid (named, or picked by "auto" when a GPU is present) builds the capacities
         * on the device from the image: the grid never exists on the host. */
        if (strcmp(solver->name, "cuda-grid") == 0)
            st = segment_on_gpu(image, pixels, seeds, tables, options, mask, &flow, r);
        else
#endif
            st = segment_on_host(image, pixels, seeds, tables, options, mask, &flow, r);
    }
    gcut__seg_tables_free(tables);
    gcut__free(owned);
    if (st != GCUT_OK)
        return st;
    const int64_t n = image->width * image->height * image->depth;
    int64_t fg = 0;
    for (int64_t i = 0; i < n; i++) {
        mask[i] = mask[i] == GCUT_SOURCE ? 1 : 0;
        fg += mask[i];
    }
    r->stats.flow = flow;
    r->foreground_pixels = fg;
    r->energy = flow; /* a minimum cut's capacity is its labelling's energy */
    r->iterations = 1;
    r->converged = 0;
    r->round_energy[0] = 0; /* not computed by the single cut */
    r->round_changed[0] = fg;
    return GCUT_OK;
}

gcut_status gcut_overlay(const gcut_image *image, const uint8_t *mask, gcut_image *out) {
    gcut_status st = gcut__seg_check_image("gcut_overlay", image);
    if (st != GCUT_OK)
        return st;
    if (mask == NULL || out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_overlay: mask or out is NULL");
    if (image->depth != 1)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "gcut_overlay: 2D images only (depth is %" PRId64 ")", image->depth);
    const uint8_t *pixels;
    uint8_t *owned = NULL;
    int ch;
    if ((st = gcut__seg_working_image(image, &pixels, &owned, &ch)) != GCUT_OK)
        return st;
    const int64_t w = image->width, h = image->height;
    if ((st = gcut_image_alloc(out, w, h, 1, 3, 8)) != GCUT_OK) {
        gcut__free(owned);
        return st;
    }
    uint8_t *dst = out->pixels;
    /* Foreground: 60% picture, 40% red. Boundary: pixels with a 4-neighbour of the other
     * label, on both sides, so the line is two pixels wide and visible at any zoom. */
    static const uint8_t tint[3] = {255, 32, 32}, line[3] = {255, 230, 0};
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            const int64_t i = y * w + x;
            const uint8_t m = mask[i] != 0;
            const bool edge =
                (x > 0 && (mask[i - 1] != 0) != m) || (x + 1 < w && (mask[i + 1] != 0) != m) ||
                (y > 0 && (mask[i - w] != 0) != m) || (y + 1 < h && (mask[i + w] != 0) != m);
            for (int c = 0; c < 3; c++) {
                const uint8_t v = pixels[i * ch + (ch == 3 ? c : 0)];
                dst[i * 3 + c] = edge ? line[c] : m ? (uint8_t)((v * 6 + tint[c] * 4 + 5) / 10) : v;
            }
        }
    gcut__free(owned);
    return GCUT_OK;
}
