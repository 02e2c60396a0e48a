"""fake_torch.py: a stand-in for the few parts of torch the blk package uses,
over the stand-in CUDA driver of tests/runtime (build/tests/runtime/fake/
libcuda.so.1), so that the package's GPU path (launch plans, devices,
streams, errors) runs on a machine without a GPU or torch.

    import fake_torch
    torch = fake_torch.install(driver_path, devices=2)   # sys.modules["torch"]
    x = torch.empty(16, device="cuda:1")                  # fake device memory

What it imitates: torch.Tensor (data_ptr, dtype, device, is_cuda,
get_device, is_contiguous, shape, stride, numel, element_size, views by
slicing with a step), dtypes that print as torch's do ("torch.float32"),
torch.cuda (is_available, device_count, current_device, set_device, the
device context manager, current_stream), and torch._C._cuda_getCurrentRawStream.
torch.cuda.device(n) makes device n's primary context current on the
thread, as torch does, so blk_context_create_current borrows it. Nothing is
computed: a launch on the stand-in driver is recorded, not run.
"""

import builtins
import ctypes
import sys
import types


class dtype:
    def __init__(self, name, size, is_floating_point):
        self.name, self.itemsize, self.is_floating_point = name, size, is_floating_point

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__


DTYPES = {n: dtype(n, s, f) for n, s, f in [
    ("float16", 2, True), ("bfloat16", 2, True), ("float32", 4, True), ("float64", 8, True),
    ("int8", 1, False), ("int16", 2, False), ("int32", 4, False), ("int64", 8, False), ("uint8", 1, False),
    ("bool", 1, False)]}


class device:
    """torch.device: type ("cuda", "cpu") and index."""

    def __init__(self, spec, index=None):
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        if isinstance(spec, builtins.int):
            spec, index = "cuda", spec
        t, _, i = str(spec).partition(":")
        self.type = t
        self.index = builtins.int(i) if i else index
        if self.type == "cuda" and self.index is None:
            self.index = _state.current

    def __repr__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    __str__ = __repr__


class Tensor:
    def __init__(self, ptr, shape, strides, dt, dev, base=None):
        self._ptr, self.shape, self._strides, self.dtype, self.device = ptr, tuple(shape), tuple(strides), dt, dev
        self._base = base
        # the methods a launch calls, as builtins (torch's are C: a Python
        # method here would make the launch path look slower than it is)
        self.data_ptr = ptr.__index__
        self.get_device = (dev.index if dev.type == "cuda" else -1).__index__
        self.is_contiguous = self._contiguous().__bool__

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def stride(self):
        return self._strides

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def element_size(self):
        return self.dtype.itemsize

    def _contiguous(self):
        want = 1
        for s, st in zip(reversed(self.shape), reversed(self._strides)):
            if s != 1 and st != want:
                return False
            want *= s
        return True

    def __getitem__(self, sl):
        """1-D slices only: x[a:b:c]."""
        start, stop, step = sl.indices(self.shape[0])
        n = max(0, (stop - start + step - 1) // step)
        return Tensor(self._ptr + start * self._strides[0] * self.dtype.itemsize, (n,),
                      (self._strides[0] * step,), self.dtype, self.device, self._base or self)

    def __repr__(self):
        return f"fake_torch.Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device})"


class _State:
    current = 0
    devices = 1
    cu = None
    keep = []
    streams = {}  # device -> the raw stream torch's current stream is there (0: the default)


_state = _State()


class _DeviceGuard:
    """torch.cuda.device(n): device n current (its primary context current on
    the thread, as torch makes it), the previous one back on exit."""

    def __init__(self, n):
        self.n = n.index if isinstance(n, device) else builtins.int(n)

    def __enter__(self):
        self.prev = _state.current
        set_device(self.n)
        return self

    def __exit__(self, *exc):
        set_device(self.prev)
        return False


def set_device(n):
    if not 0 <= n < _state.devices:
        raise RuntimeError(f"CUDA error: invalid device ordinal {n}")
    ctx = ctypes.c_void_p()
    _check(_state.cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), n), "cuDevicePrimaryCtxRetain")
    _check(_state.cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    _state.current = n


def _check(r, what):
    if r != 0:
        raise RuntimeError(f"fake_torch: {what} returned {r}")


class _Stream:
    def __init__(self, dev):
        self.device = dev
        self.cuda_stream = 0

    def synchronize(self):
        pass


def empty(*shape, dtype=None, device="cuda"):
    """Fake device memory from the stand-in driver (cuMemAlloc), or host
    memory (a ctypes buffer) for device="cpu"."""
    if len(shape) == 1 and isinstance(shape[0], (builtins.tuple, builtins.list)):
        shape = tuple(shape[0])
    dt = dtype or DTYPES["float32"]
    dev = globals()["device"](device)
    n = 1
    for s in shape:
        n *= s
    nbytes = max(1, n * dt.itemsize)
    if dev.type == "cuda":
        with _DeviceGuard(dev.index):
            p = ctypes.c_uint64()
            _check(_state.cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(nbytes)), "cuMemAlloc_v2")
            ptr = p.value
    else:
        buf = ctypes.create_string_buffer(nbytes)
        _state.keep.append(buf)
        ptr = ctypes.addressof(buf)
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return Tensor(ptr, shape, tuple(reversed(strides)), dt, dev)


class FakeTensorMap(ctypes.Structure):
    """tests/runtime/fake_cuda.h's FakeTensorMap (what the stand-in's encoder writes)."""
    _fields_ = [("magic", ctypes.c_int), ("dtype", ctypes.c_int), ("rank", ctypes.c_int), ("swizzle", ctypes.c_int),
                ("oob_fill", ctypes.c_int), ("address", ctypes.c_ulonglong), ("dims", ctypes.c_ulonglong * 5), ("strides", ctypes.c_ulonglong * 4),
                ("box", ctypes.c_uint * 5)]


class FakeLaunch(ctypes.Structure):
    """tests/runtime/fake_cuda.h's record of the last launch (the whole struct: the stand-in
    writes all of it)."""
    _fields_ = [("name", ctypes.c_char * 128), ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("smem", ctypes.c_uint), ("stream", ctypes.c_void_p), ("n_params", ctypes.c_int),
                ("sizes", ctypes.c_int * 64), ("bytes", (ctypes.c_ubyte * 8) * 64), ("max_dynamic_smem", ctypes.c_int),
                ("n_maps", ctypes.c_int), ("maps", FakeTensorMap * 8)]


def last_launch():
    """The stand-in's record of its last launch: a dict of name, grid,
    block, stream (an int) and params (each parameter's bytes as an int,
    little-endian, in the size the PTX declares)."""
    r = FakeLaunch()
    _state.cu.fake_cuda_last_launch(ctypes.byref(r))
    params = [int.from_bytes(bytes(r.bytes[i][:r.sizes[i]]), "little") for i in range(r.n_params)]
    return {"name": r.name.decode(), "grid": tuple(r.grid), "block": tuple(r.block), "stream": r.stream or 0,
            "params": params}


def launches():
    """How many launches the stand-in has recorded."""
    return _state.cu.fake_cuda_launches()


def set_stream(raw, device=None):
    """torch's current stream on `device` (default: the current one) as the
    raw CUstream `raw` (0: the default stream)."""
    _state.streams[_state.current if device is None else device] = raw


def _raw_stream(dev):
    return _state.streams.get(dev, 0)


def install(driver_path, devices=1):
    """Loads the stand-in driver (the same handle libblk will dlopen), sets
    its device count, and puts this module in sys.modules as torch."""
    cu = ctypes.CDLL(driver_path)
    cu.fake_cuda_set.argtypes = [ctypes.c_char_p, ctypes.c_long]
    cu.fake_cuda_set(b"devices", devices)
    _check(cu.cuInit(0), "cuInit")
    _state.cu, _state.devices = cu, devices
    mod = sys.modules[__name__]
    cuda = types.ModuleType("torch.cuda")
    cuda.is_available = lambda: True
    cuda.device_count = lambda: _state.devices
    cuda.current_device = lambda: _state.current
    cuda.set_device = set_device
    cuda.device = _DeviceGuard
    cuda.current_stream = lambda dev=None: _Stream(dev)
    cuda.synchronize = lambda dev=None: None
    mod.cuda = cuda
    C = types.ModuleType("torch._C")
    C._cuda_getCurrentRawStream = _raw_stream
    mod._C = C
    for n, d in DTYPES.items():
        setattr(mod, n, d)
    sys.modules["torch"] = mod
    set_device(0)
    return mod
