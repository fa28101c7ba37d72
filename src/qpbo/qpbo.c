/* qpbo.c - the gcut_qpbo energy object (unary and pairwise terms, int32 or scaled floats, block
 * ids) and its solve: the reparametrisation into normal form and the doubled graph of
 * Kolmogorov & Rother 2007 (Jeppesen et al. 2021, Table 1), handed to the core in pqpbo.c. */
#include "qpbo_internal.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* "auto" runs pqpbo on energies at least this large when options->threads > 1: at 2 threads
 * and up it beat qpbo on every energy measured (docs/PERFORMANCE.md); labels are the same. */
#define GCUT_QPBO_AUTO_PARALLEL_NODES 65536

struct gcut_qpbo {
    int64_t num_nodes;
    int64_t num_terms, term_room;
    bool ids32; /* endpoints stored as uint32 (num_nodes <= UINT32_MAX) */
    uint32_t *ti32, *tj32;
    int64_t *ti64, *tj64;
    int32_t (*te)[4]; /* E00, E01, E10, E11 */
    int64_t *unary0, *unary1;
    int32_t *block;
    int32_t num_blocks;
    double scale;
};

static inline int64_t term_i(const gcut_qpbo *q, int64_t t) {
    return q->ids32 ? (int64_t)q->ti32[t] : q->ti64[t];
}
static inline int64_t term_j(const gcut_qpbo *q, int64_t t) {
    return q->ids32 ? (int64_t)q->tj32[t] : q->tj64[t];
}

static bool grow_terms(gcut_qpbo *q, int64_t room);

gcut_status gcut_qpbo_create(int64_t num_nodes, int64_t term_hint, gcut_qpbo **out) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_qpbo_create: out is NULL");
    *out = NULL;
    if (num_nodes < 0 || term_hint < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_qpbo_create: num_nodes (%lld) and term_hint (%lld) must be >= 0",
                          (long long)num_nodes, (long long)term_hint);
    if (num_nodes > INT64_MAX / 4)
        return gcut__fail(GCUT_ERR_OVERFLOW, "gcut_qpbo_create: %lld nodes is too many",
                          (long long)num_nodes);
    gcut_qpbo *q = gcut__calloc(1, sizeof *q, "qpbo energy");
    if (q == NULL)
        return GCUT_ERR_NOMEM;
    q->num_nodes = num_nodes;
    q->ids32 = num_nodes <= (int64_t)UINT32_MAX;
    q->scale = 1.0;
    q->unary0 = gcut__calloc((size_t)num_nodes + 1, sizeof(int64_t), "qpbo unary terms");
    q->unary1 = gcut__calloc((size_t)num_nodes + 1, sizeof(int64_t), "qpbo unary terms");
    if (q->unary0 == NULL || q->unary1 == NULL) {
        gcut_qpbo_free(q);
        return GCUT_ERR_NOMEM;
    }
    if (term_hint > 0 && !grow_terms(q, term_hint)) {
        gcut_qpbo_free(q);
        return GCUT_ERR_NOMEM;
    }
    *out = q;
    return GCUT_OK;
}

void gcut_qpbo_free(gcut_qpbo *q) {
    if (q == NULL)
        return;
    gcut__free(q->ti32);
    gcut__free(q->tj32);
    gcut__free(q->ti64);
    gcut__free(q->tj64);
    gcut__free(q->te);
    gcut__free(q->unary0);
    gcut__free(q->unary1);
    gcut__free(q->block);
    gcut__free(q);
}

int64_t gcut_qpbo_num_nodes(const gcut_qpbo *q) {
    return q ? q->num_nodes : 0;
}

int64_t gcut_qpbo_num_terms(const gcut_qpbo *q) {
    return q ? q->num_terms : 0;
}

gcut_status gcut_qpbo_add_unary(gcut_qpbo *q, int64_t node, int32_t e0, int32_t e1) {
    if (q == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_qpbo_add_unary: energy is NULL");
    if (node < 0 || node >= q->num_nodes)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_qpbo_add_unary: node %lld out of range [0, %lld)", (long long)node,
                          (long long)q->num_nodes);
    /* 2^31 additions of int32 values cannot leave int64 before 2^32 calls; check anyway. */
    int64_t a = q->unary0[node], b = q->unary1[node];
    if ((e0 > 0 && a > INT64_MAX / 4 - e0) || (e0 < 0 && a < INT64_MIN / 4 - e0) ||
        (e1 > 0 && b > INT64_MAX / 4 - e1) || (e1 < 0 && b < INT64_MIN / 4 - e1))
        return gcut__fail(GCUT_ERR_OVERFLOW, "gcut_qpbo_add_unary: node %lld's sum is too large",
                          (long long)node);
    q->unary0[node] = a + e0;
    q->unary1[node] = b + e1;
    return GCUT_OK;
}

static bool grow_terms(gcut_qpbo *q, int64_t room) {
    size_t r = (size_t)room;
    if (q->ids32) {
        uint32_t *i = gcut__realloc(q->ti32, gcut__mul_size(r, 4), "qpbo terms");
        if (i == NULL)
            return false;
        q->ti32 = i;
        uint32_t *j = gcut__realloc(q->tj32, gcut__mul_size(r, 4), "qpbo terms");
        if (j == NULL)
            return false;
        q->tj32 = j;
    } else {
        int64_t *i = gcut__realloc(q->ti64, gcut__mul_size(r, 8), "qpbo terms");
        if (i == NULL)
            return false;
        q->ti64 = i;
        int64_t *j = gcut__realloc(q->tj64, gcut__mul_size(r, 8), "qpbo terms");
        if (j == NULL)
            return false;
        q->tj64 = j;
    }
    int32_t(*e)[4] = gcut__realloc(q->te, gcut__mul_size(r, sizeof *q->te), "qpbo terms");
    if (e == NULL)
        return false;
    q->te = e;
    q->term_room = room;
    return true;
}

gcut_status gcut_qpbo_add_pairwise(gcut_qpbo *q, int64_t i, int64_t j, int32_t e00, int32_t e01,
                                   int32_t e10, int32_t e11, int64_t *term_id) {
    if (q == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_qpbo_add_pairwise: energy is NULL");
    if (i < 0 || i >= q->num_nodes || j < 0 || j >= q->num_nodes)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_qpbo_add_pairwise: node %lld or %lld out of range [0, %lld)",
                          (long long)i, (long long)j, (long long)q->num_nodes);
    if (i == j)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_qpbo_add_pairwise: both nodes are %lld (a term needs two nodes; "
                          "add a unary term instead)",
                          (long long)i);
    int64_t w = (int64_t)e01 + e10 - e00 - e11;
    if (w > INT32_MAX || w < -(int64_t)INT32_MAX)
        return gcut__fail(GCUT_ERR_OVERFLOW,
                          "gcut_qpbo_add_pairwise: term %lld on nodes %lld, %lld: its coupling "
                          "E01 + E10 - E00 - E11 = %lld is outside [-2^31 + 1, 2^31 - 1]",
                          (long long)q->num_terms, (long long)i, (long long)j, (long long)w);
    if (q->num_terms == q->term_room) {
        int64_t room = q->term_room < 64 ? 64 : q->term_room + q->term_room / 2;
        if (!grow_terms(q, room))
            return GCUT_ERR_NOMEM;
    }
    int64_t t = q->num_terms++;
    if (q->ids32) {
        q->ti32[t] = (uint32_t)i;
        q->tj32[t] = (uint32_t)j;
    } else {
        q->ti64[t] = i;
        q->tj64[t] = j;
    }
    q->te[t][0] = e00;
    q->te[t][1] = e01;
    q->te[t][2] = e10;
    q->te[t][3] = e11;
    if (term_id)
        *term_id = t;
    return GCUT_OK;
}

void gcut__qpbo_term(const gcut_qpbo *q, int64_t t, int64_t *i, int64_t *j, int32_t *e) {
    *i = term_i(q, t);
    *j = term_j(q, t);
    memcpy(e, q->te[t], 4 * sizeof(int32_t));
}

const int32_t *gcut__qpbo_blocks(const gcut_qpbo *q) {
    return q->block;
}

void gcut__qpbo_unary(const gcut_qpbo *q, int64_t p, int64_t *e0, int64_t *e1) {
    *e0 = q->unary0[p];
    *e1 = q->unary1[p];
}

gcut_status gcut_qpbo_set_float_scale(gcut_qpbo *q, double scale) {
    if (q == NULL || !(scale > 0) || !isfinite(scale))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_qpbo_set_float_scale: the scale must be finite and > 0 (got %g)",
                          scale);
    q->scale = scale;
    return GCUT_OK;
}

double gcut_qpbo_float_scale(const gcut_qpbo *q) {
    return q ? q->scale : 1.0;
}

static gcut_status quantize(const gcut_qpbo *q, double value, const char *what, int32_t *out) {
    double v = nearbyint(value * q->scale);
    if (!isfinite(v) || v > INT32_MAX || v < INT32_MIN)
        return gcut__fail(GCUT_ERR_OVERFLOW,
                          "%s: energy %g times the scale %g does not fit int32 (lower the scale "
                          "with gcut_qpbo_set_float_scale)",
                          what, value, q->scale);
    *out = (int32_t)v;
    return GCUT_OK;
}

gcut_status gcut_qpbo_add_unary_float(gcut_qpbo *q, int64_t node, double e0, double e1) {
    if (q == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_qpbo_add_unary_float: energy is NULL");
    int32_t a = 0, b = 0;
    gcut_status st = quantize(q, e0, "gcut_qpbo_add_unary_float", &a);
    if (st == GCUT_OK)
        st = quantize(q, e1, "gcut_qpbo_add_unary_float", &b);
    return st != GCUT_OK ? st : gcut_qpbo_add_unary(q, node, a, b);
}

gcut_status gcut_qpbo_add_pairwise_float(gcut_qpbo *q, int64_t i, int64_t j, double e00, double e01,
                                         double e10, double e11, int64_t *term_id) {
    if (q == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_qpbo_add_pairwise_float: energy is NULL");
    int32_t e[4];
    const double in[4] = {e00, e01, e10, e11};
    for (int k = 0; k < 4; k++) {
        gcut_status st = quantize(q, in[k], "gcut_qpbo_add_pairwise_float", &e[k]);
        if (st != GCUT_OK)
            return st;
    }
    return gcut_qpbo_add_pairwise(q, i, j, e[0], e[1], e[2], e[3], term_id);
}

gcut_status gcut_qpbo_set_blocks(gcut_qpbo *q, const int32_t *block, int32_t num_blocks) {
    if (q == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_qpbo_set_blocks: energy is NULL");
    if (block == NULL) {
        gcut__free(q->block);
        q->block = NULL;
        q->num_blocks = 0;
        return GCUT_OK;
    }
    if (num_blocks < 1 || num_blocks > (1 << 20))
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_qpbo_set_blocks: num_blocks %d outside [1, 2^20]", num_blocks);
    for (int64_t i = 0; i < q->num_nodes; i++)
        if (block[i] < 0 || block[i] >= num_blocks)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "gcut_qpbo_set_blocks: node %lld has block %d, outside [0, %d)",
                              (long long)i, block[i], num_blocks);
    int32_t *copy =
        gcut__malloc(gcut__mul_size((size_t)q->num_nodes + 1, sizeof(int32_t)), "qpbo blocks");
    if (copy == NULL)
        return GCUT_ERR_NOMEM;
    memcpy(copy, block, (size_t)q->num_nodes * sizeof(int32_t));
    gcut__free(q->block);
    q->block = copy;
    q->num_blocks = num_blocks;
    return GCUT_OK;
}

gcut_status gcut_qpbo_energy(const gcut_qpbo *q, const int8_t *labels, int64_t *energy) {
    if (q == NULL || labels == NULL || energy == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_qpbo_energy: an argument is NULL");
    int64_t e = 0;
    bool overflow = false;
    for (int64_t p = 0; p < q->num_nodes; p++) {
        int8_t x = labels[p];
        if (x != 0 && x != 1 && x != GCUT_QPBO_UNLABELED)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "gcut_qpbo_energy: node %lld has label %d (0, 1 or -1 expected)",
                              (long long)p, x);
        overflow = overflow || __builtin_add_overflow(e, x == 1 ? q->unary1[p] : q->unary0[p], &e);
    }
    for (int64_t t = 0; t < q->num_terms; t++) {
        int a = labels[term_i(q, t)] == 1, b = labels[term_j(q, t)] == 1;
        overflow = overflow || __builtin_add_overflow(e, (int64_t)q->te[t][2 * a + b], &e);
    }
    if (overflow)
        return gcut__fail(GCUT_ERR_OVERFLOW, "gcut_qpbo_energy: the energy leaves int64");
    *energy = e;
    return GCUT_OK;
}

/* ---- solve: normal form (Kolmogorov & Rother 2007, section 2) ----
 * E_pq = A + (C - A) x_p + (D - C) x_q + w (1 - x_p) x_q with w = B + C - A - D. w >= 0: the
 * arc p -> q (cut when p is on the source side, label 0, and q on the sink side, label 1).
 * w < 0: w x_q - w x_p x_q, the second as the non-submodular pair q' -> p, p' -> q. */

static void term_edge(void *ctx, int64_t k, gcut__qp_edge *e) {
    const gcut_qpbo *q = ctx;
    const int32_t *t = q->te[k];
    int64_t w = (int64_t)t[1] + t[2] - t[0] - t[3];
    e->u = term_i(q, k);
    e->v = term_j(q, k);
    e->nonsub = w < 0;
    e->cap_uv = w < 0 ? -w : w;
    e->cap_vu = 0;
}

/* ---- the passes of gcut_qpbo_solve over every node and term, on pqpbo's threads ----
 * Normal form. From 8 jobs on, spill lists: each job reads only its slice of the terms, adds
 * the ends it owns and hands each other end's contribution to its owner through a spill list
 * (counted, written, then applied by the owner; one list per pair of jobs); job t owns the
 * nodes from its slice's first term's larger node on (equal node ranges spilled 70% of the
 * multi-object energies' ends; these 12-13%). Below 8 jobs, the owner rule: each job owns a
 * range of nodes and adds, in term order, the contributions of every term to its own nodes.
 * GCUT_QPBO_PREP=spill|owner chooses. No atomics either way (locked adds to random nodes
 * serialise the cache misses, and measured no faster than one thread). The constant is
 * summed per slice of terms. Every sum is checked; where a check fires the pass is redone
 * serially (the serial order's exact result and error), so the outcome never depends on the
 * thread count. */

typedef struct prep_spill {
    int64_t node, delta;
} prep_spill;

typedef struct prep_job {
    const gcut_qpbo *q;
    int64_t *tr;
    int pass; /* 0: nodes (tr, constant), 1: terms, 2: energy + labeled count,
                 3: terms' spills counted, 4: spills applied, 5: terms, every job reading
                 all (the owner rule) */
    int index, jobs;
    int64_t k0, k1;             /* nodes or terms of this slice */
    int64_t n0, n1;             /* pass 1: the nodes this job owns */
    const int64_t *bound;       /* jobs + 1: job t owns nodes [bound[t], bound[t + 1]) */
    int64_t *spills;            /* pass 3: its count to each job; pass 1: its cursor to each */
    prep_spill *spill;          /* all lists: to job 0 from jobs 0, 1, ..., then to job 1, ... */
    const int64_t *spill_begin; /* pass 4: jobs + 1 */
    int64_t constant;           /* pass 0, 1: this slice's part; pass 2: its energy */
    int64_t labeled;            /* pass 2 */
    const int8_t *labels;
    bool has_nonsub, overflow;
} prep_job;

/* The job that owns node i: the last t with bound[t] <= i (bound is nondecreasing, bound[0]
 * = 0; a binary search over at most 64 jobs). */
static inline int prep_owner(const prep_job *j, int64_t i) {
    int lo = 0, hi = j->jobs - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (j->bound[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void *prep_slice(void *arg) {
    prep_job *j = arg;
    const gcut_qpbo *q = j->q;
    bool of = false;
    if (j->pass == 3) { /* the constant, and how many ends this slice spills to each job */
        bool nonsub = false;
        const uint64_t n0 = (uint64_t)j->n0, span = (uint64_t)(j->n1 - j->n0);
        for (int64_t k = j->k0; k < j->k1 && !of; k++) {
            const int32_t *t = q->te[k];
            int64_t w = (int64_t)t[1] + t[2] - t[0] - t[3];
            of = __builtin_add_overflow(j->constant, (int64_t)t[0], &j->constant);
            nonsub = nonsub || w < 0;
            int64_t i = term_i(q, k), jj = term_j(q, k);
            if ((uint64_t)i - n0 >= span)
                j->spills[prep_owner(j, i)]++;
            if ((uint64_t)jj - n0 >= span)
                j->spills[prep_owner(j, jj)]++;
        }
        j->has_nonsub = nonsub;
        j->overflow = of;
        return NULL;
    }
    if (j->pass == 4) { /* the contributions spilled to this job */
        int64_t *tr = j->tr;
        for (int64_t s = j->spill_begin[j->index]; s < j->spill_begin[j->index + 1] && !of; s++)
            of = __builtin_add_overflow(tr[j->spill[s].node], j->spill[s].delta,
                                        &tr[j->spill[s].node]);
        j->overflow = of;
        return NULL;
    }
    if (j->pass == 1) { /* own ends added, the others spilled */
        const uint64_t n0 = (uint64_t)j->n0, span = (uint64_t)(j->n1 - j->n0);
        int64_t *tr = j->tr;
        for (int64_t k = j->k0; k < j->k1 && !of; k++) {
            const int32_t *t = q->te[k];
            int64_t w = (int64_t)t[1] + t[2] - t[0] - t[3];
            int64_t i = term_i(q, k), jj = term_j(q, k);
            int64_t di = (int64_t)t[2] - t[0], dj = (int64_t)t[3] - t[2] + (w < 0 ? w : 0);
            if ((uint64_t)i - n0 < span)
                of = __builtin_add_overflow(tr[i], di, &tr[i]);
            else
                j->spill[j->spills[prep_owner(j, i)]++] = (prep_spill){i, di};
            if ((uint64_t)jj - n0 < span)
                of = of || __builtin_add_overflow(tr[jj], dj, &tr[jj]);
            else
                j->spill[j->spills[prep_owner(j, jj)]++] = (prep_spill){jj, dj};
        }
        j->overflow = of;
        return NULL;
    }
    if (j->pass == 5) { /* every job reads every term, adding to the ends it owns */
        bool nonsub = false;
        for (int64_t k = j->k0; k < j->k1 && !of; k++) {
            const int32_t *t = q->te[k];
            int64_t w = (int64_t)t[1] + t[2] - t[0] - t[3];
            of = __builtin_add_overflow(j->constant, (int64_t)t[0], &j->constant);
            nonsub = nonsub || w < 0;
        }
        j->has_nonsub = nonsub;
        const uint64_t n0 = (uint64_t)j->n0, span = (uint64_t)(j->n1 - j->n0);
        int64_t *tr = j->tr;
        for (int64_t k = 0; k < q->num_terms && !of; k++) {
            uint64_t i = (uint64_t)term_i(q, k), jj = (uint64_t)term_j(q, k);
            bool own_i = i - n0 < span, own_j = jj - n0 < span;
            if (!own_i && !own_j)
                continue;
            const int32_t *t = q->te[k];
            if (own_i)
                of = __builtin_add_overflow(tr[i], (int64_t)t[2] - t[0], &tr[i]);
            if (own_j) {
                int64_t w = (int64_t)t[1] + t[2] - t[0] - t[3];
                of = of || __builtin_add_overflow(tr[jj], (int64_t)t[3] - t[2] + (w < 0 ? w : 0),
                                                  &tr[jj]);
            }
        }
        j->overflow = of;
        return NULL;
    }
    if (j->pass == 0) {
        for (int64_t p = j->k0; p < j->k1; p++)
            of = of || __builtin_sub_overflow(q->unary1[p], q->unary0[p], &j->tr[p]) ||
                 __builtin_add_overflow(j->constant, q->unary0[p], &j->constant);
    } else {
        const int8_t *x = j->labels;
        int64_t labeled = 0, e = 0;
        if (j->k0 < q->num_nodes) {
            int64_t end = j->k1 < q->num_nodes ? j->k1 : q->num_nodes;
            for (int64_t p = j->k0; p < end; p++) {
                labeled += x[p] != GCUT_QPBO_UNLABELED;
                of = of || __builtin_add_overflow(e, x[p] == 1 ? q->unary1[p] : q->unary0[p], &e);
            }
        }
        j->labeled = labeled;
        int64_t t0 = j->k0 - q->num_nodes, t1 = j->k1 - q->num_nodes;
        for (int64_t t = t0 < 0 ? 0 : t0; t < t1; t++) {
            int a = x[term_i(q, t)] == 1, b = x[term_j(q, t)] == 1;
            of = of || __builtin_add_overflow(e, (int64_t)q->te[t][2 * a + b], &e);
        }
        j->constant = e;
    }
    j->overflow = of;
    return NULL;
}

enum { PREP_MAX_JOBS = 64 };

/* Run pass `pass` over [0, count) in `jobs` slices; false if a check fired. */
static bool prep_run(prep_job *job, int jobs, int pass, int64_t count) {
    for (int t = 0; t < jobs; t++) {
        job[t].pass = pass;
        job[t].index = t;
        job[t].jobs = jobs;
        job[t].k0 = count * t / jobs;
        job[t].k1 = count * (t + 1) / jobs;
        job[t].n0 = job[t].bound != NULL ? job[t].bound[t] : job[t].q->num_nodes * t / jobs;
        job[t].n1 =
            job[t].bound != NULL ? job[t].bound[t + 1] : job[t].q->num_nodes * (t + 1) / jobs;
        job[t].constant = 0;
        job[t].overflow = false;
    }
    gcut__run_jobs(prep_slice, job, sizeof *job, jobs);
    bool ok = true;
    for (int t = 0; t < jobs; t++)
        ok = ok && !job[t].overflow;
    return ok;
}

/* The terminal residuals and the constant on `jobs` threads; false if the serial pass must
 * decide (a check fired; tr then holds garbage the serial pass overwrites). */
static bool prep_parallel(const gcut_qpbo *q, int jobs, int64_t *tr, int64_t *constant,
                          bool *has_nonsub) {
    prep_job job[PREP_MAX_JOBS];
    /* GCUT_QPBO_PREP=spill|owner; by default the spill lists from 8 jobs on (each job reads
     * 1/jobs of the terms twice instead of every term's ids once: 104-114 ms against 171-177
     * at 1e7 nodes on 16 threads), the owner rule below (faster at 2 threads). */
    const char *mode = getenv("GCUT_QPBO_PREP");
    const bool spill_mode = mode != NULL ? strcmp(mode, "spill") == 0 : jobs >= 8;
    if (!spill_mode) {
        for (int t = 0; t < jobs; t++)
            job[t] = (prep_job){.q = q, .tr = tr};
        int64_t c = 0;
        bool ok = prep_run(job, jobs, 0, q->num_nodes);
        for (int t = 0; t < jobs && ok; t++)
            ok = !__builtin_add_overflow(c, job[t].constant, &c);
        ok = ok && prep_run(job, jobs, 5, q->num_terms);
        bool nonsub = false;
        for (int t = 0; t < jobs && ok; t++) {
            ok = !__builtin_add_overflow(c, job[t].constant, &c);
            nonsub = nonsub || job[t].has_nonsub;
        }
        *constant = c;
        *has_nonsub = nonsub;
        return ok;
    }
    int64_t bound[PREP_MAX_JOBS + 1], spill_begin[PREP_MAX_JOBS + 1];
    const size_t jj = (size_t)jobs * (size_t)jobs;
    int64_t *spills = gcut__calloc(jj, sizeof(int64_t), "qpbo normal form");
    if (spills == NULL) {
        gcut__clear_error();
        return false; /* the serial pass decides */
    }
    /* Job t owns the nodes from its slice's first term's larger node on (terms made node by
     * node, as grids' and the multi-object energies' are, then mostly touch their own job's
     * nodes), kept nondecreasing. */
    bound[0] = 0;
    for (int t = 1; t < jobs; t++) {
        int64_t k = q->num_terms * t / jobs;
        int64_t first = k >= q->num_terms             ? q->num_nodes
                        : term_i(q, k) > term_j(q, k) ? term_i(q, k)
                                                      : term_j(q, k);
        bound[t] = first > bound[t - 1] ? first : bound[t - 1];
    }
    bound[jobs] = q->num_nodes;
    for (int t = 0; t < jobs; t++)
        job[t] = (prep_job){.q = q, .tr = tr, .bound = bound, .spills = spills + (size_t)t * jobs};
    int64_t c = 0;
    bool ok = prep_run(job, jobs, 0, q->num_nodes);
    for (int t = 0; t < jobs && ok; t++)
        ok = !__builtin_add_overflow(c, job[t].constant, &c);
    ok = ok && prep_run(job, jobs, 3, q->num_terms);
    bool nonsub = false;
    for (int t = 0; t < jobs && ok; t++) {
        ok = !__builtin_add_overflow(c, job[t].constant, &c);
        nonsub = nonsub || job[t].has_nonsub;
    }
    /* Lists by receiving job, in each the sending jobs in order. */
    int64_t total = 0;
    for (int r = 0; r < jobs; r++) {
        spill_begin[r] = total;
        for (int t = 0; t < jobs; t++) {
            int64_t here = job[t].spills[r];
            job[t].spills[r] = total;
            total += here;
        }
    }
    spill_begin[jobs] = total;
    const char *prof = getenv("GCUT_PBK_PROFILE");
    if (prof != NULL && strcmp(prof, "1") == 0)
        fprintf(stderr, "pbk phase normal form: %lld of %lld term ends spilled to other jobs\n",
                (long long)total, 2 * (long long)q->num_terms);
    prep_spill *spill =
        ok ? gcut__malloc(gcut__mul_size((size_t)total + 1, sizeof *spill), "qpbo normal form")
           : NULL;
    if (ok && spill == NULL) {
        gcut__clear_error();
        ok = false;
    }
    for (int t = 0; t < jobs; t++) {
        job[t].spill = spill;
        job[t].spill_begin = spill_begin;
    }
    ok = ok && prep_run(job, jobs, 1, q->num_terms) && prep_run(job, jobs, 4, q->num_terms);
    gcut__free(spill);
    gcut__free(spills);
    *constant = c;
    *has_nonsub = nonsub;
    return ok;
}

/* The energy of a labeling and its labeled count on `jobs` threads; false where a sum left
 * int64 (gcut_qpbo_energy then gives the serial answer and its error). */
static bool energy_parallel(const gcut_qpbo *q, int jobs, const int8_t *labels, int64_t *energy,
                            int64_t *labeled) {
    prep_job job[PREP_MAX_JOBS];
    for (int t = 0; t < jobs; t++)
        job[t] = (prep_job){.q = q, .labels = labels};
    bool ok = prep_run(job, jobs, 2, q->num_nodes + q->num_terms);
    int64_t e = 0, count = 0;
    for (int t = 0; t < jobs; t++) {
        ok = ok && !__builtin_add_overflow(e, job[t].constant, &e);
        count += job[t].labeled;
    }
    *energy = e;
    *labeled = count;
    return ok;
}

gcut_status gcut_qpbo_solve(gcut_qpbo *q, const gcut_options *options, int8_t *labels,
                            gcut_qpbo_result *result) {
    if (q == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_qpbo_solve: energy is NULL");
    gcut_options defaults;
    if (options == NULL) {
        gcut_options_init(&defaults);
        options = &defaults;
    }
    const char *name = options->solver ? options->solver : "auto";
    bool parallel;
    if (strcmp(name, "qpbo") == 0)
        parallel = false;
    else if (strcmp(name, "pqpbo") == 0)
        parallel = true;
    else if (strcmp(name, "auto") == 0) /* as grids' auto picks parallel-bk: asked for threads */
        parallel = options->threads > 1 && q->num_nodes >= GCUT_QPBO_AUTO_PARALLEL_NODES;
    else
        return gcut__fail(GCUT_ERR_NOT_FOUND,
                          "gcut_qpbo_solve: no QPBO solver named '%s' (qpbo, pqpbo or auto)", name);
    int threads = parallel ? (options->threads > 0 ? options->threads : gcut__online_cores()) : 1;

    /* Terminal residuals (source minus sink) and the constant, in 64 bits. */
    const char *prof_env = getenv("GCUT_PBK_PROFILE");
    const bool prof = prof_env != NULL && strcmp(prof_env, "1") == 0;
    double t_prep = gcut__now_ms();
    const int64_t n = q->num_nodes;
    int64_t *tr = gcut__malloc(gcut__mul_size((size_t)n + 1, sizeof(int64_t)), "qpbo terminals");
    int8_t *own = NULL;
    if (tr == NULL)
        return GCUT_ERR_NOMEM;
    int64_t constant = 0;
    bool overflow = false, has_nonsub = false;
    int jobs = threads < PREP_MAX_JOBS ? threads : PREP_MAX_JOBS;
    if (n + q->num_terms < ((int64_t)1 << 16))
        jobs = 1;
    if (jobs <= 1 || !prep_parallel(q, jobs, tr, &constant, &has_nonsub)) {
        constant = 0;
        has_nonsub = false;
        for (int64_t p = 0; p < n; p++) {
            overflow = overflow || __builtin_sub_overflow(q->unary1[p], q->unary0[p], &tr[p]) ||
                       __builtin_add_overflow(constant, q->unary0[p], &constant);
        }
        for (int64_t k = 0; k < q->num_terms && !overflow; k++) {
            const int32_t *t = q->te[k];
            int64_t w = (int64_t)t[1] + t[2] - t[0] - t[3];
            int64_t i = term_i(q, k), j = term_j(q, k);
            overflow =
                __builtin_add_overflow(constant, (int64_t)t[0], &constant) ||
                __builtin_add_overflow(tr[i], (int64_t)t[2] - t[0], &tr[i]) ||
                __builtin_add_overflow(tr[j], (int64_t)t[3] - t[2] + (w < 0 ? w : 0), &tr[j]);
            has_nonsub = has_nonsub || w < 0;
        }
    }
    /* E = constant + sum_p tr_p x_p + pairs; the cut pays max(-tr, 0) on the source side
     * (label 0) and max(tr, 0) on the sink side: shed min(0, tr) into the constant. */
    for (int64_t p = 0; p < n && !overflow; p++)
        if (tr[p] < 0)
            overflow = __builtin_add_overflow(constant, tr[p], &constant);
    if (overflow) {
        gcut__free(tr);
        return gcut__fail(GCUT_ERR_OVERFLOW, "gcut_qpbo_solve: an energy sum leaves int64");
    }
    if (labels == NULL) {
        own = gcut__malloc((size_t)n + 1, "qpbo labels");
        if (own == NULL) {
            gcut__free(tr);
            return GCUT_ERR_NOMEM;
        }
        labels = own;
    }
    gcut__qp_input in = {0};
    in.num_nodes = n;
    in.tr = tr;
    in.num_edges = q->num_terms;
    in.ctx = q;
    in.edge = term_edge;
    in.has_nonsub = has_nonsub;
    in.threads = threads;
    in.verbose = options->verbose != 0;
    if (!parallel) {
        in.num_blocks = 1;
    } else if (q->block != NULL) {
        in.block = q->block;
        in.num_blocks = q->num_blocks;
    } else {
        int64_t b = gcut__env_int("GCUT_QPBO_BLOCKS", 4 * threads, 1, 1 << 20);
        in.num_blocks = (int32_t)(b > n ? (n > 0 ? n : 1) : b);
    }
    gcut__qp_output out = {0};
    out.labels = labels;
    if (prof)
        fprintf(stderr, "pbk phase normal form (gcut_qpbo_solve): %.2f ms\n",
                gcut__now_ms() - t_prep);
    gcut_status st = gcut__qp_solve(&in, &out);
    double t_after = gcut__now_ms();
    gcut__free(tr);
    if (st == GCUT_OK && result != NULL) {
        memset(result, 0, sizeof *result);
        snprintf(result->solver, sizeof result->solver, "%s", parallel ? "pqpbo" : "qpbo");
        int64_t labeled = 0, energy = 0;
        bool have_energy = jobs > 1 && energy_parallel(q, jobs, labels, &energy, &labeled);
        if (!have_energy) {
            labeled = 0;
            for (int64_t p = 0; p < n; p++)
                labeled += labels[p] != GCUT_QPBO_UNLABELED;
        }
        result->labeled = labeled;
        /* The doubled graph counts every energy twice; a single-copy flow (no non-submodular
         * term) is the minimum itself. */
        int64_t twice = out.stage2 ? out.flow : 2 * out.flow;
        int64_t half = twice / 2 + (twice % 2 != 0 && twice > 0);
        if (__builtin_add_overflow(half, constant, &result->lower_bound))
            st = gcut__fail(GCUT_ERR_OVERFLOW, "gcut_qpbo_solve: the lower bound leaves int64");
        if (st == GCUT_OK && have_energy)
            result->energy = energy;
        else if (st == GCUT_OK)
            st = gcut_qpbo_energy(q, labels, &result->energy);
        result->stage2 = out.stage2;
        result->threads = out.threads;
        result->blocks = out.blocks;
        result->merges = out.merges;
        result->build_ms = out.build_ms;
        result->solve_ms = out.solve_ms;
        result->label_ms = out.label_ms;
        result->bytes = out.bytes;
        result->float_scale = q->scale;
    }
    if (prof)
        fprintf(stderr, "pbk phase count+energy (gcut_qpbo_solve): %.2f ms\n",
                gcut__now_ms() - t_after);
    gcut__free(own);
    return st;
}
