#!/usr/bin/env python3
"""grabcut_bench.py - GrabCut error of gcut and OpenCV on photos with truth (grabcut_photos.py).

  grabcut_bench.py PHOTODIR GCUT [--mode rect,strokes,trimap|all] [--gcut-args '...'] [--opencv]

For every NAME.png with NAME-truth.png in PHOTODIR: runs `GCUT segment` (5 rounds: with seeds
`--iterations 5` is passed unless --gcut-args names one) with the box
(NAME-box.txt), the strokes (NAME-strokes.png) or the lasso trimap (NAME-trimap.png), and with
--opencv bench/grabcut_opencv.py the
same way, and prints the error: wrong pixels among those the input leaves unknown (inside the
box; not under a stroke), leaving out the pixels within 2 pixels of the truth's outline (the
truth is exact only to a pixel or two there). The mean over the photos comes last.
Times are not taken here: whole-process times come from an outside timer, A B A B.
"""
import argparse
import glob
import os
import shlex
import subprocess
import sys

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def scored(truth):
    k = np.ones((5, 5), np.uint8)
    ring = cv2.dilate(truth, k) != cv2.erode(truth, k)
    return ~ring


def error(mask, truth, unknown):
    use = unknown & scored(truth)
    return 100.0 * np.count_nonzero((mask > 0)[use] != (truth > 0)[use]) / max(1, np.count_nonzero(use))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("photos")
    ap.add_argument("gcut")
    ap.add_argument("--mode", default="all", help="rect, strokes, trimap, or all")
    ap.add_argument("--gcut-args", default="")
    ap.add_argument("--opencv", action="store_true")
    ap.add_argument("--opencv-unknown-bg", action="store_true")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    modes = ["rect", "strokes", "trimap"] if a.mode == "all" else a.mode.split(",")
    tmp = os.path.join(a.photos, "out")
    os.makedirs(tmp, exist_ok=True)
    rows = {}
    for truth_path in sorted(glob.glob(os.path.join(a.photos, "*-truth.png"))):
        name = os.path.basename(truth_path)[: -len("-truth.png")]
        if a.only and name not in a.only.split(","):
            continue
        base = os.path.join(a.photos, name)
        truth = (cv2.imread(truth_path, cv2.IMREAD_GRAYSCALE) > 0).astype(np.uint8)
        box = open(base + "-box.txt").read().strip()
        x, y, w, h = (int(v) for v in box.split(","))
        strokes = cv2.imread(base + "-strokes.png", cv2.IMREAD_GRAYSCALE)
        for mode in modes:
            if mode == "rect":
                unknown = np.zeros(truth.shape, bool)
                unknown[y:y + h, x:x + w] = True
                gargs = ["--rect", box]
                cargs = ["--rect", box]
            else:
                seeds = base + ("-strokes.png" if mode == "strokes" else "-trimap.png")
                unknown = cv2.imread(seeds, cv2.IMREAD_GRAYSCALE) == 0
                gargs = ["--seeds", seeds] + ([] if "--iterations" in a.gcut_args else ["--iterations", "5"])
                cargs = ["--seeds", seeds] + (["--unknown-bg"] if a.opencv_unknown_bg else [])
            out = os.path.join(tmp, "%s-%s-gcut.png" % (name, mode))
            subprocess.run([a.gcut, "segment", base + ".png", "-o", out] + gargs +
                           shlex.split(a.gcut_args), check=True, stdout=subprocess.DEVNULL)
            e = error(cv2.imread(out, cv2.IMREAD_GRAYSCALE), truth, unknown)
            rows.setdefault(mode, []).append((name, e, None))
            if a.opencv:
                outc = os.path.join(tmp, "%s-%s-opencv.png" % (name, mode))
                subprocess.run([sys.executable, os.path.join(HERE, "grabcut_opencv.py"), base + ".png",
                                outc] + cargs, check=True)
                ec = error(cv2.imread(outc, cv2.IMREAD_GRAYSCALE), truth, unknown)
                rows[mode][-1] = (name, e, ec)
    for mode, r in rows.items():
        for name, e, ec in r:
            print("%-8s %-11s gcut %6.2f%%" % (mode, name, e) + ("   opencv %6.2f%%" % ec if ec is not None else ""))
        ge = np.mean([e for _, e, _ in r])
        line = "%-8s %-11s gcut %6.2f%%" % (mode, "MEAN", ge)
        if a.opencv:
            line += "   opencv %6.2f%%" % np.mean([ec for _, _, ec in r])
        print(line)


if __name__ == "__main__":
    main()
