/* test_context.c - grid contexts (include/gcut.h, "Grid solver contexts") on the CPU solvers:
 * bk through its warm graph and cpu-pr, the CPU twin of cuda-grid's warm repair. Warm solves
 * against cold ones (Dinic, bk) with the cut certificate over random change sequences; the API's
 * errors; contexts reused across many problems with the host memory back to its start. */
#include "test_context_cases.h"

/* A context with warm 0 solves cold each time and still gives the right answers. */
static void cold_context(test_rng *rng) {
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "cpu-pr";
    options.warm = 0;
    const int64_t shape[2] = {20, 30};
    gcut_grid_context *ctx = NULL;
    CHECK_OK(gcut_grid_context_create(2, shape, 4, &options, &ctx));
    if (ctx == NULL)
        return;
    gcut_grid *grid = gcut_grid_context_grid(ctx);
    uint8_t labels[600];
    int64_t changed[600];
    for (int step = 0; step < 4; step++) {
        apply_change(rng, grid, CHANGE_BOTH, 50, changed);
        solve_and_check(ctx, labels, "cpu-pr context with warm 0");
    }
    gcut_grid_context_info info;
    CHECK_OK(gcut_grid_context_get_info(ctx, &info));
    CHECK_EQ_I64(info.solves, 4);
    CHECK_EQ_I64(info.warm_solves, 0);
    gcut_grid_context_free(ctx);
    checks++;
}

/* Bad arguments give clear errors and leave the context usable. */
static void errors(void) {
    gcut_grid_context *ctx = NULL;
    const int64_t shape[2] = {4, 5};
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "no-such-solver";
    CHECK(gcut_grid_context_create(2, shape, 4, &options, &ctx) == GCUT_ERR_NOT_FOUND);
    CHECK(ctx == NULL);
    options.solver = "cpu-pr";
    CHECK(gcut_grid_context_create(2, shape, 6, &options, &ctx) == GCUT_ERR_INVALID_ARG);
    CHECK(gcut_grid_context_create(2, shape, 4, &options, NULL) == GCUT_ERR_INVALID_ARG);
    CHECK_OK(gcut_grid_context_create(2, shape, 4, &options, &ctx));
    if (ctx == NULL)
        return;
    gcut_grid *grid = gcut_grid_context_grid(ctx);
    gcut_grid_free(grid); /* a context's grid is the context's: this must be a no-op */
    int64_t bad[2] = {3, 20};
    CHECK(gcut_grid_context_mark_nodes(ctx, bad, 2) == GCUT_ERR_INVALID_ARG);
    CHECK(strstr(gcut_last_error(), "entry 1") != NULL);
    CHECK(gcut_grid_context_mark_nodes(ctx, NULL, 3) == GCUT_ERR_INVALID_ARG);
    gcut_grid_terminal_data(grid, GCUT_SOURCE)[7] = -5;
    int64_t flow = 0;
    CHECK(gcut_grid_context_solve(ctx, &flow, NULL, NULL) == GCUT_ERR_INVALID_ARG);
    CHECK(strstr(gcut_last_error(), "index 7") != NULL);
    gcut_grid_terminal_data(grid, GCUT_SOURCE)[7] = 5;
    gcut_grid_terminal_data(grid, GCUT_SINK)[8] = 3;
    gcut_grid_dir_data(grid, 0)[7] = 9;
    CHECK_OK(gcut_grid_context_solve(ctx, &flow, NULL, NULL));
    CHECK_EQ_I64(flow, 3);
    /* A marked solve checks the marked nodes too. */
    gcut_grid_dir_data(grid, 2)[8] = -1;
    int64_t node = 8;
    CHECK_OK(gcut_grid_context_mark_nodes(ctx, &node, 1));
    CHECK(gcut_grid_context_solve(ctx, &flow, NULL, NULL) == GCUT_ERR_INVALID_ARG);
    gcut_grid_dir_data(grid, 2)[8] = 0;
    CHECK_OK(gcut_grid_context_solve(ctx, &flow, NULL, NULL));
    CHECK_EQ_I64(flow, 3);
    int32_t dummy[20] = {0};
    const int32_t *dirs[4] = {dummy, dummy, dummy, dummy};
    CHECK(gcut_grid_context_solve_device(ctx, dummy, dummy, dirs, NULL, NULL, &flow, NULL) ==
          GCUT_ERR_UNSUPPORTED);
    CHECK(gcut_grid_context_solve(NULL, &flow, NULL, NULL) == GCUT_ERR_INVALID_ARG);
    gcut_grid_context_free(ctx);
    gcut_grid_context_free(NULL);
    checks++;
}

/* One context per solver solves many different problems; the host memory gcut holds is back
 * where it started once the contexts are freed (ASan checks the rest). */
static void reuse(test_rng *rng) {
    const uint64_t start = gcut_memory_in_use();
    static const char *solvers[] = {"bk", "cpu-pr"};
    for (int k = 0; k < 2; k++) {
        const int64_t shape[2] = {37, 29};
        gcut_grid_context *ctx = context_for(solvers[k], 2, shape, 8);
        if (ctx == NULL)
            continue;
        gcut_grid *grid = gcut_grid_context_grid(ctx);
        oracle_caps caps = oracle_caps_default();
        uint8_t labels[37 * 29];
        for (int p = 0; p < 30; p++) {
            gcut_grid *random = NULL;
            CHECK_OK(oracle_make_grid(rng, 2, shape, 8, &caps, &random));
            if (random == NULL)
                break;
            CHECK_OK(gcut_grid_set_terminals(grid, gcut_grid_terminal_cdata(random, 0),
                                             gcut_grid_terminal_cdata(random, 1)));
            for (int d = 0; d < 8; d++)
                CHECK_OK(gcut_grid_set_dir(grid, d, gcut_grid_dir_cdata(random, d)));
            gcut_grid_free(random);
            solve_and_check(ctx, labels, solvers[k]);
        }
        gcut_grid_context_free(ctx);
    }
    CHECK_EQ_I64(gcut_memory_in_use(), start);
    checks++;
}

/* Marks over many solves: the context clears them by generations (a memset once per 127), so a
 * node marked again exactly one or more wraps later must still count as changed. 8x8 grids,
 * 400 solves; nodes 0-2 are changed only every 127th solve (at three phases, around the
 * wrap), the others at random, 1-4 changes per solve (a node sometimes listed twice, or both
 * ways). A change that a stale mark hid leaves a wrong flow or cut. */
static void mark_generations(test_rng *rng) {
    static const char *solvers[] = {"bk", "cpu-pr"};
    for (int k = 0; k < 2; k++) {
        const int64_t shape[2] = {8, 8};
        gcut_grid_context *ctx = context_for(solvers[k], 2, shape, 4);
        if (ctx == NULL)
            continue;
        gcut_grid *grid = gcut_grid_context_grid(ctx);
        for (int64_t i = 0; i < 64; i++)
            for (int d = 0; d < 4; d++)
                gcut_grid_dir_data(grid, d)[i] = (int32_t)test_rng_range(rng, 0, 20);
        uint8_t labels[64];
        char what[96];
        solve_and_check(ctx, labels, "generations first");
        for (int step = 0; step < 400; step++) {
            int64_t nodes[8];
            int count = 0;
            const int changes = (int)test_rng_range(rng, 1, 4);
            for (int c = 0; c < changes; c++) {
                const int phase = step % 127;
                const int64_t i = c == 0 && phase == 0     ? 0
                                  : c == 0 && phase == 1   ? 1
                                  : c == 0 && phase == 126 ? 2
                                                           : test_rng_range(rng, 3, 63);
                gcut_grid_terminal_data(grid, GCUT_SOURCE)[i] = (int32_t)test_rng_range(rng, 0, 40);
                gcut_grid_terminal_data(grid, GCUT_SINK)[i] = (int32_t)test_rng_range(rng, 0, 40);
                nodes[count++] = i;
                if (test_rng_range(rng, 0, 3) == 0)
                    nodes[count++] = i; /* listed twice */
            }
            CHECK_OK(gcut_grid_context_mark_terminals(ctx, nodes, count));
            if (step % 7 == 3)
                CHECK_OK(gcut_grid_context_mark_nodes(ctx, nodes, 1)); /* both ways */
            snprintf(what, sizeof what, "generations, %s, step %d", solvers[k], step);
            solve_and_check(ctx, labels, what);
        }
        gcut_grid_context_free(ctx);
    }
}

/* A segmentation energy with 1% of its terminal capacities changed, the benchmark's warm
 * case, on both CPU solvers. */
static void synth_terminal_changes(test_rng *rng) {
    static const char *solvers[] = {"bk", "cpu-pr"};
    for (int k = 0; k < 2; k++) {
        gcut_grid *synth = NULL;
        CHECK_OK(gcut_synth_grid(160, 120, 1, 7, GCUT_SYNTH_HARD, 4, &synth));
        if (synth == NULL)
            return;
        const int64_t shape[2] = {120, 160};
        gcut_grid_context *ctx = context_for(solvers[k], 2, shape, 4);
        if (ctx != NULL) {
            gcut_grid *grid = gcut_grid_context_grid(ctx);
            CHECK_OK(gcut_grid_set_terminals(grid, gcut_grid_terminal_cdata(synth, 0),
                                             gcut_grid_terminal_cdata(synth, 1)));
            for (int d = 0; d < 4; d++)
                CHECK_OK(gcut_grid_set_dir(grid, d, gcut_grid_dir_cdata(synth, d)));
            uint8_t *labels = malloc(160 * 120);
            int64_t *changed = malloc(160 * 120 * sizeof *changed);
            if (labels != NULL && changed != NULL) {
                solve_and_check(ctx, labels, "synth first");
                for (int step = 0; step < 6; step++) {
                    int64_t count = apply_change(rng, grid, CHANGE_TERMINALS, 1, changed);
                    if (step & 1)
                        CHECK_OK(gcut_grid_context_mark_nodes(ctx, changed, count));
                    solve_and_check(ctx, labels, "synth 1% terminals");
                }
                gcut_grid_context_info info;
                CHECK_OK(gcut_grid_context_get_info(ctx, &info));
                CHECK_EQ_I64(info.warm_solves, 6);
            }
            free(labels);
            free(changed);
        }
        gcut_grid_context_free(ctx);
        gcut_grid_free(synth);
    }
}

/* gcut_grid_context_solve_view() on the CPU solvers: labels in the context's own buffer,
 * certified and equal to a caller's-buffer solve of the same problem on a twin context; NULL
 * arguments refused. */
static void view_labels(test_rng *rng, const char *solver) {
    const int64_t shape[2] = {17, 23};
    gcut_grid_context *ctx = context_for(solver, 2, shape, 8),
                      *twin = context_for(solver, 2, shape, 8);
    if (ctx == NULL || twin == NULL)
        goto done;
    gcut_grid *grid = gcut_grid_context_grid(ctx), *tgrid = gcut_grid_context_grid(twin);
    const uint8_t *view = NULL;
    int64_t flow = -1, tflow = -2, changed[17 * 23];
    uint8_t labels[17 * 23];
    CHECK(gcut_grid_context_solve_view(ctx, &flow, NULL, NULL) == GCUT_ERR_INVALID_ARG);
    CHECK(gcut_grid_context_solve_view(NULL, &flow, &view, NULL) == GCUT_ERR_INVALID_ARG);
    for (int step = 0; step < 5; step++) {
        apply_change(rng, grid, step == 0 ? CHANGE_BOTH : CHANGE_TERMINALS, step == 0 ? 100 : 20,
                     changed);
        CHECK_OK(gcut_grid_set_terminals(tgrid, gcut_grid_terminal_cdata(grid, GCUT_SOURCE),
                                         gcut_grid_terminal_cdata(grid, GCUT_SINK)));
        for (int d = 0; d < gcut_grid_num_dirs(grid); d++)
            CHECK_OK(gcut_grid_set_dir(tgrid, d, gcut_grid_dir_cdata(grid, d)));
        CHECK_OK(gcut_grid_context_solve_view(ctx, &flow, &view, NULL));
        CHECK_OK(gcut_grid_context_solve(twin, &tflow, labels, NULL));
        CHECK_EQ_I64(flow, tflow);
        CHECK_EQ_I64(flow, cold_reference(grid));
        CHECK(view != NULL);
        if (view != NULL) {
            CHECK_OK(gcut_grid_verify(grid, view, flow, NULL));
            CHECK(memcmp(view, labels, sizeof labels) == 0);
        }
    }
    checks++;
done:
    gcut_grid_context_free(ctx);
    gcut_grid_context_free(twin);
}

/* The promise of terminal marks, on every CPU solver: with terminal marks alone only the listed
 * terminals are read, so an arc changed on a listed node is not seen (the solve is exact for
 * the old arc), and a later whole mark of the node repairs it from the context's snapshot. A
 * 2x2 grid: node 0 (source 10) feeds node 1 (sink 10) through its one arc within the row. */
static void terminal_promise(void) {
    static const char *solvers[] = {"bk", "grid-bk", "cpu-pr"};
    for (int k = 0; k < 3; k++) {
        const int64_t shape[2] = {2, 2};
        gcut_grid_context *ctx = context_for(solvers[k], 2, shape, 4);
        if (ctx == NULL)
            continue;
        gcut_grid *grid = gcut_grid_context_grid(ctx);
        const int d01 = 0; /* direction 0 is (0, +1): node 0 to node 1 */
        int32_t *src = gcut_grid_terminal_data(grid, GCUT_SOURCE);
        src[0] = 10;
        gcut_grid_terminal_data(grid, GCUT_SINK)[1] = 10;
        gcut_grid_dir_data(grid, d01)[0] = 3;
        uint8_t labels[4];
        int64_t flow = -1, node = 0;
        CHECK_OK(gcut_grid_context_solve(ctx, &flow, labels, NULL));
        CHECK_EQ_I64(flow, 3);
        src[0] = 9;
        gcut_grid_dir_data(grid, d01)[0] = 7; /* broken promise: not seen */
        CHECK_OK(gcut_grid_context_mark_terminals(ctx, &node, 1));
        CHECK_OK(gcut_grid_context_solve(ctx, &flow, labels, NULL));
        CHECK_EQ_I64(flow, 3);
        gcut_grid_context_info info;
        CHECK_OK(gcut_grid_context_get_info(ctx, &info));
        CHECK_EQ_I64(info.warm_solves, 1);
        CHECK_OK(gcut_grid_context_mark_nodes(ctx, &node, 1)); /* now the arc is read */
        CHECK_OK(gcut_grid_context_solve(ctx, &flow, labels, NULL));
        CHECK_EQ_I64(flow, 7);
        CHECK_OK(gcut_grid_verify(grid, labels, flow, NULL));
        src[0] = 5; /* terminals and a whole mark together: the arc is read again */
        gcut_grid_dir_data(grid, d01)[0] = 2;
        CHECK_OK(gcut_grid_context_mark_terminals(ctx, &node, 1));
        CHECK_OK(gcut_grid_context_mark_nodes(ctx, &node, 1));
        CHECK_OK(gcut_grid_context_solve(ctx, &flow, labels, NULL));
        CHECK_EQ_I64(flow, 2);
        CHECK_OK(gcut_grid_verify(grid, labels, flow, NULL));
        CHECK_OK(gcut_grid_context_get_info(ctx, &info));
        CHECK_EQ_I64(info.warm_solves, 3);
        gcut_grid_context_free(ctx);
        checks++;
    }
}

int main(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed());
    errors();
    cold_context(&rng);
    reuse(&rng);
    synth_terminal_changes(&rng);
    mark_generations(&rng);
    terminal_promise();
    view_labels(&rng, "cpu-pr");
    view_labels(&rng, "bk");
    run_all_sequences(&rng, "cpu-pr", 6, 1);
    run_all_sequences(&rng, "bk", 6, 1);
    return test_finish("test_context", checks);
}
