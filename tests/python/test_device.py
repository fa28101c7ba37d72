# test_device.py - gcut.device_init and gcut.release_device_cache (docs/CUDA-GRID.md,
# "Segmentation end to end"): arguments checked, CUDA started on request where a GPU is usable
# and refused with a GcutError where not, and GPU segmentation giving bk's mask and flow before
# and after its kept buffers are released (the cache must never change an answer).
from pathlib import Path

import numpy as np
import pytest

import gcut

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _gpu():
    return any(s["name"] == "cuda-grid" and s["available"] for s in gcut.solvers())


def test_device_init_arguments():
    for bad in ("0", 1.0, True, None):
        with pytest.raises(TypeError):
            gcut.device_init(bad)
    with pytest.raises(ValueError):
        gcut.device_init(2**40)
    # A device that cannot exist: no CUDA, no device, or out of range; all a GcutError.
    with pytest.raises(gcut.GcutError):
        gcut.device_init(999)
    with pytest.raises(gcut.GcutError):
        gcut.device_init(-1)


def test_device_init():
    if _gpu():
        gcut.device_init(0)
        gcut.device_init()  # again: at once
    else:
        with pytest.raises(gcut.GcutError):
            gcut.device_init(0)


def test_release_device_cache_keeps_answers():
    img = gcut.read_image(EXAMPLES / "coffee.png")
    seeds = gcut.read_image(EXAMPLES / "coffee-seeds.png")
    want, ref = gcut.segment(img, seeds, iterations=1, solver="bk", return_report=True)
    solver = "cuda-grid" if _gpu() else "bk"
    gcut.release_device_cache()  # with nothing kept: a no-op
    for step in range(3):
        got, rep = gcut.segment(img, seeds, iterations=1, solver=solver, return_report=True)
        assert np.array_equal(got, want), step
        assert rep["flow"] == ref["flow"], step
        if step == 1:
            gcut.release_device_cache()
    gcut.release_device_cache()
