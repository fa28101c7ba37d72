/* pqpbo_impl.h - QPBO by two stages and bottom-up block merging (Jeppesen et al. 2021, section 3
 * and Algorithm 1; Liu & Sun 2010 for the merging), max flow by the project's bk (bk_impl.h)
 * run on sub-graph views of one shared graph; labels by reachability and strongly connected
 * components of the residual graph (Kolmogorov & Rother 2007, weak persistencies).
 * Before including: QP_IDX (unsigned index type) and QP_FN(name); bk_impl.h is included here.
 *
 * Layout. Nodes 0..n-1 are the variables, renumbered so that every block is a contiguous
 * range; node p + n is the flipped copy p'. The arcs of node p (CSR, first[p]..first[p+1]-1)
 * are the submodular arcs to other variables and, for each non-submodular term, one arc
 * p -> q'. The flipped half repeats it at offset M: arc a + M leaves p' towards the flip of
 * a's head, so it is the mirror of sister(a) and carries sister(a)'s residual (the doubled
 * graph is symmetric). Arcs not yet in play (between blocks not merged, non-submodular ones in
 * Stage 1, the whole flipped half) have residual 0 both ways, which bk never crosses. */

#define BK_IDX QP_IDX
#define BK_FN(name) QP_FN(bk_##name)
#define BK_SKIP_IDLE_PAIRS 1
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include "../cpu/bk_impl.h"
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

#define QP_NONE ((QP_IDX)-1)
#define QP_TERMINAL ((QP_IDX)-2)
#define QP_SINK_BIT 0x80000000u
#define QP_NONSUB UINT32_MAX
#define QP_BUILD_THREADS 64

/* An arc pair held back until its blocks merge (or, non-submodular, until Stage 2). */
typedef struct QP_FN(rec) {
    QP_IDX arc;   /* u -> v; non-submodular: p -> q' */
    uint32_t cap; /* residual of arc (non-submodular: of both p' -> q and q' -> p) */
    uint32_t rev; /* residual of its sister, or QP_NONSUB */
} QP_FN(rec);

typedef struct QP_FN(iface) {
    int32_t a, b;       /* blocks, a < b */
    int64_t begin, end; /* its records in core->outer */
    int64_t score;      /* Liu & Sun's merge heuristic: pairs across the two trees */
    bool done;
} QP_FN(iface);

typedef struct QP_FN(sub) {
    QP_FN(bk_solver) bk; /* first: a view whose arrays are the core's */
    struct QP_FN(core) * core;
    int32_t first_block, last_block; /* blocks of this sub-graph, linked by core->next_block */
    int64_t primal;                  /* variables in it */
    bool stage2;
    bool busy;
} QP_FN(sub);

typedef struct QP_FN(core) {
    QP_IDX n, M;
    bool mirror;
    QP_IDX *first;
    QP_FN(bk_arc) * arcs;
    QP_IDX *sister;
    QP_FN(bk_node) * nodes;
    int64_t *tr;
    int32_t B;
    int32_t split;        /* GCUT_QPBO_SPLIT: pieces per given block */
    QP_IDX *block_start;  /* B + 1 */
    int64_t *inner_begin; /* B + 1: non-submodular records inside block b */
    QP_FN(rec) * inner;
    QP_FN(rec) * outer;
    QP_FN(iface) * ifaces;
    int64_t num_ifaces;
    int32_t *next_block;
    uint8_t *nonsub_edge; /* per block: an interface pair of it is non-submodular */
    int32_t *owner;       /* union-find over blocks: the sub-graph a block belongs to */
    QP_FN(sub) * subs;
    QP_IDX *orig; /* internal -> original node, NULL when identical */
    int32_t next_phase_a;
    int32_t *phase_a_order; /* blocks by size, largest first (the longest Phase A starts first) */
    uint8_t *ready;         /* per block: its Phase A is over (the overlapped schedule) */
    pthread_cond_t wake;    /* a Phase A or a merge ended */
    pthread_mutex_t lock;
    bool profile;      /* GCUT_PBK_PROFILE=1: each merge's size and time on stderr */
    bool size_order;   /* GCUT_PBK_ORDER=size: the smallest union first, not Liu & Sun's score */
    bool activate_all; /* GCUT_QPBO_ACTIVATE_ALL=1: every end of a new pair active (tests) */
    bool late_mirror;  /* GCUT_QPBO_LATE_MIRROR=1: mirror blocks only when a merge needs it */
    int threads;       /* helpers a large merge may use to put its records into play */
    int add_slice;     /* records per helper (GCUT_QPBO_ADD_SLICE; 65536) */
    double t_start;
    double phase_a_end; /* when the last Phase A ended (profile) */
    int32_t phase_a_done;
    gcut_status error;
    int64_t merges;
} QP_FN(core);

static void QP_FN(core_free)(QP_FN(core) * c) {
    gcut__free(c->first);
    gcut__free(c->arcs);
    gcut__free(c->sister);
    gcut__free(c->nodes);
    gcut__free(c->tr);
    gcut__free(c->block_start);
    gcut__free(c->inner_begin);
    gcut__free(c->inner);
    gcut__free(c->outer);
    gcut__free(c->ifaces);
    gcut__free(c->next_block);
    gcut__free(c->nonsub_edge);
    gcut__free(c->owner);
    gcut__free(c->ready);
    gcut__free(c->phase_a_order);
    if (c->subs != NULL)
        for (int32_t b = 0; b < c->B; b++)
            gcut__free(c->subs[b].bk.orphans);
    gcut__free(c->subs);
    gcut__free(c->orig);
}

static inline QP_IDX QP_FN(flip)(const QP_FN(core) * c, QP_IDX v) {
    return v < c->n ? v + c->n : v - c->n;
}

/* ---------------------------------------------------------------------------------------- */
/* Building                                                                                  */

typedef struct QP_FN(pending) {
    int32_t a, b;
    QP_FN(rec) rec;
} QP_FN(pending);

/* One job's slice [k0, k1) of a counting-sort pass by block (pass 0: by b, pass 1: by a):
 * count its keys into hist, or (scatter) move its records to the offsets hist then holds. */
typedef struct QP_FN(sort_job) {
    const QP_FN(pending) * from;
    QP_FN(pending) * to;
    int64_t k0, k1;
    int64_t *hist; /* B counters of this job */
    int32_t B;
    int pass; /* 0: by b, 1: by a, 2: by a * B + b (one pass; B * B counters) */
    bool scatter;
} QP_FN(sort_job);

static inline int64_t QP_FN(sort_key)(const QP_FN(sort_job) * j, const QP_FN(pending) * p) {
    return j->pass == 0 ? p->b : j->pass == 1 ? p->a : (int64_t)p->a * j->B + p->b;
}

static void *QP_FN(sort_slice)(void *arg) {
    QP_FN(sort_job) *j = arg;
    if (!j->scatter) {
        size_t keys = j->pass == 2 ? (size_t)j->B * (size_t)j->B : (size_t)j->B;
        memset(j->hist, 0, keys * sizeof(int64_t));
        for (int64_t k = j->k0; k < j->k1; k++)
            j->hist[QP_FN(sort_key)(j, &j->from[k])]++;
    } else {
        for (int64_t k = j->k0; k < j->k1; k++)
            j->to[j->hist[QP_FN(sort_key)(j, &j->from[k])]++] = j->from[k];
    }
    return NULL;
}

/* Sort the held-back pairs by (a, b), stably: one counting sort by the key a * B + b where the
 * B * B counters are few (B <= 256; the interfaces then come from the counts, *ifaces_out), else
 * two (by b, then by a; *ifaces_out NULL: the caller scans for them). Each pass is cut into one
 * slice per job (a job's counters per key, offsets taken key by key and job by job, so the
 * order is the serial sort's whatever the number of jobs). */
static bool QP_FN(sort_pending)(QP_FN(pending) * *items, int64_t count, int32_t B, int jobs,
                                QP_FN(iface) * *ifaces_out, int64_t *ni_out) {
    *ifaces_out = NULL;
    *ni_out = 0;
    const bool dense = B <= 256;
    const int64_t keys = dense ? (int64_t)B * B : B;
    if (count < 16384 || keys * jobs > ((int64_t)1 << 22))
        jobs = 1;
    QP_FN(pending) *from = *items;
    QP_FN(pending) *to =
        gcut__malloc(gcut__mul_size((size_t)count + 1, sizeof *to), "qpbo block interfaces");
    int64_t *hist =
        gcut__malloc(gcut__mul_size((size_t)keys * (size_t)jobs + 1, sizeof(int64_t)), "qpbo sort");
    if (to == NULL || hist == NULL) {
        gcut__free(to);
        gcut__free(hist);
        return false;
    }
    QP_FN(sort_job) job[QP_BUILD_THREADS];
    for (int pass = dense ? 2 : 0; pass < (dense ? 3 : 2); pass++) {
        for (int t = 0; t < jobs; t++)
            job[t] = (QP_FN(sort_job)){from,
                                       to,
                                       count * t / jobs,
                                       count * (t + 1) / jobs,
                                       hist + (size_t)keys * (size_t)t,
                                       B,
                                       pass,
                                       false};
        gcut__run_jobs(QP_FN(sort_slice), job, sizeof *job, jobs);
        int64_t at = 0, ni = 0;
        for (int64_t key = 0; key < keys; key++) {
            int64_t total = 0;
            for (int t = 0; t < jobs; t++) {
                int64_t here = job[t].hist[key];
                job[t].hist[key] = at;
                at += here;
                total += here;
            }
            ni += dense && total > 0;
        }
        if (dense) {
            QP_FN(iface) *f =
                gcut__calloc((size_t)ni + 1, sizeof(QP_FN(iface)), "qpbo block interfaces");
            if (f == NULL) {
                gcut__free(to);
                gcut__free(hist);
                return false;
            }
            /* Starts are job 0's offsets; ends the next key's start. */
            int64_t k = 0;
            for (int64_t key = 0; key < keys; key++) {
                int64_t begin = job[0].hist[key];
                int64_t end = key + 1 < keys ? job[0].hist[key + 1] : count;
                if (end > begin) {
                    f[k].a = (int32_t)(key / B);
                    f[k].b = (int32_t)(key % B);
                    f[k].begin = begin;
                    f[k].end = end;
                    k++;
                }
            }
            *ifaces_out = f;
            *ni_out = ni;
        }
        for (int t = 0; t < jobs; t++)
            job[t].scatter = true;
        gcut__run_jobs(QP_FN(sort_slice), job, sizeof *job, jobs);
        QP_FN(pending) *swap = from;
        from = to;
        to = swap;
    }
    gcut__free(to);
    gcut__free(hist);
    *items = from;
    return true;
}

/* Block of an internal node: ranges are contiguous and, without given blocks, of equal size
 * to within one, so a guess from the node's position, corrected by at most a step or two
 * (a binary search mispredicts a branch per level, on every edge twice). */
static inline int32_t QP_FN(block_of)(const QP_FN(core) * c, QP_IDX v) {
    int32_t b = (int32_t)((double)v * c->B / (double)(c->n > 0 ? c->n : 1));
    if (b >= c->B)
        b = c->B - 1;
    while (b > 0 && c->block_start[b] > v)
        b--;
    while (b + 1 < c->B && c->block_start[b + 1] <= v)
        b++;
    return b;
}

/* GCUT_PBK_PROFILE=1: one line per phase on stderr, `pbk phase NAME: MS ms`. */
static bool QP_FN(profiling)(void) {
    const char *p = getenv("GCUT_PBK_PROFILE");
    return p != NULL && strcmp(p, "1") == 0;
}

static void QP_FN(phase)(bool on, const char *name, double *since) {
    if (!on)
        return;
    double t = gcut__now_ms();
    fprintf(stderr, "pbk phase %s: %.2f ms\n", name, t - *since);
    *since = t;
}

/* One thread's share of a build pass over edges [k0, k1). */
typedef struct QP_FN(build_job) {
    QP_FN(core) * c;
    const gcut__qp_input *in;
    const QP_IDX *intern;
    int pass; /* 1: count, 2: place, 3: flipped half and node state, by slices */
    int index, jobs;
    bool atomic; /* several jobs at once */
    int64_t k0, k1;
    int64_t outer; /* pass 1: pairs across blocks */
    QP_FN(pending) * pending;
    int64_t next_pending; /* pass 2: where this job's next pair across blocks goes */
    int64_t *inner_cursor;
} QP_FN(build_job);

static inline int32_t QP_FN(block_of)(const QP_FN(core) * c, QP_IDX v);

/* Block of internal node v whose given block is g: g itself, or with GCUT_QPBO_SPLIT=k the
 * piece of g's k that holds v (pieces of one given block are adjacent; empty ones skipped). */
static inline int32_t QP_FN(given_block)(const QP_FN(core) * c, int32_t g, QP_IDX v) {
    if (c->split <= 1)
        return g;
    int32_t b = g * c->split;
    while (b + 1 < c->B && c->block_start[b + 1] <= v)
        b++;
    return b;
}

/* Term k of the input as an edge between internal nodes *u and *v of blocks *bu and *bv (both 0
 * in serial qpbo, which has one block and skips the lookup); false for a term the graph does not
 * keep (a self-pair, or no capacity either way). How both builds read the terms: the atomic one
 * (build_pass) and the bucket one (its count pass). */
static inline bool QP_FN(term_edge)(const QP_FN(core) * c, const gcut__qp_input *in,
                                    const QP_IDX *intern, int64_t k, gcut__qp_edge *e, QP_IDX *u,
                                    QP_IDX *v, int32_t *bu, int32_t *bv) {
    in->edge(in->ctx, k, e);
    if (e->u == e->v || (e->cap_uv == 0 && (e->nonsub || e->cap_vu == 0)))
        return false;
    *u = intern != NULL ? intern[e->u] : (QP_IDX)e->u;
    *v = intern != NULL ? intern[e->v] : (QP_IDX)e->v;
    if (c->B == 1) {
        *bu = *bv = 0;
    } else if (in->block != NULL) {
        *bu = QP_FN(given_block)(c, in->block[e->u], *u);
        *bv = QP_FN(given_block)(c, in->block[e->v], *v);
    } else {
        *bu = QP_FN(block_of)(c, *u);
        *bv = QP_FN(block_of)(c, *v);
    }
    return true;
}

#define QP_ADD(ptr, amount, atomic)                                                                \
    ((atomic) ? __atomic_fetch_add((ptr), (amount), __ATOMIC_RELAXED)                              \
              : (*(ptr) += (amount), *(ptr) - (amount)))

static void QP_FN(build_slices)(QP_FN(build_job) * j) {
    QP_FN(core) *c = j->c;
    const QP_IDX M = c->M, n = c->n;
    const int64_t jobs = j->jobs, t = j->index;
    if (c->mirror) { /* (the flipped half's arcs were written with the primal ones) */
        QP_IDX v0 = (QP_IDX)((int64_t)n * t / jobs), v1 = (QP_IDX)((int64_t)n * (t + 1) / jobs);
        for (QP_IDX v = v0 + 1; v <= v1; v++)
            c->first[n + v] = c->first[v] + M;
    }
    const size_t N = c->mirror ? 2 * (size_t)n : (size_t)n;
    size_t v0 = N * (size_t)t / (size_t)jobs, v1 = N * (size_t)(t + 1) / (size_t)jobs;
    for (size_t v = v0; v < v1; v++) {
        if (v >= (size_t)n)
            c->tr[v] = 0;
        c->nodes[v] = (QP_FN(bk_node)){QP_NONE, QP_NONE, 0, 0};
    }
    /* Terminal residuals of the variables, by original id (renumbered when blocks are given). */
    const int64_t *tr = j->in->tr;
    int64_t i0 = (int64_t)n * t / jobs, i1 = (int64_t)n * (t + 1) / jobs;
    if (j->intern != NULL)
        for (int64_t i = i0; i < i1; i++)
            c->tr[j->intern[i]] = tr[i];
    else
        for (int64_t i = i0; i < i1; i++)
            c->tr[i] = tr[i];
}

static void *QP_FN(build_pass)(void *arg) {
    QP_FN(build_job) *j = arg;
    if (j->pass == 3) {
        QP_FN(build_slices)(j);
        return NULL;
    }
    QP_FN(core) *c = j->c;
    const gcut__qp_input *in = j->in;
    const QP_IDX *intern = j->intern;
    const QP_IDX M = c->M, n = c->n;
    for (int64_t k = j->k0; k < j->k1; k++) {
        gcut__qp_edge e;
        QP_IDX u, v;
        int32_t bu, bv;
        if (!QP_FN(term_edge)(c, in, intern, k, &e, &u, &v, &bu, &bv))
            continue;
        if (j->pass == 1) {
            (void)QP_ADD(&c->first[u], (QP_IDX)1, j->atomic);
            (void)QP_ADD(&c->first[v], (QP_IDX)1, j->atomic);
            if (bu != bv)
                j->outer++;
            else if (e.nonsub)
                (void)QP_ADD(&c->inner_begin[bu + 1], (int64_t)1, j->atomic);
            continue;
        }
        QP_IDX a = QP_ADD(&c->first[u], (QP_IDX)-1, j->atomic) - 1;
        QP_IDX b = QP_ADD(&c->first[v], (QP_IDX)-1, j->atomic) - 1;
        QP_FN(rec) rec;
        rec.arc = a;
        rec.cap = (uint32_t)e.cap_uv;
        if (e.nonsub) {
            c->arcs[a].head = v + n; /* u -> v' */
            c->arcs[b].head = u + n; /* v -> u' */
            c->sister[a] = b + M;    /* v' -> u, at v's position in v' */
            c->sister[b] = a + M;
            c->arcs[a].residual = c->arcs[b].residual = 0;
            rec.rev = QP_NONSUB;
        } else {
            c->arcs[a].head = v;
            c->arcs[b].head = u;
            c->sister[a] = b;
            c->sister[b] = a;
            rec.rev = (uint32_t)e.cap_vu;
            bool now = bu == bv;
            c->arcs[a].residual = now ? rec.cap : 0;
            c->arcs[b].residual = now ? rec.rev : 0;
        }
        if (c->mirror) { /* the flipped half: arc a + M leaves u' towards the flip of a's head */
            c->arcs[a + M].head = e.nonsub ? v : v + n;
            c->arcs[b + M].head = e.nonsub ? u : u + n;
            c->arcs[a + M].residual = c->arcs[b + M].residual = 0;
            c->sister[a + M] = e.nonsub ? b : b + M;
            c->sister[b + M] = e.nonsub ? a : a + M;
        }
        if (bu != bv) {
            QP_FN(pending) *p = &j->pending[j->next_pending++];
            p->a = bu < bv ? bu : bv;
            p->b = bu < bv ? bv : bu;
            p->rec = rec;
        } else if (e.nonsub) {
            c->inner[QP_ADD(&j->inner_cursor[bu], (int64_t)1, j->atomic)] = rec;
        }
    }
    return NULL;
}

static void QP_FN(build_run)(QP_FN(build_job) * job, int jobs) {
    gcut__run_jobs(QP_FN(build_pass), job, sizeof *job, jobs);
}

static gcut_status QP_FN(finish)(QP_FN(core) * c, QP_FN(pending) * pending, int64_t np, int jobs);

/* The per-block bookkeeping of the sub-graphs. */
static gcut_status QP_FN(alloc_subs)(QP_FN(core) * c) {
    const int32_t B = c->B;
    c->next_block = gcut__malloc(gcut__mul_size((size_t)B, sizeof(int32_t)), "qpbo blocks");
    c->owner = gcut__malloc(gcut__mul_size((size_t)B, sizeof(int32_t)), "qpbo blocks");
    c->subs = gcut__calloc((size_t)B, sizeof(QP_FN(sub)), "qpbo sub-graphs");
    if (!c->next_block || !c->owner || !c->subs)
        return GCUT_ERR_NOMEM;
    return GCUT_OK;
}

/* Renumbering by given block (a stable counting sort of the nodes by block): each job counts
 * its slice's nodes per block, offsets are taken block by block and job by job, then each job
 * places its slice; the serial order for any number of jobs. cursor (given + 1, zeroed) ends
 * with cursor[b] = block b's end. */
typedef struct QP_FN(renum_job) {
    const int32_t *block;
    int64_t i0, i1;
    QP_IDX *count; /* per given block: this job's count, then its next position */
    QP_IDX *intern, *orig;
    bool place;
} QP_FN(renum_job);

static void *QP_FN(renum_slice)(void *arg) {
    QP_FN(renum_job) *j = arg;
    if (!j->place) {
        for (int64_t i = j->i0; i < j->i1; i++)
            j->count[j->block[i]]++;
        return NULL;
    }
    for (int64_t i = j->i0; i < j->i1; i++) {
        QP_IDX v = j->count[j->block[i]]++;
        j->intern[i] = v;
        j->orig[v] = (QP_IDX)i;
    }
    return NULL;
}

static void QP_FN(renumber)(const gcut__qp_input *in, QP_IDX *cursor, int32_t given, QP_IDX *intern,
                            QP_IDX *orig) {
    const int64_t n = in->num_nodes;
    int jobs = in->threads < 1                  ? 1
               : in->threads > QP_BUILD_THREADS ? QP_BUILD_THREADS
                                                : in->threads;
    QP_IDX *count = NULL;
    if (jobs > 1 && n >= 16384 && (int64_t)given * jobs <= ((int64_t)1 << 22))
        count = gcut__calloc((size_t)given * (size_t)jobs, sizeof(QP_IDX), "qpbo renumbering");
    if (count == NULL) { /* one job (or no room for the counters: the same result serially) */
        gcut__clear_error();
        for (int64_t i = 0; i < n; i++)
            cursor[in->block[i] + 1]++;
        for (int32_t b = 0; b < given; b++)
            cursor[b + 1] += cursor[b];
        for (int64_t i = 0; i < n; i++) {
            QP_IDX v = cursor[in->block[i]]++;
            intern[i] = v;
            orig[v] = (QP_IDX)i;
        }
        return;
    }
    QP_FN(renum_job) job[QP_BUILD_THREADS];
    for (int t = 0; t < jobs; t++)
        job[t] = (QP_FN(renum_job)){
            in->block, n * t / jobs, n * (t + 1) / jobs, count + (size_t)given * (size_t)t, intern,
            orig,      false};
    gcut__run_jobs(QP_FN(renum_slice), job, sizeof *job, jobs);
    QP_IDX at = 0;
    for (int32_t b = 0; b < given; b++) {
        for (int t = 0; t < jobs; t++) {
            QP_IDX here = job[t].count[b];
            job[t].count[b] = at;
            at += here;
        }
        cursor[b] = at;
    }
    for (int t = 0; t < jobs; t++)
        job[t].place = true;
    gcut__run_jobs(QP_FN(renum_slice), job, sizeof *job, jobs);
    gcut__free(count);
}

/* ---- the build without atomics (pqpbo on threads, B <= QP_BUCKET_MAX_BLOCKS blocks) ----
 * Pass 1 counts, per job (a range of edges) and block, the edges inside the block and the
 * ends of edges across blocks; pass 2 scatters them into one bucket per block (the blocks'
 * buckets one after the other, inside a bucket the jobs in order: the edges' order); pass 3
 * builds each block's CSR on one thread from its own bucket (its nodes' counters, arcs and
 * records are its alone: no atomics, no writes outside its ranges but the flipped half and
 * one slot per end across blocks); pass 4 links the two arcs of each pair across blocks. */
#define QP_BUCKET_MAX_BLOCKS 1024
#define QP_DIRECT_MAX_BLOCKS 64

typedef struct QP_FN(block_size) {
    uint64_t nodes;
    int32_t block;
} QP_FN(block_size);

/* Larger first; equal sizes in block order. */
static int QP_FN(cmp_block_size)(const void *x, const void *y) {
    const QP_FN(block_size) *a = x, *b = y;
    if (a->nodes != b->nodes)
        return a->nodes > b->nodes ? -1 : 1;
    return (a->block > b->block) - (a->block < b->block);
}

typedef struct QP_FN(entry) {
    QP_IDX tail, head;
    uint32_t cap, rev; /* rev: the sister's residual, or QP_NONSUB */
    QP_IDX x;          /* QP_NONE: an edge inside the block (both arcs here); else 2 x (its
                          number among the pairs across blocks) + (0: u's end, 1: v's end) */
} QP_FN(entry);

typedef struct QP_FN(bucket_job) {
    QP_FN(core) * c;
    const gcut__qp_input *in;
    const QP_IDX *intern;
    int pass, index, jobs;
    int64_t k0, k1;
    int64_t *inside, *ends; /* pass 1: this job's counts per block; pass 2: its cursors */
    int64_t *nonsub;        /* pass 1: this job's non-submodular edges inside each block */
    int64_t cross, next_cross;
    int64_t *key, *key_nonsub; /* direct (B <= QP_DIRECT_MAX_BLOCKS): per block pair a * B + b,
                                  pass 1 its pairs (and non-submodular ones), pass 2 cursors */
    QP_FN(entry) * entries;
    QP_FN(pending) * pending; /* not direct: the pairs across blocks in edge order */
    QP_FN(rec) * outer;       /* direct: the core's records, already by interface */
    QP_IDX *other;            /* per pair across blocks: the arc of v's end */
    const int64_t *e_begin;   /* B + 1: each block's bucket */
    const QP_IDX *a_begin;    /* B + 1: each block's arcs */
    int32_t *next_block;      /* pass 3: shared counter of blocks taken */
    const int32_t *order;     /* pass 3: blocks by bucket size, largest first */
    int64_t x0, x1;           /* pass 4: pairs of this job */
} QP_FN(bucket_job);

static void QP_FN(bucket_block)(QP_FN(bucket_job) * j, int32_t b) {
    QP_FN(core) *c = j->c;
    const QP_IDX n = c->n, M = c->M, s = c->block_start[b], e = c->block_start[b + 1];
    const QP_FN(entry) *en = j->entries + j->e_begin[b], *end = j->entries + j->e_begin[b + 1];
    QP_IDX *first = c->first;
    for (const QP_FN(entry) *p = en; p < end; p++) {
        first[p->tail]++;
        if (p->x == QP_NONE)
            first[p->head]++;
    }
    QP_IDX sum = j->a_begin[b];
    for (QP_IDX v = s; v < e; v++) {
        sum += first[v];
        first[v] = sum;
    }
    int64_t inner = c->inner_begin[b];
    const bool mirror = c->mirror;
    for (const QP_FN(entry) *p = en; p < end; p++) {
        const QP_IDX u = p->tail, v = p->head;
        const bool nonsub = p->rev == QP_NONSUB;
        const QP_IDX a = --first[u];
        if (p->x != QP_NONE) { /* one end of a pair across blocks: residuals 0 until merged */
            c->arcs[a].head = nonsub ? v + n : v;
            c->arcs[a].residual = 0;
            if (mirror) {
                c->arcs[a + M].head = nonsub ? v : v + n;
                c->arcs[a + M].residual = 0;
            }
            if ((p->x & 1) == 0 && j->outer != NULL)
                j->outer[p->x >> 1].arc = a;
            else if ((p->x & 1) == 0)
                j->pending[p->x >> 1].rec.arc = a;
            else
                j->other[p->x >> 1] = a;
            continue;
        }
        const QP_IDX bb = --first[v];
        QP_FN(rec) rec = {a, p->cap, p->rev};
        if (nonsub) {
            c->arcs[a].head = v + n; /* u -> v' */
            c->arcs[bb].head = u + n;
            c->sister[a] = bb + M;
            c->sister[bb] = a + M;
            c->arcs[a].residual = c->arcs[bb].residual = 0;
            c->inner[inner++] = rec;
        } else {
            c->arcs[a].head = v;
            c->arcs[bb].head = u;
            c->sister[a] = bb;
            c->sister[bb] = a;
            c->arcs[a].residual = p->cap;
            c->arcs[bb].residual = p->rev;
        }
        if (mirror) {
            c->arcs[a + M].head = QP_FN(flip)(c, c->arcs[a].head);
            c->arcs[bb + M].head = QP_FN(flip)(c, c->arcs[bb].head);
            c->arcs[a + M].residual = c->arcs[bb + M].residual = 0;
            c->sister[a + M] = nonsub ? bb : bb + M;
            c->sister[bb + M] = nonsub ? a : a + M;
        }
    }
    /* The block's nodes: their flipped copies' offsets, states and terminal residuals. */
    const int64_t *tr = j->in->tr;
    for (QP_IDX v = s; v < e; v++) {
        c->nodes[v] = (QP_FN(bk_node)){QP_NONE, QP_NONE, 0, 0};
        c->tr[v] = tr[c->orig != NULL ? c->orig[v] : v];
        if (mirror) {
            first[n + v] = first[v] + M;
            c->nodes[n + v] = (QP_FN(bk_node)){QP_NONE, QP_NONE, 0, 0};
            c->tr[n + v] = 0;
        }
    }
}

static void *QP_FN(bucket_pass)(void *arg) {
    QP_FN(bucket_job) *j = arg;
    QP_FN(core) *c = j->c;
    if (j->pass == 3) {
        for (;;) {
            int32_t b = __atomic_fetch_add(j->next_block, 1, __ATOMIC_RELAXED);
            if (b >= c->B)
                return NULL;
            QP_FN(bucket_block)(j, j->order[b]);
        }
    }
    const QP_IDX M = c->M;
    if (j->pass == 4) {
        for (int64_t x = j->x0; x < j->x1; x++) {
            const QP_FN(rec) *r = j->outer != NULL ? &j->outer[x] : &j->pending[x].rec;
            const QP_IDX a = r->arc, b = j->other[x];
            const bool nonsub = r->rev == QP_NONSUB;
            c->sister[a] = nonsub ? b + M : b;
            c->sister[b] = nonsub ? a + M : a;
            if (c->mirror) {
                c->sister[a + M] = nonsub ? b : b + M;
                c->sister[b + M] = nonsub ? a : a + M;
            }
        }
        return NULL;
    }
    const gcut__qp_input *in = j->in;
    const QP_IDX *intern = j->intern;
    for (int64_t k = j->k0; k < j->k1; k++) {
        gcut__qp_edge e;
        QP_IDX u, v;
        int32_t bu, bv;
        if (!QP_FN(term_edge)(c, in, intern, k, &e, &u, &v, &bu, &bv))
            continue;
        if (j->pass == 1) {
            if (bu == bv) {
                j->inside[bu]++;
                j->nonsub[bu] += e.nonsub;
            } else {
                j->ends[bu]++;
                j->ends[bv]++;
                j->cross++;
                if (j->key != NULL) {
                    const int64_t key = bu < bv ? (int64_t)bu * c->B + bv : (int64_t)bv * c->B + bu;
                    j->key[key]++;
                    j->key_nonsub[key] += e.nonsub;
                }
            }
            continue;
        }
        const uint32_t cap = (uint32_t)e.cap_uv, rev = e.nonsub ? QP_NONSUB : (uint32_t)e.cap_vu;
        if (bu == bv) {
            j->entries[j->inside[bu]++] = (QP_FN(entry)){u, v, cap, rev, QP_NONE};
            continue;
        }
        int64_t x;
        if (j->outer != NULL) { /* straight to its interface's range */
            x = j->key[bu < bv ? (int64_t)bu * c->B + bv : (int64_t)bv * c->B + bu]++;
            j->outer[x].cap = cap;
            j->outer[x].rev = rev;
        } else {
            x = j->next_cross++;
            QP_FN(pending) *p = &j->pending[x];
            p->a = bu < bv ? bu : bv;
            p->b = bu < bv ? bv : bu;
            p->rec.cap = cap;
            p->rec.rev = rev;
        }
        j->entries[j->ends[bu]++] = (QP_FN(entry)){u, v, cap, rev, (QP_IDX)(2 * x)};
        j->entries[j->ends[bv]++] = (QP_FN(entry)){v, u, 0, rev, (QP_IDX)(2 * x + 1)};
    }
    return NULL;
}

/* The layout from the edges by buckets (see above); first, inner_begin, tr and nodes are
 * allocated, first zeroed. With B <= QP_DIRECT_MAX_BLOCKS the pairs across blocks go straight
 * to their interface's range of core->outer (per job and block pair counters in pass 1,
 * offsets taken pair by pair and job by job: the order of the stable sort by (a, b) that
 * finish() makes, so the same interfaces) and the core is complete (*pending_out NULL);
 * else *pending_out gets the pairs in edge order, as the atomic build's, for finish(). */
static gcut_status QP_FN(build_buckets)(QP_FN(core) * c, const gcut__qp_input *in,
                                        const QP_IDX *intern, int jobs, bool prof, double *since,
                                        QP_FN(pending) * *pending_out, int64_t *np_out) {
    const int32_t B = c->B;
    const size_t JB = (size_t)jobs * (size_t)B;
    gcut_status st = GCUT_ERR_NOMEM;
    int64_t *counts = gcut__calloc(3 * JB, sizeof(int64_t), "qpbo build counters");
    const bool direct = B <= QP_DIRECT_MAX_BLOCKS;
    const size_t keys = direct ? (size_t)B * (size_t)B : 0;
    int64_t *key_counts =
        direct ? gcut__calloc(2 * keys * (size_t)jobs + 1, sizeof(int64_t), "qpbo build counters")
               : NULL;
    QP_FN(block_size) *by_size =
        gcut__malloc(gcut__mul_size((size_t)B + 1, sizeof *by_size), "qpbo block order");
    int32_t *order = gcut__malloc(gcut__mul_size((size_t)B + 1, sizeof *order), "qpbo block order");
    int64_t *e_begin = gcut__calloc((size_t)B + 1, sizeof(int64_t), "qpbo build buckets");
    QP_IDX *a_begin = gcut__calloc((size_t)B + 1, sizeof(QP_IDX), "qpbo build buckets");
    QP_FN(entry) *entries = NULL;
    QP_FN(pending) *pending = NULL;
    QP_IDX *other = NULL;
    *pending_out = NULL;
    *np_out = 0;
    if (!counts || !e_begin || !a_begin || (direct && !key_counts) || !by_size || !order)
        goto fail;
    QP_FN(bucket_job) job[QP_BUILD_THREADS];
    for (int t = 0; t < jobs; t++) {
        job[t] = (QP_FN(bucket_job)){
            .c = c, .in = in, .intern = intern, .pass = 1, .index = t, .jobs = jobs};
        job[t].k0 = in->num_edges * t / jobs;
        job[t].k1 = in->num_edges * (t + 1) / jobs;
        job[t].inside = counts + (size_t)t * B;
        job[t].ends = counts + JB + (size_t)t * B;
        job[t].nonsub = counts + 2 * JB + (size_t)t * B;
        if (direct) {
            job[t].key = key_counts + keys * (size_t)t;
            job[t].key_nonsub = key_counts + keys * (size_t)(jobs + t);
        }
    }
    gcut__run_jobs(QP_FN(bucket_pass), job, sizeof *job, jobs);
    QP_FN(phase)(prof, "build count (by block)", since);
    /* Buckets block by block, in each the jobs in order: first the edges inside, then the
     * ends across (each in edge order). Arcs: 2 per edge inside, 1 per end across. */
    int64_t total = 0, np = 0;
    uint64_t arcs = 0;
    for (int32_t b = 0; b < B; b++) {
        e_begin[b] = total;
        a_begin[b] = (QP_IDX)arcs;
        int64_t inside = 0, ends = 0, nonsub = 0;
        for (int t = 0; t < jobs; t++) {
            int64_t i = job[t].inside[b];
            job[t].inside[b] = total + inside;
            inside += i;
        }
        for (int t = 0; t < jobs; t++) {
            int64_t x = job[t].ends[b];
            job[t].ends[b] = total + inside + ends;
            ends += x;
            nonsub += job[t].nonsub[b];
        }
        total += inside + ends;
        arcs += 2 * (uint64_t)inside + (uint64_t)ends;
        c->inner_begin[b + 1] = c->inner_begin[b] + nonsub;
    }
    e_begin[B] = total;
    a_begin[B] = (QP_IDX)arcs;
    for (int t = 0; t < jobs; t++) {
        job[t].next_cross = np;
        np += job[t].cross;
    }
    /* Pass 3 takes the blocks largest bucket first. */
    for (int32_t b = 0; b < B; b++)
        by_size[b] = (QP_FN(block_size)){(uint64_t)(e_begin[b + 1] - e_begin[b]), b};
    qsort(by_size, (size_t)B, sizeof *by_size, QP_FN(cmp_block_size));
    for (int32_t b = 0; b < B; b++)
        order[b] = by_size[b].block;
    if (direct) { /* the interfaces from the counts; the records' ranges by block pair */
        int64_t at = 0, ni = 0;
        c->nonsub_edge = gcut__calloc((size_t)B + 1, 1, "qpbo block states");
        if (c->nonsub_edge == NULL)
            goto fail;
        for (size_t key = 0; key < keys; key++) {
            int64_t here = 0, nonsub = 0;
            for (int t = 0; t < jobs; t++) {
                int64_t k = job[t].key[key];
                job[t].key[key] = at + here;
                here += k;
                nonsub += job[t].key_nonsub[key];
            }
            job[0].key_nonsub[key] = nonsub; /* reused: the pair's total of non-submodular */
            ni += here > 0;
            at += here;
        }
        c->ifaces = gcut__calloc((size_t)ni + 1, sizeof(QP_FN(iface)), "qpbo block interfaces");
        c->outer = gcut__malloc(gcut__mul_size((size_t)np + 1, sizeof(QP_FN(rec))), "qpbo records");
        if (c->ifaces == NULL || c->outer == NULL)
            goto fail;
        ni = 0;
        for (size_t key = 0; key < keys; key++) {
            int64_t begin = job[0].key[key];
            int64_t end = key + 1 < keys ? job[0].key[key + 1] : np;
            if (end == begin)
                continue;
            QP_FN(iface) *f = &c->ifaces[ni++];
            f->a = (int32_t)(key / (size_t)B);
            f->b = (int32_t)(key % (size_t)B);
            f->begin = begin;
            f->end = end;
            if (job[0].key_nonsub[key] > 0)
                c->nonsub_edge[f->a] = c->nonsub_edge[f->b] = 1;
        }
        c->num_ifaces = ni;
    }
    c->M = (QP_IDX)arcs;
    c->first[c->n] = c->M;
    const size_t A = c->mirror ? 2 * (size_t)arcs : (size_t)arcs;
    if (c->mirror)
        c->first[2 * (size_t)c->n] = 2 * c->M;
    c->arcs = gcut__malloc(gcut__mul_size(A, sizeof(QP_FN(bk_arc))), "qpbo arcs");
    c->sister = gcut__malloc(gcut__mul_size(A, sizeof(QP_IDX)), "qpbo reverse arcs");
    c->inner = gcut__malloc(gcut__mul_size((size_t)c->inner_begin[B] + 1, sizeof(QP_FN(rec))),
                            "qpbo non-submodular records");
    entries = gcut__malloc(gcut__mul_size((size_t)total + 1, sizeof *entries), "qpbo buckets");
    if (!direct)
        pending =
            gcut__malloc(gcut__mul_size((size_t)np + 1, sizeof *pending), "qpbo block interfaces");
    other = gcut__malloc(gcut__mul_size((size_t)np + 1, sizeof *other), "qpbo block interfaces");
    if (!c->arcs || !c->sister || !c->inner || !entries || (!direct && !pending) || !other)
        goto fail;
    QP_FN(phase)(prof, "build prefix+alloc", since);
    for (int t = 0; t < jobs; t++) {
        job[t].pass = 2;
        job[t].entries = entries;
        job[t].pending = pending;
        job[t].outer = direct ? c->outer : NULL;
        job[t].other = other;
        job[t].e_begin = e_begin;
        job[t].a_begin = a_begin;
    }
    gcut__run_jobs(QP_FN(bucket_pass), job, sizeof *job, jobs);
    QP_FN(phase)(prof, "build scatter", since);
    int32_t next_block = 0;
    for (int t = 0; t < jobs; t++) {
        job[t].pass = 3;
        job[t].next_block = &next_block;
        job[t].order = order;
    }
    gcut__run_jobs(QP_FN(bucket_pass), job, sizeof *job, jobs < B ? jobs : B);
    QP_FN(phase)(prof, "build blocks (CSR, mirror, nodes, terminals)", since);
    for (int t = 0; t < jobs; t++) {
        job[t].pass = 4;
        job[t].x0 = np * t / jobs;
        job[t].x1 = np * (t + 1) / jobs;
    }
    gcut__run_jobs(QP_FN(bucket_pass), job, sizeof *job, jobs);
    QP_FN(phase)(prof, "build link pairs across blocks", since);
    if (direct) {
        st = QP_FN(alloc_subs)(c);
    } else {
        *pending_out = pending;
        *np_out = np;
        pending = NULL;
        st = GCUT_OK;
    }
fail:
    gcut__free(counts);
    gcut__free(key_counts);
    gcut__free(by_size);
    gcut__free(order);
    gcut__free(e_begin);
    gcut__free(a_begin);
    gcut__free(entries);
    gcut__free(pending);
    gcut__free(other);
    return st;
}

static gcut_status QP_FN(build)(QP_FN(core) * c, const gcut__qp_input *in) {
    const int64_t n = in->num_nodes;
    const int32_t given = in->num_blocks < 1 ? 1 : in->num_blocks;
    /* GCUT_QPBO_SPLIT=k (an experiment): each given block cut into k contiguous pieces. */
    const int32_t split =
        in->block != NULL ? (int32_t)gcut__env_int("GCUT_QPBO_SPLIT", 1, 1, 64) : 1;
    const int32_t B = given * split;
    c->n = (QP_IDX)n;
    c->B = B;
    c->split = split;
    c->mirror = in->has_nonsub;
    const size_t N = c->mirror ? 2 * (size_t)n : (size_t)n;
    const bool prof = QP_FN(profiling)();
    double since = gcut__now_ms();
    c->block_start = gcut__calloc((size_t)B + 1, sizeof(QP_IDX), "qpbo block starts");
    if (c->block_start == NULL)
        return GCUT_ERR_NOMEM;
    QP_IDX *intern = NULL; /* original -> internal, when blocks are given */
    if (in->block != NULL) {
        QP_IDX *cursor =
            gcut__calloc((size_t)given + 1, sizeof(QP_IDX), "qpbo cursor"); /* given starts */
        intern = gcut__malloc(gcut__mul_size((size_t)n, sizeof(QP_IDX)), "qpbo renumbering");
        c->orig = gcut__malloc(gcut__mul_size((size_t)n, sizeof(QP_IDX)), "qpbo renumbering");
        if (intern == NULL || c->orig == NULL || cursor == NULL) {
            gcut__free(intern);
            gcut__free(cursor);
            return GCUT_ERR_NOMEM;
        }
        QP_FN(renumber)(in, cursor, given, intern, c->orig);
        for (int32_t b = 0; b < given; b++) {
            const QP_IDX s0 = b == 0 ? 0 : cursor[b - 1], s1 = cursor[b];
            for (int32_t k = 0; k <= split; k++)
                c->block_start[b * split + k] = s0 + (QP_IDX)((int64_t)(s1 - s0) * k / split);
        }
        gcut__free(cursor);
    } else {
        for (int32_t b = 0; b <= B; b++)
            c->block_start[b] = (QP_IDX)((int64_t)b * n / B);
    }

    c->first = gcut__calloc(N + 1, sizeof(QP_IDX), "qpbo arc offsets");
    c->inner_begin = gcut__calloc((size_t)B + 1, sizeof(int64_t), "qpbo block records");
    c->tr = gcut__malloc(gcut__mul_size(N, sizeof(int64_t)), "qpbo terminal residuals");
    c->nodes = gcut__malloc(gcut__mul_size(N, sizeof(QP_FN(bk_node))), "qpbo nodes");
    gcut_status st = GCUT_OK;
    if (!c->first || !c->inner_begin || !c->tr || !c->nodes) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    QP_FN(phase)(prof, "build renumber+alloc", &since);
    int jobs = in->threads < 1                  ? 1
               : in->threads > QP_BUILD_THREADS ? QP_BUILD_THREADS
                                                : in->threads;
    if (in->num_edges < 1024)
        jobs = 1;
    /* On threads: by buckets, no atomics (GCUT_QPBO_ATOMIC_BUILD=1 keeps the atomic passes
     * below, for tests and measurements; so do many blocks and fewer blocks than half the
     * threads, where a block's pass would run on too few of them). */
    if (jobs > 1 && B <= QP_BUCKET_MAX_BLOCKS && 2 * B >= jobs &&
        gcut__env_int("GCUT_QPBO_ATOMIC_BUILD", 0, 0, 1) == 0) {
        QP_FN(pending) *pending = NULL;
        int64_t np = 0;
        st = QP_FN(build_buckets)(c, in, intern, jobs, prof, &since, &pending, &np);
        if (st == GCUT_OK && pending != NULL) {
            st = QP_FN(finish)(c, pending, np, jobs);
            QP_FN(phase)(prof, "build interfaces", &since);
        }
        goto done;
    }
    /* Pass 1: count arcs per node, held-back records per block and across blocks (on several
     * threads for pqpbo: the counts are atomic; the arcs' order in a node's list then depends
     * on the threads' timing, which changes the search but not the answer). */
    QP_FN(build_job) job[QP_BUILD_THREADS];
    for (int t = 0; t < jobs; t++) {
        memset(&job[t], 0, sizeof job[t]);
        job[t].c = c;
        job[t].in = in;
        job[t].intern = intern;
        job[t].pass = 1;
        job[t].atomic = jobs > 1;
        job[t].k0 = in->num_edges * t / jobs;
        job[t].k1 = in->num_edges * (t + 1) / jobs;
        job[t].index = t;
        job[t].jobs = jobs;
    }
    QP_FN(build_run)(job, jobs);
    QP_FN(phase)(prof, "build count", &since);
    /* Each job's pairs across blocks go to its own range of the pending list, in edge order. */
    int64_t num_outer = 0;
    for (int t = 0; t < jobs; t++) {
        job[t].next_pending = num_outer;
        num_outer += job[t].outer;
    }
    QP_IDX sum = 0;
    for (QP_IDX v = 0; v <= c->n; v++) {
        sum += c->first[v];
        c->first[v] = sum;
    }
    c->M = sum;
    const size_t A = c->mirror ? 2 * (size_t)sum : (size_t)sum;
    for (int32_t b = 0; b < B; b++)
        c->inner_begin[b + 1] += c->inner_begin[b];
    c->arcs = gcut__malloc(gcut__mul_size(A, sizeof(QP_FN(bk_arc))), "qpbo arcs");
    c->sister = gcut__malloc(gcut__mul_size(A, sizeof(QP_IDX)), "qpbo reverse arcs");
    c->inner = gcut__malloc(gcut__mul_size((size_t)c->inner_begin[B] + 1, sizeof(QP_FN(rec))),
                            "qpbo non-submodular records");
    QP_FN(pending) *pending = gcut__malloc(
        gcut__mul_size((size_t)num_outer + 1, sizeof(QP_FN(pending))), "qpbo block interfaces");
    int64_t *inner_cursor =
        gcut__malloc(gcut__mul_size((size_t)B + 1, sizeof(int64_t)), "qpbo cursor");
    if (!c->arcs || !c->sister || !c->inner || !pending || !inner_cursor) {
        gcut__free(pending);
        gcut__free(inner_cursor);
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    memcpy(inner_cursor, c->inner_begin, (size_t)B * sizeof(int64_t));
    QP_FN(phase)(prof, "build prefix+alloc", &since);
    /* Pass 2: place the arcs (counting sort by tail, as bk's build). */
    for (int t = 0; t < jobs; t++) {
        job[t].pass = 2;
        job[t].pending = pending;
        job[t].inner_cursor = inner_cursor;
    }
    QP_FN(build_run)(job, jobs);
    QP_FN(phase)(prof, "build place", &since);
    int64_t np = num_outer;
    gcut__free(inner_cursor);
    /* Pass 3: the flipped half of the arcs and every node's initial state, in slices (the
     * first touch of these pages is a good part of the build). */
    for (int t = 0; t < jobs; t++)
        job[t].pass = 3;
    QP_FN(build_run)(job, jobs);
    QP_FN(phase)(prof, "build mirror+nodes+terminals", &since);
    st = QP_FN(finish)(c, pending, np, jobs);
    QP_FN(phase)(prof, "build interfaces", &since);
done:
    gcut__free(intern);
    return st;
}

/* One slice of the held-back records copied to core->outer, marking the blocks with a
 * non-submodular pair (the same byte may be set by two threads: atomic stores). */
typedef struct QP_FN(copy_job) {
    QP_FN(core) * c;
    const QP_FN(pending) * pending;
    int64_t k0, k1;
} QP_FN(copy_job);

static void *QP_FN(copy_slice)(void *arg) {
    QP_FN(copy_job) *j = arg;
    QP_FN(core) *c = j->c;
    for (int64_t k = j->k0; k < j->k1; k++) {
        c->outer[k] = j->pending[k].rec;
        if (j->pending[k].rec.rev == QP_NONSUB) {
            __atomic_store_n(&c->nonsub_edge[j->pending[k].a], 1, __ATOMIC_RELAXED);
            __atomic_store_n(&c->nonsub_edge[j->pending[k].b], 1, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

/* Group the held-back pairs by block pair into interfaces (two stable counting sorts, by the
 * second block and then the first; records keep the edges' order within a pair) and make the
 * per-block bookkeeping. Frees pending. */
static gcut_status QP_FN(finish)(QP_FN(core) * c, QP_FN(pending) * pending, int64_t np, int jobs) {
    const int32_t B = c->B;
    int64_t ni = 0;
    if (!QP_FN(sort_pending)(&pending, np, B, jobs, &c->ifaces, &ni)) {
        gcut__free(pending);
        return GCUT_ERR_NOMEM;
    }
    const bool scan = c->ifaces == NULL;
    if (scan)
        for (int64_t k = 0; k < np; k++)
            if (k == 0 || pending[k].a != pending[k - 1].a || pending[k].b != pending[k - 1].b)
                ni++;
    c->outer = gcut__malloc(gcut__mul_size((size_t)np + 1, sizeof(QP_FN(rec))), "qpbo records");
    if (scan)
        c->ifaces = gcut__calloc((size_t)ni + 1, sizeof(QP_FN(iface)), "qpbo block interfaces");
    c->nonsub_edge = gcut__calloc((size_t)B + 1, 1, "qpbo block states");
    if (c->outer == NULL || c->ifaces == NULL || c->nonsub_edge == NULL) {
        gcut__free(pending);
        return GCUT_ERR_NOMEM;
    }
    if (scan)
        ni = 0;
    for (int64_t k = 0; k < np && scan; k++) {
        if (k == 0 || pending[k].a != pending[k - 1].a || pending[k].b != pending[k - 1].b) {
            c->ifaces[ni].a = pending[k].a;
            c->ifaces[ni].b = pending[k].b;
            c->ifaces[ni].begin = k;
            ni++;
        }
        c->ifaces[ni - 1].end = k + 1;
    }
    c->num_ifaces = ni;
    if (np < 16384)
        jobs = 1;
    QP_FN(copy_job) job[QP_BUILD_THREADS];
    for (int t = 0; t < jobs; t++)
        job[t] = (QP_FN(copy_job)){c, pending, np * t / jobs, np * (t + 1) / jobs};
    gcut__run_jobs(QP_FN(copy_slice), job, sizeof *job, jobs);
    gcut__free(pending);
    return QP_FN(alloc_subs)(c);
}

/* parallel-bk: take the residual graph bk's own build made (from a graph, or straight from a
 * grid's direction arrays), cut it into B contiguous blocks and hold back the arc pairs that
 * cross blocks. bk's build already cancelled each node's common terminal capacity into
 * *base_flow. */
static gcut_status QP_FN(from_bk)(QP_FN(core) * c, QP_FN(bk_solver) * bk, int32_t B,
                                  int64_t *base_flow) {
    c->n = bk->num_nodes;
    c->M = bk->num_arcs;
    c->mirror = false;
    c->B = B;
    c->first = bk->first;
    c->arcs = bk->arcs;
    c->sister = bk->sister;
    c->nodes = bk->nodes;
    c->tr = bk->tr;
    *base_flow = bk->flow;
    bk->first = bk->sister = NULL;
    bk->arcs = NULL;
    bk->nodes = NULL;
    bk->tr = NULL;
    QP_FN(bk_free)(bk);
    c->block_start = gcut__calloc((size_t)B + 1, sizeof(QP_IDX), "qpbo block starts");
    c->inner_begin = gcut__calloc((size_t)B + 1, sizeof(int64_t), "qpbo block records");
    c->inner = gcut__malloc(sizeof(QP_FN(rec)), "qpbo records");
    if (!c->block_start || !c->inner_begin || !c->inner)
        return GCUT_ERR_NOMEM;
    for (int32_t b = 0; b <= B; b++)
        c->block_start[b] = (QP_IDX)((int64_t)b * c->n / B);
    int64_t np = 0;
    for (int32_t b = 0; b < B; b++)
        for (QP_IDX u = c->block_start[b]; u < c->block_start[b + 1]; u++)
            for (QP_IDX a = c->first[u]; a < c->first[u + 1]; a++)
                np += c->arcs[a].head >= c->block_start[b + 1];
    QP_FN(pending) *pending = gcut__malloc(gcut__mul_size((size_t)np + 1, sizeof(QP_FN(pending))),
                                           "qpbo block interfaces");
    if (pending == NULL)
        return GCUT_ERR_NOMEM;
    np = 0;
    for (int32_t b = 0; b < B; b++)
        for (QP_IDX u = c->block_start[b]; u < c->block_start[b + 1]; u++)
            for (QP_IDX a = c->first[u]; a < c->first[u + 1]; a++) {
                QP_IDX v = c->arcs[a].head;
                if (v < c->block_start[b + 1])
                    continue;
                QP_FN(pending) *p = &pending[np++];
                p->a = b;
                p->b = QP_FN(block_of)(c, v);
                p->rec.arc = a;
                p->rec.cap = c->arcs[a].residual;
                p->rec.rev = c->arcs[c->sister[a]].residual;
                c->arcs[a].residual = c->arcs[c->sister[a]].residual = 0;
            }
    return QP_FN(finish)(c, pending, np, 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Sub-graphs                                                                                */

static void QP_FN(forget_times)(void *data) {
    QP_FN(sub) *s = data;
    QP_FN(core) *c = s->core;
    for (int32_t b = s->first_block; b >= 0; b = c->next_block[b])
        for (QP_IDX p = c->block_start[b]; p < c->block_start[b + 1]; p++) {
            c->nodes[p].ts = 0;
            if (s->stage2)
                c->nodes[p + c->n].ts = 0;
        }
}

/* Size the orphan queue to the sub-graph's nodes (it is empty between runs). */
static bool QP_FN(sub_room)(QP_FN(sub) * s) {
    size_t room = (size_t)s->primal * (s->stage2 ? 2 : 1);
    QP_IDX *q =
        gcut__realloc(s->bk.orphans, gcut__mul_size(room + 1, sizeof(QP_IDX)), "qpbo orphan queue");
    if (q == NULL)
        return false;
    s->bk.orphans = q;
    s->bk.num_nodes = (QP_IDX)room;
    s->bk.orphan_low = (QP_IDX)room;
    s->bk.orphan_head = s->bk.orphan_tail = 0;
    return true;
}

static bool QP_FN(sub_init)(QP_FN(core) * c, int32_t b) {
    QP_FN(sub) *s = &c->subs[b];
    memset(s, 0, sizeof *s);
    s->core = c;
    s->first_block = s->last_block = b;
    c->next_block[b] = -1; /* owner[b] = b was set before the threads started */
    s->primal = (int64_t)(c->block_start[b + 1] - c->block_start[b]);
    QP_FN(bk_solver) *bk = &s->bk;
    bk->first = c->first;
    bk->arcs = c->arcs;
    bk->sister = c->sister;
    bk->nodes = c->nodes;
    bk->tr = c->tr;
    bk->num_arcs = c->M;
    bk->active_first = bk->active_last = QP_NONE;
    bk->forget_times = QP_FN(forget_times);
    if (!QP_FN(sub_room)(s))
        return false;
    /* bk's init_trees, over this block's variables. */
    for (QP_IDX p = c->block_start[b]; p < c->block_start[b + 1]; p++) {
        QP_FN(bk_node) *node = &c->nodes[p];
        node->next = QP_NONE;
        node->ts = 0;
        if (c->tr[p] != 0) {
            node->parent = QP_TERMINAL;
            node->dist_sink = (c->tr[p] < 0 ? QP_SINK_BIT : 0) | 1u;
            QP_FN(bk_set_active)(bk, p);
        } else {
            node->parent = QP_NONE;
            node->dist_sink = 0;
        }
    }
    return true;
}

/* Stage 1 -> Stage 2 (section 2): the flipped copy of a sub-graph whose max flow is finished,
 * its residuals and its search trees mirrored (a source tree's mirror is a sink tree), the
 * flow counted twice. */
static bool QP_FN(to_stage2)(QP_FN(sub) * s) {
    QP_FN(core) *c = s->core;
    const QP_IDX n = c->n, M = c->M;
    QP_FN(bk_arc) *arcs = c->arcs;
    for (int32_t b = s->first_block; b >= 0; b = c->next_block[b])
        for (QP_IDX p = c->block_start[b]; p < c->block_start[b + 1]; p++) {
            c->tr[p + n] = -c->tr[p];
            QP_FN(bk_node) np = c->nodes[p];
            QP_FN(bk_node) *nq = &c->nodes[p + n];
            nq->next = QP_NONE;
            nq->ts = np.ts;
            if (np.parent == QP_NONE) {
                nq->parent = QP_NONE;
                nq->dist_sink = 0;
            } else {
                nq->parent = np.parent == QP_TERMINAL ? QP_TERMINAL : np.parent + M;
                nq->dist_sink = np.dist_sink ^ QP_SINK_BIT;
            }
            /* Mirror arcs start at 0; only those with residual are written, so that the
             * mirrors of arcs to sub-graphs not merged yet (0 both ways, read by the threads
             * solving those) are never stored to. */
            for (QP_IDX a = c->first[p]; a < c->first[p + 1]; a++)
                if (arcs[a].head < n) {
                    uint32_t r = arcs[c->sister[a]].residual;
                    if (r != 0)
                        arcs[a + M].residual = r;
                }
        }
    s->stage2 = true;
    QP_FN(bk_add_flow)(&s->bk, s->bk.flow);
    return QP_FN(sub_room)(s);
}

/* A residual arc u -> v just put into play breaks bk's finished state only if u is in the source
 * tree and v is not (the source tree can grow, or a path exists), or v is in the sink tree and
 * u is not; only then is an end made active (Kohli & Torr's marking of changed nodes). Ends
 * whose trees already agree with the arc stay idle: a merge whose pairs carry no flow costs
 * their writes only, not a search from every end. The ends to activate go to act[]. */
static inline int QP_FN(touch_arc)(const QP_FN(bk_node) * nodes, QP_IDX u, QP_IDX v, QP_IDX *act) {
    const QP_FN(bk_node) *nu = &nodes[u], *nv = &nodes[v];
    bool u_source = nu->parent != QP_NONE && !(nu->dist_sink & QP_SINK_BIT);
    bool v_source = nv->parent != QP_NONE && !(nv->dist_sink & QP_SINK_BIT);
    bool u_sink = nu->parent != QP_NONE && (nu->dist_sink & QP_SINK_BIT);
    bool v_sink = nv->parent != QP_NONE && (nv->dist_sink & QP_SINK_BIT);
    int k = 0;
    if (u_source && !v_source)
        act[k++] = u;
    if (v_sink && !u_sink)
        act[k++] = v;
    return k;
}

/* Put a held-back arc pair into play (and its mirror in Stage 2); the ends whose trees the new
 * residual arcs disagree with go to act[] (at most 8), for the caller to make active.
 * GCUT_QPBO_ACTIVATE_ALL=1 (c->activate_all) lists every end, as before, for the tests to
 * compare. Reads node states and writes only the pair's own arcs, so slices of one merge's
 * records can be put into play on several threads at once. */
static int QP_FN(add_rec)(const QP_FN(core) * c, bool stage2, const QP_FN(rec) * r, QP_IDX *act) {
    QP_FN(bk_arc) *arcs = c->arcs;
    const QP_FN(bk_node) *nodes = c->nodes;
    const QP_IDX n = c->n, M = c->M;
    QP_IDX a = r->arc, b = c->sister[a];
    int k = 0;
    if (r->rev != QP_NONSUB) {
        QP_IDX u = arcs[b].head, v = arcs[a].head;
        arcs[a].residual = r->cap;
        arcs[b].residual = r->rev;
        if (stage2) {
            arcs[a + M].residual = r->rev;
            arcs[b + M].residual = r->cap;
        }
        if (c->activate_all) {
            act[k++] = u;
            act[k++] = v;
            if (stage2) {
                act[k++] = u + n;
                act[k++] = v + n;
            }
            return k;
        }
        /* u -> v (cap), v -> u (rev); mirrors v' -> u' (cap), u' -> v' (rev). */
        if (r->cap != 0)
            k += QP_FN(touch_arc)(nodes, u, v, act + k);
        if (r->rev != 0)
            k += QP_FN(touch_arc)(nodes, v, u, act + k);
        if (stage2) {
            if (r->cap != 0)
                k += QP_FN(touch_arc)(nodes, v + n, u + n, act + k);
            if (r->rev != 0)
                k += QP_FN(touch_arc)(nodes, u + n, v + n, act + k);
        }
        return k;
    }
    /* a: p -> q', b: q' -> p; the partner pair q -> p' (b - M), p' -> q (a + M). */
    QP_IDX p = arcs[b].head, q = arcs[a].head - n;
    arcs[b].residual = r->cap;
    arcs[a + M].residual = r->cap;
    if (c->activate_all) {
        act[k++] = p;
        act[k++] = q;
        act[k++] = p + n;
        act[k++] = q + n;
        return k;
    }
    if (r->cap != 0) {
        k += QP_FN(touch_arc)(nodes, q + n, p, act + k); /* q' -> p */
        k += QP_FN(touch_arc)(nodes, p + n, q, act + k); /* p' -> q */
    }
    return k;
}

static void QP_FN(add_rec_now)(QP_FN(sub) * s, const QP_FN(rec) * r) {
    QP_IDX act[8];
    int k = QP_FN(add_rec)(s->core, s->stage2, r, act);
    for (int i = 0; i < k; i++)
        QP_FN(bk_set_active)(&s->bk, act[i]);
}

/* One slice of a large merge's records put into play on a helper thread; the ends to make
 * active are kept, in record order, for the merging thread. */
typedef struct QP_FN(add_job) {
    const QP_FN(core) * c;
    bool stage2;
    const int64_t *list; /* the merge's interfaces */
    int64_t count;
    int64_t r0, r1; /* records [r0, r1) of the merge, counted across its interfaces */
    QP_IDX *act;
    size_t num_act, room;
    bool failed;
} QP_FN(add_job);

static void *QP_FN(add_slice)(void *arg) {
    QP_FN(add_job) *j = arg;
    const QP_FN(core) *c = j->c;
    int64_t at = 0; /* records before interface k */
    for (int64_t k = 0; k < j->count && at < j->r1; k++) {
        const QP_FN(iface) *f = &c->ifaces[j->list[k]];
        int64_t len = f->end - f->begin;
        int64_t lo = j->r0 > at ? j->r0 - at : 0, hi = j->r1 - at < len ? j->r1 - at : len;
        for (int64_t r = lo; r < hi; r++) {
            if (j->room - j->num_act < 8) {
                size_t room = j->room < 1024 ? 1024 : 2 * j->room;
                QP_IDX *grown =
                    gcut__realloc(j->act, gcut__mul_size(room, sizeof(QP_IDX)), "qpbo merge");
                if (grown == NULL) {
                    j->failed = true;
                    return NULL;
                }
                j->act = grown;
                j->room = room;
            }
            j->num_act +=
                (size_t)QP_FN(add_rec)(c, j->stage2, &c->outer[f->begin + r], j->act + j->num_act);
        }
        at += len;
    }
    return NULL;
}

/* Put a merge's records into play: on helper threads (up to c->threads, c->add_slice records
 * each, 64 Ki unless GCUT_QPBO_ADD_SLICE says otherwise) when there are many, then their ends
 * made active in record order. */
static bool QP_FN(add_recs)(QP_FN(core) * c, QP_FN(sub) * x, const int64_t *list, int64_t count) {
    int64_t total = 0;
    for (int64_t k = 0; k < count; k++)
        total += c->ifaces[list[k]].end - c->ifaces[list[k]].begin;
    int64_t jobs = total / (c->add_slice > 0 ? c->add_slice : 65536);
    if (jobs > c->threads)
        jobs = c->threads;
    if (jobs > QP_BUILD_THREADS)
        jobs = QP_BUILD_THREADS;
    if (jobs <= 1) {
        for (int64_t k = 0; k < count; k++) {
            const QP_FN(iface) *f = &c->ifaces[list[k]];
            for (int64_t r = f->begin; r < f->end; r++)
                QP_FN(add_rec_now)(x, &c->outer[r]);
        }
        return true;
    }
    QP_FN(add_job) job[QP_BUILD_THREADS];
    for (int t = 0; t < jobs; t++)
        job[t] = (QP_FN(add_job)){
            c, x->stage2, list, count, total * t / jobs, total * (t + 1) / jobs, NULL, 0, 0, false};
    gcut__run_jobs(QP_FN(add_slice), job, sizeof *job, (int)jobs);
    bool ok = true;
    for (int t = 0; t < jobs; t++) {
        ok = ok && !job[t].failed;
        for (size_t i = 0; ok && i < job[t].num_act; i++)
            QP_FN(bk_set_active)(&x->bk, job[t].act[i]);
        gcut__free(job[t].act);
    }
    return ok;
}

/* Phase A for one block: Stage 1, then Stage 2 if the block holds a non-submodular term. A
 * block with a non-submodular pair to another block is mirrored here too (with no flow to
 * add, a copy): its merge would have to mirror it anyway, later and on fewer threads. */
static bool QP_FN(phase_a)(QP_FN(core) * c, int32_t b) {
    if (!QP_FN(sub_init)(c, b))
        return false;
    QP_FN(sub) *s = &c->subs[b];
    QP_FN(bk_run)(&s->bk);
    bool inner = c->inner_begin[b] < c->inner_begin[b + 1];
    if (inner || (c->nonsub_edge[b] && !c->late_mirror)) {
        if (!QP_FN(to_stage2)(s))
            return false;
    }
    if (inner) {
        for (int64_t k = c->inner_begin[b]; k < c->inner_begin[b + 1]; k++)
            QP_FN(add_rec_now)(s, &c->inner[k]);
        QP_FN(bk_run)(&s->bk);
    }
    return true;
}

/* Unite sub-graph y into x and put the interfaces' pairs into play (Algorithm 1, after the
 * locks); then update the max flow. */
static bool QP_FN(merge)(QP_FN(core) * c, QP_FN(sub) * x, QP_FN(sub) * y, const int64_t *list,
                         int64_t count) {
    bool need2 = x->stage2 || y->stage2;
    for (int64_t k = 0; k < count && !need2; k++) {
        const QP_FN(iface) *f = &c->ifaces[list[k]];
        for (int64_t r = f->begin; r < f->end && !need2; r++)
            need2 = c->outer[r].rev == QP_NONSUB;
    }
    if (need2) {
        if (!x->stage2 && !QP_FN(to_stage2)(x))
            return false;
        if (!y->stage2 && !QP_FN(to_stage2)(y))
            return false;
    }
    c->next_block[x->last_block] = y->first_block;
    x->last_block = y->last_block;
    x->primal += y->primal;
    gcut__free(y->bk.orphans);
    y->bk.orphans = NULL;
    if (!QP_FN(sub_room)(x))
        return false;
    /* Stamps of both halves stay below the new TIME, so none passes for fresh. */
    if (y->bk.time > x->bk.time)
        x->bk.time = y->bk.time;
    QP_FN(bk_next_time)(&x->bk);
    QP_FN(bk_add_flow)(&x->bk, y->bk.flow);
    x->bk.overflow = x->bk.overflow || y->bk.overflow;
    x->bk.augmentations += y->bk.augmentations;
    x->bk.active_first = x->bk.active_last = QP_NONE;
    if (!QP_FN(add_recs)(c, x, list, count))
        return false;
    QP_FN(bk_run)(&x->bk);
    return true;
}

static int32_t QP_FN(find)(QP_FN(core) * c, int32_t b) {
    while (c->owner[b] != b) {
        c->owner[b] = c->owner[c->owner[b]];
        b = c->owner[b];
    }
    return b;
}

static void QP_FN(set_error)(QP_FN(core) * c, gcut_status st) {
    pthread_mutex_lock(&c->lock);
    if (c->error == GCUT_OK)
        c->error = st;
    pthread_mutex_unlock(&c->lock);
}

/* One thread: Phase A blocks from a shared counter, then Phase B by Algorithm 1. */
static void *QP_FN(worker)(void *arg) {
    QP_FN(core) *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        int32_t b = c->error == GCUT_OK ? c->next_phase_a++ : c->B;
        pthread_mutex_unlock(&c->lock);
        if (b >= c->B)
            break;
        b = c->phase_a_order[b];
        if (!QP_FN(phase_a)(c, b)) {
            QP_FN(set_error)(c, GCUT_ERR_NOMEM);
            return NULL;
        }
    }
    return NULL;
}

/* Merges sub-graph y into x over the `count` interfaces in `list`. Called with c->lock held;
 * the lock is released during the merge and held again on return, the two sub-graphs marked
 * busy meanwhile. A failed merge records GCUT_ERR_NOMEM. */
static bool QP_FN(merge_claimed)(QP_FN(core) * c, int32_t x, int32_t y, const int64_t *list,
                                 int64_t count) {
    c->subs[x].busy = c->subs[y].busy = true;
    c->owner[y] = x;
    c->merges++;
    pthread_mutex_unlock(&c->lock);
    double m0 = c->profile ? gcut__now_ms() : 0;
    int64_t aug0 = c->subs[x].bk.augmentations + c->subs[y].bk.augmentations;
    bool ok = QP_FN(merge)(c, &c->subs[x], &c->subs[y], list, count);
    if (c->profile)
        fprintf(stderr,
                "pbk merge: %lld + %lld nodes, %lld interfaces, %lld paths, %.2f ms at %.2f\n",
                (long long)(c->subs[x].primal - c->subs[y].primal), (long long)c->subs[y].primal,
                (long long)count, (long long)(c->subs[x].bk.augmentations - aug0),
                gcut__now_ms() - m0, gcut__now_ms() - c->t_start);
    pthread_mutex_lock(&c->lock);
    c->subs[x].busy = false;
    if (!ok && c->error == GCUT_OK)
        c->error = GCUT_ERR_NOMEM;
    return ok;
}

static void *QP_FN(merger)(void *arg) {
    QP_FN(core) *c = arg;
    int64_t *list =
        gcut__malloc(gcut__mul_size((size_t)c->num_ifaces + 1, sizeof(int64_t)), "qpbo merge list");
    if (list == NULL) {
        QP_FN(set_error)(c, GCUT_ERR_NOMEM);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&c->lock);
        int32_t x = -1, y = -1;
        int64_t count = 0;
        for (int64_t k = 0; k < c->num_ifaces && c->error == GCUT_OK; k++) {
            QP_FN(iface) *f = &c->ifaces[k];
            if (f->done)
                continue;
            int32_t i = QP_FN(find)(c, f->a), j = QP_FN(find)(c, f->b);
            if (x < 0) {
                if (c->subs[i].busy || c->subs[j].busy)
                    continue;
                x = i < j ? i : j;
                y = i < j ? j : i;
            }
            if ((i == x && j == y) || (i == y && j == x)) {
                f->done = true;
                list[count++] = k;
            }
        }
        if (count == 0) {
            pthread_mutex_unlock(&c->lock);
            break;
        }
        bool ok = QP_FN(merge_claimed)(c, x, y, list, count);
        pthread_mutex_unlock(&c->lock);
        if (!ok)
            break;
    }
    gcut__free(list);
    return NULL;
}

static int64_t QP_FN(iface_score)(const QP_FN(core) * c, const QP_FN(iface) * f);

/* One thread of the overlapped schedule (the default): Phase A blocks from the shared counter
 * and, when none is left, Liu & Sun's merges of sub-graphs whose Phase A is over, so that the
 * threads that easy blocks free early merge while the hard blocks finish (the two-phase
 * schedule waits for the slowest block first). A thread with nothing to do waits for a Phase A
 * or a merge to end; all leave when every interface is merged. */
static void *QP_FN(overlap_worker)(void *arg) {
    QP_FN(core) *c = arg;
    int64_t *list =
        gcut__malloc(gcut__mul_size((size_t)c->num_ifaces + 1, sizeof(int64_t)), "qpbo merge list");
    pthread_mutex_lock(&c->lock);
    if (list == NULL && c->error == GCUT_OK)
        c->error = GCUT_ERR_NOMEM;
    while (c->error == GCUT_OK) {
        if (c->next_phase_a < c->B) {
            int32_t b = c->phase_a_order[c->next_phase_a++];
            pthread_mutex_unlock(&c->lock);
            bool ok = QP_FN(phase_a)(c, b);
            pthread_mutex_lock(&c->lock);
            if (!ok && c->error == GCUT_OK)
                c->error = GCUT_ERR_NOMEM;
            c->ready[b] = 1;
            if (++c->phase_a_done == c->B)
                c->phase_a_end = gcut__now_ms();
            pthread_cond_broadcast(&c->wake);
            continue;
        }
        /* The open interface between two idle, finished sub-graphs with the best score. */
        int32_t x = -1, y = -1;
        int64_t best = -1;
        bool open = false;
        for (int64_t k = 0; k < c->num_ifaces; k++) {
            QP_FN(iface) *f = &c->ifaces[k];
            if (f->done)
                continue;
            open = true;
            int32_t i = QP_FN(find)(c, f->a), j = QP_FN(find)(c, f->b);
            if (!c->ready[i] || !c->ready[j] || c->subs[i].busy || c->subs[j].busy)
                continue;
            int64_t key;
            if (c->size_order) {
                key = INT64_MAX - (c->subs[i].primal + c->subs[j].primal);
            } else {
                if (f->score < 0)
                    f->score = QP_FN(iface_score)(c, f);
                key = f->score;
            }
            if (key > best) {
                best = key;
                x = i < j ? i : j;
                y = i < j ? j : i;
            }
        }
        if (!open)
            break;
        if (x < 0) {
            pthread_cond_wait(&c->wake, &c->lock);
            continue;
        }
        int64_t count = 0;
        for (int64_t k = 0; k < c->num_ifaces; k++) {
            QP_FN(iface) *f = &c->ifaces[k];
            if (f->done)
                continue;
            int32_t i = QP_FN(find)(c, f->a), j = QP_FN(find)(c, f->b);
            if ((i == x && j == y) || (i == y && j == x)) {
                f->done = true;
                list[count++] = k;
            }
        }
        QP_FN(merge_claimed)(c, x, y, list, count);
        pthread_cond_broadcast(&c->wake);
    }
    pthread_cond_broadcast(&c->wake); /* an error: the waiting threads leave too */
    pthread_mutex_unlock(&c->lock);
    gcut__free(list);
    return NULL;
}

/* Run fn on `threads` threads (the calling one included). */
static gcut_status QP_FN(run_threads)(QP_FN(core) * c, int threads, void *(*fn)(void *)) {
    pthread_t ids[256];
    int started = 0;
    if (threads > 256)
        threads = 256;
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&ids[started], NULL, fn, c) != 0)
            break; /* fewer threads: the work is shared out all the same */
        started++;
    }
    fn(c);
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], NULL);
    return c->error;
}

/* Liu & Sun's order: interfaces with more pairs whose ends lie in opposite trees first (more
 * augmenting paths to find, better done while many threads still have work). */
static int QP_FN(cmp_iface)(const void *x, const void *y) {
    const QP_FN(iface) *p = x, *q = y;
    if (p->score != q->score)
        return p->score > q->score ? -1 : 1;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

static int64_t QP_FN(iface_score)(const QP_FN(core) * c, const QP_FN(iface) * f) {
    int64_t score = 0;
    for (int64_t r = f->begin; r < f->end; r++) {
        QP_IDX a = c->outer[r].arc;
        QP_IDX u = c->arcs[c->sister[a]].head, v = c->arcs[a].head;
        if (v >= c->n)
            v -= c->n;
        const QP_FN(bk_node) *nu = &c->nodes[u], *nv = &c->nodes[v];
        if (nu->parent != QP_NONE && nv->parent != QP_NONE &&
            ((nu->dist_sink ^ nv->dist_sink) & QP_SINK_BIT))
            score++;
    }
    return score;
}

static void QP_FN(order_ifaces)(QP_FN(core) * c) {
    for (int64_t k = 0; k < c->num_ifaces; k++)
        c->ifaces[k].score = QP_FN(iface_score)(c, &c->ifaces[k]);
    qsort(c->ifaces, (size_t)c->num_ifaces, sizeof *c->ifaces, QP_FN(cmp_iface));
}

/* ---------------------------------------------------------------------------------------- */
/* Labels                                                                                    */

/* Nodes reachable from the source in the residual graph (the minimal min cut's source side;
 * the same set for every maximum flow). bk stops only when its source tree holds every node
 * reachable from the source and no residual arc leaves it, and every sub-graph ended so (the
 * mirrored copies included: a mirror of a finished search is finished), so the set is the
 * source tree, which in_s holds (label_slice, pass 0); GCUT_QPBO_CHECK_REACH=1 recomputes the
 * set by search and compares (tests). */
static gcut_status QP_FN(reach_source)(const QP_FN(core) * c, size_t N, const uint8_t *in_s) {
    const char *check = getenv("GCUT_QPBO_CHECK_REACH");
    if (check == NULL || strcmp(check, "1") != 0)
        return GCUT_OK;
    QP_IDX *queue = gcut__malloc(gcut__mul_size(N + 1, sizeof(QP_IDX)), "qpbo labelling");
    uint8_t *seen = gcut__calloc(N + 1, 1, "qpbo labelling");
    if (queue == NULL || seen == NULL) {
        gcut__free(queue);
        gcut__free(seen);
        return GCUT_ERR_NOMEM;
    }
    size_t head = 0, tail = 0;
    for (size_t v = 0; v < N; v++)
        if (c->tr[v] > 0) {
            seen[v] = 1;
            queue[tail++] = (QP_IDX)v;
        }
    while (head < tail) {
        QP_IDX v = queue[head++];
        for (QP_IDX a = c->first[v]; a < c->first[v + 1]; a++) {
            QP_IDX w = c->arcs[a].head;
            if (c->arcs[a].residual > 0 && !seen[w]) {
                seen[w] = 1;
                queue[tail++] = w;
            }
        }
    }
    bool same = memcmp(seen, in_s, N) == 0;
    gcut__free(queue);
    gcut__free(seen);
    return same ? GCUT_OK
                : gcut__fail(GCUT_ERR_INTERNAL,
                             "qpbo: the source tree differs from the set reachable from the "
                             "source (GCUT_QPBO_CHECK_REACH)");
}

typedef struct QP_FN(heap_item) {
    uint64_t key;
    QP_IDX comp;
} QP_FN(heap_item);

static void QP_FN(heap_push)(QP_FN(heap_item) * h, size_t *size, QP_FN(heap_item) item) {
    size_t i = (*size)++;
    while (i > 0 && h[(i - 1) / 2].key > item.key) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = item;
}

static QP_FN(heap_item) QP_FN(heap_pop)(QP_FN(heap_item) * h, size_t *size) {
    QP_FN(heap_item) top = h[0], last = h[--*size];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= *size)
            break;
        if (l + 1 < *size && h[l + 1].key < h[l].key)
            l++;
        if (h[l].key >= last.key)
            break;
        h[i] = h[l];
        i = l;
    }
    h[i] = last;
    return top;
}

/* The labels of nodes neither side of every minimum cut fixes (weak persistencies): strongly
 * connected components of the residual graph among them (Tarjan), ordered topologically with
 * ties broken by the smallest original node id in a component (so that the result depends on
 * the minimum cuts only, not on which maximum flow was found), then p gets 0 when its
 * component comes after its flip's (the 2-SAT assignment, Aspvall, Plass & Tarjan 1979: the
 * source side stays closed under residual arcs and symmetric). p and p' in one component:
 * unlabeled. */
static gcut_status QP_FN(weak_labels)(const QP_FN(core) * c, const uint8_t *in_s, int8_t *labels,
                                      uint64_t *extra_bytes) {
    const QP_IDX n = c->n;
    const size_t N = 2 * (size_t)n;
    size_t count = 0;
    for (QP_IDX p = 0; p < n; p++)
        if (!in_s[p] && !in_s[p + n])
            count++;
    if (count == 0)
        return GCUT_OK;
#define QP_MIDDLE(v) (!in_s[v] && !in_s[QP_FN(flip)(c, v)])
    uint64_t before = gcut_memory_in_use();
    QP_IDX *index = gcut__calloc(N, sizeof(QP_IDX), "qpbo components");
    QP_IDX *low = gcut__malloc(gcut__mul_size(N, sizeof(QP_IDX)), "qpbo components");
    QP_IDX *comp = gcut__malloc(gcut__mul_size(N, sizeof(QP_IDX)), "qpbo components");
    QP_IDX *stack = gcut__malloc(gcut__mul_size(2 * count + 1, sizeof(QP_IDX)), "qpbo stack");
    QP_IDX *call_node = gcut__malloc(gcut__mul_size(2 * count + 1, sizeof(QP_IDX)), "qpbo stack");
    QP_IDX *call_arc = gcut__malloc(gcut__mul_size(2 * count + 1, sizeof(QP_IDX)), "qpbo stack");
    gcut_status st = GCUT_OK;
    QP_IDX *comp_start = NULL, *members = NULL, *indeg = NULL, *topo = NULL;
    uint64_t *key = NULL;
    QP_FN(heap_item) *heap = NULL;
    if (!index || !low || !comp || !stack || !call_node || !call_arc) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    QP_IDX counter = 0, num_comps = 0;
    size_t sp = 0, cp = 0;
    for (size_t root = 0; root < N; root++) {
        if (!QP_MIDDLE(root) || index[root] != 0)
            continue;
        index[root] = low[root] = ++counter;
        comp[root] = QP_NONE;
        stack[sp++] = (QP_IDX)root;
        call_node[cp] = (QP_IDX)root;
        call_arc[cp++] = c->first[root];
        while (cp > 0) {
            QP_IDX u = call_node[cp - 1];
            QP_IDX a = call_arc[cp - 1];
            if (a < c->first[u + 1]) {
                call_arc[cp - 1] = a + 1;
                QP_IDX w = c->arcs[a].head;
                if (c->arcs[a].residual == 0 || !QP_MIDDLE(w))
                    continue;
                if (index[w] == 0) {
                    index[w] = low[w] = ++counter;
                    comp[w] = QP_NONE;
                    stack[sp++] = w;
                    call_node[cp] = w;
                    call_arc[cp++] = c->first[w];
                } else if (comp[w] == QP_NONE && index[w] < low[u]) {
                    low[u] = index[w];
                }
                continue;
            }
            cp--;
            if (low[u] == index[u]) {
                QP_IDX w;
                do {
                    w = stack[--sp];
                    comp[w] = num_comps;
                } while (w != u);
                num_comps++;
            }
            if (cp > 0) {
                QP_IDX parent = call_node[cp - 1];
                if (low[u] < low[parent])
                    low[parent] = low[u];
            }
        }
    }
    /* Members by component, each component's key, in-degrees of the condensation. */
    comp_start = gcut__calloc((size_t)num_comps + 1, sizeof(QP_IDX), "qpbo components");
    members = gcut__malloc(gcut__mul_size(2 * count + 1, sizeof(QP_IDX)), "qpbo components");
    indeg = gcut__calloc((size_t)num_comps + 1, sizeof(QP_IDX), "qpbo components");
    topo = gcut__malloc(gcut__mul_size((size_t)num_comps + 1, sizeof(QP_IDX)), "qpbo order");
    key = gcut__malloc(gcut__mul_size((size_t)num_comps + 1, sizeof(uint64_t)), "qpbo order");
    heap = gcut__malloc(gcut__mul_size((size_t)num_comps + 1, sizeof *heap), "qpbo order");
    if (!comp_start || !members || !indeg || !topo || !key || !heap) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    for (QP_IDX k = 0; k < num_comps; k++)
        key[k] = UINT64_MAX;
    for (size_t v = 0; v < N; v++) {
        if (!QP_MIDDLE(v))
            continue;
        comp_start[comp[v] + 1]++;
        QP_IDX p = v < n ? (QP_IDX)v : (QP_IDX)(v - n);
        uint64_t k = 2 * (uint64_t)(c->orig != NULL ? c->orig[p] : p) + (v >= n);
        if (k < key[comp[v]])
            key[comp[v]] = k;
        for (QP_IDX a = c->first[v]; a < c->first[v + 1]; a++) {
            QP_IDX w = c->arcs[a].head;
            if (c->arcs[a].residual > 0 && QP_MIDDLE(w) && comp[w] != comp[v])
                indeg[comp[w]]++;
        }
    }
    for (QP_IDX k = 0; k < num_comps; k++)
        comp_start[k + 1] += comp_start[k];
    for (size_t v = 0; v < N; v++)
        if (QP_MIDDLE(v))
            members[comp_start[comp[v]]++] = (QP_IDX)v;
    for (QP_IDX k = num_comps; k > 0; k--)
        comp_start[k] = comp_start[k - 1];
    comp_start[0] = 0;
    /* Kahn's algorithm, smallest key first: the order depends on reachability alone. */
    size_t heap_size = 0;
    for (QP_IDX k = 0; k < num_comps; k++)
        if (indeg[k] == 0)
            QP_FN(heap_push)(heap, &heap_size, (QP_FN(heap_item)){key[k], k});
    QP_IDX position = 0;
    while (heap_size > 0) {
        QP_IDX k = QP_FN(heap_pop)(heap, &heap_size).comp;
        topo[k] = position++;
        for (QP_IDX m = comp_start[k]; m < comp_start[k + 1]; m++) {
            QP_IDX v = members[m];
            for (QP_IDX a = c->first[v]; a < c->first[v + 1]; a++) {
                QP_IDX w = c->arcs[a].head;
                if (c->arcs[a].residual > 0 && QP_MIDDLE(w) && comp[w] != k &&
                    --indeg[comp[w]] == 0)
                    QP_FN(heap_push)(heap, &heap_size, (QP_FN(heap_item)){key[comp[w]], comp[w]});
            }
        }
    }
    if (position != num_comps) {
        st = gcut__fail(GCUT_ERR_INTERNAL, "qpbo: the component graph has a cycle");
        goto done;
    }
    for (QP_IDX p = 0; p < n; p++) {
        if (!QP_MIDDLE(p))
            continue;
        QP_IDX cp_ = comp[p], cq = comp[p + n];
        QP_IDX o = c->orig != NULL ? c->orig[p] : p;
        labels[o] = cp_ == cq ? GCUT_QPBO_UNLABELED : topo[cp_] > topo[cq] ? 0 : 1;
    }
done:
#undef QP_MIDDLE
    *extra_bytes = gcut_memory_in_use() - before;
    gcut__free(index);
    gcut__free(low);
    gcut__free(comp);
    gcut__free(stack);
    gcut__free(call_node);
    gcut__free(call_arc);
    gcut__free(comp_start);
    gcut__free(members);
    gcut__free(indeg);
    gcut__free(topo);
    gcut__free(key);
    gcut__free(heap);
    return st;
}

/* The max-flow case (parallel-bk): the cut straight from the source tree, in slices on the
 * threads (a serial pass over every node is a tail that Amdahl notices at 16 threads). */
typedef struct QP_FN(cut_job) {
    const QP_FN(core) * c;
    uint8_t *cut;
    QP_IDX v0, v1;
} QP_FN(cut_job);

static void *QP_FN(cut_slice)(void *arg) {
    const QP_FN(cut_job) *j = arg;
    const QP_FN(core) *c = j->c;
    for (QP_IDX p = j->v0; p < j->v1; p++) {
        const QP_FN(bk_node) *node = &c->nodes[p];
        uint8_t side =
            node->parent != QP_NONE && !(node->dist_sink & QP_SINK_BIT) ? GCUT_SOURCE : GCUT_SINK;
        j->cut[c->orig != NULL ? c->orig[p] : p] = side;
    }
    return NULL;
}

static void QP_FN(cut_parallel)(const QP_FN(core) * c, int threads, uint8_t *cut) {
    QP_FN(cut_job) job[QP_BUILD_THREADS];
    int jobs = threads < 1 ? 1 : threads > QP_BUILD_THREADS ? QP_BUILD_THREADS : threads;
    if (c->n < 65536)
        jobs = 1;
    for (int t = 0; t < jobs; t++)
        job[t] = (QP_FN(cut_job)){c, cut, (QP_IDX)((int64_t)c->n * t / jobs),
                                  (QP_IDX)((int64_t)c->n * (t + 1) / jobs)};
    gcut__run_jobs(QP_FN(cut_slice), job, sizeof *job, jobs);
}

/* The strong labels of the variables [p0, p1) (and their cut sides) from in_s, in slices on
 * the threads; counts the variables neither side fixes (middle) for the weak pass. */
typedef struct QP_FN(label_job) {
    const QP_FN(core) * c;
    const uint8_t *in_s;
    gcut__qp_output *out;
    bool stage2;
    size_t v0, v1;   /* in_s slice (pass 0) */
    QP_IDX p0, p1;   /* variables (pass 1) */
    int64_t middle;  /* pass 1: variables with neither p nor p' reachable */
    uint8_t *in_set; /* pass 0: in_s to fill */
    int pass;
} QP_FN(label_job);

static void *QP_FN(label_slice)(void *arg) {
    QP_FN(label_job) *j = arg;
    const QP_FN(core) *c = j->c;
    if (j->pass == 0) {
        for (size_t v = j->v0; v < j->v1; v++) {
            const QP_FN(bk_node) *node = &c->nodes[v];
            j->in_set[v] = node->parent != QP_NONE && !(node->dist_sink & QP_SINK_BIT);
        }
        return NULL;
    }
    const uint8_t *in_s = j->in_s;
    const QP_IDX n = c->n;
    gcut__qp_output *out = j->out;
    int64_t middle = 0;
    for (QP_IDX p = j->p0; p < j->p1; p++) {
        QP_IDX o = c->orig != NULL ? c->orig[p] : p;
        if (out->cut != NULL)
            out->cut[o] = in_s[p] ? GCUT_SOURCE : GCUT_SINK;
        if (out->labels != NULL)
            out->labels[o] = in_s[p] ? 0 : !j->stage2 ? 1 : in_s[p + n] ? 1 : GCUT_QPBO_UNLABELED;
        middle += j->stage2 && !in_s[p] && !in_s[p + n];
    }
    j->middle = middle;
    return NULL;
}

static gcut_status QP_FN(labels)(const QP_FN(core) * c, bool stage2, gcut__qp_output *out) {
    const QP_IDX n = c->n;
    const char *check = getenv("GCUT_QPBO_CHECK_REACH");
    if (!stage2 && out->labels == NULL && !(check != NULL && strcmp(check, "1") == 0)) {
        if (out->cut != NULL)
            QP_FN(cut_parallel)(c, out->threads, out->cut);
        return GCUT_OK;
    }
    const size_t N = stage2 ? 2 * (size_t)n : (size_t)n;
    uint64_t before = gcut_memory_in_use();
    uint8_t *in_s = gcut__malloc(N + 1, "qpbo labelling");
    if (in_s == NULL)
        return GCUT_ERR_NOMEM;
    QP_FN(label_job) job[QP_BUILD_THREADS];
    int jobs = out->threads < 1                  ? 1
               : out->threads > QP_BUILD_THREADS ? QP_BUILD_THREADS
                                                 : out->threads;
    if (n < 16384)
        jobs = 1;
    for (int t = 0; t < jobs; t++)
        job[t] = (QP_FN(label_job)){c,
                                    in_s,
                                    out,
                                    stage2,
                                    N * (size_t)t / (size_t)jobs,
                                    N * (size_t)(t + 1) / (size_t)jobs,
                                    (QP_IDX)((int64_t)n * t / jobs),
                                    (QP_IDX)((int64_t)n * (t + 1) / jobs),
                                    0,
                                    in_s,
                                    0};
    gcut__run_jobs(QP_FN(label_slice), job, sizeof *job, jobs);
    gcut_status reached = QP_FN(reach_source)(c, N, in_s);
    if (reached != GCUT_OK) {
        gcut__free(in_s);
        return reached;
    }
    uint64_t extra = gcut_memory_in_use() - before;
    for (int t = 0; t < jobs; t++)
        job[t].pass = 1;
    gcut__run_jobs(QP_FN(label_slice), job, sizeof *job, jobs);
    int64_t middle = 0;
    for (int t = 0; t < jobs; t++)
        middle += job[t].middle;
    gcut_status st = GCUT_OK;
    if (stage2 && out->labels != NULL && middle > 0) {
        uint64_t weak = 0;
        st = QP_FN(weak_labels)(c, in_s, out->labels, &weak);
        extra += weak;
    }
    gcut__free(in_s);
    out->bytes += extra;
    return st;
}

/* ---------------------------------------------------------------------------------------- */

static gcut_status QP_FN(run_core)(QP_FN(core) * c, int threads, gcut__qp_output *out);

static gcut_status QP_FN(solve)(const gcut__qp_input *in, gcut__qp_output *out) {
    QP_FN(core) core;
    memset(&core, 0, sizeof core);
    uint64_t before = gcut_memory_in_use();
    double t0 = gcut__now_ms();
    gcut_status st = QP_FN(build)(&core, in);
    if (st != GCUT_OK) {
        QP_FN(core_free)(&core);
        return st == GCUT_ERR_NOMEM ? GCUT_ERR_NOMEM : st;
    }
    out->bytes = gcut_memory_in_use() - before;
    out->build_ms = gcut__now_ms() - t0;
    return QP_FN(run_core)(&core, in->threads, out);
}

/* parallel-bk from bk's layout of a graph (grid NULL) or grid. */
static gcut_status QP_FN(solve_bk)(const gcut_graph *g, const gcut_grid *grid, int32_t blocks,
                                   int threads, int64_t *base_flow, gcut__qp_output *out) {
    QP_FN(core) core;
    memset(&core, 0, sizeof core);
    uint64_t before = gcut_memory_in_use();
    double t0 = gcut__now_ms();
    QP_FN(bk_solver) *bk = NULL;
    gcut_status st =
        grid != NULL ? QP_FN(bk_build_grid)(grid, &bk) : QP_FN(bk_build)(g, false, &bk);
    if (st == GCUT_OK) {
        int64_t n = (int64_t)bk->num_nodes;
        int32_t B = blocks < 1 ? 1 : (int64_t)blocks > n ? (int32_t)(n > 0 ? n : 1) : blocks;
        st = QP_FN(from_bk)(&core, bk, B, base_flow);
    }
    if (st != GCUT_OK) {
        QP_FN(core_free)(&core);
        return st;
    }
    out->bytes = gcut_memory_in_use() - before;
    out->build_ms = gcut__now_ms() - t0;
    return QP_FN(run_core)(&core, threads, out);
}

/* Phase A, Phase B, the last mirrors, the labels; frees the core. */
static gcut_status QP_FN(run_core)(QP_FN(core) * c, int threads_asked, gcut__qp_output *out) {
    QP_FN(core) core = *c;
    gcut_status st = GCUT_OK;
    double t1 = gcut__now_ms();
    pthread_mutex_init(&core.lock, NULL);
    int threads = threads_asked < 1 ? 1 : threads_asked;
    int phase_a_threads = threads < core.B ? threads : core.B;
    const char *profile = getenv("GCUT_PBK_PROFILE");
    core.profile = profile != NULL && strcmp(profile, "1") == 0;
    const char *order = getenv("GCUT_PBK_ORDER");
    core.size_order = order != NULL && strcmp(order, "size") == 0;
    const char *all = getenv("GCUT_QPBO_ACTIVATE_ALL");
    core.activate_all = all != NULL && strcmp(all, "1") == 0;
    const char *late = getenv("GCUT_QPBO_LATE_MIRROR");
    core.late_mirror = late != NULL && strcmp(late, "1") == 0;
    core.threads = threads;
    core.add_slice = gcut__env_int("GCUT_QPBO_ADD_SLICE", 65536, 1, 1 << 30);
    core.t_start = t1;
    for (int32_t b = 0; b < core.B; b++)
        core.owner[b] = b;
    /* Phase A takes the blocks largest first (longest processing time first: with blocks of
     * unequal size, the last to start is a small one); GCUT_QPBO_PHASE_A_ORDER=index keeps
     * the blocks' order. */
    core.phase_a_order =
        gcut__malloc(gcut__mul_size((size_t)core.B + 1, sizeof(int32_t)), "qpbo block order");
    QP_FN(block_size) *by_size = gcut__malloc(
        gcut__mul_size((size_t)core.B + 1, sizeof(QP_FN(block_size))), "qpbo block order");
    if (core.phase_a_order == NULL || by_size == NULL) {
        gcut__free(by_size);
        pthread_mutex_destroy(&core.lock);
        QP_FN(core_free)(&core);
        return GCUT_ERR_NOMEM;
    }
    const char *pa_order = getenv("GCUT_QPBO_PHASE_A_ORDER");
    const bool by_index = pa_order != NULL && strcmp(pa_order, "index") == 0;
    for (int32_t b = 0; b < core.B; b++)
        by_size[b] = (QP_FN(block_size)){
            by_index ? 0 : (uint64_t)(core.block_start[b + 1] - core.block_start[b]), b};
    qsort(by_size, (size_t)core.B, sizeof *by_size, QP_FN(cmp_block_size));
    for (int32_t b = 0; b < core.B; b++)
        core.phase_a_order[b] = by_size[b].block;
    gcut__free(by_size);
    /* GCUT_PBK_OVERLAP=0: Phase A on every block, then the merges (the paper's two phases;
     * kept to measure the overlapped schedule against). */
    const char *overlap = getenv("GCUT_PBK_OVERLAP");
    if (overlap == NULL || strcmp(overlap, "0") != 0) {
        core.ready = gcut__calloc((size_t)core.B + 1, 1, "qpbo block states");
        if (core.ready == NULL)
            st = GCUT_ERR_NOMEM;
        for (int64_t k = 0; k < core.num_ifaces; k++)
            core.ifaces[k].score = -1;
        pthread_cond_init(&core.wake, NULL);
        if (st == GCUT_OK)
            st = QP_FN(run_threads)(&core, threads, QP_FN(overlap_worker));
        pthread_cond_destroy(&core.wake);
    } else {
        st = QP_FN(run_threads)(&core, phase_a_threads, QP_FN(worker));
        if (core.profile)
            fprintf(stderr, "pbk phase A: %d blocks, %.2f ms\n", (int)core.B, gcut__now_ms() - t1);
        if (st == GCUT_OK && core.num_ifaces > 0) {
            QP_FN(order_ifaces)(&core);
            st = QP_FN(run_threads)(&core, threads, QP_FN(merger));
        }
    }
    double since = t1;
    if (core.profile && core.phase_a_end > 0) {
        since = gcut__now_ms();
        fprintf(stderr, "pbk phase solve: Phase A ended at %.2f ms, the merges at %.2f ms\n",
                core.phase_a_end - t1, since - t1);
    }
    int64_t flow = 0;
    bool overflow = false;
    if (st == GCUT_OK) {
        bool stage2 = false;
        for (int32_t b = 0; b < core.B; b++)
            if (core.owner[b] == b && core.subs[b].stage2)
                stage2 = true;
        for (int32_t b = 0; b < core.B && st == GCUT_OK; b++) {
            QP_FN(sub) *s = &core.subs[b];
            if (core.owner[b] != b)
                continue;
            if (stage2 && !s->stage2 && !QP_FN(to_stage2)(s))
                st = GCUT_ERR_NOMEM;
            overflow =
                overflow || s->bk.overflow || (s->bk.flow > 0 && flow > INT64_MAX - s->bk.flow);
            if (!overflow)
                flow += s->bk.flow;
            out->augmentations += s->bk.augmentations;
        }
        out->stage2 = stage2;
    }
    double t2 = gcut__now_ms();
    out->solve_ms = t2 - t1;
    QP_FN(phase)(core.profile, "solve last mirrors", &since);
    if (st == GCUT_OK && overflow)
        st = gcut__fail(GCUT_ERR_OVERFLOW, "qpbo: the maximum flow passes INT64_MAX");
    if (st == GCUT_OK) {
        out->flow = flow;
        out->merges = core.merges;
        out->blocks = core.B;
        out->threads = threads;
        st = QP_FN(labels)(&core, out->stage2, out);
        QP_FN(phase)(core.profile, "labels", &since);
    }
    out->label_ms = gcut__now_ms() - t2;
    if (st == GCUT_ERR_NOMEM && *gcut_last_error() == '\0')
        gcut__fail(GCUT_ERR_NOMEM, "qpbo: out of memory while solving");
    pthread_mutex_destroy(&core.lock);
    QP_FN(core_free)(&core);
    return st;
}

#undef BK_IDX
#undef BK_FN
#undef BK_SKIP_IDLE_PAIRS
#undef QP_NONE
#undef QP_TERMINAL
#undef QP_SINK_BIT
#undef QP_NONSUB
