/* util_oracle.c - the test oracles: brute-force min cut, a plain Dinic max-flow (Dinic 1970:
 * BFS levels, blocking flow by DFS with current-arc pointers) on int64 capacities, and the
 * random graph/grid makers. Written for clarity, not speed; shares no code with src/. */
#include "util_oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t oracle_brute_force(const gcut_graph *graph) {
    int64_t n = gcut_graph_num_nodes(graph), m = gcut_graph_num_edges(graph);
    if (n > ORACLE_BRUTE_MAX_NODES)
        return -1;
    int64_t source[ORACLE_BRUTE_MAX_NODES], sink[ORACLE_BRUTE_MAX_NODES];
    for (int64_t i = 0; i < n; i++)
        gcut_graph_get_tweights(graph, i, &source[i], &sink[i]);
    int64_t *ends = malloc(((size_t)m + 1) * 2 * sizeof(int64_t));
    int32_t *caps = malloc(((size_t)m + 1) * 2 * sizeof(int32_t));
    if (ends == NULL || caps == NULL) {
        free(ends);
        free(caps);
        return -1;
    }
    for (int64_t e = 0; e < m; e++)
        gcut_graph_get_edge(graph, e, &ends[2 * e], &ends[2 * e + 1], &caps[2 * e],
                            &caps[2 * e + 1]);
    int64_t best = -1;
    /* Bit i of sink_side set: node i is on the sink side. */
    for (uint32_t sink_side = 0; sink_side < (1u << n); sink_side++) {
        int64_t cut = 0;
        for (int64_t i = 0; i < n; i++)
            cut += (sink_side >> i) & 1u ? source[i] : sink[i];
        for (int64_t e = 0; e < m; e++) {
            unsigned su = (sink_side >> ends[2 * e]) & 1u, sv = (sink_side >> ends[2 * e + 1]) & 1u;
            if (su == 0 && sv == 1)
                cut += caps[2 * e];
            else if (su == 1 && sv == 0)
                cut += caps[2 * e + 1];
        }
        if (best < 0 || cut < best)
            best = cut;
    }
    free(ends);
    free(caps);
    return best;
}

/* Dinic's network: nodes 0..n-1, source n, sink n+1; arcs grouped by tail (CSR), each with
 * the index of its reverse arc. */
typedef struct dinic_net {
    int64_t num_nodes;
    int64_t *first; /* arcs of node v: first[v] .. first[v+1]-1 */
    int64_t *head;
    int64_t *reverse;
    int64_t *residual;
} dinic_net;

typedef struct arc_pair {
    int64_t u, v, cap, rev_cap;
} arc_pair;

static void dinic_free(dinic_net *net) {
    free(net->first);
    free(net->head);
    free(net->reverse);
    free(net->residual);
}

static int dinic_build(dinic_net *net, const arc_pair *pairs, int64_t num_pairs,
                       int64_t num_nodes) {
    memset(net, 0, sizeof *net);
    net->num_nodes = num_nodes;
    int64_t num_arcs = 2 * num_pairs;
    net->first = calloc((size_t)num_nodes + 1, sizeof(int64_t));
    net->head = malloc(((size_t)num_arcs + 1) * sizeof(int64_t));
    net->reverse = malloc(((size_t)num_arcs + 1) * sizeof(int64_t));
    net->residual = malloc(((size_t)num_arcs + 1) * sizeof(int64_t));
    int64_t *fill = calloc((size_t)num_nodes + 1, sizeof(int64_t));
    if (!net->first || !net->head || !net->reverse || !net->residual || !fill) {
        free(fill);
        dinic_free(net);
        return 0;
    }
    for (int64_t p = 0; p < num_pairs; p++) {
        net->first[pairs[p].u + 1]++;
        net->first[pairs[p].v + 1]++;
    }
    for (int64_t v = 0; v < num_nodes; v++)
        net->first[v + 1] += net->first[v];
    memcpy(fill, net->first, (size_t)num_nodes * sizeof(int64_t));
    for (int64_t p = 0; p < num_pairs; p++) {
        int64_t a = fill[pairs[p].u]++, b = fill[pairs[p].v]++;
        net->head[a] = pairs[p].v;
        net->residual[a] = pairs[p].cap;
        net->reverse[a] = b;
        net->head[b] = pairs[p].u;
        net->residual[b] = pairs[p].rev_cap;
        net->reverse[b] = a;
    }
    free(fill);
    return 1;
}

/* One phase's BFS from s over arcs with residual; @return 1 if t is reached. */
static int dinic_levels(const dinic_net *net, int64_t s, int64_t t, int64_t *level,
                        int64_t *queue) {
    for (int64_t v = 0; v < net->num_nodes; v++)
        level[v] = -1;
    int64_t qhead = 0, qtail = 0;
    level[s] = 0;
    queue[qtail++] = s;
    while (qhead < qtail) {
        int64_t v = queue[qhead++];
        for (int64_t a = net->first[v]; a < net->first[v + 1]; a++) {
            int64_t w = net->head[a];
            if (net->residual[a] > 0 && level[w] < 0) {
                level[w] = level[v] + 1;
                queue[qtail++] = w;
            }
        }
    }
    return level[t] >= 0;
}

/* Blocking flow of one phase by iterative DFS (paths can be as long as the graph, so no
 * recursion), retreating from dead ends and restarting from the first saturated arc. */
static int64_t dinic_blocking_flow(dinic_net *net, int64_t s, int64_t t, int64_t *level,
                                   int64_t *current, int64_t *path) {
    int64_t total = 0, depth = 0, v = s;
    memcpy(current, net->first, (size_t)net->num_nodes * sizeof(int64_t));
    for (;;) {
        if (v == t) {
            int64_t bottleneck = INT64_MAX;
            for (int64_t i = 0; i < depth; i++)
                if (net->residual[path[i]] < bottleneck)
                    bottleneck = net->residual[path[i]];
            int64_t first_saturated = -1;
            for (int64_t i = 0; i < depth; i++) {
                net->residual[path[i]] -= bottleneck;
                net->residual[net->reverse[path[i]]] += bottleneck;
                if (net->residual[path[i]] == 0 && first_saturated < 0)
                    first_saturated = i;
            }
            total += bottleneck;
            depth = first_saturated;
            v = depth == 0 ? s : net->head[path[depth - 1]];
            continue;
        }
        int64_t a = current[v];
        for (; a < net->first[v + 1]; a++)
            if (net->residual[a] > 0 && level[net->head[a]] == level[v] + 1)
                break;
        current[v] = a;
        if (a < net->first[v + 1]) {
            path[depth++] = a;
            v = net->head[a];
            continue;
        }
        if (v == s)
            return total;
        level[v] = -1; /* dead end for the rest of the phase */
        depth--;
        v = depth == 0 ? s : net->head[path[depth - 1]];
        current[v]++;
    }
}

int64_t oracle_dinic(const gcut_graph *graph) {
    int64_t n = gcut_graph_num_nodes(graph), m = gcut_graph_num_edges(graph);
    int64_t s = n, t = n + 1;
    arc_pair *pairs = malloc(((size_t)m + 2 * (size_t)n + 1) * sizeof *pairs);
    if (pairs == NULL)
        return -1;
    int64_t num_pairs = 0;
    for (int64_t e = 0; e < m; e++) {
        int64_t u, v;
        int32_t cap, rev;
        gcut_graph_get_edge(graph, e, &u, &v, &cap, &rev);
        if (u != v)
            pairs[num_pairs++] = (arc_pair){u, v, cap, rev};
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t cs, ct;
        gcut_graph_get_tweights(graph, i, &cs, &ct);
        if (cs > 0)
            pairs[num_pairs++] = (arc_pair){s, i, cs, 0};
        if (ct > 0)
            pairs[num_pairs++] = (arc_pair){i, t, ct, 0};
    }
    dinic_net net;
    int ok = dinic_build(&net, pairs, num_pairs, n + 2);
    free(pairs);
    if (!ok)
        return -1;
    int64_t *level = malloc((size_t)(n + 2) * sizeof(int64_t));
    int64_t *queue = malloc((size_t)(n + 2) * sizeof(int64_t));
    int64_t *current = malloc((size_t)(n + 2) * sizeof(int64_t));
    int64_t *path = malloc((size_t)(n + 2) * sizeof(int64_t));
    int64_t flow = -1;
    if (level && queue && current && path) {
        flow = 0;
        while (dinic_levels(&net, s, t, level, queue))
            flow += dinic_blocking_flow(&net, s, t, level, current, path);
    }
    free(level);
    free(queue);
    free(current);
    free(path);
    dinic_free(&net);
    return flow;
}

int64_t oracle_dinic_grid(const gcut_grid *grid) {
    gcut_graph *graph = NULL;
    if (gcut_grid_to_graph(grid, &graph) != GCUT_OK)
        return -1;
    int64_t flow = oracle_dinic(graph);
    gcut_graph_free(graph);
    return flow;
}

oracle_caps oracle_caps_default(void) {
    oracle_caps caps;
    memset(&caps, 0, sizeof caps);
    caps.max_cap = 100;
    caps.max_terminal = 100;
    caps.terminal_density = 30;
    return caps;
}

static int percent(test_rng *rng, int p) {
    return p > 0 && test_rng_range(rng, 0, 99) < p;
}

static int32_t draw(test_rng *rng, const oracle_caps *caps, int32_t max) {
    if (percent(rng, caps->zero_percent))
        return 0;
    if (caps->huge)
        return (int32_t)test_rng_range(rng, INT32_MAX - (1 << 20), INT32_MAX);
    return (int32_t)test_rng_range(rng, 0, max);
}

/* Terminals: a third of the chosen nodes get only a source capacity, a third only a sink
 * capacity, a third both (BK cancels the common part; the solvers must agree). Huge mode adds
 * twice so that one node's terminal sum passes INT32_MAX. */
static gcut_status add_terminals(test_rng *rng, gcut_graph *g, int64_t node,
                                 const oracle_caps *caps) {
    if (!percent(rng, caps->terminal_density))
        return GCUT_OK;
    int64_t kind = test_rng_range(rng, 0, 2);
    int rounds = caps->huge ? 2 : 1;
    for (int r = 0; r < rounds; r++) {
        int32_t cs = kind != 1 ? draw(rng, caps, caps->max_terminal) : 0;
        int32_t ct = kind != 0 ? draw(rng, caps, caps->max_terminal) : 0;
        gcut_status st = gcut_graph_add_tweights(g, node, cs, ct);
        if (st != GCUT_OK)
            return st;
    }
    return GCUT_OK;
}

static gcut_status add_random_edge(test_rng *rng, gcut_graph *g, int64_t u, int64_t v,
                                   const oracle_caps *caps) {
    int32_t cap = draw(rng, caps, caps->max_cap);
    int32_t rev = percent(rng, caps->one_way_percent) ? 0 : draw(rng, caps, caps->max_cap);
    gcut_status st = gcut_graph_add_edge(g, u, v, cap, rev);
    if (st == GCUT_OK && percent(rng, caps->parallel_percent))
        st = gcut_graph_add_edge(g, test_rng_range(rng, 0, 1) ? u : v,
                                 test_rng_range(rng, 0, 1) ? v : u, draw(rng, caps, caps->max_cap),
                                 draw(rng, caps, caps->max_cap));
    if (st == GCUT_OK && percent(rng, caps->self_loop_percent))
        st = gcut_graph_add_edge(g, u, u, draw(rng, caps, caps->max_cap),
                                 draw(rng, caps, caps->max_cap));
    return st;
}

static gcut_status finish(gcut_status st, gcut_graph *g, gcut_graph **out) {
    if (st != GCUT_OK) {
        gcut_graph_free(g);
        *out = NULL;
        return st;
    }
    *out = g;
    return GCUT_OK;
}

gcut_status oracle_make_random(test_rng *rng, int64_t num_nodes, int64_t num_edges,
                               const oracle_caps *caps, gcut_graph **out) {
    gcut_graph *g = NULL;
    gcut_status st = gcut_graph_create(num_nodes, num_edges, &g);
    if (st != GCUT_OK)
        return finish(st, g, out);
    for (int64_t e = 0; e < num_edges && num_nodes > 0 && st == GCUT_OK; e++) {
        int64_t u = test_rng_range(rng, 0, num_nodes - 1);
        int64_t v = test_rng_range(rng, 0, num_nodes - 1);
        if (u == v && !percent(rng, caps->self_loop_percent))
            v = (u + 1) % num_nodes;
        st = add_random_edge(rng, g, u, v, caps);
    }
    for (int64_t i = 0; i < num_nodes && st == GCUT_OK; i++)
        st = add_terminals(rng, g, i, caps);
    return finish(st, g, out);
}

gcut_status oracle_make_layered(test_rng *rng, int64_t layers, int64_t width, int degree,
                                const oracle_caps *caps, gcut_graph **out) {
    gcut_graph *g = NULL;
    gcut_status st = gcut_graph_create(layers * width, layers * width * degree, &g);
    if (st != GCUT_OK)
        return finish(st, g, out);
    for (int64_t l = 0; l + 1 < layers && st == GCUT_OK; l++)
        for (int64_t i = 0; i < width && st == GCUT_OK; i++)
            for (int d = 0; d < degree && st == GCUT_OK; d++)
                st = add_random_edge(rng, g, l * width + i,
                                     (l + 1) * width + test_rng_range(rng, 0, width - 1), caps);
    for (int64_t l = 0; l < layers && st == GCUT_OK; l++)
        for (int64_t i = 0; i < width && st == GCUT_OK; i++) {
            int64_t node = l * width + i;
            if (l == 0)
                st = gcut_graph_add_tweights(g, node, draw(rng, caps, caps->max_terminal), 0);
            else if (l == layers - 1)
                st = gcut_graph_add_tweights(g, node, 0, draw(rng, caps, caps->max_terminal));
            else
                st = add_terminals(rng, g, node, caps);
        }
    return finish(st, g, out);
}

gcut_status oracle_make_grid_graph(test_rng *rng, int64_t height, int64_t width, int connectivity,
                                   const oracle_caps *caps, gcut_graph **out) {
    static const int steps[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    int num_steps = connectivity == 8 ? 4 : 2;
    gcut_graph *g = NULL;
    gcut_status st = gcut_graph_create(height * width, height * width * num_steps, &g);
    if (st != GCUT_OK)
        return finish(st, g, out);
    for (int64_t y = 0; y < height && st == GCUT_OK; y++)
        for (int64_t x = 0; x < width && st == GCUT_OK; x++) {
            for (int k = 0; k < num_steps && st == GCUT_OK; k++) {
                int64_t ny = y + steps[k][0], nx = x + steps[k][1];
                if (ny < height && nx >= 0 && nx < width)
                    st = add_random_edge(rng, g, y * width + x, ny * width + nx, caps);
            }
            if (st == GCUT_OK)
                st = add_terminals(rng, g, y * width + x, caps);
        }
    return finish(st, g, out);
}

gcut_status oracle_make_grid(test_rng *rng, int ndim, const int64_t *shape, int connectivity,
                             const oracle_caps *caps, gcut_grid **out) {
    gcut_grid *grid = NULL;
    gcut_status st = gcut_grid_create(ndim, shape, connectivity, &grid);
    *out = NULL;
    if (st != GCUT_OK)
        return st;
    int64_t n = gcut_grid_num_nodes(grid);
    int32_t *source = gcut_grid_terminal_data(grid, GCUT_SOURCE);
    int32_t *sink = gcut_grid_terminal_data(grid, GCUT_SINK);
    for (int64_t i = 0; i < n; i++) {
        source[i] = sink[i] = 0;
        if (!percent(rng, caps->terminal_density))
            continue;
        int64_t kind = test_rng_range(rng, 0, 2);
        source[i] = kind != 1 ? draw(rng, caps, caps->max_terminal) : 0;
        sink[i] = kind != 0 ? draw(rng, caps, caps->max_terminal) : 0;
    }
    for (int d = 0; d < gcut_grid_num_dirs(grid); d++) {
        int32_t *cap = gcut_grid_dir_data(grid, d);
        for (int64_t i = 0; i < n; i++)
            cap[i] =
                (d & 1) && percent(rng, caps->one_way_percent) ? 0 : draw(rng, caps, caps->max_cap);
    }
    *out = grid;
    return GCUT_OK;
}

int oracle_check_graph(gcut_graph *graph, const char *solver, int warm, int64_t expected,
                       const char *what) {
    int before = test_failures;
    int64_t n = gcut_graph_num_nodes(graph);
    uint8_t *labels = malloc((size_t)n + 1);
    if (labels == NULL) {
        fprintf(stderr, "%s: out of memory for labels\n", what);
        test_failures++;
        return 0;
    }
    gcut_options options;
    gcut_options_init(&options);
    options.solver = solver;
    options.warm = warm;
    gcut_stats stats;
    int64_t flow = -1;
    gcut_status st = gcut_graph_solve(graph, &options, &flow, labels, &stats);
    if (st != GCUT_OK) {
        fprintf(stderr, "%s: solver %s returned %s: %s\n", what, solver, gcut_status_name(st),
                gcut_last_error());
        test_failures++;
    } else {
        if (flow != expected || stats.flow != flow) {
            fprintf(stderr, "%s: solver %s flow %lld (stats %lld), oracle %lld\n", what, solver,
                    (long long)flow, (long long)stats.flow, (long long)expected);
            test_failures++;
        }
        int64_t cut = -1;
        st = gcut_graph_verify(graph, labels, expected, &cut);
        if (st != GCUT_OK) {
            fprintf(stderr, "%s: solver %s labels cut %lld, oracle flow %lld: %s\n", what, solver,
                    (long long)cut, (long long)expected, gcut_last_error());
            test_failures++;
        }
    }
    free(labels);
    return test_failures == before;
}

int oracle_check_grid(gcut_grid *grid, const char *solver, int64_t expected, const char *what) {
    int before = test_failures;
    int64_t n = gcut_grid_num_nodes(grid);
    uint8_t *labels = malloc((size_t)n + 1);
    if (labels == NULL) {
        fprintf(stderr, "%s: out of memory for labels\n", what);
        test_failures++;
        return 0;
    }
    gcut_options options;
    gcut_options_init(&options);
    options.solver = solver;
    gcut_stats stats;
    int64_t flow = -1;
    gcut_status st = gcut_grid_solve(grid, &options, &flow, labels, &stats);
    if (st != GCUT_OK) {
        fprintf(stderr, "%s: solver %s returned %s: %s\n", what, solver, gcut_status_name(st),
                gcut_last_error());
        test_failures++;
    } else {
        if (flow != expected || stats.flow != flow) {
            fprintf(stderr, "%s: solver %s flow %lld (stats %lld), oracle %lld\n", what, solver,
                    (long long)flow, (long long)stats.flow, (long long)expected);
            test_failures++;
        }
        int64_t cut = -1;
        st = gcut_grid_verify(grid, labels, expected, &cut);
        if (st != GCUT_OK) {
            fprintf(stderr, "%s: solver %s labels cut %lld, oracle flow %lld: %s\n", what, solver,
                    (long long)cut, (long long)expected, gcut_last_error());
            test_failures++;
        }
    }
    free(labels);
    return test_failures == before;
}
