#!/usr/bin/env python3
"""grabcut_opencv.py - the baseline for bench/grabcut_bench.sh: OpenCV's grabCut (Rother et al.
2004) from an image file to a 0/255 mask file, as a new user would call it.

  grabcut_opencv.py IMAGE OUT.png --rect X,Y,W,H [--iterations 5]
  grabcut_opencv.py IMAGE OUT.png --seeds SEEDS.png [--iterations 5]

--seeds takes gcut codes (0 unknown, 1 foreground, 2 background): foreground seeds become
GC_FGD, background GC_BGD, unknown pixels GC_PR_FGD (GC_PR_BGD with --unknown-bg), and
grabCut runs with GC_INIT_WITH_MASK. Needs opencv-python-headless and numpy (PyPI).
"""
import argparse
import sys

import cv2
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("image")
    ap.add_argument("out")
    ap.add_argument("--rect")
    ap.add_argument("--seeds")
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--unknown-bg", action="store_true")
    a = ap.parse_args()
    img = cv2.imread(a.image, cv2.IMREAD_COLOR)
    if img is None:
        sys.exit("cannot read " + a.image)
    bgd = np.zeros((1, 65), np.float64)
    fgd = np.zeros((1, 65), np.float64)
    if a.rect:
        x, y, w, h = (int(v) for v in a.rect.split(","))
        mask = np.zeros(img.shape[:2], np.uint8)
        if a.seeds:
            s = cv2.imread(a.seeds, cv2.IMREAD_UNCHANGED)
            mask[:] = cv2.GC_BGD
            mask[y:y + h, x:x + w] = cv2.GC_PR_FGD
            mask[s == 1] = cv2.GC_FGD
            mask[s == 2] = cv2.GC_BGD
            cv2.grabCut(img, mask, None, bgd, fgd, a.iterations, cv2.GC_INIT_WITH_MASK)
        else:
            cv2.grabCut(img, mask, (x, y, w, h), bgd, fgd, a.iterations, cv2.GC_INIT_WITH_RECT)
    else:
        s = cv2.imread(a.seeds, cv2.IMREAD_UNCHANGED)
        mask = np.full(img.shape[:2], cv2.GC_PR_BGD if a.unknown_bg else cv2.GC_PR_FGD, np.uint8)
        mask[s == 1] = cv2.GC_FGD
        mask[s == 2] = cv2.GC_BGD
        cv2.grabCut(img, mask, None, bgd, fgd, a.iterations, cv2.GC_INIT_WITH_MASK)
    out = np.where((mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD), 255, 0).astype(np.uint8)
    cv2.imwrite(a.out, out)


if __name__ == "__main__":
    main()
