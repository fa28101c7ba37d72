#!/usr/bin/env python3
"""grabcut_speed.py - file to mask, whole processes: gcut's GrabCut against OpenCV's grabCut.

  grabcut_speed.py PHOTODIR GCUT [--mode rect,trimap,strokes] [--pairs 5] [--only a,b]
                   [--gcut-args '...'] [--python PY]

For every NAME.png with NAME-truth.png in PHOTODIR (bench/grabcut_photos.py makes them) and
every mode, runs `GCUT segment NAME.png -o ... --rect BOX` (or `--seeds NAME-{trimap,strokes}.png
--iterations 5`) and `PY bench/grabcut_opencv.py` with the same input, alternating A B A B ...
for --pairs pairs after one warm-up pair, and prints per photo: median wall seconds of each,
the median of the pair-by-pair ratios OpenCV / gcut (wall, and CPU: user + system of the child
process, from wait4), their range, and both masks' error as grabcut_bench.py scores it (wrong
pixels among the unknown ones, the truth's outline +-2 pixels left out). Timing only here;
the machine's load average is printed before and after (a shared machine makes the absolute
times move; the pair-by-pair ratios hold better).
"""
import argparse
import glob
import os
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import grabcut_bench  # noqa: E402  (error(), scored(): the same scoring)

import cv2  # noqa: E402
import numpy as np  # noqa: E402


def timed(cmd):
    """Run cmd; return (wall seconds, user + system CPU seconds of the child)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), err))
    return wall, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("photos")
    ap.add_argument("gcut")
    ap.add_argument("--mode", default="rect,trimap")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--gcut-args", default="")
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    out = os.path.join(a.photos, "out")
    os.makedirs(out, exist_ok=True)
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    print("| mode | photo | gcut s | OpenCV s | OpenCV / gcut, wall (range) | CPU ratio | gcut error | OpenCV error |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for truth_path in sorted(glob.glob(os.path.join(a.photos, "*-truth.png"))):
        name = os.path.basename(truth_path)[: -len("-truth.png")]
        if a.only and name not in a.only.split(","):
            continue
        base = os.path.join(a.photos, name)
        truth = (cv2.imread(truth_path, cv2.IMREAD_GRAYSCALE) > 0).astype(np.uint8)
        box = open(base + "-box.txt").read().strip()
        x, y, w, h = (int(v) for v in box.split(","))
        for mode in a.mode.split(","):
            if mode == "rect":
                unknown = np.zeros(truth.shape, bool)
                unknown[y:y + h, x:x + w] = True
                gargs, cargs = ["--rect", box], ["--rect", box]
            else:
                seeds = base + "-%s.png" % mode
                unknown = cv2.imread(seeds, cv2.IMREAD_GRAYSCALE) == 0
                gargs = ["--seeds", seeds, "--iterations", "5"]
                cargs = ["--seeds", seeds]
            gout = os.path.join(out, "%s-%s-gcut.png" % (name, mode))
            cout = os.path.join(out, "%s-%s-opencv.png" % (name, mode))
            gcmd = [a.gcut, "segment", base + ".png", "-o", gout] + gargs + shlex.split(a.gcut_args)
            ccmd = [a.python, os.path.join(HERE, "grabcut_opencv.py"), base + ".png", cout] + cargs
            gw, cw, rw, rc, gc = [], [], [], [], []
            for i in range(a.pairs + 1):
                g = timed(gcmd)
                c = timed(ccmd)
                if i == 0:
                    continue  # warm-up pair (file cache, page cache of the libraries)
                gw.append(g[0])
                cw.append(c[0])
                gc.append(g[1])
                rw.append(c[0] / g[0])
                rc.append(c[1] / g[1])
            ge = grabcut_bench.error(cv2.imread(gout, cv2.IMREAD_GRAYSCALE), truth, unknown)
            ce = grabcut_bench.error(cv2.imread(cout, cv2.IMREAD_GRAYSCALE), truth, unknown)
            print("| %s | %s | %.3f | %.3f | %.1fx (%.1f-%.1f) | %.1fx | %.2f%% | %.2f%% |" % (
                mode, name, statistics.median(gw), statistics.median(cw), statistics.median(rw),
                min(rw), max(rw), statistics.median(rc), ge, ce), flush=True)
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
