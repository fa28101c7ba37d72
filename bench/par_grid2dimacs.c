/* par_grid2dimacs.c - a gcut grid file as a DIMACS max-flow file through the public API
 * (gcut_grid_to_graph, gcut_dimacs_write), for the peers of bench/parallel_16core.sh: the same
 * numbering and arc order as the peers' grid2dimacs.py, in seconds instead of minutes. */
#include "gcut.h"

#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: par_grid2dimacs IN.grid OUT.max\n");
        return 2;
    }
    gcut_grid *grid = NULL;
    gcut_graph *graph = NULL;
    gcut_status st = gcut_grid_read(argv[1], &grid);
    if (st == GCUT_OK)
        st = gcut_grid_to_graph(grid, &graph);
    gcut_grid_free(grid);
    if (st == GCUT_OK)
        st = gcut_dimacs_write(graph, argv[2]);
    gcut_graph_free(graph);
    if (st != GCUT_OK) {
        fprintf(stderr, "par_grid2dimacs: %s\n", gcut_last_error());
        return 1;
    }
    return 0;
}
