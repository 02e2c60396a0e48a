"""blk.nn._kernels: the library's kernel files (stdlib/nn/*.tile), found where
libblk finds its standard library, loaded once each, and what the ops
share: the type names blk takes for torch dtypes and the launch sizes."""

import functools
import os

import blk
from blk import _types

# the element types the ops take; the arithmetic type C is f64 for f64 data
DTYPES = ("float16", "bfloat16", "float32", "float64")


def stdlib_dir():
    """The standard library's folder, as libblk looks for it
    (runtime/modules.c): $BLK_STDLIB, else beside libblk.so as installed
    (../share/blk/stdlib), in the package (blk/lib/../stdlib) or as built
    (build/../stdlib)."""
    env = os.environ.get("BLK_STDLIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(blk.library_path()))
    for rel in ("../share/blk/stdlib", "../stdlib", "../../stdlib"):
        cand = os.path.normpath(os.path.join(here, rel))
        if os.path.isdir(os.path.join(cand, "nn")):
            return cand
    raise blk.Error(f"blk.nn: no standard library with nn/ beside {blk.library_path()} "
                    f"(set $BLK_STDLIB to the stdlib folder)")


@functools.lru_cache(maxsize=None)
def module(name):
    """The blk.Module of stdlib/nn/NAME.tile."""
    return blk.load(os.path.join(stdlib_dir(), "nn", name + ".tile"))


def types(t, op):
    """{"T": ..., "C": ...} for a tensor t's dtype: its own type, and the type
    the kernels compute in. Other dtypes are a TypeError naming the op."""
    name = str(t.dtype).replace("torch.", "")
    if name not in DTYPES:
        raise TypeError(f"blk.nn.{op}: {t.dtype} tensors are not supported (float16, bfloat16, float32, "
                        f"float64)")
    elem = _types.TORCH[name]
    return {"T": elem, "C": "f64" if elem == "f64" else "f32"}


def acc_dtype(t):
    """The torch dtype of the statistics an op saves for t (rstd, loss)."""
    import torch
    return torch.float64 if t.dtype == torch.float64 else torch.float32


def warps(block):
    """num_warps for a row of block elements held in registers (ptxas -v on
    sm_90a, bf16: no spills in rmsnorm_fwd up to 16384 elements, in
    rmsnorm_bwd up to 8192)."""
    return 32 if block >= 16384 else 16 if block >= 8192 else 8 if block >= 2048 else 4


@functools.lru_cache(maxsize=None)
def _sm_count(index):
    import torch
    return torch.cuda.get_device_properties(index).multi_processor_count


def programs(t, rows):
    """Programs for a kernel that walks rows in a grid-stride loop: a few a
    multiprocessor on the GPU (a host property, no sync), at most rows, at
    least 1; 4 on the interpreter."""
    cap = 2 * _sm_count(t.device.index if t.device.index is not None else 0) if t.is_cuda else 4
    return max(1, min(rows, cap))
