#!/usr/bin/env python3
"""grabcut_inprocess.py - gcut.grabcut() against cv2.grabCut() in one Python process: the same
decoded photo, the same box (or trimap), 5 rounds / iterations, A B A B, no process start,
import or file IO on either side (bench/grabcut_speed.py times file to mask).

  grabcut_inprocess.py PHOTODIR [--mode rect,trimap] [--pairs 7] [--only a,b]

Needs the gcut Python package (pip install . at the repository root), opencv-python-headless
and numpy. Prints per photo the median seconds of each and the median pair-by-pair ratio
OpenCV / gcut, and each mask's error as grabcut_bench.py scores it.
"""
import argparse
import glob
import os
import statistics
import sys
import time

import cv2
import numpy as np

import gcut

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import grabcut_bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("photos")
    ap.add_argument("--mode", default="rect,trimap")
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    print("| mode | photo | gcut.grabcut s | cv2.grabCut s | OpenCV / gcut (range) | gcut error | OpenCV error |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for truth_path in sorted(glob.glob(os.path.join(a.photos, "*-truth.png"))):
        name = os.path.basename(truth_path)[: -len("-truth.png")]
        if a.only and name not in a.only.split(","):
            continue
        base = os.path.join(a.photos, name)
        truth = (cv2.imread(truth_path, cv2.IMREAD_GRAYSCALE) > 0).astype(np.uint8)
        bgr = cv2.imread(base + ".png", cv2.IMREAD_COLOR)
        rgb = np.ascontiguousarray(bgr[:, :, ::-1])
        x, y, w, h = (int(v) for v in open(base + "-box.txt").read().strip().split(","))
        for mode in a.mode.split(","):
            if mode == "rect":
                unknown = np.zeros(truth.shape, bool)
                unknown[y:y + h, x:x + w] = True

                def run_gcut():
                    return gcut.grabcut(rgb, rect=(x, y, w, h), iterations=5)

                def run_cv():
                    mask = np.zeros(bgr.shape[:2], np.uint8)
                    cv2.grabCut(bgr, mask, (x, y, w, h), np.zeros((1, 65)), np.zeros((1, 65)), 5,
                                cv2.GC_INIT_WITH_RECT)
                    return (mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD)
            else:
                codes = cv2.imread(base + "-%s.png" % mode, cv2.IMREAD_UNCHANGED)
                unknown = codes == 0

                def run_gcut():
                    return gcut.grabcut(rgb, seeds=codes, iterations=5)

                def run_cv():
                    mask = np.full(bgr.shape[:2], cv2.GC_PR_FGD, np.uint8)
                    mask[codes == 1] = cv2.GC_FGD
                    mask[codes == 2] = cv2.GC_BGD
                    cv2.grabCut(bgr, mask, None, np.zeros((1, 65)), np.zeros((1, 65)), 5,
                                cv2.GC_INIT_WITH_MASK)
                    return (mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD)
            tg, tc, ratio = [], [], []
            for i in range(a.pairs + 1):
                t0 = time.perf_counter()
                mg = run_gcut()
                t1 = time.perf_counter()
                mc = run_cv()
                t2 = time.perf_counter()
                if i == 0:
                    continue
                tg.append(t1 - t0)
                tc.append(t2 - t1)
                ratio.append((t2 - t1) / (t1 - t0))
            eg = grabcut_bench.error(mg.astype(np.uint8), truth, unknown)
            ec = grabcut_bench.error(mc.astype(np.uint8), truth, unknown)
            print("| %s | %s | %.3f | %.3f | %.1fx (%.1f-%.1f) | %.2f%% | %.2f%% |" % (
                mode, name, statistics.median(tg), statistics.median(tc), statistics.median(ratio),
                min(ratio), max(ratio), eg, ec), flush=True)
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
