"""blk.nn: a linear layer with its epilogue fused, act(scale * (x @ W.T) +
bias) + residual in one launch of stdlib/nn/linear.tile, and its backward
(dx = g @ W, dW = g.T @ x, db = sum of g; g the gradient through the
activation) on the same kernels, as torch custom ops with autograd."""

from typing import Optional, Tuple

import torch
from torch import Tensor

import blk
from . import _kernels as K

# the activations and the kernels' ACT numbers
ACTIVATIONS = {None: 0, "relu": 1, "gelu": 2, "silu": 3}
_DTYPES = (torch.float16, torch.bfloat16, torch.float32)

# The tile config on the interpreter (no autotuning there: it would take the
# first config, 128 x 256 tiles): small tiles, so that small shapes cross
# tile edges. Tests set SPLIT_K to run the split-K kernel.
CPU_CONFIG = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2, "SPLIT_K": 1}
# f32 inputs on the GPU: one config, given (the autotune lists' 128 x 256 x 64
# f32 tiles would not fit shared memory)
F32_CONFIG = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}
# linear_splitk's @autotune list: its largest SPLIT_K and BLOCK_M (the workspace), its smallest tiles (the
# counters); tests/python/test_nn_linear.py checks them against the file
_SPLIT_MAX, _SPLIT_BM_MAX, _SPLIT_TILE_MIN = 8, 128, (64, 128)

_counters = {}   # device -> int32 zeros, one a tile of linear_splitk (left zero by every launch)


def _zero_counters(device, n):
    c = _counters.get(device)
    if c is None or c.numel() < n:
        c = torch.zeros(max(n, 1024), dtype=torch.int32, device=device)
        _counters[device] = c
    return c


def splitk_buffers(M, N):
    """(workspace elements, counters) that any config of linear_splitk's
    @autotune list may use for an M x N output."""
    return (_SPLIT_MAX * blk.cdiv(M, _SPLIT_BM_MAX) * _SPLIT_BM_MAX * N,
            blk.cdiv(M, _SPLIT_TILE_MIN[0]) * blk.cdiv(N, _SPLIT_TILE_MIN[1]))


def gemm(a, b, c, M, N, K_, trans_a, trans_b, alpha=1.0, bias=None, res=None, pre=None, act=0, beta=False):
    """c (M x N, row-major, stride c.stride(0)) = epilogue of op(a) @ op(b):
    a M x K (K x M with trans_a), b K x N (N x K with trans_b), both
    contiguous; stride_a and stride_b their row lengths. The epilogue is
    linear.tile's: alpha, bias (N), pre (M x N: the value before the
    activation stored), act, res (M x N) added, beta: c's own value added."""
    if M == 0 or N == 0:
        return
    consts = dict(T=K.types(a, "linear")["T"], OUT=K.types(c, "linear")["T"],
                  BT=K.types(bias if bias is not None else a, "linear")["T"],
                  RT=K.types(res if res is not None else a, "linear")["T"],
                  PT=K.types(pre if pre is not None else a, "linear")["T"],
                  TRANS_A=bool(trans_a), TRANS_B=bool(trans_b), BETA=bool(beta), HAS_BIAS=bias is not None,
                  HAS_RES=res is not None, SAVE_PRE=pre is not None, ACT=int(act))
    ptrs = (a, b, c, bias if bias is not None else a, res if res is not None else a, pre if pre is not None else a)
    sizes = (M, N, K_, a.stride(0), b.stride(0), c.stride(0), float(alpha))
    mod = K.module("linear")
    if not c.is_cuda:
        cfg = dict(CPU_CONFIG)
        split = cfg.pop("SPLIT_K")
        consts["PREC"] = 2   # f32 inputs: exact f32 products
        if split > 1:
            ws = torch.empty(split * blk.cdiv(M, cfg["BLOCK_M"]) * cfg["BLOCK_M"] * N, dtype=torch.float32)
            cnt = _zero_counters(c.device, blk.cdiv(M, cfg["BLOCK_M"]) * blk.cdiv(N, cfg["BLOCK_N"]))
            mod.linear_splitk(*ptrs, ws, cnt, *sizes, SPLIT_K=split, **cfg, **consts)
        else:
            mod.linear(*ptrs, *sizes, **cfg, **consts)
        return
    if a.dtype is torch.float32:
        consts["PREC"] = 1   # tf32x3: near f32 accuracy on tensor cores
        mod.linear(*ptrs, *sizes, **F32_CONFIG, **consts)
        return
    sms = K._sm_count(c.device.index if c.device.index is not None else 0)
    if blk.cdiv(M, 128) * blk.cdiv(N, 128) < sms and K_ >= 1024:
        n_ws, n_cnt = splitk_buffers(M, N)
        ws = torch.empty(n_ws, dtype=torch.float32, device=c.device)
        cnt = _zero_counters(c.device, n_cnt)
        mod.linear_splitk(*ptrs, ws, cnt, *sizes, **consts)
    else:
        mod.linear(*ptrs, *sizes, **consts)


def _check(x, weight, bias, residual, activation, out_dtype):
    if not isinstance(activation, (str, type(None))) or activation not in ACTIVATIONS:
        raise ValueError(f"blk.nn.linear: activation {activation!r}; one of None, 'relu', 'gelu' (tanh), 'silu'")
    if weight.dim() != 2 or x.dim() < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"blk.nn.linear: x {tuple(x.shape)}, weight {tuple(weight.shape)}: (..., in) and (out, in) "
                         f"expected")
    if x.dtype not in _DTYPES or weight.dtype != x.dtype:
        raise TypeError(f"blk.nn.linear: x {x.dtype}, weight {weight.dtype}: one dtype of float16, bfloat16, "
                        f"float32 expected")
    if out_dtype is not None and out_dtype not in _DTYPES:
        raise TypeError(f"blk.nn.linear: out_dtype {out_dtype}: float16, bfloat16 or float32 expected")
    if bias is not None and (bias.shape != weight.shape[:1] or bias.dtype not in _DTYPES):
        raise ValueError(f"blk.nn.linear: bias {tuple(bias.shape)} {bias.dtype} for weight {tuple(weight.shape)}: "
                         f"(out,) of float16, bfloat16 or float32 expected")
    out_shape = tuple(x.shape[:-1]) + (weight.shape[0],)
    if residual is not None and (tuple(residual.shape) != out_shape or residual.dtype not in _DTYPES):
        raise ValueError(f"blk.nn.linear: residual {tuple(residual.shape)} {residual.dtype}: the output's shape "
                         f"{out_shape} in float16, bfloat16 or float32 expected")


def _contig(t):
    return t if t is None or t.is_contiguous() else t.contiguous()


@torch.library.custom_op("blk_nn::linear_fwd", mutates_args=())
def linear_fwd(x: Tensor, weight: Tensor, bias: Optional[Tensor], residual: Optional[Tensor],
               accumulate_into: Optional[Tensor], act: int, scale: float, out_dtype: Optional[torch.dtype],
               save_pre: bool) -> Tuple[Tensor, Tensor]:
    """out = act(scale * (x @ weight.T) + bias) + residual in out_dtype (x's
    if None), x (rows, in), residual (rows, out); and the pre-activation
    scale * (x @ weight.T) + bias in out's dtype where save_pre (else an
    empty tensor). accumulate_into is not read here (the backward adds the
    weight's gradient into it)."""
    x, weight, bias, residual = _contig(x), _contig(weight), _contig(bias), _contig(residual)
    M, Kd = x.shape
    N = weight.shape[0]
    odt = out_dtype or x.dtype
    out = x.new_empty((M, N), dtype=odt)
    pre = x.new_empty((M, N), dtype=odt) if save_pre else x.new_empty(0, dtype=odt)
    gemm(x, weight, out, M, N, Kd, False, True, scale, bias, residual, pre if save_pre else None, act)
    return out, pre


@linear_fwd.register_fake
def _(x, weight, bias, residual, accumulate_into, act, scale, out_dtype, save_pre):
    odt = out_dtype or x.dtype
    out = x.new_empty((x.shape[0], weight.shape[0]), dtype=odt)
    return out, (torch.empty_like(out) if save_pre else x.new_empty(0, dtype=odt))


def _act_bwd(dout, pre, g, db, act, store_g):
    """g = dout * act'(pre) (stored where store_g) and db = the column sums of
    g (where db is not None): linear_act_bwd on (column blocks, row programs),
    each row program's sums a row of a float32 partial, then rmsnorm_bwd_dw
    adds those rows up into db."""
    M, N = dout.shape
    bm, bn = 32, 128
    cols = blk.cdiv(N, bn)
    if dout.is_cuda:   # about 4 programs a multiprocessor
        sms = K._sm_count(dout.device.index if dout.device.index is not None else 0)
        rows = max(1, min(blk.cdiv(M, bm), blk.cdiv(4 * sms, cols)))
    else:
        rows = max(1, min(blk.cdiv(M, bm), 3))
    partial = torch.empty((rows if db is not None else 1, N), dtype=torch.float32, device=dout.device)
    K.module("linear").linear_act_bwd[(cols, rows)](
        dout, pre, g, partial, M, N, T=K.types(g, "linear")["T"], OUT=K.types(dout, "linear")["T"],
        PT=K.types(pre, "linear")["T"], ACT=int(act), STORE_G=store_g, HAS_BIAS=db is not None, BLOCK_M=bm,
        BLOCK_N=bn, num_warps=4)
    if db is not None:
        K.module("rmsnorm").rmsnorm_bwd_dw[(blk.cdiv(N, 128),)](partial, db, rows, N, BLOCK_M=32, BLOCK_N=128,
                                                                  T=K.types(db, "linear")["T"], C="f32")


def _grads(dout, x, weight, pre, acc, act, scale, bias_dtype, grad_x, grad_w):
    """(dx, dW, db): the gradients asked for (an empty tensor for each other);
    with acc (float32, weight's shape), dW is added into it (beta = 1) and
    an empty tensor returned for it."""
    x, weight = _contig(x), _contig(weight)
    M, Kd = x.shape
    N = weight.shape[0]
    dout = dout.reshape(M, N)
    dout = dout if dout.is_contiguous() else dout.contiguous()
    empty = x.new_empty(0)
    db = torch.empty(N, dtype=bias_dtype, device=x.device) if bias_dtype is not None else empty
    # g: the gradient of the pre-activation, in x's dtype (the GEMMs' input)
    store_g = act != 0 or dout.dtype != x.dtype
    g = torch.empty((M, N), dtype=x.dtype, device=x.device) if store_g else dout
    if (store_g or bias_dtype is not None) and N:
        _act_bwd(dout, pre if act != 0 else dout, g, db if bias_dtype is not None else None, act, store_g)
    dx = torch.empty_like(x) if grad_x else empty
    if grad_x:   # dx = g @ W: NN, (M x N) @ (N x K)
        gemm(g, weight, dx, M, Kd, N, False, False, scale)
    dw = empty
    if grad_w:   # dW = g^T @ x: TN, g read transposed; into acc with beta = 1
        dw = acc if acc is not None else torch.empty_like(weight)
        gemm(g, x, dw, N, Kd, M, True, False, scale, beta=acc is not None)
        if acc is not None:
            dw = empty
    return dx, dw, db


@torch.library.custom_op("blk_nn::linear_bwd", mutates_args=())
def linear_bwd(dout: Tensor, x: Tensor, weight: Tensor, pre: Tensor, act: int, scale: float,
               bias_dtype: Optional[torch.dtype], grad_x: bool, grad_w: bool) -> Tuple[Tensor, Tensor, Tensor]:
    """The gradients of x, weight and bias (dtype bias_dtype; None: not
    asked for), each an empty tensor where not asked for."""
    return _grads(dout, x, weight, pre, None, act, scale, bias_dtype, grad_x, grad_w)


@linear_bwd.register_fake
def _(dout, x, weight, pre, act, scale, bias_dtype, grad_x, grad_w):
    e = x.new_empty(0)
    return (x.new_empty(x.shape) if grad_x else e, weight.new_empty(weight.shape) if grad_w else e,
            x.new_empty(weight.shape[:1], dtype=bias_dtype) if bias_dtype is not None else e)


@torch.library.custom_op("blk_nn::linear_bwd_acc", mutates_args=("acc",))
def linear_bwd_acc(dout: Tensor, x: Tensor, weight: Tensor, pre: Tensor, acc: Tensor, act: int, scale: float,
                   bias_dtype: Optional[torch.dtype], grad_x: bool) -> Tuple[Tensor, Tensor]:
    """linear_bwd with the weight's gradient added into acc (float32, the
    weight's shape): the gradients of x and bias."""
    dx, _, db = _grads(dout, x, weight, pre, acc, act, scale, bias_dtype, grad_x, True)
    return dx, db


@linear_bwd_acc.register_fake
def _(dout, x, weight, pre, acc, act, scale, bias_dtype, grad_x):
    e = x.new_empty(0)
    return (x.new_empty(x.shape) if grad_x else e,
            x.new_empty(weight.shape[:1], dtype=bias_dtype) if bias_dtype is not None else e)


_linear_bwd = K.eager(linear_bwd)
_linear_bwd_acc = K.eager(linear_bwd_acc)


def _setup(ctx, inputs, output):
    x, weight, bias, residual, acc, act, scale, out_dtype, save_pre = inputs
    ctx.act, ctx.scale = act, scale
    ctx.bias_dtype = bias.dtype if bias is not None else None
    ctx.res_dtype = residual.dtype if residual is not None else None
    ctx.has_acc = acc is not None
    # x and weight for the GEMMs; the pre-activation for act' (an empty tensor without an activation)
    ctx.save_for_backward(x, weight, output[1], acc)


def _backward(ctx, dout, _dpre):
    x, weight, pre, acc = ctx.saved_tensors
    need = ctx.needs_input_grad
    gx = gw = gb = None
    want_b = ctx.bias_dtype if need[2] else None
    if need[0] or need[1] or need[2]:
        if ctx.has_acc and need[1]:
            gx, gb = _linear_bwd_acc(dout, x, weight, pre, acc, ctx.act, ctx.scale, want_b, need[0])
        else:
            gx, gw, gb = _linear_bwd(dout, x, weight, pre, ctx.act, ctx.scale, want_b, need[0], need[1])
            gw = gw if need[1] else None
        gx = gx if need[0] else None
        gb = gb if want_b is not None else None
    gr = None
    if need[3]:
        gr = dout if dout.dtype == ctx.res_dtype else dout.to(ctx.res_dtype)
    return gx, gw, gb, gr, None, None, None, None, None


linear_fwd.register_autograd(_backward, setup_context=_setup)
_linear = K.eager(linear_fwd, _setup, _backward)


def linear(x, weight, bias=None, activation=None, residual=None, scale=None, out_dtype=None,
           accumulate_into=None):
    """act(scale * (x @ weight.T) + bias) + residual, in one launch.

    x (..., in) (leading dimensions flattened), weight (out, in) as
    torch.nn.Linear keeps it (read transposed in the kernel, not copied),
    bias (out,) or None, activation None, "relu", "gelu" (the tanh form)
    or "silu", residual x.shape[:-1] + (out,) or None, scale a float (None:
    1), out_dtype the output's dtype (None: x's). x and weight float16,
    bfloat16 or float32, one dtype; products summed in float32.

    Differentiable in x, weight, bias and residual. With an activation the
    forward also stores the pre-activation (in the output's dtype) for the
    backward, when grad mode is on and an input requires a gradient (the
    backward needs act'(z); storing z costs one write of the output's size,
    recomputing it another GEMM). With accumulate_into (a float32 tensor of
    weight's shape), a backward where the weight requires a gradient adds
    that gradient into it (beta = 1 in the kernel's epilogue, no rounding to
    weight's dtype) and gives the weight no gradient of its own: gradient
    accumulation into a float32 buffer (Megatron's main_grad). No host sync."""
    _check(x, weight, bias, residual, activation, out_dtype)
    act = ACTIVATIONS[activation]
    if accumulate_into is not None and (accumulate_into.shape != weight.shape
                                        or accumulate_into.dtype != torch.float32):
        raise ValueError(f"blk.nn.linear: accumulate_into {tuple(accumulate_into.shape)} {accumulate_into.dtype}: "
                         f"float32 of weight's shape {tuple(weight.shape)} expected")
    lead = x.shape[:-1]
    x2 = x.reshape(-1, x.shape[-1])
    r2 = residual.reshape(-1, weight.shape[0]) if residual is not None else None
    on = torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad
                                      or (bias is not None and bias.requires_grad))
    out, _ = _linear(x2, weight, bias, r2, accumulate_into, act, 1.0 if scale is None else float(scale), out_dtype,
                     bool(on and act != 0))
    return out.view(tuple(lead) + (weight.shape[0],))


class Linear(torch.nn.Module):
    """torch.nn.Linear on blk.nn.linear: weight (out, in) and bias (out,)
    initialized as torch.nn.Linear's; activation None, "relu", "gelu",
    "silu" applied in the same launch; forward(x, residual=None)."""

    def __init__(self, in_features, out_features, bias=True, activation=None, device=None, dtype=None):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"blk.nn.Linear: activation {activation!r}; one of None, 'relu', 'gelu', 'silu'")
        lin = torch.nn.Linear(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.in_features, self.out_features, self.activation = in_features, out_features, activation
        self.weight = lin.weight
        self.bias = lin.bias

    def forward(self, x, residual=None):
        return linear(x, self.weight, self.bias, self.activation, residual)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"activation={self.activation!r}")
