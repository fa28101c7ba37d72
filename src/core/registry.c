/* registry.c - the one table of solvers: names, what graphs they take, entry points. The
 * CLI's --solver, "auto" and `gcut solvers` all come from here. This is the one file of
 * src/core that names the solvers' entry points (they live in src/cpu, src/qpbo, src/cuda). */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GCUT_HAVE_CUDA
#define GCUT__CUDA_AVAILABLE gcut__cuda_available
/* src/cuda/cuda_general.cu: push-relabel on any graph on the GPU (docs/CUDA-GENERAL.md). */
gcut_status gcut__cudageneral_solve_graph(gcut_graph *graph, const gcut_options *options,
                                          int64_t *flow, uint8_t *labels, gcut_stats *stats);
#endif

static const gcut__solver solvers[] = {
    {"bk", "Boykov-Kolmogorov augmenting paths, serial, warm re-solve",
     GCUT_TAKES_GRAPH | GCUT_TAKES_GRID | GCUT_WARM, NULL, gcut__bk_solve_graph,
     gcut__bk_solve_grid},
    {"grid-bk",
     "Boykov-Kolmogorov on the implicit grid: arcs by index offset, 4 bytes per arc, warm "
     "re-solve",
     GCUT_TAKES_GRID | GCUT_WARM, NULL, NULL, gcut__gridbk_solve_grid},
    {"ibfs",
     "incremental breadth-first search (Goldberg et al.): two trees of exact BFS labels, "
     "excesses on long paths, serial",
     GCUT_TAKES_GRAPH, NULL, gcut__ibfs_solve_graph, NULL},
    {"grid-ibfs",
     "incremental breadth-first search on the implicit grid (grid-bk's layout), serial",
     GCUT_TAKES_GRID, NULL, NULL, gcut__gridibfs_solve_grid},
    {"parallel-bk", "Liu & Sun's parallel bk: blocks solved at once, merged bottom-up on threads",
     GCUT_TAKES_GRAPH | GCUT_TAKES_GRID, NULL, gcut__pbk_solve_graph, gcut__pbk_solve_grid},
    {"cpu-pr", "grid push-relabel on CPU threads (OpenMP), the CPU twin of cuda-grid",
     GCUT_TAKES_GRID, NULL, NULL, gcut__cpupr_solve_grid},
#ifdef GCUT_HAVE_CUDA
    {"cuda-grid", "grid push-relabel on an NVIDIA GPU: tiles, BFS global relabel, exact stop",
     GCUT_TAKES_GRID | GCUT_NEEDS_GPU, GCUT__CUDA_AVAILABLE, NULL, gcut__cudagrid_solve_grid},
    {"cuda-general",
     "push-relabel on any graph on an NVIDIA GPU: device CSR, lock-free pushes, BFS exact stop",
     GCUT_TAKES_GRAPH | GCUT_NEEDS_GPU, GCUT__CUDA_AVAILABLE, gcut__cudageneral_solve_graph, NULL},
#endif
};

enum { num_solvers = (int)(sizeof solvers / sizeof solvers[0]) };

/* Grids at least this large go to the GPU under "auto": below it, launch and upload costs
 * exceed bk's whole solve. */
#define GCUT__AUTO_GPU_MIN_NODES ((int64_t)256 * 256)
/* General graphs under "auto" (gcut__graph_solver_pick), from the H100 tables of
 * docs/PERFORMANCE.md ("cuda-general", both passes; same-process ratios to bk's solve): graphs
 * that are not lattices (GENRMF, Washington RLG, random) go to cuda-general from
 * GCUT__AUTO_GENERAL_MIN_NODES nodes (the smallest measured, GENRMF at 32768 nodes: 22-26x;
 * RLG 67-2453x, random 10-213x); lattices written as graphs (images, volumes), where bk's
 * augmenting paths are short, from GCUT__AUTO_LATTICE_MIN_NODES (the smallest measured, hard
 * 1920x1080: 5.1x; 4K 9.9-10.2x, 256^3 21.7-25.0x). Nothing smaller was measured. */
#define GCUT__AUTO_GENERAL_MIN_NODES ((int64_t)32768)
#define GCUT__AUTO_LATTICE_MIN_NODES ((int64_t)2000000)
/* A graph is a lattice when at least this share of its edges (a sample) join nodes whose ids
 * differ by one of its GCUT__LATTICE_STRIDES most common differences: a grid numbered row by
 * row has at most 13 (26-connected 3D); GENRMF has about 2/3, random graphs about none. */
#define GCUT__LATTICE_SHARE 0.9
#define GCUT__LATTICE_STRIDES 16

/* Grids at least this large go to parallel-bk under "auto" when the options ask for more than
 * one thread: below it, starting threads and merging blocks cost about what they save. */
#define GCUT__AUTO_PARALLEL_MIN_NODES ((int64_t)256 * 256)

/* Whether "auto" gives a one-off CPU grid solve to grid-ibfs rather than grid-bk: every
 * connectivity and size. 6-, 8- and 26-connected since the second pass (docs/CPU-SERIAL.md);
 * 4-connected since the fifth, when grid-ibfs's build + solve beat grid-bk's on every easy and
 * hard 4-connected grid measured from 128^2 to 4096^2 on the quiet 16-core host (1.06-1.31x,
 * equal on easy 128^2; docs/PERFORMANCE.md, "Fifth pass: auto on 4-connected grids"). Both
 * return the source side of the smallest minimum cut, so the labels do not change. */
static bool gcut__auto_grid_ibfs(const gcut_grid *grid) {
    return grid->num_dirs == 4 || grid->num_dirs == 6 || grid->num_dirs == 8 ||
           grid->num_dirs == 26;
}

void gcut_options_init(gcut_options *options) {
    if (options == NULL)
        return;
    memset(options, 0, sizeof *options);
    options->solver = "auto";
    options->warm = 1;
}

static int is_available(const gcut__solver *s) {
    return s->available == NULL || s->available();
}

static void fill_info(const gcut__solver *s, gcut_solver_info *info) {
    info->name = s->name;
    info->description = s->description;
    info->flags = s->flags;
    info->available = is_available(s);
}

int gcut_solver_count(void) {
    return num_solvers;
}

gcut_status gcut_solver_get(int index, gcut_solver_info *info) {
    if (index < 0 || index >= num_solvers || info == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_solver_get: index %d out of range [0, %d)",
                          index, num_solvers);
    fill_info(&solvers[index], info);
    return GCUT_OK;
}

static const gcut__solver *find(const char *name) {
    for (int i = 0; i < num_solvers; i++)
        if (strcmp(solvers[i].name, name) == 0)
            return &solvers[i];
    return NULL;
}

gcut_status gcut_solver_find(const char *name, gcut_solver_info *info) {
    const gcut__solver *s = name ? find(name) : NULL;
    if (s == NULL)
        return gcut__fail(GCUT_ERR_NOT_FOUND,
                          "no solver named '%s' in this build (see `gcut solvers`)",
                          name ? name : "(null)");
    if (info)
        fill_info(s, info);
    return GCUT_OK;
}

const gcut__solver *gcut__solver_pick(const gcut_options *options, bool grid, int64_t num_nodes,
                                      gcut_status *status) {
    const char *name = options && options->solver ? options->solver : "auto";
    if (strcmp(name, "auto") == 0) {
        const gcut__solver *gpu = find(grid ? "cuda-grid" : "cuda-general");
        const int64_t min_nodes = grid ? GCUT__AUTO_GPU_MIN_NODES : GCUT__AUTO_LATTICE_MIN_NODES;
        if (gpu != NULL && num_nodes >= min_nodes && (grid || num_nodes < INT32_MAX) &&
            is_available(gpu))
            return gpu;
        /* On the CPU a grid goes to grid-bk: bk's search on the implicit topology, faster
         * than bk's CSR on every synthetic grid, and the solver of grid contexts (warm
         * re-solves); gcut_grid_solve moves one-off solves of some shapes on to grid-ibfs. A
         * general graph goes to ibfs, 1.2-3.4x bk's solve speed on the random, layered and
         * GENRMF graphs measured (docs/CPU-SERIAL.md, "Second pass"; graphs past its 32-bit node
         * ids go to bk); gcut__graph_solver_pick turns re-solves of a graph to bk, for its warm
         * state. */
        if (grid)
            return find("grid-bk");
        return find(num_nodes < (int64_t)INT32_MAX - 8 ? "ibfs" : "bk");
    }
    const gcut__solver *s = find(name);
    if (s == NULL) {
        *status = gcut__fail(GCUT_ERR_NOT_FOUND,
                             "no solver named '%s' in this build (see `gcut solvers`)", name);
        return NULL;
    }
    if (!grid && s->solve_graph == NULL) {
        *status = gcut__fail(GCUT_ERR_UNSUPPORTED,
                             "solver '%s' takes grids only; this problem is a general graph", name);
        return NULL;
    }
    if (!is_available(s)) {
        *status = gcut__fail(GCUT_ERR_NO_DEVICE,
                             "solver '%s' needs a CUDA GPU and none is usable here", name);
        return NULL;
    }
    return s;
}

double gcut__graph_lattice_share(const gcut_graph *g) {
    enum { slots = 1024, samples = 65536 };
    uint64_t key[slots], count[slots];
    memset(count, 0, sizeof count);
    const int64_t m = g->num_edges;
    const int64_t take = m < samples ? m : samples;
    int64_t counted = 0;
    for (int64_t i = 0; i < take; i++) {
        const int64_t e = (int64_t)((double)i * (double)m / (double)take);
        const int64_t u = gcut__edge_u(g, e), v = gcut__edge_v(g, e);
        if (u == v)
            continue;
        const uint64_t d = (uint64_t)(u > v ? u - v : v - u);
        counted++;
        /* Open addressing; differences past a full table count for nothing (not a lattice). */
        uint64_t h = (d * 0x9e3779b97f4a7c15ull) >> 54;
        for (int probe = 0; probe < 8; probe++, h = (h + 1) % slots) {
            if (count[h] == 0) {
                key[h] = d;
                count[h] = 1;
                break;
            }
            if (key[h] == d) {
                count[h]++;
                break;
            }
        }
    }
    if (counted == 0)
        return 0.0;
    /* The GCUT__LATTICE_STRIDES largest counts. */
    uint64_t top[GCUT__LATTICE_STRIDES] = {0};
    for (int h = 0; h < slots; h++) {
        uint64_t c = count[h];
        for (int j = 0; j < GCUT__LATTICE_STRIDES && c > 0; j++)
            if (c > top[j]) {
                uint64_t t = top[j];
                top[j] = c;
                c = t;
            }
    }
    uint64_t sum = 0;
    for (int j = 0; j < GCUT__LATTICE_STRIDES; j++)
        sum += top[j];
    return (double)sum / (double)counted;
}

/* cuda-general's padded layout (docs/CUDA-GENERAL.md, "Fourth pass") under auto: only where the
 * padding adds at most GCUT__PAD_MAX_PERCENT percent of slots to the real arcs (grids and
 * GENRMF: every vertex has about the one degree). H100, same process: padded 1.00-1.12x the CSR
 * on 2D/3D grids as graphs, 1.5-1.8x on GENRMF; 1.1-2.7x slower on RLG (2.7x the slots), random
 * graphs (2.9-8x) and a degree-28 hub. A hub (degree past 32) always takes the CSR;
 * cuda_general.cu checks that before asking. */
#define GCUT__PAD_MAX_PERCENT 125

int gcut__cudageneral_layout_rule(int64_t nodes, int64_t arcs, int64_t max_degree, int64_t slots) {
    if (nodes <= 0 || arcs <= 0 || max_degree <= 0 || max_degree > 32)
        return 0;
    return slots * 100 <= arcs * GCUT__PAD_MAX_PERCENT;
}

static _Thread_local int cudageneral_layout = -1;

int gcut__cudageneral_last_layout(void) {
    return cudageneral_layout;
}

void gcut__cudageneral_note_layout(int layout) {
    cudageneral_layout = layout;
}

const gcut__solver *gcut__graph_solver_pick(const gcut_options *options, const gcut_graph *g,
                                            gcut_status *status) {
    const char *name = options && options->solver ? options->solver : "auto";
    if (strcmp(name, "auto") == 0 && g->num_nodes >= GCUT__AUTO_GENERAL_MIN_NODES &&
        g->num_nodes < GCUT__AUTO_LATTICE_MIN_NODES && g->num_nodes < INT32_MAX) {
        const gcut__solver *gpu = find("cuda-general");
        if (gpu != NULL && is_available(gpu) && gcut__graph_lattice_share(g) < GCUT__LATTICE_SHARE)
            return gpu;
    }
    const gcut__solver *s = gcut__solver_pick(options, false, g->num_nodes, status);
    /* A re-solve after capacity changes (options.warm, no edges added since): ibfs keeps no
     * state, so auto's CPU pick turns to bk, which re-solves warm from then on (its first
     * re-solve is cold, as every ibfs solve is). */
    if (s != NULL && strcmp(name, "auto") == 0 && strcmp(s->name, "ibfs") == 0 && options &&
        options->warm && g->solved && !g->structure_changed)
        s = find("bk");
    return s;
}

gcut_status gcut_grid_solve(gcut_grid *grid, const gcut_options *options, int64_t *flow,
                            uint8_t *labels, gcut_stats *stats) {
    if (grid == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_solve: grid is NULL");
    gcut_options defaults;
    if (options == NULL) {
        gcut_options_init(&defaults);
        options = &defaults;
    }
    gcut_status st = GCUT_OK;
    const gcut__solver *solver = gcut__solver_pick(options, true, grid->num_nodes, &st);
    if (solver == NULL)
        return st;
    /* A one-off grid solve under "auto" that asks for threads, on a grid worth splitting, and
     * no GPU picked: parallel-bk (the same minimal cut as bk; docs/CPU-PARALLEL.md). Contexts
     * and GrabCut keep the serial pick (grid-bk), whose warm re-solves they use. */
    if (strcmp(solver->name, "grid-bk") == 0 && options->threads > 1 &&
        grid->num_nodes >= GCUT__AUTO_PARALLEL_MIN_NODES &&
        (options->solver == NULL || strcmp(options->solver, "auto") == 0))
        solver = find("parallel-bk");
    /* A one-off grid solve under "auto" that stayed serial: grid-ibfs, ahead of grid-bk on every
     * grid of the serial tables (docs/CPU-SERIAL.md, "Second pass" and "Fifth pass"). */
    if (strcmp(solver->name, "grid-bk") == 0 && gcut__auto_grid_ibfs(grid) &&
        (options->solver == NULL || strcmp(options->solver, "auto") == 0))
        solver = find("grid-ibfs");
    st = gcut_grid_validate(grid);
    if (st != GCUT_OK)
        return st;
    gcut_stats local;
    gcut_stats *s = stats ? stats : &local;
    memset(s, 0, sizeof *s);
    int64_t value = 0;
    if (solver->solve_grid != NULL) {
        st = solver->solve_grid(grid, options, &value, labels, s);
    } else {
        double t0 = gcut__now_ms();
        gcut_graph *g = NULL;
        st = gcut_grid_to_graph(grid, &g);
        double convert_ms = gcut__now_ms() - t0;
        if (st == GCUT_OK) {
            gcut_options fresh = *options;
            fresh.warm = 0;
            st = solver->solve_graph(g, &fresh, &value, labels, s);
            s->build_ms += convert_ms;
        }
        gcut_graph_free(g);
    }
    if (st != GCUT_OK)
        return st;
    snprintf(s->solver, sizeof s->solver, "%s", solver->name);
    s->flow = value;
    if (flow)
        *flow = value;
    return GCUT_OK;
}

int gcut__env_int(const char *name, int fallback, int lo, int hi) {
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return fallback;
    long v = strtol(s, NULL, 10);
    return v < lo ? lo : v > hi ? hi : (int)v;
}
