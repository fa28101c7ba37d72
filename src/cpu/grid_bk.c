/* grid_bk.c - "grid-bk": the Boykov-Kolmogorov max-flow (Boykov & Kolmogorov, PAMI 2004, sec. 3;
 * Kolmogorov's v3 TIME/DIST adoption) specialised to the implicit grid topology, with warm
 * re-solves in grid contexts by tree reuse (Kohli & Torr, ICCV 2005, sec. 4). docs/CPU-SERIAL.md.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Layout (plain row-major, the grid's own node order): a neighbour is an index offset, an arc is
 * (node, direction); node i's record holds the residuals of its D arcs out and of the D arcs in
 * (the reverse of each, also held, mirrored, by the neighbour), so every residual a search or
 * an adoption tests on i's arcs sits in i's record: no heads, no sister arcs, 8 bytes per arc
 * where bk's CSR holds 12. A node's tree state is 12 bytes: one word holding the tree (bit 31),
 * the parent as a direction code (bits 24-30) and the distance heuristic (bits 0-23), its TIME
 * stamp and its active-queue link. The arrays are padded by the longest step on both sides with
 * zero residuals, and arcs leaving the grid have zero residual both ways, so a neighbour index
 * is always readable and never carries flow: no boundary tests in the loops. The search order
 * is bk's (the directions in the grid's order, the same active-queue and orphan discipline), so
 * both find maximum flows by the same rules; only the memory traffic differs. */

#define GBK_NONE UINT32_MAX /* next: not in the active queue */

/* The parent code, bits 24-30 of info: a direction 0..25, or one of these. */
#define GBK_P_TERMINAL 0x7du
#define GBK_P_ORPHAN 0x7eu
#define GBK_P_NONE 0x7fu
#define GBK_SINK 0x80000000u
#define GBK_DIST 0x00ffffffu
#define GBK_PARENT(info) (((info) >> 24) & 0x7fu)
#define GBK_INFO(sink, parent, dist) ((sink) | (uint32_t)(parent) << 24 | (dist))
/* Residuals of arc (i, d), i -> i + step[d] (OUT), and of its reverse (IN), both kept in i's
 * record (with D, res in scope): every test a search makes on i's arcs reads i's record only. */
#define GBK_OUT(i, d) res[(i)*2 * D + (d)]
#define GBK_IN(i, d) res[(i)*2 * D + D + (d)]

/* A node's tree state: read for every neighbour looked at, so its words share a line. */
typedef struct gbk_node {
    uint32_t info; /* tree bit, parent code, distance */
    uint32_t ts;   /* TIME at which the distance was last known right */
    uint32_t next; /* active queue link; itself when last; GBK_NONE when not queued */
} gbk_node;

typedef struct gbk {
    int64_t n;   /* real nodes; indices 0..n-1 */
    int64_t pad; /* padding nodes on each side */
    int dirs;    /* D */
    ptrdiff_t step[GCUT__MAX_DIRS];
    uint32_t *res;   /* node i's record res[2Di..2Di+2D): GBK_OUT, then GBK_IN (offset by pad) */
    gbk_node *nodes; /* tree state (offset by pad) */
    int64_t *tr;     /* terminal residual: > 0 from the source, < 0 to the sink */
    uint32_t *orphans;
    int64_t orphan_head, orphan_tail, orphan_low;
    uint32_t active_first, active_last;
    uint32_t time;
    int64_t flow;
    bool overflow;
    int64_t augmentations;
    /* grid-ibfs only (NULL in grid-bk): node i's children as a mask of directions, bit d set
     * when i + step[d] hangs from i. */
    uint32_t *kids;
    /* Allocations (the offset pointers above point into these). */
    uint32_t *res_mem;
    gbk_node *node_mem;
    /* Warm re-solves (contexts): the capacities of the last solve, marks. */
    int32_t *snap[GCUT__MAX_DIRS + 2]; /* [0..D-1] directions, [D] source, [D+1] sink */
    uint8_t *marked;
    uint32_t *marked_list;
    int64_t num_marked;
    bool loaded;
    bool verbose;
} gbk;

static void gbk_free(gbk *s) {
    if (s == NULL)
        return;
    gcut__free(s->res_mem);
    gcut__free(s->node_mem);
    gcut__free(s->tr);
    gcut__free(s->orphans);
    gcut__free(s->kids);
    for (int a = 0; a < GCUT__MAX_DIRS + 2; a++)
        gcut__free(s->snap[a]);
    gcut__free(s->marked);
    gcut__free(s->marked_list);
    gcut__free(s);
}

static inline void gbk_add_flow(gbk *s, int64_t amount) {
    if (amount > 0 ? s->flow > INT64_MAX - amount : s->flow < INT64_MIN - amount)
        s->overflow = true;
    else
        s->flow += amount;
}

static gbk *gbk_alloc(const gcut_grid *grid, bool warm) {
    gbk *s = gcut__calloc(1, sizeof *s, "grid-bk solver");
    if (s == NULL)
        return NULL;
    const int D = grid->num_dirs;
    s->n = grid->num_nodes;
    s->dirs = D;
    int64_t pad = 1;
    for (int d = 0; d < D; d++) {
        s->step[d] = (ptrdiff_t)grid->step[d];
        if (grid->step[d] > pad)
            pad = grid->step[d];
    }
    s->pad = pad;
    size_t total = (size_t)(s->n + 2 * pad), n = (size_t)s->n;
    s->res_mem = gcut__calloc(total, (size_t)(2 * D) * sizeof(uint32_t), "grid-bk residuals");
    s->node_mem = gcut__malloc(gcut__mul_size(total, sizeof(gbk_node)), "grid-bk nodes");
    s->tr = gcut__malloc(gcut__mul_size(n, sizeof(int64_t)), "grid-bk terminal residuals");
    s->orphans = gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)), "grid-bk orphan queue");
    bool ok = s->res_mem && s->node_mem && s->tr && s->orphans;
    if (ok && warm) {
        for (int a = 0; a < D + 2 && ok; a++)
            ok = (s->snap[a] = gcut__malloc(gcut__mul_size(n, sizeof(int32_t)),
                                            "grid-bk capacity snapshot")) != NULL;
        ok = ok && (s->marked = gcut__calloc(n, 1, "grid-bk marks")) != NULL &&
             (s->marked_list =
                  gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)), "grid-bk mark list")) != NULL;
    }
    if (!ok) {
        gbk_free(s);
        return NULL;
    }
    s->res = s->res_mem + (size_t)pad * (size_t)(2 * D);
    s->nodes = s->node_mem + pad;
    /* Padding nodes are free forever and stamped 0. */
    for (int64_t k = 0; k < pad; k++) {
        s->node_mem[k] = s->node_mem[total - 1 - (size_t)k] =
            (gbk_node){GBK_INFO(0u, GBK_P_NONE, 0u), 0, GBK_NONE};
    }
    return s;
}

/* Residuals and terminal residuals from the grid's capacities (all nodes). Arcs leaving the grid
 * get zero both ways; the flow starts at the terminals' cancelled common part. */
static void gbk_load(gbk *s, const gcut_grid *grid) {
    const int D = s->dirs;
    const int64_t w = grid->width, h = grid->height, depth = grid->depth;
    s->flow = 0;
    s->overflow = false;
    uint32_t *res = s->res;
    for (int64_t z = 0; z < depth; z++)
        for (int64_t y = 0; y < h; y++) {
            const int64_t row = (z * h + y) * w;
            int64_t x0[GCUT__MAX_DIRS], x1[GCUT__MAX_DIRS]; /* x range with a neighbour */
            for (int d = 0; d < D; d++) {
                const int *o = grid->offset[d];
                const bool row_in =
                    z + o[0] >= 0 && z + o[0] < depth && y + o[1] >= 0 && y + o[1] < h;
                x0[d] = row_in ? (o[2] < 0 ? -o[2] : 0) : w;
                x1[d] = row_in ? w - (o[2] > 0 ? o[2] : 0) : 0;
            }
            for (int64_t x = 0; x < w; x++) {
                const int64_t i = row + x;
                for (int d = 0; d < D; d++) {
                    const bool in = x >= x0[d] && x < x1[d];
                    GBK_OUT(i, d) = in ? (uint32_t)grid->cap[d][i] : 0u;
                    GBK_IN(i, d) = in ? (uint32_t)grid->cap[d ^ 1][i + grid->step[d]] : 0u;
                }
            }
        }
    const int32_t *source = grid->terminal[GCUT_SOURCE], *sink = grid->terminal[GCUT_SINK];
    for (int64_t i = 0; i < s->n; i++) {
        const int64_t a = source[i], b = sink[i];
        gbk_add_flow(s, a < b ? a : b);
        s->tr[i] = a - b;
        /* Written here so that the pages are mapped while building, not while solving. */
        s->nodes[i] = (gbk_node){GBK_INFO(0u, GBK_P_NONE, 0u), 0, GBK_NONE};
    }
    if (s->snap[0] != NULL) {
        for (int d = 0; d < D; d++)
            memcpy(s->snap[d], grid->cap[d], (size_t)s->n * sizeof(int32_t));
        memcpy(s->snap[D], source, (size_t)s->n * sizeof(int32_t));
        memcpy(s->snap[D + 1], sink, (size_t)s->n * sizeof(int32_t));
    }
}

static inline void gbk_set_active(gbk *s, uint32_t i) {
    if (s->nodes[i].next != GBK_NONE)
        return;
    if (s->active_last != GBK_NONE)
        s->nodes[s->active_last].next = i;
    else
        s->active_first = i;
    s->active_last = i;
    s->nodes[i].next = i;
}

static inline uint32_t gbk_next_active(gbk *s) {
    for (;;) {
        uint32_t i = s->active_first;
        if (i == GBK_NONE)
            return GBK_NONE;
        if (s->nodes[i].next == i)
            s->active_first = s->active_last = GBK_NONE;
        else
            s->active_first = s->nodes[i].next;
        s->nodes[i].next = GBK_NONE;
        if (GBK_PARENT(s->nodes[i].info) != GBK_P_NONE)
            return i;
    }
}

/* Orphans: as in bk (bk_impl.h), those of an augmentation stacked from the top, those found by
 * adoption queued from the bottom; a node is orphaned at most once per phase. */
static inline void gbk_orphan_front(gbk *s, uint32_t i) {
    s->nodes[i].info = (s->nodes[i].info & ~(0x7fu << 24)) | GBK_P_ORPHAN << 24;
    s->orphans[--s->orphan_low] = i;
}

static inline void gbk_orphan_back(gbk *s, uint32_t i) {
    s->nodes[i].info = (s->nodes[i].info & ~(0x7fu << 24)) | GBK_P_ORPHAN << 24;
    s->orphans[s->orphan_tail++] = i;
}

static void gbk_next_time(gbk *s) {
    if (++s->time == UINT32_MAX) {
        for (int64_t k = 0; k < s->n + 2 * s->pad; k++)
            s->node_mem[k].ts = 0;
        s->time = 1;
    }
}

static inline uint32_t gbk_dist_plus_one(uint32_t info) {
    uint32_t d = info & GBK_DIST;
    return d < GBK_DIST ? d + 1 : d;
}

/* The search, augmentation and adoption below take D as a constant (see the wrappers at the
 * end): the direction loops unroll and the steps stay in registers. */
#define GBK_INLINE static inline __attribute__((always_inline))

/* Push the bottleneck along source root -> ... -> tail -> head -> ... -> sink root, where the
 * arc (tail, d) joins the source tree to the sink tree. */
GBK_INLINE void gbk_augment(gbk *s, const int D, const bool kids, ptrdiff_t tail, int d) {
    uint32_t *res = s->res;
    gbk_node *nd = s->nodes;
    const ptrdiff_t *step = s->step;
    const ptrdiff_t head = tail + step[d];
    int64_t bottleneck = GBK_OUT(tail, d);
    ptrdiff_t x = tail;
    for (uint32_t p; (p = GBK_PARENT(nd[x].info)) != GBK_P_TERMINAL;) {
        ptrdiff_t y = x + step[p];
        uint32_t r = GBK_IN(x, p);
        if (r < bottleneck)
            bottleneck = r;
        x = y;
    }
    if (s->tr[x] < bottleneck)
        bottleneck = s->tr[x];
    x = head;
    for (uint32_t p; (p = GBK_PARENT(nd[x].info)) != GBK_P_TERMINAL;) {
        uint32_t r = GBK_OUT(x, p);
        if (r < bottleneck)
            bottleneck = r;
        x += step[p];
    }
    if (-s->tr[x] < bottleneck)
        bottleneck = -s->tr[x];

    const uint32_t f = (uint32_t)bottleneck;
    GBK_OUT(tail, d) -= f;
    GBK_IN(tail, d) += f;
    GBK_OUT(head, d ^ 1) += f;
    GBK_IN(head, d ^ 1) -= f;
    for (x = tail;;) {
        uint32_t p = GBK_PARENT(nd[x].info);
        if (p == GBK_P_TERMINAL)
            break;
        ptrdiff_t y = x + step[p];
        GBK_OUT(x, p) += f;
        GBK_IN(y, p ^ 1) += f;
        GBK_OUT(y, p ^ 1) -= f;
        if ((GBK_IN(x, p) -= f) == 0) {
            gbk_orphan_front(s, (uint32_t)x);
            if (kids)
                s->kids[y] &= ~(1u << (p ^ 1));
        }
        x = y;
    }
    if ((s->tr[x] -= f) == 0)
        gbk_orphan_front(s, (uint32_t)x);
    for (x = head;;) {
        uint32_t p = GBK_PARENT(nd[x].info);
        if (p == GBK_P_TERMINAL)
            break;
        ptrdiff_t y = x + step[p];
        GBK_OUT(y, p ^ 1) += f;
        GBK_IN(y, p ^ 1) -= f;
        GBK_IN(x, p) += f;
        if ((GBK_OUT(x, p) -= f) == 0) {
            gbk_orphan_front(s, (uint32_t)x);
            if (kids)
                s->kids[y] &= ~(1u << (p ^ 1));
        }
        x = y;
    }
    if ((s->tr[x] += f) == 0)
        gbk_orphan_front(s, (uint32_t)x);
    gbk_add_flow(s, f);
    s->augmentations++;
}

/* Length of j's path to its terminal, or UINT64_MAX if it runs into an orphan; stops early at a
 * node checked during this TIME. */
static inline uint64_t gbk_origin_distance(gbk *s, ptrdiff_t j) {
    gbk_node *nd = s->nodes;
    uint64_t dist = 0;
    for (;;) {
        if (nd[j].ts == s->time)
            return dist + (nd[j].info & GBK_DIST);
        uint32_t p = GBK_PARENT(nd[j].info);
        dist++;
        if (p == GBK_P_TERMINAL) {
            nd[j].ts = s->time;
            nd[j].info = (nd[j].info & ~GBK_DIST) | 1u;
            return dist;
        }
        if (p == GBK_P_ORPHAN)
            return UINT64_MAX;
        j += s->step[p];
    }
}

static inline void gbk_stamp_path(gbk *s, ptrdiff_t j, uint64_t dist) {
    gbk_node *nd = s->nodes;
    while (nd[j].ts != s->time) {
        nd[j].ts = s->time;
        nd[j].info = (nd[j].info & ~GBK_DIST) | (uint32_t)(dist < GBK_DIST ? dist : GBK_DIST);
        dist--;
        j += s->step[GBK_PARENT(nd[j].info)];
    }
}

/* Find orphan i the closest parent in its own tree whose path reaches the terminal; if none,
 * free it: its tree neighbours that could feed it turn active, its children orphans. */
GBK_INLINE void gbk_adopt(gbk *s, const int D, ptrdiff_t i) {
    uint32_t *res = s->res;
    gbk_node *nd = s->nodes;
    const ptrdiff_t *step = s->step;
    const uint32_t sink = nd[i].info & GBK_SINK;
    int best = -1;
    uint64_t best_d = UINT64_MAX;
    for (int d = 0; d < D; d++) {
        const ptrdiff_t j = i + step[d];
        const uint32_t r = sink ? GBK_OUT(i, d) : GBK_IN(i, d);
        if (r == 0)
            continue;
        const uint32_t nj = nd[j].info;
        if ((nj & GBK_SINK) != sink || GBK_PARENT(nj) == GBK_P_NONE)
            continue;
        uint64_t dist = gbk_origin_distance(s, j);
        if (dist == UINT64_MAX)
            continue;
        if (dist < best_d) {
            best = d;
            best_d = dist;
        }
        gbk_stamp_path(s, j, dist);
    }
    if (best >= 0) {
        nd[i].info =
            GBK_INFO(sink, best, (uint32_t)(best_d + 1 < GBK_DIST ? best_d + 1 : GBK_DIST));
        s->nodes[i].ts = s->time;
        return;
    }
    for (int d = 0; d < D; d++) {
        const ptrdiff_t j = i + step[d];
        const uint32_t nj = nd[j].info;
        if ((nj & GBK_SINK) != sink || GBK_PARENT(nj) == GBK_P_NONE)
            continue;
        const uint32_t r = sink ? GBK_OUT(i, d) : GBK_IN(i, d);
        if (r > 0)
            gbk_set_active(s, (uint32_t)j);
        if (GBK_PARENT(nj) == (uint32_t)(d ^ 1)) /* j hangs from i */
            gbk_orphan_back(s, (uint32_t)j);
    }
    nd[i].info = GBK_INFO(sink, GBK_P_NONE, 0u);
}

GBK_INLINE void gbk_adopt_orphans(gbk *s, const int D) {
    for (;;) {
        while (s->orphan_head < s->orphan_tail)
            gbk_adopt(s, D, s->orphans[s->orphan_head++]);
        if (s->orphan_low == s->n)
            break;
        gbk_adopt(s, D, s->orphans[s->orphan_low++]);
    }
    s->orphan_head = s->orphan_tail = 0;
}

/* Grow the trees from active nodes until they touch, augment, adopt; stop when no node is
 * active (the source tree is then the set reachable from the source: a minimum cut). */
GBK_INLINE void gbk_run(gbk *s, const int D) {
    uint32_t *res = s->res;
    gbk_node *nd = s->nodes;
    const ptrdiff_t *step = s->step;
    uint32_t current = GBK_NONE;
    for (;;) {
        uint32_t i = current;
        if (i != GBK_NONE) {
            s->nodes[i].next = GBK_NONE;
            if (GBK_PARENT(nd[i].info) == GBK_P_NONE)
                i = GBK_NONE;
        }
        if (i == GBK_NONE && (i = gbk_next_active(s)) == GBK_NONE)
            break;
        const ptrdiff_t pi = (ptrdiff_t)i;
        const uint32_t ni = nd[pi].info, ti = nd[pi].ts, di = ni & GBK_DIST;
        const uint32_t child_dist = gbk_dist_plus_one(ni);
        ptrdiff_t tail = -1;
        int mid = -1;
        if (!(ni & GBK_SINK)) {
            const uint32_t *ri = &GBK_OUT(pi, 0);
            for (int d = 0; d < D; d++) {
                if (ri[d] == 0)
                    continue;
                const ptrdiff_t j = pi + step[d];
                const uint32_t nj = nd[j].info;
                if (GBK_PARENT(nj) == GBK_P_NONE) {
                    nd[j].info = GBK_INFO(0u, d ^ 1, child_dist);
                    nd[j].ts = ti;
                    gbk_set_active(s, (uint32_t)j);
                } else if (nj & GBK_SINK) {
                    tail = pi;
                    mid = d;
                    break;
                } else if (nd[j].ts <= ti && (nj & GBK_DIST) > di) {
                    nd[j].info = GBK_INFO(0u, d ^ 1, child_dist);
                    nd[j].ts = ti;
                }
            }
        } else {
            const uint32_t *ri = &GBK_IN(pi, 0);
            for (int d = 0; d < D; d++) {
                if (ri[d] == 0)
                    continue;
                const ptrdiff_t j = pi + step[d];
                const uint32_t nj = nd[j].info;
                if (GBK_PARENT(nj) == GBK_P_NONE) {
                    nd[j].info = GBK_INFO(GBK_SINK, d ^ 1, child_dist);
                    nd[j].ts = ti;
                    gbk_set_active(s, (uint32_t)j);
                } else if (!(nj & GBK_SINK)) {
                    tail = j;
                    mid = d ^ 1;
                    break;
                } else if (nd[j].ts <= ti && (nj & GBK_DIST) > di) {
                    nd[j].info = GBK_INFO(GBK_SINK, d ^ 1, child_dist);
                    nd[j].ts = ti;
                }
            }
        }
        if (mid < 0) {
            current = GBK_NONE;
            continue;
        }
        s->nodes[i].next = i; /* counts as queued while it is the current node */
        current = i;
        gbk_next_time(s);
        gbk_augment(s, D, false, tail, mid);
        if (s->overflow)
            return;
        gbk_adopt_orphans(s, D);
    }
}

static void gbk_run4(gbk *s) {
    gbk_run(s, 4);
}
static void gbk_run6(gbk *s) {
    gbk_run(s, 6);
}
static void gbk_run8(gbk *s) {
    gbk_run(s, 8);
}
static void gbk_run26(gbk *s) {
    gbk_run(s, 26);
}
static void gbk_adopt_any(gbk *s) {
    switch (s->dirs) {
    case 4:
        gbk_adopt_orphans(s, 4);
        break;
    case 6:
        gbk_adopt_orphans(s, 6);
        break;
    case 8:
        gbk_adopt_orphans(s, 8);
        break;
    default:
        gbk_adopt_orphans(s, 26);
        break;
    }
}

static void gbk_run_any(gbk *s) {
    switch (s->dirs) {
    case 4:
        gbk_run4(s);
        break;
    case 6:
        gbk_run6(s);
        break;
    case 8:
        gbk_run8(s);
        break;
    default:
        gbk_run26(s);
        break;
    }
}

/* First solve: every node with terminal residual roots its tree and is active. */
static void gbk_init_trees(gbk *s) {
    s->active_first = s->active_last = GBK_NONE;
    s->orphan_head = s->orphan_tail = 0;
    s->orphan_low = s->n;
    s->time = 0;
    for (int64_t i = 0; i < s->n; i++) {
        s->nodes[i].next = GBK_NONE;
        s->nodes[i].ts = 0;
        if (s->tr[i] != 0) {
            s->nodes[i].info = GBK_INFO(s->tr[i] < 0 ? GBK_SINK : 0u, GBK_P_TERMINAL, 1u);
            gbk_set_active(s, (uint32_t)i);
        } else {
            s->nodes[i].info = GBK_INFO(0u, GBK_P_NONE, 0u);
        }
    }
}

/* ---- warm re-solves (Kohli & Torr): fold capacity changes into the residuals ---- */

static void gbk_mark(gbk *s, int64_t i) {
    if (!s->marked[i]) {
        s->marked[i] = 1;
        s->marked_list[s->num_marked++] = (uint32_t)i;
    }
}

/* Add delta to node i's terminal residual; the constant that renormalising sheds goes into the
 * flow, so flow + residual cut value stays each cut's capacity (as bk_impl.h). */
static void gbk_shift_terminal(gbk *s, int64_t i, int64_t delta) {
    int64_t before = s->tr[i], after = before + delta;
    gbk_add_flow(s, (before > 0 ? before : 0) - (after > 0 ? after : 0));
    s->tr[i] = after;
}

/* Bring node i's terminals and every arc pair touching it up to the grid's capacities, from
 * the snapshot of the last solve's. @return true if node i's own capacities (terminals, or its
 * arcs out) differed: a pair changed by the neighbour's side is updated here too, but counted
 * as the neighbour's change. */
static bool gbk_update_node(gbk *s, const gcut_grid *grid, int64_t i, bool terminals_only) {
    const int D = s->dirs;
    const int32_t src = grid->terminal[GCUT_SOURCE][i], snk = grid->terminal[GCUT_SINK][i];
    int32_t *old_src = s->snap[D], *old_snk = s->snap[D + 1];
    bool own = src != old_src[i] || snk != old_snk[i];
    if (own) {
        int64_t d_source = (int64_t)src - old_src[i], d_sink = (int64_t)snk - old_snk[i];
        gbk_add_flow(s, d_source);
        gbk_shift_terminal(s, i, d_source - d_sink);
        old_src[i] = src;
        old_snk[i] = snk;
        gbk_mark(s, i);
    }
    /* Terminal marks promise the arcs did not change: they are not read (an arc changed
     * anyway stays at its snapshot, so a later whole mark or comparison still repairs it). */
    if (terminals_only)
        return own;
    const int64_t x = i % grid->width, y = (i / grid->width) % grid->height,
                  z = i / (grid->width * grid->height);
    for (int d = 0; d < D; d++) {
        const int32_t c_ij = grid->cap[d][i], o_ij = s->snap[d][i];
        if (c_ij != o_ij)
            own = true;
        const int *o = grid->offset[d];
        if (x + o[2] < 0 || x + o[2] >= grid->width || y + o[1] < 0 || y + o[1] >= grid->height ||
            z + o[0] < 0 || z + o[0] >= grid->depth) {
            s->snap[d][i] = c_ij; /* an arc out of the grid: kept at zero residual */
            continue;
        }
        const int64_t j = i + grid->step[d];
        const int32_t c_ji = grid->cap[d ^ 1][j], o_ji = s->snap[d ^ 1][j];
        if (c_ij == o_ij && c_ji == o_ji)
            continue;
        uint32_t *res = s->res;
        int64_t flow_ij = (int64_t)o_ij - GBK_OUT(i, d);
        int64_t r_ij = c_ij - flow_ij, r_ji = c_ji + flow_ij;
        if (r_ij < 0) {
            /* i -> j carries more than it may now: i keeps the excess as supply from the
             * source, j misses it as demand towards the sink. */
            gbk_shift_terminal(s, i, -r_ij);
            gbk_shift_terminal(s, j, r_ij);
            r_ji += r_ij;
            r_ij = 0;
        } else if (r_ji < 0) {
            gbk_shift_terminal(s, j, -r_ji);
            gbk_shift_terminal(s, i, r_ji);
            r_ij += r_ji;
            r_ji = 0;
        }
        GBK_OUT(i, d) = GBK_IN(j, d ^ 1) = (uint32_t)r_ij;
        GBK_IN(i, d) = GBK_OUT(j, d ^ 1) = (uint32_t)r_ji;
        s->snap[d][i] = c_ij;
        s->snap[d ^ 1][j] = c_ji;
        gbk_mark(s, i);
        gbk_mark(s, j);
    }
    return own;
}

/* Repair the trees around the marked nodes (Kolmogorov's reuse_trees, as bk_impl.h): a marked
 * node with terminal residual roots the matching tree, one without becomes an orphan, and all
 * of them turn active. */
static void gbk_reuse_trees(gbk *s) {
    const int D = s->dirs;
    gbk_node *nd = s->nodes;
    s->active_first = s->active_last = GBK_NONE;
    s->orphan_head = s->orphan_tail = 0;
    s->orphan_low = s->n;
    gbk_next_time(s);
    for (int64_t m = 0; m < s->num_marked; m++) {
        const ptrdiff_t i = s->marked_list[m];
        s->marked[i] = 0;
        gbk_set_active(s, (uint32_t)i);
        const int64_t tr = s->tr[i];
        if (tr == 0) {
            if (GBK_PARENT(nd[i].info) != GBK_P_NONE)
                gbk_orphan_back(s, (uint32_t)i);
            continue;
        }
        const uint32_t sink = tr < 0 ? GBK_SINK : 0u;
        if (GBK_PARENT(nd[i].info) == GBK_P_NONE || (nd[i].info & GBK_SINK) != sink) {
            for (int d = 0; d < D; d++) {
                const ptrdiff_t j = i + s->step[d];
                if (j < 0 || j >= s->n || s->marked[j])
                    continue;
                const uint32_t nj = nd[j].info, p = GBK_PARENT(nj);
                if (p == GBK_P_NONE || p == GBK_P_ORPHAN)
                    continue;
                /* Both, for an orphaned child: should i leave its new tree again, the
                 * child must be active to grow back into it. */
                if (p == (uint32_t)(d ^ 1))
                    gbk_orphan_back(s, (uint32_t)j);
                if ((nj & GBK_SINK) != sink)
                    gbk_set_active(s, (uint32_t)j);
            }
        }
        nd[i].info = GBK_INFO(sink, GBK_P_TERMINAL, 1u);
        s->nodes[i].ts = s->time;
    }
    s->num_marked = 0;
    gbk_adopt_any(s);
}

static void gbk_write_labels(const gbk *s, uint8_t *labels) {
    for (int64_t i = 0; i < s->n; i++) {
        const uint32_t info = s->nodes[i].info;
        labels[i] = GBK_PARENT(info) != GBK_P_NONE && !(info & GBK_SINK) ? GCUT_SOURCE : GCUT_SINK;
    }
}

/* From loaded (or warm-updated) residuals: set up the trees, run, write the results. */
static gcut_status gbk_solve_loaded(gbk *s, bool warm, double build_ms, int64_t *flow,
                                    uint8_t *labels, gcut_stats *stats) {
    double t1 = gcut__now_ms();
    int64_t augmentations_before = s->augmentations;
    if (warm)
        gbk_reuse_trees(s);
    else
        gbk_init_trees(s);
    if (!s->overflow)
        gbk_run_any(s);
    double solve_ms = gcut__now_ms() - t1;
    if (s->overflow)
        return gcut__fail(GCUT_ERR_OVERFLOW,
                          "grid-bk: the maximum flow of this problem passes INT64_MAX (terminal "
                          "capacities too large)");
    if (labels != NULL)
        gbk_write_labels(s, labels);
    *flow = s->flow;
    stats->build_ms += build_ms;
    stats->solve_ms += solve_ms;
    stats->augmentations += s->augmentations - augmentations_before;
    if (s->verbose)
        fprintf(stderr,
                "grid-bk: %s solve, %" PRId64 " nodes, %d directions, flow %" PRId64 ", %" PRId64
                " augmentations, build %.1f ms, solve %.1f ms\n",
                warm ? "warm" : "fresh", s->n, s->dirs, s->flow,
                s->augmentations - augmentations_before, build_ms, solve_ms);
    return GCUT_OK;
}

/* Node indices are uint32 (queues, marks): larger grids go to bk, which has 64-bit ones. */
static bool gbk_fits(const gcut_grid *grid) {
    return grid->num_nodes < (int64_t)UINT32_MAX - 1;
}

gcut_status gcut__gridbk_solve_grid(const gcut_grid *grid, const gcut_options *options,
                                    int64_t *flow, uint8_t *labels, gcut_stats *stats) {
    if (!gbk_fits(grid))
        return gcut__bk_solve_grid(grid, options, flow, labels, stats);
    double t0 = gcut__now_ms();
    gbk *s = gbk_alloc(grid, false);
    if (s == NULL)
        return GCUT_ERR_NOMEM;
    s->verbose = options->verbose != 0;
    gbk_load(s, grid);
    gcut_status st = gbk_solve_loaded(s, false, gcut__now_ms() - t0, flow, labels, stats);
    gbk_free(s);
    return st;
}

/* Solve grid in place (parallel-bk's pre-pass, src/cpu/par_prepass.c): its capacities become
 * the residuals of a maximum flow (source / sink: the terminal residual's positive / negative
 * part; cap[d][i]: the residual of arc (i, d) where its neighbour is inside), *flow its value.
 * The caller keeps every capacity at most INT32_MAX / 2, so no residual passes INT32_MAX. */
gcut_status gcut__gridbk_solve_in_place(gcut_grid *grid, int64_t *flow, int64_t *augmentations) {
    if (!gbk_fits(grid))
        return gcut__fail(GCUT_ERR_INVALID_ARG, "grid-bk in place: too many nodes");
    gbk *s = gbk_alloc(grid, false);
    if (s == NULL)
        return GCUT_ERR_NOMEM;
    gbk_load(s, grid);
    gbk_init_trees(s);
    if (!s->overflow)
        gbk_run_any(s);
    if (s->overflow) {
        gbk_free(s);
        return gcut__fail(GCUT_ERR_OVERFLOW, "grid-bk in place: the flow passes INT64_MAX");
    }
    const int D = s->dirs;
    const uint32_t *res = s->res;
    for (int64_t i = 0; i < s->n; i++) {
        const int64_t r = s->tr[i];
        grid->terminal[GCUT_SOURCE][i] = r > 0 ? (int32_t)r : 0;
        grid->terminal[GCUT_SINK][i] = r < 0 ? (int32_t)-r : 0;
        for (int d = 0; d < D; d++)
            grid->cap[d][i] = (int32_t)GBK_OUT(i, d);
    }
    *flow = s->flow;
    *augmentations = s->augmentations;
    gbk_free(s);
    return GCUT_OK;
}

/* ---- grid contexts ---- */

typedef struct gbk_context {
    gbk *s; /* NULL until the first solve (or after a failed one) */
    bool verbose;
    bool warm_allowed; /* options->warm: keep the snapshot for warm re-solves */
    bool too_large;    /* past uint32 indices: every solve goes to bk, cold */
    gcut_options options;
} gbk_context;

gcut_status gcut__gridbk_ctx_create(const gcut_grid *grid, const gcut_options *options,
                                    void **state) {
    gbk_context *c = gcut__calloc(1, sizeof *c, "grid-bk context");
    if (c == NULL)
        return GCUT_ERR_NOMEM;
    c->verbose = options->verbose != 0;
    c->warm_allowed = options->warm != 0;
    c->too_large = !gbk_fits(grid);
    c->options = *options;
    *state = c;
    return GCUT_OK;
}

gcut_status gcut__gridbk_ctx_solve(void *state, const gcut_grid *grid,
                                   const gcut__ctx_changes *changes, int64_t *flow, uint8_t *labels,
                                   gcut_stats *stats, gcut__ctx_report *report) {
    gbk_context *c = state;
    if (c->too_large)
        return gcut__bk_solve_grid(grid, &c->options, flow, labels, stats);
    double t0 = gcut__now_ms();
    const bool warm = changes->warm && c->warm_allowed && c->s != NULL && c->s->loaded;
    int64_t changed = 0;
    if (warm) {
        gbk *s = c->s;
        if (changes->nodes != NULL) {
            const bool terminals_only = changes->terminals_only != 0;
            for (int64_t k = 0; k < changes->count; k++)
                changed += gbk_update_node(s, grid, changes->nodes[k], terminals_only);
        } else {
            /* A pair changed from j's side is j's own change, found when j's turn comes:
             * only nodes whose own values differ need the full update. */
            const int D = s->dirs;
            for (int64_t i = 0; i < s->n; i++) {
                bool own = grid->terminal[GCUT_SOURCE][i] != s->snap[D][i] ||
                           grid->terminal[GCUT_SINK][i] != s->snap[D + 1][i];
                for (int d = 0; d < D && !own; d++)
                    own = grid->cap[d][i] != s->snap[d][i];
                if (own)
                    changed += gbk_update_node(s, grid, i, false);
            }
        }
    } else {
        if (c->s == NULL && (c->s = gbk_alloc(grid, c->warm_allowed)) == NULL)
            return GCUT_ERR_NOMEM;
        c->s->verbose = c->verbose;
        c->s->num_marked = 0;
        c->s->augmentations = 0;
        gbk_load(c->s, grid);
        c->s->loaded = true;
    }
    report->warm = warm;
    report->changed_nodes = changed;
    gcut_status st = gbk_solve_loaded(c->s, warm, gcut__now_ms() - t0, flow, labels, stats);
    if (st != GCUT_OK) {
        gbk_free(c->s); /* the next solve starts cold */
        c->s = NULL;
    }
    return st;
}

void gcut__gridbk_ctx_free(void *state) {
    gbk_context *c = state;
    if (c == NULL)
        return;
    gbk_free(c->s);
    gcut__free(c);
}

/* ---- grid-ibfs: incremental breadth-first search (Goldberg, Hed, Kaplan, Tarjan & Werneck,
 * ESA 2011, sections 2-3) on grid-bk's layout. The same algorithm as src/cpu/eibfs.c's "ibfs"
 * (docs/CPU-SERIAL.md, "Second pass"), with a node's tree state in gbk_node read differently:
 * info holds the tree bit and the parent code (its distance bits stay 0), ts the exact BFS
 * label, next the number of the last active list the node was put in. The augmentation is
 * grid-bk's; its orphans go on the orphan array as a stack (orphan_low grows down), so the
 * lowest label of a path comes off first. ---- */

typedef struct gib_list {
    uint32_t *items;
    uint32_t count;
    uint32_t id;
} gib_list;

typedef struct gib {
    gbk *s;
    gib_list cur[2], next[2]; /* [0] source tree, [1] sink tree */
    uint32_t level[2];        /* the label of cur's nodes */
    int growing;              /* -1, or the tree whose pass is running */
    uint32_t list_ids;
} gib;

/* Children masks (gbk.kids) on 8- and 26-connected grids: a relabelled orphan's children come
 * from its mask instead of a scan of its arcs (cachegrind, whole process: -10% instructions on
 * hard 48^3 26-connected, -3% on hard 512^2 8-connected, +0.6% on hard 96x96x48 6-connected,
 * where the scan is short; docs/CPU-SERIAL.md, "Fourth pass"). */
#define GIB_KIDS(D) ((D) >= 8)

/* Prefetch the half of node u's residual record from word h on (D words) and its node record:
 * growth does it GIB_PREFETCH list entries ahead, adoption for the next orphan on the stack. The
 * residual records are the solve's main cache misses (cachegrind with a 16 MB last level on hard
 * 96^3 26-connected); alternated on the build machine, solve 315 -> 264 ms at a distance of 12
 * (docs/CPU-SERIAL.md, "Fourth pass"). Only on 26-connected grids: on the others the records are
 * 1-3 lines (16-48 bytes a half) and the prefetches cost 3-8% more instructions with no time
 * seen. */
#ifndef GIB_PREFETCH
#define GIB_PREFETCH 16
#endif
#define GIB_PF(D) (GIB_PREFETCH > 0 && (D) == 26)
GBK_INLINE void gib_prefetch_record(const gbk *s, const int D, uint32_t u, int h) {
    const uint32_t *r = s->res + (size_t)u * (size_t)(2 * D) + h;
    __builtin_prefetch(&s->nodes[u]);
    for (int w = 0; w < D + 15; w += 16)
        __builtin_prefetch(r + w);
}

#define GIB_TREE(info) (((info)&GBK_SINK) ? 1 : 0)

GBK_INLINE void gib_push(gib *g, gib_list *l, uint32_t v) {
    gbk_node *nd = g->s->nodes;
    if (nd[v].next == l->id)
        return;
    nd[v].next = l->id;
    l->items[l->count++] = v;
}

/* Re-attach orphan v (label L): a neighbour of its tree at L - 1 through a residual arc, or else
 * the smallest such label + 1 (its children become orphans), or free past the tree's frontier. */
GBK_INLINE void gib_adopt(gib *g, const int D, ptrdiff_t v, const int t) {
    gbk *s = g->s;
    uint32_t *res = s->res;
    gbk_node *nd = s->nodes;
    const ptrdiff_t *step = s->step;
    const uint32_t sink = t ? GBK_SINK : 0u, L = nd[v].ts;
    /* Current arc (the IBFS paper's): the directions before the one kept in the distance bits
     * hold no parent at L - 1 (labels only rise, and an arc into v turns residual only through
     * a push from v to a child, whose label is L + 1), so the search starts there and wraps
     * round, keeping the smallest label seen for a relabel. A node claimed by growth starts at
     * 0. Only on 26-connected grids: cachegrind, whole process, -3% instructions there, +1% to
     * +3% on 6- and 8-connected ones (docs/CPU-SERIAL.md, third pass). */
    const uint32_t c = GBK_DIST & nd[v].info;
    const int cur = D == 26 && c < (uint32_t)D ? (int)c : 0;
    uint32_t best = UINT32_MAX;
    int best_d = -1;
    /* j = v + step[d] in v's tree (free nodes have parent code GBK_P_NONE, the largest): one
     * compare. */
#define GIB_LOOK(d)                                                                                \
    if ((sink ? GBK_OUT(v, d) : GBK_IN(v, d)) != 0) {                                              \
        const ptrdiff_t j = v + step[d];                                                           \
        if ((nd[j].info ^ sink) < (GBK_P_NONE << 24)) {                                            \
            const uint32_t lj = nd[j].ts;                                                          \
            if (lj == L - 1) {                                                                     \
                nd[v].info = GBK_INFO(sink, d, (uint32_t)d);                                       \
                if (GIB_KIDS(D))                                                                   \
                    s->kids[j] |= 1u << (d ^ 1);                                                   \
                return;                                                                            \
            }                                                                                      \
            if (lj < best) {                                                                       \
                best = lj;                                                                         \
                best_d = d;                                                                        \
            }                                                                                      \
        }                                                                                          \
    }
    for (int d = cur; d < D; d++)
        GIB_LOOK(d)
    for (int d = 0; d < cur; d++)
        GIB_LOOK(d)
#undef GIB_LOOK
    if (GIB_KIDS(D)) { /* the children, from v's mask, orphaned in direction order */
        for (uint32_t k = s->kids[v]; k != 0; k &= k - 1)
            gbk_orphan_front(s, (uint32_t)(v + step[__builtin_ctz(k)]));
        s->kids[v] = 0;
    } else {
        /* A child's tree arc is residual (an augmentation that saturates one orphans the child
         * at once), so only the neighbours with a residual arc from v's side are read. */
        for (int d = 0; d < D; d++) {
            if ((sink ? GBK_IN(v, d) : GBK_OUT(v, d)) == 0)
                continue;
            const ptrdiff_t j = v + step[d];
            if (GBK_PARENT(nd[j].info) == (uint32_t)(d ^ 1))
                gbk_orphan_front(s, (uint32_t)j);
        }
    }
    const uint32_t frontier = g->level[t] + (g->growing == t ? 1u : 0u);
    if (best_d < 0 || best + 1 > frontier) {
        nd[v].info = GBK_INFO(sink, GBK_P_NONE, 0u);
        return;
    }
    nd[v].info = GBK_INFO(sink, best_d, (uint32_t)best_d);
    if (GIB_KIDS(D))
        s->kids[v + step[best_d]] |= 1u << (best_d ^ 1);
    nd[v].ts = best + 1;
    if (best + 1 == g->level[t])
        gib_push(g, &g->cur[t], (uint32_t)v);
    else if (best + 1 == frontier)
        gib_push(g, &g->next[t], (uint32_t)v);
}

GBK_INLINE void gib_adopt_orphans(gib *g, const int D) {
    gbk *s = g->s;
    /* One copy per tree (t a constant in each), so the direction tests leave the loops. */
    while (s->orphan_low < s->n) {
        const ptrdiff_t v = s->orphans[s->orphan_low++];
        if (GIB_PF(D) && s->orphan_low < s->n) {
            const uint32_t u = s->orphans[s->orphan_low];
            gib_prefetch_record(s, D, u, (s->nodes[u].info & GBK_SINK) ? 0 : D);
        }
        if (s->nodes[v].info & GBK_SINK)
            gib_adopt(g, D, v, 1);
        else
            gib_adopt(g, D, v, 0);
    }
}

/* One pass of tree t over the nodes of label level[t]: claim free neighbours at the next level,
 * augment where the other tree is met (the same arc again until it is saturated or v moves). */
GBK_INLINE void gib_grow(gib *g, const int D, const int t) {
    gbk *s = g->s;
    uint32_t *res = s->res;
    gbk_node *nd = s->nodes;
    const ptrdiff_t *step = s->step;
    const uint32_t level = g->level[t], sink = t ? GBK_SINK : 0u;
    g->growing = t;
    g->next[t].count = 0;
    g->next[t].id = ++g->list_ids;
    gib_list *cur = &g->cur[t];
    for (uint32_t k = 0; k < cur->count; k++) {
        const ptrdiff_t v = cur->items[k];
        if (GIB_PF(D) && k + GIB_PREFETCH < cur->count) {
            gib_prefetch_record(s, D, cur->items[k + GIB_PREFETCH], t ? D : 0);
        }
        /* v must still be a tree node at this level: only an augmentation (and the adoption after
         * it) can move it, so it is checked here and after each. */
#define GIB_MOVED(v)                                                                               \
    (nd[v].ts != level || (nd[v].info & GBK_SINK) != sink || GBK_PARENT(nd[v].info) == GBK_P_NONE)
        if (GIB_MOVED(v))
            continue;
        for (int d = 0; d < D; d++) {
            if ((t ? GBK_IN(v, d) : GBK_OUT(v, d)) == 0)
                continue;
            const ptrdiff_t j = v + step[d];
            const uint32_t nj = nd[j].info;
            if ((nj ^ sink) < (GBK_P_NONE << 24))
                continue; /* in v's tree (one compare: free nodes have the largest code) */
            if (GBK_PARENT(nj) == GBK_P_NONE) {
                nd[j].info = GBK_INFO(sink, d ^ 1, 0u);
                if (GIB_KIDS(D))
                    s->kids[v] |= 1u << d;
                nd[j].ts = level + 1;
                gib_push(g, &g->next[t], (uint32_t)j);
            } else {
                if (t)
                    gbk_augment(s, D, GIB_KIDS(D), j, d ^ 1);
                else
                    gbk_augment(s, D, GIB_KIDS(D), v, d);
                gib_adopt_orphans(g, D);
                if (GIB_MOVED(v))
                    break;
                d--;
            }
        }
#undef GIB_MOVED
    }
    g->growing = -1;
    gib_list tmp = g->cur[t];
    g->cur[t] = g->next[t];
    g->next[t] = tmp;
    g->level[t] = level + 1;
}

/* Before the trees are built (when gib_pairs_pay says so; GCUT_GIB_PAIRS below), push along
 * every path source -> i -> j -> sink of one grid arc (i with supply, j with demand): as much as
 * the arc and both terminal residuals allow, in node order. That is the first pass's work on its
 * shortest paths without the trees: no augmentation walk, no orphan, no adoption; a node whose
 * terminal residual reaches 0 simply starts free (docs/CPU-SERIAL.md, "Fourth pass"). Exact: only
 * flow along residual paths is pushed. */
GBK_INLINE void gib_pairs(gbk *s, const int D) {
    uint32_t *res = s->res;
    int64_t *tr = s->tr;
    const ptrdiff_t *step = s->step;
    for (ptrdiff_t i = 0; i < (ptrdiff_t)s->n; i++) {
        if (tr[i] <= 0)
            continue;
        for (int d = 0; d < D; d++) {
            const uint32_t r = GBK_OUT(i, d);
            if (r == 0) /* every arc leaving the grid: j below is a real node */
                continue;
            const ptrdiff_t j = i + step[d];
            if (tr[j] >= 0)
                continue;
            int64_t f = r;
            if (tr[i] < f)
                f = tr[i];
            if (-tr[j] < f)
                f = -tr[j];
            GBK_OUT(i, d) -= (uint32_t)f;
            GBK_IN(i, d) += (uint32_t)f;
            GBK_OUT(j, d ^ 1) += (uint32_t)f;
            GBK_IN(j, d ^ 1) -= (uint32_t)f;
            tr[j] += f;
            gbk_add_flow(s, f);
            if ((tr[i] -= f) == 0)
                break;
        }
    }
}

/* Whether the one-arc pushes pay: on the hard synthetic grids 67-94% of the nodes with supply
 * have a residual arc to a node with demand (14-30% of all nodes), on the easy ones 2-14% (0.5-2%
 * of all nodes), where the pushes free nodes that the trees then have to claim level by level
 * (cachegrind, solve: -22% instructions on hard 1920x1080 8-connected, +25% to +60% on the easy
 * 2048^2 4-, 1920x1080 8- and 96^3 26-connected ones). A sample of every 61st node decides:
 * pushes when at least 1 in 20 sampled nodes has such an arc. */
static bool gib_pairs_pay(const gbk *s) {
    const int D = s->dirs;
    const uint32_t *res = s->res;
    const ptrdiff_t stride = s->n < 4096 ? 1 : 61;
    int64_t sampled = 0, hits = 0;
    for (ptrdiff_t i = 0; i < (ptrdiff_t)s->n; i += stride) {
        sampled++;
        if (s->tr[i] <= 0)
            continue;
        for (int d = 0; d < D; d++)
            if (GBK_OUT(i, d) != 0 && s->tr[i + s->step[d]] < 0) {
                hits++;
                break;
            }
    }
    return hits * 20 >= sampled;
}

static void gib_pairs_any(gbk *s) {
    switch (s->dirs) {
    case 4:
        gib_pairs(s, 4);
        break;
    case 6:
        gib_pairs(s, 6);
        break;
    case 8:
        gib_pairs(s, 8);
        break;
    default:
        gib_pairs(s, 26);
    }
}

/* Tree t's first pass (its nodes all at label 1) done from the other side, for when t holds
 * most of the grid: instead of scanning every node of t, scan the nodes that can have a residual
 * arc into t's (out of t's, for the source tree) label-1 nodes, the other tree's frontier list
 * (its scanned nodes have none, by its invariant) and the free nodes. An other-tree node augments
 * on each such arc until it is saturated or either end moves; a free node is claimed at label 2
 * through its first one. Afterwards every label-1 node of t has what a scan of it would leave:
 * every residual arc into it (out of it) from t's side or from a node still on the other tree's
 * frontier. The free nodes are found by one sweep of the node records, after the augmentations
 * (which can free nodes). docs/CPU-SERIAL.md, "Fourth pass". */
GBK_INLINE void gib_grow_from_outside(gib *g, const int D, const int t) {
    gbk *s = g->s;
    uint32_t *res = s->res;
    gbk_node *nd = s->nodes;
    const ptrdiff_t *step = s->step;
    const int o = 1 - t;
    const uint32_t sink = t ? GBK_SINK : 0u, osink = t ? 0u : GBK_SINK;
    g->growing = t;
    g->next[t].count = 0;
    g->next[t].id = ++g->list_ids;
    /* Residual of the arc between j and j + step[d] in the direction into t (out of t). */
#define GIB_INTO_T(j, d) (t ? GBK_OUT(j, d) : GBK_IN(j, d))
#define GIB_T1(nv, v) (((nv)&GBK_SINK) == sink && GBK_PARENT(nv) < GBK_P_ORPHAN && nd[v].ts == 1)
    const gib_list *front = &g->cur[o];
    for (uint32_t k = 0; k < front->count; k++) { /* the list can grow: relabelled nodes */
        const ptrdiff_t j = front->items[k];
        if ((nd[j].info & GBK_SINK) != osink || GBK_PARENT(nd[j].info) == GBK_P_NONE)
            continue;
        for (int d = 0; d < D; d++) {
            if (GIB_INTO_T(j, d) == 0)
                continue;
            const ptrdiff_t v = j + step[d];
            if (!GIB_T1(nd[v].info, v))
                continue;
            if (t)
                gbk_augment(s, D, GIB_KIDS(D), j, d);
            else
                gbk_augment(s, D, GIB_KIDS(D), v, d ^ 1);
            gib_adopt_orphans(g, D);
            if ((nd[j].info & GBK_SINK) != osink || GBK_PARENT(nd[j].info) == GBK_P_NONE)
                break; /* freed: the sweep below sees it */
            d--;
        }
    }
    for (ptrdiff_t j = 0; j < (ptrdiff_t)s->n; j++) {
        if (GBK_PARENT(nd[j].info) != GBK_P_NONE)
            continue;
        for (int d = 0; d < D; d++) {
            if (GIB_INTO_T(j, d) == 0)
                continue;
            const ptrdiff_t v = j + step[d];
            if (GIB_T1(nd[v].info, v)) {
                nd[j].info = GBK_INFO(sink, d, 0u);
                if (GIB_KIDS(D))
                    s->kids[v] |= 1u << (d ^ 1);
                nd[j].ts = 2;
                gib_push(g, &g->next[t], (uint32_t)j);
                break;
            }
        }
    }
#undef GIB_INTO_T
#undef GIB_T1
    g->growing = -1;
    gib_list tmp = g->cur[t];
    g->cur[t] = g->next[t];
    g->next[t] = tmp;
    g->level[t] = 2;
}

/* @return the tree that closed (0 source, 1 sink). */
GBK_INLINE int gib_run(gib *g, const int D) {
    /* The tree with the shorter frontier list grows next; on 26-connected grids the trees take
     * turns instead (there the sink tree's first list, every sink-side node, otherwise never
     * grows). GCUT_IBFS_GROW=0 / 1 forces one rule (docs/CPU-SERIAL.md, "Second pass"). */
    const int alternate = gcut__env_int("GCUT_IBFS_GROW", D == 26 ? 1 : 0, 0, 1);
    const int from_outside = gcut__env_int("GCUT_GIB_OUTSIDE", 1, 0, 2);
    const uint32_t half = (uint32_t)(g->s->n / 2);
    int last = 1;
    for (;;) {
        if (g->cur[0].count == 0)
            return 0;
        if (g->cur[1].count == 0)
            return 1;
        last = alternate ? 1 - last : (g->cur[0].count <= g->cur[1].count ? 0 : 1);
        /* A first pass over most of the grid is done from the other side (2 forces it, for
         * the tests; 0 never). */
        const bool outside =
            g->level[last] == 1 &&
            (from_outside == 2 || (from_outside == 1 && g->cur[last].count > half));
        if (outside && last)
            gib_grow_from_outside(g, D, 1);
        else if (outside)
            gib_grow_from_outside(g, D, 0);
        else if (last)
            gib_grow(g, D, 1);
        else
            gib_grow(g, D, 0);
    }
}

static int gib_run_any(gib *g) {
    switch (g->s->dirs) {
    case 4:
        return gib_run(g, 4);
    case 6:
        return gib_run(g, 6);
    case 8:
        return gib_run(g, 8);
    default:
        return gib_run(g, 26);
    }
}

/* The source side of the smallest minimum cut: the source tree if it closed, else the nodes the
 * source reaches in the residual graph (a breadth-first search; queue: the orphan array). */
static void gib_write_labels(gib *g, int closed, uint8_t *labels) {
    gbk *s = g->s;
    if (closed == 0) {
        gbk_write_labels(s, labels);
        return;
    }
    const uint32_t *res = s->res;
    const int D = s->dirs;
    uint32_t *queue = s->orphans;
    int64_t tail = 0;
    for (int64_t i = 0; i < s->n; i++) {
        labels[i] = s->tr[i] > 0 ? GCUT_SOURCE : GCUT_SINK;
        if (s->tr[i] > 0)
            queue[tail++] = (uint32_t)i;
    }
    for (int64_t h = 0; h < tail; h++) {
        const ptrdiff_t v = queue[h];
        for (int d = 0; d < D; d++) {
            if (GBK_OUT(v, d) == 0)
                continue;
            const ptrdiff_t j = v + s->step[d];
            if (labels[j] != GCUT_SOURCE) {
                labels[j] = GCUT_SOURCE;
                queue[tail++] = (uint32_t)j;
            }
        }
    }
}

gcut_status gcut__gridibfs_solve_grid(const gcut_grid *grid, const gcut_options *options,
                                      int64_t *flow, uint8_t *labels, gcut_stats *stats) {
    /* Node indices are uint32: larger grids go to bk, as grid-bk's do. */
    if (!gbk_fits(grid))
        return gcut__bk_solve_grid(grid, options, flow, labels, stats);
    double t0 = gcut__now_ms();
    gib g = {0};
    g.s = gbk_alloc(grid, false);
    if (g.s == NULL)
        return GCUT_ERR_NOMEM;
    gbk *s = g.s;
    const size_t n = (size_t)s->n;
    bool ok = true;
    for (int t = 0; t < 2 && ok; t++) {
        g.cur[t].items = gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)), "grid-ibfs lists");
        g.next[t].items = gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)), "grid-ibfs lists");
        ok = g.cur[t].items != NULL && g.next[t].items != NULL;
    }
    if (GIB_KIDS(s->dirs))
        ok = ok && (s->kids = gcut__malloc(gcut__mul_size(n, sizeof(uint32_t)),
                                           "grid-ibfs children")) != NULL;
    gcut_status st = GCUT_OK;
    if (!ok) {
        st = GCUT_ERR_NOMEM;
        goto done;
    }
    gbk_load(s, grid);   /* every node free, next (the list stamp) GBK_NONE */
    if (s->kids != NULL) /* written here: its pages mapped while building */
        memset(s->kids, 0, n * sizeof(uint32_t));
    double t1 = gcut__now_ms();
    s->orphan_low = s->n;
    g.growing = -1;
    for (int t = 0; t < 2; t++) {
        g.cur[t].id = ++g.list_ids;
        g.level[t] = 1;
    }
    /* GCUT_GIB_PAIRS: 0 never, 1 when the sample says so (the default), 2 always. */
    const int pairs = gcut__env_int("GCUT_GIB_PAIRS", 1, 0, 2);
    if (pairs == 2 || (pairs == 1 && gib_pairs_pay(s)))
        gib_pairs_any(s);
    for (int64_t i = 0; i < s->n; i++) {
        if (s->tr[i] == 0)
            continue;
        const int t = s->tr[i] < 0;
        s->nodes[i].info = GBK_INFO(t ? GBK_SINK : 0u, GBK_P_TERMINAL, 0u);
        s->nodes[i].ts = 1;
        gib_push(&g, &g.cur[t], (uint32_t)i);
    }
    const int closed = s->overflow ? 0 : gib_run_any(&g);
    if (s->overflow) {
        st = gcut__fail(GCUT_ERR_OVERFLOW, "grid-ibfs: the maximum flow of this problem passes "
                                           "INT64_MAX (terminal capacities too large)");
        goto done;
    }
    if (labels != NULL)
        gib_write_labels(&g, closed, labels);
    double t2 = gcut__now_ms();
    *flow = s->flow;
    stats->build_ms += t1 - t0;
    stats->solve_ms += t2 - t1;
    stats->augmentations += s->augmentations;
    if (options->verbose)
        fprintf(stderr,
                "grid-ibfs: %" PRId64 " nodes, %d directions, flow %" PRId64 ", %" PRId64
                " augmentations, %s tree closed at level %" PRIu32 ", build %.1f ms, solve %.1f "
                "ms\n",
                s->n, s->dirs, s->flow, s->augmentations, closed ? "sink" : "source",
                g.level[closed], t1 - t0, t2 - t1);
done:
    for (int t = 0; t < 2; t++) {
        gcut__free(g.cur[t].items);
        gcut__free(g.next[t].items);
    }
    gbk_free(s);
    return st;
}
