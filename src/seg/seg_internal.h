/* seg_internal.h - segmentation energies as host-computed lookup tables (Boykov-Jolly regional
 * and contrast-sensitive boundary terms; Lattari 2010 ch. 3.4, Table 1), and the kernel that
 * fills a grid from an 8-bit image, seeds and tables. Plain C, includable from CUDA .cu files
 * so that a GPU builder can mirror gcut__seg_fill_grid() line by line with the same tables. */
#ifndef GCUT_SEG_INTERNAL_H
#define GCUT_SEG_INTERNAL_H

#include "gcut.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define GCUT__SEG_HD __host__ __device__
#else
#define GCUT__SEG_HD
#endif

/* Largest finite capacity a table entry may hold (unary or pairwise). With at most 26
 * neighbours, a node's capacities sum to at most K + 26 * bound with K = 1 + 26 * bound, i.e.
 * below 2^26, far from INT32_MAX; a residual pair (cap + rev_cap) stays below 2^21. */
#define GCUT__SEG_CAP_BOUND (1 << 20)
/* Regional costs are clamped to this many nats (after subtracting the smaller of the two):
 * a pixel's colour can never outweigh this much evidence against its label. */
#define GCUT__SEG_UNARY_MAX_NATS 20.0
/* Distance classes of neighbour pairs: |offset| = 1, sqrt 2, sqrt 3. */
#define GCUT__SEG_CLASSES 3

/** The energy as integer lookup tables. A working image is 8-bit gray (channels 1) or 8-bit
 *  RGB (channels 3). Foreground is the source side (GCUT_SOURCE), so the source capacity of a
 *  pixel is the cost of calling it background and the sink capacity the cost of calling it
 *  foreground. */
typedef struct gcut__seg_tables {
    int channels;          /**< 1 or 3: the working image's channels */
    int quant_shift;       /**< low bits dropped per channel for the unary index: 0 or 2 */
    int64_t num_colors;    /**< entries of the unary tables: 256 (gray) or 2^18 (RGB) */
    int32_t *unary_source; /**< per quantised colour: capacity source -> pixel */
    int32_t *unary_sink;   /**< per quantised colour: capacity pixel -> sink */
    int32_t max_sqdiff;    /**< largest squared colour difference: 255^2 * channels */
    int num_classes;       /**< distance classes present (1: 4/6-conn., 2: 8, 3: 26) */
    int32_t *pairwise[GCUT__SEG_CLASSES]; /**< [class][squared difference] capacity */
    int32_t hard;                         /**< K, the seeded side's terminal capacity */
    double scale;                         /**< capacity = round(scale * energy) */
    double lambda, sigma;                 /**< the boundary term's parameters */
    double unary_max; /**< largest finite regional cost in nats (after clamping) */
} gcut__seg_tables;

/** Unary table index of the pixel at px (channels 1 or 3). */
static inline GCUT__SEG_HD int64_t gcut__seg_color_index(const uint8_t *px, int channels) {
    if (channels == 1)
        return px[0];
    return ((int64_t)(px[0] >> 2) << 12) | ((int64_t)(px[1] >> 2) << 6) | (int64_t)(px[2] >> 2);
}

/** Squared colour difference of two pixels (channels 1 or 3). */
static inline GCUT__SEG_HD int32_t gcut__seg_sqdiff(const uint8_t *a, const uint8_t *b,
                                                    int channels) {
    int32_t d0 = (int32_t)a[0] - (int32_t)b[0];
    if (channels == 1)
        return d0 * d0;
    int32_t d1 = (int32_t)a[1] - (int32_t)b[1];
    int32_t d2 = (int32_t)a[2] - (int32_t)b[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

/** Distance class of a neighbour offset: number of non-zero components minus one. */
static inline GCUT__SEG_HD int gcut__seg_offset_class(const int *offset3) {
    return (offset3[0] != 0) + (offset3[1] != 0) + (offset3[2] != 0) - 1;
}

/** Allocate tables for a working image of channels 1 or 3 and connectivity (4, 8, 6 or 26),
 *  all entries zero. Free with gcut__seg_tables_free(). */
gcut_status gcut__seg_tables_alloc(int channels, int connectivity, gcut__seg_tables **out);
void gcut__seg_tables_free(gcut__seg_tables *tables);
/** The tables of gcut__seg_tables_alloc() lie in one block: unary_source, unary_sink (num_colors
 *  each), then the num_classes pairwise rows (max_sqdiff + 1 each). Returns its start and sets
 *  *count to its int32 entries, so that one copy moves every table (the device uploads). */
const int32_t *gcut__seg_tables_block(const gcut__seg_tables *tables, size_t *count);
/** GCUT_SEG_TABLES_LEGACY=1 (environment): the tables filled by two fork-joins with an exp per
 *  entry and floor, and uploaded to the device in one copy per table, as before the seventh
 *  band pass (the same tables bit for bit; for before / after timings). */
bool gcut__seg_tables_legacy(void);

/** Turn regional costs in nats (cost_fg[c] = -ln P(c | foreground), cost_bg likewise, one per
 *  quantised colour) and the boundary parameters into the integer tables: the smaller cost of
 *  each colour is subtracted, the rest clamped at GCUT__SEG_UNARY_MAX_NATS; scale <= 0 picks
 *  GCUT__SEG_CAP_BOUND / (largest finite energy term); K = 1 + connectivity * largest pairwise
 *  entry. @return GCUT_ERR_OVERFLOW if a given scale pushes a capacity past the bound. */
gcut_status gcut__seg_tables_fill(gcut__seg_tables *tables, const double *cost_fg,
                                  const double *cost_bg, double lambda, double sigma, double scale,
                                  int connectivity);
/** gcut__seg_tables_fill in `parts` parts on as many threads (1..GCUT__MAX_JOBS); the tables do
 *  not depend on it (gcut__seg_tables_fill picks one part per 2^16 entries, at most the online
 *  cores). */
gcut_status gcut__seg_tables_fill_parts(gcut__seg_tables *tables, const double *cost_fg,
                                        const double *cost_bg, double lambda, double sigma,
                                        double scale, int connectivity, int parts);

/** The kernel: terminal and neighbour capacities of grid from the working image pixels
 *  (interleaved, channels = tables->channels, the grid's shape) and seeds (one code per pixel,
 *  GCUT_SEED_*; NULL = none). Seeded pixels get K on their side and 0 on the other; neighbour
 *  arcs whose neighbour is outside the grid get 0. A GPU builder mirrors this exactly. */
void gcut__seg_fill_grid(const uint8_t *pixels, const uint8_t *seeds,
                         const gcut__seg_tables *tables, gcut_grid *grid);

/** The synthetic benchmark's tables for level and connectivity (4/8 in 2D RGB, 6/26 in 3D
 *  gray): regional term from the two generating mixtures, the level's lambda and sigma.
 *  Built once per (level, connectivity) and cached for the process (thread-safe; they stay
 *  allocated until exit and count in gcut_memory_in_use()). Never free the result. */
gcut_status gcut__synth_tables(gcut_synth_level level, int connectivity,
                               const gcut__seg_tables **out);

/** The synthetic image into caller buffers: pixels (width*height*depth*channels bytes,
 *  channels 3 in 2D, 1 in 3D) and truth (may be NULL). */
gcut_status gcut__synth_pixels(int64_t width, int64_t height, int64_t depth, uint64_t seed,
                               gcut_synth_level level, uint8_t *pixels, uint8_t *truth);

/** Working copy of an image for the tables: 8-bit, 1 or 3 channels (alpha dropped; gray+alpha
 *  gray; 16-bit rescaled linearly from the image's own [min, max] to [0, 255]). *owned is set
 *  to a new buffer (free with gcut__free) unless the image can be used as it is, in which case
 *  *owned is NULL and *pixels points at the image. */
gcut_status gcut__seg_working_image(const gcut_image *image, const uint8_t **pixels,
                                    uint8_t **owned, int *channels);

/** A real image's energy as tables, without the grid (what gcut_seg_build_grid() does before
 *  filling one, so that a GPU builder can fill its own): checks the image, seeds and params,
 *  makes the working image, learns the colour models and fills the tables. On success
 *  *tables (free with gcut__seg_tables_free) and *pixels (the working image: *owned, to free
 *  with gcut__free, or the image's own pixels when *owned is NULL) are set, and report (may be
 *  NULL) gets everything but the solve (build_ms covers sigma and the tables). */
gcut_status gcut__seg_prepare(const gcut_image *image, const uint8_t *seeds,
                              const gcut_seg_params *params, gcut__seg_tables **tables,
                              const uint8_t **pixels, uint8_t **owned, gcut_seg_report *report);

/** Check an image's geometry, channels and bit depth; fn names the caller in messages. */
gcut_status gcut__seg_check_image(const char *fn, const gcut_image *image);
/** Copy given (NULL = defaults) into *p, resolve connectivity 0 and GCUT_MODEL_AUTO for the
 *  image's kind, and check every field (GCUT_ERR_INVALID_ARG naming the bad one). */
gcut_status gcut__seg_resolve_params(const gcut_seg_params *given, bool three_d, bool colour,
                                     gcut_seg_params *p);

/** gcut_grabcut(), and when final_grid is not NULL the grid of the energy whose minimum cut
 *  the mask is (the last round's capacities, hard constraints included), for certificates and
 *  brute-force checks in tests (free with gcut_grid_free). */
gcut_status gcut__grabcut(const gcut_image *image, const gcut_rect *rect, const uint8_t *seeds,
                          const gcut_seg_params *params, const gcut_options *options, uint8_t *mask,
                          gcut_seg_report *report, gcut_grid **final_grid);

/** Regional costs learnt from seed colours: counts[c] = how many seeds of one class have
 *  quantised colour c; cost[c] gets -ln P(c | class) for every c (num_colors entries) with
 *  present[c] != 0 (present NULL = all), and 0 for the others (colours the image lacks, whose
 *  entries are never read). model is GCUT_MODEL_HISTOGRAM or GCUT_MODEL_GMM; deterministic
 *  for a seed. */
gcut_status gcut__seg_model_costs(const double *counts, const uint8_t *present, int64_t num_colors,
                                  int channels, gcut_model_kind model, int gmm_components,
                                  int histogram_bins, uint64_t seed, double *cost);

/* Most components of a Gaussian mixture. */
#define GCUT__GMM_MAX 32

/** One full-covariance Gaussian of a mixture over 1 or 3 colour channels. */
typedef struct gcut__gaussian {
    double weight;
    double mean[3];
    double chol[3][3];  /**< lower Cholesky factor of the covariance */
    double inv_diag[3]; /**< 1 / chol[i][i]: the solve multiplies instead of dividing */
    double log_norm;    /**< ln(weight) - ln((2 pi)^(d/2) |cov|^(1/2)) */
} gcut__gaussian;

/** A Gaussian mixture over quantised colours (bin centres), kept between GrabCut rounds. */
typedef struct gcut__gmm {
    int k;    /**< components in use (0: not fitted yet) */
    int dims; /**< colour channels, 1 or 3 */
    gcut__gaussian g[GCUT__GMM_MAX];
} gcut__gmm;

/** Fit gmm to the colour counts (num_colors quantised colours of channels 1 or 3). Fresh
 *  (warm_rounds 0, or gmm not fitted yet): k-means++ seeding from seed and 10 Lloyd iterations
 *  (at most components centres), then 10 EM iterations, or with hard one assign-and-learn step;
 *  warm: warm_rounds iterations from gmm as it is. hard: GrabCut's scheme (Rother et al. 2004,
 *  sec. 3.1; OpenCV's too), each colour wholly to its most likely component and each component
 *  re-learnt from its colours, instead of EM's soft responsibilities. @return
 *  GCUT_ERR_INVALID_ARG if no count is positive. */
gcut_status gcut__gmm_fit(gcut__gmm *gmm, const double *counts, int64_t num_colors, int channels,
                          int components, uint64_t seed, int warm_rounds, bool hard);
/** cost[colors[i]] = -ln p(colour) for the count listed colours (in parallel where OpenMP is
 *  built in). */
void gcut__gmm_costs(const gcut__gmm *gmm, const int32_t *colors, int64_t count, double *cost);
/** gcut__gmm_fit() on a list: counts[k] pixels of quantised colour colors[k] (ascending),
 *  count entries; the same mixture as gcut__gmm_fit() on the counts scattered by colour.
 *  assign (may be NULL; warm hard steps only): each colour's most likely component under gmm
 *  as it is, from gcut__gmm_costs_list(), saving the first step's assignment pass. */
gcut_status gcut__gmm_fit_list(gcut__gmm *gmm, const int32_t *colors, const double *counts,
                               const uint8_t *assign, int64_t count, int channels, int components,
                               uint64_t seed, int warm_rounds, bool hard);
/** cost[i] = -ln p(colors[i]) for the count listed colours (dense); best (may be NULL) gets
 *  each colour's most likely component, which gcut__gmm_fit_list() takes as assign for a warm
 *  hard step from this same mixture (it would compute the same). */
void gcut__gmm_costs_list(const gcut__gmm *gmm, const int32_t *colors, int64_t count, double *cost,
                          uint8_t *best);

/** Write "(x X, y Y)" (and ", z Z" for volumes) for pixel index i of image into buf, for
 *  messages that name the pixel at fault. */
void gcut__seg_pixel_name(const gcut_image *image, int64_t i, char *buf, size_t size);

/** The boundary term's default sigma: the RMS colour difference of axis neighbours (at least
 *  1, so that a flat image still has a finite sigma). Images of 2^19+ pixels are summed on the
 *  online cores; the sum is an integer, so the value does not depend on the thread count. */
double gcut__seg_estimate_sigma(const uint8_t *pixels, int channels, int64_t width, int64_t height,
                                int64_t depth);

/* ---- multilevel narrow-banded cuts (src/seg/band.c; Lattari 2010 3.5, 5.4) ----
 * The passes that take `threads` split their rows between that many threads (1: this one);
 * results do not depend on it. */

/** The finest level of a banded segmentation: dims = {depth, height, width}; pixels the
 *  working image (channels 1 or 3), seeds one code per pixel (GCUT_SEED_*). */
typedef struct gcut__band_image {
    int64_t dims[3];
    int channels;
    const uint8_t *pixels;
    const uint8_t *seeds;
} gcut__band_image;

/** Halve the seeds of a level: each side s becomes (s + 1) / 2 (a side of 1 stays 1, so
 *  1-pixel-wide images and 2D images coarsen along their other axes only); a coarse pixel's
 *  code is the OR of its 1-8 children's (GCUT_SEED_FOREGROUND | GCUT_SEED_BACKGROUND: a block
 *  holding both kinds, where the seeds are lost as hard constraints at that level). */
void gcut__band_coarsen_seeds(const uint8_t *fine, const int64_t fine_dims[3], uint8_t *coarse,
                              int64_t coarse_dims[3], int threads);

/** Downsample a level's pixels (channels 1 or 3): each coarse pixel the rounded mean of its
 *  1-8 children; coarse is a caller buffer of the halved size. */
void gcut__band_coarsen_pixels(const uint8_t *fine, const int64_t fine_dims[3], int channels,
                               uint8_t *coarse, int threads);

/** The capacities of pixel (cz, cy, cx) of level k (blocks of 2^k pixels per axis of base,
 *  clipped at the far edges): *source and *sink are the sums of its pixels' terminal
 *  capacities. coarse == NULL: exact aggregation, w[(dz+1)*9 + (dy+1)*3 + (dx+1)] the sums of
 *  the pair capacities between its block and the neighbouring block at (dz, dy, dx), so that a
 *  labelling's energy at level k is the energy of its projection onto the image (level 0: the
 *  image's own capacities). coarse != NULL and k > 0 (what the solves use): coarse is level
 *  k's downsampled image (coarse_dims); each pair capacity is half the smaller of that sum and
 *  the tables' capacity for the contrast of the two coarse pixels times a face's pixels; all is
 *  scaled down by a block face's 2^k (2D) or 4^k (3D) pixels with rounding, the terminals
 *  after taking out min(source, sink), and capped at 2^28. */
void gcut__band_node(const gcut__band_image *base, const gcut__seg_tables *tables, int connectivity,
                     int k, const uint8_t *coarse, const int64_t coarse_dims[3], int64_t cz,
                     int64_t cy, int64_t cx, int64_t *source, int64_t *sink, int64_t w[27]);

/** Project coarse labels (bit 0 = foreground) onto fine (every fine pixel takes its parent's
 *  bit 0; other bits cleared). */
void gcut__band_project(const uint8_t *coarse, const int64_t coarse_dims[3], uint8_t *fine,
                        const int64_t fine_dims[3], int threads);

/** The energy of labels (bit 0 = foreground, other bits ignored) of the image's pixels and
 *  seeds under tables: the capacity of its cut in the image's grid, computed pixel by pixel
 *  without building the grid. */
int64_t gcut__band_energy(const gcut__band_image *level, const gcut__seg_tables *tables,
                          int connectivity, const uint8_t *labels, int threads);

/** Fill grid (the size of level k >= 1 of base, connectivity's neighbours) with what
 *  gcut__band_node gives each of its nodes for the downsampled image coarse, in one pass over
 *  the image (the coarsest level's full solve). */
gcut_status gcut__band_coarse_grid(const gcut__band_image *base, const gcut__seg_tables *tables,
                                   int connectivity, int k, const uint8_t *coarse, gcut_grid *grid,
                                   int threads);

/** Select the band of a level: state holds labels in bit 0 (other bits are cleared); on
 *  return bit 1 is set on every pixel within Chebyshev distance d of a pixel that has an
 *  axis neighbour of the other label or a seed (bits GCUT_SEED_FOREGROUND/BACKGROUND of
 *  seeds) its label contradicts. @return the band's size (0: an empty band). */
int64_t gcut__band_select(uint8_t *state, const uint8_t *seeds, const int64_t dims[3], int64_t d,
                          int threads);

/** @return 0 if band.c's constant neighbour tables match the neighbourhoods they stand for,
 *  else the connectivity that differs (for test_band). */
int gcut__band_offsets_check(void);

/** Fill grid (level k's size and connectivity) as the MASKED GRID of level k's band problem
 *  (band_node.h, gcut__band_masked_node): state's bit 1 the band, bit 0 the projected labels
 *  (NULL: every node in the band); coarse level k's downsampled image (unused at k = 0). */
gcut_status gcut__band_masked_grid(const gcut__band_image *base, const gcut__seg_tables *tables,
                                   int connectivity, int k, const uint8_t *coarse,
                                   const uint8_t *state, gcut_grid *grid, int threads);

/* Routes of gcut__band_segment_route: the bands as compact general graphs (band solver), as
 * masked grids solved on the host by the options' grid solver (the device pipeline's CPU twin),
 * or the device pipeline (a CUDA build; src/cuda/band_gpu.cu). */
enum { GCUT__BAND_AUTO = 0, GCUT__BAND_GRAPH = 1, GCUT__BAND_MASKED = 2, GCUT__BAND_DEVICE = 3 };

/** gcut_segment() for params->levels != 0 (GCUT__BAND_AUTO). */
gcut_status gcut__band_segment_route(const gcut_image *image, const uint8_t *seeds,
                                     const gcut_seg_params *params, const gcut_options *options,
                                     uint8_t *mask, gcut_seg_report *report, int route);

#ifdef GCUT_HAVE_CUDA
/** Whether the device pipeline of an image of dims {d, h, w} fits the device's free memory. */
bool gcut__band_device_fits(const int64_t dims[3], int channels, int connectivity, int levels,
                            const gcut_options *options);
/** Begin a device pipeline (src/cuda/band_gpu.cu) of a working image of dims {d, h, w}: the
 *  pipeline of its shape taken (or made), the image uploaded, and the boundary term's sigma
 *  estimated on the device (gcut__seg_estimate_sigma's value exactly) into *sigma. *handle goes
 *  to gcut__band_device_segment, or to gcut__band_device_end when it will not run. */
gcut_status gcut__band_device_begin(const uint8_t *pixels, int channels, const int64_t dims[3],
                                    int connectivity, int levels, const gcut_options *options,
                                    void **handle, double *sigma);
void gcut__band_device_end(void *handle);
/** The device pipeline (docs/BAND.md, "GPU"): levels >= 1, every level's capacities,
 *  projection, band and labels on the device, each level solved by cuda-grid as a masked grid;
 *  one copy of the mask back. handle: from gcut__band_device_begin (the image already there), or
 *  NULL. Fills the report as the host routes do (build_ms without the tables). */
gcut_status gcut__band_device_segment(void *handle, const gcut__band_image *base,
                                      const gcut__seg_tables *tables, int connectivity, int levels,
                                      int64_t band, const gcut_options *options, uint8_t *mask,
                                      gcut_seg_report *report);
#endif

/** gcut_segment() for params->levels != 0. */
gcut_status gcut__band_segment(const gcut_image *image, const uint8_t *seeds,
                               const gcut_seg_params *params, const gcut_options *options,
                               uint8_t *mask, gcut_seg_report *report);

#ifdef __cplusplus
}
#endif

#endif /* GCUT_SEG_INTERNAL_H */
