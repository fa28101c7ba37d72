/* band.c - multilevel narrow-banded segmentation (Lombaert et al. 2005; Lattari 2010 3.5 and
 * 5.4, Algorithm 15): coarsen image and seeds, solve the coarsest level in full, then at each
 * finer level re-solve only a band around the projected boundary, as a compact general graph
 * whose outer layer is folded into terminal capacities. docs/BAND.md states the guarantees. */
#include "internal.h"
#include "band_node.h"
#include "seg_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Bits of a level's state byte (the caller's mask at the finest level). */
enum { LABEL = 1, BAND = 2, MARK = 4 };

/* ---- the host passes on several threads: fn(ctx, lo, hi) over [0, n) in chunks that threads
 * take in turn; every pass below writes only what its own index range owns. ---- */
typedef void (*band_job_fn)(void *ctx, int64_t lo, int64_t hi);

typedef struct band_jobs {
    band_job_fn fn;
    void *ctx;
    int64_t n, chunk;
    atomic_llong next;
} band_jobs;

static void *band_worker(void *arg) {
    band_jobs *j = arg;
    for (;;) {
        const int64_t lo = (int64_t)atomic_fetch_add(&j->next, (long long)j->chunk);
        if (lo >= j->n)
            return NULL;
        j->fn(j->ctx, lo, lo + j->chunk < j->n ? lo + j->chunk : j->n);
    }
}

#define BAND_MAX_THREADS 64

static void band_parallel(int threads, int64_t n, band_job_fn fn, void *ctx) {
    if (n <= 0)
        return;
    if (threads > n)
        threads = (int)n;
    if (threads <= 1) {
        fn(ctx, 0, n);
        return;
    }
    band_jobs j = {fn, ctx, n, 0, 0};
    j.chunk = n / ((int64_t)threads * 8);
    j.chunk = j.chunk < 1 ? 1 : j.chunk;
    atomic_init(&j.next, 0);
    pthread_t ids[BAND_MAX_THREADS];
    bool started[BAND_MAX_THREADS];
    for (int t = 1; t < threads; t++) /* a thread that fails to start leaves its chunks to us */
        started[t] = pthread_create(&ids[t], NULL, band_worker, &j) == 0;
    band_worker(&j);
    for (int t = 1; t < threads; t++)
        if (started[t])
            pthread_join(ids[t], NULL);
}

/* Threads of the host passes: options->threads, 0 = every online core. */
static int band_threads(const gcut_options *options) {
    int t = options != NULL ? options->threads : 0;
    if (t <= 0)
        t = gcut__online_cores();
    return t < BAND_MAX_THREADS ? t : BAND_MAX_THREADS;
}

/* The canonical half of a neighbourhood: offsets (dz, dy, dx) whose first non-zero component
 * is positive; the other half are their negatives. @return their number. */
static int half_offsets(int connectivity, int off[13][3]) {
    int count = 0;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                const int nz = (dz != 0) + (dy != 0) + (dx != 0);
                const int first = dz != 0 ? dz : dy != 0 ? dy : dx;
                if (nz == 0 || first < 0)
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

/* The half offsets of each connectivity (half_offsets' order), as constants so that any
 * thread may read them. test_band checks them against half_offsets. */
struct offsets {
    int count;
    int off[13][3];
};

static const struct offsets offsets_table[4] = {{2, {{0, 0, 1}, {0, 1, 0}}},
                                                {4, {{0, 0, 1}, {0, 1, -1}, {0, 1, 0}, {0, 1, 1}}},
                                                {3, {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}},
                                                {13,
                                                 {{0, 0, 1},
                                                  {0, 1, -1},
                                                  {0, 1, 0},
                                                  {0, 1, 1},
                                                  {1, -1, -1},
                                                  {1, -1, 0},
                                                  {1, -1, 1},
                                                  {1, 0, -1},
                                                  {1, 0, 0},
                                                  {1, 0, 1},
                                                  {1, 1, -1},
                                                  {1, 1, 0},
                                                  {1, 1, 1}}}};

static const struct offsets *offsets_of(int connectivity) {
    return &offsets_table[connectivity == 4   ? 0
                          : connectivity == 8 ? 1
                          : connectivity == 6 ? 2
                                              : 3];
}

int gcut__band_offsets_check(void) {
    static const int conns[4] = {4, 8, 6, 26};
    for (int c = 0; c < 4; c++) {
        int off[13][3];
        const int n = half_offsets(conns[c], off);
        if (n != offsets_of(conns[c])->count ||
            memcmp(off, offsets_of(conns[c])->off, (size_t)n * sizeof off[0]) != 0)
            return conns[c];
    }
    return 0;
}

static int64_t half_up(int64_t side) {
    return (side + 1) / 2;
}

typedef struct seeds_job {
    const uint8_t *fine;
    const int64_t *dims;
    uint8_t *coarse;
} seeds_job;

static void coarsen_seed_rows(void *arg, int64_t lo, int64_t hi) {
    const seeds_job *j = arg;
    const int64_t D = j->dims[0], H = j->dims[1], W = j->dims[2];
    const int64_t cH = half_up(H), cW = half_up(W);
    for (int64_t r = lo; r < hi; r++) { /* coarse row r = z * cH + y: its 1-4 fine rows */
        const int64_t z = r / cH, y = r % cH;
        uint8_t *dst = j->coarse + r * cW;
        memset(dst, 0, (size_t)cW);
        for (int64_t fz = 2 * z; fz < 2 * z + 2 && fz < D; fz++)
            for (int64_t fy = 2 * y; fy < 2 * y + 2 && fy < H; fy++) {
                const uint8_t *src = j->fine + (fz * H + fy) * W;
                for (int64_t x = 0; x < W; x++)
                    dst[x / 2] |= src[x] & (GCUT_SEED_FOREGROUND | GCUT_SEED_BACKGROUND);
            }
    }
}

void gcut__band_coarsen_seeds(const uint8_t *fine, const int64_t fine_dims[3], uint8_t *coarse,
                              int64_t coarse_dims[3], int threads) {
    for (int k = 0; k < 3; k++)
        coarse_dims[k] = half_up(fine_dims[k]);
    seeds_job j = {fine, fine_dims, coarse};
    band_parallel(threads, coarse_dims[0] * coarse_dims[1], coarsen_seed_rows, &j);
}

typedef struct coarsen_job {
    const uint8_t *fine;
    const int64_t *dims;
    int channels;
    uint8_t *coarse;
} coarsen_job;

static void coarsen_rows(void *arg, int64_t lo, int64_t hi) {
    const coarsen_job *j = arg;
    const int64_t D = j->dims[0], H = j->dims[1], W = j->dims[2];
    const int64_t cH = half_up(H), cW = half_up(W);
    const int channels = j->channels;
    for (int64_t r = lo; r < hi; r++) { /* coarse row r = z * cH + y */
        const int64_t z = r / cH, y = r % cH;
        for (int64_t x = 0; x < cW; x++) {
            unsigned sum[3] = {0, 0, 0}, count = 0;
            for (int64_t fz = 2 * z; fz < 2 * z + 2 && fz < D; fz++)
                for (int64_t fy = 2 * y; fy < 2 * y + 2 && fy < H; fy++)
                    for (int64_t fx = 2 * x; fx < 2 * x + 2 && fx < W; fx++) {
                        const int64_t i = (fz * H + fy) * W + fx;
                        for (int c = 0; c < channels; c++)
                            sum[c] += j->fine[i * channels + c];
                        count++;
                    }
            const int64_t k = r * cW + x;
            for (int c = 0; c < channels; c++)
                j->coarse[k * channels + c] = (uint8_t)((sum[c] + count / 2) / count);
        }
    }
}

void gcut__band_coarsen_pixels(const uint8_t *fine, const int64_t fine_dims[3], int channels,
                               uint8_t *coarse, int threads) {
    coarsen_job j = {fine, fine_dims, channels, coarse};
    band_parallel(threads, half_up(fine_dims[0]) * half_up(fine_dims[1]), coarsen_rows, &j);
}

typedef struct project_job {
    const uint8_t *coarse;
    const int64_t *coarse_dims;
    uint8_t *fine;
    const int64_t *dims;
} project_job;

static void project_rows(void *arg, int64_t lo, int64_t hi) {
    const project_job *j = arg;
    const int64_t H = j->dims[1], W = j->dims[2];
    const int64_t ch = j->coarse_dims[1], cw = j->coarse_dims[2];
    for (int64_t r = lo; r < hi; r++) { /* fine row r = z * H + y */
        const int64_t z = r / H, y = r % H;
        const uint8_t *src = j->coarse + ((z / 2) * ch + y / 2) * cw;
        uint8_t *dst = j->fine + r * W;
        for (int64_t x = 0; x < W; x++)
            dst[x] = src[x / 2] & LABEL;
    }
}

void gcut__band_project(const uint8_t *coarse, const int64_t coarse_dims[3], uint8_t *fine,
                        const int64_t fine_dims[3], int threads) {
    project_job j = {coarse, coarse_dims, fine, fine_dims};
    band_parallel(threads, fine_dims[0] * fine_dims[1], project_rows, &j);
}

/* Unary capacities (source, sink) of finest pixel i. */
static void unary(const gcut__band_image *lv, const gcut__seg_tables *t, int64_t i, int32_t *s,
                  int32_t *k) {
    if (lv->seeds[i] == GCUT_SEED_FOREGROUND) {
        *s = t->hard, *k = 0;
    } else if (lv->seeds[i] == GCUT_SEED_BACKGROUND) {
        *s = 0, *k = t->hard;
    } else {
        const int64_t q = gcut__seg_color_index(lv->pixels + i * t->channels, t->channels);
        *s = t->unary_source[q], *k = t->unary_sink[q];
    }
}

static int32_t pairwise(const gcut__band_image *lv, const gcut__seg_tables *t, const int *off,
                        int64_t i, int64_t j) {
    const int ch = t->channels;
    return t->pairwise[gcut__seg_offset_class(off)]
                      [gcut__seg_sqdiff(lv->pixels + i * ch, lv->pixels + j * ch, ch)];
}

typedef struct energy_job {
    const gcut__band_image *lv;
    const gcut__seg_tables *tables;
    int connectivity;
    const uint8_t *labels;
    atomic_llong energy;
} energy_job;

static void energy_rows(void *arg, int64_t lo, int64_t hi) {
    energy_job *j = arg;
    const gcut__band_image *lv = j->lv;
    const gcut__seg_tables *tables = j->tables;
    const uint8_t *labels = j->labels;
    const struct offsets *offs = offsets_of(j->connectivity);
    const int64_t D = lv->dims[0], H = lv->dims[1], W = lv->dims[2];
    const int ch = tables->channels;
    int64_t energy = 0;
    for (int64_t r = lo; r < hi; r++) {
        const int64_t z = r / H, y = r % H, row = r * W;
        for (int64_t x = 0; x < W; x++) {
            int32_t s, k;
            unary(lv, tables, row + x, &s, &k);
            /* foreground cuts pixel->sink, background source->pixel */
            energy += (labels[row + x] & LABEL) ? k : s;
        }
        /* Pairs row by row per direction; the table only where the labels differ. */
        for (int h = 0; h < offs->count; h++) {
            const int *o = offs->off[h];
            const int64_t nz = z + o[0], ny = y + o[1];
            if (nz >= D || ny < 0 || ny >= H)
                continue;
            const int64_t x0 = o[2] < 0 ? 1 : 0, x1 = o[2] > 0 ? W - 1 : W;
            const int64_t other = (nz * H + ny) * W + o[2];
            const int32_t *table = tables->pairwise[gcut__seg_offset_class(o)];
            for (int64_t x = x0; x < x1; x++)
                if ((labels[row + x] ^ labels[other + x]) & LABEL)
                    energy += table[gcut__seg_sqdiff(lv->pixels + (row + x) * ch,
                                                     lv->pixels + (other + x) * ch, ch)];
        }
    }
    atomic_fetch_add(&j->energy, (long long)energy);
}

int64_t gcut__band_energy(const gcut__band_image *lv, const gcut__seg_tables *tables,
                          int connectivity, const uint8_t *labels, int threads) {
    energy_job j = {lv, tables, connectivity, labels, 0};
    atomic_init(&j.energy, 0);
    band_parallel(threads, lv->dims[0] * lv->dims[1], energy_rows, &j);
    return (int64_t)atomic_load(&j.energy);
}

/* What the solves use at coarse levels, from the block sums s, t, w of gcut__band_node. The
 * boundary term is the smaller of two estimates of what a cut along this block face costs at the
 * finest level: the sum of the pairs crossing the face (exact for a cut on the face, but a
 * block-aligned cut through a uniform region then costs the whole face, which drops
 * low-contrast objects: 4.2% of voxels lost on easy 128^3 seed 3), and the contrast of the
 * downsampled image (which averages noise away and so makes noisy images too smooth: 3.3% of
 * pixels lost on hard 1920x1080 at one level). The minimum lost 0.05-0.07% and 0.34% there
 * (docs/BAND.md). That minimum is then halved: the finest cut is free to follow the cheapest
 * pairs around a block (noise makes some cheap), a block-aligned cut is not, so both estimates
 * overstate what the object's boundary costs, and on noisy volumes whole objects were lost
 * (hard 256^3: 1.76% of the voxels differed from the exact cut; halved, 0.0024%; hard 128^3 at
 * 2 levels: 7.2% and 0.0040%; hard 1920x1080: 0.0485% and 0.0093%; no case measured got worse:
 * docs/BAND.md). All per pixel of a block face: the sums are scaled down by the face's 2^k (2D)
 * or 4^k (3D) pixels with rounding, after taking out the part of the terminals every labelling
 * pays; terminals capped at 2^28. The arithmetic is band_node.h's (gcut__band_finish), shared
 * with the device. */
void gcut__band_node(const gcut__band_image *lv, const gcut__seg_tables *tables, int connectivity,
                     int k, const uint8_t *coarse, const int64_t coarse_dims[3], int64_t cz,
                     int64_t cy, int64_t cx, int64_t *source, int64_t *sink, int64_t w[27]) {
    gcut__band_node_sums(lv, tables, connectivity, k, coarse, coarse_dims, cz, cy, cx, source, sink,
                         w);
}

/* Set BAND on every pixel within Chebyshev distance d of a MARK pixel, and clear MARK.
 * @return the number of MARK pixels found. */
static int64_t dilate_marks_serial(uint8_t *state, const int64_t dims[3], int64_t d) {
    const int64_t D = dims[0], H = dims[1], W = dims[2];
    int64_t marks = 0;
    for (int64_t z = 0; z < D; z++)
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++) {
                uint8_t *p = &state[(z * H + y) * W + x];
                if (!(*p & MARK))
                    continue;
                *p &= (uint8_t)~MARK;
                marks++;
                const int64_t z0 = z - d < 0 ? 0 : z - d, z1 = z + d >= D ? D - 1 : z + d;
                const int64_t y0 = y - d < 0 ? 0 : y - d, y1 = y + d >= H ? H - 1 : y + d;
                const int64_t x0 = x - d < 0 ? 0 : x - d, x1 = x + d >= W ? W - 1 : x + d;
                for (int64_t zz = z0; zz <= z1; zz++)
                    for (int64_t yy = y0; yy <= y1; yy++) {
                        uint8_t *row = state + (zz * H + yy) * W;
                        for (int64_t xx = x0; xx <= x1; xx++)
                            row[xx] |= BAND; /* MARK of later pixels is left alone */
                    }
            }
    return marks;
}

/* MARK the pixels of the projected boundary (both sides of every axis pair with different
 * labels) and the seeds the projection contradicts. */
static void mark_boundary_serial(uint8_t *state, const uint8_t *seeds, const int64_t dims[3]) {
    const int64_t D = dims[0], H = dims[1], W = dims[2];
    for (int64_t z = 0; z < D; z++)
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++) {
                const int64_t i = (z * H + y) * W + x;
                if (gcut__band_boundary(state, seeds, i, z, y, x, dims))
                    state[i] |= MARK;
            }
}

/* ---- the same two passes on several threads. A thread writes only bytes it owns: MARK in
 * units (planes in 3D, rows in 2D) of one parity at a time, reading the neighbouring units of
 * the other parity; the dilation as three one-dimensional passes (any MARK within d along x,
 * then along y, then along z), each over lines that one thread owns, through two spare bits. */
enum { XBIT = 8, YBIT = 16 };
#define STRIP 64 /* columns of one y or z line job: one cache line of each row */

typedef struct select_job {
    uint8_t *state;
    const uint8_t *seeds;
    const int64_t *dims;
    int64_t d;
    int parity;
} select_job;

static void mark_units(void *arg, int64_t lo, int64_t hi) {
    const select_job *j = arg;
    const int64_t D = j->dims[0], H = j->dims[1], W = j->dims[2];
    uint8_t *state = j->state;
    for (int64_t u = 2 * lo + j->parity; u < 2 * hi + j->parity; u += 2) {
        const int64_t z0 = D > 1 ? u : 0, y0 = D > 1 ? 0 : u, y1 = D > 1 ? H : u + 1;
        for (int64_t y = y0; y < y1; y++) {
            const int64_t row = (z0 * H + y) * W;
            for (int64_t x = 0; x < W; x++) {
                const int64_t i = row + x;
                if (gcut__band_boundary(state, j->seeds, i, z0, y, x, j->dims))
                    state[i] |= MARK;
            }
        }
    }
}

/* Along x: XBIT where a MARK is within d in the row (rows [lo, hi)). */
static void dilate_x(void *arg, int64_t lo, int64_t hi) {
    const select_job *j = arg;
    const int64_t W = j->dims[2], d = j->d;
    for (int64_t r = lo; r < hi; r++) {
        uint8_t *row = j->state + r * W;
        int64_t last = -d - 1;
        for (int64_t x = 0; x < W; x++) {
            if (row[x] & MARK)
                last = x;
            if (x - last <= d)
                row[x] |= XBIT;
        }
        last = W + d;
        for (int64_t x = W - 1; x >= 0; x--) {
            if (row[x] & MARK)
                last = x;
            if (last - x <= d)
                row[x] |= XBIT;
        }
    }
}

/* One line direction over lines of STRIP columns: bit `to` where bit `from` is within d along
 * the line; count lines of length len, stride step, starting at base + c for c < cols. */
static void dilate_line(uint8_t *base, int64_t cols, int64_t len, int64_t step, int64_t d,
                        uint8_t from, uint8_t to) {
    int64_t last[STRIP];
    for (int64_t c = 0; c < cols; c++)
        last[c] = -d - 1;
    for (int64_t t = 0; t < len; t++) {
        uint8_t *p = base + t * step;
        for (int64_t c = 0; c < cols; c++) {
            if (p[c] & from)
                last[c] = t;
            if (t - last[c] <= d)
                p[c] |= to;
        }
    }
    for (int64_t c = 0; c < cols; c++)
        last[c] = len + d;
    for (int64_t t = len - 1; t >= 0; t--) {
        uint8_t *p = base + t * step;
        for (int64_t c = 0; c < cols; c++) {
            if (p[c] & from)
                last[c] = t;
            if (last[c] - t <= d)
                p[c] |= to;
        }
    }
}

/* Along y: units (z, strip of x). */
static void dilate_y(void *arg, int64_t lo, int64_t hi) {
    const select_job *j = arg;
    const int64_t H = j->dims[1], W = j->dims[2], strips = (W + STRIP - 1) / STRIP;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t z = u / strips, x0 = (u % strips) * STRIP;
        const int64_t cols = W - x0 < STRIP ? W - x0 : STRIP;
        dilate_line(j->state + z * H * W + x0, cols, H, W, j->d, XBIT,
                    j->dims[0] > 1 ? YBIT : BAND);
    }
}

/* Along z (3D): units (y, strip of x). */
static void dilate_z(void *arg, int64_t lo, int64_t hi) {
    const select_job *j = arg;
    const int64_t D = j->dims[0], H = j->dims[1], W = j->dims[2];
    const int64_t strips = (W + STRIP - 1) / STRIP;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t y = u / strips, x0 = (u % strips) * STRIP;
        const int64_t cols = W - x0 < STRIP ? W - x0 : STRIP;
        dilate_line(j->state + y * W + x0, cols, D, H * W, j->d, YBIT, BAND);
    }
}

static void clear_bits(void *arg, int64_t lo, int64_t hi) {
    const select_job *j = arg;
    const int64_t W = j->dims[2];
    for (int64_t i = lo * W; i < hi * W; i++)
        j->state[i] &= (uint8_t) ~(MARK | XBIT | YBIT);
}

/* The parallel band selection does 2-2.7x the one-thread version's work (measured on the
 * build machine: 52-69 against 25-38 ms of CPU at 3840x2160, 137-143 against 49-53 at 256^3),
 * so it is used from this many threads on. */
#define SELECT_MIN_THREADS 4

/* MARK the projected boundary and the contradicted seeds (mark_boundary_serial). */
static void mark_boundary(uint8_t *state, const uint8_t *seeds, const int64_t dims[3],
                          int threads) {
    if (threads < SELECT_MIN_THREADS) {
        mark_boundary_serial(state, seeds, dims);
        return;
    }
    select_job j = {state, seeds, dims, 0, 0};
    const int64_t units = dims[0] > 1 ? dims[0] : dims[1];
    for (j.parity = 0; j.parity < 2; j.parity++)
        band_parallel(threads, (units - j.parity + 1) / 2, mark_units, &j);
}

/* BAND within Chebyshev distance d of every MARK, MARK cleared (dilate_marks_serial). */
static void dilate_marks(uint8_t *state, const int64_t dims[3], int64_t d, int threads) {
    if (threads < SELECT_MIN_THREADS) {
        dilate_marks_serial(state, dims, d);
        return;
    }
    select_job j = {state, NULL, dims, d, 0};
    const int64_t D = dims[0], H = dims[1], W = dims[2], strips = (W + STRIP - 1) / STRIP;
    band_parallel(threads, D * H, dilate_x, &j);
    band_parallel(threads, D * strips, dilate_y, &j);
    if (D > 1)
        band_parallel(threads, H * strips, dilate_z, &j);
    band_parallel(threads, D * H, clear_bits, &j);
}

/* The band, numbered compactly in raster order: node k is at x = xs[k] in row r (= z * H + y)
 * for row_start[r] <= k < row_start[r + 1]. */
typedef struct band_index {
    int64_t rows;
    int64_t *row_start; /* rows + 1 */
    int32_t *xs;        /* one per band node */
    int64_t nodes;
} band_index;

static void band_index_free(band_index *b) {
    gcut__free(b->row_start);
    gcut__free(b->xs);
    memset(b, 0, sizeof *b);
}

typedef struct index_job {
    const uint8_t *state;
    int64_t W;
    band_index *b;
} index_job;

static void index_count(void *arg, int64_t lo, int64_t hi) {
    const index_job *j = arg;
    for (int64_t r = lo; r < hi; r++) {
        const uint8_t *row = j->state + r * j->W;
        int64_t count = 0;
        for (int64_t x = 0; x < j->W; x++)
            count += (row[x] & BAND) != 0;
        j->b->row_start[r + 1] = count; /* turned into starts below */
    }
}

static void index_fill(void *arg, int64_t lo, int64_t hi) {
    const index_job *j = arg;
    for (int64_t r = lo; r < hi; r++) {
        const uint8_t *row = j->state + r * j->W;
        int64_t k = j->b->row_start[r];
        for (int64_t x = 0; x < j->W; x++)
            if (row[x] & BAND)
                j->b->xs[k++] = (int32_t)x;
    }
}

static gcut_status band_index_build(const uint8_t *state, const int64_t dims[3], band_index *b,
                                    int threads) {
    memset(b, 0, sizeof *b);
    b->rows = dims[0] * dims[1];
    b->row_start = gcut__malloc(gcut__mul_size((size_t)b->rows + 1, sizeof(int64_t)), "band rows");
    if (b->row_start == NULL)
        return GCUT_ERR_NOMEM;
    index_job j = {state, dims[2], b};
    band_parallel(threads, b->rows, index_count, &j);
    b->row_start[0] = 0;
    for (int64_t r = 0; r < b->rows; r++)
        b->row_start[r + 1] += b->row_start[r];
    b->nodes = b->row_start[b->rows];
    b->xs = gcut__malloc(gcut__mul_size((size_t)b->nodes + 1, sizeof(int32_t)), "band nodes");
    if (b->xs == NULL) {
        band_index_free(b);
        return GCUT_ERR_NOMEM;
    }
    band_parallel(threads, b->rows, index_fill, &j);
    return GCUT_OK;
}

/* The node of the band pixel at x in row r (known to be in the band). */
static int64_t band_find(const band_index *b, int64_t r, int64_t x) {
    int64_t lo = b->row_start[r], hi = b->row_start[r + 1] - 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (b->xs[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The graph solver for bands: params->band_solver if named, else the options' solver if it takes
 * general graphs, else cuda-general when the coarsest level ran on the GPU (on the H100 it solved
 * every band measured faster than bk, from 23 thousand nodes up: docs/PERFORMANCE.md), else
 * gcut's "auto" rule for graphs (ibfs on the CPU, or cuda-general on a GPU host by the graph's size
 * and shape). */
static const char *band_solver(const gcut_seg_params *params, const gcut_options *options,
                               const char *coarsest) {
    if (params->band_solver != NULL && strcmp(params->band_solver, "auto") != 0)
        return params->band_solver; /* checked by gcut_segment */
    gcut_solver_info info;
    if (options != NULL && options->solver != NULL && strcmp(options->solver, "auto") != 0 &&
        gcut_solver_find(options->solver, &info) == GCUT_OK && (info.flags & GCUT_TAKES_GRAPH) &&
        info.available)
        return info.name;
    if (strcmp(coarsest, "cuda-grid") == 0 && gcut_solver_find("cuda-general", &info) == GCUT_OK &&
        info.available)
        return "cuda-general";
    return "auto";
}

/* The band problem's graph, filled by rows of the band on several threads: pass 1 counts each
 * row's edges (a band node's edge to every band neighbour at a canonical offset), pass 2 writes
 * nodes' terminals and edges at their row's offset, in the order one thread would. */
typedef struct graph_job {
    const gcut__band_image *base;
    const gcut__seg_tables *tables;
    int connectivity, k;
    const uint8_t *coarse;
    const int64_t *dims;
    const uint8_t *state;
    const band_index *b;
    int64_t *row_edges; /* rows + 1: pass 1 counts, then starts */
    gcut_graph *g;
    const uint8_t *labels; /* the write-back: the solve's labels */
    uint8_t *out;
} graph_job;

static void graph_count(void *arg, int64_t lo, int64_t hi) {
    const graph_job *j = arg;
    const struct offsets *offs = offsets_of(j->connectivity);
    const int64_t D = j->dims[0], H = j->dims[1], W = j->dims[2];
    const band_index *b = j->b;
    for (int64_t r = lo; r < hi; r++) {
        const int64_t z = r / H, y = r % H;
        int64_t count = 0;
        for (int64_t n = b->row_start[r]; n < b->row_start[r + 1]; n++) {
            const int64_t x = b->xs[n];
            for (int h = 0; h < offs->count; h++) {
                const int *o = offs->off[h];
                const int64_t nz = z + o[0], ny = y + o[1], nx = x + o[2];
                if (nz < D && ny >= 0 && ny < H && nx >= 0 && nx < W &&
                    (j->state[(nz * H + ny) * W + nx] & BAND))
                    count++;
            }
        }
        j->row_edges[r + 1] = count;
    }
}

static void graph_fill(void *arg, int64_t lo, int64_t hi) {
    const graph_job *j = arg;
    const struct offsets *offs = offsets_of(j->connectivity);
    const int64_t D = j->dims[0], H = j->dims[1], W = j->dims[2];
    const band_index *b = j->b;
    const uint8_t *state = j->state;
    gcut_graph *g = j->g;
    for (int64_t r = lo; r < hi; r++) {
        const int64_t z = r / H, y = r % H;
        int64_t e = j->row_edges[r];
        for (int64_t n = b->row_start[r]; n < b->row_start[r + 1]; n++) {
            const int64_t x = b->xs[n];
            int64_t s, t, w[27];
            gcut__band_node(j->base, j->tables, j->connectivity, j->k, j->coarse, j->dims, z, y, x,
                            &s, &t, w);
            for (int h = 0; h < offs->count; h++) { /* edges, as graph_count found them */
                const int *o = offs->off[h];
                const int64_t nz = z + o[0], ny = y + o[1], nx = x + o[2];
                if (nz < D && ny >= 0 && ny < H && nx >= 0 && nx < W &&
                    (state[(nz * H + ny) * W + nx] & BAND)) {
                    /* the next pixel of the row is the next node */
                    const int64_t m =
                        o[0] == 0 && o[1] == 0 ? n + 1 : band_find(b, nz * H + ny, nx);
                    const int32_t c = (int32_t)w[gcut__band_slot(o[0], o[1], o[2])];
                    if (g->ids32)
                        g->edge_u32[e] = (uint32_t)n, g->edge_v32[e] = (uint32_t)m;
                    else
                        g->edge_u64[e] = n, g->edge_v64[e] = m;
                    g->edge_cap[e] = c, g->edge_rev[e] = c;
                    e++;
                }
            }
            /* the outer layer: neighbours outside the band keep their projected labels */
            for (int dz = -1; dz <= 1; dz++)
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        const int64_t c = w[gcut__band_slot(dz, dy, dx)];
                        if (c == 0)
                            continue;
                        const uint8_t q = state[((z + dz) * H + (y + dy)) * W + (x + dx)];
                        if (q & BAND)
                            continue;
                        if (q & LABEL)
                            s += c;
                        else
                            t += c;
                    }
            g->tw_source[n] = s, g->tw_sink[n] = t;
        }
    }
}

static void graph_labels(void *arg, int64_t lo, int64_t hi) {
    const graph_job *j = arg;
    const int64_t W = j->dims[2];
    for (int64_t r = lo; r < hi; r++)
        for (int64_t n = j->b->row_start[r]; n < j->b->row_start[r + 1]; n++) {
            uint8_t *p = &j->out[r * W + j->b->xs[n]];
            *p = (uint8_t)((*p & ~LABEL) | (j->labels[n] == GCUT_SOURCE ? LABEL : 0));
        }
}

/* Build the band problem of level k and solve it; the band's labels go to bit 0 of state.
 * Band pixels are nodes; a neighbour outside the band (the outer layer) keeps its projected
 * label, so its pair becomes a terminal capacity of the band node (source if the neighbour is
 * foreground: cut when the node goes to background). */
static gcut_status solve_band(const gcut__band_image *base, const gcut__seg_tables *tables,
                              int connectivity, int k, const uint8_t *coarse, const int64_t dims[3],
                              const gcut_seg_params *params, const gcut_options *options,
                              const char *coarsest, int threads, uint8_t *state,
                              const band_index *b, gcut_seg_level *rep) {
    const double t0 = gcut__now_ms();
    gcut_graph *g = NULL;
    uint8_t *labels = NULL;
    graph_job j = {base, tables, connectivity, k, coarse, dims, state, b, NULL, NULL, NULL, state};
    j.row_edges = gcut__malloc(gcut__mul_size((size_t)b->rows + 1, sizeof(int64_t)), "band rows");
    if (j.row_edges == NULL)
        return GCUT_ERR_NOMEM;
    band_parallel(threads, b->rows, graph_count, &j);
    j.row_edges[0] = 0;
    for (int64_t r = 0; r < b->rows; r++)
        j.row_edges[r + 1] += j.row_edges[r];
    const int64_t edges = j.row_edges[b->rows];
    gcut_status st = gcut_graph_create(b->nodes, edges, &g);
    if (st == GCUT_OK) {
        j.g = g;
        g->num_edges = edges; /* a fresh graph with room for exactly these: filled in place */
        band_parallel(threads, b->rows, graph_fill, &j);
        rep->edges = edges;
    }
    const double t1 = gcut__now_ms();
    rep->build_ms += t1 - t0;
    if (st == GCUT_OK) {
        labels = gcut__malloc((size_t)b->nodes + 1, "band labels");
        if (labels == NULL)
            st = GCUT_ERR_NOMEM;
    }
    if (st == GCUT_OK) {
        gcut_options o;
        gcut_options_init(&o);
        if (options != NULL)
            o = *options;
        o.solver = band_solver(params, options, coarsest);
        o.verbose = 0;
        gcut_stats stats;
        st = gcut_graph_solve(g, &o, &rep->flow, labels, &stats);
        if (st == GCUT_OK)
            snprintf(rep->solver, sizeof rep->solver, "%s", stats.solver);
    }
    gcut_graph_free(g);
    if (st == GCUT_OK) {
        j.labels = labels;
        band_parallel(threads, b->rows, graph_labels, &j);
    }
    gcut__free(labels);
    gcut__free(j.row_edges);
    rep->solve_ms += gcut__now_ms() - t1;
    rep->rounds++;
    return st;
}

/* ---- the band problem as a MASKED GRID (band_node.h): the level's full grid, nodes outside the
 * band isolated, their n-links to band nodes folded into the band nodes' terminals. The CPU twin
 * of the device pipeline (src/cuda/band_gpu.cu), which builds the same grid with the same code. */
typedef struct masked_job {
    const gcut__band_image *base;
    const gcut__seg_tables *tables;
    int connectivity, k;
    const uint8_t *coarse;
    const int64_t *dims;
    const uint8_t *state;
    gcut_grid *grid;
} masked_job;

static void masked_rows(void *arg, int64_t lo, int64_t hi) {
    const masked_job *j = arg;
    const int64_t H = j->dims[1], W = j->dims[2];
    gcut_grid *g = j->grid;
    for (int64_t r = lo; r < hi; r++) {
        const int64_t z = r / H, y = r % H;
        for (int64_t x = 0; x < W; x++) {
            const int64_t i = r * W + x;
            int64_t s, t, w[27];
            gcut__band_masked_node(j->base, j->tables, j->connectivity, j->k, j->coarse, j->dims,
                                   j->state, z, y, x, &s, &t, w);
            g->terminal[GCUT_SOURCE][i] = (int32_t)s, g->terminal[GCUT_SINK][i] = (int32_t)t;
            for (int d = 0; d < g->num_dirs; d++) {
                const int *o = g->offset[d];
                g->cap[d][i] = (int32_t)w[gcut__band_slot(o[0], o[1], o[2])];
            }
        }
    }
}

gcut_status gcut__band_masked_grid(const gcut__band_image *base, const gcut__seg_tables *tables,
                                   int connectivity, int k, const uint8_t *coarse,
                                   const uint8_t *state, gcut_grid *grid, int threads) {
    const int64_t dims[3] = {grid->depth, grid->height, grid->width};
    if (grid->connectivity != connectivity)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "band masked grid: the grid is %d-connected, the energy %d-connected",
                          grid->connectivity, connectivity);
    masked_job j = {base, tables, connectivity, k, coarse, dims, state, grid};
    band_parallel(threads, dims[0] * dims[1], masked_rows, &j);
    return GCUT_OK;
}

typedef struct masked_labels_job {
    const uint8_t *labels;
    uint8_t *state;
    int64_t W;
} masked_labels_job;

static void masked_labels(void *arg, int64_t lo, int64_t hi) {
    const masked_labels_job *j = arg;
    for (int64_t i = lo * j->W; i < hi * j->W; i++)
        if (j->state[i] & BAND)
            j->state[i] =
                (uint8_t)((j->state[i] & ~LABEL) | (j->labels[i] == GCUT_SOURCE ? LABEL : 0));
}

/* solve_band through the masked grid, solved by the options' grid solver: the same band problem,
 * the same minimum (flow) and, with a solver of the same cut rule, the same labels. */
static gcut_status solve_band_masked(const gcut__band_image *base, const gcut__seg_tables *tables,
                                     int connectivity, int k, const uint8_t *coarse,
                                     const int64_t dims[3], const gcut_options *options,
                                     int threads, uint8_t *state, const band_index *b,
                                     gcut_seg_level *rep) {
    const double t0 = gcut__now_ms();
    graph_job gj = {base, tables, connectivity, k, coarse, dims, state, b, NULL, NULL, NULL, state};
    gj.row_edges = gcut__malloc(gcut__mul_size((size_t)b->rows + 1, sizeof(int64_t)), "band rows");
    if (gj.row_edges == NULL)
        return GCUT_ERR_NOMEM;
    band_parallel(threads, b->rows, graph_count, &gj); /* the band graph's edges, for the report */
    int64_t edges = 0;
    for (int64_t r = 0; r < b->rows; r++)
        edges += gj.row_edges[r + 1];
    gcut__free(gj.row_edges);
    rep->edges = edges;
    const bool three_d = dims[0] > 1;
    gcut_grid *grid = NULL;
    uint8_t *labels = NULL;
    gcut_status st =
        gcut_grid_create(three_d ? 3 : 2, three_d ? dims : dims + 1, connectivity, &grid);
    if (st == GCUT_OK)
        st = gcut__band_masked_grid(base, tables, connectivity, k, coarse, state, grid, threads);
    if (st == GCUT_OK &&
        (labels = gcut__malloc((size_t)grid->num_nodes, "masked band labels")) == NULL)
        st = GCUT_ERR_NOMEM;
    const double t1 = gcut__now_ms();
    rep->build_ms += t1 - t0;
    if (st == GCUT_OK) {
        gcut_options o;
        gcut_options_init(&o);
        if (options != NULL)
            o = *options;
        o.verbose = 0;
        gcut_stats stats;
        st = gcut_grid_solve(grid, &o, &rep->flow, labels, &stats);
        if (st == GCUT_OK) {
            snprintf(rep->solver, sizeof rep->solver, "%.20s (masked)", stats.solver);
            masked_labels_job mj = {labels, state, dims[2]};
            band_parallel(threads, dims[0] * dims[1], masked_labels, &mj);
        }
    }
    gcut_grid_free(grid);
    gcut__free(labels);
    rep->solve_ms += gcut__now_ms() - t1;
    rep->rounds++;
    return st;
}

/* MARK the outer-layer pixels that the band's cut touches: neighbours outside the band whose
 * label differs from a band pixel's. @return whether any. */
static bool mark_touches(uint8_t *state, const int64_t dims[3], int connectivity,
                         const band_index *b) {
    int off[13][3];
    const int nh = half_offsets(connectivity, off);
    const int64_t D = dims[0], H = dims[1], W = dims[2];
    bool any = false;
    for (int64_t r = 0; r < b->rows; r++) {
        const int64_t z = r / H, y = r % H;
        for (int64_t k = b->row_start[r]; k < b->row_start[r + 1]; k++) {
            const int64_t x = b->xs[k];
            const uint8_t l = state[r * W + x] & LABEL;
            for (int h = 0; h < nh; h++)
                for (int sign = 1; sign >= -1; sign -= 2) {
                    const int64_t nz = z + sign * off[h][0], ny = y + sign * off[h][1];
                    const int64_t nx = x + sign * off[h][2];
                    if (nz < 0 || nz >= D || ny < 0 || ny >= H || nx < 0 || nx >= W)
                        continue;
                    uint8_t *q = &state[(nz * H + ny) * W + nx];
                    if (!(*q & BAND) && (*q & LABEL) != l) {
                        *q |= MARK;
                        any = true;
                    }
                }
        }
    }
    return any;
}

int64_t gcut__band_select(uint8_t *state, const uint8_t *seeds, const int64_t dims[3], int64_t d,
                          int threads) {
    const int64_t n = dims[0] * dims[1] * dims[2];
    for (int64_t i = 0; i < n; i++)
        state[i] &= LABEL;
    mark_boundary(state, seeds, dims, threads);
    dilate_marks(state, dims, d, threads);
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++)
        count += (state[i] & BAND) != 0;
    return count;
}

/* The caller's mask from the finest level's state: bit 0 only; foreground counted. */
typedef struct mask_job {
    uint8_t *mask;
    int64_t W;
    atomic_llong foreground;
} mask_job;

static void mask_rows(void *arg, int64_t lo, int64_t hi) {
    mask_job *j = arg;
    int64_t fg = 0;
    for (int64_t i = lo * j->W; i < hi * j->W; i++) {
        j->mask[i] &= LABEL;
        fg += j->mask[i];
    }
    atomic_fetch_add(&j->foreground, (long long)fg);
}

/* Levels for GCUT_SEG_LEVELS_AUTO: none below 2^20 pixels; else halve until the coarsest
 * level has at most 2^18 pixels or voxels (512x512, 64^3). */
static int auto_levels(const int64_t dims[3]) {
    int64_t n = dims[0] * dims[1] * dims[2];
    if (n < ((int64_t)1 << 20))
        return 0;
    const int64_t target = (int64_t)1 << 18;
    int levels = 0;
    int64_t d[3] = {dims[0], dims[1], dims[2]};
    while (n > target && levels < GCUT_SEG_MAX_LEVELS) {
        for (int k = 0; k < 3; k++)
            d[k] = half_up(d[k]);
        n = d[0] * d[1] * d[2];
        levels++;
    }
    return levels;
}

/* The coarsest level's pass over the image, shared by its jobs. */
typedef struct coarse_job {
    const gcut__band_image *base;
    const gcut__seg_tables *tables;
    int connectivity, k;
    const uint8_t *coarse;
    gcut_grid *grid;
    int canon[27]; /* slot of a canonical offset -> its half index, else -1 */
    int64_t *st;   /* terminal sums, 2 per coarse node */
    int64_t *wa;   /* pair sums, one per coarse node and canonical offset */
    const uint64_t *packed;
} coarse_job;

/* Slabs [lo, hi) of the image: the fine rows of coarse planes (3D) or coarse rows (2D). A pair
 * crossing blocks is added to its canonical block, or to the other block when the offset from
 * this block to that one is not canonical: (0, 0, -1) or (0, -1, *), the same slab (a pair's
 * pixel offset has dz >= 0, and dy >= 0 when dz = 0), so slabs on different threads never
 * write the same sums. */
static void coarse_slabs(void *arg, int64_t lo, int64_t hi) {
    const coarse_job *j = arg;
    const gcut__band_image *base = j->base;
    const gcut__seg_tables *tables = j->tables;
    const int k = j->k;
    const int64_t cH = j->grid->height, cW = j->grid->width;
    const int64_t D = base->dims[0], H = base->dims[1], W = base->dims[2];
    const struct offsets *offs = offsets_of(j->connectivity);
    const int nh = offs->count;
    int64_t *st = j->st, *wa = j->wa;
    const uint64_t hard_fg = (uint64_t)(uint32_t)tables->hard << 32;
    const uint64_t hard_bg = (uint32_t)tables->hard;
    const int ch = tables->channels;
    const int64_t mb = ((int64_t)1 << k) - 1, run = mb + 1 < 64 ? mb + 1 : 64;
    const bool planes = D > 1;
    const int64_t a0 = lo << k, a1 = (hi << k) < (planes ? D : H) ? hi << k : (planes ? D : H);
    for (int64_t z = planes ? a0 : 0; z < (planes ? a1 : 1); z++)
        for (int64_t y = planes ? 0 : a0; y < (planes ? H : a1); y++) {
            const bool row_edge = (D > 1 && ((z & mb) == 0 || (z & mb) == mb || z == D - 1)) ||
                                  (H > 1 && ((y & mb) == 0 || (y & mb) == mb || y == H - 1));
            const int64_t prow = ((z >> k) * cH + (y >> k)) * cW, row = (z * H + y) * W;
            const uint8_t *px = base->pixels + row * ch, *sd = base->seeds + row;
            /* Both unary capacities of a colour in one word (source high, sink low): one
             * cache miss per pixel instead of two. A run of at most 64 pixels sums each half
             * below 2^32 (capacities are below 2^26). */
            for (int64_t x0 = 0; x0 < W; x0 += run) {
                const int64_t x1 = x0 + run < W ? x0 + run : W, P = prow + (x0 >> k);
                uint64_t acc = 0;
                for (int64_t x = x0; x < x1; x++)
                    acc += sd[x] == GCUT_SEED_FOREGROUND ? hard_fg
                           : sd[x] == GCUT_SEED_BACKGROUND
                               ? hard_bg
                               : j->packed[gcut__seg_color_index(px + x * ch, ch)];
                st[2 * P] += (int64_t)(acc >> 32), st[2 * P + 1] += (int64_t)(acc & 0xFFFFFFFFu);
            }
            /* Pairs that cross blocks: every pixel of a row on a block's edge, else only the
             * first and last pixel of each block. */
            for (int64_t x = 0; x < W; x = !row_edge && (x & mb) == 0 && mb > 1 ? x + mb : x + 1) {
                const int64_t i = row + x, P = prow + (x >> k);
                for (int h = 0; h < nh; h++) {
                    const int *o = offs->off[h];
                    const int64_t nz = z + o[0], ny = y + o[1], nx = x + o[2];
                    if (nz >= D || ny < 0 || ny >= H || nx < 0 || nx >= W)
                        continue;
                    const int bz = (int)((nz >> k) - (z >> k)), by = (int)((ny >> k) - (y >> k));
                    const int bx = (int)((nx >> k) - (x >> k));
                    if (bz == 0 && by == 0 && bx == 0)
                        continue;
                    const int64_t w = pairwise(base, tables, o, i, (nz * H + ny) * W + nx);
                    const int c = j->canon[gcut__band_slot(bz, by, bx)];
                    if (c >= 0)
                        wa[P * nh + c] += w;
                    else /* the other block's offset to this one is the canonical one */
                        wa[(((nz >> k) * cH + (ny >> k)) * cW + (nx >> k)) * nh +
                           j->canon[gcut__band_slot(-bz, -by, -bx)]] += w;
                }
            }
        }
}

/* Coarse rows [lo, hi) of the grid from the sums (reads neighbours' sums, writes its own). */
static void coarse_fill(void *arg, int64_t lo, int64_t hi) {
    const coarse_job *j = arg;
    gcut_grid *grid = j->grid;
    const int64_t cD = grid->depth, cH = grid->height, cW = grid->width;
    const int64_t cdims[3] = {cD, cH, cW};
    const struct offsets *offs = offsets_of(j->connectivity);
    const int nh = offs->count;
    const int64_t *st = j->st, *wa = j->wa;
    int32_t *src = grid->terminal[GCUT_SOURCE], *snk = grid->terminal[GCUT_SINK];
    for (int64_t r = lo; r < hi; r++) {
        const int64_t z = r / cH, y = r % cH;
        for (int64_t x = 0; x < cW; x++) {
            const int64_t P = r * cW + x;
            int64_t s = st[2 * P], t = st[2 * P + 1], w[27];
            memset(w, 0, sizeof w);
            for (int h = 0; h < nh; h++) {
                const int *o = offs->off[h];
                w[gcut__band_slot(o[0], o[1], o[2])] = wa[P * nh + h];
                const int64_t qz = z - o[0], qy = y - o[1], qx = x - o[2];
                if (qz >= 0 && qy >= 0 && qy < cH && qx >= 0 && qx < cW)
                    w[gcut__band_slot(-o[0], -o[1], -o[2])] =
                        wa[((qz * cH + qy) * cW + qx) * nh + h];
            }
            gcut__band_finish(j->tables, j->connectivity, j->k, j->base->dims[0] > 1, j->coarse,
                              cdims, z, y, x, &s, &t, w);
            src[P] = (int32_t)s, snk[P] = (int32_t)t;
            for (int d = 0; d < grid->num_dirs; d++) {
                const int *o = grid->offset[d];
                grid->cap[d][P] = (int32_t)w[gcut__band_slot(o[0], o[1], o[2])];
            }
        }
    }
}

/* Fill the coarsest level's grid (level k >= 1 of base) with what gcut__band_node gives each
 * node, in one pass over the image: terminal sums per block, and each pair that crosses
 * blocks added once, to the block whose offset to the other is canonical. */
gcut_status gcut__band_coarse_grid(const gcut__band_image *base, const gcut__seg_tables *tables,
                                   int connectivity, int k, const uint8_t *coarse, gcut_grid *grid,
                                   int threads) {
    const int64_t nc = grid->num_nodes;
    const struct offsets *offs = offsets_of(connectivity);
    const int nh = offs->count;
    coarse_job j;
    memset(&j, 0, sizeof j);
    j.base = base, j.tables = tables, j.connectivity = connectivity, j.k = k;
    j.coarse = coarse, j.grid = grid;
    for (int s = 0; s < 27; s++)
        j.canon[s] = -1;
    for (int h = 0; h < nh; h++)
        j.canon[gcut__band_slot(offs->off[h][0], offs->off[h][1], offs->off[h][2])] = h;
    j.st = gcut__calloc((size_t)nc, 2 * sizeof(int64_t), "coarse terminal sums");
    j.wa = gcut__calloc((size_t)nc, (size_t)nh * sizeof(int64_t), "coarse pair sums");
    const int64_t ncol = tables->num_colors;
    uint64_t *packed = gcut__malloc(gcut__mul_size((size_t)ncol, 8), "packed unary table");
    if (j.st == NULL || j.wa == NULL || packed == NULL) {
        gcut__free(j.st);
        gcut__free(j.wa);
        gcut__free(packed);
        return GCUT_ERR_NOMEM;
    }
    for (int64_t c = 0; c < ncol; c++)
        packed[c] =
            ((uint64_t)(uint32_t)tables->unary_source[c] << 32) | (uint32_t)tables->unary_sink[c];
    j.packed = packed;
    band_parallel(threads, base->dims[0] > 1 ? grid->depth : grid->height, coarse_slabs, &j);
    band_parallel(threads, grid->depth * grid->height, coarse_fill, &j);
    gcut__free(j.st);
    gcut__free(j.wa);
    gcut__free(packed);
    return GCUT_OK;
}

/* The route of gcut__band_segment under GCUT__BAND_AUTO: GCUT_BAND_ROUTE in the environment
 * (1 graph, 2 masked, 3 device: for benchmarks) if set, else the device pipeline when a full
 * solve of the image would run on cuda-grid, no band solver is named, no band growth is asked
 * for and the pipeline fits the device; else the band graphs. */
static int band_route(const gcut_image *image, const gcut_seg_params *params,
                      const gcut_options *options, int levels, int channels, int conn) {
    const int env = gcut__env_int("GCUT_BAND_ROUTE", 0, 0, 3);
    if (env != 0)
        return env;
#ifdef GCUT_HAVE_CUDA
    if ((params->band_solver == NULL || strcmp(params->band_solver, "auto") == 0) &&
        !params->band_grow) {
        gcut_status st = GCUT_OK;
        const int64_t n = image->width * image->height * image->depth;
        const gcut__solver *s = gcut__solver_pick(options, true, n, &st);
        gcut__clear_error();
        const int64_t dims[3] = {image->depth, image->height, image->width};
        if (s != NULL && strcmp(s->name, "cuda-grid") == 0 &&
            gcut__band_device_fits(dims, channels, conn, levels, options))
            return GCUT__BAND_DEVICE;
    }
#else
    (void)image, (void)params, (void)options, (void)levels, (void)channels, (void)conn;
#endif
    return GCUT__BAND_GRAPH;
}

gcut_status gcut__band_segment(const gcut_image *image, const uint8_t *seeds,
                               const gcut_seg_params *params, const gcut_options *options,
                               uint8_t *mask, gcut_seg_report *r) {
    return gcut__band_segment_route(image, seeds, params, options, mask, r, GCUT__BAND_AUTO);
}

gcut_status gcut__band_segment_route(const gcut_image *image, const uint8_t *seeds,
                                     const gcut_seg_params *params, const gcut_options *options,
                                     uint8_t *mask, gcut_seg_report *report, int route) {
    gcut_seg_report local;
    gcut_seg_report *r = report != NULL ? report : &local;
    int levels = params->levels;
    if (levels == GCUT_SEG_LEVELS_AUTO && image != NULL && image->width > 0 && image->height > 0 &&
        image->depth > 0) {
        const int64_t dims[3] = {image->depth, image->height, image->width};
        if ((levels = auto_levels(dims)) == 0) {
            gcut_seg_params full = *params; /* small: the ordinary full solve */
            full.levels = 0;
            return gcut_segment(image, seeds, &full, options, mask, r);
        }
    }
    const bool picked = route == GCUT__BAND_AUTO;
    gcut_seg_params pp = *params;
    double sigma_ms = 0;
    gcut_status st = GCUT_OK;
#ifdef GCUT_HAVE_CUDA
    /* The device pipeline begins before the tables: the image is uploaded and the boundary
     * term's sigma estimated on the device (the same value as the host's pass over the image,
     * gcut__seg_estimate_sigma), then given to the tables. Bad input is left to
     * gcut__seg_prepare below, which names it. */
    void *dev = NULL;
    if ((route == GCUT__BAND_AUTO || route == GCUT__BAND_DEVICE) &&
        gcut__seg_check_image("segmentation", image) == GCUT_OK) {
        gcut_seg_params rp;
        const uint8_t *wp = NULL;
        uint8_t *wo = NULL;
        int ch = 0;
        if (gcut__seg_resolve_params(params, image->depth > 1, image->channels >= 3, &rp) ==
                GCUT_OK &&
            gcut__seg_working_image(image, &wp, &wo, &ch) == GCUT_OK) {
            if (picked)
                route = band_route(image, params, options, levels, ch, rp.connectivity);
            if (route == GCUT__BAND_DEVICE) {
                const int64_t dims[3] = {image->depth, image->height, image->width};
                double sigma = 0;
                const double t0 = gcut__now_ms();
                st = gcut__band_device_begin(wp, ch, dims, rp.connectivity, levels, options, &dev,
                                             &sigma);
                if (st == GCUT_OK) {
                    if (params->sigma <= 0)
                        pp.sigma = sigma;
                    sigma_ms = gcut__now_ms() - t0;
                } else if (picked && st == GCUT_ERR_NOMEM) {
                    route = GCUT__BAND_GRAPH; /* short of device memory: the host passes */
                    st = GCUT_OK;
                } else {
                    gcut__free(wo);
                    return st;
                }
            }
        }
        gcut__free(wo);
        gcut__clear_error();
    }
#endif
    gcut__seg_tables *tables;
    const uint8_t *pixels;
    uint8_t *owned;
    st = gcut__seg_prepare(image, seeds, &pp, &tables, &pixels, &owned, r);
    if (st != GCUT_OK) {
#ifdef GCUT_HAVE_CUDA
        gcut__band_device_end(dev);
#endif
        return st;
    }
    const double tables_ms = r->build_ms + sigma_ms; /* sigma (host or device) and tables */
    if (route == GCUT__BAND_AUTO)
        route = band_route(image, params, options, levels, tables->channels, r->connectivity);
#ifdef GCUT_HAVE_CUDA
    if (route == GCUT__BAND_DEVICE) {
        const gcut__band_image dev_base = {
            {image->depth, image->height, image->width}, tables->channels, pixels, seeds};
        const gcut_seg_report before = *r;
        st = gcut__band_device_segment(dev, &dev_base, tables, r->connectivity, levels,
                                       params->band, options, mask, r);
        if (st == GCUT_OK)
            r->build_ms += tables_ms;
        /* Picked by the rule and short of device memory after all: the host passes. */
        if (!(picked && st == GCUT_ERR_NOMEM)) {
            gcut__seg_tables_free(tables);
            gcut__free(owned);
            return st;
        }
        gcut__clear_error();
        *r = before;
        route = GCUT__BAND_GRAPH;
        st = GCUT_OK;
    }
#else
    (void)picked;
    if (route == GCUT__BAND_DEVICE) {
        gcut__seg_tables_free(tables);
        gcut__free(owned);
        return gcut__fail(GCUT_ERR_NO_DEVICE,
                          "banded segmentation: the device pipeline needs a CUDA build");
    }
#endif
    const int conn = r->connectivity;
    const bool verbose = options != NULL && options->verbose;
    const int threads = band_threads(options);
    const gcut__band_image base = {
        {image->depth, image->height, image->width}, tables->channels, pixels, seeds};
    int64_t dims[GCUT_SEG_MAX_LEVELS + 1][3];
    const uint8_t *lseeds[GCUT_SEG_MAX_LEVELS + 1];  /* seed bits per level */
    const uint8_t *lpixels[GCUT_SEG_MAX_LEVELS + 1]; /* downsampled images */
    uint8_t *state[GCUT_SEG_MAX_LEVELS + 1];
    uint8_t *block[GCUT_SEG_MAX_LEVELS + 1]; /* seeds and state of the coarse levels */
    memset(block, 0, sizeof block);
    memcpy(dims[0], base.dims, sizeof dims[0]);
    lseeds[0] = seeds;
    lpixels[0] = pixels;
    state[0] = mask;
    const int ch = tables->channels;
    const int64_t d = params->band;
    r->levels = levels;
    /* Coarsening: seeds and pixels (regional terms are summed from the image's). */
    for (int k = 1; k <= levels; k++) {
        const double t0 = gcut__now_ms();
        for (int a = 0; a < 3; a++)
            dims[k][a] = half_up(dims[k - 1][a]);
        const int64_t n = dims[k][0] * dims[k][1] * dims[k][2];
        if ((block[k] = gcut__malloc(gcut__mul_size((size_t)n, 2 + (size_t)ch), "coarse level")) ==
            NULL) {
            st = GCUT_ERR_NOMEM;
            goto done;
        }
        gcut__band_coarsen_seeds(lseeds[k - 1], dims[k - 1], block[k], dims[k], threads);
        lseeds[k] = block[k];
        state[k] = block[k] + n;
        gcut__band_coarsen_pixels(lpixels[k - 1], dims[k - 1], ch, block[k] + 2 * n, threads);
        lpixels[k] = block[k] + 2 * n;
        r->level[k].build_ms += gcut__now_ms() - t0;
    }
    for (int k = 0; k <= levels; k++) {
        gcut_seg_level *rep = &r->level[k];
        rep->depth = dims[k][0], rep->height = dims[k][1], rep->width = dims[k][2];
    }
    /* The coarsest level in full, with the solver asked for (cuda-grid included). */
    {
        gcut_seg_level *rep = &r->level[levels];
        const double t0 = gcut__now_ms();
        const bool three_d = image->depth > 1;
        gcut_grid *grid = NULL;
        st = gcut_grid_create(three_d ? 3 : 2, three_d ? dims[levels] : dims[levels] + 1, conn,
                              &grid);
        if (st != GCUT_OK)
            goto done;
        if ((st = gcut__band_coarse_grid(&base, tables, conn, levels, lpixels[levels], grid,
                                         threads)) != GCUT_OK) {
            gcut_grid_free(grid);
            goto done;
        }
        rep->build_ms += gcut__now_ms() - t0;
        const double t1 = gcut__now_ms();
        st = gcut_grid_solve(grid, options, &rep->flow, state[levels], &r->stats);
        gcut_grid_free(grid);
        if (st != GCUT_OK)
            goto done;
        const int64_t n = dims[levels][0] * dims[levels][1] * dims[levels][2];
        for (int64_t i = 0; i < n; i++)
            state[levels][i] = state[levels][i] == GCUT_SOURCE ? LABEL : 0;
        rep->nodes = n;
        rep->rounds = 1;
        snprintf(rep->solver, sizeof rep->solver, "%s", r->stats.solver);
        rep->solve_ms = gcut__now_ms() - t1;
        if (verbose)
            fprintf(stderr,
                    "gcut segment: level %d (%" PRId64 "x%" PRId64 "x%" PRId64
                    ") solved in full, %.1f ms\n",
                    levels, rep->width, rep->height, rep->depth, rep->build_ms + rep->solve_ms);
    }
    /* Uncoarsening: project, band, solve the band. */
    for (int k = levels - 1; k >= 0; k--) {
        gcut_seg_level *rep = &r->level[k];
        const double t0 = gcut__now_ms();
        gcut__band_project(state[k + 1], dims[k + 1], state[k], dims[k], threads);
        gcut__free(block[k + 1]); /* the coarser level is done with */
        block[k + 1] = NULL;
        mark_boundary(state[k], lseeds[k], dims[k], threads);
        dilate_marks(state[k], dims[k], d, threads);
        rep->build_ms += gcut__now_ms() - t0;
        for (int round = 0;; round++) {
            const double t1 = gcut__now_ms();
            band_index b;
            if ((st = band_index_build(state[k], dims[k], &b, threads)) != GCUT_OK)
                goto done;
            rep->build_ms += gcut__now_ms() - t1;
            rep->nodes = b.nodes;
            rep->edges = 0;
            if (b.nodes == 0) {
                rep->flow = 0;
                band_index_free(&b);
                break; /* an empty band: the projection stands */
            }
            st = route == GCUT__BAND_MASKED
                     ? solve_band_masked(&base, tables, conn, k, lpixels[k], dims[k], options,
                                         threads, state[k], &b, rep)
                     : solve_band(&base, tables, conn, k, lpixels[k], dims[k], params, options,
                                  r->level[levels].solver, threads, state[k], &b, rep);
            bool grow = false;
            if (st == GCUT_OK && params->band_grow && round < 31) {
                const double t2 = gcut__now_ms();
                grow = mark_touches(state[k], dims[k], conn, &b);
                if (grow)
                    dilate_marks(state[k], dims[k], d > 0 ? d : 1, threads);
                rep->build_ms += gcut__now_ms() - t2;
            }
            band_index_free(&b);
            if (st != GCUT_OK)
                goto done;
            if (!grow)
                break;
        }
        if (verbose) {
            const int64_t n = dims[k][0] * dims[k][1] * dims[k][2];
            fprintf(stderr,
                    "gcut segment: level %d (%" PRId64 "x%" PRId64 "x%" PRId64 ") band %" PRId64
                    " nodes (%.2f%%), %d round%s, %.1f ms\n",
                    k, rep->width, rep->height, rep->depth, rep->nodes,
                    100.0 * (double)rep->nodes / (double)n, rep->rounds,
                    rep->rounds == 1 ? "" : "s", rep->build_ms + rep->solve_ms);
        }
    }
    {
        const double t0 = gcut__now_ms();
        r->energy = gcut__band_energy(&base, tables, conn, mask, threads);
        r->energy_ms = gcut__now_ms() - t0;
    }
    {
        mask_job j = {mask, image->width, 0};
        atomic_init(&j.foreground, 0);
        band_parallel(threads, image->height * image->depth, mask_rows, &j);
        r->foreground_pixels = (int64_t)atomic_load(&j.foreground);
    }
    r->build_ms = tables_ms;
    r->solve_ms = 0;
    for (int k = 0; k <= levels; k++) {
        r->build_ms += r->level[k].build_ms;
        r->solve_ms += r->level[k].solve_ms;
    }
    r->stats.flow = r->level[0].flow;
done:
    for (int k = 1; k <= GCUT_SEG_MAX_LEVELS; k++)
        gcut__free(block[k]);
    gcut__seg_tables_free(tables);
    gcut__free(owned);
    return st;
}
