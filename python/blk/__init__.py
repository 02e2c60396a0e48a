"""blk: tile kernels for PyTorch programs, through libblk.

    import blk, torch
    m = blk.load("vector_add.tile")            # or blk.load(source="kernel ...")
    add = m.vector_add                          # or m["vector_add"]
    add[(blk.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    add(x, y, out, n)                           # the kernel's own grid clause

Torch CUDA tensors run on the GPU, on torch's current stream; numpy arrays
(and CPU tensors) run on the interpreter, copied in and back. docs/python.md
says it all.
"""

from ._args import strided  # noqa: F401
from ._ffi import COMPILE_PHASES  # noqa: F401
from ._kernel import CompileResult, Kernel, Module, Param, TuneResult  # noqa: F401
from ._memory import DeviceArray, device_array  # noqa: F401
from ._runtime import Error, get_backend, set_backend, synchronize, version  # noqa: F401
from ._runtime import gpu_available, library_path  # noqa: F401
from ._torch import torch_op  # noqa: F401

__version__ = "0.1.0"
Error.__module__ = "blk"  # tracebacks say blk.Error


def load(path=None, *, source=None, name=None, include_dirs=(), defines=None):
    """A Module from a .tile file or from source text (name: the file name
    diagnostics show, default "<source>"). include_dirs: where imports are
    looked for after the file's folder; defines: const values for every
    kernel of the module ({"BLOCK": 256}). Raises blk.Error with the
    diagnostics when the source has errors."""
    return Module(path, source, name, include_dirs, defines)


def cdiv(a, b):
    """ceil(a / b) for integers."""
    return -(-a // b)


def next_power_of_2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()
