"""blk._memory: memory of a blk context (blk_malloc), for programs without
torch: on the interpreter, where a kernel reads addresses from memory (an
array of pointers, as examples/sum_many.tile does), the buffers those
addresses name must live in the context; blk.device_array puts a numpy
array there."""

import ctypes

from . import _runtime, _types
from ._runtime import Error


class DeviceArray:
    """`nbytes` of a context's memory holding elements of blk type `dtype`;
    `shape` (a tuple) as given. Passed to a pointer parameter it is its
    address (the dtype checked); `.ptr` is that address as an int, to store
    in an array of pointers. Freed by free() or when collected."""

    def __init__(self, ctx, dtype, shape, numpy_dtype=None):
        self.context = ctx
        self.dtype = dtype
        self.shape = tuple(shape)
        n = 1
        for s in self.shape:
            n *= s
        self.size = n
        self.nbytes = n * _types.BLK_BYTES[dtype]
        self.numpy_dtype = numpy_dtype
        self.ptr = ctx.malloc(self.nbytes)

    def copy_from(self, host):
        """Copies a C-contiguous numpy array of the same size in bytes in."""
        if host.nbytes != self.nbytes:
            raise Error(f"blk.DeviceArray: {host.nbytes} bytes given, the array has {self.nbytes}")
        if not host.dtype.isnative:  # blk reads elements in this machine's byte order
            host = host.astype(host.dtype.newbyteorder("="))
        if not host.flags.c_contiguous:
            host = host.copy()
        self.context.to_device(self.ptr, host.ctypes.data, self.nbytes)

    def numpy(self):
        """A new numpy array with the contents."""
        import numpy
        out = numpy.empty(self.shape, dtype=self.numpy_dtype or self.dtype_numpy())
        self.context.from_device(out.ctypes.data, self.ptr, self.nbytes)
        return out

    def dtype_numpy(self):
        inv = {v: k for k, v in _types.NUMPY.items()}
        if self.dtype not in inv:
            raise Error(f"blk.DeviceArray: numpy has no {self.dtype}")
        return inv[self.dtype]

    def free(self):
        if self.ptr:
            try:
                self.context.free(self.ptr)
            finally:
                self.ptr = 0

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass

    def __repr__(self):
        return f"blk.DeviceArray({self.dtype}, shape={self.shape}, {self.context.backend})"


def device_array(host, backend="interpreter", device=None):
    """A DeviceArray holding a copy of numpy array `host`, in the context of
    `backend` ('interpreter' or 'gpu')."""
    import numpy
    host = numpy.ascontiguousarray(host)
    if not host.dtype.isnative:  # the values, in this machine's byte order
        host = host.astype(host.dtype.newbyteorder("="))
    name = _types.numpy_name(host.dtype)
    if name is None:
        raise Error(f"blk.device_array: blk has no type for numpy {host.dtype}")
    ctx = _runtime.context_for(_runtime._norm_backend(backend), device)
    d = DeviceArray(ctx, name, host.shape, host.dtype)
    d.copy_from(host)
    return d


def _addr(buf):
    return ctypes.addressof(buf)
