# test_readme.py - the README's Python example runs as written (in a scratch folder that sees
# the bundled examples), prints the flow and writes a 0/255 mask that equals gcut.segment's.
import contextlib
import io
import os
import re
from pathlib import Path

import numpy as np

import gcut

ROOT = Path(__file__).resolve().parents[2]


def test_readme_python_example(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    os.symlink(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    flow = int(re.search(r"flow (\d+)", out.getvalue()).group(1))
    mask = gcut.read_image(tmp_path / "coffee-mask.png")
    assert set(np.unique(mask)) <= {0, 255} and flow > 0
    img = gcut.read_image(ROOT / "examples/coffee.png")
    seeds = gcut.read_image(ROOT / "examples/coffee-seeds.png")
    ref, report = gcut.segment(img, seeds, return_report=True)
    assert report["flow"] == flow and np.array_equal(mask > 0, ref)
