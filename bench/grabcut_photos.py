#!/usr/bin/env python3
"""grabcut_photos.py - the real photographs of the GrabCut benchmark, their boxes, strokes and
hand-checked truth masks, made from pictures that PyPI packages ship (nothing is downloaded):

  scikit-image 0.26 (skimage/data): astronaut, coffee, motorcycle_left            (CC0 / public domain)
  scikit-learn (sklearn/datasets/images): flower.jpg, china.jpg                  (CC BY 2.0)
  matplotlib (mpl-data/sample_data): grace_hopper.jpg                            (public domain)

  grabcut_photos.py OUTDIR [--rough GCUT]

writes OUTDIR/NAME.png (the photo, from the installed package) and copies the frozen
bench/grabcut_data/NAME-{box.txt,strokes.png,trimap.png,truth.png} beside it. With --rough GCUT
it remakes those instead (as they were made once, then checked by eye and frozen, so that later
changes to gcut cannot move the truth): NAME-box.txt (X,Y,W,H), NAME-strokes.png (gcut seed codes:
a few strokes a user would draw, 1 foreground, 2 background) and, with --rough, NAME-truth.png
and NAME-trimap.png (a lasso trimap: the truth's outline widened by TRIMAP pixels each way is
unknown, the rest seeded).

The truth is made by a conservative procedure, not drawn pixel by pixel: (1) a rough mask by
gcut's GrabCut from the box and many more strokes than the benchmark's (NAME-dense), (2) a
person looks at it and adds strokes until it is right everywhere but the last pixels of the
outline, (3) the rough mask is shrunk and grown by BAND pixels; what lies between is relabelled
by a per-pixel rule that knows no graph cut: the class of the nearest colour among the sure
pixels of each class within 10 pixels (1-NN in RGB). The benchmark scores every pixel but
those within 2 pixels of the truth's outline (bench/grabcut_bench.py), so the error measures
what a person would call wrong, not where the outline runs inside a pixel or two.
"""
import glob
import os
import shutil
import subprocess
import sys

import cv2
import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grabcut_data")
BAND = 5
TRIMAP = 12

# name: (source, box, user strokes [(label, thickness, points)], extra strokes for the truth)
F, B = 1, 2
PHOTOS = {
    "flower": ("sklearn:flower.jpg", (160, 78, 295, 290),
               [(F, 5, [(200, 220), (410, 220)]), (F, 5, [(307, 110), (307, 340)]),
                (B, 5, [(60, 200), (120, 300)]), (B, 5, [(520, 100), (600, 200)])],
               [(B, 5, [(180, 100), (185, 90)]), (B, 5, [(430, 345), (440, 330)])]),
    "hopper": ("matplotlib:grace_hopper.jpg", (10, 18, 500, 582),
               [(F, 5, [(260, 220), (260, 300)]), (F, 5, [(260, 100), (230, 140)]),
                (F, 7, [(150, 520), (400, 540)]), (B, 5, [(60, 80), (90, 300)]),
                (B, 5, [(420, 60), (460, 300)])],
               [(F, 5, [(270, 380), (270, 430)]), (F, 5, [(60, 560), (480, 580)]),
                (F, 5, [(200, 55), (330, 55)]), (F, 5, [(100, 497), (160, 505)]),
                (F, 5, [(335, 507), (445, 513)]), (F, 3, [(250, 40), (270, 45)]),
                (B, 5, [(30, 380), (80, 420)]), (B, 5, [(390, 200), (480, 350)]),
                (B, 5, [(60, 345), (120, 290)]), (B, 5, [(10, 420), (20, 580)]),
                (B, 3, [(140, 230), (150, 300)])]),
    "astronaut": ("skimage:astronaut.png", (15, 10, 360, 502),
                  [(F, 5, [(225, 90), (225, 150)]), (F, 7, [(80, 260), (180, 430)]),
                   (B, 7, [(400, 430), (470, 470)]), (B, 5, [(40, 60), (60, 150)])],
                  [(F, 5, [(200, 180), (260, 180)]), (F, 5, [(300, 300), (330, 330)]),
                   (F, 5, [(160, 215), (270, 215)]), (F, 5, [(200, 250), (250, 262)]),
                   (F, 5, [(150, 380), (190, 395)]),
                   (B, 5, [(330, 60), (340, 150)]), (B, 5, [(40, 130), (80, 190)])]),
    "china": ("sklearn:china.jpg", (60, 25, 315, 402),
              [(F, 5, [(205, 60), (205, 380)]), (F, 5, [(100, 270), (330, 270)]),
               (B, 5, [(300, 60), (350, 120)]), (B, 7, [(70, 390), (150, 410)])],
              [(F, 5, [(120, 200), (300, 200)]), (B, 5, [(345, 385), (365, 410)]),
               (B, 7, [(70, 335), (150, 365)]), (B, 7, [(150, 385), (250, 405)]),
               (B, 7, [(70, 415), (280, 420)]), (F, 5, [(220, 340), (320, 345)])]),
    "motorcycle": ("skimage:motorcycle_left.png", (88, 70, 600, 372),
                   [(F, 5, [(380, 200), (470, 190)]), (F, 5, [(180, 185), (330, 195)]),
                    (F, 5, [(400, 300), (440, 300)]), (B, 5, [(450, 445), (520, 460)]),
                    (B, 5, [(580, 200), (600, 240)])],
                   [(B, 5, [(230, 120), (300, 120)]), (B, 5, [(610, 140), (680, 150)]),
                    (B, 5, [(350, 100), (480, 108)]), (B, 5, [(350, 140), (400, 150)]),
                    (B, 5, [(525, 188), (610, 188)]), (B, 5, [(530, 245), (610, 245)]),
                    (B, 5, [(200, 402), (300, 405)]), (B, 5, [(140, 445), (320, 450)]),
                    (B, 3, [(460, 380), (500, 330)]),
                    (F, 5, [(640, 330), (678, 400), (640, 440)]), (F, 5, [(520, 250), (560, 330)]),
                    (F, 5, [(130, 300), (127, 350), (170, 390)]), (F, 3, [(331, 390), (333, 428)]),
                    (F, 5, [(525, 150), (545, 150)]), (F, 5, [(560, 300), (610, 300)]),
                    (F, 5, [(360, 260), (460, 330)]), (F, 5, [(180, 315), (330, 340)]),
                    (F, 5, [(160, 250), (250, 250)]), (F, 3, [(190, 300), (230, 350)]),
                    (B, 5, [(520, 210), (610, 210)]), (B, 7, [(630, 200), (680, 260)]),
                    (B, 5, [(620, 120), (700, 125)]), (B, 5, [(560, 170), (600, 165)]),
                    (B, 5, [(638, 90), (668, 92)])]),
    "coffee": ("skimage:coffee.png", (70, 20, 440, 370),
               [(F, 5, [(230, 150), (370, 150)]), (F, 5, [(160, 300), (400, 320)]),
                (B, 5, [(80, 50), (120, 160)]), (B, 5, [(480, 350), (520, 270)])], []),
}


def source_path(spec):
    pkg, name = spec.split(":")
    site = [p for p in sys.path if p.endswith("site-packages")]
    pattern = {"sklearn": "sklearn/datasets/images/", "matplotlib": "matplotlib/mpl-data/sample_data/",
               "skimage": "skimage/data/"}[pkg] + name
    for s in site:
        hits = glob.glob(os.path.join(s, pattern))
        if hits:
            return hits[0]
    sys.exit("cannot find %s (pip install scikit-image scikit-learn matplotlib)" % spec)


def draw(shape, strokes):
    seeds = np.zeros(shape, np.uint8)
    for label, thick, pts in strokes:
        cv2.polylines(seeds, [np.array(pts, np.int32)], False, int(label), thick)
    return seeds


def band_by_colour(img, rough):
    """Relabel the pixels within BAND of the rough outline by the nearest sure colour."""
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * BAND + 1, 2 * BAND + 1))
    sure_fg = cv2.erode(rough, k) > 0
    sure_bg = cv2.dilate(rough, k) == 0
    truth = sure_fg.astype(np.uint8)
    band = ~(sure_fg | sure_bg)
    h, w = rough.shape
    f = img.astype(np.int32)
    r = 10
    for y, x in zip(*np.nonzero(band)):
        y0, y1, x0, x1 = max(0, y - r), min(h, y + r + 1), max(0, x - r), min(w, x + r + 1)
        win = f[y0:y1, x0:x1]
        d = ((win - f[y, x]) ** 2).sum(axis=2)
        df = d[sure_fg[y0:y1, x0:x1]]
        db = d[sure_bg[y0:y1, x0:x1]]
        bf = df.min() if df.size else 1 << 30
        bb = db.min() if db.size else 1 << 30
        truth[y, x] = 1 if bf < bb else 0
    return truth


def main():
    out = sys.argv[1]
    rough_gcut = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--rough" else None
    os.makedirs(out, exist_ok=True)
    for name, (spec, box, strokes, extra) in PHOTOS.items():
        img = cv2.imread(source_path(spec), cv2.IMREAD_COLOR)
        p = os.path.join(out, name)
        cv2.imwrite(p + ".png", img)
        if rough_gcut is None:
            # The frozen set (bench/grabcut_data, made once by --rough and checked by eye).
            for suffix in ("-box.txt", "-strokes.png", "-trimap.png", "-truth.png"):
                shutil.copyfile(os.path.join(DATA, name + suffix), p + suffix)
            continue
        with open(p + "-box.txt", "w") as f:
            f.write("%d,%d,%d,%d\n" % box)
        cv2.imwrite(p + "-strokes.png", draw(img.shape[:2], strokes))
        cv2.imwrite(p + "-dense.png", draw(img.shape[:2], strokes + extra))
        subprocess.run([rough_gcut, "segment", p + ".png", "--rect", "%d,%d,%d,%d" % box,
                        "--seeds", p + "-dense.png", "--iterations", "10", "-o",
                        p + "-rough.png"], check=True, stdout=subprocess.DEVNULL)
        rough = (cv2.imread(p + "-rough.png", cv2.IMREAD_GRAYSCALE) > 0).astype(np.uint8)
        truth = band_by_colour(img, rough)
        cv2.imwrite(p + "-truth.png", truth * 255)
        # A lasso trimap as a user draws one loosely around the outline: background beyond
        # TRIMAP pixels outside the object, foreground deeper than TRIMAP inside, the band
        # between unknown (the protocol of the GrabCut data set's lasso trimaps, both sides).
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * TRIMAP + 1, 2 * TRIMAP + 1))
        trimap = np.zeros(truth.shape, np.uint8)
        trimap[cv2.dilate(truth, k) == 0] = B
        trimap[cv2.erode(truth, k) > 0] = F
        cv2.imwrite(p + "-trimap.png", trimap)
        ov = img.copy()
        ov[truth > 0] = (ov[truth > 0] * 0.5 + np.array([0, 0, 255]) * 0.5).astype(np.uint8)
        edge = cv2.morphologyEx(truth, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
        ov[edge] = (0, 255, 255)
        cv2.imwrite(p + "-truth-overlay.png", ov)
        print(name, img.shape, "truth foreground %.1f%%" % (100 * truth.mean()))


if __name__ == "__main__":
    main()
