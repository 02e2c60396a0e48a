#!/usr/bin/env python3
"""bench.py: blk against Triton (and torch) on one GPU, in one run.

    bench/run                    (builds nothing; needs build/libblk.so)
    python3 bench/bench.py [--only vector,softmax] [--quick]

For each row: random inputs as torch tensors on the GPU; the examples/*.tile
kernel launched through libblk (ctypes, blkffi.py) on the same CUDA context
and stream as torch; the same computation as a Triton kernel
(triton_kernels.py); torch where it has the operation. Every output is
poisoned with NaN, computed once and checked against a torch reference in
float64 before anything is timed: a wrong result prints FAIL and that side is
not timed. Times are triton.testing.do_bench medians (warm-up 25 ms, 100 ms of
repetitions, L2 flushed before each run, CUDA events); GB/s counts the bytes
the computation must move (each input read once, each output written once).
The table is printed last, and written to $OUT/bench.md when $OUT is set.
Then a second table, "Runtime" (runtime_bench.py): launch overhead from C
against a raw cuLaunchKernel (bench/launch.c), compile time against Triton's
for softmax, layernorm and matmul, and the autotuning sweep of matmul against
Triton's autotuner over the same configs.
README.md beside this file says how to read them.
"""

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import blkffi  # noqa: E402  (checks the ctypes layout against blk.h's at import)
import blk_calls as bc  # noqa: E402
import runtime_bench  # noqa: E402

TIME_BUDGET_S = 7 * 60  # rows that would start after this are skipped (noted in the table)


class Env:
    """What every row needs: torch, triton, the Triton kernels, the blk context, timing settings."""

    def __init__(self, args):
        import torch
        import triton
        import triton.testing  # noqa: F401
        import triton_kernels
        self.torch, self.triton, self.tk = torch, triton, triton_kernels
        self.warmup, self.rep = (5, 20) if args.quick else (25, 100)
        self.quick = args.quick  # the issue-12 rows also try fewer configs
        torch.cuda.init()
        torch.empty(1, device="cuda")  # the primary context exists before blk retains it
        torch.cuda.synchronize()
        self.blk = blkffi.Blk()
        self.ctx = self.blk.context(blkffi.BACKEND_GPU, torch.cuda.current_device())
        # blk launches on torch's current stream (the default stream, 0, unless changed)
        self.stream = torch.cuda.current_stream().cuda_stream
        self.dev = "cuda"

    def do_bench(self, fn, quick=False):
        w, r = (5, 20) if quick else (self.warmup, self.rep)
        return self.triton.testing.do_bench(fn, warmup=w, rep=r, return_mode="median")


class Row:
    def __init__(self, kernel, size, nbytes=None, flop=None, section=None):
        self.kernel, self.size, self.nbytes = kernel, size, nbytes
        self.flop = flop  # a row with a flop count goes to the tensor-core table (TFLOP/s beside the ratios)
        # a rows file's SECTION: a table of its own, with its own sides and columns (see load_row_files)
        self.section = section
        sides = section.sides if section is not None else ("blk", "Triton", "torch")
        self.ms = {s: "—" for s in sides}  # a float, or "FAIL" / "ERROR" / "—"
        self.err = {}
        self.config = {}
        self.notes = []
        self.mem = {}  # side -> peak MiB allocated by a run, where a row measures it

    def ok(self, side):
        return isinstance(self.ms[side], float)

    def gbps(self, side):
        if not self.ok(side) or not self.nbytes:
            return "—"
        return f"{self.nbytes / (self.ms[side] * 1e6):.0f}"

    def ratio(self):
        if self.ok("blk") and self.ok("Triton"):
            return f"{self.ms['Triton'] / self.ms['blk']:.2f}"
        return "—"

    def cells(self):
        def ms(v):
            return f"{v:.4g}" if isinstance(v, float) else v
        return [self.kernel, self.size, ms(self.ms["blk"]), ms(self.ms["Triton"]), ms(self.ms["torch"]),
                self.gbps("blk"), self.gbps("Triton"), self.ratio()]

    def tflops(self, side):
        if not self.ok(side) or not self.flop:
            return "—"
        return f"{self.flop / (self.ms[side] * 1e9):.0f}"

    def tc_cells(self):
        def ms(v):
            return f"{v:.4g}" if isinstance(v, float) else v
        vendor = f"{self.ms['torch'] / self.ms['blk']:.2f}" if self.ok("blk") and self.ok("torch") else "—"
        return [self.kernel, self.size, ms(self.ms["blk"]), ms(self.ms["Triton"]), ms(self.ms["torch"]),
                self.tflops("blk"), self.tflops("Triton"), self.tflops("torch"), self.ratio(), vendor]


# ---- checking and timing -----------------------------------------------------

def max_rel_err(torch, out, ref):
    """max |out - ref| / max |ref|, in float64; inf when out has a NaN or an infinity."""
    out = out.to(torch.float64)
    ref = ref.to(torch.float64)
    if not bool(torch.isfinite(out).all()):
        return math.inf
    scale = ref.abs().max().item() or 1.0
    return (out - ref).abs_().max().item() / scale


def check_with_stats(torch, what, out, ref, stats):
    """A row's check: the output's max rel err; when that is within 1e-2, the saved
    f32 statistics (pairs of result and reference) are held to 1e-4, and a miss makes
    the error infinite (printed with `what`)."""
    def check(_):
        e = max_rel_err(torch, out, ref)
        if e <= 1e-2:
            e_stats = max(max_rel_err(torch, got, want) for got, want in stats)
            if not e_stats <= 1e-4:
                print(f"  {what} max rel err {e_stats:.3g} > 1e-4")
                return math.inf
        return e
    return check


def measure(env, row, side, run, outs, check, tol, time_it=True, quick=False, config=None):
    """Poisons `outs`, runs once, checks (check(result of run) -> error), then times.
    Records the time, "FAIL" or "ERROR" in row.ms[side]; returns True when it passed.
    With a `config` (a trial while tuning) an error is one line, not a traceback."""
    torch = env.torch
    label = f"{row.kernel} {row.size} [{side}]" + (f" config {config}" if config is not None else "")
    try:
        for o in outs:
            o.fill_(math.nan) if o.is_floating_point() else o.fill_(-1)
        res = run()
        torch.cuda.synchronize()
        err = check(res)
        row.err[side] = err
        if not err <= tol:  # NaN fails too
            print(f"  FAIL {label}: max rel err {err:.3g} > tol {tol:g}; not timed", flush=True)
            row.ms[side] = "FAIL"
            return False
        if not time_it:
            return True
        ms = env.do_bench(run, quick=quick)
        row.ms[side] = ms
        print(f"  {label}: {ms:.4g} ms{' (short trial)' if quick else ''}, max rel err {err:.2g}", flush=True)
        return True
    except Exception as e:
        row.ms[side] = "ERROR"
        if config is not None:
            lines = [ln for ln in str(e).splitlines() if ln.strip()]
            print(f"  ERROR {label}: {type(e).__name__}: {lines[0][:300] if lines else ''}", flush=True)
            return False
        print(f"  ERROR {label}:", flush=True)
        traceback.print_exc()
        sys.stderr.flush()
        return False


def tune(env, row, side, configs, make_run, outs, check, tol):
    """Tries each configuration (checked, then a short do_bench), keeps the fastest,
    and times it in full. make_run(config) -> callable."""
    best = None
    for cfg in configs:
        probe = Row(row.kernel, row.size)
        try:
            run = make_run(cfg)
        except Exception as e:
            print(f"  ERROR {row.kernel} [{side}] config {cfg}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            continue
        if measure(env, probe, side, run, outs, check, tol, quick=True, config=cfg):
            if best is None or probe.ms[side] < best[0]:
                best = (probe.ms[side], cfg, run)
    if best is None:
        row.ms[side] = "FAIL"
        return
    row.config[side] = best[1]
    measure(env, row, side, best[2], outs, check, tol)


def launch_time_ms(env, fn, n=1000, reps=7):
    """Median wall time a launch from Python: n launches in a row, then one synchronize.
    Also returns the median host time of the n calls alone (before the synchronize)."""
    torch = env.torch
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    walls, hosts = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        hosts.append((t1 - t0) / n)
        walls.append((t2 - t0) / n)
    return statistics.median(walls) * 1e3, statistics.median(hosts) * 1e3


def launch_host_ms(env, fn, batch=20, batches=300):
    """Median host time of a launch from Python with the GPU's launch queue kept short:
    `batches` batches of `batch` launches, each timed on the host (perf_counter around
    the batch alone), a synchronize between batches outside the timed part, so that no
    launch waits for room in the queue (as bench/launch.c times launches from C). A
    launch that costs less than the GPU takes to run a kernel would otherwise be timed
    at the GPU's rate once the queue fills."""
    torch = env.torch
    for _ in range(100):
        fn()
    times = []
    for _ in range(batches):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - t0) / batch)
    torch.cuda.synchronize()
    return statistics.median(times) * 1e3


# ---- the rows ------------------------------------------------------------------

def row_vector_add(env):
    torch, tk = env.torch, env.tk
    n = 1 << 28
    x = torch.randn(n, device=env.dev)
    y = torch.randn(n, device=env.dev)
    ref = x + y  # one correctly rounded f32 add: what every version must give
    row = Row("vector add fp32", "2^28", 3 * n * 4)
    ob, ot, op = (torch.empty_like(x) for _ in range(3))
    def err(o):
        return lambda _: max_rel_err(torch, o, ref)
    measure(env, row, "blk", bc.vector_add(env.ctx, x.data_ptr(), y.data_ptr(), ob.data_ptr(), n, stream=env.stream),
            [ob], err(ob), 1e-6)
    measure(env, row, "Triton", lambda: tk.vector_add(x, y, ot), [ot], err(ot), 1e-6)
    measure(env, row, "torch", lambda: torch.add(x, y, out=op), [op], err(op), 1e-6)
    return [row]


def row_sin4(env):
    torch, tk = env.torch, env.tk
    n = 1 << 28
    x = torch.randn(n, device=env.dev) * 2
    ref = x.double().sin_().sin_().sin_().sin_()
    row = Row("sin×4 fused fp32", "2^28", 2 * n * 4)
    ob, ot, op = (torch.empty_like(x) for _ in range(3))
    def err(o):
        return lambda _: max_rel_err(torch, o, ref)
    measure(env, row, "blk", bc.sin4(env.ctx, x.data_ptr(), ob.data_ptr(), n, stream=env.stream), [ob], err(ob), 1e-4)
    measure(env, row, "Triton", lambda: tk.sin4(x, ot), [ot], err(ot), 1e-4)
    measure(env, row, "torch", lambda: torch.sin(torch.sin(torch.sin(torch.sin(x))), out=op), [op], err(op), 1e-4)
    row.notes.append("torch: four unfused kernels")
    return [row]


def row_softmax(env, M, N):
    torch, tk = env.torch, env.tk
    x = torch.randn(M, N, device=env.dev)
    ref = torch.softmax(x.double(), dim=-1)
    row = Row("softmax fp32", f"{M}×{N}", 2 * M * N * 4)
    ob, ot = torch.empty_like(x), torch.empty_like(x)
    def err(o):
        return lambda res: max_rel_err(torch, res if o is None else o, ref)
    measure(env, row, "blk", bc.softmax(env.ctx, x.data_ptr(), ob.data_ptr(), M, N, stream=env.stream), [ob],
            err(ob), 1e-5)
    measure(env, row, "Triton", lambda: tk.softmax(x, ot), [ot], err(ot), 1e-5)
    measure(env, row, "torch", lambda: torch.softmax(x, dim=-1), [], err(None), 1e-5)
    block = bc.next_power_of_2(N)
    row.config["both"] = {"BLOCK": block, "num_warps": bc.softmax_warps(block)}
    return [row]


def row_layernorm(env):
    torch, tk = env.torch, env.tk
    F = torch.nn.functional
    M = N = 8192
    eps = 1e-5
    x = torch.randn(M, N, device=env.dev).half()
    w = (torch.rand(N, device=env.dev) + 0.5).half()
    b = (torch.rand(N, device=env.dev) - 0.5).half()
    xd = x.double()
    ref_mean = xd.mean(dim=1)
    ref_rstd = 1.0 / torch.sqrt(xd.var(dim=1, unbiased=False) + eps)
    ref_y = (xd - ref_mean[:, None]) * ref_rstd[:, None] * w.double() + b.double()
    del xd
    row = Row("layernorm fwd fp16", f"{M}×{N}", 2 * M * N * 2 + 2 * N * 2 + 2 * M * 4)

    def outs():
        return (torch.empty_like(x), torch.empty(M, device=env.dev), torch.empty(M, device=env.dev))

    def err(o):
        y, mean, rstd = o
        return check_with_stats(torch, "layernorm: mean/rstd", y, ref_y, [(mean, ref_mean), (rstd, ref_rstd)])

    ob, ot = outs(), outs()
    launch = bc.layernorm(env.ctx, x.data_ptr(), ob[0].data_ptr(), w.data_ptr(), b.data_ptr(), ob[1].data_ptr(),
                          ob[2].data_ptr(), M, N, eps, stream=env.stream)
    measure(env, row, "blk", launch, list(ob), err(ob), 1e-2)
    measure(env, row, "Triton", lambda: tk.layernorm(x, ot[0], w, b, ot[1], ot[2], eps), list(ot), err(ot), 1e-2)
    measure(env, row, "torch", lambda: F.layer_norm(x, (N,), w, b, eps), [],
            lambda res: max_rel_err(torch, res, ref_y), 1e-2)
    block, warps = bc.layernorm_config(N)
    row.config["both"] = {"BLOCK": block, "num_warps": warps}
    row.notes.append("torch: F.layer_norm, which does not write mean/rstd")
    return [row]


SUM_CONFIGS = [(1024, 4), (2048, 4), (4096, 8), (8192, 8), (16384, 8)]


def row_sum_many(env):
    torch, tk = env.torch, env.tk
    T = 2000
    g = torch.Generator().manual_seed(2000)
    sizes = torch.randint(1024, 2 * 1024 * 1024 + 1, (T,), generator=g).tolist()
    tensors = [torch.rand(s, device=env.dev) for s in sizes]  # in [0, 1): no cancellation in the sums
    ref = torch.stack([t.sum(dtype=torch.float64) for t in tensors])
    ptrs = torch.tensor([t.data_ptr() for t in tensors], dtype=torch.int64, device=env.dev)
    sizes_d = torch.tensor(sizes, dtype=torch.int64, device=env.dev)
    total = sum(sizes)
    row = Row("sums of 2000 tensors fp32", f"1k–2M ({total / 1e6:.0f}M floats)", total * 4 + T * (8 + 8 + 4))
    ob, ot = torch.empty(T, device=env.dev), torch.empty(T, device=env.dev)

    def err(o):
        def check(res):
            got = res if o is None else o
            if not bool(torch.isfinite(got).all()):
                return math.inf
            return ((got.double() - ref).abs() / ref).max().item()
        return check

    tune(env, row, "blk", SUM_CONFIGS,
         lambda c: bc.sum_many(env.ctx, ptrs.data_ptr(), sizes_d.data_ptr(), ob.data_ptr(), T, BLOCK=c[0],
                               num_warps=c[1], stream=env.stream), [ob], err(ob), 1e-4)
    tune(env, row, "Triton", [c + (a,) for a in (True, False) for c in SUM_CONFIGS],
         lambda c: (lambda: tk.sum_many(ptrs, sizes_d, ot, BLOCK=c[0], num_warps=c[1], ALIGNED=c[2])),
         [ot], err(ot), 1e-4)
    measure(env, row, "torch", lambda: torch.stack([t.sum() for t in tensors]), [], err(None), 1e-4)
    row.notes.append("configs (BLOCK, num_warps[, ALIGNED]) tried on both sides, fastest kept; "
                     "torch: a Python loop of 2000 sums")
    return [row]


GEMV_CONFIGS = [(8, 128, 2), (8, 128, 4), (16, 128, 4), (32, 128, 4), (16, 64, 2), (32, 64, 4)]
# steps wider than a scale group (both kernels scale each weight then)
GEMV_WIDE_CONFIGS = [(16, 256, 4), (4, 512, 4), (8, 512, 4), (2, 1024, 4), (4, 1024, 8), (8, 1024, 8),
                     (4, 2048, 8), (8, 2048, 8), (2, 4096, 8)]


def row_w4a16(env):
    torch, tk = env.torch, env.tk
    N = K = 4096
    G = 128
    w = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, device=env.dev)
    scales = (torch.rand(N, K // G, device=env.dev) * 0.02 + 0.001).half()
    x = torch.randn(K, device=env.dev).half()
    q = torch.stack([(w & 0xF), (w >> 4)], dim=-1).reshape(N, K).double() - 8.0
    W = q * scales.double().repeat_interleave(G, dim=1)
    ref = W @ x.double()
    row = Row("W4A16 GEMV", f"{N}×{K}, group {G}", N * K // 2 + N * (K // G) * 2 + K * 2 + N * 2)
    yb, yt = (torch.empty(N, device=env.dev, dtype=torch.float16) for _ in range(2))

    def err(o):
        return lambda _: max_rel_err(torch, o, ref)

    tune(env, row, "blk", GEMV_CONFIGS + GEMV_WIDE_CONFIGS,
         lambda c: bc.w4a16_gemv(env.ctx, w.data_ptr(), scales.data_ptr(), x.data_ptr(), yb.data_ptr(), N, K, GROUP=G,
                                 BLOCK_N=c[0], BLOCK_K=c[1], num_warps=c[2], stream=env.stream), [yb], err(yb), 1e-2)
    tune(env, row, "Triton", GEMV_CONFIGS + GEMV_WIDE_CONFIGS,
         lambda c: (lambda: tk.w4a16_gemv(w, scales, x, yt, GROUP=G, BLOCK_N=c[0], BLOCK_K=c[1], num_warps=c[2])),
         [yt], err(yt), 1e-2)
    # for scale, not in the table: the dense f16 GEMV torch would run without quantization (4x the weight bytes)
    try:
        Wh = W.half()
        ms = env.do_bench(lambda: torch.mv(Wh, x))
        row.notes.append(f"configs (BLOCK_N, BLOCK_K, num_warps) tried on both sides, fastest kept: "
                         f"{GEMV_CONFIGS + GEMV_WIDE_CONFIGS}; "
                         f"torch has no W4A16 GEMV: a dense f16 torch.mv of the dequantized matrix takes {ms:.4g} ms")
    except Exception as e:
        row.notes.append(f"dense torch.mv failed: {e}")
    return [row]


def row_matmul(env):
    """Not in the issue's table: how far the tensor-core dot is from Triton's and cuBLAS's."""
    torch, tk = env.torch, env.tk
    M = N = K = 4096
    a = torch.randn(M, K, device=env.dev).half()
    b = torch.randn(K, N, device=env.dev).half()
    ref = a.double() @ b.double()
    row = Row("matmul fp16", f"{M}³", (M * K + K * N + M * N) * 2)
    cb, ct, cp = (torch.empty(M, N, device=env.dev, dtype=torch.float16) for _ in range(3))

    def err(o):
        return lambda _: max_rel_err(torch, o, ref)

    tune(env, row, "blk", bc.MATMUL_CONFIGS,
         lambda c: bc.matmul(env.ctx, a.data_ptr(), b.data_ptr(), cb.data_ptr(), M, N, K, K, 1, N, 1, N, 1,
                             config=c, stream=env.stream), [cb], err(cb), 1e-2)
    tune(env, row, "Triton", bc.MATMUL_CONFIGS, lambda c: (lambda: tk.matmul(a, b, ct, c)), [ct], err(ct), 1e-2)
    measure(env, row, "torch", lambda: torch.matmul(a, b, out=cp), [cp], err(cp), 1e-2)
    flop = 2.0 * M * N * K
    row.notes.append("TFLOP/s " + ", ".join(f"{k} {flop / v / 1e9:.0f}" for k, v in row.ms.items()
                                            if isinstance(v, float)))
    return [row]


def attention_reference(torch, q, k, v, scale, causal, heads_at_once=4):
    """softmax(scale * q k^T [causal mask]) v and the natural-log logsumexp of each
    row of scale * q k^T, in float64, a few (batch, head) pairs at a time (the
    scores of one pair at N_CTX 4096 are 128 MB in float64). q, k, v: (Z, H, N_CTX,
    HEAD_DIM). Returns o (Z, H, N_CTX, HEAD_DIM) and lse (Z*H, N_CTX), float64."""
    Z, H, N, D = q.shape
    qs, ks, vs = (t.reshape(Z * H, N, D) for t in (q, k, v))
    o = torch.empty(Z * H, N, D, dtype=torch.float64, device=q.device)
    lse = torch.empty(Z * H, N, dtype=torch.float64, device=q.device)
    above = torch.ones(N, N, dtype=torch.bool, device=q.device).triu_(1) if causal else None  # keys j > i
    for i in range(0, Z * H, heads_at_once):
        sl = slice(i, i + heads_at_once)
        s = torch.matmul(qs[sl].double(), ks[sl].double().transpose(1, 2)).mul_(scale)
        if causal:
            s.masked_fill_(above, -math.inf)
        lse[sl] = torch.logsumexp(s, dim=-1)
        o[sl] = torch.matmul(s.sub_(lse[sl, :, None]).exp_(), vs[sl].double())
        del s
    return o.view(Z, H, N, D), lse


def row_attention(env, causal=False, Z=4, H=16, N=4096, D=64):
    """Flash-attention forward, stdlib/nn/attention.tile against the same algorithm in Triton and torch's SDPA:
    q, k, v, o (Z, H, N, D) f16, contiguous; lse (Z*H, N) f32."""
    torch, tk = env.torch, env.tk
    F = torch.nn.functional
    scale = 1.0 / math.sqrt(D)
    q, k, v = (torch.randn(Z, H, N, D, device=env.dev).half() for _ in range(3))
    ref_o, ref_lse = attention_reference(torch, q, k, v, scale, causal)
    # bytes: q, k and v read, o and lse written
    row = Row("attention fwd fp16" + (" causal" if causal else ""), f"{Z}×{H}×{N}×{D}",
              4 * Z * H * N * D * 2 + Z * H * N * 4)

    def outs():
        return (torch.empty(Z, H, N, D, device=env.dev, dtype=torch.float16),
                torch.empty(Z * H, N, device=env.dev, dtype=torch.float32))

    def err(o):
        out, lse = o
        return check_with_stats(torch, "attention: lse", out, ref_o, [(lse, ref_lse)])

    ob, ot = outs(), outs()

    def blk_run(c):
        return bc.attention(env.ctx, q.data_ptr(), k.data_ptr(), v.data_ptr(), ob[0].data_ptr(), ob[1].data_ptr(),
                            Z, H, N, D, q.stride(), k.stride(), v.stride(), ob[0].stride(), scale,
                            BLOCK_M=c["BLOCK_M"], BLOCK_N=c["BLOCK_N"], num_warps=c["num_warps"],
                            num_stages=c["num_stages"], causal=causal, stream=env.stream)

    tune(env, row, "blk", bc.ATTENTION_CONFIGS, blk_run, list(ob), err(ob), 1e-2)
    tune(env, row, "Triton", bc.ATTENTION_CONFIGS,
         lambda c: (lambda: tk.attention(q, k, v, ot[0], ot[1], scale, c, causal=causal)), list(ot), err(ot), 1e-2)
    measure(env, row, "torch", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale), [],
            lambda res: max_rel_err(torch, res, ref_o), 1e-2)
    flop = 4.0 * Z * H * N * N * D * (0.5 if causal else 1.0)
    row.notes.append("TFLOP/s " + ", ".join(f"{s} {flop / ms / 1e9:.0f}" for s, ms in row.ms.items()
                                            if isinstance(ms, float))
                     + (" (flops 2·Z·H·N²·D: half the non-causal count)" if causal else " (flops 4·Z·H·N²·D)"))
    row.notes.append("configs (BLOCK_M, BLOCK_N, num_warps, num_stages) of blk_calls.ATTENTION_CONFIGS tried on "
                     "both sides, fastest kept; Triton: the blk kernel's algorithm (online softmax in base 2, "
                     "bound" + (" and causal mask" if causal else "") + " applied on every key slice); "
                     "torch: F.scaled_dot_product_attention, which writes no lse")
    return [row]


def rows_launch(env):
    """Launch overhead from Python: vector add of n=1, 1000 launches then one synchronize."""
    torch, tk = env.torch, env.tk
    x, y = torch.randn(16, device=env.dev), torch.randn(16, device=env.dev)
    ob, ot, op = (torch.empty(16, device=env.dev) for _ in range(3))
    ref = x + y
    check = [lambda _: abs(ob[0].item() - ref[0].item()), lambda _: abs(ot[0].item() - ref[0].item()),
             lambda _: abs(op[0].item() - ref[0].item())]
    x1, y1, o1, ot1 = x[:1], y[:1], op[:1], ot[:1]
    pre = Row("launch overhead, from Python", "n=1, prebuilt blk args")
    per = Row("launch overhead, from Python", "n=1, blk args built per call")
    prebuilt = bc.vector_add(env.ctx, x.data_ptr(), y.data_ptr(), ob.data_ptr(), 1, stream=env.stream)

    def built_per_call():
        bc.vector_add(env.ctx, x.data_ptr(), y.data_ptr(), ob.data_ptr(), 1, stream=env.stream)()

    sides = [("blk", prebuilt, ob, check[0]), ("Triton", lambda: tk.vector_add(x1, y1, ot1), ot, check[1]),
             ("torch", lambda: torch.add(x1, y1, out=o1), op, check[2])]
    for side, fn, o, c in sides:
        if measure(env, pre, side, fn, [o], c, 0.0, time_it=False):
            wall, host = launch_time_ms(env, fn)
            pre.ms[side] = wall
            pre.notes.append(f"{side}: {wall * 1e3:.2f} µs a launch with the sync, {host * 1e3:.2f} µs host time alone")
            print(f"  launch [{side}]: {wall * 1e3:.2f} µs (host {host * 1e3:.2f} µs)", flush=True)
    if measure(env, per, "blk", built_per_call, [ob], check[0], 0.0, time_it=False):
        wall, host = launch_time_ms(env, built_per_call)
        per.ms["blk"] = wall
        per.notes.append(f"blk: {wall * 1e3:.2f} µs with the sync, {host * 1e3:.2f} µs host time alone")
        print(f"  launch [blk, built per call]: {wall * 1e3:.2f} µs (host {host * 1e3:.2f} µs)", flush=True)
    for side in ("Triton", "torch"):
        per.ms[side] = pre.ms[side]
    return [pre, per]


ROWS = [
    ("vector_add", "vector add fp32", "2^28", row_vector_add),
    ("sin4", "sin×4 fused fp32", "2^28", row_sin4),
    ("softmax_1024", "softmax fp32", "4096×1024", lambda env: row_softmax(env, 4096, 1024)),
    ("softmax_4096", "softmax fp32", "4096×4096", lambda env: row_softmax(env, 4096, 4096)),
    ("softmax_8192", "softmax fp32", "16384×8192", lambda env: row_softmax(env, 16384, 8192)),
    ("layernorm", "layernorm fwd fp16", "8192×8192", row_layernorm),
    ("sum_many", "sums of 2000 tensors fp32", "1k–2M", row_sum_many),
    ("w4a16", "W4A16 GEMV", "4096×4096", row_w4a16),
    ("matmul", "matmul fp16", "4096³", row_matmul),
    ("attention", "attention fwd fp16", "4×16×4096×64", lambda env: row_attention(env, causal=False)),
    ("attention_causal", "attention fwd fp16 causal", "4×16×4096×64", lambda env: row_attention(env, causal=True)),
    ("launch", "launch overhead, from Python", "n=1", rows_launch),
]


# ---- issue 12: tensor cores ------------------------------------------------------
# Rows of their own table (TFLOP/s beside the ratios), selected by --only issue12 or
# by their names; a plain run and the names of the rows above do not select them.
# blk: bench/kernels/matmul_tc.tile and stdlib/nn/attention.tile; Triton:
# triton_kernels._matmul_tc and _attention_fwd_tma; torch: cuBLAS through
# torch.matmul / addmm / _scaled_mm / _int_mm, and F.scaled_dot_product_attention.

# max |out - ref| / max |ref| allowed, by input type (the reference: float64 of the same inputs).
# f16, bf16: f32 accumulation, one rounding of the output; f32 on tf32 tensor cores (Triton,
# cuBLAS, blk's default input_precision "tf32": each operand truncated to a 10-bit fraction,
# the products smaller by about 2^-10 on average): about 4e-4 to 1e-3 at 4096 (the largest error of 16M outputs), so 2e-3; fp8: Triton and cuBLAS's fast
# accumulation on Hopper keeps fewer bits than f32, and the output is f16: 2e-2; i8: exact.
TC_TOL = {"f16": 1e-2, "bf16": 1e-2, "f32": 2e-3, "f8e4m3": 2e-2, "i8": 0.0}
# A blk side whose one run (compiled already) takes longer than this is not timed by
# do_bench: the cell says "slow (N ms)" (its result is still checked).
BLK_SLOW_MS = 250.0
TC_LABELS = {"f16": "f16", "bf16": "bf16", "f32": "f32 (tf32)", "f8e4m3": "fp8 e4m3 → f16", "i8": "i8 → i32"}


def torch_dtype(torch, blk_name):
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f8e4m3": torch.float8_e4m3fn,
            "i8": torch.int8, "i32": torch.int32}[blk_name]


def one_run_ms(env, fn):
    """The time of one run of fn (already compiled), by CUDA events, in ms."""
    torch = env.torch
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def blk_dot_on_fma(launch):
    """True when the variant this launch runs has no mma instruction in its PTX (blk's
    dot runs on FMAs for these inputs); compiles it (blk_kernel_compile) as a side effect."""
    ptx = launch.compile()["ptx"] or ""
    return "mma" not in ptx


def tune_blk_tc(env, row, configs, make_run, outs, check, tol, quick_configs=None):
    """blk's side of a tensor-core row: tune() over `configs`, unless the smallest config's
    PTX has no mma (the dot runs on FMAs): then only the two smallest are tried (the larger
    FMA configs take ptxas 5 to 11 s each and run slower), and where one run of the
    smallest takes over BLK_SLOW_MS, it is checked and reported as slow, not timed."""
    smallest = configs[-1]
    try:
        probe = make_run(smallest)
        fma = blk_dot_on_fma(probe)
    except Exception:
        fma = False  # tune() reports the error config by config
    if fma:
        row.notes.append("blk's dot runs on FMAs for these inputs (no mma in the PTX): its two smallest configs "
                         "tried")
        if not measure(env, row, "blk", probe, outs, check, tol, time_it=False):
            return
        ms = one_run_ms(env, probe)
        if ms > BLK_SLOW_MS:
            row.ms["blk"] = f"slow ({ms:.0f} ms)"
            row.config["blk"] = bc.config_text(smallest)
            row.notes.append(f"blk: one run of config {bc.config_text(smallest)} took {ms:.0f} ms "
                             f"(> {BLK_SLOW_MS:.0f} ms): checked, not timed")
            print(f"  {row.kernel} {row.size} [blk]: slow, one run {ms:.0f} ms; not timed", flush=True)
            return
        configs = configs[-2:]
    elif env.quick and quick_configs is not None:
        configs = quick_configs
    tune(env, row, "blk", configs, make_run, outs, check, tol)
    if isinstance(row.config.get("blk"), dict) and "BLOCK_K" in row.config["blk"]:
        row.config["blk"] = bc.config_text(row.config["blk"])


def vendor(env, row, tries, outs, check, tol):
    """torch's side where the operation may not exist or run here (_scaled_mm, _int_mm):
    each (label, fn) of `tries` is called once; the first that returns is measured; when
    none does, the cell is "n/a" and the error goes to the notes."""
    errors = []
    for label, fn in tries:
        try:
            fn()
            env.torch.cuda.synchronize()
        except Exception as e:
            lines = [ln for ln in str(e).splitlines() if ln.strip()]
            errors.append(f"{label}: {type(e).__name__}: {lines[0][:160] if lines else ''}")
            print(f"  {row.kernel} {row.size} [torch] {label}: {errors[-1]}", flush=True)
            continue
        measure(env, row, "torch", fn, outs, check, tol)
        row.notes.append(f"torch: {label}")
        return
    row.ms["torch"] = "n/a"
    row.notes.append("torch: n/a (" + "; ".join(errors) + ")")


def tflops_note(row):
    return "TFLOP/s " + ", ".join(f"{k} {row.flop / v / 1e9:.0f}" for k, v in row.ms.items() if isinstance(v, float))


def row_matmul_tc(env, dtype, size, bias_relu=False):
    """c = a @ b [+ bias, relu] for inputs of blk type `dtype`, size³: blk (bench/kernels/matmul_tc.tile),
    Triton (_matmul_tc) and torch, over the same configs (blk_calls.MATMUL_TC_CONFIGS); for f16
    and bf16 each side also tries its persistent TMA kernel over blk_calls.PERSISTENT_CONFIGS
    (bench/kernels/matmul_persistent_tc.tile, triton_kernels.matmul_persistent_tma)."""
    torch, tk = env.torch, env.tk
    M = N = K = size
    tin = torch_dtype(torch, dtype)
    out_name = bc.MATMUL_TC_KERNELS[dtype][2]
    tout = torch_dtype(torch, out_name)
    # b stored K-major (column-major), as cuBLAS's 8-bit GEMMs want it and Hopper's wgmma reads 8-bit and tf32
    # operands (K-major only: blk's b tile then comes by cp.async, as f16's does along N)
    k_major = dtype in ("f8e4m3", "i8", "f32")
    torch.manual_seed(12)
    if dtype == "i8":
        a = torch.randint(-128, 128, (M, K), dtype=torch.int16, device=env.dev).to(torch.int8)
        b = torch.randint(-128, 128, (N, K), dtype=torch.int16, device=env.dev).to(torch.int8).t()
    else:
        a = torch.randn(M, K, device=env.dev).to(tin)
        b = torch.randn(N, K, device=env.dev).to(tin).t() if k_major else torch.randn(K, N, device=env.dev).to(tin)
    bias = torch.randn(N, device=env.dev).to(tout) if bias_relu else None
    ref = a.to(torch.float32).double() @ b.to(torch.float32).double()
    if bias_relu:
        ref = torch.relu_(ref + bias.double())
    tol = TC_TOL[dtype]
    label = f"matmul {TC_LABELS[dtype]}" + (" + bias + relu" if bias_relu else "")
    row = Row(label, f"{size}³", (M * K + K * N) * a.element_size() + M * N * torch.empty(0, dtype=tout).element_size(),
              flop=2.0 * M * N * K)
    cb, ct, cp = (torch.empty(M, N, device=env.dev, dtype=tout) for _ in range(3))

    def err(o):
        return lambda res: max_rel_err(torch, res if o is None else o, ref)

    family = bc.matmul_tc_family(dtype)
    configs = bc.MATMUL_TC_CONFIGS[family]
    # 16-bit inputs: each side also tries its persistent kernel through tensor descriptors (TMA)
    persistent = [dict(c, kernel="persistent") for c in bc.PERSISTENT_CONFIGS] if family == "16bit" else []
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1))
    bias_ptr = None if bias is None else bias.data_ptr()

    def blk_run(c):
        if c.get("kernel") == "persistent":
            go = bc.matmul_persistent_tc(env.ctx, dtype, a.data_ptr(), b.data_ptr(), cb.data_ptr(), M, N, K,
                                         a.stride(0), b.stride(0), cb.stride(0), bias=bias_ptr, config=c,
                                         stream=env.stream)
            blkffi.check_pointer_types(go.kernel, [a.dtype, b.dtype, cb.dtype, cb.dtype], types={"T": dtype})
            return go
        go = bc.matmul_tc(env.ctx, dtype, a.data_ptr(), b.data_ptr(), cb.data_ptr(), M, N, K, *strides,
                          cb.stride(0), cb.stride(1), bias=bias_ptr, config=c, stream=env.stream)
        blkffi.check_pointer_types(go.kernel, [a.dtype, b.dtype, cb.dtype] + ([] if bias is None else [bias.dtype]))
        return go

    def triton_run(c):
        if c.get("kernel") == "persistent":
            return lambda: tk.matmul_persistent_tma(a, b, ct, c, bias=bias)
        return lambda: tk.matmul_tc(a, b, ct, c, bias=bias)

    old_tf32 = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = True  # torch's f32 matmul on tf32 tensor cores, as blk's default
        tune_blk_tc(env, row, persistent + configs, blk_run, [cb], err(cb), tol,
                    quick_configs=configs[:2] + persistent[:2])
        tune(env, row, "Triton", configs[:2] + persistent[:2] if env.quick else configs + persistent,
             triton_run, [ct], err(ct), tol)
        if isinstance(row.config.get("Triton"), dict):
            row.config["Triton"] = bc.config_text(row.config["Triton"])
        if dtype in ("f16", "bf16", "f32") and not bias_relu:
            measure(env, row, "torch", lambda: torch.matmul(a, b, out=cp), [cp], err(cp), tol)
            row.notes.append("torch: torch.matmul (cuBLAS)" + (", allow_tf32 = True" if dtype == "f32" else ""))
        elif bias_relu:
            measure(env, row, "torch", lambda: torch.relu_(torch.addmm(bias, a, b)), [], err(None), tol)
            row.notes.append("torch: torch.addmm(bias, a, b) then relu_ (two kernels)")
        elif dtype == "f8e4m3":
            one = torch.ones((), device=env.dev, dtype=torch.float32)
            vendor(env, row, [("torch._scaled_mm (scales 1, f16 out, use_fast_accum=True as Triton's default "
                               "on Hopper)", lambda: scaled_mm_result(torch._scaled_mm(
                                   a, b, scale_a=one, scale_b=one, out_dtype=torch.float16, use_fast_accum=True)))],
                   [], err(None), tol)
        elif dtype == "i8":
            b_rows = b.contiguous()
            vendor(env, row, [("torch._int_mm, b K-major", lambda: torch._int_mm(a, b)),
                              ("torch._int_mm, b row-major (a copy)", lambda: torch._int_mm(a, b_rows))],
                   [], err(None), tol)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old_tf32
    row.notes.append(tflops_note(row) + (" (TOP/s: integer)" if dtype == "i8" else ""))
    what = {"16bit": "examples/matmul.tile's four", "f32": "four (K slices of 32)", "8bit": "four (K slices of 128 "
            "and 64)"}[family]
    row.notes.append(f"configs: {what} @autotune configs of bench/kernels/matmul_tc.tile, tried on both sides"
                     + (" (--quick: the first two)" if env.quick else "")
                     + ("; and each side's persistent kernel through tensor descriptors by TMA "
                        "(bench/kernels/matmul_persistent_tc.tile, triton_kernels.matmul_persistent_tma) over "
                        "blk_calls.PERSISTENT_CONFIGS" + (" (--quick: the first two)" if env.quick else "")
                        if persistent else "") + "; max rel err tolerance "
                     f"{tol:g}" + ("; b K-major on every side" if k_major else ""))
    return [row]


def scaled_mm_result(r):
    """torch._scaled_mm gave (out, amax) in older versions, out alone now."""
    return r[0] if isinstance(r, tuple) else r


ATTENTION_QUICK = [0, 1, 2, 5, 8]  # the blk configs --quick tries (indices in ATTENTION_CONFIGS)


def row_attention_tc(env, D, causal, Z=4, H=16, N=4096):
    """Flash-attention forward, f16, HEAD_DIM D: blk (stdlib/nn/attention.tile) against a Triton kernel
    written for Hopper (triton_kernels.attention_tma: TMA descriptors, warp specialization tried)
    and torch's SDPA. The plain Triton kernel of the `attention` rows is the fallback."""
    torch, tk = env.torch, env.tk
    F = torch.nn.functional
    scale = 1.0 / math.sqrt(D)
    torch.manual_seed(12)
    q, k, v = (torch.randn(Z, H, N, D, device=env.dev).half() for _ in range(3))
    ref_o, ref_lse = attention_reference(torch, q, k, v, scale, causal)
    row = Row("attention fwd fp16" + (" causal" if causal else ""), f"{Z}×{H}×{N}×{D}",
              4 * Z * H * N * D * 2 + Z * H * N * 4, flop=4.0 * Z * H * N * N * D * (0.5 if causal else 1.0))

    def outs():
        return (torch.empty(Z, H, N, D, device=env.dev, dtype=torch.float16),
                torch.empty(Z * H, N, device=env.dev, dtype=torch.float32))

    def err(o):
        out, lse = o
        return check_with_stats(torch, "attention: lse", out, ref_o, [(lse, ref_lse)])

    ob, ot = outs(), outs()

    def blk_run(c):
        return bc.attention(env.ctx, q.data_ptr(), k.data_ptr(), v.data_ptr(), ob[0].data_ptr(), ob[1].data_ptr(),
                            Z, H, N, D, q.stride(), k.stride(), v.stride(), ob[0].stride(), scale,
                            BLOCK_M=c["BLOCK_M"], BLOCK_N=c["BLOCK_N"], num_warps=c["num_warps"],
                            num_stages=c["num_stages"], causal=causal, stream=env.stream)

    blk_configs = [bc.ATTENTION_CONFIGS[i] for i in ATTENTION_QUICK] if env.quick else bc.ATTENTION_CONFIGS
    tune(env, row, "blk", blk_configs, blk_run, list(ob), err(ob), 1e-2)
    tma_configs = bc.ATTENTION_TMA_CONFIGS[:2] if env.quick else bc.ATTENTION_TMA_CONFIGS
    # the configs without warp specialization first: their lines are out before any warp-specialized kernel runs
    # (Triton 3.6 documents warp specialization for Blackwell; BENCH_TRITON_WS=0 leaves it out)
    ws_too = os.environ.get("BENCH_TRITON_WS", "1") != "0"
    tune(env, row, "Triton", [dict(c, warp_specialize=ws) for ws in ((False, True) if ws_too else (False,))
                              for c in tma_configs],
         lambda c: (lambda: tk.attention_tma(q, k, v, ot[0], ot[1], scale, c, causal=causal)), list(ot), err(ot), 1e-2)
    if row.ok("Triton"):
        ws = row.config["Triton"].get("warp_specialize")
        ran = "the TMA kernel (tensor descriptors), " + ("warp-specialized" if ws else "not warp-specialized")
    else:
        print("  Triton's TMA kernel passed no config: the plain kernel instead", flush=True)
        tune(env, row, "Triton", bc.ATTENTION_CONFIGS,
             lambda c: (lambda: tk.attention(q, k, v, ot[0], ot[1], scale, c, causal=causal)), list(ot), err(ot), 1e-2)
        ran = "the plain kernel of the attention rows (the TMA kernel passed no config)"
    print(f"  Triton ran {ran}", flush=True)
    measure(env, row, "torch", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale), [],
            lambda res: max_rel_err(torch, res, ref_o), 1e-2)
    row.notes.append(tflops_note(row) + (" (flops 2·Z·H·N²·D: half the non-causal count)" if causal
                                         else " (flops 4·Z·H·N²·D)"))
    row.notes.append(f"Triton ran {ran}; blk: stdlib/nn/attention.tile over blk_calls.ATTENTION_CONFIGS"
                     + (" (--quick: 5 of them)" if env.quick else "") + "; Triton: blk_calls.ATTENTION_TMA_CONFIGS "
                     + ("each with and without warp_specialize" if ws_too else "without warp_specialize "
                        "(BENCH_TRITON_WS=0)") + (" (--quick: the first two)" if env.quick else "")
                     + (", the causal kernel's keys below the diagonal unmasked (masked throughout when "
                        "warp-specialized)" if causal else "")
                     + "; torch: F.scaled_dot_product_attention (no lse). The rows attention and attention_causal "
                     "(d64) are kept as they were: blk against the plain Triton kernel of its own algorithm")
    return [row]


ISSUE12_ROWS = (
    [(f"matmul_{t}{'_bias_relu' if br else ''}_{n}", f"matmul {t}" + (" + bias + relu" if br else ""), f"{n}³",
      (lambda t, n, br: lambda env: row_matmul_tc(env, t, n, bias_relu=br))(t, n, br))
     for t in ("f16", "bf16") for br in (False, True) for n in (4096, 8192)]
    + [("matmul_fp8", "matmul fp8 e4m3 → f16", "4096³", lambda env: row_matmul_tc(env, "f8e4m3", 4096)),
       ("matmul_f32", "matmul f32 (tf32)", "4096³", lambda env: row_matmul_tc(env, "f32", 4096)),
       ("matmul_i8", "matmul i8 → i32", "4096³", lambda env: row_matmul_tc(env, "i8", 4096))]
    + [(f"attention_d{d}{'_causal' if c else ''}", "attention fwd fp16" + (" causal" if c else ""), f"4×16×4096×{d}",
        (lambda d, c: lambda env: row_attention_tc(env, d, c))(d, c)) for d in (64, 128) for c in (False, True)]
)
GROUPS = {"issue12": [key for key, *_ in ISSUE12_ROWS]}


# ---- rows of their own files -------------------------------------------------------
# Each bench/rows_*.py defines GROUP (a group name for --only, e.g. "issue14") and ROWS, a
# list of (key, kernel, size, fn): fn(env, b) returns a list of Row, where b is this module
# (Row, measure, tune, max_rel_err, check_with_stats, ...). Like the issue-12 rows, they run
# only when --only names them or their group. The blk kernels they launch live in
# bench/kernels/, their Triton peers in the same file. Optional: ALSO, keys of other files'
# rows that the group selects too (issue31 names issue14's bias_gelu); SECTION, for rows
# compared with other sides than Triton and torch (issue30: Liger, torch.compile): an object
# with title, sides, header, cells(row) and legend, given to Row(section=...) by its rows, and
# to the rows made here for a row that raised or was skipped.
SECTIONS = {}  # row key -> its file's SECTION


def load_row_files():
    import importlib
    rows, also = [], []
    for name in sorted(os.listdir(HERE)):
        if name.startswith("rows_") and name.endswith(".py"):
            mod = importlib.import_module(name[:-3])
            me = sys.modules[__name__]
            for key, kernel, size, fn in mod.ROWS:
                rows.append((key, kernel, size, (lambda fn: lambda env: fn(env, me))(fn)))
                GROUPS.setdefault(mod.GROUP, []).append(key)
                if getattr(mod, "SECTION", None) is not None:
                    SECTIONS[key] = mod.SECTION
            also += [(mod.GROUP, key) for key in getattr(mod, "ALSO", ())]
    known = {key for key, *_ in rows}
    for group, key in also:
        if key not in known:
            raise ValueError(f"bench: group {group} names row {key!r}, which no rows_*.py file defines")
        if key not in GROUPS[group]:
            GROUPS[group].append(key)
    return rows


EXTRA_ROWS = load_row_files()


def list_rows():
    """--list: the row names, the groups of --only and their rows."""
    lines = ["rows of a plain run: " + " ".join(key for key, *_ in ROWS),
             "Runtime table parts: " + " ".join(runtime_bench.PARTS) + " (runtime: all three)",
             "groups (--only GROUP; not in a plain run):"]
    for group, keys in GROUPS.items():
        lines.append(f"  {group}: " + " ".join(keys))
    return "\n".join(lines)


def select_rows(only):
    """The rows --only selects, in table order. No --only: the rows of ROWS (not the issue-12
    rows). A name selects every row whose name contains it, except that a name of a row
    of ROWS ("matmul", "attention", "attention_causal") selects none of ISSUE12_ROWS, so that
    those commands run what they ran before; a group name ("issue12") selects its rows."""
    if not only:
        return list(ROWS)
    names = [n for n in only.split(",") if n]
    old = {key for key, *_ in ROWS}
    out = []
    for r in ROWS:
        if any(n in r[0] for n in names):
            out.append(r)
    for r in ISSUE12_ROWS + EXTRA_ROWS:
        if any((n in r[0] and n not in old) or r[0] in GROUPS.get(n, ()) for n in names):
            out.append(r)
    return out



HEADER = ["kernel", "size", "blk ms", "Triton ms", "torch ms", "blk GB/s", "Triton GB/s", "blk/Triton"]


TC_HEADER = ["kernel", "size", "blk ms", "Triton ms", "torch ms", "blk TFLOP/s", "Triton TFLOP/s", "torch TFLOP/s",
             "blk/Triton", "blk/torch"]


def table(rows, env_line, notes):
    main = [r for r in rows if r.flop is None and r.section is None]
    tc = [r for r in rows if r.flop is not None and r.section is None]
    sections = {}  # title -> (section, rows), in the order of the rows
    for r in rows:
        if r.section is not None:
            sections.setdefault(r.section.title, (r.section, []))[1].append(r)
    lines = [env_line, ""]
    if main or not (tc or sections):
        lines += ["| " + " | ".join(HEADER) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * 6) + "|"]
        for r in main:
            lines.append("| " + " | ".join(r.cells()) + " |")
        lines.append("")
        lines.append("blk/Triton = Triton time / blk time (above 1: blk is faster). GB/s: bytes the computation must "
                     "move (inputs read once, outputs written once) over the median time. Launch rows: ms a launch "
                     "from Python; the package's row (launch overhead, Python package) its host time with the GPU's "
                     "launch queue kept short (batches of 20, a synchronize between them), the others wall time "
                     "over 1000 launches then one synchronize.")
    if tc:
        if main:
            lines.append("")
        lines += ["### Tensor cores (issue 12)", "", "| " + " | ".join(TC_HEADER) + " |",
                  "|" + "|".join(["---"] * 2 + ["---:"] * 8) + "|"]
        for r in tc:
            lines.append("| " + " | ".join(r.tc_cells()) + " |")
        lines.append("")
        lines.append("blk/Triton = Triton time / blk time, blk/torch = torch time / blk time (above 1: blk is "
                     "faster). TFLOP/s: 2·M·N·K for a matmul (i8: TOP/s), 4·Z·H·N²·D for attention (half of it "
                     "causal), over the median time. `slow (N ms)`: one run took N ms, checked but not timed; "
                     "`n/a`: torch has no such operation here (the error is in the notes).")
    for sec, srows in sections.values():
        if main or tc or lines[-1] != "":
            lines.append("")
        lines += [sec.title, "", "| " + " | ".join(sec.header) + " |",
                  "|" + "|".join(["---"] * 2 + ["---:"] * (len(sec.header) - 2)) + "|"]
        for r in srows:
            lines.append("| " + " | ".join(sec.cells(r)) + " |")
        lines += ["", sec.legend]
    lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated names or parts of names of rows: "
                                   + ", ".join(key for key, *_ in ROWS) + "; of the Runtime table's parts: "
                                   + ", ".join(runtime_bench.PARTS) + " (runtime: all three); the tensor-core rows "
                                   "of issue 12 (not run without --only): issue12 for all of them and the compile "
                                   "part, or " + ", ".join(key for key, *_ in ISSUE12_ROWS) + "; the groups of "
                                   "bench/rows_*.py: " + ", ".join(g for g in GROUPS if g != "issue12"))
    ap.add_argument("--list", action="store_true", help="list the rows and the groups of --only, and exit (no GPU "
                                                        "needed)")
    ap.add_argument("--quick", action="store_true", help="short timings (warm-up 5 ms, 20 ms of repetitions); the "
                                                         "issue-12 rows also try fewer configs")
    args = ap.parse_args()
    if args.list:
        print(list_rows())
        return 0
    start = time.time()

    env = Env(args)
    torch, triton = env.torch, env.triton
    gpu = torch.cuda.get_device_name()
    env_line = (f"{datetime.date.today().isoformat()} · {gpu} · blk {env.blk.version()} · Triton {triton.__version__} "
                f"· torch {torch.__version__} · CUDA {torch.version.cuda}"
                + (" · --quick timings" if args.quick else ""))
    print(env_line, flush=True)
    print(f"libblk: {env.blk.path}", flush=True)

    selected = select_rows(args.only)
    tc_keys = {key for key, *_ in ISSUE12_ROWS}
    rows, notes = [], []
    for key, kernel, size, fn in selected:
        flop = 0.0 if key in tc_keys else None  # the tensor-core table's rows, also when skipped or failed
        if time.time() - start > TIME_BUDGET_S:
            r = Row(kernel, size, flop=flop, section=SECTIONS.get(key))
            r.ms = {s: "skipped" for s in r.ms}
            rows.append(r)
            notes.append(f"{kernel} {size}: skipped, the run passed {TIME_BUDGET_S} s")
            continue
        t0 = time.time()
        print(f"\n== {kernel} {size}", flush=True)
        try:
            got = fn(env)
        except Exception:
            print(f"  ERROR {kernel} {size}:", flush=True)
            traceback.print_exc()
            sys.stderr.flush()
            r = Row(kernel, size, flop=flop, section=SECTIONS.get(key))
            r.ms = {s: "ERROR" for s in r.ms}
            got = [r]
        for r in got:
            rows.append(r)
            if r.config:
                notes.append(f"{r.kernel} {r.size}: config " + "; ".join(f"{k} {v}" for k, v in r.config.items()))
            notes += [f"{r.kernel} {r.size}: {n}" for n in r.notes]
            if r.err:
                notes.append(f"{r.kernel} {r.size}: max rel err " +
                             ", ".join(f"{k} {v:.2g}" for k, v in r.err.items()))
                eb, et = r.err.get("blk"), r.err.get("Triton")
                if eb is not None and et is not None and eb > 1e-6 and eb > 4 * et:
                    notes.append(f"{r.kernel} {r.size}: NOTE blk's result is less accurate than Triton's "
                                 f"({eb:.2g} against {et:.2g}): faster math may explain part of a speed difference")
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        print(f"  ({time.time() - t0:.1f} s)", flush=True)

    rt_rows, rt_notes = [], []
    parts = runtime_bench.selected(args.only)
    if parts:
        rt_rows, rt_notes = runtime_bench.run(env, parts, rows, start, TIME_BUDGET_S)

    notes.append(f"whole run {time.time() - start:.0f} s")
    md = table(rows, env_line, notes) if rows else f"{env_line}\n\n- {notes[-1]}\n"
    if rt_rows:
        md += "\n" + runtime_bench.table(rt_rows, rt_notes)
    out_dir = os.environ.get("OUT")
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "bench.md"), "w") as f:
            f.write(md)
        with open(os.path.join(out_dir, "bench.json"), "w") as f:
            json.dump({"env": env_line, "rows": [
                {"kernel": r.kernel, "size": r.size, "bytes": r.nbytes, "flop": r.flop, "ms": r.ms,
                 "max_rel_err": r.err, "peak_mib": r.mem,
                 "config": {k: str(v) for k, v in r.config.items()}, "notes": r.notes} for r in rows],
                "runtime": [{"row": r.name, "blk": r.blk, "peer": r.peer, "ratio": r.ratio, "target": r.target,
                             "data": r.data} for r in rt_rows], "runtime_notes": rt_notes},
                f, indent=1, default=str)
    print("\n" + md, flush=True)
    bad = any(v in ("FAIL", "ERROR") for r in rows for v in r.ms.values()) or runtime_bench.failed(rt_rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
