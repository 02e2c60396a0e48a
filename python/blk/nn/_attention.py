"""blk.nn: scaled dot-product attention (flash attention: the scores are
never stored) over stdlib/nn/attention.tile, as torch custom ops with
autograd. The forward saves each row's log-sum-exp; the backward
recomputes the probabilities from it (FlashAttention-2): a preprocessing
launch (D = rowsum(dO * O)), one for dK and dV, one for dQ (in a fixed
order: the same bits every run) or, with deterministic=False, dQ added by
f32 atomics from the dK/dV launch and a cast. Options: a sliding window
(WINDOW) and a logit soft-cap (SOFTCAP), consts of the kernels."""

import math
from typing import Tuple

import torch
from torch import Tensor

import blk
from . import _kernels as K

HEAD_DIMS = (16, 32, 64, 128, 256)
_I32 = 2 ** 31
_TYPES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}


def _fwd_config(d, dtype, cuda):
    """The forward's blocks and launch options for head dimension d. On the
    GPU: 128 query rows, 64 keys a slice, 3 stages (the bench's fastest on
    the H200), 8 warps from d128 on, d256 in slices of 32 keys; f32 (tf32
    products, tiles twice the size) in 64 x 32 blocks. None of these
    spills on sm_90a (ptxas -v) but f32 at d256. On the interpreter small
    blocks: several of them, and ragged edges, at test sizes."""
    if not cuda:
        return {"BLOCK_M": 32, "BLOCK_N": 16}
    if dtype is torch.float32:
        if d <= 128:
            return {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2}
        return {"BLOCK_M": 128, "BLOCK_N": 32, "num_warps": 8, "num_stages": 1}
    if d <= 64:
        return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3}
    if d <= 128:
        return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3}
    return {"BLOCK_M": 128, "BLOCK_N": 32, "num_warps": 8, "num_stages": 2}


def _bwd_config(d, dtype, cuda):
    """The backward's blocks: ((BLOCK_M, BLOCK_N, options) of the dK/dV
    kernel, KV_M query rows a step over KV_N keys a program; the same of
    the dQ kernel, Q_M query rows a program over Q_N keys a step), with
    KV_N a multiple of KV_M and Q_M of Q_N. GPU: the bench's fastest on
    the H200 up to d128 (32 x 64 and 64 x 32, 4 warps, 3 stages, no
    spills); d256 and f32 in one stage and smaller blocks (the dK/dV
    accumulators still spill some at d256, and f32 from d128)."""
    if not cuda:
        return (16, 32, {}), (32, 16, {})
    if dtype is torch.float32:
        if d <= 64:
            return (16, 32, {"num_warps": 4, "num_stages": 2}), (32, 16, {"num_warps": 4, "num_stages": 2})
        return (16, 64, {"num_warps": 8, "num_stages": 1}), (32, 16, {"num_warps": 4, "num_stages": 1})
    if d <= 128:
        return (32, 64, {"num_warps": 4, "num_stages": 3}), (64, 32, {"num_warps": 4, "num_stages": 3})
    return (32, 64, {"num_warps": 8, "num_stages": 1}), (64, 16, {"num_warps": 4, "num_stages": 1})


def _check(q, k, v, scale):
    """The type name of q, k, v's dtype; ValueError or TypeError naming
    what does not fit."""
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(f"blk.nn.attention: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}: "
                         f"4-D (batch, heads, sequence, head_dim) expected")
    b, h, n, d = q.shape
    if k.shape != v.shape or k.shape[0] != b or k.shape[2] != n or k.shape[3] != d:
        raise ValueError(f"blk.nn.attention: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}: k and v "
                         f"(batch, kv_heads, sequence, head_dim) of q's batch, sequence and head_dim expected")
    if k.shape[1] == 0 or h % k.shape[1]:
        raise ValueError(f"blk.nn.attention: {h} query heads and {k.shape[1]} key/value heads: the key/value "
                         f"heads must divide the query heads")
    if d not in HEAD_DIMS:
        raise ValueError(f"blk.nn.attention: head_dim {d}; one of {HEAD_DIMS}")
    if not scale > 0:
        raise ValueError(f"blk.nn.attention: scale {scale}; a positive number expected")
    ty = _TYPES.get(q.dtype)
    if ty is None or k.dtype is not q.dtype or v.dtype is not q.dtype:
        raise TypeError(f"blk.nn.attention: q, k, v of {q.dtype}, {k.dtype}, {v.dtype}: one dtype of float16, "
                        f"bfloat16 or float32 expected")
    for t in (q, k, v):
        # the kernels take 32-bit strides and offsets inside a head
        if max(t.stride()) >= _I32 or (n - 1) * t.stride(2) + (d - 1) * t.stride(3) >= _I32:
            raise ValueError(f"blk.nn.attention: a tensor of shape {tuple(t.shape)} and strides {t.stride()}: "
                             f"strides and a head's extent must stay below 2^31 elements")
    return ty


@torch.library.custom_op("blk_nn::attention_fwd", mutates_args=())
def attention_fwd(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: float, deterministic: bool, window: int,
                  softcap: float) -> Tuple[Tensor, Tensor]:
    """o = softmax(scale * q k^T [causal mask]) v (contiguous, q's dtype)
    and each row's natural-log logsumexp of the scaled scores, float32
    (batch, heads, sequence). q, k, v with any strides (one launch).
    deterministic: how the backward gets dQ (the autograd formula's).
    window > 0 (with causal): keys j with i - window < j <= i only;
    softcap > 0: the scaled scores capped to softcap * tanh(s / softcap)."""
    ty = _check(q, k, v, scale)
    b, h, n, d = q.shape
    o = torch.empty((b, h, n, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((b, h, n), dtype=torch.float32, device=q.device)
    if o.numel():
        K.module("attention").attention_fwd(
            blk.strided(q), blk.strided(k), blk.strided(v), o, lse, *q.stride(), *k.stride(), *v.stride(),
            *o.stride(), b, h, n, float(scale),
            HEAD_DIM=d, CAUSAL=bool(causal), T=ty, GROUP=h // k.shape[1], CHECK_SCALE=False,
            **_options(window, softcap, n), **_fwd_config(d, q.dtype, q.is_cuda))
    return o, lse


def _options(window, softcap, n):
    """The kernels' WINDOW and SOFTCAP consts (a window that spans the
    sequence is the causal mask alone: one kernel fewer to compile)."""
    opts = {}
    if 0 < window < n:
        opts["WINDOW"] = int(window)
    if softcap > 0:
        opts["SOFTCAP"] = float(softcap)
    return opts


@attention_fwd.register_fake
def _(q, k, v, causal, scale, deterministic, window, softcap):
    b, h, n, d = q.shape
    return q.new_empty((b, h, n, d)), q.new_empty((b, h, n), dtype=torch.float32)


@torch.library.custom_op("blk_nn::attention_bwd", mutates_args=())
def attention_bwd(do: Tensor, q: Tensor, k: Tensor, v: Tensor, o: Tensor, lse: Tensor, causal: bool, scale: float,
                  deterministic: bool, window: int, softcap: float) -> Tuple[Tensor, Tensor, Tensor]:
    """dq, dk, dv (contiguous, q's dtype) of the forward that gave o and
    lse, for the incoming gradient do: the preprocessing, dK/dV, then dQ
    by its own kernel (deterministic) or by f32 atomics and a cast."""
    ty = _check(q, k, v, scale)
    q, k, v, o = (t if t.is_contiguous() else t.contiguous() for t in (q, k, v, o))
    do = K.like(do, q.dtype)
    b, h, n, d = q.shape
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    if not q.numel():
        return dq, dk.zero_(), dv.zero_()
    (kv_m, kv_n, kv_opts), (q_m, q_n, q_opts) = _bwd_config(d, q.dtype, q.is_cuda)
    atomic = not deterministic
    delta = torch.empty((b * h, n), dtype=torch.float32, device=q.device)
    dq_acc = torch.empty(q.shape, dtype=torch.float32, device=q.device) if atomic else delta
    lse = lse if lse.is_contiguous() else lse.contiguous()
    common = {"T": ty, "HEAD_DIM": d}
    opts = _options(window, softcap, n)
    m = K.module("attention")
    m.attention_bwd_preprocess(o, do, delta, dq_acc, b, h, n, BLOCK_M=q_m, ATOMIC_DQ=atomic, **common)
    m.attention_bwd_dkdv(q, k, v, do, lse, delta, dk, dv, dq_acc, b, h, n, float(scale), BLOCK_M=kv_m,
                         BLOCK_N=kv_n, CAUSAL=bool(causal), GROUP=h // k.shape[1], ATOMIC_DQ=atomic, **common,
                         **opts, **kv_opts)
    if atomic:
        m.attention_bwd_dq_cast(dq_acc, dq, b, h, n, BLOCK_M=q_m, **common)
    else:
        m.attention_bwd_dq(q, k, v, do, lse, delta, dq, b, h, n, float(scale), BLOCK_M=q_m, BLOCK_N=q_n,
                           CAUSAL=bool(causal), GROUP=h // k.shape[1], **common, **opts, **q_opts)
    return dq, dk, dv


@attention_bwd.register_fake
def _(do, q, k, v, o, lse, causal, scale, deterministic, window, softcap):
    c = torch.contiguous_format
    return (torch.empty_like(q, memory_format=c), torch.empty_like(k, memory_format=c),
            torch.empty_like(v, memory_format=c))


_attention_bwd = K.eager(attention_bwd)


def _setup(ctx, inputs, output):
    q, k, v, *options = inputs
    ctx.save_for_backward(q, k, v, output[0], output[1])
    ctx.options = options
    ctx.mark_non_differentiable(output[1])   # lse: no zero gradient made for it


def _backward(ctx, do, _dlse):
    q, k, v, o, lse = ctx.saved_tensors
    if do is None:
        return (None,) * 8
    dq, dk, dv = _attention_bwd(do, q, k, v, o, lse, *ctx.options)
    return dq, dk, dv, None, None, None, None, None


attention_fwd.register_autograd(_backward, setup_context=_setup)
_attention = K.eager(attention_fwd, _setup, _backward)


def attention(q, k, v, causal=False, scale=None, deterministic=True, window=None, softcap=None):
    """softmax(scale * q k^T) v, torch's F.scaled_dot_product_attention
    (is_causal=causal, enable_gqa=True) for q (batch, heads, seq, head_dim)
    and k, v (batch, kv_heads, seq, head_dim), kv_heads dividing heads
    (query head i reads key/value head i // (heads // kv_heads): GQA, MQA);
    head_dim 16, 32, 64, 128 or 256; one sequence length for q and k;
    float16 or bfloat16 (float32: products in tf32 on the GPU, as torch's
    with allow_tf32); scale 1 / sqrt(head_dim) by default. causal: query i
    sees keys j <= i. The forward reads q, k, v with any strides and saves
    them, the output and each row's log-sum-exp (float32); the backward
    recomputes the probabilities, dQ without atomics (the same bits every
    run; deterministic=False: dQ summed by float32 atomics in the dK/dV
    launch, in an order that varies). window (an int >= 1, Mistral's
    sliding window; causal implied): query i sees keys j with i - window <
    j <= i. softcap (> 0, Gemma 2's): the scaled scores s become softcap *
    tanh(s / softcap) before the softmax (and the mask)."""
    if window is not None and not (isinstance(window, int) and window >= 1):
        raise ValueError(f"blk.nn.attention: window {window!r}; an int of at least 1, or None")
    if softcap is not None and not softcap > 0:
        raise ValueError(f"blk.nn.attention: softcap {softcap!r}; a positive number or None")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    return _attention(q, k, v, bool(causal) or window is not None, scale, bool(deterministic), int(window or 0),
                      float(softcap or 0.0))[0]
