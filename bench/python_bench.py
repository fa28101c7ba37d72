#!/usr/bin/env python3
"""python_bench.py - building plus solving a grid from numpy arrays: gcut's Python package
against PyMaxflow (the baseline), in the same process, rounds alternating between the variants
so machine load hits all of them, flows checked equal, medians reported.

    python bench/python_bench.py [--shape 2048x2048] [--rounds 5] [--seed 1] [--threads 0]
                                 [--solvers auto,bk,parallel-bk,cpu-pr] [--no-general]
    python bench/python_bench.py --pool K [--shape 512x512] [--rounds 5] [--solvers bk]

--pool K: K different grids of the shape solved one at a time, then all at once from a
ThreadPoolExecutor of K workers (the GIL is released in every solve: the threads run
concurrently), rounds alternating; flows checked equal; the speed-up is reported.

The problem is a segmentation-like energy on a 4-connected (2D) or 6-connected (3D, e.g.
--shape 160x160x80) grid: random ellipses (ellipsoids) plus noise, terminal capacities from
each pixel's distance to the two class means, contrast-sensitive boundary weights
(Boykov-Jolly), all int32. Variants:
  pymaxflow grid      maxflow.Graph[int]: add_grid_nodes, add_grid_edges (one per axis, a
                      one-entry structure, symmetric), add_grid_tedges, maxflow
  pymaxflow edges     the same graph from explicit arrays: add_nodes, add_edges, add_grid_tedges
  gcut.Graph[s]       the grid calls on gcut.Graph (a native grid), solver s
  grid_maxflow[s]     gcut.grid_maxflow(source, sink, weights[2*ndim, ...]) in one call
  gcut add_edges[bk]  the explicit arrays through gcut.Graph.add_edges (a general graph)
Times are wall-clock seconds of the whole build + solve, from the numpy arrays to the labels
(array preparation shared by all is outside the timing)."""
import argparse
import concurrent.futures
import os
import platform
import statistics
import time

import numpy as np

import gcut

try:
    import maxflow as pymaxflow
except ImportError:
    pymaxflow = None


def make_problem(shape, seed):
    """Terminal arrays and one forward weight array per axis (weights[k][p]: the edge from p
    to its neighbour one step further along axis k; 0 where there is none)."""
    rng = np.random.default_rng(seed)
    nd = len(shape)
    coords = np.indices(shape, dtype=np.float32)
    for k in range(nd):
        coords[k] /= shape[k]
    fg = np.zeros(shape, dtype=bool)
    for _ in range(12):
        centre = rng.random(nd)
        radii = rng.random(nd) * 0.15 + 0.03
        fg |= sum(((coords[k] - centre[k]) / radii[k]) ** 2 for k in range(nd)) < 1
    img = np.where(fg, 0.65, 0.35) + rng.normal(0, 0.18, size=shape).astype(np.float32)
    # Regional term: squared distance to the other class mean (larger = more unlike).
    source = np.rint(100 * (img - 0.35) ** 2 / 0.09).clip(0, 400).astype(np.int32)
    sink = np.rint(100 * (img - 0.65) ** 2 / 0.09).clip(0, 400).astype(np.int32)
    sigma2 = 2 * 0.18**2
    weights = []
    for k in range(nd):
        w = np.zeros(shape, dtype=np.int32)
        lo = [slice(None)] * nd
        hi = [slice(None)] * nd
        lo[k], hi[k] = slice(0, -1), slice(1, None)
        lo, hi = tuple(lo), tuple(hi)
        w[lo] = np.rint(50 * np.exp(-((img[hi] - img[lo]) ** 2) / sigma2))
        weights.append(w)
    return source, sink, weights


def axis_structure(nd, k):
    st = np.zeros((3,) * nd, dtype=np.int32)
    idx = [1] * nd
    idx[k] = 2
    st[tuple(idx)] = 1
    return st


def explicit_edges(shape, weights):
    """The grid's edges as arrays (u, v, cap), int32 ids as PyMaxflow's add_edges wants."""
    ids = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    us, vs, cs = [], [], []
    nd = len(shape)
    for k in range(nd):
        lo = [slice(None)] * nd
        hi = [slice(None)] * nd
        lo[k], hi[k] = slice(0, -1), slice(1, None)
        us.append(ids[tuple(lo)].ravel())
        vs.append(ids[tuple(hi)].ravel())
        cs.append(weights[k][tuple(lo)].ravel())
    return np.concatenate(us), np.concatenate(vs), np.concatenate(cs)


def run_pymaxflow_grid(p, solver, threads):
    source, sink, weights = p
    g = pymaxflow.Graph[int]()
    ids = g.add_grid_nodes(source.shape)
    for k, w in enumerate(weights):
        g.add_grid_edges(ids, weights=w, structure=axis_structure(source.ndim, k), symmetric=True)
    g.add_grid_tedges(ids, source, sink)
    t0 = time.perf_counter()
    flow = g.maxflow()
    solve_ms = (time.perf_counter() - t0) * 1e3
    seg = g.get_grid_segments(ids)
    return flow, seg, "BK (Kolmogorov 3.0x)", {"build_ms": 0.0, "solve_ms": solve_ms}


def run_pymaxflow_edges(p, solver, threads, edges):
    source, sink, weights = p
    u, v, c = edges
    g = pymaxflow.Graph[int](source.size, len(u))
    ids = g.add_nodes(source.size)
    g.add_edges(u, v, c, c)
    g.add_grid_tedges(ids.reshape(source.shape), source, sink)
    t0 = time.perf_counter()
    flow = g.maxflow()
    solve_ms = (time.perf_counter() - t0) * 1e3
    seg = g.get_grid_segments(ids)
    return flow, seg, "BK (Kolmogorov 3.0x)", {"build_ms": 0.0, "solve_ms": solve_ms}


def run_gcut_graph(p, solver, threads):
    source, sink, weights = p
    g = gcut.Graph()
    ids = g.add_grid_nodes(source.shape)
    for k, w in enumerate(weights):
        g.add_grid_edges(ids, weights=w, structure=axis_structure(source.ndim, k), symmetric=True)
    g.add_grid_tedges(ids, source, sink)
    flow = g.maxflow(solver=solver, threads=threads)
    seg = g.get_grid_segments(ids)
    return flow, seg, g.stats["solver"], g.stats


def run_gcut_edges(p, solver, threads, edges):
    source, sink, weights = p
    u, v, c = edges
    g = gcut.Graph(source.size, len(u))
    ids = g.add_nodes(source.size)
    g.add_edges(u, v, c, c)
    g.add_tedges(ids, source.ravel(), sink.ravel())
    flow = g.maxflow(solver=solver, threads=threads)
    seg = g.get_segments()
    return flow, seg, g.stats["solver"], g.stats


def direction_weights(weights):
    """(2*ndim, *shape) in the C API's order: the last axis first, + then - each."""
    nd = len(weights)
    shape = weights[0].shape
    out = np.zeros((2 * nd,) + shape, dtype=np.int32)
    for pair, k in enumerate(reversed(range(nd))):
        lo = [slice(None)] * nd
        hi = [slice(None)] * nd
        lo[k], hi[k] = slice(0, -1), slice(1, None)
        out[2 * pair] = weights[k]  # +1 along axis k
        out[2 * pair + 1][tuple(hi)] = weights[k][tuple(lo)]  # -1: the same edge, other end
    return out


def run_grid_maxflow(p, solver, threads):
    source, sink, weights = p
    res = gcut.grid_maxflow(source, sink, direction_weights(weights),
                            connectivity=2 * source.ndim, solver=solver, threads=threads)
    return res.flow, res.labels, res.solver, res.stats


def warm_resolves(p, edges, rounds, fraction, seed):
    """Re-solve after changing the terminal capacities of a fraction of the nodes: warm
    (set_tedges on the solved graph, bk reuses its trees and flow) against a fresh graph built
    and solved from the same arrays, alternating; returns per-round (warm s, fresh s, flows)."""
    source, sink, weights = p
    u, v, c = edges
    rng = np.random.default_rng(seed)
    g = gcut.Graph(source.size, len(u))
    ids = g.add_nodes(source.size)
    g.add_edges(u, v, c, c)
    s_cur, t_cur = source.ravel().copy(), sink.ravel().copy()
    g.add_tedges(ids, s_cur, t_cur)
    g.maxflow(solver="bk")
    out = []
    for _ in range(rounds):
        k = max(1, int(fraction * source.size))
        nodes = rng.choice(source.size, size=k, replace=False)
        s_cur[nodes] = rng.integers(0, 400, size=k)
        t_cur[nodes] = rng.integers(0, 400, size=k)
        t0 = time.perf_counter()
        g.set_tedges(nodes, s_cur[nodes], t_cur[nodes])
        warm = g.maxflow(solver="bk")
        t_warm = time.perf_counter() - t0
        t0 = time.perf_counter()
        h = gcut.Graph(source.size, len(u))
        h.add_nodes(source.size)
        h.add_edges(u, v, c, c)
        h.add_tedges(ids, s_cur, t_cur)
        fresh = h.maxflow(solver="bk")
        t_fresh = time.perf_counter() - t0
        if warm != fresh:
            raise SystemExit(f"warm flow {warm} != fresh flow {fresh}")
        out.append((t_warm, t_fresh, warm))
    return out



def pool_bench(shape, k, rounds, seed, solver, threads):
    """K grids solved serially, then from a thread pool; returns per-round (serial s, pool s)
    and the flows."""
    probs = [make_problem(shape, seed + i) for i in range(k)]
    weights = [direction_weights(p[2]) for p in probs]
    conn = 2 * len(shape)

    def solve(i):
        return gcut.grid_maxflow(probs[i][0], probs[i][1], weights[i], connectivity=conn,
                                 solver=solver, threads=threads).flow

    out, flows = [], None
    with concurrent.futures.ThreadPoolExecutor(max_workers=k) as ex:
        list(ex.map(solve, range(k)))  # warm the workers and the allocator
        for r in range(rounds):
            t = {}
            for mode in (("serial", "pool") if r % 2 == 0 else ("pool", "serial")):
                t0 = time.perf_counter()
                got = [solve(i) for i in range(k)] if mode == "serial" else list(
                    ex.map(solve, range(k)))
                t[mode] = time.perf_counter() - t0
                if flows is None:
                    flows = got
                elif got != flows:
                    raise SystemExit(f"flows differ: {got} != {flows}")
            out.append((t["serial"], t["pool"]))
    return out, flows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="2048x2048", help="HxW or DxHxW")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--solvers", default="auto,bk,parallel-bk,cpu-pr",
                    help="gcut solvers to time (comma-separated; cuda-grid added if available)")
    ap.add_argument("--no-general", action="store_true",
                    help="leave out the explicit-edge (general graph) variants")
    ap.add_argument("--warm", type=float, default=0.0, metavar="FRACTION",
                    help="instead: warm re-solves after changing this fraction of the "
                         "terminal capacities, against fresh solves")
    ap.add_argument("--overhead", action="store_true",
                    help="instead: one JSON line of medians (ms) per variant (grid_maxflow, "
                         "gcut.Graph, PyMaxflow) of the total and of the total minus the "
                         "solver's own setup + solve (the Python layer and the grid fill), "
                         "solver = the first of --solvers; bench/python_ab.sh compares two "
                         "builds with it")
    ap.add_argument("--pool", type=int, default=0, metavar="K",
                    help="instead: K grids solved one at a time against all at once from a "
                         "thread pool of K workers")
    args = ap.parse_args()
    shape = tuple(int(s) for s in args.shape.lower().split("x"))
    if len(shape) not in (2, 3):
        raise SystemExit("--shape must be HxW or DxHxW")
    if args.overhead:
        import json

        p = make_problem(shape, args.seed)
        solver = args.solvers.split(",")[0]
        runs = {"grid_maxflow": lambda: run_grid_maxflow(p, solver, args.threads),
                "Graph": lambda: run_gcut_graph(p, solver, args.threads)}
        if pymaxflow is not None:
            runs["pymaxflow"] = lambda: run_pymaxflow_grid(p, None, 0)
        res = {k: [] for k in runs}
        for _ in range(args.rounds):
            for name, fn in runs.items():
                t0 = time.perf_counter()
                flow, _, _, st = fn()
                t = (time.perf_counter() - t0) * 1e3
                res[name].append((t, t - st["build_ms"] - st["solve_ms"], flow))
        flows = {x[2] for v in res.values() for x in v}
        if len(flows) != 1:
            raise SystemExit(f"flows differ: {sorted(flows)}")
        print(json.dumps({k: {"total_ms": round(statistics.median(x[0] for x in v)),
                              "layer_ms": round(statistics.median(x[1] for x in v)),
                              "flow": v[0][2]} for k, v in res.items()}))
        return
    if args.pool > 0:
        solver = args.solvers.split(",")[0]
        res, flows = pool_bench(shape, args.pool, args.rounds, args.seed, solver, args.threads)
        ts = statistics.median(r[0] for r in res)
        tp = statistics.median(r[1] for r in res)
        print(f"# python_bench --pool {args.pool}: {args.pool} grids {'x'.join(map(str, shape))}"
              f" ({2 * len(shape)}-connected), grid_maxflow solver {solver}, threads="
              f"{args.threads}, {args.rounds} rounds alternating; {platform.node()}, "
              f"{os.cpu_count()} CPUs, 1-min load {os.getloadavg()[0]:.1f}; flows equal "
              f"serial and pooled ({flows[0]} ...)")
        print(f"one at a time: median {ts:.3f} s (min {min(r[0] for r in res):.3f}); thread "
              f"pool: median {tp:.3f} s (min {min(r[1] for r in res):.3f}); speed-up "
              f"{ts / tp:.2f}x (medians)")
        return
    p = make_problem(shape, args.seed)
    edges = explicit_edges(shape, p[2])
    if args.warm > 0:
        res = warm_resolves(p, edges, args.rounds, args.warm, args.seed)
        tw = statistics.median(r[0] for r in res)
        tf = statistics.median(r[1] for r in res)
        print(f"# python_bench --warm {args.warm}: {'x'.join(map(str, shape))}, general graph, "
              f"bk, {args.rounds} rounds; {platform.node()}, {os.cpu_count()} CPUs, 1-min load "
              f"{os.getloadavg()[0]:.1f}; flows equal each round ({res[0][2]} ... {res[-1][2]})")
        print(f"set_tedges + warm maxflow: median {tw:.3f} s; fresh build + maxflow: median "
              f"{tf:.3f} s; warm is {tf / tw:.2f}x faster")
        return
    names = args.solvers.split(",")
    avail = {s["name"] for s in gcut.solvers() if s["available"]}
    if "cuda-grid" in avail and "cuda-grid" not in names:
        names.append("cuda-grid")
    variants = []
    if pymaxflow is not None:
        variants.append(("pymaxflow grid", run_pymaxflow_grid, None))
        if not args.no_general:
            variants.append(("pymaxflow edges",
                             lambda p, s, t: run_pymaxflow_edges(p, s, t, edges), None))
    for s in names:
        if s != "auto" and s not in avail:
            continue
        variants.append((f"gcut.Graph[{s}]", run_gcut_graph, s))
        variants.append((f"grid_maxflow[{s}]", run_grid_maxflow, s))
    if not args.no_general:
        variants.append(("gcut add_edges[bk]",
                         lambda p, s, t: run_gcut_edges(p, s, t, edges), "bk"))
    times = {v[0]: [] for v in variants}
    inner = {v[0]: [] for v in variants}
    ran = {}
    flows = {}
    load = [os.getloadavg()[0]]
    for r in range(args.rounds):
        order = variants if r % 2 == 0 else variants[::-1]
        for name, fn, solver in order:
            t0 = time.perf_counter()
            flow, seg, used, stats = fn(p, solver, args.threads)
            times[name].append(time.perf_counter() - t0)
            inner[name].append((stats["build_ms"], stats["solve_ms"]))
            flows.setdefault(name, set()).add(flow)
            ran[name] = used
            load.append(os.getloadavg()[0])
    all_flows = set().union(*flows.values())
    print(f"# python_bench: {'x'.join(map(str, shape))} {2 * len(shape)}-connected, seed "
          f"{args.seed}, {args.rounds} rounds alternating, medians; {platform.node()}, "
          f"{os.cpu_count()} CPUs, 1-min load {min(load):.1f}-{max(load):.1f}, numpy "
          f"{np.__version__}, gcut {gcut.__version__}, PyMaxflow "
          f"{getattr(pymaxflow, '__version__', 'not installed')}")
    print(f"# flows: {sorted(all_flows)} ({'all equal' if len(all_flows) == 1 else 'DIFFER'})")
    base_name = "pymaxflow grid"
    base = statistics.median(times[base_name]) if base_name in times else None
    build = {n: statistics.median(t - s / 1e3 for t, (_, s) in zip(times[n], inner[n]))
             for n in times}
    base_build = build.get(base_name)
    print(f"{'variant':22s} {'solver ran':22s} {'median s':>9s} {'min s':>7s} {'max s':>7s} "
          f"{'x PyMaxflow':>11s} {'setup ms':>9s} {'maxflow ms':>10s} {'build s':>8s} "
          f"{'build x':>8s}")
    for name, _, _ in variants:
        med = statistics.median(times[name])
        ratio = f"{base / med:10.2f}x" if base else "          -"
        setup = statistics.median(b for b, _ in inner[name])
        solve = statistics.median(s for _, s in inner[name])
        bx = f"{base_build / build[name]:7.2f}x" if base_build else "       -"
        print(f"{name:22s} {ran[name]:22s} {med:9.3f} {min(times[name]):7.3f} "
              f"{max(times[name]):7.3f} {ratio} {setup:9.1f} {solve:10.1f} {build[name]:8.3f} "
              f"{bx}")
    print("# x PyMaxflow: PyMaxflow grid's median total / the variant's. setup ms / maxflow "
          "ms: the solver's own report (gcut: build_ms = grid-to-graph conversion and solver "
          "layout, solve_ms), medians; PyMaxflow: maxflow() alone. build s: total minus "
          "maxflow ms per round, median (getting the arrays into a solver); build x: PyMaxflow "
          "grid's build s / the variant's.")
    if len(all_flows) != 1:
        raise SystemExit("flows differ")


if __name__ == "__main__":
    main()
