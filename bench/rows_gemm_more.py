"""rows_gemm_more.py: the rest of issue 28's GEMM table (python3 bench/bench.py --only issue28_more).

A group of its own, apart from rows_gemm.py's "issue28" (about 4 min on an H200), to keep each
under bench.py's time budget; this one takes an estimated 2-3 min (the five fp8 rows about a
minute, most of it compiling; the four grouped rows about a minute).

fp8 (rows gemm_fp8_*): the forward of nn.Linear in e4m3, y = x W^T (NT: x M x K, W N x K, both
K-major as Hopper's fp8 wgmma reads them), f32 accumulation, bf16 out, at 4096³ and Llama-3-8B's
forward products at 8192 tokens (qo, up/gate, down, LM head). blk: bench/kernels/gemm.tile with
T = f8e4m3, OUT = bf16, TRANS_B (tiles by TMA, trans() of W's tile) over FP8_CONFIGS; Triton:
triton_kernels.matmul_tc on the same views over blk_calls.MATMUL_TC_CONFIGS["8bit"]; torch:
torch._scaled_mm with per-tensor scales of 1 and use_fast_accum=True (cuBLAS's fast fp8 path on
Hopper; Triton's fp8 dot and blk's wgmma accumulate the same way). Tolerance 2e-2 of max |ref|
(bench.TC_TOL's fp8) against an f32 product of the same e4m3 values.

Grouped GEMM (rows grouped_*): a mixture-of-experts layer's experts in one call, bf16, f32
accumulation. Tokens sorted by expert, x (sum M_e) x K; expert e's weight W_e stored N x K as
nn.Linear stores it (NT); c (sum M_e) x N. M_e: the routed token count of each expert, drawn
once from a fixed-seed multinomial over uneven expert probabilities (routed_counts). Shapes:
Mixtral-8x7B-like, 8 experts, 8192 tokens top-2, hidden 4096, ffn 14336 (up and down
projections); a fine-grained MoE, 64 experts, 16384 tokens top-6, hidden 2048, expert ffn 1408
(up and down). blk: bench/kernels/gemm_grouped.tile (x, W and the offsets of each expert's rows:
tensor descriptors, tiles by TMA) over GROUPED_CONFIGS, and examples/matmul_grouped.tile (arrays
of pointers, any shapes) over its @autotune configs, the fastest kept; Triton: _grouped_nt_tt
below (pointer tiles, a persistent walk over the experts' tiles as Triton's tutorial 08); torch:
torch._grouped_mm(x, W^T view, offs) where it runs (n/a with the error otherwise), and a loop
of one torch.matmul an expert, in the notes (in the torch cell where _grouped_mm is n/a).
Tolerance 2e-2 (bf16 out) against f32 products.

    python3 bench/rows_gemm_more.py            (no GPU, no torch: the blk launches on the interpreter)
    python3 bench/rows_gemm_more.py --triton   (no GPU: compiles the Triton grouped kernel for sm_90)
"""

import ctypes
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

GROUP = "issue28_more"

try:
    import triton
    import triton.language as tl
except ImportError:  # bench.py --list, selftest and the interpreter check import this file without Triton
    triton = None

# (name, M, N, K) of nn.Linear forwards in fp8
FP8_SHAPES = [("4096³", 4096, 4096, 4096), ("qo proj forward", 8192, 4096, 4096),
              ("up/gate proj forward", 8192, 14336, 4096), ("down proj forward", 8192, 4096, 14336),
              ("LM head forward", 8192, 128256, 4096)]


def _cfg(bm, bn, bk, w, s, ws=0):
    c = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w, "num_stages": s}
    if ws:
        c["warp_specialize"] = 1
    return c


# gemm.tile in fp8: K steps of 128 bytes (BLOCK_K 128) as the 8-bit configs of matmul_tc.tile, and of
# 64; a config whose shared memory does not fit fails at launch and is left out by tune()
FP8_CONFIGS = [_cfg(128, 256, 128, 8, 3), _cfg(128, 256, 128, 8, 4), _cfg(128, 128, 128, 8, 4),
               _cfg(128, 256, 64, 8, 4), _cfg(128, 256, 128, 8, 4, ws=1), _cfg(128, 128, 128, 8, 5, ws=1)]

# gemm_grouped.tile's @autotune configs (selftest-style check in interpreter_check)
GROUPED_CONFIGS = [_cfg(128, 256, 64, 8, 4), _cfg(128, 256, 64, 8, 3), _cfg(128, 128, 64, 8, 4),
                   _cfg(64, 128, 64, 4, 4)]
# examples/matmul_grouped.tile's @autotune configs
PTR_GROUPED_CONFIGS = [_cfg(64, 64, 32, 4, 4), _cfg(128, 128, 64, 8, 3), _cfg(128, 64, 64, 4, 4),
                       _cfg(64, 128, 64, 4, 4)]
# the Triton grouped kernel's
TRITON_GROUPED_CONFIGS = [_cfg(128, 256, 64, 8, 3), _cfg(128, 128, 64, 8, 4), _cfg(128, 128, 64, 4, 4),
                          _cfg(64, 128, 64, 4, 4)]

# (key, label, experts, tokens, top_k, N, K)
MOE = [("mixtral_up", "8 experts (Mixtral-8x7B-like), up proj", 8, 8192, 2, 14336, 4096),
       ("mixtral_down", "8 experts (Mixtral-8x7B-like), down proj", 8, 8192, 2, 4096, 14336),
       ("fine64_up", "64 experts (fine-grained), up proj", 64, 16384, 6, 1408, 2048),
       ("fine64_down", "64 experts (fine-grained), down proj", 64, 16384, 6, 2048, 1408)]


def cfg_text(c):
    return (f"{c['BLOCK_M']}×{c['BLOCK_N']}×{c['BLOCK_K']} w{c['num_warps']} s{c['num_stages']}"
            + (" ws" if c.get("warp_specialize") else "") + (f" {c['kernel']}" if c.get("kernel") else ""))


def routed_counts(experts, tokens, top_k, seed=28):
    """Tokens routed to each expert: tokens * top_k draws of a fixed-seed multinomial over uneven
    expert probabilities (log-normal weights), the same every run."""
    rng = random.Random(seed)
    weights = [math.exp(0.6 * rng.gauss(0.0, 1.0)) for _ in range(experts)]
    counts = [0] * experts
    for e in rng.choices(range(experts), weights=weights, k=tokens * top_k):
        counts[e] += 1
    return counts


def _consts(c, **more):
    out = {k: v for k, v in c.items() if k not in ("num_warps", "num_stages", "kernel")}
    out.update(more)
    return out


# ---- blk launches (device addresses as ints: shared by the GPU rows and the interpreter check) ----

def blk_fp8_nt(kern, x, w, c, ws, counters, M, N, K, cfg, stream=0, T="f8e4m3", OUT="bf16"):
    """c = x @ w^T through bench/kernels/gemm.tile: x M x K, w N x K, both row-major (K-major)."""
    return kern.prepare([x, w, c, ws, counters, M, N, K, K, K, N],
                        consts=_consts(cfg, T=T, OUT=OUT, TRANS_A=False, TRANS_B=True, BETA=False, SPLIT_K=1,
                                       tma=1),
                        num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], stream=stream)


def blk_grouped(kern, x, w, c, offs, G, M_total, N, K, trans_b, cfg, stream=0, T="bf16", OUT="bf16"):
    """bench/kernels/gemm_grouped.tile: x M_total x K, w G x N x K (trans_b) or G x K x N, c M_total x N,
    offs G + 1 i32 (expert g's rows offs[g] .. offs[g + 1])."""
    if not trans_b and K % cfg["BLOCK_K"]:
        raise ValueError(f"gemm_grouped: K {K} is not a multiple of BLOCK_K {cfg['BLOCK_K']} (W stored K x N)")
    return kern.prepare([x, w, c, offs, G, M_total, N, K, G * (N if trans_b else K), K, K if trans_b else N, N],
                        consts=_consts(cfg, T=T, OUT=OUT, TRANS_B=trans_b, tma=1),
                        num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], stream=stream)


def ptr_grouped_tables(x, w, c, counts, N, K, elem):
    """examples/matmul_grouped.tile's arrays for the same problem (W_e stored N x K): the pointers of
    each expert's x rows, W_e and c rows; shapes (M_e, N, K); strides (lda, stride_bk, stride_bn, ldc)."""
    a_p, b_p, c_p, shapes, strides = [], [], [], [], []
    lo = 0
    for e, m in enumerate(counts):
        a_p.append(x + lo * K * elem)
        b_p.append(w + e * N * K * elem)
        c_p.append(c + lo * N * elem)
        shapes += [m, N, K]
        strides += [K, 1, K, N]
        lo += m
    return a_p, b_p, c_p, shapes, strides


def blk_ptr_grouped(kern, a_ptrs, b_ptrs, c_ptrs, shapes, strides, G, cfg, stream=0, T="bf16", OUT="bf16"):
    return kern.prepare([a_ptrs, b_ptrs, c_ptrs, shapes, strides, G], consts=_consts(cfg, T=T, TO=OUT),
                        num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], stream=stream)


# ---- Triton: a grouped GEMM as its tutorial 08 walks the groups ----

if triton is not None:
    @triton.jit
    def _grouped_nt_tt(x_ptr, w_ptr, c_ptr, offs_ptr, G, N, K, stride_x, stride_w, stride_c,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_SM: tl.constexpr):
        tile = tl.program_id(0)
        first = 0
        tiles_n = tl.cdiv(N, BLOCK_N)
        for g in range(G):
            lo = tl.load(offs_ptr + g)
            m = tl.load(offs_ptr + g + 1) - lo
            end = first + tl.cdiv(m, BLOCK_M) * tiles_n
            while tile >= first and tile < end:
                t = tile - first
                rows = (t // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
                cols = (t % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
                ks = tl.arange(0, BLOCK_K)
                a_ptrs = x_ptr + (lo + rows).to(tl.int64)[:, None] * stride_x + ks[None, :]
                b_ptrs = w_ptr + (g * N + cols).to(tl.int64)[None, :] * stride_w + ks[:, None]  # W_g^T's tile
                acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
                for k in range(0, tl.cdiv(K, BLOCK_K)):
                    a = tl.load(a_ptrs, mask=(rows[:, None] < m) & (ks[None, :] < K - k * BLOCK_K), other=0.0)
                    b = tl.load(b_ptrs, mask=(cols[None, :] < N) & (ks[:, None] < K - k * BLOCK_K), other=0.0)
                    acc = tl.dot(a, b, acc)
                    a_ptrs += BLOCK_K
                    b_ptrs += BLOCK_K
                c_ptrs = c_ptr + (lo + rows).to(tl.int64)[:, None] * stride_c + cols[None, :]
                tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < m) & (cols[None, :] < N))
                tile += NUM_SM
            first = end


def triton_grouped(x, w, c, offs, G, N, K, cfg, sms):
    _grouped_nt_tt[(sms,)](x, w, c, offs, G, N, K, x.stride(0), w.stride(1), c.stride(0),
                           BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], NUM_SM=sms,
                           num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])


# ---- the rows ----

def row_fp8(env, b, what, M, N, K):
    torch, tk = env.torch, env.tk
    f8 = torch.float8_e4m3fn
    torch.manual_seed(28)
    x = torch.randn(M, K, device=env.dev).to(f8)
    w = torch.randn(N, K, device=env.dev).to(f8)
    ref = torch.matmul(x.float(), w.float().t())  # e4m3 products are exact in f32; f32 sums
    row = b.Row("GEMM NT fp8 e4m3 → bf16" + ("" if what == "4096³" else f", {what}"), f"{M}×{N}×{K}",
                (M * K + N * K) + M * N * 2, flop=2.0 * M * N * K)
    cb, ct, cp = (torch.empty(M, N, device=env.dev, dtype=torch.bfloat16) for _ in range(3))
    ws = torch.empty(1, device=env.dev, dtype=torch.float32)
    counters = torch.zeros(1, device=env.dev, dtype=torch.int32)
    tol = b.TC_TOL["f8e4m3"]

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    kern = b.bc.bench_kernel(env.ctx, "gemm")
    b.tune(env, row, "blk", FP8_CONFIGS[:2] if env.quick else FP8_CONFIGS,
           lambda c: blk_fp8_nt(kern, x.data_ptr(), w.data_ptr(), cb.data_ptr(), ws.data_ptr(), counters.data_ptr(),
                                M, N, K, c, stream=env.stream), [cb], err(cb), tol)
    if isinstance(row.config.get("blk"), dict):
        row.config["blk"] = cfg_text(row.config["blk"])
    tconf = b.bc.MATMUL_TC_CONFIGS["8bit"]
    wt = w.t()  # K x N view, K-major
    b.tune(env, row, "Triton", tconf[:2] if env.quick else tconf, lambda c: (lambda: tk.matmul_tc(x, wt, ct, c)),
           [ct], err(ct), tol)
    if isinstance(row.config.get("Triton"), dict):
        row.config["Triton"] = b.bc.config_text(row.config["Triton"])
    one = torch.ones((), device=env.dev, dtype=torch.float32)
    b.vendor(env, row, [("torch._scaled_mm (per-tensor scales 1, bf16 out, use_fast_accum=True)",
                         lambda: b.scaled_mm_result(torch._scaled_mm(x, wt, scale_a=one, scale_b=one,
                                                                     out_dtype=torch.bfloat16, use_fast_accum=True)))],
             [], err(None), tol)
    row.notes.append(b.tflops_note(row))
    return [row]


def row_grouped(env, b, label, G, tokens, top_k, N, K):
    torch = env.torch
    counts = routed_counts(G, tokens, top_k)
    M_total = sum(counts)
    torch.manual_seed(28)
    x = torch.randn(M_total, K, device=env.dev).to(torch.bfloat16)
    w = torch.randn(G, N, K, device=env.dev).to(torch.bfloat16)  # W_e stored N x K, nn.Linear's layout
    bounds = [0]
    for m in counts:
        bounds.append(bounds[-1] + m)
    offs = torch.tensor(bounds, device=env.dev, dtype=torch.int32)  # G + 1 boundaries
    ref = torch.empty(M_total, N, device=env.dev, dtype=torch.float32)
    for e in range(G):
        torch.matmul(x[bounds[e]:bounds[e + 1]].float(), w[e].float().t(), out=ref[bounds[e]:bounds[e + 1]])
    row = b.Row(f"grouped GEMM bf16, {label}", f"{G}×(M_e×{N}×{K}), ΣM_e {M_total}",
                (M_total * K + G * N * K + M_total * N) * 2, flop=2.0 * M_total * N * K)
    row.notes.append(f"M_e (tokens an expert): min {min(counts)}, max {max(counts)}, mean {M_total / G:.0f}"
                     + (f": {counts}" if G <= 8 else ""))
    cb, ct, cp = (torch.empty(M_total, N, device=env.dev, dtype=torch.bfloat16) for _ in range(3))
    tol = 2e-2
    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    kern = b.bc.bench_kernel(env.ctx, "gemm_grouped")
    pkern = b.bc.kernel(env.ctx, "matmul_grouped")
    tables = ptr_grouped_tables(x.data_ptr(), w.data_ptr(), cb.data_ptr(), counts, N, K, 2)
    a_p, b_p, c_p = (torch.tensor(t, device=env.dev, dtype=torch.int64) for t in tables[:3])
    shapes, strides = (torch.tensor(t, device=env.dev, dtype=torch.int32) for t in tables[3:])

    def blk_run(c):
        if c.get("kernel") == "pointers":
            return blk_ptr_grouped(pkern, a_p.data_ptr(), b_p.data_ptr(), c_p.data_ptr(), shapes.data_ptr(),
                                   strides.data_ptr(), G, c, stream=env.stream)
        return blk_grouped(kern, x.data_ptr(), w.data_ptr(), cb.data_ptr(), offs.data_ptr(), G, M_total, N, K, True,
                           c, stream=env.stream)

    ptr = [dict(c, kernel="pointers") for c in PTR_GROUPED_CONFIGS]
    configs = GROUPED_CONFIGS[:2] + ptr[1:2] if env.quick else GROUPED_CONFIGS + ptr
    b.tune(env, row, "blk", configs, blk_run, [cb], err(cb), tol)
    if isinstance(row.config.get("blk"), dict):
        c = row.config["blk"]
        row.config["blk"] = cfg_text(c) + ("" if c.get("kernel") else " gemm_grouped")
    if triton is not None:
        tconf = TRITON_GROUPED_CONFIGS[:2] if env.quick else TRITON_GROUPED_CONFIGS
        b.tune(env, row, "Triton", tconf, lambda c: (lambda: triton_grouped(x, w, ct, offs, G, N, K, c, sms)),
               [ct], err(ct), tol)
        if isinstance(row.config.get("Triton"), dict):
            row.config["Triton"] = cfg_text(row.config["Triton"])
    offs_end = offs[1:]  # torch's offs: the end of each group
    wt = w.transpose(-2, -1)  # G x K x N views, K-major

    def loop():
        for e in range(G):
            torch.matmul(x[bounds[e]:bounds[e + 1]], wt[e], out=cp[bounds[e]:bounds[e + 1]])

    b.vendor(env, row, [("torch._grouped_mm(x, W^T views, offs, out_dtype=bf16)",
                         lambda: torch._grouped_mm(x, wt, offs=offs_end, out_dtype=torch.bfloat16))],
             [], err(None), tol)
    probe = b.Row(row.kernel, row.size)
    if b.measure(env, probe, "torch", loop, [cp], err(cp), tol):
        ms = probe.ms["torch"]
        ratio = f", blk/loop {ms / row.ms['blk']:.2f}" if row.ok("blk") else ""
        row.notes.append(f"torch loop of {G} torch.matmul (one an expert): {ms:.4g} ms, "
                         f"{row.flop / ms / 1e9:.0f} TFLOP/s{ratio}")
        if row.ms["torch"] == "n/a":  # no grouped matmul here: the loop is torch's time
            row.ms["torch"], row.err["torch"] = ms, probe.err["torch"]
            row.notes.append("torch cell: the loop of torch.matmul (torch._grouped_mm n/a)")
    else:
        row.notes.append(f"torch loop of {G} torch.matmul: {probe.ms['torch']}")
    row.notes.append(b.tflops_note(row))
    return [row]


def _rows():
    rows = []
    for what, M, N, K in FP8_SHAPES:
        key = "4096" if what == "4096³" else what.split()[0].replace("/", "").lower()
        rows.append((f"gemm_fp8_{key}", "GEMM NT fp8 e4m3 → bf16" + ("" if what == "4096³" else f", {what}"),
                     f"{M}×{N}×{K}",
                     (lambda w_, M, N, K: lambda env, b: row_fp8(env, b, w_, M, N, K))(what, M, N, K)))
    for key, label, G, T, top_k, N, K in MOE:
        rows.append((f"grouped_{key}", f"grouped GEMM bf16, {label}", f"{G}×(M_e×{N}×{K})",
                     (lambda *a: lambda env, b: row_grouped(env, b, *a))(label, G, T, top_k, N, K)))
    return rows


ROWS = _rows()


# ---- without a GPU ----

def interpreter_check(ctx=None):
    """The blk launches of these rows on the interpreter at tiny shapes (partial tiles on every axis,
    an expert with no token), through the functions the rows use, against float64 references.
    Returns [(what, max rel err, tolerance)]; `sentinels` rows after c must stay as they were."""
    import blkffi
    import blk_calls as bc
    import selftest as st
    own = ctx is None
    if own:
        ctx = blkffi.Blk().context(blkffi.BACKEND_INTERPRETER)
    rng = random.Random(2828)
    types = st.tc_types(rng)
    results = []
    sentinel = 0x7F7F  # a bf16 that no result takes (about 3.4e38)

    def bf16_out(buf, n):
        return [st.bf16_value(v) for v in buf.read()[:n]]

    # fp8 NT (gemm.tile, T = f8e4m3, OUT = bf16): M, N partial tiles, K two steps and a part
    M, N, K = 40, 24, 80
    _, rand8, _, _ = types["f8e4m3"]
    codes = {st.f8e4m3_value(v): v for v in range(256) if (v >> 3) & 0xF <= 9 and v != 0x80}
    xv = [rand8() for _ in range(M * K)]
    wv = [rand8() for _ in range(N * K)]
    x = st.Buf(ctx, ctypes.c_uint8, [codes[v] for v in xv])
    w = st.Buf(ctx, ctypes.c_uint8, [codes[v] for v in wv])
    c = st.Buf(ctx, ctypes.c_uint16, [sentinel] * (M * N + N))
    ws = st.Buf(ctx, ctypes.c_float, [0.0])
    cnt = st.Buf(ctx, ctypes.c_int32, [0])
    kern = bc.bench_kernel(ctx, "gemm")
    cfg = _cfg(16, 16, 32, 4, 3)
    blk_fp8_nt(kern, x.ptr, w.ptr, c.ptr, ws.ptr, cnt.ptr, M, N, K, cfg)()
    ref = [sum(xv[i * K + k] * wv[j * K + k] for k in range(K)) for i in range(M) for j in range(N)]
    got = bf16_out(c, M * N + N)
    e = st.max_rel(got[:M * N], ref) if all(v == st.bf16_value(sentinel) for v in got[M * N:]) else math.inf
    results.append((f"gemm.tile fp8 e4m3 NT -> bf16 {M}x{N}x{K} {cfg_text(cfg)}", e, 1e-2))

    # grouped: 4 experts, one with no token, M_e leaving partial tiles; W stored N x K and K x N
    counts, N, K = [5, 0, 37, 18], 24, 64
    G, M_total = len(counts), sum(counts)
    bounds = [0]
    for m in counts:
        bounds.append(bounds[-1] + m)
    _, rand, enc, _ = types["bf16"]
    xv = [rand() for _ in range(M_total * K)]
    wv = [rand() for _ in range(G * N * K)]  # W_e[n][k] at (e * N + n) * K + k
    ref = []
    for e in range(G):
        for r in range(bounds[e], bounds[e + 1]):
            ref += [sum(xv[r * K + k] * wv[(e * N + n) * K + k] for k in range(K)) for n in range(N)]
    x = st.Buf(ctx, ctypes.c_uint16, [enc(v) for v in xv])
    w_nt = st.Buf(ctx, ctypes.c_uint16, [enc(v) for v in wv])
    w_nn = st.Buf(ctx, ctypes.c_uint16, [enc(wv[(e * N + n) * K + k]) for e in range(G) for k in range(K)
                                         for n in range(N)])
    offs = st.Buf(ctx, ctypes.c_int32, bounds)
    kern = bc.bench_kernel(ctx, "gemm_grouped")
    small = _cfg(16, 16, 16, 4, 3)
    for trans_b, wb in ((True, w_nt), (False, w_nn)):
        c = st.Buf(ctx, ctypes.c_uint16, [sentinel] * ((M_total + 16) * N))
        blk_grouped(kern, x.ptr, wb.ptr, c.ptr, offs.ptr, G, M_total, N, K, trans_b, small)()
        got = bf16_out(c, (M_total + 16) * N)
        tail_ok = all(v == st.bf16_value(sentinel) for v in got[M_total * N:])
        e = st.max_rel(got[:M_total * N], ref) if tail_ok else math.inf
        results.append((f"gemm_grouped {'NT' if trans_b else 'NN'} M_e {counts} N {N} K {K} {cfg_text(small)}"
                        + ("" if tail_ok else ": wrote past the last expert's rows"), e, 1e-2))
    pkern = bc.kernel(ctx, "matmul_grouped")
    c = st.Buf(ctx, ctypes.c_uint16, [sentinel] * ((M_total + 16) * N))
    a_p, b_p, c_p, shapes, strides = ptr_grouped_tables(x.ptr, w_nt.ptr, c.ptr, counts, N, K, 2)
    bufs = [st.Buf(ctx, ctypes.c_uint64, t) for t in (a_p, b_p, c_p)] + [st.Buf(ctx, ctypes.c_int32, t)
                                                                          for t in (shapes, strides)]
    blk_ptr_grouped(pkern, *(bf.ptr for bf in bufs), G, small)()
    got = bf16_out(c, (M_total + 16) * N)
    tail_ok = all(v == st.bf16_value(sentinel) for v in got[M_total * N:])
    e = st.max_rel(got[:M_total * N], ref) if tail_ok else math.inf
    results.append((f"examples/matmul_grouped.tile W^T by strides, M_e {counts} {cfg_text(small)}", e, 1e-2))

    # the configs this file names for gemm_grouped.tile are the file's @autotune configs
    in_file = st.autotune_configs_by_kernel(os.path.join(HERE, "kernels", "gemm_grouped.tile")).get("gemm_grouped")
    same = in_file == [dict(cf, tma=1) for cf in GROUPED_CONFIGS]
    results.append(("GROUPED_CONFIGS are gemm_grouped.tile's @autotune configs", 0.0 if same else math.inf, 0.0))
    in_file = st.autotune_configs_by_kernel(os.path.join(HERE, "..", "examples", "matmul_grouped.tile"))
    same = in_file.get("matmul_grouped") == PTR_GROUPED_CONFIGS
    results.append(("PTR_GROUPED_CONFIGS are matmul_grouped.tile's @autotune configs", 0.0 if same else math.inf, 0.0))
    counts = routed_counts(8, 8192, 2)
    results.append((f"routed_counts(8, 8192, 2) sums to 16384, uneven ({counts})",
                    0.0 if sum(counts) == 16384 and min(counts) < max(counts) else math.inf, 0.0))
    if own:
        ctx.destroy()
    return results


def triton_compile_check():
    """_grouped_nt_tt compiled for sm_90 in every config (no GPU; pip install triton)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    bad = 0
    for c in TRITON_GROUPED_CONFIGS:
        sig = {"x_ptr": "*bf16", "w_ptr": "*bf16", "c_ptr": "*bf16", "offs_ptr": "*i32", "G": "i32", "N": "i32",
               "K": "i32", "stride_x": "i32", "stride_w": "i32", "stride_c": "i32", "BLOCK_M": "constexpr",
               "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "NUM_SM": "constexpr"}
        consts = {"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"], "BLOCK_K": c["BLOCK_K"], "NUM_SM": 132}
        names = _grouped_nt_tt.arg_names
        attrs = {(names.index(p),): [["tt.divisibility", 16]] for p in ("x_ptr", "w_ptr", "c_ptr", "offs_ptr", "N",
                                                                         "K", "stride_x", "stride_w", "stride_c")}
        try:
            triton.compile(ASTSource(fn=_grouped_nt_tt, signature=sig, constexprs=consts, attrs=attrs),
                           target=GPUTarget("cuda", 90, 32),
                           options={"num_warps": c["num_warps"], "num_stages": c["num_stages"]})
            print(f"ok   _grouped_nt_tt {cfg_text(c)}", flush=True)
        except Exception as e:
            lines = [ln for ln in str(e).splitlines() if ln.strip()]
            print(f"FAIL _grouped_nt_tt {cfg_text(c)}: {type(e).__name__}: {lines[-1][:300] if lines else ''}")
            bad += 1
    return bad


def main():
    import blk_calls
    return blk_calls.check_main("rows_gemm_more", interpreter_check, triton_compile_check, sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
