"""tests/python/test_nn_paths.py: the paths of blk.nn's cross-entropy,
embedding and RoPE that their faster kernels opened, on CPU tensors (the
interpreter) with real torch, against float64 references written here:

- cross_entropy: the forward saves the logits and each row's logsumexp,
  the backward (cross_entropy_grad) scales by the incoming gradient: any
  grad_output (a scalar other than 1, an expanded one, one a row), every
  option together, retain_graph twice, double backward refused (an error,
  never a wrong answer), no zero-filled gradient for the lse output;
- embedding: the stable sort by counting (embedding_rank) against
  torch.sort (the same sorted indices, positions and run ends; the same
  gradient bit for bit), its i64 key, int32 indices, out-of-range
  indices, lengths not a multiple of its blocks;
- rope: the gradient in q's own layout whatever the incoming gradient's
  (contiguous (batch, heads, seq, dim), or Hugging Face's (batch, seq,
  heads, dim) seen transposed), and q, k read in place when not dense.

BLK_NN_DEVICE=cuda runs the same on the GPU and adds the LLM shapes.
Without torch it prints one line and counts nothing."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import case, finish, close  # noqa: E402

try:
    import torch
except ImportError:
    print("skip tests/python/test_nn_paths.py: no torch in this python (blk.nn needs it)")
    finish()

import torch.nn.functional as F  # noqa: E402

import blk.nn as nn  # noqa: E402
from blk.nn import _embedding  # noqa: E402
from blk.nn import _kernels as K  # noqa: E402

DEV = os.environ.get("BLK_NN_DEVICE", "cpu")
torch.set_default_device(DEV)
torch.manual_seed(0)
F64 = torch.float64
TOL = 2e-5 if DEV == "cpu" else 1e-4


# ---- cross-entropy -------------------------------------------------------------

def ref_ce_rows(x, target, ignore_index=-100, eps=0.0, z=0.0, cap=None):
    """Each row's loss in float64, from the formula (0 on ignored rows)."""
    x = x.to(F64)
    if cap:
        x = cap * torch.tanh(x / cap)
    lse = torch.logsumexp(x, dim=-1)
    keep = target != ignore_index
    t = torch.where(keep, target, 0)
    xt = x.gather(1, t[:, None])[:, 0]
    loss = (1 - eps) * (lse - xt) + eps * (lse - x.mean(-1)) + z * lse * lse
    return torch.where(keep, loss, torch.zeros_like(loss))


def ce_inputs(rows, n, dtype=torch.float32, ignore_index=-100, seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = (3 * torch.randn(rows, n, generator=g, dtype=F64, device="cpu")).to(dtype).to(DEV)
    t = torch.randint(0, n, (rows,), generator=g, device="cpu").to(DEV)
    t[1] = ignore_index
    return x, t


OPTIONS = [dict(), dict(label_smoothing=0.1), dict(z_loss=1e-2), dict(softcap=4.0),
           dict(label_smoothing=0.2, z_loss=1e-3, softcap=2.5, ignore_index=3)]

for opts in OPTIONS:
    for reduction, scale in (("mean", 2.5), ("sum", -0.75), ("none", None)):
        @case(f"cross_entropy {reduction} {opts or 'plain'}: grad_output {'random a row' if scale is None else scale} "
              f"vs float64 autograd")
        def _():
            ign = opts.get("ignore_index", -100)
            x, t = ce_inputs(6, 700, ignore_index=ign)
            kw = dict(opts)
            cap = kw.pop("softcap", None)
            x1 = x.clone().requires_grad_()
            out = nn.cross_entropy(x1, t, reduction=reduction, softcap=cap, **kw)
            x2 = x.to(F64).requires_grad_()
            rows = ref_ce_rows(x2, t, ign, kw.get("label_smoothing", 0.0), kw.get("z_loss", 0.0), cap)
            ref = rows if reduction == "none" else rows.sum() / (t != ign).sum() if reduction == "mean" else rows.sum()
            close(out.double(), ref.detach(), TOL, TOL, "loss")
            go = torch.randn(ref.shape, dtype=F64) if scale is None else torch.tensor(scale, dtype=F64)
            out.backward(go.to(out.dtype))
            ref.backward(go)
            close(x1.grad.double(), x2.grad, TOL, TOL, "dlogits")
            assert float(x1.grad[1].abs().max()) == 0.0, "an ignored row has a gradient"


@case("cross_entropy retain_graph: two backwards accumulate the same gradient twice")
def _():
    x, t = ce_inputs(5, 300)
    x = x.requires_grad_()
    loss = nn.cross_entropy(x, t, label_smoothing=0.1)
    loss.backward(retain_graph=True)
    once = x.grad.clone()
    loss.backward(torch.tensor(3.0))
    close(x.grad, 4 * once, 1e-6, 1e-7, "retained graph, grad_output 1 then 3")
    assert float(once.abs().max()) > 0


@case("cross_entropy none: grad_output a strided view (every other element) read in place")
def _():
    x, t = ce_inputs(5, 90)
    x1 = x.clone().requires_grad_()
    go = torch.randn(10)[::2]
    nn.cross_entropy(x1, t, reduction="none").backward(go)
    x2 = x.to(F64).requires_grad_()
    ref_ce_rows(x2, t).backward(go.double())
    close(x1.grad.double(), x2.grad, TOL, TOL, "dlogits")


@case("cross_entropy double backward: an error, not a wrong answer")
def _():
    x, t = ce_inputs(3, 40, dtype=F64)
    x = x.requires_grad_()
    (g,) = torch.autograd.grad(nn.cross_entropy(x, t), x, create_graph=True)
    try:
        torch.autograd.grad(g.sum(), x)
    except RuntimeError as e:
        assert "autograd" in str(e), str(e)
        return "refused"
    raise AssertionError("double backward of cross_entropy gave an answer")


@case("cross_entropy: the forward op returns (rows,) tensors only, saves the logits, makes no logits-sized tensor")
def _():
    x, t = ce_inputs(4, 50)
    x = x.requires_grad_()
    loss, lse = torch.ops.blk_nn.cross_entropy_loss(x, t, -100, 0.0, 0.0, 0.0)
    assert loss.shape == (4,) and lse.shape == (4,) and not lse.requires_grad
    close(lse[0].double(), torch.logsumexp(x[0].detach().double(), 0), TOL, TOL, "lse")
    assert float(lse[1]) == 0.0 and float(loss[1].detach()) == 0.0   # the ignored row
    # its backward with no gradient for lse: nothing materialized for it, dloss scaled
    (g,) = torch.autograd.grad(loss, x, torch.arange(4.0))
    ref = x.detach().double().softmax(-1) - F.one_hot(torch.where(t < 0, 0, t), 50).double()
    ref = ref * torch.arange(4.0, dtype=F64)[:, None]
    ref[1] = 0
    close(g.double(), ref, TOL, TOL, "dlogits")


@case("cross_entropy f16 and bf16, rows of 2 whole 4096-wide steps and a part, of whole steps only, of a part "
      "only: loss and gradient vs float64 within rounding")
def _():
    for dtype, tol, n in ((torch.float16, 4e-3, 2 * 4096 + 100), (torch.bfloat16, 2e-2, 2 * 4096),
                          (torch.bfloat16, 2e-2, 1024), (torch.float16, 4e-3, 1000)):
        x, t = ce_inputs(3, n, dtype=dtype)   # the kernel's row step: 4096, or the power of two above n
        x1 = x.clone().requires_grad_()
        loss = nn.cross_entropy(x1, t, reduction="sum", label_smoothing=0.05)
        x2 = x.to(F64).requires_grad_()
        ref = ref_ce_rows(x2, t, eps=0.05).sum()
        close(loss.double(), ref.detach(), tol, tol, f"loss {dtype}")
        loss.backward()
        ref.backward()
        close(x1.grad.double(), x2.grad, tol, tol * float(x2.grad.abs().max()), f"dlogits {dtype}")


@case("cross_entropy f64: gradcheck with every option, grad_output one a row (reduction none)")
def _():
    x, t = ce_inputs(4, 33, dtype=F64)
    x = x.requires_grad_()
    assert torch.autograd.gradcheck(lambda a: nn.cross_entropy(a, t, reduction="none", label_smoothing=0.1,
                                                                z_loss=0.02, softcap=3.0), (x,))


# ---- embedding -----------------------------------------------------------------

def sort_ref(flat, num_weights):
    key = torch.where((flat >= 0) & (flat < num_weights), flat, num_weights)
    ordered, perm = torch.sort(key, stable=True)
    return ordered, perm, torch.searchsorted(ordered, ordered, right=True)


for n, itype, key in ((1, torch.int64, "i32"), (17, torch.int64, "i32"), (300, torch.int32, "i32"),
                      (300, torch.int64, "i64"), (129, torch.int32, "i64")):
    @case(f"embedding_rank {n} {str(itype)[6:]} indices, {key} keys (repeats, out of range): "
          f"the stable sort torch.sort gives")
    def _():
        v = 40
        g = torch.Generator(device="cpu").manual_seed(n)
        flat = torch.randint(-3, v + 3, (n,), generator=g, device="cpu").to(itype).to(DEV)
        ordered = torch.empty_like(flat)
        perm = torch.empty(n, dtype=torch.int64)
        ends = torch.empty_like(perm)
        hit = torch.zeros(v, dtype=torch.int32)
        K.module("embedding").embedding_rank[(-(-n // 16),)](
            flat, ordered, perm, ends, hit, n, v, I=_embedding.INDEX_TYPES[itype], K=key, BLOCK_I=16,
            BLOCK_J=128, num_warps=8)
        want = sort_ref(flat.long(), v)
        named = torch.zeros(v, dtype=torch.int32)
        named[flat.long()[(flat >= 0) & (flat < v)]] = 1
        assert torch.equal(hit, named), (hit, named)
        assert torch.equal(ordered.long(), want[0]), (ordered, want[0])
        assert torch.equal(perm, want[1]), (perm, want[1])
        assert torch.equal(ends, want[2]), (ends, want[2])


@case("embedding backward: the counting sort (dweight written once, no zero fill) and torch.sort give the same "
      "dweight bit for bit, twice; rows no index names, and padding_idx's, are 0")
def _():
    g = torch.Generator(device="cpu").manual_seed(3)
    idx = torch.randint(0, 12, (5, 40), generator=g, device="cpu").to(DEV)   # many repeats: long runs
    idx[idx == 9] = 8   # row 9: no index names it
    w = torch.randn(14, 48).bfloat16()                          # rows 12, 13: neither
    dy = torch.randn(5, 40, 48).bfloat16()
    got = []
    old = _embedding.RANK_MAX
    try:
        for limit in (old, old, 0):   # counting, counting again, torch.sort
            _embedding.RANK_MAX = limit
            w1 = w.clone().requires_grad_()
            nn.embedding(idx, w1, padding_idx=4).backward(dy)
            got.append(w1.grad)
    finally:
        _embedding.RANK_MAX = old
    assert torch.equal(got[0], got[1]) and torch.equal(got[0], got[2]), "dweight differs"
    ref = torch.zeros(14, 48, dtype=F64).index_add_(0, idx.reshape(-1), dy.reshape(-1, 48).double())
    ref[4] = 0
    assert not bool(got[0][[4, 9, 12, 13]].any()), "a row no index names (or padding_idx) is not 0"
    close(got[0].double(), ref, 2e-2, 2e-2, "dweight")


@case("embedding_zero_rows: zeros in exactly the rows not hit and padding_idx's, the others untouched")
def _():
    v, dim = 21, 40   # 3 row blocks of 8, the last partial; 2 column blocks of 32
    hit = (torch.arange(v) % 3 == 0).to(torch.int32)
    dw = torch.full((v, dim), float("nan"), dtype=torch.bfloat16)
    K.module("embedding").embedding_zero_rows[(3, 2)](hit, dw, v, dim, 6, T="bf16", BLOCK_R=8, BLOCK_D=32,
                                                        num_warps=4)
    zero = (hit == 0) | (torch.arange(v) == 6)
    assert bool((dw[zero] == 0).all()), "a row to zero is not 0"
    assert bool(dw[~zero].isnan().all()), "a row hit was written"


# ---- rope ----------------------------------------------------------------------

def ref_rope(q, k, cos, sin):
    def rot(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)
    c, s = cos[:, None], sin[:, None]
    return q * c + rot(q) * s, k * c + rot(k) * s


def hf_qk(b, s, hq, hk, d, dtype=torch.float32):
    """q, k as Hugging Face makes them: (batch, seq, heads, dim) leaves seen
    as (batch, heads, seq, dim)."""
    ql = torch.randn(b, s, hq, d, dtype=dtype, requires_grad=True)
    kl = torch.randn(b, s, hk, d, dtype=dtype, requires_grad=True)
    return ql, kl


for layout in ("contiguous (batch, heads, seq, dim)", "(batch, seq, heads, dim) seen transposed"):
    @case(f"rope backward, incoming gradients {layout}: dq, dk vs torch, in q's and k's own layout")
    def _():
        b, s, hq, hk, d = 2, 5, 4, 2, 16
        ql, kl = hf_qk(b, s, hq, hk, d)
        cos = torch.randn(1, s, d)
        sin = torch.randn(1, s, d)
        oq, ok = nn.rope(ql.transpose(1, 2), kl.transpose(1, 2), cos, sin)
        assert oq.stride() == ql.transpose(1, 2).stride(), oq.stride()
        if layout.startswith("contiguous"):
            gq, gk = torch.randn(b, hq, s, d), torch.randn(b, hk, s, d)
        else:
            gq, gk = torch.randn(b, s, hq, d).transpose(1, 2), torch.randn(b, s, hk, d).transpose(1, 2)
        dq, dk = torch.autograd.grad((oq, ok), (ql, kl), (gq, gk))
        q2, k2 = ql.detach().double().requires_grad_(), kl.detach().double().requires_grad_()
        r = ref_rope(q2.transpose(1, 2), k2.transpose(1, 2), cos.double(), sin.double())
        close(oq.double(), r[0].detach(), TOL, TOL, "q out")
        wq, wk = torch.autograd.grad(r, (q2, k2), (gq.double(), gk.double()))
        close(dq.double(), wq, TOL, TOL, "dq")
        close(dk.double(), wk, TOL, TOL, "dk")
        # what autograd hands back to the transposed view: the leaf's layout, no copy
        assert dq.is_contiguous() and dk.is_contiguous(), (dq.stride(), dk.stride())


@case("rope: q and k slices of one fused qkv tensor (not dense) read in place; outputs and gradients vs torch")
def _():
    b, s, hq, hk, d = 1, 4, 4, 2, 8
    qkv = torch.randn(b, s, hq + 2 * hk, d, requires_grad=True)
    q = qkv[:, :, :hq].transpose(1, 2)
    k = qkv[:, :, hq:hq + hk].transpose(1, 2)
    cos, sin = torch.randn(s, d), torch.randn(s, d)
    oq, ok = nn.rope(q, k, cos, sin)
    g = torch.Generator(device="cpu").manual_seed(5)
    gq = torch.randn(oq.shape, generator=g, device="cpu").to(DEV)
    gk = torch.randn(ok.shape, generator=g, device="cpu").to(DEV)
    (dqkv,) = torch.autograd.grad((oq, ok), qkv, (gq, gk))
    x = qkv.detach().double().requires_grad_()
    r = ref_rope(x[:, :, :hq].transpose(1, 2), x[:, :, hq:hq + hk].transpose(1, 2), cos[None].double(),
                 sin[None].double())
    close(oq.double(), r[0].detach(), TOL, TOL, "q out")
    close(ok.double(), r[1].detach(), TOL, TOL, "k out")
    (want,) = torch.autograd.grad(r, x, (gq.double(), gk.double()))
    close(dqkv.double(), want, TOL, TOL, "dqkv")


@case("rope: bf16 and f16 q and k with float32 cos and sin (Llama under autocast): the float32 rotation rounded "
      "once to q's dtype, outputs and gradients vs float64; f16 cos with bf16 q is refused")
def _():
    b, s, hq, hk, d = 2, 5, 4, 2, 16
    f = torch.arange(s, dtype=F64, device=DEV)[:, None] * torch.linspace(0.01, 1.0, d // 2, dtype=F64, device=DEV)
    emb = torch.cat((f, f), -1)[None]
    cos, sin = emb.cos().float(), emb.sin().float()
    for dt in (torch.bfloat16, torch.float16):
        ql = torch.randn(b, s, hq, d, device=DEV).to(dt).requires_grad_()
        kl = torch.randn(b, s, hk, d, device=DEV).to(dt).requires_grad_()
        oq, ok = nn.rope(ql.transpose(1, 2), kl.transpose(1, 2), cos, sin)
        assert oq.dtype == ok.dtype == dt, (oq.dtype, ok.dtype)
        q2, k2 = ql.detach().double().requires_grad_(), kl.detach().double().requires_grad_()
        r = ref_rope(q2.transpose(1, 2), k2.transpose(1, 2), cos.double(), sin.double())
        # computed in f32 and rounded once: the f64 result rounded to dt, but for f32's own rounding
        for got, want in zip((oq, ok), r):
            assert ((got.double() - want.detach().to(dt).double()).abs()
                    <= 2 ** -20 * want.detach().abs().max()).all(), (got.double() - want.to(dt).double()).abs().max()
        gq, gk = torch.randn(oq.shape, device=DEV).to(dt), torch.randn(ok.shape, device=DEV).to(dt)
        dq, dk = torch.autograd.grad((oq, ok), (ql, kl), (gq, gk))
        wq, wk = torch.autograd.grad(r, (q2, k2), (gq.double(), gk.double()))
        close(dq.double(), wq, 1e-2, 1e-2, f"{dt} dq")
        close(dk.double(), wk, 1e-2, 1e-2, f"{dt} dk")
    q = torch.randn(1, 2, 3, 8, device=DEV).to(torch.bfloat16)
    try:
        nn.rope(q, q, cos[0, :3, :8].half(), sin[0, :3, :8].half())
    except ValueError as e:
        assert "float32 cos and sin with 16-bit q and k" in str(e), e
    else:
        raise AssertionError("f16 cos with bf16 q ran")


@case("rope f64: gradgradcheck (the backward is rope again, with output strides)")
def _():
    q = torch.randn(1, 3, 2, 8, dtype=F64).transpose(1, 2).detach().requires_grad_()   # HF's layout
    k = torch.randn(1, 1, 3, 8, dtype=F64, requires_grad=True)
    cos, sin = torch.randn(3, 8, dtype=F64), torch.randn(3, 8, dtype=F64)
    assert torch.autograd.gradgradcheck(lambda a, b: nn.rope(a, b, cos, sin), (q, k))


# ---- the LLM shapes, on the GPU ------------------------------------------------

if DEV != "cpu":
    @case("GPU LLM shapes: cross_entropy 8192 x 128256 bf16 (mean, grad_output 1 and 0.5), embedding 8192 into "
          "128256 x 4096, rope 2 x 32/8 x 4096 x 128 in HF layout, vs torch")
    def _():
        x = torch.randn(8192, 128256, dtype=torch.bfloat16)
        t = torch.randint(0, 128256, (8192,))
        t[::7] = -100
        for go in (1.0, 0.5):
            x1 = x.clone().requires_grad_()
            (nn.cross_entropy(x1, t) * go).backward()
            x2 = x.clone().requires_grad_()
            (F.cross_entropy(x2.float(), t) * go).backward()
            close(x1.grad.float(), x2.grad.float(), 2e-2, 2e-2 * float(x2.grad.abs().max()), f"dlogits go {go}")
        del x, x1, x2
        w = torch.randn(128256, 4096, dtype=torch.bfloat16, requires_grad=True)
        ids = torch.randint(0, 128256, (8192,))
        dy = torch.randn(8192, 4096, dtype=torch.bfloat16)
        nn.embedding(ids, w).backward(dy)
        g1 = w.grad.clone()
        w.grad = None
        nn.embedding(ids, w).backward(dy)
        assert torch.equal(g1, w.grad), "embedding gradient not bit-identical run to run"
        ref = torch.zeros(128256, 4096, dtype=torch.float32).index_add_(0, ids, dy.float())
        close(g1.float(), ref, 2e-2, 2e-2, "dweight")
        del w, g1, ref
        ql, kl = hf_qk(2, 4096, 32, 8, 128, torch.bfloat16)
        cos, sin = torch.randn(1, 4096, 128).bfloat16(), torch.randn(1, 4096, 128).bfloat16()
        oq, ok = nn.rope(ql.transpose(1, 2), kl.transpose(1, 2), cos, sin)
        gq, gk = torch.randn_like(oq, memory_format=torch.contiguous_format), torch.randn_like(ok)
        dq, dk = torch.autograd.grad((oq, ok), (ql, kl), (gq.contiguous(), gk.contiguous()))
        r = ref_rope(ql.transpose(1, 2).float(), kl.transpose(1, 2).float(), cos.float(), sin.float())
        close(oq.float(), r[0], 2e-2, 2e-2, "q out")
        wq, wk = torch.autograd.grad(r, (ql, kl), (gq.float(), gk.float()))
        close(dq.float(), wq.float(), 2e-2, 2e-2, "dq")
        close(dk.float(), wk.float(), 2e-2, 2e-2, "dk")

finish()
