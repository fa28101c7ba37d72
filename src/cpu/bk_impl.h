/* bk_impl.h - the Boykov-Kolmogorov max-flow (Boykov & Kolmogorov, PAMI 2004, section 3) with
 * Kolmogorov's v3 TIME/DIST adoption marks and tree reuse after capacity changes (Kohli & Torr,
 * ICCV 2005, section 4), written once and included by bk.c for 32- and 64-bit indices.
 * Before including: BK_IDX (an unsigned index type) and BK_FN(name) (a name suffixer);
 * optionally BK_SKIP_IDLE_PAIRS (src/qpbo's sub-graph views: see adopt). */

#define BK_NONE ((BK_IDX)-1)     /* parent: free node; next: not in the active queue */
#define BK_TERMINAL ((BK_IDX)-2) /* parent: attached straight to its tree's terminal */
#define BK_ORPHAN ((BK_IDX)-3)   /* parent: lost during augmentation, waiting for adoption */

typedef struct BK_FN(arc) {
    BK_IDX head;
    uint32_t residual; /* a + sister(a) <= 2 * INT32_MAX always, so uint32 cannot overflow */
} BK_FN(arc);

/* The hot part of a node, 16 bytes with 32-bit indices (four per cache line). The terminal
 * residual lives in its own array: only tree roots read it. */
typedef struct BK_FN(node) {
    BK_IDX parent;      /* arc node->parent, or BK_NONE / BK_TERMINAL / BK_ORPHAN */
    BK_IDX next;        /* next in the active queue; itself when last; BK_NONE when not queued */
    uint32_t ts;        /* TIME at which dist was last known right */
    uint32_t dist_sink; /* bit 31: in the sink tree; low bits: distance to the terminal */
} BK_FN(node);

typedef struct BK_FN(solver) {
    BK_IDX num_nodes, num_arcs;
    BK_IDX *first; /* CSR: arcs of node v are first[v] .. first[v+1]-1, grouped by tail */
    BK_FN(arc) * arcs;
    BK_IDX *sister; /* the reverse arc: arcs sorted by tail cannot also sit in pairs */
    BK_FN(node) * nodes;
    int64_t *tr; /* terminal residual: > 0 from the source, < 0 to the sink */
    /* Orphans of one adoption phase (a node is orphaned at most once per phase): those of the
     * augmentation stacked down from the top, [orphan_low, num_nodes), the ones adoption
     * finds queued up from the bottom, [orphan_head, orphan_tail). */
    BK_IDX *orphans;
    BK_IDX orphan_head, orphan_tail, orphan_low;
    BK_IDX active_first, active_last;
    uint32_t time;
    int64_t flow;
    bool overflow; /* the flow value left int64: the solve fails with GCUT_ERR_OVERFLOW */
    int64_t augmentations;
    /* Kept for warm re-solves only (NULL otherwise). */
    BK_IDX *edge_arc; /* arc u->v of edge e, BK_NONE for self-loops */
    uint8_t *marked;
    BK_IDX *marked_list;
    BK_IDX num_marked;
    /* NULL, or how a solver that works on part of a larger node array (src/qpbo's sub-graph
     * views) forgets its own nodes' TIME stamps when TIME wraps. */
    void (*forget_times)(void *bk);
} BK_FN(solver);

#define BK_SINK_BIT 0x80000000u
#define BK_DIST_MASK 0x7fffffffu

static inline uint32_t BK_FN(dist)(const BK_FN(node) * n) {
    return n->dist_sink & BK_DIST_MASK;
}

static inline int BK_FN(is_sink)(const BK_FN(node) * n) {
    return (n->dist_sink & BK_SINK_BIT) != 0;
}

/* Every change of the flow value goes through here. The flow never exceeds the maximum flow
 * (warm reparametrisation can lower it for a while), so this fails only for problems whose
 * answer does not fit int64. */
static inline void BK_FN(add_flow)(BK_FN(solver) * bk, int64_t amount) {
    if (amount > 0 ? bk->flow > INT64_MAX - amount : bk->flow < INT64_MIN - amount)
        bk->overflow = true;
    else
        bk->flow += amount;
}

/* Distances are a heuristic: saturating keeps them monotone without overflow. */
static inline uint32_t BK_FN(dist_plus_one)(uint32_t dist) {
    return dist < BK_DIST_MASK ? dist + 1 : dist;
}

static void BK_FN(free)(void *data) {
    BK_FN(solver) *bk = data;
    if (bk == NULL)
        return;
    gcut__free(bk->first);
    gcut__free(bk->arcs);
    gcut__free(bk->sister);
    gcut__free(bk->nodes);
    gcut__free(bk->tr);
    gcut__free(bk->orphans);
    gcut__free(bk->edge_arc);
    gcut__free(bk->marked);
    gcut__free(bk->marked_list);
    gcut__free(bk);
}

/* The node side of the layout: solver, arc offsets (zeroed, for counting), nodes, terminal
 * residuals, orphan queue. */
static BK_FN(solver) * BK_FN(alloc_nodes)(size_t n) {
    BK_FN(solver) *bk = gcut__calloc(1, sizeof *bk, "bk solver");
    if (bk == NULL)
        return NULL;
    bk->num_nodes = (BK_IDX)n;
    bk->first = gcut__calloc(n + 1, sizeof(BK_IDX), "bk arc offsets");
    bk->nodes = gcut__malloc(gcut__mul_size(n, sizeof(BK_FN(node))), "bk nodes");
    bk->tr = gcut__malloc(gcut__mul_size(n, sizeof(int64_t)), "bk terminal residuals");
    bk->orphans = gcut__malloc(gcut__mul_size(n, sizeof(BK_IDX)), "bk orphan queue");
    if (!bk->first || !bk->nodes || !bk->tr || !bk->orphans) {
        BK_FN(free)(bk);
        return NULL;
    }
    return bk;
}

/* Once first[v] holds each node's arc count: allocate the arcs and turn the counts into block
 * ends. Arcs are then placed by decrementing first[tail], which leaves first[v] at the start
 * of v's block (a counting sort by tail without a cursor array). */
static bool BK_FN(alloc_arcs)(BK_FN(solver) * bk) {
    BK_IDX sum = 0;
    for (BK_IDX v = 0; v <= bk->num_nodes; v++) {
        sum += bk->first[v];
        bk->first[v] = sum;
    }
    bk->num_arcs = sum;
    bk->arcs = gcut__malloc(gcut__mul_size((size_t)sum, sizeof(BK_FN(arc))), "bk arcs");
    bk->sister = gcut__malloc(gcut__mul_size((size_t)sum, sizeof(BK_IDX)), "bk reverse arcs");
    return bk->arcs != NULL && bk->sister != NULL;
}

/* Place the arc pair u->v (cap), v->u (rev); @return the index of u->v. */
static inline BK_IDX BK_FN(place)(BK_FN(solver) * bk, BK_IDX u, BK_IDX v, uint32_t cap,
                                  uint32_t rev) {
    BK_IDX a = --bk->first[u], b = --bk->first[v];
    bk->arcs[a].head = v;
    bk->arcs[a].residual = cap;
    bk->arcs[b].head = u;
    bk->arcs[b].residual = rev;
    bk->sister[a] = b;
    bk->sister[b] = a;
    return a;
}

/* Cancel node i's common terminal capacity into the flow and keep the difference. */
static inline void BK_FN(set_terminals)(BK_FN(solver) * bk, BK_IDX i, int64_t source,
                                        int64_t sink) {
    BK_FN(add_flow)(bk, source < sink ? source : sink);
    bk->tr[i] = source - sink;
    /* Written here so that the pages are mapped while building, not while solving. */
    bk->nodes[i] = (BK_FN(node)){BK_NONE, BK_NONE, 0, 0};
}

/* Build the CSR residual graph from the graph builder's arrays. keep_edges: remember edge ->
 * arc (and room for marks) for warm re-solves. */
static gcut_status BK_FN(build)(const gcut_graph *g, bool keep_edges, BK_FN(solver) * *out) {
    *out = NULL;
    size_t n = (size_t)g->num_nodes;
    BK_FN(solver) *bk = BK_FN(alloc_nodes)(n);
    if (bk == NULL)
        return GCUT_ERR_NOMEM;
    BK_IDX *first = bk->first;
    for (int64_t e = 0; e < g->num_edges; e++) {
        int64_t u = gcut__edge_u(g, e), v = gcut__edge_v(g, e);
        if (u != v) {
            first[u]++;
            first[v]++;
        }
    }
    bool ok = BK_FN(alloc_arcs)(bk);
    if (ok && keep_edges) {
        bk->edge_arc = gcut__malloc(gcut__mul_size((size_t)g->num_edges, sizeof(BK_IDX)),
                                    "bk edge map (warm re-solve)");
        bk->marked = gcut__calloc(n, 1, "bk marks (warm re-solve)");
        bk->marked_list = gcut__malloc(gcut__mul_size(n, sizeof(BK_IDX)), "bk marks");
        ok = bk->edge_arc && bk->marked && bk->marked_list;
    }
    if (!ok) {
        BK_FN(free)(bk);
        return GCUT_ERR_NOMEM;
    }
    for (int64_t e = 0; e < g->num_edges; e++) {
        int64_t u = gcut__edge_u(g, e), v = gcut__edge_v(g, e);
        BK_IDX a = u == v ? BK_NONE
                          : BK_FN(place)(bk, (BK_IDX)u, (BK_IDX)v, (uint32_t)g->edge_cap[e],
                                         (uint32_t)g->edge_rev[e]);
        if (bk->edge_arc)
            bk->edge_arc[e] = a;
    }
    for (size_t i = 0; i < n; i++)
        BK_FN(set_terminals)(bk, (BK_IDX)i, g->tw_source[i], g->tw_sink[i]);
    *out = bk;
    return GCUT_OK;
}

/* Build the CSR residual graph straight from a grid's direction arrays: no general graph in
 * between (DESIGN: grids are first-class). Node by node, so that every array is written in
 * order: first a mask per node of the directions whose arc pair can carry flow (a pair with
 * zero capacity both ways is left out: it never can, and a grid solve keeps no state for a
 * warm re-solve to raise it), then each node's arcs in its own block, the reverse arc's index
 * found from the neighbour's mask. Within a block the arcs follow a fixed order of directions
 * (rank), which is the order the earlier pair-by-pair build left them in; the search order of
 * bk, and so its augmentations, are unchanged by this layout. The masks live in the orphan
 * queue, unused until the solve (26 directions fit in any BK_IDX). */
static gcut_status BK_FN(build_grid)(const gcut_grid *grid, BK_FN(solver) * *out) {
    /* Bit counts of a byte: __builtin_popcount is a library call unless the target has the
     * instruction, which a portable build cannot assume. */
    uint8_t bits[256];
    for (int b = 0; b < 256; b++)
        bits[b] = (uint8_t)((b & 1) + (b >> 1 & 1) + (b >> 2 & 1) + (b >> 3 & 1) + (b >> 4 & 1) +
                            (b >> 5 & 1) + (b >> 6 & 1) + (b >> 7 & 1));
#define BK_POPCOUNT(x)                                                                             \
    ((BK_IDX)bits[(x)&255] + bits[(x) >> 8 & 255] + bits[(x) >> 16 & 255] + bits[(x) >> 24 & 255])
    *out = NULL;
    size_t n = (size_t)grid->num_nodes;
    BK_FN(solver) *bk = BK_FN(alloc_nodes)(n);
    if (bk == NULL)
        return GCUT_ERR_NOMEM;
    const int dirs = grid->num_dirs;
    int order[GCUT__MAX_DIRS], rank[GCUT__MAX_DIRS], k = 0;
    for (int d = dirs - 2; d >= 0; d -= 2) {
        int lo = grid->step[d] > 0 ? d : d ^ 1;
        order[k++] = lo;
        order[k++] = lo ^ 1;
    }
    for (k = 0; k < dirs; k++)
        rank[order[k]] = k;

    BK_IDX *mask = bk->orphans, *first = bk->first, sum = 0;
    const int64_t w = grid->width, h = grid->height, depth = grid->depth;
    for (int64_t z = 0; z < depth; z++)
        for (int64_t y = 0; y < h; y++) {
            const int64_t row = (z * h + y) * w;
            memset(mask + row, 0, (size_t)w * sizeof *mask);
            for (int d = 0; d < dirs; d++) {
                const int *o = grid->offset[d];
                if (z + o[0] < 0 || z + o[0] >= depth || y + o[1] < 0 || y + o[1] >= h)
                    continue;
                const int32_t *cap = grid->cap[d], *rev = grid->cap[d ^ 1];
                const int64_t step = grid->step[d];
                const int64_t x0 = o[2] < 0 ? -o[2] : 0, x1 = w - (o[2] > 0 ? o[2] : 0);
                const BK_IDX bit = (BK_IDX)1 << rank[d];
                for (int64_t i = row + x0; i < row + x1; i++)
                    if ((cap[i] | rev[i + step]) != 0)
                        mask[i] |= bit;
            }
            for (int64_t i = row; i < row + w; i++) {
                first[i] = sum;
                sum += BK_POPCOUNT(mask[i]);
            }
        }
    first[n] = sum;
    bk->num_arcs = sum;
    bk->arcs = gcut__malloc(gcut__mul_size((size_t)sum, sizeof(BK_FN(arc))), "bk arcs");
    bk->sister = gcut__malloc(gcut__mul_size((size_t)sum, sizeof(BK_IDX)), "bk reverse arcs");
    if (bk->arcs == NULL || bk->sister == NULL) {
        BK_FN(free)(bk);
        return GCUT_ERR_NOMEM;
    }

    /* below[d]: the mask bits of the directions placed before d's reverse in a block. */
    BK_IDX below[GCUT__MAX_DIRS];
    for (int d = 0; d < dirs; d++)
        below[d] = ((BK_IDX)1 << rank[d ^ 1]) - 1;
    const int32_t *source = grid->terminal[GCUT_SOURCE], *sink = grid->terminal[GCUT_SINK];
    for (size_t i = 0; i < n; i++) {
        BK_IDX a = first[i];
        for (BK_IDX m = mask[i]; m != 0; m &= m - 1, a++) {
            const int d = order[__builtin_ctzll((unsigned long long)m)];
            const size_t j = (size_t)((int64_t)i + grid->step[d]);
            bk->arcs[a].head = (BK_IDX)j;
            bk->arcs[a].residual = (uint32_t)grid->cap[d][i];
            bk->sister[a] = first[j] + BK_POPCOUNT(mask[j] & below[d]);
        }
        BK_FN(set_terminals)(bk, (BK_IDX)i, source[i], sink[i]);
    }
#undef BK_POPCOUNT
    *out = bk;
    return GCUT_OK;
}

static inline void BK_FN(set_active)(BK_FN(solver) * bk, BK_IDX i) {
    BK_FN(node) *node = &bk->nodes[i];
    if (node->next != BK_NONE)
        return;
    if (bk->active_last != BK_NONE)
        bk->nodes[bk->active_last].next = i;
    else
        bk->active_first = i;
    bk->active_last = i;
    node->next = i;
}

/* Pop the next active node that is still in a tree (freed nodes are dropped lazily). */
static inline BK_IDX BK_FN(next_active)(BK_FN(solver) * bk) {
    for (;;) {
        BK_IDX i = bk->active_first;
        if (i == BK_NONE)
            return BK_NONE;
        BK_FN(node) *node = &bk->nodes[i];
        if (node->next == i)
            bk->active_first = bk->active_last = BK_NONE;
        else
            bk->active_first = node->next;
        node->next = BK_NONE;
        if (node->parent != BK_NONE)
            return i;
    }
}

/* Orphans found during augmentation are stacked (the last found, nearest the sink root, is
 * adopted first), those found during adoption queued; each stacked orphan is adopted and then
 * every orphan its adoption queued, before the next stacked one (Kolmogorov v3's order: finish
 * the subtree being repaired first). The two never meet: a node is orphaned at most once per
 * phase (an adopted node hangs from a path checked free of orphans, and a freed one has no
 * parent to lose), so the queue holds at most num_nodes - (stacked) entries. */
static inline void BK_FN(orphan_front)(BK_FN(solver) * bk, BK_IDX i) {
    bk->nodes[i].parent = BK_ORPHAN;
    bk->orphans[--bk->orphan_low] = i;
}

static inline void BK_FN(orphan_back)(BK_FN(solver) * bk, BK_IDX i) {
    bk->nodes[i].parent = BK_ORPHAN;
    bk->orphans[bk->orphan_tail++] = i;
}

/* TIME only grows; at the wrap every mark is forgotten, so no stale stamp can pass for a
 * fresh one (a stale "verified" mark would break the trees, not just the heuristic). */
static void BK_FN(next_time)(BK_FN(solver) * bk) {
    if (++bk->time == UINT32_MAX) {
        if (bk->forget_times != NULL)
            bk->forget_times(bk);
        else
            for (BK_IDX i = 0; i < bk->num_nodes; i++)
                bk->nodes[i].ts = 0;
        bk->time = 1;
    }
}

/* Push the bottleneck along source root -> ... -> tail(mid) -> head(mid) -> ... -> sink root.
 * mid goes from a source-tree node to a sink-tree node; nodes whose tree arc saturates
 * become orphans. */
static void BK_FN(augment)(BK_FN(solver) * bk, BK_IDX mid) {
    BK_FN(arc) *arcs = bk->arcs;
    BK_FN(node) *nodes = bk->nodes;
    const BK_IDX *sister = bk->sister;
    BK_IDX start_source = arcs[sister[mid]].head, start_sink = arcs[mid].head;
    int64_t bottleneck = arcs[mid].residual;
    BK_IDX x = start_source;
    for (BK_IDX p; (p = nodes[x].parent) != BK_TERMINAL; x = arcs[p].head)
        if (arcs[sister[p]].residual < bottleneck)
            bottleneck = arcs[sister[p]].residual;
    if (bk->tr[x] < bottleneck)
        bottleneck = bk->tr[x];
    x = start_sink;
    for (BK_IDX p; (p = nodes[x].parent) != BK_TERMINAL; x = arcs[p].head)
        if (arcs[p].residual < bottleneck)
            bottleneck = arcs[p].residual;
    if (-bk->tr[x] < bottleneck)
        bottleneck = -bk->tr[x];

    uint32_t f = (uint32_t)bottleneck; /* at most mid's residual */
    arcs[mid].residual -= f;
    arcs[sister[mid]].residual += f;
    for (x = start_source;;) {
        BK_IDX p = nodes[x].parent;
        if (p == BK_TERMINAL)
            break;
        BK_IDX down = sister[p]; /* flow runs parent -> x */
        arcs[p].residual += f;
        arcs[down].residual -= f;
        if (arcs[down].residual == 0)
            BK_FN(orphan_front)(bk, x);
        x = arcs[p].head;
    }
    bk->tr[x] -= f;
    if (bk->tr[x] == 0)
        BK_FN(orphan_front)(bk, x);
    for (x = start_sink;;) {
        BK_IDX p = nodes[x].parent;
        if (p == BK_TERMINAL)
            break;
        arcs[sister[p]].residual += f;
        arcs[p].residual -= f;
        if (arcs[p].residual == 0)
            BK_FN(orphan_front)(bk, x);
        x = arcs[p].head;
    }
    bk->tr[x] += f;
    if (bk->tr[x] == 0)
        BK_FN(orphan_front)(bk, x);
    BK_FN(add_flow)(bk, f);
    bk->augmentations++;
}

/* Length of j's path to its terminal, or UINT64_MAX if it runs into an orphan. Stops early at
 * a node already checked during this TIME (its dist is then exact). */
static inline uint64_t BK_FN(origin_distance)(BK_FN(solver) * bk, BK_IDX j) {
    BK_FN(node) *nodes = bk->nodes;
    uint64_t d = 0;
    for (;;) {
        BK_FN(node) *k = &nodes[j];
        if (k->ts == bk->time)
            return d + BK_FN(dist)(k);
        BK_IDX p = k->parent;
        d++;
        if (p == BK_TERMINAL) {
            k->ts = bk->time;
            k->dist_sink = (k->dist_sink & BK_SINK_BIT) | 1u;
            return d;
        }
        if (p == BK_ORPHAN)
            return UINT64_MAX;
        j = bk->arcs[p].head;
    }
}

/* Stamp the path from j with this TIME and exact distances, so later walks stop at it. */
static inline void BK_FN(stamp_path)(BK_FN(solver) * bk, BK_IDX j, uint64_t d) {
    BK_FN(node) *nodes = bk->nodes;
    while (nodes[j].ts != bk->time) {
        BK_FN(node) *k = &nodes[j];
        k->ts = bk->time;
        k->dist_sink =
            (k->dist_sink & BK_SINK_BIT) | (uint32_t)(d < BK_DIST_MASK ? d : BK_DIST_MASK);
        d--;
        j = bk->arcs[k->parent].head;
    }
}

/* Find orphan i a new parent in its own tree: of the neighbours with residual towards i (source
 * tree) or from i (sink tree) whose path reaches the terminal, the closest one. If none, i
 * becomes free: its tree neighbours turn active (they may grow into it again) and its children
 * become orphans. */
static void BK_FN(adopt)(BK_FN(solver) * bk, BK_IDX i) {
    BK_FN(arc) *arcs = bk->arcs;
    BK_FN(node) *nodes = bk->nodes;
    const BK_IDX *sister = bk->sister;
    uint32_t sink = nodes[i].dist_sink & BK_SINK_BIT;
    BK_IDX best = BK_NONE;
    uint64_t best_d = UINT64_MAX;
    BK_IDX end = bk->first[i + 1];
    for (BK_IDX a = bk->first[i]; a < end; a++) {
        uint32_t residual = sink ? arcs[a].residual : arcs[sister[a]].residual;
        if (residual == 0)
            continue;
        BK_IDX j = arcs[a].head;
        if ((nodes[j].dist_sink & BK_SINK_BIT) != sink || nodes[j].parent == BK_NONE)
            continue;
        uint64_t d = BK_FN(origin_distance)(bk, j);
        if (d == UINT64_MAX)
            continue;
        if (d < best_d) {
            best = a;
            best_d = d;
        }
        BK_FN(stamp_path)(bk, j, d);
    }
    if (best != BK_NONE) {
        nodes[i].parent = best;
        nodes[i].ts = bk->time;
        nodes[i].dist_sink =
            sink | (uint32_t)(best_d + 1 < BK_DIST_MASK ? best_d + 1 : BK_DIST_MASK);
        return;
    }
    for (BK_IDX a = bk->first[i]; a < end; a++) {
#ifdef BK_SKIP_IDLE_PAIRS
        /* A pair with no residual either way can neither feed i nor hold a tree arc of j
         * (tree arcs keep residual towards their child), so j is not looked at: src/qpbo's
         * sub-graph views define this never to read a node another thread owns. */
        if ((arcs[a].residual | arcs[sister[a]].residual) == 0)
            continue;
#endif
        BK_IDX j = arcs[a].head;
        BK_FN(node) *nj = &nodes[j];
        if ((nj->dist_sink & BK_SINK_BIT) != sink || nj->parent == BK_NONE)
            continue;
        uint32_t residual = sink ? arcs[a].residual : arcs[sister[a]].residual;
        if (residual > 0)
            BK_FN(set_active)(bk, j);
        BK_IDX p = nj->parent;
        if (p != BK_TERMINAL && p != BK_ORPHAN && arcs[p].head == i)
            BK_FN(orphan_back)(bk, j);
    }
    nodes[i].parent = BK_NONE;
}

static void BK_FN(adopt_orphans)(BK_FN(solver) * bk) {
    for (;;) {
        while (bk->orphan_head < bk->orphan_tail)
            BK_FN(adopt)(bk, bk->orphans[bk->orphan_head++]);
        if (bk->orphan_low == bk->num_nodes)
            break;
        BK_FN(adopt)(bk, bk->orphans[bk->orphan_low++]);
    }
    bk->orphan_head = bk->orphan_tail = 0;
}

/* Grow the trees from active nodes until they touch, augment, adopt; stop when no node is
 * active (the source tree is then exactly the set reachable from the source: a min cut). */
static void BK_FN(run)(BK_FN(solver) * bk) {
    BK_FN(arc) *arcs = bk->arcs;
    BK_FN(node) *nodes = bk->nodes;
    const BK_IDX *sister = bk->sister;
    const BK_IDX *first = bk->first;
    BK_IDX current = BK_NONE;
    for (;;) {
        /* Keep growing from the node that found the last path: its other arcs are likely
         * to find the next one (v3's current node). */
        BK_IDX i = current;
        if (i != BK_NONE) {
            nodes[i].next = BK_NONE;
            if (nodes[i].parent == BK_NONE)
                i = BK_NONE;
        }
        if (i == BK_NONE && (i = BK_FN(next_active)(bk)) == BK_NONE)
            break;
        BK_FN(node) *ni = &nodes[i];
        BK_IDX mid = BK_NONE;
        uint32_t di = BK_FN(dist)(ni);
        if (!BK_FN(is_sink)(ni)) {
            for (BK_IDX a = first[i], end = first[i + 1]; a < end; a++) {
                if (arcs[a].residual == 0)
                    continue;
                BK_FN(node) *nj = &nodes[arcs[a].head];
                if (nj->parent == BK_NONE) {
                    nj->parent = sister[a];
                    nj->ts = ni->ts;
                    nj->dist_sink = BK_FN(dist_plus_one)(di);
                    BK_FN(set_active)(bk, arcs[a].head);
                } else if (BK_FN(is_sink)(nj)) {
                    mid = a;
                    break;
                } else if (nj->ts <= ni->ts && BK_FN(dist)(nj) > di) {
                    /* A shorter way to the source: re-hang j under i. */
                    nj->parent = sister[a];
                    nj->ts = ni->ts;
                    nj->dist_sink = BK_FN(dist_plus_one)(di);
                }
            }
        } else {
            for (BK_IDX a = first[i], end = first[i + 1]; a < end; a++) {
                BK_IDX in = sister[a];
                if (arcs[in].residual == 0)
                    continue;
                BK_FN(node) *nj = &nodes[arcs[a].head];
                if (nj->parent == BK_NONE) {
                    nj->parent = in;
                    nj->ts = ni->ts;
                    nj->dist_sink = BK_SINK_BIT | BK_FN(dist_plus_one)(di);
                    BK_FN(set_active)(bk, arcs[a].head);
                } else if (!BK_FN(is_sink)(nj)) {
                    mid = in;
                    break;
                } else if (nj->ts <= ni->ts && BK_FN(dist)(nj) > di) {
                    nj->parent = in;
                    nj->ts = ni->ts;
                    nj->dist_sink = BK_SINK_BIT | BK_FN(dist_plus_one)(di);
                }
            }
        }
        if (mid == BK_NONE) {
            current = BK_NONE;
            continue;
        }
        ni->next = i; /* counts as queued while it is the current node */
        current = i;
        BK_FN(next_time)(bk);
        BK_FN(augment)(bk, mid);
        if (bk->overflow)
            return;
        BK_FN(adopt_orphans)(bk);
    }
}

/* First solve: every node with terminal residual roots its tree and is active. */
static void BK_FN(init_trees)(BK_FN(solver) * bk) {
    bk->active_first = bk->active_last = BK_NONE;
    bk->orphan_head = bk->orphan_tail = 0;
    bk->orphan_low = bk->num_nodes;
    bk->time = 0;
    for (BK_IDX i = 0; i < bk->num_nodes; i++) {
        BK_FN(node) *node = &bk->nodes[i];
        node->next = BK_NONE;
        node->ts = 0;
        if (bk->tr[i] != 0) {
            node->parent = BK_TERMINAL;
            node->dist_sink = (bk->tr[i] < 0 ? BK_SINK_BIT : 0) | 1u;
            BK_FN(set_active)(bk, i);
        } else {
            node->parent = BK_NONE;
            node->dist_sink = 0;
        }
    }
}

static void BK_FN(mark)(BK_FN(solver) * bk, BK_IDX i) {
    if (!bk->marked[i]) {
        bk->marked[i] = 1;
        bk->marked_list[bk->num_marked++] = i;
    }
}

/* Add delta to node i's terminal residual (> 0: more supply from the source), which lowers by
 * delta the value of every cut with i on the source side. The residual pair (max(tr,0),
 * max(-tr,0)) keeps one side zero; the constant that renormalising sheds goes into the flow,
 * so flow + residual cut value stays each cut's capacity. */
static void BK_FN(shift_terminal)(BK_FN(solver) * bk, BK_IDX i, int64_t delta) {
    int64_t before = bk->tr[i], after = before + delta;
    BK_FN(add_flow)(bk, (before > 0 ? before : 0) - (after > 0 ? after : 0));
    bk->tr[i] = after;
}

static int BK_FN(cmp_change)(const void *pa, const void *pb) {
    const gcut__change *a = pa, *b = pb;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->index != b->index)
        return a->index < b->index ? -1 : 1;
    /* old_b holds the log position (see apply_changes): earliest first. */
    return a->old_b < b->old_b ? -1 : a->old_b > b->old_b;
}

/* Kohli-Torr: fold the logged capacity changes into the residual graph (new - old capacity
 * added to each residual; where an edge now carries more flow than its capacity, the excess is
 * handed to its endpoints' terminals), and mark every touched node. */
static gcut_status BK_FN(apply_changes)(BK_FN(solver) * bk, const gcut_graph *g) {
    int64_t count = g->num_changes;
    /* Several changes to one item: only the first one's old value matters. */
    gcut__change *order =
        gcut__malloc(gcut__mul_size((size_t)count + 1, sizeof *order), "bk change list");
    if (order == NULL)
        return GCUT_ERR_NOMEM;
    for (int64_t c = 0; c < count; c++) {
        order[c] = g->changes[c];
        order[c].old_b = c; /* position, for a stable sort */
    }
    qsort(order, (size_t)count, sizeof *order, BK_FN(cmp_change));
    for (int64_t k = 0; k < count; k++) {
        if (k > 0 && order[k].kind == order[k - 1].kind && order[k].index == order[k - 1].index)
            continue;
        const gcut__change *c = &g->changes[order[k].old_b];
        int64_t index = c->index;
        if (c->kind == 1) {
            int64_t d_source = g->tw_source[index] - c->old_a;
            int64_t d_sink = g->tw_sink[index] - c->old_b;
            if (d_source == 0 && d_sink == 0)
                continue;
            /* Adding to the source capacity adds d_source to every cut with i on the sink
             * side: a constant d_source, plus d_source towards the source on tr. */
            BK_FN(add_flow)(bk, d_source);
            BK_FN(shift_terminal)(bk, (BK_IDX)index, d_source - d_sink);
            BK_FN(mark)(bk, (BK_IDX)index);
            continue;
        }
        BK_IDX a = bk->edge_arc[index];
        if (a == BK_NONE)
            continue; /* self-loop */
        BK_IDX b = bk->sister[a];
        BK_IDX u = bk->arcs[b].head, v = bk->arcs[a].head;
        int64_t flow_uv = c->old_a - (int64_t)bk->arcs[a].residual;
        int64_t r_uv = g->edge_cap[index] - flow_uv;
        int64_t r_vu = g->edge_rev[index] + flow_uv;
        if (r_uv < 0) {
            /* u->v carries more than it may now: take the excess back, so u keeps it as
             * supply from the source and v misses it as demand towards the sink. */
            BK_FN(shift_terminal)(bk, u, -r_uv);
            BK_FN(shift_terminal)(bk, v, r_uv);
            r_vu += r_uv;
            r_uv = 0;
        } else if (r_vu < 0) {
            BK_FN(shift_terminal)(bk, v, -r_vu);
            BK_FN(shift_terminal)(bk, u, r_vu);
            r_uv += r_vu;
            r_vu = 0;
        }
        bk->arcs[a].residual = (uint32_t)r_uv;
        bk->arcs[b].residual = (uint32_t)r_vu;
        BK_FN(mark)(bk, u);
        BK_FN(mark)(bk, v);
    }
    gcut__free(order);
    return GCUT_OK;
}

/* Repair the trees around the marked nodes (Kolmogorov's reuse_trees): a marked node with
 * terminal residual becomes a root of the matching tree (its old children in the other tree
 * turn orphans), one without becomes an orphan, and all of them turn active. */
static void BK_FN(reuse_trees)(BK_FN(solver) * bk) {
    BK_FN(arc) *arcs = bk->arcs;
    BK_FN(node) *nodes = bk->nodes;
    const BK_IDX *sister = bk->sister;
    bk->active_first = bk->active_last = BK_NONE;
    bk->orphan_head = bk->orphan_tail = 0;
    bk->orphan_low = bk->num_nodes;
    BK_FN(next_time)(bk);
    for (BK_IDX m = 0; m < bk->num_marked; m++) {
        BK_IDX i = bk->marked_list[m];
        BK_FN(node) *ni = &nodes[i];
        bk->marked[i] = 0;
        BK_FN(set_active)(bk, i);
        int64_t tr = bk->tr[i];
        if (tr == 0) {
            if (ni->parent != BK_NONE)
                BK_FN(orphan_back)(bk, i);
            continue;
        }
        uint32_t sink = tr < 0 ? BK_SINK_BIT : 0;
        if (ni->parent == BK_NONE || (ni->dist_sink & BK_SINK_BIT) != sink) {
            /* i changes tree: its children in the old tree lose their parent, and the old
             * tree's neighbours that can reach i across an arc may now find a path. */
            for (BK_IDX a = bk->first[i]; a < bk->first[i + 1]; a++) {
                BK_IDX j = arcs[a].head;
                if (bk->marked[j])
                    continue; /* treated when its own turn comes */
                BK_FN(node) *nj = &nodes[j];
                if (nj->parent == BK_NONE || nj->parent == BK_ORPHAN)
                    continue;
                /* Both, for an orphaned child: should i leave its new tree again, the
                 * child must be active to grow back into it. */
                if (nj->parent == sister[a])
                    BK_FN(orphan_back)(bk, j);
                if ((nj->dist_sink & BK_SINK_BIT) != sink)
                    BK_FN(set_active)(bk, j);
            }
        }
        ni->parent = BK_TERMINAL;
        ni->ts = bk->time;
        ni->dist_sink = sink | 1u;
    }
    bk->num_marked = 0;
    BK_FN(adopt_orphans)(bk);
}

static void BK_FN(write_labels)(const BK_FN(solver) * bk, uint8_t *labels) {
    for (BK_IDX i = 0; i < bk->num_nodes; i++) {
        const BK_FN(node) *node = &bk->nodes[i];
        labels[i] = node->parent != BK_NONE && !BK_FN(is_sink)(node) ? GCUT_SOURCE : GCUT_SINK;
    }
}

/* From a built (or warm-updated) layout: set up the trees, run, write the results. @return
 * GCUT_ERR_OVERFLOW if the flow value left int64; the caller then discards bk. */
static gcut_status BK_FN(solve_built)(BK_FN(solver) * bk, bool warm, const gcut_options *options,
                                      double build_ms, int64_t *flow, uint8_t *labels,
                                      gcut_stats *stats) {
    double t1 = gcut__now_ms();
    int64_t augmentations_before = bk->augmentations;
    if (warm)
        BK_FN(reuse_trees)(bk);
    else
        BK_FN(init_trees)(bk);
    if (!bk->overflow)
        BK_FN(run)(bk);
    double solve_ms = gcut__now_ms() - t1;
    if (bk->overflow)
        return gcut__fail(GCUT_ERR_OVERFLOW,
                          "bk: the maximum flow of this problem passes INT64_MAX (terminal "
                          "capacities too large)");
    if (labels != NULL)
        BK_FN(write_labels)(bk, labels);
    *flow = bk->flow;
    stats->build_ms += build_ms;
    stats->solve_ms += solve_ms;
    stats->augmentations += bk->augmentations - augmentations_before;
    if (options->verbose)
        fprintf(stderr,
                "bk: %s solve, %" PRIu64 " nodes, %" PRIu64 " arcs (%d-bit ids), flow %" PRId64
                ", %" PRId64 " augmentations, build %.1f ms, solve %.1f ms\n",
                warm ? "warm" : "fresh", (uint64_t)bk->num_nodes, (uint64_t)bk->num_arcs,
                (int)(8 * sizeof(BK_IDX)), bk->flow, bk->augmentations - augmentations_before,
                build_ms, solve_ms);
    return GCUT_OK;
}

static gcut_status BK_FN(solve)(gcut_graph *g, const gcut_options *options, int64_t *flow,
                                uint8_t *labels, gcut_stats *stats) {
    double t0 = gcut__now_ms();
    BK_FN(solver) *bk = NULL;
    bool warm = options->warm && g->state.data != NULL;
    gcut_status st;
    if (warm) {
        bk = g->state.data;
        st = BK_FN(apply_changes)(bk, g);
        if (st != GCUT_OK) {
            gcut__graph_drop_state(g);
            return st;
        }
        gcut__graph_clear_changes(g);
    } else {
        st = BK_FN(build)(g, options->warm != 0, &bk);
        if (st != GCUT_OK)
            return st;
    }
    st = BK_FN(solve_built)(bk, warm, options, gcut__now_ms() - t0, flow, labels, stats);
    if (st != GCUT_OK) {
        if (warm)
            gcut__graph_drop_state(g);
        else
            BK_FN(free)(bk);
        return st;
    }
    if (!options->warm) {
        BK_FN(free)(bk);
    } else if (!warm) {
        g->state.owner = "bk";
        g->state.data = bk;
        g->state.free_fn = BK_FN(free);
        g->structure_changed = false;
        gcut__graph_clear_changes(g);
    }
    return GCUT_OK;
}

static gcut_status BK_FN(solve_grid)(const gcut_grid *grid, const gcut_options *options,
                                     int64_t *flow, uint8_t *labels, gcut_stats *stats) {
    double t0 = gcut__now_ms();
    BK_FN(solver) *bk = NULL;
    gcut_status st = BK_FN(build_grid)(grid, &bk);
    if (st != GCUT_OK)
        return st;
    st = BK_FN(solve_built)(bk, false, options, gcut__now_ms() - t0, flow, labels, stats);
    BK_FN(free)(bk);
    return st;
}

#undef BK_NONE
#undef BK_TERMINAL
#undef BK_ORPHAN
#undef BK_SINK_BIT
#undef BK_DIST_MASK
