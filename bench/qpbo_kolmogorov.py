#!/usr/bin/env python3
"""qpbo_kolmogorov.py - Kolmogorov's QPBO (v1.4, through thinqpbo from PyPI) on a gcut QPBO
text file, on a file in Kolmogorov's own text format (first line `nodes=N`: read by QPBO::Load
in C++), or on a binary energy ("GQK1", as bench/qpbo_objects --kolmogorov writes it: read whole
into memory, then bench/qpbo_kolmogorov_drv.c, compiled here into a shared object and called
through ctypes, runs Kolmogorov's constructor, AddNode, AddUnaryTerm and AddPairwiseTerm loop
in C and prints its time as 'c build_ms'). With `--labels OUT` the last two write one int8 label
per node and the caller computes the energy. For bench/qpbo_bench.py and bench/qpbo_objects.c: prints 'c add_ms', 'c solve_ms' (solve: both stages of
max flow), 'c weak_ms' (compute_weak_persistencies), 'c cpu_ms' (CPU time of both), 'c rss_bytes' (resident memory the
solver added, from /proc/self/statm), 'c labeled K of N', 'c lower_bound LB' (ceil of half
of ComputeTwiceLowerBound) and 's E' (its labels, unlabeled as 0). Exit 77 without thinqpbo."""
import sys
import time

try:
    import thinqpbo
except ImportError:
    print("SKIP: thinqpbo is not installed (pip install thinqpbo)")
    sys.exit(77)


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def main_load(path, labels_out):
    before = rss()
    q = thinqpbo.QPBOInt()
    if not q.load(path):
        sys.exit("QPBO::Load failed on " + path)
    n = q.get_node_num()
    t1 = time.perf_counter()
    c1 = time.process_time()
    q.solve()
    t2 = time.perf_counter()
    q.compute_weak_persistencies()
    t3 = time.perf_counter()
    c3 = time.process_time()
    grown = rss() - before
    labels = bytes((q.get_label(i) & 0xFF) for i in range(n))
    if labels_out:
        with open(labels_out, "wb") as f:
            f.write(labels)
    twice = q.compute_twice_lower_bound()
    print("c solve_ms %.1f" % (1e3 * (t2 - t1)))
    print("c weak_ms %.1f" % (1e3 * (t3 - t2)))
    print("c cpu_ms %.1f" % (1e3 * (c3 - c1)))
    print("c rss_bytes %d" % grown)
    print("c labeled %d of %d" % (n - labels.count(0xFF), n))
    print("c lower_bound %d" % (-((-twice) // 2)))


def main_binary(path, labels_out):
    import ctypes
    import os
    import subprocess
    import tempfile
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qpbo_kolmogorov_drv.c")
    lib = os.path.join(tempfile.gettempdir(), "qpbo_kolmogorov_drv_%d.so" % os.getpid())
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-DQPBO_KOLMOGOROV_DRV_LIB", src, "-o", lib,
                    "-ldl"], check=True)
    try:
        drv = ctypes.CDLL(lib)
    finally:
        os.remove(lib)
    drv.qpbo_kolmogorov_run.argtypes = [ctypes.c_char_p] * 3
    module = thinqpbo._qpbo.__file__.encode()
    sys.stdout.flush()
    rc = drv.qpbo_kolmogorov_run(module, path.encode(), labels_out.encode() if labels_out else None)
    if rc != 0:
        sys.exit("qpbo_kolmogorov_drv failed on " + path)


def main():
    path = sys.argv[1]
    with open(path, "rb") as f:
        head = f.read(6).decode("latin-1")
    if head.startswith("GQK1"):
        out = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--labels" else None
        main_binary(path, out)
        return
    if head == "nodes=":
        out = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--labels" else None
        main_load(path, out)
        return
    with open(path) as f:
        lines = [l.split() for l in f if l[:1] in ("p", "u", "e")]
    n, m = int(lines[0][2]), int(lines[0][3])
    units = [(int(t[1]) - 1, int(t[2]), int(t[3])) for t in lines if t[0] == "u"]
    terms = [(int(t[1]) - 1, int(t[2]) - 1, int(t[3]), int(t[4]), int(t[5]), int(t[6]))
             for t in lines if t[0] == "e"]
    del lines
    before = rss()
    t0 = time.perf_counter()
    q = thinqpbo.QPBOInt(max(n, 1), max(m, 1))
    q.add_node(n)
    for i, a, b in units:
        q.add_unary_term(i, a, b)
    for i, j, a, b, c, d in terms:
        q.add_pairwise_term(i, j, a, b, c, d)
    t1 = time.perf_counter()
    c1 = time.process_time()
    q.solve()
    t2 = time.perf_counter()
    q.compute_weak_persistencies()
    t3 = time.perf_counter()
    c3 = time.process_time()
    grown = rss() - before
    labels = [q.get_label(i) for i in range(n)]
    x = [1 if v == 1 else 0 for v in labels]
    e = sum(b if x[i] else a for i, a, b in units)
    e += sum((a, b, c, d)[2 * x[i] + x[j]] for i, j, a, b, c, d in terms)
    twice = q.compute_twice_lower_bound()
    print("c add_ms %.1f" % (1e3 * (t1 - t0)))
    print("c solve_ms %.1f" % (1e3 * (t2 - t1)))
    print("c weak_ms %.1f" % (1e3 * (t3 - t2)))
    print("c cpu_ms %.1f" % (1e3 * (c3 - c1)))
    print("c rss_bytes %d" % grown)
    print("c labeled %d of %d" % (sum(1 for v in labels if v in (0, 1)), n))
    print("c lower_bound %d" % (-((-twice) // 2)))
    print("s %d" % e)


main()
