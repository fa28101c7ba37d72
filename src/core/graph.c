/* graph.c - the general graph builder: edges as paired arcs with int32 capacities, int64
 * terminal sums (BK's add_tweights), the change log for warm re-solves, the cut certificate
 * and the solve dispatcher. Node ids are int64; endpoints are stored in 32 bits when they fit. */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

gcut_status gcut_graph_create(int64_t num_nodes, int64_t edge_hint, gcut_graph **out) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_graph_create: out is NULL");
    *out = NULL;
    if (num_nodes < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_graph_create: num_nodes %" PRId64 " < 0",
                          num_nodes);
    if (edge_hint < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_graph_create: edge_hint %" PRId64 " < 0",
                          edge_hint);
    gcut_graph *g = gcut__calloc(1, sizeof *g, "graph");
    if (g == NULL)
        return GCUT_ERR_NOMEM;
    g->num_nodes = num_nodes;
    g->ids32 = num_nodes <= (int64_t)UINT32_MAX;
    size_t n = (size_t)num_nodes;
    g->tw_source = gcut__calloc(n, sizeof(int64_t), "graph terminal capacities");
    g->tw_sink =
        g->tw_source ? gcut__calloc(n, sizeof(int64_t), "graph terminal capacities") : NULL;
    if (g->tw_sink == NULL) {
        gcut_graph_free(g);
        return GCUT_ERR_NOMEM;
    }
    if (edge_hint > 0) {
        /* Reserve by adding nothing: grow once to the hint. */
        gcut_status st = GCUT_OK;
        int64_t room = edge_hint;
        size_t id_size = g->ids32 ? sizeof(uint32_t) : sizeof(int64_t);
        void *u = gcut__malloc(gcut__mul_size((size_t)room, id_size), "graph edges");
        void *v = u ? gcut__malloc(gcut__mul_size((size_t)room, id_size), "graph edges") : NULL;
        int32_t *c = v ? gcut__malloc(gcut__mul_size((size_t)room, 4), "graph edges") : NULL;
        int32_t *r = c ? gcut__malloc(gcut__mul_size((size_t)room, 4), "graph edges") : NULL;
        if (r == NULL) {
            gcut__free(u);
            gcut__free(v);
            gcut__free(c);
            st = GCUT_ERR_NOMEM;
        } else {
            if (g->ids32) {
                g->edge_u32 = u;
                g->edge_v32 = v;
            } else {
                g->edge_u64 = u;
                g->edge_v64 = v;
            }
            g->edge_cap = c;
            g->edge_rev = r;
            g->edge_room = room;
        }
        if (st != GCUT_OK) {
            gcut_graph_free(g);
            return st;
        }
    }
    *out = g;
    return GCUT_OK;
}

void gcut__graph_clear_changes(gcut_graph *g) {
    g->num_changes = 0;
}

void gcut__graph_drop_state(gcut_graph *g) {
    if (g->state.free_fn != NULL)
        g->state.free_fn(g->state.data);
    memset(&g->state, 0, sizeof g->state);
    g->structure_changed = false;
    g->num_changes = 0;
}

void gcut_graph_free(gcut_graph *g) {
    if (g == NULL)
        return;
    gcut__graph_drop_state(g);
    gcut__free(g->edge_u32);
    gcut__free(g->edge_v32);
    gcut__free(g->edge_u64);
    gcut__free(g->edge_v64);
    gcut__free(g->edge_cap);
    gcut__free(g->edge_rev);
    gcut__free(g->tw_source);
    gcut__free(g->tw_sink);
    gcut__free(g->changes);
    gcut__free(g);
}

int64_t gcut_graph_num_nodes(const gcut_graph *g) {
    return g ? g->num_nodes : 0;
}

int64_t gcut_graph_num_edges(const gcut_graph *g) {
    return g ? g->num_edges : 0;
}

void gcut__graph_add_flow_offset(gcut_graph *g, int64_t amount) {
    g->flow_offset += amount;
}

static gcut_status grow_edges(gcut_graph *g) {
    int64_t room = g->edge_room < 16 ? 16 : g->edge_room + g->edge_room / 2;
    size_t id_size = g->ids32 ? sizeof(uint32_t) : sizeof(int64_t);
    void **u = g->ids32 ? (void **)&g->edge_u32 : (void **)&g->edge_u64;
    void **v = g->ids32 ? (void **)&g->edge_v32 : (void **)&g->edge_v64;
    void *nu = gcut__realloc(*u, gcut__mul_size((size_t)room, id_size), "graph edges");
    if (nu == NULL)
        return GCUT_ERR_NOMEM;
    *u = nu;
    void *nv = gcut__realloc(*v, gcut__mul_size((size_t)room, id_size), "graph edges");
    if (nv == NULL)
        return GCUT_ERR_NOMEM;
    *v = nv;
    int32_t *nc = gcut__realloc(g->edge_cap, gcut__mul_size((size_t)room, 4), "graph edges");
    if (nc == NULL)
        return GCUT_ERR_NOMEM;
    g->edge_cap = nc;
    int32_t *nr = gcut__realloc(g->edge_rev, gcut__mul_size((size_t)room, 4), "graph edges");
    if (nr == NULL)
        return GCUT_ERR_NOMEM;
    g->edge_rev = nr;
    g->edge_room = room;
    return GCUT_OK;
}

static gcut_status check_node(const gcut_graph *g, int64_t node, const char *fn, const char *arg) {
    if (node < 0 || node >= g->num_nodes)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "%s: %s %" PRId64 " out of range [0, %" PRId64 ")",
                          fn, arg, node, g->num_nodes);
    return GCUT_OK;
}

gcut_status gcut_graph_add_edge(gcut_graph *g, int64_t u, int64_t v, int32_t cap, int32_t rev_cap) {
    if (g == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_graph_add_edge: graph is NULL");
    gcut_status st = check_node(g, u, "gcut_graph_add_edge", "u");
    if (st == GCUT_OK)
        st = check_node(g, v, "gcut_graph_add_edge", "v");
    if (st != GCUT_OK)
        return st;
    if (cap < 0 || rev_cap < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_graph_add_edge: negative capacity (%d, %d) on edge %" PRId64
                          "-%" PRId64,
                          (int)cap, (int)rev_cap, u, v);
    if (g->num_edges == g->edge_room && (st = grow_edges(g)) != GCUT_OK)
        return st;
    int64_t e = g->num_edges++;
    if (g->ids32) {
        g->edge_u32[e] = (uint32_t)u;
        g->edge_v32[e] = (uint32_t)v;
    } else {
        g->edge_u64[e] = u;
        g->edge_v64[e] = v;
    }
    g->edge_cap[e] = cap;
    g->edge_rev[e] = rev_cap;
    if (g->state.data != NULL)
        g->structure_changed = true;
    g->solved = false;
    return GCUT_OK;
}

static gcut_status record_change(gcut_graph *g, int kind, int64_t index, int64_t old_a,
                                 int64_t old_b) {
    if (g->state.data == NULL || g->structure_changed)
        return GCUT_OK;
    if (g->num_changes == g->change_room) {
        int64_t room = g->change_room < 64 ? 64 : g->change_room * 2;
        gcut__change *grown = gcut__realloc(g->changes, gcut__mul_size((size_t)room, sizeof *grown),
                                            "graph change log");
        if (grown == NULL) {
            /* Cannot remember the change: fall back to a fresh solve next time. */
            gcut__graph_drop_state(g);
            gcut__clear_error();
            return GCUT_OK;
        }
        g->changes = grown;
        g->change_room = room;
    }
    gcut__change *c = &g->changes[g->num_changes++];
    c->kind = kind;
    c->index = index;
    c->old_a = old_a;
    c->old_b = old_b;
    return GCUT_OK;
}

gcut_status gcut_graph_add_tweights(gcut_graph *g, int64_t node, int32_t cap_source,
                                    int32_t cap_sink) {
    if (g == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_graph_add_tweights: graph is NULL");
    gcut_status st = check_node(g, node, "gcut_graph_add_tweights", "node");
    if (st != GCUT_OK)
        return st;
    if (cap_source < 0 || cap_sink < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_graph_add_tweights: negative capacity (%d, %d) on node %" PRId64,
                          (int)cap_source, (int)cap_sink, node);
    if (g->tw_source[node] > INT64_MAX / 2 || g->tw_sink[node] > INT64_MAX / 2)
        return gcut__fail(
            GCUT_ERR_OVERFLOW,
            "gcut_graph_add_tweights: terminal capacity of node %" PRId64 " overflows int64", node);
    st = record_change(g, 1, node, g->tw_source[node], g->tw_sink[node]);
    if (st != GCUT_OK)
        return st;
    g->tw_source[node] += cap_source;
    g->tw_sink[node] += cap_sink;
    return GCUT_OK;
}

gcut_status gcut_graph_set_edge(gcut_graph *g, int64_t edge, int32_t cap, int32_t rev_cap) {
    if (g == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_graph_set_edge: graph is NULL");
    if (edge < 0 || edge >= g->num_edges)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_graph_set_edge: edge %" PRId64 " out of range [0, %" PRId64 ")",
                          edge, g->num_edges);
    if (cap < 0 || rev_cap < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_graph_set_edge: negative capacity (%d, %d) on edge %" PRId64,
                          (int)cap, (int)rev_cap, edge);
    gcut_status st = record_change(g, 0, edge, g->edge_cap[edge], g->edge_rev[edge]);
    if (st != GCUT_OK)
        return st;
    g->edge_cap[edge] = cap;
    g->edge_rev[edge] = rev_cap;
    return GCUT_OK;
}

gcut_status gcut_graph_set_tweights(gcut_graph *g, int64_t node, int64_t cap_source,
                                    int64_t cap_sink) {
    if (g == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_graph_set_tweights: graph is NULL");
    gcut_status st = check_node(g, node, "gcut_graph_set_tweights", "node");
    if (st != GCUT_OK)
        return st;
    if (cap_source < 0 || cap_sink < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_graph_set_tweights: negative capacity (%" PRId64 ", %" PRId64
                          ") on node %" PRId64,
                          cap_source, cap_sink, node);
    if (cap_source > INT64_MAX / 4 || cap_sink > INT64_MAX / 4)
        return gcut__fail(GCUT_ERR_OVERFLOW,
                          "gcut_graph_set_tweights: capacity of node %" PRId64 " above 2^61", node);
    st = record_change(g, 1, node, g->tw_source[node], g->tw_sink[node]);
    if (st != GCUT_OK)
        return st;
    g->tw_source[node] = cap_source;
    g->tw_sink[node] = cap_sink;
    return GCUT_OK;
}

gcut_status gcut_graph_get_edge(const gcut_graph *g, int64_t edge, int64_t *u, int64_t *v,
                                int32_t *cap, int32_t *rev_cap) {
    if (g == NULL || edge < 0 || edge >= g->num_edges)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_graph_get_edge: edge %" PRId64 " out of range", edge);
    if (u)
        *u = gcut__edge_u(g, edge);
    if (v)
        *v = gcut__edge_v(g, edge);
    if (cap)
        *cap = g->edge_cap[edge];
    if (rev_cap)
        *rev_cap = g->edge_rev[edge];
    return GCUT_OK;
}

gcut_status gcut_graph_get_tweights(const gcut_graph *g, int64_t node, int64_t *cap_source,
                                    int64_t *cap_sink) {
    if (g == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_graph_get_tweights: graph is NULL");
    gcut_status st = check_node(g, node, "gcut_graph_get_tweights", "node");
    if (st != GCUT_OK)
        return st;
    if (cap_source)
        *cap_source = g->tw_source[node];
    if (cap_sink)
        *cap_sink = g->tw_sink[node];
    return GCUT_OK;
}

gcut_status gcut_graph_verify(const gcut_graph *g, const uint8_t *labels, int64_t flow,
                              int64_t *cut_value) {
    if (g == NULL || (labels == NULL && g->num_nodes > 0))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_graph_verify: graph or labels is NULL");
    /* Cut capacity: source->v for v on the sink side, v->sink for v on the source side, and
     * every arc from the source side to the sink side. Sums fit int64: each term is at most
     * 2^61 (terminals) or 2^31 (arcs), and counts are below 2^62 / 2^31 for any real graph;
     * the running sum is checked anyway. */
    int64_t cut = g->flow_offset;
    for (int64_t i = 0; i < g->num_nodes; i++) {
        if (labels[i] > 1)
            return gcut__fail(GCUT_ERR_INVALID_ARG,
                              "gcut_graph_verify: label %d of node %" PRId64 " is not 0 or 1",
                              labels[i], i);
        int64_t term = labels[i] == GCUT_SOURCE ? g->tw_sink[i] : g->tw_source[i];
        if (cut > INT64_MAX - term)
            return gcut__fail(GCUT_ERR_OVERFLOW, "gcut_graph_verify: cut value overflows int64");
        cut += term;
    }
    for (int64_t e = 0; e < g->num_edges; e++) {
        uint8_t lu = labels[gcut__edge_u(g, e)], lv = labels[gcut__edge_v(g, e)];
        if (lu == lv)
            continue;
        int64_t term = lu == GCUT_SOURCE ? g->edge_cap[e] : g->edge_rev[e];
        if (cut > INT64_MAX - term)
            return gcut__fail(GCUT_ERR_OVERFLOW, "gcut_graph_verify: cut value overflows int64");
        cut += term;
    }
    if (cut_value)
        *cut_value = cut;
    if (cut != flow)
        return gcut__fail(GCUT_ERR_VERIFY,
                          "cut certificate failed: cut capacity %" PRId64
                          " differs from flow value %" PRId64,
                          cut, flow);
    return GCUT_OK;
}

static void stats_begin(gcut_stats *stats) {
    if (stats)
        memset(stats, 0, sizeof *stats);
}

static void stats_end(gcut_stats *stats, const gcut__solver *solver, int64_t flow) {
    if (stats == NULL)
        return;
    snprintf(stats->solver, sizeof stats->solver, "%s", solver->name);
    stats->flow = flow;
}

gcut_status gcut_graph_solve(gcut_graph *g, const gcut_options *options, int64_t *flow,
                             uint8_t *labels, gcut_stats *stats) {
    if (g == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_graph_solve: graph is NULL");
    gcut_options defaults;
    if (options == NULL) {
        gcut_options_init(&defaults);
        options = &defaults;
    }
    gcut_status st;
    const gcut__solver *solver = gcut__graph_solver_pick(options, g, &st);
    if (solver == NULL)
        return st;
    if (g->state.data != NULL &&
        (g->structure_changed || !options->warm || strcmp(g->state.owner, solver->name) != 0))
        gcut__graph_drop_state(g);
    gcut_stats local;
    gcut_stats *s = stats ? stats : &local;
    stats_begin(s);
    int64_t value = 0;
    st = solver->solve_graph(g, options, &value, labels, s);
    if (st != GCUT_OK)
        return st;
    value += g->flow_offset;
    g->solved = true;
    stats_end(s, solver, value);
    if (flow)
        *flow = value;
    return GCUT_OK;
}
