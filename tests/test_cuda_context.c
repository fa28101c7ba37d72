/* test_cuda_context.c - cuda-grid contexts (include/gcut.h, "Grid solver contexts"): warm
 * re-solves on the device against cold answers (Dinic, bk) with the cut certificate over random
 * change sequences; the device-array entry against the host entry; contexts reused across many
 * problems with the device memory in use back to its start; the marked path with the gather on
 * the host as well as on the device (GCUT_CUDAGRID_GATHER); terminal marks
 * (gcut_grid_context_mark_terminals); the incremental warm start after terminal marks and
 * the labels of gcut_grid_context_solve_view(). Skips (exit 77) without a GPU. */
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
    gcut_grid_context *host = context_for("cuda-grid", ndim, shape, conn),
                      *dev = context_for("cuda-grid", ndim, shape, conn);
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
    const int64_t shape[2] = {4, 5};
    gcut_grid_context *ctx = context_for("cuda-grid", 2, shape, 4);
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
/* view: the warm solve through gcut_grid_context_solve_view (the labels in the context's copy,
 * downloaded with the solve's last read on the warm host path, also after its cold fallback). */
static void deficit_overflow(int terminal_marks, int view) {
    const int64_t shape[2] = {2, 2};
    gcut_grid_context *ctx = context_for("cuda-grid", 2, shape, 4);
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
    const uint8_t *got = labels;
    if (view)
        CHECK_OK(gcut_grid_context_solve_view(ctx, &flow, &got, NULL));
    else
        CHECK_OK(gcut_grid_context_solve(ctx, &flow, labels, NULL));
    CHECK_EQ_I64(flow, 0);
    CHECK(got != NULL);
    if (got != NULL)
        CHECK_OK(gcut_grid_verify(grid, got, flow, NULL));
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
        gcut_grid_context *warmup = context_for("cuda-grid", k < 2 ? 2 : 3, small, conns[k]);
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
        const int64_t shape2[2] = {60 + round, 90}, shape3[3] = {10, 12, 14 + round};
        const int conns[4] = {4, 8, 6, 26};
        const int conn = conns[round % 4];
        const int ndim = conn == 4 || conn == 8 ? 2 : 3;
        gcut_grid_context *ctx = context_for("cuda-grid", ndim, ndim == 2 ? shape2 : shape3, conn);
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

/* Terminal changes of the incremental warm start (docs/CUDA-GRID.md, "Incremental warm
 * re-solves"): spread over the grid, concentrated in one tile-sized box, sinks that rise or
 * fall, source and sink swapped on 90% of the nodes (most labels flip), none at all, and a
 * step of arc changes (node marks: the full path, after which the incremental one resumes). */
typedef enum {
    INC_SPREAD,
    INC_BOX,
    INC_SINK_UP,
    INC_SINK_DOWN,
    INC_FLIP,
    INC_NONE,
    INC_ARCS,
    NUM_INC
} inc_kind;

static const char *inc_names[NUM_INC] = {"spread", "box",  "sink up",          "sink down",
                                         "flip",   "none", "arcs (node marks)"};

static int64_t inc_change(test_rng *rng, gcut_grid *grid, inc_kind kind, int64_t *changed) {
    int64_t shape[3] = {1, 1, 1};
    gcut_grid_shape(grid, shape);
    const int ndim = gcut_grid_ndim(grid);
    const int64_t n = gcut_grid_num_nodes(grid);
    int32_t *source = gcut_grid_terminal_data(grid, GCUT_SOURCE);
    int32_t *sink = gcut_grid_terminal_data(grid, GCUT_SINK);
    const int percent = (int)test_rng_range(rng, 1, 20);
    /* The box: 32x8 in 2D, 16x4x4 in 3D (a tile's size), anywhere. */
    const int64_t w = ndim == 2 ? shape[1] : shape[2], h = ndim == 2 ? shape[0] : shape[1],
                  d = ndim == 2 ? 1 : shape[0];
    const int64_t bw = ndim == 2 ? 32 : 16, bh = ndim == 2 ? 8 : 4, bd = ndim == 2 ? 1 : 4;
    const int64_t x0 = test_rng_range(rng, 0, w - 1), y0 = test_rng_range(rng, 0, h - 1),
                  z0 = test_rng_range(rng, 0, d - 1);
    int64_t count = 0;
    for (int64_t i = 0; i < n && kind != INC_NONE; i++) {
        const int64_t x = i % w, y = i / w % h, z = i / (w * h);
        int pick;
        if (kind == INC_BOX)
            pick = x >= x0 && x < x0 + bw && y >= y0 && y < y0 + bh && z >= z0 && z < z0 + bd;
        else if (kind == INC_FLIP)
            pick = test_rng_range(rng, 0, 99) < 90;
        else
            pick = test_rng_range(rng, 0, 99) < percent;
        if (!pick)
            continue;
        changed[count++] = i;
        switch (kind) {
        case INC_FLIP: {
            int32_t t = source[i];
            source[i] = sink[i];
            sink[i] = t;
            break;
        }
        case INC_SINK_UP:
            sink[i] = nudge(rng, sink[i] + 40, 40);
            break;
        case INC_SINK_DOWN:
            sink[i] = test_rng_range(rng, 0, 3) == 0 ? 0 : nudge(rng, sink[i] - 40, 40);
            break;
        case INC_BOX:
            source[i] = (int32_t)test_rng_range(rng, 0, 200);
            sink[i] = (int32_t)test_rng_range(rng, 0, 200);
            break;
        case INC_ARCS:
            for (int dd = 0; dd < gcut_grid_num_dirs(grid); dd++) {
                int32_t *cap = gcut_grid_dir_data(grid, dd);
                cap[i] = test_rng_range(rng, 0, 3) == 0 ? 0 : nudge(rng, cap[i], 80);
            }
            source[i] = nudge(rng, source[i], 60);
            break;
        default:
            source[i] = nudge(rng, source[i], 60);
            sink[i] = nudge(rng, sink[i], 60);
            break;
        }
    }
    return count;
}

/* A context through a random sequence of terminal changes told by terminal marks (node marks
 * for INC_ARCS), every solve against the reference and certified; labels alternately into a
 * caller's buffer and through gcut_grid_context_solve_view() (certified too: a wrong flipped
 * label shows there). synth: start from the hard synthetic energy instead of random
 * capacities. @return the warm solves the incremental start finished. */
/* Warm solves whose stop the sparse phase's certificate proved (info.sparse_stops), summed by
 * incremental_sequence() over a case set. */
static int64_t sparse_stops_seen = 0;
/* Warm solves whose stop the certificate after the warm pull proved (info.certified_stops). */
static int64_t certified_seen = 0;

/* Every view_period-th warm step of an incremental sequence goes through the view, the others
 * into a caller's buffer (3: two buffer solves in a row, the second from the last labels). */
static int view_period = 2;

static int64_t incremental_sequence(test_rng *rng, int ndim, const int64_t *shape, int conn,
                                    int steps, int synth) {
    gcut_grid_context *ctx = context_for("cuda-grid", ndim, shape, conn);
    if (ctx == NULL)
        return 0;
    gcut_grid *grid = gcut_grid_context_grid(ctx);
    const int64_t n = gcut_grid_num_nodes(grid);
    gcut_grid *start = NULL;
    if (synth) {
        CHECK_OK(gcut_synth_grid(ndim == 2 ? shape[1] : shape[2], ndim == 2 ? shape[0] : shape[1],
                                 ndim == 2 ? 1 : shape[0], test_rng_next(rng), GCUT_SYNTH_HARD,
                                 conn, &start));
    } else {
        oracle_caps caps = oracle_caps_default();
        CHECK_OK(oracle_make_grid(rng, ndim, shape, conn, &caps, &start));
    }
    uint8_t *labels = malloc((size_t)n);
    int64_t *changed = malloc((size_t)n * sizeof *changed);
    int64_t incremental = 0;
    if (start == NULL || labels == NULL || changed == NULL) {
        test_failures++;
        goto done;
    }
    CHECK_OK(gcut_grid_set_terminals(grid, gcut_grid_terminal_cdata(start, GCUT_SOURCE),
                                     gcut_grid_terminal_cdata(start, GCUT_SINK)));
    for (int d = 0; d < gcut_grid_num_dirs(grid); d++)
        CHECK_OK(gcut_grid_set_dir(grid, d, gcut_grid_dir_cdata(start, d)));
    char what[200];
    snprintf(what, sizeof what, "incremental %dD conn %d n %lld first solve", ndim, conn,
             (long long)n);
    solve_and_check(ctx, labels, what);
    for (int step = 0; step < steps; step++) {
        const inc_kind kind = (inc_kind)test_rng_range(rng, 0, NUM_INC - 1);
        const int64_t count = inc_change(rng, grid, kind, changed);
        if (kind == INC_ARCS)
            CHECK_OK(gcut_grid_context_mark_nodes(ctx, changed, count));
        else
            CHECK_OK(gcut_grid_context_mark_terminals(ctx, changed, count));
        snprintf(what, sizeof what, "incremental %dD conn %d n %lld%s step %d: %s (%lld nodes)",
                 ndim, conn, (long long)n, synth ? " synth" : "", step, inc_names[kind],
                 (long long)count);
        gcut_grid_context_info before, after;
        CHECK_OK(gcut_grid_context_get_info(ctx, &before));
        if (step % view_period == view_period - 1) {
            const int64_t expected = cold_reference(grid);
            int64_t flow = -1;
            const uint8_t *view = NULL;
            CHECK_OK(gcut_grid_context_solve_view(ctx, &flow, &view, NULL));
            CHECK(view != NULL);
            const int before_fail = test_failures;
            CHECK_EQ_I64(flow, expected);
            if (view != NULL)
                CHECK_OK(gcut_grid_verify(grid, view, flow, NULL));
            if (test_failures != before_fail)
                fprintf(stderr, "  in %s (view)\n", what);
            else
                checks++;
        } else {
            solve_and_check(ctx, labels, what);
        }
        CHECK_OK(gcut_grid_context_get_info(ctx, &after));
        CHECK_EQ_I64(after.warm_solves, before.warm_solves + 1);
        incremental += after.incremental - before.incremental;
        sparse_stops_seen += after.sparse_stops - before.sparse_stops;
        certified_seen += after.certified_stops - before.certified_stops;
        if (kind == INC_ARCS && count > 0) { /* node marks take neither start */
            CHECK_EQ_I64(after.incremental, before.incremental);
            CHECK_EQ_I64(after.sparse_stops, before.sparse_stops);
            CHECK_EQ_I64(after.certified_stops, before.certified_stops);
        }
    }
done:
    gcut_grid_free(start);
    free(labels);
    free(changed);
    gcut_grid_context_free(ctx);
    return incremental;
}

/* The incremental start over every connectivity. expect 1: some warm solves must finish through
 * it (on, the default); 0: none may (switched off); -1: either (it may or may not get there). */
static void incremental_cases(test_rng *rng, int quick, int expect) {
    static const int64_t s2[][2] = {{1, 1}, {9, 33}, {40, 40}, {120, 160}};
    static const int64_t s3[][3] = {{5, 9, 17}, {16, 20, 24}};
    const int steps = quick ? 6 : 14;
    int64_t incremental = 0;
    for (size_t k = 0; k < sizeof s2 / sizeof s2[0]; k++) {
        if (quick && k == 3)
            continue;
        incremental += incremental_sequence(rng, 2, s2[k], 4, steps, 0);
        incremental += incremental_sequence(rng, 2, s2[k], 8, steps, 0);
    }
    for (size_t k = 0; k < sizeof s3 / sizeof s3[0]; k++) {
        if (quick && k == 1)
            continue;
        incremental += incremental_sequence(rng, 3, s3[k], 6, steps, 0);
        incremental += incremental_sequence(rng, 3, s3[k], 26, steps, 0);
    }
    const int64_t h2[2] = {quick ? 64 : 256, quick ? 96 : 320}, h3[3] = {16, 24, 32};
    incremental += incremental_sequence(rng, 2, h2, 4, steps, 1);
    incremental += incremental_sequence(rng, 2, h2, 8, steps, 1);
    incremental += incremental_sequence(rng, 3, h3, 6, steps, 1);
    printf("test_cuda_context: %lld warm solves finished by the incremental start\n",
           (long long)incremental);
    if (expect == 1)
        CHECK(incremental > 0);
    else if (expect == 0)
        CHECK_EQ_I64(incremental, 0);
}

/* The sparse phase of warm solves after terminal marks (seventh session) over the same case
 * sets. expect 1: some stops must be proven by its certificate; 0: none may; -1: either. */
static void sparse_cases(test_rng *rng, int quick, int expect, const char *label) {
    sparse_stops_seen = 0;
    incremental_cases(rng, quick, -1);
    printf("test_cuda_context: sparse phase (%s): %lld warm solves stopped by its certificate\n",
           label, (long long)sparse_stops_seen);
    if (expect == 1)
        CHECK(sparse_stops_seen > 0);
    else if (expect == 0)
        CHECK_EQ_I64(sparse_stops_seen, 0);
}

/* The certified warm stop (GCUT_CUDAGRID_WARM_PULL=1; ninth session) over the same case sets.
 * expect 1: some stops must be proven by its certificate; 0: none may; -1: either. */
static void pull_cases(test_rng *rng, int quick, int expect, const char *label) {
    certified_seen = 0;
    incremental_cases(rng, quick, 0);
    printf("test_cuda_context: warm pull (%s): %lld warm solves stopped by its certificate\n",
           label, (long long)certified_seen);
    if (expect == 1)
        CHECK(certified_seen > 0);
    else if (expect == 0)
        CHECK_EQ_I64(certified_seen, 0);
}

/* Labels from the last ones (GCUT_CUDAGRID_LABEL_PREFILL and GCUT_CUDAGRID_VIEW_FLIPS, on by
 * default; the cases before alternate buffer and view on them): two buffer solves in a row
 * before each view; then with one flip read along and four listed (every branch of the finish:
 * the flips read along, the rest read after, the labels whole); then each off. how: the
 * labels' prefix (the switches the caller set). */
static void label_route_cases(test_rng *rng, const char *how) {
    char label[160];
    view_period = 3;
    snprintf(label, sizeof label, "%stwo buffer solves in a row, from the last labels", how);
    pull_cases(rng, 1, 1, label);
    setenv("GCUT_CUDAGRID_FLIP_PREFIX", "1", 1);
    setenv("GCUT_CUDAGRID_FLIP_CAP", "4", 1);
    snprintf(label, sizeof label, "%sfrom the last labels, one flip read along, four listed", how);
    pull_cases(rng, 1, 1, label);
    unsetenv("GCUT_CUDAGRID_FLIP_PREFIX");
    unsetenv("GCUT_CUDAGRID_FLIP_CAP");
    setenv("GCUT_CUDAGRID_LABEL_PREFILL", "0", 1);
    snprintf(label, sizeof label, "%slabels into a buffer downloaded whole", how);
    pull_cases(rng, 1, 1, label);
    unsetenv("GCUT_CUDAGRID_LABEL_PREFILL");
    setenv("GCUT_CUDAGRID_VIEW_FLIPS", "0", 1);
    snprintf(label, sizeof label, "%sthe view's labels downloaded whole", how);
    pull_cases(rng, 1, 1, label);
    unsetenv("GCUT_CUDAGRID_VIEW_FLIPS");
    view_period = 2;
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
        /* The warm pull's kernels use shared memory (ninth session). */
        setenv("GCUT_CUDAGRID_WARM_PULL", "1", 1);
        incremental_sequence(&rng, 2, t2, 4, 4, 0);
        incremental_sequence(&rng, 2, t2, 8, 4, 0);
        incremental_sequence(&rng, 3, t3, 6, 4, 0);
        /* No rounds and one pass: the far pull's BFS (shared queue and hash) does the work. */
        setenv("GCUT_CUDAGRID_PULL_ROUNDS", "0", 1);
        setenv("GCUT_CUDAGRID_PULL_SHIFT", "0", 1);
        incremental_sequence(&rng, 2, t2, 4, 4, 0);
        incremental_sequence(&rng, 3, t3, 26, 4, 0);
        unsetenv("GCUT_CUDAGRID_PULL_ROUNDS");
        unsetenv("GCUT_CUDAGRID_PULL_SHIFT");
        unsetenv("GCUT_CUDAGRID_WARM_PULL");
        return test_finish("test_cuda_context", checks);
    }
    no_leak(&rng);
    negative_values();
    deficit_overflow(1, 0);
    deficit_overflow(0, 0);
    device_entry(&rng, 2, s2, 4);
    device_entry(&rng, 2, s2, 8);
    device_entry(&rng, 3, s3, 6);
    device_entry(&rng, 3, s3, 26);
    run_all_sequences(&rng, "cuda-grid", quick ? 4 : 10, !quick);
    deficit_overflow(1, 1);
    /* The warm path's host side as before the eighth session (GCUT_CUDAGRID_WARM_HOST=0: the
     * repair's counters read before the solve, the memsets one by one, the view's labels after
     * it), read at creation; the default (1) ran above and runs below. */
    setenv("GCUT_CUDAGRID_WARM_HOST", "0", 1);
    negative_values();
    deficit_overflow(1, 0);
    deficit_overflow(1, 1);
    run_sequence(&rng, "cuda-grid", 2, s2, 4, quick ? 4 : 8);
    run_sequence(&rng, "cuda-grid", 3, s3, 26, quick ? 4 : 8);
    incremental_cases(&rng, 1, 0);
    unsetenv("GCUT_CUDAGRID_WARM_HOST");
    /* The marked path's other gather (on the host), read at context creation. */
    setenv("GCUT_CUDAGRID_GATHER", "0", 1);
    negative_values();
    deficit_overflow(1, 0);
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
    /* The incremental start's relabel overflowing its queue: full relabels follow. */
    setenv("GCUT_CUDAGRID_WARM_INC", "1", 1);
    if (!quick)
        incremental_cases(&rng, 1, -1);
    unsetenv("GCUT_CUDAGRID_WARM_INC");
    unsetenv("GCUT_CUDAGRID_QUEUE");
    /* The incremental warm start (GCUT_CUDAGRID_WARM_INC=1) with the view's labels as flips,
     * then with no sweep batch before the closure search or a full relabel, without the search,
     * with labels downloaded whole (the default), and switched off (the default). */
    setenv("GCUT_CUDAGRID_WARM_INC", "1", 1);
    setenv("GCUT_CUDAGRID_LABEL_FLIPS", "1", 1); /* the view's labels as flips (off by default) */
    incremental_cases(&rng, quick, 1);
    setenv("GCUT_CUDAGRID_WARM_BATCHES", "0", 1);
    if (!quick)
        incremental_cases(&rng, 1, -1);
    setenv("GCUT_CUDAGRID_WARM_CLOSURE", "0", 1); /* no closure search: a full relabel */
    if (!quick)
        incremental_cases(&rng, 1, -1);
    unsetenv("GCUT_CUDAGRID_WARM_BATCHES");
    incremental_cases(&rng, 1, -1);
    unsetenv("GCUT_CUDAGRID_WARM_CLOSURE");
    unsetenv("GCUT_CUDAGRID_LABEL_FLIPS");
    incremental_cases(&rng, 1, 1);
    unsetenv("GCUT_CUDAGRID_WARM_INC");
    incremental_cases(&rng, 1, 0);
    /* The sparse phase (GCUT_CUDAGRID_WARM_SPARSE=1; off by default): the shared cases and a
     * deficit near INT32_MAX through it; then the incremental case sets with its defaults
     * (rounds on the kept heights, source-side pulls, the local closure, the certificate); with
     * lists of one entry (every round drops nodes, which the certificate or the relabel must
     * find); one round of one step; without pulls; without the local closure; with rounds after
     * the first relabel (the gap rule, then the certificate again), alone and with the
     * certificate after the start off; with neither certificate (never a sparse stop); off. */
    setenv("GCUT_CUDAGRID_WARM_SPARSE", "1", 1);
    run_sequence(&rng, "cuda-grid", 2, s2, 4, quick ? 4 : 8);
    run_sequence(&rng, "cuda-grid", 3, s3, 26, quick ? 4 : 8);
    deficit_overflow(1, 0);
    unsetenv("GCUT_CUDAGRID_WARM_SPARSE");
    setenv("GCUT_CUDAGRID_WARM_SPARSE", "1", 1);
    sparse_cases(&rng, quick, 1, "its defaults");
    setenv("GCUT_CUDAGRID_SPARSE_CAP", "1", 1);
    sparse_cases(&rng, 1, -1, "lists of one entry");
    unsetenv("GCUT_CUDAGRID_SPARSE_CAP");
    setenv("GCUT_CUDAGRID_SPARSE_ROUNDS", "1", 1);
    setenv("GCUT_CUDAGRID_SPARSE_STEPS", "1", 1);
    sparse_cases(&rng, 1, -1, "one round, one step");
    unsetenv("GCUT_CUDAGRID_SPARSE_ROUNDS");
    unsetenv("GCUT_CUDAGRID_SPARSE_STEPS");
    setenv("GCUT_CUDAGRID_SPARSE_PULL", "0", 1);
    sparse_cases(&rng, 1, -1, "no pulls");
    unsetenv("GCUT_CUDAGRID_SPARSE_PULL");
    setenv("GCUT_CUDAGRID_SPARSE_CLOSURE", "0", 1);
    sparse_cases(&rng, 1, -1, "no local closure");
    unsetenv("GCUT_CUDAGRID_SPARSE_CLOSURE");
    setenv("GCUT_CUDAGRID_SPARSE_SETTLE", "24", 1);
    sparse_cases(&rng, 1, 1, "rounds after the relabel");
    setenv("GCUT_CUDAGRID_SPARSE_CHECK", "0", 1);
    sparse_cases(&rng, quick, -1, "rounds after the relabel, no certificate after the start");
    unsetenv("GCUT_CUDAGRID_SPARSE_SETTLE");
    sparse_cases(&rng, 1, 0, "no certificate");
    unsetenv("GCUT_CUDAGRID_SPARSE_CHECK");
    unsetenv("GCUT_CUDAGRID_WARM_SPARSE");
    sparse_cases(&rng, 1, 0, "off, the default");
    /* The certified warm stop (GCUT_CUDAGRID_WARM_PULL=1): the shared cases, refusals and a
     * deficit near INT32_MAX through it (the repair's counters come back with its check);
     * the incremental case sets with its defaults (some stops must come from its certificate),
     * one pass and no stuck closure, no rounds and one pass (the far pull fills every open arc;
     * some stops must be certified; the sanitizers' quick sets stop there), no pull rounds (a
     * pass may still move a region without excess to the sink side) with and without the far
     * pull, no far pull (with and without the fix after a failed certificate), no fix, the fix
     * not chained (after the read, then the whole certificate again), one pass, no
     * stuck closure, the old host path (negative values and a deficit overflow through it too), one
     * checked sweep batch before a relabel (3 by default), one checked batch after a relabel (none
     * by default), one checked batch before and four after each relabel, warm_check_kernel as the
     * check (pull_check_kernel by default), a relabel queue of one entry; then the default (on
     * since the tenth session) and off (no certified stop). */
    setenv("GCUT_CUDAGRID_WARM_PULL", "1", 1);
    run_sequence(&rng, "cuda-grid", 2, s2, 4, quick ? 4 : 8);
    run_sequence(&rng, "cuda-grid", 2, s2, 8, quick ? 4 : 8);
    run_sequence(&rng, "cuda-grid", 3, s3, 26, quick ? 4 : 8);
    negative_values();
    deficit_overflow(1, 0);
    deficit_overflow(1, 1);
    pull_cases(&rng, quick, 1, "its defaults");
    setenv("GCUT_CUDAGRID_PULL_SHIFT", "0", 1);
    setenv("GCUT_CUDAGRID_PULL_CLOSE", "0", 1);
    pull_cases(&rng, 1, -1, "one pass, no stuck closure");
    unsetenv("GCUT_CUDAGRID_PULL_CLOSE");
    setenv("GCUT_CUDAGRID_PULL_ROUNDS", "0", 1);
    pull_cases(&rng, 1, 1, "no rounds, one pass: the far pull fills the open arcs");
    unsetenv("GCUT_CUDAGRID_PULL_ROUNDS");
    unsetenv("GCUT_CUDAGRID_PULL_SHIFT");
    label_route_cases(&rng, "");
    /* Last labels kept by the solves that have none (GCUT_CUDAGRID_KEEP_LAST, off by default):
     * the cold first solve into a buffer, node-marked steps (no PrefillRun), and with the view's
     * flips off the view's labels along with the solve; the next solves start from them. */
    setenv("GCUT_CUDAGRID_KEEP_LAST", "1", 1);
    label_route_cases(&rng, "last labels kept: ");
    unsetenv("GCUT_CUDAGRID_KEEP_LAST");
    if (quick) { /* the sanitizers' sets stop here */
        unsetenv("GCUT_CUDAGRID_WARM_PULL");
        return test_finish("test_cuda_context", checks);
    }
    setenv("GCUT_CUDAGRID_PULL_ROUNDS", "0", 1);
    pull_cases(&rng, 1, -1, "no pull rounds");
    setenv("GCUT_CUDAGRID_PULL_FAR", "0", 1);
    pull_cases(&rng, 1, -1, "no pull rounds, no far pull");
    unsetenv("GCUT_CUDAGRID_PULL_ROUNDS");
    pull_cases(&rng, 1, -1, "no far pull");
    setenv("GCUT_CUDAGRID_PULL_FIX", "0", 1);
    pull_cases(&rng, 1, -1, "no far pull, no fix after a failed certificate");
    unsetenv("GCUT_CUDAGRID_PULL_FAR");
    pull_cases(&rng, 1, -1, "no fix after a failed certificate");
    unsetenv("GCUT_CUDAGRID_PULL_FIX");
    setenv("GCUT_CUDAGRID_PULL_CHAIN", "0", 1);
    pull_cases(&rng, 1, 1,
               "the fix after the certificate's read, then the whole certificate again");
    unsetenv("GCUT_CUDAGRID_PULL_CHAIN");
    setenv("GCUT_CUDAGRID_PULL_SHIFT", "0", 1);
    pull_cases(&rng, 1, -1, "one pass");
    unsetenv("GCUT_CUDAGRID_PULL_SHIFT");
    setenv("GCUT_CUDAGRID_PULL_CLOSE", "0", 1);
    pull_cases(&rng, 1, -1, "no stuck closure");
    unsetenv("GCUT_CUDAGRID_PULL_CLOSE");
    setenv("GCUT_CUDAGRID_WARM_HOST", "0", 1);
    pull_cases(&rng, 1, 1, "the old host path");
    negative_values();
    deficit_overflow(1, 0);
    unsetenv("GCUT_CUDAGRID_WARM_HOST");
    setenv("GCUT_CUDAGRID_PULL_CHECKS", "1", 1);
    pull_cases(&rng, 1, 1, "one checked batch");
    unsetenv("GCUT_CUDAGRID_PULL_CHECKS");
    setenv("GCUT_CUDAGRID_PULL_AFTER", "1", 1);
    pull_cases(&rng, 1, 1, "one checked batch after a relabel");
    setenv("GCUT_CUDAGRID_PULL_AFTER", "4", 1);
    setenv("GCUT_CUDAGRID_PULL_CHECKS", "1", 1);
    pull_cases(&rng, 1, 1, "one checked batch, four after each relabel");
    unsetenv("GCUT_CUDAGRID_PULL_CHECKS");
    unsetenv("GCUT_CUDAGRID_PULL_AFTER");
    setenv("GCUT_CUDAGRID_PULL_LEAN_CHECK", "0", 1);
    pull_cases(&rng, 1, 1, "the full check kernel");
    unsetenv("GCUT_CUDAGRID_PULL_LEAN_CHECK");
    setenv("GCUT_CUDAGRID_QUEUE", "1", 1);
    pull_cases(&rng, 1, -1, "a relabel queue of one entry");
    unsetenv("GCUT_CUDAGRID_QUEUE");
    unsetenv("GCUT_CUDAGRID_WARM_PULL");
    pull_cases(&rng, 1, 1, "the default (on)");
    setenv("GCUT_CUDAGRID_WARM_PULL", "0", 1);
    pull_cases(&rng, 1, 0, "off");
    unsetenv("GCUT_CUDAGRID_WARM_PULL");
#else
    (void)run_all_sequences; /* the shared cases are unused in a build without CUDA */
#endif
    return test_finish("test_cuda_context", checks);
}
