# dlpack_util.py - DLPack producers for the tests, written with ctypes against the DLPack ABI
# (https://dmlc.github.io/dlpack/latest/): an object exposing __dlpack__ / __dlpack_device__
# over any pointer (a fake device array on the CPU, for the error paths), and CudaArray, device
# memory from libcudart through ctypes (cudaMalloc / cudaMemcpy), for the GPU test without CuPy
# or PyTorch (tests/python/device_dlpack.sh).
import ctypes
import ctypes.util
import os

import numpy as np


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

_KEEP = []  # the structs behind every capsule made here

DTYPES = {np.dtype(np.int32): (0, 32), np.dtype(np.int64): (0, 64), np.dtype(np.uint8): (1, 8),
          np.dtype(np.bool_): (6, 8), np.dtype(np.float32): (2, 32)}


class DLPackArray:
    """A DLPack producer over ``ptr`` (not owned): ``device`` (type, id), ``shape``, numpy
    ``dtype``, optional ``strides`` (elements), DLPack 1.x capsules when the consumer asks with
    max_version (else unversioned), ``version`` / ``readonly`` for the error paths. Records
    the stream each __dlpack__ call was given (``streams``)."""

    def __init__(self, ptr, shape, dtype, device=(2, 0), strides=None, version=(1, 0),
                 readonly=False, owner=None, unversioned_only=False):
        self.ptr, self.shape, self.dtype = ptr, tuple(shape), np.dtype(dtype)
        self.device, self.strides, self.version = device, strides, version
        self.readonly, self.owner, self.unversioned_only = readonly, owner, unversioned_only
        self.streams = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, **kw):
        if self.unversioned_only and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.streams.append(stream)
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        strides = None
        if self.strides is not None:
            strides = (ctypes.c_int64 * len(self.strides))(*self.strides)
        code, bits = DTYPES[self.dtype]
        t = DLTensor(self.ptr, DLDevice(*self.device), len(self.shape),
                     DLDataType(code, bits, 1), shape,
                     ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)) if strides else None,
                     0)
        if max_version is not None and tuple(max_version) >= (1, 0) and not self.unversioned_only:
            m = DLManagedTensorVersioned(DLPackVersion(*self.version), None, None,
                                         1 if self.readonly else 0, t)
            name = b"dltensor_versioned"
        else:
            m = DLManagedTensor(t, None, None)
            name = b"dltensor"
        # No deleter: the structs are kept for the whole process (a few bytes per capsule),
        # so a capsule stays valid even after this producer object is gone.
        _KEEP.append((shape, strides, m))
        return _capsule_new(ctypes.addressof(m), name, None)


def fake_device(a, **kw):
    """A DLPack object claiming that numpy array a's memory is on CUDA device 0 (for error
    paths that must fail before any device access)."""
    return DLPackArray(a.ctypes.data, a.shape, a.dtype, owner=a, **kw)


# ---- real device memory through libcudart (ctypes) ----

def load_cudart():
    """libcudart through ctypes, or None (searched: $GCUT_CUDART, ldconfig, the CUDA toolkit)."""
    names = [os.environ.get("GCUT_CUDART", "")]
    found = ctypes.util.find_library("cudart")
    names += [found or "", "libcudart.so"]
    for root in ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
                 "/usr/lib/x86_64-linux-gnu"):
        if os.path.isdir(root):
            names += sorted((os.path.join(root, f) for f in os.listdir(root)
                             if f.startswith("libcudart.so")), reverse=True)
    for n in names:
        if not n:
            continue
        try:
            lib = ctypes.CDLL(n)
        except OSError:
            continue
        count = ctypes.c_int(0)
        if lib.cudaGetDeviceCount(ctypes.byref(count)) == 0 and count.value > 0:
            return lib
    return None


class CudaArray(DLPackArray):
    """Device memory from cudaMalloc holding a copy of a numpy array (or zeros), freed with the
    object; .get() copies it back."""

    def __init__(self, cudart, host=None, shape=None, dtype=None):
        self.cudart = cudart
        if host is not None:
            host = np.ascontiguousarray(host)
            shape, dtype = host.shape, host.dtype
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        p = ctypes.c_void_p()
        check(cudart, cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(max(nbytes, 1))),
              "cudaMalloc")
        super().__init__(p.value, shape, dtype, device=(2, 0))
        self.nbytes = nbytes
        if host is not None:
            check(cudart, cudart.cudaMemcpy(ctypes.c_void_p(p.value),
                                            ctypes.c_void_p(host.ctypes.data),
                                            ctypes.c_size_t(nbytes), 1), "cudaMemcpy H2D")
        else:
            check(cudart, cudart.cudaMemset(ctypes.c_void_p(p.value), 0,
                                            ctypes.c_size_t(nbytes)), "cudaMemset")

    def get(self):
        out = np.empty(self.shape, self.dtype)
        check(self.cudart, self.cudart.cudaMemcpy(ctypes.c_void_p(out.ctypes.data),
                                                  ctypes.c_void_p(self.ptr),
                                                  ctypes.c_size_t(self.nbytes), 2),
              "cudaMemcpy D2H")
        return out

    def __del__(self):
        if getattr(self, "ptr", None):
            self.cudart.cudaFree(ctypes.c_void_p(self.ptr))
            self.ptr = None


def check(cudart, rc, what):
    if rc != 0:
        cudart.cudaGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"{what}: CUDA error {rc} ({cudart.cudaGetErrorString(rc).decode()})")
