"""stdlib/nn/attention.tile's attention_fwd from Python: scaled dot-product attention forward,
f16, causal and not; q and o (Z, H, N_CTX, D), k and v (Z, N_CTX, H, D) as a
fused QKV projection leaves them (the kernel takes every stride)."""
import math

from _common import GPU, load, size, randn, empty, ref, check, done, np, torch

kern = load("../stdlib/nn/attention.tile").attention_fwd   # the kernels of blk.nn.attention
Z, H, N_CTX, D = size((2, 8, 1000, 64), (1, 2, 80, 16))
scale = 1 / math.sqrt(D)
q = randn((Z, H, N_CTX, D), np.float16)
k, v = randn((Z, N_CTX, H, D), np.float16), randn((Z, N_CTX, H, D), np.float16)


def strides(t, order=(0, 1, 2, 3)):
    """t's strides in elements, in the kernel's (z, h, i, d) order: `order`
    names the axis of t that holds each."""
    s = list(t.stride()) if GPU else [b // t.itemsize for b in t.strides]
    return [s[a] for a in order]


def np_attention(q, k, v, causal):
    k, v = k.transpose(0, 2, 1, 3), v.transpose(0, 2, 1, 3)        # (Z, H, N_CTX, D)
    s = scale * q @ k.transpose(0, 1, 3, 2)
    if causal:
        s = np.where(np.tril(np.ones((N_CTX, N_CTX), bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    l_ = p.sum(axis=-1, keepdims=True)
    return p / l_ @ v, (m + np.log(l_))[..., 0]


def t_attention(q, k, v, causal):
    k, v = k.transpose(1, 2), v.transpose(1, 2)
    s = scale * q @ k.transpose(-1, -2)
    if causal:
        s = s.masked_fill(~torch.ones(N_CTX, N_CTX, dtype=torch.bool, device=s.device).tril(), -math.inf)
    return s.softmax(-1) @ v, s.logsumexp(-1)


for causal in (False, True):
    o, lse = empty((Z, H, N_CTX, D), np.float16), empty((Z * H, N_CTX))
    kern(q, k, v, o, lse, *strides(q), *strides(k, (0, 2, 1, 3)), *strides(v, (0, 2, 1, 3)), *strides(o), Z, H, N_CTX, scale,
         HEAD_DIM=D, BLOCK_M=size(128, 32), BLOCK_N=size(64, 16), CAUSAL=causal)
    want_o, want_lse = ref(lambda *a: t_attention(*a)[0], lambda *a: np_attention(*a)[0], q, k, v, causal), \
        ref(lambda *a: t_attention(*a)[1], lambda *a: np_attention(*a)[1], q, k, v, causal)
    tag = "causal" if causal else "full"
    check(f"o ({tag})", o, want_o, 1e-2)
    check(f"lse ({tag})", lse, want_lse.reshape(Z * H, N_CTX), 1e-3)
done("attention")
