"""stdlib/nn/attention.tile's backward kernels from Python: the gradients dq, dk, dv of its
forward (attention_fwd), f16, grouped-query (H / H_KV query heads a key/value head), causal
and not; dQ both ways: by its own kernel (deterministic: run twice, the same bits) and by f32
atomics from the dK/dV kernel. The loss is sum(o * do) for a random do."""
import math

import _common
from _common import load, size, randn, empty, ref, check, done, np, GPU, torch, f64

bwd = load("../stdlib/nn/attention.tile")   # the kernels of blk.nn.attention
fwd = bwd.attention_fwd
Z, H, H_KV, N, D = size((2, 8, 2, 1000, 64), (1, 4, 2, 40, 16))
G = H // H_KV
scale = 1 / math.sqrt(D)
q, do = randn((Z, H, N, D), np.float16), randn((Z, H, N, D), np.float16)
k, v = randn((Z, H_KV, N, D), np.float16), randn((Z, H_KV, N, D), np.float16)
# dK/dV: KV_M query rows a step, KV_N keys a program; dQ: Q_M rows a program, Q_N keys a step
KV_M, KV_N, Q_M, Q_N = size((32, 64, 64, 32), (16, 32, 32, 16))


def strides(t):
    return list(t.stride()) if GPU else [b // t.itemsize for b in t.strides]


def np_grads(q, k, v, do, causal):
    k, v = np.repeat(k, G, axis=1), np.repeat(v, G, axis=1)  # key/value head h // G for query head h
    s = scale * q @ k.transpose(0, 1, 3, 2)
    if causal:
        s = np.where(np.tril(np.ones((N, N), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    dp = do @ v.transpose(0, 1, 3, 2)
    ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True))
    group_sum = lambda g: g.reshape(Z, H_KV, G, N, D).sum(axis=2)  # noqa: E731
    return scale * ds @ k, group_sum(scale * ds.transpose(0, 1, 3, 2) @ q), group_sum(p.transpose(0, 1, 3, 2) @ do)


def t_grads(q, k, v, do, causal):
    q, k, v = (t.clone().requires_grad_(True) for t in (q, k, v))
    o = torch.nn.functional.scaled_dot_product_attention(q, k.repeat_interleave(G, 1), v.repeat_interleave(G, 1),
                                                         is_causal=causal, scale=scale)
    o.backward(do)
    return q.grad, k.grad, v.grad


def backward(o, lse, causal, atomic):
    dq, dk, dv = empty((Z, H, N, D), np.float16), empty((Z, H_KV, N, D), np.float16), empty((Z, H_KV, N, D),
                                                                                                 np.float16)
    delta = empty((Z * H, N))
    dq_acc = empty((Z, H, N, D) if atomic else (1,))  # f32, zeroed by the preprocessing where used
    bwd.attention_bwd_preprocess(o, do, delta, dq_acc, Z, H, N, HEAD_DIM=D, BLOCK_M=Q_M, ATOMIC_DQ=atomic)
    bwd.attention_bwd_dkdv(q, k, v, do, lse, delta, dk, dv, dq_acc, Z, H, N, scale, HEAD_DIM=D, BLOCK_M=KV_M,
                           BLOCK_N=KV_N, CAUSAL=causal, GROUP=G, ATOMIC_DQ=atomic)
    if atomic:
        bwd.attention_bwd_dq_cast(dq_acc, dq, Z, H, N, HEAD_DIM=D, BLOCK_M=Q_M)
    else:
        bwd.attention_bwd_dq(q, k, v, do, lse, delta, dq, Z, H, N, scale, HEAD_DIM=D, BLOCK_M=Q_M, BLOCK_N=Q_N,
                             CAUSAL=causal, GROUP=G)
    return dq, dk, dv


for causal in (False, True):
    tag = "causal" if causal else "full"
    o, lse = empty((Z, H, N, D), np.float16), empty((Z * H, N))
    fwd(q, k, v, o, lse, *strides(q), *strides(k), *strides(v), *strides(o), Z, H, N, scale, HEAD_DIM=D,
        BLOCK_M=size(128, 32), BLOCK_N=size(64, 16), CAUSAL=causal, GROUP=G)
    want = [ref(lambda *a: t_grads(*a)[i], lambda *a: np_grads(*a)[i], q, k, v, do, causal) for i in range(3)]
    first, again, atomic = backward(o, lse, causal, False), backward(o, lse, causal, False), backward(o, lse, causal,
                                                                                                        True)
    for name, got, got_atomic, w in zip(("dq", "dk", "dv"), first, atomic, want):
        check(f"{name} ({tag})", got, w, 1e-2)
        check(f"{name} ({tag}, dQ by atomics)", got_atomic, w, 1e-2)
    same = all(np.array_equal(f64(a), f64(b)) for a, b in zip(first, again))
    _common.failures += not same
    print(f"{'ok  ' if same else 'FAIL'} deterministic dQ ({tag}): a second run gives the same bits")
done("attention_backward")
