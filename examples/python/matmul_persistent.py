"""examples/matmul_persistent.tile from Python: a persistent matmul (one
program a multiprocessor, walking tiles) through tensor descriptors."""
from _common import load, size, randn, empty, ref, check, done, np

k = load("matmul_persistent.tile").matmul_persistent
M, N, K = size((2048, 1536, 1024), (96, 80, 64))
a, b = randn((M, K), np.float16), randn((K, N), np.float16)
mm = ref(lambda a, b: a @ b, lambda a, b: a @ b, a, b)
c = empty((M, N), np.float16)
k(a, b, c, M, N, K, K, N, N)                          # autotuned; grid min(num_sms(), tiles)
check("C = A @ B (autotuned)", c, mm, 1e-2)
c = empty((M, N), np.float16)
k(a, b, c, M, N, K, K, N, N, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=2)
check("C = A @ B (64x64x32, group 2)", c, mm, 1e-2)
done("matmul_persistent")
