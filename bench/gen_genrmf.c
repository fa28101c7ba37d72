/* gen_genrmf.c - write a GENRMF max-flow instance (Goldfarb & Grigoriadis 1988; the DIMACS
 * challenge family) as a DIMACS file readable by `gcut maxflow`: b frames of a x a nodes,
 * in-frame capacity c2*a*a, inter-frame capacities in [c1, c2] (bench/general_gen.h). */
#include "general_gen.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: gen_genrmf A B C1 C2 SEED OUT.max   (e.g. 64 64 1 10000 1 g.max)\n"
                        "  A x A frames, B of them; OUT '-' = stdout\n");
        return 2;
    }
    int64_t a = atoll(argv[1]), b = atoll(argv[2]);
    long c1 = atol(argv[3]), c2 = atol(argv[4]);
    uint64_t seed = strtoull(argv[5], NULL, 10);
    if (a < 1 || b < 1 || c1 < 0 || c2 < c1 || c2 > INT32_MAX || (double)c2 * a * a > INT32_MAX) {
        fprintf(stderr, "gen_genrmf: need A, B >= 1, 0 <= C1 <= C2 and C2*A*A <= %d\n", INT32_MAX);
        return 2;
    }
    gcut_graph *g = NULL;
    gcut_status st = gen_genrmf(a, b, (int32_t)c1, (int32_t)c2, seed, &g);
    if (st == GCUT_OK)
        st = gcut_dimacs_write(g, argv[6]);
    if (st != GCUT_OK)
        fprintf(stderr, "gen_genrmf: %s: %s\n", gcut_status_name(st), gcut_last_error());
    gcut_graph_free(g);
    return st == GCUT_OK ? 0 : 1;
}
