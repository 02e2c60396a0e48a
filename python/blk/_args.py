"""blk._args: what a launch argument is.

classify(value, param, kernel) says what a runtime argument is, checked
against its parameter, or raises blk.Error naming the parameter:

  kind "tensor"   a torch CUDA tensor (the launch fast path handles these inline)
  kind "gpu"      other GPU memory: __cuda_array_interface__ (CuPy, Numba), DLPack
                  of a CUDA device (JAX), a blk.DeviceArray of a GPU context
  kind "host"     host memory for the interpreter: a numpy array (or anything
                  with __array_interface__), a CPU torch tensor, CPU DLPack
  kind "devarray" a blk.DeviceArray of the interpreter context
  kind "addr"     an int given for a pointer parameter: an address, unchecked
  kind "int", "float"  Python numbers (bool is an int)

Contiguity: a tensor or array must be contiguous (C order), or be given as
blk.strided(x): the caller's word that the kernel addresses x through
strides the launch passes (x's own). blk cannot tell from a kernel's
parameters which strides belong to which argument, so it takes nothing
non-contiguous on trust without that word (docs/python.md, "Contiguity").
"""

import sys

from . import _ffi, _types
from ._memory import DeviceArray
from ._runtime import Error


class Strided:
    """blk.strided(x): x (a tensor or array, contiguous or not) for a
    kernel that addresses it through strides given as arguments. See
    strided()."""
    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __repr__(self):
        return f"blk.strided({_describe(self.obj)})"


def strided(x):
    """x marked as addressed by the kernel through strides the launch
    passes (x.stride() for torch, x.strides // x.itemsize for numpy): a
    non-contiguous x is then passed as its pointer, as it is. Without it a
    non-contiguous argument is an error, since a kernel that reads it as
    contiguous reads the wrong elements."""
    if isinstance(x, Strided):
        return x
    return Strided(x)


class Arg:
    """lo, hi: for host memory, the bytes [lo, hi) the array spans (its
    view's own extent, strides and all): what the interpreter gets a copy of,
    so that its bounds are the view's."""
    __slots__ = ("kind", "elem", "device", "ptr", "nbytes", "lo", "hi", "writeable", "value", "obj", "strided")

    def __init__(self, kind, elem=None, device=None, ptr=0, nbytes=0, value=None, obj=None):
        self.kind, self.elem, self.device, self.ptr, self.nbytes = kind, elem, device, ptr, nbytes
        self.lo, self.hi, self.writeable = ptr, ptr + nbytes, True
        self.value, self.obj = value, obj
        self.strided = False  # given as blk.strided(x)


def without_object(a):
    """A copy of Arg a that does not hold the argument itself (obj None)."""
    c = Arg(a.kind, a.elem, a.device, a.ptr, a.nbytes, a.value)
    c.lo, c.hi, c.writeable, c.strided = a.lo, a.hi, a.writeable, a.strided
    return c


def _extent(ptr, shape, strides, itemsize):
    """(lo, hi): the bytes an array at ptr with this shape and byte strides
    spans; lo == hi for an empty one. A negative stride reaches below ptr."""
    if any(n == 0 for n in shape):
        return ptr, ptr
    lo = hi = ptr
    for n, st in zip(shape, strides):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return lo, hi + itemsize


def _describe(v):
    t = type(v)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(v, torch.Tensor):
        return f"a {v.dtype} tensor on {v.device}"
    if hasattr(v, "dtype") and hasattr(v, "shape"):
        return f"a {t.__module__}.{t.__name__} of {v.dtype}"
    return f"{t.__name__} {v!r}"[:80]


def _bad(kernel, param, what):
    return Error(f"{kernel.name}: argument '{param.name}' ({param.type}): {what}", param=param.name,
                 kernel=kernel.name)


def _check_elem(kernel, param, elem, given):
    pointee = param.pointee
    if pointee in kernel.type_params:  # *T, T a `const type` parameter: any element type binds T
        if elem is None:
            raise _bad(kernel, param, f"blk has no element type for {given}")
        return
    if elem is None or not _types.accepts(pointee, elem):
        want = "an array of 64-bit addresses (i64 or u64)" if pointee.startswith("*") else f"{pointee} elements"
        raise _bad(kernel, param, f"expected {want}, given {given}")


def _contiguous_or_raise(kernel, param, ok, shape, strides, given, fix, allow):
    """A non-contiguous argument is refused unless given as blk.strided(x)
    (allow): which strides a kernel's parameters hold, and of which
    argument, blk cannot know, and a guess passes views the kernel reads
    wrong."""
    if not ok and not allow:
        raise _bad(kernel, param, f"{given} is not contiguous (shape {tuple(shape)}, strides {tuple(strides)}) "
                                  f"and the kernel addresses a pointer as contiguous memory: pass {fix}, or "
                                  f"blk.strided({param.name}) if the kernel takes its strides and the launch "
                                  f"passes them")


def _tensor(kernel, param, v, torch, allow=False):
    elem = _types.torch_name(v.dtype)
    _check_elem(kernel, param, elem, _describe(v))
    _contiguous_or_raise(kernel, param, v.is_contiguous(), v.shape, v.stride(), f"the {v.dtype} tensor",
                         f"{param.name}.contiguous()", allow)
    if v.is_cuda:
        return Arg("tensor", elem, v.get_device(), v.data_ptr(), obj=v)
    if v.device.type != "cpu":
        raise _bad(kernel, param, f"a tensor on {v.device}: blk runs CUDA tensors (GPU) and CPU tensors "
                                  f"(interpreter)")
    a = Arg("host", elem, -1, v.data_ptr(), v.numel() * v.element_size(), obj=v)
    a.lo, a.hi = _extent(a.ptr, tuple(v.shape), [st * v.element_size() for st in v.stride()], v.element_size())
    return a


def _native_or_raise(kernel, param, byteorder, given):
    """Refuses memory of the other byte order ('>' on a little-endian
    machine): blk reads elements in this machine's order."""
    other = ">" if sys.byteorder == "little" else "<"
    if byteorder == other:
        raise _bad(kernel, param, f"{given} is {'big' if other == '>' else 'little'}-endian, not this machine's "
                                  f"byte order: pass x.astype(x.dtype.newbyteorder('=')) (or "
                                  f"numpy.ascontiguousarray(x, dtype=x.dtype.newbyteorder('=')))")


def _numpy(kernel, param, v, allow=False):
    import numpy
    if not isinstance(v, numpy.ndarray):
        v = numpy.asarray(v)
    elem = _types.numpy_name(v.dtype)
    _check_elem(kernel, param, elem, _describe(v))
    if not v.dtype.isnative:
        _native_or_raise(kernel, param, v.dtype.byteorder, f"the numpy array of {v.dtype.str}")
    _contiguous_or_raise(kernel, param, v.flags.c_contiguous, v.shape, v.strides, f"the numpy array",
                         f"numpy.ascontiguousarray({param.name})", allow)
    a = Arg("host", elem, -1, v.ctypes.data, v.nbytes, obj=v)
    a.writeable = bool(v.flags.writeable)
    # the view's own bytes (not its base array's): the interpreter's bounds
    # are the view's; views that overlap share one copy (_plan._host_spans)
    a.lo, a.hi = _extent(a.ptr, v.shape, v.strides, v.itemsize)
    return a


def _cai(kernel, param, v, allow=False):
    cai = v.__cuda_array_interface__
    ts = cai.get("typestr")
    elem = _types.typestr_name(ts)
    _check_elem(kernel, param, elem, f"a {type(v).__name__} of {ts}")
    _native_or_raise(kernel, param, ts[:1], f"the {type(v).__name__} of {ts}")
    shape, strides = tuple(cai.get("shape", ())), cai.get("strides")
    if strides is not None:
        size, want = _types.BLK_BYTES.get(elem, 1), []
        for s in reversed(shape):
            want.append(size)
            size *= s
        ok = tuple(reversed(want)) == tuple(strides) or 0 in shape
        _contiguous_or_raise(kernel, param, ok, shape, strides, f"the {type(v).__name__}",
                             "a contiguous copy", allow)
    torch = sys.modules.get("torch")
    dev = torch.cuda.current_device() if torch is not None and torch.cuda.is_available() else 0
    return Arg("gpu", elem, dev, cai["data"][0], obj=v)


def classify(v, param, kernel):
    """An Arg for runtime argument v of parameter param (raises blk.Error)."""
    torch = sys.modules.get("torch")
    if param.kind == _ffi.PARAM_POINTER:
        if isinstance(v, Strided):
            a = _pointer(v.obj, param, kernel, torch, True)
            a.strided = True
            return a
        return _pointer(v, param, kernel, torch, False)
    if isinstance(v, Strided):
        raise _bad(kernel, param, "blk.strided(...) is for a pointer parameter's tensor or array")
    return _scalar(v, param, kernel, torch)


def _pointer(v, param, kernel, torch, allow):
    if torch is not None and isinstance(v, torch.Tensor):
        return _tensor(kernel, param, v, torch, allow)
    if isinstance(v, DeviceArray):
        _check_elem(kernel, param, v.dtype, repr(v))
        if not v.ptr:
            raise _bad(kernel, param, "the blk.DeviceArray was freed")
        kind = "gpu" if v.context.backend == "gpu" else "devarray"
        return Arg(kind, v.dtype, v.context.device if kind == "gpu" else -1, v.ptr, v.nbytes, obj=v)
    if hasattr(v, "__cuda_array_interface__"):
        return _cai(kernel, param, v, allow)
    if hasattr(v, "__dlpack__") and hasattr(v, "__dlpack_device__"):
        dev_type, _ = v.__dlpack_device__()
        if dev_type in (2, 3, 13) and torch is not None:       # CUDA, CUDA host, CUDA managed
            a = _tensor(kernel, param, torch.from_dlpack(v), torch, allow)
            a.obj = v
            return a
        if dev_type == 1 and not hasattr(v, "__array_interface__"):
            import numpy
            return _numpy(kernel, param, numpy.from_dlpack(v), allow)
    if hasattr(v, "__array_interface__"):
        return _numpy(kernel, param, v, allow)
    if isinstance(v, int) and not isinstance(v, bool):
        if v <= 0 or v >= 2**64:
            raise _bad(kernel, param, f"an address must be a positive 64-bit integer, given {v}")
        return Arg("addr", None, None, v)
    raise _bad(kernel, param, f"expected a tensor or array, given {_describe(v)}")


def _scalar(v, param, kernel, torch):
    scalar = param.type
    if torch is not None and isinstance(v, torch.Tensor) or hasattr(v, "__array_interface__") and \
            getattr(v, "shape", None) not in ((), None):
        raise _bad(kernel, param, f"expected a number, given {_describe(v)}")
    if param.kind == _ffi.PARAM_INT:
        if isinstance(v, float) or not hasattr(v, "__index__"):
            raise _bad(kernel, param, f"expected an integer, given {_describe(v)}")
        i = int(v.__index__())
        lo, hi = _types.INT_RANGE.get(scalar, (-2**63, 2**64 - 1))
        if not lo <= i <= hi:
            raise _bad(kernel, param, f"{i} is out of range for {scalar}")
        if i >= 2**63:
            i -= 2**64
        return Arg("int", value=i)
    try:
        return Arg("float", value=float(v))
    except (TypeError, ValueError):
        raise _bad(kernel, param, f"expected a number, given {_describe(v)}") from None
