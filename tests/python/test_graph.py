# test_graph.py - gcut.Graph against independent oracles: brute force on tiny graphs, the cut
# certificate (the cut of the returned labels, recomputed here, equals the flow) on every
# result, the C library's own CLI on DIMACS files, and warm re-solves against fresh solves.
import os
import subprocess

import numpy as np
import pytest

import gcut


def random_problem(rng, make_problem, n, m, cmax=20):
    p = make_problem(n)
    for _ in range(m):
        u, v = rng.integers(0, n, size=2)
        p.add_edge(int(u), int(v), int(rng.integers(0, cmax)), int(rng.integers(0, cmax)))
    p.ts[:] = rng.integers(0, cmax, size=n) * (rng.random(n) < 0.6)
    p.tt[:] = rng.integers(0, cmax, size=n) * (rng.random(n) < 0.6)
    return p


def build(p, **kw):
    g = gcut.Graph(p.n, len(p.eu), **kw)
    ids = g.add_nodes(p.n)
    if p.eu:
        g.add_edges(ids[p.eu], ids[p.ev], p.ec, p.er)
    g.add_tedges(ids, p.ts, p.tt)
    return g


def check_cut(g, p, flow):
    seg = g.get_segments()
    assert seg.dtype == bool and seg.shape == (p.n,)
    assert p.cut_value(seg) == flow
    assert g.verify() == flow


def test_brute_force_tiny(rng, make_problem):
    for trial in range(150):
        n = int(rng.integers(1, 9))
        p = random_problem(rng, make_problem, n, int(rng.integers(0, 3 * n)))
        g = build(p)
        flow = g.maxflow()
        assert isinstance(flow, int)
        assert flow == p.brute_force(), f"trial {trial}"
        check_cut(g, p, flow)


def test_scalar_calls_and_pymaxflow_docstring_example():
    g = gcut.Graph[int](2, 2)
    nodes = g.add_nodes(2)
    assert nodes.dtype == np.int64 and list(nodes) == [0, 1]
    assert g.add_edge(nodes[0], nodes[1], 1, 2) == 0
    g.add_tedge(nodes[0], 2, 5)
    g.add_tedge(nodes[1], 9, 4)
    assert g.maxflow() == 8
    assert list(g.get_grid_segments(nodes)) == [True, False]
    assert g.get_segment(0) == 1 and g.get_segment(1) == 0
    assert g.get_node_count() == 2 and g.get_edge_count() == 1
    assert repr(g) == "gcut.Graph(nodes=2, edges=1, layout='graph')"


def test_flow_past_int32_is_exact():
    # Terminal sums past 2^31 and a flow past 2^32: exact Python ints.
    g = gcut.Graph()
    ids = g.add_nodes(4)
    big = 2**31 - 1
    g.add_tedges(np.repeat(ids, 3), np.full(12, big), np.zeros(12, dtype=np.int64))
    g.add_tedges(ids, np.zeros(4, dtype=np.int64), np.full(4, 2**40))
    assert g.maxflow() == 4 * 3 * big


def test_interleaved_nodes_and_edges(rng, make_problem):
    # Nodes added after edges and after a solve: the graph grows, results stay exact.
    p = make_problem(0)
    g = gcut.Graph()
    for step in range(40):
        g.add_node()
        p.n += 1
        p.ts = np.append(p.ts, 0)
        p.tt = np.append(p.tt, 0)
        u, v = rng.integers(0, p.n, size=2)
        c, r = rng.integers(0, 9, size=2)
        g.add_edge(int(u), int(v), int(c), int(r))
        p.add_edge(int(u), int(v), int(c), int(r))
        a, b = rng.integers(0, 9, size=2)
        g.add_tedge(p.n - 1, int(a), int(b))
        p.ts[-1] += a
        p.tt[-1] += b
        if step % 7 == 6:
            flow = g.maxflow()
            check_cut(g, p, flow)
            if p.n <= 12:
                assert flow == p.brute_force()
    assert g.num_nodes == 40


def test_warm_resolve_equals_fresh(rng, make_problem):
    p = random_problem(rng, make_problem, 300, 1500, cmax=50)
    g = build(p)
    g.maxflow()
    for round_ in range(6):
        edges = rng.choice(len(p.eu), size=40, replace=False)
        caps = rng.integers(0, 50, size=40)
        revs = rng.integers(0, 50, size=40)
        g.set_edges(edges, caps, revs)
        for e, c, r in zip(edges, caps, revs):
            p.ec[e], p.er[e] = int(c), int(r)
        nodes = rng.choice(p.n, size=30, replace=False)
        s, t = rng.integers(0, 60, size=30), rng.integers(0, 60, size=30)
        g.set_tedges(nodes, s, t)
        p.ts[nodes], p.tt[nodes] = s, t
        warm = g.maxflow()
        fresh = build(p).maxflow()
        assert warm == fresh, f"round {round_}"
        check_cut(g, p, warm)


def test_solver_argument_and_stats():
    g = gcut.Graph()
    ids = g.add_nodes(3)
    g.add_edges(ids[:-1], ids[1:], [3, 4], [0, 0])
    g.add_tedge(0, 10, 0)
    g.add_tedge(2, 0, 10)
    assert g.maxflow(solver="bk", threads=1) == 3
    assert g.stats["solver"] == "bk"
    names = {s["name"] for s in gcut.solvers()}
    assert "bk" in names
    with pytest.raises(gcut.GcutError, match="grids only"):
        g.maxflow(solver="cpu-pr")


def test_scale_for_float_capacities():
    g = gcut.Graph(scale=10)
    assert g.scale == 10.0
    ids = g.add_nodes(2)
    g.add_edge(ids[0], ids[1], 0.25, 0.0)  # 2.5 -> round half to even: 2
    g.add_tedges(ids, [1.04, 0.0], [0.0, 3.0])
    assert g.maxflow() == 2  # min(10, 2, 30)


def test_int64_accepted_when_it_fits():
    g = gcut.Graph()
    ids = g.add_nodes(2)
    g.add_edges(ids[:1], ids[1:], np.array([7], dtype=np.int64), np.array([0], dtype=np.uint16))
    g.add_tedges(ids, np.array([9, 0], dtype=np.int64), np.array([0, 9], dtype=np.uint8))
    assert g.maxflow() == 7


def write_dimacs(p, path):
    with open(path, "w") as f:
        s, t = p.n + 1, p.n + 2
        arcs = []
        for u, v, c, r in zip(p.eu, p.ev, p.ec, p.er):
            if c:
                arcs.append((u + 1, v + 1, c))
            if r:
                arcs.append((v + 1, u + 1, r))
        for i in range(p.n):
            if p.ts[i]:
                arcs.append((s, i + 1, int(p.ts[i])))
            if p.tt[i]:
                arcs.append((i + 1, t, int(p.tt[i])))
        f.write(f"p max {p.n + 2} {len(arcs)}\nn {s} s\nn {t} t\n")
        for a in arcs:
            f.write("a %d %d %d\n" % a)


def cli_path():
    path = os.environ.get("GCUT_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("GCUT_CLI (the gcut binary of a C build) not set: C-library comparison skipped")
    return path


def test_equal_to_c_library_cli(rng, make_problem, tmp_path):
    cli = cli_path()
    for trial in range(8):
        p = random_problem(rng, make_problem, int(rng.integers(50, 400)), 2000, cmax=1000)
        f = tmp_path / f"g{trial}.max"
        write_dimacs(p, f)
        out = subprocess.run([cli, "maxflow", "--verify", str(f)], capture_output=True,
                             text=True, check=True).stdout
        c_flow = int(next(line.split()[1] for line in out.splitlines() if line.startswith("s ")))
        g = build(p)
        assert g.maxflow() == c_flow, f"trial {trial}"
        check_cut(g, p, c_flow)
