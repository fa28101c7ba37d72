# test_context.py - gcut.GridContext (the C library's grid solver contexts): a sequence of
# capacity changes solved warm equals a fresh grid_maxflow of the same arrays every time, with
# the cut certificate recomputed here; marks; errors.
import numpy as np
import pytest

import gcut
from test_grid import direction_weights, explicit_edges, grid_cut_value


@pytest.mark.parametrize("solver", ["bk", "cpu-pr"])
@pytest.mark.parametrize("warm", [True, False])
def test_context_resolves_equal_fresh(rng, solver, warm):
    shape = (12, 15)
    st = gcut.vonNeumann_structure(2)
    weights = rng.integers(0, 20, size=shape)
    w = direction_weights(shape, weights, st, False, 4)
    source = rng.integers(0, 60, size=shape)
    sink = rng.integers(0, 60, size=shape)
    ctx = gcut.GridContext(shape, 4, solver=solver, threads=2, warm=warm)
    res = ctx.solve(source, sink, w)
    assert res.flow == gcut.grid_maxflow(source, sink, w).flow
    for step in range(6):
        idx = rng.integers(0, source.size, size=10)
        source.reshape(-1)[idx] = rng.integers(0, 60, size=10)
        sink.reshape(-1)[idx] = rng.integers(0, 60, size=10)
        changed = idx if step % 2 else None
        res = ctx.solve(source, sink, changed=changed)
        fresh = gcut.grid_maxflow(source, sink, w)
        assert res.flow == fresh.flow, f"step {step}"
        edges = explicit_edges(shape, weights, st, False)
        assert grid_cut_value(shape, source, sink, edges, res.labels) == res.flow
    info = ctx.info
    assert info["solves"] == 7 and info["solver"] == solver
    assert (info["warm_solves"] > 0) == warm
    # cuda-grid's own warm stops: counted by it alone, never more than its warm solves
    for key in ("incremental", "sparse_stops", "certified_stops"):
        assert 0 <= info[key] <= info["warm_solves"], (key, info)
        if solver != "cuda-grid":
            assert info[key] == 0, (key, info)


def test_context_errors():
    with pytest.raises(ValueError, match="connectivity"):
        gcut.GridContext((3, 3), 6)
    with pytest.raises(ValueError, match="2D or 3D"):
        gcut.GridContext((3,), 4)
    with pytest.raises(ValueError, match="solver 'nope'"):
        gcut.GridContext((3, 3), solver="nope")
    ctx = gcut.GridContext((3, 3))
    with pytest.raises(ValueError, match=r"source must have shape \(3, 3\)"):
        ctx.solve(source=np.zeros((2, 3), dtype=np.int32))
    with pytest.raises(ValueError, match=r"weights must have shape \(4, 3, 3\)"):
        ctx.solve(weights=np.zeros((3, 3, 3), dtype=np.int32))
    with pytest.raises(ValueError, match=">= 0"):
        ctx.solve(sink=-np.ones((3, 3), dtype=np.int32))
    with pytest.raises(ValueError, match="changed|range|node"):
        ctx.solve(changed=[9])
    assert ctx.solve().flow == 0


def test_context_bad_call_changes_nothing(rng):
    """int32 arrays are sign-checked in C (no numpy pass), all of them before any is copied in:
    a negative weight leaves the source given in the same call uncopied."""
    shape = (6, 7)
    source = rng.integers(0, 30, size=shape).astype(np.int32)
    sink = rng.integers(0, 30, size=shape).astype(np.int32)
    w = rng.integers(0, 10, size=(4,) + shape).astype(np.int32)
    ctx = gcut.GridContext(shape, 4, solver="bk")
    first = ctx.solve(source, sink, w).flow
    bad = w.copy()
    bad[2, 3, 4] = -1
    with pytest.raises(ValueError, match=r"weights\[109\].*-1"):
        ctx.solve(source=source + 5, weights=bad)
    with pytest.raises(ValueError, match=r"sink\[0\].*>= 0"):
        ctx.solve(source=source + 5, sink=-np.ones(shape, np.int32))
    assert ctx.solve().flow == first == gcut.grid_maxflow(source, sink, w).flow


# ---- terminal marks: GridContext.solve(changed_terminals=...) -----------------------------

OFFSETS = {
    4: [(0, 1), (0, -1), (1, 0), (-1, 0)],
    8: [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, -1), (1, -1), (-1, 1)],
    6: [(0, 0, 1), (0, 0, -1), (0, 1, 0), (0, -1, 0), (1, 0, 0), (-1, 0, 0)],
}


def dense_cut_value(source, sink, w, connectivity, sink_side):
    """Capacity of the cut whose sink side is sink_side, from grid_maxflow's dense arrays
    (w[d][p] = capacity of p -> p + offset(d), documented direction order), by loops."""
    t = np.asarray(sink_side, dtype=bool)
    val = int(source[t].sum()) + int(sink[~t].sum())
    shape = source.shape
    for d, o in enumerate(OFFSETS[connectivity]):
        for p in np.ndindex(*shape):
            q = tuple(a + b for a, b in zip(p, o))
            if all(0 <= x < n for x, n in zip(q, shape)) and not t[p] and t[q]:
                val += int(w[d][p])
    return val


def mark_forms(ids, shape, form):
    """The same node set as flat ids, a boolean mask, or np.nonzero's coordinate tuple."""
    if form == "ids":
        return ids
    mask = np.zeros(shape, dtype=bool)
    mask.reshape(-1)[ids] = True
    return mask if form == "mask" else np.nonzero(mask)


def _gpu():
    return any(s["name"] == "cuda-grid" and s["available"] for s in gcut.solvers())


@pytest.mark.parametrize("solver", ["bk", "grid-bk", "cpu-pr", "auto", "cuda-grid"])
@pytest.mark.parametrize("shape,conn", [((9, 11), 4), ((8, 7), 8), ((4, 5, 6), 6)])
def test_terminal_marks_warm_equals_cold(rng, solver, shape, conn):
    """Random sequences of terminal-only changes, marked with changed_terminals= as ids, a
    mask or coordinates (sometimes with changed= for a few arc changes too): every warm solve
    equals a cold context's solve, bk's grid_maxflow and the cut of its own labels (cuda-grid:
    its certified warm stop, on by default, on the terminal-marked steps)."""
    if solver == "cuda-grid" and not _gpu():
        pytest.skip("no usable CUDA device")
    w = rng.integers(0, 12, size=(conn,) + shape).astype(np.int32)
    source = rng.integers(0, 40, size=shape).astype(np.int32)
    sink = rng.integers(0, 40, size=shape).astype(np.int32)
    warm = gcut.GridContext(shape, conn, solver=solver, threads=2)
    cold = gcut.GridContext(shape, conn, solver=solver, threads=2, warm=False)
    assert warm.solve(source, sink, w).flow == cold.solve(source, sink, w).flow
    n = source.size
    for step in range(12):
        k = int(rng.integers(1, max(2, n // 4)))
        ids = rng.choice(n, size=k, replace=False)
        new_s, new_t = source.copy(), sink.copy()
        new_s.reshape(-1)[ids] = rng.integers(0, 40, size=k)
        new_t.reshape(-1)[ids] = rng.integers(0, 40, size=k)
        if step % 3 == 2:  # terminals moved both up and down by a lot
            new_s.reshape(-1)[ids[: k // 2]] = 0
            new_t.reshape(-1)[ids[k // 2:]] += 100
        form = ("ids", "mask", "coords")[step % 3]
        kw = {"changed_terminals": mark_forms(ids, shape, form)}
        expect_marked = set(int(i) for i in ids)
        if step % 4 == 3:  # a few arc changes as well, marked whole with changed=
            arc_ids = rng.choice(n, size=3, replace=False)
            for i in arc_ids:
                w.reshape(conn, -1)[:, i] = rng.integers(0, 12, size=conn)
            kw["changed"] = arc_ids
            expect_marked |= set(int(i) for i in arc_ids)
        differ = int(np.count_nonzero((new_s != source) | (new_t != sink)))
        source, sink = new_s, new_t
        res = warm.solve(source, sink, w, **kw)
        ref = cold.solve(source, sink, w)
        bk = gcut.grid_maxflow(source, sink, w, conn, solver="bk")
        assert res.flow == ref.flow == bk.flow, f"step {step} ({form})"
        assert dense_cut_value(source, sink, w, conn, res.labels) == res.flow, f"step {step}"
        info = warm.info
        if info["warm_solves"] == step + 1 and solver != "cuda-grid":
            # Nodes the solve read as changed: every one that differs, and only marked ones
            # (bk and grid-bk count those that differ, cpu-pr every marked node; cuda-grid's
            # count is tests/test_cuda_context.c's to check).
            assert differ <= info["changed_nodes"] <= len(expect_marked), f"step {step}"
    info = warm.info
    assert info["solves"] == 13
    assert info["warm_solves"] == 12, info  # every solve after the first was warm
    # only terminal-marked steps (9 of the 12) can end on cuda-grid's certificate
    assert 0 <= info["certified_stops"] <= 9, info


@pytest.mark.parametrize("solver", ["bk", "cpu-pr"])
def test_terminal_marks_are_taken_as_promised(rng, solver):
    """The promise is kept: a source capacity changed on a node that is not marked is not
    seen by a warm solve (it solves the problem with the old value there), while the marked
    one is. So the marks really reach the solver; without marks both changes are seen."""
    shape = (10, 12)
    w = rng.integers(1, 10, size=(4,) + shape).astype(np.int32)
    source = rng.integers(0, 30, size=shape).astype(np.int32)
    sink = rng.integers(0, 30, size=shape).astype(np.int32)
    marked, hidden = (2, 3), (7, 8)
    # The hidden node is on the sink side of every minimum cut, and raising its source
    # capacity by 700 raises the flow (every cut pays 700 more there, or its sink's 1000).
    source[hidden], sink[hidden] = 0, 1000
    ctx = gcut.GridContext(shape, 4, solver=solver)
    ctx.solve(source, sink, w)
    s2 = source.copy()
    s2[marked] += 500
    s2[hidden] += 700
    seen = s2.copy()
    seen[hidden] = source[hidden]  # what the promise says the solver sees
    res = ctx.solve(source=s2, changed_terminals=np.ravel_multi_index(marked, shape))
    assert res.flow == gcut.grid_maxflow(seen, sink, w, solver="bk").flow
    assert res.flow != gcut.grid_maxflow(s2, sink, w, solver="bk").flow
    # Unmarked, the next solve compares everything and sees the hidden change too.
    s3 = s2.copy()
    s3[0, 0] += 1
    assert ctx.solve(source=s3).flow == gcut.grid_maxflow(s3, sink, w, solver="bk").flow


@pytest.mark.parametrize("solver", ["bk", "grid-bk", "cpu-pr"])
def test_terminal_marks_do_not_read_arcs(solver):
    """changed_terminals= alone promises the arcs did not change, and every CPU solver takes it
    at its word: an arc changed on such a node is solved with its old value; the next solve
    without marks compares everything and sees it. Node 0 (source 10) feeds node 1 (sink 10)
    through direction 0, (0, +1)."""
    shape = (2, 2)
    w = np.zeros((4,) + shape, np.int32)
    source = np.zeros(shape, np.int32)
    sink = np.zeros(shape, np.int32)
    source[0, 0], sink[0, 1], w[0][0, 0] = 10, 10, 3
    ctx = gcut.GridContext(shape, 4, solver=solver)
    assert ctx.solve(source, sink, w).flow == 3
    source[0, 0], w[0][0, 0] = 9, 7
    assert ctx.solve(source, sink, w, changed_terminals=[0]).flow == 3  # the old arc
    assert ctx.solve().flow == 7  # unmarked: the arc is compared and seen
    assert ctx.info["warm_solves"] == 2


def test_mark_forms_name_the_same_nodes(rng):
    """ids, a mask and coordinates (np.nonzero's arrays, or lists) mark the same nodes (cpu-pr
    counts the marked nodes in info["changed_nodes"]); a tuple of plain ints stays a list of
    ids, as before (also one of the grid's length, which could read as one node's coordinates)."""
    shape = (5, 6)
    w = rng.integers(0, 9, size=(4,) + shape).astype(np.int32)
    source = rng.integers(0, 30, size=shape).astype(np.int32)
    sink = rng.integers(0, 30, size=shape).astype(np.int32)
    ctx = gcut.GridContext(shape, 4, solver="cpu-pr")
    ctx.solve(source, sink, w)
    ids = np.array([3, 7])
    mask = np.zeros(shape, bool)
    mask.reshape(-1)[ids] = True
    forms = [ids, mask, np.nonzero(mask), (3, 7), [3, 7], ([0, 1], [3, 1])]
    for step, marks in enumerate(forms):
        source.reshape(-1)[ids] += 3
        source[0, 5] += 2  # node 5, marked whole with changed=
        res = ctx.solve(source=source, changed_terminals=marks, changed=[5])
        assert ctx.info["warm_solves"] == step + 1
        assert ctx.info["changed_nodes"] == 3, (step, ctx.info)
        assert res.flow == gcut.grid_maxflow(source, sink, w, solver="bk").flow, step


def test_mark_argument_errors():
    shape = (3, 4)
    ctx = gcut.GridContext(shape, solver="bk")
    z = np.zeros(shape, np.int32)
    ctx.solve(z + 1, z + 2, np.ones((4,) + shape, np.int32))
    cases = [
        (dict(changed_terminals=[12]), ValueError,
         r"changed_terminals\[0\] = 12 is not a node of the grid \(ids are in \[0, 12\)"),
        (dict(changed_terminals=[0, -1]), ValueError, r"changed_terminals\[1\] = -1"),
        (dict(changed=np.array([3, 40], np.uint64)), ValueError, r"changed\[1\] = 40"),
        (dict(changed_terminals=np.zeros((4, 3), bool)), ValueError,
         r"changed_terminals: a boolean mask must have the grid's shape \(3, 4\), got \(4, 3\)"),
        (dict(changed_terminals=[0.5]), TypeError,
         r"changed_terminals must be integer node ids.*float64"),
        (dict(changed_terminals=True), TypeError, r"changed_terminals must be node ids"),
        (dict(changed_terminals=(np.array([0]),)), ValueError,
         r"needs 2 arrays, one per axis"),
        (dict(changed_terminals=(np.array([0, 1]), np.array([0]))), ValueError,
         r"differ in length \(2, 1\)"),
        (dict(changed_terminals=(np.array([0]), np.array([4]))), ValueError,
         r"changed_terminals\[1\]\[0\] = 4 is outside axis 1 .*\[0, 4\)"),
        (dict(changed_terminals=(np.array([0]), np.array([1.0]))), TypeError,
         r"changed_terminals\[1\] must hold integer coordinates"),
        (dict(changed_terminals=[[0, 1], [2]]), TypeError, r"changed_terminals cannot be read"),
    ]
    for kw, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            ctx.solve(source=z + 9, **kw)
    # A refused call changed nothing (the source above was not copied in) and the marks of
    # a refused call are not left behind: the next solve still sees everything.
    assert ctx.solve().flow == gcut.grid_maxflow(z + 1, z + 2, np.ones((4,) + shape, np.int32)).flow
    assert ctx.solve(source=z + 3).flow == gcut.grid_maxflow(
        z + 3, z + 2, np.ones((4,) + shape, np.int32)).flow
    # Empty marks are a promise that nothing changed.
    empty = ctx.solve(changed_terminals=np.zeros(shape, bool)).flow
    assert ctx.solve(changed_terminals=[]).flow == empty
