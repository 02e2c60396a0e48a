"""rows_gemm.py: the GEMMs of a training step in every layout (python3 bench/bench.py --only issue28).

bf16 in and out, f32 accumulation. A layout names how the operands are stored: N, the matrix
as the product reads it (A M x K, B K x N, rows contiguous); T, its transpose stored (A as
K x M, B as N x K). nn.Linear's forward y = x W^T is NT, its input gradient dx = dy W is NN,
its weight gradient dW = dy^T x is TN. Shapes: 4096³ and 8192³ in all four layouts; the
projections of Llama-3-8B at 8192 tokens (hidden 4096, MLP 14336) and its LM head (vocabulary
128256), each as forward, input gradient and weight gradient; and 256×4096×128256 (few output
tiles, a long K: the LM head's gradient by chunks of 256 rows).

blk: bench/kernels/gemm.tile (tensor descriptors, trans() of the loaded tile for a transposed
operand, tiles by TMA; split-K configs where the output has fewer than two tiles a
multiprocessor). Triton: triton_kernels.matmul_tc (_matmul_tc: pointer tiles with the operands'
strides, as a Triton user writes any layout), over blk_calls.MATMUL_CONFIGS. torch:
torch.matmul on the same (transposed) views: cuBLAS.
"""

GROUP = "issue28"

# (M, N, K) of a training step's products: (name, forward NT, its input gradient NN, its weight gradient TN)
LLAMA = [("qo proj", 8192, 4096, 4096), ("up/gate proj", 8192, 14336, 4096), ("down proj", 8192, 4096, 14336),
         ("LM head", 8192, 128256, 4096)]

DP_CONFIGS = [  # gemm.tile's data-parallel @autotune configs (TMA)
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "num_warps": 8, "num_stages": 4},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "num_warps": 8, "num_stages": 4},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "num_warps": 8, "num_stages": 5,
     "warp_specialize": 1},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32, "GROUP_M": 8, "SPLIT_K": 1, "num_warps": 8, "num_stages": 6,
     "warp_specialize": 1},
]


def split_configs(tiles, sms):
    """Split-K configs for an output of `tiles` 128 x 256 tiles: enough slices to give every
    multiprocessor two units, none where the tiles alone do."""
    out = []
    for s in (2, 4, 8, 16):
        if tiles * s <= 4 * sms and tiles < 2 * sms:
            for bn in (256, 128):
                out.append({"BLOCK_M": 128, "BLOCK_N": bn, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": s,
                            "num_warps": 8, "num_stages": 4})
    return out


def cfg_text(c):
    return (f"{c['BLOCK_M']}×{c['BLOCK_N']}×{c['BLOCK_K']} w{c['num_warps']} s{c['num_stages']}"
            + (" ws" if c.get("warp_specialize") else "") + (f" split{c['SPLIT_K']}" if c.get("SPLIT_K", 1) > 1 else ""))


def row_gemm(env, b, layout, M, N, K, what=""):
    torch, tk = env.torch, env.tk
    ta, tb = layout[0] == "T", layout[1] == "T"
    torch.manual_seed(28)
    # the stored matrices; A and B are the views the product reads
    a_st = torch.randn((K, M) if ta else (M, K), device=env.dev).to(torch.bfloat16)
    b_st = torch.randn((N, K) if tb else (K, N), device=env.dev).to(torch.bfloat16)
    A = a_st.t() if ta else a_st
    B = b_st.t() if tb else b_st
    ref = torch.matmul(A.float(), B.float())  # f32 on the tensor cores' exact products, f32 sums
    row = b.Row(f"GEMM {layout} bf16" + (f", {what}" if what else ""), f"{M}×{N}×{K}",
                (M * K + K * N + M * N) * 2, flop=2.0 * M * N * K)
    cb, ct, cp = (torch.empty(M, N, device=env.dev, dtype=torch.bfloat16) for _ in range(3))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    tiles = -(-M // 128) * -(-N // 256)
    configs = (DP_CONFIGS[:2] if env.quick else DP_CONFIGS) + split_configs(tiles, sms)
    counters = torch.zeros(max(tiles * 2, 1), device=env.dev, dtype=torch.int32)
    max_ws = max([c["SPLIT_K"] * (-(-M // 128) * 128) * N for c in configs] + [1])
    ws = torch.empty(max_ws, device=env.dev, dtype=torch.float32)
    tol = 2e-2  # bf16 output (2^-8 relative) of sums of K products in a different order

    def err(o):
        return lambda res: b.max_rel_err(torch, o, ref)

    kern = b.bc.bench_kernel(env.ctx, "gemm")

    def blk_run(c):
        consts = {k: v for k, v in c.items() if k not in ("num_warps", "num_stages")}
        consts.update(T="bf16", OUT="bf16", TRANS_A=ta, TRANS_B=tb, BETA=False, tma=1)
        return kern.prepare([a_st.data_ptr(), b_st.data_ptr(), cb.data_ptr(), ws.data_ptr(), counters.data_ptr(),
                             M, N, K, a_st.stride(0), b_st.stride(0), cb.stride(0)], consts=consts,
                            num_warps=c["num_warps"], num_stages=c["num_stages"], stream=env.stream)

    b.tune(env, row, "blk", configs, blk_run, [cb], err(cb), tol)
    if isinstance(row.config.get("blk"), dict):
        row.config["blk"] = cfg_text(row.config["blk"])
    tconf = b.bc.MATMUL_CONFIGS[:2] if env.quick else b.bc.MATMUL_CONFIGS
    b.tune(env, row, "Triton", tconf, lambda c: (lambda: tk.matmul_tc(A, B, ct, c)), [ct], err(ct), tol)
    if isinstance(row.config.get("Triton"), dict):
        row.config["Triton"] = b.bc.config_text(row.config["Triton"])
    b.measure(env, row, "torch", lambda: torch.matmul(A, B, out=cp), [cp], err(cp), tol)
    row.notes.append(b.tflops_note(row))
    return [row]


def _rows():
    rows = []
    for size in (4096, 8192):
        for lay in ("NN", "NT", "TN", "TT"):
            rows.append((f"gemm_{lay.lower()}_{size}", f"GEMM {lay} bf16", f"{size}³",
                         (lambda lay, s: lambda env, b: row_gemm(env, b, lay, s, s, s))(lay, size)))
    for name, T, O, I in LLAMA:
        key = name.split()[0].replace("/", "").lower()
        for lay, what, (M, N, K) in (("NT", "forward", (T, O, I)), ("NN", "input grad", (T, I, O)),
                                     ("TN", "weight grad", (O, I, T))):
            rows.append((f"gemm_{key}_{lay.lower()}", f"GEMM {lay} bf16, {name} {what}", f"{M}×{N}×{K}",
                         (lambda lay, M, N, K, w: lambda env, b: row_gemm(env, b, lay, M, N, K, w))(
                             lay, M, N, K, f"{name} {what}")))
    rows.append(("gemm_longk", "GEMM NN bf16, long K", "256×4096×128256",
                 lambda env, b: row_gemm(env, b, "NN", 256, 4096, 128256, "long K")))
    rows.append(("gemm_longk_tn", "GEMM TN bf16, long K", "4096×256×128256",
                 lambda env, b: row_gemm(env, b, "TN", 4096, 256, 128256, "long K")))
    return rows


ROWS = _rows()
