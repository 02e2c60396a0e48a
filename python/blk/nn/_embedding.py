"""blk.nn: the embedding lookup and its deterministic gradient, over
stdlib/nn/embedding.tile, as torch custom ops with autograd."""

import torch
from torch import Tensor

import blk
from . import _kernels as K

INDEX_TYPES = {torch.int32: "i32", torch.int64: "i64"}


def _block(dim):
    return min(1024, max(16, blk.next_power_of_2(max(dim, 1))))


def _index_type(indices):
    if indices.dtype not in INDEX_TYPES:
        raise TypeError(f"blk.nn.embedding: indices of {indices.dtype}; int32 or int64 expected")
    return INDEX_TYPES[indices.dtype]


@torch.library.custom_op("blk_nn::embedding_fwd", mutates_args=())
def embedding_fwd(indices: Tensor, weight: Tensor, padding_idx: int) -> Tensor:
    """weight's rows at indices: indices.shape + (dim,), weight's dtype
    (padding_idx, in [0, num_embeddings) or -1 for none, is for the
    backward)."""
    if weight.dim() != 2:
        raise ValueError(f"blk.nn.embedding: weight of shape {tuple(weight.shape)}; (num_embeddings, dim) "
                         f"expected")
    ity = _index_type(indices)
    ty = K.types(weight, "embedding")
    flat = indices.reshape(-1).contiguous()
    weight = weight.contiguous()
    v, dim = weight.shape
    # on CPU tensors the check costs no wait for a GPU; on the GPU an index
    # out of range is the caller's (it reads zeros and adds no gradient)
    if flat.device.type == "cpu" and flat.numel() and bool(((flat < 0) | (flat >= v)).any()):
        bad = flat[(flat < 0) | (flat >= v)][0].item()
        raise IndexError(f"blk.nn.embedding: index {bad} out of range for {v} embeddings")
    out = torch.empty(flat.numel(), dim, dtype=weight.dtype, device=weight.device)
    if flat.numel() and dim:
        block = _block(dim)
        K.module("embedding").embedding_fwd[(flat.numel(), blk.cdiv(dim, block))](
            flat, weight, out, flat.numel(), v, dim, T=ty["T"], I=ity, BLOCK_D=block, num_warps=K.warps(block))
    return out.view(*indices.shape, dim)


@embedding_fwd.register_fake
def _(indices, weight, padding_idx):
    return weight.new_empty(*indices.shape, weight.shape[1])


@torch.library.custom_op("blk_nn::embedding_bwd", mutates_args=())
def embedding_bwd(dy: Tensor, indices: Tensor, num_weights: int, padding_idx: int) -> Tensor:
    """The gradient of weight (num_weights x dim, dy's dtype): the rows of
    dy added into the rows their indices name, in the order of a stable
    sort of the indices (deterministic); row padding_idx (none where it is
    outside [0, num_weights)) and rows no index names are 0."""
    ity = _index_type(indices)
    ty = K.types(dy, "embedding")
    dim = dy.shape[-1]
    flat = indices.reshape(-1).contiguous()
    n = flat.numel()
    dy = dy.reshape(n, dim).contiguous()
    if not (n and dim):
        return torch.zeros(num_weights, dim, dtype=dy.dtype, device=dy.device)
    mod = K.module("embedding")
    if n <= RANK_MAX:
        # sorted by counting; each row of dw written once: zeros by embedding_zero_rows where no
        # index names it (or padding_idx), the sum of its dy rows by embedding_bwd where one does
        dw = torch.empty(num_weights, dim, dtype=dy.dtype, device=dy.device)
        hit = torch.zeros(num_weights, dtype=torch.int32, device=dy.device)
        ordered = torch.empty_like(flat)
        perm = torch.empty(n, dtype=torch.int64, device=dy.device)
        ends = torch.empty_like(perm)
        key = "i32" if (num_weights + 1) * n < 2 ** 31 else "i64"
        mod.embedding_rank[(blk.cdiv(n, 16),)](flat, ordered, perm, ends, hit, n, num_weights, I=ity, K=key,
                                               BLOCK_I=16, BLOCK_J=128, num_warps=8)
        zb = min(1024, _block(dim))
        mod.embedding_zero_rows[(blk.cdiv(num_weights, 8), blk.cdiv(dim, zb))](
            hit, dw, num_weights, dim, int(padding_idx), T=ty["T"], BLOCK_R=8, BLOCK_D=zb, num_warps=4)
    else:
        dw = torch.zeros(num_weights, dim, dtype=dy.dtype, device=dy.device)
        ordered, perm = torch.sort(flat, stable=True)
        ends = torch.searchsorted(ordered, ordered, right=True)
        ordered, perm, ends = ordered.contiguous(), perm.contiguous(), ends.contiguous()
    block = _block(dim)
    mod.embedding_bwd[(n, blk.cdiv(dim, block))](
        dy, ordered, perm, ends, dw, n, num_weights, dim, int(padding_idx), I=ity, BLOCK_D=block,
        num_warps=K.warps(block), **ty)
    return dw


# up to this many indices embedding_rank sorts them (n^2 compares, one
# launch) and dw is written once; more go through torch.sort (a radix sort
# of several passes) into a zeroed dw
RANK_MAX = 16384


@embedding_bwd.register_fake
def _(dy, indices, num_weights, padding_idx):
    return dy.new_empty(num_weights, dy.shape[-1])


def _setup(ctx, inputs, output):
    indices, weight, padding_idx = inputs
    ctx.save_for_backward(indices)
    ctx.num_weights, ctx.dtype, ctx.padding_idx = weight.shape[0], weight.dtype, padding_idx


def _backward(ctx, dy):
    (indices,) = ctx.saved_tensors
    dw = _embedding_bwd(dy.to(ctx.dtype), indices, ctx.num_weights, ctx.padding_idx)
    return None, dw, None


embedding_fwd.register_autograd(_backward, setup_context=_setup)
# the ops as called: the custom ops where traced, else without their dispatch (_kernels.eager)
_embedding = K.eager(embedding_fwd, _setup, _backward)
_embedding_bwd = K.eager(embedding_bwd)


def embedding(indices, weight, padding_idx=None):
    """torch.nn.functional.embedding: weight's rows (weight (num_embeddings,
    dim), float16, bfloat16, float32 or float64) at indices (int32 or int64,
    any shape), indices.shape + (dim,). Differentiable in weight; saves the
    indices. The gradient is summed in float32 (float64 for float64) in
    the order of a stable sort of the indices (by counting, in one launch,
    up to 16384 indices; torch.sort on the device past that), a row at a
    time, so it is the same from run to run, bit for bit; row padding_idx
    (negative: counted from the end) gets none. An index out of range is
    an IndexError for CPU tensors; on the GPU it is the caller's to avoid
    (checking would wait for the GPU): it reads a row of zeros and adds no
    gradient."""
    if weight.dim() != 2:
        raise ValueError(f"blk.nn.embedding: weight of shape {tuple(weight.shape)}; (num_embeddings, dim) "
                         f"expected")
    v = weight.shape[0]
    if padding_idx is None:
        padding_idx = -1
    elif not -v <= padding_idx < v:
        raise ValueError(f"blk.nn.embedding: padding_idx {padding_idx} outside [-{v}, {v})")
    elif padding_idx < 0:
        padding_idx += v
    return _embedding(indices, weight, int(padding_idx))
