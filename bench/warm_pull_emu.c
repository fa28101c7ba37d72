/* warm_pull_emu.c - a CPU emulation of cuda-grid's certified warm stop (docs/CUDA-GRID.md, "A
 * certified warm stop (issue #17, ninth session)") on a hard synthetic 2D 4-connected grid, to
 * see how often its certificate can hold without a GPU:
 *   1. a maximum preflow by push-relabel, ended as cuda-grid ends a solve (no excess at a finite
 *      height; INF = cannot reach the sink; the flow is checked against bk's);
 *   2. per step, 1% of the terminals x 0.5-1.5 (as bench/gpu_context.c) and the warm repair;
 *   3. the pull passes exactly as pull_kernel does them (16x16 tiles, then the grid shifted by 8:
 *      BFS heights among the source side's nodes and arcs inside the tile, 64 synchronous
 *      push/relabel rounds, the move of a closed region to the sink side);
 *   4. ROUNDS synchronous push/relabel rounds over the whole grid on the kept heights, standing in
 *      for the first sweep batch (2 sweeps of up to 16 rounds per tile);
 *   3b. with --far CAP, the far pull (pull_far_kernel, tenth session) on the arcs both passes
 *      left open: augmenting paths inside the source side from the nearest excess (a reversed
 *      BFS of at most CAP nodes), or the move of an excess-free region behind the arc; every
 *      such arc is described (its region, the excess in it, the BFS levels and paths used);
 *   5. the stuck closure per 16x16 tile; with --far, the far drain (pull_fix_kernel) of every
 *      finite node still holding excess (augmenting paths to the nearest residual sink arc over
 *      finite nodes, or S, all it reaches, to INF); the closure certificate (nodes against it);
 *   5b. with --recheck (and --far), before that drain, the chained fix as pull_fix_kernel runs it
 *      (eleventh session): when the certificate lists at most 28 nodes against it, far_fix on
 *      each as the kernel picks it, the nodes every search held kept, then the certificate on
 *      the listed nodes, the held ones and their neighbours only, against the certificate on
 *      every node: the two verdicts must agree (counted; a disagreement fails the run);
 *   6. the exact finish (global relabels and discharges) before the next step.
 * Usage: warm_pull_emu [--size WxH] [--steps S] [--rounds R] [--seed S] [--far CAP] [--recheck 1]
 * (defaults 1920x1080, 4 steps, 32 rounds, seed 1). Build: any gcut build (bench/ targets). */
#include "gcut.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INF 0x3fffffff
#define T 16 /* tile side */

static int W, H;
static long N;
static unsigned *res[4];
static int *rt, *hh, *nh;
static long long *ex, *inc;
static unsigned *rinc[4];
static long *queue, *inq;
static const int DX[4] = {1, -1, 0, 0}, DY[4] = {0, 0, 1, -1}; /* gcut's 2D 4 order */

static long nbr(long i, int d) {
    const int x = (int)(i % W) + DX[d], y = (int)(i / W) + DY[d];
    return x < 0 || x >= W || y < 0 || y >= H ? -1 : (long)y * W + x;
}

/* The direction of v's lowest neighbour over a residual arc (-1: none); its height in *hmin
 * (INF when none). */
static int lowest_nbr(long v, int *hmin) {
    int best = -1;
    *hmin = INF;
    for (int d = 0; d < 4; d++) {
        const long w = nbr(v, d);
        if (w >= 0 && res[d][v] > 0 && hh[w] < *hmin) {
            *hmin = hh[w];
            best = d;
        }
    }
    return best;
}

/* Exact heights: BFS from the residual sink arcs over reversed residual arcs. */
static void global_relabel(void) {
    long head = 0, tail = 0;
    for (long i = 0; i < N; i++) {
        hh[i] = rt[i] > 0 ? 1 : INF;
        if (hh[i] == 1)
            queue[tail++] = i;
    }
    while (head < tail) {
        const long w = queue[head++];
        for (int d = 0; d < 4; d++) {
            const long v = nbr(w, d); /* v -> w is v's direction d ^ 1 */
            if (v >= 0 && hh[v] == INF && res[d ^ 1][v] > 0) {
                hh[v] = hh[w] + 1;
                queue[tail++] = v;
            }
        }
    }
}

/* FIFO discharges of every node with excess at a finite height until none is left, or until
 * N / 2 relabels (the caller then relabels globally and comes back). */
static void discharge_all(void) {
    const long qn = N + 1;
    long head = 0, tail = 0, relabels = 0;
    memset(inq, 0, (size_t)N * sizeof *inq);
    for (long i = 0; i < N; i++)
        if (ex[i] > 0 && hh[i] < INF) {
            inq[i] = 1;
            queue[tail++ % qn] = i;
        }
    while (head != tail) {
        const long v = queue[head++ % qn];
        inq[v] = 0;
        while (ex[v] > 0 && hh[v] < INF) {
            if (rt[v] > 0) {
                const long long a = ex[v] < rt[v] ? ex[v] : rt[v];
                rt[v] -= (int)a;
                ex[v] -= a;
                continue;
            }
            int hmin;
            const int best = lowest_nbr(v, &hmin);
            if (best >= 0 && hmin < hh[v]) {
                const long w = nbr(v, best);
                const long long a = ex[v] < res[best][v] ? ex[v] : res[best][v];
                res[best][v] -= (unsigned)a;
                res[best ^ 1][w] += (unsigned)a;
                ex[v] -= a;
                ex[w] += a;
                if (!inq[w] && hh[w] < INF) {
                    inq[w] = 1;
                    queue[tail++ % qn] = w;
                }
            } else {
                hh[v] = hmin >= INF - 1 || hmin + 1 >= N ? INF : hmin + 1;
                if (++relabels > N / 2)
                    return;
            }
        }
    }
}

static void finish_exactly(void) {
    for (;;) {
        global_relabel();
        long active = 0;
        for (long i = 0; i < N; i++)
            active += ex[i] > 0 && hh[i] < INF;
        if (active == 0)
            return;
        discharge_all();
    }
}

/* ROUNDS synchronous rounds over the grid (heights of the last round, pushes land after it). */
static void sync_rounds(int rounds) {
    for (int r = 0; r < rounds; r++) {
        memcpy(nh, hh, (size_t)N * sizeof *nh);
        long active = 0;
        for (long v = 0; v < N; v++) {
            if (!(ex[v] > 0 && hh[v] < INF))
                continue;
            active++;
            if (rt[v] > 0) {
                const long long a = ex[v] < rt[v] ? ex[v] : rt[v];
                rt[v] -= (int)a;
                ex[v] -= a;
            }
            if (ex[v] <= 0)
                continue;
            int hmin;
            const int best = lowest_nbr(v, &hmin);
            if (best >= 0 && hmin < hh[v]) {
                const long w = nbr(v, best);
                const long long a = ex[v] < res[best][v] ? ex[v] : res[best][v];
                res[best][v] -= (unsigned)a;
                ex[v] -= a;
                inc[w] += a;
                rinc[best ^ 1][w] += (unsigned)a;
            } else {
                nh[v] = hmin >= INF - 1 ? INF : hmin + 1;
            }
        }
        for (long v = 0; v < N; v++) {
            ex[v] += inc[v];
            inc[v] = 0;
            for (int d = 0; d < 4; d++) {
                res[d][v] += rinc[d][v];
                rinc[d][v] = 0;
            }
        }
        memcpy(hh, nh, (size_t)N * sizeof *nh);
        if (active == 0)
            return;
    }
}

/* The tile pull (pull_kernel): tile origin (x0, y0); *moved when R moved; returns open arcs left.
 */
static int hd[T * T], inu[T * T], rtl[T * T], pdir[T * T], rel[T * T];
static long long el[T * T];
static unsigned rl[T * T][4], pamt[T * T];
static long gl[T * T];

static int tile_nb(int t, int d) {
    const int lx = t % T + DX[d], ly = t / T + DY[d];
    return lx < 0 || lx >= T || ly < 0 || ly >= T ? -1 : ly * T + lx;
}

static void local_bfs(void) {
    for (int t = 0; t < T * T; t++)
        hd[t] = inu[t] && rtl[t] > 0 ? 1 : INF;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int t = 0; t < T * T; t++) {
            int best = hd[t];
            for (int d = 0; d < 4; d++) {
                const int w = tile_nb(t, d);
                if (w >= 0 && rl[t][d] > 0 && hd[w] < INF && hd[w] + 1 < best)
                    best = hd[w] + 1;
            }
            rel[t] = best;
        }
        for (int t = 0; t < T * T; t++)
            if (rel[t] < hd[t]) {
                hd[t] = rel[t];
                changed = 1;
            }
    }
}

static long tile_pull(int x0, int y0, int *moved) {
    for (int t = 0; t < T * T; t++) {
        const int x = x0 + t % T, y = y0 + t / T;
        gl[t] = x >= 0 && x < W && y >= 0 && y < H ? (long)y * W + x : -1;
        inu[t] = gl[t] >= 0 && hh[gl[t]] == INF;
        el[t] = inu[t] ? ex[gl[t]] : 0;
        rtl[t] = inu[t] ? rt[gl[t]] : 0;
    }
    for (int t = 0; t < T * T; t++)
        for (int d = 0; d < 4; d++) {
            const int w = tile_nb(t, d);
            rl[t][d] = inu[t] && w >= 0 && inu[w] ? res[d][gl[t]] : 0;
        }
    local_bfs();
    for (int round = 0; round < 64; round++) {
        int any = 0, open_here = 0;
        for (int t = 0; t < T * T; t++)
            open_here |= inu[t] && rtl[t] > 0;
        if (!open_here)
            break;
        for (int t = 0; t < T * T; t++) {
            pdir[t] = -1;
            rel[t] = hd[t];
        }
        for (int t = 0; t < T * T; t++) {
            if (!(el[t] > 0 && hd[t] < INF))
                continue;
            any = 1;
            if (rtl[t] > 0) {
                const long long a = el[t] < rtl[t] ? el[t] : rtl[t];
                rtl[t] -= (int)a;
                el[t] -= a;
            }
            if (el[t] <= 0)
                continue;
            int hmin = INF, best = -1;
            for (int d = 0; d < 4; d++) {
                const int w = tile_nb(t, d);
                if (w >= 0 && rl[t][d] > 0 && hd[w] < hmin) {
                    hmin = hd[w];
                    best = d;
                }
            }
            if (best >= 0 && hmin < hd[t]) {
                const unsigned a = el[t] < rl[t][best] ? (unsigned)el[t] : rl[t][best];
                rl[t][best] -= a;
                el[t] -= a;
                pdir[t] = best;
                pamt[t] = a;
            } else {
                rel[t] = hmin >= INF - 1 ? INF : hmin + 1;
            }
        }
        if (!any)
            break;
        for (int t = 0; t < T * T; t++)
            hd[t] = rel[t];
        for (int t = 0; t < T * T; t++)
            if (pdir[t] >= 0) {
                const int w = tile_nb(t, pdir[t]);
                if (w >= 0) {
                    el[w] += pamt[t];
                    rl[w][pdir[t] ^ 1] += pamt[t];
                }
            }
    }
    local_bfs();
    int any_r = 0, blocks = 0;
    for (int t = 0; t < T * T; t++) {
        if (hd[t] >= INF)
            continue;
        any_r = 1;
        blocks |= el[t] > 0;
        for (int d = 0; d < 4; d++) {
            const long x = tile_nb(t, d) >= 0 ? -1 : nbr(gl[t], d);
            if (x >= 0 && hh[x] == INF && res[d ^ 1][x] > 0)
                blocks = 1;
        }
    }
    const int move = any_r && !blocks;
    long open = 0;
    for (int t = 0; t < T * T; t++) {
        if (!inu[t])
            continue;
        ex[gl[t]] = el[t];
        rt[gl[t]] = rtl[t];
        for (int d = 0; d < 4; d++) {
            const int w = tile_nb(t, d);
            if (w >= 0 && inu[w])
                res[d][gl[t]] = rl[t][d];
        }
        if (move && hd[t] < INF)
            hh[gl[t]] = hd[t];
        else if (rtl[t] > 0)
            open++;
    }
    *moved = move;
    return open;
}

/* The stuck closure on one 16x16 tile (stuck_close_kernel); returns nodes closed, -1 if not. */
static int reach[T * T];
static long tile_close(int x0, int y0) {
    for (int t = 0; t < T * T; t++) {
        const int x = x0 + t % T, y = y0 + t / T;
        gl[t] = x < W && y < H ? (long)y * W + x : -1;
        reach[t] = gl[t] >= 0 && hh[gl[t]] < INF && ex[gl[t]] > 0;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int t = 0; t < T * T; t++) {
            if (!reach[t])
                continue;
            for (int d = 0; d < 4; d++) {
                const int w = tile_nb(t, d);
                if (w >= 0 && !reach[w] && gl[w] >= 0 && hh[gl[w]] < INF && res[d][gl[t]] > 0) {
                    reach[w] = 1;
                    changed = 1;
                }
            }
        }
    }
    long closed = 0;
    for (int t = 0; t < T * T; t++) {
        if (!reach[t])
            continue;
        if (rt[gl[t]] > 0)
            return -1;
        for (int d = 0; d < 4; d++) {
            const long x = tile_nb(t, d) >= 0 ? -1 : nbr(gl[t], d);
            if (x >= 0 && res[d][gl[t]] > 0 && hh[x] < INF)
                return -1;
        }
    }
    for (int t = 0; t < T * T; t++)
        if (reach[t]) {
            hh[gl[t]] = INF;
            closed++;
        }
    return closed;
}

/* After both pull passes: R = the source side's nodes that reach a still-open sink arc over
 * residual arcs among themselves (a reversed BFS from those arcs inside U). Prints its size, the
 * excess it holds, the open arcs' residual and R's bounding box: what a wider pull would have to
 * cover for the certificate to hold. */
static void describe_open_regions(void) {
    long head = 0, tail = 0, open = 0;
    long long excess = 0, resid = 0;
    int x0 = W, x1 = -1, y0 = H, y1 = -1;
    memset(inq, 0, (size_t)N * sizeof *inq);
    for (long i = 0; i < N; i++)
        if (hh[i] == INF && rt[i] > 0) {
            inq[i] = 1;
            queue[tail++] = i;
            open++;
            resid += rt[i];
        }
    while (head < tail) {
        const long w = queue[head++];
        const int x = (int)(w % W), y = (int)(w / W);
        excess += ex[w];
        x0 = x < x0 ? x : x0;
        x1 = x > x1 ? x : x1;
        y0 = y < y0 ? y : y0;
        y1 = y > y1 ? y : y1;
        for (int d = 0; d < 4; d++) {
            const long v = nbr(w, d); /* v -> w is v's direction d ^ 1 */
            if (v >= 0 && !inq[v] && hh[v] == INF && res[d ^ 1][v] > 0) {
                inq[v] = 1;
                queue[tail++] = v;
            }
        }
    }
    printf("  open after both passes: %ld arcs (residual %lld); R %ld nodes holding excess %lld, "
           "box %dx%d at (%d,%d)\n",
           open, resid, tail, excess, x1 - x0 + 1, y1 - y0 + 1, x0, y0);
}

/* The far pull (fwd 0) and the far drain (fwd 1) of one node, as far_fix in grid_pull.cuh:
 * - the pull, from a source-side node `start` whose sink arc is open: a reversed BFS over U's
 *   residual arcs (v -> w, both at INF) to the nearest node with excess, a push from it along
 *   the path into start's sink arc; if the BFS runs out, R (all it reached, no excess) moves to
 *   the sink side at its BFS depth + 1;
 * - the drain, from a finite node `start` with excess: a BFS over residual arcs among finite
 *   nodes to the nearest residual sink arc, a push from start along the path into it; if the
 *   BFS runs out, S (all it reached) goes to INF.
 * At most 16 paths and CAP BFS nodes per search. Prints what it did; returns 1 when the node
 * needs nothing more. */
static long *par;
/* --recheck: the nodes every search held, while far_fix runs for the chained fix (a search
 * may end a level past its cap, so the list grows as it needs) */
static long *touched, ntouched, touched_cap;
static int record;
static int far_fix(long start, int fwd, long cap) {
    int paths = 0, levels = 0;
    long visited = 0;
    const char *how = "left";
#define FAR_SETTLED                                                                                \
    (fwd ? (hh[start] == INF || ex[start] <= 0) : (hh[start] < INF || rt[start] <= 0))
    while (!FAR_SETTLED && paths < 16) {
        long head = 0, tail = 0, found = (fwd ? rt[start] : ex[start]) > 0 ? start : -1;
        memset(inq, 0, (size_t)N * sizeof *inq);
        inq[start] = 1;
        par[start] = -1;
        queue[tail++] = start;
        int level = 0;
        while (head < tail && found < 0 && tail < cap) {
            const long end = tail;
            level++;
            for (; head < end && found < 0; head++) {
                const long w = queue[head];
                for (int d = 0; d < 4 && found < 0; d++) {
                    const long v = nbr(w, d);
                    /* pull: U's arc v -> w (v's direction d ^ 1); drain: the finite arc w -> v */
                    if (v < 0 || inq[v] ||
                        (fwd ? (hh[v] == INF || res[d][w] == 0)
                             : (hh[v] != INF || res[d ^ 1][v] == 0)))
                        continue;
                    inq[v] = 1;
                    par[v] = w;
                    queue[tail++] = v;
                    if ((fwd ? rt[v] : ex[v]) > 0)
                        found = v;
                }
            }
        }
        visited += tail;
        levels = level > levels ? level : levels;
        if (record) {
            if (ntouched + tail > touched_cap) {
                touched_cap = 2 * (ntouched + tail);
                touched = realloc(touched, (size_t)touched_cap * sizeof *touched);
                if (touched == NULL) {
                    fprintf(stderr, "warm_pull_emu: out of memory\n");
                    exit(1);
                }
            }
            for (long k = 0; k < tail; k++)
                touched[ntouched++] = queue[k];
        }
        if (found < 0 && head == tail) { /* nothing to reach: R to the sink side, or S to INF */
            for (long k = 0; k < tail; k++) {
                int depth = 1;
                for (long v = queue[k]; v != start; v = par[v])
                    depth++;
                hh[queue[k]] = fwd ? INF : depth;
            }
            how = fwd ? "S closed to INF" : "R moved to the sink side";
            break;
        }
        if (found < 0)
            break;
        /* flow goes from the node with excess to the node with the sink arc */
        const long from = fwd ? start : found, to = fwd ? found : start;
        long long b = ex[from] < rt[to] ? ex[from] : rt[to];
        for (int pass = 0; pass < 2; pass++)
            for (long v = found; v != start; v = par[v]) {
                const long t = fwd ? par[v] : v, h = fwd ? v : par[v]; /* the arc t -> h */
                for (int d = 0; d < 4; d++) {
                    if (nbr(t, d) != h)
                        continue;
                    if (pass == 0 && res[d][t] < b)
                        b = res[d][t];
                    else if (pass == 1) {
                        res[d][t] -= (unsigned)b;
                        res[d ^ 1][h] += (unsigned)b;
                    }
                }
            }
        ex[from] -= b;
        rt[to] -= (int)b;
        paths++;
        how = fwd ? "drained" : "closed";
    }
    const int settled = FAR_SETTLED;
#undef FAR_SETTLED
    printf("  far %s at (%ld,%ld): %d paths, BFS up to %d levels, %ld nodes visited, %s\n",
           fwd ? "drain" : "pull", start % W, start / W, paths, levels, visited,
           settled ? how : "left");
    return settled;
}

/* far_fix on every node that needs it: the open sink arcs of U (fwd 0) or the finite nodes
 * with excess (fwd 1). Returns the nodes left. */
static long far_all(int fwd, long cap) {
    long left = 0;
    for (long i = 0; i < N; i++)
        if (fwd ? (hh[i] < INF && ex[i] > 0) : (hh[i] == INF && rt[i] > 0))
            left += !far_fix(i, fwd, cap);
    return left;
}

/* The closure certificate at node i (cert_against in grid_pull.cuh). */
static int cert_bad(long i) {
    if (hh[i] < INF)
        return ex[i] > 0;
    int bad = rt[i] > 0;
    for (int d = 0; d < 4; d++) {
        const long w = nbr(i, d);
        bad |= w >= 0 && res[d][i] > 0 && hh[w] < INF;
    }
    return bad;
}

/* The chained fix (pull_fix_kernel with its recheck) on the current state: returns -1 when it
 * does not run (the certificate holds, or lists more than 28 nodes against it), else 1 when its
 * recheck agrees with the full certificate after it, 0 when not. */
static int chained_fix(long cap) {
    long listed[28], bad_total = 0;
    int nl = 0;
    for (long i = 0; i < N; i++)
        if (cert_bad(i)) {
            if (nl < 28)
                listed[nl++] = i;
            bad_total++;
        }
    if (bad_total == 0 || bad_total > 28)
        return -1;
    record = 1;
    ntouched = 0;
    for (int k = 0; k < nl; k++) {
        const long i = listed[k];
        if (hh[i] < INF) {
            if (ex[i] > 0)
                far_fix(i, 1, cap);
        } else if (rt[i] > 0) {
            far_fix(i, 0, cap);
        }
    }
    record = 0;
    long local = 0, full = 0;
    for (int k = 0; k < nl; k++)
        local += cert_bad(listed[k]);
    for (long k = 0; k < ntouched; k++) {
        local += cert_bad(touched[k]);
        for (int d = 0; d < 4; d++) {
            const long w = nbr(touched[k], d);
            if (w >= 0)
                local += cert_bad(w);
        }
    }
    for (long i = 0; i < N; i++)
        full += cert_bad(i);
    printf("  chained fix: %ld listed, %ld nodes held by its searches; recheck %s (%ld), full "
           "certificate %s (%ld nodes against it)\n",
           bad_total, ntouched, local == 0 ? "holds" : "fails", local,
           full == 0 ? "holds" : "fails", full);
    return (local == 0) == (full == 0);
}

static uint64_t rng = 1;
static uint64_t rng_next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void *alloc(size_t bytes) {
    void *p = calloc(1, bytes);
    if (p == NULL) {
        fprintf(stderr, "warm_pull_emu: out of memory\n");
        exit(1);
    }
    return p;
}

int main(int argc, char **argv) {
    int steps = 4, rounds = 32, recheck = 0, recheck_runs = 0, recheck_wrong = 0;
    long far_cap = 0;
    uint64_t seed = 1;
    W = 1920;
    H = 1080;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--size") == 0 && sscanf(argv[a + 1], "%dx%d", &W, &H) == 2)
            continue;
        if (strcmp(argv[a], "--steps") == 0)
            steps = atoi(argv[a + 1]);
        else if (strcmp(argv[a], "--rounds") == 0)
            rounds = atoi(argv[a + 1]);
        else if (strcmp(argv[a], "--far") == 0)
            far_cap = atol(argv[a + 1]);
        else if (strcmp(argv[a], "--recheck") == 0)
            recheck = atoi(argv[a + 1]);
        else if (strcmp(argv[a], "--seed") == 0)
            seed = (uint64_t)strtoull(argv[a + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: see the header of bench/warm_pull_emu.c\n");
            return 2;
        }
    }
    N = (long)W * H;
    gcut_grid *g = NULL;
    if (gcut_synth_grid(W, H, 1, seed, GCUT_SYNTH_HARD, 4, &g) != GCUT_OK) {
        fprintf(stderr, "warm_pull_emu: %s\n", gcut_last_error());
        return 1;
    }
    int32_t *src = gcut_grid_terminal_data(g, GCUT_SOURCE);
    int32_t *snk = gcut_grid_terminal_data(g, GCUT_SINK);
    for (int d = 0; d < 4; d++) {
        res[d] = alloc((size_t)N * 4);
        rinc[d] = alloc((size_t)N * 4);
        memcpy(res[d], gcut_grid_dir_cdata(g, d), (size_t)N * 4);
    }
    rt = alloc((size_t)N * 4);
    hh = alloc((size_t)N * 4);
    nh = alloc((size_t)N * 4);
    ex = alloc((size_t)N * 8);
    inc = alloc((size_t)N * 8);
    queue = alloc((size_t)(N + 1) * sizeof(long));
    inq = alloc((size_t)N * sizeof(long));
    par = alloc((size_t)N * sizeof(long));
    long *list = alloc((size_t)N * sizeof(long));
    int *flag = alloc((size_t)(W / T + 2) * (size_t)(H / T + 2) * sizeof(int));
    for (long i = 0; i < N; i++) {
        const int c = src[i] < snk[i] ? src[i] : snk[i];
        ex[i] = src[i] - c;
        rt[i] = snk[i] - c;
        for (int d = 0; d < 4; d++)
            if (nbr(i, d) < 0)
                res[d][i] = 0;
    }
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "bk";
    printf("hard %dx%d 4-connected, seed %llu, %d steps of 1%% of the terminals x 0.5-1.5, %d "
           "rounds for the sweeps\n",
           W, H, (unsigned long long)seed, steps, rounds);
    int failures = 0;
    for (int step = -1; step < steps; step++) {
        long count = 0, open0 = 0, open[2] = {0, 0}, moved = 0, before = 0, after = 0;
        long closed = 0, not_closable = 0, against = 0;
        if (step >= 0) {
            for (long i = 0; i < N; i++) {
                if (rng_next() % 1000 >= 10)
                    continue;
                list[count++] = i;
                const int ns = (int)((double)src[i] * (0.5 + (double)(rng_next() % 1001) / 1000));
                const int nt = (int)((double)snk[i] * (0.5 + (double)(rng_next() % 1001) / 1000));
                /* the repair (repair_kernel, terminals only) */
                long long r2 = (long long)rt[i] + nt - snk[i];
                ex[i] += ns - src[i];
                if (r2 < 0) {
                    ex[i] += -r2;
                    r2 = 0;
                }
                if (ex[i] < 0) {
                    r2 += -ex[i];
                    ex[i] = 0;
                }
                rt[i] = (int)r2;
                src[i] = ns;
                snk[i] = nt;
            }
            for (long k = 0; k < count; k++)
                open0 += hh[list[k]] == INF && rt[list[k]] > 0;
            for (int pass = 0; pass < 2; pass++) {
                const int sh = pass ? T / 2 : 0, vtx = (W + sh + T - 1) / T,
                          vty = (H + sh + T - 1) / T;
                memset(flag, 0, (size_t)vtx * vty * sizeof(int));
                for (long k = 0; k < count; k++) {
                    const long i = list[k];
                    if (hh[i] == INF && rt[i] > 0)
                        flag[(i / W + sh) / T * vtx + (i % W + sh) / T] = 1;
                }
                for (int t = 0; t < vtx * vty; t++)
                    if (flag[t]) {
                        int mv = 0;
                        open[pass] += tile_pull(t % vtx * T - sh, t / vtx * T - sh, &mv);
                        moved += mv;
                    }
            }
            if (open[1] > 0) {
                describe_open_regions();
                if (far_cap > 0)
                    far_all(0, far_cap);
            }
            for (long i = 0; i < N; i++)
                before += ex[i] > 0 && hh[i] < INF;
            sync_rounds(rounds);
            const int tx = (W + T - 1) / T, ty = (H + T - 1) / T;
            memset(flag, 0, (size_t)tx * ty * sizeof(int));
            for (long i = 0; i < N; i++)
                if (ex[i] > 0 && hh[i] < INF) {
                    after++;
                    flag[i / W / T * tx + i % W / T] = 1;
                }
            for (int t = 0; t < tx * ty; t++)
                if (flag[t]) {
                    const long c = tile_close(t % tx * T, t / tx * T);
                    if (c < 0)
                        not_closable++;
                    else
                        closed += c;
                }
            if (far_cap > 0 && recheck) {
                const int agree = chained_fix(far_cap);
                if (agree >= 0) {
                    recheck_runs++;
                    recheck_wrong += !agree;
                }
            }
            if (far_cap > 0)
                far_all(1, far_cap);
            for (long i = 0; i < N; i++)
                against += cert_bad(i);
        }
        finish_exactly();
        long long sum_sink = 0, sum_rt = 0;
        for (long i = 0; i < N; i++) {
            sum_sink += snk[i];
            sum_rt += rt[i];
        }
        int64_t flow_bk = 0;
        if (gcut_grid_solve(g, &opt, &flow_bk, NULL, NULL) != GCUT_OK)
            return 1;
        const long long flow = sum_sink - sum_rt;
        failures += flow != flow_bk;
        if (step < 0) {
            printf("cold: flow %lld, bk %lld\n", flow, (long long)flow_bk);
            continue;
        }
        printf("step %d: %ld changed; source-side sink arcs opened %ld, open after pass 0 %ld, "
               "after pass 1 %ld, regions moved %ld; finite nodes with excess %ld before the "
               "rounds, %ld after, %ld closed, %ld tiles not closable; certificate: %ld nodes "
               "against it; exact flow %lld, bk %lld\n",
               step, count, open0, open[0], open[1], moved, before, after, closed, not_closable,
               against, flow, (long long)flow_bk);
    }
    gcut_grid_free(g);
    printf("flows: %s\n", failures ? "MISMATCH" : "all equal to bk's");
    if (recheck)
        printf("chained fix: ran in %d steps; its recheck disagreed with the full certificate in "
               "%d\n",
               recheck_runs, recheck_wrong);
    return failures != 0 || recheck_wrong != 0;
}
