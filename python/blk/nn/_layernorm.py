"""blk.nn: LayerNorm over the last dimension, weight and bias each optional,
over stdlib/nn/layernorm.tile, as torch custom ops with autograd."""

from typing import Optional, Tuple

import torch
from torch import Tensor

import blk
from . import _kernels as K

MAX_COLS = 65536  # a row is held in one block of registers


def _rows(x, weight, bias):
    n = x.shape[-1] if x.dim() else None
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (n is None or p.dim() != 1 or p.shape[0] != n):
            raise ValueError(f"blk.nn.layer_norm: {name} of shape {tuple(p.shape)} for input of shape "
                             f"{tuple(x.shape)}: one of the last dimension ({n if n is not None else '?'}) expected")
    if n is None:
        raise ValueError("blk.nn.layer_norm: a 0-dimensional input; it normalizes the last dimension")
    if n > MAX_COLS:
        raise ValueError(f"blk.nn.layer_norm: rows of {n} elements; at most {MAX_COLS}")
    return x.numel() // max(n, 1), n


@torch.library.custom_op("blk_nn::layer_norm_fwd", mutates_args=())
def layer_norm_fwd(x: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
                   eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    """y, and the mean and rstd of each row (float32; float64 for float64 x)."""
    if not x.is_contiguous():
        x = x.contiguous()
    rows, n = _rows(x, weight, bias)
    ty = K.types(x, "layer_norm")
    w = K.like(weight, x.dtype) if weight is not None else x
    b = K.like(bias, x.dtype) if bias is not None else x
    y = torch.empty_like(x)
    mean = x.new_empty(rows, dtype=K.acc_dtype(x))
    rstd = torch.empty_like(mean)
    block = blk.next_power_of_2(n)
    if rows:
        K.module("layernorm").layernorm_fwd[(rows,)](
            x, w, b, y, mean, rstd, n, rows, n, float(eps), HAS_W=weight is not None, HAS_B=bias is not None,
            BLOCK=block, num_warps=K.warps(block), **ty)
    return y, mean, rstd


@layer_norm_fwd.register_fake
def _(x, weight, bias, eps):
    rows = x.numel() // max(x.shape[-1], 1)
    stat = x.new_empty(rows, dtype=K.acc_dtype(x))
    return torch.empty_like(x, memory_format=torch.contiguous_format), stat, torch.empty_like(stat)


def _column_sum(partial, like, n, ty):
    """The rows of partial (progs x n, the arithmetic type) added up into a
    tensor of like's dtype (rmsnorm.tile's reduction: deterministic)."""
    out = partial.new_empty(n, dtype=like.dtype)
    K.module("rmsnorm").rmsnorm_bwd_dw[(blk.cdiv(n, 128),)](
        partial, out, partial.shape[0], n, T=K.types(like, "layer_norm")["T"], C=ty["C"], BLOCK_M=32,
        BLOCK_N=128)
    return out


@torch.library.custom_op("blk_nn::layer_norm_bwd", mutates_args=())
def layer_norm_bwd(dy: Tensor, x: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], mean: Tensor,
                   rstd: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """dx, dweight and dbias (each in its tensor's dtype; an empty tensor
    where weight or bias is None) for the forward that saved mean and rstd."""
    if not x.is_contiguous():
        x = x.contiguous()
    dy = K.like(dy, x.dtype)
    rows, n = _rows(x, weight, bias)
    ty = K.types(x, "layer_norm")
    w = K.like(weight, x.dtype) if weight is not None else x
    dx = torch.empty_like(x)
    progs = K.programs(x, rows)
    acc = K.acc_dtype(x)
    pdw = x.new_empty((progs, n), dtype=acc) if weight is not None else None
    pdb = x.new_empty((progs, n), dtype=acc) if bias is not None else None
    block = blk.next_power_of_2(n)
    if rows:
        some = pdw if pdw is not None else pdb if pdb is not None else mean
        K.module("layernorm").layernorm_bwd[(progs,)](
            dy, x, w, mean, rstd, dx, pdw if pdw is not None else some, pdb if pdb is not None else some, n,
            rows, n, progs, HAS_W=weight is not None, HAS_B=bias is not None, BLOCK=block,
            num_warps=K.warps(block), **ty)
    elif pdw is not None or pdb is not None:   # no rows: sums of nothing
        pdw = pdw.new_zeros(1, n) if pdw is not None else None
        pdb = pdb.new_zeros(1, n) if pdb is not None else None
    dw = _column_sum(pdw, weight, n, ty) if weight is not None else x.new_empty(0)
    db = _column_sum(pdb, bias, n, ty) if bias is not None else x.new_empty(0)
    return dx, dw, db


@layer_norm_bwd.register_fake
def _(dy, x, weight, bias, mean, rstd):
    dx = torch.empty_like(x, memory_format=torch.contiguous_format)
    return (dx, torch.empty_like(weight) if weight is not None else x.new_empty(0),
            torch.empty_like(bias) if bias is not None else x.new_empty(0))


_layer_norm_bwd = K.eager(layer_norm_bwd)


def _setup(ctx, inputs, output):
    x, weight, bias, _ = inputs
    ctx.save_for_backward(x, weight, bias, output[1], output[2])


def _backward(ctx, dy, _dmean, _drstd):
    x, weight, bias, mean, rstd = ctx.saved_tensors
    dx, dw, db = _layer_norm_bwd(dy, x, weight, bias, mean, rstd)
    return (dx.view(x.shape), dw if weight is not None else None, db if bias is not None else None, None)


layer_norm_fwd.register_autograd(_backward, setup_context=_setup)
_layer_norm = K.eager(layer_norm_fwd, _setup, _backward)


def layer_norm(x, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm over the last dimension:
    (x - mean) / sqrt(var + eps) * weight + bias, var the biased variance;
    weight and bias each optional. Differentiable in x, weight and bias;
    saves x, weight, bias (for its dtype) and each row's mean and rstd
    (float32; float64 for float64 x)."""
    return _layer_norm(x, weight, bias, float(eps))[0]


class LayerNorm(torch.nn.Module):
    """torch.nn.LayerNorm's place for a last dimension of `hidden` elements:
    weight ones and bias zeros (elementwise_affine=False: neither;
    bias=False: no bias)."""

    def __init__(self, hidden, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.eps = eps
        affine = elementwise_affine
        self.register_parameter("weight", torch.nn.Parameter(torch.ones(hidden, device=device, dtype=dtype))
                                if affine else None)
        self.register_parameter("bias", torch.nn.Parameter(torch.zeros(hidden, device=device, dtype=dtype))
                                if affine and bias else None)

    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.eps)
