# test_errors.py - every error path of the package: bad shapes, dtypes, negative capacities,
# out-of-range ids, the memory cap, device arrays; each raises the documented exception and
# names the argument at fault, and the interpreter survives.
import numpy as np
import pytest

import gcut


@pytest.fixture
def graph():
    g = gcut.Graph()
    g.add_nodes(4)
    return g


def test_float_capacities_need_scale(graph):
    with pytest.raises(TypeError, match="capacities.*scale"):
        graph.add_edges([0], [1], [1.5], [0])
    with pytest.raises(TypeError, match="caps_source"):
        graph.add_tedges([0], [0.5], [0])
    with pytest.raises(TypeError, match="scale"):
        gcut.Graph[float]
    with pytest.raises(TypeError, match=r"Graph\["):
        gcut.Graph[str]
    with pytest.raises(ValueError, match="scale"):
        gcut.Graph(scale=-1)
    with pytest.raises(TypeError, match="scale"):
        gcut.Graph(scale="x")
    with pytest.raises(ValueError, match="not finite"):
        gcut.Graph(scale=2).add_edges([0], [1], [np.nan], [0])


def test_negative_and_too_large_capacities(graph):
    with pytest.raises(ValueError, match=r"rev_capacities\[1\].*-3.*>= 0"):
        graph.add_edges([0, 1], [1, 2], [1, 1], [0, -3])
    with pytest.raises(ValueError, match="capacities.*int32"):
        graph.add_edges([0], [1], np.array([2**31], dtype=np.int64), [0])
    with pytest.raises(ValueError, match="caps_sink.*>= 0"):
        graph.add_tedges([0], [1], [-1])
    with pytest.raises(ValueError, match="2\\^61"):
        graph.add_tedges([0], [2**62], [0])
    with pytest.raises(ValueError, match="caps_source"):
        graph.add_tedges([0, 0], [2**60, 2**60], [0, 0])  # the sum passes 2^61 - 1
    with pytest.raises(TypeError, match="capacities"):
        graph.add_edges([0], [1], ["a"], [0])
    with pytest.raises(TypeError, match="capacities"):
        graph.add_edges([0], [1], [1 + 2j], [0])


def test_out_of_range_ids(graph):
    with pytest.raises(ValueError, match=r"j\[0\] = 4 is not a node id"):
        graph.add_edges([0], [4], [1], [1])
    with pytest.raises(ValueError, match=r"i\[1\] = -1"):
        graph.add_edges([0, -1], [1, 1], [1, 1], [1, 1])
    with pytest.raises(ValueError, match=r"i\[0\] = 9"):
        graph.add_tedge(9, 1, 1)
    with pytest.raises(TypeError, match="node ids"):
        graph.add_edges([0.0], [1], [1], [1])
    with pytest.raises(ValueError, match="edges\\[0\\] = 0 is not an edge id"):
        graph.set_edges([0], [1], [1])
    graph.add_edge(0, 1, 1, 1)
    with pytest.raises(ValueError, match="edges\\[0\\] = 5"):
        graph.set_edge(5, 1, 1)
    with pytest.raises(ValueError, match="num_nodes"):
        graph.add_nodes(-1)
    with pytest.raises(TypeError, match="num_nodes"):
        graph.add_nodes(2.5)


def test_shapes(graph):
    with pytest.raises(ValueError, match="broadcast"):
        graph.add_edges([0, 1], [1, 2, 3], [1], [1])
    with pytest.raises(ValueError, match="broadcast"):
        graph.add_tedges([0, 1], [1, 2, 3], [0])
    g = gcut.Graph()
    ids = g.add_grid_nodes((3, 4))
    with pytest.raises(ValueError, match="weights.*broadcast|broadcast.*weights"):
        g.add_grid_edges(ids, weights=np.ones((4, 3), dtype=np.int32))
    with pytest.raises(ValueError, match="structure"):
        g.add_grid_edges(ids, structure=np.ones((2, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="structure"):
        g.add_grid_edges(ids, structure=np.ones((3, 3, 3), dtype=np.int32))
    with pytest.raises(ValueError, match="structure has a negative"):
        g.add_grid_edges(ids, structure=-gcut.vonNeumann_structure(2))
    with pytest.raises(ValueError, match="weights has a negative"):
        g.add_grid_edges(ids, weights=-1)
    with pytest.raises(ValueError, match="int32"):
        g.add_grid_edges(ids, weights=2**30, structure=np.array([[0, 0, 0], [0, 0, 4], [0, 0, 0]]))
    with pytest.raises(TypeError, match="scale"):
        g.add_grid_edges(ids, weights=0.5)
    with pytest.raises(TypeError, match="scale"):
        g.add_grid_edges(ids, structure=np.full((3, 3), 0.5))
    with pytest.raises(ValueError, match="broadcast"):
        g.add_grid_tedges(ids, np.ones((2, 2), dtype=np.int32), 0)
    with pytest.raises(ValueError, match="negative"):
        g.add_grid_nodes((3, -1))
    with pytest.raises(TypeError, match="shape"):
        g.add_grid_nodes("abc")


def test_grid_maxflow_errors():
    s = np.zeros((3, 4), dtype=np.int32)
    w = np.zeros((4, 3, 4), dtype=np.int32)
    with pytest.raises(ValueError, match=r"weights must have shape \(4, \*source.shape\)"):
        gcut.grid_maxflow(s, s, w[:3])
    with pytest.raises(ValueError, match=r"weights must have shape"):
        gcut.grid_maxflow(s, s, np.zeros((4, 4, 3), dtype=np.int32))
    with pytest.raises(ValueError, match="sink must have the shape"):
        gcut.grid_maxflow(s, s[:2], w)
    with pytest.raises(ValueError, match="connectivity must be 4 or 8"):
        gcut.grid_maxflow(s, s, w, connectivity=6)
    with pytest.raises(ValueError, match="2D or 3D"):
        gcut.grid_maxflow(s[0], s[0], w[:, 0])
    with pytest.raises(ValueError, match=r"weights\[.*>= 0"):
        gcut.grid_maxflow(s, s, w - 1)
    with pytest.raises(ValueError, match="source.*int32"):
        gcut.grid_maxflow(s.astype(np.int64) + 2**31, s, w)
    with pytest.raises(ValueError, match="solver 'nope'"):
        gcut.grid_maxflow(s, s, w, solver="nope")
    with pytest.raises(ValueError, match="threads"):
        gcut.grid_maxflow(s, s, w, threads=-1)
    with pytest.raises(TypeError, match="solver"):
        gcut.grid_maxflow(s, s, w, solver=3)
    with pytest.raises(TypeError, match="connectivity"):
        gcut.grid_maxflow(s, s, w, connectivity="4")


def test_state_errors():
    g = gcut.Graph()
    g.add_nodes(3)
    with pytest.raises(RuntimeError, match="maxflow"):
        g.get_segments()
    g.maxflow()
    g.add_nodes(1)
    with pytest.raises(ValueError, match="nodeids\\[0\\] = 3 is not a node of the last"):
        g.get_grid_segments([3])
    h = gcut.Graph()
    ids = h.add_grid_nodes((2, 2))
    h.add_grid_edges(ids, 1)
    with pytest.raises(ValueError, match="add_grid_edges"):
        h.set_edges([0], [1], [1])
    with pytest.raises(ValueError, match="node_hint"):
        gcut.Graph(-1)


def test_memory_cap_raises_memory_error():
    old = gcut.memory_limit()
    try:
        gcut.set_memory_limit(1 << 20)
        with pytest.raises(MemoryError, match="out of memory"):
            g = gcut.Graph()
            g.add_nodes(10_000_000)
            g.add_edge(0, 1, 1, 1)
        with pytest.raises(MemoryError):
            n = np.zeros((2000, 2000), dtype=np.int32)
            gcut.grid_maxflow(n, n, np.zeros((4, 2000, 2000), dtype=np.int32))
    finally:
        gcut.set_memory_limit(0 if old == 0 else old)
    assert gcut.memory_limit() == old
    with pytest.raises(ValueError):
        gcut.set_memory_limit(-5)


def test_images_errors(tmp_path):
    with pytest.raises(OSError, match="read_image"):
        gcut.read_image(tmp_path / "missing.png")
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with pytest.raises(ValueError, match="read_image"):
        gcut.read_image(bad)
    with pytest.raises(TypeError, match="uint8 or uint16"):
        gcut.write_image(tmp_path / "f.png", np.zeros((3, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="channels"):
        gcut.write_image(tmp_path / "f.png", np.zeros((3, 3, 5), dtype=np.uint8))
    with pytest.raises(ValueError, match="write_png"):
        gcut.write_png(tmp_path / "f.jpg", np.zeros((3, 3), dtype=np.uint8))
    img = np.zeros((8, 8, 3), dtype=np.uint8)
    seeds = np.zeros((8, 8), dtype=np.uint8)
    with pytest.raises(ValueError, match="seed"):
        gcut.segment(img, seeds)  # no seeds of either class
    seeds[0, 0] = 7
    with pytest.raises(ValueError, match="seeds"):
        gcut.segment(img, seeds)
    with pytest.raises(ValueError, match="spatial shape"):
        gcut.segment(img, np.zeros((8, 7), dtype=np.uint8))
    with pytest.raises(ValueError, match="model"):
        gcut.segment(img, seeds, model="svm")
    with pytest.raises(ValueError, match="seed_encoding"):
        gcut.segment(img, seeds, seed_encoding="rgb")
    with pytest.raises(TypeError, match="image"):
        gcut.segment(img.astype(np.float32), seeds)


class FakeDLPack:
    """An object that speaks DLPack, on the CPU or claiming a CUDA device."""

    def __init__(self, array, device_type):
        self.array, self.device_type = array, device_type

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (self.device_type, 0)


def test_dlpack_host_and_device():
    s = np.zeros((3, 4), dtype=np.int32)
    s[0, 0] = 5
    t = np.zeros((3, 4), dtype=np.int32)
    t[2, 3] = 5
    w = np.full((4, 3, 4), 2, dtype=np.int32)
    ref = gcut.grid_maxflow(s, t, w).flow
    assert gcut.grid_maxflow(FakeDLPack(s, 1), t, FakeDLPack(w, 1)).flow == ref
    # A CUDA array goes to the device path, which takes all three on the device.
    with pytest.raises(TypeError, match="sink is a host array"):
        gcut.grid_maxflow(FakeDLPack(s, 2), t, w)
    with pytest.raises(TypeError, match="caps_source is a device array.*DLPack device type 2"):
        gcut.Graph().add_tedges([0], FakeDLPack(s[0, :1], 2), [0])


def test_interpreter_survives_direct_core_misuse():
    # The C layer re-checks what the Python layer normally guarantees.
    g = gcut.Graph()
    g.add_nodes(2)
    with pytest.raises(TypeError, match="dtype"):
        g._add_edges(np.array([0]), np.array([1]), np.array([1.0]), np.array([1], dtype=np.int32))
    with pytest.raises(ValueError, match="equal lengths"):
        g._add_edges(np.array([0, 1]), np.array([1]), np.array([1], dtype=np.int32),
                     np.array([1], dtype=np.int32))
    with pytest.raises(ValueError, match="C-contiguous"):
        g._add_edges(np.array([0, 1, 0])[::2], np.array([1, 0]), np.array([1, 1], dtype=np.int32),
                     np.array([1, 1], dtype=np.int32))
    with pytest.raises(TypeError, match="numpy array"):
        g._tedges([0], [1], [1], False)
    with pytest.raises(ValueError, match="not a grid"):
        g._grid_add((0, 1), np.zeros(2, dtype=np.int32))


def test_verify_after_the_graph_grew_asks_for_a_solve():
    g = gcut.Graph()
    g.add_nodes(2)
    g.add_edge(0, 1, 3, 0)
    g.add_tedges([0, 1], [5, 0], [0, 5])
    assert g.maxflow() == 3 and g.verify() == 3
    g.add_nodes(5)
    g.add_edge(2, 6, 1, 1)  # the C graph grows: the old labels no longer cover it
    with pytest.raises(RuntimeError, match="maxflow"):
        g.verify()
    assert list(g.get_grid_segments([0, 1])) == [False, True]  # the old nodes still answer
    assert g.maxflow() == 3 and g.verify() == 3
    h = gcut.Graph()
    ids = h.add_grid_nodes((3, 3))
    h.add_grid_edges(ids, 2)
    h.add_grid_tedges(ids, 1, 1)
    flow = h.maxflow()
    assert h.verify() == flow
    h.add_grid_edges(ids, 1, structure=gcut.moore_structure(2))  # 4 -> 8: a new grid
    with pytest.raises(RuntimeError, match="maxflow"):
        h.verify()


def test_gpu_solver_without_gpu_is_a_clear_error():
    info = {s["name"]: s for s in gcut.solvers()}
    s = np.ones((4, 4), dtype=np.int32)
    w = np.ones((4, 4, 4), dtype=np.int32)
    if "cuda-grid" not in info:
        with pytest.raises(ValueError, match="'cuda-grid' is not in this build"):
            gcut.grid_maxflow(s, s, w, solver="cuda-grid")
    elif not info["cuda-grid"]["available"]:
        with pytest.raises(gcut.GcutError, match="GPU"):
            gcut.grid_maxflow(s, s, w, solver="cuda-grid")
    else:  # a GPU is here: the same flow as bk
        assert (gcut.grid_maxflow(s, s, w, solver="cuda-grid").flow
                == gcut.grid_maxflow(s, s, w, solver="bk").flow)


def test_segment_parameters_named():
    img = np.zeros((8, 8), dtype=np.uint8)
    seeds = np.zeros((8, 8), dtype=np.uint8)
    seeds[0, 0], seeds[7, 7] = 1, 2
    for kw, name in ((dict(lambda_=-1), "lambda_"), (dict(lambda_=float("inf")), "lambda_"),
                     (dict(sigma=float("nan")), "sigma"), (dict(scale="x"), "scale"),
                     (dict(components=0), "components"), (dict(bins=1), "bins"),
                     (dict(connectivity=5), "connectivity"), (dict(connectivity=6), "3D")):
        with pytest.raises(ValueError, match=name):
            gcut.segment(img, seeds, **kw)


def test_failed_add_grid_edges_changes_nothing():
    g = gcut.Graph()
    ids = g.add_grid_nodes((3, 3))
    st = np.zeros((3, 3), dtype=np.int64)
    st[1, 2], st[2, 1] = 1, 2**31  # the first offset fits, the second does not
    with pytest.raises(ValueError, match="past int32"):
        g.add_grid_edges(ids, 1, structure=st)
    assert g.get_edge_count() == 0 and g.layout.startswith("grid")
    with pytest.raises(ValueError, match="past int32"):
        g.add_grid_edges(ids, np.array(2**40, dtype=np.uint64), structure=gcut.moore_structure(2))
    g.add_grid_tedges(ids, 1, 0)
    assert g.maxflow() == 0  # no edge and no sink capacity


def test_lean_int32_paths_check_signs_and_change_nothing():
    """int32 arrays on a native grid skip numpy's passes (the C layer checks their signs while
    it reads them): a negative entry still raises naming the argument, and nothing changes."""
    g = gcut.Graph()
    ids = g.add_grid_nodes((4, 5))
    w = np.ones((4, 5), dtype=np.int32)
    w[2, 3] = -7
    with pytest.raises(ValueError, match=r"weights\[13\].*-7.*>= 0"):
        g.add_grid_edges(ids, weights=w, symmetric=True)
    assert g.get_edge_count() == 0
    with pytest.raises(ValueError, match=r"weights\[13\].*-7"):
        g.add_grid_edges(ids, weights=w, structure=gcut.moore_structure(2))
    assert g.get_edge_count() == 0 and g.layout in ("grid0", "grid4")
    t = np.ones((4, 5), dtype=np.int32)
    t[0, 1] = -2
    with pytest.raises(ValueError, match=r"sinkcaps\[1\].*-2"):
        g.add_grid_tedges(ids, np.full((4, 5), 9, dtype=np.int32), t)
    with pytest.raises(ValueError, match=r"sourcecaps\[1\].*-2"):
        g.add_grid_tedges(ids, t, 0)
    g.add_grid_tedges(ids, 0, 1)
    assert g.maxflow() == 0  # no source capacity was added by the failed calls
    # A grid too small for any arc: the weights are still checked.
    h = gcut.Graph()
    one = h.add_grid_nodes((1, 1))
    with pytest.raises(ValueError, match="weights has a negative"):
        h.add_grid_edges(one, weights=np.full((1, 1), -1, dtype=np.int32))
    # grid_maxflow borrows int32 arrays without a numpy pass: signs checked in C, named.
    s = np.ones((3, 4), dtype=np.int32)
    ww = np.ones((4, 3, 4), dtype=np.int32)
    for name, args in (("source", (-s, s, ww)), ("sink", (s, -s, ww)), ("weights", (s, s, -ww))):
        with pytest.raises(ValueError, match=rf"{name}\[0\].*>= 0"):
            gcut.grid_maxflow(*args)
    ww[3, 2, 1] = -5
    with pytest.raises(ValueError, match=r"weights\[45\].*-5"):
        gcut.grid_maxflow(s, s, ww)


def test_fused_grid_add_rolls_back():
    """The native grid fill checks and adds in one pass: a negative value or an int32
    overflow found midway (or a negative weight of a node without that neighbour) leaves the
    capacities exactly as they were (checked against a reference solve)."""
    shape = (5, 6)
    ref = gcut.Graph()
    ids = ref.add_grid_nodes(shape)
    base = np.arange(30, dtype=np.int32).reshape(shape) % 7 + 1
    ref.add_grid_edges(ids, weights=base, symmetric=True)
    ref.add_grid_tedges(ids, (base * 3) % 11, (base * 5) % 13)
    want = ref.maxflow()
    g = gcut.Graph()
    ids = g.add_grid_nodes(shape)
    g.add_grid_edges(ids, weights=base, symmetric=True)
    g.add_grid_tedges(ids, (base * 3) % 11, (base * 5) % 13)
    n_edges = g.get_edge_count()
    bad = base.copy()
    bad[3, 2] = -1  # midway: the entries before it were added, then taken back
    with pytest.raises(ValueError, match=r"weights\[20\].*-1"):
        g.add_grid_edges(ids, weights=bad, symmetric=True)
    edge = base.copy()
    edge[4, 5] = -3  # the last node: no neighbour at (0, 1) or (1, 0), still refused
    with pytest.raises(ValueError, match=r"weights\[29\].*-3"):
        g.add_grid_edges(ids, weights=edge, symmetric=True)
    big = base.copy()
    big[4, 1] = 2**31 - 2  # the (0, 1) arcs overflow at node (4, 1): moved to a general graph
    h = gcut.Graph()
    hid = h.add_grid_nodes(shape)
    h.add_grid_edges(hid, weights=base, symmetric=True)
    h.add_grid_edges(hid, weights=big, structure=np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0]]))
    assert h.layout == "graph"
    src = np.ones(shape, np.int32)
    src[2, 5] = -4  # terminals: taken back midway too
    with pytest.raises(ValueError, match=r"sourcecaps\[17\].*-4"):
        g.add_grid_tedges(ids, src, 0)
    with pytest.raises(ValueError, match=r"sinkcaps\[0\].*-1"):
        g.add_grid_tedges(ids, np.ones(shape, np.int32), -np.ones(shape, np.int32))
    assert g.get_edge_count() == n_edges and g.layout == "grid4"
    assert g.maxflow() == want
