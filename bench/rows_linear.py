#!/usr/bin/env python3
"""rows_linear.py: blk.nn.linear, the linear layer with its epilogue fused (python3 bench/bench.py --only
issue30_linear).

Llama-3-8B's projections at 8192 tokens, bf16: q/o (4096 -> 4096), gate/up with SiLU (4096 -> 14336),
down with the residual added (14336 -> 4096). Each gives two rows, "fwd" (the forward with x, the
weight and the residual requiring gradients, as in training: what it saves included) and "fwd+bwd"
(that forward, then torch.autograd.grad of the output against a fixed random output gradient), three
sides each:

- blk: blk.nn.linear(x, w, None, activation, residual) (python/blk/nn/_linear.py: one launch of
  stdlib/nn/linear.tile forward; the backward's g = dout * act'(z) and its column sums, dx = g @ W
  (NN), dW = g^T @ x (TN, x read transposed));
- torch: F.linear(x, w), then F.silu and + residual, eager (cuBLAS and torch's element-wise kernels);
- torch.compile: the same formula through torch.compile (Inductor: cuBLAS and a fused epilogue
  kernel; one compile a row pair: the "fwd" check compiles the forward, "fwd+bwd" the backward).

Checks against float64 (the formula through autograd): max |got - ref| / max |ref| within 1e-2 for
the output and 2e-2 for the gradients. Timing: bench.measure's short trial (do_bench, 5 ms warm-up,
20 ms of runs, L2 flushed, median). The TFLOP/s column counts 2MNK for fwd and 6MNK for fwd+bwd.

    python3 bench/rows_linear.py --cpu   (no GPU: every row at tiny shapes, blk.nn on the interpreter,
        torch on CPU; checks only, the times mean nothing)
"""

import math
import os
import sys

try:  # bench.py imports this file where there is no torch (selftest.py)
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = None

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GROUP = "issue30_linear"
TOL_OUT, TOL_GRAD = 1e-2, 2e-2

# (key, name, tokens, in, out, activation, residual)
SHAPES = [("linear_qo", "q/o proj", 8192, 4096, 4096, None, False),
          ("linear_up_silu", "gate/up proj + SiLU", 8192, 4096, 14336, "silu", False),
          ("linear_down_res", "down proj + residual", 8192, 14336, 4096, None, True)]
TINY = {"linear_qo": (24, 40, 40), "linear_up_silu": (24, 40, 72), "linear_down_res": (24, 72, 40)}


class Section:
    """The table of these rows (bench.table prints it after the others)."""
    title = "### blk.nn.linear, fused epilogue (issue 30)"
    sides = ("blk", "torch", "torch.compile")
    header = ["op", "size", "blk ms", "torch ms", "torch.compile ms", "blk TFLOP/s", "blk/torch",
              "blk/torch.compile"]
    legend = ("blk/torch = torch time / blk time, blk/torch.compile = torch.compile time / blk time (above 1: blk "
              "is faster). fwd: the forward with inputs requiring gradients; fwd+bwd: the forward and "
              "torch.autograd.grad of x, the weight (and the residual). torch: F.linear + activation + residual, "
              "eager (cuBLAS); torch.compile: the same compiled.")

    @staticmethod
    def cells(r):
        def ms(v):
            return f"{v:.4g}" if isinstance(v, float) else v

        def ratio(side):
            return f"{r.ms[side] / r.ms['blk']:.2f}" if r.ok("blk") and r.ok(side) else "—"
        tf = f"{r.flop / (r.ms['blk'] * 1e9):.0f}" if r.flop and r.ok("blk") else "—"
        return [r.kernel, r.size] + [ms(r.ms[s]) for s in Section.sides] + [tf, ratio("torch"),
                                                                            ratio("torch.compile")]


SECTION = Section()


def formula(x, w, act, r):
    y = F.linear(x, w)
    if act == "silu":
        y = F.silu(y)
    return y + r if r is not None else y


def _nn():
    if os.path.join(REPO, "python") not in sys.path:
        sys.path.insert(0, os.path.join(REPO, "python"))
    import blk.nn
    return blk.nn


def rel_err(got, want):
    """max |got - want| / max |want| in float64 (inf for a NaN or a shape that differs)."""
    if tuple(got.shape) != tuple(want.shape) or not bool(torch.isfinite(got).all()):
        return math.inf
    return ((got.double() - want.double()).abs().max() / want.double().abs().max().clamp(min=1e-30)).item()


def run_shape(env, b, name, T, K, N, act, res, compile_ok=True):
    """The fwd and fwd+bwd rows of one projection: each side checked against float64, then timed."""
    torch.manual_seed(30)
    dev, dt = env.dev, torch.bfloat16
    nn = _nn()
    size = f"{T}×{K} → {N}"
    fwd = b.Row(f"linear {name} fwd", size, flop=2.0 * T * N * K, section=SECTION)
    both = b.Row(f"linear {name} fwd+bwd", size, flop=6.0 * T * N * K, section=SECTION)
    ins = [torch.randn(T, K, device=dev).to(dt), (torch.randn(N, K, device=dev) / math.sqrt(K)).to(dt)]
    ins.append(torch.randn(T, N, device=dev).to(dt) if res else None)
    dout = torch.randn(T, N, device=dev).to(dt)
    # the float64 reference, through autograd
    ref_in = [t.double().requires_grad_(True) if t is not None else None for t in ins]
    ref_out = formula(ref_in[0], ref_in[1], act, ref_in[2])
    ref_grads = torch.autograd.grad(ref_out, [t for t in ref_in if t is not None], dout.double())
    ref_out = ref_out.detach()
    del ref_in
    sides = [("blk", lambda x, w, r: nn.linear(x, w, None, act, r)), ("torch", lambda x, w, r: formula(x, w, act, r))]
    if compile_ok:
        sides.append(("torch.compile", torch.compile(lambda x, w, r: formula(x, w, act, r))))
    else:
        for row in (fwd, both):
            row.ms["torch.compile"] = "n/a"
    for side, fn in sides:
        xs = [t.detach().clone().requires_grad_(True) if t is not None else None for t in ins]
        b.measure(env, fwd, side, lambda: fn(*xs), [], lambda o: rel_err(o.detach(), ref_out), TOL_OUT, quick=True)
        wrt = [t for t in xs if t is not None]

        def fwd_bwd():
            out = fn(*xs)
            return out, torch.autograd.grad(out, wrt, dout)

        def check(res_):
            return max([rel_err(res_[0].detach(), ref_out)] + [rel_err(g, r) for g, r in zip(res_[1], ref_grads)])

        b.measure(env, both, side, fwd_bwd, [], check, TOL_GRAD, quick=True)
        del xs, wrt
    fwd.notes.append(f"{name}: {T} tokens, {K} → {N}, bf16" + (", SiLU fused" if act else "")
                     + (", residual added in the epilogue" if res else "")
                     + "; blk: blk.nn.linear (autotuned persistent TMA tiles, stdlib/nn/linear.tile)")
    return [fwd, both]


def _row(name, T, K, N, act, res):
    return lambda env, b: run_shape(env, b, name, T, K, N, act, res)


ROWS = [(key, f"linear {name} fwd and fwd+bwd", f"{T}×{K} → {N} bf16", _row(name, T, K, N, act, res))
        for key, name, T, K, N, act, res in SHAPES]


def cpu_check(compile_ok=True):
    """Every row at TINY shapes on the CPU: returns the rows."""
    sys.path.insert(0, HERE)
    torch.cuda.synchronize = lambda *a, **k: None   # bench.measure's; nothing to wait for here
    import bench as b
    from rows_nn import CpuEnv   # the same stand-in for bench.Env
    env = CpuEnv()
    rows = []
    for key, name, _T, _K, _N, act, res in SHAPES:
        T, K, N = TINY[key]
        rows += run_shape(env, b, name, T, K, N, act, res, compile_ok=compile_ok)
    return rows


def main():
    if "--cpu" not in sys.argv[1:]:
        print("\n".join(__doc__.strip().splitlines()[-3:]))
        return 2
    rows = cpu_check(compile_ok="--no-compile" not in sys.argv[1:])
    bad = 0
    for r in rows:
        print("| " + " | ".join(SECTION.cells(r)) + " |")
        bad += any(v in ("FAIL", "ERROR") for v in r.ms.values())
    print(f"rows_linear CPU check: {len(rows)} rows, {bad} with a side FAIL/ERROR")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
