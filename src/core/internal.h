/* internal.h - what the parts of libgcut share and the public header does not show: errors,
 * the capped allocator, timers, the graph and grid objects, and the solver table.
 * Nothing outside src/ includes this file. */
#ifndef GCUT_INTERNAL_H
#define GCUT_INTERNAL_H

#include "gcut.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define GCUT__PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define GCUT__PRINTF(fmt_index, first_arg)
#endif

/* ---- errors (src/core/status.c) ---- */

/** Record a message for gcut_last_error() and return status, so that a failure reads
 *  `return gcut__fail(GCUT_ERR_INVALID_ARG, "node %lld out of range", ...)`. */
gcut_status gcut__fail(gcut_status status, const char *fmt, ...) GCUT__PRINTF(2, 3);
gcut_status gcut__failv(gcut_status status, const char *fmt, va_list ap);
/** Clear the thread's last error message. */
void gcut__clear_error(void);

/* ---- memory (src/core/alloc.c): every host allocation goes through these ---- */

/** Allocate bytes under the memory cap. On failure sets a message naming what (e.g.
 *  "bk arcs") and the size, and returns NULL. bytes == 0 returns a valid unique pointer. */
void *gcut__malloc(size_t bytes, const char *what);
void *gcut__calloc(size_t count, size_t size, const char *what);
/** Grow or shrink; on failure the old block is untouched and NULL is returned. */
void *gcut__realloc(void *ptr, size_t bytes, const char *what);
void gcut__free(void *ptr);
/** count * size, or SIZE_MAX if it overflows (so that the allocation then fails cleanly). */
size_t gcut__mul_size(size_t count, size_t size);
/** Reserve bytes against the memory cap without allocating (GPU solvers mirroring host
 *  buffers, mmap'd files): @return 0 on success, or -1 with a message if over the cap. */
int gcut__reserve(uint64_t bytes, const char *what);
void gcut__unreserve(uint64_t bytes);

/* ---- time ---- */

/** Monotonic wall clock in milliseconds. */
double gcut__now_ms(void);
/* An integer tuning knob from the environment (benchmarks; read once per solve), clamped to
 * [lo, hi]; fallback when unset or empty. */
int gcut__env_int(const char *name, int fallback, int lo, int hi);

/* ---- general graph (src/core/graph.c) ---- */

/** One recorded capacity change since the last solve, for warm re-solves. */
typedef struct gcut__change {
    int64_t index; /**< edge number (kind 0) or node (kind 1) */
    int64_t old_a; /**< old cap (edge) or old source capacity (node) */
    int64_t old_b; /**< old rev_cap (edge) or old sink capacity (node) */
    int kind;      /**< 0 edge, 1 node */
} gcut__change;

/** Solver state a graph keeps between solves (bk's trees and residuals). */
typedef struct gcut__graph_state {
    const char *owner; /**< name of the solver that made it */
    void *data;
    void (*free_fn)(void *data);
} gcut__graph_state;

struct gcut_graph {
    int64_t num_nodes;
    int64_t num_edges;
    int64_t edge_room;  /**< allocated edge slots */
    bool ids32;         /**< endpoints stored as uint32 (num_nodes <= UINT32_MAX) */
    uint32_t *edge_u32; /**< endpoints when ids32 */
    uint32_t *edge_v32;
    int64_t *edge_u64; /**< endpoints otherwise */
    int64_t *edge_v64;
    int32_t *edge_cap;   /**< capacity u->v */
    int32_t *edge_rev;   /**< capacity v->u */
    int64_t *tw_source;  /**< source->node capacity (sums of add_tweights) */
    int64_t *tw_sink;    /**< node->sink capacity */
    int64_t flow_offset; /**< flow through direct source->sink arcs (DIMACS), added to every
                              solver's flow and every cut */
    gcut__graph_state state;
    bool structure_changed; /**< edges added since the state was made: state is stale */
    bool solved;            /**< solved since its last edge was added: auto re-solves with bk */
    gcut__change *changes;  /**< capacity changes since the last solve */
    int64_t num_changes;
    int64_t change_room;
};

static inline int64_t gcut__edge_u(const gcut_graph *g, int64_t e) {
    return g->ids32 ? (int64_t)g->edge_u32[e] : g->edge_u64[e];
}
static inline int64_t gcut__edge_v(const gcut_graph *g, int64_t e) {
    return g->ids32 ? (int64_t)g->edge_v32[e] : g->edge_v64[e];
}

/** Drop the graph's solver state (and its change log). */
void gcut__graph_drop_state(gcut_graph *g);
/** Forget the recorded changes (a solver calls this once it has applied them). */
void gcut__graph_clear_changes(gcut_graph *g);
/** Add flow through a direct source->sink arc (DIMACS readers). */
void gcut__graph_add_flow_offset(gcut_graph *g, int64_t amount);

/* ---- grid graph (src/core/grid.c) ---- */

#define GCUT__MAX_DIRS 26

struct gcut_grid {
    int ndim;
    int64_t shape[3];             /**< as given: {h, w} or {d, h, w} */
    int64_t depth, height, width; /**< depth = 1 in 2D */
    int connectivity;
    int num_dirs;
    int64_t num_nodes;
    int offset[GCUT__MAX_DIRS][3]; /**< (dz, dy, dx) per direction */
    int64_t step[GCUT__MAX_DIRS];  /**< index offset per direction */
    int32_t *terminal[2];          /**< [GCUT_SOURCE], [GCUT_SINK] */
    int32_t *cap[GCUT__MAX_DIRS];
    bool context_owned; /**< a context's grid: gcut_grid_free() leaves it to the context */
    bool borrowed;      /**< gcut_grid_wrap(): the arrays are the caller's, never freed here */
};

/** @return true if node i has a neighbour in direction dir inside the grid. */
bool gcut__grid_has_neighbor(const gcut_grid *grid, int64_t i, int dir);

/* ---- grid contexts (src/core/grid.c; solver parts in src/cpu, src/cuda) ---- */

/** What a context solve tells the context about itself. */
typedef struct gcut__ctx_report {
    int warm;              /**< 1 if the solve started from the previous state */
    int cold_fallback;     /**< 1 if a warm solve had to start cold */
    int64_t changed_nodes; /**< nodes whose capacities changed (warm solves) */
    int64_t device_bytes;  /**< device memory held */
    int incremental;       /**< cuda-grid: 1 finished by the incremental warm start, 2 tried and
                                went on with full relabels, 0 not tried */
    const uint8_t *labels_view; /**< the solver's own copy of the labels (want_view), or NULL */
    int sparse;    /**< cuda-grid: 1 the stop proven by the sparse phase's certificate, 2 the phase
                        ran and a global relabel proved the stop, 0 it did not run */
    int certified; /**< cuda-grid: 1 the stop proven by the certificate after the warm pull
                        (GCUT_CUDAGRID_WARM_PULL), with no global relabel */
} gcut__ctx_report;

/** The changes a context solve is told about: nodes[0..count-1] (marked), or nodes NULL to
 *  compare every node with the last solve's capacities. warm 0 = solve cold. */
typedef struct gcut__ctx_changes {
    const int64_t *nodes;
    int64_t count;
    int warm;
    int terminals_only; /* every listed node was marked by gcut_grid_context_mark_terminals():
                           its direction capacities did not change (solvers may read them
                           anyway) */
    int want_view;      /* labels wanted in the solver's own memory (report->labels_view), if it
                           keeps them; solvers that do not leave labels_view NULL */
} gcut__ctx_changes;

/* cpu-pr's context: its state kept between solves, with a snapshot of the capacities. */
gcut_status gcut__cpupr_ctx_create(const gcut_grid *grid, const gcut_options *options,
                                   void **state);
gcut_status gcut__cpupr_ctx_solve(void *state, const gcut_grid *grid,
                                  const gcut__ctx_changes *changes, int64_t *flow, uint8_t *labels,
                                  gcut_stats *stats, gcut__ctx_report *report);
void gcut__cpupr_ctx_free(void *state);

/* grid-bk's context (src/cpu/grid_bk.c): residuals, trees and a snapshot of the capacities
 * kept between solves for Kohli-Torr warm re-solves. */
gcut_status gcut__gridbk_ctx_create(const gcut_grid *grid, const gcut_options *options,
                                    void **state);
gcut_status gcut__gridbk_ctx_solve(void *state, const gcut_grid *grid,
                                   const gcut__ctx_changes *changes, int64_t *flow, uint8_t *labels,
                                   gcut_stats *stats, gcut__ctx_report *report);
void gcut__gridbk_ctx_free(void *state);

/* ---- solver table (src/core/registry.c) ---- */

typedef gcut_status (*gcut__graph_solve_fn)(gcut_graph *graph, const gcut_options *options,
                                            int64_t *flow, uint8_t *labels, gcut_stats *stats);
typedef gcut_status (*gcut__grid_solve_fn)(const gcut_grid *grid, const gcut_options *options,
                                           int64_t *flow, uint8_t *labels, gcut_stats *stats);

typedef struct gcut__solver {
    const char *name;
    const char *description;
    unsigned flags;
    int (*available)(void);           /**< NULL: always */
    gcut__graph_solve_fn solve_graph; /**< NULL unless GCUT_TAKES_GRAPH */
    gcut__grid_solve_fn solve_grid;   /**< NULL unless GCUT_TAKES_GRID */
} gcut__solver;

/** Resolve options->solver ("auto"/NULL included) for a graph or grid problem of num_nodes.
 *  @return the entry, or NULL with GCUT_ERR_NOT_FOUND / GCUT_ERR_UNSUPPORTED set in *status. */
const gcut__solver *gcut__solver_pick(const gcut_options *options, bool grid, int64_t num_nodes,
                                      gcut_status *status);
/** The same for general graph g: under "auto", also by the graph's shape (registry.c:
 *  cuda-general for graphs that are not lattices from a smaller size than for lattices). */
const gcut__solver *gcut__graph_solver_pick(const gcut_options *options, const gcut_graph *g,
                                            gcut_status *status);
/** Share of g's edges (a sample of at most 65536) whose endpoint ids differ by one of the 16
 *  most common differences: 1.0 for a grid numbered row by row, near 0 for a random graph. */
double gcut__graph_lattice_share(const gcut_graph *g);
/** cuda-general's layout rule under GCUT_CUDAGENERAL_LAYOUT=auto (registry.c, from the measured
 *  table in docs/CUDA-GENERAL.md): 1 for the padded (slot-major) layout, 0 for the CSR, given
 *  the nodes, the arcs (self-loops dropped), the maximum degree and the padded layout's slots.
 *  Needs no GPU. */
int gcut__cudageneral_layout_rule(int64_t nodes, int64_t arcs, int64_t max_degree, int64_t slots);
/** The layout of the calling thread's last cuda-general build (0: CSR; K > 0: padded to degree
 *  K), for tests; cuda_general.cu notes it. -1 before any. */
int gcut__cudageneral_last_layout(void);
void gcut__cudageneral_note_layout(int layout);

/* Solver entry points, each in its own folder. Solvers fill stats fields they track; the
 * dispatcher (gcut_graph_solve / gcut_grid_solve) fills solver name and flow. */
gcut_status gcut__bk_solve_graph(gcut_graph *graph, const gcut_options *options, int64_t *flow,
                                 uint8_t *labels, gcut_stats *stats);
gcut_status gcut__bk_solve_grid(const gcut_grid *grid, const gcut_options *options, int64_t *flow,
                                uint8_t *labels, gcut_stats *stats);
/** grid-bk (src/cpu/grid_bk.c): bk on the implicit grid topology. */
gcut_status gcut__gridbk_solve_grid(const gcut_grid *grid, const gcut_options *options,
                                    int64_t *flow, uint8_t *labels, gcut_stats *stats);
/** grid-bk on grid in place: capacities become a maximum flow's residuals, *flow its value
 *  (every capacity must be at most INT32_MAX / 2). For parallel-bk's pre-pass. */
gcut_status gcut__gridbk_solve_in_place(gcut_grid *grid, int64_t *flow, int64_t *augmentations);
/** gcut_grid_create without zeroing the arrays, for a caller that writes every entry of every
 *  array (the segmentation's fill, the pre-pass's residual grid): a zeroed 1080p 8-connected
 *  grid is 83 MB cleared by one thread (calloc from a heap that was used before clears it). */
gcut_status gcut__grid_create_unset(int ndim, const int64_t *shape, int connectivity,
                                    gcut_grid **out);
/** cpu-pr on grid in place, one thread: a preflow's residuals, excesses as source capacities,
 *  *flow the flow into the sink. The preflow is maximum unless stop (may be NULL) was set
 *  by another thread while it ran (checked between sweeps): any preflow's residual grid has
 *  the same minimum cuts. For parallel-bk's pre-pass. */
gcut_status gcut__cpupr_solve_in_place(gcut_grid *grid, const int *stop, int64_t *flow);
/** parallel-bk's pre-pass (src/cpu/par_prepass.c): a 2D grid cut into tiles, ky x kx of them
 *  (shifted: ky + 1 by kx + 1, their boundaries half a tile off a ky x kx tiling's), each solved
 *  alone on `threads` threads by cpu-pr (pr) or grid-bk; *out is the residual grid: `into`
 *  (which may be grid itself), or a new grid the caller frees when into is NULL; NULL when not
 *  run (a 3D grid). *flow is the flow found. */
gcut_status gcut__pbk_prepass(const gcut_grid *grid, gcut_grid *into, int64_t ky, int64_t kx,
                              bool shifted, bool pr, int threads, gcut_grid **out, int64_t *flow,
                              int64_t *augmentations);
/** gcut_grid_solve with parallel-bk and the pre-pass rounds `prepass` ("K1,K2,...", K a K x K
 *  tiling shifted half a tile, "pbk" parallel-bk's own tiles; GCUT_PBK_PREPASS overrides it):
 *  the segmentation CPU route's solve (src/seg/segment.c). stats must not be NULL. With
 *  `overwrite`, the caller gives grid up (it frees it after, unread): the pre-pass then writes
 *  its residuals into grid instead of a new grid (GCUT_PBK_PREPASS_IN_PLACE=0: a new grid). */
gcut_status gcut__pbk_solve_grid_prepass(gcut_grid *grid, bool overwrite,
                                         const gcut_options *options, const char *prepass,
                                         int64_t *flow, uint8_t *labels, gcut_stats *stats);
/** The tile counts (z, y, x) that parallel-bk cuts grid into for `blocks` blocks
 *  (src/cpu/par_grid_impl.h). */
void gcut__pbk_grid_tiles(const gcut_grid *grid, int64_t blocks, int64_t count[3]);
/** ibfs (src/cpu/eibfs.c): incremental breadth-first search on general graphs. */
gcut_status gcut__ibfs_solve_graph(gcut_graph *graph, const gcut_options *options, int64_t *flow,
                                   uint8_t *labels, gcut_stats *stats);
/** grid-ibfs (src/cpu/grid_bk.c): ibfs on grid-bk's implicit grid layout. */
gcut_status gcut__gridibfs_solve_grid(const gcut_grid *grid, const gcut_options *options,
                                      int64_t *flow, uint8_t *labels, gcut_stats *stats);
gcut_status gcut__pbk_solve_graph(gcut_graph *graph, const gcut_options *options, int64_t *flow,
                                  uint8_t *labels, gcut_stats *stats);
gcut_status gcut__pbk_solve_grid(const gcut_grid *grid, const gcut_options *options, int64_t *flow,
                                 uint8_t *labels, gcut_stats *stats);
gcut_status gcut__cpupr_solve_grid(const gcut_grid *grid, const gcut_options *options,
                                   int64_t *flow, uint8_t *labels, gcut_stats *stats);
#ifdef GCUT_HAVE_CUDA
gcut_status gcut__cudagrid_solve_grid(const gcut_grid *grid, const gcut_options *options,
                                      int64_t *flow, uint8_t *labels, gcut_stats *stats);
/** @return 1 if a CUDA device can be used now (cached after the first call). */
int gcut__cuda_available(void);
/* gcut_device_init() of a CUDA build (src/cuda/cuda_grid.cu). */
gcut_status gcut__cuda_device_init(int device);
/* gcut_device_release_cache() of a CUDA build. */
void gcut__cuda_release_cache(void);
/* The narrow band's device pipeline kept for the last image shape (src/cuda/band_gpu.cu), freed
 * by gcut_device_release_cache() before cuda-grid's sessions (it holds cuda-grid contexts). */
void gcut__band_device_release(void);
struct gcut__seg_tables;
/** cuda-grid on a segmentation energy built on the GPU (src/seg/seg_internal.h): uploads the
 *  8-bit working image (tables->channels interleaved channels, C order, shape {h, w} or
 *  {d, h, w}), the seeds (GCUT_SEED_* per pixel; NULL = none) and the tables, computes every
 *  capacity on the device exactly as gcut__seg_fill_grid() does and solves there: the graph
 *  never exists on the host. stats->build_ms covers uploads and construction; *construct_ms
 *  (may be NULL) the construction kernel alone. capture (may be NULL; a grid of the same shape
 *  and connectivity) receives the device-built capacities, so tests can compare them. */
gcut_status gcut__cudagrid_solve_image(const uint8_t *pixels, const uint8_t *seeds,
                                       const struct gcut__seg_tables *tables, int ndim,
                                       const int64_t *shape, int connectivity,
                                       const gcut_options *options, int64_t *flow, uint8_t *labels,
                                       gcut_stats *stats, double *construct_ms, gcut_grid *capture);
/* cuda-grid's context: device buffers, pinned grid arrays (the create swaps grid's arrays for
 * pinned ones, and the free releases them), stream; warm repair on the device. */
gcut_status gcut__cudagrid_ctx_create(gcut_grid *grid, const gcut_options *options, void **state);
gcut_status gcut__cudagrid_ctx_solve(void *state, const gcut_grid *grid,
                                     const gcut__ctx_changes *changes, int64_t *flow,
                                     uint8_t *labels, gcut_stats *stats, gcut__ctx_report *report);
/** The device-array entry: caps already on the GPU (source, sink, dirs[d]), labels to the
 *  device, ordered after / before the caller's stream. */
gcut_status gcut__cudagrid_ctx_solve_device(void *state, const int32_t *source, const int32_t *sink,
                                            const int32_t *const *dirs, uint8_t *labels,
                                            void *stream, int warm, int64_t *flow,
                                            gcut_stats *stats, gcut__ctx_report *report);
void gcut__cudagrid_ctx_free(void *state, gcut_grid *grid);
/** A cuda-grid context for masked solves only (the narrow band's device pipeline): the solver's
 *  device arrays for a grid of dims {depth, height, width} (depth 1 for connectivity 4 or 8),
 *  no pinned host copy and no device copy of the capacities. Freed by gcut__cudagrid_ctx_free
 *  (grid NULL). */
gcut_status gcut__cudagrid_masked_create(const int64_t dims[3], int connectivity,
                                         const gcut_options *options, void **state);
/** Direction d's (dz, dy, dx) in cuda-grid's (and gcut_grid_create's) order. */
void gcut__cudagrid_direction(int connectivity, int d, int offset[3]);
/** A masked solve: the capacities are device arrays (source, sink, dirs[d]; read only for the
 *  nodes with mask[i] & bit, every node when mask is NULL); every other node is isolated, and
 *  an arc to it or out of the grid has no capacity whatever the array holds. live_tiles != 0:
 *  only the tiles holding a marked node are visited (exact: docs/BAND.md, "Live tiles");
 *  *live_count (may be NULL) gets their number (all tiles without). labels (device, one byte
 *  per node) are written for the visited tiles' nodes: GCUT_SINK iff the node reaches the sink
 *  in the final residual graph. Ordered after / before the caller's stream. A negative
 *  capacity read fails with GCUT_ERR_INVALID_ARG naming it. */
gcut_status gcut__cudagrid_ctx_solve_masked(void *state, const int32_t *source, const int32_t *sink,
                                            const int32_t *const *dirs, const uint8_t *mask,
                                            uint8_t bit, int live_tiles, uint8_t *labels,
                                            void *stream, int64_t *flow, gcut_stats *stats,
                                            gcut__ctx_report *report, int64_t *live_count);
#endif

/** The online cores (sysconf), in [1, 256]: what options.threads = 0 means. */
int gcut__online_cores(void);
/* The most threads gcut__run_jobs starts (jobs past it run on the calling thread). */
#define GCUT__MAX_JOBS 64
/** Run fn on each of the `jobs` records of `size` bytes at `job`, on threads, the calling
 *  thread taking the first; a job whose thread cannot start runs on the caller after its own.
 *  Returns once every job has run. */
void gcut__run_jobs(void *(*fn)(void *), void *job, size_t size, int jobs);

#ifdef __cplusplus
}
#endif

#endif /* GCUT_INTERNAL_H */
