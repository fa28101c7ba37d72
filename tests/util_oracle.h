/* util_oracle.h - independent answers every solver test checks against: brute-force min cut
 * over all labelings (tiny graphs), a plain Dinic max-flow (Dinic 1970) on its own adjacency
 * built from the public getters, random graph and grid makers, and a solve-and-compare helper. */
#ifndef GCUT_UTIL_ORACLE_H
#define GCUT_UTIL_ORACLE_H

#include "gcut.h"
#include "util_common.h"

#include <stdint.h>

/** Largest graph oracle_brute_force() accepts (2^16 labelings). */
#define ORACLE_BRUTE_MAX_NODES 16

/** Minimum s-t cut value of graph by trying all 2^n node labelings (n <= 16), read through
 *  the public getters only. Self-loops never count; parallel edges add up.
 *  @return the value, or -1 if the graph has more than ORACLE_BRUTE_MAX_NODES nodes or memory
 *  ran out. */
int64_t oracle_brute_force(const gcut_graph *graph);

/** Maximum flow of graph by Dinic's algorithm on int64 capacities, on an adjacency of its own
 *  built from gcut_graph_num_*, gcut_graph_get_edge and gcut_graph_get_tweights (so it never
 *  shares a bug with the library's solvers). Flow through direct source->sink arcs of a DIMACS
 *  file is not visible through those getters and is not included.
 *  @return the value, or -1 if memory ran out. */
int64_t oracle_dinic(const gcut_graph *graph);

/** Maximum flow of a grid: gcut_grid_to_graph() then oracle_dinic(). @return -1 on failure. */
int64_t oracle_dinic_grid(const gcut_grid *grid);

/** How random capacities are drawn by the makers below. Start from oracle_caps_default(). */
typedef struct oracle_caps {
    int32_t max_cap;       /**< edge capacities uniform in [0, max_cap] */
    int32_t max_terminal;  /**< each terminal capacity uniform in [0, max_terminal] */
    int terminal_density;  /**< percent of nodes that get terminal capacities (0-100) */
    int zero_percent;      /**< percent of edge capacities forced to 0 */
    int one_way_percent;   /**< percent of edges whose reverse capacity is 0 */
    int huge;              /**< 1: capacities drawn near INT32_MAX instead (sums pass 2^31) */
    int parallel_percent;  /**< percent of edges added twice (general graphs only) */
    int self_loop_percent; /**< percent of extra self-loops (general graphs only) */
} oracle_caps;

/** Defaults: max_cap 100, max_terminal 100, terminal_density 30, everything else 0. */
oracle_caps oracle_caps_default(void);

/** Random sparse graph: num_nodes nodes, num_edges edges between uniform random endpoints
 *  (self-loops only as asked in caps), terminals per caps. @return the status of the builder
 *  calls; *out is NULL on failure. */
gcut_status oracle_make_random(test_rng *rng, int64_t num_nodes, int64_t num_edges,
                               const oracle_caps *caps, gcut_graph **out);

/** Layered graph: layers x width nodes (node = layer * width + i); every node has degree
 *  edges to random nodes of the next layer; sources feed the first layer, the last layer
 *  drains to the sink, and caps->terminal_density percent of the others get terminals too.
 *  Long augmenting paths: the hard case for augmenting-path solvers. */
gcut_status oracle_make_layered(test_rng *rng, int64_t layers, int64_t width, int degree,
                                const oracle_caps *caps, gcut_graph **out);

/** 2D grid-like graph, height x width, node = y * width + x, 4-connected (connectivity 4) or
 *  8-connected (8), one edge per neighbour pair with both capacities random, terminals per
 *  caps: the shape of a segmentation problem as a general graph. */
gcut_status oracle_make_grid_graph(test_rng *rng, int64_t height, int64_t width, int connectivity,
                                   const oracle_caps *caps, gcut_graph **out);

/** Random gcut_grid (2D or 3D, any connectivity the library takes) with capacities per caps
 *  (parallel/self-loop options ignored), for the grid solvers' tests. */
gcut_status oracle_make_grid(test_rng *rng, int ndim, const int64_t *shape, int connectivity,
                             const oracle_caps *caps, gcut_grid **out);

/** Solve graph with the named solver (options defaults otherwise; warm as given), then check:
 *  the status is GCUT_OK, the reported flow equals expected, stats.flow agrees, and
 *  gcut_graph_verify() accepts the labels with that flow (so the cut is a minimum cut).
 *  Failures print what (a short description of the case) and count in test_failures.
 *  @return 1 if every check passed, else 0. */
int oracle_check_graph(gcut_graph *graph, const char *solver, int warm, int64_t expected,
                       const char *what);

/** The same for a grid through gcut_grid_solve() and gcut_grid_verify(). */
int oracle_check_grid(gcut_grid *grid, const char *solver, int64_t expected, const char *what);

#endif /* GCUT_UTIL_ORACLE_H */
