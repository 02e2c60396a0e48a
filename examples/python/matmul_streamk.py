"""examples/matmul_streamk.tile from Python: a persistent matmul whose
programs take equal ranges of (tile, K step) iterations; pieces of tiles
are added into an f32 C with atomics."""
from _common import load, size, randn, tensor, f64, ref, check, done, np

k = load("matmul_streamk.tile").matmul_streamk
M, N, K = size((1920, 1408, 4096), (96, 80, 200))
a, b = randn((M, K), np.float16), randn((K, N), np.float16)
mm = ref(lambda a, b: a @ b, lambda a, b: a @ b, a, b)
tol = 1e-4 * np.sqrt(K) / np.abs(f64(mm)).max()
c = tensor(np.zeros((M, N), np.float32))
k(a, b, c, M, N, K, K, N, N)                          # autotuned; grid num_sms()
check("C = A @ B (autotuned)", c, mm, tol)
c = tensor(np.zeros((M, N), np.float32))
k[(7,)](a, b, c, M, N, K, K, N, N, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=2)
check("C = A @ B (32x32x32 on 7 programs)", c, mm, tol)
done("matmul_streamk")
