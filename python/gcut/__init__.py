"""gcut: exact s-t minimum cut / maximum flow ("graph cuts") for numpy arrays.

A thin, vectorised layer over the gcut C library (its one header is include/gcut.h):

* :class:`Graph` - PyMaxflow's interface (``add_nodes``, ``add_edges``, ``add_tedges``,
  ``add_grid_nodes``, ``add_grid_edges``, ``add_grid_tedges``, ``maxflow``,
  ``get_grid_segments`` ...), so existing code ports by changing the import. Grids whose
  structure is a 4/8-connected (2D) or 6/26-connected (3D) neighbourhood are stored as native
  gcut grids (no per-edge storage) and can be solved by the parallel and GPU solvers.
* :func:`grid_maxflow` - one call from dense capacity arrays to ``(flow, labels)``.
* :func:`segment` - Boykov-Jolly interactive segmentation from an image and a seed mask,
  the library call behind ``gcut segment``.
* :func:`read_image` / :func:`write_image` - the library's PNG / JPEG / PGM / PPM I/O.
* :func:`solvers` - the solvers of this build and whether each can run here.

Capacities are integers (int32; int64 input is accepted when every value fits). Float input
raises ``TypeError`` unless a ``scale=`` is given: capacities are then
``round(value * scale)`` and the scale is reported back; nothing is rescaled silently. Every
flow is an exact Python ``int``. The GIL is released while a graph is solved and while large
arrays are copied in, so several graphs can be solved at once from threads (one ``Graph``
per thread). Labels follow PyMaxflow: ``1`` / ``True`` means the sink side of the cut.
"""

import math as _math
import numbers as _numbers

import numpy as _np

from . import _gcut
from ._gcut import GcutError

__version__ = _gcut.version
__all__ = [
    "Graph",
    "GridResult",
    "GridContext",
    "GcutError",
    "grid_maxflow",
    "segment",
    "grabcut",
    "Video",
    "segment_video",
    "qpbo",
    "QPBOResult",
    "read_image",
    "write_image",
    "write_png",
    "solvers",
    "set_memory_limit",
    "memory_limit",
    "memory_in_use",
    "device_init",
    "release_device_cache",
    "vonNeumann_structure",
    "moore_structure",
]

_INT32_MAX = 2**31 - 1
_DLPACK_CPU = 1  # DLDeviceType kDLCPU


# ------------------------------------------------------------------------------------------
# Argument conversion: every array goes through here, so every error names its argument.
# ------------------------------------------------------------------------------------------


def _host_array(x, name):
    """numpy view of x; DLPack objects on the CPU are taken without a copy."""
    if isinstance(x, _np.ndarray):
        return x
    dev = getattr(x, "__dlpack_device__", None)
    if dev is not None and not isinstance(x, (_numbers.Number, list, tuple)):
        kind = dev()[0]
        if kind != _DLPACK_CPU:
            # Only the GPU solver takes device arrays (GridContext(solver="cuda-grid").solve,
            # grid_maxflow): anywhere else say so instead of copying behind the caller's back.
            raise TypeError(
                f"{name} is a device array (DLPack device type {kind}); here gcut takes host "
                f"arrays (device arrays go to GridContext(..., solver='cuda-grid').solve and "
                f"grid_maxflow): copy it to the host first (CuPy: .get(), PyTorch: "
                f".cpu().numpy())"
            )
        return _np.from_dlpack(x)
    try:
        return _np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} cannot be read as an array: {exc}") from None


_DLPACK_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


def _dl_device(x):
    """(device_type, device_id) of a DLPack object other than a numpy array, else None."""
    if isinstance(x, (_np.ndarray, _numbers.Number, list, tuple)) or x is None:
        return None
    f = getattr(x, "__dlpack_device__", None)
    if f is None:
        return None
    dev = f()
    return int(dev[0]), int(dev[1])


def _is_cuda(x):
    dev = _dl_device(x)
    return dev is not None and dev[0] in _DLPACK_CUDA


def _dl_stream(stream):
    """(the stream for __dlpack__, the cudaStream_t for the C library as an int) of a stream
    argument: None (the legacy default stream), an int handle, or a CuPy / PyTorch stream."""
    if stream is None:
        return 1, 0
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        if hasattr(stream, attr) and not isinstance(stream, _numbers.Integral):
            stream = getattr(stream, attr)
            break
    if isinstance(stream, bool) or not isinstance(stream, _numbers.Integral):
        raise TypeError(f"stream must be None, a cudaStream_t as an int, or a CuPy / PyTorch "
                        f"stream, got {stream!r}")
    stream = int(stream)
    if stream <= 0 or stream >= 2**64:
        raise ValueError(f"stream must be a CUDA stream handle (1 = the legacy default stream, "
                         f"2 = the per-thread default stream, else a cudaStream_t), got {stream}")
    return stream, 0 if stream == 1 else stream


def _dl_capsule(x, stream):
    """x.__dlpack__ for a consumer on this stream: DLPack 1.x capsules where the producer has
    them (max_version), else the unversioned ones of older producers."""
    try:
        return x.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:  # producers before DLPack 1.0 take no max_version
        return x.__dlpack__(stream=stream)


def _device_labels(like, shape, device_id):
    """A bool device array for the labels, made by the library of ``like`` (CuPy or PyTorch),
    or None when gcut does not know how to allocate memory for it."""
    lib = type(like).__module__.split(".")[0]
    if lib == "cupy":
        import cupy

        with cupy.cuda.Device(device_id):
            return cupy.empty(shape, dtype=cupy.bool_)
    if lib == "torch":
        import torch

        return torch.empty(shape, dtype=torch.bool, device=f"cuda:{device_id}")
    return None


def _check_scale(scale):
    if scale is None:
        return None
    if isinstance(scale, bool) or not isinstance(scale, _numbers.Real):
        raise TypeError(f"scale must be a positive number, got {scale!r}")
    scale = float(scale)
    if not (scale > 0 and _np.isfinite(scale)):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    return scale


def _caps(x, name, scale, limit=_INT32_MAX, wide=False, c_checks=False):
    """Capacities as a C-contiguous int32 array (int64 with wide=True when a value needs it).

    Integers are range-checked, never wrapped; floats need a scale (round(value * scale));
    negative values raise ValueError naming the first one. With c_checks an int32 array is
    passed on as it is (no pass over it here): the C layer checks its signs while it reads it,
    naming the argument."""
    a = _host_array(x, name)
    if c_checks and a.dtype == _np.int32:
        return _np.ascontiguousarray(a)
    if a.size == 0 and a.dtype.kind in "fO":  # [] reads as float64: an empty list is fine
        a = a.astype(_np.int32)
    kind = a.dtype.kind
    if kind == "b":
        a = a.astype(_np.int32)
    elif kind in "iu":
        pass
    elif kind == "f":
        if scale is None:
            raise TypeError(
                f"{name} has dtype {a.dtype}; gcut capacities are integers: pass integer "
                f"arrays, or scale=S to use round({name} * S) (the scale is reported back)"
            )
        if a.size and not _np.all(_np.isfinite(a)):
            bad = int(_np.flatnonzero(~_np.isfinite(a.ravel()))[0])
            raise ValueError(f"{name}[{bad}] (flat index) is not finite")
        a = _np.rint(a * scale)
    else:
        raise TypeError(f"{name} must hold integers (or floats with scale=), not {a.dtype}")
    if a.size:
        lo, hi = a.min(), a.max()
        if lo < 0:
            bad = int(_np.flatnonzero(a.ravel() < 0)[0])
            raise ValueError(
                f"{name}[{bad}] (flat index) = {a.ravel()[bad]}: capacities must be >= 0"
            )
        if hi > limit:
            bad = int(_np.flatnonzero(a.ravel() > limit)[0])
            raise ValueError(
                f"{name}[{bad}] (flat index) = {a.ravel()[bad]} does not fit "
                f"{'int64 (2^61)' if wide else 'int32'}"
                + (f" after scaling by {scale}" if kind == "f" else "")
            )
    if wide and a.dtype.kind in "iu" and a.dtype.itemsize == 8:
        return _np.ascontiguousarray(a, dtype=_np.int64)
    if wide and a.dtype.kind == "f" and a.size and a.max() > _INT32_MAX:
        return _np.ascontiguousarray(a, dtype=_np.int64)
    return _np.ascontiguousarray(a, dtype=_np.int32)


def _ids(x, name):
    """Node ids as a C-contiguous int64 array (range is checked by the C layer)."""
    a = _host_array(x, name)
    if a.size == 0 and a.dtype.kind in "fO":
        a = a.astype(_np.int64)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer node ids, not {a.dtype}")
    if a.dtype == _np.uint64 and a.size and a.max() > 2**63 - 1:
        raise ValueError(f"{name} holds ids above 2^63")
    return _np.ascontiguousarray(a, dtype=_np.int64)


def _grid_marks(x, name, shape):
    """The nodes a mark argument names, as flat int64 node ids of a grid of this shape. Taken:
    a boolean mask of the grid's shape (True = changed); integer node ids (any shape, read
    flat; row-major over the grid, as gcut numbers its nodes); a tuple of one integer array
    per axis (coordinates, as ``np.nonzero(mask)`` returns them; a tuple of plain ints is ids,
    as it always was). Every id is range-checked here so that the error names the entry and a
    bad call marks nothing."""
    num_nodes = int(_np.prod(shape))
    if isinstance(x, tuple) and x and all(
            isinstance(c, (list, tuple)) or getattr(c, "ndim", 0) >= 1 for c in x):
        if len(x) != len(shape):
            raise ValueError(
                f"{name}: a tuple of coordinate arrays needs {len(shape)} arrays, one per axis "
                f"of the grid's shape {shape} (as np.nonzero returns them), got {len(x)}")
        coords = []
        for k, c in enumerate(x):
            a = _host_array(c, f"{name}[{k}]")
            if a.size == 0 and a.dtype.kind in "fO":
                a = a.astype(_np.int64)
            if a.dtype.kind not in "iu":
                raise TypeError(f"{name}[{k}] must hold integer coordinates, not {a.dtype}")
            coords.append(a.reshape(-1))
        if len({a.size for a in coords}) != 1:
            sizes = ", ".join(str(a.size) for a in coords)
            raise ValueError(f"{name}: the coordinate arrays differ in length ({sizes})")
        for k, (a, extent) in enumerate(zip(coords, shape)):
            bad = (a < 0) | (a >= extent)
            if bad.any():
                j = int(_np.flatnonzero(bad)[0])
                raise ValueError(f"{name}[{k}][{j}] = {a[j]} is outside axis {k} of the grid's "
                                 f"shape {shape} (must be in [0, {extent}))")
        if not coords[0].size:
            return _np.zeros(0, dtype=_np.int64)
        ids = _np.ravel_multi_index([a.astype(_np.int64) for a in coords], shape)
        return _np.ascontiguousarray(ids, dtype=_np.int64)
    if x is True or x is False:
        raise TypeError(f"{name} must be node ids, a boolean mask of shape {shape} or a tuple "
                        f"of coordinate arrays, not {x!r}")
    a = _host_array(x, name)
    if a.dtype.kind == "b":
        if a.shape != shape:
            raise ValueError(f"{name}: a boolean mask must have the grid's shape {shape}, got "
                             f"{a.shape} (or pass node ids)")
        return _np.flatnonzero(a).astype(_np.int64)
    if a.size == 0 and a.dtype.kind in "fO":
        a = a.astype(_np.int64)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integer node ids, a boolean mask of shape {shape} or a "
                        f"tuple of coordinate arrays, not an array of {a.dtype}")
    a = a.reshape(-1)
    if a.size:
        bad = (a < 0) | (a >= num_nodes)
        if bad.any():
            j = int(_np.flatnonzero(bad)[0])
            raise ValueError(f"{name}[{j}] = {a[j]} is not a node of the grid (ids are in "
                             f"[0, {num_nodes}), row-major over shape {shape})")
    return _np.ascontiguousarray(a, dtype=_np.int64)


def _broadcast(arrays, names, shape=None):
    try:
        if shape is None:
            return _np.broadcast_arrays(*arrays)
        return [_np.broadcast_to(a, shape) for a in arrays]
    except ValueError:
        shapes = ", ".join(f"{n} {_np.shape(a)}" for n, a in zip(names, arrays))
        want = f" to {tuple(shape)}" if shape is not None else ""
        raise ValueError(f"shapes do not broadcast{want}: {shapes}") from None


def _solver_args(solver, threads):
    if not isinstance(solver, str):
        raise TypeError("solver must be a string (a name from gcut.solvers() or 'auto')")
    if isinstance(threads, bool) or not isinstance(threads, _numbers.Integral):
        raise TypeError(f"threads must be an int (0 = all cores), got {threads!r}")
    if threads < 0 or threads > 65536:
        raise ValueError(f"threads must be in [0, 65536] (0 = all cores), got {threads}")
    return solver, int(threads)


# ------------------------------------------------------------------------------------------
# Structures (PyMaxflow's helpers, same meaning)
# ------------------------------------------------------------------------------------------


def vonNeumann_structure(ndim=2, directed=False):
    """The von Neumann neighbourhood (4-connected in 2D, 6 in 3D) as a 3^ndim int array.

    ``directed=True`` keeps only the forward half (the offsets whose first nonzero component
    is positive): with ``symmetric=True`` in :meth:`Graph.add_grid_edges` that gives each
    undirected edge once, as PyMaxflow's function of the same name does."""
    s = _np.zeros((3,) * ndim, dtype=_np.int32)
    c = (1,) * ndim
    for k in range(ndim):
        for d in (1,) if directed else (1, -1):
            idx = list(c)
            idx[k] += d
            s[tuple(idx)] = 1
    return s


def moore_structure(ndim=2, directed=False):
    """The Moore neighbourhood (8-connected in 2D, 26 in 3D) as a 3^ndim int array;
    ``directed=True`` keeps the forward half, as :func:`vonNeumann_structure`."""
    s = _np.ones((3,) * ndim, dtype=_np.int32)
    s[(1,) * ndim] = 0
    if directed:
        flat = s.reshape(-1)
        flat[: flat.size // 2] = 0
    return s


# ------------------------------------------------------------------------------------------
# Graph: PyMaxflow's interface
# ------------------------------------------------------------------------------------------


class Graph(_gcut.GraphCore):
    """A max-flow problem: nodes, edges (pairs of arcs) and terminal capacities.

    ``Graph(node_hint=0, edge_hint=0, scale=None)``; the hints only reserve memory, as the
    two arguments of PyMaxflow's ``Graph[int](nodes, edges)``. ``scale`` (a positive number)
    lets float capacities in: each becomes ``round(value * scale)``; flows are then in scaled
    units. ``gcut.Graph[int]`` is ``gcut.Graph``; ``gcut.Graph[float]`` raises ``TypeError``
    (give a scale instead).

    Nodes are numbered 0, 1, ... in the order added (int64). Edges are numbered 0, 1, ... in
    the order added by :meth:`add_edge` / :meth:`add_edges` (the ids :meth:`set_edges`
    takes). A graph whose nodes all come from one :meth:`add_grid_nodes` call (2D or 3D) and
    whose edges come from :meth:`add_grid_edges` with a structure inside the 8 (2D) / 26 (3D)
    neighbourhood is kept as a native gcut grid (see :attr:`layout`); anything else turns it
    into a general graph, with the same result. A Graph is not thread-safe: use one per
    thread (different Graphs solve in parallel; the GIL is released while solving).
    """

    def __init__(self, node_hint=0, edge_hint=0, *, scale=None):
        for name, v in (("node_hint", node_hint), ("edge_hint", edge_hint)):
            if isinstance(v, bool) or not isinstance(v, _numbers.Integral) or v < 0:
                raise ValueError(f"{name} must be an int >= 0, got {v!r}")
        super().__init__(int(node_hint), int(edge_hint))
        self._scale = _check_scale(scale)
        self._grid_ids = None  # the read-only id array add_grid_nodes returned (grid layout)
        self._grid_edge_count = 0

    def __repr__(self):
        return (f"gcut.Graph(nodes={self.num_nodes}, edges={self.get_edge_count()}, "
                f"layout={self.layout!r}" + (f", scale={self._scale}" if self._scale else "")
                + ")")

    def __class_getitem__(cls, item):
        if item is int:
            return cls
        if item is float:
            raise TypeError(
                "gcut capacities are integers: use gcut.Graph(scale=S) to round float "
                "capacities to round(value * S)"
            )
        raise TypeError(f"gcut.Graph[{item!r}]: only Graph[int] exists")

    @property
    def scale(self):
        """The factor float capacities are multiplied by (None: floats are refused)."""
        return self._scale

    # ---- nodes ----

    def add_nodes(self, num_nodes):
        """Add ``num_nodes`` nodes; return their ids (int64 array)."""
        if isinstance(num_nodes, bool) or not isinstance(num_nodes, _numbers.Integral):
            raise TypeError(f"num_nodes must be an int, got {num_nodes!r}")
        first = self._add_nodes(int(num_nodes))
        return _np.arange(first, first + int(num_nodes), dtype=_np.int64)

    def add_node(self):
        """Add one node; return its id (an int)."""
        return self._add_nodes(1)

    def add_grid_nodes(self, shape):
        """Add a grid of nodes of the given shape; return their ids as an int64 array of that
        shape (C order). On an empty graph a 2D or 3D grid is stored natively."""
        try:
            shape = tuple(int(s) for s in (shape if _np.iterable(shape) else (shape,)))
        except (TypeError, ValueError):
            raise TypeError(f"shape must be a tuple of ints, got {shape!r}") from None
        if any(s < 0 for s in shape):
            raise ValueError(f"shape {shape} has a negative side")
        n = int(_np.prod(shape, dtype=_np.int64)) if shape else 1
        if self.num_nodes == 0 and len(shape) in (2, 3) and n > 0:
            self._init_grid(shape)
            ids = _np.arange(n, dtype=_np.int64).reshape(shape)
            ids.flags.writeable = False
            self._grid_ids = ids
            return ids
        return self.add_nodes(n).reshape(shape)

    def get_node_count(self):
        """Number of nodes (PyMaxflow's name; also :attr:`num_nodes`)."""
        return self.num_nodes

    def get_edge_count(self):
        """Number of edges: of the general graph (a converted grid counts one per neighbour
        pair), or, on a native grid, the nonzero arcs add_grid_edges has added."""
        if self.layout == "graph":
            return self._num_graph_edges
        return self._grid_edge_count

    # ---- edges ----

    def add_edge(self, i, j, capacity, rev_capacity):
        """Add the edge pair i->j (``capacity``) and j->i (``rev_capacity``); return its id."""
        return self.add_edges([i], [j], [capacity], [rev_capacity])

    def add_edges(self, i, j, capacities, rev_capacities):
        """Add edges i[k]->j[k] (``capacities[k]``) and j[k]->i[k] (``rev_capacities[k]``)
        from arrays (broadcast together); return the id of the first (ids are consecutive).
        Parallel edges add up; self-loops are accepted and carry no flow."""
        i, j = _ids(i, "i"), _ids(j, "j")
        c = _caps(capacities, "capacities", self._scale)
        r = _caps(rev_capacities, "rev_capacities", self._scale)
        i, j, c, r = _broadcast([i, j, c, r], ["i", "j", "capacities", "rev_capacities"])
        conv = _np.ascontiguousarray
        return self._add_edges(
            conv(i).reshape(-1), conv(j).reshape(-1), conv(c).reshape(-1), conv(r).reshape(-1)
        )

    def set_edge(self, edge, capacity, rev_capacity):
        """Set edge number ``edge`` to new capacities (absolute). See :meth:`set_edges`."""
        self.set_edges([edge], [capacity], [rev_capacity])

    def set_edges(self, edges, capacities, rev_capacities):
        """Set the capacities of edges (ids from :meth:`add_edges`; absolute, not added).
        The next :meth:`maxflow` re-solves warm where the solver can (bk reuses its search
        trees and flow); the result is the same as a fresh solve."""
        e = _ids(edges, "edges")
        c = _caps(capacities, "capacities", self._scale)
        r = _caps(rev_capacities, "rev_capacities", self._scale)
        e, c, r = _broadcast([e, c, r], ["edges", "capacities", "rev_capacities"])
        conv = _np.ascontiguousarray
        self._set_edges(conv(e).reshape(-1), conv(c).reshape(-1), conv(r).reshape(-1))

    def add_tedge(self, i, cap_source, cap_sink):
        """Add ``cap_source`` to source->i and ``cap_sink`` to i->sink (cumulative, as
        PyMaxflow / Boykov-Kolmogorov's add_tweights)."""
        self.add_tedges([i], [cap_source], [cap_sink])

    def add_tedges(self, i, caps_source, caps_sink):
        """Add terminal capacities to many nodes at once (arrays, broadcast together;
        cumulative, repeated ids add up). Sums may pass int32: they are kept in int64."""
        self._tedges_impl(i, caps_source, caps_sink, False)

    def set_tedge(self, i, cap_source, cap_sink):
        """Set the terminal capacities of node i (absolute). See :meth:`set_tedges`."""
        self.set_tedges([i], [cap_source], [cap_sink])

    def set_tedges(self, i, caps_source, caps_sink):
        """Set terminal capacities (absolute, up to 2^61) of many nodes; the next
        :meth:`maxflow` re-solves warm where the solver can."""
        self._tedges_impl(i, caps_source, caps_sink, True)

    def _tedges_impl(self, i, caps_source, caps_sink, set_):
        i = _ids(i, "i")
        s = _caps(caps_source, "caps_source", self._scale, limit=2**61 - 1, wide=True)
        t = _caps(caps_sink, "caps_sink", self._scale, limit=2**61 - 1, wide=True)
        i, s, t = _broadcast([i, s, t], ["i", "caps_source", "caps_sink"])
        if s.dtype != t.dtype:
            s, t = s.astype(_np.int64), t.astype(_np.int64)
        conv = _np.ascontiguousarray
        self._tedges(conv(i).reshape(-1), conv(s).reshape(-1), conv(t).reshape(-1), set_)

    # ---- grids ----

    def _is_whole_grid(self, nodeids):
        """True when nodeids is the grid layout's own id array (so dense arrays apply)."""
        g = self._grid_ids
        if g is None or not self.layout.startswith("grid") or nodeids.shape != g.shape:
            return False
        if nodeids is g and not g.flags.writeable:
            return True
        return bool(_np.array_equal(nodeids, g))

    def add_grid_edges(self, nodeids, weights=1, structure=None, symmetric=False, periodic=False):
        """Add edges to a grid of nodes, with PyMaxflow's meaning of every argument.

        For every node p of ``nodeids`` and every nonzero entry of ``structure`` at offset o
        from the structure's centre, add the edge p -> p+o of capacity
        ``weights[p] * structure[o]`` (``weights`` broadcasts to ``nodeids.shape``); with
        ``symmetric=True`` also p+o -> p with the same capacity. Neighbours outside the grid
        are skipped, unless ``periodic`` (a bool, or one per axis) wraps that axis around.
        ``structure=None`` is ``vonNeumann_structure(nodeids.ndim, directed=symmetric)``: the
        4-connected (2D) / 6-connected (3D) grid.

        On a graph made by one :meth:`add_grid_nodes` call (2D/3D), offsets within the 8/26
        neighbourhood fill a native gcut grid (no per-edge storage, the grid solvers apply);
        other structures, periodic axes or other node arrays add general edges."""
        ids = _ids(nodeids, "nodeids")
        nd = ids.ndim
        if nd == 0:
            raise ValueError("nodeids must be an array of node ids, not a scalar")
        if structure is None:
            structure = vonNeumann_structure(nd, directed=bool(symmetric))
        st = _host_array(structure, "structure")
        if st.ndim > nd or st.ndim == 0:
            raise ValueError(
                f"structure must have 1 to {nd} dimensions (nodeids'), got shape {st.shape}"
            )
        st = st.reshape((1,) * (nd - st.ndim) + st.shape)  # missing leading axes: offset 0
        if st.dtype.kind == "f" and st.size and _np.all(_np.isfinite(st)):
            # PyMaxflow's vonNeumann/moore_structure are float arrays of 0/1: whole numbers
            # are taken exactly; a fractional entry still needs scale=.
            if _np.array_equal(st, _np.rint(st)) and st.max() <= _INT32_MAX:
                st = st.astype(_np.int64)
        if any(s % 2 == 0 for s in st.shape):
            raise ValueError(f"structure must have odd sides (a centre), got {st.shape}")
        per = _np.broadcast_to(_np.asarray(periodic, dtype=bool), (nd,))
        w = _host_array(weights, "weights")
        (w,) = _broadcast([w], ["weights"], ids.shape)
        floats = w.dtype.kind == "f" or st.dtype.kind == "f"
        if floats and self._scale is None:
            raise TypeError(
                "weights/structure are floats; gcut capacities are integers: pass integer "
                "arrays, or create the Graph with scale=S (capacity = round(w * s * S))"
            )
        for name, a in (("weights", w), ("structure", st)):
            if a.dtype.kind not in "biuf":
                raise TypeError(f"{name} must hold numbers, not {a.dtype}")
        if st.size and st.min() < 0:
            raise ValueError("structure has a negative entry: capacities must be >= 0")
        centre = tuple(s // 2 for s in st.shape)
        offsets = []
        for idx in zip(*_np.nonzero(st)):
            o = tuple(int(a - c) for a, c in zip(idx, centre))
            if any(o):
                offsets.append((o, st[idx]))
        native = self._is_whole_grid(ids) and not per.any()
        # Lean path: int32 weights times a 0/1 structure cannot overflow, and on a native grid
        # with offsets inside its neighbourhood the C layer checks the weights' signs (naming
        # them) before it adds anything: no numpy pass over them here. Otherwise the signs and
        # the largest product are checked first; either way a bad call changes nothing.
        lean = (native and w.dtype == _np.int32 and st.dtype.kind in "biu"
                and (not st.size or st.max() <= 1)
                and all(max(abs(x) for x in o) <= 1 for o, _ in offsets))
        if not lean and w.size and w.min() < 0:
            raise ValueError("weights has a negative entry: capacities must be >= 0")
        if not lean and w.size and st.size:
            if floats:
                top = _np.rint(float(w.max()) * float(st.max()) * self._scale)
            else:
                top = int(w.max()) * int(st.max())
            if top > _INT32_MAX:
                raise ValueError(
                    f"weights * structure reaches {top}, past int32"
                    + (f" after scaling by {self._scale}" if floats else "")
                )
        checked = not lean
        for o, sval in offsets:
            if any(abs(ok) >= n and not pk for ok, n, pk in zip(o, ids.shape, per)):
                continue  # no node has this neighbour
            cap = self._grid_caps(w, sval, floats)
            if not (native and self.layout.startswith("grid")):
                self._general_grid_edges(ids, o, cap, per, bool(symmetric))
                continue
            # The C layer adds the arcs straight from the weights (both ends if symmetric).
            flat = _np.ascontiguousarray(cap).reshape(-1)
            added = self._grid_add(o, flat, -1, bool(symmetric), "weights")
            if added >= 0:  # the nonzero arcs added (one pass in C, checked as it adds)
                checked = True
                self._grid_edge_count += added * (2 if symmetric else 1)
                continue
            # Not a native direction, or a sum past int32 (nothing was added): the general
            # graph holds it.
            checked = True  # _grid_add checked the signs before it looked at the sums
            self._to_graph()
            self._general_grid_edges(ids, o, cap, per, bool(symmetric))
        if not checked and w.size and w.min() < 0:  # lean, and no arc was added
            raise ValueError("weights has a negative entry: capacities must be >= 0")

    def _grid_caps(self, w, sval, floats):
        """weights * structure value as int32 (int64 math, checked)."""
        if floats:
            cap = _np.rint(_np.asarray(w, dtype=_np.float64) * float(sval) * self._scale)
        elif sval == 1 and w.dtype == _np.int32:
            return w
        else:
            cap = _np.multiply(w, int(sval), dtype=_np.int64)
        if cap.size and cap.max() > _INT32_MAX:
            raise ValueError(
                f"weights * structure = {cap.max()} does not fit int32"
                + (f" after scaling by {self._scale}" if floats else "")
            )
        return cap.astype(_np.int32, copy=False)

    def _general_grid_edges(self, ids, o, cap, per, symmetric):
        v = ids
        src, dst = [], []
        for k, ok in enumerate(o):
            n = ids.shape[k]
            if per[k]:
                v = _np.roll(v, -ok, axis=k)
                src.append(slice(None))
                dst.append(slice(None))
            else:
                s, d = _shift_slices((ok,), (n,))
                src.append(s[0])
                dst.append(d[0])
        src, dst = tuple(src), tuple(dst)
        u = ids[src].reshape(-1)
        vv = v[dst].reshape(-1)
        c = _np.ascontiguousarray(_np.broadcast_to(cap, ids.shape)[src]).reshape(-1)
        keep = c > 0
        if not keep.all():
            u, vv, c = u[keep], vv[keep], c[keep]
        rev = c if symmetric else _np.zeros_like(c)
        conv = _np.ascontiguousarray
        self._add_edges(conv(u), conv(vv), conv(c, dtype=_np.int32), conv(rev, dtype=_np.int32))

    def add_grid_tedges(self, nodeids, sourcecaps, sinkcaps):
        """Add terminal capacities to a grid of nodes (``sourcecaps``, ``sinkcaps`` broadcast to
        ``nodeids.shape``); as :meth:`add_tedges`, cumulative."""
        ids = _ids(nodeids, "nodeids")
        whole = self._is_whole_grid(ids)  # then the C layer checks int32 signs, naming them
        s = _caps(sourcecaps, "sourcecaps", self._scale, limit=2**61 - 1, wide=True, c_checks=whole)
        t = _caps(sinkcaps, "sinkcaps", self._scale, limit=2**61 - 1, wide=True, c_checks=whole)
        s, t = _broadcast([s, t], ["sourcecaps", "sinkcaps"], ids.shape)
        if whole:
            # The C layer checks sourcecaps before adding them; sinkcaps are checked here
            # first (one pass), so that a bad call changes nothing.
            if t.dtype == _np.int32 and t.size and t.min() < 0:
                _caps(t, "sinkcaps", None)  # raises, naming the first negative entry
            rest = []
            for which, a in ((0, s), (1, t)):
                full = _np.ascontiguousarray(a).reshape(-1)
                if self._grid_add(None, full, which, False, ("sourcecaps", "sinkcaps")[which]) < 0:
                    rest.append((which, full))
            for which, full in rest:  # past int32: the C layer moves to a general graph
                zero = _np.zeros_like(full)
                self._tedges(
                    ids.reshape(-1), full if which == 0 else zero, zero if which == 0 else full,
                    False,
                )
            return
        if s.dtype != t.dtype:
            s, t = s.astype(_np.int64), t.astype(_np.int64)
        conv = _np.ascontiguousarray
        self._tedges(ids.reshape(-1), conv(s).reshape(-1), conv(t).reshape(-1), False)

    # ---- solving ----

    def maxflow(self, solver="auto", threads=0, reuse_trees=False):
        """Solve; return the exact maximum flow (a Python int).

        ``solver``: a name from :func:`solvers` or ``"auto"`` (the GPU for large native grids
        when one is present, else ``grid-bk`` / ``grid-ibfs`` for native grids and ``ibfs``
        for the first solve of other graphs, ``bk`` for their re-solves, which it then re-solves
        warm); ``threads``: CPU threads of parallel solvers
        (0 = all cores). Re-solving after :meth:`set_edges` / :meth:`set_tedges` /
        :meth:`add_tedges` is warm where the solver can, whatever ``reuse_trees`` says (it
        is accepted for PyMaxflow compatibility). The GIL is released while solving."""
        del reuse_trees
        solver, threads = _solver_args(solver, threads)
        return self._maxflow(solver, threads)

    def get_segment(self, i):
        """Side of node i in the minimum cut of the last :meth:`maxflow`: 0 source, 1 sink."""
        return int(self._segments(_ids([i], "i"))[0])

    def get_segments(self):
        """Sides of all nodes (bool array, True = sink side) of the last :meth:`maxflow`."""
        return self._segments(_np.arange(self.num_nodes, dtype=_np.int64)).view(bool)

    def get_grid_segments(self, nodeids):
        """Sides of the nodes in ``nodeids`` (bool array of its shape, True = sink side)."""
        ids = _ids(nodeids, "nodeids")
        return self._segments(ids, self._is_whole_grid(ids)).view(bool)


def _shift_slices(o, shape):
    """Slices src, dst with dst = src shifted by offset o (both inside the shape)."""
    src, dst = [], []
    for ok, n in zip(o, shape):
        if abs(ok) >= n:
            src.append(slice(0, 0))
            dst.append(slice(0, 0))
        elif ok >= 0:
            src.append(slice(0, n - ok))
            dst.append(slice(ok, n))
        else:
            src.append(slice(-ok, n))
            dst.append(slice(0, n + ok))
    return tuple(src), tuple(dst)


# ------------------------------------------------------------------------------------------
# Direct grid solves
# ------------------------------------------------------------------------------------------


class GridResult(tuple):
    """What :func:`grid_maxflow` returns: unpacks as ``flow, labels``; also has ``.flow``
    (exact int), ``.labels`` (bool array of the grid's shape, True = sink side), ``.scale``
    (the factor applied to float input, or None), ``.solver`` and ``.stats`` (the solver's
    report: times in ms, counters)."""

    def __new__(cls, flow, labels, scale, stats):
        self = super().__new__(cls, (flow, labels))
        self.scale = scale
        self.stats = stats
        return self

    flow = property(lambda self: self[0], doc="the exact maximum flow (int)")
    labels = property(lambda self: self[1], doc="bool array, True = sink side")
    solver = property(lambda self: self.stats["solver"], doc="the solver that ran")

    def __repr__(self):
        return (
            f"GridResult(flow={self[0]}, labels=<{self[1].shape} bool>, "
            f"scale={self.scale}, solver={self.solver!r})"
        )


def grid_maxflow(source, sink, weights, connectivity=4, solver="auto", threads=0, scale=None,
                 *, labels=None, stream=None):
    """Solve a 2D or 3D grid given as dense arrays; return ``flow, labels``.

    ``source`` / ``sink``: terminal capacities, arrays of the grid's shape (source->p and
    p->sink). ``weights``: shape ``(connectivity, *shape)``; ``weights[d][p]`` is the capacity
    of the arc p -> p + offset(d), in the C library's direction order (offsets as (dz,) dy, dx):

    * 2D, 4: (0,+1) (0,-1) (+1,0) (-1,0); 8: those, then (+1,+1) (-1,-1) (+1,-1) (-1,+1)
    * 3D, 6: (0,0,+1) (0,0,-1) (0,+1,0) (0,-1,0) (+1,0,0) (-1,0,0); 26: those, then the
      other 20 in opposite pairs (include/gcut.h, ``gcut_grid_offset``)

    Entries whose neighbour is outside the grid are ignored. Capacities are int32 (int64
    accepted when it fits); floats need ``scale`` (capacity = round(value * scale)).
    Returns a :class:`GridResult`: ``flow`` (exact int), ``labels`` (bool, True = sink side,
    as PyMaxflow's ``get_grid_segments``), and ``.scale``, ``.solver``, ``.stats``.

    CUDA arrays (CuPy, PyTorch, anything with ``__dlpack__`` on a CUDA device; int32,
    C-contiguous) are solved on their GPU without a copy to the host by a one-solve
    :class:`GridContext` with ``solver="cuda-grid"``; ``labels`` and ``stream`` are then as
    in :meth:`GridContext.solve` and the labels come back on the device."""
    solver, threads = _solver_args(solver, threads)
    scale = _check_scale(scale)
    if isinstance(connectivity, bool) or not isinstance(connectivity, _numbers.Integral):
        raise TypeError(f"connectivity must be an int, got {connectivity!r}")
    wlist = isinstance(weights, (list, tuple)) and len(weights) > 0 and _is_cuda(weights[0])
    if labels is not None or wlist or any(_is_cuda(a) for a in (source, sink, weights)):
        # CUDA arrays: one solve of a temporary cuda-grid context, on the device.
        if scale is not None:
            raise TypeError("scale= is for host arrays; device arrays must be int32 already")
        if not wlist and not any(_is_cuda(a) for a in (source, sink, weights)):
            raise TypeError("labels= is for CUDA arrays: source, sink and weights must then "
                            "be CUDA arrays")
        named = [("source", source), ("sink", sink)]
        named += ([(f"weights[{d}]", w) for d, w in enumerate(weights)] if wlist
                  else [("weights", weights)])
        for name, a in named:
            if not _is_cuda(a):
                raise TypeError(f"a device solve takes source, sink and weights all as CUDA "
                                f"arrays; {name} is a host array (or on another device type)")
        dev = _dl_device(source)
        shape = getattr(source, "shape", None)
        if shape is None:
            raise TypeError("source: a CUDA array needs a .shape for grid_maxflow (or use "
                            "GridContext(shape, ...).solve)")
        ctx = GridContext(tuple(shape), connectivity,
                          solver="cuda-grid" if solver == "auto" else solver,
                          threads=threads, warm=False, device=dev[1])
        return ctx.solve(source, sink, weights, labels=labels, stream=stream)
    s = _caps(source, "source", scale, c_checks=True)
    t = _caps(sink, "sink", scale, c_checks=True)
    w = _caps(weights, "weights", scale, c_checks=True)
    flow, labels, stats = _gcut.grid_maxflow(s, t, w, int(connectivity), solver, threads)
    return GridResult(flow, labels.view(bool), scale, stats)


class GridContext(_gcut.GridContextCore):
    """One grid shape, many solves: the C library's grid solver context (gcut_grid_context).

    ``GridContext(shape, connectivity=None, solver="auto", threads=0, warm=True)`` (2D or 3D;
    connectivity 4/8 or 6/26, default 4 / 6). Each :meth:`solve` takes the capacities that
    changed since the last one (``source``, ``sink``: the grid's shape; ``weights``:
    ``(connectivity, *shape)`` in :func:`grid_maxflow`'s direction order), all zero at first.
    With ``warm=True`` the next solve starts from the previous flow (bk: its trees; cpu-pr and
    cuda-grid: their residual state, repaired where capacities fell) and is exact: the same
    flow as a cold solve. cuda-grid keeps its device buffers between solves. ``changed=`` /
    ``changed_terminals=`` tell a warm solve which nodes (or only which nodes' terminals)
    changed, so it reads only those (see :meth:`solve`). ``info`` counts solves and warm
    solves. Not thread-safe: one context per thread.

    Terminal-only updates (a new data term over the same image)::

        ctx = gcut.GridContext(img.shape[:2], 8)
        ctx.solve(source, sink, weights)
        moved = (new_source != source) | (new_sink != sink)
        flow, labels = ctx.solve(new_source, new_sink, changed_terminals=moved)"""

    def __init__(self, shape, connectivity=None, solver="auto", threads=0, warm=True, device=0):
        try:
            shape = tuple(int(x) for x in shape)
        except (TypeError, ValueError):
            raise TypeError(f"shape must be a tuple of ints, got {shape!r}") from None
        solver, threads = _solver_args(solver, threads)
        if connectivity is None:
            connectivity = 4 if len(shape) == 2 else 6
        if isinstance(connectivity, bool) or not isinstance(connectivity, _numbers.Integral):
            raise TypeError(f"connectivity must be an int, got {connectivity!r}")
        if isinstance(device, bool) or not isinstance(device, _numbers.Integral):
            raise TypeError(f"device must be an int (a CUDA device ordinal), got {device!r}")
        super().__init__(shape, int(connectivity), solver, threads, bool(warm), int(device))
        self.shape = shape
        self.connectivity = int(connectivity)
        self.device = int(device)

    def solve(self, source=None, sink=None, weights=None, changed=None, *,
              changed_terminals=None, labels=None, stream=None):
        """Copy in the given capacity arrays (int32; int64 accepted when it fits), then solve.
        Returns a :class:`GridResult` (``flow, labels``; labels True = sink side).

        Marks (optional; node ids, a boolean mask of the grid's shape, or a tuple of
        coordinate arrays as ``np.nonzero`` gives): ``changed`` promises that since the last
        solve only those nodes' capacities changed (terminals and the arcs leaving them),
        ``changed_terminals`` that only those nodes' ``source`` / ``sink`` capacities did
        (GrabCut's model updates, new seeds, a new data term over the same image; with
        ``changed_terminals`` alone every solver reads and repairs the terminals alone). Both
        may be given (a node in both counts as ``changed``). A warm
        solve then reads only the marked nodes, so a change elsewhere (or an arc changed on
        a node marked only in ``changed_terminals``) is not seen. Without marks every
        capacity is compared with the last solve's (always safe).

        Device arrays (a context with ``solver="cuda-grid"``): ``source``, ``sink`` and
        ``weights`` all CUDA arrays on the context's ``device`` (CuPy arrays, PyTorch CUDA
        tensors, any object with ``__dlpack__`` / ``__dlpack_device__``; int32, C-contiguous,
        the shapes above; ``weights`` may also be a list of ``connectivity`` CUDA arrays of
        the grid's shape, one per direction) are read where they are, without a copy to the host
        (gcut_grid_context_solve_device; a warm solve compares them with the last solve's on
        the device). ``labels``: a uint8 or bool CUDA array of the grid's shape to write the
        labels into; without it they are allocated by the inputs' library (CuPy, PyTorch) as
        a bool array. ``stream``: the CUDA stream to order the solve on (an int handle or a
        CuPy / PyTorch stream; None = the legacy default stream): the solve starts after the
        work queued on it and work queued on it afterwards sees the labels. The result's
        ``labels`` is then that device array."""
        if labels is not None or any(_is_cuda(a) for a in (source, sink, weights)):
            if changed_terminals is not None:
                raise TypeError("changed_terminals= is for host arrays: a device solve compares "
                                "every capacity with the last solve's on the device")
            return self._solve_device(source, sink, weights, changed, labels, stream)
        # Marks are read and range-checked first, so that a bad one changes nothing.
        marks = []
        for name, m, terminals in (("changed", changed, False),
                                   ("changed_terminals", changed_terminals, True)):
            if m is not None:
                marks.append((_grid_marks(m, name, self.shape), terminals))
        # int32 arrays get no numpy pass: every given array is sign-checked in C (one pass
        # each, naming it) before any is copied in, so a bad call changes nothing.
        sets = []
        for which, name, arr in ((-2, "source", source), (-1, "sink", sink)):
            if arr is not None:
                a = _caps(arr, name, None, c_checks=True)
                if a.shape != self.shape:
                    raise ValueError(f"{name} must have shape {self.shape}, got {a.shape}")
                _gcut.check_capacities(a, name)
                sets.append((which, a.reshape(-1)))
        if weights is not None:
            w = _caps(weights, "weights", None, c_checks=True)
            if w.shape != (self.connectivity,) + self.shape:
                raise ValueError(
                    f"weights must have shape {(self.connectivity,) + self.shape}, got {w.shape}"
                )
            _gcut.check_capacities(w, "weights")
            sets += [(d, w[d].reshape(-1)) for d in range(self.connectivity)]
        for which, a in sets:
            self._set(which, a, False)
        for ids, terminals in marks:
            self._mark(ids, terminals)
        flow, labels, stats = self._solve()
        return GridResult(flow, labels.view(bool), None, stats)

    def _solve_device(self, source, sink, weights, changed, labels, stream):
        if changed is not None:
            raise TypeError("changed= is for host arrays: a device solve compares every "
                            "capacity with the last solve's on the device")
        arrays = [("source", source), ("sink", sink)]
        if isinstance(weights, (list, tuple)):  # one CUDA array per direction
            if len(weights) != self.connectivity:
                raise ValueError(f"weights: {len(weights)} arrays given, the grid has "
                                 f"{self.connectivity} directions")
            arrays += [(f"weights[{d}]", w) for d, w in enumerate(weights)]
        else:
            arrays.append(("weights", weights))
        for name, a in arrays:
            if a is None:
                raise TypeError(f"a device solve takes source, sink and weights all as CUDA "
                                f"arrays; {name} is missing")
            dev = _dl_device(a)
            if dev is None or dev[0] not in _DLPACK_CUDA:
                what = "a host array" if dev is None else f"on DLPack device type {dev[0]}"
                raise TypeError(f"a device solve takes source, sink and weights all as CUDA "
                                f"arrays; {name} is {what}")
            if dev[1] != self.device:
                raise ValueError(f"{name} is on CUDA device {dev[1]}; this GridContext runs "
                                 f"on device {self.device}")
        if labels is not None and not _is_cuda(labels):
            raise TypeError("labels must be a CUDA array (uint8 or bool) for a device solve")
        used = self.info["solver"] if self.info else None
        if used != "cuda-grid":
            raise TypeError(f"device arrays need GridContext(..., solver='cuda-grid'); this "
                            f"context runs {used!r} (host arrays only)")
        dl_stream, c_stream = _dl_stream(stream)
        out = labels
        if out is None:
            out = _device_labels(source, self.shape, self.device)
            if out is None:
                raise TypeError(
                    f"labels=: pass a uint8 or bool CUDA array of shape {self.shape} to write "
                    f"the labels into (gcut allocates them itself only for CuPy and PyTorch "
                    f"inputs, not {type(source).__name__})")
        # The capsules are borrowed for the solve (held here until it returns).
        caps = [_dl_capsule(a, dl_stream) for a in (source, sink, out)]
        if isinstance(weights, (list, tuple)):
            wcaps = tuple(_dl_capsule(w, dl_stream) for w in weights)
        else:
            wcaps = _dl_capsule(weights, dl_stream)
        flow, stats = self._solve_device_c(caps[0], caps[1], wcaps, caps[2], c_stream,
                                           self.device)
        del caps, wcaps
        return GridResult(flow, out, None, stats)


# ------------------------------------------------------------------------------------------
# QPBO
# ------------------------------------------------------------------------------------------


def _energies(x, name, shape_tail, scale):
    """Energy table as int32 (any sign, range-checked) or, with scale, float64 for the C
    library's own rounding (round(value * scale), checked there)."""
    a = _host_array(x, name)
    if a.size == 0 and a.dtype.kind in "fO":
        a = a.astype(_np.int32)
    if a.ndim == 1 and a.size == 0:
        a = a.reshape((0,) + shape_tail)
    if a.ndim != 2 or a.shape[1:] != shape_tail:
        raise ValueError(f"{name} must have shape (n, {shape_tail[0]}), got {a.shape}")
    kind = a.dtype.kind
    if kind == "f":
        if scale is None:
            raise TypeError(
                f"{name} has dtype {a.dtype}; gcut energies are integers: pass integer arrays, "
                f"or scale=S to use round({name} * S) (the scale is reported back)"
            )
        return _np.ascontiguousarray(a, dtype=_np.float64)
    if kind not in "biu":
        raise TypeError(f"{name} must hold integers (or floats with scale=), not {a.dtype}")
    if a.size and (a.min() < -_INT32_MAX - 1 or a.max() > _INT32_MAX):
        raise ValueError(f"{name} has values outside int32")
    a = _np.ascontiguousarray(a, dtype=_np.int32)
    return a.astype(_np.float64) if scale is not None else a


class QPBOResult(tuple):
    """What :func:`qpbo` returns: unpacks as ``labels, energy``; also ``.labels`` (int8:
    0, 1, or -1 = unlabeled), ``.energy`` (of the labels, unlabeled taken as 0, exact int, in
    scaled units when a scale was given), ``.lower_bound``, ``.labeled``, ``.scale``,
    ``.solver`` and ``.stats`` (the library's full report)."""

    def __new__(cls, labels, stats, scale):
        self = super().__new__(cls, (labels, stats["energy"]))
        self.stats = stats
        self.scale = scale
        return self

    labels = property(lambda self: self[0], doc="int8 labels, -1 = unlabeled")
    energy = property(lambda self: self[1], doc="E(labels), unlabeled as 0 (int)")
    lower_bound = property(lambda self: self.stats["lower_bound"], doc="QPBO's lower bound")
    labeled = property(lambda self: self.stats["labeled"], doc="nodes labeled 0 or 1")
    solver = property(lambda self: self.stats["solver"], doc="'qpbo' or 'pqpbo'")

    def __repr__(self):
        return (
            f"QPBOResult(energy={self[1]}, lower_bound={self.lower_bound}, "
            f"labeled={self.labeled}/{len(self[0])}, solver={self.solver!r})"
        )


def qpbo(unary, edges, pairwise, solver="auto", threads=0, scale=None, blocks=None):
    """Minimise a binary energy, submodular or not, with QPBO (include/gcut.h, gcut_qpbo_*).

    E(x) = sum_i unary[i, x_i] + sum_k pairwise[k, 2 * x_i + x_j] for edges[k] = (i, j):
    ``unary`` has shape (num_nodes, 2) (E(0), E(1)), ``edges`` (num_terms, 2) node pairs,
    ``pairwise`` (num_terms, 4) as E00, E01, E10, E11 (Kolmogorov's order). Integers (int32,
    any sign); floats need ``scale`` (each value becomes round(value * scale), energies are
    then in scaled units). ``solver``: "qpbo" (serial), "pqpbo" (parallel, ``threads``,
    0 = all cores) or "auto"; ``blocks`` (optional, one int per node) groups nodes for pqpbo.

    Returns a :class:`QPBOResult`: ``labels, energy = gcut.qpbo(...)``; labels are 0, 1 or -1
    (unlabeled) with persistency (some global minimiser agrees with every labeled node); a
    submodular energy comes back fully labeled at its exact minimum."""
    solver, threads = _solver_args(solver, threads)
    scale = _check_scale(scale)
    u = _energies(unary, "unary", (2,), scale)
    w = _energies(pairwise, "pairwise", (4,), scale)
    e = _host_array(edges, "edges")
    if e.size == 0:
        e = _np.zeros((0, 2), dtype=_np.int64)
    if e.dtype.kind not in "iu":
        raise TypeError(f"edges must hold integer node ids, not {e.dtype}")
    if e.ndim != 2 or e.shape[1] != 2:
        raise ValueError(f"edges must have shape (num_terms, 2), got {e.shape}")
    e = _np.ascontiguousarray(e, dtype=_np.int64)
    if len(e) != len(w):
        raise ValueError(f"pairwise has {len(w)} rows for {len(e)} edges")
    n = len(u)
    if e.size and (e.min() < 0 or e.max() >= n):
        bad = int(_np.flatnonzero((e < 0).any(axis=1) | (e >= n).any(axis=1))[0])
        raise ValueError(f"edges[{bad}] = {tuple(e[bad])} is not a pair of node ids "
                         f"(there are {n} nodes)")
    if e.size and (e[:, 0] == e[:, 1]).any():
        bad = int(_np.flatnonzero(e[:, 0] == e[:, 1])[0])
        raise ValueError(f"edges[{bad}] joins node {e[bad, 0]} to itself")
    num_blocks = 0
    if blocks is not None:
        b = _host_array(blocks, "blocks")
        if b.dtype.kind not in "iu" or b.shape != (n,):
            raise ValueError(f"blocks must be {n} integers (one per node)")
        if n and (b.min() < 0 or b.max() >= 2**20):
            raise ValueError("blocks must be in [0, 2^20)")
        blocks = _np.ascontiguousarray(b, dtype=_np.int32)
        num_blocks = int(blocks.max()) + 1 if n else 1
    labels, stats = _gcut.qpbo(u, e, w, scale or 0.0, blocks, num_blocks, solver, threads)
    return QPBOResult(labels, stats, scale)


# ------------------------------------------------------------------------------------------
# Segmentation and images
# ------------------------------------------------------------------------------------------

_MODELS = {"auto": -1, "hist": 0, "histogram": 0, "gmm": 1}
_ENCODINGS = {"gcut": 0, "grabcut": 1, "color": 2, "colour": 2}


def segment(
    image,
    seeds,
    lambda_=50.0,
    sigma=0.0,
    connectivity=None,
    model="auto",
    components=5,
    bins=32,
    scale=0.0,
    seed=1,
    seed_encoding="gcut",
    volume=False,
    solver="auto",
    threads=0,
    return_report=False,
    iterations=None,
    rect=None,
    warm=True,
):
    """Segment an image into foreground and background from seeds, exactly (a minimum cut
    of the Boykov-Jolly energy; the same call as ``gcut segment``; docs/SEGMENT.md).

    ``image``: uint8 or uint16 array (H, W) gray or (H, W, C) with C = 1..4 (alpha ignored);
    with ``volume=True``: (D, H, W) or (D, H, W, C). ``seeds``: an array of the same spatial
    shape read by ``seed_encoding``: ``"gcut"`` (0 unknown, 1 foreground, 2 background),
    ``"grabcut"`` (OpenCV's 0 BGD, 1 FGD, 2 PR_BGD, 3 PR_FGD) or ``"color"`` (red strokes
    foreground, blue background in an RGB(A) mask; a gray trimap: 255 fg, 0 bg).
    ``lambda_`` smoothness weight; ``sigma`` contrast scale in 8-bit units (<= 0: estimated);
    ``connectivity`` 4/8 (2D, default 8; with a ``rect`` and GrabCut rounds left to gcut,
    4 at twice ``lambda_``) or 6/26 (3D, default 6); ``model`` "gmm", "hist" or
    "auto"; ``components`` GMM components; ``bins`` histogram bins per channel; ``scale``
    energy-to-capacity factor (<= 0: chosen, reported); ``seed`` for the GMM initialisation.

    As the command does, the cut is refined by GrabCut rounds (Rother et al. 2004: re-fit the
    colour models to the cut, cut again) unless ``iterations=1``: ``iterations=None`` is the
    CLI's default (5 rounds at most, fewer when the labels stop changing). ``rect=(x, y, w, h)``
    is GrabCut's box (outside it background; ``seeds`` may then be None); ``warm=False``
    solves every round afresh (the masks are the same).

    Returns a bool mask (True = foreground) of the spatial shape; with ``return_report=True``
    ``(mask, report)`` where report is a dict (flow, scale, sigma, model, times in ms ...)."""
    solver, threads = _solver_args(solver, threads)
    img = _np.ascontiguousarray(_host_array(image, "image"))
    if iterations is None:
        iterations = 0  # the library's default: GrabCut's own round count
    if isinstance(iterations, bool) or not isinstance(iterations, _numbers.Integral) or not (
        0 <= iterations <= 64
    ):
        raise ValueError(f"iterations must be an int in [1, 64] (or None), got {iterations!r}")
    iterations = int(iterations)
    if rect is not None:
        try:
            rect = tuple(int(v) for v in rect)
        except (TypeError, ValueError):
            raise TypeError(f"rect must be (x, y, width, height), got {rect!r}") from None
        if len(rect) != 4:
            raise ValueError(f"rect must be (x, y, width, height), got {rect!r}")
    if seeds is None:
        if rect is None:
            raise ValueError("seeds are needed without a rect")
        sd = None
    else:
        sd = _host_array(seeds, "seeds")
        if sd.dtype == bool:
            raise TypeError("seeds must hold seed codes (uint8), not bool")
        if sd.dtype.kind in "iu" and sd.dtype not in (_np.uint8, _np.uint16):
            if sd.size and (sd.min() < 0 or sd.max() > 255):
                raise ValueError("seeds values must be in [0, 255]")
            sd = sd.astype(_np.uint8)
        sd = _np.ascontiguousarray(sd)
    if model not in _MODELS:
        raise ValueError(f"model must be one of {sorted(_MODELS)}, got {model!r}")
    if seed_encoding not in _ENCODINGS:
        raise ValueError(f"seed_encoding must be one of {sorted(_ENCODINGS)}, got {seed_encoding!r}")
    if connectivity is None:
        connectivity = 0
    for name, v, ok, want in (
        ("lambda_", lambda_, lambda x: _math.isfinite(x) and x >= 0, "a finite number >= 0"),
        ("sigma", sigma, _math.isfinite, "finite (<= 0: estimated)"),
        ("scale", scale, _math.isfinite, "finite (<= 0: chosen)"),
    ):
        if isinstance(v, bool) or not isinstance(v, _numbers.Real) or not ok(float(v)):
            raise ValueError(f"{name} must be {want}, got {v!r}")
    for name, v, lo, hi in (("components", components, 1, 32), ("bins", bins, 2, 256),
                            ("connectivity", connectivity, 0, 26)):
        if isinstance(v, bool) or not isinstance(v, _numbers.Integral) or not lo <= v <= hi:
            raise ValueError(f"{name} must be an int in [{lo}, {hi}], got {v!r}")
    if connectivity not in (0, 4, 8, 6, 26):
        raise ValueError(f"connectivity must be 4 or 8 (2D), 6 or 26 (3D), got {connectivity}")
    if not (isinstance(seed, _numbers.Integral) and 0 <= seed < 2**64):
        raise ValueError(f"seed must be an int in [0, 2^64), got {seed!r}")
    mask, report = _gcut.segment(
        img, sd, bool(volume), _ENCODINGS[seed_encoding], float(lambda_), float(sigma),
        int(connectivity), _MODELS[model], int(components), int(bins), float(scale), int(seed),
        solver, threads, int(iterations), rect, bool(warm),
    )
    return (mask, report) if return_report else mask



def grabcut(image, rect=None, seeds=None, iterations=5, **options):
    """GrabCut (Rother, Kolmogorov & Blake 2004), as OpenCV's ``grabCut`` is used: a box
    ``rect=(x, y, w, h)`` (outside it background for certain), ``seeds`` (optional hard
    constraints, read as ``segment`` reads them) or both; ``iterations`` rounds of re-fitting
    the colour models to the cut at most, each cut exact. The same call as
    ``segment(image, seeds, rect=rect, iterations=iterations, **options)``, which takes every
    other option; returns the bool mask (True = foreground), or ``(mask, report)`` with
    ``return_report=True``."""
    if rect is None and seeds is None:
        raise ValueError("grabcut: give rect, seeds or both")
    return segment(image, seeds, rect=rect, iterations=iterations, **options)

# ------------------------------------------------------------------------------------------
# Video (gcut_video_*: online segmentation of a frame sequence; docs/VIDEO.md)
# ------------------------------------------------------------------------------------------


def _frame_array(x, name):
    a = _np.ascontiguousarray(_host_array(x, name))
    if a.dtype not in (_np.uint8, _np.uint16):
        raise TypeError(f"{name} must have dtype uint8 or uint16, not {a.dtype}")
    return a


class Video(_gcut.VideoCore):
    """Online video segmentation, one frame at a time (the C library's ``gcut_video_*``, the
    engine of ``gcut video``; Garrett & Saito 2009): each frame is cut exactly from the one
    before, whose mask gives the colour models (mixed with older frames by ``forget``), the
    hard seeds deeper than a band around its boundary, and the band's width (it follows the
    measured motion).

    ``Video(shape, lambda_=50, sigma=0, connectivity=8, bins=32, forget=0.5, band_min=3,
    band_motion=1, band_max=64, colour_check=True, colour_reach=4, full_frame=False,
    warm=False, verify=False, model="auto", components=5, seed=1, solver="bk", threads=0)``:
    ``shape`` is (height, width); every option is ``gcut video``'s of the same name
    (``full_frame`` = ``--full-frame``, ``colour_check=False`` = ``--no-colour-check``;
    ``model`` / ``components`` / ``seed`` are for a first frame given as seeds, as
    :func:`segment`). Feed frames with :meth:`push`; ``frames`` counts them, ``report`` is the
    last frame's report (flow, band, graph_nodes, times in ms ...). Not thread-safe: one
    Video per thread (different Videos run in parallel; the GIL is released per frame)."""

    def __init__(self, shape, lambda_=50.0, sigma=0.0, connectivity=8, bins=32, forget=0.5,
                 band_min=3.0, band_motion=1.0, band_max=64.0, colour_check=True,
                 colour_reach=4.0, full_frame=False, warm=False, verify=False, model="auto",
                 components=5, seed=1, solver="bk", threads=0):
        try:
            h, w = (int(v) for v in shape)
        except (TypeError, ValueError):
            raise TypeError(f"shape must be (height, width), got {shape!r}") from None
        if h < 1 or w < 1:
            raise ValueError(f"shape must be positive, got {(h, w)}")
        solver, threads = _solver_args(solver, threads)
        for name, v in (("lambda_", lambda_), ("sigma", sigma), ("forget", forget),
                        ("band_min", band_min), ("band_motion", band_motion),
                        ("band_max", band_max), ("colour_reach", colour_reach)):
            if isinstance(v, bool) or not isinstance(v, _numbers.Real) or not _math.isfinite(v):
                raise ValueError(f"{name} must be a finite number, got {v!r}")
        for name, v in (("connectivity", connectivity), ("bins", bins),
                        ("components", components)):
            if isinstance(v, bool) or not isinstance(v, _numbers.Integral):
                raise ValueError(f"{name} must be an int, got {v!r}")
        if connectivity not in (4, 8):
            raise ValueError(f"connectivity must be 4 or 8, got {connectivity}")
        if model not in _MODELS:
            raise ValueError(f"model must be one of {sorted(_MODELS)}, got {model!r}")
        if not (isinstance(seed, _numbers.Integral) and 0 <= seed < 2**64):
            raise ValueError(f"seed must be an int in [0, 2^64), got {seed!r}")
        super().__init__(h, w, float(lambda_), float(sigma), int(connectivity), int(bins),
                         float(forget), float(band_min), float(band_motion), float(band_max),
                         not full_frame, bool(colour_check), float(colour_reach), bool(warm),
                         bool(verify), _MODELS[model], int(components), int(seed), solver,
                         threads)
        self.shape = (h, w)
        self.report = None

    def push(self, frame, init=None, seeds=None, seed_encoding="gcut"):
        """Segment the next frame (uint8 or uint16, (H, W) gray or (H, W, C) with C = 1..4);
        return its mask (bool (H, W), True = foreground).

        The first frame needs ``init`` (its segmentation: a bool or 0/nonzero uint8 (H, W)
        mask, taken as it is) or ``seeds`` (read by ``seed_encoding`` as :func:`segment`
        reads them; the frame is then segmented from them); a later frame given either
        restarts from it."""
        a = _frame_array(frame, "frame")
        if init is not None and seeds is not None:
            raise ValueError("give init (a mask) or seeds, not both")
        if seed_encoding not in _ENCODINGS:
            raise ValueError(
                f"seed_encoding must be one of {sorted(_ENCODINGS)}, got {seed_encoding!r}")
        kind, ini = 0, None
        if init is not None:
            m = _host_array(init, "init")
            if m.dtype.kind not in "biu":
                raise TypeError(f"init must be a bool or integer mask, not {m.dtype}")
            ini = _np.ascontiguousarray(m != 0, dtype=_np.uint8)
        elif seeds is not None:
            kind = 1
            ini = _host_array(seeds, "seeds")
            if ini.dtype == bool:
                raise TypeError("seeds must hold seed codes (uint8), not bool")
            if ini.dtype.kind in "iu" and ini.dtype not in (_np.uint8, _np.uint16):
                if ini.size and (ini.min() < 0 or ini.max() > 255):
                    raise ValueError("seeds values must be in [0, 255]")
                ini = ini.astype(_np.uint8)
            ini = _np.ascontiguousarray(ini)
        elif self.frames == 0:
            raise ValueError("the first frame needs init (a mask) or seeds")
        mask, self.report = self._push(a, ini, kind, _ENCODINGS[seed_encoding])
        return mask.view(bool)


def segment_video(frames, init=None, seeds=None, seed_encoding="gcut", return_reports=False,
                  **options):
    """Segment a sequence of frames, each from the one before (:class:`Video`); a generator of
    bool masks (True = foreground), one per frame, in order.

    ``frames``: a (T, H, W) or (T, H, W, C) uint8/uint16 array, or any iterable of (H, W[, C])
    frames (read lazily, one at a time: a video reader works). ``init`` (the first frame's
    mask) or ``seeds`` (its seeds, read by ``seed_encoding``) starts it; ``options`` are
    :class:`Video`'s. With ``return_reports`` each item is ``(mask, report)``. The masks are
    those of ``gcut video`` with the same options."""
    video = None
    for k, frame in enumerate(frames):
        f = _frame_array(frame, f"frames[{k}]")
        if video is None:
            if f.ndim not in (2, 3):
                raise ValueError(f"frames[0] must be (H, W) or (H, W, C), got shape {f.shape}")
            video = Video(f.shape[:2], **options)
            mask = video.push(f, init=init, seeds=seeds, seed_encoding=seed_encoding)
        else:
            mask = video.push(f)
        yield (mask, video.report) if return_reports else mask


def read_image(path):
    """Read a PNG (8/16 bit), JPEG or PGM/PPM image (by its magic bytes, through the C
    library); return a uint8 or uint16 array (H, W) for one channel, else (H, W, C)."""
    return _gcut.read_image(path)


def write_image(path, image):
    """Write a 2D image; the format follows the extension (.png, .jpg/.jpeg, .pgm/.ppm/.pnm).
    ``image``: uint8/uint16 array (H, W) or (H, W, C), C = 1..4; a bool mask is written as
    0/255."""
    a = _host_array(image, "image")
    if a.dtype == bool:
        a = a.astype(_np.uint8) * _np.uint8(255)
    _gcut.write_image(path, _np.ascontiguousarray(a))


def write_png(path, image):
    """:func:`write_image` to a .png path (a bool mask becomes 0/255)."""
    if not str(path).lower().endswith(".png"):
        raise ValueError(f"write_png: path must end in .png, got {path!r}")
    write_image(path, image)


# ------------------------------------------------------------------------------------------
# Library-wide
# ------------------------------------------------------------------------------------------


def solvers():
    """The solvers of this build: a list of dicts with name, description, graphs (takes
    general graphs), grids, gpu (needs a GPU), warm (warm re-solves) and available (can run
    here now)."""
    return _gcut.solvers()


def set_memory_limit(nbytes):
    """Cap the host memory gcut may hold at once (process-wide; 0 = the default, the
    machine's memory or $GCUT_MEMORY_LIMIT). A problem past the cap raises MemoryError."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, _numbers.Integral) or nbytes < 0:
        raise ValueError(f"nbytes must be an int >= 0, got {nbytes!r}")
    _gcut.set_memory_limit(int(nbytes))


def memory_limit():
    """The host memory cap in force, in bytes."""
    return _gcut.memory_limit()


def memory_in_use():
    """Host bytes gcut holds now."""
    return _gcut.memory_in_use()


def device_init(device=0):
    """Start CUDA on GPU number `device` now (the driver and the device's context, 0.1-0.25 s
    once per process) rather than in the first GPU solve; blocks until done. Raises GcutError
    where that device cannot be used or the build has no CUDA."""
    if isinstance(device, bool) or not isinstance(device, _numbers.Integral):
        raise TypeError(f"device must be an int, got {device!r}")
    if not -(2**31) <= device < 2**31:
        raise ValueError(f"device {device} is out of range")
    _gcut.device_init(int(device))


def release_device_cache():
    """Free the GPU buffers that gcut keeps between GPU segmentations (segment, grabcut with
    cuda-grid) of one picture size, giving the device memory back; the next GPU segmentation
    allocates again. Does nothing where there is no CUDA."""
    _gcut.release_device_cache()
