"""blk.nn: cross-entropy with its gradient computed in the same launch as the
loss, over stdlib/nn/cross_entropy.tile, as a torch custom op with
autograd."""

from typing import Tuple

import torch
from torch import Tensor

from . import _kernels as K

BLOCK = 4096


@torch.library.custom_op("blk_nn::cross_entropy_fwd", mutates_args=())
def cross_entropy_fwd(logits: Tensor, target: Tensor, ignore_index: int, label_smoothing: float,
                      z_loss: float, softcap: float) -> Tuple[Tensor, Tensor]:
    """Each row's loss (float32, float64 for float64 logits) and its
    gradient with respect to the row's logits (logits' dtype)."""
    if logits.dim() != 2 or target.shape != logits.shape[:1]:
        raise ValueError(f"blk.nn.cross_entropy: logits {tuple(logits.shape)} and target {tuple(target.shape)}: "
                         f"(rows, classes) and (rows,) expected")
    ty = K.types(logits, "cross_entropy")
    logits = logits.contiguous()
    target = target.to(torch.int64).contiguous()
    rows, n = logits.shape
    loss = torch.empty(rows, dtype=K.acc_dtype(logits), device=logits.device)
    grad = torch.empty_like(logits)
    launch(logits, target, loss, grad, ty, ignore_index, label_smoothing, z_loss, softcap)
    return loss, grad


def launch(logits, target, loss, grad, ty, ignore_index, label_smoothing, z_loss, softcap, scale=None):
    """cross_entropy_fwd_bwd over contiguous logits (rows, n) and int64
    target: each row's loss into loss, its gradient into grad (which may be
    logits itself: each element is read before its gradient is stored),
    times scale (loss's dtype, contiguous): one element for every row, or
    one a row; None: not scaled."""
    rows, n = logits.shape
    if rows:
        # f64 (the tests' gradcheck) in chunks of half as many: no spills
        cap = BLOCK // 2 if ty["C"] == "f64" else BLOCK
        block = min(cap, max(16, 1 << (max(n, 1) - 1).bit_length()))
        mode = 0 if scale is None else 1 if scale.numel() == 1 else 2
        K.module("cross_entropy").cross_entropy_fwd_bwd[(rows,)](
            logits, target, loss, grad, loss if scale is None else scale, n, rows, n, int(ignore_index),
            float(label_smoothing), float(z_loss), float(softcap), SOFTCAP=softcap > 0, SCALE=mode, BLOCK=block,
            num_warps=K.warps(block), **ty)


@cross_entropy_fwd.register_fake
def _(logits, target, ignore_index, label_smoothing, z_loss, softcap):
    return (logits.new_empty(logits.shape[0], dtype=K.acc_dtype(logits)),
            torch.empty_like(logits, memory_format=torch.contiguous_format))


def _setup(ctx, inputs, output):
    ctx.save_for_backward(output[1])


@torch.library.custom_op("blk_nn::cross_entropy_scale_rows", mutates_args=())
def cross_entropy_scale_rows(grad: Tensor, dloss: Tensor) -> Tensor:
    """grad[r, :] * dloss[r] computed in the accumulator's type and rounded
    once to grad's dtype: one pass over grad (torch's grad * dloss[:, None]
    makes a float32 tensor of its size and converts it again)."""
    ty = K.types(grad, "cross_entropy")
    grad = grad.contiguous()
    rows, n = grad.shape
    out = torch.empty_like(grad)
    if rows and n:
        dloss = dloss.to(K.acc_dtype(grad)).contiguous()
        block = 4096 if ty["C"] != "f64" else 2048
        K.module("cross_entropy").cross_entropy_scale_rows[(rows, -(-n // block))](
            grad, dloss, out, n, rows, n, BLOCK=block, num_warps=4, **ty)
    return out


@cross_entropy_scale_rows.register_fake
def _(grad, dloss):
    return torch.empty_like(grad, memory_format=torch.contiguous_format)


def _backward(ctx, dloss, _dgrad):
    (grad,) = ctx.saved_tensors
    return cross_entropy_scale_rows(grad, dloss), None, None, None, None, None


cross_entropy_fwd.register_autograd(_backward, setup_context=_setup)


def cross_entropy(logits, target, ignore_index=-100, reduction="mean", label_smoothing=0.0, z_loss=0.0,
                  softcap=None):
    """torch.nn.functional.cross_entropy for logits (rows, classes) and class
    indices target (rows,): ignore_index, label_smoothing, reduction "mean"
    (over the rows not ignored), "sum" or "none"; z_loss adds z_loss *
    logsumexp(row)^2 to each row's loss (PaLM's z-loss); softcap (> 0) first
    maps the logits to softcap * tanh(logits / softcap) (Gemma 2). The gradient is computed
    with the loss, in the same launch, and saved (rows x classes, the
    logits' dtype) instead of the logits; the backward scales it. No host
    sync: "mean" divides by the count of rows kept as a tensor."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"blk.nn.cross_entropy: reduction {reduction!r}; 'mean', 'sum' or 'none'")
    if softcap is not None and not softcap > 0:
        raise ValueError(f"blk.nn.cross_entropy: softcap {softcap!r}; a positive number or None")
    loss, _ = cross_entropy_fwd(logits, target, int(ignore_index), float(label_smoothing), float(z_loss),
                                float(softcap or 0.0))
    if reduction == "none":
        return loss.to(logits.dtype)
    total = loss.sum()
    if reduction == "mean":
        total = total / (target != ignore_index).sum()
    return total.to(logits.dtype)
