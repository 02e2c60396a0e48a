"""examples/matmul.tile from Python: C = A @ B in f16 (f32 accumulation),
tiles chosen by the kernel's @autotune at the first launch of each (M, N, K),
then with a config given by name; B also as a transposed view, given as
blk.strided(b_view): the kernel takes B's strides and the launch passes them
(a non-contiguous argument is refused otherwise)."""
from _common import blk, load, size, randn, empty, ref, check, done, np

k = load("matmul.tile").matmul
M, N, K = size((1000, 1500, 700), (70, 50, 40))       # no multiple of any tile: edges masked
a, b = randn((M, K), np.float16), randn((K, N), np.float16)
mm = ref(lambda a, b: a @ b, lambda a, b: a @ b, a, b)

c = empty((M, N), np.float16)
k(a, b, c, M, N, K, K, 1, N, 1, N, 1)                # autotuned; the kernel's grid clause
check("C = A @ B (autotuned)", c, mm, 1e-2)

c = empty((M, N), np.float16)
k(a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=4, num_warps=4, num_stages=3)
check("C = A @ B (64x64x32, group 4)", c, mm, 1e-2)

bt = randn((N, K), np.float16)                       # B^T stored: B = bt.T, a strided view
b_view = bt.T
c = empty((M, N), np.float16)
k(a, blk.strided(b_view), c, M, N, K, K, 1, 1, K, N, 1)
check("C = A @ B, B a transposed view", c, ref(lambda a, b: a @ b.T, lambda a, b: a @ b.T, a, bt), 1e-2)
done("matmul")
