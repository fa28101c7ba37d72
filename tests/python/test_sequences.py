# test_sequences.py - random sequences of Graph calls mixing the grid and general layouts
# (grid widening, grid-to-graph conversion, nodes added after solves, warm re-solves) against a
# plain-array oracle: brute force over all cuts, and the cut certificate of every result.
import numpy as np

import gcut
from test_grid import STRUCTURES_2D, explicit_edges


def test_random_call_sequences(rng, make_problem):
    structures = [None] + list(STRUCTURES_2D.values())[:5]
    for trial in range(60):
        g = gcut.Graph()
        p = make_problem(0)
        grid_ids = None
        if rng.random() < 0.7:
            shape = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
            grid_ids = g.add_grid_nodes(shape)
            p.n = grid_ids.size
            p.ts = np.zeros(p.n, dtype=np.int64)
            p.tt = np.zeros(p.n, dtype=np.int64)
        log = []
        for step in range(int(rng.integers(3, 12))):
            op = int(rng.integers(0, 7))
            if op == 0 and grid_ids is not None:
                st = structures[int(rng.integers(0, len(structures)))]
                sym = bool(rng.random() < 0.5)
                w = rng.integers(0, 9, size=grid_ids.shape)
                g.add_grid_edges(grid_ids, weights=w, structure=st, symmetric=sym)
                full = gcut.vonNeumann_structure(2, directed=sym) if st is None else st
                u, v, c = explicit_edges(grid_ids.shape, w, full, sym)
                for a, b, cc in zip(u, v, c):
                    p.add_edge(int(grid_ids.ravel()[a]), int(grid_ids.ravel()[b]), int(cc), 0)
            elif op == 1 and grid_ids is not None:
                s = rng.integers(0, 9, size=grid_ids.shape)
                t = rng.integers(0, 9, size=grid_ids.shape)
                g.add_grid_tedges(grid_ids, s, t)
                p.ts[grid_ids.ravel()] += s.ravel()
                p.tt[grid_ids.ravel()] += t.ravel()
            elif op == 2 and p.n >= 1:
                u, v = (int(x) for x in rng.integers(0, p.n, size=2))
                c, r = (int(x) for x in rng.integers(0, 9, size=2))
                g.add_edge(u, v, c, r)
                p.add_edge(u, v, c, r)
            elif op == 3 and p.n >= 1:
                i = rng.integers(0, p.n, size=3)
                s, t = rng.integers(0, 9, size=3), rng.integers(0, 9, size=3)
                g.add_tedges(i, s, t)
                np.add.at(p.ts, i, s)
                np.add.at(p.tt, i, t)
            elif op == 4 and p.n >= 1:
                i = int(rng.integers(0, p.n))
                s, t = (int(x) for x in rng.integers(0, 9, size=2))
                g.set_tedge(i, s, t)
                p.ts[i], p.tt[i] = s, t
            elif op == 5 and p.n < 10:
                k = int(rng.integers(1, 3))
                g.add_nodes(k)
                p.n += k
                p.ts = np.append(p.ts, np.zeros(k, dtype=np.int64))
                p.tt = np.append(p.tt, np.zeros(k, dtype=np.int64))
            else:
                flow = g.maxflow()
                log.append((step, g.layout, flow))
                assert flow == p.brute_force(), f"trial {trial}: {log}"
                assert p.cut_value(g.get_segments()) == flow
                assert g.verify() == flow
        flow = g.maxflow()
        assert flow == p.brute_force(), f"trial {trial}: {log}"
        assert p.cut_value(g.get_segments()) == flow
