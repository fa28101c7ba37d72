/* test_cuda_context.c - cuda-grid contexts (include/gcut.h, "Grid solver contexts"): warm
 * re-solves on the device against cold answers (Dinic, bk) with the cut certificate over random
 * change sequences; the device-array entry against the host entry; contexts reused across many
 * problems with the device memory in use back to its start; the marked path with the gather on
 * the host as well as on the device (GCUT_CUDAGRID_GATHER); terminal marks
 * (gcut_grid_context_mark_terminals). Skips (exit 77) without a GPU. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_context_cases.h"

#ifdef GCUT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef GCUT_HAVE_CUDA
/* Device copies of a grid's arrays. */
typedef struct device_grid {
    int32_t *source, *sink, *dirs[26];
    int num_dirs;
} device_grid;

static int device_grid_upload(device_grid *dg, const gcut_grid *grid) {
    const size_t bytes = (size_t)gcut_grid_num_nodes(grid) * sizeof(int32_t);
    dg->num_dirs = gcut_grid_num_dirs(grid);
    int ok = cudaMalloc((void **)&dg->source, bytes) == cudaSuccess &&
             cudaMalloc((void **)&dg->sink, bytes) == cudaSuccess;
    for (int d = 0; d < dg->num_dirs && ok; d++)
        ok = cudaMalloc((void **)&dg->dirs[d], bytes) == cudaSuccess;
    ok = ok &&
         cudaMemcpy(dg->source, gcut_grid_terminal_cdata(grid, 0), bytes, cudaMemcpyHostToDevice) ==
             cudaSuccess &&
         cudaMemcpy(dg->sink, gcut_grid_terminal_cdata(grid, 1), bytes, cudaMemcpyHostToDevice) ==
             cudaSuccess;
    for (int d = 0; d < dg->num_dirs && ok; d++)
        ok = cudaMemcpy(dg->dirs[d], gcut_grid_dir_cdata(grid, d), bytes, cudaMemcpyHostToDevice) ==
             cudaSuccess;
    return ok;
}

static void device_grid_free(device_grid *dg) {
    cudaFree(dg->source);
    cudaFree(dg->sink);
    for (int d = 0; d < dg->num_dirs; d++)
        cudaFree(dg->dirs[d]);
}

/* The device entry on one context, the host entry on another, same problems: equal flows,
 * labels that certify, and warm solves on both after changes. */
static void device_entry(test_rng *rng, int ndim, const int64_t *shape, int conn) {
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "cuda-grid";
    gcut_grid_context *host = NULL, *dev = NULL;
    CHECK_OK(gcut_grid_context_create(ndim, shape, conn, &options, &host));
    CHECK_OK(gcut_grid_context_create(ndim, shape, conn, &options, &dev));
    gcut_grid *random = NULL;
    oracle_caps caps = oracle_caps_default();
    CHECK_OK(oracle_make_grid(rng, ndim, shape, conn, &caps, &random));
    if (host == NULL || dev == NULL || random == NULL) {
        test_failures++;
        goto done;
    }
    gcut_grid *grid = gcut_grid_context_grid(host);
    const int64_t n = gcut_grid_num_nodes(grid);
    uint8_t *labels = malloc((size_t)n), *dev_labels_host = malloc((size_t)n);
    int64_t *changed = malloc((size_t)n * sizeof *changed);
    uint8_t *labels_dev = NULL;
    cudaStream_t stream = NULL;
    CHECK(cudaStreamCreate(&stream) == cudaSuccess);
    CHECK(cudaMalloc((void **)&labels_dev, (size_t)n) == cudaSuccess);
    CHECK_OK(gcut_grid_set_terminals(grid, gcut_grid_terminal_cdata(random, 0),
                                     gcut_grid_terminal_cdata(random, 1)));
    for (int d = 0; d < conn; d++)
        CHECK_OK(gcut_grid_set_dir(grid, d, gcut_grid_dir_cdata(random, d)));
    for (int step = 0; step < 5 && labels && dev_labels_host && changed && labels_dev; step++) {
        if (step > 0)
            apply_change(rng, grid, step == 3 ? CHANGE_FLIP : CHANGE_BOTH, 5, changed);
        device_grid dg;
        memset(&dg, 0, sizeof dg);
        if (!device_grid_upload(&dg, grid)) {
            test_failures++;
            device_grid_free(&dg);
            break;
        }
        char what[96];
        snprintf(what, sizeof what, "device entry %dD conn %d step %d (host entry)", ndim, conn,
                 step);
        solve_and_check(host, labels, what);
        int64_t host_flow = -1, dev_flow = -2;
        gcut_grid_verify(grid, labels, 0, &host_flow); /* the host entry's cut value */
        gcut_stats stats;
        CHECK_OK(gcut_grid_context_solve_device(dev, dg.source, dg.sink,
                                                (const int32_t *const *)dg.dirs, labels_dev, stream,
                                                &dev_flow, &stats));
        CHECK(cudaMemcpyAsync(dev_labels_host, labels_dev, (size_t)n, cudaMemcpyDeviceToHost,
                              stream) == cudaSuccess);
        CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
        CHECK_EQ_I64(dev_flow, host_flow);
        CHECK_OK(gcut_grid_verify(grid, dev_labels_host, dev_flow, NULL));
        checks++;
        if (step == 4) {
            /* A negative capacity on the device is refused and named. */
            int32_t minus = -4;
            CHECK(cudaMemcpy(dg.dirs[1] + n / 2, &minus, 4, cudaMemcpyHostToDevice) == cudaSuccess);
            CHECK(gcut_grid_context_solve_device(dev, dg.source, dg.sink,
                                                 (const int32_t *const *)dg.dirs, labels_dev,
                                                 stream, &dev_flow, NULL) == GCUT_ERR_INVALID_ARG);
            CHECK(strstr(gcut_last_error(), "direction 1") != NULL);
        }
        device_grid_free(&dg);
    }
    gcut_grid_context_info info;
    CHECK_OK(gcut_grid_context_get_info(dev, &info));
    CHECK_EQ_I64(info.solves, 5);
    CHECK_EQ_I64(info.warm_solves, 4);
    cudaFree(labels_dev);
    if (stream)
        cudaStreamDestroy(stream);
    free(labels);
    free(dev_labels_host);
    free(changed);
done:
    gcut_grid_free(random);
    gcut_grid_context_free(host);
    gcut_grid_context_free(dev);
}

/* Negative capacities are refused and named, on the marked path (checked while gathering) and
 * on a full upload (checked on the device); the context solves again once they are fixed. */
static void negative_values(void) {
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "cuda-grid";
    const int64_t shape[2] = {4, 5};
    gcut_grid_context *ctx = NULL;
    CHECK_OK(gcut_grid_context_create(2, shape, 4, &options, &ctx));
    if (ctx == NULL)
        return;
    gcut_grid *grid = gcut_grid_context_grid(ctx);
    int64_t flow = -1;
    gcut_grid_terminal_data(grid, GCUT_SOURCE)[7] = 5;
    gcut_grid_terminal_data(grid, GCUT_SINK)[8] = 3;
    gcut_grid_dir_data(grid, 0)[7] = 9;
    CHECK_OK(gcut_grid_context_solve(ctx, &flow, NULL, NULL));
    CHECK_EQ_I64(flow, 3);
    gcut_grid_dir_data(grid, 2)[8] = -1;
    int64_t node = 8;
    CHECK_OK(gcut_grid_context_mark_nodes(ctx, &node, 1));
    CHECK(gcut_grid_context_solve(ctx, &flow, NULL, NULL) == GCUT_ERR_INVALID_ARG);
    CHECK(strstr(gcut_last_error(), "direction 2 capacity at index 8") != NULL);
    gcut_grid_dir_data(grid, 2)[8] = 0;
    /* A terminal mark: only the terminals are read, and a negative one is named. */
    node = 20;
    CHECK(gcut_grid_context_mark_terminals(ctx, &node, 1) == GCUT_ERR_INVALID_ARG);
    CHECK(strstr(gcut_last_error(), "gcut_grid_context_mark_terminals: entry 0 is node 20") !=
          NULL);
    CHECK_OK(gcut_grid_context_solve(ctx, &flow, NULL, NULL));
    CHECK_EQ_I64(flow, 3);
    node = 9;
    gcut_grid_terminal_data(grid, GCUT_SOURCE)[9] = -4;
    CHECK_OK(gcut_grid_context_mark_terminals(ctx, &node, 1));
    CHECK(gcut_grid_context_solve(ctx, &flow, NULL, NULL) == GCUT_ERR_INVALID_ARG);
    CHECK(strstr(gcut_last_error(), "source capacity at index 9") != NULL);
    gcut_grid_terminal_data(grid, GCUT_SOURCE)[9] = 0;
    gcut_grid_terminal_data(grid, GCUT_SINK)[11] = -7;
    CHECK(gcut_grid_context_solve(ctx, &flow, NULL, NULL) == GCUT_ERR_INVALID_ARG);
    CHECK(strstr(gcut_last_error(), "sink capacity at index 11") != NULL);
    gcut_grid_terminal_data(grid, GCUT_SINK)[11] = 0;
    CHECK_OK(gcut_grid_context_solve(ctx, &flow, NULL, NULL));
    CHECK_EQ_I64(flow, 3);
    gcut_grid_context_free(ctx);
    checks++;
}

/* A repair whose deficit would put a sink residual past INT32_MAX starts cold, for terminal
 * marks (the deficit settled in the repair kernel) and node marks (deficit_kernel): node 0
 * sends INT32_MAX over its arc to node 1's sink, then loses its source and gains a sink of
 * INT32_MAX, so its deficit plus its new sink residual is 2 * INT32_MAX. Flow then 0. */
static void deficit_overflow(int terminal_marks) {
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "cuda-grid";
    const int64_t shape[2] = {2, 2};
    gcut_grid_context *ctx = NULL;
    CHECK_OK(gcut_grid_context_create(2, shape, 4, &options, &ctx));
    if (ctx == NULL)
        return;
    gcut_grid *grid = gcut_grid_context_grid(ctx);
    int64_t flow = -1, node = 0;
    gcut_grid_terminal_data(grid, GCUT_SOURCE)[0] = INT32_MAX;
    gcut_grid_dir_data(grid, 0)[0] = INT32_MAX;
    gcut_grid_terminal_data(grid, GCUT_SINK)[1] = INT32_MAX;
    CHECK_OK(gcut_grid_context_solve(ctx, &flow, NULL, NULL));
    CHECK_EQ_I64(flow, INT32_MAX);
    gcut_grid_terminal_data(grid, GCUT_SOURCE)[0] = 0;
    gcut_grid_terminal_data(grid, GCUT_SINK)[0] = INT32_MAX;
    if (terminal_marks)
        CHECK_OK(gcut_grid_context_mark_terminals(ctx, &node, 1));
    else
        CHECK_OK(gcut_grid_context_mark_nodes(ctx, &node, 1));
    uint8_t labels[4];
    CHECK_OK(gcut_grid_context_solve(ctx, &flow, labels, NULL));
    CHECK_EQ_I64(flow, 0);
    CHECK_OK(gcut_grid_verify(grid, labels, flow, NULL));
    gcut_grid_context_info info;
    CHECK_OK(gcut_grid_context_get_info(ctx, &info));
    CHECK_EQ_I64(info.cold_fallbacks, 1);
    CHECK_EQ_I64(info.warm_solves, 0);
    gcut_grid_context_free(ctx);
    checks++;
}

/* Many contexts made, used on several problems and freed: device memory and gcut's host memory
 * back where they started. */
static void no_leak(test_rng *rng) {
    size_t free_before = 0, free_after = 0, total = 0;
    /* Warm the runtime first (every kernel loaded: CUDA loads modules lazily, on first use),
     * so that its own one-time allocations are not counted. */
    for (int k = 0; k < 4; k++) {
        const int conns[4] = {4, 8, 6, 26};
        const int64_t small[3] = {8, 8, 8};
        gcut_options options;
        gcut_options_init(&options);
        options.solver = "cuda-grid";
        gcut_grid_context *warmup = NULL;
        CHECK_OK(gcut_grid_context_create(k < 2 ? 2 : 3, small, conns[k], &options, &warmup));
        if (warmup == NULL)
            continue;
        gcut_grid *grid = gcut_grid_context_grid(warmup);
        int64_t changed[512], flow = 0;
        apply_change(rng, grid, CHANGE_BOTH, 100, changed);
        CHECK_OK(gcut_grid_context_solve(warmup, &flow, NULL, NULL));
        int64_t count = apply_change(rng, grid, CHANGE_BOTH, 10, changed);
        CHECK_OK(gcut_grid_context_mark_nodes(warmup, changed, count));
        CHECK_OK(gcut_grid_context_solve(warmup, &flow, NULL, NULL));
        apply_change(rng, grid, CHANGE_BOTH, 10, changed);
        CHECK_OK(gcut_grid_context_solve(warmup, &flow, NULL, NULL));
        gcut_grid_context_free(warmup);
    }
    CHECK(cudaMemGetInfo(&free_before, &total) == cudaSuccess);
    const uint64_t host_before = gcut_memory_in_use();
    for (int round = 0; round < 12; round++) {
        gcut_options options;
        gcut_options_init(&options);
        options.solver = "cuda-grid";
        const int64_t shape2[2] = {60 + round, 90}, shape3[3] = {10, 12, 14 + round};
        const int conns[4] = {4, 8, 6, 26};
        const int conn = conns[round % 4];
        const int ndim = conn == 4 || conn == 8 ? 2 : 3;
        gcut_grid_context *ctx = NULL;
        CHECK_OK(gcut_grid_context_create(ndim, ndim == 2 ? shape2 : shape3, conn, &options, &ctx));
        if (ctx == NULL)
            continue;
        gcut_grid *grid = gcut_grid_context_grid(ctx);
        const int64_t n = gcut_grid_num_nodes(grid);
        uint8_t *labels = malloc((size_t)n);
        int64_t *changed = malloc((size_t)n * sizeof *changed);
        apply_change(rng, grid, CHANGE_BOTH, 100, changed);
        for (int p = 0; p < 4 && labels && changed; p++) {
            int64_t count = apply_change(rng, grid, CHANGE_BOTH, 10, changed);
            if (p & 1)
                CHECK_OK(gcut_grid_context_mark_nodes(ctx, changed, count));
            solve_and_check(ctx, labels, "no-leak round");
        }
        free(labels);
        free(changed);
        gcut_grid_context_free(ctx);
    }
    CHECK(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
    if (free_after != free_before)
        fprintf(stderr, "device memory free %zu before, %zu after\n", free_before, free_after);
    CHECK(free_after == free_before);
    CHECK_EQ_I64(gcut_memory_in_use(), host_before);
    checks++;
}
#endif

int main(void) {
    gcut_solver_info info;
    if (gcut_solver_find("cuda-grid", &info) != GCUT_OK || !info.available) {
        printf("test_cuda_context: skipped (no CUDA device or a build without CUDA)\n");
        return TEST_SKIP;
    }
#ifdef GCUT_HAVE_CUDA
    test_rng rng;
    test_rng_init(&rng, test_seed());
    /* GCUT_TEST_QUICK=1: fewer steps, no large grids (memcheck); 2: a handful of cases
     * (racecheck, which is slow). */
    const char *quick_env = getenv("GCUT_TEST_QUICK");
    const int quick = quick_env == NULL ? 0 : atoi(quick_env) >= 2 ? 2 : 1;
    const int64_t s2[2] = {45, 70}, s3[3] = {9, 14, 20};
    if (quick == 2) {
        const int64_t t2[2] = {9, 33}, t3[3] = {5, 9, 17};
        device_entry(&rng, 2, t2, 4);
        run_sequence(&rng, "cuda-grid", 2, t2, 4, 3);
        run_sequence(&rng, "cuda-grid", 2, t2, 8, 3);
        run_sequence(&rng, "cuda-grid", 3, t3, 6, 3);
        run_sequence(&rng, "cuda-grid", 3, t3, 26, 3);
        return test_finish("test_cuda_context", checks);
    }
    no_leak(&rng);
    negative_values();
    deficit_overflow(1);
    deficit_overflow(0);
    device_entry(&rng, 2, s2, 4);
    device_entry(&rng, 2, s2, 8);
    device_entry(&rng, 3, s3, 6);
    device_entry(&rng, 3, s3, 26);
    run_all_sequences(&rng, "cuda-grid", quick ? 4 : 10, !quick);
    /* The marked path's other gather (on the host), read at context creation. */
    setenv("GCUT_CUDAGRID_GATHER", "0", 1);
    negative_values();
    deficit_overflow(1);
    run_sequence(&rng, "cuda-grid", 2, s2, 4, quick ? 4 : 8);
    run_sequence(&rng, "cuda-grid", 3, s3, 26, quick ? 4 : 8);
    unsetenv("GCUT_CUDAGRID_GATHER");
    /* Warm solves through the global relabel as passes, with every tile in the one-launch
     * relabel's first pass, with every finite node seeding it (no node steps), and through a
     * relabel queue of one entry (every one-launch relabel runs out of room and falls back to
     * passes), read at creation. */
    setenv("GCUT_CUDAGRID_RELAX", "0", 1);
    run_sequence(&rng, "cuda-grid", 2, s2, 4, quick ? 3 : 6);
    setenv("GCUT_CUDAGRID_RELAX", "1", 1); /* every tile in the one-launch first pass */
    run_sequence(&rng, "cuda-grid", 2, s2, 8, quick ? 3 : 6);
    run_sequence(&rng, "cuda-grid", 3, s3, 26, quick ? 3 : 6);
    unsetenv("GCUT_CUDAGRID_RELAX");
    setenv("GCUT_CUDAGRID_JACOBI", "0", 1); /* every finite node seeds the first pass */
    run_sequence(&rng, "cuda-grid", 2, s2, 4, quick ? 3 : 6);
    run_sequence(&rng, "cuda-grid", 3, s3, 6, quick ? 3 : 6);
    unsetenv("GCUT_CUDAGRID_JACOBI");
    setenv("GCUT_CUDAGRID_QUEUE", "1", 1);
    run_sequence(&rng, "cuda-grid", 2, s2, 8, quick ? 3 : 6);
    run_sequence(&rng, "cuda-grid", 3, s3, 6, quick ? 3 : 6);
    unsetenv("GCUT_CUDAGRID_QUEUE");
#else
    (void)run_all_sequences; /* the shared cases are unused in a build without CUDA */
#endif
    return test_finish("test_cuda_context", checks);
}
