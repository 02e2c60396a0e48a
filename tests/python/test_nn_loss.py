"""tests/python/test_nn_loss.py: blk.nn's losses beyond cross_entropy --
linear_cross_entropy (chunked, the logits never whole), kl_div and jsd --
on CPU tensors (the interpreter) with real torch: forward and gradients
against float64 references written here from the formulas (f32 within
2e-5; bf16 and f16 within their rounding, or within twice the error of
torch itself in that dtype), torch.autograd.gradcheck in float64,
torch.library.opcheck of each custom op, and torch.compile(fullgraph=True).
BLK_NN_DEVICE=cuda runs the same on the GPU and adds the LLM shapes
(8192 x 4096 x 128256 linear cross-entropy in bf16 against torch in f32,
its peak memory against torch's unfused path, KL and JSD at 8192 x 128256),
and checks that nothing synchronizes with the host. Without torch it prints
one line and counts nothing."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import case, finish, close, torch_compile_works  # noqa: E402

try:
    import torch
except ImportError:
    print("skip tests/python/test_nn_loss.py: no torch in this python (blk.nn needs it)")
    finish()

import warnings  # noqa: E402

import torch.nn.functional as F  # noqa: E402

# F.kl_div warns that its "mean" will change; the reference uses it as it is today
warnings.filterwarnings("ignore", message="reduction: .mean. divides")

import blk.nn as nn  # noqa: E402
from blk.nn._linear_cross_entropy import chunk_rows_for  # noqa: E402

DEV = os.environ.get("BLK_NN_DEVICE", "cpu")
torch.set_default_device(DEV)
torch.manual_seed(0)
F64, B16 = torch.float64, torch.bfloat16
TOL = 2e-5 if DEV == "cpu" else 1e-4   # f32 against f64: rtol and atol



def grads(fn, inputs, needs, seed=1):
    """fn(*inputs) and the gradients of <output, r> (r random, fixed by
    seed) with respect to the inputs whose needs entry is true (None for
    the others)."""
    ins = [t.detach().clone().requires_grad_(bool(n)) if t is not None else None for t, n in zip(inputs, needs)]
    out = fn(*ins)
    g = torch.Generator(device="cpu").manual_seed(seed)
    r = torch.randn(out.shape, generator=g, device="cpu", dtype=F64).to(out.device)
    (out.to(F64) * r).sum().backward()
    return out.detach(), [t.grad if t is not None and n else None for t, n in zip(ins, needs)]


def rel(a, b):
    """||a - b|| / ||b|| in float32 (0 where both are 0)."""
    a, b = a.float(), b.float()
    d, n = (a - b).norm().item(), b.norm().item()
    return d / n if n else d


def compare(blk_fn, ref_fn, inputs, rtol, atol, what, needs=None, lowp_ok=False):
    """blk_fn on inputs against ref_fn on the inputs in float64: the output
    and the gradients of the inputs that need one (needs: all floating
    ones by default). lowp_ok: a tensor off by more than rtol and atol
    passes still when its largest error is within twice that of ref_fn
    on the inputs as they are (torch's own error in the inputs' dtype);
    and then each tensor's error, as a norm relative to the reference's,
    must be within 1e-2 or twice torch's (small gradients pass atol
    whatever their values: this catches a wrong scale)."""
    needs = needs or [t is not None and t.is_floating_point() for t in inputs]
    o1, g1 = grads(blk_fn, inputs, needs)
    wide = [t.to(F64) if t is not None and t.is_floating_point() else t for t in inputs]
    o2, g2 = grads(ref_fn, wide, needs)
    o3, g3 = grads(ref_fn, inputs, needs) if lowp_ok else (o2, g2)
    rows = [("output", o1, o2, o3, inputs[0].dtype)]
    rows += [(f"gradient {i}", a, b, c, inputs[i].dtype) for i, (a, b, c) in enumerate(zip(g1, g2, g3))
             if b is not None]
    for name, a, b, c, dtype in rows:
        assert a is not None, f"{what}: no {name}"
        assert a.dtype == dtype, f"{what}: {name} of dtype {a.dtype}, the input's {dtype}"
        err = (a.to(F64) - b).abs()
        if lowp_ok:
            r, r_torch = rel(a, b), rel(c, b)
            assert r <= max(1e-2, 2 * r_torch), f"{what}: {name}: relative error {r:.2e}, torch's {r_torch:.2e}"
        if lowp_ok and not bool((err <= atol + rtol * b.abs()).all()):
            if err.max().item() <= 2 * (c.to(F64) - b).abs().max().item():
                continue
        close(a, b, rtol, atol, f"{what}: {name}")
    return f"{sum(g is not None for g in g1)} gradients"


# ---- references, from the formulas ------------------------------------------------

def ref_ce(logits, target, ignore_index=-100, label_smoothing=0.0, z_loss=0.0, softcap=None, reduction="mean"):
    if softcap is not None:
        logits = softcap * torch.tanh(logits / softcap)
    keep = target != ignore_index
    lse = torch.logsumexp(logits, -1)
    safe = torch.where(keep, target, 0)
    xt = logits.gather(1, safe[:, None])[:, 0]
    rows = (1 - label_smoothing) * (lse - xt) + label_smoothing * (lse - logits.mean(-1)) + z_loss * lse ** 2
    rows = torch.where(keep, rows, 0.0)
    if reduction == "none":
        return rows
    return rows.sum() / (keep.sum() if reduction == "mean" else 1)


def ref_lce(x, w, target, b=None, chunk_rows=None, **kw):
    return ref_ce(x @ w.T + (b if b is not None else 0), target, **kw)


def ref_jsd(s, t, beta=0.5, labels=None, ignore_index=-100, temperature=1.0):
    lq, lp = F.log_softmax(s / temperature, -1), F.log_softmax(t / temperature, -1)
    q, p = lq.exp(), lp.exp()
    if beta == 0:
        rows = (p * (lp - lq)).sum(-1)
    elif beta == 1:
        rows = (q * (lq - lp)).sum(-1)
    else:
        lm = torch.logaddexp(lq + torch.log(torch.tensor(beta, dtype=lq.dtype)),
                             lp + torch.log(torch.tensor(1 - beta, dtype=lq.dtype)))   # log(beta q + (1-beta) p)
        rows = beta * (q * (lq - lm)).sum(-1) + (1 - beta) * (p * (lp - lm)).sum(-1)
    keep = labels != ignore_index if labels is not None else torch.ones_like(rows, dtype=torch.bool)
    return torch.where(keep, rows, 0.0).sum() / keep.sum()


def ref_kl(x, y, reduction="batchmean", log_target=False):
    pointwise = y.exp() * (y - x) if log_target else torch.xlogy(y, y) - y * x
    if reduction == "none":
        return pointwise
    s = pointwise.sum()
    return s / x.shape[0] if reduction == "batchmean" else s / x.numel() if reduction == "mean" else s


def lce_inputs(rows=7, hidden=64, vocab=200, dtype=torch.float32, bias=True, ignored=(2, 5)):
    x = torch.randn(rows, hidden, dtype=dtype)
    w = (torch.randn(vocab, hidden) / hidden ** 0.5 * 3).to(dtype)
    b = torch.randn(vocab, dtype=dtype) if bias else None
    t = torch.randint(0, vocab, (rows,))
    for i in ignored:
        t[i] = -100
    return x, w, t, b


# ---- linear cross-entropy ---------------------------------------------------------

@case("chunk_rows_for: chunk logits about the size of x (exact: or half the weight), a power of two "
      "(8192 x 4096 x 128256: 256 rows; exact 2048)")
def _():
    got = [chunk_rows_for(8192, 4096, 128256, True), chunk_rows_for(7, 64, 200, True),
           chunk_rows_for(1, 64, 200, True), chunk_rows_for(4096, 8192, 32000, True),
           chunk_rows_for(100, 4096, 1000, True)]
    assert got == [2048, 8, 1, 4096, 128], got
    fast = [chunk_rows_for(8192, 4096, 128256), chunk_rows_for(8192, 2048, 128256), chunk_rows_for(7, 64, 200),
            chunk_rows_for(1, 64, 200), chunk_rows_for(4096, 8192, 32000), chunk_rows_for(100, 4096, 1000)]
    assert fast == [256, 256, 2, 1, 1024, 128], fast
    return f"{got} {fast}"


for reduction in ("mean", "sum", "none"):
    for bias in (True, False):
        @case(f"linear_cross_entropy f32 7 x 64 x 200 {reduction}{', bias' if bias else ''}, 2 ignored rows, "
              f"chunk_rows default, 1, 3, 4, 7, 16: loss, dx, dweight{', dbias' if bias else ''} vs f64")
        def _():
            x, w, t, b = lce_inputs(bias=bias)
            for chunk in (None, 1, 3, 4, 7, 16):
                compare(lambda a, c, tt, d: nn.linear_cross_entropy(a, c, tt, d, reduction=reduction,
                                                                    chunk_rows=chunk),
                        lambda a, c, tt, d: ref_lce(a, c, tt, d, reduction=reduction),
                        [x, w, t, b], TOL, TOL, f"chunk_rows {chunk}")
            return "6 chunk sizes"


@case("linear_cross_entropy f32: label_smoothing 0.1, z_loss 1e-2, softcap 4.0, ignore_index 7, chunks 3 "
      "(mean, sum, none) vs f64")
def _():
    x, w, t, b = lce_inputs(ignored=())
    t[1], t[6] = 7, 7
    kw = dict(ignore_index=7, label_smoothing=0.1, z_loss=1e-2, softcap=4.0)
    for reduction in ("mean", "sum", "none"):
        compare(lambda a, c, tt, d: nn.linear_cross_entropy(a, c, tt, d, reduction=reduction, chunk_rows=3, **kw),
                lambda a, c, tt, d: ref_lce(a, c, tt, d, reduction=reduction, **kw), [x, w, t, b], TOL, TOL,
                f"options {reduction}")


@case("linear_cross_entropy (2, 5, 64) x: leading dimensions flattened, loss 'none' of shape (2, 5)")
def _():
    x, w = torch.randn(2, 5, 64), torch.randn(200, 64) * 0.3
    t = torch.randint(0, 200, (2, 5))
    got = nn.linear_cross_entropy(x, w, t, reduction="none", chunk_rows=4)
    assert got.shape == (2, 5), got.shape
    close(got, ref_lce(x.view(10, 64).double(), w.double(), t.view(10), reduction="none").view(2, 5), TOL, TOL,
          "3-d")


@case("linear_cross_entropy f64: gradcheck in x, weight and bias (mean with every option, chunks of 3; none)")
def _():
    x = torch.randn(5, 6, dtype=F64, requires_grad=True)
    w = torch.randn(11, 6, dtype=F64, requires_grad=True)
    b = torch.randn(11, dtype=F64, requires_grad=True)
    t = torch.tensor([0, 10, -100, 3, 3])
    assert torch.autograd.gradcheck(
        lambda a, c, d: nn.linear_cross_entropy(a, c, t, d, label_smoothing=0.2, z_loss=0.05, softcap=2.0,
                                                chunk_rows=3), (x, w, b))
    assert torch.autograd.gradcheck(
        lambda a, c, d: nn.linear_cross_entropy(a, c, t, d, reduction="none", chunk_rows=2), (x, w, b))
    assert torch.autograd.gradcheck(lambda a, c: nn.linear_cross_entropy(a, c, t, reduction="sum"), (x, w))


@case("linear_cross_entropy bf16 7 x 64 x 200 (chunks 1, 3, default) and f16: vs f64, within 2e-2 or twice "
      "torch's own error in that dtype; gradients in the inputs' dtypes")
def _():
    for dtype, chunks in ((B16, (1, 3, None)), (torch.float16, (3,))):
        x, w, t, b = lce_inputs(dtype=dtype)
        for chunk in chunks:
            compare(lambda a, c, tt, d: nn.linear_cross_entropy(a, c, tt, d, label_smoothing=0.1, chunk_rows=chunk),
                    lambda a, c, tt, d: ref_lce(a, c, tt, d, label_smoothing=0.1), [x, w, t, b], 2e-2, 2e-2,
                    f"{dtype} chunk_rows {chunk}", lowp_ok=True)


@case("linear_cross_entropy bf16: exact=True sums the weight's gradient over chunks in f32 (600 rows, chunks "
      "of 2: each adds 0.5 to an element bf16 would stop at 128; exact -450 and 150); the default sums in bf16 "
      "and stops there")
def _():
    x = torch.ones(600, 8, dtype=B16)
    t = torch.zeros(600, dtype=torch.long)
    # p = 1/4 a class: a row's dlogits (-0.75, 0.25, 0.25, 0.25), x's rows ones
    want = torch.tensor([-450.0, 150.0, 150.0, 150.0])[:, None].expand(4, 8)
    w = torch.zeros(4, 8, dtype=B16, requires_grad=True)
    nn.linear_cross_entropy(x, w, t, reduction="sum", chunk_rows=2, exact=True).backward()
    assert w.grad.dtype == B16
    close(w.grad, want, 0, 0, "dweight")
    w = torch.zeros(4, 8, dtype=B16, requires_grad=True)
    nn.linear_cross_entropy(x, w, t, reduction="sum", chunk_rows=2).backward()
    # each chunk adds 0.5 (-1.5): bf16's spacing passes 0.5 at 128, and 1.5 (rounded to 2 from 256) at 512
    assert w.grad.dtype == B16
    assert float(w.grad[1, 0]) == 128.0 and float(w.grad[0, 0]) == -512.0, w.grad[:, 0]


@case("linear_cross_entropy: the gradients made in the forward are scaled in place by the first backward; a "
      "second through the graph (retain_graph) makes them again from x and weight where they are still alive "
      "and unchanged: mean, sum, 3x then 0 then 2x, vs f64; else an error naming which")
def _():
    x, w, t, b = lce_inputs()
    for reduction in ("mean", "sum"):
        xr, wr, br = (v.clone().requires_grad_() for v in (x, w, b))
        loss = nn.linear_cross_entropy(xr, wr, t, br, chunk_rows=3, reduction=reduction)
        x64, w64, b64 = (v.double().requires_grad_() for v in (x, w, b))
        ref = ref_lce(x64, w64, t, b64, reduction=reduction)
        for k in (3.0, 0.0, 2.0):
            got = torch.autograd.grad(loss * k, (xr, wr, br), retain_graph=True)
            want = torch.autograd.grad(ref * k, (x64, w64, b64), retain_graph=True)
            for g, r, name in zip(got, want, ("dx", "dweight", "dbias")):
                close(g, r, TOL, TOL, f"{reduction} {name} times {k}")
    # a weight made for the call (autocast's copy) is not kept for a second backward: an error, not a guess
    wr = w.clone().requires_grad_()
    loss = nn.linear_cross_entropy(x, wr * 1.0, t, chunk_rows=3)
    loss.backward(retain_graph=True)
    try:
        loss.backward()
    except RuntimeError as e:
        assert "second backward" in str(e) and "the weight is gone" in str(e), e
    else:
        raise AssertionError("a second backward without its weight ran")
    # nor one changed in place since the forward
    wr = w.clone().requires_grad_()
    loss = nn.linear_cross_entropy(x, wr, t, chunk_rows=3)
    loss.backward(retain_graph=True)
    with torch.no_grad():
        wr.add_(1.0)
    try:
        loss.backward()
    except RuntimeError as e:
        assert "the weight is changed in place" in str(e), e
    else:
        raise AssertionError("a second backward with a changed weight ran")
    return "2 reductions x 3 backwards; a weight gone, a weight changed: errors"


@case("linear_cross_entropy: no grad mode gives the loss alone; a frozen weight and bias: dx alone (mean, none)")
def _():
    x, w, t, b = lce_inputs()
    with torch.no_grad():
        got = nn.linear_cross_entropy(x, w, t, b, chunk_rows=3)
    close(got, ref_lce(x.double(), w.double(), t, b.double()), TOL, TOL, "no_grad")
    xr = x.clone().requires_grad_()
    nn.linear_cross_entropy(xr, w, t, b, chunk_rows=3).backward()
    x64 = x.double().requires_grad_()
    ref_lce(x64, w.double(), t, b.double()).backward()
    close(xr.grad, x64.grad, TOL, TOL, "dx, weight frozen")
    xr.grad = None
    nn.linear_cross_entropy(xr, w, t, b, chunk_rows=3, reduction="none").sum().backward()
    close(xr.grad, x64.grad * (t != -100).sum(), TOL, TOL, "dx, weight frozen, none")
    # the op computes only the gradients asked for: an empty weight gradient, no f32 buffer for it
    out = torch.ops.blk_nn.linear_cross_entropy_fwd(x, w, t, b, -100, 0.0, 0.0, 0.0, "mean", 3, False, True, False,
                                                     False)
    assert [tuple(o.shape) for o in out] == [(), (7, 64), (0,), (0,)], [o.shape for o in out]
    close(out[1], x64.grad, TOL, TOL, "op's dx")


@case("linear_cross_entropy every row ignored: mean nan (as torch), gradients 0; sum 0")
def _():
    x, w = torch.randn(3, 8, requires_grad=True), torch.randn(5, 8, requires_grad=True)
    t = torch.full((3,), -100)
    loss = nn.linear_cross_entropy(x, w, t)
    assert torch.isnan(loss) and torch.isnan(F.cross_entropy(x @ w.T, t))
    loss.backward()
    assert x.grad.abs().max().item() == 0 and w.grad.abs().max().item() == 0
    assert nn.linear_cross_entropy(x, w, t, reduction="sum").item() == 0


@case("LinearCrossEntropy module: weight and bias of torch.nn.Linear's shapes, loss and gradients as the function")
def _():
    torch.manual_seed(5)
    m = nn.LinearCrossEntropy(64, 200, bias=True, label_smoothing=0.1, chunk_rows=3)
    assert m.weight.shape == (200, 64) and m.bias.shape == (200,)
    x, t = torch.randn(7, 64), torch.randint(0, 200, (7,))
    loss = m(x, t)
    loss.backward()
    w64 = m.weight.detach().double().requires_grad_()
    ref = ref_lce(x.double(), w64, t, m.bias.detach().double(), label_smoothing=0.1)
    ref.backward()
    close(loss, ref, TOL, TOL, "loss")
    close(m.weight.grad, w64.grad, TOL, TOL, "dweight")


# ---- KL divergence ----------------------------------------------------------------

for reduction in ("batchmean", "sum", "mean", "none"):
    for log_target in (False, True):
        @case(f"kl_div f32 {reduction}, log_target {log_target}, (3, 5, 37) and (4, 1500) (6 programs), targets with "
              f"zeros: loss, d input, d target vs torch's F.kl_div and f64")
        def _():
            for shape in ((3, 5, 37), (4, 1500)):
                x = F.log_softmax(torch.randn(shape) * 2, -1)
                y = F.softmax(torch.randn(shape) * 2, -1)
                if log_target:
                    y = y.log()
                else:
                    y.view(-1)[::7] = 0.0   # 0 log 0 is 0
                got = nn.kl_div(x, y, reduction=reduction, log_target=log_target)
                close(got, F.kl_div(x, y, reduction=reduction, log_target=log_target), TOL, TOL, "vs F.kl_div")
                # the target's gradient only where it is finite (log_target, or positive targets)
                yy = y if log_target else y.clamp(min=1e-3)
                compare(lambda a, c: nn.kl_div(a, c, reduction=reduction, log_target=log_target),
                        lambda a, c: ref_kl(a, c, reduction=reduction, log_target=log_target), [x, yy], TOL, TOL,
                        f"kl_div {shape}")
                compare(lambda a, c: nn.kl_div(a, c, reduction=reduction, log_target=log_target),
                        lambda a, c: ref_kl(a, c, reduction=reduction, log_target=log_target), [x, y], TOL, TOL,
                        f"kl_div {shape}, input only", needs=[True, False])


@case("kl_div f64: gradcheck in input and target (both reductions kinds, both target kinds)")
def _():
    x = F.log_softmax(torch.randn(4, 9, dtype=F64), -1).requires_grad_()
    y = F.softmax(torch.randn(4, 9, dtype=F64), -1).requires_grad_()
    for reduction in ("batchmean", "none"):
        assert torch.autograd.gradcheck(lambda a, c: nn.kl_div(a, c, reduction=reduction), (x, y))
        assert torch.autograd.gradcheck(lambda a, c: nn.kl_div(a, c.log(), reduction=reduction, log_target=True),
                                        (x, y))


@case("kl_div bf16 (6, 300): vs f64 within 2e-2 or twice torch's bf16 error; gradients bf16")
def _():
    x = F.log_softmax(torch.randn(6, 300), -1).to(B16)
    y = F.softmax(torch.randn(6, 300), -1).to(B16)
    for reduction in ("batchmean", "none"):
        compare(lambda a, c: nn.kl_div(a, c, reduction=reduction), lambda a, c: ref_kl(a, c, reduction=reduction),
                [x, y], 2e-2, 2e-2, f"kl_div bf16 {reduction}", lowp_ok=True)


# ---- JSD ----------------------------------------------------------------------

for beta in (0.0, 0.1, 0.5, 1.0):
    @case(f"jsd f32 beta {beta}, 7 x 200, temperatures 1 and 2, labels with 2 ignored rows and none, teacher "
          f"with and without grad: loss and gradients vs f64 from the formula")
    def _():
        s, t = torch.randn(7, 200) * 3, torch.randn(7, 200) * 3
        labels = torch.randint(0, 200, (7,))
        labels[[1, 4]] = -100
        for tau in (1.0, 2.0):
            for lab in (labels, None):
                for tg in (True, False):
                    compare(lambda a, c: nn.jsd(a, c, beta=beta, labels=lab, temperature=tau),
                            lambda a, c: ref_jsd(a, c, beta=beta, labels=lab, temperature=tau), [s, t], TOL, TOL,
                            f"tau {tau} labels {lab is not None} teacher grad {tg}", needs=[True, tg])
        return "8 variants"


@case("jsd f32 over 5000 classes (two 4096-wide chunks), logits of +-200 (whole classes underflowing in "
      "both), betas 0, 0.5, 1: finite, and vs f64 within 2e-5 relative and 2e-3 absolute")
def _():
    # logits near 200 hold log P to about 1.5e-5 (their f32 spacing), so P to 1.5e-5 relative; times
    # log-ratios of a few hundred, the gradient P (log P - log Q - L) is good to about 1e-3 in f32
    s, t = torch.randn(3, 5000) * 60, torch.randn(3, 5000) * 60
    for beta in (0.0, 0.5, 1.0):
        compare(lambda a, c: nn.jsd(a, c, beta=beta), lambda a, c: ref_jsd(a, c, beta=beta), [s, t], TOL, 2e-3,
                f"beta {beta}")
        ss, tt = s.clone().requires_grad_(), t.clone().requires_grad_()
        loss = nn.jsd(ss, tt, beta=beta)
        loss.backward()
        assert all(bool(v.isfinite().all()) for v in (loss, ss.grad, tt.grad)), f"beta {beta}: not finite"


@case("jsd with masked classes (logits -inf in both, as padded vocabularies): betas 0, 0.5, 1 equal the JSD over "
      "the other classes, gradient 0 there, nothing nan")
def _():
    s, t = torch.randn(4, 60) * 2, torch.randn(4, 60) * 2
    keep = torch.ones(60, dtype=torch.bool)
    keep[[0, 17, 59]] = False
    sm, tm = s.masked_fill(~keep, float("-inf")), t.masked_fill(~keep, float("-inf"))
    for beta in (0.0, 0.5, 1.0):
        a, c = sm.clone().requires_grad_(), tm.clone().requires_grad_()
        loss = nn.jsd(a, c, beta=beta)
        loss.backward()
        a2, c2 = s[:, keep].double().requires_grad_(), t[:, keep].double().requires_grad_()
        want = ref_jsd(a2, c2, beta=beta)
        want.backward()
        close(loss, want, TOL, TOL, f"beta {beta} loss")
        close(a.grad[:, keep], a2.grad, TOL, TOL, f"beta {beta} student gradient")
        close(c.grad[:, keep], c2.grad, TOL, TOL, f"beta {beta} teacher gradient")
        assert a.grad[:, ~keep].abs().max().item() == 0 and c.grad[:, ~keep].abs().max().item() == 0


@case("jsd beta 0 and 1 equal torch's KL of the softmaxes (F.kl_div, log_target); 0.5 is symmetric")
def _():
    s, t = torch.randn(5, 40), torch.randn(5, 40)
    ls, lt = F.log_softmax(s, -1), F.log_softmax(t, -1)
    close(nn.jsd(s, t, beta=0.0), F.kl_div(ls, lt, reduction="batchmean", log_target=True), TOL, TOL, "forward KL")
    close(nn.jsd(s, t, beta=1.0), F.kl_div(lt, ls, reduction="batchmean", log_target=True), TOL, TOL, "reverse KL")
    close(nn.jsd(s, t), nn.jsd(t, s), TOL, TOL, "symmetric")


@case("jsd f64: gradcheck in student and teacher logits (betas 0, 0.3, 1, temperature 1.5, an ignored row)")
def _():
    s = torch.randn(4, 13, dtype=F64, requires_grad=True)
    t = torch.randn(4, 13, dtype=F64, requires_grad=True)
    labels = torch.tensor([0, -100, 5, 12])
    for beta in (0.0, 0.3, 1.0):
        assert torch.autograd.gradcheck(lambda a, c: nn.jsd(a, c, beta=beta, labels=labels, temperature=1.5), (s, t))


@case("jsd bf16 (6, 300), betas 0, 0.5, 1: vs f64 within 2e-2 or twice torch's bf16 error; (2, 3, 300) logits "
      "flattened")
def _():
    s, t = (torch.randn(6, 300) * 3).to(B16), (torch.randn(6, 300) * 3).to(B16)
    for beta in (0.0, 0.5, 1.0):
        compare(lambda a, c: nn.jsd(a, c, beta=beta), lambda a, c: ref_jsd(a, c, beta=beta), [s, t], 2e-2, 2e-2,
                f"jsd bf16 beta {beta}", needs=[True, False], lowp_ok=True)
    close(nn.jsd(s.view(2, 3, 300), t.view(2, 3, 300)), nn.jsd(s, t), 0, 0, "3-d")


# ---- custom ops, bad calls, torch.compile --------------------------------------------

@case("torch.library.opcheck of linear_cross_entropy_fwd/_bwd, kl_div_fwd/_bwd, jsd_fwd")
def _():
    x, w, t, b = lce_inputs(rows=5, hidden=8, vocab=12, ignored=(1,))
    x.requires_grad_(), w.requires_grad_(), b.requires_grad_()
    ops = torch.ops.blk_nn
    kx = F.log_softmax(torch.randn(3, 10), -1).requires_grad_()
    ky = F.softmax(torch.randn(3, 10), -1)
    s, te = torch.randn(4, 10, requires_grad=True), torch.randn(4, 10, requires_grad=True)
    lab = torch.tensor([1, -100, 3, 4])
    checks = [
        (ops.linear_cross_entropy_fwd, (x, w, t, b, -100, 0.1, 1e-3, 5.0, "mean", 2, False, True, True, True)),
        (ops.linear_cross_entropy_fwd, (x, w, t, None, -100, 0.0, 0.0, 0.0, "sum", 0, True, True, True, False)),
        (ops.linear_cross_entropy_fwd, (x, w, t, b, -100, 0.0, 0.0, 0.0, "none", 3, False, True, True, True)),
        (ops.linear_cross_entropy_bwd, (torch.randn(5), x.detach(), w.detach(), t, b.detach(), -100, 0.0, 0.0,
                                        0.0, 2, False, True, True, True)),
        (ops.linear_cross_entropy_bwd, (torch.randn(5), x.detach(), w.detach(), t, None, -100, 0.0, 0.0,
                                        0.0, 4, True, True, False, False)),
        (ops.kl_div_fwd, (kx, ky, False, False)),
        (ops.kl_div_fwd, (kx, ky.log(), True, True)),
        (ops.kl_div_bwd, (torch.randn(3, 10), kx.detach(), ky, False, True, True)),
        (ops.jsd_fwd, (s, te, lab, -100, 0.5, 2.0, True)),
        (ops.jsd_fwd, (s, te.detach(), None, -100, 0.0, 1.0, False)),
        (ops.jsd_fwd, (s, te, None, -100, 1.0, 1.0, True)),
    ]
    for op, args in checks:
        torch.library.opcheck(op, args)
    return f"{len(checks)} calls"


@case("bad calls: ValueError naming the op (shapes, dtypes, reduction, softcap, chunk_rows, beta, temperature)")
def _():
    x, w, t = torch.ones(3, 4), torch.ones(5, 4), torch.zeros(3, dtype=torch.long)
    s = torch.ones(2, 5)
    for fn, word in [(lambda: nn.linear_cross_entropy(x, torch.ones(5, 3), t), "linear_cross_entropy"),
                     (lambda: nn.linear_cross_entropy(x, w.double(), t), "dtype"),
                     (lambda: nn.linear_cross_entropy(x, w, t, torch.ones(4)), "bias"),
                     (lambda: nn.linear_cross_entropy(x, w, t, reduction="avg"), "reduction"),
                     (lambda: nn.linear_cross_entropy(x, w, t, softcap=-1.0), "softcap"),
                     (lambda: nn.linear_cross_entropy(x, w, t, chunk_rows=0), "chunk_rows"),
                     (lambda: nn.kl_div(s, torch.ones(2, 4)), "kl_div"),
                     (lambda: nn.kl_div(s, s, reduction="avg"), "reduction"),
                     (lambda: nn.jsd(s, torch.ones(2, 4)), "jsd"),
                     (lambda: nn.jsd(s, s, beta=1.5), "beta"),
                     (lambda: nn.jsd(s, s, temperature=0.0), "temperature")]:
        try:
            fn()
        except ValueError as e:
            assert word in str(e), str(e)
        else:
            raise AssertionError(f"no ValueError for {word}")
    try:
        nn.kl_div(s.int(), s.int())
    except TypeError as e:
        assert "kl_div" in str(e), str(e)
    else:
        raise AssertionError("no TypeError for int tensors")


class Student(torch.nn.Module):
    """An embedding, a head with a fused linear cross-entropy, and a
    distillation term (JSD against a frozen teacher's logits, and KL)."""

    def __init__(self, vocab=40, dim=16):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.head = nn.LinearCrossEntropy(dim, vocab, bias=True, label_smoothing=0.1, chunk_rows=4)

    def forward(self, tokens, target, teacher_logits):
        h = self.emb(tokens).view(-1, self.emb.embedding_dim)
        ce = self.head(h, target.view(-1))
        logits = h @ self.head.weight.T
        js = nn.jsd(logits, teacher_logits, beta=0.3, labels=target.view(-1), temperature=2.0)
        kl = nn.kl_div(F.log_softmax(logits, -1), F.softmax(teacher_logits, -1))
        return ce + js + kl


why = torch_compile_works()
if why:
    print(f"skip torch.compile(fullgraph=True) of blk.nn losses: torch.compile does not run here ({why})")
else:
    @case("torch.compile(fullgraph=True): linear_cross_entropy module + jsd + kl_div, loss and gradients equal "
          "eager's")
    def _():
        torch.manual_seed(3)
        model = Student()
        tokens, target = torch.randint(0, 40, (2, 7)), torch.randint(0, 40, (2, 7))
        target[0, 2] = -100
        teacher = torch.randn(14, 40)
        eager = model(tokens, target, teacher)
        eager.backward()
        want = {n: p.grad.clone() for n, p in model.named_parameters()}
        model.zero_grad()
        torch._dynamo.reset()
        loss = torch.compile(model, fullgraph=True)(tokens, target, teacher)
        loss.backward()
        close(loss, eager, TOL, TOL, "loss")
        for n, p in model.named_parameters():
            close(p.grad, want[n], 1e-4, 1e-5, f"grad of {n}")
        return f"loss {loss.item():.4f}, {len(want)} parameter gradients"


# ---- LLM shapes, on the GPU only ---------------------------------------------------

if DEV != "cpu":
    def peak(fn):
        """fn()'s peak allocation above what was allocated before it (bytes)."""
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fn()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base

    @case("GPU, 8192 x 4096 x 128256 bf16 linear_cross_entropy (ignored rows, label smoothing) vs torch in f32: "
          "loss, dx, dweight")
    def _():
        x = torch.randn(8192, 4096, dtype=B16)
        w = (torch.randn(128256, 4096) * 0.02).to(B16)
        t = torch.randint(0, 128256, (8192,))
        t[::7] = -100

        def ref(a, c, tt):
            return F.cross_entropy((a @ c.T).float() if a.dtype == B16 else a @ c.T, tt, label_smoothing=0.1)
        o1, g1 = grads(lambda a, c: nn.linear_cross_entropy(a, c, t, label_smoothing=0.1), [x, w], [True, True])
        o2, g2 = grads(lambda a, c: ref(a, c, t), [x.float(), w.float()], [True, True])
        o3, g3 = grads(lambda a, c: ref(a, c, t), [x, w], [True, True])
        out = []
        for name, a, b, c in (("loss", o1, o2, o3), ("dx", g1[0], g2[0], g3[0]), ("dweight", g1[1], g2[1], g3[1])):
            # relative to the norm: the gradients are ~1e-6 an element, far under any absolute tolerance
            r, r_torch = rel(a, b), rel(c, b)
            assert a.dtype == B16, f"{name}: {a.dtype}"
            assert r <= max(1e-2, 2 * r_torch), f"{name}: relative error {r:.2e}, torch's in bf16 {r_torch:.2e}"
            out.append(f"{name} {r:.1e} (torch bf16 {r_torch:.1e})")
        return f"loss {o1.item():.4f} (torch f32 {o2.item():.4f}); relative errors " + ", ".join(out)

    @case("GPU, 8192 x 4096 x 128256 bf16: linear_cross_entropy's peak memory (forward and backward) below "
          "torch's unfused x @ w.T + F.cross_entropy")
    def _():
        x = torch.randn(8192, 4096, dtype=B16, requires_grad=True)
        w = (torch.randn(128256, 4096) * 0.02).to(B16).requires_grad_()
        t = torch.randint(0, 128256, (8192,))

        def fused():
            nn.linear_cross_entropy(x, w, t).backward()
            x.grad = w.grad = None

        def unfused():
            F.cross_entropy(x @ w.T, t).backward()
            x.grad = w.grad = None
        fused()   # the kernels compiled, the allocator warm
        a, b = peak(fused), peak(unfused)
        assert a < b, f"fused {a / 2**30:.2f} GiB, unfused {b / 2**30:.2f} GiB"
        return f"fused {a / 2**30:.2f} GiB, unfused {b / 2**30:.2f} GiB"

    @case("GPU, no host sync: linear_cross_entropy, jsd, kl_div forward and backward under "
          "torch.cuda.set_sync_debug_mode('error')")
    def _():
        x, w, t, b = lce_inputs(rows=512, hidden=256, vocab=4096)
        s, te = torch.randn(512, 4096, requires_grad=True), torch.randn(512, 4096)
        x.requires_grad_()
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            loss = nn.linear_cross_entropy(x, w, t, b, chunk_rows=100) + nn.jsd(s, te, labels=t) + nn.kl_div(
                F.log_softmax(s, -1), F.softmax(te, -1))
            loss.backward()
            (nn.linear_cross_entropy(x, w, t, b, reduction="none").sum()).backward()
        finally:
            torch.cuda.set_sync_debug_mode("default")

    @case("GPU, 8192 x 128256 bf16 vs torch in f32: kl_div (batchmean) and jsd (beta 0, 0.5, 1, ignored rows)")
    def _():
        s = (torch.randn(8192, 128256) * 4).to(B16)
        te = (torch.randn(8192, 128256) * 4).to(B16)
        labels = torch.randint(0, 128256, (8192,))
        labels[::5] = -100
        lx, ly = F.log_softmax(s.float(), -1).to(B16), F.softmax(te.float(), -1).to(B16)
        out = []
        for beta in (0.0, 0.5, 1.0):
            o1, g1 = grads(lambda a: nn.jsd(a, te, beta=beta, labels=labels), [s], [True])
            o2, g2 = grads(lambda a: ref_jsd(a, te.float(), beta=beta, labels=labels), [s.float()], [True])
            close(o1, o2, 1e-2, 1e-3, f"jsd beta {beta} loss")
            # the gradient's elements are ~1e-9: its error relative to the norm (bf16 rounds at 4e-3)
            r = rel(g1[0], g2[0])
            assert r <= 1e-2, f"jsd beta {beta} gradient: relative error {r:.2e}"
            out.append(f"jsd({beta}) {o1.item():.4f} (gradient {r:.1e})")
        o1, g1 = grads(lambda a: nn.kl_div(a, ly), [lx], [True])
        o2, g2 = grads(lambda a: F.kl_div(a, ly.float(), reduction="batchmean"), [lx.float()], [True])
        close(o1, o2, 1e-2, 1e-3, "kl_div loss")
        r = rel(g1[0], g2[0])
        assert r <= 1e-2, f"kl_div gradient: relative error {r:.2e}"
        return ", ".join(out + [f"kl {o1.item():.4f} (gradient {r:.1e})"])

finish()
