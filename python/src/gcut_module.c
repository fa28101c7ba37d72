/* gcut_module.c - the `gcut._gcut` CPython extension over include/gcut.h (numpy C API): it
 * re-checks every array python/gcut/__init__.py hands it, so no call can crash the interpreter,
 * and releases the GIL around every solve and every loop over a large array. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL gcut_ARRAY_API
#include <numpy/arrayobject.h>

#include "gcut.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static PyObject *gcut_error_type; /* gcut.GcutError: failures that are not the caller's input */

/* ------------------------------------------------------------------------------------------
 * Errors and array arguments
 * ---------------------------------------------------------------------------------------- */

/* Raise the Python exception that fits a gcut status, with the library's detailed message. */
static PyObject *raise_status(gcut_status st, const char *what) {
    PyObject *type = gcut_error_type;
    switch (st) {
    case GCUT_ERR_INVALID_ARG:
    case GCUT_ERR_PARSE:
    case GCUT_ERR_OVERFLOW:
    case GCUT_ERR_NOT_FOUND:
        type = PyExc_ValueError;
        break;
    case GCUT_ERR_NOMEM:
        type = PyExc_MemoryError;
        break;
    case GCUT_ERR_IO:
        type = PyExc_OSError;
        break;
    default:
        break;
    }
    const char *detail = gcut_last_error();
    PyErr_Format(type, "%s: %s%s%s", what, gcut_strerror(st), detail[0] ? ": " : "", detail);
    return NULL;
}

/* Check that obj is a C-contiguous, aligned numpy array of dtype type (no conversion: the
 * Python layer converts, and anything else is refused rather than cast silently). */
static PyArrayObject *as_array(PyObject *obj, int type, const char *name) {
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a numpy array", name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    if (PyArray_TYPE(a) != type) {
        PyArray_Descr *want = PyArray_DescrFromType(type);
        PyErr_Format(PyExc_TypeError, "%s must have dtype %S, not %S", name, (PyObject *)want,
                     (PyObject *)PyArray_DESCR(a));
        Py_XDECREF(want);
        return NULL;
    }
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a)) {
        PyErr_Format(PyExc_ValueError, "%s must be C-contiguous and aligned", name);
        return NULL;
    }
    return a;
}

/* As as_array() with int32 or int64 accepted; *is64 says which. */
static PyArrayObject *as_int_array(PyObject *obj, const char *name, int *is64) {
    if (PyArray_Check(obj) && PyArray_TYPE((PyArrayObject *)obj) == NPY_INT64) {
        *is64 = 1;
        return as_array(obj, NPY_INT64, name);
    }
    *is64 = 0;
    return as_array(obj, NPY_INT32, name);
}

static int64_t int_at(const void *data, int is64, int64_t i) {
    return is64 ? ((const int64_t *)data)[i] : ((const int32_t *)data)[i];
}

static gcut_status parse_options(const char *solver, int threads, gcut_options *opt) {
    gcut_options_init(opt);
    opt->solver = solver;
    opt->threads = threads;
    if (threads < 0) {
        PyErr_Format(PyExc_ValueError, "threads must be >= 0 (0 = all cores), got %d", threads);
        return GCUT_ERR_INVALID_ARG;
    }
    if (strcmp(solver, "auto") != 0 && gcut_solver_find(solver, NULL) != GCUT_OK) {
        PyErr_Format(PyExc_ValueError,
                     "solver '%s' is not in this build (gcut.solvers() lists them)", solver);
        return GCUT_ERR_NOT_FOUND;
    }
    return GCUT_OK;
}

static PyObject *stats_dict(const gcut_stats *s) {
    return Py_BuildValue("{s:s,s:L,s:d,s:d,s:L,s:L,s:L,s:L}", "solver", s->solver, "flow",
                         (long long)s->flow, "build_ms", s->build_ms, "solve_ms", s->solve_ms,
                         "augmentations", (long long)s->augmentations, "sweeps",
                         (long long)s->sweeps, "global_relabels", (long long)s->global_relabels,
                         "pushes", (long long)s->pushes);
}

/* ------------------------------------------------------------------------------------------
 * GraphCore: the state behind gcut.Graph
 *
 * A graph is a general gcut_graph, or, while every node came from one add_grid_nodes() call
 * and every edge fits a native neighbourhood, a gcut_grid (mode GRID). Anything a grid cannot
 * hold turns it into the equivalent general graph (node ids = grid indices), once.
 * ---------------------------------------------------------------------------------------- */

enum { MODE_GRAPH = 0, MODE_GRID = 1 };

typedef struct {
    PyObject_HEAD int mode;
    int busy;            /* a call has released the GIL on this object */
    int64_t num_nodes;   /* nodes added so far */
    int64_t edge_hint;   /* reserve for the general graph */
    gcut_graph *graph;   /* MODE_GRAPH: created lazily, may hold more nodes than num_nodes */
    int64_t graph_nodes; /* nodes of *graph (isolated extra nodes carry no capacity) */
    gcut_grid *grid;     /* MODE_GRID: created at the first edge or solve */
    int ndim;
    int64_t shape[3];
    uint8_t *labels;    /* of the last solve: valid for ids < labels_len */
    int64_t labels_len; /* 0 until a solve succeeds */
    int64_t labels_cap; /* bytes allocated */
    int64_t generation; /* bumped whenever *graph or *grid is replaced */
    int64_t solved_generation;
    int64_t flow;
    gcut_stats stats;
} GraphCore;

static int enter(GraphCore *self) {
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "this Graph is being used by another thread; a Graph is not thread-safe "
                        "(use one Graph per thread)");
        return -1;
    }
    self->busy = 1;
    return 0;
}

static void leave(GraphCore *self) {
    self->busy = 0;
}

static void core_dealloc(GraphCore *self) {
    gcut_graph_free(self->graph);
    gcut_grid_free(self->grid);
    PyMem_Free(self->labels);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int core_init(GraphCore *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"node_hint", "edge_hint", NULL};
    long long node_hint = 0, edge_hint = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|LL", kwlist, &node_hint, &edge_hint))
        return -1;
    if (node_hint < 0 || edge_hint < 0) {
        PyErr_SetString(PyExc_ValueError, "node_hint and edge_hint must be >= 0");
        return -1;
    }
    self->mode = MODE_GRAPH;
    self->edge_hint = edge_hint;
    return 0;
}

/* Copy src's edges and terminal capacities into a new graph of nodes nodes. */
static gcut_status copy_graph(const gcut_graph *src, int64_t nodes, int64_t hint,
                              gcut_graph **out) {
    int64_t m = src ? gcut_graph_num_edges(src) : 0;
    gcut_status st = gcut_graph_create(nodes, m > hint ? m : hint, out);
    if (st != GCUT_OK || src == NULL)
        return st;
    for (int64_t e = 0; e < m && st == GCUT_OK; e++) {
        int64_t u, v;
        int32_t c, r;
        st = gcut_graph_get_edge(src, e, &u, &v, &c, &r);
        if (st == GCUT_OK)
            st = gcut_graph_add_edge(*out, u, v, c, r);
    }
    int64_t n = gcut_graph_num_nodes(src);
    for (int64_t i = 0; i < n && st == GCUT_OK; i++) {
        int64_t a, b;
        st = gcut_graph_get_tweights(src, i, &a, &b);
        if (st == GCUT_OK && (a != 0 || b != 0))
            st = gcut_graph_set_tweights(*out, i, a, b);
    }
    if (st != GCUT_OK) {
        gcut_graph_free(*out);
        *out = NULL;
    }
    return st;
}

static int ensure_grid(GraphCore *self, int connectivity);

/* Make the general graph hold at least num_nodes nodes; a grid becomes a graph. GIL held on
 * entry; released for the copies. */
static int ensure_graph(GraphCore *self) {
    gcut_status st = GCUT_OK;
    if (self->mode == MODE_GRID) {
        if (ensure_grid(self, 0) < 0)
            return -1;
        gcut_graph *g = NULL;
        Py_BEGIN_ALLOW_THREADS st = gcut_grid_to_graph(self->grid, &g);
        Py_END_ALLOW_THREADS if (st != GCUT_OK) {
            raise_status(st, "converting the grid to a graph");
            return -1;
        }
        gcut_grid_free(self->grid);
        self->grid = NULL;
        self->graph = g;
        self->generation++;
        self->graph_nodes = gcut_graph_num_nodes(g);
        self->mode = MODE_GRAPH;
    }
    if (self->graph != NULL && self->graph_nodes >= self->num_nodes)
        return 0;
    /* First creation: exactly the nodes asked for. Growth after that (nodes added after
     * edges) doubles, so interleaved add_nodes/add_edge stays linear overall. */
    int64_t nodes = self->num_nodes;
    if (self->graph != NULL && nodes < 2 * self->graph_nodes)
        nodes = 2 * self->graph_nodes;
    gcut_graph *g = NULL;
    Py_BEGIN_ALLOW_THREADS st = copy_graph(self->graph, nodes, self->edge_hint, &g);
    Py_END_ALLOW_THREADS if (st != GCUT_OK) {
        raise_status(st, "building the graph");
        return -1;
    }
    gcut_graph_free(self->graph);
    self->graph = g;
    self->graph_nodes = nodes;
    self->generation++;
    return 0;
}

static int native_connectivity_ok(int ndim, int c) {
    return ndim == 2 ? (c == 4 || c == 8) : (c == 6 || c == 26);
}

/* Create the grid (connectivity 0 = the smallest: 4 in 2D, 6 in 3D) or widen it to a larger
 * neighbourhood (4 -> 8, 6 -> 26: the first directions keep their order). */
static int ensure_grid(GraphCore *self, int connectivity) {
    int smallest = self->ndim == 2 ? 4 : 6;
    if (connectivity == 0)
        connectivity = self->grid ? gcut_grid_connectivity(self->grid) : smallest;
    if (!native_connectivity_ok(self->ndim, connectivity)) {
        PyErr_Format(PyExc_ValueError, "connectivity %d is not a %dD grid neighbourhood",
                     connectivity, self->ndim);
        return -1;
    }
    if (self->grid != NULL && gcut_grid_connectivity(self->grid) >= connectivity)
        return 0;
    gcut_grid *g = NULL;
    gcut_status st = gcut_grid_create(self->ndim, self->shape, connectivity, &g);
    if (st != GCUT_OK) {
        raise_status(st, "creating the grid");
        return -1;
    }
    if (self->grid != NULL) {
        int64_t n = gcut_grid_num_nodes(g);
        size_t bytes = (size_t)n * sizeof(int32_t);
        gcut_grid *old = self->grid;
        Py_BEGIN_ALLOW_THREADS;
        memcpy(gcut_grid_terminal_data(g, GCUT_SOURCE), gcut_grid_terminal_cdata(old, GCUT_SOURCE),
               bytes);
        memcpy(gcut_grid_terminal_data(g, GCUT_SINK), gcut_grid_terminal_cdata(old, GCUT_SINK),
               bytes);
        for (int d = 0; d < gcut_grid_num_dirs(old); d++)
            memcpy(gcut_grid_dir_data(g, d), gcut_grid_dir_cdata(old, d), bytes);
        Py_END_ALLOW_THREADS;
        gcut_grid_free(old);
    }
    self->grid = g;
    self->generation++;
    return 0;
}

static PyObject *core_add_nodes(GraphCore *self, PyObject *args) {
    long long n;
    if (!PyArg_ParseTuple(args, "L", &n))
        return NULL;
    if (n < 0) {
        PyErr_Format(PyExc_ValueError, "num_nodes must be >= 0, got %lld", n);
        return NULL;
    }
    if (n > ((int64_t)1 << 40) - self->num_nodes) {
        PyErr_Format(PyExc_ValueError, "num_nodes %lld is too large", n);
        return NULL;
    }
    if (enter(self) < 0)
        return NULL;
    if (self->mode == MODE_GRID && n > 0 && ensure_graph(self) < 0) {
        leave(self);
        return NULL;
    }
    int64_t first = self->num_nodes;
    self->num_nodes += n;
    leave(self);
    return PyLong_FromLongLong(first);
}

/* _init_grid(shape): the graph's nodes become one 2D or 3D grid (only on an empty graph). */
static PyObject *core_init_grid(GraphCore *self, PyObject *args) {
    PyObject *shape;
    if (!PyArg_ParseTuple(args, "O!", &PyTuple_Type, &shape))
        return NULL;
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    if (self->num_nodes != 0 || self->mode != MODE_GRAPH || (nd != 2 && nd != 3)) {
        PyErr_SetString(PyExc_ValueError, "_init_grid: needs an empty graph and a 2D/3D shape");
        return NULL;
    }
    int64_t n = 1;
    for (Py_ssize_t i = 0; i < nd; i++) {
        long long s = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
        if (s == -1 && PyErr_Occurred())
            return NULL;
        if (s < 1 || s > ((int64_t)1 << 31)) {
            PyErr_Format(PyExc_ValueError, "shape[%zd] = %lld must be in [1, 2^31]", i, s);
            return NULL;
        }
        self->shape[i] = s;
        if (n > (((int64_t)1 << 40) / s)) {
            PyErr_SetString(PyExc_ValueError, "shape: too many nodes");
            return NULL;
        }
        n *= s;
    }
    gcut_graph_free(self->graph); /* an empty graph made by an earlier maxflow() */
    self->graph = NULL;
    self->graph_nodes = 0;
    self->generation++;
    self->ndim = (int)nd;
    self->mode = MODE_GRID;
    self->num_nodes = n;
    Py_RETURN_NONE;
}

/* _to_graph(): turn a grid into a general graph now. */
static PyObject *core_to_graph(GraphCore *self, PyObject *noargs) {
    (void)noargs;
    if (enter(self) < 0)
        return NULL;
    int rc = ensure_graph(self);
    leave(self);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Check node ids are in [0, num_nodes); names the argument and the first bad index. */
static int check_ids(const int64_t *ids, int64_t n, int64_t num_nodes, const char *name) {
    int64_t bad = -1;
    Py_BEGIN_ALLOW_THREADS for (int64_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= num_nodes) {
            bad = i;
            break;
        }
    }
    Py_END_ALLOW_THREADS if (bad >= 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s[%lld] = %lld is not a node id (the graph has %lld nodes)", name,
                     (long long)bad, (long long)ids[bad], (long long)num_nodes);
        return -1;
    }
    return 0;
}

static int check_nonneg(const void *data, int is64, int64_t n, const char *name) {
    int64_t bad = -1;
    Py_BEGIN_ALLOW_THREADS for (int64_t i = 0; i < n; i++) {
        if (int_at(data, is64, i) < 0) {
            bad = i;
            break;
        }
    }
    Py_END_ALLOW_THREADS if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "%s[%lld] = %lld: capacities must be >= 0", name,
                     (long long)bad, (long long)int_at(data, is64, bad));
        return -1;
    }
    return 0;
}

/* _add_edges(i int64, j int64, cap int32, rev int32) -> id of the first edge added. */
static PyObject *core_add_edges(GraphCore *self, PyObject *args) {
    PyObject *oi, *oj, *oc, *orv;
    if (!PyArg_ParseTuple(args, "OOOO", &oi, &oj, &oc, &orv))
        return NULL;
    PyArrayObject *ai = as_array(oi, NPY_INT64, "i"), *aj = ai ? as_array(oj, NPY_INT64, "j") : 0,
                  *ac = aj ? as_array(oc, NPY_INT32, "capacity") : 0,
                  *ar = ac ? as_array(orv, NPY_INT32, "rev_capacity") : 0;
    if (ar == NULL)
        return NULL;
    int64_t m = PyArray_SIZE(ai);
    if (PyArray_SIZE(aj) != m || PyArray_SIZE(ac) != m || PyArray_SIZE(ar) != m) {
        PyErr_Format(PyExc_ValueError,
                     "i, j, capacity and rev_capacity must have equal lengths "
                     "(%lld, %lld, %lld, %lld)",
                     (long long)m, (long long)PyArray_SIZE(aj), (long long)PyArray_SIZE(ac),
                     (long long)PyArray_SIZE(ar));
        return NULL;
    }
    const int64_t *u = PyArray_DATA(ai), *v = PyArray_DATA(aj);
    const int32_t *c = PyArray_DATA(ac), *r = PyArray_DATA(ar);
    if (check_ids(u, m, self->num_nodes, "i") < 0 || check_ids(v, m, self->num_nodes, "j") < 0 ||
        check_nonneg(c, 0, m, "capacity") < 0 || check_nonneg(r, 0, m, "rev_capacity") < 0)
        return NULL;
    if (enter(self) < 0)
        return NULL;
    if (ensure_graph(self) < 0) {
        leave(self);
        return NULL;
    }
    int64_t first = gcut_graph_num_edges(self->graph);
    gcut_status st = GCUT_OK;
    Py_BEGIN_ALLOW_THREADS for (int64_t e = 0; e < m && st == GCUT_OK; e++) st =
        gcut_graph_add_edge(self->graph, u[e], v[e], c[e], r[e]);
    Py_END_ALLOW_THREADS leave(self);
    if (st != GCUT_OK)
        return raise_status(st, "add_edges");
    return PyLong_FromLongLong(first);
}

/* _set_edges(edge int64, cap int32, rev int32): absolute capacities of edges by add order. */
static PyObject *core_set_edges(GraphCore *self, PyObject *args) {
    PyObject *oe, *oc, *orv;
    if (!PyArg_ParseTuple(args, "OOO", &oe, &oc, &orv))
        return NULL;
    PyArrayObject *ae = as_array(oe, NPY_INT64, "edges"),
                  *ac = ae ? as_array(oc, NPY_INT32, "capacity") : 0,
                  *ar = ac ? as_array(orv, NPY_INT32, "rev_capacity") : 0;
    if (ar == NULL)
        return NULL;
    int64_t m = PyArray_SIZE(ae);
    if (PyArray_SIZE(ac) != m || PyArray_SIZE(ar) != m) {
        PyErr_SetString(PyExc_ValueError,
                        "edges, capacity and rev_capacity must have equal lengths");
        return NULL;
    }
    if (self->mode != MODE_GRAPH) {
        PyErr_SetString(PyExc_ValueError, "edges: this graph has no numbered edges (its edges "
                                          "came from add_grid_edges); use add_grid_edges again");
        return NULL;
    }
    int64_t num_edges = self->graph ? gcut_graph_num_edges(self->graph) : 0;
    const int64_t *e = PyArray_DATA(ae);
    const int32_t *c = PyArray_DATA(ac), *r = PyArray_DATA(ar);
    for (int64_t k = 0; k < m; k++)
        if (e[k] < 0 || e[k] >= num_edges) {
            PyErr_Format(PyExc_ValueError,
                         "edges[%lld] = %lld is not an edge id (the graph has "
                         "%lld edges)",
                         (long long)k, (long long)e[k], (long long)num_edges);
            return NULL;
        }
    if (check_nonneg(c, 0, m, "capacity") < 0 || check_nonneg(r, 0, m, "rev_capacity") < 0)
        return NULL;
    if (enter(self) < 0)
        return NULL;
    gcut_status st = GCUT_OK;
    Py_BEGIN_ALLOW_THREADS for (int64_t k = 0; k < m && st == GCUT_OK; k++) st =
        gcut_graph_set_edge(self->graph, e[k], c[k], r[k]);
    Py_END_ALLOW_THREADS leave(self);
    if (st != GCUT_OK)
        return raise_status(st, "set_edges");
    Py_RETURN_NONE;
}

#define TW_MAX (INT64_MAX / 4) /* gcut_graph_set_tweights' bound, 2^61 - 1 */

/* Terminal capacities of a general graph: add (cumulative) or set (absolute). */
static gcut_status graph_tedges(gcut_graph *g, const int64_t *ids, const void *src, const void *snk,
                                int is64, int64_t m, int set, int64_t *bad) {
    for (int64_t k = 0; k < m; k++) {
        int64_t a = int_at(src, is64, k), b = int_at(snk, is64, k), a0 = 0, b0 = 0;
        if (!set)
            gcut_graph_get_tweights(g, ids[k], &a0, &b0);
        if (a > TW_MAX - a0 || b > TW_MAX - b0) {
            *bad = k;
            return GCUT_ERR_OVERFLOW;
        }
        gcut_status st = gcut_graph_set_tweights(g, ids[k], a0 + a, b0 + b);
        if (st != GCUT_OK)
            return st;
    }
    return GCUT_OK;
}

/* The same on a grid's int32 terminal arrays; on overflow the entries already changed are
 * restored and GCUT_ERR_OVERFLOW returned, so the caller can move to a general graph. */
static gcut_status grid_tedges(gcut_grid *g, const int64_t *ids, const void *src, const void *snk,
                               int is64, int64_t m, int set) {
    int32_t *s = gcut_grid_terminal_data(g, GCUT_SOURCE),
            *t = gcut_grid_terminal_data(g, GCUT_SINK);
    if (set) {
        for (int64_t k = 0; k < m; k++)
            if (int_at(src, is64, k) > INT32_MAX || int_at(snk, is64, k) > INT32_MAX)
                return GCUT_ERR_OVERFLOW;
        for (int64_t k = 0; k < m; k++) {
            s[ids[k]] = (int32_t)int_at(src, is64, k);
            t[ids[k]] = (int32_t)int_at(snk, is64, k);
        }
        return GCUT_OK;
    }
    for (int64_t k = 0; k < m; k++) {
        int64_t a = s[ids[k]] + int_at(src, is64, k), b = t[ids[k]] + int_at(snk, is64, k);
        if (a > INT32_MAX || b > INT32_MAX) {
            for (int64_t j = k - 1; j >= 0; j--) {
                s[ids[j]] -= (int32_t)int_at(src, is64, j);
                t[ids[j]] -= (int32_t)int_at(snk, is64, j);
            }
            return GCUT_ERR_OVERFLOW;
        }
        s[ids[k]] = (int32_t)a;
        t[ids[k]] = (int32_t)b;
    }
    return GCUT_OK;
}

/* _tedges(ids int64, source int32|int64, sink int32|int64, set) */
static PyObject *core_tedges(GraphCore *self, PyObject *args) {
    PyObject *oi, *os, *ot;
    int set = 0;
    if (!PyArg_ParseTuple(args, "OOOp", &oi, &os, &ot, &set))
        return NULL;
    int is64a, is64b;
    PyArrayObject *ai = as_array(oi, NPY_INT64, "i"),
                  *as = ai ? as_int_array(os, "cap_source", &is64a) : 0,
                  *at = as ? as_int_array(ot, "cap_sink", &is64b) : 0;
    if (at == NULL)
        return NULL;
    int64_t m = PyArray_SIZE(ai);
    if (PyArray_SIZE(as) != m || PyArray_SIZE(at) != m || is64a != is64b) {
        PyErr_SetString(PyExc_ValueError,
                        "i, cap_source and cap_sink must have equal lengths and dtypes");
        return NULL;
    }
    const int64_t *ids = PyArray_DATA(ai);
    const void *src = PyArray_DATA(as), *snk = PyArray_DATA(at);
    if (check_ids(ids, m, self->num_nodes, "i") < 0 ||
        check_nonneg(src, is64a, m, "cap_source") < 0 ||
        check_nonneg(snk, is64a, m, "cap_sink") < 0)
        return NULL;
    if (enter(self) < 0)
        return NULL;
    gcut_status st = GCUT_OK;
    if (self->mode == MODE_GRID) {
        if (ensure_grid(self, 0) < 0) {
            leave(self);
            return NULL;
        }
        Py_BEGIN_ALLOW_THREADS st = grid_tedges(self->grid, ids, src, snk, is64a, m, set);
        Py_END_ALLOW_THREADS if (st == GCUT_OK) {
            leave(self);
            Py_RETURN_NONE;
        }
        /* Sums past int32: a general graph keeps them in int64. */
    }
    if (ensure_graph(self) < 0) {
        leave(self);
        return NULL;
    }
    int64_t bad = -1;
    Py_BEGIN_ALLOW_THREADS st = graph_tedges(self->graph, ids, src, snk, is64a, m, set, &bad);
    Py_END_ALLOW_THREADS leave(self);
    if (st == GCUT_ERR_OVERFLOW && bad >= 0) {
        PyErr_Format(
            PyExc_ValueError,
            "terminal capacity of node %lld would pass 2^61 - 1 (caps_source/caps_sink[%lld])",
            (long long)ids[bad], (long long)bad);
        return NULL;
    }
    if (st != GCUT_OK)
        return raise_status(st, set ? "set_tedges" : "add_tedges");
    Py_RETURN_NONE;
}

/* Add values[p] into dir[p] for every node p whose neighbour p + off is inside the grid, and
 * with rev also into rev[p + off] (the reverse direction at the neighbour: a symmetric edge),
 * in one pass that also checks each value (>= 0) and each sum (<= INT32_MAX); the values of
 * the nodes without that neighbour are checked for sign too. Returns 1 (*nonzero = arcs with a
 * nonzero value added), or, with nothing changed (the entries already added are subtracted
 * again), 0 when a sum would pass int32 and -1 for a negative value. GIL released by the
 * caller. */
static int add_shifted(const GraphCore *self, const int *off, const void *values, int is64,
                       int32_t *dir, int32_t *rev, int64_t *nonzero) {
    int64_t dims[3] = {1, 1, 1};
    int o[3] = {0, 0, 0};
    int lead = 3 - self->ndim;
    for (int k = 0; k < self->ndim; k++) {
        dims[lead + k] = self->shape[k];
        o[lead + k] = off[k];
    }
    int64_t lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = o[k] < 0 ? -o[k] : 0;
        hi[k] = o[k] > 0 ? dims[k] - o[k] : dims[k];
    }
    int64_t step = ((int64_t)o[0] * dims[1] + o[1]) * dims[2] + o[2];
    int64_t count = 0, stop = -1;
    int result = 1;
    for (int64_t z = lo[0]; z < hi[0] && stop < 0; z++)
        for (int64_t y = lo[1]; y < hi[1] && stop < 0; y++) {
            int64_t row = (z * dims[1] + y) * dims[2];
            for (int64_t x = lo[2]; x < hi[2]; x++) {
                int64_t p = row + x;
                int64_t v = int_at(values, is64, p);
                if (v <= 0) {
                    if (v < 0) {
                        result = -1;
                        stop = p;
                        break;
                    }
                    continue;
                }
                if (dir[p] + v > INT32_MAX || (rev && rev[p + step] + v > INT32_MAX)) {
                    result = 0;
                    stop = p;
                    break;
                }
                dir[p] += (int32_t)v;
                if (rev)
                    rev[p + step] += (int32_t)v;
                count++;
            }
        }
    /* The nodes outside the region (no neighbour at this offset): signs only. */
    for (int64_t z = 0; z < dims[0] && stop < 0; z++)
        for (int64_t y = 0; y < dims[1] && stop < 0; y++) {
            int inside = z >= lo[0] && z < hi[0] && y >= lo[1] && y < hi[1] && lo[2] < hi[2];
            int64_t row = (z * dims[1] + y) * dims[2];
            for (int64_t x = 0; x < dims[2]; x++) {
                if (inside && x == lo[2])
                    x = hi[2];
                if (x >= dims[2])
                    break;
                if (int_at(values, is64, row + x) < 0) {
                    result = -1;
                    stop = INT64_MAX; /* everything added is taken back */
                    break;
                }
            }
        }
    if (stop < 0) {
        *nonzero = count;
        return 1;
    }
    for (int64_t z = lo[0]; z < hi[0]; z++)
        for (int64_t y = lo[1]; y < hi[1]; y++) {
            int64_t row = (z * dims[1] + y) * dims[2];
            for (int64_t x = lo[2]; x < hi[2]; x++) {
                int64_t p = row + x;
                if (p >= stop)
                    return result;
                int64_t v = int_at(values, is64, p);
                if (v > 0) {
                    dir[p] -= (int32_t)v;
                    if (rev)
                        rev[p + step] -= (int32_t)v;
                }
            }
        }
    return result;
}

/* Add values into a terminal array in one pass that checks them (>= 0, sums <= INT32_MAX);
 * returns as add_shifted(), nothing changed on failure. */
static int add_terminal(int32_t *target, const void *values, int is64, int64_t n) {
    int64_t i = 0;
    int result = 1;
    for (; i < n; i++) {
        int64_t v = int_at(values, is64, i);
        if (v < 0 || target[i] + v > INT32_MAX) {
            result = v < 0 ? -1 : 0;
            break;
        }
        target[i] += (int32_t)v;
    }
    if (result != 1)
        for (int64_t j = 0; j < i; j++)
            target[j] -= (int32_t)int_at(values, is64, j);
    return result;
}

/* _grid_add(offset tuple | None, values int32|int64 of num_nodes, terminal=-1, symmetric=0,
 *           name="values") -> the number of nonzero arcs added (0 for terminals), or -1 when
 * nothing was added (name: the argument named by a negative-value error).
 * With an offset: values[p] is the capacity of the arc p -> p + offset (entries whose neighbour
 * is outside the grid are ignored); symmetric also gives the arc p + offset -> p the same
 * capacity. The neighbourhood widens (4 -> 8, 6 -> 26) when the offset needs it. With None:
 * values are added to the terminal capacities (terminal 0 source, 1 sink). False (nothing
 * changed) when the offset is not a native direction or a sum would pass int32: the caller
 * then uses a general graph. */
static PyObject *core_grid_add(GraphCore *self, PyObject *args) {
    PyObject *ooff, *ov;
    int terminal = -1, symmetric = 0;
    const char *name = "values";
    if (!PyArg_ParseTuple(args, "OO|ips", &ooff, &ov, &terminal, &symmetric, &name))
        return NULL;
    if (self->mode != MODE_GRID) {
        PyErr_SetString(PyExc_ValueError, "_grid_add: the graph is not a grid");
        return NULL;
    }
    int is64;
    PyArrayObject *av = as_int_array(ov, "values", &is64);
    if (av == NULL)
        return NULL;
    if (PyArray_SIZE(av) != self->num_nodes) {
        PyErr_SetString(PyExc_ValueError, "_grid_add: values must have one entry per node");
        return NULL;
    }
    int want[3] = {0, 0, 0};
    int connectivity = 0;
    if (ooff != Py_None) {
        if (!PyTuple_Check(ooff) || PyTuple_GET_SIZE(ooff) != self->ndim) {
            PyErr_SetString(PyExc_ValueError, "_grid_add: offset must be a tuple of ndim ints");
            return NULL;
        }
        int far = 0, nonzero = 0;
        for (int k = 0; k < self->ndim; k++) {
            long o = PyLong_AsLong(PyTuple_GET_ITEM(ooff, k));
            if (o == -1 && PyErr_Occurred())
                return NULL;
            want[k] = (int)o;
            far |= o < -1 || o > 1;
            nonzero += o != 0;
        }
        if (far || nonzero == 0)
            return PyLong_FromLong(-1); /* not a native direction: nothing added */
        connectivity = self->ndim == 2 ? (nonzero == 1 ? 4 : 8) : (nonzero == 1 ? 6 : 26);
    } else if (terminal != GCUT_SOURCE && terminal != GCUT_SINK) {
        PyErr_SetString(PyExc_ValueError, "_grid_add: give an offset or a terminal");
        return NULL;
    }
    /* The values are checked while they are added (one pass); only a call that would widen
     * an existing grid checks them first, so that a bad call leaves the grid as it was. */
    if (self->grid != NULL && connectivity > gcut_grid_connectivity(self->grid) &&
        check_nonneg(PyArray_DATA(av), is64, self->num_nodes, name) < 0)
        return NULL;
    if (enter(self) < 0)
        return NULL;
    if (ensure_grid(self, connectivity) < 0) {
        leave(self);
        return NULL;
    }
    int32_t *target = NULL, *reverse = NULL;
    if (ooff == Py_None) {
        target = gcut_grid_terminal_data(self->grid, terminal);
    } else {
        for (int d = 0; d < gcut_grid_num_dirs(self->grid) && target == NULL; d++) {
            int off[3];
            gcut_grid_offset(self->grid, d, off);
            if (off[0] == want[0] && off[1] == want[1] && (self->ndim == 2 || off[2] == want[2])) {
                target = gcut_grid_dir_data(self->grid, d);
                if (symmetric)
                    reverse = gcut_grid_dir_data(self->grid, d ^ 1); /* d ^ 1: the reverse */
            }
        }
    }
    if (target == NULL) {
        leave(self);
        PyErr_SetString(gcut_error_type, "_grid_add: direction not found");
        return NULL;
    }
    const void *vals = PyArray_DATA(av);
    int64_t n = self->num_nodes, added = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS;
    if (ooff != Py_None)
        rc = add_shifted(self, want, vals, is64, target, reverse, &added);
    else
        rc = add_terminal(target, vals, is64, n);
    Py_END_ALLOW_THREADS;
    leave(self);
    if (rc < 0) { /* a negative value (nothing changed): name the first */
        if (check_nonneg(vals, is64, n, name) == 0)
            PyErr_Format(gcut_error_type, "_grid_add: %s has a negative entry", name);
        return NULL;
    }
    return PyLong_FromLongLong(rc == 1 ? added : -1);
}

/* _maxflow(solver, threads) -> flow (exact Python int). */
static PyObject *core_maxflow(GraphCore *self, PyObject *args) {
    const char *solver = "auto";
    int threads = 0;
    if (!PyArg_ParseTuple(args, "|si", &solver, &threads))
        return NULL;
    gcut_options opt;
    if (parse_options(solver, threads, &opt) != GCUT_OK)
        return NULL;
    if (enter(self) < 0)
        return NULL;
    int rc = self->mode == MODE_GRID ? ensure_grid(self, 0) : ensure_graph(self);
    if (rc < 0) {
        leave(self);
        return NULL;
    }
    int64_t n = self->mode == MODE_GRID ? gcut_grid_num_nodes(self->grid) : self->graph_nodes;
    if (self->labels_cap < n || self->labels == NULL) {
        uint8_t *grown = PyMem_Realloc(self->labels, n > 0 ? (size_t)n : 1);
        if (grown == NULL) {
            leave(self);
            return PyErr_NoMemory();
        }
        self->labels = grown;
        self->labels_cap = n;
    }
    self->labels_len = 0; /* no valid labels until this solve succeeds */
    int64_t flow = 0;
    gcut_status st;
    gcut_stats stats;
    Py_BEGIN_ALLOW_THREADS if (self->mode == MODE_GRID) st =
        gcut_grid_solve(self->grid, &opt, &flow, self->labels, &stats);
    else st = gcut_graph_solve(self->graph, &opt, &flow, self->labels, &stats);
    Py_END_ALLOW_THREADS leave(self);
    if (st != GCUT_OK)
        return raise_status(st, "maxflow");
    self->labels_len = self->num_nodes;
    self->solved_generation = self->generation;
    self->flow = flow;
    self->stats = stats;
    return PyLong_FromLongLong(flow);
}

/* _segments(ids int64, whole=False) -> uint8 array of the same shape (1 = sink side). With
 * whole, ids is the grid's own id array (0, 1, ... in order; the caller checked): the labels
 * are copied out in one memcpy instead of gathered. */
static PyObject *core_segments(GraphCore *self, PyObject *args) {
    PyObject *oi;
    int whole = 0;
    if (!PyArg_ParseTuple(args, "O|p", &oi, &whole))
        return NULL;
    PyArrayObject *ai = as_array(oi, NPY_INT64, "nodeids");
    if (ai == NULL)
        return NULL;
    if (self->labels_len == 0 && self->num_nodes > 0) {
        PyErr_SetString(PyExc_RuntimeError, "call maxflow() before reading segments");
        return NULL;
    }
    int64_t m = PyArray_SIZE(ai);
    const int64_t *ids = PyArray_DATA(ai);
    if (whole && m != self->labels_len) {
        PyErr_SetString(PyExc_ValueError, "_segments: whole needs one id per node");
        return NULL;
    }
    for (int64_t k = 0; k < m && !whole; k++)
        if (ids[k] < 0 || ids[k] >= self->labels_len) {
            PyErr_Format(PyExc_ValueError,
                         "nodeids[%lld] = %lld is not a node of the last maxflow() (%lld nodes)",
                         (long long)k, (long long)ids[k], (long long)self->labels_len);
            return NULL;
        }
    PyObject *out = PyArray_SimpleNew(PyArray_NDIM(ai), PyArray_DIMS(ai), NPY_UINT8);
    if (out == NULL)
        return NULL;
    if (enter(self) < 0) { /* a concurrent maxflow() may move the labels */
        Py_DECREF(out);
        return NULL;
    }
    uint8_t *dst = PyArray_DATA((PyArrayObject *)out);
    const uint8_t *lab = self->labels;
    Py_BEGIN_ALLOW_THREADS;
    if (whole)
        memcpy(dst, lab, (size_t)m);
    else
        for (int64_t k = 0; k < m; k++)
            dst[k] = lab[ids[k]];
    Py_END_ALLOW_THREADS;
    leave(self);
    return out;
}

/* _verify() -> cut capacity of the last solve's labels on the current capacities (raises
 * when it differs from the flow: the cut certificate). */
static PyObject *core_verify(GraphCore *self, PyObject *noargs) {
    (void)noargs;
    if ((self->labels_len == 0 && self->num_nodes > 0) ||
        self->solved_generation != self->generation) {
        /* The labels were made for another node set (nodes added, or the grid converted). */
        PyErr_SetString(PyExc_RuntimeError,
                        "call maxflow() before verify() (the graph changed shape since)");
        return NULL;
    }
    if (enter(self) < 0)
        return NULL;
    int64_t cut = 0;
    gcut_status st = GCUT_OK;
    if (self->mode == MODE_GRID && self->grid != NULL)
        st = gcut_grid_verify(self->grid, self->labels, self->flow, &cut);
    else if (self->graph != NULL)
        st = gcut_graph_verify(self->graph, self->labels, self->flow, &cut);
    leave(self);
    if (st != GCUT_OK)
        return raise_status(st, "verify");
    return PyLong_FromLongLong(cut);
}

static PyObject *core_get_num_nodes(GraphCore *self, void *closure) {
    (void)closure;
    return PyLong_FromLongLong(self->num_nodes);
}

static PyObject *core_get_num_edges(GraphCore *self, void *closure) {
    (void)closure;
    return PyLong_FromLongLong(
        self->graph && self->mode == MODE_GRAPH ? gcut_graph_num_edges(self->graph) : 0);
}

static PyObject *core_get_layout(GraphCore *self, void *closure) {
    (void)closure;
    if (self->mode == MODE_GRID) {
        int c = self->grid ? gcut_grid_connectivity(self->grid) : 0;
        return PyUnicode_FromFormat("grid%d", c);
    }
    return PyUnicode_FromString("graph");
}

static PyObject *core_get_stats(GraphCore *self, void *closure) {
    (void)closure;
    if (self->labels_len == 0)
        Py_RETURN_NONE;
    return stats_dict(&self->stats);
}

static PyMethodDef core_methods[] = {
    {"_add_nodes", (PyCFunction)core_add_nodes, METH_VARARGS, "internal"},
    {"_init_grid", (PyCFunction)core_init_grid, METH_VARARGS, "internal"},
    {"_to_graph", (PyCFunction)core_to_graph, METH_NOARGS, "internal"},
    {"_add_edges", (PyCFunction)core_add_edges, METH_VARARGS, "internal"},
    {"_set_edges", (PyCFunction)core_set_edges, METH_VARARGS, "internal"},
    {"_tedges", (PyCFunction)core_tedges, METH_VARARGS, "internal"},
    {"_grid_add", (PyCFunction)core_grid_add, METH_VARARGS, "internal"},
    {"_maxflow", (PyCFunction)core_maxflow, METH_VARARGS, "internal"},
    {"_segments", (PyCFunction)core_segments, METH_VARARGS, "internal"},
    {"verify", (PyCFunction)core_verify, METH_NOARGS,
     "verify() -> int\n\nCut certificate: the capacity of the last maxflow()'s cut on the "
     "current capacities; raises GcutError if it differs from the flow."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef core_getset[] = {
    {"num_nodes", (getter)core_get_num_nodes, NULL, "number of nodes added", NULL},
    {"_num_graph_edges", (getter)core_get_num_edges, NULL, "internal", NULL},
    {"layout", (getter)core_get_layout, NULL,
     "'graph' (general graph) or 'gridC' (a native C-connected grid; 'grid0' before edges)", NULL},
    {"stats", (getter)core_get_stats, NULL,
     "what the last maxflow() did (solver, times in ms, counters), or None", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject GraphCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gcut._gcut.GraphCore",
    .tp_basicsize = sizeof(GraphCore),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C state behind gcut.Graph (use gcut.Graph).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)core_init,
    .tp_dealloc = (destructor)core_dealloc,
    .tp_methods = core_methods,
    .tp_getset = core_getset,
};

/* ------------------------------------------------------------------------------------------
 * Direct grid solve
 * ---------------------------------------------------------------------------------------- */

/* grid_maxflow(source, sink, weights, connectivity, solver, threads)
 *   -> (flow, labels uint8 of shape, stats dict) */
static PyObject *mod_grid_maxflow(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *os, *ot, *ow;
    int connectivity, threads;
    const char *solver;
    if (!PyArg_ParseTuple(args, "OOOisi", &os, &ot, &ow, &connectivity, &solver, &threads))
        return NULL;
    PyArrayObject *as = as_array(os, NPY_INT32, "source"),
                  *at = as ? as_array(ot, NPY_INT32, "sink") : 0,
                  *aw = at ? as_array(ow, NPY_INT32, "weights") : 0;
    if (aw == NULL)
        return NULL;
    int nd = PyArray_NDIM(as);
    if (nd != 2 && nd != 3) {
        PyErr_Format(PyExc_ValueError, "source must be 2D or 3D, got %d dimensions", nd);
        return NULL;
    }
    if (!native_connectivity_ok(nd, connectivity)) {
        PyErr_Format(PyExc_ValueError, "connectivity must be %s for a %dD grid, got %d",
                     nd == 2 ? "4 or 8" : "6 or 26", nd, connectivity);
        return NULL;
    }
    if (!PyArray_SAMESHAPE(as, at)) {
        PyErr_SetString(PyExc_ValueError, "sink must have the shape of source");
        return NULL;
    }
    if (PyArray_NDIM(aw) != nd + 1 || PyArray_DIM(aw, 0) != connectivity) {
        PyErr_Format(PyExc_ValueError,
                     "weights must have shape (%d, *source.shape) (one array per direction)",
                     connectivity);
        return NULL;
    }
    int64_t shape[3];
    for (int k = 0; k < nd; k++) {
        shape[k] = PyArray_DIM(as, k);
        if (PyArray_DIM(aw, k + 1) != shape[k]) {
            PyErr_Format(PyExc_ValueError,
                         "weights must have shape (%d, *source.shape) (one array per direction)",
                         connectivity);
            return NULL;
        }
    }
    gcut_options opt;
    if (parse_options(solver, threads, &opt) != GCUT_OK)
        return NULL;
    /* The grid borrows the numpy buffers (gcut_grid_wrap: no copy); gcut_grid_solve validates
     * them (one pass) and the solver writes the labels straight into the returned array. */
    int64_t n = 1;
    for (int k = 0; k < nd; k++)
        n *= shape[k];
    const int32_t *src = PyArray_DATA(as), *snk = PyArray_DATA(at), *w = PyArray_DATA(aw);
    const int32_t *dirs[26];
    for (int d = 0; d < connectivity; d++)
        dirs[d] = w + (size_t)d * (size_t)n;
    gcut_grid *grid = NULL;
    gcut_status st = gcut_grid_wrap(nd, shape, connectivity, src, snk, dirs, &grid);
    if (st != GCUT_OK)
        return raise_status(st, "grid_maxflow");
    npy_intp dims[3];
    for (int k = 0; k < nd; k++)
        dims[k] = (npy_intp)shape[k];
    PyObject *labels = PyArray_SimpleNew(nd, dims, NPY_UINT8);
    if (labels == NULL) {
        gcut_grid_free(grid);
        return NULL;
    }
    uint8_t *lab = PyArray_DATA((PyArrayObject *)labels);
    int64_t flow = 0;
    gcut_stats stats;
    Py_BEGIN_ALLOW_THREADS st = gcut_grid_solve(grid, &opt, &flow, lab, &stats);
    Py_END_ALLOW_THREADS gcut_grid_free(grid);
    if (st != GCUT_OK) {
        Py_DECREF(labels);
        /* A negative capacity: name the argument and its flat index. */
        if (st == GCUT_ERR_INVALID_ARG &&
            (check_nonneg(src, 0, n, "source") < 0 || check_nonneg(snk, 0, n, "sink") < 0 ||
             check_nonneg(w, 0, n * connectivity, "weights") < 0))
            return NULL;
        return raise_status(st, "grid_maxflow");
    }
    PyObject *sd = stats_dict(&stats);
    if (sd == NULL) {
        Py_DECREF(labels);
        return NULL;
    }
    return Py_BuildValue("LNN", (long long)flow, labels, sd);
}

/* ------------------------------------------------------------------------------------------
 * GridContext: gcut_grid_context (one shape, many solves, warm re-solves)
 * ---------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD gcut_grid_context *ctx;
    int busy;
    int ndim, dirs;
    int64_t shape[3], num_nodes;
} GridContext;

static void gctx_dealloc(GridContext *self) {
    gcut_grid_context_free(self->ctx);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* GridContext(shape tuple, connectivity, solver, threads, warm, device) */
static int gctx_init(GridContext *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"shape", "connectivity", "solver", "threads", "warm", "device", NULL};
    PyObject *oshape;
    int connectivity = 0, threads = 0, warm = 1, device = 0;
    const char *solver = "auto";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!i|sipi", kwlist, &PyTuple_Type, &oshape,
                                     &connectivity, &solver, &threads, &warm, &device))
        return -1;
    if (device < 0) {
        PyErr_Format(PyExc_ValueError, "device must be a CUDA device ordinal >= 0, got %d", device);
        return -1;
    }
    Py_ssize_t nd = PyTuple_GET_SIZE(oshape);
    if (nd != 2 && nd != 3) {
        PyErr_SetString(PyExc_ValueError, "shape must be 2D or 3D");
        return -1;
    }
    for (Py_ssize_t k = 0; k < nd; k++) {
        long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(oshape, k));
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (v < 1) {
            PyErr_Format(PyExc_ValueError, "shape[%zd] = %lld must be >= 1", k, v);
            return -1;
        }
        self->shape[k] = v;
    }
    if (!native_connectivity_ok((int)nd, connectivity)) {
        PyErr_Format(PyExc_ValueError, "connectivity must be %s for a %dD grid, got %d",
                     nd == 2 ? "4 or 8" : "6 or 26", (int)nd, connectivity);
        return -1;
    }
    gcut_options opt;
    if (parse_options(solver, threads, &opt) != GCUT_OK)
        return -1;
    opt.warm = warm;
    opt.device = device;
    gcut_grid_context *ctx = NULL;
    gcut_status st;
    int64_t shape[3] = {self->shape[0], self->shape[1], self->shape[2]};
    Py_BEGIN_ALLOW_THREADS st = gcut_grid_context_create((int)nd, shape, connectivity, &opt, &ctx);
    Py_END_ALLOW_THREADS if (st != GCUT_OK) {
        raise_status(st, "GridContext");
        return -1;
    }
    gcut_grid_context_free(self->ctx);
    self->ctx = ctx;
    self->ndim = (int)nd;
    self->dirs = connectivity;
    self->num_nodes = gcut_grid_num_nodes(gcut_grid_context_grid(ctx));
    return 0;
}

static int gctx_enter(GridContext *self) {
    if (self->ctx == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "GridContext is not initialised");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this GridContext is being used by another thread; "
                                            "use one per thread");
        return -1;
    }
    self->busy = 1;
    return 0;
}

/* _set(which, values int32 of num_nodes, check=True): which -2 source, -1 sink, 0.. a
 * direction; check=False when the caller has checked the signs (check_capacities). */
static PyObject *gctx_set(GridContext *self, PyObject *args) {
    int which, check = 1;
    PyObject *ov;
    if (!PyArg_ParseTuple(args, "iO|p", &which, &ov, &check))
        return NULL;
    PyArrayObject *av = as_array(ov, NPY_INT32, "values");
    if (av == NULL)
        return NULL;
    if (PyArray_SIZE(av) != self->num_nodes || which < -2 || which >= self->dirs) {
        PyErr_SetString(PyExc_ValueError, "_set: bad direction or size");
        return NULL;
    }
    if (check && check_nonneg(PyArray_DATA(av), 0, self->num_nodes, "capacities") < 0)
        return NULL;
    if (gctx_enter(self) < 0)
        return NULL;
    gcut_grid *g = gcut_grid_context_grid(self->ctx);
    int32_t *dst = which == -2   ? gcut_grid_terminal_data(g, GCUT_SOURCE)
                   : which == -1 ? gcut_grid_terminal_data(g, GCUT_SINK)
                                 : gcut_grid_dir_data(g, which);
    const int32_t *src = PyArray_DATA(av);
    size_t bytes = (size_t)self->num_nodes * sizeof(int32_t);
    Py_BEGIN_ALLOW_THREADS memcpy(dst, src, bytes);
    Py_END_ALLOW_THREADS self->busy = 0;
    Py_RETURN_NONE;
}

/* _mark(nodes int64, terminals=False): gcut_grid_context_mark_nodes, or with terminals
 * gcut_grid_context_mark_terminals (only the listed nodes' source/sink capacities changed). */
static PyObject *gctx_mark(GridContext *self, PyObject *args) {
    PyObject *on;
    int terminals = 0;
    if (!PyArg_ParseTuple(args, "O|p", &on, &terminals))
        return NULL;
    PyArrayObject *an = as_array(on, NPY_INT64, "nodes");
    if (an == NULL || gctx_enter(self) < 0)
        return NULL;
    const int64_t *ids = PyArray_DATA(an);
    int64_t count = PyArray_SIZE(an);
    gcut_status st = terminals ? gcut_grid_context_mark_terminals(self->ctx, ids, count)
                               : gcut_grid_context_mark_nodes(self->ctx, ids, count);
    self->busy = 0;
    if (st != GCUT_OK)
        return raise_status(st, terminals ? "mark_terminals" : "mark_nodes");
    Py_RETURN_NONE;
}

/* _solve() -> (flow, labels uint8 of the shape, stats dict) */
static PyObject *gctx_solve(GridContext *self, PyObject *noargs) {
    (void)noargs;
    if (gctx_enter(self) < 0)
        return NULL;
    npy_intp dims[3];
    for (int k = 0; k < self->ndim; k++)
        dims[k] = (npy_intp)self->shape[k];
    PyObject *labels = PyArray_SimpleNew(self->ndim, dims, NPY_UINT8);
    if (labels == NULL) {
        self->busy = 0;
        return NULL;
    }
    uint8_t *lab = PyArray_DATA((PyArrayObject *)labels);
    int64_t flow = 0;
    gcut_stats stats;
    gcut_status st;
    Py_BEGIN_ALLOW_THREADS st = gcut_grid_context_solve(self->ctx, &flow, lab, &stats);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (st != GCUT_OK) {
        Py_DECREF(labels);
        return raise_status(st, "GridContext.solve");
    }
    PyObject *sd = stats_dict(&stats);
    if (sd == NULL) {
        Py_DECREF(labels);
        return NULL;
    }
    return Py_BuildValue("LNN", (long long)flow, labels, sd);
}

static PyObject *gctx_get_info(GridContext *self, void *closure) {
    (void)closure;
    gcut_grid_context_info info;
    if (self->ctx == NULL || gcut_grid_context_get_info(self->ctx, &info) != GCUT_OK)
        Py_RETURN_NONE;
    return Py_BuildValue("{s:s,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L}", "solver", info.solver, "solves",
                         (long long)info.solves, "warm_solves", (long long)info.warm_solves,
                         "cold_fallbacks", (long long)info.cold_fallbacks, "changed_nodes",
                         (long long)info.changed_nodes, "device_bytes",
                         (long long)info.device_bytes, "incremental", (long long)info.incremental,
                         "sparse_stops", (long long)info.sparse_stops, "certified_stops",
                         (long long)info.certified_stops);
}

/* ------------------------------------------------------------------------------------------
 * DLPack (https://dmlc.github.io/dlpack/latest/, the Python array API's __dlpack__): device
 * arrays for gcut_grid_context_solve_device. The structs below are the DLPack ABI (dlpack.h,
 * versions 0.x and 1.x), declared here so the extension needs no DLPack header. A capsule is
 * borrowed, not consumed: it is left named "dltensor" / "dltensor_versioned", held by the
 * Python caller for the whole solve, and its producer's destructor frees it afterwards.
 * ---------------------------------------------------------------------------------------- */

enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BOOL = 6 };
enum { DL_CPU = 1, DL_CUDA = 2, DL_CUDA_HOST = 3, DL_CUDA_MANAGED = 13 };
#define DL_FLAG_READ_ONLY 1u

typedef struct {
    int32_t device_type, device_id;
} dl_device;

typedef struct {
    uint8_t code, bits;
    uint16_t lanes;
} dl_dtype;

typedef struct {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL = C-contiguous */
    uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed {
    dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed *self);
} dl_managed;

typedef struct dl_managed_versioned {
    struct {
        uint32_t major, minor;
    } version;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_versioned *self);
    uint64_t flags;
    dl_tensor dl_tensor;
} dl_managed_versioned;

/* The DLTensor of a capsule from __dlpack__, checked to be a C-contiguous array of ndim
 * dimensions of the given shape (shape NULL: any; its dims are then written to shape_out),
 * dtype (code, bits; with alt_code also that code), on a CUDA device (device_id, or any when
 * *device_id < 0: then set). writable: the producer must not have marked it read-only. Returns
 * the data pointer (byte_offset applied), or NULL with an exception naming the argument. */
static void *dl_view(PyObject *capsule, const char *name, int code, int alt_code, int bits,
                     int ndim, const int64_t *shape, int writable, int *device_id) {
    const dl_tensor *t = NULL;
    uint64_t flags = 0;
    if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        dl_managed_versioned *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (m == NULL)
            return NULL;
        if (m->version.major != 1) {
            PyErr_Format(PyExc_TypeError,
                         "%s: DLPack version %u.%u is not supported (gcut reads 1.x and the "
                         "unversioned 0.x capsules)",
                         name, (unsigned)m->version.major, (unsigned)m->version.minor);
            return NULL;
        }
        t = &m->dl_tensor;
        flags = m->flags;
    } else if (PyCapsule_IsValid(capsule, "dltensor")) {
        dl_managed *m = PyCapsule_GetPointer(capsule, "dltensor");
        if (m == NULL)
            return NULL;
        t = &m->dl_tensor;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "%s: __dlpack__() did not return an unused DLPack capsule (\"dltensor\" or "
                     "\"dltensor_versioned\")",
                     name);
        return NULL;
    }
    if (t->device.device_type != DL_CUDA && t->device.device_type != DL_CUDA_MANAGED) {
        PyErr_Format(PyExc_TypeError,
                     "%s is not a CUDA device array (DLPack device type %d); a GPU solve takes "
                     "CUDA arrays for every capacity",
                     name, (int)t->device.device_type);
        return NULL;
    }
    if (*device_id >= 0 && t->device.device_id != *device_id) {
        PyErr_Format(PyExc_ValueError, "%s is on CUDA device %d, not device %d", name,
                     (int)t->device.device_id, *device_id);
        return NULL;
    }
    if ((t->dtype.code != code && t->dtype.code != alt_code) || t->dtype.bits != bits ||
        t->dtype.lanes != 1) {
        PyErr_Format(PyExc_TypeError,
                     "%s must have dtype %s (DLPack code %d, %d bits), not code %d with %d bits "
                     "x %d lanes",
                     name, bits == 32 ? "int32" : "uint8 or bool", code, bits, (int)t->dtype.code,
                     (int)t->dtype.bits, (int)t->dtype.lanes);
        return NULL;
    }
    if (t->ndim != ndim) {
        PyErr_Format(PyExc_ValueError, "%s must have %d dimensions, got %d", name, ndim,
                     (int)t->ndim);
        return NULL;
    }
    int64_t expect = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        if (shape != NULL && t->shape[k] != shape[k]) {
            PyErr_Format(PyExc_ValueError, "%s has size %lld on axis %d, the grid needs %lld", name,
                         (long long)t->shape[k], k, (long long)shape[k]);
            return NULL;
        }
        if (t->strides != NULL && t->shape[k] != 1 && t->strides[k] != expect) {
            PyErr_Format(PyExc_ValueError,
                         "%s must be C-contiguous (axis %d has stride %lld elements, not %lld)",
                         name, k, (long long)t->strides[k], (long long)expect);
            return NULL;
        }
        expect *= t->shape[k];
    }
    if (writable && (flags & DL_FLAG_READ_ONLY)) {
        PyErr_Format(PyExc_ValueError,
                     "%s is read-only (DLPack flag); labels need a writable array", name);
        return NULL;
    }
    *device_id = t->device.device_id;
    return (char *)t->data + t->byte_offset;
}

/* _solve_device(source, sink, weights, labels | None, stream int, device) -> (flow, stats):
 * capsules from __dlpack__ of CUDA int32 arrays (source, sink of the grid's shape; weights
 * (dirs, *shape), or a tuple of dirs capsules of the grid's shape); labels a uint8/bool device
 * array of the grid's shape or None; stream the cudaStream_t as an int (0: the legacy default
 * stream). */
static PyObject *gctx_solve_device(GridContext *self, PyObject *args) {
    PyObject *os, *ot, *ow, *ol;
    unsigned long long stream;
    int device;
    if (!PyArg_ParseTuple(args, "OOOOKi", &os, &ot, &ow, &ol, &stream, &device))
        return NULL;
    if (self->ctx == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "GridContext is not initialised");
        return NULL;
    }
    int64_t wshape[4];
    wshape[0] = self->dirs;
    for (int k = 0; k < self->ndim; k++)
        wshape[k + 1] = self->shape[k];
    int dev = device;
    const int32_t *src =
        dl_view(os, "source", DL_INT, DL_INT, 32, self->ndim, self->shape, 0, &dev);
    const int32_t *snk =
        src ? dl_view(ot, "sink", DL_INT, DL_INT, 32, self->ndim, self->shape, 0, &dev) : NULL;
    /* weights: one (dirs, *shape) array, or a sequence of dirs arrays of the grid's shape. */
    const int32_t *dirs[26];
    int seq = PyTuple_Check(ow) || PyList_Check(ow);
    if (snk == NULL)
        return NULL;
    if (seq) {
        if (PySequence_Size(ow) != self->dirs) {
            PyErr_Format(PyExc_ValueError, "weights: %zd arrays given, the grid has %d directions",
                         PySequence_Size(ow), self->dirs);
            return NULL;
        }
        for (int d = 0; d < self->dirs; d++) {
            char name[32];
            snprintf(name, sizeof name, "weights[%d]", d);
            PyObject *item = PySequence_GetItem(ow, d);
            if (item == NULL)
                return NULL;
            dirs[d] = dl_view(item, name, DL_INT, DL_INT, 32, self->ndim, self->shape, 0, &dev);
            Py_DECREF(item); /* the sequence keeps the capsule alive */
            if (dirs[d] == NULL)
                return NULL;
        }
    } else {
        const int32_t *w =
            dl_view(ow, "weights", DL_INT, DL_INT, 32, self->ndim + 1, wshape, 0, &dev);
        if (w == NULL)
            return NULL;
        for (int d = 0; d < self->dirs; d++)
            dirs[d] = w + (size_t)d * (size_t)self->num_nodes;
    }
    uint8_t *labels = NULL;
    if (ol != Py_None && (labels = dl_view(ol, "labels", DL_UINT, DL_BOOL, 8, self->ndim,
                                           self->shape, 1, &dev)) == NULL)
        return NULL;
    if (gctx_enter(self) < 0)
        return NULL;
    int64_t flow = 0;
    gcut_stats stats;
    gcut_status st;
    void *strm = (void *)(uintptr_t)stream;
    Py_BEGIN_ALLOW_THREADS st =
        gcut_grid_context_solve_device(self->ctx, src, snk, dirs, labels, strm, &flow, &stats);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (st != GCUT_OK)
        return raise_status(st, "GridContext.solve (device arrays)");
    PyObject *sd = stats_dict(&stats);
    if (sd == NULL)
        return NULL;
    return Py_BuildValue("LN", (long long)flow, sd);
}

static PyMethodDef gctx_methods[] = {
    {"_set", (PyCFunction)gctx_set, METH_VARARGS, "internal"},
    {"_mark", (PyCFunction)gctx_mark, METH_VARARGS, "internal"},
    {"_solve", (PyCFunction)gctx_solve, METH_NOARGS, "internal"},
    {"_solve_device_c", (PyCFunction)gctx_solve_device, METH_VARARGS, "internal"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef gctx_getset[] = {
    {"info", (getter)gctx_get_info, NULL,
     "what the context has done: solver, solves, warm_solves, cold_fallbacks, changed_nodes, "
     "device_bytes, and cuda-grid's warm stops: incremental (finished by the incremental "
     "start), sparse_stops and certified_stops (proven by the closure certificate after the "
     "sparse phase or the warm pull, docs/CUDA-GRID.md)",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject GridContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gcut._gcut.GridContextCore",
    .tp_basicsize = sizeof(GridContext),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C state behind gcut.GridContext (use gcut.GridContext).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)gctx_init,
    .tp_dealloc = (destructor)gctx_dealloc,
    .tp_methods = gctx_methods,
    .tp_getset = gctx_getset,
};

/* ------------------------------------------------------------------------------------------
 * QPBO (include/gcut.h, gcut_qpbo_*)
 * ---------------------------------------------------------------------------------------- */

/* qpbo(unary (N, 2), pairs (M, 2) int64, pairwise (M, 4), scale, blocks | None, num_blocks,
 *      solver, threads) -> (labels int8 (N,), result dict). unary and pairwise are int32, or
 * float64 with scale > 0 (gcut_qpbo_add_*_float round and range-check them). */
static PyObject *mod_qpbo(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *ou, *op, *ow, *ob;
    double scale;
    int num_blocks, threads;
    const char *solver;
    if (!PyArg_ParseTuple(args, "OOOdOisi", &ou, &op, &ow, &scale, &ob, &num_blocks, &solver,
                          &threads))
        return NULL;
    int type = scale > 0 ? NPY_FLOAT64 : NPY_INT32;
    PyArrayObject *au = as_array(ou, type, "unary"),
                  *ap = au ? as_array(op, NPY_INT64, "edges") : 0,
                  *aw = ap ? as_array(ow, type, "pairwise") : 0, *ab = NULL;
    if (aw == NULL)
        return NULL;
    if (PyArray_NDIM(au) != 2 || PyArray_DIM(au, 1) != 2) {
        PyErr_SetString(PyExc_ValueError, "unary must have shape (num_nodes, 2): E(0), E(1)");
        return NULL;
    }
    if (PyArray_NDIM(ap) != 2 || PyArray_DIM(ap, 1) != 2) {
        PyErr_SetString(PyExc_ValueError, "edges must have shape (num_terms, 2): node pairs");
        return NULL;
    }
    if (PyArray_NDIM(aw) != 2 || PyArray_DIM(aw, 1) != 4 ||
        PyArray_DIM(aw, 0) != PyArray_DIM(ap, 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "pairwise must have shape (len(edges), 4): E00, E01, E10, E11");
        return NULL;
    }
    int64_t n = PyArray_DIM(au, 0), m = PyArray_DIM(ap, 0);
    if (ob != Py_None) {
        ab = as_array(ob, NPY_INT32, "blocks");
        if (ab == NULL)
            return NULL;
        if (PyArray_SIZE(ab) != n) {
            PyErr_SetString(PyExc_ValueError, "blocks must have one entry per node");
            return NULL;
        }
    }
    if (threads < 0) {
        PyErr_Format(PyExc_ValueError, "threads must be >= 0 (0 = all cores), got %d", threads);
        return NULL;
    }
    gcut_options opt; /* the solver name ("qpbo", "pqpbo", "auto") is checked by the solve */
    gcut_options_init(&opt);
    opt.solver = solver;
    opt.threads = threads;
    gcut_qpbo *q = NULL;
    gcut_status st = gcut_qpbo_create(n, m, &q);
    if (st != GCUT_OK)
        return raise_status(st, "qpbo");
    npy_intp dims[1] = {(npy_intp)n};
    PyObject *labels = PyArray_SimpleNew(1, dims, NPY_INT8);
    if (labels == NULL) {
        gcut_qpbo_free(q);
        return NULL;
    }
    int8_t *lab = PyArray_DATA((PyArrayObject *)labels);
    const void *u = PyArray_DATA(au), *w = PyArray_DATA(aw);
    const int64_t *pairs = PyArray_DATA(ap);
    const int32_t *blocks = ab ? PyArray_DATA(ab) : NULL;
    gcut_qpbo_result res;
    memset(&res, 0, sizeof res);
    const char *stage = "qpbo (unary)";
    Py_BEGIN_ALLOW_THREADS;
    if (scale > 0)
        st = gcut_qpbo_set_float_scale(q, scale);
    for (int64_t i = 0; i < n && st == GCUT_OK; i++)
        st = scale > 0 ? gcut_qpbo_add_unary_float(q, i, ((const double *)u)[2 * i],
                                                   ((const double *)u)[2 * i + 1])
                       : gcut_qpbo_add_unary(q, i, ((const int32_t *)u)[2 * i],
                                             ((const int32_t *)u)[2 * i + 1]);
    if (st == GCUT_OK)
        stage = "qpbo (pairwise)";
    for (int64_t k = 0; k < m && st == GCUT_OK; k++) {
        if (scale > 0) {
            const double *e = (const double *)w + 4 * k;
            st = gcut_qpbo_add_pairwise_float(q, pairs[2 * k], pairs[2 * k + 1], e[0], e[1], e[2],
                                              e[3], NULL);
        } else {
            const int32_t *e = (const int32_t *)w + 4 * k;
            st = gcut_qpbo_add_pairwise(q, pairs[2 * k], pairs[2 * k + 1], e[0], e[1], e[2], e[3],
                                        NULL);
        }
    }
    if (st == GCUT_OK && blocks != NULL) {
        stage = "qpbo (blocks)";
        st = gcut_qpbo_set_blocks(q, blocks, num_blocks);
    }
    if (st == GCUT_OK) {
        stage = "qpbo";
        st = gcut_qpbo_solve(q, &opt, lab, &res);
    }
    Py_END_ALLOW_THREADS;
    gcut_qpbo_free(q);
    if (st != GCUT_OK) {
        Py_DECREF(labels);
        return raise_status(st, stage);
    }
    PyObject *d =
        Py_BuildValue("{s:s,s:L,s:L,s:L,s:i,s:i,s:L,s:L,s:d,s:d,s:d,s:K,s:d}", "solver", res.solver,
                      "labeled", (long long)res.labeled, "lower_bound", (long long)res.lower_bound,
                      "energy", (long long)res.energy, "stage2", res.stage2, "threads", res.threads,
                      "blocks", (long long)res.blocks, "merges", (long long)res.merges, "build_ms",
                      res.build_ms, "solve_ms", res.solve_ms, "label_ms", res.label_ms, "bytes",
                      (unsigned long long)res.bytes, "float_scale", res.float_scale);
    if (d == NULL) {
        Py_DECREF(labels);
        return NULL;
    }
    return Py_BuildValue("NN", labels, d);
}

/* ------------------------------------------------------------------------------------------
 * Images and segmentation
 * ---------------------------------------------------------------------------------------- */

/* View an array (H,W), (H,W,C), or with volume (D,H,W) / (D,H,W,C), uint8 or uint16, as a
 * gcut_image borrowing its pixels. */
static int image_view(PyObject *obj, int volume, const char *name, gcut_image *img) {
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a numpy array", name);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    int type = PyArray_TYPE(a);
    if (type != NPY_UINT8 && type != NPY_UINT16) {
        PyErr_Format(PyExc_TypeError, "%s must have dtype uint8 or uint16, not %S", name,
                     (PyObject *)PyArray_DESCR(a));
        return -1;
    }
    if (as_array(obj, type, name) == NULL)
        return -1;
    int nd = PyArray_NDIM(a), spatial = volume ? 3 : 2;
    if (nd != spatial && nd != spatial + 1) {
        PyErr_Format(PyExc_ValueError, "%s must have shape %s, got %d dimensions", name,
                     volume ? "(D, H, W) or (D, H, W, C)" : "(H, W) or (H, W, C)", nd);
        return -1;
    }
    int channels = nd == spatial ? 1 : (int)PyArray_DIM(a, nd - 1);
    if (channels < 1 || channels > 4) {
        PyErr_Format(PyExc_ValueError, "%s must have 1 to 4 channels, got %d", name, channels);
        return -1;
    }
    memset(img, 0, sizeof *img);
    img->depth = volume ? PyArray_DIM(a, 0) : 1;
    img->height = PyArray_DIM(a, volume ? 1 : 0);
    img->width = PyArray_DIM(a, volume ? 2 : 1);
    img->channels = channels;
    img->bit_depth = type == NPY_UINT8 ? 8 : 16;
    img->pixels = PyArray_DATA(a);
    if (img->width < 1 || img->height < 1 || img->depth < 1) {
        PyErr_Format(PyExc_ValueError, "%s is empty", name);
        return -1;
    }
    return 0;
}

/* segment(image, seeds | None, volume, encoding, lambda, sigma, connectivity, model, components,
 *         bins, scale, seed, solver, threads, iterations, rect (x, y, w, h) | None, warm)
 *   -> (mask bool array, report dict). As `gcut segment`: GrabCut rounds (gcut_grabcut) with a
 * box or unless iterations == 1, else one cut (gcut_segment). */
static PyObject *mod_segment(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *oimg, *oseeds, *orect;
    int volume, encoding, connectivity, model, components, bins, threads, iterations, warm;
    double lambda, sigma, scale;
    unsigned long long seed;
    const char *solver;
    if (!PyArg_ParseTuple(args, "OOpiddiiiidKsiiOp", &oimg, &oseeds, &volume, &encoding, &lambda,
                          &sigma, &connectivity, &model, &components, &bins, &scale, &seed, &solver,
                          &threads, &iterations, &orect, &warm))
        return NULL;
    gcut_rect rect = {0, 0, 0, 0};
    int has_rect = orect != Py_None, has_seeds = oseeds != Py_None;
    if (has_rect && !PyArg_ParseTuple(orect, "LLLL", &rect.x, &rect.y, &rect.width, &rect.height))
        return NULL;
    if (!has_seeds && !has_rect) {
        PyErr_SetString(PyExc_ValueError, "seeds are needed without a rect");
        return NULL;
    }
    gcut_image img, smask;
    memset(&smask, 0, sizeof smask);
    if (image_view(oimg, volume, "image", &img) < 0 ||
        (has_seeds && image_view(oseeds, volume, "seeds", &smask) < 0))
        return NULL;
    if (has_seeds &&
        (smask.width != img.width || smask.height != img.height || smask.depth != img.depth)) {
        PyErr_SetString(PyExc_ValueError, "seeds must have the image's spatial shape");
        return NULL;
    }
    gcut_options opt;
    if (parse_options(solver, threads, &opt) != GCUT_OK)
        return NULL;
    gcut_seg_params p;
    gcut_seg_params_init(&p);
    p.lambda = lambda;
    p.sigma = sigma;
    p.connectivity = connectivity;
    p.model = (gcut_model_kind)model;
    p.gmm_components = components;
    p.histogram_bins = bins;
    p.scale = scale;
    p.seed = seed;
    p.iterations = iterations;
    opt.warm = warm;
    int nd = volume ? 3 : 2;
    npy_intp dims[3];
    for (int k = 0; k < nd; k++)
        dims[k] = PyArray_DIM((PyArrayObject *)oimg, k);
    PyObject *mask = PyArray_SimpleNew(nd, dims, NPY_BOOL);
    if (mask == NULL)
        return NULL;
    size_t n = (size_t)img.width * (size_t)img.height * (size_t)img.depth;
    uint8_t *codes = PyMem_Malloc(n);
    if (codes == NULL) {
        Py_DECREF(mask);
        return PyErr_NoMemory();
    }
    uint8_t *out = PyArray_DATA((PyArrayObject *)mask);
    gcut_seg_report rep;
    memset(&rep, 0, sizeof rep);
    const char *stage = "seeds";
    gcut_status st = GCUT_OK;
    Py_BEGIN_ALLOW_THREADS;
    if (has_seeds)
        st = gcut_seeds_from_mask(&smask, (gcut_seed_encoding)encoding, codes);
    if (st == GCUT_OK) {
        stage = "segment";
        if (has_rect || iterations != 1)
            st = gcut_grabcut(&img, has_rect ? &rect : NULL, has_seeds ? codes : NULL, &p, &opt,
                              out, &rep);
        else
            st = gcut_segment(&img, codes, &p, &opt, out, &rep);
    }
    Py_END_ALLOW_THREADS;
    PyMem_Free(codes);
    if (st != GCUT_OK) {
        Py_DECREF(mask);
        return raise_status(st, stage);
    }
    PyObject *sd = stats_dict(&rep.stats);
    if (sd == NULL) {
        Py_DECREF(mask);
        return NULL;
    }
    const char *model_name = rep.model == GCUT_MODEL_GMM ? "gmm" : "hist";
    PyObject *report =
        Py_BuildValue("{s:L,s:d,s:d,s:d,s:i,s:s,s:L,s:L,s:d,s:d,s:d,s:L,s:s,s:N}", "flow",
                      (long long)rep.stats.flow, "scale", rep.scale, "sigma", rep.sigma, "lambda",
                      rep.lambda, "connectivity", rep.connectivity, "model", model_name,
                      "seeds_foreground", (long long)rep.seeds_foreground, "seeds_background",
                      (long long)rep.seeds_background, "model_ms", rep.model_ms, "build_ms",
                      rep.build_ms, "solve_ms", rep.solve_ms, "foreground_pixels",
                      (long long)rep.foreground_pixels, "solver", rep.stats.solver, "stats", sd);
    if (report == NULL) {
        Py_DECREF(mask);
        return NULL;
    }
    return Py_BuildValue("NN", mask, report);
}

/* read_image(path) -> array (H, W) or (H, W, C), uint8 or uint16 */
static PyObject *mod_read_image(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *opath;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &opath))
        return NULL;
    gcut_image img;
    gcut_status st;
    const char *path = PyBytes_AS_STRING(opath);
    Py_BEGIN_ALLOW_THREADS st = gcut_image_read(path, &img);
    Py_END_ALLOW_THREADS Py_DECREF(opath);
    if (st != GCUT_OK)
        return raise_status(st, "read_image");
    npy_intp dims[3] = {(npy_intp)img.height, (npy_intp)img.width, img.channels};
    PyObject *arr = PyArray_SimpleNew(img.channels == 1 ? 2 : 3, dims,
                                      img.bit_depth == 8 ? NPY_UINT8 : NPY_UINT16);
    if (arr != NULL)
        memcpy(PyArray_DATA((PyArrayObject *)arr), img.pixels,
               (size_t)PyArray_NBYTES((PyArrayObject *)arr));
    gcut_image_free(&img);
    return arr;
}

/* write_image(path, array) */
static PyObject *mod_write_image(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *opath, *oarr;
    if (!PyArg_ParseTuple(args, "O&O", PyUnicode_FSConverter, &opath, &oarr))
        return NULL;
    gcut_image img;
    if (image_view(oarr, 0, "image", &img) < 0) {
        Py_DECREF(opath);
        return NULL;
    }
    gcut_status st;
    const char *path = PyBytes_AS_STRING(opath);
    Py_BEGIN_ALLOW_THREADS st = gcut_image_write(path, &img);
    Py_END_ALLOW_THREADS Py_DECREF(opath);
    if (st != GCUT_OK)
        return raise_status(st, "write_image");
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------------
 * Video: gcut_video_* (src/video, docs/VIDEO.md; Garrett & Saito 2009), one frame per call
 * ---------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD gcut_video *video;
    int busy;
    int64_t width, height;
} VideoCore;

static void video_dealloc(VideoCore *self) {
    gcut_video_free(self->video);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* VideoCore(height, width, lambda, sigma, connectivity, bins, forget, band_min, band_motion,
 *           band_max, restrict_band, check_colour, colour_reach, warm, verify, model,
 *           components, seed, solver, threads) */
static int video_init(VideoCore *self, PyObject *args, PyObject *kwds) {
    (void)kwds;
    long long h, w;
    gcut_video_params p;
    gcut_video_params_init(&p);
    int model, components, threads;
    unsigned long long seed;
    const char *solver;
    if (!PyArg_ParseTuple(args, "LLddiiddddppdppiiKsi", &h, &w, &p.seg.lambda, &p.seg.sigma,
                          &p.seg.connectivity, &p.seg.histogram_bins, &p.forget, &p.band_min,
                          &p.band_motion, &p.band_max, &p.restrict_band, &p.check_colour,
                          &p.colour_reach, &p.warm, &p.verify, &model, &components, &seed, &solver,
                          &threads))
        return -1;
    if (model >= 0)
        p.seg.model = (gcut_model_kind)model;
    p.seg.gmm_components = components;
    p.seg.seed = seed;
    gcut_options opt;
    if (parse_options(solver, threads, &opt) != GCUT_OK)
        return -1;
    gcut_video *v = NULL;
    gcut_status st;
    Py_BEGIN_ALLOW_THREADS st = gcut_video_create(w, h, &p, &opt, &v);
    Py_END_ALLOW_THREADS if (st != GCUT_OK) {
        raise_status(st, "Video");
        return -1;
    }
    gcut_video_free(self->video);
    self->video = v;
    self->width = w;
    self->height = h;
    return 0;
}

/* _push(frame (H, W[, C]) uint8/uint16, init | None, init_kind (0 mask, 1 seeds), encoding)
 *   -> (mask uint8 (H, W) of 1/0, report dict). init: with kind 0 a (H, W) uint8 array
 * (nonzero = foreground); with kind 1 a seed image read by encoding (gcut_seeds_from_mask). */
static PyObject *video_push(VideoCore *self, PyObject *args) {
    PyObject *oframe, *oinit;
    int kind, encoding;
    if (!PyArg_ParseTuple(args, "OOii", &oframe, &oinit, &kind, &encoding))
        return NULL;
    if (self->video == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Video is not initialised");
        return NULL;
    }
    gcut_image frame, init_img;
    if (image_view(oframe, 0, "frame", &frame) < 0)
        return NULL;
    if (frame.width != self->width || frame.height != self->height) {
        PyErr_Format(PyExc_ValueError, "frame is %lldx%lld (HxW), the video is %lldx%lld",
                     (long long)frame.height, (long long)frame.width, (long long)self->height,
                     (long long)self->width);
        return NULL;
    }
    int has_init = oinit != Py_None;
    if (has_init) {
        const char *name = kind == GCUT_VIDEO_INIT_SEEDS ? "seeds" : "init";
        if (image_view(oinit, 0, name, &init_img) < 0)
            return NULL;
        if (init_img.width != self->width || init_img.height != self->height) {
            PyErr_Format(PyExc_ValueError, "%s is %lldx%lld (HxW), the video is %lldx%lld", name,
                         (long long)init_img.height, (long long)init_img.width,
                         (long long)self->height, (long long)self->width);
            return NULL;
        }
        if (kind == GCUT_VIDEO_INIT_MASK && (init_img.channels != 1 || init_img.bit_depth != 8)) {
            PyErr_SetString(PyExc_ValueError, "init must be a (H, W) uint8 or bool mask");
            return NULL;
        }
    }
    npy_intp dims[2] = {(npy_intp)self->height, (npy_intp)self->width};
    PyObject *mask = PyArray_SimpleNew(2, dims, NPY_UINT8);
    if (mask == NULL)
        return NULL;
    size_t n = (size_t)self->width * (size_t)self->height;
    uint8_t *codes = NULL;
    if (has_init && kind == GCUT_VIDEO_INIT_SEEDS && (codes = PyMem_Malloc(n)) == NULL) {
        Py_DECREF(mask);
        return PyErr_NoMemory();
    }
    if (self->busy) {
        PyMem_Free(codes);
        Py_DECREF(mask);
        PyErr_SetString(PyExc_RuntimeError, "this Video is being used by another thread; use "
                                            "one per thread");
        return NULL;
    }
    self->busy = 1;
    gcut_video_report rep;
    memset(&rep, 0, sizeof rep);
    gcut_status st = GCUT_OK;
    const char *stage = "seeds";
    uint8_t *out = PyArray_DATA((PyArrayObject *)mask);
    Py_BEGIN_ALLOW_THREADS;
    const uint8_t *init = NULL;
    if (has_init && kind == GCUT_VIDEO_INIT_SEEDS) {
        st = gcut_seeds_from_mask(&init_img, (gcut_seed_encoding)encoding, codes);
        init = codes;
    } else if (has_init) {
        init = init_img.pixels;
    }
    if (st == GCUT_OK) {
        stage = "Video.push";
        st = gcut_video_push_frame(self->video, &frame, init, (gcut_video_init)kind, &rep);
    }
    if (st == GCUT_OK)
        st = gcut_video_get_mask(self->video, out);
    Py_END_ALLOW_THREADS;
    self->busy = 0;
    PyMem_Free(codes);
    if (st != GCUT_OK) {
        Py_DECREF(mask);
        return raise_status(st, stage);
    }
    PyObject *r = Py_BuildValue(
        "{s:L,s:d,s:d,s:d,s:d,s:L,s:L,s:L,s:s}", "frame", (long long)rep.frame, "model_ms",
        rep.model_ms, "build_ms", rep.build_ms, "solve_ms", rep.solve_ms, "band", rep.band,
        "graph_nodes", (long long)rep.graph_nodes, "flow", (long long)rep.flow, "foreground_pixels",
        (long long)rep.foreground_pixels, "solver", rep.solver);
    if (r == NULL) {
        Py_DECREF(mask);
        return NULL;
    }
    return Py_BuildValue("NN", mask, r);
}

static PyObject *video_get_frames(VideoCore *self, void *closure) {
    (void)closure;
    return PyLong_FromLongLong(self->video ? gcut_video_frames(self->video) : 0);
}

static PyMethodDef video_methods[] = {{"_push", (PyCFunction)video_push, METH_VARARGS, "internal"},
                                      {NULL, NULL, 0, NULL}};

static PyGetSetDef video_getset[] = {
    {"frames", (getter)video_get_frames, NULL, "frames segmented so far", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject VideoCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gcut._gcut.VideoCore",
    .tp_basicsize = sizeof(VideoCore),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C state behind gcut.Video (use gcut.Video).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)video_init,
    .tp_dealloc = (destructor)video_dealloc,
    .tp_methods = video_methods,
    .tp_getset = video_getset,
};

/* ------------------------------------------------------------------------------------------
 * Library-wide calls
 * ---------------------------------------------------------------------------------------- */

static PyObject *mod_solvers(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    int n = gcut_solver_count();
    PyObject *list = PyList_New(0);
    for (int i = 0; list != NULL && i < n; i++) {
        gcut_solver_info info;
        if (gcut_solver_get(i, &info) != GCUT_OK)
            continue;
        PyObject *d = Py_BuildValue(
            "{s:s,s:s,s:O,s:O,s:O,s:O,s:O}", "name", info.name, "description", info.description,
            "graphs", (info.flags & GCUT_TAKES_GRAPH) ? Py_True : Py_False, "grids",
            (info.flags & (GCUT_TAKES_GRID | GCUT_TAKES_GRAPH)) ? Py_True : Py_False, "gpu",
            (info.flags & GCUT_NEEDS_GPU) ? Py_True : Py_False, "warm",
            (info.flags & GCUT_WARM) ? Py_True : Py_False, "available",
            info.available ? Py_True : Py_False);
        if (d == NULL || PyList_Append(list, d) < 0) {
            Py_XDECREF(d);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(d);
    }
    return list;
}

/* check_capacities(array int32, name): raises ValueError naming name and the first negative
 * entry (flat index); one pass with the GIL released. */
static PyObject *mod_check_capacities(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *oa;
    const char *name;
    if (!PyArg_ParseTuple(args, "Os", &oa, &name))
        return NULL;
    PyArrayObject *a = as_array(oa, NPY_INT32, name);
    if (a == NULL || check_nonneg(PyArray_DATA(a), 0, PyArray_SIZE(a), name) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *mod_set_memory_limit(PyObject *mod, PyObject *args) {
    (void)mod;
    unsigned long long bytes;
    if (!PyArg_ParseTuple(args, "K", &bytes))
        return NULL;
    gcut_set_memory_limit(bytes);
    Py_RETURN_NONE;
}

static PyObject *mod_memory_limit(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    return PyLong_FromUnsignedLongLong(gcut_memory_limit());
}

static PyObject *mod_memory_in_use(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    return PyLong_FromUnsignedLongLong(gcut_memory_in_use());
}

static PyObject *mod_device_init(PyObject *mod, PyObject *args) {
    (void)mod;
    int device;
    if (!PyArg_ParseTuple(args, "i", &device))
        return NULL;
    gcut_status st;
    Py_BEGIN_ALLOW_THREADS st = gcut_device_init(device);
    Py_END_ALLOW_THREADS if (st != GCUT_OK) return raise_status(st, "device_init");
    Py_RETURN_NONE;
}

static PyObject *mod_release_device_cache(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    Py_BEGIN_ALLOW_THREADS gcut_device_release_cache();
    Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"grid_maxflow", mod_grid_maxflow, METH_VARARGS, "internal: see gcut.grid_maxflow"},
    {"segment", mod_segment, METH_VARARGS, "internal: see gcut.segment"},
    {"qpbo", mod_qpbo, METH_VARARGS, "internal: see gcut.qpbo"},
    {"read_image", mod_read_image, METH_VARARGS, "internal: see gcut.read_image"},
    {"write_image", mod_write_image, METH_VARARGS, "internal: see gcut.write_image"},
    {"solvers", mod_solvers, METH_NOARGS, "internal: see gcut.solvers"},
    {"check_capacities", mod_check_capacities, METH_VARARGS, "internal"},
    {"set_memory_limit", mod_set_memory_limit, METH_VARARGS, "internal"},
    {"memory_limit", mod_memory_limit, METH_NOARGS, "internal"},
    {"memory_in_use", mod_memory_in_use, METH_NOARGS, "internal"},
    {"device_init", mod_device_init, METH_VARARGS, "internal: see gcut.device_init"},
    {"release_device_cache", mod_release_device_cache, METH_NOARGS,
     "internal: see gcut.release_device_cache"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_gcut",
    .m_doc = "C core of the gcut package (use `import gcut`).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__gcut(void) {
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (PyType_Ready(&GraphCoreType) < 0 || PyType_Ready(&GridContextType) < 0 ||
        PyType_Ready(&VideoCoreType) < 0)
        goto fail;
    gcut_error_type = PyErr_NewExceptionWithDoc(
        "gcut.GcutError",
        "A failure of the gcut library that is not a bad argument: no GPU, a device error, a "
        "failed cut certificate, an unsupported operation.",
        PyExc_RuntimeError, NULL);
    if (gcut_error_type == NULL)
        goto fail;
    Py_INCREF(&GraphCoreType);
    Py_INCREF(&GridContextType);
    Py_INCREF(&VideoCoreType);
    if (PyModule_AddObject(m, "GraphCore", (PyObject *)&GraphCoreType) < 0 ||
        PyModule_AddObject(m, "GridContextCore", (PyObject *)&GridContextType) < 0 ||
        PyModule_AddObject(m, "VideoCore", (PyObject *)&VideoCoreType) < 0 ||
        PyModule_AddObject(m, "GcutError", gcut_error_type) < 0 ||
        PyModule_AddStringConstant(m, "version", gcut_version_string()) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
