"""examples/matmul_splitk.tile from Python: C = A @ B with K cut into slices,
added by atomics into an f32 C, or through a workspace in a fixed order
(two kernels, or one whose last program per tile sums the slices): the same
bits in every run."""
from _common import load, size, randn, empty, tensor, f64, ref, check, done, np

m = load("matmul_splitk.tile")
M, N, K = size((256, 320, 8192), (40, 50, 300))
a, b = randn((M, K), np.float16), randn((K, N), np.float16)
mm = ref(lambda a, b: a @ b, lambda a, b: a @ b, a, b)
tol = 1e-4 * np.sqrt(K) / np.abs(f64(mm)).max()     # f32 sums of K products of size ~1, against |C|

c = tensor(np.zeros((M, N), np.float32))            # atomic: C zeroed first
m.matmul_splitk_atomic(a, b, c, M, N, K, K, 1, N, 1, N, 1)
check("atomic, autotuned", c, mm, tol)

SLICES = 8                                          # the largest SPLIT_K of the configs
ws, nsplit = empty((SLICES, M, N)), tensor(np.zeros(1, np.int32))
counters = tensor(np.zeros(((M + 15) // 16) * ((N + 15) // 16), np.int32))
tiles = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=4, SPLIT_K=5)
runs = []
for _ in range(2):
    c = empty((M, N))
    m.matmul_splitk_partial(a, b, ws, nsplit, M, N, K, K, 1, N, 1, SLICES, **tiles)
    m.splitk_reduce(ws, nsplit, c, M, N, N, 1)
    runs.append(f64(c))
    c = empty((M, N))
    m.matmul_splitk_fused(a, b, c, ws, counters, M, N, K, K, 1, N, 1, N, 1, SLICES, **tiles)
    runs.append(f64(c))
    check("workspace + reduce, and fused", np.stack(runs[-2:]), np.stack([f64(mm)] * 2), tol)
same = all(np.array_equal(r, runs[0]) for r in runs)
print(f"{'ok  ' if same else 'FAIL'} the deterministic forms: the same bits in two runs each, and as each other")
if not same:
    import _common
    _common.failures += 1
done("matmul_splitk")
