#!/usr/bin/env python3
"""Regenerate the bundled example pictures and their scribble masks.

The photographs come from scikit-image's data folder (licences in examples/README.md); the
scribbles are drawn here, as strokes of pure red (foreground) and pure blue (background) on a
transparent canvas (`gcut segment --seed-encoding color`), or as gcut seed codes 0/1/2 for the
gray example (`--seed-encoding gcut`, the default). Needs scikit-image and Pillow:

    pip install scikit-image pillow
    python3 examples/make_seg_examples.py
"""
import os

import numpy as np
import skimage.data
from PIL import Image, ImageDraw

HERE = os.path.dirname(os.path.abspath(__file__))
RED = (255, 0, 0, 255)
BLUE = (0, 0, 255, 255)

# Strokes per picture: (colour, width, [points...]) in the saved picture's pixel coordinates.
SCRIBBLES = {
    "coffee": [
        # cup: crema, cup wall, handle; saucer rim all round; spoon
        (RED, 6, [(175, 105), (215, 95), (265, 110)]),
        (RED, 6, [(145, 85), (170, 45), (230, 30), (285, 55), (295, 85)]),
        (RED, 4, [(302, 62), (308, 80)]),
        (RED, 6, [(150, 150), (200, 175), (260, 170), (290, 140)]),
        (RED, 5, [(160, 200), (168, 215)]),
        (RED, 6, [(80, 190), (100, 235), (150, 262), (215, 272), (290, 262), (335, 230),
                  (345, 180), (320, 120)]),
        (RED, 5, [(255, 215), (285, 205)]),
        # table all round, and the dark corner
        (BLUE, 8, [(10, 60), (60, 30), (120, 15)]),
        (BLUE, 8, [(330, 15), (400, 40), (440, 90)]),
        (BLUE, 8, [(380, 130), (420, 200), (430, 280)]),
        (BLUE, 8, [(40, 290), (200, 295), (380, 292)]),
        (BLUE, 8, [(15, 110), (25, 200), (35, 270)]),
        (BLUE, 6, [(10, 10), (40, 15)]),
    ],
    "chelsea": [
        # the cat: forehead, eyes' row, nose and muzzle, cheeks, the left flank
        (RED, 6, [(110, 60), (200, 40), (300, 50)]),
        (RED, 6, [(120, 150), (230, 150), (290, 170)]),
        (RED, 6, [(250, 190), (262, 240), (230, 280)]),
        (RED, 6, [(60, 120), (50, 200), (80, 280), (180, 290)]),
        (RED, 6, [(330, 190), (320, 260)]),
        # the room behind it, on the right
        (BLUE, 8, [(425, 70), (435, 180), (440, 290)]),
        (BLUE, 6, [(395, 130), (400, 200)]),
        (BLUE, 6, [(410, 5), (445, 5)]),
    ],
}

# The gray example's seeds as gcut codes: 1 foreground (the man), 2 background.
CAMERA_STROKES = [
    (1, 10, [(60, 300), (110, 200), (160, 130)]),
    (1, 10, [(40, 450), (70, 380), (120, 300)]),
    (1, 8, [(200, 100), (230, 130)]),
    (1, 8, [(190, 230), (240, 270)]),
    (2, 12, [(20, 40), (250, 30), (500, 60)]),
    (2, 12, [(350, 120), (500, 110)]),
    (2, 12, [(350, 300), (480, 350), (460, 480)]),
    (2, 10, [(180, 480), (200, 400)]),
]


def draw(size, strokes, mode, background):
    canvas = Image.new(mode, size, background)
    pen = ImageDraw.Draw(canvas)
    for colour, width, points in strokes:
        pen.line(points, fill=colour, width=width, joint="curve")
    return canvas


def main():
    coffee = Image.fromarray(skimage.data.coffee()).resize((450, 300), Image.LANCZOS)
    chelsea = Image.fromarray(skimage.data.chelsea())
    camera = Image.fromarray(skimage.data.camera())
    for name, picture in (("coffee", coffee), ("chelsea", chelsea)):
        picture.save(os.path.join(HERE, name + ".png"), optimize=True)
        mask = draw(picture.size, SCRIBBLES[name], "RGBA", (0, 0, 0, 0))
        mask.save(os.path.join(HERE, name + "-scribbles.png"), optimize=True)
    # The same coffee strokes as gcut codes, for the default encoding (the README's command).
    rgba = np.asarray(draw(coffee.size, SCRIBBLES["coffee"], "RGBA", (0, 0, 0, 0)))
    codes = np.zeros(rgba.shape[:2], np.uint8)
    codes[(rgba[..., 3] > 0) & (rgba[..., 0] == 255)] = 1
    codes[(rgba[..., 3] > 0) & (rgba[..., 2] == 255)] = 2
    Image.fromarray(codes).save(os.path.join(HERE, "coffee-seeds.png"), optimize=True)
    camera.save(os.path.join(HERE, "camera.png"), optimize=True)
    seeds = draw(camera.size, CAMERA_STROKES, "L", 0)
    assert set(np.unique(np.asarray(seeds))) <= {0, 1, 2}
    seeds.save(os.path.join(HERE, "camera-seeds.png"), optimize=True)


if __name__ == "__main__":
    main()
