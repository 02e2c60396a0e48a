"""blk.nn: the gated activations SwiGLU, silu(a) * b, and GeGLU, gelu_tanh(a) *
b, over stdlib/nn/glu.tile, as torch custom ops with autograd."""

from typing import Tuple

import torch
from torch import Tensor

import blk
from . import _kernels as K

BLOCK = 1024


def _check(a, b, op):
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        raise ValueError(f"blk.nn.{op}: a and b differ: {tuple(a.shape)} {a.dtype} on {a.device}, "
                         f"{tuple(b.shape)} {b.dtype} on {b.device}")
    return K.types(a, op)


def _name(gelu):
    return "geglu" if gelu else "swiglu"


@torch.library.custom_op("blk_nn::glu_fwd", mutates_args=())
def glu_fwd(a: Tensor, b: Tensor, gelu: bool) -> Tensor:
    ty = _check(a, b, _name(gelu))
    if not a.is_contiguous():
        a = a.contiguous()
    if not b.is_contiguous():
        b = b.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    if n:
        K.module("glu").glu_fwd[(blk.cdiv(n, BLOCK),)](a, b, out, n, GELU=gelu, BLOCK=BLOCK, **ty)
    return out


@glu_fwd.register_fake
def _(a, b, gelu):
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.custom_op("blk_nn::glu_bwd", mutates_args=())
def glu_bwd(dout: Tensor, a: Tensor, b: Tensor, gelu: bool) -> Tuple[Tensor, Tensor]:
    ty = _check(a, b, _name(gelu))
    if not a.is_contiguous():
        a = a.contiguous()
    if not b.is_contiguous():
        b = b.contiguous()
    dout = K.like(dout, a.dtype)
    da, db = torch.empty_like(a), torch.empty_like(b)
    n = a.numel()
    if n:
        K.module("glu").glu_bwd[(blk.cdiv(n, BLOCK),)](dout, a, b, da, db, n, GELU=gelu, BLOCK=BLOCK, **ty)
    return da, db


@glu_bwd.register_fake
def _(dout, a, b, gelu):
    e = torch.empty_like(a, memory_format=torch.contiguous_format)
    return e, torch.empty_like(e)


_glu_bwd = K.eager(glu_bwd)


def _setup(ctx, inputs, output):
    a, b, gelu = inputs
    ctx.save_for_backward(a, b)
    ctx.gelu = gelu


def _backward(ctx, dout):
    a, b = ctx.saved_tensors
    da, db = _glu_bwd(dout, a, b, ctx.gelu)
    return da.view(a.shape), db.view(b.shape), None


glu_fwd.register_autograd(_backward, setup_context=_setup)
_glu = K.eager(glu_fwd, _setup, _backward)


def swiglu(a, b):
    """silu(a) * b element-wise (a: the gate projection, b: the up
    projection; same shape and dtype). Differentiable in both; saves a and
    b (the activation is recomputed in the backward)."""
    return _glu(a, b, False)


def geglu(a, b):
    """gelu(a, approximate="tanh") * b element-wise, as swiglu (Gemma's MLP)."""
    return _glu(a, b, True)
