"""blk.nn: the losses of distillation, KL divergence (torch's kl_div) and the
generalized Jensen-Shannon divergence of student and teacher logits, over
stdlib/nn/distill.tile, as torch custom ops with autograd."""

from typing import Optional, Tuple

import torch
from torch import Tensor

import blk
from . import _kernels as K

KL_BLOCK = 1024
JSD_BLOCK = 4096
KL_REDUCTIONS = ("none", "batchmean", "sum", "mean")


def _kl_check(x, y):
    if x.shape != y.shape or x.dtype != y.dtype or x.device != y.device:
        raise ValueError(f"blk.nn.kl_div: input {tuple(x.shape)} {x.dtype} on {x.device}, target "
                         f"{tuple(y.shape)} {y.dtype} on {y.device}: one shape, dtype and device expected")
    return K.types(x, "kl_div")


@torch.library.custom_op("blk_nn::kl_div_fwd", mutates_args=())
def kl_div_fwd(x: Tensor, y: Tensor, log_target: bool, pointwise: bool) -> Tensor:
    """pointwise: each element's loss (x's shape and dtype); else the sum of
    them all, a 0-d float32 (float64 for float64 x)."""
    ty = _kl_check(x, y)
    if not x.is_contiguous():
        x = x.contiguous()
    if not y.is_contiguous():
        y = y.contiguous()
    n = x.numel()
    programs = blk.cdiv(n, KL_BLOCK)
    out = torch.empty_like(x) if pointwise else x.new_empty(0)
    # one partial sum a program (unused, one element, when pointwise)
    partial = x.new_empty(1 if pointwise else programs, dtype=K.acc_dtype(x))
    if n:
        K.module("distill").kl_div_fwd[(programs,)](x, y, out if pointwise else x, partial, n,
                                                     LOG_TARGET=log_target, POINTWISE=pointwise, BLOCK=KL_BLOCK,
                                                     **ty)
    return out if pointwise else partial.sum()


@kl_div_fwd.register_fake
def _(x, y, log_target, pointwise):
    if pointwise:
        return torch.empty_like(x, memory_format=torch.contiguous_format)
    return x.new_empty((), dtype=K.acc_dtype(x))


@torch.library.custom_op("blk_nn::kl_div_bwd", mutates_args=())
def kl_div_bwd(g: Tensor, x: Tensor, y: Tensor, log_target: bool, pointwise: bool,
               target_grad: bool) -> Tuple[Tensor, Tensor]:
    """The gradients of the KL divergence with respect to x and (with
    target_grad; else an empty tensor) y, for g the incoming gradient: of
    x's shape (pointwise: each element's), or one element (the sum's)."""
    ty = _kl_check(x, y)
    if not x.is_contiguous():
        x = x.contiguous()
    if not y.is_contiguous():
        y = y.contiguous()
    g = K.like(g, x.dtype)
    dx = torch.empty_like(x)
    dy = torch.empty_like(y) if target_grad else y.new_empty(0)
    n = x.numel()
    if n:
        K.module("distill").kl_div_bwd[(blk.cdiv(n, KL_BLOCK),)](
            g, x, y, dx, dy if target_grad else dx, n, LOG_TARGET=log_target, POINTWISE=pointwise,
            TARGET_GRAD=target_grad, BLOCK=KL_BLOCK, **ty)
    return dx, dy


@kl_div_bwd.register_fake
def _(g, x, y, log_target, pointwise, target_grad):
    dx = torch.empty_like(x, memory_format=torch.contiguous_format)
    return dx, (torch.empty_like(dx) if target_grad else y.new_empty(0))


_kl_div_bwd = K.eager(kl_div_bwd)


def _kl_setup(ctx, inputs, output):
    x, y, log_target, pointwise = inputs
    ctx.save_for_backward(x, y)
    ctx.log_target, ctx.pointwise = log_target, pointwise


def _kl_backward(ctx, g):
    x, y = ctx.saved_tensors
    target_grad = ctx.needs_input_grad[1]
    dx, dy = _kl_div_bwd(g if ctx.pointwise else g.reshape(1), x, y, ctx.log_target, ctx.pointwise, target_grad)
    return dx.view(x.shape), (dy.view(y.shape) if target_grad else None), None, None


kl_div_fwd.register_autograd(_kl_backward, setup_context=_kl_setup)
_kl_div = K.eager(kl_div_fwd, _kl_setup, _kl_backward)


def kl_div(input_logprobs, target, reduction="batchmean", log_target=False):
    """torch.nn.functional.kl_div(input_logprobs, target, reduction,
    log_target=log_target): the element-wise target * (log(target) - input)
    (0 where target is 0), or exp(target) * (target - input) with
    log_target, summed ("sum"), divided by input.shape[0] ("batchmean", the
    default here: the KL divergence a row), by the element count ("mean") or
    kept ("none"). input and target of one shape and dtype. Differentiable in
    both (the target's gradient, log(target) + 1 - input, is -inf where a
    probability target is 0). The gradient is recomputed in the backward
    from input and target (it is -target times the incoming gradient: less
    to read than a saved one)."""
    if reduction not in KL_REDUCTIONS:
        raise ValueError(f"blk.nn.kl_div: reduction {reduction!r}; 'batchmean', 'sum', 'mean' or 'none'")
    out = _kl_div(input_logprobs, target, bool(log_target), reduction == "none")
    if reduction == "batchmean" and input_logprobs.dim() > 0:
        out = out / input_logprobs.shape[0]
    elif reduction == "mean":
        out = out / input_logprobs.numel()
    return out if out.dtype is input_logprobs.dtype else out.to(input_logprobs.dtype)


def _jsd_check(s, t, labels):
    if s.dim() != 2 or s.shape != t.shape or s.dtype != t.dtype or s.device != t.device:
        raise ValueError(f"blk.nn.jsd: student {tuple(s.shape)} {s.dtype}, teacher {tuple(t.shape)} {t.dtype}: "
                         f"(rows, classes) of one dtype and device expected")
    if labels is not None and labels.shape != s.shape[:1]:
        raise ValueError(f"blk.nn.jsd: labels {tuple(labels.shape)} for {s.shape[0]} rows")
    return K.types(s, "jsd")


def _mode(beta):
    return 0 if beta == 0.0 else 1 if beta == 1.0 else 2


@torch.library.custom_op("blk_nn::jsd_fwd", mutates_args=())
def jsd_fwd(student: Tensor, teacher: Tensor, labels: Optional[Tensor], ignore_index: int, beta: float,
            temperature: float, teacher_grad: bool) -> Tuple[Tensor, Tensor, Tensor]:
    """Each row's loss (float32, float64 for float64 logits), its gradient
    with respect to the student's logits and (with teacher_grad; else an
    empty tensor) the teacher's, computed in one launch."""
    ty = _jsd_check(student, teacher, labels)
    if not student.is_contiguous():
        student = student.contiguous()
    if not teacher.is_contiguous():
        teacher = teacher.contiguous()
    rows, n = student.shape
    loss = student.new_empty(rows, dtype=K.acc_dtype(student))
    ds = torch.empty_like(student)
    dt = torch.empty_like(teacher) if teacher_grad else teacher.new_empty(0)
    lab = K.like(labels, torch.int64) if labels is not None else loss.new_empty(1, dtype=torch.int64)
    if rows:
        cap = JSD_BLOCK // 2 if ty["C"] == "f64" else JSD_BLOCK
        block = min(cap, max(16, 1 << (max(n, 1) - 1).bit_length()))
        K.module("distill").jsd_fwd_bwd[(rows,)](
            student, teacher, lab, loss, ds, dt if teacher_grad else ds, n, rows, n, int(ignore_index),
            float(beta), 1.0 / float(temperature), MODE=_mode(beta), HAS_LABELS=labels is not None,
            TEACHER_GRAD=teacher_grad, BLOCK=block, num_warps=K.warps(block), **ty)
    return loss, ds, dt


@jsd_fwd.register_fake
def _(student, teacher, labels, ignore_index, beta, temperature, teacher_grad):
    ds = torch.empty_like(student, memory_format=torch.contiguous_format)
    return (student.new_empty(student.shape[0], dtype=K.acc_dtype(student)), ds,
            torch.empty_like(ds) if teacher_grad else teacher.new_empty(0))


def _jsd_setup(ctx, inputs, output):
    ctx.teacher_grad = inputs[6]
    ctx.save_for_backward(output[1], output[2])


def _jsd_backward(ctx, dloss, _ds, _dt):
    ds, dt = ctx.saved_tensors
    g = dloss[:, None]
    return ((ds * g).to(ds.dtype), (dt * g).to(dt.dtype) if ctx.teacher_grad else None,
            None, None, None, None, None)


jsd_fwd.register_autograd(_jsd_backward, setup_context=_jsd_setup)
_jsd = K.eager(jsd_fwd, _jsd_setup, _jsd_backward)


def jsd(student_logits, teacher_logits, beta=0.5, ignore_index=-100, labels=None, temperature=1.0):
    """The generalized Jensen-Shannon divergence of distillation, a row of
    logits (rows, classes) each (any leading dimensions are flattened into
    rows). With Q = softmax(student_logits / temperature) (the student),
    P = softmax(teacher_logits / temperature) (the teacher), and a row's

        beta = 0:      KL(P || Q) = sum P (log P - log Q)     (forward KL)
        beta = 1:      KL(Q || P) = sum Q (log Q - log P)     (reverse KL)
        0 < beta < 1:  beta KL(Q || M) + (1 - beta) KL(P || M),
                       M = beta Q + (1 - beta) P              (0.5: the JSD)

    (the convention of Liger-Kernel's JSD; the interior tends to 0 at both
    ends, which are defined as the KLs), the loss is the mean over the rows
    whose label is not ignore_index (every row without labels; all
    ignored: nan). Not multiplied by temperature squared. The gradient with
    respect to the student's logits (and the teacher's, when they require
    one) is computed in the same launch as the loss and saved (as large as
    the logits); the backward scales it. No host sync."""
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"blk.nn.jsd: beta {beta!r}; in [0, 1]")
    if not temperature > 0:
        raise ValueError(f"blk.nn.jsd: temperature {temperature!r}; a positive number")
    s = student_logits.reshape(-1, student_logits.shape[-1]) if student_logits.dim() != 2 else student_logits
    t = teacher_logits.reshape(-1, teacher_logits.shape[-1]) if teacher_logits.dim() != 2 else teacher_logits
    lab = labels.reshape(-1) if labels is not None else None
    teacher_grad = torch.is_grad_enabled() and teacher_logits.requires_grad
    loss, _, _ = _jsd(s, t, lab, int(ignore_index), float(beta), float(temperature), bool(teacher_grad))
    total = loss.sum()
    if lab is not None:
        total = total / (lab != ignore_index).sum()
    else:
        total = total / s.shape[0]
    return total if total.dtype is student_logits.dtype else total.to(student_logits.dtype)
