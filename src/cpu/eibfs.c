/* eibfs.c - "ibfs": the incremental breadth-first search max-flow of Goldberg, Hed, Kaplan,
 * Tarjan & Werneck (ESA 2011, sections 2-3; the same search as the 2015 paper's, section 2) on
 * general graphs: two trees with exact BFS labels, grown a level per pass, orphans re-attached by
 * label. Design and measurements: docs/CPU-SERIAL.md, "Second pass" to "Fourth pass". */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define IB_NONE UINT32_MAX           /* parent: free node */
#define IB_TERMINAL (UINT32_MAX - 1) /* parent: attached to its tree's terminal */
#define IB_ORPHAN (UINT32_MAX - 2)   /* parent: lost in an augmentation, waiting for adoption */
#define IB_SINK 0x80000000u          /* label bit: in the sink tree */
#define IB_LABEL 0x7fffffffu
/* The label of a free node: no tree's label (x ^ tree bit, for either tree, is at least
 * IB_LABEL, above every distance), so a test of a neighbour's label against a tree's label or a
 * minimum over one tree's labels needs no separate test for free nodes. */
#define IB_FREE IB_LABEL

/* One arc, 8 bytes: arcs are grouped by tail (CSR), the reverse arc is sister[a]. The head's top
 * bit says whether the reverse arc is residual (the 2015 paper's implementation keeps the same
 * bit), so a scan of a node's arcs in the direction into the node (the source tree's adoption,
 * the sink tree's growth) reads only the node's own arcs, never the reverse arcs scattered over
 * the array; pushes keep it (ib_push). Node indices are below 2^31. */
typedef struct ib_arc {
    uint32_t head;     /* IB_REV_RESIDUAL | the head node */
    uint32_t residual; /* a pair's two residuals sum to at most 2 x INT32_MAX */
} ib_arc;

#define IB_REV_RESIDUAL 0x80000000u
#define IB_HEAD 0x7fffffffu

/* One node, 24 bytes: its arcs are first .. (this + 1)->first - 1. Its label is apart
 * (ib_solver.label), 4 bytes a node, so the scans that read every neighbour's label (adoption,
 * growth) touch 16 nodes a cache line. */
typedef struct ib_node {
    uint32_t first;
    uint32_t parent; /* arc node -> parent (source tree: the flow runs parent -> node on the
                        reverse arc), or IB_NONE / IB_TERMINAL / IB_ORPHAN */
    uint32_t stamp;  /* the last active list the node was put in (lists are numbered) */
    uint32_t son;    /* the first of its children (nodes whose parent arc leads here), or IB_NIL */
    uint32_t sib;    /* the next child of its parent, or IB_NIL */
    uint32_t onext;  /* the next orphan in its bucket (ib_solver.obucket) */
} ib_node;

#define IB_NIL UINT32_MAX /* end of a children list */

/* The nodes of one tree waiting to be scanned at one level; each node at most once. */
typedef struct ib_list {
    uint32_t *items;
    uint32_t count;
    uint32_t id;
} ib_list;

typedef struct ib_solver {
    uint32_t num_nodes, num_arcs;
    ib_node *nodes;  /* num_nodes + 1: the last one closes the CSR */
    uint32_t *label; /* IB_SINK bit and the BFS distance from the node's terminal (1 = next to
                        it), kept while an orphan; IB_FREE for free nodes */
    ib_arc *arcs;
    uint32_t *sister;
    int64_t *tr;       /* terminal residual: > 0 from the source, < 0 to the sink */
    ib_list cur[2];    /* [0] source tree, [1] sink tree: the level to be scanned next */
    ib_list next[2];   /* the level after it, filled while that tree grows */
    uint32_t level[2]; /* the label of cur's nodes */
    int growing;       /* -1, or the tree whose pass is running */
    uint32_t list_ids; /* numbers handed to lists */
    /* Orphans in buckets by label (both trees; a node is in one at most once at a time),
     * linked through ib_node.onext: adoption takes the lowest label first, so an orphan never
     * adopts a parent that is itself still an orphan of a lower label, and in excess mode it stops
     * at the label of the highest pending excess (ib_settle). orphans[] is the cut's BFS queue. */
    uint32_t *orphans;
    uint32_t orphan_count;
    uint32_t *obucket;
    uint32_t omin, omax;
    /* Excesses (GCUT_IBFS_EXCESS=1; the 2015 paper's idea, section 3): an augmentation pushes
     * the whole residual of the arc between the trees and leaves what a tree arc cannot carry
     * at the node below it (tr > 0 in the sink tree, tr < 0 in the source tree); such a node,
     * once adopted, forwards it (ebucket, by label; in_excess[] marks its members). tr then
     * means a node's own excess: > 0 supply (source-tree roots), < 0 demand (sink-tree roots),
     * and the flow value is the final cut's capacity (ib_cut_value). */
    bool use_excess;
    bool excess_used;          /* an augmentation left excesses: the flow is the cut's capacity */
    uint32_t excess_min_path;  /* excesses only on paths of at least this many arcs */
    uint32_t *ebucket, *enext; /* pending excesses in buckets by label, highest taken first */
    uint32_t excess_count, emax;
    uint8_t *in_excess;
    int64_t flow;
    bool overflow;
    int64_t augmentations;
} ib_solver;

static void ib_free(ib_solver *ib) {
    if (ib == NULL)
        return;
    gcut__free(ib->nodes);
    gcut__free(ib->label);
    gcut__free(ib->arcs);
    gcut__free(ib->sister);
    gcut__free(ib->tr);
    for (int t = 0; t < 2; t++) {
        gcut__free(ib->cur[t].items);
        gcut__free(ib->next[t].items);
    }
    gcut__free(ib->orphans);
    gcut__free(ib->obucket);
    gcut__free(ib->ebucket);
    gcut__free(ib->enext);
    gcut__free(ib->in_excess);
    gcut__free(ib);
}

static inline void ib_add_flow(ib_solver *ib, int64_t amount) {
    if (amount > 0 ? ib->flow > INT64_MAX - amount : ib->flow < INT64_MIN - amount)
        ib->overflow = true;
    else
        ib->flow += amount;
}

static inline bool ib_in_tree(uint32_t label, int tree) {
    return label != IB_FREE && (tree ? (label & IB_SINK) != 0 : (label & IB_SINK) == 0);
}

/* Put node v in list l unless it is there already (its stamp is the list's number). */
static inline void ib_list_push(ib_solver *ib, ib_list *l, uint32_t v) {
    if (ib->nodes[v].stamp == l->id)
        return;
    ib->nodes[v].stamp = l->id;
    l->items[l->count++] = v;
}

static inline void ib_list_reset(ib_solver *ib, ib_list *l) {
    l->count = 0;
    l->id = ++ib->list_ids;
}

static inline void ib_orphan(ib_solver *ib, uint32_t v) {
    ib->nodes[v].parent = IB_ORPHAN;
    ib->orphan_count++;
    const uint32_t d = ib->label[v] & IB_LABEL;
    ib->nodes[v].onext = ib->obucket[d];
    ib->obucket[d] = v;
    if (d < ib->omin)
        ib->omin = d;
    if (d > ib->omax)
        ib->omax = d;
}

/* Children lists (the IBFS paper's code keeps the same): each tree node below a root is in its
 * parent's list, so a relabel orphans its children without scanning its arcs. */
static inline void ib_link(ib_node *nodes, uint32_t v, uint32_t parent) {
    nodes[v].sib = nodes[parent].son;
    nodes[parent].son = v;
}

/* Take v out of its parent's list (lists are short: at most the parent's degree). */
static inline void ib_unlink(ib_node *nodes, uint32_t v, uint32_t parent) {
    uint32_t *at = &nodes[parent].son;
    while (*at != v)
        at = &nodes[*at].sib;
    *at = nodes[v].sib;
}

/* v's tree arc (to parent) was saturated: v leaves parent's list and waits for adoption. */
static inline void ib_cut(ib_solver *ib, uint32_t v, uint32_t parent) {
    ib_unlink(ib->nodes, v, parent);
    ib_orphan(ib, v);
}

/* Build the CSR from the graph's edge arrays (self-loops dropped), cancel each node's common
 * terminal capacity into the flow. */
static gcut_status ib_build(const gcut_graph *g, ib_solver **out) {
    *out = NULL;
    if (g->num_nodes >= (int64_t)INT32_MAX - 8 || g->num_edges >= (int64_t)(UINT32_MAX / 2) - 8)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "ibfs: %" PRId64 " nodes and %" PRId64
                          " edges pass its 32-bit layout (at most 2^31 - 9 nodes and 2^31 - 9 "
                          "edges); use bk",
                          g->num_nodes, g->num_edges);
    size_t n = (size_t)g->num_nodes;
    ib_solver *ib = gcut__calloc(1, sizeof *ib, "ibfs solver");
    if (ib == NULL)
        return GCUT_ERR_NOMEM;
    ib->num_nodes = (uint32_t)n;
    ib->nodes = gcut__calloc(n + 1, sizeof(ib_node), "ibfs nodes");
    ib->label = gcut__malloc(gcut__mul_size(n + 1, sizeof(uint32_t)), "ibfs labels");
    ib->tr = gcut__malloc(gcut__mul_size(n, sizeof(int64_t)), "ibfs terminal residuals");
    ib->orphans = gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)), "ibfs orphan queue");
    /* Labels stay below n + 2 (a tree's frontier is at most its node count + 1). */
    ib->obucket = gcut__malloc(gcut__mul_size(n + 2, sizeof(uint32_t)), "ibfs orphan buckets");
    bool ok = ib->nodes && ib->label && ib->tr && ib->orphans && ib->obucket;
    if (ok)
        memset(ib->obucket, 0xff, (n + 2) * sizeof(uint32_t));
    ib->omin = UINT32_MAX;
    ib->omax = 0;
    ib->use_excess = gcut__env_int("GCUT_IBFS_EXCESS", 1, 0, 1) == 1;
    ib->excess_min_path = (uint32_t)gcut__env_int("GCUT_IBFS_EXCESS_MIN", 32, 0, 1 << 30);
    if (ok && ib->use_excess) {
        ib->ebucket = gcut__malloc(gcut__mul_size(n + 2, sizeof(uint32_t)), "ibfs excesses");
        ib->enext = gcut__malloc(gcut__mul_size(n + 1, sizeof(uint32_t)), "ibfs excesses");
        ib->in_excess = gcut__calloc(n + 1, 1, "ibfs excesses");
        ok = ib->ebucket && ib->enext && ib->in_excess;
        if (ok)
            memset(ib->ebucket, 0xff, (n + 2) * sizeof(uint32_t));
    }
    for (int t = 0; t < 2 && ok; t++) {
        ib->cur[t].items = gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)), "ibfs active lists");
        ib->next[t].items = gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)), "ibfs active lists");
        ok = ib->cur[t].items && ib->next[t].items;
    }
    if (!ok) {
        ib_free(ib);
        return GCUT_ERR_NOMEM;
    }
    ib_node *nodes = ib->nodes;
    for (int64_t e = 0; e < g->num_edges; e++) {
        int64_t u = gcut__edge_u(g, e), v = gcut__edge_v(g, e);
        if (u != v) {
            nodes[u].first++;
            nodes[v].first++;
        }
    }
    /* Counts to block ends; placing an arc decrements its tail's entry, which leaves each
     * node's entry at the start of its block. */
    uint32_t sum = 0;
    for (size_t v = 0; v <= n; v++) {
        sum += nodes[v].first;
        nodes[v].first = sum;
    }
    ib->num_arcs = sum;
    ib->arcs = gcut__malloc(gcut__mul_size(sum, sizeof(ib_arc)), "ibfs arcs");
    ib->sister = gcut__malloc(gcut__mul_size(sum, sizeof(uint32_t)), "ibfs reverse arcs");
    if (ib->arcs == NULL || ib->sister == NULL) {
        ib_free(ib);
        return GCUT_ERR_NOMEM;
    }
    for (int64_t e = g->num_edges - 1; e >= 0; e--) {
        uint32_t u = (uint32_t)gcut__edge_u(g, e), v = (uint32_t)gcut__edge_v(g, e);
        if (u == v)
            continue;
        uint32_t a = --nodes[u].first, b = --nodes[v].first;
        const uint32_t cap = (uint32_t)g->edge_cap[e], rev = (uint32_t)g->edge_rev[e];
        ib->arcs[a] = (ib_arc){v | (rev ? IB_REV_RESIDUAL : 0), cap};
        ib->arcs[b] = (ib_arc){u | (cap ? IB_REV_RESIDUAL : 0), rev};
        ib->sister[a] = b;
        ib->sister[b] = a;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = g->tw_source[i], t = g->tw_sink[i];
        ib_add_flow(ib, s < t ? s : t);
        ib->tr[i] = s - t;
        nodes[i].parent = IB_NONE;
        nodes[i].stamp = 0;
        nodes[i].son = IB_NIL;
        ib->label[i] = IB_FREE;
    }
    ib->label[n] = IB_FREE;
    *out = ib;
    return GCUT_OK;
}

/* Move amount (> 0) along arc a (reverse arc s), keeping both reverse-residual bits.
 * @return whether a is saturated. */
static inline bool ib_push(ib_arc *arcs, uint32_t a, uint32_t s, uint32_t amount) {
    arcs[s].residual += amount;
    arcs[a].head |= IB_REV_RESIDUAL;
    if ((arcs[a].residual -= amount) != 0)
        return false;
    arcs[s].head &= IB_HEAD;
    return true;
}

static void ib_walk(ib_solver *ib, uint32_t x, int t, int64_t amount);

/* Push the bottleneck of source -> ... -> v -> w -> ... -> sink (arc a = v -> w); the tree arcs
 * it saturates leave orphans. In excess mode, between two roots of label 1 (the terminals'
 * neighbours; the 2015 paper's implementation keeps the same rule), push arc a's whole residual
 * instead and let ib_walk leave what the trees cannot carry as excesses; a path whose root is a
 * node that changed trees (at a frontier label) takes the bottleneck, so excess cannot go round
 * between the trees for ever. A root at the arc's own end limits the amount to its supply or
 * demand. */
static void ib_augment(ib_solver *ib, uint32_t v, uint32_t a, uint32_t w) {
    ib_node *nodes = ib->nodes;
    ib_arc *arcs = ib->arcs;
    const uint32_t *sister = ib->sister;
    int64_t delta = arcs[a].residual;
    uint32_t x = v;
    for (uint32_t p; (p = nodes[x].parent) != IB_TERMINAL; x = arcs[p].head & IB_HEAD) {
        int64_t r = arcs[sister[p]].residual;
        if (r < delta)
            delta = r;
    }
    if (ib->tr[x] < delta)
        delta = ib->tr[x];
    const uint32_t rs = x;
    x = w;
    for (uint32_t p; (p = nodes[x].parent) != IB_TERMINAL; x = arcs[p].head & IB_HEAD) {
        int64_t r = arcs[p].residual;
        if (r < delta)
            delta = r;
    }
    if (-ib->tr[x] < delta)
        delta = -ib->tr[x];
    const uint32_t *label = ib->label;
    if (ib->use_excess && (label[x] & IB_LABEL) == 1 && (label[rs] & IB_LABEL) == 1 &&
        (label[v] & IB_LABEL) + (label[w] & IB_LABEL) >= ib->excess_min_path) {
        int64_t amount = arcs[a].residual;
        if (rs == v && ib->tr[v] < amount)
            amount = ib->tr[v];
        if (x == w && -ib->tr[w] < amount)
            amount = -ib->tr[w];
        ib->excess_used = true;
        ib_push(arcs, a, sister[a], (uint32_t)amount);
        ib_walk(ib, w, 1, amount);
        ib_walk(ib, v, 0, amount);
        ib->augmentations++;
        return;
    }

    uint32_t d32 = (uint32_t)delta;
    ib_push(arcs, a, sister[a], d32);
    x = v;
    for (uint32_t p; (p = nodes[x].parent) != IB_TERMINAL;) {
        uint32_t up = arcs[p].head & IB_HEAD;
        if (ib_push(arcs, sister[p], p, d32))
            ib_cut(ib, x, up);
        x = up;
    }
    if ((ib->tr[x] -= delta) == 0)
        ib_orphan(ib, x);
    x = w;
    for (uint32_t p; (p = nodes[x].parent) != IB_TERMINAL;) {
        uint32_t up = arcs[p].head & IB_HEAD;
        if (ib_push(arcs, p, sister[p], d32))
            ib_cut(ib, x, up);
        x = up;
    }
    if ((ib->tr[x] += delta) == 0)
        ib_orphan(ib, x);
    ib_add_flow(ib, delta);
    ib->augmentations++;
}

/* Excess mode: node v holds an excess its tree must forward once v is adopted (ib_settle). */
static inline void ib_excess_push(ib_solver *ib, uint32_t v) {
    if (ib->in_excess[v])
        return;
    ib->in_excess[v] = 1;
    const uint32_t d = ib->label[v] & IB_LABEL;
    ib->enext[v] = ib->ebucket[d];
    ib->ebucket[d] = v;
    ib->excess_count++;
    if (d > ib->emax)
        ib->emax = d;
}

/* Excess mode: orphan v found no place in its tree but holds an excess: a source-tree node with
 * a demand (tr < 0) becomes a root of the sink tree, a sink-tree node with a supply (tr > 0) one
 * of the source tree, at that tree's frontier. Its children are orphans already, and every
 * residual arc into v from its old tree starts at that tree's frontier (why it found no place),
 * so both trees' invariants hold; at the new tree's frontier it is scanned like any node there. */
static void ib_switch_tree(ib_solver *ib, uint32_t v, int o) {
    const uint32_t frontier = ib->level[o] + (ib->growing == o ? 1u : 0u);
    ib->nodes[v].parent = IB_TERMINAL;
    ib->label[v] = frontier | (o ? IB_SINK : 0);
    ib_list_push(ib, frontier == ib->level[o] ? &ib->cur[o] : &ib->next[o], v);
}

/* Excess mode: carry amount from x towards the root of tree t (the sink tree: flow arriving at x
 * goes on to the sink; the source tree: flow leaving x is drawn from the source), merging the
 * excesses of the nodes passed. What a tree arc cannot carry stays at the node below it, which
 * becomes an orphan; the root keeps the rest (and is an orphan if its own excess no longer has
 * its tree's sign). */
static void ib_walk(ib_solver *ib, uint32_t x, int t, int64_t amount) {
    ib_node *nodes = ib->nodes;
    ib_arc *arcs = ib->arcs;
    const uint32_t *sister = ib->sister;
    int64_t *tr = ib->tr;
    for (;;) {
        const uint32_t p = nodes[x].parent;
        if (p == IB_TERMINAL) {
            tr[x] += t ? amount : -amount;
            if (t ? tr[x] >= 0 : tr[x] <= 0) {
                ib_orphan(ib, x);
                if (tr[x] != 0)
                    ib_excess_push(ib, x);
            }
            return;
        }
        /* A node below its root holds an excess only while filed in ebucket, whose flags
         * (a byte per node) are cheaper to read than tr[]. */
        if (ib->in_excess[x]) {
            amount += t ? tr[x] : -tr[x];
            tr[x] = 0;
        }
        /* The arc the flow takes: x -> parent in the sink tree, parent -> x in the source's. */
        const uint32_t fa = t ? p : sister[p], up = arcs[p].head & IB_HEAD;
        const uint32_t cap = arcs[fa].residual;
        if (amount < (int64_t)cap) {
            ib_push(arcs, fa, sister[fa], (uint32_t)amount);
            x = up;
            continue;
        }
        ib_push(arcs, fa, sister[fa], cap);
        ib_cut(ib, x, up);
        if (amount > cap) {
            tr[x] = t ? amount - cap : cap - amount;
            ib_excess_push(ib, x);
        }
        amount = cap;
        x = up;
    }
}

static void ib_adopt_orphans(ib_solver *ib, uint32_t limit);

/* Excess mode: forward the pending excesses, the highest label first (the 2015 paper's code
 * keeps the same order): adopt the orphans up to that label (the excess node's own adoption and
 * the nodes its path may pass; the orphans above wait, since the walks below cannot reach them
 * and a later walk may orphan them again), walk the excess towards its root, merging the
 * excesses below it on the way; then adopt the rest. Walks leave orphans and excesses only below
 * the label they start from. */
static void ib_settle(ib_solver *ib) {
    while (ib->excess_count > 0) {
        while (ib->ebucket[ib->emax] == IB_NIL)
            ib->emax--;
        const uint32_t d = ib->emax;
        ib_adopt_orphans(ib, d); /* adoption files no excesses: bucket d keeps its head */
        const uint32_t x = ib->ebucket[d];
        ib->ebucket[d] = ib->enext[x];
        ib->excess_count--;
        ib->in_excess[x] = 0;
        const uint32_t p = ib->nodes[x].parent;
        if (ib->tr[x] == 0 || p == IB_TERMINAL || p == IB_NONE)
            continue; /* merged into a walk, or now a root */
        if ((ib->label[x] & IB_LABEL) != d) {
            ib_excess_push(ib, x); /* relabelled while waiting: file it at its label */
            continue;
        }
        const int t = (ib->label[x] & IB_SINK) ? 1 : 0;
        const int64_t amount = t ? ib->tr[x] : -ib->tr[x];
        ib->tr[x] = 0;
        ib_walk(ib, x, t, amount);
    }
    ib_adopt_orphans(ib, UINT32_MAX);
}

/* Re-attach orphan v of tree t (label d): a parent at label d - 1 through a residual arc, or
 * else the smallest label + 1 over its residual neighbours in the tree (its children become
 * orphans), or free if that is past the tree's frontier (a free node next to an unscanned tree
 * node is found again when that node is scanned). */
static inline __attribute__((always_inline)) void ib_adopt(ib_solver *ib, uint32_t v, const int t) {
    ib_node *nodes = ib->nodes;
    const ib_arc *arcs = ib->arcs;
    uint32_t *label = ib->label;
    const uint32_t tree_bit = t ? IB_SINK : 0, d = label[v] ^ tree_bit;
    uint32_t best = IB_LABEL, best_arc = IB_NONE;
    const uint32_t end = nodes[v + 1].first;
    for (uint32_t b = nodes[v].first; b < end; b++) {
        /* Source tree: the arc u -> v must be residual; sink tree: v -> u. Both are known from
         * v's own arc, so the neighbour's label is read only across residual arcs. */
        if ((t ? arcs[b].residual : arcs[b].head & IB_REV_RESIDUAL) == 0)
            continue;
        /* The other tree's labels and IB_FREE are at least IB_LABEL here. */
        const uint32_t lu = label[arcs[b].head & IB_HEAD] ^ tree_bit;
        if (lu == d - 1) {
            nodes[v].parent = b;
            ib_link(nodes, v, arcs[b].head & IB_HEAD);
            return;
        }
        if (lu < best) {
            best = lu;
            best_arc = b;
        }
    }
    /* No parent at d - 1: v's label rises, so its children lose theirs. */
    for (uint32_t u = nodes[v].son, next; u != IB_NIL; u = next) {
        next = nodes[u].sib;
        ib_orphan(ib, u);
    }
    nodes[v].son = IB_NIL;
    const uint32_t frontier = ib->level[t] + (ib->growing == t ? 1u : 0u);
    if (best_arc == IB_NONE || best + 1 > frontier) {
        if (ib->use_excess && ib->tr[v] != 0) {
            ib_switch_tree(ib, v, 1 - t);
            return;
        }
        nodes[v].parent = IB_NONE;
        label[v] = IB_FREE;
        return;
    }
    nodes[v].parent = best_arc;
    label[v] = (best + 1) | tree_bit;
    ib_link(nodes, v, arcs[best_arc].head & IB_HEAD);
    if (best + 1 == ib->level[t])
        ib_list_push(ib, &ib->cur[t], v);
    else if (best + 1 == frontier)
        ib_list_push(ib, &ib->next[t], v);
}

/* Adopt the orphans of label up to limit, the lowest first. A relabel leaves orphans only
 * above the label being taken (its children), so one rising sweep settles them. */
static void ib_adopt_orphans(ib_solver *ib, uint32_t limit) {
    uint32_t *bucket = ib->obucket, d = ib->omin;
    for (; d <= ib->omax && d <= limit; d++) {
        uint32_t v;
        while ((v = bucket[d]) != IB_NIL) {
            bucket[d] = ib->nodes[v].onext;
            ib->orphan_count--;
            /* Only the source tree's nodes have no sink bit; an orphan keeps its label. One
             * copy per tree (t a constant in each), so the direction tests leave the loops. */
            if (ib->label[v] & IB_SINK)
                ib_adopt(ib, v, 1);
            else
                ib_adopt(ib, v, 0);
        }
    }
    if (d > ib->omax) {
        ib->omin = UINT32_MAX;
        ib->omax = 0;
    } else {
        ib->omin = d;
    }
}

/* One pass of tree t: scan every node of label level[t] (the list may grow while it runs: an
 * orphan relabelled to that level joins it), claim free neighbours at the next level, augment
 * where the other tree is met. */
static inline __attribute__((always_inline)) void ib_grow(ib_solver *ib, const int t) {
    ib_node *nodes = ib->nodes;
    ib_arc *arcs = ib->arcs;
    const uint32_t *sister = ib->sister;
    uint32_t *label = ib->label;
    const uint32_t level = ib->level[t], tree_bit = t ? IB_SINK : 0;
    const uint32_t want = level | tree_bit;
    ib->growing = t;
    ib_list_reset(ib, &ib->next[t]);
    ib_list *cur = &ib->cur[t];
    for (uint32_t i = 0; i < cur->count; i++) {
        const uint32_t v = cur->items[i];
        /* v must still be a tree node at this level: only an augmentation (and the settling
         * after it) can move it, so it is checked here and after each. */
        if (label[v] != want) /* IB_FREE is no tree's label */
            continue;
        for (uint32_t b = nodes[v].first; b < nodes[v + 1].first; b++) {
            /* The arc out of the tree: v -> w for the source tree, w -> v for the sink's. */
            if ((t ? arcs[b].head & IB_REV_RESIDUAL : arcs[b].residual) == 0)
                continue;
            const uint32_t w = arcs[b].head & IB_HEAD;
            const uint32_t out = t ? sister[b] : b;
            const uint32_t lw = label[w];
            if (lw == IB_FREE) {
                ib_node *nw = &nodes[w];
                nw->parent = sister[b];
                label[w] = (level + 1) | tree_bit;
                nw->sib = nodes[v].son;
                nodes[v].son = w;
                ib_list_push(ib, &ib->next[t], w);
            } else if ((lw & IB_SINK) != tree_bit) {
                if (t)
                    ib_augment(ib, w, out, v);
                else
                    ib_augment(ib, v, out, w);
                if (ib->use_excess)
                    ib_settle(ib);
                else
                    ib_adopt_orphans(ib, UINT32_MAX);
                if (label[v] != want)
                    break;
                b--; /* the same arc again: it may still be residual */
            }
        }
    }
    ib->growing = -1;
    ib_list tmp = ib->cur[t];
    ib->cur[t] = ib->next[t];
    ib->next[t] = tmp;
    ib->level[t] = level + 1;
}

/* @return the tree that closed (0 source, 1 sink): no residual arc leaves it. */
static int ib_run(ib_solver *ib) {
    ib_node *nodes = ib->nodes;
    ib->growing = -1;
    for (int t = 0; t < 2; t++) {
        ib_list_reset(ib, &ib->cur[t]);
        ib->level[t] = 1;
    }
    for (uint32_t i = 0; i < ib->num_nodes; i++) {
        if (ib->tr[i] == 0)
            continue;
        int t = ib->tr[i] < 0;
        nodes[i].parent = IB_TERMINAL;
        ib->label[i] = 1u | (t ? IB_SINK : 0);
        ib_list_push(ib, &ib->cur[t], i);
    }
    /* The trees take turns, a pass each (GCUT_IBFS_GROW=0: the tree with the shorter frontier
     * list grows instead, the first version's rule; docs/CPU-SERIAL.md, "Second pass", item 4). */
    const int shorter = gcut__env_int("GCUT_IBFS_GROW", 1, 0, 1) == 0;
    int last = 1;
    for (;;) {
        if (ib->cur[0].count == 0)
            return 0;
        if (ib->cur[1].count == 0)
            return 1;
        last = shorter ? (ib->cur[0].count <= ib->cur[1].count ? 0 : 1) : 1 - last;
        if (last) /* one copy per tree, as the adoption */
            ib_grow(ib, 1);
        else
            ib_grow(ib, 0);
    }
}

/* The source side of the smallest minimum cut: the nodes the source reaches in the residual
 * graph. If the source tree closed, that is the tree; otherwise a breadth-first search. */
static void ib_write_labels(ib_solver *ib, int closed, uint8_t *labels) {
    const ib_node *nodes = ib->nodes;
    const uint32_t n = ib->num_nodes;
    if (closed == 0) {
        for (uint32_t i = 0; i < n; i++)
            labels[i] = ib_in_tree(ib->label[i], 0) ? GCUT_SOURCE : GCUT_SINK;
        return;
    }
    uint32_t *queue = ib->orphans; /* free now: no orphans are left */
    uint32_t tail = 0;
    for (uint32_t i = 0; i < n; i++) {
        labels[i] = ib->tr[i] > 0 ? GCUT_SOURCE : GCUT_SINK;
        if (ib->tr[i] > 0)
            queue[tail++] = i;
    }
    for (uint32_t h = 0; h < tail; h++) {
        uint32_t v = queue[h];
        for (uint32_t b = nodes[v].first; b < nodes[v + 1].first; b++) {
            uint32_t w = ib->arcs[b].head & IB_HEAD;
            if (ib->arcs[b].residual > 0 && labels[w] != GCUT_SOURCE) {
                labels[w] = GCUT_SOURCE;
                queue[tail++] = w;
            }
        }
    }
}

/* Excess mode's flow value: the capacity of the cut labels describes (the original capacities:
 * terminal arcs of both kinds and the edges from the source side to the sink side). The source
 * side is closed in the residual graph and holds every supply, the sink side every demand, so
 * the cut is minimum and its capacity is the maximum flow. @return false past INT64_MAX. */
static bool ib_cut_value(const gcut_graph *g, const uint8_t *labels, int64_t *value) {
    int64_t sum = 0;
    for (int64_t i = 0; i < g->num_nodes; i++) {
        int64_t c = labels[i] == GCUT_SOURCE ? g->tw_sink[i] : g->tw_source[i];
        if (c > INT64_MAX - sum)
            return false;
        sum += c;
    }
    for (int64_t e = 0; e < g->num_edges; e++) {
        int64_t u = gcut__edge_u(g, e), v = gcut__edge_v(g, e), c = 0;
        if (labels[u] == GCUT_SOURCE && labels[v] != GCUT_SOURCE)
            c = g->edge_cap[e];
        else if (labels[v] == GCUT_SOURCE && labels[u] != GCUT_SOURCE)
            c = g->edge_rev[e];
        if (c > INT64_MAX - sum)
            return false;
        sum += c;
    }
    *value = sum;
    return true;
}

gcut_status gcut__ibfs_solve_graph(gcut_graph *graph, const gcut_options *options, int64_t *flow,
                                   uint8_t *labels, gcut_stats *stats) {
    double t0 = gcut__now_ms();
    ib_solver *ib = NULL;
    gcut_status st = ib_build(graph, &ib);
    if (st != GCUT_OK)
        return st;
    double t1 = gcut__now_ms();
    int closed = ib->overflow ? 0 : ib_run(ib);
    if (ib->overflow) {
        ib_free(ib);
        return gcut__fail(GCUT_ERR_OVERFLOW,
                          "ibfs: the maximum flow of this problem passes INT64_MAX (terminal "
                          "capacities too large)");
    }
    if (ib->excess_used) {
        uint8_t *side = labels;
        if (side == NULL)
            side = gcut__malloc((size_t)ib->num_nodes + 1, "ibfs cut");
        if (side == NULL) {
            ib_free(ib);
            return GCUT_ERR_NOMEM;
        }
        ib_write_labels(ib, closed, side);
        bool fits = ib_cut_value(graph, side, &ib->flow);
        if (side != labels)
            gcut__free(side);
        if (!fits) {
            ib_free(ib);
            return gcut__fail(GCUT_ERR_OVERFLOW, "ibfs: the maximum flow of this problem passes "
                                                 "INT64_MAX (terminal capacities too large)");
        }
    } else if (labels != NULL) {
        ib_write_labels(ib, closed, labels);
    }
    double t2 = gcut__now_ms();
    *flow = ib->flow;
    stats->build_ms += t1 - t0;
    stats->solve_ms += t2 - t1;
    stats->augmentations += ib->augmentations;
    if (options->verbose)
        fprintf(stderr,
                "ibfs: %" PRIu32 " nodes, %" PRIu32 " arcs, flow %" PRId64 ", %" PRId64
                " augmentations, %s tree closed at level %" PRIu32 ", build %.1f ms, solve %.1f "
                "ms\n",
                ib->num_nodes, ib->num_arcs, ib->flow, ib->augmentations,
                closed ? "sink" : "source", ib->level[closed], t1 - t0, t2 - t1);
    ib_free(ib);
    return GCUT_OK;
}
