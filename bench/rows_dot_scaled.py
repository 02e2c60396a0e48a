"""rows_dot_scaled.py: a microscaled GEMM (python3 bench/bench.py --only issue32).

C (bf16) = A @ B for A in e4m3 (bytes) and B in e2m1 (two values a byte, packed along K), each
with e8m0 scales, one for 32 elements along K: blk's dot_scaled (bench/kernels/mxgemm.tile)
against Triton's tl.dot_scaled on the same kernel (triton_kernels.mxgemm), both tuned over the
same configs. Hopper has no microscaled tensor-core instruction: both decode to bf16 and run
bf16 products. torch has no such product here: its column is n/a. The reference decodes both
operands in f32 and multiplies them with torch.matmul (exact products, f32 sums).
"""

GROUP = "issue32"

CONFIGS = [
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8, "num_warps": 4, "num_stages": 3},
]


def e2m1_decode(torch, packed):
    """(K/2, N) bytes, two e2m1 values each (the first in the low bits, along K) -> (K, N) f32."""
    table = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6],
                         device=packed.device)
    lo, hi = table[(packed & 15).long()], table[(packed >> 4).long()]
    return torch.stack((lo, hi), dim=1).reshape(-1, packed.shape[1])


def row_mxgemm(env, b, M, N, K):
    torch, tk = env.torch, env.tk
    torch.manual_seed(32)
    a = torch.randint(0, 256, (M, K), device=env.dev, dtype=torch.uint8)
    a[(a & 0x7F) == 0x7F] = 0  # e4m3's NaN bytes
    bp = torch.randint(0, 256, (K // 2, N), device=env.dev, dtype=torch.uint8)
    sa = torch.randint(120, 134, (M, K // 32), device=env.dev, dtype=torch.uint8)
    sb = torch.randint(120, 134, (N, K // 32), device=env.dev, dtype=torch.uint8)
    af = a.view(torch.float8_e4m3fn).float() * torch.exp2(sa.float() - 127).repeat_interleave(32, dim=1)
    bf = e2m1_decode(torch, bp) * torch.exp2(sb.float() - 127).t().repeat_interleave(32, dim=0)
    ref = torch.matmul(af, bf)
    row = b.Row("GEMM e4m3 × e2m1 (mx)", f"{M}×{N}×{K}", M * K + K * N // 2 + M * N * 2, flop=2.0 * M * N * K)
    cb, ct = (torch.empty(M, N, device=env.dev, dtype=torch.bfloat16) for _ in range(2))
    tol = 2e-2

    def err(o):
        return lambda res: b.max_rel_err(torch, o, ref)

    kern = b.bc.bench_kernel(env.ctx, "mxgemm")

    def blk_run(c):
        consts = {k: v for k, v in c.items() if k not in ("num_warps", "num_stages")}
        return kern.prepare([a.data_ptr(), sa.data_ptr(), bp.data_ptr(), sb.data_ptr(), cb.data_ptr(), M, N, K],
                            consts=consts, num_warps=c["num_warps"], num_stages=c["num_stages"], stream=env.stream)

    configs = CONFIGS[:2] if env.quick else CONFIGS
    b.tune(env, row, "blk", configs, blk_run, [cb], err(cb), tol)
    b.tune(env, row, "Triton", configs, lambda c: (lambda: tk.mxgemm(a, sa, bp, sb, ct, c)), [ct], err(ct), tol)
    row.notes.append(b.tflops_note(row))
    return [row]


ROWS = [("mxgemm_4096", "GEMM e4m3 × e2m1 (mx)", "4096³", lambda env, b: row_mxgemm(env, b, 4096, 4096, 4096))]
