# test_segment_io.py - gcut.segment and the image I/O against the C library's CLI on the
# bundled photographs (the CLI writes its mask, the package computes its own: equal), and the
# segmentation's own certificate (seeds keep their labels, the flow is the cut).
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import gcut

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_read_write_roundtrip(tmp_path, rng):
    for shape, dtype in (((7, 9), np.uint8), ((5, 4, 3), np.uint8), ((6, 5, 4), np.uint16),
                         ((3, 8, 2), np.uint16)):
        img = rng.integers(0, np.iinfo(dtype).max, size=shape, endpoint=True).astype(dtype)
        path = tmp_path / "x.png"
        gcut.write_png(path, img)
        back = gcut.read_image(path)
        assert back.dtype == dtype and np.array_equal(back, img)
    mask = rng.random((6, 6)) < 0.5
    gcut.write_image(tmp_path / "m.pgm", mask)
    assert np.array_equal(gcut.read_image(tmp_path / "m.pgm"), mask.astype(np.uint8) * 255)


def test_segment_coffee_certificate():
    img = gcut.read_image(EXAMPLES / "coffee.png")
    seeds = gcut.read_image(EXAMPLES / "coffee-seeds.png")
    assert img.shape[:2] == seeds.shape and img.ndim == 3
    mask, report = gcut.segment(img, seeds, lambda_=50, iterations=1, return_report=True)
    assert mask.dtype == bool and mask.shape == seeds.shape
    assert np.all(mask[seeds == 1]) and not np.any(mask[seeds == 2])
    assert report["flow"] > 0 and report["scale"] > 0
    assert report["foreground_pixels"] == int(mask.sum())
    assert report["connectivity"] == 8


def cli_path():
    path = os.environ.get("GCUT_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("GCUT_CLI (the gcut binary of a C build) not set: C-library comparison skipped")
    return path


@pytest.mark.parametrize("options", [[], ["--lambda", "20", "--connectivity", "4"],
                                     ["--model", "hist", "--bins", "16", "--solver", "bk"]])
def test_segment_equal_to_cli(tmp_path, options):
    cli = cli_path()
    out = tmp_path / "mask.png"
    subprocess.run([cli, "segment", str(EXAMPLES / "coffee.png"), "--seeds",
                    str(EXAMPLES / "coffee-seeds.png"), "-o", str(out), "--iterations", "1"]
                   + options, check=True, capture_output=True)
    kw = {}
    it = iter(options)
    for flag, value in zip(it, it):
        name = flag[2:]
        kw[{"lambda": "lambda_"}.get(name, name)] = (
            value if name in ("model", "solver") else float(value) if name == "lambda"
            else int(value))
    img = gcut.read_image(EXAMPLES / "coffee.png")
    seeds = gcut.read_image(EXAMPLES / "coffee-seeds.png")
    mask = gcut.segment(img, seeds, iterations=1, **kw)
    assert np.array_equal(gcut.read_image(out) > 0, mask)


def test_segment_colour_scribbles_and_gray():
    img = gcut.read_image(EXAMPLES / "coffee.png")
    scrib = gcut.read_image(EXAMPLES / "coffee-scribbles.png")
    m1 = gcut.segment(img, scrib, seed_encoding="color", iterations=1)
    m2 = gcut.segment(img, gcut.read_image(EXAMPLES / "coffee-seeds.png"), iterations=1)
    assert m1.shape == m2.shape
    # Same strokes in two encodings: the same energy, the same exact cut.
    assert np.array_equal(m1, m2)
    cam = gcut.read_image(EXAMPLES / "camera.png")
    mask = gcut.segment(cam, gcut.read_image(EXAMPLES / "camera-seeds.png"), connectivity=4,
                        iterations=1)
    assert mask.shape == cam.shape[:2] and 0 < mask.sum() < mask.size


def test_segment_volume(rng):
    vol = rng.integers(0, 60, size=(6, 10, 12)).astype(np.uint8)
    vol[2:5, 3:8, 4:10] += 150
    seeds = np.zeros(vol.shape, dtype=np.uint8)
    seeds[3, 5, 6] = 1
    seeds[0, 0, 0] = 2
    mask = gcut.segment(vol, seeds, volume=True, model="hist", iterations=1)
    assert mask.shape == vol.shape and mask[3, 5, 6] and not mask[0, 0, 0]


def test_grabcut_rounds_rect_and_one_cut(tmp_path):
    # The default is the CLI's: GrabCut rounds; iterations=1 is one cut.
    cli = os.environ.get("GCUT_CLI")
    img = gcut.read_image(EXAMPLES / "coffee.png")
    seeds = gcut.read_image(EXAMPLES / "coffee-seeds.png")
    many, report = gcut.segment(img, seeds, return_report=True)
    assert np.all(many[seeds == 1]) and not np.any(many[seeds == 2])
    assert report["foreground_pixels"] == int(many.sum())
    h, w = seeds.shape
    boxed = gcut.segment(img, None, rect=(w // 4, h // 4, w // 2, h // 2), iterations=2)
    assert not boxed[: h // 4].any() and not boxed[:, : w // 4].any()  # outside the box: bg
    with pytest.raises(ValueError, match="rect"):
        gcut.segment(img, None)
    with pytest.raises(ValueError, match="iterations"):
        gcut.segment(img, seeds, iterations=-1)
    if cli and os.path.exists(cli):
        out = tmp_path / "m.png"
        subprocess.run([cli, "segment", str(EXAMPLES / "coffee.png"), "--seeds",
                        str(EXAMPLES / "coffee-seeds.png"), "-o", str(out)],
                       check=True, capture_output=True)
        assert np.array_equal(gcut.read_image(out) > 0, many)


def test_grabcut_equals_segment_with_rect():
    # gcut.grabcut is segment's box form: the same mask from both calls, and no input refused.
    img = gcut.read_image(EXAMPLES / "coffee.png")
    h, w = img.shape[:2]
    rect = (w // 5, h // 6, 3 * w // 5, 2 * h // 3)
    mask = gcut.grabcut(img, rect=rect, iterations=3)
    same = gcut.segment(img, None, rect=rect, iterations=3)
    assert np.array_equal(mask, same)
    x, y, bw, bh = rect
    outside = np.ones((h, w), bool)
    outside[y : y + bh, x : x + bw] = False
    assert not mask[outside].any() and mask.any()
    with pytest.raises(ValueError, match="rect, seeds"):
        gcut.grabcut(img)
