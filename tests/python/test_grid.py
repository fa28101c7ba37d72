# test_grid.py - grids three ways (native gcut grid through Graph.add_grid_*, the general graph
# path, gcut.grid_maxflow) against each other, against PyMaxflow from PyPI (skipped, visibly,
# where it is not installed) and against the cut certificate recomputed here.
import numpy as np
import pytest

import gcut

try:
    import maxflow as pymaxflow
except ImportError:  # pragma: no cover - CI installs it
    pymaxflow = None

needs_pymaxflow = pytest.mark.skipif(pymaxflow is None, reason="PyMaxflow not installed")

STRUCTURES_2D = {
    "von Neumann directed": gcut.vonNeumann_structure(2, directed=True),
    "von Neumann": gcut.vonNeumann_structure(2),
    "Moore": gcut.moore_structure(2),
    "weighted cross": np.array([[0, 1, 0], [4, 0, 2], [0, 3, 0]]),
    "diagonals only": np.array([[2, 0, 1], [0, 0, 0], [1, 0, 3]]),
    "5x5 (beyond 8)": np.array(
        [[0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [1, 0, 0, 2, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 1]]
    ),
}


def grid_cut_value(shape, source, sink, edges, sink_side):
    """Cut capacity of a grid problem given as explicit (u, v, cap) arrays over flat ids."""
    t = np.asarray(sink_side).reshape(-1)
    u, v, c = edges
    return int(source.reshape(-1)[t].sum() + sink.reshape(-1)[~t].sum() + c[~t[u] & t[v]].sum())


def explicit_edges(shape, weights, structure, symmetric, periodic=False):
    """The arcs PyMaxflow's documentation says add_grid_edges adds, built independently."""
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    w = np.broadcast_to(weights, shape)
    nd = len(shape)
    per = np.broadcast_to(np.asarray(periodic, dtype=bool), (nd,))
    centre = np.array(structure.shape) // 2
    us, vs, cs = [], [], []
    for idx in zip(*np.nonzero(structure)):
        o = np.array(idx) - centre
        if not o.any():
            continue
        for p in np.ndindex(*shape):
            q = np.array(p) + o
            ok = True
            for k in range(nd):
                if per[k]:
                    q[k] %= shape[k]
                elif not 0 <= q[k] < shape[k]:
                    ok = False
            if not ok:
                continue
            cap = int(w[p]) * int(structure[idx])
            us.append(ids[p])
            vs.append(ids[tuple(q)])
            cs.append(cap)
            if symmetric:
                us.append(ids[tuple(q)])
                vs.append(ids[p])
                cs.append(cap)
    return np.array(us, dtype=np.int64), np.array(vs, dtype=np.int64), np.array(cs, dtype=np.int64)


def gcut_grid(shape, source, sink, weights, structure, symmetric, periodic=False, solver="auto"):
    g = gcut.Graph()
    ids = g.add_grid_nodes(shape)
    g.add_grid_edges(ids, weights=weights, structure=structure, symmetric=symmetric,
                     periodic=periodic)
    g.add_grid_tedges(ids, source, sink)
    flow = g.maxflow(solver=solver)
    return flow, g.get_grid_segments(ids), g


@pytest.mark.parametrize("name", list(STRUCTURES_2D))
@pytest.mark.parametrize("symmetric", [False, True])
def test_grid_structures_against_oracles(rng, name, symmetric):
    structure = STRUCTURES_2D[name]
    for trial in range(6):
        shape = (int(rng.integers(1, 9)), int(rng.integers(1, 9)))
        weights = rng.integers(0, 30, size=shape)
        source = rng.integers(0, 60, size=shape)
        sink = rng.integers(0, 60, size=shape)
        flow, seg, g = gcut_grid(shape, source, sink, weights, structure, symmetric)
        edges = explicit_edges(shape, weights, structure, symmetric)
        assert grid_cut_value(shape, source, sink, edges, seg) == flow
        assert g.verify() == flow
        # The same arcs through the general graph interface.
        h = gcut.Graph()
        h.add_nodes(int(np.prod(shape)))
        if len(edges[0]):
            h.add_edges(edges[0], edges[1], edges[2], 0)
        h.add_tedges(np.arange(int(np.prod(shape))), source.reshape(-1), sink.reshape(-1))
        assert h.maxflow() == flow, f"{name} trial {trial}"
        # Offsets past the 8-neighbourhood make a general graph, if any node has that
        # neighbour at all.
        centre = np.array(structure.shape) // 2
        far = [np.array(i) - centre for i in zip(*np.nonzero(structure))]
        far = [o for o in far if np.abs(o).max() > 1 and np.all(np.abs(o) < shape)]
        assert g.layout.startswith("graph" if far else "grid")


def test_native_layout_and_connectivity():
    g = gcut.Graph()
    ids = g.add_grid_nodes((4, 5))
    g.add_grid_edges(ids, 3, symmetric=True)
    assert g.layout == "grid4"
    g.add_grid_edges(ids, 1, structure=gcut.moore_structure(2))
    assert g.layout == "grid8"
    g3 = gcut.Graph()
    ids3 = g3.add_grid_nodes((3, 4, 5))
    g3.add_grid_edges(ids3, 2)
    assert g3.layout == "grid6"
    g3.add_grid_edges(ids3, 2, structure=gcut.moore_structure(3, directed=True), symmetric=True)
    assert g3.layout == "grid26"
    # A subset of the ids, or any add_edge: a general graph.
    g.add_grid_edges(ids[1:, 1:], 1)
    assert g.layout == "graph"


def test_3d_grids_native_vs_general(rng):
    for conn_structure in (gcut.vonNeumann_structure(3), gcut.moore_structure(3, directed=True)):
        shape = (3, 4, 5)
        weights = rng.integers(0, 20, size=shape)
        source = rng.integers(0, 50, size=shape)
        sink = rng.integers(0, 50, size=shape)
        flow, seg, g = gcut_grid(shape, source, sink, weights, conn_structure, True)
        assert g.layout.startswith("grid")
        edges = explicit_edges(shape, weights, conn_structure, True)
        assert grid_cut_value(shape, source, sink, edges, seg) == flow
        # periodic forces the general path; with periodic=False on every axis it is native.
        flow2, _, g2 = gcut_grid(shape, source, sink, weights, conn_structure, True,
                                 periodic=[False, False, False])
        assert flow2 == flow and g2.layout.startswith("grid")


def test_periodic(rng):
    shape = (4, 6)
    weights = rng.integers(0, 20, size=shape)
    source = rng.integers(0, 50, size=shape)
    sink = rng.integers(0, 50, size=shape)
    st = gcut.moore_structure(2)
    for periodic in (True, [True, False], [False, True]):
        flow, seg, g = gcut_grid(shape, source, sink, weights, st, False, periodic=periodic)
        assert g.layout == "graph"
        edges = explicit_edges(shape, weights, st, False, periodic)
        assert grid_cut_value(shape, source, sink, edges, seg) == flow


def test_cpu_pr_equals_bk_on_native_grid(rng):
    shape = (40, 50)
    weights = rng.integers(0, 40, size=shape)
    source = rng.integers(0, 80, size=shape) * (rng.random(shape) < 0.3)
    sink = rng.integers(0, 80, size=shape) * (rng.random(shape) < 0.3)
    st = gcut.moore_structure(2, directed=True)
    flow_bk, _, _ = gcut_grid(shape, source, sink, weights, st, True, solver="bk")
    flow_pr, seg, g = gcut_grid(shape, source, sink, weights, st, True, solver="cpu-pr")
    assert flow_pr == flow_bk and g.stats["solver"] == "cpu-pr"
    assert g.verify() == flow_bk


def test_terminal_sums_past_int32_move_to_graph():
    g = gcut.Graph()
    ids = g.add_grid_nodes((2, 2))
    g.add_grid_edges(ids, 5, symmetric=True)
    big = np.full((2, 2), 2**31 - 1, dtype=np.int64)
    g.add_grid_tedges(ids, big, 0)
    assert g.layout.startswith("grid")
    g.add_grid_tedges(ids, big, 0)  # sums past int32: kept exactly in a general graph
    assert g.layout == "graph"
    g.add_grid_tedges(ids, 0, 2**33)
    assert g.maxflow() == 4 * 2 * (2**31 - 1)


def direction_weights(shape, weights, structure, symmetric, connectivity):
    """grid_maxflow's (dirs, *shape) array for a PyMaxflow-style structure, built from the
    documented direction order."""
    nd = len(shape)
    offsets = {
        4: [(0, 1), (0, -1), (1, 0), (-1, 0)],
        8: [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, -1), (1, -1), (-1, 1)],
    }[connectivity]
    out = np.zeros((connectivity,) + shape, dtype=np.int64)
    centre = np.array(structure.shape) // 2
    w = np.broadcast_to(weights, shape)
    for idx in zip(*np.nonzero(structure)):
        o = tuple(int(x) for x in np.array(idx) - centre)
        if not any(o):
            continue
        for sign, oo in ((1, o), (-1, tuple(-x for x in o))):
            if sign == -1 and not symmetric:
                continue
            d = offsets.index(oo)
            for p in np.ndindex(*shape):
                src = tuple(np.array(p) - (np.array(oo) if sign == -1 else 0))
                q = tuple(np.array(p) + np.array(oo))
                if all(0 <= q[k] < shape[k] for k in range(nd)) and all(
                    0 <= src[k] < shape[k] for k in range(nd)
                ):
                    out[d][p] += int(w[src]) * int(structure[idx])
    return out


@pytest.mark.parametrize("connectivity", [4, 8])
def test_grid_maxflow_direction_order(rng, connectivity):
    shape = (6, 7)
    st = gcut.vonNeumann_structure(2) if connectivity == 4 else np.array(
        [[1, 2, 3], [4, 0, 5], [6, 7, 8]]
    )
    for trial in range(5):
        weights = rng.integers(0, 20, size=shape)
        source = rng.integers(0, 50, size=shape)
        sink = rng.integers(0, 50, size=shape)
        w = direction_weights(shape, weights, st, False, connectivity)
        res = gcut.grid_maxflow(source, sink, w, connectivity=connectivity)
        flow, labels = res
        assert res.flow == flow and res.labels is labels and res.scale is None
        assert labels.dtype == bool and labels.shape == shape
        ref, _, _ = gcut_grid(shape, source, sink, weights, st, False)
        assert flow == ref, f"trial {trial}"
        edges = explicit_edges(shape, weights, st, False)
        assert grid_cut_value(shape, source, sink, edges, labels) == flow


def test_grid_maxflow_3d_and_solvers(rng):
    shape = (5, 6, 7)
    source = rng.integers(0, 50, size=shape).astype(np.int32)
    sink = rng.integers(0, 50, size=shape).astype(np.int32)
    w = rng.integers(0, 20, size=(6,) + shape).astype(np.int32)
    a = gcut.grid_maxflow(source, sink, w, connectivity=6, solver="bk")
    b = gcut.grid_maxflow(source, sink, w, connectivity=6, solver="cpu-pr", threads=2)
    assert a.flow == b.flow and a.solver == "bk" and b.solver == "cpu-pr"
    w26 = rng.integers(0, 20, size=(26,) + shape)
    c = gcut.grid_maxflow(source, sink, w26, connectivity=26, solver="bk")
    d = gcut.grid_maxflow(source, sink, w26, connectivity=26, solver="cpu-pr")
    assert c.flow == d.flow


def test_grid_maxflow_scale():
    src = np.array([[0.5, 0.0], [0.0, 0.0]])
    snk = np.array([[0.0, 0.0], [0.0, 0.3]])
    w = np.full((4, 2, 2), 0.25)
    with pytest.raises(TypeError, match="scale"):
        gcut.grid_maxflow(src, snk, w)
    res = gcut.grid_maxflow(src, snk, w, scale=100)
    assert res.scale == 100.0
    assert res.flow == 30  # two paths of 25 each, then the sink arc of 0.3 * 100


# ---- PyMaxflow ----------------------------------------------------------------------------


@needs_pymaxflow
def test_pymaxflow_random_graphs(rng):
    for trial in range(30):
        n = int(rng.integers(2, 300))
        m = int(rng.integers(0, 4 * n))
        u, v = rng.integers(0, n, size=m), rng.integers(0, n, size=m)
        c, r = rng.integers(0, 100, size=m), rng.integers(0, 100, size=m)
        s, t = rng.integers(0, 100, size=n), rng.integers(0, 100, size=n)
        ref = pymaxflow.Graph[int](n, m)
        rid = ref.add_nodes(n)
        for k in range(m):  # PyMaxflow's add_edges wants int32 vectors; scalar calls are safe
            ref.add_edge(int(u[k]), int(v[k]), int(c[k]), int(r[k]))
        for k in range(n):
            ref.add_tedge(int(rid[k]), int(s[k]), int(t[k]))
        g = gcut.Graph(n, m)
        ids = g.add_nodes(n)
        g.add_edges(ids[u], ids[v], c, r)
        g.add_tedges(ids, s, t)
        assert g.maxflow() == ref.maxflow(), f"trial {trial}"


@needs_pymaxflow
@pytest.mark.parametrize("name", list(STRUCTURES_2D))
@pytest.mark.parametrize("symmetric", [False, True])
def test_pymaxflow_grids(rng, name, symmetric):
    structure = STRUCTURES_2D[name]
    for trial in range(4):
        shape = (int(rng.integers(1, 30)), int(rng.integers(1, 30)))
        weights = rng.integers(0, 50, size=shape)
        source = rng.integers(0, 100, size=shape)
        sink = rng.integers(0, 100, size=shape)
        ref = pymaxflow.Graph[int]()
        rid = ref.add_grid_nodes(shape)
        ref.add_grid_edges(rid, weights=weights, structure=structure, symmetric=symmetric)
        ref.add_grid_tedges(rid, source, sink)
        flow, seg, g = gcut_grid(shape, source, sink, weights, structure, symmetric)
        assert flow == ref.maxflow(), f"{name} trial {trial}"
        edges = explicit_edges(shape, weights, structure, symmetric)
        assert grid_cut_value(shape, source, sink, edges, seg) == flow


@needs_pymaxflow
def test_pymaxflow_defaults_periodic_3d_and_structures(rng):
    cases = [
        ((12, 9), 1, None, False, False),
        ((12, 9), "w", None, True, False),
        ((7, 8), "w", pymaxflow.vonNeumann_structure(ndim=2, directed=True), True, False),
        ((6, 5, 4), "w", None, False, False),
        ((6, 5, 4), "w", None, True, [True, False, True]),
        ((9, 9), "w", np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0]]), False, True),
    ]
    for shape, weights, structure, symmetric, periodic in cases:
        w = rng.integers(0, 30, size=shape) if weights == "w" else weights
        source = rng.integers(0, 90, size=shape)
        sink = rng.integers(0, 90, size=shape)
        ref = pymaxflow.Graph[int]()
        rid = ref.add_grid_nodes(shape)
        ref.add_grid_edges(rid, weights=w, structure=structure, symmetric=symmetric,
                           periodic=periodic)
        ref.add_grid_tedges(rid, source, sink)
        g = gcut.Graph()
        ids = g.add_grid_nodes(shape)
        g.add_grid_edges(ids, weights=w, structure=structure, symmetric=symmetric,
                         periodic=periodic)
        g.add_grid_tedges(ids, source, sink)
        assert g.maxflow() == ref.maxflow(), (shape, structure, symmetric, periodic)
        ref_seg = ref.get_grid_segments(rid)
        assert ref_seg.shape == g.get_grid_segments(ids).shape


@needs_pymaxflow
def test_pymaxflow_segments_on_unique_cut():
    # A problem with a unique minimum cut: segments must match PyMaxflow's exactly.
    shape = (5, 6)
    source = np.zeros(shape, dtype=np.int64)
    sink = np.zeros(shape, dtype=np.int64)
    source[:, :2] = 100
    sink[:, 4:] = 100
    weights = np.full(shape, 7)
    weights[:, 2] = 1  # the cheapest cut is between columns 2 and 3, and only there
    ref = pymaxflow.Graph[int]()
    rid = ref.add_grid_nodes(shape)
    ref.add_grid_edges(rid, weights=weights, symmetric=True)
    ref.add_grid_tedges(rid, source, sink)
    g = gcut.Graph()
    ids = g.add_grid_nodes(shape)
    g.add_grid_edges(ids, weights=weights, symmetric=True)
    g.add_grid_tedges(ids, source, sink)
    assert g.maxflow() == ref.maxflow() == 5
    assert np.array_equal(g.get_grid_segments(ids), ref.get_grid_segments(rid))


def test_float_weights_with_scale_stay_native(rng):
    shape = (9, 11)
    w = rng.integers(0, 30, size=shape)
    source = rng.integers(0, 90, size=shape)
    sink = rng.integers(0, 90, size=shape)
    g = gcut.Graph(scale=4)
    ids = g.add_grid_nodes(shape)
    g.add_grid_edges(ids, weights=w / 4.0, symmetric=True)  # exact quarters: round(w/4 * 4) = w
    g.add_grid_tedges(ids, source / 4.0, sink / 4.0)
    assert g.layout == "grid4"
    ref, _, _ = gcut_grid(shape, source, sink, w, None, True)
    assert g.maxflow() == ref


def test_offsets_beyond_the_grid_add_nothing():
    g = gcut.Graph()
    ids = g.add_grid_nodes((2, 2))
    st = np.zeros((7, 7), dtype=np.int32)
    st[3, 6] = 5  # offset (0, +3): no node of a 2x2 grid has that neighbour
    st[3, 4] = 1
    g.add_grid_edges(ids, 1, structure=st)
    assert g.layout == "grid4"
    g.add_grid_tedges(ids, [[9, 0], [9, 0]], [[0, 9], [0, 9]])
    assert g.maxflow() == 2


def test_grid_after_an_empty_solve_and_edge_counts():
    g = gcut.Graph()
    assert g.maxflow() == 0
    ids = g.add_grid_nodes((3, 4))
    g.add_grid_edges(ids, 2, symmetric=True)
    assert g.layout == "grid4" and g.get_edge_count() == 2 * (2 * 4 + 3 * 3)
    g.add_grid_tedges(ids, [[5, 0, 0, 0]] * 3, [[0, 0, 0, 5]] * 3)
    assert g.maxflow() == 6
    g.add_edge(0, 11, 1, 0)  # a general graph now: one edge per neighbour pair, plus this one
    assert g.layout == "graph" and g.get_edge_count() == 2 * 4 + 3 * 3 + 1
    assert g.maxflow() == 7
