"""tests/gpu/attention_bwd.py: attention backward (stdlib/nn/attention.tile's backward
kernels) after its forward (attention_fwd) on the GPU, against torch in float64:
F.scaled_dot_product_attention on float64 copies of q, k, v (the math backend) and
autograd with the same dO give o and dq, dk, dv; lse is logsumexp of the float64
scores. Grouped-query cases repeat k and v over the heads of a group for torch
(autograd then sums their gradients, as the kernels do).

Each case runs the deterministic backward twice (results must be bit-identical)
and the atomic one (dQ by f32 atomics) once. The error of a tensor is
max |got - want| / max(max |want|, 0.01) (at N = 1 dQ and dK are 0 but for
rounding: the floor keeps their noise from reading as a relative error); a case passes when every error is within the
tolerance of its type (f16 5e-3, bf16 2e-2) or within twice what torch's own
SDPA backward in that type makes on the same inputs (printed as "torch"), and
lse (f32) within 1e-4.
One line a case, last "N passed, N failed"; skips in one line without torch or
a GPU. Most of its time is compiling each variant once (about 50 kernel variants)."""
import math
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
try:
    import torch
    if not torch.cuda.is_available():
        raise ImportError("torch sees no GPU")
except ImportError as e:
    print(f"SKIP tests/gpu/attention_bwd.py: {e}")
    print("0 passed, 0 failed")
    sys.exit(0)
import blk
F = torch.nn.functional

bwd = blk.load(os.path.join(ROOT, "stdlib", "nn", "attention.tile"))
fwd = bwd.attention_fwd

# (Z, H, H_KV, N, D, causal, dtype)
CASES = [(2, 4, 4, 1024, 64, False, torch.float16), (2, 4, 4, 1024, 64, True, torch.float16),
         (2, 4, 4, 1024, 128, False, torch.bfloat16), (2, 8, 2, 1024, 128, True, torch.bfloat16),
         (2, 8, 2, 1024, 64, False, torch.float16), (1, 4, 1, 777, 64, False, torch.bfloat16),
         (2, 4, 2, 1000, 128, True, torch.float16), (1, 2, 2, 1, 64, True, torch.float16),
         (1, 2, 2, 300, 256, True, torch.bfloat16)]  # d256: the dK/dV accumulators spill (one stage, to fit)
# blocks: dK/dV KV_M query rows x KV_N keys, dQ Q_M rows x Q_N keys, the forward FWD_M x FWD_N
KV_M, KV_N, Q_M, Q_N, FWD_M, FWD_N, WARPS = 32, 64, 64, 32, 128, 64, 4
TOL = {torch.float16: 5e-3, torch.bfloat16: 2e-2}


def rel_err(got, want):
    got = got.double()
    if not bool(torch.isfinite(got).all()):
        return math.inf
    return ((got - want).abs().max() / want.abs().max().clamp_min(0.01)).item()


def reference(q, k, v, dout, causal, scale, group, lowp=False):
    """o, lse (float64 unless lowp) and the gradients of sum(o * dout); lowp: torch's
    SDPA in the inputs' type (its errors are the yardstick), no lse."""
    qs, ks, vs = (t.detach().clone() if lowp else t.detach().double() for t in (q, k, v))
    for t in (qs, ks, vs):
        t.requires_grad_(True)
    ke, ve = (t.repeat_interleave(group, dim=1) for t in (ks, vs))
    o = F.scaled_dot_product_attention(qs, ke, ve, is_causal=causal, scale=scale)
    o.backward(dout if lowp else dout.double())
    lse = None
    if not lowp:
        s = scale * (qs.detach() @ ke.detach().transpose(-1, -2))
        if causal:
            n = q.shape[2]
            s.masked_fill_(~torch.ones(n, n, dtype=torch.bool, device=s.device).tril(), -math.inf)
        lse = s.logsumexp(-1).reshape(-1, q.shape[2])
    return o.detach(), lse, qs.grad, ks.grad, vs.grad


def backward(q, k, v, o, dout, lse, causal, scale, group, atomic):
    Z, H, N, D = q.shape
    opts = {"num_warps": WARPS, "num_stages": 1 if D > 128 else 2}
    dq, dk, dv = torch.full_like(q, math.nan), torch.full_like(k, math.nan), torch.full_like(v, math.nan)
    delta = torch.empty(Z * H, N, device=q.device, dtype=torch.float32)
    # f32 scratch for the atomic adds (zeroed by the preprocessing); else unused
    dq_acc = torch.full(q.shape if atomic else (1,), math.nan, device=q.device, dtype=torch.float32)
    bwd.attention_bwd_preprocess(o, dout, delta, dq_acc, Z, H, N, HEAD_DIM=D, BLOCK_M=Q_M, ATOMIC_DQ=atomic)
    bwd.attention_bwd_dkdv(q, k, v, dout, lse, delta, dk, dv, dq_acc, Z, H, N, scale, HEAD_DIM=D, BLOCK_M=KV_M,
                           BLOCK_N=KV_N, CAUSAL=causal, GROUP=group, ATOMIC_DQ=atomic, **opts)
    if atomic:
        bwd.attention_bwd_dq_cast(dq_acc, dq, Z, H, N, HEAD_DIM=D, BLOCK_M=Q_M)
    else:
        bwd.attention_bwd_dq(q, k, v, dout, lse, delta, dq, Z, H, N, scale, HEAD_DIM=D, BLOCK_M=Q_M, BLOCK_N=Q_N,
                             CAUSAL=causal, GROUP=group, **opts)
    torch.cuda.synchronize()
    return dq, dk, dv


passed = failed = 0
for Z, H, HKV, N, D, causal, dt in CASES:
    group = H // HKV
    name = "f16" if dt == torch.float16 else "bf16"
    what = f"Z={Z} H={H} H_kv={HKV} N={N} d{D} {name}{' causal' if causal else ''}"
    torch.manual_seed(N * 7 + D + H)
    q = torch.randn(Z, H, N, D, device="cuda").to(dt)
    k, v = (torch.randn(Z, HKV, N, D, device="cuda").to(dt) for _ in range(2))
    dout = torch.randn(Z, H, N, D, device="cuda").to(dt)
    scale = 1 / math.sqrt(D)
    try:
        o = torch.full_like(q, math.nan)
        lse = torch.full((Z * H, N), math.nan, device="cuda", dtype=torch.float32)
        fwd(q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), Z, H, N, scale, HEAD_DIM=D,
            BLOCK_M=FWD_M if D <= 128 else 64, BLOCK_N=FWD_N, CAUSAL=causal, GROUP=group,
            num_stages=3 if D <= 128 else 1)
        det1 = backward(q, k, v, o, dout, lse, causal, scale, group, False)
        det2 = backward(q, k, v, o, dout, lse, causal, scale, group, False)
        atom = backward(q, k, v, o, dout, lse, causal, scale, group, True)
    except blk.Error as e:
        print(f"FAIL {what}: {str(e).splitlines()[0]}")
        failed += 1
        continue
    want_o, want_lse, *want = reference(q, k, v, dout, causal, scale, group)
    _, _, *lowp = reference(q, k, v, dout, causal, scale, group, lowp=True)
    torch_err = max(rel_err(g, w) for g, w in zip(lowp, want))
    tol = max(TOL[dt], 2 * torch_err)
    errs = {"o": rel_err(o, want_o)}
    lse_err = rel_err(lse, want_lse)  # f32: held to 1e-4 of its largest value
    for mode, got in (("", det1), (" atomic", atom)):
        for t, g, w in zip(("dq", "dk", "dv"), got, want):
            errs[t + mode] = rel_err(g, w)
    same = all(torch.equal(a, b) for a, b in zip(det1, det2))
    worst = max(errs.values())
    line = (f"{what}: max rel err dq {errs['dq']:.1e} dk {errs['dk']:.1e} dv {errs['dv']:.1e}, atomic dq "
            f"{errs['dq atomic']:.1e}; torch {name} {torch_err:.1e}; deterministic rerun "
            + ("bit-identical" if same else "DIFFERS"))
    if worst <= tol and same and lse_err <= 1e-4:
        print(f"ok   {line}")
        passed += 1
    else:
        bad = ", ".join(f"{t} {e:.2e}" for t, e in errs.items() if not e <= tol)
        bad += "" if lse_err <= 1e-4 else f"{', ' if bad else ''}lse {lse_err:.2e} (over 1e-4)"
        print(f"FAIL {line} (tolerance {tol:.1e}; over it: {bad or 'none'})")
        failed += 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
