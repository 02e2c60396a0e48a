"""rows_sort.py: issue-14 rows for sort, top-k and histogram.

blk's kernels are bench/kernels/{sort,topk,histogram}.tile; the Triton peers
below run the same algorithm (one program a row with tl.sort / tl.topk; the
histogram counted by tl.histogram a block at a time and merged with one
atomic_add a program). torch: torch.sort, torch.topk, torch.bincount. Both
sides try the same configurations (warps; programs and block for the
histogram). The histogram row also times Triton's plain atomic_add form
(one global atomic an element), reported in its notes.
"""

import math

import blk_calls as bc

GROUP = "issue14"

SORT_M, SORT_N = 8192, 4096
TOPK_K = 8
HIST_N, HIST_BINS = 1 << 26, 256
WARPS = (4, 8, 16)
HIST_CONFIGS = [(p, blk, w) for p in (264, 528, 1056) for blk in (2048, 4096, 8192) for w in (4, 8)]

_tk = None


def triton_kernels():
    """The Triton peers, made on first use (triton is imported only here)."""
    global _tk
    if _tk is not None:
        return _tk
    import triton
    import triton.language as tl

    @triton.jit
    def sort_rows(x, y, N: tl.constexpr):
        offs = tl.program_id(0) * N + tl.arange(0, N)
        tl.store(y + offs, tl.sort(tl.load(x + offs)))

    @triton.jit
    def topk_rows(x, v, N: tl.constexpr, K: tl.constexpr):
        r = tl.program_id(0)
        t = tl.topk(tl.load(x + r * N + tl.arange(0, N)), K)
        tl.store(v + r * K + tl.arange(0, K), t)

    @triton.jit
    def hist_blocks(x, counts, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
        acc = tl.zeros((BINS,), tl.int32)
        for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
            acc += tl.histogram(tl.load(x + start + tl.arange(0, BLOCK)), BINS).to(tl.int32)
        tl.atomic_add(counts + tl.arange(0, BINS), acc)

    @triton.jit
    def hist_atomic(x, counts, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.atomic_add(counts + tl.load(x + offs, mask=m, other=0), 1, mask=m)

    _tk = {"sort": sort_rows, "topk": topk_rows, "hist": hist_blocks, "hist_atomic": hist_atomic,
           "has_topk": hasattr(tl, "topk"), "has_histogram": hasattr(tl, "histogram")}
    return _tk


def exact(torch, got, want):
    """0 when got equals want element for element, else inf."""
    return 0.0 if bool(torch.equal(got, want)) else math.inf


def row_sort(env, b):
    torch = env.torch
    M, N = SORT_M, SORT_N
    x = torch.randn(M, N, device=env.dev)
    ref = torch.sort(x, dim=-1).values
    row = b.Row("row sort f32", f"{M}×{N}", 2 * M * N * 4)
    yb, yt = torch.empty_like(x), torch.empty_like(x)
    k = bc.bench_kernel(env.ctx, "sort", "sort_rows")
    b.tune(env, row, "blk", WARPS,
           lambda w: k.prepare([x.data_ptr(), yb.data_ptr()], consts={"N": N}, grid=(M,), num_warps=w,
                               stream=env.stream), [yb], lambda _: exact(torch, yb, ref), 0.0)
    tk = triton_kernels()
    b.tune(env, row, "Triton", WARPS, lambda w: (lambda: tk["sort"][(M,)](x, yt, N=N, num_warps=w)), [yt],
           lambda _: exact(torch, yt, ref), 0.0)
    b.measure(env, row, "torch", lambda: torch.sort(x, dim=-1), [], lambda res: exact(torch, res.values, ref), 0.0)
    row.notes.append("ascending, values alone (tl.sort's form); torch.sort also writes the indices")
    return [row]


def row_topk(env, b):
    torch = env.torch
    M, N, K = SORT_M, SORT_N, TOPK_K
    x = torch.randn(M, N, device=env.dev)
    ref = torch.topk(x, K, dim=-1).values
    row = b.Row(f"top-{K} f32", f"{M}×{N}", M * N * 4 + M * K * 4)
    vb, vt = torch.empty(M, K, device=env.dev), torch.empty(M, K, device=env.dev)
    k = bc.bench_kernel(env.ctx, "topk", "topk_rows")
    b.tune(env, row, "blk", WARPS,
           lambda w: k.prepare([x.data_ptr(), vb.data_ptr()], consts={"N": N, "K": K}, grid=(M,), num_warps=w,
                               stream=env.stream), [vb], lambda _: exact(torch, vb, ref), 0.0)
    tk = triton_kernels()
    if tk["has_topk"]:
        b.tune(env, row, "Triton", WARPS, lambda w: (lambda: tk["topk"][(M,)](x, vt, N=N, K=K, num_warps=w)), [vt],
               lambda _: exact(torch, vt, ref), 0.0)
    else:
        row.notes.append("this Triton has no tl.topk")
    b.measure(env, row, "torch", lambda: torch.topk(x, K, dim=-1), [], lambda res: exact(torch, res.values, ref), 0.0)
    row.notes.append("values alone on blk and Triton; torch.topk also writes the indices")
    return [row]


def row_histogram(env, b):
    torch = env.torch
    n, bins = HIST_N, HIST_BINS
    x = torch.randint(0, bins, (n,), device=env.dev, dtype=torch.int32)
    ref = torch.bincount(x, minlength=bins).to(torch.int32)
    row = b.Row(f"histogram i32 → {bins} bins", "2^26", n * 4)
    cb = torch.zeros(bins, device=env.dev, dtype=torch.int32)
    ct = torch.zeros(bins, device=env.dev, dtype=torch.int32)
    k = bc.bench_kernel(env.ctx, "histogram", "histogram_i32")

    def blk_run(c):
        launch = k.prepare([x.data_ptr(), cb.data_ptr(), n], consts={"BLOCK": c[1], "BINS": bins}, grid=(c[0],),
                           num_warps=c[2], stream=env.stream)
        return lambda: (cb.zero_(), launch())

    b.tune(env, row, "blk", HIST_CONFIGS, blk_run, [cb], lambda _: exact(torch, cb, ref), 0.0)
    tk = triton_kernels()
    if tk["has_histogram"]:
        b.tune(env, row, "Triton", HIST_CONFIGS,
               lambda c: (lambda: (ct.zero_(), tk["hist"][(c[0],)](x, ct, n, BLOCK=c[1], BINS=bins, num_warps=c[2]))),
               [ct], lambda _: exact(torch, ct, ref), 0.0)
    b.measure(env, row, "torch", lambda: torch.bincount(x, minlength=bins), [],
              lambda res: exact(torch, res.to(torch.int32), ref), 0.0)
    probe = b.Row(row.kernel, row.size)
    ca = torch.zeros(bins, device=env.dev, dtype=torch.int32)
    if b.measure(env, probe, "Triton", lambda: (ca.zero_(), tk["hist_atomic"][(bc.cdiv(n, 1024),)](x, ca, n,
                                                                                                   BLOCK=1024)),
                 [ca], lambda _: exact(torch, ca, ref), 0.0):
        row.notes.append(f"Triton's atomic_add form (one global atomic an element): {probe.ms['Triton']:.4g} ms")
    row.notes.append("blk and Triton: counts of a block in shared memory, summed a program, one atomic_add of "
                     f"{bins} counts a program; each run zeroes the counts first")
    return [row]


ROWS = [
    ("sort_rows_f32", "row sort f32", f"{SORT_M}×{SORT_N}", row_sort),
    ("topk8_f32", f"top-{TOPK_K} f32", f"{SORT_M}×{SORT_N}", row_topk),
    ("histogram_256", f"histogram i32 → {HIST_BINS} bins", "2^26", row_histogram),
]
