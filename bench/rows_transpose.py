"""rows_transpose.py: issue 14's transpose row (python3 bench/bench.py --only issue14).

y = x.T of an f32 8192 x 8192 matrix, both row-major. blk: bench/kernels/transpose.tile
(a BM x BN tile loaded along x's rows, trans, stored along y's rows; its @autotune
configs tried here one by one); Triton: _transpose below, the same tiled algorithm with
the same configs; torch: x.t().contiguous(). Bytes moved: the matrix read once and
written once.
"""

GROUP = "issue14"

# (BM, BN, num_warps): transpose.tile's @autotune configs, in its order
TRANSPOSE_CONFIGS = [(64, 64, 4), (64, 64, 8), (128, 64, 8), (64, 128, 8), (128, 128, 8), (32, 32, 4)]

_triton_kernel = None


def _transpose_kernel():
    """The Triton peer, compiled on first use (triton is imported only here)."""
    global _triton_kernel
    if _triton_kernel is None:
        import triton
        import triton.language as tl

        @triton.jit
        def _transpose(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
            rm = tl.program_id(0) * BM + tl.arange(0, BM)
            rn = tl.program_id(1) * BN + tl.arange(0, BN)
            mask = (rm < M)[:, None] & (rn < N)[None, :]
            tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
            tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(tile), mask=tl.trans(mask))

        _triton_kernel = _transpose
    return _triton_kernel


def triton_transpose(x, y, BM, BN, num_warps):
    M, N = x.shape
    grid = ((M + BM - 1) // BM, (N + BN - 1) // BN)
    _transpose_kernel()[grid](x, y, M, N, BM=BM, BN=BN, num_warps=num_warps)


def blk_transpose(env, b, x, y, BM, BN, num_warps):
    """A prepared launch of transpose.tile's kernel with this config."""
    M, N = x.shape
    k = b.bc.bench_kernel(env.ctx, "transpose")
    return k.prepare([x.data_ptr(), y.data_ptr(), M, N], consts={"BM": BM, "BN": BN},
                     grid=(b.bc.cdiv(M, BM), b.bc.cdiv(N, BN)), num_warps=num_warps, stream=env.stream)


def row_transpose(env, b, M=8192, N=8192):
    torch = env.torch
    x = torch.randn(M, N, device=env.dev)
    ref = x.t().contiguous()
    row = b.Row("transpose fp32", f"{M}×{N}", 2 * M * N * 4)
    yb, yt = torch.empty(N, M, device=env.dev), torch.empty(N, M, device=env.dev)

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    b.tune(env, row, "blk", TRANSPOSE_CONFIGS, lambda c: blk_transpose(env, b, x, yb, *c), [yb], err(yb), 0.0)
    b.tune(env, row, "Triton", TRANSPOSE_CONFIGS, lambda c: (lambda: triton_transpose(x, yt, *c)), [yt], err(yt),
           0.0)
    b.measure(env, row, "torch", lambda: x.t().contiguous(), [], err(None), 0.0)
    row.notes.append("transpose: configs (BM, BN, num_warps) tried on both sides: "
                     + ", ".join(f"{m}×{n} w{w}" for m, n, w in TRANSPOSE_CONFIGS))
    return [row]


ROWS = [("transpose_f32", "transpose fp32", "8192×8192", row_transpose)]
