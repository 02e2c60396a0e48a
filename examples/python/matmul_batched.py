"""examples/matmul_batched.tile from Python: a batch of products of one
shape, through rank-3 tensor descriptors and through 2-D descriptors on
each batch's matrices."""
from _common import load, size, randn, empty, ref, check, done, np

m = load("matmul_batched.tile")
Z, M, N, K = size((8, 1024, 768, 512), (3, 70, 50, 40))
a, b = randn((Z, M, K), np.float16), randn((Z, K, N), np.float16)
mm = ref(lambda a, b: a @ b, lambda a, b: a @ b, a, b)
for name in ("matmul_batched", "matmul_batched_2d"):
    c = empty((Z, M, N), np.float16)
    getattr(m, name)(a, b, c, Z, M, N, K, M * K, K, K * N, N, M * N, N)
    check(f"{name}: C[z] = A[z] @ B[z] (autotuned)", c, mm, 1e-2)
done("matmul_batched")
