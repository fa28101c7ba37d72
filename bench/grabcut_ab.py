#!/usr/bin/env python3
"""grabcut_ab.py - two gcut binaries on the same command, whole processes, A B A B.

  grabcut_ab.py GCUT_A GCUT_B [--pairs 21] [--b-args '...'] -- ARGS...

Runs `GCUT_A ARGS` and `GCUT_B ARGS` alternately (one warm-up pair, then --pairs pairs) and
prints each side's median wall and CPU milliseconds (user + system of the child, from wait4),
the median of the pair-by-pair differences A - B and the machine's load average before and
after. Where ARGS hold `-o FILE`, each side writes its own copy (NAME.a.EXT, NAME.b.EXT) and the two
outputs must be byte-identical (the same mask), or the script fails; --b-args gives B extra
arguments (a parameter change: then the outputs are not compared), as does --differ. `--` ARGS may be
`version`, to time the process start alone. Timing only here (bench/), never in tests.
"""
import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import time


def timed(cmd):
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), err))
    return wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    k = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--pairs", type=int, default=21)
    ap.add_argument("--differ", action="store_true",
                    help="A and B may write different outputs (a change of results)")
    ap.add_argument("--b-args", default="",
                    help="extra arguments for B only (the outputs are then not compared)")
    a = ap.parse_args(argv[:k])
    args = argv[k + 1:]
    out = None
    if "-o" in args:
        out = args[args.index("-o") + 1]

    def cmd(binary, side):
        c = [binary] + list(args) + (a.b_args.split() if side == "b" else [])
        if out is not None:
            root, ext = os.path.splitext(out)
            c[c.index("-o") + 1] = root + "." + side + ext
        return c

    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    runs = {"a": [], "b": []}
    for i in range(a.pairs + 1):
        ra = timed(cmd(a.a, "a"))
        rb = timed(cmd(a.b, "b"))
        if i > 0:
            runs["a"].append(ra)
            runs["b"].append(rb)
    same = out is not None and not a.b_args and not a.differ
    if same:
        root, ext = os.path.splitext(out)
        if not filecmp.cmp(root + ".a" + ext, root + ".b" + ext, shallow=False):
            sys.exit("the two outputs differ: %s.a%s %s.b%s" % (root, ext, root, ext))
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    for what, j in (("wall", 0), ("cpu", 1)):
        ma = statistics.median(r[j] for r in runs["a"])
        mb = statistics.median(r[j] for r in runs["b"])
        d = statistics.median(x[j] - y[j] for x, y in zip(runs["a"], runs["b"]))
        print("%s ms: A %.1f  B %.1f  median pair difference A - B %.1f  (%d pairs)%s" %
              (what, ma, mb, d, a.pairs, "  outputs identical" if same else ""))


if __name__ == "__main__":
    main()
