"""blk.nn: RMSNorm (Llama and Gemma conventions) and the fused residual add +
RMSNorm, over stdlib/nn/rmsnorm.tile, as torch custom ops with autograd."""

from typing import Optional, Tuple

import torch
from torch import Tensor

import blk
from . import _kernels as K

MAX_COLS = 65536  # a row is held in one block of registers


def _rows(x, w, op):
    if x.dim() == 0 or w.dim() != 1 or w.shape[0] != x.shape[-1]:
        raise ValueError(f"blk.nn.{op}: weight of shape {tuple(w.shape)} for input of shape {tuple(x.shape)}: "
                         f"a weight of the last dimension ({x.shape[-1] if x.dim() else '?'}) expected")
    if x.shape[-1] > MAX_COLS:
        raise ValueError(f"blk.nn.{op}: rows of {x.shape[-1]} elements; at most {MAX_COLS}")
    return x.numel() // max(x.shape[-1], 1), x.shape[-1]


def _forward(x, res, w, eps, offset, op):
    if not x.is_contiguous():
        x = x.contiguous()
    rows, n = _rows(x, w, op)
    ty = K.types(x, op)
    w = K.like(w, x.dtype)
    y = torch.empty_like(x)
    rstd = x.new_empty(rows, dtype=K.acc_dtype(x))
    h = None
    if res is not None:
        res = K.like(res, x.dtype)
        if res.shape != x.shape:
            raise ValueError(f"blk.nn.{op}: residual of shape {tuple(res.shape)}, input {tuple(x.shape)}")
        h = torch.empty_like(x)
    block = blk.next_power_of_2(n)
    if rows:
        K.module("rmsnorm").rmsnorm_fwd[(rows,)](
            x, res if h is not None else x, w, y, h if h is not None else y, rstd, n, rows, n, float(eps),
            float(offset), RESIDUAL=h is not None, BLOCK=block, num_warps=K.warps(block), **ty)
    return y, h, rstd


@torch.library.custom_op("blk_nn::rms_norm_fwd", mutates_args=())
def rms_norm_fwd(x: Tensor, weight: Tensor, eps: float, offset: float) -> Tuple[Tensor, Tensor]:
    y, _, rstd = _forward(x, None, weight, eps, offset, "rms_norm")
    return y, rstd


@rms_norm_fwd.register_fake
def _(x, weight, eps, offset):
    rows = x.numel() // max(x.shape[-1], 1)
    return torch.empty_like(x, memory_format=torch.contiguous_format), x.new_empty(rows, dtype=K.acc_dtype(x))


@torch.library.custom_op("blk_nn::add_rms_norm_fwd", mutates_args=())
def add_rms_norm_fwd(x: Tensor, residual: Tensor, weight: Tensor, eps: float,
                     offset: float) -> Tuple[Tensor, Tensor, Tensor]:
    y, h, rstd = _forward(x, residual, weight, eps, offset, "add_rms_norm")
    return y, h, rstd


@add_rms_norm_fwd.register_fake
def _(x, residual, weight, eps, offset):
    rows = x.numel() // max(x.shape[-1], 1)
    e = torch.empty_like(x, memory_format=torch.contiguous_format)
    return e, torch.empty_like(e), x.new_empty(rows, dtype=K.acc_dtype(x))


@torch.library.custom_op("blk_nn::rms_norm_bwd", mutates_args=())
def rms_norm_bwd(dy: Tensor, x: Tensor, weight: Tensor, rstd: Tensor, dh: Optional[Tensor],
                 offset: float) -> Tuple[Tensor, Tensor]:
    """dx (plus dh, the gradient of the residual stream h, where given) and
    dw for the forward of x (h with a residual) that saved rstd."""
    dy = K.like(dy, x.dtype)
    rows, n = _rows(x, weight, "rms_norm")
    ty = K.types(x, "rms_norm")
    w = K.like(weight, x.dtype)
    dx = torch.empty_like(x)
    if dh is not None:
        dh = K.like(dh, x.dtype)
    progs = K.programs(x, rows)
    partial = x.new_empty((progs, n), dtype=K.acc_dtype(x))
    dw = x.new_empty(n)
    block = blk.next_power_of_2(n)
    m = K.module("rmsnorm")
    m.rmsnorm_bwd[(progs,)](dy, x, w, rstd, dh if dh is not None else dy, dx, partial, n, rows, n, progs,
                            float(offset), RESIDUAL=dh is not None, BLOCK=block, num_warps=K.warps(block), **ty)
    m.rmsnorm_bwd_dw[(blk.cdiv(n, 128),)](partial, dw, progs, n, BLOCK_M=32, BLOCK_N=128, **ty)
    return dx, dw if dw.dtype is weight.dtype else dw.to(weight.dtype)


@rms_norm_bwd.register_fake
def _(dy, x, weight, rstd, dh, offset):
    return torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(weight)


_rms_norm_bwd = K.eager(rms_norm_bwd)


def _setup(ctx, inputs, output):
    x, weight, _, offset = inputs
    ctx.save_for_backward(x, weight, output[1])
    ctx.offset = offset


def _backward(ctx, dy, _drstd):
    x, weight, rstd = ctx.saved_tensors
    dx, dw = _rms_norm_bwd(dy, x if x.is_contiguous() else x.contiguous(), weight, rstd, None, ctx.offset)
    return dx.view(x.shape), dw, None, None


rms_norm_fwd.register_autograd(_backward, setup_context=_setup)


def _setup_add(ctx, inputs, output):
    x, residual, weight, _, offset = inputs
    ctx.save_for_backward(output[1], weight, output[2])   # h, the normalized input
    ctx.offset, ctx.dtypes = offset, (x.dtype, residual.dtype)


def _backward_add(ctx, dy, dh, _drstd):
    h, weight, rstd = ctx.saved_tensors
    if dy is None:
        dy = torch.zeros_like(h)
    dx, dw = _rms_norm_bwd(dy, h, weight, rstd, dh, ctx.offset)
    dtx, dtr = ctx.dtypes
    return (dx if dx.dtype is dtx else dx.to(dtx)), (dx if dx.dtype is dtr else dx.to(dtr)), dw, None, None


add_rms_norm_fwd.register_autograd(_backward_add, setup_context=_setup_add)
_rms_norm = K.eager(rms_norm_fwd, _setup, _backward)
_add_rms_norm = K.eager(add_rms_norm_fwd, _setup_add, _backward_add)


def rms_norm(x, weight, eps=1e-6, offset=0.0):
    """x * rsqrt(mean(x^2, -1) + eps) * (weight + offset) over the last
    dimension (offset 0: Llama; 1.0: Gemma, whose weight is stored as w - 1).
    Differentiable in x and weight; saves x, weight and rstd (a float32 or,
    for float64 x, float64 per row)."""
    return _rms_norm(x, weight, float(eps), float(offset))[0]


def add_rms_norm(x, residual, weight, eps=1e-6, offset=0.0):
    """(rms_norm(x + residual, weight, eps, offset), x + residual) in one
    launch: the transformer's residual stream h = x + residual and its
    normalization. Differentiable in x, residual and weight; saves h,
    weight and rstd."""
    y, h, _ = _add_rms_norm(x, residual, weight, float(eps), float(offset))
    return y, h


class RMSNorm(torch.nn.Module):
    """torch.nn.RMSNorm's place for a last dimension of `hidden` elements:
    weight initialized to ones (zeros for gemma=True, which applies 1 +
    weight)."""

    def __init__(self, hidden, eps=1e-6, gemma=False, device=None, dtype=None):
        super().__init__()
        self.eps, self.offset = eps, 1.0 if gemma else 0.0
        init = torch.zeros if gemma else torch.ones
        self.weight = torch.nn.Parameter(init(hidden, device=device, dtype=dtype))

    def forward(self, x, residual=None):
        if residual is None:
            return rms_norm(x, self.weight, self.eps, self.offset)
        return add_rms_norm(x, residual, self.weight, self.eps, self.offset)
