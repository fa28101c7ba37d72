# test_video.py - gcut.Video / gcut.segment_video (the C library's gcut_video_*) against the
# CLI: a clip made by `gcut gen video` is segmented by `gcut video` and by the package with the
# same options, and the masks must be equal pixel for pixel, frame by frame; array, iterator
# and per-frame inputs agree; every error path.
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import gcut


def cli_path():
    path = os.environ.get("GCUT_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("GCUT_CLI (the gcut binary of a C build) not set: CLI comparison skipped")
    return path


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    cli = cli_path()
    root = tmp_path_factory.mktemp("clip")
    subprocess.run([cli, "gen", "video", "--size", "120x80", "--frames", "12", "--seed", "5",
                    "-o", str(root / "frames"), "--truth", str(root / "truth")], check=True,
                   capture_output=True)
    frames = np.stack([gcut.read_image(p) for p in sorted((root / "frames").glob("*.png"))])
    truth0 = gcut.read_image(sorted((root / "truth").glob("*.png"))[0]) != 0
    return root, frames, truth0


def cli_masks(clip, name, init_path, args):
    root, frames, _ = clip
    out = root / name
    subprocess.run([cli_path(), "video", str(root / "frames"), "--init", str(init_path), "-o",
                    str(out), "--quiet", *args], check=True, capture_output=True)
    masks = [gcut.read_image(p) != 0 for p in sorted(out.glob("mask_*.png"))]
    assert len(masks) == len(frames)
    return masks


def seeds_from_truth(t, margin=4):
    """gcut seed codes: 1 deep inside the object, 2 far outside, 0 in between."""
    inside, outside = t.copy(), ~t
    for axis in (0, 1):
        for shift in range(-margin, margin + 1):
            inside &= np.roll(t, shift, axis=axis)
            outside &= ~np.roll(t, shift, axis=axis)
    return np.where(inside, 1, np.where(outside, 2, 0)).astype(np.uint8)


CASES = [
    ("default", [], {}),
    ("options", ["--lambda", "30", "--connectivity", "4", "--forget", "0.3", "--band-min", "2",
                 "--band-motion", "2", "--band-max", "20", "--colour-reach", "2", "--bins", "16"],
     dict(lambda_=30, connectivity=4, forget=0.3, band_min=2, band_motion=2, band_max=20,
          colour_reach=2, bins=16)),
    ("full-frame-warm", ["--full-frame", "--warm", "--no-colour-check", "--verify"],
     dict(full_frame=True, warm=True, colour_check=False, verify=True)),
    ("cpu-pr", ["--full-frame", "--solver", "cpu-pr", "--threads", "2", "--sigma", "12"],
     dict(full_frame=True, solver="cpu-pr", threads=2, sigma=12)),
]


@pytest.mark.parametrize("name,args,options", CASES, ids=[c[0] for c in CASES])
def test_masks_equal_cli(clip, name, args, options):
    root, frames, truth0 = clip
    init_path = root / "init.png"
    gcut.write_png(init_path, truth0)
    want = cli_masks(clip, name, init_path, args)
    got = list(gcut.segment_video(frames, init=truth0, **options))
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == bool and a.shape == frames.shape[1:3]
        assert np.array_equal(a, b), f"{name}: frame {k}: {int((a != b).sum())} pixels differ"
    # The object is found at all (not an empty or full mask), so equality means something.
    assert 0 < got[-1].sum() < got[-1].size


def test_seeds_first_frame_equal_cli(clip):
    root, frames, truth0 = clip
    seeds = seeds_from_truth(truth0)
    path = root / "seeds.png"
    gcut.write_png(path, seeds)
    want = cli_masks(clip, "seeds", path, ["--seed-encoding", "gcut"])
    got = list(gcut.segment_video(frames, seeds=seeds, seed_encoding="gcut"))
    for k, (a, b) in enumerate(zip(got, want)):
        assert np.array_equal(a, b), f"frame {k}: {int((a != b).sum())} pixels differ"


def test_array_iterator_and_push_agree(clip):
    _, frames, truth0 = clip
    from_array = list(gcut.segment_video(frames, init=truth0))
    from_iter = list(gcut.segment_video((f for f in frames), init=truth0.astype(np.uint8) * 255))
    v = gcut.Video(frames.shape[1:3])
    pushed = [v.push(frames[0], init=truth0)] + [v.push(f) for f in frames[1:]]
    assert v.frames == len(frames) and v.report["frame"] == len(frames) - 1
    for a, b, c in zip(from_array, from_iter, pushed):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    reports = [r for _, r in gcut.segment_video(frames[:3], init=truth0, return_reports=True)]
    assert [r["frame"] for r in reports] == [0, 1, 2]
    assert all(r["flow"] >= 0 and r["graph_nodes"] >= 0 for r in reports)
    # Restarting from a mask mid-sequence: the frame's mask is then taken as given.
    assert np.array_equal(v.push(frames[3], init=truth0), truth0)


def test_video_errors(clip):
    _, frames, truth0 = clip
    h, w = frames.shape[1:3]
    v = gcut.Video((h, w))
    with pytest.raises(ValueError, match="first frame needs init"):
        v.push(frames[0])
    with pytest.raises(ValueError, match="not both"):
        v.push(frames[0], init=truth0, seeds=truth0.astype(np.uint8))
    with pytest.raises(ValueError, match=r"frame is 80x119 \(HxW\), the video is 80x120"):
        v.push(frames[0][:, :-1], init=truth0)
    with pytest.raises(ValueError, match="init is 79x120"):
        v.push(frames[0], init=truth0[:-1])
    with pytest.raises(TypeError, match="frame must have dtype uint8 or uint16"):
        v.push(frames[0].astype(np.float32), init=truth0)
    with pytest.raises(TypeError, match="init must be a bool or integer mask"):
        v.push(frames[0], init=truth0.astype(np.float64))
    with pytest.raises(TypeError, match="seeds must hold seed codes"):
        v.push(frames[0], seeds=truth0)
    with pytest.raises(ValueError, match="seed_encoding"):
        v.push(frames[0], seeds=truth0.astype(np.uint8), seed_encoding="x")
    with pytest.raises(ValueError, match="channels"):
        v.push(np.zeros((h, w, 5), np.uint8), init=truth0)
    assert v.frames == 0  # nothing above was segmented
    with pytest.raises(ValueError, match="connectivity must be 4 or 8"):
        gcut.Video((h, w), connectivity=6)
    with pytest.raises(ValueError, match="shape must be positive"):
        gcut.Video((0, w))
    with pytest.raises(TypeError, match="shape must be"):
        gcut.Video(5)
    with pytest.raises(ValueError, match="solver 'nope'"):
        gcut.Video((h, w), solver="nope")
    with pytest.raises(ValueError, match="forget"):
        gcut.Video((h, w), forget=float("nan"))
    with pytest.raises(ValueError, match="forget|INVALID|invalid"):
        gcut.Video((h, w), forget=1.5)
    with pytest.raises(ValueError, match=r"frames\[0\] must be"):
        list(gcut.segment_video(np.zeros((2, 3, 4, 5, 6), np.uint8), init=truth0))
    with pytest.raises(ValueError, match="frame is"):
        list(gcut.segment_video([frames[0], frames[1][:-2]], init=truth0))
