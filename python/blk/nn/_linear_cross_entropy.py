"""blk.nn: cross-entropy of a linear layer's output (the language model head)
without the whole logits: rows in chunks, each chunk's logits made by
torch.matmul and turned into its loss and gradient in place by
stdlib/nn/cross_entropy.tile, the gradients of x, weight and bias made from
it at once. A torch custom op with autograd."""

import weakref
from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _kernels as K
from ._cross_entropy import launch

REDUCTIONS = ("mean", "sum", "none")


def chunk_rows_for(rows, hidden, vocab, exact=False):
    """Rows a chunk when none is given, a power of two (at least 1, at most
    the next power of two of rows). Summing the weight's gradient in its own
    dtype (exact False), the chunk's logits (chunk x vocab) hold about as
    many elements as x (rows x hidden): the extra memory is about x's size
    (8192 x 4096 x 128256: 256 rows, 63 MiB of bf16 logits). With exact
    (a float32 sum), at least half the weight's rows: each chunk adds its
    share into the float32 gradient, a pass over it, so chunks of a few
    hundred rows would make that sum cost more than the matmuls (2048 rows
    there)."""
    per = max(1, -(-vocab // max(hidden, 1)))            # vocab / hidden, rounded up
    want = max(1, -(-max(rows, 1) // per), max(hidden, 1) // 2 if exact else 1)
    want = min(want, max(rows, 1))
    return 1 << (want - 1).bit_length()


def _check(x, weight, target, bias):
    if x.dim() != 2 or weight.dim() != 2 or x.shape[1] != weight.shape[1] or target.shape != x.shape[:1]:
        raise ValueError(f"blk.nn.linear_cross_entropy: x {tuple(x.shape)}, weight {tuple(weight.shape)}, "
                         f"target {tuple(target.shape)}: (rows, hidden), (vocab, hidden) and (rows,) expected")
    if weight.dtype != x.dtype or (bias is not None and bias.dtype != x.dtype):
        raise ValueError(f"blk.nn.linear_cross_entropy: x {x.dtype}, weight {weight.dtype}"
                         f"{'' if bias is None else f', bias {bias.dtype}'}: one dtype expected")
    if bias is not None and bias.shape != weight.shape[:1]:
        raise ValueError(f"blk.nn.linear_cross_entropy: bias {tuple(bias.shape)} for weight "
                         f"{tuple(weight.shape)}: (vocab,) expected")
    return K.types(x, "linear_cross_entropy")


def _chunks(x, weight, target, bias, ignore_index, label_smoothing, z_loss, softcap, chunk_rows, exact, scale,
            need):
    """The per-row losses (acc dtype) and the gradients of sum_r s_r *
    loss[r] with respect to x, weight and bias (float32 for f16/bf16: the
    accumulator), each only where need (three bools) asks for it (else
    None); s_r is scale[r] (scale of one a row), scale[0] (one element) or 1
    (None). The weight's gradient is summed over the chunks in the weight's
    dtype (each chunk's product added by one addmm, f32 inside, rounded once
    a chunk), or in float32 with exact. The kernel multiplies each logit's
    gradient by s_r before rounding it (overwriting the logits, which go
    unused when no gradient is needed)."""
    ty = _check(x, weight, target, bias)
    x, weight = x.contiguous(), weight.contiguous()
    target = target.to(torch.int64).contiguous()
    rows, hidden = x.shape
    vocab = weight.shape[0]
    # f32 (f64) accumulators for the bias and, with exact, the weight
    acc = weight.dtype if weight.dtype in (torch.float32, torch.float64) else torch.float32
    wacc = acc if exact else weight.dtype
    loss = torch.empty(rows, dtype=K.acc_dtype(x), device=x.device)
    gx = torch.empty_like(x) if need[0] else None
    gw = None
    if need[1]:   # the first chunk's product is written over it (no zero fill): zeros only with no rows
        gw = (torch.empty if rows else torch.zeros)(weight.shape, dtype=wacc, device=x.device)
    gb = torch.zeros(vocab, dtype=acc, device=x.device) if need[2] and bias is not None else None
    step = chunk_rows if chunk_rows > 0 else chunk_rows_for(rows, hidden, vocab, exact)
    wt = weight.t()
    for start in range(0, rows, step):
        end = min(rows, start + step)
        xc = x[start:end]
        logits = torch.addmm(bias, xc, wt) if bias is not None else torch.mm(xc, wt)
        # loss and gradient of the chunk's logits, the gradient over them
        launch(logits, target[start:end], loss[start:end], logits, ty, ignore_index, label_smoothing, z_loss,
               softcap, scale if scale is None or scale.numel() == 1 else scale[start:end])
        if gx is not None:
            torch.mm(logits, weight, out=gx[start:end])
        if gw is not None and wacc == weight.dtype:
            if start == 0:
                torch.mm(logits.t(), xc, out=gw)
            else:
                gw.addmm_(logits.t(), xc)
        elif gw is not None:
            prod = torch.mm(logits.t(), xc)
            if start == 0:
                gw.copy_(prod)
            else:
                gw.add_(prod)
        if gb is not None:
            gb.add_(logits.sum(0, dtype=acc))
        del logits   # before the next chunk's are made: one chunk at a time
    return loss, gx, gw, gb


def _grads_out(x, weight, bias, gx, gw, gb):
    """The gradients as the ops return them: in the inputs' dtypes, an
    empty tensor for each not computed."""
    return (gx if gx is not None else x.new_empty(0), gw.to(weight.dtype) if gw is not None else weight.new_empty(0),
            gb.to(bias.dtype) if gb is not None else x.new_empty(0))


def _grads_fake(x, weight, bias, need):
    def like(t, n):
        return torch.empty_like(t, memory_format=torch.contiguous_format) if n and t is not None else x.new_empty(0)
    return like(x, need[0]), like(weight, need[1]), like(bias, need[2])


@torch.library.custom_op("blk_nn::linear_cross_entropy_fwd", mutates_args=())
def linear_cross_entropy_fwd(x: Tensor, weight: Tensor, target: Tensor, bias: Optional[Tensor],
                             ignore_index: int, label_smoothing: float, z_loss: float, softcap: float,
                             reduction: str, chunk_rows: int, exact: bool, grad_x: bool, grad_weight: bool,
                             grad_bias: bool) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """The loss of cross_entropy(x @ weight.T + bias, target) reduced
    ("mean", "sum": a 0-d tensor; "none": (rows,)), float32 (float64 for
    float64 x); and, for "mean" and "sum", the gradients of that loss with
    respect to x, weight and bias that grad_x, grad_weight, grad_bias ask
    for (in their dtypes; an empty tensor for each other, and for all three
    with "none")."""
    keep = (target != ignore_index).sum()
    need = (grad_x, grad_weight, grad_bias) if reduction != "none" else (False, False, False)
    # "mean": the kernel scales each gradient by 1 / count (a tensor: no sync; every row ignored gives a nan
    # loss, as torch, and gradients 0)
    scale = (1.0 / keep.clamp(min=1).to(K.acc_dtype(x))).reshape(1) if reduction == "mean" and any(need) else None
    loss, gx, gw, gb = _chunks(x, weight, target, bias, ignore_index, label_smoothing, z_loss, softcap, chunk_rows,
                               exact, scale, need)
    if reduction != "none":
        loss = loss.sum() / keep if reduction == "mean" else loss.sum()
    return (loss,) + _grads_out(x, weight, bias, gx, gw, gb)


@linear_cross_entropy_fwd.register_fake
def _(x, weight, target, bias, ignore_index, label_smoothing, z_loss, softcap, reduction, chunk_rows, exact, grad_x,
      grad_weight, grad_bias):
    acc = K.acc_dtype(x)
    loss = x.new_empty(x.shape[0], dtype=acc) if reduction == "none" else x.new_empty((), dtype=acc)
    need = (grad_x, grad_weight, grad_bias) if reduction != "none" else (False, False, False)
    return (loss,) + _grads_fake(x, weight, bias, need)


@torch.library.custom_op("blk_nn::linear_cross_entropy_bwd", mutates_args=())
def linear_cross_entropy_bwd(dloss: Tensor, x: Tensor, weight: Tensor, target: Tensor, bias: Optional[Tensor],
                             ignore_index: int, label_smoothing: float, z_loss: float, softcap: float,
                             chunk_rows: int, exact: bool, grad_x: bool, grad_weight: bool,
                             grad_bias: bool) -> Tuple[Tensor, Tensor, Tensor]:
    """reduction "none"'s backward: the logits made again chunk by chunk,
    each row's gradient scaled by dloss[row] in the kernel; the gradients
    of x, weight and bias asked for (an empty tensor for each other)."""
    scale = dloss.to(K.acc_dtype(x)).reshape(-1).contiguous()
    _, gx, gw, gb = _chunks(x, weight, target, bias, ignore_index, label_smoothing, z_loss, softcap, chunk_rows,
                            exact, scale, (grad_x, grad_weight, grad_bias))
    return _grads_out(x, weight, bias, gx, gw, gb)


@linear_cross_entropy_bwd.register_fake
def _(dloss, x, weight, target, bias, ignore_index, label_smoothing, z_loss, softcap, chunk_rows, exact, grad_x,
      grad_weight, grad_bias):
    return _grads_fake(x, weight, bias, (grad_x, grad_weight, grad_bias))


def _setup(ctx, inputs, output):
    x, weight, target, bias, ignore_index, label_smoothing, z_loss, softcap, reduction, chunk_rows, exact = inputs[:11]
    # only the loss is used: no zero gradients made for the other outputs (the weight's size)
    ctx.set_materialize_grads(False)
    ctx.reduction = reduction
    ctx.need = inputs[11:14] if reduction != "none" else (False, False, False)
    ctx.has_bias = bias is not None
    ctx.args = (ignore_index, label_smoothing, z_loss, softcap, chunk_rows, exact)
    if reduction == "none" or K.tracing():
        ctx.save_for_backward(x, weight, target, bias)
        ctx.refs = None
    else:
        # x, weight and bias only for a second backward: the weight and bias not kept alive for it (autocast's
        # bf16 copy of the weight would cost the weight's size until the backward), weak references and their
        # versions instead
        ctx.save_for_backward(x, target)
        ctx.refs = [(weakref.ref(t), t._version) if t is not None else None for t in (weight, bias)]
    # the gradients made in the forward, held apart from save_for_backward (the backward scales them in place)
    # and detached (an output kept on ctx with its grad_fn would be a reference cycle)
    ctx.grads = None if reduction == "none" else [g.detach() for g in output[1:]]


def _alive(refs):
    """weight and bias from the weak references of _setup, each alive and unchanged, else an error."""
    got = []
    for r, name in zip(refs, ("weight", "bias")):
        t = r[0]() if r is not None else None
        if r is not None and (t is None or t._version != r[1]):
            raise RuntimeError(f"blk.nn.linear_cross_entropy: a second backward through the same graph "
                               f"(retain_graph=True) makes the gradients again from x and weight, and the {name} is "
                               f"{'gone' if t is None else 'changed in place'} since the forward (keep it, unchanged, "
                               f"to run the backward twice)")
        got.append(t)
    return got


SCALE_BLOCK = 2048
SCALE_PROGRAMS = 4096   # a grid-stride walk: 31 programs a multiprocessor of an H100 or H200


def _scale_(g, dloss):
    """g *= dloss (a one-element tensor) in place, in one kernel (the product
    in float32 for 16-bit g, rounded once; torch's mul_ of a bf16 tensor by a
    float32 scalar tensor takes its slow, unvectorized path: 4x the time),
    which leaves g as it is, on the device, where dloss is 1."""
    ty = K.types(g, "linear_cross_entropy")
    s = dloss.detach().reshape(1).to(K.acc_dtype(g))
    n = g.numel()
    progs = min(-(-n // SCALE_BLOCK), SCALE_PROGRAMS)
    K.module("cross_entropy").scale_inplace[(progs,)](g, s, n, BLOCK=SCALE_BLOCK, num_warps=4, **ty)
    return g


def _backward(ctx, dloss, _dx, _dw, _db):
    if dloss is None:
        return (None,) * 14
    want = (ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.has_bias and ctx.needs_input_grad[3])
    if ctx.grads is not None:
        # the first backward: the saved gradients scaled in place on the device, whatever dloss holds (no
        # sync, no copy of the weight's size), and let go of (else the engine would copy them into .grad)
        # (traced for torch.compile, out of place: the graph's own buffers)
        inplace = not K.tracing()
        got, ctx.grads = [(_scale_(g, dloss) if inplace else (g * dloss).to(g.dtype)) if g.numel() else g
                          for g in ctx.grads], None
        have = ctx.need[0], ctx.need[1], ctx.need[2] and ctx.has_bias
    else:
        # "none", or a second backward through the graph (retain_graph): the logits made again, each row's
        # gradient scaled by its incoming gradient in the kernel
        if ctx.refs is None:
            x, weight, target, bias = ctx.saved_tensors
        else:
            x, target = ctx.saved_tensors
            weight, bias = _alive(ctx.refs)
        scale = dloss
        if ctx.reduction == "mean":
            scale = dloss / (target != ctx.args[0]).sum().clamp(min=1).to(dloss.dtype)
        got = _linear_cross_entropy_bwd(scale.reshape(-1), x, weight, target, bias, *ctx.args, *want)
        have = want
    for w, h, name in zip(want, have, ("x", "weight", "bias")):
        if w and not h:
            raise RuntimeError(f"blk.nn.linear_cross_entropy: the gradient of {name} was not computed in the "
                               f"forward (it did not require one then)")
    gx, gw, gb = (g if h else None for g, h in zip(got, have))
    return (gx, gw, None, gb) + (None,) * 10


linear_cross_entropy_fwd.register_autograd(_backward, setup_context=_setup)
# the ops as called: the custom ops where traced, else without their dispatch (_kernels.eager)
_linear_cross_entropy = K.eager(linear_cross_entropy_fwd, _setup, _backward)
_linear_cross_entropy_bwd = K.eager(linear_cross_entropy_bwd)


def linear_cross_entropy(x, weight, target, bias=None, ignore_index=-100, label_smoothing=0.0, z_loss=0.0,
                         softcap=None, reduction="mean", chunk_rows=None, exact=False):
    """cross_entropy(x @ weight.T + bias, target, ...) (blk.nn.cross_entropy's
    options: ignore_index, label_smoothing, z_loss, softcap, reduction) for
    x (..., hidden), weight (vocab, hidden), bias (vocab,) or None, target
    x.shape[:-1] class indices, without the whole (rows x vocab) logits.

    Rows go chunk_rows at a time (default: a power of two such that a
    chunk's logits are about as large as x, or half the weight; see
    chunk_rows_for); each
    chunk's logits are torch.matmul's (x's dtype; float32 accumulation for
    f16/bf16, as torch), blk's cross-entropy kernel overwrites them with
    their gradient in the same launch as the loss, and the gradients of x
    (that chunk's rows), weight and bias (summed over chunks in float32 for
    f16/bf16) are made at once, in the forward. The backward multiplies
    them by the incoming gradient, on the device. reduction "none" keeps
    no gradients in the forward (each row's own scale is known only in the
    backward): its backward makes the logits again, chunk by chunk. The
    forward computes the gradients only when one of x, weight, bias
    requires one and grad mode is on. No host sync."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"blk.nn.linear_cross_entropy: reduction {reduction!r}; 'mean', 'sum' or 'none'")
    if softcap is not None and not softcap > 0:
        raise ValueError(f"blk.nn.linear_cross_entropy: softcap {softcap!r}; a positive number or None")
    if chunk_rows is not None and int(chunk_rows) < 1:
        raise ValueError(f"blk.nn.linear_cross_entropy: chunk_rows {chunk_rows!r}; a positive int or None")
    lead = x.shape[:-1]
    x2 = x.reshape(-1, x.shape[-1])
    t2 = target.reshape(-1)
    on = torch.is_grad_enabled()
    loss, _, _, _ = _linear_cross_entropy(x2, weight, t2, bias, int(ignore_index), float(label_smoothing),
                                          float(z_loss), float(softcap or 0.0), reduction,
                                          int(chunk_rows or 0), bool(exact), on and x.requires_grad,
                                          on and weight.requires_grad,
                                          on and bias is not None and bias.requires_grad)
    if reduction == "none":
        loss = loss.view(lead)
    return loss.to(x.dtype)


class LinearCrossEntropy(torch.nn.Module):
    """A language model head and its loss: a weight (vocab, hidden) (and a
    bias with bias=True), forward(x, target) = linear_cross_entropy(x,
    self.weight, target, self.bias, ...) with the options given here."""

    def __init__(self, hidden, vocab, bias=False, ignore_index=-100, label_smoothing=0.0, z_loss=0.0,
                 softcap=None, reduction="mean", chunk_rows=None, device=None, dtype=None):
        super().__init__()
        lin = torch.nn.Linear(hidden, vocab, bias=bias, device=device, dtype=dtype)
        self.weight = lin.weight
        self.bias = lin.bias
        self.options = dict(ignore_index=ignore_index, label_smoothing=label_smoothing, z_loss=z_loss,
                            softcap=softcap, reduction=reduction, chunk_rows=chunk_rows)

    def forward(self, x, target):
        return linear_cross_entropy(x, self.weight, target, self.bias, **self.options)
