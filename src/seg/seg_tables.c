/* seg_tables.c - the segmentation energy as integer lookup tables and the kernel that fills a
 * grid from them: Boykov-Jolly regional term with hard constraints and the contrast-sensitive
 * boundary term lambda * exp(-d^2 / 2 sigma^2) / dist (Lattari 2010 ch. 3.4, Table 1). */
#include "internal.h"
#include "seg_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

static int classes_for(int connectivity) {
    switch (connectivity) {
    case 4:
    case 6:
        return 1;
    case 8:
        return 2;
    default:
        return 3;
    }
}

gcut_status gcut__seg_tables_alloc(int channels, int connectivity, gcut__seg_tables **out) {
    *out = NULL;
    if (channels != 1 && channels != 3)
        return gcut__fail(GCUT_ERR_INTERNAL, "segmentation tables: %d channels", channels);
    gcut__seg_tables *t = gcut__calloc(1, sizeof *t, "segmentation tables");
    if (t == NULL)
        return GCUT_ERR_NOMEM;
    t->channels = channels;
    t->quant_shift = channels == 1 ? 0 : 2;
    t->num_colors = channels == 1 ? 256 : (int64_t)1 << 18;
    t->max_sqdiff = 255 * 255 * channels;
    t->num_classes = classes_for(connectivity);
    /* One block, in the order gcut__seg_tables_block() names, so that one copy moves them all
     * (a device upload of a colour image's 3.6 MB was four copies before). */
    const size_t np = (size_t)t->max_sqdiff + 1;
    int32_t *block = gcut__calloc(2 * (size_t)t->num_colors + (size_t)t->num_classes * np,
                                  sizeof(int32_t), "segmentation tables");
    if (block == NULL) {
        gcut__free(t);
        return GCUT_ERR_NOMEM;
    }
    t->unary_source = block;
    t->unary_sink = block + t->num_colors;
    for (int k = 0; k < t->num_classes; k++)
        t->pairwise[k] = block + 2 * t->num_colors + (size_t)k * np;
    *out = t;
    return GCUT_OK;
}

const int32_t *gcut__seg_tables_block(const gcut__seg_tables *t, size_t *count) {
    const size_t nc = (size_t)t->num_colors, np = (size_t)t->max_sqdiff + 1;
    *count = 2 * nc + (size_t)t->num_classes * np;
    return t->unary_source;
}

void gcut__seg_tables_free(gcut__seg_tables *tables) {
    if (tables == NULL)
        return;
    gcut__free(tables->unary_source); /* the block (gcut__seg_tables_alloc) */
    gcut__free(tables);
}

bool gcut__seg_tables_legacy(void) {
    return gcut__env_int("GCUT_SEG_TABLES_LEGACY", 0, 0, 1) != 0;
}

/* Regional costs after removing the per-colour constant min(cost_fg, cost_bg), which changes
 * every labelling's energy by the same amount and so not the minimiser, but shrinks the flow. */
static void reduced_costs(double cost_fg, double cost_bg, double *fg, double *bg) {
    if (!isfinite(cost_fg) && !isfinite(cost_bg))
        cost_fg = cost_bg = 0.0; /* no evidence either way */
    double m = cost_fg < cost_bg ? cost_fg : cost_bg;
    *fg = isfinite(cost_fg) ? cost_fg - m : GCUT__SEG_UNARY_MAX_NATS;
    *bg = isfinite(cost_bg) ? cost_bg - m : GCUT__SEG_UNARY_MAX_NATS;
    if (*fg > GCUT__SEG_UNARY_MAX_NATS)
        *fg = GCUT__SEG_UNARY_MAX_NATS;
    if (*bg > GCUT__SEG_UNARY_MAX_NATS)
        *bg = GCUT__SEG_UNARY_MAX_NATS;
}

static int32_t quantise(double scale, double energy) {
    return (int32_t)floor(scale * energy + 0.5);
}

/* One part of the fill: colours [c0, c1) (their unary entries, or their reduced maximum when
 * max_only) and squared differences [d0, d1) of every pairwise row. Entries are independent, so
 * the tables do not depend on the split. */
typedef struct table_part {
    gcut__seg_tables *t;
    const double *cost_fg, *cost_bg;
    double lambda, scale, inv_two_sigma2;
    int64_t c0, c1, d0, d1;
    bool max_only;
    double unary_max;
} table_part;

static void *table_part_run(void *arg) {
    table_part *j = arg;
    gcut__seg_tables *t = j->t;
    double unary_max = 0.0;
    for (int64_t c = j->c0; c < j->c1; c++) {
        double fg, bg;
        reduced_costs(j->cost_fg[c], j->cost_bg[c], &fg, &bg);
        if (j->max_only) {
            unary_max = fg > unary_max ? fg : unary_max;
            unary_max = bg > unary_max ? bg : unary_max;
        } else {
            t->unary_source[c] = quantise(j->scale, bg); /* cut when the pixel goes to background */
            t->unary_sink[c] = quantise(j->scale, fg);   /* cut when it stays foreground */
        }
    }
    j->unary_max = unary_max;
    if (j->max_only)
        return NULL;
    for (int k = 0; k < t->num_classes; k++) {
        const double weight = j->lambda / sqrt((double)(k + 1));
        int32_t *row = t->pairwise[k];
        int64_t d2 = j->d0;
        for (; d2 < j->d1; d2++) {
            /* d2 = 0 is exp(0) = 1 even when a tiny sigma makes inv_two_sigma2 infinite
             * (0 * inf would be NaN, and NaN to int32 undefined: issue #10). */
            row[d2] = quantise(j->scale,
                               d2 == 0 ? weight : weight * exp(-(double)d2 * j->inv_two_sigma2));
            if (row[d2] == 0)
                break; /* exp only decreases: the rest of the row stays zero */
        }
        for (; d2 < j->d1; d2++)
            row[d2] = 0;
    }
    return NULL;
}

/* The scale of a fill: the given one, or GCUT__SEG_CAP_BOUND / the largest energy term (the
 * larger of unary_max and lambda, the largest pairwise energy: equal colours at distance 1).
 * false when a given scale pushes that term past the bound. */
static bool pick_scale(double unary_max, double lambda, double given, double *scale) {
    double largest = unary_max > lambda ? unary_max : lambda;
    if (largest <= 0.0)
        largest = 1.0;
    *scale = given;
    if (!(given > 0.0))
        *scale = GCUT__SEG_CAP_BOUND / largest;
    else if (!isfinite(given) || given * largest > GCUT__SEG_CAP_BOUND)
        return false;
    return true;
}

/* The fill since the seventh band pass (GCUT_SEG_TABLES_LEGACY=1: table_part_run above, in two
 * fork-joins): every part starts once and meets the others at a barrier between its maximum
 * and its entries, so one round of threads is started instead of two; each squared difference
 * costs one exp for every distance class (the classes' entries differ only in their weight);
 * and round-to-nearest is a truncation (the value plus a half is positive and below 2^31, where
 * floor and truncation agree) instead of a call to floor. Every entry is the expression the
 * legacy fill evaluates, in the same order of operations, so the tables are the same bit for
 * bit (test_seg's test_tables_legacy compares them over random models). */
typedef struct fill_barrier {
    pthread_mutex_t lock;
    pthread_cond_t all_in;
    int arrived, needed;
} fill_barrier;

typedef struct fill_part_job {
    gcut__seg_tables *t;
    const double *cost_fg, *cost_bg;
    double lambda, given_scale, inv_two_sigma2;
    int64_t c0, c1, d0, d1;
    double unary_max; /* of this part's colours (phase 1) */
    struct fill_part_job *all;
    int parts;
    fill_barrier *barrier;
} fill_part_job;

static void fill_phase_max(fill_part_job *j) {
    double unary_max = 0.0;
    for (int64_t c = j->c0; c < j->c1; c++) {
        double fg, bg;
        reduced_costs(j->cost_fg[c], j->cost_bg[c], &fg, &bg);
        unary_max = fg > unary_max ? fg : unary_max;
        unary_max = bg > unary_max ? bg : unary_max;
    }
    j->unary_max = unary_max;
}

/* (int32_t)(x + 0.5) for 0 <= x <= GCUT__SEG_CAP_BOUND: floor(x + 0.5) (see above). */
static inline int32_t quantise_fast(double scale, double energy) {
    return (int32_t)(scale * energy + 0.5);
}

static void fill_phase_entries(fill_part_job *j) {
    double unary_max = 0.0;
    for (int p = 0; p < j->parts; p++)
        unary_max = j->all[p].unary_max > unary_max ? j->all[p].unary_max : unary_max;
    double scale;
    if (!pick_scale(unary_max, j->lambda, j->given_scale, &scale))
        return; /* the caller reports the overflow */
    gcut__seg_tables *t = j->t;
    int32_t *us = t->unary_source, *uk = t->unary_sink;
    for (int64_t c = j->c0; c < j->c1; c++) {
        double fg, bg;
        reduced_costs(j->cost_fg[c], j->cost_bg[c], &fg, &bg);
        us[c] = quantise_fast(scale, bg); /* cut when the pixel goes to background */
        uk[c] = quantise_fast(scale, fg); /* cut when it stays foreground */
    }
    const int classes = t->num_classes;
    double weight[GCUT__SEG_CLASSES];
    bool live[GCUT__SEG_CLASSES];
    int num_live = classes;
    for (int k = 0; k < classes; k++) {
        weight[k] = j->lambda / sqrt((double)(k + 1));
        live[k] = true;
    }
    int64_t d2 = j->d0;
    for (; d2 < j->d1 && num_live > 0; d2++) {
        /* d2 = 0 is exp(0) = 1 even when a tiny sigma makes inv_two_sigma2 infinite. */
        const double e = d2 == 0 ? 1.0 : exp(-(double)d2 * j->inv_two_sigma2);
        for (int k = 0; k < classes; k++) {
            if (!live[k]) {
                t->pairwise[k][d2] = 0;
                continue;
            }
            /* weight * e is weight * exp(..) as the legacy fill has it (and weight for d2 = 0) */
            const int32_t v = quantise_fast(scale, d2 == 0 ? weight[k] : weight[k] * e);
            t->pairwise[k][d2] = v;
            if (v == 0) { /* exp only decreases: the rest of this part of the row is zero */
                live[k] = false;
                num_live--;
            }
        }
    }
    for (int k = 0; k < classes; k++)
        if (d2 < j->d1)
            memset(t->pairwise[k] + d2, 0, (size_t)(j->d1 - d2) * sizeof(int32_t));
}

static void barrier_arrive(fill_barrier *b, int weight) {
    pthread_mutex_lock(&b->lock);
    b->arrived += weight;
    if (b->arrived >= b->needed)
        pthread_cond_broadcast(&b->all_in);
    while (b->arrived < b->needed)
        pthread_cond_wait(&b->all_in, &b->lock);
    pthread_mutex_unlock(&b->lock);
}

static void *fill_part_thread(void *arg) {
    fill_part_job *j = arg;
    fill_phase_max(j);
    barrier_arrive(j->barrier, 1);
    fill_phase_entries(j);
    return NULL;
}

/* Parts 1.. on their own threads, part 0 and any part whose thread could not be started on this
 * one (it arrives at the barrier for all of them). *unary_max: the largest over every part. */
static void fill_parts_once(fill_part_job *jobs, int parts, double *unary_max) {
    fill_barrier barrier = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, parts};
    pthread_t ids[GCUT__MAX_JOBS];
    bool started[GCUT__MAX_JOBS] = {false};
    for (int p = 0; p < parts; p++) {
        jobs[p].all = jobs;
        jobs[p].parts = parts;
        jobs[p].barrier = &barrier;
    }
    for (int p = 1; p < parts; p++)
        started[p] = pthread_create(&ids[p], NULL, fill_part_thread, &jobs[p]) == 0;
    int here = 0;
    for (int p = 0; p < parts; p++)
        if (p == 0 || !started[p]) {
            fill_phase_max(&jobs[p]);
            here++;
        }
    barrier_arrive(&barrier, here);
    for (int p = 0; p < parts; p++)
        if (p == 0 || !started[p])
            fill_phase_entries(&jobs[p]);
    for (int p = 1; p < parts; p++)
        if (started[p])
            pthread_join(ids[p], NULL);
    pthread_mutex_destroy(&barrier.lock);
    pthread_cond_destroy(&barrier.all_in);
    double m = 0.0;
    for (int p = 0; p < parts; p++)
        m = jobs[p].unary_max > m ? jobs[p].unary_max : m;
    *unary_max = m;
}

/* The fill's threads, kept waiting between fills (GCUT_SEG_TABLES_POOL=0: started per fill, as
 * fill_parts_once does). The seventh pass's first H100 call measured the fill at about 0.9 ms on
 * the 16-core host for about 0.2 ms of work a thread: starting eight threads one after the other
 * was most of it. Workers 1..workers take part w of a fill; one fill holds the pool at a time
 * (another, concurrent one starts its own threads); a forked child starts afresh. */
typedef struct fill_pool {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    int workers;         /* started and waiting */
    unsigned generation; /* one per fill */
    int pending;         /* workers yet to finish this generation */
    fill_part_job *jobs;
    int parts;
    bool busy;
    unsigned seen0[GCUT__MAX_JOBS]; /* the generation each worker starts after */
} fill_pool;

static fill_pool pool = {PTHREAD_MUTEX_INITIALIZER,
                         PTHREAD_COND_INITIALIZER,
                         PTHREAD_COND_INITIALIZER,
                         0,
                         0,
                         0,
                         NULL,
                         0,
                         false,
                         {0}};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_after_fork(void) { /* the child has none of the parent's workers */
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    pool.lock = lock;
    pool.wake = cond;
    pool.done = cond;
    pool.workers = 0;
    pool.pending = 0;
    pool.jobs = NULL;
    pool.parts = 0;
    pool.busy = false;
}

static void pool_register_fork(void) {
    pthread_atfork(NULL, NULL, pool_after_fork);
}

static void *pool_worker(void *arg) {
    const int w = (int)(intptr_t)arg;
    pthread_mutex_lock(&pool.lock);
    unsigned seen = pool.seen0[w];
    for (;;) {
        while (pool.generation == seen)
            pthread_cond_wait(&pool.wake, &pool.lock);
        seen = pool.generation;
        fill_part_job *job = w < pool.parts ? &pool.jobs[w] : NULL;
        pthread_mutex_unlock(&pool.lock);
        if (job != NULL)
            fill_part_thread(job);
        pthread_mutex_lock(&pool.lock);
        if (--pool.pending == 0)
            pthread_cond_signal(&pool.done);
    }
    return NULL;
}

/* fill_parts_once on the pool's workers; false (nothing done) when the pool is held by another
 * fill or cannot have parts - 1 workers. */
static bool fill_parts_pooled(fill_part_job *jobs, int parts, double *unary_max) {
    pthread_once(&pool_once, pool_register_fork);
    pthread_mutex_lock(&pool.lock);
    if (pool.busy) {
        pthread_mutex_unlock(&pool.lock);
        return false;
    }
    while (pool.workers < parts - 1 && pool.workers + 1 < GCUT__MAX_JOBS) {
        const int w = pool.workers + 1;
        pool.seen0[w] = pool.generation;
        pthread_t id;
        if (pthread_create(&id, NULL, pool_worker, (void *)(intptr_t)w) != 0)
            break;
        pthread_detach(id);
        pool.workers = w;
    }
    if (pool.workers < parts - 1) {
        pthread_mutex_unlock(&pool.lock);
        return false;
    }
    fill_barrier barrier = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, parts};
    for (int p = 0; p < parts; p++) {
        jobs[p].all = jobs;
        jobs[p].parts = parts;
        jobs[p].barrier = &barrier;
    }
    pool.busy = true;
    pool.jobs = jobs;
    pool.parts = parts;
    pool.pending = pool.workers;
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    fill_part_thread(&jobs[0]);
    pthread_mutex_lock(&pool.lock);
    while (pool.pending > 0)
        pthread_cond_wait(&pool.done, &pool.lock);
    pool.busy = false;
    pool.jobs = NULL;
    pool.parts = 0;
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_destroy(&barrier.lock);
    pthread_cond_destroy(&barrier.all_in);
    double m = 0.0;
    for (int p = 0; p < parts; p++)
        m = jobs[p].unary_max > m ? jobs[p].unary_max : m;
    *unary_max = m;
    return true;
}

/* Parts of a fill: one per 2^16 entries (colours plus pairwise entries), at most the online
 * cores. The 2^18 colours and two rows of 195076 entries of an 8-connected colour image (a
 * large sigma keeps every entry nonzero, so each costs an exp) took 9.5-13.6 ms on one thread of
 * the shared 2-core build VM, 4.8-6.0 ms on both; on the H100's 16-core host the banded
 * pipeline's tables stage fell from 9.1 to 4.5 ms at 3840x2160 (docs/PERFORMANCE.md). */
static int table_parts(const gcut__seg_tables *t) {
    const int forced = gcut__env_int("GCUT_SEG_TABLES_PARTS", 0, 0, GCUT__MAX_JOBS);
    if (forced > 0) /* tuning runs: the tables do not depend on it */
        return forced;
    const int64_t work = t->num_colors + (int64_t)t->num_classes * (t->max_sqdiff + 1);
    int64_t parts = work >> 16;
    const int cores = gcut__online_cores();
    parts = parts < 1 ? 1 : parts > cores ? cores : parts;
    return (int)(parts > GCUT__MAX_JOBS ? GCUT__MAX_JOBS : parts);
}

gcut_status gcut__seg_tables_fill(gcut__seg_tables *t, const double *cost_fg, const double *cost_bg,
                                  double lambda, double sigma, double scale, int connectivity) {
    return gcut__seg_tables_fill_parts(t, cost_fg, cost_bg, lambda, sigma, scale, connectivity,
                                       table_parts(t));
}

gcut_status gcut__seg_tables_fill_parts(gcut__seg_tables *t, const double *cost_fg,
                                        const double *cost_bg, double lambda, double sigma,
                                        double scale, int connectivity, int parts) {
    if (!(lambda >= 0.0) || !isfinite(lambda))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "segmentation: lambda %g must be >= 0", lambda);
    if (!(sigma > 0.0) || !isfinite(sigma))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "segmentation: sigma %g must be > 0", sigma);
    parts = parts < 1 ? 1 : parts > GCUT__MAX_JOBS ? GCUT__MAX_JOBS : parts;
    const int64_t nc = t->num_colors, nd = (int64_t)t->max_sqdiff + 1;
    const double inv_two_sigma2 = 1.0 / (2.0 * sigma * sigma);
    double unary_max = 0.0, picked = 0.0;
    bool scale_ok;
    if (!gcut__seg_tables_legacy()) {
        fill_part_job fj[GCUT__MAX_JOBS];
        for (int p = 0; p < parts; p++)
            fj[p] = (fill_part_job){t,
                                    cost_fg,
                                    cost_bg,
                                    lambda,
                                    scale,
                                    inv_two_sigma2,
                                    nc * p / parts,
                                    nc * (p + 1) / parts,
                                    nd * p / parts,
                                    nd * (p + 1) / parts,
                                    0.0,
                                    NULL,
                                    0,
                                    NULL};
        if (parts == 1 || gcut__env_int("GCUT_SEG_TABLES_POOL", 1, 0, 1) == 0 ||
            !fill_parts_pooled(fj, parts, &unary_max))
            fill_parts_once(fj, parts, &unary_max);
        scale_ok = pick_scale(unary_max, lambda, scale, &picked);
    } else {
        table_part jobs[GCUT__MAX_JOBS];
        for (int p = 0; p < parts; p++)
            jobs[p] = (table_part){t,
                                   cost_fg,
                                   cost_bg,
                                   lambda,
                                   0.0,
                                   0.0,
                                   nc * p / parts,
                                   nc * (p + 1) / parts,
                                   nd * p / parts,
                                   nd * (p + 1) / parts,
                                   true,
                                   0.0};
        gcut__run_jobs(table_part_run, jobs, sizeof jobs[0], parts);
        for (int p = 0; p < parts; p++)
            unary_max = jobs[p].unary_max > unary_max ? jobs[p].unary_max : unary_max;
        scale_ok = pick_scale(unary_max, lambda, scale, &picked);
        if (scale_ok) {
            for (int p = 0; p < parts; p++) {
                jobs[p].max_only = false;
                jobs[p].scale = picked;
                jobs[p].inv_two_sigma2 = inv_two_sigma2;
            }
            gcut__run_jobs(table_part_run, jobs, sizeof jobs[0], parts);
        }
    }
    if (!scale_ok) {
        double largest = unary_max > lambda ? unary_max : lambda;
        largest = largest <= 0.0 ? 1.0 : largest;
        return gcut__fail(GCUT_ERR_OVERFLOW,
                          "segmentation: scale %g times the largest energy term %g exceeds the "
                          "capacity bound %d (use a scale <= %g, or 0 to choose one)",
                          scale, largest, GCUT__SEG_CAP_BOUND, GCUT__SEG_CAP_BOUND / largest);
    }
    /* Boykov-Jolly's K = 1 + max_p sum_q w_pq: moving a seeded pixel to its seed's side
     * always lowers the cut (saves K, costs at most its neighbour arcs), so every minimum cut
     * keeps every seed. */
    t->hard = 1 + connectivity * t->pairwise[0][0];
    t->scale = picked;
    t->lambda = lambda;
    t->sigma = sigma;
    t->unary_max = unary_max;
    return GCUT_OK;
}

/* Zero the entries of cap (direction dir) whose neighbour lies outside the grid, on rows
 * [r0, r1) of the depth * height rows. */
static void zero_outside(const gcut_grid *grid, int dir, int32_t *cap, int64_t r0, int64_t r1) {
    const int *off = grid->offset[dir];
    const int64_t width = grid->width, height = grid->height, depth = grid->depth;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t z = r / height, y = r % height;
        const int64_t row = r * width;
        const int64_t zn = z + off[0], yn = y + off[1];
        if (zn < 0 || zn >= depth || yn < 0 || yn >= height || (width == 1 && off[2] != 0)) {
            memset(cap + row, 0, (size_t)width * sizeof(int32_t));
            continue;
        }
        if (off[2] < 0)
            cap[row] = 0;
        if (off[2] > 0)
            cap[row + width - 1] = 0;
    }
}

/* One part of gcut__seg_fill_grid: rows [r0, r1) of the depth * height rows. Each entry is
 * written by exactly one part (a row's forward arcs and, one row over, their reverse twins,
 * which no other part writes), so the grid does not depend on the split. */
typedef struct fill_part {
    const uint8_t *pixels, *seeds;
    const gcut__seg_tables *tables;
    gcut_grid *grid;
    int64_t r0, r1;
} fill_part;

static void *fill_part_run(void *arg) {
    const fill_part *job = arg;
    const uint8_t *pixels = job->pixels, *seeds = job->seeds;
    const gcut__seg_tables *tables = job->tables;
    gcut_grid *grid = job->grid;
    const int ch = tables->channels;
    const int64_t width = grid->width, height = grid->height, depth = grid->depth;
    int32_t *source = grid->terminal[GCUT_SOURCE], *sink = grid->terminal[GCUT_SINK];
    const int32_t *unary_source = tables->unary_source, *unary_sink = tables->unary_sink;
    const int32_t hard = tables->hard;
    for (int64_t i = job->r0 * width; i < job->r1 * width; i++) {
        int64_t q = gcut__seg_color_index(pixels + i * ch, ch);
        int32_t s = unary_source[q], t = unary_sink[q];
        if (seeds != NULL) {
            if (seeds[i] == GCUT_SEED_FOREGROUND)
                s = hard, t = 0;
            else if (seeds[i] == GCUT_SEED_BACKGROUND)
                s = 0, t = hard;
        }
        source[i] = s;
        sink[i] = t;
    }
    /* Directions come in opposite pairs (d, d ^ 1) with equal capacities on both arcs of a
     * pair: each pair's table entry is looked up once and written to both arrays. */
    for (int d = 0; d < grid->num_dirs; d += 2) {
        const int *off = grid->offset[d];
        const int32_t *table = tables->pairwise[gcut__seg_offset_class(off)];
        const int64_t step = grid->step[d];
        const int64_t x_lo = off[2] < 0 ? 1 : 0, x_hi = off[2] > 0 ? width - 1 : width;
        int32_t *forward = grid->cap[d], *reverse = grid->cap[d + 1];
        zero_outside(grid, d + 1, reverse, job->r0, job->r1);
        for (int64_t r = job->r0; r < job->r1; r++) {
            const int64_t z = r / height, y = r % height;
            const int64_t row = r * width;
            const int64_t zn = z + off[0], yn = y + off[1];
            if (zn < 0 || zn >= depth || yn < 0 || yn >= height || x_hi <= x_lo) {
                memset(forward + row, 0, (size_t)width * sizeof(int32_t));
                continue;
            }
            if (x_lo > 0)
                forward[row] = 0;
            if (x_hi < width)
                forward[row + width - 1] = 0;
            const uint8_t *p = pixels + row * ch;
            int32_t *f = forward + row, *rv = reverse + row + step;
            if (ch == 1) {
                for (int64_t x = x_lo; x < x_hi; x++) {
                    int32_t diff = (int32_t)p[x] - (int32_t)p[x + step];
                    f[x] = rv[x] = table[diff * diff];
                }
            } else {
                for (int64_t x = x_lo; x < x_hi; x++)
                    rv[x] = f[x] = table[gcut__seg_sqdiff(p + x * 3, p + (x + step) * 3, 3)];
            }
        }
    }
    return NULL;
}

/* Rows in equal runs, a part per 2^17 pixels at most, on at most the online cores (or
 * GCUT_SEG_FILL_THREADS, 1 = the serial fill, for before/after timings). */
void gcut__seg_fill_grid(const uint8_t *pixels, const uint8_t *seeds,
                         const gcut__seg_tables *tables, gcut_grid *grid) {
    const int64_t rows = grid->depth * grid->height;
    int64_t parts = grid->num_nodes >> 17;
    const int cores =
        gcut__env_int("GCUT_SEG_FILL_THREADS", gcut__online_cores(), 1, GCUT__MAX_JOBS);
    parts = parts < 1 ? 1 : parts > cores ? cores : parts;
    parts = parts > rows ? rows : parts;
    fill_part jobs[GCUT__MAX_JOBS];
    for (int64_t t = 0; t < parts; t++)
        jobs[t] =
            (fill_part){pixels, seeds, tables, grid, rows * t / parts, rows * (t + 1) / parts};
    gcut__run_jobs(fill_part_run, jobs, sizeof jobs[0], (int)parts);
}

gcut_status gcut__seg_working_image(const gcut_image *image, const uint8_t **pixels,
                                    uint8_t **owned, int *channels) {
    *owned = NULL;
    const int in_ch = image->channels;
    const int out_ch = in_ch >= 3 ? 3 : 1;
    const int64_t n = image->width * image->height * image->depth;
    *channels = out_ch;
    if (image->bit_depth == 8 && in_ch == out_ch) {
        *pixels = image->pixels;
        return GCUT_OK;
    }
    uint8_t *work = gcut__malloc(gcut__mul_size((size_t)n, (size_t)out_ch), "working image");
    if (work == NULL)
        return GCUT_ERR_NOMEM;
    if (image->bit_depth == 8) {
        const uint8_t *src = image->pixels;
        for (int64_t i = 0; i < n; i++)
            for (int c = 0; c < out_ch; c++)
                work[i * out_ch + c] = src[i * in_ch + c];
    } else {
        /* 16-bit data rarely fills its range (12-bit sensors, CT numbers): stretch the range
         * actually used onto 8 bits so that the colour models and contrast keep their detail. */
        const uint16_t *src = image->pixels;
        uint16_t lo = UINT16_MAX, hi = 0;
        for (int64_t i = 0; i < n; i++)
            for (int c = 0; c < out_ch; c++) {
                uint16_t v = src[i * in_ch + c];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        const uint32_t range = hi > lo ? (uint32_t)(hi - lo) : 1u;
        for (int64_t i = 0; i < n; i++)
            for (int c = 0; c < out_ch; c++) {
                uint32_t v = (uint32_t)(src[i * in_ch + c] - lo);
                work[i * out_ch + c] = (uint8_t)((v * 255u + range / 2) / range);
            }
    }
    *pixels = work;
    *owned = work;
    return GCUT_OK;
}
