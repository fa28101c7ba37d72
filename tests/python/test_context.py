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
