# test_qpbo.py - gcut.qpbo against brute force over all labelings: persistency (some global
# minimiser agrees with every labeled node), lower bound <= min E, exact minimum on submodular
# energies, energy of the returned labels recomputed here; qpbo = pqpbo; the error paths.
import itertools

import numpy as np
import pytest

import gcut


def energy(unary, edges, pairwise, x):
    x = np.asarray(x)
    e = int(unary[np.arange(len(x)), x].sum())
    for (i, j), w in zip(edges, pairwise):
        e += int(w[2 * x[i] + x[j]])
    return e


def random_energy(rng, n, m, submodular):
    unary = rng.integers(-20, 21, size=(n, 2))
    pairs = []
    while len(pairs) < m:
        i, j = rng.integers(0, n, size=2)
        if i != j:
            pairs.append((int(i), int(j)))
    pw = rng.integers(-20, 21, size=(m, 4))
    if submodular:  # E00 + E11 <= E01 + E10
        excess = pw[:, 0] + pw[:, 3] - pw[:, 1] - pw[:, 2]
        pw[:, 1] += np.maximum(excess, 0)
    return unary, np.array(pairs, dtype=np.int64).reshape(-1, 2), pw


@pytest.mark.parametrize("submodular", [True, False])
def test_qpbo_brute_force(rng, submodular):
    if "qpbo" not in {s["name"] for s in gcut.solvers()} and not hasattr(gcut._gcut, "qpbo"):
        pytest.skip("no QPBO in this build")
    for trial in range(80):
        n = int(rng.integers(1, 9))
        m = int(rng.integers(0, 2 * n + 1)) if n > 1 else 0
        unary, edges, pw = random_energy(rng, n, m, submodular)
        res = gcut.qpbo(unary, edges, pw)
        labels, e = res
        assert labels.dtype == np.int8 and labels.shape == (n,)
        assert e == energy(unary, edges, pw, np.maximum(labels, 0))
        best = None
        minimisers = []
        for x in itertools.product([0, 1], repeat=n):
            v = energy(unary, edges, pw, x)
            if best is None or v < best:
                best, minimisers = v, [x]
            elif v == best:
                minimisers.append(x)
        assert res.lower_bound <= best, f"trial {trial}"
        lab = [k for k in range(n) if labels[k] >= 0]
        assert any(all(x[k] == labels[k] for k in lab) for x in minimisers), f"trial {trial}"
        if submodular:
            assert res.labeled == n and e == best == res.lower_bound, f"trial {trial}"
        par = gcut.qpbo(unary, edges, pw, solver="pqpbo", threads=2,
                        blocks=np.arange(n) % 2)
        assert np.array_equal(par.labels, labels) and par.solver == "pqpbo"


def test_qpbo_scale_and_errors():
    unary = np.array([[0.0, 1.25], [0.5, 0.0]])
    edges = [[0, 1]]
    pw = np.array([[0.0, 0.75, 0.75, 0.0]])
    with pytest.raises(TypeError, match="scale"):
        gcut.qpbo(unary, edges, pw)
    res = gcut.qpbo(unary, edges, pw, scale=4)
    assert res.scale == 4.0 and res.stats["float_scale"] == 4.0
    assert list(res.labels) == [0, 0] and res.energy == 2  # 0.5 * 4
    u = np.zeros((2, 2), dtype=np.int32)
    with pytest.raises(ValueError, match="unary must have shape"):
        gcut.qpbo(np.zeros((2, 3), dtype=np.int32), edges, [[0, 0, 0, 0]])
    with pytest.raises(ValueError, match="pairwise"):
        gcut.qpbo(u, edges, np.zeros((1, 3), dtype=np.int32))
    with pytest.raises(ValueError, match="rows"):
        gcut.qpbo(u, edges, np.zeros((2, 4), dtype=np.int32))
    with pytest.raises(ValueError, match=r"edges\[0\]"):
        gcut.qpbo(u, [[0, 2]], [[0, 0, 0, 0]])
    with pytest.raises(ValueError, match="itself"):
        gcut.qpbo(u, [[1, 1]], [[0, 0, 0, 0]])
    with pytest.raises(ValueError, match="int32"):
        gcut.qpbo(np.array([[2**31, 0], [0, 0]]), edges, [[0, 0, 0, 0]])
    with pytest.raises(ValueError, match="qpbo"):
        gcut.qpbo(u, edges, [[0, 0, 0, 0]], solver="bk")
    with pytest.raises(ValueError, match="coupling|range|overflow"):
        gcut.qpbo(u, edges, [[0, 2**31 - 1, 2**31 - 1, 0]])
    with pytest.raises(ValueError, match="blocks"):
        gcut.qpbo(u, edges, [[0, 0, 0, 0]], blocks=[0])
    empty = gcut.qpbo(np.zeros((0, 2), dtype=np.int32), [], [])
    assert empty.labels.shape == (0,) and empty.energy == 0
