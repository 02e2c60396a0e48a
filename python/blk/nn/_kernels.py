"""blk.nn._kernels: the library's kernel files (stdlib/nn/*.tile), found where
libblk finds its standard library, loaded once each, and what the ops
share: the type names blk takes for torch dtypes, the launch sizes, and
eager(), the way each op is called: through its torch.library custom op
where torch traces (torch.compile, fake tensors), else directly."""

import functools
import os

import torch

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


# {"T": ..., "C": ...} of each dtype, made once (a launch's consts: not to be changed)
_TYPES = {getattr(torch, n): {"T": _types.TORCH[n], "C": "f64" if n == "float64" else "f32"} for n in DTYPES}


def types(t, op):
    """{"T": ..., "C": ...} for a tensor t's dtype: its own type, and the type
    the kernels compute in (one dict a dtype, shared: not to be changed).
    Other dtypes are a TypeError naming the op."""
    ty = _TYPES.get(t.dtype)
    if ty is None:
        raise TypeError(f"blk.nn.{op}: {t.dtype} tensors are not supported (float16, bfloat16, float32, "
                        f"float64)")
    return ty


def acc_dtype(t):
    """The torch dtype of the statistics an op saves for t (rstd, loss)."""
    return torch.float64 if t.dtype is torch.float64 else torch.float32


def like(t, dtype):
    """t in dtype, contiguous: t itself when it is already (no torch call
    beyond the test)."""
    if t.dtype is not dtype:
        t = t.to(dtype)
    return t if t.is_contiguous() else t.contiguous()


# tensors of these classes are plain: an op on them runs without tracing;
# nor does one of these scalars mean tracing
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_SCALARS = (float, int, bool, type(None), str)


_compiling, _modes = torch.compiler.is_compiling, torch._C._len_torch_dispatch_stack


def tracing():
    """Whether a tracer runs this: torch.compile, or a torch dispatch mode
    (FakeTensorMode, make_fx, AOT autograd's functionalization)."""
    return _compiling() or _modes() > 0


def eager(custom_op, setup=None, backward=None):
    """op(*args): the torch.library custom op custom_op (made with
    @torch.library.custom_op), or the same computation without its dispatch
    where nothing traces it; setup and backward: the autograd formula it was
    registered with (register_autograd), if any.

    Under torch.compile (torch.compiler.is_compiling()), under a dispatch
    mode (FakeTensorMode, make_fx, ...), or with an argument of another
    class that has __torch_function__ (FakeTensor, FunctionalTensor, a
    tensor subclass, torch.fx's Proxy) or a tensor on the meta device, op
    calls custom_op: a traced graph keeps it as one node. Otherwise,
    where grad mode is on and a tensor argument requires grad: a plain
    torch.autograd.Function of the custom op's own function, setup and
    backward (the same outputs, saved tensors and gradients; custom_op
    itself where there is no formula); else that function itself. The
    custom op's dispatch and its autograd wrapper cost several times a
    small op's own host time (tens of microseconds)."""
    # the decorated function (torch 2.4 on); else the custom op all the way
    impl = getattr(custom_op, "_init_fn", None) or custom_op
    fn = None
    if backward is not None:
        # forward(ctx, ...) rather than a setup_context method: torch binds
        # the arguments of the latter through inspect.signature at each call
        def forward(ctx, *args):
            out = impl(*args)
            setup(ctx, args, out)
            return out
        name = getattr(custom_op, "_name", "op").split("::")[-1]
        fn = type(f"{name}_eager", (torch.autograd.Function,),
                  {"forward": staticmethod(forward), "backward": staticmethod(backward)})
    grad_on, any_grad = torch.is_grad_enabled, torch._C._any_requires_grad

    def op(*args):
        if tracing():
            return custom_op(*args)
        for a in args:
            c = a.__class__
            if c in _PLAIN:
                if a.is_meta:
                    return custom_op(*args)
            elif c not in _SCALARS and hasattr(c, "__torch_function__"):   # a subclass, an fx Proxy
                return custom_op(*args)
        if grad_on() and any_grad(*args):
            return fn.apply(*args) if fn is not None else custom_op(*args)
        return impl(*args)
    op.custom_op = custom_op
    return op


def warps(block):
    """num_warps for a row of block elements held in registers (ptxas -v on
    sm_90a, bf16: no spills in rmsnorm_fwd up to 16384 elements, in
    rmsnorm_bwd up to 8192)."""
    return 32 if block >= 16384 else 16 if block >= 8192 else 8 if block >= 2048 else 4


@functools.lru_cache(maxsize=None)
def _sm_count(index):
    return torch.cuda.get_device_properties(index).multi_processor_count


def programs(t, rows):
    """Programs for a kernel that walks rows in a grid-stride loop: a few a
    multiprocessor on the GPU (a host property, no sync), at most rows, at
    least 1; 4 on the interpreter."""
    cap = 2 * _sm_count(t.device.index if t.device.index is not None else 0) if t.is_cuda else 4
    return max(1, min(rows, cap))
