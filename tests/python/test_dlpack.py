# test_dlpack.py - device arrays through DLPack (GridContext.solve / grid_maxflow with CUDA
# arrays, gcut_grid_context_solve_device). On any machine: every error path, with DLPack
# producers over host memory that claim a CUDA device (nothing is dereferenced: each case is
# refused before the device would be touched), and the stream / capsule-version handling. With
# a CUDA GPU and a cuda-grid build: solves of device memory from libcudart (ctypes; no CuPy or
# PyTorch needed) equal to bk on the host with the cut certificate recomputed here, warm
# re-solves, caller-given streams, and CuPy / PyTorch when installed. Also runs without pytest:
# `python test_dlpack.py` (tests/python/device_dlpack.sh does that on the GPU machine).
import os
import sys

import numpy as np

import gcut
from dlpack_util import CudaArray, DLPackArray, check, fake_device, load_cudart

try:
    import pytest

    skip = pytest.skip
except ImportError:  # the GPU machine's plain-python run
    pytest = None

    class Skipped(Exception):
        pass

    def skip(msg):
        raise Skipped(msg)


OFFSETS = {
    (2, 4): [(0, 1), (0, -1), (1, 0), (-1, 0)],
    (2, 8): [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, -1), (1, -1), (-1, 1)],
    (3, 6): [(0, 0, 1), (0, 0, -1), (0, 1, 0), (0, -1, 0), (1, 0, 0), (-1, 0, 0)],
}


def cut_value(source, sink, w, sink_side, conn):
    """Capacity of the cut with this sink side (the certificate), from the arrays alone."""
    t = np.asarray(sink_side).astype(bool)
    val = int(source[t].sum(dtype=np.int64)) + int(sink[~t].sum(dtype=np.int64))
    shape = source.shape
    for d, off in enumerate(OFFSETS[(len(shape), conn)]):
        src, dst = [], []
        for o, n in zip(off, shape):
            src.append(slice(max(0, -o), n - max(0, o)))
            dst.append(slice(max(0, o), n - max(0, -o)))
        src, dst = tuple(src), tuple(dst)
        cut = ~t[src] & t[dst]
        val += int(w[d][src][cut].sum(dtype=np.int64))
    return val


def problem(rng, shape, conn):
    source = rng.integers(0, 60, size=shape).astype(np.int32)
    sink = rng.integers(0, 60, size=shape).astype(np.int32)
    w = rng.integers(0, 25, size=(conn,) + shape).astype(np.int32)
    return source, sink, w


def seeded_rng(extra):
    seed = int(os.environ.get("GCUT_TEST_SEED", "20261123"))
    return np.random.default_rng([seed, extra])


# ---- on any machine: the error paths ----

def bk_context(shape=(3, 4), conn=4):
    return gcut.GridContext(shape, conn, solver="bk")


def arrays(shape=(3, 4), conn=4):
    s = np.ones(shape, np.int32)
    return s, s.copy(), np.ones((conn,) + shape, np.int32), np.zeros(shape, np.uint8)


def expect(exc, pattern, fn, *args, **kw):
    import re

    try:
        fn(*args, **kw)
    except exc as e:
        assert re.search(pattern, str(e)), f"{type(e).__name__}: {e!r} does not match {pattern!r}"
        return
    except Exception as e:  # noqa: BLE001 - a wrong exception type is a failure
        raise AssertionError(f"expected {exc.__name__} matching {pattern!r}, got "
                             f"{type(e).__name__}: {e}") from e
    raise AssertionError(f"expected {exc.__name__} matching {pattern!r}, nothing raised")


def test_device_arrays_need_a_cuda_grid_context():
    s, t, w, lab = arrays()
    ctx = bk_context()
    dev = [fake_device(a) for a in (s, t, w)]
    expect(TypeError, r"solver='cuda-grid'.*'bk'", ctx.solve, *dev, labels=fake_device(lab))
    expect(TypeError, "sink is a host array", ctx.solve, dev[0], t, dev[2])
    expect(TypeError, "weights is missing", ctx.solve, dev[0], dev[1])
    expect(TypeError, "DLPack device type 1", ctx.solve, dev[0], fake_device(t, device=(1, 0)),
           dev[2])
    expect(TypeError, "changed= is for host arrays", ctx.solve, *dev, changed=[0])
    expect(TypeError, "changed_terminals= is for host arrays", ctx.solve, *dev,
           changed_terminals=[0])
    expect(TypeError, "labels must be a CUDA array", ctx.solve, *dev, labels=lab)
    expect(ValueError, "on CUDA device 1; this GridContext runs on device 0", ctx.solve, dev[0],
           fake_device(t, device=(2, 1)), dev[2])
    # grid_maxflow routes CUDA arrays to a cuda-grid context: refused where it cannot run.
    if not any(x["name"] == "cuda-grid" and x["available"] for x in gcut.solvers()):
        expect((ValueError, gcut.GcutError), "cuda-grid", gcut.grid_maxflow, *dev)
    expect(TypeError, "scale= is for host arrays", gcut.grid_maxflow, *dev, scale=2.0)
    expect(TypeError, "labels= is for CUDA arrays", gcut.grid_maxflow, s, t, w, labels=lab)
    # Host-only entry points name the argument and point to the device entries.
    expect(TypeError, r"image is a device array.*cuda-grid", gcut.segment,
           fake_device(np.zeros((4, 4), np.uint8)), np.zeros((4, 4), np.uint8))
    expect(TypeError, "caps_source is a device array", gcut.Graph().add_tedges, [0],
           fake_device(np.ones(1, np.int32)), [0])
    expect(ValueError, "device must be a CUDA device ordinal", gcut.GridContext, (3, 3),
           solver="bk", device=-1)


def test_capsule_checks_in_c():
    """The C layer's checks of each capsule (dtype, shape, strides, device, version, read-only
    labels), reached through the private entry on a bk context: every bad capsule is refused
    naming the argument; good ones reach the library, which refuses bk for device arrays."""
    s, t, w, lab = arrays()
    ctx = bk_context()

    def run(src=None, snk=None, wts=None, labels=None, device=0, versioned=True):
        objs = [fake_device(a) for a in (s, t, w)]
        for k, o in enumerate((src, snk, wts)):
            if o is not None:
                objs[k] = o
        lo = fake_device(lab) if labels is None else labels
        mv = (1, 0) if versioned else None
        caps = [o.__dlpack__(stream=1, max_version=mv) for o in objs]
        lc = None if labels is False else lo.__dlpack__(stream=1, max_version=mv)
        return ctx._solve_device_c(caps[0], caps[1], caps[2], lc, 0, device)

    expect(TypeError, r"source must have dtype int32.*code 0 with 64 bits",
           run, src=fake_device(s.astype(np.int64)))
    expect(TypeError, r"sink must have dtype int32.*code 2",
           run, snk=fake_device(t.astype(np.float32)))
    expect(ValueError, "sink has size 3 on axis 1, the grid needs 4",
           run, snk=fake_device(np.ones((3, 3), np.int32)))
    expect(ValueError, "weights must have 3 dimensions, got 2",
           run, wts=fake_device(np.ones((4, 12), np.int32)))
    expect(ValueError, "weights has size 8 on axis 0",
           run, wts=fake_device(np.ones((8, 3, 4), np.int32)))
    expect(ValueError, r"source must be C-contiguous \(axis 1 has stride 3",
           run, src=DLPackArray(s.ctypes.data, (3, 4), np.int32, strides=(1, 3)))
    expect(ValueError, "source is on CUDA device 2, not device 0",
           run, src=fake_device(s, device=(2, 2)))
    expect(ValueError, "source is on CUDA device 0, not device 3", run, device=3)
    expect(TypeError, "DLPack version 2.0 is not supported",
           run, wts=fake_device(w, version=(2, 0)))
    expect(ValueError, "labels is read-only", run, labels=fake_device(lab, readonly=True))
    expect(TypeError, r"labels must have dtype uint8 or bool",
           run, labels=fake_device(lab.astype(np.int32)))
    expect(TypeError, "source is not a CUDA device array .DLPack device type 1",
           run, src=fake_device(s, device=(1, 0)))
    expect(TypeError, "did not return an unused DLPack capsule",
           ctx._solve_device_c, object(), None, None, None, 0, 0)
    # weights as one array per direction: each checked, named by its index.
    per_dir = [fake_device(np.ascontiguousarray(w[d])) for d in range(4)]
    caps = [fake_device(a).__dlpack__(stream=1, max_version=(1, 0)) for a in (s, t, lab)]
    wc = tuple(o.__dlpack__(stream=1, max_version=(1, 0)) for o in per_dir)
    expect(gcut.GcutError, "cuda-grid", ctx._solve_device_c, caps[0], caps[1], wc, caps[2], 0, 0)
    expect(ValueError, "weights: 3 arrays given, the grid has 4 directions",
           ctx._solve_device_c, caps[0], caps[1], wc[:3], caps[2], 0, 0)
    bad = wc[:2] + (fake_device(np.ones((3, 5), np.int32)).__dlpack__(stream=1),) + wc[3:]
    expect(ValueError, r"weights\[2\] has size 5 on axis 1",
           ctx._solve_device_c, caps[0], caps[1], bad, caps[2], 0, 0)
    expect(ValueError, "weights: 3 arrays given", bk_context().solve,
           fake_device(s), fake_device(t), per_dir[:3], labels=fake_device(lab))
    expect(TypeError, r"weights\[1\] is a host array", bk_context().solve,
           fake_device(s), fake_device(t), [per_dir[0], w[1], per_dir[2], per_dir[3]])
    # Every check passed: the library itself refuses a bk context (no device access).
    for versioned in (True, False):
        expect(gcut.GcutError, "cuda-grid", run, versioned=versioned)
        expect(gcut.GcutError, "cuda-grid", run, labels=fake_device(lab.astype(bool)),
               versioned=versioned)
        expect(gcut.GcutError, "cuda-grid", run, labels=False, versioned=versioned)


def test_stream_and_capsule_versions():
    assert gcut._dl_stream(None) == (1, 0)  # legacy default stream: NULL for the library
    assert gcut._dl_stream(1) == (1, 0)
    assert gcut._dl_stream(2) == (2, 2)
    assert gcut._dl_stream(0x7F00AA) == (0x7F00AA, 0x7F00AA)

    class CupyLike:
        ptr = 12345

    class TorchLike:
        cuda_stream = 777

    assert gcut._dl_stream(CupyLike()) == (12345, 12345)
    assert gcut._dl_stream(TorchLike()) == (777, 777)
    expect(ValueError, "stream must be a CUDA stream handle", gcut._dl_stream, 0)
    expect(ValueError, "stream must be a CUDA stream handle", gcut._dl_stream, -1)
    expect(TypeError, "stream must be None", gcut._dl_stream, "s")
    a = np.ones(3, np.int32)
    new = fake_device(a)
    old = fake_device(a, unversioned_only=True)
    cap = gcut._dl_capsule(new, 5)
    assert "dltensor_versioned" in repr(cap) and new.streams == [5]
    cap = gcut._dl_capsule(old, 7)
    assert '"dltensor"' in repr(cap) and old.streams == [7]


# ---- with a GPU: real device memory ----

def gpu():
    if not any(x["name"] == "cuda-grid" and x["available"] for x in gcut.solvers()):
        skip("no usable cuda-grid solver in this build / on this machine")
    cudart = load_cudart()
    if cudart is None:
        skip("libcudart with a device not found (ctypes)")
    return cudart


def test_gpu_device_solves_equal_host():
    cudart = gpu()
    rng = seeded_rng(1)
    for shape, conn in (((40, 57), 4), ((33, 48), 8), ((9, 14, 11), 6), ((300, 400), 4)):
        source, sink, w = problem(rng, shape, conn)
        ref = gcut.grid_maxflow(source, sink, w, connectivity=conn, solver="bk")
        ctx = gcut.GridContext(shape, conn, solver="cuda-grid")
        d = [CudaArray(cudart, a) for a in (source, sink, w)]
        lab = CudaArray(cudart, shape=shape, dtype=np.uint8)
        res = ctx.solve(*d, labels=lab)
        assert res.labels is lab and res.solver == "cuda-grid"
        got = lab.get()
        assert res.flow == ref.flow, (shape, conn, res.flow, ref.flow)
        assert set(np.unique(got)) <= {0, 1}
        assert cut_value(source, sink, w, got, conn) == res.flow
        # Warm re-solves from changed device arrays equal fresh host solves.
        for step in range(3):
            idx = rng.integers(0, source.size, size=max(1, source.size // 50))
            source.reshape(-1)[idx] = rng.integers(0, 60, size=idx.size)
            sink.reshape(-1)[idx] = rng.integers(0, 60, size=idx.size)
            w[step % conn].reshape(-1)[idx] = rng.integers(0, 25, size=idx.size)
            d = [CudaArray(cudart, a) for a in (source, sink, w)]
            res = ctx.solve(*d, labels=lab)
            fresh = gcut.grid_maxflow(source, sink, w, connectivity=conn, solver="bk")
            assert res.flow == fresh.flow, (shape, conn, step)
            assert cut_value(source, sink, w, lab.get(), conn) == res.flow
        assert ctx.info["solves"] == 4 and ctx.info["warm_solves"] >= 1


def test_gpu_grid_maxflow_streams_and_versions():
    cudart = gpu()
    rng = seeded_rng(2)
    shape, conn = (64, 80), 4
    source, sink, w = problem(rng, shape, conn)
    ref = gcut.grid_maxflow(source, sink, w, solver="bk").flow
    import ctypes

    stream = ctypes.c_void_p()
    check(cudart, cudart.cudaStreamCreate(ctypes.byref(stream)), "cudaStreamCreate")
    try:
        for unversioned in (False, True):
            for strm in (None, stream.value, 2):
                d = [CudaArray(cudart, a) for a in (source, sink, w)]
                for x in d:
                    x.unversioned_only = unversioned
                lab = CudaArray(cudart, shape=shape, dtype=np.bool_)
                res = gcut.grid_maxflow(*d, labels=lab, stream=strm)
                check(cudart, cudart.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
                assert res.flow == ref
                assert cut_value(source, sink, w, lab.get(), conn) == ref
                assert d[0].streams == [1 if strm is None else strm]
        # weights as one device array per direction.
        d = [CudaArray(cudart, a) for a in (source, sink)]
        wd = [CudaArray(cudart, np.ascontiguousarray(w[k])) for k in range(conn)]
        lab = CudaArray(cudart, shape=shape, dtype=np.uint8)
        res = gcut.grid_maxflow(d[0], d[1], wd, labels=lab)
        assert res.flow == ref and cut_value(source, sink, w, lab.get(), conn) == ref
        # Without labels= and without CuPy / PyTorch inputs: a clear error, nothing solved.
        d = [CudaArray(cudart, a) for a in (source, sink, w)]
        expect(TypeError, "labels=: pass a uint8 or bool CUDA array", gcut.grid_maxflow, *d)
    finally:
        cudart.cudaStreamDestroy(stream)


def test_gpu_cupy_and_torch():
    gpu()
    rng = seeded_rng(3)
    shape = (50, 70)
    source, sink, w = problem(rng, shape, 4)
    ref = gcut.grid_maxflow(source, sink, w, solver="bk").flow
    ran = []
    try:
        import cupy

        d = [cupy.asarray(a) for a in (source, sink, w)]
        res = gcut.grid_maxflow(*d)
        assert isinstance(res.labels, cupy.ndarray) and res.labels.dtype == cupy.bool_
        assert res.flow == ref and cut_value(source, sink, w, res.labels.get(), 4) == ref
        ran.append("cupy")
    except ImportError:
        pass
    try:
        import torch

        d = [torch.from_numpy(a).cuda() for a in (source, sink, w)]
        res = gcut.grid_maxflow(*d)
        assert res.labels.is_cuda and res.flow == ref
        assert cut_value(source, sink, w, res.labels.cpu().numpy(), 4) == ref
        ran.append("torch")
    except ImportError:
        pass
    if not ran:
        skip("neither CuPy nor PyTorch is installed")


if __name__ == "__main__":
    # Plain runner (no pytest needed): every test_* function; exit 1 on a failure. With
    # GCUT_REQUIRE_GPU=1 (tests/python/device_dlpack.sh) a GPU test that skips for want of a
    # GPU or of cuda-grid is a failure too (CuPy / PyTorch may be missing).
    import traceback

    failed = 0
    need_gpu = os.environ.get("GCUT_REQUIRE_GPU") == "1"
    for name, fn in list(globals().items()):
        if not name.startswith("test_") or not callable(fn):
            continue
        try:
            fn()
            print(f"PASS {name}")
        except BaseException as e:  # noqa: BLE001 - pytest's Skipped is a BaseException
            if isinstance(e, KeyboardInterrupt):
                raise
            if "Skip" in type(e).__name__:
                bad = need_gpu and "CuPy" not in str(e)
                failed += bad
                print(f"{'FAIL (GCUT_REQUIRE_GPU=1)' if bad else 'SKIP'} {name}: {e}")
            else:
                failed += 1
                print(f"FAIL {name}: {type(e).__name__}: {e}")
                traceback.print_exc()
    print(f"gcut test seed: {os.environ.get('GCUT_TEST_SEED', '20261123')}")
    sys.exit(1 if failed else 0)
