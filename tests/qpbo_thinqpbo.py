#!/usr/bin/env python3
"""qpbo_thinqpbo.py - solve a gcut QPBO text file (docs/FORMATS.md) with Kolmogorov's QPBO
through thinqpbo (PyPI), as an oracle for `gcut qpbo`. Prints 'c labeled K of N',
'c twice_lower_bound L' and writes labels (after weak persistencies) one per line to OUT, and
the strong labels (before them) to OUT.strong. Exit 77 if thinqpbo is not installed."""
import sys

try:
    import thinqpbo
except ImportError:
    print("SKIP: thinqpbo is not installed (pip install thinqpbo)")
    sys.exit(77)


def main():
    path, out = sys.argv[1], sys.argv[2]
    q = None
    n = 0
    with open(path) as f:
        for line in f:
            t = line.split()
            if not t or t[0] == "c":
                continue
            if t[0] == "p":
                n, m = int(t[2]), int(t[3])
                q = thinqpbo.QPBOInt(max(n, 1), max(m, 1))
                q.add_node(n)
            elif t[0] == "u":
                q.add_unary_term(int(t[1]) - 1, int(t[2]), int(t[3]))
            elif t[0] == "e":
                i, j = int(t[1]) - 1, int(t[2]) - 1
                q.add_pairwise_term(i, j, int(t[3]), int(t[4]), int(t[5]), int(t[6]))
    q.solve()
    strong = [q.get_label(i) for i in range(n)]
    q.compute_weak_persistencies()
    labels = [q.get_label(i) for i in range(n)]
    labels = [x if x in (0, 1) else -1 for x in labels]
    strong = [x if x in (0, 1) else -1 for x in strong]
    print("c labeled %d of %d" % (sum(1 for x in labels if x >= 0), n))
    print("c twice_lower_bound %d" % q.compute_twice_lower_bound())
    with open(out, "w") as f:
        f.write("".join("%d\n" % x for x in labels))
    with open(out + ".strong", "w") as f:
        f.write("".join("%d\n" % x for x in strong))


main()
