"""bench/triton_translate.py: Triton kernels run unchanged through blk.triton
against Triton itself, on the GPU (issue 34's benchmark, first part).

The kernels below are written once, in Triton's syntax, and executed twice:
with Triton's modules as `triton` and `tl`, and with blk.triton's. For each:
the result against torch, the kernel time (median of CUDA-event timings),
the cold compile time (the first launch, caches off: BLK_CACHE=0 and a fresh
TRITON_CACHE_DIR) and the launch overhead (10,000 launches of the smallest
size from Python, synchronized once). Prints a markdown table.

    python3 bench/triton_translate.py [--overhead]    (--overhead: the launch overhead rows only)
"""
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
os.environ["BLK_CACHE"] = "0"
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-cache-")

torch = None  # imported in main() (the GPU machine has it)

SOURCE = '''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(y_ptr + row * stride + cols, (num / tl.sum(num, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * grid_n)
    first_m = group * GROUP_M
    rows = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * grid_n)) % rows
    pid_n = (pid % (GROUP_M * grid_n)) // rows
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(tl.float16))
'''


def load(triton_mod, tl_mod):
    import linecache
    name = f"<bench/triton_translate.py SOURCE for {triton_mod.__name__}>"
    linecache.cache[name] = (len(SOURCE), None, SOURCE.splitlines(True), name)  # inspect.getsource reads it
    g = {"triton": triton_mod, "tl": tl_mod, "__name__": "bench_source"}
    exec(compile(SOURCE, name, "exec"), g)
    return g


def bench(fn, reps=50):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def cold(fn):
    torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3


def overhead(fn, n=10000):
    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


def main():
    global torch
    import torch
    import triton
    import triton.language as tl
    import blk.triton as btriton
    import blk.triton.language as btl
    sides = {"Triton": load(triton, tl), "blk": load(btriton, btl)}
    dev = "cuda"
    torch.manual_seed(0)
    n = 1 << 24
    x, y = torch.randn(n, device=dev), torch.randn(n, device=dev)
    S = torch.randn(8192, 4096, device=dev, dtype=torch.float16)
    M = N = K = 4096
    A = torch.randn(M, K, device=dev, dtype=torch.float16)
    B = torch.randn(K, N, device=dev, dtype=torch.float16)
    small = torch.randn(128, device=dev)
    rows = []
    for side, g in sides.items():
        out = torch.empty_like(x)
        so = torch.empty_like(S)
        C = torch.empty(M, N, device=dev, dtype=torch.float16)
        so_small = torch.empty_like(small)
        runs = {
            "add f32 2^24": (lambda: g["add_kernel"][(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024),
                             lambda: (out - (x + y)).abs().max().item()),
            "softmax f16 8192×4096": (lambda: g["softmax_kernel"][(8192,)](S, so, 4096, 4096, BLOCK=4096,
                                                                             num_warps=16),
                                      lambda: (so.float() - torch.softmax(S.float(), 1)).abs().max().item()),
            "matmul f16 4096³": (lambda: g["matmul_kernel"][(triton.cdiv(M, 128) * triton.cdiv(N, 128),)](
                A, B, C, M, N, K, K, N, N, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8,
                num_stages=3),
                lambda: ((C.float() - A.float() @ B.float()).abs().max() / (A.float() @ B.float()).abs().max()).item()),
        }
        for name, (fn, err) in ({} if "--overhead" in sys.argv else runs).items():
            try:
                c = cold(fn)
                e = err()
                ms = bench(fn)
                rows.append((name, side, ms, c, e))
            except Exception as ex:  # one line, the table goes on
                rows.append((name, side, None, None, f"{type(ex).__name__}: {str(ex).splitlines()[0][:200]}"))
        try:
            ov = overhead(lambda: g["add_kernel"][(1,)](small, small, so_small, 128, BLOCK=128))
        except Exception as ex:
            ov = f"{type(ex).__name__}: {str(ex).splitlines()[0][:200]}"
        rows.append(("launch overhead (µs, add of 128)", side, None, None, ov))
    print("| kernel | side | ms | cold compile ms | error or µs |")
    print("|---|---|---:|---:|---|")
    for name, side, ms, c, e in rows:
        f = (lambda v: f"{v:.4g}" if isinstance(v, float) else ("" if v is None else str(v)))
        print(f"| {name} | {side} | {f(ms)} | {f(c)} | {f(e)} |")


if __name__ == "__main__":
    main()
