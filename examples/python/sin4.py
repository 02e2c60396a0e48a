"""examples/sin4.tile from Python: out = sin(sin(sin(sin(x))))."""
from _common import load, size, randn, empty, ref, check, done, np

k = load("sin4.tile").sin4
n = size(1 << 20, 3_000)
x, out = randn(n, scale=3.0), empty(n)
k(x, out, n, BLOCK=512)
check("out = sin^4(x)", out, ref(lambda a: a.sin().sin().sin().sin(), lambda a: np.sin(np.sin(np.sin(np.sin(a)))), x),
      1e-5)
done("sin4")
