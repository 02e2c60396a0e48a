"""tests/python/test_nn_attention.py: blk.nn.attention (python/blk/nn/_attention.py,
stdlib/nn/attention.tile) with real torch on CPU tensors (the interpreter):
the output, the saved log-sum-exp and the gradients of q, k, v against
softmax attention computed in float64 from the formula (causal and not,
grouped-query and multi-query, sequence lengths that are no multiple of the
blocks, 1 included, head_dim 16 to 256, float16, bfloat16, float32, strided
inputs, a scale of one's own), the deterministic backward bit for bit twice
and the atomic one, torch.library.opcheck of both custom ops, the eager path
against the custom ops, bad calls, and torch.compile(fullgraph=True) of a
small attention block; sliding-window attention and the logit soft-cap
against float64 references too. BLK_NN_DEVICE=cuda runs the same cases on the GPU
and adds LLM shapes against torch's SDPA in bf16, a CUDA graph of the
forward and backward, and no host sync. Without torch it prints one line and
counts nothing.

No torch.autograd.gradcheck: the kernels take float16, bfloat16 and float32
(products in tf32) only, whose rounding swamps finite differences; the
gradients are checked against float64 autograd of the formula instead."""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import case, finish, torch_compile_works  # noqa: E402

try:
    import torch
except ImportError:
    print("skip tests/python/test_nn_attention.py: no torch in this python (blk.nn needs it)")
    finish()

import torch.nn.functional as F  # noqa: E402

import blk.nn as nn  # noqa: E402
from blk.nn import _attention as A  # noqa: E402

DEV = os.environ.get("BLK_NN_DEVICE", "cpu")
torch.set_default_device(DEV)
F64 = torch.float64
# max |got - want| / max |want| within these (float32: products in tf32)
TOL = {torch.float16: 4e-3, torch.bfloat16: 2.5e-2, torch.float32: 8e-3}


def reference(q, k, v, do, causal, scale, window=None, softcap=None):
    """o, lse and the gradients of <o, do> in float64, from the formula:
    key/value head h // (heads // kv_heads) for query head h; softcap:
    scores cap * tanh(s / cap); window: keys i - window < j <= i."""
    qd, kd, vd = (t.detach().to(F64).requires_grad_(True) for t in (q, k, v))
    g = q.shape[1] // k.shape[1]
    s = scale * (qd @ kd.repeat_interleave(g, 1).transpose(-1, -2))
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    n = q.shape[2]
    if causal or window:
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), -math.inf)
    if window:
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).triu(1 - window), -math.inf)
    o = s.softmax(-1) @ vd.repeat_interleave(g, 1)
    o.backward(do.to(F64))
    return o.detach(), s.detach().logsumexp(-1), qd.grad, kd.grad, vd.grad


def rel(got, want):
    return ((got.to(F64) - want).abs().max() / want.abs().max().clamp_min(1e-3)).item()


def inputs(b, h, hkv, n, d, dtype, seed=0, layout="bhnd"):
    """q, k, v and do; layout "bnhd": q, k, v views of (batch, seq, heads,
    dim) tensors, as a projection leaves them."""
    g = torch.Generator(device="cpu").manual_seed(seed)

    def make(heads):
        shape = (b, n, heads, d) if layout == "bnhd" else (b, heads, n, d)
        t = torch.randn(shape, generator=g, device="cpu").to(DEV, dtype)
        return t.transpose(1, 2) if layout == "bnhd" else t
    q, k, v = make(h), make(hkv), make(hkv)
    return q, k, v, torch.randn((b, h, n, d), generator=g, device="cpu").to(DEV, dtype)


def run(q, k, v, do, causal, scale=None, deterministic=True, window=None, softcap=None):
    """blk.nn.attention's output and gradients."""
    ins = [t.detach().clone().requires_grad_(True) for t in (q, k, v)]
    o = nn.attention(*ins, causal=causal, scale=scale, deterministic=deterministic, window=window, softcap=softcap)
    o.backward(do)
    return [o.detach()] + [t.grad for t in ins]


def check(got, want, dtype, what):
    names = ("o", "dq", "dk", "dv")
    errs = {nm: rel(a, b) for nm, a, b in zip(names, got, want)}
    bad = {nm: e for nm, e in errs.items() if not e <= TOL[dtype]}
    assert not bad, f"{what}: errors {errs} over {TOL[dtype]}"
    for nm, a, b in zip(names, got, want):
        assert a.shape == b.shape and a.dtype is dtype, f"{what}: {nm} {a.shape} {a.dtype}"
    return max(errs.values())


# (batch, heads, kv_heads, seq, head_dim, causal, dtype)
CASES = [(1, 2, 2, 70, 64, False, torch.float16),    # 70: a multiple of no block
         (1, 2, 2, 70, 64, True, torch.bfloat16),
         (2, 4, 2, 37, 32, True, torch.float16),     # grouped-query
         (1, 4, 1, 50, 16, False, torch.bfloat16),   # multi-query
         (1, 2, 2, 1, 16, True, torch.float16),      # one position
         (1, 2, 1, 33, 32, True, torch.float32),
         (2, 2, 2, 48, 16, False, torch.float32),
         (1, 2, 2, 64, 32, True, torch.bfloat16),    # whole blocks only
         (1, 2, 1, 20, 128, True, torch.bfloat16),
         (1, 1, 1, 17, 256, False, torch.float16)]
for b, h, hkv, n, d, causal, dt in CASES:
    @case(f"attention B{b} H{h}/{hkv} N{n} d{d} {str(dt)[6:]}{' causal' if causal else ''}: o, dq, dk, dv "
          f"against float64")
    def _(b=b, h=h, hkv=hkv, n=n, d=d, causal=causal, dt=dt):
        q, k, v, do = inputs(b, h, hkv, n, d, dt, seed=n + d)
        o, _, dq, dk, dv = reference(q, k, v, do, causal, 1 / math.sqrt(d))
        return f"max rel err {check(run(q, k, v, do, causal), [o, dq, dk, dv], dt, ''):.1e}"


# (batch, heads, kv_heads, seq, head_dim, window, softcap, dtype): the window
# narrower and wider than the blocks (forward 32 x 16, dK/dV 16 x 32, dQ 32 x 16)
OPTION_CASES = [(1, 2, 2, 70, 32, 5, None, torch.float16),
                (1, 4, 2, 67, 16, 20, None, torch.bfloat16),
                (2, 2, 1, 50, 32, 1, None, torch.float16),      # each query sees itself alone
                (1, 2, 2, 70, 64, 40, None, torch.float32),
                (1, 2, 2, 45, 32, None, 3.0, torch.float16),    # capped hard: scores of about 5
                (1, 4, 2, 61, 16, None, 10.0, torch.bfloat16),
                (1, 2, 1, 70, 32, 17, 2.5, torch.float16)]
for b, h, hkv, n, d, window, cap, dt in OPTION_CASES:
    @case(f"attention B{b} H{h}/{hkv} N{n} d{d} {str(dt)[6:]}"
          f"{f' window {window}' if window else ''}{f' softcap {cap}' if cap else ''}: against float64")
    def _(b=b, h=h, hkv=hkv, n=n, d=d, window=window, cap=cap, dt=dt):
        q, k, v, do = inputs(b, h, hkv, n, d, dt, seed=n + d + 1)
        q = q * 3 if cap else q      # scores past the cap, where tanh bends
        # causal is implied by a window; a softcap alone runs without it here
        o, _, dq, dk, dv = reference(q, k, v, do, window is not None, 1 / math.sqrt(d), window, cap)
        got = run(q, k, v, do, False, window=window, softcap=cap)
        err = check(got, [o, dq, dk, dv], dt, "")
        atomic = run(q, k, v, do, False, deterministic=False, window=window, softcap=cap)
        check(atomic, [o, dq, dk, dv], dt, "atomic dQ")
        return f"max rel err {err:.1e}"


@case("window and softcap change the result (a test that ignored them would fail)")
def _():
    q, k, v, do = inputs(1, 2, 2, 40, 16, torch.float16, seed=23)
    q = q * 3
    plain = run(q, k, v, do, True)[0]
    assert rel(run(q, k, v, do, True, window=4)[0], plain.to(F64)) > 0.05
    assert rel(run(q, k, v, do, True, softcap=2.0)[0], plain.to(F64)) > 0.05
    # a window past the sequence is the causal mask alone
    assert torch.equal(run(q, k, v, do, False, window=40)[0], plain)


@case("attention: strided q, k, v (views of (batch, seq, heads, dim)), a scale of its own")
def _():
    q, k, v, do = inputs(2, 4, 2, 45, 32, torch.float16, seed=5, layout="bnhd")
    assert not q.is_contiguous()
    o, lse, dq, dk, dv = reference(q, k, v, do, True, 0.3)
    got = run(q, k, v, do, True, scale=0.3)
    assert got[1].shape == q.shape
    return f"max rel err {check(got, [o, dq, dk, dv], torch.float16, 'strided'):.1e}"


@case("attention_fwd's log-sum-exp: float32 (batch, heads, seq), the natural log of the scaled scores' sum")
def _():
    for causal in (False, True):
        q, k, v, do = inputs(1, 4, 2, 40, 32, torch.float16, seed=7)
        o, lse = A.attention_fwd(q, k, v, causal, 0.2, True, 0, 0.0)
        want = reference(q, k, v, do, causal, 0.2)[1]
        assert lse.dtype is torch.float32 and lse.shape == (1, 4, 40), (lse.dtype, lse.shape)
        err = (lse.to(F64) - want).abs().max().item()
        assert err < 1e-3, f"lse off by {err}"
    return f"causal and not, within {err:.1e}"


@case("backward: deterministic twice gives the same bits; the atomic dQ is as close to float64")
def _():
    q, k, v, do = inputs(1, 4, 2, 67, 32, torch.bfloat16, seed=11)
    one, two = run(q, k, v, do, True), run(q, k, v, do, True)
    for a, b in zip(one, two):
        assert torch.equal(a, b), "two deterministic backwards differ"
    o, _, dq, dk, dv = reference(q, k, v, do, True, 1 / math.sqrt(32))
    err = check(run(q, k, v, do, True, deterministic=False), [o, dq, dk, dv], torch.bfloat16, "atomic")
    return f"atomic max rel err {err:.1e}"


@case("no gradient asked: the forward alone; under no_grad nothing is saved")
def _():
    q, k, v, do = inputs(1, 2, 2, 20, 16, torch.float16, seed=3)
    with torch.no_grad():
        o = nn.attention(q, k, v, causal=True)
    assert o.grad_fn is None
    want = reference(q, k, v, do, True, 0.25)[0]
    assert rel(o, want) <= TOL[torch.float16]


@case("torch.library.opcheck of blk_nn::attention_fwd and attention_bwd (schema, fake, autograd)")
def _():
    q, k, v, do = inputs(1, 4, 2, 24, 16, torch.float16, seed=13)
    qg, kg, vg = (t.clone().requires_grad_(True) for t in (q, k, v))
    o, lse = A.attention_fwd(q, k, v, True, 0.25, True, 0, 0.0)
    checks = [(A.attention_fwd, (qg, kg, vg, True, 0.25, True, 0, 0.0)),
              (A.attention_fwd, (q, k, v, False, 0.5, False, 0, 0.0)),
              (A.attention_bwd, (do, q, k, v, o, lse, True, 0.25, True, 0, 0.0)),
              (A.attention_bwd, (do, q, k, v, o, lse, True, 0.25, False, 0, 0.0))]
    ow, lw = A.attention_fwd(q, k, v, True, 0.25, True, 5, 20.0)
    checks += [(A.attention_fwd, (qg, kg, vg, True, 0.25, True, 5, 20.0)),
               (A.attention_bwd, (do, q, k, v, ow, lw, True, 0.25, True, 5, 20.0))]
    for op, args in checks:
        torch.library.opcheck(op, args)
    return f"{len(checks)} calls"


@case("the eager path (no dispatch) and the custom op give the same bits, forward and backward")
def _():
    q, k, v, do = inputs(1, 4, 2, 30, 32, torch.bfloat16, seed=17)
    got = run(q, k, v, do, True)
    ins = [t.clone().requires_grad_(True) for t in (q, k, v)]
    o = torch.ops.blk_nn.attention_fwd(*ins, True, 1 / math.sqrt(32), True, 0, 0.0)[0]
    o.backward(do)
    for a, b in zip(got, [o.detach()] + [t.grad for t in ins]):
        assert torch.equal(a, b)


@case("bad calls: head_dim, head counts, shapes, dtypes, scale: ValueError or TypeError naming attention")
def _():
    x = torch.ones(1, 2, 8, 16, dtype=torch.float16)
    bad = [(lambda: nn.attention(torch.ones(1, 2, 8, 48, dtype=torch.float16), torch.ones(1, 2, 8, 48,
                                 dtype=torch.float16), torch.ones(1, 2, 8, 48, dtype=torch.float16)),
            ValueError, "head_dim"),
           (lambda: nn.attention(torch.ones(1, 3, 8, 16, dtype=torch.float16), x, x), ValueError, "divide"),
           (lambda: nn.attention(x, torch.ones(1, 2, 9, 16, dtype=torch.float16), x), ValueError, "sequence"),
           (lambda: nn.attention(x[0], x, x), ValueError, "4-D"),
           (lambda: nn.attention(x.double(), x.double(), x.double()), TypeError, "float64"),
           (lambda: nn.attention(x, x.bfloat16(), x), TypeError, "one dtype"),
           (lambda: nn.attention(x, x, x, scale=-1.0), ValueError, "scale"),
           (lambda: nn.attention(x, x, x, window=0), ValueError, "window"),
           (lambda: nn.attention(x, x, x, softcap=0.0), ValueError, "softcap")]
    for fn, exc, word in bad:
        try:
            fn()
        except exc as e:
            assert "blk.nn.attention" in str(e) and word in str(e), str(e)
        else:
            raise AssertionError(f"no {exc.__name__} for {word}")
    return f"{len(bad)} calls"


@case("empty batch: an empty output, zero gradients")
def _():
    q = torch.ones(0, 2, 8, 16, dtype=torch.float16, requires_grad=True)
    o = nn.attention(q, q, q)
    o.sum().backward()
    assert o.shape == (0, 2, 8, 16) and q.grad.shape == q.shape


class Block(torch.nn.Module):
    """q, k, v projections (grouped-query), causal blk.nn.attention, an
    output projection."""

    def __init__(self, dim=64, heads=4, kv_heads=2, head_dim=16):
        super().__init__()
        self.q = torch.nn.Linear(dim, heads * head_dim, bias=False)
        self.kv = torch.nn.Linear(dim, 2 * kv_heads * head_dim, bias=False)
        self.o = torch.nn.Linear(heads * head_dim, dim, bias=False)
        self.h, self.hkv, self.hd = heads, kv_heads, head_dim

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.h, self.hd).transpose(1, 2).to(torch.float16)
        k, v = self.kv(x).view(b, s, 2, self.hkv, self.hd).unbind(2)
        att = nn.attention(q, k.transpose(1, 2).to(torch.float16), v.transpose(1, 2).to(torch.float16),
                           causal=True)
        return self.o(att.transpose(1, 2).reshape(b, s, -1).float()).square().mean()


why = torch_compile_works()
if why:
    print(f"skip torch.compile(fullgraph=True) of blk.nn.attention: torch.compile does not run here ({why})")
else:
    @case("torch.compile(fullgraph=True) of an attention block: loss and gradients equal eager's")
    def _():
        torch.manual_seed(3)
        model = Block()
        x = torch.randn(2, 21, 64)
        eager = model(x)
        eager.backward()
        want = {n: p.grad.clone() for n, p in model.named_parameters()}
        model.zero_grad()
        torch._dynamo.reset()
        loss = torch.compile(model, fullgraph=True)(x)
        loss.backward()
        torch.testing.assert_close(loss, eager, rtol=1e-5, atol=1e-6)
        for n, p in model.named_parameters():
            torch.testing.assert_close(p.grad, want[n], rtol=1e-4, atol=1e-6, msg=lambda m: f"grad of {n}: {m}")
        return f"loss {loss.item():.4f}, {len(want)} parameter gradients"


if DEV != "cpu":
    def sdpa_errors(q, k, v, do, causal):
        """torch's own SDPA in the inputs' dtype against float64: its errors."""
        ins = [t.detach().clone().requires_grad_(True) for t in (q, k, v)]
        o = F.scaled_dot_product_attention(*ins, is_causal=causal, enable_gqa=True)
        o.backward(do)
        return [o.detach()] + [t.grad for t in ins]

    for b, h, hkv, n, d, causal in [(2, 16, 16, 2048, 128, True), (2, 32, 8, 2048, 128, True),
                                    (2, 32, 8, 2048, 64, False), (1, 8, 2, 1000, 256, True)]:
        @case(f"LLM shape B{b} H{h}/{hkv} N{n} d{d}{' causal' if causal else ''} bf16: within twice torch "
              f"SDPA's error (float64 reference)")
        def _(b=b, h=h, hkv=hkv, n=n, d=d, causal=causal):
            q, k, v, do = inputs(b, h, hkv, n, d, torch.bfloat16, seed=1)
            o, _, dq, dk, dv = reference(q, k, v, do, causal, 1 / math.sqrt(d))
            want = [o, dq, dk, dv]
            got, ref = run(q, k, v, do, causal), sdpa_errors(q, k, v, do, causal)
            out = []
            for nm, a, t, w in zip(("o", "dq", "dk", "dv"), got, ref, want):
                ea, et = rel(a, w), rel(t, w)
                assert ea <= max(2 * et, 1e-2), f"{nm}: blk {ea:.2e}, torch {et:.2e}"
                out.append(f"{nm} {ea:.1e}/{et:.1e}")
            return ", ".join(out)

    @case("LLM shape B2 H32/8 N2048 d128 bf16, window 512 and softcap 50 (Gemma 2's): against float64")
    def _():
        q, k, v, do = inputs(2, 32, 8, 2048, 128, torch.bfloat16, seed=4)
        q = q * 4    # scores reaching the cap
        o, _, dq, dk, dv = reference(q, k, v, do, True, 1 / math.sqrt(128), 512, 50.0)
        got = run(q, k, v, do, True, window=512, softcap=50.0)
        return f"max rel err {check(got, [o, dq, dk, dv], torch.bfloat16, 'window, softcap'):.1e}"

    @case("CUDA graph: forward and backward captured and replayed, no host sync (sync debug mode 'error')")
    def _():
        q, k, v, do = inputs(2, 8, 2, 512, 64, torch.bfloat16, seed=2)
        qs, ks, vs = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):   # warm: compile and cache the kernels outside the capture
                nn.attention(qs, ks, vs, causal=True).backward(do)
        torch.cuda.current_stream().wait_stream(side)
        for t in (qs, ks, vs):
            t.grad = None
        graph = torch.cuda.CUDAGraph()
        torch.cuda.set_sync_debug_mode("error")
        try:
            with torch.cuda.graph(graph):
                out = nn.attention(qs, ks, vs, causal=True)
                out.backward(do)
        finally:
            torch.cuda.set_sync_debug_mode("default")
        with torch.no_grad():
            for t, src in zip((qs, ks, vs), inputs(2, 8, 2, 512, 64, torch.bfloat16, seed=9)[:3]):
                t.copy_(src)
        graph.replay()
        torch.cuda.synchronize()
        q2, k2, v2, _ = inputs(2, 8, 2, 512, 64, torch.bfloat16, seed=9)
        want = run(q2, k2, v2, do, True)
        for a, b in zip([out, qs.grad, ks.grad, vs.grad], want):
            assert torch.equal(a, b), "the replay differs from an eager run on the same inputs"

finish()
