/* band_bench.c - multilevel narrow-banded cuts (docs/BAND.md; Lattari 2010 3.5, 5.4) against the
 * full solves, in one process so that CUDA's start-up (paid once by any long-lived process) is
 * out of every timing: per synthetic case (gcut_synth_image + gcut_synth_seeds, the model
 * learnt from the seeds as `gcut segment` does), after one untimed warm-up of each GPU variant,
 * RUNS rounds of, in turn:
 *   full-gpu     the full solve on cuda-grid (the baseline of the GPU bar)
 *   band-gpu-dev the device pipeline: every level's capacities, projection, band and labels on
 *                the GPU, each level solved by cuda-grid as a masked grid (docs/BAND.md, "GPU")
 *   band-gpu-all the same with every tile of each masked level visited (GCUT_BAND_LIVE=0: the
 *                live-tile restriction off, for its before / after in one process)
 *   full-gpu-pageable, band-gpu-pageable  full-gpu and band-gpu-dev with the staged copies off
 *                (GCUT_STAGING=0: image, seeds and labels copied from pageable host memory, as
 *                before the fifth pass), for their before / after in one process; their own
 *                ratio is printed below the table
 *   band-gpu-unfused band-gpu-dev with the fourth pass's band selection kernels
 *                (GCUT_BAND_FUSED=0: projection, marks and dilations as separate passes with
 *                64-bit index divisions; sigma, coarsening and labels likewise)
 *   full-gpu-legacy, band-gpu-legacy  full-gpu and band-gpu-dev as the sixth session left them
 *                (GCUT_SEG_TABLES_LEGACY=1: the colour tables filled in two fork-joins with an
 *                exp per entry and uploaded in four copies; the pipeline with GCUT_BAND_LEAN=0
 *                too: waits after each level's capacities and labels, the coarsest capacities a
 *                warp per node), for the seventh pass's before / after in one process
 *   band-gpu-fat band-gpu-dev with GCUT_BAND_LEAN=0 only (the new tables, the old pipeline)
 *   full-gpu-nopool, band-gpu-nopool  full-gpu and band-gpu-dev with the tables' fill starting
 *                its threads per fill (GCUT_SEG_TABLES_POOL=0) instead of keeping them waiting
 *   band-gpu-bk  coarsest level on cuda-grid, bands on bk (host)
 *   band-gpu-gen coarsest level on cuda-grid, bands on cuda-general (device)
 *   band-cpu     coarsest level and bands on bk, host passes on THREADS threads
 *   band-cpu-1   the same on one thread
 *   full-bk      the full solve on bk (the CPU bar's baseline; the first BK_RUNS rounds only)
 * Time = the report's build + solve ("construction + solve": model tables, every level's
 * coarsening, band and graph, the solves; not the model fit, not the final energy evaluation),
 * medians. Every full flow is checked equal between cuda-grid and bk (exit 1 if not); every
 * banded mask is compared with the full cuda-grid mask (pixels that differ) and its energy with
 * the exact minimum (gap); per level: size, band nodes and share, build and solve ms.
 * --sigma S gives every variant the boundary term's sigma, so that none estimates it (the full
 * solve estimates it on the host, the device pipeline on the device: with --sigma the ratio is
 * that of the construction and solves alone); --sigma est: the image's own estimate (one untimed
 * full solve learns it), so the energy is the default one.
 * Usage: band_bench [--runs R] [--bk-runs B] [--levels L|auto] [--band D] [--threads T]
 *                   [--sigma S|est] [--variants LIST] WxH[xD]:easy|hard ...
 * LIST: comma-separated names from the list above (default all). */
#define _POSIX_C_SOURCE 200809L

#include "gcut.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    FULL_GPU,
    BAND_GPU_DEV,
    BAND_GPU_ALL,
    FULL_GPU_PAGEABLE,
    BAND_GPU_PAGEABLE,
    BAND_GPU_UNFUSED,
    FULL_GPU_LEGACY,
    BAND_GPU_LEGACY,
    BAND_GPU_FAT,
    FULL_GPU_NOPOOL,
    BAND_GPU_NOPOOL,
    BAND_GPU_BK,
    BAND_GPU_GEN,
    BAND_CPU,
    BAND_CPU_1,
    FULL_BK,
    NVAR
};
static const char *names[NVAR] = {
    "full-gpu",          "band-gpu-dev",     "band-gpu-all",    "full-gpu-pageable",
    "band-gpu-pageable", "band-gpu-unfused", "full-gpu-legacy", "band-gpu-legacy",
    "band-gpu-fat",      "full-gpu-nopool",  "band-gpu-nopool", "band-gpu-bk",
    "band-gpu-gen",      "band-cpu",         "band-cpu-1",      "full-bk"};

static bool on_gpu(int v) {
    return v == FULL_GPU || v == BAND_GPU_DEV || v == BAND_GPU_ALL || v == FULL_GPU_PAGEABLE ||
           v == BAND_GPU_PAGEABLE || v == BAND_GPU_UNFUSED || v == FULL_GPU_LEGACY ||
           v == BAND_GPU_LEGACY || v == BAND_GPU_FAT || v == FULL_GPU_NOPOOL ||
           v == BAND_GPU_NOPOOL || v == BAND_GPU_BK || v == BAND_GPU_GEN;
}

#define MAX_RUNS 32

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int count) {
    double s[MAX_RUNS];
    memcpy(s, v, (size_t)count * sizeof *s);
    qsort(s, (size_t)count, sizeof *s, cmp_double);
    return count % 2 ? s[count / 2] : (s[count / 2 - 1] + s[count / 2]) / 2;
}

typedef struct config {
    int runs, bk_runs, levels, band, threads;
    double sigma; /* > 0: given to every variant, so that none estimates it */
    bool use[NVAR];
} config;

/* One solve of variant v; mask and report out. */
static gcut_status solve(int v, const config *c, const gcut_image *img, const uint8_t *seeds,
                         uint8_t *mask, gcut_seg_report *r, double *wall) {
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    gcut_options o;
    gcut_options_init(&o);
    p.levels = v == FULL_GPU || v == FULL_GPU_PAGEABLE || v == FULL_GPU_LEGACY ||
                       v == FULL_GPU_NOPOOL || v == FULL_BK
                   ? 0
                   : c->levels;
    p.band = c->band;
    p.sigma = c->sigma;
    o.threads = v == BAND_CPU_1 ? 1 : c->threads;
    o.solver = on_gpu(v) ? "cuda-grid" : "bk";
    /* band-gpu-dev (-all) names no band solver: gcut's rule takes the device pipeline */
    p.band_solver = v == BAND_GPU_GEN ? "cuda-general"
                    : v == BAND_GPU_DEV || v == BAND_GPU_ALL || v == BAND_GPU_PAGEABLE ||
                            v == BAND_GPU_UNFUSED || v == BAND_GPU_LEGACY || v == BAND_GPU_FAT ||
                            v == BAND_GPU_NOPOOL
                        ? NULL
                        : "bk";
    if (v == BAND_GPU_ALL)
        setenv("GCUT_BAND_LIVE", "0", 1);
    if (v == FULL_GPU_PAGEABLE || v == BAND_GPU_PAGEABLE)
        setenv("GCUT_STAGING", "0", 1);
    if (v == BAND_GPU_UNFUSED)
        setenv("GCUT_BAND_FUSED", "0", 1);
    if (v == FULL_GPU_LEGACY || v == BAND_GPU_LEGACY)
        setenv("GCUT_SEG_TABLES_LEGACY", "1", 1);
    if (v == BAND_GPU_LEGACY || v == BAND_GPU_FAT)
        setenv("GCUT_BAND_LEAN", "0", 1);
    if (v == FULL_GPU_NOPOOL || v == BAND_GPU_NOPOOL)
        setenv("GCUT_SEG_TABLES_POOL", "0", 1);
    const double t0 = now_ms();
    gcut_status st = gcut_segment(img, seeds, &p, &o, mask, r);
    *wall = now_ms() - t0;
    if (v == BAND_GPU_ALL)
        unsetenv("GCUT_BAND_LIVE");
    unsetenv("GCUT_STAGING");
    unsetenv("GCUT_BAND_FUSED");
    unsetenv("GCUT_SEG_TABLES_LEGACY");
    unsetenv("GCUT_BAND_LEAN");
    unsetenv("GCUT_SEG_TABLES_POOL");
    if (st != GCUT_OK)
        fprintf(stderr, "band_bench: %s: %s\n", names[v], gcut_last_error());
    return st;
}

static int run_case(const config *given, int64_t w, int64_t h, int64_t d, gcut_synth_level level) {
    config cc = *given;
    const config *c = &cc;
    const int64_t n = w * h * d;
    gcut_image img;
    double t0 = now_ms();
    if (gcut_synth_image(w, h, d, 1, level, &img, NULL) != GCUT_OK) {
        fprintf(stderr, "band_bench: %s\n", gcut_last_error());
        return 1;
    }
    uint8_t *seeds = malloc((size_t)n);
    uint8_t *mask[NVAR];
    for (int v = 0; v < NVAR; v++)
        mask[v] = c->use[v] ? malloc((size_t)n) : NULL;
    if (seeds == NULL || gcut_synth_seeds(w, h, d, seeds) != GCUT_OK) {
        fprintf(stderr, "band_bench: seeds: out of memory\n");
        return 1;
    }
    char size[64];
    if (d > 1)
        snprintf(size, sizeof size, "%" PRId64 "^3", w);
    else
        snprintf(size, sizeof size, "%" PRId64 "x%" PRId64, w, h);
    const char *lv = level == GCUT_SYNTH_HARD ? "hard" : "easy";
    printf("\n### %s %s (%.3g M %s; synthesised in %.0f ms)\n", size, lv, (double)n / 1e6,
           d > 1 ? "voxels" : "pixels", now_ms() - t0);
    gcut_seg_report rep[NVAR], r;
    double cut[NVAR][MAX_RUNS], wall[NVAR][MAX_RUNS], wl;
    int count[NVAR] = {0};
    int status = 0;
    if (cc.sigma < 0) { /* --sigma est: the image's own estimate, given to every variant */
        const int v0 = c->use[FULL_GPU] ? FULL_GPU : FULL_BK;
        cc.sigma = 0;
        if (mask[v0] == NULL || solve(v0, c, &img, seeds, mask[v0], &r, &wl) != GCUT_OK)
            return 1;
        cc.sigma = r.sigma;
        printf("sigma given to every variant: %.17g (the estimate; no variant estimates it)\n",
               cc.sigma);
    }
    /* warm-up: CUDA start-up, the device pool, kernel loads */
    for (int v = 0; v < NVAR; v++)
        if (c->use[v] && on_gpu(v) && solve(v, c, &img, seeds, mask[v], &r, &wl) != GCUT_OK)
            return 1;
    for (int run = 0; run < c->runs; run++)
        for (int v = 0; v < NVAR; v++) {
            if (!c->use[v] || (v == FULL_BK && run >= c->bk_runs))
                continue;
            if (solve(v, c, &img, seeds, mask[v], &rep[v], &wl) != GCUT_OK)
                return 1;
            cut[v][count[v]] = rep[v].build_ms + rep[v].solve_ms;
            wall[v][count[v]++] = wl;
        }
    const int ref = c->use[FULL_GPU] ? FULL_GPU : FULL_BK;
    if (!c->use[ref] || count[ref] == 0) {
        fprintf(stderr, "band_bench: no full solve to compare with\n");
        return 1;
    }
    const int64_t exact = rep[ref].stats.flow;
    if (c->use[FULL_GPU] && c->use[FULL_BK] && count[FULL_BK] > 0 &&
        rep[FULL_GPU].stats.flow != rep[FULL_BK].stats.flow) {
        printf("FLOW MISMATCH: cuda-grid %" PRId64 ", bk %" PRId64 "\n", rep[FULL_GPU].stats.flow,
               rep[FULL_BK].stats.flow);
        status = 1;
    }
    const double base_gpu = count[FULL_GPU] ? median(cut[FULL_GPU], count[FULL_GPU]) : 0;
    const double base_bk = count[FULL_BK] ? median(cut[FULL_BK], count[FULL_BK]) : 0;
    printf("exact minimum (full %s) %" PRId64 "; times: construction + solve, ms, median of the "
           "runs in brackets\n\n",
           names[ref], exact);
    printf("| variant | ms | runs | wall ms (model incl.) | x full cuda-grid | x full bk | "
           "pixels differ from the full solve | energy gap |\n|---|---|---|---|---|---|---|---|\n");
    for (int v = 0; v < NVAR; v++) {
        if (count[v] == 0)
            continue;
        const double m = median(cut[v], count[v]);
        char runs[512] = "";
        for (int i = 0; i < count[v]; i++)
            snprintf(runs + strlen(runs), sizeof runs - strlen(runs), "%s%.1f", i ? "/" : "",
                     cut[v][i]);
        int64_t differ = 0;
        for (int64_t i = 0; i < n; i++)
            differ += mask[v][i] != mask[ref][i];
        const int64_t gap = rep[v].energy - exact;
        char xg[32] = "-", xb[32] = "-";
        if (base_gpu > 0)
            snprintf(xg, sizeof xg, "%.2fx", base_gpu / m);
        if (base_bk > 0)
            snprintf(xb, sizeof xb, "%.2fx", base_bk / m);
        printf("| %s | %.1f | %s | %.1f | %s | %s | %" PRId64 " (%.4f%%) | %" PRId64
               " (%.4f%%) |\n",
               names[v], m, runs, median(wall[v], count[v]), xg, xb, differ,
               100.0 * (double)differ / (double)n, gap,
               exact > 0 ? 100.0 * (double)gap / (double)exact : 0.0);
        if (gap < 0) {
            printf("ENERGY BELOW THE MINIMUM: %s\n", names[v]);
            status = 1;
        }
    }
    if (count[FULL_GPU_PAGEABLE] > 0 && count[BAND_GPU_PAGEABLE] > 0) {
        const double fp = median(cut[FULL_GPU_PAGEABLE], count[FULL_GPU_PAGEABLE]),
                     bp = median(cut[BAND_GPU_PAGEABLE], count[BAND_GPU_PAGEABLE]);
        printf("\npageable copies (GCUT_STAGING=0): banded %.1f ms against full %.1f ms: %.2fx\n",
               bp, fp, bp > 0 ? fp / bp : 0.0);
    }
    if (count[FULL_GPU_LEGACY] > 0 && count[BAND_GPU_LEGACY] > 0) {
        const double fl = median(cut[FULL_GPU_LEGACY], count[FULL_GPU_LEGACY]),
                     bl = median(cut[BAND_GPU_LEGACY], count[BAND_GPU_LEGACY]);
        printf("\nlegacy (the sixth session's tables and pipeline): banded %.1f ms against full "
               "%.1f ms: %.2fx\n",
               bl, fl, bl > 0 ? fl / bl : 0.0);
    }
    for (int v = 0; v < NVAR; v++) {
        if (count[v] == 0 || rep[v].levels == 0)
            continue;
        double levels_ms = 0;
        for (int k = 0; k <= rep[v].levels; k++)
            levels_ms += rep[v].level[k].build_ms + rep[v].level[k].solve_ms;
        printf("\n%s, last run: model tables %.1f ms; final energy (not timed above) %.1f ms; "
               "levels, coarsest first:\n",
               names[v], rep[v].build_ms + rep[v].solve_ms - levels_ms, rep[v].energy_ms);
        for (int k = rep[v].levels; k >= 0; k--) {
            const gcut_seg_level *l = &rep[v].level[k];
            const int64_t ln = l->width * l->height * l->depth;
            printf("  L%d %" PRId64 "x%" PRId64 "x%" PRId64 ": %s %" PRId64
                   " nodes (%.2f%%), build %.1f ms, solve %.1f ms (%s)\n",
                   k, l->width, l->height, l->depth, k == rep[v].levels ? "full" : "band", l->nodes,
                   100.0 * (double)l->nodes / (double)ln, l->build_ms, l->solve_ms, l->solver);
        }
    }
    gcut_image_free(&img);
    free(seeds);
    for (int v = 0; v < NVAR; v++)
        free(mask[v]);
    return status;
}

static int parse_variants(const char *list, bool use[NVAR]) {
    memset(use, 0, NVAR * sizeof use[0]);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ",")) {
        int v = 0;
        while (v < NVAR && strcmp(names[v], t) != 0)
            v++;
        if (v == NVAR) {
            fprintf(stderr, "band_bench: unknown variant '%s'\n", t);
            return 1;
        }
        use[v] = true;
    }
    return 0;
}

int main(int argc, char **argv) {
    config c = {3, 3, GCUT_SEG_LEVELS_AUTO, 2, 0, 0.0, {0}};
    for (int v = 0; v < NVAR; v++)
        c.use[v] = true;
    int status = 0, cases = 0;
    gcut_solver_info info;
    const bool gpu = gcut_solver_find("cuda-grid", &info) == GCUT_OK && info.available;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--runs") == 0 && val) {
            c.runs = atoi(argv[++i]);
        } else if (strcmp(a, "--bk-runs") == 0 && val) {
            c.bk_runs = atoi(argv[++i]);
        } else if (strcmp(a, "--levels") == 0 && val) {
            c.levels = strcmp(val, "auto") == 0 ? GCUT_SEG_LEVELS_AUTO : atoi(val);
            i++;
        } else if (strcmp(a, "--band") == 0 && val) {
            c.band = atoi(argv[++i]);
        } else if (strcmp(a, "--sigma") == 0 && val) {
            c.sigma = strcmp(val, "est") == 0 ? -1.0 : atof(val);
            i++;
        } else if (strcmp(a, "--threads") == 0 && val) {
            c.threads = atoi(argv[++i]);
        } else if (strcmp(a, "--variants") == 0 && val) {
            if (parse_variants(argv[++i], c.use))
                return 2;
        } else {
            long long w = 0, h = 0, d = 1;
            char lv[16] = "";
            const int got = sscanf(a, "%lldx%lldx%lld:%15s", &w, &h, &d, lv);
            if (got != 4) {
                d = 1;
                if (sscanf(a, "%lldx%lld:%15s", &w, &h, lv) != 3) {
                    fprintf(stderr, "band_bench: cannot read '%s' (WxH[xD]:easy|hard)\n", a);
                    return 2;
                }
            }
            if (c.runs < 1 || c.runs > MAX_RUNS || w < 1 || h < 1 || d < 1) {
                fprintf(stderr, "band_bench: runs 1..%d and positive sizes\n", MAX_RUNS);
                return 2;
            }
            if (!gpu) /* the GPU variants cannot run here */
                for (int v = 0; v < NVAR; v++)
                    c.use[v] = c.use[v] && !on_gpu(v);
            cases++;
            status |=
                run_case(&c, w, h, d, strcmp(lv, "hard") == 0 ? GCUT_SYNTH_HARD : GCUT_SYNTH_EASY);
            fflush(stdout);
        }
    }
    if (cases == 0) {
        fprintf(stderr, "usage: band_bench [--runs R] [--bk-runs B] [--levels L|auto] [--band D] "
                        "[--threads T] [--sigma S|est] [--variants LIST] WxH[xD]:easy|hard ...\n");
        return 2;
    }
    if (!gpu)
        printf("\n(no usable GPU here: the GPU variants could not run)\n");
    return status;
}
