/* general_gen.h - general-graph benchmark instances built in memory: the DIMACS challenge
 * families GENRMF (Goldfarb & Grigoriadis 1988) and Washington RLG (Anderson's washington.c,
 * random level graphs, wide and long), and uniform random graphs. Written from the published
 * definitions (docs/CUDA-GENERAL.md, "Benchmark families"); shared by bench/gen_genrmf.c,
 * bench/gen_washington.c (DIMACS files) and bench/general_bench.c (timings). Header-only. */
#ifndef GCUT_BENCH_GENERAL_GEN_H
#define GCUT_BENCH_GENERAL_GEN_H

#include "gcut.h"

#include <stdint.h>
#include <stdlib.h>

/* splitmix64: deterministic for a seed on every platform. */
static inline uint64_t gen_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
/* Uniform in [lo, hi]. */
static inline int64_t gen_range(uint64_t *s, int64_t lo, int64_t hi) {
    return lo + (int64_t)(gen_next(s) % (uint64_t)(hi - lo + 1));
}

/* A terminal capacity of any size as a sum of int32 add_tweights calls. */
static inline gcut_status gen_tweights(gcut_graph *g, int64_t node, int64_t source, int64_t sink) {
    while (source > 0 || sink > 0) {
        int32_t a = source > INT32_MAX ? INT32_MAX : (int32_t)source;
        int32_t b = sink > INT32_MAX ? INT32_MAX : (int32_t)sink;
        gcut_status st = gcut_graph_add_tweights(g, node, a, b);
        if (st != GCUT_OK)
            return st;
        source -= a;
        sink -= b;
    }
    return GCUT_OK;
}

/* GENRMF: b frames of a x a nodes. In a frame, each node is joined to its 4 grid neighbours
 * in both directions with capacity c2 * a * a; node v of frame k has one arc to node perm_k(v)
 * of frame k + 1 (perm_k a random permutation) with capacity uniform in [c1, c2]. The source
 * is node 0 of the first frame, the sink the last node of the last frame; here they are graph
 * nodes tied to the terminals by arcs larger than everything they can pass (so the flow is the
 * family's s-t flow). Nodes a*a*b, arcs about 5 a*a*b. */
static inline gcut_status gen_genrmf(int64_t a, int64_t b, int32_t c1, int32_t c2, uint64_t seed,
                                     gcut_graph **out) {
    *out = NULL;
    if (a < 1 || b < 1 || c1 < 0 || c2 < c1 || (int64_t)c2 * a * a > INT32_MAX)
        return GCUT_ERR_INVALID_ARG;
    const int64_t frame = a * a, n = frame * b;
    gcut_graph *g = NULL;
    gcut_status st = gcut_graph_create(n, 2 * n + frame * (b - 1), &g);
    if (st != GCUT_OK)
        return st;
    int64_t *perm = malloc((size_t)frame * sizeof *perm);
    if (perm == NULL) {
        gcut_graph_free(g);
        return GCUT_ERR_NOMEM;
    }
    uint64_t s = seed;
    const int32_t in_cap = (int32_t)(c2 * a * a);
    for (int64_t k = 0; k < b && st == GCUT_OK; k++) {
        for (int64_t y = 0; y < a && st == GCUT_OK; y++)
            for (int64_t x = 0; x < a && st == GCUT_OK; x++) {
                int64_t v = k * frame + y * a + x;
                if (x + 1 < a)
                    st = gcut_graph_add_edge(g, v, v + 1, in_cap, in_cap);
                if (st == GCUT_OK && y + 1 < a)
                    st = gcut_graph_add_edge(g, v, v + a, in_cap, in_cap);
            }
        if (k + 1 == b)
            break;
        for (int64_t i = 0; i < frame; i++)
            perm[i] = i;
        for (int64_t i = frame - 1; i > 0; i--) {
            int64_t j = gen_range(&s, 0, i), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (int64_t i = 0; i < frame && st == GCUT_OK; i++)
            st = gcut_graph_add_edge(g, k * frame + i, (k + 1) * frame + perm[i],
                                     (int32_t)gen_range(&s, c1, c2), 0);
    }
    free(perm);
    const int64_t big = 4 * (int64_t)in_cap + c2 + 1;
    if (st == GCUT_OK)
        st = gen_tweights(g, 0, big, 0);
    if (st == GCUT_OK)
        st = gen_tweights(g, n - 1, 0, big);
    if (st != GCUT_OK) {
        gcut_graph_free(g);
        return st;
    }
    *out = g;
    return GCUT_OK;
}

/* Washington RLG (random level graph): `levels` levels of `rows` nodes; every node of level
 * i < levels - 1 has 3 arcs to nodes of level i + 1 chosen uniformly, capacity uniform in
 * [1, max_cap]; the source feeds every node of the first level and the last level drains to
 * the sink, each with capacity 3 * max_cap (no tighter than the node's own arcs). Wide: many
 * rows, few levels; long: few rows, many levels. */
static inline gcut_status gen_washington_rlg(int64_t rows, int64_t levels, int32_t max_cap,
                                             uint64_t seed, gcut_graph **out) {
    *out = NULL;
    if (rows < 1 || levels < 2 || max_cap < 1 || max_cap > INT32_MAX / 3)
        return GCUT_ERR_INVALID_ARG;
    const int64_t n = rows * levels;
    gcut_graph *g = NULL;
    gcut_status st = gcut_graph_create(n, 3 * rows * (levels - 1), &g);
    if (st != GCUT_OK)
        return st;
    uint64_t s = seed;
    for (int64_t l = 0; l + 1 < levels && st == GCUT_OK; l++)
        for (int64_t r = 0; r < rows && st == GCUT_OK; r++)
            for (int k = 0; k < 3 && st == GCUT_OK; k++)
                st = gcut_graph_add_edge(g, l * rows + r,
                                         (l + 1) * rows + gen_range(&s, 0, rows - 1),
                                         (int32_t)gen_range(&s, 1, max_cap), 0);
    for (int64_t r = 0; r < rows && st == GCUT_OK; r++) {
        st = gcut_graph_add_tweights(g, r, 3 * max_cap, 0);
        if (st == GCUT_OK)
            st = gcut_graph_add_tweights(g, (levels - 1) * rows + r, 0, 3 * max_cap);
    }
    if (st != GCUT_OK) {
        gcut_graph_free(g);
        return st;
    }
    *out = g;
    return GCUT_OK;
}

/* Uniform random graph: m edges between uniform random distinct endpoints, both capacities
 * uniform in [1, 100]; 10% of the nodes get a source capacity, 10% a sink capacity, uniform in
 * [1, 1000] (a sparse-terminal flow problem, not a segmentation). */
static inline gcut_status gen_random(int64_t n, int64_t m, uint64_t seed, gcut_graph **out) {
    *out = NULL;
    if (n < 2 || m < 0)
        return GCUT_ERR_INVALID_ARG;
    gcut_graph *g = NULL;
    gcut_status st = gcut_graph_create(n, m, &g);
    if (st != GCUT_OK)
        return st;
    uint64_t s = seed;
    for (int64_t e = 0; e < m && st == GCUT_OK; e++) {
        int64_t u = gen_range(&s, 0, n - 1), v = gen_range(&s, 0, n - 2);
        v += v >= u;
        st = gcut_graph_add_edge(g, u, v, (int32_t)gen_range(&s, 1, 100),
                                 (int32_t)gen_range(&s, 1, 100));
    }
    for (int64_t i = 0; i < n && st == GCUT_OK; i++) {
        uint64_t r = gen_next(&s) % 10;
        if (r == 0)
            st = gcut_graph_add_tweights(g, i, (int32_t)gen_range(&s, 1, 1000), 0);
        else if (r == 1)
            st = gcut_graph_add_tweights(g, i, 0, (int32_t)gen_range(&s, 1, 1000));
    }
    if (st != GCUT_OK) {
        gcut_graph_free(g);
        return st;
    }
    *out = g;
    return GCUT_OK;
}

#endif /* GCUT_BENCH_GENERAL_GEN_H */
