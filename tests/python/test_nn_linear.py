"""tests/python/test_nn_linear.py: blk.nn.linear (python/blk/nn/_linear.py,
stdlib/nn/linear.tile) with real torch on CPU tensors, so every kernel runs
on the interpreter: the forward and the gradients of x, weight, bias and
residual against the float64 formula through torch autograd, for shapes
that are multiples of no tile (the interpreter's tiles are 16 x 16 x 16:
blk.nn._linear.CPU_CONFIG), K under a tile, 1 x 1 x 1, each activation,
bias, residual and scale on and off, float32, bfloat16 and float16 inputs,
other output dtypes, the split-K kernel (CPU_CONFIG's SPLIT_K), the weight
gradient accumulated into a float32 buffer (accumulate_into), gradcheck
(float32, exact products on the interpreter), opcheck of the custom ops, and
torch.compile(fullgraph=True) of a tiny module. Without torch it prints one
line and counts nothing. BLK_NN_DEVICE=cuda runs the same cases on the GPU
(tests/gpu/python.sh) and adds Llama-3-8B's projections in bf16 against
torch."""

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import case, finish, close, torch_compile_works  # noqa: E402

try:
    import torch
except ImportError:
    print("skip tests/python/test_nn_linear.py: no torch in this python (blk.nn needs it)")
    finish()

import torch.nn.functional as F  # noqa: E402

import blk.nn as nn  # noqa: E402
from blk.nn import _linear as L  # noqa: E402

DEV = os.environ.get("BLK_NN_DEVICE", "cpu")
torch.set_default_device(DEV)
F64 = torch.float64
ACTS = {None: lambda z: z, "relu": torch.relu, "gelu": lambda z: F.gelu(z, approximate="tanh"), "silu": F.silu}
# max |error| / max |reference| allowed: f32 (exact products on the interpreter, tf32x3 on the GPU), and the
# 16-bit types (one rounding of the output, of g before the backward's GEMMs, and of the saved pre-activation)
TOL = {torch.float32: 1e-5 if DEV == "cpu" else 1e-4, torch.bfloat16: 2e-2, torch.float16: 4e-3}


def formula(x, w, b=None, act=None, r=None, scale=None):
    z = x @ w.t()
    if scale is not None:
        z = z * scale
    if b is not None:
        z = z + b
    h = ACTS[act](z)
    return h + r if r is not None else h


def rel(got, want):
    return ((got.double() - want.double()).abs().max() / want.double().abs().max().clamp(min=1e-30)).item()


def check(M, N, K, dt=torch.float32, act=None, bias=True, res=True, scale=None, lead=(), out_dtype=None,
          res_dtype=None, seed=0):
    """blk.nn.linear's output and gradients against the float64 formula;
    returns the largest relative error."""
    g = torch.Generator(device="cpu").manual_seed(seed)

    def rnd(*shape, s=1.0, dtype=dt):
        return (torch.randn(*shape, generator=g, device="cpu") * s).to(device=DEV, dtype=dtype)
    odt = out_dtype or dt
    ins = [rnd(*lead, M, K), rnd(N, K, s=K ** -0.5), rnd(N) if bias else None,
           rnd(*lead, M, N, dtype=res_dtype or odt) if res else None]
    dout = rnd(*lead, M, N, dtype=odt)
    mine = [t.clone().requires_grad_(True) if t is not None else None for t in ins]
    ref = [t.double().requires_grad_(True) if t is not None else None for t in ins]
    y = nn.linear(mine[0], mine[1], mine[2], act, mine[3], scale, out_dtype)
    yr = formula(ref[0], ref[1], ref[2], act, ref[3], scale)
    assert y.dtype == odt and y.shape == yr.shape, (y.dtype, y.shape, yr.shape)
    tol = max(TOL[dt], TOL.get(odt, 0))
    worst = rel(y, yr)
    assert worst <= tol, f"output: {worst:.2e} > {tol}"
    if M * N:
        y.backward(dout)
        yr.backward(dout.double())
        for name, a, b in zip(("x", "weight", "bias", "residual"), mine, ref):
            if a is None:
                continue
            assert a.grad is not None and a.grad.dtype == a.dtype, f"gradient of {name}: {a.grad}"
            e = rel(a.grad, b.grad) if K or name in ("bias", "residual") else a.grad.abs().max().item()
            assert e <= 2 * tol, f"gradient of {name}: {e:.2e} > {2 * tol}"
            worst = max(worst, e)
    return worst


@case("forward and gradients, f32, every activation, M N K multiples of no tile (37 x 29 x 45)")
def _():
    worst = max(check(37, 29, 45, act=a) for a in ACTS)
    return f"max rel err {worst:.1e}"


@case("bias, residual and scale each on and off, silu and relu, f32")
def _():
    worst = 0.0
    for bias in (False, True):
        for res in (False, True):
            for scale in (None, 0.125):
                for act in ("silu", "relu"):
                    worst = max(worst, check(19, 21, 23, act=act, bias=bias, res=res, scale=scale))
    return f"16 combinations, max rel err {worst:.1e}"


@case("bf16 and f16 inputs, every activation, leading dimensions flattened (2 x 3 x 11 rows)")
def _():
    worst = 0.0
    for dt in (torch.bfloat16, torch.float16):
        for act in ACTS:
            worst = max(worst, check(11, 40, 33, dt=dt, act=act, lead=(2, 3), scale=0.5))
    return f"max rel err {worst:.1e}"


@case("edge shapes: K under a tile (5), 1 x 1 x 1, one row, one column, K of one")
def _():
    worst = 0.0
    for (M, N, K) in ((9, 20, 5), (1, 1, 1), (1, 33, 18), (40, 1, 17), (7, 9, 1)):
        for act in (None, "gelu"):
            worst = max(worst, check(M, N, K, act=act))
    return f"max rel err {worst:.1e}"


@case("no rows: an empty output, gradients of zeros")
def _():
    x = torch.randn(0, 8, requires_grad=True)
    w = torch.randn(5, 8, requires_grad=True)
    b = torch.randn(5, requires_grad=True)
    y = nn.linear(x, w, b, "silu")
    assert y.shape == (0, 5)
    y.sum().backward()
    assert float(w.grad.abs().sum()) == 0 and float(b.grad.abs().sum()) == 0


@case("output dtypes: bf16 inputs to an f32 output, f32 to bf16; a residual of another dtype than the output")
def _():
    worst = check(13, 24, 31, dt=torch.bfloat16, act="silu", out_dtype=torch.float32)
    worst = max(worst, check(13, 24, 31, dt=torch.float32, act="gelu", out_dtype=torch.bfloat16))
    worst = max(worst, check(13, 24, 31, dt=torch.bfloat16, act="relu", res_dtype=torch.float32))
    return f"max rel err {worst:.1e}"


if DEV == "cpu":
    @case("the split-K kernel (SPLIT_K 3 and 4 on the interpreter; slices left empty by a short K)")
    def _():
        worst = 0.0
        try:
            for split in (3, 4):
                L.CPU_CONFIG["SPLIT_K"] = split
                for act in ACTS:
                    worst = max(worst, check(21, 37, 70, act=act, scale=2.0))
                worst = max(worst, check(5, 6, 20, dt=torch.bfloat16, act="silu"))   # 2 K steps, 3-4 slices
                # the counters are left zero: a second launch on the same tiles is right too
                worst = max(worst, check(21, 37, 70, act="relu", seed=1))
        finally:
            L.CPU_CONFIG["SPLIT_K"] = 1
        assert int(L._counters[torch.device("cpu")].abs().sum()) == 0, "counters left nonzero"
        return f"max rel err {worst:.1e}"


@case("the split-K workspace and counters cover every config of linear_splitk's @autotune list")
def _():
    import re
    with open(os.path.join(L.K.stdlib_dir(), "nn", "linear.tile")) as f:
        src = f.read()
    block = src[:src.index("kernel linear_splitk(")]
    block = block[block.rindex("@autotune("):]
    configs = [dict((k, int(v)) for k, v in re.findall(r"(\w+) = (\d+)", c)) for c in re.findall(r"\{([^}]*)\}", block)]
    assert len(configs) >= 4 and all("SPLIT_K" in c for c in configs), configs
    for M in (1, 16, 64, 65, 127, 129, 1000):
        for N in (1, 100, 4096):
            ws, cnt = L.splitk_buffers(M, N)
            for c in configs:
                need_ws = c["SPLIT_K"] * -(-M // c["BLOCK_M"]) * c["BLOCK_M"] * N if c["SPLIT_K"] > 1 else 0
                need_cnt = -(-M // c["BLOCK_M"]) * -(-N // c["BLOCK_N"])
                assert need_ws <= ws and need_cnt <= cnt, (M, N, c, ws, cnt)
    return f"{len(configs)} configs"


@case("accumulate_into: the weight's gradient added into a float32 buffer (beta = 1), weight.grad left None")
def _():
    for dt in (torch.float32, torch.bfloat16):
        for act in (None, "silu"):
            x = torch.randn(3, 10, 24).to(dt)
            w = (torch.randn(17, 24) / 5).to(dt).requires_grad_(True)
            b = torch.randn(17).to(dt).requires_grad_(True)
            buf = torch.randn(17, 24)
            start = buf.clone()
            xs = [x.clone().requires_grad_(True) for _ in range(2)]
            douts = [torch.randn(3, 10, 17).to(dt) for _ in range(2)]
            for xi, d in zip(xs, douts):
                nn.linear(xi, w, b, act, accumulate_into=buf).backward(d)
            assert w.grad is None, "weight.grad set"
            wd = w.detach().double().requires_grad_(True)
            for xi, d in zip(xs, douts):
                formula(xi.detach().double(), wd, b.detach().double(), act).backward(d.double())
            e = rel(buf - start, wd.grad)
            assert e <= 2 * TOL[dt], f"{dt} {act}: accumulated {e:.2e}"
            for xi, d in zip(xs, douts):   # dx as without the buffer
                xr = xi.detach().double().requires_grad_(True)
                formula(xr, w.detach().double(), b.detach().double(), act).backward(d.double())
                assert rel(xi.grad, xr.grad) <= 2 * TOL[dt]
    try:
        nn.linear(torch.randn(2, 4), torch.randn(3, 4), accumulate_into=torch.zeros(3, 4, dtype=F64))
    except ValueError as e:
        assert "accumulate_into" in str(e), str(e)
    else:
        raise AssertionError("a float64 buffer taken")


@case("only some inputs require gradients; no_grad saves nothing; Linear module as torch.nn.Linear + act")
def _():
    x, w, b = torch.randn(6, 12), torch.randn(10, 12, requires_grad=True), torch.randn(10)
    y = nn.linear(x, w, b, "gelu")
    y.sum().backward()
    wd = w.detach().double().requires_grad_(True)
    formula(x.double(), wd, b.double(), "gelu").sum().backward()
    assert rel(w.grad, wd.grad) <= 2e-5
    with torch.no_grad():
        y2 = nn.linear(x, w, b, "gelu")
    assert y2.grad_fn is None and torch.equal(y2, y.detach())
    torch.manual_seed(5)
    m = nn.Linear(12, 10, activation="silu")
    torch.manual_seed(5)
    t = torch.nn.Linear(12, 10)
    assert torch.equal(m.weight, t.weight) and torch.equal(m.bias, t.bias)
    r = torch.randn(6, 10)
    close(m(x, r), F.silu(t(x)) + r, 1e-5, 1e-5, "Linear")
    assert "activation='silu'" in repr(m)


@case("gradcheck (float32, exact products on the interpreter; finite differences of 1e-2) for gelu and silu")
def _():
    if DEV != "cpu":
        return "skipped on the GPU (tf32x3 products)"
    g = torch.Generator(device="cpu").manual_seed(7)
    warnings.filterwarnings("ignore", message="Input #", category=UserWarning)   # float32, not float64
    for act in ("gelu", "silu", None):
        ins = [torch.randn(*s, generator=g).requires_grad_(True) for s in ((2, 3, 5), (4, 5), (4,), (2, 3, 4))]
        assert torch.autograd.gradcheck(lambda x, w, b, r: nn.linear(x, w, b, act, r, 0.7), ins, eps=1e-2,
                                        atol=2e-3, rtol=2e-3)
    return "3 activations"


@case("bad calls: an unknown activation, mismatched shapes and dtypes")
def _():
    for fn, exc, word in [
            (lambda: nn.linear(torch.ones(2, 4), torch.ones(3, 4), activation="tanh"), ValueError, "activation"),
            (lambda: nn.linear(torch.ones(2, 4), torch.ones(3, 5)), ValueError, "weight"),
            (lambda: nn.linear(torch.ones(2, 4), torch.ones(3, 4, dtype=torch.bfloat16)), TypeError, "dtype"),
            (lambda: nn.linear(torch.ones(2, 4), torch.ones(3, 4), torch.ones(4)), ValueError, "bias"),
            (lambda: nn.linear(torch.ones(2, 4), torch.ones(3, 4), residual=torch.ones(2, 4)), ValueError,
             "residual"),
            (lambda: nn.linear(torch.ones(2, 4, dtype=F64), torch.ones(3, 4, dtype=F64)), TypeError, "float64")]:
        try:
            fn()
        except exc as e:
            assert word in str(e), str(e)
        else:
            raise AssertionError(f"no {exc.__name__} for {word}")


@case("torch.library.opcheck of linear_fwd, linear_bwd, linear_bwd_acc (schema, fake function, autograd)")
def _():
    x, w, b = torch.randn(5, 7, requires_grad=True), torch.randn(6, 7, requires_grad=True), torch.randn(6)
    r = torch.randn(5, 6)
    ops = torch.ops.blk_nn
    pre = ops.linear_fwd(x, w, b, None, None, 3, 1.0, None, True)[1].detach()
    checks = [(ops.linear_fwd, (x, w, b, r, None, 2, 0.5, None, True)),
              (ops.linear_fwd, (x, w, None, None, None, 0, 1.0, torch.bfloat16, False)),
              (ops.linear_bwd, (torch.randn(5, 6), x.detach(), w.detach(), pre, 3, 1.0, torch.float32, True, True)),
              (ops.linear_bwd_acc, (torch.randn(5, 6), x.detach(), w.detach(), pre, torch.zeros(6, 7), 3, 1.0, None,
                                    True))]
    for op, args in checks:
        torch.library.opcheck(op, args)
    return f"{len(checks)} calls"


@case("the eager path (no custom-op dispatch) and the custom op give the same bits")
def _():
    x, w, b, r = torch.randn(9, 20), torch.randn(11, 20), torch.randn(11), torch.randn(9, 11)
    a = nn.linear(x, w, b, "silu", r, 0.5)
    c = torch.ops.blk_nn.linear_fwd(x, w, b, r, None, 3, 0.5, None, False)[0]
    assert torch.equal(a, c)


why = torch_compile_works()
if why:
    print(f"skip torch.compile(fullgraph=True) of blk.nn.linear: torch.compile does not run on this CPU ({why})")
else:
    @case("torch.compile(fullgraph=True) of a tiny MLP of blk.nn.Linear: output and gradients equal eager's")
    def _():
        torch.manual_seed(3)
        up, down = nn.Linear(16, 24, activation="silu"), nn.Linear(24, 16, bias=False)
        buf = torch.zeros(16, 24)

        def mlp(x):
            h = up(x)
            return nn.linear(h, down.weight, None, None, x, 0.5, accumulate_into=buf)

        x = torch.randn(2, 5, 16, requires_grad=True)
        eager = mlp(x)
        eager.sum().backward()
        want = [x.grad.clone(), up.weight.grad.clone(), up.bias.grad.clone(), buf.clone()]
        x.grad = up.weight.grad = up.bias.grad = None
        buf.zero_()
        torch._dynamo.reset()
        y = torch.compile(mlp, fullgraph=True)(x)
        y.sum().backward()
        close(y, eager, 1e-6, 1e-6, "output")
        for name, got, w in zip(("x", "up.weight", "up.bias", "down's buffer"),
                                (x.grad, up.weight.grad, up.bias.grad, buf), want):
            close(got, w, 1e-6, 1e-6, f"gradient of {name}")
        assert down.weight.grad is None
        return "4 gradients"


# ---- LLM shapes, on the GPU only -------------------------------------------------

if DEV != "cpu":
    def llama(M, N, K, act, res, dt=torch.bfloat16, bias=False):
        """blk.nn.linear against torch (F.linear + activation, bf16, cuBLAS) and
        float32 torch, forward and backward: blk's error against float32 within
        twice torch's own, or 1e-2."""
        torch.manual_seed(30)
        x = torch.randn(M, K, dtype=dt)
        w = (torch.randn(N, K) / K ** 0.5).to(dt)
        b = torch.randn(N, dtype=dt) if bias else None
        r = torch.randn(M, N, dtype=dt) if res else None
        dout = torch.randn(M, N, dtype=dt)
        outs = {}
        for side in ("blk", "torch", "f32"):
            cast = (lambda t: t.float() if t is not None else None) if side == "f32" else (lambda t: t)
            xi, wi = cast(x).clone().requires_grad_(True), cast(w).clone().requires_grad_(True)
            bi = cast(b).clone().requires_grad_(True) if b is not None else None
            ri = cast(r)
            if side == "blk":
                y = nn.linear(xi, wi, bi, act, ri)
            else:
                y = formula(xi, wi, bi, act, ri)
            y.backward(cast(dout))
            outs[side] = [y.detach(), xi.grad, wi.grad] + ([bi.grad] if bi is not None else [])
        errs = []
        for got, tor, ref in zip(outs["blk"], outs["torch"], outs["f32"]):
            e, et = rel(got, ref), rel(tor, ref)
            assert e <= max(2 * et, 1e-2), f"blk {e:.2e}, torch {et:.2e}"
            errs.append(f"{e:.1e}/{et:.1e}")
        return "blk/torch rel err: " + " ".join(errs)

    @case("Llama-3-8B q/o projection 8192 x 4096 -> 4096, bf16, fwd and bwd against torch")
    def _():
        return llama(8192, 4096, 4096, None, False)

    @case("Llama-3-8B gate/up projection 8192 x 4096 -> 14336 with silu, bf16")
    def _():
        return llama(8192, 14336, 4096, "silu", False)

    @case("Llama-3-8B down projection 8192 x 14336 -> 4096 with the residual, bf16")
    def _():
        return llama(8192, 4096, 14336, None, True)

    @case("gelu and bias, 4096 x 4096 -> 11008; relu 1000 x 3000 -> 1234 (no multiple of a tile)")
    def _():
        return llama(4096, 11008, 4096, "gelu", True, bias=True) + "; " + llama(1000, 1234, 3000, "relu", True,
                                                                              bias=True)

    @case("few output tiles, a long K (the split-K kernel): 16 x 4096 -> 4096, 64 x 14336 -> 4096")
    def _():
        return llama(16, 4096, 4096, "silu", True) + "; " + llama(64, 4096, 14336, None, False, bias=True)

    @case("float32 on the GPU (tf32x3), 512 x 1024 -> 768 with gelu")
    def _():
        return llama(512, 768, 1024, "gelu", True, dt=torch.float32, bias=True)

    @case("no host sync in forward and backward (set_sync_debug_mode error), accumulate_into")
    def _():
        x = torch.randn(256, 512, dtype=torch.bfloat16, requires_grad=True)
        w = torch.randn(1024, 512, dtype=torch.bfloat16, requires_grad=True)
        buf = torch.zeros(1024, 512)
        nn.linear(x, w, None, "silu", accumulate_into=buf).sum().backward()   # compile and tune first
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            nn.linear(x, w, None, "silu", accumulate_into=buf).sum().backward()
        finally:
            torch.cuda.set_sync_debug_mode(0)
        torch.cuda.synchronize()

finish()
