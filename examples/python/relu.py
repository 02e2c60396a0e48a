"""examples/relu.tile from Python: out = max(x, 0)."""
from _common import load, size, randn, empty, ref, check, done, np

k = load("relu.tile").relu
n = size(1 << 20, 3_000)
x, out = randn(n), empty(n)
k(x, out, n)
check("out = relu(x)", out, ref(lambda a: a.clamp(min=0), lambda a: np.maximum(a, 0), x), 0)
done("relu")
