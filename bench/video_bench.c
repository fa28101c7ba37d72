/* video_bench.c - gcut_video's per-frame cost in memory (no file codecs): the synthetic test
 * video (Garrett & Saito 2009's setting: each frame from the previous silhouette) through
 * several solver configurations, alternately (A B C A B C ...), medians of the repeats; per
 * configuration frames per second of the segmentation itself (colour model, seeds, energy
 * build, cut), its stages, the accuracy against the generator's truth, and per frame the flow
 * and mask against a reference configuration (same energy while the masks agree: equal flows).
 *   video_bench [--sizes WxH,...] [--frames N] [--reps R] [--level easy|hard] [--threads T]
 *               [--configs "NAME=SOLVER:band|full[:FRAMES];..."] [--ref NAME] [--base NAME]
 * Defaults: 640x480,1280x720,1920x1080; 30 frames; 3 repeats; easy; configs
 * "gpu=cuda-grid:full;bk-band=bk:band;bk-full=bk:full;cpupr-full=cpu-pr:full:10"; flows and
 * masks against bk-full; fps ratios against bk-band. Timing lives here, never in tests. */
#include "gcut.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CONFIGS 8
#define MAX_REPS 15

typedef struct config {
    char name[32], solver[32];
    int band, frames;
    double ms[MAX_REPS], model[MAX_REPS], build[MAX_REPS], solve[MAX_REPS], create[MAX_REPS];
    int64_t *flow;  /* per frame, rep 0 */
    uint8_t *masks; /* per frame, rep 0 */
    double iou;
    int warm_frames;
    int failed;
} config;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double median(const double *a, int n) {
    double b[MAX_REPS];
    memcpy(b, a, (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (b[j] < b[i]) {
                double t = b[i];
                b[i] = b[j];
                b[j] = t;
            }
    return b[n / 2];
}

static int parse_configs(const char *spec, config *cfg) {
    int count = 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, ";", &save); tok != NULL && count < MAX_CONFIGS;
         tok = strtok_r(NULL, ";", &save)) {
        config *c = &cfg[count];
        memset(c, 0, sizeof *c);
        char kind[16] = "";
        int frames = 0;
        char *eq = strchr(tok, '=');
        if (eq == NULL)
            return -1;
        *eq = '\0';
        snprintf(c->name, sizeof c->name, "%s", tok);
        char *rest = eq + 1, *colon = strchr(rest, ':');
        if (colon == NULL)
            return -1;
        *colon = '\0';
        snprintf(c->solver, sizeof c->solver, "%s", rest);
        if (sscanf(colon + 1, "%15[^:]:%d", kind, &frames) < 1)
            return -1;
        c->band = strcmp(kind, "band") == 0;
        c->frames = frames;
        count++;
    }
    return count;
}

int main(int argc, char **argv) {
    const char *sizes = "640x480,1280x720,1920x1080";
    const char *configs = "gpu=cuda-grid:full;bk-band=bk:band;bk-full=bk:full;"
                          "cpupr-full=cpu-pr:full:10";
    const char *ref_name = "bk-full", *base_name = "bk-band";
    int frames = 30, reps = 3, threads = 0;
    gcut_synth_level level = GCUT_SYNTH_EASY;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const int more = i + 1 < argc;
        if (strcmp(a, "--sizes") == 0 && more)
            sizes = argv[++i];
        else if (strcmp(a, "--frames") == 0 && more)
            frames = atoi(argv[++i]);
        else if (strcmp(a, "--reps") == 0 && more)
            reps = atoi(argv[++i]);
        else if (strcmp(a, "--threads") == 0 && more)
            threads = atoi(argv[++i]);
        else if (strcmp(a, "--level") == 0 && more)
            level = strcmp(argv[++i], "hard") == 0 ? GCUT_SYNTH_HARD : GCUT_SYNTH_EASY;
        else if (strcmp(a, "--configs") == 0 && more)
            configs = argv[++i];
        else if (strcmp(a, "--ref") == 0 && more)
            ref_name = argv[++i];
        else if (strcmp(a, "--base") == 0 && more)
            base_name = argv[++i];
        else {
            fprintf(stderr, "video_bench: unknown argument %s (see the file's header)\n", a);
            return 2;
        }
    }
    if (frames < 2 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "video_bench: need --frames >= 2 and --reps in 1..%d\n", MAX_REPS);
        return 2;
    }
    config cfg[MAX_CONFIGS];
    const int nc = parse_configs(configs, cfg);
    if (nc <= 0) {
        fprintf(stderr, "video_bench: bad --configs '%s'\n", configs);
        return 2;
    }
    printf("# video_bench: %d frames (%s), %d repeats, configurations alternately, threads %d\n",
           frames, level == GCUT_SYNTH_HARD ? "hard" : "easy", reps, threads);
    printf("# ms/frame: gcut_video_push_frame wall per propagated frame (frame 0 is the given "
           "mask), median of the repeats; fps = 1000 / ms; stages likewise\n");
    printf("%-10s %-11s %8s %8s %7s %8s %8s %8s %9s %7s %10s %10s %5s\n", "size", "config",
           "ms/frame", "fps", "x base", "model", "build", "solve", "create ms", "IoU", "flows=ref",
           "masks=ref", "warm");
    char sbuf[512];
    snprintf(sbuf, sizeof sbuf, "%s", sizes);
    int status = 0;
    for (char *save = NULL, *tok = strtok_r(sbuf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        int64_t w = 0, h = 0;
        if (sscanf(tok, "%" SCNd64 "x%" SCNd64, &w, &h) != 2 || w < 2 || h < 2) {
            fprintf(stderr, "video_bench: bad size %s\n", tok);
            return 2;
        }
        const int64_t n = w * h;
        gcut_image *img = calloc((size_t)frames, sizeof *img);
        uint8_t *truth = malloc((size_t)(n * frames)), *mask = malloc((size_t)n);
        for (int k = 0; k < frames; k++)
            if (gcut_video_synth_frame(w, h, 1, k, level, &img[k], truth + k * n) != GCUT_OK) {
                fprintf(stderr, "video_bench: %s\n", gcut_last_error());
                return 1;
            }
        for (int c = 0; c < nc; c++) {
            cfg[c].flow = calloc((size_t)frames, sizeof(int64_t));
            cfg[c].masks = calloc((size_t)(frames * n), 1);
            cfg[c].failed = 0;
            cfg[c].iou = 0;
            cfg[c].warm_frames = 0;
        }
        for (int r = 0; r < reps; r++)
            for (int c = 0; c < nc; c++) {
                config *C = &cfg[c];
                const int nf = C->frames > 0 && C->frames < frames ? C->frames : frames;
                gcut_video_params p;
                gcut_video_params_init(&p);
                p.restrict_band = C->band;
                gcut_options o;
                gcut_options_init(&o);
                o.solver = C->solver;
                o.threads = threads;
                gcut_video *v = NULL;
                double t0 = now_ms();
                if (C->failed || gcut_video_create(w, h, &p, &o, &v) != GCUT_OK) {
                    if (!C->failed)
                        fprintf(stderr, "%s: %s\n", C->name, gcut_last_error());
                    C->failed = 1;
                    continue;
                }
                C->create[r] = now_ms() - t0;
                double total = 0, model = 0, build = 0, solve = 0, iou = 0;
                for (int k = 0; k < nf; k++) {
                    gcut_video_report rep;
                    t0 = now_ms();
                    gcut_status st = gcut_video_push_frame(v, &img[k], k == 0 ? truth : NULL,
                                                           GCUT_VIDEO_INIT_MASK, &rep);
                    const double dt = now_ms() - t0;
                    if (st != GCUT_OK) {
                        fprintf(stderr, "%s frame %d: %s\n", C->name, k, gcut_last_error());
                        C->failed = 1;
                        status = 1;
                        break;
                    }
                    gcut_video_get_mask(v, mask);
                    if (k > 0) {
                        total += dt;
                        model += rep.model_ms;
                        build += rep.build_ms;
                        solve += rep.solve_ms;
                    }
                    if (r == 0) {
                        C->flow[k] = rep.flow;
                        memcpy(C->masks + k * n, mask, (size_t)n);
                        C->warm_frames += rep.warm;
                        int64_t inter = 0, uni = 0;
                        const uint8_t *t = truth + k * n;
                        for (int64_t i = 0; i < n; i++) {
                            inter += mask[i] && t[i];
                            uni += mask[i] || t[i];
                        }
                        iou += uni > 0 ? (double)inter / (double)uni : 1.0;
                    }
                }
                gcut_video_free(v);
                C->ms[r] = total / (nf - 1);
                C->model[r] = model / (nf - 1);
                C->build[r] = build / (nf - 1);
                C->solve[r] = solve / (nf - 1);
                if (r == 0)
                    C->iou = iou / nf;
            }
        const config *ref = NULL, *base = NULL;
        for (int c = 0; c < nc; c++) {
            if (strcmp(cfg[c].name, ref_name) == 0 && !cfg[c].failed)
                ref = &cfg[c];
            if (strcmp(cfg[c].name, base_name) == 0 && !cfg[c].failed)
                base = &cfg[c];
        }
        for (int c = 0; c < nc; c++) {
            config *C = &cfg[c];
            if (C->failed) {
                printf("%-10s %-11s failed\n", tok, C->name);
                continue;
            }
            const int nf = C->frames > 0 && C->frames < frames ? C->frames : frames;
            /* Frames both ran. */
            int nr = nf;
            if (ref != NULL && ref->frames > 0 && ref->frames < nr)
                nr = ref->frames;
            /* Flows compared while the masks so far agree (the same energy); masks all frames. */
            int flows_eq = 0, flows_n = 0, masks_eq = 0;
            if (ref != NULL && !C->band) {
                for (int k = 0; k < nr; k++) {
                    flows_n++;
                    if (C->flow[k] != ref->flow[k])
                        break;
                    flows_eq++;
                    if (memcmp(C->masks + k * n, ref->masks + k * n, (size_t)n) != 0)
                        break;
                }
            }
            if (ref != NULL)
                for (int k = 0; k < nr; k++)
                    masks_eq += memcmp(C->masks + k * n, ref->masks + k * n, (size_t)n) == 0;
            const double ms = median(C->ms, reps);
            char ratio[16] = "-", flows[24] = "-", masks[24] = "-";
            if (base != NULL)
                snprintf(ratio, sizeof ratio, "%.2fx", median(base->ms, reps) / ms);
            if (ref != NULL && !C->band)
                snprintf(flows, sizeof flows, "%d/%d", flows_eq, flows_n);
            if (ref != NULL)
                snprintf(masks, sizeof masks, "%d/%d", masks_eq, nr);
            printf("%-10s %-11s %8.2f %8.1f %7s %8.2f %8.2f %8.2f %9.1f %7.4f %10s %10s %5d\n", tok,
                   C->name, ms, 1000.0 / ms, ratio, median(C->model, reps), median(C->build, reps),
                   median(C->solve, reps), median(C->create, reps), C->iou, flows, masks,
                   C->warm_frames);
            if (ref != NULL && !C->band && flows_eq < flows_n)
                status = 1; /* a flow that differs from the reference on the same energy */
        }
        fflush(stdout);
        for (int c = 0; c < nc; c++) {
            free(cfg[c].flow);
            free(cfg[c].masks);
        }
        for (int k = 0; k < frames; k++)
            gcut_image_free(&img[k]);
        free(img);
        free(truth);
        free(mask);
    }
    return status;
}
