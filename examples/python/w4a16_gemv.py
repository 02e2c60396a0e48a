"""examples/w4a16_gemv.tile from Python: y = W x with 4-bit weights (two a
byte, zero point 8) scaled per group of 128 along K, f16 activations."""
from _common import load, size, tensor, randn, empty, ref, check, done, np, rng

k = load("w4a16_gemv.tile").w4a16_gemv
(N, K), G = size((4096, 4096), (200, 512)), 128
q = rng.integers(0, 16, (N, K)).astype(np.uint8)            # the 4-bit weights
packed = tensor((q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8))
scales = randn((N, K // G), np.float16, scale=0.05)
x = randn(K, np.float16)
y = empty(N, np.float16)
k(packed, scales, x, y, N, K, K // 2, K // G, GROUP=G)
wq = tensor((q.astype(np.float32) - 8))


def np_ref(wq, s, x):
    return (wq * np.repeat(s, G, axis=1)) @ x


def t_ref(wq, s, x):
    return (wq * s.repeat_interleave(G, dim=1)) @ x


check("y = dequant(W) x", y, ref(t_ref, np_ref, wq, scales, x), 1e-2)
y2 = empty(N, np.float16)
k(packed, scales, x, y2, N, K, K // 2, K // G, GROUP=G, BLOCK_K=512, BLOCK_N=8)   # steps wider than a group
check("y = dequant(W) x, BLOCK_K 512", y2, ref(t_ref, np_ref, wq, scales, x), 1e-2)
done("w4a16_gemv")
