#!/usr/bin/env python3
"""rows_nn.py: issue 30's rows, the blk.nn training ops (python3 bench/bench.py --only issue30).

Each op at Llama-3-8B-like shapes, bf16: 8192 tokens, hidden 4096, intermediate 14336, vocab
128256, 32 query heads and 8 key/value heads of 128 for RoPE (batch 2 × sequence 4096, q and k
in Hugging Face's layout: (batch, seq, heads, dim) storage seen as (batch, heads, seq, dim)).
Every op gives two rows, "fwd" (the forward with its inputs requiring gradients, as in training:
what it saves for the backward included) and "fwd+bwd" (that forward, then torch.autograd.grad of
its outputs against fixed random output gradients, or of the loss), four sides each:

- blk: the blk.nn op (python/blk/nn, stdlib/nn/*.tile);
- Liger: Liger-Kernel's op (liger_kernel.transformers.functional, or liger_kernel.ops for the
  embedding), imported inside the row; "n/a: not installed" where liger_kernel does not import;
- torch: the plain PyTorch formula in eager mode (Hugging Face's Llama RMSNorm, F.layer_norm,
  F.silu(a) * b, rotate-half RoPE, F.cross_entropy on logits made float32, ...);
- torch.compile: the same formula through torch.compile (one compile an op, shared by its two
  rows: the check run of "fwd" compiles the forward, that of "fwd+bwd" the backward).

The optimizer rows (AdamW step, clip_grad_norm_) are one row each, over the float32 parameters
and gradients of two Llama-3-8B decoder layers (18 tensors, 436M parameters); Liger has no
optimizer (n/a); torch: torch.optim.AdamW(fused=True), torch.nn.utils.clip_grad_norm_(foreach=True),
and torch.compile of the foreach versions.

Before timing, each side's outputs and gradients are checked against float64 (the formula
through autograd, by chunks of rows for the (8192 × 128256) losses): max |got - ref| / max |ref|
within 1e-2 for outputs and 2e-2 for gradients (bf16 results; 5e-2 for the fused linear
cross-entropy's, whose weight gradient Liger sums over chunks in bf16). Every side and mode gets
fresh copies of the inputs (Liger's cross-entropy writes its gradient over the logits, its RMSNorm
over the output gradient). Timing: bench.measure with do_bench's short trial (5 ms warm-up, 20 ms
of runs, L2 flushed, median), to keep the group within about 3 minutes. The fused linear
cross-entropy's fwd+bwd row also gives each side's peak memory: torch.cuda.max_memory_allocated
over one run, less what was allocated before it (the gradients it returns included).

    python3 bench/rows_nn.py --cpu [--no-compile] [--f32]   (no GPU: every row at tiny shapes on CPU
        torch, blk.nn on the interpreter; checks only, the times mean nothing. With --no-compile,
        Liger's ops run where liger_kernel imports, through blk.triton on the interpreter, which
        takes them in float32 only (--f32: float32 inputs instead of bf16); with torch.compile,
        Triton is Triton there and Liger's side fails on CPU tensors)
"""

import math
import os
import sys
import time

try:  # bench.py imports this file where there is no torch (selftest.py): the rows need it, --list does not
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = None

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GROUP = "issue30"

# Llama-3-8B-like shapes, and tiny ones for the CPU check
LLM = dict(tokens=8192, hidden=4096, inter=14336, vocab=128256, batch=2, heads=32, kv_heads=8, head_dim=128,
           layers=2)
TINY = dict(tokens=12, hidden=64, inter=96, vocab=300, batch=2, heads=4, kv_heads=2, head_dim=16, layers=1)
EPS = 1e-5  # Llama-3's rms_norm_eps
TOL_OUT, TOL_GRAD = 1e-2, 2e-2


class Section:
    """The table of these rows (bench.table prints it after the others)."""
    title = "### blk.nn training ops (issue 30)"
    sides = ("blk", "Liger", "torch", "torch.compile")
    header = ["op", "size", "blk ms", "Liger ms", "torch ms", "torch.compile ms", "blk/Liger", "blk/torch.compile",
              "peak MiB (blk / Liger / torch / compile)"]
    legend = ("blk/Liger = Liger time / blk time, blk/torch.compile = torch.compile time / blk time (above 1: blk "
              "is faster). fwd: the forward with inputs requiring gradients (what it saves included); fwd+bwd: "
              "the forward and torch.autograd.grad. torch: the plain PyTorch formula, eager; torch.compile: the "
              "same formula compiled. `n/a`: the side has no such op (the notes say why). Peak MiB: "
              "max_memory_allocated over one fwd+bwd run, less what was allocated before it.")

    @staticmethod
    def cells(r):
        def ms(v):
            return f"{v:.4g}" if isinstance(v, float) else v

        def ratio(side):
            if r.ok("blk") and r.ok(side):
                return f"{r.ms[side] / r.ms['blk']:.2f}"
            return "—"
        mem = " / ".join(f"{r.mem[s]:.0f}" if s in r.mem else "—" for s in Section.sides) if r.mem else "—"
        return [r.kernel, r.size] + [ms(r.ms[s]) for s in Section.sides] + [ratio("Liger"), ratio("torch.compile"),
                                                                             mem]


SECTION = Section()


# ---- the formulas (torch eager and torch.compile; float64 for the references) ---------------

def _up(t):
    """float32 for 16-bit tensors (where the models compute), else t itself (float64 stays)."""
    return t.float() if t.dtype in (torch.bfloat16, torch.float16) else t


def f_rms_norm(x, w):
    h = _up(x)
    h = h * (h.pow(2).mean(-1, keepdim=True) + EPS).rsqrt()
    return w * h.to(x.dtype)  # Hugging Face's LlamaRMSNorm


def f_add_rms_norm(x, r, w):
    h = x + r
    return f_rms_norm(h, w), h


def f_layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, EPS)


def f_swiglu(a, b):
    return F.silu(a) * b


def f_geglu(a, b):
    return F.gelu(a, approximate="tanh") * b


def _rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def f_rope(q, k, cos, sin):
    c, s = cos[:, None], sin[:, None]  # (1, seq, dim) -> (1, 1, seq, dim): Hugging Face's unsqueeze_dim=1
    return q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s


def f_cross_entropy(logits, target):
    return F.cross_entropy(_up(logits), target)  # transformers' loss: the logits made float32 first


def f_linear_cross_entropy(x, w, target):
    return F.cross_entropy(_up(x @ w.t()), target)


def f_kl_div(x, y):
    return F.kl_div(x, y, reduction="batchmean")


def f_jsd(s, t):
    """Generalized JSD, beta 0.5: (KL(q || m) + KL(p || m)) / 2 a row, m = (q + p) / 2, the mean."""
    lq, lp = F.log_softmax(_up(s), -1), F.log_softmax(_up(t), -1)
    lm = torch.logaddexp(lq, lp) - math.log(2.0)
    return (0.5 * (lq.exp() * (lq - lm)).sum() + 0.5 * (lp.exp() * (lp - lm)).sum()) / s.shape[0]


def f_embedding(ids, table):
    return F.embedding(ids, table)


# ---- the ops ----------------------------------------------------------------------------

class Op:
    """One op: its inputs (grad: the indices that require gradients), the blk and Liger calls
    (liger(lk, *inputs), lk = liger_kernel's functional module; None: n/a, liger_why says why),
    the torch formula, the output gradients (None: a scalar loss), a reference (None: the formula
    in float64 through autograd), and whether to measure peak memory."""

    def __init__(self, key, kernel, size, inputs, grad, blk, liger, formula, douts=None, ref=None, mem=False,
                 liger_why=None, note=None, tol_grad=TOL_GRAD):
        self.key, self.kernel, self.size, self.tol_grad = key, kernel, size, tol_grad
        self.inputs, self.grad, self.blk, self.liger, self.formula = inputs, grad, blk, liger, formula
        self.douts, self.ref, self.mem, self.liger_why, self.note = douts, ref, mem, liger_why, note


def _nn():
    if os.path.join(REPO, "python") not in sys.path:
        sys.path.insert(0, os.path.join(REPO, "python"))
    import blk.nn
    return blk.nn


DTYPE = "bfloat16"  # the inputs' type (the CPU check's --f32 gives float32)


def _dt():
    return getattr(torch, DTYPE)


def _randn(torch, dev, *shape, scale=1.0):
    return (torch.randn(*shape, device=dev) * scale).to(_dt())


def op_rms_norm(torch, dev, S):
    nn, T, H = _nn(), S["tokens"], S["hidden"]
    x, w = _randn(torch, dev, T, H), (torch.rand(H, device=dev) + 0.5).to(_dt())
    return Op("nn_rms_norm", "RMSNorm bf16", f"{T}×{H}", [x, w], (0, 1), lambda x, w: nn.rms_norm(x, w, EPS),
              lambda lk, x, w: lk.liger_rms_norm(x, w, EPS), f_rms_norm, douts=[_randn(torch, dev, T, H)])


def op_add_rms_norm(torch, dev, S):
    nn, T, H = _nn(), S["tokens"], S["hidden"]
    x, r, w = _randn(torch, dev, T, H), _randn(torch, dev, T, H), (torch.rand(H, device=dev) + 0.5).to(_dt())
    return Op("nn_add_rms_norm", "residual add + RMSNorm bf16", f"{T}×{H}", [x, r, w], (0, 1, 2),
              lambda x, r, w: nn.add_rms_norm(x, r, w, EPS),
              lambda lk, x, r, w: lk.liger_fused_add_rms_norm(x, r, w, EPS), f_add_rms_norm,
              douts=[_randn(torch, dev, T, H), _randn(torch, dev, T, H)])


def op_layer_norm(torch, dev, S):
    nn, T, H = _nn(), S["tokens"], S["hidden"]
    x = _randn(torch, dev, T, H)
    w, b = (torch.rand(H, device=dev) + 0.5).to(_dt()), (torch.rand(H, device=dev) - 0.5).to(_dt())
    return Op("nn_layer_norm", "LayerNorm bf16", f"{T}×{H}", [x, w, b], (0, 1, 2),
              lambda x, w, b: nn.layer_norm(x, w, b, EPS), lambda lk, x, w, b: lk.liger_layer_norm(x, w, b, EPS),
              f_layer_norm, douts=[_randn(torch, dev, T, H)])


def op_glu(torch, dev, S, gelu):
    nn, T, I = _nn(), S["tokens"], S["inter"]
    a, b = _randn(torch, dev, T, I, scale=2.0), _randn(torch, dev, T, I)
    name = "geglu" if gelu else "swiglu"
    return Op(f"nn_{name}", ("GeGLU (tanh)" if gelu else "SwiGLU") + " bf16", f"{T}×{I}", [a, b], (0, 1),
              nn.geglu if gelu else nn.swiglu,
              (lambda lk, a, b: lk.liger_geglu(a, b)) if gelu else (lambda lk, a, b: lk.liger_swiglu(a, b)),
              f_geglu if gelu else f_swiglu, douts=[_randn(torch, dev, T, I)])


def op_rope(torch, dev, S):
    nn = _nn()
    B, D, hq, hk = S["batch"], S["head_dim"], S["heads"], S["kv_heads"]
    N = S["tokens"] // B
    q = _randn(torch, dev, B, N, hq, D).transpose(1, 2)  # Hugging Face's layout: (B, S, H, D) storage
    k = _randn(torch, dev, B, N, hk, D).transpose(1, 2)
    inv = 1.0 / (500000.0 ** (torch.arange(0, D, 2, device=dev, dtype=torch.float64) / D))  # Llama-3's theta
    f = torch.arange(N, device=dev, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat((f, f), dim=-1)[None]
    cos, sin = emb.cos().to(_dt()), emb.sin().to(_dt())
    return Op("nn_rope", "RoPE q and k bf16", f"{B}×{N}, q {hq}×{D}, k {hk}×{D}", [q, k, cos, sin], (0, 1),
              nn.rope, lambda lk, q, k, c, s: lk.liger_rope(q, k, c, s), f_rope,
              douts=[_randn(torch, dev, B, hq, N, D), _randn(torch, dev, B, hk, N, D)])


def _chunked_loss_ref(torch, fn, inputs, grad, rows, chunk=1024):
    """fn(*chunk_inputs) -> the SUM of the rows' losses of a chunk; inputs[0..] split by rows
    where their first dimension is `rows` (others, e.g. a weight, whole). The mean's float64
    value and the gradients of the inputs in `grad` (float32 tensors; a whole input's summed
    over the chunks)."""
    total = 0.0
    grads = {i: torch.zeros(inputs[i].shape, dtype=torch.float64 if inputs[i].shape[0] != rows else torch.float32,
                            device=inputs[i].device) for i in grad}
    whole = {i: inputs[i].double().requires_grad_(i in grad) for i, t in enumerate(inputs)
             if t.shape[0] != rows and t.is_floating_point()}
    for start in range(0, rows, chunk):
        sl = slice(start, min(rows, start + chunk))
        ins = []
        for i, t in enumerate(inputs):
            if i in whole:
                ins.append(whole[i])
            elif t.is_floating_point():
                ins.append(t[sl].double().requires_grad_(i in grad))
            else:
                ins.append(t[sl])
        loss = fn(*ins)
        gs = torch.autograd.grad(loss, [ins[i] for i in grad])
        total += loss.item()
        for i, g in zip(grad, gs):
            if i in whole:
                grads[i] += g
            else:
                grads[i][sl] = g.float()
    dev = inputs[0].device
    return [torch.tensor(total / rows, dtype=torch.float64, device=dev)], [(grads[i] / rows).float() for i in grad]


def op_cross_entropy(torch, dev, S):
    nn, T, V = _nn(), S["tokens"], S["vocab"]
    logits = _randn(torch, dev, T, V, scale=3.0)
    target = torch.randint(0, V, (T,), device=dev)
    return Op("nn_xent", "cross-entropy bf16 logits", f"{T}×{V}", [logits, target], (0,), nn.cross_entropy,
              lambda lk, x, t: lk.liger_cross_entropy(x, t), f_cross_entropy,
              ref=lambda: _chunked_loss_ref(torch, lambda x, t: F.cross_entropy(x, t, reduction="sum"),
                                            [logits, target], (0,), T))


def op_linear_cross_entropy(torch, dev, S):
    nn, T, H, V = _nn(), S["tokens"], S["hidden"], S["vocab"]
    x = _randn(torch, dev, T, H)
    w = _randn(torch, dev, V, H, scale=3.0 / math.sqrt(H))  # logits of about 3 standard deviations
    target = torch.randint(0, V, (T,), device=dev)
    return Op("nn_linear_xent", "fused linear + cross-entropy bf16", f"{T}×{H} @ {H}×{V}", [x, w, target], (0, 1),
              nn.linear_cross_entropy, lambda lk, x, w, t: lk.liger_fused_linear_cross_entropy(x, w, t),
              f_linear_cross_entropy, mem=True,
              ref=lambda: _chunked_loss_ref(torch, lambda x, w, t: F.cross_entropy(x @ w.t(), t, reduction="sum"),
                                            [x, w, target], (0, 1), T),
              tol_grad=5e-2,
              note="blk and Liger compute the gradients of x and the weight in the forward (their fwd holds "
                   "nearly all the work; their backward scales them); gradient tolerance 5e-2: Liger adds the "
                   "weight gradient's chunks in bf16 by default (accum_dtype None)")


def op_kl_div(torch, dev, S):
    nn, T, V = _nn(), S["tokens"], S["vocab"]
    x = torch.randn(T, V, device=dev).mul_(3).log_softmax(-1).to(_dt())   # the student's log-probabilities
    y = torch.randn(T, V, device=dev).mul_(3).softmax(-1).to(_dt())     # the teacher's probabilities

    def ref():
        total, gx = 0.0, torch.empty(T, V, dtype=torch.float32, device=dev)
        for start in range(0, T, 1024):
            xd, yd = x[start:start + 1024].double(), y[start:start + 1024].double()
            total += (torch.xlogy(yd, yd) - yd * xd).sum().item()
            gx[start:start + 1024] = (-yd / T).float()
        return [torch.tensor(total / T, dtype=torch.float64, device=dev)], [gx]

    return Op("nn_kl_div", "KL divergence bf16", f"{T}×{V}", [x, y], (0,), nn.kl_div,
              lambda lk, x, y: lk.liger_kl_div(x, y, reduction="batchmean"), f_kl_div, ref=ref)


def op_jsd(torch, dev, S):
    nn, T, V = _nn(), S["tokens"], S["vocab"]
    s, t = _randn(torch, dev, T, V, scale=3.0), _randn(torch, dev, T, V, scale=3.0)

    def liger(lk, s, t):  # Liger's JSD takes log-probabilities: student first, teacher second
        return lk.liger_jsd(F.log_softmax(s.float(), -1), F.log_softmax(t.float(), -1), beta=0.5)

    return Op("nn_jsd", "JSD (beta 0.5) bf16 logits", f"{T}×{V}", [s, t], (0,), lambda s, t: nn.jsd(s, t, beta=0.5),
              liger, f_jsd,
              ref=lambda: _chunked_loss_ref(torch, lambda a, b: f_jsd(a, b) * a.shape[0], [s, t], (0,), T),
              note="Liger's JSD takes log-probabilities: its side includes torch's log_softmax of both logits in "
                   "float32 (and its backward), as a caller from logits runs it; blk.nn.jsd takes the logits")


def op_embedding(torch, dev, S):
    nn, T, H, V = _nn(), S["tokens"], S["hidden"], S["vocab"]
    ids = torch.randint(0, V, (T,), device=dev)
    table = _randn(torch, dev, V, H)

    def liger(lk, ids, table):
        from liger_kernel.ops import LigerEmbeddingFunction
        return LigerEmbeddingFunction.apply(table, ids)

    def ref():
        g = torch.zeros(V, H, dtype=torch.float32, device=dev).index_add_(0, ids, douts[0].float())
        return [table[ids].double()], [g]

    douts = [_randn(torch, dev, T, H)]
    return Op("nn_embed", "embedding bf16", f"{T} tokens × {H} of {V}", [ids, table], (1,), nn.embedding, liger,
              f_embedding, douts=douts, ref=ref,
              note="Liger: liger_kernel.ops.LigerEmbeddingFunction (experimental; its gradient by atomic adds)")


OPS = [("nn_rms_norm", "RMSNorm bf16", op_rms_norm),
       ("nn_add_rms_norm", "residual add + RMSNorm bf16", op_add_rms_norm),
       ("nn_layer_norm", "LayerNorm bf16", op_layer_norm),
       ("nn_swiglu", "SwiGLU bf16", lambda torch, dev, S: op_glu(torch, dev, S, False)),
       ("nn_geglu", "GeGLU (tanh) bf16", lambda torch, dev, S: op_glu(torch, dev, S, True)),
       ("nn_rope", "RoPE q and k bf16", op_rope),
       ("nn_xent", "cross-entropy bf16 logits", op_cross_entropy),
       ("nn_linear_xent", "fused linear + cross-entropy bf16", op_linear_cross_entropy),
       ("nn_kl_div", "KL divergence bf16", op_kl_div),
       ("nn_jsd", "JSD (beta 0.5) bf16 logits", op_jsd),
       ("nn_embed", "embedding bf16", op_embedding)]


# ---- running an op's rows ----------------------------------------------------------------

def liger_functional():
    """(liger_kernel.transformers.functional, version) or (None, why)."""
    try:
        import liger_kernel  # noqa: F401
    except ImportError as e:
        first = str(e).splitlines()[0][:120] if str(e) else ""
        return None, f"Liger-Kernel not installed ({type(e).__name__}: {first})"
    try:
        from liger_kernel.transformers import functional
    except Exception as e:
        return None, f"liger_kernel.transformers.functional does not import ({type(e).__name__}: {str(e)[:160]})"
    try:
        from importlib.metadata import version
        ver = version("liger_kernel")
    except Exception:
        ver = "version unknown"
    return functional, ver


def rel_err(torch, got, want, rows=2048):
    """max |got - want| / max |want| in float64, a block of rows at a time (the (8192 × 128256)
    tensors would take 8 GiB each in float64); inf for a NaN or an infinity, or a shape that
    differs."""
    if tuple(got.shape) != tuple(want.shape):
        return math.inf
    g, w = got.reshape(got.shape[0], -1) if got.dim() else got.reshape(1, 1), \
        want.reshape(want.shape[0], -1) if want.dim() else want.reshape(1, 1)
    scale = w.abs().max().item() or 1.0
    worst = 0.0
    for start in range(0, g.shape[0], rows):
        gc, wc = g[start:start + rows].double(), w[start:start + rows].double()
        if not bool(torch.isfinite(gc).all()):
            return math.inf
        worst = max(worst, (gc - wc).abs_().max().item())
    return worst / scale


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _peak_mib(env, fn):
    """Peak memory allocated by one run of fn beyond what was allocated before it, in MiB (None off
    the GPU)."""
    torch = env.torch
    if env.dev != "cuda":
        return None
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    res = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del res
    return peak / 2 ** 20


def reference(torch, op):
    """(outputs, gradients) in float64 (or float32 for the largest), op.ref's or the formula's."""
    if op.ref is not None:
        return op.ref()
    ins = [t.double().requires_grad_(i in op.grad) if t.is_floating_point() else t for i, t in enumerate(op.inputs)]
    outs = _tuple(op.formula(*ins))
    gs = torch.autograd.grad(outs, [ins[i] for i in op.grad],
                             [d.double() for d in op.douts] if op.douts is not None else None)
    return [o.detach() for o in outs], list(gs)


def run_op(env, b, op, compile_ok=True):
    """The op's two rows: fwd and fwd+bwd, each side checked, then timed."""
    torch = env.torch
    fwd = b.Row(f"{op.kernel} fwd", op.size, section=SECTION)
    both = b.Row(f"{op.kernel} fwd+bwd", op.size, section=SECTION)
    ref_out, ref_grad = reference(torch, op)
    lk, liger_info = liger_functional()
    sides = [("blk", op.blk), ("Liger", None if lk is None or op.liger is None else
                                (lambda *a: op.liger(lk, *a))), ("torch", op.formula)]
    if compile_ok:
        sides.append(("torch.compile", torch.compile(op.formula)))
    else:
        for r in (fwd, both):
            r.ms["torch.compile"] = "n/a"
    if lk is None or op.liger is None:
        why = liger_info if lk is None else op.liger_why
        for r in (fwd, both):
            r.ms["Liger"] = "n/a: not installed" if lk is None and "not installed" in why else "n/a"
        fwd.notes.append(f"Liger: n/a: {why}")
    else:
        fwd.notes.append(f"Liger-Kernel {liger_info}")

    def fresh():
        return [t.detach().clone().requires_grad_(i in op.grad) for i, t in enumerate(op.inputs)]

    def out_err(outs):
        outs = _tuple(outs)
        if len(outs) != len(ref_out):
            return math.inf
        return max(rel_err(torch, o.detach(), r) for o, r in zip(outs, ref_out))

    for side, fn in sides:
        if fn is None:
            continue
        ins = fresh()
        b.measure(env, fwd, side, lambda: fn(*ins), [], out_err, TOL_OUT, quick=True)
        ins = fresh()
        douts = [d.clone() for d in op.douts] if op.douts is not None else None
        wrt = [ins[i] for i in op.grad]

        def fwd_bwd():
            outs = _tuple(fn(*ins))
            return outs, torch.autograd.grad(outs, wrt, douts)

        def check(res):
            e = out_err(res[0])
            if len(res[1]) != len(ref_grad):
                return math.inf
            return max([e] + [rel_err(torch, g, r) for g, r in zip(res[1], ref_grad)])

        if b.measure(env, both, side, fwd_bwd, [], check, op.tol_grad, quick=True) and op.mem:
            mib = _peak_mib(env, fwd_bwd)
            if mib is not None:
                both.mem[side] = mib
                print(f"  {both.kernel} [{side}]: peak {mib:.0f} MiB", flush=True)
        del ins, douts, wrt
    if op.note:
        fwd.notes.append(op.note)
    if op.mem and both.mem:
        both.notes.append("peak MiB over one fwd+bwd run: " + ", ".join(f"{s} {v:.0f}" for s, v in both.mem.items()))
    return [fwd, both]


# ---- the optimizer rows ---------------------------------------------------------------------

def layer_params(torch, dev, S):
    """The float32 weights of S["layers"] Llama decoder layers (q, k, v, o, gate, up, down, two
    norms) with random gradients, in a list of (param, grad)."""
    H, I, hd = S["hidden"], S["inter"], S["head_dim"]
    kv = S["kv_heads"] * hd
    shapes = [(H, H), (kv, H), (kv, H), (H, H), (I, H), (I, H), (H, I), (H,), (H,)] * S["layers"]
    out = []
    for shape in shapes:
        p = torch.randn(*shape, device=dev) * 0.02
        g = torch.randn(*shape, device=dev) * 1e-3
        out.append((p, g))
    return out


def _fresh_params(torch, pg):
    params = []
    for p, g in pg:
        q = p.clone().requires_grad_(True)
        q.grad = g.clone()
        params.append(q)
    return params


def _check_then_time(env, b, row, side, check_run, timed, check, tol):
    """bench.measure's check of check_run, then the short do_bench of `timed` (another call of the
    same kernels, e.g. with arguments a repeated run needs)."""
    if b.measure(env, row, side, check_run, [], check, tol, time_it=False):
        try:
            timed()   # a torch.compile side compiles anew for the timed call's arguments
            env.torch.cuda.synchronize()
            row.ms[side] = env.do_bench(timed, quick=True)
            print(f"  {row.kernel} {row.size} [{side}]: {row.ms[side]:.4g} ms (short trial)", flush=True)
        except Exception as e:
            row.ms[side] = "ERROR"
            print(f"  ERROR {row.kernel} [{side}]: {type(e).__name__}: {str(e)[:300]}", flush=True)


LR, BETAS, ADAM_EPS, WD = 1e-3, (0.9, 0.999), 1e-8, 0.01


def row_adamw(env, b, S=LLM, compile_ok=True):
    torch, dev = env.torch, env.dev
    nn = _nn()
    torch.manual_seed(30)
    pg = layer_params(torch, dev, S)
    n = sum(p.numel() for p, _ in pg)
    row = b.Row("AdamW step f32", f"{len(pg)} tensors, {n / 1e6:.0f}M params", section=SECTION)
    row.ms["Liger"] = "n/a"
    # one step from zero state, float64: m = (1 - b1) g, v = (1 - b2) g^2, bias-corrected to g and g^2
    ref = []
    for p, g in pg:
        pd, gd = p.double(), g.double()
        ref.append(-LR * WD * pd - LR * gd / (gd.abs() + ADAM_EPS))

    def check(params):
        return max(rel_err(torch, q.detach().double() - p.double(), u) for q, (p, _), u in zip(params, pg, ref))

    def side(name, make_opt, wrap=None):
        params = _fresh_params(torch, pg)
        opt = make_opt(params)
        step = wrap(opt.step) if wrap is not None else opt.step
        b.measure(env, row, name, lambda: (step(), params)[1], [], check, 1e-3, quick=True)
        del opt, params

    side("blk", lambda ps: nn.AdamW(ps, lr=LR, betas=BETAS, eps=ADAM_EPS, weight_decay=WD))
    side("torch", lambda ps: torch.optim.AdamW(ps, lr=LR, betas=BETAS, eps=ADAM_EPS, weight_decay=WD,
                                               fused=env.dev == "cuda"))
    if compile_ok:
        side("torch.compile", lambda ps: torch.optim.AdamW(ps, lr=LR, betas=BETAS, eps=ADAM_EPS, weight_decay=WD,
                                                           foreach=True), wrap=torch.compile)
    else:
        row.ms["torch.compile"] = "n/a"
    row.notes.append("two Llama-3-8B decoder layers' weights, float32 parameters and gradients (mixed precision's "
                     "masters); blk: blk.nn.AdamW (one launch, float32 state); torch: torch.optim.AdamW(fused=True); "
                     "torch.compile: torch.compile(opt.step) of AdamW(foreach=True); Liger: n/a (no optimizer); "
                     "checked: the first step's update against float64 (tolerance 1e-3)")
    return [row]


def row_clip(env, b, S=LLM, compile_ok=True):
    torch, dev = env.torch, env.dev
    nn = _nn()
    torch.manual_seed(30)
    pg = layer_params(torch, dev, S)
    n = sum(p.numel() for p, _ in pg)
    row = b.Row("clip_grad_norm_ f32", f"{len(pg)} tensors, {n / 1e6:.0f}M params", section=SECTION)
    row.ms["Liger"] = "n/a"
    norm = math.sqrt(sum((g.double() ** 2).sum().item() for _, g in pg))
    max_norm = norm / 2   # clips
    factor = max_norm / (norm + 1e-6)
    ref = [g.double() * factor for _, g in pg]

    def check(res):
        got_norm, params = res
        e = abs(float(got_norm) - norm) / norm
        return max([e] + [rel_err(torch, q.grad, r) for q, r in zip(params, ref)])

    def t_clip(params, max_norm):
        return torch.nn.utils.clip_grad_norm_(params, max_norm, foreach=True)

    def side(name, fn):
        params = _fresh_params(torch, pg)
        # timed with max_norm 0: every run scales every gradient (by 0), as a step that clips does;
        # with a positive max_norm the second run would find the norm at it and blk write nothing
        _check_then_time(env, b, row, name, lambda: (fn(params, max_norm), params), lambda: fn(params, 0.0), check,
                         1e-4)
        del params

    side("blk", lambda ps, m: nn.clip_grad_norm_(ps, m))
    side("torch", t_clip)
    if compile_ok:
        side("torch.compile", torch.compile(t_clip))
    else:
        row.ms["torch.compile"] = "n/a"
    row.notes.append(f"the gradients of two Llama-3-8B decoder layers (float32, norm {norm:.3g}); checked with "
                     "max_norm half the norm (the norm and the scaled gradients against float64), timed with "
                     "max_norm 0 (each run scales every gradient); blk: blk.nn.clip_grad_norm_ (two launches, no "
                     "sync); torch: torch.nn.utils.clip_grad_norm_(foreach=True), and it through torch.compile; "
                     "Liger: n/a")
    return [row]


def _op_row(make):
    def fn(env, b):
        env.torch.manual_seed(30)
        return run_op(env, b, make(env.torch, env.dev, LLM))
    return fn


ROWS = ([(key, kernel + " fwd and fwd+bwd", "Llama-3-8B shapes", _op_row(make)) for key, kernel, make in OPS]
        + [("nn_adamw", "AdamW step f32", "2 Llama-3-8B layers", row_adamw),
           ("nn_clip_grad", "clip_grad_norm_ f32", "2 Llama-3-8B layers", row_clip)])


# ---- no GPU: every row at tiny shapes on CPU torch ---------------------------------------------

class CpuEnv:
    """What the rows use of bench.Env, on the CPU: blk.nn's CPU tensors run on the interpreter,
    do_bench is one timed call."""

    def __init__(self):
        self.torch, self.dev, self.quick, self.stream = torch, "cpu", True, 0

    def do_bench(self, fn, quick=False):
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3


def cpu_check(compile_ok=True):
    """Every row of the group at TINY shapes on the CPU: returns the rows. Without torch.compile,
    Liger's ops run where liger_kernel imports, through blk.triton (its Triton kernels on blk's
    interpreter); with it, Triton is Triton and Liger's side fails on CPU tensors."""
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(REPO, "python"))
    import torch._dynamo  # noqa: F401  (torch's own imports of triton, before blk.triton takes its name)
    import torch._inductor.utils  # noqa: F401
    if not compile_ok:  # inductor reads Triton's modules where it compiles: no blk.triton with torch.compile
        try:
            import blk.triton
            blk.triton.install()   # before liger_kernel imports triton
        except Exception as e:
            print(f"blk.triton.install: {type(e).__name__}: {e}")
    torch.cuda.synchronize = lambda *a, **k: None   # bench.measure's; nothing to wait for here
    import bench as b
    env = CpuEnv()
    rows = []
    for key, kernel, make in OPS:
        torch.manual_seed(30)
        print(f"\n== {kernel}", flush=True)
        rows += run_op(env, b, make(torch, "cpu", TINY), compile_ok=compile_ok)
    for fn in (row_adamw, row_clip):
        print(f"\n== {fn.__name__}", flush=True)
        rows += fn(env, b, S=TINY, compile_ok=compile_ok)
    return rows


def main():
    global DTYPE
    if "--f32" in sys.argv[1:]:
        DTYPE = "float32"
    if "--cpu" not in sys.argv[1:]:
        print("\n".join(__doc__.strip().splitlines()[-5:]))
        return 2
    rows = cpu_check(compile_ok="--no-compile" not in sys.argv[1:])
    print()
    bad = 0
    for r in rows:
        cells = SECTION.cells(r)
        print("| " + " | ".join(cells) + " |")
        bad += any(v in ("FAIL", "ERROR") for s, v in r.ms.items() if s != "Liger")
    liger_bad = sum(r.ms["Liger"] in ("FAIL", "ERROR") for r in rows)
    print(f"rows_nn CPU check: {len(rows)} rows, {bad} with a blk or torch side FAIL/ERROR; Liger FAIL/ERROR in "
          f"{liger_bad} (Liger on blk's interpreter: a signature check, not its GPU code path)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
