/* test_context_cases.h - the warm re-solve cases shared by test_context.c (bk, cpu-pr) and
 * test_cuda_context.c (cuda-grid): random sequences of capacity increases and decreases on
 * terminals and arcs, label flips and huge values, each warm solve against a cold solve of the
 * same problem by another solver (Dinic on small grids) and the cut certificate. */
#ifndef GCUT_TEST_CONTEXT_CASES_H
#define GCUT_TEST_CONTEXT_CASES_H

#include "util_common.h"
#include "util_oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks;

/* The reference: Dinic on small grids, bk cold (a fresh solve of a copy) on larger ones. */
static int64_t cold_reference(const gcut_grid *grid) {
    if (gcut_grid_num_nodes(grid) <= 4000)
        return oracle_dinic_grid(grid);
    int64_t shape[3];
    gcut_grid_shape(grid, shape);
    gcut_grid *copy = NULL;
    if (gcut_grid_create(gcut_grid_ndim(grid), shape, gcut_grid_connectivity(grid), &copy) !=
        GCUT_OK)
        return -1;
    size_t bytes = (size_t)gcut_grid_num_nodes(grid) * sizeof(int32_t);
    for (int t = 0; t < 2; t++)
        memcpy(gcut_grid_terminal_data(copy, t), gcut_grid_terminal_cdata(grid, t), bytes);
    for (int d = 0; d < gcut_grid_num_dirs(grid); d++)
        memcpy(gcut_grid_dir_data(copy, d), gcut_grid_dir_cdata(grid, d), bytes);
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "bk";
    options.warm = 0;
    int64_t flow = -1;
    if (gcut_grid_solve(copy, &options, &flow, NULL, NULL) != GCUT_OK)
        flow = -1;
    gcut_grid_free(copy);
    return flow;
}

/* Solve the context, compare with the reference and certify the labels on its grid. */
static void solve_and_check(gcut_grid_context *ctx, uint8_t *labels, const char *what) {
    gcut_grid *grid = gcut_grid_context_grid(ctx);
    int64_t expected = cold_reference(grid);
    int64_t flow = -1;
    gcut_stats stats;
    /* A solve writes every label: nothing of the last solve's may be left for it. */
    memset(labels, 0xA5, (size_t)gcut_grid_num_nodes(grid));
    gcut_status st = gcut_grid_context_solve(ctx, &flow, labels, &stats);
    CHECK_OK(st);
    if (st != GCUT_OK || expected < 0) {
        fprintf(stderr, "  in %s\n", what);
        test_failures += expected < 0;
        return;
    }
    int before = test_failures;
    CHECK_EQ_I64(flow, expected);
    CHECK_EQ_I64(stats.flow, expected);
    CHECK_OK(gcut_grid_verify(grid, labels, flow, NULL));
    if (test_failures != before)
        fprintf(stderr, "  in %s\n", what);
    else
        checks++;
}

typedef enum {
    CHANGE_TERMINALS,
    CHANGE_ARCS,
    CHANGE_BOTH,
    CHANGE_FLIP,
    CHANGE_HUGE,
    CHANGE_NONE,
    NUM_CHANGES
} change_kind;

static const char *change_names[NUM_CHANGES] = {"terminals", "arcs", "both",
                                                "flip",      "huge", "none"};

static int32_t nudge(test_rng *rng, int32_t v, int32_t max) {
    int64_t r = v + test_rng_range(rng, -max, max);
    return (int32_t)(r < 0 ? 0 : r > INT32_MAX ? INT32_MAX : r);
}

/* Change the grid as kind says at about percent% of the nodes; the changed nodes go to
 * changed[] (no duplicates), their count is returned. */
static int64_t apply_change(test_rng *rng, gcut_grid *grid, change_kind kind, int percent,
                            int64_t *changed) {
    const int64_t n = gcut_grid_num_nodes(grid);
    const int dirs = gcut_grid_num_dirs(grid);
    int32_t *source = gcut_grid_terminal_data(grid, GCUT_SOURCE);
    int32_t *sink = gcut_grid_terminal_data(grid, GCUT_SINK);
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        if (kind == CHANGE_NONE)
            break;
        if (kind != CHANGE_FLIP && test_rng_range(rng, 0, 99) >= percent)
            continue;
        if (kind == CHANGE_FLIP && test_rng_range(rng, 0, 99) >= 90)
            continue;
        changed[count++] = i;
        if (kind == CHANGE_FLIP) {
            int32_t t = source[i];
            source[i] = sink[i];
            sink[i] = t;
            continue;
        }
        if (kind == CHANGE_HUGE) {
            source[i] = (int32_t)test_rng_range(rng, INT32_MAX - 1000, INT32_MAX);
            sink[i] = (int32_t)test_rng_range(rng, INT32_MAX - 1000, INT32_MAX);
            for (int d = 0; d < dirs; d++)
                gcut_grid_dir_data(grid, d)[i] =
                    (int32_t)test_rng_range(rng, INT32_MAX - 1000, INT32_MAX);
            continue;
        }
        if (kind == CHANGE_TERMINALS || kind == CHANGE_BOTH) {
            source[i] = nudge(rng, source[i], 60);
            sink[i] = nudge(rng, sink[i], 60);
        }
        if (kind == CHANGE_ARCS || kind == CHANGE_BOTH)
            for (int d = 0; d < dirs; d++) {
                int32_t *cap = gcut_grid_dir_data(grid, d);
                cap[i] = test_rng_range(rng, 0, 3) == 0 ? 0 : nudge(rng, cap[i], 80);
            }
    }
    return count;
}

/* A context of the named solver, every other option at its default (create copies the options);
 * NULL, counted as a failure, when it cannot be made. */
static gcut_grid_context *context_for(const char *solver, int ndim, const int64_t *shape,
                                      int conn) {
    gcut_options options;
    gcut_options_init(&options);
    options.solver = solver;
    gcut_grid_context *ctx = NULL;
    CHECK_OK(gcut_grid_context_create(ndim, shape, conn, &options, &ctx));
    return ctx;
}

/* One context through a random sequence of steps: random grid, then changes of every kind,
 * told to the context by marks on odd steps and found by comparison on even ones; every
 * solve checked; the warm ones counted through gcut_grid_context_get_info(). */
static void run_sequence(test_rng *rng, const char *solver, int ndim, const int64_t *shape,
                         int conn, int steps) {
    gcut_grid_context *ctx = context_for(solver, ndim, shape, conn);
    if (ctx == NULL)
        return;
    gcut_grid *grid = gcut_grid_context_grid(ctx);
    const int64_t n = gcut_grid_num_nodes(grid);
    oracle_caps caps = oracle_caps_default();
    gcut_grid *random = NULL;
    CHECK_OK(oracle_make_grid(rng, ndim, shape, conn, &caps, &random));
    uint8_t *labels = malloc((size_t)n);
    int64_t *changed = malloc((size_t)n * sizeof *changed);
    if (random == NULL || labels == NULL || changed == NULL) {
        test_failures++;
        goto done;
    }
    CHECK_OK(gcut_grid_set_terminals(grid, gcut_grid_terminal_cdata(random, GCUT_SOURCE),
                                     gcut_grid_terminal_cdata(random, GCUT_SINK)));
    for (int d = 0; d < gcut_grid_num_dirs(grid); d++)
        CHECK_OK(gcut_grid_set_dir(grid, d, gcut_grid_dir_cdata(random, d)));
    char what[160];
    snprintf(what, sizeof what, "%s %dD conn %d n %lld first solve", solver, ndim, conn,
             (long long)n);
    solve_and_check(ctx, labels, what);
    int64_t warm_expected = 0;
    for (int step = 0; step < steps; step++) {
        change_kind kind = (change_kind)test_rng_range(rng, 0, NUM_CHANGES - 1);
        if (kind == CHANGE_HUGE && test_rng_range(rng, 0, 2) != 0)
            kind = CHANGE_BOTH; /* huge values are rarer: they end in a cold fallback */
        int percent = (int)test_rng_range(rng, 1, 30);
        int64_t count = apply_change(rng, grid, kind, percent, changed);
        const int marks = step & 1;
        /* Every other marked step through terminal marks: alone when only terminals changed,
         * else followed by whole-node marks of the same nodes (which then count as whole). */
        const int terminal_kind =
            kind == CHANGE_TERMINALS || kind == CHANGE_FLIP || kind == CHANGE_NONE;
        if (marks && (step & 2) != 0) {
            CHECK_OK(gcut_grid_context_mark_terminals(ctx, changed, count));
            if (!terminal_kind)
                CHECK_OK(gcut_grid_context_mark_nodes(ctx, changed, count));
        } else if (marks) {
            CHECK_OK(gcut_grid_context_mark_nodes(ctx, changed, count));
        }
        gcut_grid_context_info before, after;
        CHECK_OK(gcut_grid_context_get_info(ctx, &before));
        snprintf(what, sizeof what, "%s %dD conn %d n %lld step %d: %s at %d%% (%lld nodes), %s",
                 solver, ndim, conn, (long long)n, step, change_names[kind], percent,
                 (long long)count,
                 !marks                             ? "compared"
                 : (step & 2) != 0 && terminal_kind ? "terminals marked"
                 : (step & 2) != 0                  ? "terminals and nodes marked"
                                                    : "marked");
        solve_and_check(ctx, labels, what);
        CHECK_OK(gcut_grid_context_get_info(ctx, &after));
        CHECK_EQ_I64(after.solves, before.solves + 1);
        const int64_t warm_now = after.warm_solves - before.warm_solves;
        const int64_t fell_back = after.cold_fallbacks - before.cold_fallbacks;
        CHECK_EQ_I64(warm_now + fell_back, 1);
        if (kind != CHANGE_HUGE)
            CHECK_EQ_I64(fell_back, 0);
        /* bk counts a node whose neighbour changed the pair between them too. */
        if (warm_now == 1 && strcmp(solver, "bk") != 0)
            CHECK(after.changed_nodes <= count);
        if (warm_now == 1 && kind == CHANGE_NONE && !marks)
            CHECK_EQ_I64(after.changed_nodes, 0);
        warm_expected += warm_now;
    }
    gcut_grid_context_info info;
    CHECK_OK(gcut_grid_context_get_info(ctx, &info));
    CHECK_EQ_I64(info.solves, steps + 1);
    CHECK_EQ_I64(info.warm_solves, warm_expected);
    CHECK(strcmp(info.solver, solver) == 0);
done:
    gcut_grid_free(random);
    free(labels);
    free(changed);
    gcut_grid_context_free(ctx);
}

/* Every connectivity, small shapes against Dinic and a larger one against bk. */
static void run_all_sequences(test_rng *rng, const char *solver, int steps, int large) {
    static const int64_t s2[][2] = {{1, 1}, {1, 40}, {9, 33}, {31, 47}, {40, 40}};
    static const int64_t s3[][3] = {{1, 1, 1}, {5, 9, 17}, {8, 8, 8}, {12, 10, 18}};
    for (size_t k = 0; k < sizeof s2 / sizeof s2[0]; k++)
        for (int conn = 4; conn <= 8; conn += 4)
            run_sequence(rng, solver, 2, s2[k], conn, steps);
    for (size_t k = 0; k < sizeof s3 / sizeof s3[0]; k++) {
        run_sequence(rng, solver, 3, s3[k], 6, steps);
        run_sequence(rng, solver, 3, s3[k], 26, steps);
    }
    if (large) {
        const int64_t big2[2] = {120, 160}, big3[3] = {16, 20, 24};
        run_sequence(rng, solver, 2, big2, 4, steps);
        run_sequence(rng, solver, 2, big2, 8, steps);
        run_sequence(rng, solver, 3, big3, 6, steps);
    }
}

#endif /* GCUT_TEST_CONTEXT_CASES_H */
