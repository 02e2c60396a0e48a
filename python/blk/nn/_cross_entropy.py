"""blk.nn: cross-entropy over stdlib/nn/cross_entropy.tile, as torch custom
ops with autograd: the forward reads the logits once (loss and logsumexp
per row), the backward reads them once and writes the gradient. launch()
(the loss and gradient in one launch) is the fused linear cross-entropy's."""

from typing import Tuple

import torch
from torch import Tensor

import blk
from . import _kernels as K

BLOCK = 4096


@torch.library.custom_op("blk_nn::cross_entropy_loss", mutates_args=())
def cross_entropy_fwd(logits: Tensor, target: Tensor, ignore_index: int, label_smoothing: float,
                      z_loss: float, softcap: float) -> Tuple[Tensor, Tensor]:
    """Each row's loss and its logsumexp (of the capped logits with
    softcap; 0 on an ignored row), float32 (float64 for float64 logits):
    one read of the logits (cross_entropy_loss)."""
    if logits.dim() != 2 or target.shape != logits.shape[:1]:
        raise ValueError(f"blk.nn.cross_entropy: logits {tuple(logits.shape)} and target {tuple(target.shape)}: "
                         f"(rows, classes) and (rows,) expected")
    ty = K.types(logits, "cross_entropy")
    logits = logits.contiguous()
    target = target.to(torch.int64).contiguous()
    rows, n = logits.shape
    loss = torch.empty(rows, dtype=K.acc_dtype(logits), device=logits.device)
    lse = torch.empty_like(loss)
    if rows:
        block = _block(n, ty)
        K.module("cross_entropy").cross_entropy_loss[(rows,)](
            logits, target, loss, lse, n, rows, n, int(ignore_index), float(label_smoothing), float(z_loss),
            float(softcap), SOFTCAP=softcap > 0, SMOOTH=label_smoothing != 0, BLOCK=block,
            num_warps=8 if block >= 2048 else 4, **ty)
    return loss, lse


def _block(n, ty):
    """Columns a step for a row of n: 4096 (2048 in f64: no spills), fewer
    for a short row."""
    cap = BLOCK // 2 if ty["C"] == "f64" else BLOCK
    return min(cap, max(16, 1 << (max(n, 1) - 1).bit_length()))


def launch(logits, target, loss, grad, ty, ignore_index, label_smoothing, z_loss, softcap, scale=None):
    """cross_entropy_fwd_bwd over contiguous logits (rows, n) and int64
    target: each row's loss into loss, its gradient into grad (which may be
    logits itself: each element is read before its gradient is stored),
    times scale (loss's dtype, contiguous): one element for every row, or
    one a row; None: not scaled."""
    rows, n = logits.shape
    if rows:
        # long rows (a vocabulary of 128k) a wider step on 32 warps: a row's two passes are the program's
        # whole work, and the fused linear cross-entropy's chunks have few rows (H200: 256 x 128256 bf16
        # 66 us against 81 at 4096 columns on 8 warps)
        block = 16384 if n >= 65536 and ty["C"] != "f64" else _block(n, ty)
        mode = 0 if scale is None else 1 if scale.numel() == 1 else 2
        K.module("cross_entropy").cross_entropy_fwd_bwd[(rows,)](
            logits, target, loss, grad, loss if scale is None else scale, n, rows, n, int(ignore_index),
            float(label_smoothing), float(z_loss), float(softcap), SOFTCAP=softcap > 0, SCALE=mode, BLOCK=block,
            num_warps=K.warps(block), **ty)


@cross_entropy_fwd.register_fake
def _(logits, target, ignore_index, label_smoothing, z_loss, softcap):
    acc = K.acc_dtype(logits)
    return logits.new_empty(logits.shape[0], dtype=acc), logits.new_empty(logits.shape[0], dtype=acc)


@torch.library.custom_op("blk_nn::cross_entropy_bwd", mutates_args=())
def cross_entropy_bwd(logits: Tensor, target: Tensor, lse: Tensor, dloss: Tensor, ignore_index: int,
                      label_smoothing: float, z_loss: float, softcap: float) -> Tensor:
    """The gradient with respect to the logits of sum_r dloss[r] * loss[r],
    from the logits and the lse cross_entropy_fwd gave (logits' dtype, the
    arithmetic in float32): one read of the logits, one write
    (cross_entropy_grad). dloss: (rows,), any stride (0: expanded)."""
    ty = K.types(logits, "cross_entropy")
    logits = logits.contiguous()
    target = target.to(torch.int64).contiguous()
    rows, n = logits.shape
    out = torch.empty_like(logits, memory_format=torch.contiguous_format)
    if rows and n:
        dloss = dloss.to(K.acc_dtype(logits))
        if dloss.dim() != 1:
            dloss = dloss.reshape(rows)
        block = _block(n, ty)
        K.module("cross_entropy").cross_entropy_grad[(rows, -(-n // block))](
            logits, target, lse.contiguous(), blk.strided(dloss), out, n, dloss.stride(0), rows, n,
            int(ignore_index), float(label_smoothing), float(z_loss), float(softcap), SOFTCAP=softcap > 0,
            BLOCK=block, num_warps=4, **ty)
    return out


@cross_entropy_bwd.register_fake
def _(logits, target, lse, dloss, ignore_index, label_smoothing, z_loss, softcap):
    return torch.empty_like(logits, memory_format=torch.contiguous_format)


def _setup(ctx, inputs, output):
    logits, target, *options = inputs
    ctx.save_for_backward(logits, target, output[1])
    ctx.options = options
    ctx.mark_non_differentiable(output[1])   # lse: no zero gradient made for it


def _backward(ctx, dloss, _dlse):
    logits, target, lse = ctx.saved_tensors
    if dloss is None:
        return (None,) * 6
    return _cross_entropy_bwd(logits, target, lse, dloss, *ctx.options), None, None, None, None, None


cross_entropy_fwd.register_autograd(_backward, setup_context=_setup)
# the ops as called: the custom ops where traced, else without their dispatch (_kernels.eager)
cross_entropy_op = K.eager(cross_entropy_fwd, _setup, _backward)
_cross_entropy_bwd = K.eager(cross_entropy_bwd)


def cross_entropy(logits, target, ignore_index=-100, reduction="mean", label_smoothing=0.0, z_loss=0.0,
                  softcap=None):
    """torch.nn.functional.cross_entropy for logits (rows, classes) and class
    indices target (rows,): ignore_index, label_smoothing, reduction "mean"
    (over the rows not ignored), "sum" or "none"; z_loss adds z_loss *
    logsumexp(row)^2 to each row's loss (PaLM's z-loss); softcap (> 0) first
    maps the logits to softcap * tanh(logits / softcap) (Gemma 2). The
    forward reads the logits once and saves them with each row's
    logsumexp; the backward reads them once more and writes the gradient
    times the incoming one (any value: no host sync, no in-place write
    over the logits). "mean" divides by the count of rows kept as a tensor
    (no host sync)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"blk.nn.cross_entropy: reduction {reduction!r}; 'mean', 'sum' or 'none'")
    if softcap is not None and not softcap > 0:
        raise ValueError(f"blk.nn.cross_entropy: softcap {softcap!r}; a positive number or None")
    loss, _ = cross_entropy_op(logits, target, int(ignore_index), float(label_smoothing), float(z_loss),
                               float(softcap or 0.0))
    if reduction == "none":
        return loss.to(logits.dtype)
    total = loss.sum()
    if reduction == "mean":
        total = total / (target != ignore_index).sum()
    return total.to(logits.dtype)
