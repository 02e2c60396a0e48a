#!/usr/bin/env python3
"""nn_host_overhead.py: the host (Python) cost of blk.nn's ops a call, on the CPU,
with every kernel launch replaced by nothing (blk.nn._kernels.module gives an
object whose kernel[grid](...) does nothing): what the op itself does around
its launches, forward alone, forward with inputs that require grad, and
forward + torch.autograd.grad. Small CPU tensors (8 x 64 float32), so that
torch's own allocations are cheap; CPU time of the thread, the best of 5
rounds.

    python bench/nn_host_overhead.py [PACKAGE_DIR]   (default: python/ of this checkout; needs torch)

A tool for reading, not a test: nothing is asserted.
"""
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "python"))
os.environ.setdefault("BLK_LIB", os.path.join(REPO, "build", "libblk.so"))
import torch  # noqa: E402

import blk.nn as nn  # noqa: E402
from blk.nn import _kernels as K  # noqa: E402


class _Nothing:
    """A module, a kernel and a launcher at once: every launch does nothing."""

    def __getattr__(self, name):
        return self

    def __getitem__(self, grid):
        return self

    def __call__(self, *args, **kw):
        return None


K.module = lambda name: _Nothing()


def per_call_us(fn, n=2000, reps=5):
    fn()
    best = float("inf")
    for _ in range(reps):
        t = time.thread_time()
        for _ in range(n):
            fn()
        best = min(best, (time.thread_time() - t) / n)
    return best * 1e6


def fwd_bwd(f, wrt):
    def go():
        out = f()
        out = out[0] if isinstance(out, tuple) else out
        torch.autograd.grad(out, wrt, torch.ones_like(out) if out.dim() else None)
    return go


def main():
    torch.set_num_threads(1)
    R, N = 8, 64
    x, r, w, b = torch.randn(R, N), torch.randn(R, N), torch.randn(N), torch.randn(N)
    xg, rg, wg, bg = (t.clone().requires_grad_() for t in (x, r, w, b))
    lp, tp = torch.randn(R, N).log_softmax(-1), torch.randn(R, N).softmax(-1)
    lpg = lp.clone().requires_grad_()
    tgt, ids = torch.randint(0, N, (R,)), torch.randint(0, R, (R, 4))
    q, k = torch.randn(2, 4, 4, 16).transpose(1, 2), torch.randn(2, 4, 2, 16).transpose(1, 2)   # HF's layout
    qg, kg = q.detach().requires_grad_(), k.detach().requires_grad_()
    cos, sin = torch.randn(1, 4, 16), torch.randn(1, 4, 16)
    ops = [
        ("rms_norm", lambda: nn.rms_norm(x, w), lambda: nn.rms_norm(xg, wg), (xg, wg)),
        ("add_rms_norm", lambda: nn.add_rms_norm(x, r, w), lambda: nn.add_rms_norm(xg, rg, wg), (xg, rg, wg)),
        ("layer_norm", lambda: nn.layer_norm(x, w, b), lambda: nn.layer_norm(xg, wg, bg), (xg, wg, bg)),
        ("swiglu", lambda: nn.swiglu(x, r), lambda: nn.swiglu(xg, rg), (xg, rg)),
        ("geglu", lambda: nn.geglu(x, r), lambda: nn.geglu(xg, rg), (xg, rg)),
        ("kl_div", lambda: nn.kl_div(lp, tp), lambda: nn.kl_div(lpg, tp), (lpg,)),
        ("jsd", lambda: nn.jsd(x, r), lambda: nn.jsd(xg, r), (xg,)),
        ("cross_entropy", lambda: nn.cross_entropy(x, tgt), lambda: nn.cross_entropy(xg, tgt), (xg,)),
        ("embedding", lambda: nn.embedding(ids, x), lambda: nn.embedding(ids, xg), (xg,)),
        ("rope", lambda: nn.rope(q, k, cos, sin), lambda: nn.rope(qg, kg, cos, sin), (qg, kg)),
    ]
    y = torch.randn(R, N, requires_grad=True)
    floor = per_call_us(fwd_bwd(lambda: y * w, (y,)), 1000)
    print(f"torch {torch.__version__}, launches stubbed; us a call (CPU time); torch's own y * w with "
          f"autograd.grad: {floor:.1f} us")
    print(f"{'op':14s} {'fwd':>8s} {'fwd, grad':>10s} {'fwd+bwd':>8s}")
    for name, f0, f1, wrt in ops:
        print(f"{name:14s} {per_call_us(f0):8.1f} {per_call_us(f1):10.1f} {per_call_us(fwd_bwd(f1, wrt), 1000):8.1f}")


if __name__ == "__main__":
    main()
