"""tests/python/test_nn_norm.py: blk.nn.layer_norm (LayerNorm) and
blk.nn.embedding (stdlib/nn/layernorm.tile, embedding.tile) with real torch
on CPU tensors, so every kernel runs on the interpreter: forward and
backward against torch's F.layer_norm and F.embedding run in float64 (f32
within 1e-5, bf16 and f16 within their rounding, with test_nn.py's rule:
an error past the tolerance passes still where torch's own, run in the
low precision, is at least half as large), torch.autograd.gradcheck in
float64, torch.library.opcheck of the custom ops, torch.compile(
fullgraph=True) of a small module of both, odd sizes (rows not a power of
two, one row, a last dimension of 1, no tokens), padding_idx, indices out
of range. Without torch it prints one line and counts nothing.
BLK_NN_DEVICE=cuda runs the same on the GPU (f32 tolerances 1e-4) and adds
cases at LLM shapes (tests/gpu/python.sh)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import case, finish, close, torch_compile_works  # noqa: E402

try:
    import torch
except ImportError:
    print("skip tests/python/test_nn_norm.py: no torch in this python (blk.nn needs it)")
    finish()

import torch.nn.functional as F  # noqa: E402

import blk.nn as nn  # noqa: E402
from blk.nn import _kernels as K  # noqa: E402

DEV = os.environ.get("BLK_NN_DEVICE", "cpu")
torch.set_default_device(DEV)
torch.manual_seed(0)
F64, B16, F16 = torch.float64, torch.bfloat16, torch.float16
TOL = 1e-5 if DEV == "cpu" else 1e-4   # f32 rtol and atol



def run(fn, inputs, seed=1):
    """fn's output and the gradients of <output, r> (r random, fixed by
    seed) with respect to the inputs."""
    ins = [t.detach().clone().requires_grad_(True) for t in inputs]
    out = fn(*ins)
    g = torch.Generator(device="cpu").manual_seed(seed)
    r = torch.randn(out.shape, generator=g, device="cpu", dtype=F64).to(out.device)
    (out.to(F64) * r).sum().backward()
    return out.detach(), [t.grad for t in ins]


def compare(blk_fn, ref_fn, inputs, rtol, atol, what):
    """blk_fn against ref_fn run on the inputs in float64: the output and
    each input's gradient. A tensor off by more than rtol and atol passes
    still when its largest error is within twice that of ref_fn run on the
    inputs as they are (torch in their type)."""
    o1, g1 = run(blk_fn, inputs)
    o2, g2 = run(ref_fn, [t.to(F64) for t in inputs])
    lowp = inputs[0].dtype != F64 and (rtol > TOL or atol > TOL)
    o3, g3 = run(ref_fn, inputs) if lowp else (o2, g2)
    for name, got, want, theirs in [("output", o1, o2, o3)] + [
            (f"gradient of input {i}", a, b, c) for i, (a, b, c) in enumerate(zip(g1, g2, g3))]:
        assert got.dtype == theirs.dtype or not lowp, f"{what}: {name} of {got.dtype}, torch's {theirs.dtype}"
        err = (got.to(F64) - want).abs()
        if lowp and not bool((err <= atol + rtol * want.abs()).all()):
            if err.max().item() <= 2 * (theirs.to(F64) - want).abs().max().item():
                continue
        close(got, want, rtol, atol, f"{what}: {name}")
    return f"output and {len(g1)} gradients"


def ln(weight, bias):
    """(blk's, torch's) layer_norm of x with the given of weight and bias."""
    def pick(args, use_w, use_b):
        it = iter(args)
        return next(it), next(it) if use_w else None, next(it) if use_b else None
    return (lambda *a: nn.layer_norm(*pick(a, weight, bias), eps=1e-5),
            lambda *a: (lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b, 1e-5))(*pick(a, weight, bias)))


def ln_inputs(shape, weight, bias, dtype=torch.float32):
    n = shape[-1]
    ins = [torch.randn(shape) * 3 + 1]
    if weight:
        ins.append(torch.randn(n))
    if bias:
        ins.append(torch.randn(n))
    return [t.to(dtype) for t in ins]


# ---- LayerNorm ----------------------------------------------------------------

for shape, weight, bias in [((3, 5, 37), True, True), ((4, 64), True, False), ((6, 100), False, True),
                            ((5, 24), False, False), ((1, 48), True, True), ((7, 1), True, True),
                            ((23, 40), True, True)]:
    @case(f"layer_norm f32 {shape}, weight {weight}, bias {bias}: y, dx, dweight, dbias vs torch in f64")
    def _():
        fns = ln(weight, bias)
        return compare(*fns, ln_inputs(shape, weight, bias), TOL, TOL, "layer_norm")


for dtype, tol in ((B16, 2e-2), (F16, 4e-3)):
    @case(f"layer_norm {str(dtype)[6:]} (8, 96), weight and bias: vs torch in f64, within the dtype's rounding "
          f"({tol})")
    def _():
        return compare(*ln(True, True), ln_inputs((8, 96), True, True, dtype), tol, tol, "layer_norm lowp")


@case("layer_norm bf16 (37, 200) with 4 programs for 37 rows: dweight and dbias from f32 partial sums")
def _():
    return compare(*ln(True, True), ln_inputs((37, 200), True, True, B16), 2e-2, 2e-2, "layer_norm bf16 37")


@case("layer_norm mixed dtypes: bf16 x with float32 weight and bias: gradients in each input's dtype")
def _():
    x, w, b = torch.randn(4, 48).to(B16), torch.randn(48), torch.randn(48)
    o, g = run(lambda a, c, d: nn.layer_norm(a, c, d), [x, w, b])
    o2, g2 = run(lambda a, c, d: F.layer_norm(a, (48,), c, d), [x.to(F64), w.to(F64), b.to(F64)])
    assert o.dtype == B16 and [t.dtype for t in g] == [B16, torch.float32, torch.float32], [t.dtype for t in g]
    close(o, o2, 2e-2, 2e-2, "y")
    for i, (a, c) in enumerate(zip(g, g2)):
        close(a, c, 3e-2, 3e-2, f"gradient {i}")


@case("layer_norm saves mean and rstd: float32 per row for bf16 x, float64 for float64 x")
def _():
    for dtype, acc, tol in ((B16, torch.float32, 1e-5), (F64, F64, 1e-12)):
        x = (torch.randn(5, 33) * 2 + 3).to(dtype)
        y, mean, rstd = torch.ops.blk_nn.layer_norm_fwd(x, None, None, 1e-5)
        assert mean.dtype == acc and rstd.dtype == acc and mean.shape == (5,) and rstd.shape == (5,)
        var, mu = torch.var_mean(x.to(F64), -1, unbiased=False)
        close(mean, mu, tol, tol, "mean")
        close(rstd, torch.rsqrt(var + 1e-5), tol, tol, "rstd")


@case("layer_norm f64: gradcheck in x, weight and bias, each of weight and bias present or not")
def _():
    for weight, bias in ((True, True), (True, False), (False, True), (False, False)):
        ins = [t.requires_grad_() for t in ln_inputs((4, 19), weight, bias, F64)]
        assert torch.autograd.gradcheck(ln(weight, bias)[0], tuple(ins))
    return "4 combinations"


@case("layer_norm backward twice: bitwise the same dx, dweight, dbias (no atomics)")
def _():
    ins = ln_inputs((29, 72), True, True, B16)
    a, b = run(ln(True, True)[0], ins), run(ln(True, True)[0], ins)
    for u, v in zip(a[1], b[1]):
        assert torch.equal(u, v)


@case("layer_norm of no rows (0, 8): empty y, dweight and dbias zeros; a transposed (non-contiguous) x")
def _():
    x, w, b = (torch.randn(shape, requires_grad=True) for shape in ((0, 8), 8, 8))
    y = nn.layer_norm(x, w, b)
    assert y.shape == (0, 8)
    y.sum().backward()
    assert torch.equal(w.grad, torch.zeros(8)) and torch.equal(b.grad, torch.zeros(8))
    xt = torch.randn(12, 5).t()
    return compare(*ln(True, True), [xt, torch.randn(12), torch.randn(12)], TOL, TOL, "layer_norm transposed")


@case("LayerNorm module: weight ones, bias zeros, like torch.nn.LayerNorm (also without bias, without affine)")
def _():
    x = torch.randn(3, 2, 24)
    for kw in ({}, {"bias": False}, {"elementwise_affine": False}):
        m, t = nn.LayerNorm(24, **kw), torch.nn.LayerNorm(24, **kw)
        assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()], kw
        close(m(x), t(x), TOL, TOL, f"LayerNorm {kw}")
    m = nn.LayerNorm(24, eps=1e-3, dtype=F64)
    assert m.weight.dtype == F64 and m.eps == 1e-3


# ---- Embedding ---------------------------------------------------------------

def emb(indices, padding_idx=None):
    return (lambda w: nn.embedding(indices, w, padding_idx=padding_idx),
            lambda w: F.embedding(indices, w, padding_idx=padding_idx))


for idx_shape, vocab, dim, itype, pad in [((2, 3), 11, 6, torch.int64, None), ((4, 5), 7, 37, torch.int32, 0),
                                          ((2, 3, 4), 9, 1, torch.int64, -1), ((1,), 5, 8, torch.int32, None),
                                          ((3, 40), 6, 1500, torch.int64, 2)]:
    @case(f"embedding f32 indices {idx_shape} {str(itype)[6:]}, weight ({vocab}, {dim}), padding_idx {pad}: "
          f"output and dweight vs torch in f64")
    def _():
        idx = torch.randint(0, vocab, idx_shape, dtype=itype)
        idx.view(-1)[0] = (pad or 0) % vocab   # padding_idx among the indices
        return compare(*emb(idx, pad), [torch.randn(vocab, dim)], TOL, TOL, "embedding")


for dtype in (B16, F16):
    @case(f"embedding {str(dtype)[6:]}: a row named by 300 tokens: dweight summed in float32, rounded once")
    def _():
        idx = torch.randint(0, 4, (300,))
        idx[::3] = 2
        w = torch.randn(6, 40).to(dtype)
        dy = torch.randn(300, 40).to(dtype)
        dw = torch.ops.blk_nn.embedding_bwd(dy, idx, 6, -1)
        want = torch.zeros(6, 40, dtype=F64).index_add_(0, idx, dy.to(F64))
        assert dw.dtype == dtype
        # one rounding of a float32 sum: within half a unit of the last place (bf16 2^-8, f16 2^-11 relative)
        close(dw, want, 1.01 * 2.0 ** (-8 if dtype == B16 else -11), 1e-6, "dweight")
        return compare(*emb(idx), [w], 2e-2 if dtype == B16 else 4e-3, 1e-2, "embedding lowp")


@case("embedding f64: gradcheck in weight (repeated indices); with padding_idx (not the true gradient, as "
      "torch's) equal to torch's")
def _():
    idx = torch.tensor([[0, 3, 3], [1, 4, 0]])
    w = torch.randn(5, 7, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: nn.embedding(idx, t), (w,))
    compare(*emb(idx, 3), [w.detach()], 0, 0, "embedding f64 padding_idx")


@case("embedding of no tokens: shape (0, 2, dim), dweight zeros")
def _():
    w = torch.randn(4, 5, requires_grad=True)
    out = nn.embedding(torch.zeros(0, 2, dtype=torch.long), w)
    assert out.shape == (0, 2, 5)
    out.sum().backward()
    assert torch.equal(w.grad, torch.zeros(4, 5))


@case("embedding backward twice with many repeats: bitwise the same dweight (sorted, no atomics)")
def _():
    idx = torch.randint(0, 5, (257,), dtype=torch.int32)
    dy = torch.randn(257, 24)
    a = torch.ops.blk_nn.embedding_bwd(dy, idx, 5, 1)
    b = torch.ops.blk_nn.embedding_bwd(dy, idx, 5, 1)
    assert torch.equal(a, b) and not a[1].any()


@case("embedding indices out of range: an IndexError on CPU tensors (the GPU: rows of 0); the kernels "
      "never touch rows outside weight and dweight, the backward skips them")
def _():
    w = torch.randn(6, 10)
    idx = torch.tensor([2, -3, 6, 5, 1000, 2, -1])
    ok = (idx >= 0) & (idx < 6)
    if DEV == "cpu":
        try:
            nn.embedding(idx, w)
        except IndexError as e:
            assert "out of range" in str(e) and "6 embeddings" in str(e), str(e)
        else:
            raise AssertionError("no IndexError")
        # the kernel itself, as the GPU path runs it (the interpreter reports any access outside a tensor)
        out = torch.full((7, 10), 7.0)
        K.module("embedding").embedding_fwd[(7, 1)](idx, w, out, 7, 6, 10, I="i64", BLOCK_D=16)
    else:
        out = nn.embedding(idx, w)
    close(out, torch.where(ok[:, None], w[idx.clamp(0, 5)], 0.0), 0, 0, "rows out of range")
    dy = torch.randn(7, 10)
    dw = torch.ops.blk_nn.embedding_bwd(dy, idx, 6, 5)   # padding_idx 5: -1 is out of range, not padding
    keep = ok & (idx != 5)
    want = torch.zeros(6, 10).index_add_(0, idx[keep], dy[keep])
    close(dw, want, TOL, TOL, "dweight")


@case("bad calls: float indices or integer weight a TypeError, padding_idx out of range a ValueError, "
      "weight or bias of the wrong length a ValueError")
def _():
    for fn, exc, word in [(lambda: nn.embedding(torch.ones(3), torch.ones(4, 2)), TypeError, "indices"),
                          (lambda: nn.embedding(torch.ones(3, dtype=torch.long), torch.ones(4, 2, dtype=torch.long)),
                           TypeError, "embedding"),
                          (lambda: nn.embedding(torch.ones(3, dtype=torch.long), torch.ones(4, 2), padding_idx=4),
                           ValueError, "padding_idx"),
                          (lambda: nn.embedding(torch.ones(3, dtype=torch.long), torch.ones(4)), ValueError,
                           "weight"),
                          (lambda: nn.layer_norm(torch.ones(2, 4), torch.ones(5)), ValueError, "weight"),
                          (lambda: nn.layer_norm(torch.ones(2, 4), None, torch.ones(3)), ValueError, "bias"),
                          (lambda: nn.layer_norm(torch.ones(2, 4, dtype=torch.int32)), TypeError, "layer_norm")]:
        try:
            fn()
        except exc as e:
            assert word in str(e), str(e)
        else:
            raise AssertionError(f"no {exc.__name__} for {word}")


# ---- the ops as torch custom ops ------------------------------------------------

@case("torch.library.opcheck of layer_norm_fwd/bwd and embedding_fwd/bwd (schema, fake, autograd)")
def _():
    x, w, b = torch.randn(3, 16, requires_grad=True), torch.randn(16, requires_grad=True), torch.randn(16)
    ops = torch.ops.blk_nn
    _, mean, rstd = ops.layer_norm_fwd(x, w, b, 1e-5)
    dy = torch.randn(3, 16)
    table, idx = torch.randn(9, 12, requires_grad=True), torch.tensor([[1, 8, 1], [0, 3, 3]])
    checks = [
        (ops.layer_norm_fwd, (x, w, b, 1e-5)),
        (ops.layer_norm_fwd, (x, None, None, 1e-5)),
        (ops.layer_norm_fwd, (x, w, None, 1e-6)),
        (ops.layer_norm_bwd, (dy, x.detach(), w.detach(), b, mean.detach(), rstd.detach())),
        (ops.layer_norm_bwd, (dy, x.detach(), None, b, mean.detach(), rstd.detach())),
        (ops.embedding_fwd, (idx, table, -1)),
        (ops.embedding_fwd, (idx.int(), table, 3)),
        (ops.embedding_bwd, (torch.randn(2, 3, 12), idx, 9, 1)),
    ]
    for op, args in checks:
        torch.library.opcheck(op, args)
    return f"{len(checks)} calls"


class Tiny(torch.nn.Module):
    """embedding (padding_idx), LayerNorm, a linear layer, layer_norm
    without weight or bias, a sum."""

    def __init__(self, vocab=20, dim=12):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(vocab, dim))
        self.norm = nn.LayerNorm(dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, tokens):
        h = self.norm(nn.embedding(tokens, self.table, padding_idx=0))
        return (nn.layer_norm(self.proj(h) + h) * h).sum()


why = torch_compile_works()
if why:
    print(f"skip torch.compile(fullgraph=True) of layer_norm and embedding: torch.compile does not run on this "
          f"CPU ({why})")
else:
    @case("torch.compile(fullgraph=True) of a module of embedding and layer_norm: loss and gradients equal eager's")
    def _():
        torch.manual_seed(3)
        model = Tiny()
        tokens = torch.randint(0, 20, (2, 7))
        tokens[0, :2] = 0
        eager = model(tokens)
        eager.backward()
        want = {n: p.grad.clone() for n, p in model.named_parameters()}
        model.zero_grad()
        torch._dynamo.reset()
        loss = torch.compile(model, fullgraph=True)(tokens)
        loss.backward()
        close(loss, eager, TOL, TOL, "loss")
        for n, p in model.named_parameters():
            close(p.grad, want[n], 1e-4, 1e-5, f"grad of {n}")
        return f"loss {loss.item():.4f}, {len(want)} parameter gradients"


# ---- LLM shapes, on the GPU only ---------------------------------------------------

if DEV != "cpu":
    def compare32(blk_fn, ref_fn, inputs, rtol, atol, what):
        """test_nn.py's compare(..., ref_dtype=float32): blk in bf16 against
        torch in f32, passing also within twice torch's own error in bf16."""
        o1, g1 = run(blk_fn, inputs)
        o2, g2 = run(ref_fn, [t.float() for t in inputs])
        o3, g3 = run(ref_fn, inputs)
        for name, a, b, c in [("output", o1, o2, o3)] + [(f"gradient {i}", *t) for i, t in
                                                         enumerate(zip(g1, g2, g3))]:
            err = (a.to(F64) - b.to(F64)).abs()
            if not bool((err <= atol + rtol * b.to(F64).abs()).all()):
                if err.max().item() <= 2 * (c.to(F64) - b.to(F64)).abs().max().item():
                    continue
            close(a, b, rtol, atol, f"{what}: {name}")

    @case("GPU, LLM shapes, bf16 vs torch in f32: layer_norm (8192 x 4096, weight and bias), "
          "layer_norm (4096 x 8192, no bias)")
    def _():
        ins = ln_inputs((8192, 4096), True, True, B16)
        compare32(*ln(True, True), ins, 2e-2, 5e-2, "layer_norm 8192x4096")
        ins = ln_inputs((4096, 8192), True, False, B16)
        compare32(*ln(True, False), ins, 2e-2, 5e-2, "layer_norm 4096x8192")

    @case("GPU, LLM shapes, bf16 vs torch in f32: embedding of 8192 tokens (int64, int32) into 128256 x 4096, "
          "padding_idx; every row of a hot token")
    def _():
        w = torch.randn(128256, 4096, dtype=B16)
        idx = torch.randint(0, 128256, (4, 2048))
        idx[:, ::5] = 128000   # a row named by 1640 tokens
        idx[0, :8] = 7
        compare32(*emb(idx, 7), [w], 2e-2, 2e-2, "embedding 8192")
        compare32(*emb(idx.int()), [w], 2e-2, 2e-2, "embedding 8192 int32")
        dy = torch.randn(8192, 4096, dtype=B16)
        dw = torch.ops.blk_nn.embedding_bwd(dy, idx, 128256, -1)
        want = torch.zeros(128256, 4096, dtype=torch.float32).index_add_(0, idx.view(-1), dy.float())
        rows = idx.view(-1).unique()
        close(dw[rows], want[rows], 2 ** -8, 1e-3, "dweight rows named")
        assert not dw[torch.ones(128256, dtype=torch.bool).index_fill_(0, rows, False)].any()

finish()
