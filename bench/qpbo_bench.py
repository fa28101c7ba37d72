#!/usr/bin/env python3
"""qpbo_bench.py - gcut's `qpbo` and `pqpbo` against Kolmogorov's QPBO (v1.4 through thinqpbo)
on multi-object segmentation energies (`gcut gen qpbo-objects`), each solver its own process,
the order rotating run by run (A B C, B C A, ...) so that load on a shared machine hits every
side of a ratio; medians of the repeats; energies and lower bounds checked equal.

usage: qpbo_bench.py --gcut BUILD/gcut [--repeats 5] [--threads 1,2] [--out DIR]
                     [--kolmogorov/--no-kolmogorov] SPEC...
SPEC: WxH:K or WxHxD:K (image or volume size, objects), e.g. 1000x1000:16

Prints a markdown table. Times (wall; CPU time of the solve alongside, which moves less with
other people's load on a shared machine): gcut's build (CSR layout) + solve (both stages, Phase A and B)
+ labels (reachability and components) against Kolmogorov's solve() + ComputeWeakPersistencies()
(its graph is built while terms are added, which through Python is not timed: the ratio is
conservative for gcut). Memory: gcut's solver bytes plus the energy object's (16 B per node,
24 B per term) against the resident memory Kolmogorov's QPBO added."""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parse(text):
    out = {}
    for line in text.splitlines():
        t = line.split()
        if not t:
            continue
        if t[0] == "s":
            out["energy"] = int(t[1])
        elif t[0] == "c" and len(t) >= 3:
            if t[1] == "labeled":
                out["labeled"] = int(t[2])
            elif t[1] == "nodes" and len(t) >= 5:
                out["nodes"], out["terms"] = int(t[2]), int(t[4])
            else:
                try:
                    out[t[1]] = float(t[2])
                except ValueError:
                    pass
    return out


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
    return parse(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gcut", required=True)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--no-kolmogorov", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("specs", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    threads = [int(t) for t in a.threads.split(",")]
    have_k = not a.no_kolmogorov and subprocess.run(
        [sys.executable, "-c", "import thinqpbo"], capture_output=True).returncode == 0
    rows = []
    for spec in a.specs:
        size, objects = spec.split(":")
        path = os.path.join(a.out, "objects-%s-%s.qpbo" % (size, objects))
        if not os.path.exists(path):
            subprocess.run([a.gcut, "gen", "qpbo-objects", "--size", size, "--objects", objects,
                            "--seed", str(a.seed), "-o", path], check=True,
                           capture_output=True)
        solvers = [("qpbo", [a.gcut, "qpbo", "--solver", "qpbo", path])]
        for t in threads:
            solvers.append(("pqpbo-%d" % t, [a.gcut, "qpbo", "--solver", "pqpbo", "--threads",
                                             str(t), path]))
        if have_k:
            solvers.append(("kolmogorov", [sys.executable,
                                           os.path.join(HERE, "qpbo_kolmogorov.py"), path]))
        results = {name: [] for name, _ in solvers}
        for r in range(a.repeats):
            order = solvers[r % len(solvers):] + solvers[:r % len(solvers)]
            for name, cmd in order:
                results[name].append(run(cmd))
        ref = results["qpbo"][0]
        for name, runs in results.items():
            for x in runs:
                if x["energy"] != ref["energy"] or x["lower_bound"] != ref["lower_bound"] or \
                        x["labeled"] != ref["labeled"]:
                    sys.exit("%s on %s: energy %d bound %d labeled %d, qpbo %d %d %d" % (
                        name, spec, x["energy"], x["lower_bound"], x["labeled"], ref["energy"],
                        ref["lower_bound"], ref["labeled"]))

        def med(name, *keys):
            return statistics.median(sum(x.get(k, 0.0) for k in keys) for x in results[name])

        row = {"spec": spec, "nodes": ref["nodes"], "terms": ref["terms"],
               "labeled": ref["labeled"], "energy": ref["energy"]}
        energy_bytes = 16 * ref["nodes"] + 24 * ref["terms"]
        row["qpbo_bytes"] = ref["solver_bytes"] + energy_bytes
        for name, _ in solvers:
            row[name + "_cpu"] = med(name, "cpu_ms")
            if name == "kolmogorov":
                row[name] = med(name, "solve_ms", "weak_ms")
                row["k_bytes"] = statistics.median(x["rss_bytes"] for x in results[name])
            else:
                row[name] = med(name, "build_ms", "solve_ms", "label_ms")
                row[name + "_solve"] = med(name, "solve_ms", "label_ms")
        rows.append(row)
        print(row, file=sys.stderr)
    head = ["instance", "nodes", "terms", "qpbo ms (solve+labels)"]
    head += ["pqpbo %d thr ms" % t for t in threads]
    if have_k:
        head += ["Kolmogorov ms", "Kolmogorov / qpbo", "Kolmogorov / best pqpbo",
                 "CPU ms qpbo / Kolmogorov", "bytes/node gcut", "bytes/node Kolmogorov"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        cells = [row["spec"], str(row["nodes"]), str(row["terms"]),
                 "%.0f (%.0f)" % (row["qpbo"], row["qpbo_solve"])]
        cells += ["%.0f" % row["pqpbo-%d" % t] for t in threads]
        if have_k:
            best = min(row["pqpbo-%d" % t] for t in threads)
            cells += ["%.0f" % row["kolmogorov"], "%.2f" % (row["kolmogorov"] / row["qpbo"]),
                      "%.2f" % (row["kolmogorov"] / best),
                      "%.0f / %.0f" % (row["qpbo_cpu"], row["kolmogorov_cpu"]),
                      "%.0f" % (row["qpbo_bytes"] / row["nodes"]),
                      "%.0f" % (row["k_bytes"] / row["nodes"])]
        print("| " + " | ".join(cells) + " |")


main()
