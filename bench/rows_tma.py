"""rows_tma.py: descriptor kernels with and without TMA (python3 bench/bench.py --only issue12_tma).

c = a @ b, f16 in and out, f32 accumulation, 4096³ and 8192³. blk:
examples/matmul_persistent.tile (tensor descriptors, one program a multiprocessor walking
the tiles in groups of GROUP_M rows), run twice: with the launch option tma = 0 (the
descriptor tiles come by cp.async) and with tma = 1 (by TMA: cp.async.bulk.tensor into
mbarrier-guarded stage buffers, docs/compiler.md), whatever BLK_TMA says. Triton:
triton_kernels.matmul_persistent_tma, the same algorithm through device-side tensor
descriptors (TMA on Hopper). torch: torch.matmul (cuBLAS). Both sides try
blk_calls.PERSISTENT_CONFIGS (--quick: the first two: 128 x 256 x 64 with four and three
stages).

Attention forward f16 (4×16×4096, d64 and d128, causal and not): bench/kernels/attention_desc.tile
(q, k, v, o through descriptors: the key and value tiles, and the output, by TMA with tma = 1)
against Triton's TMA attention (triton_kernels.attention_tma, not warp-specialized) and torch's SDPA,
both sides over blk_calls.ATTENTION_TMA_CONFIGS.
"""

GROUP = "issue12_tma"  # (not "tma": that is inside "softmax", and --only matches names by substring)


def blk_matmul(env, b, a, bm, c, cfg, tma):
    k = b.bc.bench_kernel(env.ctx, "../../examples/matmul_persistent", "matmul_persistent")
    M, K = a.shape
    N = bm.shape[1]
    consts = {key: v for key, v in cfg.items() if key not in ("num_warps", "num_stages")}
    consts["tma"] = int(tma)  # the launch option (blk.h): TMA or cp.async, whatever BLK_TMA says
    return k.prepare([a.data_ptr(), bm.data_ptr(), c.data_ptr(), M, N, K, a.stride(0), bm.stride(0), c.stride(0)],
                     consts=consts, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], stream=env.stream)


def row_matmul_desc(env, b, size, tma):
    torch = env.torch
    M = N = K = size
    torch.manual_seed(7)
    a = torch.randn(M, K, device=env.dev).half()
    bm = torch.randn(K, N, device=env.dev).half()
    ref = a.double() @ bm.double()
    row = b.Row("matmul f16, descriptors" + (", TMA" if tma else ", cp.async"), f"{size}³",
                (M * K + K * N + M * N) * 2, flop=2.0 * M * N * K)
    cb, ct, cp = (torch.empty(M, N, device=env.dev, dtype=torch.float16) for _ in range(3))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    configs = b.bc.PERSISTENT_CONFIGS

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    b.tune(env, row, "blk", configs[:2] if env.quick else configs, lambda c: blk_matmul(env, b, a, bm, cb, c, tma),
           [cb], err(cb), 1e-2)
    b.tune(env, row, "Triton", configs[:2] if env.quick else configs,
           lambda c: (lambda: env.tk.matmul_persistent_tma(a, bm, ct, c, sms=sms)), [ct], err(ct), 1e-2)
    b.measure(env, row, "torch", lambda: torch.matmul(a, bm, out=cp), [cp], err(cp), 1e-2)
    row.notes.append(b.tflops_note(row))
    by = "TMA (the launch option tma = 1)" if tma else "cp.async (tma = 0)"
    row.notes.append("blk: examples/matmul_persistent.tile, its tiles by " + by + "; Triton: a persistent kernel "
                     "through tensor descriptors (TMA); both try blk_calls.PERSISTENT_CONFIGS"
                     + (" (--quick: the first two)" if env.quick else ""))
    return [row]


def blk_attention(env, b, q, k, v, o, lse, scale, causal, c, tma):
    Z, H, N, D = q.shape
    kern = b.bc.bench_kernel(env.ctx, "attention_desc")
    return kern.prepare([q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(), Z * H, N, Z * H * N,
                         scale], consts={"HEAD_DIM": D, "BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"],
                                         "CAUSAL": bool(causal), "tma": int(tma)},
                        num_warps=c["num_warps"], num_stages=c["num_stages"], stream=env.stream)


def row_attention_desc(env, b, D, causal, tma, Z=4, H=16, N=4096):
    """bench/kernels/attention_desc.tile (descriptors; by TMA with the launch option tma = 1) against
    Triton's TMA attention (triton_kernels.attention_tma, not warp-specialized) and torch's SDPA."""
    import math
    torch, tk = env.torch, env.tk
    F = torch.nn.functional
    scale = 1.0 / math.sqrt(D)
    torch.manual_seed(12)
    q, k, v = (torch.randn(Z, H, N, D, device=env.dev).half() for _ in range(3))
    ref_o, ref_lse = b.attention_reference(torch, q, k, v, scale, causal)
    row = b.Row("attention fwd fp16" + (" causal" if causal else "") + ", descriptors" + (", TMA" if tma else ""),
                f"{Z}×{H}×{N}×{D}", 4 * Z * H * N * D * 2 + Z * H * N * 4,
                flop=4.0 * Z * H * N * N * D * (0.5 if causal else 1.0))

    def outs():
        return (torch.empty(Z, H, N, D, device=env.dev, dtype=torch.float16),
                torch.empty(Z * H, N, device=env.dev, dtype=torch.float32))

    def err(o):
        out, lse = o
        return b.check_with_stats(torch, "attention: lse", out, ref_o, [(lse, ref_lse)])

    ob, ot = outs(), outs()
    # both sides try ATTENTION_TMA_CONFIGS, all four even with --quick
    tma_configs = b.bc.ATTENTION_TMA_CONFIGS
    b.tune(env, row, "blk", tma_configs,
           lambda c: blk_attention(env, b, q, k, v, ob[0], ob[1], scale, causal, c, tma), list(ob), err(ob), 1e-2)
    b.tune(env, row, "Triton", [dict(c, warp_specialize=False) for c in tma_configs],
           lambda c: (lambda: tk.attention_tma(q, k, v, ot[0], ot[1], scale, c, causal=causal)), list(ot), err(ot),
           1e-2)
    b.measure(env, row, "torch", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale), [],
              lambda res: b.max_rel_err(torch, res, ref_o), 1e-2)
    row.notes.append(b.tflops_note(row))
    by = "TMA (tma = 1)" if tma else "cp.async (tma = 0)"
    row.notes.append("blk: bench/kernels/attention_desc.tile (q, k, v, o through tensor descriptors), its tiles by "
                     + by + "; Triton: triton_kernels.attention_tma without warp specialization; torch: "
                     "F.scaled_dot_product_attention")
    return [row]


ROWS = [
    ("tma_matmul_4096_cpasync", "matmul f16, descriptors, cp.async", "4096³", lambda env, b: row_matmul_desc(env, b, 4096, False)),
    ("tma_matmul_4096", "matmul f16, descriptors, TMA", "4096³", lambda env, b: row_matmul_desc(env, b, 4096, True)),
    ("tma_matmul_8192", "matmul f16, descriptors, TMA", "8192³", lambda env, b: row_matmul_desc(env, b, 8192, True)),
] + [
    (f"attn_desc_d{d}{'_causal' if c else ''}{'' if t else '_cpasync'}",  # (no existing row's name inside)
     "attention fwd fp16" + (" causal" if c else "") + ", descriptors" + (", TMA" if t else ""), f"4×16×4096×{d}",
     (lambda d, c, t: lambda env, b: row_attention_desc(env, b, d, c, t))(d, c, t))
    for d in (64, 128) for c in (False, True) for t in (False, True)
]
