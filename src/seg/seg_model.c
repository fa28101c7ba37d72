/* seg_model.c - what the regional term learns from the seeds: seed masks in three encodings,
 * colour histograms and Gaussian mixtures (seeded k-means++ then EM, as in GrabCut), turned into
 * -ln P(colour | class) per quantised colour (Lattari 2010 ch. 3.4, eq. 3.7). */
#include "internal.h"
#include "seg_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PI 3.14159265358979323846

/* ---- seed masks ---- */

void gcut__seg_pixel_name(const gcut_image *image, int64_t i, char *buf, size_t size) {
    int64_t x = i % image->width, y = (i / image->width) % image->height;
    int64_t z = i / (image->width * image->height);
    if (image->depth > 1)
        snprintf(buf, size, "(x %" PRId64 ", y %" PRId64 ", z %" PRId64 ")", x, y, z);
    else
        snprintf(buf, size, "(x %" PRId64 ", y %" PRId64 ")", x, y);
}

gcut_status gcut_seeds_from_mask(const gcut_image *mask, gcut_seed_encoding encoding,
                                 uint8_t *seeds) {
    if (mask == NULL || mask->pixels == NULL || seeds == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_seeds_from_mask: mask, its pixels or "
                                                "seeds is NULL");
    if (mask->width < 1 || mask->height < 1 || mask->depth < 1 || mask->channels < 1 ||
        mask->channels > 4 || (mask->bit_depth != 8 && mask->bit_depth != 16))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_seeds_from_mask: mask geometry %" PRId64 "x%" PRId64 "x%" PRId64
                          ", %d channels, %d bits is not valid",
                          mask->width, mask->height, mask->depth, mask->channels, mask->bit_depth);
    if (encoding != GCUT_SEEDS_GCUT && encoding != GCUT_SEEDS_GRABCUT &&
        encoding != GCUT_SEEDS_COLOR)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_seeds_from_mask: unknown encoding %d",
                          (int)encoding);
    const int ch = mask->channels;
    const bool colour = ch >= 3, alpha = ch == 2 || ch == 4;
    const int64_t n = mask->width * mask->height * mask->depth;
    const uint8_t *p8 = mask->pixels;
    const uint16_t *p16 = mask->pixels;
    char where[96];
    for (int64_t i = 0; i < n; i++) {
        unsigned v[4] = {0, 0, 0, 0};
        for (int c = 0; c < ch; c++)
            v[c] = mask->bit_depth == 8 ? p8[i * ch + c] : p16[i * ch + c];
        if (encoding == GCUT_SEEDS_COLOR) {
            if (mask->bit_depth == 16)
                for (int c = 0; c < ch; c++)
                    v[c] >>= 8;
            uint8_t code = GCUT_SEED_UNKNOWN;
            if (alpha && v[ch - 1] < 128) {
                code = GCUT_SEED_UNKNOWN;
            } else if (colour) {
                if (v[0] >= 240 && v[1] <= 15 && v[2] <= 15)
                    code = GCUT_SEED_FOREGROUND;
                else if (v[2] >= 240 && v[0] <= 15 && v[1] <= 15)
                    code = GCUT_SEED_BACKGROUND;
            } else {
                if (v[0] >= 240)
                    code = GCUT_SEED_FOREGROUND;
                else if (v[0] <= 15)
                    code = GCUT_SEED_BACKGROUND;
            }
            seeds[i] = code;
            continue;
        }
        if (colour && (v[0] != v[1] || v[1] != v[2])) {
            gcut__seg_pixel_name(mask, i, where, sizeof where);
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "seed mask pixel %s is coloured (%u, %u, %u): the %s encoding "
                              "takes gray codes (use the color encoding for scribbles)",
                              where, v[0], v[1], v[2],
                              encoding == GCUT_SEEDS_GCUT ? "gcut" : "grabcut");
        }
        if (encoding == GCUT_SEEDS_GCUT) {
            if (v[0] > 2) {
                gcut__seg_pixel_name(mask, i, where, sizeof where);
                return gcut__fail(GCUT_ERR_INVALID_ARG,
                                  "seed mask pixel %s has value %u: the gcut encoding takes 0 "
                                  "(unknown), 1 (foreground), 2 (background)",
                                  where, v[0]);
            }
            seeds[i] = (uint8_t)v[0];
        } else {
            if (v[0] > 3) {
                gcut__seg_pixel_name(mask, i, where, sizeof where);
                return gcut__fail(GCUT_ERR_INVALID_ARG,
                                  "seed mask pixel %s has value %u: the grabcut encoding takes "
                                  "0 (BGD), 1 (FGD), 2 (PR_BGD), 3 (PR_FGD)",
                                  where, v[0]);
            }
            static const uint8_t grabcut[4] = {GCUT_SEED_BACKGROUND, GCUT_SEED_FOREGROUND,
                                               GCUT_SEED_UNKNOWN, GCUT_SEED_UNKNOWN};
            seeds[i] = grabcut[v[0]];
        }
    }
    return GCUT_OK;
}

/* ---- quantised colours ---- */

/* The colour at the centre of quantised bin c (channels 1 or 3). */
static void bin_centre(int64_t c, int channels, double *v) {
    if (channels == 1) {
        v[0] = (double)c;
        return;
    }
    v[0] = (double)((c >> 12) << 2) + 1.5;
    v[1] = (double)(((c >> 6) & 63) << 2) + 1.5;
    v[2] = (double)((c & 63) << 2) + 1.5;
}

/* ---- histograms ---- */

/* Smoothed histogram cost: counts in bins^channels cells, blurred with [1 2 1] along each
 * axis so that colours next to the seeds' colours are not treated as never seen, plus a small
 * prior mass so no cost is infinite. */
static gcut_status histogram_costs(const double *counts, int64_t num_colors, int channels, int bins,
                                   double *cost) {
    int64_t cells = channels == 1 ? bins : (int64_t)bins * bins * bins;
    double *h = gcut__calloc((size_t)cells, sizeof(double), "histogram");
    double *tmp = gcut__calloc((size_t)cells, sizeof(double), "histogram");
    if (h == NULL || tmp == NULL) {
        gcut__free(h);
        gcut__free(tmp);
        return GCUT_ERR_NOMEM;
    }
    const int levels = channels == 1 ? 256 : 64; /* values per channel of the colour index */
    for (int64_t c = 0; c < num_colors; c++) {
        if (counts[c] == 0)
            continue;
        int64_t cell;
        if (channels == 1) {
            cell = c * bins / levels;
        } else {
            int64_t r = (c >> 12) * bins / levels, g = ((c >> 6) & 63) * bins / levels;
            int64_t b = (c & 63) * bins / levels;
            cell = (r * bins + g) * bins + b;
        }
        h[cell] += counts[c];
    }
    int64_t stride = 1;
    for (int axis = 0; axis < channels; axis++, stride *= bins) {
        for (int64_t cell = 0; cell < cells; cell++) {
            int64_t k = (cell / stride) % bins;
            double sum = 2 * h[cell];
            sum += k > 0 ? h[cell - stride] : h[cell];
            sum += k < bins - 1 ? h[cell + stride] : h[cell];
            tmp[cell] = sum / 4;
        }
        memcpy(h, tmp, (size_t)cells * sizeof(double));
    }
    double total = 0;
    for (int64_t cell = 0; cell < cells; cell++)
        total += h[cell];
    const double prior = 0.01 * total / (double)cells + 1e-9;
    for (int64_t c = 0; c < num_colors; c++) {
        int64_t cell;
        if (channels == 1) {
            cell = c * bins / levels;
        } else {
            int64_t r = (c >> 12) * bins / levels, g = ((c >> 6) & 63) * bins / levels;
            int64_t b = (c & 63) * bins / levels;
            cell = (r * bins + g) * bins + b;
        }
        cost[c] = -log((h[cell] + prior) / (total + prior * (double)cells));
    }
    gcut__free(h);
    gcut__free(tmp);
    return GCUT_OK;
}

/* ---- Gaussian mixtures ---- */

typedef gcut__gaussian gaussian;

static uint64_t next_u64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double next_unit(uint64_t *state) {
    return (double)(next_u64(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Covariance to Cholesky factor and normaliser; a floor on the diagonal keeps a component that
 * sits on a single quantised colour from collapsing. @return false if not positive definite. */
static bool gaussian_finish(gaussian *g, double cov[3][3], int d) {
    for (int i = 0; i < d; i++)
        cov[i][i] += 2.0;
    double log_det = 0;
    memset(g->chol, 0, sizeof g->chol);
    for (int i = 0; i < d; i++)
        for (int j = 0; j <= i; j++) {
            double s = cov[i][j];
            for (int k = 0; k < j; k++)
                s -= g->chol[i][k] * g->chol[j][k];
            if (i == j) {
                if (!(s > 0))
                    return false;
                g->chol[i][i] = sqrt(s);
                g->inv_diag[i] = 1.0 / g->chol[i][i];
                log_det += 2 * log(g->chol[i][i]);
            } else {
                g->chol[i][j] = s / g->chol[j][j];
            }
        }
    g->log_norm = log(g->weight) - 0.5 * d * log(2 * PI) - 0.5 * log_det;
    return true;
}

static double gaussian_log(const gaussian *g, const double *v, int d) {
    if (d == 3) {
        /* The loop below written out for colour (the same operations in the same order). */
        const double y0 = (v[0] - g->mean[0]) * g->inv_diag[0];
        const double y1 = (v[1] - g->mean[1] - g->chol[1][0] * y0) * g->inv_diag[1];
        const double y2 =
            (v[2] - g->mean[2] - g->chol[2][0] * y0 - g->chol[2][1] * y1) * g->inv_diag[2];
        return g->log_norm - 0.5 * (y0 * y0 + y1 * y1 + y2 * y2);
    }
    double y[3], r = 0;
    for (int i = 0; i < d; i++) {
        double s = v[i] - g->mean[i];
        for (int k = 0; k < i; k++)
            s -= g->chol[i][k] * y[k];
        y[i] = s * g->inv_diag[i];
        r += y[i] * y[i];
    }
    return g->log_norm - 0.5 * r;
}

static double mixture_log(const gaussian *g, int k, const double *v, int d, double *terms) {
    double best = -INFINITY;
    for (int j = 0; j < k; j++) {
        terms[j] = gaussian_log(&g[j], v, d);
        best = terms[j] > best ? terms[j] : best;
    }
    double sum = 0;
    for (int j = 0; j < k; j++)
        if (terms[j] - best > -746.0) /* below, exp is +0 exactly (and slow: underflow path) */
            sum += exp(terms[j] - best);
    return best + log(sum);
}

/* Estimate component j from weighted points with responsibilities resp[p * k + j]. */
static bool gaussian_fit(gaussian *g, const double *pts, const double *wts, const double *resp,
                         int64_t np, int k, int j, int d, double total) {
    double mass = 0, mean[3] = {0, 0, 0}, cov[3][3] = {{0}};
    for (int64_t p = 0; p < np; p++) {
        double r = wts[p] * resp[p * k + j];
        mass += r;
        for (int a = 0; a < d; a++)
            mean[a] += r * pts[p * 3 + a];
    }
    if (!(mass > 1e-9 * total))
        return false;
    for (int a = 0; a < d; a++)
        mean[a] /= mass;
    for (int64_t p = 0; p < np; p++) {
        double r = wts[p] * resp[p * k + j];
        if (r == 0)
            continue;
        for (int a = 0; a < d; a++)
            for (int b = 0; b <= a; b++)
                cov[a][b] += r * (pts[p * 3 + a] - mean[a]) * (pts[p * 3 + b] - mean[b]);
    }
    for (int a = 0; a < d; a++)
        for (int b = 0; b <= a; b++)
            cov[b][a] = cov[a][b] = cov[a][b] / mass;
    g->weight = mass / total;
    memcpy(g->mean, mean, sizeof mean);
    return gaussian_finish(g, cov, d);
}

/* E step: responsibilities of the kept components for every point. */
static void gmm_estep(const gaussian *g, int k, const double *pts, int64_t np, int d,
                      double *resp) {
    for (int64_t p = 0; p < np; p++) {
        double terms[GCUT__GMM_MAX];
        double lse = mixture_log(g, k, pts + p * 3, d, terms);
        for (int j = 0; j < k; j++)
            resp[p * k + j] = exp(terms[j] - lse);
    }
}

/* Hard assignment: each point wholly to its most likely component (GrabCut's step 1). */
static void gmm_assign(const gaussian *g, int k, const double *pts, int64_t np, int d,
                       double *resp) {
    for (int64_t p = 0; p < np; p++) {
        int best = 0;
        double best_v = -INFINITY;
        for (int j = 0; j < k; j++) {
            const double v = gaussian_log(&g[j], pts + p * 3, d);
            if (v > best_v)
                best_v = v, best = j;
        }
        for (int j = 0; j < k; j++)
            resp[p * k + j] = j == best;
    }
}

/* EM rounds from the mixture in gmm (hard: GrabCut's assign-and-learn instead of soft
 * responsibilities); components that lose all their mass are dropped. */
static void gmm_em(gcut__gmm *gmm, const double *pts, const double *wts, double *resp, int64_t np,
                   int d, double total, int rounds, bool hard) {
    for (int iter = 0; iter < rounds; iter++) {
        const int k = gmm->k;
        if (hard)
            gmm_assign(gmm->g, k, pts, np, d, resp);
        else
            gmm_estep(gmm->g, k, pts, np, d, resp);
        int next = 0;
        gaussian fitted[GCUT__GMM_MAX];
        for (int j = 0; j < k; j++)
            if (gaussian_fit(&fitted[next], pts, wts, resp, np, k, j, d, total))
                next++;
        if (next == 0)
            break; /* keep the previous estimate */
        memcpy(gmm->g, fitted, (size_t)next * sizeof(gaussian));
        gmm->k = next;
    }
}

/* The weighted points of a colour histogram: bin centres and counts. */
static int64_t gmm_points(const double *counts, int64_t num_colors, int channels, double *pts,
                          double *wts, double *total) {
    int64_t np = 0;
    *total = 0;
    for (int64_t c = 0; c < num_colors; c++)
        if (counts[c] > 0) {
            bin_centre(c, channels, pts + np * 3);
            wts[np++] = counts[c];
            *total += counts[c];
        }
    return np;
}

static gcut_status gmm_fit_points(gcut__gmm *gmm, double *pts, double *wts, int64_t np,
                                  double total, int d, int components, uint64_t seed,
                                  int warm_rounds, bool hard);

/* The most likely component of point v (the first of equals), as gmm_assign picks it. */
static int most_likely(const gaussian *g, int k, const double *v, int d) {
    int best = 0;
    double best_v = -INFINITY;
    for (int j = 0; j < k; j++) {
        const double l = gaussian_log(&g[j], v, d);
        if (l > best_v)
            best_v = l, best = j;
    }
    return best;
}

/* One assign-and-learn step (gmm_em with hard, one round) in two passes over the points for
 * all components together instead of two per component, with the same sums in the same order
 * (so the same mixture to the last bit). idx[p]: point p's component, given (from the costs of
 * this same mixture) or, when given is false, found here. */
static void gmm_hard_step(gcut__gmm *gmm, const double *pts, const double *wts, uint8_t *idx,
                          bool given, int64_t np, int d, double total) {
    const int k = gmm->k;
    if (!given)
        for (int64_t p = 0; p < np; p++)
            idx[p] = (uint8_t)most_likely(gmm->g, k, pts + p * 3, d);
    double mass[GCUT__GMM_MAX] = {0}, mean[GCUT__GMM_MAX][3] = {{0}};
    double cov[GCUT__GMM_MAX][3][3];
    memset(cov, 0, sizeof cov);
    for (int64_t p = 0; p < np; p++) {
        const int j = idx[p];
        mass[j] += wts[p];
        for (int a = 0; a < d; a++)
            mean[j][a] += wts[p] * pts[p * 3 + a];
    }
    bool ok[GCUT__GMM_MAX];
    for (int j = 0; j < k; j++) {
        ok[j] = mass[j] > 1e-9 * total;
        for (int a = 0; a < d && ok[j]; a++)
            mean[j][a] /= mass[j];
    }
    for (int64_t p = 0; p < np; p++) {
        const int j = idx[p];
        if (!ok[j] || wts[p] == 0)
            continue;
        for (int a = 0; a < d; a++)
            for (int b = 0; b <= a; b++)
                cov[j][a][b] +=
                    wts[p] * (pts[p * 3 + a] - mean[j][a]) * (pts[p * 3 + b] - mean[j][b]);
    }
    int next = 0;
    gaussian fitted[GCUT__GMM_MAX];
    for (int j = 0; j < k; j++) {
        if (!ok[j])
            continue;
        for (int a = 0; a < d; a++)
            for (int b = 0; b <= a; b++)
                cov[j][b][a] = cov[j][a][b] = cov[j][a][b] / mass[j];
        fitted[next].weight = mass[j] / total;
        memcpy(fitted[next].mean, mean[j], sizeof mean[j]);
        if (gaussian_finish(&fitted[next], cov[j], d))
            next++;
    }
    if (next == 0)
        return; /* keep the previous estimate */
    memcpy(gmm->g, fitted, (size_t)next * sizeof(gaussian));
    gmm->k = next;
}

/* The point and weight arrays of a fit over np distinct colours (an error when np is 0). */
static gcut_status gmm_points_alloc(int64_t np, double **pts, double **wts) {
    if (np == 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gmm: no pixels to fit a colour model to");
    *pts = gcut__malloc(gcut__mul_size((size_t)np, 3 * sizeof(double)), "gmm points");
    *wts = gcut__malloc(gcut__mul_size((size_t)np, sizeof(double)), "gmm weights");
    if (*pts == NULL || *wts == NULL) {
        gcut__free(*pts);
        gcut__free(*wts);
        return GCUT_ERR_NOMEM;
    }
    return GCUT_OK;
}

gcut_status gcut__gmm_fit(gcut__gmm *gmm, const double *counts, int64_t num_colors, int channels,
                          int components, uint64_t seed, int warm_rounds, bool hard) {
    int64_t np = 0;
    for (int64_t c = 0; c < num_colors; c++)
        np += counts[c] > 0;
    double *pts = NULL, *wts = NULL;
    gcut_status st = gmm_points_alloc(np, &pts, &wts);
    if (st != GCUT_OK)
        return st;
    double total;
    gmm_points(counts, num_colors, channels, pts, wts, &total);
    return gmm_fit_points(gmm, pts, wts, np, total, channels, components, seed, warm_rounds, hard);
}

gcut_status gcut__gmm_fit_list(gcut__gmm *gmm, const int32_t *colors, const double *counts,
                               const uint8_t *assign, int64_t count, int channels, int components,
                               uint64_t seed, int warm_rounds, bool hard) {
    int64_t np = 0;
    for (int64_t k = 0; k < count; k++)
        np += counts[k] > 0;
    double *pts = NULL, *wts = NULL;
    gcut_status st = gmm_points_alloc(np, &pts, &wts);
    if (st != GCUT_OK)
        return st;
    /* The points gmm_points would list from the scattered counts, in the same order. */
    double total = 0;
    for (int64_t k = 0, p = 0; k < count; k++)
        if (counts[k] > 0) {
            bin_centre(colors[k], channels, pts + p * 3);
            wts[p++] = counts[k];
            total += counts[k];
        }
    if (!(hard && warm_rounds > 0 && gmm->k > 0 && gmm->dims == channels))
        return gmm_fit_points(gmm, pts, wts, np, total, channels, components, seed, warm_rounds,
                              hard);
    /* Warm assign-and-learn steps, the first from the given assignment where there is one. */
    uint8_t *idx = gcut__malloc((size_t)np, "gmm assignment");
    if (idx == NULL) {
        gcut__free(pts);
        gcut__free(wts);
        return GCUT_ERR_NOMEM;
    }
    if (assign != NULL)
        for (int64_t k = 0, p = 0; k < count; k++)
            if (counts[k] > 0)
                idx[p++] = assign[k];
    for (int step = 0; step < warm_rounds; step++)
        gmm_hard_step(gmm, pts, wts, idx, step == 0 && assign != NULL, np, channels, total);
    gcut__free(idx);
    gcut__free(pts);
    gcut__free(wts);
    return GCUT_OK;
}

/* Fit (or with warm_rounds re-fit) gmm to np weighted points; takes pts and wts (freed). */
static gcut_status gmm_fit_points(gcut__gmm *gmm, double *pts, double *wts, int64_t np,
                                  double total, int d, int components, uint64_t seed,
                                  int warm_rounds, bool hard) {
    const int kmax = components > 0 && components < GCUT__GMM_MAX ? components : GCUT__GMM_MAX;
    double *resp = gcut__calloc((size_t)np, (size_t)kmax * sizeof(double), "gmm responsibilities");
    double *dist = gcut__malloc(gcut__mul_size((size_t)np, sizeof(double)), "gmm distances");
    gcut_status st = GCUT_OK;
    if (resp == NULL || dist == NULL) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    if (warm_rounds > 0 && gmm->k > 0 && gmm->dims == d) {
        /* Warm: EM from the previous mixture never lowers the likelihood of these points. */
        gmm_em(gmm, pts, wts, resp, np, d, total, warm_rounds, hard);
        goto done;
    }
    gmm->dims = d;
    int k = components < np ? components : (int)np;
    /* k-means++ seeding: each new centre drawn with probability ~ count * distance^2. */
    double centre[GCUT__GMM_MAX][3];
    uint64_t state = seed ^ 0x6A11C0DEull;
    for (int j = 0; j < k; j++) {
        double pick = next_unit(&state), acc = 0, sum = 0;
        for (int64_t p = 0; p < np; p++) {
            double best = INFINITY;
            for (int i = 0; i < j; i++) {
                double e = 0;
                for (int a = 0; a < d; a++)
                    e += (pts[p * 3 + a] - centre[i][a]) * (pts[p * 3 + a] - centre[i][a]);
                best = e < best ? e : best;
            }
            dist[p] = wts[p] * (j == 0 ? 1.0 : best);
            sum += dist[p];
        }
        int64_t chosen = np - 1;
        if (sum > 0)
            for (int64_t p = 0; p < np; p++) {
                acc += dist[p];
                if (acc >= pick * sum) {
                    chosen = p;
                    break;
                }
            }
        if (j > 0 && !(sum > 0)) {
            k = j; /* every point sits on a centre already */
            break;
        }
        memcpy(centre[j], pts + chosen * 3, sizeof centre[j]);
    }
    for (int iter = 0; iter < 10; iter++) {
        double sums[GCUT__GMM_MAX][4] = {{0}};
        for (int64_t p = 0; p < np; p++) {
            int best_j = 0;
            double best = INFINITY;
            for (int j = 0; j < k; j++) {
                double e = 0;
                for (int a = 0; a < d; a++)
                    e += (pts[p * 3 + a] - centre[j][a]) * (pts[p * 3 + a] - centre[j][a]);
                if (e < best)
                    best = e, best_j = j;
            }
            for (int j = 0; j < k; j++)
                resp[p * k + j] = j == best_j ? 1.0 : 0.0;
            for (int a = 0; a < d; a++)
                sums[best_j][a] += wts[p] * pts[p * 3 + a];
            sums[best_j][3] += wts[p];
        }
        for (int j = 0; j < k; j++)
            if (sums[j][3] > 0)
                for (int a = 0; a < d; a++)
                    centre[j][a] = sums[j][a] / sums[j][3];
    }
    /* Components from the hard assignment; empty ones are dropped. */
    int kept = 0;
    for (int j = 0; j < k; j++) {
        if (gaussian_fit(&gmm->g[kept], pts, wts, resp, np, k, j, d, total)) {
            if (kept != j)
                for (int64_t p = 0; p < np; p++)
                    resp[p * k + kept] = resp[p * k + j];
            kept++;
        }
    }
    if (kept == 0) {
        st = gcut__fail(GCUT_ERR_INTERNAL, "gmm: no component could be fitted");
        goto done;
    }
    gmm->k = kept;
    gmm_em(gmm, pts, wts, resp, np, d, total, hard ? 1 : 10, hard);
done:
    gcut__free(pts);
    gcut__free(wts);
    gcut__free(resp);
    gcut__free(dist);
    return st;
}

void gcut__gmm_costs(const gcut__gmm *gmm, const int32_t *colors, int64_t count, double *cost) {
    const int channels = gmm->dims;
    for (int64_t i = 0; i < count; i++) {
        double terms[GCUT__GMM_MAX], v[3];
        bin_centre(colors[i], channels, v);
        cost[colors[i]] = -mixture_log(gmm->g, gmm->k, v, channels, terms);
    }
}

void gcut__gmm_costs_list(const gcut__gmm *gmm, const int32_t *colors, int64_t count, double *cost,
                          uint8_t *best) {
    const int channels = gmm->dims, k = gmm->k;
    for (int64_t i = 0; i < count; i++) {
        double terms[GCUT__GMM_MAX], v[3];
        bin_centre(colors[i], channels, v);
        cost[i] = -mixture_log(gmm->g, k, v, channels, terms);
        if (best != NULL) {
            /* most_likely() from the terms just computed (the same values, the same pick). */
            int b = 0;
            double best_v = -INFINITY;
            for (int j = 0; j < k; j++)
                if (terms[j] > best_v)
                    best_v = terms[j], b = j;
            best[i] = (uint8_t)b;
        }
    }
}

/* One part of gmm_costs: colours [c0, c1). Each colour's cost depends on the mixture alone,
 * so the costs do not depend on the split (the same bits as one loop). */
typedef struct cost_part {
    const gcut__gmm *gmm;
    const uint8_t *present;
    int channels;
    int64_t c0, c1;
    double *cost;
} cost_part;

static void *cost_part_run(void *arg) {
    const cost_part *job = arg;
    double terms[GCUT__GMM_MAX], v[3];
    for (int64_t c = job->c0; c < job->c1; c++) {
        if (job->present != NULL && !job->present[c]) {
            job->cost[c] = 0.0;
            continue;
        }
        bin_centre(c, job->channels, v);
        job->cost[c] = -mixture_log(job->gmm->g, job->gmm->k, v, job->channels, terms);
    }
    return NULL;
}

/* Fit a k-component mixture to the quantised colours with counts, and write -ln p(colour) for
 * every quantised colour present. Deterministic for a seed: k-means++ seeding from our own
 * PRNG, 10 Lloyd iterations, then 10 EM iterations. The costs (two exps and a log per
 * component and colour: most of gcut segment's model time on a photo, whose noise makes most
 * of the 2^18 colours present) are computed in parts on half the online cores, the other half
 * being the other side's (segment.c fits both at once); GCUT_SEG_COST_THREADS overrides. */
static gcut_status gmm_costs(const double *counts, const uint8_t *present, int64_t num_colors,
                             int channels, int k, uint64_t seed, double *cost) {
    gcut__gmm gmm;
    memset(&gmm, 0, sizeof gmm);
    gcut_status st = gcut__gmm_fit(&gmm, counts, num_colors, channels, k, seed, 0, false);
    if (st != GCUT_OK)
        return st;
    int64_t parts = num_colors >> 14;
    const int half = gcut__online_cores() / 2;
    const int threads =
        gcut__env_int("GCUT_SEG_COST_THREADS", half > 1 ? half : 1, 1, GCUT__MAX_JOBS);
    parts = parts < 1 ? 1 : parts > threads ? threads : parts;
    cost_part jobs[GCUT__MAX_JOBS];
    for (int64_t t = 0; t < parts; t++)
        jobs[t] = (cost_part){
            &gmm, present, channels, num_colors * t / parts, num_colors * (t + 1) / parts, cost};
    gcut__run_jobs(cost_part_run, jobs, sizeof jobs[0], (int)parts);
    return GCUT_OK;
}

gcut_status gcut__seg_model_costs(const double *counts, const uint8_t *present, int64_t num_colors,
                                  int channels, gcut_model_kind model, int gmm_components,
                                  int histogram_bins, uint64_t seed, double *cost) {
    if (model == GCUT_MODEL_HISTOGRAM)
        return histogram_costs(counts, num_colors, channels, histogram_bins, cost);
    return gmm_costs(counts, present, num_colors, channels, gmm_components, seed, cost);
}

/* One part of gcut__seg_estimate_sigma: rows [row0, row1) of all depth * height rows, each with
 * its pairs to the right, below and behind; the sum of squared differences as an integer. */
typedef struct sigma_job {
    const uint8_t *pixels;
    int channels;
    int64_t width, height, depth, row0, row1;
    uint64_t sum;
    int64_t pairs;
} sigma_job;

static void *sigma_part(void *arg) {
    sigma_job *job = arg;
    const int ch = job->channels;
    const int64_t width = job->width, height = job->height, plane = width * height;
    uint64_t sum = 0;
    int64_t pairs = 0;
    for (int64_t r = job->row0; r < job->row1; r++) {
        const int64_t z = r / height, y = r % height;
        const uint8_t *row = job->pixels + (z * plane + y * width) * ch;
        for (int64_t x = 0; x + 1 < width; x++)
            sum += (uint64_t)gcut__seg_sqdiff(row + x * ch, row + (x + 1) * ch, ch);
        pairs += width - 1;
        if (y + 1 < height) {
            for (int64_t x = 0; x < width; x++)
                sum += (uint64_t)gcut__seg_sqdiff(row + x * ch, row + (x + width) * ch, ch);
            pairs += width;
        }
        if (z + 1 < job->depth) {
            for (int64_t x = 0; x < width; x++)
                sum += (uint64_t)gcut__seg_sqdiff(row + x * ch, row + (x + plane) * ch, ch);
            pairs += width;
        }
    }
    job->sum = sum;
    job->pairs = pairs;
    return NULL;
}

double gcut__seg_estimate_sigma(const uint8_t *pixels, int channels, int64_t width, int64_t height,
                                int64_t depth) {
    /* Rows in equal runs on the online cores (a part per 2^18 pixels at least): the sum is an
     * integer, so the value does not depend on the split. */
    const int64_t rows = depth * height, n = rows * width;
    int64_t parts = n >> 18;
    const int cores = gcut__online_cores();
    parts = parts < 1 ? 1 : parts > cores ? cores : parts;
    parts = parts > GCUT__MAX_JOBS ? GCUT__MAX_JOBS : parts > rows ? rows : parts;
    sigma_job jobs[GCUT__MAX_JOBS];
    for (int64_t t = 0; t < parts; t++)
        jobs[t] = (sigma_job){
            pixels, channels, width, height, depth, rows * t / parts, rows * (t + 1) / parts, 0, 0};
    gcut__run_jobs(sigma_part, jobs, sizeof jobs[0], (int)parts);
    uint64_t sum = 0;
    int64_t pairs = 0;
    for (int64_t t = 0; t < parts; t++) {
        sum += jobs[t].sum;
        pairs += jobs[t].pairs;
    }
    double sigma = pairs > 0 ? sqrt((double)sum / (double)pairs) : 0.0;
    return sigma < 1.0 ? 1.0 : sigma;
}
