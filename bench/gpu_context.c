/* gpu_context.c - timings of grid contexts (docs/CUDA-GRID.md, "Contexts"): on one synthetic
 * instance (Hussein et al. 2007, VII), in one process, interleaved so that load hits every side:
 *   A. bk build + solve through gcut_grid_solve (the baseline);
 *   B. cuda-grid one-shot gcut_grid_solve (allocation, pageable upload, solve, free);
 *   C. upload + solve through a cold context (warm 0): pinned upload, no allocation;
 *   D. warm re-solve after changing P% of the terminal capacities (marked), against
 *   E. the cold solve of the same new problem (C's context), and
 *   F. the warm re-solve found by comparison (no marks), and
 *   G. D with a global relabel before the first sweep (GCUT_CUDAGRID_WARM_RELABEL=1 at its
 *      context's creation) instead of sweeping on the kept heights, and
 *   H. D with the nodes marked by gcut_grid_context_mark_terminals() (only the terminals
 *      changed: cuda-grid reads and repairs those alone, and starts incrementally), and
 *   I. H with the labels left in the context (gcut_grid_context_solve_view: no copy into the
 *      caller's buffer), against
 *   J. the cold solve of the same new problem through a context, labels left in it too.
 * Every flow is checked equal to bk's on the same problem and every cut by its certificate;
 * exits 1 on a mismatch. Medians of the repeats; wall times around the public calls.
 * Usage: gpu_context [--size WxH | --volume N] [--conn C] [--level easy|hard] [--repeats R]
 *                    [--percent P] [--box] [--solver cuda-grid|cpu-pr] [--seed S] [--verbose]
 * --box: the changed nodes fill one box (P% of the grid, the grid's proportions, at a random
 * place) instead of being spread over the grid at random (an edited region, a moving object).
 * --verbose: one more marked warm solve and one cold solve at the end, with the solver's phase
 * times on stderr.
 * --steps: a line per step with D's, H's, I's and J's wall times, H's build and solve times and
 * global relabels, and whether H's and I's stops were certified (warm pull; docs/CUDA-GRID.md):
 * the medians hide which steps were slow and why. */
#define _POSIX_C_SOURCE 200809L

#include "gcut.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int count) {
    qsort(v, (size_t)count, sizeof *v, cmp_double);
    return count % 2 ? v[count / 2] : (v[count / 2 - 1] + v[count / 2]) / 2;
}

static uint64_t rng_state = 1;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void copy_grid(gcut_grid *to, const gcut_grid *from) {
    size_t bytes = (size_t)gcut_grid_num_nodes(from) * sizeof(int32_t);
    for (int t = 0; t < 2; t++)
        memcpy(gcut_grid_terminal_data(to, t), gcut_grid_terminal_cdata(from, t), bytes);
    for (int d = 0; d < gcut_grid_num_dirs(from); d++)
        memcpy(gcut_grid_dir_data(to, d), gcut_grid_dir_cdata(from, d), bytes);
}

/* Writes the new terminal capacities of the changed nodes (marks) into a context's grid. */
static void copy_terminals(gcut_grid *to, const int64_t *marks, int64_t count, const int32_t *src,
                           const int32_t *snk) {
    int32_t *s = gcut_grid_terminal_data(to, GCUT_SOURCE),
            *t = gcut_grid_terminal_data(to, GCUT_SINK);
    for (int64_t k = 0; k < count; k++)
        s[marks[k]] = src[marks[k]], t[marks[k]] = snk[marks[k]];
}

static int failed = 0;

static void check(gcut_status st, const char *what) {
    if (st != GCUT_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, gcut_status_name(st), gcut_last_error());
        exit(2);
    }
}

static void expect_equal(int64_t a, int64_t b, const char *what) {
    if (a != b) {
        fprintf(stderr, "MISMATCH %s: %lld != %lld\n", what, (long long)a, (long long)b);
        failed = 1;
    }
}

#define MAXR 101

/* Whether node i changes this step: with probability percent_x10 / 1000, or (box) when it
 * lies in the box [lo, hi) (x, y, z). */
static int picked(int64_t i, int percent_x10, int box, const int64_t *dims, const int64_t *lo,
                  const int64_t *hi) {
    if (!box)
        return (int)(rng_next() % 1000) < percent_x10;
    const int64_t x = i % dims[0], y = i / dims[0] % dims[1], z = i / (dims[0] * dims[1]);
    return x >= lo[0] && x < hi[0] && y >= lo[1] && y < hi[1] && z >= lo[2] && z < hi[2];
}

/* A new box of percent_x10 / 1000 of the grid (each side that fraction^(1/ndim) of the grid's). */
static void new_box(int percent_x10, int ndim, const int64_t *dims, int64_t *lo, int64_t *hi) {
    const double side = pow(percent_x10 / 1000.0, 1.0 / ndim);
    for (int k = 0; k < 3; k++) {
        int64_t len = k < ndim ? (int64_t)(side * (double)dims[k] + 0.5) : dims[k];
        len = len < 1 ? 1 : len > dims[k] ? dims[k] : len;
        lo[k] = (int64_t)(rng_next() % (uint64_t)(dims[k] - len + 1));
        hi[k] = lo[k] + len;
    }
}

int main(int argc, char **argv) {
    int64_t w = 1920, h = 1080, depth = 1;
    int conn = 0, repeats = 7, percent_x10 = 10;
    const char *solver = "cuda-grid";
    gcut_synth_level level = GCUT_SYNTH_HARD;
    uint64_t seed = 1;
    int verbose = 0, box = 0, steps = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(a, "--size") == 0 &&
            sscanf(v, "%lldx%lld", (long long *)&w, (long long *)&h) == 2)
            i++;
        else if (strcmp(a, "--volume") == 0) {
            w = h = depth = atoll(v);
            i++;
        } else if (strcmp(a, "--conn") == 0) {
            conn = atoi(v);
            i++;
        } else if (strcmp(a, "--repeats") == 0) {
            repeats = atoi(v);
            i++;
        } else if (strcmp(a, "--percent") == 0) {
            percent_x10 = (int)(atof(v) * 10 + 0.5);
            i++;
        } else if (strcmp(a, "--level") == 0) {
            level = strcmp(v, "easy") == 0 ? GCUT_SYNTH_EASY : GCUT_SYNTH_HARD;
            i++;
        } else if (strcmp(a, "--solver") == 0) {
            solver = v;
            i++;
        } else if (strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(a, "--steps") == 0) {
            steps = 1;
        } else if (strcmp(a, "--box") == 0) {
            box = 1;
        } else if (strcmp(a, "--seed") == 0) {
            seed = strtoull(v, NULL, 0);
            i++;
        } else {
            fprintf(stderr, "usage: see the header of bench/gpu_context.c (bad argument %s)\n", a);
            return 2;
        }
    }
    if (repeats < 1 || repeats > MAXR)
        repeats = 7;
    rng_state = seed;
    gcut_grid *base = NULL;
    check(gcut_synth_grid(w, h, depth, seed, level, conn, &base), "synth");
    const int ndim = gcut_grid_ndim(base);
    int64_t shape[3];
    gcut_grid_shape(base, shape);
    conn = gcut_grid_connectivity(base);
    const int64_t n = gcut_grid_num_nodes(base);
    const int64_t dims[3] = {ndim == 2 ? shape[1] : shape[2], ndim == 2 ? shape[0] : shape[1],
                             ndim == 2 ? 1 : shape[0]};
    int64_t lo[3], hi[3];
    uint8_t *labels = malloc((size_t)n);
    int64_t *marks = malloc((size_t)n * sizeof *marks);
    if (labels == NULL || marks == NULL)
        return 2;

    gcut_options opt_bk, opt_gpu, opt_cold, opt_warm;
    gcut_options_init(&opt_bk);
    opt_bk.solver = "bk";
    opt_bk.warm = 0;
    gcut_options_init(&opt_gpu);
    opt_gpu.solver = solver;
    opt_cold = opt_gpu;
    opt_cold.warm = 0;
    opt_warm = opt_gpu;
    opt_warm.warm = 1;

    double t = now_ms();
    gcut_grid_context *cold = NULL, *warm = NULL, *warm_cmp = NULL;
    check(gcut_grid_context_create(ndim, shape, conn, &opt_cold, &cold), "context");
    const double create_first_ms = now_ms() - t;
    t = now_ms();
    check(gcut_grid_context_create(ndim, shape, conn, &opt_warm, &warm), "context");
    const double create_ms = now_ms() - t;
    check(gcut_grid_context_create(ndim, shape, conn, &opt_warm, &warm_cmp), "context");
    gcut_grid_context *warm_gr = NULL, *warm_term = NULL, *warm_view = NULL, *cold_view = NULL;
    check(gcut_grid_context_create(ndim, shape, conn, &opt_warm, &warm_term), "context");
    copy_grid(gcut_grid_context_grid(warm_term), base);
    int64_t f3 = 0, f4 = 0;
    check(gcut_grid_context_solve(warm_term, &f3, labels, NULL), "warm context first solve");
    check(gcut_grid_context_create(ndim, shape, conn, &opt_warm, &warm_view), "context");
    check(gcut_grid_context_create(ndim, shape, conn, &opt_cold, &cold_view), "context");
    copy_grid(gcut_grid_context_grid(warm_view), base);
    const uint8_t *view = NULL;
    check(gcut_grid_context_solve_view(warm_view, &f4, &view, NULL), "warm context first solve");
    expect_equal(f3, f4, "first solves");
    setenv("GCUT_CUDAGRID_WARM_RELABEL", "1", 1);
    check(gcut_grid_context_create(ndim, shape, conn, &opt_warm, &warm_gr), "context");
    unsetenv("GCUT_CUDAGRID_WARM_RELABEL");
    copy_grid(gcut_grid_context_grid(warm), base);
    copy_grid(gcut_grid_context_grid(warm_cmp), base);
    copy_grid(gcut_grid_context_grid(warm_gr), base);
    int64_t f0 = 0, f1 = 0, f2 = 0;
    check(gcut_grid_context_solve(warm, &f0, NULL, NULL), "warm context first solve");
    check(gcut_grid_context_solve(warm_cmp, &f1, NULL, NULL), "warm context first solve");
    check(gcut_grid_context_solve(warm_gr, &f2, NULL, NULL), "warm context first solve");
    expect_equal(f0, f1, "first solves");
    expect_equal(f0, f2, "first solves");
    expect_equal(f0, f3, "first solves");

    double bk_total[MAXR], bk_build[MAXR], bk_solve[MAXR], one_total[MAXR], one_solve[MAXR],
        one_build[MAXR], ctx_total[MAXR], ctx_build[MAXR], ctx_solve[MAXR], warm_total[MAXR],
        warm_build[MAXR], warm_solve[MAXR], cmp_total[MAXR], cmp_build[MAXR], cmp_solve[MAXR],
        gr_total[MAXR], gr_build[MAXR], gr_solve[MAXR], cold_new[MAXR], term_total[MAXR],
        term_build[MAXR], term_solve[MAXR], view_total[MAXR], cold_view_total[MAXR];
    int64_t changed_info = 0, warm_sweeps = 0, cold_sweeps = 0, warm_relabels = 0,
            cold_relabels = 0, gr_sweeps = 0, gr_relabels = 0, term_sweeps = 0, term_relabels = 0;
    gcut_grid *current = NULL;
    check(gcut_grid_create(ndim, shape, conn, &current), "grid");
    copy_grid(current, base);
    for (int r = 0; r < repeats; r++) {
        /* The new problem: P% of the nodes get new terminal capacities (x 0.5-1.5). */
        int32_t *src = gcut_grid_terminal_data(current, GCUT_SOURCE);
        int32_t *snk = gcut_grid_terminal_data(current, GCUT_SINK);
        int64_t count = 0;
        new_box(percent_x10, ndim, dims, lo, hi);
        for (int64_t i = 0; i < n; i++)
            if (picked(i, percent_x10, box, dims, lo, hi)) {
                marks[count++] = i;
                src[i] = (int32_t)((double)src[i] * (0.5 + (double)(rng_next() % 1001) / 1000));
                snk[i] = (int32_t)((double)snk[i] * (0.5 + (double)(rng_next() % 1001) / 1000));
            }
        /* bk (baseline) on the new problem. */
        gcut_stats st;
        int64_t flow_bk = 0, flow = 0;
        t = now_ms();
        check(gcut_grid_solve(current, &opt_bk, &flow_bk, labels, &st), "bk");
        bk_total[r] = now_ms() - t;
        bk_build[r] = st.build_ms;
        bk_solve[r] = st.solve_ms;
        check(gcut_grid_verify(current, labels, flow_bk, NULL), "bk certificate");
        /* One-shot GPU solve. */
        t = now_ms();
        check(gcut_grid_solve(current, &opt_gpu, &flow, labels, &st), "one-shot");
        one_total[r] = now_ms() - t;
        one_build[r] = st.build_ms;
        one_solve[r] = st.solve_ms;
        expect_equal(flow, flow_bk, "one-shot");
        /* Warm, marked. */
        copy_terminals(gcut_grid_context_grid(warm), marks, count, src, snk);
        check(gcut_grid_context_mark_nodes(warm, marks, count), "marks");
        t = now_ms();
        check(gcut_grid_context_solve(warm, &flow, labels, &st), "warm");
        warm_total[r] = now_ms() - t;
        warm_build[r] = st.build_ms;
        warm_solve[r] = st.solve_ms;
        warm_sweeps += st.sweeps;
        warm_relabels += st.global_relabels;
        expect_equal(flow, flow_bk, "warm marked");
        check(gcut_grid_verify(current, labels, flow, NULL), "warm certificate");
        gcut_grid_context_info info;
        check(gcut_grid_context_get_info(warm, &info), "info");
        changed_info = info.changed_nodes;
        if (info.warm_solves != r + 1)
            fprintf(stderr, "note: warm solve %d was not warm (fallbacks %lld)\n", r,
                    (long long)info.cold_fallbacks);
        /* Warm, terminals marked (gcut_grid_context_mark_terminals: only they changed). */
        gcut_grid_context_info before_term, before_view, after;
        check(gcut_grid_context_get_info(warm_term, &before_term), "info");
        check(gcut_grid_context_get_info(warm_view, &before_view), "info");
        copy_terminals(gcut_grid_context_grid(warm_term), marks, count, src, snk);
        check(gcut_grid_context_mark_terminals(warm_term, marks, count), "marks");
        t = now_ms();
        check(gcut_grid_context_solve(warm_term, &flow, labels, &st), "warm terminals");
        term_total[r] = now_ms() - t;
        term_build[r] = st.build_ms;
        term_solve[r] = st.solve_ms;
        term_sweeps += st.sweeps;
        term_relabels += st.global_relabels;
        expect_equal(flow, flow_bk, "warm terminals marked");
        check(gcut_grid_verify(current, labels, flow, NULL), "warm terminals certificate");
        const int64_t term_relabels_step = st.global_relabels;
        /* Cold solve of the new problem through a context (upload + solve). */
        copy_grid(gcut_grid_context_grid(cold), current);
        t = now_ms();
        check(gcut_grid_context_solve(cold, &flow, labels, &st), "cold context");
        ctx_total[r] = now_ms() - t;
        cold_new[r] = ctx_total[r];
        ctx_build[r] = st.build_ms;
        ctx_solve[r] = st.solve_ms;
        cold_sweeps += st.sweeps;
        cold_relabels += st.global_relabels;
        expect_equal(flow, flow_bk, "cold context");
        check(gcut_grid_verify(current, labels, flow, NULL), "cold certificate");
        /* Warm found by comparison. */
        copy_grid(gcut_grid_context_grid(warm_cmp), current);
        t = now_ms();
        check(gcut_grid_context_solve(warm_cmp, &flow, labels, &st), "warm compared");
        cmp_total[r] = now_ms() - t;
        cmp_build[r] = st.build_ms;
        cmp_solve[r] = st.solve_ms;
        expect_equal(flow, flow_bk, "warm compared");
        /* Warm, marked, relabel first. */
        copy_terminals(gcut_grid_context_grid(warm_gr), marks, count, src, snk);
        check(gcut_grid_context_mark_nodes(warm_gr, marks, count), "marks");
        t = now_ms();
        check(gcut_grid_context_solve(warm_gr, &flow, labels, &st), "warm relabel first");
        gr_total[r] = now_ms() - t;
        /* Its stats now: the view solves below reuse st. */
        gr_build[r] = st.build_ms;
        gr_solve[r] = st.solve_ms;
        gr_sweeps += st.sweeps;
        gr_relabels += st.global_relabels;
        const int64_t flow_gr = flow;
        /* Warm, terminals marked, labels left in the context; and the cold solve the same way. */
        copy_terminals(gcut_grid_context_grid(warm_view), marks, count, src, snk);
        check(gcut_grid_context_mark_terminals(warm_view, marks, count), "marks");
        t = now_ms();
        check(gcut_grid_context_solve_view(warm_view, &flow, &view, &st), "warm view");
        view_total[r] = now_ms() - t;
        const double view_build = st.build_ms, view_solve = st.solve_ms;
        expect_equal(flow, flow_bk, "warm terminals marked, view");
        check(gcut_grid_verify(current, view, flow, NULL), "warm view certificate");
        copy_grid(gcut_grid_context_grid(cold_view), current);
        t = now_ms();
        check(gcut_grid_context_solve_view(cold_view, &flow, &view, &st), "cold view");
        cold_view_total[r] = now_ms() - t;
        expect_equal(flow, flow_bk, "cold context, view");
        check(gcut_grid_verify(current, view, flow, NULL), "cold view certificate");
        if (steps) {
            check(gcut_grid_context_get_info(warm_term, &after), "info");
            const int64_t cert_term = after.certified_stops - before_term.certified_stops;
            check(gcut_grid_context_get_info(warm_view, &after), "info");
            const int64_t cert_view = after.certified_stops - before_view.certified_stops;
            printf("step %d: warm marked %.3f ms; terminals marked %.3f ms (build %.3f, solve "
                   "%.3f, %lld relabels, certified %lld); view warm %.3f ms (build %.3f, solve "
                   "%.3f, certified %lld); cold %.3f ms, cold view %.3f ms\n",
                   r, warm_total[r], term_total[r], term_build[r], term_solve[r],
                   (long long)term_relabels_step, (long long)cert_term, view_total[r], view_build,
                   view_solve, (long long)cert_view, ctx_total[r], cold_view_total[r]);
        }
        expect_equal(flow_gr, flow_bk, "warm relabel first");
        check(gcut_grid_verify(current, labels, flow_gr, NULL), "warm relabel-first certificate");
    }
    printf("instance %s %lldx%lldx%lld conn %d, solver %s, %d repeats, %.1f%% of terminals "
           "changed per step%s (%lld nodes last step)\n",
           level == GCUT_SYNTH_HARD ? "hard" : "easy", (long long)w, (long long)h, (long long)depth,
           conn, solver, repeats, percent_x10 / 10.0, box ? " in one box" : " at random",
           (long long)changed_info);
    printf("context create: %.1f ms first (CUDA start-up included), %.1f ms next\n",
           create_first_ms, create_ms);
    printf("| what | total ms (median) | build/upload ms | solve ms | x bk total |\n");
    printf("|---|---:|---:|---:|---:|\n");
    const double bk_t = median(bk_total, repeats);
    printf("| bk build + solve (baseline) | %.2f | %.2f | %.2f | 1.00 |\n", bk_t,
           median(bk_build, repeats), median(bk_solve, repeats));
    const double one_t = median(one_total, repeats);
    printf("| %s one-shot gcut_grid_solve | %.2f | %.2f | %.2f | %.1f |\n", solver, one_t,
           median(one_build, repeats), median(one_solve, repeats), bk_t / one_t);
    const double ctx_t = median(ctx_total, repeats);
    printf("| %s context, cold (upload + solve) | %.2f | %.2f | %.2f | %.1f |\n", solver, ctx_t,
           median(ctx_build, repeats), median(ctx_solve, repeats), bk_t / ctx_t);
    const double warm_t = median(warm_total, repeats);
    printf("| %s context, warm, marked | %.2f | %.2f | %.2f | %.1f |\n", solver, warm_t,
           median(warm_build, repeats), median(warm_solve, repeats), bk_t / warm_t);
    const double term_t = median(term_total, repeats);
    printf("| %s context, warm, terminals marked | %.2f | %.2f | %.2f | %.1f |\n", solver, term_t,
           median(term_build, repeats), median(term_solve, repeats), bk_t / term_t);
    const double cmp_t = median(cmp_total, repeats);
    printf("| %s context, warm, compared | %.2f | %.2f | %.2f | %.1f |\n", solver, cmp_t,
           median(cmp_build, repeats), median(cmp_solve, repeats), bk_t / cmp_t);
    const double gr_t = median(gr_total, repeats);
    printf("| %s context, warm, marked, relabel first | %.2f | %.2f | %.2f | %.1f |\n", solver,
           gr_t, median(gr_build, repeats), median(gr_solve, repeats), bk_t / gr_t);
    printf("warm (marked) vs cold solve of the new problem through a context: %.2f x faster; "
           "sweeps %.1f vs %.1f, global relabels %.1f vs %.1f per solve\n",
           median(cold_new, repeats) / warm_t, (double)warm_sweeps / repeats,
           (double)cold_sweeps / repeats, (double)warm_relabels / repeats,
           (double)cold_relabels / repeats);
    printf("warm (terminals marked) vs cold: %.2f x faster; sweeps %.1f, global relabels %.1f "
           "per solve\n",
           median(cold_new, repeats) / term_t, (double)term_sweeps / repeats,
           (double)term_relabels / repeats);
    printf("relabel first: %.2f x faster than cold; sweeps %.1f, global relabels %.1f per solve\n",
           median(cold_new, repeats) / gr_t, (double)gr_sweeps / repeats,
           (double)gr_relabels / repeats);
    gcut_grid_context_info term_info, view_info;
    check(gcut_grid_context_get_info(warm_term, &term_info), "info");
    check(gcut_grid_context_get_info(warm_view, &view_info), "info");
    const double view_t = median(view_total, repeats),
                 cold_view_t = median(cold_view_total, repeats);
    printf("| %s context, warm, terminals marked, labels view | %.2f | | | %.1f |\n", solver,
           view_t, bk_t / view_t);
    printf("| %s context, cold, labels view | %.2f | | | %.1f |\n", solver, cold_view_t,
           bk_t / cold_view_t);
    printf("warm (terminals marked, labels view) vs cold (labels view): %.2f x faster\n",
           cold_view_t / view_t);
    printf("incremental warm starts finished: %lld of %d (terminals marked), %lld of %d (view)\n",
           (long long)term_info.incremental, repeats, (long long)view_info.incremental, repeats);
    printf("sparse phase, stops proven by its certificate: %lld of %d (terminals marked), %lld of "
           "%d (view)\n",
           (long long)term_info.sparse_stops, repeats, (long long)view_info.sparse_stops, repeats);
    printf("warm pull, stops proven by its certificate: %lld of %d (terminals marked), %lld of "
           "%d (view)\n",
           (long long)term_info.certified_stops, repeats, (long long)view_info.certified_stops,
           repeats);
    if (verbose) {
        /* One more step, told to the solver's verbose output (its phase times). */
        gcut_grid_context *vw = NULL, *vc = NULL;
        opt_warm.verbose = opt_cold.verbose = 1;
        check(gcut_grid_context_create(ndim, shape, conn, &opt_warm, &vw), "context");
        check(gcut_grid_context_create(ndim, shape, conn, &opt_cold, &vc), "context");
        copy_grid(gcut_grid_context_grid(vw), current);
        int64_t fv = 0, fc = 0;
        check(gcut_grid_context_solve(vw, &fv, labels, NULL), "verbose first");
        /* Four steps: labels to a caller's buffer, then through the view, twice. */
        for (int k = 0; k < 4; k++) {
            int64_t count = 0;
            int32_t *src = gcut_grid_terminal_data(gcut_grid_context_grid(vw), GCUT_SOURCE);
            new_box(percent_x10, ndim, dims, lo, hi);
            for (int64_t i = 0; i < n; i++)
                if (picked(i, percent_x10, box, dims, lo, hi)) {
                    marks[count++] = i;
                    src[i] = (int32_t)((double)src[i] * (0.5 + (double)(rng_next() % 1001) / 1000));
                }
            copy_grid(gcut_grid_context_grid(vc), gcut_grid_context_grid(vw));
            check(gcut_grid_context_mark_terminals(vw, marks, count), "marks");
            const char *way = k % 2 ? "the view" : "a caller's buffer";
            fprintf(stderr, "-- verbose: warm, terminals marked, labels to %s\n", way);
            t = now_ms();
            if (k % 2)
                check(gcut_grid_context_solve_view(vw, &fv, &view, NULL), "verbose warm");
            else
                check(gcut_grid_context_solve(vw, &fv, labels, NULL), "verbose warm");
            fprintf(stderr, "-- verbose: warm took %.3f ms (wall, labels to %s)\n", now_ms() - t,
                    way);
            fprintf(stderr, "-- verbose: cold\n");
            check(gcut_grid_context_solve(vc, &fc, labels, NULL), "verbose cold");
            expect_equal(fv, fc, "verbose warm vs cold");
        }
        gcut_grid_context_free(vw);
        gcut_grid_context_free(vc);
    }
    printf("flows: %s\n", failed ? "MISMATCH" : "all equal to bk's, every cut certified");
    gcut_grid_context_free(cold);
    gcut_grid_context_free(warm);
    gcut_grid_context_free(warm_cmp);
    gcut_grid_context_free(warm_gr);
    gcut_grid_context_free(warm_term);
    gcut_grid_context_free(warm_view);
    gcut_grid_context_free(cold_view);
    gcut_grid_free(current);
    gcut_grid_free(base);
    free(labels);
    free(marks);
    return failed;
}
