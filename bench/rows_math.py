"""rows_math.py: issue 31's transcendental throughput table (python3 bench/bench.py --only issue31).

One function over 2^28 f32 elements (pow and atan2 of two vectors), out = f(x): blk's builtins
(bench/kernels/transcendental.tile) against Triton's tl / libdevice functions in the same kernel
shape and torch's operation. Inputs in each function's useful range (exp: [-10, 10]; pow: x in
(0, 4], y in [-4, 4]). Checked against torch in float64 before timing (tolerance 1e-5 relative
to the largest value; the f32 sequences are within a few ulp).
"""

GROUP = "issue31"
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


ROWS = [(f"math_{fn}", f"{fn} f32", "2^28", (lambda fn: lambda env, b: row_math(env, b, fn))(fn)) for fn in FNS]
