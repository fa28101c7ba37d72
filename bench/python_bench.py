#!/usr/bin/env python3
"""python_bench.py - building plus solving a 4-connected grid from numpy arrays: gcut's
Python package against PyMaxflow (the baseline), in the same process, rounds alternating
between the variants so machine load hits all of them, flows checked equal, medians reported.

    python bench/python_bench.py [--size 2048] [--rounds 5] [--seed 1] [--threads 0]

The problem is a segmentation-like energy: a picture of random ellipses plus noise, terminal
capacities from the distance of each pixel to the two class means, contrast-sensitive
boundary weights (Boykov-Jolly), all int32. Variants:
  pymaxflow       maxflow.Graph[int]: add_grid_nodes, add_grid_edges x2, add_grid_tedges, maxflow
  gcut.Graph      the same calls on gcut.Graph (a native grid), solver auto / named
  grid_maxflow    gcut.grid_maxflow(source, sink, weights[4, H, W]) in one call
Times are wall-clock seconds of the whole build + solve, from the numpy arrays to the labels
(array preparation shared by all is outside the timing)."""
import argparse
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


def make_problem(n, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) / n
    fg = np.zeros((n, n), dtype=bool)
    for _ in range(12):
        cy, cx, ry, rx = rng.random(4) * [1, 1, 0.15, 0.15] + [0, 0, 0.03, 0.03]
        fg |= ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1
    img = np.where(fg, 0.65, 0.35) + rng.normal(0, 0.18, size=(n, n)).astype(np.float32)
    # Regional term: squared distance to the other class mean (larger = more unlike).
    source = np.rint(100 * (img - 0.35) ** 2 / 0.09).clip(0, 400).astype(np.int32)
    sink = np.rint(100 * (img - 0.65) ** 2 / 0.09).clip(0, 400).astype(np.int32)
    sigma2 = 2 * 0.18**2
    right = np.zeros((n, n), dtype=np.int32)
    down = np.zeros((n, n), dtype=np.int32)
    right[:, :-1] = np.rint(50 * np.exp(-((img[:, 1:] - img[:, :-1]) ** 2) / sigma2))
    down[:-1, :] = np.rint(50 * np.exp(-((img[1:, :] - img[:-1, :]) ** 2) / sigma2))
    return source, sink, right, down


RIGHT = np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0]], dtype=np.int32)
DOWN = np.array([[0, 0, 0], [0, 0, 0], [0, 1, 0]], dtype=np.int32)


def run_pymaxflow(p, solver, threads):
    source, sink, right, down = p
    g = pymaxflow.Graph[int]()
    ids = g.add_grid_nodes(source.shape)
    g.add_grid_edges(ids, weights=right, structure=RIGHT, symmetric=True)
    g.add_grid_edges(ids, weights=down, structure=DOWN, symmetric=True)
    g.add_grid_tedges(ids, source, sink)
    t0 = time.perf_counter()
    flow = g.maxflow()
    solve_ms = (time.perf_counter() - t0) * 1e3
    seg = g.get_grid_segments(ids)
    return flow, seg, "bk (Kolmogorov 3.0x)", {"build_ms": 0.0, "solve_ms": solve_ms}


def run_gcut_graph(p, solver, threads):
    source, sink, right, down = p
    g = gcut.Graph()
    ids = g.add_grid_nodes(source.shape)
    g.add_grid_edges(ids, weights=right, structure=RIGHT, symmetric=True)
    g.add_grid_edges(ids, weights=down, structure=DOWN, symmetric=True)
    g.add_grid_tedges(ids, source, sink)
    flow = g.maxflow(solver=solver, threads=threads)
    seg = g.get_grid_segments(ids)
    return flow, seg, g.stats["solver"], g.stats


def direction_weights(right, down):
    n = right.shape[0]
    w = np.zeros((4, n, n), dtype=np.int32)
    w[0] = right  # (0,+1)
    w[1][:, 1:] = right[:, :-1]  # (0,-1): the same edge seen from its right end
    w[2] = down  # (+1,0)
    w[3][1:, :] = down[:-1, :]  # (-1,0)
    return w


def run_grid_maxflow(p, solver, threads):
    source, sink, right, down = p
    res = gcut.grid_maxflow(source, sink, direction_weights(right, down), connectivity=4,
                            solver=solver, threads=threads)
    return res.flow, res.labels, res.solver, res.stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--solvers", default="auto,bk,cpu-pr",
                    help="gcut solvers to time (comma-separated; cuda-grid added if available)")
    args = ap.parse_args()
    p = make_problem(args.size, args.seed)
    names = args.solvers.split(",")
    avail = {s["name"] for s in gcut.solvers() if s["available"]}
    if "cuda-grid" in avail and "cuda-grid" not in names:
        names.append("cuda-grid")
    variants = []
    if pymaxflow is not None:
        variants.append(("pymaxflow", run_pymaxflow, None))
    for s in names:
        if s != "auto" and s not in avail:
            continue
        variants.append((f"gcut.Graph[{s}]", run_gcut_graph, s))
        variants.append((f"grid_maxflow[{s}]", run_grid_maxflow, s))
    times = {v[0]: [] for v in variants}
    inner = {v[0]: [] for v in variants}
    ran = {}
    flows = {}
    for r in range(args.rounds):
        order = variants if r % 2 == 0 else variants[::-1]
        for name, fn, solver in order:
            t0 = time.perf_counter()
            flow, seg, used, stats = fn(p, solver, args.threads)
            times[name].append(time.perf_counter() - t0)
            inner[name].append((stats["build_ms"], stats["solve_ms"]))
            flows.setdefault(name, set()).add(flow)
            ran[name] = used
    all_flows = set().union(*flows.values())
    print(f"# python_bench: {args.size}x{args.size} 4-connected, seed {args.seed}, "
          f"{args.rounds} rounds alternating, medians; {platform.node()}, "
          f"{os.cpu_count()} CPUs, numpy {np.__version__}, gcut {gcut.__version__}, "
          f"PyMaxflow {getattr(pymaxflow, '__version__', 'not installed')}")
    print(f"# flows: {sorted(all_flows)} ({'all equal' if len(all_flows) == 1 else 'DIFFER'})")
    base = statistics.median(times["pymaxflow"]) if "pymaxflow" in times else None
    print(f"{'variant':28s} {'solver ran':22s} {'median s':>9s} {'min s':>7s} {'max s':>7s} "
          f"{'vs PyMaxflow':>12s} {'setup ms':>9s} {'maxflow ms':>10s} {'build s':>8s} "
          f"{'build vs PyMaxflow':>18s}")
    build = {n: statistics.median(t - s / 1e3 for t, (_, s) in zip(times[n], inner[n]))
             for n in times}
    base_build = build.get("pymaxflow")
    for name, _, _ in variants:
        med = statistics.median(times[name])
        ratio = f"{base / med:11.2f}x" if base else "          -"
        setup = statistics.median(b for b, _ in inner[name])
        solve = statistics.median(s for _, s in inner[name])
        print(f"{name:28s} {ran[name]:22s} {med:9.3f} {min(times[name]):7.3f} "
              f"{max(times[name]):7.3f} {ratio} {setup:9.1f} {solve:10.1f} {build[name]:8.3f} "
              + (f"{base_build / build[name]:17.2f}x" if base_build else ""))
    print("# setup ms / maxflow ms: the solver's own report (gcut stats build_ms: grid-to-graph "
          "conversion and solver layout; solve_ms), medians; for PyMaxflow maxflow() alone "
          "(its graph is built by the add_* calls, which the total includes); build s: total "
          "minus maxflow ms, per round, median: the cost of getting the arrays into a solver")
    if len(all_flows) != 1:
        raise SystemExit("flows differ")


if __name__ == "__main__":
    main()
