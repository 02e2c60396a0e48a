#!/usr/bin/env python3
"""rows_liger.py: issue 34's rows: Liger-Kernel's own Triton ops, unchanged, run by Triton and by
blk.triton on the same source (python3 bench/bench.py --only issue34; a table of its own).

Liger-Kernel (liger_kernel.ops.*, imported, never copied here) binds `triton` when it is imported,
so each side runs in a process of its own, this file run as a worker: the Triton side with
Triton's modules, the blk side after blk.triton.install() (`import triton` gives blk.triton). Each
worker starts with fresh, empty caches (TRITON_CACHE_DIR and BLK_CACHE_DIR set to new temporary
folders), runs every selected op once cold, then times it, and writes its results as JSON; the
rows are made from the two files. The Triton side runs first and saves each op's outputs and
gradients (torch.save, CPU copies); the blk side loads them and gives the largest absolute
difference of its own.

Per op, at LLM shapes (the input type: bf16; 8192 tokens, hidden 4096, intermediate 14336, vocab
32000 and, for the cross-entropy, 128256 too), two rows:
- fwd: the op's autograd Function forward, inputs requiring gradients; fwd+bwd: that forward and
  torch.autograd.grad of its outputs against fixed random output gradients (or of the loss);
- kernel time: the median of CUDA-event times around one call (L2 flushed by writing 256 MiB
  before each), a short trial (about 150 ms of calls a row); the call's host work (Liger's
  Python, torch's allocations, the launches) is inside the events, hidden where the GPU is busy;
- GPU time: the durations of the GPU operations of a call (kernels, memsets, copies) summed, as
  torch.profiler records them over 5 calls (no flush): the host's part left out;
- cold compile: the first call's wall time (synchronized) less that of a warm call: on the fwd
  row the first forward's, on the fwd+bwd row the first forward's and the first backward's (all
  the op's kernels; a kernel an earlier op compiled in the same process is not compiled again:
  fused_linear_cross_entropy shares Liger's cross-entropy kernel with cross_entropy, which runs
  first); each process first compiles and launches a tiny kernel of its own (not counted: the
  process's one-time start-up, given in the notes);
- agreement: the largest |blk - Triton| over the outputs (fwd row) and over the gradients
  (fwd+bwd row), with the largest |Triton| beside it; blk is FAIL when a difference passes 2e-2
  (outputs) or 5e-2 (gradients) of that scale, and the row is left out of the geometric means.
At the end, the launch overhead of one small Liger kernel launched directly from Python
(_swiglu_forward_kernel on a 1 × 128 row, float32): 10,000 launches, then one synchronize, the
wall time a launch (and the host time before the synchronize, in the notes).

BENCH_LIGER_DTYPE=f32 runs the GPU rows in float32 instead.

    python3 bench/rows_liger.py --cpu [--bf16] [--ops swiglu,rms_norm]   (no GPU: the blk side on
        the interpreter at tiny shapes, float32 (--bf16: bfloat16 inputs), each op's outputs and
        gradients against a float64 torch formula (within 1e-4 of the largest value; 3e-2 in
        bf16); Liger-Kernel must import (PYTHONPATH); Triton is not needed)
    python3 bench/rows_liger.py --worker triton|blk --json FILE --dir DIR [--dtype bf16|f32]
        [--ops K,..] [--cpu]   (one side, as bench.py starts it)
"""

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GROUP = "issue34"

LLM = dict(T=8192, H=4096, I=14336, V=32000, V_BIG=128256, B=2, S=4096, HQ=32, HK=8, D=128, GB=32, GC=128,
           GL=4096, GG=32, EV=32000)
TINY = dict(T=6, H=96, I=80, V=300, V_BIG=520, B=1, S=8, HQ=4, HK=2, D=64, GB=2, GC=8, GL=32, GG=4, EV=50)
EPS = 1e-6
TOL_OUT, TOL_GRAD = 2e-2, 5e-2          # blk against Triton, of max |Triton| (GPU)
TOL_CPU = {"float32": 1e-4, "bfloat16": 3e-2}   # the interpreter against float64 (CPU check), by input type
TARGETS = {"kernel": 1.0, "compile": 10.0, "launch": 3.0}   # issue 34's: blk/Triton at least
WORKER_TIMEOUT_S = 200   # a side; both within bench.py's 7-minute budget and a 10-minute device call
COMPILED_MS = 50.0   # a cold compile shorter than this on Triton's side compiled nothing new (see Section.means)
LAUNCHES = 10000
CONTEXT_LOST = 3   # a worker's exit status after an op left the CUDA context unusable


# ---- the ops ----------------------------------------------------------------------------------

class Case:
    """One op at one shape: inputs (made from a seed on the device, the same on both sides), the
    indices of those that require gradients (with their names), the call of Liger's autograd
    Function (its differentiable outputs, a tuple), output gradients (None: a scalar loss) and the
    float64 formula (the CPU check's reference)."""

    def __init__(self, size, inputs, grad, call, formula, douts=None, names=None):
        self.size, self.inputs, self.grad, self.call, self.formula = size, inputs, grad, call, formula
        self.douts = douts
        self.names = names or [f"x{i}" for i in range(len(inputs))]

    def fresh(self):
        return [t.detach().clone().requires_grad_(i in self.grad) for i, t in enumerate(self.inputs)]

    def fresh_douts(self):
        return None if self.douts is None else [d.clone() for d in self.douts]


def _t(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _F():
    import torch.nn.functional as F
    return F


def c_glu(torch, dev, dt, S, kind):
    F, T, I = _F(), S["T"], S["I"]
    a, b = (torch.randn(T, I, device=dev) * 2).to(dt), torch.randn(T, I, device=dev).to(dt)
    d = torch.randn(T, I, device=dev).to(dt)
    if kind == "swiglu":
        from liger_kernel.ops.swiglu import LigerSiLUMulFunction as Fn
        return Case(f"{T}×{I}", [a, b], (0, 1), lambda a, b: _t(Fn.apply(a, b)), lambda a, b: F.silu(a) * b, [d])
    from liger_kernel.ops.geglu import LigerGELUMulFunction as Fn
    return Case(f"{T}×{I}", [a, b], (0, 1), lambda a, b: _t(Fn.apply(a, b)),
                lambda a, b: F.gelu(a, approximate="tanh") * b, [d])


def c_relu_squared(torch, dev, dt, S):
    from liger_kernel.ops.relu_squared import LigerReLUSquaredFunction as Fn
    T, I = S["T"], S["I"]
    x, d = torch.randn(T, I, device=dev).to(dt), torch.randn(T, I, device=dev).to(dt)
    return Case(f"{T}×{I}", [x], (0,), lambda x: _t(Fn.apply(x)), lambda x: torch.relu(x) ** 2, [d])


def _rms(x, eps=EPS):
    return x * (x.pow(2).mean(-1, keepdim=True) + eps).rsqrt()


def c_rms_norm(torch, dev, dt, S):
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction as Fn
    T, H = S["T"], S["H"]
    x, w = torch.randn(T, H, device=dev).to(dt), (torch.rand(H, device=dev) + 0.5).to(dt)
    return Case(f"{T}×{H}", [x, w], (0, 1), lambda x, w: _t(Fn.apply(x, w, EPS)), lambda x, w: _rms(x) * w,
                [torch.randn(T, H, device=dev).to(dt)], ["x", "w"])


def c_fused_add_rms_norm(torch, dev, dt, S):
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction as Fn
    T, H = S["T"], S["H"]
    x, r = torch.randn(T, H, device=dev).to(dt), torch.randn(T, H, device=dev).to(dt)
    w = (torch.rand(H, device=dev) + 0.5).to(dt)
    return Case(f"{T}×{H}", [x, r, w], (0, 1, 2), lambda x, r, w: _t(Fn.apply(x, r, w, EPS)),
                lambda x, r, w: (_rms(x + r) * w, x + r),
                [torch.randn(T, H, device=dev).to(dt), torch.randn(T, H, device=dev).to(dt)], ["x", "r", "w"])


def c_layer_norm(torch, dev, dt, S):
    from liger_kernel.ops.layer_norm import LigerLayerNormFunction as Fn
    F, T, H = _F(), S["T"], S["H"]
    x = torch.randn(T, H, device=dev).to(dt)
    w, b = (torch.rand(H, device=dev) + 0.5).to(dt), (torch.rand(H, device=dev) - 0.5).to(dt)
    return Case(f"{T}×{H}", [x, w, b], (0, 1, 2), lambda x, w, b: _t(Fn.apply(x, w, b, 1e-5)),
                lambda x, w, b: F.layer_norm(x, (H,), w, b, 1e-5), [torch.randn(T, H, device=dev).to(dt)],
                ["x", "w", "b"])


def c_poly_norm(torch, dev, dt, S):
    from liger_kernel.ops.poly_norm import LigerPolyNormFunction as Fn
    T, H = S["T"], S["H"]
    x = torch.randn(T, H, device=dev).to(dt)
    w, b = torch.tensor([0.3, 0.4, 0.5], device=dev).to(dt), torch.tensor(0.1, device=dev).to(dt)  # b: 0-d
    return Case(f"{T}×{H}", [x, w, b], (0, 1, 2), lambda x, w, b: _t(Fn.apply(x, w, b, EPS)),
                lambda x, w, b: w[0] * _rms(x ** 3) + w[1] * _rms(x ** 2) + w[2] * _rms(x) + b,
                [torch.randn(T, H, device=dev).to(dt)], ["x", "w", "b"])


def c_dyt(torch, dev, dt, S):
    from liger_kernel.ops.dyt import LigerDyTFunction as Fn
    T, H = S["T"], S["H"]
    x, a = torch.randn(T, H, device=dev).to(dt), torch.tensor([0.5], device=dev).to(dt)
    g, b = (torch.rand(H, device=dev) + 0.5).to(dt), (torch.rand(H, device=dev) - 0.5).to(dt)
    return Case(f"{T}×{H}", [x, a, g, b], (0, 1, 2, 3), lambda x, a, g, b: _t(Fn.apply(x, a, g, b)),
                lambda x, a, g, b: g * torch.tanh(a * x) + b, [torch.randn(T, H, device=dev).to(dt)],
                ["x", "alpha", "gamma", "beta"])


def c_group_norm(torch, dev, dt, S):
    from liger_kernel.ops.group_norm import LigerGroupNormFunction as Fn
    F, B, C, L, G = _F(), S["GB"], S["GC"], S["GL"], S["GG"]
    x = torch.randn(B, C, L, device=dev).to(dt)
    w, b = (torch.rand(C, device=dev) + 0.5).to(dt), (torch.rand(C, device=dev) - 0.5).to(dt)
    return Case(f"{B}×{C}×{L}, {G} groups", [x, w, b], (0, 1, 2),
                lambda x, w, b: _t(Fn.apply(x, w, b, C, G, 1e-5)), lambda x, w, b: F.group_norm(x, G, w, b, 1e-5),
                [torch.randn(B, C, L, device=dev).to(dt)], ["x", "w", "b"])


def c_softmax(torch, dev, dt, S):
    from liger_kernel.ops.softmax import LigerSoftmaxFunction as Fn
    T, H = S["T"], S["H"]
    x = (torch.randn(T, H, device=dev) * 3).to(dt)
    return Case(f"{T}×{H}", [x], (0,), lambda x: _t(Fn.apply(x)), lambda x: x.softmax(-1),
                [torch.randn(T, H, device=dev).to(dt)])


def _sparsemax(z):
    import torch
    zs, _ = torch.sort(z, -1, descending=True)
    k = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype, device=z.device)
    cs = zs.cumsum(-1)
    kz = (1 + k * zs > cs).sum(-1, keepdim=True)
    tau = (cs.gather(-1, kz - 1) - 1) / kz
    return torch.clamp(z - tau, min=0)


def c_sparsemax(torch, dev, dt, S):
    from liger_kernel.ops.sparsemax import LigerSparsemaxFunction as Fn
    T, H = S["T"], S["H"]
    x = (torch.randn(T, H, device=dev) * 3).to(dt)
    return Case(f"{T}×{H}", [x], (0,), lambda x: _t(Fn.apply(x, -1)), _sparsemax,
                [torch.randn(T, H, device=dev).to(dt)])


def _rot(x):
    import torch
    x1, x2 = x.chunk(2, -1)
    return torch.cat((-x2, x1), -1)


def c_rope(torch, dev, dt, S):
    from liger_kernel.ops.rope import LigerRopeFunction as Fn
    B, N, hq, hk, D = S["B"], S["S"], S["HQ"], S["HK"], S["D"]
    q = torch.randn(B, N, hq, D, device=dev).to(dt).transpose(1, 2)  # Hugging Face's layout
    k = torch.randn(B, N, hk, D, device=dev).to(dt).transpose(1, 2)
    inv = 1.0 / (500000.0 ** (torch.arange(0, D, 2, device=dev, dtype=torch.float64) / D))
    f = torch.arange(N, device=dev, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat((f, f), -1)[None]
    cos, sin = emb.cos().to(dt), emb.sin().to(dt)

    def formula(q, k, cos, sin):
        c, s = cos[:, None], sin[:, None]
        return q * c + _rot(q) * s, k * c + _rot(k) * s
    return Case(f"{B}×{N}, q {hq}×{D}, k {hk}×{D}", [q, k, cos, sin], (0, 1),
                lambda q, k, c, s: _t(Fn.apply(q, k, c, s))[:2], formula,
                [torch.randn(B, hq, N, D, device=dev).to(dt), torch.randn(B, hk, N, D, device=dev).to(dt)],
                ["q", "k", "cos", "sin"])


def c_qwen2vl_mrope(torch, dev, dt, S):
    from liger_kernel.ops.qwen2vl_mrope import LigerQwen2VLMRopeFunction as Fn
    B, N, hq, hk, D = S["B"], S["S"], S["HQ"], S["HK"], S["D"]
    sec = [D // 8, D // 8 + D // 16, D // 2 - D // 8 - (D // 8 + D // 16)]   # Qwen2-VL's 16, 24, 24 at d128
    q = torch.randn(B, N, hq, D, device=dev).to(dt).transpose(1, 2)
    k = torch.randn(B, N, hk, D, device=dev).to(dt).transpose(1, 2)
    ang = torch.rand(3, B, N, D // 2, device=dev, dtype=torch.float64) * 6.283
    cos, sin = torch.cat((ang, ang), -1).cos().to(dt), torch.cat((ang, ang), -1).sin().to(dt)

    def pick(t):   # each section of the head from its own of the 3 position streams (t, h, w)
        parts = t.split(sec * 2, dim=-1)
        return torch.cat([m[i % 3] for i, m in enumerate(parts)], dim=-1)[:, None]

    def formula(q, k, cos, sin):
        c, s_ = pick(cos), pick(sin)
        return q * c + _rot(q) * s_, k * c + _rot(k) * s_
    return Case(f"{B}×{N}, q {hq}×{D}, k {hk}×{D}, sections {sec}", [q, k, cos, sin], (0, 1),
                lambda q, k, c, s_: _t(Fn.apply(q, k, c, s_, sec)), formula,
                [torch.randn(B, hq, N, D, device=dev).to(dt), torch.randn(B, hk, N, D, device=dev).to(dt)],
                ["q", "k", "cos", "sin"])


def c_llama4_rope(torch, dev, dt, S):
    from liger_kernel.ops.llama4_rope import LigerLlama4RopeFunction as Fn
    B, N, hq, hk, D = S["B"], S["S"], S["HQ"], S["HK"], S["D"]
    q, k = torch.randn(B, N, hq, D, device=dev).to(dt), torch.randn(B, N, hk, D, device=dev).to(dt)
    inv = 1.0 / (500000.0 ** (torch.arange(0, D, 2, device=dev, dtype=torch.float64) / D))
    ang = torch.arange(N, device=dev, dtype=torch.float64)[:, None] * inv[None, :]
    freqs = torch.polar(torch.ones_like(ang), ang).to(torch.complex64)   # (seq, D/2), Llama 4's freqs_cis

    def formula(q, k, f):   # pairs (2i, 2i+1) of a head as complex numbers, times freqs_cis
        f = f.to(torch.complex128)[None, :, None, :]
        rot = [torch.view_as_real(torch.view_as_complex(t.reshape(*t.shape[:-1], -1, 2)) * f).flatten(3)
               for t in (q, k)]
        return rot[0], rot[1]
    return Case(f"{B}×{N}, q {hq}×{D}, k {hk}×{D}", [q, k, freqs], (0, 1),
                lambda q, k, f: _t(Fn.apply(q, k, f)), formula,
                [torch.randn(B, N, hq, D, device=dev).to(dt), torch.randn(B, N, hk, D, device=dev).to(dt)],
                ["q", "k", "freqs_cis"])


def c_modulated_rms_norm(torch, dev, dt, S):
    from liger_kernel.ops.modulated_rms_norm import LigerModulatedRMSNormFunction as Fn
    B, H = S["B"], S["H"]
    N = S["T"] // B
    x = torch.randn(B, N, H, device=dev).to(dt)
    w = (torch.rand(H, device=dev) + 0.5).to(dt)
    sc, sh = (torch.rand(B, H, device=dev) - 0.5).to(dt), (torch.rand(B, H, device=dev) - 0.5).to(dt)
    return Case(f"{B}×{N}×{H}, scale and shift {B}×{H}", [x, w, sc, sh], (0, 1, 2, 3),
                lambda x, w, sc, sh: _t(Fn.apply(x, w, sc, sh, EPS)),
                lambda x, w, sc, sh: (1 + sc[:, None]) * (_rms(x) * w) + sh[:, None],
                [torch.randn(B, N, H, device=dev).to(dt)], ["x", "w", "scale", "shift"])


def c_cross_entropy(torch, dev, dt, S, big=False):
    from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction as Fn
    F, T, V = _F(), S["T"], S["V_BIG" if big else "V"]
    x = (torch.randn(T, V, device=dev) * 3).to(dt)
    t = torch.randint(0, V, (T,), device=dev)
    return Case(f"{T}×{V}", [x, t], (0,), lambda x, t: _t(Fn.apply(x, t, None)[0]),
                lambda x, t: F.cross_entropy(x, t), names=["logits", "target"])


def c_linear_cross_entropy(torch, dev, dt, S):
    from liger_kernel.ops.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyFunction as Fn
    F, T, H, V = _F(), S["T"], S["H"], S["V"]
    x = torch.randn(T, H, device=dev).to(dt)
    w = (torch.randn(V, H, device=dev) * (3.0 / math.sqrt(H))).to(dt)
    t = torch.randint(0, V, (T,), device=dev)
    return Case(f"{T}×{H} @ {H}×{V}", [x, w, t], (0, 1), lambda x, w, t: _t(Fn.apply(x, w, t)[0]),
                lambda x, w, t: F.cross_entropy(x @ w.t(), t), names=["x", "w", "target"])


def c_linear_jsd(torch, dev, dt, S):
    from liger_kernel.ops.fused_linear_jsd import LigerFusedLinearJSDFunction as Fn
    F, T, H, V = _F(), S["T"], S["H"], S["V"]
    xs, xt = torch.randn(T, H, device=dev).to(dt), torch.randn(T, H, device=dev).to(dt)
    ws = (torch.randn(V, H, device=dev) * (3.0 / math.sqrt(H))).to(dt)
    wt = (torch.randn(V, H, device=dev) * (3.0 / math.sqrt(H))).to(dt)

    def formula(xs, ws, xt, wt):   # Liger's JSD of the student's and the teacher's log-probabilities
        return _jsd(F.log_softmax(xs @ ws.t(), -1), F.log_softmax(xt @ wt.t(), -1))
    return Case(f"{T}×{H} @ {H}×{V}, student and teacher", [xs, ws, xt, wt], (0, 1),
                lambda xs, ws, xt, wt: _t(Fn.apply(xs, ws, xt, wt)), formula, names=["x", "w", "x_t", "w_t"])


def c_kl_div(torch, dev, dt, S):
    from liger_kernel.ops.kl_div import LigerKLDivLossFunction as Fn
    F, T, V = _F(), S["T"], S["V"]
    x = (torch.randn(T, V, device=dev) * 3).log_softmax(-1).to(dt)
    y = (torch.randn(T, V, device=dev) * 3).softmax(-1).to(dt)
    return Case(f"{T}×{V}", [x, y], (0,), lambda x, y: _t(Fn.apply(x, y, "batchmean", False, 1e-10)),
                lambda x, y: F.kl_div(x, y, reduction="batchmean"), names=["input", "target"])


def _jsd(x, y, beta=0.5):
    p, q = x.exp(), y.exp()   # Liger's convention: input the student's log-probabilities, target the teacher's
    m = beta * p + (1 - beta) * q
    return (beta * (q * (y - m.log())).sum() + (1 - beta) * (p * (x - m.log())).sum()) / x.shape[0]


def c_jsd(torch, dev, dt, S):
    from liger_kernel.ops.jsd import LigerJSDFunction as Fn
    T, V = S["T"], S["V"]
    x = (torch.randn(T, V, device=dev) * 3).log_softmax(-1).to(dt)
    y = (torch.randn(T, V, device=dev) * 3).log_softmax(-1).to(dt)
    return Case(f"{T}×{V}", [x, y], (0,), lambda x, y: _t(Fn.apply(x, y)), _jsd, names=["input", "target"])


def c_tvd(torch, dev, dt, S):
    from liger_kernel.ops.tvd import LigerTVDLossFunction as Fn
    T, V = S["T"], S["V"]
    p = (torch.randn(T, V, device=dev) * 3).softmax(-1).to(dt)
    q = (torch.randn(T, V, device=dev) * 3).softmax(-1).to(dt)
    return Case(f"{T}×{V}", [p, q], (0,), lambda p, q: _t(Fn.apply(p, q)),
                lambda p, q: 0.5 * (p - q).abs().sum() / p.shape[0], names=["p", "q"])


def c_embedding(torch, dev, dt, S):
    from liger_kernel.ops.experimental.embedding import LigerEmbeddingFunction as Fn
    F, T, H, V = _F(), S["T"], S["H"], S["EV"]
    table = torch.randn(V, H, device=dev).to(dt)
    ids = torch.randint(0, V, (T,), device=dev)
    return Case(f"{T} ids × {H} of {V}", [table, ids], (0,), lambda w, i: _t(Fn.apply(w, i)),
                lambda w, i: F.embedding(i, w), [torch.randn(T, H, device=dev).to(dt)], ["table", "ids"])


# key, label, case(torch, dev, dtype, shapes); order: cross_entropy before fused_linear_cross_entropy
# (they share Liger's cross-entropy kernel: the second's cold compile does not recompile it)
OPS = [("swiglu", "swiglu", lambda *a: c_glu(*a, "swiglu")),
       ("geglu", "geglu (tanh)", lambda *a: c_glu(*a, "geglu")),
       ("relu_squared", "relu_squared", c_relu_squared),
       ("rms_norm", "rms_norm", c_rms_norm),
       ("fused_add_rms_norm", "fused_add_rms_norm", c_fused_add_rms_norm),
       ("layer_norm", "layer_norm", c_layer_norm),
       ("poly_norm", "poly_norm", c_poly_norm),
       ("modulated_rms_norm", "modulated_rms_norm", c_modulated_rms_norm),
       ("dyt", "dyt", c_dyt),
       ("group_norm", "group_norm", c_group_norm),
       ("soft_max", "softmax", c_softmax),
       ("sparsemax", "sparsemax", c_sparsemax),
       ("rope", "rope (q and k)", c_rope),
       ("qwen2vl_mrope", "qwen2vl_mrope (q and k)", c_qwen2vl_mrope),
       ("llama4_rope", "llama4_rope (q and k)", c_llama4_rope),
       ("cross_entropy", "cross_entropy", c_cross_entropy),
       ("cross_entropy_128k", "cross_entropy", lambda *a: c_cross_entropy(*a, big=True)),
       ("fused_linear_cross_entropy", "fused_linear_cross_entropy", c_linear_cross_entropy),
       ("fused_linear_jsd", "fused_linear_jsd", c_linear_jsd),
       ("kl_div", "kl_div", c_kl_div),
       ("jsd", "jsd (beta 0.5)", c_jsd),
       ("tvd", "tvd", c_tvd),
       ("embedding", "embedding (experimental)", c_embedding)]
LABELS = {k: label for k, label, _ in OPS}

# what a row's numbers include that the table does not say
NOTES = {"dyt": "Liger autotunes dyt's backward (@triton.autotune): the cold compile includes each side's tuning",
         "cross_entropy_128k": "the kernels of cross_entropy (32000) again: compiled anew only where a "
                               "specialization differs (a constexpr block size)",
         "fused_linear_cross_entropy": "its cross-entropy kernel is cross_entropy's (already compiled in the "
                                       "process); the logits' matmuls are torch's (cuBLAS) on both sides",
         "fused_linear_jsd": "the logits' matmuls are torch's (cuBLAS) on both sides",
         "embedding": "liger_kernel.ops.experimental.embedding (its gradient by atomic adds)"}

# ops left out of the CPU check, and why (the GPU rows keep them)
CPU_SKIP = {"dyt": "its backward sizes a buffer by the GPU's SM count (torch.cuda.get_device_properties): on a "
                   "CPU-only machine Liger leaves NUM_SMS unset (UnboundLocalError), before any kernel"}


# ---- the worker (one side, one process) --------------------------------------------------------

PROBE = '''
@triton.jit
def _probe_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)
'''


def _probe(triton, tl):
    """A tiny kernel of this file's, compiled through the side's triton (its source kept in
    linecache: both sides read it with inspect)."""
    import linecache
    name = "<bench/rows_liger.py probe>"
    linecache.cache[name] = (len(PROBE), None, PROBE.splitlines(True), name)
    g = {"triton": triton, "tl": tl, "__name__": "rows_liger_probe"}
    exec(compile(PROBE, name, "exec"), g)
    return g["_probe_kernel"]


class Clock:
    """Synchronize and time a call on the worker's device."""

    def __init__(self, torch, dev):
        self.torch, self.dev = torch, dev
        self.flush = torch.empty(256 << 20, dtype=torch.int8, device=dev) if dev == "cuda" else None

    def sync(self):
        if self.dev == "cuda":
            self.torch.cuda.synchronize()

    def wall_ms(self, fn):
        self.sync()
        t = time.perf_counter()
        fn()
        self.sync()
        return (time.perf_counter() - t) * 1e3

    def kernel_ms(self, fn, budget_ms=150.0, lo=5, hi=40):
        """The median of CUDA-event times around one call, L2 flushed before each (the CPU: one
        wall time, meaningless)."""
        if self.dev != "cuda":
            return self.wall_ms(fn)
        torch = self.torch
        est = min(self.wall_ms(fn) for _ in range(2))
        n = max(lo, min(hi, int(budget_ms / max(est, 1e-3))))
        evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        for s, e in evs:
            self.flush.zero_()
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in evs)

    def profiled_ms(self, fn, reps=5):
        """(GPU time a call, GPU operations a call): the durations of the kernels, memsets and copies
        the call puts on the GPU, summed, as torch.profiler (CUPTI) records them over `reps` calls (no
        L2 flush); (None, 0) off the GPU or where the profiler records no GPU activity."""
        if self.dev != "cuda":
            return None, 0
        torch = self.torch
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(reps):
                fn()
            torch.cuda.synchronize()
        gpu = [e for e in prof.events() if e.device_type == DeviceType.CUDA]
        if not gpu:
            return None, 0
        return sum(e.time_range.elapsed_us() for e in gpu) / reps / 1e3, len(gpu) // reps


def _max_abs(torch, a, b, rows=1024, f64=False):
    """max |a - b| by blocks of rows (in float32, or float64), and max |b|; inf for a NaN or a shape
    that differs."""
    if tuple(a.shape) != tuple(b.shape):
        return math.inf, 0.0
    a2 = a.reshape(a.shape[0], -1) if a.dim() > 1 else a.reshape(1, -1)
    b2 = b.reshape(b.shape[0], -1) if b.dim() > 1 else b.reshape(1, -1)
    worst, scale = 0.0, 0.0
    for s in range(0, a2.shape[0], rows):
        x, y = a2[s:s + rows], b2[s:s + rows]
        x, y = (x.double(), y.double()) if f64 else (x.float(), y.float())
        d = (x - y).abs().max().item() if x.numel() else 0.0
        worst = math.inf if d != d else max(worst, d)
        scale = max(scale, y.abs().max().item() if y.numel() else 0.0)
    return worst, scale


def run_case(torch, clock, key, case, mode, save_dir):
    """The op's cold call, its check (mode "ref": against the float64 formula; "save": the results
    saved for the other side; "compare": against the saved ones), then its warm timings."""
    r = {"size": case.size}
    ins, douts = case.fresh(), case.fresh_douts()
    wrt = [ins[i] for i in case.grad]
    r["input_sum"] = float(case.inputs[0].sum(dtype=torch.float64))  # both sides must have made the same inputs
    clock.sync()
    t0 = time.perf_counter()
    outs = case.call(*ins)
    clock.sync()
    t1 = time.perf_counter()
    grads = torch.autograd.grad(outs, wrt, douts)
    clock.sync()
    t2 = time.perf_counter()
    r["cold_fwd_ms"], r["cold_bwd_ms"] = (t1 - t0) * 1e3, (t2 - t1) * 1e3
    got = [o.detach() for o in outs] + [g for g in grads]
    n_out = len(outs)
    names = [f"out{i}" for i in range(n_out)] + ["d" + case.names[i] for i in case.grad]
    if mode == "ref":
        ref_in = [t.double().requires_grad_(i in case.grad) if t.is_floating_point() else t
                  for i, t in enumerate(case.inputs)]
        ref_out = _t(case.formula(*ref_in))
        ref_grads = torch.autograd.grad(ref_out, [ref_in[i] for i in case.grad],
                                        None if douts is None else [d.double() for d in case.douts])
        errs = {}
        for n, g, w in zip(names, got, list(ref_out) + list(ref_grads)):
            d, s = _max_abs(torch, g, w.detach(), f64=True)
            errs[n] = d / (s or 1.0)
        r["ref_rel_err"] = errs
    elif mode == "save":
        torch.save({"names": names, "n_out": n_out, "tensors": [t.cpu() for t in got]},
                   os.path.join(save_dir, key + ".pt"))
    else:
        path = os.path.join(save_dir, key + ".pt")
        if os.path.exists(path):
            theirs = torch.load(path)
            diff = {}
            for n, g, w in zip(names, got, theirs["tensors"]):
                d, s = _max_abs(torch, g, w.to(g.device))
                diff[n] = [d, s]
            r["diff"] = diff
            r["n_out"] = n_out
    del outs, grads, got, ins, douts, wrt
    # warm: the same calls again (fresh inputs: some of Liger's ops write a gradient over an input)
    ins, douts = case.fresh(), case.fresh_douts()
    wrt = [ins[i] for i in case.grad]
    fwd = (lambda: case.call(*ins))
    both = (lambda: torch.autograd.grad(case.call(*ins), wrt, douts))
    warm_fwd = min(clock.wall_ms(fwd) for _ in range(3))
    warm_both = min(clock.wall_ms(both) for _ in range(3))
    r["compile_fwd_ms"] = max(0.0, r["cold_fwd_ms"] - warm_fwd)
    r["compile_ms"] = max(0.0, r["cold_fwd_ms"] + r["cold_bwd_ms"] - warm_both)
    r["fwd_ms"] = clock.kernel_ms(fwd)
    r["fwdbwd_ms"] = clock.kernel_ms(both)
    try:
        r["fwd_gpu_ms"], r["fwd_gpu_ops"] = clock.profiled_ms(fwd)
        r["fwdbwd_gpu_ms"], r["fwdbwd_gpu_ops"] = clock.profiled_ms(both)
    except Exception as e:  # the profiler is a second view; its failure leaves the row its event times
        r["profiler_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    return r


def launch_overhead(torch, clock, dev, n=LAUNCHES):
    """Liger's _swiglu_forward_kernel on one row of 128 float32, launched directly n times, then one
    synchronize: (wall µs a launch, host µs a launch before the synchronize)."""
    from liger_kernel.ops.swiglu import _swiglu_forward_kernel as k
    a, b = torch.randn(1, 128, device=dev), torch.randn(1, 128, device=dev)
    c = torch.empty_like(a)

    def launch():
        k[(1,)](a, b, c, a.stride(-2), 1.0, n_cols=128, BLOCK_SIZE=128, num_warps=4)
    launch()
    want = torch.nn.functional.silu(a) * b
    err = (c - want).abs().max().item()
    for _ in range(100):
        launch()
    clock.sync()
    t0 = time.perf_counter()
    for _ in range(n):
        launch()
    t1 = time.perf_counter()
    clock.sync()
    t2 = time.perf_counter()
    return {"wall_us": (t2 - t0) / n * 1e6, "host_us": (t1 - t0) / n * 1e6, "max_abs_err": err, "launches": n}


def worker(side, keys, dev, dtype, out_json, save_dir):
    """One side's process: fresh caches are set by the caller (environment); results to out_json
    (rewritten after every op, so that a timeout keeps what ran)."""
    sys.path.insert(0, os.path.join(REPO, "python"))
    res = {"side": side, "device": dev, "ops": {}, "errors": {}}

    def dump():
        with open(out_json, "w") as f:
            json.dump(res, f, indent=1)
    t_start = time.perf_counter()
    import torch
    if side == "blk":
        try:  # torch's own imports of Triton, before blk.triton takes the name (as rows_nn.py does)
            import torch._dynamo  # noqa: F401
            import torch._inductor.utils  # noqa: F401
        except Exception:
            pass
        import blk
        import blk.triton
        blk.triton.install()
        if dev == "cpu":
            blk.set_backend("interpreter")
    import triton
    import triton.language as tl
    res["triton"] = f"{triton.__name__} {getattr(triton, '__version__', '?')}"
    res["torch"] = torch.__version__
    try:
        from importlib.metadata import version
        res["liger"] = version("liger_kernel")
    except Exception:
        res["liger"] = "version unknown"
    dt = {"bf16": torch.bfloat16, "f32": torch.float32}[dtype]
    res["dtype"] = str(dt).replace("torch.", "")
    if dev == "cuda":
        res["gpu"] = torch.cuda.get_device_name()
    clock = Clock(torch, dev)
    res["start_s"] = time.perf_counter() - t_start
    # the process's first kernel: the side's one-time costs, kept out of the ops' cold compile times
    x = torch.arange(64, dtype=torch.float32, device=dev)
    y = torch.empty_like(x)
    k = _probe(triton, tl)
    res["first_kernel_ms"] = clock.wall_ms(lambda: k[(1,)](x, y, 64, BLOCK=64))
    res["first_kernel_ok"] = bool((y == 2 * x).all())
    dump()
    S = LLM if dev == "cuda" else TINY
    by_key = {key: make for key, _, make in OPS}
    for key in keys:
        print(f"[{side}] {key}", flush=True)
        try:
            torch.manual_seed(34)
            case = by_key[key](torch, dev, dt, S)
            mode = "ref" if dev == "cpu" else ("save" if side == "triton" else "compare")
            res["ops"][key] = run_case(torch, clock, key, case, mode, save_dir)
            o = res["ops"][key]
            print(f"[{side}] {key} {o['size']}: fwd {o['fwd_ms']:.4g} ms, fwd+bwd {o['fwdbwd_ms']:.4g} ms, cold "
                  f"compile {o['compile_ms']:.0f} ms", flush=True)
            del case
        except Exception as e:
            lines = [ln for ln in str(e).splitlines() if ln.strip()]
            res["errors"][key] = f"{type(e).__name__}: {lines[0][:300] if lines else ''}"
            print(f"[{side}] {key}: ERROR", flush=True)
            traceback.print_exc()
            sys.stderr.flush()
            if dev == "cuda" and not _context_alive(torch):
                res["context_lost_at"] = key   # the caller starts a new worker for the ops after it
                dump()
                return CONTEXT_LOST
        if dev == "cuda":
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        dump()
    try:
        res["launch"] = launch_overhead(torch, clock, dev, n=LAUNCHES if dev == "cuda" else 20)
    except Exception as e:
        res["errors"]["launch"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
        traceback.print_exc()
    res["total_s"] = time.perf_counter() - t_start
    dump()
    return 0


def _context_alive(torch):
    """False after an error that leaves the CUDA context unusable (an illegal address, a trap)."""
    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").item()
        return True
    except Exception:
        return False


def spawn(side, keys, dev, dtype, tmp, timeout=WORKER_TIMEOUT_S):
    """Runs one side's workers: one for all the ops, and a new one (fresh caches) for the ops after
    an op that lost the CUDA context, until every op ran or the time is spent; returns their JSON
    merged (possibly partial), with "fatal" where a worker failed."""
    deadline = time.time() + timeout
    res, todo, n = None, list(keys), 0
    while todo:
        n += 1
        got = _spawn_one(side, todo, dev, dtype, tmp, max(1.0, deadline - time.time()), n)
        if res is None:
            res = got
        else:
            res["ops"].update(got.get("ops", {}))
            res["errors"].update(got.get("errors", {}))
            for k in ("launch", "fatal", "total_s"):
                if k in got:
                    res[k] = got[k]
        lost = got.get("context_lost_at")
        if lost is None or lost not in todo or time.time() >= deadline:
            break
        res.setdefault("restarts", []).append(lost)
        res.pop("fatal", None)
        todo = todo[todo.index(lost) + 1:]
        if not todo:   # the launch row still runs, in a worker of its own
            got = _spawn_one(side, [], dev, dtype, tmp, max(1.0, deadline - time.time()), n + 1)
            for k in ("launch", "fatal"):
                if k in got:
                    res[k] = got[k]
    return res


def _spawn_one(side, keys, dev, dtype, tmp, timeout, n):
    out = os.path.join(tmp, f"{side}{n}.json")
    env = dict(os.environ)
    env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"triton-cache-{side}-", dir=tmp)
    env["BLK_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"blk-cache-{side}-", dir=tmp)
    env.pop("BLK_CACHE", None)   # the disk cache on, empty: a cold compile that writes its entries
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "python")] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", side, "--ops", ",".join(keys), "--json", out,
           "--dir", tmp, "--dtype", dtype] + (["--cpu"] if dev == "cpu" else [])
    fatal = None
    try:
        p = subprocess.run(cmd, env=env, timeout=timeout)
        if p.returncode == CONTEXT_LOST:
            fatal = f"the {side} worker lost its CUDA context"
        elif p.returncode:
            fatal = f"the {side} worker exited with {p.returncode}"
    except subprocess.TimeoutExpired:
        fatal = f"the {side} worker passed {timeout} s and was stopped"
    try:
        with open(out) as f:
            res = json.load(f)
    except (OSError, ValueError):
        res = {"ops": {}, "errors": {}}
    if fatal:
        res["fatal"] = fatal
    return res


# ---- the table ----------------------------------------------------------------------------------

def _geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return (math.exp(sum(math.log(x) for x in xs) / len(xs)), len(xs)) if xs else (None, 0)


class Section:
    """The table of these rows (bench.table prints it after the others); the legend ends with the
    geometric means over the rows printed (the rows' functions add them to self.rows)."""
    title = "### Liger-Kernel's ops: Triton against blk.triton, the same source (issue 34)"
    sides = ("blk", "Triton")
    header = ["op", "size", "blk ms", "Triton ms", "blk/Triton", "GPU time blk/Triton", "cold compile blk ms",
              "cold compile Triton ms", "compile Triton/blk", "max abs diff (max abs)"]

    def __init__(self):
        self.rows = []

    @staticmethod
    def cells(r):
        x = getattr(r, "liger", {})
        unit = x.get("unit", "ms")

        def v(val):
            if isinstance(val, float):
                return f"{val * 1e3:.3g} µs" if unit == "µs" else f"{val:.4g}"
            return val

        def ratio(a, b):
            return f"{a / b:.2f}" if isinstance(a, float) and isinstance(b, float) and b > 0 else "—"
        cb, ct = x.get("compile", {}).get("blk"), x.get("compile", {}).get("Triton")
        gb, gt = x.get("gpu", {}).get("blk"), x.get("gpu", {}).get("Triton")
        return [r.kernel, r.size, v(r.ms["blk"]), v(r.ms["Triton"]), ratio(r.ms["Triton"], r.ms["blk"]),
                ratio(gt, gb) if r.ok("blk") else "—", f"{cb:.0f}" if isinstance(cb, float) else "—",
                f"{ct:.0f}" if isinstance(ct, float) else "—", ratio(ct, cb), x.get("diff", "—")]

    def means(self):
        """{what: (geometric mean of Triton / blk, count)} over the rows both sides ran and agree on."""
        got = {k: [] for k in ("fwd", "fwd+bwd", "fwd gpu", "fwd+bwd gpu", "compile", "launch")}
        for r in self.rows:
            x = getattr(r, "liger", {})
            if not (r.ok("blk") and r.ok("Triton")):
                continue
            mode = x.get("mode")
            got["launch" if mode == "launch" else mode].append(r.ms["Triton"] / r.ms["blk"])
            if mode == "launch":
                continue
            g = x.get("gpu", {})
            if isinstance(g.get("blk"), float) and isinstance(g.get("Triton"), float) and g["blk"] > 0:
                got[mode + " gpu"].append(g["Triton"] / g["blk"])
            c = x.get("compile", {})
            if (mode == "fwd+bwd" and isinstance(c.get("blk"), float) and isinstance(c.get("Triton"), float)
                    and c["Triton"] >= COMPILED_MS):
                got["compile"].append(c["Triton"] / max(c["blk"], 1.0))
        return {k: _geomean(v) for k, v in got.items()}

    @property
    def legend(self):
        text = ("blk/Triton = Triton time / blk time, compile Triton/blk = Triton's cold compile time / blk's (above "
                "1: blk is faster). Both sides run Liger-Kernel's unchanged ops (liger_kernel.ops, autograd "
                "Functions) in processes of their own, blk's through blk.triton.install(). ms: the median of "
                "CUDA-event times around one call (the call's host work inside, hidden where the GPU is busy), L2 "
                "flushed before each. GPU time: the durations of the GPU operations a call makes (kernels, memsets, "
                "copies; torch.profiler, 5 calls, no flush), Triton's over blk's. Cold compile: the first call's "
                "wall time less a warm call's, empty caches (fwd row: the first forward; fwd+bwd row: the first "
                "forward and backward, every kernel of the op). Max abs diff: |blk - Triton| over the outputs (fwd "
                "row) and the gradients (fwd+bwd row), max |Triton| in brackets; FAIL past 2e-2 (outputs) or 5e-2 "
                "(gradients) of it, left out of the means. The launch row: µs a launch, 10,000 launches of Liger's "
                "_swiglu_forward_kernel (1 × 128) from Python, then one synchronize. The compile mean takes the "
                f"fwd+bwd rows where Triton compiled something (≥ {COMPILED_MS:g} ms; an op whose kernels an "
                "earlier op compiled is left out), blk's time taken as at least 1 ms.")
        m = self.means()

        def g(what, label, target):
            val, n = m[what]
            if val is None:
                return f"{label} —"
            return f"{label} {val:.2f}× over {n} (target ≥ {target:g}×: {'met' if val >= target else 'NOT met'})"
        return (text + "\n\n**Geometric means (Triton / blk):** kernel time (events) "
                + g("fwd", "fwd", TARGETS["kernel"]) + ", " + g("fwd+bwd", "fwd+bwd", TARGETS["kernel"])
                + "; GPU time (profiler) " + g("fwd gpu", "fwd", TARGETS["kernel"]) + ", "
                + g("fwd+bwd gpu", "fwd+bwd", TARGETS["kernel"]) + "; "
                + g("compile", "cold compile", TARGETS["compile"]) + "; "
                + g("launch", "launch overhead", TARGETS["launch"]) + ".")


SECTION = Section()


def _fmt_diff(diff, names):
    return "; ".join(f"{n} {diff[n][0]:.3g} ({diff[n][1]:.3g})" for n in names)


def make_rows(b, keys, res):
    """The rows of the selected ops and the launch row, from the two sides' results (res["blk"],
    res["triton"]: the workers' JSON)."""
    rows = []
    sides = {"blk": res.get("blk", {}), "Triton": res.get("triton", {})}
    for key in keys:
        size = next((s["ops"][key]["size"] for s in sides.values() if key in s.get("ops", {})), "LLM shape")
        fwd = b.Row(f"{LABELS[key]} fwd", size, section=SECTION)
        both = b.Row(f"{LABELS[key]} fwd+bwd", size, section=SECTION)
        fwd.liger = {"key": "liger_" + key, "mode": "fwd", "compile": {}, "gpu": {}}
        both.liger = {"key": "liger_" + key, "mode": "fwd+bwd", "compile": {}, "gpu": {}}
        ops_count = []
        for side, s in sides.items():
            o = s.get("ops", {}).get(key)
            if o is None:
                for r in (fwd, both):
                    r.ms[side] = "ERROR"
                why = s.get("errors", {}).get(key) or (None if s.get("fatal") else "not run")
                if why:
                    fwd.notes.append(f"{side}: {why}")
                continue
            fwd.ms[side], both.ms[side] = o["fwd_ms"], o["fwdbwd_ms"]
            fwd.liger["compile"][side], both.liger["compile"][side] = o["compile_fwd_ms"], o["compile_ms"]
            fwd.liger["gpu"][side], both.liger["gpu"][side] = o.get("fwd_gpu_ms"), o.get("fwdbwd_gpu_ms")
            if o.get("fwd_gpu_ops"):
                ops_count.append(f"{side} {o['fwd_gpu_ops']} and {o['fwdbwd_gpu_ops']}")
            if o.get("profiler_error"):
                fwd.notes.append(f"{side}: torch.profiler: {o['profiler_error']}")
        if ops_count:
            fwd.notes.append("GPU operations a call (fwd and fwd+bwd): " + ", ".join(ops_count))
        if key in NOTES:
            fwd.notes.append(NOTES[key])
        ob, ot = sides["blk"].get("ops", {}).get(key), sides["Triton"].get("ops", {}).get(key)
        if ob is not None and ot is not None and abs(ob["input_sum"] - ot["input_sum"]) > 1e-6 * (
                1 + abs(ot["input_sum"])):
            fwd.notes.append(f"the two sides' inputs differ (sums {ob['input_sum']} and {ot['input_sum']}): "
                             "not compared")
        elif ob is not None and "diff" in ob:
            diff, n_out = ob["diff"], ob["n_out"]
            names = list(diff)
            for r, sub, tol in ((fwd, names[:n_out], TOL_OUT), (both, names[n_out:], TOL_GRAD)):
                r.liger["diff"] = _fmt_diff(diff, sub)
                bad = [n for n in sub if not diff[n][0] <= tol * (diff[n][1] or 1.0)]
                if bad:
                    t = r.ms["blk"]
                    r.notes.append(f"blk differs from Triton past {tol:g} of max |Triton| in {', '.join(bad)}: FAIL"
                                   + (f" (its time {t:.4g} ms)" if isinstance(t, float) else ""))
                    r.ms["blk"] = "FAIL"
        rows += [fwd, both]
    launch = b.Row("launch overhead, one Liger kernel from Python", f"{LAUNCHES} launches", section=SECTION)
    launch.liger = {"key": "liger_launch", "mode": "launch", "unit": "µs"}
    for side, s in sides.items():
        lo = s.get("launch")
        if lo is None:
            launch.ms[side] = "ERROR"
            why = s.get("errors", {}).get("launch") or (None if s.get("fatal") else "not run")
            if why:
                launch.notes.append(f"{side}: {why}")
            continue
        launch.ms[side] = lo["wall_us"] / 1e3   # kept in ms like the other rows; printed in µs
        launch.notes.append(f"{side}: {lo['wall_us']:.3g} µs a launch wall, {lo['host_us']:.3g} µs host time before "
                            f"the synchronize, result max abs err {lo['max_abs_err']:.2g}")
    rows.append(launch)
    for side, s in sides.items():
        if s.get("ops") or s.get("launch"):
            rows[0].notes.append(f"{side} worker: {s.get('triton')}, torch {s.get('torch')}, Liger-Kernel "
                                 f"{s.get('liger')}, {s.get('dtype')}; process start {s.get('start_s', 0):.1f} s, "
                                 f"its first kernel (a probe of this file, cold) {s.get('first_kernel_ms', 0):.0f} ms, "
                                 f"whole worker {s.get('total_s', 0):.0f} s")
        if s.get("fatal"):
            rows[0].notes.append(f"{side}: {s['fatal']}")
        for lost in s.get("restarts", ()):
            rows[0].notes.append(f"{side}: {lost} left the CUDA context unusable; a new worker (fresh caches) ran "
                                 "the ops after it")
        if s.get("first_kernel_ok") is False:
            rows[0].notes.append(f"{side}: the probe kernel's result was wrong")
    return rows


# ---- bench.py's rows ------------------------------------------------------------------------------

_DONE = {}   # key -> its rows, made by the first row of the group that runs


def _selected_keys(b):
    """The ops this bench.py command selects (its --only, read from sys.argv), in OPS order."""
    only = None
    for i, a in enumerate(sys.argv):
        if a == "--only" and i + 1 < len(sys.argv):
            only = sys.argv[i + 1]
        elif a.startswith("--only="):
            only = a[len("--only="):]
    ours = [k for k, _, _ in OPS]
    if not only or not hasattr(b, "select_rows"):
        return ours
    picked = {r[0] for r in b.select_rows(only)}
    keys = [k for k in ours if "liger_" + k in picked]
    return keys or ours


def liger_importable():
    try:
        import liger_kernel  # noqa: F401
        return None
    except ImportError as e:
        return f"Liger-Kernel not installed ({type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''})"


def _all_rows(env, b):
    keys = _selected_keys(b)
    why = liger_importable()
    if why is not None:
        rows = make_rows(b, keys, {"blk": {"fatal": why}, "triton": {"fatal": why}})
        for r in rows:
            r.ms = {s: "n/a: not installed" for s in r.ms}
        return rows
    import shutil
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and shutil.disk_usage("/dev/shm").free > 16 << 30 else None
    tmp = tempfile.mkdtemp(prefix="blk-bench-liger-", dir=shm)   # the Triton side's results: some GiB
    try:
        dtype = "f32" if os.environ.get("BENCH_LIGER_DTYPE") == "f32" else "bf16"
        res = {"triton": spawn("triton", keys, "cuda", dtype, tmp), "blk": spawn("blk", keys, "cuda", dtype, tmp)}
        if os.environ.get("OUT"):   # the workers' results beside bench.md
            os.makedirs(os.environ["OUT"], exist_ok=True)
            for side in ("triton", "blk"):
                with open(os.path.join(os.environ["OUT"], f"liger_{side}.json"), "w") as f:
                    json.dump(res[side], f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return make_rows(b, keys, res)


def _row(key):
    def fn(env, b):
        if not _DONE:
            rows = _all_rows(env, b)
            for r in rows:
                _DONE.setdefault(r.liger["key"], []).append(r)
        rows = _DONE.pop(key, [])
        SECTION.rows += rows   # the footer's means: the rows printed
        return rows
    return fn


ROWS = ([("liger_" + k, f"Liger {label} fwd and fwd+bwd", "LLM shape", _row("liger_" + k)) for k, label, _ in OPS]
        + [("liger_launch", "Liger launch overhead", f"{LAUNCHES} launches", _row("liger_launch"))])


# ---- no GPU: the blk side on the interpreter -----------------------------------------------------

def cpu_check(keys, dtype):
    """The blk side's worker on the interpreter at TINY float32 shapes, each op against float64."""
    why = liger_importable()
    if why is not None:
        print(f"rows_liger --cpu: {why}; set PYTHONPATH to Liger-Kernel's wheel unpacked")
        return 2
    with tempfile.TemporaryDirectory(prefix="blk-bench-liger-") as tmp:
        res = spawn("blk", [k for k in keys if k not in CPU_SKIP], "cpu", dtype, tmp, timeout=1800)
    tol = TOL_CPU[res.get("dtype", "float32")]
    bad = 0
    for key in keys:
        if key in CPU_SKIP:
            print(f"skip  {key}: {CPU_SKIP[key]}")
            continue
        o = res["ops"].get(key)
        if o is None:
            bad += 1
            print(f"ERROR {key}: {res['errors'].get(key) or res.get('fatal') or 'not run'}")
            continue
        worst = max(o["ref_rel_err"].values())
        ok = worst <= tol
        bad += not ok
        print(f"{'ok   ' if ok else 'FAIL '} {key} {o['size']}: max rel err {worst:.2g} ("
              + ", ".join(f"{n} {e:.1e}" for n, e in o["ref_rel_err"].items()) + ")")
    lo = res.get("launch")
    if lo is None:
        bad += 1
        print(f"ERROR launch: {res['errors'].get('launch') or res.get('fatal')}")
    else:
        ok = lo["max_abs_err"] <= 1e-5
        bad += not ok
        print(f"{'ok   ' if ok else 'FAIL '} launch: _swiglu_forward_kernel launched directly, max abs err "
              f"{lo['max_abs_err']:.2g} ({lo['launches']} launches, {lo['wall_us']:.0f} µs each on the interpreter)")
    print(f"rows_liger CPU check ({res.get('dtype')}): {len(keys) - len(set(keys) & set(CPU_SKIP))} ops, {bad} "
          "failed")
    return 1 if bad else 0


def main(argv):
    def opt(name, default=None):
        return argv[argv.index(name) + 1] if name in argv else default
    keys = [k for k in opt("--ops", ",".join(k for k, _, _ in OPS)).split(",") if k]
    unknown = [k for k in keys if k not in LABELS]
    if unknown:
        print(f"rows_liger: unknown ops {unknown}; known: {', '.join(LABELS)}")
        return 2
    if "--worker" in argv:
        return worker(opt("--worker"), keys, "cpu" if "--cpu" in argv else "cuda", opt("--dtype", "bf16"),
                      opt("--json"), opt("--dir"))
    if "--cpu" in argv:
        return cpu_check(keys, "bf16" if "--bf16" in argv else "f32")
    print("\n".join(__doc__.strip().splitlines()[-5:]))
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
