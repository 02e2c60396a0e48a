"""rows_scan.py: row cumsum of f32 matrices (issue 14, item 1).

blk: bench/kernels/cumsum.tile (one row a program, the whole row in one tile,
the scan work-efficient: registers, shfl.sync.up, warps through shared
memory). Triton: _cumsum_rows below, the same algorithm (tl.cumsum over one
row a program). torch: torch.cumsum. Both kernels try the same configs
(BLOCK = the row rounded up to a power of two, num_warps 4 to 32) and keep
their fastest; each is checked against torch.cumsum in float64 first.
"""

GROUP = "issue14"

WARPS = (4, 8, 16, 32)

_triton_kernel = None


def _triton_cumsum():
    """The Triton peer, compiled on first use (no triton import at load time)."""
    global _triton_kernel
    if _triton_kernel is None:
        import triton
        import triton.language as tl

        @triton.jit
        def _cumsum_rows(x, y, M, N, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            offs = tl.arange(0, BLOCK)
            m = offs < N
            v = tl.load(x + row * N + offs, mask=m, other=0.0)
            tl.store(y + row * N + offs, tl.cumsum(v, axis=0), mask=m)

        _triton_kernel = _cumsum_rows
    return _triton_kernel


def _blk_cumsum(env, x, y, M, N, block, warps):
    import blk_calls as bc
    k = bc.bench_kernel(env.ctx, "cumsum", "cumsum_rows")
    return k.prepare([x, y, M, N], consts={"BLOCK": block}, grid=(M,), num_warps=warps, stream=env.stream)


def row_cumsum(env, b, M, N):
    torch = env.torch
    x = torch.randn(M, N, device=env.dev)
    ref = torch.cumsum(x.double(), dim=1)
    row = b.Row("cumsum rows fp32", f"{M}×{N}", 2 * M * N * 4)
    ob, ot = torch.empty_like(x), torch.empty_like(x)

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    block = 1 << max(0, (N - 1).bit_length())
    configs = [(block, w) for w in WARPS]
    b.tune(env, row, "blk", configs, lambda c: _blk_cumsum(env, x.data_ptr(), ob.data_ptr(), M, N, c[0], c[1]), [ob],
           err(ob), 1e-4)
    kern = _triton_cumsum()
    b.tune(env, row, "Triton", configs,
           lambda c: (lambda: kern[(M,)](x, ot, M, N, BLOCK=c[0], num_warps=c[1])), [ot], err(ot), 1e-4)
    b.measure(env, row, "torch", lambda: torch.cumsum(x, dim=1), [], err(None), 1e-4)
    for side in ("blk", "Triton"):
        if side in row.config:
            c = row.config[side]
            row.config[side] = {"BLOCK": c[0], "num_warps": c[1]}
    row.notes.append("one row a program, the whole row in one tile; configs num_warps 4 to 32 on both sides")
    return [row]


ROWS = [
    (f"cumsum_{n}", "cumsum rows fp32", f"4096×{n}", (lambda n: lambda env, b: row_cumsum(env, b, 4096, n))(n))
    for n in (1024, 4096, 16384)
]
