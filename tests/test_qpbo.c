/* test_qpbo.c - QPBO (Kolmogorov & Rother 2007; Jeppesen et al. 2021) against independent
 * oracles: brute force over all labelings (persistency, lower bound) and over all cuts of the
 * doubled graph (the exact lower bound, and which nodes some minimum cut can label) on tiny
 * energies; a max-flow reduction solved by bk on larger submodular ones; pqpbo against qpbo
 * for many block splits and thread counts; the float builder; bad arguments. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "util_common.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0;

#define count(ok) CHECK_COUNT(passed, ok)

enum { MAX_N = 8, MAX_M = 24 };

typedef struct tiny {
    int n, m;
    int64_t u0[MAX_N], u1[MAX_N];
    int ti[MAX_M], tj[MAX_M];
    int32_t e[MAX_M][4];
} tiny;

static void make_tiny(test_rng *rng, int n, int m, int nonsub_percent, int range, tiny *t) {
    memset(t, 0, sizeof *t);
    t->n = n;
    t->m = n < 2 ? 0 : m;
    for (int p = 0; p < n; p++) {
        t->u0[p] = test_rng_range(rng, -range, range);
        t->u1[p] = test_rng_range(rng, -range, range);
    }
    for (int k = 0; k < t->m; k++) {
        int i = (int)test_rng_range(rng, 0, n - 1), j;
        do
            j = (int)test_rng_range(rng, 0, n - 1);
        while (j == i);
        t->ti[k] = i;
        t->tj[k] = j;
        bool nonsub = test_rng_range(rng, 0, 99) < nonsub_percent;
        for (;;) {
            for (int x = 0; x < 4; x++)
                t->e[k][x] = (int32_t)test_rng_range(rng, -range, range);
            int64_t w = (int64_t)t->e[k][1] + t->e[k][2] - t->e[k][0] - t->e[k][3];
            if (nonsub ? w < 0 : w >= 0)
                break;
        }
    }
}

static int64_t tiny_energy(const tiny *t, unsigned x) {
    int64_t e = 0;
    for (int p = 0; p < t->n; p++)
        e += (x >> p & 1) ? t->u1[p] : t->u0[p];
    for (int k = 0; k < t->m; k++)
        e += t->e[k][2 * (x >> t->ti[k] & 1) + (x >> t->tj[k] & 1)];
    return e;
}

/* The minimum over labelings that agree with labels where labels is 0 or 1. */
static int64_t tiny_min(const tiny *t, const int8_t *labels) {
    int64_t best = INT64_MAX;
    for (unsigned x = 0; x < 1u << t->n; x++) {
        bool agree = true;
        for (int p = 0; p < t->n && labels; p++)
            if (labels[p] >= 0 && (int)(x >> p & 1) != labels[p])
                agree = false;
        if (agree) {
            int64_t e = tiny_energy(t, x);
            if (e < best)
                best = e;
        }
    }
    return best;
}

/* Every cut of the doubled graph, written out from the energy here (its own normal form):
 * node p is on the source side iff bit p of s, p' iff bit p of sf. Returns 2 * the QPBO bound
 * and, per node, whether some minimum cut puts p and p' on different sides. */
static int64_t tiny_doubled(const tiny *t, bool *separable) {
    int64_t d[MAX_N], twice_const = 0;
    for (int p = 0; p < t->n; p++) {
        d[p] = t->u1[p] - t->u0[p];
        twice_const += 2 * t->u0[p];
    }
    int64_t w[MAX_M];
    for (int k = 0; k < t->m; k++) {
        const int32_t *e = t->e[k];
        w[k] = (int64_t)e[1] + e[2] - e[0] - e[3];
        twice_const += 2 * (int64_t)e[0];
        d[t->ti[k]] += (int64_t)e[2] - e[0];
        d[t->tj[k]] += (int64_t)e[3] - e[2] + (w[k] < 0 ? w[k] : 0);
    }
    for (int p = 0; p < t->n; p++)
        if (d[p] < 0)
            twice_const += 2 * d[p];
    int64_t best = INT64_MAX;
    const unsigned all = 1u << t->n;
    for (int p = 0; p < t->n; p++)
        separable[p] = false;
    for (int pass = 0; pass < 2; pass++)
        for (unsigned s = 0; s < all; s++)
            for (unsigned sf = 0; sf < all; sf++) {
                int64_t cut = 0;
                for (int p = 0; p < t->n; p++) {
                    bool ps = s >> p & 1, fs = sf >> p & 1;
                    if (d[p] > 0) /* s -> p, p' -> t */
                        cut += (ps ? 0 : d[p]) + (fs ? d[p] : 0);
                    else /* p -> t, s -> p' */
                        cut += (ps ? -d[p] : 0) + (fs ? 0 : -d[p]);
                }
                for (int k = 0; k < t->m; k++) {
                    int i = t->ti[k], j = t->tj[k];
                    bool is = s >> i & 1, js = s >> j & 1, ifs = sf >> i & 1, jfs = sf >> j & 1;
                    if (w[k] >= 0) /* i -> j, j' -> i' */
                        cut += w[k] * ((is && !js) + (jfs && !ifs));
                    else /* j' -> i, i' -> j */
                        cut += -w[k] * ((jfs && !is) + (ifs && !js));
                }
                if (pass == 0 && cut < best)
                    best = cut;
                if (pass == 1 && cut == best)
                    for (int p = 0; p < t->n; p++)
                        if ((s >> p & 1) != (sf >> p & 1))
                            separable[p] = true;
            }
    return best + twice_const;
}

static gcut_qpbo *tiny_build(const tiny *t) {
    gcut_qpbo *q = NULL;
    CHECK_OK(gcut_qpbo_create(t->n, t->m, &q));
    if (q == NULL)
        return NULL;
    for (int p = 0; p < t->n; p++)
        CHECK_OK(gcut_qpbo_add_unary(q, p, (int32_t)t->u0[p], (int32_t)t->u1[p]));
    for (int k = 0; k < t->m; k++)
        CHECK_OK(gcut_qpbo_add_pairwise(q, t->ti[k], t->tj[k], t->e[k][0], t->e[k][1], t->e[k][2],
                                        t->e[k][3], NULL));
    return q;
}

static gcut_status solve(gcut_qpbo *q, const char *solver, int threads, int8_t *labels,
                         gcut_qpbo_result *r) {
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = solver;
    opt.threads = threads;
    return gcut_qpbo_solve(q, &opt, labels, r);
}

/* Tiny energies: persistency, the bound, maximal labeling; pqpbo with random blocks. */
static void test_tiny(test_rng *rng, int rounds) {
    int bad = 0;
    for (int round = 0; round < rounds && bad < 5; round++) {
        tiny t;
        int n = (int)test_rng_range(rng, 1, 6);
        int nonsub = round % 4 == 0 ? 0 : (int)test_rng_range(rng, 0, 100);
        make_tiny(rng, n, (int)test_rng_range(rng, 0, 3 * n), nonsub,
                  (int)test_rng_range(rng, 1, round % 3 == 0 ? 3 : 50), &t);
        gcut_qpbo *q = tiny_build(&t);
        if (q == NULL)
            return;
        int8_t labels[MAX_N], plabels[MAX_N];
        gcut_qpbo_result r, pr;
        CHECK_OK(solve(q, "qpbo", 1, labels, &r));
        bool separable[MAX_N];
        int64_t twice = tiny_doubled(&t, separable);
        int64_t bound = twice / 2 + (twice % 2 != 0 && twice > 0);
        if (twice < 0 && twice % 2 != 0)
            bound = twice / 2;
        int64_t min = tiny_min(&t, NULL), agree = tiny_min(&t, labels);
        unsigned x = 0;
        int64_t labeled = 0;
        for (int p = 0; p < n; p++) {
            x |= (unsigned)(labels[p] == 1) << p;
            labeled += labels[p] >= 0;
        }
        bool ok = r.lower_bound <= min && agree == min && r.lower_bound == bound &&
                  r.energy == tiny_energy(&t, x) && r.labeled == labeled;
        for (int p = 0; p < n; p++)
            ok = ok && (labels[p] >= 0) == separable[p];
        if (nonsub == 0)
            ok = ok && labeled == n && r.energy == min;
        /* pqpbo: random blocks or contiguous pieces, 1-4 threads: the same labels. */
        int32_t block[MAX_N];
        int32_t nb = (int32_t)test_rng_range(rng, 1, n);
        for (int p = 0; p < n; p++)
            block[p] = (int32_t)test_rng_range(rng, 0, nb - 1);
        if (round % 2 == 0)
            CHECK_OK(gcut_qpbo_set_blocks(q, block, nb));
        CHECK_OK(solve(q, "pqpbo", (int)test_rng_range(rng, 1, 4), plabels, &pr));
        ok = ok && memcmp(labels, plabels, (size_t)n) == 0 && pr.lower_bound == r.lower_bound &&
             pr.energy == r.energy;
        if (!ok) {
            bad++;
            fprintf(stderr,
                    "tiny round %d (n %d, m %d): bound %lld (doubled brute force %lld), min %lld, "
                    "min agreeing %lld, energy %lld, labeled %lld; pqpbo bound %lld energy %lld\n",
                    round, n, t.m, (long long)r.lower_bound, (long long)bound, (long long)min,
                    (long long)agree, (long long)r.energy, (long long)labeled,
                    (long long)pr.lower_bound, (long long)pr.energy);
            for (int p = 0; p < n; p++)
                fprintf(stderr, "  node %d: qpbo %d pqpbo %d separable %d\n", p, labels[p],
                        plabels[p], separable[p]);
        }
        gcut_qpbo_free(q);
    }
    test_failures += bad;
    count(bad == 0);
}

/* A random energy on a w x h 4-connected grid plus random long-range terms, kept as arrays
 * so that the tests can build other problems from the same terms. */
typedef struct energy {
    int64_t n, m;
    int32_t *u;  /* 2 per node */
    int64_t *ij; /* 2 per term */
    int32_t *e;  /* 4 per term */
} energy;

static void energy_free(energy *en) {
    free(en->u);
    free(en->ij);
    free(en->e);
}

static gcut_qpbo *make_grid_energy(test_rng *rng, int w, int h, int nonsub_percent, int range,
                                   energy *en) {
    int64_t n = (int64_t)w * h;
    en->n = n;
    en->m = 0;
    en->u = malloc((size_t)n * 2 * sizeof *en->u);
    en->ij = malloc((size_t)n * 6 * sizeof *en->ij);
    en->e = malloc((size_t)n * 12 * sizeof *en->e);
    for (int64_t p = 0; p < 2 * n; p++)
        en->u[p] = (int32_t)test_rng_range(rng, -range, range);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int dir = 0; dir < 3; dir++) {
                int64_t p = (int64_t)y * w + x, qn;
                if (dir == 0 && x + 1 < w)
                    qn = p + 1;
                else if (dir == 1 && y + 1 < h)
                    qn = p + w;
                else if (dir == 2 && test_rng_range(rng, 0, 9) == 0)
                    qn = test_rng_range(rng, 0, n - 1);
                else
                    continue;
                if (qn == p)
                    continue;
                int32_t *e = &en->e[4 * en->m];
                bool nonsub = test_rng_range(rng, 0, 99) < nonsub_percent;
                for (;;) {
                    for (int k = 0; k < 4; k++)
                        e[k] = (int32_t)test_rng_range(rng, -range, range);
                    int64_t wgt = (int64_t)e[1] + e[2] - e[0] - e[3];
                    if (nonsub ? wgt < 0 : wgt >= 0)
                        break;
                }
                en->ij[2 * en->m] = p;
                en->ij[2 * en->m + 1] = qn;
                en->m++;
            }
    gcut_qpbo *q = NULL;
    CHECK_OK(gcut_qpbo_create(n, en->m, &q));
    if (q == NULL)
        return NULL;
    for (int64_t p = 0; p < n; p++)
        CHECK_OK(gcut_qpbo_add_unary(q, p, en->u[2 * p], en->u[2 * p + 1]));
    for (int64_t k = 0; k < en->m; k++) {
        const int32_t *e = &en->e[4 * k];
        CHECK_OK(gcut_qpbo_add_pairwise(q, en->ij[2 * k], en->ij[2 * k + 1], e[0], e[1], e[2], e[3],
                                        NULL));
    }
    return q;
}

/* Submodular energies: every node labeled, at the minimum computed by an independent graph
 * construction (Kolmogorov & Zabih's) solved by bk. */
static void test_submodular_vs_maxflow(test_rng *rng) {
    int bad = 0;
    for (int round = 0; round < 12; round++) {
        int w = (int)test_rng_range(rng, 5, 60), h = (int)test_rng_range(rng, 5, 60);
        energy en;
        gcut_qpbo *q = make_grid_energy(rng, w, h, 0, (int)test_rng_range(rng, 1, 1000), &en);
        if (q == NULL)
            return;
        const int64_t n = en.n;
        gcut_graph *g = NULL;
        CHECK_OK(gcut_graph_create(n, en.m, &g));
        int64_t constant = 0;
        int64_t *d = calloc((size_t)n, sizeof *d);
        for (int64_t p = 0; p < n; p++) {
            constant += en.u[2 * p];
            d[p] += (int64_t)en.u[2 * p + 1] - en.u[2 * p];
        }
        for (int64_t k = 0; k < en.m; k++) {
            /* E = A + (C-A) x_p + (D-C) x_q + (B+C-A-D) [x_p = 0][x_q = 1]; label 0 = source
             * side, so the last is the arc p -> q. */
            const int32_t *e = &en.e[4 * k];
            int64_t p = en.ij[2 * k], qn = en.ij[2 * k + 1];
            constant += e[0];
            d[p] += (int64_t)e[2] - e[0];
            d[qn] += (int64_t)e[3] - e[2];
            CHECK_OK(gcut_graph_add_edge(g, p, qn, e[1] + e[2] - e[0] - e[3], 0));
        }
        for (int64_t p = 0; p < n; p++) {
            /* d x_p: d > 0 costs d on the sink side (a source arc); d < 0 is d + |d| (1 - x). */
            if (d[p] >= 0) {
                CHECK_OK(gcut_graph_add_tweights(g, p, (int32_t)d[p], 0));
            } else {
                constant += d[p];
                CHECK_OK(gcut_graph_add_tweights(g, p, 0, (int32_t)-d[p]));
            }
        }
        free(d);
        gcut_options opt;
        gcut_options_init(&opt);
        opt.solver = "bk";
        int64_t flow = 0;
        CHECK_OK(gcut_graph_solve(g, &opt, &flow, NULL, NULL));
        int8_t *labels = malloc((size_t)n);
        gcut_qpbo_result r, pr;
        CHECK_OK(solve(q, "qpbo", 1, labels, &r));
        CHECK_OK(solve(q, "pqpbo", 3, labels, &pr));
        bool ok = r.labeled == n && r.energy == constant + flow && r.lower_bound == r.energy &&
                  pr.energy == r.energy && pr.labeled == n && !r.stage2;
        if (!ok) {
            bad++;
            fprintf(stderr,
                    "submodular %dx%d: qpbo energy %lld bound %lld labeled %lld, pqpbo %lld, "
                    "max-flow reduction %lld\n",
                    w, h, (long long)r.energy, (long long)r.lower_bound, (long long)r.labeled,
                    (long long)pr.energy, (long long)(constant + flow));
        }
        free(labels);
        gcut_graph_free(g);
        gcut_qpbo_free(q);
        energy_free(&en);
    }
    test_failures += bad;
    count(bad == 0);
}

/* Larger non-submodular energies: pqpbo gives qpbo's labels, bound and energy for many block
 * splits (given ids, strided, random; contiguous pieces) and thread counts, and so does the
 * 64-bit index layout. */
static void test_parallel_agrees(test_rng *rng) {
    int bad = 0;
    for (int round = 0; round < 16; round++) {
        int w = (int)test_rng_range(rng, 4, 50), h = (int)test_rng_range(rng, 4, 50);
        energy en;
        gcut_qpbo *q = make_grid_energy(rng, w, h, (int)test_rng_range(rng, 0, 60),
                                        (int)test_rng_range(rng, 1, 100), &en);
        energy_free(&en);
        if (q == NULL)
            return;
        int64_t n = gcut_qpbo_num_nodes(q);
        int8_t *ref = malloc((size_t)n), *got = malloc((size_t)n);
        gcut_qpbo_result r, pr;
        CHECK_OK(solve(q, "qpbo", 1, ref, &r));
        bool ok = r.lower_bound <= r.energy;
        for (int split = 0; split < 6; split++) {
            int threads = (int)test_rng_range(rng, 1, 5);
            if (split % 3 == 0) {
                int32_t nb = (int32_t)test_rng_range(rng, 1, 40);
                int32_t *block = malloc((size_t)n * sizeof *block);
                for (int64_t p = 0; p < n; p++)
                    block[p] =
                        split == 3 ? (int32_t)(p % nb) : (int32_t)test_rng_range(rng, 0, nb - 1);
                CHECK_OK(gcut_qpbo_set_blocks(q, block, nb));
                free(block);
            } else {
                CHECK_OK(gcut_qpbo_set_blocks(q, NULL, 0));
                char text[16];
                snprintf(text, sizeof text, "%d", (int)test_rng_range(rng, 1, 200));
                setenv("GCUT_QPBO_BLOCKS", text, 1);
            }
            if (split == 5) /* the atomic build (others take the buckets where they can) */
                setenv("GCUT_QPBO_ATOMIC_BUILD", "1", 1);
            CHECK_OK(solve(q, "pqpbo", threads, got, &pr));
            unsetenv("GCUT_QPBO_BLOCKS");
            unsetenv("GCUT_QPBO_ATOMIC_BUILD");
            bool same = memcmp(ref, got, (size_t)n) == 0 && pr.lower_bound == r.lower_bound &&
                        pr.energy == r.energy && pr.labeled == r.labeled;
            if (!same)
                fprintf(stderr, "round %d split %d (%d threads): pqpbo differs from qpbo\n", round,
                        split, threads);
            ok = ok && same;
        }
        /* The wide (64-bit index) layout gives the same answer. */
        setenv("GCUT_QPBO_INDEX_BITS", "64", 1);
        CHECK_OK(solve(q, "pqpbo", 2, got, &pr));
        unsetenv("GCUT_QPBO_INDEX_BITS");
        ok = ok && memcmp(ref, got, (size_t)n) == 0 && pr.lower_bound == r.lower_bound;
        if (!ok)
            bad++;
        free(ref);
        free(got);
        gcut_qpbo_free(q);
    }
    test_failures += bad;
    count(bad == 0);
}

/* Energies large enough for the threaded paths of the build (edge passes on several threads,
 * the interface sort cut into slices): a random grid with random block ids (nearly every pair
 * crosses blocks) and a multi-object energy (blocks = objects, every interface
 * non-submodular). pqpbo at several thread counts, with the merges activating every end of a
 * new pair (GCUT_QPBO_ACTIVATE_ALL=1) and with blocks mirrored only when a merge needs it
 * (GCUT_QPBO_LATE_MIRROR=1), with each given block cut in three (GCUT_QPBO_SPLIT=3), and with
 * merges putting their records into play on helper threads, 50 records each
 * (GCUT_QPBO_ADD_SLICE=50), and with the build's atomic edge passes instead of its per-block
 * buckets (GCUT_QPBO_ATOMIC_BUILD=1), and with the normal form by spill lists
 * (GCUT_QPBO_PREP=spill; the owner rule below 8 threads is the default), gives qpbo's labels, bound
 * and energy; every solve also checks that the source tree is the set reachable from the source
 * (GCUT_QPBO_CHECK_REACH, set in main), which fails if a merge left an augmenting path unfound. */
static void test_parallel_large(test_rng *rng) {
    int bad = 0;
    for (int kind = 0; kind < 3; kind++) {
        uint64_t seed = test_rng_next(rng);
        gcut_qpbo *q = NULL;
        if (kind == 0) /* 16900 nodes: every threaded pass (their floors are 16384) */
            CHECK_OK(gcut_qpbo_random(130, 130, (int)test_rng_range(rng, 10, 60), 100, seed, &q));
        else if (kind == 1)
            CHECK_OK(gcut_qpbo_objects(160, 120, 1, 6, seed, &q));
        else /* 67600 nodes, for "auto" only (its floor is 65536) */
            CHECK_OK(gcut_qpbo_random(260, 260, (int)test_rng_range(rng, 10, 60), 100, seed, &q));
        if (q == NULL)
            return;
        int64_t n = gcut_qpbo_num_nodes(q);
        if (kind == 0) {
            int32_t nb = (int32_t)test_rng_range(rng, 5, 23);
            int32_t *block = malloc((size_t)n * sizeof *block);
            for (int64_t p = 0; p < n; p++)
                block[p] = (int32_t)test_rng_range(rng, 0, nb - 1);
            CHECK_OK(gcut_qpbo_set_blocks(q, block, nb));
            free(block);
        }
        int8_t *ref = malloc((size_t)n), *got = malloc((size_t)n);
        gcut_qpbo_result r, pr;
        CHECK_OK(solve(q, "qpbo", 1, ref, &r));
        bool ok = r.lower_bound <= r.energy;
        if (kind == 2) {
            /* "auto" takes pqpbo with threads on a large energy, qpbo without; same answer. */
            CHECK_OK(solve(q, "auto", 3, got, &pr));
            ok = ok && strcmp(pr.solver, "pqpbo") == 0 && memcmp(ref, got, (size_t)n) == 0 &&
                 pr.energy == r.energy && pr.lower_bound == r.lower_bound;
            CHECK_OK(solve(q, "auto", 1, got, &pr));
            ok = ok && strcmp(pr.solver, "qpbo") == 0 && memcmp(ref, got, (size_t)n) == 0;
            /* The normal form by spill lists and by the owner rule, each forced at 3 and 8
             * threads: the spilled contributions are nonzero here (random terms; the
             * multi-object energies' exclusion terms add none). */
            for (int mode = 0; mode < 2; mode++) {
                setenv("GCUT_QPBO_PREP", mode == 0 ? "spill" : "owner", 1);
                for (int threads = 3; threads <= 8; threads += 5) {
                    CHECK_OK(solve(q, "pqpbo", threads, got, &pr));
                    ok = ok && memcmp(ref, got, (size_t)n) == 0 && pr.energy == r.energy &&
                         pr.lower_bound == r.lower_bound && pr.labeled == r.labeled;
                }
            }
            unsetenv("GCUT_QPBO_PREP");
        }
        /* The default at 1, 3 and 8 threads; each variant at 3. */
        for (int variant = 0; variant < 7 && kind < 2; variant++) {
            if (variant == 1)
                setenv("GCUT_QPBO_ACTIVATE_ALL", "1", 1);
            if (variant == 2)
                setenv("GCUT_QPBO_LATE_MIRROR", "1", 1);
            if (variant == 3)
                setenv("GCUT_QPBO_SPLIT", "3", 1);
            if (variant == 4)
                setenv("GCUT_QPBO_ADD_SLICE", "50", 1);
            if (variant == 5) /* the build's atomic edge passes instead of its buckets */
                setenv("GCUT_QPBO_ATOMIC_BUILD", "1", 1);
            if (variant == 6) /* the normal form by spill lists */
                setenv("GCUT_QPBO_PREP", "spill", 1);
            const int threads[] = {3, 1, 8};
            for (int t = 0; t < (variant == 0 ? 3 : 1); t++) {
                CHECK_OK(solve(q, "pqpbo", threads[t], got, &pr));
                bool same = memcmp(ref, got, (size_t)n) == 0 && pr.lower_bound == r.lower_bound &&
                            pr.energy == r.energy && pr.labeled == r.labeled;
                if (!same)
                    fprintf(stderr,
                            "large %s energy (seed %llu), variant %d, %d threads: pqpbo differs "
                            "from qpbo\n",
                            kind == 0 ? "random" : "objects", (unsigned long long)seed, variant,
                            threads[t]);
                ok = ok && same;
            }
            unsetenv("GCUT_QPBO_ACTIVATE_ALL");
            unsetenv("GCUT_QPBO_LATE_MIRROR");
            unsetenv("GCUT_QPBO_SPLIT");
            unsetenv("GCUT_QPBO_ADD_SLICE");
            unsetenv("GCUT_QPBO_ATOMIC_BUILD");
            unsetenv("GCUT_QPBO_PREP");
        }
        if (!ok)
            bad++;
        free(ref);
        free(got);
        gcut_qpbo_free(q);
    }
    test_failures += bad;
    count(bad == 0);
}

static void test_float_and_errors(void) {
    gcut_qpbo *q = NULL;
    CHECK_OK(gcut_qpbo_create(3, 0, &q));
    if (q == NULL)
        return;
    count(gcut_qpbo_set_float_scale(q, 0.0) == GCUT_ERR_INVALID_ARG);
    CHECK_OK(gcut_qpbo_set_float_scale(q, 100.0));
    count(gcut_qpbo_float_scale(q) == 100.0);
    CHECK_OK(gcut_qpbo_add_unary_float(q, 0, 0.5, 1.25));
    CHECK_OK(gcut_qpbo_add_pairwise_float(q, 0, 1, 0.0, 2.0, 2.0, 3.5, NULL));
    count(gcut_qpbo_add_unary_float(q, 1, 1e300, 0) == GCUT_ERR_OVERFLOW);
    count(gcut_qpbo_add_unary(q, 3, 0, 0) == GCUT_ERR_INVALID_ARG);
    count(gcut_qpbo_add_pairwise(q, 1, 1, 0, 0, 0, 0, NULL) == GCUT_ERR_INVALID_ARG);
    count(gcut_qpbo_add_pairwise(q, 0, 2, INT32_MAX, INT32_MAX, INT32_MIN, 0, NULL) ==
          GCUT_ERR_OVERFLOW);
    int32_t bad_block[3] = {0, 5, 0};
    count(gcut_qpbo_set_blocks(q, bad_block, 2) == GCUT_ERR_INVALID_ARG);
    int8_t labels[3] = {0, 2, 0};
    int64_t e = 0;
    count(gcut_qpbo_energy(q, labels, &e) == GCUT_ERR_INVALID_ARG);
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "nope";
    count(gcut_qpbo_solve(q, &opt, labels, NULL) == GCUT_ERR_NOT_FOUND);
    /* 0.5 -> 50, 1.25 -> 125 (x0 = 0 preferred); the pair is (0, 200, 200, 350), so node 0
     * at 0 and node 1 at 0: energy 50. */
    gcut_qpbo_result r;
    CHECK_OK(solve(q, "qpbo", 1, labels, &r));
    count(r.energy == 50 && r.labeled == 3 && labels[0] == 0 && labels[1] == 0);
    count(r.float_scale == 100.0);
    gcut_qpbo_free(q);
    gcut_qpbo_free(NULL);
    /* An empty energy. */
    CHECK_OK(gcut_qpbo_create(0, 0, &q));
    CHECK_OK(solve(q, "pqpbo", 2, labels, &r));
    count(r.energy == 0 && r.labeled == 0 && r.lower_bound == 0);
    gcut_qpbo_free(q);
}

int main(void) {
    /* Every solve also checks that the source tree is the set reachable from the source. */
    setenv("GCUT_QPBO_CHECK_REACH", "1", 1);
    uint64_t seed = test_seed();
    test_rng rng;
    test_rng_init(&rng, seed);
    test_tiny(&rng, 3000);
    test_submodular_vs_maxflow(&rng);
    test_parallel_agrees(&rng);
    test_parallel_large(&rng);
    test_float_and_errors();
    return test_finish("test_qpbo", passed);
}
