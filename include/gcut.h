/* gcut.h - the one public header of gcut: exact s-t min-cut / max-flow on general graphs
 * and N-d grids, with CPU and GPU solvers, segmentation energies and image I/O.
 * C11; every call that can fail returns a gcut_status (0 = OK, negative = error). */
#ifndef GCUT_H
#define GCUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Version
 * ---------------------------------------------------------------------------------------- */

/* The one place the version is written: CMakeLists.txt reads these three lines for the
 * project version, the shared library's SONAME, gcut.pc and the CMake package. */
#define GCUT_VERSION_MAJOR 0
#define GCUT_VERSION_MINOR 1
#define GCUT_VERSION_PATCH 0
#define GCUT_VERSION_NUMBER                                                                        \
    (GCUT_VERSION_MAJOR * 10000 + GCUT_VERSION_MINOR * 100 + GCUT_VERSION_PATCH)
#define GCUT__STRINGIFY(x) #x
#define GCUT__VERSION_TEXT(a, b, c) GCUT__STRINGIFY(a) "." GCUT__STRINGIFY(b) "." GCUT__STRINGIFY(c)
/** "MAJOR.MINOR.PATCH", made from the three numbers above. */
#define GCUT_VERSION_STRING                                                                        \
    GCUT__VERSION_TEXT(GCUT_VERSION_MAJOR, GCUT_VERSION_MINOR, GCUT_VERSION_PATCH)

/** @return the library's version as MAJOR*10000 + MINOR*100 + PATCH (may differ from the
 *  header's GCUT_VERSION_NUMBER when linked against another build). */
unsigned gcut_version(void);
/** @return the library's version as "MAJOR.MINOR.PATCH"; static storage, never NULL. */
const char *gcut_version_string(void);

/* ------------------------------------------------------------------------------------------
 * Status codes
 * ---------------------------------------------------------------------------------------- */

/* X(NAME, value, message): the one table from which the enum, gcut_status_name() and
 * gcut_strerror() are made. */
#define GCUT_STATUS_MAP(X)                                                                         \
    X(OK, 0, "success")                                                                            \
    X(ERR_INVALID_ARG, -1, "invalid argument")                                                     \
    X(ERR_NOMEM, -2, "out of memory")                                                              \
    X(ERR_PARSE, -3, "malformed input")                                                            \
    X(ERR_IO, -4, "input/output error")                                                            \
    X(ERR_UNSUPPORTED, -5, "not supported by this solver or build")                                \
    X(ERR_OVERFLOW, -6, "value out of the supported range")                                        \
    X(ERR_NO_DEVICE, -7, "no usable GPU device")                                                   \
    X(ERR_DEVICE, -8, "GPU device error")                                                          \
    X(ERR_STATE, -9, "call not valid in the object's current state")                               \
    X(ERR_VERIFY, -10, "cut certificate failed: cut capacity differs from flow value")             \
    X(ERR_NOT_FOUND, -11, "no such solver or item")                                                \
    X(ERR_INTERNAL, -12, "internal error")

typedef enum {
#define GCUT__STATUS_ENUM(name, value, msg) GCUT_##name = value,
    GCUT_STATUS_MAP(GCUT__STATUS_ENUM)
#undef GCUT__STATUS_ENUM
} gcut_status;

/** @return the constant's name without prefix ("ERR_NOMEM"), or "UNKNOWN". Static storage. */
const char *gcut_status_name(gcut_status status);
/** @return a one-line English description of the status. Static storage. */
const char *gcut_strerror(gcut_status status);
/** @return the detailed message of the last failing call on this thread (names the argument,
 *  file line or CUDA error at fault), or "" if none. Valid until the next failing call on this
 *  thread. */
const char *gcut_last_error(void);

/* ------------------------------------------------------------------------------------------
 * Memory
 * ---------------------------------------------------------------------------------------- */

/** A caller-supplied allocator. alloc returns NULL on failure; free accepts NULL. */
typedef struct gcut_allocator {
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
} gcut_allocator;

/** Install an allocator for every later host allocation made by gcut (process-wide; not
 *  thread-safe against concurrent gcut calls). NULL restores malloc/free. Objects must be
 *  freed with the allocator that made them. */
void gcut_set_allocator(const gcut_allocator *allocator);

/** Cap the host memory gcut may hold at once, in bytes (process-wide). An allocation that
 *  would pass the cap fails with GCUT_ERR_NOMEM and a message naming the request, instead of
 *  driving the machine into swap. 0 means the default: the machine's physical memory (or the
 *  GCUT_MEMORY_LIMIT environment variable, in bytes, with optional K/M/G suffix). */
void gcut_set_memory_limit(uint64_t bytes);
/** @return the cap in force, in bytes. */
uint64_t gcut_memory_limit(void);
/** @return the bytes gcut holds now through its allocator (host only). */
uint64_t gcut_memory_in_use(void);

/* ------------------------------------------------------------------------------------------
 * Solvers and options
 * ---------------------------------------------------------------------------------------- */

/** Labels written per node: which side of the minimum cut it is on. */
enum { GCUT_SOURCE = 0, GCUT_SINK = 1 };

/** Solve options. Always start from gcut_options_init(). */
typedef struct gcut_options {
    const char *solver; /**< registered solver name, or "auto" / NULL: GPU when present and
                             the problem is large, else "ibfs" for graphs, "grid-ibfs" for a
                             one-off gcut_grid_solve of any grid and "grid-bk" for grid
                             contexts (a grid of 65536 nodes or more with threads > 1:
                             "parallel-bk") */
    int threads;        /**< CPU threads for parallel solvers; 0 = all cores */
    int device;         /**< CUDA device ordinal for GPU solvers */
    int warm;           /**< 1: reuse the previous solve's state after capacity changes
                             (solvers that support it; others solve from scratch) */
    int verbose;        /**< 0 quiet; 1 progress lines on stderr */
} gcut_options;

/** Fill *options with defaults: solver "auto", threads 0, device 0, warm 1, verbose 0. */
void gcut_options_init(gcut_options *options);

/** What a solve did, for reports and benchmarks. Fields a solver does not track are 0. */
typedef struct gcut_stats {
    char solver[32];         /**< name of the solver that ran (resolves "auto") */
    int64_t flow;            /**< the exact maximum flow value */
    double build_ms;         /**< solver-side setup: conversion, upload, internal layout */
    double solve_ms;         /**< the max-flow computation itself */
    int64_t augmentations;   /**< augmenting paths (bk) */
    int64_t sweeps;          /**< push-relabel passes over the active part (grid PR) */
    int64_t global_relabels; /**< BFS global relabels (push-relabel solvers) */
    int64_t pushes;          /**< pushes, where counted */
    double bytes_per_sweep;  /**< GPU: device bytes moved per sweep, where measured */
    int64_t device_bytes;    /**< GPU: device memory held by the solve */
} gcut_stats;

/** Capabilities of a registered solver. */
enum {
    GCUT_TAKES_GRAPH = 1, /**< solves general graphs (gcut_graph) */
    GCUT_TAKES_GRID = 2,  /**< solves grids (gcut_grid) natively */
    GCUT_NEEDS_GPU = 4,   /**< needs a CUDA device at run time */
    GCUT_WARM = 8         /**< reuses state across solves after capacity changes */
};

typedef struct gcut_solver_info {
    const char *name;        /**< "bk", "cpu-pr", "cuda-grid", ... */
    const char *description; /**< one line */
    unsigned flags;          /**< GCUT_TAKES_* | GCUT_NEEDS_GPU | GCUT_WARM */
    int available;           /**< 1 if it can run now (built in, and a GPU present if needed) */
} gcut_solver_info;

/** @return the number of solvers compiled into this build. */
int gcut_solver_count(void);
/** Describe solver number index (0 <= index < gcut_solver_count()).
 *  @return GCUT_OK, or GCUT_ERR_INVALID_ARG for a bad index. Strings are static. */
gcut_status gcut_solver_get(int index, gcut_solver_info *info);
/** Look a solver up by name ("auto" is not a solver). @return GCUT_ERR_NOT_FOUND if absent. */
gcut_status gcut_solver_find(const char *name, gcut_solver_info *info);

/* ------------------------------------------------------------------------------------------
 * General graphs
 *
 * Nodes are 0..num_nodes-1 (int64). Each edge is a pair of arcs u->v (capacity cap) and
 * v->u (capacity rev_cap), numbered 0,1,2,... in the order added. Capacities are int32 and
 * non-negative; flow values are int64 and exact however large the sums. Terminal capacities
 * accumulate as in Boykov-Kolmogorov's add_tweights.
 * ---------------------------------------------------------------------------------------- */

typedef struct gcut_graph gcut_graph;

/** Create a graph of num_nodes nodes (>= 0). edge_hint (>= 0) reserves room for that many
 *  edges. @return GCUT_ERR_NOMEM (with the size asked for in gcut_last_error()) when the memory
 *  cap would be passed. *out is NULL on failure. */
gcut_status gcut_graph_create(int64_t num_nodes, int64_t edge_hint, gcut_graph **out);
/** Free the graph and any solver state it holds. NULL is accepted. */
void gcut_graph_free(gcut_graph *graph);

/** @return the number of nodes / edges (edge pairs) of the graph. */
int64_t gcut_graph_num_nodes(const gcut_graph *graph);
int64_t gcut_graph_num_edges(const gcut_graph *graph);

/** Add the edge pair u->v (cap) and v->u (rev_cap). Self-loops are accepted and ignored by
 *  the solvers; parallel edges add up. @return GCUT_ERR_INVALID_ARG for an id out of range or
 *  a negative capacity. */
gcut_status gcut_graph_add_edge(gcut_graph *graph, int64_t u, int64_t v, int32_t cap,
                                int32_t rev_cap);
/** Add cap_source to the source->node capacity and cap_sink to node->sink (cumulative).
 *  Both must be >= 0. */
gcut_status gcut_graph_add_tweights(gcut_graph *graph, int64_t node, int32_t cap_source,
                                    int32_t cap_sink);

/** Set edge number edge (from add order) to new capacities. After a solve, the next solve
 *  with options.warm reuses the previous state where the solver can (bk: search trees and
 *  flow, Kohli-Torr marked nodes); the result is the same as a fresh solve. */
gcut_status gcut_graph_set_edge(gcut_graph *graph, int64_t edge, int32_t cap, int32_t rev_cap);
/** Set the terminal capacities of node (absolute, not cumulative). cap_source, cap_sink are
 *  int64 >= 0 since add_tweights may have summed past int32. */
gcut_status gcut_graph_set_tweights(gcut_graph *graph, int64_t node, int64_t cap_source,
                                    int64_t cap_sink);
/** Read edge or terminal capacities back (the problem as given, not residuals). */
gcut_status gcut_graph_get_edge(const gcut_graph *graph, int64_t edge, int64_t *u, int64_t *v,
                                int32_t *cap, int32_t *rev_cap);
gcut_status gcut_graph_get_tweights(const gcut_graph *graph, int64_t node, int64_t *cap_source,
                                    int64_t *cap_sink);

/** Solve max-flow / min-cut. flow (may be NULL) gets the exact maximum flow value; labels
 *  (may be NULL; else num_nodes bytes, caller-owned) get GCUT_SOURCE or GCUT_SINK per node,
 *  a minimum cut; stats may be NULL. options NULL means defaults. */
gcut_status gcut_graph_solve(gcut_graph *graph, const gcut_options *options, int64_t *flow,
                             uint8_t *labels, gcut_stats *stats);

/** Cut certificate: compute the capacity of the cut that labels defines (source side =
 *  GCUT_SOURCE) on the graph's current capacities into *cut_value (may be NULL), and compare
 *  it with flow. @return GCUT_OK if equal, GCUT_ERR_VERIFY if not (message gives both). */
gcut_status gcut_graph_verify(const gcut_graph *graph, const uint8_t *labels, int64_t flow,
                              int64_t *cut_value);

/* ------------------------------------------------------------------------------------------
 * Grid graphs
 *
 * An N-d grid (2D or 3D) in C order: shape {height, width} or {depth, height, width}; node
 * index = (z*height + y)*width + x. Terminal capacities are two int32 arrays (source, sink);
 * each neighbour direction d has one int32 array cap[d][i] = capacity of the arc from node i to
 * node i + offset(d); entries whose neighbour falls outside the grid are ignored. Directions
 * come in opposite pairs: d ^ 1 is the reverse of d. Order (offsets as (dz,) dy, dx):
 *   2D, 4: (0,+1) (0,-1) (+1,0) (-1,0)
 *   2D, 8: the four above, then (+1,+1) (-1,-1) (+1,-1) (-1,+1)
 *   3D, 6: (0,0,+1) (0,0,-1) (0,+1,0) (0,-1,0) (+1,0,0) (-1,0,0)
 *   3D,26: the six above, then the 20 others in pairs, listed by gcut_grid_offset().
 * The grid owns its arrays; fill them through gcut_grid_*_data() (zero-copy) or copy in with
 * gcut_grid_set_*(). Solvers never modify them (they work on their own residual copies).
 * ---------------------------------------------------------------------------------------- */

typedef struct gcut_grid gcut_grid;

/** Create a zero-capacity grid. ndim is 2 or 3; shape[i] >= 1; connectivity 4 or 8 (2D),
 *  6 or 26 (3D). @return GCUT_ERR_NOMEM naming the bytes needed when over the memory cap. */
gcut_status gcut_grid_create(int ndim, const int64_t *shape, int connectivity, gcut_grid **out);
void gcut_grid_free(gcut_grid *grid);

int gcut_grid_ndim(const gcut_grid *grid);
/** Copy the shape into shape[0..ndim-1]. */
void gcut_grid_shape(const gcut_grid *grid, int64_t *shape);
int gcut_grid_connectivity(const gcut_grid *grid);
/** @return the number of directions (= connectivity). */
int gcut_grid_num_dirs(const gcut_grid *grid);
int64_t gcut_grid_num_nodes(const gcut_grid *grid);
/** Write direction dir's offset as ndim values (dz, dy, dx order, leading z only in 3D). */
gcut_status gcut_grid_offset(const gcut_grid *grid, int dir, int *offset);

/** Grid-owned arrays of num_nodes int32 values, writable in place. which_terminal: GCUT_SOURCE
 *  or GCUT_SINK. NULL on a bad argument. */
int32_t *gcut_grid_terminal_data(gcut_grid *grid, int which_terminal);
int32_t *gcut_grid_dir_data(gcut_grid *grid, int dir);
const int32_t *gcut_grid_terminal_cdata(const gcut_grid *grid, int which_terminal);
const int32_t *gcut_grid_dir_cdata(const gcut_grid *grid, int dir);

/** Copy num_nodes values in. Negative capacities give GCUT_ERR_INVALID_ARG naming the index. */
gcut_status gcut_grid_set_terminals(gcut_grid *grid, const int32_t *source, const int32_t *sink);
gcut_status gcut_grid_set_dir(gcut_grid *grid, int dir, const int32_t *cap);

/** A grid over arrays the caller owns, without copying them: source, sink and dirs[0..
 *  connectivity-1] each point to num_nodes int32 values laid out as gcut_grid_create()'s
 *  (dirs in the direction order above). Arguments are checked as in gcut_grid_create(); the
 *  capacities are not (gcut_grid_solve() validates them). The arrays must outlive the grid;
 *  gcut_grid_free() frees only the grid object. Solvers only read them; writes through
 *  gcut_grid_*_data() go to the caller's memory. For bindings (the Python package) that hold
 *  the capacities already. */
gcut_status gcut_grid_wrap(int ndim, const int64_t *shape, int connectivity, const int32_t *source,
                           const int32_t *sink, const int32_t *const *dirs, gcut_grid **out);

/** Check every capacity is >= 0. @return GCUT_ERR_INVALID_ARG naming the first bad entry. */
gcut_status gcut_grid_validate(const gcut_grid *grid);

/** Build the equivalent general graph (node ids = grid indices; one edge per neighbour pair,
 *  taking cap[d][i] and cap[d^1][j]). This is the explicit conversion bk and the general
 *  solvers use. */
gcut_status gcut_grid_to_graph(const gcut_grid *grid, gcut_graph **out);

/** Solve a grid with any solver: grid solvers run natively, graph solvers through
 *  gcut_grid_to_graph() (its time is reported in stats->build_ms). Outputs as in
 *  gcut_graph_solve(); labels has num_nodes bytes. */
gcut_status gcut_grid_solve(gcut_grid *grid, const gcut_options *options, int64_t *flow,
                            uint8_t *labels, gcut_stats *stats);

/** Cut certificate for a grid, as gcut_graph_verify(). */
gcut_status gcut_grid_verify(const gcut_grid *grid, const uint8_t *labels, int64_t flow,
                             int64_t *cut_value);

/* ------------------------------------------------------------------------------------------
 * Grid solver contexts: one shape, many solves, warm re-solves (docs/CUDA-GRID.md, "Contexts")
 *
 * A context is made once for a grid shape, connectivity and solver and holds everything a
 * solve needs between calls: cuda-grid keeps its device buffers, pinned host arrays, stream
 * and CUDA start-up; cpu-pr its residual state; bk its graph and search trees. Fill the
 * context's own grid (gcut_grid_context_grid(): gcut_grid_set_*, or write through
 * gcut_grid_*_data()), then solve; change capacities and solve again. With options.warm (the
 * default) the next solve starts from the previous flow: every arc whose capacity fell below
 * its flow gives the difference back (Kohli & Torr 2005's reparametrisation; a node left with
 * a deficit gets it added to both of its terminal arcs, which shifts every cut equally), the
 * heights are recomputed by a global relabel (cuda-grid after terminal marks: lowered from the
 * listed nodes only) and the solve continues. The result is exact:
 * the same maximum flow as a cold solve and a minimum cut that passes gcut_grid_verify().
 * A context is not thread-safe; use one per thread.
 * ---------------------------------------------------------------------------------------- */

typedef struct gcut_grid_context gcut_grid_context;

/** Make a context for grids of this ndim, shape and connectivity (as gcut_grid_create()) and
 *  the solver named in options (NULL = defaults; "auto" resolves now: cuda-grid when a device
 *  is present and the grid is large, else bk). options is copied; its warm field chooses warm
 *  re-solves (1) or a cold solve every time (0). Grid solvers keep their state natively;
 *  graph solvers (bk) keep a gcut_graph and its warm state. cuda-grid takes its device, stream
 *  and device buffers here, so the CUDA start-up is paid once per context.
 *  @return GCUT_ERR_INVALID_ARG / GCUT_ERR_NOT_FOUND / GCUT_ERR_NO_DEVICE / GCUT_ERR_NOMEM as
 *  the grid or solver lookups would; *out is NULL on failure. */
gcut_status gcut_grid_context_create(int ndim, const int64_t *shape, int connectivity,
                                     const gcut_options *options, gcut_grid_context **out);
/** Free the context, its grid and every host and device buffer it holds. NULL is accepted. */
void gcut_grid_context_free(gcut_grid_context *ctx);

/** @return the context's grid (owned by the context: never gcut_grid_free() it). Its arrays
 *  are pinned host memory for cuda-grid, so uploads from them run at full bus speed. */
gcut_grid *gcut_grid_context_grid(gcut_grid_context *ctx);

/** Promise that since the last solve only the capacities of these nodes changed (their
 *  terminals and the arcs leaving them; an arc pair is repaired when either end is listed).
 *  Calls add up until the next solve. Without any call the next warm solve compares every
 *  capacity with the last solve's (always safe, O(nodes)); with calls only the listed nodes
 *  are read, so a capacity changed on an unlisted node is NOT seen (the solve is then exact
 *  for a problem that still has the old value there). Nodes out of range give
 *  GCUT_ERR_INVALID_ARG naming the entry. */
gcut_status gcut_grid_context_mark_nodes(gcut_grid_context *ctx, const int64_t *nodes,
                                         int64_t count);
/** The same promise for the terminal capacities alone: since the last solve only the source
 *  and sink capacities of these nodes changed, not the arcs leaving them (GrabCut's model
 *  updates, interactive seeds, a new data term over the same image). Calls add up with
 *  gcut_grid_context_mark_nodes() (a node listed both ways counts as changed whole). When
 *  every mark of a solve is of this kind, every solver reads and repairs only the listed
 *  terminals. An arc changed on a listed node is NOT seen. Nodes out of range give
 *  GCUT_ERR_INVALID_ARG naming the entry. */
gcut_status gcut_grid_context_mark_terminals(gcut_grid_context *ctx, const int64_t *nodes,
                                             int64_t count);
/** The same promise as a mask of num_nodes bytes (non-zero = changed). */
gcut_status gcut_grid_context_mark_mask(gcut_grid_context *ctx, const uint8_t *mask);

/** Solve the context's grid. Outputs as in gcut_grid_solve(): flow (may be NULL), labels
 *  (may be NULL; else num_nodes bytes), stats (may be NULL; build_ms = uploads and the warm
 *  repair, solve_ms = the max-flow itself with the label download). Capacities are checked
 *  (negative ones give GCUT_ERR_INVALID_ARG naming the entry) before the solve starts. After
 *  an error the context stays usable: the next solve is exact (cold where the error left the
 *  kept state unusable). */
gcut_status gcut_grid_context_solve(gcut_grid_context *ctx, int64_t *flow, uint8_t *labels,
                                    gcut_stats *stats);

/** Solve as gcut_grid_context_solve(), but leave the labels in memory the context owns: *labels
 *  gets num_nodes bytes (GCUT_SOURCE / GCUT_SINK), read-only, valid until the next solve or
 *  gcut_grid_context_free(). cuda-grid downloads them into pinned memory it owns, so no
 *  num_nodes-byte copy into a caller's buffer follows (0.1-0.4 ms per solve at 1920x1080 on the
 *  H100 host, docs/CUDA-GRID.md); other solvers fill a buffer the context allocates once.
 *  @return GCUT_ERR_INVALID_ARG for a NULL context or labels; else as
 *  gcut_grid_context_solve() (*labels NULL on failure). */
gcut_status gcut_grid_context_solve_view(gcut_grid_context *ctx, int64_t *flow,
                                         const uint8_t **labels, gcut_stats *stats);

/** cuda-grid contexts only: solve with capacities that are already on the GPU and write the
 *  labels there. source, sink: num_nodes int32 device arrays; dirs: a host array of
 *  num_dirs pointers to num_nodes int32 device arrays, in the grid's direction order; labels
 *  (may be NULL): num_nodes device bytes. stream is the caller's cudaStream_t (NULL = the
 *  legacy default stream): the solve starts after the work queued on it so far, and work
 *  queued on it after this call returns sees the labels. The host copy of the grid is not
 *  read or changed; a warm solve compares the new capacities with the last solve's on the
 *  device. Negative capacities give GCUT_ERR_INVALID_ARG (checked on the device).
 *  @return GCUT_ERR_UNSUPPORTED for other solvers or a build without CUDA. */
gcut_status gcut_grid_context_solve_device(gcut_grid_context *ctx, const int32_t *source,
                                           const int32_t *sink, const int32_t *const *dirs,
                                           uint8_t *labels, void *stream, int64_t *flow,
                                           gcut_stats *stats);

/** What a context has done so far, for tests and reports. */
typedef struct gcut_grid_context_info {
    char solver[32];         /**< the solver it runs ("auto" resolved) */
    int64_t solves;          /**< solves so far */
    int64_t warm_solves;     /**< of them, those that started from the previous state */
    int64_t cold_fallbacks;  /**< warm solves that had to start cold (a repaired terminal
                                  capacity would pass INT32_MAX) */
    int64_t changed_nodes;   /**< nodes whose capacities changed before the last solve (warm
                                  solves; the marked ones when marks were given) */
    int64_t device_bytes;    /**< device memory the context holds (cuda-grid) */
    int64_t incremental;     /**< warm solves that cuda-grid's incremental start finished
                                  (terminal marks: a relabel seeded from the listed nodes, the
                                  stop proven by a closure certificate; docs/CUDA-GRID.md) */
    int64_t sparse_stops;    /**< warm solves after terminal marks whose stop cuda-grid proved
                                  with the closure certificate after its sparse phase, without a
                                  second global relabel (docs/CUDA-GRID.md, "A sparse phase") */
    int64_t certified_stops; /**< warm solves after terminal marks whose stop cuda-grid proved
                                  with the closure certificate after its warm pull, with no
                                  global relabel (docs/CUDA-GRID.md, "A certified warm stop") */
} gcut_grid_context_info;

/** Fill *info. @return GCUT_ERR_INVALID_ARG for NULL arguments. */
gcut_status gcut_grid_context_get_info(const gcut_grid_context *ctx, gcut_grid_context_info *info);

/** Start the CUDA runtime on GPU device (0-based) now: driver start-up and the device's
 *  context, ~0.1 s once per process, which the first GPU solve would otherwise pay. Blocks
 *  until done; call it on a thread of your own to overlap the start-up with reading input
 *  and fitting models (`gcut segment` does). Safe to call from several threads and again
 *  (later calls return at once). @return GCUT_OK; GCUT_ERR_NO_DEVICE when the device does
 *  not exist or CUDA cannot start (message in gcut_last_error()); GCUT_ERR_UNSUPPORTED in a
 *  build without CUDA. */
gcut_status gcut_device_init(int device);

/** Free the device buffers that gcut keeps between GPU segmentation solves (gcut_segment(),
 *  gcut_grabcut() with cuda-grid): after a picture's first solve, the arrays of its size stay
 *  allocated for the next one (up to 16 sizes, or 16 solves at once from threads), as a
 *  caching allocator does. Call it when done segmenting to give the GPU memory back; the
 *  next solve allocates again. Idle buffers are not freed by themselves when a later solve of
 *  another size runs short of device memory (it fails with GCUT_ERR_NOMEM): release them
 *  before switching to much larger pictures on a small GPU. Safe with no CUDA and from any
 *  thread (buffers in use by a solve on another thread are not touched; they return to the
 *  cache when it ends). */
void gcut_device_release_cache(void);

/* ------------------------------------------------------------------------------------------
 * DIMACS max-flow format
 * ---------------------------------------------------------------------------------------- */

/** Read a DIMACS max-flow problem ("p max N M", "n ID s|t", "a U V CAP", "c ..."; 1-based)
 *  from path ("-" = stdin); the rules are in docs/FORMATS.md. The graph has the N-2 nodes
 *  other than the source and sink: arcs source->v and v->sink become terminal capacities of v,
 *  source->sink arcs a flow offset; arcs into the source or out of the sink carry no s-t flow
 *  and are dropped. *node_ids (may be NULL; else caller frees with gcut_free) receives N
 *  entries: per graph node its 1-based DIMACS id, then the source's id and the sink's id.
 *  On error: GCUT_ERR_PARSE / GCUT_ERR_IO / GCUT_ERR_NOMEM with "FILE:LINE: what is wrong" in
 *  gcut_last_error(). */
gcut_status gcut_dimacs_read(const char *path, gcut_graph **out, int64_t **node_ids);
/** Write graph as DIMACS to path ("-" = stdout); source gets id N+1, sink N+2. */
gcut_status gcut_dimacs_write(const gcut_graph *graph, const char *path);

/** Read / write a grid problem in the gcut grid format (docs/FORMATS.md). */
gcut_status gcut_grid_read(const char *path, gcut_grid **out);
gcut_status gcut_grid_write(const gcut_grid *grid, const char *path);

/** Free memory gcut returned to the caller (node id arrays, image pixels). NULL is accepted. */
void gcut_free(void *ptr);
/** Allocate bytes through gcut's allocator and under its memory cap (gcut_set_memory_limit),
 *  for callers that want their own buffers counted and capped with gcut's (the gcut command
 *  does). *out receives the block (free it with gcut_free), or NULL. @return GCUT_ERR_NOMEM
 *  with a message naming `what` (may be NULL) and the bytes when over the cap or refused. */
gcut_status gcut_alloc(size_t bytes, const char *what, void **out);

/* ------------------------------------------------------------------------------------------
 * Images and segmentation (src/io/image*, src/seg/)
 * ---------------------------------------------------------------------------------------- */

/** An image or volume: interleaved channels, C order (z, y, x, channel). Pixels are uint8_t
 *  (bit_depth 8) or uint16_t (bit_depth 16, native byte order). Images that gcut returns own
 *  their pixels: release them with gcut_image_free(). A caller-built gcut_image may point at
 *  caller memory (and is then never freed by gcut). */
typedef struct gcut_image {
    int64_t width;
    int64_t height;
    int64_t depth; /**< 1 for a 2D image */
    int channels;  /**< 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
    int bit_depth; /**< 8 or 16 */
    void *pixels;
} gcut_image;

/** Read PNG (8/16 bit, gray/gray+alpha/RGB/RGBA; palettes, tRNS and 1/2/4-bit gray expanded
 *  to 8 bit), JPEG (8-bit gray or RGB), or PGM/PPM (P2/P3/P5/P6; maxval up to 255 gives 8-bit,
 *  above that 16-bit samples, kept as stored, not rescaled), chosen by the file's magic bytes,
 *  not its name. *out (depth 1) owns its pixels: gcut_image_free(). On error *out is zeroed and
 *  the status is GCUT_ERR_IO (cannot open or read; a directory), GCUT_ERR_PARSE (empty,
 *  truncated or corrupt; the message names the file, and the line for PGM/PPM headers),
 *  GCUT_ERR_NOMEM (the pixels would pass the memory cap; checked before decoding) or
 *  GCUT_ERR_UNSUPPORTED (a format gcut does not read, CMYK JPEG, or PNG/JPEG in a build without
 *  libpng/libjpeg). */
gcut_status gcut_image_read(const char *path, gcut_image *out);
/** Write a 2D image (depth 1); the format follows the extension, case-insensitive: .png (8/16
 *  bit, 1-4 channels), .jpg/.jpeg (8-bit gray or RGB, quality 95, no chroma subsampling),
 *  .pgm (gray) / .ppm (RGB) / .pnm (either) as binary P5/P6, 16-bit big-endian as Netpbm says.
 *  Other combinations give GCUT_ERR_UNSUPPORTED; a failed write removes the partial file. */
gcut_status gcut_image_write(const char *path, const gcut_image *image);
/** Read a raw volume: depth*height*width*channels samples of bit_depth (8 or 16) bits, no
 *  header, C order (z, y, x, channel), 16-bit in the host's byte order. The file size must
 *  match exactly (else GCUT_ERR_PARSE giving both sizes). */
gcut_status gcut_volume_read_raw(const char *path, int64_t depth, int64_t height, int64_t width,
                                 int channels, int bit_depth, gcut_image *out);
/** Read a volume from a stack of count 2D images (paths in z order) of equal width, height,
 *  channels and bit depth; a slice that differs or fails to read is named in the message. */
gcut_status gcut_volume_read_slices(const char *const *paths, int64_t count, gcut_image *out);
/** Allocate zeroed pixels for an image of the given geometry (sides 1..2^24, channels 1-4,
 *  bit_depth 8 or 16) under the memory cap. */
gcut_status gcut_image_alloc(gcut_image *image, int64_t width, int64_t height, int64_t depth,
                             int channels, int bit_depth);
/** Free pixels made by gcut and zero the struct. NULL is accepted. */
void gcut_image_free(gcut_image *image);

/** Seed mask codes (one byte per pixel). GrabCut's 0-3 codes are accepted too by
 *  gcut_seeds_from_mask(). */
enum { GCUT_SEED_UNKNOWN = 0, GCUT_SEED_FOREGROUND = 1, GCUT_SEED_BACKGROUND = 2 };

/** How a seed mask's values are read. */
typedef enum {
    GCUT_SEEDS_GCUT = 0,    /**< 0 unknown, 1 foreground, 2 background */
    GCUT_SEEDS_GRABCUT = 1, /**< OpenCV: 0 BGD, 1 FGD, 2 PR_BGD, 3 PR_FGD (PR_ = unknown) */
    GCUT_SEEDS_COLOR = 2    /**< scribbles: in RGB(A) masks red (R >= 240, G and B <= 15)
                                 = foreground, blue (B >= 240, R and G <= 15) = background,
                                 any other colour or alpha < 128 = unknown, so strokes may be
                                 drawn over the photo itself; in gray masks (trimaps) >= 240 =
                                 foreground, <= 15 = background, else unknown. 16-bit masks use
                                 their high byte. See docs/SEGMENT.md */
} gcut_seed_encoding;

/** Convert a mask image (same width/height/depth as the picture) into seed codes, one byte per
 *  pixel, into seeds (caller buffer of width*height*depth bytes). Values outside the encoding
 *  give GCUT_ERR_INVALID_ARG naming the pixel. */
gcut_status gcut_seeds_from_mask(const gcut_image *mask, gcut_seed_encoding encoding,
                                 uint8_t *seeds);

/** Colour / intensity models learnt from the seeds for the regional term. */
typedef enum {
    GCUT_MODEL_AUTO = -1, /**< GMM for colour, histogram for gray */
    GCUT_MODEL_HISTOGRAM = 0,
    GCUT_MODEL_GMM = 1
} gcut_model_kind;

/** Segmentation energy parameters (Boykov-Jolly): E = sum regional + lambda * sum boundary,
 *  boundary w_pq = exp(-|I_p - I_q|^2 / (2 sigma^2)) / dist(p, q). */
typedef struct gcut_seg_params {
    double lambda;         /**< smoothness weight; default 50 */
    double sigma;          /**< contrast scale in intensity units (0-255 scale); <= 0: estimated
                                from the image as the RMS neighbour difference */
    int connectivity;      /**< 4 or 8 (2D), 6 or 26 (3D); default (0) 8 in 2D, 6 in 3D;
                                gcut_grabcut() with a box and 0 here: 4 at twice lambda */
    gcut_model_kind model; /**< default GCUT_MODEL_GMM for colour, HISTOGRAM for gray */
    int gmm_components;    /**< default 5 */
    int histogram_bins;    /**< per channel; default 32 */
    double scale;          /**< float energy -> int32 capacity factor; <= 0: chosen so that the
                                largest capacity fits (reported in gcut_seg_report.scale) */
    uint64_t seed;         /**< for GMM initialisation (default 1); deterministic per seed */
    int levels;            /**< multilevel narrow-banded cut (Lombaert 2005, Lattari 2010 3.5, 5.4;
                                docs/BAND.md): 0 = one full solve (default); L in 1..GCUT_SEG_MAX_LEVELS
                                = solve a copy halved L times in full, then at each finer level only a
                                band around the projected boundary; GCUT_SEG_LEVELS_AUTO = picked by
                                size (0 below 2^20 pixels). The result is a minimum cut of the band
                                problem, not always of the full one: see gcut_seg_report.energy */
    int band;      /**< band half-width d >= 0 in pixels at each finer level (default 2): pixels
                        within Chebyshev distance d of the projected boundary (or of a seed the
                        projection contradicts) are re-solved, the rest keep projected labels */
    int band_grow; /**< 1: where the band's cut touches the band's outer layer, widen the band
                        there by d and re-solve, until it does not (at most 32 rounds); a
                        heuristic, not a proof of optimality (docs/BAND.md). Default 0 */
    /** Graph solver of the bands (the coarsest level uses the options' solver): a solver taking
     *  general graphs ("bk", "cuda-general", ...), or NULL / "auto" (default): the options'
     *  solver when it takes general graphs, else cuda-general when the coarsest level ran on
     *  cuda-grid, else gcut's "auto" rule for graphs (ibfs on the CPU, or cuda-general on a GPU
     * host by the graph's size and shape). */
    const char *band_solver;
    int iterations; /**< GrabCut rounds (Rother et al. 2004): fit the colour models, cut,
                         re-fit them to the cut, cut again..., at most this many cuts,
                         fewer when the labels stop changing; 1 = one cut. 0 (default):
                         gcut_grabcut() makes 5 with a box, GCUT_SEG_SEED_ITERATIONS
                         with seeds alone; gcut_segment() makes one cut (and calls
                         gcut_grabcut() when this is above 1). At most
                         GCUT_SEG_MAX_ITERATIONS */
    /** GrabCut: how many of the rounds are made on a copy of the image halved in each axis
     *  before the full-size ones (docs/GRABCUT.md, "Half-size first rounds"): the models are
     *  fitted there, where a cut costs a fraction, and the last round cuts the full image
     *  exactly with models re-fitted to its own pixels. The copy is halved again the same way
     *  while it has 65536 unknown pixels (a pyramid, one round a level). 0
     *  (default): automatic, iterations - 1 when at least GCUT_SEG_COARSE_MIN pixels of a 2D
     *  image are unknown, else none; -1: none; N >= 1: N (at most iterations - 1). Volumes:
     *  none. */
    int coarse_rounds;
} gcut_seg_params;

/** Unknown pixels from which gcut_grabcut() makes its first rounds at half size when
 *  gcut_seg_params.coarse_rounds is 0. */
#define GCUT_SEG_COARSE_MIN 16384

/** gcut_seg_params.levels: pick the number of levels by the image's size. */
#define GCUT_SEG_LEVELS_AUTO (-1)
/** Most coarser levels gcut_seg_params.levels may ask for. */
#define GCUT_SEG_MAX_LEVELS 8

/** Most GrabCut rounds gcut_seg_params.iterations may ask for. */
#define GCUT_SEG_MAX_ITERATIONS 64
/** Rounds gcut_grabcut() makes with seeds and no box when iterations is 0 (measured:
 *  docs/GRABCUT.md). */
#define GCUT_SEG_SEED_ITERATIONS 5

/** Fill *params with the defaults documented above (connectivity 0 = by dimension and
 *  GCUT_MODEL_AUTO are resolved when the energy is built). */
void gcut_seg_params_init(gcut_seg_params *params);

/** One level of a banded segmentation (gcut_seg_report.level). */
typedef struct gcut_seg_level {
    int64_t width, height, depth; /**< the level's size */
    int64_t nodes;                /**< nodes solved: the whole level at the coarsest, the band
                                       elsewhere (0: empty band, nothing to solve) */
    int64_t edges;                /**< neighbour edges of the solved graph */
    int rounds;                   /**< solves of this level (> 1 when band_grow widened) */
    int64_t flow;                 /**< the last solve's flow (band problem's minimum) */
    double build_ms;              /**< coarsening, projection, band and graph building */
    double solve_ms;              /**< max-flow (all rounds) */
    char solver[32];              /**< the solver of the level's (last) solve */
} gcut_seg_level;

/** What the energy builder and solver did. */
typedef struct gcut_seg_report {
    double scale; /**< capacity = round(scale * energy) */
    double sigma; /**< sigma used (estimated or given) */
    double lambda;
    int connectivity;
    gcut_model_kind model;
    int64_t seeds_foreground, seeds_background;
    double model_ms;  /**< learning the colour models */
    double build_ms;  /**< computing the capacities (graph construction) */
    double solve_ms;  /**< the max-flow solve (stats.solve_ms + stats.build_ms) */
    gcut_stats stats; /**< the solver's own report */
    int64_t foreground_pixels;
    int64_t energy;   /**< energy of the returned labelling on the full-resolution problem, in
                           capacity units (the capacity of its cut); equals stats.flow, the
                           minimum, for a full solve; a banded solve's is >= that minimum */
    double energy_ms; /**< evaluating energy (banded solves; 0 for a full solve) */
    int levels;       /**< coarser levels used (0: full solve); level[0..levels] are filled */
    /** Per level of a banded solve, level[0] the finest (the image), level[levels] the
     *  coarsest, which is solved in full. */
    gcut_seg_level level[GCUT_SEG_MAX_LEVELS + 1];
    int iterations; /**< cuts made (1 without re-fitting) */
    int converged;  /**< 1 if the rounds stopped because the labels stopped changing or the
                         re-fitted models would not lower the energy, 0 at the limit */
    double round_energy[GCUT_SEG_MAX_ITERATIONS];   /**< energy (nats) of round t's cut under round
                                                     t's   models: never increases with t */
    int64_t round_changed[GCUT_SEG_MAX_ITERATIONS]; /**< pixels whose label round t changed */
    int coarse_iterations; /**< GrabCut rounds made on smaller copies (half size, and a
                                quarter... where the pyramid went on) before the full-size
                                rounds (gcut_seg_params.coarse_rounds); 0 when the copy's cut
                                left a class empty and was not used; iterations, round_energy and
                                round_changed count the full-size rounds only (round 0's
                                changes are against the half-size cut, upsampled) */
    double coarse_energy[GCUT_SEG_MAX_ITERATIONS]; /**< energy (nats) of each smaller-copy
                                                        round's cut, smallest copy first, each
                                                        on its own copy's energy */
    /** Why the full-size GrabCut rounds ended (gcut_seg_stop): the limit, a cut that changed
     *  no label (a stop of the re-fitting loop: every cut made is still an exact minimum), a
     *  class the cut left empty, or re-fitted models that would raise the energy. */
    int stopped_by;
} gcut_seg_report;

/** gcut_seg_report.stopped_by. */
typedef enum gcut_seg_stop {
    GCUT_SEG_STOP_LIMIT = 0,       /**< params.iterations rounds made (or one cut) */
    GCUT_SEG_STOP_UNCHANGED = 1,   /**< a round after the first changed no label */
    GCUT_SEG_STOP_EMPTY_CLASS = 2, /**< the cut left no foreground or no background */
    GCUT_SEG_STOP_REFIT = 3        /**< the re-fit would raise the cut's energy: kept the last */
} gcut_seg_stop;

/** Build the segmentation grid for image and seeds (codes as above; hard constraints make
 *  seeded pixels keep their label in every minimum cut). Foreground is the source side. Alpha
 *  channels are ignored; 16-bit images are stretched from their own [min, max] to 8 bits before
 *  modelling (docs/SEGMENT.md gives the integer formulas). GCUT_ERR_INVALID_ARG names a bad
 *  seed pixel or the missing seed class. report may be NULL. */
gcut_status gcut_seg_build_grid(const gcut_image *image, const uint8_t *seeds,
                                const gcut_seg_params *params, gcut_grid **out,
                                gcut_seg_report *report);

/** One call: build the energy, solve with options (NULL = auto) and write mask (caller buffer,
 *  one byte per pixel: 1 foreground, 0 background). report may be NULL. */
gcut_status gcut_segment(const gcut_image *image, const uint8_t *seeds,
                         const gcut_seg_params *params, const gcut_options *options, uint8_t *mask,
                         gcut_seg_report *report);

/** A box in pixels, top-left origin: columns x .. x + width - 1, rows y .. y + height - 1. */
typedef struct gcut_rect {
    int64_t x, y, width, height;
} gcut_rect;

/** GrabCut (Rother, Kolmogorov & Blake 2004; docs/GRABCUT.md): pixels outside rect are
 *  background for certain, inside unknown; seeds (may be NULL when rect is given; GCUT_SEED_*
 *  codes) add hard constraints anywhere and override the box. The colour models are fitted to
 *  the box (foreground) and its outside (background), or without a box to the seeds (the
 *  unknown pixels entering the background model with a small weight); then rounds of exact
 *  cut and re-fit (GrabCut's assign-and-learn step from the previous mixtures) follow,
 *  params->iterations at most, until the labels stop changing or a re-fit would raise the
 *  energy of the current cut. Each round re-solves warm from the previous one when
 *  options->warm (the default): under "auto" on the CPU a box's rounds on a grid-bk context of
 *  its crop, a trimap's on bk's graph of the unknown pixels; the same labels as a fresh solve
 *  (every CPU solver used returns the smallest source side). With a box and
 *  params->connectivity 0 the cut is 4-connected at twice params->lambda. rect needs a 2D
 *  image; a box partly outside the image is clipped to it; an empty box, one wholly outside the
 *  image, and a box covering the whole image with no background seed give GCUT_ERR_INVALID_ARG
 *  naming the box. rect NULL: seeds alone (both classes needed; volumes too). mask: one byte
 *  per pixel, 1 foreground. report (may be NULL) gets the energy of every round. */
gcut_status gcut_grabcut(const gcut_image *image, const gcut_rect *rect, const uint8_t *seeds,
                         const gcut_seg_params *params, const gcut_options *options, uint8_t *mask,
                         gcut_seg_report *report);

/** Draw the mask over the image for a person to look at: foreground tinted, the boundary in a
 *  solid colour. *out is a new 8-bit RGB image (free with gcut_image_free). 2D only. */
gcut_status gcut_overlay(const gcut_image *image, const uint8_t *mask, gcut_image *out);

/** Synthetic benchmark difficulty (Hussein et al. 2007, VII): hard = more noise and a stronger
 *  smoothness term. */
typedef enum { GCUT_SYNTH_EASY = 0, GCUT_SYNTH_HARD = 1 } gcut_synth_level;

/** Make a synthetic benchmark image: foreground of random ellipses (ellipsoids in 3D) whose
 *  colours come from one 3-component Gaussian mixture, over a background from another. 2D:
 *  8-bit RGB; 3D (depth > 1): 8-bit gray. truth (may be NULL; else width*height*depth bytes)
 *  gets 1 for foreground. Deterministic for a seed. */
gcut_status gcut_synth_image(int64_t width, int64_t height, int64_t depth, uint64_t seed,
                             gcut_synth_level level, gcut_image *image, uint8_t *truth);
/** The benchmark's seeds: the central 32x32(x32) patch foreground, the top-left one
 *  background (smaller images: patches of a quarter of the side). */
gcut_status gcut_synth_seeds(int64_t width, int64_t height, int64_t depth, uint8_t *seeds);
/** The benchmark problem in one call: synth image, its seeds, and the energy whose regional
 *  term uses the two generating mixtures (known models, as in Hussein VII) and the level's
 *  lambda. connectivity 0 = 4 (2D) / 6 (3D). */
gcut_status gcut_synth_grid(int64_t width, int64_t height, int64_t depth, uint64_t seed,
                            gcut_synth_level level, int connectivity, gcut_grid **out);

/* ------------------------------------------------------------------------------------------
 * QPBO: binary energies with non-submodular terms (Kolmogorov & Rother, PAMI 2007; the
 * two-stage and parallel solvers of Jeppesen et al., ICCV 2021). See docs/QPBO.md.
 *
 *   E(x) = sum_p E_p(x_p) + sum_(p,q) E_pq(x_p, x_q),  x_p in {0, 1}
 *
 * Terms may be non-submodular (E00 + E11 > E01 + E10). The solve returns a partial labeling
 * (0, 1, or -1 = unlabeled) with persistency: some global minimiser agrees with every labeled
 * node, and the set of labeled nodes is the largest QPBO can certify (weak persistencies by
 * strongly connected components). Submodular energies come back fully labeled at their exact
 * minimum. Labels do not depend on the solver, the block split or the thread count.
 * ---------------------------------------------------------------------------------------- */

/** Unlabeled node in a QPBO result. */
enum { GCUT_QPBO_UNLABELED = -1 };

typedef struct gcut_qpbo gcut_qpbo;

/** Create an energy over num_nodes binary variables (>= 0), all terms zero. term_hint (>= 0)
 *  reserves room for that many pairwise terms. Free with gcut_qpbo_free. */
gcut_status gcut_qpbo_create(int64_t num_nodes, int64_t term_hint, gcut_qpbo **out);
/** Free the energy. NULL is accepted. */
void gcut_qpbo_free(gcut_qpbo *qpbo);
/** @return the number of nodes / pairwise terms added so far. */
int64_t gcut_qpbo_num_nodes(const gcut_qpbo *qpbo);
int64_t gcut_qpbo_num_terms(const gcut_qpbo *qpbo);

/** Add e0 to E_node(0) and e1 to E_node(1) (cumulative; sums are kept in 64 bits).
 *  @return GCUT_ERR_INVALID_ARG if node is out of range. */
gcut_status gcut_qpbo_add_unary(gcut_qpbo *qpbo, int64_t node, int32_t e0, int32_t e1);
/** Add the pairwise term E_ij(x_i, x_j): e00 when both are 0, e01 when x_i = 0 and x_j = 1,
 *  e10, e11 (Kolmogorov's AddPairwiseTerm order). Submodular or not; several terms on one
 *  pair add up. term_id (may be NULL) gets its number (0, 1, ...). The coupling
 *  e01 + e10 - e00 - e11 must lie in [-INT32_MAX, INT32_MAX].
 *  @return GCUT_ERR_INVALID_ARG for i == j or a node out of range, GCUT_ERR_OVERFLOW for a
 *  coupling out of range (the message names the term). */
gcut_status gcut_qpbo_add_pairwise(gcut_qpbo *qpbo, int64_t i, int64_t j, int32_t e00, int32_t e01,
                                   int32_t e10, int32_t e11, int64_t *term_id);

/** Float energies: set the scale (> 0, finite) by which gcut_qpbo_add_*_float() multiply
 *  before rounding to the nearest integer. Every result (energies, lower bound) is then in
 *  scaled units: divide by the scale. Set it before adding float terms. */
gcut_status gcut_qpbo_set_float_scale(gcut_qpbo *qpbo, double scale);
/** @return the scale in force (1.0 until set). */
double gcut_qpbo_float_scale(const gcut_qpbo *qpbo);
/** As gcut_qpbo_add_unary / _add_pairwise with float energies, each value multiplied by the
 *  scale and rounded. @return GCUT_ERR_OVERFLOW (naming the value) if a scaled value leaves
 *  int32 or is not finite. */
gcut_status gcut_qpbo_add_unary_float(gcut_qpbo *qpbo, int64_t node, double e0, double e1);
gcut_status gcut_qpbo_add_pairwise_float(gcut_qpbo *qpbo, int64_t i, int64_t j, double e00,
                                         double e01, double e10, double e11, int64_t *term_id);

/** Give each node a block (0 <= block[i] < num_blocks, num_blocks <= 2^20) for the parallel
 *  solver: blocks are solved at once, then merged. Copied; NULL clears. Without blocks, the
 *  parallel solver splits the node range into contiguous pieces (row slabs of a grid stored
 *  in C order). Blocks change speed only, never the labels. */
gcut_status gcut_qpbo_set_blocks(gcut_qpbo *qpbo, const int32_t *block, int32_t num_blocks);

/** What a QPBO solve found. Fields may be added at the end. */
typedef struct gcut_qpbo_result {
    char solver[32];     /**< "qpbo" or "pqpbo" */
    int64_t labeled;     /**< nodes with label 0 or 1 */
    int64_t lower_bound; /**< QPBO lower bound on min E: ceil(max flow of the doubled graph / 2)
                              plus the energy's constant; equals min E when every node is
                              labeled by a submodular energy */
    int64_t energy;      /**< E of the labels returned, unlabeled nodes taken as 0 */
    int stage2;          /**< 1 if the flipped copy (Stage 2) was built */
    int threads;         /**< threads used */
    int64_t blocks;      /**< blocks of Phase A (1 for qpbo) */
    int64_t merges;      /**< merges of Phase B */
    double build_ms;     /**< building the graph */
    double solve_ms;     /**< max flow, both stages (Phase A and B for pqpbo) */
    double label_ms;     /**< labels: reachability and strongly connected components */
    uint64_t bytes;      /**< peak bytes held by the solve (graph and bookkeeping) */
    double float_scale;  /**< the energy's float scale (gcut_qpbo_set_float_scale; 1.0 if
                              never set): energy / float_scale and lower_bound / float_scale
                              are in the float energy's units */
} gcut_qpbo_result;

/** Minimise: options->solver "qpbo" (serial), "pqpbo" (parallel, options->threads, 0 = all
 *  cores) or "auto"/NULL ("pqpbo" for 65536 nodes or more with options->threads > 1, else
 *  "qpbo"; the labels are the same either way). labels (may be NULL) gets num_nodes values 0, 1 or
 * -1; result (may be NULL) the summary. The energy is not modified; it may be solved again.
 *  @return GCUT_ERR_NOT_FOUND for an unknown solver, GCUT_ERR_NOMEM, GCUT_ERR_OVERFLOW if an
 *  energy sum leaves int64. */
gcut_status gcut_qpbo_solve(gcut_qpbo *qpbo, const gcut_options *options, int8_t *labels,
                            gcut_qpbo_result *result);

/** E(labels) in 64 bits; labels 0 or 1, and -1 counted as 0. @return GCUT_ERR_INVALID_ARG for
 *  any other value (naming the node), GCUT_ERR_OVERFLOW if the sum leaves int64. */
gcut_status gcut_qpbo_energy(const gcut_qpbo *qpbo, const int8_t *labels, int64_t *energy);

/** A random energy on a width x height 4-connected grid (node y * width + x): unaries and
 *  pairwise energies uniform in [-range, range], each pair non-submodular with probability
 *  nonsub_percent / 100. Deterministic for a seed. */
gcut_status gcut_qpbo_random(int64_t width, int64_t height, int nonsub_percent, int32_t range,
                             uint64_t seed, gcut_qpbo **out);
/** A multi-object segmentation energy (Jeppesen et al. 2021, section 4; Jeppesen et al.'s
 *  sparse layered graphs): a synthetic width x height (x depth) image of `objects` noisy
 *  discs (balls) of distinct brightness; one layer of nodes per object over the object's
 *  region of interest (its bounding box grown by its radius), label 1 = the pixel is in that
 *  object; a data term per node, submodular smoothness between 4- (6-) neighbours of a layer,
 *  and non-submodular exclusion terms (E11 large) between the layers' nodes at one pixel. The
 *  blocks are set to one per object. Deterministic for a seed. */
gcut_status gcut_qpbo_objects(int64_t width, int64_t height, int64_t depth, int objects,
                              uint64_t seed, gcut_qpbo **out);

/** Read a QPBO text file (docs/FORMATS.md: "p qpbo N M", "u I E0 E1", "e I J E00 E01 E10
 *  E11", optional "b I BLOCK" block ids, "c ..."; nodes 1-based; "-" = stdin). Errors give
 *  GCUT_ERR_PARSE naming the line. */
gcut_status gcut_qpbo_read(const char *path, gcut_qpbo **out);
/** Write the energy in the same format ("-" = stdout): one u line per node with a nonzero
 *  unary, a b line per node when blocks are set, one e line per term. */
gcut_status gcut_qpbo_write(const gcut_qpbo *qpbo, const char *path);

/* ------------------------------------------------------------------------------------------
 * Video: online segmentation of a frame sequence (src/video/; Garrett & Saito 2009)
 *
 * A gcut_video object takes the frames of a sequence one at a time. The first frame is
 * segmented from a given mask or from seeds; every later frame from the previous frame's mask:
 * its colour models are re-estimated from the previous frame and its mask (histograms mixed
 * with the older model by a forgetting factor), pixels deeper than a band inside (outside) the
 * previous mask's boundary become hard foreground (background) seeds, and the band's width
 * follows the boundary's measured motion. With restrict_band the graph holds only the band's
 * pixels (Garrett & Saito's mask); the cut is exact for that energy either way. docs/VIDEO.md.
 * ---------------------------------------------------------------------------------------- */

typedef struct gcut_video gcut_video;

/** How a frame's energy follows from the previous frame (defaults: gcut_video_params_init). */
typedef struct gcut_video_params {
    gcut_seg_params seg; /**< energy: lambda, sigma (<= 0: estimated per frame), connectivity,
                              histogram_bins, scale; the model is always a histogram of the
                              previous frames (first frame with seeds: seg.model as gcut_segment) */
    double forget;       /**< in [0, 1): weight the colour model keeps from older frames;
                              0 = learnt from the previous frame alone. Default 0.5 */
    double band_min;     /**< unknown band half-width in pixels when nothing moves (>= 1).
                              Default 3 */
    double band_motion;  /**< band = band_min + band_motion * (mean boundary displacement of
                              the last frame, pixels), clamped to band_max. Default 1 */
    double band_max;     /**< largest half-width (>= band_min). Default 64 */
    int restrict_band;   /**< 1: solve a graph of the band's pixels only, the rest fixed by the
                              previous mask (Garrett & Saito); 0: the whole frame with hard
                              seeds. Same energy minimum over the band either way. Default 1 */
    int check_colour;    /**< 1: a pixel beyond the band whose colour favours the other label
                              than its previous one is left unknown (not a hard seed), so that
                              uncovered or fast-grown parts can return. Default 1 */
    double colour_reach; /**< check_colour applies within colour_reach * band of the previous
                              boundary (0 = the whole frame), so that a similar-coloured object
                              far away is not taken in. Default 4 */
    int warm;            /**< 1 (with restrict_band 0): the whole frame kept as one graph across
                              frames, only changed capacities updated, re-solved warm by bk
                              (Kohli-Torr); measured in docs/VIDEO.md. Default 0 */
    int verify;          /**< 1: check every frame's cut with its certificate (cut capacity ==
                              flow; GCUT_ERR_VERIFY otherwise); 2: also, for frames cut on
                              the GPU, solve the host's copy of the frame's grid with bk and
                              require the same flow. Default 0 */
} gcut_video_params;

/** Fill *params with the defaults above (seg as gcut_seg_params_init, histogram model). */
void gcut_video_params_init(gcut_video_params *params);

/** Per-frame report of gcut_video_push_frame(). Times in ms. */
typedef struct gcut_video_report {
    int64_t frame;       /**< index of the frame (0 = first) */
    double model_ms;     /**< colour models, distance to the boundary, seeds */
    double build_ms;     /**< capacities (graph construction) */
    double solve_ms;     /**< the max-flow solve, solver setup included */
    double band;         /**< band half-width used (0 on the first frame) */
    int64_t graph_nodes; /**< nodes of the graph solved */
    int64_t flow;        /**< exact maximum flow of the frame's graph */
    int64_t foreground_pixels;
    char solver[32];
    int warm; /**< 1: solved warm from the previous frame's state (params.warm with bk, or the
                   GPU path's choice for a frame whose capacities mostly repeat) */
} gcut_video_report;

/** Create a video segmenter for frames of width x height (2D). params and options may be NULL
 *  (defaults). options->solver "cuda-grid", or "auto" (the default) where a CUDA device is
 *  present and the frame has at least 65536 pixels (256 x 256), cuts the whole frame on the GPU
 *  (restrict_band and warm are then ignored: the band graph is a general graph): one cuda-grid
 *  context is made here for the video's life, each frame's capacities are built on the device
 *  from its pixels, seeds and tables, and a frame whose capacities mostly repeat the last
 *  one's is re-solved warm (options->warm, default on). Otherwise the band graph (or the whole
 *  frame) is cut on the CPU. options->threads: threads of the per-pixel passes (0 = all
 *  cores). Every per-frame buffer is allocated here, once. */
gcut_status gcut_video_create(int64_t width, int64_t height, const gcut_video_params *params,
                              const gcut_options *options, gcut_video **out);
/** Free the segmenter. NULL is accepted. */
void gcut_video_free(gcut_video *video);

/** What init in gcut_video_push_frame() holds for the first frame. */
typedef enum {
    GCUT_VIDEO_INIT_MASK = 0, /**< a segmentation: nonzero = foreground, taken as it is */
    GCUT_VIDEO_INIT_SEEDS = 1 /**< seed codes (GCUT_SEED_*): the frame is segmented first */
} gcut_video_init;

/** Segment the next frame (8 or 16 bit, 1-4 channels, the size given at creation; alpha
 *  ignored, 16-bit samples use their high byte). The first frame needs init (width*height
 *  bytes, read as init_kind says); later frames take init NULL (or a non-NULL init to restart
 *  from it). The mask is then available from gcut_video_mask(). report may be NULL.
 *  @return GCUT_ERR_INVALID_ARG for a frame of another size (naming both) or a missing init. */
gcut_status gcut_video_push_frame(gcut_video *video, const gcut_image *frame, const uint8_t *init,
                                  gcut_video_init init_kind, gcut_video_report *report);
/** Copy the last frame's mask (1 foreground, 0 background; width*height bytes) into mask.
 *  @return GCUT_ERR_STATE before the first frame. */
gcut_status gcut_video_get_mask(const gcut_video *video, uint8_t *mask);
/** @return the number of frames segmented so far. */
int64_t gcut_video_frames(const gcut_video *video);
/** @return the solver that cuts the frames: "cuda-grid" on the GPU path (the whole frame, the
 *  model's counts, distances and seeds on the device), else the solver the options named for
 *  the CPU path (bk when none or "auto": the band graphs a frame are measured with bk).
 *  Never NULL. */
const char *gcut_video_solver(const gcut_video *video);

/** A sequence of frames to read: a folder of numbered PNG/JPEG/PNM frames (sorted by the
 *  number in their names; a gap in the numbering is an error naming the missing number), a
 *  text file listing one frame path a line (relative to the list's folder), or a video file
 *  decoded with FFmpeg's libavformat/libavcodec (only in builds that found them:
 *  gcut_video_file_support()). */
typedef struct gcut_video_source gcut_video_source;

/** Open path as above. @return GCUT_ERR_IO (missing, unreadable), GCUT_ERR_PARSE (no frames,
 *  a numbering gap, a corrupt header), GCUT_ERR_UNSUPPORTED (a video file without gcut's FFmpeg
 *  module: the message says where it was looked for and what to install). */
gcut_status gcut_video_source_open(const char *path, gcut_video_source **out);
/** Frame geometry (of the first frame) and count (-1 when unknown, as for some video files). */
void gcut_video_source_info(const gcut_video_source *source, int64_t *width, int64_t *height,
                            int64_t *count, double *fps);
/** Read the next frame into frame (8-bit RGB, allocated by the first call and reused after;
 *  free with gcut_image_free). *done is set to 1 at the end of the sequence. A frame of another
 *  size, unreadable or truncated gives GCUT_ERR_PARSE / GCUT_ERR_IO naming the frame. */
gcut_status gcut_video_source_read(gcut_video_source *source, gcut_image *frame, int *done);
/** Frames of a folder or list (known when opened), or -1 for a video file. */
int64_t gcut_video_source_frames(const gcut_video_source *source);
/** Read frame index (0-based) of a folder or list into frame, as gcut_video_source_read()
 *  (frame allocated on first use). Reads nothing shared, so threads may read different frames
 *  of one source at once (not while another thread calls gcut_video_source_read or close).
 *  @return GCUT_ERR_UNSUPPORTED for a video file (read in order), GCUT_ERR_INVALID_ARG for an
 *  index out of range, else as gcut_video_source_read(). */
gcut_status gcut_video_source_read_frame(const gcut_video_source *source, int64_t index,
                                         gcut_image *frame);
/** Close the source. NULL is accepted. */
void gcut_video_source_close(gcut_video_source *source);
/** @return 1 if video files can be read and written: gcut's FFmpeg module (libgcut_ffmpeg.so,
 *  made where the build found FFmpeg) was found and loaded (from $GCUT_FFMPEG_MODULE, beside
 *  the executable, or where `cmake --install` put it), else 0. The first call (or the first
 *  video file opened) loads it; nothing else in libgcut loads FFmpeg. */
int gcut_video_file_support(void);

/** Writes an overlay video (8-bit RGB frames) with FFmpeg (MPEG-4 Part 2 in .mp4/.avi/.mkv);
 *  GCUT_ERR_UNSUPPORTED in builds without FFmpeg. */
typedef struct gcut_video_writer gcut_video_writer;
gcut_status gcut_video_writer_open(const char *path, int64_t width, int64_t height, double fps,
                                   gcut_video_writer **out);
gcut_status gcut_video_writer_write(gcut_video_writer *writer, const gcut_image *frame);
/** Flush and close; @return the first error of the flush. NULL is accepted. */
gcut_status gcut_video_writer_close(gcut_video_writer *writer);

/** Called by gcut_video_run() for every frame in order, with the frame and its mask (1/0),
 *  from the writer thread when queue > 0. A non-OK return stops the run with that status. */
typedef gcut_status (*gcut_video_sink_fn)(void *ctx, int64_t index, const gcut_image *frame,
                                          const uint8_t *mask, const gcut_video_report *report);

/** Totals of a gcut_video_run(), ms. Stage times are summed over frames; wall_ms is the run. */
typedef struct gcut_video_run_report {
    int64_t frames;
    double decode_ms, model_ms, build_ms, solve_ms, write_ms, wall_ms;
} gcut_video_run_report;

/** Run the whole sequence: decode (a reader thread), segment (the calling thread), write (a
 *  writer thread calling sink) concurrently over a bounded ring of queue frames (queue >= 2;
 *  0 = no threads, each frame decoded, segmented and written in turn). Every buffer is made
 *  before the first frame. The masks are the same for any queue. init/init_kind are for the
 *  first frame as in gcut_video_push_frame(). On an error (a bad frame, a failing sink) the
 *  frames before it have been passed to sink and the error is returned. */
gcut_status gcut_video_run(gcut_video *video, gcut_video_source *source, const uint8_t *init,
                           gcut_video_init init_kind, int queue, gcut_video_sink_fn sink,
                           void *sink_ctx, gcut_video_run_report *report);

/** gcut_video_run() with more threads for the file codecs: readers threads decode frames of a
 *  folder or list at once (a video file is decoded by one), writers threads call sink at once
 *  for different frames (each frame once, in any order: the sink must then be thread-safe).
 *  The queue is raised to readers + writers + 1 where smaller. On an error every frame before
 *  the failing one has been passed to sink (later ones may have been too). readers = writers =
 *  1 is gcut_video_run(). @return GCUT_ERR_INVALID_ARG for readers or writers outside 1..16. */
gcut_status gcut_video_run_threads(gcut_video *video, gcut_video_source *source,
                                   const uint8_t *init, gcut_video_init init_kind, int queue,
                                   int readers, int writers, gcut_video_sink_fn sink,
                                   void *sink_ctx, gcut_video_run_report *report);

/** Synthetic test video with ground truth: frame index of a sequence made from seed, at any
 *  size (the scene scales with it): a textured object that moves, deforms and drifts in
 *  colour, a part that grows out of it between frames 10 and 30, a background-coloured bar
 *  that passes in front (occlusion) from frame 20, camera pan and noise. GCUT_SYNTH_HARD: three
 *  times the noise, object colours closer to the background's, and a brownish distractor blob
 *  in the background. image gets 8-bit RGB (allocated, free
 *  with gcut_image_free); truth (may be NULL; width*height bytes) gets 1 for foreground. */
gcut_status gcut_video_synth_frame(int64_t width, int64_t height, uint64_t seed, int64_t index,
                                   gcut_synth_level level, gcut_image *image, uint8_t *truth);

#ifdef __cplusplus
}
#endif

#endif /* GCUT_H */
