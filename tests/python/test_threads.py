# test_threads.py - several graphs solved at once from a thread pool (the GIL is released
# during solves and array copies): every concurrent result equals the serial one and passes
# its cut certificate. The speed-up is printed, never asserted (timing is not a test).
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import gcut


def make_grid_problem(seed, shape=(300, 300)):
    rng = np.random.default_rng(seed)
    # Smooth random terminals make bk do real work (long augmenting paths).
    field = rng.normal(size=shape).cumsum(axis=0).cumsum(axis=1)
    field -= field.mean()
    source = np.clip(field, 0, None).astype(np.int64) % 200
    sink = np.clip(-field, 0, None).astype(np.int64) % 200
    weights = rng.integers(1, 60, size=shape)
    return source, sink, weights


def solve_graph(problem):
    source, sink, weights = problem
    g = gcut.Graph()
    ids = g.add_grid_nodes(source.shape)
    g.add_grid_edges(ids, weights, symmetric=True)
    g.add_grid_tedges(ids, source, sink)
    flow = g.maxflow(solver="bk")
    assert g.verify() == flow
    return flow, g.get_grid_segments(ids)


def solve_general(problem):
    # The general-graph path (add_edges from arrays), also concurrently.
    source, sink, weights = problem
    n = source.size
    ids = np.arange(n).reshape(source.shape)
    g = gcut.Graph(n, 2 * n)
    g.add_nodes(n)
    g.add_edges(ids[:, :-1].ravel(), ids[:, 1:].ravel(), weights[:, :-1].ravel(),
                weights[:, :-1].ravel())
    g.add_edges(ids[:-1].ravel(), ids[1:].ravel(), weights[:-1].ravel(), weights[:-1].ravel())
    g.add_tedges(ids.ravel(), source.ravel(), sink.ravel())
    flow = g.maxflow()
    assert g.verify() == flow
    return flow, g.get_segments().reshape(source.shape)


def test_concurrent_solves_equal_serial(capsys):
    problems = [make_grid_problem(seed) for seed in range(8)]
    t0 = time.perf_counter()
    serial = [solve_graph(p) for p in problems]
    serial_general = [solve_general(p) for p in problems]
    t_serial = time.perf_counter() - t0
    workers = min(8, os.cpu_count() or 2)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(solve_graph, p) for p in problems]
        futures += [pool.submit(solve_general, p) for p in problems]
        results = [f.result() for f in futures]
    t_threads = time.perf_counter() - t0
    for (flow, seg), (ref_flow, _) in zip(results, serial + serial_general):
        assert flow == ref_flow
    for k in range(len(problems)):
        assert serial[k][0] == serial_general[k][0]
    with capsys.disabled():
        print(f"\n[threads] 16 solves: serial {t_serial:.3f} s, {workers} threads "
              f"{t_threads:.3f} s, speed-up {t_serial / t_threads:.2f}x "
              f"({os.cpu_count()} cores; reported, not asserted)")


def test_same_graph_from_two_threads_is_refused_not_a_crash():
    problem = make_grid_problem(99, shape=(400, 400))
    g = gcut.Graph()
    ids = g.add_grid_nodes(problem[0].shape)
    g.add_grid_edges(ids, problem[2], symmetric=True)
    g.add_grid_tedges(ids, problem[0], problem[1])
    errors, flows = [], []

    def run():
        try:
            flows.append(g.maxflow(solver="bk"))
        except RuntimeError as exc:
            assert "another thread" in str(exc)
            errors.append(exc)

    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(8):
            pool.submit(run)
    assert len(flows) + len(errors) == 8 and flows
    assert len(set(flows)) == 1
    assert g.verify() == flows[0]


def test_threads_reach_the_parallel_solver(rng):
    """threads= goes through to the library: "auto" with threads > 1 on a grid this large runs
    parallel-bk (the GPU where one is usable), with bk's flow and a valid cut."""
    shape = (260, 260)
    source = rng.integers(0, 50, size=shape).astype(np.int32)
    sink = rng.integers(0, 50, size=shape).astype(np.int32)
    w = rng.integers(0, 20, size=(4,) + shape).astype(np.int32)
    ref = gcut.grid_maxflow(source, sink, w, solver="bk")
    res = gcut.grid_maxflow(source, sink, w, threads=2)
    gpu = any(s["name"] == "cuda-grid" and s["available"] for s in gcut.solvers())
    assert res.solver == ("cuda-grid" if gpu else "parallel-bk")
    assert res.flow == ref.flow
    g = gcut.Graph()
    ids = g.add_grid_nodes(shape)
    g.add_grid_edges(ids, weights=w[0], structure=np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0]]))
    g.add_grid_tedges(ids, source, sink)
    assert g.maxflow(solver="parallel-bk", threads=2) == g.maxflow(solver="bk")
    assert g.verify() == g.maxflow(solver="parallel-bk", threads=2)
