#!/usr/bin/env python3
"""python_marks.py - GridContext warm re-solves after terminal-only changes, with and without
marks (docs/PYTHON.md, "Marks"): the same sequence of changes solved by two contexts in turn,
one told nothing (every capacity compared with the last solve's), one given
changed_terminals= as flat ids or as a boolean mask; medians of the per-solve times, flows
checked equal to each other and, at the end, to a fresh grid_maxflow with bk.

usage: python3 bench/python_marks.py [--size 1024] [--share 0.01] [--steps 15] [--solver grid-bk]
"""
import argparse
import statistics
import time

import numpy as np

import gcut


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--share", type=float, default=0.01, help="share of nodes changed per step")
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--solver", default="grid-bk")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    shape = (a.size, a.size)
    n = a.size * a.size
    w = rng.integers(0, 30, size=(4,) + shape).astype(np.int32)
    src = rng.integers(0, 100, size=shape).astype(np.int32)
    snk = rng.integers(0, 100, size=shape).astype(np.int32)
    kinds = ["none", "ids", "mask"]
    ctxs = {k: gcut.GridContext(shape, 4, solver=a.solver) for k in kinds}
    for c in ctxs.values():
        c.solve(src, snk, w)
    times = {k: [] for k in kinds}
    k_changed = max(1, int(n * a.share))
    for step in range(a.steps):
        ids = rng.choice(n, size=k_changed, replace=False)
        new_s, new_t = src.copy(), snk.copy()
        new_s.reshape(-1)[ids] = rng.integers(0, 100, size=k_changed)
        new_t.reshape(-1)[ids] = rng.integers(0, 100, size=k_changed)
        mask = np.zeros(shape, bool)
        mask.reshape(-1)[ids] = True
        flows = set()
        order = kinds[step % 3:] + kinds[:step % 3]  # rotate who goes first
        for k in order:
            kw = {} if k == "none" else {"changed_terminals": ids if k == "ids" else mask}
            t0 = time.perf_counter()
            r = ctxs[k].solve(new_s, new_t, **kw)
            times[k].append((time.perf_counter() - t0) * 1e3)
            flows.add(r.flow)
        assert len(flows) == 1, f"step {step}: flows differ {flows}"
        src, snk = new_s, new_t
    ref = gcut.grid_maxflow(src, snk, w, solver="bk").flow
    assert flows == {ref}, (flows, ref)
    base = statistics.median(times["none"])
    print(f"# {a.size}x{a.size} 4-connected, {a.solver}, {k_changed} nodes' terminals changed per "
          f"step, {a.steps} steps, medians; flows equal (bk {ref})")
    for k in kinds:
        m = statistics.median(times[k])
        print(f"{k:5s} solve() {m:8.2f} ms   unmarked / this {base / m:5.2f}x")


if __name__ == "__main__":
    main()
