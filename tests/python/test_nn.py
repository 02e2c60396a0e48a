"""tests/python/test_nn.py: blk.nn (python/blk/nn, stdlib/nn) with real torch
on CPU tensors, so every kernel runs on the interpreter: each op's forward
and backward against torch's own implementation of the same formula (f32
within 1e-5 relative, bf16 against the f32 reference within bf16's
rounding), torch.autograd.gradcheck in float64 (the kernels compute in f64
for f64 data), torch.library.opcheck of every custom op (schema, fake
function, autograd registration), and torch.compile(fullgraph=True) of a
small model made of the ops. Without torch it prints one line and counts
nothing. BLK_NN_DEVICE=cuda runs the same cases on the GPU (torch's
default device; f32 tolerances 1e-4 there, for the GPU's exp and rsqrt),
and adds cases at LLM shapes (tests/gpu/python.sh)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import case, finish, close, torch_compile_works  # noqa: E402

try:
    import torch
except ImportError:
    print("skip tests/python/test_nn.py: no torch in this python (blk.nn needs it)")
    finish()

import torch.nn.functional as F  # noqa: E402

import blk.nn as nn  # noqa: E402

DEV = os.environ.get("BLK_NN_DEVICE", "cpu")
torch.set_default_device(DEV)
torch.manual_seed(0)
F64 = torch.float64
TOL = 1e-5 if DEV == "cpu" else 1e-4   # f32 rtol and atol



def grads(fn, *inputs, seed=1):
    """fn's output and the gradients of <output, r> (r random, fixed by seed)
    with respect to inputs."""
    ins = [t.detach().clone().requires_grad_(True) for t in inputs]
    out = fn(*ins)
    outs = out if isinstance(out, tuple) else (out,)
    g = torch.Generator(device="cpu").manual_seed(seed)
    loss = sum((o.float() * torch.randn(o.shape, generator=g, device="cpu").to(o.device)).sum() for o in outs)
    loss.backward()
    return [o.detach() for o in outs], [t.grad for t in ins]


def compare(blk_fn, ref_fn, inputs, rtol, atol, what, ref_dtype=None):
    """blk_fn against ref_fn (run on the inputs cast to ref_dtype, if
    given): outputs and input gradients. With ref_dtype, a tensor off by
    more than rtol and atol passes still when its largest error is within
    twice that of ref_fn run on the inputs as they are (torch in their
    type): the gradient arriving in the inputs' type (bf16) already moves a
    sum over thousands of rows by more than atol."""
    o1, g1 = grads(blk_fn, *inputs)
    ref_in = [t.to(ref_dtype) for t in inputs] if ref_dtype else inputs
    o2, g2 = grads(ref_fn, *ref_in)
    o3, g3 = grads(ref_fn, *inputs) if ref_dtype else (o2, g2)
    for kind, got, want, lowp in (("output", o1, o2, o3), ("gradient of input", g1, g2, g3)):
        for i, (a, b, c) in enumerate(zip(got, want, lowp)):
            err = (a.double() - b.double()).abs()
            if ref_dtype and not bool((err <= atol + rtol * b.double().abs()).all()):
                torch_err = (c.double() - b.double()).abs().max().item()
                if err.max().item() <= 2 * torch_err:
                    continue
            close(a, b, rtol, atol, f"{what}: {kind} {i}")
    return f"{len(o1)} outputs, {len(g1)} gradients"


def ref_rms(x, w, eps=1e-6, offset=0.0):
    xf = x.float() if x.dtype != F64 else x
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * (w.to(xf.dtype) + offset)
    return y.to(x.dtype)


def ref_add_rms(x, r, w, eps=1e-6, offset=0.0):
    h = x + r
    return ref_rms(h, w, eps, offset), h


def ref_swiglu(a, b):
    return (F.silu(a.float()) * b.float()).to(a.dtype) if a.dtype != F64 else F.silu(a) * b


# ---- RMSNorm ----------------------------------------------------------------

for shape, offset in [((3, 5, 37), 0.0), ((4, 64), 0.0), ((6, 100), 1.0), ((1, 1), 0.0)]:
    @case(f"rms_norm {shape} f32, offset {offset} ({'Gemma' if offset else 'Llama'}): forward, dx, dw vs torch")
    def _():
        x, w = torch.randn(shape), torch.randn(shape[-1])
        return compare(lambda a, b: nn.rms_norm(a, b, 1e-6, offset),
                       lambda a, b: ref_rms(a, b, 1e-6, offset), [x, w], TOL, TOL, "rms_norm")


@case("rms_norm bf16 (8, 96): forward and gradients vs torch in f32, within bf16 rounding")
def _():
    x, w = torch.randn(8, 96).bfloat16(), torch.randn(96).bfloat16()
    return compare(nn.rms_norm, ref_rms, [x, w], 2e-2, 2e-2, "rms_norm bf16", ref_dtype=torch.float32)


@case("float16: rms_norm, add_rms_norm, swiglu, cross_entropy vs torch in f32 within f16 rounding")
def _():
    h = torch.float16
    x, r, w = torch.randn(5, 40).to(h), torch.randn(5, 40).to(h), torch.randn(40).to(h)
    compare(nn.rms_norm, ref_rms, [x, w], 4e-3, 4e-3, "rms_norm f16", ref_dtype=torch.float32)
    compare(nn.add_rms_norm, ref_add_rms, [x, r, w], 4e-3, 4e-3, "add_rms_norm f16", ref_dtype=torch.float32)
    compare(nn.swiglu, ref_swiglu, [x, r], 4e-3, 4e-3, "swiglu f16", ref_dtype=torch.float32)
    target = torch.randint(0, 40, (5,))
    compare(lambda a: nn.cross_entropy(a, target), lambda a: F.cross_entropy(a, target), [x], 4e-3, 4e-3,
            "cross_entropy f16", ref_dtype=torch.float32)


@case("mixed dtypes: bf16 x with float32 weight (autocast's), bf16 x with float32 residual: gradients in each "
      "input's dtype")
def _():
    x, w, r = torch.randn(4, 48).bfloat16(), torch.randn(48), torch.randn(4, 48)
    compare(nn.rms_norm, ref_rms, [x, w], 2e-2, 2e-2, "rms_norm bf16/f32", ref_dtype=torch.float32)
    o, g = grads(nn.add_rms_norm, x, r, w)
    assert [t.dtype for t in g] == [torch.bfloat16, torch.float32, torch.float32], [t.dtype for t in g]
    o2, g2 = grads(ref_add_rms, x.float(), r.bfloat16().float(), w)
    for a, b in zip(g, g2):
        close(a, b, 3e-2, 3e-2, "add_rms_norm mixed")


@case("rms_norm rstd saved: float32 per row for bf16 input, equals 1/rms")
def _():
    x, w = torch.randn(5, 33).bfloat16(), torch.ones(33).bfloat16()
    y, rstd = torch.ops.blk_nn.rms_norm_fwd(x, w, 1e-6, 0.0)
    assert rstd.dtype == torch.float32 and rstd.shape == (5,), (rstd.dtype, rstd.shape)
    close(rstd, torch.rsqrt(x.float().pow(2).mean(-1) + 1e-6), TOL, 1e-6, "rstd")


@case("rms_norm f64: gradcheck in x and weight (Llama and Gemma)")
def _():
    for offset in (0.0, 1.0):
        x = torch.randn(4, 19, dtype=F64, requires_grad=True)
        w = torch.randn(19, dtype=F64, requires_grad=True)
        assert torch.autograd.gradcheck(lambda a, b: nn.rms_norm(a, b, 1e-5, offset), (x, w))


@case("rms_norm bwd with more rows than programs (dw from per-program partial sums reduced)")
def _():
    x, w = torch.randn(23, 40), torch.randn(40)   # 4 programs on the interpreter, 23 rows
    return compare(nn.rms_norm, ref_rms, [x, w], TOL, TOL, "rms_norm 23 rows")


@case("add_rms_norm f32 (2, 7, 48): y and h, gradients of x, residual, weight vs torch")
def _():
    x, r, w = torch.randn(2, 7, 48), torch.randn(2, 7, 48), torch.randn(48)
    return compare(nn.add_rms_norm, ref_add_rms, [x, r, w], TOL, TOL, "add_rms_norm")


@case("add_rms_norm Gemma offset, bf16: vs torch in f32 within bf16 rounding")
def _():
    x, r, w = torch.randn(6, 64).bfloat16(), torch.randn(6, 64).bfloat16(), torch.randn(64).bfloat16() * 0.1
    return compare(lambda a, b, c: nn.add_rms_norm(a, b, c, 1e-6, 1.0),
                   lambda a, b, c: ref_add_rms(a, b, c, 1e-6, 1.0), [x, r, w], 3e-2, 3e-2, "add_rms_norm bf16",
                   ref_dtype=torch.float32)


@case("add_rms_norm f64: gradcheck in x, residual and weight")
def _():
    ins = [torch.randn(3, 21, dtype=F64, requires_grad=True) for _ in range(2)]
    w = torch.randn(21, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(nn.add_rms_norm, (ins[0], ins[1], w))


@case("add_rms_norm with only y used (h's gradient absent)")
def _():
    x, r, w = torch.randn(4, 32), torch.randn(4, 32), torch.randn(32)
    return compare(lambda a, b, c: nn.add_rms_norm(a, b, c)[0], lambda a, b, c: ref_add_rms(a, b, c)[0],
                   [x, r, w], TOL, TOL, "add_rms_norm y only")


@case("RMSNorm module: weight ones (zeros for Gemma), forward with and without residual")
def _():
    m, g = nn.RMSNorm(24), nn.RMSNorm(24, gemma=True)
    x, r = torch.randn(3, 24), torch.randn(3, 24)
    close(m(x), ref_rms(x, torch.ones(24)), TOL, TOL, "RMSNorm")
    close(g(x), ref_rms(x, torch.ones(24)), TOL, TOL, "RMSNorm gemma")
    y, h = m(x, r)
    close(h, x + r, 0, 0, "RMSNorm residual h")


# ---- SwiGLU -----------------------------------------------------------------

@case("swiglu f32 (3, 5, 70), values to +-30: forward, da, db vs torch")
def _():
    a, b = torch.randn(3, 5, 70) * 8, torch.randn(3, 5, 70)
    a[0, 0, :4] = torch.tensor([30.0, -30.0, 0.0, -0.0])
    return compare(nn.swiglu, ref_swiglu, [a, b], TOL, TOL, "swiglu")


@case("swiglu bf16 (4, 1500) (two programs): vs torch in f32 within bf16 rounding")
def _():
    a, b = torch.randn(4, 1500).bfloat16(), torch.randn(4, 1500).bfloat16()
    return compare(nn.swiglu, ref_swiglu, [a, b], 2e-2, 2e-2, "swiglu bf16", ref_dtype=torch.float32)


@case("swiglu f64: gradcheck in a and b")
def _():
    a = torch.randn(5, 9, dtype=F64, requires_grad=True)
    b = torch.randn(5, 9, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(nn.swiglu, (a, b))


def ref_geglu(a, b):
    return F.gelu(a, approximate="tanh") * b


@case("geglu f32 (3, 5, 70), values to +-30: forward, da, db vs torch's gelu(approximate='tanh')")
def _():
    a, b = torch.randn(3, 5, 70) * 4, torch.randn(3, 5, 70)
    a[0, 0, :4] = torch.tensor([30.0, -30.0, 0.0, -0.0])
    return compare(nn.geglu, ref_geglu, [a, b], TOL, TOL, "geglu")


@case("geglu bf16 (4, 1500): vs torch in f32 within bf16 rounding")
def _():
    a, b = torch.randn(4, 1500).bfloat16(), torch.randn(4, 1500).bfloat16()
    return compare(nn.geglu, ref_geglu, [a, b], 2e-2, 2e-2, "geglu bf16", ref_dtype=torch.float32)


@case("geglu f64: gradcheck in a and b")
def _():
    a = torch.randn(5, 9, dtype=F64, requires_grad=True) * 3
    b = torch.randn(5, 9, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(nn.geglu, (a.detach().requires_grad_(), b))


# ---- RoPE -------------------------------------------------------------------

def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def ref_rope(q, k, cos, sin):
    if cos.dim() == 3:
        cos, sin = cos[:, None], sin[:, None]
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def tables(batch, seq, dim, dtype=torch.float32, per_batch=False):
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=F64) / dim))
    pos = torch.arange(seq, dtype=F64)[:, None] + (torch.arange(batch, dtype=F64)[:, None, None] * 3
                                                  if per_batch else 0)
    f = pos * inv
    emb = torch.cat((f, f), dim=-1)
    if not per_batch:
        emb = emb[None]
    return emb.cos().to(dtype), emb.sin().to(dtype)


@case("rope f32, GQA (q 8 heads, k 2), head_dim 16, cos/sin (1, seq, dim): q, k and gradients vs torch")
def _():
    q, k = torch.randn(2, 8, 5, 16), torch.randn(2, 2, 5, 16)
    cos, sin = tables(2, 5, 16)
    return compare(lambda a, b: nn.rope(a, b, cos, sin), lambda a, b: ref_rope(a, b, cos, sin), [q, k],
                   TOL, TOL, "rope")


@case("rope f32, (batch, seq, heads, dim) tensors seen transposed, cos/sin per batch, head_dim 12 (half 6)")
def _():
    q = torch.randn(3, 4, 6, 12).transpose(1, 2)   # (batch, heads, seq, dim), seq-major in memory
    k = torch.randn(3, 4, 3, 12).transpose(1, 2)
    cos, sin = tables(3, 4, 12, per_batch=True)
    got = nn.rope(q, k, cos, sin)
    want = ref_rope(q, k, cos, sin)
    close(got[0], want[0], TOL, TOL, "q")
    close(got[1], want[1], TOL, TOL, "k")
    assert got[0].stride() == q.stride(), (got[0].stride(), q.stride())   # same layout out


@case("rope cos/sin (seq, dim) with unequal halves (general rotate-half), grads vs torch")
def _():
    q, k = torch.randn(1, 3, 4, 8), torch.randn(1, 1, 4, 8)
    cos, sin = torch.randn(4, 8), torch.randn(4, 8)
    return compare(lambda a, b: nn.rope(a, b, cos, sin), lambda a, b: ref_rope(a, b, cos, sin), [q, k],
                   TOL, TOL, "rope general")


@case("rope bf16: vs torch in f32 within bf16 rounding")
def _():
    q, k = torch.randn(2, 4, 6, 32).bfloat16(), torch.randn(2, 2, 6, 32).bfloat16()
    cos, sin = tables(2, 6, 32, torch.bfloat16)
    return compare(lambda a, b: nn.rope(a, b, cos, sin),
                   lambda a, b: ref_rope(a, b, cos.float(), sin.float()), [q, k], 2e-2, 2e-2, "rope bf16",
                   ref_dtype=torch.float32)


@case("rope f64: gradcheck in q and k")
def _():
    q = torch.randn(1, 4, 3, 8, dtype=F64, requires_grad=True)
    k = torch.randn(1, 2, 3, 8, dtype=F64, requires_grad=True)
    cos, sin = tables(1, 3, 8, F64)
    assert torch.autograd.gradcheck(lambda a, b: nn.rope(a, b, cos, sin), (q, k))


# ---- cross-entropy -------------------------------------------------------------

for reduction in ("mean", "sum", "none"):
    for smoothing in (0.0, 0.1):
        @case(f"cross_entropy f32 {reduction}, label_smoothing {smoothing}, ignore_index rows: loss and "
              f"dlogits vs torch")
        def _():
            logits = torch.randn(9, 37) * 3
            target = torch.randint(0, 37, (9,))
            target[[2, 5]] = -100
            return compare(lambda x: nn.cross_entropy(x, target, reduction=reduction, label_smoothing=smoothing),
                           lambda x: F.cross_entropy(x, target, reduction=reduction, label_smoothing=smoothing),
                           [logits], TOL, TOL, "cross_entropy")


@case("cross_entropy over 5000 classes (two 4096-wide chunks), large logits, ignore_index 7")
def _():
    logits = torch.randn(3, 5000) * 20
    target = torch.tensor([4999, 7, 4096])
    return compare(lambda x: nn.cross_entropy(x, target, ignore_index=7, label_smoothing=0.05),
                   lambda x: F.cross_entropy(x, target, ignore_index=7, label_smoothing=0.05),
                   [logits], TOL, TOL, "cross_entropy 5000")


def ref_ce_z_cap(x, target, ignore_index=-100, reduction="mean", z=0.0, cap=None, smoothing=0.0):
    if cap is not None:
        x = cap * torch.tanh(x / cap)
    rows = F.cross_entropy(x, target, ignore_index=ignore_index, reduction="none", label_smoothing=smoothing)
    keep = target != ignore_index
    rows = rows + torch.where(keep, z * torch.logsumexp(x, -1) ** 2, 0.0)
    if reduction == "none":
        return rows
    return rows.sum() / (keep.sum() if reduction == "mean" else 1)


for reduction in ("mean", "none"):
    @case(f"cross_entropy f32 {reduction}: z_loss 1e-2, softcap 3.0, label smoothing, an ignored row, vs torch")
    def _():
        logits = torch.randn(7, 29) * 5
        target = torch.randint(0, 29, (7,))
        target[3] = -100
        return compare(lambda x: nn.cross_entropy(x, target, reduction=reduction, label_smoothing=0.1,
                                                  z_loss=1e-2, softcap=3.0),
                       lambda x: ref_ce_z_cap(x, target, reduction=reduction, z=1e-2, cap=3.0, smoothing=0.1),
                       [logits], TOL, TOL, "cross_entropy z/cap")


@case("cross_entropy z_loss alone and softcap alone (two 4096-wide chunks), vs torch")
def _():
    logits = torch.randn(3, 5000) * 10
    target = torch.tensor([4999, 0, 4096])
    compare(lambda x: nn.cross_entropy(x, target, z_loss=1e-3), lambda x: ref_ce_z_cap(x, target, z=1e-3),
            [logits], TOL, TOL, "cross_entropy z")
    compare(lambda x: nn.cross_entropy(x, target, softcap=30.0), lambda x: ref_ce_z_cap(x, target, cap=30.0),
            [logits], TOL, TOL, "cross_entropy cap")


@case("cross_entropy f64: gradcheck with z_loss and softcap")
def _():
    logits = torch.randn(4, 13, dtype=F64, requires_grad=True)
    target = torch.tensor([0, 12, -100, 5])
    assert torch.autograd.gradcheck(lambda x: nn.cross_entropy(x, target, z_loss=0.05, softcap=2.0,
                                                               label_smoothing=0.1), (logits,))


@case("cross_entropy bf16 logits: loss and gradient vs torch in f32 within bf16 rounding")
def _():
    logits = (torch.randn(6, 50) * 4).bfloat16()
    target = torch.randint(0, 50, (6,))
    return compare(lambda x: nn.cross_entropy(x, target), lambda x: F.cross_entropy(x, target), [logits],
                   2e-2, 2e-2, "cross_entropy bf16", ref_dtype=torch.float32)


@case("cross_entropy every row ignored: mean is nan as torch's, sum 0, gradient 0")
def _():
    logits = torch.randn(2, 5, requires_grad=True)
    target = torch.full((2,), -100)
    assert torch.isnan(nn.cross_entropy(logits, target)) and torch.isnan(F.cross_entropy(logits, target))
    s = nn.cross_entropy(logits, target, reduction="sum")
    s.backward()
    assert s.item() == 0 and logits.grad.abs().max().item() == 0


@case("cross_entropy f64: gradcheck in the logits (mean, label smoothing, an ignored row)")
def _():
    logits = torch.randn(5, 11, dtype=F64, requires_grad=True)
    target = torch.tensor([0, 10, -100, 3, 3])
    assert torch.autograd.gradcheck(lambda x: nn.cross_entropy(x, target, label_smoothing=0.2), (logits,))
    assert torch.autograd.gradcheck(lambda x: nn.cross_entropy(x, target, reduction="none"), (logits,))


# ---- LLM shapes, on the GPU only ---------------------------------------------------

if DEV != "cpu":
    B16 = torch.bfloat16

    @case("GPU, LLM shapes, bf16 vs torch in f32: rms_norm (8192 x 4096), add_rms_norm (4096 x 8192), "
          "swiglu (8192 x 14336)")
    def _():
        x, r, w = torch.randn(8192, 4096, dtype=B16), torch.randn(8192, 4096, dtype=B16), torch.randn(4096, dtype=B16)
        compare(nn.rms_norm, ref_rms, [x, w], 2e-2, 5e-2, "rms_norm", ref_dtype=torch.float32)
        x, r, w = x.view(4096, 8192), r.view(4096, 8192), torch.randn(8192, dtype=B16)
        compare(nn.add_rms_norm, ref_add_rms, [x, r, w], 2e-2, 5e-2, "add_rms_norm", ref_dtype=torch.float32)
        a, b = torch.randn(8192, 14336, dtype=B16), torch.randn(8192, 14336, dtype=B16)
        compare(nn.swiglu, ref_swiglu, [a, b], 2e-2, 2e-2, "swiglu", ref_dtype=torch.float32)

    @case("GPU, LLM shapes, bf16 vs torch in f32: rope (2 x 32/8 heads x 4096 x 128), cross_entropy "
          "(4096 x 128256, label smoothing, ignored rows)")
    def _():
        q, k = torch.randn(2, 32, 4096, 128, dtype=B16), torch.randn(2, 8, 4096, 128, dtype=B16)
        cos, sin = tables(1, 4096, 128, B16)
        compare(lambda a, b: nn.rope(a, b, cos, sin), lambda a, b: ref_rope(a, b, cos.float(), sin.float()),
                [q, k], 2e-2, 2e-2, "rope", ref_dtype=torch.float32)
        logits, target = torch.randn(4096, 128256, dtype=B16) * 4, torch.randint(0, 128256, (4096,))
        target[::7] = -100
        compare(lambda a: nn.cross_entropy(a, target, label_smoothing=0.1),
                lambda a: F.cross_entropy(a, target, label_smoothing=0.1), [logits], 2e-2, 2e-2,
                "cross_entropy", ref_dtype=torch.float32)


# ---- the ops as torch custom ops ------------------------------------------------

@case("torch.library.opcheck of every blk_nn op (schema, fake function, autograd registration)")
def _():
    x, w, r = torch.randn(3, 16, requires_grad=True), torch.randn(16, requires_grad=True), torch.randn(3, 16)
    q, k = torch.randn(1, 2, 3, 8, requires_grad=True), torch.randn(1, 1, 3, 8, requires_grad=True)
    cos, sin = tables(1, 3, 8)
    logits, target = torch.randn(4, 10, requires_grad=True), torch.tensor([1, -100, 9, 0])
    ops = torch.ops.blk_nn
    rstd = ops.rms_norm_fwd(x, w, 1e-6, 0.0)[1]
    checks = [
        (ops.rms_norm_fwd, (x, w, 1e-6, 0.0)),
        (ops.add_rms_norm_fwd, (x, r, w, 1e-6, 1.0)),
        (ops.rms_norm_bwd, (torch.randn(3, 16), x.detach(), w.detach(), rstd.detach(), None, 0.0)),
        (ops.glu_fwd, (x, r, False)),
        (ops.glu_fwd, (x, r, True)),
        (ops.glu_bwd, (torch.randn(3, 16), x.detach(), r, True)),
        (ops.rope, (q, k, cos, sin, False, [], [])),
        (ops.rope, (q, k, cos, sin, True, [48, 8, 16, 1], [24, 8, 8, 1])),
        (ops.cross_entropy_loss, (logits, target, -100, 0.1, 0.0, 0.0)),
        (ops.cross_entropy_loss, (logits, target, -100, 0.0, 1e-3, 5.0)),
        (ops.cross_entropy_bwd, (logits.detach(), target, torch.rand(4), torch.randn(4), -100, 0.1, 1e-3, 5.0)),
    ]
    for op, args in checks:
        torch.library.opcheck(op, args)
    return f"{len(checks)} ops"


@case("bad calls: an integer tensor is a TypeError, mismatched shapes a ValueError, naming the op")
def _():
    for fn, exc, word in [(lambda: nn.rms_norm(torch.ones(2, 4, dtype=torch.int32), torch.ones(4)), TypeError,
                           "rms_norm"),
                          (lambda: nn.rms_norm(torch.ones(2, 4), torch.ones(5)), ValueError, "rms_norm"),
                          (lambda: nn.swiglu(torch.ones(3), torch.ones(4)), ValueError, "swiglu"),
                          (lambda: nn.rope(torch.ones(1, 2, 3, 5), torch.ones(1, 1, 3, 5), torch.ones(3, 5),
                                           torch.ones(3, 5)), ValueError, "odd"),
                          (lambda: nn.cross_entropy(torch.ones(2, 3), torch.zeros(2, dtype=torch.long),
                                                    reduction="avg"), ValueError, "reduction"),
                          (lambda: nn.cross_entropy(torch.ones(2, 3), torch.zeros(2, dtype=torch.long),
                                                    softcap=0.0), ValueError, "softcap")]:
        try:
            fn()
        except exc as e:
            assert word in str(e), str(e)
        else:
            raise AssertionError(f"no {exc.__name__} for {word}")


# ---- torch.compile ----------------------------------------------------------------

class Tiny(torch.nn.Module):
    """embedding, RoPE'd q/k, residual + RMSNorm, SwiGLU and GeGLU MLP, cross-entropy."""

    def __init__(self, vocab=32, dim=16, heads=2, kv_heads=1):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.q = torch.nn.Linear(dim, dim, bias=False)
        self.k = torch.nn.Linear(dim, dim // heads * kv_heads, bias=False)
        self.norm1, self.norm2 = nn.RMSNorm(dim), nn.RMSNorm(dim, gemma=True)
        self.gate, self.up = torch.nn.Linear(dim, 32, bias=False), torch.nn.Linear(dim, 32, bias=False)
        self.down, self.head = torch.nn.Linear(32, dim, bias=False), torch.nn.Linear(dim, vocab, bias=False)
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads

    def forward(self, tokens, target, cos, sin):
        b, s = tokens.shape
        x = self.emb(tokens)
        q = self.q(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k(x).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        q, k = nn.rope(q, k, cos, sin)
        attn = (q.mean(1) + k.mean(1)).reshape(b, s, self.hd).repeat(1, 1, self.heads)
        y, h = self.norm1(attn, x)
        y = self.down(nn.swiglu(self.gate(y), self.up(y)) + nn.geglu(self.up(y), self.gate(y)))
        logits = self.head(self.norm2(y + h)).view(b * s, -1)
        return nn.cross_entropy(logits, target.view(-1), label_smoothing=0.1)


why = torch_compile_works()
if why:
    print(f"skip torch.compile(fullgraph=True) of blk.nn ops: torch.compile does not run on this CPU ({why})")
else:
    @case("torch.compile(fullgraph=True) of a tiny model of every op: loss and gradients equal eager's")
    def _():
        torch.manual_seed(3)
        model = Tiny()
        tokens, target = torch.randint(0, 32, (2, 6)), torch.randint(0, 32, (2, 6))
        target[0, 0] = -100
        cos, sin = tables(1, 6, 8)
        eager = model(tokens, target, cos, sin)
        eager.backward()
        want = {n: p.grad.clone() for n, p in model.named_parameters()}
        model.zero_grad()
        torch._dynamo.reset()
        compiled = torch.compile(model, fullgraph=True)
        loss = compiled(tokens, target, cos, sin)
        loss.backward()
        close(loss, eager, TOL, TOL, "loss")
        for n, p in model.named_parameters():
            close(p.grad, want[n], 1e-4, 1e-5, f"grad of {n}")
        return f"loss {loss.item():.4f}, {len(want)} parameter gradients"

finish()
