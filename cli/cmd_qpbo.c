/* cmd_qpbo.c - `gcut qpbo FILE`: minimise a binary energy with non-submodular terms (QPBO,
 * Kolmogorov & Rother 2007; the parallel solver of Jeppesen et al. 2021) read from the text
 * format of docs/FORMATS.md; prints the labeled count, the lower bound and the energy. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: gcut qpbo [--solver qpbo|pqpbo] [--threads N] [--labels OUT] [--verbose]\n"
            "                 FILE.qpbo|-\n\n"
            "Minimise E(x) = sum_p E_p(x_p) + sum_pq E_pq(x_p, x_q) over binary x, terms\n"
            "submodular or not (QPBO). Nodes QPBO cannot decide stay unlabeled (-1); every\n"
            "labeled node agrees with some minimiser, and submodular energies come back fully\n"
            "labeled at their minimum. Input: 'p qpbo N M', 'u I E0 E1', 'e I J E00 E01 E10\n"
            "E11' (docs/FORMATS.md).\n\n"
            "options:\n"
            "  --solver S     qpbo (serial, default) or pqpbo (blocks solved and merged on\n"
            "                 threads; the same labels)\n"
            "  --threads N    pqpbo's threads (default: all cores)\n"
            "  --labels OUT   write one line per node: 0, 1 or -1\n"
            "  --verbose      solver progress on stderr\n"
            "  --help         this text\n\n"
            "prints 'c labeled K of N', 'c lower_bound LB' and 's E', E the energy of the labels\n"
            "with unlabeled nodes set to 0; timings: build_ms, solve_ms, label_ms (wall) and\n"
            "cpu_ms (CPU time of the whole solve, all threads).\n"
            "exit status: 0 solved, 1 bad input or failed solve, 2 usage error\n");
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of the process (all threads): on a shared machine it moves far less with other
 * people's load than wall time does. */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int cli_cmd_qpbo(int argc, char **argv) {
    const char *path = NULL, *labels_path = NULL;
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "qpbo";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--verbose") == 0) {
            opt.verbose = 1;
            continue;
        }
        bool takes_value =
            strcmp(a, "--solver") == 0 || strcmp(a, "--threads") == 0 || strcmp(a, "--labels") == 0;
        if (takes_value) {
            if (i + 1 >= argc) {
                cli_error("qpbo", GCUT_OK, "'%s' needs a value", a);
                return 2;
            }
            const char *v = argv[++i];
            if (strcmp(a, "--solver") == 0) {
                if (strcmp(v, "qpbo") != 0 && strcmp(v, "pqpbo") != 0 && strcmp(v, "auto") != 0) {
                    cli_error("qpbo", GCUT_OK, "--solver '%s' is not qpbo or pqpbo", v);
                    return 2;
                }
                opt.solver = v;
            } else if (strcmp(a, "--threads") == 0) {
                if (!cli_parse_int("qpbo", "--threads", v, 0, 256, &opt.threads))
                    return 2;
            } else {
                labels_path = v;
            }
            continue;
        }
        if (a[0] == '-' && a[1] != '\0') {
            cli_error("qpbo", GCUT_OK, "unknown option '%s' (see gcut qpbo --help)", a);
            return 2;
        }
        if (path != NULL) {
            cli_error("qpbo", GCUT_OK, "more than one input file ('%s' and '%s')", path, a);
            return 2;
        }
        path = a;
    }
    if (path == NULL) {
        usage(stderr);
        return 2;
    }
    const cli_path input = {"energy file", path}, output = {"--labels", labels_path};
    int code = cli_check_paths("qpbo", &input, 1, &output, 1);
    if (code != 0)
        return code;
    double t0 = now_ms();
    gcut_qpbo *q = NULL;
    gcut_status st = gcut_qpbo_read(path, &q);
    if (st != GCUT_OK) {
        cli_error("qpbo", st, "cannot read '%s'", path);
        return 1;
    }
    double read_ms = now_ms() - t0;
    int64_t n = gcut_qpbo_num_nodes(q);
    int8_t *labels = cli_alloc((size_t)n + 1, "labels");
    if (labels == NULL) {
        cli_error("qpbo", GCUT_ERR_NOMEM, "labels of %" PRId64 " nodes", n);
        gcut_qpbo_free(q);
        return 1;
    }
    gcut_qpbo_result r;
    double cpu0 = cpu_ms();
    st = gcut_qpbo_solve(q, &opt, labels, &r);
    double solve_cpu = cpu_ms() - cpu0;
    if (st != GCUT_OK) {
        cli_error("qpbo", st, "solve failed");
        gcut_free(labels);
        gcut_qpbo_free(q);
        return 1;
    }
    printf("c nodes %" PRId64 " terms %" PRId64 "\n", n, gcut_qpbo_num_terms(q));
    printf("c solver %s threads %d blocks %" PRId64 " merges %" PRId64 " stage2 %s\n", r.solver,
           r.threads, r.blocks, r.merges, r.stage2 ? "yes" : "no");
    printf("c read_ms %.1f\nc build_ms %.1f\nc solve_ms %.1f\nc label_ms %.1f\n", read_ms,
           r.build_ms, r.solve_ms, r.label_ms);
    printf("c cpu_ms %.1f\n", solve_cpu);
    printf("c solver_bytes %" PRIu64 "\n", r.bytes);
    printf("c labeled %" PRId64 " of %" PRId64 "\n", r.labeled, n);
    printf("c lower_bound %" PRId64 "\n", r.lower_bound);
    printf("s %" PRId64 "\n", r.energy);
    int rc = 0;
    if (labels_path != NULL) {
        /* Through a temporary file renamed when the command succeeds (cli_out.c). */
        FILE *f = cli_out_open("qpbo", labels_path);
        if (f == NULL) {
            rc = 1;
        } else {
            for (int64_t p = 0; p < n; p++)
                fprintf(f, "%d\n", labels[p]);
            rc = cli_out_close("qpbo", f, labels_path);
        }
    }
    gcut_free(labels);
    gcut_qpbo_free(q);
    return rc;
}
