"""rows_math.py: issue 31's rows (python3 bench/bench.py --only issue31).

The transcendental throughput table: one function over 2^28 f32 elements (pow and atan2 of two
vectors), out = f(x): blk's builtins (bench/kernels/transcendental.tile) against Triton's tl /
libdevice functions in the same kernel shape and torch's operation. Inputs in each function's
useful range (exp: [-10, 10]; pow: x in (0, 4], y in [-4, 4]). Checked against torch in float64
before timing (tolerance 1e-5 relative to the largest value; the f32 sequences are within a few
ulp).

GeGLU forward + backward (geglu_fwd_bwd), bf16 8192×14336 (an MLP's gate and up projections of
Llama-3-8B's intermediate size for 8192 tokens): out = gelu_tanh(gate) * up, then dgate and dup
from dout. blk: stdlib/nn/glu.tile's glu_fwd and glu_bwd (GELU = true), the kernels blk.nn.geglu
launches, through blkffi; Triton: _geglu_fwd_tt and _geglu_bwd_tt below, the same algorithm
(gelu_tanh(a) = a * sigmoid(2u), u = sqrt(2/pi) (a + 0.044715 a^3), f32 arithmetic, the
backward recomputing the activation); torch: autograd of F.gelu(gate, approximate="tanh") * up.
Each side's time is the forward and the backward one after the other; outputs and gradients
checked against float64 first (tolerance 1e-2).

The group also selects issue 14's bias + GELU row (bias_gelu, bf16 8192×8192, in rows_kernels.py):
ALSO below.

    python3 bench/rows_math.py            (no GPU, no torch: the GeGLU kernels on the interpreter)
    python3 bench/rows_math.py --triton   (no GPU: compiles the Triton peers for sm_90)
"""

import math
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

GROUP = "issue31"
ALSO = ["bias_gelu"]
FNS = ["exp", "tanh", "erf", "sigmoid", "gelu", "pow", "atan2"]
CONFIGS = [(1024, 4), (2048, 8), (4096, 8)]

try:
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice
except ImportError:  # selftest and the interpreter check import this file without Triton
    triton = None

if triton is not None:
    @triton.jit
    def _math1_tt(x_ptr, y_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        v = tl.load(x_ptr + offs, mask=mask, other=1.0)
        if FN == 0:
            r = tl.exp(v)
        elif FN == 1:
            r = libdevice.tanh(v)
        elif FN == 2:
            r = tl.math.erf(v)
        elif FN == 3:
            r = tl.sigmoid(v)
        elif FN == 4:
            r = 0.5 * v * (1.0 + libdevice.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
        elif FN == 5:
            r = libdevice.pow(v, tl.load(y_ptr + offs, mask=mask, other=1.0))
        else:
            r = libdevice.atan2(v, tl.load(y_ptr + offs, mask=mask, other=1.0))
        tl.store(out_ptr + offs, r, mask=mask)


    @triton.jit
    def _sigmoid_tt(v):
        e = tl.exp(-tl.abs(v))  # exp of a non-positive number only: no overflow
        return tl.where(v >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))

    @triton.jit
    def _geglu_fwd_tt(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        s = _sigmoid_tt(2.0 * 0.7978845608028654 * (a + 0.044715 * a * a * a))
        tl.store(out_ptr + offs, (a * s * b).to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def _geglu_bwd_tt(dout_ptr, a_ptr, b_ptr, da_ptr, db_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        g = tl.load(dout_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        k = 0.7978845608028654
        s = _sigmoid_tt(2.0 * k * (a + 0.044715 * a * a * a))
        df = s + a * 2.0 * s * (1.0 - s) * k * (1.0 + 0.134145 * a * a)
        tl.store(da_ptr + offs, (g * b * df).to(da_ptr.dtype.element_ty), mask=mask)
        tl.store(db_ptr + offs, (g * (a * s)).to(db_ptr.dtype.element_ty), mask=mask)


def row_math(env, b, fn, n=1 << 28):
    torch = env.torch
    F = torch.nn.functional
    torch.manual_seed(31)
    code = FNS.index(fn)
    lo, hi = {"exp": (-10, 10), "pow": (0.01, 4)}.get(fn, (-6, 6))
    x = torch.empty(n, device=env.dev).uniform_(lo, hi)
    y = torch.empty(n, device=env.dev).uniform_(-4, 4) if fn in ("pow", "atan2") else x
    xd, yd = x.double(), y.double()
    ref = {"exp": lambda: xd.exp(), "tanh": lambda: xd.tanh(), "erf": lambda: torch.erf(xd),
           "sigmoid": lambda: torch.sigmoid(xd), "gelu": lambda: F.gelu(xd, approximate="tanh"),
           "pow": lambda: xd.pow(yd), "atan2": lambda: torch.atan2(xd, yd)}[fn]()
    nbytes = n * 4 * (3 if fn in ("pow", "atan2") else 2)
    row = b.Row(f"{fn} f32", "2^28", nbytes)
    ob, ot = torch.empty_like(x), torch.empty_like(x)
    kern = b.bc.bench_kernel(env.ctx, "transcendental", "math1")

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    b.tune(env, row, "blk", CONFIGS,
           lambda c: kern.prepare([x.data_ptr(), y.data_ptr(), ob.data_ptr(), n], consts={"FN": code, "BLOCK": c[0]},
                                  num_warps=c[1], stream=env.stream), [ob], err(ob), 1e-5)
    b.tune(env, row, "Triton", CONFIGS,
           lambda c: (lambda: _math1_tt[(triton.cdiv(n, c[0]),)](x, y, ot, n, FN=code, BLOCK=c[0], num_warps=c[1])),
           [ot], err(ot), 1e-5)
    torch_fn = {"exp": lambda: torch.exp(x), "tanh": lambda: torch.tanh(x), "erf": lambda: torch.erf(x),
                "sigmoid": lambda: torch.sigmoid(x), "gelu": lambda: F.gelu(x, approximate="tanh"),
                "pow": lambda: torch.pow(x, y), "atan2": lambda: torch.atan2(x, y)}[fn]
    b.vendor(env, row, [(f"torch.{fn}", torch_fn)], [], err(None), 1e-5)
    return [row]


# ---- GeGLU forward + backward ----------------------------------------------------------

GLU_CONFIGS = [(1024, 4), (2048, 4), (2048, 8), (4096, 8)]  # (BLOCK, num_warps), both sides
_glu_kernels = {}


def blk_geglu(ctx, a, bb, out, dout, da, db, n, BLOCK, num_warps, T="bf16", stream=0):
    """The forward (a, bb -> out) then the backward (dout, a, bb -> da, db) of stdlib/nn/glu.tile
    with GELU: one callable launching both, as blk.nn.geglu's forward and backward do."""
    key = (id(ctx), "glu")
    if key not in _glu_kernels:
        _glu_kernels[key] = ctx.load("stdlib/nn/glu.tile")
    mod = _glu_kernels[key]
    fwd, bwd = mod.kernel("glu_fwd"), mod.kernel("glu_bwd")  # pointers *T: T is the const below
    consts = {"T": T, "C": "f32", "GELU": True, "BLOCK": BLOCK}
    first = fwd.prepare([a, bb, out, n], consts=consts, num_warps=num_warps, stream=stream)
    second = bwd.prepare([dout, a, bb, da, db, n], consts=consts, num_warps=num_warps, stream=stream)

    def run():
        first()
        second()
    return run


def row_geglu(env, b, M=8192, N=14336):
    torch = env.torch
    F = torch.nn.functional
    torch.manual_seed(31)
    n = M * N
    gate = torch.randn(M, N, device=env.dev).mul_(2).bfloat16()
    up = torch.randn(M, N, device=env.dev).bfloat16()
    dout = torch.randn(M, N, device=env.dev).bfloat16()
    gd, ud = gate.double().requires_grad_(True), up.double().requires_grad_(True)
    ref_out = F.gelu(gd, approximate="tanh") * ud
    ref_da, ref_db = torch.autograd.grad(ref_out, (gd, ud), dout.double())
    ref_out = ref_out.detach()
    del gd, ud
    row = b.Row("GeGLU fwd+bwd (tanh) bf16", f"{M}×{N}", 8 * n * 2)

    def outs():
        return [torch.empty_like(gate) for _ in range(3)]  # out, dgate, dup

    def err(res):
        out, da, db = res
        return max(b.max_rel_err(torch, out, ref_out), b.max_rel_err(torch, da, ref_da),
                   b.max_rel_err(torch, db, ref_db))

    ob, ot = outs(), outs()
    b.tune(env, row, "blk", GLU_CONFIGS,
           lambda c: blk_geglu(env.ctx, gate.data_ptr(), up.data_ptr(), ob[0].data_ptr(), dout.data_ptr(),
                               ob[1].data_ptr(), ob[2].data_ptr(), n, c[0], c[1], stream=env.stream),
           ob, lambda _: err(ob), 1e-2)

    def triton_run(c):
        grid = (triton.cdiv(n, c[0]),)

        def run():
            _geglu_fwd_tt[grid](gate, up, ot[0], n, BLOCK=c[0], num_warps=c[1])
            _geglu_bwd_tt[grid](dout, gate, up, ot[1], ot[2], n, BLOCK=c[0], num_warps=c[1])
        return run

    b.tune(env, row, "Triton", GLU_CONFIGS, triton_run, ot, lambda _: err(ot), 1e-2)
    gg, ug = gate.clone().requires_grad_(True), up.clone().requires_grad_(True)

    def torch_run():
        out = F.gelu(gg, approximate="tanh") * ug
        return (out.detach(),) + torch.autograd.grad(out, (gg, ug), dout)

    b.measure(env, row, "torch", torch_run, [], err, 1e-2)
    row.notes.append(f"(BLOCK, num_warps) {GLU_CONFIGS} tried on both sides; blk: stdlib/nn/glu.tile (blk.nn.geglu's "
                     "kernels), Triton: the same algorithm, torch: autograd of F.gelu(approximate='tanh') * up; the "
                     "forward then the backward; GB/s counts gate, up read twice, dout read, out, dgate, dup written")
    return [row]


ROWS = ([(f"math_{fn}", f"{fn} f32", "2^28", (lambda fn: lambda env, b: row_math(env, b, fn))(fn)) for fn in FNS]
        + [("geglu_fwd_bwd", "GeGLU fwd+bwd (tanh) bf16", "8192×14336", row_geglu)])


# ---- checks without a GPU ------------------------------------------------------------------

def _bf16_bits(f):
    u = struct.unpack("<I", struct.pack("<f", f))[0]
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def _bf16_val(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def interpreter_check():
    """The GeGLU launches of the row (blk_geglu) on the interpreter, bf16, 1000 elements in
    blocks of 256 (a masked tail), values to +-6, against the formula in Python. Returns
    [(name, error, tolerance)]."""
    import ctypes
    import blkffi
    blk = blkffi.Blk()
    ctx = blk.context(blkffi.BACKEND_INTERPRETER)
    rnd = random.Random(31)
    n = 1000
    data = [[_bf16_bits(rnd.uniform(-6, 6) if i == 0 else rnd.uniform(-2, 2)) for _ in range(n)] for i in range(3)]
    ptrs = []
    for values in data + [[0x7FC0] * n] * 3:  # gate, up, dout; out, da, db poisoned (bf16 NaN)
        raw = struct.pack(f"<{n}H", *values)
        p = ctx.malloc(len(raw))
        ctx.to_device(p, raw)
        ptrs.append(p)
    blk_geglu(ctx, ptrs[0], ptrs[1], ptrs[3], ptrs[2], ptrs[4], ptrs[5], n, 256, 4)()

    def read(p):
        buf = (ctypes.c_char * (2 * n))()
        ctx.from_device(buf, p)
        return [_bf16_val(v) for v in struct.unpack(f"<{n}H", bytes(buf))]

    got = [read(p) for p in ptrs[3:]]
    a, bv, g = ([_bf16_val(v) for v in d] for d in data)
    k = math.sqrt(2 / math.pi)
    want = [[], [], []]
    for x, y, d in zip(a, bv, g):
        t = math.tanh(k * (x + 0.044715 * x ** 3))
        f = 0.5 * x * (1 + t)
        df = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
        want[0].append(f * y)
        want[1].append(d * y * df)
        want[2].append(d * f)
    results = []
    for name, gv, wv in zip(("geglu out", "geglu dgate", "geglu dup"), got, want):
        scale = max(abs(v) for v in wv) or 1.0
        e = max((abs(u - v) / scale if u == u else math.inf) for u, v in zip(gv, wv))
        results.append((name, e, 1e-2))
    for p in ptrs:
        ctx.free(p)
    ctx.destroy()
    return results


def triton_compile_check():
    """The Triton peers of the GeGLU row compiled for sm_90 (no GPU; pip install triton) in
    every config, bf16 pointers. Returns the number that failed."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    target = GPUTarget("cuda", 90, 32)
    bad = 0
    for blk_, wp in GLU_CONFIGS:
        for fn, ptrs in ((_geglu_fwd_tt, ["a_ptr", "b_ptr", "out_ptr"]),
                         (_geglu_bwd_tt, ["dout_ptr", "a_ptr", "b_ptr", "da_ptr", "db_ptr"])):
            sig = dict({p: "*bf16" for p in ptrs}, n="i32", BLOCK="constexpr")
            attrs = {(fn.arg_names.index(p),): [["tt.divisibility", 16]] for p in ptrs + ["n"]}
            try:
                triton.compile(ASTSource(fn=fn, signature=sig, constexprs={"BLOCK": blk_}, attrs=attrs),
                               target=target, options={"num_warps": wp})
                print(f"ok   {fn.__name__} BLOCK {blk_} w{wp}", flush=True)
            except Exception as e:
                lines = [ln for ln in str(e).splitlines() if ln.strip()]
                print(f"FAIL {fn.__name__} BLOCK {blk_} w{wp}: {type(e).__name__}: {lines[-1][:300] if lines else ''}")
                bad += 1
    return bad


def main():
    import blk_calls
    return blk_calls.check_main("rows_math", interpreter_check, triton_compile_check, sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
