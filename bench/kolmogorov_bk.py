#!/usr/bin/env python3
"""kolmogorov_bk.py - the outside baseline: Kolmogorov's BK maxflow (Boykov & Kolmogorov, PAMI
2004; v3.0x through PyMaxflow or thinmaxflow) timed on gcut_bench --dump-dir instances, on
exactly the graph gcut's conversion builds (bench/README.md).

Usage (inside a venv with numpy and PyMaxflow; bench/run_cpu.sh makes one under bench/out/):
  kolmogorov_bk.py [--impl pymaxflow|thinmaxflow] [--repeats N] [--gcut-csv FILE]
                   [--markdown FILE] DUMP_DIR/NAME [DUMP_DIR/NAME ...]
Only maxflow() is timed (median of N runs, the graph rebuilt before each); Python graph
construction is not comparable with C and is not reported. Each instance's flow must equal
every gcut flow recorded in its meta.json (and in --gcut-csv, gcut_bench --csv of the same run,
whose gcut-bk solve time the table sets against Kolmogorov's). Exit 2 on any flow mismatch.
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np


def load_instance(path):
    with open(os.path.join(path, "meta.json")) as f:
        meta = json.load(f)
    shape = tuple(meta["shape"])
    source = np.load(os.path.join(path, "source.npy"))
    sink = np.load(os.path.join(path, "sink.npy"))
    dirs = [np.load(os.path.join(path, "dir%d.npy" % d)) for d in range(len(meta["offsets"]))]
    for name, array in [("source", source), ("sink", sink)] + [
        ("dir%d" % d, a) for d, a in enumerate(dirs)
    ]:
        if array.shape != shape or array.dtype != np.int32:
            raise SystemExit("%s: %s.npy has shape %s dtype %s, meta.json says %s int32"
                             % (path, name, array.shape, array.dtype, shape))
    return meta, source, sink, dirs


def edge_list(meta, dirs):
    """One edge per in-grid neighbour pair (i, i + offset(d)) for each even direction d, with
    capacity cap[d][i] and reverse capacity cap[d ^ 1][j], in gcut_grid_to_graph's order:
    node-major, directions inner."""
    shape = tuple(meta["shape"])
    n = int(np.prod(shape))
    index = np.arange(n, dtype=np.int64).reshape(shape)
    per_dir_i, per_dir_j, per_dir_cap, per_dir_rev = [], [], [], []
    for d in range(0, len(dirs), 2):
        offset = meta["offsets"][d]
        i_sel, j_sel = [], []
        for k, o in enumerate(offset):
            size = shape[k]
            i_sel.append(slice(max(0, -o), size - max(0, o)))
            j_sel.append(slice(max(0, o), size - max(0, -o)))
        i_sel, j_sel = tuple(i_sel), tuple(j_sel)
        valid = np.zeros(shape, dtype=bool)
        valid[i_sel] = True
        j_full = np.full(shape, -1, dtype=np.int64)
        j_full[i_sel] = index[j_sel]
        rev_full = np.zeros(shape, dtype=np.int64)
        rev_full[i_sel] = dirs[d ^ 1][j_sel]
        per_dir_i.append(valid)
        per_dir_j.append(j_full)
        per_dir_cap.append(dirs[d].astype(np.int64))
        per_dir_rev.append(rev_full)
    # Stack directions last, so that C-order flattening is node-major, direction-minor.
    valid = np.stack([v.reshape(-1) for v in per_dir_i], axis=1).reshape(-1)
    node = np.repeat(np.arange(n, dtype=np.int64), len(per_dir_i))[valid]
    other = np.stack([a.reshape(-1) for a in per_dir_j], axis=1).reshape(-1)[valid]
    cap = np.stack([a.reshape(-1) for a in per_dir_cap], axis=1).reshape(-1)[valid]
    rev = np.stack([a.reshape(-1) for a in per_dir_rev], axis=1).reshape(-1)[valid]
    return node, other, cap, rev


def build_pymaxflow(meta, source, sink, edges):
    import maxflow

    node, other, cap, rev = edges
    n = int(meta["nodes"])
    graph = maxflow.GraphInt(n, len(node))
    ids = graph.add_nodes(n)
    graph.add_edges(node, other, cap, rev)
    graph.add_grid_tedges(ids, source.reshape(-1).astype(np.int64),
                          sink.reshape(-1).astype(np.int64))
    return graph, graph.get_node_count(), graph.get_edge_count()


def build_thinmaxflow(meta, source, sink, edges):
    import thinmaxflow

    node, other, cap, rev = edges
    n = int(meta["nodes"])
    graph = thinmaxflow.GraphInt(n, len(node))
    graph.add_node(n)
    for u, v, c, r in zip(node.tolist(), other.tolist(), cap.tolist(), rev.tolist()):
        graph.add_edge(u, v, c, r)
    for u, (s, t) in enumerate(zip(source.reshape(-1).tolist(), sink.reshape(-1).tolist())):
        graph.add_tweights(u, s, t)
    return graph, graph.get_node_num(), graph.get_arc_num()


def impl_version(impl):
    if impl == "pymaxflow":
        import maxflow

        return "PyMaxflow %s" % maxflow.__version__
    from importlib.metadata import version

    return "thinmaxflow %s" % version("thinmaxflow")


def load_dimacs(path):
    """A general graph from gcut_bench --dump-dir (DIMACS max-flow, as gcut_dimacs_write
    writes it): arcs out of the source and into the sink become terminal capacities, every
    other arc one edge with reverse capacity 0, so pairs written as two arcs become two edges
    (the same flow; gcut's bk holds them as one edge with a reverse capacity)."""
    nodes = source_id = sink_id = None
    arcs = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields or fields[0] == "c":
                continue
            if fields[0] == "p":
                nodes = int(fields[2])
            elif fields[0] == "n":
                if fields[2] == "s":
                    source_id = int(fields[1])
                else:
                    sink_id = int(fields[1])
            elif fields[0] == "a":
                arcs.append((int(fields[1]), int(fields[2]), int(fields[3])))
            else:
                raise SystemExit("%s:%d: unexpected line %r" % (path, number, line))
    # Graph nodes are the DIMACS ids other than s and t, in order.
    ids = np.array([i for i in range(1, nodes + 1) if i not in (source_id, sink_id)])
    index = np.full(nodes + 1, -1, dtype=np.int64)
    index[ids] = np.arange(len(ids))
    n = len(ids)
    source = np.zeros(n, dtype=np.int64)
    sink = np.zeros(n, dtype=np.int64)
    offset = 0
    node, other, cap = [], [], []
    for u, v, c in arcs:
        if u == source_id and v == sink_id:
            offset += c
        elif u == source_id:
            source[index[v]] += c
        elif v == sink_id:
            sink[index[u]] += c
        elif u in (source_id, sink_id) or v in (source_id, sink_id) or u == v:
            continue  # into the source or out of the sink: never carries flow
        else:
            node.append(index[u])
            other.append(index[v])
            cap.append(c)
    name = os.path.splitext(os.path.basename(path))[0]
    meta = {"name": name, "nodes": n, "edges": len(node), "flows": {}, "offset": offset}
    edges = (np.array(node, dtype=np.int64), np.array(other, dtype=np.int64),
             np.array(cap, dtype=np.int64), np.zeros(len(node), dtype=np.int64))
    return meta, source, sink, edges


def run_gcut_cli(cli, solver, path):
    """One solve by the gcut command on the dumped problem: (solve_ms, build_ms, flow), read
    from its "c solve_ms", "c build_ms" and "s FLOW" lines."""
    problem = path if path.endswith(".max") else os.path.join(path, "problem.grid")
    result = subprocess.run([cli, "maxflow", "--solver", solver, problem], capture_output=True,
                            text=True)
    if result.returncode != 0:
        raise SystemExit("%s maxflow --solver %s %s failed (%d): %s"
                         % (cli, solver, problem, result.returncode, result.stderr.strip()))
    values = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] == "c" and fields[1] in ("solve_ms", "build_ms"):
            values[fields[1]] = float(fields[2])
        elif len(fields) == 2 and fields[0] == "s":
            values["flow"] = int(fields[1])
    if len(values) != 3:
        raise SystemExit("%s maxflow %s: no solve_ms/build_ms/s lines in its output"
                         % (cli, problem))
    return values["solve_ms"], values["build_ms"], values["flow"]


def solve(path, impl, repeats, gcut_cli=None, gcut_solver="bk"):
    """Kolmogorov's maxflow() `repeats` times; with gcut_cli, each one right after a gcut solve
    of the same problem, so that both see the same load. Returns meta, the median ms, the
    flow, all times, and gcut's (median solve ms, median build ms, flows) or None."""
    if path.endswith(".max"):
        meta, source, sink, edges = load_dimacs(path)
    else:
        meta, source, sink, dirs = load_instance(path)
        edges = edge_list(meta, dirs)
        del dirs
    expected_edges = int(meta["edges"])
    if len(edges[0]) != expected_edges:
        raise SystemExit("%s: built %d edges, gcut's conversion has %d"
                         % (path, len(edges[0]), expected_edges))
    build = build_pymaxflow if impl == "pymaxflow" else build_thinmaxflow
    times, flows = [], []
    gcut_solve, gcut_build, gcut_flows = [], [], set()
    for _ in range(repeats):
        if gcut_cli:
            solve_ms, build_ms, gcut_flow = run_gcut_cli(gcut_cli, gcut_solver, path)
            gcut_solve.append(solve_ms)
            gcut_build.append(build_ms)
            gcut_flows.add(gcut_flow)
        graph, nodes, count = build(meta, source, sink, edges)
        # Both wrappers count arcs (two per edge) in their edge-count call.
        if nodes != int(meta["nodes"]) or count != 2 * expected_edges:
            raise SystemExit("%s: %s graph has %d nodes, %d edges/arcs; expected %d nodes, %d "
                             "edges" % (path, impl, nodes, count, int(meta["nodes"]),
                                        expected_edges))
        t0 = time.perf_counter()
        flow = graph.maxflow()
        times.append((time.perf_counter() - t0) * 1e3)
        flows.append(int(flow) + meta.get("offset", 0))
        del graph
    if len(set(flows)) != 1:
        raise SystemExit("%s: %s gave different flows on repeats: %s" % (path, impl, flows))
    gcut = None
    if gcut_cli:
        gcut = (statistics.median(gcut_solve), statistics.median(gcut_build), gcut_flows)
    return meta, statistics.median(times), flows[0], times, gcut


def read_gcut_csv(path):
    rows = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["status"] == "ok":
                rows[(row["instance"], row["solver"])] = row
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("instances", nargs="+",
                        help="DUMP_DIR/NAME folders (grids) or DUMP_DIR/NAME.max files (general "
                             "graphs) from gcut_bench --dump-dir")
    parser.add_argument("--impl", choices=["pymaxflow", "thinmaxflow"], default="pymaxflow")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--gcut-csv", help="gcut_bench --csv output of the same run")
    parser.add_argument("--gcut-solver", default="bk", help="gcut solver to compare (bk)")
    parser.add_argument("--gcut-cli",
                        help="path of the gcut command: time gcut's solver with it on each "
                             "dump's problem.grid / .max, alternating with Kolmogorov's solves "
                             "(its times then replace --gcut-csv's)")
    parser.add_argument("--markdown", help="write the comparison table here")
    parser.add_argument("--bar-instances",
                        default="easy-1024x1024,hard-1024x1024,easy-2048x2048,hard-2048x2048",
                        help="instances the issue's bar (gcut >= Kolmogorov, goal 1.25x) is "
                             "judged on; others get '-' in the bar column")
    args = parser.parse_args()

    gcut = read_gcut_csv(args.gcut_csv) if args.gcut_csv else {}
    version = impl_version(args.impl)
    lines = [
        "| instance | nodes | Kolmogorov BK maxflow ms (%s) | gcut %s solve ms | "
        "gcut %s build ms | flow | flows equal | gcut-%s speed-up | bar: >= 1, goal 1.25 |" %
        (version, args.gcut_solver, args.gcut_solver, args.gcut_solver),
        "|---|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    mismatches = 0
    bar_speedups = []
    for path in args.instances:
        path = path.rstrip("/")
        meta, median_ms, flow, times, interleaved = solve(path, args.impl, args.repeats,
                                                           args.gcut_cli, args.gcut_solver)
        name = meta["name"]
        print("%s: %s maxflow median %.1f ms over %d runs (%s), flow %d"
              % (name, version, median_ms, len(times),
                 " ".join("%.1f" % t for t in times), flow), file=sys.stderr)
        row = gcut.get((name, args.gcut_solver))
        # Every gcut flow known for the instance: each solver's in meta.json, the CSV's, and
        # those of the interleaved gcut solves.
        gcut_flows = {solver: int(value) for solver, value in meta["flows"].items()}
        if row is not None:
            gcut_flows[args.gcut_solver] = int(row["flow"])
        if interleaved is not None:
            for k, value in enumerate(sorted(interleaved[2])):
                gcut_flows["%s (gcut maxflow%s)" % (args.gcut_solver, " #%d" % k if k else "")] \
                    = value
            row = {"solve_ms": interleaved[0], "build_ms": interleaved[1]}
        equal = "yes" if gcut_flows else "-"
        for solver, gcut_flow in sorted(gcut_flows.items()):
            if args.impl == "thinmaxflow" and gcut_flow > 2**31 - 1:
                # thinmaxflow's GraphInt sums the flow in int32 (capacities stay exact), so
                # past 2^31 its flow is right only modulo 2^32: compare it that way.
                if (flow - gcut_flow) % 2**32 == 0:
                    equal = "yes (mod 2^32)"
                    flow = gcut_flow
                    continue
            if gcut_flow != flow:
                equal = "**MISMATCH**"
                mismatches += 1
                print("MISMATCH on %s: Kolmogorov BK flow %d, gcut %s flow %d"
                      % (name, flow, solver, gcut_flow), file=sys.stderr)
        if row is not None:
            ours = float(row["solve_ms"])
            speedup = median_ms / ours if ours > 0 else float("inf")
            bar = "-"
            # Other seeds of a bar instance ("hard-2048x2048-s2") count for the bar too.
            if re.sub(r"-s[0-9]+$", "", name) in args.bar_instances.split(","):
                bar = ("goal met" if speedup >= 1.25 else "met" if speedup >= 1.0
                       else "**not met**")
                bar_speedups.append(speedup)
            lines.append("| %s | %d | %.1f | %.1f | %.1f | %d | %s | %.2f | %s |"
                         % (name, int(meta["nodes"]), median_ms, ours, float(row["build_ms"]),
                            flow, equal, speedup, bar))
        else:
            lines.append("| %s | %d | %.1f | - | - | %d | %s | - | - |"
                         % (name, int(meta["nodes"]), median_ms, flow, equal))
    if bar_speedups:
        lines.append("")
        lines.append("Bar (gcut bk at least as fast as Kolmogorov's BK, %s): met on %d of %d bar "
                     "instances; goal 1.25x met on %d of %d (speed-ups %s)."
                     % (version, sum(x >= 1.0 for x in bar_speedups), len(bar_speedups),
                        sum(x >= 1.25 for x in bar_speedups), len(bar_speedups),
                        ", ".join("%.2f" % x for x in bar_speedups)))
    table = "\n".join(lines) + "\n"
    sys.stdout.write(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    if mismatches:
        print("*** MISMATCH: %d instance(s) where Kolmogorov BK and gcut disagree ***"
              % mismatches, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
