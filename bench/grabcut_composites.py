#!/usr/bin/env python3
"""grabcut_composites.py - a second GrabCut photo set, with exact truth, for tuning beyond the
six photographs of grabcut_photos.py: real objects cut out by their frozen truth masks (or
scikit-image's horse silhouette filled with a real photo's texture) pasted, scaled and with a
soft 1-pixel edge, onto other real photographs that PyPI packages ship (scikit-image's chelsea,
rocket, immunohistochemistry, hubble_deep_field, retina; brick, grass and gravel tinted).

  grabcut_composites.py PHOTODIR OUTDIR [--count 12] [--seed 1]

PHOTODIR is grabcut_photos.py's output (the objects' photos and truths). Writes OUTDIR/NAME.png,
NAME-truth.png (0/255: the pasted object's mask, alpha >= 1/2), NAME-box.txt (the object's
bounding box widened by 4-12 pixels, as a user drags it), NAME-trimap.png (a lasso trimap:
unknown within 12 pixels of the outline, the grabcut_photos.py protocol) and NAME-strokes.png
(two foreground strokes through the object's inside and two background strokes beside it,
drawn by a fixed rule, not by looking at any result). Deterministic for a seed. The set is made
from the pictures alone: no segmentation method (gcut's or another) takes part in the truth.
"""
import argparse
import os
import sys

import cv2
import numpy as np
import skimage.data as skd

F, B = 1, 2
TRIMAP = 12
OBJECTS = ["astronaut", "hopper", "flower", "coffee", "china", "motorcycle", "horse:rocket",
           "horse:immunohistochemistry"]
BACKGROUNDS = ["chelsea", "rocket", "immunohistochemistry", "hubble_deep_field", "retina",
               "brick", "grass", "gravel"]
TINTS = {"brick": (0.75, 0.9, 1.15), "grass": (0.7, 1.1, 0.8), "gravel": (1.0, 0.95, 0.85)}


def rgb_to_bgr(im):
    return np.ascontiguousarray(im[:, :, ::-1])


def background(name):
    im = getattr(skd, name)()
    if im.ndim == 2:
        t = TINTS[name]
        im = np.clip(np.stack([im * t[0], im * t[1], im * t[2]], axis=2), 0, 255).astype(np.uint8)
    im = rgb_to_bgr(im)
    h, w = im.shape[:2]
    s = 640.0 / max(h, w)
    if s < 1:
        im = cv2.resize(im, (int(w * s), int(h * s)), interpolation=cv2.INTER_AREA)
    return im


def cut_object(photos, name):
    """(BGR pixels, 0/1 mask) of an object, cropped to its bounding box."""
    if name.startswith("horse:"):
        mask = (~skd.horse()).astype(np.uint8)  # the horse is False (black) in the silhouette
        tex = background(name.split(":")[1])
        h, w = mask.shape
        tex = cv2.resize(tex, (max(w, tex.shape[1]), max(h, tex.shape[0])))[:h, :w]
        img = tex
    else:
        img = cv2.imread(os.path.join(photos, name + ".png"), cv2.IMREAD_COLOR)
        mask = (cv2.imread(os.path.join(photos, name + "-truth.png"), cv2.IMREAD_GRAYSCALE) > 0)
        mask = mask.astype(np.uint8)
        if img is None:
            sys.exit("missing %s.png in %s (run grabcut_photos.py first)" % (name, photos))
    # The largest connected part only (a pasted object is one piece).
    n, lab, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    big = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    mask = (lab == big).astype(np.uint8)
    x, y, w, h = cv2.boundingRect(mask)
    return img[y:y + h, x:x + w], mask[y:y + h, x:x + w]


def strokes_for(truth, rng):
    """Two foreground strokes through the object's inside, two background ones beside it."""
    seeds = np.zeros(truth.shape, np.uint8)
    inner = cv2.erode(truth, np.ones((17, 17), np.uint8))
    if inner.sum() == 0:
        inner = truth
    ys, xs = np.nonzero(inner)
    cy, cx = int(np.median(ys)), int(np.median(xs))
    for horizontal in (True, False):
        line = inner[cy, :] if horizontal else inner[:, cx]
        idx = np.nonzero(line)[0]
        if idx.size == 0:
            continue
        # the run of inside pixels that holds the centre (or the longest run)
        runs = np.split(idx, np.nonzero(np.diff(idx) > 1)[0] + 1)
        run = max(runs, key=len)
        a, b = run[0], run[-1]
        a, b = int(a + 0.15 * (b - a)), int(b - 0.15 * (b - a))
        p = [(a, cy), (b, cy)] if horizontal else [(cx, a), (cx, b)]
        cv2.polylines(seeds, [np.array(p, np.int32)], False, F, 5)
    outer = cv2.dilate(truth, np.ones((31, 31), np.uint8))
    x, y, w, h = cv2.boundingRect(truth)
    H, W = truth.shape
    for side in ("left", "right", "top", "bottom"):
        if side == "left" and x > 40:
            xs_ = x - 20
            p = [(xs_, y + h // 4), (xs_, y + 3 * h // 4)]
        elif side == "right" and x + w < W - 40:
            xs_ = x + w + 20
            p = [(xs_, y + h // 4), (xs_, y + 3 * h // 4)]
        elif side == "top" and y > 40:
            ys_ = y - 20
            p = [(x + w // 4, ys_), (x + 3 * w // 4, ys_)]
        elif side == "bottom" and y + h < H - 40:
            ys_ = y + h + 20
            p = [(x + w // 4, ys_), (x + 3 * w // 4, ys_)]
        else:
            continue
        stroke = np.zeros(truth.shape, np.uint8)
        cv2.polylines(stroke, [np.array(p, np.int32)], False, 1, 5)
        seeds[(stroke > 0) & (outer == 0)] = B
        if (seeds == B).sum() > 0 and side in ("right", "bottom"):
            break
    return seeds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("photos")
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    os.makedirs(a.out, exist_ok=True)
    bgs = {n: background(n) for n in BACKGROUNDS}
    objs = {n: cut_object(a.photos, n) for n in OBJECTS}
    for k in range(a.count):
        oname = OBJECTS[k % len(OBJECTS)]
        bname = BACKGROUNDS[(k * 3 + 1 + k // len(OBJECTS)) % len(BACKGROUNDS)]
        if oname.endswith(":" + bname):
            bname = BACKGROUNDS[(k * 3 + 2) % len(BACKGROUNDS)]
        bg = bgs[bname].copy()
        oimg, omask = objs[oname]
        H, W = bg.shape[:2]
        oh, ow = omask.shape
        s = rng.uniform(0.45, 0.75) * min(H / oh, W / ow)
        nw, nh = max(8, int(ow * s)), max(8, int(oh * s))
        oimg = cv2.resize(oimg, (nw, nh), interpolation=cv2.INTER_AREA)
        alpha = cv2.resize(omask.astype(np.float32), (nw, nh), interpolation=cv2.INTER_AREA)
        alpha = cv2.GaussianBlur(alpha, (0, 0), 0.7)
        x0 = int(rng.integers(0, W - nw + 1))
        y0 = int(rng.integers(0, H - nh + 1))
        region = bg[y0:y0 + nh, x0:x0 + nw].astype(np.float32)
        al = alpha[:, :, None]
        bg[y0:y0 + nh, x0:x0 + nw] = np.clip(al * oimg + (1 - al) * region + 0.5, 0,
                                             255).astype(np.uint8)
        truth = np.zeros((H, W), np.uint8)
        truth[y0:y0 + nh, x0:x0 + nw] = alpha >= 0.5
        name = "c%02d-%s-on-%s" % (k, oname.replace(":", "-"), bname)
        p = os.path.join(a.out, name)
        cv2.imwrite(p + ".png", bg)
        cv2.imwrite(p + "-truth.png", truth * 255)
        x, y, w, h = cv2.boundingRect(truth)
        m = [int(rng.integers(4, 13)) for _ in range(4)]
        bx0, by0 = max(0, x - m[0]), max(0, y - m[1])
        bx1, by1 = min(W, x + w + m[2]), min(H, y + h + m[3])
        if bx0 == 0 and by0 == 0 and bx1 == W and by1 == H:
            bx0 = 1  # a box of the whole image leaves nothing known
        with open(p + "-box.txt", "w") as f:
            f.write("%d,%d,%d,%d\n" % (bx0, by0, bx1 - bx0, by1 - by0))
        kk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * TRIMAP + 1, 2 * TRIMAP + 1))
        trimap = np.zeros(truth.shape, np.uint8)
        trimap[cv2.dilate(truth, kk) == 0] = B
        trimap[cv2.erode(truth, kk) > 0] = F
        cv2.imwrite(p + "-trimap.png", trimap)
        cv2.imwrite(p + "-strokes.png", strokes_for(truth, rng))
        print(name, bg.shape, "object %.1f%%" % (100 * truth.mean()))


if __name__ == "__main__":
    main()
