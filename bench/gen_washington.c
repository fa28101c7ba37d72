/* gen_washington.c - write a Washington RLG (random level graph) max-flow instance, the
 * DIMACS challenge's wide and long families, as a DIMACS file readable by `gcut maxflow`:
 * LEVELS levels of ROWS nodes, 3 random arcs per node to the next level (bench/general_gen.h). */
#include "general_gen.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr,
                "usage: gen_washington ROWS LEVELS MAXCAP SEED OUT.max\n"
                "  wide: many rows, few levels (e.g. 65536 64); long: few rows, many levels\n"
                "  (e.g. 64 65536); OUT '-' = stdout\n");
        return 2;
    }
    int64_t rows = atoll(argv[1]), levels = atoll(argv[2]);
    long max_cap = atol(argv[3]);
    uint64_t seed = strtoull(argv[4], NULL, 10);
    if (rows < 1 || levels < 2 || max_cap < 1 || max_cap > INT32_MAX / 3) {
        fprintf(stderr, "gen_washington: need ROWS >= 1, LEVELS >= 2, 1 <= MAXCAP <= %d\n",
                INT32_MAX / 3);
        return 2;
    }
    gcut_graph *g = NULL;
    gcut_status st = gen_washington_rlg(rows, levels, (int32_t)max_cap, seed, &g);
    if (st == GCUT_OK)
        st = gcut_dimacs_write(g, argv[5]);
    if (st != GCUT_OK)
        fprintf(stderr, "gen_washington: %s: %s\n", gcut_status_name(st), gcut_last_error());
    gcut_graph_free(g);
    return st == GCUT_OK ? 0 : 1;
}
