/* qpbo_objects.c - `qpbo` and `pqpbo` on one multi-object segmentation energy made in process
 * (gcut_qpbo_objects; Jeppesen et al. 2021, section 4), for sizes whose text file would take
 * longer to read than to solve (10^8 nodes). Solvers rotate run by run; medians; every run's
 * energy, bound and labeled count checked equal. Public API only.
 *
 * usage: qpbo_objects --size WxH[xD] [--objects K] [--seed S] [--threads 1,2,4] [--repeats R]
 *                     [--no-serial]
 * prints a markdown table: solver, threads, build / solve / labels / total ms, bytes per node. */
#include "gcut.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CONFIGS = 16, MAX_REPEATS = 32 };

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
    long long w = 0, h = 0, d = 1;
    int objects = 16, repeats = 3;
    unsigned long long seed = 1;
    char threads_text[256] = "1,2";
    bool serial = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-serial") == 0) {
            serial = false;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "qpbo_objects: '%s' needs a value\n", a);
            return 2;
        }
        i++;
        if (strcmp(a, "--size") == 0) {
            int got = sscanf(v, "%lldx%lldx%lld", &w, &h, &d);
            if (got < 2) {
                fprintf(stderr, "qpbo_objects: --size '%s' is not WxH[xD]\n", v);
                return 2;
            }
            if (got == 2)
                d = 1;
        } else if (strcmp(a, "--objects") == 0) {
            objects = atoi(v);
        } else if (strcmp(a, "--seed") == 0) {
            seed = strtoull(v, NULL, 0);
        } else if (strcmp(a, "--repeats") == 0) {
            repeats = atoi(v);
        } else if (strcmp(a, "--threads") == 0) {
            snprintf(threads_text, sizeof threads_text, "%s", v);
        } else {
            fprintf(stderr, "qpbo_objects: unknown option '%s'\n", a);
            return 2;
        }
    }
    if (w < 2 || h < 2 || repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "usage: qpbo_objects --size WxH[xD] [--objects K] [--seed S] "
                        "[--threads 1,2,4] [--repeats R<=32] [--no-serial]\n");
        return 2;
    }
    /* Configurations: threads 0 = serial qpbo. */
    int config[MAX_CONFIGS], nc = 0;
    if (serial)
        config[nc++] = 0;
    for (char *t = strtok(threads_text, ","); t != NULL && nc < MAX_CONFIGS; t = strtok(NULL, ","))
        config[nc++] = atoi(t) > 0 ? atoi(t) : 1;
    gcut_qpbo *q = NULL;
    gcut_status st = gcut_qpbo_objects(w, h, d, objects, seed, &q);
    if (st != GCUT_OK) {
        fprintf(stderr, "qpbo_objects: %s (%s)\n", gcut_strerror(st), gcut_last_error());
        return 1;
    }
    const int64_t n = gcut_qpbo_num_nodes(q), m = gcut_qpbo_num_terms(q);
    const uint64_t energy_bytes = gcut_memory_in_use();
    int8_t *labels = malloc((size_t)n + 1);
    static double build[MAX_CONFIGS][MAX_REPEATS], solve[MAX_CONFIGS][MAX_REPEATS],
        label[MAX_CONFIGS][MAX_REPEATS], total[MAX_CONFIGS][MAX_REPEATS];
    uint64_t bytes[MAX_CONFIGS] = {0};
    gcut_qpbo_result ref;
    memset(&ref, 0, sizeof ref);
    bool have_ref = false;
    for (int r = 0; r < repeats; r++)
        for (int k = 0; k < nc; k++) {
            int c = (k + r) % nc;
            gcut_options opt;
            gcut_options_init(&opt);
            opt.solver = config[c] == 0 ? "qpbo" : "pqpbo";
            opt.threads = config[c];
            gcut_qpbo_result res;
            st = gcut_qpbo_solve(q, &opt, labels, &res);
            if (st != GCUT_OK) {
                fprintf(stderr, "qpbo_objects: %s: %s (%s)\n", opt.solver, gcut_strerror(st),
                        gcut_last_error());
                return 1;
            }
            if (!have_ref) {
                ref = res;
                have_ref = true;
            } else if (res.energy != ref.energy || res.lower_bound != ref.lower_bound ||
                       res.labeled != ref.labeled) {
                fprintf(stderr,
                        "qpbo_objects: %s (%d threads) disagrees: energy %" PRId64 " bound %" PRId64
                        " labeled %" PRId64 "\n",
                        opt.solver, config[c], res.energy, res.lower_bound, res.labeled);
                return 1;
            }
            build[c][r] = res.build_ms;
            solve[c][r] = res.solve_ms;
            label[c][r] = res.label_ms;
            total[c][r] = res.build_ms + res.solve_ms + res.label_ms;
            bytes[c] = res.bytes;
        }
    printf("objects %lldx%lldx%lld, %d objects, seed %llu: %" PRId64 " nodes, %" PRId64
           " terms, labeled %" PRId64 ", energy %" PRId64 ", bound %" PRId64
           "; energy object %.0f bytes/node; medians of %d\n\n",
           w, h, d, objects, seed, n, m, ref.labeled, ref.energy, ref.lower_bound,
           (double)energy_bytes / (double)(n > 0 ? n : 1), repeats);
    printf(
        "| solver | threads | build ms | solve ms | labels ms | total ms | solver bytes/node |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|\n");
    for (int c = 0; c < nc; c++)
        printf("| %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f |\n", config[c] ? "pqpbo" : "qpbo",
               config[c] ? config[c] : 1, median(build[c], repeats), median(solve[c], repeats),
               median(label[c], repeats), median(total[c], repeats),
               (double)bytes[c] / (double)(n > 0 ? n : 1));
    free(labels);
    gcut_qpbo_free(q);
    return 0;
}
