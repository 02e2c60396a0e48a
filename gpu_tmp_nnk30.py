"""gpu_tmp_nnk30.py: GPU timing of blk.nn's cross-entropy, embedding and RoPE
(branch nnk30) at the Llama-3-8B shapes of bench/rows_nn.py, on one GPU:

    PYTHONPATH=$PWD/python BLK_LIB=$PWD/build/libblk.so python3 gpu_tmp_nnk30.py

For each op, fwd and fwd+bwd: the result checked against torch (float32
reference), then the median of CUDA-event times over 50 runs (L2 flushed
between runs), then one torch.profiler run listing every GPU kernel with
its time (what a fwd+bwd launches, and how long each kernel takes). Liger
(liger_kernel) is timed the same way where it imports. A temporary file:
not part of the project."""

import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import blk.nn as nn

# NNK30_CPU=1: a dry run of this script on the CPU (tiny shapes, the interpreter; times mean nothing)
CPU = os.environ.get("NNK30_CPU") == "1"
DEV = "cpu" if CPU else "cuda"
B16 = torch.bfloat16
torch.manual_seed(0)
_flush = torch.empty(16 if CPU else 256 << 20, dtype=torch.int8, device=DEV)
if CPU:
    N, V, DIM, BATCH, SEQ, HQ, HK, HD, REPS = 8, 300, 64, 2, 6, 4, 2, 16, 2
else:
    N, V, DIM, BATCH, SEQ, HQ, HK, HD, REPS = 8192, 128256, 4096, 2, 4096, 32, 8, 128, 50

try:
    from liger_kernel.transformers.functional import liger_cross_entropy, liger_rope  # noqa: F401
    from liger_kernel.ops import LigerEmbeddingFunction
    LIGER = True
except Exception as e:  # noqa: BLE001
    print(f"(no Liger: {type(e).__name__}: {e})")
    LIGER = False


def cuda_ms(fn, reps=None):
    """Median ms of fn() by CUDA events, L2 flushed before each run."""
    reps = reps or REPS
    for _ in range(2 if CPU else 5):
        fn()
    times = []
    for _ in range(reps):
        _flush.zero_()
        if CPU:
            t0 = time.perf_counter()
            fn()
            times.append(1e3 * (time.perf_counter() - t0))
            continue
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def kernels(fn, label):
    """One profiled run of fn(): each GPU kernel (memsets and copies too)
    and its time, and their sum."""
    if CPU:
        return
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    rows = []
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            rows.append((ev.name[:90], ev.device_time / 1000.0))
    total = sum(t for _, t in rows)
    print(f"    {label}: {len(rows)} GPU kernels, {total:.3f} ms kernel time")
    for name, t in rows:
        print(f"      {t:8.3f} ms  {name}")


def check(name, got, want, tol):
    err = (got.float() - want.float()).abs().max().item()
    scale = want.float().abs().max().item()
    ok = err <= tol * max(scale, 1e-30)
    print(f"  check {name}: max|err| {err:.3e} (ref max {scale:.3e}) {'ok' if ok else 'FAIL'}")
    if not ok:
        check.failed = True


check.failed = False


def report(op, sides):
    for side, (fwd, fwdbwd) in sides.items():
        print(f"  {op} {side:6s}: fwd {cuda_ms(fwd):.3f} ms, fwd+bwd {cuda_ms(fwdbwd):.3f} ms")
    for side, (fwd, fwdbwd) in sides.items():
        kernels(fwd, f"{side} fwd")
        kernels(fwdbwd, f"{side} fwd+bwd")


# ---- cross-entropy: logits 8192 x 128256 bf16, mean --------------------------------------------
print(f"cross_entropy {N} x {V} bf16, mean")
logits = torch.randn(N, V, dtype=B16, device=DEV)
target = torch.randint(0, V, (N,), device=DEV)
target[::13] = -100
x = logits.clone().requires_grad_()
for go in (1.0, 0.37):
    x.grad = None
    loss = nn.cross_entropy(x, target)
    (loss * go).backward()
    xr = logits.float().requires_grad_()
    ref = F.cross_entropy(xr, target)
    (ref * go).backward()
    check(f"ce loss (grad_output {go})", loss, ref, 1e-2)
    check(f"ce dlogits (grad_output {go})", x.grad, xr.grad, 2e-2)
    del xr, ref
x.grad = None
loss = nn.cross_entropy(x, target)
loss.backward(retain_graph=True)
g1 = x.grad.clone()
loss.backward()
check("ce retain_graph twice = 2x", x.grad, 2 * g1, 1e-2)
del g1
x.grad = None


def ce_fwd():
    nn.cross_entropy(x, target)


def ce_fwdbwd():
    (g,) = torch.autograd.grad(nn.cross_entropy(x, target), x)


sides = {"blk": (ce_fwd, ce_fwdbwd)}
if LIGER:
    xl = logits.clone().requires_grad_()

    def lce_fwd():
        liger_cross_entropy(xl, target)

    def lce_fwdbwd():
        torch.autograd.grad(liger_cross_entropy(xl, target), xl)
    sides["liger"] = (lce_fwd, lce_fwdbwd)
report("cross_entropy", sides)
del x, logits, sides
if LIGER:
    del xl
torch.cuda.empty_cache()

# ---- embedding: 8192 ids into 128256 x 4096 bf16 -----------------------------------------------
print(f"embedding {N} ids, weight {V} x {DIM} bf16")
W = torch.randn(V, DIM, dtype=B16, device=DEV, requires_grad=True)
ids = torch.randint(0, V, (N,), device=DEV)
ids[:N // 16] = 7   # a frequent token
dy = torch.randn(N, DIM, dtype=B16, device=DEV)
out = nn.embedding(ids, W)
check("embedding out", out, F.embedding(ids, W.detach()), 0)
(dw1,) = torch.autograd.grad(out, W, dy)
(dw2,) = torch.autograd.grad(nn.embedding(ids, W), W, dy)
print(f"  check embedding dweight bit-identical run to run: {'ok' if torch.equal(dw1, dw2) else 'FAIL'}")
check.failed |= not torch.equal(dw1, dw2)
ref = torch.zeros(V, DIM, dtype=torch.float32, device=DEV).index_add_(0, ids, dy.float())
check("embedding dweight", dw1, ref, 1e-2)
del dw1, dw2, ref


def emb_fwd():
    nn.embedding(ids, W)


def emb_fwdbwd():
    torch.autograd.grad(nn.embedding(ids, W), W, dy)


sides = {"blk": (emb_fwd, emb_fwdbwd)}
if LIGER:
    def lemb_fwd():
        LigerEmbeddingFunction.apply(W, ids)

    def lemb_fwdbwd():
        torch.autograd.grad(LigerEmbeddingFunction.apply(W, ids), W, dy)
    sides["liger"] = (lemb_fwd, lemb_fwdbwd)
report("embedding", sides)
del W, dy, sides
torch.cuda.empty_cache()

# ---- RoPE: q (2,4096,32,128), k (2,4096,8,128) in HF layout, cos/sin (1,4096,128) --------------
print(f"rope q ({BATCH},{SEQ},{HQ},{HD}) k ({BATCH},{SEQ},{HK},{HD}) bf16, HF layout seen as (B,H,S,D)")
ql = torch.randn(BATCH, SEQ, HQ, HD, dtype=B16, device=DEV, requires_grad=True)
kl = torch.randn(BATCH, SEQ, HK, HD, dtype=B16, device=DEV, requires_grad=True)
pos = torch.arange(SEQ, device=DEV, dtype=torch.float32)
inv = 1.0 / (500000 ** (torch.arange(0, HD, 2, device=DEV, dtype=torch.float32) / HD))
emb = torch.cat([pos[:, None] * inv] * 2, dim=-1)[None]
cos, sin = emb.cos().to(B16), emb.sin().to(B16)
q, k = ql.transpose(1, 2), kl.transpose(1, 2)
gq = torch.randn(BATCH, HQ, SEQ, HD, dtype=B16, device=DEV)   # contiguous (B,H,S,D), as attention gives
gk = torch.randn(BATCH, HK, SEQ, HD, dtype=B16, device=DEV)


def rot(t):
    a, b = t.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


oq, ok = nn.rope(q, k, cos, sin)
rq = q.float() * cos.float()[:, None] + rot(q.float()) * sin.float()[:, None]
rk = k.float() * cos.float()[:, None] + rot(k.float()) * sin.float()[:, None]
check("rope q", oq, rq, 1e-2)
check("rope k", ok, rk, 1e-2)
for name, (a, b) in {"contiguous (B,H,S,D)": (gq, gk),
                     "(B,S,H,D) transposed": (gq.transpose(1, 2).contiguous().transpose(1, 2),
                                              gk.transpose(1, 2).contiguous().transpose(1, 2))}.items():
    dq, dk = torch.autograd.grad(nn.rope(q, k, cos, sin), (ql, kl), (a, b))
    wq, wk = torch.autograd.grad((rq, rk), (ql, kl), (a.float(), b.float()), retain_graph=True)
    check(f"rope dq, incoming {name}", dq, wq, 1e-2)
    check(f"rope dk, incoming {name}", dk, wk, 1e-2)
    print(f"    dq strides {dq.stride()} (contiguous: {dq.is_contiguous()})")
del rq, rk


def rope_fwd():
    nn.rope(q, k, cos, sin)


def rope_fwdbwd():
    torch.autograd.grad(nn.rope(q, k, cos, sin), (ql, kl), (gq, gk))


sides = {"blk": (rope_fwd, rope_fwdbwd)}
if LIGER:
    def lrope_fwd():
        liger_rope(q, k, cos, sin)

    def lrope_fwdbwd():
        torch.autograd.grad(liger_rope(q, k, cos, sin), (ql, kl), (gq, gk))
    sides["liger"] = (lrope_fwd, lrope_fwdbwd)
report("rope", sides)

print("checks:", "FAILED" if check.failed else "all ok")
sys.exit(1 if check.failed else 0)
