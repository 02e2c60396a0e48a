"""blk.nn: SwiGLU, silu(a) * b, over stdlib/nn/swiglu.tile, as torch custom
ops with autograd."""

from typing import Tuple

import torch
from torch import Tensor

import blk
from . import _kernels as K

BLOCK = 1024


def _check(a, b):
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        raise ValueError(f"blk.nn.swiglu: a and b differ: {tuple(a.shape)} {a.dtype} on {a.device}, "
                         f"{tuple(b.shape)} {b.dtype} on {b.device}")
    return K.types(a, "swiglu")


@torch.library.custom_op("blk_nn::swiglu_fwd", mutates_args=())
def swiglu_fwd(a: Tensor, b: Tensor) -> Tensor:
    ty = _check(a, b)
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    if n:
        K.module("swiglu").swiglu_fwd[(blk.cdiv(n, BLOCK),)](a, b, out, n, BLOCK=BLOCK, **ty)
    return out


@swiglu_fwd.register_fake
def _(a, b):
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.custom_op("blk_nn::swiglu_bwd", mutates_args=())
def swiglu_bwd(dout: Tensor, a: Tensor, b: Tensor) -> Tuple[Tensor, Tensor]:
    ty = _check(a, b)
    a, b, dout = a.contiguous(), b.contiguous(), dout.to(a.dtype).contiguous()
    da, db = torch.empty_like(a), torch.empty_like(b)
    n = a.numel()
    if n:
        K.module("swiglu").swiglu_bwd[(blk.cdiv(n, BLOCK),)](dout, a, b, da, db, n, BLOCK=BLOCK, **ty)
    return da, db


@swiglu_bwd.register_fake
def _(dout, a, b):
    e = torch.empty_like(a, memory_format=torch.contiguous_format)
    return e, torch.empty_like(e)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, dout):
    a, b = ctx.saved_tensors
    da, db = swiglu_bwd(dout, a, b)
    return da.view(a.shape), db.view(b.shape)


swiglu_fwd.register_autograd(_backward, setup_context=_setup)


def swiglu(a, b):
    """silu(a) * b element-wise (a: the gate projection, b: the up
    projection; same shape and dtype). Differentiable in both; saves a and
    b (sigmoid(a) is recomputed in the backward)."""
    return swiglu_fwd(a, b)
