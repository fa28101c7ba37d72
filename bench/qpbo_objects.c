/* qpbo_objects.c - `qpbo` and `pqpbo` on one multi-object segmentation energy made in process
 * (gcut_qpbo_objects; Jeppesen et al. 2021, section 4), for sizes whose text file would take
 * longer to read than to solve (10^7-10^8 nodes), optionally against Kolmogorov's QPBO v1.4
 * (thinqpbo, bench/qpbo_kolmogorov.py, its own process per run: the energy read whole from a
 * binary file, then Kolmogorov's build loop, Solve and ComputeWeakPersistencies timed in C).
 * Configurations rotate run by run; medians; every run's energy, bound and labeled count
 * checked equal (Kolmogorov's energy computed here from the labels it writes). Public API only.
 *
 * usage: qpbo_objects --size WxH[xD] [--objects K] [--seed S] [--threads 1,2,4] [--repeats R]
 *                     [--no-serial] [--kolmogorov DRIVER.py [--kfile PATH]] [--profile]
 *                     [--csv FILE]
 * prints a markdown table: solver, threads, build / solve / labels / total ms (gcut's own
 * timers), call ms (wall time of the whole gcut_qpbo_solve call, its normal-form pass over the
 * terms and its energy evaluation included), three ratios (Kolmogorov's Solve + weak
 * persistencies against gcut's total and call, the conservative ones; Kolmogorov's build +
 * solve against gcut's call, like for like), bytes per node. Kolmogorov's row: build = its
 * constructor and AddNode/AddUnaryTerm/AddPairwiseTerm loop, total = solve + weak only,
 * call = build + total. --profile:
 * one more pqpbo run at the largest thread count with GCUT_PBK_PROFILE=1 (phases on stderr). */
#define _POSIX_C_SOURCE 200809L
#include "gcut.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAX_CONFIGS = 16, MAX_REPEATS = 32, KOLMOGOROV = -1 };

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    double *c = malloc((size_t)n * sizeof *c);
    if (c == NULL)
        return v[0];
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* gcut's text format (docs/FORMATS.md) -> the binary energy bench/qpbo_kolmogorov_drv.c reads
 * ("GQK1", int64 n, nu, m, then nu x int32 {node, E0, E1} and m x int32 {i, j, E00..E11},
 * 0-based); `b` lines (blocks) have no counterpart and are dropped. */
static int to_kolmogorov(const char *from, const char *to) {
    FILE *in = fopen(from, "r"), *out = fopen(to, "wb");
    if (in == NULL || out == NULL) {
        if (in)
            fclose(in);
        if (out)
            fclose(out);
        return -1;
    }
    int64_t head[3] = {0, 0, 0};
    bool ok = fwrite("GQK1", 1, 4, out) == 4 && fwrite(head, sizeof head[0], 3, out) == 3;
    char line[256];
    while (ok && fgets(line, sizeof line, in) != NULL) {
        char *s = line + 1, *end;
        long long v[6];
        int k = 0;
        if (line[0] == 'p') {
            s += strspn(s, " ");
            s += strcspn(s, " "); /* "qpbo" */
        } else if (line[0] != 'u' && line[0] != 'e') {
            continue;
        }
        for (; k < 6; k++) {
            v[k] = strtoll(s, &end, 10);
            if (end == s)
                break;
            s = end;
        }
        if (line[0] == 'p' && k == 2) {
            head[0] = v[0];
        } else if (line[0] == 'u' && k == 3) {
            /* gcut sums a node's unary lines in 64 bits; Kolmogorov's QPBO<int> adds int32s */
            int32_t r[3] = {(int32_t)(v[0] - 1), (int32_t)v[1], (int32_t)v[2]};
            ok = v[0] - 1 <= INT32_MAX && fwrite(r, sizeof r, 1, out) == 1;
            head[1]++;
        } else if (line[0] == 'e' && k == 6) {
            int32_t r[6] = {(int32_t)(v[0] - 1), (int32_t)(v[1] - 1), (int32_t)v[2],
                            (int32_t)v[3],       (int32_t)v[4],       (int32_t)v[5]};
            ok = v[0] - 1 <= INT32_MAX && v[1] - 1 <= INT32_MAX && fwrite(r, sizeof r, 1, out) == 1;
            head[2]++;
        }
    }
    fclose(in);
    ok = ok && fseek(out, 4, SEEK_SET) == 0 && fwrite(head, sizeof head[0], 3, out) == 3;
    return fclose(out) == 0 && ok ? 0 : -1;
}

typedef struct kolmogorov_run {
    double build_ms, solve_ms, weak_ms, rss_bytes;
    int64_t labeled, lower_bound, energy;
} kolmogorov_run;

/* One run of the driver in its own process; its labels come back through a file. */
static int run_kolmogorov(const char *driver, const char *kfile, const gcut_qpbo *q,
                          kolmogorov_run *r) {
    const int64_t n = gcut_qpbo_num_nodes(q);
    char labels_path[4096], cmd[8192];
    snprintf(labels_path, sizeof labels_path, "%s.labels", kfile);
    snprintf(cmd, sizeof cmd, "python3 '%s' '%s' --labels '%s'", driver, kfile, labels_path);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    memset(r, 0, sizeof *r);
    r->labeled = r->lower_bound = -1;
    char line[512];
    while (fgets(line, sizeof line, p) != NULL) {
        double x;
        long long a;
        if (sscanf(line, "c build_ms %lf", &x) == 1)
            r->build_ms = x;
        else if (sscanf(line, "c solve_ms %lf", &x) == 1)
            r->solve_ms = x;
        else if (sscanf(line, "c weak_ms %lf", &x) == 1)
            r->weak_ms = x;
        else if (sscanf(line, "c rss_bytes %lf", &x) == 1)
            r->rss_bytes = x;
        else if (sscanf(line, "c labeled %lld", &a) == 1)
            r->labeled = a;
        else if (sscanf(line, "c lower_bound %lld", &a) == 1)
            r->lower_bound = a;
    }
    if (pclose(p) != 0)
        return -1;
    int8_t *labels = malloc((size_t)n + 1);
    FILE *f = fopen(labels_path, "rb");
    size_t got = f != NULL && labels != NULL ? fread(labels, 1, (size_t)n, f) : 0;
    if (f)
        fclose(f);
    remove(labels_path);
    int ok = got == (size_t)n;
    if (ok) {
        for (int64_t i = 0; i < n; i++)
            if (labels[i] != 0 && labels[i] != 1)
                labels[i] = 0; /* unlabeled as 0, as `gcut qpbo` scores them */
        ok = gcut_qpbo_energy(q, labels, &r->energy) == GCUT_OK;
    }
    free(labels);
    return ok ? 0 : -1;
}

int main(int argc, char **argv) {
    long long w = 0, h = 0, d = 1;
    int objects = 16, repeats = 3;
    unsigned long long seed = 1;
    char threads_text[256] = "1,2";
    const char *driver = NULL, *kfile_arg = NULL, *csv_path = NULL;
    bool serial = true, profile = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-serial") == 0) {
            serial = false;
            continue;
        }
        if (strcmp(a, "--profile") == 0) {
            profile = true;
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
        } else if (strcmp(a, "--kolmogorov") == 0) {
            driver = v;
        } else if (strcmp(a, "--kfile") == 0) {
            kfile_arg = v;
        } else if (strcmp(a, "--csv") == 0) {
            csv_path = v;
        } else {
            fprintf(stderr, "qpbo_objects: unknown option '%s'\n", a);
            return 2;
        }
    }
    if (w < 2 || h < 2 || repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "usage: qpbo_objects --size WxH[xD] [--objects K] [--seed S] "
                        "[--threads 1,2,4] [--repeats R<=32] [--no-serial] [--kolmogorov "
                        "DRIVER.py [--kfile PATH]] [--profile] [--csv FILE]\n");
        return 2;
    }
    /* Configurations: threads 0 = serial qpbo, KOLMOGOROV = thinqpbo. */
    int config[MAX_CONFIGS], nc = 0, max_threads = 1;
    if (serial)
        config[nc++] = 0;
    for (char *t = strtok(threads_text, ","); t != NULL && nc < MAX_CONFIGS - 1;
         t = strtok(NULL, ",")) {
        config[nc] = atoi(t) > 0 ? atoi(t) : 1;
        if (config[nc] > max_threads)
            max_threads = config[nc];
        nc++;
    }
    double t0 = now_ms();
    gcut_qpbo *q = NULL;
    gcut_status st = gcut_qpbo_objects(w, h, d, objects, seed, &q);
    if (st != GCUT_OK) {
        fprintf(stderr, "qpbo_objects: %s (%s)\n", gcut_strerror(st), gcut_last_error());
        return 1;
    }
    fprintf(stderr, "qpbo_objects: energy made in %.0f ms\n", now_ms() - t0);
    const int64_t n = gcut_qpbo_num_nodes(q), m = gcut_qpbo_num_terms(q);
    const uint64_t energy_bytes = gcut_memory_in_use();
    char kfile[4096] = "";
    if (driver != NULL) {
        if (kfile_arg != NULL)
            snprintf(kfile, sizeof kfile, "%s", kfile_arg);
        else
            snprintf(kfile, sizeof kfile, "/tmp/qpbo_objects_%ld.k", (long)getpid());
        char gfile[4200];
        snprintf(gfile, sizeof gfile, "%s.gcut", kfile);
        t0 = now_ms();
        st = gcut_qpbo_write(q, gfile);
        if (st != GCUT_OK || to_kolmogorov(gfile, kfile) != 0) {
            fprintf(stderr, "qpbo_objects: cannot write %s for Kolmogorov's QPBO (%s)\n", kfile,
                    gcut_last_error());
            return 1;
        }
        remove(gfile);
        fprintf(stderr, "qpbo_objects: %s written in %.0f ms\n", kfile, now_ms() - t0);
        config[nc++] = KOLMOGOROV;
    }
    int8_t *labels = malloc((size_t)n + 1);
    static double build[MAX_CONFIGS][MAX_REPEATS], solve[MAX_CONFIGS][MAX_REPEATS],
        label[MAX_CONFIGS][MAX_REPEATS], total[MAX_CONFIGS][MAX_REPEATS],
        call[MAX_CONFIGS][MAX_REPEATS];
    double bytes[MAX_CONFIGS] = {0};
    gcut_qpbo_result ref;
    memset(&ref, 0, sizeof ref);
    bool have_ref = false;
    for (int r = 0; r < repeats; r++)
        for (int k = 0; k < nc; k++) {
            int c = (k + r) % nc;
            int64_t energy, bound, labeled;
            if (config[c] == KOLMOGOROV) {
                kolmogorov_run kr;
                if (run_kolmogorov(driver, kfile, q, &kr) != 0) {
                    fprintf(stderr, "qpbo_objects: Kolmogorov's QPBO run failed\n");
                    return 1;
                }
                energy = kr.energy;
                bound = kr.lower_bound;
                labeled = kr.labeled;
                build[c][r] = kr.build_ms;
                solve[c][r] = kr.solve_ms;
                label[c][r] = kr.weak_ms;
                /* total: its solve alone (its graph built while terms are added, untimed);
                 * call: constructor + AddNode/AddUnaryTerm/AddPairwiseTerm + solve + weak */
                total[c][r] = kr.solve_ms + kr.weak_ms;
                call[c][r] = kr.build_ms + kr.solve_ms + kr.weak_ms;
                bytes[c] = kr.rss_bytes;
            } else {
                gcut_options opt;
                gcut_options_init(&opt);
                opt.solver = config[c] == 0 ? "qpbo" : "pqpbo";
                opt.threads = config[c];
                gcut_qpbo_result res;
                double c0 = now_ms();
                st = gcut_qpbo_solve(q, &opt, labels, &res);
                call[c][r] = now_ms() - c0;
                if (st != GCUT_OK) {
                    fprintf(stderr, "qpbo_objects: %s: %s (%s)\n", opt.solver, gcut_strerror(st),
                            gcut_last_error());
                    return 1;
                }
                energy = res.energy;
                bound = res.lower_bound;
                labeled = res.labeled;
                build[c][r] = res.build_ms;
                solve[c][r] = res.solve_ms;
                label[c][r] = res.label_ms;
                total[c][r] = res.build_ms + res.solve_ms + res.label_ms;
                bytes[c] = (double)res.bytes + (double)energy_bytes;
                if (!have_ref) {
                    ref = res;
                    have_ref = true;
                }
            }
            if (have_ref &&
                (energy != ref.energy || bound != ref.lower_bound || labeled != ref.labeled)) {
                fprintf(
                    stderr,
                    "qpbo_objects: config %d disagrees: energy %" PRId64 " bound %" PRId64
                    " labeled %" PRId64 " (first gcut run: %" PRId64 " %" PRId64 " %" PRId64 ")\n",
                    config[c], energy, bound, labeled, ref.energy, ref.lower_bound, ref.labeled);
                return 1;
            }
        }
    if (driver != NULL && kfile_arg == NULL)
        remove(kfile);
    double kol = 0, kol_call = 0;
    for (int c = 0; c < nc; c++)
        if (config[c] == KOLMOGOROV) {
            kol = median(total[c], repeats);
            kol_call = median(call[c], repeats);
        }
    printf("objects %lldx%lldx%lld, %d objects, seed %llu: %" PRId64 " nodes, %" PRId64
           " terms, labeled %" PRId64 ", energy %" PRId64 ", bound %" PRId64
           "; energy object %.0f bytes/node; medians of %d\n\n",
           w, h, d, objects, seed, n, m, ref.labeled, ref.energy, ref.lower_bound,
           (double)energy_bytes / (double)(n > 0 ? n : 1), repeats);
    printf("| solver | threads | build ms | solve ms | labels ms | total ms | call ms |%s "
           "bytes/node |\n",
           kol > 0 ? " K solve / total | K solve / call | K build+solve / call |" : "");
    printf("|---|---:|---:|---:|---:|---:|---:|%s---:|\n", kol > 0 ? "---:|---:|---:|" : "");
    FILE *csv = csv_path != NULL ? fopen(csv_path, "a") : NULL;
    for (int c = 0; c < nc; c++) {
        const char *name = config[c] == KOLMOGOROV ? "kolmogorov"
                           : config[c] == 0        ? "qpbo"
                                                   : "pqpbo";
        int thr = config[c] > 0 ? config[c] : 1;
        double tot = median(total[c], repeats), cl = median(call[c], repeats);
        printf("| %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f |", name, thr,
               median(build[c], repeats), median(solve[c], repeats), median(label[c], repeats), tot,
               cl);
        if (kol > 0)
            printf(" %.2f | %.2f | %.2f |", kol / tot, kol / cl, kol_call / cl);
        printf(" %.0f |\n", bytes[c] / (double)(n > 0 ? n : 1));
        if (csv != NULL)
            fprintf(csv, "%lldx%lldx%lld:%d,%" PRId64 ",%s,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.0f\n", w,
                    h, d, objects, n, name, thr, median(build[c], repeats),
                    median(solve[c], repeats), median(label[c], repeats), tot, cl,
                    bytes[c] / (double)(n > 0 ? n : 1));
    }
    if (csv != NULL)
        fclose(csv);
    fflush(stdout);
    if (profile) {
        setenv("GCUT_PBK_PROFILE", "1", 1);
        gcut_options opt;
        gcut_options_init(&opt);
        opt.solver = "pqpbo";
        opt.threads = max_threads;
        gcut_qpbo_result res;
        fprintf(stderr, "qpbo_objects: profile of pqpbo at %d threads\n", max_threads);
        double c0 = now_ms();
        st = gcut_qpbo_solve(q, &opt, labels, &res);
        fprintf(stderr, "profile: call %.2f ms, build %.2f, solve %.2f, labels %.2f\n",
                now_ms() - c0, res.build_ms, res.solve_ms, res.label_ms);
        unsetenv("GCUT_PBK_PROFILE");
    }
    free(labels);
    gcut_qpbo_free(q);
    return 0;
}
