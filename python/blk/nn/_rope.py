"""blk.nn: rotary position embedding (rotate-half) on q and k in one launch,
over stdlib/nn/rope.tile, as torch custom ops with autograd."""

from typing import List, Tuple

import torch
from torch import Tensor

import blk
from . import _kernels as K


def _unit_last(x):
    """x, or a contiguous copy where its last stride is not 1."""
    return x if x.stride(-1) == 1 or x.numel() == 0 else x.contiguous()


def _out_like(x, stride=None):
    """An empty tensor of x's shape and dtype with the given strides (those
    of the forward's output, for a gradient in the layout of what it goes
    to), else x's where torch.empty_like keeps them (x dense, unit last
    stride), else contiguous."""
    if stride is not None:
        return torch.empty_strided(x.shape, stride, dtype=x.dtype, device=x.device)
    out = torch.empty_like(x)
    if out.stride(-1) != 1 and out.numel():
        out = torch.empty_like(x, memory_format=torch.contiguous_format)
    return out


def _arg(x):
    """x for the kernel, which takes its address and the strides given
    apart: x itself where contiguous, or its (batch, seq, heads, dim) view
    where that is (Hugging Face's q and k: the same address), so that the
    launch takes the launcher in C; else blk.strided(x)."""
    if x.is_contiguous():
        return x
    if x.dim() == 4:
        t = x.transpose(1, 2)
        if t.is_contiguous():
            return t
    return blk.strided(x)


def _cos_strides(c, batch, seq, dim):
    """(batch stride, position stride) of cos/sin given as (seq, dim), or
    (1 or batch, seq, dim); the batch stride 0 when shared."""
    if c.dim() == 2 and tuple(c.shape) == (seq, dim):
        return 0, c.stride(0)
    if c.dim() == 3 and c.shape[0] in (1, batch) and tuple(c.shape[1:]) == (seq, dim):
        return (0 if c.shape[0] == 1 else c.stride(0)), c.stride(1)
    raise ValueError(f"blk.nn.rope: cos/sin of shape {tuple(c.shape)}; ({seq}, {dim}) or (1 or {batch}, {seq}, "
                     f"{dim}) expected")


def _launch(q, k, cos, sin, backward, q_stride=None, k_stride=None):
    if q.dim() != 4 or k.dim() != 4 or q.shape[0] != k.shape[0] or q.shape[2:] != k.shape[2:]:
        raise ValueError(f"blk.nn.rope: q {tuple(q.shape)} and k {tuple(k.shape)}: (batch, heads, seq, head_dim) "
                         f"each, the same batch, seq and head_dim")
    batch, hq, seq, dim = q.shape
    hk = k.shape[1]
    if dim % 2:
        raise ValueError(f"blk.nn.rope: head_dim {dim} is odd")
    ty = K.types(q, "rope")
    if k.dtype != q.dtype or sin.dtype != cos.dtype or (cos.dtype != q.dtype and not (
            q.dtype in (torch.float16, torch.bfloat16) and cos.dtype == torch.float32)):
        raise ValueError(f"blk.nn.rope: q {q.dtype}, k {k.dtype}, cos {cos.dtype}, sin {sin.dtype}: one dtype, "
                         f"or float32 cos and sin with 16-bit q and k")
    ty = dict(ty, CT=K.types(cos, "rope")["T"])
    if cos.stride(-1) != 1 or sin.stride(-1) != 1 or cos.stride() != sin.stride():
        cos, sin = cos.contiguous(), sin.contiguous()
    c_sb, c_ss = _cos_strides(cos, batch, seq, dim)
    q, k = _unit_last(q), _unit_last(k)
    q_out, k_out = _out_like(q, q_stride), _out_like(k, k_stride)
    bq, bd = blk.next_power_of_2(hq), blk.next_power_of_2(dim // 2)
    if batch * seq:
        K.module("rope").rope[(batch * seq,)](
            _arg(q), _arg(k), _arg(cos), _arg(sin), _arg(q_out), _arg(k_out), q.stride(0), q.stride(2), q.stride(1),
            k.stride(0), k.stride(2), k.stride(1), q_out.stride(0), q_out.stride(2), q_out.stride(1),
            k_out.stride(0), k_out.stride(2), k_out.stride(1), c_sb, c_ss, seq, batch * seq, hq, hk, dim // 2,
            BACKWARD=backward, BLOCK_QH=bq, BLOCK_KH=blk.next_power_of_2(hk), BLOCK_D=bd,
            num_warps=K.warps(bq * bd), **ty)
    return q_out, k_out


@torch.library.custom_op("blk_nn::rope", mutates_args=())
def rope_op(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor, backward: bool, q_stride: List[int],
            k_stride: List[int]) -> Tuple[Tensor, Tensor]:
    """The rotation of q and k (backward: the other way, for gradients),
    written with strides q_stride and k_stride ([]: q's and k's own where
    dense, else contiguous). The backward passes the forward outputs'
    strides: each gradient in the layout of the q or k it goes back to,
    whatever the incoming one's, so that no copy is needed after."""
    return _launch(q, k, cos, sin, backward, q_stride or None, k_stride or None)


@rope_op.register_fake
def _(q, k, cos, sin, backward, q_stride, k_stride):
    return _out_like(q, q_stride or None), _out_like(k, k_stride or None)


def _setup(ctx, inputs, output):
    _, _, cos, sin, backward, _, _ = inputs
    ctx.save_for_backward(cos, sin)
    ctx.backward = backward
    ctx.like = (inputs[0].new_empty(0), tuple(inputs[0].shape), tuple(inputs[1].shape))
    ctx.strides = ([int(x) for x in output[0].stride()], [int(x) for x in output[1].stride()])


def _backward(ctx, dq, dk):
    cos, sin = ctx.saved_tensors
    like, q_shape, k_shape = ctx.like
    dq = like.new_zeros(q_shape) if dq is None else dq   # an output the loss did not use
    dk = like.new_zeros(k_shape) if dk is None else dk
    dq_in, dk_in = _rope(dq, dk, cos, sin, not ctx.backward, *ctx.strides)
    return dq_in, dk_in, None, None, None, None, None


rope_op.register_autograd(_backward, setup_context=_setup)
# the op as called: the custom op where traced, else without its dispatch (_kernels.eager)
_rope = K.eager(rope_op, _setup, _backward)


def rope(q, k, cos, sin):
    """(q * cos + rotate_half(q) * sin, the same of k) in one launch.
    q: (batch, q_heads, seq, head_dim), k: (batch, k_heads, seq, head_dim)
    (k_heads may be fewer: grouped-query attention); cos, sin: (seq,
    head_dim) or (1 or batch, seq, head_dim), as Hugging Face's rotary
    embedding gives them; one dtype for all four, or float32 cos and sin
    with 16-bit q and k (the rotation in float32, rounded once to q's
    dtype). Differentiable in q and k
    (cos and sin are taken as constants); saves cos and sin."""
    return _rope(q, k, cos, sin, False, [], [])
