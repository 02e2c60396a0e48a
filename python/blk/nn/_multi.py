"""blk.nn._multi: what the multi-tensor kernels of stdlib/nn/optim.tile
need from the host: the kind of each tensor, the program-to-tensor mapping
of a list of tensors cut into chunks, tables uploaded without a host sync,
and, for CPU tensors, their copies in the interpreter's memory (a kernel
that reads addresses from a table can only reach memory of its context)."""

import torch

import blk
from blk import _runtime

# a tensor's kind in the kernels' tables, and the const that compiles its code
KINDS = {torch.float32: 0, torch.bfloat16: 1, torch.float16: 2, torch.float64: 3}
FLAGS = ("F32", "BF16", "F16", "F64")
BLOCK = 1024
CHUNK_GPU = 65536   # elements a program: 64 steps of BLOCK (the 1B-parameter list: ~15k programs)
CHUNK_CPU = 2048    # on the interpreter small, so that small tensors have several chunks
# (both multiples of BLOCK: the kernels promise a chunk's start is one)


def kind(t, op):
    k = KINDS.get(t.dtype)
    if k is None:
        raise TypeError(f"blk.nn.{op}: {t.dtype} tensors are not supported (float32, bfloat16, float16, float64)")
    return k


def flags(kinds):
    """The F32 ... F64 consts for a list of kinds: those present."""
    present = set(kinds)
    return {f: i in present for i, f in enumerate(FLAGS)}


def aligned(addrs):
    """Whether every address (0: none) is a multiple of 16 bytes: the
    kernels' ALIGNED, under which they move 16 bytes a thread."""
    return all(a % 16 == 0 for a in addrs)


def chunk(device):
    return CHUNK_GPU if device.type == "cuda" else CHUNK_CPU


def mapping(numels, size):
    """(prog_tensor, first): the tensor of each program, tensor i's chunks of
    `size` elements being programs first[i] ...; an empty tensor has none."""
    prog_tensor, first = [], []
    for i, n in enumerate(numels):
        first.append(len(prog_tensor))
        prog_tensor.extend([i] * blk.cdiv(n, size))
    return prog_tensor, first


def upload(values, dtype, device):
    """A tensor of values on device: on a GPU copied from pinned memory
    without waiting (the caching host allocator keeps the pinned buffer until
    the copy is done), so building a table never syncs the host."""
    t = torch.tensor(values, dtype=dtype, device="cpu")   # not torch's default device
    if device.type == "cuda":
        return t.pin_memory().to(device, non_blocking=True)
    return t


class Mirror:
    """Copies of CPU tensors in the interpreter's memory, one buffer each,
    at fixed addresses (.addrs) for a table; put() copies the tensors in,
    get() the buffers back out (a None in their list: that one is not
    copied). A tensor must be contiguous."""

    def __init__(self, tensors):
        self.ctx = _runtime.interpreter_context()
        self.nbytes = [t.numel() * t.element_size() for t in tensors]
        self.addrs = []
        for n in self.nbytes:
            self.addrs.append(self.ctx.malloc(n))

    def put(self, tensors):
        for a, n, t in zip(self.addrs, self.nbytes, tensors):
            if t is not None:
                self.ctx.to_device(a, t.data_ptr(), n)

    def get(self, tensors):
        for a, n, t in zip(self.addrs, self.nbytes, tensors):
            if t is not None:
                self.ctx.from_device(t.data_ptr(), a, n)

    def __del__(self):
        try:
            for a in self.addrs:
                self.ctx.free(a)
        except Exception:
            pass
        self.addrs = []
